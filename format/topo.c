/* libecg: producers, consumers and topological order (format/ecg.h). */
#include <stdlib.h>
#include <string.h>

#include "ecg.h"

void ecg_producers(const ecg_graph *g, int *producer) {
  for (size_t t = 0; t < g->n_tensors; t++) producer[t] = -1;
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i]->n_outputs; k++) {
      int t = g->nodes[i]->outputs[k];
      if (t >= 0 && (size_t)t < g->n_tensors) producer[t] = (int)i;
    }
}

void ecg_consumer_counts(const ecg_graph *g, int *n_consumers) {
  memset(n_consumers, 0, sizeof(int) * g->n_tensors);
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t >= 0 && (size_t)t < g->n_tensors) n_consumers[t]++;
    }
  for (size_t k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] >= 0 && (size_t)g->outputs[k] < g->n_tensors) n_consumers[g->outputs[k]]++;
}

int ecg_topo_order(const ecg_graph *g, int *order, ecg_err *e) {
  size_t nn = g->n_nodes;
  int *producer = malloc(sizeof(int) * (g->n_tensors + 1));
  int *indeg = calloc(nn + 1, sizeof(int));
  int *queue = malloc(sizeof(int) * (nn + 1));
  /* CSR of node -> successor edges */
  int *start = calloc(nn + 2, sizeof(int));
  int *succ = NULL;
  int rc = ECG_OK;
  if (!producer || !indeg || !queue || !start) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  ecg_producers(g, producer);
  size_t n_edges = 0;
  for (size_t i = 0; i < nn; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t >= 0 && (size_t)t < g->n_tensors && producer[t] >= 0) { start[producer[t] + 1]++; n_edges++; }
    }
  for (size_t i = 0; i < nn; i++) start[i + 1] += start[i];
  succ = malloc(sizeof(int) * (n_edges + 1));
  int *fill = malloc(sizeof(int) * (nn + 1));
  if (!succ || !fill) { free(fill); rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  memcpy(fill, start, sizeof(int) * (nn + 1));
  for (size_t i = 0; i < nn; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t >= 0 && (size_t)t < g->n_tensors && producer[t] >= 0) { succ[fill[producer[t]]++] = (int)i; indeg[i]++; }
    }
  free(fill);
  /* Kahn with a min-index ready set kept simple: process in index order by scanning. */
  size_t head = 0, tail = 0, done = 0;
  for (size_t i = 0; i < nn; i++) if (indeg[i] == 0) queue[tail++] = (int)i;
  while (head < tail) {
    int v = queue[head++];
    order[done++] = v;
    for (int j = start[v]; j < start[v + 1]; j++)
      if (--indeg[succ[j]] == 0) queue[tail++] = succ[j];
  }
  if (done != nn) {
    for (size_t i = 0; i < nn; i++)
      if (indeg[i] > 0) {
        char lb[256];
        rc = ecg_errf(e, ECG_ERR_INPUT, "graph has a cycle through node '%s' (%s)",
                      ecg_node_label(g, g->nodes[i], lb, sizeof lb), g->nodes[i]->op_type);
        break;
      }
  }
out:
  free(producer); free(indeg); free(queue); free(start); free(succ);
  return rc;
}

int ecg_topo_sort(ecg_graph *g, ecg_err *e) {
  int *order = malloc(sizeof(int) * (g->n_nodes + 1));
  int *old_to_new = malloc(sizeof(int) * (g->n_nodes + 1));
  if (!order || !old_to_new) { free(order); free(old_to_new); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  int rc = ecg_topo_order(g, order, e);
  if (rc == ECG_OK) {
    for (size_t i = 0; i < g->n_nodes; i++) old_to_new[order[i]] = (int)i;
    rc = ecg_remap_nodes(g, old_to_new, g->n_nodes, NULL, e);
  }
  free(order); free(old_to_new);
  return rc;
}
