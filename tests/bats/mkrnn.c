/* mkrnn: LSTM- and GRU-shaped graphs for EOP's evaluation (VEE '22 §3.5, Fig. 8; workload
 * parameters of its Table 3: TorchText LSTM/GRU, seq_len 1, input 80, hidden 64, 2 layers,
 * batch 16), written as ECG with seeded weights (built against build/libecg.a).  The cells
 * are unrolled into the operators the paper partitions (dense = MatMul + Add, split,
 * sigmoid, tanh, multiply, add, subtract), as TVM's frontend lowers TorchText's cells.
 *
 *   mkrnn lstm|gru OUT.ecg [BATCH INPUT HIDDEN LAYERS STEPS]
 *
 * LSTM cell (per layer and step; x [B, I], h and c [B, H]):
 *   gates = x W_ih + b_ih + h W_hh + b_hh            [B, 4H]
 *   i, f, g, o = Split(gates, 4, axis 1)
 *   c' = Sigmoid(f) * c + Sigmoid(i) * Tanh(g);  h' = Sigmoid(o) * Tanh(c')
 * GRU cell:
 *   gi = x W_ih + b_ih;  gh = h W_hh + b_hh           [B, 3H] each
 *   ir, iz, in = Split(gi);  hr, hz, hn = Split(gh)
 *   r = Sigmoid(ir + hr);  z = Sigmoid(iz + hz);  n = Tanh(in + r * hn)
 *   h' = (1 - z) * n + z * h
 * Inputs: x_t (one per step), and h0/c0 per layer; outputs: the last layer's h of the last
 * step, and every layer's final state.  Exit 0, 2 usage, 1 invalid graph or write error. */
#include <math.h>

#include "mkgraph.h"

static int64_t B = 16, I = 80, H = 64;

/* x W + b for x [B, in] and W [in, out]: the dense operator of TVM's lowering */
static int dense(ecg_graph *g, const char *name, int x, int64_t in, int64_t out) {
  char b[96];
  int64_t wd[2] = {in, out};
  snprintf(b, sizeof b, "%s_w", name);
  int w = mkg_weight(g, b, 2, wd, 1.0f / sqrtf((float)in));
  snprintf(b, sizeof b, "%s_b", name);
  int bias = mkg_weight(g, b, 1, &out, 0.1f);
  snprintf(b, sizeof b, "%s_mm", name);
  int y = MKG_OP(g, "MatMul", b, x, w);
  return MKG_OP(g, "Add", name, y, bias);
}

/* Split(x, n, axis 1) into out[0..n-1] */
static void split(ecg_graph *g, const char *name, int x, int n, int *out) {
  char b[96];
  for (int k = 0; k < n; k++) {
    snprintf(b, sizeof b, "%s_%d", name, k);
    out[k] = ecg_add_tensor(g, b, ECG_FLOAT, -1, NULL);
  }
  ecg_add_node(g, name, "Split", "", 13, 1, &x, n, out);
  ecg_attr_set_i(mkg_last(g), "axis", 1);
}

/* One LSTM cell; h and c updated in place. */
static void lstm_cell(ecg_graph *g, const char *p, int x, int64_t in, int *h, int *c) {
  char b[96];
#define NM(s) (snprintf(b, sizeof b, "%s_%s", p, s), b)
  int gi = dense(g, NM("ih"), x, in, 4 * H), gh = dense(g, NM("hh"), *h, H, 4 * H);
  int gates = MKG_OP(g, "Add", NM("gates"), gi, gh), q[4];
  split(g, NM("split"), gates, 4, q);
  int i = MKG_OP(g, "Sigmoid", NM("i"), q[0]), f = MKG_OP(g, "Sigmoid", NM("f"), q[1]);
  int gg = MKG_OP(g, "Tanh", NM("g"), q[2]), o = MKG_OP(g, "Sigmoid", NM("o"), q[3]);
  int fc = MKG_OP(g, "Mul", NM("fc"), f, *c), ig = MKG_OP(g, "Mul", NM("ig"), i, gg);
  *c = MKG_OP(g, "Add", NM("c"), fc, ig);
  int tc = MKG_OP(g, "Tanh", NM("tc"), *c);
  *h = MKG_OP(g, "Mul", NM("h"), o, tc);
#undef NM
}

/* One GRU cell; h updated in place. */
static void gru_cell(ecg_graph *g, const char *p, int x, int64_t in, int *h, int one) {
  char b[96];
#define NM(s) (snprintf(b, sizeof b, "%s_%s", p, s), b)
  int gi = dense(g, NM("ih"), x, in, 3 * H), gh = dense(g, NM("hh"), *h, H, 3 * H), si[3], sh[3];
  split(g, NM("split_i"), gi, 3, si);
  split(g, NM("split_h"), gh, 3, sh);
  int r = MKG_OP(g, "Sigmoid", NM("r"), MKG_OP(g, "Add", NM("r_in"), si[0], sh[0]));
  int z = MKG_OP(g, "Sigmoid", NM("z"), MKG_OP(g, "Add", NM("z_in"), si[1], sh[1]));
  int rn = MKG_OP(g, "Mul", NM("rn"), r, sh[2]);
  int n = MKG_OP(g, "Tanh", NM("n"), MKG_OP(g, "Add", NM("n_in"), si[2], rn));
  int omz = MKG_OP(g, "Sub", NM("omz"), one, z);
  int a = MKG_OP(g, "Mul", NM("a"), omz, n), zh = MKG_OP(g, "Mul", NM("zh"), z, *h);
  *h = MKG_OP(g, "Add", NM("h"), a, zh);
#undef NM
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 8) {
    fprintf(stderr, "usage: mkrnn lstm|gru OUT.ecg [BATCH INPUT HIDDEN LAYERS STEPS]\n");
    return 2;
  }
  bool lstm = !strcmp(argv[1], "lstm");
  if (!lstm && strcmp(argv[1], "gru")) { fprintf(stderr, "mkrnn: unknown kind '%s' (lstm, gru)\n", argv[1]); return 2; }
  int layers = 2, steps = 1;
  if (argc == 8) { B = atoll(argv[3]); I = atoll(argv[4]); H = atoll(argv[5]); layers = atoi(argv[6]); steps = atoi(argv[7]); }
  if (B < 1 || I < 1 || H < 1 || B > 4096 || I > 4096 || H > 4096 || layers < 1 || layers > 16 || steps < 1 || steps > 64) {
    fprintf(stderr, "mkrnn: BATCH, INPUT, HIDDEN must be 1..4096, LAYERS 1..16, STEPS 1..64\n");
    return 2;
  }
  ecg_graph *g = ecg_graph_new();
  g->name = strdup(argv[1]);
  g->opset = 13;
  char b[64];
  int h[16], c[16], x[64];
  int64_t xd[2] = {B, I}, sd[2] = {B, H}, one_d = 1;
  for (int t = 0; t < steps; t++) { snprintf(b, sizeof b, "x%d", t); x[t] = mkg_input(g, b, 2, xd); }
  for (int l = 0; l < layers; l++) {
    snprintf(b, sizeof b, "h0_l%d", l);
    h[l] = mkg_input(g, b, 2, sd);
    if (lstm) { snprintf(b, sizeof b, "c0_l%d", l); c[l] = mkg_input(g, b, 2, sd); }
  }
  int one = lstm ? -1 : mkg_fill(g, "one", 1, &one_d, 1.0f);
  for (int t = 0; t < steps; t++) {
    int in = x[t];
    for (int l = 0; l < layers; l++) {
      snprintf(b, sizeof b, "t%d_l%d", t, l);
      if (lstm) lstm_cell(g, b, in, l ? H : I, &h[l], &c[l]);
      else gru_cell(g, b, in, l ? H : I, &h[l], one);
      in = h[l];
    }
  }
  for (int l = 0; l < layers; l++) {
    mkg_output(g, h[l]);
    if (lstm) mkg_output(g, c[l]);
  }
  return mkg_finish("mkrnn", g, argv[2]);
}
