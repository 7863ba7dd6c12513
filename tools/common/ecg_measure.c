/* Size measures for stage reports (ecg_measure.h). */
#include <stdlib.h>

#include "ecg_measure.h"

/* Peak of live intermediate bytes over a topological order (ecg_sizes.peak_bytes). */
static int64_t peak_live(const ecg_graph *g, const char *skip) {
  size_t nn = g->n_nodes, nt = g->n_tensors;
  int *order = malloc(sizeof(int) * (nn + 1)), *pos = malloc(sizeof(int) * (nn + 1)), *last = malloc(sizeof(int) * (nt + 1));
  int64_t *delta = calloc(nn + 2, sizeof(int64_t)), peak = -1;
  ecg_err e = {0};
  if (order && pos && last && delta && ecg_topo_order(g, order, &e) == ECG_OK) {
    for (size_t p = 0; p < nn; p++) pos[order[p]] = (int)p;
    for (size_t t = 0; t < nt; t++) last[t] = -1;
    for (size_t i = 0; i < nn; i++)
      for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
        int t = g->nodes[i]->inputs[k];
        if (t >= 0 && last[t] < pos[i]) last[t] = pos[i];
      }
    for (size_t i = 0; i < nn; i++)
      for (size_t k = 0; k < g->nodes[i]->n_outputs; k++) {
        int t = g->nodes[i]->outputs[k];
        if (t < 0 || skip[t]) continue;
        int64_t m = ecg_tensor_numel(g->tensors[t]);
        if (m <= 0) continue;
        int64_t b = m * (int64_t)ecg_dtype_size(g->tensors[t]->dtype);
        int from = pos[i], to = last[t] > from ? last[t] : from;
        delta[from] += b;
        delta[to + 1] -= b;
      }
    int64_t live = 0;
    peak = 0;
    for (size_t p = 0; p < nn; p++) {
      live += delta[p];
      if (live > peak) peak = live;
    }
  }
  free(order); free(pos); free(last); free(delta);
  return peak;
}

ecg_sizes ecg_measure(const ecg_graph *g, bool skip_removable) {
  ecg_sizes s = {g->n_nodes, 0, 0, -1};
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
  /* the same exclusions for the peak: graph outputs and (optionally) IR_removable tensors */
  char *skip = calloc(g->n_tensors + 1, 1);
  for (size_t t = 0; skip && t < g->n_tensors; t++)
    skip[t] = (is_out && is_out[t]) || (skip_removable && g->tensors[t]->ir_removable);
  if (skip) s.peak_bytes = peak_live(g, skip);
  free(skip);
  free(is_out);
  return s;
}

void ecg_sizes_json(FILE *f, const char *key, ecg_sizes s) {
  fprintf(f, "\"%s\": {\"nodes\": %zu, \"flops\": %lld, \"intermediate_bytes\": %lld, \"peak_bytes\": %lld}", key, s.nodes,
          (long long)s.flops, (long long)s.intermediate_bytes, (long long)s.peak_bytes);
}
