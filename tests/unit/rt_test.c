/* Unit test and micro-benchmark of the lowering runtime (tools/lower/runtime).
 *   cc -O3 -march=native -fopenmp -Itools/lower/runtime tests/unit/rt_test.c \
 *      tools/lower/runtime/[all .c] -lm -o build/rt_test && build/rt_test [--bench]
 * Every entry point is compared with naive double-accumulating reference loops over many
 * random shapes; prints "N passed, M failed" and exits 1 on any failure. --bench prints
 * GFLOP/s of a few hot layers at 1 and 2 threads, from the best run and (the conv layers)
 * the median one (--bench WORD: only layers whose name
 * contains WORD); --bench-cold [WORD] flushes the caches of every core the conv runs on
 * before each timed call (bench_flush_caches) so that its weights and input come from
 * memory, as inside a model whose weights exceed the caches
 * (resnet18's deep layers on a 2 MiB L2: the choices of ecg_gemm.c's conv_blocked were
 * measured so). RT_BENCH_ALGO=K in the environment forces strategy K (ECG_RT_CONV_*) on
 * every benchmarked conv where it applies (4: the blocked direct sum). --bench ibr times the
 * intensive-fusion chains (ecg_rt1_ibr) of mobilenet_v2 and mnasnet1_0 at 1 and 2 threads
 * (--bench-cold ibr: the caches flushed before each call, the best of at least 40). */
#include "ecg_rt.h"

#include <math.h>
#include <stdint.h>
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
static float *nanbuf(size_t n) {
  float *p = malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; i < n; i++) p[i] = NAN;
  return p;
}

static double act_ref(ecg_act a, double x) {
  switch (a.kind) {
  case ECG_ACT_NONE: return x;
  case ECG_ACT_RELU: return x > 0 ? x : 0;
  case ECG_ACT_CLIP: return x < a.a ? a.a : x > a.b ? a.b : x;
  case ECG_ACT_LEAKY: return x < 0 ? a.a * x : x;
  case ECG_ACT_SIGMOID: return 1 / (1 + exp(-x));
  case ECG_ACT_HARDSWISH: { double t = x / 6 + 0.5; t = t < 0 ? 0 : t > 1 ? 1 : t; return x * t; }
  case ECG_ACT_SILU: return x / (1 + exp(-x));
  }
  return x;
}

/* got vs want, with tol = 1e-4 * (|want| + mag) where mag is sum |terms| of the dot product. */
static void check(const char *what, const float *got, const double *want, const double *mag, size_t n) {
  double worst = 0;
  size_t wi = 0;
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    double tol = 1e-4 * (fabs(want[i]) + (mag ? mag[i] : 0) + 1e-3);
    double e = fabs((double)got[i] - want[i]);
    if (!(e <= tol) && !(isinf(want[i]) && got[i] == want[i])) {
      if (!bad || e > worst) { worst = e; wi = i; }
      bad = 1;
    }
  }
  if (bad) {
    n_fail++;
    printf("FAIL %s: at %zu got %g want %g\n", what, wi, got[wi], want[wi]);
  } else {
    n_pass++;
  }
}

/* ------------------------------------------------------------------ GEMM */

static void ref_gemm(int tA, int tB, int M, int N, int K, double alpha, const float *A, int lda,
                     const float *B, int ldb, double beta, const float *C0, int ldc,
                     const float *bias_n, ecg_act act, double *out, double *mag) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0, m = 0;
      for (int k = 0; k < K; k++) {
        double a = tA ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
        double b = tB ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
        s += a * b;
        m += fabs(a * b);
      }
      s = alpha * s + (beta != 0 ? beta * C0[(size_t)i * ldc + j] : 0);
      if (bias_n) s += bias_n[j];
      out[(size_t)i * N + j] = act_ref(act, s);
      mag[(size_t)i * N + j] = fabs(alpha) * m + 1;
    }
}

static void test_gemm(int packed, int M, int N, int K) {
  int tA = ri(0, 1), tB = ri(0, 1);
  int lda = (tA ? M : K) + ri(0, 3), ldb = (tB ? K : N) + ri(0, 3), ldc = N + ri(0, 3);
  float *A = rbuf((size_t)(tA ? K : M) * lda), *B = rbuf((size_t)(tB ? N : K) * ldb);
  float beta = (float)ri(0, 1), alpha = packed ? 1.f : (ri(0, 1) ? 1.f : 0.75f);
  float *C = beta != 0 ? rbuf((size_t)M * ldc) : nanbuf((size_t)M * ldc);
  float *C0 = malloc((size_t)M * ldc * sizeof(float) + 4);
  memcpy(C0, C, (size_t)M * ldc * sizeof(float));
  float *bias = packed && ri(0, 1) ? rbuf(N) : NULL;
  ecg_act act = packed ? rand_act() : (ecg_act){ECG_ACT_NONE, 0, 0};
  double *want = malloc(((size_t)M * N + 1) * sizeof(double)), *mag = malloc(((size_t)M * N + 1) * sizeof(double));
  ref_gemm(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C0, ldc, bias, act, want, mag);
  if (packed) {
    float *pb = malloc((ecg_rt1_sgemm_packed_b_floats(K, N) + 1) * sizeof(float));
    ecg_rt1_sgemm_pack_b(tB, K, N, B, ldb, pb);
    ecg_rt1_sgemm_packed(tA, M, N, K, A, lda, pb, bias, act, beta, C, ldc);
    free(pb);
  } else {
    ecg_rt1_sgemm(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  }
  float *got = calloc((size_t)M * N + 1, sizeof(float));
  for (int i = 0; i < M; i++) memcpy(got + (size_t)i * N, C + (size_t)i * ldc, N * sizeof(float));
  int pad_ok = 1; /* columns past N untouched */
  for (int i = 0; i < M; i++)
    for (int j = N; j < ldc; j++)
      if (memcmp(&C[(size_t)i * ldc + j], &C0[(size_t)i * ldc + j], 4)) pad_ok = 0;
  char what[160];
  snprintf(what, sizeof what, "%s tA=%d tB=%d M=%d N=%d K=%d beta=%g act=%d", packed ? "sgemm_packed" : "sgemm",
           tA, tB, M, N, K, beta, act.kind);
  check(what, got, want, mag, (size_t)M * N);
  if (!pad_ok) { n_fail++; printf("FAIL %s: wrote past N\n", what); }
  free(A); free(B); free(C); free(C0); free(bias); free(want); free(mag); free(got);
}

/* ------------------------------------------------------------------ Conv */

static void ref_conv(const ecg_conv_params *p, const float *x, const float *w, const float *bias,
                     double *out, double *mag) {
  int G = p->group, cg = p->c / G, mg = p->m / G;
  for (int n = 0; n < p->n; n++)
    for (int oc = 0; oc < p->m; oc++) {
      int g = oc / mg;
      for (int oy = 0; oy < p->oh; oy++)
        for (int ox = 0; ox < p->ow; ox++) {
          double s = 0, m = 0;
          for (int ci = 0; ci < cg; ci++)
            for (int ki = 0; ki < p->kh; ki++)
              for (int kj = 0; kj < p->kw; kj++) {
                int iy = oy * p->sh - p->pt + ki * p->dh, ix = ox * p->sw - p->pl + kj * p->dw;
                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                double v = (double)x[(((size_t)n * p->c + g * cg + ci) * p->h + iy) * p->w + ix] *
                           w[(((size_t)oc * cg + ci) * p->kh + ki) * p->kw + kj];
                s += v;
                m += fabs(v);
              }
          if (bias) s += bias[oc];
          size_t o = (((size_t)n * p->m + oc) * p->oh + oy) * p->ow + ox;
          out[o] = act_ref(p->act, s);
          mag[o] = m + 1;
        }
    }
}

static int out_dim(int in, int k, int s, int d, int pa, int pb) { return (in + pa + pb - ((k - 1) * d + 1)) / s + 1; }

static void fill_conv(ecg_conv_params *p) {
  p->oh = out_dim(p->h, p->kh, p->sh, p->dh, p->pt, p->pb);
  p->ow = out_dim(p->w, p->kw, p->sw, p->dw, p->pl, p->pr);
}

static void set_threads(int t); /* omp_set_num_threads(t) (below) */
static void test_conv(ecg_conv_params p, int threads) {
  set_threads(threads); /* scratch is sized for `threads`: an earlier case may have set another count */
  fill_conv(&p);
  if (p.oh <= 0 || p.ow <= 0) return;
  size_t xs = (size_t)p.n * p.c * p.h * p.w, ws = (size_t)p.m * (p.c / p.group) * p.kh * p.kw;
  size_t ys = (size_t)p.n * p.m * p.oh * p.ow;
  float *x = rbuf(xs), *w = rbuf(ws), *bias = ri(0, 3) ? rbuf(p.m) : NULL, *y = nanbuf(ys);
  float *pw = nanbuf(ecg_rt1_conv2d_packed_floats(&p));
  float *scr = nanbuf(ecg_rt1_conv2d_scratch_floats(&p, threads));
  double *want = malloc(ys * sizeof(double)), *mag = malloc(ys * sizeof(double));
  ecg_rt1_conv2d_pack(&p, w, pw);
  ecg_rt1_conv2d(&p, x, pw, bias, y, scr);
  ref_conv(&p, x, w, bias, want, mag);
  char what[256];
  snprintf(what, sizeof what, "conv n%d c%d %dx%d m%d k%dx%d s%d,%d d%d,%d pad%d,%d,%d,%d g%d act%d",
           p.n, p.c, p.h, p.w, p.m, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, p.pb, p.pr, p.group, p.act.kind);
  check(what, y, want, mag, ys);
  free(x); free(w); free(bias); free(y); free(pw); free(scr); free(want); free(mag);
}

static ecg_conv_params conv_p(int n, int c, int h, int w, int m, int kh, int kw, int s, int d, int pad, int g) {
  ecg_conv_params p;
  memset(&p, 0, sizeof p);
  p.n = n; p.c = c; p.h = h; p.w = w; p.m = m; p.kh = kh; p.kw = kw;
  p.sh = p.sw = s; p.dh = p.dw = d; p.pt = p.pl = p.pb = p.pr = pad; p.group = g;
  return p;
}

/* test_conv on each of ps[0..n) with a random activation. */
static void test_convs_act(ecg_conv_params *ps, size_t n, int threads) {
  for (size_t i = 0; i < n; i++) {
    ps[i].act = rand_act();
    test_conv(ps[i], threads);
  }
}

/* A generated epilogue (ECG_ACT_FN) that must see every output element exactly once:
 * x -> 2x + 1 (twice would give 4x + 3, never would leave x). */
static void fn_2x1(float *x, size_t n, const void *arg) {
  (void)arg;
  for (size_t i = 0; i < n; i++) x[i] = 2.f * x[i] + 1.f;
}

static void test_conv_fn(ecg_conv_params p, int threads) {
  set_threads(threads);
  fill_conv(&p);
  p.act = (ecg_act){ECG_ACT_FN, 0, 0, fn_2x1, NULL};
  size_t xs = (size_t)p.n * p.c * p.h * p.w, ws = (size_t)p.m * (p.c / p.group) * p.kh * p.kw;
  size_t ys = (size_t)p.n * p.m * p.oh * p.ow;
  float *x = rbuf(xs), *w = rbuf(ws), *bias = rbuf(p.m), *y = nanbuf(ys);
  float *pw = nanbuf(ecg_rt1_conv2d_packed_floats(&p)), *scr = nanbuf(ecg_rt1_conv2d_scratch_floats(&p, threads));
  double *want = malloc(ys * sizeof(double)), *mag = malloc(ys * sizeof(double));
  ecg_rt1_conv2d_pack(&p, w, pw);
  ecg_rt1_conv2d(&p, x, pw, bias, y, scr);
  ecg_conv_params q = p;
  q.act = (ecg_act){ECG_ACT_NONE, 0, 0, NULL, NULL};
  ref_conv(&q, x, w, bias, want, mag);
  for (size_t i = 0; i < ys; i++) { want[i] = 2 * want[i] + 1; mag[i] *= 2; }
  char what[128];
  snprintf(what, sizeof what, "conv epilogue once n%d c%d %dx%d m%d k%dx%d", p.n, p.c, p.h, p.w, p.m, p.kh, p.kw);
  check(what, y, want, mag, ys);
  free(x); free(w); free(bias); free(y); free(pw); free(scr); free(want); free(mag);
}

/* ------------------------------------------------------------------ Intensive fusion */

/* ecg_rt1_ibr against the three convolutions computed one after another in double (ref_conv),
 * and AGO's no-recomputation property: every row of the expanded tensor computed once. */
static void set_threads(int t);
/* k1 > 0: the first stage is a stem conv k1 x k1, stride s1, pads p1, on x [n, cin, xh, xw]
 * (h and w are then its output's dims). */
static int ibr_band_rows; /* ecg_ibr_params.band_rows of the cases (0: the kernel chooses) */
static int ibr_silu;      /* 1: SiLU after both the first stage and the depthwise one (efficientnet_b0's) */
/* cout 0: no second pointwise conv, y is the depthwise stage's output (ecg_rt.h). */
static void test_ibr_k(int n, int cin, int xh, int xw, int k1, int s1, int pd1, int cexp, int k, int s, int pad, int cout,
                       int pw1, int threads, int fn) {
  if (!pw1) cexp = cin;
  set_threads(threads);
  ecg_ibr_params q;
  memset(&q, 0, sizeof q);
  const int pa = pd1 < 0 ? 0 : pd1, pz = pd1 < 0 ? 1 : pd1; /* pd1 -1: pads 0 top and left, 1 bottom and right */
  const int h = k1 ? out_dim(xh, k1, s1, 1, pa, pz) : xh, w = k1 ? out_dim(xw, k1, s1, 1, pa, pz) : xw;
  if (k1) { q.k1h = q.k1w = k1; q.s1h = q.s1w = s1; q.p1t = q.p1l = pa; q.xh = xh; q.xw = xw; }
  q.n = n; q.cin = cin; q.h = h; q.w = w; q.cexp = cexp; q.kh = q.kw = k; q.sh = q.sw = s; q.pt = q.pl = pad;
  q.oh = out_dim(h, k, s, 1, pad, pad); q.ow = out_dim(w, k, s, 1, pad, pad); q.cout = cout;
  q.band_rows = ibr_band_rows;
  q.act1 = ibr_silu ? (ecg_act){ECG_ACT_SILU, 0, 0} : (ecg_act){ECG_ACT_CLIP, 0, 6};
  q.act2 = ibr_silu ? (ecg_act){ECG_ACT_SILU, 0, 0} : (ecg_act){ECG_ACT_RELU, 0, 0};
  if (fn) q.act3 = (ecg_act){ECG_ACT_FN, 0, 0, fn_2x1, NULL}; /* must see every element of y once */
  ecg_conv_params p1 = k1 ? conv_p(n, cin, xh, xw, cexp, k1, k1, s1, 1, pa, 1) : conv_p(n, cin, h, w, cexp, 1, 1, 1, 1, 0, 1);
  if (k1) p1.pb = p1.pr = pz;
  ecg_conv_params p2 = conv_p(n, cexp, h, w, cexp, k, k, s, 1, pad, cexp);
  ecg_conv_params p3 = conv_p(n, cexp, q.oh, q.ow, cout, 1, 1, 1, 1, 0, 1);
  fill_conv(&p1); fill_conv(&p2); fill_conv(&p3);
  p1.act = q.act1; p2.act = q.act2;
  size_t xs = (size_t)n * cin * xh * xw, es = (size_t)n * cexp * h * w, ds = (size_t)n * cexp * q.oh * q.ow;
  size_t ys = (size_t)n * (cout ? cout : cexp) * q.oh * q.ow;
  float *x = rbuf(xs), *w1 = rbuf((size_t)cexp * cin * (k1 ? k1 * k1 : 1)), *b1 = rbuf(cexp), *wd = rbuf((size_t)cexp * k * k), *bd = rbuf(cexp);
  float *w2 = rbuf((size_t)cout * cexp), *b2 = rbuf(cout), *y = nanbuf(ys), *scr = nanbuf(ecg_rt1_ibr_scratch_floats(&q, 8));
  float *w1p = nanbuf(ecg_rt1_ibr_packed_floats(&q, 1)), *w2p = nanbuf(ecg_rt1_ibr_packed_floats(&q, 2));
  ecg_rt1_ibr_pack(&q, 1, w1, w1p);
  ecg_rt1_ibr_pack(&q, 2, w2, w2p);
  float *wdp = nanbuf(ecg_rt1_ibr_packed_floats(&q, 3));
  ecg_rt1_ibr_pack(&q, 3, wd, wdp);
  double *e = malloc(es * sizeof(double)), *d = malloc(ds * sizeof(double)), *want = malloc(ys * sizeof(double));
  double *mag = malloc((es > ys ? (es > ds ? es : ds) : (ys > ds ? ys : ds)) * sizeof(double));
  float *ef = malloc(es * sizeof(float)), *df = malloc(ds * sizeof(float));
  if (pw1) {
    ref_conv(&p1, x, w1, b1, e, mag);
    for (size_t i = 0; i < es; i++) ef[i] = (float)e[i];
  } else memcpy(ef, x, es * sizeof(float));
  ref_conv(&p2, ef, wd, bd, d, mag);
  for (size_t i = 0; i < ds; i++) df[i] = (float)d[i];
  if (cout) ref_conv(&p3, df, w2, b2, want, mag);
  else memcpy(want, d, ds * sizeof(double)); /* mag: the depthwise stage's */
  if (fn)
    for (size_t i = 0; i < ys; i++) { want[i] = 2 * want[i] + 1; mag[i] *= 2; }
  long rows = 0;
  ecg_rt1_ibr(&q, x, pw1 ? w1p : NULL, b1, wdp, bd, cout ? w2p : NULL, cout ? b2 : NULL, y, scr, &rows);
  char what[200];
  snprintf(what, sizeof what, "ibr n%d cin%d %dx%d stem k%d s%d p%d cexp%d k%d s%d pad%d cout%d pw1=%d threads%d fn%d band%d silu%d", n,
           cin, xh, xw, k1, s1, pd1, cexp, k, s, pad, cout, pw1, threads, fn, q.band_rows, ibr_silu);
  check(what, y, want, mag, ys);
  if (rows == (long)n * h) n_pass++;
  else { n_fail++; printf("FAIL %s: %ld rows of E computed, %d expected (recomputation)\n", what, rows, n * h); }
  free(x); free(w1); free(b1); free(wd); free(bd); free(w2); free(b2); free(y); free(scr); free(w1p); free(w2p); free(wdp);
  free(e); free(d); free(want); free(mag); free(ef); free(df);
}

static void test_ibr(int n, int cin, int h, int w, int cexp, int k, int s, int pad, int cout, int pw1, int threads, int fn) {
  test_ibr_k(n, cin, h, w, 0, 1, 0, cexp, k, s, pad, cout, pw1, threads, fn);
}

/* ecg_rt1_se against the chain computed stage by stage in double: the plane means, the two
 * 1x1 convs with their activations, then the broadcast scale (scale = 1) or the scales
 * themselves (scale = 0). */
static void test_se(int n, int c, int h, int w, int cmid, int cout, ecg_act a1, ecg_act a2, int scale, int pool, int threads) {
  set_threads(threads);
  ecg_se_params q;
  memset(&q, 0, sizeof q);
  if (scale || !pool) { cout = c; scale = 1; }
  q.n = n; q.c = c; q.h = h; q.w = w; q.cmid = cmid; q.cout = cout; q.act1 = a1; q.act2 = a2; q.scale = scale; q.pool = pool;
  size_t hw = (size_t)h * w, xs = (size_t)n * c * hw, ys = scale ? xs : (size_t)n * cout;
  float *x = rbuf(xs), *w1 = rbuf((size_t)cmid * c), *b1 = rbuf(cmid), *w2 = rbuf((size_t)cout * cmid), *b2 = rbuf(cout);
  float *u = rbuf((size_t)n * cmid); /* the tail's input (pool == 0) */
  float *y = nanbuf(ys), *scr = nanbuf(ecg_rt1_se_scratch_floats(&q, threads));
  float *w1p = nanbuf(ecg_rt1_se_packed_floats(&q, 1)), *w2p = nanbuf(ecg_rt1_se_packed_floats(&q, 2));
  ecg_rt1_se_pack(&q, 1, w1, w1p);
  ecg_rt1_se_pack(&q, 2, w2, w2p);
  double *want = malloc(ys * sizeof(double)), *mag = malloc(ys * sizeof(double));
  double *m = malloc((size_t)c * sizeof(double)), *hv = malloc((size_t)cmid * sizeof(double)), *hm = malloc((size_t)cmid * sizeof(double));
  for (int img = 0; img < n; img++) {
    const float *xi = x + (size_t)img * c * hw;
    for (int ch = 0; ch < c; ch++) {
      double t = 0;
      for (size_t j = 0; j < hw; j++) t += xi[(size_t)ch * hw + j];
      m[ch] = t / (double)hw;
    }
    for (int i = 0; i < cmid; i++) {
      double t = b1[i], a = fabs(b1[i]);
      for (int k = 0; k < c; k++) { t += (double)w1[(size_t)i * c + k] * m[k]; a += fabs((double)w1[(size_t)i * c + k] * m[k]); }
      hv[i] = pool ? act_ref(a1, t) : u[(size_t)img * cmid + i];
      hm[i] = pool ? a : 0;
    }
    for (int o = 0; o < cout; o++) {
      double t = b2[o], a = fabs(b2[o]);
      for (int k = 0; k < cmid; k++) {
        t += (double)w2[(size_t)o * cmid + k] * hv[k];
        a += fabs((double)w2[(size_t)o * cmid + k]) * (fabs(hv[k]) + hm[k]);
      }
      double sv = act_ref(a2, t);
      if (!scale) { want[(size_t)img * cout + o] = sv; mag[(size_t)img * cout + o] = a; continue; }
      for (size_t j = 0; j < hw; j++) {
        size_t i = ((size_t)img * c + o) * hw + j;
        want[i] = (double)x[i] * sv;
        mag[i] = fabs((double)x[i]) * (fabs(sv) + a);
      }
    }
  }
  ecg_rt1_se(&q, x, pool ? NULL : u, pool ? w1p : NULL, pool ? b1 : NULL, w2p, b2, y, scr);
  char what[160];
  snprintf(what, sizeof what, "se n%d c%d %dx%d cmid%d cout%d act%d/%d scale%d pool%d threads%d", n, c, h, w, cmid, cout, a1.kind,
           a2.kind, scale, pool, threads);
  check(what, y, want, mag, ys);
  if (scale) { /* in place, as the lowering calls it: y in x's storage */
    memcpy(y, x, xs * sizeof(float));
    ecg_rt1_se(&q, y, pool ? NULL : u, pool ? w1p : NULL, pool ? b1 : NULL, w2p, b2, y, scr);
    strcat(what, " in place");
    check(what, y, want, mag, ys);
  }
  free(x); free(w1); free(b1); free(w2); free(b2); free(u); free(y); free(scr); free(w1p); free(w2p);
  free(want); free(mag); free(m); free(hv); free(hm);
}

/* ------------------------------------------------------------------ ConvTranspose */

static void test_convt(ecg_conv_params p) {
  int G = p.group, cg = p.c / G, mg = p.m / G;
  p.oh = (p.h - 1) * p.sh - p.pt - p.pb + (p.kh - 1) * p.dh + 1 + ri(0, p.sh - 1);
  p.ow = (p.w - 1) * p.sw - p.pl - p.pr + (p.kw - 1) * p.dw + 1 + ri(0, p.sw - 1);
  if (p.oh <= 0 || p.ow <= 0) return;
  size_t xs = (size_t)p.n * p.c * p.h * p.w, ws = (size_t)p.c * mg * p.kh * p.kw;
  size_t ys = (size_t)p.n * p.m * p.oh * p.ow;
  float *x = rbuf(xs), *w = rbuf(ws), *bias = ri(0, 1) ? rbuf(p.m) : NULL, *y = nanbuf(ys);
  float *scr = nanbuf(ecg_rt1_convtranspose2d_scratch_floats(&p));
  double *want = calloc(ys, sizeof(double)), *mag = calloc(ys, sizeof(double));
  for (int n = 0; n < p.n; n++)
    for (int ci = 0; ci < p.c; ci++) {
      int g = ci / cg;
      for (int o = 0; o < mg; o++)
        for (int iy = 0; iy < p.h; iy++)
          for (int ix = 0; ix < p.w; ix++)
            for (int ki = 0; ki < p.kh; ki++)
              for (int kj = 0; kj < p.kw; kj++) {
                int oy = iy * p.sh - p.pt + ki * p.dh, ox = ix * p.sw - p.pl + kj * p.dw;
                if (oy < 0 || oy >= p.oh || ox < 0 || ox >= p.ow) continue;
                double v = (double)x[(((size_t)n * p.c + ci) * p.h + iy) * p.w + ix] *
                           w[(((size_t)ci * mg + o) * p.kh + ki) * p.kw + kj];
                size_t oi = (((size_t)n * p.m + g * mg + o) * p.oh + oy) * p.ow + ox;
                want[oi] += v;
                mag[oi] += fabs(v);
              }
    }
  for (size_t i = 0; i < ys; i++) {
    int oc = (int)((i / ((size_t)p.oh * p.ow)) % p.m);
    want[i] = act_ref(p.act, want[i] + (bias ? bias[oc] : 0));
    mag[i] += 1;
  }
  ecg_rt1_convtranspose2d(&p, x, w, bias, y, scr);
  char what[200];
  snprintf(what, sizeof what, "convT n%d c%d %dx%d m%d k%dx%d s%d,%d d%d,%d g%d", p.n, p.c, p.h, p.w, p.m, p.kh,
           p.kw, p.sh, p.sw, p.dh, p.dw, p.group);
  check(what, y, want, mag, ys);
  free(x); free(w); free(bias); free(y); free(scr); free(want); free(mag);
}

/* ------------------------------------------------------------------ Pooling */

static void test_pool(ecg_pool_params p, int is_max) {
  p.oh = out_dim(p.h, p.kh, p.sh, p.dh, p.pt, p.pb);
  p.ow = out_dim(p.w, p.kw, p.sw, p.dw, p.pl, p.pr);
  if (p.oh <= 0 || p.ow <= 0) return;
  size_t xs = (size_t)p.n * p.c * p.h * p.w, ys = (size_t)p.n * p.c * p.oh * p.ow;
  float *x = rbuf(xs), *y = nanbuf(ys);
  double *want = malloc(ys * sizeof(double));
  for (int pl = 0; pl < p.n * p.c; pl++)
    for (int oy = 0; oy < p.oh; oy++)
      for (int ox = 0; ox < p.ow; ox++) {
        double s = is_max ? -INFINITY : 0;
        int cnt = 0;
        for (int ki = 0; ki < p.kh; ki++)
          for (int kj = 0; kj < p.kw; kj++) {
            int iy = oy * p.sh - p.pt + ki * p.dh, ix = ox * p.sw - p.pl + kj * p.dw;
            int in = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
            int inpad = iy >= -p.pt && iy < p.h + p.pb && ix >= -p.pl && ix < p.w + p.pr;
            if (p.count_include_pad ? inpad : in) cnt++;
            if (!in) continue;
            double v = x[((size_t)pl * p.h + iy) * p.w + ix];
            if (is_max) s = v > s ? v : s;
            else s += v;
          }
        want[((size_t)pl * p.oh + oy) * p.ow + ox] = is_max ? s : (cnt ? s / cnt : 0);
      }
  if (is_max) ecg_rt1_maxpool2d(&p, x, y);
  else ecg_rt1_avgpool2d(&p, x, y);
  char what[200];
  snprintf(what, sizeof what, "%s n%d c%d %dx%d k%dx%d s%d,%d d%d,%d pad%d,%d,%d,%d cip%d", is_max ? "maxpool" : "avgpool",
           p.n, p.c, p.h, p.w, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, p.pb, p.pr, p.count_include_pad);
  check(what, y, want, NULL, ys);
  free(x); free(y); free(want);
}

/* ecg_rt1_conv2d_maxpool (conv c -> pool q as one kernel) against ecg_rt1_conv2d then
 * ecg_rt1_maxpool2d at `threads` threads: the same conv code and an exact max, so equal
 * bit for bit (NaN-filled outputs and scratch). q gets its input dims and oh, ow (ceil:
 * ceil_mode's output size) here. */
static void test_conv_pool(ecg_conv_params c, ecg_pool_params q, int ceil, int threads) {
  set_threads(threads);
  fill_conv(&c);
  q.n = c.n; q.c = c.m; q.h = c.oh; q.w = c.ow;
  q.oh = out_dim(q.h + (ceil ? q.sh - 1 : 0), q.kh, q.sh, 1, q.pt, q.pb);
  q.ow = out_dim(q.w + (ceil ? q.sw - 1 : 0), q.kw, q.sw, 1, q.pl, q.pr);
  size_t xs = (size_t)c.n * c.c * c.h * c.w, ws = (size_t)c.m * c.c * c.kh * c.kw, ts = (size_t)c.n * c.m * c.oh * c.ow;
  size_t ys = (size_t)q.n * q.c * q.oh * q.ow;
  float *x = rbuf(xs), *w = rbuf(ws), *b = rbuf(c.m), *t = nanbuf(ts), *want = nanbuf(ys), *y = nanbuf(ys);
  float *pw = nanbuf(ecg_rt1_conv2d_packed_floats(&c)), *s1 = nanbuf(ecg_rt1_conv2d_scratch_floats(&c, threads));
  float *s2 = nanbuf(ecg_rt1_conv2d_maxpool_scratch_floats(&c, &q, threads));
  ecg_rt1_conv2d_pack(&c, w, pw);
  ecg_rt1_conv2d(&c, x, pw, b, t, s1);
  ecg_rt1_maxpool2d(&q, t, want);
  ecg_rt1_conv2d_maxpool(&c, &q, x, pw, b, y, s2);
  size_t bad = 0;
  for (size_t i = 0; i < ys; i++) bad += memcmp(&y[i], &want[i], sizeof(float)) != 0;
  if (!bad) n_pass++;
  else {
    n_fail++;
    printf("FAIL conv_maxpool n%d c%d %dx%d m%d k%dx%d s%d pool k%dx%d s%d,%d pad%d,%d,%d,%d ceil%d threads %d: %zu of %zu differ\n", c.n, c.c,
           c.h, c.w, c.m, c.kh, c.kw, c.sh, q.kh, q.kw, q.sh, q.sw, q.pt, q.pl, q.pb, q.pr, ceil, threads, bad, ys);
  }
  free(x); free(w); free(b); free(t); free(want); free(y); free(pw); free(s1); free(s2);
}

static ecg_pool_params pool_p(int k, int s, int pad) {
  ecg_pool_params q;
  memset(&q, 0, sizeof q);
  q.kh = q.kw = k; q.sh = q.sw = s; q.dh = q.dw = 1; q.pt = q.pl = q.pb = q.pr = pad;
  return q;
}

static void test_global(int nc, int hw) {
  float *x = rbuf((size_t)nc * hw), *y = nanbuf(nc);
  double *want = malloc(nc * sizeof(double)), *mag = malloc(nc * sizeof(double));
  for (int is_max = 0; is_max < 2; is_max++) {
    for (int i = 0; i < nc; i++) {
      double s = is_max ? -INFINITY : 0;
      for (int j = 0; j < hw; j++) {
        double v = x[(size_t)i * hw + j];
        if (is_max) s = v > s ? v : s;
        else s += v;
      }
      want[i] = is_max ? s : s / hw;
      mag[i] = 1;
    }
    if (is_max) ecg_rt1_global_maxpool(nc, hw, x, y);
    else ecg_rt1_global_avgpool(nc, hw, x, y);
    char what[64];
    snprintf(what, sizeof what, "global_%s nc%d hw%d", is_max ? "max" : "avg", nc, hw);
    check(what, y, want, mag, nc);
  }
  free(x); free(y); free(want); free(mag);
}

/* ------------------------------------------------------------------ bench */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void set_threads(int t) {
#ifdef _OPENMP
  omp_set_num_threads(t);
#else
  (void)t;
#endif
}

/* GFLOP/s of conv p at `threads` threads: nominal (2 * the direct conv's multiply-adds per
 * second); *exec gets the executed rate (ecg_rt1_conv2d_macs: lower for Winograd). */
static int bench_cold; /* --bench-cold: flush the caches before each timed conv */
static char *bench_flush;
#define BENCH_FLUSH_BYTES ((size_t)64 << 20)

/* --bench-cold's flush: every thread of the team that will run the kernel reads and writes
 * one byte per cache line of its share of a 64 MiB buffer (twice a 32 MiB L3; each share
 * far above a core's L2), so that the kernel's weights and input come from memory on every
 * core. A plain memset of the buffer did not do this: glibc's memset writes large buffers
 * with non-temporal stores, which allocate no cache lines, and on one thread only (the
 * other core's L2 stayed warm for 2-thread runs). Flushes of 4-64 MiB left ibr16's stem
 * chain at its hot time; only 256 MiB made it cold. */
static void bench_flush_caches(int threads) {
  if (!bench_cold || !bench_flush) return;
#pragma omp parallel num_threads(threads)
  {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    volatile char *b = bench_flush + BENCH_FLUSH_BYTES / (size_t)nt * (size_t)t;
    for (size_t i = 0; i < BENCH_FLUSH_BYTES / (size_t)nt; i += 64) b[i] = (char)(b[i] + 1);
  }
}

static int cmp_dbl(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
/* GFLOP/s (nominal FLOPs) of conv p at `threads`, from its best run of at least 5 within
 * 0.4 s; *exec the same from the executed multiply-adds (Winograd), *med (may be NULL) the
 * nominal GFLOP/s of the median run (the first 4096 runs), which is what a model's profile
 * sees: the best run of a noisy VM flatters the kernel by 10-15%. */
static double bench_conv_med(ecg_conv_params p, int threads, double *exec, double *med) {
  fill_conv(&p);
  if (getenv("RT_BENCH_ALGO")) p.algo = atoi(getenv("RT_BENCH_ALGO")); /* ECG_RT_CONV_*: force a strategy */
  set_threads(threads);
  size_t xs = (size_t)p.n * p.c * p.h * p.w, ws = (size_t)p.m * (p.c / p.group) * p.kh * p.kw;
  float *x = rbuf(xs), *w = rbuf(ws), *b = rbuf(p.m), *y = rbuf((size_t)p.n * p.m * p.oh * p.ow);
  float *pw = rbuf(ecg_rt1_conv2d_packed_floats(&p)), *scr = rbuf(ecg_rt1_conv2d_scratch_floats(&p, threads));
  ecg_rt1_conv2d_pack(&p, w, pw);
  double flops = 2.0 * p.n * p.m * p.oh * p.ow * (p.c / p.group) * p.kh * p.kw;
  ecg_rt1_conv2d(&p, x, pw, b, y, scr);
  enum { NT = 4096 };
  double best = 1e9, t0 = now(), *ts = malloc(NT * sizeof(double));
  int it = 0;
  while (now() - t0 < 0.4 || it < 5) {
    bench_flush_caches(threads);
    double t1 = now();
    ecg_rt1_conv2d(&p, x, pw, b, y, scr);
    double d = now() - t1;
    if (d < best) best = d;
    if (ts && it < NT) ts[it] = d;
    it++;
  }
  if (med && ts) {
    const int n = it < NT ? it : NT;
    qsort(ts, (size_t)n, sizeof(double), cmp_dbl);
    *med = flops / ts[n / 2] * 1e-9;
  } else if (med) *med = 0;
  free(ts);
  free(x); free(w); free(b); free(y); free(pw); free(scr);
  *exec = 2.0 * ecg_rt1_conv2d_macs(&p) / best * 1e-9;
  return flops / best * 1e-9;
}
static double bench_conv(ecg_conv_params p, int threads, double *exec) { return bench_conv_med(p, threads, exec, NULL); }

static double bench_gemm(int M, int N, int K, int packed, int threads) {
  set_threads(threads);
  float *A = rbuf((size_t)M * K), *B = rbuf((size_t)K * N), *C = rbuf((size_t)M * N);
  float *pb = rbuf(ecg_rt1_sgemm_packed_b_floats(K, N));
  ecg_rt1_sgemm_pack_b(0, K, N, B, N, pb);
  ecg_act none = {ECG_ACT_NONE, 0, 0};
  double best = 1e9, t0 = now();
  int it = 0;
  while (now() - t0 < 0.4 || it < 5) {
    double t1 = now();
    if (packed) ecg_rt1_sgemm_packed(0, M, N, K, A, K, pb, NULL, none, 0.f, C, N);
    else ecg_rt1_sgemm(0, 0, M, N, K, 1.f, A, K, B, N, 0.f, C, N);
    double d = now() - t1;
    if (d < best) best = d;
    it++;
  }
  free(A); free(B); free(C); free(pb);
  return 2.0 * M * N * K / best * 1e-9;
}

static void bench(const char *filter) { /* filter: substring of the layer names, or NULL */
  struct { const char *name; ecg_conv_params p; } convs[] = {
      {"mbv2 1x1 96x56x56->24", conv_p(1, 96, 56, 56, 24, 1, 1, 1, 1, 0, 1)},
      {"mbv2 dw3x3 144x56x56 s1", conv_p(1, 144, 56, 56, 144, 3, 3, 1, 1, 1, 144)},
      {"mbv2 dw3x3 144x56x56 s2", conv_p(1, 144, 56, 56, 144, 3, 3, 2, 1, 1, 144)},
      {"effnet dw5x5 240x28x28 s1", conv_p(1, 240, 28, 28, 240, 5, 5, 1, 1, 2, 240)},
      {"resnet18 3x3 64x56x56->64", conv_p(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1)},
      {"resnet18 7x7s2 3x224x224->64", conv_p(1, 3, 224, 224, 64, 7, 7, 2, 1, 3, 1)},
      {"resnet18 3x3 256x14x14->256", conv_p(1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1)},
      {"mbv2 1x1 320x7x7->1280", conv_p(1, 320, 7, 7, 1280, 1, 1, 1, 1, 0, 1)},
      {"mbv2 first 3x3s2 3x224x224->32", conv_p(1, 3, 224, 224, 32, 3, 3, 2, 1, 1, 1)},
      {"mbv2 1x1 24x56x56->144", conv_p(1, 24, 56, 56, 144, 1, 1, 1, 1, 0, 1)},
      {"squeezenet 3x3 16x55x55->64", conv_p(1, 16, 55, 55, 64, 3, 3, 1, 1, 1, 1)},
      {"shufflenet dw3x3 58x28x28 s1", conv_p(1, 58, 28, 28, 58, 3, 3, 1, 1, 1, 58)},
      {"mbv2 dw3x3 96x112x112 s2", conv_p(1, 96, 112, 112, 96, 3, 3, 2, 1, 1, 96)},
      {"mbv2 dw3x3 960x7x7 s1", conv_p(1, 960, 7, 7, 960, 3, 3, 1, 1, 1, 960)},
      {"effnet dw5x5 144x56x56 s2", conv_p(1, 144, 56, 56, 144, 5, 5, 2, 1, 2, 144)},
      {"effnet dw5x5 672x14x14 s1", conv_p(1, 672, 14, 14, 672, 5, 5, 1, 1, 2, 672)},
      {"mbv2 dw3x3 576x14x14 s1", conv_p(1, 576, 14, 14, 576, 3, 3, 1, 1, 1, 576)},
      {"mbv2 dw3x3 192x28x28 s2", conv_p(1, 192, 28, 28, 192, 3, 3, 2, 1, 1, 192)},
      {"mbv2 dw3x3 32x112x112 s1", conv_p(1, 32, 112, 112, 32, 3, 3, 1, 1, 1, 32)},
      {"effnet dw5x5 1152x7x7 s1", conv_p(1, 1152, 7, 7, 1152, 5, 5, 1, 1, 2, 1152)},
      {"effnet dw5x5 240x28x28 s2", conv_p(1, 240, 28, 28, 240, 5, 5, 2, 1, 2, 240)},
      {"mbv2 1x1 16x112x112->96", conv_p(1, 16, 112, 112, 96, 1, 1, 1, 1, 0, 1)},
      {"mbv2 1x1 32x112x112->16", conv_p(1, 32, 112, 112, 16, 1, 1, 1, 1, 0, 1)},
      {"squeezenet 1x1 128x55x55->16", conv_p(1, 128, 55, 55, 16, 1, 1, 1, 1, 0, 1)},
      {"resnet18 3x3 512x7x7->512", conv_p(1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1)},
      {"mbv2 1x1 96x14x14->576", conv_p(1, 96, 14, 14, 576, 1, 1, 1, 1, 0, 1)},
      {"mbv2 1x1 576x14x14->96", conv_p(1, 576, 14, 14, 96, 1, 1, 1, 1, 0, 1)},
      {"mbv2 1x1 960x7x7->320", conv_p(1, 960, 7, 7, 320, 1, 1, 1, 1, 0, 1)},
      {"mbv2 1x1 160x7x7->960", conv_p(1, 160, 7, 7, 960, 1, 1, 1, 1, 0, 1)},
      {"resnet18 3x3 128x28x28->128", conv_p(1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1)},
      {"resnet18 3x3s2 128x28x28->256", conv_p(1, 128, 28, 28, 256, 3, 3, 2, 1, 1, 1)},
      {"resnet18 3x3s2 256x14x14->512", conv_p(1, 256, 14, 14, 512, 3, 3, 2, 1, 1, 1)},
      {"resnet18 1x1s2 64x56x56->128", conv_p(1, 64, 56, 56, 128, 1, 1, 2, 1, 0, 1)},
      {"resnet18 1x1s2 128x28x28->256", conv_p(1, 128, 28, 28, 256, 1, 1, 2, 1, 0, 1)},
      {"resnet18 1x1s2 256x14x14->512", conv_p(1, 256, 14, 14, 512, 1, 1, 2, 1, 0, 1)},
      {"squeezenet 1x1 512x13x13->1000", conv_p(1, 512, 13, 13, 1000, 1, 1, 1, 1, 0, 1)},
      {"squeezenet first 3x3s2 3x224x224->64", conv_p(1, 3, 224, 224, 64, 3, 3, 2, 1, 0, 1)},
      {"squeezenet 3x3 64x13x13->256", conv_p(1, 64, 13, 13, 256, 3, 3, 1, 1, 1, 1)},
      {"squeezenet 3x3 32x27x27->128", conv_p(1, 32, 27, 27, 128, 3, 3, 1, 1, 1, 1)},
      {"squeezenet 1x1 64x55x55->16", conv_p(1, 64, 55, 55, 16, 1, 1, 1, 1, 0, 1)},
      {"squeezenet 1x1 16x55x55->64", conv_p(1, 16, 55, 55, 64, 1, 1, 1, 1, 0, 1)},
      {"squeezenet 1x1 32x27x27->128", conv_p(1, 32, 27, 27, 128, 1, 1, 1, 1, 0, 1)},
      {"squeezenet 1x1 256x27x27->32", conv_p(1, 256, 27, 27, 32, 1, 1, 1, 1, 0, 1)},
      {"squeezenet 1x1 64x13x13->256", conv_p(1, 64, 13, 13, 256, 1, 1, 1, 1, 0, 1)},
      {"mlsd 3x3 64x80x80->64", conv_p(1, 64, 80, 80, 64, 3, 3, 1, 1, 1, 1)},
      {"mlsd 3x3 d5 64x80x80->64", conv_p(1, 64, 80, 80, 64, 3, 3, 1, 5, 5, 1)},
      {"mlsd 3x3 128x40x40->64", conv_p(1, 128, 40, 40, 64, 3, 3, 1, 1, 1, 1)},
      {"owk 3x1 24x74x32->24", conv_p(1, 24, 74, 32, 24, 3, 1, 1, 1, 0, 1)},
      {"owk 1x3 24x36x16->48", conv_p(1, 24, 36, 16, 48, 1, 3, 1, 1, 0, 1)},
      {"owk 3x1 48x36x16->48", conv_p(1, 48, 36, 16, 48, 3, 1, 1, 1, 0, 1)},
      {"owk 1x3 48x34x16->48", conv_p(1, 48, 34, 16, 48, 1, 3, 1, 1, 0, 1)},
      {"owk 3x1 72x32x8->72", conv_p(1, 72, 32, 8, 72, 3, 1, 1, 1, 0, 1)},
      {"owk 1x3 72x30x8->72", conv_p(1, 72, 30, 8, 72, 1, 3, 1, 1, 0, 1)},
      {"owk 3x1 96x14x4->96", conv_p(1, 96, 14, 4, 96, 3, 1, 1, 1, 0, 1)},
  };
  /* openwakeword_embedding's separable 3x1 and 1x3 convs (the 1x3 ones padded left and right only) */
  for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++)
    if (!strncmp(convs[i].name, "owk 1x3", 7)) { convs[i].p.pt = convs[i].p.pb = 0; convs[i].p.pl = convs[i].p.pr = 1; }
  for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
    if (filter && !strstr(convs[i].name, filter)) continue;
    double e1, e2, m1, m2, g1 = bench_conv_med(convs[i].p, 1, &e1, &m1), g2 = bench_conv_med(convs[i].p, 2, &e2, &m2);
    printf("%-32s %7.1f GFLOP/s (1 thread) %7.1f GFLOP/s (2 threads)  median run %.1f, %.1f", convs[i].name, g1, g2, m1, m2);
    if (e1 < 0.99 * g1) printf("  executed %.1f, %.1f (Winograd)", e1, e2);
    printf("\n");
  }
  { /* fused activations: efficientnet_b0's convs with SiLU (in the GEMM epilogue, the
     * blocked sum's store, the depthwise kernels') and ecg_rt1_act_apply on a 96x56x56
     * tensor (ns per element) */
    struct { const char *name; ecg_conv_params p; } sc[] = {
        {"effnet 1x1 16x112x112->96 silu", conv_p(1, 16, 112, 112, 96, 1, 1, 1, 1, 0, 1)},
        {"effnet 1x1 192x7x7->1152 silu", conv_p(1, 192, 7, 7, 1152, 1, 1, 1, 1, 0, 1)},
        {"effnet dw3x3 480x14x14 s1 silu", conv_p(1, 480, 14, 14, 480, 3, 3, 1, 1, 1, 480)},
        {"effnet dw5x5 672x14x14 s1 silu", conv_p(1, 672, 14, 14, 672, 5, 5, 1, 1, 2, 672)}};
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
      if (filter && !strstr(sc[i].name, filter)) continue;
      sc[i].p.act = (ecg_act){ECG_ACT_SILU, 0, 0, NULL, NULL};
      double e1, e2, g1 = bench_conv(sc[i].p, 1, &e1), g2 = bench_conv(sc[i].p, 2, &e2);
      printf("%-32s %7.1f GFLOP/s (1 thread) %7.1f GFLOP/s (2 threads)\n", sc[i].name, g1, g2);
    }
    for (int k = ECG_ACT_RELU; k <= ECG_ACT_SILU; k++) {
      char an[48];
      snprintf(an, sizeof an, "act_apply kind %d 96x56x56", k);
      if (filter && !strstr(an, filter)) continue;
      size_t n = (size_t)96 * 56 * 56;
      float *v = rbuf(n);
      ecg_act a = {(ecg_act_kind)k, -0.5f, 0.7f, NULL, NULL};
      double best = 1e9, t0 = now();
      while (now() - t0 < 0.2) {
        for (size_t i = 0; i < n; i++) v[i] = (float)(i % 2001) * 0.01f - 10.f;
        double t1 = now();
        ecg_rt1_act_apply(a, v, n);
        double d = now() - t1;
        if (d < best) best = d;
      }
      printf("%-32s %7.3f ns per element\n", an, best / n * 1e9);
      free(v);
    }
  }
  { /* intensive-fusion chains (ecg_rt1_ibr: pointwise -> depthwise -> pointwise) of
     * mobilenet_v2 (3x3) and mnasnet1_0 (5x5), and their first chain with the 3x3 stride-2
     * stem conv as its first stage (column 6: 3), and efficientnet_b0's expansions with
     * SiLU (column 7) and no second pointwise conv (output channels 0): us per call at 1 and
     * 2 threads */
    int ib[][8] = {{24, 56, 144, 3, 1, 24, 0, 0}, {32, 28, 192, 3, 1, 32, 0, 0}, {64, 14, 384, 3, 1, 64, 0, 0}, {96, 14, 576, 3, 2, 160, 0, 0},
                   {160, 7, 960, 3, 1, 160, 0, 0}, {40, 28, 240, 5, 1, 40, 0, 0}, {112, 14, 672, 5, 2, 160, 0, 0}, {3, 224, 32, 3, 1, 16, 3, 0},
                   {16, 112, 48, 3, 2, 24, 0, 0}, {16, 112, 96, 3, 2, 24, 0, 0}, {24, 56, 72, 3, 1, 24, 0, 0}, {24, 56, 72, 5, 2, 40, 0, 0},
                   {40, 28, 120, 5, 1, 40, 0, 0}, {192, 7, 1152, 5, 1, 192, 0, 0}, {96, 14, 576, 5, 1, 96, 0, 0}, {3, 224, 32, 3, 1, 0, 3, 1}, {16, 112, 96, 3, 2, 0, 0, 1}, {24, 56, 144, 3, 1, 0, 0, 1},
                   {24, 56, 144, 5, 2, 0, 0, 1}, {40, 28, 240, 5, 1, 0, 0, 1}, {80, 14, 480, 3, 1, 0, 0, 1}, {192, 7, 1152, 5, 1, 0, 0, 1}};
    for (int q = 0; q < (int)(sizeof ib / sizeof ib[0]); q++) {
      char in[64];
      snprintf(in, sizeof in, "ibr %dx%dx%d->%d k%d s%d->%d%s%s", ib[q][0], ib[q][1], ib[q][1], ib[q][2], ib[q][3], ib[q][4], ib[q][5],
               ib[q][6] ? " stem" : "", ib[q][7] ? " silu" : "");
      if (filter && !strstr(in, filter)) continue;
      ecg_ibr_params b;
      memset(&b, 0, sizeof b);
      b.n = 1; b.cin = ib[q][0]; b.h = b.w = ib[q][1]; b.cexp = ib[q][2]; b.kh = b.kw = ib[q][3]; b.sh = b.sw = ib[q][4];
      if (ib[q][6]) { /* stride 2, pad 1 */
        b.k1h = b.k1w = ib[q][6]; b.s1h = b.s1w = 2; b.p1t = b.p1l = 1; b.xh = b.xw = ib[q][1];
        b.h = b.w = out_dim(b.xh, b.k1h, 2, 1, 1, 1);
      }
      b.pt = b.pl = ib[q][3] / 2; b.oh = b.ow = out_dim(b.h, b.kh, b.sh, 1, b.pt, b.pt); b.cout = ib[q][5];
      b.act1 = b.act2 = ib[q][7] ? (ecg_act){ECG_ACT_SILU, 0, 0} : (ecg_act){ECG_ACT_CLIP, 0, 6};
      float *x = rbuf((size_t)b.cin * (b.k1h ? b.xh * b.xw : b.h * b.w)), *w1 = rbuf((size_t)b.cexp * b.cin * (b.k1h ? b.k1h * b.k1w : 1));
      float *wd = rbuf((size_t)b.cexp * b.kh * b.kw);
      float *w2 = rbuf((size_t)b.cout * b.cexp), *y = rbuf((size_t)(b.cout ? b.cout : b.cexp) * b.oh * b.ow), *scr = rbuf(ecg_rt1_ibr_scratch_floats(&b, 2));
      float *w1p = rbuf(ecg_rt1_ibr_packed_floats(&b, 1)), *w2p = rbuf(ecg_rt1_ibr_packed_floats(&b, 2)), *wdp = rbuf(ecg_rt1_ibr_packed_floats(&b, 3));
      ecg_rt1_ibr_pack(&b, 1, w1, w1p);
      ecg_rt1_ibr_pack(&b, 2, w2, w2p);
      ecg_rt1_ibr_pack(&b, 3, wd, wdp);
      double us[2];
      for (int t = 1; t <= 2; t++) {
        set_threads(t);
        ecg_rt1_ibr(&b, x, w1p, NULL, wdp, NULL, b.cout ? w2p : NULL, NULL, y, scr, NULL);
        double best = 1e9, t0 = now();
        for (int it = 0; now() - t0 < 0.3 || it < (bench_cold ? 40 : 5); it++) {
          bench_flush_caches(t);
          double t1 = now();
          ecg_rt1_ibr(&b, x, w1p, NULL, wdp, NULL, b.cout ? w2p : NULL, NULL, y, scr, NULL);
          double d = now() - t1;
          if (d < best) best = d;
        }
        us[t - 1] = best * 1e6;
      }
      printf("%-32s %7.1f us (1 thread) %7.1f us (2 threads) x%.2f\n", in, us[0], us[1], us[0] / us[1]);
      free(x); free(w1); free(wd); free(w2); free(y); free(scr); free(w1p); free(w2p); free(wdp);
    }
  }
  { /* squeezenet's MaxPools (3x3, stride 2, ceil mode) */
    int mp[][2] = {{64, 111}, {128, 55}, {256, 27}};
    for (int q = 0; q < 3; q++) {
      char mn[48];
      snprintf(mn, sizeof mn, "maxpool 3x3s2 %dx%dx%d", mp[q][0], mp[q][1], mp[q][1]);
      if (filter && !strstr(mn, filter)) continue;
      ecg_pool_params pp;
      memset(&pp, 0, sizeof pp);
      pp.n = 1; pp.c = mp[q][0]; pp.h = pp.w = mp[q][1]; pp.kh = pp.kw = 3; pp.sh = pp.sw = 2; pp.dh = pp.dw = 1;
      pp.oh = pp.ow = (mp[q][1] - 3 + 1) / 2 + 1; /* ceil((h - 3) / 2) + 1 */
      size_t n = (size_t)pp.c * pp.h * pp.w;
      float *v = rbuf(n), *o = rbuf((size_t)pp.c * pp.oh * pp.ow);
      set_threads(1);
      double best = 1e9, t0 = now();
      while (now() - t0 < 0.2) {
        double t1 = now();
        ecg_rt1_maxpool2d(&pp, v, o);
        double d = now() - t1;
        if (d < best) best = d;
      }
      printf("%-32s %7.1f us (1 thread)\n", mn, best * 1e6);
      free(v); free(o);
    }
  }
  { /* squeeze-excite 1x1 convs on a 1x1 plane (conv_gemv) */
    ecg_conv_params se[] = {conv_p(1, 1152, 1, 1, 48, 1, 1, 1, 1, 0, 1), conv_p(1, 48, 1, 1, 1152, 1, 1, 1, 1, 0, 1)};
    for (int q = 0; q < 2; q++) {
      char sn[48];
      snprintf(sn, sizeof sn, "se 1x1 %d->%d on 1x1", se[q].c, se[q].m);
      if (filter && !strstr(sn, filter)) continue;
      double e1, g1 = bench_conv(se[q], 1, &e1);
      printf("%-32s %7.1f GFLOP/s (1 thread)\n", sn, g1);
    }
  }
  { /* GlobalAveragePool of efficientnet_b0's squeeze-excite blocks */
    int gs[][2] = {{32, 112 * 112}, {144, 56 * 56}, {672, 14 * 14}, {1152, 49}};
    for (int q = 0; q < 4; q++) {
      char gn[48];
      snprintf(gn, sizeof gn, "global_avgpool %dx%d", gs[q][0], gs[q][1]);
      if (filter && !strstr(gn, filter)) continue;
      size_t n = (size_t)gs[q][0] * gs[q][1];
      float *v = rbuf(n), *o = rbuf((size_t)gs[q][0]);
      double best = 1e9, t0 = now();
      while (now() - t0 < 0.2) {
        double t1 = now();
        ecg_rt1_global_avgpool(gs[q][0], gs[q][1], v, o);
        double d = now() - t1;
        if (d < best) best = d;
      }
      printf("%-32s %7.1f GB/s (1 thread)\n", gn, n * 4.0 / best * 1e-9);
      free(v); free(o);
    }
  }
  if (filter && !strstr("gemm", filter)) return;
  double g1 = bench_gemm(1, 1000, 1280, 1, 1), g2 = bench_gemm(1, 1000, 1280, 1, 2);
  printf("%-32s %7.1f GFLOP/s (1 thread) %7.1f GFLOP/s (2 threads)\n", "gemm packed 1x1000x1280 (fc)", g1, g2);
  g1 = bench_gemm(128, 512, 128, 1, 1), g2 = bench_gemm(128, 512, 128, 1, 2);
  printf("%-32s %7.1f GFLOP/s (1 thread) %7.1f GFLOP/s (2 threads)\n", "gemm packed 128x512x128", g1, g2);
  g1 = bench_gemm(128, 128, 512, 1, 1), g2 = bench_gemm(128, 128, 512, 1, 2);
  printf("%-32s %7.1f GFLOP/s (1 thread) %7.1f GFLOP/s (2 threads)\n", "gemm packed 128x128x512", g1, g2);
  g1 = bench_gemm(128, 128, 128, 1, 1), g2 = bench_gemm(128, 128, 128, 1, 2);
  printf("%-32s %7.1f GFLOP/s (1 thread) %7.1f GFLOP/s (2 threads)\n", "gemm packed 128x128x128", g1, g2);
  g1 = bench_gemm(128, 128, 512, 0, 1), g2 = bench_gemm(128, 128, 512, 0, 2);
  printf("%-32s %7.1f GFLOP/s (1 thread) %7.1f GFLOP/s (2 threads)\n", "sgemm 128x128x512", g1, g2);
  g1 = bench_gemm(1024, 1024, 1024, 0, 1), g2 = bench_gemm(1024, 1024, 1024, 0, 2);
  printf("%-32s %7.1f GFLOP/s (1 thread) %7.1f GFLOP/s (2 threads)\n", "sgemm 1024^3", g1, g2);
}

/* ------------------------------------------------------------------ threads per run */

/* n runs through ecg_rt1_team_pick / ecg_rt1_team_record with runs on T threads taking
 * ms_t and runs on one thread ms_1 milliseconds; the counts chosen go to got[0..n). */
static void team_runs(ecg_team *t, int n, double ms_1, double ms_t, int *got) {
  for (int r = 0; r < n; r++) {
    t->runs++;
    t->cur = ecg_rt1_team_pick(t);
    got[r] = t->cur;
    ecg_rt1_team_record(t, t->cur ? ms_t : ms_1);
  }
}

/* The thread-count policy (ecg_rt.h "Threads per run"): T while it is faster, one probe
 * of 1 thread after four runs, then probes 8, 16, 32, 64, 64 runs apart; when one thread
 * turns faster the runs switch, and back when T does; one slow run on T does not. */
static void test_team(void) {
  ecg_team t;
  memset(&t, 0, sizeof t);
  t.threads = 2;
  t.every = 8;
  int got[400], ok = 1;
  team_runs(&t, 200, 20.0, 10.0, got); /* quiet: T twice as fast */
  int ones = 0, first1 = -1, gap_ok = 1, last = -1;
  for (int r = 0; r < 200; r++)
    if (!got[r]) {
      ones++;
      if (first1 < 0) first1 = r;
      if (last >= 0 && r - last - 1 > 64) gap_ok = 0;
      last = r;
    }
  ok &= got[0] == 1 && got[3] == 1 && first1 == 4 && ones >= 4 && ones <= 8 && gap_ok;
  team_runs(&t, 100, 20.0, 40.0, got); /* the other core loaded: T twice as slow */
  int ones2 = 0;
  for (int r = 0; r < 100; r++) ones2 += got[r] == 0;
  ok &= ones2 >= 80;
  team_runs(&t, 100, 20.0, 10.0, got); /* quiet again */
  int ts = 0;
  for (int r = 50; r < 100; r++) ts += got[r] == 1;
  ok &= ts >= 45;
  /* one slow run on T (an interrupt) among fast ones does not switch to one thread */
  int spike = 1;
  for (int r = 0; r < 40; r++) {
    t.runs++;
    t.cur = ecg_rt1_team_pick(&t);
    if (r > 20 && !t.probe) spike &= t.cur == 1;
    ecg_rt1_team_record(&t, t.cur ? (r == 20 ? 40.0 : 10.0) : 20.0);
  }
  ok &= spike;
  if (ok) n_pass++;
  else {
    n_fail++;
    printf("FAIL team: quiet first1 %d ones %d gaps %d; loaded ones %d; quiet again T %d of 50; spike kept T %d\n", first1, ones, gap_ok, ones2, ts, spike);
  }
}

/* The cap (ecg_rt.h "Threads per run"): a run of a context whose scratch holds 2 threads,
 * after the caller raised OpenMP's count to 5, runs on 2 (profiling or not, on T or on one
 * thread by the choice) and gives the 5 back after it; without a cap it keeps the 5. */
static void test_team_cap(void) {
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  int ok = 1, during[3] = {0, 0, 0}, after[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) { /* cap 2; cap 2, profiled; no cap */
    ecg_team t;
    memset(&t, 0, sizeof t);
    t.cap = k < 2 ? 2 : 0;
    omp_set_num_threads(5);
    for (int r = 0; r < 8; r++) { /* past the first runs, so a probe of one thread comes */
      ecg_rt1_team_begin(&t, k == 1);
      int n = 0;
#pragma omp parallel
#pragma omp single
      n = omp_get_num_threads();
      if (n > during[k]) during[k] = n;
      ecg_rt1_team_end(&t);
      after[k] = omp_get_max_threads();
      ok &= after[k] == 5;
    }
  }
  ok &= during[0] == 2 && during[1] == 2 && during[2] == 5;
  omp_set_num_threads(saved);
  if (ok) n_pass++;
  else {
    n_fail++;
    printf("FAIL team cap: most threads in a run %d/%d/%d (cap 2, cap 2 profiled, no cap), after the last %d/%d/%d\n",
           during[0], during[1], during[2], after[0], after[1], after[2]);
  }
#endif
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "--bench") || !strcmp(argv[1], "--bench-cold"))) {
    bench_cold = !strcmp(argv[1], "--bench-cold");
    if (bench_cold && !(bench_flush = calloc(1, BENCH_FLUSH_BYTES))) return 1;
    bench(argc > 2 ? argv[2] : NULL);
    free(bench_flush);
    return 0;
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  /* GEMM: edge sizes around the 6x16 tile and the 256/240/192 blocks */
  int sizes[] = {1, 2, 5, 6, 7, 15, 16, 17, 31, 33, 64, 97};
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j += 3)
      for (int k = 0; k < 12; k += 4) {
        test_gemm(0, sizes[i], sizes[(j + i) % 12], sizes[k] + 1);
        test_gemm(1, sizes[(i + 5) % 12], sizes[j], sizes[(k + i) % 12]);
      }
  { /* edges of the 8x48 AVX-512 tile (8 rows, 16-column vectors) */
    int ms[] = {8, 9, 15, 47}, ns[] = {32, 47, 48, 49, 96, 97}, ks[] = {1, 255, 257};
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 6; j++) {
        test_gemm(j & 1, ms[i], ns[j], ks[(i + j) % 3]);
        test_gemm(!(j & 1), ns[j], ms[i], ks[(i + j + 1) % 3]);
      }
  }
  test_gemm(0, 300, 400, 600);
  test_gemm(1, 250, 200, 530);
  test_gemm(0, 7, 1000, 257);
  test_gemm(1, 128, 512, 128);
  test_gemm(0, 3, 5, 0);
  test_gemm(1, 3, 5, 0);
  for (int r = 0; r < 40; r++) test_gemm(r & 1, ri(1, 300), ri(1, 300), ri(1, 600));

  /* intensive fusion: stride 1 and 2, pads, 3x3 and 5x5, with and without the expansion,
   * 1 and 2 threads, a generated epilogue; expansions of 16-channel blocks run the
   * channel-blocked kernel on AVX-512 (ecg_rt1_ibr16: odd numbers of output blocks, input
   * channels not a multiple of 16, bands of E's ring at 112x112, planes of few rows) */
  for (int th = 1; th <= 2; th++) {
    test_ibr(1, 8, 13, 11, 24, 3, 1, 1, 16, 1, th, 0);
    test_ibr(1, 8, 13, 11, 24, 3, 2, 1, 16, 1, th, 1);
    test_ibr(2, 16, 14, 14, 96, 5, 2, 2, 24, 1, th, th == 2);
    test_ibr(1, 32, 112, 112, 32, 3, 1, 1, 16, 0, th, 0);
    test_ibr(1, 24, 56, 56, 144, 3, 2, 1, 32, 1, th, 1);
    test_ibr(1, 160, 7, 7, 960, 3, 1, 1, 160, 1, th, 0);
    test_ibr(1, 4, 9, 30, 8, 3, 1, 0, 5, 1, th, 0);
    test_ibr(1, 16, 112, 112, 96, 3, 2, 1, 24, 1, th, 1);
    test_ibr(1, 24, 20, 17, 48, 3, 2, 1, 40, 1, th, 0);
    test_ibr(2, 40, 15, 30, 240, 5, 2, 2, 80, 1, th, 1);
    test_ibr(1, 16, 9, 9, 16, 5, 1, 2, 8, 0, th, 0);
    test_ibr(1, 17, 6, 5, 32, 3, 1, 0, 3, 1, th, 1);
    test_ibr(1, 24, 28, 28, 72, 5, 2, 2, 40, 1, th, 0);
    test_ibr(1, 120, 9, 11, 120, 3, 1, 1, 17, 0, th, 1);
    /* a stem conv as the first stage (mobilenet_v2's and mnasnet1_0's 3x224x224 -> 32 3x3
     * stride 2, here on smaller images): strides 1 and 2, pads 0 to 2, 1 to 4 input channels,
     * 5x5, expansions not a multiple of 16, rows of E shorter than a register tile */
    test_ibr_k(1, 3, 38, 45, 3, 2, 1, 32, 3, 1, 1, 16, 1, th, 0);
    test_ibr_k(1, 3, 224, 224, 3, 2, 1, 32, 3, 1, 1, 16, 1, th, 1);
    test_ibr_k(2, 1, 20, 17, 5, 1, 2, 24, 3, 2, 1, 8, 1, th, th == 2);
    test_ibr_k(1, 4, 15, 9, 3, 2, 0, 72, 5, 1, 2, 20, 1, th, 0);
    test_ibr_k(1, 3, 21, 19, 3, 2, 1, 88, 3, 1, 1, 24, 1, th, 0); /* pairs of blocks whose second holds 8 channels (i16_pw_pick) */
    test_ibr_k(1, 2, 11, 30, 3, 1, 1, 16, 3, 2, 1, 33, 1, th, 1);
    test_ibr_k(1, 4, 64, 48, 3, 2, -1, 32, 3, 1, 1, 16, 1, th, 0); /* mlsd_320x320_tiny's pads */
    /* no second pointwise conv (cout 0: efficientnet_b0's expansions, whose depthwise
     * output the squeeze-and-excitation reads), SiLU: the channel-blocked kernel's
     * transposed store of D (channels not a multiple of 16, rows shorter and longer than a
     * register tile, few-row planes split by block at 2 threads, a stem) and the portable
     * kernel's (an expansion of 20) */
    ibr_silu = 1;
    test_ibr(1, 16, 112, 112, 96, 3, 2, 1, 0, 1, th, 0);
    test_ibr(1, 24, 20, 17, 144, 5, 1, 2, 0, 1, th, 0);
    test_ibr(2, 40, 9, 30, 72, 3, 2, 1, 0, 1, th, 0);
    test_ibr(1, 80, 4, 4, 488, 3, 1, 1, 0, 1, th, 0);
    test_ibr(1, 8, 13, 11, 20, 3, 1, 1, 0, 1, th, 0);
    test_ibr(1, 24, 20, 17, 48, 3, 2, 1, 40, 1, th, 1);
    test_ibr_k(1, 3, 38, 45, 3, 2, 1, 32, 3, 1, 1, 0, 1, th, 0);
    ibr_silu = 0;
    /* planes of one or two groups of output rows (mnasnet1_0 at 56x56 ends on 2x2 and
     * 4x4): at 2 threads each group is split over the team by block */
    test_ibr(1, 192, 2, 2, 1152, 5, 1, 2, 192, 1, th, 0);
    test_ibr(1, 80, 4, 4, 480, 3, 1, 1, 96, 1, th, 1);
    /* a schedule's row tile (band_rows): 1 row, a band that does not divide the plane, more
     * rows than the plane has; a stride-2 stage and a stem */
    for (int br = 1; br <= 40; br = br * 3 + 2) { /* 1, 5, 17 */
      ibr_band_rows = br;
      test_ibr(1, 24, 20, 17, 48, 3, 2, 1, 40, 1, th, 0);
      test_ibr(1, 16, 28, 28, 96, 5, 1, 2, 24, 1, th, 1);
      test_ibr_k(1, 3, 38, 45, 3, 2, 1, 32, 3, 1, 1, 16, 1, th, 0);
    }
    ibr_band_rows = 0;
    { /* band_rows reaches the kernel's geometry: 2 rows a band keep fewer rows of E than the
       * kernel's own bands on a 112x112 plane, so the scratch is smaller */
      ecg_ibr_params b;
      memset(&b, 0, sizeof b);
      b.n = 1; b.cin = 16; b.h = b.w = 112; b.cexp = 96; b.kh = b.kw = 3; b.sh = b.sw = 2; b.pt = b.pl = 1;
      b.oh = b.ow = 56; b.cout = 24;
      const size_t s0 = ecg_rt1_ibr_scratch_floats(&b, th);
      b.band_rows = 2;
      const size_t s2 = ecg_rt1_ibr_scratch_floats(&b, th);
      if (s2 < s0) n_pass++;
      else { n_fail++; printf("FAIL ibr band_rows 2: scratch %zu floats, not under the default's %zu\n", s2, s0); }
    }
  }
  /* Conv: fixed cases (1x1 direct, im2col, depthwise, grouped, 1-D), then random */
  ecg_conv_params fixed[] = {
      conv_p(1, 96, 13, 11, 24, 1, 1, 1, 1, 0, 1),  conv_p(2, 17, 8, 8, 40, 1, 1, 1, 1, 0, 1),
      conv_p(1, 16, 16, 16, 70, 1, 1, 1, 1, 0, 1),  conv_p(1, 3, 31, 29, 20, 7, 7, 2, 1, 3, 1),
      conv_p(1, 8, 20, 20, 16, 3, 3, 1, 2, 2, 1),   conv_p(1, 16, 19, 23, 16, 3, 3, 1, 1, 1, 16),
      conv_p(1, 16, 19, 23, 16, 3, 3, 2, 1, 1, 16), conv_p(2, 12, 17, 40, 12, 5, 5, 1, 1, 2, 12),
      conv_p(1, 12, 17, 40, 12, 5, 5, 2, 1, 2, 12), conv_p(1, 8, 15, 15, 24, 3, 3, 1, 1, 1, 8),
      conv_p(1, 8, 15, 15, 8, 3, 3, 1, 2, 2, 8),    conv_p(1, 12, 10, 10, 24, 1, 1, 1, 1, 0, 3),
      conv_p(1, 12, 10, 10, 24, 3, 3, 2, 1, 1, 4),  conv_p(1, 300, 9, 9, 40, 3, 3, 1, 1, 1, 1),
      conv_p(1, 1, 12, 12, 7, 3, 3, 1, 1, 1, 1),    conv_p(1, 16, 1, 50, 8, 1, 5, 1, 1, 0, 1),
      conv_p(1, 64, 8, 8, 32, 1, 1, 1, 1, 0, 1),    conv_p(1, 8, 3, 3, 8, 3, 3, 1, 1, 0, 8),
  };
  fixed[15].pl = 2; fixed[15].pr = 2; fixed[15].dw = 2;
  /* large enough to run threaded */
  test_conv(conv_p(1, 64, 30, 30, 40, 3, 3, 1, 1, 1, 1), threads);
  test_conv(conv_p(2, 48, 28, 28, 36, 1, 1, 1, 1, 0, 1), threads);
  test_conv(conv_p(1, 96, 33, 31, 96, 3, 3, 1, 1, 1, 96), threads);
  test_conv(conv_p(1, 64, 33, 31, 128, 5, 5, 2, 1, 2, 64), threads);
  test_conv(conv_p(1, 64, 21, 21, 64, 3, 3, 1, 1, 1, 4), threads);
  /* Winograd on one band of one image with the output channels split over the team: the
   * team transforms the input once, each thread a share of the channels (conv_wg_run);
   * uneven channel counts, and an activation */
  {
    ecg_conv_params wg1[] = {conv_p(1, 64, 13, 13, 256, 3, 3, 1, 1, 1, 1), conv_p(1, 67, 14, 14, 200, 3, 3, 1, 1, 1, 1),
                             conv_p(1, 9, 11, 13, 40, 3, 3, 1, 1, 1, 1)};
    test_convs_act(wg1, sizeof wg1 / sizeof wg1[0], threads);
    if (threads > 1) test_convs_act(wg1, sizeof wg1 / sizeof wg1[0], 1);
  }
  /* 1x1 convs whose input rows are a multiple of 256 bytes apart (planes of 64k
   * positions), read in place where few rows share an L1 set (ecg_gemm.c b_direct_ok:
   * 16x16 with 32 channels and 56x56 with 96, batches), packed where many do (16x16 with 48) */
  test_conv(conv_p(2, 32, 16, 16, 24, 1, 1, 1, 1, 0, 1), threads);
  test_conv(conv_p(1, 48, 16, 16, 40, 1, 1, 1, 1, 0, 1), threads);
  test_conv(conv_p(2, 96, 56, 56, 24, 1, 1, 1, 1, 0, 1), threads);
  /* small planes (7x7, 14x14) with many channels: computed transposed (conv_swap in
   * ecg_gemm.c), including channel counts past one tile (600 > 528), groups, batches */
  test_conv(conv_p(1, 64, 7, 7, 96, 3, 3, 1, 1, 1, 1), threads);
  test_conv(conv_p(2, 80, 7, 7, 160, 1, 1, 1, 1, 0, 1), threads);
  test_conv(conv_p(1, 96, 7, 7, 96, 3, 3, 1, 1, 1, 2), threads);
  test_conv(conv_p(1, 72, 7, 7, 40, 3, 3, 1, 1, 1, 1), threads);
  test_conv(conv_p(1, 128, 7, 7, 600, 1, 1, 1, 1, 0, 1), threads);
  test_conv(conv_p(1, 64, 20, 20, 96, 3, 3, 2, 1, 1, 1), threads);
  /* planes of 2..31 positions (56x56 inputs' last stages: 2x2, 4x4), transposed too:
   * positions fewer than a micro-kernel's rows, a 3x3 conv on 3x3, groups, batches */
  test_conv(conv_p(1, 192, 2, 2, 1152, 1, 1, 1, 1, 0, 1), threads);
  test_conv(conv_p(2, 1152, 2, 2, 320, 1, 1, 1, 1, 0, 1), threads);
  test_conv(conv_p(1, 96, 4, 4, 576, 1, 1, 1, 1, 0, 1), threads);
  test_conv(conv_p(1, 256, 3, 3, 256, 3, 3, 1, 1, 1, 2), threads);
  test_conv(conv_p(1, 128, 4, 4, 96, 3, 3, 1, 1, 1, 1), threads);
  test_conv(conv_p(1, 64, 1, 5, 600, 1, 1, 1, 1, 0, 1), threads);
  /* 3x3 depthwise on wide and tall planes (AVX-512 dw512_blk3: 1..4 chunks of 16 columns,
   * up to 8 rows per block, strides 1 and 2, unpadded) */
  {
    ecg_conv_params dws[] = {conv_p(1, 4, 21, 70, 4, 3, 3, 1, 1, 1, 4), conv_p(2, 3, 29, 141, 3, 3, 3, 2, 1, 1, 3),
                             conv_p(1, 5, 17, 50, 10, 3, 3, 1, 1, 0, 5), conv_p(1, 3, 30, 37, 3, 3, 3, 2, 1, 0, 3),
                             conv_p(1, 6, 9, 9, 6, 3, 3, 1, 1, 1, 6)};
    test_convs_act(dws, sizeof dws / sizeof dws[0], threads);
  }
  /* depthwise by blocks of 16 channels (AVX-512 dw_cb: 5x5 kernels, or rows of <= 8
   * columns): channel counts not a multiple of 16, several bands of rows (a plane of
   * more than 16384 / 16 positions), strides 1 and 2 (also unequal), dilation, pads that
   * crop, 7x7 planes, the generated epilogue once per element */
  {
    ecg_conv_params cbs[] = {conv_p(1, 20, 70, 130, 20, 5, 5, 2, 1, 2, 20), conv_p(2, 37, 14, 14, 37, 5, 5, 1, 1, 2, 37),
                             conv_p(1, 48, 7, 7, 48, 3, 3, 1, 1, 1, 48),     conv_p(1, 17, 23, 19, 17, 5, 5, 1, 2, 3, 17),
                             conv_p(1, 33, 40, 41, 33, 5, 5, 2, 1, 1, 33),   conv_p(1, 16, 9, 6, 16, 5, 5, 1, 1, 0, 16),
                             conv_p(1, 5, 31, 5, 5, 3, 3, 2, 1, 1, 5)};
    cbs[4].sh = 1; cbs[4].pb = 0; cbs[4].pr = 3;
    test_convs_act(cbs, sizeof cbs / sizeof cbs[0], threads);
    cbs[0].act.kind = ECG_ACT_SILU;
    test_conv(cbs[0], threads);
    test_conv_fn(conv_p(1, 40, 14, 14, 40, 5, 5, 1, 1, 2, 40), threads);
    test_conv_fn(conv_p(1, 24, 30, 150, 24, 5, 5, 2, 1, 2, 24), threads);
  }
  /* 1x1 convs on a 1x1 plane (conv_gemv: squeeze-excite), row counts not a multiple of
   * the panel, K not a multiple of 4, batches, the generated epilogue once per element */
  {
    ecg_conv_params gv[] = {conv_p(1, 1152, 1, 1, 48, 1, 1, 1, 1, 0, 1), conv_p(1, 48, 1, 1, 1152, 1, 1, 1, 1, 0, 1),
                            conv_p(3, 37, 1, 1, 13, 1, 1, 1, 1, 0, 1), conv_p(1, 2, 1, 1, 5, 1, 1, 1, 1, 0, 1)};
    test_convs_act(gv, sizeof gv / sizeof gv[0], threads);
    test_conv_fn(conv_p(2, 30, 1, 1, 21, 1, 1, 1, 1, 0, 1), threads);
  }
  /* few input channels and taps (AVX-512 conv_direct: blocks of 8 output channels, the
   * last one partial; tiles of 3, 2 and 1 vectors of 16 columns, the last one partial;
   * strides 1 and 2, dilation, unpadded and asymmetric pads, kernels of 3 columns (their
   * own unrolled tile) and others; threads split by channel block, or by rows when there
   * are fewer blocks than threads (16 channels at 3 threads) */
  {
    ecg_conv_params dir[] = {conv_p(1, 3, 40, 45, 32, 3, 3, 2, 1, 1, 1),  conv_p(2, 3, 20, 37, 20, 3, 3, 1, 1, 1, 1),
                             conv_p(1, 2, 17, 70, 16, 3, 3, 2, 2, 2, 1),  conv_p(1, 4, 9, 40, 24, 2, 3, 1, 1, 0, 1),
                             conv_p(1, 3, 30, 130, 17, 3, 3, 2, 1, 1, 1), conv_p(2, 3, 11, 100, 40, 3, 3, 1, 1, 1, 1),
                             conv_p(1, 1, 24, 70, 19, 5, 5, 2, 1, 2, 1),  conv_p(1, 3, 13, 225, 64, 3, 3, 2, 1, 0, 1),
                             conv_p(1, 4, 12, 50, 16, 3, 2, 1, 1, 0, 1)};
    dir[5].pr = 0; dir[5].pb = 2;
    dir[8].pl = 1;
    test_convs_act(dir, sizeof dir / sizeof dir[0], threads);
    /* each kind of store: Relu in the tile's loop, the others on the stored rows */
    const ecg_act da[3] = {{ECG_ACT_RELU, 0, 0, NULL, NULL}, {ECG_ACT_SILU, 0, 0, NULL, NULL}, {ECG_ACT_CLIP, -0.5f, 0.7f, NULL, NULL}};
    for (int k = 0; k < 3; k++) {
      ecg_conv_params d = k == 2 ? conv_p(1, 1, 24, 70, 19, 5, 5, 2, 1, 2, 1) : conv_p(1 + k, 3, 40, 45, 32, 3, 3, 2 - k, 1, 1, 1);
      d.act = da[k];
      test_conv(d, threads);
    }
    test_conv_fn(conv_p(1, 3, 20, 64, 24, 3, 3, 2, 1, 1, 1), threads);
    set_threads(3);
    test_conv(conv_p(1, 3, 21, 66, 16, 3, 3, 2, 1, 1, 1), 3);
    set_threads(5);
    test_conv(conv_p(2, 3, 9, 33, 16, 3, 3, 1, 1, 1, 1), 5);
    set_threads(threads);
  }
  /* 3x3 stride-1 convs run as Winograd F(4x4, 3x3) (conv_wg in ecg_gemm.c): planes not a
   * multiple of 4, unpadded and asymmetric pads, channel counts past a GEMM block (72 > 64)
   * and past KC (300 > 256), several bands of tile rows, batches; the generated epilogue
   * once per element */
  {
    ecg_conv_params wg[] = {conv_p(1, 16, 17, 23, 24, 3, 3, 1, 1, 1, 1), conv_p(2, 8, 9, 10, 8, 3, 3, 1, 1, 0, 1),
                            conv_p(1, 40, 56, 56, 72, 3, 3, 1, 1, 1, 1), conv_p(1, 300, 12, 12, 20, 3, 3, 1, 1, 1, 1),
                            conv_p(1, 24, 30, 41, 13, 3, 3, 1, 1, 2, 1), conv_p(2, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1),
                            /* dilated: dh*dw phases of undilated Winograd convs */
                            conv_p(1, 16, 62, 60, 24, 3, 3, 1, 2, 2, 1), conv_p(1, 16, 80, 77, 16, 3, 3, 1, 5, 5, 1),
                            conv_p(2, 20, 39, 56, 9, 3, 3, 1, 3, 1, 1)};
    wg[8].pb = 2; wg[8].pr = 4; wg[8].dw = 2;
    wg[4].pb = 0; wg[4].pl = 0; wg[4].pr = 1;
    /* forced: on AVX-512 the default runs convs with few channels, and dilated ones, blocked */
    for (size_t i = 0; i < sizeof wg / sizeof wg[0]; i++) wg[i].algo = ECG_RT_CONV_WINOGRAD;
    test_convs_act(wg, sizeof wg / sizeof wg[0], threads);
    ecg_conv_params wfn[] = {conv_p(1, 32, 21, 26, 40, 3, 3, 1, 1, 1, 1), conv_p(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1),
                             conv_p(1, 40, 9, 9, 40, 3, 3, 1, 1, 1, 1), conv_p(1, 16, 83, 80, 24, 3, 3, 1, 5, 5, 1)};
    for (size_t i = 0; i < sizeof wfn / sizeof wfn[0]; i++) {
      wfn[i].algo = ECG_RT_CONV_WINOGRAD;
      test_conv_fn(wfn[i], threads);
    }
    for (int i = 6; i < 8; i++) { /* the dilated cases run as Winograd too when forced */
      ecg_conv_params d = wg[i];
      fill_conv(&d);
      const double nominal = (double)d.n * d.m * d.oh * d.ow * d.c * 9;
      if (ecg_rt1_conv2d_macs(&d) < 0.6 * nominal) n_pass++;
      else { n_fail++; printf("FAIL dilated conv %d not run as Winograd (%g of %g multiply-adds)\n", i, ecg_rt1_conv2d_macs(&d), nominal); }
    }
#if defined(__AVX512F__)
    { /* by default a dilated conv runs as the blocked direct sum (its nominal multiply-adds)
       * on AVX-512: mlsd_320x320_tiny's 64x80x80->64, dilation 5 */
      ecg_conv_params d = conv_p(1, 64, 80, 80, 64, 3, 3, 1, 5, 5, 1);
      fill_conv(&d);
      if (ecg_rt1_conv2d_macs(&d) == 80.0 * 80 * 64 * 64 * 9) n_pass++;
      else { n_fail++; printf("FAIL dilated 64x80x80 conv: %g multiply-adds, not run blocked\n", ecg_rt1_conv2d_macs(&d)); }
    }
    { /* squeezenet1_1's 16x55x55->64 3x3 expand by default: Winograd (fewer multiply-adds
       * than nominal) on AVX-512 CPUs that run 512-bit FMAs as two halves (AMD family 19h,
       * Zen 4), the blocked direct sum (nominal) on the others (Intel's) */
      ecg_conv_params d = conv_p(1, 16, 55, 55, 64, 3, 3, 1, 1, 1, 1);
      fill_conv(&d);
      __builtin_cpu_init();
      const int halved = __builtin_cpu_is("amdfam19h"), wg = ecg_rt1_conv2d_macs(&d) < 55.0 * 55 * 64 * 16 * 9;
      if (wg == halved) n_pass++;
      else { n_fail++; printf("FAIL 16x55x55 3x3 conv: Winograd %d on a CPU with halved 512-bit FMAs %d\n", wg, halved); }
    }
    { /* 1x1 convs with large weights on small planes by default: blocked (the packed size is
       * ceil(m/16) * ceil(c/16) blocks of 16 x 16) up to 14x14 planes, on CPUs with halved
       * 512-bit FMAs (Zen 4) up to 8x8 only: squeezenet1_1's 512x13x13->1000 there takes the
       * GEMM path; mobilenet_v2's 320x7x7->1280 and a 512x8x8->1000 stay blocked on both */
      ecg_conv_params q = conv_p(1, 512, 13, 13, 1000, 1, 1, 1, 1, 0, 1), r = conv_p(1, 320, 7, 7, 1280, 1, 1, 1, 1, 0, 1);
      ecg_conv_params e = conv_p(1, 512, 8, 8, 1000, 1, 1, 1, 1, 0, 1);
      fill_conv(&q); fill_conv(&r); fill_conv(&e);
      __builtin_cpu_init();
      const int halved = __builtin_cpu_is("amdfam19h"), qb = ecg_rt1_conv2d_packed_floats(&q) == 63 * 32 * 256;
      if (qb == !halved && ecg_rt1_conv2d_packed_floats(&r) == 80 * 20 * 256 && ecg_rt1_conv2d_packed_floats(&e) == 63 * 32 * 256) n_pass++;
      else { n_fail++; printf("FAIL blocked 1x1 choice: 13x13 blocked %d on a CPU with halved 512-bit FMAs %d; packed %zu (7x7), %zu (8x8)\n", qb, halved, ecg_rt1_conv2d_packed_floats(&r), ecg_rt1_conv2d_packed_floats(&e)); }
    }
    { /* by default convs whose channels pad to whole 16-channel blocks by at most 1/8 run
       * blocked (the packed size is the blocked layout's: ceil(m/16) * ceil(c/16) * kh * kw
       * blocks of 16 x 16), by more not: openwakeword_embedding's 3x1 72x32x8->72 (72 of 80
       * lanes) and 1x3 24x74x32->24 (24 of 32) */
      ecg_conv_params y = conv_p(1, 72, 32, 8, 72, 3, 1, 1, 1, 0, 1), z = conv_p(1, 24, 74, 32, 24, 1, 3, 1, 1, 0, 1);
      z.pl = z.pr = 1;
      fill_conv(&y); fill_conv(&z);
      if (ecg_rt1_conv2d_packed_floats(&y) == 5 * 5 * 3 * 256 && ecg_rt1_conv2d_packed_floats(&z) != 2 * 2 * 3 * 256) n_pass++;
      else { n_fail++; printf("FAIL padded-channel blocked choice: packed %zu (72 ch), %zu (24 ch)\n", ecg_rt1_conv2d_packed_floats(&y), ecg_rt1_conv2d_packed_floats(&z)); }
    }
#endif
    /* the cases above do run as Winograd: resnet18's 64x56x56 layer executes 36 multiply-adds
     * per tile and channel pair (16 outputs), a 1x1 conv its nominal count */
    ecg_conv_params a = conv_p(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1), b = conv_p(1, 64, 56, 56, 64, 1, 1, 1, 1, 0, 1);
    fill_conv(&a); fill_conv(&b);
    if (ecg_rt1_conv2d_macs(&a) == 36.0 * 14 * 14 * 64 * 64 && ecg_rt1_conv2d_macs(&b) == 56.0 * 56 * 64 * 64) n_pass++;
    else { n_fail++; printf("FAIL conv2d_macs: %g %g\n", ecg_rt1_conv2d_macs(&a), ecg_rt1_conv2d_macs(&b)); }
  }
  /* The blocked direct sum (conv_blocked_run in ecg_gemm.c; forced here by algo
   * ECG_RT_CONV_BLOCKED: AVX-512 builds run it, others fall back to the GEMM path): channel
   * counts not a multiple of 16 (lanes past c and m), one and two output blocks, rows of one
   * to 14 positions and rows cut into segments, strides, dilations, asymmetric pads,
   * batches, 1x1 to 7x7 kernels; the generated epilogue once per element. */
  {
    ecg_conv_params bk[] = {conv_p(1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1), conv_p(1, 512, 7, 7, 48, 3, 3, 1, 1, 1, 1),
                            conv_p(2, 20, 9, 31, 17, 3, 3, 2, 1, 1, 1), conv_p(1, 33, 5, 3, 40, 1, 1, 1, 1, 0, 1),
                            conv_p(1, 16, 23, 57, 64, 5, 3, 1, 2, 2, 1), conv_p(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1),
                            conv_p(1, 24, 12, 12, 24, 7, 7, 2, 1, 3, 1), conv_p(1, 40, 1, 29, 8, 1, 3, 1, 1, 0, 1),
                            /* 3 input channels (the RGB instances), strides 1 and 2 */
                            conv_p(1, 3, 30, 33, 20, 7, 7, 2, 1, 3, 1), conv_p(2, 3, 17, 29, 40, 3, 3, 1, 1, 1, 1)};
    bk[4].pr = 0; bk[4].pb = 3; bk[7].pl = 1; bk[7].pr = 2;
    for (size_t i = 0; i < sizeof bk / sizeof bk[0]; i++) bk[i].algo = ECG_RT_CONV_BLOCKED;
    test_convs_act(bk, sizeof bk / sizeof bk[0], threads);
    for (int i = 0; i < 3; i++) test_conv_fn(bk[i], threads);
    for (int r = 0; r < 40; r++) {
      ecg_conv_params p = conv_p(ri(1, 2), ri(1, 70), ri(1, 16), ri(1, 40), ri(1, 70), ri(1, 5), ri(1, 5), 1, 1, 0, 1);
      p.sh = ri(1, 2); p.sw = ri(1, 3); p.dh = ri(1, 2); p.dw = ri(1, 2);
      p.pt = ri(0, 2); p.pb = ri(0, 2); p.pl = ri(0, 3); p.pr = ri(0, 2);
      p.act = rand_act();
      p.algo = ECG_RT_CONV_BLOCKED;
      test_conv(p, threads);
    }
  }
  /* strided 1x1 convs without pads (ecg_gemm.c conv_sub: the stride-1 conv of the
   * subsampled input): resnet18's downsamples (stride 2, even planes, AVX-512's 16-column
   * permute), odd planes (the last column of a row is read), strides 3 and unequal ones,
   * batches, the generated epilogue once, each strategy a schedule may force; and padded
   * ones, which keep the strided GEMM packing */
  {
    ecg_conv_params sub[] = {conv_p(1, 64, 56, 56, 128, 1, 1, 2, 1, 0, 1), conv_p(2, 40, 29, 35, 24, 1, 1, 2, 1, 0, 1),
                             conv_p(1, 256, 14, 14, 512, 1, 1, 2, 1, 0, 1), conv_p(1, 17, 31, 70, 33, 1, 1, 3, 1, 0, 1),
                             conv_p(2, 24, 9, 40, 48, 1, 1, 1, 1, 0, 1),  conv_p(1, 48, 66, 3, 20, 1, 1, 2, 1, 0, 1),
                             conv_p(1, 32, 15, 15, 64, 1, 1, 2, 1, 1, 1)};
    sub[4].sw = 2;
    sub[5].sw = 1;
    test_convs_act(sub, sizeof sub / sizeof sub[0], threads);
    for (int i = 0; i < 3; i++) test_conv_fn(sub[i], threads);
    const int forced[] = {ECG_RT_CONV_GEMM, ECG_RT_CONV_GEMM_T, ECG_RT_CONV_BLOCKED};
    for (int a = 0; a < 3; a++)
      for (int i = 0; i < 2; i++) {
        ecg_conv_params q = sub[i];
        q.algo = forced[a];
        q.act = rand_act();
        test_conv(q, threads);
      }
  }
  for (int a = 0; a < 4; a++) {
    ecg_conv_params q = conv_p(1, 32, 7, 7, 64, 3, 3, 1, 1, 1, 1);
    q.act = rand_act();
    test_conv(q, threads);
  }
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    fixed[i].act = rand_act();
    test_conv(fixed[i], threads);
  }
  for (int r = 0; r < 120; r++) {
    int kind = r % 4, G;
    ecg_conv_params p;
    memset(&p, 0, sizeof p);
    p.n = ri(1, 2);
    if (kind == 0) { G = 1; p.c = ri(1, 40); p.m = ri(1, 50); }
    else if (kind == 1) { G = ri(2, 4); p.c = G * ri(1, 6); p.m = G * ri(1, 8); }
    else { G = ri(2, 24); p.c = G; p.m = G * ri(1, 3); if (kind == 3) p.m = G; }
    p.group = G;
    int oned = ri(0, 7) == 0;
    p.h = oned ? 1 : ri(1, 20); p.w = ri(1, 40);
    p.kh = oned ? 1 : ri(1, 5); p.kw = ri(1, 5);
    p.sh = oned ? 1 : ri(1, 2); p.sw = ri(1, 2); p.dh = oned ? 1 : ri(1, 2); p.dw = ri(1, 2);
    p.pt = oned ? 0 : ri(0, 2); p.pb = oned ? 0 : ri(0, 2); p.pl = ri(0, 3); p.pr = ri(0, 2);
    p.act = rand_act();
    test_conv(p, threads);
  }
  for (int r = 0; r < 30; r++) {
    ecg_conv_params p;
    memset(&p, 0, sizeof p);
    int G = ri(0, 2) ? 1 : ri(2, 3);
    p.n = ri(1, 2); p.group = G; p.c = G * ri(1, 6); p.m = G * ri(1, 5);
    p.h = ri(1, 9); p.w = ri(1, 11); p.kh = ri(1, 4); p.kw = ri(1, 4);
    p.sh = ri(1, 3); p.sw = ri(1, 3); p.dh = ri(1, 2); p.dw = ri(1, 2);
    p.pt = ri(0, 1); p.pl = ri(0, 2); p.pb = ri(0, 1); p.pr = ri(0, 1);
    p.act = ri(0, 1) ? rand_act() : (ecg_act){ECG_ACT_NONE, 0, 0};
    test_convt(p);
  }
  for (int r = 0; r < 60; r++) {
    ecg_pool_params p;
    memset(&p, 0, sizeof p);
    p.n = ri(1, 2); p.c = ri(1, 5); p.h = ri(1, 30); p.w = ri(1, 40);
    p.kh = ri(1, 4); p.kw = ri(1, 4); p.sh = ri(1, 3); p.sw = ri(1, 3); p.dh = ri(1, 2); p.dw = ri(1, 2);
    p.pt = ri(0, p.kh - 1); p.pl = ri(0, p.kw - 1); p.pb = ri(0, p.kh - 1); p.pr = ri(0, p.kw - 1);
    p.count_include_pad = ri(0, 1);
    test_pool(p, r & 1);
  }
  for (int r = 0; r < 40; r++) { /* max pools in registers (ecg_pool.c maxpool_row_reg): wide windows up to its
                                  * kw limit of 17, columns from the second and third vectors, several
                                  * output vectors per row, pads and partial windows on both sides */
    ecg_pool_params p;
    memset(&p, 0, sizeof p);
    p.n = 1; p.c = ri(1, 3); p.h = ri(1, 12); p.w = ri(1, 70);
    p.kh = ri(1, 3); p.kw = r < 8 ? 17 : ri(1, 9); p.sh = ri(1, 2); p.sw = ri(1, 2); p.dh = 1; p.dw = 1;
    p.pt = ri(0, p.kh - 1); p.pl = ri(0, p.kw - 1); p.pb = ri(0, p.kh - 1); p.pr = ri(0, p.kw - 1);
    test_pool(p, 1);
  }
  for (int r = 0; r < 40; r++) { /* 3-row stride-2 windows (ecg_pool.c maxpool_plane_body's shared-row path):
                                  * planes of 1-12 rows, top and bottom pads (ceil mode's partial last
                                  * window), batches and several channels (the plane loop) */
    ecg_pool_params p;
    memset(&p, 0, sizeof p);
    p.n = ri(1, 2); p.c = ri(1, 3); p.h = ri(1, 12); p.w = ri(1, 70);
    p.kh = 3; p.kw = ri(1, 5); p.sh = 2; p.sw = ri(1, 2); p.dh = 1; p.dw = 1;
    p.pt = ri(0, 2); p.pl = ri(0, p.kw - 1); p.pb = ri(0, 2); p.pr = ri(0, p.kw - 1);
    test_pool(p, 1);
  }
  /* Conv -> MaxPool as one kernel: squeezenet1_1's first layer shape (3x3 s2 conv, 3x3 s2
   * pool, ceil_mode) smaller, resnet18's (pool pads 1), a pool window of 2 at stride 3
   * (conv rows no window reads), stride-1 pools, batches, 16 channels split by pooled rows
   * at 3 threads, built-in activations; 8 input channels (no direct kernel: conv into the
   * scratch, then the pool); RGB 7x7 and 5x5 convs (the blocked conv's rows: resnet18's stem
   * and pool smaller, 20 channels padded to two blocks, batches) */
  for (int th = 1; th <= 3; th++) {
    ecg_conv_params c1 = conv_p(1, 3, 60, 71, 20, 3, 3, 2, 1, 0, 1), c2 = conv_p(2, 3, 40, 50, 16, 3, 3, 2, 1, 1, 1);
    ecg_conv_params c3 = conv_p(1, 4, 30, 64, 24, 3, 3, 1, 1, 1, 1), c4 = conv_p(1, 8, 20, 20, 16, 3, 3, 1, 1, 1, 1);
    c1.act = rand_act();
    c3.act = (ecg_act){ECG_ACT_RELU, 0, 0, NULL, NULL};
    test_conv_pool(c1, pool_p(3, 2, 0), 1, th);
    test_conv_pool(c2, pool_p(3, 2, 1), 0, th);
    test_conv_pool(c3, pool_p(2, 3, 0), 0, th);
    test_conv_pool(c3, pool_p(3, 1, 1), 0, th);
    test_conv_pool(c4, pool_p(2, 2, 0), 0, th);
    ecg_pool_params tall = pool_p(2, 1, 0); /* a window of 66 rows: past the fused kernel's 64 */
    tall.kh = 66;
    test_conv_pool(conv_p(1, 3, 140, 40, 16, 3, 3, 2, 1, 1, 1), tall, 0, th);
    ecg_conv_params c5 = conv_p(1, 3, 64, 58, 64, 7, 7, 2, 1, 3, 1), c6 = conv_p(2, 3, 41, 45, 20, 5, 5, 1, 1, 2, 1);
    c5.act = (ecg_act){ECG_ACT_RELU, 0, 0, NULL, NULL};
    c6.act = rand_act();
    test_conv_pool(c5, pool_p(3, 2, 1), 0, th);
    test_conv_pool(c6, pool_p(2, 2, 0), 1, th);
    test_conv_pool(c6, pool_p(3, 1, 1), 0, th);
  }
  set_threads(threads);
  for (int k = 0; k <= 6; k++) { /* activations over a wide range, vector body and tail */
    ecg_act a = {(ecg_act_kind)k, 0, 0};
    if (k == ECG_ACT_CLIP) { a.a = -0.5f; a.b = 0.7f; }
    if (k == ECG_ACT_LEAKY) a.a = 0.1f;
    int n = 203;
    float *v = malloc(n * sizeof(float));
    double *want = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
      v[i] = i < 6 ? (float[]){-100.f, 100.f, -88.5f, 89.f, 0.f, -3.f}[i] : (float)((i - 100) * 0.21);
      want[i] = act_ref(a, v[i]);
    }
    ecg_rt1_act_apply(a, v, n);
    char what[32];
    snprintf(what, sizeof what, "act %d", k);
    check(what, v, want, NULL, n);
    free(v); free(want);
  }
  test_global(7, 49);
  test_global(100, 3);
  test_global(3, 3136);
  test_team();
  test_team_cap();
  /* squeeze-and-excitation chains: efficientnet_b0's shapes (SiLU, Sigmoid), odd sizes,
   * batches, the scales alone, 1 and 2 threads (last: the random cases above keep their draws) */
  {
    ecg_act silu = {ECG_ACT_SILU, 0, 0, 0, 0}, sig = {ECG_ACT_SIGMOID, 0, 0, 0, 0}, relu = {ECG_ACT_RELU, 0, 0, 0, 0};
    ecg_act hsw = {ECG_ACT_HARDSWISH, 0, 0, 0, 0};
    for (int th = 1; th <= 2; th++) {
      test_se(1, 32, 112, 112, 8, 32, silu, sig, 1, 1, th);
      test_se(1, 96, 56, 56, 4, 96, silu, sig, 1, 1, th);
      test_se(1, 1152, 7, 7, 48, 1152, silu, sig, 1, 1, th);
      test_se(2, 37, 5, 3, 9, 37, relu, hsw, 1, 1, th);
      test_se(3, 13, 1, 1, 17, 13, silu, sig, 1, 1, th);
      test_se(2, 40, 6, 7, 10, 24, relu, sig, 0, 1, th);
      /* the tail (the dnnfusion plan's fc2 + Sigmoid + scale block) */
      test_se(1, 144, 56, 56, 6, 144, silu, sig, 1, 0, th);
      test_se(2, 29, 9, 4, 5, 29, silu, relu, 1, 0, th);
    }
  }
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
