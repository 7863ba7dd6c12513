/* cost.c: the nominal work of each kernel, for model.json's "kernel_costs" and the
 * per-kernel profile of `ecg-bench --profile` (issue 13 item 1: GFLOP/s, fraction of
 * peak, a roofline position). */
#include "lower.h"

/* Bytes of tensor id as stored (its dtype's size times its element count); 0 when the
 * shape is not static. */
static size_t tensor_bytes(const ecg_graph *g, int id) {
  const ecg_tensor *t = g->tensors[id];
  int64_t n = ecg_tensor_numel(t);
  return n > 0 ? (size_t)n * ecg_dtype_size(t->dtype) : 0;
}

void lw_kernel_cost(const ecg_lower *L, const int *producer, int k, int64_t *flops, int64_t *bytes) {
  const ecg_graph *g = L->g;
  const lw_kernel *K = &L->k[k];
  int64_t f = 0, by = 0;
  /* each tensor counted once: a tensor is in this kernel's traffic when it is read from
   * outside the kernel (a graph input, a constant, another kernel's output) or written
   * to a place a later kernel or the caller reads (it has storage of its own) */
  for (int m = 0; m < K->nm; m++) { /* index maps too: they name the tensors read */
    const ecg_node *n = g->nodes[K->members[m]];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    if (op && op->flops) f += op->flops(g, n);
    for (size_t i = 0; i < n->n_inputs; i++) {
      int id = n->inputs[i], seen = 0;
      if (id < 0) continue;
      if (producer[id] >= 0 && L->node_kernel[producer[id]] == k) continue; /* made inside */
      for (int m2 = 0; m2 < m && !seen; m2++) {
        const ecg_node *p = g->nodes[K->members[m2]];
        for (size_t j = 0; j < p->n_inputs; j++) seen |= p->inputs[j] == id;
      }
      for (size_t j = 0; j < i && !seen; j++) seen = n->inputs[j] == id;
      if (!seen) by += (int64_t)tensor_bytes(g, id);
    }
    for (size_t o = 0; o < n->n_outputs; o++) {
      int id = n->outputs[o];
      if (id < 0 || L->t[id].where == LW_NONE || L->t[id].alias_of >= 0) continue;
      by += (int64_t)tensor_bytes(g, id);
    }
  }
  *flops = f;
  *bytes = by;
}
