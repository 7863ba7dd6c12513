/* Recurrent and assorted Many-to-Many operators: RNN, GRU, LSTM, Einsum, LRN,
 * MeanVarianceNormalization, Det (DNNFusion Table 3.2: Many-to-Many), and Dropout in
 * inference (One-to-One: the output is the input, the mask all true).  Shape and FLOP
 * functions; only Dropout is constant-folded. */
#include "einsum_eq.h"
#include "ops_common.h"

/* ---------------------------------------------------------------- RNN, GRU, LSTM */

/* Gates per hidden unit of a recurrent op: RNN 1, GRU 3, LSTM 4. */
static int rnn_gates(const ecg_node *n) {
  return !strcmp(n->op_type, "LSTM") ? 4 : !strcmp(n->op_type, "GRU") ? 3 : 1;
}

/* Check that optional input i is present with dims want[0..r) (-1 = any). */
static int rnn_opt_input(ecg_graph *g, ecg_node *n, int i, const char *what, int r, const int64_t *want, ecg_err *e) {
  const ecg_tensor *t = ecg_node_input(g, n, i);
  if (!t) return ECG_OK;
  int64_t d[ECG_MAX_RANK];
  int tr = ecg_tensor_dims(t, d);
  bool ok = tr == r;
  for (int k = 0; ok && k < r; k++) ok = d[k] < 0 || want[k] < 0 || d[k] == want[k];
  if (!ok) {
    char s[128] = "";
    size_t o = 0;
    for (int k = 0; k < r && o < sizeof s; k++) o += (size_t)snprintf(s + o, sizeof s - o, "%s%lld", k ? "," : "", (long long)want[k]);
    return ecg_node_errf(e, g, n, "%s '%s' must be [%s] (-1 = any)", what, t->name, s);
  }
  return ECG_OK;
}

/** RNN / GRU / LSTM (opset 7, layout from 14): X [S,B,I] (layout 1: [B,S,I]),
 *  W [D,G*H,I], R [D,G*H,H], B? [D,2*G*H], sequence_lens? [B], initial_h? (and LSTM
 *  initial_c?) [D,B,H] (layout 1: [B,D,H]), LSTM P? [D,3*H]  ->  Y [S,D,B,H]
 *  (layout 1: [B,S,D,H]), Y_h and LSTM Y_c [D,B,H] (layout 1: [B,D,H]); G gates
 *  (RNN 1, GRU 3, LSTM 4), D = 2 when bidirectional. */
int ecg_infer_rnn(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *w, *r;
  if (n->n_inputs < 3) return ecg_node_errf(e, g, n, "expected at least 3 inputs (X, W, R), got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &w, e));
  ECG_TRY(ops_input(g, n, 2, &r, e));
  int G = rnn_gates(n);
  bool lstm = G == 4;
  if ((int)n->n_inputs > (lstm ? 8 : 6)) return ecg_node_errf(e, g, n, "too many inputs (%zu)", n->n_inputs);
  if ((int)n->n_outputs > (lstm ? 3 : 2)) return ecg_node_errf(e, g, n, "too many outputs (%zu)", n->n_outputs);
  int64_t xd[ECG_MAX_RANK], wd[ECG_MAX_RANK], rd[ECG_MAX_RANK];
  if (ecg_tensor_dims(x, xd) != 3 || ecg_tensor_dims(w, wd) != 3 || ecg_tensor_dims(r, rd) != 3)
    return ecg_node_errf(e, g, n, "X, W and R must be 3-D (ranks %zu, %zu, %zu)", x->n_dims, w->n_dims, r->n_dims);
  char dir[32];
  ecg_attr_s(n, "direction", "forward", dir, sizeof dir);
  int64_t D = !strcmp(dir, "bidirectional") ? 2 : 1;
  if (D == 1 && strcmp(dir, "forward") && strcmp(dir, "reverse"))
    return ecg_node_errf(e, g, n, "unknown direction '%s'", dir);
  int layout = (int)ecg_attr_i(n, "layout", 0);
  if (layout != 0 && layout != 1) return ecg_node_errf(e, g, n, "layout must be 0 or 1, is %d", layout);
  int64_t H = ecg_attr_i(n, "hidden_size", rd[2]);
  if (H == 0 || H < -1 || (rd[2] >= 0 && H >= 0 && rd[2] != H))
    return ecg_node_errf(e, g, n, "hidden_size %lld does not match R's last dim %lld", (long long)H, (long long)rd[2]);
  int64_t S = xd[layout ? 1 : 0], B = xd[layout ? 0 : 1], I = xd[2];
  int64_t GH = H >= 0 ? G * H : -1;
  int64_t want_w[3] = {D, GH, I}, want_r[3] = {D, GH, H};
  ECG_TRY(rnn_opt_input(g, n, 1, "W", 3, want_w, e));
  ECG_TRY(rnn_opt_input(g, n, 2, "R", 3, want_r, e));
  int64_t want_b[2] = {D, GH >= 0 ? 2 * GH : -1}, want_sl[1] = {B}, want_p[2] = {D, H >= 0 ? 3 * H : -1};
  int64_t hs[3] = {layout ? B : D, layout ? D : B, H};
  ECG_TRY(rnn_opt_input(g, n, 3, "B", 2, want_b, e));
  ECG_TRY(rnn_opt_input(g, n, 4, "sequence_lens", 1, want_sl, e));
  ECG_TRY(rnn_opt_input(g, n, 5, "initial_h", 3, hs, e));
  if (lstm) {
    ECG_TRY(rnn_opt_input(g, n, 6, "initial_c", 3, hs, e));
    ECG_TRY(rnn_opt_input(g, n, 7, "P", 2, want_p, e));
  }
  const ecg_tensor *sl = ecg_node_input(g, n, 4);
  if (sl && sl->dtype != ECG_INT32) return ecg_node_errf(e, g, n, "sequence_lens '%s' must be int32", sl->name);
  int sb = layout ? 0 : 1, ss = layout ? 1 : 0; /* X's batch and sequence dims */
  int64_t yd[4];
  int yfrom[4];
  if (layout) { yd[0] = B; yd[1] = S; yd[2] = D; yd[3] = H; yfrom[0] = sb; yfrom[1] = ss; }
  else { yd[0] = S; yd[1] = D; yd[2] = B; yd[3] = H; yfrom[0] = ss; yfrom[2] = sb; }
  yfrom[layout ? 2 : 1] = -1;
  yfrom[3] = -1;
  ECG_TRY(ops_set_out(g, n, 0, x->dtype, 4, yd, x, yfrom, e));
  int hfrom[3] = {layout ? sb : -1, layout ? -1 : sb, -1};
  for (int k = 1; k < (lstm ? 3 : 2) && k < (int)n->n_outputs; k++) ECG_TRY(ops_set_out(g, n, k, x->dtype, 3, hs, x, hfrom, e));
  return ECG_OK;
}

/** RNN/GRU/LSTM FLOPs: 2*S*B*D*G*H*(I+H) for the products plus ~8 per gate value. */
int64_t ecg_flops_rnn(const ecg_graph *g, const ecg_node *n) {
  const ecg_tensor *w = ecg_node_input(g, n, 1), *y = ecg_node_input(g, n, 0);
  int64_t wd[ECG_MAX_RANK], xd[ECG_MAX_RANK];
  if (!w || !y || !ecg_tensor_static(w) || !ecg_tensor_static(y) || ecg_tensor_dims(w, wd) != 3 ||
      ecg_tensor_dims(y, xd) != 3)
    return -1;
  int G = rnn_gates(n);
  int64_t H = wd[1] / G, SB = xd[0] * xd[1];
  return SB * wd[0] * wd[1] * (2 * (wd[2] + H) + 8);
}

/* ---------------------------------------------------------------- Einsum */

/** Einsum(inputs...): the output shape from the equation (labels, "...", implicit
 *  mode: see einsum_eq.h); input 0's dtype.  E.g. "bij,bjk->bik": [b,i,j],[b,j,k] ->
 *  [b,i,k]. */
int ecg_infer_einsum(ecg_graph *g, ecg_node *n, ecg_err *e) {
  char eq[512];
  if (!ecg_attr_s(n, "equation", NULL, eq, sizeof eq)) return ecg_node_errf(e, g, n, "missing attribute 'equation'");
  int nin = (int)n->n_inputs;
  if (nin < 1 || nin > EQ_MAX_IN) return ecg_node_errf(e, g, n, "%d inputs (1..%d supported)", nin, EQ_MAX_IN);
  int ranks[EQ_MAX_IN];
  int64_t dims[EQ_MAX_IN][ECG_MAX_RANK];
  ecg_tensor *x0 = NULL;
  for (int i = 0; i < nin; i++) {
    ecg_tensor *t;
    ECG_TRY(ops_input(g, n, i, &t, e));
    if (!x0) x0 = t;
    if (t->dtype != x0->dtype) return ecg_node_errf(e, g, n, "inputs have different dtypes");
    ranks[i] = ecg_tensor_dims(t, dims[i]);
  }
  einsum_eq q;
  char msg[256];
  int64_t size[EQ_NVAR], od[ECG_MAX_RANK];
  if (einsum_parse(eq, nin, ranks, &q, msg, sizeof msg) || einsum_sizes(&q, dims, size, msg, sizeof msg))
    return ecg_node_errf(e, g, n, "equation '%s': %s", eq, msg);
  const char *syms[ECG_MAX_RANK] = {0};
  for (int k = 0; k < q.out_rank; k++) {
    od[k] = size[q.out_var[k]];
    for (int i = 0; i < nin && od[k] < 0 && !syms[k]; i++)
      for (int j = 0; j < q.in_rank[i] && !syms[k]; j++)
        if (q.in_var[i][j] == q.out_var[k]) syms[k] = ops_sym(ecg_node_input(g, n, i), j);
  }
  return ops_set_out_syms(g, n, 0, x0->dtype, q.out_rank, od, syms, e);
}

/** Einsum FLOPs: n_inputs multiply-adds per point of the full index space. */
int64_t ecg_flops_einsum(const ecg_graph *g, const ecg_node *n) {
  char eq[512];
  int nin = (int)n->n_inputs, ranks[EQ_MAX_IN];
  int64_t dims[EQ_MAX_IN][ECG_MAX_RANK], size[EQ_NVAR];
  if (!ecg_attr_s(n, "equation", NULL, eq, sizeof eq) || nin < 1 || nin > EQ_MAX_IN) return -1;
  for (int i = 0; i < nin; i++) {
    const ecg_tensor *t = ecg_node_input(g, n, i);
    if (!t || !ecg_tensor_static(t)) return -1;
    ranks[i] = ecg_tensor_dims(t, dims[i]);
  }
  einsum_eq q;
  char msg[256];
  if (einsum_parse(eq, nin, ranks, &q, msg, sizeof msg) || einsum_sizes(&q, dims, size, msg, sizeof msg)) return -1;
  int64_t points = 1;
  for (int v = 0; v < EQ_NVAR; v++)
    if (size[v] > 0) points *= size[v];
  return 2 * points * nin;
}

/* ---------------------------------------------------------------- LRN, MVN, Det */

/** LRN FLOPs: size squares and adds per element plus the power. */
int64_t ecg_flops_lrn(const ecg_graph *g, const ecg_node *n) {
  int64_t m = ops_numel(ecg_node_output(g, n, 0));
  return m < 0 ? -1 : m * (2 * ecg_attr_i(n, "size", 1) + 4);
}

/** LRN / MeanVarianceNormalization: X [N,C,...] -> Y like X (LRN needs rank >= 3 and
 *  the attribute size >= 1). */
int ecg_infer_lrn(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  if (!strcmp(n->op_type, "LRN")) {
    if (r < 3) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 3 (N, C, spatial...), has %d", x->name, r);
    if (ecg_attr_i(n, "size", 0) < 1) return ecg_node_errf(e, g, n, "attribute 'size' must be >= 1");
  } else {
    const int64_t *axes;
    int c = ecg_attr_ints(n, "axes", &axes), ax;
    static const int64_t def[3] = {0, 2, 3};
    if (c < 0) { axes = def; c = 3; }
    for (int i = 0; i < c; i++)
      if (!ops_axis(axes[i], r, &ax)) return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)axes[i], r);
  }
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}

/** Det: X [*, M, M] -> [*] (float dtypes). */
int ecg_infer_det(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  if (r < 2) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 2, has %d", x->name, r);
  if (d[r - 1] >= 0 && d[r - 2] >= 0 && d[r - 1] != d[r - 2])
    return ecg_node_errf(e, g, n, "input '%s' is not square in its last two dims (%lld x %lld)", x->name,
                         (long long)d[r - 2], (long long)d[r - 1]);
  return ecg_set_output(g, n, 0, x->dtype, r - 2, d, x);
}

/** Det FLOPs: about 2/3 M^3 per matrix (LU). */
int64_t ecg_flops_det(const ecg_graph *g, const ecg_node *n) {
  const ecg_tensor *x = ecg_node_input(g, n, 0);
  int64_t d[ECG_MAX_RANK], m = ops_numel(x);
  if (m < 0) return -1;
  int r = ecg_tensor_dims(x, d);
  return r < 2 ? -1 : m * d[r - 1] * 2 / 3;
}

/* ---------------------------------------------------------------- Dropout */

/** Dropout (inference): output 0 like X; optional mask output 1 of X's shape, bool
 *  from opset 10 (X's dtype before). */
int ecg_infer_dropout(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  if (n->n_outputs > 2) return ecg_node_errf(e, g, n, "too many outputs (%zu)", n->n_outputs);
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  ECG_TRY(ecg_set_output(g, n, 0, x->dtype, r, d, x));
  if (n->n_outputs > 1 && n->outputs[1] >= 0)
    ECG_TRY(ecg_set_output(g, n, 1, n->opset >= 10 ? ECG_BOOL : x->dtype, r, d, x));
  return ECG_OK;
}

/** Dropout fold: only in inference (training_mode absent or a constant false, or a
 *  constant true with a constant ratio 0): Y = X, mask all true. */
int ecg_eval_dropout(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  const ecg_tensor *tm = ecg_node_input(g, n, 2), *ratio = ecg_node_input(g, n, 1);
  if (tm && (!tm->is_const || ecg_tensor_numel(tm) != 1)) return ecg_node_errf(e, g, n, "training_mode is not a constant");
  if (tm && ecg_const_i64(tm, 0) &&
      !(ratio && ratio->is_const && ecg_tensor_numel(ratio) == 1 && ecg_const_f64(ratio, 0) == 0))
    return ecg_node_errf(e, g, n, "training-mode dropout is random");
  if (ecg_node_output(g, n, 1) && n->opset < 12) return ecg_node_errf(e, g, n, "mask before opset 12 is unspecified");
  if (!x || !y || !x->is_const || !ops_fold_dtype(x->dtype)) return ecg_node_errf(e, g, n, "input not foldable");
  size_t es = ecg_dtype_size(x->dtype);
  int64_t m = ecg_tensor_numel(x);
  if (m < 0 || x->data.len != (size_t)m * es) return ecg_node_errf(e, g, n, "input data size mismatch");
  void *buf, *mb;
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  if (m) memcpy(buf, x->data.data, (size_t)m * es);
  if (ecg_node_output(g, n, 1)) {
    int rc = ops_alloc(g, n, 1, &mb, e);
    if (rc != ECG_OK) { ops_unfold(g, n, 0); return rc; }
    int mdt = ecg_node_output(g, n, 1)->dtype;
    for (int64_t i = 0; i < m; i++) ecg_store_i64(mb, mdt, i, 1);
  }
  return ECG_OK;
}
