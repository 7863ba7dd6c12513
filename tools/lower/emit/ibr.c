/* Emitter of intensive-fusion kernels (AGO §III-B): a fusion block holding
 * [pointwise or stem conv [+act]] -> depthwise conv [+act] [-> pointwise conv [+epilogue]]
 * (format/chain.h ecg_ibr_chain) becomes one call of the row-tiled runtime kernel
 * ecg_rt1_ibr (ecg_rt.h), which computes each element of the expanded intermediates once,
 * in its scratch; the One-to-One members after the last pointwise conv run as its
 * generated epilogue (block.c). Without the last pointwise conv the kernel writes the
 * depthwise stage's output (cout = 0). */
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "emit.h"

int lw_emit_ibr(ecg_lower *L, int k, ecg_err *e) {
  lw_kernel *K = &L->k[k];
  const ecg_graph *g = L->g;
  ecg_ibr_chain ib;
  if (ecg_ibr_match(g, K->members, K->nm, &ib) < 0)
    return ecg_errf(e, ECG_ERR_INTERNAL, "kernel %d is not an intensive-fusion chain", k);
  const ecg_node *D = g->nodes[ib.dw], *P2 = ib.pw2 >= 0 ? g->nodes[ib.pw2] : NULL, *P1 = ib.pw1 >= 0 ? g->nodes[ib.pw1] : NULL;
  const ecg_node *last = g->nodes[K->dominant]; /* P2, or the depthwise stage's last member */
  int64_t xd[ECG_MAX_RANK], ed[ECG_MAX_RANK], dd[ECG_MAX_RANK], yd[ECG_MAX_RANK];
  lw_dims(L, P1 ? P1->inputs[0] : D->inputs[0], xd);
  lw_dims(L, D->inputs[0], ed);
  lw_dims(L, D->outputs[0], dd);
  lw_dims(L, last->outputs[0], yd);
  int kh, kw, sh, sw, pt, pl;
  if (ecg_dw_geometry(g, D, &kh, &kw, &sh, &sw, &pt, &pl) != 0) return lw_node_err(L, D, e, "not a depthwise convolution");
  /* a stem conv as the first stage: its geometry, x's dims (ecg_ibr_params k1h .. xw) */
  char stem[160] = "0, 0, 0, 0, 0, 0, 0, 0";
  if (P1 && ecg_conv_role_of(g, P1) == ECG_CONV_STEM) {
    int k1h, k1w, s1h, s1w, p1t, p1l;
    if (ecg_conv_geometry(g, P1, &k1h, &k1w, &s1h, &s1w, &p1t, &p1l) != 0) return lw_node_err(L, P1, e, "not a stem convolution");
    snprintf(stem, sizeof stem, "%d, %d, %d, %d, %d, %d, %lld, %lld", k1h, k1w, s1h, s1w, p1t, p1l, (long long)xd[2], (long long)xd[3]);
  }
  /* a schedule's tile: [output rows per band] (AGO §V's tunable tile size; 0 or none: the
   * kernel chooses from the cache sizes) */
  int band = 0;
  if (L->sched && L->sched->n_tile) {
    if (L->sched->n_tile != 1 || L->sched->tile[0] < 1 || L->sched->tile[0] > 1 << 20)
      return lw_node_err(L, last, e, "schedule tile of %zu values (first %lld): the intensive-fusion kernel takes one, its output rows per band (1 or more)",
                         L->sched->n_tile, (long long)L->sched->tile[0]);
    band = (int)L->sched->tile[0];
    L->sched_used |= LW_SCHED_TILE;
  }
  char a1[160], a2[160];
  lw_act_chain_init(L, P1 ? P1->outputs[0] : -1, ib.act1, ib.nact1, a1, sizeof a1);
  lw_act_chain_init(L, D->outputs[0], ib.act2, ib.nact2, a2, sizeof a2);
  int u = lw_uid(L);
  sb_printf(&L->decls, "static const ecg_ibr_params ibr%d = {%lld, %lld, %lld, %lld, %lld, %d, %d, %d, %d, %d, %d, %lld, %lld, %lld, %s, %s, {ECG_ACT_NONE, 0, 0, 0, 0}, %s, %d};\n",
            u, (long long)xd[0], (long long)xd[1], (long long)ed[2], (long long)ed[3], (long long)dd[1], kh, kw, sh, sw, pt, pl,
            (long long)dd[2], (long long)dd[3], P2 ? (long long)yd[1] : 0LL, a1, a2, stem, band);
  char buf[96];
  snprintf(buf, sizeof buf, "ecg_rt1_ibr_scratch_floats(&ibr%d, threads)", u);
  lw_need_scratch(L, buf);
  /* the pointwise and the depthwise weights, packed once at create */
  int pk1 = -1, pk2 = -1;
  if (P1) {
    snprintf(buf, sizeof buf, "ecg_rt1_ibr_packed_floats(&ibr%d, 1)", u);
    pk1 = lw_packed_slot(L, buf);
    sb_printf(&L->init, "  ecg_rt1_ibr_pack(&ibr%d, 1, %s, ctx->pk[%d]);\n", u, lw_ptr(L, P1->inputs[1]), pk1);
  }
  if (P2) {
    snprintf(buf, sizeof buf, "ecg_rt1_ibr_packed_floats(&ibr%d, 2)", u);
    pk2 = lw_packed_slot(L, buf);
    sb_printf(&L->init, "  ecg_rt1_ibr_pack(&ibr%d, 2, %s, ctx->pk[%d]);\n", u, lw_ptr(L, P2->inputs[1]), pk2);
  }
  snprintf(buf, sizeof buf, "ecg_rt1_ibr_packed_floats(&ibr%d, 3)", u);
  int pkd = lw_packed_slot(L, buf);
  sb_printf(&L->init, "  ecg_rt1_ibr_pack(&ibr%d, 3, %s, ctx->pk[%d]);\n", u, lw_ptr(L, D->inputs[1]), pkd);
  /* the epilogue after the last pointwise conv: its act3 */
  sb_printf(&L->code, "  ecg_ibr_params q%d = ibr%d;\n", u, u);
  if (K->epi_from < K->nm) {
    char fname[32];
    snprintf(fname, sizeof fname, "epi%d", k);
    ECG_TRY(lw_emit_epilogue(L, k, fname, e));
    sb_printf(&L->code, "  q%d.act3 = ((ecg_act){ECG_ACT_FN, 0, 0, %s, ctx});\n", u, fname);
  }
  char x[200], w1[200], b1[200], wd[200], bd[200], w2[200], b2[200], y[200];
  snprintf(x, sizeof x, "%s", lw_ptr(L, P1 ? P1->inputs[0] : D->inputs[0]));
  if (P1) { snprintf(w1, sizeof w1, "ctx->pk[%d]", pk1); lw_ptr_opt(L, P1, 2, b1, sizeof b1); }
  else { snprintf(w1, sizeof w1, "NULL"); snprintf(b1, sizeof b1, "NULL"); }
  snprintf(wd, sizeof wd, "ctx->pk[%d]", pkd);
  lw_ptr_opt(L, D, 2, bd, sizeof bd);
  if (P2) { snprintf(w2, sizeof w2, "ctx->pk[%d]", pk2); lw_ptr_opt(L, P2, 2, b2, sizeof b2); }
  else { snprintf(w2, sizeof w2, "NULL"); snprintf(b2, sizeof b2, "NULL"); }
  snprintf(y, sizeof y, "%s", lw_ptr(L, last->outputs[0]));
  sb_printf(&L->code, "  ecg_rt1_ibr(&q%d, %s, %s, %s, %s, %s, %s, %s, %s, ctx->scratch, NULL);\n", u, x, w1, b1, wd, bd, w2, b2, y);
  return ECG_OK;
}
