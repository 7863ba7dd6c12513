/* Unit tests of rank and dimension propagation (SOD² §5.4.1; format/rdp.c) on hand-built
 * graphs: Conv with symbolic H/W, Reshape with a -1, Concat of symbolic dims, the Shape ->
 * Gather -> Unsqueeze -> Concat -> Reshape chain of real exports, backward propagation into
 * a data-dependent (EDO) tensor, and the dynamism classes of the registry. */
#include <stdio.h>

#include "unit.h"

/* Run inference then RDP; expect success. */
static void rdp(ecg_graph *g, ecg_rdp_stats *st, const char *what) {
  ecg_err e = {0};
  int rc = ecg_infer_shapes(g, &e);
  if (rc == ECG_OK) rc = ecg_rdp_run(g, st, &e);
  CHECK(rc == ECG_OK, "%s: %s", what, e.msg);
}

static int kind_of(ecg_graph *g, const char *name, int k) {
  int id = tid(g, name);
  return id >= 0 && (size_t)k < g->tensors[id]->n_dims ? (int)g->tensors[id]->dims[k]->kind : -1;
}

/* x [N, 3, H, W] -> Conv 3x3 stride 2 pad 1 -> y; MaxPool 2x2 stride 2 -> p; Concat(x, x)
 * on axis 2 -> c; Reshape(p, [0, -1]) -> r. */
static void test_conv_concat_reshape(void) {
  ecg_graph *g = ecg_graph_new();
  int64_t xd[4] = {-1, 3, -1, -1};
  const char *xs[4] = {"N", NULL, "H", "W"};
  int x = ecg_add_tensor(g, "x", ECG_FLOAT, 4, xd);
  ecg_tensor_set_shape(g->tensors[x], 4, xd, xs);
  float w[8 * 3 * 9] = {0};
  int wt = cf32(g, "w", w, DIMS(8, 3, 3, 3));
  int y = out(g, "y"), p = out(g, "p"), c = out(g, "c"), r = out(g, "r");
  ecg_node *cv = node(g, "Conv", 13, IDS(x, wt), IDS(y));
  ecg_attr_set_ints(cv, "strides", 2, (int64_t[]){2, 2});
  ecg_attr_set_ints(cv, "pads", 4, (int64_t[]){1, 1, 1, 1});
  ecg_node *mp = node(g, "MaxPool", 13, IDS(y), IDS(p));
  ecg_attr_set_ints(mp, "kernel_shape", 2, (int64_t[]){2, 2});
  ecg_attr_set_ints(mp, "strides", 2, (int64_t[]){2, 2});
  ecg_node *cc = node(g, "Concat", 13, IDS(x, x), IDS(c));
  ecg_attr_set_i(cc, "axis", 2);
  int s = ci64(g, "s", (int64_t[]){0, -1}, 2, -1);
  node(g, "Reshape", 13, IDS(p, s), IDS(r));
  set_io(g, IDS(x), IDS(y, p, c, r));
  ecg_rdp_stats st;
  rdp(g, &st, "conv/concat/reshape");
  /* floor((H + 2 - 3) / 2) + 1 = floor((H + 1) / 2); the pool's floor((y - 2) / 2) + 1 =
   * floor((floor((H - 3) / 2) + 2) / 2) = floor((H + 1) / 4) (constants folded into the floor
   * divisions, nested floor divisions merged) */
  expect_shape(g, "y", "Nx8x((H+1)/2)x((W+1)/2)");
  expect_shape(g, "p", "Nx8x((H+1)/4)x((W+1)/4)");
  expect_shape(g, "c", "Nx3x2*HxW");
  expect_shape(g, "r", "Nx8*((H+1)/4)*((W+1)/4)");
  CHECK(kind_of(g, "x", 2) == ECG__DIM_KIND__DIM_SYMBOL, "x's H is a symbol");
  CHECK(kind_of(g, "c", 2) == ECG__DIM_KIND__DIM_EXPR, "c's 2*H is an expression");
  CHECK(st.symbols == 3 && st.nac == 0 && st.symbolic == 5, "counts: %d symbols, %d symbolic, %d nac", st.symbols, st.symbolic, st.nac);
  ecg_err e = {0};
  CHECK(ecg_validate(g, &e) == ECG_OK, "valid after RDP: %s", e.msg);
  ecg_graph_free(g);
}

/* The chain of real exports: x [B, C, H, W]; Shape -> Gather(0) -> Unsqueeze -> Concat with
 * [-1] -> Reshape(x): [B, C*H*W]; and Shape -> Slice[2:4] -> Concat([B, C]) ... */
static void test_shape_chain(void) {
  ecg_graph *g = ecg_graph_new();
  int64_t xd[4] = {-1, 4, -1, -1};
  const char *xs[4] = {"B", NULL, "H", "W"};
  int x = ecg_add_tensor(g, "x", ECG_FLOAT, 4, xd);
  ecg_tensor_set_shape(g->tensors[x], 4, xd, xs);
  int sh = out(g, "sh"), b = out(g, "b"), bu = out(g, "bu"), tgt = out(g, "tgt"), y = out(g, "y");
  int i0 = ci64(g, "i0", (int64_t[]){0}, 1, 0), ax = ci64(g, "ax", (int64_t[]){0}, 1, -1);
  int m1 = ci64(g, "m1", (int64_t[]){-1}, 1, -1);
  node(g, "Shape", 13, IDS(x), IDS(sh));
  node(g, "Gather", 13, IDS(sh, i0), IDS(b));
  node(g, "Unsqueeze", 13, IDS(b, ax), IDS(bu));
  ecg_node *cc = node(g, "Concat", 13, IDS(bu, m1), IDS(tgt));
  ecg_attr_set_i(cc, "axis", 0);
  node(g, "Reshape", 13, IDS(x, tgt), IDS(y));
  /* H and W times 2 through shape arithmetic: Slice[2:4] * 2 -> Concat([B, 4], hw2) -> ConstantOfShape */
  int hw = out(g, "hw"), hw2 = out(g, "hw2"), t2 = out(g, "t2"), z = out(g, "z");
  int st0 = ci64(g, "st0", (int64_t[]){2}, 1, -1), en0 = ci64(g, "en0", (int64_t[]){4}, 1, -1);
  int two = ci64(g, "two", (int64_t[]){2}, 1, -1), s01 = ci64(g, "s01", (int64_t[]){0}, 1, -1);
  int e02 = ci64(g, "e02", (int64_t[]){2}, 1, -1), bc = out(g, "bc");
  node(g, "Slice", 13, IDS(sh, st0, en0), IDS(hw));
  node(g, "Mul", 13, IDS(hw, two), IDS(hw2));
  node(g, "Slice", 13, IDS(sh, s01, e02), IDS(bc));
  ecg_node *c2 = node(g, "Concat", 13, IDS(bc, hw2), IDS(t2));
  ecg_attr_set_i(c2, "axis", 0);
  node(g, "ConstantOfShape", 13, IDS(t2), IDS(z));
  /* Size (ISDO): B*4*H*W elements, as the value that shapes a ConstantOfShape */
  int sz = out(g, "sz"), szu = out(g, "szu"), zs = out(g, "zs");
  node(g, "Size", 13, IDS(x), IDS(sz));
  node(g, "Unsqueeze", 13, IDS(sz, ax), IDS(szu));
  node(g, "ConstantOfShape", 13, IDS(szu), IDS(zs));
  set_io(g, IDS(x), IDS(y, z, zs));
  ecg_rdp_stats st;
  rdp(g, &st, "shape chain");
  expect_shape(g, "y", "Bx4*H*W");
  expect_shape(g, "z", "Bx4x2*Hx2*W");
  expect_shape(g, "zs", "4*B*H*W");
  ecg_graph_free(g);
}

/* Backward: nz = NonZero(m) of a 1-D m is [1, K], K data-dependent (execution-determined:
 * not known forward); Cast and Relu keep it; Reshape(fl, t) with t = Concat([1], Shape(q)) =
 * [1, P] (P the symbol of another input) makes the output [1, P], and backward through the
 * Reshape (the one unknown input dim: the element count's quotient), the Relu and the Cast
 * the NonZero's K = P. */
static void test_backward(void) {
  ecg_graph *g = ecg_graph_new();
  int64_t md[1] = {-1}, qd[1] = {-1};
  const char *ms[1] = {"L"}, *qs[1] = {"P"};
  int m = ecg_add_tensor(g, "m", ECG_FLOAT, 1, md), q = ecg_add_tensor(g, "q", ECG_FLOAT, 1, qd);
  ecg_tensor_set_shape(g->tensors[m], 1, md, ms);
  ecg_tensor_set_shape(g->tensors[q], 1, qd, qs);
  int nz = out(g, "nz"), fl = out(g, "fl"), qs_ = out(g, "qsh"), t = out(g, "t"), y = out(g, "y");
  int one = ci64(g, "one", (int64_t[]){1}, 1, -1);
  node(g, "NonZero", 13, IDS(m), IDS(nz));
  node(g, "Shape", 13, IDS(q), IDS(qs_));
  ecg_node *cc = node(g, "Concat", 13, IDS(one, qs_), IDS(t));
  ecg_attr_set_i(cc, "axis", 0);
  int cst = out(g, "cst");
  node(g, "Cast", 13, IDS(nz), IDS(cst));
  ecg_attr_set_i(g->nodes[g->n_nodes - 1], "to", ECG_FLOAT);
  node(g, "Relu", 13, IDS(cst), IDS(fl));
  node(g, "Reshape", 13, IDS(fl, t), IDS(y));
  set_io(g, IDS(m, q), IDS(y));
  ecg_rdp_stats st;
  rdp(g, &st, "backward");
  expect_shape(g, "y", "1xP");
  /* NonZero of a 1-D input is [1, K]: K = P recovered backward through Reshape, Relu, Cast */
  expect_shape(g, "fl", "1xP");
  expect_shape(g, "cst", "1xP");
  expect_shape(g, "nz", "1xP");
  ecg_graph_free(g);
}

/* A data-dependent size stays nac: NonZero with nothing downstream fixing it. */
static void test_nac(void) {
  ecg_graph *g = ecg_graph_new();
  int64_t md[2] = {3, -1};
  const char *ms[2] = {NULL, "L"};
  int m = ecg_add_tensor(g, "m", ECG_FLOAT, 2, md);
  ecg_tensor_set_shape(g->tensors[m], 2, md, ms);
  int nz = out(g, "nz"), r = out(g, "r");
  node(g, "NonZero", 13, IDS(m), IDS(nz));
  node(g, "Neg", 13, IDS(nz), IDS(r));
  set_io(g, IDS(m), IDS(r));
  ecg_rdp_stats st;
  rdp(g, &st, "nac");
  CHECK(kind_of(g, "nz", 1) == ECG__DIM_KIND__DIM_NAC, "NonZero's count is nac (kind %d)", kind_of(g, "nz", 1));
  CHECK(kind_of(g, "r", 1) == ECG__DIM_KIND__DIM_NAC, "and so is Neg's (kind %d)", kind_of(g, "r", 1));
  CHECK(st.nac == 2, "2 nac tensors, got %d", st.nac);
  ecg_graph_free(g);
}

/* Every operator has a dynamism class; the representatives of SOD² Table 5.2. */
static void test_classes(void) {
  int bad = 0;
  for (int i = 0; i < ECG_OP_COUNT; i++) {
    const ecg_op_info *op = ecg_op_get((ecg_op_id)i);
    if (op->dyn < ECG_DYN_ISDO || op->dyn > ECG_DYN_EDO || !op->rdp) bad++;
  }
  CHECK(bad == 0, "%d operators without a dynamism class or RDP transfer", bad);
  struct { const char *op; int dyn; } want[] = {{"Shape", ECG_DYN_ISDO}, {"Conv", ECG_DYN_ISDOS}, {"MatMul", ECG_DYN_ISDOS},
                                                 {"Reshape", ECG_DYN_ISVDOS}, {"Range", ECG_DYN_ISVDOS}, {"If", ECG_DYN_EDO},
                                                 {"Loop", ECG_DYN_EDO}, {"NonZero", ECG_DYN_EDO}, {"NonMaxSuppression", ECG_DYN_EDO}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const ecg_op_info *op = ecg_op_lookup(want[i].op, "");
    CHECK(op && (int)op->dyn == want[i].dyn, "%s is %s", want[i].op, op ? ecg_dyn_name(op->dyn) : "missing");
  }
}

/* The partial-shape fold (format/registry.c): x [1, N] -> Unsqueeze(1) -> u [1, 1, N];
 * Gather(Shape(u), [1]) is the known 1 and folds to a constant, as does Slice(Shape(u), 0:2);
 * Gather(Shape(u), [2]) is N and stays a node, and so does Equal(Shape(u), [1, 1, 1]) (not a
 * data-movement operator: its value would depend on N). The If deciding an exported
 * torch.squeeze(dim) (silero VAD) is this Gather followed by an Equal. */
static void test_partial_shape_fold(void) {
  ecg_graph *g = ecg_graph_new();
  int64_t xd[2] = {1, -1};
  const char *xs[2] = {NULL, "N"};
  int x = ecg_add_tensor(g, "x", ECG_FLOAT, 2, xd);
  ecg_tensor_set_shape(g->tensors[x], 2, xd, xs);
  int ax = ci64(g, "ax", (int64_t[]){1}, 1, -1), i1 = ci64(g, "i1", (int64_t[]){1}, 1, -1);
  int i2 = ci64(g, "i2", (int64_t[]){2}, 1, -1), s0 = ci64(g, "s0", (int64_t[]){0}, 1, -1);
  int e2 = ci64(g, "e2", (int64_t[]){2}, 1, -1), ones = ci64(g, "ones", (int64_t[]){1, 1, 1}, 3, -1);
  int u = out(g, "u"), sh = out(g, "sh"), g1 = out(g, "g1"), g2 = out(g, "g2"), sl = out(g, "sl"), eq = out(g, "eq");
  node(g, "Unsqueeze", 13, IDS(x, ax), IDS(u));
  node(g, "Shape", 13, IDS(u), IDS(sh));
  node(g, "Gather", 13, IDS(sh, i1), IDS(g1));
  node(g, "Gather", 13, IDS(sh, i2), IDS(g2));
  node(g, "Slice", 13, IDS(sh, s0, e2), IDS(sl));
  node(g, "Equal", 13, IDS(sh, ones), IDS(eq));
  set_io(g, IDS(x), IDS(u, g1, g2, sl, eq));
  ecg_err e = {0};
  int folded = -1;
  CHECK(ecg_fold_constants(g, &folded, &e) == ECG_OK, "fold: %s", e.msg);
  const ecg_tensor *t1 = g->tensors[tid(g, "g1")], *t2 = g->tensors[tid(g, "g2")];
  const ecg_tensor *ts = g->tensors[tid(g, "sl")], *te = g->tensors[tid(g, "eq")];
  CHECK(folded == 2, "two nodes folded, got %d", folded);
  CHECK(t1->is_const && ecg_tensor_numel(t1) == 1 && ecg_const_f64(t1, 0) == 1, "Gather of the known dim folds to 1");
  CHECK(ts->is_const && ecg_tensor_numel(ts) == 2 && ecg_const_f64(ts, 0) == 1 && ecg_const_f64(ts, 1) == 1, "Slice 0:2 folds to [1, 1]");
  CHECK(!t2->is_const, "Gather of the symbolic dim stays a node");
  CHECK(!te->is_const, "Equal on the shape (arithmetic, not data movement) stays a node");
  CHECK(!g->tensors[tid(g, "sh")]->is_const && g->tensors[x]->dims[1]->value < 0, "the Shape and x keep their symbols");
  CHECK(ecg_validate(g, &e) == ECG_OK, "valid after the fold: %s", e.msg);
  ecg_graph_free(g);
}

/* x [1, N] -> Pad 3 before, 5 after (reflect) -> p; Slices of x along N: [-4:-1] (3, N
 * cancels out), [1:end] (N - 1), [::-2] from the end (ceil(N / 2)), [0:5] (5, by probing
 * too). */
static void test_pad_slice(void) {
  ecg_graph *g = ecg_graph_new();
  int64_t xd[2] = {1, -1};
  const char *xs[2] = {NULL, "N"};
  int x = ecg_add_tensor(g, "x", ECG_FLOAT, 2, xd);
  ecg_tensor_set_shape(g->tensors[x], 2, xd, xs);
  int pads = ci64(g, "pads", (int64_t[]){0, 3, 0, 5}, 4, -1), ax = ci64(g, "ax", (int64_t[]){1}, 1, -1);
  int m4 = ci64(g, "m4", (int64_t[]){-4}, 1, -1), m1 = ci64(g, "m1", (int64_t[]){-1}, 1, -1);
  int one = ci64(g, "one", (int64_t[]){1}, 1, -1), end = ci64(g, "end", (int64_t[]){INT64_MAX}, 1, -1);
  int beg = ci64(g, "beg", (int64_t[]){INT64_MIN}, 1, -1), m2 = ci64(g, "m2", (int64_t[]){-2}, 1, -1);
  int zero = ci64(g, "zero", (int64_t[]){0}, 1, -1), five = ci64(g, "five", (int64_t[]){5}, 1, -1);
  int p = out(g, "p"), a = out(g, "a"), b = out(g, "b"), c = out(g, "c"), d = out(g, "d");
  ecg_node *pn = node(g, "Pad", 13, IDS(x, pads), IDS(p));
  ecg_attr_set_s(pn, "mode", "reflect");
  node(g, "Slice", 13, IDS(x, m4, m1, ax), IDS(a));
  node(g, "Slice", 13, IDS(x, one, end, ax), IDS(b));
  node(g, "Slice", 13, IDS(x, end, beg, ax, m2), IDS(c));
  node(g, "Slice", 13, IDS(x, zero, five, ax), IDS(d));
  set_io(g, IDS(x), IDS(p, a, b, c, d));
  ecg_rdp_stats st;
  rdp(g, &st, "pad/slice");
  expect_shape(g, "p", "1xN+8");
  expect_shape(g, "a", "1x3");
  expect_shape(g, "b", "1xN-1");
  expect_shape(g, "c", "1x((N+1)/2)");
  expect_shape(g, "d", "1x5");
  CHECK(st.nac == 0, "no nac, got %d", st.nac);
  ecg_graph_free(g);
}

int main(void) {
  test_pad_slice();
  test_partial_shape_fold();
  test_conv_concat_reshape();
  test_shape_chain();
  test_backward();
  test_nac();
  test_classes();
  return unit_summary();
}
