/* Shape-computation operators: Shape, Size, ConstantOfShape, Range (shape functions
 * and folding), and ecg_eval_none for the operators that are never folded. */
#include <math.h>

#include "ops_common.h"

/** The eval of operators that are not constant-foldable: always refuses. */
int ecg_eval_none(ecg_graph *g, ecg_node *n, ecg_err *e) {
  return ecg_node_errf(e, g, n, "not constant-foldable");
}

/* Shape's [start, end) range over rank r (opset 15 attributes, clamped). */
static void shape_range(const ecg_node *n, int r, int64_t *start, int64_t *end) {
  int64_t s = ecg_attr_i(n, "start", 0), en = ecg_attr_i(n, "end", r);
  if (s < 0) s += r;
  if (en < 0) en += r;
  *start = s < 0 ? 0 : s > r ? r : s;
  *end = en < 0 ? 0 : en > r ? r : en;
  if (*end < *start) *end = *start;
}

/** Shape: int64 [end-start] (start/end attributes from opset 15, negative allowed). */
int ecg_infer_shape(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t s, en;
  if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  shape_range(n, (int)x->n_dims, &s, &en);
  int64_t len = en - s;
  return ops_set_out(g, n, 0, ECG_INT64, 1, &len, NULL, NULL, e);
}

/** Size: int64 scalar. */
int ecg_infer_size(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  return ops_set_out(g, n, 0, ECG_INT64, 0, NULL, NULL, NULL, e);
}

/** Fold Shape and Size from input 0's static shape. */
int ecg_eval_shape(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  int64_t d[ECG_MAX_RANK], s, en;
  void *buf;
  if (!x || !y || !ecg_tensor_static(x)) return ecg_node_errf(e, g, n, "input shape is not static");
  int r = ecg_tensor_dims(x, d);
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  if (y->n_dims == 0) { /* Size */
    ecg_store_i64(buf, y->dtype, 0, ops_prod(d, r));
    return ECG_OK;
  }
  shape_range(n, r, &s, &en);
  for (int64_t i = s; i < en; i++) ecg_store_i64(buf, y->dtype, i - s, d[i]);
  return ECG_OK;
}

/* ConstantOfShape's value tensor (attribute 'value'), or NULL for float32 0. */
static const ecg_tensor *cos_value(const ecg_node *n) {
  const ecg_attr *a = ecg_attr_find(n, "value");
  return a && a->t ? a->t : NULL;
}

/** ConstantOfShape: dims from the int64 input 0, dtype of the 'value' tensor attribute
 *  (default float32 0); all dims symbolic when the input is not a constant. */
int ecg_infer_constant_of_shape(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *s;
  int64_t d[ECG_MAX_RANK + 1];
  int r;
  if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &s, e));
  if (s->n_dims != 1) return ecg_node_errf(e, g, n, "shape input '%s' must be 1-D", s->name);
  const ecg_tensor *v = cos_value(n);
  if (v && ecg_tensor_numel(v) != 1) return ecg_node_errf(e, g, n, "attribute 'value' must hold one element");
  int dtype = v ? v->dtype : ECG_FLOAT;
  if (s->is_const) {
    r = ecg_const_ints(s, d, ECG_MAX_RANK + 1);
    if (r < 0 || r > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "shape input '%s' too long", s->name);
    for (int i = 0; i < r; i++)
      if (d[i] < 0) return ecg_node_errf(e, g, n, "negative dim %lld", (long long)d[i]);
  } else {
    r = (int)s->dims[0]->value;
    if (r < 0) return ecg_node_errf(e, g, n, "shape input '%s' has a symbolic length: output rank unknown", s->name);
    if (r > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output rank %d exceeds %d", r, ECG_MAX_RANK);
    for (int i = 0; i < r; i++) d[i] = -1;
  }
  return ops_set_out(g, n, 0, dtype, r, d, NULL, NULL, e);
}

/** Fold ConstantOfShape: every element is the value attribute's bytes. */
int ecg_eval_constant_of_shape(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *y = ecg_node_output(g, n, 0);
  const ecg_tensor *v = cos_value(n);
  size_t es;
  char *buf;
  if (!y) return ecg_node_errf(e, g, n, "no output");
  ECG_TRY(ops_elem_size(g, n, y, &es, e));
  if (v && v->data.len != es) return ecg_node_errf(e, g, n, "attribute 'value' has %zu bytes, expected %zu", v->data.len, es);
  ECG_TRY(ops_alloc(g, n, 0, (void **)&buf, e));
  int64_t m = ecg_tensor_numel(y);
  for (int64_t i = 0; v && i < m; i++) memcpy(buf + (size_t)i * es, v->data.data, es);
  return ECG_OK;
}

/* Range's element count from constant scalars start, limit, delta (-1 on error). */
static int64_t range_count(const ecg_tensor *s, const ecg_tensor *l, const ecg_tensor *d) {
  if (ecg_dtype_is_float(s->dtype)) {
    double a = ecg_const_f64(s, 0), b = ecg_const_f64(l, 0), c = ecg_const_f64(d, 0);
    double k = ceil((b - a) / c);
    return c == 0 || k != k ? -1 : k < 0 ? 0 : k > 1e12 ? -1 : (int64_t)k;
  }
  int64_t a = ecg_const_i64(s, 0), b = ecg_const_i64(l, 0), c = ecg_const_i64(d, 0);
  if (c == 0) return -1;
  double k = ceil(((double)b - (double)a) / (double)c);
  return k < 0 ? 0 : k > 1e12 ? -1 : (int64_t)k;
}

/** Range(start, limit, delta): 1-D of max(ceil((limit-start)/delta), 0) elements of
 *  start's dtype; the length is symbolic unless all three are constants. */
int ecg_infer_range(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *t[3];
  if (n->n_inputs != 3) return ecg_node_errf(e, g, n, "expected 3 inputs, got %zu", n->n_inputs);
  bool all = true;
  for (int k = 0; k < 3; k++) {
    ECG_TRY(ops_input(g, n, k, &t[k], e));
    if (t[k]->n_dims != 0 && ecg_tensor_numel(t[k]) != 1)
      return ecg_node_errf(e, g, n, "input '%s' must be a scalar", t[k]->name);
    all = all && t[k]->is_const && ops_fold_dtype(t[k]->dtype);
  }
  int64_t len = -1;
  if (all && (len = range_count(t[0], t[1], t[2])) < 0)
    return ecg_node_errf(e, g, n, "delta is zero or the range is too long");
  return ops_set_out(g, n, 0, t[0]->dtype, 1, &len, NULL, NULL, e);
}

/** Fold Range: start + i * delta (double for floats, int64 for ints). */
int ecg_eval_range(ecg_graph *g, ecg_node *n, ecg_err *e) {
  const ecg_tensor *s = ecg_node_input(g, n, 0), *d = ecg_node_input(g, n, 2);
  ecg_tensor *y = ecg_node_output(g, n, 0);
  void *buf;
  if (!s || !d || !y || !ops_fold_dtype(y->dtype)) return ecg_node_errf(e, g, n, "dtype not handled");
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  int64_t m = ecg_tensor_numel(y);
  bool f = ecg_dtype_is_float(y->dtype);
  for (int64_t i = 0; i < m; i++) {
    if (f) ecg_store_f64(buf, y->dtype, i, ecg_const_f64(s, 0) + (double)i * ecg_const_f64(d, 0));
    else ecg_store_i64(buf, y->dtype, i, ecg_const_i64(s, 0) + i * ecg_const_i64(d, 0));
  }
  return ECG_OK;
}
