/* ecg-rewrite pass "cse": common-subexpression elimination.
 * Two nodes compute the same values when they have the same operator (registry id),
 * the same attributes and the same inputs; an input matches when it is the same tensor
 * or both are constants with the same dtype, shape and bytes.  The later node of a pair
 * is removed and its readers read the earlier one's outputs (a graph output keeps its
 * name: the earlier node then writes it).  Nodes are visited in topological order and
 * inputs are rewired at once, so whole duplicated chains collapse in one sweep.
 * Every registered operator is deterministic in inference, so any may be merged. */
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"

static bool same_bytes(ProtobufCBinaryData a, ProtobufCBinaryData b) {
  return a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len));
}

static bool same_attr(const ecg_attr *a, const ecg_attr *b) {
  if (a->type != b->type || a->i != b->i || memcmp(&a->f, &b->f, sizeof a->f) || !same_bytes(a->s, b->s) ||
      a->n_ints != b->n_ints || a->n_floats != b->n_floats || a->n_strings != b->n_strings)
    return false;
  if (a->t || b->t || a->n_graphs || b->n_graphs || a->g || b->g) return false; /* not compared: keep both */
  if (a->n_ints && memcmp(a->ints, b->ints, sizeof *a->ints * a->n_ints)) return false;
  if (a->n_floats && memcmp(a->floats, b->floats, sizeof *a->floats * a->n_floats)) return false;
  for (size_t k = 0; k < a->n_strings; k++)
    if (!same_bytes(a->strings[k], b->strings[k])) return false;
  return true;
}

static bool same_attrs(const ecg_node *a, const ecg_node *b) {
  if (a->n_attrs != b->n_attrs) return false;
  for (size_t k = 0; k < a->n_attrs; k++) {
    const ecg_attr *o = ecg_attr_find(b, a->attrs[k]->name);
    if (!o || !same_attr(a->attrs[k], o)) return false;
  }
  return true;
}

static bool same_input(const ecg_graph *g, int ta, int tb) {
  if (ta == tb) return true;
  if (ta < 0 || tb < 0) return false;
  const ecg_tensor *a = g->tensors[ta], *b = g->tensors[tb];
  return a->is_const && b->is_const && rw_same_shape(a, b) && same_bytes(a->data, b->data);
}

static bool same_node(const ecg_graph *g, const ecg_node *a, const ecg_node *b) {
  if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->opset != b->opset) return false;
  for (size_t k = 0; k < a->n_inputs; k++)
    if (!same_input(g, a->inputs[k], b->inputs[k])) return false;
  return same_attrs(a, b);
}

/* Replace node i by the earlier equal node j; false (graph unchanged) when an output
 * name could not be kept. */
static bool merge(ecg_graph *g, int j, int i) {
  ecg_node *a = g->nodes[j], *b = g->nodes[i];
  for (size_t k = 0; k < b->n_outputs; k++) {
    int oa = a->outputs[k], ob = b->outputs[k];
    if (ob < 0) continue;
    if (oa < 0 || (rw_is_output(g, ob) && rw_is_output(g, oa))) return false;
  }
  for (size_t k = 0; k < b->n_outputs; k++)
    if (b->outputs[k] >= 0) rw_bypass(g, i, a->outputs[k], b->outputs[k]);
  return true;
}

int rw_cse(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e) {
  ECG_TRY(ecg_topo_sort(g, e));
  size_t nn = g->n_nodes;
  ecg_op_id *ids = malloc(sizeof *ids * (nn + 1));
  if (!ids) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t i = 0; i < nn; i++) ids[i] = rw_op(g->nodes[i]);
  for (size_t i = 0; i < nn; i++) {
    const ecg_node *b = g->nodes[i];
    if (ids[i] == ECG_OP_NONE || b->n_inputs == 0 || b->n_outputs == 0 || b->outputs[0] < 0) continue;
    for (size_t j = 0; j < i; j++) {
      const ecg_node *a = g->nodes[j];
      if (ids[j] != ids[i] || a->n_outputs == 0 || a->outputs[0] < 0 || !same_node(g, a, b)) continue;
      if (merge(g, (int)j, (int)i)) { rw_count(st, "merged"); break; }
    }
  }
  free(ids);
  return rw_remove_dead(g, e);
}
