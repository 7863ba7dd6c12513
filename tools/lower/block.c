/* ecg-lower: fused code generation for One-to-One fusion blocks.
 *
 * DNNFusion §3.4.4.1 (data-flow-tree code generation): a block of One-to-One members is
 * one loop nest over the block's output space; each member is a scalar expression
 * (format/ops/scalar.def, the same text constant folding evaluates) bound to a local, so
 * a value consumed twice is computed once (common-subtree elimination); operands from
 * outside the block are loaded through broadcasting index maps, scalar constants are
 * inlined as literals; only the block's outputs (read outside it, or graph outputs) are
 * stored.  A one-node block is the unfused kernel, so fused and unfused code come from
 * the same emitter.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "scalar.h"


void lw_literal(sbuf *b, const char *ctype, double v) {
  if (v != v) sb_printf(b, "((%s)NAN)", ctype);
  else if (isinf(v)) sb_printf(b, "((%s)%sINFINITY)", ctype, v < 0 ? "-" : "");
  else sb_printf(b, "((%s)%.17g)", ctype, v);
}

int lw_const_literal(const ecg_lower *L, int id, char *buf, size_t n) {
  const ecg_tensor *t = L->g->tensors[id];
  if (!t->is_const || ecg_tensor_numel(t) != 1 || t->dtype == ECG_BFLOAT16) return 0;
  sbuf b = {0};
  const char *vt = lw_vtype(L, id);
  if (ecg_dtype_is_float(t->dtype)) lw_literal(&b, vt, ecg_const_f64(t, 0));
  else {
    long long v = (long long)ecg_const_i64(t, 0);
    if (v == INT64_MIN) sb_printf(&b, "((%s)(-9223372036854775807LL - 1))", vt);
    else sb_printf(&b, "((%s)%lldLL)", vt, v);
  }
  int ok = !b.oom && b.len < n;
  if (ok) memcpy(buf, b.s, b.len + 1);
  sb_free(&b);
  return ok;
}

int lw_scalar_stmt(ecg_lower *L, sbuf *out, const ecg_node *n, const ecg_scalar_view *v, const char *const *vals,
                   const char *dst) {
  const ecg_scalar_row *row = v->row;
  const char *T = lw_vtype(L, n->inputs[row->dom]);
  int yid = n->outputs[0];
  int to_bool = L->g->tensors[yid]->dtype == ECG_BOOL;
  sb_printf(out, "{ typedef %s T; const T a = ", T);
  lw_literal(out, "T", v->a);
  sb_printf(out, ", b = ");
  lw_literal(out, "T", v->b);
  sb_printf(out, "; (void)a; (void)b; ");
  const char *x = v->isf ? row->fexpr : row->iexpr;
  if (row->variadic) {
    sb_printf(out, "T x0 = %s, x1; const int64_t n = %d; (void)n; ", vals[0], v->n_operands);
    for (int k = 1; k < v->n_operands; k++) sb_printf(out, "x1 = %s; x0 = %s; ", vals[k], x);
    x = v->isf ? row->ffinal : row->ifinal;
  } else {
    for (int k = 0; k < v->n_operands; k++) {
      if (v->input[k] >= 0) sb_printf(out, "const %s x%d = %s; ", lw_vtype(L, n->inputs[v->input[k]]), k, vals[k]);
      else if (v->same_as[k] >= 0) sb_printf(out, "const T x%d = x%d; ", k, v->same_as[k]);
      else {
        sb_printf(out, "const T x%d = ", k);
        lw_literal(out, "T", v->cval[k]);
        sb_printf(out, "; ");
      }
    }
  }
  sbuf cl = {0};
  if (L->target == LW_TARGET_OPENCL) x = lw_cl_expr(&cl, x);
  if (to_bool) sb_printf(out, "%s = (uint8_t)((%s) != 0); }", dst, x);
  else if (v->narrow_bf16) sb_printf(out, "%s = (%s)ecg_bf16_trunc((double)(%s)); }", dst, lw_vtype(L, yid), x); /* Cast to bfloat16 */
  else sb_printf(out, "%s = (%s)(%s); }", dst, lw_vtype(L, yid), x);
  int oom = cl.oom;
  sb_free(&cl);
  return out->oom || oom ? -1 : 0;
}

/* One operand of the loop nest: a tensor read with broadcast dims, or a stored output. */
typedef struct {
  int tid;
  int rank;
  int64_t dims[ECG_MAX_RANK];
  int store;      /* a block output written in the loop */
  int scalar;     /* numel 1: loaded once (or inlined) outside the loop */
  int slot;       /* index among the lw_loops operands (o<slot>), -1 for scalars */
  char lit[96];   /* inlined literal of a constant scalar, "" otherwise */
} ew_opnd;

static int is_member(const int *members, int nm, int node) {
  for (int i = 0; i < nm; i++) if (members[i] == node) return 1;
  return 0;
}

int lw_tensor_used_outside(const ecg_lower *L, int tid, const int *members, int nm) {
  const ecg_graph *g = L->g;
  for (size_t k = 0; k < g->n_outputs; k++) if (g->outputs[k] == tid) return 1;
  for (size_t i = 0; i < g->n_nodes; i++) {
    if (is_member(members, nm, (int)i)) continue;
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] == tid) return 1;
  }
  return 0;
}

/* Dynamic mode (lw_dloops): along which dims of output tensor out operand tid, seen with
 * rank vr and dims vd (its ecg_scalar_view: numpy broadcasting, right-aligned; -1 for a
 * symbolic dim), moves: where its dim provably equals the output's (the same number or the
 * same RDP expression) into real[d] = 1; a unit dim broadcasts (0). A dim that may or may
 * not be 1 at run time has no single loop nest: refused, naming node n. */
static int dyn_real(ecg_lower *L, const ecg_node *n, int tid, int vr, const int64_t *vd, int out, unsigned char *real,
                    ecg_err *e) {
  int r = (int)L->g->tensors[out]->n_dims, tr = (int)L->g->tensors[tid]->n_dims;
  for (int d = 0; d < r; d++) {
    int j = d - (r - vr);
    real[d] = 0;
    if (j < 0 || vd[j] == 1) continue;
    int same = vd[j] >= 0 ? !lw_tensor_dyn(L, out) || !L->dexpr[out][d] ? vd[j] == L->g->tensors[out]->dims[d]->value : 0
                          : vr == tr && lw_dyn_same_dim(L, tid, j, out, d);
    if (!same && !lw_dyn_unit(L, out, d))
      return lw_node_err(L, n, e, "operand '%s' dim %d (%s) and the output's dim %d (%s) are not provably equal, and a broadcast "
                         "decided at run time is not supported with symbolic dims yet", L->g->tensors[tid]->name, j,
                         vd[j] >= 0 || vr != tr ? "a number" : lw_dim(L, tid, j), d, lw_dim(L, out, d));
    real[d] = !lw_dyn_unit(L, out, d);
  }
  return ECG_OK;
}

/* Find or add operand (tid, dims) to ops[*n]; returns its index or -1 when full. */
static int add_operand(ew_opnd *ops, int *n, int max, int tid, int rank, const int64_t *dims, int store) {
  for (int i = 0; i < *n; i++)
    if (ops[i].tid == tid && ops[i].store == store && ops[i].rank == rank &&
        !memcmp(ops[i].dims, dims, sizeof(int64_t) * (size_t)rank))
      return i;
  if (*n >= max) return -1;
  ew_opnd *o = &ops[(*n)++];
  memset(o, 0, sizeof *o);
  o->tid = tid;
  o->rank = rank;
  memcpy(o->dims, dims, sizeof(int64_t) * (size_t)rank);
  o->store = store;
  o->slot = -1;
  return *n - 1;
}

/* Append to body the statement of member n (view v): `T v<y>; { ... v<y> = expr; }`, its
 * operands being members' locals v<t>, literals, loop-invariant locals s<k>, or loads:
 * in a loop nest (epi = 0) p<slot>[o<slot>]; in an epilogue (epi = 1) p<k>[a<k> (+ i)], with
 * the dominant node's output (opnd -2) as y[i]. opnd[k]: operand k's index in ops, -1 when
 * a member computes it. */
static int member_stmt(ecg_lower *L, sbuf *body, const ecg_node *n, const ecg_scalar_view *v, const int *opnd,
                       const ew_opnd *ops, int epi) {
  char vals[ECG_SCALAR_MAX_OPERANDS][112];
  const char *vp[ECG_SCALAR_MAX_OPERANDS];
  for (int k = 0; k < v->n_operands; k++) {
    vp[k] = vals[k];
    vals[k][0] = 0;
    if (v->input[k] < 0) continue;
    int tid = n->inputs[v->input[k]], oi = opnd[k];
    if (oi == -2) snprintf(vals[k], sizeof vals[k], "y[i]");
    else if (oi < 0) snprintf(vals[k], sizeof vals[k], "v%d", tid);
    else if (ops[oi].scalar && ops[oi].lit[0]) snprintf(vals[k], sizeof vals[k], "%s", ops[oi].lit);
    else if (ops[oi].scalar) snprintf(vals[k], sizeof vals[k], "s%d", oi);
    else if (!epi) snprintf(vals[k], sizeof vals[k], "%sp%d[o%d])", lw_load_open(L, tid), ops[oi].slot, ops[oi].slot);
    else snprintf(vals[k], sizeof vals[k], "%sp%d[a%d%s])", lw_load_open(L, tid), oi, oi, ops[oi].slot ? " + (int64_t)i" : "");
  }
  int y = n->outputs[0];
  char dst[32];
  snprintf(dst, sizeof dst, "v%d", y);
  sb_printf(body, "%s%s v%d; ", epi ? "      " : "", lw_vtype(L, y), y);
  int rc = lw_scalar_stmt(L, body, n, v, vp, dst);
  sb_printf(body, epi ? "\n" : " ");
  return rc;
}

int lw_emit_ew_block(ecg_lower *L, const int *members, int nm, ecg_err *e) {
  const ecg_graph *g = L->g;
  enum { MAXO = 4 * LW_MAX_OPS };
  ew_opnd ops[MAXO];
  int nops = 0;
  const ecg_node *last = g->nodes[members[nm - 1]];
  int64_t od[ECG_MAX_RANK];
  int r = lw_dims(L, last->outputs[0], od);
  int64_t numel = 1;
  for (int d = 0; d < r; d++) numel *= od[d];
  ecg_scalar_view *views = calloc((size_t)nm, sizeof *views);
  if (!views) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  int rc = ECG_OK;
  /* stores first: lw_loops takes its parallel/simd decision from operand 0 */
  for (int i = 0; i < nm && rc == ECG_OK; i++) {
    const ecg_node *n = g->nodes[members[i]];
    rc = ecg_scalar_view_of(g, n, &views[i], e);
    if (rc) break;
    int y = n->outputs[0];
    if (!lw_tensor_dyn(L, y) && ecg_tensor_numel(g->tensors[y]) != numel) {
      rc = lw_node_err(L, n, e, "fusion block member's output has %lld elements, the block's loop %lld",
                       (long long)ecg_tensor_numel(g->tensors[y]), (long long)numel);
      break;
    }
    if (nm == 1 || lw_tensor_used_outside(L, y, members, nm))
      if (add_operand(ops, &nops, MAXO, y, r, od, 1) < 0) rc = lw_node_err(L, n, e, "fusion block has too many outputs");
  }
  /* loads: operands produced outside the block */
  int (*opnd_of)[ECG_SCALAR_MAX_OPERANDS] = calloc((size_t)nm, sizeof *opnd_of);
  if (!opnd_of && rc == ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int i = 0; i < nm && rc == ECG_OK; i++) {
    const ecg_node *n = g->nodes[members[i]];
    for (int k = 0; k < views[i].n_operands; k++) {
      opnd_of[i][k] = -1;
      if (views[i].input[k] < 0) continue;
      int tid = n->inputs[views[i].input[k]];
      int inside = 0;
      for (int j = 0; j < i; j++) if (g->nodes[members[j]]->outputs[0] == tid) inside = 1;
      if (inside) continue;
      int idx = add_operand(ops, &nops, MAXO, tid, views[i].rank[k], views[i].dims[k], 0);
      if (idx < 0) { rc = lw_node_err(L, n, e, "fusion block reads too many tensors"); break; }
      opnd_of[i][k] = idx;
    }
  }
  /* slots: non-scalar operands, at most LW_MAX_OPS */
  int nslots = 0;
  int64_t st[LW_MAX_OPS][ECG_MAX_RANK];
  unsigned char real[LW_MAX_OPS][ECG_MAX_RANK];
  for (int i = 0; i < nops && rc == ECG_OK; i++) {
    int64_t m = 1;
    for (int d = 0; d < ops[i].rank; d++) m *= ops[i].dims[d] < 0 ? 2 : ops[i].dims[d]; /* a symbolic dim: not a scalar */
    ops[i].scalar = !ops[i].store && m == 1;
    if (ops[i].scalar) { lw_const_literal(L, ops[i].tid, ops[i].lit, sizeof ops[i].lit); continue; }
    if (nslots == LW_MAX_OPS) { rc = lw_node_err(L, last, e, "fusion block needs more than %d memory streams", LW_MAX_OPS); break; }
    ops[i].slot = nslots;
    if (L->dyn) rc = dyn_real(L, last, ops[i].tid, ops[i].rank, ops[i].dims, last->outputs[0], real[nslots], e);
    else lw_bcast_strides(r, od, ops[i].rank, ops[i].dims, st[nslots]);
    nslots++;
  }
  if (rc == ECG_OK) {
    sbuf *c = &L->code;
    sb_printf(c, "  {\n");
    for (int i = 0; i < nops; i++) {
      const ew_opnd *o = &ops[i];
      if (o->scalar && o->lit[0]) continue;
      /* copy the pointer expression at once: lw_ptr's buffer is a small ring */
      const char *ptr = lw_ptr(L, o->tid);
      if (o->scalar)
        sb_printf(c, "    const %s s%d = %s%s[0]);\n", lw_vtype(L, o->tid), i, lw_load_open(L, o->tid), ptr);
      else
        sb_printf(c, "    %s%s%s *restrict p%d = %s;\n", lw_gq(L), o->store ? "" : "const ", lw_ctype(L, o->tid), o->slot, ptr);
    }
    sbuf body = {0};
    for (int i = 0; i < nm; i++)
      if (member_stmt(L, &body, g->nodes[members[i]], &views[i], opnd_of[i], ops, 0) != 0) {
        rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
        break;
      }
    for (int i = 0; i < nops && rc == ECG_OK; i++) {
      if (!ops[i].store) continue;
      int h = lw_half(L, ops[i].tid);
      sb_printf(&body, "p%d[o%d] = %sv%d%s; ", ops[i].slot, ops[i].slot, h == 1 ? "ecg_f2h(" : h == 2 ? "ecg_f2bf(" : "",
                ops[i].tid, h ? ")" : "");
    }
    if (rc == ECG_OK && L->dyn) lw_dloops(L, last->outputs[0], nslots, real, body.s ? body.s : ";");
    else if (rc == ECG_OK) lw_loops(L, r, od, nslots, st, NULL, body.s ? body.s : ";", 1);
    sb_printf(c, "  }\n");
    sb_free(&body);
  }
  free(opnd_of);
  free(views);
  return rc;
}

/* Broadcast strides of operand o over the output dims od (rank r), and the element count
 * of the longest tail of od over which the operand's address moves by one per element
 * (*contig = 1) or not at all (*contig = 0). */
static int64_t tail_run(int r, const int64_t *od, const int64_t *st, int *contig) {
  int64_t cs[ECG_MAX_RANK];
  lw_strides(r, od, cs);
  int64_t best = 1;
  *contig = 0;
  for (int mode = 0; mode < 2; mode++) { /* 0: constant over the tail, 1: contiguous */
    int64_t run = 1;
    for (int d = r - 1; d >= 0; d--) {
      if (od[d] != 1 && st[d] != (mode ? cs[d] : 0)) break;
      run *= od[d];
    }
    if (run > best || (run == best && mode == 1)) { best = run; *contig = mode; }
  }
  return best;
}

int lw_emit_epilogue(ecg_lower *L, int k, const char *fname, ecg_err *e) {
  const ecg_graph *g = L->g;
  const lw_kernel *K = &L->k[k];
  /* the One-to-One members after the dominant node (and after a bias Add its call applies:
   * L->epi_skip, whose output epi_x is then the stored y the rest reads) */
  const int *mem = K->members + K->epi_from + L->epi_skip;
  int nm = K->nm_core - K->epi_from - L->epi_skip;
  int dy = g->nodes[K->dominant]->outputs[0];
  int64_t od[ECG_MAX_RANK];
  int r = lw_dims(L, dy, od);
  ecg_scalar_view *views = calloc((size_t)nm, sizeof *views);
  if (!views) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  enum { MAXO = 4 * LW_MAX_OPS };
  ew_opnd ops[MAXO];
  int nops = 0, rc = ECG_OK;
  int (*opnd_of)[ECG_SCALAR_MAX_OPERANDS] = calloc((size_t)nm, sizeof *opnd_of);
  if (!opnd_of) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int i = 0; i < nm && rc == ECG_OK; i++) {
    const ecg_node *n = g->nodes[mem[i]];
    if ((rc = ecg_scalar_view_of(g, n, &views[i], e)) != ECG_OK) break;
    int y = n->outputs[0];
    if (L->t[y].where != LW_NONE && add_operand(ops, &nops, MAXO, y, r, od, 1) < 0)
      rc = lw_node_err(L, n, e, "fusion block has too many outputs");
    for (int q = 0; q < views[i].n_operands && rc == ECG_OK; q++) {
      opnd_of[i][q] = -1;
      if (views[i].input[q] < 0) continue;
      int tid = n->inputs[views[i].input[q]];
      if (tid == dy || (L->epi_skip && tid == L->epi_x)) { opnd_of[i][q] = -2; continue; }
      int inside = 0;
      for (int j = 0; j < i; j++) if (g->nodes[mem[j]]->outputs[0] == tid) inside = 1;
      if (inside) continue;
      int idx = add_operand(ops, &nops, MAXO, tid, views[i].rank[q], views[i].dims[q], 0);
      if (idx < 0) rc = lw_node_err(L, n, e, "fusion block reads too many tensors");
      opnd_of[i][q] = idx;
    }
  }
  sbuf *c = &L->decls;
  int64_t run = 1;
  for (int d = 0; d < r; d++) run *= od[d];
  if (rc == ECG_OK) {
    sb_printf(c, "/* epilogue of kernel %d: the One-to-One members of a fusion block, on segments of '%s' */\n",
              k, g->tensors[dy]->name);
    if (L->target == LW_TARGET_OPENCL) /* a device function, called per element by the dominant's kernel */
      sb_printf(c, "void %s(__global float *y, size_t n, ECG_CL_ARGS) {\n", fname);
    else
      sb_printf(c, "static void %s(float *y, size_t n, const void *arg) {\n  struct %s_ctx *ctx = (struct %s_ctx *)(uintptr_t)arg;\n",
                fname, L->prefix, L->prefix);
    sb_printf(c, "  size_t off = (size_t)(y - %s);\n", lw_ptr(L, dy));
  }
  for (int i = 0; i < nops && rc == ECG_OK; i++) {
    ew_opnd *o = &ops[i];
    int64_t m = 1, st[ECG_MAX_RANK];
    for (int d = 0; d < o->rank; d++) m *= o->dims[d];
    o->scalar = !o->store && m == 1;
    if (o->scalar && lw_const_literal(L, o->tid, o->lit, sizeof o->lit)) continue;
    const char *ptr = lw_ptr(L, o->tid);
    if (o->scalar) { sb_printf(c, "  const %s s%d = %s%s[0]);\n", lw_vtype(L, o->tid), i, lw_load_open(L, o->tid), ptr); continue; }
    /* a store may share the dominant output's storage (y): no restrict on stores */
    sb_printf(c, "  %s%s%s *%sp%d = %s;\n", lw_gq(L), o->store ? "" : "const ", lw_ctype(L, o->tid), o->store ? "" : "restrict ", i, ptr);
    lw_bcast_strides(r, od, o->rank, o->dims, st);
    int contig;
    int64_t t = o->store ? run : tail_run(r, od, st, &contig);
    if (o->store) contig = 1;
    o->slot = contig; /* reused: 1 = address moves with the element, 0 = constant over the run */
    if (t < run) run = t;
    memcpy(o->dims, st, sizeof st); /* keep the strides for the address formula */
  }
  if (run < 1) run = 1;
  if (rc == ECG_OK) {
    int64_t cs[ECG_MAX_RANK];
    lw_strides(r, od, cs);
    int64_t total = 1;
    for (int d = 0; d < r; d++) total *= od[d];
    if (run >= total) /* every address moves with the element over the whole tensor */
      sb_printf(c, "  while (n) {\n    size_t m = n;\n");
    else
      sb_printf(c, "  while (n) {\n    size_t m = %lld - off %% %lld;\n    if (m > n) m = n;\n", (long long)run, (long long)run);
    for (int i = 0; i < nops; i++) {
      const ew_opnd *o = &ops[i];
      if (o->scalar || o->store) continue;
      sb_printf(c, "    const int64_t a%d = 0", i);
      for (int d = 0; d < r; d++)
        if (o->dims[d] && od[d] != 1) sb_printf(c, " + (int64_t)(off / %lld %% %lld) * %lld", (long long)cs[d], (long long)od[d], (long long)o->dims[d]);
      sb_printf(c, ";\n");
    }
    sbuf body = {0};
    for (int i = 0; i < nm && rc == ECG_OK; i++)
      if (member_stmt(L, &body, g->nodes[mem[i]], &views[i], opnd_of[i], ops, 1) != 0)
        rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (int i = 0; i < nops && rc == ECG_OK; i++) {
      if (!ops[i].store) continue;
      int h = lw_half(L, ops[i].tid);
      sb_printf(&body, "      p%d[off + i] = %sv%d%s;\n", i, h == 1 ? "ecg_f2h(" : h == 2 ? "ecg_f2bf(" : "", ops[i].tid, h ? ")" : "");
    }
    lw_inner_pragma(L, c, 0, "omp simd");
    sb_printf(c, "    for (size_t i = 0; i < m; i++) {\n%s    }\n", body.s ? body.s : "");
    sb_printf(c, "    y += m;\n    off += m;\n    n -= m;\n  }\n}\n\n");
    sb_free(&body);
  }
  free(opnd_of);
  free(views);
  return rc;
}
