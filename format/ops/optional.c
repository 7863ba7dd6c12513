/* Optional values (ONNX Optional, OptionalHasElement, OptionalGetElement; issue 9 item 4)
 * with a static element type and shape.
 *
 * An optional value is an element tensor and a presence flag. The ECG keeps the pair as two
 * tensors: an optional graph input V (type optional(tensor)) becomes two graph inputs, V
 * (the element, with the declared dtype and shape) and V:present (bool scalar,
 * ECG_OPTIONAL_PRESENT), which the caller fills (ecg-bench reads an ONNX OptionalProto into
 * both); Optional(x) is x with a constant true flag. ecg_resolve_optionals then replaces the
 * operators while the graph is imported: OptionalGetElement by an Identity of the element,
 * OptionalHasElement by an Identity of the flag (a constant true for a plain tensor input,
 * opset 18; false for an omitted input), Optional(x) by an Identity of x. What cannot be
 * resolved (an empty Optional constructor, whose element type is a TypeProto attribute; an
 * optional crossing a subgraph boundary or a graph output; an optional of a sequence) is
 * refused naming the node. Reading the element of an empty optional is an error in ONNX;
 * here it reads the element buffer as the caller filled it (ecg-bench: zeros). */
#include <stdio.h>

#include "ops_common.h"

/* Every optional operator's shape function: reached only by a node that
 * ecg_resolve_optionals could not replace. */
int ecg_infer_optional(ecg_graph *g, ecg_node *n, ecg_err *e) {
  return ecg_node_errf(e, g, n, "optional values are supported only as graph inputs of a tensor type and values built by "
                                "Optional(x) (no empty Optional constructor, no optional graph output, no optional crossing "
                                "a subgraph boundary)");
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

int ecg_resolve_optionals(ecg_graph *g, int *n_resolved, ecg_err *e) {
  if (n_resolved) *n_resolved = 0;
  bool any = false;
  for (size_t i = 0; i < g->n_nodes && !any; i++) {
    const ecg_op_info *op = ecg_node_op(g->nodes[i]);
    any = op && op->infer == ecg_infer_optional;
  }
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
    if (!op || op->infer != ecg_infer_optional) continue;
    int x = n->n_inputs > 0 ? n->inputs[0] : -1, y = n->n_outputs > 0 ? n->outputs[0] : -1;
    char nm[512];
    int src = -1;
    if (y < 0) continue; /* no output: nothing reads it */
    if (op->id == ECG_OP_Optional) {
      if (x < 0) { rc = ecg_infer_optional(g, n, e); break; }
      snprintf(nm, sizeof nm, "%s" ECG_OPTIONAL_PRESENT, g->tensors[y]->name);
      int p = const_bool(g, nm, true);
      if (p < 0 || grow(&present, &nt, g->n_tensors)) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      present[y] = p;
      src = x;
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
  /* an optional that reaches a graph output: its flag would be lost */
  for (size_t i = 0; rc == ECG_OK && i < g->n_outputs; i++)
    if (g->outputs[i] >= 0 && (size_t)g->outputs[i] < nt && present[g->outputs[i]] >= 0 && !g->tensors[g->outputs[i]]->is_const) {
      bool is_in = false;
      for (size_t j = 0; j < g->n_inputs; j++) is_in |= g->inputs[j] == g->outputs[i];
      if (!is_in)
        rc = ecg_errf(e, ECG_ERR_INPUT, "graph output '%s' is an optional value (not supported)", g->tensors[g->outputs[i]]->name);
    }
  free(present);
  if (rc == ECG_OK && n_resolved) *n_resolved = done;
  return rc;
}
