/* Sequence operators (ONNX SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase,
 * SequenceAt, SequenceLength, ConcatFromSequence, SplitToSequence; issue 9 item 4) with
 * statically known lengths and positions.
 *
 * A sequence value has no ECG tensor representation: ecg_resolve_sequences replaces every
 * sequence operator by tensor operators while the graph is imported, keeping each
 * sequence as the list of the tensors it holds: Construct/Empty/Insert/Erase edit the
 * list, SequenceAt becomes an Identity of the element, SequenceLength a constant,
 * ConcatFromSequence a Concat (new_axis: of Reshapes adding the axis), SplitToSequence one
 * Slice per piece (keepdims=0: and a Reshape dropping the axis). A run-time sequence (a
 * sequence graph input or output: Tensor.sequence, format/ECG.md "Sequences") is never
 * resolved: the operators reading it stay nodes, typed by ecg_infer_sequence, and ecg-lower
 * runs them (tools/lower/emit/sequence.c). What cannot be resolved otherwise (a position or
 * split known only at run time on a sequence built in the graph, a sequence crossing a
 * subgraph boundary) is refused naming the node (the same message as its shape function,
 * which a node left in a subgraph reaches). */
#include <stdio.h>
#include <string.h>

#include "ops_common.h"

int ecg_sequence_like(ecg_tensor *y, const ecg_tensor *x, ecg_err *e) {
  int64_t d[ECG_MAX_RANK];
  const char *sy[ECG_MAX_RANK];
  int r = x->shape_known ? ecg_tensor_dims(x, d) : -1;
  for (int k = 0; k < r; k++) sy[k] = x->dims[k]->symbol;
  int dt = x->dtype;
  y->dtype = dt;
  y->sequence = true;
  if (ecg_tensor_set_shape(y, r, d, sy) != 0) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}

/* Two tensors' shapes are the same (both known, equal numbers and symbols). */
static bool same_shape(const ecg_tensor *a, const ecg_tensor *b) {
  if (!a->shape_known || !b->shape_known || a->n_dims != b->n_dims) return false;
  for (size_t k = 0; k < a->n_dims; k++) {
    const Ecg__Dim *x = a->dims[k], *y = b->dims[k];
    if (x->value != y->value) return false;
    if (x->value < 0 && (!x->symbol || !y->symbol || strcmp(x->symbol, y->symbol) || !strcmp(x->symbol, "?"))) return false;
  }
  return true;
}

/* Every sequence operator's shape function. A node ecg_resolve_sequences replaced never
 * gets here; one left in place works on run-time sequences (Tensor.sequence: a sequence
 * graph input or output, format/ECG.md "Sequences"): SequenceInsert/Erase give a sequence
 * (the elements' common shape where it stays known), SequenceAt an element (the sequence's
 * element shape, or none: a static lowering refuses it then), SequenceLength an int64
 * scalar, SequenceConstruct/Empty a sequence (left in place only when their output is a
 * sequence graph output). Anything else is refused naming the node. */
int ecg_infer_sequence(ecg_graph *g, ecg_node *n, ecg_err *e) {
  const ecg_op_info *op = ecg_node_op(n);
  ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  bool rt_in = x && x->sequence;
  int id = op ? (int)op->id : -1;
  if (y && (rt_in || (y->sequence && (id == ECG_OP_SequenceConstruct || id == ECG_OP_SequenceEmpty)))) {
    for (size_t k = 1; k < n->n_inputs; k++) {
      const ecg_tensor *t = ecg_node_input(g, n, (int)k);
      if (t && t->sequence) return ecg_node_errf(e, g, n, "input '%s' is a sequence where a tensor is expected", t->name);
    }
    switch (id) {
    case ECG_OP_SequenceInsert: {
      const ecg_tensor *v = ecg_node_input(g, n, 1);
      if (!v) return ecg_node_errf(e, g, n, "missing the tensor to insert");
      if (v->dtype != x->dtype)
        return ecg_node_errf(e, g, n, "inserts a %s tensor into a sequence of %s", ecg_dtype_name(v->dtype), ecg_dtype_name(x->dtype));
      ECG_TRY(ecg_sequence_like(y, same_shape(x, v) ? x : v, e));
      if (!same_shape(x, v)) return ecg_tensor_set_shape(y, -1, NULL, NULL) ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : ECG_OK;
      return ECG_OK;
    }
    case ECG_OP_SequenceErase: return ecg_sequence_like(y, x, e);
    case ECG_OP_SequenceAt:
      ECG_TRY(ecg_sequence_like(y, x, e));
      y->sequence = false;
      return ECG_OK;
    case ECG_OP_SequenceLength: {
      y->dtype = ECG_INT64;
      y->sequence = false;
      return ecg_tensor_set_shape(y, 0, NULL, NULL) ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : ECG_OK;
    }
    case ECG_OP_SequenceConstruct: {
      const ecg_tensor *a = ecg_node_input(g, n, 0);
      if (!a) return ecg_node_errf(e, g, n, "needs at least one input");
      bool same = true;
      for (size_t k = 1; k < n->n_inputs; k++) {
        const ecg_tensor *t = ecg_node_input(g, n, (int)k);
        if (!t || t->dtype != a->dtype) return ecg_node_errf(e, g, n, "inputs of different element types");
        same &= same_shape(a, t);
      }
      ECG_TRY(ecg_sequence_like(y, a, e));
      if (!same && ecg_tensor_set_shape(y, -1, NULL, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      return ECG_OK;
    }
    case ECG_OP_SequenceEmpty:
      y->dtype = (int)ecg_attr_i(n, "dtype", ECG_FLOAT);
      y->sequence = true;
      return ecg_tensor_set_shape(y, -1, NULL, NULL) ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : ECG_OK;
    default: break;
    }
    return ecg_node_errf(e, g, n, "run-time sequences are supported by SequenceInsert, SequenceErase, SequenceAt, "
                                  "SequenceLength, SequenceConstruct and SequenceEmpty, not by this operator");
  }
  return ecg_node_errf(e, g, n, "sequence values are supported only with lengths and positions known when the model is "
                                "converted (constant positions and splits) or as run-time sequences from a sequence graph input");
}

/* Sequence lists: per tensor id, offset and length into a pool of tensor ids (-2: an
 * element whose value is not known statically: only its count is). */
typedef struct seqs {
  int *off, *len; /* per tensor; off -1: not a resolved sequence */
  int *pool;
  size_t n_pool, cap;
} seqs;

static int pool_push(seqs *s, int v) {
  if (s->n_pool == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    int *p = realloc(s->pool, sizeof *p * cap);
    if (!p) return -1;
    s->pool = p;
    s->cap = cap;
  }
  s->pool[s->n_pool++] = v;
  return 0;
}

/* A new 1-D int64 constant of n values; its id or -1. */
static int const_i64(ecg_graph *g, const char *name, int n, const int64_t *v) {
  int64_t d = n;
  int t = ecg_add_tensor(g, name, ECG_INT64, 1, &d);
  if (t < 0 || ecg_tensor_set_data(g->tensors[t], v, sizeof(int64_t) * (size_t)n)) return -1;
  return t;
}

/* Add node op(ins) -> a new tensor named name and infer it; the tensor id or -1 (*e set). */
static int add_op(ecg_graph *g, const ecg_node *like, const char *op, const char *name, int nin, const int *ins, ecg_err *e) {
  int t = ecg_add_tensor(g, name, ECG_UNDEFINED, -1, NULL);
  int k = t < 0 ? -1 : ecg_add_node(g, name, op, "", like->opset, nin, ins, 1, &t);
  if (k < 0) { ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); return -1; }
  const ecg_op_info *oi = ecg_op_lookup(op, "");
  if (oi->infer(g, g->nodes[k], e) != ECG_OK) return -1;
  g->nodes[k]->mapping_type = (Ecg__MappingType)oi->mapping;
  return t;
}

/* Reshape tensor x to dims (rank r) as a new node; the new tensor id or -1. */
static int reshape_to(ecg_graph *g, const ecg_node *like, int x, int r, const int64_t *dims, const char *name, ecg_err *e) {
  char nm[300];
  snprintf(nm, sizeof nm, "%s_shape", name);
  int sh = const_i64(g, nm, r, dims);
  if (sh < 0) { ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); return -1; }
  int ins[2] = {x, sh};
  return add_op(g, like, "Reshape", name, 2, ins, e);
}

/* The constant scalar position input i of n into *p (absent: *p = def); 0 when not a
 * constant. */
static int const_pos(const ecg_graph *g, const ecg_node *n, int i, int64_t def, int64_t *p) {
  const ecg_tensor *t = ecg_node_input(g, n, i);
  if (!t) { *p = def; return 1; }
  if (!t->is_const || ecg_tensor_numel(t) != 1) return 0;
  *p = ecg_const_i64(t, 0);
  return 1;
}

/* Replace node n's inputs by the n_in ids ins and its op_type by op. */
static int retarget(ecg_node *n, const char *op, int n_in, const int *ins) {
  int32_t *in = malloc(sizeof *in * (size_t)(n_in + 1));
  char *o = strdup(op);
  if (!in || !o) { free(in); free(o); return -1; }
  for (int k = 0; k < n_in; k++) in[k] = ins[k];
  free(n->inputs);
  n->inputs = in;
  n->n_inputs = (size_t)n_in;
  free(n->op_type);
  n->op_type = o;
  return 0;
}

/* Resolve sequence node n (registry id id); 1 resolved (keep says whether the node stays,
 * turned into a tensor operator), 0 not resolvable, -1 error (*e). */
static int resolve(ecg_graph *g, ecg_node *n, ecg_op_id id, seqs *s, bool *keep, ecg_err *e) {
  char lb[256], nm[320];
  ecg_node_label(g, n, lb, sizeof lb);
  int in0 = n->n_inputs > 0 ? n->inputs[0] : -1, out = n->n_outputs > 0 ? n->outputs[0] : -1;
  if (out < 0 || g->tensors[out]->sequence) return 0; /* a run-time sequence (a graph output) */
  bool seq_in = id != ECG_OP_SequenceConstruct && id != ECG_OP_SequenceEmpty && id != ECG_OP_SplitToSequence;
  if (seq_in && (in0 < 0 || s->off[in0] < 0)) return 0; /* its sequence is not resolved */
  int off = seq_in ? s->off[in0] : 0, len = seq_in ? s->len[in0] : 0;
  int64_t p;
  *keep = false;
  size_t start = s->n_pool;
#define PUSH(V) do { if (pool_push(s, (V))) { ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); return -1; } } while (0)
  switch ((int)id) {
  case ECG_OP_SequenceEmpty: break;
  case ECG_OP_SequenceConstruct:
    for (size_t k = 0; k < n->n_inputs; k++) PUSH(n->inputs[k]);
    break;
  case ECG_OP_SequenceInsert:
    if (n->n_inputs < 2 || n->inputs[1] < 0 || !const_pos(g, n, 2, len, &p)) return 0;
    if (p < -len || p > len) { ecg_node_errf(e, g, n, "position %lld is outside [-%d, %d]", (long long)p, len, len); return -1; }
    if (p < 0) p += len;
    for (int k = 0; k < len; k++) {
      if (k == p) PUSH(n->inputs[1]);
      PUSH(s->pool[off + k]);
    }
    if (p == len) PUSH(n->inputs[1]);
    break;
  case ECG_OP_SequenceErase:
    if (!const_pos(g, n, 1, len - 1, &p)) return 0;
    if (p < -len || p >= len) { ecg_node_errf(e, g, n, "position %lld is outside [-%d, %d]", (long long)p, len, len - 1); return -1; }
    if (p < 0) p += len;
    for (int k = 0; k < len; k++) if (k != p) PUSH(s->pool[off + k]);
    break;
  case ECG_OP_SequenceAt: {
    if (!const_pos(g, n, 1, -1, &p) || !ecg_node_input(g, n, 1)) return 0;
    if (p < -len || p >= len) { ecg_node_errf(e, g, n, "position %lld is outside [-%d, %d]", (long long)p, len, len - 1); return -1; }
    int t = s->pool[off + (p < 0 ? p + len : p)];
    if (t < 0) return 0;
    if (retarget(n, "Identity", 1, &t)) { ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); return -1; }
    *keep = true;
    return 1;
  }
  case ECG_OP_SequenceLength: {
    int64_t d = len;
    g->tensors[out]->dtype = ECG_INT64;
    if (ecg_tensor_set_shape(g->tensors[out], 0, &d, NULL) || ecg_tensor_set_data(g->tensors[out], &d, sizeof d)) {
      ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      return -1;
    }
    return 1;
  }
  case ECG_OP_ConcatFromSequence: {
    if (len == 0) { ecg_node_errf(e, g, n, "concatenates an empty sequence"); return -1; }
    int *ins = malloc(sizeof(int) * (size_t)len);
    if (!ins) { ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); return -1; }
    int64_t axis = ecg_attr_i(n, "axis", 0), nw = ecg_attr_i(n, "new_axis", 0);
    int rc = 1;
    for (int k = 0; k < len && rc == 1; k++) {
      int t = s->pool[off + k];
      ins[k] = t;
      if (t < 0 || !g->tensors[t]->shape_known) { rc = 0; break; }
      if (!nw) continue;
      int64_t d[ECG_MAX_RANK + 1];
      int r = ecg_tensor_dims(g->tensors[t], d), a;
      if (r + 1 > ECG_MAX_RANK || !ops_axis(axis, r + 1, &a)) {
        ecg_node_errf(e, g, n, "axis %lld is out of range for rank %d", (long long)axis, r + 1);
        rc = -1;
        break;
      }
      for (int j = r; j > a; j--) d[j] = d[j - 1];
      d[a] = 1;
      for (int j = 0; j <= r && rc == 1; j++) if (d[j] < 0) rc = 0;
      snprintf(nm, sizeof nm, "%s_item%d", lb, k);
      if (rc == 1 && (ins[k] = reshape_to(g, n, t, r + 1, d, nm, e)) < 0) rc = -1;
    }
    if (rc == 1) { /* Concat along the same axis (of rank r + 1 with new_axis) */
      ecg_attr_remove(n, "new_axis");
      if (retarget(n, "Concat", len, ins)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") ? -1 : -1;
    }
    free(ins);
    if (rc == 1) *keep = true;
    return rc;
  }
  case ECG_OP_SplitToSequence: {
    const ecg_tensor *x = ecg_node_input(g, n, 0), *sp = ecg_node_input(g, n, 1);
    if (!x || !x->shape_known) return 0;
    int64_t d[ECG_MAX_RANK];
    int r = ecg_tensor_dims(x, d), a;
    if (!ops_axis(ecg_attr_i(n, "axis", 0), r, &a)) { ecg_node_errf(e, g, n, "axis out of range for rank %d", r); return -1; }
    int64_t sizes[4096];
    int np = 0;
    if (sp && !sp->is_const) { /* run-time sizes: only the count is known (a 1-D split) */
      if (!sp->shape_known || sp->n_dims != 1 || ecg_tensor_numel(sp) < 0 || ecg_tensor_numel(sp) > 4096) return 0;
      for (int64_t k = 0; k < ecg_tensor_numel(sp); k++) PUSH(-2);
      break;
    }
    if (d[a] < 0) return 0;
    if (!sp) {
      if (d[a] > 4096) return 0;
      for (int64_t k = 0; k < d[a]; k++) sizes[np++] = 1;
    } else if (sp->n_dims == 0) {
      int64_t c = ecg_const_i64(sp, 0);
      if (c <= 0) { ecg_node_errf(e, g, n, "split %lld is not positive", (long long)c); return -1; }
      if (d[a] / c + 1 > 4096) return 0;
      for (int64_t at = 0; at < d[a]; at += c) sizes[np++] = at + c <= d[a] ? c : d[a] - at;
    } else {
      int64_t sum = 0;
      np = ecg_const_ints(sp, sizes, 4096);
      if (np < 0) return 0;
      for (int k = 0; k < np; k++) sum += sizes[k] >= 0 ? sizes[k] : INT64_MIN / 4;
      if (sum != d[a]) { ecg_node_errf(e, g, n, "split sizes do not add up to dim %d (%lld)", a, (long long)d[a]); return -1; }
    }
    bool squeeze = !sp && ecg_attr_i(n, "keepdims", 1) == 0;
    int64_t at = 0;
    for (int k = 0; k < np; k++) {
      int64_t st = at, en = at + sizes[k], ax = a;
      at = en;
      snprintf(nm, sizeof nm, "%s_starts%d", lb, k);
      int ts = const_i64(g, nm, 1, &st);
      snprintf(nm, sizeof nm, "%s_ends%d", lb, k);
      int te = const_i64(g, nm, 1, &en);
      snprintf(nm, sizeof nm, "%s_axes%d", lb, k);
      int ta = const_i64(g, nm, 1, &ax);
      if (ts < 0 || te < 0 || ta < 0) { ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); return -1; }
      int ins[4] = {n->inputs[0], ts, te, ta};
      snprintf(nm, sizeof nm, "%s_piece%d", lb, k);
      int t = add_op(g, n, "Slice", nm, 4, ins, e);
      if (t < 0) return -1;
      if (squeeze) {
        int64_t q[ECG_MAX_RANK];
        int rq = 0;
        for (int j = 0; j < r; j++) if (j != a) q[rq++] = d[j];
        snprintf(nm, sizeof nm, "%s_item%d", lb, k);
        if ((t = reshape_to(g, n, t, rq, q, nm, e)) < 0) return -1;
      }
      PUSH(t);
    }
    break;
  }
  default: return 0;
  }
#undef PUSH
  s->off[out] = (int)start;
  s->len[out] = (int)(s->n_pool - start);
  return 1;
}

int ecg_resolve_sequences(ecg_graph *g, int *n_resolved, ecg_err *e) {
  if (n_resolved) *n_resolved = 0;
  bool any = false;
  for (size_t i = 0; i < g->n_nodes && !any; i++) {
    const ecg_op_info *op = ecg_node_op(g->nodes[i]);
    any = op && op->infer == ecg_infer_sequence;
  }
  if (!any) return ECG_OK;
  ECG_TRY(ecg_topo_sort(g, e));
  size_t n0 = g->n_nodes;
  seqs s = {0};
  s.off = malloc(sizeof(int) * (g->n_tensors + 1));
  s.len = calloc(g->n_tensors + 1, sizeof(int));
  bool *keep = malloc(n0 + 1);
  int rc = ECG_OK, done = 0;
  if (!s.off || !s.len || !keep) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t t = 0; rc == ECG_OK && t < g->n_tensors; t++) s.off[t] = -1;
  for (size_t i = 0; rc == ECG_OK && i < n0; i++) {
    ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_node_op(n);
    keep[i] = true;
    if (!op) continue;
    if (op->infer != ecg_infer_sequence) { /* shapes for the sequence operators after it */
      bool known = true;
      for (size_t k = 0; k < n->n_inputs; k++) {
        const ecg_tensor *t = ecg_node_input(g, n, (int)k);
        if (t && !t->shape_known) known = false;
      }
      ecg_err ignore; /* a failure here is reported by the inference that follows */
      if (known) (void)op->infer(g, n, &ignore);
      continue;
    }
    bool k2 = true;
    int r = resolve(g, n, op->id, &s, &k2, e);
    if (r < 0) rc = e->code ? e->code : ECG_ERR_INPUT;
    if (r == 1) { keep[i] = k2; done++; }
  }
  for (size_t i = 0; rc == ECG_OK && i < n0; i++) { /* one left: refused here, named */
    const ecg_op_info *op = ecg_node_op(g->nodes[i]);
    if (keep[i] && op && op->infer == ecg_infer_sequence) rc = ecg_infer_sequence(g, g->nodes[i], e);
  }
  if (rc == ECG_OK) {
    bool *all = realloc(keep, g->n_nodes + 1);
    if (!all) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    else {
      keep = all;
      for (size_t i = n0; i < g->n_nodes; i++) keep[i] = true;
      if (ecg_compact(g, keep, NULL) != ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    }
  }
  free(s.off); free(s.len); free(s.pool); free(keep);
  if (rc == ECG_OK && n_resolved) *n_resolved = done;
  return rc;
}
