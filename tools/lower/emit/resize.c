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
 * outside [0, length-1] on any axis makes the element extrapolation_value.
 *
 * The C target computes the common case, float32 (bi)linear resizing of the last two
 * axes (an FPN's or a decoder's upsampling), with a plane kernel (emit_plane): each
 * output row blends its two input rows once into a row on the stack, then each output
 * column blends two of that row's elements, in float as ONNX Runtime does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "../runtime/ecg_resize.h"

enum { RZ_MAX_TAPS = ECG_RZ_MAX_TAPS };


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

/* Resize whose scales (or tf_crop_and_resize roi) are known only at run time; the
 * output shape is static (declared by the model). The kernel reads the operands,
 * builds the per-axis tap tables with the runtime's ecg_rt1_resize_coord/ecg_rt1_resize_taps
 * (the same functions the static path uses at lowering time) and gathers over the taps
 * with non-zero weight. */
static int emit_resize_runtime(ecg_lower *L, const ecg_node *n, const ecg_resize_opts *o, int r, const int64_t *id,
                               const int64_t *od, const int64_t *ist, const int64_t *axes, int na, int si, int crop) {
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  int64_t tot = 0, on = 1, combos = 1;
  for (int d = 0; d < r; d++) { tot += od[d]; on *= od[d]; combos *= RZ_MAX_TAPS; }
  int cnt = na < 0 ? r : na;
  sb_printf(c, "  {\n    const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    static const ecg_resize_opts opt = {%d, %d, %d, %.17g, %d};\n", o->mode, o->ctm, o->nm, o->cubic_a, o->exclude_outside);
  sb_printf(c, "    static const int64_t IN[%d] = {", r);
  for (int d = 0; d < r; d++) sb_printf(c, "%s%lld", d ? ", " : "", (long long)id[d]);
  sb_printf(c, "}, OUT[%d] = {", r);
  for (int d = 0; d < r; d++) sb_printf(c, "%s%lld", d ? ", " : "", (long long)od[d]);
  sb_printf(c, "}, IST[%d] = {", r);
  for (int d = 0; d < r; d++) sb_printf(c, "%s%lld", d ? ", " : "", (long long)ist[d]);
  sb_printf(c, "}, AX[%d] = {", cnt);
  for (int k = 0; k < cnt; k++) sb_printf(c, "%s%lld", k ? ", " : "", (long long)(na < 0 ? k : axes[k]));
  sb_printf(c, "};\n    double scale[%d], r0[%d], r1[%d];\n    int resized[%d];\n", r, r, r, r);
  sb_printf(c, "    for (int d = 0; d < %d; d++) { scale[d] = IN[d] ? (double)OUT[d] / (double)IN[d] : 1; r0[d] = 0; r1[d] = 1; resized[d] = %d; }\n", r, na < 0);
  sb_printf(c, "    for (int k = 0; k < %d; k++) resized[AX[k]] = 1;\n", cnt);
  const ecg_tensor *st = (size_t)si < n->n_inputs && n->inputs[si] >= 0 ? L->g->tensors[n->inputs[si]] : NULL;
  if (st && ecg_tensor_numel(st) == cnt && !st->is_const)
    sb_printf(c, "    for (int k = 0; k < %d; k++) scale[AX[k]] = (double)%s[k];\n", cnt, lw_ptr(L, n->inputs[si]));
  else if (st && st->is_const && ecg_tensor_numel(st) == cnt)
    for (int k = 0; k < cnt; k++) sb_printf(c, "    scale[AX[%d]] = %.17g;\n", k, ecg_const_f64(st, k));
  if (crop) {
    const ecg_tensor *rt = n->n_inputs > 1 && n->inputs[1] >= 0 ? L->g->tensors[n->inputs[1]] : NULL;
    if (rt && ecg_tensor_numel(rt) == 2 * cnt)
      sb_printf(c, "    for (int k = 0; k < %d; k++) { r0[AX[k]] = (double)%s[k]; r1[AX[k]] = (double)%s[%d + k]; }\n", cnt,
                lw_ptr(L, n->inputs[1]), lw_ptr(L, n->inputs[1]), cnt);
  }
  sb_printf(c, "    int64_t *ti = malloc(sizeof(int64_t) * %lld);\n    double *tw = malloc(sizeof(double) * %lld);\n"
               "    unsigned char *te = calloc(%lld, 1);\n", (long long)(tot * RZ_MAX_TAPS + 1), (long long)(tot * RZ_MAX_TAPS + 1),
            (long long)(tot + 1));
  sb_printf(c, "    if (!ti || !tw || !te) { free(ti); free(tw); free(te); return; }\n");
  sb_printf(c, "    int64_t base[%d], b = 0;\n    for (int d = 0; d < %d; d++) { base[d] = b; b += OUT[d]; }\n", r, r);
  sb_printf(c, "    for (int d = 0; d < %d; d++)\n      for (int64_t xx = 0; xx < OUT[d]; xx++) {\n"
               "        int64_t *pi = ti + (base[d] + xx) * %d;\n        double *pw = tw + (base[d] + xx) * %d;\n"
               "        for (int k = 0; k < %d; k++) { pi[k] = 0; pw[k] = 0; }\n"
               "        if (!resized[d] || !(scale[d] > 0)) { pi[0] = (xx < IN[d] ? xx : IN[d] - 1) * IST[d]; pw[0] = 1; continue; }\n"
               "        int out_;\n        double xo = ecg_rt1_resize_coord(&opt, xx, IN[d], OUT[d], scale[d], r0[d], r1[d], &out_);\n"
               "        int kk = ecg_rt1_resize_taps(&opt, xo, IN[d], pi, pw);\n"
               "        for (int k = 0; k < kk; k++) pi[k] *= IST[d];\n        te[base[d] + xx] = (unsigned char)out_;\n      }\n",
            r, RZ_MAX_TAPS, RZ_MAX_TAPS, RZ_MAX_TAPS);
  sb_printf(c, "    for (int64_t j = 0; j < %lld; j++) {\n      int64_t xi[%d], rem = j;\n      int ext = 0;\n", (long long)on, r);
  sb_printf(c, "      for (int d = %d - 1; d >= 0; d--) { xi[d] = rem %% OUT[d]; rem /= OUT[d]; ext |= te[base[d] + xi[d]]; }\n", r);
  sb_printf(c, "      if (ext) { y[j] = (%s)%.9g; continue; }\n      double acc = 0;\n", T, ecg_attr_f(n, "extrapolation_value", 0.0f));
  sb_printf(c, "      for (int64_t cmb = 0; cmb < %lld; cmb++) {\n        int64_t cc = cmb, off = 0;\n        double w = 1;\n", (long long)combos);
  sb_printf(c, "        for (int d = 0; d < %d && w != 0; d++) { int k = (int)(cc %% %d); cc /= %d; int64_t t = (base[d] + xi[d]) * %d + k; w *= tw[t]; off += ti[t]; }\n",
            r, RZ_MAX_TAPS, RZ_MAX_TAPS, RZ_MAX_TAPS);
  sb_printf(c, "        if (w != 0) acc += w * (double)x[off];\n      }\n      y[j] = (%s)acc;\n    }\n", T);
  sb_printf(c, "    free(ti); free(tw); free(te);\n  }\n");
  return ECG_OK;
}

/** Resize / Upsample over static shapes with constant scales/sizes (and roi for
 *  tf_crop_and_resize): y[x] = sum over the taps of the interpolating axes of the
 *  product of their weights times x at the tapped input element. */
/* Resize of a dynamic-shape build (dyn.c): nearest, asymmetric coordinates, floor, whole
 * scales s_d >= 1 on every axis (an FPN's upsampling): output index o reads input index
 * min(o / s_d, in_d - 1) along each axis, over run-time sizes; anything else is refused
 * naming the node. */
static int resize_dyn(ecg_lower *L, const ecg_node *n, const ecg_resize_opts *o, int r, const double *scale, ecg_err *e) {
  int x = n->inputs[0], y = n->outputs[0];
  int64_t s[ECG_MAX_RANK];
  for (int d = 0; d < r; d++) {
    s[d] = (int64_t)scale[d];
    if ((double)s[d] != scale[d] || s[d] < 1)
      return lw_node_err(L, n, e, "a scale that is not a whole number (%g) is not supported with symbolic dims yet", scale[d]);
  }
  if (o->mode != 0 || o->ctm != ECG_RZ_ASYMMETRIC || o->nm != ECG_RZ_FLOOR || r < 1)
    return lw_node_err(L, n, e, "only nearest, asymmetric, floor Resize is supported with symbolic dims yet");
  sbuf *c = &L->code;
  const char *T = lw_ctype(L, y);
  int u = lw_uid(L);
  sb_printf(c, "  {\n    const %s *x = %s;\n", T, lw_ptr(L, x));
  sb_printf(c, "    %s *y = %s;\n", T, lw_ptr(L, y));
  for (int d = 0; d < r; d++) {
    sb_printf(c, "    const int64_t I%d_%d = %s;\n", u, d, lw_dim(L, x, d));
    sb_printf(c, "    const int64_t O%d_%d = %s;\n", u, d, lw_dim(L, y, d));
  }
  sb_printf(c, "    #pragma omp parallel for%s if(%s >= 32768)\n", r > 2 ? " collapse(2)" : "", lw_dim_prod(L, y, 0, r));
  for (int d = 0; d < r - 1; d++) sb_printf(c, "%*sfor (int64_t o%d = 0; o%d < O%d_%d; o%d++)%s\n", 4 + 2 * d, "", d, d, u, d, d,
                                            d == r - 2 ? " {" : "");
  if (r == 1) sb_printf(c, "    {\n");
  int ind = 4 + 2 * (r - 1);
  /* the input row and the output row at the outer coordinates */
  sb_printf(c, "%*sint64_t src = 0, dst = 0;\n", ind, "");
  for (int d = 0; d < r - 1; d++) {
    char in[160]; /* room for every int and long long the two forms print */
    if (s[d] == 1) snprintf(in, sizeof in, "o%d", d);
    else snprintf(in, sizeof in, "(o%d / %lld < I%d_%d ? o%d / %lld : I%d_%d - 1)", d, (long long)s[d], u, d, d, (long long)s[d], u, d);
    sb_printf(c, "%*ssrc = src * I%d_%d + %s; dst = dst * O%d_%d + o%d;\n", ind, "", u, d, in, u, d, d);
  }
  int l = r - 1;
  sb_printf(c, "%*ssrc *= I%d_%d; dst *= O%d_%d;\n", ind, "", u, l, u, l);
  sb_printf(c, "%*sfor (int64_t q = 0; q < O%d_%d; q++) { int64_t i = q / %lld; y[dst + q] = x[src + (i < I%d_%d ? i : I%d_%d - 1)]; }\n",
            ind, "", u, l, (long long)s[l], u, l, u, l);
  sb_printf(c, "    }\n  }\n");
  return ECG_OK;
}

/* The loops of a Resize kernel over output axes 0 .. nd-1 (C: nested for loops, the
 * axis dpar split over the threads; OpenCL: each work-item's coordinates x<d> from its
 * index j), carrying b<d>, the input offset of the single-tap axes so far, and with
 * extrapolation e<d>, whether any axis so far extrapolates; in C then j, the output
 * offset of those axes. The loops are left open (4 + 2 * nd spaces of indentation). */
static void gather_loops(sbuf *c, int u, int nd, const int64_t *od, const int64_t *ost, const int *K, const int *has_ext,
                         int any_ext, int dpar, int cl) {
  sb_printf(c, "    int64_t b_ = 0;\n    int e_ = 0;\n    (void)b_; (void)e_;\n");
  for (int d = 0; d < nd; d++) {
    int ind = 4 + 2 * d;
    char prevb[16], preve[16];
    snprintf(prevb, sizeof prevb, d ? "b%d" : "b_", d - 1);
    snprintf(preve, sizeof preve, d ? "e%d" : "e_", d - 1);
    if (d == dpar) sb_printf(c, "%*s#pragma omp parallel for schedule(static)\n", ind, "");
    if (cl) sb_printf(c, "%*s{ const int64_t x%d = j / %lld %% %lld;\n", ind, "", d, (long long)ost[d], (long long)od[d]);
    else sb_printf(c, "%*sfor (int64_t x%d = 0; x%d < %lld; x%d++) {\n", ind, "", d, d, (long long)od[d], d);
    if (K[d] == 1) sb_printf(c, "%*s  int64_t b%d = %s + rz%d_i%d[x%d];\n", ind, "", d, prevb, u, d, d);
    else sb_printf(c, "%*s  int64_t b%d = %s;\n", ind, "", d, prevb);
    if (any_ext && has_ext[d]) sb_printf(c, "%*s  int e%d = %s | rz%d_e%d[x%d];\n", ind, "", d, preve, u, d, d);
    else if (any_ext) sb_printf(c, "%*s  int e%d = %s;\n", ind, "", d, preve);
  }
  if (!cl) { /* j = sum of x<d> * the output's stride d */
    sb_printf(c, "%*sconst int64_t j = ", 4 + 2 * nd, "");
    for (int d = 0; d < nd; d++) sb_printf(c, "%sx%d * %lld", d ? " + " : "", d, (long long)ost[d]);
    if (nd == 0) sb_printf(c, "0");
    sb_printf(c, ";\n");
  }
}

/* Whether the plane kernel (emit_plane) computes Resize n: C target, float32, a non-empty
 * output (onum elements), no extrapolation, at most 2 taps on the last two axes (one of
 * them interpolating) and one on every other axis. */
static int plane_ok(const ecg_lower *L, const ecg_node *n, int r, const int *K, int any_ext, int64_t onum) {
  if (L->target == LW_TARGET_OPENCL || any_ext || r < 2 || onum <= 0 || L->g->tensors[n->outputs[0]]->dtype != ECG_FLOAT) return 0;
  for (int d = 0; d < r - 2; d++)
    if (K[d] != 1) return 0;
  return K[r - 2] <= 2 && K[r - 1] <= 2 && (K[r - 2] == 2 || K[r - 1] == 2);
}

/* The plane kernel: (bi)linear resizing of the last two axes, separable, in float (as
 * ONNX Runtime computes it): output row oy blends input rows s0, s1 (weights wy0, wy1)
 * and each column blends two input columns; the two taps of each row and column come
 * from tables rz<u>_pi<a> (element offsets: rows times the row stride) and rz<u>_pw<a>
 * (2 per index; a single-tap axis gets weights 1, 0). The leading axes (one tap each)
 * run the generic kernel's loops (gather_loops). The generic per-element gather in double took
 * 0.45 ms at 2 threads for mlsd_320x320_tiny's 2x upsampling of 64x80x80 (ONNX
 * Runtime: 0.10). pti/ptw: the last two axes' taps (RZ_MAX_TAPS per index). */
static void emit_plane(ecg_lower *L, const ecg_node *n, int u, int r, const int *K, const int64_t *od,
                       const int64_t *ost, const int64_t *ist, int64_t iw, int dpar, int64_t *const *pti,
                       double *const *ptw) {
  for (int a = 0; a < 2; a++) {
    const int d = r - 2 + a;
    sb_printf(&L->decls, "static const int64_t rz%d_pi%d[%lld] = {", u, a, (long long)(2 * od[d]));
    for (int64_t x = 0; x < od[d]; x++)
      for (int k = 0; k < 2; k++)
        sb_printf(&L->decls, "%s%lld", x || k ? "," : "", (long long)(pti[a][x * RZ_MAX_TAPS + (K[d] == 2 ? k : 0)] * ist[d]));
    sb_printf(&L->decls, "};\nstatic const float rz%d_pw%d[%lld] = {", u, a, (long long)(2 * od[d]));
    for (int64_t x = 0; x < od[d]; x++)
      for (int k = 0; k < 2; k++) sb_printf(&L->decls, "%s%.9g", x || k ? "," : "", K[d] == 2 ? ptw[a][x * RZ_MAX_TAPS + k] : (double)(k == 0));
    sb_printf(&L->decls, "};\n");
  }
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const float *x = %s;\n    float *y = %s;\n", lw_ptr(L, n->inputs[0]), lw_ptr(L, n->outputs[0]));
  gather_loops(c, u, r - 2, od, ost, K, NULL, 0, dpar, 0);
  const int ind = 4 + 2 * (r - 2), R = r - 2, C = r - 1;
  char lastb[16];
  snprintf(lastb, sizeof lastb, r > 2 ? "b%d" : "b_", r - 3);
  sb_printf(c, "%*sconst float *xb = x + %s;\n", ind, "", lastb);
  if (dpar == R) sb_printf(c, "%*s#pragma omp parallel for schedule(static)\n", ind, "");
  sb_printf(c, "%*sfor (int64_t x%d = 0; x%d < %lld; x%d++) {\n", ind, "", R, R, (long long)od[R], R);
  sb_printf(c, "%*s  const float *s0 = xb + rz%d_pi0[2 * x%d], *s1 = xb + rz%d_pi0[2 * x%d + 1];\n", ind, "", u, R, u, R);
  sb_printf(c, "%*s  const float wy0 = rz%d_pw0[2 * x%d], wy1 = rz%d_pw0[2 * x%d + 1];\n", ind, "", u, R, u, R);
  sb_printf(c, "%*s  float *yr = y + j + x%d * %lld;\n", ind, "", R, (long long)ost[R]);
  const int row = iw <= 4096; /* the rows blended first into a row of iw floats on the stack */
  if (row) sb_printf(c, "%*s  float t_[%lld];\n%*s  for (int64_t i = 0; i < %lld; i++) t_[i] = wy0 * s0[i] + wy1 * s1[i];\n", ind, "",
                     (long long)iw, ind, "", (long long)iw);
  sb_printf(c, "%*s  for (int64_t x%d = 0; x%d < %lld; x%d++) {\n", ind, "", C, C, (long long)od[C], C);
  sb_printf(c, "%*s    const int64_t i0 = rz%d_pi1[2 * x%d], i1 = rz%d_pi1[2 * x%d + 1];\n", ind, "", u, C, u, C);
  sb_printf(c, "%*s    const float wx0 = rz%d_pw1[2 * x%d], wx1 = rz%d_pw1[2 * x%d + 1];\n", ind, "", u, C, u, C);
  if (row) sb_printf(c, "%*s    yr[x%d] = wx0 * t_[i0] + wx1 * t_[i1];\n", ind, "", C);
  else sb_printf(c, "%*s    yr[x%d] = wy0 * (wx0 * s0[i0] + wx1 * s0[i1]) + wy1 * (wx0 * s1[i0] + wx1 * s1[i1]);\n", ind, "", C);
  sb_printf(c, "%*s  }\n%*s}\n", ind, "", ind, "");
  for (int d = r - 3; d >= 0; d--) sb_printf(c, "%*s}\n", 4 + 2 * d, "");
  sb_printf(c, "  }\n");
}

int emit_resize(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], ist[ECG_MAX_RANK], axes[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  lw_strides(r, id, ist);
  if (lw_half(L, n->inputs[0])) return lw_node_err(L, n, e, "float16/bfloat16 is not supported");
  /* the tap tables: file-scope constants (C) or program-scope __constant (OpenCL C), in
   * double, or in ecg_dbl (model.cl's prelude: float where the device lacks fp64) */
  const char *TQ = L->target == LW_TARGET_OPENCL ? "__constant" : "static const";
  const char *DT = L->target == LW_TARGET_OPENCL ? "ecg_dbl" : "double";
  int is_upsample = lw_op(n) == ECG_OP_Upsample;
  int legacy = is_upsample || (n->opset > 0 && n->opset < 11);
  ecg_resize_opts o;
  char mode[32], ctm[40], nm[40];
  ecg_attr_s(n, "mode", "nearest", mode, sizeof mode);
  ecg_attr_s(n, "coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel", ctm, sizeof ctm);
  ecg_attr_s(n, "nearest_mode", legacy ? "floor" : "round_prefer_floor", nm, sizeof nm);
  o.mode = !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "linear") || !strcmp(mode, "bilinear") ? 1 : !strcmp(mode, "cubic") ? 2 : -1;
  if (o.mode < 0) return lw_node_err(L, n, e, "mode is not supported (nearest, linear, cubic)");
  if (legacy && o.mode == 2) return lw_node_err(L, n, e, "cubic mode is not supported before Resize-11");
  static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                                     "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  o.ctm = o.nm = -1;
  for (int k = 0; k < (int)(sizeof ctms / sizeof *ctms); k++) if (!strcmp(ctm, ctms[k])) o.ctm = k;
  for (int k = 0; k < (int)(sizeof nms / sizeof *nms); k++) if (!strcmp(nm, nms[k])) o.nm = k;
  if (o.ctm < 0) return lw_node_err(L, n, e, "coordinate_transformation_mode is not supported");
  if (o.nm < 0) return lw_node_err(L, n, e, "nearest_mode is not supported");
  if (ecg_attr_i(n, "antialias", 0)) return lw_node_err(L, n, e, "antialias is not supported");
  o.cubic_a = ecg_attr_f(n, "cubic_coeff_a", -0.75f);
  o.exclude_outside = ecg_attr_i(n, "exclude_outside", 0) != 0;
  int crop = o.ctm == ECG_RZ_TF_CROP_AND_RESIZE;
  int isf = ecg_dtype_is_float(L->g->tensors[n->inputs[0]]->dtype);
  if (!isf && (o.mode == 2 || crop)) return lw_node_err(L, n, e, "cubic mode and tf_crop_and_resize on integer tensors are not supported");
  const int64_t *aa;
  int na = ecg_attr_ints(n, "axes", &aa);
  if (na > r) return lw_node_err(L, n, e, "too many axes");
  for (int k = 0; k < na; k++) {
    int ax = lw_axis(aa[k], r);
    if (ax < 0) return lw_node_err(L, n, e, "axis out of range");
    axes[k] = ax;
  }
  int64_t on = 1;
  for (int d = 0; d < r; d++) on *= od[d];
  for (int d = 0; d < r && on > 0; d++)
    if (id[d] == 0) return lw_node_err(L, n, e, "resizing an empty axis to a non-empty one is not supported");
  {
    int si = legacy ? 1 : 2;
    const ecg_tensor *st = (size_t)si < n->n_inputs && n->inputs[si] >= 0 ? L->g->tensors[n->inputs[si]] : NULL;
    const ecg_tensor *rt = crop && n->n_inputs > 1 && n->inputs[1] >= 0 ? L->g->tensors[n->inputs[1]] : NULL;
    if (!ecg_attr_find(n, "scales") && ((st && !st->is_const && ecg_tensor_numel(st) > 0) || (rt && !rt->is_const))) {
      char pol[32];
      ecg_attr_s(n, "keep_aspect_ratio_policy", "stretch", pol, sizeof pol);
      if (strcmp(pol, "stretch")) return lw_node_err(L, n, e, "keep_aspect_ratio_policy with run-time operands is not supported");
      return L->target == LW_TARGET_OPENCL ? lw_node_err(L, n, e, "--target opencl needs constant scales, sizes and roi")
             : lw_node_dyn(L, n)            ? lw_node_err(L, n, e, "run-time scales are not supported with symbolic dims yet")
                                            : emit_resize_runtime(L, n, &o, r, id, od, ist, axes, na, si, crop);
    }
  }
  double scale[ECG_MAX_RANK], r0[ECG_MAX_RANK], r1[ECG_MAX_RANK];
  int resized[ECG_MAX_RANK];
  if (get_scales(L, n, r, id, od, legacy, scale, resized, axes, na))
    return lw_node_err(L, n, e, "scales do not match the axes: not supported");
  for (int d = 0; d < r; d++) {
    r0[d] = 0;
    r1[d] = 1;
    if (!(scale[d] > 0)) return lw_node_err(L, n, e, "a non-positive scale is not supported");
  }
  if (lw_node_dyn(L, n)) {
    if (!ecg_attr_find(n, "scales") && !const_input(L, n, legacy ? 1 : 2))
      return lw_node_err(L, n, e, "a Resize by sizes is not supported with symbolic dims yet (constant scales are)");
    return resize_dyn(L, n, &o, r, scale, e);
  }
  if (crop) {
    const ecg_tensor *roi = const_input(L, n, 1);
    int cnt = na < 0 ? r : na;
    if (!roi) return lw_node_err(L, n, e, "tf_crop_and_resize without a roi is not supported");
    if (ecg_tensor_numel(roi) != 2 * cnt) return lw_node_err(L, n, e, "roi length does not match the axes: not supported");
    for (int k = 0; k < cnt; k++) {
      int d = na < 0 ? k : (int)axes[k];
      r0[d] = ecg_const_f64(roi, k);
      r1[d] = ecg_const_f64(roi, cnt + k);
    }
  }
  /* tables: taps per axis; the last two axes' taps are kept for the plane kernel below */
  int u = lw_uid(L), K[ECG_MAX_RANK], has_ext[ECG_MAX_RANK];
  int64_t *pti[2] = {NULL, NULL};
  double *ptw[2] = {NULL, NULL};
  sbuf tail = {0}; /* the last two axes' tables, which the plane kernel does not read */
  for (int d = 0; d < r; d++) {
    sbuf *td = d >= r - 2 ? &tail : &L->decls;
    int64_t *ti = malloc(sizeof(int64_t) * (size_t)(od[d] * RZ_MAX_TAPS + 1));
    double *tw = malloc(sizeof(double) * (size_t)(od[d] * RZ_MAX_TAPS + 1));
    unsigned char *te = calloc((size_t)od[d] + 1, 1);
    if (!ti || !tw || !te) {
      free(ti); free(tw); free(te);
      free(pti[0]); free(pti[1]); free(ptw[0]); free(ptw[1]);
      sb_free(&tail);
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
      double xo = ecg_rt1_resize_coord(&o, x, id[d], od[d], scale[d], r0[d], r1[d], &outside);
      int kk = ecg_rt1_resize_taps(&o, xo, id[d], ti + x * RZ_MAX_TAPS, tw + x * RZ_MAX_TAPS);
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
    sb_printf(td, "%s int64_t rz%d_i%d[%lld] = {", TQ, u, d, (long long)(od[d] * K[d] > 0 ? od[d] * K[d] : 1));
    for (int64_t x = 0; x < od[d]; x++)
      for (int k = 0; k < K[d]; k++) sb_printf(td, "%s%lld", x || k ? "," : "", (long long)(ti[x * RZ_MAX_TAPS + k] * ist[d]));
    if (od[d] == 0) sb_printf(td, "0");
    sb_printf(td, "};\n");
    if (K[d] > 1) {
      sb_printf(td, "%s %s rz%d_w%d[%lld] = {", TQ, DT, u, d, (long long)(od[d] * K[d]));
      for (int64_t x = 0; x < od[d]; x++)
        for (int k = 0; k < K[d]; k++) sb_printf(td, "%s%.17g", x || k ? "," : "", tw[x * RZ_MAX_TAPS + k]);
      sb_printf(td, "};\n");
    }
    if (has_ext[d]) {
      sb_printf(td, "%s unsigned char rz%d_e%d[%lld] = {", TQ, u, d, (long long)od[d]);
      for (int64_t x = 0; x < od[d]; x++) sb_printf(td, "%s%d", x ? "," : "", te[x]);
      sb_printf(td, "};\n");
    }
    if (d >= r - 2) { /* kept (freed after the kernel) */
      pti[d - (r - 2)] = ti;
      ptw[d - (r - 2)] = tw;
      ti = NULL;
      tw = NULL;
    }
    free(ti); free(tw); free(te);
  }
  /* kernel: loops over the output; b<d> is the offset of the single-tap axes so far,
   * e<d> whether any axis so far extrapolates */
  const char *T = lw_ctype(L, n->outputs[0]);
  int any_ext = 0, n_int = 0;
  for (int d = 0; d < r; d++) { any_ext |= has_ext[d]; n_int += K[d] > 1; }
  sbuf *c = &L->code;
  /* C: one loop nest over the output, each element's index j from its coordinates, the
   * first axis longer than 1 (the channels of an image) split over the threads where the
   * output has at least 32768 elements (M-LSD's bilinear 2x upsamplings of 64x80x80 and
   * 16x160x160: 0.86 ms each at 1 and at 2 threads before); OpenCL: the output elements
   * over the work-items (lw_par_for), each recovering its coordinates x<d> from j */
  int cl = L->target == LW_TARGET_OPENCL;
  int64_t ost[ECG_MAX_RANK], onum = lw_strides(r, od, ost);
  int dpar = -1;
  for (int d = 0; d < r && !cl && onum >= 32768; d++)
    if (od[d] > 1) { dpar = d; break; }
  const int plane = plane_ok(L, n, r, K, any_ext, onum);
  if (plane) emit_plane(L, n, u, r, K, od, ost, ist, id[r - 1], dpar, pti, ptw);
  else if (tail.len) sb_printf(&L->decls, "%s", tail.s);
  if (tail.oom) L->decls.oom = 1;
  sb_free(&tail);
  free(pti[0]); free(pti[1]); free(ptw[0]); free(ptw[1]);
  if (plane) return ECG_OK;
  sb_printf(c, "  {\n    %sconst %s *x = %s;\n", lw_gq(L), T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %s%s *y = %s;\n", lw_gq(L), T, lw_ptr(L, n->outputs[0]));
  if (cl) lw_par_for(L, 4, "j", onum, onum, 0);
  gather_loops(c, u, r, od, ost, K, has_ext, any_ext, dpar, cl);
  int ind = 4 + 2 * r;
  if (any_ext) sb_printf(c, "%*sif (e%d) { y[j] = (%s)%.9g; continue; }\n", ind, "", r - 1, T, ecg_attr_f(n, "extrapolation_value", 0.0f));
  if (n_int == 0) sb_printf(c, "%*sy[j] = x[b%d];\n", ind, "", r - 1);
  else {
    sb_printf(c, "%*s%s acc = 0;\n", ind, "", DT);
    int depth = 0;
    char wprev[16] = "1.0", oprev[16];
    snprintf(oprev, sizeof oprev, "b%d", r - 1);
    for (int d = 0; d < r; d++) {
      if (K[d] <= 1) continue;
      int in2 = ind + 2 * depth;
      sb_printf(c, "%*sfor (int t%d = 0; t%d < %d; t%d++) {\n", in2, "", d, d, K[d], d);
      sb_printf(c, "%*s  %s w%d = %s * rz%d_w%d[x%d * %d + t%d];\n", in2, "", DT, d, wprev, u, d, d, K[d], d);
      sb_printf(c, "%*s  int64_t o%d = %s + rz%d_i%d[x%d * %d + t%d];\n", in2, "", d, oprev, u, d, d, K[d], d);
      snprintf(wprev, sizeof wprev, "w%d", d);
      snprintf(oprev, sizeof oprev, "o%d", d);
      depth++;
    }
    sb_printf(c, "%*sacc += %s * (%s)x[%s];\n", ind + 2 * depth, "", wprev, DT, oprev);
    for (int k = depth - 1; k >= 0; k--) sb_printf(c, "%*s}\n", ind + 2 * k, "");
    sb_printf(c, "%*sy[j] = (%s)acc;\n", ind, "", T);
  }
  for (int d = r - 1; d >= 0; d--) sb_printf(c, "%*s}\n", 4 + 2 * d, "");
  sb_printf(c, "  }\n%s", cl ? "  }\n" : "");
  return ECG_OK;
}
