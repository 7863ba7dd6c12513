/* Reductions (Many-to-Many): ReduceMean/Sum/Max/Min/Prod/L2/SumSquare with axes as an
 * attribute (ReduceSum before opset 13, the others before 18) or as the optional
 * second input, keepdims and noop_with_empty_axes; ArgMax/ArgMin.  Reference
 * evaluation of the reductions for constant folding. */
#include <math.h>

#include "ops_common.h"

/* Which dims of a rank-r input node n reduces: red[i]; *noop when the op is the
 * identity (empty axes with noop_with_empty_axes); *dynamic when the axes input is
 * not a constant (the reduced dims are then unknown). */
static int reduce_axes(ecg_graph *g, ecg_node *n, int r, bool *red, bool *noop, bool *dynamic, ecg_err *e) {
  int64_t axes[ECG_MAX_RANK + 1];
  const int64_t *aa;
  int na = ecg_attr_ints(n, "axes", &aa);
  *noop = *dynamic = false;
  if (na > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "too many axes (%d)", na);
  if (na >= 0) {
    memcpy(axes, aa, sizeof(int64_t) * (size_t)na);
  } else {
    const ecg_tensor *t = ecg_node_input(g, n, 1);
    if (t && !t->is_const) { *dynamic = true; return ECG_OK; }
    ECG_TRY(ops_const_input(g, n, 1, axes, ECG_MAX_RANK + 1, &na, "reduction axes", e));
    if (na > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "too many axes (%d)", na);
  }
  for (int i = 0; i < r; i++) red[i] = na <= 0; /* no axes: reduce everything */
  if (na <= 0 && ecg_attr_i(n, "noop_with_empty_axes", 0)) {
    *noop = true;
    for (int i = 0; i < r; i++) red[i] = false;
  }
  for (int k = 0; k < na; k++) {
    int ax;
    if (!ops_axis(axes[k], r, &ax)) return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)axes[k], r);
    if (red[ax]) return ecg_node_errf(e, g, n, "axis %lld repeated", (long long)axes[k]);
    red[ax] = true;
  }
  return ECG_OK;
}

/* Set output 0 of n: X's dims with red[] dims set to 1 (keepdims) or dropped. */
static int reduced_out(ecg_graph *g, ecg_node *n, const ecg_tensor *x, const bool *red, bool keep, int dtype, ecg_err *e) {
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int from[ECG_MAX_RANK], r = ecg_tensor_dims(x, d), k = 0;
  for (int i = 0; i < r; i++) {
    if (red[i] && !keep) continue;
    od[k] = red[i] ? 1 : d[i];
    from[k++] = red[i] ? -1 : i;
  }
  return ops_set_out(g, n, 0, dtype, k, od, x, from, e);
}

/** ReduceMean/Sum/Max/Min/Prod/L2/SumSquare: axes attribute or input, keepdims (default
 *  1), noop_with_empty_axes; output dtype = input's. */
int ecg_infer_reduce(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  if (n->n_inputs < 1 || n->n_inputs > 2) return ecg_node_errf(e, g, n, "expected 1 or 2 inputs, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  bool red[ECG_MAX_RANK], noop, dynamic, keep = ecg_attr_i(n, "keepdims", 1) != 0;
  int r = (int)x->n_dims;
  ECG_TRY(reduce_axes(g, n, r, red, &noop, &dynamic, e));
  if (dynamic) { /* rank known only with keepdims: every dim may be reduced */
    if (!keep) { /* rank = r - number of axes (all dims when the list is empty and not a no-op) */
      int na = ops_runtime_operand(g, n, 1);
      if (na < 0) return ecg_node_errf(e, g, n, "axes input '%s' is not a constant of known length: a dynamic reduction with keepdims=0 is not supported",
                                      ecg_node_input(g, n, 1)->name);
      int ro = na > 0 ? r - na : (ecg_attr_i(n, "noop_with_empty_axes", 0) ? r : 0);
      return ops_set_out_unknown(g, n, 0, x->dtype, ro, e);
    }
    int64_t od[ECG_MAX_RANK];
    for (int i = 0; i < r; i++) od[i] = x->dims[i]->value == 1 ? 1 : -1;
    return ops_set_out(g, n, 0, x->dtype, r, od, NULL, NULL, e);
  }
  return reduced_out(g, n, x, red, keep, x->dtype, e);
}

/** ArgMax/ArgMin: 'axis' (default 0), keepdims (default 1), select_last_index; int64. */
int ecg_infer_argreduce(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int r = (int)x->n_dims, ax;
  int64_t a = ecg_attr_i(n, "axis", 0);
  if (!ops_axis(a, r, &ax)) return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)a, r);
  bool red[ECG_MAX_RANK] = {0};
  red[ax] = true;
  return reduced_out(g, n, x, red, ecg_attr_i(n, "keepdims", 1) != 0, ECG_INT64, e);
}

/* Accumulate value (v, vi) into accumulator slot (f, i) for reduction op. */
static void acc_step(ecg_op_id op, bool isf, double *f, int64_t *i, double v, int64_t vi) {
  switch (op) {
  case ECG_OP_ReduceMax:
    if (isf ? v > *f || v != v : vi > *i) { *f = v; *i = vi; }
    break;
  case ECG_OP_ReduceMin:
    if (isf ? v < *f || v != v : vi < *i) { *f = v; *i = vi; }
    break;
  case ECG_OP_ReduceProd: *f *= v; *i = (int64_t)((uint64_t)*i * (uint64_t)vi); break;
  case ECG_OP_ReduceL2: case ECG_OP_ReduceSumSquare:
    *f += v * v; *i = (int64_t)((uint64_t)*i + (uint64_t)vi * (uint64_t)vi); break;
  default: *f += v; *i = (int64_t)((uint64_t)*i + (uint64_t)vi); break; /* Sum, Mean */
  }
}

/** Fold ReduceMean/Sum/Max/Min/Prod/L2/SumSquare (double for floats, int64 for ints). */
int ecg_eval_reduce(ecg_graph *g, ecg_node *n, ecg_err *e) {
  const ecg_op_info *op = ecg_node_op(n);
  ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  if (!op || !x || !y || !x->is_const || !ops_fold_dtype(x->dtype) || !ops_fold_dtype(y->dtype))
    return ecg_node_errf(e, g, n, "dtype not handled");
  int64_t d[ECG_MAX_RANK], kd[ECG_MAX_RANK], ks[ECG_MAX_RANK], idx[ECG_MAX_RANK] = {0};
  int r = ecg_tensor_dims(x, d);
  bool red[ECG_MAX_RANK], noop, dynamic, isf = ecg_dtype_is_float(x->dtype);
  ECG_TRY(reduce_axes(g, n, r, red, &noop, &dynamic, e));
  if (dynamic) return ecg_node_errf(e, g, n, "axes are not constant");
  for (int i = 0; i < r; i++) kd[i] = red[i] ? 1 : d[i];
  ops_strides(kd, r, ks);
  for (int i = 0; i < r; i++) if (red[i]) ks[i] = 0;
  int64_t nin = ops_prod(d, r), nout = ops_prod(kd, r), cnt = nout ? nin / nout : 0;
  double *af = malloc(sizeof(double) * (size_t)(nout + 1));
  int64_t *ai = malloc(sizeof(int64_t) * (size_t)(nout + 1));
  void *buf = NULL;
  int rc = af && ai ? ECG_OK : ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK) rc = ops_alloc(g, n, 0, &buf, e);
  if (rc != ECG_OK) { free(af); free(ai); return rc; }
  bool mx = op->id == ECG_OP_ReduceMax, mn = op->id == ECG_OP_ReduceMin, pr = op->id == ECG_OP_ReduceProd;
  for (int64_t o = 0; o < nout; o++) {
    af[o] = mx ? -INFINITY : mn ? INFINITY : pr ? 1 : 0;
    ai[o] = mx ? INT64_MIN : mn ? INT64_MAX : pr ? 1 : 0;
  }
  int64_t off = 0;
  for (int64_t p = 0; p < nin; p++) {
    acc_step(op->id, isf, &af[off], &ai[off], ecg_const_f64(x, p), ecg_const_i64(x, p));
    for (int j = r - 1; j >= 0; j--) {
      off += ks[j];
      if (++idx[j] < d[j]) break;
      off -= ks[j] * d[j];
      idx[j] = 0;
    }
  }
  bool fout = ecg_dtype_is_float(y->dtype);
  for (int64_t o = 0; o < nout; o++) {
    if (op->id == ECG_OP_ReduceMean && cnt) { af[o] /= (double)cnt; ai[o] /= cnt; }
    if (op->id == ECG_OP_ReduceL2) { af[o] = sqrt(af[o]); ai[o] = (int64_t)sqrt((double)ai[o]); }
    if (fout) ecg_store_f64(buf, y->dtype, o, af[o]);
    else ecg_store_i64(buf, y->dtype, o, ai[o]);
  }
  free(af);
  free(ai);
  return ECG_OK;
}
