/* Training optimizers of domain ai.onnx.preview.training (opset 1): Adagrad, Momentum
 * and Adam (shape functions; none is constant-folded).  Each performs one update step
 * of any number n of tensors; the update is elementwise (One-to-One).
 *
 *   Adagrad (R, T, X1..Xn, G1..Gn, H1..Hn)        -> X1_new..Xn_new, H1_new..Hn_new
 *   Momentum(R, T, X1..Xn, G1..Gn, V1..Vn)        -> X1_new..Xn_new, V1_new..Vn_new
 *   Adam    (R, T, X1..Xn, G1..Gn, V1..Vn, H1..Hn) -> X_new..., V_new..., H_new...
 *
 * R: learning rate, a float scalar (rank 0 or one element); T: update count, an int64
 * scalar; Xi, Gi, Vi, Hi: the same shape and float dtype; every output of group k has
 * Xi's shape and dtype. */
#include "ops_common.h"

/** Number of per-tensor state operands after X and G (H for Adagrad, V for Momentum,
 *  V and H for Adam): the groups are X, G and these. */
static int optimizer_states(const ecg_node *n) { return strcmp(n->op_type, "Adam") == 0 ? 2 : 1; }

/** Adagrad / Momentum / Adam: every output has its optimized tensor X's shape. */
int ecg_infer_optimizer(ecg_graph *g, ecg_node *n, ecg_err *e) {
  int groups = 2 + optimizer_states(n);         /* X, G, states... */
  int n_in = (int)n->n_inputs - 2, n_out = (int)n->n_outputs;
  if (n_in <= 0 || n_in % groups != 0)
    return ecg_node_errf(e, g, n, "expects R, T and %d groups of tensors, got %zu inputs", groups, n->n_inputs);
  int nt = n_in / groups;
  if (n_out != nt * (groups - 1))
    return ecg_node_errf(e, g, n, "optimizes %d tensors: expects %d outputs, got %d", nt, nt * (groups - 1), n_out);
  ecg_tensor *r, *t;
  ECG_TRY(ops_input(g, n, 0, &r, e));
  ECG_TRY(ops_input(g, n, 1, &t, e));
  if (ecg_tensor_numel(r) != 1 || !ecg_dtype_is_float(r->dtype))
    return ecg_node_errf(e, g, n, "learning rate '%s' must be a float scalar", r->name);
  if (ecg_tensor_numel(t) != 1 || ecg_dtype_is_float(t->dtype))
    return ecg_node_errf(e, g, n, "update count '%s' must be an integer scalar", t->name);
  if (strcmp(n->op_type, "Momentum") == 0) {
    static const char *const req[] = {"alpha", "beta", "mode", "norm_coefficient"};
    for (int k = 0; k < 4; k++)
      if (!ecg_attr_find(n, req[k])) return ecg_node_errf(e, g, n, "missing required attribute '%s'", req[k]);
    char mode[16];
    ecg_attr_s(n, "mode", "standard", mode, sizeof mode);
    if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
      return ecg_node_errf(e, g, n, "mode '%s' is not supported (standard or nesterov)", mode);
  }
  for (int i = 0; i < nt; i++) {
    ecg_tensor *x;
    ECG_TRY(ops_input(g, n, 2 + i, &x, e));
    if (x->dtype != ECG_FLOAT && x->dtype != ECG_DOUBLE)
      return ecg_node_errf(e, g, n, "dtype %s of '%s' is not supported (float32, float64)",
                           ecg_dtype_name(x->dtype), x->name);
    int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK];
    int xr = ecg_tensor_dims(x, xd);
    for (int k = 1; k < groups; k++) {
      ecg_tensor *o;
      ECG_TRY(ops_input(g, n, 2 + k * nt + i, &o, e));
      int orank = ecg_tensor_dims(o, od);
      bool same = orank == xr && o->dtype == x->dtype;
      for (int d = 0; same && d < xr; d++) same = xd[d] == od[d];
      if (!same)
        return ecg_node_errf(e, g, n, "'%s' must have the shape and dtype of '%s'", o->name, x->name);
    }
    for (int k = 0; k < groups - 1; k++) ECG_TRY(ecg_set_output(g, n, k * nt + i, x->dtype, xr, xd, x));
  }
  return ECG_OK;
}

/** About 10 operations per element of every optimized tensor. */
int64_t ecg_flops_optimizer(const ecg_graph *g, const ecg_node *n) {
  int64_t f = 0;
  for (size_t i = 0; i < n->n_outputs; i++) {
    int64_t m = ops_numel(ecg_node_output(g, n, (int)i));
    if (m < 0) return -1;
    f += 4 * m;
  }
  return f;
}
