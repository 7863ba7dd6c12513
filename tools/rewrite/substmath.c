/* ecg-rewrite "subst": the rules of the rule files (DNNFusion Table 3.4 and its
 * generalisations, rules.c) as substitutions of the OCGGS search (Fang et al., PVLDB
 * 13(11) 2020, Def. 2: a substitution is a rule and a match), beside the structural rules
 * of subst.c, so that the search runs "over the rule set plus TASO-style structural rules".
 *
 * Matching is math.c's own matcher (rw_match_at) on a view of the weightless sg graph:
 * constants' data are summarised when the sg is built (sg_val.cprops, uniform, num: what
 * the rules' conditions and number terms read), reductions carry their reduced dims
 * (sg_node.red_bits, keep).  Unlike the math pass, a match is offered whatever its FLOP
 * change: the search's cost model decides (OCGGS: rules may raise or lower the cost).
 *
 * Applying a match builds its target with math.c's builder (rw_build_target) into a
 * scratch ECG that holds one tensor per bound variable (shape, dtype, constness; no data),
 * so the registry infers the shapes and FLOPs of the new nodes; those nodes are then
 * appended to the sg (labelled with the step, OCGGS Def. 6), the root's readers read the
 * target, and the matched nodes die.  A new node whose inputs are all constants is folded
 * (its output a constant, cost 0), as the math pass folds constant subterms; numbers of
 * the target become SG_R_NUM constants.  sg_materialize writes them into the ECG. */
#include <stdlib.h>
#include <string.h>

#include "subst.h"

/* ------------------------------------------------------------ the sg as a view */

static int sv_producer(const rw_view *v, int t) {
  const sg_graph *g = v->g;
  int p = t >= 0 && t < g->nv ? g->v[t].producer : -1;
  return p >= 0 && g->n[p].alive ? p : -1;
}

static int sv_uses(const rw_view *v, int t) { return sg_uses(v->g, t); }

static bool sv_node(const rw_view *v, int i, rw_vnode *x) {
  const sg_graph *g = v->g;
  const sg_node *n = &g->n[i];
  if (!n->alive || n->opaque) return false;
  x->op = (ecg_op_id)n->op;
  x->n_in = n->n_in;
  memcpy(x->in, n->in, sizeof *n->in * (size_t)n->n_in);
  x->n_out = n->n_out;
  x->out0 = n->n_out ? n->out[0] : -1;
  x->plain = n->plain;
  x->red = n->red && n->n_in >= 1 && n->in[0] >= 0 && g->v[n->in[0]].rank > 0;
  if (x->red) {
    const sg_val *in = &g->v[n->in[0]];
    x->red_rank = in->rank;
    x->red_keep = n->keep;
    for (int d = 0; d < in->rank; d++) {
      x->red_mask[d] = n->red_bits >> d & 1;
      x->red_dims[d] = in->dim[d];
    }
  }
  return true;
}

static int sv_dtype(const rw_view *v, int t) { return ((const sg_graph *)v->g)->v[t].dtype; }

static int sv_dims(const rw_view *v, int t, int64_t *d) {
  const sg_val *x = &((const sg_graph *)v->g)->v[t];
  if (x->rank > 0) memcpy(d, x->dim, sizeof *d * (size_t)x->rank);
  return x->rank;
}

static bool sv_is_const(const rw_view *v, int t) { return ((const sg_graph *)v->g)->v[t].is_const; }

static bool sv_const_cond(const rw_view *v, int t, unsigned c) { return (((const sg_graph *)v->g)->v[t].cprops & c) == c; }

static bool sv_const_all(const rw_view *v, int t, double x) {
  const sg_val *s = &((const sg_graph *)v->g)->v[t];
  return s->is_const && (s->cprops & RW_COND_CONST) && s->uniform && s->num == x;
}

static rw_view sg_view(const sg_graph *g) {
  return (rw_view){g, NULL, sv_producer, sv_uses, sv_node, sv_dtype, sv_dims, sv_is_const, sv_const_cond, sv_const_all};
}

/* ------------------------------------------------------------ enumerate, check */

/* Operator levels of term ti (a variable or number: 0). */
static int depth(const rw_rule *r, int ti) {
  int d = 0;
  for (int k = 0; k < r->terms[ti].n_kids; k++) {
    int x = depth(r, r->terms[ti].kids[k]);
    d = x > d ? x : d;
  }
  return r->terms[ti].op == ECG_OP_NONE ? 0 : d + 1;
}

void sg_math_enumerate(const sg_graph *g, const rw_rules *rs, int base, int from, void (*emit)(void *ctx, const sg_sub *s),
                       void *ctx) {
  rw_view v = sg_view(g);
  /* the rules' root operators and deepest source, read once (a rule is a large struct) */
  int *root_op = malloc(sizeof *root_op * ((size_t)rs->n + 1)), levels = 1;
  bool *near = malloc(sizeof *near * ((size_t)g->nn + 1));
  if (!root_op || !near) { free(root_op); free(near); return; }
  for (int k = 0; k < rs->n; k++) {
    const rw_rule *r = &rs->v[k];
    int d = depth(r, r->src);
    root_op[k] = r->terms[r->src].op;
    levels = d > levels ? d : levels;
  }
  /* a match is its root and producers up to levels - 1 edges above it: one touching a
   * node >= from (DPP's new matches, OCGGS Theorem 6) is rooted at most that far below */
  for (int i = 0; i < g->nn; i++) near[i] = i >= from;
  for (int l = 1; l < levels && from > 0; l++)
    for (int i = 0; i < g->nn; i++)
      for (int k = 0; g->n[i].alive && !near[i] && k < g->n[i].n_in; k++) {
        int p = g->n[i].in[k] >= 0 ? g->v[g->n[i].in[k]].producer : -1;
        near[i] = p >= 0 && near[p];
      }
  for (int i = 0; i < g->nn; i++) {
    const sg_node *n = &g->n[i];
    /* every source operator has one of the three properties (rules.c): others are no root */
    if (!near[i] || !n->alive || n->opaque ||
        !(ecg_op_get((ecg_op_id)n->op)->props & (ECG_PROP_ASSOC | ECG_PROP_COMM | ECG_PROP_DIST)))
      continue;
    for (int k = 0; k < rs->n; k++) {
      const rw_rule *r = &rs->v[k];
      rw_match m;
      if (root_op[k] != n->op || !rw_match_at(&v, r, i, &m) || m.n_set > SG_SUB_MAX) continue;
      sg_sub s = {.rule = base + k, .n = m.n_set};
      bool touches = false;
      for (int j = 0; j < m.n_set; j++) touches |= (s.node[j] = m.set[j]) >= from;
      if (touches) emit(ctx, &s);
    }
  }
  free(root_op);
  free(near);
}

/* Match sub's rule at its root again; true when it matches the same nodes. */
static bool rematch(const sg_graph *g, const rw_rules *rs, int base, const sg_sub *sub, rw_match *m) {
  rw_view v = sg_view(g);
  int k = sub->rule - base;
  if (k < 0 || k >= rs->n || !rw_match_at(&v, &rs->v[k], sub->node[0], m) || m->n_set != sub->n) return false;
  return !memcmp(m->set, sub->node, sizeof *m->set * (size_t)m->n_set);
}

bool sg_math_check(const sg_graph *g, const rw_rules *rs, int base, const sg_sub *sub) {
  rw_match m;
  return rematch(g, rs, base, sub, &m);
}

/* ------------------------------------------------------------ apply */

/* The sg value of scratch tensor t: a bound variable's value, a made node's output, or a
 * number of the target (a new SG_R_NUM constant); -1 on OOM or an unknown tensor. */
static int value_of(sg_graph *g, const ecg_graph *sc, int *map, int t) {
  if (map[t] >= 0) return map[t];
  const ecg_tensor *x = sc->tensors[t];
  bool u;
  double num;
  unsigned props = rw_const_props(x, &u, &num);
  if (!x->is_const || !(props & RW_COND_CONST) || ecg_tensor_numel(x) != 1) return -1;
  int c = sg_add_val(g, 0, NULL, x->dtype, true);
  if (c < 0) return -1;
  g->v[c].recipe = SG_R_NUM;
  g->v[c].num = num;
  g->v[c].uniform = u;
  g->v[c].cprops = props;
  return map[t] = c;
}

/* Append the scratch graph's made nodes to g; *out receives the value of tensor t. */
static bool copy_made(sg_graph *g, const ecg_graph *sc, const rw_target *b, int *map, int t, int pos, int opset,
                      size_t fold_max, int *out) {
  for (int k = 0; k < b->n_made; k++) {
    const ecg_node *x = sc->nodes[b->made[k]];
    const ecg_tensor *y = ecg_node_output(sc, x, 0);
    int64_t d[ECG_MAX_RANK];
    int r = y && ecg_tensor_static(y) ? ecg_tensor_dims(y, d) : -1;
    if (r < 0 || r > SG_MAX_RANK || x->n_inputs > SG_MAX_IN) return false;
    int in[SG_MAX_IN];
    bool all_const = true;
    for (size_t j = 0; j < x->n_inputs; j++) {
      if ((in[j] = value_of(g, sc, map, x->inputs[j])) < 0) return false;
      all_const = all_const && g->v[in[j]].is_const;
    }
    const ecg_op_info *op = rw_info(x);
    bool folded = all_const && ecg_op_foldable(op) && (size_t)ecg_tensor_numel(y) * ecg_dtype_size(y->dtype) <= fold_max;
    int o = sg_add_val(g, r, d, y->dtype, folded);
    if (o < 0) return false;
    int i = sg_add_node(g, NULL, op->id, (int)x->n_inputs, in, 1, &o, pos, k);
    if (i < 0) return false;
    sg_node *n = &g->n[i];
    rw_vnode vn;
    if (ecg_reduction_of(op->id) && rw_reduction_info(sc, x, &vn)) {
      n->red = true;
      n->plain = false;
      n->keep = vn.red_keep;
      for (int q = 0; q < vn.red_rank; q++) n->red_bits |= vn.red_mask[q] ? 1 << q : 0;
    }
    n->opset = opset;
    n->folded = folded;
    int64_t f = op->flops(sc, x);
    n->flops = f > 0 ? f : 0;
    map[x->outputs[0]] = o;
  }
  return (*out = value_of(g, sc, map, t)) >= 0;
}

bool sg_math_apply(sg_graph *g, const rw_rules *rs, int base, const sg_sub *sub, int pos, size_t fold_max) {
  rw_match m;
  if (!rematch(g, rs, base, sub, &m)) return false;
  int root = sub->node[0], ro = g->n[root].out[0], opset = g->n[root].opset;
  ecg_graph *sc = ecg_graph_new();
  if (!sc) return false;
  sc->opset = opset > 0 ? opset : 13;
  /* one scratch tensor per bound variable (its shape, dtype and constness) */
  rw_match ms = m;
  int *map = NULL, nmap = 0;
  bool ok = true;
  for (int x = 0; x < m.r->n_vars && ok; x++) {
    int b = m.bind[x];
    if (b < 0) continue;
    const sg_val *v = &g->v[b];
    char name[16];
    snprintf(name, sizeof name, "v%d", x);
    int t = ecg_add_tensor(sc, name, v->dtype, v->rank, v->rank >= 0 ? v->dim : NULL);
    ok = t >= 0;
    if (ok) sc->tensors[t]->is_const = v->is_const;
    ms.bind[x] = t;
  }
  rw_target tb = {.n = 0};
  int t = ok ? rw_build_target(sc, &ms, "m", sc->opset, &tb) : -2;
  int64_t d[ECG_MAX_RANK];
  const sg_val *rv = &g->v[ro];
  ok = t >= 0 && ecg_tensor_static(sc->tensors[t]) && sc->tensors[t]->dtype == rv->dtype &&
       ecg_tensor_dims(sc->tensors[t], d) == rv->rank && !memcmp(d, rv->dim, sizeof *d * (size_t)(rv->rank > 0 ? rv->rank : 0));
  if (ok) {
    nmap = (int)sc->n_tensors;
    ok = (map = malloc(sizeof *map * ((size_t)nmap + 1))) != NULL;
  }
  if (ok) {
    for (int k = 0; k < nmap; k++) map[k] = -1;
    for (int x = 0; x < m.r->n_vars; x++)
      if (m.bind[x] >= 0) map[ms.bind[x]] = m.bind[x];
  }
  int y = -1;
  ok = ok && copy_made(g, sc, &tb, map, t, pos, opset, fold_max, &y);
  free(map);
  ecg_graph_free(sc);
  if (!ok || y == ro) return false;
  /* a graph output keeps its name (sg_materialize renames the value computing it): the
   * value taking it must be computed at run time by a live node and be no other graph output */
  if (sg_is_gout(g, ro) && (g->v[y].producer < 0 || !g->n[g->v[y].producer].alive || sg_is_gout(g, y) || g->v[y].is_const))
    return false;
  sg_replace(g, ro, y);
  for (int k = 0; k < m.n_set; k++) sg_kill(g, m.set[k]);
  return true;
}
