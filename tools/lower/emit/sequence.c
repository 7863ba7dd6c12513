/* Run-time sequences (format/ECG.md "Sequences"; issue 9): a sequence graph input or output
 * and what the sequence operators make of it, lowered as lists of owned tensors that the
 * context holds (tools/lower/LOWERED.md "Sequences").
 *
 * A sequence value is a P_sequence (model.h): n items, each a P_value (dtype, rank, dims,
 * bytes, data; dense row-major). A graph input's is the caller's bound struct, read in
 * place; every other sequence tensor has a slot ctx->sq[k] (type seq_: the list and its
 * capacity) whose items the context owns, copied in by the kernels below, freed by destroy;
 * a sequence graph output is published by copy_outputs as a P_sequence pointing into its slot
 * (valid until the next run or destroy). Positions are read at run time and checked (a run
 * with a position outside the sequence fails: P_run -2); out of memory fails the run (-4).
 * Sequences of sequences, maps and the sequence operators that change element shapes at run
 * time (ConcatFromSequence, SplitToSequence on run-time sequences) are refused naming the node. */
#include <string.h>

#include "../lower.h"
#include "emit.h"

int lw_node_seq(const ecg_lower *L, const ecg_node *n) {
  for (size_t k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] >= 0 && L->g->tensors[n->inputs[k]]->sequence) return 1;
  for (size_t k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] >= 0 && L->g->tensors[n->outputs[k]]->sequence) return 1;
  return 0;
}

const char *lw_seq_ref(const ecg_lower *L, int id) {
  static __thread char ring[8][96];
  static __thread int slot;
  char *b = ring[slot++ & 7];
  const lw_tensor *t = &L->t[id];
  if (t->where == LW_INPUT) snprintf(b, 96, "((const %s_sequence *)ctx->io[%d])", L->prefix, t->io_index);
  else snprintf(b, 96, "(&ctx->sq[%d].s)", t->seq);
  return b;
}

void lw_seq_helpers(const ecg_lower *L, sbuf *b) {
  const char *P = L->prefix;
  sb_printf(b, "/* Run-time sequences (tools/lower/LOWERED.md \"Sequences\"): a slot owns its items' data. */\n"
               "typedef struct { %s_sequence s; int cap; } seq_;\n", P);
  sb_printf(b, "static void seq_clear_(seq_ *q) {\n  for (int i = 0; i < q->s.n; i++) free(q->s.items[i].data);\n  q->s.n = 0;\n}\n"
               "static void seq_free_(seq_ *q) {\n  seq_clear_(q);\n  free(q->s.items);\n  q->s.items = NULL;\n  q->cap = 0;\n}\n");
  sb_printf(b, "/* insert a copy of a tensor at position at (0..n): 0, or -4 out of memory */\n"
               "static int seq_put_(seq_ *q, int at, int dtype, int rank, const int64_t *dims, size_t bytes, const void *data) {\n"
               "  if (q->s.n == q->cap) {\n    int cap = q->cap ? 2 * q->cap : 4;\n"
               "    %s_value *it = realloc(q->s.items, (size_t)cap * sizeof *it);\n    if (!it) return -4;\n    q->s.items = it;\n    q->cap = cap;\n  }\n"
               "  void *d = malloc(bytes ? bytes : 1);\n  if (!d) return -4;\n  if (bytes) memcpy(d, data, bytes);\n"
               "  memmove(&q->s.items[at + 1], &q->s.items[at], (size_t)(q->s.n - at) * sizeof *q->s.items);\n"
               "  %s_value *v = &q->s.items[at];\n  memset(v, 0, sizeof *v);\n  v->dtype = dtype;\n  v->rank = rank;\n"
               "  for (int k = 0; k < rank; k++) v->dims[k] = dims[k];\n  v->bytes = bytes;\n  v->data = d;\n  q->s.n++;\n  return 0;\n}\n",
            P, P);
  sb_printf(b, "/* q = a copy of src (another list): 0, or -4 */\n"
               "static int seq_copy_(seq_ *q, const %s_sequence *src) {\n  if (src == &q->s) return 0;\n  seq_clear_(q);\n"
               "  for (int i = 0; i < src->n; i++) {\n    const %s_value *v = &src->items[i];\n"
               "    int rc = seq_put_(q, i, v->dtype, v->rank, v->dims, v->bytes, v->data);\n    if (rc) return rc;\n  }\n  return 0;\n}\n",
            P, P);
  sb_printf(b, "static void seq_erase_(seq_ *q, int at) {\n  free(q->s.items[at].data);\n"
               "  memmove(&q->s.items[at], &q->s.items[at + 1], (size_t)(q->s.n - at - 1) * sizeof *q->s.items);\n  q->s.n--;\n}\n");
  sb_printf(b, "/* a caller's sequence of element dtype dt: every item well formed (rank 0..8, dims >= 0,\n"
               " * bytes = elements x esz, data given): 1, else 0 */\n"
               "static int seq_valid_(const %s_sequence *s, int dt, size_t esz) {\n"
               "  if (!s || s->n < 0 || (s->n && !s->items)) return 0;\n"
               "  for (int i = 0; i < s->n; i++) {\n    const %s_value *v = &s->items[i];\n"
               "    if (v->dtype != dt || v->rank < 0 || v->rank > 8) return 0;\n    size_t m = esz;\n"
               "    for (int k = 0; k < v->rank; k++) {\n      if (v->dims[k] < 0 || v->dims[k] > ((int64_t)1 << 40)) return 0;\n"
               "      m *= (size_t)v->dims[k];\n    }\n    if (v->bytes != m || (m && !v->data)) return 0;\n  }\n  return 1;\n}\n\n",
            P, P);
}

/* Read the position operand k of n (a scalar or one-element int32/int64 tensor) into p_,
 * defaulting to def (a C expression) when it is omitted. */
static void read_pos(ecg_lower *L, const ecg_node *n, int k, const char *def) {
  if ((size_t)k < n->n_inputs && n->inputs[k] >= 0) sb_printf(&L->code, "    int64_t p_ = (int64_t)%s[0];\n", lw_ptr(L, n->inputs[k]));
  else sb_printf(&L->code, "    int64_t p_ = %s;\n", def);
}

/* Insert a copy of static tensor id into the slot expression q at position p_. */
int lw_seq_put(ecg_lower *L, const ecg_node *n, const char *q, int id, ecg_err *e) {
  const ecg_tensor *t = L->g->tensors[id];
  if (t->sequence || (!ecg_tensor_static(t) && !L->t[id].rtd))
    return lw_node_err(L, n, e, "input '%s' must be a tensor of a static shape", t->name);
  int64_t d[ECG_MAX_RANK];
  int r = L->t[id].rtd ? (int)t->n_dims : ecg_tensor_dims(t, d);
  if (L->t[id].rtd) { /* its dims are this run's (lower.c bound_slices; an LW_HEAP tensor) */
    int k = L->t[id].rtd - 1;
    sb_printf(&L->code, "    { size_t b_ = %zu;\n      for (int d_ = 0; d_ < %d; d_++) b_ *= (size_t)ctx->rd[%d][d_];\n"
                        "      if (!rc_) rc_ = seq_put_(%s, (int)p_, %d, %d, ctx->rd[%d], b_, %s); }\n",
              ecg_dtype_size(t->dtype), r, k, q, t->dtype, r, k, lw_ptr(L, id));
    return ECG_OK;
  }
  sb_printf(&L->code, "    { static const int64_t d_[%d] = {", r > 0 ? r : 1);
  for (int k = 0; k < r; k++) sb_printf(&L->code, "%s%lld", k ? ", " : "", (long long)d[k]);
  sb_printf(&L->code, "%s};\n      if (!rc_) rc_ = seq_put_(%s, (int)p_, %d, %d, d_, %zu, %s); }\n", r ? "" : "0", q, t->dtype, r,
            (size_t)ecg_tensor_numel(t) * ecg_dtype_size(t->dtype), lw_ptr(L, id));
  return ECG_OK;
}

int lw_emit_sequence(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  const ecg_graph *g = L->g;
  int x = n->n_inputs ? n->inputs[0] : -1, y = n->n_outputs ? n->outputs[0] : -1;
  if (!op || y < 0 || n->n_outputs != 1) return lw_node_err(L, n, e, "this operator is not supported on run-time sequences");
  bool xs = x >= 0 && g->tensors[x]->sequence, ys = g->tensors[y]->sequence;
  char q[64];
  snprintf(q, sizeof q, "&ctx->sq[%d]", ys ? L->t[y].seq : 0);
  sbuf *c = &L->code;
  if ((op->props & ECG_PROP_SEQ_PASS) && xs && ys) {
    sb_printf(c, "  { int rc_ = seq_copy_(%s, %s); if (rc_) ctx->err = rc_; }\n", q, lw_seq_ref(L, x));
    return ECG_OK;
  }
  switch ((int)op->id) {
  case ECG_OP_SequenceInsert:
    if (!xs || !ys || n->n_inputs < 2 || n->inputs[1] < 0) break;
    sb_printf(c, "  {\n    const %s_sequence *s_ = %s;\n    const int64_t n_ = s_->n;\n", L->prefix, lw_seq_ref(L, x));
    read_pos(L, n, 2, "n_");
    sb_printf(c, "    if (p_ < 0) p_ += n_;\n    if (p_ < 0 || p_ > n_) ctx->err = -2; /* position outside [-n, n] */\n"
                 "    else {\n    int rc_ = seq_copy_(%s, s_);\n", q);
    ECG_TRY(lw_seq_put(L, n, q, n->inputs[1], e));
    sb_printf(c, "    if (rc_) ctx->err = rc_;\n    }\n  }\n");
    return ECG_OK;
  case ECG_OP_SequenceErase:
    if (!xs || !ys) break;
    sb_printf(c, "  {\n    const %s_sequence *s_ = %s;\n    const int64_t n_ = s_->n;\n", L->prefix, lw_seq_ref(L, x));
    read_pos(L, n, 1, "n_ - 1");
    sb_printf(c, "    if (p_ < 0) p_ += n_;\n    if (p_ < 0 || p_ >= n_) ctx->err = -2; /* position outside [-n, n-1] */\n"
                 "    else { int rc_ = seq_copy_(%s, s_); if (rc_) ctx->err = rc_; else seq_erase_(%s, (int)p_); }\n  }\n", q, q);
    return ECG_OK;
  case ECG_OP_SequenceAt: {
    if (!xs || ys) break;
    const ecg_tensor *t = g->tensors[y];
    if (L->t[y].where == LW_HEAP) { /* an item of any dims (its rank, and the dims the model fixes, checked) */
      int k = L->t[y].rtd - 1, r = (int)t->n_dims;
      sb_printf(c, "  {\n    const %s_sequence *s_ = %s;\n    const int64_t n_ = s_->n;\n", L->prefix, lw_seq_ref(L, x));
      read_pos(L, n, 1, "0");
      sb_printf(c, "    if (p_ < 0) p_ += n_;\n    int ok_ = p_ >= 0 && p_ < n_ && s_->items[p_].rank == %d && s_->items[p_].dtype == %d;\n", r, t->dtype);
      for (int d = 0; d < r; d++)
        if (t->dims[d]->value >= 0) sb_printf(c, "    ok_ = ok_ && s_->items[p_].dims[%d] == %lld;\n", d, (long long)t->dims[d]->value);
      sb_printf(c, "    if (!ok_) ctx->err = -2; /* no such element, or not of the rank compiled for */\n"
                   "    else {\n      const %s_value *v_ = &s_->items[p_];\n      int rc_ = hb_need_(&ctx->hb[%d].p, &ctx->hb[%d].cap, v_->bytes);\n"
                   "      if (rc_) ctx->err = rc_;\n      else {\n        for (int d_ = 0; d_ < %d; d_++) ctx->rd[%d][d_] = v_->dims[d_];\n"
                   "        if (v_->bytes) memcpy(ctx->hb[%d].p, v_->data, v_->bytes);\n      }\n    }\n  }\n",
                L->prefix, k, k, r, k, k);
      return ECG_OK;
    }
    int64_t d[ECG_MAX_RANK];
    int r = ecg_tensor_dims(t, d);
    sb_printf(c, "  {\n    const %s_sequence *s_ = %s;\n    const int64_t n_ = s_->n;\n", L->prefix, lw_seq_ref(L, x));
    read_pos(L, n, 1, "0");
    sb_printf(c, "    if (p_ < 0) p_ += n_;\n    int ok_ = p_ >= 0 && p_ < n_ && s_->items[p_].rank == %d;\n", r);
    for (int k = 0; k < r; k++) sb_printf(c, "    ok_ = ok_ && s_->items[p_].dims[%d] == %lld;\n", k, (long long)d[k]);
    sb_printf(c, "    if (!ok_) ctx->err = -2; /* no such element, or not of the shape compiled for */\n"
                 "    else memcpy(%s, s_->items[p_].data, %zu);\n  }\n",
              lw_ptr(L, y), (size_t)ecg_tensor_numel(t) * ecg_dtype_size(t->dtype));
    return ECG_OK;
  }
  case ECG_OP_SequenceLength:
    if (!xs || ys || g->tensors[y]->dtype != ECG_INT64) break;
    sb_printf(c, "  %s[0] = (int64_t)%s->n;\n", lw_ptr(L, y), lw_seq_ref(L, x));
    return ECG_OK;
  case ECG_OP_SequenceConstruct:
    if (!ys) break;
    sb_printf(c, "  {\n    int rc_ = 0;\n    seq_clear_(%s);\n", q);
    for (size_t k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] < 0) return lw_node_err(L, n, e, "an omitted input is not supported");
      sb_printf(c, "    { int64_t p_ = %zu;\n", k);
      ECG_TRY(lw_seq_put(L, n, q, n->inputs[k], e));
      sb_printf(c, "    }\n");
    }
    sb_printf(c, "    if (rc_) ctx->err = rc_;\n  }\n");
    return ECG_OK;
  case ECG_OP_SequenceEmpty:
    if (!ys) break;
    sb_printf(c, "  seq_clear_(%s);\n", q);
    return ECG_OK;
  default: break;
  }
  return lw_node_err(L, n, e, "this operator is not supported on run-time sequences (supported: Identity, SequenceInsert, "
                              "SequenceErase, SequenceAt, SequenceLength, SequenceConstruct, SequenceEmpty)");
}

/* ---------------------------------------------------------------- run-time shapes */

/* Tensor id has run-time dims in ctx->rd[]: an LW_HEAP tensor, or a subgraph's capture of an
 * outer graph input of symbolic dims (its dims set before the subgraph runs, lw_sub_rt_dims). */
static int rt_dims(const ecg_lower *L, int id) {
  return id >= 0 && (L->t[id].where == LW_HEAP || (L->t[id].rtd && !ecg_tensor_static(L->g->tensors[id])));
}

int lw_node_rt(const ecg_lower *L, const ecg_node *n) {
  for (size_t k = 0; k < n->n_inputs; k++)
    if (rt_dims(L, n->inputs[k])) return 1;
  for (size_t k = 0; k < n->n_outputs; k++)
    if (rt_dims(L, n->outputs[k])) return 1;
  return 0;
}

/* Dim d of tensor id as a C expression: this run's (rt_dims) or the static number. */
static const char *dim_expr(const ecg_lower *L, int id, int d) {
  static __thread char ring[16][48];
  static __thread int slot;
  char *b = ring[slot++ & 15];
  if (rt_dims(L, id)) snprintf(b, 48, "ctx->rd[%d][%d]", L->t[id].rtd - 1, d);
  else snprintf(b, 48, "(int64_t)%lld", (long long)L->g->tensors[id]->dims[d]->value);
  return b;
}

/* Give output y the dims in the C array dy_ (rank r): an LW_HEAP y takes them and a buffer of
 * their size (bytes_ = elements x dtype size); a static y must have them (else the run fails,
 * -2). Emits "if (ok_) {" ... the caller closes it. */
static void out_dims(ecg_lower *L, int y, int r) {
  sbuf *c = &L->code;
  const ecg_tensor *t = L->g->tensors[y];
  sb_printf(c, "    size_t numel_ = 1;\n    for (int d_ = 0; d_ < %d; d_++) numel_ *= (size_t)dy_[d_];\n", r);
  if (L->t[y].where == LW_HEAP) {
    int k = L->t[y].rtd - 1;
    sb_printf(c, "    if (ok_) { int rc_ = hb_need_(&ctx->hb[%d].p, &ctx->hb[%d].cap, numel_ * %zu); if (rc_) { ctx->err = rc_; ok_ = 0; } }\n"
                 "    if (ok_) for (int d_ = 0; d_ < %d; d_++) ctx->rd[%d][d_] = dy_[d_];\n", k, k, ecg_dtype_size(t->dtype), r, k);
  } else {
    for (int d = 0; d < r; d++) sb_printf(c, "    ok_ = ok_ && dy_[%d] == %lld;\n", d, (long long)t->dims[d]->value);
  }
  sb_printf(c, "    if (!ok_) { if (!ctx->err) ctx->err = -2; } /* shapes that do not broadcast, or not the compiled one */\n    else {\n");
}

int lw_emit_rtshape(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  const ecg_graph *g = L->g;
  sbuf *c = &L->code;
  int op = lw_op(n);
  int x = n->n_inputs ? n->inputs[0] : -1, y = n->n_outputs == 1 ? n->outputs[0] : -1;
  const ecg_tensor *tx = x >= 0 ? g->tensors[x] : NULL, *ty = y >= 0 ? g->tensors[y] : NULL;
  if (!tx || !ty || tx->sequence || ty->sequence || !tx->shape_known || !ty->shape_known) goto refuse;
  int rx = (int)tx->n_dims, ry = (int)ty->n_dims;
  if (op == ECG_OP_Identity) {
    if (rx != ry || tx->dtype != ty->dtype) goto refuse;
    sb_printf(c, "  {\n    int ok_ = 1;\n    int64_t dy_[%d];\n", ry > 0 ? ry : 1);
    for (int d = 0; d < ry; d++) sb_printf(c, "    dy_[%d] = %s;\n", d, dim_expr(L, x, d));
    out_dims(L, y, ry);
    sb_printf(c, "    if (numel_) memcpy(%s, %s, numel_ * %zu);\n    }\n  }\n", lw_ptr(L, y), lw_ptr(L, x), ecg_dtype_size(ty->dtype));
    return ECG_OK;
  }
  if (op == ECG_OP_Shape || op == ECG_OP_Size) { /* the output is static: [rank] (Shape-15: start..end) or a scalar */
    if (L->t[y].where == LW_HEAP || ty->dtype != ECG_INT64) goto refuse;
    if (op == ECG_OP_Size) {
      sb_printf(c, "  %s[0] = 1", lw_ptr(L, y));
      for (int d = 0; d < rx; d++) sb_printf(c, " * %s", dim_expr(L, x, d));
      sb_printf(c, ";\n");
      return ECG_OK;
    }
    int64_t st = ecg_attr_i(n, "start", 0), en = ecg_attr_i(n, "end", rx);
    if (st < 0) st += rx;
    if (en < 0) en += rx;
    st = st < 0 ? 0 : st > rx ? rx : st;
    en = en < 0 ? 0 : en > rx ? rx : en;
    if (ecg_tensor_numel(ty) != (en > st ? en - st : 0)) goto refuse;
    for (int64_t d = st; d < en; d++) sb_printf(c, "  %s[%lld] = %s;\n", lw_ptr(L, y), (long long)(d - st), dim_expr(L, x, (int)d));
    return ECG_OK;
  }
  const char *sym = op == ECG_OP_Add ? "+" : op == ECG_OP_Sub ? "-" : op == ECG_OP_Mul ? "*" : op == ECG_OP_Div ? "/" : NULL;
  if (sym && n->n_inputs == 2 && n->inputs[1] >= 0) { /* numpy broadcasting of the two operands' run-time dims */
    int z = n->inputs[1];
    const ecg_tensor *tz = g->tensors[z];
    if (tz->sequence || !tz->shape_known || tx->dtype != tz->dtype || tx->dtype != ty->dtype) goto refuse;
    if (op == ECG_OP_Div && tx->dtype != ECG_FLOAT && tx->dtype != ECG_DOUBLE) goto refuse;
    int rz = (int)tz->n_dims;
    if (ry < rx || ry < rz) goto refuse;
    sb_printf(c, "  {\n    int ok_ = 1;\n    int64_t da_[%d], db_[%d], dy_[%d], sa_[%d], sb_[%d];\n", ry + 1, ry + 1, ry + 1, ry + 1, ry + 1);
    for (int d = 0; d < ry; d++) {
      int ax = d - (ry - rx), az = d - (ry - rz);
      sb_printf(c, "    da_[%d] = %s;\n    db_[%d] = %s;\n", d, ax >= 0 ? dim_expr(L, x, ax) : "1", d, az >= 0 ? dim_expr(L, z, az) : "1");
    }
    sb_printf(c, "    for (int d_ = %d - 1; d_ >= 0; d_--) {\n      dy_[d_] = da_[d_] == db_[d_] || db_[d_] == 1 ? da_[d_] : da_[d_] == 1 ? db_[d_] : -1;\n"
                 "      if (dy_[d_] < 0) ok_ = 0;\n    }\n"
                 "    { int64_t a_ = 1, b_ = 1;\n      for (int d_ = %d - 1; d_ >= 0; d_--) {\n"
                 "        sa_[d_] = da_[d_] == 1 ? 0 : a_; sb_[d_] = db_[d_] == 1 ? 0 : b_; a_ *= da_[d_]; b_ *= db_[d_];\n      }\n    }\n",
              ry, ry);
    out_dims(L, y, ry);
    sb_printf(c, "    const %s *a = %s;\n    const %s *b = %s;\n    %s *o = %s;\n", lw_ctype(L, x), lw_ptr(L, x), lw_ctype(L, z), lw_ptr(L, z),
              lw_ctype(L, y), lw_ptr(L, y));
    sb_printf(c, "    for (size_t j_ = 0; j_ < numel_; j_++) {\n      size_t rem_ = j_;\n      int64_t oa_ = 0, ob_ = 0;\n"
                 "      for (int d_ = %d - 1; d_ >= 0; d_--) { int64_t i_ = (int64_t)(rem_ %% (size_t)dy_[d_]); rem_ /= (size_t)dy_[d_]; oa_ += i_ * sa_[d_]; ob_ += i_ * sb_[d_]; }\n"
                 "      o[j_] = a[oa_] %s b[ob_];\n    }\n    }\n  }\n",
              ry, sym);
    return ECG_OK;
  }
refuse:;
  for (size_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
    int id = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
    if (rt_dims(L, id))
      return lw_node_err(L, n, e, "tensor '%s' has a run-time shape (its dims known only as the subgraph runs: an item of a "
                                  "sequence, what is made of one), which this operator's kernel does not take (not supported; supported: Identity, Shape, Size, "
                                  "Add, Sub, Mul, Div, and the sequence operators)", g->tensors[id]->name);
  }
  return lw_node_err(L, n, e, "not supported on tensors of run-time shape");
}

void lw_sub_rt_dims(ecg_lower *L, const ecg_node *n, const lw_sub *s) {
  const ecg_graph *sg = s->sg;
  for (size_t t = 0; t < sg->n_tensors; t++) {
    const ecg_tensor *x = sg->tensors[t];
    int idx = s->view.t[t].where != LW_HEAP && s->view.t[t].rtd && !ecg_tensor_static(x) ? ecg_node_capture_index(n, x->name, strlen(x->name)) : -1;
    if (idx < 0 || n->inputs[idx] < 0) continue;
    for (size_t d = 0; d < x->n_dims; d++)
      sb_printf(&L->code, "    ctx->rd[%d][%zu] = (int64_t)(%s);\n", s->view.t[t].rtd - 1, d, lw_dim(L, n->inputs[idx], (int)d));
  }
}
