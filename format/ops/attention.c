/* Transformer operators of opset 23 (ONNX Operators.md RotaryEmbedding-23, Attention-23):
 * the one reading of their operands (ecg_rotary_resolve, ecg_attention_resolve) that shape
 * inference here and the emitters (tools/lower/emit/attention.c) share, and their shape
 * and FLOP functions.  Both are Many-to-Many (a row of the output reads a whole row of
 * the cache / every key). */
#include <math.h>

#include "ops_common.h"

/* dims of input i (rank in *r), or an error when it is missing or of unknown rank */
static int dims_of(const ecg_graph *g, const ecg_node *n, int i, int64_t *d, int *r, ecg_err *e) {
  ecg_tensor *t;
  ECG_TRY(ops_input(g, n, i, &t, e));
  *r = ecg_tensor_dims(t, d);
  return ECG_OK;
}

/* a and b agree unless one is unknown (-1) */
static bool agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

int ecg_rotary_resolve(const ecg_graph *g, const ecg_node *n, ecg_rotary_geom *rg, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], cd[ECG_MAX_RANK], sd[ECG_MAX_RANK], pd[ECG_MAX_RANK];
  int rx, rc, rs, rp = 0;
  memset(rg, 0, sizeof *rg);
  ECG_TRY(dims_of(g, n, 0, xd, &rx, e));
  ECG_TRY(dims_of(g, n, 1, cd, &rc, e));
  ECG_TRY(dims_of(g, n, 2, sd, &rs, e));
  rg->has_pos = ecg_node_input(g, n, 3) != NULL;
  if (rg->has_pos) ECG_TRY(dims_of(g, n, 3, pd, &rp, e));
  rg->interleaved = ecg_attr_i(n, "interleaved", 0) != 0;
  int64_t heads = ecg_attr_i(n, "num_heads", 0), rot = ecg_attr_i(n, "rotary_embedding_dim", 0);
  if (rx == 4) {
    rg->b = xd[0], rg->heads = xd[1], rg->seq = xd[2], rg->head = xd[3];
    if (heads > 0 && !agree(heads, xd[1])) return ecg_node_errf(e, g, n, "num_heads %lld but the input has %lld heads", (long long)heads, (long long)xd[1]);
  } else if (rx == 3) {
    if (heads <= 0) return ecg_node_errf(e, g, n, "a 3-D input [batch, seq, hidden] needs the attribute num_heads");
    if (xd[2] >= 0 && xd[2] % heads) return ecg_node_errf(e, g, n, "hidden size %lld is not a multiple of num_heads %lld", (long long)xd[2], (long long)heads);
    rg->b = xd[0], rg->seq = xd[1], rg->heads = heads, rg->head = xd[2] < 0 ? -1 : xd[2] / heads;
  } else
    return ecg_node_errf(e, g, n, "input must be 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head_size], has rank %d", rx);
  rg->x_rank = rx;
  rg->rot = rot > 0 ? rot : rg->head;
  if (rg->rot >= 0 && (rg->rot % 2 || (rg->head >= 0 && rg->rot > rg->head)))
    return ecg_node_errf(e, g, n, "rotary_embedding_dim %lld must be even and at most the head size %lld", (long long)rg->rot, (long long)rg->head);
  if (rc != rs) return ecg_node_errf(e, g, n, "cos_cache and sin_cache differ in rank (%d, %d)", rc, rs);
  for (int i = 0; i < rc; i++)
    if (!agree(cd[i], sd[i])) return ecg_node_errf(e, g, n, "cos_cache and sin_cache differ in shape");
  if (rg->has_pos) {
    if (rc != 2) return ecg_node_errf(e, g, n, "with position_ids the caches must be [max_position, rotary_dim / 2], have rank %d", rc);
    if (rp != 2 || !agree(pd[0], rg->b) || !agree(pd[1], rg->seq)) return ecg_node_errf(e, g, n, "position_ids must be [batch, seq]");
    rg->positions = cd[0];
  } else {
    if (rc != 3 || !agree(cd[0], rg->b) || !agree(cd[1], rg->seq))
      return ecg_node_errf(e, g, n, "without position_ids the caches must be [batch, seq, rotary_dim / 2]");
    rg->positions = -1;
  }
  rg->cache_cols = cd[rc - 1];
  if (rg->cache_cols >= 0 && rg->rot >= 0 && rg->cache_cols < rg->rot / 2)
    return ecg_node_errf(e, g, n, "the caches have %lld columns, rotary_embedding_dim / 2 = %lld needs that many", (long long)rg->cache_cols, (long long)(rg->rot / 2));
  return ECG_OK;
}

/** RotaryEmbedding (23): Y has X's shape and dtype (ecg_rotary_resolve checks the operands). */
int ecg_infer_rotary(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_rotary_geom rg;
  ECG_TRY(ecg_rotary_resolve(g, n, &rg, e));
  return ecg_infer_unary(g, n, e);
}

int ecg_attention_resolve(const ecg_graph *g, const ecg_node *n, ecg_attention_geom *ag, ecg_err *e) {
  int64_t qd[ECG_MAX_RANK], kd[ECG_MAX_RANK], vd[ECG_MAX_RANK];
  int rq, rk, rv;
  memset(ag, 0, sizeof *ag);
  ECG_TRY(dims_of(g, n, 0, qd, &rq, e));
  ECG_TRY(dims_of(g, n, 1, kd, &rk, e));
  ECG_TRY(dims_of(g, n, 2, vd, &rv, e));
  if (rq != rk || rq != rv || (rq != 3 && rq != 4))
    return ecg_node_errf(e, g, n, "Q, K and V must all be 3-D [batch, seq, hidden] or all 4-D [batch, heads, seq, head_size] (ranks %d, %d, %d)", rq, rk, rv);
  ag->rank = rq;
  ag->b = qd[0];
  if (rq == 4) {
    ag->qh = qd[1], ag->qs = qd[2], ag->d = qd[3];
    ag->kvh = kd[1], ag->ks = kd[2], ag->dv = vd[3];
    if (!agree(kd[3], ag->d)) return ecg_node_errf(e, g, n, "K's head size %lld differs from Q's %lld", (long long)kd[3], (long long)ag->d);
    if (!agree(vd[1], ag->kvh) || !agree(vd[2], ag->ks)) return ecg_node_errf(e, g, n, "V must have K's heads and sequence length");
  } else {
    int64_t qh = ecg_attr_i(n, "q_num_heads", 0), kvh = ecg_attr_i(n, "kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0) return ecg_node_errf(e, g, n, "3-D inputs need the attributes q_num_heads and kv_num_heads");
    if ((qd[2] >= 0 && qd[2] % qh) || (kd[2] >= 0 && kd[2] % kvh) || (vd[2] >= 0 && vd[2] % kvh))
      return ecg_node_errf(e, g, n, "hidden sizes (%lld, %lld, %lld) must be multiples of q_num_heads %lld / kv_num_heads %lld", (long long)qd[2],
                           (long long)kd[2], (long long)vd[2], (long long)qh, (long long)kvh);
    ag->qh = qh, ag->kvh = kvh, ag->qs = qd[1], ag->ks = kd[1];
    ag->d = qd[2] < 0 ? -1 : qd[2] / qh;
    ag->dv = vd[2] < 0 ? -1 : vd[2] / kvh;
    if (!agree(kd[2] < 0 ? -1 : kd[2] / kvh, ag->d)) return ecg_node_errf(e, g, n, "K's head size differs from Q's");
    if (!agree(vd[1], ag->ks)) return ecg_node_errf(e, g, n, "V must have K's sequence length");
  }
  if (!agree(kd[0], ag->b) || !agree(vd[0], ag->b)) return ecg_node_errf(e, g, n, "Q, K and V differ in batch size");
  if (ag->qh > 0 && ag->kvh > 0 && ag->qh % ag->kvh)
    return ecg_node_errf(e, g, n, "q heads (%lld) must be a multiple of kv heads (%lld)", (long long)ag->qh, (long long)ag->kvh);
  /* past key / value: [batch, kv_heads, past, head_size] / [..., v_head_size], both or neither */
  const ecg_tensor *pk = ecg_node_input(g, n, 4), *pv = ecg_node_input(g, n, 5);
  if (!pk != !pv) return ecg_node_errf(e, g, n, "past_key and past_value must be given together");
  ag->past = 0;
  if (pk) {
    int64_t pkd[ECG_MAX_RANK], pvd[ECG_MAX_RANK];
    int rpk, rpv;
    ECG_TRY(dims_of(g, n, 4, pkd, &rpk, e));
    ECG_TRY(dims_of(g, n, 5, pvd, &rpv, e));
    if (rpk != 4 || rpv != 4 || !agree(pkd[0], ag->b) || !agree(pkd[1], ag->kvh) || !agree(pkd[3], ag->d) || !agree(pvd[0], ag->b) ||
        !agree(pvd[1], ag->kvh) || !agree(pvd[2], pkd[2]) || !agree(pvd[3], ag->dv))
      return ecg_node_errf(e, g, n, "past_key / past_value must be [batch, kv_heads, past_seq, head_size / v_head_size]");
    ag->past = pkd[2];
  }
  ag->total = ag->past < 0 || ag->ks < 0 ? -1 : ag->past + ag->ks;
  /* mask: bool (true = attend) or Q's dtype (added), broadcast to [batch, q_heads, q_seq, total] */
  const ecg_tensor *m = ecg_node_input(g, n, 3);
  ag->mask_rank = -1;
  if (m) {
    const ecg_tensor *q = ecg_node_input(g, n, 0);
    if (m->dtype != ECG_BOOL && m->dtype != q->dtype)
      return ecg_node_errf(e, g, n, "attn_mask must be bool or %s, is %s", ecg_dtype_name(q->dtype), ecg_dtype_name(m->dtype));
    ag->mask_bool = m->dtype == ECG_BOOL;
    ECG_TRY(dims_of(g, n, 3, ag->mask_dims, &ag->mask_rank, e));
    int64_t full[4] = {ag->b, ag->qh, ag->qs, ag->total}, out[ECG_MAX_RANK];
    if (ag->mask_rank > 4 || ecg_broadcast_shape(4, full, ag->mask_rank, ag->mask_dims, out) != 4 ||
        (ag->mask_rank > 0 && !agree(ag->mask_dims[ag->mask_rank - 1], ag->total) && ag->mask_dims[ag->mask_rank - 1] != 1))
      return ecg_node_errf(e, g, n, "attn_mask must broadcast to [batch, q_heads, q_seq, total_seq] = [%lld, %lld, %lld, %lld]", (long long)ag->b,
                           (long long)ag->qh, (long long)ag->qs, (long long)ag->total);
  }
  ag->causal = ecg_attr_i(n, "is_causal", 0) != 0;
  ag->scale = ecg_attr_f(n, "scale", 0);
  if (!ecg_attr_find(n, "scale")) ag->scale = ag->d > 0 ? 1.0 / sqrt((double)ag->d) : 0;
  ag->softcap = ecg_attr_f(n, "softcap", 0);
  if (ag->softcap < 0) return ecg_node_errf(e, g, n, "softcap must be >= 0, is %g", ag->softcap);
  if (n->n_outputs > 3 && n->outputs[3] >= 0)
    return ecg_node_errf(e, g, n, "output 3 (qk_matmul_output) is not supported");
  return ECG_OK;
}

/** Attention (23): Y [batch, q_heads, q_seq, v_head_size] (4-D inputs) or [batch, q_seq,
 *  q_heads * v_head_size] (3-D); present_key / present_value [batch, kv_heads, total_seq,
 *  head_size / v_head_size]; Q's dtype (ecg_attention_resolve checks the operands). */
int ecg_infer_attention(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_attention_geom ag;
  ECG_TRY(ecg_attention_resolve(g, n, &ag, e));
  const ecg_tensor *q = ecg_node_input(g, n, 0);
  int dt = q->dtype;
  int64_t yd[4] = {ag.b, ag.qh, ag.qs, ag.dv};
  if (ag.rank == 3) yd[1] = ag.qs, yd[2] = ag.qh < 0 || ag.dv < 0 ? -1 : ag.qh * ag.dv;
  int from[4] = {0, 1, ag.rank == 4 ? 2 : -1, ag.rank == 4 ? 3 : -1}; /* dim 1: q heads (4-D) or q seq (3-D) */
  ECG_TRY(ops_set_out(g, n, 0, dt, ag.rank, yd, q, from, e));
  int64_t pk[4] = {ag.b, ag.kvh, ag.total, ag.d}, pv[4] = {ag.b, ag.kvh, ag.total, ag.dv};
  if (n->n_outputs > 1) ECG_TRY(ops_set_out(g, n, 1, dt, 4, pk, NULL, NULL, e));
  if (n->n_outputs > 2) ECG_TRY(ops_set_out(g, n, 2, dt, 4, pv, NULL, NULL, e));
  return ECG_OK;
}

/** Attention FLOPs: 2 * batch * q_heads * q_seq * total_seq * (head_size + v_head_size)
 *  (the two matrix products; softmax not counted); -1 when a dim is unknown. */
int64_t ecg_flops_attention(const ecg_graph *g, const ecg_node *n) {
  ecg_attention_geom ag;
  if (ecg_attention_resolve(g, n, &ag, NULL) != ECG_OK) return -1;
  int64_t v[6] = {ag.b, ag.qh, ag.qs, ag.total, ag.d, ag.dv};
  for (int i = 0; i < 6; i++)
    if (v[i] < 0) return -1;
  return 2 * ag.b * ag.qh * ag.qs * ag.total * (ag.d + ag.dv);
}
