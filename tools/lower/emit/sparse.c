/* Emitter for pattern-pruned convolutions (PatDNN, Niu dissertation §2.5): a Conv that
 * carries a pattern annotation (g->sparse_convs, built by ecg-prune) gets
 *   fkw: a kernel generated for its layer: filters in FKR order, for each filter the
 *        kernels of one pattern after another, each pattern's loop straight-line code
 *        with the pattern's tap offsets as constants (no branch, no index decoding in
 *        the inner loop, which runs along an output row and vectorises); the FKW
 *        arrays of the ECG go into weights.bin;
 *   csr: the CSR baseline (ecg_rt1_csr_conv2d) over the same weights.
 * Both read a zero-padded copy of the input (ecg_rt1_sparse_pad, in scratch), thread over
 * (filter, row block) tiles, and run the block's epilogue on each finished tile. Not
 * done (yet): register-level load-redundancy elimination across kernel rows and filters
 * (§2.5.4) and per-layer auto-tuning (§2.5.5); the row block is fixed (<= 2048 floats). */
#include <stdlib.h>
#include <string.h>

#include "emit.h"

#define TILE_FLOATS 2048 /* output floats per tile (the accumulators stay in L1) */

/* Put arr[n] (int32) into weights.bin; its C expression into buf. */
static int blob_i32(ecg_lower *L, const int32_t *arr, size_t n, char *buf, size_t cap, ecg_err *e) {
  size_t off = lw_blob(L, arr, n * sizeof *arr);
  if (off == (size_t)-1) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  snprintf(buf, cap, "((const int32_t *)(ctx->w + %zu))", off);
  return ECG_OK;
}

static int blob_f32(ecg_lower *L, const float *arr, size_t n, char *buf, size_t cap, ecg_err *e) {
  size_t off = lw_blob(L, arr, n * sizeof *arr);
  if (off == (size_t)-1) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  snprintf(buf, cap, "((const float *)(ctx->w + %zu))", off);
  return ECG_OK;
}

/* The FKW kernel of one layer into L->decls as `static void fkw<u>(...)`. */
static void gen_fkw(ecg_lower *L, int u, const ecg_sparse_conv *s, const int64_t *od, const int64_t *k, const int64_t *st,
                    const int64_t *dl, int64_t wp, int64_t hp) {
  sbuf *b = &L->decls;
  int64_t m = od[1], oh = od[2], ow = od[3], rb = TILE_FLOATS / ow;
  if (rb < 1) rb = 1;
  if (rb > oh) rb = oh;
  int64_t nrb = (oh + rb - 1) / rb;
  size_t np = s->n_patterns;
  sb_printf(b, "/* FKW pattern-sparse conv (PatDNN): %lld filters, %zu kernels, %zu patterns; tiles of %lld x %lld outputs */\n"
               "static void fkw%d(const ecg_conv_params *p, const float *xp, const float *wt, const int32_t *off, const int32_t *reo,\n"
               "                  const int32_t *idx, const int32_t *str, const int32_t *wof, const float *bias, float *y) {\n"
               "  enum { M = %lld, OH = %lld, OW = %lld, RB = %lld, NRB = %lld };\n  const size_t PL = (size_t)%lld * %lld;\n"
               "#pragma omp parallel for schedule(dynamic, 1)\n"
               "  for (int t = 0; t < M * NRB; t++) {\n"
               "    const int f = t / NRB, y0 = (t %% NRB) * RB, ny = OH - y0 < RB ? OH - y0 : RB, o = reo[f];\n"
               "    float acc[RB * OW];\n    const float b = bias ? bias[o] : 0.f;\n"
               "    for (int i = 0; i < ny * OW; i++) acc[i] = b;\n"
               "    const int32_t *st = str + (size_t)f * %zu, k0 = off[f];\n    const float *w = wt + wof[f];\n",
            (long long)m, s->n_index, np, (long long)rb, (long long)ow, u, (long long)m, (long long)oh, (long long)ow, (long long)rb,
            (long long)nrb, (long long)hp, (long long)wp, np + 1);
  for (size_t p = 0; p < np; p++) {
    int64_t taps[32];
    int nt = 0;
    char pic[64];
    int pc = 0;
    for (int64_t q = 0; q < k[0] * k[1]; q++) {
      if (q && q % k[1] == 0) pic[pc++] = '/';
      pic[pc++] = (s->patterns[p] >> q & 1u) ? 'x' : '.';
      if (s->patterns[p] >> q & 1u) taps[nt++] = (q / k[1]) * dl[0] * wp + (q % k[1]) * dl[1];
    }
    pic[pc] = 0;
    sb_printf(b, "    /* pattern %zu: %s */\n    for (int32_t k = k0 + st[%zu]; k < k0 + st[%zu]; k++, w += %d) {\n"
                 "      const float *xc = xp + (size_t)idx[k] * PL + (size_t)y0 * %lld;\n",
              p, pic, p, p + 1, nt, (long long)(st[0] * wp));
    for (int i = 0; i < nt; i++) sb_printf(b, "      const float w%d = w[%d];\n", i, i);
    sb_printf(b, "      for (int yy = 0; yy < ny; yy++) {\n        const float *xr = xc + (size_t)yy * %lld;\n        float *a = acc + yy * OW;\n"
                 "#pragma omp simd\n        for (int ox = 0; ox < OW; ox++) a[ox] +=",
              (long long)(st[0] * wp));
    for (int i = 0; i < nt; i++) sb_printf(b, "%s w%d * xr[%lld + ox * %lld]", i ? " +" : "", i, (long long)taps[i], (long long)st[1]);
    sb_printf(b, ";\n      }\n    }\n");
  }
  sb_printf(b, "    float *yo = y + ((size_t)o * OH + y0) * OW;\n    memcpy(yo, acc, (size_t)ny * OW * sizeof *yo);\n"
               "    ecg_rt1_act_apply(p->act, yo, (size_t)ny * OW);\n  }\n}\n\n");
}

int emit_conv_sparse(ecg_lower *L, const ecg_node *n, int si, ecg_err *e) {
  const ecg_sparse_conv *s = L->g->sparse_convs[si];
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], st[2], dl[2], pd[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, st, dl, pd));
  if (r != 4 || gm.group != 1 || od[3] > TILE_FLOATS)
    return lw_node_err(L, n, e, "a pattern-annotated Conv must be 2-D, group 1, with output rows of at most %d (lower with --sparse dense)", TILE_FLOATS);
  int64_t hp = (od[2] - 1) * st[0] + (k[0] - 1) * dl[0] + 1, wp = (od[3] - 1) * st[1] + (k[1] - 1) * dl[1] + 1;
  int64_t m = od[1], c = xd[1], kk = k[0] * k[1];
  int u = lw_conv_params_decl(L, r, xd, od, m, k, st, dl, pd, 1);
  char buf[96], cpr[32], bias[200] = "NULL", a0[96], a1[96], a2[96], a3[96], a4[96], a5[96];
  snprintf(buf, sizeof buf, "%lld", (long long)(c * hp * wp));
  lw_need_scratch(L, buf);
  if (n->n_inputs > 2 && n->inputs[2] >= 0) snprintf(bias, sizeof bias, "%s", lw_ptr(L, n->inputs[2]));
  lw_conv_params_ref(L, u, cpr, sizeof cpr);
  if (L->sparse == LW_SPARSE_FKW) {
    size_t np = s->n_patterns;
    int32_t *wof = malloc((size_t)m * sizeof *wof + 4);
    if (!wof) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    int32_t run = 0;
    for (int64_t f = 0; f < m; f++) { /* first weight of each reordered filter */
      wof[f] = run;
      for (size_t p = 0; p < np; p++)
        run += (s->stride[f * (np + 1) + p + 1] - s->stride[f * (np + 1) + p]) * __builtin_popcount(s->patterns[p]);
    }
    int rc = blob_f32(L, s->weight, s->n_weight, a0, sizeof a0, e);
    if (!rc) rc = blob_i32(L, s->offset, s->n_offset, a1, sizeof a1, e);
    if (!rc) rc = blob_i32(L, s->reorder, s->n_reorder, a2, sizeof a2, e);
    if (!rc) rc = blob_i32(L, s->index, s->n_index, a3, sizeof a3, e);
    if (!rc) rc = blob_i32(L, s->stride, s->n_stride, a4, sizeof a4, e);
    if (!rc) rc = blob_i32(L, wof, (size_t)m, a5, sizeof a5, e);
    free(wof);
    ECG_TRY(rc);
    gen_fkw(L, u, s, od, k, st, dl, wp, hp);
  } else { /* CSR of the dense weight, filters in their own order */
    const float *w = (const float *)L->g->tensors[n->inputs[1]]->data.data;
    int32_t *rowptr = malloc(((size_t)m + 1) * sizeof *rowptr), *col = malloc((size_t)(m * c * kk) * sizeof *col + 4);
    float *val = malloc((size_t)(m * c * kk) * sizeof *val + 4);
    int rc = rowptr && col && val ? ECG_OK : ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    size_t nz = 0;
    for (int64_t f = 0; rc == ECG_OK && f < m; f++) {
      rowptr[f] = (int32_t)nz;
      for (int64_t q = 0; q < c * kk; q++)
        if (w[f * c * kk + q] != 0.0f) { col[nz] = (int32_t)q; val[nz++] = w[f * c * kk + q]; }
    }
    if (rc == ECG_OK) rowptr[m] = (int32_t)nz;
    if (!rc) rc = blob_i32(L, rowptr, (size_t)m + 1, a1, sizeof a1, e);
    if (!rc) rc = blob_i32(L, col, nz, a2, sizeof a2, e);
    if (!rc) rc = blob_f32(L, val, nz, a0, sizeof a0, e);
    free(rowptr); free(col); free(val);
    ECG_TRY(rc);
  }
  L->n_sparse++;
  const char *x = lw_ptr(L, n->inputs[0]);
  sb_printf(&L->code, "  for (int img = 0; img < %lld; img++) {\n    ecg_rt1_sparse_pad(&cp%d, %s + (size_t)img * %lld, ctx->scratch, %lld, %lld);\n",
            (long long)xd[0], u, x, (long long)(c * xd[2] * xd[3]), (long long)hp, (long long)wp);
  const char *y = lw_ptr(L, n->outputs[0]);
  if (L->sparse == LW_SPARSE_FKW)
    sb_printf(&L->code, "    fkw%d(%s, ctx->scratch, %s, %s, %s, %s, %s, %s, %s, %s + (size_t)img * %lld);\n  }\n", u, cpr, a0, a1, a2, a3,
              a4, a5, bias, y, (long long)(m * od[2] * od[3]));
  else
    sb_printf(&L->code, "    ecg_rt1_csr_conv2d(%s, ctx->scratch, %lld, %lld, %s, %s, %s, %s, %s + (size_t)img * %lld);\n  }\n", cpr, (long long)hp,
              (long long)wp, a1, a2, a0, bias, y, (long long)(m * od[2] * od[3]));
  return ECG_OK;
}
