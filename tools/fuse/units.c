/* The unit graph of a partial fusion plan: every block is one unit, every node outside
 * a block its own; used by the plan's merging steps (rows.c, maps.c) to keep the block
 * graph acyclic (DNNFusion §3.4.3: fused blocks must not form a cycle). */
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

int fuse_units_init(fuse_units *c, const ecg_graph *g, const int *blk, int nblk) {
  memset(c, 0, sizeof *c);
  c->g = g;
  c->nn = (int)g->n_nodes;
  c->nt = (int)g->n_tensors;
  c->nu = nblk + c->nn;
  c->unit = malloc(sizeof(int) * ((size_t)c->nn + 1));
  c->prod = malloc(sizeof(int) * ((size_t)c->nt + 1));
  c->cons_start = calloc((size_t)c->nt + 2, sizeof(int));
  c->in_group = calloc((size_t)c->nu + 1, 1);
  c->seen = calloc((size_t)c->nu + 1, 1);
  c->queue = malloc(sizeof(int) * ((size_t)c->nu + 1));
  size_t ncons = 0;
  for (int v = 0; v < c->nn; v++) ncons += g->nodes[v]->n_inputs;
  c->cons = malloc(sizeof(int) * (ncons + 1));
  int *fill = calloc((size_t)c->nt + 1, sizeof(int));
  if (!c->unit || !c->prod || !c->cons_start || !c->in_group || !c->seen || !c->queue || !c->cons || !fill) {
    free(fill);
    return ECG_ERR_INTERNAL;
  }
  for (int t = 0; t < c->nt; t++) c->prod[t] = -1;
  for (int v = 0; v < c->nn; v++) {
    const ecg_node *n = g->nodes[v];
    c->unit[v] = blk[v] >= 0 ? blk[v] : nblk + v;
    for (size_t k = 0; k < n->n_outputs; k++) if (n->outputs[k] >= 0) c->prod[n->outputs[k]] = v;
    for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0) c->cons_start[n->inputs[k] + 1]++;
  }
  for (int t = 0; t < c->nt; t++) c->cons_start[t + 1] += c->cons_start[t];
  for (int v = 0; v < c->nn; v++) {
    const ecg_node *n = g->nodes[v];
    for (size_t k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) c->cons[c->cons_start[n->inputs[k]] + fill[n->inputs[k]]++] = v;
  }
  free(fill);
  return ECG_OK;
}

void fuse_units_free(fuse_units *c) {
  free(c->unit); free(c->prod); free(c->cons_start); free(c->in_group); free(c->seen); free(c->queue); free(c->cons);
  memset(c, 0, sizeof *c);
}

/* Queue the units reading an output of node v that are outside the group (in_group or
 * extra) and not seen yet; 1 when one of v's readers is inside the group. */
static int push_readers(fuse_units *c, int v, int extra, int *tail) {
  const ecg_node *n = c->g->nodes[v];
  int inside = 0;
  for (size_t k = 0; k < n->n_outputs; k++) {
    int t = n->outputs[k];
    if (t < 0) continue;
    for (int j = c->cons_start[t]; j < c->cons_start[t + 1]; j++) {
      int w = c->unit[c->cons[j]];
      if (c->in_group[w] || w == extra) inside = 1;
      else if (!c->seen[w]) { c->seen[w] = 1; c->queue[(*tail)++] = w; }
    }
  }
  return inside;
}

int fuse_units_cycle(fuse_units *c, int extra) {
  int head = 0, tail = 0;
  memset(c->seen, 0, (size_t)c->nu);
  /* from the group, every unit one edge out; then breadth-first: back inside is a cycle */
  for (int v = 0; v < c->nn; v++)
    if (c->in_group[c->unit[v]] || c->unit[v] == extra) push_readers(c, v, extra, &tail);
  while (head < tail) {
    int u = c->queue[head++];
    for (int v = 0; v < c->nn; v++)
      if (c->unit[v] == u && push_readers(c, v, extra, &tail)) return 1;
  }
  return 0;
}
