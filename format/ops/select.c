/* Selection operators whose output sizes depend on the data (Many-to-Many, DNNFusion
 * Table 3.2): NonMaxSuppression, Unique, TfIdfVectorizer.  Shape functions only (no
 * folding).
 *
 * As with Compress/NonZero (format/ops/index.c), a data-dependent output dim is taken
 * from the static shape the model declares for that output (graph output or
 * value_info, seeded by onnx2ecg before inference; ecg_tensor_refine_shape); the
 * kernel is compiled for it and never writes past it (rows the data leaves are 0).
 * Without a declared shape the dim stays symbolic and ecg-lower refuses the graph as
 * not static. */
#include "ops_common.h"

/* Dim k of output i when the model declares a static shape of rank r for it whose
 * other dims agree with od[] (od[j] < 0: any); -1 otherwise. */
static int64_t declared_dim(const ecg_graph *g, const ecg_node *n, int i, int r, const int64_t *od, int k) {
  const ecg_tensor *t = ecg_node_output(g, n, i);
  int64_t d[ECG_MAX_RANK];
  if (!t || !t->shape_known || (int)t->n_dims != r || !ecg_tensor_static(t)) return -1;
  ecg_tensor_dims(t, d);
  for (int j = 0; j < r; j++)
    if (j != k && od[j] >= 0 && d[j] != od[j]) return -1;
  return d[k];
}

/* Output i with dims od[0..r); dim k (when < 0) gets symbol sym. */
static int set_out_sel(ecg_graph *g, ecg_node *n, int i, int dtype, int r, const int64_t *od, int k,
                       const char *sym, ecg_err *e) {
  const char *syms[ECG_MAX_RANK] = {0};
  if (k >= 0 && k < r && od[k] < 0) syms[k] = sym;
  return ops_set_out_syms(g, n, i, dtype, r, od, syms, e);
}

/** NonMaxSuppression(boxes [B,N,4], scores [B,C,N], max_output_boxes_per_class?,
 *  iou_threshold?, score_threshold?): selected_indices int64 [M,3] (rows
 *  [batch, class, box]); M depends on the data and is the model's declared dim. */
int ecg_infer_nms(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *bx, *sc;
  ECG_TRY(ops_input(g, n, 0, &bx, e));
  ECG_TRY(ops_input(g, n, 1, &sc, e));
  int64_t bd[ECG_MAX_RANK], sd[ECG_MAX_RANK];
  if (ecg_tensor_dims(bx, bd) != 3 || (bd[2] >= 0 && bd[2] != 4))
    return ecg_node_errf(e, g, n, "boxes '%s' must be [batches, boxes, 4]", bx->name);
  if (ecg_tensor_dims(sc, sd) != 3) return ecg_node_errf(e, g, n, "scores '%s' must be [batches, classes, boxes]", sc->name);
  if ((bd[0] >= 0 && sd[0] >= 0 && bd[0] != sd[0]) || (bd[1] >= 0 && sd[2] >= 0 && bd[1] != sd[2]))
    return ecg_node_errf(e, g, n, "boxes and scores disagree on batches or boxes");
  int64_t cpb = ecg_attr_i(n, "center_point_box", 0);
  if (cpb != 0 && cpb != 1) return ecg_node_errf(e, g, n, "center_point_box %lld must be 0 or 1", (long long)cpb);
  for (int i = 2; i < 5; i++) {
    const ecg_tensor *t = ecg_node_input(g, n, i);
    if (t && ecg_tensor_numel(t) >= 0 && ecg_tensor_numel(t) != 1)
      return ecg_node_errf(e, g, n, "input '%s' must hold one value", t->name);
  }
  int64_t od[2] = {-1, 3};
  od[0] = declared_dim(g, n, 0, 2, od, 0);
  return set_out_sel(g, n, 0, ECG_INT64, 2, od, 0, "selected", e);
}

/** Unique(X; axis?, sorted=1): Y (X's dims with dim 'axis' = U; 1-D [U] without axis),
 *  indices / counts int64 [U], inverse_indices int64 [X's dim 'axis', or numel]; U
 *  (the number of unique elements or slices) is the model's declared dim. */
int ecg_infer_unique(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d), axis = -1, ry = 1;
  if (ecg_attr_find(n, "axis")) {
    if (!ops_axis(ecg_attr_i(n, "axis", 0), r, &axis))
      return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", 0), r);
    ry = r;
  }
  int64_t len = axis < 0 ? ops_prod(d, r) : d[axis];
  for (int i = 0; i < ry; i++) od[i] = axis < 0 ? -1 : d[i];
  int k = axis < 0 ? 0 : axis;
  od[k] = -1;
  int64_t u = declared_dim(g, n, 0, ry, od, k), one = -1;
  if (u < 0) u = declared_dim(g, n, 1, 1, &one, 0);
  if (u < 0) u = declared_dim(g, n, 3, 1, &one, 0);
  if (u >= 0 && len >= 0 && (u > len || (u == 0 && len > 0))) u = -1;
  od[k] = u;
  ECG_TRY(set_out_sel(g, n, 0, x->dtype, ry, od, k, "unique", e));
  ECG_TRY(set_out_sel(g, n, 1, ECG_INT64, 1, &u, 0, "unique", e));
  ECG_TRY(set_out_sel(g, n, 2, ECG_INT64, 1, &len, -1, NULL, e));
  return set_out_sel(g, n, 3, ECG_INT64, 1, &u, 0, "unique", e);
}

/* TfIdfVectorizer's output width: max(ngram_indexes) + 1 (0 when empty); -1 on bad ones. */
static int64_t tfidf_width(const ecg_node *n) {
  const int64_t *ix;
  int k = ecg_attr_ints(n, "ngram_indexes", &ix);
  int64_t w = 0;
  for (int i = 0; i < k; i++) {
    if (ix[i] < 0) return -1;
    if (ix[i] + 1 > w) w = ix[i] + 1;
  }
  return w;
}

/** TfIdfVectorizer(X [C] or [N,C], integer or string): float [O] or [N,O] with
 *  O = max(ngram_indexes) + 1 (static: from the attributes). */
int ecg_infer_tfidf(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  if (r != 1 && r != 2) return ecg_node_errf(e, g, n, "input '%s' must be [C] or [N, C]", x->name);
  int64_t w = tfidf_width(n);
  if (w < 0) return ecg_node_errf(e, g, n, "negative ngram_indexes");
  int64_t od[2] = {r == 2 ? d[0] : w, w};
  int from[2] = {0, -1};
  return ops_set_out(g, n, 0, ECG_FLOAT, r, od, x, from, e);
}
