/* ecg-rewrite pass "math": DNNFusion's mathematical-property rewriting (Niu dissertation
 * §3.4.2, Table 3.4) driven by the rules of the rule files (rules.c).
 *
 * For every node and every rule whose source root is the node's operator, the source is
 * matched against the graph: operator terms against producers with that registry id, no
 * attributes and one output (operands of operators the registry marks ECG_PROP_COMM in
 * either order), variables bind tensors (a repeated variable the same tensor), numbers
 * match constants of that value.  Every intermediate must be read only inside the match,
 * the root must be float32, and the rule's conditions must hold.  The target is then
 * built (identical subterms once), shapes inferred by the registry, and kept only when
 * it has fewer FLOPs than the matched nodes (constant subterms count as folded), or as
 * many and fewer nodes, and gives the root's dtype and shape; the root's output keeps its
 * name.  After each rewrite the scan restarts, to a fixed point; constant subterms are
 * then folded.  Simplification: the first improving rule per node is applied, not the
 * best of all matches in a partition (the §3.4.2 partitioning is not implemented yet). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"

typedef struct {
  const rw_rule *r;
  int bind[RW_MAX_VARS];   /* tensor id per variable, -1 unbound */
  int node[RW_MAX_TERMS];  /* matched node per source term, -1 */
} match;

/* Match source term ti against tensor t. */
static bool match_term(const ecg_graph *g, match *m, int ti, int t) {
  const rw_term *x = &m->r->terms[ti];
  if (t < 0) return false;
  if (x->var >= 0) {
    if (m->bind[x->var] >= 0) return m->bind[x->var] == t;
    m->bind[x->var] = t;
    return true;
  }
  if (x->op == ECG_OP_NONE) return rw_const_all(g->tensors[t], x->num);
  int p = rw_producer(g, t);
  if (p < 0) return false;
  const ecg_node *n = g->nodes[p];
  const ecg_op_info *op = rw_info(n);
  if (!op || op->id != x->op || n->n_inputs != (size_t)x->n_kids || n->n_outputs != 1 || n->n_attrs) return false;
  m->node[ti] = p;
  match save = *m;
  bool ok = true;
  for (int k = 0; k < x->n_kids && ok; k++) ok = match_term(g, m, x->kids[k], n->inputs[k]);
  if (ok || x->n_kids != 2 || !(op->props & ECG_PROP_COMM)) return ok;
  *m = save;
  return match_term(g, m, x->kids[0], n->inputs[1]) && match_term(g, m, x->kids[1], n->inputs[0]);
}

/* The distinct matched nodes into set; returns their count. */
static int matched_nodes(const match *m, int *set) {
  int n = 0;
  for (int t = 0; t < m->r->n_terms; t++) {
    if (m->node[t] < 0) continue;
    int k = 0;
    while (k < n && set[k] != m->node[t]) k++;
    if (k == n) set[n++] = m->node[t];
  }
  return n;
}

/* Intermediates read only inside the match; conditions hold. */
static bool match_ok(const ecg_graph *g, const match *m, int root, const int *set, int n) {
  for (int i = 0; i < n; i++) {
    if (set[i] == root) continue;
    int t = g->nodes[set[i]]->outputs[0], inside = 0;
    for (int j = 0; j < n; j++)
      for (size_t k = 0; k < g->nodes[set[j]]->n_inputs; k++) inside += g->nodes[set[j]]->inputs[k] == t;
    if (rw_uses(g, t) != inside) return false;
  }
  for (int v = 0; v < m->r->n_vars; v++) {
    const ecg_tensor *t = m->bind[v] >= 0 ? g->tensors[m->bind[v]] : NULL;
    if ((m->r->cond[v] & (RW_COND_CONST | RW_COND_NONNEG)) && (!t || !t->is_const)) return false;
    if (m->r->cond[v] & RW_COND_NONNEG) {
      int64_t ne = ecg_tensor_numel(t);
      if (ne < 0 || (size_t)ne * ecg_dtype_size(t->dtype) != t->data.len) return false;
      for (int64_t i = 0; i < ne; i++)
        if (!(ecg_const_f64(t, i) >= 0)) return false;
    }
  }
  return true;
}

/* The target being built: identical subterms share one tensor. */
typedef struct {
  char key[RW_MAX_TERMS][128];
  int tensor[RW_MAX_TERMS], n;
  int made[RW_MAX_TERMS], n_made;  /* nodes created */
} build_state;

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
static int build(ecg_graph *g, const match *m, int ti, int root, build_state *b) {
  const rw_rule *r = m->r;
  const rw_term *x = &r->terms[ti];
  if (x->var >= 0) return m->bind[x->var];
  char key[128];
  term_key(r, ti, key, sizeof key);
  for (int i = 0; i < b->n; i++)
    if (!strcmp(b->key[i], key)) return b->tensor[i];
  const ecg_node *rn = g->nodes[root];
  int t;
  if (x->op == ECG_OP_NONE) {
    float v = (float)x->num;
    if ((t = rw_add_const_f32(g, r->name, 0, NULL, &v)) < 0) return -2;
  } else {
    int in[RW_MAX_KIDS];
    for (int k = 0; k < x->n_kids; k++)
      if ((in[k] = build(g, m, x->kids[k], root, b)) < 0) return in[k];
    char name[256];
    rw_unique_name(g, rn->name[0] ? rn->name : r->name, name, sizeof name);
    const ecg_op_info *op = ecg_op_get(x->op);
    t = ecg_add_tensor(g, name, ECG_FLOAT, -1, NULL);
    int ni = t < 0 ? -1 : ecg_add_node(g, name, op->name, "", rn->opset, x->n_kids, in, 1, &t);
    if (ni < 0) return -2;
    b->made[b->n_made++] = ni;
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

/* FLOPs and nodes of the given nodes; nodes whose inputs are all constants (and whose
 * output fits the fold bound) count as folded. */
static void cost(const ecg_graph *g, const int *nodes, int n, size_t fold_max, int64_t *flops, int *count) {
  *flops = 0;
  *count = 0;
  for (int i = 0; i < n; i++) {
    const ecg_node *nd = g->nodes[nodes[i]];
    bool folded = true;
    for (size_t k = 0; k < nd->n_inputs && folded; k++) {
      const ecg_tensor *t = ecg_node_input(g, nd, (int)k);
      folded = t && t->is_const;
    }
    const ecg_tensor *o = ecg_node_output(g, nd, 0);
    if (folded && o && (size_t)ecg_tensor_numel(o) * ecg_dtype_size(o->dtype) <= fold_max) continue;
    const ecg_op_info *op = rw_info(nd);
    int64_t f = op ? op->flops(g, nd) : -1;
    *flops += f > 0 ? f : 0;
    (*count)++;
  }
}

/* A target that is not used: its nodes read nothing more (rw_remove_dead deletes them),
 * so they never count as readers of a tensor in later matches. */
static void discard(ecg_graph *g, const build_state *b) {
  for (int k = 0; k < b->n_made; k++) g->nodes[b->made[k]]->n_inputs = 0;
}

/* Try rule r at node i; on success the graph is rewritten (dead nodes remain). */
static int try_rule(ecg_graph *g, const rw_rule *r, int i, size_t fold_max, bool *done) {
  ecg_node *n = g->nodes[i];
  *done = false;
  if (n->n_outputs != 1 || n->outputs[0] < 0 || g->tensors[n->outputs[0]]->dtype != ECG_FLOAT) return ECG_OK;
  match m = {.r = r};
  memset(m.bind, -1, sizeof m.bind);
  memset(m.node, -1, sizeof m.node);
  int set[RW_MAX_TERMS], ns;
  if (!match_term(g, &m, r->src, n->outputs[0]) || m.node[r->src] != i) return ECG_OK;
  ns = matched_nodes(&m, set);
  if (!match_ok(g, &m, i, set, ns)) return ECG_OK;
  build_state b = {.n = 0};
  int t = build(g, &m, r->dst, i, &b);
  if (t == -2) return ECG_ERR_INTERNAL;
  if (t < 0 || !rw_same_shape(g->tensors[t], g->tensors[n->outputs[0]])) { discard(g, &b); return ECG_OK; }
  int64_t f0, f1;
  int c0, c1;
  cost(g, set, ns, 0, &f0, &c0);
  cost(g, b.made, b.n_made, fold_max, &f1, &c1);
  if (!(f1 < f0 || (f1 == f0 && c1 < c0)) || !(*done = rw_bypass(g, i, t, n->outputs[0]))) discard(g, &b);
  return ECG_OK;
}

int rw_math(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e) {
  if (!o->rules) return ECG_OK;
  for (int round = 0; round < 4096; round++) {
    ECG_TRY(rw_remove_dead(g, e));
    bool done = false;
    size_t nn = g->n_nodes;
    for (size_t i = 0; i < nn && !done; i++) {
      const ecg_op_info *op = rw_info(g->nodes[i]);
      for (int k = 0; op && k < o->rules->n && !done; k++) {
        const rw_rule *r = &o->rules->v[k];
        if (r->terms[r->src].op != op->id) continue;
        if (try_rule(g, r, (int)i, o->fold_max_bytes, &done) != ECG_OK) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
        if (done) rw_count(st, r->name);
      }
    }
    if (!done) break;
  }
  int folded;
  ECG_TRY(rw_remove_dead(g, e));
  ECG_TRY(ecg_fold_constants_limit(g, o->fold_max_bytes, &folded, e));
  return rw_remove_dead(g, e);
}
