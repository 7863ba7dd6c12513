/* ecg-lower --target opencl: the OpenCL printer (issue 14, item 1).
 *
 * The lowering is the C back end's (kernels.c: one kernel per fusion block, DNNFusion §3.4.3;
 * the static memory plan; the weights blob); only the printing differs:
 *  - every kernel is `__kernel void k<p>(ECG_CL_ARGS)` over three kinds of device buffer: the
 *    arena A (the intermediates at their planned offsets), the weights W, and io<k> (the
 *    graph inputs then outputs); lw_ptr() names them, lw_gq() qualifies pointers __global;
 *  - the index-map kernels (One-to-One blocks, Transpose, Concat, Split, copies) come from
 *    their own emitters: lw_loops() prints their index space as a grid-stride loop over
 *    get_global_id(0) (loops.c), DNNFusion §3.4.4;
 *  - Conv (direct, NCHW), Gemm, MatMul and pooling, which the C back end hands to the
 *    runtime library, have OpenCL loop nests here (one work-item per output element); a
 *    fusion block's One-to-One epilogue (block.c lw_emit_epilogue) is a device function
 *    they call on each element they store, so fused blocks stay one kernel;
 *  - the host file model.c creates the context and an in-order queue on device
 *    ECG_CL_DEVICE, builds the program (model.cl, embedded) once, uploads weights.bin once,
 *    enqueues the kernels in order with no host round-trip between them and reads the
 *    outputs back at the end. It links only the ICD loader (-lOpenCL).
 * What the printer cannot express (other operators, row-reduction and intensive-fusion
 * blocks, float16) is refused by ecg_lower_dir with the node and op named.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "emit/emit.h"

/* The kernel arguments every kernel and epilogue takes, and how a kernel passes them on. */
static void cl_args(int n_io, sbuf *b) {
  sb_printf(b, "#define ECG_CL_ARGS __global uchar *A, __global const uchar *W");
  for (int k = 0; k < n_io; k++) sb_printf(b, ", __global uchar *io%d", k);
  sb_printf(b, "\n#define ECG_CL_PASS A, W");
  for (int k = 0; k < n_io; k++) sb_printf(b, ", io%d", k);
  sb_printf(b, "\n");
}

static int all_float32(const ecg_lower *L, const ecg_node *n) {
  for (size_t k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] >= 0 && L->g->tensors[n->inputs[k]]->dtype != ECG_FLOAT) return 0;
  for (size_t k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] >= 0 && L->g->tensors[n->outputs[k]]->dtype != ECG_FLOAT) return 0;
  return 1;
}

/* After `y[g] = acc;` in a kernel's element loop: the fusion block's epilogue on that element. */
static void cl_epilogue_call(ecg_lower *L, const char *elem) {
  if (!L->epi_act) return;
  L->epi_used = 1;
  sb_printf(&L->code, "    %s(%s, 1, ECG_CL_PASS);\n", L->epi_act, elem);
}

/* The opening of a grid-stride loop over `total` output elements, index g<u>. */
static int cl_loop_open(ecg_lower *L, int64_t total) {
  int u = lw_uid(L);
  lw_cl_work(L, total);
  sb_printf(&L->code, "  for (int64_t g%d = get_global_id(0); g%d < %lld; g%d += get_global_size(0)) {\n", u, u, (long long)total, u);
  return u;
}

/* The closing of a grid-stride loop whose element was just stored at elem (a printf
 * format taking u, e.g. "y + g%d"): the block's epilogue on it, then the brace. */
static int cl_loop_close(ecg_lower *L, const char *elem, int u) {
  char el[32];
  snprintf(el, sizeof el, elem, u);
  cl_epilogue_call(L, el);
  sb_printf(&L->code, "  }\n");
  return ECG_OK;
}

/* The window geometry of a 1-D or 2-D NCHW Conv or pooling node (lw_geom_2d): input and
 * output dims, H and W (1 and the length for 1-D), kernel k, strides s, dilations d, pads p
 * (top, left, bottom, right). Float32 only; else ECG_ERR_INPUT naming the node and `what`. */
typedef struct {
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], s[2], d[2], p[4], H, W, OH, OW;
  ecg_conv_geom gm;
} cl_window;

static int cl_window_of(ecg_lower *L, const ecg_node *n, ecg_err *e, const char *what, cl_window *w) {
  int rank = (int)L->g->tensors[n->inputs[0]]->n_dims;
  if (!all_float32(L, n) || rank > 4 || rank < 3) return lw_node_err(L, n, e, "--target opencl supports float32 1-D and 2-D %s only", what);
  int r = lw_dims(L, n->inputs[0], w->xd);
  lw_dims(L, n->outputs[0], w->od);
  ECG_TRY(lw_geom_2d(L, n, e, &w->gm, w->k, w->s, w->d, w->p));
  w->H = r == 4 ? w->xd[2] : 1;
  w->W = w->xd[r - 1];
  w->OH = r == 4 ? w->od[2] : 1;
  w->OW = w->od[r - 1];
  return ECG_OK;
}

/** Conv, 1-D and 2-D NCHW (grouped, depthwise, dilated, padded): one work-item per output
 *  element, the direct sum over its window (no packing: weights are read in ONNX's
 *  [M, C/group, kH, kW] layout from W). Float32 only (else ECG_ERR_INPUT naming the node). */
static int cl_conv(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  cl_window w_;
  ECG_TRY(cl_window_of(L, n, e, "convolutions", &w_));
  const int64_t *k = w_.k, *s = w_.s, *d = w_.d, *p = w_.p;
  int64_t N = w_.xd[0], C = w_.xd[1], H = w_.H, W = w_.W, M = w_.od[1], OH = w_.OH, OW = w_.OW;
  int64_t CG = C / w_.gm.group, MG = M / w_.gm.group;
  sbuf *c = &L->code;
  sb_printf(c, "  __global const float *restrict x = %s;\n", lw_ptr(L, n->inputs[0]));
  sb_printf(c, "  __global const float *restrict w = %s;\n", lw_ptr(L, n->inputs[1]));
  int bias = n->n_inputs > 2 && n->inputs[2] >= 0;
  if (bias) sb_printf(c, "  __global const float *restrict bias = %s;\n", lw_ptr(L, n->inputs[2]));
  sb_printf(c, "  __global float *y = %s;\n", lw_ptr(L, n->outputs[0]));
  int u = cl_loop_open(L, N * M * OH * OW);
  sb_printf(c, "    const int ow = (int)(g%d %% %lld), oh = (int)(g%d / %lld %% %lld), m = (int)(g%d / %lld %% %lld), nb = (int)(g%d / %lld);\n",
            u, (long long)OW, u, (long long)OW, (long long)OH, u, (long long)(OW * OH), (long long)M, u, (long long)(OW * OH * M));
  sb_printf(c, "    __global const float *xb = x + ((int64_t)nb * %lld + (int64_t)(m / %lld) * %lld) * %lld;\n", (long long)C,
            (long long)MG, (long long)CG, (long long)(H * W));
  sb_printf(c, "    __global const float *wm = w + (int64_t)m * %lld;\n", (long long)(CG * k[0] * k[1]));
  sb_printf(c, "    float acc = 0.0f;\n"); /* the bias after the sum, as the C kernels add it (mlsd_320x320_tiny is sensitive to the order) */
  if (k[0] == 1 && k[1] == 1 && s[0] == 1 && s[1] == 1 && !p[0] && !p[1] && !p[2] && !p[3]) /* pointwise: no window */
    sb_printf(c, "    const int pix = oh * %lld + ow;\n    for (int ci = 0; ci < %lld; ci++) acc += xb[ci * %lld + pix] * wm[ci];\n",
              (long long)W, (long long)CG, (long long)(H * W));
  else {
    sb_printf(c, "    for (int ci = 0; ci < %lld; ci++)\n      for (int kh = 0; kh < %lld; kh++) {\n", (long long)CG, (long long)k[0]);
    sb_printf(c, "        const int ih = oh * %lld - %lld + kh * %lld;\n        if (ih < 0 || ih >= %lld) continue;\n", (long long)s[0],
              (long long)p[0], (long long)d[0], (long long)H);
    sb_printf(c, "        for (int kw = 0; kw < %lld; kw++) {\n          const int iw = ow * %lld - %lld + kw * %lld;\n", (long long)k[1],
              (long long)s[1], (long long)p[1], (long long)d[1]);
    sb_printf(c, "          if (iw >= 0 && iw < %lld) acc += xb[(ci * %lld + ih) * %lld + iw] * wm[(ci * %lld + kh) * %lld + kw];\n        }\n      }\n",
              (long long)W, (long long)H, (long long)W, (long long)k[0], (long long)k[1]);
  }
  sb_printf(c, "    y[g%d] = acc%s;\n", u, bias ? " + bias[m]" : "");
  return cl_loop_close(L, "y + g%d", u);
}

/** Gemm (alpha, beta, transA, transB, C broadcast to [M, N]): one work-item per output element. */
static int cl_gemm(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n)) return lw_node_err(L, n, e, "only float32 Gemm is supported");
  lw_gemm_geom gg;
  lw_gemm_geom_of(L, n, &gg);
  const int64_t *ad = gg.ad, *bd = gg.bd, *od = gg.od, M = gg.M, N = gg.N, K = gg.K;
  int ta = gg.ta, tb = gg.tb, has_c = gg.has_c;
  float alpha = gg.alpha, beta = gg.beta;
  int64_t cd[ECG_MAX_RANK], cst[ECG_MAX_RANK];
  sbuf *c = &L->code;
  sb_printf(c, "  __global const float *restrict a = %s;\n", lw_ptr(L, n->inputs[0]));
  sb_printf(c, "  __global const float *restrict b = %s;\n", lw_ptr(L, n->inputs[1]));
  if (has_c) {
    int rc_ = lw_dims(L, n->inputs[2], cd);
    lw_bcast_strides(2, od, rc_, cd, cst);
    sb_printf(c, "  __global const float *restrict cc = %s;\n", lw_ptr(L, n->inputs[2]));
  }
  sb_printf(c, "  __global float *y = %s;\n", lw_ptr(L, n->outputs[0]));
  int u = cl_loop_open(L, M * N);
  sb_printf(c, "    const int64_t m = g%d / %lld, nn = g%d %% %lld;\n    float acc = 0.0f;\n", u, (long long)N, u, (long long)N);
  char ai[64], bi[64];
  if (ta) snprintf(ai, sizeof ai, "kk * %lld + m", (long long)ad[1]);
  else snprintf(ai, sizeof ai, "m * %lld + kk", (long long)ad[1]);
  if (tb) snprintf(bi, sizeof bi, "nn * %lld + kk", (long long)bd[1]);
  else snprintf(bi, sizeof bi, "kk * %lld + nn", (long long)bd[1]);
  sb_printf(c, "    for (int64_t kk = 0; kk < %lld; kk++) acc += a[%s] * b[%s];\n", (long long)K, ai, bi);
  sb_printf(c, "    y[g%d] = (float)%.9g * acc", u, alpha);
  if (has_c) sb_printf(c, " + (float)%.9g * cc[m * %lld + nn * %lld]", beta, (long long)cst[0], (long long)cst[1]);
  sb_printf(c, ";\n");
  return cl_loop_close(L, "y + g%d", u);
}

/** MatMul with numpy broadcasting of the batch dims and 1-D operands, over the strided
 *  views of its operands and output (lw_operand_view / lw_output_view: a Transpose the
 *  fusion plan made an index map moves no data, DNNFusion Fig. 3.5). One work-item per
 *  output element. Float32 only. */
static int cl_matmul(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n)) return lw_node_err(L, n, e, "--target opencl supports float32 MatMul only");
  int64_t ad[ECG_MAX_RANK], bd[ECG_MAX_RANK], od[ECG_MAX_RANK], sa[ECG_MAX_RANK], sb[ECG_MAX_RANK], so[ECG_MAX_RANK];
  int va, vb, vo;
  int ra = lw_dims(L, n->inputs[0], ad), rb = lw_dims(L, n->inputs[1], bd), ro = lw_dims(L, n->outputs[0], od);
  lw_operand_view(L, n, 0, &va, sa);
  lw_operand_view(L, n, 1, &vb, sb);
  lw_output_view(L, n, &vo, so);
  if (vo != n->outputs[0] && L->epi_act)
    return lw_node_err(L, n, e, "--target opencl cannot apply an epilogue through a permuted output");
  int64_t M = ra >= 2 ? ad[ra - 2] : 1, K = ad[ra - 1], N = rb >= 2 ? bd[rb - 1] : 1;
  int64_t sam = ra >= 2 ? sa[ra - 2] : 0, sak = sa[ra - 1], sbk = rb >= 2 ? sb[rb - 2] : sb[0], sbn = rb >= 2 ? sb[rb - 1] : 0;
  int rbat = ro - (ra >= 2) - (rb >= 2);
  int64_t som = ra >= 2 ? so[rbat] : 0, son = rb >= 2 ? so[ro - 1] : 0;
  sbuf *c = &L->code;
  sb_printf(c, "  __global const float *a = %s;\n", lw_ptr(L, va));
  sb_printf(c, "  __global const float *b = %s;\n", lw_ptr(L, vb));
  sb_printf(c, "  __global float *y = %s;\n", lw_ptr(L, vo));
  int64_t total = M * N;
  for (int i = 0; i < rbat; i++) total *= od[i];
  int u = cl_loop_open(L, total);
  sb_printf(c, "    int64_t q = g%d;\n    const int64_t nn = q %% %lld; q /= %lld;\n    const int64_t m = q %% %lld; q /= %lld;\n", u,
            (long long)N, (long long)N, (long long)M, (long long)M);
  sb_printf(c, "    int64_t oa = 0, ob = 0, oy = m * %lld + nn * %lld;\n", (long long)som, (long long)son);
  for (int i = rbat - 1; i >= 0; i--) {
    int ja = i - (rbat - (ra - 2)), jb = i - (rbat - (rb - 2));
    int64_t xa = ra > 2 && ja >= 0 && ad[ja] != 1 ? sa[ja] : 0, xb = rb > 2 && jb >= 0 && bd[jb] != 1 ? sb[jb] : 0;
    sb_printf(c, "    { const int64_t bi = q %% %lld; q /= %lld; oa += bi * %lld; ob += bi * %lld; oy += bi * %lld; }\n",
              (long long)od[i], (long long)od[i], (long long)xa, (long long)xb, (long long)so[i]);
  }
  sb_printf(c, "    float acc = 0.0f;\n    for (int64_t kk = 0; kk < %lld; kk++) acc += a[oa + m * %lld + kk * %lld] * b[ob + kk * %lld + nn * %lld];\n",
            (long long)K, (long long)sam, (long long)sak, (long long)sbk, (long long)sbn);
  sb_printf(c, "    y[oy] = acc;\n");
  return cl_loop_close(L, "y + oy", 0);
}

/** MaxPool / AveragePool, 1-D and 2-D NCHW (pads, strides, dilations, count_include_pad;
 *  ceil_mode through the inferred output shape), as the runtime's ecg_rt1_*pool2d count
 *  windows. One work-item per output element; MaxPool's Indices output is refused. */
static int cl_pool(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (n->n_outputs > 1 && n->outputs[1] >= 0) return lw_node_err(L, n, e, "--target opencl does not support MaxPool's Indices output yet");
  cl_window w_;
  ECG_TRY(cl_window_of(L, n, e, "pooling", &w_));
  const int64_t *k = w_.k, *s = w_.s, *d = w_.d, *p = w_.p;
  int64_t NC = w_.xd[0] * w_.xd[1], H = w_.H, W = w_.W, OH = w_.OH, OW = w_.OW;
  int is_max = lw_op(n) == ECG_OP_MaxPool, cip = (int)ecg_attr_i(n, "count_include_pad", 0);
  sbuf *c = &L->code;
  sb_printf(c, "  __global const float *restrict x = %s;\n", lw_ptr(L, n->inputs[0]));
  sb_printf(c, "  __global float *y = %s;\n", lw_ptr(L, n->outputs[0]));
  int u = cl_loop_open(L, NC * OH * OW);
  sb_printf(c, "    const int ow = (int)(g%d %% %lld), oh = (int)(g%d / %lld %% %lld);\n    __global const float *xb = x + g%d / %lld * %lld;\n",
            u, (long long)OW, u, (long long)OW, (long long)OH, u, (long long)(OW * OH), (long long)(H * W));
  sb_printf(c, "    float acc = %s;\n    int rows = 0, cols = 0;\n", is_max ? "-INFINITY" : "0.0f");
  /* the window's positions in range: of the input, or (count_include_pad) of the padded input */
  sb_printf(c, "    for (int kh = 0; kh < %lld; kh++) {\n      const int ih = oh * %lld - %lld + kh * %lld;\n", (long long)k[0],
            (long long)s[0], (long long)p[0], (long long)d[0]);
  if (cip) sb_printf(c, "      if (ih >= -%lld && ih < %lld) rows++;\n", (long long)p[0], (long long)(H + p[2]));
  else sb_printf(c, "      if (ih >= 0 && ih < %lld) rows++;\n", (long long)H);
  sb_printf(c, "      if (ih < 0 || ih >= %lld) continue;\n", (long long)H);
  sb_printf(c, "      for (int kw = 0; kw < %lld; kw++) {\n        const int iw = ow * %lld - %lld + kw * %lld;\n", (long long)k[1],
            (long long)s[1], (long long)p[1], (long long)d[1]);
  sb_printf(c, "        if (iw < 0 || iw >= %lld) continue;\n        const float v = xb[ih * %lld + iw];\n", (long long)W, (long long)W);
  sb_printf(c, "        %s\n      }\n    }\n", is_max ? "acc = (v > acc || v != v) ? v : acc;" : "acc += v;");
  if (!is_max) {
    sb_printf(c, "    for (int kw = 0; kw < %lld; kw++) {\n      const int iw = ow * %lld - %lld + kw * %lld;\n", (long long)k[1],
              (long long)s[1], (long long)p[1], (long long)d[1]);
    if (cip) sb_printf(c, "      if (iw >= -%lld && iw < %lld) cols++;\n    }\n", (long long)p[1], (long long)(W + p[3]));
    else sb_printf(c, "      if (iw >= 0 && iw < %lld) cols++;\n    }\n", (long long)W);
    sb_printf(c, "    acc = rows * cols ? acc / (float)(rows * cols) : 0.0f;\n");
  }
  sb_printf(c, "    (void)rows; (void)cols;\n    y[g%d] = acc;\n", u);
  return cl_loop_close(L, "y + g%d", u);
}

/** GlobalAveragePool / GlobalMaxPool over every spatial dim: one work-item per (n, c). */
static int cl_global_pool(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!all_float32(L, n)) return lw_node_err(L, n, e, "only float32 pooling is supported");
  int64_t xd[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd);
  int64_t hw = 1;
  for (int i = 2; i < r; i++) hw *= xd[i];
  int is_max = lw_op(n) == ECG_OP_GlobalMaxPool;
  sbuf *c = &L->code;
  sb_printf(c, "  __global const float *restrict x = %s;\n", lw_ptr(L, n->inputs[0]));
  sb_printf(c, "  __global float *y = %s;\n", lw_ptr(L, n->outputs[0]));
  int u = cl_loop_open(L, xd[0] * xd[1]);
  sb_printf(c, "    __global const float *xb = x + g%d * %lld;\n    float acc = %s;\n", u, (long long)hw, is_max ? "-INFINITY" : "0.0f");
  sb_printf(c, "    for (int i = 0; i < %lld; i++) %s\n", (long long)hw,
            is_max ? "acc = (xb[i] > acc || xb[i] != xb[i]) ? xb[i] : acc;" : "acc += xb[i];");
  if (is_max) sb_printf(c, "    y[g%d] = acc;\n", u);
  else sb_printf(c, "    y[g%d] = acc / (float)%lld;\n", u, (long long)hw);
  return cl_loop_close(L, "y + g%d", u);
}

/* BatchNormalization's training outputs (emit_elementwise's own loop) are C only: a
 * One-to-One node with one output is a one-node One-to-One block. */
static int cl_elementwise(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  for (size_t k = 1; k < n->n_outputs; k++)
    if (n->outputs[k] >= 0) return lw_node_err(L, n, e, "--target opencl does not support this operator's extra outputs yet");
  return emit_elementwise(L, n, e);
}

/* Slice with starts/ends/axes/steps known only at run time prints C-only code (static
 * tables): refused; the constant case is a strided copy (lw_loops). */
static int cl_slice(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  for (size_t k = 1; k < n->n_inputs && k < 5; k++)
    if (n->inputs[k] >= 0 && !L->g->tensors[n->inputs[k]]->is_const)
      return lw_node_err(L, n, e, "--target opencl needs constant starts, ends, axes and steps");
  return emit_slice(L, n, e);
}

ecg_emit_fn lw_cl_emitter(ecg_emit_fn fn) {
  /* C emitter -> OpenCL emitter: the index-map emitters print through lw_loops/lw_ptr and
   * serve both targets; the runtime-call emitters have their OpenCL loop nests above */
  static const struct { ecg_emit_fn c, cl; } map[] = {
      {emit_elementwise, cl_elementwise}, {emit_variadic, cl_elementwise}, {emit_copy, emit_copy},
      {emit_transpose, emit_transpose},   {emit_space_depth, emit_space_depth}, {emit_concat, emit_concat},
      {emit_split, emit_split},           {emit_conv, cl_conv},           {emit_gemm, cl_gemm},
      {emit_matmul, cl_matmul},           {emit_pool, cl_pool},           {emit_global_pool, cl_global_pool},
      {emit_expand, emit_expand},         {emit_tile, emit_tile},         {emit_slice, cl_slice},
      {emit_gather, emit_gather},         {emit_pad, emit_pad},           {emit_center_crop_pad, emit_center_crop_pad},
      {emit_softmax, emit_softmax},       {emit_reduce, emit_reduce},     {emit_resize, emit_resize},
      {emit_norm, emit_norm},
  };
  for (size_t i = 0; fn && i < sizeof map / sizeof *map; i++)
    if (map[i].c == fn) return map[i].cl;
  return NULL;
}

/* The OpenCL C prelude of model.cl: C99 integer type names, the scalar helpers of
 * format/ecg_scalar.h (the expressions of format/ops/scalar.def use them) over OpenCL's
 * overloaded built-ins. */
static const char cl_prelude[] =
    "#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\ntypedef double ecg_dbl;\n#else\ntypedef float ecg_dbl;\n#endif\n"
    "typedef long int64_t;\ntypedef ulong uint64_t;\ntypedef int int32_t;\ntypedef uint uint32_t;\n"
    "typedef short int16_t;\ntypedef ushort uint16_t;\ntypedef char int8_t;\ntypedef uchar uint8_t;\n"
    "#define INT64_MAX LONG_MAX\n#define INT64_MIN LONG_MIN\n"
    "#define ecg_max(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))\n"
    "#define ecg_min(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))\n"
    "float __attribute__((overloadable)) ecg_exp_d(float x) { return exp(x); }\n"
    "float __attribute__((overloadable)) ecg_erf_d(float x) { return erf(x); }\n"
    "#ifdef cl_khr_fp64\ndouble __attribute__((overloadable)) ecg_exp_d(double x) { return exp(x); }\n"
    "double __attribute__((overloadable)) ecg_erf_d(double x) { return erf(x); }\n#endif\n"
    "#define ecg_exp(x) exp(x)\n#define ecg_erf(x) erf(x)\n#define nearbyint(x) rint(x)\n"
    "int64_t ecg_imod(int64_t a, int64_t b) {\n  if (b == 0) return 0;\n  int64_t r = b == -1 ? 0 : a % b;\n"
    "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n"
    "int64_t ecg_tmod(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }\n"
    "ecg_dbl ecg_fmod_floor(ecg_dbl a, ecg_dbl b) {\n  ecg_dbl r = fmod(a, b);\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n"
    "int64_t ecg_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? (int64_t)(0UL - (uint64_t)a) : a / b; }\n"
    "int64_t ecg_ipow(int64_t a, int64_t b) {\n  if (b < 0) {\n    ecg_dbl v = pow((ecg_dbl)a, (ecg_dbl)b);\n"
    "    return v != v ? 0 : v >= (ecg_dbl)9.2233720368547758e18 ? INT64_MAX : v <= (ecg_dbl)-9.2233720368547758e18 ? INT64_MIN : (int64_t)v;\n  }\n"
    "  uint64_t r = 1, x = (uint64_t)a;\n  for (; b > 0; b >>= 1, x *= x)\n    if (b & 1) r *= x;\n  return (int64_t)r;\n}\n";

const char *lw_cl_expr(sbuf *tmp, const char *x) {
  const char *g;
  while ((g = strstr(x, "_Generic(")) != NULL) {
    const char *p = g + strlen("_Generic("), *def = NULL;
    int depth = 1;
    for (; *p && depth; p++) {
      if (*p == '(') depth++;
      else if (*p == ')') depth--;
      else if (depth == 1 && !strncmp(p, "default:", 8)) def = p + 8;
    }
    if (depth || !def) break; /* not the shape the helpers make: left as it is (the build says so) */
    while (*def == ' ') def++;
    const char *end = def;
    while (end < p - 1 && *end != ')' && *end != ',' && *end != ' ') end++;
    sb_printf(tmp, "%.*s%.*s", (int)(g - x), x, (int)(end - def), def);
    x = p;
  }
  sb_printf(tmp, "%s", x);
  return tmp->s ? tmp->s : "";
}

/* Append s to b as a C string literal, one source line per literal line. */
static void c_lines(sbuf *b, const char *s) {
  sb_printf(b, "  \"");
  for (; *s; s++) {
    if (*s == '\n') sb_printf(b, s[1] ? "\\n\"\n  \"" : "\\n");
    else if (*s == '"' || *s == '\\') sb_printf(b, "\\%c", *s);
    else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f) sb_printf(b, "\\%03o", (unsigned char)*s);
    else sb_printf(b, "%c", *s);
  }
  sb_printf(b, "\"\n");
}

/* Where graph output k's bytes are on the device when no kernel wrote them into its own io
 * buffer (a constant, a graph input, an output listed twice): buffer expression and offset. */
static void cl_source_of(const ecg_lower *L, int id, char *buf, size_t n, size_t *off) {
  const lw_tensor *t = &L->t[id];
  *off = t->where == LW_CONST || t->where == LW_ARENA ? t->offset : 0;
  if (t->where == LW_CONST) snprintf(buf, n, "ctx->W");
  else if (t->where == LW_ARENA) snprintf(buf, n, "ctx->A");
  else snprintf(buf, n, "ctx->dio[%d]", t->io_index);
}

int lw_cl_print_program(sbuf *b, const char *dir, int n_io, const sbuf *decls, const sbuf *code, ecg_err *e) {
  sbuf src = {0};
  sb_printf(&src, "/* model.cl: generated by ecg-lower (OpenCL C 1.2). */\n%s", cl_prelude);
  cl_args(n_io, &src);
  sb_printf(&src, "\n%s\n%s", decls->s ? decls->s : "", code->s ? code->s : "");
  sb_printf(b, "/* The program: model.cl. */\nstatic const char cl_source_[] =\n");
  c_lines(b, src.s ? src.s : "");
  sb_printf(b, ";\n\n");
  int rc = src.oom ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : lw_write_file(dir, "model.cl", src.s, src.len, e); /* the same text, for reading and offline compilers */
  sb_free(&src);
  return rc;
}

void lw_cl_print_open(sbuf *b) {
  /* device choice: ECG_CL_DEVICE indexes every platform's devices in order */
  sb_printf(b, "static int pick_device_(cl_platform_id *plat, cl_device_id *dev) {\n"
               "  const char *s = getenv(\"ECG_CL_DEVICE\");\n  char *end = NULL;\n  long want = s && *s ? strtol(s, &end, 10) : 0;\n"
               "  if (want < 0 || (end && *end)) return -1;\n  cl_platform_id ps[16];\n  cl_uint np = 0;\n"
               "  if (clGetPlatformIDs(16, ps, &np) != CL_SUCCESS) return -1;\n  if (np > 16) np = 16;\n"
               "  for (cl_uint i = 0; i < np; i++) {\n    cl_device_id ds[64];\n    cl_uint nd = 0;\n"
               "    if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 64, ds, &nd) != CL_SUCCESS) continue;\n    if (nd > 64) nd = 64;\n"
               "    if (want < (long)nd) { *plat = ps[i]; *dev = ds[want]; return 0; }\n    want -= (long)nd;\n  }\n  return -1;\n}\n\n");
  /* context, in-order queue, program */
  sb_printf(b, "/* The context and in-order queue on device ECG_CL_DEVICE and the program cl_source_ built\n"
               " * for it: 0, ENODEV (no such device) or EINVAL (the build log goes to stderr). */\n"
               "static int cl_open_(cl_context *cx, cl_command_queue *q, cl_program *prog, char *name, size_t name_n) {\n"
               "  cl_platform_id plat;\n  cl_device_id dev;\n  if (pick_device_(&plat, &dev) != 0) return ENODEV;\n"
               "  clGetDeviceInfo(dev, CL_DEVICE_NAME, name_n - 1, name, NULL);\n"
               "  cl_int err = CL_SUCCESS;\n  cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};\n"
               "  *cx = clCreateContext(props, 1, &dev, NULL, NULL, &err);\n"
               "  if (err == CL_SUCCESS) *q = clCreateCommandQueue(*cx, dev, 0, &err);\n"
               "  const char *srcp = cl_source_;\n"
               "  if (err == CL_SUCCESS) *prog = clCreateProgramWithSource(*cx, 1, &srcp, NULL, &err);\n"
               "  if (err == CL_SUCCESS && clBuildProgram(*prog, 1, &dev, \"-cl-std=CL1.2\", NULL, NULL) != CL_SUCCESS) {\n"
               "    size_t n = 0;\n    clGetProgramBuildInfo(*prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);\n    char *log = malloc(n + 1);\n"
               "    if (log && clGetProgramBuildInfo(*prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS) { log[n] = 0; fprintf(stderr, \"%%s: OpenCL build failed on %%s:\\n%%s\\n\", \"model\", name, log); }\n"
               "    free(log);\n    return EINVAL;\n  }\n  return err == CL_SUCCESS ? 0 : EINVAL;\n}\n\n");
}

void lw_cl_host_head(ecg_lower *L, sbuf *b) {
  const char *P = L->prefix;
  sb_printf(b, "/* Generated by ecg-lower %s --target opencl: %zu nodes, weights %zu bytes, arena %zu bytes.\n"
               " * Host code: OpenCL context and in-order queue on device ECG_CL_DEVICE, the program (model.cl,\n"
               " * embedded below) built once, weights uploaded once, the kernels enqueued in order with no\n"
               " * host round-trip between them, outputs read back at the end. Links -lOpenCL only. */\n",
            ECG_VERSION_STRING, L->g->n_nodes, L->weights_bytes, L->arena_bytes);
  sb_printf(b, "#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\n#include <errno.h>\n#include <stdint.h>\n#include <stdio.h>\n"
               "#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n#include \"model.h\"\n\n");
  sb_printf(b, "#define NIO %d\n#define NKERNELS %d\n#define WEIGHTS_BYTES ((size_t)%zu)\n#define ARENA_BYTES ((size_t)%zu)\n\n",
            L->n_io > 0 ? L->n_io : 1, L->nk, L->weights_bytes, L->arena_bytes);
  sb_printf(b, "struct %s_ctx {\n  cl_context cx;\n  cl_command_queue q;\n  cl_program prog;\n  cl_kernel k[NKERNELS + 1];\n"
               "  cl_mem A, W;            /* arena (intermediates, static plan), weights.bin */\n"
               "  cl_mem dio[NIO];        /* device buffers of the graph inputs then outputs */\n"
               "  void *io[NIO];          /* bound host buffers */\n  double *prof_ms;        /* per-kernel milliseconds when profiling is on */\n"
               "  size_t cap;             /* most work-items launched per kernel */\n  char dev_name[256];\n};\n\n", P);
}

int lw_cl_host_body(ecg_lower *L, sbuf *b, const char *dir, ecg_err *e) {
  const ecg_graph *g = L->g;
  const char *P = L->prefix;
  int rc = lw_cl_print_program(b, dir, L->n_io, &L->decls, &L->code, e);
  sb_printf(b, "/* Index-space size of each kernel (0: nothing to enqueue, a zero-copy Reshape). */\nstatic const size_t cl_work_[NKERNELS + 1] = {");
  for (int p = 0; p < L->nk; p++) sb_printf(b, "%s%lld", p ? ", " : "", (long long)L->cl_work[p]);
  sb_printf(b, "%s};\n\n", L->nk ? "" : "0");
  sb_printf(b, "static double now_ms_(void) {\n  struct timespec ts;\n  clock_gettime(CLOCK_MONOTONIC, &ts);\n  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;\n}\n\n");
  /* run */
  sb_printf(b, "int %s_run(%s_ctx *ctx) {\n  for (int i = 0; i < NIO && i < %d; i++) if (!ctx->io[i]) return -1;\n  cl_int err = CL_SUCCESS;\n", P, P, L->n_io);
  for (size_t k = 0; k < g->n_inputs; k++)
    sb_printf(b, "  err |= clEnqueueWriteBuffer(ctx->q, ctx->dio[%zu], CL_FALSE, 0, %s_inputs_info_[%zu].bytes, ctx->io[%zu], 0, NULL, NULL);\n", k, P, k, k);
  sb_printf(b, "  for (int i = 0; i < NKERNELS && err == CL_SUCCESS; i++) {\n    if (!cl_work_[i]) continue;\n"
               "    size_t gsz = cl_work_[i] < ctx->cap ? cl_work_[i] : ctx->cap;\n    double t0 = ctx->prof_ms ? now_ms_() : 0;\n"
               "    err = clEnqueueNDRangeKernel(ctx->q, ctx->k[i], 1, NULL, &gsz, NULL, 0, NULL, NULL);\n"
               "    if (ctx->prof_ms) { err |= clFinish(ctx->q); ctx->prof_ms[i] += now_ms_() - t0; }\n  }\n");
  for (size_t k = 0; k < g->n_outputs; k++) {
    int id = g->outputs[k];
    const lw_tensor *t = &L->t[id];
    int slot = (int)g->n_inputs + (int)k;
    if (t->where == LW_OUTPUT && t->io_index == slot) continue;
    char from[48];
    size_t off;
    cl_source_of(L, id, from, sizeof from, &off);
    sb_printf(b, "  if (err == CL_SUCCESS) err = clEnqueueCopyBuffer(ctx->q, %s, ctx->dio[%d], %zu, 0, %zu, 0, NULL, NULL);\n", from, slot, off, t->bytes);
  }
  for (size_t k = 0; k < g->n_outputs; k++)
    sb_printf(b, "  if (err == CL_SUCCESS) err = clEnqueueReadBuffer(ctx->q, ctx->dio[%zu], CL_FALSE, 0, %s_outputs_info_[%zu].bytes, ctx->io[%zu], 0, NULL, NULL);\n",
              g->n_inputs + k, P, k, g->n_inputs + k);
  sb_printf(b, "  cl_int fin = clFinish(ctx->q);\n  return err == CL_SUCCESS && fin == CL_SUCCESS ? 0 : -1;\n}\n\n");
  sb_printf(b, "const char *%s_device_name(const %s_ctx *ctx) { return ctx->dev_name; }\n\n", P, P);
  /* destroy */
  sb_printf(b, "void %s_destroy(%s_ctx *ctx) {\n  if (!ctx) return;\n  for (int i = 0; i < NKERNELS; i++) if (ctx->k[i]) clReleaseKernel(ctx->k[i]);\n"
               "  for (int i = 0; i < NIO; i++) if (ctx->dio[i]) clReleaseMemObject(ctx->dio[i]);\n"
               "  if (ctx->A) clReleaseMemObject(ctx->A);\n  if (ctx->W) clReleaseMemObject(ctx->W);\n"
               "  if (ctx->prog) clReleaseProgram(ctx->prog);\n  if (ctx->q) clReleaseCommandQueue(ctx->q);\n"
               "  if (ctx->cx) clReleaseContext(ctx->cx);\n  free(ctx->prof_ms);\n  free(ctx);\n}\n\n", P, P);
  lw_cl_print_open(b);
  /* create */
  sb_printf(b, "%s_ctx *%s_create(const char *weights_path) {\n  struct %s_ctx *ctx = calloc(1, sizeof *ctx);\n  if (!ctx) return NULL;\n", P, P, P);
  sb_printf(b, "  unsigned char *w = malloc(WEIGHTS_BYTES ? WEIGHTS_BYTES : 1);\n  if (!w) { free(ctx); errno = ENOMEM; return NULL; }\n"
               "  FILE *f = fopen(weights_path, \"rb\");\n  if (!f) { int er = errno; free(w); free(ctx); errno = er; return NULL; }\n"
               "  size_t got = WEIGHTS_BYTES ? fread(w, 1, WEIGHTS_BYTES, f) : 0;\n  int extra = fgetc(f);\n  fclose(f);\n"
               "  if (got != WEIGHTS_BYTES || extra != EOF) { free(w); free(ctx); errno = EINVAL; return NULL; }\n");
  sb_printf(b, "  int er = cl_open_(&ctx->cx, &ctx->q, &ctx->prog, ctx->dev_name, sizeof ctx->dev_name);\n"
               "  if (er) { free(w); %s_destroy(ctx); errno = er; return NULL; }\n  cl_int err = CL_SUCCESS;\n", P);
  sb_printf(b, "  if (err == CL_SUCCESS) ctx->W = clCreateBuffer(ctx->cx, CL_MEM_READ_ONLY | (WEIGHTS_BYTES ? CL_MEM_COPY_HOST_PTR : 0), WEIGHTS_BYTES ? WEIGHTS_BYTES : 64, WEIGHTS_BYTES ? w : NULL, &err);\n"
               "  free(w);\n  if (err == CL_SUCCESS) ctx->A = clCreateBuffer(ctx->cx, CL_MEM_READ_WRITE, ARENA_BYTES ? ARENA_BYTES : 64, NULL, &err);\n");
  sb_printf(b, "  for (int i = 0; i < NIO && i < %d && err == CL_SUCCESS; i++) {\n"
               "    size_t n = i < %zu ? %s_inputs_info_[i].bytes : %s_outputs_info_[i - %zu].bytes;\n"
               "    ctx->dio[i] = clCreateBuffer(ctx->cx, CL_MEM_READ_WRITE, n ? n : 64, NULL, &err);\n  }\n",
            L->n_io, g->n_inputs, P, P, g->n_inputs);
  sb_printf(b, "  for (int i = 0; i < NKERNELS && err == CL_SUCCESS; i++) {\n    char name[32];\n    snprintf(name, sizeof name, \"k%%d\", i);\n"
               "    ctx->k[i] = clCreateKernel(ctx->prog, name, &err);\n"
               "    if (err == CL_SUCCESS) err = clSetKernelArg(ctx->k[i], 0, sizeof(cl_mem), &ctx->A);\n"
               "    if (err == CL_SUCCESS) err = clSetKernelArg(ctx->k[i], 1, sizeof(cl_mem), &ctx->W);\n"
               "    for (int j = 0; j < %d && err == CL_SUCCESS; j++) err = clSetKernelArg(ctx->k[i], 2 + j, sizeof(cl_mem), &ctx->dio[j]);\n  }\n",
            L->n_io);
  sb_printf(b, "  if (err != CL_SUCCESS) { %s_destroy(ctx); errno = EINVAL; return NULL; }\n"
               "  ctx->cap = (size_t)1 << 20; /* grid-stride kernels: any launch size is correct */\n  return ctx;\n}\n\n", P);
  return rc;
}
