/* Emitters for generator operators whose operands are known only at run time (when
 * constant they are folded by onnx2ecg): ConstantOfShape and Range. Their output shape
 * is static (declared by the model; ecg_tensor_refine_shape). */
#include <string.h>

#include "emit.h"

/** ConstantOfShape: fill the (static) output with the 'value' tensor attribute's single
 *  element (default float32 0); the shape operand itself is not read. */
int emit_constant_of_shape(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int out = n->outputs[0];
  int64_t numel = ecg_tensor_numel(L->g->tensors[out]);
  const ecg_attr *a = ecg_attr_find(n, "value");
  double v = 0;
  if (a && a->t && a->t->is_const && a->t->data.len > 0) v = ecg_const_f64(a->t, 0);
  const char *T = lw_ctype(L, out);
  int h = lw_half(L, out);
  char lb[256];
  if (h) return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (ConstantOfShape): float16/bfloat16 is not supported", ecg_node_label(L->g, n, lb, sizeof lb));
  sb_printf(&L->code, "  {\n    %s *y = %s;\n", T, lw_ptr(L, out));
  sb_printf(&L->code, "    for (int64_t i = 0; i < %lld; i++) y[i] = (%s)%.17g;\n  }\n", (long long)numel, T, v);
  return ECG_OK;
}

/** Range: y[i] = start + i * delta (start, limit, delta scalars read at run time); the
 *  output length is static: a number when the three are constants, or one that RDP proved
 *  from a declared dim downstream (SOD² §5.4.1, an ISVDOS length bound by the model's
 *  declaration; format/rdp.c). The run checks max(ceil((limit - start) / delta), 0) against
 *  that length and fails the run (P_run returns -2) when the values give another. */
int emit_range(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int out = n->outputs[0];
  int64_t numel = ecg_tensor_numel(L->g->tensors[out]);
  const char *T = lw_ctype(L, out);
  char lb[256];
  if (lw_half(L, out)) return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (Range): float16/bfloat16 is not supported", ecg_node_label(L->g, n, lb, sizeof lb));
  sb_printf(&L->code, "  {\n    %s *y = %s;\n", T, lw_ptr(L, out));
  sb_printf(&L->code, "    const %s start = %s[0];\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(&L->code, "    const %s delta = %s[0];\n", T, lw_ptr(L, n->inputs[2]));
  sb_printf(&L->code, "    const %s limit = %s[0];\n", T, lw_ptr(L, n->inputs[1]));
  sb_printf(&L->code, "    const double len_ = delta == 0 ? -1.0 : ceil(((double)limit - (double)start) / (double)delta);\n");
  sb_printf(&L->code, "    if ((len_ < 0 ? 0.0 : len_) != %lld.0 || delta == 0) ctx->err = -2; /* compiled for %lld elements */\n",
            (long long)numel, (long long)numel);
  sb_printf(&L->code, "    else for (int64_t i = 0; i < %lld; i++) y[i] = (%s)(start + (%s)i * delta);\n  }\n", (long long)numel, T, T);
  return ECG_OK;
}

/** Shape (and its opset-15 start/end): the input's dims from start to end as int64, each a
 *  number or, in a dynamic build, the run-time size (lw_dim). A static Shape is folded by
 *  onnx2ecg and never reaches the lowering. */
int emit_shape(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int x = n->inputs[0], y = n->outputs[0], r = (int)L->g->tensors[x]->n_dims;
  if (L->g->tensors[y]->dtype != ECG_INT64) return lw_node_err(L, n, e, "the output must be int64");
  int64_t st = ecg_attr_i(n, "start", 0), en = ecg_attr_i(n, "end", r);
  if (st < 0) st += r;
  if (en < 0) en += r;
  st = st < 0 ? 0 : st > r ? r : st;
  en = en < 0 ? 0 : en > r ? r : en;
  sb_printf(&L->code, "  {\n    int64_t *y = %s;\n", lw_ptr(L, y));
  for (int64_t d = st; d < en; d++) sb_printf(&L->code, "    y[%lld] = %s;\n", (long long)(d - st), lw_dim(L, x, (int)d));
  sb_printf(&L->code, "  }\n");
  return ECG_OK;
}
