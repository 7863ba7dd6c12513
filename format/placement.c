/* placement.c: EOP placements of nodes (schema version 4; format/ecg.h, ECG.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ecg.h"

int ecg_placement_set(ecg_graph *g, int node, int axis, double cpu_share, const char *dim, ecg_err *e) {
  if (node < 0 || (size_t)node >= g->n_nodes) return ecg_errf(e, ECG_ERR_INPUT, "placement: node %d out of range", node);
  if (!(cpu_share >= 0 && cpu_share <= 1))
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s': cpu_share %g outside [0, 1]", g->nodes[node]->name, cpu_share);
  Ecg__Placement *p = NULL;
  for (size_t i = 0; i < g->n_placements && !p; i++)
    if (g->placements[i]->node == node) p = g->placements[i];
  if (!p) {
    Ecg__Placement **arr = realloc(g->placements, (g->n_placements + 1) * sizeof *arr);
    if (!arr) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    g->placements = arr;
    p = malloc(sizeof *p);
    if (!p) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    ecg__placement__init(p);
    g->placements[g->n_placements++] = p;
  } else if (p->dim != protobuf_c_empty_string) {
    free(p->dim);
    p->dim = (char *)protobuf_c_empty_string;
  }
  p->node = node;
  p->axis = axis;
  p->cpu_share = (float)cpu_share;
  char *d = strdup(dim ? dim : "");
  if (!d) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  p->dim = d;
  return ECG_OK;
}

int ecg_placement_validate(const ecg_graph *g, ecg_err *e) {
  for (size_t i = 0; i < g->n_placements; i++) {
    const Ecg__Placement *p = g->placements[i];
    if (p->node < 0 || (size_t)p->node >= g->n_nodes)
      return ecg_errf(e, ECG_ERR_INPUT, "placement %zu: node %d out of range (%zu nodes)", i, p->node, g->n_nodes);
    const ecg_node *n = g->nodes[p->node];
    char lb[256];
    ecg_node_label(g, n, lb, sizeof lb);
    for (size_t j = 0; j < i; j++)
      if (g->placements[j]->node == p->node) return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): placed twice", lb, n->op_type);
    if (!(p->cpu_share >= 0 && p->cpu_share <= 1))
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): placement cpu_share %g outside [0, 1]", lb, n->op_type, p->cpu_share);
    int r = n->n_outputs && n->outputs[0] >= 0 ? ecg_tensor_rank(g->tensors[n->outputs[0]]) : -1;
    if (p->axis < 0 || (r >= 0 && p->axis >= r))
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): placement axis %d outside its output's rank %d", lb, n->op_type, p->axis, r);
  }
  return ECG_OK;
}

int ecg_placement_remap(ecg_graph *g, const int *old_to_new, size_t n_old) {
  size_t w = 0;
  int dropped = 0;
  for (size_t i = 0; i < g->n_placements; i++) {
    Ecg__Placement *p = g->placements[i];
    int v = p->node >= 0 && (size_t)p->node < n_old ? old_to_new[p->node] : -1;
    if (v < 0) {
      ecg__placement__free_unpacked(p, NULL);
      dropped++;
      continue;
    }
    p->node = v;
    g->placements[w++] = p;
  }
  g->n_placements = w;
  return dropped;
}
