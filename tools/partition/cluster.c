/* CLUSTER, AGO's acyclic weighted partitioning (Xu et al., INFOCOM 2023, §IV-B,
 * Algorithm 1), and its application to an ECG (tools/partition/partition.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

/* A growable list of unit indices (a hyper node's successors or predecessors). */
typedef struct { int *a; int n, cap; } ivec;

static bool iv_has(const ivec *v, int x) {
  for (int k = 0; k < v->n; k++) if (v->a[k] == x) return true;
  return false;
}
/* Append x unless present; -1 on out of memory. */
static int iv_add(ivec *v, int x) {
  if (iv_has(v, x)) return 0;
  if (v->n == v->cap) {
    int c = v->cap ? 2 * v->cap : 4;
    int *r = realloc(v->a, (size_t)c * sizeof *r);
    if (!r) return -1;
    v->a = r;
    v->cap = c;
  }
  v->a[v->n++] = x;
  return 0;
}
static void iv_del(ivec *v, int x) {
  for (int k = 0; k < v->n; k++)
    if (v->a[k] == x) { v->a[k] = v->a[--v->n]; return; }
}

/* The hyper-node graph while CLUSTER runs. Hyper node v is alive while it has not been
 * merged into another; its members' group is found through parent[]. */
typedef struct {
  int n;
  ivec *out, *in;
  double *w;
  int *complex, *stage, *parent, *min_member, *order;
  bool *delim, *alive, *cand;
} hgraph;

/* Topological stages (AGO Definition 2): 1 for a hyper node without predecessors, else
 * 1 + the largest stage of a predecessor (the longest path from a source). Also leaves a
 * topological order of the alive hyper nodes in h->order. Returns false on a cycle. */
static bool stages(hgraph *h) {
  int *indeg = h->order + h->n, alive = 0, head = 0, tail = 0; /* order has 2n entries */
  for (int v = 0; v < h->n; v++) {
    if (!h->alive[v]) continue;
    alive++;
    indeg[v] = h->in[v].n;
    h->stage[v] = 1;
    if (indeg[v] == 0) h->order[tail++] = v;
  }
  while (head < tail) {
    int v = h->order[head++];
    for (int k = 0; k < h->out[v].n; k++) {
      int x = h->out[v].a[k];
      if (h->stage[x] < h->stage[v] + 1) h->stage[x] = h->stage[v] + 1;
      if (--indeg[x] == 0) h->order[tail++] = x;
    }
  }
  return tail == alive;
}

/* Merge hyper node u into v (Algorithm 1 line 7): v takes u's edges, weight, complex
 * count and members. Returns -1 on out of memory. */
static int merge(hgraph *h, int v, int u) {
  for (int k = 0; k < h->out[u].n; k++) {
    int x = h->out[u].a[k];
    iv_del(&h->in[x], u);
    if (x != v && (iv_add(&h->out[v], x) || iv_add(&h->in[x], v))) return -1;
  }
  for (int k = 0; k < h->in[u].n; k++) {
    int x = h->in[u].a[k];
    iv_del(&h->out[x], u);
    if (x != v && (iv_add(&h->in[v], x) || iv_add(&h->out[x], v))) return -1;
  }
  iv_del(&h->out[v], u);
  iv_del(&h->in[v], u);
  h->w[v] += h->w[u];
  h->complex[v] += h->complex[u];
  h->delim[v] = h->delim[v] || h->delim[u];
  if (h->min_member[u] < h->min_member[v]) h->min_member[v] = h->min_member[u];
  h->alive[u] = h->cand[u] = false;
  h->parent[u] = v;
  free(h->out[u].a); free(h->in[u].a);
  h->out[u] = h->in[u] = (ivec){0};
  return 0;
}

/* May hyper nodes v and u form one subgraph under r (Algorithm 1 line 6, plus the
 * baseline's constraints)? */
static bool admits(const hgraph *h, const pt_rules *r, int v, int u) {
  if (!(h->w[v] + h->w[u] < r->max_weight)) return false;
  if (r->max_complex >= 0 && h->complex[v] + h->complex[u] > r->max_complex) return false;
  if (r->delim_alone && (h->delim[v] || h->delim[u])) return false;
  return true;
}

/* The lightest admitted unit of v's affix set (AGO Definition 3: undirected neighbours
 * whose stage differs from v's by exactly 1; ties: lowest index), or -1. */
static int lightest_affix(const hgraph *h, const pt_rules *r, int v) {
  int best = -1;
  for (int dir = 0; dir < 2; dir++) {
    const ivec *nb = dir ? &h->in[v] : &h->out[v];
    for (int k = 0; k < nb->n; k++) {
      int u = nb->a[k];
      if (abs(h->stage[u] - h->stage[v]) != 1 || !admits(h, r, v, u)) continue;
      if (best < 0 || h->w[u] < h->w[best] || (h->w[u] == h->w[best] && u < best)) best = u;
    }
  }
  return best;
}

static int root(const hgraph *h, int v) {
  while (h->parent[v] != v) v = h->parent[v];
  return v;
}

static void hfree(hgraph *h) {
  for (int v = 0; h->out && v < h->n; v++) { free(h->out[v].a); free(h->in[v].a); }
  free(h->out); free(h->in); free(h->w); free(h->complex); free(h->stage); free(h->parent);
  free(h->min_member); free(h->order); free(h->delim); free(h->alive); free(h->cand);
}

/* Sort key of a final hyper node: stage, then lowest member. */
static const hgraph *sort_h;
static int by_stage(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  if (sort_h->stage[x] != sort_h->stage[y]) return sort_h->stage[x] < sort_h->stage[y] ? -1 : 1;
  return (sort_h->min_member[x] > sort_h->min_member[y]) - (sort_h->min_member[x] < sort_h->min_member[y]);
}

int pt_cluster(const pt_dag *d, const pt_rules *r, int *group_of, int *n_groups, pt_cluster_stats *st, ecg_err *e) {
  hgraph h = {.n = d->n};
  size_t n1 = (size_t)d->n + 1;
  pt_cluster_stats s = {0};
  int rc = ECG_OK;
  h.out = calloc(n1, sizeof *h.out); h.in = calloc(n1, sizeof *h.in);
  h.w = malloc(n1 * sizeof *h.w); h.complex = malloc(n1 * sizeof(int)); h.stage = malloc(n1 * sizeof(int));
  h.parent = malloc(n1 * sizeof(int)); h.min_member = malloc(n1 * sizeof(int)); h.order = malloc(2 * n1 * sizeof(int));
  h.delim = malloc(n1); h.alive = malloc(n1); h.cand = malloc(n1);
  if (!h.out || !h.in || !h.w || !h.complex || !h.stage || !h.parent || !h.min_member || !h.order || !h.delim || !h.alive || !h.cand)
    goto oom;
  for (int v = 0; v < d->n; v++) {
    h.w[v] = d->w[v];
    h.complex[v] = d->complex ? d->complex[v] : 0;
    h.delim[v] = d->delim ? d->delim[v] : false;
    h.parent[v] = h.min_member[v] = v;
    h.alive[v] = h.cand[v] = true;
  }
  for (int k = 0; k < d->ne; k++) {
    int a = d->src[k], b = d->dst[k];
    if (a < 0 || a >= d->n || b < 0 || b >= d->n || a == b) {
      rc = ecg_errf(e, ECG_ERR_INTERNAL, "CLUSTER: edge %d (%d -> %d) is not between two distinct units of %d", k, a, b, d->n);
      goto out;
    }
    if (iv_add(&h.out[a], b) || iv_add(&h.in[b], a)) goto oom;
  }
  if (!stages(&h)) { rc = ecg_errf(e, ECG_ERR_INPUT, "CLUSTER: the graph of units has a cycle"); goto out; }
  for (;;) { /* Algorithm 1 lines 4-13 */
    int v = -1;
    for (int x = 0; x < d->n; x++)
      if (h.cand[x] && (v < 0 || h.w[x] > h.w[v])) v = x;
    if (v < 0) break;
    s.iterations++;
    int u = lightest_affix(&h, r, v);
    if (u < 0) { h.cand[v] = false; continue; }
    if (merge(&h, v, u)) goto oom;
    s.merges++;
    if (!stages(&h)) { /* Theorem 1 says this cannot happen */
      rc = ecg_errf(e, ECG_ERR_INTERNAL, "CLUSTER: merging units %d and %d made a cycle", v, u);
      goto out;
    }
  }
  int ng = 0;
  for (int v = 0; v < d->n; v++) if (h.alive[v]) h.order[ng++] = v;
  sort_h = &h;
  qsort(h.order, (size_t)ng, sizeof(int), by_stage);
  for (int k = 0; k < ng; k++) h.stage[h.order[k]] = k; /* stage now holds the group number */
  for (int v = 0; v < d->n; v++) group_of[v] = h.stage[root(&h, v)];
  *n_groups = ng;
  if (st) *st = s;
  goto out;
oom:
  rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
out:
  hfree(&h);
  return rc;
}

/* ---------------------------------------------------------------- on an ECG */

int pt_partition(ecg_graph *g, pt_strategy strat, const pt_weights *w, double max_weight, pt_cluster_stats *st,
                 int *max_complex, ecg_err *e) {
  size_t nn = g->n_nodes, nb = g->n_blocks, ne = 0;
  for (size_t i = 0; i < nn; i++) ne += g->nodes[i]->n_inputs;
  int nu = (int)(nb + nn); /* units: blocks 0..nb-1, then node i as nb + i (unused when blocked) */
  int *unit = malloc((nn + 1) * sizeof(int)), *dense = malloc(((size_t)nu + 1) * sizeof(int));
  int *producer = malloc((g->n_tensors + 1) * sizeof(int)), *src = malloc((ne + 1) * sizeof(int));
  int *dst = malloc((ne + 1) * sizeof(int)), *cx = calloc((size_t)nu + 1, sizeof(int));
  int *group = malloc(((size_t)nu + 1) * sizeof(int)), *sub_of = malloc((nn + 1) * sizeof(int));
  double *uw = calloc((size_t)nu + 1, sizeof(double)), *sw = calloc((size_t)nu + 1, sizeof(double));
  bool *delim = calloc((size_t)nu + 1, 1);
  int rc = ECG_OK, n_units = 0, ng = 0;
  if (!unit || !dense || !producer || !src || !dst || !cx || !group || !sub_of || !uw || !sw || !delim) {
    rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    goto out;
  }
  /* Units (fusion blocks are never split) numbered densely in node order. */
  for (int u = 0; u < nu; u++) dense[u] = -1;
  for (size_t i = 0; i < nn; i++) {
    int b = g->nodes[i]->fusion_block;
    int u = b >= 0 && (size_t)b < nb ? b : (int)(nb + i);
    if (dense[u] < 0) dense[u] = n_units++;
    unit[i] = dense[u];
  }
  for (size_t i = 0; i < nn; i++) {
    const ecg_node *n = g->nodes[i];
    double wv;
    if ((rc = pt_node_weight(g, n, w, &wv, e)) != ECG_OK) goto out;
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    ecg_mapping m = op ? op->mapping : (ecg_mapping)n->mapping_type;
    uw[unit[i]] += wv;
    cx[unit[i]] += m == ECG_MAP_MANY_TO_MANY;
    if (m == ECG_MAP_REORGANIZE || m == ECG_MAP_SHUFFLE) delim[unit[i]] = true;
  }
  ecg_producers(g, producer);
  ne = 0;
  for (size_t i = 0; i < nn; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t < 0 || (size_t)t >= g->n_tensors || producer[t] < 0 || unit[producer[t]] == unit[i]) continue;
      src[ne] = unit[producer[t]];
      dst[ne++] = unit[i];
    }
  pt_dag dag = {n_units, (int)ne, uw, cx, delim, src, dst};
  pt_rules rules = strat == PT_RELAY ? (pt_rules){INFINITY, 1, true} : (pt_rules){max_weight, -1, false};
  if ((rc = pt_cluster(&dag, &rules, group, &ng, st, e)) != ECG_OK) goto out;
  int mc = 0;
  for (int u = 0; u < n_units; u++) sw[group[u]] += uw[u];
  int *gcx = calloc((size_t)ng + 1, sizeof(int));
  if (!gcx) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  for (int u = 0; u < n_units; u++) gcx[group[u]] += cx[u];
  for (int s = 0; s < ng; s++) if (gcx[s] > mc) mc = gcx[s];
  free(gcx);
  if (max_complex) *max_complex = mc;
  for (size_t i = 0; i < nn; i++) sub_of[i] = group[unit[i]];
  rc = ecg_subgraphs_set(g, sub_of, ng, sw, strat == PT_RELAY ? "relay" : "ago", e);
out:
  free(unit); free(dense); free(producer); free(src); free(dst); free(cx); free(group); free(sub_of);
  free(uw); free(sw); free(delim);
  return rc;
}
