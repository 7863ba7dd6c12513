/* Unit tests of the operator registry functions (format/ops/): shape inference with
 * concrete expected shapes, constant folding with expected values, error cases.
 *
 *   make build/libecg.a
 *   cc -std=gnu11 -Iformat -Ibuild/gen tests/unit/ops_test.c build/libecg.a \
 *      -lprotobuf-c -lzstd -lm -o build/ops_test && build/ops_test
 */
#include "unit.h"

/* ---- tests */

static void test_conv(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(1, 4, 9, 9), NULL), w = tens(g, "w", ECG_FLOAT, DIMS(8, 2, 3, 3), NULL);
  ecg_node *n = node(g, "Conv", 13, IDS(x, w), IDS(out(g, "y")));
  ecg_attr_set_ints(n, "strides", 2, (int64_t[]){2, 2});
  ecg_attr_set_ints(n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  ecg_attr_set_i(n, "group", 2);
  int x2 = tens(g, "x2", ECG_FLOAT, DIMS(-1, 3, 10, 7), "N"), w2 = tens(g, "w2", ECG_FLOAT, DIMS(5, 3, 3, 3), NULL);
  ecg_node *n2 = node(g, "Conv", 13, IDS(x2, w2), IDS(out(g, "y2")));
  ecg_attr_set_s(n2, "auto_pad", "SAME_UPPER");
  ecg_attr_set_ints(n2, "strides", 2, (int64_t[]){2, 2});
  ecg_attr_set_ints(n2, "dilations", 2, (int64_t[]){2, 1});
  int x3 = tens(g, "x3", ECG_FLOAT, DIMS(1, 2, 11), NULL), w3 = tens(g, "w3", ECG_FLOAT, DIMS(4, 2, 3), NULL);
  ecg_node *n3 = node(g, "Conv", 13, IDS(x3, w3), IDS(out(g, "y3")));
  ecg_attr_set_ints(n3, "dilations", 1, (int64_t[]){2});
  infer(g, ECG_OK, "conv");
  expect_shape(g, "y", "1x8x5x5");
  expect_shape(g, "y2", "Nx5x5x4");
  expect_shape(g, "y3", "1x4x7");
  const ecg_op_info *op = ecg_op_lookup("Conv", "");
  CHECK(op->flops(g, n) == 2LL * 200 * 2 * 9, "conv flops %lld", (long long)op->flops(g, n));
  ecg_graph_free(g);

  g = ecg_graph_new();
  x = tens(g, "x", ECG_FLOAT, DIMS(1, 3, 8, 8), NULL);
  w = tens(g, "w", ECG_FLOAT, DIMS(8, 2, 3, 3), NULL);
  node(g, "Conv", 13, IDS(x, w), IDS(out(g, "y")));
  infer(g, ECG_ERR_INPUT, "conv channel mismatch");
  ecg_graph_free(g);
}

static void test_convtranspose(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(1, 4, 5, 5), NULL), w = tens(g, "w", ECG_FLOAT, DIMS(4, 3, 3, 3), NULL);
  ecg_node *n = node(g, "ConvTranspose", 13, IDS(x, w), IDS(out(g, "y")));
  ecg_attr_set_ints(n, "strides", 2, (int64_t[]){2, 2});
  ecg_attr_set_ints(n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  ecg_attr_set_ints(n, "output_padding", 2, (int64_t[]){1, 1});
  infer(g, ECG_OK, "convtranspose");
  expect_shape(g, "y", "1x3x10x10");
  ecg_graph_free(g);
}

static void test_pool(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(1, 2, 6, 6), NULL);
  ecg_node *n = node(g, "MaxPool", 12, IDS(x), IDS(out(g, "y"), out(g, "idx")));
  ecg_attr_set_ints(n, "kernel_shape", 2, (int64_t[]){3, 3});
  ecg_attr_set_ints(n, "strides", 2, (int64_t[]){2, 2});
  ecg_attr_set_i(n, "ceil_mode", 1);
  ecg_node *f = node(g, "MaxPool", 12, IDS(x), IDS(out(g, "yf")));
  ecg_attr_set_ints(f, "kernel_shape", 2, (int64_t[]){3, 3});
  ecg_attr_set_ints(f, "strides", 2, (int64_t[]){2, 2});
  /* ceil_mode drops a last window that would start in the end padding */
  int x1 = tens(g, "x1", ECG_FLOAT, DIMS(1, 1, 3), NULL);
  ecg_node *p = node(g, "AveragePool", 19, IDS(x1), IDS(out(g, "y1")));
  ecg_attr_set_ints(p, "kernel_shape", 1, (int64_t[]){1});
  ecg_attr_set_ints(p, "strides", 1, (int64_t[]){2});
  ecg_attr_set_ints(p, "pads", 2, (int64_t[]){0, 1});
  ecg_attr_set_i(p, "ceil_mode", 1);
  node(g, "GlobalAveragePool", 1, IDS(x), IDS(out(g, "gap")));
  infer(g, ECG_OK, "pool");
  expect_shape(g, "y", "1x2x3x3");
  expect_shape(g, "idx", "1x2x3x3");
  CHECK(g->tensors[tid(g, "idx")]->dtype == ECG_INT64, "MaxPool Indices dtype");
  expect_shape(g, "yf", "1x2x2x2");
  expect_shape(g, "y1", "1x1x2");
  expect_shape(g, "gap", "1x2x1x1");
  ecg_graph_free(g);
}

static void test_matmul_gemm(void) {
  ecg_graph *g = ecg_graph_new();
  int a = tens(g, "a", ECG_FLOAT, DIMS(2, 1, 3, 4), NULL), b = tens(g, "b", ECG_FLOAT, DIMS(5, 4, 6), NULL);
  ecg_node *mm = node(g, "MatMul", 13, IDS(a, b), IDS(out(g, "y")));
  int v = tens(g, "v", ECG_FLOAT, DIMS(4), NULL);
  node(g, "MatMul", 13, IDS(v, b), IDS(out(g, "yv")));
  node(g, "MatMul", 13, IDS(a, v), IDS(out(g, "ya")));
  int s = tens(g, "s", ECG_FLOAT, DIMS(-1, 7, 4), "B");
  node(g, "MatMul", 13, IDS(s, tens(g, "w", ECG_FLOAT, DIMS(4, 9), NULL)), IDS(out(g, "ys")));
  int ga = tens(g, "ga", ECG_FLOAT, DIMS(3, 4), NULL), gb = tens(g, "gb", ECG_FLOAT, DIMS(5, 4), NULL);
  int gc = tens(g, "gc", ECG_FLOAT, DIMS(5), NULL);
  ecg_node *gm = node(g, "Gemm", 13, IDS(ga, gb, gc), IDS(out(g, "gy")));
  ecg_attr_set_i(gm, "transB", 1);
  infer(g, ECG_OK, "matmul/gemm");
  expect_shape(g, "y", "2x5x3x6");
  expect_shape(g, "yv", "5x6");
  expect_shape(g, "ya", "2x1x3");
  expect_shape(g, "ys", "Bx7x9");
  expect_shape(g, "gy", "3x5");
  CHECK(ecg_op_lookup("MatMul", "")->flops(g, mm) == 2LL * 180 * 4, "matmul flops");
  CHECK(ecg_op_lookup("Gemm", "")->flops(g, gm) == 2LL * 15 * 4 + 15, "gemm flops");
  ecg_graph_free(g);

  g = ecg_graph_new();
  a = tens(g, "a", ECG_FLOAT, DIMS(3, 4), NULL);
  b = tens(g, "b", ECG_FLOAT, DIMS(5, 4), NULL);
  node(g, "Gemm", 13, IDS(a, b), IDS(out(g, "y"))); /* transB missing: K mismatch */
  infer(g, ECG_ERR_INPUT, "gemm K mismatch");
  ecg_graph_free(g);
}

static void test_reshape_squeeze(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(2, 3, 4), NULL);
  node(g, "Reshape", 14, IDS(x, ci64(g, "s", (int64_t[]){0, -1}, 2, -1)), IDS(out(g, "r")));
  int xs = tens(g, "xs", ECG_FLOAT, DIMS(-1, 3, 4), "N");
  node(g, "Reshape", 14, IDS(xs, ci64(g, "s2", (int64_t[]){0, -1}, 2, -1)), IDS(out(g, "rs")));
  node(g, "Reshape", 14, IDS(x, ci64(g, "s3", (int64_t[]){-1, 6, 2}, 3, -1)), IDS(out(g, "r3")));
  int q = tens(g, "q", ECG_FLOAT, DIMS(1, 3, 1, 5), NULL);
  ecg_node *sq = node(g, "Squeeze", 11, IDS(q), IDS(out(g, "sqa")));
  ecg_attr_set_ints(sq, "axes", 2, (int64_t[]){0, 2});
  node(g, "Squeeze", 13, IDS(q, ci64(g, "ax", (int64_t[]){-2}, 1, -1)), IDS(out(g, "sqi")));
  node(g, "Squeeze", 13, IDS(q), IDS(out(g, "sqall")));
  int u = tens(g, "u", ECG_FLOAT, DIMS(3, 4), NULL);
  ecg_node *un = node(g, "Unsqueeze", 11, IDS(u), IDS(out(g, "ua")));
  ecg_attr_set_ints(un, "axes", 1, (int64_t[]){0});
  node(g, "Unsqueeze", 13, IDS(u, ci64(g, "ax2", (int64_t[]){1, -1}, 2, -1)), IDS(out(g, "ui")));
  ecg_node *fl = node(g, "Flatten", 13, IDS(x), IDS(out(g, "fl")));
  ecg_attr_set_i(fl, "axis", -1);
  node(g, "Transpose", 13, IDS(x), IDS(out(g, "tr")));
  infer(g, ECG_OK, "reshape/squeeze");
  expect_shape(g, "r", "2x12");
  expect_shape(g, "rs", "Nx12");
  expect_shape(g, "r3", "2x6x2");
  expect_shape(g, "sqa", "3x5");
  expect_shape(g, "sqi", "1x3x5");
  expect_shape(g, "sqall", "3x5");
  expect_shape(g, "ua", "1x3x4");
  expect_shape(g, "ui", "3x1x4x1");
  expect_shape(g, "fl", "6x4");
  expect_shape(g, "tr", "4x3x2");
  ecg_graph_free(g);

  g = ecg_graph_new();
  x = tens(g, "x", ECG_FLOAT, DIMS(2, 3), NULL);
  node(g, "Reshape", 14, IDS(x, tens(g, "dyn", ECG_INT64, DIMS(2), NULL)), IDS(out(g, "r")));
  infer(g, ECG_OK, "dynamic reshape: rank from the shape operand's length");
  expect_shape(g, "r", "?x?");
  ecg_graph_free(g);

  /* the same with the output's shape declared by the model: the declared dims fill in */
  g = ecg_graph_new();
  x = tens(g, "x", ECG_FLOAT, DIMS(2, 3), NULL);
  node(g, "Reshape", 14, IDS(x, tens(g, "dyn", ECG_INT64, DIMS(2), NULL)), IDS(tens(g, "r", ECG_FLOAT, DIMS(3, 2), NULL)));
  infer(g, ECG_OK, "dynamic reshape with a declared output shape");
  expect_shape(g, "r", "3x2");
  ecg_graph_free(g);
}

static void test_slice_concat_gather(void) {
  ecg_graph *g = ecg_graph_new();
  int64_t r10[10];
  for (int i = 0; i < 10; i++) r10[i] = i;
  int d = ci64(g, "d", r10, 10, -1);
  node(g, "Slice", 13, IDS(d, ci64(g, "st", (int64_t[]){-1}, 1, -1), ci64(g, "en", (int64_t[]){INT64_MIN}, 1, -1),
                         ci64(g, "ax", (int64_t[]){0}, 1, -1), ci64(g, "sp", (int64_t[]){-2}, 1, -1)),
       IDS(out(g, "sl")));
  ecg_node *old = node(g, "Slice", 9, IDS(d), IDS(out(g, "sl9")));
  ecg_attr_set_ints(old, "starts", 1, (int64_t[]){2});
  ecg_attr_set_ints(old, "ends", 1, (int64_t[]){100});
  node(g, "Concat", 13, IDS(ci64(g, "c1", (int64_t[]){1, 2}, 2, -1), ci64(g, "c2", (int64_t[]){3}, 1, -1)),
       IDS(out(g, "cat")));
  ecg_attr_set_i(g->nodes[g->n_nodes - 1], "axis", 0);
  float gd[6] = {0, 1, 2, 3, 4, 5};
  ecg_node *ga = node(g, "Gather", 13, IDS(cf32(g, "gd", gd, DIMS(2, 3)), ci64(g, "gi", (int64_t[]){-1}, 1, -1)),
                      IDS(out(g, "gat")));
  ecg_attr_set_i(ga, "axis", 1);
  int a = tens(g, "a", ECG_FLOAT, DIMS(2, 3), NULL), b = tens(g, "b", ECG_FLOAT, DIMS(2, 5), NULL);
  ecg_node *cn = node(g, "Concat", 13, IDS(a, b), IDS(out(g, "cab")));
  ecg_attr_set_i(cn, "axis", -1);
  node(g, "Relu", 13, IDS(tid(g, "cab")), IDS(out(g, "relu")));
  fold(g, 4, "slice/concat/gather");
  expect_shape(g, "sl", "5");
  expect_i64(g, "sl", (int64_t[]){9, 7, 5, 3, 1}, 5);
  expect_i64(g, "sl9", (int64_t[]){2, 3, 4, 5, 6, 7, 8, 9}, 8);
  expect_i64(g, "cat", (int64_t[]){1, 2, 3}, 3);
  expect_shape(g, "gat", "2x1");
  int gt = tid(g, "gat");
  CHECK(gt >= 0 && g->tensors[gt]->is_const && ecg_const_f64(g->tensors[gt], 0) == 2 &&
            ecg_const_f64(g->tensors[gt], 1) == 5, "gather values");
  expect_shape(g, "cab", "2x8");
  ecg_graph_free(g);
}

/* ShuffleNet channel shuffle: Shape -> Gather -> Unsqueeze -> Concat -> Reshape. */
static void test_shuffle_chain(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(1, 116, 28, 28), NULL);
  node(g, "Shape", 13, IDS(x), IDS(out(g, "shp")));
  int parts[5];
  const int64_t which[3] = {0, 2, 3};
  const char *gn[3] = {"g0", "g2", "g3"}, *un[3] = {"u0", "u2", "u3"}, *in[3] = {"i0", "i2", "i3"};
  for (int k = 0; k < 3; k++) {
    int idx = ci64(g, in[k], &which[k], 1, 0); /* scalar index */
    node(g, "Gather", 13, IDS(tid(g, "shp"), idx), IDS(out(g, un[k])));
    node(g, "Unsqueeze", 13, IDS(tid(g, un[k]), ci64(g, "ax0", (int64_t[]){0}, 1, -1)), IDS(out(g, gn[k])));
  }
  parts[0] = tid(g, "g0");
  parts[1] = ci64(g, "two", (int64_t[]){2}, 1, -1);
  parts[2] = ci64(g, "fifty8", (int64_t[]){58}, 1, -1);
  parts[3] = tid(g, "g2");
  parts[4] = tid(g, "g3");
  ecg_node *c = node(g, "Concat", 13, parts, 5, IDS(out(g, "newshape")));
  ecg_attr_set_i(c, "axis", 0);
  node(g, "Reshape", 13, IDS(x, tid(g, "newshape")), IDS(out(g, "y")));
  set_io(g, IDS(x), IDS(tid(g, "y")));
  fold(g, 8, "shufflenet chain");
  CHECK(g->n_nodes == 1 && !strcmp(g->nodes[0]->op_type, "Reshape"), "only Reshape left (%zu nodes)", g->n_nodes);
  expect_i64(g, "newshape", (int64_t[]){1, 2, 58, 28, 28}, 5);
  expect_shape(g, "y", "1x2x58x28x28");
  ecg_err e;
  CHECK(ecg_validate(g, &e) == ECG_OK, "validate after fold: %s", e.msg);
  ecg_graph_free(g);
}

/* Rows of another domain match only under it; default-domain lookups never see them. */
static void test_op_domains(void) {
  const char *tr = "ai.onnx.preview.training";
  CHECK(ecg_op_lookup("Adam", tr) && ecg_op_lookup("Momentum", tr) && ecg_op_lookup("Adagrad", tr), "training ops");
  CHECK(!ecg_op_lookup("Adam", "") && !ecg_op_lookup("Adam", "ai.onnx") && !ecg_op_lookup("Adam", NULL), "Adam not ai.onnx");
  CHECK(!ecg_op_lookup("Relu", tr) && ecg_op_lookup("Relu", "ai.onnx"), "Relu only ai.onnx");
  CHECK(strcmp(ecg_op_domain(ecg_op_lookup("Adam", tr)->id), tr) == 0, "Adam domain");
  CHECK(ecg_op_domain(ecg_op_lookup("Relu", "")->id)[0] == 0, "Relu domain");
}

static void test_broadcast(void) {
  ecg_graph *g = ecg_graph_new();
  int a = tens(g, "a", ECG_FLOAT, DIMS(-1, 3, 1), "N"), b = tens(g, "b", ECG_FLOAT, DIMS(1, 4), NULL);
  node(g, "Add", 14, IDS(a, b), IDS(out(g, "y")));
  node(g, "Less", 13, IDS(a, b), IDS(out(g, "lt")));
  node(g, "Where", 16, IDS(tid(g, "lt"), a, b), IDS(out(g, "wh")));
  infer(g, ECG_OK, "broadcast add");
  expect_shape(g, "y", "Nx3x4");
  CHECK(g->tensors[tid(g, "lt")]->dtype == ECG_BOOL, "Less outputs bool");
  expect_shape(g, "wh", "Nx3x4");
  ecg_graph_free(g);

  g = ecg_graph_new();
  a = tens(g, "a", ECG_FLOAT, DIMS(2, 3), NULL);
  b = tens(g, "b", ECG_FLOAT, DIMS(4, 3), NULL);
  node(g, "Add", 14, IDS(a, b), IDS(out(g, "y")));
  infer(g, ECG_ERR_INPUT, "bad broadcast");
  ecg_graph_free(g);
}

static void test_fold_math(void) {
  ecg_graph *g = ecg_graph_new();
  int a = ci64(g, "a", (int64_t[]){-7, 7, 9}, 3, -1), b = ci64(g, "b", (int64_t[]){2, -2, 4}, 3, -1);
  node(g, "Div", 14, IDS(a, b), IDS(out(g, "div")));
  node(g, "Mod", 13, IDS(a, b), IDS(out(g, "mod")));
  ecg_node *fm = node(g, "Mod", 13, IDS(a, b), IDS(out(g, "fmod")));
  ecg_attr_set_i(fm, "fmod", 1);
  node(g, "Mul", 14, IDS(a, ci64(g, "k", (int64_t[]){3}, 1, 0)), IDS(out(g, "mul")));
  node(g, "Greater", 13, IDS(a, b), IDS(out(g, "gt")));
  node(g, "Max", 13, IDS(a, b, ci64(g, "z", (int64_t[]){0}, 1, 0)), IDS(out(g, "max")));
  node(g, "Where", 16, IDS(tid(g, "gt"), a, b), IDS(out(g, "wh")));
  node(g, "Abs", 13, IDS(a), IDS(out(g, "abs")));
  ecg_node *cast = node(g, "Cast", 13, IDS(a), IDS(out(g, "f")));
  ecg_attr_set_i(cast, "to", ECG_FLOAT);
  ecg_node *rs = node(g, "ReduceSum", 13, IDS(ci64(g, "m", (int64_t[]){1, 2, 3, 4, 5, 6}, 6, -1), ci64(g, "rax", (int64_t[]){0}, 1, -1)),
                      IDS(out(g, "sum")));
  ecg_attr_set_i(rs, "keepdims", 0);
  node(g, "Range", 11, IDS(ci64(g, "r0", (int64_t[]){10}, 1, 0), ci64(g, "r1", (int64_t[]){1}, 1, 0),
                         ci64(g, "r2", (int64_t[]){-3}, 1, 0)), IDS(out(g, "rng")));
  node(g, "Div", 14, IDS(a, ci64(g, "zero", (int64_t[]){0}, 1, 0)), IDS(out(g, "div0")));
  fold(g, -1, "fold math");
  expect_i64(g, "div", (int64_t[]){-3, -3, 2}, 3);
  expect_i64(g, "mod", (int64_t[]){1, -1, 1}, 3);
  expect_i64(g, "fmod", (int64_t[]){-1, 1, 1}, 3);
  expect_i64(g, "mul", (int64_t[]){-21, 21, 27}, 3);
  expect_i64(g, "gt", (int64_t[]){0, 1, 1}, 3);
  expect_i64(g, "max", (int64_t[]){2, 7, 9}, 3);
  expect_i64(g, "wh", (int64_t[]){2, 7, 9}, 3);
  expect_i64(g, "abs", (int64_t[]){7, 7, 9}, 3);
  expect_i64(g, "f", (int64_t[]){-7, 7, 9}, 3);
  CHECK(g->tensors[tid(g, "f")]->dtype == ECG_FLOAT, "Cast dtype");
  expect_i64(g, "sum", (int64_t[]){21}, 1);
  expect_shape(g, "sum", "scalar");
  expect_i64(g, "rng", (int64_t[]){10, 7, 4}, 3);
  /* integer division by zero: ONNX leaves it undefined; folding gives what the generated
   * code computes (ecg_idiv: 0), from the same scalar.def expression */
  expect_i64(g, "div0", (int64_t[]){0, 0, 0}, 3);
  ecg_graph_free(g);
}

/* MatMul of constants folds: a batch against a broadcast matrix, 1-D operands on either side. */
static void test_fold_matmul(void) {
  ecg_graph *g = ecg_graph_new();
  float av[12], bv[6] = {1, 0, 0, 1, 1, 1}, vv[3] = {1, 2, 3}, wv[3] = {1, 1, 1};
  for (int i = 0; i < 12; i++) av[i] = (float)i;
  int a = cf32(g, "a", av, DIMS(2, 2, 3)), b = cf32(g, "b", bv, DIMS(3, 2));
  node(g, "MatMul", 13, IDS(a, b), IDS(out(g, "ab")));
  node(g, "MatMul", 13, IDS(cf32(g, "v", vv, DIMS(3)), b), IDS(out(g, "vb")));
  node(g, "MatMul", 13, IDS(cf32(g, "a2", av, DIMS(2, 3)), cf32(g, "w", wv, DIMS(3))), IDS(out(g, "aw")));
  fold(g, 3, "fold matmul");
  expect_i64(g, "ab", (int64_t[]){2, 3, 8, 9, 14, 15, 20, 21}, 8);
  expect_shape(g, "ab", "2x2x2");
  expect_i64(g, "vb", (int64_t[]){4, 5}, 2);
  expect_shape(g, "vb", "2");
  expect_i64(g, "aw", (int64_t[]){3, 12}, 2);
  expect_shape(g, "aw", "2");
  ecg_graph_free(g);
}

static void test_misc_shapes(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(-1, 6, 4), "N");
  ecg_node *sp = node(g, "Split", 13, IDS(x, ci64(g, "spl", (int64_t[]){2, 4}, 2, -1)), IDS(out(g, "s0"), out(g, "s1")));
  ecg_attr_set_i(sp, "axis", 1);
  ecg_node *rm = node(g, "ReduceMean", 13, IDS(x), IDS(out(g, "rm")));
  ecg_attr_set_ints(rm, "axes", 1, (int64_t[]){-1});
  ecg_node *am = node(g, "ArgMax", 13, IDS(x), IDS(out(g, "am")));
  ecg_attr_set_i(am, "axis", 1);
  ecg_attr_set_i(am, "keepdims", 0);
  node(g, "Pad", 13, IDS(x, ci64(g, "pads", (int64_t[]){0, 1, 2, 0, 1, 2}, 6, -1)), IDS(out(g, "pad")));
  node(g, "Expand", 13, IDS(x, ci64(g, "es", (int64_t[]){2, 1, 1, 1}, 4, -1)), IDS(out(g, "ex")));
  node(g, "Tile", 13, IDS(x, ci64(g, "rep", (int64_t[]){1, 2, 3}, 3, -1)), IDS(out(g, "tile")));
  node(g, "Shape", 15, IDS(x), IDS(out(g, "shp")));
  ecg_node *ss = node(g, "Shape", 15, IDS(x), IDS(out(g, "shp1")));
  ecg_attr_set_i(ss, "start", -2);
  int im = tens(g, "im", ECG_FLOAT, DIMS(1, 8, 4, 6), NULL);
  float sc[4] = {1, 1, 2, 2};
  node(g, "Resize", 13, IDS(im, -1, cf32(g, "sc", sc, DIMS(4))), IDS(out(g, "rz")));
  ecg_node *d2s = node(g, "DepthToSpace", 13, IDS(im), IDS(out(g, "d2s")));
  ecg_attr_set_i(d2s, "blocksize", 2);
  ecg_node *co = node(g, "ConstantOfShape", 9, IDS(ci64(g, "cs", (int64_t[]){2, 3}, 2, -1)), IDS(out(g, "cos")));
  ecg_attr *va = ecg_attr_add(co, "value", ECG_ATTR_TENSOR);
  va->t = malloc(sizeof *va->t);
  ecg__tensor__init(va->t);
  va->t->dtype = ECG_INT64;
  ecg_tensor_set_shape(va->t, 1, (int64_t[]){1}, NULL);
  ecg_tensor_set_data(va->t, (int64_t[]){7}, 8);
  fold(g, -1, "misc shapes");
  expect_shape(g, "s0", "Nx2x4");
  expect_shape(g, "s1", "Nx4x4");
  expect_shape(g, "rm", "Nx6x1");
  expect_shape(g, "am", "Nx4");
  CHECK(g->tensors[tid(g, "am")]->dtype == ECG_INT64, "ArgMax dtype");
  expect_shape(g, "pad", "Nx8x8");
  expect_shape(g, "ex", "2xNx6x4");
  expect_shape(g, "tile", "Nx12x12");
  expect_shape(g, "shp", "3");
  expect_shape(g, "shp1", "2");
  expect_shape(g, "rz", "1x8x8x12");
  expect_shape(g, "d2s", "1x2x8x12");
  expect_shape(g, "cos", "2x3");
  expect_i64(g, "cos", (int64_t[]){7, 7, 7, 7, 7, 7}, 6);
  ecg_graph_free(g);
}

/* Per-operator schema versions (format/op_versions.def): every registry row has one; its
 * implemented versions are part of ONNX's history, the first is ops.def's since; and the
 * version in effect at an opset is the newest at or below it. */
static void test_op_versions(void) {
  for (int i = 0; i < ECG_OP_COUNT; i++) {
    const ecg_op_info *op = ecg_op_get((ecg_op_id)i);
    char impl[128], all[128];
    int ni = ecg_op_versions((ecg_op_id)i, true, impl, sizeof impl), na = ecg_op_versions((ecg_op_id)i, false, all, sizeof all);
    CHECK(ni >= 1 && na >= ni, "%s: versions implemented '%s' of '%s'", op->name, impl, all);
    CHECK(atoi(impl) == op->since, "%s: first implemented version %s, ops.def since %d", op->name, impl, op->since);
    for (char *t = impl; *t;) { /* each implemented version is a schema version of its own */
      int v = atoi(t);
      bool ok = false;
      CHECK(ecg_op_schema_version((ecg_op_id)i, v, &ok) == v && ok, "%s: version %d is implemented but not in ONNX's history (%s)",
            op->name, v, all);
      t = strchr(t, ',');
      if (!t) break;
      t++;
    }
  }
  bool ok;
  CHECK(ecg_op_schema_version(ECG_OP_ReduceMax, 17, &ok) == 13 && ok, "ReduceMax at 17 is ReduceMax-13");
  CHECK(ecg_op_schema_version(ECG_OP_ReduceMax, 19, &ok) == 18 && ok, "ReduceMax at 19 is ReduceMax-18");
  CHECK(ecg_op_schema_version(ECG_OP_ReduceSum, 23, &ok) == 13 && ok, "ReduceSum at 23 is ReduceSum-13");
  CHECK(ecg_op_schema_version(ECG_OP_Relu, 23, &ok) == 14 && ok, "Relu at 23 is Relu-14");
  CHECK(ecg_op_schema_version(ECG_OP_Reshape, 24, &ok) == 24 && !ok, "Reshape-24 is not implemented");
  CHECK(ecg_op_schema_version(ECG_OP_Split, 1, &ok) == 1 && !ok, "Split-1 is not implemented");
  CHECK(ecg_op_schema_version(ECG_OP_CastLike, 14, &ok) == 0 && !ok, "CastLike has no schema before 15");
}

int main(void) {
  test_conv();
  test_convtranspose();
  test_pool();
  test_matmul_gemm();
  test_reshape_squeeze();
  test_slice_concat_gather();
  test_shuffle_chain();
  test_broadcast();
  test_op_domains();
  test_fold_math();
  test_fold_matmul();
  test_misc_shapes();
  test_op_versions();
  return unit_summary();
}
