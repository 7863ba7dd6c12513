/* Index operators: gathers and scatters through an index tensor (GatherND,
 * ScatterElements/Scatter, ScatterND, OneHot, MaxUnpool, Compress: One-to-Many),
 * EyeLike (One-to-Many generator), CastLike (One-to-One), ReverseSequence (Shuffle),
 * TopK and NonZero (Many-to-Many).  Shape functions, FLOP counts and the folding of
 * EyeLike and NonZero.
 *
 * Data-dependent output dims (TopK's k, OneHot's depth, MaxUnpool's output_shape,
 * Compress's condition, NonZero's count) are read from the operand when it is a
 * constant.  When it is not, a static shape the model itself declares for the output
 * (graph output or value_info, seeded by onnx2ecg before inference; as
 * ecg_tensor_refine_shape) is kept: the kernel is compiled for it, reads the operand
 * at run time where it matters (TopK's k, OneHot's depth, the condition, the data) and
 * never writes past the static shape (entries the data leaves are 0).  Otherwise the
 * dim stays symbolic and ecg-lower refuses the graph as not static. */
#include "ops_common.h"

/* The static dims the output i already carries when its rank is r (a shape the model
 * declares); false when it has none or a dim is symbolic. */
static bool declared_dims(const ecg_graph *g, const ecg_node *n, int i, int r, int64_t *d) {
  const ecg_tensor *t = ecg_node_output(g, n, i);
  if (!t || !t->shape_known || (int)t->n_dims != r || !ecg_tensor_static(t)) return false;
  ecg_tensor_dims(t, d);
  return true;
}

/* Dim k of output i, which depends on data: the declared one when the output's other
 * dims agree with od[], else symbolic. */
static int64_t dynamic_dim(const ecg_graph *g, const ecg_node *n, int i, int r, const int64_t *od, int k) {
  int64_t dd[ECG_MAX_RANK];
  if (!declared_dims(g, n, i, r, dd)) return -1;
  for (int j = 0; j < r; j++)
    if (j != k && od[j] >= 0 && dd[j] != od[j]) return -1;
  return dd[k];
}

/* Set output i with dim k symbolic (symbol sym) when od[k] < 0; other symbolic dims
 * keep the symbols of src's dims from[] (from may be NULL). */
static int set_out_dyn(ecg_graph *g, ecg_node *n, int i, int dtype, int r, const int64_t *od,
                       const ecg_tensor *src, const int *from, int k, const char *sym, ecg_err *e) {
  const char *syms[ECG_MAX_RANK] = {0};
  for (int j = 0; j < r; j++)
    if (od[j] < 0) syms[j] = j == k ? sym : from && from[j] >= 0 ? ops_sym(src, from[j]) : NULL;
  return ops_set_out_syms(g, n, i, dtype, r, od, syms, e);
}

static bool is_int_dtype(int dt) {
  return dt == ECG_INT8 || dt == ECG_INT16 || dt == ECG_INT32 || dt == ECG_INT64 || dt == ECG_UINT8 ||
         dt == ECG_UINT16 || dt == ECG_UINT32 || dt == ECG_UINT64;
}

/* The 'reduction' attribute of the scatters: none, add, mul (opset 16), max, min (18). */
static int scatter_reduction(ecg_graph *g, ecg_node *n, ecg_err *e) {
  char red[16];
  ecg_attr_s(n, "reduction", "none", red, sizeof red);
  if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min"))
    return ecg_node_errf(e, g, n, "reduction '%s' is not none, add, mul, max or min", red);
  return ECG_OK;
}

/* ---------------------------------------------------------------- gathers, scatters */

/** GatherND(data [d0..d{r-1}], indices [i0..i{q-1}] int64, batch_dims b): output
 *  indices.shape[:-1] + data.shape[b + i{q-1}:], data's dtype. */
int ecg_infer_gather_nd(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *ix;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &ix, e));
  int64_t d[ECG_MAX_RANK], id[ECG_MAX_RANK], od[ECG_MAX_RANK];
  const char *syms[ECG_MAX_RANK] = {0};
  int r = ecg_tensor_dims(x, d), q = ecg_tensor_dims(ix, id), o = 0;
  int64_t b = ecg_attr_i(n, "batch_dims", 0);
  if (ix->dtype != ECG_INT64 && ix->dtype != ECG_INT32)
    return ecg_node_errf(e, g, n, "indices '%s' must be int64, are %s", ix->name, ecg_dtype_name(ix->dtype));
  if (r < 1 || q < 1) return ecg_node_errf(e, g, n, "data and indices must have rank >= 1");
  if (b < 0 || b >= q || b >= r) return ecg_node_errf(e, g, n, "batch_dims %lld out of range", (long long)b);
  int64_t k = id[q - 1];
  if (k < 0) return ecg_node_errf(e, g, n, "the last dim of indices '%s' must be static", ix->name);
  if (b + k > r) return ecg_node_errf(e, g, n, "indices tuples of %lld after %lld batch dims index data of rank %d", (long long)k, (long long)b, r);
  for (int i = 0; i < b; i++)
    if (d[i] >= 0 && id[i] >= 0 && d[i] != id[i])
      return ecg_node_errf(e, g, n, "batch dim %d differs: data %lld, indices %lld", i, (long long)d[i], (long long)id[i]);
  if (q - 1 + r - b - k > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output rank exceeds %d", ECG_MAX_RANK);
  for (int i = 0; i < q - 1; i++) { syms[o] = ops_sym(ix, i); od[o++] = id[i]; }
  for (int i = (int)(b + k); i < r; i++) { syms[o] = ops_sym(x, i); od[o++] = d[i]; }
  return ops_set_out_syms(g, n, 0, x->dtype, o, od, syms, e);
}

/** ScatterElements / Scatter(data, indices, updates, axis): data's shape and dtype;
 *  indices and updates share one shape of data's rank. */
int ecg_infer_scatter_elements(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *ix, *u;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &ix, e));
  ECG_TRY(ops_input(g, n, 2, &u, e));
  ECG_TRY(scatter_reduction(g, n, e));
  int64_t d[ECG_MAX_RANK], id[ECG_MAX_RANK], ud[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d), q = ecg_tensor_dims(ix, id), ru = ecg_tensor_dims(u, ud), axis;
  if (ix->dtype != ECG_INT64 && ix->dtype != ECG_INT32)
    return ecg_node_errf(e, g, n, "indices '%s' must be int32 or int64, are %s", ix->name, ecg_dtype_name(ix->dtype));
  if (u->dtype != x->dtype) return ecg_node_errf(e, g, n, "updates '%s' must have data's dtype", u->name);
  if (q != r || ru != r) return ecg_node_errf(e, g, n, "indices and updates must have data's rank %d", r);
  if (!ops_axis(ecg_attr_i(n, "axis", 0), r, &axis))
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", 0), r);
  for (int i = 0; i < r; i++)
    if (id[i] >= 0 && ud[i] >= 0 && id[i] != ud[i])
      return ecg_node_errf(e, g, n, "indices '%s' and updates '%s' differ in dim %d", ix->name, u->name, i);
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}

/** ScatterND(data, indices [.., k] int64, updates indices.shape[:-1] + data.shape[k:]):
 *  data's shape and dtype. */
int ecg_infer_scatter_nd(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *ix, *u;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &ix, e));
  ECG_TRY(ops_input(g, n, 2, &u, e));
  ECG_TRY(scatter_reduction(g, n, e));
  int64_t d[ECG_MAX_RANK], id[ECG_MAX_RANK], ud[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d), q = ecg_tensor_dims(ix, id), ru = ecg_tensor_dims(u, ud);
  if (ix->dtype != ECG_INT64 && ix->dtype != ECG_INT32)
    return ecg_node_errf(e, g, n, "indices '%s' must be int64, are %s", ix->name, ecg_dtype_name(ix->dtype));
  if (u->dtype != x->dtype) return ecg_node_errf(e, g, n, "updates '%s' must have data's dtype", u->name);
  if (q < 1 || id[q - 1] < 0 || id[q - 1] > r)
    return ecg_node_errf(e, g, n, "the last dim of indices '%s' must be static and at most data's rank %d", ix->name, r);
  int64_t k = id[q - 1];
  if (ru != q - 1 + r - (int)k) return ecg_node_errf(e, g, n, "updates '%s' has rank %d, expected %lld", u->name, ru, (long long)(q - 1 + r - k));
  for (int i = 0; i < ru; i++) {
    int64_t want = i < q - 1 ? id[i] : d[k + i - (q - 1)];
    if (want >= 0 && ud[i] >= 0 && want != ud[i])
      return ecg_node_errf(e, g, n, "updates '%s' dim %d is %lld, expected %lld", u->name, i, (long long)ud[i], (long long)want);
  }
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}

/** FLOPs of the scatters: one per update element when a reduction combines them. */
int64_t ecg_flops_scatter(const ecg_graph *g, const ecg_node *n) {
  char red[16];
  ecg_attr_s(n, "reduction", "none", red, sizeof red);
  return strcmp(red, "none") ? ops_numel(ecg_node_input(g, n, 2)) : 0;
}

/* Read OneHot's depth (scalar or [1], any numeric dtype); -1 when not a constant. */
static int onehot_depth(ecg_graph *g, ecg_node *n, int64_t *depth, ecg_err *e) {
  ecg_tensor *t;
  ECG_TRY(ops_input(g, n, 1, &t, e));
  if (ecg_tensor_numel(t) != 1) return ecg_node_errf(e, g, n, "depth '%s' must hold exactly one value", t->name);
  *depth = -1;
  if (t->is_const) {
    *depth = ecg_dtype_is_float(t->dtype) ? (int64_t)ecg_const_f64(t, 0) : ecg_const_i64(t, 0);
    if (*depth < 1) return ecg_node_errf(e, g, n, "depth %lld must be positive", (long long)*depth);
  }
  return ECG_OK;
}

/** OneHot(indices [i..], depth scalar, values [off, on]): indices' shape with depth
 *  inserted at 'axis' (default -1, counted in the output), values' dtype. */
int ecg_infer_onehot(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *ix, *v;
  ECG_TRY(ops_input(g, n, 0, &ix, e));
  ECG_TRY(ops_input(g, n, 2, &v, e));
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], depth = -1;
  int from[ECG_MAX_RANK], q = ecg_tensor_dims(ix, id), axis;
  if (ecg_tensor_numel(v) >= 0 && ecg_tensor_numel(v) != 2)
    return ecg_node_errf(e, g, n, "values '%s' must hold [off_value, on_value]", v->name);
  if (q + 1 > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output rank exceeds %d", ECG_MAX_RANK);
  if (!ops_axis(ecg_attr_i(n, "axis", -1), q + 1, &axis))
    return ecg_node_errf(e, g, n, "axis %lld out of range for output rank %d", (long long)ecg_attr_i(n, "axis", -1), q + 1);
  ECG_TRY(onehot_depth(g, n, &depth, e));
  for (int i = 0, k = 0; i <= q; i++) {
    from[i] = i == axis ? -1 : k;
    od[i] = i == axis ? depth : id[k++];
  }
  if (depth < 0) od[axis] = dynamic_dim(g, n, 0, q + 1, od, axis);
  return set_out_dyn(g, n, 0, v->dtype, q + 1, od, ix, from, axis, "depth", e);
}

/** MaxUnpool(X [N, C, s..], I int64 like X, output_shape?): [N, C, (s-1)*stride -
 *  pads + kernel ..], or output_shape (at least that large), X's dtype. */
int ecg_infer_max_unpool(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *ix;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &ix, e));
  int64_t d[ECG_MAX_RANK], id[ECG_MAX_RANK], od[ECG_MAX_RANK], sh[ECG_MAX_RANK + 1];
  int r = ecg_tensor_dims(x, d), from[ECG_MAX_RANK], ns = -1;
  const int64_t *ks, *st, *pads;
  int nk = ecg_attr_ints(n, "kernel_shape", &ks), nst = ecg_attr_ints(n, "strides", &st), np = ecg_attr_ints(n, "pads", &pads);
  if (r < 3) return ecg_node_errf(e, g, n, "X '%s' must be [N, C, spatial...]", x->name);
  if (nk != r - 2) return ecg_node_errf(e, g, n, "kernel_shape must have %d values", r - 2);
  if (nst >= 0 && nst != nk) return ecg_node_errf(e, g, n, "strides must have %d values", nk);
  if (np >= 0 && np != 2 * nk) return ecg_node_errf(e, g, n, "pads must have %d values", 2 * nk);
  if (ix->dtype != ECG_INT64 || ecg_tensor_dims(ix, id) != r)
    return ecg_node_errf(e, g, n, "indices '%s' must be int64 of X's rank", ix->name);
  od[0] = d[0];
  od[1] = d[1];
  from[0] = 0;
  from[1] = 1;
  for (int i = 0; i < nk; i++) {
    int64_t s = nst > 0 ? st[i] : 1, p = np > 0 ? pads[i] + pads[i + nk] : 0;
    if (ks[i] < 1 || s < 1) return ecg_node_errf(e, g, n, "kernel_shape and strides must be positive");
    od[i + 2] = d[i + 2] < 0 ? -1 : (d[i + 2] - 1) * s - p + ks[i];
    from[i + 2] = -1;
  }
  const ecg_tensor *ts = ecg_node_input(g, n, 2);
  if (!ts) return set_out_dyn(g, n, 0, x->dtype, r, od, x, from, -1, NULL, e);
  if (ts->is_const) ns = ecg_const_ints(ts, sh, ECG_MAX_RANK + 1);
  if (ns >= 0 && ns != r) return ecg_node_errf(e, g, n, "output_shape has %d values for rank %d", ns, r);
  if (ns < 0 && !declared_dims(g, n, 0, r, sh)) {
    for (int i = 2; i < r; i++) od[i] = -1;
    return set_out_dyn(g, n, 0, x->dtype, r, od, x, from, -1, NULL, e);
  }
  for (int i = 0; i < r; i++) {
    if (od[i] >= 0 && sh[i] < od[i])
      return ecg_node_errf(e, g, n, "output_shape dim %d (%lld) is smaller than the unpooled size %lld", i, (long long)sh[i], (long long)od[i]);
    od[i] = sh[i];
  }
  return set_out_dyn(g, n, 0, x->dtype, r, od, x, from, -1, NULL, e);
}

/* ---------------------------------------------------------------- selection */

/* Compress's axis: -1 (flattened) when absent. */
static int compress_axis(ecg_graph *g, ecg_node *n, int r, int *axis, ecg_err *e) {
  *axis = -1;
  if (!ecg_attr_find(n, "axis")) return ECG_OK;
  if (!ops_axis(ecg_attr_i(n, "axis", 0), r, axis))
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", 0), r);
  return ECG_OK;
}

/** Compress(input, condition 1-D bool): along 'axis' (flattened without it) keep the
 *  slices whose condition is true (slices past the condition's length are dropped);
 *  that count is the output dim (data-dependent: see the file comment). */
int ecg_infer_compress(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *c;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &c, e));
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d), axis, from[ECG_MAX_RANK];
  if (c->n_dims != 1) return ecg_node_errf(e, g, n, "condition '%s' must be 1-D", c->name);
  ECG_TRY(compress_axis(g, n, r, &axis, e));
  int ro = axis < 0 ? 1 : r, k = axis < 0 ? 0 : axis;
  int64_t len = axis < 0 ? ops_prod(d, r) : d[axis], cnt = -1;
  for (int i = 0; i < ro; i++) { od[i] = axis < 0 ? -1 : d[i]; from[i] = i == k || axis < 0 ? -1 : i; }
  if (c->is_const && len >= 0) {
    int64_t m = ecg_tensor_numel(c);
    cnt = 0;
    for (int64_t i = 0; i < m && i < len; i++) cnt += ecg_const_i64(c, i) != 0;
  }
  od[k] = cnt >= 0 ? cnt : dynamic_dim(g, n, 0, ro, od, k);
  return set_out_dyn(g, n, 0, x->dtype, ro, od, x, from, k, "selected", e);
}

/** NonZero(x): int64 [rank(x), count of non-zero elements] (the count is
 *  data-dependent: see the file comment). */
int ecg_infer_nonzero(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t od[2] = {(int64_t)x->n_dims, -1}, m = ecg_tensor_numel(x);
  if (x->n_dims == 0) return ecg_node_errf(e, g, n, "a scalar input is not supported");
  if (x->is_const && m >= 0) {
    od[1] = 0;
    for (int64_t i = 0; i < m; i++) od[1] += ecg_const_f64(x, i) != 0;
  } else {
    od[1] = dynamic_dim(g, n, 0, 2, od, 1);
  }
  return set_out_dyn(g, n, 0, ECG_INT64, 2, od, NULL, NULL, 1, "nonzero", e);
}

/** Fold NonZero of a constant: the coordinates of the non-zero elements, row-major. */
int ecg_eval_nonzero(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  int64_t d[ECG_MAX_RANK], s[ECG_MAX_RANK], yd[2];
  void *buf;
  if (!x || !y || !x->is_const || !ops_fold_dtype(x->dtype)) return ecg_node_errf(e, g, n, "input is not a foldable constant");
  int r = ecg_tensor_dims(x, d);
  ecg_tensor_dims(y, yd);
  ops_strides(d, r, s);
  int64_t m = ops_prod(d, r), c = 0;
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  for (int64_t p = 0; p < m && c < yd[1]; p++) {
    if (ecg_const_f64(x, p) == 0) continue;
    for (int j = 0; j < r; j++) ecg_store_i64(buf, ECG_INT64, j * yd[1] + c, (p / s[j]) % d[j]);
    c++;
  }
  return ECG_OK;
}

/** TopK(X, K) (K: attribute 'k' before opset 10, a 1-element int64 input after):
 *  values and int64 indices with dim 'axis' (default -1) = K. */
int ecg_infer_topk(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK], k = -1;
  int r = ecg_tensor_dims(x, d), axis, from[ECG_MAX_RANK];
  if (r < 1 || !ops_axis(ecg_attr_i(n, "axis", -1), r, &axis))
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", -1), r);
  const ecg_tensor *kt = ecg_node_input(g, n, 1);
  if (kt) {
    if (ecg_tensor_numel(kt) >= 0 && ecg_tensor_numel(kt) != 1) return ecg_node_errf(e, g, n, "K '%s' must hold one value", kt->name);
    if (kt->is_const) k = ecg_const_i64(kt, 0);
  } else {
    if (!ecg_attr_find(n, "k")) return ecg_node_errf(e, g, n, "missing K");
    k = ecg_attr_i(n, "k", 0);
  }
  for (int i = 0; i < r; i++) from[i] = i == axis ? -1 : i;
  if (kt && !kt->is_const) { /* a run-time K: the declared dims of both outputs must agree */
    int64_t k0 = dynamic_dim(g, n, 0, r, d, axis), k1 = ecg_node_output(g, n, 1) ? dynamic_dim(g, n, 1, r, d, axis) : k0;
    d[axis] = k0 == k1 && (d[axis] < 0 || k0 <= d[axis]) ? k0 : -1;
  } else {
    if (k < 0) return ecg_node_errf(e, g, n, "K %lld must not be negative", (long long)k);
    if (d[axis] >= 0 && k > d[axis]) return ecg_node_errf(e, g, n, "K %lld exceeds dim %lld", (long long)k, (long long)d[axis]);
    d[axis] = k;
  }
  ECG_TRY(set_out_dyn(g, n, 0, x->dtype, r, d, x, from, axis, "K", e));
  return set_out_dyn(g, n, 1, ECG_INT64, r, d, x, from, axis, "K", e);
}

/* ---------------------------------------------------------------- others */

/** EyeLike(x 2-D): x's shape, dtype from attribute 'dtype' (default x's). */
int ecg_infer_eyelike(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK], dt = ecg_attr_i(n, "dtype", x->dtype);
  if (ecg_tensor_dims(x, d) != 2) return ecg_node_errf(e, g, n, "input '%s' must be 2-D", x->name);
  if (dt <= 0 || dt > ECG_BFLOAT16 || dt == ECG_STRING) return ecg_node_errf(e, g, n, "invalid dtype %lld", (long long)dt);
  return ecg_set_output(g, n, 0, (int)dt, 2, d, x);
}

/** Fold EyeLike once its input's shape is static: ones on diagonal 'k'. */
int ecg_eval_eyelike(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *y = ecg_node_output(g, n, 0);
  int64_t d[2], k = ecg_attr_i(n, "k", 0);
  void *buf;
  if (!y || !ecg_tensor_static(y) || !ops_fold_dtype(y->dtype) || y->dtype == ECG_FLOAT16)
    return ecg_node_errf(e, g, n, "output not foldable");
  ecg_tensor_dims(y, d);
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  for (int64_t i = 0; i < d[0]; i++)
    if (i + k >= 0 && i + k < d[1]) ecg_store_i64(buf, y->dtype, i * d[1] + i + k, 1);
  return ECG_OK;
}

/** CastLike(input, target_type): input's shape, target_type's dtype. */
int ecg_infer_castlike(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *t;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &t, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  return ecg_set_output(g, n, 0, t->dtype, r, d, x);
}

/** ReverseSequence(x rank >= 2, sequence_lens [batch] int64): x's shape and dtype;
 *  batch_axis (default 1) and time_axis (default 0) are 0 or 1 and differ. */
int ecg_infer_reverse_sequence(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *s;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &s, e));
  int64_t d[ECG_MAX_RANK], sd[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  int64_t ba = ecg_attr_i(n, "batch_axis", 1), ta = ecg_attr_i(n, "time_axis", 0);
  if (r < 2) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 2", x->name);
  if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
    return ecg_node_errf(e, g, n, "batch_axis and time_axis must be 0 and 1 in some order");
  if (!is_int_dtype(s->dtype) || ecg_tensor_dims(s, sd) != 1 || (sd[0] >= 0 && d[ba] >= 0 && sd[0] != d[ba]))
    return ecg_node_errf(e, g, n, "sequence_lens '%s' must be an integer vector of the batch size", s->name);
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}
