/* Emitters for the compute-intensive Many-to-Many operators: Conv, ConvTranspose,
 * MatMul, Gemm, pooling.  They call the blocked, vectorised runtime kernels
 * (tools/lower/runtime/ecg_rt.h) with shapes fixed at lowering time; constant weights
 * are prepacked once in create (DNNFusion §3.4.4; AGO §III complex operators). */
#include <stdlib.h>
#include <string.h>

#include "chain.h"
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

void lw_act_chain_init(const ecg_lower *L, int t, const int *ns, int n, char *buf, size_t sz) {
  float a = 0, b = 0;
  ecg_builtin_act k = n > 0 && t >= 0 ? ecg_builtin_act_chain(L->g, t, ns, n, &a, &b) : ECG_BACT_NONE;
  lw_act_init((int)k, a, b, buf, sz);
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
/* The initialiser of an ecg_conv_params into b: the input dims n, c, h, w and output dims oh,
 * ow as C expressions (numbers in a static lowering, lw_dim's expressions in a dynamic one),
 * the rest numbers; the schedule's forced strategy (L->conv_algo_next) last. */
static void conv_params_init(sbuf *b, ecg_lower *L, const char *const *dim6, int64_t m, const int64_t *k, const int64_t *s,
                             const int64_t *d, const int64_t *p, int64_t group) {
  char algo[32]; /* the schedule's forced strategy (emit_conv sets conv_algo_next; 0: the runtime picks),
                  * always written: -Wextra's missing-field-initializers rejects an omitted field */
  snprintf(algo, sizeof algo, ", %d", L->conv_algo_next);
  sb_printf(b, "{%s, %s, %s, %s, %lld, %lld, %lld, %s, %s, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %s%s}",
            dim6[0], dim6[1], dim6[2], dim6[3], (long long)m, (long long)k[0], (long long)k[1], dim6[4], dim6[5], (long long)s[0],
            (long long)s[1], (long long)d[0], (long long)d[1], (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3],
            (long long)group, act_none, algo);
}

int lw_conv_params_decl(ecg_lower *L, int r, const int64_t *xd, const int64_t *od, int64_t m, const int64_t *k,
                            const int64_t *s, const int64_t *d, const int64_t *p, int64_t group) {
  int64_t v[6] = {xd[0], xd[1], r == 4 ? xd[2] : 1, xd[r - 1], r == 4 ? od[2] : 1, od[r - 1]};
  char num[6][24];
  const char *dim6[6];
  for (int i = 0; i < 6; i++) { snprintf(num[i], sizeof num[i], "%lld", (long long)v[i]); dim6[i] = num[i]; }
  int u = lw_uid(L);
  sb_printf(&L->decls, "static const ecg_conv_params cp%d = ", u);
  conv_params_init(&L->decls, L, dim6, m, k, s, d, p, group);
  sb_printf(&L->decls, ";\n");
  return u;
}

/* Conv of a dynamic-shape build (dyn.c): the parameters from the run-time sizes, built where
 * they are used (prepare_ and the kernel, both of which hold the symbol constants); the
 * weights packed in prepare_ for the sizes of the run (the runtime picks the strategy and the
 * packed layout from them: Winograd, transposed GEMM, direct first layer are decided at run
 * time), into a buffer prepare_ grows. */
/* A windowed node's pads must be numbers in a dynamic build: auto_pad SAME on a symbolic
 * spatial size gives pads that depend on the size (refused, naming the node). */
static int dyn_pads(ecg_lower *L, const ecg_node *n, const int64_t *p, ecg_err *e) {
  for (int i = 0; i < 4; i++)
    if (p[i] < 0) return lw_node_err(L, n, e, "auto_pad SAME on a symbolic spatial size (pads decided at run time) is not supported with symbolic dims yet");
  return ECG_OK;
}

/* The run-time sizes of a 1-D or 2-D NCHW window operator from input x (rank r) to output
 * y, as ecg_conv_params takes them: n, c, h, w, oh, ow (lw_dim's expressions) into dims,
 * dim6 pointing at them. */
static void dyn_conv_dims(const ecg_lower *L, int x, int y, int r, char dims[6][768], const char **dim6) {
  const int t[6] = {x, x, x, x, y, y}, d[6] = {0, 1, 2, r - 1, 2, r - 1};
  for (int i = 0; i < 6; i++) {
    snprintf(dims[i], 768, "%s", (i == 2 || i == 4) && r != 4 ? "1" : lw_dim(L, t[i], d[i]));
    dim6[i] = dims[i];
  }
}

static int emit_conv_dyn(ecg_lower *L, const ecg_node *n, const ecg_conv_geom *gm, const int64_t *k, const int64_t *s,
                         const int64_t *d, const int64_t *p, ecg_err *e) {
  int x = n->inputs[0], y = n->outputs[0], r = (int)L->g->tensors[x]->n_dims;
  if (L->sched) return lw_node_err(L, n, e, "a tuned schedule is not supported with symbolic dims yet");
  ECG_TRY(dyn_pads(L, n, p, e));
  char dims[6][768];
  const char *dim6[6];
  dyn_conv_dims(L, x, y, r, dims, dim6);
  int slot = lw_dyn_packed_slot(L), u = lw_uid(L), wconst = L->t[n->inputs[1]].where == LW_CONST;
  char wp[200];
  snprintf(wp, sizeof wp, "%s", lw_ptr(L, n->inputs[1]));
  sb_printf(&L->prep, "  { /* %s */\n    const ecg_conv_params cp = ", n->name ? n->name : "");
  conv_params_init(&L->prep, L, dim6, gm->m, k, s, d, p, gm->group);
  sb_printf(&L->prep, ";\n    size_t sf = ecg_rt1_conv2d_scratch_floats(&cp, threads), pf = ecg_rt1_conv2d_packed_floats(&cp);\n"
                      "    if (sf > scratch) scratch = sf;\n"
                      "    if (pf > ctx->pk_cap[%d] || !ctx->pk[%d]) {\n      free(ctx->pk[%d]);\n"
                      "      if (!(ctx->pk[%d] = alloc64(sizeof(float) * pf))) { ctx->pk_cap[%d] = 0; snprintf(ctx->msg, sizeof ctx->msg, \"out of memory (packed weights)\"); return -4; }\n"
                      "      ctx->pk_cap[%d] = pf;\n    }\n",
            slot, slot, slot, slot, slot, slot);
  if (wconst) sb_printf(&L->prep, "    ecg_rt1_conv2d_pack(&cp, %s, ctx->pk[%d]);\n", wp, slot);
  sb_printf(&L->prep, "  }\n");
  sb_printf(&L->code, "  %secg_conv_params cp%d = ", L->epi_act ? "" : "const ", u);
  conv_params_init(&L->code, L, dim6, gm->m, k, s, d, p, gm->group);
  sb_printf(&L->code, ";\n");
  if (L->epi_act) sb_printf(&L->code, "  cp%d.act = %s;\n", u, lw_act_arg(L));
  if (!wconst) sb_printf(&L->code, "  ecg_rt1_conv2d_pack(&cp%d, %s, ctx->pk[%d]);\n", u, wp, slot);
  char bias[200] = "NULL";
  if (n->n_inputs > 2 && n->inputs[2] >= 0) snprintf(bias, sizeof bias, "%s", lw_ptr(L, n->inputs[2]));
  sb_printf(&L->code, "  ecg_rt1_conv2d(&cp%d, %s, ctx->pk[%d], %s, ", u, lw_ptr(L, x), slot, bias);
  sb_printf(&L->code, "%s, ctx->scratch);\n", lw_ptr(L, y));
  return ECG_OK;
}

/* The schedule's conv_algo for Conv node n (ecg-partition --tune), checked against what the
 * runtime can run: gemm and gemm_t any non-depthwise conv (gemm_t a plane of >= 32
 * positions, ecg_rt.h), winograd group 1, 3x3, stride 1, >= 8 channels in and out, blocked
 * group 1 (the GEMM path where the build has no AVX-512). Sets
 * L->conv_algo_next for lw_conv_params_decl; ECG_ERR_INPUT naming the node otherwise,
 * except in a kernel that shares its block's schedule with others (L->sched_shared: the
 * stages of an intensive-fusion block lowered with intensive_fusion off), where a conv
 * that cannot take it runs the runtime's choice and the block-level check refuses a
 * conv_algo no stage took. */
int lw_conv_algo_check(ecg_lower *L, const ecg_node *n, int r, const int64_t *xd, const int64_t *od, int64_t m,
                       const int64_t *k, const int64_t *s, int64_t group, ecg_err *e) {
  int a = L->sched ? L->sched->conv_algo : 0;
  L->conv_algo_next = 0;
  if (!a) return ECG_OK;
  int64_t c = xd[1], plane = (r == 4 ? od[2] : 1) * od[r - 1];
  const char *why = NULL;
  if (group > 1 && group == c && m % c == 0) why = "a depthwise conv has one kernel";
  else if (a == ECG_CONV_ALGO_GEMM_T && plane < 32) why = "gemm_t needs an output plane of at least 32 positions";
  else if (a == ECG_CONV_ALGO_WINOGRAD && (group != 1 || k[0] != 3 || k[1] != 3 || s[0] != 1 || s[1] != 1 || c < 8 || m < 8))
    why = "winograd needs group 1, a 3x3 kernel, stride 1 and at least 8 channels in and out";
  else if (a == ECG_CONV_ALGO_BLOCKED && group != 1) why = "blocked needs group 1";
  if (why && L->sched_shared) return ECG_OK;
  if (why) return lw_node_err(L, n, e, "schedule conv_algo %s does not apply: %s", ecg_conv_algo_name(a), why);
  L->sched_used |= LW_SCHED_CONV;
  L->conv_algo_next = a;
  return ECG_OK;
}

int lw_conv_weights(ecg_lower *L, const ecg_node *n, int u) {
  char buf[64];
  snprintf(buf, sizeof buf, "ecg_rt1_conv2d_packed_floats(&cp%d)", u);
  int off = lw_packed_slot(L, buf);
  const char *wp = lw_ptr(L, n->inputs[1]);
  sb_printf(L->t[n->inputs[1]].where == LW_CONST ? &L->init : &L->code, "  ecg_rt1_conv2d_pack(&cp%d, %s, ctx->pk[%d]);\n", u, wp,
            off);
  return off;
}

/** Conv (1-D, 2-D; grouped, depthwise, dilated) through ecg_rt1_conv2d with weights packed
 *  in create (or in the kernel when the weights are a graph input). */
int emit_conv(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int dyn = lw_node_dyn(L, n);
  if (dyn && (!all_float32(L, n) || L->g->tensors[n->inputs[0]]->n_dims > 4))
    return lw_node_err(L, n, e, "a conv other than 1-D or 2-D float32 is not supported with symbolic dims yet");
  if (!all_float32(L, n) || L->g->tensors[n->inputs[0]]->n_dims > 4) return emit_conv_nd(L, n, e);
  int si = L->sparse != LW_SPARSE_DENSE ? ecg_sparse_find(L->g, lw_node_index(L, n)) : -1;
  if (si >= 0 && dyn) return lw_node_err(L, n, e, "a pattern-sparse conv is not supported with symbolic dims yet");
  if (si >= 0) return emit_conv_sparse(L, n, si, e);
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, s, d, p));
  if (dyn) return emit_conv_dyn(L, n, &gm, k, s, d, p, e);
  ECG_TRY(lw_conv_algo_check(L, n, r, xd, od, gm.m, k, s, gm.group, e));
  int u = lw_conv_params_decl(L, r, xd, od, gm.m, k, s, d, p, gm.group);
  L->conv_algo_next = 0;
  char buf[64];
  snprintf(buf, sizeof buf, "ecg_rt1_conv2d_scratch_floats(&cp%d, threads)", u);
  lw_need_scratch(L, buf);
  int off = lw_conv_weights(L, n, u);
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
  int dyn = lw_node_dyn(L, n);
  if (dyn && (!all_float32(L, n) || L->g->tensors[n->inputs[0]]->n_dims > 4))
    return lw_node_err(L, n, e, "a ConvTranspose other than 1-D or 2-D float32 is not supported with symbolic dims yet");
  if (!all_float32(L, n) || L->g->tensors[n->inputs[0]]->n_dims > 4) return emit_convtranspose_nd(L, n, e);
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, s, d, p));
  if (dyn) { /* a dynamic build: the parameters from the run-time sizes; scratch sized in prepare_ */
    ECG_TRY(dyn_pads(L, n, p, e));
    int x = n->inputs[0], y = n->outputs[0], u = lw_uid(L);
    char dims[6][768];
    const char *dim6[6];
    dyn_conv_dims(L, x, y, r, dims, dim6);
    sb_printf(&L->prep, "  { /* %s */\n    const ecg_conv_params cp = ", n->name ? n->name : "");
    conv_params_init(&L->prep, L, dim6, gm.m, k, s, d, p, gm.group);
    sb_printf(&L->prep, ";\n    size_t sf = ecg_rt1_convtranspose2d_scratch_floats(&cp);\n    if (sf > scratch) scratch = sf;\n  }\n");
    sb_printf(&L->code, "  %secg_conv_params cp%d = ", L->epi_act ? "" : "const ", u);
    conv_params_init(&L->code, L, dim6, gm.m, k, s, d, p, gm.group);
    sb_printf(&L->code, ";\n");
    if (L->epi_act) sb_printf(&L->code, "  cp%d.act = %s;\n", u, lw_act_arg(L));
    char bias[200] = "NULL";
    if (n->n_inputs > 2 && n->inputs[2] >= 0) snprintf(bias, sizeof bias, "%s", lw_ptr(L, n->inputs[2]));
    sb_printf(&L->code, "  ecg_rt1_convtranspose2d(&cp%d, %s, ", u, lw_ptr(L, x));
    sb_printf(&L->code, "%s, %s, ", lw_ptr(L, n->inputs[1]), bias);
    sb_printf(&L->code, "%s, ctx->scratch);\n", lw_ptr(L, y));
    return ECG_OK;
  }
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

/* MatMul n is one GEMM [batches*M, K] x [K, N] with B prepacked (and the block's epilogue):
 * plain operands (no index maps of its kernel), B shared by every batch, A's batch dims
 * contiguous and not broadcast. */
static int matmul_one_gemm(ecg_lower *L, const ecg_node *n) {
  int64_t ad[ECG_MAX_RANK], bd[ECG_MAX_RANK], od[ECG_MAX_RANK], s[ECG_MAX_RANK];
  int ra = lw_dims(L, n->inputs[0], ad), rb = lw_dims(L, n->inputs[1], bd), ro = lw_dims(L, n->outputs[0], od);
  int va, vb, vo;
  lw_operand_view(L, n, 0, &va, s);
  lw_operand_view(L, n, 1, &vb, s);
  lw_output_view(L, n, &vo, s);
  int rbat = ro - (ra >= 2 ? 1 : 0) - (rb >= 2 ? 1 : 0), one_gemm = va == n->inputs[0] && vb == n->inputs[1] && vo == n->outputs[0];
  for (int i = 0; i < rb - 2; i++) one_gemm &= bd[i] == 1;
  for (int i = rbat - 1; i >= 0 && one_gemm; i--) { /* A's batch dims, right-aligned, are the output's */
    int j = i - (rbat - (ra > 2 ? ra - 2 : 0));
    if (od[i] != 1 && (j < 0 || ad[j] != od[i])) one_gemm = 0;
  }
  return one_gemm;
}

int lw_gemm_takes_bias_n(ecg_lower *L, const ecg_node *n) {
  if (!all_float32(L, n) || lw_node_dyn(L, n)) return 0;
  ecg_emit_fn fn = ecg_emitter(lw_op(n));
  if (fn == emit_matmul) return matmul_one_gemm(L, n);
  if (fn != emit_gemm) return 0;
  lw_gemm_geom gg;
  lw_gemm_geom_of(L, n, &gg);
  return L->t[n->inputs[1]].where == LW_CONST && gg.alpha == 1.0f && !gg.has_c;
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
  int rbat = ro - (ra >= 2 ? 1 : 0) - (rb >= 2 ? 1 : 0), one_gemm = matmul_one_gemm(L, n);
  int64_t batches = 1;
  for (int i = 0; i < rbat; i++) batches *= od[i];
  /* a dynamic build: symbolic dims only among A's rows (the batch and M dims), B a static
   * [K, N] matrix: one GEMM of run-time rows */
  int dyn = lw_node_dyn(L, n);
  int plain = va == n->inputs[0] && vb == n->inputs[1] && vo == n->outputs[0], same_batch = plain && ra == rb && ra == ro && ra >= 3;
  for (int i = 0; same_batch && i < ro - 2; i++)
    same_batch = lw_dyn_same_dim(L, n->inputs[0], i, n->outputs[0], i) && lw_dyn_same_dim(L, n->inputs[1], i, n->outputs[0], i);
  if (dyn && same_batch && !L->epi_act) {
    /* a dynamic build, both operands [batch..., rows, cols] with the same batch dims: one GEMM per batch */
    int A = n->inputs[0], B = n->inputs[1], C = n->outputs[0];
    char m_[768], n_[768], k_[768];
    snprintf(m_, sizeof m_, "%s", lw_dim(L, A, ra - 2));
    snprintf(n_, sizeof n_, "%s", lw_dim(L, B, rb - 1));
    snprintf(k_, sizeof k_, "%s", lw_dim(L, A, ra - 1));
    sb_printf(&L->code, "  {\n    const int64_t M_ = %s, N_ = %s, K_ = %s, B_ = %s;\n", m_, n_, k_, lw_dim_prod(L, C, 0, ro - 2));
    sb_printf(&L->code, "    const float *a_ = %s;\n", lw_ptr(L, A));
    sb_printf(&L->code, "    const float *b_ = %s;\n", lw_ptr(L, B));
    sb_printf(&L->code, "    float *c_ = %s;\n", lw_ptr(L, C));
    sb_printf(&L->code, "    for (int64_t bt = 0; bt < B_; bt++)\n"
                        "      ecg_rt1_sgemm(0, 0, M_, N_, K_, 1.0f, a_ + bt * M_ * K_, K_, b_ + bt * K_ * N_, N_, 0.0f, c_ + bt * M_ * N_, N_);\n  }\n");
    return ECG_OK;
  }
  if (dyn && (!one_gemm || rb != 2 || lw_tensor_dyn(L, n->inputs[1]) || ra < 2 ||
              (lw_tensor_dyn(L, n->inputs[0]) && L->dexpr[n->inputs[0]][ra - 1])))
    return lw_node_err(L, n, e, "a MatMul with symbolic dims other than the rows of A (B a static matrix) is not supported with symbolic dims yet");
  if (!one_gemm) return matmul_strided(L, n, va, sa, vb, sb, vo, so, e);
  char rows[768];
  if (dyn) snprintf(rows, sizeof rows, "%s", lw_dim_prod(L, n->inputs[0], 0, ra - 1));
  else snprintf(rows, sizeof rows, "%lld", (long long)(batches * M));
  char Ab[200], Bb[200], Ob[200];
  snprintf(Ab, sizeof Ab, "%s", lw_ptr(L, n->inputs[0]));
  snprintf(Bb, sizeof Bb, "%s", lw_ptr(L, n->inputs[1]));
  snprintf(Ob, sizeof Ob, "%s", lw_ptr(L, n->outputs[0]));
  char sz[96];
  snprintf(sz, sizeof sz, "ecg_rt1_sgemm_packed_b_floats(%lld, %lld)", (long long)K, (long long)N);
  int off = lw_packed_slot(L, sz);
  sbuf *dst = L->t[n->inputs[1]].where == LW_CONST ? &L->init : &L->code;
  sb_printf(dst, "  ecg_rt1_sgemm_pack_b(0, %lld, %lld, %s, %lld, ctx->pk[%d]);\n", (long long)K, (long long)N, Bb, (long long)N, off);
  if (L->epi_bias) L->epi_bias_used = 1;
  sb_printf(&L->code, "  ecg_rt1_sgemm_packed(0, %s, %lld, %lld, %s, %lld, ctx->pk[%d], %s, %s, 0.0f, %s, %lld);\n",
            rows, (long long)N, (long long)K, Ab, (long long)K, off, L->epi_bias ? L->epi_bias : "NULL", lw_act_arg(L), Ob, (long long)N);
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
    else if (L->epi_bias) { /* the block's bias Add (ecg_bias_n_of), applied per column */
      snprintf(bias, sizeof bias, "%s", L->epi_bias);
      L->epi_bias_used = 1;
    }
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

/* Declare `ecg_pool_params pp<u>` for pooling node n (input rank r, geometry from
 * lw_geom_2d): a file-scope constant, or a local of the kernel in a dynamic build (the sizes
 * through lw_dim: numbers, or run-time expressions); returns u. */
static int pool_params_decl(ecg_lower *L, const ecg_node *n, int r, int dyn, const int64_t *k, const int64_t *s,
                            const int64_t *d, const int64_t *p) {
  int u = lw_uid(L), x = n->inputs[0], y = n->outputs[0];
  char H[768], W[768], OH[768], OW[768];
  snprintf(H, sizeof H, "%s", r == 4 ? lw_dim(L, x, 2) : "1");
  snprintf(W, sizeof W, "%s", lw_dim(L, x, r - 1));
  snprintf(OH, sizeof OH, "%s", r == 4 ? lw_dim(L, y, 2) : "1");
  snprintf(OW, sizeof OW, "%s", lw_dim(L, y, r - 1));
  sbuf *to = dyn ? &L->code : &L->decls;
  sb_printf(to, "%sconst ecg_pool_params pp%d = {%s, ", to == &L->code ? "  " : "static ", u, lw_dim(L, x, 0));
  sb_printf(to, "%s, %s, %s, %lld, %lld, %s, %s, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld};\n",
            lw_dim(L, x, 1), H, W, (long long)k[0], (long long)k[1], OH, OW,
            (long long)s[0], (long long)s[1], (long long)d[0], (long long)d[1], (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3],
            (long long)ecg_attr_i(n, "count_include_pad", 0));
  return u;
}

int lw_pool_params_decl(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], k[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  if (lw_geom_2d(L, n, e, &gm, k, s, d, p) != ECG_OK) return -1;
  return pool_params_decl(L, n, r, 0, k, s, d, p);
}

/** MaxPool / AveragePool, 1-D and 2-D (ceil_mode via the inferred output shape). */
int emit_pool(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int dyn = lw_node_dyn(L, n);
  if (!all_float32(L, n) || L->g->tensors[n->inputs[0]]->n_dims > 4 || (n->n_outputs > 1 && n->outputs[1] >= 0))
    return dyn ? lw_node_err(L, n, e, "pooling other than 1-D or 2-D float32 without indices is not supported with symbolic dims yet")
               : emit_pool_nd(L, n, e);
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, s, d, p));
  if (dyn) ECG_TRY(dyn_pads(L, n, p, e));
  (void)od;
  int u = pool_params_decl(L, n, r, dyn, k, s, d, p);
  const char *fn = lw_op(n) == ECG_OP_MaxPool ? "ecg_rt1_maxpool2d" : "ecg_rt1_avgpool2d";
  sb_printf(&L->code, "  %s(&pp%d, %s, ", fn, u, lw_ptr(L, n->inputs[0]));
  sb_printf(&L->code, "%s);\n", lw_ptr(L, n->outputs[0]));
  return ECG_OK;
}

/** GlobalAveragePool / GlobalMaxPool over every spatial dim. */
int emit_global_pool(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n)) return lw_node_err(L, n, e, "only float32 pooling is supported");
  int x = n->inputs[0], r = (int)L->g->tensors[x]->n_dims;
  char nc[768];
  snprintf(nc, sizeof nc, "%s", lw_dim_prod(L, x, 0, 2));
  sb_printf(&L->code, "  %s(%s, %s, %s, ", lw_op(n) == ECG_OP_GlobalMaxPool ? "ecg_rt1_global_maxpool" : "ecg_rt1_global_avgpool",
            nc, lw_dim_prod(L, x, 2, r), lw_ptr(L, x));
  sb_printf(&L->code, "%s);\n", lw_ptr(L, n->outputs[0]));
  return ECG_OK;
}
