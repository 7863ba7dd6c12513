/* Size measures for stage reports (ecg_measure.h). */
#include <stdlib.h>

#include "ecg_measure.h"

ecg_sizes ecg_measure(const ecg_graph *g, bool skip_removable) {
  ecg_sizes s = {g->n_nodes, 0, 0};
  char *is_out = calloc(g->n_tensors + 1, 1);
  for (size_t k = 0; is_out && k < g->n_outputs; k++) is_out[g->outputs[k]] = 1;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    int64_t f = op && op->flops ? op->flops(g, n) : 0;
    if (f > 0) s.flops += f;
    for (size_t k = 0; k < n->n_outputs; k++) {
      const ecg_tensor *t = ecg_node_output(g, n, (int)k);
      if (!t || (is_out && is_out[n->outputs[k]]) || (skip_removable && t->ir_removable)) continue;
      int64_t m = ecg_tensor_numel(t);
      if (m > 0) s.intermediate_bytes += m * (int64_t)ecg_dtype_size(t->dtype);
    }
  }
  free(is_out);
  return s;
}

void ecg_sizes_json(FILE *f, const char *key, ecg_sizes s) {
  fprintf(f, "\"%s\": {\"nodes\": %zu, \"flops\": %lld, \"intermediate_bytes\": %lld}", key, s.nodes,
          (long long)s.flops, (long long)s.intermediate_bytes);
}
