/* Data-movement operators: Reshape, Flatten, Squeeze, Unsqueeze (Reorganize);
 * Transpose, DepthToSpace, SpaceToDepth (Shuffle); Concat, Split, Slice; Gather,
 * Expand, Tile, Pad, Resize/Upsample (One-to-Many).  Shape functions, and folding of
 * the ones used in shape subgraphs (copy, transpose, concat, slice, gather), which
 * move raw element bytes and so work for every fixed-size dtype. */
#include <math.h>

#include "ops_common.h"

/* Read an integer list given as attribute `attr` (older opsets; presence decides) or
 * else as constant input `in` into v[max]; *count = -1 when neither is given. */
static int ints_operand(ecg_graph *g, ecg_node *n, const char *attr, int in, int64_t *v, int max,
                        int *count, const char *what, ecg_err *e) {
  const int64_t *a;
  int c = attr ? ecg_attr_ints(n, attr, &a) : -1;
  if (c > max) return ecg_node_errf(e, g, n, "attribute '%s' has too many values (%d)", attr, c);
  if (c >= 0) {
    memcpy(v, a, sizeof(int64_t) * (size_t)c);
    *count = c;
    return ECG_OK;
  }
  return ops_const_input(g, n, in, v, max, count, what, e);
}

/* Normalise count axes in place against rank r; fail on out-of-range or repeated. */
static int norm_axes(ecg_graph *g, ecg_node *n, int64_t *axes, int count, int r, ecg_err *e) {
  bool seen[ECG_MAX_RANK] = {0};
  for (int k = 0; k < count; k++) {
    int ax;
    if (!ops_axis(axes[k], r, &ax)) return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)axes[k], r);
    if (seen[ax]) return ecg_node_errf(e, g, n, "axis %lld repeated", (long long)axes[k]);
    seen[ax] = true;
    axes[k] = ax;
  }
  return ECG_OK;
}

/* Read input 0 of n and its dims. */
static int data_input(ecg_graph *g, ecg_node *n, ecg_tensor **x, int64_t *d, int *r, ecg_err *e) {
  ECG_TRY(ops_input(g, n, 0, x, e));
  *r = ecg_tensor_dims(*x, d);
  return ECG_OK;
}

/* ---------------------------------------------------------------- Reorganize */

/* Reshape's -1 dim: numel(X) / known output dims, where output dims copied from X
 * (used[]) cancel with themselves; -1 stays symbolic when an unused X dim is. */
static int reshape_infer_neg(ecg_graph *g, ecg_node *n, const int64_t *xd, int rx, const bool *used,
                             const int64_t *od, const int *from, int ro, int neg, int64_t *out, ecg_err *e) {
  int64_t in_p = 1, out_p = 1;
  for (int i = 0; i < rx; i++) {
    if (used[i]) continue;
    if (xd[i] < 0) { *out = -1; return ECG_OK; }
    if (__builtin_mul_overflow(in_p, xd[i], &in_p))
      return ecg_node_errf(e, g, n, "the input's element count overflows 64 bits");
  }
  for (int i = 0; i < ro; i++)
    if (i != neg && from[i] < 0 && __builtin_mul_overflow(out_p, od[i], &out_p))
      return ecg_node_errf(e, g, n, "the target shape's element count overflows 64 bits");
  if (out_p == 0 || in_p % out_p)
    return ecg_node_errf(e, g, n, "cannot infer the -1 dim: %lld elements into blocks of %lld", (long long)in_p, (long long)out_p);
  *out = in_p / out_p;
  return ECG_OK;
}

/** Reshape: target shape from input 1 (or attribute 'shape' in opset < 5); 0 copies the
 *  input dim (unless allowzero), one -1 is inferred. */
int ecg_infer_reshape(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t xd[ECG_MAX_RANK], s[ECG_MAX_RANK + 1], od[ECG_MAX_RANK];
  int rx, ns, from[ECG_MAX_RANK], neg = -1;
  bool used[ECG_MAX_RANK] = {0}, allowzero = ecg_attr_i(n, "allowzero", 0) != 0;
  ECG_TRY(data_input(g, n, &x, xd, &rx, e));
  int rt = ops_runtime_operand(g, n, 1);
  if (rt >= 0 && !ecg_attr_find(n, "shape")) return ops_set_out_unknown(g, n, 0, x->dtype, rt, e);
  ECG_TRY(ints_operand(g, n, "shape", 1, s, ECG_MAX_RANK + 1, &ns, "Reshape", e));
  if (ns < 0) return ecg_node_errf(e, g, n, "missing shape input");
  if (ns > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "target rank %d exceeds %d", ns, ECG_MAX_RANK);
  for (int i = 0; i < ns; i++) {
    od[i] = s[i];
    from[i] = -1;
    if (s[i] == -1) {
      if (neg >= 0) return ecg_node_errf(e, g, n, "more than one -1 in the target shape");
      neg = i;
    } else if (s[i] == 0 && !allowzero) {
      if (i >= rx) return ecg_node_errf(e, g, n, "0 at position %d copies a dim the input (rank %d) lacks", i, rx);
      od[i] = xd[i];
      from[i] = i;
      used[i] = true;
    } else if (s[i] < 0) {
      return ecg_node_errf(e, g, n, "invalid target dim %lld", (long long)s[i]);
    }
  }
  if (neg >= 0) ECG_TRY(reshape_infer_neg(g, n, xd, rx, used, od, from, ns, neg, &od[neg], e));
  int64_t nx = ops_prod(xd, rx), no = ops_prod(od, ns);
  if (nx >= 0 && no >= 0 && nx != no)
    return ecg_node_errf(e, g, n, "cannot reshape %lld elements into %lld", (long long)nx, (long long)no);
  return ops_set_out(g, n, 0, x->dtype, ns, od, x, from, e);
}

/** Flatten: [prod(d[:axis]), prod(d[axis:])]; axis default 1, negative allowed. */
int ecg_infer_flatten(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], od[2];
  int r;
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  int64_t axis = ecg_attr_i(n, "axis", 1);
  if (axis < -r || axis > r) return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)axis, r);
  if (axis < 0) axis += r;
  od[0] = ops_prod(d, (int)axis);
  od[1] = ops_prod(d + axis, r - (int)axis);
  int from[2] = {axis == 1 ? 0 : -1, axis == r - 1 ? r - 1 : -1};
  return ops_set_out(g, n, 0, x->dtype, 2, od, x, from, e);
}

/** Squeeze: axes from the attribute (opset < 13) or input 1 (>= 13); without axes every
 *  dim of size 1 goes (fails when a dim is symbolic). */
int ecg_infer_squeeze(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], axes[ECG_MAX_RANK + 1], od[ECG_MAX_RANK];
  int r, na, from[ECG_MAX_RANK], k = 0;
  bool drop[ECG_MAX_RANK] = {0};
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  int rt = ops_runtime_operand(g, n, 1);
  if (rt >= 0 && !ecg_attr_find(n, "axes")) return ops_set_out_unknown(g, n, 0, x->dtype, r - rt, e);
  ECG_TRY(ints_operand(g, n, "axes", 1, axes, ECG_MAX_RANK + 1, &na, "Squeeze", e));
  ECG_TRY(norm_axes(g, n, axes, na, r, e));
  for (int i = 0; i < na; i++) {
    if (d[axes[i]] > 1 || d[axes[i]] == 0)
      return ecg_node_errf(e, g, n, "cannot squeeze axis %lld of size %lld", (long long)axes[i], (long long)d[axes[i]]);
    drop[axes[i]] = true;
  }
  for (int i = 0; i < r && na <= 0; i++) {
    if (d[i] < 0) return ecg_node_errf(e, g, n, "no axes given and dim %d of '%s' is symbolic: output rank unknown", i, x->name);
    drop[i] = d[i] == 1;
  }
  for (int i = 0; i < r; i++)
    if (!drop[i]) { od[k] = d[i]; from[k++] = i; }
  return ops_set_out(g, n, 0, x->dtype, k, od, x, from, e);
}

/** Unsqueeze: axes (attribute before opset 13, input 1 from 13) index the output. */
int ecg_infer_unsqueeze(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], axes[ECG_MAX_RANK + 1], od[ECG_MAX_RANK];
  int r, na, from[ECG_MAX_RANK];
  bool ins[ECG_MAX_RANK] = {0};
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  int rt = ops_runtime_operand(g, n, 1);
  if (rt >= 0 && !ecg_attr_find(n, "axes")) return ops_set_out_unknown(g, n, 0, x->dtype, r + rt, e);
  ECG_TRY(ints_operand(g, n, "axes", 1, axes, ECG_MAX_RANK + 1, &na, "Unsqueeze", e));
  if (na <= 0) return ecg_node_errf(e, g, n, "missing axes");
  if (r + na > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output rank %d exceeds %d", r + na, ECG_MAX_RANK);
  ECG_TRY(norm_axes(g, n, axes, na, r + na, e));
  for (int i = 0; i < na; i++) ins[axes[i]] = true;
  for (int i = 0, k = 0; i < r + na; i++) {
    od[i] = ins[i] ? 1 : d[k];
    from[i] = ins[i] ? -1 : k++;
  }
  return ops_set_out(g, n, 0, x->dtype, r + na, od, x, from, e);
}

/** Fold Reshape/Flatten/Squeeze/Unsqueeze: the data bytes are unchanged. */
int ecg_eval_copy(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  size_t es;
  void *buf;
  if (!x || !y || !x->is_const) return ecg_node_errf(e, g, n, "input is not a constant");
  ECG_TRY(ops_elem_size(g, n, x, &es, e));
  if (ecg_tensor_numel(x) != ecg_tensor_numel(y) || x->data.len != (size_t)ecg_tensor_numel(x) * es)
    return ecg_node_errf(e, g, n, "element counts differ");
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  if (x->data.len) memcpy(buf, x->data.data, x->data.len);
  return ECG_OK;
}

/* ---------------------------------------------------------------- Shuffle */

int ecg_perm_attr(const ecg_node *n, int r, int *p) {
  const int64_t *a;
  int c = ecg_attr_ints(n, "perm", &a);
  bool seen[ECG_MAX_RANK] = {0};
  if (r < 0 || r > ECG_MAX_RANK || (c >= 0 && c != r)) return -1;
  for (int i = 0; i < r; i++) {
    int64_t v = c >= 0 ? a[i] : r - 1 - i;
    if (v < 0 || v >= r || seen[v]) return -1;
    seen[v] = true;
    p[i] = (int)v;
  }
  return 0;
}

/* Transpose's permutation into p[r], or an error naming the node. */
static int read_perm(ecg_graph *g, ecg_node *n, int r, int *p, ecg_err *e) {
  if (ecg_perm_attr(n, r, p) == 0) return ECG_OK;
  const int64_t *a;
  int c = ecg_attr_ints(n, "perm", &a);
  if (c >= 0 && c != r) return ecg_node_errf(e, g, n, "perm has %d entries for rank %d", c, r);
  return ecg_node_errf(e, g, n, "perm is not a permutation of 0..%d", r - 1);
}

/** Transpose: output dim i = input dim perm[i] (perm default reverses). */
int ecg_infer_transpose(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int r, p[ECG_MAX_RANK];
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  ECG_TRY(read_perm(g, n, r, p, e));
  for (int i = 0; i < r; i++) od[i] = d[p[i]];
  return ops_set_out(g, n, 0, x->dtype, r, od, x, p, e);
}

/* Copy out[q] = in[sum_j idx_j * st[j]] over output dims od[r] with input element
 * strides st (the one gather loop of Transpose and Slice); base is an element offset. */
static void strided_copy(void *out, const void *in, size_t es, const int64_t *od, int r,
                         const int64_t *st, int64_t base) {
  int64_t idx[ECG_MAX_RANK] = {0}, off = base, total = ops_prod(od, r);
  for (int64_t q = 0; q < total; q++) {
    memcpy((char *)out + (size_t)q * es, (const char *)in + (size_t)off * es, es);
    for (int j = r - 1; j >= 0; j--) {
      off += st[j];
      if (++idx[j] < od[j]) break;
      off -= st[j] * od[j];
      idx[j] = 0;
    }
  }
}

/** Fold Transpose (any fixed-size dtype). */
int ecg_eval_transpose(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK], s[ECG_MAX_RANK], st[ECG_MAX_RANK];
  int p[ECG_MAX_RANK];
  size_t es;
  void *buf;
  if (!x || !y || !x->is_const) return ecg_node_errf(e, g, n, "input is not a constant");
  ECG_TRY(ops_elem_size(g, n, x, &es, e));
  int r = ecg_tensor_dims(x, d);
  ECG_TRY(read_perm(g, n, r, p, e));
  ops_strides(d, r, s);
  for (int i = 0; i < r; i++) { od[i] = d[p[i]]; st[i] = s[p[i]]; }
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  strided_copy(buf, x->data.data, es, od, r, st, 0);
  return ECG_OK;
}

/* DepthToSpace (to_space) and SpaceToDepth on [N,C,H,W] with 'blocksize'. */
static int block_shuffle(ecg_graph *g, ecg_node *n, bool to_space, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], b = ecg_attr_i(n, "blocksize", 0);
  int r;
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  if (r != 4) return ecg_node_errf(e, g, n, "input must be 4-D, has rank %d", r);
  if (b < 1) return ecg_node_errf(e, g, n, "missing or invalid blocksize");
  int64_t c = d[1], h = d[2], w = d[3];
  if (to_space ? c >= 0 && c % (b * b) : (h >= 0 && h % b) || (w >= 0 && w % b))
    return ecg_node_errf(e, g, n, "dims %s not divisible by blocksize %lld", to_space ? "C" : "H, W", (long long)b);
  int64_t od[4] = {d[0], c < 0 ? -1 : to_space ? c / (b * b) : c * b * b, h < 0 ? -1 : to_space ? h * b : h / b,
                   w < 0 ? -1 : to_space ? w * b : w / b};
  int from[4] = {0, -1, -1, -1};
  return ops_set_out(g, n, 0, x->dtype, 4, od, x, from, e);
}

/** DepthToSpace (DCR or CRD mode): [N,C,H,W] -> [N,C/b²,H*b,W*b]. */
int ecg_infer_depth_to_space(ecg_graph *g, ecg_node *n, ecg_err *e) { return block_shuffle(g, n, true, e); }

/** SpaceToDepth: [N,C,H,W] -> [N,C*b²,H/b,W/b]. */
int ecg_infer_space_to_depth(ecg_graph *g, ecg_node *n, ecg_err *e) { return block_shuffle(g, n, false, e); }

/* ---------------------------------------------------------------- Concat, Split, Slice */

/** Concat along 'axis' (negative allowed): other dims must agree. */
int ecg_infer_concat(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *t;
  int64_t d[ECG_MAX_RANK], td[ECG_MAX_RANK];
  int r, ax, from[ECG_MAX_RANK];
  if (n->n_inputs < 1) return ecg_node_errf(e, g, n, "expected at least 1 input");
  if (!ecg_attr_find(n, "axis")) return ecg_node_errf(e, g, n, "missing attribute 'axis'");
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  if (!ops_axis(ecg_attr_i(n, "axis", 0), r, &ax))
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", 0), r);
  for (size_t k = 1; k < n->n_inputs; k++) {
    ECG_TRY(ops_input(g, n, (int)k, &t, e));
    if (ecg_tensor_dims(t, td) != r) return ecg_node_errf(e, g, n, "input '%s' has rank %zu, expected %d", t->name, t->n_dims, r);
    for (int i = 0; i < r; i++) {
      if (i == ax) { d[i] = d[i] < 0 || td[i] < 0 ? -1 : d[i] + td[i]; continue; }
      if (d[i] >= 0 && td[i] >= 0 && d[i] != td[i])
        return ecg_node_errf(e, g, n, "input '%s' has dim %d = %lld, expected %lld", t->name, i, (long long)td[i], (long long)d[i]);
      if (d[i] < 0) d[i] = td[i];
    }
  }
  for (int i = 0; i < r; i++) from[i] = i == ax && n->n_inputs > 1 ? -1 : i;
  return ops_set_out(g, n, 0, x->dtype, r, d, x, from, e);
}

/** Fold Concat (any fixed-size dtype). */
int ecg_eval_concat(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *y = ecg_node_output(g, n, 0);
  int64_t d[ECG_MAX_RANK];
  size_t es;
  char *buf;
  if (!y) return ecg_node_errf(e, g, n, "no output");
  ECG_TRY(ops_elem_size(g, n, y, &es, e));
  int r = ecg_tensor_dims(y, d), ax;
  if (!ops_axis(ecg_attr_i(n, "axis", 0), r, &ax)) return ecg_node_errf(e, g, n, "bad axis");
  int64_t outer = ops_prod(d, ax), inner = ops_prod(d + ax + 1, r - ax - 1);
  for (size_t k = 0; k < n->n_inputs; k++) {
    const ecg_tensor *t = ecg_node_input(g, n, (int)k);
    if (!t || !t->is_const || t->dtype != y->dtype) return ecg_node_errf(e, g, n, "input %zu is not a constant", k);
  }
  ECG_TRY(ops_alloc(g, n, 0, (void **)&buf, e));
  for (int64_t o = 0; o < outer; o++)
    for (size_t k = 0; k < n->n_inputs; k++) {
      const ecg_tensor *t = ecg_node_input(g, n, (int)k);
      size_t blk = (size_t)(t->dims[ax]->value * inner) * es;
      memcpy(buf, (const char *)t->data.data + (size_t)o * blk, blk);
      buf += blk;
    }
  return ECG_OK;
}

/** Split folding: each output copies its slab along 'axis' (sizes from the inferred
 *  output shapes). */
int ecg_eval_split(ecg_graph *g, ecg_node *n, ecg_err *e) {
  const ecg_tensor *x = ecg_node_input(g, n, 0);
  int64_t d[ECG_MAX_RANK];
  size_t es;
  if (!x || !x->is_const) return ecg_node_errf(e, g, n, "input is not a constant");
  ECG_TRY(ops_elem_size(g, n, x, &es, e));
  int r = ecg_tensor_dims(x, d), ax;
  if (!ops_axis(ecg_attr_i(n, "axis", 0), r, &ax)) return ecg_node_errf(e, g, n, "bad axis");
  int64_t outer = ops_prod(d, ax), inner = ops_prod(d + ax + 1, r - ax - 1), off = 0;
  for (size_t k = 0; k < n->n_outputs; k++) {
    ecg_tensor *y = ecg_node_output(g, n, (int)k);
    if (!y) continue;
    int64_t len = y->dims[ax]->value;
    char *buf;
    ECG_TRY(ops_alloc(g, n, (int)k, (void **)&buf, e));
    size_t blk = (size_t)(len * inner) * es, src_blk = (size_t)(d[ax] * inner) * es;
    for (int64_t o = 0; o < outer; o++)
      memcpy(buf + (size_t)o * blk, (const char *)x->data.data + (size_t)o * src_blk + (size_t)(off * inner) * es, blk);
    off += len;
  }
  return ECG_OK;
}

/** Split along 'axis' into the outputs: sizes from the 'split' attribute (< 13) or
 *  input 1 (>= 13), or num_outputs (18, last chunk smaller), or equal parts. */
int ecg_infer_split(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], sp[64];
  int r, ax, ns, no = (int)n->n_outputs, from[ECG_MAX_RANK];
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  if (no < 1 || no > 64) return ecg_node_errf(e, g, n, "expected 1 to 64 outputs, got %d", no);
  if (!ops_axis(ecg_attr_i(n, "axis", 0), r, &ax))
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", 0), r);
  if (ops_runtime_operand(g, n, 1) >= 0 && !ecg_attr_find(n, "split")) {
    /* split sizes known at run time only: the axis dim of each output is unknown */
    int64_t od[ECG_MAX_RANK];
    for (int k = 0; k < no; k++) {
      memcpy(od, d, sizeof(int64_t) * (size_t)r);
      od[ax] = -1;
      ECG_TRY(ops_set_out_syms(g, n, k, x->dtype, r, od, NULL, e));
    }
    return ECG_OK;
  }
  ECG_TRY(ints_operand(g, n, "split", 1, sp, 64, &ns, "Split", e));
  int64_t dim = d[ax], num = ecg_attr_i(n, "num_outputs", no);
  if (ns >= 0 && ns != no) return ecg_node_errf(e, g, n, "split has %d sizes for %d outputs", ns, no);
  if (ns < 0 && num != no) return ecg_node_errf(e, g, n, "num_outputs %lld but %d outputs", (long long)num, no);
  if (ns < 0 && dim >= 0 && !ecg_attr_find(n, "num_outputs") && dim % no)
    return ecg_node_errf(e, g, n, "dim %lld not divisible into %d equal parts", (long long)dim, no);
  int64_t chunk = dim < 0 ? -1 : (dim + no - 1) / no, sum = 0;
  for (int k = 0; k < no; k++) {
    if (ns < 0) sp[k] = chunk < 0 ? -1 : k < no - 1 ? chunk : dim - chunk * (no - 1);
    if (ns >= 0 && sp[k] < 0) return ecg_node_errf(e, g, n, "negative split size %lld", (long long)sp[k]);
    if (sp[k] < 0 && ns < 0 && chunk >= 0) return ecg_node_errf(e, g, n, "dim %lld too small for %d parts", (long long)dim, no);
    sum += sp[k];
  }
  if (ns >= 0 && dim >= 0 && sum != dim)
    return ecg_node_errf(e, g, n, "split sizes sum to %lld, dim is %lld", (long long)sum, (long long)dim);
  for (int i = 0; i < r; i++) from[i] = i == ax ? -1 : i;
  for (int k = 0; k < no; k++) {
    d[ax] = sp[k];
    ECG_TRY(ops_set_out(g, n, k, x->dtype, r, d, x, from, e));
  }
  return ECG_OK;
}

/* Per-dim start, step and length of a Slice on input dims d[r] (len -1 when unknown). */
typedef struct slice_plan {
  int64_t start[ECG_MAX_RANK], step[ECG_MAX_RANK], len[ECG_MAX_RANK];
  bool sliced[ECG_MAX_RANK];
} slice_plan;

/* Clamp one axis per the ONNX Slice spec. */
static void slice_axis(slice_plan *p, int ax, int64_t dim, int64_t s, int64_t en, int64_t st) {
  p->sliced[ax] = true;
  p->step[ax] = st;
  if (dim < 0) { /* symbolic: whole-dim slices keep it, others are unknown */
    p->start[ax] = 0;
    p->len[ax] = s == 0 && st == 1 && en >= INT32_MAX ? -2 : -1;
    return;
  }
  if (s < 0) s += dim;
  if (en < 0) en = en < INT64_MIN + dim ? -1 : en + dim;
  if (st > 0) {
    s = s < 0 ? 0 : s > dim ? dim : s;
    en = en < 0 ? 0 : en > dim ? dim : en;
    p->len[ax] = en > s ? (en - s - 1) / st + 1 : 0;
  } else {
    s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
    en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
    int64_t nst = st == INT64_MIN ? INT64_MAX : -st;
    p->len[ax] = s > en ? (s - en - 1) / nst + 1 : 0;
  }
  p->start[ax] = s;
}

/* Slice parameters: attributes starts/ends/axes (opset < 10) or inputs 1-4. */
static int slice_plan_of(ecg_graph *g, ecg_node *n, const int64_t *d, int r, slice_plan *p, ecg_err *e) {
  int64_t st[ECG_MAX_RANK], en[ECG_MAX_RANK], ax[ECG_MAX_RANK], sp[ECG_MAX_RANK];
  int ns, ne, na, nst;
  bool attr = ecg_attr_find(n, "starts") != NULL;
  ECG_TRY(ints_operand(g, n, attr ? "starts" : NULL, 1, st, ECG_MAX_RANK, &ns, "Slice", e));
  ECG_TRY(ints_operand(g, n, attr ? "ends" : NULL, 2, en, ECG_MAX_RANK, &ne, "Slice", e));
  ECG_TRY(ints_operand(g, n, attr ? "axes" : NULL, 3, ax, ECG_MAX_RANK, &na, "Slice", e));
  ECG_TRY(ints_operand(g, n, NULL, attr ? -1 : 4, sp, ECG_MAX_RANK, &nst, "Slice", e));
  if (ns < 0 || ne != ns) return ecg_node_errf(e, g, n, "starts and ends missing or of different lengths");
  if ((na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return ecg_node_errf(e, g, n, "axes/steps length differs from starts (%d)", ns);
  for (int i = 0; i < ns; i++) {
    if (na < 0) ax[i] = i;
    if (nst < 0) sp[i] = 1;
    if (sp[i] == 0) return ecg_node_errf(e, g, n, "step 0 at position %d", i);
  }
  ECG_TRY(norm_axes(g, n, ax, na < 0 ? ns : na, r, e));
  for (int i = 0; i < r; i++) { p->start[i] = 0; p->step[i] = 1; p->len[i] = d[i]; p->sliced[i] = false; }
  for (int i = 0; i < ns; i++) slice_axis(p, (int)ax[i], d[ax[i]], st[i], en[i], sp[i]);
  return ECG_OK;
}

/** Slice: starts/ends/axes attributes (opset < 10) or inputs starts, ends, axes, steps
 *  (>= 10; negative steps), clamped per the ONNX spec. */
int ecg_infer_slice(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int r, from[ECG_MAX_RANK];
  slice_plan p;
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  if (n->n_inputs > 1)
    for (int k = 1; k < 5; k++)
      if (ops_runtime_operand(g, n, k) >= 0) return ops_set_out_unknown(g, n, 0, x->dtype, r, e);
  ECG_TRY(slice_plan_of(g, n, d, r, &p, e));
  for (int i = 0; i < r; i++) {
    od[i] = p.len[i] < 0 ? -1 : p.len[i];
    from[i] = !p.sliced[i] || p.len[i] == -2 ? i : -1;
  }
  return ops_set_out(g, n, 0, x->dtype, r, od, x, from, e);
}

/** Fold Slice (any fixed-size dtype). */
int ecg_eval_slice(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x = ecg_node_input(g, n, 0);
  int64_t d[ECG_MAX_RANK], s[ECG_MAX_RANK], st[ECG_MAX_RANK], base = 0;
  size_t es;
  void *buf;
  slice_plan p;
  if (!x || !x->is_const) return ecg_node_errf(e, g, n, "input is not a constant");
  ECG_TRY(ops_elem_size(g, n, x, &es, e));
  int r = ecg_tensor_dims(x, d);
  ECG_TRY(slice_plan_of(g, n, d, r, &p, e));
  ops_strides(d, r, s);
  for (int i = 0; i < r; i++) {
    if (p.len[i] < 0) return ecg_node_errf(e, g, n, "symbolic slice");
    st[i] = s[i] * p.step[i];
    base += s[i] * p.start[i];
  }
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  if (ops_prod(p.len, r) > 0) strided_copy(buf, x->data.data, es, p.len, r, st, base);
  return ECG_OK;
}

/* ---------------------------------------------------------------- One-to-Many */

/** Gather along 'axis' (default 0, negative allowed): data[:axis] + indices.shape +
 *  data[axis+1:]. */
int ecg_infer_gather(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x, *ix;
  int64_t d[ECG_MAX_RANK], id[ECG_MAX_RANK], od[ECG_MAX_RANK];
  const char *syms[ECG_MAX_RANK] = {0};
  int r, ax, k = 0;
  if (n->n_inputs != 2) return ecg_node_errf(e, g, n, "expected 2 inputs, got %zu", n->n_inputs);
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  ECG_TRY(ops_input(g, n, 1, &ix, e));
  if (ix->dtype != ECG_INT64 && ix->dtype != ECG_INT32)
    return ecg_node_errf(e, g, n, "indices '%s' must be int32 or int64, are %s", ix->name, ecg_dtype_name(ix->dtype));
  int q = ecg_tensor_dims(ix, id);
  if (r < 1 || !ops_axis(ecg_attr_i(n, "axis", 0), r, &ax))
    return ecg_node_errf(e, g, n, "axis %lld out of range for rank %d", (long long)ecg_attr_i(n, "axis", 0), r);
  if (r - 1 + q > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output rank %d exceeds %d", r - 1 + q, ECG_MAX_RANK);
  for (int i = 0; i < ax; i++) { syms[k] = ops_sym(x, i); od[k++] = d[i]; }
  for (int i = 0; i < q; i++) { syms[k] = ops_sym(ix, i); od[k++] = id[i]; }
  for (int i = ax + 1; i < r; i++) { syms[k] = ops_sym(x, i); od[k++] = d[i]; }
  return ops_set_out_syms(g, n, 0, x->dtype, k, od, syms, e);
}

/** Fold Gather (any fixed-size dtype; negative indices count from the end). */
int ecg_eval_gather(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x = ecg_node_input(g, n, 0), *ix = ecg_node_input(g, n, 1);
  int64_t d[ECG_MAX_RANK];
  size_t es;
  char *buf;
  if (!x || !ix || !x->is_const || !ix->is_const) return ecg_node_errf(e, g, n, "inputs are not constants");
  ECG_TRY(ops_elem_size(g, n, x, &es, e));
  int r = ecg_tensor_dims(x, d), ax;
  if (!ops_axis(ecg_attr_i(n, "axis", 0), r, &ax)) return ecg_node_errf(e, g, n, "bad axis");
  int64_t outer = ops_prod(d, ax), inner = ops_prod(d + ax + 1, r - ax - 1), ni = ecg_tensor_numel(ix);
  size_t blk = (size_t)inner * es;
  for (int64_t k = 0; k < ni; k++) {
    int64_t v = ecg_const_i64(ix, k);
    if (v < -d[ax] || v >= d[ax]) return ecg_node_errf(e, g, n, "index %lld out of range [-%lld, %lld)", (long long)v, (long long)d[ax], (long long)d[ax]);
  }
  ECG_TRY(ops_alloc(g, n, 0, (void **)&buf, e));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < ni; k++, buf += blk) {
      int64_t v = ecg_const_i64(ix, k);
      if (v < 0) v += d[ax];
      memcpy(buf, (const char *)x->data.data + (size_t)(o * d[ax] + v) * blk, blk);
    }
  return ECG_OK;
}

/** Expand: bidirectional broadcast of input 0 with the constant shape input 1. */
int ecg_infer_expand(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], s[ECG_MAX_RANK + 1], od[ECG_MAX_RANK];
  int r, ns;
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  int rt = ops_runtime_operand(g, n, 1);
  if (rt >= 0) return ops_set_out_unknown(g, n, 0, x->dtype, rt > r ? rt : r, e);
  ECG_TRY(ops_const_input(g, n, 1, s, ECG_MAX_RANK + 1, &ns, "Expand", e));
  if (ns < 0 || ns > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "missing or too long shape input");
  int ro = ecg_broadcast_shape(r, d, ns, s, od);
  if (ro < 0) return ecg_node_errf(e, g, n, "input '%s' cannot be broadcast to the target shape", x->name);
  return ecg_set_output(g, n, 0, x->dtype, ro, od, x);
}

/** Tile: dim i times repeats[i] (constant input 1). */
int ecg_infer_tile(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], rep[ECG_MAX_RANK + 1];
  int r, nr, from[ECG_MAX_RANK];
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  if (ops_runtime_operand(g, n, 1) >= 0) return ops_set_out_unknown(g, n, 0, x->dtype, r, e);
  ECG_TRY(ops_const_input(g, n, 1, rep, ECG_MAX_RANK + 1, &nr, "Tile", e));
  if (nr != r) return ecg_node_errf(e, g, n, "repeats has %d values for rank %d", nr, r);
  for (int i = 0; i < r; i++) {
    if (rep[i] < 0) return ecg_node_errf(e, g, n, "negative repeat %lld", (long long)rep[i]);
    from[i] = rep[i] == 1 ? i : -1;
    d[i] = d[i] < 0 ? (rep[i] == 0 ? 0 : -1) : d[i] * rep[i];
  }
  return ops_set_out(g, n, 0, x->dtype, r, d, x, from, e);
}

int ecg_pad_amounts(ecg_graph *g, ecg_node *n, int r, int64_t *pb, int64_t *pe, ecg_err *e) {
  int64_t pads[2 * ECG_MAX_RANK], axes[ECG_MAX_RANK];
  int np, na;
  const char *pa = ecg_attr_find(n, "paddings") ? "paddings" : "pads";
  ECG_TRY(ints_operand(g, n, pa, 1, pads, 2 * ECG_MAX_RANK, &np, "Pad", e));
  ECG_TRY(ops_const_input(g, n, 3, axes, ECG_MAX_RANK, &na, "Pad", e));
  if (na < 0) { na = r; for (int i = 0; i < r; i++) axes[i] = i; }
  if (np != 2 * na) return ecg_node_errf(e, g, n, "pads has %d values for %d axes", np, na);
  ECG_TRY(norm_axes(g, n, axes, na, r, e));
  for (int i = 0; i < r; i++) pb[i] = pe[i] = 0;
  for (int k = 0; k < na; k++) {
    pb[axes[k]] = pads[k];
    pe[axes[k]] = pads[k + na];
  }
  return ECG_OK;
}

/** Pad: pads attribute (opset < 11; 'paddings' in opset 1) or input 1 (>= 11), optional
 *  axes input 3 (18), read by ecg_pad_amounts; constant_value is not needed for the shape. */
int ecg_infer_pad(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], pb[ECG_MAX_RANK], pe[ECG_MAX_RANK];
  int r, from[ECG_MAX_RANK];
  char mode[32];
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  ecg_attr_s(n, "mode", "constant", mode, sizeof mode);
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
    return ecg_node_errf(e, g, n, "unknown mode '%s'", mode);
  const char *pa = ecg_attr_find(n, "paddings") ? "paddings" : "pads";
  if (!ecg_attr_find(n, pa) && ops_runtime_operand(g, n, 1) >= 0) return ops_set_out_unknown(g, n, 0, x->dtype, r, e);
  ECG_TRY(ecg_pad_amounts(g, n, r, pb, pe, e));
  for (int i = 0; i < r; i++) {
    from[i] = i;
    int64_t add = pb[i] + pe[i];
    if (add == 0) continue;
    from[i] = -1;
    if (d[i] >= 0 && (d[i] += add) < 0) return ecg_node_errf(e, g, n, "negative output size on axis %d", i);
  }
  return ops_set_out(g, n, 0, x->dtype, r, d, x, from, e);
}

/** CenterCropPad (18): input_data [D...], shape (constant int64 [k]) and attribute axes
 *  (default 0..r-1, negative counted from the end): each listed axis becomes shape[k] long,
 *  centre-cropped or zero-padded (ONNX Operators.md CenterCropPad).  Errors: shape not a
 *  constant, shape/axes length mismatch, a negative size, axes out of range or repeated. */
int ecg_infer_center_crop_pad(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], sh[ECG_MAX_RANK], axes[ECG_MAX_RANK];
  int r, ns, from[ECG_MAX_RANK];
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  ECG_TRY(ops_const_input(g, n, 1, sh, ECG_MAX_RANK, &ns, "CenterCropPad shape", e));
  if (ns < 0) return ecg_node_errf(e, g, n, "missing input 'shape'");
  const int64_t *av;
  int na = ecg_attr_ints(n, "axes", &av);
  if (na < 0) { na = r; for (int i = 0; i < r; i++) axes[i] = i; }
  else if (na > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "axes has %d values", na);
  else memcpy(axes, av, sizeof(int64_t) * (size_t)na);
  if (ns != na) return ecg_node_errf(e, g, n, "shape has %d values for %d axes", ns, na);
  ECG_TRY(norm_axes(g, n, axes, na, r, e));
  for (int i = 0; i < r; i++) from[i] = i;
  for (int k = 0; k < na; k++) {
    if (sh[k] < 0) return ecg_node_errf(e, g, n, "shape[%d] = %lld is negative", k, (long long)sh[k]);
    d[axes[k]] = sh[k];
    from[axes[k]] = -1;
  }
  return ops_set_out(g, n, 0, x->dtype, r, d, x, from, e);
}

/* Resize/Upsample operands: scales (floats) and sizes (ints) into sc/sz over naxes. */
static int resize_operands(ecg_graph *g, ecg_node *n, double *sc, int *nsc, int64_t *sz, int *nsz, ecg_err *e) {
  const float *fa;
  int c = ecg_attr_floats(n, "scales", &fa), si = -1, zi = -1;
  *nsc = *nsz = -1;
  if (c >= 0) { /* Upsample opset 7-8 */
    if (c > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "too many scales");
    for (int i = 0; i < c; i++) sc[i] = fa[i];
    *nsc = c;
    return ECG_OK;
  }
  bool old = !strcmp(n->op_type, "Upsample") || (n->opset > 0 ? n->opset < 11 : n->n_inputs == 2);
  si = old ? 1 : 2;
  zi = old ? -1 : 3;
  const ecg_tensor *ts = ecg_node_input(g, n, si), *tz = ecg_node_input(g, n, zi);
  if (ts && ecg_tensor_numel(ts) != 0) {
    if (!ts->is_const) return ecg_node_errf(e, g, n, "scales input '%s' is not a constant: a dynamic %s is not supported", ts->name, n->op_type);
    int64_t m = ecg_tensor_numel(ts);
    if (m < 0 || m > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "bad scales input '%s'", ts->name);
    for (int64_t i = 0; i < m; i++) sc[i] = ecg_const_f64(ts, i);
    *nsc = (int)m;
  }
  if (tz && ecg_tensor_numel(tz) != 0) ECG_TRY(ops_const_input(g, n, zi, sz, ECG_MAX_RANK, nsz, n->op_type, e));
  if ((*nsc < 0) == (*nsz < 0)) return ecg_node_errf(e, g, n, "exactly one of scales and sizes must be given");
  return ECG_OK;
}

/** Resize (opset 10: X, scales; 11+: X, roi, scales, sizes; 18: axes and
 *  keep_aspect_ratio_policy) and Upsample (scales attribute in 7-8, input in 9):
 *  out = floor(d * scale), or sizes. */
int ecg_infer_resize(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  int64_t d[ECG_MAX_RANK], sz[ECG_MAX_RANK], axes[ECG_MAX_RANK];
  double sc[ECG_MAX_RANK];
  int r, nsc, nsz, from[ECG_MAX_RANK];
  ECG_TRY(data_input(g, n, &x, d, &r, e));
  if (!ecg_attr_find(n, "scales")) { /* scales or sizes known only at run time: rank only */
    bool old = !strcmp(n->op_type, "Upsample") || (n->opset > 0 ? n->opset < 11 : n->n_inputs == 2);
    if (ops_runtime_operand(g, n, old ? 1 : 2) > 0 || (!old && ops_runtime_operand(g, n, 3) > 0))
      return ops_set_out_unknown(g, n, 0, x->dtype, r, e);
  }
  ECG_TRY(resize_operands(g, n, sc, &nsc, sz, &nsz, e));
  const int64_t *aa;
  int na = ecg_attr_ints(n, "axes", &aa), cnt = nsc >= 0 ? nsc : nsz;
  if (na > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "too many axes");
  for (int i = 0; i < (na >= 0 ? na : r); i++) axes[i] = na >= 0 ? aa[i] : i;
  if (na < 0) na = r;
  if (cnt != na) return ecg_node_errf(e, g, n, "%d scales/sizes for %d axes", cnt, na);
  ECG_TRY(norm_axes(g, n, axes, na, r, e));
  char pol[32];
  ecg_attr_s(n, "keep_aspect_ratio_policy", "stretch", pol, sizeof pol);
  if (nsz >= 0 && strcmp(pol, "stretch")) { /* one scale for every axis */
    bool larger = !strcmp(pol, "not_smaller");
    double s = larger ? 0 : INFINITY;
    for (int k = 0; k < na; k++) {
      if (d[axes[k]] <= 0) return ecg_node_errf(e, g, n, "keep_aspect_ratio_policy needs static dims");
      double v = (double)sz[k] / (double)d[axes[k]];
      s = larger ? fmax(s, v) : fmin(s, v);
    }
    for (int k = 0; k < na; k++) sz[k] = (int64_t)floor(s * (double)d[axes[k]] + 0.5);
  }
  for (int i = 0; i < r; i++) from[i] = i;
  for (int k = 0; k < na; k++) {
    int i = (int)axes[k];
    if (nsc >= 0 && sc[k] <= 0) return ecg_node_errf(e, g, n, "scale %g must be positive", sc[k]);
    if (nsc >= 0 && sc[k] == 1) continue;
    from[i] = -1;
    d[i] = nsz >= 0 ? sz[k] : d[i] < 0 ? -1 : (int64_t)floor((double)d[i] * sc[k]);
  }
  return ops_set_out(g, n, 0, x->dtype, r, d, x, from, e);
}
