/* Emitters for the recurrent and assorted Many-to-Many operators (format/ops/rnn.c):
 * RNN, GRU, LSTM (float32: the input projection of all time steps is one ecg_rt1_sgemm,
 * the recurrent projection one ecg_rt1_sgemm per step; gates in a plain loop), Einsum (an
 * index loop nest over the equation's variables), LRN, MeanVarianceNormalization,
 * Det (LU with partial pivoting in double), and Dropout in inference (a copy and an
 * all-true mask).  Variants not implemented fail with "... not supported". */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../../format/ops/einsum_eq.h"
#include "emit.h"


/* Tensor id of input/output i of n, or -1 when absent. */
static int in_id(const ecg_node *n, int i) { return i < (int)n->n_inputs ? n->inputs[i] : -1; }
static int out_id(const ecg_node *n, int i) { return i < (int)n->n_outputs ? n->outputs[i] : -1; }
static int dtype_of(const ecg_lower *L, int id) { return L->g->tensors[id]->dtype; }

/* ---------------------------------------------------------------- RNN, GRU, LSTM */

/* A recurrent activation: a C float expression template over the variable "v". */
typedef struct rnn_act { char expr[160]; } rnn_act;

/* Build activation `name` (ONNX RNN activation list, case-insensitive) with its
 * alpha/beta taken from the lists at positions ia, ib (consumed in order by the functions that
 * use them).  Returns 0, or -1 with msg filled. */
static int rnn_act_make(const char *name, const float *al, int nal, int *ia, const float *be, int nbe, int *ib,
                        rnn_act *a, char *msg, size_t n_msg) {
  int need_a = 0, need_b = 0;
  double da = 0, db = 0;
  const char *tmpl = NULL;
  if (!strcasecmp(name, "Relu")) tmpl = "(v > 0.0f ? v : 0.0f)";
  else if (!strcasecmp(name, "Tanh")) tmpl = "tanhf(v)";
  else if (!strcasecmp(name, "Sigmoid")) tmpl = "(1.0f / (1.0f + expf(-v)))";
  else if (!strcasecmp(name, "Softsign")) tmpl = "(v / (1.0f + fabsf(v)))";
  else if (!strcasecmp(name, "Softplus")) tmpl = "(v > 20.0f ? v : log1pf(expf(v)))";
  else if (!strcasecmp(name, "LeakyRelu")) { tmpl = "(v >= 0.0f ? v : A * v)"; need_a = 1; da = 0.01; }
  else if (!strcasecmp(name, "ThresholdedRelu")) { tmpl = "(v >= A ? v : 0.0f)"; need_a = 1; da = 1.0; }
  else if (!strcasecmp(name, "Elu")) { tmpl = "(v >= 0.0f ? v : A * (expf(v) - 1.0f))"; need_a = 1; da = 1.0; }
  else if (!strcasecmp(name, "HardSigmoid")) { tmpl = "fminf(fmaxf(A * v + B, 0.0f), 1.0f)"; need_a = need_b = 1; da = 0.2; db = 0.5; }
  else if (!strcasecmp(name, "Affine")) { tmpl = "(A * v + B)"; need_a = need_b = 2; }
  else if (!strcasecmp(name, "ScaledTanh")) { tmpl = "(A * tanhf(B * v))"; need_a = need_b = 2; }
  else { snprintf(msg, n_msg, "activation '%s' is not supported", name); return -1; }
  /* need 2: no default, the value must be given */
  if (need_a) {
    if (*ia < nal) da = al[(*ia)++];
    else if (need_a == 2) { snprintf(msg, n_msg, "activation '%s' without activation_alpha is not supported", name); return -1; }
  }
  if (need_b) {
    if (*ib < nbe) db = be[(*ib)++];
    else if (need_b == 2) { snprintf(msg, n_msg, "activation '%s' without activation_beta is not supported", name); return -1; }
  }
  /* expand: v -> (v), A -> alpha, B -> beta */
  size_t o = 0;
  for (const char *p = tmpl; *p && o + 40 < sizeof a->expr; p++) {
    if (*p == 'v' && !(p > tmpl && (p[-1] >= 'a' && p[-1] <= 'z'))) o += (size_t)snprintf(a->expr + o, sizeof a->expr - o, "(v)");
    else if (*p == 'A') o += (size_t)snprintf(a->expr + o, sizeof a->expr - o, "(%.9gf)", da);
    else if (*p == 'B') o += (size_t)snprintf(a->expr + o, sizeof a->expr - o, "(%.9gf)", db);
    else a->expr[o++] = *p;
  }
  a->expr[o] = 0;
  return 0;
}

/* "act(expr)": activation a applied to the C expression x (spliced for "(v)"). */
static const char *rnn_apply(const rnn_act *a, const char *x, char *buf, size_t n) {
  size_t o = 0;
  for (const char *p = a->expr; *p && o + 1 < n;) {
    if (!strncmp(p, "(v)", 3)) {
      o += (size_t)snprintf(buf + o, n - o, "(%s)", x);
      p += 3;
    } else {
      buf[o++] = *p++;
    }
  }
  buf[o < n ? o : n - 1] = 0;
  return buf;
}

/* k * x * y (y may be NULL) as C: a number when x and y are numbers (a static build prints
 * exactly what it always printed), else the product of the expressions. */
static const char *rnn_prod(char *b, size_t n, long long k, const char *x, const char *y) {
  char *ex, *ey = "";
  long long vx = strtoll(x, &ex, 10), vy = y ? strtoll(y, &ey, 10) : 1;
  if (!*ex && !*ey) snprintf(b, n, "%lld", k * vx * vy);
  else snprintf(b, n, "((int64_t)%lld * (%s)%s%s%s)", k, x, y ? " * (" : "", y ? y : "", y ? ")" : "");
  return b;
}

/** RNN / GRU (linear_before_reset 0 or 1) / LSTM (peepholes), float32: directions
 *  forward, reverse, bidirectional; layout 0/1; optional B, sequence_lens (read at
 *  run time: steps past a batch entry's length leave its state alone and its Y rows
 *  zero), initial_h, initial_c, P; outputs Y, Y_h, Y_c each optional. */
int emit_rnn(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ecg_op_id id = lw_op(n);
  int G = id == ECG_OP_LSTM ? 4 : id == ECG_OP_GRU ? 3 : 1, nact = G == 4 ? 3 : G == 3 ? 2 : 1;
  bool lstm = G == 4, gru = G == 3;
  for (size_t k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] >= 0 && k != 4 && dtype_of(L, n->inputs[k]) != ECG_FLOAT) return lw_node_err(L, n, e, "only float32 is supported");
  if (ecg_attr_find(n, "clip")) return lw_node_err(L, n, e, "attribute 'clip' is not supported");
  if (lstm && ecg_attr_i(n, "input_forget", 0)) return lw_node_err(L, n, e, "input_forget is not supported");
  int64_t xd[ECG_MAX_RANK], wd[ECG_MAX_RANK];
  lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->inputs[1], wd);
  int layout = (int)ecg_attr_i(n, "layout", 0);
  char dir[32];
  ecg_attr_s(n, "direction", "forward", dir, sizeof dir);
  int D = (int)wd[0], rev0 = !strcmp(dir, "reverse");
  long long I = xd[2], GH = wd[1], H = GH / G;
  /* the sequence length S and batch B: numbers, or in a dynamic build (symbolic dims) the
   * locals S_ and B_ of the generated block, set from their run-time expressions */
  char S[32], B[32], Sx[700], Bx[700];
  snprintf(Sx, sizeof Sx, "%s", lw_dim(L, n->inputs[0], layout ? 1 : 0));
  snprintf(Bx, sizeof Bx, "%s", lw_dim(L, n->inputs[0], layout ? 0 : 1));
  int dyn_sb = lw_node_dyn(L, n);
  snprintf(S, sizeof S, "%.31s", dyn_sb ? "S_" : Sx);
  snprintf(B, sizeof B, "%.31s", dyn_sb ? "B_" : Bx);
  if (I < 0 || GH < 0) return lw_node_err(L, n, e, "an input size or hidden size that is not static is not supported");
  int lbr = gru && ecg_attr_i(n, "linear_before_reset", 0) != 0;
  /* activations: nact per direction; one set given for two directions is reused */
  rnn_act act[6];
  const ecg_attr *aa = ecg_attr_find(n, "activations");
  const float *al = NULL, *be = NULL;
  int nal = ecg_attr_floats(n, "activation_alpha", &al), nbe = ecg_attr_floats(n, "activation_beta", &be), ia = 0, ib = 0;
  if (nal < 0) nal = 0;
  if (nbe < 0) nbe = 0;
  char msg[200], nm[64];
  int given = aa ? (int)aa->n_strings : 0;
  if (given && given != nact && given != nact * D) {
    snprintf(msg, sizeof msg, "%d activations for %d per direction and %d directions", given, nact, D);
    return lw_node_err(L, n, e, "%s", msg);
  }
  static const char *const defs[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  for (int k = 0; k < nact * D; k++) {
    if (given) {
      const ProtobufCBinaryData *s = &aa->strings[given == nact ? k % nact : k];
      snprintf(nm, sizeof nm, "%.*s", (int)s->len, (const char *)s->data);
    } else {
      snprintf(nm, sizeof nm, "%s", defs[nact - 1][k % nact]);
    }
    if (given == nact && k >= nact) { act[k] = act[k - nact]; continue; }
    if (rnn_act_make(nm, al, nal, &ia, be, nbe, &ib, &act[k], msg, sizeof msg)) return lw_node_err(L, n, e, "%s", msg);
  }

  int bi = in_id(n, 3), sli = in_id(n, 4), h0i = in_id(n, 5), c0i = lstm ? in_id(n, 6) : -1, pi = lstm ? in_id(n, 7) : -1;
  int yi = out_id(n, 0), yhi = out_id(n, 1), yci = lstm ? out_id(n, 2) : -1;
  char sz[2600], p1[800], p2[800], p3[800];
  rnn_prod(p1, sizeof p1, GH, Sx, Bx);
  rnn_prod(p2, sizeof p2, GH, Bx, NULL);
  rnn_prod(p3, sizeof p3, 4 * H, Bx, NULL);
  if (!dyn_sb) snprintf(sz, sizeof sz, "%lld", atoll(p1) + atoll(p2) + atoll(p3));
  else snprintf(sz, sizeof sz, "(%s + %s + %s)", p1, p2, p3);
  lw_need_scratch(L, sz);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n");
  if (dyn_sb) sb_printf(c, "    const int64_t S_ = %s, B_ = %s;\n", Sx, Bx);
  sb_printf(c, "    const float *X = %s;\n", lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    const float *W = %s;\n", lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    const float *R = %s;\n", lw_ptr(L, n->inputs[2]));
  if (bi >= 0) sb_printf(c, "    const float *Bb = %s;\n", lw_ptr(L, bi));
  if (sli >= 0) sb_printf(c, "    const int32_t *SL = %s;\n", lw_ptr(L, sli));
  if (h0i >= 0) sb_printf(c, "    const float *H0 = %s;\n", lw_ptr(L, h0i));
  if (c0i >= 0) sb_printf(c, "    const float *C0 = %s;\n", lw_ptr(L, c0i));
  if (pi >= 0) sb_printf(c, "    const float *P = %s;\n", lw_ptr(L, pi));
  if (yi >= 0) sb_printf(c, "    float *Y = %s;\n    memset(Y, 0, sizeof(float) * %s);\n", lw_ptr(L, yi), rnn_prod(p1, sizeof p1, D * H, S, B));
  if (yhi >= 0) sb_printf(c, "    float *YH = %s;\n", lw_ptr(L, yhi));
  if (yci >= 0) sb_printf(c, "    float *YC = %s;\n", lw_ptr(L, yci));
  rnn_prod(p1, sizeof p1, GH, S, B);
  rnn_prod(p2, sizeof p2, GH, B, NULL);
  rnn_prod(p3, sizeof p3, H, B, NULL);
  sb_printf(c, "    float *xw = ctx->scratch, *hr = xw + %s, *h = hr + %s, *cs = h + %s, *rh = cs + %s, *zb = rh + %s;\n", p1, p2, p3, p3, p3);
  sb_printf(c, "    (void)cs; (void)rh; (void)zb;\n");
  const char *len_expr = sli >= 0 ? "int64_t len = SL[b] < 0 ? 0 : (SL[b] > %s ? %s : SL[b]);\n" : "int64_t len = %s; (void)%s;\n";
  char hidx[96], yidx[128], row[96];
  snprintf(row, sizeof row, layout ? "(b * %s + t)" : "(t * %s + b)", layout ? S : B);
  for (int d = 0; d < D; d++) {
    int rev = D == 2 ? d == 1 : rev0;
    const rnn_act *f = &act[d * nact], *g2 = nact > 1 ? &act[d * nact + 1] : NULL, *h3 = nact > 2 ? &act[d * nact + 2] : NULL;
    if (layout) snprintf(hidx, sizeof hidx, "(b * %d + %d) * %lld", D, d, H);
    else snprintf(hidx, sizeof hidx, "(%d * %s + b) * %lld", d, B, H);
    if (layout) snprintf(yidx, sizeof yidx, "((b * %s + t) * %d + %d) * %lld", S, D, d, H);
    else snprintf(yidx, sizeof yidx, "((t * %d + %d) * %s + b) * %lld", D, d, B, H);
    /* gate k, unit j bias: Wb[k] + Rb[k] */
    char bias[8][96];
    for (int k = 0; k < G; k++) {
      if (bi >= 0) snprintf(bias[k], sizeof bias[k], " + Bb[%lld + j] + Bb[%lld + j]", d * 2 * GH + k * H, d * 2 * GH + GH + k * H);
      else bias[k][0] = 0;
    }
    sb_printf(c, "    /* direction %d (%s) */\n", d, rev ? "reverse" : "forward");
    sb_printf(c, "    ecg_rt1_sgemm(0, 1, %s, %lld, %lld, 1.0f, X, %lld, W + %lld, %lld, 0.0f, xw, %lld);\n", rnn_prod(p1, sizeof p1, 1, S, B), GH, I, I,
              (long long)d * GH * I, I, GH);
    sb_printf(c, "    for (int64_t b = 0; b < %s; b++)\n      for (int64_t j = 0; j < %lld; j++) {\n", B, H);
    if (h0i >= 0) sb_printf(c, "        h[b * %lld + j] = H0[%s + j];\n", H, hidx);
    else sb_printf(c, "        h[b * %lld + j] = 0.0f;\n", H);
    if (lstm) {
      if (c0i >= 0) sb_printf(c, "        cs[b * %lld + j] = C0[%s + j];\n", H, hidx);
      else sb_printf(c, "        cs[b * %lld + j] = 0.0f;\n", H);
    }
    sb_printf(c, "      }\n");
    sb_printf(c, "    for (int64_t s = 0; s < %s; s++) {\n", S);
    sb_printf(c, "      ecg_rt1_sgemm(0, 1, %s, %lld, %lld, 1.0f, h, %lld, R + %lld, %lld, 0.0f, hr, %lld);\n", B,
              gru && !lbr ? 2 * H : GH, H, H, (long long)d * GH * H, H, GH);
    sb_printf(c, "      for (int64_t b = 0; b < %s; b++) {\n        ", B);
    sb_printf(c, len_expr, S, S);
    sb_printf(c, "        if (s >= len) { for (int64_t j = 0; j < %lld; j++) rh[b * %lld + j] = 0.0f; continue; }\n", H, H);
    sb_printf(c, "        int64_t t = %s;\n", rev ? "len - 1 - s" : "s");
    sb_printf(c, "        const float *gx = xw + %s * %lld, *q = hr + b * %lld;\n", row, GH, GH);
    sb_printf(c, "        float *hb = h + b * %lld, *cb = cs + b * %lld;\n        (void)cb;\n", H, H);
    sb_printf(c, "        for (int64_t j = 0; j < %lld; j++) {\n", H);
    char e1[400], e2[400], e3[400];
    bool write_h = true;
    if (G == 1) {
      sb_printf(c, "          float v = gx[j] + q[j]%s;\n", bias[0]);
      sb_printf(c, "          float hn = %s;\n", rnn_apply(f, "v", e1, sizeof e1));
    } else if (lstm) {
      sb_printf(c, "          float cp = cb[j];\n");
      sb_printf(c, "          float vi = gx[j] + q[j]%s", bias[0]);
      if (pi >= 0) sb_printf(c, " + P[%lld + j] * cp", (long long)d * 3 * H);
      sb_printf(c, ";\n          float vf = gx[%lld + j] + q[%lld + j]%s", 2 * H, 2 * H, bias[2]);
      if (pi >= 0) sb_printf(c, " + P[%lld + j] * cp", (long long)d * 3 * H + 2 * H);
      sb_printf(c, ";\n          float vc = gx[%lld + j] + q[%lld + j]%s;\n", 3 * H, 3 * H, bias[3]);
      sb_printf(c, "          float it = %s, ft = %s, ct = %s;\n", rnn_apply(f, "vi", e1, sizeof e1), rnn_apply(f, "vf", e2, sizeof e2),
                rnn_apply(g2, "vc", e3, sizeof e3));
      sb_printf(c, "          float cn = ft * cp + it * ct;\n");
      sb_printf(c, "          float vo = gx[%lld + j] + q[%lld + j]%s", H, H, bias[1]);
      if (pi >= 0) sb_printf(c, " + P[%lld + j] * cn", (long long)d * 3 * H + H);
      sb_printf(c, ";\n          float ot = %s;\n", rnn_apply(f, "vo", e1, sizeof e1));
      sb_printf(c, "          float hn = ot * %s;\n          cb[j] = cn;\n", rnn_apply(h3, "cn", e2, sizeof e2));
    } else {
      sb_printf(c, "          float vz = gx[j] + q[j]%s, vr = gx[%lld + j] + q[%lld + j]%s;\n", bias[0], H, H, bias[1]);
      sb_printf(c, "          float z = %s, r = %s;\n", rnn_apply(f, "vz", e1, sizeof e1), rnn_apply(f, "vr", e2, sizeof e2));
      if (lbr) {
        char rb[96] = "", wb[96] = "";
        if (bi >= 0) {
          snprintf(rb, sizeof rb, " + Bb[%lld + j]", d * 2 * GH + GH + 2 * H);
          snprintf(wb, sizeof wb, " + Bb[%lld + j]", d * 2 * GH + 2 * H);
        }
        sb_printf(c, "          float vh = gx[%lld + j] + r * (q[%lld + j]%s)%s;\n", 2 * H, 2 * H, rb, wb);
        sb_printf(c, "          float hh = %s;\n", rnn_apply(g2, "vh", e1, sizeof e1));
        sb_printf(c, "          float hn = (1.0f - z) * hh + z * hb[j];\n");
      } else {
        sb_printf(c, "          zb[b * %lld + j] = z;\n          rh[b * %lld + j] = r * hb[j];\n", H, H);
        write_h = false;
      }
    }
    if (write_h) {
      sb_printf(c, "          hb[j] = hn;\n");
      if (yi >= 0) sb_printf(c, "          Y[%s + j] = hn;\n", yidx);
    }
    sb_printf(c, "        }\n      }\n");
    if (gru && !lbr) {
      /* h~ = g(Xt Wh^T + (r . H) Rh^T + Rbh + Wbh) */
      sb_printf(c, "      ecg_rt1_sgemm(0, 1, %s, %lld, %lld, 1.0f, rh, %lld, R + %lld, %lld, 0.0f, hr + %lld, %lld);\n", B, H, H, H,
                (long long)d * GH * H + 2 * H * H, H, 2 * H, GH);
      sb_printf(c, "      for (int64_t b = 0; b < %s; b++) {\n        ", B);
      sb_printf(c, len_expr, S, S);
      sb_printf(c, "        if (s >= len) continue;\n        int64_t t = %s;\n", rev ? "len - 1 - s" : "s");
      sb_printf(c, "        const float *gx = xw + %s * %lld, *q = hr + b * %lld;\n", row, GH, GH);
      sb_printf(c, "        float *hb = h + b * %lld;\n", H);
      sb_printf(c, "        for (int64_t j = 0; j < %lld; j++) {\n", H);
      sb_printf(c, "          float vh = gx[%lld + j] + q[%lld + j]%s;\n", 2 * H, 2 * H, bias[2]);
      sb_printf(c, "          float z = zb[b * %lld + j], hh = %s;\n", H, rnn_apply(g2, "vh", e1, sizeof e1));
      sb_printf(c, "          float hn = (1.0f - z) * hh + z * hb[j];\n          hb[j] = hn;\n");
      if (yi >= 0) sb_printf(c, "          Y[%s + j] = hn;\n", yidx);
      sb_printf(c, "        }\n      }\n");
    }
    sb_printf(c, "    }\n");
    if (yhi >= 0 || yci >= 0) {
      sb_printf(c, "    for (int64_t b = 0; b < %s; b++) {\n      ", B);
      sb_printf(c, len_expr, S, S);
      sb_printf(c, "      for (int64_t j = 0; j < %lld; j++) {\n", H);
      if (yhi >= 0) sb_printf(c, "        YH[%s + j] = len > 0 ? h[b * %lld + j] : 0.0f;\n", hidx, H);
      if (yci >= 0) sb_printf(c, "        YC[%s + j] = len > 0 ? cs[b * %lld + j] : 0.0f;\n", hidx, H);
      sb_printf(c, "      }\n    }\n");
    }
  }
  sb_printf(c, "  }\n");
  return ECG_OK;
}

/* ---------------------------------------------------------------- Einsum */

/** Einsum: for every output index, the sum over the other variables of the product of
 *  the operands (repeated labels in one operand read its diagonal; ellipsis dims
 *  broadcast).  Accumulates in double (float dtypes) or int64_t (integer dtypes). */
int emit_einsum(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  char eq[512], msg[256];
  if (!ecg_attr_s(n, "equation", NULL, eq, sizeof eq)) return lw_node_err(L, n, e, "missing attribute 'equation'");
  int nin = (int)n->n_inputs, ranks[EQ_MAX_IN];
  int64_t dims[EQ_MAX_IN][ECG_MAX_RANK], size[EQ_NVAR];
  int dt = dtype_of(L, n->outputs[0]);
  if (dt == ECG_BOOL || dt == ECG_STRING || dt == ECG_COMPLEX64 || dt == ECG_COMPLEX128 || !ecg_dtype_ctype(dt)) {
    snprintf(msg, sizeof msg, "dtype %s is not supported", ecg_dtype_name(dt));
    return lw_node_err(L, n, e, "%s", msg);
  }
  for (int i = 0; i < nin; i++) ranks[i] = lw_dims(L, n->inputs[i], dims[i]);
  einsum_eq q;
  if (einsum_parse(eq, nin, ranks, &q, msg, sizeof msg) || einsum_sizes(&q, dims, size, msg, sizeof msg)) return lw_node_err(L, n, e, "%s", msg);
  /* strides of every operand along every variable (diagonals add up; broadcast 1 -> 0) */
  int64_t st[EQ_MAX_IN][EQ_NVAR], ost[EQ_NVAR], ist[ECG_MAX_RANK];
  memset(st, 0, sizeof st);
  memset(ost, 0, sizeof ost);
  for (int i = 0; i < nin; i++) {
    lw_strides(ranks[i], dims[i], ist);
    for (int k = 0; k < ranks[i]; k++)
      if (!(dims[i][k] == 1 && size[q.in_var[i][k]] != 1)) st[i][q.in_var[i][k]] += ist[k];
  }
  int64_t od[ECG_MAX_RANK];
  for (int k = 0; k < q.out_rank; k++) od[k] = size[q.out_var[k]];
  lw_strides(q.out_rank, od, ist);
  int used[EQ_NVAR] = {0}, in_out[EQ_NVAR] = {0};
  for (int k = 0; k < q.out_rank; k++) { ost[q.out_var[k]] = ist[k]; in_out[q.out_var[k]] = 1; }
  for (int i = 0; i < nin; i++)
    for (int k = 0; k < q.in_rank[i]; k++) used[q.in_var[i][k]] = 1;
  const char *T = lw_ctype(L, n->outputs[0]);
  const char *A = ecg_dtype_is_float(dt) ? "double" : "int64_t";
  sbuf *c = &L->code;
  sb_printf(c, "  {\n");
  for (int i = 0; i < nin; i++) sb_printf(c, "    const %s *x%d = %s;\n", T, i, lw_ptr(L, n->inputs[i]));
  sb_printf(c, "    %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  int depth = 0;
  for (int k = 0; k < q.out_rank; k++, depth++)
    sb_printf(c, "%*sfor (int64_t v%d = 0; v%d < %lld; v%d++)\n", 4 + 2 * depth, "", q.out_var[k], q.out_var[k], (long long)size[q.out_var[k]],
              q.out_var[k]);
  sb_printf(c, "%*s{\n%*s%s acc = 0;\n", 4 + 2 * depth, "", 6 + 2 * depth, "", A);
  int d0 = depth;
  depth++;
  for (int v = 0; v < EQ_NVAR; v++)
    if (used[v] && !in_out[v]) {
      sb_printf(c, "%*sfor (int64_t v%d = 0; v%d < %lld; v%d++)\n", 4 + 2 * depth, "", v, v, (long long)size[v], v);
      depth++;
    }
  sb_printf(c, "%*sacc += ", 4 + 2 * depth, "");
  for (int i = 0; i < nin; i++) {
    sb_printf(c, "%s(%s)x%d[0", i ? " * " : "", A, i);
    for (int v = 0; v < EQ_NVAR; v++)
      if (st[i][v]) sb_printf(c, " + v%d * %lld", v, (long long)st[i][v]);
    sb_printf(c, "]");
  }
  sb_printf(c, ";\n%*sy[0", 6 + 2 * d0, "");
  for (int v = 0; v < EQ_NVAR; v++)
    if (ost[v] && in_out[v]) sb_printf(c, " + v%d * %lld", v, (long long)ost[v]);
  sb_printf(c, "] = (%s)acc;\n%*s}\n  }\n", T, 4 + 2 * d0, "");
  return ECG_OK;
}

/* ---------------------------------------------------------------- LRN, MVN, Det */

/** LRN: y = x / (bias + alpha/size * sum of x^2 over the channel window
 *  [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta; float32/float64. */
int emit_lrn(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int dt = dtype_of(L, n->inputs[0]);
  if (dt != ECG_FLOAT && dt != ECG_DOUBLE) return lw_node_err(L, n, e, "only float32 and float64 are supported");
  int64_t xd[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd);
  int64_t size = ecg_attr_i(n, "size", 1), inner = 1;
  for (int k = 2; k < r; k++) inner *= xd[k];
  double alpha = ecg_attr_f(n, "alpha", 1e-4f), beta = ecg_attr_f(n, "beta", 0.75f), bias = ecg_attr_f(n, "bias", 1.0f);
  long long lo = (size - 1) / 2, hi = size / 2; /* floor((size-1)/2), ceil((size-1)/2) */
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n    %s *y = %s;\n", T, lw_ptr(L, n->inputs[0]), T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    for (int64_t nn = 0; nn < %lld; nn++)\n      for (int64_t ch = 0; ch < %lld; ch++) {\n", (long long)xd[0], (long long)xd[1]);
  sb_printf(c, "        int64_t c0 = ch - %lld < 0 ? 0 : ch - %lld, c1 = ch + %lld > %lld ? %lld : ch + %lld;\n", lo, lo, hi,
            (long long)xd[1] - 1, (long long)xd[1] - 1, hi);
  sb_printf(c, "        for (int64_t i = 0; i < %lld; i++) {\n          double sq = 0;\n", (long long)inner);
  sb_printf(c, "          for (int64_t k = c0; k <= c1; k++) { double v = x[(nn * %lld + k) * %lld + i]; sq += v * v; }\n",
            (long long)xd[1], (long long)inner);
  sb_printf(c, "          int64_t o = (nn * %lld + ch) * %lld + i;\n", (long long)xd[1], (long long)inner);
  sb_printf(c, "          y[o] = (%s)(x[o] / pow(%.17g + %.17g * sq, %.17g));\n        }\n      }\n  }\n", T, bias,
            alpha / (double)size, beta);
  return ECG_OK;
}

/** MeanVarianceNormalization: y = (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over the
 *  axes (default 0, 2, 3), statistics in double in the scratch buffer. */
int emit_mvn(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int dt = dtype_of(L, n->inputs[0]);
  if (dt != ECG_FLOAT && dt != ECG_DOUBLE) return lw_node_err(L, n, e, "only float32 and float64 are supported");
  int64_t xd[ECG_MAX_RANK], xst[ECG_MAX_RANK], st[3][ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd), red[ECG_MAX_RANK] = {0};
  const int64_t *axes;
  static const int64_t def[3] = {0, 2, 3};
  int na = ecg_attr_ints(n, "axes", &axes);
  if (na < 0) { axes = def; na = 3; }
  for (int i = 0; i < na; i++) {
    int a = lw_axis(axes[i], r);
    if (a < 0) return lw_node_err(L, n, e, "axis out of range");
    red[a] = 1;
  }
  lw_strides(r, xd, xst);
  int64_t s = 1, groups = 1, count = 1;
  for (int d = r - 1; d >= 0; d--) {
    st[0][d] = red[d] ? 0 : s;
    if (!red[d]) { s *= xd[d]; groups *= xd[d]; } else count *= xd[d];
    st[1][d] = xst[d];
  }
  char sz[64];
  snprintf(sz, sizeof sz, "%lld", (long long)(4 * groups));
  lw_need_scratch(L, sz);
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n  const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "  %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "  double *sm = (double *)ctx->scratch, *sq = sm + %lld;\n", (long long)groups);
  sb_printf(c, "  for (int64_t i = 0; i < %lld; i++) sm[i] = sq[i] = 0;\n", (long long)(groups));
  lw_loops(L, r, xd, 2, st, NULL, "{ double v = x[o1]; sm[o0] += v; sq[o0] += v * v; }", 0);
  sb_printf(c, "  for (int64_t i = 0; i < %lld; i++) {\n    double m = sm[i] / %lld, var = sq[i] / %lld - m * m;\n", (long long)groups,
            (long long)count, (long long)count);
  sb_printf(c, "    sm[i] = m;\n    sq[i] = sqrt(var > 0 ? var : 0) + 1e-9;\n  }\n");
  /* y and x contiguous (operands 0 and 1 after reordering), stats as operand 2 */
  int64_t st2[3][ECG_MAX_RANK];
  for (int d = 0; d < r; d++) { st2[0][d] = xst[d]; st2[1][d] = xst[d]; st2[2][d] = st[0][d]; }
  char body[160];
  snprintf(body, sizeof body, "y[o0] = (%s)((x[o1] - sm[o2]) / sq[o2]);", T);
  lw_loops(L, r, xd, 3, st2, NULL, body, 1);
  sb_printf(c, "  }\n");
  return ECG_OK;
}

/** Det: X [*, M, M] -> [*]: LU with partial pivoting in double per matrix (scratch). */
int emit_det(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int dt = dtype_of(L, n->inputs[0]);
  if (dt != ECG_FLOAT && dt != ECG_DOUBLE) return lw_node_err(L, n, e, "only float32 and float64 are supported");
  int64_t xd[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd);
  long long M = xd[r - 1], batch = 1;
  for (int k = 0; k < r - 2; k++) batch *= xd[k];
  char sz[64];
  snprintf(sz, sizeof sz, "%lld", 2 * M * M + 2);
  lw_need_scratch(L, sz);
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n    %s *y = %s;\n", T, lw_ptr(L, n->inputs[0]), T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    double *a = (double *)ctx->scratch;\n");
  sb_printf(c, "    for (int64_t bt = 0; bt < %lld; bt++) {\n", batch);
  sb_printf(c, "      for (int64_t i = 0; i < %lld; i++) a[i] = x[bt * %lld + i];\n", M * M, M * M);
  sb_printf(c, "      double det = 1;\n");
  sb_printf(c, "      for (int64_t k = 0; k < %lld && det != 0; k++) {\n", M);
  sb_printf(c, "        int64_t p = k;\n");
  sb_printf(c, "        for (int64_t i = k + 1; i < %lld; i++) if (fabs(a[i * %lld + k]) > fabs(a[p * %lld + k])) p = i;\n", M, M, M);
  sb_printf(c, "        if (a[p * %lld + k] == 0) { det = 0; break; }\n", M);
  sb_printf(c, "        if (p != k) { det = -det; for (int64_t j = 0; j < %lld; j++) { double t = a[k * %lld + j]; a[k * %lld + j] = a[p * %lld + j]; a[p * %lld + j] = t; } }\n",
            M, M, M, M, M);
  sb_printf(c, "        double piv = a[k * %lld + k];\n        det *= piv;\n", M);
  sb_printf(c, "        for (int64_t i = k + 1; i < %lld; i++) {\n          double f = a[i * %lld + k] / piv;\n", M, M);
  sb_printf(c, "          for (int64_t j = k + 1; j < %lld; j++) a[i * %lld + j] -= f * a[k * %lld + j];\n        }\n      }\n", M, M, M);
  sb_printf(c, "      y[bt] = (%s)det;\n    }\n  }\n", T);
  return ECG_OK;
}

/* ---------------------------------------------------------------- Dropout */

/* True when tensor id is read by a node or is a graph output. */
static int mask_used(const ecg_graph *g, int id) {
  for (size_t i = 0; i < g->n_outputs; i++) if (g->outputs[i] == id) return 1;
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) if (g->nodes[i]->inputs[k] == id) return 1;
  return 0;
}

/** Dropout in inference: Y = X and mask all true.  training_mode must be absent or a
 *  constant false (or true with a constant ratio 0): training-mode dropout is random. */
int emit_dropout(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int tmi = in_id(n, 2), ri = in_id(n, 1);
  if (tmi >= 0) {
    const ecg_tensor *tm = L->g->tensors[tmi], *ra = ri >= 0 ? L->g->tensors[ri] : NULL;
    if (!tm->is_const || ecg_tensor_numel(tm) != 1)
      return lw_node_err(L, n, e, "training_mode given at run time is not supported (training-mode dropout is random)");
    if (ecg_const_i64(tm, 0) && !(ra && ra->is_const && ecg_tensor_numel(ra) == 1 && ecg_const_f64(ra, 0) == 0))
      return lw_node_err(L, n, e, "training mode is not supported (dropout with ratio > 0 is random)");
  }
  int yi = out_id(n, 0), mi = out_id(n, 1);
  if (mi >= 0 && n->opset < 12 && mask_used(L->g, mi))
    return lw_node_err(L, n, e, "the mask output before opset 12 is not supported (its inference value is unspecified)");
  int64_t m = ecg_tensor_numel(L->g->tensors[n->inputs[0]]);
  sbuf *c = &L->code;
  if (yi >= 0 && !lw_same_storage(L, n->inputs[0], yi)) {
    sb_printf(c, "  memcpy(%s, ", lw_ptr(L, yi));
    sb_printf(c, "%s, %lld);\n", lw_ptr(L, n->inputs[0]), (long long)(m * (int64_t)ecg_dtype_size(dtype_of(L, yi))));
  }
  if (mi >= 0) {
    const char *T = lw_ctype(L, mi);
    sb_printf(c, "  { %s *mk = %s; for (int64_t i = 0; i < %lld; i++) mk[i] = (%s)1; }\n", T, lw_ptr(L, mi), (long long)m, T);
  }
  return ECG_OK;
}
