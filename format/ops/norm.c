/* GroupNormalization (opsets 18 and 21) and RMSNormalization (23), Many-to-Many like the
 * other normalizations: GroupNormalization's statistics over each group of C / num_groups
 * channels and the spatial dims; RMSNormalization's root mean square over dims axis..r-1. */
#include "ops_common.h"

/** GroupNormalization(X [N, C, D...], scale, bias) -> Y like X.  num_groups (required)
 *  divides C; scale and bias hold one value per group at opset 18 and one per channel
 *  from opset 21 (ONNX Operators.md GroupNormalization-18/-21); epsilon and stash_type do
 *  not change shapes.  Errors: missing num_groups, C not divisible, scale/bias of the
 *  wrong length for the node's opset. */
int ecg_infer_groupnorm(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *s, *b;
  if (n->n_inputs != 3) return ecg_node_errf(e, g, n, "expected 3 inputs (X, scale, bias), got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &s, e));
  ECG_TRY(ops_input(g, n, 2, &b, e));
  int64_t d[ECG_MAX_RANK], G = ecg_attr_i(n, "num_groups", 0);
  int r = ecg_tensor_dims(x, d);
  if (r >= 0 && r < 2) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 2 ([N, C, ...])", x->name);
  if (!ecg_attr_find(n, "num_groups") || G <= 0) return ecg_node_errf(e, g, n, "attribute num_groups is missing or not positive");
  if (r >= 2 && d[1] >= 0 && d[1] % G)
    return ecg_node_errf(e, g, n, "channels %lld are not divisible by num_groups %lld", (long long)d[1], (long long)G);
  bool per_group = n->opset > 0 && n->opset < 21;
  int64_t want = per_group ? G : (r >= 2 ? d[1] : -1);
  for (int k = 1; k < 3; k++) {
    const ecg_tensor *t = k == 1 ? s : b;
    int64_t m = ecg_tensor_numel(t);
    if (want >= 0 && m >= 0 && m != want)
      return ecg_node_errf(e, g, n, "%s '%s' has %lld values, expected %lld (one per %s at opset %lld)", k == 1 ? "scale" : "bias",
                           t->name, (long long)m, (long long)want, per_group ? "group" : "channel", (long long)n->opset);
  }
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}

/** RMSNormalization(X [D0..Dr-1], scale) -> Y like X (23): axis (default -1) starts the
 *  normalized dims; scale broadcasts unidirectionally to X and may vary only over the
 *  normalized dims.  Y's dtype is scale's (T and V may differ; both float). */
int ecg_infer_rmsnorm(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *s;
  if (n->n_inputs != 2) return ecg_node_errf(e, g, n, "expected 2 inputs (X, scale), got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &s, e));
  int64_t d[ECG_MAX_RANK], sd[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d), rs = ecg_tensor_dims(s, sd), axis;
  if (r < 1) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 1", x->name);
  if (!ops_axis(ecg_attr_i(n, "axis", -1), r, &axis))
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", -1), r);
  if (rs > r) return ecg_node_errf(e, g, n, "scale '%s' has rank %d above X's %d", s->name, rs, r);
  for (int k = 0; k < rs; k++) {
    int i = r - rs + k;
    if (sd[k] < 0 || d[i] < 0 || sd[k] == 1) continue;
    if (sd[k] != d[i] || i < axis)
      return ecg_node_errf(e, g, n, "scale '%s' does not broadcast to the normalized dims %d..%d of X", s->name, axis, r - 1);
  }
  return ecg_set_output(g, n, 0, s->dtype, r, d, x);
}
