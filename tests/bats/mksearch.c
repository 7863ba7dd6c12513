/* mksearch: the OCGGS benchmark graphs (Fang et al., PVLDB 2020, §6 Fig. 4; digest-ocggs.md
 * §3) and small graphs for the subst pass's tests (tests/bats/search.bats, make
 * bench-search), written as ECG with seeded weights (built against build/libecg.a).
 *
 *   mksearch KIND N OUT.ecg [C HW]
 *
 * KIND: resnet     N ResNet blocks on x [1,C,HW,HW] (default C 256, HW 14): per block
 *                  a = Relu(Conv3x3(x)), b = Conv3x3(a), s = Relu(Conv1x1(x)),
 *                  y = Relu(b + s)  (5 operators plus the two Relu of the branches)
 *       inception  N Inception-v3 E blocks on x [1,C,HW,HW] (default C 1280, HW 8): 1x1
 *                  (320), 1x1 (384) -> {1x3, 3x1} (384 each), 1x1 (448) -> 3x3 (384) ->
 *                  {1x3, 3x1}, AveragePool 3x3 -> 1x1 (192), each Conv followed by Relu,
 *                  branch outputs concatenated (2048 channels)
 *       cycle      x [8,8]: y1 = x@W1, z = Relu(y1), y2 = x@z, y3 = x@W3: merging y1 and
 *                  y2 would make a cycle (z reads y1), the other pairs are fine
 *       concat     Concat(Add(a,b), Add(c,d)) and Relu on both outputs of a Split of it,
 *                  and Mul(Concat(a,b), Concat(c,d)): concat-ew, split-unary and
 *                  ew-concat sites (N unused)
 *       convcat    Relu(Concat(Conv3x3(x), Conv3x3(x))) on x [1,C,HW,HW] (default C 8,
 *                  HW 6): conv-merge, then split-concat (N unused)
 *       mathconv   Mul(Neg(Conv3x3(x)), c1) and Mul(Neg(Conv3x3(x)), c2), both outputs,
 *                  on x [1,C,HW,HW] (default C 8, HW 6), c1, c2 [C,1,1] constants: the
 *                  rule file's mul-neg-const beside conv-merge and split-unary (N unused)
 * Weights are seeded (fixed LCG), uniform in [-1, 1) times 1/sqrt(fan-in).
 * Exit 0 on success, 2 usage, 1 invalid graph or write error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkgraph.h"


/* Relu(Conv(x)) (relu = 0: no Relu) with M output channels, kernel kh x kw, "same"
 * padding, stride 1, seeded weights and bias. */
static int conv(ecg_graph *g, const char *name, int x, int64_t c, int64_t m, int64_t kh, int64_t kw, int relu) {
  char b[96];
  int64_t wd[4] = {m, c, kh, kw};
  snprintf(b, sizeof b, "%s_w", name);
  int w = mkg_weight(g, b, 4, wd, 1.0f / sqrtf((float)(c * kh * kw)));
  snprintf(b, sizeof b, "%s_b", name);
  int bias = mkg_weight(g, b, 1, &m, 0.1f);
  snprintf(b, sizeof b, "%s%s", name, relu ? "_conv" : "");
  int y = MKG_OP(g, "Conv", b, x, w, bias);
  int64_t k[2] = {kh, kw}, pads[4] = {(kh - 1) / 2, (kw - 1) / 2, (kh - 1) / 2, (kw - 1) / 2};
  ecg_attr_set_ints(mkg_last(g), "kernel_shape", 2, k);
  ecg_attr_set_ints(mkg_last(g), "pads", 4, pads);
  return relu ? MKG_OP(g, "Relu", name, y) : y;
}

static int resnet(ecg_graph *g, int x, int n, int64_t c) {
  char b[64];
  for (int i = 0; i < n; i++) {
    snprintf(b, sizeof b, "r%d_a", i);
    int a = conv(g, b, x, c, c, 3, 3, 1);
    snprintf(b, sizeof b, "r%d_b", i);
    int bb = conv(g, b, a, c, c, 3, 3, 0);
    snprintf(b, sizeof b, "r%d_s", i);
    int s = conv(g, b, x, c, c, 1, 1, 1);
    snprintf(b, sizeof b, "r%d_add", i);
    int y = MKG_OP(g, "Add", b, bb, s);
    snprintf(b, sizeof b, "r%d_out", i);
    x = MKG_OP(g, "Relu", b, y);
  }
  return x;
}

static int concat(ecg_graph *g, const char *name, int n, const int *in) {
  int y = mkg_op(g, "Concat", name, n, in);
  ecg_attr_set_i(mkg_last(g), "axis", 1);
  return y;
}

static int inception(ecg_graph *g, int x, int n, int64_t c) {
  char b[64];
  for (int i = 0; i < n; i++) {
#define NM(s) (snprintf(b, sizeof b, "e%d_%s", i, s), b)
    int b1 = conv(g, NM("1x1"), x, c, 320, 1, 1, 1);
    int b3 = conv(g, NM("3_1x1"), x, c, 384, 1, 1, 1);
    int b3a = conv(g, NM("3_1x3"), b3, 384, 384, 1, 3, 1);
    int b3b = conv(g, NM("3_3x1"), b3, 384, 384, 3, 1, 1);
    int b3c = concat(g, NM("3_cat"), 2, (int[]){b3a, b3b});
    int bd = conv(g, NM("d_1x1"), x, c, 448, 1, 1, 1);
    int bd3 = conv(g, NM("d_3x3"), bd, 448, 384, 3, 3, 1);
    int bda = conv(g, NM("d_1x3"), bd3, 384, 384, 1, 3, 1);
    int bdb = conv(g, NM("d_3x1"), bd3, 384, 384, 3, 1, 1);
    int bdc = concat(g, NM("d_cat"), 2, (int[]){bda, bdb});
    int p = MKG_OP(g, "AveragePool", NM("pool"), x);
    int64_t k[2] = {3, 3}, pads[4] = {1, 1, 1, 1}, st[2] = {1, 1};
    ecg_attr_set_ints(mkg_last(g), "kernel_shape", 2, k);
    ecg_attr_set_ints(mkg_last(g), "pads", 4, pads);
    ecg_attr_set_ints(mkg_last(g), "strides", 2, st);
    int bp = conv(g, NM("p_1x1"), p, c, 192, 1, 1, 1);
    x = concat(g, NM("out"), 4, (int[]){b1, b3c, bdc, bp});
    c = 2048;
#undef NM
  }
  return x;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 6) {
    fprintf(stderr, "usage: mksearch resnet|inception|cycle|concat N OUT.ecg [C HW]\n");
    return 2;
  }
  const char *kind = argv[1];
  int n = atoi(argv[2]);
  bool res = !strcmp(kind, "resnet"), inc = !strcmp(kind, "inception");
  int64_t c = argc == 6 ? atoll(argv[4]) : res ? 256 : 1280, hw = argc == 6 ? atoll(argv[5]) : res ? 14 : 8;
  if (n < 1 || n > 64 || c < 1 || hw < 1) { fprintf(stderr, "mksearch: N must be 1..64, C and HW >= 1\n"); return 2; }
  ecg_graph *g = ecg_graph_new();
  g->name = strdup(kind);
  g->opset = 13;
  if (res || inc) {
    int64_t d[4] = {1, c, hw, hw};
    int x = mkg_input(g, "x", 4, d);
    mkg_output(g, res ? resnet(g, x, n, c) : inception(g, x, n, c));
  } else if (!strcmp(kind, "cycle")) {
    int64_t d[2] = {8, 8};
    int x = mkg_input(g, "x", 2, d);
    int y1 = MKG_OP(g, "MatMul", "y1", x, mkg_weight(g, "w1", 2, d, 0.3f));
    int z = MKG_OP(g, "Relu", "z", y1);
    mkg_output(g, MKG_OP(g, "MatMul", "y2", x, z));
    mkg_output(g, MKG_OP(g, "MatMul", "y3", x, mkg_weight(g, "w3", 2, d, 0.3f)));
  } else if (!strcmp(kind, "concat")) {
    int64_t d[2] = {4, 6};
    int a = mkg_input(g, "a", 2, d), b = mkg_input(g, "b", 2, d), cc = mkg_input(g, "c", 2, d), dd = mkg_input(g, "d", 2, d);
    int s = MKG_OP(g, "Add", "ab", a, b), t = MKG_OP(g, "Add", "cd", cc, dd);
    int y = mkg_op(g, "Concat", "cat", 2, (int[]){s, t});
    ecg_attr_set_i(mkg_last(g), "axis", 0);
    mkg_output(g, y);
    int64_t two = 2, sz[2] = {2, 4};
    int st = ecg_add_tensor(g, "sizes", ECG_INT64, 1, &two);
    ecg_tensor_set_data(g->tensors[st], sz, sizeof sz);
    g->tensors[st]->is_const = true;
    int outs[2] = {ecg_add_tensor(g, "sp0", ECG_FLOAT, -1, NULL), ecg_add_tensor(g, "sp1", ECG_FLOAT, -1, NULL)};
    ecg_add_node(g, "split", "Split", "", 13, 2, (int[]){y, st}, 2, outs);
    ecg_attr_set_i(mkg_last(g), "axis", 1);
    mkg_output(g, MKG_OP(g, "Relu", "r0", outs[0]));
    mkg_output(g, MKG_OP(g, "Relu", "r1", outs[1]));
    int l = mkg_op(g, "Concat", "cat_ab", 2, (int[]){a, b});
    ecg_attr_set_i(mkg_last(g), "axis", 0);
    int r = mkg_op(g, "Concat", "cat_cd", 2, (int[]){cc, dd});
    ecg_attr_set_i(mkg_last(g), "axis", 0);
    mkg_output(g, MKG_OP(g, "Mul", "m", l, r));
  } else if (!strcmp(kind, "convcat")) {
    int64_t cc = argc == 6 ? c : 8, h = argc == 6 ? hw : 6, d[4] = {1, cc, h, h};
    int x = mkg_input(g, "x", 4, d);
    int p = conv(g, "p", x, cc, cc, 3, 3, 0), q = conv(g, "q", x, cc, cc, 3, 3, 0);
    mkg_output(g, MKG_OP(g, "Relu", "y", concat(g, "pq", 2, (int[]){p, q})));
  } else if (!strcmp(kind, "mathconv")) {
    int64_t cc = argc == 6 ? c : 8, h = argc == 6 ? hw : 6, d[4] = {1, cc, h, h}, cd[3] = {cc, 1, 1};
    int x = mkg_input(g, "x", 4, d);
    int p = conv(g, "p", x, cc, cc, 3, 3, 0), q = conv(g, "q", x, cc, cc, 3, 3, 0);
    mkg_output(g, MKG_OP(g, "Mul", "yp", MKG_OP(g, "Neg", "np", p), mkg_weight(g, "c1", 3, cd, 1.0f)));
    mkg_output(g, MKG_OP(g, "Mul", "yq", MKG_OP(g, "Neg", "nq", q), mkg_weight(g, "c2", 3, cd, 1.0f)));
  } else {
    fprintf(stderr, "mksearch: unknown kind '%s'\n", kind);
    return 2;
  }
  ecg_err e = {0};
  int rc = ecg_infer_shapes(g, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc == ECG_OK) rc = ecg_write_path(argv[3], g, 0, &e);
  if (rc != ECG_OK) fprintf(stderr, "mksearch: %s\n", e.msg);
  ecg_graph_free(g);
  return rc ? 1 : 0;
}
