/* Elementwise operators (One-to-One): unary activations and math, binary arithmetic,
 * comparison and logic with numpy broadcasting (ONNX Broadcasting.md), Where, variadic
 * Max/Min/Sum/Mean, Cast and BatchNormalization.  Folding runs every one of them
 * through one broadcasting loop (eval_bcast) parameterised by a scalar kernel
 * (STYLE 12): floats are computed in double, integers and bool in int64. */
#include <math.h>

#include "../scalar.h"
#include "ops_common.h"

/* ---------------------------------------------------------------- shapes */

/* Broadcast the shapes of inputs [first, first+count) of n into out[*rank]; *like is
 * the input sharing the most symbolic dims with the result (to keep their names). */
static int bcast_inputs(ecg_graph *g, ecg_node *n, int first, int count, int64_t *out, int *rank,
                        const ecg_tensor **like, ecg_err *e) {
  int r = 0;
  const ecg_tensor *ts[16] = {0};
  if (count < 1 || count > 16) return ecg_node_errf(e, g, n, "expected 1 to 16 inputs, got %d", count);
  for (int k = 0; k < count; k++) {
    ecg_tensor *t;
    ECG_TRY(ops_input(g, n, first + k, &t, e));
    int64_t d[ECG_MAX_RANK], tmp[ECG_MAX_RANK];
    int rt = ecg_bcast_dims(g, n, first + k, d);
    int rr = k == 0 ? ecg_broadcast_shape(rt, d, 0, NULL, tmp) : ecg_broadcast_shape(r, out, rt, d, tmp);
    if (rr < 0) {
      char a[128], b[128];
      return ecg_node_errf(e, g, n, "shapes %s and %s (input '%s') cannot be broadcast",
                           k ? ecg_shape_str(ts[0], a, sizeof a) : "?", ecg_shape_str(t, b, sizeof b), t->name);
    }
    if (rr > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "rank %d exceeds %d", rr, ECG_MAX_RANK);
    memcpy(out, tmp, sizeof(int64_t) * (size_t)rr);
    r = rr;
    ts[k] = t;
  }
  int best = -1;
  *like = ts[0];
  for (int k = 0; k < count; k++) {
    int score = 0, rt = (int)ts[k]->n_dims;
    for (int j = 0; j < rt; j++)
      if (out[r - rt + j] < 0 && ts[k]->dims[j]->value < 0) score++;
    if (score > best) { best = score; *like = ts[k]; }
  }
  *rank = r;
  return ECG_OK;
}

/* Fail when the data inputs [first, first+count) disagree on dtype. */
static int same_dtype(ecg_graph *g, ecg_node *n, int first, int count, ecg_err *e) {
  const ecg_tensor *a = ecg_node_input(g, n, first);
  for (int k = 1; k < count; k++) {
    const ecg_tensor *b = ecg_node_input(g, n, first + k);
    if (a && b && a->dtype && b->dtype && a->dtype != b->dtype)
      return ecg_node_errf(e, g, n, "inputs '%s' (%s) and '%s' (%s) differ in dtype", a->name,
                           ecg_dtype_name(a->dtype), b->name, ecg_dtype_name(b->dtype));
  }
  return ECG_OK;
}

/* Broadcast inputs [first, first+count) into output 0 of dtype (-1: input first's). */
static int infer_bcast(ecg_graph *g, ecg_node *n, int first, int count, int dtype, ecg_err *e) {
  int64_t d[ECG_MAX_RANK];
  int r;
  const ecg_tensor *like;
  ECG_TRY(bcast_inputs(g, n, first, count, d, &r, &like, e));
  if (dtype < 0) dtype = ecg_node_input(g, n, first)->dtype;
  return ecg_set_output(g, n, 0, dtype, r, d, like);
}

/** Unary elementwise ops (Relu, Sigmoid, ..., Clip, Identity) and shape-preserving
 *  Softmax/LogSoftmax/InstanceNormalization: output 0 = input 0's dtype and shape. */
int ecg_infer_unary(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}

/** IsNaN, IsInf: input 0's shape, bool output. */
int ecg_infer_unary_bool(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  return ecg_set_output(g, n, 0, ECG_BOOL, r, d, x);
}

/** Cast: input 0's shape, dtype from the required attribute 'to'. */
int ecg_infer_cast(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t to = ecg_attr_i(n, "to", -1);
  if (to >= 17 && to <= 26) /* ONNX's float8 (17-20, 24), 4-bit (21-23) and 2-bit (25, 26) types */
    return ecg_node_errf(e, g, n, "unsupported target type %s ('to' = %lld): float8, float4, int4/uint4 and int2/uint2 are not supported",
                         to <= 20 || to == 24 ? "float8" : to == 23 ? "float4" : "int4/int2", (long long)to);
  if (to <= 0 || to > ECG_BFLOAT16) return ecg_node_errf(e, g, n, "missing or invalid attribute 'to' (%lld)", (long long)to);
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  return ecg_set_output(g, n, 0, (int)to, r, d, x);
}

/** Binary arithmetic Add/Sub/Mul/Div/Pow/Mod/PRelu: numpy broadcast, input 0's dtype
 *  (Pow's exponent may differ in dtype). */
int ecg_infer_binary(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 2) return ecg_node_errf(e, g, n, "expected 2 inputs, got %zu", n->n_inputs);
  const ecg_op_info *op = ecg_node_op(n);
  if (op && op->id != ECG_OP_Pow) ECG_TRY(same_dtype(g, n, 0, 2, e));
  return infer_bcast(g, n, 0, 2, -1, e);
}

/** Comparison and logic Equal/Less/LessOrEqual/Greater/GreaterOrEqual/And/Or/Xor:
 *  numpy broadcast, bool output. */
int ecg_infer_compare(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 2) return ecg_node_errf(e, g, n, "expected 2 inputs, got %zu", n->n_inputs);
  ECG_TRY(same_dtype(g, n, 0, 2, e));
  return infer_bcast(g, n, 0, 2, ECG_BOOL, e);
}

/** BitwiseAnd/Or/Xor (two inputs, numpy broadcast) and BitwiseNot (one input), opset 18:
 *  integer dtypes only (int8..int64, uint8..uint64; bool and floats are refused naming the
 *  dtype), output in the input's dtype. */
int ecg_infer_bitwise(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int dt = x->dtype;
  bool is_int = (dt >= ECG_UINT8 && dt <= ECG_INT64) || dt == ECG_UINT32 || dt == ECG_UINT64;
  if (dt && !is_int)
    return ecg_node_errf(e, g, n, "dtype %s is not supported: bitwise operators take integer types", ecg_dtype_name(x->dtype));
  const ecg_op_info *op = ecg_node_op(n);
  if (op && op->id == ECG_OP_BitwiseNot) {
    if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
    return ecg_infer_unary(g, n, e);
  }
  return ecg_infer_binary(g, n, e);
}

/** Where(cond, X, Y): three-way broadcast, X's dtype. */
int ecg_infer_where(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 3) return ecg_node_errf(e, g, n, "expected 3 inputs, got %zu", n->n_inputs);
  ECG_TRY(same_dtype(g, n, 1, 2, e));
  int64_t d[ECG_MAX_RANK];
  int r;
  const ecg_tensor *like;
  ECG_TRY(bcast_inputs(g, n, 0, 3, d, &r, &like, e));
  return ecg_set_output(g, n, 0, ecg_node_input(g, n, 1)->dtype, r, d, like);
}

/** Variadic Max/Min/Sum/Mean: broadcast of all inputs, input 0's dtype. */
int ecg_infer_variadic(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs < 1) return ecg_node_errf(e, g, n, "expected at least 1 input");
  ECG_TRY(same_dtype(g, n, 0, (int)n->n_inputs, e));
  return infer_bcast(g, n, 0, (int)n->n_inputs, -1, e);
}

/** BatchNormalization(X, scale, B, mean, var): Y like X; the optional training outputs
 *  (running/saved mean and var) are [C]. Parameters must be [C]. */
int ecg_infer_batchnorm(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 5) return ecg_node_errf(e, g, n, "expected 5 inputs, got %zu", n->n_inputs);
  if (ecg_attr_i(n, "spatial", 1) == 0) /* opset < 9: per-activation statistics */
    return ecg_node_errf(e, g, n, "spatial=0 (per-activation statistics) is not supported");
  ecg_tensor *x, *p;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  if (r < 2) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 2, has %d", x->name, r);
  for (int k = 1; k < 5; k++) {
    ECG_TRY(ops_input(g, n, k, &p, e));
    int64_t pd[ECG_MAX_RANK];
    int pr = ecg_tensor_dims(p, pd);
    if (pr != 1 || (pd[0] >= 0 && d[1] >= 0 && pd[0] != d[1]))
      return ecg_node_errf(e, g, n, "parameter '%s' must be [%lld]", p->name, (long long)d[1]);
  }
  ECG_TRY(ecg_set_output(g, n, 0, x->dtype, r, d, x));
  int from = 1;
  for (int k = 1; k < (int)n->n_outputs; k++)
    ECG_TRY(ops_set_out(g, n, k, ecg_node_input(g, n, 3)->dtype, 1, &d[1], x, &from, e));
  return ECG_OK;
}

/* ---------------------------------------------------------------- FLOPs */

/** FLOPs of one operation per output element (cheap elementwise ops). */
int64_t ecg_flops_elem(const ecg_graph *g, const ecg_node *n) { return ops_numel(ecg_node_output(g, n, 0)); }

/** FLOPs of four operations per output element (transcendental ops, softmax, norms). */
int64_t ecg_flops_elem4(const ecg_graph *g, const ecg_node *n) {
  int64_t m = ops_numel(ecg_node_output(g, n, 0));
  return m < 0 ? -1 : 4 * m;
}

/** Zero FLOPs: pure data movement or shape computation. */
int64_t ecg_flops_zero(const ecg_graph *g, const ecg_node *n) { return 0; }

/** One FLOP per input-0 element (reductions, global pooling). */
int64_t ecg_flops_in(const ecg_graph *g, const ecg_node *n) { return ops_numel(ecg_node_input(g, n, 0)); }

/** One FLOP per output-0 element (Resize/Upsample interpolation). */
int64_t ecg_flops_out(const ecg_graph *g, const ecg_node *n) { return ops_numel(ecg_node_output(g, n, 0)); }

/* ---------------------------------------------------------------- folding */

/* Every One-to-One operator folds through its scalar.def expression (format/scalar.h):
 * the same text the code generator emits, so a folded constant and a computed tensor
 * agree by construction. */

/** Fold unary ops, Cast/Identity and Clip (bounds as attributes before opset 11,
 *  optional inputs 1 and 2 from 11). */
int ecg_eval_unary(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_eval_scalar(g, n, e); }

/** Fold binary arithmetic, comparison and logic ops (Mod honours 'fmod'; integer Div
 *  truncates toward zero and gives 0 for a zero divisor, as the generated code). */
int ecg_eval_binary(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_eval_scalar(g, n, e); }

/** Fold Where(cond, X, Y). */
int ecg_eval_where(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_eval_scalar(g, n, e); }

/** Fold variadic Max/Min/Sum/Mean (NaN propagates through Max/Min). */
int ecg_eval_variadic(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_eval_scalar(g, n, e); }
