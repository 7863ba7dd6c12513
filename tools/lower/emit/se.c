/* Emitter of squeeze-and-excitation kernels (AGO §III intensive fusion; chain.h
 * ecg_se_match): a fusion block holding GlobalAveragePool -> pointwise conv [+act] ->
 * pointwise conv [+act] [-> the Mul scaling the pool's input] (ecg-fuse --intensive), or
 * its tail pointwise conv [+act] -> the scaling Mul (the dnnfusion plan), becomes one call of the
 * runtime kernel ecg_rt1_se (ecg_rt.h): the pooled vector, the hidden vector and the
 * scales live in its scratch only, the two convs' weights are packed once at create. */
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "emit.h"

int lw_emit_se(ecg_lower *L, int k, ecg_err *e) {
  const lw_kernel *K = &L->k[k];
  const ecg_graph *g = L->g;
  ecg_se_chain se;
  if (ecg_se_match(g, K->members, K->nm, &se) != 0)
    return ecg_errf(e, ECG_ERR_INTERNAL, "kernel %d is not a squeeze-and-excitation chain", k);
  const int pool = se.gap >= 0;
  const ecg_node *F1 = pool ? g->nodes[se.fc1] : NULL, *F2 = g->nodes[se.fc2];
  int64_t xd[ECG_MAX_RANK], hd[ECG_MAX_RANK], sd[ECG_MAX_RANK];
  lw_dims(L, se.x, xd);
  lw_dims(L, se.u, hd);
  lw_dims(L, F2->outputs[0], sd);
  char a1[160], a2[160];
  lw_act_chain_init(L, pool ? F1->outputs[0] : -1, se.act1, se.nact1, a1, sizeof a1);
  lw_act_chain_init(L, F2->outputs[0], se.act2, se.nact2, a2, sizeof a2);
  int u = lw_uid(L);
  const int blk = L->klay ? L->klay[k] : 0; /* GCD²'s NCHWc layouts (layout_sel.c): x and y in that block */
  sb_printf(&L->decls, "static const ecg_se_params se%d = {%lld, %lld, %lld, %lld, %lld, %lld, %s, %s, %d, %d, %d};\n", u,
            (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3], (long long)hd[1], (long long)sd[1], a1, a2,
            se.scale >= 0, pool, blk);
  char buf[96];
  snprintf(buf, sizeof buf, "ecg_rt1_se_scratch_floats(&se%d, threads)", u);
  lw_need_scratch(L, buf);
  int pk[2] = {-1, -1};
  const ecg_node *F[2] = {F1, F2};
  for (int i = !pool; i < 2; i++) { /* the 1x1 convs' weights, packed once at create */
    snprintf(buf, sizeof buf, "ecg_rt1_se_packed_floats(&se%d, %d)", u, i + 1);
    pk[i] = lw_packed_slot(L, buf);
    sb_printf(&L->init, "  ecg_rt1_se_pack(&se%d, %d, %s, ctx->pk[%d]);\n", u, i + 1, lw_ptr(L, F[i]->inputs[1]), pk[i]);
  }
  char x[200], in[200], w1[200], b1[200], b2[200], y[200];
  snprintf(x, sizeof x, "%s", lw_ptr(L, se.x));
  snprintf(in, sizeof in, "%s", pool ? "NULL" : lw_ptr(L, se.u));
  if (pool) { snprintf(w1, sizeof w1, "ctx->pk[%d]", pk[0]); lw_ptr_opt(L, F1, 2, b1, sizeof b1); }
  else { snprintf(w1, sizeof w1, "NULL"); snprintf(b1, sizeof b1, "NULL"); }
  lw_ptr_opt(L, F2, 2, b2, sizeof b2);
  snprintf(y, sizeof y, "%s", lw_ptr(L, se.y));
  sb_printf(&L->code, "  ecg_rt1_se(&se%d, %s, %s, %s, %s, ctx->pk[%d], %s, %s, ctx->scratch);\n", u, x, in, w1, b1, pk[1], b2, y);
  return ECG_OK;
}
