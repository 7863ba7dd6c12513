/* GroupNormalization (opsets 18 and 21; Many-to-Many like the other normalizations):
 * statistics over each group of C / num_groups channels and the spatial dims. */
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
