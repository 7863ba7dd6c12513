/* ecg-lower: kernels from fusion blocks (DNNFusion §3.4.3-3.4.4).
 *
 * Every fusion block of the ECG becomes one kernel function; a node outside any block is
 * a one-node block.  Kernels run in a topological order of the block graph.  A block is
 *   - One-to-One only (LW_K_EW): one loop nest, members' values in registers (block.c);
 *   - a Many-to-Many dominant node followed by One-to-One members (LW_K_EPI): the
 *     dominant node's runtime kernel calls a generated epilogue on each output row
 *     segment while it is in cache (ecg_rt.h ECG_ACT_FN), so the members' intermediate
 *     results never reach memory; the dominant output, when nothing outside reads it, is
 *     written straight into the block's output buffer;
 *   - row reductions with One-to-One members over one [rows, inner] space (LW_K_ROW):
 *     one loop over rows, reductions and row values in registers (rowblock.c);
 *   - intensive-fusion chains (ecg-fuse --intensive; chain.h): inverted residuals
 *     (LW_K_IBR, ecg_rt1_ibr), squeeze-and-excitation chains (LW_K_SE, ecg_rt1_se) and
 *     Conv [+act] -> MaxPool (LW_K_CPOOL, ecg_rt1_conv2d_maxpool);
 *   - anything else is split into one-node kernels (said on stderr).
 * A dynamic-shape build (dyn.c) keeps only the One-to-One blocks over symbolic shapes; a
 * dominant node's block becomes the dominant alone plus its members as one One-to-One
 * kernel (its generated epilogue addresses operands with static strides), other kinds are
 * split into one-node kernels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/emit.h"
#include "lower.h"
#include "chain.h"
#include "scalar.h"

/* One kernel per node of the group [from, to) of nodes listed in idx. */
static int add_kernel(ecg_lower *L, const int *idx, int nm, lw_kernel_kind kind, int dominant, int epi_from) {
  lw_kernel *k = &L->k[L->nk];
  k->members = malloc(sizeof(int) * (size_t)nm);
  if (!k->members) return -1;
  memcpy(k->members, idx, sizeof(int) * (size_t)nm);
  k->nm = nm;
  k->nm_core = nm;
  k->kind = kind;
  k->dominant = dominant;
  k->epi_from = epi_from;
  k->fallback = 0;
  k->nparts = 1;
  for (int i = 0; i < nm; i++) L->node_kernel[idx[i]] = L->nk;
  L->nk++;
  return 0;
}

/* The kind of the block of nm members (topological order), or -1 when it cannot be one
 * kernel; *dom gets the dominant node, *epi the index of its first epilogue member. */
static int block_kind(const ecg_lower *L, const int *idx, int nm, int *dom, int *epi) {
  const ecg_graph *g = L->g;
  *dom = -1;
  *epi = 1;
  if (nm == 1) return LW_K_SINGLE;
  ecg_se_chain se;
  if (ecg_se_match(g, idx, nm, &se) == 0) {
    /* a squeeze-and-excitation chain: only its last member's output may leave */
    for (int i = 0; i + 1 < nm; i++)
      if (lw_tensor_used_outside(L, g->nodes[idx[i]]->outputs[0], idx, nm)) return -1;
    *dom = idx[nm - 1];
    *epi = nm;
    return LW_K_SE;
  }
  int cv, ac, pl;
  if (ecg_conv_pool_match(g, idx, nm, &cv, &ac, &pl) == 0) {
    /* Conv [+act] -> MaxPool: only the pool's output may leave */
    for (int i = 0; i + 1 < nm; i++)
      if (lw_tensor_used_outside(L, g->nodes[idx[i]]->outputs[0], idx, nm)) return -1;
    *dom = pl;
    *epi = nm;
    return LW_K_CPOOL;
  }
  ecg_ibr_chain ib;
  int from = ecg_ibr_match(g, idx, nm, &ib);
  if (from > 0) {
    /* the intermediates must stay inside: no reader outside the block (without pw2 the
     * depthwise stage's output is the block's, the dominant the chain's last member) */
    int chain[6] = {ib.pw1, ib.act1[0], ib.act1[1], ib.dw, ib.act2[0], ib.act2[1]};
    for (int k = 0; k < 6; k++)
      if (chain[k] >= 0 && (ib.pw2 >= 0 || chain[k] != idx[nm - 1]) &&
          lw_tensor_used_outside(L, g->nodes[chain[k]]->outputs[0], idx, nm))
        return -1;
    *dom = ib.pw2 >= 0 ? ib.pw2 : idx[nm - 1];
    *epi = from;
    return LW_K_IBR;
  }
  /* a row block: row reductions with One-to-One members over one [rows, inner] space */
  ecg_row_space rs;
  int has_row = -1;
  for (int i = 0; i < nm && has_row < 0; i++)
    if (ecg_row_space_of(g, g->nodes[idx[i]], &rs) == 0) has_row = i;
  if (has_row >= 0) {
    int ok = 1;
    for (int i = 0; i < nm && ok; i++) ok = ecg_row_level(g, g->nodes[idx[i]], &rs) >= 0;
    if (ok) return LW_K_ROW;
  }
  int nscalar = 0, other = -1;
  for (int i = 0; i < nm; i++) {
    if (ecg_is_scalar_node(g, g->nodes[idx[i]])) nscalar++;
    else if (other < 0) other = i;
  }
  const ecg_tensor *last = ecg_node_output(g, g->nodes[idx[nm - 1]], 0);
  int64_t numel = last ? ecg_tensor_numel(last) : -1;
  if (nscalar == nm) {
    for (int i = 0; i < nm; i++)
      if (ecg_tensor_numel(ecg_node_output(g, g->nodes[idx[i]], 0)) != numel) return -1;
    return LW_K_EW;
  }
  if (nscalar != nm - 1 || other != 0) return -1;
  const ecg_node *d = g->nodes[idx[0]];
  const ecg_op_info *op = ecg_op_lookup(d->op_type, d->domain);
  if (!op || op->mapping != ECG_MAP_MANY_TO_MANY || d->n_outputs != 1) return -1;
  const ecg_tensor *dy = ecg_node_output(g, d, 0);
  if (!dy || dy->dtype != ECG_FLOAT || ecg_tensor_numel(dy) != numel) return -1;
  for (int i = 1; i < nm; i++) {
    const ecg_tensor *y = ecg_node_output(g, g->nodes[idx[i]], 0);
    if (ecg_tensor_numel(y) != numel) return -1;
  }
  *dom = idx[0];
  return LW_K_EPI;
}

/* Index maps of a block (DNNFusion Fig. 3.5; ecg-fuse's maps.c): members that are
 * permutations read only by a strided-IO member of the block (ecg_index_map_in), or the
 * only reader of such a member's output (ecg_index_map_out). Moves them to the end of
 * idx[0..nm) (core members first, order kept) and returns the core count. */
static int split_maps(const ecg_lower *L, int *idx, int nm, int *tmp) {
  const ecg_graph *g = L->g;
  int nc = 0, nmap = 0;
  int64_t st[ECG_MAX_RANK];
  int r;
  for (int i = 0; i < nm; i++) {
    const ecg_node *p = g->nodes[idx[i]];
    int is_map = 0;
    for (int j = 0; j < nm && !is_map && p->n_outputs == 1; j++) {
      const ecg_node *d = g->nodes[idx[j]];
      if (j == i) continue;
      for (size_t k = 0; k < d->n_inputs && !is_map; k++)
        is_map = d->inputs[k] == p->outputs[0] && !lw_tensor_used_outside(L, p->outputs[0], &idx[j], 1) &&
                 ecg_index_map_in(g, d, (int)k, p, st, &r);
      if (!is_map && d->n_outputs == 1 && p->inputs[0] == d->outputs[0] &&
          !lw_tensor_used_outside(L, d->outputs[0], &idx[i], 1) && ecg_index_map_out(g, d, p, st, &r))
        is_map = 1;
    }
    if (is_map) tmp[nmap++] = idx[i];
    else idx[nc++] = idx[i];
  }
  memcpy(idx + nc, tmp, sizeof(int) * (size_t)nmap);
  return nc;
}

/* block_kind of the group buf[0..nm) whose core is buf[0..ncore) (index maps after it),
 * -1 also when an output map (a map reading a core member's result) follows a core of
 * several members: the dominant's own kernel writes through such a map, with no epilogue
 * between. */
static int group_kind(const ecg_lower *L, const int *buf, int nm, int ncore, int *dom, int *epi) {
  const ecg_graph *g = L->g;
  int kind = block_kind(L, buf, ncore, dom, epi);
  for (int m = ncore; m < nm && kind >= 0; m++)
    for (int j = 0; j < ncore; j++)
      if (ncore > 1 && g->nodes[buf[j]]->n_outputs && g->nodes[buf[j]]->outputs[0] == g->nodes[buf[m]]->inputs[0]) kind = -1;
  return kind;
}

/* A squeeze-and-excitation tail (fc2 [+act] -> scale, chain.h) is one ecg_rt1_se kernel in C
 * builds with static shapes; OpenCL, c+opencl placements and dynamic builds lower it as its
 * stages (add_stages). */
static int se_tail_here(const ecg_lower *L) { return L->target == LW_TARGET_C && !L->hetero && !L->dyn; }

/* An intensive-fusion block buf[0..nm) (core buf[0..ncore), kind LW_K_IBR, the pointwise
 * dominant at buf[epi - 1]) lowered with intensive_fusion off: one kernel per stage, the
 * chain's first pointwise conv with its activation, the depthwise conv with its
 * activation, the last pointwise conv with the block's epilogue and index maps (the
 * blocks ecg-fuse forms for these nodes without --intensive), each formed as a block of
 * its own would be (a stage that cannot be one kernel goes node by node); a
 * squeeze-and-excitation block (LW_K_SE) and a Conv [+act] -> MaxPool block (LW_K_CPOOL:
 * the conv with its activation, then the pool) likewise by their stages. */
static int add_stages(ecg_lower *L, int *buf, int nm, int ncore, int epi) {
  const ecg_graph *g = L->g;
  int first = L->nk, ns = 3;
  ecg_ibr_chain ib;
  int from[4], to[4];
  ecg_se_chain se;
  int cv, ac, pl;
  if (ecg_conv_pool_match(g, buf, ncore, &cv, &ac, &pl) == 0) {
    /* Conv [+act] -> MaxPool: the conv with its activation, the pool */
    ns = 2;
    from[0] = 0; to[0] = ncore - 1;
    from[1] = ncore - 1; to[1] = nm;
  } else if (ecg_se_match(g, buf, ncore, &se) == 0) {
    /* squeeze-and-excitation: the pool, fc1 with its activation, then fc2 with its
     * activation and the scale as one kernel where se_tail_here (the blocks the dnnfusion
     * plan forms without --intensive), else fc2 with its activation, the scale */
    int at2 = se.gap >= 0 ? 2 + se.nact1 : 0, at3 = at2 + 1 + se.nact2;
    ns = 0;
    if (se.gap >= 0) { from[ns] = 0; to[ns++] = 1; from[ns] = 1; to[ns++] = at2; }
    if (se.scale < 0 || se_tail_here(L)) { from[ns] = at2; to[ns++] = nm; }
    else { from[ns] = at2; to[ns++] = at3; from[ns] = at3; to[ns++] = nm; }
  } else {
    if (ecg_ibr_match(g, buf, ncore, &ib) < 0) return -1;
    int at_dw = ib.pw1 >= 0 ? 1 + ib.nact1 : 0, at_pw2 = ib.pw2 >= 0 ? epi - 1 : nm;
    int f[3] = {0, at_dw, at_pw2}, t[3] = {at_dw, at_pw2, nm};
    memcpy(from, f, sizeof f);
    memcpy(to, t, sizeof t);
    if (ib.pw2 < 0) ns = 2; /* the expansion, then the depthwise stage with its activation */
  }
  for (int s = 0; s < ns; s++) {
    int n = to[s] - from[s], nc = s == ns - 1 ? ncore - from[s] : n, dom, ep;
    if (n <= 0) continue;
    int kind = group_kind(L, buf + from[s], n, nc, &dom, &ep);
    if (kind >= 0) {
      if (add_kernel(L, buf + from[s], n, (lw_kernel_kind)kind, dom, ep)) return -1;
      L->k[L->nk - 1].nm_core = nc;
    } else
      for (int i = from[s]; i < to[s]; i++)
        if (add_kernel(L, &buf[i], 1, LW_K_SINGLE, -1, 1)) return -1;
  }
  for (int k = first; k < L->nk; k++) L->k[k].nparts = L->nk - first;
  return 0;
}

int lw_form_kernels(ecg_lower *L, const int *order, ecg_err *e) {
  const ecg_graph *g = L->g;
  size_t nn = g->n_nodes;
  int *pos = malloc(sizeof(int) * (nn + 1)), *grp = malloc(sizeof(int) * (nn + 1));
  int *buf = malloc(sizeof(int) * (nn + 1)), *tmp = malloc(sizeof(int) * (nn + 1));
  L->k = calloc(nn + 1, sizeof *L->k);
  L->node_kernel = malloc(sizeof(int) * (nn + 1));
  if (!pos || !grp || !buf || !tmp || !L->k || !L->node_kernel) {
    free(pos); free(grp); free(buf); free(tmp);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  for (size_t p = 0; p < nn; p++) pos[order[p]] = (int)p;
  /* group of each node: its block's index in g->blocks, or -1 */
  for (size_t i = 0; i < nn; i++) grp[i] = -1;
  for (size_t b = 0; b < g->n_blocks; b++)
    for (size_t j = 0; j < g->blocks[b]->n_nodes; j++) {
      int v = g->blocks[b]->nodes[j];
      if (v >= 0 && (size_t)v < nn) grp[v] = (int)b;
    }
  /* Kernels are formed in topological order of their first member; then reordered. */
  int rc = ECG_OK;
  char *done = calloc(nn + 1, 1);
  if (!done) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t p = 0; rc == ECG_OK && p < nn; p++) {
    int v = order[p];
    if (done[v]) continue;
    int nm = 0;
    if (grp[v] < 0) buf[nm++] = v;
    else
      for (size_t q = p; q < nn; q++) if (grp[order[q]] == grp[v]) buf[nm++] = order[q];
    int ncore = nm > 1 ? split_maps(L, buf, nm, tmp) : nm;
    int dom, epi, kind = group_kind(L, buf, nm, ncore, &dom, &epi);
    /* the schedule's intensive_fusion (AGO §III-B as a knob): only on an intensive-fusion
     * block; off lowers it stage by stage */
    const ecg_schedule *sc = grp[v] >= 0 ? g->blocks[grp[v]]->schedule : NULL;
    int ifu = sc ? sc->intensive_fusion : ECG_INTENSIVE_AUTO;
    /* intensive-fusion blocks: inverted residuals, whole squeeze-and-excitation chains (not
     * the dnnfusion plan's tails: se.gap < 0) */
    ecg_se_chain se;
    const int se_tail = kind == LW_K_SE && ecg_se_match(g, buf, ncore, &se) == 0 && se.gap < 0;
    int intensive = kind == LW_K_IBR || kind == LW_K_CPOOL || (kind == LW_K_SE && !se_tail);
    if (ifu != ECG_INTENSIVE_AUTO && !intensive) {
      char lb[256];
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): schedule intensive_fusion %s (block %d): the block is no intensive-fusion "
                    "chain (ecg-fuse --intensive: [pointwise conv] -> depthwise conv [-> pointwise conv], or "
                    "GlobalAveragePool -> pointwise conv -> pointwise conv [-> scale], or Conv [-> act] -> MaxPool)",
                    ecg_node_label(g, g->nodes[v], lb, sizeof lb), g->nodes[v]->op_type, ecg_intensive_name(ifu), grp[v]);
      break;
    }
    if (se_tail && !se_tail_here(L)) {
      if (add_stages(L, buf, nm, ncore, epi)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      for (int i = 0; i < nm; i++) done[buf[i]] = 1;
      continue;
    }
    /* a Conv -> MaxPool block whose conv is lowered pattern-sparse (ecg-prune) runs as its
     * stages: the fused kernel takes dense weights; so does every intensive-fusion block
     * for OpenCL, which has no fused kernels (unless its schedule says on: refused below,
     * naming the node) */
    int cv, ac, pl;
    const int sparse_cpool = kind == LW_K_CPOOL && L->sparse != LW_SPARSE_DENSE &&
                             ecg_conv_pool_match(g, buf, ncore, &cv, &ac, &pl) == 0 && ecg_sparse_find(g, cv) >= 0;
    const int cl_stages = intensive && ifu == ECG_INTENSIVE_AUTO && L->target == LW_TARGET_OPENCL;
    if ((ifu == ECG_INTENSIVE_OFF || sparse_cpool || cl_stages) && !L->dyn) {
      if (add_stages(L, buf, nm, ncore, epi)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      for (int i = 0; i < nm; i++) done[buf[i]] = 1;
      continue;
    }
    int dyn = 0; /* a dynamic build (dyn.c) lowers elementwise blocks as one kernel; a Conv-like
                    dominant node's block becomes the dominant alone plus its members as one
                    elementwise kernel; any other block kind node by node */
    for (int i = 0; i < nm && L->dyn && kind > LW_K_SINGLE; i++) dyn |= lw_node_dyn(L, g->nodes[buf[i]]);
    if (dyn && kind == LW_K_EPI && ncore == nm && nm > 2) {
      if (add_kernel(L, buf, 1, LW_K_SINGLE, -1, 1) || add_kernel(L, buf + 1, nm - 1, LW_K_EW, -1, 1))
        rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      for (int i = 0; i < nm; i++) done[buf[i]] = 1;
      continue;
    }
    if (dyn && (kind != LW_K_EW || ncore != nm)) kind = -2;
    if (kind < 0) {
      char lb[256];
      if (kind == -1)
        fprintf(stderr, "ecg-lower: fusion block %d (at node '%s') cannot be one kernel; lowered node by node\n",
                g->blocks[grp[v]]->id, ecg_node_label(g, g->nodes[v], lb, sizeof lb));
      for (int i = 0; i < nm; i++) {
        if (add_kernel(L, &buf[i], 1, LW_K_SINGLE, -1, 1)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
        done[buf[i]] = 1;
      }
      continue;
    }
    if (add_kernel(L, buf, nm, (lw_kernel_kind)kind, dom, epi)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    else L->k[L->nk - 1].nm_core = ncore;
    for (int i = 0; i < nm; i++) done[buf[i]] = 1;
  }
  /* Topological order of the kernel graph (Kahn; ties by first member's position). A
   * cycle between blocks (an invalid plan) splits the kernels on it into nodes. */
  if (rc == ECG_OK) {
    int nk = L->nk;
    int *indeg = calloc((size_t)nk + 1, sizeof(int)), *out = malloc(sizeof(int) * ((size_t)nk + 1));
    int *prod = malloc(sizeof(int) * (g->n_tensors + 1));
    if (!indeg || !out || !prod) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (size_t t = 0; rc == ECG_OK && t < g->n_tensors; t++) prod[t] = -1;
    for (size_t i = 0; rc == ECG_OK && i < nn; i++)
      for (size_t k = 0; k < g->nodes[i]->n_outputs; k++)
        if (g->nodes[i]->outputs[k] >= 0) prod[g->nodes[i]->outputs[k]] = L->node_kernel[i];
    /* edges as a dense bit matrix would be nk^2; count in-degree per distinct pair instead */
    int *seen = malloc(sizeof(int) * ((size_t)nk + 1));
    if (!seen && rc == ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (int k = 0; rc == ECG_OK && k < nk; k++) seen[k] = -1;
    for (int k = 0; rc == ECG_OK && k < nk; k++)
      for (int m = 0; m < L->k[k].nm; m++) {
        const ecg_node *n = g->nodes[L->k[k].members[m]];
        for (size_t j = 0; j < n->n_inputs; j++) {
          int t = n->inputs[j];
          if (t < 0 || prod[t] < 0 || prod[t] == k || seen[prod[t]] == k) continue;
          seen[prod[t]] = k;
          indeg[k]++;
        }
      }
    int no = 0;
    char *emitted = calloc((size_t)nk + 1, 1);
    if (!emitted && rc == ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    while (rc == ECG_OK && no < nk) {
      int best = -1;
      for (int k = 0; k < nk; k++)
        if (!emitted[k] && indeg[k] == 0 && (best < 0 || pos[L->k[k].members[0]] < pos[L->k[best].members[0]])) best = k;
      if (best < 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "fusion blocks form a cycle; run ecg-fuse again or drop the blocks"); break; }
      emitted[best] = 1;
      out[no++] = best;
      for (int k = 0; k < nk; k++) seen[k] = -1;
      for (int k = 0; k < nk; k++) {
        if (emitted[k]) continue;
        for (int m = 0; m < L->k[k].nm; m++) {
          const ecg_node *n = g->nodes[L->k[k].members[m]];
          for (size_t j = 0; j < n->n_inputs; j++) {
            int t = n->inputs[j];
            if (t >= 0 && prod[t] == best && seen[k] != best) { seen[k] = best; indeg[k]--; }
          }
        }
      }
    }
    if (rc == ECG_OK) {
      lw_kernel *nkv = malloc(sizeof(lw_kernel) * ((size_t)nk + 1));
      if (!nkv) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      else {
        for (int i = 0; i < nk; i++) nkv[i] = L->k[out[i]];
        free(L->k);
        L->k = nkv;
        for (int i = 0; i < nk; i++)
          for (int m = 0; m < L->k[i].nm; m++) L->node_kernel[L->k[i].members[m]] = i;
      }
    }
    free(indeg); free(out); free(prod); free(seen); free(emitted);
  }
  /* kernels per block, for the schedule checks of a block lowered as several */
  if (rc == ECG_OK && !(L->sched_left = calloc(g->n_blocks + 1, sizeof *L->sched_left))) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK && !(L->sched_acc = calloc(g->n_blocks + 1, sizeof *L->sched_acc))) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int k = 0; rc == ECG_OK && k < L->nk; k++) {
    int b = g->nodes[L->k[k].members[0]]->fusion_block;
    if (b >= 0 && (size_t)b < g->n_blocks) L->sched_left[b]++;
  }
  free(done); free(pos); free(grp); free(buf); free(tmp);
  return rc;
}

/* A squeeze-and-excitation kernel k with its scale (LW_K_SE) writes y = x * s element by
 * element after reading x (the pool, or the dnnfusion plan's pool kernel before it), which
 * ecg_rt1_se may do in place: x is stored in y's buffer (alias) when every other reader of
 * x runs before kernel k (kernels run in the order of L->k), so the scale pass touches one
 * tensor's lines instead of two. Both ordinary arena intermediates of the same bytes, NCHW
 * (no GCD² layout on x's producer), C target, static shapes. */
static void se_in_place(ecg_lower *L, int k) {
  const ecg_graph *g = L->g;
  const lw_kernel *K = &L->k[k];
  ecg_se_chain se;
  if (L->target != LW_TARGET_C || L->hetero || L->dyn || ecg_se_match(g, K->members, K->nm_core, &se) != 0 || se.scale < 0)
    return;
  lw_tensor *x = &L->t[se.x], *y = &L->t[se.y];
  if (x->where != LW_ARENA || y->where != LW_ARENA || x->alias_of >= 0 || x->fixed || x->pinned || y->fixed || y->pinned ||
      x->bytes != y->bytes)
    return;
  if (lw_block_lanes(g, g->nodes[K->members[0]]->fusion_block)) return; /* the SE itself in an NCHWc layout: not in place */
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    int b = n->fusion_block;
    for (size_t j = 0; j < n->n_inputs; j++) /* another reader of x: in an earlier kernel */
      if (n->inputs[j] == se.x && L->node_kernel[i] >= k) {
        int inside = 0;
        for (int m = 0; m < K->nm; m++) inside |= K->members[m] == (int)i;
        if (!inside) return;
      }
    if (n->n_outputs < 1 || n->outputs[0] != se.x) continue; /* x's producer computes in NCHW */
    if (lw_block_lanes(g, b)) return;
  }
  for (int r = se.y; r >= 0; r = L->t[r].alias_of) if (r == se.x) return; /* no cycle of aliases */
  x->alias_of = se.y;
  x->alias_off = 0;
}

void lw_kernel_storage(ecg_lower *L) {
  const ecg_graph *g = L->g;
  for (int k = 0; k < L->nk; k++) {
    lw_kernel *K = &L->k[k];
    /* index maps: a permutation's output read only inside (an input map) has no storage;
     * an output map's input (the dominant's result, written through the map) neither */
    for (int m = K->nm_core; m < K->nm; m++) {
      const ecg_node *p = g->nodes[K->members[m]];
      int t = p->outputs[0], x = p->inputs[0];
      if (!lw_tensor_used_outside(L, t, K->members, K->nm)) { L->t[t].where = LW_NONE; L->t[t].bytes = 0; }
      else if (x >= 0 && !lw_tensor_used_outside(L, x, K->members, K->nm)) { L->t[x].where = LW_NONE; L->t[x].bytes = 0; }
    }
    if (K->kind == LW_K_SINGLE) continue;
    int dpos = K->kind == LW_K_EW || K->kind == LW_K_ROW ? -1 : K->epi_from - 1; /* the dominant's member index */
    int y = -1; /* the block output the dominant output is stored in */
    for (int m = K->nm_core - 1; m >= 0; m--) {
      int t = g->nodes[K->members[m]]->outputs[0];
      if (lw_tensor_used_outside(L, t, K->members, K->nm)) {
        if (m > dpos && dpos >= 0 && g->tensors[t]->dtype == ECG_FLOAT && y < 0) y = t;
        continue;
      }
      if (m == dpos) continue; /* decided below */
      L->t[t].where = LW_NONE; /* IR_removable: stays in registers or the kernel's scratch */
      L->t[t].bytes = 0;
    }
    if (dpos >= 0) {
      const ecg_node *d = g->nodes[K->dominant];
      int t = d->outputs[0];
      /* the dominant writes into the block's output buffer; its epilogue runs there in
       * place, fused into the runtime call, or (an emitter that takes none) as one more pass
       * that reads each element before writing it */
      if (!lw_tensor_used_outside(L, t, K->members, K->nm) && y >= 0 && L->t[y].where != LW_NONE)
        L->t[t].alias_of = y;
    }
    if (K->kind == LW_K_SE) se_in_place(L, k);
  }
}
