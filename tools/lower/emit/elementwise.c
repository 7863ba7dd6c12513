/* Emitters for One-to-One operators (DNNFusion Table 3.2): each is a scalar C
 * expression of its inputs; one broadcasting loop skeleton (lw_loops) serves them all
 * (STYLE 12).  Expression templates: $0 $1 $2 = input values, $T = the output C type,
 * $a $b = float attributes chosen per op (see attrs_of).  Inputs broadcast with numpy
 * rules (ONNX Broadcasting.md). */
#include <stdlib.h>
#include <string.h>

#include "../lower.h"
#include "emit.h"

typedef struct { ecg_op_id id; const char *expr; } ew_row;

/* Unary, binary and ternary elementwise operators. */
static const ew_row EW[] = {
  {ECG_OP_Relu, "($0 > 0 ? $0 : ($T)0)"},
  {ECG_OP_Sigmoid, "(($T)1 / (($T)1 + ecg_exp(-$0)))"},
  {ECG_OP_Tanh, "tanh($0)"},
  {ECG_OP_Exp, "ecg_exp($0)"},
  {ECG_OP_Log, "log($0)"},
  {ECG_OP_Sqrt, "sqrt($0)"},
  {ECG_OP_Neg, "(-$0)"},
  {ECG_OP_Abs, "($0 < 0 ? -$0 : $0)"},
  {ECG_OP_Erf, "ecg_erf($0)"},
  {ECG_OP_Floor, "floor($0)"},
  {ECG_OP_Ceil, "ceil($0)"},
  {ECG_OP_Round, "nearbyint($0)"},
  {ECG_OP_Reciprocal, "(($T)1 / $0)"},
  {ECG_OP_Sin, "sin($0)"},
  {ECG_OP_Cos, "cos($0)"},
  {ECG_OP_Sign, "(($0 > 0) - ($0 < 0))"},
  {ECG_OP_Not, "(!$0)"},
  {ECG_OP_LeakyRelu, "($0 >= 0 ? $0 : ($T)$a * $0)"},
  {ECG_OP_Elu, "($0 >= 0 ? $0 : ($T)$a * (exp($0) - ($T)1))"},
  {ECG_OP_Selu, "($0 > 0 ? ($T)$b * $0 : ($T)$b * (($T)$a * exp($0) - ($T)$a))"},
  {ECG_OP_Softplus, "($0 > ($T)20 ? $0 : log1p(exp($0)))"},
  {ECG_OP_HardSigmoid, "fmax(($T)0, fmin(($T)1, ($T)$a * $0 + ($T)$b))"},
  {ECG_OP_HardSwish, "($0 * fmax(($T)0, fmin(($T)1, $0 * ($T)(1.0 / 6.0) + ($T)0.5)))"},
  {ECG_OP_Clip, "clip: see emit_elementwise"},
  {ECG_OP_Tan, "tan($0)"},
  {ECG_OP_Asin, "asin($0)"},
  {ECG_OP_Acos, "acos($0)"},
  {ECG_OP_Atan, "atan($0)"},
  {ECG_OP_Sinh, "sinh($0)"},
  {ECG_OP_Cosh, "cosh($0)"},
  {ECG_OP_Asinh, "asinh($0)"},
  {ECG_OP_Acosh, "acosh($0)"},
  {ECG_OP_Atanh, "atanh($0)"},
  {ECG_OP_Softsign, "($0 / (($T)1 + fabs($0)))"},
  {ECG_OP_ThresholdedRelu, "($0 > ($T)$a ? $0 : ($T)0)"},
  {ECG_OP_Shrink, "($0 < -($T)$a ? $0 + ($T)$b : ($0 > ($T)$a ? $0 - ($T)$b : ($T)0))"},
  {ECG_OP_Celu, "(fmax(0.0, (double)$0) + fmin(0.0, $a * expm1((double)$0 / $a)))"},
  {ECG_OP_IsNaN, "($0 != $0)"},
  {ECG_OP_IsInf, "(isinf($0) && ($0 > 0 ? $a != 0 : $b != 0))"},
  {ECG_OP_Cast, "(($T)$0)"},
  {ECG_OP_Identity, "$0"},
  {ECG_OP_Add, "($0 + $1)"},
  {ECG_OP_Sub, "($0 - $1)"},
  {ECG_OP_Mul, "($0 * $1)"},
  {ECG_OP_Div, "($0 / $1)"},
  {ECG_OP_Pow, "pow($0, $1)"},
  {ECG_OP_Mod, "ecg_mod($0, $1)"},
  {ECG_OP_PRelu, "($0 < 0 ? $1 * $0 : $0)"},
  {ECG_OP_Equal, "($0 == $1)"},
  {ECG_OP_Less, "($0 < $1)"},
  {ECG_OP_LessOrEqual, "($0 <= $1)"},
  {ECG_OP_Greater, "($0 > $1)"},
  {ECG_OP_GreaterOrEqual, "($0 >= $1)"},
  {ECG_OP_And, "($0 && $1)"},
  {ECG_OP_Or, "($0 || $1)"},
  {ECG_OP_Xor, "(!$0 != !$1)"},
  {ECG_OP_BitShift, "bitshift: see emit_elementwise"},
  {ECG_OP_Where, "($0 ? $1 : $2)"},
  {ECG_OP_BatchNormalization, "(($0 - $3) / sqrt($4 + ($T)$a) * $1 + $2)"},
};

static const char *expr_of(ecg_op_id id) {
  for (size_t i = 0; i < sizeof EW / sizeof *EW; i++)
    if (EW[i].id == id) return EW[i].expr;
  return NULL;
}

/* The float attributes $a and $b of an op, with ONNX defaults. */
static void attrs_of(const ecg_node *n, ecg_op_id id, double *a, double *b) {
  *a = *b = 0;
  switch (id) {
  case ECG_OP_LeakyRelu: *a = ecg_attr_f(n, "alpha", 0.01f); break;
  case ECG_OP_Elu: *a = ecg_attr_f(n, "alpha", 1.0f); break;
  case ECG_OP_Selu:
    *a = ecg_attr_f(n, "alpha", 1.67326319217681884765625f);
    *b = ecg_attr_f(n, "gamma", 1.05070102214813232421875f);
    break;
  case ECG_OP_HardSigmoid: *a = ecg_attr_f(n, "alpha", 0.2f); *b = ecg_attr_f(n, "beta", 0.5f); break;
  case ECG_OP_BatchNormalization: *a = ecg_attr_f(n, "epsilon", 1e-5f); break;
  case ECG_OP_ThresholdedRelu: *a = ecg_attr_f(n, "alpha", 1.0f); break;
  case ECG_OP_Shrink: *a = ecg_attr_f(n, "lambd", 0.5f); *b = ecg_attr_f(n, "bias", 0.0f); break;
  case ECG_OP_Celu: *a = ecg_attr_f(n, "alpha", 1.0f); break;
  case ECG_OP_IsInf:
    *a = (double)ecg_attr_i(n, "detect_positive", 1);
    *b = (double)ecg_attr_i(n, "detect_negative", 1);
    break;
  default: break;
  }
}

int lw_expand_expr(sbuf *out, const char *tmpl, const char *const *vals, int n_vals, const char *ctype,
                   double a, double b) {
  for (const char *p = tmpl; *p; p++) {
    if (*p != '$') { sb_printf(out, "%c", *p); continue; }
    char c = *++p;
    if (c >= '0' && c <= '9') {
      int k = c - '0';
      if (k >= n_vals) return -1;
      sb_printf(out, "%s", vals[k]);
    } else if (c == 'T') sb_printf(out, "%s", ctype);
    else if (c == 'a') sb_printf(out, "%.9g", a);
    else if (c == 'b') sb_printf(out, "%.9g", b);
    else return -1;
  }
  return 0;
}

/* "ecg_h2f(" / "ecg_bf2f(" for a 16-bit float operand, else "(". */
static const char *load_conv(const ecg_lower *L, int id) {
  int h = lw_half(L, id);
  return h == 1 ? "ecg_h2f(" : h == 2 ? "ecg_bf2f(" : "(";
}

int lw_emit_map(ecg_lower *L, int out_id, int n_in, const int *in_ids, int64_t in_dims[][ECG_MAX_RANK],
                const int *in_rank, const char *tmpl, double a, double b) {
  int64_t od[ECG_MAX_RANK], st[LW_MAX_OPS][ECG_MAX_RANK];
  int r = lw_dims(L, out_id, od);
  lw_strides(r, od, st[0]);
  char vals[LW_MAX_OPS][48];
  const char *vp[LW_MAX_OPS];
  /* Local restrict pointers: the memory plan never lets an output overlap a live input.
   * 16-bit floats are converted to float at load and back at store. */
  sb_printf(&L->code, "  {\n    %s *restrict p0 = %s;\n", lw_ctype(L, out_id), lw_ptr(L, out_id));
  for (int k = 0; k < n_in; k++) {
    lw_bcast_strides(r, od, in_rank[k], in_dims[k], st[k + 1]);
    sb_printf(&L->code, "    const %s *restrict p%d = %s;\n", lw_ctype(L, in_ids[k]), k + 1, lw_ptr(L, in_ids[k]));
    int64_t numel = 1;
    for (int d = 0; d < in_rank[k]; d++) numel *= in_dims[k][d];
    if (numel == 1) { /* a broadcast scalar: load once */
      sb_printf(&L->code, "    const %s s%d = %sp%d[0]);\n", lw_vtype(L, in_ids[k]), k + 1, load_conv(L, in_ids[k]), k + 1);
      snprintf(vals[k], sizeof vals[k], "s%d", k + 1);
    } else
      snprintf(vals[k], sizeof vals[k], "%sp%d[o%d])", load_conv(L, in_ids[k]), k + 1, k + 1);
    vp[k] = vals[k];
  }
  sbuf body = {0};
  int h = lw_half(L, out_id);
  sb_printf(&body, "p0[o0] = %s(%s)", h == 1 ? "ecg_f2h(" : h == 2 ? "ecg_f2bf(" : "", lw_vtype(L, out_id));
  if (lw_expand_expr(&body, tmpl, vp, n_in, lw_vtype(L, out_id), a, b) != 0) { sb_free(&body); return -1; }
  sb_printf(&body, "%s;", h ? ")" : "");
  lw_loops(L, r, od, n_in + 1, st, NULL, body.s, 1);
  sb_printf(&L->code, "  }\n");
  sb_free(&body);
  return 0;
}

/* Clip: min/max come from attributes (opset < 11) or optional scalar inputs; an empty
 * string means no bound on that side (integers without a bound are not clamped). */
static void clip_bounds(ecg_lower *L, const ecg_node *n, char *lo, char *hi, size_t sz) {
  const ecg_tensor *x = L->g->tensors[n->inputs[0]];
  int isf = ecg_dtype_is_float(x->dtype);
  const char *ct = lw_vtype(L, n->inputs[0]);
  lo[0] = hi[0] = 0;
  if (ecg_attr_find(n, "min")) snprintf(lo, sz, "(%s)%.9g", ct, ecg_attr_f(n, "min", 0));
  else if (isf && n->n_inputs == 1) snprintf(lo, sz, "(%s)-3.402823466e38", ct); /* opset < 11 default */
  if (ecg_attr_find(n, "max")) snprintf(hi, sz, "(%s)%.9g", ct, ecg_attr_f(n, "max", 0));
  else if (isf && n->n_inputs == 1) snprintf(hi, sz, "(%s)3.402823466e38", ct);
  for (int k = 1; k <= 2; k++) {
    int id = (size_t)k < n->n_inputs ? n->inputs[k] : -1;
    if (id >= 0) snprintf(k == 1 ? lo : hi, sz, "%s%s[0])", load_conv(L, id), lw_ptr(L, id));
  }
}

/* BatchNormalization with training_mode (opset 14+): normalise with the batch's own
 * per-channel mean and (population) variance over N and the spatial dims; the optional
 * outputs running_mean / running_var = input * momentum + batch * (1 - momentum). */
static int emit_batchnorm_training(ecg_lower *L, const ecg_node *n, double eps) {
  int64_t xd[ECG_MAX_RANK];
  int xr = lw_dims(L, n->inputs[0], xd);
  int64_t N = xd[0], C = xr > 1 ? xd[1] : 1, S = 1;
  for (int d = 2; d < xr; d++) S *= xd[d];
  double mom = ecg_attr_f(n, "momentum", 0.9f);
  const char *T = lw_ctype(L, n->inputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    const %s *sc = %s;\n", T, lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    const %s *bi = %s;\n", T, lw_ptr(L, n->inputs[2]));
  sb_printf(c, "    const %s *im = %s;\n", T, lw_ptr(L, n->inputs[3]));
  sb_printf(c, "    const %s *iv = %s;\n", T, lw_ptr(L, n->inputs[4]));
  sb_printf(c, "    %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    for (int64_t ch = 0; ch < %lld; ch++) {\n      double mean = 0, var = 0;\n", (long long)C);
  sb_printf(c, "      for (int64_t b = 0; b < %lld; b++) for (int64_t s = 0; s < %lld; s++) mean += x[(b * %lld + ch) * %lld + s];\n",
            (long long)N, (long long)S, (long long)C, (long long)S);
  sb_printf(c, "      mean /= %lld;\n", (long long)(N * S));
  sb_printf(c, "      for (int64_t b = 0; b < %lld; b++) for (int64_t s = 0; s < %lld; s++) { double d = x[(b * %lld + ch) * %lld + s] - mean; var += d * d; }\n",
            (long long)N, (long long)S, (long long)C, (long long)S);
  sb_printf(c, "      var /= %lld;\n      double inv = 1.0 / sqrt(var + %.9g);\n", (long long)(N * S), eps);
  sb_printf(c, "      for (int64_t b = 0; b < %lld; b++) for (int64_t s = 0; s < %lld; s++) { int64_t i = (b * %lld + ch) * %lld + s; y[i] = (%s)((x[i] - mean) * inv * sc[ch] + bi[ch]); }\n",
            (long long)N, (long long)S, (long long)C, (long long)S, T);
  if (n->n_outputs > 1 && n->outputs[1] >= 0)
    sb_printf(c, "      %s[ch] = (%s)(im[ch] * %.9g + mean * %.9g);\n", lw_ptr(L, n->outputs[1]), T, mom, 1 - mom);
  if (n->n_outputs > 2 && n->outputs[2] >= 0)
    sb_printf(c, "      %s[ch] = (%s)(iv[ch] * %.9g + var * %.9g);\n", lw_ptr(L, n->outputs[2]), T, mom, 1 - mom);
  sb_printf(c, "    }\n  }\n");
  return ECG_OK;
}

/** Emitter for every row of EW: Relu .. Where, BatchNormalization (inference form). */
int emit_elementwise(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  const char *tmpl = expr_of(op->id);
  char lb[256];
  if (!tmpl) return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): no elementwise expression", ecg_node_label(L->g, n, lb, sizeof lb), n->op_type);
  int ids[LW_MAX_OPS], rank[LW_MAX_OPS];
  int64_t dims[LW_MAX_OPS][ECG_MAX_RANK];
  int n_in = 0;
  double a, b;
  attrs_of(n, op->id, &a, &b);
  int out = n->outputs[0];
  int isf = ecg_dtype_is_float(L->g->tensors[n->inputs[0]]->dtype);
  if (op->id == ECG_OP_Mod)
    tmpl = ecg_attr_i(n, "fmod", 0) ? (isf ? "fmod($0, $1)" : "ecg_tmod($0, $1)") : (isf ? "ecg_fmod_floor($0, $1)" : "ecg_imod($0, $1)");
  if (op->id == ECG_OP_Div && !isf) tmpl = "ecg_idiv($0, $1)";
  if (op->id == ECG_OP_Pow && isf) { /* a constant scalar exponent: multiply instead of pow() */
    const ecg_tensor *p = n->n_inputs > 1 && n->inputs[1] >= 0 ? L->g->tensors[n->inputs[1]] : NULL;
    if (p && p->is_const && ecg_tensor_numel(p) == 1) {
      double v = ecg_const_f64(p, 0);
      if (v == 1) tmpl = "$0";
      else if (v == 2) tmpl = "($0 * $0)";
      else if (v == 3) tmpl = "($0 * $0 * $0)";
      else if (v == 0.5) tmpl = "sqrt($0)";
    }
  }
  if (op->id == ECG_OP_Cast && L->g->tensors[out]->dtype == ECG_BOOL) tmpl = "($0 != 0)";
  if (op->id == ECG_OP_BitShift) {
    char dir[16];
    ecg_attr_s(n, "direction", "", dir, sizeof dir);
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (BitShift): direction must be LEFT or RIGHT", ecg_node_label(L->g, n, lb, sizeof lb));
    /* shifting by the type's width or more is 0 in ONNX (undefined in C) */
    tmpl = strcmp(dir, "LEFT") == 0 ? "($1 >= 8 * sizeof $0 ? 0 : $0 << $1)" : "($1 >= 8 * sizeof $0 ? 0 : $0 >> $1)";
  }
  if (op->id == ECG_OP_Clip) {
    /* bounds become block-local scalars so the loop body is a pure select (vectorises) */
    char lo[200] = "", hi[200] = "";
    clip_bounds(L, n, lo, hi, sizeof lo);
    ids[0] = n->inputs[0];
    rank[0] = lw_dims(L, ids[0], dims[0]);
    const char *ct = lw_vtype(L, out);
    sb_printf(&L->code, "  {\n");
    if (lo[0]) sb_printf(&L->code, "  const %s clip_lo = %s;\n", ct, lo);
    if (hi[0]) sb_printf(&L->code, "  const %s clip_hi = %s;\n", ct, hi);
    const char *t = lo[0] && hi[0] ? "($0 < clip_lo ? clip_lo : ($0 > clip_hi ? clip_hi : $0))"
                    : lo[0]        ? "($0 < clip_lo ? clip_lo : $0)"
                    : hi[0]        ? "($0 > clip_hi ? clip_hi : $0)"
                                   : "$0";
    int rc = lw_emit_map(L, out, 1, ids, dims, rank, t, a, b);
    sb_printf(&L->code, "  }\n");
    return rc ? ecg_errf(e, ECG_ERR_INTERNAL, "bad template") : ECG_OK;
  }
  if (op->id == ECG_OP_BatchNormalization) {
    if (ecg_attr_i(n, "training_mode", 0) || (n->n_outputs > 1 && (n->outputs[1] >= 0 || (n->n_outputs > 2 && n->outputs[2] >= 0)))) {
      if (n->opset < 14 || n->n_outputs > 3 || lw_half(L, n->inputs[0]))
        return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (BatchNormalization): training-mode outputs before opset 14 (or float16) are not supported", ecg_node_label(L->g, n, lb, sizeof lb));
      return emit_batchnorm_training(L, n, a);
    }
    int64_t xd[ECG_MAX_RANK];
    int xr = lw_dims(L, n->inputs[0], xd);
    for (int k = 0; k < 5; k++) {
      ids[k] = n->inputs[k];
      if (k == 0) { rank[0] = xr; memcpy(dims[0], xd, sizeof xd); continue; }
      /* per-channel [C] viewed as [C, 1, ..., 1] against [N, C, ...] */
      rank[k] = xr - 1;
      for (int d = 0; d < xr - 1; d++) dims[k][d] = d == 0 ? xd[1] : 1;
    }
    n_in = 5;
  } else {
    for (size_t k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] < 0) continue;
      ids[n_in] = n->inputs[k];
      rank[n_in] = ecg_bcast_dims(L->g, n, (int)k, dims[n_in]); /* legacy axis broadcast */
      n_in++;
    }
  }
  int rc = lw_emit_map(L, out, n_in, ids, dims, rank, tmpl, a, b);
  return rc ? ecg_errf(e, ECG_ERR_INTERNAL, "node '%s': bad expression template", ecg_node_label(L->g, n, lb, sizeof lb)) : ECG_OK;
}

/** Variadic Max, Min, Sum, Mean: a left fold of the binary expression over the inputs. */
int emit_variadic(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  int ids[LW_MAX_OPS], rank[LW_MAX_OPS];
  int64_t dims[LW_MAX_OPS][ECG_MAX_RANK];
  int n_in = 0;
  char lb[256];
  for (size_t k = 0; k < n->n_inputs; k++) {
    if (n->inputs[k] < 0) continue;
    if (n_in == LW_MAX_OPS - 1) return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): more than %d inputs", ecg_node_label(L->g, n, lb, sizeof lb), n->op_type, LW_MAX_OPS - 1);
    ids[n_in] = n->inputs[k];
    rank[n_in] = lw_dims(L, ids[n_in], dims[n_in]);
    n_in++;
  }
  /* Build the fold explicitly: acc_k = f(acc_{k-1}, $k). */
  sbuf acc = {0};
  sb_printf(&acc, "$0");
  for (int k = 1; k < n_in; k++) {
    sbuf nx = {0};
    const char *prev = acc.s;
    switch (op->id) {
    case ECG_OP_Max: sb_printf(&nx, "ecg_max(%s, $%d)", prev, k); break;
    case ECG_OP_Min: sb_printf(&nx, "ecg_min(%s, $%d)", prev, k); break;
    default: sb_printf(&nx, "(%s + $%d)", prev, k); break;
    }
    sb_free(&acc);
    acc = nx;
  }
  if (op->id == ECG_OP_Mean) {
    sbuf nx = {0};
    sb_printf(&nx, "(%s / ($T)%d)", acc.s, n_in);
    sb_free(&acc);
    acc = nx;
  }
  int rc = lw_emit_map(L, n->outputs[0], n_in, ids, dims, rank, acc.s, 0, 0);
  sb_free(&acc);
  return rc ? ecg_errf(e, ECG_ERR_INTERNAL, "bad template") : ECG_OK;
}
