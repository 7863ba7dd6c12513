/* ecg-lower: ECG -> a self-contained directory of C sources (tools/lower/LOWERED.md).
 *
 * Storage assignment and the static memory plan (liveness-based reuse, greedy
 * best-fit by size; SOD² §5.4.2 for the static case), the weights blob, model.c's
 * skeleton (context, create/run/destroy), model.h, model.json and the Makefile.
 * Kernels come from the per-operator emitters (tools/lower/emit/).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lower.h"
#include "ecg_arch.h"
#include "lower_api.h"
#include "emit/emit.h"
#include "chain.h"

enum { ALIGN = 64 };
static size_t align_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

void sb_printf(sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int w = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (w < 0) { b->oom = 1; return; }
    if ((size_t)w < room) { b->len += (size_t)w; return; }
    size_t cap = (b->cap + (size_t)w + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s) { b->oom = 1; return; }
    b->s = s;
    b->cap = cap;
  }
}

void sb_free(sbuf *b) { free(b->s); memset(b, 0, sizeof *b); }

/* The C storage type of a dtype in generated code: the C type, or uint16_t for the
 * 16-bit floats (float16, bfloat16), whose values are computed in float. */
static const char *storage_ctype(int dtype) {
  if (dtype == ECG_FLOAT16 || dtype == ECG_BFLOAT16) return "uint16_t";
  return ecg_dtype_ctype(dtype);
}

const char *lw_ctype(const ecg_lower *L, int id) {
  const char *c = storage_ctype(L->g->tensors[id]->dtype);
  return c ? c : "void";
}

const char *lw_vtype(const ecg_lower *L, int id) {
  return lw_half(L, id) ? "float" : lw_ctype(L, id);
}

int lw_half(const ecg_lower *L, int id) {
  int dt = L->g->tensors[id]->dtype;
  return dt == ECG_FLOAT16 ? 1 : dt == ECG_BFLOAT16 ? 2 : 0;
}

/* Emitters that handle the 16-bit floats: elementwise maps (values converted to float
 * at load and back at store) and pure data movement (bit copies). */
static int half_capable(ecg_emit_fn fn) {
  static const ecg_emit_fn ok[] = {emit_elementwise, emit_variadic, emit_copy, emit_transpose, emit_concat,
                                   emit_split, emit_slice, emit_gather, emit_expand, emit_tile, emit_space_depth, emit_castlike};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    if (ok[i] == fn) return 1;
  return 0;
}

int lw_node_control(const ecg_node *n) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  return op && (op->props & ECG_PROP_CONTROL);
}

static int node_touches_half(const ecg_lower *L, const ecg_node *n) {
  for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0 && lw_half(L, n->inputs[k])) return 1;
  for (size_t k = 0; k < n->n_outputs; k++) if (n->outputs[k] >= 0 && lw_half(L, n->outputs[k])) return 1;
  return 0;
}

void lw_ptr_opt(ecg_lower *L, const ecg_node *n, int i, char *buf, size_t sz) {
  if (i >= 0 && (size_t)i < n->n_inputs && n->inputs[i] >= 0) snprintf(buf, sz, "%s", lw_ptr(L, n->inputs[i]));
  else snprintf(buf, sz, "NULL");
}

const char *lw_ptr(ecg_lower *L, int id) {
  static __thread char ring[16][160];
  static __thread int slot;
  char *b = ring[slot++ & 15];
  const lw_tensor *t = &L->t[id];
  const char *ct = lw_ctype(L, id);
  if (L->ptr_over && L->ptr_over[id]) return L->ptr_over[id]; /* a reordered copy (layout_sel.c) */
  if (L->target == LW_TARGET_OPENCL) { /* kernel arguments: A (arena), W (weights), io<k> */
    switch (t->where) {
    case LW_INPUT: case LW_OUTPUT: snprintf(b, 160, "((__global %s *)io%d)", ct, t->io_index); break;
    case LW_CONST: snprintf(b, 160, "((__global const %s *)(W + %zu))", ct, t->offset); break;
    case LW_ARENA: snprintf(b, 160, "((__global %s *)(A + %zu))", ct, t->offset); break;
    default: snprintf(b, 160, "((__global %s *)0)", ct); break;
    }
    return b;
  }
  switch (t->where) {
  case LW_INPUT: case LW_OUTPUT: snprintf(b, 160, "((%s *)ctx->io[%d])", ct, t->io_index); break;
  case LW_CONST: snprintf(b, 160, "((const %s *)(ctx->w + %zu))", ct, t->offset); break;
  case LW_ARENA:
    if (L->dyn && t->offset) snprintf(b, 160, "((%s *)(ctx->arena + ctx->off[%d] + %zu))", ct, t->dbuf, t->offset);
    else if (L->dyn) snprintf(b, 160, "((%s *)(ctx->arena + ctx->off[%d]))", ct, t->dbuf);
    else snprintf(b, 160, "((%s *)(%s + %zu))", ct, L->arena_name ? L->arena_name : "ctx->arena", t->offset);
    break;
  case LW_HEAP: snprintf(b, 160, "((%s *)ctx->hb[%d].p)", ct, t->rtd - 1); break;
  default: snprintf(b, 160, "((%s *)0)", ct); break;
  }
  return b;
}

const char *lw_gq(const ecg_lower *L) { return L->target == LW_TARGET_OPENCL ? "__global " : ""; }

void lw_cl_work(ecg_lower *L, int64_t n) {
  if (L->target != LW_TARGET_OPENCL || !L->cl_work || !L->cur) return;
  int p = (int)(L->cur - L->k);
  if (n > L->cl_work[p]) L->cl_work[p] = n;
}

int lw_packed_slot(ecg_lower *L, const char *size_expr) {
  int slot = L->n_packed++;
  if (L->pk_dyn)
    sb_printf(&L->init, "  if (!(ctx->pk[%d] = alloc64(sizeof(float) * (size_t)(%s)))) { %s_destroy(ctx); errno = ENOMEM; return NULL; }\n",
              slot, size_expr, L->prefix);
  else
    sb_printf(&L->pk_sizes, "    pkb_[%d] = sizeof(float) * (size_t)(%s);\n", slot, size_expr);
  return slot;
}

void lw_need_scratch(ecg_lower *L, const char *expr) {
  if (L->dyn) /* a guarded kernel's sizes may be negative when its branch is not taken */
    sb_printf(&L->scratch_expr, "  { int64_t v_ = (int64_t)(%s); if (v_ > 0 && (size_t)v_ > scratch) scratch = (size_t)v_; }\n", expr);
  else sb_printf(&L->scratch_expr, "  if ((size_t)(%s) > scratch) scratch = (size_t)(%s);\n", expr, expr);
}

/* ---------------------------------------------------------------- guarded nodes */

/* Read every node's guard (ECG_ATTR_GUARD) into L->gd_*, mark the tensors guarded nodes
 * write. Errors: a malformed guard or one of more than LW_MAX_GUARD entries, naming the
 * node. */
static int load_guards(ecg_lower *L, ecg_err *e) {
  const ecg_graph *g = L->g;
  char lb[256];
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_attr *a = ecg_attr_find(g->nodes[i], ECG_ATTR_GUARD);
    if (!a) continue;
    if (!L->gd_n) {
      L->gd_n = calloc(g->n_nodes + 1, sizeof *L->gd_n);
      L->gd_c = calloc(g->n_nodes + 1, sizeof *L->gd_c);
      L->gd_s = calloc(g->n_nodes + 1, sizeof *L->gd_s);
      L->tguard = calloc(g->n_tensors + 1, 1);
      if (!L->gd_n || !L->gd_c || !L->gd_s || !L->tguard) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    }
    int k = ecg_node_guard(g, g->nodes[i], LW_MAX_GUARD, L->gd_c[i], L->gd_s[i]);
    if (k < 0 || a->n_strings > LW_MAX_GUARD)
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): malformed guard '%s' (entries \"+NAME\"/\"-NAME\" of tensors, at most %d)",
                      ecg_node_label(g, g->nodes[i], lb, sizeof lb), g->nodes[i]->op_type, ECG_ATTR_GUARD, LW_MAX_GUARD);
    L->gd_n[i] = k;
    for (size_t o = 0; k && o < g->nodes[i]->n_outputs; o++)
      if (g->nodes[i]->outputs[o] >= 0) L->tguard[g->nodes[i]->outputs[o]] = 1;
  }
  return ECG_OK;
}

/* A guarded node reads its guard's conditions: reorder order (a topological order) so that
 * each comes after their producers too, keeping the order otherwise (the earliest ready
 * node first). */
static int guard_order(ecg_lower *L, int *order, ecg_err *e) {
  const ecg_graph *g = L->g;
  size_t nn = g->n_nodes;
  if (!L->gd_n) return ECG_OK;
  int *prod = malloc(sizeof(int) * (g->n_tensors + 1)), *out = malloc(sizeof(int) * (nn + 1));
  bool *done = calloc(nn + 1, 1);
  if (!prod || !out || !done) { free(prod); free(out); free(done); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  ecg_producers(g, prod);
  size_t k = 0;
  while (k < nn) {
    size_t before = k;
    for (size_t p = 0; p < nn; p++) {
      int v = order[p];
      if (done[v]) continue;
      bool ready = true;
      for (size_t j = 0; j < g->nodes[v]->n_inputs && ready; j++) {
        int t = g->nodes[v]->inputs[j];
        ready = t < 0 || prod[t] < 0 || done[prod[t]];
      }
      for (int j = 0; j < L->gd_n[v] && ready; j++) ready = prod[L->gd_c[v][j]] < 0 || done[prod[L->gd_c[v][j]]];
      if (!ready) continue;
      done[v] = true;
      out[k++] = v;
      break;
    }
    if (k == before) break; /* a guard read by its own condition's producer: a cycle */
  }
  int rc = ECG_OK;
  if (k < nn) rc = ecg_errf(e, ECG_ERR_INPUT, "guarded nodes (%s) form a cycle with their conditions", ECG_ATTR_GUARD);
  else memcpy(order, out, sizeof(int) * nn);
  free(prod); free(out); free(done);
  return rc;
}

int lw_guard_c(ecg_lower *L, int i, sbuf *c) {
  if (!L->gd_n || !L->gd_n[i]) return 0;
  for (int j = 0; j < L->gd_n[i]; j++)
    sb_printf(c, "%s%s(%s[0] != 0)", j ? " && " : "", L->gd_s[i][j] ? "" : "!", lw_ptr(L, L->gd_c[i][j]));
  return 1;
}

int lw_uid(ecg_lower *L) { return L->n_tmp++; }

size_t lw_blob(ecg_lower *L, const void *data, size_t n) {
  if (!L->blob_len && !L->blob_cap) L->blob_start = L->weights_bytes;
  size_t off = L->weights_bytes, need = L->blob_len + align_up(n);
  if (need > L->blob_cap) {
    size_t cap = L->blob_cap ? L->blob_cap : 1 << 16;
    while (cap < need) cap *= 2;
    unsigned char *nb = realloc(L->blob, cap);
    if (!nb) return (size_t)-1;
    L->blob = nb;
    L->blob_cap = cap;
  }
  memcpy(L->blob + L->blob_len, data, n);
  memset(L->blob + L->blob_len + n, 0, align_up(n) - n);
  L->blob_len = need;
  L->weights_bytes += align_up(n);
  return off;
}

int lw_node_err(const ecg_lower *L, const ecg_node *n, ecg_err *e, const char *fmt, ...) {
  char lb[256], msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): %s", ecg_node_label(L->g, n, lb, sizeof lb), n->op_type, msg);
}

ecg_op_id lw_op(const ecg_node *n) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  return op ? op->id : ECG_OP_NONE;
}

const char *lw_load_open(const ecg_lower *L, int id) {
  int h = lw_half(L, id);
  return h == 1 ? "ecg_h2f(" : h == 2 ? "ecg_bf2f(" : "(";
}

int lw_node_index(const ecg_lower *L, const ecg_node *n) {
  for (size_t i = 0; i < L->g->n_nodes; i++)
    if (L->g->nodes[i] == n) return (int)i;
  return -1;
}

int lw_dims(const ecg_lower *L, int id, int64_t *dims) { return ecg_tensor_dims(L->g->tensors[id], dims); }

int lw_axis(int64_t axis, int r) {
  if (axis < 0) axis += r;
  return axis >= 0 && axis < r ? (int)axis : -1;
}

/* Row-major strides of tensor id's dims; returns the rank. */
static int plain_view(const ecg_lower *L, int id, int64_t *st) {
  int64_t d[ECG_MAX_RANK];
  int r = lw_dims(L, id, d);
  lw_strides(r, d, st);
  return r;
}

int lw_operand_view(const ecg_lower *L, const ecg_node *n, int k, int *base, int64_t *st) {
  const lw_kernel *K = L->cur;
  int r, t = n->inputs[k];
  for (int m = K ? K->nm_core : 0; K && m < K->nm; m++) {
    const ecg_node *p = L->g->nodes[K->members[m]];
    if (p->outputs[0] == t && ecg_index_map_in(L->g, n, k, p, st, &r)) { *base = p->inputs[0]; return r; }
  }
  *base = t;
  return plain_view(L, t, st);
}

int lw_output_view(const ecg_lower *L, const ecg_node *n, int *dst, int64_t *st) {
  const lw_kernel *K = L->cur;
  int r, t = n->outputs[0];
  for (int m = K ? K->nm_core : 0; K && m < K->nm; m++) {
    const ecg_node *p = L->g->nodes[K->members[m]];
    if (p->inputs[0] == t && ecg_index_map_out(L->g, n, p, st, &r)) { *dst = p->outputs[0]; return r; }
  }
  *dst = t;
  return plain_view(L, t, st);
}

/* A LW_K_EPI kernel whose epilogue is one of the runtime's own activations applied in
 * place to the dominant node's output (ecg_builtin_act_chain: Relu, Clip, LeakyRelu,
 * Sigmoid, HardSwish, or SiLU as Sigmoid and Mul): writes the C expression of that
 * ecg_act into buf and returns 1. The runtime applies it to the accumulators in
 * registers before the store (ecg_gemm.c: the GEMM micro-kernel, the depthwise and direct
 * conv kernels) instead of calling a generated epilogue on every stored segment. Only
 * when the dominant writes into the block's output (alias_of) and the chain's
 * intermediates live nowhere else; C target, no index maps. Reads L->epi_skip and
 * L->epi_x (epi_bias_of; layout_sel.c sets them to 0 and the conv's output). Declared in
 * lower.h. */
int lw_builtin_epilogue(const ecg_lower *L, const lw_kernel *K, char *buf, size_t sz) {
  const ecg_graph *g = L->g;
  if (L->target != LW_TARGET_C || L->hetero || L->sym || K->kind != LW_K_EPI || K->nm != K->nm_core) return 0;
  const int *mem = K->members + K->epi_from;
  int nm = K->nm_core - K->epi_from;
  if (nm < 1) return 0;
  int dy = g->nodes[K->dominant]->outputs[0], y = g->nodes[mem[nm - 1]]->outputs[0];
  if (y < 0 || g->tensors[y]->dtype != ECG_FLOAT || L->t[y].where == LW_NONE || L->t[dy].alias_of != y) return 0;
  for (int i = 0; i + 1 < nm; i++)
    if (L->t[g->nodes[mem[i]]->outputs[0]].where != LW_NONE) return 0;
  if (L->epi_skip == nm) { /* the dominant's call applies the whole epilogue (its bias Add) */
    snprintf(buf, sz, "((ecg_act){ECG_ACT_NONE, 0, 0, 0, 0})");
    return 1;
  }
  float a, b;
  ecg_builtin_act k = ecg_builtin_act_chain(g, L->epi_x, mem + L->epi_skip, nm - L->epi_skip, &a, &b);
  if (k == ECG_BACT_NONE) return 0;
  char init[160];
  lw_act_init((int)k, a, b, init, sizeof init);
  snprintf(buf, sz, "((ecg_act)%s)", init);
  return 1;
}

/* A LW_K_EPI kernel whose dominant is a GEMM that adds a row vector in its micro-kernel
 * (lw_gemm_takes_bias_n) and whose first epilogue member adds a constant one
 * (ecg_bias_n_of: MatMul + bias Add, as transformer exports write their linear layers):
 * sets L->epi_bias to that vector's C pointer (in buf), L->epi_skip to 1 and L->epi_x to
 * the Add's output, so the epilogue (builtin or generated) starts after the Add. Only when
 * the dominant writes into the block's output (alias_of), the Add's output lives nowhere
 * else unless it is that output, and no later member reads the dominant's own output (the
 * unbiased product, which is then never stored); C target. Otherwise resets them (no bias: epi_x is the
 * dominant's output). */
static void epi_bias_of(ecg_lower *L, const lw_kernel *K, const ecg_node *n, char *buf, size_t sz) {
  const ecg_graph *g = L->g;
  int dy = n->outputs[0];
  L->epi_bias = NULL;
  L->epi_skip = 0;
  L->epi_x = dy;
  if (L->target != LW_TARGET_C || L->hetero || L->sym || K->kind != LW_K_EPI || K->nm != K->nm_core) return;
  const int *mem = K->members + K->epi_from;
  int nm = K->nm_core - K->epi_from;
  if (nm < 1) return;
  const ecg_node *f = g->nodes[mem[0]];
  int c = ecg_bias_n_of(g, dy, f), y = g->nodes[mem[nm - 1]]->outputs[0], fy = f->outputs[0];
  if (c < 0 || y < 0 || L->t[y].where == LW_NONE || L->t[dy].alias_of != y || (nm > 1 && L->t[fy].where != LW_NONE)) return;
  for (int i = 1; i < nm; i++) /* a later member reading the unbiased product: it is never stored */
    for (size_t q = 0; q < g->nodes[mem[i]]->n_inputs; q++)
      if (g->nodes[mem[i]]->inputs[q] == dy) return;
  if (!lw_gemm_takes_bias_n(L, n)) return;
  snprintf(buf, sz, "%s", lw_ptr(L, c));
  L->epi_bias = buf;
  L->epi_skip = 1;
  L->epi_x = fy;
}

int lw_emit_kernel(ecg_lower *L, int p, ecg_err *e) {
  L->cur = &L->k[p];
  if (L->klay) { /* GCD² layouts: inputs in another layout reordered first, then the kernel */
    ECG_TRY(lw_layout_enter(L, p, e));
    int rc = L->klay[p] ? lw_emit_nchwc_kernel(L, p, e) : lw_emit_kernel_plain(L, p, e);
    lw_layout_leave(L);
    return rc;
  }
  return lw_emit_kernel_plain(L, p, e);
}

int lw_emit_kernel_plain(ecg_lower *L, int p, ecg_err *e) {
  lw_kernel *K = &L->k[p];
  const ecg_graph *g = L->g;
  L->cur = K;
  if (K->kind == LW_K_EW) return lw_emit_ew_block(L, K->members, K->nm, e);
  if (K->kind == LW_K_ROW) return lw_emit_row_block(L, K->members, K->nm, e);
  if (K->kind == LW_K_IBR) return lw_emit_ibr(L, p, e); /* C only: refused for OpenCL in ecg_lower_dir */
  if (K->kind == LW_K_SE) return lw_emit_se(L, p, e);   /* C only, likewise */
  if (K->kind == LW_K_CPOOL) return lw_emit_conv_pool(L, p, e); /* C only, likewise */
  const ecg_node *n = g->nodes[K->members[0]];
  if (K->kind == LW_K_SINGLE && lw_node_seq(L, n) && !lw_node_control(n)) return lw_emit_sequence(L, n, e); /* run-time sequences */
  if (K->kind == LW_K_SINGLE && lw_node_rt(L, n) && !lw_node_control(n)) return lw_emit_rtshape(L, n, e); /* run-time shapes */
  ecg_emit_fn fn = ecg_emitter(lw_op(n));
  if (K->kind == LW_K_SINGLE) return L->target == LW_TARGET_OPENCL ? lw_cl_emitter(fn)(L, n, e) : fn(L, n, e);
  char fname[64] = "", act[200], bias[200];
  epi_bias_of(L, K, n, bias, sizeof bias);
  int builtin = lw_builtin_epilogue(L, K, act, sizeof act);
  if (!builtin) {
    snprintf(fname, sizeof fname, "%sepi%d", L->sym ? L->sym : "", p);
    ECG_TRY(lw_emit_epilogue(L, p, fname, e));
    if (L->target == LW_TARGET_OPENCL) { /* the OpenCL emitters call epi<p>(y + i, 1, ECG_CL_PASS) per element */
      L->epi_act = fname;
      L->epi_used = 0;
      int rc = lw_cl_emitter(fn)(L, n, e);
      L->epi_act = NULL;
      if (rc == ECG_OK && !L->epi_used)
        rc = lw_node_err(L, n, e, "the OpenCL printer cannot fuse this operator's epilogue (lower without ecg-fuse, or --target c)");
      return rc;
    }
    snprintf(act, sizeof act, "((ecg_act){ECG_ACT_FN, 0, 0, %s, ctx})", fname);
  }
  L->epi_act = act;
  L->epi_used = 0;
  L->epi_bias_used = 0;
  int rc = fn(L, n, e);
  L->epi_act = NULL;
  if (rc == ECG_OK && L->epi_bias && !L->epi_bias_used)
    rc = lw_node_err(L, n, e, "internal: the GEMM's emitter took no bias_n (lw_gemm_takes_bias_n said it would)");
  L->epi_bias = NULL;
  L->epi_skip = 0;
  L->epi_x = -1;
  if (rc == ECG_OK && !L->epi_used) { /* the runtime call took no epilogue: one more pass */
    K->fallback = 1;
    int y = n->outputs[0];
    long long cnt = (long long)ecg_tensor_numel(g->tensors[y]);
    if (builtin) sb_printf(&L->code, "  ecg_rt1_act_apply(%s, %s, %lld);\n", act, lw_ptr(L, y), cnt);
    else sb_printf(&L->code, "  %s(%s, %lld, ctx);\n", fname, lw_ptr(L, y), cnt);
  }
  return rc;
}

/* ---------------------------------------------------------------- schedules */

/* The schedule of kernel p (its fusion block's Schedule, set by ecg-partition --tune) into
 * L->sched: NULL when there is none or every knob is 0 (intensive_fusion, which
 * lw_form_kernels took, aside), so such a kernel lowers byte for byte as before. Knobs the
 * lowering cannot honour here are refused naming node n: schedules apply to --target c
 * kernels outside c+opencl placements; tiles only to the intensive-fusion kernel. A block
 * lowered as several kernels (K->nparts > 1) shares its schedule among them
 * (L->sched_shared). */
static int kernel_schedule(ecg_lower *L, int p, const ecg_node *n, ecg_err *e) {
  const lw_kernel *K = &L->k[p];
  int b = L->g->nodes[K->members[0]]->fusion_block;
  const ecg_schedule *s = b >= 0 && (size_t)b < L->g->n_blocks ? L->g->blocks[b]->schedule : NULL;
  L->sched = NULL;
  L->sched_used = 0;
  L->sched_shared = 0;
  L->conv_algo_next = 0;
  if (!s || (!s->n_tile && !s->vector_width && !s->unroll && !s->threads && !s->conv_algo)) return ECG_OK;
  L->sched_shared = K->nparts > 1;
  if (L->target != LW_TARGET_C || L->hetero)
    return lw_node_err(L, n, e, "a tuned schedule (block %d) is honoured by --target c only", b);
  if (s->vector_width && s->unroll)
    return lw_node_err(L, n, e, "schedule vector_width %d and unroll %d (block %d) exclude each other (an OpenMP simd loop takes no unroll pragma)", s->vector_width, s->unroll, b);
  L->sched = s;
  return ECG_OK;
}

/* After kernel p's emission: a knob the kernel's code never took is an error naming node
 * n; for a schedule shared by several kernels of one block, a knob none of them took, once
 * the last has been emitted. */
static int kernel_schedule_used(ecg_lower *L, int p, const ecg_node *n, ecg_err *e) {
  const ecg_schedule *s = L->sched;
  if (!s) return ECG_OK;
  if (L->sched_shared) {
    int b = L->g->nodes[L->k[p].members[0]]->fusion_block;
    L->sched_acc[b] |= L->sched_used;
    if (--L->sched_left[b] > 0) return ECG_OK;
    L->sched_used = L->sched_acc[b];
  }
  const char *which = L->sched_shared ? "no stage kernel of this block (intensive_fusion off)" : "this kernel";
  if ((s->vector_width || s->unroll) && !(L->sched_used & LW_SCHED_SIMD))
    return lw_node_err(L, n, e, "schedule vector_width %d / unroll %d: %s has no generated loop they apply to", s->vector_width,
                       s->unroll, which);
  if (s->n_tile && !(L->sched_used & LW_SCHED_TILE))
    return lw_node_err(L, n, e, "schedule tile (block %d): %s; only the fused intensive-fusion kernel takes a tile (its output rows per band)",
                       L->g->nodes[L->k[p].members[0]]->fusion_block,
                       L->sched_shared ? "the block is lowered as its stage kernels (intensive_fusion off)" : "this kernel is no intensive-fusion kernel");
  if (s->conv_algo && !(L->sched_used & LW_SCHED_CONV))
    return lw_node_err(L, n, e, L->sched_shared ? "schedule conv_algo %s: %s is a Conv through ecg_rt1_conv2d that takes it"
                                                : "schedule conv_algo %s: %s is no Conv through ecg_rt1_conv2d",
                       ecg_conv_algo_name(s->conv_algo), which);
  return ECG_OK;
}

/* ---------------------------------------------------------------- planning */

/* Check every tensor a node touches has a static shape (dyn: symbolic dims are checked by
 * lw_dyn_setup instead) and a C type. */
static int check_static_rt(const ecg_graph *g, int dyn, const bool *rt, ecg_err *e);
static int check_static(const ecg_graph *g, int dyn, ecg_err *e) { return check_static_rt(g, dyn, NULL, e); }
/* ... except the tensors rt[] marks (a subgraph's tensors of run-time shape, LW_HEAP) */
static int check_static_rt(const ecg_graph *g, int dyn, const bool *rt, ecg_err *e) {
  char lb[256], sh[128];
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    for (int pass = 0; pass < 2; pass++) {
      size_t cnt = pass ? n->n_outputs : n->n_inputs;
      for (size_t k = 0; k < cnt; k++) {
        const ecg_tensor *t = pass ? ecg_node_output(g, n, (int)k) : ecg_node_input(g, n, (int)k);
        if (!t || t->sequence) continue; /* a run-time sequence: emit/sequence.c */
        const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
        int id = pass ? n->outputs[k] : n->inputs[k];
        if (!dyn && !ecg_tensor_static(t) && !(rt && rt[id]))
          return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): tensor '%s' has shape %s, not static; %s",
                          ecg_node_label(g, n, lb, sizeof lb), n->op_type, t->name, ecg_shape_str(t, sh, sizeof sh),
                          pass && op && (op->props & ECG_PROP_CONTROL)
                              ? "its subgraphs give it different or run-time shapes (dynamic shapes are not supported)"
                              : "fix dims with --input-shape (onnx2ecg, or ecg-lower on this ECG)");
        if (!storage_ctype(t->dtype))
          return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): tensor '%s' has dtype %s, which the lowering does not support",
                          ecg_node_label(g, n, lb, sizeof lb), n->op_type, t->name, ecg_dtype_name(t->dtype));
      }
    }
  }
  for (size_t k = 0; k < g->n_inputs + g->n_outputs; k++) {
    int id = k < g->n_inputs ? g->inputs[k] : g->outputs[k - g->n_inputs];
    const ecg_tensor *t = g->tensors[id];
    if (t->sequence || (rt && rt[id])) continue;
    if (!dyn && !ecg_tensor_static(t))
      return ecg_errf(e, ECG_ERR_INPUT, "graph %s '%s' has shape %s, not static; fix dims with --input-shape (onnx2ecg, or ecg-lower on this ECG)",
                      k < g->n_inputs ? "input" : "output", t->name, ecg_shape_str(t, sh, sizeof sh));
    if (!storage_ctype(t->dtype))
      return ecg_errf(e, ECG_ERR_INPUT, "graph input/output '%s' has dtype %s, which the lowering does not support",
                      t->name, ecg_dtype_name(t->dtype));
  }
  return ECG_OK;
}

static size_t tensor_bytes(const ecg_tensor *t) {
  return (size_t)ecg_tensor_numel(t) * ecg_dtype_size(t->dtype);
}

/* Static memory plan: each intermediate tensor lives from its producer's position to
 * its last consumer's; memplan.c places them (L->plan: SOD²'s peak-first plan by
 * default) so that tensors with intersecting lifetimes never overlap. */
static int root_of(const ecg_lower *L, int t) {
  while (L->t[t].alias_of >= 0) t = L->t[t].alias_of;
  return t;
}

int lw_same_storage(const ecg_lower *L, int a, int b) {
  const lw_tensor *x = &L->t[a], *y = &L->t[b];
  return x->where == y->where && x->offset == y->offset && x->io_index == y->io_index &&
         (!L->dyn || x->where != LW_ARENA || x->dbuf == y->dbuf); /* dyn: offsets within run-time buffers */
}

/* Reorganize nodes (Reshape, Flatten, Squeeze, Unsqueeze: DNNFusion Table 3.2) do not
 * move bytes: an output that is an ordinary intermediate shares its input's storage. */
static void find_aliases(ecg_lower *L, const int *order) {
  const ecg_graph *g = L->g;
  for (size_t p = 0; p < g->n_nodes; p++) {
    const ecg_node *n = g->nodes[order[p]];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    if (!op || op->mapping != ECG_MAP_REORGANIZE || n->n_inputs < 1 || n->n_outputs != 1) continue;
    int in = n->inputs[0], out = n->outputs[0];
    if (in < 0 || out < 0 || L->t[out].where != LW_ARENA || L->t[in].bytes != L->t[out].bytes) continue;
    if (g->tensors[in]->sequence) continue; /* a sequence operator's element or length: copied */
    L->t[out].alias_of = in;
  }
  /* Concat along an axis with only unit dims before it (the channels of an NCHW batch of
   * one: squeezenet's fire modules, DenseNet-like blocks): each input is one contiguous
   * slab of the output, so an input that is an ordinary intermediate (arena, not aliased,
   * not given twice) is placed in its slab (alias_off): its producer writes the result in
   * place and the Concat moves nothing (emit_concat skips a piece already in its slab).
   * The plan then keeps the whole output live from the first producer on. C target only. */
  if (L->target != LW_TARGET_C || L->hetero || L->dyn) return; /* dyn: slab offsets are run-time sizes */
  /* a tensor written by a block in a blocked layout (GCD², layout_sel.c) has NCHWc bytes: it
   * is an NCHW slab only when its channels fill whole blocks. A Concat is placed in place when
   * its output and inputs share one layout and, in NCHWc, every channel count is a multiple of
   * the block (each input then lies in its slab at NCHW's byte offset) */
  int *blocked = calloc(g->n_tensors + 1, sizeof *blocked); /* per tensor: its block size C, 0 NCHW */
  if (!blocked) return; /* no aliasing: correct, only slower */
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0) blocked[n->outputs[k]] = lw_block_lanes(g, n->fusion_block);
  }
  for (size_t p = 0; p < g->n_nodes; p++) {
    const ecg_node *n = g->nodes[order[p]];
    if (lw_op(n) != ECG_OP_Concat || n->n_outputs != 1 || n->outputs[0] < 0) continue;
    int C = blocked[n->outputs[0]], mixed = 0;
    for (size_t k = 0; k < n->n_inputs; k++) {
      int64_t d[ECG_MAX_RANK];
      if (n->inputs[k] < 0) continue;
      mixed |= blocked[n->inputs[k]] != C || (C && (lw_dims(L, n->inputs[k], d) != 4 || d[1] % C));
    }
    if (mixed) continue;
    int out = n->outputs[0];
    const lw_tensor *to = &L->t[out];
    if (to->where != LW_ARENA || to->alias_of >= 0 || to->fixed || to->pinned) continue;
    int64_t od[ECG_MAX_RANK];
    int r = lw_dims(L, out, od), axis = lw_axis(ecg_attr_i(n, "axis", 1), r);
    int64_t outer = 1;
    for (int d = 0; d < axis; d++) outer *= od[d];
    if (axis < 0 || outer != 1) continue;
    size_t off = 0;
    for (size_t k = 0; k < n->n_inputs; k++) {
      int in = n->inputs[k], dup = 0;
      if (in < 0) continue;
      for (size_t j = 0; j < n->n_inputs; j++) dup |= j != k && n->inputs[j] == in;
      lw_tensor *ti = &L->t[in];
      if (!dup && ti->where == LW_ARENA && ti->alias_of < 0 && !ti->fixed && !ti->pinned && in != out &&
          g->tensors[in]->dtype == g->tensors[out]->dtype) {
        ti->alias_of = out;
        ti->alias_off = off;
      }
      off += ti->bytes;
    }
  }
  free(blocked);
}

static int region_need(ecg_lower *L, const ecg_node *n, size_t *need, ecg_err *e);

static int plan_memory(ecg_lower *L, const int *order, ecg_err *e) {
  const ecg_graph *g = L->g;
  size_t nt = g->n_tensors;
  int *def = malloc(sizeof(int) * (nt + 1)), *last = malloc(sizeof(int) * (nt + 1));
  int *list = malloc(sizeof(int) * (nt + 1));
  if (!def || !last || !list) {
    free(def); free(last); free(list);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  for (size_t t = 0; t < nt; t++) def[t] = last[t] = -1;
  /* Liveness is tracked on alias roots, by kernel position: a Reorganize output aliasing
   * its input keeps the root's storage alive until the alias's last use. */
  (void)order;
  for (int p = 0; p < L->nk; p++)
    for (int m = 0; m < L->k[p].nm; m++) {
      const ecg_node *n = g->nodes[L->k[p].members[m]];
      for (size_t k = 0; k < n->n_outputs; k++) {
        int t = n->outputs[k];
        if (t < 0) continue;
        t = root_of(L, t);
        if (def[t] < 0) def[t] = p;
        if (last[t] < p) last[t] = p;
      }
      for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0) last[root_of(L, n->inputs[k])] = p;
      int ni = L->k[p].members[m]; /* a guarded node reads its conditions */
      for (int k = 0; L->gd_n && k < L->gd_n[ni]; k++) last[root_of(L, L->gd_c[ni][k])] = p;
    }
  for (size_t t = 0; t < nt; t++) /* a subgraph's inputs and outputs live throughout */
    if (L->t[t].pinned) {
      int r = root_of(L, (int)t);
      def[r] = 0;
      last[r] = L->nk > 0 ? L->nk - 1 : 0;
    }
  int nl = 0;
  for (size_t t = 0; t < nt; t++)
    if (L->t[t].where == LW_ARENA && L->t[t].alias_of < 0 && !L->t[t].fixed) list[nl++] = (int)t;
  /* a control-flow kernel's subgraphs need a region while it runs: one more buffer, live
   * at that kernel only, placed like the others (lw_lower_subgraph plans inside it) */
  free(L->region_off);
  L->region_off = malloc(sizeof *L->region_off * ((size_t)L->nk + 1));
  lw_buf *bufs = malloc(sizeof *bufs * ((size_t)nl + (size_t)L->nk + 1));
  int *region_k = malloc(sizeof(int) * ((size_t)L->nk + 1));
  if (!bufs || !L->region_off || !region_k) {
    free(def); free(last); free(list); free(bufs); free(region_k);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  for (int i = 0; i < nl; i++) {
    int t = list[i];
    bufs[i] = (lw_buf){.bytes = align_up(L->t[t].bytes ? L->t[t].bytes : 1), .first = def[t], .last = last[t]};
  }
  int nr = 0, rc = ECG_OK;
  for (int p = 0; p < L->nk && rc == ECG_OK; p++) {
    const ecg_node *n = g->nodes[L->k[p].members[0]];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    size_t need = 0;
    L->region_off[p] = 0;
    if (!op || !(op->props & ECG_PROP_CONTROL) || L->k[p].nm != 1) continue;
    if (L->dyn) { /* its subgraphs are static code (run-time shapes: LW_HEAP, rtd) reading the node's
                   * operands where they live: an outer tensor in a run-time buffer, or a region
                   * of run-time size, is not supported */
      char lb[256];
      bool ok = true;
      /* a capture is read by the subgraph's static code where it lives: a graph input or a
       * constant, not an intermediate (placed by the run-time plan) */
      for (size_t k = n->n_inputs - (size_t)ecg_node_n_captures(n); k < n->n_inputs && ok; k++)
        ok = n->inputs[k] < 0 || L->t[n->inputs[k]].where != LW_ARENA;
      if (!ok) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): control flow is not supported with symbolic dims yet (its subgraphs read "
                      "an intermediate the run-time plan places); fix dims with --input-shape", ecg_node_label(g, n, lb, sizeof lb), n->op_type);
        break;
      }
      /* its subgraphs' static plans go to ctx->rgn (one buffer: control-flow nodes of the main
       * graph never run at the same time) */
      if ((rc = region_need(L, n, &need, e)) != ECG_OK) break;
      if (need > L->rgn_bytes) L->rgn_bytes = need;
      continue;
    }
    if ((rc = region_need(L, n, &need, e)) != ECG_OK || !need) continue;
    region_k[nr] = p;
    bufs[nl + nr++] = (lw_buf){.bytes = align_up(need), .first = p, .last = p};
  }
  if (rc == ECG_OK && L->dyn) { /* sizes are known at run time: the plan is made there (prepare_) */
    L->n_dbuf = nl;
    L->dbuf_tensor = malloc(sizeof(int) * ((size_t)nl + 1));
    L->dbuf_life = malloc(sizeof(int) * 2 * ((size_t)nl + 1));
    if (!L->dbuf_tensor || !L->dbuf_life) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (int i = 0; rc == ECG_OK && i < nl; i++) {
      L->dbuf_tensor[i] = list[i];
      L->dbuf_life[2 * i] = def[list[i]];
      L->dbuf_life[2 * i + 1] = last[list[i]];
      L->t[list[i]].dbuf = i;
      L->t[list[i]].offset = 0;
    }
    for (size_t t = 0; rc == ECG_OK && t < nt; t++)
      if (L->t[t].alias_of >= 0) {
        size_t off = 0;
        for (int u = (int)t; L->t[u].alias_of >= 0; u = L->t[u].alias_of) off += L->t[u].alias_off;
        const lw_tensor *r = &L->t[root_of(L, (int)t)];
        L->t[t].where = r->where;
        L->t[t].offset = r->offset + off;
        L->t[t].io_index = r->io_index;
        L->t[t].dbuf = r->dbuf;
      }
    free(def); free(last); free(list); free(bufs); free(region_k);
    return rc;
  }
  if (rc != ECG_OK) {
    free(def); free(last); free(list); free(bufs); free(region_k);
    return rc;
  }
  /* every planner on the same buffers, for model.json (the optimum's search bounded: a
   * heuristic at the lower bound is optimal at once; else 200000 search nodes) */
  if (lw_plan_compare(bufs, nl + nr, 200000, &L->plan_cmp)) {
    free(def); free(last); free(list); free(bufs); free(region_k);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  size_t total = lw_plan_place(bufs, nl + nr, L->plan);
  L->arena_lower_bound = lw_plan_lower_bound(bufs, nl + nr);
  for (int i = 0; i < nl; i++) L->t[list[i]].offset = L->arena_base + bufs[i].offset;
  for (int i = 0; i < nr; i++) L->region_off[region_k[i]] = L->arena_base + bufs[nl + i].offset;
  free(bufs);
  free(region_k);
  if (total == (size_t)-1) {
    free(def); free(last); free(list);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  L->plan_bytes = total;
  L->arena_bytes = L->arena_base + total;
  for (size_t t = 0; t < nt; t++)
    if (L->t[t].alias_of >= 0) {
      size_t off = 0; /* the alias_off of every link up to the root */
      for (int u = (int)t; L->t[u].alias_of >= 0; u = L->t[u].alias_of) off += L->t[u].alias_off;
      const lw_tensor *r = &L->t[root_of(L, (int)t)];
      L->t[t].where = r->where;
      L->t[t].offset = r->offset + off;
      L->t[t].io_index = r->io_index;
    }
  free(def); free(last); free(list);
  return ECG_OK;
}

static int assign_storage(ecg_lower *L, ecg_err *e) {
  const ecg_graph *g = L->g;
  L->t = calloc(g->n_tensors + 1, sizeof *L->t);
  if (!L->t) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  int io = 0;
  for (size_t k = 0; k < g->n_inputs; k++) {
    lw_tensor *t = &L->t[g->inputs[k]];
    t->where = LW_INPUT;
    t->io_index = io++;
  }
  for (size_t k = 0; k < g->n_outputs; k++) {
    lw_tensor *t = &L->t[g->outputs[k]];
    if (t->where == LW_NONE && !g->tensors[g->outputs[k]]->is_const) {
      t->where = LW_OUTPUT;
      t->io_index = io + (int)k;
    }
  }
  L->n_io = io + (int)g->n_outputs;
  for (size_t i = 0; i < g->n_tensors; i++) L->t[i].alias_of = -1, L->t[i].seq = -1;
  /* run-time sequences (emit/sequence.c): a graph input's is read where it is bound; every
   * other one, graph outputs included, is a context slot; a graph output that is a graph
   * input gets a slot for its copy */
  for (size_t i = 0; i < g->n_tensors; i++) {
    if (!g->tensors[i]->sequence) continue;
    lw_tensor *t = &L->t[i];
    bool out = false;
    for (size_t k = 0; k < g->n_outputs; k++) out |= g->outputs[k] == (int)i;
    if (t->where != LW_INPUT) t->where = LW_SEQ, t->io_index = 0;
    if (t->where == LW_SEQ || out) t->seq = L->n_seq++;
  }
  for (size_t i = 0; i < g->n_tensors; i++) {
    const ecg_tensor *x = g->tensors[i];
    lw_tensor *t = &L->t[i];
    t->bytes = ecg_tensor_static(x) ? tensor_bytes(x) : 0;
    if (t->where != LW_NONE) continue;
    if (x->is_const) {
      t->where = LW_CONST;
      t->offset = L->weights_bytes;
      L->weights_bytes += align_up(t->bytes);
    } else {
      t->where = LW_ARENA;
    }
  }
  return ECG_OK;
}

/* ---------------------------------------------------------------- subgraphs */

/* Storage of a subgraph's tensors (lw_lower_subgraph): captures where the outer tensors
 * live (fixed), constants appended to weights.bin, the rest in the arena, the subgraph's
 * inputs and outputs pinned live through every kernel. */
static int sub_storage(ecg_lower *V, const ecg_lower *L, const ecg_node *n, int dry, ecg_err *e) {
  const ecg_graph *sg = V->g;
  V->t = calloc(sg->n_tensors + 1, sizeof *V->t);
  bool *written = calloc(sg->n_tensors + 1, 1);
  if (!V->t || !written) { free(written); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  for (size_t i = 0; i < sg->n_nodes; i++)
    for (size_t k = 0; k < sg->nodes[i]->n_outputs; k++)
      if (sg->nodes[i]->outputs[k] >= 0) written[sg->nodes[i]->outputs[k]] = true;
  for (size_t i = 0; i < sg->n_tensors; i++) {
    const ecg_tensor *x = sg->tensors[i];
    lw_tensor *t = &V->t[i];
    t->alias_of = -1;
    t->bytes = ecg_tensor_static(x) ? tensor_bytes(x) : 0;
    if (x->is_const) { /* a dry run (region_need) only plans: nothing is appended */
      t->where = LW_CONST;
      if (!dry && (t->offset = lw_blob(V, x->data.data, t->bytes)) == (size_t)-1) { free(written); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
      continue;
    }
    t->seq = -1;
    int cap = written[i] ? -1 : ecg_node_capture_index(n, x->name, strlen(x->name));
    if (x->sequence && cap >= 0 && n->inputs[cap] >= 0) { /* a captured run-time sequence: read where it lives */
      const lw_tensor *o = &L->t[n->inputs[cap]];
      t->where = o->where;
      t->seq = o->seq;
      t->io_index = o->io_index;
      t->fixed = 1;
      continue;
    }
    if (x->sequence) { /* a run-time sequence made in the subgraph (an If branch's output, a body's input): a context slot */
      t->where = LW_SEQ;
      t->seq = V->n_seq++;
      continue;
    }
    int idx = written[i] ? -1 : ecg_node_capture_index(n, x->name, strlen(x->name));
    t->where = LW_ARENA;
    if (idx >= 0 && n->inputs[idx] >= 0) {
      const lw_tensor *o = &L->t[n->inputs[idx]];
      t->where = o->where;
      t->offset = o->offset;
      t->io_index = o->io_index;
      t->fixed = 1;
    }
  }
  for (size_t k = 0; k < sg->n_inputs + sg->n_outputs; k++) {
    int id = k < sg->n_inputs ? sg->inputs[k] : sg->outputs[k - sg->n_inputs];
    if (V->t[id].where == LW_ARENA && !V->t[id].fixed) V->t[id].pinned = 1;
  }
  free(written);
  return ECG_OK;
}

/* Tensors of run-time extents in a bound subgraph: the output of a Slice whose operands are
 * run-time values (a Loop body's slice up to the iteration number) has extents known only
 * when it runs; where every reader takes a tensor of any shape (SequenceInsert's tensor,
 * SequenceConstruct's inputs: the sequence keeps each item's own dims) and the Slice's data
 * input is static, the output is planned for its bound (a Slice never gives an axis more
 * than the input's extent: the input's shape) and the Slice records the extents it gives in
 * ctx->rd[] (emit_slice_runtime), which the readers take (emit/sequence.c). Sets the
 * output's shape to the bound and marks it in rt[] (per tensor of sg). */
static int bound_slices(ecg_graph *sg, bool *rt, ecg_err *e) {
  for (size_t i = 0; i < sg->n_nodes; i++) {
    const ecg_node *n = sg->nodes[i];
    if (strcmp(n->op_type, "Slice") || n->domain[0] || n->n_inputs < 3 || n->n_outputs != 1 || n->outputs[0] < 0) continue;
    ecg_tensor *y = sg->tensors[n->outputs[0]];
    const ecg_tensor *x = ecg_node_input(sg, n, 0);
    if (!x || !ecg_tensor_static(x) || ecg_tensor_static(y) || y->sequence || (y->shape_known && y->n_dims != x->n_dims)) continue;
    bool runtime = false, ok = true;
    for (size_t k = 1; k < n->n_inputs && k < 5; k++) runtime |= n->inputs[k] >= 0 && !sg->tensors[n->inputs[k]]->is_const;
    for (size_t k = 0; k < sg->n_outputs; k++) ok &= sg->outputs[k] != n->outputs[0];
    for (size_t j = 0; ok && j < sg->n_nodes; j++) {
      const ecg_node *m = sg->nodes[j];
      for (size_t k = 0; ok && k < m->n_inputs; k++) {
        if (m->inputs[k] != n->outputs[0]) continue;
        ok = !m->domain[0] && ((!strcmp(m->op_type, "SequenceInsert") && k == 1) || !strcmp(m->op_type, "SequenceConstruct"));
      }
    }
    if (!runtime || !ok) continue;
    int64_t d[ECG_MAX_RANK];
    int r = ecg_tensor_dims(x, d);
    y->dtype = x->dtype;
    if (ecg_tensor_set_shape(y, r, d, NULL)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    rt[n->outputs[0]] = true;
  }
  return ECG_OK;
}

/* Bind, infer and plan subgraph sg of n into out (lw_lower_subgraph's first half): out->sg
 * a bound copy, out->view the lowering of it with its kernels formed and its tensors
 * placed from arena byte base. dry (region_need): nothing is appended to weights.bin and
 * the view must not be emitted. Errors are prefixed with the node and the subgraph. */
static int sub_prepare(ecg_lower *L, const ecg_node *n, const ecg_graph *sg, lw_sub *out, size_t base, int dry,
                       ecg_err *e) {
  memset(out, 0, sizeof *out);
  char lb[256];
  ecg_err sub;
  size_t len = ecg__graph__get_packed_size(sg);
  unsigned char *buf = malloc(len ? len : 1);
  if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  ecg__graph__pack(sg, buf);
  out->sg = ecg__graph__unpack(NULL, len, buf);
  free(buf);
  if (!out->sg) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  ECG_TRY(ecg_subgraph_infer(L->g, n, out->sg, e));
  /* a size numeric inference left open (a Slice of run-time starts in a Loop body): RDP over
   * the bound subgraph may prove it a number (a value-determined size meeting a declared
   * dim, format/ECG.md "Symbolic dims"), which the static lowering then takes */
  bool open_dims = false;
  for (size_t t = 0; t < out->sg->n_tensors; t++) open_dims |= !out->sg->tensors[t]->is_const && !ecg_tensor_static(out->sg->tensors[t]);
  if (open_dims) {
    ecg_err re;
    if (ecg_rdp_run(out->sg, NULL, &re) == ECG_OK) lw_dyn_numbers(out->sg); /* else: check_static names the dim */
  }
  ecg_lower *V = &out->view;
  *V = *L; /* shares the accumulators (decls, init, weights, blob, counters) until merged back */
  V->g = out->sg;
  V->t = NULL; V->k = NULL; V->nk = 0; V->node_kernel = NULL; V->cur = NULL; V->epi_act = NULL; V->region_off = NULL;
  V->lay = NULL; V->klay = NULL; V->ptr_over = NULL; V->lay_base = V->lay_bytes = 0; /* subgraphs: NCHW (no blocks) */
  V->sched = NULL; V->sched_used = 0; V->conv_algo_next = 0; V->sched_shared = 0; /* schedules apply to the main graph's kernels */
  V->sched_left = NULL; V->sched_acc = NULL;
  if (L->dyn) V->arena_name = "ctx->rgn"; /* a dynamic build's subgraphs: static plans in their own buffer */
  V->dyn = 0; V->dexpr = NULL; V->syms = NULL; V->n_sym = 0; /* subgraphs are static (run-time shapes: LW_HEAP, rtd) */
  V->code = (sbuf){0};
  V->arena_base = base;
  V->plan_bytes = 0;
  int *order = malloc(sizeof(int) * (out->sg->n_nodes + 1));
  bool *rt = calloc(out->sg->n_tensors + 1, 1);
  int rc = order && rt ? ECG_OK : ecg_errf(&sub, ECG_ERR_INTERNAL, "out of memory");
  bool *heap = calloc(out->sg->n_tensors + 1, 1);
  if (rc == ECG_OK && !heap) rc = ecg_errf(&sub, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK) rc = bound_slices(out->sg, rt, &sub);
  /* tensors of run-time shape (an item of a sequence, of any dims, and what the body makes
   * of it): a context buffer each, their dims at run time; only the operators
   * lw_emit_rtshape and the sequence operators take them (others refuse naming the node) */
  /* and captures of outer graph inputs of symbolic dims (a dynamic build): read in place, their
   * dims set before the subgraph runs (lw_sub_rt_dims) */
  bool *rtcap = calloc(out->sg->n_tensors + 1, 1), *either = calloc(out->sg->n_tensors + 1, 1);
  if (rc == ECG_OK && (!rtcap || !either)) rc = ecg_errf(&sub, ECG_ERR_INTERNAL, "out of memory");
  for (size_t t = 0; rc == ECG_OK && t < out->sg->n_tensors; t++) {
    const ecg_tensor *x = out->sg->tensors[t];
    bool rtx = !x->is_const && !x->sequence && x->shape_known && x->n_dims <= ECG_MAX_RANK && !ecg_tensor_static(x);
    int cap = ecg_node_capture_index(n, x->name, strlen(x->name));
    heap[t] = rtx && cap < 0;
    rtcap[t] = rtx && cap >= 0 && n->inputs[cap] >= 0 && L->t[n->inputs[cap]].where == LW_INPUT;
    either[t] = heap[t] || rtcap[t];
  }
  if (rc == ECG_OK) rc = check_static_rt(out->sg, 0, either, &sub);
  if (rc == ECG_OK) rc = ecg_topo_order(out->sg, order, &sub);
  if (rc == ECG_OK) rc = sub_storage(V, L, n, dry, &sub);
  for (size_t t = 0; rc == ECG_OK && t < out->sg->n_tensors; t++) {
    if (rt[t]) V->t[t].rtd = ++V->n_rtd;
    if (heap[t]) {
      V->t[t].where = LW_HEAP;
      V->t[t].bytes = 0;
      V->t[t].pinned = 0;
      V->t[t].rtd = ++V->n_rtd;
    }
    if (rtcap[t]) V->t[t].rtd = ++V->n_rtd;
  }
  free(rt);
  free(heap);
  free(rtcap);
  free(either);
  if (rc == ECG_OK) find_aliases(V, order);
  if (rc == ECG_OK) rc = lw_form_kernels(V, order, &sub);
  if (rc == ECG_OK) lw_kernel_storage(V);
  if (rc == ECG_OK) rc = plan_memory(V, order, &sub);
  free(order);
  if (rc != ECG_OK)
    return ecg_errf(e, rc, "node '%s' (%s): subgraph '%s': %s", ecg_node_label(L->g, n, lb, sizeof lb), n->op_type, out->sg->name, sub.msg);
  return ECG_OK;
}

/* Bytes the subgraphs of control-flow node n need while it runs (their plans, with their
 * own nested regions): the largest over its bodies, which never run at the same time. */
static int region_need(ecg_lower *L, const ecg_node *n, size_t *need, ecg_err *e) {
  ecg_cf cf;
  *need = 0;
  ECG_TRY(ecg_cf_info(L->g, n, &cf, e));
  for (int b = 0; b < 2 && cf.body[b]; b++) {
    lw_sub s;
    int rc = sub_prepare(L, n, cf.body[b], &s, 0, 1, e);
    if (rc == ECG_OK && s.view.arena_bytes > *need) *need = s.view.arena_bytes;
    lw_sub_free(&s);
    if (rc != ECG_OK) return rc;
  }
  return ECG_OK;
}

int lw_lower_subgraph(ecg_lower *L, const ecg_node *n, const ecg_graph *sg, lw_sub *out, ecg_err *e) {
  char lb[256];
  ecg_err sub;
  int ni = lw_node_index(L, n), kp = ni >= 0 && L->node_kernel ? L->node_kernel[ni] : -1;
  size_t base = kp >= 0 && L->region_off ? L->region_off[kp] : L->arena_base + L->plan_bytes;
  int rc = sub_prepare(L, n, sg, out, base, 0, e);
  ecg_lower *V = &out->view;
  if (!V->g) return rc; /* failed before sharing anything */
  snprintf(out->name, sizeof out->name, "sg%d", V->n_tmp++);
  int emitting = rc == ECG_OK;
  for (int q = 0; rc == ECG_OK && q < V->nk; q++) {
    const ecg_node *m = out->sg->nodes[V->k[q].members[0]];
    ecg_emit_fn fn = lw_node_seq(V, m) && !lw_node_control(m) ? lw_emit_sequence /* run-time sequences */
                     : lw_node_rt(V, m) && !lw_node_control(m) ? lw_emit_rtshape /* run-time shapes */
                                                               : ecg_emitter(lw_op(m));
    if (!fn) { rc = ecg_errf(&sub, ECG_ERR_INPUT, "node '%s' (%s): no kernel emitter for this operator", ecg_node_label(out->sg, m, lb, sizeof lb), m->op_type); break; }
    if (node_touches_half(V, m) && !half_capable(fn)) {
      rc = ecg_errf(&sub, ECG_ERR_INPUT, "node '%s' (%s): float16/bfloat16 is not supported by this operator's kernel", ecg_node_label(out->sg, m, lb, sizeof lb), m->op_type);
      break;
    }
    sb_printf(&V->code, "/* subgraph '%s' of '%s', kernel %d: '%s' (%s) */\nstatic void %s_k%d(struct %s_ctx *ctx) {\n", out->sg->name,
              ecg_node_label(L->g, n, lb, sizeof lb), q, m->name, m->op_type, out->name, q, L->prefix);
    rc = lw_emit_kernel(V, q, &sub);
    V->cur = NULL;
    sb_printf(&V->code, "  (void)ctx;\n}\n\n");
  }
  out->nk = V->nk;
  /* merge the accumulators back: the subgraph's kernel functions go to file scope after
   * the declarations they use */
  if (V->code.s) sb_printf(&V->decls, "%s", V->code.s);
  sb_free(&V->code);
  L->decls = V->decls; L->init = V->init; L->scratch_expr = V->scratch_expr; L->pk_sizes = V->pk_sizes;
  L->n_packed = V->n_packed; L->n_tmp = V->n_tmp; L->n_sparse = V->n_sparse; L->n_seq = V->n_seq;
  L->n_rtd = V->n_rtd;
  L->weights_bytes = V->weights_bytes; L->blob = V->blob; L->blob_len = V->blob_len; L->blob_cap = V->blob_cap;
  L->blob_start = V->blob_start;
  if (L->dyn) { if (V->arena_bytes > L->rgn_bytes) L->rgn_bytes = V->arena_bytes; } /* ctx->rgn */
  else if (V->arena_bytes > L->arena_bytes) L->arena_bytes = V->arena_bytes;
  if (V->rgn_bytes > L->rgn_bytes) L->rgn_bytes = V->rgn_bytes;
  V->decls = V->init = V->scratch_expr = V->pk_sizes = (sbuf){0};
  V->blob = NULL;
  if (rc != ECG_OK && emitting) /* sub_prepare's errors are in *e already, prefixed */
    return ecg_errf(e, rc, "node '%s' (%s): subgraph '%s': %s", ecg_node_label(L->g, n, lb, sizeof lb), n->op_type, out->sg->name, sub.msg);
  return rc;
}

void lw_sub_free(lw_sub *s) {
  ecg_lower *V = &s->view;
  free(V->t);
  free(V->region_off);
  for (int i = 0; i < V->nk; i++) free(V->k[i].members);
  free(V->k);
  free(V->node_kernel);
  free(V->sched_left);
  free(V->sched_acc);
  ecg_graph_free(s->sg);
  memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- writing */

int lw_write_file(const char *dir, const char *name, const void *data, size_t n, ecg_err *e) {
  size_t len = strlen(dir) + strlen(name) + 2;
  char *path = malloc(len);
  if (!path) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  snprintf(path, len, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  int rc = ECG_OK;
  /* I/O failures (ENOSPC, EACCES, EROFS, ...) are ECG_ERR_INPUT with strerror */
  if (!f) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  else {
    if (n && fwrite(data, 1, n, f) != n) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
    if (fclose(f) != 0 && rc == ECG_OK) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  }
  free(path);
  return rc;
}

void lw_json_str(sbuf *b, const char *s) {
  sb_printf(b, "\"");
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') sb_printf(b, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) sb_printf(b, "\\u%04x", *s);
    else sb_printf(b, "%c", *s);
  }
  sb_printf(b, "\"");
}

void lw_c_str(sbuf *b, const char *s) {
  sb_printf(b, "\"");
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') sb_printf(b, "\\%c", *s);
    else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f) sb_printf(b, "\\%03o", (unsigned char)*s);
    else sb_printf(b, "%c", *s);
  }
  sb_printf(b, "\"");
}

static void io_info_table(ecg_lower *L, sbuf *b, const char *which, const int32_t *ids, size_t n) {
  sb_printf(b, "static const %s_tensor_info %s_%s_info_[%zu] = {\n", L->prefix, L->prefix, which, n ? n : 1);
  for (size_t k = 0; k < n; k++) {
    const ecg_tensor *t = L->g->tensors[ids[k]];
    sb_printf(b, "  {");
    lw_c_str(b, t->name);
    sb_printf(b, ", %d, %d, {", t->dtype, t->shape_known ? (int)t->n_dims : -1);
    for (size_t d = 0; d < t->n_dims; d++) sb_printf(b, "%s%lld", d ? ", " : "", (long long)t->dims[d]->value);
    if (t->sequence) sb_printf(b, "%s}, 0, 1},\n", t->n_dims ? "" : "0"); /* a run-time sequence of such tensors */
    else sb_printf(b, "%s}, %zu, 0},\n", t->n_dims ? "" : "0", ecg_tensor_static(t) ? tensor_bytes(t) : 0);
  }
  if (!n) sb_printf(b, "  {0, 0, 0, {0}, 0, 0},\n");
  sb_printf(b, "};\n");
}

static int write_header(ecg_lower *L, const char *dir, ecg_err *e) {
  sbuf b = {0};
  const char *P = L->prefix;
  sb_printf(&b, "/* Generated by ecg-lower %s from the ECG of '%s'. Public API: tools/lower/LOWERED.md.\n"
                " * Build: make (MARCH=native by default; MARCH=x86-64-v3 or x86-64 for other machines).\n"
                " * Link: cc -fopenmp your.c lib%s.a -lm   (the kernels use OpenMP and libm).\n"
                " * Symbols: this model's all start with %s_; the runtime's with ecg_rt1_ (ecg_rt.h), shared by\n"
                " * every lowered model in a program: link several models' libraries into one program\n"
                " * freely. No mutable globals: all state is in the %s_ctx that create returns. */\n",
            ECG_VERSION_STRING, L->g->name, L->prefix, L->prefix, L->prefix);
  sb_printf(&b, "#ifndef %s_MODEL_H\n#define %s_MODEL_H\n#include <stddef.h>\n#include <stdint.h>\n", P, P);
  sb_printf(&b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
  sb_printf(&b, "/* Runner glue: ECG_MODEL(x) names this model's symbol x (defined by the first model.h\n"
                " * included, when a program includes several). */\n#ifndef ECG_MODEL\n#define ECG_MODEL_PREFIX %s\n#define ECG_MODEL(x) %s_##x\n#endif\n", P, P);
  sb_printf(&b, "/** Description of one graph input or output: dense, row-major, little-endian;\n"
                " *  dtype is the ONNX TensorProto.DataType code; bytes = numel * element size. */\n");
  sb_printf(&b, "typedef struct %s_tensor_info { const char *name; int dtype; int rank; int64_t dims[8]; size_t bytes;\n"
                "  int sequence; /* 1: a run-time sequence of tensors of this dtype (and shape, where rank >= 0): bind a %s_sequence */\n"
                "} %s_tensor_info;\n", P, P, P);
  sb_printf(&b, "/** A tensor value of a run-time sequence: dtype, shape, `bytes` dense row-major bytes at data. */\n"
                "typedef struct %s_value { int dtype; int rank; int64_t dims[8]; size_t bytes; void *data; } %s_value;\n"
                "/** A sequence graph input or output (tools/lower/LOWERED.md \"Sequences\"): n items. An input's are\n"
                " *  the caller's; an output's are the context's, valid until the next run or destroy. */\n"
                "typedef struct %s_sequence { int n; %s_value *items; } %s_sequence;\n", P, P, P, P, P);
  sb_printf(&b, "/** Opaque model instance: weights, prepacked weights, arena. */\ntypedef struct %s_ctx %s_ctx;\n", P, P);
  sb_printf(&b, "/** Load weights.bin (%zu bytes) from weights_path and allocate the arena (%zu bytes).\n"
                " *  Returns NULL on failure with errno set: ENOEXEC when the runtime library linked in was\n"
                " *  built from other sources, or for another ISA or without OpenMP, than this model\n"
                " *  (ecg_rt1_build_id() differs from ECG_RT_BUILD_ID: rebuild with `make clean all`);\n"
                " *  ENOMEM; EINVAL for a weights file of the wrong size; else fopen's errno.\n"
                " *  Threads: call omp_set_num_threads first. */\n",
            L->weights_bytes, L->arena_bytes);
  sb_printf(&b, "%s_ctx *%s_create(const char *weights_path);\n", P, P);
  if (L->hetero)
    sb_printf(&b, "/* --target c+opencl: the kernels with an EOP placement run split between the CPU and OpenCL\n"
                  " * device ECG_CL_DEVICE (model.cl, embedded in model.c); create fails with errno = ENODEV when\n"
                  " * there is no such device, EINVAL when the program does not build. Link with -lOpenCL too. */\n"
                  "#define ECG_MODEL_OPENCL 1\n#define ECG_MODEL_HETERO 1\n"
                  "/** The CL_DEVICE_NAME of the device ctx runs on. */\nconst char *%s_device_name(const %s_ctx *ctx);\n", P, P);
  if (L->target == LW_TARGET_OPENCL)
    sb_printf(&b, "/* --target opencl: kernels in model.cl (embedded in model.c), host code linking -lOpenCL only.\n"
                  " * create picks OpenCL device ECG_CL_DEVICE (environment; an index into every platform's\n"
                  " * devices in order, default 0) and fails with errno = ENODEV when there is none, EINVAL when\n"
                  " * the program does not build (the build log goes to stderr). */\n#define ECG_MODEL_OPENCL 1\n"
                  "/** The CL_DEVICE_NAME of the device ctx runs on. */\nconst char *%s_device_name(const %s_ctx *ctx);\n", P, P);
  sb_printf(&b, "/** Free everything create allocated. NULL is allowed. */\nvoid %s_destroy(%s_ctx *ctx);\n", P, P);
  sb_printf(&b, "/** Bind the buffer of a graph input or output by name; 0, or -1 for an unknown name. */\n"
                "int %s_bind(%s_ctx *ctx, const char *name, void *data);\n", P, P);
  sb_printf(&b, "/** Run the model on the bound buffers; 0, -1 when a buffer is unbound, -2 when a run-time check failed (a Loop ran a number of iterations other than the one its scan outputs were compiled for). */\nint %s_run(%s_ctx *ctx);\n", P, P);
  sb_printf(&b, "/** Per-kernel profiling: on != 0 starts accumulating milliseconds per kernel; 0 stops. 0 or -1 (OOM). */\n"
                "int %s_profile(%s_ctx *ctx, int on);\n", P, P);
  sb_printf(&b, "/** Kernel i's \"OpType node-name\" and accumulated ms; 0, or -1 when i is out of range or profiling is off. */\n"
                "int %s_profile_read(const %s_ctx *ctx, int i, const char **name, double *ms);\n", P, P);
  lw_dyn_write_header(L, &b);
  sb_printf(&b, "int %s_num_inputs(void);\nint %s_num_outputs(void);\n", P, P);
  sb_printf(&b, "const %s_tensor_info *%s_input_info(int i);\nconst %s_tensor_info *%s_output_info(int i);\n", P, P, P, P);
  sb_printf(&b, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
  int rc = b.oom ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : lw_write_file(dir, "model.h", b.s, b.len, e);
  sb_free(&b);
  return rc;
}

static int write_model_c(ecg_lower *L, const char *dir, const int *order, ecg_err *e) {
  const ecg_graph *g = L->g;
  const char *P = L->prefix;
  sbuf b = {0};
  if (L->target == LW_TARGET_OPENCL) lw_cl_host_head(L, &b);
  else {
    sb_printf(&b, "/* Generated by ecg-lower %s: %zu nodes, weights %zu bytes, arena %zu bytes. */\n",
              ECG_VERSION_STRING, g->n_nodes, L->weights_bytes, L->arena_bytes);
    sb_printf(&b, "#include <errno.h>\n#include <time.h>\n#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n");
    sb_printf(&b, "#ifdef __linux__\n#include <sys/mman.h> /* madvise: packed weights and arena in huge pages (huge_region_) */\n#endif\n");
    sb_printf(&b, "#include <tgmath.h>\n#ifdef _OPENMP\n#include <omp.h>\n#endif\n#include \"model.h\"\n#include \"ecg_rt.h\"\n#include \"ecg_resize.h\"\n%s\n",
              L->dyn ? "#include \"ecg_plan.h\"\n" : "");
    if (L->hetero) sb_printf(&b, "#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\n#define NCLK %d\n#define DEV_BYTES ((size_t)%zu)\n\n", L->n_clk, L->het_dev);
    sb_printf(&b, "/* Scalar helpers of the elementwise expressions (format/ops/scalar.def): shared with\n"
                  " * constant folding, so folded and computed values agree. */\n#include \"ecg_scalar.h\"\n"
                  "#if defined(__GNUC__)\n#pragma GCC diagnostic ignored \"-Wunused-variable\"\n#pragma GCC diagnostic ignored \"-Wunused-function\"\n#endif\n\n");
    sb_printf(&b, "/* IEEE binary16 and bfloat16 <-> float, round to nearest even. */\n"
                  "static inline float ecg_h2f(uint16_t h) {\n"
                  "  uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, b;\n"
                  "  if (e == 0x1f) b = s | 0x7f800000u | (m << 13);\n"
                  "  else if (e) b = s | ((e + 112) << 23) | (m << 13);\n"
                  "  else if (!m) b = s;\n"
                  "  else { e = 113; while (!(m & 0x400)) { m <<= 1; e--; } b = s | (e << 23) | ((m & 0x3ff) << 13); }\n"
                  "  float f; memcpy(&f, &b, 4); return f;\n}\n"
                  "static inline uint16_t ecg_f2h(float f) {\n"
                  "  uint32_t x; memcpy(&x, &f, 4);\n"
                  "  uint32_t s = (x >> 16) & 0x8000, ax = x & 0x7fffffffu;\n"
                  "  if (ax > 0x7f800000u) return (uint16_t)(s | 0x7e00 | ((ax >> 13) & 0x3ff));\n"
                  "  if (ax >= 0x477ff000u) return (uint16_t)(s | 0x7c00);\n"
                  "  if (ax < 0x38800000u) { /* subnormal or zero */\n"
                  "    if (ax < 0x33000000u) return (uint16_t)s;\n"
                  "    uint32_t m = (ax & 0x7fffff) | 0x800000, sh = 126 - (ax >> 23);\n"
                  "    uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);\n"
                  "    if (rem > half || (rem == half && (r & 1))) r++;\n"
                  "    return (uint16_t)(s | r);\n  }\n"
                  "  uint32_t r = ((ax >> 13) - (112u << 10)), rem = ax & 0x1fff;\n"
                  "  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;\n"
                  "  return (uint16_t)(s | r);\n}\n"
                  "static inline float ecg_bf2f(uint16_t h) { uint32_t b = (uint32_t)h << 16; float f; memcpy(&f, &b, 4); return f; }\n"
                  "static inline uint16_t ecg_f2bf(float f) {\n"
                  "  uint32_t x; memcpy(&x, &f, 4);\n"
                  "  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);\n"
                  "  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);\n}\n"
                  "\n");
    sb_printf(&b, "#define NIO %d\n#define NPACKED %d\n#define WEIGHTS_BYTES ((size_t)%zu)\n#define ARENA_BYTES ((size_t)%zu)\n",
              L->n_io > 0 ? L->n_io : 1, L->n_packed > 0 ? L->n_packed : 1, L->weights_bytes, L->arena_bytes);
    if (L->dyn)
      sb_printf(&b, "#define NSYM %d\n#define NBUF %d\n#define NIN %zu\n"
                    "/* floor division (RDP's (E/K)) */\n"
                    "static inline int64_t ecg_fdiv_(int64_t a, int64_t b) { int64_t q = a / b; return (a %% b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }\n",
                L->n_sym > 0 ? L->n_sym : 1, L->n_dbuf > 0 ? L->n_dbuf : 1, g->n_inputs > 0 ? g->n_inputs : 1);
    if (L->n_seq) lw_seq_helpers(L, &b);
    if (L->n_rtd)
      sb_printf(&b, "/* a run-time shaped tensor's buffer *p (capacity *cap) holds at least n bytes: 0, or -4 */\n"
                    "static int hb_need_(void **p, size_t *cap, size_t n) {\n  if (n <= *cap && *p) return 0;\n"
                    "  void *q = realloc(*p, n ? n : 1);\n  if (!q) return -4;\n  *p = q;\n  *cap = n;\n  return 0;\n}\n");
    sb_printf(&b, "struct %s_ctx {\n  unsigned char *w;      /* weights.bin */\n  unsigned char *arena;  /* intermediates, static plan */\n"
                  "  float *pk[NPACKED];    /* prepacked weights, one buffer per kernel that packs */\n  unsigned char *pkr;    /* a static build's region holding every pk buffer (huge_region_) */\n  float *scratch;        /* per-kernel scratch */\n  void *io[NIO];         /* bound graph inputs then outputs */\n  double *prof_ms;       /* per-kernel milliseconds when profiling is on */\n  int err;               /* set by a kernel whose run-time check failed (a Loop's iterations) */\n  ecg_team team;         /* the thread count per run (ecg_rt.h, \"Threads per run\") */\n", P);
    if (L->hetero) lw_het_ctx_fields(L, &b);
    lw_dyn_ctx_fields(L, &b);
    if (L->n_seq) sb_printf(&b, "  seq_ sq[%d];           /* run-time sequences (emit/sequence.c) */\n", L->n_seq);
    if (L->dyn && L->rgn_bytes) sb_printf(&b, "  unsigned char *rgn;   /* the subgraphs' static plans (control flow in a dynamic build) */\n");
    if (L->n_rtd) sb_printf(&b, "  int64_t rd[%d][8];     /* run-time dims: bounded Slice outputs (lower.c bound_slices), LW_HEAP tensors */\n"
                                "  struct { void *p; size_t cap; } hb[%d]; /* LW_HEAP tensors' buffers */\n", L->n_rtd, L->n_rtd);
    sb_printf(&b, "};\n\n");
  }
  io_info_table(L, &b, "inputs", g->inputs, g->n_inputs);
  io_info_table(L, &b, "outputs", g->outputs, g->n_outputs);
  sb_printf(&b, "int %s_num_inputs(void) { return %zu; }\nint %s_num_outputs(void) { return %zu; }\n", P, g->n_inputs, P, g->n_outputs);
  sb_printf(&b, "const %s_tensor_info *%s_input_info(int i) { return i >= 0 && i < %zu ? &%s_inputs_info_[i] : NULL; }\n", P, P, g->n_inputs, P);
  sb_printf(&b, "const %s_tensor_info *%s_output_info(int i) { return i >= 0 && i < %zu ? &%s_outputs_info_[i] : NULL; }\n\n", P, P, g->n_outputs, P);
  sb_printf(&b, "static const char *const kernel_names_[%d] = {\n", L->nk ? L->nk : 1);
  for (int p = 0; p < L->nk; p++) {
    char lb[256];
    sbuf full = {0};
    for (int m = 0; m < L->k[p].nm; m++) sb_printf(&full, "%s%s", m ? "+" : "", g->nodes[L->k[p].members[m]]->op_type);
    sb_printf(&full, " %s", ecg_node_label(g, g->nodes[L->k[p].members[0]], lb, sizeof lb));
    sb_printf(&b, "  ");
    lw_c_str(&b, full.s ? full.s : "");
    sb_printf(&b, ",\n");
    sb_free(&full);
  }
  if (!L->nk) sb_printf(&b, "  \"\",\n");
  sb_printf(&b, "};\n");
  int rc_cl = ECG_OK;
  if (L->target == LW_TARGET_OPENCL) rc_cl = lw_cl_host_body(L, &b, dir, e);
  else {
    if (L->hetero) { /* the device program, its opening, the names of its kernels, the row copies */
      rc_cl = lw_cl_print_program(&b, dir, 0, &L->cl_decls, &L->cl_code, e);
      lw_cl_print_open(&b);
      sb_printf(&b, "static const char *const cl_kernel_names_[NCLK + 1] = {\n%s  \"\"\n};\n\n", L->cl_names.s ? L->cl_names.s : "");
      sb_printf(&b, "/* rows row_bytes-long from src (every spitch bytes) to dst (every dpitch bytes) */\n"
                    "static void het_copy_(void *dst, size_t dpitch, const void *src, size_t spitch, size_t row_bytes, long long rows) {\n"
                    "  for (long long r = 0; r < rows; r++) memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, row_bytes);\n}\n\n");
      sb_printf(&b, "const char *%s_device_name(const %s_ctx *ctx) { return ctx->dev_name; }\n\n", P, P);
    }
    /* kernels */
    sb_printf(&b, "%s\n%s\n", L->decls.s ? L->decls.s : "", L->code.s ? L->code.s : "");
    if (L->dyn) lw_dyn_write_api(L, &b);
    /* graph outputs that are constants, graph inputs or repeated need copies */
    sb_printf(&b, "static void copy_outputs(struct %s_ctx *ctx) {\n", P);
    lw_dyn_prologue(L, &b, "ctx->sym");
    for (size_t k = 0; k < g->n_outputs; k++) {
      int id = g->outputs[k];
      const lw_tensor *t = &L->t[id];
      int slot = (int)g->n_inputs + (int)k;
      if (g->tensors[id]->sequence) { /* published from its slot (a graph input's: copied there first) */
        if (t->where == LW_INPUT)
          sb_printf(&b, "  { int rc_ = seq_copy_(&ctx->sq[%d], %s); if (rc_) ctx->err = rc_; }\n", t->seq, lw_seq_ref(L, id));
        sb_printf(&b, "  *(%s_sequence *)ctx->io[%d] = ctx->sq[%d].s;\n", P, slot, t->seq);
        continue;
      }
      if (t->where == LW_OUTPUT && t->io_index == slot) continue;
      if (lw_tensor_dyn(L, id))
        sb_printf(&b, "  memcpy(ctx->io[%d], %s, (size_t)%s * %zu);\n", slot, lw_ptr(L, id),
                  lw_dim_prod(L, id, 0, (int)g->tensors[id]->n_dims), ecg_dtype_size(g->tensors[id]->dtype));
      else sb_printf(&b, "  memcpy(ctx->io[%d], %s, %zu);\n", slot, lw_ptr(L, id), t->bytes);
    }
    sb_printf(&b, "  (void)ctx;\n}\n\n");
    sb_printf(&b, "static void (*const kernels_[%d])(struct %s_ctx *) = {", L->nk ? L->nk : 1, P);
    for (int p = 0; p < L->nk; p++) sb_printf(&b, "%sk%d", p ? ", " : "", p);
    if (!L->nk) sb_printf(&b, "0");
    sb_printf(&b, "};\n#define NKERNELS %d\n\n", L->nk);
    sb_printf(&b, "static double now_ms_(void) {\n#ifdef _OPENMP\n  return omp_get_wtime() * 1e3;\n#else\n  return (double)clock() * 1e3 / CLOCKS_PER_SEC;\n#endif\n}\n\n");
    sb_printf(&b, "int %s_run(%s_ctx *ctx) {\n  for (int i = 0; i < NIO && i < %d; i++) if (!ctx->io[i]) return -1;\n  ctx->err = 0;\n", P, P, L->n_io);
    for (size_t k = 0; k < g->n_inputs; k++) /* a bound sequence must be well formed */
      if (g->tensors[g->inputs[k]]->sequence)
        sb_printf(&b, "  if (!seq_valid_((const %s_sequence *)ctx->io[%zu], %d, %zu)) return -3;\n", P, k,
                  g->tensors[g->inputs[k]]->dtype, ecg_dtype_size(g->tensors[g->inputs[k]]->dtype));
    if (L->dyn) /* new shapes, or more threads than the scratch was sized for: prepare again */
      sb_printf(&b, "  int nt_ = 1;\n#ifdef _OPENMP\n  nt_ = omp_get_max_threads();\n#endif\n"
                    "  if (ctx->dirty || !ctx->bound || nt_ > ctx->threads) { int rc = prepare_(ctx); if (rc) return rc; }\n");
    sb_printf(&b, "  ecg_rt1_team_begin(&ctx->team, ctx->prof_ms != NULL);\n  if (!ctx->prof_ms) {\n    for (int i = 0; i < NKERNELS; i++) kernels_[i](ctx);\n  } else {\n"
                  "    for (int i = 0; i < NKERNELS; i++) { double t0 = now_ms_(); kernels_[i](ctx); ctx->prof_ms[i] += now_ms_() - t0; }\n  }\n"
                  "  ecg_rt1_team_end(&ctx->team);\n");
    if (L->hetero) sb_printf(&b, "  if (ctx->err) return ctx->err;\n  copy_outputs(ctx);\n  if (ctx->cl_err) { ctx->cl_err = 0; return -1; }\n  return 0;\n}\n\n");
    else if (L->n_seq) sb_printf(&b, "  if (ctx->err) return ctx->err;\n  copy_outputs(ctx);\n  return ctx->err;\n}\n\n");
    else sb_printf(&b, "  if (ctx->err) return ctx->err;\n  copy_outputs(ctx);\n  return 0;\n}\n\n");
  }
  sb_printf(&b, "int %s_profile(%s_ctx *ctx, int on) {\n  if (!on) { free(ctx->prof_ms); ctx->prof_ms = NULL; return 0; }\n"
                "  if (!ctx->prof_ms) ctx->prof_ms = calloc(NKERNELS + 1, sizeof(double));\n  return ctx->prof_ms ? 0 : -1;\n}\n\n", P, P);
  sb_printf(&b, "int %s_profile_read(const %s_ctx *ctx, int i, const char **name, double *ms) {\n"
                "  if (!ctx->prof_ms || i < 0 || i >= NKERNELS) return -1;\n  *name = kernel_names_[i];\n  *ms = ctx->prof_ms[i];\n  return 0;\n}\n\n", P, P);
  sb_printf(&b, "int %s_bind(%s_ctx *ctx, const char *name, void *data) {\n", P, P);
  for (size_t k = 0; k < g->n_inputs + g->n_outputs; k++) {
    int id = k < g->n_inputs ? g->inputs[k] : g->outputs[k - g->n_inputs];
    sb_printf(&b, "  if (strcmp(name, ");
    lw_c_str(&b, g->tensors[id]->name);
    sb_printf(&b, ") == 0) { ctx->io[%zu] = data; return 0; }\n", k);
  }
  sb_printf(&b, "  (void)ctx; (void)data;\n  return -1;\n}\n\n");
  if (L->target == LW_TARGET_C) {
    sb_printf(&b, "void %s_destroy(%s_ctx *ctx) {\n  if (!ctx) return;\n", P, P);
    if (L->hetero) lw_het_destroy(L, &b);
    if (L->n_seq) sb_printf(&b, "  for (int i = 0; i < %d; i++) seq_free_(&ctx->sq[i]);\n", L->n_seq);
    if (L->n_rtd) sb_printf(&b, "  for (int i = 0; i < %d; i++) free(ctx->hb[i].p);\n", L->n_rtd);
    if (L->dyn && L->rgn_bytes) sb_printf(&b, "  free(ctx->rgn);\n");
    if (L->pk_dyn) sb_printf(&b, "  for (int i = 0; i < NPACKED; i++) free(ctx->pk[i]);\n");
    sb_printf(&b, "  free(ctx->pkr); free(ctx->w); free(ctx->arena); free(ctx->scratch); free(ctx->prof_ms); free(ctx);\n}\n\n");
    sb_printf(&b, "static void *alloc64(size_t n) {\n  void *p = NULL;\n  if (posix_memalign(&p, 64, n ? n : 64) != 0) return NULL;\n  return p;\n}\n\n");
    /* A static build's packed weights live in one region, in huge pages where it spans one
     * (Linux transparent huge pages, madvise mode): the kernels stream them from memory on
     * every run inside a model, and with 4 KiB pages a stream of a few MB crosses a page
     * (and misses the TLB) every 4 KiB. Models built here (Xeon family 6 model 167, THP
     * "madvise"), in-model, alternating rounds, medians: resnet18 at 1 thread 20.95 -> 20.40
     * ms (packed weights of 2 MiB or more alone in huge pages; its 256x14x14 Winograd convs
     * 1372-1423 -> 1243-1273 us), mnasnet1_0 6.36 -> 6.16 ms (1 thread) and 3.87 -> 3.82 (2),
     * squeezenet1_1 5.53 -> 5.38 and 3.18 -> 3.11 with the one region. The arena too: then
     * mnasnet1_0 at 2 threads 3.355 -> 3.288 ms (6 rounds), squeezenet1_1 2.858 -> 2.819,
     * resnet18 at 1 thread 18.70 -> 18.24 (5 rounds), mnasnet1_0 at 1 thread a tie. Not the
     * weights file's copy: with it in huge pages as well, resnet18's fc Gemm went 170 -> 304
     * us (not traced further). The scratch: within the noise either way. */
    if (!L->pk_dyn)
      sb_printf(&b, "static unsigned char *huge_region_(size_t n) {\n  const size_t huge = (size_t)2 << 20;\n"
                    "  if (n < huge) return alloc64(n);\n  void *p = NULL;\n  n = (n + huge - 1) / huge * huge;\n"
                    "  if (posix_memalign(&p, huge, n) != 0) return NULL;\n#ifdef MADV_HUGEPAGE\n  madvise(p, n, MADV_HUGEPAGE);\n#endif\n"
                    "  return p;\n}\n\n");
    sb_printf(&b, "%s_ctx *%s_create(const char *weights_path) {\n", P, P);
    /* the runtime linked in must be the one this file was compiled against: same sources,
     * same ISA-dependent data (ecg_rt.h "Build identity") */
    sb_printf(&b, "  if (strcmp(ecg_rt1_build_id(), ECG_RT_BUILD_ID) != 0) { errno = ENOEXEC; return NULL; }\n");
    sb_printf(&b, "  struct %s_ctx *ctx = calloc(1, sizeof *ctx);\n  if (!ctx) return NULL;\n", P);
    sb_printf(&b, "  size_t scratch = 0;\n  int threads = 1;\n#ifdef _OPENMP\n  threads = omp_get_max_threads();\n#endif\n  (void)threads;\n%s",
              L->scratch_expr.s && !L->dyn ? L->scratch_expr.s : ""); /* dyn: sized in prepare_ */
    /* a static build's scratch holds the threads OpenMP has now: no run takes more, even
     * after the caller raised the count (the team caps it; a dynamic build sizes the
     * scratch again in prepare_ instead) */
    if (!L->dyn) sb_printf(&b, "  ctx->team.cap = threads;\n");
    if (L->dyn && L->rgn_bytes)
      sb_printf(&b, "  if (!(ctx->rgn = alloc64(%zu))) { %s_destroy(ctx); errno = ENOMEM; return NULL; }\n", L->rgn_bytes, P);
    sb_printf(&b, "  ctx->w = alloc64(WEIGHTS_BYTES);\n  ctx->arena = %s(ARENA_BYTES);\n"
                  "  ctx->scratch = alloc64(scratch * sizeof(float));\n"
                  "  if (!ctx->w || !ctx->arena || !ctx->scratch) { %s_destroy(ctx); errno = ENOMEM; return NULL; }\n",
              L->pk_dyn ? "alloc64" : "huge_region_", P);
    sb_printf(&b, "  FILE *f = fopen(weights_path, \"rb\");\n  if (!f) { %s_destroy(ctx); return NULL; }\n"
                  "  size_t got = WEIGHTS_BYTES ? fread(ctx->w, 1, WEIGHTS_BYTES, f) : 0;\n  int extra = fgetc(f);\n  fclose(f);\n"
                  "  if (got != WEIGHTS_BYTES || extra != EOF) { %s_destroy(ctx); errno = EINVAL; return NULL; }\n", P, P);
    if (!L->pk_dyn) /* every slot's bytes, then one region, each slot 64-byte aligned in it */
      sb_printf(&b, "  {\n    size_t pkb_[NPACKED] = {0}, off_ = 0;\n%s"
                    "    for (int i = 0; i < NPACKED; i++) off_ += (pkb_[i] + 63) / 64 * 64;\n"
                    "    if (!(ctx->pkr = huge_region_(off_))) { %s_destroy(ctx); errno = ENOMEM; return NULL; }\n"
                    "    off_ = 0;\n    for (int i = 0; i < NPACKED; i++) { ctx->pk[i] = (float *)(void *)(ctx->pkr + off_); off_ += (pkb_[i] + 63) / 64 * 64; }\n  }\n",
                L->pk_sizes.s ? L->pk_sizes.s : "", P);
    sb_printf(&b, "%s", L->init.s ? L->init.s : "");
    if (L->hetero) lw_het_create(L, &b);
    sb_printf(&b, "  return ctx;\n}\n");
  }
  int rc = rc_cl ? rc_cl : b.oom ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : lw_write_file(dir, "model.c", b.s, b.len, e);
  sb_free(&b);
  return rc;
}

static int write_weights(ecg_lower *L, const char *dir, ecg_err *e) {
  unsigned char *w = calloc(L->weights_bytes ? L->weights_bytes : 1, 1);
  if (!w) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory (%zu bytes of weights)", L->weights_bytes);
  for (size_t i = 0; i < L->g->n_tensors; i++)
    if (L->t[i].where == LW_CONST && L->t[i].bytes)
      memcpy(w + L->t[i].offset, L->g->tensors[i]->data.data, L->t[i].bytes);
  if (L->blob_len) memcpy(w + L->blob_start, L->blob, L->blob_len);
  int rc = lw_write_file(dir, "weights.bin", w, L->weights_bytes, e);
  free(w);
  return rc;
}

static void json_io(sbuf *b, const ecg_graph *g, const int32_t *ids, size_t n) {
  sb_printf(b, "[");
  for (size_t k = 0; k < n; k++) {
    const ecg_tensor *t = g->tensors[ids[k]];
    sb_printf(b, "%s{\"name\": ", k ? ", " : "");
    lw_json_str(b, t->name);
    sb_printf(b, ", \"dtype\": %d, \"shape\": [", t->dtype);
    for (size_t d = 0; d < t->n_dims; d++) sb_printf(b, "%s%lld", d ? ", " : "", (long long)t->dims[d]->value);
    sb_printf(b, "]}");
  }
  sb_printf(b, "]");
}

/* For a foreign target ISA, the Makefile lines that make it cross-build by default (they
 * come before the generic `CC ?=` / `CFLAGS ?=` defaults, which then keep these values).
 * Nothing for native: its Makefile is unchanged. See LOWERED.md, "Cross-compiling". */
static void arch_makefile(sbuf *b, const char *arch) {
  const ecg_arch_info *a = ecg_arch_find(arch);
  if (!a || !a->cflags) return;
  sb_printf(b,
            "# Target ISA %s (ecg-lower --arch %s): cross-built with $(CROSS_COMPILE)gcc; when building on\n"
            "# %s itself, `make CROSS_COMPILE=`. STATIC=1 links the runner statically (self-contained,\n"
            "# e.g. for adb push). MARCH only refines x86 builds and is not used here.\n"
            "CROSS_COMPILE ?= %s\nifeq ($(origin CC),default)\nCC = $(CROSS_COMPILE)gcc\nendif\nCFLAGS ?= %s\n"
            "ifeq ($(STATIC),1)\nrunner: LDLIBS += -static\nendif\n",
            a->name, a->name, a->machine, a->cross, a->cflags);
}

/* Passes over memory (a kernel function, plus one for an epilogue its runtime call could
 * not take; a Reorganize node sharing its input's storage, or a Concat whose inputs were all
 * placed in its output, moves no byte): model.json's
 * "kernels"; the fusion rate of a plan is nodes / kernels. */
static int count_passes(const ecg_lower *L) {
  int passes = 0;
  for (int k = 0; k < L->nk; k++) {
    const lw_kernel *K = &L->k[k];
    const ecg_node *n = L->g->nodes[K->members[0]];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    int zero_copy = K->kind == LW_K_SINGLE && op && op->mapping == ECG_MAP_REORGANIZE && n->n_inputs >= 1 &&
                    n->n_outputs == 1 && n->inputs[0] >= 0 && n->outputs[0] >= 0 && lw_same_storage(L, n->inputs[0], n->outputs[0]);
    /* a Concat whose every input the plan placed in its slab of the output (find_aliases) */
    int placed = K->kind == LW_K_SINGLE && n->n_outputs == 1 && n->outputs[0] >= 0 && n->n_inputs >= 1;
    for (size_t i = 0; placed && i < n->n_inputs; i++) placed = n->inputs[i] < 0 || L->t[n->inputs[i]].alias_of == n->outputs[0];
    passes += !(zero_copy || placed) + K->fallback;
  }
  return passes;
}

/* model.json "kernel_costs": one object a line per kernel, in execution order (the index
 * of the runner's --profile lines): {"index", "block", "flops", "bytes"} (lw_kernel_cost;
 * block: the ECG fusion block the kernel generates, -1 for a node of no block; the stage
 * kernels of an intensive-fusion block lowered with intensive_fusion off all name it).
 * ecg-bench --profile copies block into its kernels, ecg-partition --tune sums a block's
 * kernels from it (tuning in context). */
static void json_kernel_costs(sbuf *b, const ecg_lower *L) {
  int *producer = malloc(sizeof(int) * (L->g->n_tensors + 1));
  if (!producer) { b->oom = 1; return; }
  ecg_producers(L->g, producer);
  for (int k = 0; k < L->nk; k++) {
    int64_t flops, bytes;
    lw_kernel_cost(L, producer, k, &flops, &bytes);
    sb_printf(b, "%s\n  {\"index\": %d, \"block\": %d, \"flops\": %lld, \"bytes\": %lld}", k ? "," : "", k,
              L->k[k].nm > 0 ? L->g->nodes[L->k[k].members[0]]->fusion_block : -1, (long long)flops, (long long)bytes);
  }
  free(producer);
}

static int write_meta(ecg_lower *L, const char *dir, ecg_err *e) {
  extern const struct { const char *name; const unsigned char *data; size_t size; } ecg_runtime_files[];
  sbuf b = {0};
  /* model: the source file's base name without .onnx (the graph name when unknown) */
  char model[256];
  const char *src = L->g->source && L->g->source[0] ? L->g->source : NULL;
  if (src) {
    const char *base = strrchr(src, '/');
    snprintf(model, sizeof model, "%s", base ? base + 1 : src);
    char *dot = strrchr(model, '.');
    if (dot && !strcmp(dot, ".onnx")) *dot = 0;
  } else {
    snprintf(model, sizeof model, "%s", L->g->name);
  }
  sb_printf(&b, "{\"model\": ");
  lw_json_str(&b, model);
  sb_printf(&b, ", \"graph\": ");
  lw_json_str(&b, L->g->name);
  sb_printf(&b, ", \"source\": ");
  lw_json_str(&b, L->g->source ? L->g->source : "");
  sb_printf(&b, ", \"prefix\": ");
  lw_json_str(&b, L->prefix);
  sb_printf(&b, ", \"arch\": ");
  lw_json_str(&b, L->arch);
  int passes = count_passes(L);
  sb_printf(&b, ", \"target\": \"%s\"", L->hetero ? "c+opencl" : L->target == LW_TARGET_OPENCL ? "opencl" : "c");
  if (L->hetero) sb_printf(&b, ", \"placements\": [%s]", L->het_json.s ? L->het_json.s : "");
  static const char *const sparse_names[] = {"fkw", "csr", "dense", "fkr", "lre", "lre-filter"};
  sb_printf(&b, ", \"sparse\": \"%s\", \"sparse_convs\": %d, \"sparse_layers\": [%s]", sparse_names[L->sparse], L->n_sparse,
            L->sparse_json.len ? L->sparse_json.s : "");
  if (L->n_sparse) { /* the key a --sparse-tune record of this machine carries (scripts/prune_layers.sh) */
    char cpu[256];
    const char *isa;
    int th;
    ecg_host_key(cpu, sizeof cpu, &isa, &th);
    sb_printf(&b, ", \"sparse_host\": {\"cpu\": ");
    lw_json_str(&b, cpu);
    sb_printf(&b, ", \"isa\": \"%s\"}", isa);
  }
  sb_printf(&b, ", \"nodes\": %zu, \"kernels\": %d, \"blocks\": %d, \"weights_bytes\": %zu, \"arena_bytes\": %zu, "
            "\"arena_lower_bound\": %zu, \"memory_plan_algo\": \"%s\", \"memory_plan\": [",
            L->g->n_nodes, passes, L->nk, L->weights_bytes, L->arena_bytes, L->arena_lower_bound, lw_plan_name(L->plan));
  int first = 1;
  for (size_t t = 0; t < L->g->n_tensors; t++) {
    /* placed buffers only: an alias (a zero-copy Reorganize output, or the dominant output
     * of an epilogue block, written into the block output's buffer and overwritten there
     * tile by tile while in cache) has no place of its own */
    if (L->t[t].where != LW_ARENA || L->t[t].alias_of >= 0 || L->dyn) continue; /* dyn: planned at run time */
    sb_printf(&b, "%s{\"tensor\": ", first ? "" : ", ");
    lw_json_str(&b, L->g->tensors[t]->name);
    sb_printf(&b, ", \"offset\": %zu, \"bytes\": %zu}", L->t[t].offset, L->t[t].bytes);
    first = 0;
  }
  const lw_plan_cmp *pc = &L->plan_cmp;
  sb_printf(&b, "], \"memory_plans\": {\"buffers\": %d, \"lower_bound\": %zu, \"peak\": %zu, \"bestfit\": %zu, \"size\": %zu, "
            "\"optimum\": %zu, \"optimum_exact\": %s}", pc->buffers, pc->lower_bound, pc->arena[LW_PLAN_PEAK],
            pc->arena[LW_PLAN_BESTFIT], pc->arena[LW_PLAN_SIZE], pc->optimum, pc->optimum_exact ? "true" : "false");
  sb_printf(&b, ", \"kernel_costs\": [");
  if (!L->dyn) json_kernel_costs(&b, L); /* dyn: the work depends on the run's sizes */
  sb_printf(&b, "]");
  if (L->dyn) { /* the dynamic-shape build: its symbols (-1 dims in the shapes below) and run-time buffers */
    sb_printf(&b, ", \"dynamic\": {\"symbols\": [");
    for (int i = 0; i < L->n_sym; i++) {
      if (i) sb_printf(&b, ", ");
      lw_json_str(&b, L->syms[i]);
    }
    sb_printf(&b, "], \"buffers\": %d}", L->n_dbuf);
  }
  sb_printf(&b, ", \"inputs\": ");
  json_io(&b, L->g, L->g->inputs, L->g->n_inputs);
  sb_printf(&b, ", \"outputs\": ");
  json_io(&b, L->g, L->g->outputs, L->g->n_outputs);
  sb_printf(&b, "}\n");
  int rc = b.oom ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : lw_write_file(dir, "model.json", b.s, b.len, e);
  sb_free(&b);
  if (rc) return rc;
  /* Makefile: the model's own code (model.c, compiled once, position-independent, for
   * both libraries) and the runner; the runtime comes from ecg_rt.mk (RT_LIB: the library
   * of this configuration in the runtime cache, or built here). */
  sb_printf(&b,
            "# Generated by ecg-lower. `make` builds lib%s.a, lib%s.so and runner.\n"
            "# MARCH: the CPU to compile for (gcc -march). native (the default) is this machine and may\n"
            "# crash with an illegal instruction elsewhere; to build on one machine and deploy on others,\n"
            "# name the oldest target, e.g. `make clean all MARCH=x86-64-v3` (AVX2/FMA) or MARCH=x86-64 (no AVX).\n"
            "# The runtime (ecg_*.c) is compiled once per configuration (compiler, CFLAGS, ISA) into a\n"
            "# library kept in ECG_RT_CACHE (default ~/.cache/ecg/runtime; empty: build it here), see ecg_rt.mk.\n"
            "# Link the static library (model and runtime) with: $(CC) -fopenmp your.c lib%s.a -lm\n",
            L->prefix, L->prefix, L->prefix);
  if (L->target == LW_TARGET_OPENCL) {
    sb_free(&b);
    sb_printf(&b,
              "# Generated by ecg-lower --target opencl. `make` builds lib%s.a, lib%s.so and runner: the host\n"
              "# code (model.c, which embeds the OpenCL C kernels of model.cl) links only the OpenCL ICD loader.\n"
              "# Link the static library with: $(CC) your.c lib%s.a -lOpenCL -lm\n"
              "CC ?= cc\nCFLAGS ?= -O2\nLDLIBS ?= -lOpenCL -lm\nPREFIX = %s\n"
              "all: lib$(PREFIX).a lib$(PREFIX).so runner\n"
              "model.o: model.c model.h\n\t$(CC) $(CFLAGS) -fPIC -c model.c -o $@\n"
              "lib$(PREFIX).a: model.o\n\trm -f $@ && ar rcs $@ model.o\n"
              "lib$(PREFIX).so: model.o\n\t$(CC) $(CFLAGS) -shared -o $@ model.o $(LDLIBS)\n"
              "runner: runner_main.c lib$(PREFIX).a model.h\n\t$(CC) $(CFLAGS) -o $@ runner_main.c lib$(PREFIX).a $(LDLIBS)\n"
              "clean:\n\trm -f *.o lib$(PREFIX).a lib$(PREFIX).so runner\n.PHONY: all clean\n",
              L->prefix, L->prefix, L->prefix, L->prefix);
    rc = b.oom ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : lw_write_file(dir, "Makefile", b.s, b.len, e);
    sb_free(&b);
    for (int i = 0; rc == ECG_OK && ecg_runtime_files[i].name; i++)
      if (!strcmp(ecg_runtime_files[i].name, "runner_main.c"))
        rc = lw_write_file(dir, ecg_runtime_files[i].name, ecg_runtime_files[i].data, ecg_runtime_files[i].size, e);
    return rc;
  }
  arch_makefile(&b, L->arch);
  sb_printf(&b,
            "CC ?= cc\nMARCH ?= native\nCFLAGS ?= -O3 -march=$(MARCH) -fopenmp\n"
            "# model.c: calls into the runtime and generated loops marked `omp simd`, which -O2 vectorises\n"
            "# as -O3 does, in half the compile time (CFLAGS with -O3 replaced by -O2; LOWERED.md).\n"
            "MODEL_CFLAGS ?= $(patsubst -O3,-O2,$(CFLAGS))\n"
            "# Always on for model.c (where $(CC) takes them): gcc 12.2 for aarch64 deleted the direct tail call\n"
            "# that identical-code folding made of a repeated kernel (wrong outputs for bert_tiny); without these\n"
            "# two analyses the call stays (LOWERED.md). The kernels are called through a table: they gain nothing.\n"
            "MODEL_SAFE_CFLAGS := $(shell $(CC) -Werror -fno-ipa-pure-const -fno-ipa-modref -E -x c /dev/null >/dev/null 2>&1 && echo -fno-ipa-pure-const -fno-ipa-modref)\n"
            "LDLIBS ?= -lm%s\nPREFIX = %s\n"
            "all: lib$(PREFIX).a lib$(PREFIX).so runner\n"
            "include ecg_rt.mk\n"
            "model.o: model.c model.h $(RT_HDRS)\n\t$(CC) $(MODEL_CFLAGS) $(ECG_CFLAGS) $(MODEL_SAFE_CFLAGS) -fPIC -fno-semantic-interposition -c model.c -o $@\n"
            "# lib$(PREFIX).a: the runtime library's objects and model.o\n"
            "lib$(PREFIX).a: model.o $(RT_LIB)\n\trm -f $@ && cp $(RT_LIB) $@ && ar rcs $@ model.o\n"
            "# lib$(PREFIX).so: the runtime linked in with its symbols hidden, so several such libraries coexist\n"
            "lib$(PREFIX).so: model.o $(RT_LIB)\n\t$(CC) $(CFLAGS) -shared -o $@ model.o $(RT_LIB) -Wl,--exclude-libs,ALL $(LDLIBS)\n"
            "runner: runner_main.c lib$(PREFIX).a model.h $(RT_HDRS)\n\t$(CC) $(CFLAGS) -o $@ runner_main.c lib$(PREFIX).a $(LDLIBS)\n"
            "clean:\n\trm -f *.o libecg_rt.a lib$(PREFIX).a lib$(PREFIX).so runner\n.PHONY: all clean\n",
            L->hetero ? " -lOpenCL" : "", L->prefix);
  rc = b.oom ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : lw_write_file(dir, "Makefile", b.s, b.len, e);
  sb_free(&b);
  for (int i = 0; rc == ECG_OK && ecg_runtime_files[i].name; i++)
    rc = lw_write_file(dir, ecg_runtime_files[i].name, ecg_runtime_files[i].data, ecg_runtime_files[i].size, e);
  return rc;
}

/* The start of guarded kernel p's body: return unless its guard holds (the branch of a
 * flattened If not taken), then check its outputs' run-time dims as bind_ checks the
 * others' (at least 1, or 0 when an input is empty; a taken branch whose sizes do not fit
 * fails the run: ctx->err = -3, the message in ctx->msg). A fusion block
 * holding a guarded node is refused, naming it. */
static int guard_kernel(ecg_lower *L, int p, ecg_err *e) {
  const lw_kernel *K = &L->k[p];
  int i = K->members[0];
  const ecg_node *n = L->g->nodes[i];
  if (!L->gd_n) return ECG_OK;
  for (int m = 0; m < K->nm; m++)
    if (L->gd_n[K->members[m]] && K->nm > 1) return lw_node_err(L, L->g->nodes[K->members[m]], e, "a guarded node (a flattened If's branch) in a fusion block is not supported");
  if (!L->gd_n[i]) return ECG_OK;
  sb_printf(&L->code, "  if (ctx->err || !(");
  lw_guard_c(L, i, &L->code);
  sb_printf(&L->code, ")) return; /* its branch is not taken */\n");
  for (size_t o = 0; o < n->n_outputs; o++) {
    int t = n->outputs[o];
    for (size_t d = 0; t >= 0 && lw_tensor_dyn(L, t) && d < L->g->tensors[t]->n_dims; d++) {
      if (!L->dexpr[t][d]) continue;
      lw_dyn_dim_check(L, &L->code, t, (int)d, "ctx->empty", "ctx->err = -3; return;");
    }
  }
  return ECG_OK;
}

/* What guarded node i's emitter added to prepare_ (from L->prep's byte prep0 on: a conv's
 * parameters, scratch and weight packing) runs only when the node's sizes are valid (every
 * dim of its operands at least 1, or 0 when an input is empty): an untaken branch's sizes
 * may not be (a runtime call on them could divide by zero). */
static void guard_prep(ecg_lower *L, int i, size_t prep0) {
  if (!L->gd_n || !L->gd_n[i] || L->prep.len <= prep0 || L->prep.oom) return;
  char *tail = strdup(L->prep.s + prep0);
  if (!tail) { L->prep.oom = 1; return; }
  L->prep.len = prep0;
  L->prep.s[prep0] = 0;
  const ecg_node *n = L->g->nodes[i];
  sb_printf(&L->prep, "  if (1");
  for (size_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
    int t = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
    for (size_t d = 0; t >= 0 && lw_tensor_dyn(L, t) && d < L->g->tensors[t]->n_dims; d++)
      if (L->dexpr[t][d]) sb_printf(&L->prep, " && (%s) >= !ctx->empty", L->dexpr[t][d]);
  }
  sb_printf(&L->prep, ") { /* a guarded node: its sizes may not fit when its branch is not taken */\n%s  }\n", tail);
  free(tail);
}

int ecg_lower_dir(const ecg_graph *g, const char *dir, const char *prefix, const char *arch, const char *sparse,
                  const char *memory_plan, ecg_lower_stats *st, ecg_err *e) {
  return ecg_lower_dir_target(g, dir, prefix, arch, sparse, memory_plan, "c", st, e);
}

int ecg_lower_dir_target(const ecg_graph *g, const char *dir, const char *prefix, const char *arch, const char *sparse,
                         const char *memory_plan, const char *target, ecg_lower_stats *st, ecg_err *e) {
  return ecg_lower_dir_sparse(g, dir, prefix, arch, sparse, memory_plan, target, NULL, st, e);
}

int ecg_lower_dir_sparse(const ecg_graph *g, const char *dir, const char *prefix, const char *arch, const char *sparse,
                         const char *memory_plan, const char *target, const ecg_lower_sparse_opts *so, ecg_lower_stats *st,
                         ecg_err *e) {
  ecg_lower L = {0};
  if (memory_plan && lw_plan_parse(memory_plan, &L.plan) != 0)
    return ecg_errf(e, ECG_ERR_USAGE, "unknown --memory-plan '%s' (expected peak, bestfit or size)", memory_plan);
  if (!target || !strcmp(target, "c")) L.target = LW_TARGET_C;
  else if (!strcmp(target, "opencl")) L.target = LW_TARGET_OPENCL;
  else if (!strcmp(target, "c+opencl")) L.hetero = 1; /* C, with the placed kernels split onto the device (hetero.c) */
  else return ecg_errf(e, ECG_ERR_USAGE, "unknown --target '%s' (expected c, opencl or c+opencl)", target);
  if (!sparse || !strcmp(sparse, "fkw")) L.sparse = LW_SPARSE_FKW;
  else if (!strcmp(sparse, "csr")) L.sparse = LW_SPARSE_CSR;
  else if (!strcmp(sparse, "dense")) L.sparse = LW_SPARSE_DENSE;
  else if (!strcmp(sparse, "fkr")) L.sparse = LW_SPARSE_FKR;
  else if (!strcmp(sparse, "lre")) L.sparse = LW_SPARSE_LRE;
  else if (!strcmp(sparse, "lre-filter")) L.sparse = LW_SPARSE_LRE_FILTER;
  else return ecg_errf(e, ECG_ERR_USAGE, "unknown --sparse '%s' (expected fkw, lre-filter, lre, fkr, csr or dense)", sparse);
  if (so) memcpy(L.tile_force, so->tile, sizeof L.tile_force);
  L.g = g;
  L.prefix = prefix;
  L.arch = arch ? arch : "native";
  if (!ecg_arch_find(L.arch)) return ecg_errf(e, ECG_ERR_USAGE, "unknown --arch '%s' (expected one of %s)", L.arch, ecg_arch_names());
  if (so && so->tune_path) {
    int trc = lw_sparse_tune_load(&L, so->tune_path, e);
    if (trc) return trc;
  }
  int *order = malloc(sizeof(int) * (g->n_nodes + 1));
  if (!order) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  int rc = ecg_validate(g, e);
  int dyn = rc == ECG_OK && lw_graph_symbolic(g); /* symbolic dims left: the dynamic-shape build (dyn.c) */
  if (rc == ECG_OK) rc = check_static(g, dyn, e);
  if (rc == ECG_OK && dyn) rc = lw_dyn_setup(&L, e);
  if (rc == ECG_OK) rc = load_guards(&L, e);
  if (rc == ECG_OK) rc = ecg_topo_order(g, order, e);
  if (rc == ECG_OK) rc = guard_order(&L, order, e);
  if (rc == ECG_OK) rc = assign_storage(&L, e);
  if (rc == ECG_OK) find_aliases(&L, order);
  if (rc == ECG_OK) rc = lw_form_kernels(&L, order, e);
  if (rc == ECG_OK) lw_kernel_storage(&L);
  if (rc == ECG_OK) rc = lw_layout_storage(&L, e); /* GCD² layouts: NCHWc tensors' bytes, reorder buffers */
  if (rc == ECG_OK) rc = plan_memory(&L, order, e);
  if (rc == ECG_OK && L.target == LW_TARGET_OPENCL && !(L.cl_work = calloc((size_t)L.nk + 1, sizeof *L.cl_work)))
    rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK && L.lay_bytes) { /* the reorder buffers above the plan */
    L.lay_base = align_up(L.arena_bytes);
    L.arena_bytes = L.lay_base + L.lay_bytes;
  }
  L.het_base = align_up(L.arena_bytes); /* c+opencl: the CPU parts' scratch follows the plan */
  /* Every kernel gets its function; collect all missing emitters at once. */
  int missing = 0;
  char lb[256];
  for (int p = 0; rc == ECG_OK && p < L.nk; p++) {
    const lw_kernel *K = &L.k[p];
    const ecg_node *n = g->nodes[K->members[K->kind == LW_K_EPI ? 0 : K->nm_core - 1]];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    ecg_emit_fn fn = op ? ecg_emitter(op->id) : NULL;
    bool seq = false;
    for (int m = 0; m < K->nm; m++) seq |= lw_node_seq(&L, g->nodes[K->members[m]]) && !lw_node_control(g->nodes[K->members[m]]);
    if (seq) { /* run-time sequences: one node per kernel, C only, static shapes */
      const char *why = K->nm > 1 ? "in a fusion block (lower it unfused)" : L.dyn && lw_node_dyn(&L, n) ? "with symbolic dims"
                        : L.target != LW_TARGET_C || L.hetero ? "by --target opencl or c+opencl" : NULL;
      if (why) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): run-time sequences are not supported %s",
                      ecg_node_label(g, n, lb, sizeof lb), n->op_type, why);
        break;
      }
      if ((rc = kernel_schedule(&L, p, n, e)) != ECG_OK) break;
      sb_printf(&L.code, "/* kernel %d: '%s' (%s) on run-time sequences */\nstatic void k%d(struct %s_ctx *ctx) {\n", p,
                ecg_node_label(g, n, lb, sizeof lb), n->op_type, p, prefix);
      rc = lw_emit_kernel(&L, p, e);
      L.cur = NULL;
      sb_printf(&L.code, "  (void)ctx;\n}\n\n");
      L.sched = NULL;
      continue;
    }
    if (K->kind != LW_K_EW && K->kind != LW_K_ROW && !fn) {
      if (!missing++)
        ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): no kernel emitter for this operator", ecg_node_label(g, n, lb, sizeof lb), n->op_type);
      continue;
    }
    if (L.target == LW_TARGET_OPENCL) { /* what the OpenCL printer cannot express is refused, naming the node */
      int half = 0;
      for (int m = 0; m < K->nm; m++) half |= node_touches_half(&L, g->nodes[K->members[m]]);
      const char *why = lw_kind_intensive(K->kind) ? "intensive-fusion kernels (ecg-fuse --intensive)"
                        : half ? "float16/bfloat16 tensors"
                        : K->kind != LW_K_EW && !lw_cl_emitter(fn) ? "this operator" : NULL;
      if (why) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): --target opencl does not support %s yet; use --target c",
                      ecg_node_label(g, n, lb, sizeof lb), n->op_type, why);
        break;
      }
    }
    if (L.dyn) { /* symbolic dims: only the emitters converted to lw_dim, one node per kernel */
      const ecg_node *dn = NULL;
      for (int m = 0; m < K->nm && !dn; m++) if (lw_node_dyn(&L, g->nodes[K->members[m]])) dn = g->nodes[K->members[m]];
      if (dn && (K->kind == LW_K_EW ? 0 : K->kind != LW_K_SINGLE || !lw_emit_dynamic(fn))) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): %s is not supported with symbolic dims yet; fix dims with --input-shape",
                      ecg_node_label(g, dn, lb, sizeof lb), dn->op_type,
                      K->kind != LW_K_SINGLE ? "a fusion block (lower it unfused, ecg-fuse --plan none)" : "this operator");
        break;
      }
      if (L.klay && L.klay[p]) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): NCHWc layouts are not supported with symbolic dims yet",
                      ecg_node_label(g, n, lb, sizeof lb), n->op_type);
        break;
      }
    }
    if (K->kind == LW_K_SINGLE && node_touches_half(&L, n) && !half_capable(fn)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): float16/bfloat16 is not supported by this operator's kernel",
                    ecg_node_label(g, n, lb, sizeof lb), n->op_type);
      break;
    }
    if (L.hetero) { /* a placed kernel: the device part and the CPU part (hetero.c) */
      int done = 0;
      rc = lw_het_kernel(&L, p, &done, e);
      if (rc || done) continue;
    }
    if ((rc = kernel_schedule(&L, p, n, e)) != ECG_OK) break;
    sb_printf(&L.code, "/* kernel %d: %d node%s from '%s' (%s%s) */\n", p, K->nm, K->nm > 1 ? "s" : "",
              ecg_node_label(g, n, lb, sizeof lb), ecg_mapping_name(op ? op->mapping : 0),
              K->kind == LW_K_EW ? ", fused One-to-One" : K->kind == LW_K_EPI ? " + epilogue" : K->kind == LW_K_IBR ? ", intensive fusion" : K->kind == LW_K_SE ? ", intensive fusion: squeeze-excitation" : K->kind == LW_K_CPOOL ? ", intensive fusion: conv-maxpool" : K->kind == LW_K_ROW ? ", row reductions" : "");
    const int nt = L.sched ? L.sched->threads : 0; /* the body runs as k<p>_, called on at most nt threads */
    if (L.target == LW_TARGET_OPENCL) sb_printf(&L.code, "__kernel void k%d(ECG_CL_ARGS) {\n", p);
    else sb_printf(&L.code, "static void k%d%s(struct %s_ctx *ctx) {\n", p, nt ? "_" : "", prefix);
    lw_dyn_prologue(&L, &L.code, "ctx->sym");
    rc = guard_kernel(&L, p, e);
    size_t prep0 = L.prep.len;
    if (rc == ECG_OK) rc = lw_emit_kernel(&L, p, e);
    if (rc == ECG_OK) guard_prep(&L, K->members[0], prep0);
    L.cur = NULL;
    sb_printf(&L.code, L.target == LW_TARGET_OPENCL ? "}\n\n" : "  (void)ctx;\n}\n\n");
    if (nt)
      sb_printf(&L.code,
                "/* kernel %d's schedule: at most %d thread%s (ecg-partition --tune) */\n"
                "static void k%d(struct %s_ctx *ctx) {\n#ifdef _OPENMP\n  const int nt_ = omp_get_max_threads();\n"
                "  omp_set_num_threads(nt_ < %d ? nt_ : %d);\n  k%d_(ctx);\n  omp_set_num_threads(nt_);\n#else\n  k%d_(ctx);\n#endif\n}\n\n",
                p, nt, nt > 1 ? "s" : "", p, prefix, nt, nt, p, p);
    if (rc == ECG_OK) rc = kernel_schedule_used(&L, p, n, e);
    L.sched = NULL;
  }
  if (rc == ECG_OK && missing) rc = ECG_ERR_INPUT;
  if (L.hetero && L.het_host) L.arena_bytes = L.het_base + align_up(L.het_host);
  if (rc == ECG_OK && (L.code.oom || L.decls.oom || L.init.oom || L.scratch_expr.oom)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK) rc = write_header(&L, dir, e);
  if (rc == ECG_OK) rc = write_model_c(&L, dir, order, e);
  if (rc == ECG_OK) rc = write_weights(&L, dir, e);
  if (rc == ECG_OK) rc = write_meta(&L, dir, e);
  if (rc == ECG_OK && st) {
    *st = (ecg_lower_stats){count_passes(&L), L.nk, L.n_sparse, L.weights_bytes, L.arena_bytes, L.arena_lower_bound, NULL};
    if (L.het_notes.len && !(st->notes = strdup(L.het_notes.s))) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  free(order);
  lw_layout_free(&L);
  free(L.t);
  for (int i = 0; i < L.nk; i++) free(L.k[i].members);
  free(L.k);
  free(L.node_kernel);
  free(L.sched_left);
  free(L.sched_acc);
  free(L.region_off);
  free(L.cl_work);
  free(L.gd_n);
  free(L.gd_c);
  free(L.gd_s);
  free(L.tguard);
  sb_free(&L.code);
  sb_free(&L.decls);
  sb_free(&L.sparse_json);
  lw_sparse_tune_free(&L);
  sb_free(&L.init);
  sb_free(&L.pk_sizes);
  sb_free(&L.scratch_expr);
  sb_free(&L.cl_code);
  sb_free(&L.cl_decls);
  sb_free(&L.cl_names);
  sb_free(&L.het_json);
  sb_free(&L.het_notes);
  free(L.blob);
  lw_dyn_free(&L);
  return rc;
}
