/* Emitter of Conv [+act] -> MaxPool kernels (AGO §III intensive fusion; chain.h
 * ecg_conv_pool_match): a fusion block holding a group-1 conv, optionally one builtin
 * activation of its output, and the max pool of that (ecg-fuse --intensive) becomes one
 * call of the runtime kernel ecg_rt1_conv2d_maxpool (ecg_rt.h): the conv's weights packed
 * at create as for ecg_rt1_conv2d, the activation applied in the conv's register tiles, the
 * conv output only in the kernel's scratch. */
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "emit.h"

int lw_emit_conv_pool(ecg_lower *L, int k, ecg_err *e) {
  const lw_kernel *K = &L->k[k];
  const ecg_graph *g = L->g;
  int cv, ac, pl;
  if (ecg_conv_pool_match(g, K->members, K->nm, &cv, &ac, &pl) != 0)
    return ecg_errf(e, ECG_ERR_INTERNAL, "kernel %d is not a Conv -> MaxPool chain", k);
  const ecg_node *C = g->nodes[cv], *P = g->nodes[pl];
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], kk[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, C->inputs[0], xd);
  lw_dims(L, C->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, C, e, &gm, kk, s, d, p));
  ECG_TRY(lw_conv_algo_check(L, C, r, xd, od, gm.m, kk, s, gm.group, e));
  int u = lw_conv_params_decl(L, r, xd, od, gm.m, kk, s, d, p, gm.group);
  L->conv_algo_next = 0;
  int v = lw_pool_params_decl(L, P, e);
  if (v < 0) return ECG_ERR_INPUT;
  float a = 0, b = 0;
  ecg_builtin_act kind = ac >= 0 ? ecg_builtin_act_of(g, g->nodes[ac], &a, &b) : ECG_BACT_NONE;
  char act[160], buf[128];
  lw_act_init((int)kind, a, b, act, sizeof act);
  snprintf(buf, sizeof buf, "ecg_rt1_conv2d_maxpool_scratch_floats(&cp%d, &pp%d, threads)", u, v);
  lw_need_scratch(L, buf);
  int off = lw_conv_weights(L, C, u);
  char bias[200] = "NULL", x[200];
  if (C->n_inputs > 2 && C->inputs[2] >= 0) snprintf(bias, sizeof bias, "%s", lw_ptr(L, C->inputs[2]));
  snprintf(x, sizeof x, "%s", lw_ptr(L, C->inputs[0]));
  sb_printf(&L->code, "  ecg_conv_params cpf%d = cp%d;\n  cpf%d.act = (ecg_act)%s;\n", u, u, u, act);
  sb_printf(&L->code, "  ecg_rt1_conv2d_maxpool(&cpf%d, &pp%d, %s, ctx->pk[%d], %s, ", u, v, x, off, bias);
  sb_printf(&L->code, "%s, ctx->scratch);\n", lw_ptr(L, P->outputs[0]));
  return ECG_OK;
}
