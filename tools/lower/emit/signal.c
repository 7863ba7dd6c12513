/* Emitters for sampling and signal-processing operators: GridSample and RoiAlign
 * (One-to-Many gathers at coordinates read from data: every index is clamped or
 * tested before a load), the window generators and MelWeightMatrix (One-to-Many),
 * DFT and STFT (Many-to-Many; direct O(N^2) transforms in double with a per-call
 * twiddle table in ctx->scratch).
 *
 * Scalar operands that the shape functions could not read at lowering time (window
 * size, dft_length, frame_step, frame_length, mel parameters) are read in the kernel;
 * the output shape is the static one the graph declares, and the kernel never writes
 * or reads outside it whatever the run-time values are. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"


/* Tensor id of input i, or -1 when omitted. */
static int in_id(const ecg_node *n, int i) { return (size_t)i < n->n_inputs ? n->inputs[i] : -1; }

/* Dtype of tensor id. */
static int dtype_of(const ecg_lower *L, int id) { return L->g->tensors[id]->dtype; }

/* float16/bfloat16 anywhere on the node: refused (no C type for them in these kernels). */
static int any_half(ecg_lower *L, const ecg_node *n) {
  for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0 && lw_half(L, n->inputs[k])) return 1;
  for (size_t k = 0; k < n->n_outputs; k++) if (n->outputs[k] >= 0 && lw_half(L, n->outputs[k])) return 1;
  return 0;
}

/* C expression reading scalar input i as int64 (a literal when it is a constant). */
static const char *int_operand(ecg_lower *L, const ecg_node *n, int i, char *buf, size_t nb) {
  const ecg_tensor *t = L->g->tensors[n->inputs[i]];
  if (t->is_const && ecg_tensor_numel(t) == 1) snprintf(buf, nb, "INT64_C(%lld)", (long long)ecg_const_i64(t, 0));
  else snprintf(buf, nb, "((int64_t)%s[0])", lw_ptr(L, n->inputs[i]));
  return buf;
}

/* Emit into L->code the fill of double *tw with cos/sin(2 pi m / N) for m < N when
 * N <= nmax (the scratch is sized for nmax), and the flag `use_tw`. */
static void emit_twiddles(ecg_lower *L, int64_t nmax) {
  char sz[64];
  snprintf(sz, sizeof sz, "%lld", (long long)(4 * (nmax > 0 ? nmax : 1)));
  lw_need_scratch(L, sz);
  sb_printf(&L->code, "    double *tw = (double *)ctx->scratch;\n    int use_tw = N <= INT64_C(%lld);\n", (long long)nmax);
  sb_printf(&L->code, "    if (use_tw) for (int64_t m = 0; m < N; m++) { double a = 6.283185307179586 * (double)m / (double)N; tw[2 * m] = cos(a); tw[2 * m + 1] = sin(a); }\n");
}

/* Emit the inner DFT accumulation over t < `count` (a C expression) of samples xr/xi
 * (C expressions of t) into re/im for bin k: forward e^{-i...} or inverse e^{+i...}. */
static void emit_dft_inner(ecg_lower *L, const char *ind, const char *count, const char *xr, const char *xi, int inverse) {
  sbuf *c = &L->code;
  sb_printf(c, "%sdouble re = 0, im = 0;\n%sint64_t m = 0, kk = k %% N;\n", ind, ind);
  sb_printf(c, "%sfor (int64_t t = 0; t < %s; t++) {\n", ind, count);
  sb_printf(c, "%s  double cs, sn;\n%s  if (use_tw) { cs = tw[2 * m]; sn = tw[2 * m + 1]; } else { double a = 6.283185307179586 * (double)m / (double)N; cs = cos(a); sn = sin(a); }\n",
            ind, ind);
  sb_printf(c, "%s  double xr = %s, xi = %s;\n", ind, xr, xi);
  if (inverse) sb_printf(c, "%s  re += xr * cs - xi * sn; im += xi * cs + xr * sn;\n", ind);
  else sb_printf(c, "%s  re += xr * cs + xi * sn; im += xi * cs - xr * sn;\n", ind);
  sb_printf(c, "%s  m += kk; if (m >= N) m -= N;\n%s}\n", ind, ind);
}

/* ---------------------------------------------------------------- windows */

/** HannWindow / HammingWindow / BlackmanWindow -> y[len]: w[i] from the run-time size N
 *  (periodic: period N, symmetric: N - 1; a symmetric window of size 1 is NaN, 0/0, as
 *  in the ONNX reference), cast to the output dtype. */
int emit_window(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t od[ECG_MAX_RANK];
  char nb[160];
  if (any_half(L, n)) return lw_node_err(L, n, e, "float16/bfloat16 output is not supported");
  lw_dims(L, n->outputs[0], od);
  ecg_op_id id = lw_op(n);
  const char *T = lw_ctype(L, n->outputs[0]);
  const char *f = id == ECG_OP_HammingWindow ? "0.5434782608695652 - 0.45652173913043476 * cos(a)"
                  : id == ECG_OP_BlackmanWindow ? "0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a)"
                                                : "0.5 - 0.5 * cos(a)";
  int periodic = ecg_attr_i(n, "periodic", 1) != 0;
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    %s *y = %s;\n    int64_t N = %s;\n", T, lw_ptr(L, n->outputs[0]), int_operand(L, n, 0, nb, sizeof nb));
  sb_printf(c, "    double den = (double)(N%s);\n", periodic ? "" : " - 1");
  sb_printf(c, "    for (int64_t i = 0; i < %lld; i++) {\n      double a = 6.283185307179586 * (double)i / den;\n", (long long)od[0]);
  sb_printf(c, "      y[i] = (%s)(%s);\n    }\n  }\n", T, f);
  return ECG_OK;
}

/* ---------------------------------------------------------------- MelWeightMatrix */

/** MelWeightMatrix -> y[S, M]: triangular filters between M + 2 mel-spaced band edges
 *  (Hz -> DFT bin floor((dft_length + 1) * hz / sample_rate)); operands read at run
 *  time, writes restricted to the static [S, M]. */
int emit_mel_weight_matrix(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t od[ECG_MAX_RANK];
  char b0[160], b1[160], b2[160];
  if (any_half(L, n)) return lw_node_err(L, n, e, "float16/bfloat16 is not supported");
  lw_dims(L, n->outputs[0], od);
  int64_t S = od[0], M = od[1];
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    int64_t nmel = %s, dftl = %s, rate = %s;\n", int_operand(L, n, 0, b0, sizeof b0), int_operand(L, n, 1, b1, sizeof b1),
            int_operand(L, n, 2, b2, sizeof b2));
  sb_printf(c, "    double lo = (double)%s[0], hi = (double)%s[0];\n", lw_ptr(L, n->inputs[3]), lw_ptr(L, n->inputs[4]));
  sb_printf(c, "    for (int64_t j = 0; j < %lld; j++) y[j] = (%s)0;\n", (long long)(S * M), T);
  sb_printf(c, "    double lm = 2595 * log10(1 + lo / 700), hm = 2595 * log10(1 + hi / 700), step = (hm - lm) / ((double)nmel + 2);\n");
  sb_printf(c, "    for (int64_t i = 0; i < nmel && i < %lld; i++) {\n      int64_t f[3];\n", (long long)M);
  sb_printf(c, "      for (int k = 0; k < 3; k++) {\n"
               "        double hz = 700 * (pow(10, ((double)(i + k) * step + lm) / 2595) - 1), b = floor(((double)dftl + 1) * hz / (double)rate);\n"
               "        f[k] = b != b ? 0 : b < -1e15 ? (int64_t)-1e15 : b > 1e15 ? (int64_t)1e15 : (int64_t)b;\n      }\n");
  sb_printf(c, "      if (f[1] == f[0]) { if (f[1] >= 0 && f[1] < %lld) y[f[1] * %lld + i] = (%s)1; }\n", (long long)S, (long long)M, T);
  sb_printf(c, "      else for (int64_t j = f[0] < 0 ? 0 : f[0]; j <= f[1] && j < %lld; j++) y[j * %lld + i] = (%s)((double)(j - f[0]) / (double)(f[1] - f[0]));\n",
            (long long)S, (long long)M, T);
  sb_printf(c, "      for (int64_t j = f[1] < 0 ? 0 : f[1]; j < f[2] && j < %lld; j++) y[j * %lld + i] = (%s)((double)(f[2] - j) / (double)(f[2] - f[1]));\n",
            (long long)S, (long long)M, T);
  sb_printf(c, "    }\n  }\n");
  return ECG_OK;
}

/* ---------------------------------------------------------------- DFT */

/** DFT along one axis of x [..., n, ..., 1|2] -> y [..., K, ..., 2]: y[k] = sum_{t <
 *  min(n, N)} x[t] e^{-+2 pi i k t / N} (inverse: + and / N), N = dft_length (read at
 *  run time when not a constant), K = N or N/2+1 (onesided). */
int emit_dft(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK];
  char nb[160];
  if (any_half(L, n)) return lw_node_err(L, n, e, "float16/bfloat16 is not supported");
  int r = lw_dims(L, n->inputs[0], d);
  lw_dims(L, n->outputs[0], od);
  if (!ecg_dtype_is_float(dtype_of(L, n->inputs[0]))) return lw_node_err(L, n, e, "only float input is supported");
  int64_t a = ecg_attr_i(n, "axis", 1);
  if (n->opset >= 20) {
    int ai = in_id(n, 2);
    a = -2;
    if (ai >= 0) {
      const ecg_tensor *t = L->g->tensors[ai];
      if (!t->is_const || ecg_tensor_numel(t) != 1) return lw_node_err(L, n, e, "a non-constant axis input is not supported");
      a = ecg_const_i64(t, 0);
    }
  }
  int axis = lw_axis(a, r);
  if (axis < 0 || axis == r - 1) return lw_node_err(L, n, e, "axis out of range");
  int inverse = ecg_attr_i(n, "inverse", 0) != 0, onesided = ecg_attr_i(n, "onesided", 0) != 0;
  int64_t C = d[r - 1], nin = d[axis], K = od[axis], outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= d[i];
  for (int i = axis + 1; i < r - 1; i++) inner *= d[i];
  int has_len = in_id(n, 1) >= 0;
  int64_t nmax = !has_len ? nin : onesided ? 2 * K : K;
  const ecg_tensor *lt = has_len ? L->g->tensors[in_id(n, 1)] : NULL;
  if (lt && lt->is_const && ecg_tensor_numel(lt) == 1) nmax = ecg_const_i64(lt, 0);
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", lw_ctype(L, n->inputs[0]), lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %s *y = %s;\n    int64_t N = %s;\n", T, lw_ptr(L, n->outputs[0]),
            has_len ? int_operand(L, n, 1, nb, sizeof nb) : "0");
  if (!has_len) sb_printf(c, "    N = INT64_C(%lld);\n", (long long)nin);
  sb_printf(c, "    if (N < 1) { for (int64_t j = 0; j < %lld; j++) y[j] = (%s)0; } else {\n", (long long)(outer * K * inner * 2), T);
  emit_twiddles(L, nmax);
  sb_printf(c, "    int64_t nn = N < %lld ? N : %lld;\n", (long long)nin, (long long)nin);
  sb_printf(c, "    #pragma omp parallel for if(%lld > 65536)\n", (long long)(outer * inner * K * nin));
  sb_printf(c, "    for (int64_t l = 0; l < %lld; l++) {\n", (long long)(outer * inner));
  sb_printf(c, "      int64_t o = l / %lld, i = l %% %lld;\n", (long long)inner, (long long)inner);
  sb_printf(c, "      const %s *xb = x + (o * %lld + i) * %lld;\n      %s *yb = y + (o * %lld + i) * 2;\n", lw_ctype(L, n->inputs[0]),
            (long long)(nin * inner), (long long)C, T, (long long)(K * inner));
  sb_printf(c, "      for (int64_t k = 0; k < %lld; k++) {\n", (long long)K);
  char xr[96], xi[96];
  snprintf(xr, sizeof xr, "(double)xb[t * %lld]", (long long)(inner * C));
  if (C == 2) snprintf(xi, sizeof xi, "(double)xb[t * %lld + 1]", (long long)(inner * C));
  else snprintf(xi, sizeof xi, "0.0");
  emit_dft_inner(L, "        ", "nn", xr, xi, inverse);
  if (inverse) sb_printf(c, "        re /= (double)N; im /= (double)N;\n");
  sb_printf(c, "        yb[k * %lld] = (%s)re; yb[k * %lld + 1] = (%s)im;\n", (long long)(2 * inner), T, (long long)(2 * inner), T);
  sb_printf(c, "      }\n    }\n    }\n  }\n");
  return ECG_OK;
}

/* ---------------------------------------------------------------- STFT */

/** STFT(signal [B, T, 1|2], frame_step, window? [W], frame_length?) -> y [B, F, K, 2]:
 *  frame f starts at f * frame_step, takes the window's W samples (zero past the
 *  signal's end) weighted by the window, and its first frame_length of them (zero
 *  padded) go through a DFT of length frame_length; frame_step and frame_length are
 *  read at run time when they are not constants. */
int emit_stft(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK], W = -1;
  char b1[160], b3[160];
  if (any_half(L, n)) return lw_node_err(L, n, e, "float16/bfloat16 is not supported");
  lw_dims(L, n->inputs[0], d);
  lw_dims(L, n->outputs[0], od);
  if (!ecg_dtype_is_float(dtype_of(L, n->inputs[0]))) return lw_node_err(L, n, e, "only float signals are supported");
  int wi = in_id(n, 2), fi = in_id(n, 3), onesided = ecg_attr_i(n, "onesided", 1) != 0;
  if (wi >= 0) {
    int64_t wd[ECG_MAX_RANK];
    lw_dims(L, wi, wd);
    W = wd[0];
  }
  int64_t B = d[0], Tn = d[1], C = d[2], F = od[1], K = od[2];
  int64_t nmax = onesided ? 2 * K : K;
  const char *T = lw_ctype(L, n->outputs[0]), *X = lw_ctype(L, n->inputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n    %s *y = %s;\n", X, lw_ptr(L, n->inputs[0]), T, lw_ptr(L, n->outputs[0]));
  if (wi >= 0) sb_printf(c, "    const %s *w = %s;\n", lw_ctype(L, wi), lw_ptr(L, wi));
  sb_printf(c, "    int64_t step = %s;\n", int_operand(L, n, 1, b1, sizeof b1));
  if (fi >= 0) sb_printf(c, "    int64_t N = %s;\n", int_operand(L, n, 3, b3, sizeof b3));
  else sb_printf(c, "    int64_t N = INT64_C(%lld);\n", (long long)(wi >= 0 ? W : Tn));
  sb_printf(c, "    int64_t ws = %s;\n", wi >= 0 ? "INT64_C(0)" : "N");
  if (wi >= 0) sb_printf(c, "    ws = INT64_C(%lld);\n", (long long)W);
  sb_printf(c, "    if (N < 1 || step < 1) { for (int64_t j = 0; j < %lld; j++) y[j] = (%s)0; } else {\n", (long long)(B * F * K * 2), T);
  emit_twiddles(L, nmax);
  sb_printf(c, "    int64_t nn = ws < N ? ws : N;\n");
  sb_printf(c, "    #pragma omp parallel for if(%lld > 65536)\n", (long long)(B * F * K) * (W > 0 ? W : 2 * K));
  sb_printf(c, "    for (int64_t l = 0; l < %lld; l++) {\n", (long long)(B * F));
  sb_printf(c, "      int64_t b = l / %lld, f = l %% %lld;\n", (long long)F, (long long)F);
  sb_printf(c, "      int64_t start = step > %lld ? (f ? %lld : 0) : f * step, avail = %lld - start;\n", (long long)Tn, (long long)Tn, (long long)Tn);
  sb_printf(c, "      int64_t nt = nn < avail ? nn : avail;\n");
  sb_printf(c, "      const %s *xb = x + (b * %lld + start) * %lld;\n      %s *yb = y + l * %lld;\n", X, (long long)Tn, (long long)C, T, (long long)(2 * K));
  sb_printf(c, "      for (int64_t k = 0; k < %lld; k++) {\n", (long long)K);
  char xr[128], xi[128];
  const char *wv = wi >= 0 ? "(double)w[t]" : "1.0";
  snprintf(xr, sizeof xr, "%s * (double)xb[t * %lld]", wv, (long long)C);
  if (C == 2) snprintf(xi, sizeof xi, "%s * (double)xb[t * %lld + 1]", wv, (long long)C);
  else snprintf(xi, sizeof xi, "0.0");
  emit_dft_inner(L, "        ", "nt", xr, xi, 0); /* the frame, cut at the signal's end */
  sb_printf(c, "        yb[2 * k] = (%s)re; yb[2 * k + 1] = (%s)im;\n", T, T);
  sb_printf(c, "      }\n    }\n    }\n  }\n");
  return ECG_OK;
}

/* ---------------------------------------------------------------- GridSample */

/** GridSample (4-D): Y[n,c,h,w] = X[n,c] interpolated (nearest / bilinear / bicubic,
 *  Keys a = -0.75) at grid[n,h,w] = (x, y) in [-1, 1] (align_corners maps -1/1 to the
 *  corner pixels' centres, else to their outer edges); padding zeros / border /
 *  reflection for positions and taps outside the image. */
int emit_grid_sample(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK];
  char mode[32], pad[32];
  if (any_half(L, n)) return lw_node_err(L, n, e, "float16/bfloat16 is not supported");
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  if (r != 4) return lw_node_err(L, n, e, "only 4-D input (2 spatial dims) is supported");
  ecg_attr_s(n, "mode", "bilinear", mode, sizeof mode);
  ecg_attr_s(n, "padding_mode", "zeros", pad, sizeof pad);
  int m = !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? 1 : !strcmp(mode, "bicubic") || !strcmp(mode, "cubic") ? 2 : -1;
  int p = !strcmp(pad, "zeros") ? 0 : !strcmp(pad, "border") ? 1 : !strcmp(pad, "reflection") ? 2 : -1;
  if (m < 0) return lw_node_err(L, n, e, "mode is not supported (nearest, bilinear, bicubic)");
  if (p < 0) return lw_node_err(L, n, e, "padding_mode is not supported (zeros, border, reflection)");
  if (!ecg_dtype_is_float(dtype_of(L, n->inputs[0])) && m != 0) return lw_node_err(L, n, e, "integer X is supported only in nearest mode");
  int ac = ecg_attr_i(n, "align_corners", 0) != 0;
  int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], Ho = od[2], Wo = od[3];
  if (H == 0 || W == 0) { /* no pixel to sample: every padding mode gives 0 */
    sb_printf(&L->code, "  { %s *Y = %s; for (int64_t j = 0; j < %lld; j++) Y[j] = 0; }\n", lw_ctype(L, n->outputs[0]), lw_ptr(L, n->outputs[0]),
              (long long)(N * C * Ho * Wo));
    return ECG_OK;
  }
  int u = lw_uid(L);
  const char *T = lw_ctype(L, n->outputs[0]), *G = lw_ctype(L, n->inputs[1]);
  sbuf *dc = &L->decls;
  /* helpers: reflection into [lo, hi], a safe floor to int64, a padded pixel fetch */
  sb_printf(dc, "static inline double gs%d_reflect(double x, double lo, double hi) {\n"
                "  double rng = hi - lo;\n  if (!(rng > 0)) return lo;\n"
                "  if (x < lo) { double dx = lo - x, k = floor(dx / rng), r = dx - k * rng; return fmod(k, 2.0) == 0 ? lo + r : hi - r; }\n"
                "  if (x > hi) { double dx = x - hi, k = floor(dx / rng), r = dx - k * rng; return fmod(k, 2.0) == 0 ? hi - r : lo + r; }\n"
                "  return x;\n}\n", u);
  sb_printf(dc, "static inline int64_t gs%d_floor(double v) { return v >= -1e9 && v <= 1e9 ? (int64_t)floor(v) : v > 0 ? INT64_C(1000000000) : INT64_C(-1000000000); }\n", u);
  sb_printf(dc, "static inline double gs%d_pix(const %s *p, int64_t iy, int64_t ix) {\n", u, lw_ctype(L, n->inputs[0]));
  if (p == 0) sb_printf(dc, "  if (iy < 0 || iy >= %lld || ix < 0 || ix >= %lld) return 0;\n", (long long)H, (long long)W);
  else {
    if (p == 2)
      sb_printf(dc, "  iy = (int64_t)gs%d_reflect((double)iy, %s, %.17g); ix = (int64_t)gs%d_reflect((double)ix, %s, %.17g);\n", u, ac ? "0.0" : "-0.5",
                ac ? (double)(H - 1) : H - 0.5, u, ac ? "0.0" : "-0.5", ac ? (double)(W - 1) : W - 0.5);
    sb_printf(dc, "  iy = iy < 0 ? 0 : iy > %lld ? %lld : iy; ix = ix < 0 ? 0 : ix > %lld ? %lld : ix;\n", (long long)(H - 1), (long long)(H - 1),
              (long long)(W - 1), (long long)(W - 1));
  }
  sb_printf(dc, "  return (double)p[iy * %lld + ix];\n}\n", (long long)W);
  if (m == 2)
    sb_printf(dc, "static inline void gs%d_cubic(double t, double *c) {\n"
                  "  const double A = -0.75;\n"
                  "  c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;\n"
                  "  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;\n"
                  "  c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;\n"
                  "  c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;\n}\n", u);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *X = %s;\n    const %s *grid = %s;\n    %s *Y = %s;\n", lw_ctype(L, n->inputs[0]), lw_ptr(L, n->inputs[0]), G,
            lw_ptr(L, n->inputs[1]), T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 16384)\n", (long long)(N * Ho * Wo * C));
  sb_printf(c, "    for (int64_t q = 0; q < %lld; q++) {\n", (long long)(N * Ho * Wo));
  sb_printf(c, "      int64_t nb = q / %lld, pos = q %% %lld;\n", (long long)(Ho * Wo), (long long)(Ho * Wo));
  /* denormalise: x along W, y along H */
  if (ac)
    sb_printf(c, "      double x = ((double)grid[2 * q] + 1) / 2 * %lld, y = ((double)grid[2 * q + 1] + 1) / 2 * %lld;\n", (long long)(W - 1), (long long)(H - 1));
  else
    sb_printf(c, "      double x = (((double)grid[2 * q] + 1) * %lld - 1) / 2, y = (((double)grid[2 * q + 1] + 1) * %lld - 1) / 2;\n", (long long)W, (long long)H);
  if (m == 0) sb_printf(c, "      x = nearbyint(x); y = nearbyint(y);\n");
  double xlo = ac ? 0 : -0.5, xhi = ac ? (double)(W - 1) : W - 0.5, ylo = ac ? 0 : -0.5, yhi = ac ? (double)(H - 1) : H - 0.5;
  if (p == 1)
    sb_printf(c, "      if (x < %.17g || x > %.17g) x = x < 0 ? 0 : x > %lld ? %lld : x;\n      if (y < %.17g || y > %.17g) y = y < 0 ? 0 : y > %lld ? %lld : y;\n", xlo,
              xhi, (long long)(W - 1), (long long)(W - 1), ylo, yhi, (long long)(H - 1), (long long)(H - 1));
  if (p == 2) sb_printf(c, "      x = gs%d_reflect(x, %.17g, %.17g); y = gs%d_reflect(y, %.17g, %.17g);\n", u, xlo, xhi, u, ylo, yhi);
  if (m == 0) {
    sb_printf(c, "      int64_t iy = gs%d_floor(y), ix = gs%d_floor(x);\n", u, u);
  } else if (m == 1) {
    sb_printf(c, "      int64_t x0 = gs%d_floor(x), y0 = gs%d_floor(y);\n      double fx = x - floor(x), fy = y - floor(y);\n", u, u);
    sb_printf(c, "      double cx[2] = {1 - fx, fx}, cy[2] = {1 - fy, fy};\n");
  } else {
    sb_printf(c, "      int64_t x0 = gs%d_floor(x) - 1, y0 = gs%d_floor(y) - 1;\n      double cx[4], cy[4];\n", u, u);
    sb_printf(c, "      gs%d_cubic(x - floor(x), cx); gs%d_cubic(y - floor(y), cy);\n", u, u);
  }
  sb_printf(c, "      for (int64_t ch = 0; ch < %lld; ch++) {\n", (long long)C);
  sb_printf(c, "        const %s *pl = X + (nb * %lld + ch) * %lld;\n", lw_ctype(L, n->inputs[0]), (long long)C, (long long)(H * W));
  if (m == 0) sb_printf(c, "        double v = gs%d_pix(pl, iy, ix);\n", u);
  else {
    int k = m == 1 ? 2 : 4;
    sb_printf(c, "        double v = 0;\n        for (int a = 0; a < %d; a++) {\n          double row = 0;\n", k);
    sb_printf(c, "          for (int b = 0; b < %d; b++) row += cx[b] * gs%d_pix(pl, y0 + a, x0 + b);\n", k, u);
    sb_printf(c, "          v += cy[a] * row;\n        }\n");
  }
  sb_printf(c, "        Y[(nb * %lld + ch) * %lld + pos] = (%s)v;\n      }\n    }\n  }\n", (long long)C, (long long)(Ho * Wo), T);
  return ECG_OK;
}

/* ---------------------------------------------------------------- RoiAlign */

/** RoiAlign: Y[r,c,ph,pw] = average (or max of weighted taps) over a grid of bilinear
 *  samples in bin (ph, pw) of RoI r (x1, y1, x2, y2 scaled by spatial_scale, shifted
 *  by -0.5 in half_pixel mode) of X[batch_indices[r], c]; samples outside [-1, H] x
 *  [-1, W] count as 0, a batch index outside [0, N) gives zeros. */
int emit_roi_align(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK];
  char mode[16], ctm[32];
  if (any_half(L, n)) return lw_node_err(L, n, e, "float16/bfloat16 is not supported");
  lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  if (!ecg_dtype_is_float(dtype_of(L, n->inputs[0])) || !ecg_dtype_is_float(dtype_of(L, n->inputs[1])))
    return lw_node_err(L, n, e, "only float X and rois are supported");
  ecg_attr_s(n, "mode", "avg", mode, sizeof mode);
  ecg_attr_s(n, "coordinate_transformation_mode", n->opset > 0 && n->opset < 16 ? "output_half_pixel" : "half_pixel", ctm, sizeof ctm);
  int mx = !strcmp(mode, "max");
  if (!mx && strcmp(mode, "avg")) return lw_node_err(L, n, e, "mode is not supported (avg, max)");
  int hp = !strcmp(ctm, "half_pixel");
  if (!hp && strcmp(ctm, "output_half_pixel")) return lw_node_err(L, n, e, "coordinate_transformation_mode is not supported");
  int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], R = od[0], PH = od[2], PW = od[3];
  if (H == 0 || W == 0) return lw_node_err(L, n, e, "an empty feature map is not supported");
  int64_t sr = ecg_attr_i(n, "sampling_ratio", 0);
  double scale = ecg_attr_f(n, "spatial_scale", 1.0f);
  const char *T = lw_ctype(L, n->outputs[0]), *X = lw_ctype(L, n->inputs[0]);
  int u = lw_uid(L);
  /* [*i0, *i1): the samples i < g of positions base + (i + 0.5) * stp that may lie in
   * [-1, lim] (a superset, widened by one; the kernel still tests each) */
  sb_printf(&L->decls, "static inline void roi%d_span(double base, double stp, int64_t lim, int64_t g, int64_t *i0, int64_t *i1) {\n"
                       "  *i0 = 0; *i1 = g;\n"
                       "  if (!(stp != 0 && fabs(stp) < 1e300 && base == base && fabs(base) < 1e300)) return;\n"
                       "  double t1 = (-1.0 - base) / stp - 0.5, t2 = ((double)lim - base) / stp - 0.5;\n"
                       "  double lo = (t1 < t2 ? t1 : t2) - 1, hi = (t1 < t2 ? t2 : t1) + 1;\n"
                       "  if (lo > 0) *i0 = lo < (double)g ? (int64_t)lo : g;\n"
                       "  if (hi < (double)g) *i1 = hi >= 0 ? (int64_t)hi + 1 : 0;\n"
                       "  if (*i1 < *i0) *i1 = *i0;\n}\n", u);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *X = %s;\n    const %s *rois = %s;\n", X, lw_ptr(L, n->inputs[0]), lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    const %s *bi = %s;\n    %s *Y = %s;\n", lw_ctype(L, n->inputs[2]), lw_ptr(L, n->inputs[2]), T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 4096)\n", (long long)(R * C * PH * PW));
  sb_printf(c, "    for (int64_t q = 0; q < %lld; q++) {\n", (long long)(R * C));
  sb_printf(c, "      int64_t r = q / %lld, ch = q %% %lld, b = (int64_t)bi[r];\n", (long long)C, (long long)C);
  sb_printf(c, "      %s *yo = Y + q * %lld;\n", T, (long long)(PH * PW));
  sb_printf(c, "      if (b < 0 || b >= %lld) { for (int64_t j = 0; j < %lld; j++) yo[j] = (%s)0; continue; }\n", (long long)N, (long long)(PH * PW), T);
  sb_printf(c, "      const %s *pl = X + (b * %lld + ch) * %lld;\n", X, (long long)C, (long long)(H * W));
  sb_printf(c, "      double off = %s, sx = (double)rois[4 * r] * %.17g - off, sy = (double)rois[4 * r + 1] * %.17g - off;\n", hp ? "0.5" : "0.0", scale, scale);
  sb_printf(c, "      double rw = (double)rois[4 * r + 2] * %.17g - off - sx, rh = (double)rois[4 * r + 3] * %.17g - off - sy;\n", scale, scale);
  if (!hp) sb_printf(c, "      if (rw < 1) rw = 1;\n      if (rh < 1) rh = 1;\n");
  sb_printf(c, "      double bh = rh / %lld, bw = rw / %lld;\n", (long long)PH, (long long)PW);
  if (sr > 0) sb_printf(c, "      int64_t gh = %lld, gw = %lld;\n", (long long)sr, (long long)sr);
  else
    sb_printf(c, "      double gdh = ceil(rh / %lld), gdw = ceil(rw / %lld);\n"
                 "      int64_t gh = gdh > 0 ? (gdh < 1048576 ? (int64_t)gdh : 1048576) : 0, gw = gdw > 0 ? (gdw < 1048576 ? (int64_t)gdw : 1048576) : 0;\n",
              (long long)PH, (long long)PW);
  sb_printf(c, "      double cnt = gh * gw > 1 ? (double)(gh * gw) : 1.0;\n");
  sb_printf(c, "      for (int64_t ph = 0; ph < %lld; ph++)\n        for (int64_t pw = 0; pw < %lld; pw++) {\n", (long long)PH, (long long)PW);
  sb_printf(c, "          double acc = 0;\n          int first = 1;\n");
  /* only the sample rows/columns near [-1, H] x [-1, W] are visited (the others are
   * 0): a huge RoI costs O(H * W) per bin, not O(gh * gw) */
  sb_printf(c, "          int64_t iy0, iy1, ix0, ix1;\n");
  sb_printf(c, "          roi%d_span(sy + ph * bh, bh / (double)(gh > 0 ? gh : 1), %lld, gh, &iy0, &iy1);\n", u, (long long)H);
  sb_printf(c, "          roi%d_span(sx + pw * bw, bw / (double)(gw > 0 ? gw : 1), %lld, gw, &ix0, &ix1);\n", u, (long long)W);
  if (mx) sb_printf(c, "          if (gh > 0 && gw > 0 && (iy0 > 0 || iy1 < gh || ix0 > 0 || ix1 < gw)) first = 0; /* a skipped sample is 0 */\n");
  sb_printf(c, "          for (int64_t iy = iy0; iy < iy1; iy++) {\n            double yy = sy + ph * bh + (iy + 0.5) * bh / (double)gh;\n");
  sb_printf(c, "            for (int64_t ix = ix0; ix < ix1; ix++) {\n              double xx = sx + pw * bw + (ix + 0.5) * bw / (double)gw;\n");
  sb_printf(c, "              double v;\n");
  sb_printf(c, "              if (!(yy >= -1.0 && yy <= %lld && xx >= -1.0 && xx <= %lld)) v = 0;\n              else {\n", (long long)H, (long long)W);
  sb_printf(c, "                double y = yy < 0 ? 0 : yy, x = xx < 0 ? 0 : xx;\n");
  sb_printf(c, "                int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;\n");
  sb_printf(c, "                if (y0 >= %lld) { y0 = y1 = %lld; y = (double)y0; } else y1 = y0 + 1;\n", (long long)(H - 1), (long long)(H - 1));
  sb_printf(c, "                if (x0 >= %lld) { x0 = x1 = %lld; x = (double)x0; } else x1 = x0 + 1;\n", (long long)(W - 1), (long long)(W - 1));
  sb_printf(c, "                double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;\n");
  sb_printf(c, "                double v1 = hy * hx * pl[y0 * %lld + x0], v2 = hy * lx * pl[y0 * %lld + x1], v3 = ly * hx * pl[y1 * %lld + x0], v4 = ly * lx * pl[y1 * %lld + x1];\n",
            (long long)W, (long long)W, (long long)W, (long long)W);
  if (mx) sb_printf(c, "                v = v1 > v2 ? v1 : v2; v = v > v3 ? v : v3; v = v > v4 ? v : v4;\n");
  else sb_printf(c, "                v = v1 + v2 + v3 + v4;\n");
  sb_printf(c, "              }\n");
  if (mx) sb_printf(c, "              if (first || v > acc) acc = v;\n              first = 0;\n");
  else sb_printf(c, "              acc += v;\n");
  sb_printf(c, "            }\n          }\n");
  sb_printf(c, "          yo[ph * %lld + pw] = (%s)(%s);\n        }\n    }\n  }\n", (long long)PW, T, mx ? "acc" : "acc / cnt");
  return ECG_OK;
}
