/* libecg: PatDNN pattern-pruned convolutions (Niu dissertation §2.3-2.5): the FKW
 * builder with filter kernel reorder, the lookup, and the validator of the
 * `sparse_convs` annotation (format/ecg.h, "pattern-pruned convolutions"). */
#include <stdlib.h>
#include <string.h>

#include "ecg.h"

int ecg_sparse_find(const ecg_graph *g, int node) {
  for (size_t i = 0; i < g->n_sparse_convs; i++)
    if (g->sparse_convs[i]->node == node) return (int)i;
  return -1;
}

int ecg_sparse_weight_dims(const ecg_graph *g, int node, int64_t *dims, const float **w) {
  if (node < 0 || (size_t)node >= g->n_nodes) return -1;
  const ecg_node *n = g->nodes[node];
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  if (!op || op->id != ECG_OP_Conv || n->n_inputs < 2) return -1;
  const ecg_tensor *t = ecg_node_input(g, n, 1);
  if (!t || !t->is_const || t->dtype != ECG_FLOAT || ecg_tensor_dims(t, dims) != 4 || !ecg_tensor_static(t)) return -1;
  if (ecg_attr_i(n, "group", 1) != 1 || dims[2] * dims[3] > 32) return -1;
  if ((size_t)ecg_tensor_numel(t) * sizeof(float) != t->data.len) return -1;
  if (w) *w = (const float *)t->data.data;
  return 0;
}

static int popcount32(uint32_t v) { return __builtin_popcount(v); }

/* FKR order of filters: sort key = (length, pattern counts per id), so equal-length
 * filters are grouped and filters with the same pattern mix sit next to each other. */
typedef struct { int f, len; const int *cnt; int np; } fkr_key;
static int fkr_cmp(const void *a, const void *b) {
  const fkr_key *x = a, *y = b;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  for (int p = 0; p < x->np; p++)
    if (x->cnt[p] != y->cnt[p]) return x->cnt[p] > y->cnt[p] ? -1 : 1;
  return x->f - y->f;
}

int ecg_sparse_set(ecg_graph *g, int node, const uint32_t *patterns, int np, const int *kpat, bool detected,
                   ecg_err *e) {
  int64_t d[4];
  const float *w;
  char lb[256];
  if (ecg_sparse_weight_dims(g, node, d, &w) != 0)
    return ecg_errf(e, ECG_ERR_INPUT, "node %d: not a group-1 2-D Conv with a constant float32 weight", node);
  int64_t m = d[0], c = d[1], kk = d[2] * d[3];
  if (np < 1 || np > 64) return ecg_errf(e, ECG_ERR_INPUT, "node '%s': %d patterns (1 to 64 allowed)", ecg_node_label(g, g->nodes[node], lb, sizeof lb), np);
  Ecg__SparseConv *s = malloc(sizeof *s);
  int *cnt = calloc((size_t)(m * np) + 1, sizeof(int));
  fkr_key *keys = malloc((size_t)m * sizeof *keys + 1);
  if (!s || !cnt || !keys) { free(s); free(cnt); free(keys); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  ecg__sparse_conv__init(s);
  size_t nk = 0, nw = 0;
  for (int64_t f = 0; f < m; f++) {
    int len = 0;
    for (int64_t ci = 0; ci < c; ci++) {
      int p = kpat[f * c + ci];
      if (p < 0) continue;
      cnt[f * np + p]++;
      len++;
      nw += (size_t)popcount32(patterns[p]);
    }
    keys[f] = (fkr_key){(int)f, len, cnt + f * np, np};
    nk += (size_t)len;
  }
  qsort(keys, (size_t)m, sizeof *keys, fkr_cmp);
  s->node = node;
  s->detected = detected;
  s->n_patterns = (size_t)np;
  s->patterns = malloc((size_t)np * sizeof(uint32_t));
  s->n_offset = (size_t)m + 1;
  s->offset = malloc(((size_t)m + 1) * sizeof(int32_t));
  s->n_reorder = (size_t)m;
  s->reorder = malloc((size_t)m * sizeof(int32_t) + 4);
  s->n_index = nk;
  s->index = malloc(nk * sizeof(int32_t) + 4);
  s->n_stride = (size_t)(m * (np + 1));
  s->stride = malloc(s->n_stride * sizeof(int32_t) + 4);
  s->n_weight = nw;
  s->weight = malloc(nw * sizeof(float) + 4);
  if (!s->patterns || !s->offset || !s->reorder || !s->index || !s->stride || !s->weight) {
    free(cnt); free(keys);
    ecg__sparse_conv__free_unpacked(s, NULL);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  memcpy(s->patterns, patterns, (size_t)np * sizeof(uint32_t));
  size_t k = 0, wi = 0;
  for (int64_t r = 0; r < m; r++) {
    int f = keys[r].f;
    s->reorder[r] = f;
    s->offset[r] = (int32_t)k;
    int32_t *st = s->stride + r * (np + 1);
    size_t k0 = k;
    /* kernel reorder: grouped by pattern id, input channels ascending within a group */
    for (int p = 0; p < np; p++) {
      st[p] = (int32_t)(k - k0);
      for (int64_t ci = 0; ci < c; ci++) {
        if (kpat[f * c + ci] != p) continue;
        s->index[k++] = (int32_t)ci;
        const float *wk = w + ((size_t)f * c + ci) * kk;
        for (int64_t q = 0; q < kk; q++)
          if (patterns[p] >> q & 1u) s->weight[wi++] = wk[q];
      }
    }
    st[np] = (int32_t)(k - k0);
  }
  s->offset[m] = (int32_t)k;
  free(cnt); free(keys);
  /* replace an existing annotation of the node, else append */
  int at = ecg_sparse_find(g, node);
  if (at >= 0) {
    ecg__sparse_conv__free_unpacked(g->sparse_convs[at], NULL);
    g->sparse_convs[at] = s;
    return ECG_OK;
  }
  Ecg__SparseConv **arr = realloc(g->sparse_convs, (g->n_sparse_convs + 1) * sizeof *arr);
  if (!arr) { ecg__sparse_conv__free_unpacked(s, NULL); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  g->sparse_convs = arr;
  g->sparse_convs[g->n_sparse_convs++] = s;
  return ECG_OK;
}

static int width_of(int64_t maxval) { return maxval < 256 ? 1 : maxval < 65536 ? 2 : 4; }

void ecg_sparse_fkw_widths(const ecg_sparse_conv *s, int64_t c, ecg_fkw_widths *w) {
  int64_t m = (int64_t)s->n_reorder, np = (int64_t)s->n_patterns, maxlen = 0, nk = (int64_t)s->n_index;
  for (int64_t r = 0; r < m; r++)
    if (s->offset[r + 1] - s->offset[r] > maxlen) maxlen = s->offset[r + 1] - s->offset[r];
  int uniform = 1;
  for (int64_t p = 1; p < np; p++) uniform &= popcount32(s->patterns[p]) == popcount32(s->patterns[0]);
  w->offset = width_of(nk);
  w->reorder = width_of(m - 1);
  w->index = width_of(c - 1);
  w->stride = width_of(maxlen);
  w->wof = uniform ? 0 : width_of((int64_t)s->n_weight);
  w->pages = 1;
  int64_t g = (c + 255) / 256;
  if (c > 256 && nk * 1 + m * (np * g + 1) * w->stride < nk * w->index + m * (np + 1) * w->stride) {
    w->pages = (int)g;
    w->index = 1;
  }
}

int64_t ecg_sparse_fkw_index_bytes(const ecg_sparse_conv *s, int64_t c) {
  ecg_fkw_widths w;
  ecg_sparse_fkw_widths(s, c, &w);
  int64_t m = (int64_t)s->n_reorder, np = (int64_t)s->n_patterns;
  return (m + 1) * w.offset + m * w.reorder + (int64_t)s->n_index * w.index + m * (np * w.pages + 1) * w.stride + m * w.wof;
}

int ecg_sparse_validate(const ecg_graph *g, ecg_err *e) {
  char lb[256];
  for (size_t i = 0; i < g->n_sparse_convs; i++) {
    const Ecg__SparseConv *s = g->sparse_convs[i];
    int64_t d[4];
    const float *w;
    if (s->node < 0 || (size_t)s->node >= g->n_nodes)
      return ecg_errf(e, ECG_ERR_INPUT, "sparse conv %zu: node index %d out of range (graph has %zu nodes)", i, s->node, g->n_nodes);
    const ecg_node *n = g->nodes[s->node];
    const char *nm = ecg_node_label(g, n, lb, sizeof lb);
    if (ecg_sparse_find(g, s->node) != (int)i)
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): more than one sparse_convs entry", nm, n->op_type);
    if (ecg_sparse_weight_dims(g, s->node, d, &w) != 0)
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): carries a pattern annotation but is not a group-1 2-D Conv with a constant float32 weight of at most 32 taps", nm, n->op_type);
    int64_t m = d[0], c = d[1], kk = d[2] * d[3];
    size_t np = s->n_patterns;
    if (np < 1 || np > 64) return ecg_errf(e, ECG_ERR_INPUT, "node '%s': %zu patterns (1 to 64 allowed)", nm, np);
    for (size_t p = 0; p < np; p++) {
      if (s->patterns[p] == 0 || (kk < 32 && s->patterns[p] >> kk))
        return ecg_errf(e, ECG_ERR_INPUT, "node '%s': pattern %zu (mask 0x%x) is empty or outside the %lldx%lld kernel", nm, p, s->patterns[p], (long long)d[2], (long long)d[3]);
      for (size_t q = 0; q < p; q++)
        if (s->patterns[q] == s->patterns[p]) return ecg_errf(e, ECG_ERR_INPUT, "node '%s': patterns %zu and %zu are the same", nm, q, p);
    }
    if (s->n_offset != (size_t)m + 1 || s->n_reorder != (size_t)m || s->n_stride != (size_t)m * (np + 1))
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s': FKW arrays have %zu offsets, %zu reorder and %zu stride entries (expected %lld, %lld, %lld)",
                      nm, s->n_offset, s->n_reorder, s->n_stride, (long long)m + 1, (long long)m, (long long)(m * (int64_t)(np + 1)));
    if (s->offset[0] != 0 || (size_t)s->offset[m] != s->n_index)
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s': FKW offset runs from %d to %d, not 0 to %zu kernels", nm, s->offset[0], s->offset[m], s->n_index);
    char *seen = calloc((size_t)(m > c ? m : c) + 1, 1);
    int32_t *pos = malloc(((size_t)(m * c) + 1) * sizeof(int32_t)); /* kept kernel -> first weight, -1 removed */
    if (!seen || !pos) { free(seen); free(pos); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
    int rc = ECG_OK;
    for (int64_t r = 0; r < m && rc == ECG_OK; r++) {
      int f = s->reorder[r];
      if (f < 0 || f >= m || seen[f]) rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': FKW reorder is not a permutation of the %lld filters (entry %lld = %d)", nm, (long long)m, (long long)r, f);
      else seen[f] = 1;
    }
    for (int64_t q = 0; q < m * c; q++) pos[q] = -1;
    size_t wi = 0;
    for (int64_t r = 0; r < m && rc == ECG_OK; r++) {
      int32_t k0 = s->offset[r], k1 = s->offset[r + 1];
      const int32_t *st = s->stride + r * (int64_t)(np + 1);
      if (k1 < k0 || st[0] != 0 || st[np] != k1 - k0) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': FKW filter %lld: offset/stride entries disagree", nm, (long long)r);
        break;
      }
      for (size_t p = 0; p < np && rc == ECG_OK; p++) {
        if (st[p + 1] < st[p]) { rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': FKW filter %lld: stride decreases", nm, (long long)r); break; }
        for (int32_t k = k0 + st[p]; k < k0 + st[p + 1]; k++) {
          int ci = s->index[k];
          int64_t at = (int64_t)s->reorder[r] * c + ci;
          if (ci < 0 || ci >= c || pos[at] >= 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': FKW kernel %d: input channel %d out of range or repeated in its filter", nm, k, ci); break; }
          if (wi >= (1u << 24)) { rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': more than 2^24 kept weights in one layer (not supported)", nm); break; }
          pos[at] = (int32_t)wi | (int32_t)(p << 24);
          wi += (size_t)popcount32(s->patterns[p]);
        }
      }
    }
    if (rc == ECG_OK && wi != s->n_weight)
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': FKW holds %zu weights, its kernels need %zu", nm, s->n_weight, wi);
    /* the dense weight agrees: zeros outside kept kernels and patterns, the FKW values inside */
    for (int64_t q = 0; q < m * c && rc == ECG_OK; q++) {
      const float *wk = w + q * kk;
      uint32_t mask = pos[q] >= 0 ? s->patterns[pos[q] >> 24] : 0;
      size_t at = pos[q] >= 0 ? (size_t)(pos[q] & 0xffffff) : 0;
      for (int64_t t = 0; t < kk; t++) {
        bool kept = mask >> t & 1u;
        if ((kept && wk[t] != s->weight[at++]) || (!kept && wk[t] != 0.0f)) {
          rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': weight [%lld, %lld, %lld] disagrees with its pattern annotation (%s)", nm,
                        (long long)(q / c), (long long)(q % c), (long long)t, kept ? "FKW value differs" : "non-zero outside the pattern");
          break;
        }
      }
    }
    free(seen); free(pos);
    if (rc != ECG_OK) return rc;
  }
  return ECG_OK;
}

int ecg_sparse_remap(ecg_graph *g, const int *old_to_new, size_t n_old) {
  size_t w = 0;
  int dropped = 0;
  for (size_t i = 0; i < g->n_sparse_convs; i++) {
    Ecg__SparseConv *s = g->sparse_convs[i];
    int v = s->node >= 0 && (size_t)s->node < n_old ? old_to_new[s->node] : -1;
    if (v < 0) {
      ecg__sparse_conv__free_unpacked(s, NULL);
      dropped++;
      continue;
    }
    s->node = v;
    g->sparse_convs[w++] = s;
  }
  g->n_sparse_convs = w;
  return dropped;
}
