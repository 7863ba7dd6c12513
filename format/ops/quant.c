/* Quantization operators: QuantizeLinear, DequantizeLinear (One-to-One: elementwise
 * with a per-tensor or per-axis scale and zero point), DynamicQuantizeLinear (a global
 * min/max then One-to-One), and the integer compute family MatMulInteger,
 * QLinearMatMul, ConvInteger, QLinearConv (Many-to-Many; int32 accumulation).
 * Shape functions, FLOP counts, and constant folding of Quantize/DequantizeLinear
 * (DequantizeLinear of a constant weight is the common QDQ-model pattern). */
#include <math.h>

#include "ops_common.h"

/* A view of node n with its inputs replaced by ids[0..k) (same attributes, outputs and
 * name): lets the integer ops reuse the float ops' shape functions. label receives n's
 * display name so errors still name the real node. */
static ecg_node view_of(const ecg_graph *g, const ecg_node *n, int32_t *ids, int k, char *label, size_t n_label) {
  ecg_node v = *n;
  v.name = (char *)ecg_node_label(g, n, label, n_label);
  v.inputs = ids;
  v.n_inputs = (size_t)k;
  return v;
}

/* Input i of n as a tensor id (-1 when omitted or out of range). */
static int32_t in_id(const ecg_node *n, size_t i) { return i < n->n_inputs ? n->inputs[i] : -1; }

/* Check a quantization parameter (scale or zero point, input i) against x of rank r and
 * dims xd: one element (per-tensor) or 1-D [xd[axis]] (per-axis). *per_axis is set when
 * it is the latter with more than one element. */
static int check_qparam(ecg_graph *g, ecg_node *n, int i, int r, const int64_t *xd, int axis, bool *per_axis,
                        ecg_err *e) {
  const ecg_tensor *p = ecg_node_input(g, n, i);
  if (!p) return ECG_OK;
  if (!p->shape_known) return ecg_node_errf(e, g, n, "input '%s' has unknown rank", p->name);
  int64_t pd[ECG_MAX_RANK];
  int pr = ecg_tensor_dims(p, pd);
  if (pr > 1) return ecg_node_errf(e, g, n, "blocked quantization ('%s' of rank %d) is not supported", p->name, pr);
  if (pr == 0 || pd[0] == 1) return ECG_OK;
  if (axis < 0) return ecg_node_errf(e, g, n, "axis out of range for rank %d", r);
  if (pd[0] >= 0 && xd[axis] >= 0 && pd[0] != xd[axis])
    return ecg_node_errf(e, g, n, "'%s' has %lld elements but axis %d of the input has %lld", p->name,
                         (long long)pd[0], axis, (long long)xd[axis]);
  *per_axis = true;
  return ECG_OK;
}

/* The x input, its dims and the normalised axis attribute (default 1; -1 when out of
 * range, which only matters for per-axis parameters). */
static int q_operands(ecg_graph *g, ecg_node *n, ecg_tensor **x, int64_t *xd, int *r, int *axis, ecg_err *e) {
  if (n->n_inputs < 2 || n->n_inputs > 3)
    return ecg_node_errf(e, g, n, "expected 2 or 3 inputs, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, x, e));
  ecg_tensor *s;
  ECG_TRY(ops_input(g, n, 1, &s, e));
  if (ecg_attr_i(n, "block_size", 0) != 0) /* opset 21: scale of one value per block */
    return ecg_node_errf(e, g, n, "blocked quantization (block_size %lld) is not supported", (long long)ecg_attr_i(n, "block_size", 0));
  *r = ecg_tensor_dims(*x, xd);
  if (!ops_axis(ecg_attr_i(n, "axis", 1), *r, axis)) *axis = -1;
  bool pa = false;
  ECG_TRY(check_qparam(g, n, 1, *r, xd, *axis, &pa, e));
  ECG_TRY(check_qparam(g, n, 2, *r, xd, *axis, &pa, e));
  const ecg_tensor *z = ecg_node_input(g, n, 2);
  if (z && ecg_tensor_numel(z) >= 0 && ecg_tensor_numel(s) >= 0 && ecg_tensor_numel(z) != ecg_tensor_numel(s))
    return ecg_node_errf(e, g, n, "scale '%s' and zero point '%s' differ in size", s->name, z->name);
  return ECG_OK;
}

/** QuantizeLinear: x [D...] (float32 or int32), y_scale [] / [1] / [D_axis], optional
 *  y_zero_point like y_scale -> y [D...] of the zero point's dtype (uint8 without one). */
int ecg_infer_quantize(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t xd[ECG_MAX_RANK];
  int r, axis;
  ECG_TRY(q_operands(g, n, &x, xd, &r, &axis, e));
  const ecg_tensor *z = ecg_node_input(g, n, 2);
  int dt = z ? z->dtype : (int)ecg_attr_i(n, "output_dtype", ECG_UINT8);
  if (dt == ECG_UNDEFINED) dt = ECG_UINT8;
  return ecg_set_output(g, n, 0, dt, r, xd, x);
}

/** DequantizeLinear: x [D...] (int8/uint8/int32...), x_scale [] / [1] / [D_axis], optional
 *  x_zero_point like x_scale -> y [D...] of the scale's dtype (float32). */
int ecg_infer_dequantize(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t xd[ECG_MAX_RANK];
  int r, axis;
  ECG_TRY(q_operands(g, n, &x, xd, &r, &axis, e));
  return ecg_set_output(g, n, 0, ecg_node_input(g, n, 1)->dtype, r, xd, x);
}

/** DynamicQuantizeLinear: x [D...] float32 -> y [D...] uint8, y_scale [] float32,
 *  y_zero_point [] uint8. */
int ecg_infer_dynamic_quantize(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t xd[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, xd);
  ECG_TRY(ecg_set_output(g, n, 0, ECG_UINT8, r, xd, x));
  if (n->n_outputs > 1) ECG_TRY(ecg_set_output(g, n, 1, x->dtype, 0, xd, NULL));
  if (n->n_outputs > 2) ECG_TRY(ecg_set_output(g, n, 2, ECG_UINT8, 0, xd, NULL));
  return ECG_OK;
}

/* Set output 0's dtype after a borrowed shape function. */
static int set_out_dtype(ecg_graph *g, ecg_node *n, int dtype) {
  ecg_tensor *t = ecg_node_output(g, n, 0);
  if (t) t->dtype = dtype;
  return ECG_OK;
}

/** MatMulInteger: A [...,M,K], B [...,K,N] (int8/uint8; numpy matmul broadcasting),
 *  optional a_zero_point, b_zero_point -> Y [...,M,N] int32. */
int ecg_infer_matmul_integer(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs < 2 || n->n_inputs > 4) return ecg_node_errf(e, g, n, "expected 2 to 4 inputs, got %zu", n->n_inputs);
  int32_t ids[2] = {in_id(n, 0), in_id(n, 1)};
  char lb[256];
  ecg_node v = view_of(g, n, ids, 2, lb, sizeof lb);
  ECG_TRY(ecg_infer_matmul(g, &v, e));
  return set_out_dtype(g, n, ECG_INT32);
}

/** QLinearMatMul: a [...,M,K], a_scale, a_zero_point, b [...,K,N], b_scale, b_zero_point,
 *  y_scale, y_zero_point -> y [...,M,N] of y_zero_point's dtype (int8/uint8). */
int ecg_infer_qlinear_matmul(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 8) return ecg_node_errf(e, g, n, "expected 8 inputs, got %zu", n->n_inputs);
  ecg_tensor *z;
  ECG_TRY(ops_input(g, n, 7, &z, e));
  int32_t ids[2] = {in_id(n, 0), in_id(n, 3)};
  char lb[256];
  ecg_node v = view_of(g, n, ids, 2, lb, sizeof lb);
  ECG_TRY(ecg_infer_matmul(g, &v, e));
  return set_out_dtype(g, n, z->dtype);
}

/** ConvInteger: x [N,C,D...], w [M,C/group,K...] (int8/uint8), optional x_zero_point,
 *  w_zero_point; Conv's attributes -> y [N,M,D'...] int32. */
int ecg_infer_conv_integer(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs < 2 || n->n_inputs > 4) return ecg_node_errf(e, g, n, "expected 2 to 4 inputs, got %zu", n->n_inputs);
  ECG_TRY(ecg_infer_conv(g, n, e));
  return set_out_dtype(g, n, ECG_INT32);
}

/** QLinearConv: x, x_scale, x_zero_point, w [M,C/group,K...], w_scale, w_zero_point,
 *  y_scale, y_zero_point, optional B [M] int32 -> y [N,M,D'...] of y_zero_point's dtype. */
int ecg_infer_qlinear_conv(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs < 8 || n->n_inputs > 9) return ecg_node_errf(e, g, n, "expected 8 or 9 inputs, got %zu", n->n_inputs);
  ecg_tensor *z;
  ECG_TRY(ops_input(g, n, 7, &z, e));
  ECG_TRY(ecg_infer_conv(g, n, e));
  return set_out_dtype(g, n, z->dtype);
}

/* ---------------------------------------------------------------- FLOPs */

/** MatMulInteger / QLinearMatMul FLOPs: 2 * |Y| * K (zero-point and requantisation
 *  work not counted). */
int64_t ecg_flops_qmatmul(const ecg_graph *g, const ecg_node *n) { return ecg_flops_matmul(g, n); }

/** ConvInteger / QLinearConv FLOPs: 2 * |Y| * C/group * prod(K), as Conv. */
int64_t ecg_flops_qconv(const ecg_graph *g, const ecg_node *n) {
  int32_t ids[2] = {in_id(n, 0), in_id(n, strcmp(n->op_type, "QLinearConv") == 0 ? 3 : 1)};
  ecg_node v = *n;
  v.inputs = ids;
  v.n_inputs = 2;
  return ecg_flops_conv(g, &v);
}

/* ---------------------------------------------------------------- folding */

/* Saturation range of a quantized dtype; false for dtypes QuantizeLinear does not produce. */
static bool q_range(int dt, double *lo, double *hi) {
  switch (dt) {
  case ECG_UINT8: *lo = 0; *hi = 255; return true;
  case ECG_INT8: *lo = -128; *hi = 127; return true;
  case ECG_UINT16: *lo = 0; *hi = 65535; return true;
  case ECG_INT16: *lo = -32768; *hi = 32767; return true;
  case ECG_INT32: *lo = -2147483648.0; *hi = 2147483647.0; return true;
  default: return false;
  }
}

/** Fold QuantizeLinear / DequantizeLinear of constants (same arithmetic as the lowered
 *  kernel: float32 division and round half to even, saturation; (x - zp) * scale). */
int ecg_eval_quantize(ecg_graph *g, ecg_node *n, ecg_err *e) {
  bool deq = strcmp(n->op_type, "DequantizeLinear") == 0;
  const ecg_tensor *x = ecg_node_input(g, n, 0), *s = ecg_node_input(g, n, 1), *z = ecg_node_input(g, n, 2);
  ecg_tensor *y = ecg_node_output(g, n, 0);
  if (!x || !s || !y || (s->dtype != ECG_FLOAT && s->dtype != ECG_DOUBLE) || !ops_fold_dtype(x->dtype) ||
      !ops_fold_dtype(y->dtype) || ecg_tensor_rank(s) > 1)
    return ecg_node_errf(e, g, n, "not folded (dtype or blocked quantization)");
  double lo = 0, hi = 0;
  if (!deq && !q_range(y->dtype, &lo, &hi)) return ecg_node_errf(e, g, n, "output dtype %s not handled", ecg_dtype_name(y->dtype));
  int64_t xd[ECG_MAX_RANK], numel = ecg_tensor_numel(x), sn = ecg_tensor_numel(s);
  int r = ecg_tensor_dims(x, xd), axis;
  int64_t inner = 1, C = 1;
  if (sn > 1) {
    if (!ops_axis(ecg_attr_i(n, "axis", 1), r, &axis)) return ecg_node_errf(e, g, n, "axis out of range");
    C = xd[axis];
    for (int d = axis + 1; d < r; d++) inner *= xd[d];
  }
  void *buf;
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  bool sf = s->dtype == ECG_FLOAT;
  for (int64_t i = 0; i < numel; i++) {
    int64_t c = sn > 1 ? (i / inner) % C : 0;
    double sc = ecg_const_f64(s, c);
    int64_t zp = z ? ecg_const_i64(z, c) : 0;
    if (deq) {
      int64_t q = ecg_const_i64(x, i) - zp;
      if (sf) ecg_store_f64(buf, y->dtype, i, (double)((float)q * (float)sc));
      else ecg_store_f64(buf, y->dtype, i, (double)q * sc);
    } else {
      double xv = ecg_const_f64(x, i);
      double v = sf ? (double)nearbyintf((float)xv / (float)sc) : nearbyint(xv / sc);
      v += (double)zp;
      v = v != v ? lo : v < lo ? lo : v > hi ? hi : v;
      ecg_store_i64(buf, y->dtype, i, (int64_t)v);
    }
  }
  return ECG_OK;
}
