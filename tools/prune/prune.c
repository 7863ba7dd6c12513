/* PatDNN pruning (Niu dissertation §2.3-2.4): natural patterns, top-k pattern set,
 * projection of each 3x3 kernel onto its best pattern (the Euclidean projection step of
 * the extended ADMM, without the training steps), connectivity pruning by kernel L2
 * norm, and --detect (the same annotation read off weights that are already sparse). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prune.h"

#define CENTRE 4u       /* bit of the centre tap of a 3x3 kernel */
#define MAX_DETECT 32   /* --detect: more distinct kernel masks than this is not pattern-sparse */

void prune_result_free(prune_result *r) {
  free(r->layers);
  memset(r, 0, sizeof *r);
}

/* The natural pattern of a 3x3 kernel (§2.4.1): the centre and the 3 other taps of
 * largest magnitude (ties: lower tap first). 0 for an all-zero kernel. */
static uint32_t natural_pattern(const float *k) {
  bool any = false;
  for (int q = 0; q < 9; q++) any |= k[q] != 0.0f;
  if (!any) return 0;
  uint32_t mask = 1u << CENTRE;
  for (int pick = 0; pick < 3; pick++) {
    int best = -1;
    for (int q = 0; q < 9; q++) {
      if (mask >> q & 1u) continue;
      if (best < 0 || fabsf(k[q]) > fabsf(k[best])) best = q;
    }
    mask |= 1u << best;
  }
  return mask;
}

/* Sort helper: entries (key = count, tie = mask ascending), descending by count. */
typedef struct { int64_t count; uint32_t mask; } mask_count;
static int mc_cmp(const void *a, const void *b) {
  const mask_count *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->mask < y->mask ? -1 : x->mask > y->mask;
}

/* Kernel norms, descending (ties: lower kernel index first). */
static const double *g_norm;
static int norm_cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  if (g_norm[x] != g_norm[y]) return g_norm[x] > g_norm[y] ? -1 : 1;
  return x - y;
}

static int width_of(int64_t maxval) { return maxval < 256 ? 1 : maxval < 65536 ? 2 : 4; }

/* Index-structure sizes of one annotated layer (§2.5.3, Fig. 2.16), counted as the
 * lowered kernels read them: FKW's offset, reorder, index and stride arrays (and the
 * per-filter weight offsets when the layer mixes pattern sizes) at the widths ecg-lower
 * stores them (ecg_sparse_fkw_widths) vs the CSR baseline's int32 row pointers and int32
 * column indices (ecg_rt1_csr_conv2d); csr_narrow_index_bytes is CSR with each array at
 * its narrowest width, a CSR no kernel here reads, reported for comparison. */
static void index_bytes(const ecg_sparse_conv *s, int64_t c, int64_t kk, prune_layer *L) {
  L->fkw_index_bytes = ecg_sparse_fkw_index_bytes(s, c);
  L->csr_index_bytes = ((int64_t)s->n_reorder + 1) * 4 + L->nonzero * 4;
  L->csr_narrow_index_bytes = ((int64_t)s->n_reorder + 1) * width_of(L->nonzero) + L->nonzero * width_of(c * kk - 1);
}

/* Order the used patterns of a layer by kernel count (descending, ties by mask) and
 * renumber kpat into that order; fills L->masks, L->hist, L->n_patterns. */
static void order_layer_patterns(const uint32_t *cand, int n_cand, int *kpat, int64_t nkern, prune_layer *L) {
  mask_count mc[64];
  int64_t cnt[64] = {0};
  for (int64_t q = 0; q < nkern; q++)
    if (kpat[q] >= 0) cnt[kpat[q]]++;
  int nu = 0;
  for (int p = 0; p < n_cand; p++)
    if (cnt[p]) mc[nu++] = (mask_count){cnt[p], cand[p]};
  qsort(mc, (size_t)nu, sizeof *mc, mc_cmp);
  int to_new[64];
  for (int p = 0; p < n_cand; p++) {
    to_new[p] = -1;
    for (int u = 0; u < nu; u++)
      if (mc[u].mask == cand[p] && cnt[p]) to_new[p] = u;
  }
  for (int64_t q = 0; q < nkern; q++)
    if (kpat[q] >= 0) kpat[q] = to_new[kpat[q]];
  L->n_patterns = nu;
  for (int u = 0; u < nu; u++) { L->masks[u] = mc[u].mask; L->hist[u] = mc[u].count; }
}

/* --detect on one layer: kernel masks as they are. Returns ECG_OK with L->annotated set
 * when the layer is pattern-sparse (some kernel removed or not full, at most MAX_DETECT
 * patterns after sub-masks join a pattern that contains them). */
static int detect_layer(ecg_graph *g, prune_layer *L, const float *w, int *kpat, ecg_err *e) {
  int64_t m = L->dims[0], c = L->dims[1], kk = L->dims[2] * L->dims[3], nkern = m * c;
  uint32_t full = kk >= 32 ? 0xffffffffu : (1u << kk) - 1u;
  mask_count *mc = NULL;
  int nd = 0, cap = 0;
  uint32_t *masks = malloc((size_t)nkern * sizeof *masks + 4);
  if (!masks) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int64_t q = 0; q < nkern; q++) {
    uint32_t mk = 0;
    for (int64_t t = 0; t < kk; t++) mk |= (uint32_t)(w[q * kk + t] != 0.0f) << t;
    masks[q] = mk;
    if (!mk) continue;
    int at = -1;
    for (int d = 0; d < nd && at < 0; d++)
      if (mc[d].mask == mk) at = d;
    if (at >= 0) { mc[at].count++; continue; }
    if (nd > 4 * MAX_DETECT) continue; /* far too many: the layer is not pattern-sparse */
    if (nd == cap) {
      cap = cap ? 2 * cap : 16;
      mask_count *nm = realloc(mc, (size_t)cap * sizeof *mc);
      if (!nm) { free(mc); free(masks); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
      mc = nm;
    }
    mc[nd++] = (mask_count){1, mk};
  }
  qsort(mc, (size_t)nd, sizeof *mc, mc_cmp);
  uint32_t pat[64];
  int np = 0, too_many = nd > 4 * MAX_DETECT;
  for (int d = 0; d < nd && !too_many; d++) {
    int in = -1;
    for (int p = 0; p < np && in < 0; p++)
      if ((mc[d].mask & ~pat[p]) == 0) in = p;
    if (in >= 0) continue;
    if (np == MAX_DETECT) { too_many = 1; break; }
    pat[np++] = mc[d].mask;
  }
  free(mc);
  for (int64_t q = 0; q < nkern; q++) {
    kpat[q] = -1;
    if (!masks[q]) { continue; }
    L->kept++;
    for (int p = 0; p < np && kpat[q] < 0; p++)
      if ((masks[q] & ~pat[p]) == 0) kpat[q] = p;
  }
  free(masks);
  if (too_many) { L->why = "more than 32 distinct kernel masks: not pattern-sparse"; return ECG_OK; }
  if (L->kept == nkern && np == 1 && pat[0] == full) { L->why = "dense: no kernel removed, every kernel full"; return ECG_OK; }
  if (np == 0) { L->why = "every kernel is zero"; return ECG_OK; }
  order_layer_patterns(pat, np, kpat, nkern, L);
  L->patterned = !(np == 1 && pat[0] == full);
  L->connectivity = L->kept < nkern;
  ECG_TRY(ecg_sparse_set(g, L->node, L->masks, L->n_patterns, kpat, true, e));
  L->annotated = true;
  return ECG_OK;
}

/* Prune one layer in place: patterns (3x3), then connectivity (unless first). */
static int prune_layer_run(ecg_graph *g, prune_layer *L, float *w, int *kpat, const prune_opts *o,
                           const prune_result *r, bool first, double *norm, int *ord, ecg_err *e) {
  int64_t m = L->dims[0], c = L->dims[1], kk = L->dims[2] * L->dims[3], nkern = m * c;
  uint32_t full = kk >= 32 ? 0xffffffffu : (1u << kk) - 1u;
  bool pat = L->dims[2] == 3 && L->dims[3] == 3 && r->n_set > 0;
  bool conn = !first && o->connectivity > 1.0;
  if (!pat && !conn) return ECG_OK;
  const uint32_t *cand = pat ? r->set : &full;
  int n_cand = pat ? r->n_set : 1;
  for (int64_t q = 0; q < nkern; q++) {
    float *k = w + q * kk;
    int best = 0;
    double bn = -1;
    for (int p = 0; p < n_cand; p++) {
      double s = 0;
      for (int64_t t = 0; t < kk; t++)
        if (cand[p] >> t & 1u) s += (double)k[t] * k[t];
      if (s > bn) { bn = s; best = p; }
    }
    for (int64_t t = 0; t < kk; t++)
      if (!(cand[best] >> t & 1u)) k[t] = 0.0f;
    norm[q] = bn;
    kpat[q] = bn > 0 ? best : -1;
    ord[q] = (int)q;
  }
  if (conn) {
    int64_t keep = (int64_t)ceil((double)nkern / o->connectivity);
    g_norm = norm;
    qsort(ord, (size_t)nkern, sizeof *ord, norm_cmp);
    for (int64_t i = keep; i < nkern; i++) {
      int q = ord[i];
      memset(w + (int64_t)q * kk, 0, (size_t)kk * sizeof *w);
      kpat[q] = -1;
    }
  }
  for (int64_t q = 0; q < nkern; q++) L->kept += kpat[q] >= 0;
  L->patterned = pat;
  L->connectivity = conn;
  order_layer_patterns(cand, n_cand, kpat, nkern, L);
  if (L->n_patterns == 0) return ECG_OK; /* every kernel zero: nothing to annotate */
  ECG_TRY(ecg_sparse_set(g, L->node, L->masks, L->n_patterns, kpat, false, e));
  L->annotated = true;
  return ECG_OK;
}

/* The model's pattern set (§2.4.1): the k most frequent natural patterns of its 3x3
 * kernels, ties by mask. */
static void pattern_set(const ecg_graph *g, const prune_layer *ls, int nl, int k, prune_result *r) {
  static int64_t count[512];
  memset(count, 0, sizeof count);
  for (int i = 0; i < nl; i++) {
    const float *w;
    int64_t d[4];
    if (ls[i].dims[2] != 3 || ls[i].dims[3] != 3) continue;
    ecg_sparse_weight_dims(g, ls[i].node, d, &w);
    for (int64_t q = 0; q < d[0] * d[1]; q++) {
      uint32_t mk = natural_pattern(w + q * 9);
      if (mk) count[mk]++;
    }
  }
  mask_count mc[512];
  int n = 0;
  for (uint32_t mk = 0; mk < 512; mk++)
    if (count[mk]) mc[n++] = (mask_count){count[mk], mk};
  qsort(mc, (size_t)n, sizeof *mc, mc_cmp);
  r->n_set = n < k ? n : k;
  for (int p = 0; p < r->n_set; p++) r->set[p] = mc[p].mask;
}

int prune_run(ecg_graph *g, const prune_opts *o, prune_result *r, ecg_err *e) {
  memset(r, 0, sizeof *r);
  if (o->k_patterns < 1 || o->k_patterns > 56) return ecg_errf(e, ECG_ERR_USAGE, "--patterns %d: between 1 and 56 (the 4-entry 3x3 patterns with the centre kept)", o->k_patterns);
  if (!(o->connectivity >= 1.0) || !isfinite(o->connectivity)) return ecg_errf(e, ECG_ERR_USAGE, "--connectivity must be a number >= 1 (1 = no connectivity pruning)");
  int *order = malloc((g->n_nodes + 1) * sizeof *order);
  int *ncons = malloc((g->n_tensors + 1) * sizeof *ncons);
  r->layers = calloc(g->n_nodes + 1, sizeof *r->layers);
  if (!order || !ncons || !r->layers) { free(order); free(ncons); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  int rc = ecg_topo_order(g, order, e);
  ecg_consumer_counts(g, ncons);
  int first_conv = -1;
  int64_t maxk = 0;
  for (size_t oi = 0; rc == ECG_OK && oi < g->n_nodes; oi++) {
    int i = order[oi];
    const ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    if (op && op->id == ECG_OP_Conv && first_conv < 0) first_conv = i;
    int64_t d[4];
    if (ecg_sparse_weight_dims(g, i, d, NULL) != 0) continue;
    prune_layer *L = &r->layers[r->n_layers++];
    L->node = i;
    memcpy(L->dims, d, sizeof d);
    L->kernels = d[0] * d[1];
    L->weights = L->kernels * d[2] * d[3];
    if (ncons[n->inputs[1]] != 1) L->why = "weight shared with another node: left as it is";
    if (L->kernels > maxk) maxk = L->kernels;
  }
  free(ncons);
  if (rc == ECG_OK && !o->detect) pattern_set(g, r->layers, r->n_layers, o->k_patterns, r);
  int *kpat = malloc((size_t)maxk * sizeof *kpat + 4), *ord = malloc((size_t)maxk * sizeof *ord + 4);
  double *norm = malloc((size_t)maxk * sizeof *norm + 8);
  if (!kpat || !ord || !norm) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int li = 0; rc == ECG_OK && li < r->n_layers; li++) {
    prune_layer *L = &r->layers[li];
    const ecg_node *n = g->nodes[L->node];
    ecg_tensor *wt = g->tensors[n->inputs[1]];
    float *w = (float *)wt->data.data;
    if (L->why) {} /* shared weight: counted as it is */
    else if (o->detect) rc = detect_layer(g, L, w, kpat, e);
    else rc = prune_layer_run(g, L, w, kpat, o, r, L->node == first_conv && !o->prune_first, norm, ord, e);
    if (rc != ECG_OK) break;
    if (!L->annotated) L->kept = L->kernels;
    L->nonzero = 0;
    for (int64_t q = 0; q < L->weights; q++) L->nonzero += w[q] != 0.0f;
    if (L->annotated) {
      const ecg_sparse_conv *s = g->sparse_convs[ecg_sparse_find(g, L->node)];
      index_bytes(s, L->dims[1], L->dims[2] * L->dims[3], L);
      if (!o->detect && L->patterned)
        for (int p = 0; p < L->n_patterns; p++)
          for (int q = 0; q < r->n_set; q++)
            if (r->set[q] == L->masks[p]) r->set_hist[q] += L->hist[p];
    }
  }
  free(kpat); free(ord); free(norm); free(order);
  return rc;
}
