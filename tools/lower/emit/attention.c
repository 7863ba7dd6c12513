/* Emitters for the opset-23 transformer operators RotaryEmbedding and Attention (ONNX
 * Operators.md RotaryEmbedding-23, Attention-23), float32.  Operands are read once by
 * format's ecg_rotary_resolve / ecg_attention_resolve, as shape inference reads them.
 * Attention is one pass over the keys per query row with an online softmax (running
 * maximum and sum, the accumulator rescaled when the maximum grows; Milakov & Gimelshein
 * 2018, as FlashAttention), in double: no score matrix is materialised. */
#include "emit.h"

/** RotaryEmbedding (23): X 4-D [batch, heads, seq, head] or 3-D [batch, seq, heads * head];
 *  per (batch, seq, head) row, pairs (i, i + rot/2) (or (2i, 2i+1) when interleaved) of
 *  the first rot elements are rotated by the cache row's cos/sin: (c*a - s*b, s*a + c*b);
 *  the rest is copied.  The cache row is position_ids[b, s] (clamped into the cache, where
 *  ONNX Runtime fails) or (b, s) without position_ids.  Errors: not float32. */
int emit_rotary(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  for (int k = 0; k < 3; k++)
    if (L->g->tensors[n->inputs[k]]->dtype != ECG_FLOAT) return lw_node_err(L, n, e, "only float32 is supported");
  ecg_rotary_geom rg;
  ECG_TRY(ecg_rotary_resolve(L->g, n, &rg, e));
  int64_t B = rg.b, H = rg.heads, S = rg.seq, D = rg.head, R2 = rg.rot / 2, CC = rg.cache_cols;
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const float *x = %s, *cs = %s, *sn = %s;\n", lw_ptr(L, n->inputs[0]), lw_ptr(L, n->inputs[1]), lw_ptr(L, n->inputs[2]));
  if (rg.has_pos) sb_printf(c, "    const int64_t *pos = %s;\n", lw_ptr(L, n->inputs[3]));
  sb_printf(c, "    float *y = %s;\n", lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 32768)\n", (long long)(B * H * S * D));
  sb_printf(c, "    for (int64_t r = 0; r < %lld; r++) {\n      int64_t b = r / %lld, s = (r / %lld) %% %lld, h = r %% %lld;\n", (long long)(B * S * H),
            (long long)(S * H), (long long)H, (long long)S, (long long)H);
  if (rg.x_rank == 4) sb_printf(c, "      int64_t off = ((b * %lld + h) * %lld + s) * %lld;\n", (long long)H, (long long)S, (long long)D);
  else sb_printf(c, "      int64_t off = ((b * %lld + s) * %lld + h) * %lld;\n", (long long)S, (long long)H, (long long)D);
  if (rg.has_pos)
    sb_printf(c, "      int64_t p = pos[b * %lld + s];\n      if (p < 0) p = 0;\n      if (p > %lld) p = %lld;\n", (long long)S, (long long)(rg.positions - 1),
              (long long)(rg.positions - 1));
  else sb_printf(c, "      int64_t p = b * %lld + s;\n", (long long)S);
  sb_printf(c, "      const float *cr = cs + p * %lld, *sr = sn + p * %lld, *xr = x + off;\n      float *yr = y + off;\n", (long long)CC, (long long)CC);
  sb_printf(c, "      for (int64_t i = 0; i < %lld; i++) {\n", (long long)R2);
  if (rg.interleaved) sb_printf(c, "        int64_t i1 = 2 * i, i2 = 2 * i + 1;\n");
  else sb_printf(c, "        int64_t i1 = i, i2 = i + %lld;\n", (long long)R2);
  sb_printf(c, "        float a = xr[i1], bb = xr[i2], co = cr[i], si = sr[i];\n        yr[i1] = co * a - si * bb;\n        yr[i2] = si * a + co * bb;\n      }\n");
  sb_printf(c, "      for (int64_t i = %lld; i < %lld; i++) yr[i] = xr[i];\n    }\n  }\n", (long long)(2 * R2), (long long)D);
  return ECG_OK;
}

/* Offset expression of row (b, head hv, position j) of a K or V input of head size hd:
 * 4-D [B, heads, seq, hd] or 3-D [B, seq, heads * hd]. */
static void kv_row(sbuf *c, int rank, int64_t heads, int64_t seq, int64_t hd, const char *hv, const char *j) {
  if (rank == 4) sb_printf(c, "((b * %lld + %s) * %lld + (%s)) * %lld", (long long)heads, hv, (long long)seq, j, (long long)hd);
  else sb_printf(c, "((b * %lld + (%s)) * %lld + %s) * %lld", (long long)seq, j, (long long)heads, hv, (long long)hd);
}

/** Attention (23), float32: for each (batch, q head, query) row, over the total_seq keys
 *  (past_key's first, then K's), score = scale * q.k (double), softcap * tanh(score /
 *  softcap) when softcap > 0, then the mask: is_causal drops keys j > i + past_seq (the
 *  query's own position counted after the past), a bool mask drops false entries, an
 *  additive mask is added; softmax over the kept keys and the weighted sum of V rows
 *  (online, see the file comment).  A row with every key masked gives 0.  Grouped-query
 *  heads read kv head h / (q_heads / kv_heads).  present_key / present_value, when
 *  wanted, are past ++ new along the sequence ([batch, kv_heads, total, head]).
 *  Errors: not float32. */
int emit_attention(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  for (int k = 0; k < 3; k++)
    if (L->g->tensors[n->inputs[k]]->dtype != ECG_FLOAT) return lw_node_err(L, n, e, "only float32 is supported");
  ecg_attention_geom ag;
  ECG_TRY(ecg_attention_resolve(L->g, n, &ag, e));
  int64_t B = ag.b, QH = ag.qh, KVH = ag.kvh, QS = ag.qs, KS = ag.ks, P = ag.past, T = ag.total, D = ag.d, DV = ag.dv, GRP = QH / KVH;
  int rank = ag.rank;
  char jn[48]; /* the position in K / V of key j (after the past) */
  snprintf(jn, sizeof jn, "j - %lld", (long long)P);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const float *q = %s, *k = %s, *v = %s;\n", lw_ptr(L, n->inputs[0]), lw_ptr(L, n->inputs[1]), lw_ptr(L, n->inputs[2]));
  if (P > 0) sb_printf(c, "    const float *pk = %s, *pv = %s;\n", lw_ptr(L, n->inputs[4]), lw_ptr(L, n->inputs[5]));
  int64_t mst[ECG_MAX_RANK] = {0};
  if (ag.mask_rank >= 0) {
    int64_t full[4] = {B, QH, QS, T};
    lw_bcast_strides(4, full, ag.mask_rank, ag.mask_dims, mst);
    sb_printf(c, "    const %s *mk = %s;\n", lw_ctype(L, n->inputs[3]), lw_ptr(L, n->inputs[3]));
  }
  sb_printf(c, "    float *y = %s;\n", lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 65536)\n", (long long)(B * QH * QS * T * (D + DV)));
  sb_printf(c, "    for (int64_t r = 0; r < %lld; r++) {\n", (long long)(B * QH * QS));
  sb_printf(c, "      int64_t i = r %% %lld, h = (r / %lld) %% %lld, b = r / %lld, kh = h / %lld;\n", (long long)QS, (long long)QS, (long long)QH,
            (long long)(QS * QH), (long long)GRP);
  sb_printf(c, "      const float *qr = q + ");
  kv_row(c, rank, QH, QS, D, "h", "i");
  sb_printf(c, ";\n      float *yr = y + ");
  kv_row(c, rank, QH, QS, DV, "h", "i");
  sb_printf(c, ";\n      double acc[%lld], mx = -INFINITY, sum = 0;\n", (long long)DV);
  sb_printf(c, "      for (int64_t d = 0; d < %lld; d++) acc[d] = 0;\n", (long long)DV);
  sb_printf(c, "      for (int64_t j = 0; j < %lld; j++) {\n", (long long)T);
  if (ag.causal) sb_printf(c, "        if (j > i + %lld) break; /* is_causal: keys after the query's position */\n", (long long)P);
  if (ag.mask_rank >= 0)
    sb_printf(c, "        %s mv = mk[b * %lld + h * %lld + i * %lld + j * %lld];\n", lw_ctype(L, n->inputs[3]), (long long)mst[0], (long long)mst[1],
              (long long)mst[2], (long long)mst[3]);
  if (ag.mask_rank >= 0 && ag.mask_bool) sb_printf(c, "        if (!mv) continue;\n");
  sb_printf(c, "        const float *kr, *vr;\n");
  if (P > 0) {
    sb_printf(c, "        if (j < %lld) { kr = pk + ((b * %lld + kh) * %lld + j) * %lld; vr = pv + ((b * %lld + kh) * %lld + j) * %lld; }\n        else { kr = k + ",
              (long long)P, (long long)KVH, (long long)P, (long long)D, (long long)KVH, (long long)P, (long long)DV);
    kv_row(c, rank, KVH, KS, D, "kh", jn);
    sb_printf(c, "; vr = v + ");
    kv_row(c, rank, KVH, KS, DV, "kh", jn);
    sb_printf(c, "; }\n");
  } else {
    sb_printf(c, "        kr = k + ");
    kv_row(c, rank, KVH, KS, D, "kh", "j");
    sb_printf(c, ";\n        vr = v + ");
    kv_row(c, rank, KVH, KS, DV, "kh", "j");
    sb_printf(c, ";\n");
  }
  sb_printf(c, "        double s = 0;\n        for (int64_t d = 0; d < %lld; d++) s += (double)qr[d] * kr[d];\n        s *= %.17g;\n", (long long)D, ag.scale);
  if (ag.softcap > 0) sb_printf(c, "        s = %.17g * tanh(s / %.17g);\n", ag.softcap, ag.softcap);
  if (ag.mask_rank >= 0 && !ag.mask_bool) sb_printf(c, "        s += mv;\n");
  sb_printf(c, "        if (!(s > -INFINITY)) continue;\n");
  sb_printf(c, "        if (s > mx) { double f = exp(mx - s); sum *= f; for (int64_t d = 0; d < %lld; d++) acc[d] *= f; mx = s; }\n", (long long)DV);
  sb_printf(c, "        double w = exp(s - mx);\n        sum += w;\n        for (int64_t d = 0; d < %lld; d++) acc[d] += w * vr[d];\n      }\n", (long long)DV);
  sb_printf(c, "      for (int64_t d = 0; d < %lld; d++) yr[d] = sum > 0 ? (float)(acc[d] / sum) : 0.0f;\n    }\n", (long long)DV);
  /* present_key / present_value: past ++ new, [B, KVH, T, hd] */
  for (int o = 1; o <= 2; o++) {
    if ((int)n->n_outputs <= o || n->outputs[o] < 0) continue;
    int64_t hd = o == 1 ? D : DV;
    sb_printf(c, "    {\n      float *pr = %s;\n", lw_ptr(L, n->outputs[o]));
    sb_printf(c, "      for (int64_t b = 0; b < %lld; b++)\n        for (int64_t kh = 0; kh < %lld; kh++)\n          for (int64_t j = 0; j < %lld; j++) {\n",
              (long long)B, (long long)KVH, (long long)T);
    sb_printf(c, "            const float *src = ");
    if (P > 0) sb_printf(c, "j < %lld ? %s + ((b * %lld + kh) * %lld + j) * %lld : ", (long long)P, o == 1 ? "pk" : "pv", (long long)KVH, (long long)P, (long long)hd);
    sb_printf(c, "%s + ", o == 1 ? "k" : "v");
    kv_row(c, rank, KVH, KS, hd, "kh", jn);
    sb_printf(c, ";\n            memcpy(pr + ((b * %lld + kh) * %lld + j) * %lld, src, sizeof(float) * %lld);\n          }\n    }\n", (long long)KVH, (long long)T,
              (long long)hd, (long long)hd);
  }
  sb_printf(c, "  }\n");
  return ECG_OK;
}
