/* mkrewrite: write small ECG graphs on which one ecg-rewrite pass fires, for
 * tests/bats/rewrite.bats (built against build/libecg.a).
 *
 *   mkrewrite KIND OUT.ecg
 *
 * KIND: fold      y = x * (c1 + c2): the Add of two constants folds (16-byte output)
 *       bnfold    BatchNormalization after a Conv, a grouped ConvTranspose (group 2), a Gemm
 *                 (transB) and a 2-D MatMul: four folds
 *       cse       duplicated Relu/Sigmoid chains, Muls by two equal constant tensors, an Exp
 *                 duplicated with one copy a graph output (merged, name kept), and two Tanh
 *                 that are both graph outputs (kept): four merges
 *       simplify  x*1, 0+x, x-0, x/1, x^1, an identity and a composed Transpose pair, a
 *                 Reshape chain, neutral Reshape/Cast/Expand, a graph output x*1; 0-x and
 *                 x*2 stay
 *       padfold   zero Pads (pads as a constant input) before a stride-2 Conv with pads of its
 *                 own: folded; a Pad of value 0.5, a Pad of the channel axis (both before
 *                 Convs) and a zero Pad read by a Relu stay
 *       math      the rows of Table 3.4 (tools/rewrite/rules/1-table34.rules) by hand, one
 *                 output each, plus Relu(Relu(b)) and a sqrt-sqrt-mul shape whose B may be
 *                 negative (every rule on an instance of its own: tests/bats/mkrules.c)
 * Weights are seeded (fixed LCG), values in [-1, 1); BN variances in [0.5, 1.5).
 * Exit 0 on success, 2 usage, 1 invalid graph, 3 write error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkgraph.h"


/* A float32 constant of shape dims (rank r): fill v (value v, or random when rand). */
static int cf(ecg_graph *g, const char *name, int r, const int64_t *dims, float v, int rand) {
  int t = ecg_add_tensor(g, name, ECG_FLOAT, r, dims);
  int64_t n = ecg_tensor_numel(g->tensors[t]);
  float *d = malloc(sizeof *d * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) d[i] = rand ? mkg_rnd() * v + (rand == 2 ? 1.0f : 0.0f) : v;
  ecg_tensor_set_data(g->tensors[t], d, sizeof *d * (size_t)n);
  free(d);
  return t;
}

static int ci(ecg_graph *g, const char *name, int n, const int64_t *v) {
  int64_t d = n;
  int t = ecg_add_tensor(g, name, ECG_INT64, 1, &d);
  ecg_tensor_set_data(g->tensors[t], v, sizeof *v * (size_t)n);
  return t;
}


/* BN over C channels of x with seeded parameters. */
static int bn(ecg_graph *g, const char *name, int x, int64_t C) {
  char b[64];
  int p[4];
  for (int k = 0; k < 4; k++) {
    snprintf(b, sizeof b, "%s_p%d", name, k);
    p[k] = cf(g, b, 1, &C, k == 3 ? 0.5f : 1.0f, k == 3 || k == 0 ? 2 : 1);
  }
  return MKG_OP(g, "BatchNormalization", name, x, p[0], p[1], p[2], p[3]);
}

static void make_fold(ecg_graph *g) {
  int64_t d[2] = {1, 4}, c = 4;
  int x = mkg_input(g, "x", 2, d);
  int t = MKG_OP(g, "Add", "t", cf(g, "c1", 1, &c, 1, 1), cf(g, "c2", 1, &c, 1, 1));
  mkg_output(g, MKG_OP(g, "Mul", "y", x, t));
}

static void make_bnfold(ecg_graph *g) {
  int64_t xd[4] = {1, 4, 8, 8}, wd[4] = {4, 4, 3, 3}, td[4] = {4, 3, 3, 3}, c4 = 4, ad[2] = {2, 6}, gd[2] = {5, 6},
          md[2] = {6, 5}, c5 = 5;
  int x = mkg_input(g, "x", 4, xd), a = mkg_input(g, "a", 2, ad);
  int conv = MKG_OP(g, "Conv", "conv", x, cf(g, "w_conv", 4, wd, 0.5f, 1), cf(g, "b_conv", 1, &c4, 1, 1));
  ecg_attr_set_ints(mkg_last(g), "pads", 4, (int64_t[]){1, 1, 1, 1});
  mkg_output(g, bn(g, "y_conv", conv, 4));
  int ct = MKG_OP(g, "ConvTranspose", "convt", x, cf(g, "w_convt", 4, td, 0.5f, 1));
  ecg_attr_set_i(mkg_last(g), "group", 2);
  mkg_output(g, bn(g, "y_convt", ct, 6));
  int gemm = MKG_OP(g, "Gemm", "gemm", a, cf(g, "w_gemm", 2, gd, 1, 1), cf(g, "c_gemm", 1, &c5, 1, 1));
  ecg_attr_set_i(mkg_last(g), "transB", 1);
  ecg_attr_set_f(mkg_last(g), "beta", 0.5f);
  mkg_output(g, bn(g, "y_gemm", gemm, 5));
  int mm = MKG_OP(g, "MatMul", "mm", a, cf(g, "w_mm", 2, md, 1, 1));
  mkg_output(g, bn(g, "y_mm", mm, 5));
}

static void make_cse(ecg_graph *g) {
  int64_t d[2] = {1, 4}, c = 4;
  int x = mkg_input(g, "x", 2, d);
  int a = MKG_OP(g, "Relu", "a", x), b = MKG_OP(g, "Relu", "b", x);
  int sa = MKG_OP(g, "Sigmoid", "sa", a), sb = MKG_OP(g, "Sigmoid", "sb", b);
  int m1 = MKG_OP(g, "Mul", "m1", x, cf(g, "k1", 1, &c, 0.25f, 0)), m2 = MKG_OP(g, "Mul", "m2", x, cf(g, "k2", 1, &c, 0.25f, 0));
  int s = MKG_OP(g, "Add", "s", MKG_OP(g, "Add", "ab", a, b), MKG_OP(g, "Mul", "sab", sa, sb));
  mkg_output(g, MKG_OP(g, "Sub", "y", s, MKG_OP(g, "Sub", "m12", m1, m2)));
  int e1 = MKG_OP(g, "Exp", "e1", x);
  mkg_output(g, MKG_OP(g, "Neg", "y_neg", e1));
  mkg_output(g, MKG_OP(g, "Exp", "y_exp", x));
  mkg_output(g, MKG_OP(g, "Tanh", "y_tanh1", x));
  mkg_output(g, MKG_OP(g, "Tanh", "y_tanh2", x));
}

static void make_simplify(ecg_graph *g) {
  int64_t d[3] = {2, 3, 4}, one = 1, four = 4, d111[3] = {1, 1, 1};
  int x = mkg_input(g, "x", 3, d);
  int a = MKG_OP(g, "Mul", "a", x, cf(g, "one", 1, &one, 1, 0));
  int b = MKG_OP(g, "Add", "b", cf(g, "zeros4", 1, &four, 0, 0), a);
  int c = MKG_OP(g, "Sub", "c", b, cf(g, "zero", 0, NULL, 0, 0));
  int dv = MKG_OP(g, "Div", "dv", c, cf(g, "ones111", 3, d111, 1, 0));
  int e = MKG_OP(g, "Pow", "e", dv, cf(g, "pone", 0, NULL, 1, 0));
  int t1 = MKG_OP(g, "Transpose", "t1", e);
  ecg_attr_set_ints(mkg_last(g), "perm", 3, (int64_t[]){1, 0, 2});
  int t2 = MKG_OP(g, "Transpose", "t2", t1);
  ecg_attr_set_ints(mkg_last(g), "perm", 3, (int64_t[]){1, 0, 2});
  int t3 = MKG_OP(g, "Transpose", "t3", t2);
  ecg_attr_set_ints(mkg_last(g), "perm", 3, (int64_t[]){2, 0, 1});
  int t4 = MKG_OP(g, "Transpose", "t4", t3);
  int r1 = MKG_OP(g, "Reshape", "r1", t4, ci(g, "s1", 1, (int64_t[]){-1}));
  int r2 = MKG_OP(g, "Reshape", "r2", r1, ci(g, "s2", 2, (int64_t[]){4, 6}));
  int r3 = MKG_OP(g, "Reshape", "r3", r2, ci(g, "s3", 2, (int64_t[]){4, -1}));
  int cast = MKG_OP(g, "Cast", "cast", r3);
  ecg_attr_set_i(mkg_last(g), "to", ECG_FLOAT);
  int ex = MKG_OP(g, "Expand", "ex", cast, ci(g, "s4", 2, (int64_t[]){4, 6}));
  mkg_output(g, MKG_OP(g, "Relu", "y", ex));
  mkg_output(g, MKG_OP(g, "Mul", "y_mul1", MKG_OP(g, "Relu", "rx", x), cf(g, "one_b", 0, NULL, 1, 0)));
  mkg_output(g, MKG_OP(g, "Sub", "y_neg", cf(g, "zeros234", 3, d, 0, 0), x));
  mkg_output(g, MKG_OP(g, "Mul", "y_mul2", x, cf(g, "two", 0, NULL, 2, 0)));
}

static void make_math(ecg_graph *g) {
  int64_t d[2] = {2, 8}, c = 8;
  int A = mkg_input(g, "A", 2, d), B = mkg_input(g, "B", 2, d), C = mkg_input(g, "C", 2, d);
  int kb = cf(g, "kb", 1, &c, 0.5f, 2), kp = cf(g, "kp", 1, &c, 0.5f, 2), k1 = cf(g, "k1", 1, &c, 1, 1),
      k2 = cf(g, "k2", 1, &c, 1, 1);
  mkg_output(g, MKG_OP(g, "Mul", "y_recip_recip_mul", MKG_OP(g, "Reciprocal", "rA", A),
               MKG_OP(g, "Reciprocal", "rAk", MKG_OP(g, "Mul", "Ak", A, kb))));
  int s = MKG_OP(g, "Sqrt", "skp", kp);
  mkg_output(g, MKG_OP(g, "Mul", "y_sqrt_sqrt_mul", MKG_OP(g, "Mul", "As", A, s), MKG_OP(g, "Mul", "sC", s, C)));
  mkg_output(g, MKG_OP(g, "Mul", "y_abs_abs_mul", MKG_OP(g, "Mul", "aAB", MKG_OP(g, "Abs", "aA", A), B), MKG_OP(g, "Abs", "aC", C)));
  mkg_output(g, MKG_OP(g, "Mul", "y_mul_const_const", MKG_OP(g, "Mul", "Ak1", A, k1), k2));
  mkg_output(g, MKG_OP(g, "Add", "y_add_const_const", MKG_OP(g, "Add", "Ak1p", A, k1), k2));
  int sab = MKG_OP(g, "Add", "sab", A, B);
  mkg_output(g, MKG_OP(g, "Sub", "y_square_sub", MKG_OP(g, "Mul", "sq", sab, sab), MKG_OP(g, "Mul", "sabC", sab, C)));
  mkg_output(g, MKG_OP(g, "Add", "y_mul_add_factor", MKG_OP(g, "Mul", "AC", A, C), MKG_OP(g, "Mul", "AB", A, B)));
  mkg_output(g, MKG_OP(g, "Sub", "y_mul_sub_factor", MKG_OP(g, "Mul", "AC2", A, C), MKG_OP(g, "Mul", "BA2", B, A)));
  mkg_output(g, MKG_OP(g, "Add", "y_add_mul_one", A, MKG_OP(g, "Mul", "Akb", A, kb)));
  mkg_output(g, MKG_OP(g, "Mul", "y_exp_mul", MKG_OP(g, "Exp", "eA", A), MKG_OP(g, "Exp", "eB", B)));
  mkg_output(g, MKG_OP(g, "Mul", "y_recip_mul", MKG_OP(g, "Reciprocal", "rA2", A), MKG_OP(g, "Reciprocal", "rB2", B)));
  mkg_output(g, MKG_OP(g, "Mul", "y_abs_mul", MKG_OP(g, "Abs", "aA2", A), MKG_OP(g, "Abs", "aB2", B)));
  mkg_output(g, MKG_OP(g, "Mul", "y_neg_mul", MKG_OP(g, "Neg", "nA", A), MKG_OP(g, "Neg", "nB", B)));
  mkg_output(g, MKG_OP(g, "Relu", "y_neg_neg", MKG_OP(g, "Neg", "nnA", MKG_OP(g, "Neg", "nA2", A))));
  mkg_output(g, MKG_OP(g, "Relu", "y_relu_relu", MKG_OP(g, "Relu", "rB", B)));
  int sB = MKG_OP(g, "Sqrt", "sB", B);
  mkg_output(g, MKG_OP(g, "Mul", "y_sqrt_neg", MKG_OP(g, "Mul", "AsB", A, sB), MKG_OP(g, "Mul", "sBC", sB, C)));
}

/* Reduce op over trailing axes (keepdims 1, axes attribute as at opset 13). */
static int red(ecg_graph *g, const char *op_type, const char *out, int x, int na, const int64_t *axes) {
  int t = MKG_OP(g, op_type, out, x);
  ecg_attr_set_ints(mkg_last(g), "axes", na, axes);
  return t;
}

/* Row-reduction blocks (ecg-fuse's dnnfusion plan, tools/fuse/rows.c): LayerNorm with its
 * mean also a graph output, a decomposed Softmax (ReduceMax), RMSNorm over a computed
 * input reused across passes, a rank-4 block reducing two trailing axes with a
 * per-channel and a per-position operand, and ReduceMin/L2/LogSumExp/L1 in one block. */
static void make_rows(ecg_graph *g) {
  int64_t d3[3] = {2, 3, 16}, c16 = 16, d2[2] = {4, 10}, d4[4] = {1, 4, 5, 6}, ch[4] = {1, 4, 1, 1}, pos[2] = {5, 6};
  int64_t last1[1] = {-1}, hw[2] = {2, 3};
  int x = mkg_input(g, "x", 3, d3), s = mkg_input(g, "s", 2, d2), q = mkg_input(g, "q", 4, d4);
  /* LayerNorm */
  int mean = red(g, "ReduceMean", "ln_mean", x, 1, last1);
  mkg_output(g, mean);
  int xc = MKG_OP(g, "Sub", "ln_xc", x, mean);
  int var = red(g, "ReduceMean", "ln_var", MKG_OP(g, "Mul", "ln_sq", xc, xc), 1, last1);
  int den = MKG_OP(g, "Sqrt", "ln_den", MKG_OP(g, "Add", "ln_veps", var, cf(g, "eps", 0, NULL, 1e-5f, 0)));
  int y = MKG_OP(g, "Div", "ln_n", xc, den);
  mkg_output(g, MKG_OP(g, "Add", "y_layernorm", MKG_OP(g, "Mul", "ln_g", y, cf(g, "gamma", 1, &c16, 1, 2)), cf(g, "beta", 1, &c16, 1, 1)));
  /* Softmax */
  int mx = red(g, "ReduceMax", "sm_max", s, 1, last1);
  int ex = MKG_OP(g, "Exp", "sm_exp", MKG_OP(g, "Sub", "sm_sub", s, mx));
  mkg_output(g, MKG_OP(g, "Div", "y_softmax", ex, red(g, "ReduceSum", "sm_sum", ex, 1, last1)));
  /* RMSNorm over Relu(x) */
  int rx = MKG_OP(g, "Relu", "rms_x", x);
  int ms = red(g, "ReduceMean", "rms_ms", MKG_OP(g, "Mul", "rms_sq", rx, rx), 1, last1);
  int inv = MKG_OP(g, "Reciprocal", "rms_inv", MKG_OP(g, "Sqrt", "rms_rt", MKG_OP(g, "Add", "rms_eps", ms, cf(g, "eps2", 0, NULL, 1e-6f, 0))));
  mkg_output(g, MKG_OP(g, "Mul", "y_rmsnorm", MKG_OP(g, "Mul", "rms_n", rx, inv), cf(g, "gamma2", 1, &c16, 1, 2)));
  /* rank 4, two inner axes */
  int qm = red(g, "ReduceMean", "q_mean", q, 2, hw);
  int qa = MKG_OP(g, "Abs", "q_abs", MKG_OP(g, "Sub", "q_c", q, qm));
  int qs = red(g, "ReduceSumSquare", "q_ss", MKG_OP(g, "Mul", "q_ch", qa, cf(g, "chan", 4, ch, 1, 2)), 2, hw);
  mkg_output(g, MKG_OP(g, "Add", "y_rank4", MKG_OP(g, "Div", "q_div", qa, MKG_OP(g, "Add", "q_ss1", qs, cf(g, "one4", 0, NULL, 1, 0))),
               cf(g, "posb", 2, pos, 1, 1)));
  /* other reductions */
  int mn = red(g, "ReduceMin", "o_min", s, 1, last1), l2 = red(g, "ReduceL2", "o_l2", s, 1, last1);
  int lse = red(g, "ReduceLogSumExp", "o_lse", s, 1, last1), l1 = red(g, "ReduceL1", "o_l1", s, 1, last1);
  mkg_output(g, MKG_OP(g, "Add", "y_mixed", MKG_OP(g, "Mul", "o_m1", MKG_OP(g, "Sub", "o_s", s, mn), l2), MKG_OP(g, "Add", "o_ll", lse, l1)));
}

/* Transpose with the given perm. */
static int tr(ecg_graph *g, const char *out, int x, int r, const int64_t *perm) {
  int t = MKG_OP(g, "Transpose", out, x);
  ecg_attr_set_ints(mkg_last(g), "perm", r, perm);
  return t;
}

/* Index maps (ecg-fuse's maps.c, DNNFusion Fig. 3.5): permutations read only by a MatMul
 * (A with a contiguous K, A transposed, B transposed, a broadcast batch) and one writing
 * its result, which become strides of the GEMM; and one the GEMM cannot take (no matrix
 * dim contiguous), which stays a kernel. */
static void make_maps(ecg_graph *g) {
  int64_t dx[4] = {2, 3, 4, 5}, dw[4] = {2, 4, 6, 5}, da[2] = {4, 3}, db[2] = {4, 2}, dc[3] = {3, 4, 5}, dd[2] = {5, 2};
  int x = mkg_input(g, "x", 4, dx), w = mkg_input(g, "w", 4, dw), a = mkg_input(g, "a", 2, da), c = mkg_input(g, "c", 3, dc);
  int xa = tr(g, "x_t", x, 4, (int64_t[]){0, 2, 1, 3}), wt = tr(g, "w_t", w, 4, (int64_t[]){0, 1, 3, 2});
  mkg_output(g, tr(g, "y_heads", MKG_OP(g, "MatMul", "mm_heads", xa, wt), 4, (int64_t[]){0, 2, 1, 3}));
  mkg_output(g, MKG_OP(g, "MatMul", "y_transA", tr(g, "a_t", a, 2, (int64_t[]){1, 0}), cf(g, "bconst", 2, db, 1, 1)));
  mkg_output(g, MKG_OP(g, "MatMul", "y_bcast", tr(g, "c_t", c, 3, (int64_t[]){1, 0, 2}), cf(g, "dconst", 2, dd, 1, 1)));
  mkg_output(g, MKG_OP(g, "MatMul", "y_nomap", tr(g, "x_bad", x, 4, (int64_t[]){3, 2, 0, 1}), cf(g, "e", 2, (int64_t[]){3, 2}, 1, 1)));
}

static void make_padfold(ecg_graph *g) {
  int64_t xd[4] = {1, 4, 9, 10}, wd[4] = {6, 4, 3, 3}, wc[4] = {6, 6, 3, 3}, one = 1;
  int x = mkg_input(g, "x", 4, xd);
  int p1 = MKG_OP(g, "Pad", "p1", x, ci(g, "pads1", 8, (int64_t[]){0, 0, 1, 2, 0, 0, 2, 1}));
  int c1 = MKG_OP(g, "Conv", "c1", p1, cf(g, "w1", 4, wd, 0.5f, 1), cf(g, "b1", 1, (int64_t[]){6}, 1, 1));
  ecg_attr_set_ints(mkg_last(g), "pads", 4, (int64_t[]){0, 1, 1, 0});
  ecg_attr_set_ints(mkg_last(g), "strides", 2, (int64_t[]){2, 2});
  mkg_output(g, c1);
  int p2 = MKG_OP(g, "Pad", "p2", x, ci(g, "pads2", 8, (int64_t[]){0, 0, 1, 1, 0, 0, 1, 1}), cf(g, "half", 0, &one, 0.5f, 0));
  mkg_output(g, MKG_OP(g, "Conv", "c2", p2, cf(g, "w2", 4, wd, 0.5f, 1)));
  int p3 = MKG_OP(g, "Pad", "p3", x, ci(g, "pads3", 8, (int64_t[]){0, 1, 0, 0, 0, 1, 0, 0}));
  mkg_output(g, MKG_OP(g, "Conv", "c3", p3, cf(g, "w3", 4, wc, 0.5f, 1)));
  int p4 = MKG_OP(g, "Pad", "p4", x, ci(g, "pads4", 8, (int64_t[]){0, 0, 1, 1, 0, 0, 1, 1}));
  mkg_output(g, MKG_OP(g, "Relu", "r4", p4));
}

int main(int argc, char **argv) {
  mkg_seed = 12345;
  if (argc != 3) { fprintf(stderr, "usage: mkrewrite fold|bnfold|padfold|cse|simplify|math|rows|maps OUT.ecg\n"); return 2; }
  static const struct { const char *kind; void (*make)(ecg_graph *); } KINDS[] = {
      {"fold", make_fold}, {"bnfold", make_bnfold}, {"padfold", make_padfold}, {"cse", make_cse}, {"simplify", make_simplify},
      {"math", make_math}, {"rows", make_rows}, {"maps", make_maps}};
  ecg_graph *g = ecg_graph_new();
  g->name = strdup(argv[1]);
  g->opset = 13;
  size_t k = 0;
  while (k < sizeof KINDS / sizeof *KINDS && strcmp(KINDS[k].kind, argv[1])) k++;
  if (k == sizeof KINDS / sizeof *KINDS) { fprintf(stderr, "mkrewrite: unknown kind '%s'\n", argv[1]); return 2; }
  KINDS[k].make(g);
  ecg_err e = {0};
  int rc = ecg_infer_shapes(g, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc == ECG_OK) rc = ecg_write_path(argv[2], g, 0, &e);
  if (rc != ECG_OK) fprintf(stderr, "mkrewrite: %s\n", e.msg);
  ecg_graph_free(g);
  return rc;
}
