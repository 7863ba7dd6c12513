/* libecg: the operator registry (ops.def), shape propagation and constant folding.
 * DNNFusion §3.3 (ECG, mapping types, Table 3.2); SOD² §5.3 (static shape propagation,
 * constant folding of shape subgraphs). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"

static const ecg_op_info REGISTRY[] = {
#define ECG_OP(id, onnx, mapping, props, since, infer, flops, eval, dyn, rdp)                     \
  {ECG_OP_##id, onnx, mapping, props, since, infer, flops, eval, dyn, rdp},
#include "ops.def"
#undef ECG_OP
};
_Static_assert(sizeof REGISTRY / sizeof *REGISTRY == ECG_OP_COUNT,
               "ops.def row count and registry size differ");

const ecg_op_info *ecg_op_get(ecg_op_id id) {
  return id >= 0 && id < ECG_OP_COUNT ? &REGISTRY[id] : NULL;
}

bool ecg_op_foldable(const ecg_op_info *op) { return op && op->eval != ecg_eval_none; }

/* Rows of ops.def that belong to a domain other than the default ai.onnx (every row
 * not listed here is ai.onnx).  Their since column counts that domain's opsets. */
static const struct {
  ecg_op_id id;
  const char *domain;
} OP_DOMAINS[] = {
    {ECG_OP_Adagrad, "ai.onnx.preview.training"},
    {ECG_OP_Momentum, "ai.onnx.preview.training"},
    {ECG_OP_Adam, "ai.onnx.preview.training"},
};

/* Schema versions per operator (op_versions.def): ONNX's history and the implemented
 * subset, each a 0-terminated ascending list; rows absent there are {NULL, NULL}. */
static const struct {
  const unsigned char *onnx, *impl;
} OP_VERSIONS[ECG_OP_COUNT] = {
#define ECG_OPV(id, onnx, impl) [ECG_OP_##id] = {onnx, impl},
#include "op_versions.def"
#undef ECG_OPV
};

/* Whether 0-terminated list l holds v. */
static bool list_has(const unsigned char *l, int v) {
  for (; l && *l; l++)
    if (*l == v) return true;
  return false;
}

int ecg_op_schema_version(ecg_op_id id, int64_t opset, bool *implemented) {
  const ecg_op_info *op = ecg_op_get(id);
  bool impl = false;
  int v = 0;
  if (op && OP_VERSIONS[id].onnx) {
    for (const unsigned char *l = OP_VERSIONS[id].onnx; *l; l++)
      if (*l <= opset) v = *l;
    impl = v > 0 && list_has(OP_VERSIONS[id].impl, v);
  } else if (op && opset >= op->since) { /* no version row: since column through opset 17 */
    v = opset < 255 ? (int)opset : 255;
    impl = opset <= 17;
  }
  if (implemented) *implemented = impl;
  return v;
}

int ecg_op_versions(ecg_op_id id, bool implemented, char *buf, size_t size) {
  if (size) buf[0] = 0;
  const ecg_op_info *op = ecg_op_get(id);
  if (!op || !size) return 0;
  const unsigned char *l = OP_VERSIONS[id].onnx ? (implemented ? OP_VERSIONS[id].impl : OP_VERSIONS[id].onnx) : NULL;
  int n = 0;
  size_t at = 0;
  if (!l) { /* no version row: the since column only */
    snprintf(buf, size, "%d", op->since);
    return 1;
  }
  for (; *l; l++, n++) {
    int w = snprintf(buf + at, size - at, "%s%d", n ? "," : "", *l);
    if (w < 0 || (size_t)w >= size - at) break;
    at += (size_t)w;
  }
  return n;
}

const char *ecg_op_domain(ecg_op_id id) {
  for (size_t k = 0; k < sizeof OP_DOMAINS / sizeof *OP_DOMAINS; k++)
    if (OP_DOMAINS[k].id == id) return OP_DOMAINS[k].domain;
  return "";
}

const ecg_op_info *ecg_op_lookup(const char *op_type, const char *domain) {
  if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
  for (int i = 0; i < ECG_OP_COUNT; i++)
    if (strcmp(REGISTRY[i].name, op_type) == 0 && strcmp(ecg_op_domain((ecg_op_id)i), domain) == 0)
      return &REGISTRY[i];
  return NULL;
}

const ecg_op_info *ecg_node_op(const ecg_node *n) { return ecg_op_lookup(n->op_type, n->domain); }

const char *ecg_mapping_name(int mapping) {
  switch (mapping) {
  case ECG_MAP_ONE_TO_ONE: return "One-to-One";
  case ECG_MAP_ONE_TO_MANY: return "One-to-Many";
  case ECG_MAP_MANY_TO_MANY: return "Many-to-Many";
  case ECG_MAP_REORGANIZE: return "Reorganize";
  case ECG_MAP_SHUFFLE: return "Shuffle";
  default: return "unknown";
  }
}

int ecg_node_errf(ecg_err *e, const ecg_graph *g, const ecg_node *n, const char *fmt, ...) {
  if (!e) return ECG_ERR_INPUT;
  char lb[256], msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): %s", ecg_node_label(g, n, lb, sizeof lb),
                  n->op_type, msg);
}

void *ecg_alloc_output_data(ecg_graph *g, ecg_node *n, int i) {
  ecg_tensor *t = ecg_node_output(g, n, i);
  if (!t) return NULL;
  int64_t numel = ecg_tensor_numel(t);
  size_t es = ecg_dtype_size(t->dtype);
  if (numel < 0 || es == 0) return NULL;
  size_t nb = (size_t)numel * es;
  void *buf = calloc(nb ? nb : 1, 1);
  if (!buf) return NULL;
  free(t->data.data);
  t->data.data = buf;
  t->data.len = nb;
  t->is_const = true;
  return buf;
}

int ecg_const_ints(const ecg_tensor *t, int64_t *vals, int max) {
  if (!t || !t->is_const) return -1;
  int64_t n = ecg_tensor_numel(t);
  if (n < 0 || n > max) return -1;
  for (int64_t i = 0; i < n; i++) vals[i] = ecg_const_i64(t, i);
  return (int)n;
}

int ecg_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int64_t *out) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - ra), ib = i - (r - rb);
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == db) out[i] = da;
    else if (da == 1) out[i] = db;
    else if (db == 1) out[i] = da;
    else if (da < 0) out[i] = db;   /* symbolic vs known: the known one must be it */
    else if (db < 0) out[i] = da;
    else return -1;
  }
  return r;
}

int ecg_bcast_dims(const ecg_graph *g, const ecg_node *n, int i, int64_t *dims) {
  const ecg_tensor *t = ecg_node_input(g, n, i), *a = ecg_node_input(g, n, 0);
  if (!t) return -1;
  int r = ecg_tensor_dims(t, dims);
  if (i != 1 || !a || r < 0 || n->opset <= 0 || n->opset >= 7) return r;
  int64_t ad[ECG_MAX_RANK];
  int ra = ecg_tensor_dims(a, ad), axis = -1;
  const ecg_op_info *op = ecg_node_op(n);
  if (op && op->id == ECG_OP_PRelu) {
    if (r == 1 && ra >= 2 && dims[0] == ad[1] && dims[0] != 1) axis = 1;
  } else if (ecg_attr_i(n, "broadcast", 0) && ecg_attr_find(n, "axis")) {
    int64_t ax = ecg_attr_i(n, "axis", 0);
    axis = (int)(ax < 0 ? ax + ra : ax);
  }
  if (axis < 0 || ra < 0 || axis + r > ra || ra > ECG_MAX_RANK) return r;
  for (int k = r; k < ra - axis; k++) dims[k] = 1;
  return ra - axis;
}

int ecg_set_output(ecg_graph *g, ecg_node *n, int i, int dtype, int rank, const int64_t *dims,
                   const ecg_tensor *like) {
  ecg_tensor *t = ecg_node_output(g, n, i);
  if (!t) return ECG_OK; /* omitted optional output */
  const char *syms[ECG_MAX_RANK] = {0};
  if (rank > ECG_MAX_RANK) return ecg_node_errf(NULL, g, n, "rank too large");
  if (like && like->shape_known) {
    int lr = (int)like->n_dims;
    for (int k = 0; k < rank; k++) {
      int lk = k - (rank - lr);
      if (dims[k] < 0 && lk >= 0 && like->dims[lk]->value < 0) syms[k] = like->dims[lk]->symbol;
    }
  }
  t->dtype = dtype;
  return ecg_tensor_refine_shape(t, rank, dims, syms);
}

/* ECG_ERR_INPUT when an inferred output of n has more than ECG_MAX_ELEMENTS elements
 * (format/ECG.md "Limits"): such a shape cannot be allocated or lowered, and its byte
 * size could overflow later arithmetic. */
static int check_output_sizes(const ecg_graph *g, const ecg_node *n, ecg_err *e) {
  for (size_t k = 0; k < n->n_outputs; k++) {
    const ecg_tensor *t = ecg_node_output(g, n, (int)k);
    if (!t) continue;
    int64_t numel = ecg_tensor_numel(t);
    if (numel > ECG_MAX_ELEMENTS) {
      char sb[256], cnt[32];
      if (numel == INT64_MAX) snprintf(cnt, sizeof cnt, "more than 2^63");
      else snprintf(cnt, sizeof cnt, "%lld", (long long)numel);
      return ecg_node_errf(e, g, n, "output '%s' would have %s elements (shape %s), more than the limit of 2^40",
                           t->name, cnt, ecg_shape_str(t, sb, sizeof sb));
    }
  }
  return ECG_OK;
}

/* Infer node n (op its registry row): inputs of unknown rank refused, a run-time sequence
 * read only by a sequence operator or passed through by an ECG_PROP_SEQ_PASS one (format/ECG.md
 * "Sequences"), the output sizes checked, the mapping type set. */
static int infer_one(ecg_graph *g, ecg_node *n, const ecg_op_info *op, ecg_err *e) {
  const ecg_tensor *seq = NULL;
  for (size_t k = 0; k < n->n_inputs; k++) {
    const ecg_tensor *t = ecg_node_input(g, n, (int)k);
    if (t && t->sequence) { if (!seq) seq = t; continue; } /* its elements' shape may be unknown */
    if (t && !t->shape_known)
      return ecg_node_errf(e, g, n, "input '%s' has unknown rank", t->name);
  }
  if (seq && op->infer != ecg_infer_sequence && !(op->props & ECG_PROP_CONTROL)) { /* control flow: its own checks */
    ecg_tensor *y = ecg_node_output(g, n, 0);
    if (!(op->props & ECG_PROP_SEQ_PASS) || n->n_outputs != 1 || !y || ecg_node_input(g, n, 0) != seq)
      return ecg_node_errf(e, g, n, "input '%s' is a run-time sequence, which only the sequence operators and Identity take",
                           seq->name);
    ECG_TRY(ecg_sequence_like(y, seq, e));
  } else {
    ECG_TRY(op->infer(g, n, e));
    ECG_TRY(check_output_sizes(g, n, e));
  }
  n->mapping_type = (Ecg__MappingType)op->mapping;
  return ECG_OK;
}

int ecg_infer_shapes(ecg_graph *g, ecg_err *e) {
  ECG_TRY(ecg_topo_sort(g, e));
  for (size_t i = 0; i < g->n_nodes; i++) {
    ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_node_op(n);
    if (!op) return ecg_node_errf(e, g, n, "unsupported operator (domain '%s', opset %lld)", n->domain, (long long)n->opset);
    ECG_TRY(infer_one(g, n, op, e));
  }
  return ECG_OK;
}

/* Bytes of all outputs of n (static shapes assumed by the caller; each output within
 * ECG_MAX_ELEMENTS after check_output_sizes, so the sum cannot overflow). */
static size_t output_bytes(const ecg_graph *g, const ecg_node *n) {
  size_t total = 0;
  for (size_t k = 0; k < n->n_outputs; k++) {
    const ecg_tensor *t = ecg_node_output(g, n, (int)k);
    if (t) total += (size_t)ecg_tensor_numel(t) * ecg_dtype_size(t->dtype);
  }
  return total;
}

/* An eval that failed may have allocated some outputs: make them plain values again. */
static void unfold_outputs(ecg_graph *g, ecg_node *n) {
  for (size_t k = 0; k < n->n_outputs; k++) {
    ecg_tensor *t = ecg_node_output(g, n, (int)k);
    if (!t || !t->is_const) continue;
    free(t->data.data);
    t->data.data = NULL;
    t->data.len = 0;
    t->is_const = false;
  }
}

int ecg_fold_constants(ecg_graph *g, int *n_folded, ecg_err *e) {
  return ecg_fold_constants_limit(g, ECG_FOLD_MAX_BYTES, n_folded, e);
}

/* The fold running on this thread (its size limit), 0: none. */
static _Thread_local size_t fold_limit;

size_t ecg_fold_active_limit(void) { return fold_limit; }

static int fold_constants(ecg_graph *g, size_t max_bytes, int *n_folded, ecg_err *e);

/* Partial-shape fold: node n (op, ECG_PROP_MOVE) reads as input 0 the output of a shape node
 * s (ECG_PROP_SHAPE) over a tensor x whose rank is known but not every dim, its other
 * inputs are constants and its outputs static: Gather(Shape(x), i) of a dim that is known,
 * the rank check of an exported torch.squeeze(dim), which decides an If before RDP runs.
 * n moves elements and does no arithmetic on them, so it is evaluated at two bindings of
 * x's unknown dims to distinct large numbers: where both give the same outputs, no output
 * element is an unknown dim, and n folds to them (a dim's value stands in only for the
 * evaluation; x keeps its symbols). True when n was folded (its outputs constants).
 * producer: ecg_producers' array of g. */
static bool fold_partial_shape(ecg_graph *g, ecg_node *n, const ecg_op_info *op, const int *producer) {
  if (!(op->props & ECG_PROP_MOVE) || n->n_inputs == 0 || n->n_outputs != 1) return false;
  ecg_tensor *t0 = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  if (!t0 || t0->is_const || !y || !ecg_tensor_static(y) || ecg_tensor_numel(y) > ECG_MAX_RANK) return false;
  for (size_t k = 1; k < n->n_inputs; k++) {
    const ecg_tensor *t = ecg_node_input(g, n, (int)k);
    if (t && !t->is_const) return false;
  }
  int pi = producer[n->inputs[0]];
  if (pi < 0) return false;
  ecg_node *s = g->nodes[pi];
  const ecg_op_info *sop = ecg_node_op(s);
  ecg_tensor *x = s->n_inputs ? ecg_node_input(g, s, 0) : NULL;
  if (!sop || !(sop->props & ECG_PROP_SHAPE) || s->n_outputs != 1 || !x || !x->shape_known || x->sequence) return false;
  size_t bytes = (size_t)ecg_tensor_numel(y) * ecg_dtype_size(y->dtype);
  unsigned char first[ECG_MAX_RANK * 8];
  bool same = true;
  for (int p = 0; p < 2 && same; p++) {
    int64_t saved[ECG_MAX_RANK];
    for (size_t i = 0; i < x->n_dims; i++) {
      saved[i] = x->dims[i]->value;
      if (saved[i] < 0) x->dims[i]->value = (p ? 2000003 : 1000003) + (int64_t)i;
    }
    ecg_err ignore;
    bool ok = sop->eval(g, s, &ignore) == ECG_OK && op->eval(g, n, &ignore) == ECG_OK && y->data.data && y->data.len >= bytes;
    for (size_t i = 0; i < x->n_dims; i++) x->dims[i]->value = saved[i];
    unfold_outputs(g, s);
    if (ok && p == 0) memcpy(first, y->data.data, bytes);
    else if (ok) same = !memcmp(first, y->data.data, bytes);
    if (!ok || p == 0) unfold_outputs(g, n);
    if (!ok) return false;
  }
  if (!same) unfold_outputs(g, n);
  return same;
}

int ecg_fold_constants_limit(ecg_graph *g, size_t max_bytes, int *n_folded, ecg_err *e) {
  size_t saved = fold_limit;
  fold_limit = max_bytes ? max_bytes : 1;
  int rc = fold_constants(g, max_bytes, n_folded, e);
  fold_limit = saved;
  return rc;
}

static int fold_constants(ecg_graph *g, size_t max_bytes, int *n_folded, ecg_err *e) {
  ECG_TRY(ecg_topo_sort(g, e));
  int folded = 0;
  bool *keep = malloc(sizeof(bool) * (g->n_nodes + 1));
  int *producer = malloc(sizeof(int) * (g->n_tensors + 1));
  if (!keep || !producer) {
    free(keep);
    free(producer);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  ecg_producers(g, producer);
  int rc = ECG_OK;
  /* One pass in topological order: infer each node's outputs from (possibly newly
   * folded) inputs, then fold it when it can be evaluated. */
  for (size_t i = 0; i < g->n_nodes; i++) {
    ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_node_op(n);
    keep[i] = true;
    if (!op) { rc = ecg_node_errf(e, g, n, "unsupported operator"); break; }
    if ((rc = infer_one(g, n, op, e)) != ECG_OK) break;
    if (op->eval == ecg_eval_none) continue;
    bool ready = true;
    if (op->props & ECG_PROP_SHAPE) {
      const ecg_tensor *t = ecg_node_input(g, n, 0);
      ready = t && ecg_tensor_static(t);
    } else {
      for (size_t k = 0; k < n->n_inputs && ready; k++) {
        const ecg_tensor *t = ecg_node_input(g, n, (int)k);
        if (t && !t->is_const) ready = false;
      }
    }
    for (size_t k = 0; k < n->n_outputs && ready; k++) {
      const ecg_tensor *t = ecg_node_output(g, n, (int)k);
      if (t && !ecg_tensor_static(t)) ready = false;
    }
    if (!ready) {
      if (fold_partial_shape(g, n, op, producer)) {
        keep[i] = false;
        folded++;
      }
      continue;
    }
    if (output_bytes(g, n) > max_bytes) continue;
    ecg_err ignore;
    if (op->eval(g, n, &ignore) != ECG_OK) { /* dtype not handled: keep the node */
      unfold_outputs(g, n);
      continue;
    }
    keep[i] = false;
    folded++;
  }
  if (rc == ECG_OK && ecg_compact(g, keep, NULL) != ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  free(keep);
  free(producer);
  if (rc == ECG_OK && n_folded) *n_folded = folded;
  return rc;
}
