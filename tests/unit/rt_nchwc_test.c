/* Unit test and per-layer benchmark of the NCHWc kernels (tools/lower/runtime/ecg_nchwc.h).
 * Built by tests/unit/rt_build.sh with the runtime (native, x86-64-v3, aarch64).
 * Every kernel, at C = 8 and 16, against naive double-accumulating NCHW reference loops
 * (the inputs reordered into NCHWc by ecg_rt1_nchw_to_nchwc, the outputs back by
 * ecg_rt1_nchwc_to_nchw, and the padded lanes of every NCHWc output checked to be 0) over
 * random shapes: odd channel counts (a partial last block), strides 1-2, pads, dilation,
 * depthwise, fused residual and every activation. Prints "N passed, M failed"; exit 1 on
 * failure. --bench [WORD]: per layer of resnet18 and mobilenet_v2 (shapes at 224x224),
 * the NCHW runtime conv (ecg_rt1_conv2d) vs NCHWc8 vs NCHWc16, best-of time in us at one
 * thread, one JSON line per layer.
 * --costs: the layout costs of GCD²'s selection (ecg-lower --layout), measured here: reads
 * signature lines on stdin (ecg-lower --layout-keys prints them; scripts/layout_costs.sh
 * drives both) and prints one JSON object per line, median of 15 timed runs after 2 warm-up
 * runs, at omp_get_max_threads() threads (OMP_NUM_THREADS):
 *   conv N C H W M KH KW SH SW DH DW PT PL PB PR GROUP ->
 *     {"kind": "layout_block", "signature": LINE, "nchw_ms", "nchwc8_ms", "nchwc16_ms"}
 *     (null where NCHWc cannot run it: ecg_rt1_nchwc_conv2d_supported)
 *   pool max|avg N C H W KH KW SH SW PT PL PB PR -> the same, pooling kernels
 *   reorder N C HW -> {"kind": "layout_transform", "signature": LINE, "to8_ms",
 *     "from8_ms", "to16_ms", "from16_ms"} (NCHW -> NCHWc and back)
 * A line it cannot read gets exit status 1 and a message naming it. */
#include "ecg_nchwc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "rt_testutil.h"

static int n_pass, n_fail;
static float *rbuf(size_t n) {
  float *p = malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; i < n; i++) p[i] = rf();
  return p;
}
static double act_ref(ecg_act a, double x) {
  switch (a.kind) {
  case ECG_ACT_RELU: return x > 0 ? x : 0;
  case ECG_ACT_CLIP: return x < a.a ? a.a : x > a.b ? a.b : x;
  case ECG_ACT_LEAKY: return x < 0 ? a.a * x : x;
  case ECG_ACT_SIGMOID: return 1 / (1 + exp(-x));
  case ECG_ACT_HARDSWISH: { double t = x / 6 + 0.5; t = t < 0 ? 0 : t > 1 ? 1 : t; return x * t; }
  case ECG_ACT_SILU: return x / (1 + exp(-x));
  case ECG_ACT_FN: return 0.5 * x + 1; /* fn_affine */
  default: return x;
  }
}
/* A generated-epilogue stand-in (ECG_ACT_FN): y = 0.5 y + 1 on a run of positions; 1 on
 * the padded lanes, which the kernel must zero afterwards. */
static void fn_affine(float *y, size_t n, const void *arg) {
  (void)arg;
  for (size_t i = 0; i < n; i++) y[i] = 0.5f * y[i] + 1.0f;
}
static void result(const char *what, int ok, const char *detail) {
  if (ok) n_pass++;
  else { n_fail++; printf("FAIL %s: %s\n", what, detail); }
}
/* got vs want within 1e-4 * (|want| + mag); padded lanes of the NCHWc buffer yc all 0. */
static void check(const char *what, const float *got, const double *want, const double *mag, size_t n,
                  const float *yc, int nn, int c, int hw, int C) {
  char d[256] = "";
  int ok = 1;
  for (size_t i = 0; i < n && ok; i++) {
    double e = fabs((double)got[i] - want[i]), tol = 1e-4 * (fabs(want[i]) + (mag ? mag[i] : 0) + 1e-3);
    if (!(e <= tol) && !(isinf(want[i]) && got[i] == want[i])) {
      snprintf(d, sizeof d, "element %zu: got %.7g want %.7g", i, got[i], want[i]);
      ok = 0;
    }
  }
  int cbs = (c + C - 1) / C;
  if (ok && c % C)
    for (int b = 0; b < nn && ok; b++)
      for (int i = 0; i < hw && ok; i++)
        for (int l = c % C; l < C; l++)
          if (yc[(((size_t)b * cbs + cbs - 1) * hw + i) * C + l] != 0.0f) {
            snprintf(d, sizeof d, "padded lane %d of position %d is %g, not 0", l, i, yc[(((size_t)b * cbs + cbs - 1) * hw + i) * C + l]);
            ok = 0;
            break;
          }
  result(what, ok, d);
}

static int out_dim(int in, int k, int s, int d, int pa, int pb) { return (in + pa + pb - ((k - 1) * d + 1)) / s + 1; }

static void test_conv(int C, int n, int c, int h, int w, int m, int k, int s, int d, int pad, int dw, int with_res,
                      ecg_act act) {
  ecg_conv_params p = {0};
  p.n = n; p.c = c; p.h = h; p.w = w; p.m = dw ? c : m; p.kh = p.kw = k; p.sh = p.sw = s; p.dh = p.dw = d;
  p.pt = p.pl = pad; p.pb = p.pr = pad > 0 ? pad - (k > 2) : 0; /* asymmetric pads */
  p.group = dw ? c : 1;
  p.act = act;
  p.oh = out_dim(h, k, s, d, p.pt, p.pb);
  p.ow = out_dim(w, k, s, d, p.pl, p.pr);
  if (p.oh < 1 || p.ow < 1) return;
  int cg = c / p.group;
  size_t xs = (size_t)n * c * h * w, ws = (size_t)p.m * cg * k * k, ys = (size_t)n * p.m * p.oh * p.ow;
  float *x = rbuf(xs), *wt = rbuf(ws), *bias = rbuf(p.m), *res = with_res ? rbuf(ys) : NULL;
  double *want = malloc(ys * sizeof(double)), *mag = malloc(ys * sizeof(double));
  for (int b = 0; b < n; b++)
    for (int oc = 0; oc < p.m; oc++)
      for (int oy = 0; oy < p.oh; oy++)
        for (int ox = 0; ox < p.ow; ox++) {
          double sum = bias[oc], mg = fabs(bias[oc]);
          int g = oc / (p.m / p.group);
          for (int ci = 0; ci < cg; ci++)
            for (int ky = 0; ky < k; ky++)
              for (int kx = 0; kx < k; kx++) {
                int iy = oy * s - p.pt + ky * d, ix = ox * s - p.pl + kx * d;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                double v = (double)x[(((size_t)b * c + g * cg + ci) * h + iy) * w + ix] * wt[(((size_t)oc * cg + ci) * k + ky) * k + kx];
                sum += v;
                mg += fabs(v);
              }
          size_t o = (((size_t)b * p.m + oc) * p.oh + oy) * p.ow + ox;
          if (res) { sum += res[o]; mg += fabs(res[o]); }
          want[o] = act_ref(act, sum);
          mag[o] = mg;
        }
  float *xc = rbuf(ecg_rt1_nchwc_floats(n, c, h, w, C)), *yc = rbuf(ecg_rt1_nchwc_floats(n, p.m, p.oh, p.ow, C));
  float *rc = res ? rbuf(ecg_rt1_nchwc_floats(n, p.m, p.oh, p.ow, C)) : NULL;
  float *pw = rbuf(ecg_rt1_nchwc_conv2d_packed_floats(&p, C)), *got = rbuf(ys);
  ecg_rt1_nchw_to_nchwc(n, c, h * w, C, x, xc);
  if (res) ecg_rt1_nchw_to_nchwc(n, p.m, p.oh * p.ow, C, res, rc);
  ecg_rt1_nchwc_conv2d_pack(&p, C, wt, pw);
  char what[200];
  snprintf(what, sizeof what, "nchwc%d conv n%d c%d %dx%d m%d k%d s%d d%d pad%d %s%s act%d", C, n, c, h, w, p.m, k, s,
           d, pad, dw ? "depthwise" : "", res ? " +res" : "", (int)act.kind);
  if (!ecg_rt1_nchwc_conv2d_supported(&p, C)) result(what, 0, "reported unsupported");
  else {
    int T = 1;
#ifdef _OPENMP
    T = omp_get_max_threads();
#endif
    float *scr = malloc((ecg_rt1_nchwc_conv2d_scratch_floats(&p, C, T) + 1) * sizeof(float)); /* not rbuf: the shapes' random draws stay as they were */
    ecg_rt1_nchwc_conv2d(&p, C, xc, pw, bias, rc, yc, scr);
    free(scr);
    ecg_rt1_nchwc_to_nchw(n, p.m, p.oh * p.ow, C, yc, got);
    check(what, got, want, mag, ys, yc, n, p.m, p.oh * p.ow, C);
  }
  free(x); free(wt); free(bias); free(res); free(want); free(mag); free(xc); free(yc); free(rc); free(pw); free(got);
}

static void test_pool(int C, int n, int c, int h, int w, int k, int s, int pad, int is_max, int cip) {
  ecg_pool_params p = {n, c, h, w, k, k, 0, 0, s, s, 1, 1, pad, pad, pad, pad, cip};
  p.oh = out_dim(h, k, s, 1, pad, pad);
  p.ow = out_dim(w, k, s, 1, pad, pad);
  if (p.oh < 1 || p.ow < 1) return;
  size_t xs = (size_t)n * c * h * w, ys = (size_t)n * c * p.oh * p.ow;
  float *x = rbuf(xs), *got = rbuf(ys), *ref = rbuf(ys);
  double *want = malloc(ys * sizeof(double));
  if (is_max) ecg_rt1_maxpool2d(&p, x, ref);
  else ecg_rt1_avgpool2d(&p, x, ref);
  for (size_t i = 0; i < ys; i++) want[i] = ref[i];
  float *xc = rbuf(ecg_rt1_nchwc_floats(n, c, h, w, C)), *yc = rbuf(ecg_rt1_nchwc_floats(n, c, p.oh, p.ow, C));
  ecg_rt1_nchw_to_nchwc(n, c, h * w, C, x, xc);
  if (is_max) ecg_rt1_nchwc_maxpool2d(&p, C, xc, yc);
  else ecg_rt1_nchwc_avgpool2d(&p, C, xc, yc);
  ecg_rt1_nchwc_to_nchw(n, c, p.oh * p.ow, C, yc, got);
  char what[160];
  snprintf(what, sizeof what, "nchwc%d %spool n%d c%d %dx%d k%d s%d pad%d cip%d (vs the NCHW runtime pool)", C,
           is_max ? "max" : "avg", n, c, h, w, k, s, pad, cip);
  check(what, got, want, NULL, ys, yc, n, c, p.oh * p.ow, C);
  free(x); free(got); free(ref); free(want); free(xc); free(yc);
}

/* A squeeze-and-excitation chain (ecg_rt1_se, scale 1) on NCHWc x and y against the NCHW
 * chain: pool 1 (the whole chain from x) or 0 (its tail from u); batch 1. */
static void test_se(int C, int c, int h, int w, int cmid, int pool) {
  ecg_act sig = {.kind = ECG_ACT_SIGMOID}, relu = {.kind = ECG_ACT_RELU};
  ecg_se_params p = {1, c, h, w, cmid, c, relu, sig, 1, pool, 0};
  size_t xs = (size_t)c * h * w;
  float *x = rbuf(xs), *u = rbuf((size_t)cmid), *w1 = rbuf((size_t)cmid * c), *b1 = rbuf((size_t)cmid);
  float *w2 = rbuf((size_t)c * cmid), *b2 = rbuf((size_t)c), *ref = rbuf(xs), *got = rbuf(xs);
  float *w1p = rbuf(ecg_rt1_se_packed_floats(&p, 1)), *w2p = rbuf(ecg_rt1_se_packed_floats(&p, 2));
  ecg_rt1_se_pack(&p, 1, w1, w1p);
  ecg_rt1_se_pack(&p, 2, w2, w2p);
  int T = 1;
#ifdef _OPENMP
  T = omp_get_max_threads();
#endif
  float *scr = malloc((ecg_rt1_se_scratch_floats(&p, T) + 16) * sizeof(float));
  ecg_rt1_se(&p, x, pool ? NULL : u, pool ? w1p : NULL, pool ? b1 : NULL, w2p, b2, ref, scr);
  double *want = malloc(xs * sizeof(double));
  for (size_t i = 0; i < xs; i++) want[i] = ref[i];
  float *xc = rbuf(ecg_rt1_nchwc_floats(1, c, h, w, C)), *yc = rbuf(ecg_rt1_nchwc_floats(1, c, h, w, C));
  ecg_rt1_nchw_to_nchwc(1, c, h * w, C, x, xc);
  p.blk = C;
  ecg_rt1_se(&p, xc, pool ? NULL : u, pool ? w1p : NULL, pool ? b1 : NULL, w2p, b2, yc, scr);
  ecg_rt1_nchwc_to_nchw(1, c, h * w, C, yc, got);
  char what[160];
  snprintf(what, sizeof what, "nchwc%d se c%d %dx%d cmid%d pool%d (vs the NCHW chain)", C, c, h, w, cmid, pool);
  check(what, got, want, NULL, xs, yc, 1, c, h * w, C);
  free(x); free(u); free(w1); free(b1); free(w2); free(b2); free(ref); free(got); free(w1p); free(w2p); free(scr);
  free(want); free(xc); free(yc);
}

static void test_gap_add(int C, int n, int c, int hw) {
  size_t xs = (size_t)n * c * hw;
  float *x = rbuf(xs), *x2 = rbuf(xs), *got = rbuf(xs);
  double *want = malloc(xs * sizeof(double));
  float *xc = rbuf(ecg_rt1_nchwc_floats(n, c, hw, 1, C)), *x2c = rbuf(ecg_rt1_nchwc_floats(n, c, hw, 1, C));
  float *yc = rbuf(ecg_rt1_nchwc_floats(n, c, hw, 1, C));
  ecg_rt1_nchw_to_nchwc(n, c, hw, C, x, xc);
  ecg_rt1_nchw_to_nchwc(n, c, hw, C, x2, x2c);
  char what[160];
  /* round trip */
  ecg_rt1_nchwc_to_nchw(n, c, hw, C, xc, got);
  for (size_t i = 0; i < xs; i++) want[i] = x[i];
  snprintf(what, sizeof what, "nchwc%d reorder round trip n%d c%d hw%d", C, n, c, hw);
  check(what, got, want, NULL, xs, xc, n, c, hw, C);
  /* GlobalAveragePool */
  for (int i = 0; i < n * c; i++) {
    double s = 0;
    for (int j = 0; j < hw; j++) s += x[(size_t)i * hw + j];
    want[i] = s / hw;
  }
  ecg_rt1_nchwc_global_avgpool(n, c, hw, C, xc, yc);
  ecg_rt1_nchwc_to_nchw(n, c, 1, C, yc, got);
  snprintf(what, sizeof what, "nchwc%d global_avgpool n%d c%d hw%d", C, n, c, hw);
  check(what, got, want, NULL, (size_t)n * c, yc, n, c, 1, C);
  /* residual Add + activation */
  ecg_act act = rand_act();
  for (size_t i = 0; i < xs; i++) want[i] = act_ref(act, (double)x[i] + x2[i]);
  ecg_rt1_nchwc_add_act(n, c, hw, C, xc, x2c, act, yc);
  ecg_rt1_nchwc_to_nchw(n, c, hw, C, yc, got);
  snprintf(what, sizeof what, "nchwc%d add+act%d n%d c%d hw%d", C, (int)act.kind, n, c, hw);
  check(what, got, want, NULL, xs, yc, n, c, hw, C);
  free(x); free(x2); free(got); free(want); free(xc); free(x2c); free(yc);
}

/* ------------------------------------------------------------------ bench */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
typedef void (*run_fn)(const ecg_conv_params *p, int C, const float *x, const float *w, const float *b, float *y,
                       float *scr);
static void run_nchw(const ecg_conv_params *p, int C, const float *x, const float *w, const float *b, float *y, float *scr) {
  (void)C;
  ecg_rt1_conv2d(p, x, w, b, y, scr);
}
static void run_nchwc(const ecg_conv_params *p, int C, const float *x, const float *w, const float *b, float *y, float *scr) {
  ecg_rt1_nchwc_conv2d(p, C, x, w, b, NULL, y, scr);
}
static double time_it(run_fn f, const ecg_conv_params *p, int C, const float *x, const float *w, const float *b, float *y,
                      float *scr) {
  f(p, C, x, w, b, y, scr);
  double best = 1e9, t0 = now();
  int it = 0;
  while (now() - t0 < 0.15 || it < 3) {
    double t1 = now();
    f(p, C, x, w, b, y, scr);
    double d = now() - t1;
    if (d < best) best = d;
    it++;
  }
  return best * 1e6;
}
static void bench(const char *filter) {
  struct { const char *name; int c, h, m, k, s, dw; } L[] = {
    {"resnet18.conv1_7x7s2", 3, 224, 64, 7, 2, 0},     {"resnet18.l1_3x3", 64, 56, 64, 3, 1, 0},
    {"resnet18.l2_3x3s2", 64, 56, 128, 3, 2, 0},       {"resnet18.l2_3x3", 128, 28, 128, 3, 1, 0},
    {"resnet18.l2_down1x1s2", 64, 56, 128, 1, 2, 0},   {"resnet18.l3_3x3", 256, 14, 256, 3, 1, 0},
    {"resnet18.l4_3x3", 512, 7, 512, 3, 1, 0},         {"mobilenet_v2.conv0_3x3s2", 3, 224, 32, 3, 2, 0},
    {"mobilenet_v2.dw32_112", 32, 112, 32, 3, 1, 1},   {"mobilenet_v2.pw32to16_112", 32, 112, 16, 1, 1, 0},
    {"mobilenet_v2.pw16to96_112", 16, 112, 96, 1, 1, 0}, {"mobilenet_v2.dw96s2_112", 96, 112, 96, 3, 2, 1},
    {"mobilenet_v2.pw144to24_56", 144, 56, 24, 1, 1, 0}, {"mobilenet_v2.dw144_56", 144, 56, 144, 3, 1, 1},
    {"mobilenet_v2.pw192to32_28", 192, 28, 32, 1, 1, 0}, {"mobilenet_v2.dw384_14", 384, 14, 384, 3, 1, 1},
    {"mobilenet_v2.pw384to64_14", 384, 14, 64, 1, 1, 0}, {"mobilenet_v2.dw960_7", 960, 7, 960, 3, 1, 1},
    {"mobilenet_v2.pw320to1280_7", 320, 7, 1280, 1, 1, 0},
  };
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
    if (filter && !strstr(L[i].name, filter)) continue;
    ecg_conv_params p = {0};
    p.n = 1; p.c = L[i].c; p.h = p.w = L[i].h; p.m = L[i].m; p.kh = p.kw = L[i].k; p.sh = p.sw = L[i].s;
    p.dh = p.dw = 1; p.pt = p.pl = p.pb = p.pr = L[i].k / 2; p.group = L[i].dw ? L[i].c : 1;
    p.act.kind = ECG_ACT_RELU;
    p.oh = p.ow = out_dim(p.h, p.kh, p.sh, 1, p.pt, p.pb);
    float *x = rbuf(ecg_rt1_nchwc_floats(1, p.c, p.h, p.w, 16)), *w = rbuf((size_t)p.m * (p.c / p.group) * p.kh * p.kw);
    float *b = rbuf(p.m), *y = rbuf(ecg_rt1_nchwc_floats(1, p.m, p.oh, p.ow, 16));
    float *pw = rbuf(ecg_rt1_conv2d_packed_floats(&p)), *scr = rbuf(ecg_rt1_conv2d_scratch_floats(&p, 1));
    ecg_rt1_conv2d_pack(&p, w, pw);
    double t0 = time_it(run_nchw, &p, 0, x, pw, b, y, scr);
    double tc[2];
    for (int v = 0; v < 2; v++) {
      int C = v ? 16 : 8;
      float *pc = rbuf(ecg_rt1_nchwc_conv2d_packed_floats(&p, C));
      ecg_rt1_nchwc_conv2d_pack(&p, C, w, pc);
      float *sc = rbuf(ecg_rt1_nchwc_conv2d_scratch_floats(&p, C, 1));
      tc[v] = time_it(run_nchwc, &p, C, x, pc, b, y, sc);
      free(pc); free(sc);
    }
    double gf = 2.0 * p.m * p.oh * p.ow * (p.c / p.group) * p.kh * p.kw * 1e-3;
    printf("{\"layer\":\"%s\",\"threads\":1,\"nchw_us\":%.1f,\"nchwc8_us\":%.1f,\"nchwc16_us\":%.1f,"
           "\"nchw_gflops\":%.2f,\"nchwc8_gflops\":%.2f,\"nchwc16_gflops\":%.2f}\n",
           L[i].name, t0, tc[0], tc[1], gf / t0, gf / tc[0], gf / tc[1]);
    fflush(stdout);
    free(x); free(w); free(b); free(y); free(pw); free(scr);
  }
}

/* ------------------------------------------------------------------ --costs */
typedef struct {
  int kind; /* 0 conv, 1 max pool, 2 avg pool */
  ecg_conv_params c;
  ecg_pool_params p;
  int C; /* 0: NCHW */
  const float *x, *w, *b;
  float *y, *scr;
} cost_job;
static void cost_run(cost_job *j) {
  if (j->kind == 0) {
    if (j->C) ecg_rt1_nchwc_conv2d(&j->c, j->C, j->x, j->w, j->b, NULL, j->y, j->scr);
    else ecg_rt1_conv2d(&j->c, j->x, j->w, j->b, j->y, j->scr);
  } else if (j->kind == 1) {
    if (j->C) ecg_rt1_nchwc_maxpool2d(&j->p, j->C, j->x, j->y);
    else ecg_rt1_maxpool2d(&j->p, j->x, j->y);
  } else {
    if (j->C) ecg_rt1_nchwc_avgpool2d(&j->p, j->C, j->x, j->y);
    else ecg_rt1_avgpool2d(&j->p, j->x, j->y);
  }
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
/* median ms of 15 runs of f(arg) after 2 warm-ups */
static double median_ms(void (*f)(void *), void *arg) {
  double t[15];
  f(arg);
  f(arg);
  for (int i = 0; i < 15; i++) {
    double t0 = now();
    f(arg);
    t[i] = (now() - t0) * 1e3;
  }
  qsort(t, 15, sizeof t[0], cmp_d);
  return t[7];
}
static void cost_run_v(void *a) { cost_run(a); }
typedef struct { int n, c, hw, C, back; const float *x; float *y; } reorder_job;
static void reorder_run_v(void *a) {
  reorder_job *r = a;
  if (r->back) ecg_rt1_nchwc_to_nchw(r->n, r->c, r->hw, r->C, r->x, r->y);
  else ecg_rt1_nchw_to_nchwc(r->n, r->c, r->hw, r->C, r->x, r->y);
}
static void json_ms(const char *key, double ms) {
  if (ms < 0) printf(", \"%s\": null", key);
  else printf(", \"%s\": %.6f", key, ms);
}
static int costs(void) {
  char line[512];
  int rc = 0;
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0]) continue;
    cost_job j = {0};
    char pk[8];
    int n, c, hw;
    if (sscanf(line, "reorder %d %d %d", &n, &c, &hw) == 3 && n > 0 && c > 0 && hw > 0) {
      float *x = rbuf((size_t)n * c * hw), *y = rbuf(ecg_rt1_nchwc_floats(n, c, hw, 1, 16));
      printf("{\"kind\": \"layout_transform\", \"signature\": \"%s\"", line);
      const char *keys[] = {"to8_ms", "from8_ms", "to16_ms", "from16_ms"};
      for (int v = 0; v < 4; v++) {
        reorder_job r = {n, c, hw, v < 2 ? 8 : 16, v % 2, v % 2 ? y : x, v % 2 ? x : y};
        json_ms(keys[v], median_ms(reorder_run_v, &r));
      }
      printf("}\n");
      free(x); free(y);
    } else if (sscanf(line, "conv %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", &j.c.n, &j.c.c, &j.c.h, &j.c.w,
                      &j.c.m, &j.c.kh, &j.c.kw, &j.c.sh, &j.c.sw, &j.c.dh, &j.c.dw, &j.c.pt, &j.c.pl, &j.c.pb, &j.c.pr,
                      &j.c.group) == 16 && j.c.n > 0 && j.c.c > 0 && j.c.m > 0 && j.c.group > 0 && j.c.c % j.c.group == 0 &&
               j.c.m % j.c.group == 0 && j.c.kh > 0 && j.c.kw > 0 && j.c.sh > 0 && j.c.sw > 0 && j.c.dh > 0 && j.c.dw > 0) {
      j.kind = 0;
      j.c.act.kind = ECG_ACT_RELU;
      j.c.oh = out_dim(j.c.h, j.c.kh, j.c.sh, j.c.dh, j.c.pt, j.c.pb);
      j.c.ow = out_dim(j.c.w, j.c.kw, j.c.sw, j.c.dw, j.c.pl, j.c.pr);
      if (j.c.oh < 1 || j.c.ow < 1) goto bad;
      float *x = rbuf(ecg_rt1_nchwc_floats(j.c.n, j.c.c, j.c.h, j.c.w, 16));
      float *wt = rbuf((size_t)j.c.m * (j.c.c / j.c.group) * j.c.kh * j.c.kw), *b = rbuf(j.c.m);
      float *y = rbuf(ecg_rt1_nchwc_floats(j.c.n, j.c.m, j.c.oh, j.c.ow, 16));
      int T = 1;
#ifdef _OPENMP
      T = omp_get_max_threads();
#endif
      float *pw = rbuf(ecg_rt1_conv2d_packed_floats(&j.c)), *scr = rbuf(ecg_rt1_conv2d_scratch_floats(&j.c, T));
      ecg_rt1_conv2d_pack(&j.c, wt, pw);
      j.x = x, j.w = pw, j.b = b, j.y = y, j.scr = scr;
      printf("{\"kind\": \"layout_block\", \"signature\": \"%s\"", line);
      json_ms("nchw_ms", median_ms(cost_run_v, &j));
      for (int C = 8; C <= 16; C *= 2) {
        double ms = -1;
        if (ecg_rt1_nchwc_conv2d_supported(&j.c, C)) {
          float *pc = rbuf(ecg_rt1_nchwc_conv2d_packed_floats(&j.c, C));
          ecg_rt1_nchwc_conv2d_pack(&j.c, C, wt, pc);
          float *sc = rbuf(ecg_rt1_nchwc_conv2d_scratch_floats(&j.c, C, T));
          cost_job k = j;
          k.C = C, k.w = pc, k.scr = sc;
          ms = median_ms(cost_run_v, &k);
          free(pc); free(sc);
        }
        json_ms(C == 8 ? "nchwc8_ms" : "nchwc16_ms", ms);
      }
      printf("}\n");
      free(x); free(wt); free(b); free(y); free(pw); free(scr);
    } else if (sscanf(line, "pool %7s %d %d %d %d %d %d %d %d %d %d %d %d", pk, &j.p.n, &j.p.c, &j.p.h, &j.p.w, &j.p.kh,
                      &j.p.kw, &j.p.sh, &j.p.sw, &j.p.pt, &j.p.pl, &j.p.pb, &j.p.pr) == 13 &&
               (!strcmp(pk, "max") || !strcmp(pk, "avg")) && j.p.n > 0 && j.p.c > 0 && j.p.kh > 0 && j.p.kw > 0 &&
               j.p.sh > 0 && j.p.sw > 0) {
      j.kind = strcmp(pk, "max") ? 2 : 1;
      j.p.dh = j.p.dw = 1;
      j.p.oh = out_dim(j.p.h, j.p.kh, j.p.sh, 1, j.p.pt, j.p.pb);
      j.p.ow = out_dim(j.p.w, j.p.kw, j.p.sw, 1, j.p.pl, j.p.pr);
      if (j.p.oh < 1 || j.p.ow < 1) goto bad;
      float *x = rbuf(ecg_rt1_nchwc_floats(j.p.n, j.p.c, j.p.h, j.p.w, 16));
      float *y = rbuf(ecg_rt1_nchwc_floats(j.p.n, j.p.c, j.p.oh, j.p.ow, 16));
      j.x = x, j.y = y;
      printf("{\"kind\": \"layout_block\", \"signature\": \"%s\"", line);
      for (int C = 0; C <= 16; C += 8) {
        cost_job k = j;
        k.C = C;
        json_ms(C == 0 ? "nchw_ms" : C == 8 ? "nchwc8_ms" : "nchwc16_ms", median_ms(cost_run_v, &k));
      }
      printf("}\n");
      free(x); free(y);
    } else {
    bad:
      fprintf(stderr, "rt_nchwc_test --costs: cannot read the signature '%s'\n", line);
      rc = 1;
    }
    fflush(stdout);
  }
  return rc;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--costs")) return costs();
  if (argc > 1 && !strcmp(argv[1], "--bench")) {
    bench(argc > 2 ? argv[2] : NULL);
    return 0;
  }
  for (int v = 0; v < 2; v++) {
    int C = v ? 16 : 8;
    /* fixed edge cases: one channel, channels = C +- 1, 1x1, stride 2 with pads, dilation */
    ecg_act relu = {.kind = ECG_ACT_RELU}, none = {.kind = ECG_ACT_NONE}, clip = {.kind = ECG_ACT_CLIP, .a = 0, .b = 6};
    test_conv(C, 1, 1, 5, 7, 1, 3, 1, 1, 1, 0, 0, none);
    test_conv(C, 1, C - 1, 9, 11, C + 1, 3, 2, 1, 1, 0, 1, relu);
    test_conv(C, 2, C + 3, 8, 19, 2 * C + 5, 1, 1, 1, 0, 0, 1, clip);
    test_conv(C, 1, 3, 17, 23, 13, 7, 2, 1, 3, 0, 0, relu);
    test_conv(C, 1, 2 * C + 1, 12, 12, 5, 3, 1, 2, 2, 0, 0, none);
    test_conv(C, 1, 3 * C - 2, 14, 15, 0, 3, 2, 1, 1, 1, 0, clip);
    test_conv(C, 2, 7, 6, 30, 0, 5, 1, 1, 2, 1, 1, relu);
    /* a generated epilogue (ECG_ACT_FN) after a padded 3x3 conv and an unpadded 1x1 one
     * (read in place), with and without a residual, partial last output blocks */
    ecg_act fna = {.kind = ECG_ACT_FN, .fn = fn_affine};
    test_conv(C, 1, 2 * C + 3, 9, 11, C + 5, 3, 1, 1, 1, 0, 1, fna);
    test_conv(C, 2, C + 3, 8, 19, 2 * C + 5, 1, 1, 1, 0, 0, 0, fna);
    test_conv(C, 1, 2 * C, 7, 7, 3 * C + 1, 1, 1, 1, 0, 0, 1, fna);
    /* 7-wide outputs: the blocked conv pairs rows into one register tile (odd row counts:
     * the last row alone), stride 1 and 2, residual and generated epilogue */
    test_conv(C, 1, 2 * C + 3, 7, 7, 2 * C + 5, 3, 1, 1, 1, 0, 1, fna);
    test_conv(C, 2, 3 * C, 13, 14, 3 * C, 3, 2, 1, 1, 0, 0, relu);
    /* depthwise with the generated epilogue (with C = 16 on AVX-512: ecg_rt1_nchwc16_dw's
     * bands): a residual and a partial last block; 5x5 stride 2 dilation 2; 7x7 planes */
    test_conv(C, 1, 2 * C + 3, 9, 11, 0, 3, 1, 1, 1, 1, 1, fna);
    test_conv(C, 2, C + 5, 13, 10, 0, 5, 2, 2, 4, 1, 0, fna);
    test_conv(C, 1, 3 * C, 7, 7, 0, 3, 1, 1, 1, 1, 1, relu);
    for (int t = 0; t < 40; t++) {
      int dw = ri(0, 2) == 0, k = ri(1, 5);
      test_conv(C, ri(1, 2), ri(1, 40), ri(1, 20), ri(1, 26), ri(1, 40), k, ri(1, 2), ri(1, 2), ri(0, k), dw, ri(0, 1),
                rand_act());
    }
    for (int t = 0; t < 15; t++) {
      int k = ri(1, 4);
      test_pool(C, ri(1, 2), ri(1, 37), ri(1, 18), ri(1, 18), k, ri(1, 2), ri(0, k - 1), ri(0, 1), ri(0, 1));
    }
    for (int t = 0; t < 8; t++) test_gap_add(C, ri(1, 2), ri(1, 50), ri(1, 60));
    for (int t = 0; t < 6; t++) test_se(C, ri(1, 50), ri(1, 15), ri(1, 15), ri(1, 12), t % 2);
  }
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
