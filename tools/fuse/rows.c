/* Row-reduction blocks: the dnnfusion plan's last step (Niu dissertation §3.4.3, DNNFusion
 * fusing a Many-to-Many reduction with the One-to-One and broadcasting operators around
 * it; LayerNorm, RMSNorm and a decomposed Softmax are the common cases).
 *
 * A row reduction (ecg_row_reduction) views its input F = [d0..d(r-1)] as rows x inner
 * (the trailing reduced dims [a, r)); its output R holds one value per row. Around each
 * row reduction, the blocks (and unblocked nodes) the plan made are merged into one row
 * block while every member of every merged unit is
 *   - a row reduction over the same F and a,
 *   - a One-to-One/broadcasting operator whose output is F ("full" level) or R ("row"
 *     level), each operand's trailing dims [a, r) either all of F's or all 1,
 * never creating a cycle between blocks, up to max_members members. ecg-lower generates
 * a row block as one loop over rows, with one pass over the row's elements per
 * dependency level (LW_K_ROW, tools/lower/rowblock.c).
 *
 * Deviation from Table 3.3 (reconstructed, ../shared/notes/digest-niu.md §2.4): the table
 * breaks One-to-Many -> Many-to-Many (a broadcast feeding a reduction), because the
 * broadcast value would be recomputed per consumer element. Inside a row block the
 * broadcast operand is a row value of the same block, computed once per row and held in
 * a register, so no element is recomputed and the pair is fused.
 */
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

typedef struct {
  fuse_units u;
  ecg_row_space s;
} rctx;

/* Node v can be a member of a row block over c's space. */
static int node_ok(const rctx *c, int v) { return ecg_row_level(c->u.g, c->u.g->nodes[v], &c->s) >= 0; }

/* Every node of unit u can be a member; *size gets the unit's node count. */
static int unit_ok(const rctx *c, int u, int *size) {
  *size = 0;
  for (int v = 0; v < c->u.nn; v++) {
    if (c->u.unit[v] != u) continue;
    if (!node_ok(c, v)) return 0;
    (*size)++;
  }
  return *size > 0;
}

/* Try to add the unit of node w to the group (of *size nodes). */
static int try_unit(rctx *c, int w, int *size, int max_members) {
  if (w < 0) return 0;
  int u = c->u.unit[w], us;
  if (c->u.in_group[u] || !unit_ok(c, u, &us) || *size + us > max_members || fuse_units_cycle(&c->u, u)) return 0;
  c->u.in_group[u] = 1;
  *size += us;
  return 1;
}

int fuse_row_merge(const ecg_graph *g, const int *order, int *blk, int *nblk, int *seed, ecg_mapping *type,
                   int max_members, ecg_err *e) {
  rctx c = {0};
  int nn = (int)g->n_nodes, formed = 0;
  char *grouped = calloc((size_t)nn + 1, 1);
  if (!grouped || fuse_units_init(&c.u, g, blk, *nblk) != ECG_OK) {
    free(grouped);
    fuse_units_free(&c.u);
    ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    return -1;
  }
  for (int p = 0; p < nn; p++) {
    int v = order[p], size = 0;
    if (grouped[v] || ecg_row_space_of(g, g->nodes[v], &c.s)) continue;
    memset(c.u.in_group, 0, (size_t)c.u.nu);
    if (!try_unit(&c, v, &size, max_members)) continue;
    /* grow over producers and consumers of members until nothing joins */
    for (int changed = 1; changed;) {
      changed = 0;
      for (int q = 0; q < nn; q++) {
        int m = order[q];
        if (!c.u.in_group[c.u.unit[m]]) continue;
        const ecg_node *mn = g->nodes[m];
        for (size_t k = 0; k < mn->n_inputs; k++)
          if (mn->inputs[k] >= 0) changed |= try_unit(&c, c.u.prod[mn->inputs[k]], &size, max_members);
        for (size_t k = 0; k < mn->n_outputs; k++) {
          int t = mn->outputs[k];
          if (t < 0) continue;
          for (int j = c.u.cons_start[t]; j < c.u.cons_start[t + 1]; j++) changed |= try_unit(&c, c.u.cons[j], &size, max_members);
        }
      }
    }
    int units = 0;
    for (int u = 0; u < c.u.nu; u++) units += c.u.in_group[u];
    if (units < 2) continue; /* nothing joined: the plan's own block stays */
    int id = (*nblk)++, keep = c.u.unit[v];
    seed[id] = v;
    type[id] = ECG_MAP_MANY_TO_MANY;
    /* the merged units become one: the new block id, and the reduction's unit id */
    for (int w = 0; w < nn; w++)
      if (c.u.in_group[c.u.unit[w]]) { blk[w] = id; grouped[w] = 1; c.u.unit[w] = keep; }
    formed++;
  }
  free(grouped);
  fuse_units_free(&c.u);
  return formed;
}
