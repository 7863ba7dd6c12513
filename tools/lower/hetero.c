/* ecg-lower --target c+opencl: EOP placements executed (issue 14 item 3; Xu et al., "EOP:
 * Efficient Operator Partition for Deep Learning Inference over Edge Servers", VEE '22, §3:
 * an operator split along one dimension, Split -> two parts -> Concat, the CPU and a device
 * computing concurrently).
 *
 * The main lowering is the C target's, unchanged: every kernel without a placement, or
 * whose placement leaves all rows to the CPU, is its C kernel. A kernel whose node carries
 * a placement {axis, cpu_share} giving the device c < E rows of the E of that output axis
 * (the CPU gets rows [0, r), r = round(cpu_share * E), the device [r, E)) becomes:
 *   - two *parts*, each the same kernel on a cut of its shapes: a sub-graph of the kernel's
 *     members whose outputs have rows [lo, hi) of the axis and whose non-constant inputs are
 *     cut to the rows those outputs read (a One-to-One operand along the same axis, a
 *     MatMul's A along its rows, a Gemm's A and C, a Conv's or pooling's X along N or, for
 *     H, the window rows with the halo, the pads the cut leaves in the part's attributes),
 *     weights whole. The part is lowered by the existing emitters, the C ones for the CPU
 *     part and the OpenCL printer for the device part (no emitter is copied: the cut is in
 *     the shapes); its tensors live in scratch (host arena past the static plan; one
 *     device buffer), its weights are the model's (ctx->w, the device copy of weights.bin);
 *   - the device part first, all non-blocking: its inputs written (clEnqueueWriteBufferRect
 *     picks the rows out of the host tensor: the Split and the copy), its kernel enqueued,
 *     its slice of each output read back straight into the host output (the Concat: each
 *     part writes its own rows, no concatenation pass); a clFlush starts it;
 *   - then the CPU part: the cut inputs gathered into scratch (uncut ones read in place),
 *     the C kernel, its output rows copied into the output;
 *   - then clFinish. cpu_share 0 (device only) is the device part alone.
 * Kernels that cannot be cut (row-reduction blocks split, intensive-fusion blocks, a MatMul
 * stored through an absorbed Transpose, other operators, a constant operand varying along the axis, non-float32,
 * an operator the OpenCL printer cannot express) run whole on the CPU, with a note (on
 * stderr, from ecg-lower unless -q) naming the node and the reason; model.json "placements" lists what ran where.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "emit/emit.h"

enum { ALIGN = 64 };
static size_t align_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/** How the inputs of a member are cut (by its emitter, as lw_cl_emitter maps them). */
enum { CUT_NONE = 0, CUT_BCAST, CUT_WINDOW, CUT_MATMUL, CUT_GEMM };

static int cut_kind(const ecg_node *n) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  if (!op) return CUT_NONE;
  if (op->mapping == ECG_MAP_ONE_TO_ONE) return CUT_BCAST;
  static const struct { ecg_emit_fn fn; int kind; } t[] = {
      {emit_conv, CUT_WINDOW}, {emit_pool, CUT_WINDOW}, {emit_matmul, CUT_MATMUL}, {emit_gemm, CUT_GEMM}};
  ecg_emit_fn fn = ecg_emitter(op->id);
  for (size_t i = 0; fn && i < sizeof t / sizeof *t; i++)
    if (t[i].fn == fn) return t[i].kind;
  return CUT_NONE;
}

/** One non-constant input of a part: original tensor, sub-graph tensor, and the rows
 *  [a, b) of its axis the part reads (cut 0: the whole tensor). */
typedef struct het_in {
  int orig, sub, axis, cut;
  int64_t a, b;
} het_in;

enum { HET_MAX_IO = 32 };

/** A part: the sub-graph, its tensors' originals, its inputs and outputs. */
typedef struct het_part {
  ecg_graph *g;
  int *orig;        /**< per sub tensor: the original tensor id */
  size_t *off;      /**< per sub tensor: its offset in the part's scratch (lower_part) */
  het_in in[HET_MAX_IO];
  int n_in;
  int out_sub[HET_MAX_IO], out_orig[HET_MAX_IO];
  int n_out;
} het_part;

static void part_free(het_part *P) {
  ecg_graph_free(P->g);
  free(P->orig);
  free(P->off);
  memset(P, 0, sizeof *P);
}

/* The rows input i of member n reads for output rows [lo, hi) of axis `axis` (n's output 0,
 * rank ro, dims od): 0 whole, 1 cut along *cax to [*a, *b), -1 not cuttable (*why).
 * pads (window ops cut along H): the part's 'pads' attribute, *npads entries. */
static int input_cut(const ecg_lower *L, const ecg_node *n, int i, int axis, int64_t lo, int64_t hi, int *cax, int64_t *a,
                     int64_t *b, int64_t *pads, int *npads, const char **why) {
  const ecg_graph *g = L->g;
  int64_t od[ECG_MAX_RANK], d[ECG_MAX_RANK];
  int ro = ecg_tensor_dims(g->tensors[n->outputs[0]], od), ri = ecg_tensor_dims(g->tensors[n->inputs[i]], d);
  int kind = cut_kind(n), j = -1;
  *a = lo;
  *b = hi;
  switch (kind) {
  case CUT_BCAST: j = axis - (ro - ri); break; /* numpy broadcasting: dims aligned right */
  case CUT_MATMUL: {
    int ra = ecg_tensor_rank(g->tensors[n->inputs[0]]), rb = ecg_tensor_rank(g->tensors[n->inputs[1]]);
    if (ra < 2 || rb < 2) { *why = "a MatMul with a 1-D operand"; return -1; }
    if (axis == ro - 1) { *why = "a MatMul split along N"; return -1; }
    if (axis == ro - 2) { if (i == 1) return 0; j = ri - 2; break; } /* rows of A; B whole */
    j = axis - (ro - ri); /* a batch dim, broadcast */
    break;
  }
  case CUT_GEMM:
    if (axis != 0) { *why = "a Gemm split along N"; return -1; }
    if (i == 0) j = (int)ecg_attr_i(n, "transA", 0) ? 1 : 0;
    else if (i == 1) return 0;
    else j = ri - 2; /* C broadcast to [M, N] */
    break;
  case CUT_WINDOW: {
    ecg_conv_geom gm;
    ecg_err e = {0};
    if (ecg_conv_geom_resolve(g, n, &gm, &e)) { *why = "its window geometry"; return -1; }
    if (i != gm.x) return 0; /* weights, bias: whole */
    if (axis == 0) { j = 0; break; }
    if (axis != 2 || gm.sp != 2) { *why = "a window operator split along an axis other than N or H"; return -1; }
    if (gm.ceil_mode && ecg_attr_i(n, "count_include_pad", 0)) { *why = "ceil_mode pooling counting pads"; return -1; }
    int64_t first = lo * gm.s[0] - gm.pb[0], last = (hi - 1) * gm.s[0] - gm.pb[0] + (gm.k[0] - 1) * gm.d[0];
    *a = first > 0 ? first : 0;
    *b = last + 1 < gm.in[0] ? last + 1 : gm.in[0];
    if (*b <= *a) { *why = "a part that reads only padding"; return -1; }
    *npads = 2 * gm.sp;
    for (int s = 0; s < gm.sp; s++) { pads[s] = gm.pb[s]; pads[gm.sp + s] = gm.pe[s]; }
    pads[0] = *a - first;
    pads[gm.sp] = last + 1 - *b > 0 ? last + 1 - *b : 0;
    *cax = 2;
    return 1;
  }
  default: *why = "this operator (no cut rule)"; return -1;
  }
  if (j < 0 || d[j] == 1) return 0;
  if (d[j] != od[axis]) { *why = "an operand whose extent along the axis is neither the output's nor 1"; return -1; }
  if (g->tensors[n->inputs[i]]->is_const) { *why = "a constant operand that varies along the axis"; return -1; }
  *cax = j;
  return 1;
}

/* The cut of index map p's input (p: a permutation member of K that a core member reads
 * through): the cut that reader's rule asks of p's output, through p's permutation; 0 whole,
 * 1 cut along *cax, -1 (*why). */
static int map_input_cut(const ecg_lower *L, const lw_kernel *K, const ecg_node *p, int axis, int64_t lo, int64_t hi, int *cax,
                         int64_t *a, int64_t *b, const char **why) {
  const ecg_graph *g = L->g;
  for (int m = 0; m < K->nm_core; m++) {
    const ecg_node *n = g->nodes[K->members[m]];
    for (size_t k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] != p->outputs[0]) continue;
      int64_t pads[2 * ECG_MAX_RANK];
      int npads = 0, perm[ECG_MAX_RANK], j = -1;
      int c = input_cut(L, n, (int)k, axis, lo, hi, &j, a, b, pads, &npads, why);
      if (c <= 0) return c;
      if (npads || ecg_perm_attr(p, ecg_tensor_rank(g->tensors[p->inputs[0]]), perm)) { *why = "a cut through an index map"; return -1; }
      *cax = perm[j];
      return 1;
    }
  }
  *why = "an index map writing the kernel's output (a MatMul stored through a Transpose)";
  return -1;
}

/* True when a member of K produces tensor t. */
static int producer_in(const ecg_lower *L, const lw_kernel *K, int t) {
  for (int m = 0; m < K->nm; m++) {
    const ecg_node *n = L->g->nodes[K->members[m]];
    for (size_t o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] == t) return 1;
  }
  return 0;
}

/* The part of kernel K computing output rows [lo, hi) of `axis` (E rows in all; [0, E): the
 * whole kernel, every input whole, for any kernel the device can run): its sub-graph (members
 * copied with their attributes, cut inputs, shapes inferred and checked) into P. ECG_OK,
 * ECG_ERR_INPUT with *why (not cuttable), ECG_ERR_INTERNAL. */
static int build_part(const ecg_lower *L, const lw_kernel *K, int axis, int64_t E, int64_t lo, int64_t hi, het_part *P,
                      const char **why, ecg_err *e) {
  const ecg_graph *g = L->g;
  memset(P, 0, sizeof *P);
  int *map = malloc(sizeof(int) * (g->n_tensors + 1));
  ecg_graph *s = ecg_graph_new();
  P->g = s;
  P->orig = malloc(sizeof(int) * (size_t)(K->nm * 24 + 8));
  if (!map || !s || !P->orig) { free(map); part_free(P); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  for (size_t t = 0; t < g->n_tensors; t++) map[t] = -1;
  s->opset = g->opset;
  int rc = ECG_OK, *members = malloc(sizeof(int) * (size_t)(K->nm + 1));
  if (!members) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  /* the index maps first (a Transpose a MatMul reads through: its producer), then the core */
  for (int q = 0; q < K->nm && !rc; q++) {
    int m = q < K->nm - K->nm_core ? K->nm_core + q : q - (K->nm - K->nm_core);
    const ecg_node *n = g->nodes[K->members[m]];
    int in[64], outs[16], nin = (int)n->n_inputs, nout = (int)n->n_outputs, npads = 0;
    int64_t pads[2 * ECG_MAX_RANK];
    if (nin > 64 || nout > 16) { *why = "too many operands"; rc = ECG_ERR_INPUT; break; }
    for (int i = 0; i < nin && !rc; i++) {
      int t = n->inputs[i];
      in[i] = -1;
      if (t < 0) continue;
      if (map[t] >= 0 && (g->tensors[t]->is_const || producer_in(L, K, t))) { in[i] = map[t]; continue; }
      const ecg_tensor *x = g->tensors[t];
      int cax = -1;
      int64_t a = 0, b = 0, d[ECG_MAX_RANK];
      /* the whole output (the device alone): every input whole, whatever the operator; an
       * index map's input: the cut its reader asks of the map's output, through the map's
       * permutation (output dim j is input dim perm[j]) */
      int c = 0;
      if (lo == 0 && hi == E) c = 0;
      else if (m >= K->nm_core) c = map_input_cut(L, K, n, axis, lo, hi, &cax, &a, &b, why);
      else c = input_cut(L, n, i, axis, lo, hi, &cax, &a, &b, pads, &npads, why);
      if (c < 0) { rc = ECG_ERR_INPUT; break; }
      /* read before by another member: the same rows share its tensor, other rows (a Conv's
       * halo and a residual Add of the same input) get their own */
      int same = -1;
      for (int k = 0; k < P->n_in && same < 0; k++)
        if (P->in[k].orig == t && P->in[k].cut == c && (!c || (P->in[k].axis == cax && P->in[k].a == a && P->in[k].b == b))) same = P->in[k].sub;
      if (same >= 0) { in[i] = same; continue; }
      char nm[300];
      if (map[t] < 0) snprintf(nm, sizeof nm, "%s", x->name);
      else snprintf(nm, sizeof nm, "%s@%d", x->name, P->n_in); /* a second cut of the same tensor */
      int r = ecg_tensor_dims(x, d);
      if (c) d[cax] = b - a;
      int id = ecg_add_tensor(s, nm, x->dtype, r, d);
      if (id < 0) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      P->orig[id] = t;
      map[t] = in[i] = id;
      if (x->is_const) {
        s->tensors[id]->is_const = true;
        if (ecg_tensor_set_data(s->tensors[id], x->data.data, x->data.len)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
        continue;
      }
      if (P->n_in == HET_MAX_IO) { *why = "too many operands"; rc = ECG_ERR_INPUT; break; }
      P->in[P->n_in++] = (het_in){.orig = t, .sub = id, .axis = c ? cax : -1, .cut = c, .a = a, .b = b};
    }
    for (int o = 0; o < nout && !rc; o++) {
      int t = n->outputs[o];
      outs[o] = -1;
      if (t < 0) continue;
      outs[o] = ecg_add_tensor(s, g->tensors[t]->name, g->tensors[t]->dtype, -1, NULL);
      if (outs[o] < 0) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      P->orig[outs[o]] = t;
      map[t] = outs[o];
    }
    int k = rc ? -1 : ecg_add_node(s, n->name, n->op_type, n->domain, n->opset, nin, in, nout, outs);
    if (!rc && (k < 0 || ecg_node_copy_attrs(s->nodes[k], n))) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    if (!rc && npads && (ecg_attr_set_ints(s->nodes[k], "pads", npads, pads) || ecg_attr_set_s(s->nodes[k], "auto_pad", "NOTSET")))
      rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    if (!rc) members[m] = k;
  }
  /* graph inputs: the non-constant inputs; outputs: what the kernel stores for others */
  if (!rc) {
    s->inputs = malloc(sizeof(int32_t) * (size_t)(P->n_in + 1));
    s->outputs = malloc(sizeof(int32_t) * (size_t)(K->nm * 16 + 1));
    if (!s->inputs || !s->outputs) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  for (int i = 0; !rc && i < P->n_in; i++) s->inputs[s->n_inputs++] = P->in[i].sub;
  for (int m = 0; m < K->nm && !rc; m++) {
    const ecg_node *n = g->nodes[K->members[m]];
    for (size_t o = 0; o < n->n_outputs && !rc; o++) {
      int t = n->outputs[o];
      if (t < 0 || L->t[t].where == LW_NONE || !lw_tensor_used_outside(L, t, K->members, K->nm)) continue;
      if (P->n_out == HET_MAX_IO) { *why = "too many outputs"; rc = ECG_ERR_INPUT; break; }
      s->outputs[s->n_outputs++] = map[t];
      P->out_sub[P->n_out] = map[t];
      P->out_orig[P->n_out++] = t;
    }
  }
  if (!rc && K->nm > 1) {
    int seed = -1;
    for (int m = 0; m < K->nm; m++) if (K->members[m] == K->dominant) seed = members[m];
    if (ecg_block_add(s, members, K->nm, seed, e) < 0) rc = ECG_ERR_INTERNAL;
  }
  if (!rc) rc = ecg_infer_shapes(s, e);
  /* every output the part stores has the original's dims with hi - lo rows */
  for (int o = 0; !rc && o < P->n_out; o++) {
    int64_t want[ECG_MAX_RANK], got[ECG_MAX_RANK];
    int rw = ecg_tensor_dims(g->tensors[P->out_orig[o]], want), rg = ecg_tensor_dims(s->tensors[P->out_sub[o]], got);
    if (rw <= axis || want[axis] != E) { *why = "a kernel output of another shape than the placed node's"; rc = ECG_ERR_INPUT; break; }
    want[axis] = hi - lo;
    if (rg != rw || memcmp(want, got, sizeof(int64_t) * (size_t)rw)) { *why = "a cut whose inferred shape differs"; rc = ECG_ERR_INPUT; }
  }
  if (!rc) rc = ecg_validate(s, e);
  free(map);
  free(members);
  if (rc) part_free(P);
  return rc;
}

/* Lower part P as one kernel for target tgt (the C emitters, or the OpenCL printer) into
 * *code and *decls: constants read from the model's weights, uncut inputs read in place
 * (C; the device gets every input written), the rest at sequential offsets from `base`
 * (host arena or the device buffer); *bytes gets the scratch used, *work the OpenCL
 * index space. Shares L's counters, packed slots and blob. ECG_OK, ECG_ERR_INPUT (the
 * emitter refused: e names the node), ECG_ERR_INTERNAL. */
static int lower_part(ecg_lower *L, het_part *P, lw_target tgt, const char *sym, size_t base, size_t *bytes, int64_t *work,
                      sbuf *code, sbuf *decls, ecg_err *e) {
  const ecg_graph *s = P->g;
  ecg_lower S = {0};
  S.g = s;
  S.prefix = L->prefix;
  S.arch = L->arch;
  S.plan = L->plan;
  S.sparse = LW_SPARSE_DENSE;
  S.target = tgt;
  S.sym = sym;
  S.n_tmp = L->n_tmp;
  S.n_packed = L->n_packed;
  S.pk_dyn = L->pk_dyn;
  S.weights_bytes = L->weights_bytes;
  S.blob = L->blob;
  S.blob_start = L->blob_start;
  S.blob_len = L->blob_len;
  S.blob_cap = L->blob_cap;
  int rc = ECG_OK, *order = malloc(sizeof(int) * (s->n_nodes + 1));
  S.t = calloc(s->n_tensors + 1, sizeof *S.t);
  S.cl_work = calloc(2, sizeof *S.cl_work);
  if (!order || !S.t || !S.cl_work) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t t = 0; !rc && t < s->n_tensors; t++) {
    const lw_tensor *o = &L->t[P->orig[t]];
    lw_tensor *x = &S.t[t];
    x->alias_of = -1;
    x->bytes = (size_t)ecg_tensor_numel(s->tensors[t]) * ecg_dtype_size(s->tensors[t]->dtype);
    if (s->tensors[t]->is_const) { x->where = LW_CONST; x->offset = o->offset; continue; }
    x->where = LW_ARENA;
    for (int i = 0; i < P->n_in && tgt == LW_TARGET_C; i++)
      if (P->in[i].sub == (int)t && !P->in[i].cut) { *x = *o; x->alias_of = -1; }
  }
  if (!rc) rc = ecg_topo_order(s, order, e);
  if (!rc) rc = lw_form_kernels(&S, order, e);
  if (!rc && S.nk != 1) rc = ecg_errf(e, ECG_ERR_INPUT, "the part is %d kernels, not one", S.nk);
  if (!rc) lw_kernel_storage(&S);
  size_t off = base;
  for (size_t t = 0; !rc && t < s->n_tensors; t++) {
    lw_tensor *x = &S.t[t];
    int in_place = x->where != LW_ARENA || x->alias_of >= 0;
    for (int i = 0; i < P->n_in && !in_place && tgt == LW_TARGET_C; i++) in_place = P->in[i].sub == (int)t && !P->in[i].cut;
    if (in_place) continue;
    x->offset = off;
    off += align_up(x->bytes ? x->bytes : 1);
  }
  for (size_t t = 0; !rc && t < s->n_tensors; t++)
    if (S.t[t].alias_of >= 0) {
      int r = (int)t;
      while (S.t[r].alias_of >= 0) r = S.t[r].alias_of;
      S.t[t].where = S.t[r].where;
      S.t[t].offset = S.t[r].offset;
      S.t[t].io_index = S.t[r].io_index;
    }
  *bytes = off - base;
  if (!rc && !(P->off = calloc(s->n_tensors + 1, sizeof *P->off))) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t t = 0; !rc && t < s->n_tensors; t++) P->off[t] = S.t[t].offset;
  if (!rc) rc = lw_emit_kernel(&S, 0, e);
  S.cur = NULL;
  if (!rc && (S.code.oom || S.decls.oom || S.init.oom)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (!rc) {
    sb_printf(code, "%s", S.code.s ? S.code.s : "");
    sb_printf(decls, "%s", S.decls.s ? S.decls.s : "");
    sb_printf(&L->init, "%s", S.init.s ? S.init.s : "");
    sb_printf(&L->scratch_expr, "%s", S.scratch_expr.s ? S.scratch_expr.s : "");
    sb_printf(&L->pk_sizes, "%s", S.pk_sizes.s ? S.pk_sizes.s : ""); /* its packed slots' bytes (lw_packed_slot) */
    L->n_tmp = S.n_tmp;
    L->n_packed = S.n_packed;
    *work = S.cl_work[0];
  }
  /* the blob may have grown (or moved) either way; weights_bytes with it */
  L->blob = S.blob;
  L->blob_start = S.blob_start;
  L->blob_len = S.blob_len;
  L->blob_cap = S.blob_cap;
  L->weights_bytes = S.weights_bytes;
  free(order);
  free(S.t);
  free(S.cl_work);
  for (int i = 0; i < S.nk; i++) free(S.k[i].members);
  free(S.k);
  free(S.node_kernel);
  free(S.sched_left);
  free(S.sched_acc);
  sb_free(&S.code);
  sb_free(&S.decls);
  sb_free(&S.init);
  sb_free(&S.scratch_expr);
  sb_free(&S.pk_sizes);
  return rc;
}

/* Tensor id's dims viewed as [outer, E, inner] at axis: *outer, *E, *inner (elements). */
static void view3(const ecg_graph *g, int id, int axis, int64_t *outer, int64_t *E, int64_t *inner) {
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(g->tensors[id], d);
  *outer = *inner = 1;
  if (axis < 0) { *E = 1; for (int i = 0; i < r; i++) *inner *= d[i]; return; } /* whole: one row */
  for (int i = 0; i < axis; i++) *outer *= d[i];
  for (int i = axis + 1; i < r; i++) *inner *= d[i];
  *E = d[axis];
}

/* The placement of kernel K: its dominant node's; in a block without a placed dominant
 * (One-to-One and row-reduction blocks), the member's with the largest CPU share. EOP plans
 * nodes one by one but a fusion block runs as one kernel: the device gets the block only
 * when every placed member gives it rows (bert_tiny's LayerNorm blocks, whose first
 * ReduceMean alone was planned on the device, ran 30x slower there). */
static const Ecg__Placement *kernel_placement(const ecg_lower *L, const lw_kernel *K) {
  const Ecg__Placement *best = NULL;
  for (size_t i = 0; i < L->g->n_placements; i++) {
    const Ecg__Placement *pl = L->g->placements[i];
    for (int m = 0; m < K->nm; m++) {
      if (pl->node != K->members[m]) continue;
      if (pl->node == K->dominant) return pl;
      if (!best || pl->cpu_share > best->cpu_share) best = pl;
    }
  }
  return best;
}

static void json_note(ecg_lower *L, const ecg_node *n, int axis, int64_t E, int64_t cpu_rows, double share, const char *side,
                      const char *why) {
  char lb[256];
  sb_printf(&L->het_json, "%s{\"node\": ", L->het_json.len ? ", " : "");
  lw_json_str(&L->het_json, ecg_node_label(L->g, n, lb, sizeof lb));
  sb_printf(&L->het_json, ", \"op\": ");
  lw_json_str(&L->het_json, n->op_type);
  sb_printf(&L->het_json, ", \"axis\": %d, \"extent\": %lld, \"cpu_share\": %.4g, \"cpu_rows\": %lld, \"ran\": \"%s\"", axis,
            (long long)E, share, (long long)cpu_rows, side);
  if (why) sb_printf(&L->het_json, ", \"why\": \"%s\"", why);
  sb_printf(&L->het_json, "}");
}

int lw_het_kernel(ecg_lower *L, int p, int *done, ecg_err *e) {
  *done = 0;
  const lw_kernel *K = &L->k[p];
  const Ecg__Placement *pl = kernel_placement(L, K);
  if (!pl) return ECG_OK;
  const ecg_graph *g = L->g;
  const ecg_node *n = g->nodes[pl->node];
  char lb[256];
  ecg_node_label(g, n, lb, sizeof lb);
  int64_t od[ECG_MAX_RANK];
  int r = ecg_tensor_dims(g->tensors[n->outputs[0]], od), axis = pl->axis;
  int64_t E = axis < r ? od[axis] : 1, rows = llround(pl->cpu_share * (double)E);
  if (rows > E) rows = E;
  if (rows < 0) rows = 0;
  if (rows == E) { json_note(L, n, axis, E, rows, pl->cpu_share, "cpu", NULL); return ECG_OK; }
  const char *why = K->kind == LW_K_ROW && rows > 0 ? "a row-reduction block split (its kernel has no cut form)"
                    : lw_kind_intensive(K->kind) ? "an intensive-fusion block (C only)"
                    : NULL;
  for (int m = 0; m < K->nm && !why; m++) {
    const ecg_node *x = g->nodes[K->members[m]];
    for (size_t k = 0; k < x->n_inputs + x->n_outputs && !why; k++) {
      int t = k < x->n_inputs ? x->inputs[k] : x->outputs[k - x->n_inputs];
      if (t >= 0 && !g->tensors[t]->is_const && g->tensors[t]->dtype != ECG_FLOAT) why = "a tensor that is not float32";
    }
  }
  /* the device part, then the CPU part; each lowered before anything is printed */
  het_part dev = {0}, cpu = {0};
  sbuf dcode = {0}, ddecl = {0}, ccode = {0}, cdecl = {0}, f = {0};
  ecg_err pe = {0};
  size_t dbytes = 0, cbytes = 0;
  int64_t work = 0, cwork = 0;
  char dsym[32], csym[32];
  snprintf(dsym, sizeof dsym, "p%dd_", p);
  snprintf(csym, sizeof csym, "p%dc_", p);
  int rc = ECG_OK;
  if (!why) rc = build_part(L, K, axis, E, rows, E, &dev, &why, &pe);
  if (!rc && !why) {
    rc = lower_part(L, &dev, LW_TARGET_OPENCL, dsym, 0, &dbytes, &work, &dcode, &ddecl, &pe);
    if (rc == ECG_ERR_INPUT) why = "the OpenCL printer refused it";
  }
  if (!rc && !why && rows > 0) {
    rc = build_part(L, K, axis, E, 0, rows, &cpu, &why, &pe);
    if (!rc && !why) {
      rc = lower_part(L, &cpu, LW_TARGET_C, csym, L->het_base, &cbytes, &cwork, &ccode, &cdecl, &pe);
      if (rc == ECG_ERR_INPUT) why = "the C emitters refused the CPU part";
    }
  }
  if (rc == ECG_ERR_INPUT) { /* not cuttable: said below, the kernel stays C */
    if (!why) why = "its cut shapes are refused";
    rc = ECG_OK;
  } else if (rc) ecg_errf(e, rc, "%s", pe.msg);
  if (rc || why) {
    if (!rc) {
      sb_printf(&L->het_notes, "node '%s' (%s): placed with cpu_share %.2f, but it runs whole on the CPU: %s%s%s\n", lb,
                n->op_type, pl->cpu_share, why, pe.msg[0] ? ": " : "", pe.msg);
      json_note(L, n, axis, E, E, pl->cpu_share, "cpu", why);
    }
    part_free(&dev); part_free(&cpu);
    sb_free(&dcode); sb_free(&ddecl); sb_free(&ccode); sb_free(&cdecl);
    return rc;
  }
  /* model.cl: the device part's kernel */
  int kid = L->n_clk++;
  sb_printf(&L->cl_decls, "%s", ddecl.s ? ddecl.s : "");
  sb_printf(&L->cl_code, "/* kernel %d, device part: '%s' (%s) rows [%lld, %lld) of axis %d */\n__kernel void %sk(ECG_CL_ARGS) {\n%s}\n\n",
            p, lb, n->op_type, (long long)rows, (long long)E, axis, dsym, dcode.s ? dcode.s : "");
  sb_printf(&L->cl_names, "  \"%sk\",\n", dsym);
  if (dbytes > L->het_dev) L->het_dev = dbytes;
  if (cbytes > L->het_host) L->het_host = cbytes;
  sb_printf(&L->decls, "%s", cdecl.s ? cdecl.s : "");
  /* k<p>: the device part enqueued, the CPU part, the wait */
  sb_printf(&f, "/* kernel %d: '%s' (%s) split along axis %d: CPU rows [0, %lld), device rows [%lld, %lld) (EOP placement) */\n",
            p, lb, n->op_type, axis, (long long)rows, (long long)rows, (long long)E);
  sb_printf(&f, "static void k%d(struct %s_ctx *ctx) {\n  cl_int err = CL_SUCCESS;\n", p, L->prefix);
  for (int i = 0; i < dev.n_in; i++) { /* Split + copy: the rows the device part reads */
    const het_in *x = &dev.in[i];
    int64_t outer, Ex, inner;
    view3(g, x->orig, x->axis, &outer, &Ex, &inner);
    int64_t a = x->cut ? x->a : 0, b = x->cut ? x->b : Ex;
    size_t es = ecg_dtype_size(g->tensors[x->orig]->dtype), rowb = (size_t)((b - a) * inner) * es, pitch = (size_t)(Ex * inner) * es;
    sb_printf(&f, "  { const size_t bo[3] = {%zu, 0, 0}, ho[3] = {0, 0, 0}, rg[3] = {%zu, %lld, 1};\n"
                  "    err |= clEnqueueWriteBufferRect(ctx->q, ctx->dA, CL_FALSE, bo, ho, rg, %zu, 0, %zu, 0, (const char *)%s + %zu, 0, NULL, NULL); }\n",
              dev.off[x->sub], rowb, (long long)outer, rowb, pitch, lw_ptr(L, x->orig), (size_t)(a * inner) * es);
  }
  sb_printf(&f, "  if (err == CL_SUCCESS && %lld) { size_t gsz = %lld < ctx->cl_cap ? %lld : ctx->cl_cap;\n"
                "    err |= clEnqueueNDRangeKernel(ctx->q, ctx->ck[%d], 1, NULL, &gsz, NULL, 0, NULL, NULL); }\n",
            (long long)work, (long long)work, (long long)work, kid);
  for (int o = 0; o < dev.n_out; o++) { /* Concat: the device's rows read back into the output */
    int t = dev.out_orig[o];
    int64_t outer, Ex, inner;
    view3(g, t, axis, &outer, &Ex, &inner);
    size_t es = ecg_dtype_size(g->tensors[t]->dtype), rowb = (size_t)((E - rows) * inner) * es, pitch = (size_t)(Ex * inner) * es;
    sb_printf(&f, "  { const size_t bo[3] = {%zu, 0, 0}, ho[3] = {0, 0, 0}, rg[3] = {%zu, %lld, 1};\n"
                  "    if (err == CL_SUCCESS) err = clEnqueueReadBufferRect(ctx->q, ctx->dA, CL_FALSE, bo, ho, rg, %zu, 0, %zu, 0, (char *)%s + %zu, 0, NULL, NULL); }\n",
              dev.off[dev.out_sub[o]], rowb, (long long)outer, rowb, pitch, lw_ptr(L, t), (size_t)(rows * inner) * es);
  }
  sb_printf(&f, "  clFlush(ctx->q);\n");
  if (rows > 0) {
    for (int i = 0; i < cpu.n_in; i++) { /* the CPU part's cut inputs gathered into scratch */
      const het_in *x = &cpu.in[i];
      if (!x->cut) continue;
      int64_t outer, Ex, inner;
      view3(g, x->orig, x->axis, &outer, &Ex, &inner);
      size_t es = ecg_dtype_size(g->tensors[x->orig]->dtype), rowb = (size_t)((x->b - x->a) * inner) * es, pitch = (size_t)(Ex * inner) * es;
      sb_printf(&f, "  het_copy_(ctx->arena + %zu, %zu, (const char *)%s + %zu, %zu, %zu, %lld);\n", cpu.off[x->sub], rowb, lw_ptr(L, x->orig),
                (size_t)(x->a * inner) * es, pitch, rowb, (long long)outer);
    }
    sb_printf(&f, "%s", ccode.s ? ccode.s : "");
    for (int o = 0; o < cpu.n_out; o++) {
      int t = cpu.out_orig[o];
      int64_t outer, Ex, inner;
      view3(g, t, axis, &outer, &Ex, &inner);
      size_t es = ecg_dtype_size(g->tensors[t]->dtype), rowb = (size_t)(rows * inner) * es, pitch = (size_t)(Ex * inner) * es;
      sb_printf(&f, "  het_copy_((char *)%s + 0, %zu, ctx->arena + %zu, %zu, %zu, %lld);\n", lw_ptr(L, t), pitch, cpu.off[cpu.out_sub[o]], rowb, rowb, (long long)outer);
    }
  }
  sb_printf(&f, "  if (clFinish(ctx->q) != CL_SUCCESS || err != CL_SUCCESS) ctx->cl_err = 1;\n  (void)ctx;\n}\n\n");
  json_note(L, n, axis, E, rows, pl->cpu_share, rows ? "split" : "device", NULL);
  sb_printf(&L->code, "%s", f.s ? f.s : "");
  if (f.oom) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  *done = 1;
  part_free(&dev); part_free(&cpu);
  sb_free(&dcode); sb_free(&ddecl); sb_free(&ccode); sb_free(&cdecl); sb_free(&f);
  return rc;
}

void lw_het_ctx_fields(const ecg_lower *L, sbuf *b) {
  (void)L;
  sb_printf(b, "  cl_context cx;         /* c+opencl: the device's context, in-order queue, program */\n  cl_command_queue q;\n  cl_program prog;\n"
               "  cl_kernel ck[NCLK + 1]; /* the device parts' kernels */\n  cl_mem dA, dW;         /* device scratch of the parts, weights.bin */\n"
               "  size_t cl_cap;         /* most work-items launched per kernel */\n  int cl_err;            /* a device command failed */\n"
               "  char dev_name[256];\n");
}

void lw_het_create(const ecg_lower *L, sbuf *b) {
  const char *P = L->prefix;
  sb_printf(b, "  { int er = cl_open_(&ctx->cx, &ctx->q, &ctx->prog, ctx->dev_name, sizeof ctx->dev_name);\n"
               "    if (er) { %s_destroy(ctx); errno = er; return NULL; } }\n  cl_int err = CL_SUCCESS;\n"
               "  ctx->dW = clCreateBuffer(ctx->cx, CL_MEM_READ_ONLY | (WEIGHTS_BYTES ? CL_MEM_COPY_HOST_PTR : 0), WEIGHTS_BYTES ? WEIGHTS_BYTES : 64, WEIGHTS_BYTES ? ctx->w : NULL, &err);\n"
               "  if (err == CL_SUCCESS) ctx->dA = clCreateBuffer(ctx->cx, CL_MEM_READ_WRITE, DEV_BYTES ? DEV_BYTES : 64, NULL, &err);\n"
               "  for (int i = 0; i < NCLK && err == CL_SUCCESS; i++) {\n    ctx->ck[i] = clCreateKernel(ctx->prog, cl_kernel_names_[i], &err);\n"
               "    if (err == CL_SUCCESS) err = clSetKernelArg(ctx->ck[i], 0, sizeof(cl_mem), &ctx->dA);\n"
               "    if (err == CL_SUCCESS) err = clSetKernelArg(ctx->ck[i], 1, sizeof(cl_mem), &ctx->dW);\n  }\n"
               "  if (err != CL_SUCCESS) { %s_destroy(ctx); errno = EINVAL; return NULL; }\n  ctx->cl_cap = (size_t)1 << 20;\n", P, P);
}

void lw_het_destroy(const ecg_lower *L, sbuf *b) {
  (void)L;
  sb_printf(b, "  for (int i = 0; i < NCLK; i++) if (ctx->ck[i]) clReleaseKernel(ctx->ck[i]);\n"
               "  if (ctx->dA) clReleaseMemObject(ctx->dA);\n  if (ctx->dW) clReleaseMemObject(ctx->dW);\n"
               "  if (ctx->prog) clReleaseProgram(ctx->prog);\n  if (ctx->q) clReleaseCommandQueue(ctx->q);\n  if (ctx->cx) clReleaseContext(ctx->cx);\n");
}
