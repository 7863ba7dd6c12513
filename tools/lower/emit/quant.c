/* Emitters for the quantization operators.
 *
 * One-to-One (DNNFusion Table 3.2): QuantizeLinear and DequantizeLinear are elementwise
 * maps (lw_emit_map) whose scale and zero point broadcast per tensor or, viewed as
 * [C, 1, ..., 1], per axis.  QuantizeLinear divides in the scale's precision, rounds
 * half to even (nearbyint in the default rounding mode), adds the zero point and
 * saturates to the output type's range.
 *
 * Many-to-Many: DynamicQuantizeLinear (global min/max, then quantize), MatMulInteger
 * and QLinearMatMul (numpy matmul broadcasting), ConvInteger and QLinearConv (1-D and
 * 2-D, pads/auto_pad, strides, dilations, group) as direct loops accumulating
 * (x - x_zero_point) * (w - w_zero_point) in int32; the QLinear forms requantize with
 * the float32 multiplier a_scale * b_scale / y_scale applied in double.
 * float16 operands are refused by the lowering before these emitters run. */
#include <stdlib.h>
#include <string.h>

#include "emit.h"


/* Tensor id of input i (-1 when omitted). */
static int in_id(const ecg_node *n, size_t i) { return i < n->n_inputs ? n->inputs[i] : -1; }

static int dtype_of(const ecg_lower *L, int id) { return L->g->tensors[id]->dtype; }

static int64_t numel_of(const ecg_lower *L, int id) { return id < 0 ? 1 : ecg_tensor_numel(L->g->tensors[id]); }

/* Saturation bounds (C literals) of a quantized output dtype; 0 when not one. */
static int q_bounds(int dt, const char **lo, const char **hi) {
  switch (dt) {
  case ECG_UINT8: *lo = "0.0"; *hi = "255.0"; return 1;
  case ECG_INT8: *lo = "-128.0"; *hi = "127.0"; return 1;
  case ECG_UINT16: *lo = "0.0"; *hi = "65535.0"; return 1;
  case ECG_INT16: *lo = "-32768.0"; *hi = "32767.0"; return 1;
  case ECG_INT32: *lo = "-2147483648.0"; *hi = "2147483647.0"; return 1;
  default: return 0;
  }
}

static int is_int8(int dt) { return dt == ECG_INT8 || dt == ECG_UINT8; }

/* ---------------------------------------------------------------- Quantize / Dequantize */

/** QuantizeLinear / DequantizeLinear: y[i] = saturate(round(x[i] / s[c]) + z[c]) or
 *  y[i] = (x[i] - z[c]) * s[c], c the index along axis for per-axis parameters (1-D
 *  [D_axis]), 0 for per-tensor ones (one element). */
int emit_quantize(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int deq = lw_op(n) == ECG_OP_DequantizeLinear;
  int x = in_id(n, 0), s = in_id(n, 1), z = in_id(n, 2), y = n->outputs[0];
  int sdt = dtype_of(L, s);
  if (sdt != ECG_FLOAT && sdt != ECG_DOUBLE) return lw_node_err(L, n, e, "scale dtype %s is not supported", ecg_dtype_name(sdt));
  const char *lo = NULL, *hi = NULL;
  if (deq) {
    int xdt = dtype_of(L, x);
    if (!is_int8(xdt) && xdt != ECG_INT32 && xdt != ECG_INT16 && xdt != ECG_UINT16)
      return lw_node_err(L, n, e, "input dtype %s is not supported", ecg_dtype_name(xdt));
  } else {
    if (!q_bounds(dtype_of(L, y), &lo, &hi)) return lw_node_err(L, n, e, "output dtype %s is not supported", ecg_dtype_name(dtype_of(L, y)));
    int xdt = dtype_of(L, x);
    if (xdt != ECG_FLOAT && xdt != ECG_DOUBLE && xdt != ECG_INT32)
      return lw_node_err(L, n, e, "input dtype %s is not supported", ecg_dtype_name(xdt));
  }
  int64_t xd[ECG_MAX_RANK], sd[ECG_MAX_RANK];
  int r = lw_dims(L, x, xd), sr = lw_dims(L, s, sd);
  if (sr > 1) return lw_node_err(L, n, e, "blocked quantization is not supported");
  int ids[3] = {x, s, z}, rank[3];
  int64_t dims[3][ECG_MAX_RANK];
  memcpy(dims[0], xd, sizeof xd);
  rank[0] = r;
  int64_t sn = numel_of(L, s);
  for (int k = 1; k < 3; k++) {
    rank[k] = 0; /* per tensor: a broadcast scalar */
    if (sn > 1) { /* per axis: [C] viewed as [C, 1, ..., 1] */
      int axis = lw_axis(ecg_attr_i(n, "axis", 1), r);
      if (axis < 0 || xd[axis] != sn) return lw_node_err(L, n, e, "per-axis parameters do not match the axis");
      rank[k] = r - axis;
      for (int d = 0; d < r - axis; d++) dims[k][d] = d == 0 ? sn : 1;
    }
  }
  if (z >= 0 && numel_of(L, z) != sn) return lw_node_err(L, n, e, "scale and zero point differ in size");
  const char *S = lw_ctype(L, s);
  char t[512];
  if (deq)
    snprintf(t, sizeof t, "((%s)((int64_t)$0%s) * $1)", S, z >= 0 ? " - (int64_t)$2" : "");
  else
    snprintf(t, sizeof t, "fmin(fmax((double)nearbyint((%s)$0 / $1)%s, %s), %s)", S, z >= 0 ? " + (double)$2" : "", lo, hi);
  if (lw_emit_map(L, y, z >= 0 ? 3 : 2, ids, dims, rank, t, 0, 0) != 0)
    return ecg_errf(e, ECG_ERR_INTERNAL, "bad quantize template");
  return ECG_OK;
}

/** DynamicQuantizeLinear: x float32 [D...] -> y uint8, y_scale = (max(x, 0) - min(x, 0))
 *  / 255, y_zero_point = round(clip(-min(x, 0) / y_scale, 0, 255)) (float32 steps of the
 *  ONNX function body); an all-zero x gives scale 1 (as ONNX Runtime), y = 0, zero point 0. */
int emit_dynamic_quantize(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int x = in_id(n, 0);
  if (dtype_of(L, x) != ECG_FLOAT) return lw_node_err(L, n, e, "input dtype %s is not supported", ecg_dtype_name(dtype_of(L, x)));
  int ys = n->n_outputs > 1 ? n->outputs[1] : -1, yz = n->n_outputs > 2 ? n->outputs[2] : -1;
  int64_t cnt = numel_of(L, x);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const float *x = %s;\n    uint8_t *y = %s;\n", lw_ptr(L, x), lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    float mn = 0.0f, mx = 0.0f;\n");
  sb_printf(c, "    for (int64_t i = 0; i < %lld; i++) { float v = x[i]; mn = v < mn ? v : mn; mx = v > mx ? v : mx; }\n", (long long)cnt);
  sb_printf(c, "    float sc = mx == mn ? 1.0f : (mx - mn) / 255.0f;\n");
  sb_printf(c, "    float zf = 0.0f - mn / sc;\n    zf = nearbyintf(zf < 0.0f ? 0.0f : zf > 255.0f ? 255.0f : zf);\n");
  sb_printf(c, "    for (int64_t i = 0; i < %lld; i++) {\n", (long long)cnt);
  sb_printf(c, "      float q = nearbyintf(x[i] / sc) + zf;\n");
  sb_printf(c, "      y[i] = (uint8_t)(q > 0.0f ? (q < 255.0f ? q : 255.0f) : 0.0f);\n    }\n");
  if (ys >= 0) sb_printf(c, "    %s[0] = sc;\n", lw_ptr(L, ys));
  if (yz >= 0) sb_printf(c, "    %s[0] = (uint8_t)zf;\n", lw_ptr(L, yz));
  sb_printf(c, "  }\n");
  return ECG_OK;
}

/* ---------------------------------------------------------------- shared pieces */

/* C expression for element `idx` of per-tensor / per-something parameter tensor id
 * (id < 0: the literal def): "p[0]" when it has one element, else "p[idx]". */
static void param_expr(ecg_lower *L, int id, const char *idx, const char *def, char *out, size_t n_out) {
  if (id < 0) snprintf(out, n_out, "%s", def);
  else if (numel_of(L, id) == 1) snprintf(out, n_out, "%s[0]", lw_ptr(L, id));
  else snprintf(out, n_out, "%s[%s]", lw_ptr(L, id), idx);
}

/* Check parameter tensor id (may be -1) has one element or, when `along` > 0, exactly
 * `along` elements in a 1-D tensor; what names it in the error. */
static int check_param(ecg_lower *L, const ecg_node *n, int id, int64_t along, int float_ok, const char *what, ecg_err *e) {
  if (id < 0) return ECG_OK;
  int dt = dtype_of(L, id);
  if (float_ok ? dt != ECG_FLOAT : !is_int8(dt)) return lw_node_err(L, n, e, "%s dtype is not supported", what);
  int64_t cnt = numel_of(L, id);
  if (cnt == 1) return ECG_OK;
  if (along > 0 && cnt == along && ecg_tensor_rank(L->g->tensors[id]) == 1) return ECG_OK;
  return lw_node_err(L, n, e, "this shape of %s is not supported", what);
}

/* ---------------------------------------------------------------- MatMul family */

/** MatMulInteger (A, B, a_zero_point, b_zero_point -> int32) and QLinearMatMul (a, a_scale,
 *  a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point -> int8/uint8): batch dims
 *  broadcast; zero points and scales per tensor, per row of A (a, y) or per column of B. */
int emit_matmul_integer(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int ql = lw_op(n) == ECG_OP_QLinearMatMul;
  int a = in_id(n, 0), b = in_id(n, ql ? 3 : 1), y = n->outputs[0];
  int az = in_id(n, 2), bz = in_id(n, ql ? 5 : 3);
  int as = ql ? in_id(n, 1) : -1, bs = ql ? in_id(n, 4) : -1, ys = ql ? in_id(n, 6) : -1, yz = ql ? in_id(n, 7) : -1;
  if (!is_int8(dtype_of(L, a)) || !is_int8(dtype_of(L, b))) return lw_node_err(L, n, e, "operand dtypes other than int8/uint8 are not supported");
  const char *lo = NULL, *hi = NULL;
  if (ql ? !is_int8(dtype_of(L, y)) || !q_bounds(dtype_of(L, y), &lo, &hi) : dtype_of(L, y) != ECG_INT32)
    return lw_node_err(L, n, e, "output dtype %s is not supported", ecg_dtype_name(dtype_of(L, y)));
  int64_t ad[ECG_MAX_RANK + 1], bd[ECG_MAX_RANK + 1], obd[ECG_MAX_RANK], sa[ECG_MAX_RANK], sb[ECG_MAX_RANK];
  int ra = lw_dims(L, a, ad), rb = lw_dims(L, b, bd);
  if (ra < 1 || rb < 1) return lw_node_err(L, n, e, "scalar operands are not supported");
  int64_t M = ra == 1 ? 1 : ad[ra - 2], K = ad[ra - 1], N = rb == 1 ? 1 : bd[rb - 1];
  int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
  int br = ecg_broadcast_shape(nba, ad, nbb, bd, obd);
  if (br < 0) return lw_node_err(L, n, e, "batch dims do not broadcast");
  lw_bcast_strides(br, obd, nba, ad, sa);
  lw_bcast_strides(br, obd, nbb, bd, sb);
  int64_t nb = 1;
  for (int d = 0; d < br; d++) nb *= obd[d];
  ECG_TRY(check_param(L, n, az, M, 0, "a_zero_point", e));
  ECG_TRY(check_param(L, n, bz, N, 0, "b_zero_point", e));
  if (ql) {
    ECG_TRY(check_param(L, n, as, M, 1, "a_scale", e));
    ECG_TRY(check_param(L, n, bs, N, 1, "b_scale", e));
    ECG_TRY(check_param(L, n, ys, M, 1, "y_scale", e));
    ECG_TRY(check_param(L, n, yz, M, 0, "y_zero_point", e));
  }
  char za[200], zb[200], sA[200], sB[200], sY[200], zY[200];
  param_expr(L, az, "i", "0", za, sizeof za);
  param_expr(L, bz, "j", "0", zb, sizeof zb);
  param_expr(L, as, "i", "1.0f", sA, sizeof sA);
  param_expr(L, bs, "j", "1.0f", sB, sizeof sB);
  param_expr(L, ys, "i", "1.0f", sY, sizeof sY);
  param_expr(L, yz, "i", "0", zY, sizeof zY);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *a = %s;\n", lw_ctype(L, a), lw_ptr(L, a));
  sb_printf(c, "    const %s *b = %s;\n", lw_ctype(L, b), lw_ptr(L, b));
  sb_printf(c, "    %s *y = %s;\n", lw_ctype(L, y), lw_ptr(L, y));
  sb_printf(c, "    for (int64_t bi = 0; bi < %lld; bi++) {\n      int64_t rem = bi, ao = 0, bo = 0;\n", (long long)nb);
  for (int d = br - 1; d >= 0; d--)
    sb_printf(c, "      { int64_t q = rem %% %lld; rem /= %lld; ao += q * %lld; bo += q * %lld; }\n", (long long)obd[d],
              (long long)obd[d], (long long)(sa[d] * M * K), (long long)(sb[d] * K * N));
  sb_printf(c, "      const %s *A = a + ao;\n      const %s *B = b + bo;\n", lw_ctype(L, a), lw_ctype(L, b));
  sb_printf(c, "      %s *Y = y + bi * %lld;\n", lw_ctype(L, y), (long long)(M * N));
  sb_printf(c, "      for (int64_t i = 0; i < %lld; i++) {\n        const int32_t za = (int32_t)%s;\n", (long long)M, za);
  if (ql) sb_printf(c, "        const float sa = %s, sy = %s;\n        const double zy = (double)%s;\n", sA, sY, zY);
  sb_printf(c, "        for (int64_t j = 0; j < %lld; j++) {\n          const int32_t zb = (int32_t)%s;\n          int32_t acc = 0;\n", (long long)N, zb);
  sb_printf(c, "          for (int64_t k = 0; k < %lld; k++) acc += ((int32_t)A[i * %lld + k] - za) * ((int32_t)B[k * %lld + j] - zb);\n",
            (long long)K, (long long)K, (long long)N);
  if (ql) {
    sb_printf(c, "          const float mult = sa * %s / sy;\n", sB);
    sb_printf(c, "          Y[i * %lld + j] = (%s)fmin(fmax(nearbyint((double)acc * (double)mult) + zy, %s), %s);\n", (long long)N,
              lw_ctype(L, y), lo, hi);
  } else {
    sb_printf(c, "          Y[i * %lld + j] = acc;\n", (long long)N);
  }
  sb_printf(c, "        }\n      }\n    }\n  }\n");
  return ECG_OK;
}

/* ---------------------------------------------------------------- Conv family */

/** ConvInteger (x, w, x_zero_point, w_zero_point -> int32) and QLinearConv (x, x_scale,
 *  x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B -> int8/uint8):
 *  direct loops; padding contributes nothing (it holds the zero point); w_zero_point
 *  and w_scale per tensor or per output channel [M]. */
int emit_conv_integer(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int ql = lw_op(n) == ECG_OP_QLinearConv;
  int x = in_id(n, 0), w = in_id(n, ql ? 3 : 1), y = n->outputs[0];
  int xz = in_id(n, 2), wz = in_id(n, ql ? 5 : 3);
  int xs = ql ? in_id(n, 1) : -1, ws = ql ? in_id(n, 4) : -1, ys = ql ? in_id(n, 6) : -1, yz = ql ? in_id(n, 7) : -1;
  int bias = ql ? in_id(n, 8) : -1;
  if (!is_int8(dtype_of(L, x)) || !is_int8(dtype_of(L, w))) return lw_node_err(L, n, e, "operand dtypes other than int8/uint8 are not supported");
  const char *lo = NULL, *hi = NULL;
  if (ql ? !is_int8(dtype_of(L, y)) || !q_bounds(dtype_of(L, y), &lo, &hi) : dtype_of(L, y) != ECG_INT32)
    return lw_node_err(L, n, e, "output dtype %s is not supported", ecg_dtype_name(dtype_of(L, y)));
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, x, xd);
  lw_dims(L, y, od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, s, d, p));
  int64_t group = gm.group, M = gm.m, CG = gm.c / gm.group;
  ECG_TRY(check_param(L, n, xz, 0, 0, "x_zero_point", e));
  ECG_TRY(check_param(L, n, wz, M, 0, "w_zero_point", e));
  if (ql) {
    ECG_TRY(check_param(L, n, xs, 0, 1, "x_scale", e));
    ECG_TRY(check_param(L, n, ws, M, 1, "w_scale", e));
    ECG_TRY(check_param(L, n, ys, 0, 1, "y_scale", e));
    ECG_TRY(check_param(L, n, yz, 0, 0, "y_zero_point", e));
    if (bias >= 0 && (dtype_of(L, bias) != ECG_INT32 || numel_of(L, bias) != M))
      return lw_node_err(L, n, e, "this bias is not supported (needs int32 [M])");
  }
  int64_t H = r == 4 ? xd[2] : 1, W = xd[r - 1], OH = r == 4 ? od[2] : 1, OW = od[r - 1], C = xd[1], NB = xd[0];
  char zx[200], zw[200], sx[200], sw[200], sy[200], zy[200];
  param_expr(L, xz, "0", "0", zx, sizeof zx);
  param_expr(L, wz, "m", "0", zw, sizeof zw);
  param_expr(L, xs, "0", "1.0f", sx, sizeof sx);
  param_expr(L, ws, "m", "1.0f", sw, sizeof sw);
  param_expr(L, ys, "0", "1.0f", sy, sizeof sy);
  param_expr(L, yz, "0", "0", zy, sizeof zy);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", lw_ctype(L, x), lw_ptr(L, x));
  sb_printf(c, "    const %s *w = %s;\n", lw_ctype(L, w), lw_ptr(L, w));
  sb_printf(c, "    %s *y = %s;\n", lw_ctype(L, y), lw_ptr(L, y));
  if (bias >= 0) sb_printf(c, "    const int32_t *bias = %s;\n", lw_ptr(L, bias));
  sb_printf(c, "    const int32_t zx = (int32_t)%s;\n", zx);
  sb_printf(c, "    #pragma omp parallel for collapse(2) if(%lld > 65536)\n", (long long)(NB * M * OH * OW * CG * k[0] * k[1]));
  sb_printf(c, "    for (int64_t nn = 0; nn < %lld; nn++)\n    for (int64_t m = 0; m < %lld; m++) {\n", (long long)NB, (long long)M);
  sb_printf(c, "      const int32_t zw = (int32_t)%s;\n", zw);
  sb_printf(c, "      const %s *xg = x + (nn * %lld + (m / %lld) * %lld) * %lld;\n", lw_ctype(L, x), (long long)C,
            (long long)(M / group), (long long)CG, (long long)(H * W));
  sb_printf(c, "      const %s *wm = w + m * %lld;\n", lw_ctype(L, w), (long long)(CG * k[0] * k[1]));
  sb_printf(c, "      %s *ym = y + (nn * %lld + m) * %lld;\n", lw_ctype(L, y), (long long)M, (long long)(OH * OW));
  if (ql) sb_printf(c, "      const float mult = %s * %s / %s;\n      const double zy = (double)%s;\n", sx, sw, sy, zy);
  sb_printf(c, "      for (int64_t oh = 0; oh < %lld; oh++)\n      for (int64_t ow = 0; ow < %lld; ow++) {\n", (long long)OH, (long long)OW);
  sb_printf(c, "        int32_t acc = %s;\n", bias >= 0 ? "bias[m]" : "0");
  sb_printf(c, "        for (int64_t ci = 0; ci < %lld; ci++)\n", (long long)CG);
  sb_printf(c, "        for (int64_t kh = 0; kh < %lld; kh++) {\n          int64_t ih = oh * %lld - %lld + kh * %lld;\n",
            (long long)k[0], (long long)s[0], (long long)p[0], (long long)d[0]);
  sb_printf(c, "          if (ih < 0 || ih >= %lld) continue;\n", (long long)H);
  sb_printf(c, "          for (int64_t kw = 0; kw < %lld; kw++) {\n            int64_t iw = ow * %lld - %lld + kw * %lld;\n",
            (long long)k[1], (long long)s[1], (long long)p[1], (long long)d[1]);
  sb_printf(c, "            if (iw < 0 || iw >= %lld) continue;\n", (long long)W);
  sb_printf(c, "            acc += ((int32_t)xg[ci * %lld + ih * %lld + iw] - zx) * ((int32_t)wm[(ci * %lld + kh) * %lld + kw] - zw);\n",
            (long long)(H * W), (long long)W, (long long)k[0], (long long)k[1]);
  sb_printf(c, "          }\n        }\n");
  if (ql)
    sb_printf(c, "        ym[oh * %lld + ow] = (%s)fmin(fmax(nearbyint((double)acc * (double)mult) + zy, %s), %s);\n", (long long)OW,
              lw_ctype(L, y), lo, hi);
  else
    sb_printf(c, "        ym[oh * %lld + ow] = acc;\n", (long long)OW);
  sb_printf(c, "      }\n    }\n  }\n");
  return ECG_OK;
}
