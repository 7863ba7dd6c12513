/* Emitters for the ai.onnx.preview.training optimizers Adagrad, Momentum and Adam
 * (One-to-One: one loop per optimized tensor, each element updated from its own X, G
 * and state values; arithmetic in double).  Operand layout and shapes: format/ops/train.c.
 * R (learning rate) and T (update count) are scalars read at run time. */
#include <string.h>

#include "../lower.h"
#include "emit.h"


/** Declare `const CT *NAME = ptr;` for tensor id inside the current block. */
static void decl_in(ecg_lower *L, const char *name, int id) {
  sb_printf(&L->code, "    const %s *%s = %s;\n", lw_ctype(L, id), name, lw_ptr(L, id));
}

static void decl_out(ecg_lower *L, const char *name, int id) {
  sb_printf(&L->code, "    %s *%s = %s;\n", lw_ctype(L, id), name, lw_ptr(L, id));
}

/** Adagrad:  r = R / (1 + T * decay_factor);  g' = norm_coefficient * X + G;
 *            H_new = H + g'^2;  X_new = X - r * g' / (sqrt(H_new) + epsilon).
 *  Momentum: g' = norm_coefficient * X + G;  b = T > 0 ? beta : 1;
 *            V_new = alpha * V + b * g';
 *            X_new = X - R * V_new (standard) or X - R * (g' + alpha * V_new) (nesterov).
 *  Adam:     g' = norm_coefficient * X + G;  V_new = alpha * V + (1 - alpha) * g';
 *            H_new = beta * H + (1 - beta) * g'^2;
 *            r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
 *            X_new = (1 - norm_coefficient_post) * (X - r * V_new / (sqrt(H_new) + epsilon)). */
int emit_optimizer(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int adam = strcmp(n->op_type, "Adam") == 0, adagrad = strcmp(n->op_type, "Adagrad") == 0;
  int groups = adam ? 4 : 3, nt = ((int)n->n_inputs - 2) / groups;
  if (nt <= 0 || (int)n->n_outputs != nt * (groups - 1)) return lw_node_err(L, n, e, "operand count not supported");
  for (size_t k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] < 0) return lw_node_err(L, n, e, "an omitted operand is not supported");
  for (size_t k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] < 0) return lw_node_err(L, n, e, "an omitted output is not supported");
  /* defaults of the ONNX schema: epsilon 1e-6 (Adagrad, Adam), alpha 0.9 and beta 0.999
   * (Adam); Momentum's alpha, beta, mode and norm_coefficient are required */
  double nc = ecg_attr_f(n, "norm_coefficient", 0.0f), eps = ecg_attr_f(n, "epsilon", 1e-6f);
  double alpha = ecg_attr_f(n, "alpha", adam ? 0.9f : 0.0f), beta = ecg_attr_f(n, "beta", adam ? 0.999f : 0.0f);
  double decay = ecg_attr_f(n, "decay_factor", 0.0f), ncp = ecg_attr_f(n, "norm_coefficient_post", 0.0f);
  char mode[16];
  ecg_attr_s(n, "mode", "standard", mode, sizeof mode);
  int nesterov = strcmp(mode, "nesterov") == 0;
  if (!adam && !adagrad && !nesterov && strcmp(mode, "standard") != 0) return lw_node_err(L, n, e, "mode not supported");
  sbuf *c = &L->code;
  sb_printf(c, "  {\n");
  decl_in(L, "R", n->inputs[0]);
  decl_in(L, "T", n->inputs[1]);
  sb_printf(c, "    const double t = (double)T[0];\n    (void)t;\n");
  if (adagrad) sb_printf(c, "    const double r = (double)R[0] / (1.0 + t * %.17g);\n", decay);
  else if (adam)
    sb_printf(c, "    const double r = t > 0 ? (double)R[0] * sqrt(1.0 - pow(%.17g, t)) / (1.0 - pow(%.17g, t)) : (double)R[0];\n",
              beta, alpha);
  else sb_printf(c, "    const double r = (double)R[0], bt = t > 0 ? %.17g : 1.0;\n", beta);
  for (int i = 0; i < nt; i++) {
    int x = n->inputs[2 + i];
    int64_t d[ECG_MAX_RANK], m = 1;
    int rank = lw_dims(L, x, d);
    for (int k = 0; k < rank; k++) m *= d[k];
    const char *ct = lw_ctype(L, x);
    sb_printf(c, "    {\n");
    decl_in(L, "x", x);
    decl_in(L, "gd", n->inputs[2 + nt + i]);
    decl_in(L, "s1", n->inputs[2 + 2 * nt + i]);
    if (adam) decl_in(L, "s2", n->inputs[2 + 3 * nt + i]);
    decl_out(L, "xn", n->outputs[i]);
    decl_out(L, "s1n", n->outputs[nt + i]);
    if (adam) decl_out(L, "s2n", n->outputs[2 * nt + i]);
    sb_printf(c, "      for (int64_t p = 0; p < %lld; p++) {\n", (long long)m);
    sb_printf(c, "        const double xv = (double)x[p], gr = %.17g * xv + (double)gd[p];\n", nc);
    if (adagrad) {
      sb_printf(c, "        const double h = (double)s1[p] + gr * gr;\n");
      sb_printf(c, "        s1n[p] = (%s)h;\n", ct);
      sb_printf(c, "        xn[p] = (%s)(xv - r * gr / (sqrt(h) + %.17g));\n", ct, eps);
    } else if (adam) {
      sb_printf(c, "        const double v = %.17g * (double)s1[p] + %.17g * gr;\n", alpha, 1.0 - alpha);
      sb_printf(c, "        const double h = %.17g * (double)s2[p] + %.17g * gr * gr;\n", beta, 1.0 - beta);
      sb_printf(c, "        s1n[p] = (%s)v;\n        s2n[p] = (%s)h;\n", ct, ct);
      sb_printf(c, "        xn[p] = (%s)(%.17g * (xv - r * v / (sqrt(h) + %.17g)));\n", ct, 1.0 - ncp, eps);
    } else {
      sb_printf(c, "        const double v = %.17g * (double)s1[p] + bt * gr;\n", alpha);
      sb_printf(c, "        s1n[p] = (%s)v;\n", ct);
      if (nesterov) sb_printf(c, "        xn[p] = (%s)(xv - r * (gr + %.17g * v));\n", ct, alpha);
      else sb_printf(c, "        xn[p] = (%s)(xv - r * v);\n", ct);
    }
    sb_printf(c, "      }\n    }\n");
  }
  sb_printf(c, "  }\n");
  return ECG_OK;
}
