/* mkprune: change a pattern-annotated ECG (from ecg-prune) for the tests of prune.bats.
 *   mkprune MODE IN.ecg OUT.ecg
 * MODE: weight  a weight of a removed kernel made non-zero (the validator must refuse)
 *       index   an FKW input channel out of range (refused)
 *       node    an annotation pointing at a node that is no Conv (refused)
 *       remap   nodes renumbered (reversed through ecg_remap_nodes, then topologically
 *               sorted again, validated in both orders): the annotations must follow
 *               their Convs
 * Writes OUT without validating it (except remap, which validates). Exit 0, or 1 with a
 * message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecg.h"

int main(int argc, char **argv) {
  ecg_err e = {0};
  ecg_graph *g = NULL;
  if (argc != 4) { fprintf(stderr, "usage: mkprune MODE IN OUT\n"); return 2; }
  if (ecg_read_path(argv[2], &g, &e)) { fprintf(stderr, "mkprune: %s\n", e.msg); return 1; }
  if (!g->n_sparse_convs) { fprintf(stderr, "mkprune: no pattern annotation in %s\n", argv[2]); return 1; }
  ecg_sparse_conv *s = g->sparse_convs[g->n_sparse_convs - 1];
  const char *mode = argv[1];
  if (!strcmp(mode, "weight")) {
    ecg_tensor *w = g->tensors[g->nodes[s->node]->inputs[1]];
    float *v = (float *)w->data.data;
    size_t n = w->data.len / 4, k = 0;
    while (k < n && v[k] != 0.0f) k++;
    if (k == n) { fprintf(stderr, "mkprune: no zero weight\n"); return 1; }
    v[k] = 0.5f;
  } else if (!strcmp(mode, "index")) {
    s->index[0] = 1 << 20;
  } else if (!strcmp(mode, "node")) {
    s->node = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
      if (ecg_sparse_weight_dims(g, (int)i, (int64_t[4]){0}, NULL) != 0) { s->node = (int)i; break; }
  } else if (!strcmp(mode, "remap")) {
    size_t n = g->n_nodes;
    int *map = malloc(n * sizeof *map);
    for (size_t i = 0; i < n; i++) map[i] = (int)(n - 1 - i);
    int before = s->node;
    /* validated while reversed: each annotation's weight check passes only at its Conv */
    if (ecg_remap_nodes(g, map, n, NULL, &e) || ecg_validate(g, &e) || ecg_topo_sort(g, &e) || ecg_validate(g, &e)) {
      fprintf(stderr, "mkprune: %s\n", e.msg);
      return 1;
    }
    if (g->nodes[s->node]->inputs[1] < 0 || before == map[before]) { fprintf(stderr, "mkprune: remap not exercised\n"); return 1; }
    free(map);
  } else { fprintf(stderr, "mkprune: unknown mode %s\n", mode); return 2; }
  if (ecg_write_path(argv[3], g, 0, &e)) { fprintf(stderr, "mkprune: %s\n", e.msg); return 1; }
  ecg_graph_free(g);
  return 0;
}
