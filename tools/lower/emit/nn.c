/* Emitters for the compute-intensive Many-to-Many operators: Conv, ConvTranspose,
 * MatMul, Gemm, pooling.  They call the blocked, vectorised runtime kernels
 * (tools/lower/runtime/ecg_rt.h) with shapes fixed at lowering time; constant weights
 * are prepacked once in create (DNNFusion §3.4.4; AGO §III complex operators). */
#include <stdlib.h>
#include <string.h>

#include "emit.h"


static int all_float32(ecg_lower *L, const ecg_node *n) {
  for (size_t k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] >= 0 && L->g->tensors[n->inputs[k]]->dtype != ECG_FLOAT) return 0;
  return 1;
}

int lw_geom_2d(ecg_lower *L, const ecg_node *n, ecg_err *e, ecg_conv_geom *gm, int64_t *k, int64_t *s, int64_t *d,
               int64_t *p) {
  ECG_TRY(ecg_conv_geom_resolve(L->g, n, gm, e));
  if (gm->sp > 2) return lw_node_err(L, n, e, "%d spatial dims are not supported here (only 1-D and 2-D)", gm->sp);
  for (int i = 0; i < 2; i++) { k[i] = 1; s[i] = 1; d[i] = 1; }
  for (int i = 0; i < 4; i++) p[i] = 0;
  int off = 2 - gm->sp; /* a 1-D op uses the second (width) slot */
  for (int i = 0; i < gm->sp; i++) {
    k[off + i] = gm->k[i];
    s[off + i] = gm->s[i];
    d[off + i] = gm->d[i];
    p[off + i] = gm->pb[i];
    p[2 + off + i] = gm->pe[i];
  }
  return ECG_OK;
}

static const char *act_none = "{ECG_ACT_NONE, 0, 0, 0, 0}";

/* The ecg_act of a runtime call: the fusion block's epilogue when one is being fused
 * (L->epi_act; marks it used), else none. */
const char *lw_act_arg(ecg_lower *L) {
  if (!L->epi_act) return "((ecg_act){ECG_ACT_NONE, 0, 0, 0, 0})";
  L->epi_used = 1;
  return L->epi_act;
}

void lw_act_init(int k, float a, float b, char *buf, size_t sz) {
  static const char *const kind[] = {"ECG_ACT_NONE", "ECG_ACT_RELU", "ECG_ACT_CLIP", "ECG_ACT_LEAKY",
                                     "ECG_ACT_SIGMOID", "ECG_ACT_HARDSWISH", "ECG_ACT_SILU"};
  sbuf s = {0};
  sb_printf(&s, "{%s, ", kind[k >= 0 && k < (int)(sizeof kind / sizeof kind[0]) ? k : 0]);
  lw_literal(&s, "float", a);
  sb_printf(&s, ", ");
  lw_literal(&s, "float", b);
  sb_printf(&s, ", 0, 0}"); /* fn, arg: every field initialised (-Wextra) */
  snprintf(buf, sz, "%s", s.s && !s.oom ? s.s : "{ECG_ACT_NONE, 0, 0, 0, 0}");
  sb_free(&s);
}

/* "&cp<u>", or a local copy carrying the block's epilogue (declared into L->code). */
const char *lw_conv_params_ref(ecg_lower *L, int u, char *buf, size_t n) {
  if (!L->epi_act) { snprintf(buf, n, "&cp%d", u); return buf; }
  sb_printf(&L->code, "  ecg_conv_params cpe%d = cp%d;\n  cpe%d.act = %s;\n", u, u, u, lw_act_arg(L));
  snprintf(buf, n, "&cpe%d", u);
  return buf;
}

/* Declare `static const ecg_conv_params cp<u>` for a 1-D or 2-D NCHW operator with input
 * dims xd (rank r), output dims od, m output channels; returns u. */
int lw_conv_params_decl(ecg_lower *L, int r, const int64_t *xd, const int64_t *od, int64_t m, const int64_t *k,
                            const int64_t *s, const int64_t *d, const int64_t *p, int64_t group) {
  int64_t H = r == 4 ? xd[2] : 1, W = xd[r - 1], OH = r == 4 ? od[2] : 1, OW = od[r - 1];
  int u = lw_uid(L);
  char algo[32]; /* the schedule's forced strategy (emit_conv sets conv_algo_next; 0: the runtime picks),
                  * always written: -Wextra's missing-field-initializers rejects an omitted field */
  snprintf(algo, sizeof algo, ", %d", L->conv_algo_next);
  sb_printf(&L->decls, "static const ecg_conv_params cp%d = {%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %s%s};\n",
            u, (long long)xd[0], (long long)xd[1], (long long)H, (long long)W, (long long)m, (long long)k[0], (long long)k[1],
            (long long)OH, (long long)OW, (long long)s[0], (long long)s[1], (long long)d[0], (long long)d[1], (long long)p[0], (long long)p[1],
            (long long)p[2], (long long)p[3], (long long)group, act_none, algo);
  return u;
}

/* The schedule's conv_algo for Conv node n (ecg-partition --tune), checked against what the
 * runtime can run: gemm and gemm_t any non-depthwise conv (gemm_t a plane of >= 32
 * positions, ecg_rt.h), winograd group 1, 3x3, stride 1, >= 8 channels in and out. Sets
 * L->conv_algo_next for lw_conv_params_decl; ECG_ERR_INPUT naming the node otherwise. */
static int conv_algo_check(ecg_lower *L, const ecg_node *n, int r, const int64_t *xd, const int64_t *od, int64_t m,
                           const int64_t *k, const int64_t *s, int64_t group, ecg_err *e) {
  int a = L->sched ? L->sched->conv_algo : 0;
  L->conv_algo_next = 0;
  if (!a) return ECG_OK;
  L->sched_used |= LW_SCHED_CONV;
  int64_t c = xd[1], plane = (r == 4 ? od[2] : 1) * od[r - 1];
  const char *why = NULL;
  if (group > 1 && group == c && m % c == 0) why = "a depthwise conv has one kernel";
  else if (a == ECG_CONV_ALGO_GEMM_T && plane < 32) why = "gemm_t needs an output plane of at least 32 positions";
  else if (a == ECG_CONV_ALGO_WINOGRAD && (group != 1 || k[0] != 3 || k[1] != 3 || s[0] != 1 || s[1] != 1 || c < 8 || m < 8))
    why = "winograd needs group 1, a 3x3 kernel, stride 1 and at least 8 channels in and out";
  if (why) return lw_node_err(L, n, e, "schedule conv_algo %s does not apply: %s", ecg_conv_algo_name(a), why);
  L->conv_algo_next = a;
  return ECG_OK;
}

/** Conv (1-D, 2-D; grouped, depthwise, dilated) through ecg_rt1_conv2d with weights packed
 *  in create (or in the kernel when the weights are a graph input). */
int emit_conv(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n) || L->g->tensors[n->inputs[0]]->n_dims > 4) return emit_conv_nd(L, n, e);
  int si = L->sparse != LW_SPARSE_DENSE ? ecg_sparse_find(L->g, lw_node_index(L, n)) : -1;
  if (si >= 0) return emit_conv_sparse(L, n, si, e);
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, s, d, p));
  ECG_TRY(conv_algo_check(L, n, r, xd, od, gm.m, k, s, gm.group, e));
  int u = lw_conv_params_decl(L, r, xd, od, gm.m, k, s, d, p, gm.group);
  L->conv_algo_next = 0;
  char buf[64];
  snprintf(buf, sizeof buf, "ecg_rt1_conv2d_scratch_floats(&cp%d, threads)", u);
  lw_need_scratch(L, buf);
  snprintf(buf, sizeof buf, "ecg_rt1_conv2d_packed_floats(&cp%d)", u);
  int off = lw_packed_slot(L, buf);
  const char *wp = lw_ptr(L, n->inputs[1]);
  if (L->t[n->inputs[1]].where == LW_CONST) {
    sb_printf(&L->init, "  ecg_rt1_conv2d_pack(&cp%d, %s, ctx->pk[%d]);\n", u, wp, off);
  } else {
    sb_printf(&L->code, "  ecg_rt1_conv2d_pack(&cp%d, %s, ctx->pk[%d]);\n", u, wp, off);
  }
  char bias[200] = "NULL";
  if (n->n_inputs > 2 && n->inputs[2] >= 0) snprintf(bias, sizeof bias, "%s", lw_ptr(L, n->inputs[2]));
  char cpr[32];
  lw_conv_params_ref(L, u, cpr, sizeof cpr);
  sb_printf(&L->code, "  ecg_rt1_conv2d(%s, %s, ctx->pk[%d], %s, ", cpr, lw_ptr(L, n->inputs[0]), off, bias);
  sb_printf(&L->code, "%s, ctx->scratch);\n", lw_ptr(L, n->outputs[0]));
  return ECG_OK;
}

/** ConvTranspose (1-D, 2-D) through ecg_rt1_convtranspose2d; output shape from inference. */
int emit_convtranspose(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n) || L->g->tensors[n->inputs[0]]->n_dims > 4) return emit_convtranspose_nd(L, n, e);
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, s, d, p));
  int u = lw_conv_params_decl(L, r, xd, od, gm.m, k, s, d, p, gm.group);
  char buf[64];
  snprintf(buf, sizeof buf, "ecg_rt1_convtranspose2d_scratch_floats(&cp%d)", u);
  lw_need_scratch(L, buf);
  char bias[200] = "NULL";
  if (n->n_inputs > 2 && n->inputs[2] >= 0) snprintf(bias, sizeof bias, "%s", lw_ptr(L, n->inputs[2]));
  char cpr[32];
  lw_conv_params_ref(L, u, cpr, sizeof cpr);
  sb_printf(&L->code, "  ecg_rt1_convtranspose2d(%s, %s, ", cpr, lw_ptr(L, n->inputs[0]));
  sb_printf(&L->code, "%s, %s, ", lw_ptr(L, n->inputs[1]), bias);
  sb_printf(&L->code, "%s, ctx->scratch);\n", lw_ptr(L, n->outputs[0]));
  return ECG_OK;
}

/* Batch strides (elements) of an operand of rank ro_ whose matrix part has mat dims (2, or
 * 1 for a 1-D operand, 0 for none), against the rbat batch dims bd of the output:
 * right-aligned numpy broadcasting, stride 0 along a broadcast dim. */
static void batch_strides(int rbat, const int64_t *bd, int r, const int64_t *d, const int64_t *st, int mat, int64_t *out) {
  int rb = r - mat;
  for (int i = 0; i < rbat; i++) {
    int j = i - (rbat - rb);
    out[i] = j >= 0 && d[j] != 1 && bd[i] != 1 ? st[j] : 0;
  }
}

/* MatMul as one ecg_rt1_sgemm per batch over strided views (lw_operand_view/
 * lw_output_view): the views' trans flags and leading dimensions, so absorbed permutations
 * (index maps, DNNFusion Fig. 3.5) move no data; plain operands are row-major views, and
 * broadcast batch dims have stride 0. */
static int matmul_strided(ecg_lower *L, const ecg_node *n, int va, const int64_t *sa, int vb, const int64_t *sb, int vo,
                          const int64_t *so, ecg_err *e) {
  int64_t ad[ECG_MAX_RANK], bd[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int ra = lw_dims(L, n->inputs[0], ad), rb = lw_dims(L, n->inputs[1], bd), ro = lw_dims(L, n->outputs[0], od);
  int64_t M = ra >= 2 ? ad[ra - 2] : 1, K = ad[ra - 1], N = rb >= 2 ? bd[rb - 1] : 1;
  /* element (m, k) of A at m*sam + k*sak; (k, n) of B at k*sbk + n*sbn; (m, n) of C at m*scm + n*scn */
  int64_t sam = ra >= 2 ? sa[ra - 2] : 0, sak = sa[ra - 1], sbk = rb >= 2 ? sb[rb - 2] : sb[0], sbn = rb >= 2 ? sb[rb - 1] : 0;
  int64_t scm = ra >= 2 ? (rb >= 2 ? so[ro - 2] : so[ro - 1]) : 0, scn = rb >= 2 ? so[ro - 1] : 0;
  int ta, tb;
  int64_t lda, ldb, ldc;
  if (sak == 1 || K == 1) { ta = 0; lda = sam > K ? sam : K; }
  else if (sam == 1 || M == 1) { ta = 1; lda = sak > M ? sak : M; }
  else return lw_node_err(L, n, e, "operand A's index map has no unit stride");
  if (sbn == 1 || N == 1) { tb = 0; ldb = sbk > N ? sbk : N; }
  else if (sbk == 1 || K == 1) { tb = 1; ldb = sbn > K ? sbn : K; }
  else return lw_node_err(L, n, e, "operand B's index map has no unit stride");
  if (scn != 1 && N != 1) return lw_node_err(L, n, e, "the output's index map has no unit stride along N");
  ldc = scm > N ? scm : N;
  int rbat = ro - (ra >= 2 ? 1 : 0) - (rb >= 2 ? 1 : 0);
  int64_t bdims[ECG_MAX_RANK], ost[ECG_MAX_RANK], abs_[ECG_MAX_RANK], bbs[ECG_MAX_RANK], obs[ECG_MAX_RANK], batches = 1;
  for (int i = 0; i < rbat; i++) { bdims[i] = od[i]; batches *= od[i]; }
  lw_strides(rbat, bdims, ost);
  batch_strides(rbat, bdims, ra, ad, sa, ra >= 2 ? 2 : 1, abs_);
  batch_strides(rbat, bdims, rb, bd, sb, rb >= 2 ? 2 : 1, bbs);
  for (int i = 0; i < rbat; i++) obs[i] = so[i];
  char Ab[200], Bb[200], Ob[200];
  snprintf(Ab, sizeof Ab, "%s", lw_ptr(L, va));
  snprintf(Bb, sizeof Bb, "%s", lw_ptr(L, vb));
  snprintf(Ob, sizeof Ob, "%s", lw_ptr(L, vo));
  sbuf *c = &L->code;
  sb_printf(c, "  for (int64_t bt = 0; bt < %lld; bt++) {\n    int64_t rem = bt, ao = 0, bo = 0, co = 0; (void)rem;\n", (long long)batches);
  for (int i = 0; i < rbat; i++)
    sb_printf(c, "    { int64_t q = rem / %lld; rem -= q * %lld; ao += q * %lld; bo += q * %lld; co += q * %lld; }\n", (long long)ost[i],
              (long long)ost[i], (long long)abs_[i], (long long)bbs[i], (long long)obs[i]);
  sb_printf(c, "    ecg_rt1_sgemm(%d, %d, %lld, %lld, %lld, 1.0f, %s + ao, %lld, %s + bo, %lld, 0.0f, %s + co, %lld);\n  }\n", ta, tb,
            (long long)M, (long long)N, (long long)K, Ab, (long long)lda, Bb, (long long)ldb, Ob, (long long)ldc);
  return ECG_OK;
}

/** MatMul with numpy batch broadcasting and 1-D operands. A constant B shared by every
 *  batch is prepacked once; otherwise one ecg_rt1_sgemm per batch. */
int emit_matmul(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n)) return lw_node_err(L, n, e, "only float32 MatMul is supported");
  int64_t ad[ECG_MAX_RANK], bd[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int ra = lw_dims(L, n->inputs[0], ad), rb = lw_dims(L, n->inputs[1], bd), ro = lw_dims(L, n->outputs[0], od);
  int64_t M = ra >= 2 ? ad[ra - 2] : 1, K = ad[ra - 1], N = rb >= 2 ? bd[rb - 1] : 1;
  int va, vb, vo;
  int64_t sa[ECG_MAX_RANK], sb[ECG_MAX_RANK], so[ECG_MAX_RANK];
  lw_operand_view(L, n, 0, &va, sa);
  lw_operand_view(L, n, 1, &vb, sb);
  lw_output_view(L, n, &vo, so);
  /* one GEMM [batches*M, K] x [K, N] with B prepacked (and the block's epilogue): plain
   * operands, B shared by every batch, A's batch dims contiguous and not broadcast */
  int rbat = ro - (ra >= 2 ? 1 : 0) - (rb >= 2 ? 1 : 0), one_gemm = va == n->inputs[0] && vb == n->inputs[1] && vo == n->outputs[0];
  int64_t batches = 1;
  for (int i = 0; i < rbat; i++) batches *= od[i];
  for (int i = 0; i < rb - 2; i++) one_gemm &= bd[i] == 1;
  for (int i = rbat - 1; i >= 0 && one_gemm; i--) { /* A's batch dims, right-aligned, are the output's */
    int j = i - (rbat - (ra > 2 ? ra - 2 : 0));
    if (od[i] != 1 && (j < 0 || ad[j] != od[i])) one_gemm = 0;
  }
  if (!one_gemm) return matmul_strided(L, n, va, sa, vb, sb, vo, so, e);
  char Ab[200], Bb[200], Ob[200];
  snprintf(Ab, sizeof Ab, "%s", lw_ptr(L, n->inputs[0]));
  snprintf(Bb, sizeof Bb, "%s", lw_ptr(L, n->inputs[1]));
  snprintf(Ob, sizeof Ob, "%s", lw_ptr(L, n->outputs[0]));
  char sz[96];
  snprintf(sz, sizeof sz, "ecg_rt1_sgemm_packed_b_floats(%lld, %lld)", (long long)K, (long long)N);
  int off = lw_packed_slot(L, sz);
  sbuf *dst = L->t[n->inputs[1]].where == LW_CONST ? &L->init : &L->code;
  sb_printf(dst, "  ecg_rt1_sgemm_pack_b(0, %lld, %lld, %s, %lld, ctx->pk[%d]);\n", (long long)K, (long long)N, Bb, (long long)N, off);
  sb_printf(&L->code, "  ecg_rt1_sgemm_packed(0, %lld, %lld, %lld, %s, %lld, ctx->pk[%d], NULL, %s, 0.0f, %s, %lld);\n",
            (long long)(batches * M), (long long)N, (long long)K, Ab, (long long)K, off, lw_act_arg(L), Ob, (long long)N);
  return ECG_OK;
}

/** Gemm: Y = alpha * op(A) op(B) + beta * C (C broadcast to [M, N]). */
void lw_gemm_geom_of(ecg_lower *L, const ecg_node *n, lw_gemm_geom *g) {
  lw_dims(L, n->inputs[0], g->ad);
  lw_dims(L, n->inputs[1], g->bd);
  lw_dims(L, n->outputs[0], g->od);
  g->ta = (int)ecg_attr_i(n, "transA", 0);
  g->tb = (int)ecg_attr_i(n, "transB", 0);
  g->alpha = ecg_attr_f(n, "alpha", 1.0f);
  g->beta = ecg_attr_f(n, "beta", 1.0f);
  g->M = g->od[0];
  g->N = g->od[1];
  g->K = g->ta ? g->ad[0] : g->ad[1];
  g->has_c = n->n_inputs > 2 && n->inputs[2] >= 0 && g->beta != 0.0f;
}

int emit_gemm(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n)) return lw_node_err(L, n, e, "only float32 Gemm is supported");
  lw_gemm_geom gg;
  lw_gemm_geom_of(L, n, &gg);
  const int64_t *ad = gg.ad, *bd = gg.bd, M = gg.M, N = gg.N, K = gg.K;
  int ta = gg.ta, tb = gg.tb, has_c = gg.has_c;
  float alpha = gg.alpha, beta = gg.beta;
  char Ab[200], Bb[200], Ob[200];
  snprintf(Ab, sizeof Ab, "%s", lw_ptr(L, n->inputs[0]));
  snprintf(Bb, sizeof Bb, "%s", lw_ptr(L, n->inputs[1]));
  snprintf(Ob, sizeof Ob, "%s", lw_ptr(L, n->outputs[0]));
  int64_t cd[ECG_MAX_RANK];
  int rc_ = has_c ? lw_dims(L, n->inputs[2], cd) : 0;
  int bias_n = has_c && beta == 1.0f && ((rc_ == 1 && cd[0] == N) || (rc_ == 2 && cd[0] == 1 && cd[1] == N));
  if (L->t[n->inputs[1]].where == LW_CONST && alpha == 1.0f && (!has_c || bias_n)) {
    char sz[96];
    snprintf(sz, sizeof sz, "ecg_rt1_sgemm_packed_b_floats(%lld, %lld)", (long long)K, (long long)N);
    int off = lw_packed_slot(L, sz);
    sb_printf(&L->init, "  ecg_rt1_sgemm_pack_b(%d, %lld, %lld, %s, %lld, ctx->pk[%d]);\n", tb, (long long)K, (long long)N, Bb,
              (long long)bd[1], off);
    char bias[200] = "NULL";
    if (has_c) snprintf(bias, sizeof bias, "%s", lw_ptr(L, n->inputs[2]));
    sb_printf(&L->code, "  ecg_rt1_sgemm_packed(%d, %lld, %lld, %lld, %s, %lld, ctx->pk[%d], %s, %s, 0.0f, %s, %lld);\n", ta,
              (long long)M, (long long)N, (long long)K, Ab, (long long)ad[1], off, bias, lw_act_arg(L), Ob, (long long)N);
    return ECG_OK;
  }
  if (has_c) {
    int ids[1] = {n->inputs[2]}, rank[1];
    int64_t dims[1][ECG_MAX_RANK];
    rank[0] = lw_dims(L, ids[0], dims[0]);
    if (lw_emit_map(L, n->outputs[0], 1, ids, dims, rank, "(($T)$a * $0)", beta, 0)) return ecg_errf(e, ECG_ERR_INTERNAL, "template");
  }
  sb_printf(&L->code, "  ecg_rt1_sgemm(%d, %d, %lld, %lld, %lld, (float)%.9g, %s, %lld, %s, %lld, %s, %s, %lld);\n", ta, tb, (long long)M, (long long)N,
            (long long)K, alpha, Ab, (long long)ad[1], Bb, (long long)bd[1], has_c ? "1.0f" : "0.0f", Ob, (long long)N);
  return ECG_OK;
}

/** MaxPool / AveragePool, 1-D and 2-D (ceil_mode via the inferred output shape). */
int emit_pool(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n) || L->g->tensors[n->inputs[0]]->n_dims > 4 || (n->n_outputs > 1 && n->outputs[1] >= 0))
    return emit_pool_nd(L, n, e);
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, s, d, p));
  int u = lw_uid(L);
  int64_t H = r == 4 ? xd[2] : 1, W = xd[r - 1], OH = r == 4 ? od[2] : 1, OW = od[r - 1];
  sb_printf(&L->decls, "static const ecg_pool_params pp%d = {%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld};\n",
            u, (long long)xd[0], (long long)xd[1], (long long)H, (long long)W, (long long)k[0], (long long)k[1], (long long)OH, (long long)OW,
            (long long)s[0], (long long)s[1], (long long)d[0], (long long)d[1], (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3],
            (long long)ecg_attr_i(n, "count_include_pad", 0));
  const char *fn = lw_op(n) == ECG_OP_MaxPool ? "ecg_rt1_maxpool2d" : "ecg_rt1_avgpool2d";
  sb_printf(&L->code, "  %s(&pp%d, %s, ", fn, u, lw_ptr(L, n->inputs[0]));
  sb_printf(&L->code, "%s);\n", lw_ptr(L, n->outputs[0]));
  return ECG_OK;
}

/** GlobalAveragePool / GlobalMaxPool over every spatial dim. */
int emit_global_pool(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n)) return lw_node_err(L, n, e, "only float32 pooling is supported");
  int64_t xd[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd);
  int64_t hw = 1;
  for (int i = 2; i < r; i++) hw *= xd[i];
  sb_printf(&L->code, "  %s(%lld, %lld, %s, ", lw_op(n) == ECG_OP_GlobalMaxPool ? "ecg_rt1_global_maxpool" : "ecg_rt1_global_avgpool",
            (long long)(xd[0] * xd[1]), (long long)hw, lw_ptr(L, n->inputs[0]));
  sb_printf(&L->code, "%s);\n", lw_ptr(L, n->outputs[0]));
  return ECG_OK;
}
