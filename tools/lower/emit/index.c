/* Emitters for the index operators (format/ops/index.c): GatherND, ScatterElements /
 * Scatter, ScatterND, OneHot, MaxUnpool, Compress (One-to-Many: index maps through an
 * index tensor read at run time), EyeLike (One-to-Many generator), CastLike
 * (One-to-One), ReverseSequence (Shuffle), TopK and NonZero (Many-to-Many).
 *
 * Out-of-range indices never touch memory outside a tensor: gathers produce zeros,
 * scatters skip the update (ONNX Runtime rejects such inputs).  Negative indices count
 * from the end of their axis.  Where an output dim is data-dependent (TopK's K,
 * OneHot's depth, Compress, NonZero) the shape is static here (a constant operand or a
 * declared shape, see format/ops/index.c) and the kernel fills at most that many
 * entries, zeros past what the data yields. */
#include <string.h>

#include "../lower.h"
#include "emit.h"


static int has_input(const ecg_node *n, size_t i) { return n->n_inputs > i && n->inputs[i] >= 0; }
static int dtype_of(const ecg_lower *L, int id) { return L->g->tensors[id]->dtype; }
static size_t esize(const ecg_lower *L, int id) { return ecg_dtype_size(dtype_of(L, id)); }
static int64_t numel(const ecg_lower *L, int id) { return ecg_tensor_numel(L->g->tensors[id]); }
static long long LL(int64_t v) { return (long long)v; }

/* Every tensor of n must have a C type (16-bit floats are refused by ecg-lower before
 * emitters run; this guards strings and complex types). */
static int check_ctypes(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  for (size_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
    int id = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
    if (id < 0) continue;
    int dt = dtype_of(L, id);
    if (dt == ECG_FLOAT16 || dt == ECG_BFLOAT16 || !ecg_dtype_ctype(dt)) {
      char msg[128];
      snprintf(msg, sizeof msg, "dtype %s is not supported by this kernel", ecg_dtype_name(dt));
      return lw_node_err(L, n, e, "%s", msg);
    }
  }
  return ECG_OK;
}

/* out = data (the scatters' starting point), unless both share storage. */
static void copy_data(ecg_lower *L, int out, int in) {
  if (lw_same_storage(L, in, out) || L->t[out].bytes == 0) return;
  sb_printf(&L->code, "  memcpy(%s, ", lw_ptr(L, out));
  sb_printf(&L->code, "%s, %zu);\n", lw_ptr(L, in), L->t[out].bytes);
}

/* The statement combining update u into y[off] for a scatter's reduction into buf, or
 * -1 for an unknown reduction or one that makes no sense for bool. */
static int reduce_stmt(const ecg_node *n, int dtype, const char *dst, const char *u, char *buf, size_t sz) {
  char red[16];
  ecg_attr_s(n, "reduction", "none", red, sizeof red);
  if (!strcmp(red, "none")) snprintf(buf, sz, "%s = %s;", dst, u);
  else if (dtype == ECG_BOOL) return -1;
  else if (!strcmp(red, "add")) snprintf(buf, sz, "%s += %s;", dst, u);
  else if (!strcmp(red, "mul")) snprintf(buf, sz, "%s *= %s;", dst, u);
  else if (!strcmp(red, "max")) snprintf(buf, sz, "if (%s > %s) %s = %s;", u, dst, dst, u);
  else if (!strcmp(red, "min")) snprintf(buf, sz, "if (%s < %s) %s = %s;", u, dst, dst, u);
  else return -1;
  return 0;
}

/* ---------------------------------------------------------------- gathers, scatters */

/* Emit statements adding index tuple t's element offset into `off` (clearing `ok` when
 * an index is out of range): tuple of k int indices at ix[t*k..], dim j of the
 * indexed data has size dims[j] and element stride st[j]. */
static void tuple_offset(sbuf *c, int k, const int64_t *dims, const int64_t *st) {
  for (int j = 0; j < k; j++)
    sb_printf(c, "      { int64_t v = (int64_t)ix[t * %d + %d]; if (v < 0) v += %lld; if (v < 0 || v >= %lld) ok = 0; else off += v * %lld; }\n",
              k, j, LL(dims[j]), LL(dims[j]), LL(st[j]));
}

/** GatherND: y[t, :] = data[batch(t), ix[t, 0], .., ix[t, k-1], :] for every index
 *  tuple t (slices copied whole; out-of-range tuples give zeros). */
int emit_gather_nd(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t dd[ECG_MAX_RANK], id[ECG_MAX_RANK], ds[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], dd), q = lw_dims(L, n->inputs[1], id);
  int64_t b = ecg_attr_i(n, "batch_dims", 0), k = id[q - 1];
  if (b < 0 || b + k > r || b >= q) return lw_node_err(L, n, e, "batch_dims or indices shape out of range");
  lw_strides(r, dd, ds);
  int64_t tuples = 1, per_batch = 1, slice = 1, bstride = b > 0 ? ds[b - 1] : 0;
  for (int i = 0; i < q - 1; i++) tuples *= id[i];
  for (int i = (int)b; i < q - 1; i++) per_batch *= id[i];
  for (int i = (int)(b + k); i < r; i++) slice *= dd[i];
  size_t es = esize(L, n->inputs[0]), blk = (size_t)slice * es;
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *ix = %s;\n", lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    const unsigned char *x = (const unsigned char *)%s;\n", lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    unsigned char *y = (unsigned char *)%s;\n", lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 32768)\n", LL(tuples * slice));
  sb_printf(c, "    for (int64_t t = 0; t < %lld; t++) {\n", LL(tuples));
  sb_printf(c, "      int64_t off = (t / %lld) * %lld; int ok = 1;\n", LL(per_batch > 0 ? per_batch : 1), LL(bstride));
  tuple_offset(c, (int)k, dd + b, ds + b);
  sb_printf(c, "      if (ok) memcpy(y + (size_t)t * %zu, x + (size_t)off * %zu, %zu);\n", blk, es, blk);
  sb_printf(c, "      else memset(y + (size_t)t * %zu, 0, %zu);\n    }\n  }\n", blk, blk);
  return ECG_OK;
}

/** ScatterND: y = data, then y[ix[t, :], :] (op)= updates[t, :] for every tuple t in
 *  order (duplicates: the last write wins, or every one is combined). */
int emit_scatter_nd(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t dd[ECG_MAX_RANK], id[ECG_MAX_RANK], ds[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], dd), q = lw_dims(L, n->inputs[1], id), out = n->outputs[0];
  int64_t k = id[q - 1], tuples = 1, slice = 1;
  lw_strides(r, dd, ds);
  for (int i = 0; i < q - 1; i++) tuples *= id[i];
  for (int i = (int)k; i < r; i++) slice *= dd[i];
  char stmt[160];
  char usrc[64];
  snprintf(usrc, sizeof usrc, "u[t * %lld + s]", LL(slice));
  if (reduce_stmt(n, dtype_of(L, out), "y[off + s]", usrc, stmt, sizeof stmt))
    return lw_node_err(L, n, e, "this reduction is not supported for the dtype");
  copy_data(L, out, n->inputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *ix = %s;\n", lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    const %s *u = %s;\n", lw_ctype(L, n->inputs[2]), lw_ptr(L, n->inputs[2]));
  sb_printf(c, "    %s *y = %s;\n", lw_ctype(L, out), lw_ptr(L, out));
  sb_printf(c, "    for (int64_t t = 0; t < %lld; t++) {\n      int64_t off = 0; int ok = 1;\n", LL(tuples));
  tuple_offset(c, (int)k, dd, ds);
  sb_printf(c, "      if (!ok) continue;\n      for (int64_t s = 0; s < %lld; s++) %s\n    }\n  }\n", LL(slice), stmt);
  return ECG_OK;
}

/** ScatterElements / Scatter: y = data, then for every position p of indices,
 *  y[p with p[axis] = indices[p]] (op)= updates[p], in order. */
int emit_scatter_elements(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t dd[ECG_MAX_RANK], id[ECG_MAX_RANK], ds[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], dd), out = n->outputs[0];
  lw_dims(L, n->inputs[1], id);
  lw_strides(r, dd, ds);
  int axis = lw_axis(ecg_attr_i(n, "axis", 0), r);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  char stmt[160];
  if (reduce_stmt(n, dtype_of(L, out), "y[off]", "u[p]", stmt, sizeof stmt))
    return lw_node_err(L, n, e, "this reduction is not supported for the dtype");
  copy_data(L, out, n->inputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *ix = %s;\n", lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    const %s *u = %s;\n", lw_ctype(L, n->inputs[2]), lw_ptr(L, n->inputs[2]));
  sb_printf(c, "    %s *y = %s;\n", lw_ctype(L, out), lw_ptr(L, out));
  sb_printf(c, "    for (int64_t p = 0; p < %lld; p++) {\n      int64_t rem = p, off = 0;\n", LL(numel(L, n->inputs[1])));
  sb_printf(c, "      int64_t k = (int64_t)ix[p];\n      if (k < 0) k += %lld;\n", LL(dd[axis]));
  sb_printf(c, "      if (k < 0 || k >= %lld) continue;\n", LL(dd[axis]));
  for (int d = r - 1; d >= 0; d--) {
    if (d == axis) sb_printf(c, "      off += k * %lld;", LL(ds[d]));
    else sb_printf(c, "      off += (rem %% %lld) * %lld;", LL(id[d]), LL(ds[d]));
    sb_printf(c, " rem /= %lld;\n", LL(id[d]));
  }
  sb_printf(c, "      %s\n    }\n  }\n", stmt);
  return ECG_OK;
}

/** OneHot: y = off_value everywhere, then y[.., indices[p] (axis), ..] = on_value for
 *  each index in [-depth, depth) (negative ones wrap from opset 11). */
int emit_onehot(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int q = lw_dims(L, n->inputs[0], id), out = n->outputs[0];
  lw_dims(L, out, od);
  int axis = lw_axis(ecg_attr_i(n, "axis", -1), q + 1);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  int64_t D = od[axis], inner = 1, total = numel(L, out);
  for (int i = axis; i < q; i++) inner *= id[i];
  const ecg_tensor *dt = L->g->tensors[n->inputs[1]];
  sbuf *c = &L->code;
  const char *ot = lw_ctype(L, out);
  sb_printf(c, "  {\n    const %s *ix = %s;\n", lw_ctype(L, n->inputs[0]), lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    const %s *vals = %s;\n", lw_ctype(L, n->inputs[2]), lw_ptr(L, n->inputs[2]));
  sb_printf(c, "    %s *y = %s;\n    const %s off_v = vals[0], on_v = vals[1];\n", ot, lw_ptr(L, out), ot);
  if (dt->is_const) sb_printf(c, "    const int64_t depth = %lld;\n", LL(D));
  else sb_printf(c, "    const int64_t depth = (int64_t)%s[0];\n", lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    for (int64_t p = 0; p < %lld; p++) y[p] = off_v;\n", LL(total));
  sb_printf(c, "    for (int64_t p = 0; p < %lld; p++) {\n", LL(numel(L, n->inputs[0])));
  sb_printf(c, "      int64_t v = (int64_t)ix[p];\n");
  if (n->opset >= 11 || n->opset <= 0) sb_printf(c, "      if (v < 0) v += depth;\n");
  sb_printf(c, "      if (v < 0 || v >= depth || v >= %lld) continue;\n", LL(D));
  sb_printf(c, "      y[((p / %lld) * %lld + v) * %lld + p %% %lld] = on_v;\n    }\n  }\n", LL(inner), LL(D), LL(inner), LL(inner));
  return ECG_OK;
}

/** MaxUnpool: y = 0, then x[p] lands at flat position indices[p] of the unpooled shape
 *  [N, C, (s-1)*stride - pads + kernel ..], placed at the origin of output_shape. */
int emit_max_unpool(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], ud[ECG_MAX_RANK], us[ECG_MAX_RANK], os[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd), out = n->outputs[0];
  lw_dims(L, out, od);
  const int64_t *ks, *st, *pads;
  int nk = ecg_attr_ints(n, "kernel_shape", &ks), nst = ecg_attr_ints(n, "strides", &st), np = ecg_attr_ints(n, "pads", &pads);
  if (nk != r - 2) return lw_node_err(L, n, e, "kernel_shape does not match the input rank");
  ud[0] = xd[0];
  ud[1] = xd[1];
  for (int i = 0; i < nk; i++)
    ud[i + 2] = (xd[i + 2] - 1) * (nst == nk ? st[i] : 1) - (np == 2 * nk ? pads[i] + pads[i + nk] : 0) + ks[i];
  int64_t utotal = lw_strides(r, ud, us);
  lw_strides(r, od, os);
  bool same = true;
  for (int i = 0; i < r; i++) same = same && ud[i] == od[i];
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", lw_ctype(L, n->inputs[0]), lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    const %s *ix = %s;\n", lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    %s *y = %s;\n", lw_ctype(L, out), lw_ptr(L, out));
  sb_printf(c, "    memset(y, 0, %zu);\n", L->t[out].bytes);
  sb_printf(c, "    for (int64_t p = 0; p < %lld; p++) {\n", LL(numel(L, n->inputs[0])));
  sb_printf(c, "      int64_t v = (int64_t)ix[p];\n      if (v < 0 || v >= %lld) continue;\n", LL(utotal));
  if (same) {
    sb_printf(c, "      y[v] = x[p];\n    }\n  }\n");
    return ECG_OK;
  }
  sb_printf(c, "      int64_t off = 0, ok = 1;\n");
  for (int i = 0; i < r; i++)
    sb_printf(c, "      { int64_t q = (v / %lld) %% %lld; if (q >= %lld) ok = 0; off += q * %lld; }\n", LL(us[i]), LL(ud[i]), LL(od[i]), LL(os[i]));
  sb_printf(c, "      if (ok) y[off] = x[p];\n    }\n  }\n");
  return ECG_OK;
}

/* ---------------------------------------------------------------- selection */

/** Compress: walk the condition (at most the axis length), copying each selected slab
 *  [outer, 1, inner] to the next output position; positions the data leaves are 0. */
int emit_compress(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd), out = n->outputs[0];
  int ro = lw_dims(L, out, od);
  int axis = ecg_attr_find(n, "axis") ? lw_axis(ecg_attr_i(n, "axis", 0), r) : -1;
  if (ecg_attr_find(n, "axis") && axis < 0) return lw_node_err(L, n, e, "axis out of range");
  int64_t outer = 1, inner = 1, N, M = od[axis < 0 ? 0 : axis];
  if (axis < 0) {
    N = numel(L, n->inputs[0]);
  } else {
    N = xd[axis];
    for (int i = 0; i < axis; i++) outer *= xd[i];
    for (int i = axis + 1; i < r; i++) inner *= xd[i];
  }
  (void)ro;
  int64_t len = numel(L, n->inputs[1]);
  size_t es = esize(L, n->inputs[0]), blk = (size_t)inner * es;
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *cond = %s;\n", lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    const unsigned char *x = (const unsigned char *)%s;\n", lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    unsigned char *y = (unsigned char *)%s;\n    int64_t m = 0;\n", lw_ptr(L, out));
  sb_printf(c, "    for (int64_t j = 0; j < %lld && m < %lld; j++) {\n", LL(len < N ? len : N), LL(M));
  sb_printf(c, "      if (!cond[j]) continue;\n");
  sb_printf(c, "      for (int64_t o = 0; o < %lld; o++)\n", LL(outer));
  sb_printf(c, "        memcpy(y + ((size_t)o * %lld + (size_t)m) * %zu, x + ((size_t)o * %lld + (size_t)j) * %zu, %zu);\n",
            LL(M), blk, LL(N), blk, blk);
  sb_printf(c, "      m++;\n    }\n");
  sb_printf(c, "    for (int64_t o = 0; m < %lld && o < %lld; o++)\n", LL(M), LL(outer));
  sb_printf(c, "      memset(y + ((size_t)o * %lld + (size_t)m) * %zu, 0, (size_t)(%lld - m) * %zu);\n  }\n", LL(M), blk, LL(M), blk);
  return ECG_OK;
}

/** NonZero: y[d, m] = coordinate d of the m-th non-zero element (row-major), for at
 *  most the output's count; entries the data leaves are 0. */
int emit_nonzero(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t xd[ECG_MAX_RANK], xs[ECG_MAX_RANK], od[2];
  int r = lw_dims(L, n->inputs[0], xd), out = n->outputs[0];
  lw_dims(L, out, od);
  int64_t total = lw_strides(r, xd, xs), M = od[1];
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", lw_ctype(L, n->inputs[0]), lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    int64_t *y = %s, m = 0;\n", lw_ptr(L, out));
  sb_printf(c, "    memset(y, 0, %zu);\n", L->t[out].bytes);
  sb_printf(c, "    for (int64_t p = 0; p < %lld && m < %lld; p++) {\n      if (x[p] == 0) continue;\n", LL(total), LL(M));
  for (int d = 0; d < r; d++) sb_printf(c, "      y[%lld + m] = (p / %lld) %% %lld;\n", LL(d * M), LL(xs[d]), LL(xd[d]));
  sb_printf(c, "      m++;\n    }\n  }\n");
  return ECG_OK;
}

/** TopK: per row along axis, a stable merge sort of the positions (largest or
 *  smallest first; equal values keep the lower index first), the first K written to
 *  values and indices. A run-time K below the static one leaves 0 / -1 after it. */
int emit_topk(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd), vo = n->outputs[0], io = n->n_outputs > 1 ? n->outputs[1] : -1;
  lw_dims(L, vo, od);
  int axis = lw_axis(ecg_attr_i(n, "axis", -1), r);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  int64_t N = xd[axis], K = od[axis], outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= xd[i];
  for (int i = axis + 1; i < r; i++) inner *= xd[i];
  if (K > N) return lw_node_err(L, n, e, "K exceeds the axis length");
  if (io >= 0) {
    int64_t id2[ECG_MAX_RANK];
    if (lw_dims(L, io, id2) != r || memcmp(id2, od, sizeof(int64_t) * (size_t)r))
      return lw_node_err(L, n, e, "values and indices of different shapes are not supported");
  }
  int largest = ecg_attr_i(n, "largest", 1) != 0;
  char sc[64];
  snprintf(sc, sizeof sc, "%lld", LL(4 * (N > 0 ? N : 1))); /* two int64 position arrays, in floats */
  lw_need_scratch(L, sc);
  sbuf *c = &L->code;
  const char *xt = lw_ctype(L, n->inputs[0]);
  sb_printf(c, "  {\n    const %s *x = %s;\n", xt, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %s *yv = %s;\n", lw_ctype(L, vo), lw_ptr(L, vo));
  if (io >= 0) sb_printf(c, "    int64_t *yi = %s;\n", lw_ptr(L, io));
  if (has_input(n, 1) && !L->g->tensors[n->inputs[1]]->is_const)
    sb_printf(c, "    int64_t kk = (int64_t)%s[0]; if (kk > %lld) kk = %lld; if (kk < 0) kk = 0;\n", lw_ptr(L, n->inputs[1]), LL(K), LL(K));
  else
    sb_printf(c, "    const int64_t kk = %lld;\n", LL(K));
  sb_printf(c, "    int64_t *pa = (int64_t *)ctx->scratch, *pb = pa + %lld;\n", LL(N));
  sb_printf(c, "    for (int64_t row = 0; row < %lld; row++) {\n", LL(outer * inner));
  sb_printf(c, "      const %s *xr = x + (row / %lld) * %lld + row %% %lld;\n", xt, LL(inner), LL(N * inner), LL(inner));
  sb_printf(c, "      int64_t *a = pa, *b = pb;\n      for (int64_t j = 0; j < %lld; j++) a[j] = j;\n", LL(N));
  sb_printf(c, "      for (int64_t w = 1; w < %lld; w *= 2) {\n", LL(N));
  sb_printf(c, "        for (int64_t lo = 0; lo < %lld; lo += 2 * w) {\n", LL(N));
  sb_printf(c, "          int64_t mid = lo + w < %lld ? lo + w : %lld, hi = lo + 2 * w < %lld ? lo + 2 * w : %lld;\n", LL(N), LL(N), LL(N), LL(N));
  sb_printf(c, "          int64_t i = lo, j = mid, t = lo;\n");
  sb_printf(c, "          while (i < mid && j < hi) b[t++] = (xr[a[j] * %lld] %s xr[a[i] * %lld]) ? a[j++] : a[i++];\n",
            LL(inner), largest ? ">" : "<", LL(inner));
  sb_printf(c, "          while (i < mid) b[t++] = a[i++];\n          while (j < hi) b[t++] = a[j++];\n        }\n");
  sb_printf(c, "        int64_t *tmp = a; a = b; b = tmp;\n      }\n");
  sb_printf(c, "      size_t ob = (size_t)(row / %lld) * %lld + (size_t)(row %% %lld);\n", LL(inner), LL(K * inner), LL(inner));
  sb_printf(c, "      for (int64_t q = 0; q < %lld; q++) {\n", LL(K));
  sb_printf(c, "        yv[ob + (size_t)q * %lld] = q < kk ? xr[a[q] * %lld] : (%s)0;\n", LL(inner), LL(inner), lw_ctype(L, vo));
  if (io >= 0) sb_printf(c, "        yi[ob + (size_t)q * %lld] = q < kk ? a[q] : -1;\n", LL(inner));
  sb_printf(c, "      }\n    }\n  }\n");
  return ECG_OK;
}

/* ---------------------------------------------------------------- others */

/** EyeLike (when not folded): zeros with ones on diagonal k. */
int emit_eyelike(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t od[2], k = ecg_attr_i(n, "k", 0);
  int out = n->outputs[0];
  lw_dims(L, out, od);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    %s *y = %s;\n    memset(y, 0, %zu);\n", lw_ctype(L, out), lw_ptr(L, out), L->t[out].bytes);
  sb_printf(c, "    for (int64_t i = 0; i < %lld; i++) if (i + %lld >= 0 && i + %lld < %lld) y[i * %lld + i + %lld] = (%s)1;\n  }\n",
            LL(od[0]), LL(k), LL(k), LL(od[1]), LL(od[1]), LL(k), lw_ctype(L, out));
  return ECG_OK;
}

/** CastLike: Cast to target_type's dtype (to bool: != 0; from a float type to bfloat16:
 *  truncated as Cast does, ecg_bf16_trunc). */
int emit_castlike(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  /* an elementwise map: 16-bit floats are converted at load/store by lw_emit_map */
  int ids[1] = {n->inputs[0]}, rank[1];
  int64_t dims[1][ECG_MAX_RANK];
  rank[0] = lw_dims(L, ids[0], dims[0]);
  int to = dtype_of(L, n->outputs[0]), from = dtype_of(L, ids[0]);
  const char *tmpl = to == ECG_BOOL ? "($0 != 0)"
                     : to == ECG_BFLOAT16 && from != ECG_BFLOAT16 && ecg_dtype_is_float(from) ? "(($T)ecg_bf16_trunc((double)$0))"
                                                                                                : "(($T)$0)";
  return lw_emit_map(L, n->outputs[0], 1, ids, dims, rank, tmpl, 0, 0) ? ecg_errf(e, ECG_ERR_INTERNAL, "template") : ECG_OK;
}

/** ReverseSequence: x viewed as [d0, d1, inner]; row (t, b) of y is row
 *  (L-1-t, b) of x for t < L = clamp(sequence_lens[b], 0, T), else row (t, b). */
int emit_reverse_sequence(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ECG_TRY(check_ctypes(L, n, e));
  int64_t xd[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd), out = n->outputs[0];
  int ba = (int)ecg_attr_i(n, "batch_axis", 1), ta = (int)ecg_attr_i(n, "time_axis", 0);
  if (ba < 0 || ba > 1 || ta < 0 || ta > 1 || ba == ta) return lw_node_err(L, n, e, "batch_axis/time_axis must be 0 and 1");
  int64_t inner = 1, T = xd[ta];
  for (int i = 2; i < r; i++) inner *= xd[i];
  size_t es = esize(L, n->inputs[0]), blk = (size_t)inner * es;
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const unsigned char *x = (const unsigned char *)%s;\n", lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    const %s *sl = %s;\n", lw_ctype(L, n->inputs[1]), lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    unsigned char *y = (unsigned char *)%s;\n", lw_ptr(L, out));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 32768)\n", LL(xd[0] * xd[1] * inner));
  sb_printf(c, "    for (int64_t i = 0; i < %lld; i++) {\n", LL(xd[0] * xd[1]));
  sb_printf(c, "      int64_t i0 = i / %lld, i1 = i %% %lld, t = %s, len = (int64_t)sl[%s];\n", LL(xd[1]), LL(xd[1]),
            ta == 0 ? "i0" : "i1", ta == 0 ? "i1" : "i0");
  sb_printf(c, "      if (len > %lld) len = %lld;\n", LL(T), LL(T));
  sb_printf(c, "      int64_t st = t < len ? len - 1 - t : t, src = %s * %lld + %s;\n", ta == 0 ? "st" : "i0", LL(xd[1]),
            ta == 0 ? "i1" : "st");
  sb_printf(c, "      memcpy(y + (size_t)i * %zu, x + (size_t)src * %zu, %zu);\n    }\n  }\n", blk, blk, blk);
  return ECG_OK;
}
