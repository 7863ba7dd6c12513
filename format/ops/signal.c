/* Sampling and signal-processing operators: GridSample, RoiAlign (One-to-Many
 * gathers at data-dependent coordinates); HannWindow, HammingWindow, BlackmanWindow,
 * MelWeightMatrix (One-to-Many generators); DFT, STFT (Many-to-Many).  Shape
 * functions, FLOP counts, and folding of the generators when their operands are
 * constants.
 *
 * Operands that fix an output length (window size, dft_length, frame_step, ...) are
 * read when they are constants.  When one is a graph input instead, its output dims
 * stay symbolic, except that a shape the model declares for the output (seeded by
 * onnx2ecg from value_info) is kept: ecg_set_output only refines, so the lowered kernel
 * then reads the operand at run time and writes within the declared shape. */
#include <math.h>

#include "ops_common.h"

/* The scalar value of constant input i as int64 into *v; false when the input is
 * omitted, not a constant, or not a single element. */
static bool const_scalar(const ecg_graph *g, const ecg_node *n, int i, int64_t *v) {
  const ecg_tensor *t = ecg_node_input(g, n, i);
  if (!t || !t->is_const || ecg_tensor_numel(t) != 1) return false;
  *v = ecg_const_i64(t, 0);
  return true;
}

/* Input i must be a scalar (rank 0, or rank 1 of one element) when present. */
static int scalar_input(ecg_graph *g, ecg_node *n, int i, const char *what, ecg_err *e) {
  ecg_tensor *t = ecg_node_input(g, n, i);
  if (!t) return ECG_OK;
  if (!t->shape_known || t->n_dims > 1 || (t->n_dims == 1 && t->dims[0]->value > 1))
    return ecg_node_errf(e, g, n, "%s '%s' must be a scalar", what, t->name);
  return ECG_OK;
}

/* Output dtype from the 'output_datatype' attribute (default float32). */
static int out_dtype(ecg_graph *g, ecg_node *n, int *dt, ecg_err *e) {
  int64_t v = ecg_attr_i(n, "output_datatype", ECG_FLOAT);
  if (v <= 0 || v > ECG_BFLOAT16 || v == ECG_STRING || v == ECG_BOOL || v == ECG_COMPLEX64 || v == ECG_COMPLEX128)
    return ecg_node_errf(e, g, n, "output_datatype %lld is not a real numeric type", (long long)v);
  *dt = (int)v;
  return ECG_OK;
}

/* ---------------------------------------------------------------- GridSample */

/** GridSample(X [N,C,d1..dr], grid [N,D1..Dr,r]) -> Y [N,C,D1..Dr] in X's dtype. */
int ecg_infer_grid_sample(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *gr;
  int64_t xd[ECG_MAX_RANK], gd[ECG_MAX_RANK], od[ECG_MAX_RANK];
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &gr, e));
  int r = ecg_tensor_dims(x, xd), rg = ecg_tensor_dims(gr, gd);
  if (r < 3 || rg != r) return ecg_node_errf(e, g, n, "X must be [N,C,d1..dr] and grid [N,D1..Dr,r] of the same rank (ranks %d, %d)", r, rg);
  if (gd[r - 1] >= 0 && gd[r - 1] != r - 2)
    return ecg_node_errf(e, g, n, "grid's last dim is %lld, expected %d", (long long)gd[r - 1], r - 2);
  if (xd[0] >= 0 && gd[0] >= 0 && xd[0] != gd[0])
    return ecg_node_errf(e, g, n, "batch of X (%lld) and grid (%lld) differ", (long long)xd[0], (long long)gd[0]);
  if (!ecg_dtype_is_float(gr->dtype)) return ecg_node_errf(e, g, n, "grid '%s' must be floating point", gr->name);
  od[0] = xd[0] >= 0 ? xd[0] : gd[0];
  od[1] = xd[1];
  for (int i = 1; i < r - 1; i++) od[i + 1] = gd[i];
  return ecg_set_output(g, n, 0, x->dtype, r, od, NULL);
}

/** GridSample FLOPs: |Y| times taps (1 nearest, 4 linear, 16 cubic) times 2. */
int64_t ecg_flops_grid_sample(const ecg_graph *g, const ecg_node *n) {
  char mode[16];
  int64_t m = ops_numel(ecg_node_output(g, n, 0));
  ecg_attr_s(n, "mode", "bilinear", mode, sizeof mode);
  int taps = !strcmp(mode, "nearest") ? 1 : strstr(mode, "cubic") ? 16 : 4;
  return m < 0 ? -1 : 2 * taps * m;
}

/* ---------------------------------------------------------------- RoiAlign */

/** RoiAlign(X [N,C,H,W], rois [R,4], batch_indices [R]) -> Y [R,C,output_height,
 *  output_width] in X's dtype (output sizes default 1). */
int ecg_infer_roi_align(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *ro, *bi;
  int64_t xd[ECG_MAX_RANK], rd[ECG_MAX_RANK], bd[ECG_MAX_RANK];
  if (n->n_inputs != 3) return ecg_node_errf(e, g, n, "expected 3 inputs, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &ro, e));
  ECG_TRY(ops_input(g, n, 2, &bi, e));
  if (ecg_tensor_dims(x, xd) != 4) return ecg_node_errf(e, g, n, "X '%s' must be 4-D [N,C,H,W]", x->name);
  if (ecg_tensor_dims(ro, rd) != 2 || (rd[1] >= 0 && rd[1] != 4)) return ecg_node_errf(e, g, n, "rois '%s' must be [num_rois, 4]", ro->name);
  if (ecg_tensor_dims(bi, bd) != 1) return ecg_node_errf(e, g, n, "batch_indices '%s' must be 1-D", bi->name);
  if (rd[0] >= 0 && bd[0] >= 0 && rd[0] != bd[0])
    return ecg_node_errf(e, g, n, "rois has %lld rows but batch_indices %lld", (long long)rd[0], (long long)bd[0]);
  if (ecg_dtype_is_float(bi->dtype)) return ecg_node_errf(e, g, n, "batch_indices must be integers");
  int64_t oh = ecg_attr_i(n, "output_height", 1), ow = ecg_attr_i(n, "output_width", 1);
  if (oh < 1 || ow < 1) return ecg_node_errf(e, g, n, "output_height/output_width must be >= 1");
  int64_t od[4] = {rd[0] >= 0 ? rd[0] : bd[0], xd[1], oh, ow};
  return ecg_set_output(g, n, 0, x->dtype, 4, od, NULL);
}

/** RoiAlign FLOPs: |Y| times samples per bin (sampling_ratio², 4 when adaptive)
 *  times 8 (four weighted taps). */
int64_t ecg_flops_roi_align(const ecg_graph *g, const ecg_node *n) {
  int64_t m = ops_numel(ecg_node_output(g, n, 0)), s = ecg_attr_i(n, "sampling_ratio", 0);
  return m < 0 ? -1 : 8 * m * (s > 0 ? s * s : 4);
}

/* ---------------------------------------------------------------- windows */

/** One value of a generalised cosine window: element i of a window of N samples
 *  (periodic or symmetric); op is the registry id. */
static double window_value(ecg_op_id op, int64_t i, int64_t N, bool periodic) {
  double den = periodic ? (double)N : (double)(N - 1), a = 2 * M_PI * (double)i / den; /* 0/0 = NaN for N = 1 symmetric, as the reference */
  switch (op) {
  case ECG_OP_HammingWindow: return 25.0 / 46.0 - (21.0 / 46.0) * cos(a);
  case ECG_OP_BlackmanWindow: return 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
  default: return 0.5 - 0.5 * cos(a); /* Hann */
  }
}

/** HannWindow / HammingWindow / BlackmanWindow(size: int scalar) -> [size] of
 *  output_datatype (default float32); the length is symbolic unless size is a constant. */
int ecg_infer_window(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *s;
  int dt;
  int64_t len = -1;
  if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &s, e));
  ECG_TRY(scalar_input(g, n, 0, "size", e));
  ECG_TRY(out_dtype(g, n, &dt, e));
  if (const_scalar(g, n, 0, &len) && len < 0) return ecg_node_errf(e, g, n, "negative window size %lld", (long long)len);
  return ecg_set_output(g, n, 0, dt, 1, &len, NULL);
}

/** Fold a window generator with a constant size. */
int ecg_eval_window(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *y = ecg_node_output(g, n, 0);
  const ecg_op_info *op = ecg_node_op(n);
  int64_t N;
  void *buf;
  if (!y || !op || !const_scalar(g, n, 0, &N) || !ops_fold_dtype(y->dtype)) return ecg_node_errf(e, g, n, "not foldable");
  if (ecg_tensor_numel(y) != N) return ecg_node_errf(e, g, n, "output length differs from size");
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  bool periodic = ecg_attr_i(n, "periodic", 1) != 0;
  for (int64_t i = 0; i < N; i++) ecg_store_f64(buf, y->dtype, i, window_value(op->id, i, N, periodic));
  return ECG_OK;
}

/* ---------------------------------------------------------------- MelWeightMatrix */

/** MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
 *  upper_edge_hertz) -> [dft_length/2 + 1, num_mel_bins] of output_datatype; dims are
 *  symbolic unless num_mel_bins / dft_length are constants. */
int ecg_infer_mel_weight_matrix(ecg_graph *g, ecg_node *n, ecg_err *e) {
  int dt;
  int64_t d[2] = {-1, -1}, v;
  if (n->n_inputs != 5) return ecg_node_errf(e, g, n, "expected 5 inputs, got %zu", n->n_inputs);
  for (int i = 0; i < 5; i++) {
    ecg_tensor *t;
    ECG_TRY(ops_input(g, n, i, &t, e));
    ECG_TRY(scalar_input(g, n, i, "operand", e));
  }
  ECG_TRY(out_dtype(g, n, &dt, e));
  if (const_scalar(g, n, 0, &v)) {
    if (v < 0) return ecg_node_errf(e, g, n, "negative num_mel_bins");
    d[1] = v;
  }
  if (const_scalar(g, n, 1, &v)) {
    if (v < 0) return ecg_node_errf(e, g, n, "negative dft_length");
    d[0] = v / 2 + 1;
  }
  return ecg_set_output(g, n, 0, dt, 2, d, NULL);
}

/** The triangular mel filters into out[S * M] (row-major [S, M], zero-filled by the
 *  caller), as the ONNX reference: M + 2 band edges evenly spaced in mel between the
 *  edge frequencies, mapped to DFT bins floor((dft_length + 1) * hz / sample_rate). */
static void mel_fill(double *out, int64_t S, int64_t M, int64_t nmel, int64_t dftl, int64_t rate, double lo, double hi) {
  double lm = 2595 * log10(1 + lo / 700), hm = 2595 * log10(1 + hi / 700), step = (hm - lm) / ((double)nmel + 2);
  for (int64_t i = 0; i < nmel && i < M; i++) {
    int64_t f[3];
    for (int k = 0; k < 3; k++) { /* band edge k as a DFT bin (bounded: never a loop bound past S) */
      double hz = 700 * (pow(10, ((double)(i + k) * step + lm) / 2595) - 1), b = floor(((double)dftl + 1) * hz / (double)rate);
      f[k] = b != b ? 0 : b < -1e15 ? (int64_t)-1e15 : b > 1e15 ? (int64_t)1e15 : (int64_t)b;
    }
    if (f[1] == f[0]) {
      if (f[1] >= 0 && f[1] < S) out[f[1] * M + i] = 1;
    } else {
      for (int64_t j = f[0] < 0 ? 0 : f[0]; j <= f[1] && j < S; j++) out[j * M + i] = (double)(j - f[0]) / (double)(f[1] - f[0]);
    }
    for (int64_t j = f[1] < 0 ? 0 : f[1]; j < f[2] && j < S; j++) out[j * M + i] = (double)(f[2] - j) / (double)(f[2] - f[1]);
  }
}

/** Fold MelWeightMatrix when all five operands are constants. */
int ecg_eval_mel_weight_matrix(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *y = ecg_node_output(g, n, 0);
  int64_t nmel, dftl, rate, d[2];
  const ecg_tensor *lo = ecg_node_input(g, n, 3), *hi = ecg_node_input(g, n, 4);
  void *buf;
  if (!y || !ops_fold_dtype(y->dtype) || !const_scalar(g, n, 0, &nmel) || !const_scalar(g, n, 1, &dftl) ||
      !const_scalar(g, n, 2, &rate) || !lo || !hi || !lo->is_const || !hi->is_const || rate <= 0 || ecg_tensor_dims(y, d) != 2)
    return ecg_node_errf(e, g, n, "not foldable");
  double *tmp = calloc((size_t)(d[0] * d[1] + 1), sizeof(double));
  if (!tmp) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  mel_fill(tmp, d[0], d[1], nmel, dftl, rate, ecg_const_f64(lo, 0), ecg_const_f64(hi, 0));
  int rc = ops_alloc(g, n, 0, &buf, e);
  for (int64_t i = 0; rc == ECG_OK && i < d[0] * d[1]; i++) ecg_store_f64(buf, y->dtype, i, tmp[i]);
  free(tmp);
  return rc;
}

/* ---------------------------------------------------------------- DFT */

/** The DFT axis of n over input rank r (attribute 'axis', default 1, before opset 20;
 *  constant input 2, default -2, from 20) into *axis; fails when out of range or on
 *  the trailing real/imaginary dim. */
static int dft_axis(const ecg_graph *g, const ecg_node *n, int r, int *axis, ecg_err *e) {
  int64_t a = ecg_attr_i(n, "axis", 1);
  if (n->opset >= 20) {
    a = -2;
    if (ecg_node_input(g, n, 2) && !const_scalar(g, n, 2, &a))
      return ecg_node_errf(e, g, n, "a non-constant axis input is not supported");
  }
  if (!ops_axis(a, r, axis) || *axis == r - 1)
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d (the last dim holds real/imaginary parts)", (long long)a, r);
  return ECG_OK;
}

/** DFT(input [..., n, ..., 1|2], dft_length?) -> [..., L, ..., 2] in the input's dtype,
 *  L = dft_length (default n), or dft_length/2 + 1 with onesided; L is symbolic when
 *  dft_length is not a constant. */
int ecg_infer_dft(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], N;
  int axis;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int r = ecg_tensor_dims(x, d);
  if (r < 2) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 2 ([..., 1] real or [..., 2] complex)", x->name);
  if (d[r - 1] >= 0 && d[r - 1] != 1 && d[r - 1] != 2)
    return ecg_node_errf(e, g, n, "input's last dim is %lld: must be 1 (real) or 2 (complex)", (long long)d[r - 1]);
  if (!ecg_dtype_is_float(x->dtype)) return ecg_node_errf(e, g, n, "input must be floating point");
  ECG_TRY(dft_axis(g, n, r, &axis, e));
  ECG_TRY(scalar_input(g, n, 1, "dft_length", e));
  if (!ecg_node_input(g, n, 1)) N = d[axis];
  else if (!const_scalar(g, n, 1, &N)) N = -1;
  else if (N < 1) return ecg_node_errf(e, g, n, "dft_length %lld must be positive", (long long)N);
  d[axis] = N < 0 ? -1 : ecg_attr_i(n, "onesided", 0) ? N / 2 + 1 : N;
  d[r - 1] = 2;
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}

/** DFT FLOPs: one complex multiply-add (8, or 4 for real input) per output bin per
 *  input sample along the axis. */
int64_t ecg_flops_dft(const ecg_graph *g, const ecg_node *n) {
  const ecg_tensor *x = ecg_node_input(g, n, 0);
  int64_t d[ECG_MAX_RANK], m = ops_numel(ecg_node_output(g, n, 0));
  int axis;
  if (!x || !ecg_tensor_static(x) || m < 0) return -1;
  int r = ecg_tensor_dims(x, d);
  if (r < 2 || dft_axis(g, n, r, &axis, NULL) != ECG_OK) return -1;
  return m / 2 * d[axis] * (d[r - 1] == 2 ? 8 : 4);
}

/* ---------------------------------------------------------------- STFT */

/** STFT(signal [B, T, 1|2], frame_step, window? [W], frame_length?) -> [B, frames,
 *  bins, 2] in the signal's dtype: frame length = frame_length, else W, else T;
 *  frames = (T - frame length) / frame_step + 1; bins = frame length / 2 + 1 with
 *  onesided (default), else frame length.  Unknown operands leave dims symbolic. */
int ecg_infer_stft(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *st;
  int64_t d[ECG_MAX_RANK], step = -1, fl = -1;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &st, e));
  if (ecg_tensor_dims(x, d) != 3 || (d[2] >= 0 && d[2] != 1 && d[2] != 2))
    return ecg_node_errf(e, g, n, "signal '%s' must be [batch, length, 1|2]", x->name);
  if (!ecg_dtype_is_float(x->dtype)) return ecg_node_errf(e, g, n, "signal must be floating point");
  ECG_TRY(scalar_input(g, n, 1, "frame_step", e));
  ECG_TRY(scalar_input(g, n, 3, "frame_length", e));
  const ecg_tensor *w = ecg_node_input(g, n, 2);
  if (w && (!w->shape_known || w->n_dims != 1)) return ecg_node_errf(e, g, n, "window '%s' must be 1-D", w->name);
  if (const_scalar(g, n, 1, &step) && step < 1) return ecg_node_errf(e, g, n, "frame_step %lld must be positive", (long long)step);
  if (ecg_node_input(g, n, 3)) {
    if (const_scalar(g, n, 3, &fl) && fl < 1) return ecg_node_errf(e, g, n, "frame_length %lld must be positive", (long long)fl);
  } else {
    fl = w ? w->dims[0]->value : d[1];
  }
  if (fl >= 0 && d[1] >= 0 && fl > d[1]) return ecg_node_errf(e, g, n, "frame length %lld exceeds the signal length %lld", (long long)fl, (long long)d[1]);
  int64_t od[4] = {d[0], step > 0 && fl >= 0 && d[1] >= 0 ? (d[1] - fl) / step + 1 : -1,
                   fl < 0 ? -1 : ecg_attr_i(n, "onesided", 1) ? fl / 2 + 1 : fl, 2};
  return ecg_set_output(g, n, 0, x->dtype, 4, od, NULL);
}

/** STFT FLOPs: |Y|/2 bins times the frame length (the window's, else the bins'
 *  DFT length) times 8 (complex) or 4 (real signal). */
int64_t ecg_flops_stft(const ecg_graph *g, const ecg_node *n) {
  const ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK], m = ops_numel(y);
  if (!x || !y || m < 0 || ecg_tensor_dims(x, d) != 3 || ecg_tensor_dims(y, od) != 4) return -1;
  return m / 2 * od[2] * (d[2] == 2 ? 8 : 4);
}
