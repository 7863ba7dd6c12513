/* ecg-rewrite "subst": the sg search graph, TASO-style structural substitution rules and
 * their materialisation onto the ECG (OCGGS §2.1 Def. 1-2; TASO's hand-written and
 * generated rules, digest-ocggs.md §1 "Rules used in the experiments").  subst.h has the
 * data structures.
 *
 * Rules (each: enumerate / check / apply on an sg graph):
 *   conv-merge    two Convs reading the same input with the same geometry (kernel, strides,
 *                 pads, dilations, group 1, constant weights, both or neither biased)
 *                 => one Conv with the weights concatenated on output channels + Split
 *   conv-enlarge  a Conv whose kernel fits inside that of another Conv on the same input
 *                 (same strides, dilation 1, pads differing by the centring) => its
 *                 weights zero-padded to that kernel, pads adjusted (enables conv-merge)
 *   matmul-merge  two MatMuls x@B1, x@B2 with 2-D B of the same rows => x@Concat(B1,B2)
 *                 + Split (a Concat node when a B is not constant: may make a cycle,
 *                 which sg_apply rejects)
 *   split-unary   a Split all of whose outputs feed one attribute-free unary elementwise
 *                 node each, of one operator => that operator before the Split
 *   split-concat  a Concat reading all outputs of a Split in order on the Split's axis
 *                 => the Split's input read directly
 *   concat-ew     Concat(op(a,b), op(c,d)) for a binary elementwise op without
 *                 broadcasting => op(Concat(a,c), Concat(b,d))
 *   ew-concat     the reverse of concat-ew
 * Operators are named by registry id (what each rule rewrites); the elementwise rules ask
 * the registry (ECG_PROP_ELEMWISE) which operators they apply to. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "subst.h"

/* ------------------------------------------------------------ sg graph basics */

static bool grow(sg_graph *g, int nn, int nv) {
  if (nn > g->cap_n) {
    int c = nn * 2 + 16;
    sg_node *p = realloc(g->n, sizeof *p * (size_t)c);
    if (!p) return false;
    g->n = p;
    g->cap_n = c;
  }
  if (nv > g->cap_v) {
    int c = nv * 2 + 16;
    sg_val *p = realloc(g->v, sizeof *p * (size_t)c);
    if (!p) return false;
    g->v = p;
    g->cap_v = c;
  }
  return true;
}

/* A new value of the given shape; -1 on OOM. */
int sg_add_val(sg_graph *g, int rank, const int64_t *dims, int dtype, bool is_const) {
  if (!grow(g, g->nn, g->nv + 1)) return -1;
  sg_val *v = &g->v[g->nv];
  memset(v, 0, sizeof *v);
  v->rank = rank;
  memcpy(v->dim, dims, sizeof *dims * (size_t)rank);
  v->producer = -1;
  v->is_const = is_const;
  v->dtype = dtype;
  v->a = v->b = -1;
  return g->nv++;
}

/* A new live node (attributes copied from proto when given); -1 on OOM. */
int sg_add_node(sg_graph *g, const sg_node *proto, int op, int n_in, const int *in, int n_out, const int *out,
                    int pos, int j) {
  if (!grow(g, g->nn + 1, g->nv)) return -1;
  sg_node *n = &g->n[g->nn];
  if (proto) *n = *proto;
  else memset(n, 0, sizeof *n);
  n->op = op;
  n->n_in = n_in;
  memcpy(n->in, in, sizeof *in * (size_t)n_in);
  n->n_out = n_out;
  memcpy(n->out, out, sizeof *out * (size_t)n_out);
  n->alive = true;
  n->opaque = false;
  n->folded = false;
  n->plain = !proto;
  n->pos = pos;
  n->j = j;
  n->cost = 0;
  n->flops = 0;
  n->src = -1;
  for (int k = 0; k < n_out; k++) g->v[out[k]].producer = g->nn;
  g->n_alive++;
  return g->nn++;
}

void sg_kill(sg_graph *g, int i) {
  if (!g->n[i].alive) return;
  g->n[i].alive = false;
  g->n_alive--;
}

/* Every live reader of value from (and the graph outputs) reads to instead. */
void sg_replace(sg_graph *g, int from, int to) {
  for (int i = 0; i < g->nn; i++)
    if (g->n[i].alive)
      for (int k = 0; k < g->n[i].n_in; k++)
        if (g->n[i].in[k] == from) g->n[i].in[k] = to;
  for (int k = 0; k < g->n_outs; k++)
    if (g->outs[k] == from) g->outs[k] = to;
}

/* Readers of value v: live node inputs plus graph outputs. */
int sg_uses(const sg_graph *g, int v) {
  int c = 0;
  for (int i = 0; i < g->nn; i++)
    if (g->n[i].alive)
      for (int k = 0; k < g->n[i].n_in; k++) c += g->n[i].in[k] == v;
  for (int k = 0; k < g->n_outs; k++) c += g->outs[k] == v;
  return c;
}

bool sg_is_gout(const sg_graph *g, int v) {
  for (int k = 0; k < g->n_outs; k++)
    if (g->outs[k] == v) return true;
  return false;
}

/* The single live reader of v (node index), or -1 when v has not exactly one reader. */
static int sole_reader(const sg_graph *g, int v) {
  if (sg_uses(g, v) != 1) return -1;
  for (int i = 0; i < g->nn; i++)
    if (g->n[i].alive)
      for (int k = 0; k < g->n[i].n_in; k++)
        if (g->n[i].in[k] == v) return i;
  return -1;
}

static bool same_dims(const sg_val *a, const sg_val *b) {
  return a->rank == b->rank && !memcmp(a->dim, b->dim, sizeof *a->dim * (size_t)a->rank);
}

/* Live, rewritable node i of operator op. */
static bool is_op(const sg_graph *g, int i, int op) {
  return i >= 0 && i < g->nn && g->n[i].alive && !g->n[i].opaque && g->n[i].op == op;
}

/* Attribute-free elementwise node with n_in inputs and one float output. */
static bool is_ew(const sg_graph *g, int i, int n_in) {
  if (i < 0 || !g->n[i].alive || g->n[i].opaque || !g->n[i].plain) return false;
  const ecg_op_info *op = ecg_op_get((ecg_op_id)g->n[i].op);
  return (op->props & ECG_PROP_ELEMWISE) && g->n[i].n_in == n_in && g->n[i].n_out == 1;
}

/* ------------------------------------------------------------ conv-merge */

static bool conv_ok(const sg_graph *g, int i) {
  if (!is_op(g, i, ECG_OP_Conv)) return false;
  const sg_node *n = &g->n[i];
  return n->group == 1 && n->in[1] >= 0 && g->v[n->in[1]].is_const && g->v[n->in[1]].rank == 4 &&
         (n->n_in < 3 || n->in[2] < 0 || g->v[n->in[2]].is_const) && g->v[n->out[0]].rank == 4;
}

static bool has_bias(const sg_node *n) { return n->n_in >= 3 && n->in[2] >= 0; }

static bool merge_check(const sg_graph *g, const sg_sub *s) {
  int a = s->node[0], b = s->node[1];
  if (a == b || !conv_ok(g, a) || !conv_ok(g, b)) return false;
  const sg_node *A = &g->n[a], *B = &g->n[b];
  return A->in[0] == B->in[0] && !memcmp(A->k, B->k, sizeof A->k) && !memcmp(A->s, B->s, sizeof A->s) &&
         !memcmp(A->d, B->d, sizeof A->d) && !memcmp(A->pad, B->pad, sizeof A->pad) && has_bias(A) == has_bias(B);
}

/* Pairs (a, b) of nodes with op reading the same input 0, a < b, one of them >= from. */
static void pairs(const sg_graph *g, int from, int op, bool ordered, bool (*check)(const sg_graph *, const sg_sub *),
                  void (*emit)(void *, const sg_sub *), void *ctx) {
  for (int i = from; i < g->nn; i++) {
    if (!is_op(g, i, op)) continue;
    for (int j = 0; j < g->nn; j++) {
      if (j == i || !is_op(g, j, op) || g->n[j].in[0] != g->n[i].in[0]) continue;
      if (j >= from && j < i && !ordered) continue; /* that pair came with i = j */
      for (int o = 0; o < (ordered ? 2 : 1); o++) {
        if (ordered && j >= from && o == 1) continue; /* (j, i) is emitted when i' = j */
        sg_sub s = {.n = 2};
        s.node[0] = ordered ? (o ? j : i) : (i < j ? i : j);
        s.node[1] = ordered ? (o ? i : j) : (i < j ? j : i);
        if (check(g, &s)) emit(ctx, &s);
      }
    }
  }
}

static void merge_enum(const sg_graph *g, int from, void (*emit)(void *, const sg_sub *), void *ctx) {
  pairs(g, from, ECG_OP_Conv, false, merge_check, emit, ctx);
}

/* A constant concatenating a and b on axis; -1 on OOM. */
static int concat_const(sg_graph *g, int a, int b, int axis) {
  sg_val va = g->v[a];
  va.dim[axis] += g->v[b].dim[axis];
  int c = sg_add_val(g, va.rank, va.dim, va.dtype, true);
  if (c < 0) return -1;
  g->v[c].recipe = SG_R_CONCAT;
  g->v[c].a = a;
  g->v[c].b = b;
  g->v[c].p[0] = axis;
  return c;
}

/* An int64 [n] constant holding vals; -1 on OOM. */
static int i64_const(sg_graph *g, int n, const int64_t *vals) {
  int64_t d = n;
  int c = sg_add_val(g, 1, &d, ECG_INT64, true);
  if (c < 0) return -1;
  g->v[c].recipe = SG_R_I64;
  memcpy(g->v[c].p, vals, sizeof *vals * (size_t)n);
  return c;
}

/* y (a new value shaped like x with dim axis = size), -1 on OOM. */
static int like(sg_graph *g, int x, int axis, int64_t size) {
  sg_val v = g->v[x];
  if (axis >= 0) v.dim[axis] = size;
  return sg_add_val(g, v.rank, v.dim, v.dtype, false);
}

/* Split y on axis into values shaped like outs[0..n-1] (readers of outs move there); the
 * Split node is labelled (pos, j).  False on OOM. */
static bool split_into(sg_graph *g, int y, int axis, int n, const int *outs, int pos, int j) {
  int64_t sizes[SG_MAX_OUT];
  int nv[SG_MAX_OUT];
  for (int k = 0; k < n; k++) {
    sizes[k] = g->v[outs[k]].dim[axis];
    if ((nv[k] = like(g, outs[k], -1, 0)) < 0) return false;
  }
  int sz = i64_const(g, n, sizes);
  if (sz < 0) return false;
  sg_node proto = {.axis = axis};
  int in[2] = {y, sz};
  int sp = sg_add_node(g, &proto, ECG_OP_Split, 2, in, n, nv, pos, j);
  if (sp < 0) return false;
  g->n[sp].plain = false;
  for (int k = 0; k < n; k++) sg_replace(g, outs[k], nv[k]);
  return true;
}

static bool merge_apply(sg_graph *g, const sg_sub *s, int pos) {
  int a = s->node[0], b = s->node[1];
  sg_node A = g->n[a], B = g->n[b];
  int w = concat_const(g, A.in[1], B.in[1], 0);
  int bias = has_bias(&A) ? concat_const(g, A.in[2], B.in[2], 0) : -1;
  int y = like(g, A.out[0], 1, g->v[A.out[0]].dim[1] + g->v[B.out[0]].dim[1]);
  if (w < 0 || y < 0 || (has_bias(&A) && bias < 0)) return false;
  int in[3] = {A.in[0], w, bias};
  int c = sg_add_node(g, &A, ECG_OP_Conv, has_bias(&A) ? 3 : 2, in, 1, &y, pos, 0);
  if (c < 0) return false;
  g->n[c].flops = A.flops + B.flops;
  int outs[2] = {A.out[0], B.out[0]};
  if (!split_into(g, y, 1, 2, outs, pos, 1)) return false;
  sg_kill(g, a);
  sg_kill(g, b);
  return true;
}

/* ------------------------------------------------------------ conv-enlarge */

static bool enlarge_check(const sg_graph *g, const sg_sub *s) {
  int a = s->node[0], b = s->node[1];
  if (a == b || !conv_ok(g, a) || !conv_ok(g, b)) return false;
  const sg_node *A = &g->n[a], *B = &g->n[b];
  if (A->in[0] != B->in[0] || memcmp(A->s, B->s, sizeof A->s)) return false;
  bool smaller = false;
  for (int k = 0; k < 2; k++) {
    int64_t dk = B->k[k] - A->k[k];
    if (A->d[k] != 1 || B->d[k] != 1 || dk < 0 || dk % 2 || A->pad[k] + dk / 2 != B->pad[k] ||
        A->pad[k + 2] + dk / 2 != B->pad[k + 2])
      return false;
    smaller |= dk > 0;
  }
  return smaller;
}

static void enlarge_enum(const sg_graph *g, int from, void (*emit)(void *, const sg_sub *), void *ctx) {
  pairs(g, from, ECG_OP_Conv, true, enlarge_check, emit, ctx);
}

static bool enlarge_apply(sg_graph *g, const sg_sub *s, int pos) {
  sg_node A = g->n[s->node[0]];
  const sg_node *B = &g->n[s->node[1]];
  sg_val wv = g->v[A.in[1]];
  wv.dim[2] = B->k[0];
  wv.dim[3] = B->k[1];
  int w = sg_add_val(g, 4, wv.dim, wv.dtype, true);
  int y = like(g, A.out[0], -1, 0);
  if (w < 0 || y < 0) return false;
  g->v[w].recipe = SG_R_PAD;
  g->v[w].a = A.in[1];
  g->v[w].p[0] = B->k[0];
  g->v[w].p[1] = B->k[1];
  sg_node proto = A;
  memcpy(proto.k, g->n[s->node[1]].k, sizeof proto.k);
  memcpy(proto.pad, g->n[s->node[1]].pad, sizeof proto.pad);
  int in[3] = {A.in[0], w, has_bias(&A) ? A.in[2] : -1};
  int c = sg_add_node(g, &proto, ECG_OP_Conv, A.n_in, in, 1, &y, pos, 0);
  if (c < 0) return false;
  g->n[c].flops = A.flops * (proto.k[0] * proto.k[1]) / (A.k[0] * A.k[1]);
  sg_replace(g, A.out[0], y);
  sg_kill(g, s->node[0]);
  return true;
}

/* ------------------------------------------------------------ matmul-merge */

static bool mm_check(const sg_graph *g, const sg_sub *s) {
  int a = s->node[0], b = s->node[1];
  if (a == b || !is_op(g, a, ECG_OP_MatMul) || !is_op(g, b, ECG_OP_MatMul)) return false;
  const sg_node *A = &g->n[a], *B = &g->n[b];
  const sg_val *x = &g->v[A->in[0]], *ba = &g->v[A->in[1]], *bb = &g->v[B->in[1]];
  return A->in[0] == B->in[0] && x->rank >= 2 && ba->rank == 2 && bb->rank == 2 && ba->dim[0] == bb->dim[0] &&
         ba->dtype == bb->dtype && A->in[1] != B->in[1];
}

static void mm_enum(const sg_graph *g, int from, void (*emit)(void *, const sg_sub *), void *ctx) {
  pairs(g, from, ECG_OP_MatMul, false, mm_check, emit, ctx);
}

static bool mm_apply(sg_graph *g, const sg_sub *s, int pos) {
  sg_node A = g->n[s->node[0]], B = g->n[s->node[1]];
  int w;
  if (g->v[A.in[1]].is_const && g->v[B.in[1]].is_const) w = concat_const(g, A.in[1], B.in[1], 1);
  else {
    w = like(g, A.in[1], 1, g->v[A.in[1]].dim[1] + g->v[B.in[1]].dim[1]);
    sg_node proto = {.axis = 1};
    int in[2] = {A.in[1], B.in[1]};
    if (w < 0) return false;
    int c = sg_add_node(g, &proto, ECG_OP_Concat, 2, in, 1, &w, pos, 2);
    if (c < 0) return false;
    g->n[c].plain = false;
  }
  int r = g->v[A.out[0]].rank;
  int y = w < 0 ? -1 : like(g, A.out[0], r - 1, g->v[A.out[0]].dim[r - 1] + g->v[B.out[0]].dim[r - 1]);
  if (y < 0) return false;
  int in[2] = {A.in[0], w};
  int m = sg_add_node(g, NULL, ECG_OP_MatMul, 2, in, 1, &y, pos, 0);
  if (m < 0) return false;
  g->n[m].flops = A.flops + B.flops;
  int outs[2] = {A.out[0], B.out[0]};
  if (!split_into(g, y, r - 1, 2, outs, pos, 1)) return false;
  sg_kill(g, s->node[0]);
  sg_kill(g, s->node[1]);
  return true;
}

/* ------------------------------------------------------------ split-unary */

/* Fill s with (Split, U_0..U_m-1) for split node i; false when it does not match. */
static bool su_match(const sg_graph *g, int i, sg_sub *s) {
  if (!is_op(g, i, ECG_OP_Split)) return false;
  const sg_node *S = &g->n[i];
  if (S->n_out < 2 || S->n_out > 5) return false;
  s->n = 1 + S->n_out;
  s->node[0] = i;
  for (int k = 0; k < S->n_out; k++) {
    int u = S->out[k] < 0 || sg_is_gout(g, S->out[k]) ? -1 : sole_reader(g, S->out[k]);
    if (u < 0 || !is_ew(g, u, 1)) return false;
    if (k > 0 && g->n[u].op != g->n[s->node[1]].op) return false;
    s->node[1 + k] = u;
  }
  return true;
}

static bool su_check(const sg_graph *g, const sg_sub *s) {
  sg_sub t = {0};
  return su_match(g, s->node[0], &t) && t.n == s->n && !memcmp(t.node, s->node, sizeof *t.node * (size_t)t.n);
}

static bool touches(const sg_sub *s, int from) {
  for (int k = 0; k < s->n; k++)
    if (s->node[k] >= from) return true;
  return false;
}

static void su_enum(const sg_graph *g, int from, void (*emit)(void *, const sg_sub *), void *ctx) {
  for (int i = 0; i < g->nn; i++) {
    sg_sub s = {0};
    if (su_match(g, i, &s) && touches(&s, from)) emit(ctx, &s);
  }
}

static bool su_apply(sg_graph *g, const sg_sub *s, int pos) {
  sg_node S = g->n[s->node[0]];
  int m = S.n_out, outs[SG_MAX_OUT];
  int64_t flops = 0;
  for (int k = 0; k < m; k++) {
    outs[k] = g->n[s->node[1 + k]].out[0];
    flops += g->n[s->node[1 + k]].flops;
  }
  int z = like(g, S.in[0], -1, 0);
  if (z < 0) return false;
  int u = sg_add_node(g, NULL, g->n[s->node[1]].op, 1, &S.in[0], 1, &z, pos, 0);
  if (u < 0) return false;
  g->n[u].flops = flops;
  if (!split_into(g, z, S.axis, m, outs, pos, 1)) return false;
  for (int k = 0; k < s->n; k++) sg_kill(g, s->node[k]);
  return true;
}

/* ------------------------------------------------------------ split-concat */

/* The first run of c's inputs that are all of a Split's outputs in order (same axis):
 * *at = its start, returns the Split node, or -1. */
static int sc_run(const sg_graph *g, int c, int *at) {
  const sg_node *C = &g->n[c];
  for (int i = 0; i < C->n_in; i++) {
    int p = C->in[i] >= 0 ? g->v[C->in[i]].producer : -1;
    if (!is_op(g, p, ECG_OP_Split) || g->n[p].out[0] != C->in[i] || g->n[p].axis != C->axis) continue;
    const sg_node *S = &g->n[p];
    if (i + S->n_out > C->n_in) continue;
    bool all = true;
    for (int k = 0; k < S->n_out && all; k++) all = C->in[i + k] == S->out[k];
    if (all) { *at = i; return p; }
  }
  return -1;
}

static bool sc_check(const sg_graph *g, const sg_sub *s) {
  int at;
  return is_op(g, s->node[0], ECG_OP_Concat) && sc_run(g, s->node[0], &at) == s->node[1];
}

static void sc_enum(const sg_graph *g, int from, void (*emit)(void *, const sg_sub *), void *ctx) {
  for (int i = 0; i < g->nn; i++) {
    int at;
    sg_sub s = {.n = 2, .node = {i}};
    if (!is_op(g, i, ECG_OP_Concat) || (s.node[1] = sc_run(g, i, &at)) < 0 || !touches(&s, from)) continue;
    emit(ctx, &s);
  }
}

/* Kill nodes none of whose outputs is read, repeatedly (a Split left without readers). */
static void dce(sg_graph *g) {
  for (bool again = true; again;) {
    again = false;
    for (int i = 0; i < g->nn; i++) {
      if (!g->n[i].alive) continue;
      bool used = false;
      for (int k = 0; k < g->n[i].n_out && !used; k++) used = g->n[i].out[k] >= 0 && sg_uses(g, g->n[i].out[k]) > 0;
      if (!used) { sg_kill(g, i); again = true; }
    }
  }
}

static bool sc_apply(sg_graph *g, const sg_sub *s, int pos) {
  sg_node C = g->n[s->node[0]];
  int at, sp = sc_run(g, s->node[0], &at);
  int in[SG_MAX_IN], n = 0;
  for (int i = 0; i < C.n_in; i++) {
    if (i == at) in[n++] = g->n[sp].in[0];
    if (i < at || i >= at + g->n[sp].n_out) in[n++] = C.in[i];
  }
  if (n == 1 && !sg_is_gout(g, C.out[0])) sg_replace(g, C.out[0], in[0]);
  else {
    int y = like(g, C.out[0], -1, 0);
    int c = y < 0 ? -1 : sg_add_node(g, &C, ECG_OP_Concat, n, in, 1, &y, pos, 0);
    if (c < 0) return false;
    sg_replace(g, C.out[0], y);
  }
  sg_kill(g, s->node[0]);
  dce(g);
  return true;
}

/* ------------------------------------------------------------ concat-ew / ew-concat */

/* op node i without broadcasting: both inputs shaped like its output. */
static bool ew_nobcast(const sg_graph *g, int i) {
  const sg_node *n = &g->n[i];
  return is_ew(g, i, 2) && n->in[0] >= 0 && n->in[1] >= 0 && same_dims(&g->v[n->in[0]], &g->v[n->out[0]]) &&
         same_dims(&g->v[n->in[1]], &g->v[n->out[0]]) && g->v[n->out[0]].dtype == ECG_FLOAT;
}

/* Concat c of two inputs, each written by a broadcast-free op of one operator, read once. */
static bool ce_check(const sg_graph *g, const sg_sub *s) {
  int c = s->node[0];
  if (!is_op(g, c, ECG_OP_Concat) || g->n[c].n_in != 2) return false;
  int p = g->v[g->n[c].in[0]].producer, q = g->v[g->n[c].in[1]].producer;
  return p == s->node[1] && q == s->node[2] && p != q && p >= 0 && q >= 0 && ew_nobcast(g, p) && ew_nobcast(g, q) &&
         g->n[p].op == g->n[q].op && sg_uses(g, g->n[p].out[0]) == 1 && sg_uses(g, g->n[q].out[0]) == 1 &&
         !sg_is_gout(g, g->n[p].out[0]) && !sg_is_gout(g, g->n[q].out[0]);
}

static void ce_enum(const sg_graph *g, int from, void (*emit)(void *, const sg_sub *), void *ctx) {
  for (int i = 0; i < g->nn; i++) {
    if (!is_op(g, i, ECG_OP_Concat) || g->n[i].n_in != 2) continue;
    sg_sub s = {.n = 3, .node = {i, g->v[g->n[i].in[0]].producer, g->v[g->n[i].in[1]].producer}};
    if (touches(&s, from) && ce_check(g, &s)) emit(ctx, &s);
  }
}

/* Concat(a, b) on axis labelled (pos, j) into a new value; -1 on OOM. */
static int concat2(sg_graph *g, int a, int b, int axis, int pos, int j) {
  int y = like(g, a, axis, g->v[a].dim[axis] + g->v[b].dim[axis]);
  sg_node proto = {.axis = axis};
  int in[2] = {a, b};
  int c = y < 0 ? -1 : sg_add_node(g, &proto, ECG_OP_Concat, 2, in, 1, &y, pos, j);
  if (c < 0) return -1;
  g->n[c].plain = false;
  return y;
}

static bool ce_apply(sg_graph *g, const sg_sub *s, int pos) {
  sg_node C = g->n[s->node[0]], P = g->n[s->node[1]], Q = g->n[s->node[2]];
  int l = concat2(g, P.in[0], Q.in[0], C.axis, pos, 0), r = concat2(g, P.in[1], Q.in[1], C.axis, pos, 1);
  int y = like(g, C.out[0], -1, 0);
  if (l < 0 || r < 0 || y < 0) return false;
  int in[2] = {l, r};
  int o = sg_add_node(g, NULL, P.op, 2, in, 1, &y, pos, 2);
  if (o < 0) return false;
  g->n[o].flops = P.flops + Q.flops;
  sg_replace(g, C.out[0], y);
  for (int k = 0; k < 3; k++) sg_kill(g, s->node[k]);
  return true;
}

/* op(Concat(a,c), Concat(b,d)): both Concats of two inputs on one axis with the same
 * sizes, read only by op. */
static bool ec_check(const sg_graph *g, const sg_sub *s) {
  int o = s->node[0];
  if (!ew_nobcast(g, o)) return false;
  int l = g->v[g->n[o].in[0]].producer, r = g->v[g->n[o].in[1]].producer;
  if (l != s->node[1] || r != s->node[2] || l == r || !is_op(g, l, ECG_OP_Concat) || !is_op(g, r, ECG_OP_Concat))
    return false;
  const sg_node *L = &g->n[l], *R = &g->n[r];
  return L->n_in == 2 && R->n_in == 2 && L->axis == R->axis && same_dims(&g->v[L->in[0]], &g->v[R->in[0]]) &&
         same_dims(&g->v[L->in[1]], &g->v[R->in[1]]) && sg_uses(g, L->out[0]) == 1 && sg_uses(g, R->out[0]) == 1 &&
         !sg_is_gout(g, L->out[0]) && !sg_is_gout(g, R->out[0]);
}

static void ec_enum(const sg_graph *g, int from, void (*emit)(void *, const sg_sub *), void *ctx) {
  for (int i = 0; i < g->nn; i++) {
    if (!is_ew(g, i, 2) || g->n[i].in[0] < 0 || g->n[i].in[1] < 0) continue;
    sg_sub s = {.n = 3, .node = {i, g->v[g->n[i].in[0]].producer, g->v[g->n[i].in[1]].producer}};
    if (touches(&s, from) && ec_check(g, &s)) emit(ctx, &s);
  }
}

static bool ec_apply(sg_graph *g, const sg_sub *s, int pos) {
  sg_node O = g->n[s->node[0]], L = g->n[s->node[1]], R = g->n[s->node[2]];
  int outs[2];
  for (int k = 0; k < 2; k++) {
    int in[2] = {L.in[k], R.in[k]};
    int y = like(g, L.in[k], -1, 0);
    int n = y < 0 ? -1 : sg_add_node(g, NULL, O.op, 2, in, 1, &y, pos, k);
    if (n < 0) return false;
    g->n[n].flops = O.flops / 2;
    outs[k] = y;
  }
  int y = concat2(g, outs[0], outs[1], L.axis, pos, 2);
  if (y < 0) return false;
  sg_replace(g, O.out[0], y);
  for (int k = 0; k < 3; k++) sg_kill(g, s->node[k]);
  return true;
}

/* ------------------------------------------------------------ rule table */

static const sg_rule RULES[] = {
    {"conv-merge", "two Convs on one input, same geometry => one Conv + Split", merge_enum, merge_check, merge_apply},
    {"conv-enlarge", "a Conv's kernel zero-padded to another's on the same input", enlarge_enum, enlarge_check,
     enlarge_apply},
    {"matmul-merge", "x@B1, x@B2 => x@Concat(B1,B2) + Split", mm_enum, mm_check, mm_apply},
    {"split-unary", "Split -> one unary elementwise op per output => op -> Split", su_enum, su_check, su_apply},
    {"split-concat", "Concat of all of a Split's outputs in order => the Split's input", sc_enum, sc_check, sc_apply},
    {"concat-ew", "Concat(op(a,b), op(c,d)) => op(Concat(a,c), Concat(b,d))", ce_enum, ce_check, ce_apply},
    {"ew-concat", "op(Concat(a,c), Concat(b,d)) => Concat(op(a,b), op(c,d))", ec_enum, ec_check, ec_apply},
};

const sg_rule *sg_rules(int *n) {
  *n = (int)(sizeof RULES / sizeof *RULES);
  return RULES;
}

/* ------------------------------------------------------------ building, copying */

int sg_from_ecg(const ecg_graph *g, sg_graph *s, const sg_cost_db *db, ecg_err *e) {
  memset(s, 0, sizeof *s);
  if (!grow(s, (int)g->n_nodes, (int)g->n_tensors) || !(s->outs = calloc(g->n_outputs + 1, sizeof *s->outs)))
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  s->nv = (int)g->n_tensors;
  for (size_t t = 0; t < g->n_tensors; t++) {
    const ecg_tensor *x = g->tensors[t];
    sg_val *v = &s->v[t];
    memset(v, 0, sizeof *v);
    int64_t d[ECG_MAX_RANK];
    int r = ecg_tensor_static(x) ? ecg_tensor_dims(x, d) : -1;
    v->rank = r >= 0 && r <= SG_MAX_RANK ? r : -1;
    if (v->rank > 0) memcpy(v->dim, d, sizeof *d * (size_t)r);
    v->producer = -1;
    v->is_const = x->is_const;
    v->dtype = x->dtype;
    v->a = v->b = -1;
    if (x->is_const) v->cprops = rw_const_props(x, &v->uniform, &v->num); /* what rule conditions read */
  }
  s->n_outs = (int)g->n_outputs;
  for (size_t k = 0; k < g->n_outputs; k++) s->outs[k] = g->outputs[k];
  s->nn = (int)g->n_nodes;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *x = g->nodes[i];
    sg_node *n = &s->n[i];
    memset(n, 0, sizeof *n);
    n->op = rw_op(x);
    n->alive = true;
    n->plain = x->n_attrs == 0;
    n->pos = 0;
    n->j = (int)i;
    n->src = (int)i;
    n->opset = (int)x->opset;
    const ecg_op_info *op = rw_info(x);
    n->opaque = !op || x->n_inputs > SG_MAX_IN || x->n_outputs > SG_MAX_OUT;
    /* opaque nodes keep their edges for the cycle check and readers (first SG_MAX_*) */
    n->n_in = x->n_inputs < SG_MAX_IN ? (int)x->n_inputs : SG_MAX_IN;
    n->n_out = x->n_outputs < SG_MAX_OUT ? (int)x->n_outputs : SG_MAX_OUT;
    for (int k = 0; k < n->n_in; k++) n->in[k] = x->inputs[k];
    for (int k = 0; k < n->n_out; k++) {
      n->out[k] = x->outputs[k];
      if (x->outputs[k] >= 0) s->v[x->outputs[k]].producer = (int)i;
      if (x->outputs[k] >= 0 && s->v[x->outputs[k]].rank < 0) n->opaque = true;
    }
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0 && s->v[n->in[k]].rank < 0) n->opaque = true;
    n->flops = op ? op->flops(g, x) : 0;
    if (n->flops < 0) n->flops = 0;
    if (!n->opaque && n->op == ECG_OP_Conv) {
      ecg_conv_geom gm;
      ecg_err ignore;
      if (ecg_conv_geom_resolve(g, x, &gm, &ignore) != ECG_OK || gm.sp != 2 || gm.pool || gm.transposed) n->opaque = true;
      else {
        for (int k = 0; k < 2; k++) {
          n->k[k] = gm.k[k];
          n->s[k] = gm.s[k];
          n->d[k] = gm.d[k];
          n->pad[k] = gm.pb[k];
          n->pad[k + 2] = gm.pe[k];
        }
        n->group = gm.group;
      }
    }
    rw_vnode vn;
    if (!n->opaque && ecg_reduction_of((ecg_op_id)n->op) && rw_reduction_info(g, x, &vn)) {
      n->red = true;
      n->keep = vn.red_keep;
      for (int d = 0; d < vn.red_rank; d++) n->red_bits |= vn.red_mask[d] ? 1 << d : 0;
    }
    if (!n->opaque && (n->op == ECG_OP_Split || n->op == ECG_OP_Concat)) {
      int r = n->op == ECG_OP_Split ? s->v[n->in[0]].rank : s->v[n->out[0]].rank;
      int64_t ax = ecg_attr_i(x, "axis", 0);
      n->axis = (int)(ax < 0 ? ax + r : ax);
      if (n->axis < 0 || n->axis >= r) n->opaque = true;
    }
  }
  /* inputs past SG_MAX_IN are not tracked: their producers must never be rewritten */
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = SG_MAX_IN; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k], p = t >= 0 ? s->v[t].producer : -1;
      if (p >= 0) s->n[p].opaque = true;
    }
  s->n_alive = s->nn;
  s->cost = 0;
  for (int i = 0; i < s->nn; i++) s->cost += s->n[i].cost = sg_cost_node(db, s, i);
  return ECG_OK;
}

bool sg_copy(sg_graph *dst, const sg_graph *src) {
  sg_graph d = *src;
  d.cap_n = src->nn + 8;
  d.cap_v = src->nv + 24;
  d.n = malloc(sizeof *d.n * (size_t)d.cap_n);
  d.v = malloc(sizeof *d.v * (size_t)d.cap_v);
  d.outs = malloc(sizeof *d.outs * (size_t)(src->n_outs + 1));
  if (!d.n || !d.v || !d.outs) {
    free(d.n);
    free(d.v);
    free(d.outs);
    return false;
  }
  memcpy(d.n, src->n, sizeof *d.n * (size_t)src->nn);
  memcpy(d.v, src->v, sizeof *d.v * (size_t)src->nv);
  memcpy(d.outs, src->outs, sizeof *d.outs * (size_t)src->n_outs);
  sg_free(dst);
  *dst = d;
  return true;
}

void sg_free(sg_graph *s) {
  free(s->n);
  free(s->v);
  free(s->outs);
  memset(s, 0, sizeof *s);
}

bool sg_acyclic(const sg_graph *s) {
  /* Kahn over live nodes: indegree = inputs written by live nodes; successors in CSR */
  int nn = s->nn, *deg = calloc((size_t)nn + 1, sizeof *deg), *stack = malloc(sizeof *stack * ((size_t)nn + 1)),
      *first = calloc((size_t)nn + 2, sizeof *first), ne = 0;
  for (int i = 0; first && i < nn; i++)
    for (int k = 0; s->n[i].alive && k < s->n[i].n_in; k++) {
      int v = s->n[i].in[k], p = v >= 0 ? s->v[v].producer : -1;
      if (p >= 0 && s->n[p].alive) first[p + 1]++, ne++;
    }
  int *succ = malloc(sizeof *succ * ((size_t)ne + 1)), *fill = malloc(sizeof *fill * ((size_t)nn + 1));
  bool ok = deg && stack && first && succ && fill;
  for (int i = 0; ok && i < nn; i++) first[i + 1] += first[i];
  for (int i = 0; ok && i < nn; i++) fill[i] = first[i];
  int top = 0, seen = 0;
  for (int i = 0; ok && i < nn; i++) {
    if (!s->n[i].alive) continue;
    for (int k = 0; k < s->n[i].n_in; k++) {
      int v = s->n[i].in[k], p = v >= 0 ? s->v[v].producer : -1;
      if (p >= 0 && s->n[p].alive) { deg[i]++; succ[fill[p]++] = i; }
    }
  }
  for (int i = 0; ok && i < nn; i++)
    if (s->n[i].alive && !deg[i]) stack[top++] = i;
  while (ok && top) {
    int i = stack[--top];
    seen++;
    for (int e = first[i]; e < first[i + 1]; e++)
      if (--deg[succ[e]] == 0) stack[top++] = succ[e];
  }
  free(deg);
  free(stack);
  free(first);
  free(succ);
  free(fill);
  return ok && seen == s->n_alive;
}

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* Hash of value v: inputs and constants by id, node outputs by their producer's hash. */
static uint64_t val_hash(const sg_graph *s, int v, uint64_t *memo, int depth) {
  if (v < 0) return 1;
  if (memo[v]) return memo[v];
  int p = s->v[v].producer;
  uint64_t h;
  if (p < 0 || depth > 4096) h = mix(7, (uint64_t)v);
  else {
    const sg_node *n = &s->n[p];
    h = mix(11, (uint64_t)n->op);
    h = mix(h, (uint64_t)(n->k[0] * 31 + n->k[1]) ^ (uint64_t)n->axis << 20 ^ (uint64_t)n->red_bits << 40 ^ (uint64_t)n->keep << 60);
    for (int k = 0; k < n->n_in; k++) h = mix(h, val_hash(s, n->in[k], memo, depth + 1));
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] == v) h = mix(h, (uint64_t)k);
    if (s->v[v].is_const) h = mix(h, 3);
  }
  if (s->v[v].is_const && p < 0 && v >= 0 && s->v[v].recipe != SG_R_ECG) {
    h = mix(13, (uint64_t)s->v[v].recipe);
    h = mix(h, val_hash(s, s->v[v].a, memo, depth + 1));
    h = mix(h, val_hash(s, s->v[v].b, memo, depth + 1));
    for (int k = 0; k < SG_MAX_OUT; k++) h = mix(h, (uint64_t)s->v[v].p[k]);
    uint64_t num;
    memcpy(&num, &s->v[v].num, sizeof num);
    h = mix(h, num);
  }
  return memo[v] = h ? h : 1;
}

uint64_t sg_hash(const sg_graph *s) {
  uint64_t *memo = calloc((size_t)s->nv + 1, sizeof *memo), h = 0;
  if (!memo) return 0;
  for (int k = 0; k < s->n_outs; k++) h = mix(h, val_hash(s, s->outs[k], memo, 0));
  free(memo);
  return h;
}

void sg_sub_key(const sg_graph *s, sg_sub *sub) {
  sub->kpos = -1;
  sub->kj = -1;
  for (int k = 0; k < sub->n; k++) {
    const sg_node *n = &s->n[sub->node[k]];
    if (n->pos > sub->kpos || (n->pos == sub->kpos && n->j > sub->kj)) {
      sub->kpos = n->pos;
      sub->kj = n->j;
    }
  }
}

int sg_n_rules(const sg_opts *o) {
  int nr;
  sg_rules(&nr);
  return nr + (o && o->rules ? o->rules->n : 0);
}

const char *sg_rule_name(const rw_rules *rs, int rule) {
  int nr;
  const sg_rule *rules = sg_rules(&nr);
  return rule < nr ? rules[rule].name : rs->v[rule - nr].name;
}

typedef struct {
  void (*emit)(void *ctx, const sg_sub *s);
  void *ctx;
  int rule;
} tag_ctx;

static void tag(void *ctx, const sg_sub *s) {
  tag_ctx *c = ctx;
  sg_sub t = *s;
  t.rule = c->rule;
  c->emit(c->ctx, &t);
}

void sg_enumerate(const sg_graph *g, int from, const sg_opts *o, void (*emit)(void *ctx, const sg_sub *s), void *ctx) {
  int nr;
  const sg_rule *rules = sg_rules(&nr);
  tag_ctx c = {emit, ctx, 0};
  for (c.rule = 0; c.rule < nr; c.rule++) rules[c.rule].enumerate(g, from, tag, &c);
  if (o && o->rules) sg_math_enumerate(g, o->rules, nr, from, emit, ctx);
}

bool sg_sub_check(const sg_graph *g, const sg_sub *sub, const sg_opts *o) {
  int nr;
  const sg_rule *rules = sg_rules(&nr);
  return sub->rule < nr ? rules[sub->rule].check(g, sub) : sg_math_check(g, o->rules, nr, sub);
}

int sg_apply(sg_graph *s, const sg_sub *sub, int pos, const sg_opts *o) {
  int n0 = s->nn;
  int nr;
  const sg_rule *rules = sg_rules(&nr);
  if (!(sub->rule < nr ? rules[sub->rule].apply(s, sub, pos) : sg_math_apply(s, o->rules, nr, sub, pos, o->fold_max)))
    return 0;
  if (!sg_acyclic(s)) return -1;
  for (int i = n0; i < s->nn; i++) s->n[i].cost = sg_cost_node(&o->db, s, i);
  s->cost = 0;
  for (int i = 0; i < s->nn; i++)
    if (s->n[i].alive) s->cost += s->n[i].cost;
  return 1;
}

/* ------------------------------------------------------------ materialisation */

/* Data of new constant v (recipe) into a fresh ECG tensor; its id, or -1 on OOM. */
static int make_const(ecg_graph *g, const sg_graph *s, int v, int *map) {
  if (map[v] >= 0) return map[v];
  const sg_val *x = &s->v[v];
  int64_t numel = 1;
  for (int k = 0; k < x->rank; k++) numel *= x->dim[k];
  int t = -1;
  if (x->recipe == SG_R_I64) {
    t = rw_add_const_i64(g, "subst_sizes", x->rank, x->dim, x->p);
  } else if (x->recipe == SG_R_NUM) {
    float f = (float)x->num;
    t = rw_add_const_f32(g, "subst_num", 0, NULL, &f);
  } else {
    int a = make_const(g, s, x->a, map), b = x->recipe == SG_R_CONCAT ? make_const(g, s, x->b, map) : -1;
    if (a < 0 || (x->recipe == SG_R_CONCAT && b < 0)) return -1;
    float *d = calloc((size_t)numel + 1, sizeof *d);
    if (!d) return -1;
    const ecg_tensor *ta = g->tensors[a], *tb = b >= 0 ? g->tensors[b] : NULL;
    const sg_val *va = &s->v[x->a];
    if (x->recipe == SG_R_CONCAT) {
      int ax = (int)x->p[0];
      int64_t outer = 1, ia = 1, ib = 1;
      for (int k = 0; k < ax; k++) outer *= x->dim[k];
      for (int k = ax; k < x->rank; k++) {
        ia *= va->dim[k];
        ib *= s->v[x->b].dim[k];
      }
      for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < ia; i++) d[o * (ia + ib) + i] = (float)ecg_const_f64(ta, o * ia + i);
        for (int64_t i = 0; i < ib; i++) d[o * (ia + ib) + ia + i] = (float)ecg_const_f64(tb, o * ib + i);
      }
    } else { /* SG_R_PAD: [M,C,kh,kw] centred in [M,C,p0,p1] */
      int64_t mc = va->dim[0] * va->dim[1], kh = va->dim[2], kw = va->dim[3], oh = (x->p[0] - kh) / 2,
              ow = (x->p[1] - kw) / 2;
      for (int64_t q = 0; q < mc; q++)
        for (int64_t i = 0; i < kh; i++)
          for (int64_t j = 0; j < kw; j++)
            d[(q * x->p[0] + i + oh) * x->p[1] + j + ow] = (float)ecg_const_f64(ta, (q * kh + i) * kw + j);
    }
    t = rw_add_const_f32(g, "subst_w", x->rank, x->dim, d);
    free(d);
  }
  return map[v] = t;
}

/* ECG attributes of new node n (those its operator reads). */
static int set_attrs(ecg_node *x, const sg_node *n) {
  if (n->op == ECG_OP_Conv) {
    int64_t pads[4] = {n->pad[0], n->pad[1], n->pad[2], n->pad[3]};
    if (ecg_attr_set_ints(x, "kernel_shape", 2, n->k) || ecg_attr_set_ints(x, "strides", 2, n->s) ||
        ecg_attr_set_ints(x, "dilations", 2, n->d) || ecg_attr_set_ints(x, "pads", 4, pads) ||
        ecg_attr_set_i(x, "group", n->group))
      return ECG_ERR_INTERNAL;
  } else if (n->op == ECG_OP_Split || n->op == ECG_OP_Concat) {
    if (ecg_attr_set_i(x, "axis", n->axis)) return ECG_ERR_INTERNAL;
  } else if (n->red) {
    int64_t axes[32];
    int na = 0;
    for (int d = 0; d < 31; d++)
      if (n->red_bits >> d & 1) axes[na++] = d;
    if (ecg_attr_set_ints(x, "axes", na, axes) || ecg_attr_set_i(x, "keepdims", n->keep)) return ECG_ERR_INTERNAL;
  }
  return ECG_OK;
}

int sg_materialize(ecg_graph *g, const sg_graph *s, size_t fold_max, ecg_err *e) {
  int n0 = (int)g->n_nodes, v0 = (int)g->n_tensors;
  int *map = malloc(sizeof *map * ((size_t)s->nv + 1));
  if (!map) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int v = 0; v < s->nv; v++) map[v] = v < v0 ? v : -1;
  int rc = ECG_OK;
  /* values written by live new nodes, in node order */
  for (int i = n0; i < s->nn && rc == ECG_OK; i++) {
    const sg_node *n = &s->n[i];
    if (!n->alive) continue;
    char name[256];
    for (int k = 0; k < n->n_out; k++) {
      rw_unique_name(g, "subst", name, sizeof name);
      if ((map[n->out[k]] = ecg_add_tensor(g, name, s->v[n->out[k]].dtype, -1, NULL)) < 0) rc = ECG_ERR_INTERNAL;
    }
  }
  /* the new nodes (inputs may be any new value: constants made on demand) */
  for (int i = n0; i < s->nn && rc == ECG_OK; i++) {
    const sg_node *n = &s->n[i];
    if (!n->alive) continue;
    int ins[SG_MAX_IN], outs[SG_MAX_OUT];
    for (int k = 0; k < n->n_in && rc == ECG_OK; k++) {
      int v = n->in[k];
      ins[k] = v < 0 ? -1 : map[v] >= 0 ? map[v] : make_const(g, s, v, map);
      if (v >= 0 && ins[k] < 0) rc = ECG_ERR_INTERNAL;
    }
    for (int k = 0; k < n->n_out; k++) outs[k] = map[n->out[k]];
    if (rc != ECG_OK) break;
    const ecg_op_info *op = ecg_op_get((ecg_op_id)n->op);
    int ni = ecg_add_node(g, g->tensors[outs[0]]->name, op->name, ecg_op_domain((ecg_op_id)n->op),
                          n->opset > 0 ? n->opset : 13, n->n_in, ins, n->n_out, outs);
    if (ni < 0 || set_attrs(g->nodes[ni], n) != ECG_OK) rc = ECG_ERR_INTERNAL;
    else g->nodes[ni]->mapping_type = (Ecg__MappingType)op->mapping;
  }
  /* original nodes: live ones read the sg's values, dead ones are disconnected */
  for (int i = 0; i < n0 && rc == ECG_OK; i++) {
    ecg_node *x = g->nodes[i];
    const sg_node *n = &s->n[i];
    if (!n->alive) {
      x->n_inputs = 0;
      for (size_t k = 0; k < x->n_outputs; k++) x->outputs[k] = -1;
      continue;
    }
    for (int k = 0; k < n->n_in && (size_t)k < x->n_inputs; k++)
      if (n->in[k] >= 0) x->inputs[k] = map[n->in[k]];
  }
  /* graph outputs keep their names: the tensor now computing output k takes the name */
  for (int k = 0; k < s->n_outs && rc == ECG_OK; k++) {
    int now = map[s->outs[k]], was = g->outputs[k];
    if (now == was) continue;
    char *tmp = g->tensors[was]->name;
    g->tensors[was]->name = g->tensors[now]->name;
    g->tensors[now]->name = tmp;
    for (size_t j = 0; j < g->n_outputs; j++) /* an output listed twice is renamed once */
      if (g->outputs[j] == was) g->outputs[j] = now;
  }
  free(map);
  if (rc != ECG_OK) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  ECG_TRY(rw_remove_dead(g, e));
  ECG_TRY(ecg_topo_sort(g, e));
  ECG_TRY(ecg_infer_shapes(g, e));
  bool fold = false;
  for (int i = n0; i < s->nn; i++) fold |= s->n[i].alive && s->n[i].folded;
  if (!fold) return ECG_OK;
  int folded;
  ECG_TRY(ecg_fold_constants_limit(g, fold_max, &folded, e));
  return rw_remove_dead(g, e);
}

/* ------------------------------------------------------------ cost-table keys */

void sg_cost_log_key(sg_cost_db *db, const sg_graph *s, int i, const char *key) {
  for (int k = 0; k < db->n_logged; k++)
    if (!strcmp(db->logged[k], key)) return;
  if (db->n_logged == db->cap_logged) {
    int c = db->cap_logged * 2 + 16;
    char **p = realloc(db->logged, sizeof *p * (size_t)c);
    if (!p) return;
    db->logged = p;
    db->cap_logged = c;
  }
  if (!(db->logged[db->n_logged] = strdup(key))) return;
  int id = db->n_logged++;
  fprintf(db->keys_out, "%d\t%s\n", id, key);
  if (!db->graphs_dir) return;
  /* one node reading graph inputs (seeded constants where the node reads constants) */
  const sg_node *n = &s->n[i];
  ecg_graph *g = ecg_graph_new();
  if (!g) return;
  g->name = strdup("cost");
  g->opset = 13;
  uint32_t seed = 12345u + (uint32_t)id;
  int ins[SG_MAX_IN], outs[SG_MAX_OUT], ok = 1;
  const ecg_node *x = n->src >= 0 && db->src ? db->src->nodes[n->src] : NULL;
  for (int k = 0; k < n->n_in && ok; k++) {
    int v = n->in[k];
    ins[k] = -1;
    if (v < 0) continue;
    const sg_val *sv = &s->v[v];
    char name[32];
    snprintf(name, sizeof name, "in%d", k);
    ins[k] = ecg_add_tensor(g, name, sv->dtype, sv->rank, sv->dim);
    if (ins[k] < 0) { ok = 0; break; }
    ecg_tensor *t = g->tensors[ins[k]];
    if (sv->is_const && sv->dtype == ECG_INT64) { /* sizes, axes: the real values */
      int64_t vals[SG_MAX_OUT * 4];
      int64_t ne = ecg_tensor_numel(t);
      if (ne > (int64_t)(sizeof vals / sizeof *vals)) { ok = 0; break; }
      for (int64_t q = 0; q < ne; q++)
        vals[q] = sv->recipe == SG_R_I64 ? sv->p[q] : db->src && v < (int)db->src->n_tensors ? ecg_const_i64(db->src->tensors[v], q) : 0;
      t->is_const = true;
      ecg_tensor_set_data(t, vals, sizeof *vals * (size_t)ne);
    } else if (sv->is_const) {
      int64_t ne = ecg_tensor_numel(t);
      float *d = malloc(sizeof *d * (size_t)(ne ? ne : 1));
      if (!d) { ok = 0; break; }
      for (int64_t q = 0; q < ne; q++) {
        seed = seed * 1664525u + 1013904223u;
        d[q] = (float)(seed >> 8) / 16777216.0f - 0.5f;
      }
      t->is_const = true;
      ecg_tensor_set_data(t, d, sizeof *d * (size_t)ne);
      free(d);
    } else {
      g->inputs = realloc(g->inputs, sizeof *g->inputs * (g->n_inputs + 1));
      g->inputs[g->n_inputs++] = ins[k];
    }
  }
  for (int k = 0; k < n->n_out && ok; k++) {
    char name[32];
    snprintf(name, sizeof name, "out%d", k);
    outs[k] = ecg_add_tensor(g, name, s->v[n->out[k]].dtype, -1, NULL);
    g->outputs = realloc(g->outputs, sizeof *g->outputs * (g->n_outputs + 1));
    g->outputs[g->n_outputs++] = outs[k];
  }
  const ecg_op_info *op = ecg_op_get((ecg_op_id)n->op);
  int ni = ok ? ecg_add_node(g, "op", op->name, ecg_op_domain((ecg_op_id)n->op), 13, n->n_in, ins, n->n_out, outs) : -1;
  ecg_err e = {0};
  int rc = ni < 0 ? ECG_ERR_INTERNAL : ECG_OK;
  if (rc == ECG_OK && x) { /* the ECG node's own attributes */
    ecg_node *y = g->nodes[ni];
    for (size_t a = 0; a < x->n_attrs && rc == ECG_OK; a++) {
      uint8_t *buf = malloc(protobuf_c_message_get_packed_size(&x->attrs[a]->base));
      size_t len = buf ? protobuf_c_message_pack(&x->attrs[a]->base, buf) : 0;
      ecg_attr *c = buf ? ecg__attribute__unpack(NULL, len, buf) : NULL;
      free(buf);
      ecg_attr **grown = c ? realloc(y->attrs, sizeof *grown * (y->n_attrs + 1)) : NULL;
      if (!grown) { rc = ECG_ERR_INTERNAL; break; }
      y->attrs = grown;
      y->attrs[y->n_attrs++] = c;
    }
  } else if (rc == ECG_OK) rc = set_attrs(g->nodes[ni], n);
  if (rc == ECG_OK) rc = ecg_infer_shapes(g, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  char path[4096];
  snprintf(path, sizeof path, "%s/%d.ecg", db->graphs_dir, id);
  if (rc == ECG_OK) rc = ecg_write_path(path, g, 0, &e);
  if (rc != ECG_OK) fprintf(stderr, "ecg-rewrite: cost graph %d (%s): %s\n", id, key, e.msg[0] ? e.msg : "out of memory");
  ecg_graph_free(g);
}
