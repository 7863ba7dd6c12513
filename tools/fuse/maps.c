/* Index-map absorption: a step of the dnnfusion plan (DNNFusion §3.4.4.2, "intra-block
 * optimisation", Fig. 3.5: a Transpose with a single consumer becomes an index map of that
 * consumer, so its data never moves).
 *
 * Consumers that take index maps are the operators whose kernels read and write strided
 * batched matrices (ECG_PROP_STRIDED_IO: MatMul). For each such operator n, in
 * topological order:
 *   - input side: a permutation (ECG_PROP_PERMUTE: Transpose) outside any block whose
 *     output only n reads (not a graph output) joins n's block when ecg_index_map_in
 *     accepts its strides (one of the two matrix dims contiguous: the GEMM's trans flag
 *     and leading dimension);
 *   - output side: when n's block holds nothing but n and its input maps (no epilogue),
 *     a permutation that is the only reader of n's output joins when ecg_index_map_out
 *     accepts (rows of the result contiguous in the permuted output).
 * A join that would put the block on a cycle of the block graph is skipped. ecg-lower
 * generates the block as one kernel in which the permutations move no data.
 */
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

/* The only node reading tensor t, or -1 (none, several, or t is a graph output). */
static int only_reader(const fuse_units *u, int t) {
  for (size_t k = 0; k < u->g->n_outputs; k++) if (u->g->outputs[k] == t) return -1;
  return u->cons_start[t + 1] - u->cons_start[t] == 1 ? u->cons[u->cons_start[t]] : -1;
}

/* Put p into n's block (making one for n if it has none); 1 when joined. */
static int join(fuse_units *u, int *blk, int *nblk, int *seed, ecg_mapping *type, int n, int p) {
  memset(u->in_group, 0, (size_t)u->nu);
  u->in_group[u->unit[n]] = 1;
  if (fuse_units_cycle(u, u->unit[p])) return 0;
  if (blk[n] < 0) {
    blk[n] = (*nblk)++;
    seed[blk[n]] = n;
    type[blk[n]] = ECG_MAP_MANY_TO_MANY;
  }
  blk[p] = blk[n];
  u->unit[p] = u->unit[n];
  return 1;
}

int fuse_index_maps(const ecg_graph *g, const int *order, int *blk, int *nblk, int *seed, ecg_mapping *type, ecg_err *e) {
  fuse_units u;
  int nn = (int)g->n_nodes, absorbed = 0;
  int64_t st[ECG_MAX_RANK];
  int r;
  if (fuse_units_init(&u, g, blk, *nblk) != ECG_OK) {
    fuse_units_free(&u);
    ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    return -1;
  }
  /* the unit ids of new blocks must stay below u.nu: a new block takes its operator's own
   * singleton unit id (already distinct), so only blk[] gets the new block id */
  for (int q = 0; q < nn; q++) {
    int n = order[q];
    const ecg_node *nd = g->nodes[n];
    const ecg_op_info *op = ecg_op_lookup(nd->op_type, nd->domain);
    if (!op || !(op->props & ECG_PROP_STRIDED_IO)) continue;
    for (size_t k = 0; k < nd->n_inputs; k++) {
      int t = nd->inputs[k], p = t >= 0 ? u.prod[t] : -1;
      if (p < 0 || blk[p] >= 0 || only_reader(&u, t) != n) continue;
      if (!ecg_index_map_in(g, nd, (int)k, g->nodes[p], st, &r)) continue;
      absorbed += join(&u, blk, nblk, seed, type, n, p);
    }
    /* output side: n's block must be n and its input maps only */
    int t = nd->outputs[0], p = t >= 0 ? only_reader(&u, t) : -1, epilogue = 0;
    if (p < 0 || blk[p] >= 0) continue;
    for (int v = 0; v < nn && blk[n] >= 0; v++)
      if (v != n && blk[v] == blk[n] && (!g->nodes[v]->n_outputs || only_reader(&u, g->nodes[v]->outputs[0]) != n)) epilogue = 1;
    if (epilogue || !ecg_index_map_out(g, nd, g->nodes[p], st, &r)) continue;
    absorbed += join(&u, blk, nblk, seed, type, n, p);
  }
  fuse_units_free(&u);
  return absorbed;
}
