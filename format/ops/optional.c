/* Optional values (ONNX Optional, OptionalHasElement, OptionalGetElement; issue 9 item 4)
 * with a static element type and shape.
 *
 * An optional value is an element tensor and a presence flag. The ECG keeps the pair as two
 * tensors: an optional graph input V (type optional(tensor), or optional(sequence(tensor)):
 * then V is a run-time sequence) becomes two graph inputs, V (the element, with the declared
 * dtype and shape) and V:present (bool scalar, ECG_OPTIONAL_PRESENT), which the caller fills
 * (ecg-bench reads an ONNX OptionalProto into both); Optional(x) is x with a constant true
 * flag; an Identity of an optional is that optional. ecg_resolve_optionals then replaces the
 * operators while the graph is imported: OptionalGetElement by an Identity of the element,
 * OptionalHasElement by an Identity of the flag (a constant true for a plain tensor input,
 * opset 18; false for an omitted input), Optional(x) by an Identity of x; an optional graph
 * output V (onnx2ecg adds the output V:present after it) gets an Identity of its flag. An
 * empty Optional (no input; onnx2ecg imports its TypeProto attribute 'type' as dtype /
 * sequence / shape) becomes a SequenceEmpty, or an Identity of a zero tensor of a static
 * shape, with a constant false flag. Optionals crossing a subgraph boundary are pairs there
 * too (onnx2ecg: an If branch's or Loop body's optional output V followed by V:present, the If's
 * output Y by Y:present; a Loop carries the flag after the value): subgraphs are resolved
 * first, and a node's output Y followed by Y:present is an optional with that flag. What
 * cannot be resolved (an empty Optional of a tensor type without a static shape; an
 * optional graph output whose flag is not known) is refused naming the node or the output.
 * Reading the element of an empty
 * optional is an error in ONNX; here it reads the element buffer as the caller filled it
 * (ecg-bench: zeros, or an empty sequence). */
#include <stdio.h>
#include <string.h>

#include "ops_common.h"

/* Every optional operator's shape function: reached only by a node that
 * ecg_resolve_optionals could not replace. */
int ecg_infer_optional(ecg_graph *g, ecg_node *n, ecg_err *e) {
  return ecg_node_errf(e, g, n, "optional values are supported only as graph inputs and outputs, values built by "
                                "Optional, and optionals an If or Loop passes across its subgraph's boundary (not supported here)");
}

/* A new bool scalar constant; its id or -1. */
static int const_bool(ecg_graph *g, const char *name, bool v) {
  int t = ecg_add_tensor(g, name, ECG_BOOL, 0, NULL);
  uint8_t b = v;
  if (t < 0 || ecg_tensor_set_data(g->tensors[t], &b, 1)) return -1;
  return t;
}

/* Make n an Identity of tensor x (its attributes dropped). */
static int to_identity(ecg_node *n, int x) {
  char *op = strdup("Identity"), *dom = strdup("");
  if (!op || !dom) { free(op); free(dom); return -1; }
  if (n->op_type && n->op_type != protobuf_c_empty_string) free(n->op_type);
  if (n->domain && n->domain != protobuf_c_empty_string) free(n->domain);
  n->op_type = op;
  n->domain = dom;
  if (n->n_inputs < 1) {
    int32_t *in = realloc(n->inputs, sizeof *in);
    if (!in) return -1;
    n->inputs = in;
  }
  n->inputs[0] = x;
  n->n_inputs = 1;
  while (n->n_attrs) ecg_attr_remove(n, n->attrs[0]->name);
  return 0;
}

/* Grow the per-tensor flag map *p from *n to n tensors (new entries -1); -1 on OOM. */
static int grow(int **p, size_t *n, size_t nt) {
  int *np = realloc(*p, sizeof(int) * (nt + 1));
  if (!np) return -1;
  *p = np;
  for (size_t t = *n; t < nt; t++) np[t] = -1;
  *n = nt;
  return 0;
}

/* The graph output k holds an optional output's presence flag: named "V:present" after the
 * output V it follows, produced by no node yet (onnx2ecg adds it for an optional output). */
static bool flag_output(const ecg_graph *g, size_t k, const int *producer) {
  if (k == 0 || g->outputs[k] < 0 || g->outputs[k - 1] < 0 || producer[g->outputs[k]] >= 0 || g->tensors[g->outputs[k]]->is_const)
    return false;
  const char *nm = g->tensors[g->outputs[k]]->name, *vn = g->tensors[g->outputs[k - 1]]->name;
  size_t l = strlen(nm), ls = strlen(ECG_OPTIONAL_PRESENT);
  for (size_t i = 0; i < g->n_inputs; i++) if (g->inputs[i] == g->outputs[k]) return false;
  return l > ls && !strcmp(nm + l - ls, ECG_OPTIONAL_PRESENT) && strlen(vn) == l - ls && !strncmp(vn, nm, l - ls);
}

/* The list (ids, n) of g holds at k the flag of the value at k - 1: "V:present" after V. */
static bool flag_after(const ecg_graph *g, const int32_t *ids, size_t n, size_t k) {
  if (k == 0 || k >= n || ids[k] < 0 || ids[k - 1] < 0) return false;
  const char *nm = g->tensors[ids[k]]->name, *vn = g->tensors[ids[k - 1]]->name;
  size_t l = strlen(nm), ls = strlen(ECG_OPTIONAL_PRESENT), lv = strlen(vn);
  return l == lv + ls && !strncmp(nm, vn, lv) && !strcmp(nm + lv, ECG_OPTIONAL_PRESENT);
}

/* Make n (an Optional with no input: the empty optional of its "type") the element of the
 * empty optional: a SequenceEmpty of the element dtype for a sequence type, else an Identity
 * of a zero tensor of the type's static shape (ONNX leaves an empty optional's element
 * undefined; reading it is an error there). Errors name the node. */
static int empty_element(ecg_graph *g, ecg_node *n, ecg_err *e) {
  int64_t dt = ecg_attr_i(n, "dtype", -1);
  ecg_tensor *y = g->tensors[n->outputs[0]];
  if (dt <= 0) return ecg_node_errf(e, g, n, "an Optional with neither an input nor a 'type' attribute");
  if (ecg_attr_i(n, "sequence", 0)) {
    char *op = strdup("SequenceEmpty");
    if (!op) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    if (n->op_type && n->op_type != protobuf_c_empty_string) free(n->op_type);
    n->op_type = op;
    n->n_inputs = 0;
    ecg_attr_remove(n, "sequence");
    ecg_attr_remove(n, "shape");
    y->sequence = true;
    y->dtype = (int)dt;
    return ECG_OK;
  }
  const int64_t *d = NULL;
  int r = ecg_attr_ints(n, "shape", &d);
  bool fixed = ecg_attr_find(n, "shape") != NULL && r >= 0;
  size_t numel = 1, esz = ecg_dtype_size((int)dt);
  for (int k = 0; fixed && k < r; k++) fixed = d[k] >= 0, numel *= fixed ? (size_t)d[k] : 0;
  if (!fixed || !esz)
    return ecg_node_errf(e, g, n, "an empty Optional of a tensor type without a static shape (not supported)");
  char nm[512];
  snprintf(nm, sizeof nm, "%s_none", y->name);
  int z = ecg_add_tensor(g, nm, (int)dt, r, d);
  void *zero = calloc(numel * esz + 1, 1);
  int rc = z >= 0 && zero ? ecg_tensor_set_data(g->tensors[z], zero, numel * esz) : ECG_ERR_INTERNAL;
  free(zero);
  if (rc) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return to_identity(n, z) ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : ECG_OK;
}

static int resolve_graph(ecg_graph *g, int *n_resolved, ecg_err *e);

int ecg_resolve_optionals(ecg_graph *g, int *n_resolved, ecg_err *e) {
  if (n_resolved) *n_resolved = 0;
  int sub = 0, k_sub;
  /* subgraphs first (an optional inside a Loop body or an If branch; the flags of the ones
   * crossing the node's boundary were made explicit by onnx2ecg) */
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t a = 0; a < g->nodes[i]->n_attrs; a++) {
      ecg_attr *at = g->nodes[i]->attrs[a];
      if (at->g) { ECG_TRY(ecg_resolve_optionals(at->g, &k_sub, e)); sub += k_sub; }
      for (size_t j = 0; j < at->n_graphs; j++) { ECG_TRY(ecg_resolve_optionals(at->graphs[j], &k_sub, e)); sub += k_sub; }
    }
  int rc = resolve_graph(g, n_resolved, e);
  if (rc == ECG_OK && n_resolved) *n_resolved += sub;
  return rc;
}

static int resolve_graph(ecg_graph *g, int *n_resolved, ecg_err *e) {
  if (n_resolved) *n_resolved = 0;
  bool any = false;
  for (size_t i = 0; i < g->n_nodes && !any; i++) {
    const ecg_op_info *op = ecg_node_op(g->nodes[i]);
    any = op && op->infer == ecg_infer_optional;
  }
  int *producer = malloc(sizeof(int) * (g->n_tensors + 1));
  if (!producer) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  ecg_producers(g, producer);
  for (size_t k = 0; k < g->n_outputs && !any; k++) any = flag_output(g, k, producer);
  free(producer);
  if (!any) return ECG_OK;
  ECG_TRY(ecg_topo_sort(g, e));
  size_t nt = g->n_tensors;
  int *present = malloc(sizeof(int) * (nt + 1)); /* per tensor: its presence flag, -1 not an optional */
  if (!present) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t t = 0; t < nt; t++) present[t] = -1;
  for (size_t i = 0; i < g->n_inputs; i++) { /* V and V:present, both graph inputs */
    const char *nm = g->tensors[g->inputs[i]]->name;
    size_t l = strlen(nm), ls = strlen(ECG_OPTIONAL_PRESENT);
    if (l <= ls || strcmp(nm + l - ls, ECG_OPTIONAL_PRESENT)) continue;
    for (size_t j = 0; j < g->n_inputs; j++) {
      const char *vn = g->tensors[g->inputs[j]]->name;
      if (strlen(vn) == l - ls && !strncmp(vn, nm, l - ls)) present[g->inputs[j]] = g->inputs[i];
    }
  }
  int rc = ECG_OK, done = 0;
  for (size_t i = 0; rc == ECG_OK && i < g->n_nodes; i++) {
    ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_node_op(n);
    int x = n->n_inputs > 0 ? n->inputs[0] : -1, y = n->n_outputs > 0 ? n->outputs[0] : -1;
    for (size_t k = 1; k < n->n_outputs; k++) /* a control-flow node's optional output and its flag */
      if (flag_after(g, n->outputs, n->n_outputs, k) && (size_t)n->outputs[k - 1] < nt) present[n->outputs[k - 1]] = n->outputs[k];
    if (op && (op->props & ECG_PROP_SEQ_PASS) && x >= 0 && y >= 0 && (size_t)x < nt && (size_t)y < nt) {
      present[y] = present[x]; /* an Identity of an optional is that optional */
      continue;
    }
    if (!op || op->infer != ecg_infer_optional) continue;
    char nm[512];
    int src = -1;
    if (y < 0) continue; /* no output: nothing reads it */
    if (op->id == ECG_OP_Optional) {
      snprintf(nm, sizeof nm, "%s" ECG_OPTIONAL_PRESENT "_const", g->tensors[y]->name);
      int p = const_bool(g, nm, x >= 0);
      if (x < 0) { /* the empty optional of the node's type */
        if (p < 0 || grow(&present, &nt, g->n_tensors)) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
        if ((rc = empty_element(g, n, e)) != ECG_OK) break;
        if (grow(&present, &nt, g->n_tensors)) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
        present[y] = p;
        done++;
        continue;
      }
      if (p < 0 || grow(&present, &nt, g->n_tensors)) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      present[y] = p;
      src = x;
      /* the optional of a run-time sequence (a graph output): its element is that sequence */
      if (g->tensors[y]->sequence && (size_t)x < nt) g->tensors[x]->sequence = true;
    } else if (op->id == ECG_OP_OptionalHasElement) {
      if (x >= 0 && present[x] >= 0) src = present[x];
      else { /* a plain tensor is present (opset 18); an omitted input is not */
        snprintf(nm, sizeof nm, "%s_const", g->tensors[y]->name);
        src = const_bool(g, nm, x >= 0);
        if (src < 0 || grow(&present, &nt, g->n_tensors)) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      }
    } else { /* OptionalGetElement: the element (an optional or a plain tensor) */
      if (x < 0) { rc = ecg_infer_optional(g, n, e); break; }
      src = x;
    }
    if (to_identity(n, src)) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    done++;
  }
  /* an optional graph output V: its flag output V:present becomes an Identity of the flag of
   * the optional V is (an optional graph input's, or Optional(x)'s constant true) */
  int *prod = rc == ECG_OK ? malloc(sizeof(int) * (g->n_tensors + 1)) : NULL;
  if (rc == ECG_OK && !prod) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (prod) ecg_producers(g, prod);
  size_t n_out = g->n_outputs;
  for (size_t k = 0; rc == ECG_OK && k < n_out; k++) {
    if (!flag_output(g, k, prod)) continue;
    int v = g->outputs[k - 1], f = g->outputs[k];
    int src = (size_t)v < nt ? present[v] : -1;
    if (src < 0) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "graph output '%s' is an optional value whose presence is not known (supported: an "
                                      "optional graph input passed through, or Optional(x))", g->tensors[v]->name);
      break;
    }
    char nm[512];
    snprintf(nm, sizeof nm, "%s_flag", g->tensors[f]->name);
    if (ecg_add_node(g, nm, "Identity", "", g->opset, 1, &src, 1, &f) < 0) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  free(prod);
  free(present);
  if (rc == ECG_OK && n_resolved) *n_resolved = done;
  return rc;
}
