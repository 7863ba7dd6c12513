/* Loss and index operators: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss,
 * GatherElements, Trilu (shape functions; none is constant-folded). */
#include "ops_common.h"

/** NegativeLogLikelihoodLoss(input [N,C,d..], target [N,d..], weight? [C]) and
 *  SoftmaxCrossEntropyLoss(scores, labels, weights?): loss is target-shaped with
 *  reduction "none", a scalar otherwise; SCE's optional output 1 (log_prob) is
 *  scores-shaped.  Both in input 0's dtype. */
int ecg_infer_loss(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *t;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &t, e));
  int64_t xd[ECG_MAX_RANK], td[ECG_MAX_RANK];
  int xr = ecg_tensor_dims(x, xd), tr = ecg_tensor_dims(t, td);
  if (xr < 2 || tr != xr - 1) return ecg_node_errf(e, g, n, "input '%s' must be [N, C, d...] and target '%s' [N, d...]", x->name, t->name);
  if (ecg_dtype_is_float(t->dtype)) return ecg_node_errf(e, g, n, "target '%s' must be an integer tensor", t->name);
  char red[16];
  ecg_attr_s(n, "reduction", "mean", red, sizeof red);
  if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
    return ecg_node_errf(e, g, n, "reduction '%s' is not none, sum or mean", red);
  if (strcmp(red, "none") == 0) ECG_TRY(ecg_set_output(g, n, 0, x->dtype, tr, td, t));
  else ECG_TRY(ecg_set_output(g, n, 0, x->dtype, 0, NULL, NULL));
  if (n->n_outputs > 1 && n->outputs[1] >= 0) ECG_TRY(ecg_set_output(g, n, 1, x->dtype, xr, xd, x));
  return ECG_OK;
}

/** GatherElements(data, indices): indices' shape, data's dtype; ranks must agree. */
int ecg_infer_gather_elements(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *ix;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &ix, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(ix, d);
  int axis;
  if (r != (int)x->n_dims || !ops_axis(ecg_attr_i(n, "axis", 0), r, &axis))
    return ecg_node_errf(e, g, n, "indices '%s' must have the rank of data '%s' and axis in range", ix->name, x->name);
  return ecg_set_output(g, n, 0, x->dtype, r, d, ix);
}

/** Trilu(x, k?): x's shape and dtype; rank >= 2. */
int ecg_infer_trilu(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  if (r < 2) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 2", x->name);
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}
