/* Emitters for NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (Many-to-Many:
 * one pass over [N, C, D], accumulating in double), GatherElements (One-to-Many: an
 * index map through the indices tensor) and Trilu (a mask over the last two dims). */
#include <string.h>

#include "../lower.h"
#include "emit.h"


static int has_input(const ecg_node *n, size_t i) { return n->n_inputs > i && n->inputs[i] >= 0; }

/** NLL loss, and SCE = NLL over log_softmax(scores, axis 1) (+ optional log_prob).
 *  x [N, C, D] (D = product of the trailing dims), target [N, D], weight [C]. */
int emit_loss(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int sce = strcmp(n->op_type, "SoftmaxCrossEntropyLoss") == 0;
  int64_t xd[ECG_MAX_RANK];
  int xr = lw_dims(L, n->inputs[0], xd);
  int64_t N = xd[0], C = xd[1], D = 1;
  for (int d = 2; d < xr; d++) D *= xd[d];
  char red[16];
  ecg_attr_s(n, "reduction", "mean", red, sizeof red);
  int none = strcmp(red, "none") == 0, mean = strcmp(red, "mean") == 0;
  int has_ii = ecg_attr_find(n, "ignore_index") != NULL;
  long long ii = (long long)ecg_attr_i(n, "ignore_index", 0);
  int lp = sce && n->n_outputs > 1 && n->outputs[1] >= 0;
  if (!ecg_dtype_is_float(L->g->tensors[n->inputs[0]]->dtype)) return lw_node_err(L, n, e, "input must be a float tensor");
  const char *xt = lw_ctype(L, n->inputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", xt, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    const %s *tg = %s;\n", lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  if (has_input(n, 2)) sb_printf(c, "    const %s *w = %s;\n", lw_ctype(L, n->inputs[2]), lw_ptr(L, n->inputs[2]));
  sb_printf(c, "    %s *y = %s;\n", lw_ctype(L, n->outputs[0]), lw_ptr(L, n->outputs[0]));
  if (lp) sb_printf(c, "    %s *lp = %s;\n", lw_ctype(L, n->outputs[1]), lw_ptr(L, n->outputs[1]));
  sb_printf(c, "    double num = 0, den = 0;\n");
  sb_printf(c, "    for (int64_t i = 0; i < %lld; i++)\n      for (int64_t j = 0; j < %lld; j++) {\n", (long long)N, (long long)D);
  sb_printf(c, "        const %s *xi = x + (size_t)i * %lld + j;\n", xt, (long long)(C * D));
  if (sce) {
    sb_printf(c, "        double mx = xi[0], s = 0;\n");
    sb_printf(c, "        for (int64_t q = 1; q < %lld; q++) if (xi[q * %lld] > mx) mx = xi[q * %lld];\n", (long long)C, (long long)D, (long long)D);
    sb_printf(c, "        for (int64_t q = 0; q < %lld; q++) s += exp((double)xi[q * %lld] - mx);\n", (long long)C, (long long)D);
    sb_printf(c, "        double lse = mx + log(s);\n");
    if (lp)
      sb_printf(c, "        for (int64_t q = 0; q < %lld; q++) lp[(size_t)i * %lld + q * %lld + j] = (%s)((double)xi[q * %lld] - lse);\n",
                (long long)C, (long long)(C * D), (long long)D, xt, (long long)D);
  } else
    sb_printf(c, "        double lse = 0;\n");
  sb_printf(c, "        int64_t k = (int64_t)tg[(size_t)i * %lld + j];\n", (long long)D);
  sb_printf(c, "        double l = 0, wt = 0;\n");
  sb_printf(c, "        if (k >= 0 && k < %lld) {\n", (long long)C);
  if (has_ii) sb_printf(c, "          if (k != %lldLL) {\n", ii);
  else sb_printf(c, "          {\n");
  sb_printf(c, "            wt = %s;\n", has_input(n, 2) ? "(double)w[k]" : "1.0");
  sb_printf(c, "            l = -((double)xi[k * %lld] - lse) * wt;\n          }\n        }\n", (long long)D);
  if (none) sb_printf(c, "        y[(size_t)i * %lld + j] = (%s)l;\n", (long long)D, lw_ctype(L, n->outputs[0]));
  else sb_printf(c, "        num += l; den += wt;\n");
  sb_printf(c, "      }\n");
  if (!none) sb_printf(c, "    y[0] = (%s)(%s);\n", lw_ctype(L, n->outputs[0]), mean ? "num / den" : "num");
  else sb_printf(c, "    (void)num; (void)den;\n");
  sb_printf(c, "  }\n");
  return ECG_OK;
}

/** GatherElements: y[idx] = data[idx with idx[axis] = indices[idx]]. */
int emit_gather_elements(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t dd[ECG_MAX_RANK], od[ECG_MAX_RANK], ds[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], dd);
  lw_dims(L, n->outputs[0], od);
  lw_strides(r, dd, ds);
  int axis = lw_axis(ecg_attr_i(n, "axis", 0), r);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  int64_t numel = 1;
  for (int d = 0; d < r; d++) numel *= od[d];
  sbuf *c = &L->code;
  const char *ot = lw_ctype(L, n->outputs[0]);
  sb_printf(c, "  {\n    const %s *x = %s;\n", lw_ctype(L, n->inputs[0]), lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    const %s *ix = %s;\n", lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    %s *y = %s;\n", ot, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    for (int64_t p = 0; p < %lld; p++) {\n      int64_t rem = p, off = 0;\n", (long long)numel);
  sb_printf(c, "      int64_t k = (int64_t)ix[p];\n      if (k < 0) k += %lld;\n", (long long)dd[axis]);
  sb_printf(c, "      if (k < 0 || k >= %lld) { y[p] = (%s)0; continue; }\n", (long long)dd[axis], ot);
  for (int d = r - 1; d >= 0; d--) {
    if (d == axis) sb_printf(c, "      off += k * %lld;", (long long)ds[d]);
    else sb_printf(c, "      off += (rem %% %lld) * %lld;", (long long)od[d], (long long)ds[d]);
    sb_printf(c, " rem /= %lld;\n", (long long)od[d]);
  }
  sb_printf(c, "      y[p] = x[off];\n    }\n  }\n");
  return ECG_OK;
}

/** Trilu: keep x[..., i, j] where j - i >= k (upper) or j - i <= k (lower), else 0;
 *  k from the optional scalar input (read at run time). */
int emit_trilu(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t d[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], d);
  int64_t numel = 1;
  for (int i = 0; i < r; i++) numel *= d[i];
  int upper = ecg_attr_i(n, "upper", 1) != 0;
  sbuf *c = &L->code;
  const char *ot = lw_ctype(L, n->outputs[0]);
  sb_printf(c, "  {\n    const %s *x = %s;\n    %s *y = %s;\n", lw_ctype(L, n->inputs[0]), lw_ptr(L, n->inputs[0]), ot, lw_ptr(L, n->outputs[0]));
  if (has_input(n, 1)) sb_printf(c, "    int64_t k = (int64_t)%s[0];\n", lw_ptr(L, n->inputs[1]));
  else sb_printf(c, "    int64_t k = 0;\n");
  sb_printf(c, "    for (int64_t p = 0; p < %lld; p++) {\n", (long long)numel);
  sb_printf(c, "      int64_t j = p %% %lld, i = (p / %lld) %% %lld;\n", (long long)d[r - 1], (long long)d[r - 1], (long long)d[r - 2]);
  sb_printf(c, "      y[p] = (j - i %s k) ? x[p] : (%s)0;\n    }\n  }\n", upper ? ">=" : "<=", ot);
  return ECG_OK;
}
