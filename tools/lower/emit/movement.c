/* Emitters for data movement: Reorganize (Reshape, Flatten, Squeeze, Unsqueeze),
 * Shuffle (Transpose, DepthToSpace, SpaceToDepth) and the One-to-One / One-to-Many
 * copies (Concat, Split, Slice, Gather, Expand, Tile, Pad).  Each is an index map
 * expressed through lw_loops (DNNFusion §3.4.4: index maps folded into addressing). */
#include <stdlib.h>
#include <string.h>

#include "emit.h"


/** Reshape, Flatten, Squeeze, Unsqueeze: the bytes do not change (Reorganize). */
int emit_copy(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int in = n->inputs[0], out = n->outputs[0];
  if (lw_same_storage(L, in, out)) {
    sb_printf(&L->code, "  /* aliases its input: nothing to move */\n");
    return ECG_OK;
  }
  if (L->target == LW_TARGET_OPENCL) { /* no memcpy on a device: one index space over the bytes */
    int64_t n = (int64_t)L->t[out].bytes, st[2][ECG_MAX_RANK] = {{1}, {1}};
    char body[400];
    snprintf(body, sizeof body, "((__global uchar *)%s)[o0] = ", lw_ptr(L, out));
    snprintf(body + strlen(body), sizeof body - strlen(body), "((__global const uchar *)%s)[o1];", lw_ptr(L, in));
    lw_loops(L, 1, &n, 2, st, NULL, body, 1);
    return ECG_OK;
  }
  sb_printf(&L->code, "  memcpy(%s, ", lw_ptr(L, out));
  if (lw_tensor_dyn(L, out)) /* a dynamic build: the byte count at run time */
    sb_printf(&L->code, "%s, (size_t)%s * %zu);\n", lw_ptr(L, in), lw_dim_prod(L, out, 0, (int)L->g->tensors[out]->n_dims),
              ecg_dtype_size(L->g->tensors[out]->dtype));
  else sb_printf(&L->code, "%s, %zu);\n", lw_ptr(L, in), L->t[out].bytes);
  return ECG_OK;
}

/* Copy: out[o0] = in[o1] over `dims` with the given strides. */
static void strided_copy(ecg_lower *L, int out, int in, int r, const int64_t *dims, const int64_t *ost,
                         const int64_t *ist, int64_t obase, int64_t ibase) {
  int64_t st[2][ECG_MAX_RANK], base[2] = {obase, ibase};
  memcpy(st[0], ost, sizeof(int64_t) * (size_t)r);
  memcpy(st[1], ist, sizeof(int64_t) * (size_t)r);
  char body[512];
  snprintf(body, sizeof body, "%s[o0] = ", lw_ptr(L, out));
  snprintf(body + strlen(body), sizeof body - strlen(body), "%s[o1];", lw_ptr(L, in));
  lw_loops(L, r, dims, 2, st, base, body, 1);
}

/** Transpose: out[i] = in[perm^-1(i)]; perm defaults to reversing the axes. */
/* A dynamic build's strided copy (lw_dloops_st): dst[o0] = src[o1] over the dims of tensor
 * space, dst's offset moving by st_dst[d] along dim d from base_dst, src's likewise (C
 * expressions, lw_dim_prod's). */
static void dyn_copy(ecg_lower *L, int space, int dst, int src, char st_dst[][768], char st_src[][768], const char *base_dst,
                     const char *base_src) {
  const char *st[2][ECG_MAX_RANK];
  int r = (int)L->g->tensors[space]->n_dims;
  for (int d = 0; d < r; d++) { st[0][d] = st_dst[d]; st[1][d] = st_src[d]; }
  const char *base[2] = {base_dst, base_src};
  char body[512];
  snprintf(body, sizeof body, "%s[o0] = ", lw_ptr(L, dst));
  snprintf(body + strlen(body), sizeof body - strlen(body), "%s[o1];", lw_ptr(L, src));
  lw_dloops_st(L, space, 2, st, base, NULL, body, 1);
}

/* Row-major element strides of tensor t as C expressions into st[d] (lw_dim_prod). */
static void dyn_strides(const ecg_lower *L, int t, char st[][768]) {
  int r = (int)L->g->tensors[t]->n_dims;
  for (int d = 0; d < r; d++) snprintf(st[d], 768, "%s", lw_dim_prod(L, t, d + 1, r));
}

int emit_transpose(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], ist[ECG_MAX_RANK], ost[ECG_MAX_RANK], pst[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  lw_strides(r, id, ist);
  lw_strides(r, od, ost);
  int perm[ECG_MAX_RANK];
  if (ecg_perm_attr(n, r, perm)) return lw_node_err(L, n, e, "perm is not a permutation of the input's dims");
  if (lw_node_dyn(L, n)) { /* a dynamic build: the input's strides permuted, as expressions */
    char so[ECG_MAX_RANK][768], si[ECG_MAX_RANK][768], sp[ECG_MAX_RANK][768];
    dyn_strides(L, n->outputs[0], so);
    dyn_strides(L, n->inputs[0], si);
    for (int d = 0; d < r; d++) memcpy(sp[d], si[perm[d]], sizeof sp[d]);
    dyn_copy(L, n->outputs[0], n->outputs[0], n->inputs[0], so, sp, NULL, NULL);
    return ECG_OK;
  }
  for (int d = 0; d < r; d++) pst[d] = ist[perm[d]];
  strided_copy(L, n->outputs[0], n->inputs[0], r, od, ost, pst, 0, 0);
  return ECG_OK;
}

/** DepthToSpace (DCR and CRD modes) and SpaceToDepth as 6-D transposes. */
int emit_space_depth(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK];
  if (lw_dims(L, n->inputs[0], id) != 4) return lw_node_err(L, n, e, "input must be 4-D");
  lw_dims(L, n->outputs[0], od);
  int64_t b = ecg_attr_i(n, "blocksize", 0);
  char mode[16];
  ecg_attr_s(n, "mode", "DCR", mode, sizeof mode);
  int64_t N = id[0], dims[6], st[6], vs[6], ost[6];
  if (lw_op(n) == ECG_OP_DepthToSpace) {
    int64_t C = id[1] / (b * b), H = id[2], W = id[3];
    /* output viewed as [N, C, H, b1, W, b2] (contiguous) */
    int64_t d6[6] = {N, C, H, b, W, b};
    memcpy(dims, d6, sizeof d6);
    if (!strcmp(mode, "CRD")) { /* input view [N, C, b1, b2, H, W] */
      int64_t v[6] = {N, C, b, b, H, W};
      lw_strides(6, v, vs);
      int64_t s[6] = {vs[0], vs[1], vs[4], vs[2], vs[5], vs[3]};
      memcpy(st, s, sizeof s);
    } else { /* DCR: input view [N, b1, b2, C, H, W] */
      int64_t v[6] = {N, b, b, C, H, W};
      lw_strides(6, v, vs);
      int64_t s[6] = {vs[0], vs[3], vs[4], vs[1], vs[5], vs[2]};
      memcpy(st, s, sizeof s);
    }
  } else {
    int64_t C = id[1], H = id[2] / b, W = id[3] / b;
    /* output viewed as [N, b1, b2, C, H, W]; input view [N, C, H, b1, W, b2] */
    int64_t d6[6] = {N, b, b, C, H, W};
    memcpy(dims, d6, sizeof d6);
    int64_t v[6] = {N, C, H, b, W, b};
    lw_strides(6, v, vs);
    int64_t s[6] = {vs[0], vs[3], vs[5], vs[1], vs[2], vs[4]};
    memcpy(st, s, sizeof s);
  }
  lw_strides(6, dims, ost);
  strided_copy(L, n->outputs[0], n->inputs[0], 6, dims, ost, st, 0, 0);
  return ECG_OK;
}

/* Concat and Split: copy each piece into/out of its slab along axis. */
static int concat_split(ecg_lower *L, const ecg_node *n, ecg_err *e, int split) {
  int big = split ? n->inputs[0] : n->outputs[0];
  int64_t bd[ECG_MAX_RANK], bst[ECG_MAX_RANK];
  int r = lw_dims(L, big, bd);
  lw_strides(r, bd, bst);
  int axis = lw_axis(ecg_attr_i(n, "axis", split ? 0 : 1), r);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  if (lw_node_dyn(L, n)) { /* a dynamic build: each piece's slab starts at the run-time sum of the dims before it */
    char sb_[ECG_MAX_RANK][768], sp[ECG_MAX_RANK][768], base[1600];
    sbuf off = {0};
    dyn_strides(L, big, sb_);
    sb_printf(&off, "0");
    size_t cnt = split ? n->n_outputs : n->n_inputs;
    for (size_t k = 0; k < cnt; k++) {
      int piece = split ? n->outputs[k] : n->inputs[k];
      if (piece < 0) continue;
      dyn_strides(L, piece, sp);
      if (off.len > 700) { sb_free(&off); return lw_node_err(L, n, e, "too many pieces for a dynamic build's offset expression"); }
      snprintf(base, sizeof base, "(%.700s) * %.768s", off.s ? off.s : "0", sb_[axis]);
      if (split) dyn_copy(L, piece, piece, big, sp, sb_, NULL, base);
      else dyn_copy(L, piece, big, piece, sb_, sp, base, NULL);
      sb_printf(&off, " + %s", lw_dim(L, piece, axis));
    }
    int oom = off.oom;
    sb_free(&off);
    return oom ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : ECG_OK;
  }
  int64_t off = 0;
  size_t cnt = split ? n->n_outputs : n->n_inputs;
  for (size_t k = 0; k < cnt; k++) {
    int piece = split ? n->outputs[k] : n->inputs[k];
    if (piece < 0) continue;
    int64_t pd[ECG_MAX_RANK], pst[ECG_MAX_RANK];
    lw_dims(L, piece, pd);
    lw_strides(r, pd, pst);
    /* a Concat input the memory plan placed in its slab (find_aliases): nothing to move */
    const lw_tensor *tp = &L->t[piece], *tb = &L->t[big];
    int64_t outer = 1;
    for (int d = 0; d < axis; d++) outer *= bd[d];
    int in_place = !split && outer == 1 && tp->where == tb->where && tp->where == LW_ARENA &&
                   tp->offset == tb->offset + (size_t)(off * bst[axis]) * ecg_dtype_size(L->g->tensors[big]->dtype);
    if (split) strided_copy(L, piece, big, r, pd, pst, bst, 0, off * bst[axis]);
    else if (!in_place) strided_copy(L, big, piece, r, pd, bst, pst, off * bst[axis], 0);
    off += pd[axis];
  }
  return ECG_OK;
}

/** Concat along axis. */
int emit_concat(ecg_lower *L, const ecg_node *n, ecg_err *e) { return concat_split(L, n, e, 0); }
/** Split: piece sizes are the (inferred) output shapes along axis. */
int emit_split(ecg_lower *L, const ecg_node *n, ecg_err *e) { return concat_split(L, n, e, 1); }

/* Slice parameters: starts/ends/axes/steps from inputs (opset >= 10) or attributes. */
static int slice_param(ecg_lower *L, const ecg_node *n, int input, const char *attr, int64_t *v, int max) {
  if (n->n_inputs > 1) {
    if ((size_t)input >= n->n_inputs || n->inputs[input] < 0) return -1;
    return ecg_const_ints(L->g->tensors[n->inputs[input]], v, max);
  }
  const int64_t *a;
  int c = ecg_attr_ints(n, attr, &a);
  if (c < 0 || c > max) return -1;
  memcpy(v, a, sizeof(int64_t) * (size_t)c);
  return c;
}

/* C statements clamping a Slice range as ONNX Slice-13 does: from s, e_ (start, end), st
 * (step, not 0) and n_ (the axis' extent) to the clamped start s and the extent x_ (negative:
 * empty). */
#define SLICE_CLAMP_C \
  "      if (s < 0) s += n_;\n      if (e_ < 0) e_ += n_;\n" \
  "      if (st > 0) { s = s < 0 ? 0 : s > n_ ? n_ : s; e_ = e_ < 0 ? 0 : e_ > n_ ? n_ : e_; }\n" \
  "      else { s = s < 0 ? 0 : s > n_ - 1 ? n_ - 1 : s; e_ = e_ < -1 ? -1 : e_ > n_ - 1 ? n_ - 1 : e_; }\n" \
  "      int64_t x_ = st > 0 ? (e_ - s + st - 1) / st : (s - e_ - st - 1) / -st;\n"

/* Slice whose starts/ends/axes/steps are known only at run time (the output shape is
 * static: declared by the model, or proved by RDP from a declared dim downstream, SOD²
 * §5.4.1). Generated code reads the operands, clamps as ONNX Slice-13 does, checks that
 * the extents they give are the static output dims (else the run fails: ctx->err = -2,
 * P_run returns -2, the output is not written) and walks the output with run-time
 * strides. */
static int emit_slice_runtime(ecg_lower *L, const ecg_node *n) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], ist[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  lw_strides(r, id, ist);
  sbuf *c = &L->code;
  int64_t ns = ecg_tensor_numel(L->g->tensors[n->inputs[1]]);
  sb_printf(c, "  {\n    static const int64_t dim[%d] = {", r > 0 ? r : 1);
  for (int d = 0; d < r; d++) sb_printf(c, "%s%lld", d ? ", " : "", (long long)id[d]);
  sb_printf(c, "%s}, ist[%d] = {", r ? "" : "0", r > 0 ? r : 1);
  for (int d = 0; d < r; d++) sb_printf(c, "%s%lld", d ? ", " : "", (long long)ist[d]);
  sb_printf(c, "%s};\n    int64_t start[%d] = {0}, step[%d], ext[%d];\n    for (int d = 0; d < %d; d++) { step[d] = 1; ext[d] = dim[d]; }\n",
            r ? "" : "0", r > 0 ? r : 1, r > 0 ? r : 1, r > 0 ? r : 1, r);
  sb_printf(c, "    for (int64_t k = 0; k < %lld; k++) {\n", (long long)ns);
  sb_printf(c, "      int64_t s = (int64_t)%s[k], e_ = (int64_t)%s[k];\n", lw_ptr(L, n->inputs[1]), lw_ptr(L, n->inputs[2]));
  if (n->n_inputs > 3 && n->inputs[3] >= 0) sb_printf(c, "      int64_t ax = (int64_t)%s[k];\n", lw_ptr(L, n->inputs[3]));
  else sb_printf(c, "      int64_t ax = k;\n");
  if (n->n_inputs > 4 && n->inputs[4] >= 0) sb_printf(c, "      int64_t st = (int64_t)%s[k];\n", lw_ptr(L, n->inputs[4]));
  else sb_printf(c, "      int64_t st = 1;\n");
  sb_printf(c, "      if (ax < 0) ax += %d;\n      if (ax < 0 || ax >= %d || st == 0) continue;\n", r, r);
  sb_printf(c, "      int64_t n_ = dim[ax];\n" SLICE_CLAMP_C "      start[ax] = s;\n      step[ax] = st;\n      ext[ax] = x_ < 0 ? 0 : x_;\n    }\n");
  int rtd = L->t[n->outputs[0]].rtd;
  if (rtd) { /* extents of this run (lower.c bound_slices): the output is dense in them, within its bound */
    sb_printf(c, "    int ok_ = 1;\n    int64_t numel_ = 1;\n");
    for (int d = 0; d < r; d++) sb_printf(c, "    ctx->rd[%d][%d] = ext[%d];\n    numel_ *= ext[%d];\n", rtd - 1, d, d, d);
  } else {
    sb_printf(c, "    int ok_ = 1;\n");
    for (int d = 0; d < r; d++) sb_printf(c, "    ok_ &= ext[%d] == %lld;\n", d, (long long)od[d]);
  }
  sb_printf(c, "    if (!ok_) ctx->err = -2; /* the operands give another shape than the compiled one */\n    else {\n");
  sb_printf(c, "    int64_t base = 0;\n    for (int d = 0; d < %d; d++) base += start[d] * ist[d];\n", r);
  int64_t numel = 1;
  for (int d = 0; d < r; d++) numel *= od[d];
  if (rtd) sb_printf(c, "    for (int64_t j = 0; j < numel_; j++) {\n      int64_t rem = j, src = base;\n");
  else sb_printf(c, "    for (int64_t j = 0; j < %lld; j++) {\n      int64_t rem = j, src = base;\n", (long long)numel);
  for (int d = r - 1; d >= 0; d--)
    if (rtd) sb_printf(c, "      { int64_t i = rem %% ext[%d]; rem /= ext[%d]; src += i * step[%d] * ist[%d]; }\n", d, d, d, d);
    else sb_printf(c, "      { int64_t i = rem %% %lld; rem /= %lld; src += i * step[%d] * ist[%d]; }\n", (long long)od[d], (long long)od[d], d, d);
  sb_printf(c, "      int64_t lim = src < 0 ? 0 : src >= %lld ? %lld : src;\n", (long long)ecg_tensor_numel(L->g->tensors[n->inputs[0]]),
            (long long)ecg_tensor_numel(L->g->tensors[n->inputs[0]]) - 1);
  sb_printf(c, "      %s[j] = ", lw_ptr(L, n->outputs[0]));
  sb_printf(c, "%s[lim];\n    }\n    }\n  }\n", lw_ptr(L, n->inputs[0]));
  return ECG_OK;
}

/** Slice with negative indices, clamping and negative steps (ONNX Slice-13). */
int emit_slice(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  for (size_t k = 1; k < n->n_inputs && k < 5; k++)
    if (n->inputs[k] >= 0 && !L->g->tensors[n->inputs[k]]->is_const)
      return lw_node_dyn(L, n) ? lw_node_err(L, n, e, "a Slice with run-time starts/ends is not supported with symbolic dims yet")
                               : emit_slice_runtime(L, n);
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], ist[ECG_MAX_RANK], ost[ECG_MAX_RANK], sst[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  lw_strides(r, id, ist);
  lw_strides(r, od, ost);
  int64_t starts[ECG_MAX_RANK], ends[ECG_MAX_RANK], axes[ECG_MAX_RANK], steps[ECG_MAX_RANK];
  int ns = slice_param(L, n, 1, "starts", starts, ECG_MAX_RANK);
  int ne = slice_param(L, n, 2, "ends", ends, ECG_MAX_RANK);
  if (ns < 0 || ne != ns) return lw_node_err(L, n, e, "starts/ends must be constants of equal length");
  int na = slice_param(L, n, 3, "axes", axes, ECG_MAX_RANK);
  int nst = n->n_inputs > 1 ? slice_param(L, n, 4, "", steps, ECG_MAX_RANK) : -1;
  int64_t start[ECG_MAX_RANK] = {0}, step[ECG_MAX_RANK], s_raw[ECG_MAX_RANK], e_raw[ECG_MAX_RANK];
  bool sliced[ECG_MAX_RANK] = {false};
  for (int d = 0; d < r; d++) step[d] = 1;
  for (int i = 0; i < ns; i++) {
    int ax = lw_axis(na == ns ? axes[i] : i, r);
    if (ax < 0) return lw_node_err(L, n, e, "axis out of range");
    int64_t s = starts[i], st = nst == ns ? steps[i] : 1, dim = id[ax];
    s_raw[ax] = s;
    e_raw[ax] = ends[i];
    sliced[ax] = true;
    if (st == 0) return lw_node_err(L, n, e, "step 0");
    if (s < 0) s += dim;
    if (st > 0) s = s < 0 ? 0 : s > dim ? dim : s;
    else s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
    start[ax] = s;
    step[ax] = st;
  }
  int64_t base = 0;
  for (int d = 0; d < r; d++) {
    sst[d] = ist[d] * step[d];
    base += start[d] * ist[d];
  }
  if (lw_node_dyn(L, n)) { /* a dynamic build: along a numeric dim the clamping is static; along a
                            * symbolic one it is done at run time, and the extent it gives must be
                            * the output's (RDP's, which assumes no clamping): else the input is
                            * too short, the run fails (ctx->err = -3, ctx->msg naming the Slice)
                            * and the output is not written */
    char so[ECG_MAX_RANK][768], si[ECG_MAX_RANK][768], bs[1600];
    int len = snprintf(bs, sizeof bs, "0");
    dyn_strides(L, n->outputs[0], so);
    dyn_strides(L, n->inputs[0], si);
    sbuf *c = &L->code;
    sb_printf(c, "  {\n    int ok_ = 1;\n");
    int checked = 0;
    for (int d = 0; d < r; d++) {
      if (id[d] < 0 && sliced[d]) { /* run-time clamping along a symbolic dim */
        checked = 1;
        sb_printf(c, "    int64_t start%d_;\n    {\n      int64_t s = %lld, e_ = %lld, st = %lld, n_ = %s;\n" SLICE_CLAMP_C,
                  d, (long long)s_raw[d], (long long)e_raw[d], (long long)step[d], lw_dim(L, n->inputs[0], d));
        sb_printf(c, "      start%d_ = s;\n      ok_ &= (x_ < 0 ? 0 : x_) == %s;\n    }\n", d, lw_dim(L, n->outputs[0], d));
        if (len < 1500) len += snprintf(bs + len, sizeof bs - (size_t)len, " + start%d_ * %s", d, si[d]);
      } else if (start[d] && len < 1500) len += snprintf(bs + len, sizeof bs - (size_t)len, " + %lld * %s", (long long)start[d], si[d]);
      if (step[d] != 1) {
        char t[800];
        snprintf(t, sizeof t, "%lld * %.740s", (long long)step[d], si[d]);
        snprintf(si[d], sizeof si[d], "%.767s", t);
      }
    }
    if (checked) { /* an input too short for the compiled extent: a shape error, named */
      sb_printf(c, "    if (!ok_) { snprintf(ctx->msg, sizeof ctx->msg, \"the input shapes are too small for the model: Slice '%%s' cannot give tensor '%%s' its extent\", ");
      char lb[256];
      lw_c_str(c, ecg_node_label(L->g, n, lb, sizeof lb));
      sb_printf(c, ", ");
      lw_c_str(c, L->g->tensors[n->outputs[0]]->name);
      sb_printf(c, "); ctx->err = -3; }\n");
    }
    sb_printf(c, "    if (ok_) {\n");
    dyn_copy(L, n->outputs[0], n->outputs[0], n->inputs[0], so, si, NULL, bs);
    sb_printf(c, "    }\n  }\n");
    return ECG_OK;
  }
  strided_copy(L, n->outputs[0], n->inputs[0], r, od, ost, sst, 0, base);
  return ECG_OK;
}

/** Expand: numpy broadcast of the input to the output shape (One-to-Many). */
int emit_expand(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int ids[1] = {n->inputs[0]}, rank[1];
  int64_t dims[1][ECG_MAX_RANK];
  rank[0] = lw_dims(L, ids[0], dims[0]);
  return lw_emit_map(L, n->outputs[0], 1, ids, dims, rank, "$0", 0, 0) ? ecg_errf(e, ECG_ERR_INTERNAL, "template") : ECG_OK;
}

/** Tile: the output viewed as [rep0, d0, rep1, d1, ...]; input strides 0 on reps. */
int emit_tile(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], ist[ECG_MAX_RANK], ost[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  if (2 * r > ECG_MAX_RANK) return lw_node_err(L, n, e, "rank above 4 is not supported");
  lw_strides(r, id, ist);
  lw_strides(r, od, ost);
  int64_t dims[ECG_MAX_RANK], s0[ECG_MAX_RANK], s1[ECG_MAX_RANK];
  for (int d = 0; d < r; d++) {
    int64_t rep = id[d] ? od[d] / id[d] : 0;
    dims[2 * d] = rep;
    dims[2 * d + 1] = id[d];
    s0[2 * d] = id[d] * ost[d];
    s0[2 * d + 1] = ost[d];
    s1[2 * d] = 0;
    s1[2 * d + 1] = ist[d];
  }
  strided_copy(L, n->outputs[0], n->inputs[0], 2 * r, dims, s0, s1, 0, 0);
  return ECG_OK;
}

/** Gather along axis with int32/int64 indices (negative wrap; out-of-range -> zeros). */
int emit_gather(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t dd[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], dd);
  int axis = lw_axis(ecg_attr_i(n, "axis", 0), r);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  int64_t outer = 1, inner = 1, K = dd[axis];
  for (int d = 0; d < axis; d++) outer *= dd[d];
  for (int d = axis + 1; d < r; d++) inner *= dd[d];
  int64_t nidx = ecg_tensor_numel(L->g->tensors[n->inputs[1]]);
  size_t es = ecg_dtype_size(L->g->tensors[n->inputs[0]]->dtype);
  sbuf *c = &L->code;
  const char *G = lw_gq(L);
  lw_par_for(L, 2, "j", outer * nidx, outer * nidx * inner, 4096);
  sb_printf(c, "    int64_t o = j / %lld, q = j %% %lld;\n", (long long)nidx, (long long)nidx);
  sb_printf(c, "    int64_t k = (int64_t)%s[q];\n", lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    if (k < 0) k += %lld;\n", (long long)K);
  sb_printf(c, "    %sunsigned char *dst = (%sunsigned char *)%s + (size_t)j * %zu;\n", G, G, lw_ptr(L, n->outputs[0]), (size_t)inner * es);
  if (L->target == LW_TARGET_OPENCL) { /* no memset/memcpy on a device: byte loops */
    sb_printf(c, "    if (k < 0 || k >= %lld) { for (size_t i = 0; i < %zu; i++) dst[i] = 0; continue; }\n", (long long)K, (size_t)inner * es);
    sb_printf(c, "    %sconst unsigned char *src = (%sconst unsigned char *)%s + ((size_t)o * %lld + (size_t)k) * %zu;\n", G, G,
              lw_ptr(L, n->inputs[0]), (long long)K, (size_t)inner * es);
    sb_printf(c, "    for (size_t i = 0; i < %zu; i++) dst[i] = src[i];\n", (size_t)inner * es);
  } else {
    sb_printf(c, "    if (k < 0 || k >= %lld) { memset(dst, 0, %zu); continue; }\n", (long long)K, (size_t)inner * es);
    sb_printf(c, "    memcpy(dst, (const unsigned char *)%s + ((size_t)o * %lld + (size_t)k) * %zu, %zu);\n",
              lw_ptr(L, n->inputs[0]), (long long)K, (size_t)inner * es, (size_t)inner * es);
  }
  sb_printf(c, "  }\n");
  return ECG_OK;
}

static void pad_kernel(ecg_lower *L, const ecg_node *n, int r, const int64_t *id, const int64_t *od, int m, const char *value);

/** Pad: constant, reflect, edge and wrap (19) modes; pads from the attribute (opset < 11)
 *  or input 1, constant or run-time; the optional axes input 3 (18; constant, negative
 *  axes count from the back) names the axes the pads apply to, the others are not padded;
 *  negative pads crop. */
int emit_pad(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], pads[2 * ECG_MAX_RANK], axes[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  int np, rt = 0, na = r;
  for (int d = 0; d < r; d++) axes[d] = d;
  if (n->n_inputs > 3 && n->inputs[3] >= 0) {
    na = ecg_const_ints(L->g->tensors[n->inputs[3]], axes, ECG_MAX_RANK);
    if (na < 0) return lw_node_err(L, n, e, "axes must be a constant (run-time axes are not supported)");
    for (int k = 0; k < na; k++) {
      int ax = lw_axis(axes[k], r);
      if (ax < 0) return lw_node_err(L, n, e, "axis %lld out of range for rank %d", (long long)axes[k], r);
      axes[k] = ax;
    }
  }
  if (n->n_inputs > 1 && n->inputs[1] >= 0 && !L->g->tensors[n->inputs[1]]->is_const) {
    /* pads known at run time only (the output shape is declared): read them in the kernel */
    rt = 1;
    np = (int)ecg_tensor_numel(L->g->tensors[n->inputs[1]]);
  } else if (n->n_inputs > 1 && n->inputs[1] >= 0) np = ecg_const_ints(L->g->tensors[n->inputs[1]], pads, 2 * ECG_MAX_RANK);
  else {
    const int64_t *p;
    np = ecg_attr_ints(n, "pads", &p);
    if (np > 0 && np <= 2 * ECG_MAX_RANK) memcpy(pads, p, sizeof(int64_t) * (size_t)np);
  }
  if (np != 2 * na) return lw_node_err(L, n, e, "pads must hold 2 values per padded axis (%d values for %d axes)", np, na);
  char mode[16];
  ecg_attr_s(n, "mode", "constant", mode, sizeof mode);
  char value[160] = "0";
  if (n->n_inputs > 2 && n->inputs[2] >= 0) snprintf(value, sizeof value, "%s[0]", lw_ptr(L, n->inputs[2]));
  else if (ecg_attr_find(n, "value")) snprintf(value, sizeof value, "%.9g", ecg_attr_f(n, "value", 0));
  int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "edge") ? 2 : !strcmp(mode, "wrap") ? 3 : -1;
  if (m < 0) return lw_node_err(L, n, e, "pad mode '%s' not supported (constant, reflect, edge, wrap)", mode);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n  int64_t pb[%d] = {0};\n", r > 0 ? r : 1);
  for (int k = 0; k < na; k++) { /* the begin pads of the padded axes */
    if (rt) sb_printf(c, "  pb[%d] = (int64_t)%s[%d];\n", (int)axes[k], lw_ptr(L, n->inputs[1]), k);
    else sb_printf(c, "  pb[%d] = %lld;\n", (int)axes[k], (long long)pads[k]);
  }
  pad_kernel(L, n, r, id, od, m, value);
  return ECG_OK;
}

/* The body of a Pad kernel after its pb[] (begin pad per axis, negative = crop) is
 * declared: every output element reads input index (i - pb) on each axis, mode m
 * (0 constant `value`, 1 reflect, 2 edge, 3 wrap); closes the block opened by the caller.
 * One iteration per output row (all axes but the last): the outer axes' source index is
 * worked out once per row, and the row is written in three runs, the begin pad, the
 * copied (or, in the other modes, mapped) middle and the end pad, so the divisions cost
 * per row and the copy vectorises (mlsd's 96x160x160 Pad: one division per element
 * before). */
static void pad_axis(sbuf *c, const char *ind, int m, const char *n, const char *n1, const char *nd, const char *s) {
  if (m == 2) sb_printf(c, "%sif (%s < 0) %s = 0; if (%s >= %s) %s = %s;\n", ind, s, s, s, n, s, n1);
  else if (m == 3) sb_printf(c, "%s%s %%= %s; if (%s < 0) %s += %s;\n", ind, s, nd, s, s, n);
  else if (m == 1)
    sb_printf(c, "%sif (%s > 1) { while (%s < 0 || %s >= %s) { if (%s < 0) %s = -%s; if (%s >= %s) %s = 2 * %s - %s; } } else %s = 0;\n",
              ind, n, s, s, n, s, s, s, s, n, s, n1, s, s);
}

/* A size of tensor t as C: the number v in a static build (printed as it always was), the
 * expression e (NULL: t's dim d) in a dynamic one, parenthesised. */
static const char *pk_size(const ecg_lower *L, int t, int d, int64_t v, const char *e, char *b) {
  if (!lw_tensor_dyn(L, t)) snprintf(b, 768, "%lld", (long long)v);
  else snprintf(b, 768, "(%.765s)", e ? e : lw_dim(L, t, d));
  return b;
}

/* Input t's extent n along axis d as pad_axis takes it: n, n - 1 and max(n, 1) as C
 * (pk_size: numbers in a static build). */
static void pk_extent(const ecg_lower *L, int t, int d, int64_t n, char *sn, char *sn1, char *snd) {
  char x[800];
  pk_size(L, t, d, n, NULL, sn);
  snprintf(x, sizeof x, "(%.760s - 1)", sn);
  pk_size(L, t, d, n - 1, x, sn1);
  snprintf(x, sizeof x, "(%.370s > 0 ? %.370s : 1)", sn, sn);
  pk_size(L, t, d, n > 0 ? n : 1, x, snd);
}

static void pad_kernel(ecg_lower *L, const ecg_node *n, int r, const int64_t *id, const int64_t *od, int m, const char *value) {
  int64_t ist[ECG_MAX_RANK], ost[ECG_MAX_RANK];
  lw_strides(r, id, ist);
  lw_strides(r, od, ost);
  sbuf *c = &L->code;
  int64_t numel = 1;
  for (int d = 0; d < r; d++) numel *= od[d];
  const int last = r - 1, in = n->inputs[0], out = n->outputs[0];
  const int64_t W = r > 0 ? od[last] : 1, rows = W > 0 ? numel / W : 0, Wd = W > 0 ? W : 1;
  const char *y = lw_ptr(L, out), *x = lw_ptr(L, in), *ct = lw_ctype(L, out);
  /* sizes as C (a dynamic build: expressions over the symbols, LOWERED.md "Dynamic shapes") */
  char sw[768], sr[768], sn[768], srs[768], sis[768], sid[768], sid1[768], sidd[768];
  pk_size(L, out, last, W, r > 0 ? NULL : "1", sw);
  pk_size(L, out, 0, rows, lw_dim_prod(L, out, 0, last > 0 ? last : 0), sr);
  pk_size(L, out, 0, numel, lw_dim_prod(L, out, 0, r), sn);
  if (lw_node_dyn(L, n)) lw_par_for_expr(L, 2, "q", sr, sn, 32768);
  else lw_par_for(L, 2, "q", rows, numel, 32768);
  sb_printf(c, "    int64_t rem = q, src = 0, inside = 1;\n");
  for (int d = 0; d < last; d++) {
    pk_size(L, out, d, ost[d] / Wd, lw_dim_prod(L, out, d + 1, last), srs); /* row stride of axis d */
    pk_size(L, in, d, ist[d], lw_dim_prod(L, in, d + 1, r), sis);
    pk_extent(L, in, d, id[d], sid, sid1, sidd);
    sb_printf(c, "    { int64_t i = rem / %s; rem -= i * %s; int64_t s = i - pb[%d];\n", srs, srs, d);
    if (m == 0) sb_printf(c, "      if (s < 0 || s >= %s) inside = 0;\n", sid);
    else pad_axis(c, "      ", m, sid, sid1, sidd, "s");
    sb_printf(c, "      src += s * %s; }\n", sis);
  }
  sb_printf(c, "    const int64_t yo = q * %s;\n", sw);
  if (r == 0) {
    sb_printf(c, "    %s[yo] = %s[0];\n  }\n  }\n", y, x);
    return;
  }
  pk_extent(L, in, last, id[last], sid, sid1, sidd);
  /* the last axis: output i reads input i - pb; inside the input for i in [lo, hi) */
  sb_printf(c, "    int64_t lo = pb[%d], hi = pb[%d] + %s;\n", last, last, sid);
  sb_printf(c, "    lo = lo < 0 ? 0 : lo > %s ? %s : lo;\n    hi = hi > %s ? %s : hi;\n    hi = hi < lo ? lo : hi;\n", sw, sw, sw, sw);
  if (m == 0) {
    sb_printf(c, "    if (!inside) lo = hi = %s;\n", sw);
    sb_printf(c, "    for (int64_t i = 0; i < lo; i++) %s[yo + i] = (%s)%s;\n", y, ct, value);
    sb_printf(c, "    for (int64_t i = lo; i < hi; i++) %s[yo + i] = %s[src + i - pb[%d]];\n", y, x, last);
    sb_printf(c, "    for (int64_t i = hi; i < %s; i++) %s[yo + i] = (%s)%s;\n", sw, y, ct, value);
  } else {
    sb_printf(c, "    for (int64_t i = lo; i < hi; i++) %s[yo + i] = %s[src + i - pb[%d]];\n", y, x, last);
    sb_printf(c, "    for (int64_t i = 0; i < %s; i++) {\n      if (i == lo && hi > lo) { i = hi - 1; continue; }\n", sw);
    sb_printf(c, "      int64_t s = i - pb[%d];\n", last);
    pad_axis(c, "      ", m, sid, sid1, sidd, "s");
    sb_printf(c, "      %s[yo + i] = %s[src + s];\n    }\n", y, x);
  }
  sb_printf(c, "  }\n  }\n");
}

/** CenterCropPad (18): each axis of the (inferred) output is the input centre-cropped
 *  (begin offset floor((in - out) / 2)) or zero-padded (begin pad floor((out - in) / 2)),
 *  as ONNX's reference; any dtype; the Pad kernel with constant 0 and negative pads for
 *  the cropped axes. */
int emit_center_crop_pad(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n  int64_t pb[%d] = {0};\n", r > 0 ? r : 1);
  for (int d = 0; d < r; d++)
    if (od[d] != id[d]) sb_printf(c, "  pb[%d] = %lld;\n", d, (long long)(od[d] > id[d] ? (od[d] - id[d]) / 2 : -((id[d] - od[d]) / 2)));
  pad_kernel(L, n, r, id, od, 0, "0");
  return ECG_OK;
}
