/* Reductions (Many-to-Many): ReduceMean/Sum/Max/Min/Prod/L2/SumSquare/L1/LogSum/LogSumExp
 * with axes as an attribute (ReduceSum before opset 13, the others before 18) or as the
 * optional second input, keepdims and noop_with_empty_axes; ArgMax/ArgMin.  The one
 * table of what each reduction computes (ecg.h "reductions"), and the reference
 * evaluation for constant folding derived from it. */
#include <math.h>
#include <stdint.h>

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
    if (na > 0) memcpy(axes, aa, sizeof(int64_t) * (size_t)na); /* aa is NULL for an empty list */
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

/* ---------------------------------------------------------------- the reduction table */

/* The primitives, each once: its C text (positional printf formats) here, its evaluation
 * in map_f / ecg_reduction_step_* / ecg_reduction_finish_* below. */
#define C_MAP_NONE "%1$s"
#define C_MAP_ABS "(%1$s < 0 ? -%1$s : %1$s)"
#define C_MAP_SQUARE "%1$s * %1$s"
#define C_MAP_EXP "exp(%1$s)"
#define C_COMB_SUM "%1$s + %2$s"
#define C_COMB_PROD "%1$s * %2$s"
#define C_COMB_MAX "ecg_max(%1$s, %2$s)" /* NaN propagates (lowered runtime's ecg_max) */
#define C_COMB_MIN "ecg_min(%1$s, %2$s)"
#define C_FIN_NONE "%1$s"
#define C_FIN_MEAN "%1$s / %2$s"
#define C_FIN_SQRT "sqrt(%1$s)"
#define C_FIN_LOG "log(%1$s)"

#define RED(op, map, comb, fin)                                                                    \
  {ECG_OP_##op, ECG_RED_MAP_##map, ECG_RED_##comb, ECG_RED_FIN_##fin, C_MAP_##map, C_COMB_##comb, C_FIN_##fin}
static const ecg_reduction REDUCTIONS[] = {
  RED(ReduceSum, NONE, SUM, NONE),   RED(ReduceMean, NONE, SUM, MEAN),      RED(ReduceMax, NONE, MAX, NONE),
  RED(ReduceMin, NONE, MIN, NONE),   RED(ReduceProd, NONE, PROD, NONE),     RED(ReduceL1, ABS, SUM, NONE),
  RED(ReduceL2, SQUARE, SUM, SQRT),  RED(ReduceSumSquare, SQUARE, SUM, NONE), RED(ReduceLogSum, NONE, SUM, LOG),
  RED(ReduceLogSumExp, EXP, SUM, LOG),
};
#undef RED

const ecg_reduction *ecg_reduction_of(ecg_op_id op) {
  for (size_t i = 0; i < sizeof REDUCTIONS / sizeof *REDUCTIONS; i++)
    if (REDUCTIONS[i].op == op) return &REDUCTIONS[i];
  return NULL;
}

int ecg_reduced_dims(const ecg_graph *g, const ecg_node *n, int r, int *red) {
  bool rb[ECG_MAX_RANK], noop, dynamic;
  ecg_err e = {0};
  if (r < 0 || r > ECG_MAX_RANK) return -1;
  /* reduce_axes reports through e only; it changes neither g nor n */
  if (reduce_axes((ecg_graph *)g, (ecg_node *)n, r, rb, &noop, &dynamic, &e) != ECG_OK || dynamic) return -1;
  for (int i = 0; i < r; i++) red[i] = rb[i];
  return 0;
}

int ecg_row_reduction(const ecg_graph *g, const ecg_node *n, int *a) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  if (!op || !ecg_reduction_of(op->id) || n->n_outputs != 1 || ecg_attr_i(n, "keepdims", 1) == 0) return 0;
  const ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  if (!x || !y || x->dtype != ECG_FLOAT || y->dtype != ECG_FLOAT) return 0;
  int64_t xd[ECG_MAX_RANK], yd[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, xd), red[ECG_MAX_RANK];
  if (r < 1 || ecg_tensor_dims(y, yd) != r || ecg_tensor_numel(x) <= 0 || ecg_reduced_dims(g, n, r, red)) return 0;
  int first = r;
  for (int d = r - 1; d >= 0 && red[d]; d--) first = d;
  if (first == r) return 0;
  for (int d = 0; d < first; d++) if (red[d]) return 0; /* not a trailing range */
  for (int d = 0; d < r; d++) if (yd[d] != (d < first ? xd[d] : 1)) return 0;
  *a = first;
  return 1;
}

double ecg_reduction_identity_f(const ecg_reduction *r) {
  return r->combine == ECG_RED_MAX ? -INFINITY : r->combine == ECG_RED_MIN ? INFINITY : r->combine == ECG_RED_PROD;
}

int64_t ecg_reduction_identity_i(const ecg_reduction *r) {
  return r->combine == ECG_RED_MAX ? INT64_MIN : r->combine == ECG_RED_MIN ? INT64_MAX : r->combine == ECG_RED_PROD;
}

const char *ecg_reduction_identity_c(const ecg_reduction *r, int dtype) {
  if (r->combine == ECG_RED_SUM) return "0";
  if (r->combine == ECG_RED_PROD) return "1";
  bool hi = r->combine == ECG_RED_MIN;
  switch (dtype) {
  case ECG_FLOAT: case ECG_DOUBLE: case ECG_FLOAT16: case ECG_BFLOAT16: return hi ? "INFINITY" : "-INFINITY";
  case ECG_INT8: return hi ? "INT8_MAX" : "INT8_MIN";
  case ECG_INT16: return hi ? "INT16_MAX" : "INT16_MIN";
  case ECG_INT32: return hi ? "INT32_MAX" : "INT32_MIN";
  case ECG_INT64: return hi ? "INT64_MAX" : "INT64_MIN";
  case ECG_UINT8: case ECG_BOOL: return hi ? "UINT8_MAX" : "0";
  case ECG_UINT16: return hi ? "UINT16_MAX" : "0";
  case ECG_UINT32: return hi ? "UINT32_MAX" : "0";
  case ECG_UINT64: return hi ? "UINT64_MAX" : "0";
  default: return NULL;
  }
}

static double map_f(ecg_red_map m, double x) {
  switch (m) {
  case ECG_RED_MAP_ABS: return fabs(x);
  case ECG_RED_MAP_SQUARE: return x * x;
  case ECG_RED_MAP_EXP: return exp(x);
  default: return x;
  }
}

double ecg_reduction_step_f(const ecg_reduction *r, double acc, double x) {
  double v = map_f(r->map, x);
  switch (r->combine) {
  case ECG_RED_PROD: return acc * v;
  case ECG_RED_MAX: return acc > v || acc != acc ? acc : v; /* as ecg_max: NaN propagates */
  case ECG_RED_MIN: return acc < v || acc != acc ? acc : v;
  default: return acc + v;
  }
}

int64_t ecg_reduction_step_i(const ecg_reduction *r, int64_t acc, int64_t x) {
  uint64_t v = r->map == ECG_RED_MAP_ABS ? (uint64_t)(x < 0 ? -(uint64_t)x : (uint64_t)x)
               : r->map == ECG_RED_MAP_SQUARE ? (uint64_t)x * (uint64_t)x
               : r->map == ECG_RED_MAP_EXP ? (uint64_t)(int64_t)exp((double)x) : (uint64_t)x;
  switch (r->combine) {
  case ECG_RED_PROD: return (int64_t)((uint64_t)acc * v);
  case ECG_RED_MAX: return acc > (int64_t)v ? acc : (int64_t)v;
  case ECG_RED_MIN: return acc < (int64_t)v ? acc : (int64_t)v;
  default: return (int64_t)((uint64_t)acc + v);
  }
}

double ecg_reduction_finish_f(const ecg_reduction *r, double acc, int64_t count) {
  switch (r->fin) {
  case ECG_RED_FIN_MEAN: return count ? acc / (double)count : acc;
  case ECG_RED_FIN_SQRT: return sqrt(acc);
  case ECG_RED_FIN_LOG: return log(acc);
  default: return acc;
  }
}

int64_t ecg_reduction_finish_i(const ecg_reduction *r, int64_t acc, int64_t count) {
  switch (r->fin) {
  case ECG_RED_FIN_MEAN: return count ? acc / count : acc;
  case ECG_RED_FIN_SQRT: return (int64_t)sqrt((double)acc);
  case ECG_RED_FIN_LOG: return (int64_t)log((double)acc);
  default: return acc;
  }
}

/** Fold every Reduce* from its table row (double for floats, int64 for ints). */
int ecg_eval_reduce(ecg_graph *g, ecg_node *n, ecg_err *e) {
  const ecg_op_info *op = ecg_node_op(n);
  const ecg_reduction *rd = op ? ecg_reduction_of(op->id) : NULL;
  ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  if (!rd || !x || !y || !x->is_const || !ops_fold_dtype(x->dtype) || !ops_fold_dtype(y->dtype))
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
  for (int64_t o = 0; o < nout; o++) {
    af[o] = ecg_reduction_identity_f(rd);
    ai[o] = ecg_reduction_identity_i(rd);
  }
  int64_t off = 0;
  for (int64_t p = 0; p < nin; p++) {
    if (isf) af[off] = ecg_reduction_step_f(rd, af[off], ecg_const_f64(x, p));
    else ai[off] = ecg_reduction_step_i(rd, ai[off], ecg_const_i64(x, p));
    for (int j = r - 1; j >= 0; j--) {
      off += ks[j];
      if (++idx[j] < d[j]) break;
      off -= ks[j] * d[j];
      idx[j] = 0;
    }
  }
  bool fout = ecg_dtype_is_float(y->dtype);
  for (int64_t o = 0; o < nout; o++) {
    double f = isf ? af[o] : (double)ai[o];
    if (fout) ecg_store_f64(buf, y->dtype, o, ecg_reduction_finish_f(rd, f, cnt));
    else ecg_store_i64(buf, y->dtype, o, isf ? (int64_t)ecg_reduction_finish_f(rd, f, cnt) : ecg_reduction_finish_i(rd, ai[o], cnt));
  }
  free(af);
  free(ai);
  return ECG_OK;
}
