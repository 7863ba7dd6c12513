/* Control flow (ONNX If, Loop, Scan): operators whose GRAPH attributes hold subgraphs
 * (format/ECG.md "Control flow"; issue 9 item 4, static shapes; SOD², Niu dissertation
 * ch. 5, classes control flow among the operators whose outputs a static plan cannot
 * know in general: here only the cases whose shapes are static are accepted).
 *
 * A subgraph reads outer values by name; the ECG makes these reads the node's trailing
 * inputs (captures, ecg.h "control flow"). Shape inference binds each subgraph to the
 * node (captures get the outer tensors' dtypes and shapes; body inputs get the iteration
 * count, the condition, the loop-carried values and the scan slices), checks it
 * (ecg_validate_scope: every outer reference is captured), infers it with
 * ecg_infer_shapes, and derives the node's outputs from the subgraph's. Nesting is
 * bounded by ECG_MAX_SUBGRAPH_DEPTH. While constants are folded, subgraphs are folded too, and
 * an If whose condition folds to a constant infers only its taken branch;
 * ecg_inline_constant_ifs then replaces it by that branch. */
#include <stdio.h>

#include "ops_common.h"

/* Subgraph nesting of the shape inference running on this thread. */
static _Thread_local int cf_depth;

static const ecg_attr *captures_attr(const ecg_node *n) {
  const ecg_attr *a = ecg_attr_find(n, ECG_ATTR_CAPTURES);
  return a && a->type == ECG_ATTR_STRINGS ? a : NULL;
}

int ecg_node_n_captures(const ecg_node *n) {
  const ecg_attr *a = captures_attr(n);
  if (!a) return 0;
  return a->n_strings <= n->n_inputs ? (int)a->n_strings : (int)n->n_inputs;
}

int ecg_node_capture_index(const ecg_node *n, const char *name, size_t len) {
  const ecg_attr *a = captures_attr(n);
  int nc = ecg_node_n_captures(n);
  for (int k = 0; a && k < nc; k++)
    if (a->strings[k].len == len && (len == 0 || memcmp(a->strings[k].data, name, len) == 0)) /* an empty name's data may be NULL */
      return (int)n->n_inputs - nc + k;
  return -1;
}

/* The subgraph held by GRAPH attribute name of n, or NULL. */
static ecg_graph *subgraph_of(const ecg_node *n, const char *name) {
  const ecg_attr *a = ecg_attr_find(n, name);
  return a && a->type == ECG_ATTR_GRAPH ? a->g : NULL;
}

/* Copy the dtype and shape of src into t (symbols kept). */
static int copy_type(ecg_tensor *t, int dtype, const ecg_tensor *src, int skip0, int skip1) {
  int64_t d[ECG_MAX_RANK];
  const char *sy[ECG_MAX_RANK];
  int r = 0;
  if (src->n_dims > ECG_MAX_RANK) return ECG_ERR_INPUT; /* refused by the validator first */
  for (size_t i = 0; i < src->n_dims; i++) {
    if ((int)i == skip0 || (int)i == skip1) continue;
    d[r] = src->dims[i]->value;
    sy[r++] = src->dims[i]->value < 0 ? src->dims[i]->symbol : NULL;
  }
  t->dtype = dtype;
  return ecg_tensor_set_shape(t, r, d, sy) == ECG_OK ? ECG_OK : ECG_ERR_INTERNAL;
}

int ecg_cf_info(const ecg_graph *g, const ecg_node *n, ecg_cf *cf, ecg_err *e) {
  memset(cf, 0, sizeof *cf);
  const ecg_op_info *op = ecg_node_op(n);
  if (!op || !(op->props & ECG_PROP_CONTROL)) return ecg_node_errf(e, g, n, "not a control-flow operator");
  cf->n_explicit = (int)n->n_inputs - ecg_node_n_captures(n);
  cf->trip = -1;
  if (op->id == ECG_OP_If) {
    cf->kind = ECG_CF_IF;
    cf->body[0] = subgraph_of(n, "then_branch");
    cf->body[1] = subgraph_of(n, "else_branch");
    if (!cf->body[0] || !cf->body[1]) return ecg_node_errf(e, g, n, "missing then_branch or else_branch graph attribute");
    if (cf->n_explicit != 1) return ecg_node_errf(e, g, n, "expected 1 input (cond), got %d", cf->n_explicit);
    const ecg_tensor *c = ecg_node_input(g, n, 0);
    if (!c) return ecg_node_errf(e, g, n, "missing input cond");
    if (c->shape_known && ecg_tensor_numel(c) >= 0 && ecg_tensor_numel(c) != 1)
      return ecg_node_errf(e, g, n, "cond '%s' must hold one element", c->name);
    return ECG_OK;
  }
  cf->body[0] = subgraph_of(n, "body");
  if (!cf->body[0]) return ecg_node_errf(e, g, n, "missing body graph attribute");
  const ecg_graph *b = cf->body[0];
  if (op->id == ECG_OP_Loop) {
    cf->kind = ECG_CF_LOOP;
    cf->first_state = 2;
    cf->n_state = cf->n_explicit - 2;
    if (cf->n_state < 0) return ecg_node_errf(e, g, n, "expected inputs M, cond and the loop-carried values, got %d inputs", cf->n_explicit);
    if ((int)b->n_inputs != 2 + cf->n_state)
      return ecg_node_errf(e, g, n, "body has %zu inputs, expected %d (iteration, condition, %d loop-carried)", b->n_inputs, 2 + cf->n_state, cf->n_state);
    cf->n_scan_out = (int)b->n_outputs - 1 - cf->n_state;
    if (cf->n_scan_out < 0) return ecg_node_errf(e, g, n, "body has %zu outputs, expected at least %d", b->n_outputs, 1 + cf->n_state);
    if ((int)n->n_outputs != cf->n_state + cf->n_scan_out)
      return ecg_node_errf(e, g, n, "has %zu outputs, its body gives %d", n->n_outputs, cf->n_state + cf->n_scan_out);
    const ecg_tensor *m = ecg_node_input(g, n, 0);
    if (m && m->is_const && ecg_tensor_numel(m) == 1) cf->trip = ecg_const_i64(m, 0);
    if (m && m->is_const && cf->trip < 0) cf->trip = 0;
    return ECG_OK;
  }
  if (op->id == ECG_OP_SequenceMap) {
    cf->kind = ECG_CF_SEQMAP;
    cf->n_scan_in = cf->n_explicit;
    cf->n_scan_out = (int)n->n_outputs;
    if (cf->n_scan_in < 1) return ecg_node_errf(e, g, n, "needs an input sequence");
    if ((int)b->n_inputs != cf->n_scan_in || (int)b->n_outputs != cf->n_scan_out)
      return ecg_node_errf(e, g, n, "body has %zu inputs and %zu outputs, the node %d and %d", b->n_inputs, b->n_outputs,
                           cf->n_scan_in, cf->n_scan_out);
    return ECG_OK;
  }
  cf->kind = ECG_CF_SCAN;
  cf->batch = n->opset < 9; /* Scan-8: batch axis 0, optional sequence_lens first */
  cf->first_state = cf->batch ? 1 : 0;
  int64_t m = ecg_attr_i(n, "num_scan_inputs", -1);
  if (m < 1 || m > cf->n_explicit - cf->first_state) return ecg_node_errf(e, g, n, "num_scan_inputs is %lld, expected 1..%d", (long long)m, cf->n_explicit - cf->first_state);
  if (m > ECG_CF_MAX_SCAN) return ecg_node_errf(e, g, n, "more than %d scan inputs are not supported", ECG_CF_MAX_SCAN);
  cf->n_scan_in = (int)m;
  cf->n_state = cf->n_explicit - cf->first_state - cf->n_scan_in;
  if ((int)b->n_inputs != cf->n_state + cf->n_scan_in)
    return ecg_node_errf(e, g, n, "body has %zu inputs, expected %d", b->n_inputs, cf->n_state + cf->n_scan_in);
  cf->n_scan_out = (int)b->n_outputs - cf->n_state;
  if (cf->n_scan_out < 0 || cf->n_scan_out > ECG_CF_MAX_SCAN || (int)n->n_outputs != cf->n_state + cf->n_scan_out)
    return ecg_node_errf(e, g, n, "has %zu outputs, its body %zu (state values: %d)", n->n_outputs, b->n_outputs, cf->n_state);
  if (cf->batch && ecg_node_input(g, n, 0))
    return ecg_node_errf(e, g, n, "sequence_lens is not supported (Scan-8 with per-batch lengths)");
  const int64_t *v;
  int cnt;
  struct { const char *name; int64_t *dst; int len; } at[4] = {
    {cf->batch ? "directions" : "scan_input_directions", cf->in_rev, cf->n_scan_in},
    {"scan_output_directions", cf->out_rev, cf->n_scan_out},
    {"scan_input_axes", cf->in_axis, cf->n_scan_in},
    {"scan_output_axes", cf->out_axis, cf->n_scan_out}};
  for (int a = 0; a < 4; a++) {
    if ((cnt = ecg_attr_ints(n, at[a].name, &v)) <= 0) continue;
    if (cnt != at[a].len) return ecg_node_errf(e, g, n, "attribute %s has %d values, expected %d", at[a].name, cnt, at[a].len);
    if (cf->batch && a >= 1) return ecg_node_errf(e, g, n, "attribute %s is not part of Scan-8", at[a].name);
    memcpy(at[a].dst, v, sizeof(int64_t) * (size_t)cnt);
  }
  for (int k = 0; k < cf->n_scan_in; k++) {
    const ecg_tensor *x = ecg_node_input(g, n, cf->first_state + cf->n_state + k);
    if (!x) return ecg_node_errf(e, g, n, "scan input %d is missing", k);
    if (!x->shape_known) return ecg_node_errf(e, g, n, "scan input '%s' has unknown rank", x->name);
    int r = (int)x->n_dims, ax;
    if (cf->batch) { /* [batch, sequence, ...] */
      if (r < 2) return ecg_node_errf(e, g, n, "scan input '%s' has rank %d; Scan-8 needs [batch, sequence, ...]", x->name, r);
      ax = 1;
    } else if (!ops_axis(cf->in_axis[k], r, &ax)) {
      return ecg_node_errf(e, g, n, "scan_input_axes[%d] = %lld is out of range for '%s' of rank %d", k, (long long)cf->in_axis[k], x->name, r);
    }
    cf->in_axis[k] = ax;
    if (cf->in_rev[k] != 0 && cf->in_rev[k] != 1) return ecg_node_errf(e, g, n, "scan input direction %d is %lld, expected 0 or 1", k, (long long)cf->in_rev[k]);
    int64_t t = x->dims[ax]->value;
    if (k == 0) cf->trip = t;
    else if (t != cf->trip && t >= 0 && cf->trip >= 0)
      return ecg_node_errf(e, g, n, "scan inputs have %lld and %lld iterations along their scan axes", (long long)cf->trip, (long long)t);
    else if (t < 0) cf->trip = -1;
  }
  for (int k = 0; k < cf->n_scan_out; k++)
    if (cf->out_rev[k] != 0 && cf->out_rev[k] != 1) return ecg_node_errf(e, g, n, "scan output direction %d is %lld, expected 0 or 1", k, (long long)cf->out_rev[k]);
  return ECG_OK;
}

/* Bind subgraph sg of n (already checked by ecg_validate_scope) to the node: the captures'
 * and the body inputs' dtypes and shapes. */
static int bind(const ecg_graph *g, const ecg_node *n, const ecg_cf *cf, ecg_graph *sg, ecg_err *e) {
  bool *is_in = calloc(sg->n_tensors + 1, 1), *written = calloc(sg->n_tensors + 1, 1);
  if (!is_in || !written) { free(is_in); free(written); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  for (size_t k = 0; k < sg->n_inputs; k++) is_in[sg->inputs[k]] = true;
  for (size_t i = 0; i < sg->n_nodes; i++)
    for (size_t k = 0; k < sg->nodes[i]->n_outputs; k++)
      if (sg->nodes[i]->outputs[k] >= 0) written[sg->nodes[i]->outputs[k]] = true;
  int rc = ECG_OK;
  for (size_t t = 0; t < sg->n_tensors && rc == ECG_OK; t++) {
    ecg_tensor *x = sg->tensors[t];
    if (is_in[t] || written[t] || x->is_const) continue;
    int idx = ecg_node_capture_index(n, x->name, strlen(x->name));
    if (idx < 0) continue; /* read by nothing (ecg_validate_scope refused any other) */
    const ecg_tensor *o = ecg_node_input(g, n, idx);
    if (o && o->sequence) { /* a run-time sequence read in the subgraph */
      if ((rc = ecg_sequence_like(x, o, e)) != ECG_OK) break;
      continue;
    }
    if (!o || !o->shape_known) { rc = ecg_node_errf(e, g, n, "captured value '%s' has unknown shape", x->name); break; }
    if ((rc = copy_type(x, o->dtype, o, -1, -1)) == ECG_ERR_INPUT) rc = ecg_node_errf(e, g, n, "captured value '%s' has rank above %d", x->name, ECG_MAX_RANK);
  }
  free(is_in);
  free(written);
  if (rc != ECG_OK) return rc == ECG_ERR_INTERNAL ? ecg_errf(e, rc, "out of memory") : rc;
  /* body inputs */
  if (cf->kind == ECG_CF_LOOP) {
    const int64_t none[1] = {0};
    ecg_tensor *it = sg->tensors[sg->inputs[0]], *c = sg->tensors[sg->inputs[1]];
    it->dtype = ECG_INT64;
    c->dtype = ECG_BOOL;
    if (ecg_tensor_set_shape(it, 0, none, NULL) || ecg_tensor_set_shape(c, 0, none, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (int j = 0; j < cf->n_state; j++) {
      const ecg_tensor *v = ecg_node_input(g, n, 2 + j);
      if (!v) return ecg_node_errf(e, g, n, "loop-carried value %d is missing", j);
      if (v->sequence != sg->tensors[sg->inputs[2 + j]]->sequence)
        return ecg_node_errf(e, g, n, "loop-carried value %d is %s in the body but '%s' is %s", j,
                             v->sequence ? "a tensor" : "a sequence", v->name, v->sequence ? "a sequence" : "a tensor");
      if (v->sequence) { /* a run-time sequence: its items' shapes may change per iteration */
        ecg_tensor *x = sg->tensors[sg->inputs[2 + j]];
        ECG_TRY(ecg_sequence_like(x, v, e));
        if (ecg_tensor_set_shape(x, -1, NULL, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
        continue;
      }
      int rc2 = copy_type(sg->tensors[sg->inputs[2 + j]], v->dtype, v, -1, -1);
      if (rc2) return rc2 == ECG_ERR_INPUT ? ecg_node_errf(e, g, n, "'%s' has rank above %d", v->name, ECG_MAX_RANK) : ecg_errf(e, rc2, "out of memory");
    }
  } else if (cf->kind == ECG_CF_SEQMAP) { /* an item of a sequence input: its dtype and rank, dims of run time */
    for (int j = 0; j < cf->n_scan_in; j++) {
      const ecg_tensor *v = ecg_node_input(g, n, j);
      ecg_tensor *x = sg->tensors[sg->inputs[j]];
      if (!v) return ecg_node_errf(e, g, n, "input %d is missing", j);
      if (j == 0 && !v->sequence) return ecg_node_errf(e, g, n, "the first input '%s' is not a sequence", v->name);
      if (!v->sequence) {
        if (!v->shape_known) return ecg_node_errf(e, g, n, "input '%s' has unknown rank", v->name);
        int rc2 = copy_type(x, v->dtype, v, -1, -1);
        if (rc2) return rc2 == ECG_ERR_INPUT ? ecg_node_errf(e, g, n, "'%s' has rank above %d", v->name, ECG_MAX_RANK) : ecg_errf(e, rc2, "out of memory");
        continue;
      }
      int64_t d[ECG_MAX_RANK];
      /* the items' rank where the sequence declares one, else the body input's declared rank */
      int r = v->shape_known ? (int)v->n_dims : x->shape_known ? (int)x->n_dims : -1;
      if (r > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "'%s' has rank above %d", v->name, ECG_MAX_RANK);
      for (int i = 0; i < r; i++) d[i] = -1;
      x->dtype = v->dtype;
      x->sequence = false;
      if (ecg_tensor_set_shape(x, r, d, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    }
  } else if (cf->kind == ECG_CF_SCAN) {
    for (int j = 0; j < cf->n_state + cf->n_scan_in; j++) {
      const ecg_tensor *v = ecg_node_input(g, n, cf->first_state + j);
      if ((v && v->sequence) || sg->tensors[sg->inputs[j]]->sequence)
        return ecg_node_errf(e, g, n, "body input %d is a sequence (sequences in a Scan are not supported)", j);
      if (!v || !v->shape_known) return ecg_node_errf(e, g, n, "input %d is missing or has unknown rank", cf->first_state + j);
      int skip0 = cf->batch ? 0 : -1, skip1 = j >= cf->n_state ? (int)cf->in_axis[j - cf->n_state] : -1;
      if (cf->batch && v->n_dims < 1) return ecg_node_errf(e, g, n, "state '%s' has no batch axis (Scan-8)", v->name);
      int rc2 = copy_type(sg->tensors[sg->inputs[j]], v->dtype, v, skip0, skip1);
      if (rc2) return rc2 == ECG_ERR_INPUT ? ecg_node_errf(e, g, n, "'%s' has rank above %d", v->name, ECG_MAX_RANK) : ecg_errf(e, rc2, "out of memory");
    }
  }
  return ECG_OK;
}

int ecg_subgraph_infer(const ecg_graph *g, const ecg_node *n, ecg_graph *sg, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(g, n, &cf, e));
  if (cf_depth >= ECG_MAX_SUBGRAPH_DEPTH)
    return ecg_node_errf(e, g, n, "subgraph '%s' is nested more than %d levels deep", sg->name, ECG_MAX_SUBGRAPH_DEPTH);
  cf_depth++;
  ecg_err sub;
  int rc = ecg_validate_scope(sg, n, &sub);
  if (rc == ECG_OK) rc = bind(g, n, &cf, sg, &sub);
  /* while constants are being folded, fold inside the subgraph too: a condition computed
   * from static shapes becomes a constant, and the If reading it a static choice */
  size_t fold = ecg_fold_active_limit();
  if (rc == ECG_OK) rc = fold ? ecg_fold_constants_limit(sg, fold, NULL, &sub) : ecg_infer_shapes(sg, &sub);
  cf_depth--;
  if (rc != ECG_OK) {
    char lb[256];
    return ecg_errf(e, rc, "node '%s' (%s): subgraph '%s': %s", ecg_node_label(g, n, lb, sizeof lb), n->op_type, sg->name, sub.msg);
  }
  return ECG_OK;
}

/** cf_set_output's batch when the output has no batch dim. */
#define CF_NO_BATCH (-2)

/* Set output k of control-flow node n from body output o: a leading batch dim when batch
 * != CF_NO_BATCH (its value, -1 unknown), then o's dims with the iteration axis (extent trip, -1:
 * symbol trip_sym) inserted before o's dim `at` (at < 0: none; at = rank(o): last).  The
 * caller has checked the rank fits ECG_MAX_RANK.  Errors: those of ops_set_out_syms. */
static int cf_set_output(ecg_graph *g, ecg_node *n, int k, const ecg_tensor *o, int64_t batch, int at, int64_t trip,
                         const char *trip_sym, ecg_err *e) {
  int64_t d[ECG_MAX_RANK + 2];
  const char *sy[ECG_MAX_RANK + 2] = {0};
  int r = 0, ro = (int)o->n_dims;
  if (batch != CF_NO_BATCH) { d[r] = batch; sy[r++] = "batch"; }
  for (int i = 0; i <= ro; i++) {
    if (i == at) { d[r] = trip; sy[r++] = trip_sym; }
    if (i < ro) { d[r] = o->dims[i]->value; sy[r] = d[r] < 0 ? o->dims[i]->symbol : NULL; r++; }
  }
  return ops_set_out_syms(g, n, k, o->dtype, r, d, sy, e);
}

/* Outputs of If: both branches' outputs, dims merged (a dim the branches disagree on is
 * symbolic, "then:A|else:B": the static lowering refuses it unless the model declares it,
 * and then checks each branch against the declared shape). */
int ecg_infer_if(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(g, n, &cf, e));
  int taken = ecg_if_taken_branch(g, n);
  if (taken >= 0) { /* a constant condition: only the taken branch is inferred (and run) */
    ecg_graph *b = cf.body[taken];
    ECG_TRY(ecg_subgraph_infer(g, n, b, e));
    if (b->n_outputs != n->n_outputs)
      return ecg_node_errf(e, g, n, "%s has %zu outputs, the node %zu", taken ? "else_branch" : "then_branch", b->n_outputs, n->n_outputs);
    for (size_t k = 0; k < n->n_outputs; k++) {
      const ecg_tensor *o = b->tensors[b->outputs[k]];
      ecg_tensor *y = ecg_node_output(g, n, (int)k);
      if (o->sequence) { /* a run-time sequence (format/ECG.md "Sequences") */
        if (y) ECG_TRY(ecg_sequence_like(y, o, e));
        continue;
      }
      if (!o->shape_known) return ecg_node_errf(e, g, n, "branch output '%s' has unknown rank", o->name);
      if (o->n_dims > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output %zu has rank %zu > %d", k, o->n_dims, ECG_MAX_RANK);
      ECG_TRY(cf_set_output(g, n, (int)k, o, CF_NO_BATCH, -1, -1, NULL, e));
    }
    return ECG_OK;
  }
  for (int b = 0; b < 2; b++) {
    ECG_TRY(ecg_subgraph_infer(g, n, cf.body[b], e));
    if (cf.body[b]->n_outputs != n->n_outputs)
      return ecg_node_errf(e, g, n, "%s has %zu outputs, the node %zu", b ? "else_branch" : "then_branch", cf.body[b]->n_outputs, n->n_outputs);
  }
  for (size_t k = 0; k < n->n_outputs; k++) {
    const ecg_tensor *a = cf.body[0]->tensors[cf.body[0]->outputs[k]], *b = cf.body[1]->tensors[cf.body[1]->outputs[k]];
    if (a->dtype != b->dtype)
      return ecg_node_errf(e, g, n, "output %zu is %s in then_branch but %s in else_branch", k, ecg_dtype_name(a->dtype), ecg_dtype_name(b->dtype));
    ecg_tensor *y = ecg_node_output(g, n, (int)k);
    if (!y) continue;
    if (a->sequence || b->sequence) { /* run-time sequences: the common element shape, if any */
      if (!a->sequence || !b->sequence)
        return ecg_node_errf(e, g, n, "output %zu is a sequence in one branch and a tensor in the other", k);
      bool same = a->shape_known && b->shape_known && a->n_dims == b->n_dims;
      for (size_t i = 0; same && i < a->n_dims; i++) same = a->dims[i]->value == b->dims[i]->value && a->dims[i]->value >= 0;
      ECG_TRY(ecg_sequence_like(y, a, e));
      if (!same && ecg_tensor_set_shape(y, -1, NULL, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      continue;
    }
    if (!a->shape_known || !b->shape_known || a->n_dims != b->n_dims) {
      y->dtype = a->dtype;
      if (!y->shape_known && ecg_tensor_set_shape(y, -1, NULL, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      if (!y->shape_known) return ecg_node_errf(e, g, n, "the branches give output %zu different ranks (dynamic shapes are not supported)", k);
      continue; /* the rank the model declares stands */
    }
    int64_t d[ECG_MAX_RANK];
    const char *sy[ECG_MAX_RANK];
    char sb[ECG_MAX_RANK][96], va[40], vb[40];
    int r = (int)a->n_dims;
    if (r > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output %zu has rank %d > %d", k, r, ECG_MAX_RANK);
    for (int i = 0; i < r; i++) {
      int64_t x = a->dims[i]->value, z = b->dims[i]->value;
      d[i] = x == z && x >= 0 ? x : -1;
      sy[i] = NULL;
      if (d[i] < 0) {
        if (x < 0 && z < 0 && !strcmp(a->dims[i]->symbol, b->dims[i]->symbol)) sy[i] = a->dims[i]->symbol;
        else {
          snprintf(va, sizeof va, "%lld", (long long)x);
          snprintf(vb, sizeof vb, "%lld", (long long)z);
          snprintf(sb[i], sizeof sb[i], "then:%.40s|else:%.40s", x < 0 ? a->dims[i]->symbol : va, z < 0 ? b->dims[i]->symbol : vb);
          sy[i] = sb[i];
        }
      }
    }
    ECG_TRY(ops_set_out_syms(g, n, (int)k, a->dtype, r, d, sy, e));
  }
  return ECG_OK;
}

/* Outputs of Loop: final loop-carried values (the body's, which must keep their shapes
 * for a static plan) and scan outputs [T, ...] with T the constant trip count M, or the
 * dim the model declares (checked at run time by the lowered code), else symbolic. */
int ecg_infer_loop(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(g, n, &cf, e));
  ecg_graph *b = cf.body[0];
  ECG_TRY(ecg_subgraph_infer(g, n, b, e));
  const ecg_tensor *c = b->tensors[b->outputs[0]];
  if (c->dtype != ECG_BOOL || ecg_tensor_numel(c) != 1) return ecg_node_errf(e, g, n, "the body's first output '%s' (the condition) must be one bool", c->name);
  for (int k = 0; k < cf.n_state + cf.n_scan_out; k++) {
    const ecg_tensor *o = b->tensors[b->outputs[1 + k]];
    ecg_tensor *y = ecg_node_output(g, n, k);
    if (!y) continue;
    if (o->sequence) { /* a loop-carried run-time sequence: items of any shape */
      if (k >= cf.n_state) return ecg_node_errf(e, g, n, "scan output '%s' is a sequence (not supported)", o->name);
      const ecg_tensor *v = ecg_node_input(g, n, 2 + k);
      if (!v || !v->sequence || v->dtype != o->dtype)
        return ecg_node_errf(e, g, n, "loop-carried value %d enters the body as %s but leaves it as a sequence of %s", k,
                             v && v->sequence ? "a sequence of another dtype" : "a tensor", ecg_dtype_name(o->dtype));
      ECG_TRY(ecg_sequence_like(y, o, e));
      if (ecg_tensor_set_shape(y, -1, NULL, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      continue;
    }
    if (k < cf.n_state && ecg_node_input(g, n, 2 + k) && ecg_node_input(g, n, 2 + k)->sequence)
      return ecg_node_errf(e, g, n, "loop-carried value %d enters the body as a sequence but leaves it as the tensor '%s'", k, o->name);
    if (!o->shape_known) return ecg_node_errf(e, g, n, "body output '%s' has unknown rank", o->name);
    if (k >= cf.n_state && o->n_dims + 1 > ECG_MAX_RANK)
      return ecg_node_errf(e, g, n, "scan output '%s' would have rank %zu > %d", y->name, o->n_dims + 1, ECG_MAX_RANK);
    ECG_TRY(cf_set_output(g, n, k, o, CF_NO_BATCH, k >= cf.n_state ? 0 : -1, cf.trip, "loop_iterations", e));
  }
  return ECG_OK;
}

/* Outputs of SequenceMap: a run-time sequence per body output (its items of any shape:
 * each is what the body gives for one item of the inputs). */
int ecg_infer_sequence_map(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(g, n, &cf, e));
  ecg_graph *b = cf.body[0];
  ECG_TRY(ecg_subgraph_infer(g, n, b, e));
  for (int k = 0; k < cf.n_scan_out; k++) {
    const ecg_tensor *o = b->tensors[b->outputs[k]];
    ecg_tensor *y = ecg_node_output(g, n, k);
    if (o->sequence) return ecg_node_errf(e, g, n, "body output '%s' is a sequence (sequences of sequences are not supported)", o->name);
    if (!y) continue;
    y->dtype = o->dtype;
    y->sequence = true;
    if (ecg_tensor_set_shape(y, -1, NULL, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  return ECG_OK;
}

/* Outputs of Scan: final state values, scan outputs with the iteration axis inserted at
 * scan_output_axes (Scan-8: [batch, sequence, ...]). */
int ecg_infer_scan(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(g, n, &cf, e));
  ecg_graph *b = cf.body[0];
  ECG_TRY(ecg_subgraph_infer(g, n, b, e));
  int64_t batch = -1;
  if (cf.batch) {
    const ecg_tensor *x = ecg_node_input(g, n, cf.first_state + cf.n_state);
    batch = x->dims[0]->value;
  }
  for (int k = 0; k < cf.n_state + cf.n_scan_out; k++) {
    const ecg_tensor *o = b->tensors[b->outputs[k]];
    ecg_tensor *y = ecg_node_output(g, n, k);
    if (!y) continue;
    if (o->sequence) return ecg_node_errf(e, g, n, "body output '%s' is a sequence (sequences in a Scan body are not supported)", o->name);
    if (!o->shape_known) return ecg_node_errf(e, g, n, "body output '%s' has unknown rank", o->name);
    int ro = (int)o->n_dims, extra = (cf.batch ? 1 : 0) + (k >= cf.n_state ? 1 : 0);
    if (ro + extra > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output '%s' would have rank %d > %d", y->name, ro + extra, ECG_MAX_RANK);
    int at = -1;
    if (k >= cf.n_state) {
      if (cf.batch) at = 0;
      else if (!ops_axis(cf.out_axis[k - cf.n_state], ro + 1, &at))
        return ecg_node_errf(e, g, n, "scan_output_axes[%d] = %lld is out of range for rank %d", k - cf.n_state, (long long)cf.out_axis[k - cf.n_state], ro + 1);
      else cf.out_axis[k - cf.n_state] = at;
    }
    if (cf.batch && k >= cf.n_state) at = 0; /* [batch, sequence, body dims...] */
    ECG_TRY(cf_set_output(g, n, k, o, cf.batch ? batch : CF_NO_BATCH, at, cf.trip, "scan_iterations", e));
  }
  return ECG_OK;
}

/* FLOPs of the subgraphs' nodes, times the iterations when static (If: the costlier
 * branch); -1 when a body node's count is unknown. */
int64_t ecg_flops_control(const ecg_graph *g, const ecg_node *n) {
  ecg_cf cf;
  if (ecg_cf_info(g, n, &cf, NULL) != ECG_OK) return -1;
  int64_t best = 0;
  for (int b = 0; b < 2 && cf.body[b]; b++) {
    int64_t s = 0;
    for (size_t i = 0; i < cf.body[b]->n_nodes; i++) {
      const ecg_op_info *op = ecg_node_op(cf.body[b]->nodes[i]);
      int64_t f = op ? op->flops(cf.body[b], cf.body[b]->nodes[i]) : -1;
      if (f < 0) return -1;
      s += f;
    }
    if (s > best) best = s;
  }
  if (cf.kind == ECG_CF_IF) return best;
  if (cf.trip < 0) return -1;
  int64_t reps = cf.trip;
  if (cf.batch) {
    const ecg_tensor *x = ecg_node_input(g, n, cf.first_state + cf.n_state);
    if (!x || x->dims[0]->value < 0) return -1;
    reps *= x->dims[0]->value;
  }
  return __builtin_mul_overflow(best, reps, &best) ? INT64_MAX : best;
}

int ecg_if_taken_branch(const ecg_graph *g, const ecg_node *n) {
  const ecg_op_info *op = ecg_node_op(n);
  if (!op || op->id != ECG_OP_If) return -1;
  const ecg_tensor *c = ecg_node_input(g, n, 0);
  if (!c || !c->is_const || ecg_tensor_numel(c) != 1 || !c->data.data) return -1;
  return ecg_const_f64(c, 0) != 0 ? 0 : 1;
}

/* A name not yet used by a tensor of g: "<prefix>/<name>", then "#2", "#3", ... */
static const char *fresh_name(const ecg_graph *g, const char *prefix, const char *name, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%s", prefix, name);
  size_t len = strlen(buf);
  for (int k = 2; ecg_find_tensor(g, buf) >= 0; k++) snprintf(buf + len, cap - len, "#%d", k);
  return buf;
}

/* Append the nodes of branch b of If node n to g: the branch's constants and intermediates
 * become tensors of g (named "<prefix>/<name>"), its captured values the node's capture
 * inputs, its outputs the tensors dest[k] (n->n_outputs of them: the node's own outputs when
 * the If is replaced by its taken branch; through an Identity where the branch returns a
 * value it does not compute itself, or the same value twice). Shapes are left for the
 * caller to infer. The If node itself stays. ECG_OK, ECG_ERR_INPUT (a branch output neither
 * computed, constant nor captured) or ECG_ERR_INTERNAL (out of memory). */
static int inline_branch(ecg_graph *g, ecg_node *n, ecg_graph *b, const char *prefix, const int32_t *dest, ecg_err *e) {
  char nb[512];
  int *map = malloc(sizeof(int) * (b->n_tensors + 1));
  bool *written = calloc(b->n_tensors + 1, 1), *claimed = calloc(b->n_tensors + 1, 1);
  int *ins = NULL, *outs = NULL;
  int rc = ECG_OK;
  if (!map || !written || !claimed) goto oom;
  for (size_t i = 0; i < b->n_nodes; i++)
    for (size_t k = 0; k < b->nodes[i]->n_outputs; k++)
      if (b->nodes[i]->outputs[k] >= 0) written[b->nodes[i]->outputs[k]] = true;
  for (size_t t = 0; t < b->n_tensors; t++) map[t] = -1;
  /* the node's outputs take the place of the branch values computed for them */
  for (size_t k = 0; k < b->n_outputs && k < n->n_outputs; k++) {
    int bt = b->outputs[k];
    if (dest[k] >= 0 && written[bt] && !claimed[bt]) { map[bt] = dest[k]; claimed[bt] = true; }
  }
  for (size_t t = 0; t < b->n_tensors; t++) {
    const ecg_tensor *x = b->tensors[t];
    if (map[t] >= 0) continue;
    if (written[t]) {
      if ((map[t] = ecg_add_tensor(g, fresh_name(g, prefix, x->name, nb, sizeof nb), ECG_UNDEFINED, -1, NULL)) < 0) goto oom;
    } else if (x->is_const) {
      int64_t d[ECG_MAX_RANK];
      int r = ecg_tensor_dims(x, d);
      if ((map[t] = ecg_add_tensor(g, fresh_name(g, prefix, x->name, nb, sizeof nb), x->dtype, r, d)) < 0 ||
          ecg_tensor_set_data(g->tensors[map[t]], x->data.data, x->data.len))
        goto oom;
    } else {
      int idx = ecg_node_capture_index(n, x->name, strlen(x->name));
      if (idx >= 0) map[t] = n->inputs[idx];
    }
  }
  for (size_t i = 0; i < b->n_nodes; i++) {
    const ecg_node *m = b->nodes[i];
    free(ins);
    free(outs);
    ins = malloc(sizeof(int) * (m->n_inputs + 1));
    outs = malloc(sizeof(int) * (m->n_outputs + 1));
    if (!ins || !outs) goto oom;
    for (size_t k = 0; k < m->n_inputs; k++) ins[k] = m->inputs[k] >= 0 ? map[m->inputs[k]] : -1;
    for (size_t k = 0; k < m->n_outputs; k++) outs[k] = m->outputs[k] >= 0 ? map[m->outputs[k]] : -1;
    char mb[256];
    snprintf(nb, sizeof nb, "%s/%s", prefix, ecg_node_label(b, m, mb, sizeof mb));
    int k = ecg_add_node(g, nb, m->op_type, m->domain, m->opset, (int)m->n_inputs, ins, (int)m->n_outputs, outs);
    if (k < 0 || ecg_node_copy_attrs(g->nodes[k], m)) goto oom;
  }
  for (size_t k = 0; k < b->n_outputs && k < n->n_outputs; k++) {
    int bt = b->outputs[k], y = dest[k];
    if (y < 0 || map[bt] == y) continue;
    if (map[bt] < 0) { rc = ecg_node_errf(e, g, n, "branch output '%s' is not computed, constant or captured", b->tensors[bt]->name); goto out; }
    snprintf(nb, sizeof nb, "%s/output_%zu", prefix, k);
    if (ecg_add_node(g, nb, "Identity", "", n->opset, 1, &map[bt], 1, &y) < 0) goto oom;
  }
  goto out;
oom:
  rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
out:
  free(map);
  free(written);
  free(claimed);
  free(ins);
  free(outs);
  return rc;
}

int ecg_inline_constant_ifs(ecg_graph *g, int *n_inlined, ecg_err *e) {
  int count = 0;
  size_t n0 = g->n_nodes;
  bool *keep = malloc(sizeof(bool) * (n0 + 1));
  if (!keep) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  int rc = ECG_OK;
  for (size_t i = 0; i < n0 && rc == ECG_OK; i++) {
    ecg_node *n = g->nodes[i];
    keep[i] = true;
    const ecg_op_info *op = ecg_node_op(n);
    if (!op || !(op->props & ECG_PROP_CONTROL)) continue;
    ecg_cf cf;
    if ((rc = ecg_cf_info(g, n, &cf, e)) != ECG_OK) break;
    int taken = ecg_if_taken_branch(g, n);
    if (taken >= 0) {
      /* the branch's own constant Ifs first, then the branch itself */
      int sub = 0;
      if ((rc = ecg_inline_constant_ifs(cf.body[taken], &sub, e)) != ECG_OK) break;
      count += sub;
      char lb[256];
      if ((rc = inline_branch(g, n, cf.body[taken], ecg_node_label(g, n, lb, sizeof lb), n->outputs, e)) != ECG_OK) break;
      keep[i] = false;
      count++;
      continue;
    }
    for (int k = 0; k < 2 && cf.body[k] && rc == ECG_OK; k++) {
      int sub = 0;
      rc = ecg_inline_constant_ifs(cf.body[k], &sub, e);
      count += sub;
    }
  }
  if (rc == ECG_OK && count > 0) {
    bool *all = realloc(keep, sizeof(bool) * (g->n_nodes + 1));
    if (!all) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    else {
      keep = all;
      for (size_t i = n0; i < g->n_nodes; i++) keep[i] = true;
      if (ecg_compact(g, keep, NULL) != ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    }
  }
  free(keep);
  if (rc == ECG_OK && n_inlined) *n_inlined = count;
  return rc;
}

int ecg_fold_static_ifs(ecg_graph *g, int *n_folded, int *n_inlined, ecg_err *e) {
  int folded = 0, inlined = 0;
  int rc = ecg_fold_constants(g, &folded, e);
  for (int k = 1; rc == ECG_OK && k > 0;) {
    int more = 0;
    if ((rc = ecg_inline_constant_ifs(g, &k, e)) == ECG_OK && k > 0) rc = ecg_fold_constants(g, &more, e);
    inlined += k;
    folded += more;
  }
  if (n_folded) *n_folded = folded;
  if (n_inlined) *n_inlined = inlined;
  return rc;
}

/* ---------------------------------------------------------------- guarded flattening */

/* Set m's guard to base's entries (may be NULL) and, when name is not NULL, the entry
 * "<sign><name>" after them. ECG_OK or ECG_ERR_INTERNAL. */
static int guard_set(ecg_node *m, const ecg_attr *base, char sign, const char *name) {
  size_t nb = base ? base->n_strings : 0, n = nb + (name != NULL);
  if (!n) return ECG_OK;
  ProtobufCBinaryData *v = calloc(n, sizeof *v);
  if (!v) return ECG_ERR_INTERNAL;
  for (size_t k = 0; k < n; k++) {
    size_t len = k < nb ? base->strings[k].len : strlen(name) + 1;
    if (!(v[k].data = malloc(len + 1))) goto oom;
    if (k < nb) memcpy(v[k].data, base->strings[k].data, len);
    else { v[k].data[0] = (uint8_t)sign; memcpy(v[k].data + 1, name, len - 1); }
    v[k].len = len;
  }
  ecg_attr *a = ecg_attr_add(m, ECG_ATTR_GUARD, ECG_ATTR_STRINGS);
  if (!a) goto oom;
  a->strings = v;
  a->n_strings = n;
  return ECG_OK;
oom:
  for (size_t k = 0; k < n; k++) free(v[k].data);
  free(v);
  return ECG_ERR_INTERNAL;
}

int ecg_node_guard(const ecg_graph *g, const ecg_node *n, int max, int *cond, int *sign) {
  const ecg_attr *a = ecg_attr_find(n, ECG_ATTR_GUARD);
  if (!a || a->type != ECG_ATTR_STRINGS) return 0;
  int c = 0;
  for (size_t k = 0; k < a->n_strings && c < max; k++) {
    const ProtobufCBinaryData *s = &a->strings[k];
    char nm[1024];
    if (s->len < 2 || s->len > sizeof nm || (s->data[0] != '+' && s->data[0] != '-')) return -1;
    memcpy(nm, s->data + 1, s->len - 1);
    nm[s->len - 1] = 0;
    if ((cond[c] = ecg_find_tensor(g, nm)) < 0) return -1;
    sign[c++] = s->data[0] == '+';
  }
  return c;
}

/* Whether If node n can be flattened: no run-time sequence among its outputs or its
 * branches' tensors, and a condition of one element whose rank no output's is below (the
 * Where that selects an output broadcasts the condition). */
static bool flattenable(const ecg_graph *g, const ecg_node *n, const ecg_cf *cf) {
  const ecg_tensor *c = ecg_node_input(g, n, 0);
  if (n->opset < 9 || !c || !c->shape_known || ecg_tensor_numel(c) != 1) return false; /* Where-9 */
  for (size_t k = 0; k < n->n_outputs; k++) {
    const ecg_tensor *y = ecg_node_output(g, n, (int)k);
    if (!y || y->sequence || (y->shape_known && y->n_dims < c->n_dims)) return false;
    /* the branches must give one shape (checked again over RDP's dims by the caller): not
     * two ranks, not two different numbers (such an If stays, for its consumer to refuse) */
    if (k >= cf->body[0]->n_outputs || k >= cf->body[1]->n_outputs) return false;
    const ecg_tensor *a = cf->body[0]->tensors[cf->body[0]->outputs[k]], *b = cf->body[1]->tensors[cf->body[1]->outputs[k]];
    if (!a->shape_known || !b->shape_known || a->n_dims != b->n_dims) return false;
    for (size_t d = 0; d < a->n_dims; d++)
      if (a->dims[d]->value >= 0 && b->dims[d]->value >= 0 && a->dims[d]->value != b->dims[d]->value) return false;
  }
  for (int b = 0; b < 2; b++)
    for (size_t t = 0; t < cf->body[b]->n_tensors; t++)
      if (cf->body[b]->tensors[t]->sequence) return false;
  return true;
}

/* One round of ecg_flatten_ifs: the Ifs of g (not those its branches hold: their
 * conditions have no shape yet), removed at the end. *n_flat = Ifs flattened. */
static int flatten_round(ecg_graph *g, int *n_flat, ecg_err *e) {
  int count = 0, rc = ECG_OK;
  bool *keep = NULL;
  int32_t *dest = NULL;
  int *gone = NULL; /* the Ifs flattened, removed at the end */
  size_t n0 = g->n_nodes;
  for (size_t i = 0; i < n0 && rc == ECG_OK; i++) {
    ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_node_op(n);
    if (!op || op->id != ECG_OP_If) continue;
    ecg_cf cf;
    if ((rc = ecg_cf_info(g, n, &cf, e)) != ECG_OK) break;
    if (!flattenable(g, n, &cf)) continue;
    int *gp = realloc(gone, sizeof(int) * ((size_t)count + 1));
    int32_t *dp = realloc(dest, sizeof(int32_t) * (2 * n->n_outputs + 1));
    if (gp) gone = gp;
    if (dp) dest = dp;
    if (!gp || !dp) goto oom;
    char lb[256], pre[400], nb[512];
    ecg_node_label(g, n, lb, sizeof lb);
    const ecg_attr *base = ecg_attr_find(n, ECG_ATTR_GUARD);
    const char *cond = g->tensors[n->inputs[0]]->name;
    const size_t no = n->n_outputs; /* dest[b * no + k]: branch b's value of output k */
    for (int b = 0; b < 2 && rc == ECG_OK; b++) {
      snprintf(pre, sizeof pre, "%s/%s", lb, b ? "else" : "then");
      for (size_t k = 0; k < no; k++) {
        int y = n->outputs[k];
        dest[b * no + k] = y < 0 ? -1 : ecg_add_tensor(g, fresh_name(g, pre, g->tensors[y]->name, nb, sizeof nb), ECG_UNDEFINED, -1, NULL);
        if (y >= 0 && dest[b * no + k] < 0) goto oom;
      }
      size_t first = g->n_nodes;
      rc = inline_branch(g, n, cf.body[b], pre, dest + b * no, e);
      for (size_t m = first; rc == ECG_OK && m < g->n_nodes; m++)
        if (guard_set(g->nodes[m], base, b ? '-' : '+', cond) != ECG_OK) goto oom;
    }
    if (rc != ECG_OK) break;
    /* each output: Where(cond, then value, else value), under the If's own guard */
    for (size_t k = 0; k < n->n_outputs; k++) {
      if (n->outputs[k] < 0) continue;
      int in[3] = {n->inputs[0], dest[k], dest[no + k]}, out = n->outputs[k];
      snprintf(nb, sizeof nb, "%s/select_%zu", lb, k);
      int w = ecg_add_node(g, nb, "Where", "", n->opset, 3, in, 1, &out);
      if (w < 0 || guard_set(g->nodes[w], base, 0, NULL) != ECG_OK || ecg_attr_set_s(g->nodes[w], ECG_ATTR_SELECT, lb) != ECG_OK) goto oom;
    }
    gone[count++] = (int)i;
  }
  if (rc == ECG_OK && count) {
    if (!(keep = malloc(sizeof(bool) * (g->n_nodes + 1)))) goto oom;
    for (size_t i = 0; i < g->n_nodes; i++) keep[i] = true;
    for (int k = 0; k < count; k++) keep[gone[k]] = false;
    if (ecg_compact(g, keep, NULL) != ECG_OK) goto oom;
  }
  goto out;
oom:
  rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
out:
  free(keep);
  free(dest);
  free(gone);
  *n_flat = rc == ECG_OK ? count : 0;
  return rc;
}

int ecg_flatten_ifs(ecg_graph *g, int *n_flat, ecg_err *e) {
  int total = 0, k = 0;
  do { /* each round's new tensors inferred, so the Ifs they held (now nodes of g) are next */
    ECG_TRY(flatten_round(g, &k, e));
    if (k) ECG_TRY(ecg_infer_shapes(g, e));
    total += k;
  } while (k);
  if (n_flat) *n_flat = total;
  return ECG_OK;
}
