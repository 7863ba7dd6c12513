/* The scalar-expression view of One-to-One operators and its constant folding
 * (format/scalar.h; the expressions are format/ops/scalar.def). */
#include <math.h>
#include <string.h>

#include "../ecg_scalar.h"
#include "../scalar.h"
#include "ops_common.h"

/* Rows as text: the arguments pass through one more macro so that the helper macros of
 * scalar.def (UI_ADD, ...) are expanded before they are turned into strings. */
#define ROW_(Id, dom, an, ad, bn, bd, F, I, V, FF, FI) {ECG_OP_##Id, dom, an, bn, ad, bd, #F, #I, V, #FF, #FI},
#define ECG_SCALAR(Id, dom, an, ad, bn, bd, F, I) ROW_(Id, dom, an, ad, bn, bd, F, I, 0, x0, x0)
#define ECG_SCALAR_VARIADIC(Id, F, I, FF, FI) ROW_(Id, 0, "", 0, "", 0, F, I, 1, FF, FI)
static const ecg_scalar_row ROWS[] = {
#include "scalar.def"
};
#undef ECG_SCALAR
#undef ECG_SCALAR_VARIADIC
#undef ROW_

const ecg_scalar_row *ecg_scalar_row_of(ecg_op_id id) {
  for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++)
    if (ROWS[i].id == id) return &ROWS[i];
  return NULL;
}

/* An attribute spec of a row: "name" (float or int attribute) or "name=VALUE" (1 when
 * the string attribute equals VALUE). */
static double attr_value(const ecg_node *n, const char *spec, double def) {
  if (!spec || !spec[0]) return def;
  const char *eq = strchr(spec, '=');
  char name[64];
  size_t len = eq ? (size_t)(eq - spec) : strlen(spec);
  if (len >= sizeof name) return def;
  memcpy(name, spec, len);
  name[len] = 0;
  const ecg_attr *at = ecg_attr_find(n, name);
  if (!at) return def;
  if (eq) {
    char buf[64];
    return strcmp(ecg_attr_s(n, name, "", buf, sizeof buf), eq + 1) == 0;
  }
  if (at->type == 2 /* INT */) return (double)at->i;
  return at->f;
}

int ecg_scalar_view_of(const ecg_graph *g, const ecg_node *n, ecg_scalar_view *v, ecg_err *e) {
  const ecg_op_info *op = ecg_node_op(n);
  memset(v, 0, sizeof *v);
  v->row = op ? ecg_scalar_row_of(op->id) : NULL;
  if (!v->row) return ecg_node_errf(e, g, n, "not a scalar (One-to-One) expression");
  if (n->n_outputs < 1 || !ecg_node_output(g, n, 0)) return ecg_node_errf(e, g, n, "no output");
  if (op->id == ECG_OP_BatchNormalization &&
      (ecg_attr_i(n, "training_mode", 0) || (n->n_outputs > 1 && n->outputs[1] >= 0) || (n->n_outputs > 2 && n->outputs[2] >= 0)))
    return ecg_node_errf(e, g, n, "training mode is not a scalar expression");
  if (n->n_inputs > ECG_SCALAR_MAX_OPERANDS)
    return ecg_node_errf(e, g, n, "more than %d inputs", ECG_SCALAR_MAX_OPERANDS);
  const ecg_tensor *y = ecg_node_output(g, n, 0);
  int64_t od[ECG_MAX_RANK];
  int orank = ecg_tensor_dims(y, od);
  int nin = (int)n->n_inputs;
  if (op->id == ECG_OP_Clip) nin = 3; /* x, min, max */
  for (int k = 0; k < nin; k++) {
    const ecg_tensor *t = k < (int)n->n_inputs ? ecg_node_input(g, n, k) : NULL;
    v->same_as[k] = -1;
    if (!t) {
      if (k == 0 || op->id != ECG_OP_Clip) return ecg_node_errf(e, g, n, "input %d is missing", k);
      /* Clip: opset < 11 bounds are attributes; an absent bound is x itself */
      const char *an = k == 1 ? "min" : "max";
      v->input[k] = -1;
      if (ecg_attr_find(n, an)) v->cval[k] = ecg_attr_f(n, an, 0);
      else v->same_as[k] = 0;
      v->rank[k] = 0;
      continue;
    }
    v->input[k] = k;
    if (op->id == ECG_OP_BatchNormalization && k > 0) {
      /* per-channel [C] viewed as [C, 1, ..., 1] against [N, C, ...] */
      int64_t cd[ECG_MAX_RANK];
      if (ecg_tensor_dims(t, cd) != 1 || orank < 2) return ecg_node_errf(e, g, n, "parameter %d must be [C]", k);
      v->rank[k] = orank - 1;
      for (int d = 0; d < orank - 1; d++) v->dims[k][d] = d == 0 ? cd[0] : 1;
    } else {
      v->rank[k] = ecg_bcast_dims(g, n, k, v->dims[k]); /* legacy axis broadcast included */
      if (v->rank[k] < 0) return ecg_node_errf(e, g, n, "input %d has an unknown shape", k);
    }
  }
  v->n_operands = nin;
  const ecg_tensor *dom = ecg_node_input(g, n, v->row->dom);
  if (!dom) return ecg_node_errf(e, g, n, "input %d is missing", v->row->dom);
  v->dom_dtype = dom->dtype;
  v->out_dtype = y->dtype;
  v->isf = ecg_dtype_is_float(dom->dtype);
  /* Cast to bfloat16 truncates the float32 value (ONNX's reference Cast; scalar.h) */
  v->narrow_bf16 = op->id == ECG_OP_Cast && y->dtype == ECG_BFLOAT16 && v->isf && dom->dtype != ECG_BFLOAT16;
  const char *x = v->isf ? v->row->fexpr : v->row->iexpr;
  if (!strcmp(x, "NOFLOAT") || !strcmp(x, "NOINT"))
    return ecg_node_errf(e, g, n, "dtype %s is not supported by this operator", ecg_dtype_name(dom->dtype));
  v->a = attr_value(n, v->row->a_attr, v->row->a_def);
  v->b = attr_value(n, v->row->b_attr, v->row->b_def);
  (void)orank;
  return ECG_OK;
}

bool ecg_is_scalar_node(const ecg_graph *g, const ecg_node *n) {
  ecg_scalar_view v;
  return ecg_scalar_view_of(g, n, &v, NULL) == ECG_OK;
}

/* The expressions compiled for folding: scalar_eval.inc instantiated once with T = double
 * (float expressions) and once with T = int64_t (integer expressions). */
#define NOFLOAT (ok = false, (T)0)
#define NOINT (ok = false, (T)0)
#define EVAL_T double
#define EVAL_SEL(F, I) F
#define EVAL_NAME eval_f
#define FOLD_NAME fold_f
#include "scalar_eval.inc"
#define EVAL_T int64_t
#define EVAL_SEL(F, I) I
#define EVAL_NAME eval_i
#define FOLD_NAME fold_i
#include "scalar_eval.inc"
#undef NOFLOAT
#undef NOINT

bool ecg_scalar_eval1(const ecg_scalar_view *v, const double *xf, const int64_t *xi, double *yf, int64_t *yi) {
  const ecg_scalar_row *row = v->row;
  double fx[ECG_SCALAR_MAX_OPERANDS] = {0};
  int64_t ix[ECG_SCALAR_MAX_OPERANDS] = {0};
  for (int k = 0; k < v->n_operands; k++) {
    if (v->input[k] >= 0) { fx[k] = xf[k]; ix[k] = xi[k]; }
    else if (v->same_as[k] >= 0) { fx[k] = xf[v->same_as[k]]; ix[k] = xi[v->same_as[k]]; }
    else { fx[k] = v->cval[k]; ix[k] = (int64_t)v->cval[k]; }
  }
  if (!row->variadic) return v->isf ? eval_f(row->id, fx, v->a, v->b, yf) : eval_i(row->id, ix, v->a, v->b, yi);
  bool ok = true;
  if (v->isf) {
    double acc = fx[0];
    for (int k = 1; k < v->n_operands && ok; k++) ok = fold_f(row->id, 0, acc, fx[k], v->n_operands, &acc);
    if (ok) ok = fold_f(row->id, 1, acc, 0, v->n_operands, &acc);
    *yf = acc;
  } else {
    int64_t acc = ix[0];
    for (int k = 1; k < v->n_operands && ok; k++) ok = fold_i(row->id, 0, acc, ix[k], v->n_operands, &acc);
    if (ok) ok = fold_i(row->id, 1, acc, 0, v->n_operands, &acc);
    *yi = acc;
  }
  return ok;
}

/* Float to int64 conversion that never overflows (NaN -> 0, saturating). */
static int64_t f2i(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

int ecg_eval_scalar(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_scalar_view v;
  ECG_TRY(ecg_scalar_view_of(g, n, &v, e));
  ecg_tensor *out = ecg_node_output(g, n, 0);
  if (!ops_fold_dtype(out->dtype)) return ecg_node_errf(e, g, n, "dtype %s not handled", ecg_dtype_name(out->dtype));
  int64_t od[ECG_MAX_RANK], st[ECG_SCALAR_MAX_OPERANDS][ECG_MAX_RANK], off[ECG_SCALAR_MAX_OPERANDS] = {0};
  int64_t idx[ECG_MAX_RANK] = {0};
  const ecg_tensor *in[ECG_SCALAR_MAX_OPERANDS] = {0};
  int r = ecg_tensor_dims(out, od);
  if (r < 0) return ecg_node_errf(e, g, n, "output shape unknown");
  for (int k = 0; k < v.n_operands; k++) {
    if (v.input[k] < 0) continue;
    in[k] = ecg_node_input(g, n, v.input[k]);
    if (!in[k] || !in[k]->is_const || !ops_fold_dtype(in[k]->dtype))
      return ecg_node_errf(e, g, n, "input %d is not a foldable constant", k);
    int64_t s[ECG_MAX_RANK];
    ops_strides(v.dims[k], v.rank[k], s);
    for (int j = 0; j < r; j++) {
      int jk = j - (r - v.rank[k]);
      st[k][j] = jk >= 0 && v.dims[k][jk] != 1 ? s[jk] : 0;
    }
  }
  void *buf;
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  int64_t numel = ops_prod(od, r);
  for (int64_t p = 0; p < numel; p++) {
    double xf[ECG_SCALAR_MAX_OPERANDS] = {0}, yf = 0;
    int64_t xi[ECG_SCALAR_MAX_OPERANDS] = {0}, yi = 0;
    for (int k = 0; k < v.n_operands; k++) {
      if (!in[k]) continue;
      xf[k] = ecg_const_f64(in[k], off[k]);
      xi[k] = ecg_dtype_is_float(in[k]->dtype) ? f2i(xf[k]) : ecg_const_i64(in[k], off[k]);
    }
    if (!ecg_scalar_eval1(&v, xf, xi, &yf, &yi)) {
      ops_unfold(g, n, 0);
      return ecg_node_errf(e, g, n, "cannot fold (dtype %s)", ecg_dtype_name(v.dom_dtype));
    }
    if (v.narrow_bf16) yf = ecg_bf16_trunc(yf);
    if (!v.isf) ecg_store_i64(buf, out->dtype, p, yi);
    else if (ecg_dtype_is_float(out->dtype) || out->dtype == ECG_BOOL) ecg_store_f64(buf, out->dtype, p, yf);
    else ecg_store_i64(buf, out->dtype, p, f2i(yf));
    for (int j = r - 1; j >= 0; j--) {
      for (int k = 0; k < v.n_operands; k++) off[k] += in[k] ? st[k][j] : 0;
      if (++idx[j] < od[j]) break;
      for (int k = 0; k < v.n_operands; k++) off[k] -= in[k] ? st[k][j] * od[j] : 0;
      idx[j] = 0;
    }
  }
  return ECG_OK;
}
