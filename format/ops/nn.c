/* Compute-intensive operators (Many-to-Many): Conv, ConvTranspose, MatMul, Gemm,
 * MaxPool/AveragePool, GlobalAverage/MaxPool, LayerNormalization: shape and FLOP
 * functions (multiply-add = 2 FLOPs).  None of them is constant-folded. */
#include "ops_common.h"

/* ---------------------------------------------------------------- windows */

/* Input X of rank >= 3 (N, C, spatial...). */
static int nchw_input(ecg_graph *g, ecg_node *n, ecg_tensor **x, int64_t *xd, int *r, ecg_err *e) {
  ECG_TRY(ops_input(g, n, 0, x, e));
  *r = ecg_tensor_dims(*x, xd);
  if (*r < 3) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 3 (N, C, spatial...), has %d", (*x)->name, *r);
  return ECG_OK;
}

/* Check the optional bias (input gm->b) is [m]. */
static int check_bias(ecg_graph *g, ecg_node *n, const ecg_conv_geom *gm, ecg_err *e) {
  const ecg_tensor *b = gm->b >= 0 ? ecg_node_input(g, n, gm->b) : NULL;
  if (!b) return ECG_OK;
  int64_t bd[ECG_MAX_RANK];
  int br = ecg_tensor_dims(b, bd);
  if (br != 1 || (gm->m >= 0 && bd[0] >= 0 && bd[0] != gm->m))
    return ecg_node_errf(e, g, n, "bias '%s' must be [%lld]", b->name, (long long)gm->m);
  return ECG_OK;
}

/* Output k of a windowed operator: [N, M, out...] from its resolved geometry (symbols
 * of N, and of C for pooling, kept). */
static int window_out(ecg_graph *g, ecg_node *n, const ecg_conv_geom *gm, int k, int dtype, ecg_err *e) {
  int64_t od[ECG_MAX_RANK] = {gm->n, gm->m};
  for (int i = 0; i < gm->sp; i++) od[2 + i] = gm->out[i];
  int from[ECG_MAX_RANK] = {0, gm->pool ? 1 : -1, -1, -1, -1, -1, -1, -1};
  return ops_set_out(g, n, k, dtype, gm->sp + 2, od, ecg_node_input(g, n, gm->x), from, e);
}

/** Conv (1D/2D/3D, grouped, auto_pad, dilations, strides): X [N,C,D...], W [M,C/group,K...]
 *  -> [N,M,D'...], D' from the resolved geometry (ecg_conv_geom_resolve). Also the shape
 *  of ConvInteger and QLinearConv, whose callers then set the output dtype. */
int ecg_infer_conv(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_conv_geom gm;
  if (ecg_node_op(n)->id == ECG_OP_Conv && (n->n_inputs < 2 || n->n_inputs > 3))
    return ecg_node_errf(e, g, n, "expected 2 or 3 inputs, got %zu", n->n_inputs);
  ECG_TRY(ecg_conv_geom_resolve(g, n, &gm, e));
  ECG_TRY(check_bias(g, n, &gm, e));
  return window_out(g, n, &gm, 0, ecg_node_input(g, n, gm.x)->dtype, e);
}

/** DeformConv (19, 22): X [N, C, D...], W [M, C/group, K...], offset [N, offset_group *
 *  2 * prod(K), out...], optional B [M] and mask [N, offset_group * prod(K), out...] ->
 *  [N, M, out...], out as Conv's (ecg_conv_geom_resolve); offset_group divides C. */
int ecg_infer_deform_conv(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_conv_geom gm;
  if (n->n_inputs < 3 || n->n_inputs > 5) return ecg_node_errf(e, g, n, "expected 3 to 5 inputs, got %zu", n->n_inputs);
  ECG_TRY(ecg_conv_geom_resolve(g, n, &gm, e));
  ECG_TRY(check_bias(g, n, &gm, e));
  int64_t og = ecg_attr_i(n, "offset_group", 1), ksz = ops_prod(gm.k, gm.sp);
  if (og < 1 || (gm.c >= 0 && gm.c % og)) return ecg_node_errf(e, g, n, "offset_group %lld must divide the %lld input channels", (long long)og, (long long)gm.c);
  for (int k = 2; k <= 4; k += 2) { /* offset (input 2) and mask (input 4) */
    const ecg_tensor *t = ecg_node_input(g, n, k);
    if (!t) continue;
    int64_t td[ECG_MAX_RANK];
    int rt = ecg_tensor_dims(t, td);
    int64_t want = og * ksz * (k == 2 ? 2 : 1);
    bool bad = rt != gm.sp + 2 || (td[0] >= 0 && gm.n >= 0 && td[0] != gm.n) || (td[1] >= 0 && ksz >= 0 && td[1] != want);
    for (int i = 0; i < gm.sp && !bad; i++) bad = td[2 + i] >= 0 && gm.out[i] >= 0 && td[2 + i] != gm.out[i];
    if (bad) return ecg_node_errf(e, g, n, "%s '%s' must be [N, %lld, output spatial dims]", k == 2 ? "offset" : "mask", t->name, (long long)want);
  }
  return window_out(g, n, &gm, 0, ecg_node_input(g, n, gm.x)->dtype, e);
}

/** ConvTranspose: X [N,C,D...], W [C,M/group,K...] -> [N,M,D'...] with
 *  D' = stride*(D-1) + output_padding + (K-1)*dilation + 1 - pads, or output_shape, or
 *  D*stride for SAME auto_pad (ecg_conv_geom_resolve). */
int ecg_infer_convtranspose(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_conv_geom gm;
  if (n->n_inputs < 2 || n->n_inputs > 3) return ecg_node_errf(e, g, n, "expected 2 or 3 inputs, got %zu", n->n_inputs);
  ECG_TRY(ecg_conv_geom_resolve(g, n, &gm, e));
  ECG_TRY(check_bias(g, n, &gm, e));
  return window_out(g, n, &gm, 0, ecg_node_input(g, n, gm.x)->dtype, e);
}

/** MatMul (numpy matmul): batch dims broadcast, 1-D operands get a dim prepended (A) or
 *  appended (B) that is removed from the result. */
int ecg_infer_matmul(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *a, *b;
  if (n->n_inputs != 2) return ecg_node_errf(e, g, n, "expected 2 inputs, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &a, e));
  ECG_TRY(ops_input(g, n, 1, &b, e));
  int64_t ad[ECG_MAX_RANK + 1], bd[ECG_MAX_RANK + 1], od[ECG_MAX_RANK];
  int ra = ecg_tensor_dims(a, ad), rb = ecg_tensor_dims(b, bd);
  if (ra < 1 || rb < 1) return ecg_node_errf(e, g, n, "operands must have rank >= 1 (ranks %d, %d)", ra, rb);
  bool a1 = ra == 1, b1 = rb == 1;
  if (a1) { ad[1] = ad[0]; ad[0] = 1; ra = 2; }
  if (b1) { bd[1] = 1; rb = 2; }
  int64_t k1 = ad[ra - 1], k2 = bd[rb - 2];
  if (k1 >= 0 && k2 >= 0 && k1 != k2)
    return ecg_node_errf(e, g, n, "inner dims differ: '%s' has %lld, '%s' has %lld", a->name, (long long)k1,
                         b->name, (long long)k2);
  int r = ecg_broadcast_shape(ra - 2, ad, rb - 2, bd, od);
  if (r < 0) return ecg_node_errf(e, g, n, "batch dims of '%s' and '%s' cannot be broadcast", a->name, b->name);
  if (r + 2 > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "rank too large");
  const char *syms[ECG_MAX_RANK] = {0};
  for (int i = 0; i < r; i++) { /* batch dims: symbols from whichever operand has them */
    int ia = i - (r - (ra - 2)), ib = i - (r - (rb - 2));
    syms[i] = ia >= 0 && ops_sym(a, ia) ? ops_sym(a, ia) : ib >= 0 ? ops_sym(b, ib) : NULL;
  }
  int out_r = r;
  if (!a1) { syms[out_r] = ops_sym(a, (int)a->n_dims - 2); od[out_r++] = ad[ra - 2]; }
  if (!b1) { syms[out_r] = ops_sym(b, (int)b->n_dims - 1); od[out_r++] = bd[rb - 1]; }
  return ops_set_out_syms(g, n, 0, a->dtype, out_r, od, syms, e);
}

/** Fold MatMul of two constants (floating-point dtypes, double accumulation): A
 *  [..., M, K] times B [..., K, N] with broadcast batch dims; a 1-D operand is promoted as
 *  in ecg_infer_matmul.  Other dtypes: "dtype not handled" (the node is not folded). */
int ecg_eval_matmul(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *a = ecg_node_input(g, n, 0), *b = ecg_node_input(g, n, 1), *y = ecg_node_output(g, n, 0);
  if (!a || !b || !y || !a->is_const || !b->is_const || !ecg_dtype_is_float(a->dtype) || !ops_fold_dtype(a->dtype) ||
      !ecg_dtype_is_float(b->dtype) || !ops_fold_dtype(b->dtype) || !ecg_dtype_is_float(y->dtype) ||
      !ops_fold_dtype(y->dtype))
    return ecg_node_errf(e, g, n, "dtype not handled");
  int64_t ad[ECG_MAX_RANK + 1], bd[ECG_MAX_RANK + 1], ob[ECG_MAX_RANK], as[ECG_MAX_RANK], bs[ECG_MAX_RANK];
  int ra = ecg_tensor_dims(a, ad), rb = ecg_tensor_dims(b, bd);
  if (ra < 1 || rb < 1) return ecg_node_errf(e, g, n, "operands must have rank >= 1");
  if (ra == 1) { ad[1] = ad[0]; ad[0] = 1; ra = 2; }
  if (rb == 1) { bd[1] = 1; rb = 2; }
  int r = ecg_broadcast_shape(ra - 2, ad, rb - 2, bd, ob);
  if (r < 0) return ecg_node_errf(e, g, n, "batch dims cannot be broadcast");
  int64_t M = ad[ra - 2], K = ad[ra - 1], N = bd[rb - 1], nb = ops_prod(ob, r);
  /* element strides of each output batch dim in A and B (0 where broadcast) */
  int64_t sa = M * K, sb = K * N;
  for (int i = r - 1; i >= 0; i--) {
    int ia = i - (r - (ra - 2)), ib = i - (r - (rb - 2));
    as[i] = ia >= 0 && ad[ia] != 1 ? sa : 0;
    bs[i] = ib >= 0 && bd[ib] != 1 ? sb : 0;
    if (ia >= 0) sa *= ad[ia];
    if (ib >= 0) sb *= bd[ib];
  }
  void *buf;
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t offa = 0, offb = 0, rest = bi;
    for (int i = r - 1; i >= 0; i--) {
      int64_t idx = rest % ob[i];
      rest /= ob[i];
      offa += idx * as[i];
      offb += idx * bs[i];
    }
    for (int64_t m = 0; m < M; m++)
      for (int64_t j = 0; j < N; j++) {
        double acc = 0;
        for (int64_t k = 0; k < K; k++) acc += ecg_const_f64(a, offa + m * K + k) * ecg_const_f64(b, offb + k * N + j);
        ecg_store_f64(buf, y->dtype, (bi * M + m) * N + j, acc);
      }
  }
  return ECG_OK;
}

/** Gemm: A [M,K] (or [K,M] with transA), B [K,N] (or [N,K] with transB), optional C
 *  unidirectionally broadcastable to [M,N] -> [M,N]. */
int ecg_infer_gemm(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *a, *b;
  if (n->n_inputs < 2 || n->n_inputs > 3) return ecg_node_errf(e, g, n, "expected 2 or 3 inputs, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &a, e));
  ECG_TRY(ops_input(g, n, 1, &b, e));
  int64_t ad[ECG_MAX_RANK], bd[ECG_MAX_RANK], od[2];
  if (ecg_tensor_dims(a, ad) != 2 || ecg_tensor_dims(b, bd) != 2)
    return ecg_node_errf(e, g, n, "A and B must be 2-D (ranks %zu, %zu)", a->n_dims, b->n_dims);
  int ta = ecg_attr_i(n, "transA", 0) != 0, tb = ecg_attr_i(n, "transB", 0) != 0;
  int64_t k1 = ad[ta ? 0 : 1], k2 = bd[tb ? 1 : 0];
  if (k1 >= 0 && k2 >= 0 && k1 != k2)
    return ecg_node_errf(e, g, n, "inner dims differ: A has %lld, B has %lld (transA %d, transB %d)",
                         (long long)k1, (long long)k2, ta, tb);
  od[0] = ad[ta ? 1 : 0];
  od[1] = bd[tb ? 0 : 1];
  const ecg_tensor *c = ecg_node_input(g, n, 2);
  if (c) {
    int64_t cd[ECG_MAX_RANK], bc[ECG_MAX_RANK];
    int rc = ecg_tensor_dims(c, cd);
    if (rc > 2 || ecg_broadcast_shape(2, od, rc, cd, bc) < 0 ||
        (bc[0] >= 0 && od[0] >= 0 && bc[0] != od[0]) || (bc[1] >= 0 && od[1] >= 0 && bc[1] != od[1]))
      return ecg_node_errf(e, g, n, "C '%s' cannot be broadcast to [%lld,%lld]", c->name, (long long)od[0],
                           (long long)od[1]);
  }
  const char *syms[2] = {ops_sym(a, ta ? 1 : 0), ops_sym(b, tb ? 0 : 1)};
  return ops_set_out_syms(g, n, 0, a->dtype, 2, od, syms, e);
}

/** MaxPool/AveragePool/LpPool (LpPool: ceil_mode and dilations from opset 18): kernel_shape, strides, pads, auto_pad, dilations, ceil_mode
 *  (ecg_conv_geom_resolve); MaxPool's optional output 1 (Indices) is int64 of the same
 *  shape. */
int ecg_infer_pool(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_conv_geom gm;
  if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
  ECG_TRY(ecg_conv_geom_resolve(g, n, &gm, e));
  ECG_TRY(window_out(g, n, &gm, 0, ecg_node_input(g, n, 0)->dtype, e));
  if (n->n_outputs > 1) ECG_TRY(window_out(g, n, &gm, 1, ECG_INT64, e));
  return ECG_OK;
}

/** GlobalAveragePool/GlobalMaxPool: [N,C,D...] -> [N,C,1...]. */
int ecg_infer_global_pool(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t xd[ECG_MAX_RANK];
  int r;
  if (n->n_inputs != 1) return ecg_node_errf(e, g, n, "expected 1 input, got %zu", n->n_inputs);
  ECG_TRY(nchw_input(g, n, &x, xd, &r, e));
  for (int i = 2; i < r; i++) xd[i] = 1;
  int from[ECG_MAX_RANK] = {0, 1, -1, -1, -1, -1, -1, -1};
  return ops_set_out(g, n, 0, x->dtype, r, xd, x, from, e);
}

/** LayerNormalization (opset 17): Y like X; optional Mean and InvStdDev keep X's dims
 *  before 'axis' (default -1) and are 1 from it on, dtype from stash_type (float). */
int ecg_infer_layernorm(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *s;
  if (n->n_inputs < 2 || n->n_inputs > 3) return ecg_node_errf(e, g, n, "expected 2 or 3 inputs, got %zu", n->n_inputs);
  ECG_TRY(ops_input(g, n, 0, &x, e));
  ECG_TRY(ops_input(g, n, 1, &s, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d), axis;
  if (!ops_axis(ecg_attr_i(n, "axis", -1), r, &axis))
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", -1), r);
  ECG_TRY(ecg_set_output(g, n, 0, x->dtype, r, d, x));
  int from[ECG_MAX_RANK];
  for (int i = 0; i < r; i++) {
    from[i] = i < axis ? i : -1;
    if (i >= axis) d[i] = 1;
  }
  int st = (int)ecg_attr_i(n, "stash_type", ECG_FLOAT);
  for (int k = 1; k < 3 && k < (int)n->n_outputs; k++) ECG_TRY(ops_set_out(g, n, k, st, r, d, x, from, e));
  return ECG_OK;
}

/* ---------------------------------------------------------------- FLOPs */

/* Static dims of tensor t into d (returns rank), or -1. */
static int static_dims(const ecg_tensor *t, int64_t *d) {
  return t && ecg_tensor_static(t) ? ecg_tensor_dims(t, d) : -1;
}

/** Conv FLOPs: 2 * |Y| * C/group * prod(K) (+ |Y| with bias). */
int64_t ecg_flops_conv(const ecg_graph *g, const ecg_node *n) {
  int64_t wd[ECG_MAX_RANK], ny = ops_numel(ecg_node_output(g, n, 0));
  int rw = static_dims(ecg_node_input(g, n, 1), wd);
  if (rw < 2 || ny < 0) return -1;
  return 2 * ny * ops_prod(wd + 1, rw - 1) + (ecg_node_input(g, n, 2) ? ny : 0);
}

/** ConvTranspose FLOPs: 2 * |X| * M/group * prod(K) (+ |Y| with bias). */
int64_t ecg_flops_convtranspose(const ecg_graph *g, const ecg_node *n) {
  int64_t wd[ECG_MAX_RANK], nx = ops_numel(ecg_node_input(g, n, 0)), ny = ops_numel(ecg_node_output(g, n, 0));
  int rw = static_dims(ecg_node_input(g, n, 1), wd);
  if (rw < 2 || nx < 0 || ny < 0) return -1;
  return 2 * nx * ops_prod(wd + 1, rw - 1) + (ecg_node_input(g, n, 2) ? ny : 0);
}

/** MatMul FLOPs: 2 * |Y| * K. */
int64_t ecg_flops_matmul(const ecg_graph *g, const ecg_node *n) {
  const ecg_tensor *a = ecg_node_input(g, n, 0);
  int64_t ny = ops_numel(ecg_node_output(g, n, 0));
  if (!a || !a->shape_known || a->n_dims < 1 || ny < 0) return -1;
  int64_t k = a->dims[a->n_dims - 1]->value;
  return k < 0 ? -1 : 2 * ny * k;
}

/** Gemm FLOPs: 2*M*N*K (+ M*N with C; alpha/beta scaling not counted). */
int64_t ecg_flops_gemm(const ecg_graph *g, const ecg_node *n) {
  int64_t ad[ECG_MAX_RANK], ny = ops_numel(ecg_node_output(g, n, 0));
  if (static_dims(ecg_node_input(g, n, 0), ad) != 2 || ny < 0) return -1;
  int64_t k = ad[ecg_attr_i(n, "transA", 0) ? 0 : 1];
  return 2 * ny * k + (ecg_node_input(g, n, 2) ? ny : 0);
}

/** MaxPool/AveragePool FLOPs: |Y| * prod(kernel_shape). */
int64_t ecg_flops_pool(const ecg_graph *g, const ecg_node *n) {
  const int64_t *ks;
  int c = ecg_attr_ints(n, "kernel_shape", &ks);
  int64_t ny = ops_numel(ecg_node_output(g, n, 0)), p = ops_prod(ks, c < 0 ? 0 : c);
  return ny < 0 || c < 0 || p < 0 ? -1 : ny * p;
}

/** Col2Im (18): [N, C * prod(block_shape), L] -> [N, C, image_shape...] (ecg_col2im_geom
 *  checks the operands); the input's dtype. */
int ecg_infer_col2im(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_conv_geom gm;
  ECG_TRY(ecg_col2im_geom(g, n, &gm, e));
  int64_t od[ECG_MAX_RANK] = {gm.n, gm.c};
  for (int i = 0; i < gm.sp; i++) od[2 + i] = gm.in[i];
  const ecg_tensor *x = ecg_node_input(g, n, 0);
  int from[ECG_MAX_RANK] = {0, -1};
  for (int i = 0; i < gm.sp; i++) from[2 + i] = -1;
  return ops_set_out(g, n, 0, x->dtype, gm.sp + 2, od, x, from, e);
}
