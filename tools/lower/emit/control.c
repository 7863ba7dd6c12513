/* Control flow as nested code (issue 9 item 4, static shapes; format/ECG.md "Control
 * flow"): If, Loop and Scan. Each subgraph is lowered once (lw_lower_subgraph: its own
 * kernels as file-scope functions, its intermediates planned inside the arena region the
 * enclosing graph's memory plan gives the node's kernel); the node's kernel calls them:
 *   If    reads cond at run time and runs only the taken branch's kernels, then copies
 *         that branch's outputs into the node's (a run-time sequence output: its items,
 *         into the node's sequence slot; emit/sequence.c);
 *   Loop  runs the body while cond and i < M, carrying the loop values through the node's
 *         outputs (a run-time sequence: copied between the node's slot and the body's, its
 *         items of any shape) and writing scan output rows per iteration; scan outputs are compiled
 *         for the static iteration count of their shape (constant M or the model's
 *         declared shape) and a run with another count fails (P_run returns -2);
 *   SequenceMap  runs the body once per item of its first sequence (every sequence input
 *         as long: else the run fails, -2), each body input an item (of any dims: a tensor of
 *         run-time shape, LW_HEAP) or the whole tensor input, each body output appended to
 *         the node's output sequence;
 *   Scan  (Scan-8 with its batch axis, Scan-9+) runs the body once per slice along each
 *         scan input's axis (either direction), state carried, scan outputs written per
 *         iteration along their axes. */
#include <string.h>

#include "emit.h"

/* The size in bytes of tensor id of lowering V (0 when absent). */
static size_t nbytes(const ecg_lower *V, int id) { return id >= 0 ? V->t[id].bytes : 0; }

/* Emit "memmove(dst, src, n)" (byte pointers). */
static void move(sbuf *c, const char *dst, const char *src, size_t n) {
  if (n) sb_printf(c, "    memmove((void *)%s, (const void *)%s, %zu);\n", dst, src, n);
}

/* Calls of the kernels of s, then a return when one failed a run-time check. */
static void calls(sbuf *c, const lw_sub *s) {
  for (int q = 0; q < s->nk; q++) sb_printf(c, "    %s_k%d(ctx);\n", s->name, q);
  sb_printf(c, "    if (ctx->err) return;\n");
}

/* Same dtype and static dims. */
static int same_type(const ecg_tensor *a, const ecg_tensor *b) {
  if (a->dtype != b->dtype || !a->shape_known || !b->shape_known || a->n_dims != b->n_dims) return 0;
  for (size_t i = 0; i < a->n_dims; i++)
    if (a->dims[i]->value != b->dims[i]->value || a->dims[i]->value < 0) return 0;
  return 1;
}

int emit_if(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(L->g, n, &cf, e));
  lw_sub s[2];
  memset(s, 0, sizeof s);
  int rc = ECG_OK;
  char sh1[128], sh2[128];
  for (int b = 0; b < 2 && rc == ECG_OK; b++) {
    rc = lw_lower_subgraph(L, n, cf.body[b], &s[b], e);
    for (size_t k = 0; rc == ECG_OK && k < n->n_outputs; k++) {
      const ecg_tensor *y = ecg_node_output(L->g, n, (int)k), *o = s[b].sg->tensors[s[b].sg->outputs[k]];
      if (y && (y->sequence || o->sequence)) { /* run-time sequences: copied, whatever their items */
        if (!y->sequence || !o->sequence || y->dtype != o->dtype)
          rc = lw_node_err(L, n, e, "%s gives output %zu as %s, but the node's output '%s' is %s", b ? "else_branch" : "then_branch", k,
                           o->sequence ? "a sequence" : "a tensor", y->name, y->sequence ? "a sequence" : "a tensor");
        continue;
      }
      if (y && !same_type(y, o))
        rc = lw_node_err(L, n, e, "%s gives output %zu as %s %s but the node's output '%s' is %s %s: the branches' shapes differ "
                         "(dynamic shapes are not supported)", b ? "else_branch" : "then_branch", k, ecg_dtype_name(o->dtype),
                         ecg_shape_str(o, sh1, sizeof sh1), y->name, ecg_dtype_name(y->dtype), ecg_shape_str(y, sh2, sizeof sh2));
    }
  }
  if (rc == ECG_OK) {
    sbuf *c = &L->code;
    sb_printf(c, "  if (%s[0] != 0) {\n", lw_ptr(L, n->inputs[0]));
    for (int b = 0; b < 2; b++) {
      if (b) sb_printf(c, "  } else {\n");
      calls(c, &s[b]);
      for (size_t k = 0; k < n->n_outputs; k++) {
        if (n->outputs[k] < 0) continue;
        if (L->g->tensors[n->outputs[k]]->sequence) /* the branch's sequence into the node's slot */
          sb_printf(c, "    { int rc_ = seq_copy_(&ctx->sq[%d], %s); if (rc_) { ctx->err = rc_; return; } }\n", L->t[n->outputs[k]].seq,
                    lw_seq_ref(&s[b].view, s[b].sg->outputs[k]));
        else move(c, lw_ptr(L, n->outputs[k]), lw_ptr(&s[b].view, s[b].sg->outputs[k]), nbytes(L, n->outputs[k]));
      }
    }
    sb_printf(c, "  }\n");
  }
  lw_sub_free(&s[0]);
  lw_sub_free(&s[1]);
  return rc;
}

/* The holder of loop-carried / state value j between iterations: the node's output j
 * (per batch b_ at stride bytes) when it has one, else the body input itself. */
static const char *holder(ecg_lower *L, const ecg_node *n, const lw_sub *s, int j, int body_in, size_t stride, char *buf,
                          size_t nb) {
  if ((size_t)j < n->n_outputs && n->outputs[j] >= 0)
    snprintf(buf, nb, "((unsigned char *)%s + b_ * %zu)", lw_ptr(L, n->outputs[j]), stride);
  else
    snprintf(buf, nb, "%s", lw_ptr((ecg_lower *)&s->view, body_in));
  return buf;
}

/* Loop n's loop-carried value j is a run-time sequence. */
static int is_seq(const ecg_lower *L, const ecg_node *n, int j) {
  const ecg_tensor *v = ecg_node_input(L->g, n, 2 + j);
  return v && v->sequence;
}

/* The slot (a seq_ pointer expression) holding loop-carried sequence j between iterations:
 * the node's output's when it has one, else the body input's. */
static const char *seq_holder(const ecg_lower *L, const ecg_node *n, const lw_sub *s, int j, char *buf, size_t nb) {
  if ((size_t)j < n->n_outputs && n->outputs[j] >= 0) snprintf(buf, nb, "(&ctx->sq[%d])", L->t[n->outputs[j]].seq);
  else snprintf(buf, nb, "(&ctx->sq[%d])", s->view.t[s->sg->inputs[2 + j]].seq);
  return buf;
}

/* A loop-carried value (what, number j) that enters the body as `in` and leaves it as `out`
 * must keep its dtype and shape: a shape that changes across iterations is dynamic, which a
 * static plan cannot hold.  Errors: ECG_ERR_INPUT naming the node and both shapes. */
static int check_state(ecg_lower *L, const ecg_node *n, const char *what, int j, const ecg_tensor *in, const ecg_tensor *out,
                       ecg_err *e) {
  char sh1[128], sh2[128];
  if (same_type(in, out)) return ECG_OK;
  return lw_node_err(L, n, e, "%s %d enters the body as %s %s but leaves it as %s %s (a shape that changes across iterations is "
                     "dynamic, not supported)", what, j, ecg_dtype_name(in->dtype), ecg_shape_str(in, sh1, sizeof sh1),
                     ecg_dtype_name(out->dtype), ecg_shape_str(out, sh2, sizeof sh2));
}

int emit_loop(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(L->g, n, &cf, e));
  lw_sub s;
  int rc = lw_lower_subgraph(L, n, cf.body[0], &s, e);
  const ecg_graph *b = s.sg;
  char hb[256];
  for (int j = 0; rc == ECG_OK && j < cf.n_state; j++) {
    const ecg_tensor *in = ecg_node_input(L->g, n, 2 + j), *out = b->tensors[b->outputs[1 + j]];
    if (in && (in->sequence || out->sequence)) { /* run-time sequences: items of any shape, copied */
      if (!in->sequence || !out->sequence || in->dtype != out->dtype || !b->tensors[b->inputs[2 + j]]->sequence)
        rc = lw_node_err(L, n, e, "loop-carried value %d enters the body as %s but leaves it as %s", j,
                         in->sequence ? "a sequence" : "a tensor", out->sequence ? "a sequence" : "a tensor");
      continue;
    }
    rc = check_state(L, n, "loop-carried value", j, in, out, e);
  }
  for (int k = 0; rc == ECG_OK && k < cf.n_explicit + (int)n->n_outputs; k++) { /* a dynamic build: only captures may be symbolic */
    int id = k < cf.n_explicit ? n->inputs[k] : n->outputs[k - cf.n_explicit];
    if (lw_tensor_dyn(L, id))
      rc = lw_node_err(L, n, e, "'%s' has symbolic dims: a Loop's operands of run-time size are not supported with symbolic dims yet",
                       L->g->tensors[id]->name);
  }
  int64_t T = -1;
  for (int k = 0; rc == ECG_OK && k < cf.n_scan_out; k++) {
    const ecg_tensor *y = ecg_node_output(L->g, n, cf.n_state + k);
    if (!y) continue;
    int64_t t = y->dims[0]->value;
    if (T >= 0 && t != T) rc = lw_node_err(L, n, e, "scan outputs have %lld and %lld rows", (long long)T, (long long)t);
    T = t;
  }
  if (rc == ECG_OK) {
    sbuf *c = &L->code;
    int M = n->inputs[0], C = cf.n_explicit > 1 ? n->inputs[1] : -1;
    sb_printf(c, "  {\n    const int64_t b_ = 0;\n    int64_t m_ = %s, i_ = 0;\n    int c_ = %s;\n", M >= 0 ? "0" : "INT64_MAX", "1");
    lw_sub_rt_dims(L, n, &s);
    if (M >= 0) sb_printf(c, "    m_ = (int64_t)%s[0];\n", lw_ptr(L, M));
    if (C >= 0) sb_printf(c, "    c_ = %s[0] != 0;\n", lw_ptr(L, C));
    for (int j = 0; j < cf.n_state; j++)
      if (is_seq(L, n, j)) /* a run-time sequence: its holder is a context slot */
        sb_printf(c, "    { int rc_ = seq_copy_(%s, %s); if (rc_) { ctx->err = rc_; return; } }\n", seq_holder(L, n, &s, j, hb, sizeof hb),
                  lw_seq_ref(L, n->inputs[2 + j]));
      else if ((size_t)j < n->n_outputs && n->outputs[j] >= 0)
        move(c, holder(L, n, &s, j, b->inputs[2 + j], 0, hb, sizeof hb), lw_ptr(L, n->inputs[2 + j]), nbytes(L, n->inputs[2 + j]));
      else
        move(c, lw_ptr(&s.view, b->inputs[2 + j]), lw_ptr(L, n->inputs[2 + j]), nbytes(L, n->inputs[2 + j]));
    sb_printf(c, "    for (; c_ && i_ < m_; i_++) {\n");
    if (T >= 0) sb_printf(c, "    if (i_ >= %lld) { ctx->err = -2; return; } /* scan outputs hold %lld rows */\n", (long long)T, (long long)T);
    if (nbytes(&s.view, b->inputs[0])) sb_printf(c, "    %s[0] = i_;\n", lw_ptr(&s.view, b->inputs[0]));
    if (nbytes(&s.view, b->inputs[1])) sb_printf(c, "    %s[0] = (uint8_t)c_;\n", lw_ptr(&s.view, b->inputs[1]));
    for (int j = 0; j < cf.n_state; j++)
      if (is_seq(L, n, j))
        sb_printf(c, "      { int rc_ = seq_copy_(&ctx->sq[%d], &(%s)->s); if (rc_) { ctx->err = rc_; return; } }\n",
                  s.view.t[b->inputs[2 + j]].seq, seq_holder(L, n, &s, j, hb, sizeof hb));
      else if ((size_t)j < n->n_outputs && n->outputs[j] >= 0)
        move(c, lw_ptr(&s.view, b->inputs[2 + j]), holder(L, n, &s, j, b->inputs[2 + j], 0, hb, sizeof hb), nbytes(&s.view, b->inputs[2 + j]));
    calls(c, &s);
    sb_printf(c, "    c_ = %s[0] != 0;\n", lw_ptr(&s.view, b->outputs[0]));
    for (int j = 0; j < cf.n_state; j++)
      if (is_seq(L, n, j))
        sb_printf(c, "      { int rc_ = seq_copy_(%s, %s); if (rc_) { ctx->err = rc_; return; } }\n", seq_holder(L, n, &s, j, hb, sizeof hb),
                  lw_seq_ref(&s.view, b->outputs[1 + j]));
      else
        move(c, holder(L, n, &s, j, b->inputs[2 + j], 0, hb, sizeof hb), lw_ptr(&s.view, b->outputs[1 + j]), nbytes(&s.view, b->outputs[1 + j]));
    for (int k = 0; k < cf.n_scan_out; k++) {
      int y = n->outputs[cf.n_state + k], o = b->outputs[1 + cf.n_state + k];
      size_t row = nbytes(&s.view, o);
      if (y >= 0 && row) sb_printf(c, "    memcpy((unsigned char *)%s + i_ * %zu, %s, %zu);\n", lw_ptr(L, y), row, lw_ptr(&s.view, o), row);
    }
    sb_printf(c, "    }\n");
    if (T >= 0) sb_printf(c, "    if (i_ != %lld) { ctx->err = -2; return; } /* compiled for %lld iterations */\n", (long long)T, (long long)T);
    sb_printf(c, "    (void)b_;\n  }\n");
  }
  lw_sub_free(&s);
  return rc;
}

int emit_scan(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(L->g, n, &cf, e));
  lw_sub s;
  int rc = lw_lower_subgraph(L, n, cf.body[0], &s, e);
  if (rc != ECG_OK) { lw_sub_free(&s); return rc; }
  const ecg_graph *b = s.sg;
  char hb[256];
  const ecg_tensor *x0 = ecg_node_input(L->g, n, cf.first_state + cf.n_state);
  int64_t B = cf.batch ? x0->dims[0]->value : 1, T = cf.trip;
  for (int j = 0; rc == ECG_OK && j < cf.n_state; j++)
    rc = check_state(L, n, "state", j, b->tensors[b->inputs[j]], b->tensors[b->outputs[j]], e);
  if (rc == ECG_OK) {
    sbuf *c = &L->code;
    sb_printf(c, "  for (int64_t b_ = 0; b_ < %lld; b_++) {\n    const int64_t T_ = %lld;\n    (void)T_;\n", (long long)B, (long long)T);
    for (int j = 0; j < cf.n_state; j++) {
      size_t sz = nbytes(&s.view, b->inputs[j]);
      char src[200];
      snprintf(src, sizeof src, "((const unsigned char *)%s + b_ * %zu)", lw_ptr(L, n->inputs[cf.first_state + j]), sz);
      move(c, holder(L, n, &s, j, b->inputs[j], sz, hb, sizeof hb), src, sz);
    }
    sb_printf(c, "    for (int64_t t_ = 0; t_ < %lld; t_++) {\n", (long long)T);
    for (int j = 0; j < cf.n_state; j++)
      if (n->outputs[j] >= 0) move(c, lw_ptr(&s.view, b->inputs[j]), holder(L, n, &s, j, b->inputs[j], nbytes(&s.view, b->inputs[j]), hb, sizeof hb), nbytes(&s.view, b->inputs[j]));
    for (int k = 0; k < cf.n_scan_in; k++) { /* x [outer, T, inner] per batch -> slice [outer, inner] */
      const ecg_tensor *x = ecg_node_input(L->g, n, cf.first_state + cf.n_state + k);
      int a = (int)cf.in_axis[k];
      int64_t outer = 1, inner = (int64_t)ecg_dtype_size(x->dtype);
      for (int d = cf.batch ? 1 : 0; d < a; d++) outer *= x->dims[d]->value;
      for (size_t d = (size_t)a + 1; d < x->n_dims; d++) inner *= x->dims[d]->value;
      if (!inner) continue;
      sb_printf(c, "      { int64_t tt_ = %s;\n        for (int64_t o_ = 0; o_ < %lld; o_++) memcpy((unsigned char *)%s + o_ * %lld, "
                   "(const unsigned char *)%s + ((b_ * %lld + o_) * %lld + tt_) * %lld, %lld); }\n",
                cf.in_rev[k] ? "T_ - 1 - t_" : "t_", (long long)outer, lw_ptr(&s.view, b->inputs[cf.n_state + k]), (long long)inner,
                lw_ptr(L, n->inputs[cf.first_state + cf.n_state + k]), (long long)outer, (long long)T, (long long)inner, (long long)inner);
    }
    calls(c, &s);
    for (int j = 0; j < cf.n_state; j++)
      move(c, holder(L, n, &s, j, b->inputs[j], nbytes(&s.view, b->inputs[j]), hb, sizeof hb), lw_ptr(&s.view, b->outputs[j]), nbytes(&s.view, b->outputs[j]));
    for (int k = 0; k < cf.n_scan_out; k++) { /* slice [outer, inner] -> y [outer, T, inner] per batch */
      int yid = n->outputs[cf.n_state + k];
      if (yid < 0) continue;
      const ecg_tensor *y = L->g->tensors[yid];
      int r = (int)y->n_dims, a = cf.batch ? 1 : (int)(cf.out_axis[k] < 0 ? cf.out_axis[k] + r : cf.out_axis[k]);
      int64_t outer = 1, inner = (int64_t)ecg_dtype_size(y->dtype);
      for (int d = cf.batch ? 1 : 0; d < a; d++) outer *= y->dims[d]->value;
      for (int d = a + 1; d < r; d++) inner *= y->dims[d]->value;
      if (!inner) continue;
      sb_printf(c, "      { int64_t tt_ = %s;\n        for (int64_t o_ = 0; o_ < %lld; o_++) memcpy((unsigned char *)%s + ((b_ * %lld + o_) * %lld + tt_) * %lld, "
                   "(const unsigned char *)%s + o_ * %lld, %lld); }\n",
                cf.out_rev[k] ? "T_ - 1 - t_" : "t_", (long long)outer, lw_ptr(L, yid), (long long)outer, (long long)T, (long long)inner,
                lw_ptr(&s.view, b->outputs[cf.n_state + k]), (long long)inner, (long long)inner);
    }
    sb_printf(c, "    }\n");
    sb_printf(c, "  }\n");
  }
  lw_sub_free(&s);
  return rc;
}

int emit_sequence_map(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ecg_cf cf;
  ECG_TRY(ecg_cf_info(L->g, n, &cf, e));
  lw_sub s;
  int rc = lw_lower_subgraph(L, n, cf.body[0], &s, e);
  const ecg_graph *b = s.sg;
  for (int k = 0; rc == ECG_OK && k < cf.n_scan_out; k++) {
    const ecg_tensor *y = ecg_node_output(L->g, n, k);
    if (y && !y->sequence) rc = lw_node_err(L, n, e, "output '%s' is not a sequence", y->name);
  }
  for (int k = 0; rc == ECG_OK && k < cf.n_scan_in; k++) /* a tensor input of symbolic dims: the body takes its run-time shape */
    if (lw_tensor_dyn(L, n->inputs[k]) && s.view.t[b->inputs[k]].where != LW_HEAP)
      rc = lw_node_err(L, n, e, "input '%s' has symbolic dims the body does not take (not supported)", L->g->tensors[n->inputs[k]]->name);
  if (rc == ECG_OK) {
    sbuf *c = &L->code;
    sb_printf(c, "  {\n    const int64_t n_ = %s->n;\n", lw_seq_ref(L, n->inputs[0]));
    lw_sub_rt_dims(L, n, &s);
    for (int k = 1; k < cf.n_scan_in; k++)
      if (L->g->tensors[n->inputs[k]]->sequence)
        sb_printf(c, "    if (%s->n != n_) { ctx->err = -2; return; } /* sequences of different lengths */\n", lw_seq_ref(L, n->inputs[k]));
    for (int k = 0; k < cf.n_scan_out; k++)
      if (n->outputs[k] >= 0) sb_printf(c, "    seq_clear_(&ctx->sq[%d]);\n", L->t[n->outputs[k]].seq);
    sb_printf(c, "    for (int64_t i_ = 0; i_ < n_; i_++) {\n");
    for (int k = 0; k < cf.n_scan_in; k++) {
      int in = n->inputs[k], bi = b->inputs[k];
      const ecg_tensor *tb = b->tensors[bi];
      if (!L->g->tensors[in]->sequence && s.view.t[bi].where == LW_HEAP) { /* a tensor of symbolic dims (a dynamic build) */
        int q = s.view.t[bi].rtd - 1, r = (int)tb->n_dims;
        sb_printf(c, "      { size_t b_ = %zu;\n", ecg_dtype_size(tb->dtype));
        for (int d = 0; d < r; d++) sb_printf(c, "        ctx->rd[%d][%d] = (int64_t)(%s);\n        b_ *= (size_t)ctx->rd[%d][%d];\n", q, d, lw_dim(L, in, d), q, d);
        sb_printf(c, "        int rc_ = hb_need_(&ctx->hb[%d].p, &ctx->hb[%d].cap, b_);\n        if (rc_) { ctx->err = rc_; return; }\n"
                     "        if (b_) memcpy(ctx->hb[%d].p, %s, b_);\n      }\n", q, q, q, lw_ptr(L, in));
        continue;
      }
      if (!L->g->tensors[in]->sequence) { /* a tensor: the body reads it whole each time */
        move(c, lw_ptr(&s.view, bi), lw_ptr(L, in), nbytes(L, in));
        continue;
      }
      int r = (int)tb->n_dims;
      sb_printf(c, "      { const %s_value *v_ = &%s->items[i_];\n        int ok_ = v_->rank == %d && v_->dtype == %d;\n", L->prefix,
                lw_seq_ref(L, in), r, tb->dtype);
      for (int d = 0; d < r; d++)
        if (tb->dims[d]->value >= 0) sb_printf(c, "        ok_ = ok_ && v_->dims[%d] == %lld;\n", d, (long long)tb->dims[d]->value);
      sb_printf(c, "        if (!ok_) { ctx->err = -2; return; } /* an item not of the rank (or dims) compiled for */\n");
      if (s.view.t[bi].where == LW_HEAP) {
        int q = s.view.t[bi].rtd - 1;
        sb_printf(c, "        int rc_ = hb_need_(&ctx->hb[%d].p, &ctx->hb[%d].cap, v_->bytes);\n        if (rc_) { ctx->err = rc_; return; }\n"
                     "        for (int d_ = 0; d_ < %d; d_++) ctx->rd[%d][d_] = v_->dims[d_];\n"
                     "        if (v_->bytes) memcpy(ctx->hb[%d].p, v_->data, v_->bytes);\n      }\n", q, q, r, q, q);
      } else {
        sb_printf(c, "        if (v_->bytes) memcpy((void *)%s, v_->data, v_->bytes);\n      }\n", lw_ptr(&s.view, bi));
      }
    }
    calls(c, &s);
    for (int k = 0; rc == ECG_OK && k < cf.n_scan_out; k++) {
      if (n->outputs[k] < 0) continue;
      char q[64];
      snprintf(q, sizeof q, "&ctx->sq[%d]", L->t[n->outputs[k]].seq);
      sb_printf(c, "      { int64_t p_ = i_;\n        int rc_ = 0;\n");
      s.view.code = *c; /* the body output as the body's lowering sees it, into this kernel's code */
      rc = lw_seq_put(&s.view, n, q, b->outputs[k], e);
      *c = s.view.code;
      s.view.code = (sbuf){0};
      sb_printf(c, "        if (rc_) { ctx->err = rc_; return; }\n      }\n");
    }
    sb_printf(c, "    }\n  }\n");
  }
  lw_sub_free(&s);
  return rc;
}
