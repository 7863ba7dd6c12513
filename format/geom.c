/* libecg: the one resolved sliding-window geometry of Conv, ConvTranspose, ConvInteger,
 * QLinearConv, MaxPool and AveragePool (format/ecg.h, "convolution geometry"), shared by
 * shape inference (format/ops/nn.c) and every emitter (tools/lower/emit/). */
#include <string.h>

#include "ops_internal.h"

/* Read an optional int list attribute of exactly len entries, each >= min, into v
 * (def when absent). */
static int ints_attr(const ecg_graph *g, const ecg_node *n, const char *name, int len, int64_t def, int64_t min,
                     int64_t *v, ecg_err *e) {
  const int64_t *a;
  int c = ecg_attr_ints(n, name, &a);
  if (c >= 0 && c != len)
    return ecg_node_errf(e, g, n, "attribute '%s' has %d values, expected %d", name, c, len);
  for (int i = 0; i < len; i++) {
    v[i] = c >= 0 ? a[i] : def;
    if (v[i] < min)
      return ecg_node_errf(e, g, n, "attribute '%s' has invalid value %lld", name, (long long)v[i]);
  }
  return ECG_OK;
}

/* An operand's dims (rank returned), failing when it is missing or of unknown rank. */
static int operand(const ecg_graph *g, const ecg_node *n, int i, int64_t *dims, ecg_err *e) {
  const ecg_tensor *t = ecg_node_input(g, n, i);
  if (!t) return -ecg_node_errf(e, g, n, "missing input %d", i);
  if (!t->shape_known) return -ecg_node_errf(e, g, n, "input '%s' has unknown rank", t->name);
  if (t->n_dims > ECG_MAX_RANK) return -ecg_node_errf(e, g, n, "input '%s' has rank %zu > %d", t->name, t->n_dims, ECG_MAX_RANK);
  return ecg_tensor_dims(t, dims);
}

/* Which operator: operand positions and kind. */
static int classify(const ecg_graph *g, const ecg_node *n, ecg_conv_geom *gm, ecg_err *e) {
  const ecg_op_info *op = ecg_node_op(n);
  gm->x = 0;
  gm->w = 1;
  gm->b = -1;
  gm->transposed = gm->pool = false;
  switch (op ? op->id : ECG_OP_NONE) {
  case ECG_OP_Conv: gm->b = 2; break;
  case ECG_OP_ConvTranspose: gm->b = 2; gm->transposed = true; break;
  case ECG_OP_ConvInteger: break;
  case ECG_OP_DeformConv: gm->b = 3; break; /* X, W, offset, B, mask */
  case ECG_OP_QLinearConv: gm->w = 3; gm->b = 8; break;
  case ECG_OP_MaxPool: case ECG_OP_AveragePool: case ECG_OP_LpPool: gm->w = -1; gm->pool = true; break;
  default: return ecg_node_errf(e, g, n, "not a convolution or pooling operator");
  }
  if (gm->b >= 0 && !ecg_node_input(g, n, gm->b)) gm->b = -1;
  return ECG_OK;
}

static int read_auto_pad(const ecg_graph *g, const ecg_node *n, ecg_auto_pad *ap, ecg_err *e) {
  char s[32];
  ecg_attr_s(n, "auto_pad", "NOTSET", s, sizeof s);
  if (!strcmp(s, "NOTSET")) *ap = ECG_PAD_NOTSET;
  else if (!strcmp(s, "SAME_UPPER")) *ap = ECG_PAD_SAME_UPPER;
  else if (!strcmp(s, "SAME_LOWER")) *ap = ECG_PAD_SAME_LOWER;
  else if (!strcmp(s, "VALID")) *ap = ECG_PAD_VALID;
  else return ecg_node_errf(e, g, n, "unknown auto_pad '%s'", s);
  return ECG_OK;
}

/* Channels and group: Conv W [M, C/group, K...]; ConvTranspose W [C, M/group, K...]. */
static int channels(const ecg_graph *g, const ecg_node *n, ecg_conv_geom *gm, const int64_t *xd, const int64_t *wd,
                    ecg_err *e) {
  gm->n = xd[0];
  gm->c = xd[1];
  if (gm->pool) {
    gm->m = gm->c;
    gm->group = 1;
    return ECG_OK;
  }
  gm->group = ecg_attr_i(n, "group", 1);
  if (gm->group < 1) return ecg_node_errf(e, g, n, "group must be >= 1, is %lld", (long long)gm->group);
  if (gm->transposed) {
    if (xd[1] >= 0 && wd[0] >= 0 && xd[1] != wd[0])
      return ecg_node_errf(e, g, n, "input has %lld channels but weight expects %lld", (long long)xd[1], (long long)wd[0]);
    gm->m = wd[1] >= 0 ? wd[1] * gm->group : -1;
    return ECG_OK;
  }
  if (xd[1] >= 0 && wd[1] >= 0 && xd[1] != wd[1] * gm->group)
    return ecg_node_errf(e, g, n, "input has %lld channels but weight expects %lld (C/group = %lld, group %lld)",
                         (long long)xd[1], (long long)(wd[1] * gm->group), (long long)wd[1], (long long)gm->group);
  if (wd[0] >= 0 && wd[0] % gm->group)
    return ecg_node_errf(e, g, n, "%lld output channels not divisible by group %lld", (long long)wd[0], (long long)gm->group);
  gm->m = wd[0];
  return ECG_OK;
}

/* Split a total padding into begin/end: floor(total/2) first, ceil for SAME_LOWER. */
static void split_pad(ecg_conv_geom *gm, int i, int64_t total) {
  if (total < 0) total = 0;
  gm->pb[i] = gm->auto_pad == ECG_PAD_SAME_LOWER ? total - total / 2 : total / 2;
  gm->pe[i] = total - gm->pb[i];
}

/* Output dims and resolved pads of a Conv or pool. */
static int forward_dims(const ecg_graph *g, const ecg_node *n, ecg_conv_geom *gm, ecg_err *e) {
  bool same = gm->auto_pad == ECG_PAD_SAME_UPPER || gm->auto_pad == ECG_PAD_SAME_LOWER;
  for (int i = 0; i < gm->sp; i++) {
    int64_t in = gm->in[i], s = gm->s[i], ek = (gm->k[i] - 1) * gm->d[i] + 1;
    if (same) {
      gm->out[i] = in < 0 ? -1 : (in + s - 1) / s;
      if (in < 0 || gm->k[i] < 0) gm->pb[i] = gm->pe[i] = -1;
      else split_pad(gm, i, (gm->out[i] - 1) * s + ek - in);
      continue;
    }
    if (in < 0 || gm->k[i] < 0) { gm->out[i] = -1; continue; }
    int64_t span = in + gm->pb[i] + gm->pe[i] - ek;
    if (span < 0)
      return ecg_node_errf(e, g, n, "window of spatial dim %d (%lld) is larger than the padded input (%lld)", i,
                           (long long)ek, (long long)(in + gm->pb[i] + gm->pe[i]));
    int64_t o = (gm->ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (gm->ceil_mode && (o - 1) * s >= in + gm->pb[i]) o--;
    gm->out[i] = o;
  }
  return ECG_OK;
}

/* Output dims and resolved pads of a ConvTranspose. */
static int transposed_dims(const ecg_graph *g, const ecg_node *n, ecg_conv_geom *gm, ecg_err *e) {
  const int64_t *os;
  int c = ecg_attr_ints(n, "output_shape", &os);
  if (c >= 0 && c != gm->sp && c != gm->sp + 2)
    return ecg_node_errf(e, g, n, "output_shape has %d values for %d spatial dims", c, gm->sp);
  bool same = gm->auto_pad == ECG_PAD_SAME_UPPER || gm->auto_pad == ECG_PAD_SAME_LOWER;
  for (int i = 0; i < gm->sp; i++) {
    int64_t in = gm->in[i], s = gm->s[i], ek = (gm->k[i] - 1) * gm->d[i] + 1;
    int64_t full = in < 0 || gm->k[i] < 0 ? -1 : s * (in - 1) + gm->out_pad[i] + ek;
    if (c >= 0 || same) {
      gm->out[i] = c >= 0 ? os[c - gm->sp + i] : in < 0 ? -1 : in * s;
      if (gm->out[i] < 0 && c >= 0) return ecg_node_errf(e, g, n, "output_shape[%d] is negative", i);
      if (full < 0 || gm->out[i] < 0) gm->pb[i] = gm->pe[i] = -1;
      else split_pad(gm, i, full - gm->out[i]);
      continue;
    }
    gm->out[i] = full < 0 ? -1 : full - gm->pb[i] - gm->pe[i];
    if (full >= 0 && gm->out[i] < 0) return ecg_node_errf(e, g, n, "negative output size in spatial dim %d", i);
  }
  return ECG_OK;
}

int ecg_conv_geom_resolve(const ecg_graph *g, const ecg_node *n, ecg_conv_geom *gm, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], wd[ECG_MAX_RANK];
  memset(gm, 0, sizeof *gm);
  ECG_TRY(classify(g, n, gm, e));
  int r = operand(g, n, gm->x, xd, e);
  if (r < 0) return -r;
  if (r < 3) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 3 (N, C, spatial...), has %d", g->tensors[n->inputs[gm->x]]->name, r);
  gm->sp = r - 2;
  if (gm->w >= 0) {
    int rw = operand(g, n, gm->w, wd, e);
    if (rw < 0) return -rw;
    if (rw != r) return ecg_node_errf(e, g, n, "weight '%s' has rank %d, input has %d", g->tensors[n->inputs[gm->w]]->name, rw, r);
  }
  ECG_TRY(channels(g, n, gm, xd, wd, e));
  ECG_TRY(read_auto_pad(g, n, &gm->auto_pad, e));
  const int64_t *ks;
  int c = ecg_attr_ints(n, "kernel_shape", &ks);
  if (c < 0 && gm->pool) return ecg_node_errf(e, g, n, "missing attribute 'kernel_shape'");
  if (c >= 0 && c != gm->sp) return ecg_node_errf(e, g, n, "kernel_shape has %d values for %d spatial dims", c, gm->sp);
  for (int i = 0; i < gm->sp; i++) {
    gm->in[i] = xd[2 + i];
    gm->k[i] = c >= 0 ? ks[i] : wd[2 + i];
    if (c >= 0 && gm->w >= 0 && wd[2 + i] >= 0 && ks[i] != wd[2 + i])
      return ecg_node_errf(e, g, n, "kernel_shape[%d] = %lld but the weight has %lld", i, (long long)ks[i], (long long)wd[2 + i]);
    if (c >= 0 && ks[i] < 1) return ecg_node_errf(e, g, n, "kernel_shape[%d] must be >= 1, is %lld", i, (long long)ks[i]);
  }
  ECG_TRY(ints_attr(g, n, "strides", gm->sp, 1, 1, gm->s, e));
  ECG_TRY(ints_attr(g, n, "dilations", gm->sp, 1, 1, gm->d, e));
  int64_t pads[2 * ECG_MAX_RANK];
  ECG_TRY(ints_attr(g, n, "pads", 2 * gm->sp, 0, INT64_MIN, pads, e));
  for (int i = 0; i < gm->sp; i++) {
    bool explicit_pads = gm->auto_pad == ECG_PAD_NOTSET;
    gm->pb[i] = explicit_pads ? pads[i] : 0;
    gm->pe[i] = explicit_pads ? pads[gm->sp + i] : 0;
  }
  if (gm->transposed) {
    ECG_TRY(ints_attr(g, n, "output_padding", gm->sp, 0, 0, gm->out_pad, e));
    return transposed_dims(g, n, gm, e);
  }
  gm->ceil_mode = gm->pool && ecg_attr_i(n, "ceil_mode", 0) != 0;
  return forward_dims(g, n, gm, e);
}

int ecg_col2im_geom(const ecg_graph *g, const ecg_node *n, ecg_conv_geom *gm, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], img[ECG_MAX_RANK], blk[ECG_MAX_RANK];
  memset(gm, 0, sizeof *gm);
  gm->w = gm->b = -1;
  int r = operand(g, n, 0, xd, e);
  if (r < 0) return -r;
  if (r != 3) return ecg_node_errf(e, g, n, "input '%s' must be [N, C * prod(block_shape), L], has rank %d", g->tensors[n->inputs[0]]->name, r);
  const ecg_tensor *ti = ecg_node_input(g, n, 1), *tb = ecg_node_input(g, n, 2);
  if (!ti || !tb) return ecg_node_errf(e, g, n, "needs inputs image_shape and block_shape");
  if (!ti->is_const || !tb->is_const) return ecg_node_errf(e, g, n, "image_shape and block_shape must be constants (run-time shapes are not supported)");
  int si = ecg_const_ints(ti, img, ECG_MAX_RANK - 2), sb = ecg_const_ints(tb, blk, ECG_MAX_RANK - 2);
  if (si < 1 || si != sb) return ecg_node_errf(e, g, n, "image_shape (%d values) and block_shape (%d values) must have the same length >= 1", si, sb);
  gm->sp = si;
  ECG_TRY(ints_attr(g, n, "strides", gm->sp, 1, 1, gm->s, e));
  ECG_TRY(ints_attr(g, n, "dilations", gm->sp, 1, 1, gm->d, e));
  int64_t pads[2 * ECG_MAX_RANK];
  ECG_TRY(ints_attr(g, n, "pads", 2 * gm->sp, 0, 0, pads, e));
  int64_t ksz = 1, nblk = 1;
  for (int i = 0; i < gm->sp; i++) {
    if (img[i] < 1 || blk[i] < 1) return ecg_node_errf(e, g, n, "image_shape and block_shape must be positive (dim %d: %lld, %lld)", i, (long long)img[i], (long long)blk[i]);
    gm->in[i] = img[i];
    gm->k[i] = blk[i];
    gm->pb[i] = pads[i];
    gm->pe[i] = pads[gm->sp + i];
    int64_t span = img[i] + gm->pb[i] + gm->pe[i] - (blk[i] - 1) * gm->d[i] - 1;
    if (span < 0) return ecg_node_errf(e, g, n, "the dilated block is larger than the padded image in dim %d", i);
    gm->out[i] = span / gm->s[i] + 1;
    ksz *= blk[i];
    nblk *= gm->out[i];
  }
  gm->n = xd[0];
  if (xd[1] >= 0 && xd[1] % ksz) return ecg_node_errf(e, g, n, "input dim 1 (%lld) is not a multiple of prod(block_shape) = %lld", (long long)xd[1], (long long)ksz);
  gm->c = gm->m = xd[1] < 0 ? -1 : xd[1] / ksz;
  gm->group = 1;
  if (xd[2] >= 0 && xd[2] != nblk) return ecg_node_errf(e, g, n, "input dim 2 (%lld) must be the number of blocks, %lld", (long long)xd[2], (long long)nblk);
  return ECG_OK;
}
