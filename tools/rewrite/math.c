/* ecg-rewrite pass "math": DNNFusion's mathematical-property rewriting (Niu dissertation
 * §3.4.2, Table 3.4) driven by the rules of the rule files (rules.c).
 *
 * The matcher of §3.4.2: the ECG is partitioned at operators with none of the three
 * properties (ECG_PROP_ASSOC/COMM/DIST of the registry): the nodes that have one, joined
 * along producer edges, form the partitions; every operator of a rule's source has a
 * property (rules.c refuses others), so every match lies inside one partition.  In each
 * round every match of every rule rooted at a node of a partition is enumerated and its
 * gain measured; the best match of each partition (the largest FLOP reduction, then the
 * most nodes removed) is applied; rounds repeat until no partition has an improving
 * match (the fixed point; each rewrite strictly lowers (FLOPs, nodes), so it ends).
 *
 * Matching: operator terms match producers with that registry id and one output;
 * element-wise and MatMul nodes must carry no attributes; a reduction (ecg_reduction_of)
 * may carry its axes (attribute or constant input), keepdims and noop_with_empty_axes,
 * and all reductions of one match must reduce the same dims of same-shaped inputs with the
 * same keepdims.  Operands of operators the registry marks ECG_PROP_COMM match in either
 * order; variables bind tensors (a repeated variable the same tensor); numbers match
 * constants of that value.  Every intermediate must be read only inside the match, the
 * root must be float32, and the rule's conditions must hold.  The target is then built
 * (identical subterms once; a target reduction reduces the matched dims, given as an
 * "axes" attribute, of an operand that must have the matched reductions' input shape),
 * shapes inferred by the registry, and kept only when it has fewer FLOPs than the matched
 * nodes (constant subterms count as folded), or as many and fewer nodes, and gives the
 * root's dtype and shape; the root's output keeps its name.  Constant subterms are
 * folded (bounded by --fold-max-bytes) before every round and at the end.
 *
 * The matcher works on a read-only view of a graph (rw_view, rewrite.h), so that it is
 * also the per-match API of the OCGGS search (substmath.c): rw_match_at matches one rule
 * at one node, rw_build_target builds a match's target into a graph (here the ECG, there
 * a scratch ECG of the bound tensors' shapes whose nodes the search copies into its graph). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"

/* Producer and reader counts per tensor, rebuilt after every graph change (the matcher
 * asks them for every operand of every candidate; rw_producer/rw_uses scan the graph). */
typedef struct {
  int *prod;  /* node writing tensor t, -1 */
  int *uses;  /* node inputs reading t, plus one per graph output naming it */
  size_t nt;
} graph_index;

static int index_build(const ecg_graph *g, graph_index *x) {
  free(x->prod);
  free(x->uses);
  x->nt = g->n_tensors;
  x->prod = malloc(sizeof *x->prod * (x->nt + 1));
  x->uses = calloc(x->nt + 1, sizeof *x->uses);
  if (!x->prod || !x->uses) return ECG_ERR_INTERNAL;
  for (size_t t = 0; t < x->nt; t++) x->prod[t] = -1;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && (size_t)n->outputs[k] < x->nt) x->prod[n->outputs[k]] = (int)i;
    for (size_t k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0 && (size_t)n->inputs[k] < x->nt) x->uses[n->inputs[k]]++;
  }
  for (size_t k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] >= 0 && (size_t)g->outputs[k] < x->nt) x->uses[g->outputs[k]]++;
  return ECG_OK;
}

/* ------------------------------------------------------------ facts for the matcher */

bool rw_reduction_info(const ecg_graph *g, const ecg_node *n, rw_vnode *x) {
  x->red = false;
  if (n->n_inputs < 1 || n->n_inputs > 2) return false;
  for (size_t a = 0; a < n->n_attrs; a++) {
    const char *an = n->attrs[a]->name;
    if (strcmp(an, "axes") && strcmp(an, "keepdims") && strcmp(an, "noop_with_empty_axes")) return false;
  }
  const ecg_tensor *in = ecg_node_input(g, n, 0);
  int any = 0;
  if (!in || !ecg_tensor_static(in)) return false;
  int r = ecg_tensor_dims(in, x->red_dims);
  if (r < 0 || r > ECG_MAX_RANK || ecg_reduced_dims(g, n, r, x->red_mask) < 0) return false;
  for (int d = 0; d < r; d++) any |= x->red_mask[d];
  if (!any) return false;
  x->red_rank = r;
  x->red_keep = ecg_attr_i(n, "keepdims", 1);
  return x->red = true;
}

unsigned rw_const_props(const ecg_tensor *t, bool *uniform, double *value) {
  *uniform = false;
  *value = 0;
  if (!t || !t->is_const) return 0;
  int64_t ne = ecg_tensor_numel(t);
  if (ne < 1 || (size_t)ne * ecg_dtype_size(t->dtype) != t->data.len) return 0;
  unsigned c = RW_COND_CONST | RW_COND_NONNEG | RW_COND_POS | RW_COND_INT | (ne == 1 ? RW_COND_SCALAR : 0);
  double first = ecg_const_f64(t, 0);
  bool same = true;
  for (int64_t i = 0; i < ne; i++) {
    double v = ecg_const_f64(t, i);
    if (!(v >= 0)) c &= ~(unsigned)RW_COND_NONNEG;
    if (!(v > 0)) c &= ~(unsigned)RW_COND_POS;
    if (!(v == (double)(int64_t)v && v > -1e6 && v < 1e6)) c &= ~(unsigned)RW_COND_INT;
    same = same && v == first;
  }
  *uniform = same;
  *value = first;
  return c;
}

/* ------------------------------------------------------------ the ECG as a view */

static int ev_producer(const rw_view *v, int t) {
  const graph_index *ix = v->aux;
  return t >= 0 && (size_t)t < ix->nt ? ix->prod[t] : -1;
}

static int ev_uses(const rw_view *v, int t) {
  const graph_index *ix = v->aux;
  return t >= 0 && (size_t)t < ix->nt ? ix->uses[t] : 0;
}

static bool ev_node(const rw_view *v, int i, rw_vnode *x) {
  const ecg_graph *g = v->g;
  const ecg_node *n = g->nodes[i];
  x->op = rw_op(n);
  x->n_in = n->n_inputs < RW_VIEW_MAX_IN ? (int)n->n_inputs : RW_VIEW_MAX_IN;
  for (int k = 0; k < x->n_in; k++) x->in[k] = n->inputs[k];
  x->n_out = (int)n->n_outputs;
  x->out0 = n->n_outputs ? n->outputs[0] : -1;
  x->plain = n->n_attrs == 0;
  if (x->op != ECG_OP_NONE && ecg_reduction_of(x->op)) rw_reduction_info(g, n, x);
  else x->red = false;
  return x->op != ECG_OP_NONE;
}

static int ev_dtype(const rw_view *v, int t) { return ((const ecg_graph *)v->g)->tensors[t]->dtype; }

static int ev_dims(const rw_view *v, int t, int64_t *d) {
  const ecg_tensor *x = ((const ecg_graph *)v->g)->tensors[t];
  return ecg_tensor_static(x) ? ecg_tensor_dims(x, d) : -1;
}

static bool ev_is_const(const rw_view *v, int t) { return ((const ecg_graph *)v->g)->tensors[t]->is_const; }

static bool ev_const_cond(const rw_view *v, int t, unsigned c) {
  bool u;
  double x;
  return (rw_const_props(((const ecg_graph *)v->g)->tensors[t], &u, &x) & c) == c && ev_is_const(v, t);
}

static bool ev_const_all(const rw_view *v, int t, double x) { return rw_const_all(((const ecg_graph *)v->g)->tensors[t], x); }

static rw_view ecg_view(const ecg_graph *g, const graph_index *ix) {
  return (rw_view){g, ix, ev_producer, ev_uses, ev_node, ev_dtype, ev_dims, ev_is_const, ev_const_cond, ev_const_all};
}

/* ------------------------------------------------------------ matching */

/* Reduction n like the match's others (or the first: recorded in m). */
static bool reduction_like(rw_match *m, const rw_vnode *n) {
  if (!n->red) return false;
  if (!m->has_red) {
    m->has_red = true;
    m->red_rank = n->red_rank;
    m->red_keep = n->red_keep;
    memcpy(m->red_mask, n->red_mask, sizeof *n->red_mask * (size_t)n->red_rank);
    memcpy(m->red_dims, n->red_dims, sizeof *n->red_dims * (size_t)n->red_rank);
    return true;
  }
  return m->red_rank == n->red_rank && m->red_keep == n->red_keep &&
         !memcmp(m->red_mask, n->red_mask, sizeof *n->red_mask * (size_t)n->red_rank) &&
         !memcmp(m->red_dims, n->red_dims, sizeof *n->red_dims * (size_t)n->red_rank);
}

/* Match source term ti against tensor t. */
static bool match_term(const rw_view *v, rw_match *m, int ti, int t) {
  const rw_term *x = &m->r->terms[ti];
  if (t < 0) return false;
  if (x->var >= 0) {
    if (m->bind[x->var] >= 0) return m->bind[x->var] == t;
    m->bind[x->var] = t;
    return true;
  }
  if (x->op == ECG_OP_NONE) return v->const_all(v, t, x->num);
  int p = v->producer(v, t);
  rw_vnode n;
  if (p < 0 || !v->node(v, p, &n) || n.op != x->op || n.n_out != 1) return false;
  if (ecg_reduction_of(n.op) ? !reduction_like(m, &n) : (n.n_in != x->n_kids || !n.plain)) return false;
  m->node[ti] = p;
  rw_match save = *m;
  bool ok = true;
  for (int k = 0; k < x->n_kids && ok; k++) ok = match_term(v, m, x->kids[k], n.in[k]);
  if (ok || x->n_kids != 2 || !(ecg_op_get(n.op)->props & ECG_PROP_COMM)) return ok;
  *m = save;
  return match_term(v, m, x->kids[0], n.in[1]) && match_term(v, m, x->kids[1], n.in[0]);
}

/* The distinct matched nodes, root first, into m->set. */
static void matched_nodes(rw_match *m) {
  m->n_set = 0;
  m->set[m->n_set++] = m->root;
  for (int t = 0; t < m->r->n_terms; t++) {
    if (m->node[t] < 0) continue;
    int k = 0;
    while (k < m->n_set && m->set[k] != m->node[t]) k++;
    if (k == m->n_set) m->set[m->n_set++] = m->node[t];
  }
}

/* Intermediates read only inside the match; conditions hold. */
static bool match_ok(const rw_view *v, const rw_match *m) {
  rw_vnode nodes[RW_MAX_TERMS];
  for (int i = 0; i < m->n_set; i++)
    if (!v->node(v, m->set[i], &nodes[i])) return false;
  for (int i = 1; i < m->n_set; i++) {
    int t = nodes[i].out0, inside = 0;
    for (int j = 0; j < m->n_set; j++)
      for (int k = 0; k < nodes[j].n_in; k++) inside += nodes[j].in[k] == t;
    if (v->uses(v, t) != inside) return false;
  }
  for (int x = 0; x < m->r->n_vars; x++) {
    int b = m->bind[x];
    unsigned c = m->r->cond[x];
    if (!c) continue;
    if (b < 0) return false;
    if (c == RW_COND_NONNEG && !v->is_const(v, b)) { /* nonneg alone: also a producer that never writes < 0 */
      int p = v->producer(v, b);
      rw_vnode pn;
      if (p < 0 || !v->node(v, p, &pn) || !(ecg_op_get(pn.op)->props & ECG_PROP_NONNEG)) return false;
      continue;
    }
    /* every other condition implies const */
    if (!v->is_const(v, b) || !v->const_cond(v, b, c | RW_COND_CONST)) return false;
  }
  return true;
}

bool rw_match_at(const rw_view *v, const rw_rule *r, int root, rw_match *m) {
  rw_vnode n;
  if (!v->node(v, root, &n) || n.op != r->terms[r->src].op || n.n_out != 1 || n.out0 < 0 ||
      v->dtype(v, n.out0) != ECG_FLOAT)
    return false;
  memset(m, 0, sizeof *m);
  m->r = r;
  m->root = root;
  memset(m->bind, -1, sizeof m->bind);
  memset(m->node, -1, sizeof m->node);
  if (!match_term(v, m, r->src, n.out0) || m->node[r->src] != root) return false;
  matched_nodes(m);
  return match_ok(v, m);
}

/* ------------------------------------------------------------ building the target */

static void term_key(const rw_rule *r, int ti, char *buf, size_t n) {
  const rw_term *x = &r->terms[ti];
  if (x->var >= 0) { snprintf(buf, n, "v%d", x->var); return; }
  if (x->op == ECG_OP_NONE) { snprintf(buf, n, "%.17g", x->num); return; }
  size_t off = (size_t)snprintf(buf, n, "%d(", (int)x->op);
  for (int k = 0; k < x->n_kids && off < n; k++) {
    term_key(r, x->kids[k], buf + off, n - off);
    off += strlen(buf + off);
    if (off + 1 < n) { buf[off++] = ','; buf[off] = 0; }
  }
  if (off + 1 < n) { buf[off++] = ')'; buf[off] = 0; }
}

/* Build target term ti; returns its tensor id, -1 when a shape does not infer, -2 on OOM. */
static int build(ecg_graph *g, const rw_match *m, int ti, const char *base, int opset, rw_target *b) {
  const rw_rule *r = m->r;
  const rw_term *x = &r->terms[ti];
  if (x->var >= 0) return m->bind[x->var];
  char key[128];
  term_key(r, ti, key, sizeof key);
  for (int i = 0; i < b->n; i++)
    if (!strcmp(b->key[i], key)) return b->tensor[i];
  int t;
  if (x->op == ECG_OP_NONE) {
    float v = (float)x->num;
    if ((t = rw_add_const_f32(g, r->name, 0, NULL, &v)) < 0) return -2;
  } else {
    int in[RW_MAX_KIDS];
    for (int k = 0; k < x->n_kids; k++)
      if ((in[k] = build(g, m, x->kids[k], base, opset, b)) < 0) return in[k];
    char name[256];
    rw_unique_name(g, base[0] ? base : r->name, name, sizeof name);
    const ecg_op_info *op = ecg_op_get(x->op);
    t = ecg_add_tensor(g, name, ECG_FLOAT, -1, NULL);
    int ni = t < 0 ? -1 : ecg_add_node(g, name, op->name, "", opset, x->n_kids, in, 1, &t);
    if (ni < 0) return -2;
    b->made[b->n_made++] = ni;
    if (ecg_reduction_of(op->id)) {
      /* the matched reductions' dims, of an operand shaped like their input */
      int64_t axes[ECG_MAX_RANK], dims[ECG_MAX_RANK];
      int na = 0;
      const ecg_tensor *xin = g->tensors[in[0]];
      if (!m->has_red || !ecg_tensor_static(xin) || ecg_tensor_dims(xin, dims) != m->red_rank ||
          memcmp(dims, m->red_dims, sizeof *dims * (size_t)m->red_rank))
        return -1;
      for (int d = 0; d < m->red_rank; d++)
        if (m->red_mask[d]) axes[na++] = d;
      if (ecg_attr_set_ints(g->nodes[ni], "axes", na, axes) != ECG_OK ||
          ecg_attr_set_i(g->nodes[ni], "keepdims", m->red_keep) != ECG_OK)
        return -2;
    }
    ecg_err ignore;
    if (op->infer(g, g->nodes[ni], &ignore) != ECG_OK) return -1;
    g->nodes[ni]->mapping_type = (Ecg__MappingType)op->mapping;
  }
  if (b->n < RW_MAX_TERMS) {
    snprintf(b->key[b->n], sizeof b->key[0], "%s", key);
    b->tensor[b->n++] = t;
  }
  return t;
}

int rw_build_target(ecg_graph *g, const rw_match *m, const char *name, int opset, rw_target *b) {
  return build(g, m, m->r->dst, name, opset, b);
}

void rw_nodes_cost(const ecg_graph *g, const int *nodes, int n, size_t fold_max, int64_t *flops, int *count) {
  int folded_out[RW_MAX_TERMS], nf = 0;
  *flops = 0;
  *count = 0;
  for (int i = 0; i < n; i++) {
    const ecg_node *nd = g->nodes[nodes[i]];
    bool folded = true;
    for (size_t k = 0; k < nd->n_inputs && folded; k++) {
      const ecg_tensor *t = ecg_node_input(g, nd, (int)k);
      folded = t && t->is_const;
      for (int j = 0; j < nf && !folded; j++) folded = folded_out[j] == nd->inputs[k];
    }
    const ecg_tensor *o = ecg_node_output(g, nd, 0);
    const ecg_op_info *op = rw_info(nd);
    if (folded && ecg_op_foldable(op) && o && ecg_tensor_numel(o) >= 0 && (size_t)ecg_tensor_numel(o) * ecg_dtype_size(o->dtype) <= fold_max) {
      if (nf < RW_MAX_TERMS) folded_out[nf++] = nd->outputs[0];
      continue;
    }
    int64_t f = op ? op->flops(g, nd) : -1;
    *flops += f > 0 ? f : 0;
    (*count)++;
  }
}

/* ------------------------------------------------------------ the pass */

/* A target that is not used: its nodes read nothing more (rw_remove_dead deletes them),
 * so they never count as readers of a tensor in later matches. */
static void discard(ecg_graph *g, const rw_target *b) {
  for (int k = 0; k < b->n_made; k++) g->nodes[b->made[k]]->n_inputs = 0;
}

/* What rewriting with one rule at one node saves: FLOPs, then nodes. */
typedef struct {
  int64_t flops;
  int nodes;
} gain;

static bool better(gain a, gain b) { return a.flops > b.flops || (a.flops == b.flops && a.nodes > b.nodes); }

/* Try rule r at node i: on an improving match *gn receives the gain; with apply the graph
 * is rewritten (dead nodes remain; *gn.flops < 0 when nothing was done), else the target
 * is built, measured and discarded.  Returns ECG_OK or ECG_ERR_INTERNAL. */
static int try_rule(ecg_graph *g, const graph_index *ix, const rw_rule *r, int i, size_t fold_max, bool apply,
                    gain *gn) {
  ecg_node *n = g->nodes[i];
  rw_view v = ecg_view(g, ix);
  rw_match m;
  *gn = (gain){-1, 0};
  if (!rw_match_at(&v, r, i, &m)) return ECG_OK;
  rw_target b = {.n = 0};
  int t = rw_build_target(g, &m, n->name, n->opset, &b);
  if (t == -2) return ECG_ERR_INTERNAL;
  n = g->nodes[i]; /* the node array may have moved */
  if (t < 0 || !rw_same_shape(g->tensors[t], g->tensors[n->outputs[0]])) { discard(g, &b); return ECG_OK; }
  int64_t f0, f1;
  int c0, c1;
  rw_nodes_cost(g, m.set, m.n_set, 0, &f0, &c0);
  rw_nodes_cost(g, b.made, b.n_made, fold_max, &f1, &c1);
  gain d = {f0 - f1, c0 - c1};
  if (!better(d, (gain){0, 0})) { discard(g, &b); return ECG_OK; }
  if (!apply) { discard(g, &b); *gn = d; return ECG_OK; }
  if (rw_bypass(g, i, t, n->outputs[0])) *gn = d;
  else discard(g, &b);
  return ECG_OK;
}

/* Partitions (§3.4.2 step 1): part[i] = representative node of node i's partition, -1 for
 * nodes whose operator has none of the three properties (union-find over producer edges
 * between nodes that have one). */
static int find(int *part, int i) {
  while (part[i] != i) i = part[i] = part[part[i]];
  return i;
}

static void partitions(const ecg_graph *g, const graph_index *ix, int *part) {
  const unsigned PROPS = ECG_PROP_ASSOC | ECG_PROP_COMM | ECG_PROP_DIST;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_op_info *op = rw_info(g->nodes[i]);
    part[i] = op && (op->props & PROPS) ? (int)i : -1;
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    if (part[i] < 0) continue;
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) {
      int t = n->inputs[k], p = t >= 0 && (size_t)t < ix->nt ? ix->prod[t] : -1;
      if (p >= 0 && part[p] >= 0) part[find(part, p)] = find(part, (int)i);
    }
  }
  for (size_t i = 0; i < g->n_nodes; i++)
    if (part[i] >= 0) part[i] = find(part, (int)i);
}

/* The best match of each partition (§3.4.2 step 2). */
typedef struct {
  gain gn;
  int rule, node;
} best;

int rw_math(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e) {
  if (!o->rules) return ECG_OK;
  graph_index ix = {0};
  int *part = NULL, rc = ECG_OK;
  best *bp = NULL;
  for (int round = 0; round < 100000 && rc == ECG_OK; round++) {
    /* constant subterms of the last round's targets fold now, so that every node a match
     * counts is one that stays (the gains then strictly lower the graph's FLOPs, or its
     * nodes, and the rounds end) */
    int folded;
    if ((rc = rw_remove_dead(g, e)) != ECG_OK || (rc = ecg_fold_constants_limit(g, o->fold_max_bytes, &folded, e)) != ECG_OK ||
        (rc = rw_remove_dead(g, e)) != ECG_OK)
      break;
    size_t nn = g->n_nodes;
    free(part);
    free(bp);
    part = malloc(sizeof *part * (nn + 1));
    bp = malloc(sizeof *bp * (nn + 1));
    if (!part || !bp || index_build(g, &ix) != ECG_OK) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    partitions(g, &ix, part);
    for (size_t i = 0; i < nn; i++) bp[i] = (best){{-1, 0}, -1, -1};
    /* enumerate every rule at every node of every partition; keep the best per partition */
    for (size_t i = 0; i < nn && rc == ECG_OK; i++) {
      const ecg_op_info *op = part[i] >= 0 ? rw_info(g->nodes[i]) : NULL;
      for (int k = 0; op && k < o->rules->n; k++) {
        const rw_rule *r = &o->rules->v[k];
        gain gn;
        if (r->terms[r->src].op != op->id) continue;
        if (try_rule(g, &ix, r, (int)i, o->fold_max_bytes, false, &gn) != ECG_OK) {
          rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
          break;
        }
        best *b = &bp[part[i]];
        if (gn.flops >= 0 && (b->rule < 0 || better(gn, b->gn))) *b = (best){gn, k, (int)i};
      }
    }
    /* apply them (step 3 repeats until no partition has one); partitions are disjoint,
     * the index is rebuilt after each rewrite */
    int applied = 0;
    for (size_t p = 0; p < nn && rc == ECG_OK; p++) {
      if (bp[p].rule < 0) continue;
      gain gn;
      if (applied && index_build(g, &ix) != ECG_OK) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      const rw_rule *r = &o->rules->v[bp[p].rule];
      if (try_rule(g, &ix, r, bp[p].node, o->fold_max_bytes, true, &gn) != ECG_OK) {
        rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
        break;
      }
      if (gn.flops >= 0) {
        rw_count(st, r->name);
        applied++;
      }
    }
    if (!applied) break;
  }
  free(part);
  free(bp);
  free(ix.prod);
  free(ix.uses);
  ECG_TRY(rc);
  int folded;
  ECG_TRY(rw_remove_dead(g, e));
  ECG_TRY(ecg_fold_constants_limit(g, o->fold_max_bytes, &folded, e));
  return rw_remove_dead(g, e);
}
