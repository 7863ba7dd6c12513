/* ecg-rewrite pass "bnfold": BatchNormalization folded into the operator before it.
 *
 *   Y = BN(P(x, W, b)) with s[c] = scale[c] / sqrt(var[c] + epsilon)
 *     = P(x, W', b'),   W' = W scaled by s along P's output-channel axis,
 *                       b'[c] = b[c] * s[c] + bias[c] - mean[c] * s[c]
 *
 * P is Conv or ConvTranspose (bias input 2), Gemm (bias C, beta folded in; C a scalar,
 * [N] or [1,N]) or a 2-D MatMul with a constant right operand (it becomes a Gemm with a
 * bias).  Conditions: P's output is read by the BN only, P's weights, bias and the BN's
 * four parameters are float32 constants, the BN is in inference mode (training_mode 0,
 * spatial 1) and its channel axis (1) is P's output-channel axis.  W and b get new
 * tensors (the old ones may be shared); P then writes the BN's output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"

/* Where output channel c lives in P's weight tensor W (flat index i):
 * c = (i / inner) % count + ((i / (inner * count)) / per_group) * count. */
typedef struct { int64_t inner, count, per_group; } chan_map;

static bool const_f32(const ecg_tensor *t, int64_t numel) {
  return t && t->is_const && t->dtype == ECG_FLOAT && ecg_tensor_numel(t) == numel &&
         t->data.len == (size_t)numel * sizeof(float);
}

/* The weight layout of producer p (op id) for C output channels; false if not foldable. */
static bool weight_map(const ecg_graph *g, const ecg_node *p, ecg_op_id id, int64_t C, chan_map *m, int *w_in) {
  const ecg_tensor *w = ecg_node_input(g, p, 1);
  int64_t d[ECG_MAX_RANK];
  int r = w && ecg_tensor_static(w) ? ecg_tensor_dims(w, d) : -1;
  if (r < 2 || r > ECG_MAX_RANK || !const_f32(w, ecg_tensor_numel(w))) return false;
  int64_t rest = ecg_tensor_numel(w) / (d[0] * d[1]);
  *w_in = 1;
  if (id == ECG_OP_Conv) {
    *m = (chan_map){d[1] * rest, d[0], 1};
    return d[0] == C;
  }
  if (id == ECG_OP_ConvTranspose) {
    int64_t groups = ecg_attr_i(p, "group", 1);
    if (groups < 1 || d[0] % groups || d[1] * groups != C) return false;
    *m = (chan_map){rest, d[1], d[0] / groups};
    return true;
  }
  if (r != 2) return false;
  if (id == ECG_OP_Gemm && ecg_attr_i(p, "transB", 0)) {
    *m = (chan_map){d[1], d[0], 1};
    return d[0] == C;
  }
  *m = (chan_map){1, d[1], d[0]};
  return d[1] == C;
}

/* The bias of p per output channel into b[C] (zeros when absent; Gemm: beta * C).
 * False when it exists but is not a float32 constant of a foldable shape. */
static bool read_bias(const ecg_graph *g, const ecg_node *p, ecg_op_id id, int64_t C, float *b) {
  const ecg_tensor *t = ecg_node_input(g, p, 2);
  for (int64_t c = 0; c < C; c++) b[c] = 0;
  if (!t || id == ECG_OP_MatMul) return true;
  int64_t numel = ecg_tensor_numel(t), d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(t, d);
  if (numel != C && !(id == ECG_OP_Gemm && numel == 1)) return false;
  if (r < 0 || r > ECG_MAX_RANK || (r >= 1 && d[r - 1] != numel) || !const_f32(t, numel)) return false;
  float beta = id == ECG_OP_Gemm ? ecg_attr_f(p, "beta", 1.0f) : 1.0f;
  for (int64_t c = 0; c < C; c++) b[c] = beta * (float)ecg_const_f64(t, numel == 1 ? 0 : c);
  return true;
}

/* Fold BN node bi into its producer when every condition holds; *done says whether. */
static int fold_one(ecg_graph *g, int bi, rw_stats *st, bool *done) {
  ecg_node *bn = g->nodes[bi];
  *done = false;
  if (bn->n_inputs != 5 || bn->inputs[0] < 0 || ecg_attr_i(bn, "training_mode", 0) || !ecg_attr_i(bn, "spatial", 1))
    return ECG_OK;
  for (size_t k = 1; k < bn->n_outputs; k++)
    if (bn->outputs[k] >= 0 && rw_uses(g, bn->outputs[k]) > 0) return ECG_OK;
  int x = bn->inputs[0], pi = rw_producer(g, x);
  if (pi < 0 || rw_uses(g, x) != 1 || g->nodes[pi]->outputs[0] != x) return ECG_OK;
  ecg_node *p = g->nodes[pi];
  ecg_op_id id = rw_op(p);
  if (id != ECG_OP_Conv && id != ECG_OP_ConvTranspose && id != ECG_OP_Gemm && id != ECG_OP_MatMul) return ECG_OK;
  int64_t xd[ECG_MAX_RANK];
  int xr = ecg_tensor_static(g->tensors[x]) ? ecg_tensor_dims(g->tensors[x], xd) : -1;
  if (xr < 2 || (id != ECG_OP_Conv && id != ECG_OP_ConvTranspose && xr != 2)) return ECG_OK;
  if (id == ECG_OP_MatMul && (p->opset < 7 || ecg_tensor_rank(ecg_node_input(g, p, 0)) != 2)) return ECG_OK;
  int64_t C = xd[1];
  for (int k = 1; k < 5; k++)
    if (!const_f32(ecg_node_input(g, bn, k), C)) return ECG_OK;
  chan_map m;
  int w_in;
  if (!weight_map(g, p, id, C, &m, &w_in)) return ECG_OK;
  const ecg_tensor *w = ecg_node_input(g, p, w_in);
  int64_t wn = ecg_tensor_numel(w);
  float *s = malloc(sizeof *s * (size_t)C), *b = malloc(sizeof *b * (size_t)C), *wv = malloc(sizeof *wv * (size_t)wn);
  int rc = ECG_OK;
  if (!s || !b || !wv) { rc = ECG_ERR_INTERNAL; goto out; }
  if (!read_bias(g, p, id, C, b)) goto out;
  double eps = ecg_attr_f(bn, "epsilon", 1e-5f);
  const ecg_tensor *sc = ecg_node_input(g, bn, 1), *sh = ecg_node_input(g, bn, 2), *mean = ecg_node_input(g, bn, 3),
                   *var = ecg_node_input(g, bn, 4);
  for (int64_t c = 0; c < C; c++) {
    double sv = ecg_const_f64(sc, c) / sqrt(ecg_const_f64(var, c) + eps);
    s[c] = (float)sv;
    b[c] = (float)(b[c] * sv + ecg_const_f64(sh, c) - ecg_const_f64(mean, c) * sv);
  }
  for (int64_t i = 0; i < wn; i++) {
    int64_t c = (i / m.inner) % m.count + ((i / (m.inner * m.count)) / m.per_group) * m.count;
    wv[i] = (float)ecg_const_f64(w, i) * s[c];
  }
  int64_t wd[ECG_MAX_RANK];
  int wr = ecg_tensor_dims(w, wd);
  int wt = rw_add_const_f32(g, w->name, wr, wd, wv), bt = rw_add_const_f32(g, bn->name[0] ? bn->name : "bn", 1, &C, b);
  if (wt < 0 || bt < 0 || rw_set_input(p, w_in, wt) || rw_set_input(p, 2, bt)) { rc = ECG_ERR_INTERNAL; goto out; }
  if (id == ECG_OP_Gemm) ecg_attr_remove(p, "beta");
  if (id == ECG_OP_MatMul) {
    free(p->op_type);
    p->op_type = strdup(ecg_op_get(ECG_OP_Gemm)->name);
    if (!p->op_type) { rc = ECG_ERR_INTERNAL; goto out; }
  }
  p->outputs[0] = bn->outputs[0];
  for (size_t k = 0; k < bn->n_outputs; k++) bn->outputs[k] = -1;
  rw_count(st, id == ECG_OP_Conv ? "bn->conv" : id == ECG_OP_ConvTranspose ? "bn->convtranspose"
                : id == ECG_OP_Gemm ? "bn->gemm" : "bn->matmul");
  *done = true;
out:
  free(s);
  free(b);
  free(wv);
  return rc;
}

int rw_bnfold(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e) {
  for (size_t i = 0; i < g->n_nodes; i++) {
    if (rw_op(g->nodes[i]) != ECG_OP_BatchNormalization) continue;
    bool done;
    if (fold_one(g, (int)i, st, &done) != ECG_OK) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  return rw_remove_dead(g, e);
}
