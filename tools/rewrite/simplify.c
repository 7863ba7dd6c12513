/* ecg-rewrite pass "simplify": algebraic simplification (DNNFusion §3.4.2's cheapest
 * rewrites; they never add a node or a FLOP).
 *
 *   neutral operand   x*1, 1*x, x+0, 0+x, x-0, x/1, x^1 -> x, when the constant's
 *                     broadcast leaves x's shape and dtype unchanged; the constant may stand
 *                     first only for operators the registry marks commutative
 *   Transpose chain   Transpose(Transpose(x, p1), p2) -> Transpose(x, q), q[i] = p1[p2[i]];
 *                     dropped when q is the identity
 *   Reshape chain     Reshape(R(x)) -> Reshape(x, static output shape), R any operator of
 *                     Reorganize mapping type (Reshape, Flatten, Squeeze, Unsqueeze: the
 *                     element order is kept)
 *   neutral op        Cast, Expand, Identity and every Reorganize operator whose output has
 *                     its input's dtype and shape -> its input (NEUTRAL_OPS)
 *
 * Repeated to a fixed point; nodes left without readers are deleted. */
#include <stdlib.h>

#include "rewrite.h"

/* Binary operators with a right neutral element: op(x, c) == x when c == neutral. */
static const struct {
  ecg_op_id op;
  double neutral;
  const char *rule;
} NEUTRAL[] = {
    {ECG_OP_Mul, 1, "x*1"}, {ECG_OP_Div, 1, "x/1"}, {ECG_OP_Add, 0, "x+0"},
    {ECG_OP_Sub, 0, "x-0"}, {ECG_OP_Pow, 1, "x^1"},
};

/* x op c -> x (and c op x for commutative operators). */
static bool neutral_operand(ecg_graph *g, int i, rw_stats *st) {
  ecg_node *n = g->nodes[i];
  if (n->n_inputs != 2 || n->n_outputs != 1) return false;
  const ecg_op_info *op = rw_info(n);
  for (size_t r = 0; r < sizeof NEUTRAL / sizeof *NEUTRAL; r++) {
    if (NEUTRAL[r].op != op->id) continue;
    for (int c = 1; c >= 0; c--) {
      if (c == 0 && !(op->props & ECG_PROP_COMM)) break;
      int x = n->inputs[1 - c], y = n->outputs[0];
      if (x < 0 || !rw_const_all(ecg_node_input(g, n, c), NEUTRAL[r].neutral)) continue;
      if (!rw_same_shape(g->tensors[x], g->tensors[y])) continue;
      if (rw_bypass(g, i, x, y)) { rw_count(st, NEUTRAL[r].rule); return true; }
    }
  }
  return false;
}

/* Transpose(Transpose(x, p1), p2) -> Transpose(x, p1[p2]) or x. */
static int transpose_chain(ecg_graph *g, int i, rw_stats *st, bool *done) {
  ecg_node *n = g->nodes[i];
  if (rw_op(n) != ECG_OP_Transpose || n->n_inputs < 1 || n->inputs[0] < 0) return ECG_OK;
  int pi = rw_producer(g, n->inputs[0]);
  if (pi < 0 || rw_op(g->nodes[pi]) != ECG_OP_Transpose) return ECG_OK;
  ecg_node *p = g->nodes[pi];
  const ecg_tensor *x = ecg_node_input(g, p, 0);
  int r = x ? ecg_tensor_rank(x) : -1;
  int p1[ECG_MAX_RANK], p2[ECG_MAX_RANK];
  int64_t q[ECG_MAX_RANK];
  if (r < 1 || r > ECG_MAX_RANK || ecg_perm_attr(p, r, p1) || ecg_perm_attr(n, r, p2)) return ECG_OK;
  bool identity = true;
  for (int d = 0; d < r; d++) {
    q[d] = p1[p2[d]];
    identity = identity && q[d] == d;
  }
  if (identity) {
    if (rw_bypass(g, i, p->inputs[0], n->outputs[0])) { rw_count(st, "transpose-transpose=id"); *done = true; }
    return ECG_OK;
  }
  if (ecg_attr_set_ints(n, "perm", r, q) != ECG_OK) return ECG_ERR_INTERNAL;
  n->inputs[0] = p->inputs[0];
  rw_count(st, "transpose-transpose");
  *done = true;
  return ECG_OK;
}

/* Reshape(R(x), s) -> Reshape(x, static shape of the output), R of Reorganize mapping. */
static int reshape_chain(ecg_graph *g, int i, rw_stats *st, bool *done) {
  ecg_node *n = g->nodes[i];
  if (rw_op(n) != ECG_OP_Reshape || n->n_inputs != 2 || n->inputs[0] < 0) return ECG_OK;
  int pi = rw_producer(g, n->inputs[0]);
  const ecg_op_info *pop = pi >= 0 ? rw_info(g->nodes[pi]) : NULL;
  if (!pop || pop->mapping != ECG_MAP_REORGANIZE || g->nodes[pi]->n_inputs < 1) return ECG_OK;
  const ecg_tensor *y = ecg_node_output(g, n, 0), *x = ecg_node_input(g, g->nodes[pi], 0);
  int64_t dims[ECG_MAX_RANK];
  int r = y && ecg_tensor_static(y) ? ecg_tensor_dims(y, dims) : -1;
  if (!x || x->dtype != y->dtype || r < 0 || r > ECG_MAX_RANK) return ECG_OK;
  for (int d = 0; d < r; d++)
    if (dims[d] == 0) return ECG_OK; /* a 0 would mean "copy" without allowzero */
  int64_t rank = r;
  int s = rw_add_const_i64(g, "shape", 1, &rank, dims);
  if (s < 0) return ECG_ERR_INTERNAL;
  n->inputs[0] = g->nodes[pi]->inputs[0];
  n->inputs[1] = s;
  ecg_attr_remove(n, "allowzero");
  rw_count(st, "reshape-reshape");
  *done = true;
  return ECG_OK;
}

/* Operators that are the identity when their output's dtype and shape are their input's,
 * besides every Reorganize operator (counted as "neutral-reshape"). */
static const struct {
  ecg_op_id op;
  const char *rule;
} NEUTRAL_OPS[] = {
    {ECG_OP_Cast, "neutral-cast"}, {ECG_OP_Expand, "neutral-expand"}, {ECG_OP_Identity, "neutral-identity"},
};

/* y = op(x) with y of x's dtype and shape, op neutral then -> x. */
static bool neutral_op(ecg_graph *g, int i, rw_stats *st) {
  ecg_node *n = g->nodes[i];
  const ecg_op_info *op = rw_info(n);
  const char *rule = op->mapping == ECG_MAP_REORGANIZE ? "neutral-reshape" : NULL;
  for (size_t r = 0; r < sizeof NEUTRAL_OPS / sizeof *NEUTRAL_OPS && !rule; r++)
    if (NEUTRAL_OPS[r].op == op->id) rule = NEUTRAL_OPS[r].rule;
  if (!rule || n->n_outputs != 1 || n->n_inputs < 1) return false;
  int x = n->inputs[0], y = n->outputs[0];
  if (x < 0 || !rw_same_shape(g->tensors[x], g->tensors[y]) || !rw_bypass(g, i, x, y)) return false;
  rw_count(st, rule);
  return true;
}

int rw_simplify(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e) {
  for (int round = 0; round < 32; round++) {
    bool any = false;
    for (size_t i = 0; i < g->n_nodes; i++) {
      ecg_node *n = g->nodes[i];
      if (!rw_info(n) || n->n_outputs < 1 || n->outputs[0] < 0) continue;
      bool done = false;
      if (neutral_operand(g, (int)i, st) || neutral_op(g, (int)i, st)) { any = true; continue; }
      if (transpose_chain(g, (int)i, st, &done) != ECG_OK || reshape_chain(g, (int)i, st, &done) != ECG_OK)
        return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      any = any || done;
    }
    if (!any) break;
  }
  return rw_remove_dead(g, e);
}
