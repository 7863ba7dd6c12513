/* ecg-lower: row-reduction blocks (LW_K_ROW; the dnnfusion plan's row blocks,
 * tools/fuse/rows.c; DNNFusion §3.4.4.1 data-flow-tree code generation extended to
 * Many-to-Many reductions over trailing axes).
 *
 * The block's space F = [d0..d(r-1)] is seen as NR rows x C inner elements (the trailing
 * dims [a, r) its row reductions reduce). Members are row reductions (F -> R, R = F with
 * the inner dims set to 1), "full" One-to-One members (output F) and "row" One-to-One
 * members (output R). The kernel is one loop over rows (split across threads); per row:
 *   - row members are scalars in registers, computed as soon as their operands are ready;
 *   - a full member is computed in pass p = the first pass after every row value it
 *     depends on is final; each pass is one loop over the row's C elements that computes
 *     the full members it needs (common subexpressions once, as in block.c), accumulates
 *     the reductions of that pass and stores the full outputs of that pass;
 *   - a reduction of pass p is final after that loop (its finish applied).
 * LayerNorm is then three passes over a row in cache (mean, variance, output) and one
 * write; nothing else reaches memory. Full members needed in a later pass are recomputed
 * from the block's inputs there (an elementwise expression, never a reduction).
 */
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "scalar.h"

enum { LV_FULL = ECG_ROW_FULL, LV_ROW = ECG_ROW_ROW, LV_RED = ECG_ROW_RED };

typedef struct {
  int tid;
  int inner;      /* 1: the operand's inner dims are F's (address + j), 0: all 1 */
  int scalar;     /* one element: loaded once before the row loop (or a literal) */
  int store;      /* a block output written by the kernel */
  int64_t st[ECG_MAX_RANK]; /* broadcast strides over F */
  char lit[96];
} rb_opnd;

typedef struct {
  ecg_lower *L;
  const int *m;
  int nm;
  ecg_row_space s;
  int64_t NR, C;
  int *lev, *pass, *need;
  ecg_scalar_view *views;
  rb_opnd ops[4 * LW_MAX_OPS];
  int nops;
  int (*opnd)[ECG_SCALAR_MAX_OPERANDS]; /* per member, operand k: ops index, -1 member */
} rb_ctx;

/* Index of member whose output is tensor tid, or -1. */
static int member_of(const rb_ctx *c, int tid, int before) {
  for (int i = 0; i < before; i++)
    if (c->L->g->nodes[c->m[i]]->outputs[0] == tid) return i;
  return -1;
}

static int add_op(rb_ctx *c, int tid, int rank, const int64_t *dims, int store) {
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].tid == tid && c->ops[i].store == store) return i;
  if (c->nops >= (int)(sizeof c->ops / sizeof *c->ops)) return -1;
  rb_opnd *o = &c->ops[c->nops];
  memset(o, 0, sizeof *o);
  o->tid = tid;
  o->store = store;
  lw_bcast_strides(c->s.r, c->s.F, rank, dims, o->st);
  int64_t inner = 1, numel = 1;
  for (int d = 0; d < rank; d++) numel *= dims[d];
  for (int d = c->s.a; d < c->s.r; d++) {
    int j = d - (c->s.r - rank);
    inner *= j >= 0 ? dims[j] : 1;
  }
  o->inner = inner > 1 || (c->C == 1 && rank == c->s.r);
  o->scalar = !store && numel == 1;
  if (o->scalar) lw_const_literal(c->L, tid, o->lit, sizeof o->lit);
  return c->nops++;
}

/* The C expression of operand k of member i: a member's local, a literal, a
 * loop-invariant scalar, or a load at the row's base (+ j for inner operands). */
static void operand_expr(const rb_ctx *c, int i, int k, char *buf, size_t n) {
  const ecg_node *nd = c->L->g->nodes[c->m[i]];
  int tid = nd->inputs[c->views[i].input[k]], oi = c->opnd[i][k];
  if (oi < 0) snprintf(buf, n, "v%d", tid);
  else if (c->ops[oi].scalar && c->ops[oi].lit[0]) snprintf(buf, n, "%s", c->ops[oi].lit);
  else if (c->ops[oi].scalar) snprintf(buf, n, "s%d", oi);
  else snprintf(buf, n, "%sp%d[b%d%s])", lw_load_open(c->L, tid), oi, oi, c->ops[oi].inner ? " + j" : "");
}

/* Append member i's statement: `T v<y>; { v<y> = expr; }`. */
static int scalar_member(rb_ctx *c, sbuf *out, int i, const char *indent) {
  const ecg_node *nd = c->L->g->nodes[c->m[i]];
  char vals[ECG_SCALAR_MAX_OPERANDS][112];
  const char *vp[ECG_SCALAR_MAX_OPERANDS];
  for (int k = 0; k < c->views[i].n_operands; k++) {
    vp[k] = vals[k];
    vals[k][0] = 0;
    if (c->views[i].input[k] >= 0) operand_expr(c, i, k, vals[k], sizeof vals[k]);
  }
  char dst[32];
  int y = nd->outputs[0];
  snprintf(dst, sizeof dst, "v%d", y);
  sb_printf(out, "%s%s v%d; ", indent, lw_vtype(c->L, y), y);
  int rc = lw_scalar_stmt(c->L, out, nd, &c->views[i], vp, dst);
  sb_printf(out, "\n");
  return rc;
}

/* Store member i's value if the block outputs it. */
static void store_member(rb_ctx *c, sbuf *out, int i, const char *indent) {
  int y = c->L->g->nodes[c->m[i]]->outputs[0];
  for (int o = 0; o < c->nops; o++) {
    if (!c->ops[o].store || c->ops[o].tid != y) continue;
    int h = lw_half(c->L, y);
    sb_printf(out, "%sp%d[b%d%s] = %sv%d%s;\n", indent, o, o, c->lev[i] == LV_FULL ? " + j" : "",
              h == 1 ? "ecg_f2h(" : h == 2 ? "ecg_f2bf(" : "", y, h ? ")" : "");
  }
}

/* Mark the full members pass p computes: the inputs of its reductions and its stored
 * outputs, with their full operands (the data-flow tree walked from those roots). */
static void mark_needs(rb_ctx *c, int p) {
  const ecg_graph *g = c->L->g;
  for (int i = 0; i < c->nm; i++) c->need[i] = 0;
  for (int i = c->nm - 1; i >= 0; i--) {
    const ecg_node *nd = g->nodes[c->m[i]];
    int root = 0;
    if (c->lev[i] == LV_RED && c->pass[i] == p) {
      int x = member_of(c, nd->inputs[0], i);
      if (x >= 0) c->need[x] = 1;
      continue;
    }
    if (c->lev[i] != LV_FULL) continue;
    if (c->pass[i] == p)
      for (int o = 0; o < c->nops; o++) if (c->ops[o].store && c->ops[o].tid == nd->outputs[0]) root = 1;
    if (!root && !c->need[i]) continue;
    c->need[i] = 1;
    for (size_t k = 0; k < nd->n_inputs; k++) {
      int x = nd->inputs[k] >= 0 ? member_of(c, nd->inputs[k], i) : -1;
      if (x >= 0 && c->lev[x] == LV_FULL) c->need[x] = 1;
    }
  }
}

int lw_emit_row_block(ecg_lower *L, const int *members, int nm, ecg_err *e) {
  const ecg_graph *g = L->g;
  rb_ctx c = {0};
  c.L = L;
  c.m = members;
  c.nm = nm;
  int red0 = -1;
  for (int i = 0; i < nm && red0 < 0; i++)
    if (ecg_row_space_of(g, g->nodes[members[i]], &c.s) == 0) red0 = i;
  if (red0 < 0) return lw_node_err(L, g->nodes[members[0]], e, "row block without a row reduction");
  c.NR = c.C = 1;
  for (int d = 0; d < c.s.r; d++) *(d < c.s.a ? &c.NR : &c.C) *= c.s.F[d];
  c.lev = calloc((size_t)nm, sizeof(int));
  c.pass = calloc((size_t)nm, sizeof(int));
  c.need = calloc((size_t)nm, sizeof(int));
  c.views = calloc((size_t)nm, sizeof *c.views);
  c.opnd = calloc((size_t)nm, sizeof *c.opnd);
  int rc = c.lev && c.pass && c.need && c.views && c.opnd ? ECG_OK : ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  /* levels, and per member: pass (full: the pass computing it; reduction: the pass
   * accumulating it) or readiness (row: the first pass its value is final before) */
  int npass = 1;
  for (int i = 0; i < nm && rc == ECG_OK; i++) {
    const ecg_node *nd = g->nodes[members[i]];
    c.lev[i] = ecg_row_level(g, nd, &c.s);
    if (c.lev[i] < 0) { rc = lw_node_err(L, nd, e, "cannot be a member of this row block (its shape or operands)"); break; }
    if (c.lev[i] == LV_RED) {
      int x = member_of(&c, nd->inputs[0], i);
      c.pass[i] = x >= 0 ? c.pass[x] : 0;
      if (x >= 0 && c.lev[x] != LV_FULL) { rc = lw_node_err(L, nd, e, "row block: a reduction of a row value"); break; }
      if (c.pass[i] + 1 > npass) npass = c.pass[i] + 1;
      continue;
    }
    rc = ecg_scalar_view_of(g, nd, &c.views[i], e);
    if (rc) break;
    int p = 0;
    for (size_t k = 0; k < nd->n_inputs; k++) {
      int x = nd->inputs[k] >= 0 ? member_of(&c, nd->inputs[k], i) : -1;
      if (x < 0) continue;
      int q = c.lev[x] == LV_RED ? c.pass[x] + 1 : c.pass[x]; /* row members keep readiness in pass[] */
      if (q > p) p = q;
    }
    c.pass[i] = p;
    if (c.lev[i] == LV_FULL && p + 1 > npass) npass = p + 1;
  }
  /* operands: stores first, then loads from outside the block */
  for (int i = 0; i < nm && rc == ECG_OK; i++) {
    int y = g->nodes[members[i]]->outputs[0];
    int64_t yd[ECG_MAX_RANK];
    int ry = lw_dims(L, y, yd);
    if (lw_tensor_used_outside(L, y, members, nm) && add_op(&c, y, ry, yd, 1) < 0)
      rc = lw_node_err(L, g->nodes[members[i]], e, "row block has too many outputs");
  }
  for (int i = 0; i < nm && rc == ECG_OK; i++) {
    const ecg_node *nd = g->nodes[members[i]];
    if (c.lev[i] == LV_RED) {
      int x = nd->inputs[0];
      if (member_of(&c, x, i) < 0) {
        int64_t xd[ECG_MAX_RANK];
        int rx = lw_dims(L, x, xd);
        if ((c.opnd[i][0] = add_op(&c, x, rx, xd, 0)) < 0) rc = lw_node_err(L, nd, e, "row block reads too many tensors");
      } else c.opnd[i][0] = -1;
      continue;
    }
    for (int k = 0; k < c.views[i].n_operands; k++) {
      c.opnd[i][k] = -1;
      if (c.views[i].input[k] < 0) continue;
      int tid = nd->inputs[c.views[i].input[k]];
      if (member_of(&c, tid, i) >= 0) continue;
      if ((c.opnd[i][k] = add_op(&c, tid, c.views[i].rank[k], c.views[i].dims[k], 0)) < 0) {
        rc = lw_node_err(L, nd, e, "row block reads too many tensors");
        break;
      }
    }
  }
  sbuf *out = &L->code;
  if (rc == ECG_OK) {
    sb_printf(out, "  {\n");
    for (int o = 0; o < c.nops; o++) {
      const rb_opnd *op = &c.ops[o];
      if (op->scalar && op->lit[0]) continue;
      const char *ptr = lw_ptr(L, op->tid);
      if (op->scalar) sb_printf(out, "    const %s s%d = %s%s[0]);\n", lw_vtype(L, op->tid), o, lw_load_open(L, op->tid), ptr);
      else sb_printf(out, "    %s%s%s *restrict p%d = %s;\n", lw_gq(L), op->store ? "" : "const ", lw_ctype(L, op->tid), o, ptr);
    }
    if (L->target == LW_TARGET_OPENCL) lw_par_for(L, 4, "row", c.NR, c.NR * c.C, 16384); /* rows over work-items */
    else {
      sb_printf(out, "    #pragma omp parallel for if(%lld >= 16384) schedule(static)\n", (long long)(c.NR * c.C));
      sb_printf(out, "    for (int64_t row = 0; row < %lld; row++) {\n", (long long)c.NR);
    }
    sb_printf(out, "      int64_t rem_ = row; (void)rem_;\n");
    for (int d = c.s.a - 1; d >= 0; d--)
      sb_printf(out, "      const int64_t c%d = rem_ %% %lld; rem_ /= %lld; (void)c%d;\n", d, (long long)c.s.F[d], (long long)c.s.F[d], d);
    for (int o = 0; o < c.nops; o++) {
      if (c.ops[o].scalar) continue;
      sb_printf(out, "      const int64_t b%d = 0", o);
      for (int d = 0; d < c.s.a; d++)
        if (c.ops[o].st[d]) sb_printf(out, " + c%d * %lld", d, (long long)c.ops[o].st[d]);
      sb_printf(out, ";\n");
    }
    for (int p = 0; p <= npass && rc == ECG_OK; p++) {
      /* row values final before pass p */
      for (int i = 0; i < nm && rc == ECG_OK; i++)
        if (c.lev[i] == LV_ROW && c.pass[i] == p) {
          if (scalar_member(&c, out, i, "      ")) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
          store_member(&c, out, i, "      ");
        }
      if (p == npass) break;
      /* pass p: accumulators, one loop over the row, finishes */
      int sums_only = 1, any = 0;
      for (int i = 0; i < nm; i++) {
        if (c.lev[i] != LV_RED || c.pass[i] != p) continue;
        const ecg_node *nd = g->nodes[members[i]];
        const ecg_reduction *rd = ecg_reduction_of(lw_op(nd));
        const char *init = ecg_reduction_identity_c(rd, ECG_FLOAT);
        sb_printf(out, "      float acc%d = %s;\n", i, init);
        if (rd->combine != ECG_RED_SUM) sums_only = 0;
        any = 1;
      }
      mark_needs(&c, p);
      for (int i = 0; i < nm; i++) any |= c.need[i];
      if (!any) continue;
      if (sums_only) {
        sb_printf(out, "      #pragma omp simd");
        for (int i = 0; i < nm; i++)
          if (c.lev[i] == LV_RED && c.pass[i] == p) sb_printf(out, " reduction(+:acc%d)", i);
        sb_printf(out, "\n");
      }
      sb_printf(out, "      for (int64_t j = 0; j < %lld; j++) {\n", (long long)c.C);
      for (int i = 0; i < nm && rc == ECG_OK; i++) {
        if (c.lev[i] == LV_FULL && c.need[i]) {
          if (scalar_member(&c, out, i, "        ")) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
          if (c.pass[i] == p) store_member(&c, out, i, "        ");
        } else if (c.lev[i] == LV_RED && c.pass[i] == p) {
          const ecg_node *nd = g->nodes[members[i]];
          const ecg_reduction *rd = ecg_reduction_of(lw_op(nd));
          char elem[128], mapped[192], acc[16], step[320];
          int oi = c.opnd[i][0];
          if (oi < 0) snprintf(elem, sizeof elem, "v%d", nd->inputs[0]);
          else snprintf(elem, sizeof elem, "p%d[b%d + j]", oi, oi);
          snprintf(acc, sizeof acc, "acc%d", i);
          snprintf(mapped, sizeof mapped, rd->c_map, elem);
          snprintf(step, sizeof step, rd->c_combine, acc, mapped);
          sb_printf(out, "        acc%d = %s;\n", i, step);
        }
      }
      sb_printf(out, "      }\n");
      for (int i = 0; i < nm; i++) {
        if (c.lev[i] != LV_RED || c.pass[i] != p) continue;
        const ecg_node *nd = g->nodes[members[i]];
        const ecg_reduction *rd = ecg_reduction_of(lw_op(nd));
        char acc[16], cnt[48], fin[256];
        snprintf(acc, sizeof acc, "acc%d", i);
        snprintf(cnt, sizeof cnt, "(float)%lld", (long long)c.C);
        if (rd->fin == ECG_RED_FIN_NONE) snprintf(fin, sizeof fin, "%s", acc);
        else snprintf(fin, sizeof fin, rd->c_finish, acc, cnt);
        sb_printf(out, "      const float v%d = (float)(%s);\n", nd->outputs[0], fin);
        store_member(&c, out, i, "      ");
      }
    }
    sb_printf(out, "    }\n  }\n");
  }
  free(c.lev); free(c.pass); free(c.need); free(c.views); free(c.opnd);
  return rc;
}
