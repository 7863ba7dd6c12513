/* Emitters for One-to-One operators (DNNFusion Table 3.2): each is its scalar
 * expression of format/ops/scalar.def inside a one-node fusion block (block.c), whose
 * loop nest broadcasts the inputs with numpy rules (ONNX Broadcasting.md).  Also the
 * expression-template map lw_emit_map that other families use for their own maps
 * ($0 $1 $2 = input values, $T = the output C type, $a $b = numbers). */
#include <stdlib.h>
#include <string.h>

#include "../lower.h"
#include "emit.h"

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


int lw_emit_map(ecg_lower *L, int out_id, int n_in, const int *in_ids, int64_t in_dims[][ECG_MAX_RANK],
                const int *in_rank, const char *tmpl, double a, double b) {
  int64_t od[ECG_MAX_RANK], st[LW_MAX_OPS][ECG_MAX_RANK];
  int r = lw_dims(L, out_id, od);
  lw_strides(r, od, st[0]);
  char vals[LW_MAX_OPS][48];
  const char *vp[LW_MAX_OPS];
  /* Local restrict pointers: the memory plan never lets an output overlap a live input.
   * 16-bit floats are converted to float at load and back at store. */
  sb_printf(&L->code, "  {\n    %s%s *restrict p0 = %s;\n", lw_gq(L), lw_ctype(L, out_id), lw_ptr(L, out_id));
  for (int k = 0; k < n_in; k++) {
    lw_bcast_strides(r, od, in_rank[k], in_dims[k], st[k + 1]);
    sb_printf(&L->code, "    %sconst %s *restrict p%d = %s;\n", lw_gq(L), lw_ctype(L, in_ids[k]), k + 1, lw_ptr(L, in_ids[k]));
    int64_t numel = 1;
    for (int d = 0; d < in_rank[k]; d++) numel *= in_dims[k][d];
    if (numel == 1) { /* a broadcast scalar: load once */
      sb_printf(&L->code, "    const %s s%d = %sp%d[0]);\n", lw_vtype(L, in_ids[k]), k + 1, lw_load_open(L, in_ids[k]), k + 1);
      snprintf(vals[k], sizeof vals[k], "s%d", k + 1);
    } else
      snprintf(vals[k], sizeof vals[k], "%sp%d[o%d])", lw_load_open(L, in_ids[k]), k + 1, k + 1);
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

/** Emitter for every One-to-One operator of format/ops/scalar.def (Relu .. Where,
 *  variadic Max/Min/Sum/Mean, BatchNormalization in inference form): a one-node fusion
 *  block (block.c). BatchNormalization in training mode has its own kernel. */
int emit_elementwise(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (lw_op(n) == ECG_OP_BatchNormalization &&
      (ecg_attr_i(n, "training_mode", 0) || (n->n_outputs > 1 && (n->outputs[1] >= 0 || (n->n_outputs > 2 && n->outputs[2] >= 0))))) {
    if (lw_node_dyn(L, n)) return lw_node_err(L, n, e, "training-mode BatchNormalization is not supported with symbolic dims yet");
    if (n->opset < 14 || n->n_outputs > 3 || lw_half(L, n->inputs[0]))
      return lw_node_err(L, n, e, "training-mode outputs before opset 14 (or float16) are not supported");
    return emit_batchnorm_training(L, n, ecg_attr_f(n, "epsilon", 1e-5f));
  }
  int self = lw_node_index(L, n);
  return lw_emit_ew_block(L, &self, 1, e);
}

/** Variadic Max, Min, Sum, Mean: the same one-node block. */
int emit_variadic(ecg_lower *L, const ecg_node *n, ecg_err *e) { return emit_elementwise(L, n, e); }
