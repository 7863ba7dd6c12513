/* Emitter for Resize (opset 10-19) and Upsample (7-9): nearest, (bi/multi)linear and
 * cubic modes with every ONNX coordinate transformation mode (half_pixel,
 * half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric,
 * tf_half_pixel_for_nn, tf_crop_and_resize with its roi and extrapolation_value),
 * cubic_coeff_a, exclude_outside and the opset-18 axes / keep_aspect_ratio_policy.
 *
 * Resizing is separable: along each axis, output index x reads at most K input
 * indices (1 nearest, 2 linear, 4 cubic) with fixed weights.  Shapes, scales and roi
 * are static, so those taps are computed at lowering time into tables (element
 * offsets already multiplied by the axis stride, edge-clamped into the input), and the
 * kernel is a gather that sums over the taps of the axes that interpolate
 * (One-to-Many).  An axis whose taps are all a single weight 1 (unchanged length,
 * integral coordinates) needs one tap.  Semantics follow the ONNX reference: the K
 * neighbours of the source coordinate x come from the input padded by edge values
 * (an integral x is treated as ratio 1 between x-1 and x), exclude_outside zeroes the
 * weights of padded neighbours and renormalises, and a tf_crop_and_resize coordinate
 * outside [0, length-1] on any axis makes the element extrapolation_value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

enum { RZ_MAX_TAPS = 4 };

static int node_err(ecg_lower *L, const ecg_node *n, ecg_err *e, const char *what) {
  char lb[256];
  return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): %s", ecg_node_label(L->g, n, lb, sizeof lb), n->op_type, what);
}

/* Input i of n as a constant tensor with elements, or NULL. */
static const ecg_tensor *const_input(const ecg_lower *L, const ecg_node *n, int i) {
  if ((size_t)i >= n->n_inputs || n->inputs[i] < 0) return NULL;
  const ecg_tensor *t = L->g->tensors[n->inputs[i]];
  return t->is_const && ecg_tensor_numel(t) > 0 ? t : NULL;
}

/* Per-axis scale factors used by the coordinate transformation: the scales operand
 * (attribute in Upsample-7, input 1 in Resize-10/Upsample-9, input 2 from 11, over
 * `axes` when given), else output/input lengths from sizes, or the single
 * keep_aspect_ratio_policy scale.  resized[d] marks the axes the transform applies to. */
static int get_scales(ecg_lower *L, const ecg_node *n, int r, const int64_t *id, const int64_t *od, int legacy,
                      double *scale, int *resized, const int64_t *axes, int na) {
  for (int d = 0; d < r; d++) {
    scale[d] = id[d] ? (double)od[d] / (double)id[d] : 1;
    resized[d] = na < 0;
  }
  for (int k = 0; k < na; k++) resized[axes[k]] = 1;
  const float *fa;
  int c = ecg_attr_floats(n, "scales", &fa);
  if (c >= 0) {
    if (c != r) return -1;
    for (int d = 0; d < r; d++) scale[d] = fa[d];
    return 0;
  }
  const ecg_tensor *s = const_input(L, n, legacy ? 1 : 2);
  int cnt = na < 0 ? r : na;
  if (s) {
    if (ecg_tensor_numel(s) != cnt) return -1;
    for (int k = 0; k < cnt; k++) scale[na < 0 ? k : axes[k]] = ecg_const_f64(s, k);
    return 0;
  }
  char pol[32];
  ecg_attr_s(n, "keep_aspect_ratio_policy", "stretch", pol, sizeof pol);
  if (strcmp(pol, "stretch")) { /* sizes with one scale for every resized axis */
    int larger = !strcmp(pol, "not_smaller");
    double u = larger ? 0 : INFINITY;
    for (int d = 0; d < r; d++) {
      if (!resized[d] || !id[d]) continue;
      const ecg_tensor *z = const_input(L, n, 3);
      int k = d;
      if (na >= 0) for (k = 0; k < na && axes[k] != d; k++) {}
      double v = z && k < ecg_tensor_numel(z) ? (double)ecg_const_i64(z, k) / (double)id[d] : scale[d];
      u = larger ? fmax(u, v) : fmin(u, v);
    }
    for (int d = 0; d < r; d++) if (resized[d]) scale[d] = u;
  }
  return 0;
}

/* The cubic convolution weights (Keys, coefficient A) of the 4 neighbours at
 * distances 1 + t, t, 1 - t, 2 - t from the source coordinate (t in (0, 1]). */
static void cubic_coeffs(double t, double A, double *c) {
  c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

/* The resize options shared by every axis. */
typedef struct rz_opts {
  int mode;            /* 0 nearest, 1 linear, 2 cubic */
  char ctm[40], nm[40];
  double cubic_a;
  int exclude_outside;
} rz_opts;

/* Source coordinate of output index x on an axis of in_len input and out_len output
 * elements with scale s (roi_start/roi_end for tf_crop_and_resize); *outside is set
 * when tf_crop_and_resize falls outside the input. */
static double source_coord(const rz_opts *o, int64_t x, int64_t in_len, int64_t out_len, double s, double r0, double r1,
                           int *outside) {
  double in = (double)in_len, out_f = s * in, xo;
  *outside = 0;
  if (!strcmp(o->ctm, "align_corners")) xo = out_f == 1 ? 0 : (double)x * (in - 1) / (out_f - 1);
  else if (!strcmp(o->ctm, "asymmetric")) xo = (double)x / s;
  else if (!strcmp(o->ctm, "pytorch_half_pixel")) xo = out_len > 1 ? ((double)x + 0.5) / s - 0.5 : 0;
  else if (!strcmp(o->ctm, "tf_half_pixel_for_nn")) xo = ((double)x + 0.5) / s;
  else if (!strcmp(o->ctm, "half_pixel_symmetric")) {
    double adj = (double)out_len / out_f, off = in / 2 * (1 - adj);
    xo = off + ((double)x + 0.5) / s - 0.5;
  } else if (!strcmp(o->ctm, "tf_crop_and_resize")) {
    xo = out_f == 1 ? (r1 - r0) * (in - 1) / 2 : (double)x * (r1 - r0) * (in - 1) / (out_f - 1);
    xo += r0 * (in - 1);
    *outside = !(xo >= 0 && xo <= in - 1);
  } else xo = ((double)x + 0.5) / s - 0.5; /* half_pixel */
  return xo;
}

/* The K taps of one output index: input indices idx[K] (edge-clamped) and weights
 * w[K]; returns K. */
static int taps_of(const rz_opts *o, double xo, int64_t in_len, int64_t *idx, double *w) {
  if (!(xo == xo)) xo = 0;
  if (xo > 1e15) xo = 1e15;
  if (xo < -1e15) xo = -1e15;
  double f = floor(xo), ratio;
  if (xo == f) { f -= 1; ratio = 1; } /* an integral coordinate: ratio 1 between x-1 and x */
  else ratio = xo - f;
  int K = o->mode == 2 ? 4 : 2, pad = K / 2;
  int64_t start = (int64_t)f - (K / 2 - 1), lo = -pad, hi = in_len + pad - K;
  if (start < lo) start = lo;
  if (start > hi) start = hi;
  double c[RZ_MAX_TAPS];
  if (o->mode == 2) cubic_coeffs(ratio, o->cubic_a, c);
  else if (o->mode == 1) { c[0] = 1 - ratio; c[1] = ratio; }
  else {
    int up;
    if (ratio == 1) up = 1; /* integral: the coordinate itself */
    else if (!strcmp(o->nm, "floor")) up = 0;
    else if (!strcmp(o->nm, "ceil")) up = 1;
    else if (!strcmp(o->nm, "round_prefer_ceil")) up = ratio >= 0.5;
    else up = ratio > 0.5; /* round_prefer_floor */
    c[0] = !up;
    c[1] = up;
  }
  if (o->exclude_outside && o->mode != 0) {
    double sum = 0;
    for (int k = 0; k < K; k++) {
      if (start + k < 0 || start + k >= in_len) c[k] = 0;
      sum += c[k];
    }
    if (sum != 0) for (int k = 0; k < K; k++) c[k] /= sum;
  }
  for (int k = 0; k < K; k++) {
    int64_t i = start + k;
    idx[k] = i < 0 ? 0 : i >= in_len ? in_len - 1 : i;
    w[k] = c[k];
  }
  return K;
}

/** Resize / Upsample over static shapes with constant scales/sizes (and roi for
 *  tf_crop_and_resize): y[x] = sum over the taps of the interpolating axes of the
 *  product of their weights times x at the tapped input element. */
int emit_resize(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], ist[ECG_MAX_RANK], axes[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  lw_strides(r, id, ist);
  if (lw_half(L, n->inputs[0])) return node_err(L, n, e, "float16/bfloat16 is not supported");
  int is_upsample = lw_op(n) == ECG_OP_Upsample;
  int legacy = is_upsample || (n->opset > 0 && n->opset < 11);
  rz_opts o;
  char mode[32];
  ecg_attr_s(n, "mode", "nearest", mode, sizeof mode);
  ecg_attr_s(n, "coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel", o.ctm, sizeof o.ctm);
  ecg_attr_s(n, "nearest_mode", legacy ? "floor" : "round_prefer_floor", o.nm, sizeof o.nm);
  o.mode = !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "linear") || !strcmp(mode, "bilinear") ? 1 : !strcmp(mode, "cubic") ? 2 : -1;
  if (o.mode < 0) return node_err(L, n, e, "mode is not supported (nearest, linear, cubic)");
  if (legacy && o.mode == 2) return node_err(L, n, e, "cubic mode is not supported before Resize-11");
  static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                                     "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  int known = 0;
  for (size_t k = 0; k < sizeof ctms / sizeof *ctms; k++) known |= !strcmp(o.ctm, ctms[k]);
  if (!known) return node_err(L, n, e, "coordinate_transformation_mode is not supported");
  if (strcmp(o.nm, "round_prefer_floor") && strcmp(o.nm, "round_prefer_ceil") && strcmp(o.nm, "floor") && strcmp(o.nm, "ceil"))
    return node_err(L, n, e, "nearest_mode is not supported");
  if (ecg_attr_i(n, "antialias", 0)) return node_err(L, n, e, "antialias is not supported");
  o.cubic_a = ecg_attr_f(n, "cubic_coeff_a", -0.75f);
  o.exclude_outside = ecg_attr_i(n, "exclude_outside", 0) != 0;
  int crop = !strcmp(o.ctm, "tf_crop_and_resize");
  int isf = ecg_dtype_is_float(L->g->tensors[n->inputs[0]]->dtype);
  if (!isf && (o.mode == 2 || crop)) return node_err(L, n, e, "cubic mode and tf_crop_and_resize on integer tensors are not supported");
  const int64_t *aa;
  int na = ecg_attr_ints(n, "axes", &aa);
  if (na > r) return node_err(L, n, e, "too many axes");
  for (int k = 0; k < na; k++) {
    int ax = lw_axis(aa[k], r);
    if (ax < 0) return node_err(L, n, e, "axis out of range");
    axes[k] = ax;
  }
  int64_t on = 1;
  for (int d = 0; d < r; d++) on *= od[d];
  for (int d = 0; d < r && on > 0; d++)
    if (id[d] == 0) return node_err(L, n, e, "resizing an empty axis to a non-empty one is not supported");
  double scale[ECG_MAX_RANK], r0[ECG_MAX_RANK], r1[ECG_MAX_RANK];
  int resized[ECG_MAX_RANK];
  if (get_scales(L, n, r, id, od, legacy, scale, resized, axes, na))
    return node_err(L, n, e, "scales do not match the axes: not supported");
  for (int d = 0; d < r; d++) {
    r0[d] = 0;
    r1[d] = 1;
    if (!(scale[d] > 0)) return node_err(L, n, e, "a non-positive scale is not supported");
  }
  if (crop) {
    const ecg_tensor *roi = const_input(L, n, 1);
    int cnt = na < 0 ? r : na;
    if (!roi) return node_err(L, n, e, "tf_crop_and_resize with a non-constant roi is not supported");
    if (ecg_tensor_numel(roi) != 2 * cnt) return node_err(L, n, e, "roi length does not match the axes: not supported");
    for (int k = 0; k < cnt; k++) {
      int d = na < 0 ? k : (int)axes[k];
      r0[d] = ecg_const_f64(roi, k);
      r1[d] = ecg_const_f64(roi, cnt + k);
    }
  }
  /* tables: taps per axis */
  int u = lw_uid(L), K[ECG_MAX_RANK], has_ext[ECG_MAX_RANK];
  for (int d = 0; d < r; d++) {
    int64_t *ti = malloc(sizeof(int64_t) * (size_t)(od[d] * RZ_MAX_TAPS + 1));
    double *tw = malloc(sizeof(double) * (size_t)(od[d] * RZ_MAX_TAPS + 1));
    unsigned char *te = calloc((size_t)od[d] + 1, 1);
    if (!ti || !tw || !te) {
      free(ti); free(tw); free(te);
      return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    }
    int k_ax = 1, single = 1;
    has_ext[d] = 0;
    for (int64_t x = 0; x < od[d]; x++) {
      if (!resized[d]) { /* an axis the opset-18 axes leave alone */
        ti[x * RZ_MAX_TAPS] = x < id[d] ? x : id[d] - 1;
        tw[x * RZ_MAX_TAPS] = 1;
        for (int k = 1; k < RZ_MAX_TAPS; k++) { ti[x * RZ_MAX_TAPS + k] = 0; tw[x * RZ_MAX_TAPS + k] = 0; }
        continue;
      }
      int outside;
      double xo = source_coord(&o, x, id[d], od[d], scale[d], r0[d], r1[d], &outside);
      int kk = taps_of(&o, xo, id[d], ti + x * RZ_MAX_TAPS, tw + x * RZ_MAX_TAPS);
      for (int k = kk; k < RZ_MAX_TAPS; k++) { ti[x * RZ_MAX_TAPS + k] = 0; tw[x * RZ_MAX_TAPS + k] = 0; }
      if (kk > k_ax) k_ax = kk;
      te[x] = (unsigned char)outside;
      has_ext[d] |= outside;
      /* a one-hot row becomes its single tap in slot 0 (the other slots weigh 0) */
      int hot = -1, nz = 0;
      for (int k = 0; k < kk; k++)
        if (tw[x * RZ_MAX_TAPS + k] != 0) { nz++; hot = k; }
      if (nz == 1 && tw[x * RZ_MAX_TAPS + hot] == 1) {
        int64_t h = ti[x * RZ_MAX_TAPS + hot];
        for (int k = 0; k < RZ_MAX_TAPS; k++) { ti[x * RZ_MAX_TAPS + k] = h; tw[x * RZ_MAX_TAPS + k] = k == 0; }
      } else single = 0;
    }
    K[d] = single ? 1 : k_ax;
    sb_printf(&L->decls, "static const int64_t rz%d_i%d[%lld] = {", u, d, (long long)(od[d] * K[d] > 0 ? od[d] * K[d] : 1));
    for (int64_t x = 0; x < od[d]; x++)
      for (int k = 0; k < K[d]; k++) sb_printf(&L->decls, "%s%lld", x || k ? "," : "", (long long)(ti[x * RZ_MAX_TAPS + k] * ist[d]));
    if (od[d] == 0) sb_printf(&L->decls, "0");
    sb_printf(&L->decls, "};\n");
    if (K[d] > 1) {
      sb_printf(&L->decls, "static const double rz%d_w%d[%lld] = {", u, d, (long long)(od[d] * K[d]));
      for (int64_t x = 0; x < od[d]; x++)
        for (int k = 0; k < K[d]; k++) sb_printf(&L->decls, "%s%.17g", x || k ? "," : "", tw[x * RZ_MAX_TAPS + k]);
      sb_printf(&L->decls, "};\n");
    }
    if (has_ext[d]) {
      sb_printf(&L->decls, "static const unsigned char rz%d_e%d[%lld] = {", u, d, (long long)od[d]);
      for (int64_t x = 0; x < od[d]; x++) sb_printf(&L->decls, "%s%d", x ? "," : "", te[x]);
      sb_printf(&L->decls, "};\n");
    }
    free(ti); free(tw); free(te);
  }
  /* kernel: loops over the output; b<d> is the offset of the single-tap axes so far,
   * e<d> whether any axis so far extrapolates */
  const char *T = lw_ctype(L, n->outputs[0]);
  int any_ext = 0, n_int = 0;
  for (int d = 0; d < r; d++) { any_ext |= has_ext[d]; n_int += K[d] > 1; }
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %s *y = %s;\n    int64_t j = 0;\n", T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    int64_t b_ = 0;\n    int e_ = 0;\n    (void)b_; (void)e_;\n");
  for (int d = 0; d < r; d++) {
    int ind = 4 + 2 * d;
    char prevb[16], preve[16];
    snprintf(prevb, sizeof prevb, d ? "b%d" : "b_", d - 1);
    snprintf(preve, sizeof preve, d ? "e%d" : "e_", d - 1);
    sb_printf(c, "%*sfor (int64_t x%d = 0; x%d < %lld; x%d++) {\n", ind, "", d, d, (long long)od[d], d);
    if (K[d] == 1) sb_printf(c, "%*s  int64_t b%d = %s + rz%d_i%d[x%d];\n", ind, "", d, prevb, u, d, d);
    else sb_printf(c, "%*s  int64_t b%d = %s;\n", ind, "", d, prevb);
    if (any_ext && has_ext[d]) sb_printf(c, "%*s  int e%d = %s | rz%d_e%d[x%d];\n", ind, "", d, preve, u, d, d);
    else if (any_ext) sb_printf(c, "%*s  int e%d = %s;\n", ind, "", d, preve);
  }
  int ind = 4 + 2 * r;
  if (any_ext) sb_printf(c, "%*sif (e%d) { y[j++] = (%s)%.9g; continue; }\n", ind, "", r - 1, T, ecg_attr_f(n, "extrapolation_value", 0.0f));
  if (n_int == 0) sb_printf(c, "%*sy[j++] = x[b%d];\n", ind, "", r - 1);
  else {
    sb_printf(c, "%*sdouble acc = 0;\n", ind, "");
    int depth = 0;
    char wprev[16] = "1.0", oprev[16];
    snprintf(oprev, sizeof oprev, "b%d", r - 1);
    for (int d = 0; d < r; d++) {
      if (K[d] <= 1) continue;
      int in2 = ind + 2 * depth;
      sb_printf(c, "%*sfor (int t%d = 0; t%d < %d; t%d++) {\n", in2, "", d, d, K[d], d);
      sb_printf(c, "%*s  double w%d = %s * rz%d_w%d[x%d * %d + t%d];\n", in2, "", d, wprev, u, d, d, K[d], d);
      sb_printf(c, "%*s  int64_t o%d = %s + rz%d_i%d[x%d * %d + t%d];\n", in2, "", d, oprev, u, d, d, K[d], d);
      snprintf(wprev, sizeof wprev, "w%d", d);
      snprintf(oprev, sizeof oprev, "o%d", d);
      depth++;
    }
    sb_printf(c, "%*sacc += %s * (double)x[%s];\n", ind + 2 * depth, "", wprev, oprev);
    for (int k = depth - 1; k >= 0; k--) sb_printf(c, "%*s}\n", ind + 2 * k, "");
    sb_printf(c, "%*sy[j++] = (%s)acc;\n", ind, "", T);
  }
  for (int d = r - 1; d >= 0; d--) sb_printf(c, "%*s}\n", 4 + 2 * d, "");
  sb_printf(c, "  }\n");
  return ECG_OK;
}
