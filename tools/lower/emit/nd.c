/* Generic N-D direct kernels for Conv, ConvTranspose, MaxPool (with Indices) and
 * AveragePool: any number of spatial dims, any float dtype (pooling: any numeric
 * dtype). Used where the blocked runtime kernels do not apply (3-D, float64, integer
 * pooling, MaxPool's Indices output); the 1-D/2-D float32 cases keep the runtime's
 * packed GEMM paths (nn.c). Loops are plain: correctness first, OpenMP over the
 * outermost output planes. */
#include <string.h>

#include "emit.h"

/* static const int64_t NAME[sp] = {...}; */
static void nd_array(sbuf *c, const char *name, const int64_t *v, int n) {
  sb_printf(c, "    static const int64_t %s[%d] = {", name, n);
  for (int i = 0; i < n; i++) sb_printf(c, "%s%lld", i ? ", " : "", (long long)v[i]);
  sb_printf(c, "};\n");
}

/* The geometry tables of a kernel (ecg_conv_geom_resolve). */
static void nd_geom_decls(sbuf *c, const ecg_conv_geom *gm) {
  nd_array(c, "IN", gm->in, gm->sp);
  nd_array(c, "OUT", gm->out, gm->sp);
  nd_array(c, "K", gm->k, gm->sp);
  nd_array(c, "S", gm->s, gm->sp);
  nd_array(c, "D", gm->d, gm->sp);
  nd_array(c, "PB", gm->pb, gm->sp);
  nd_array(c, "PE", gm->pe, gm->sp);
}

static int64_t prod(const int64_t *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/** MaxPool / AveragePool / LpPool, N-D, any numeric dtype (average and Lp: float dtypes),
 *  with MaxPool's optional Indices output (storage_order 0 row-major, 1 column-major flat
 *  indices over N, C and the spatial dims, as ONNX defines).  LpPool (opsets 2-22; ceil_mode
 *  and dilations from 18): y = (sum over the window's in-range taps of |x|^p)^(1/p), p the
 *  integer attribute (default 2), padding contributing 0, accumulated in double. */
int emit_pool_nd(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  ecg_conv_geom gm;
  ECG_TRY(ecg_conv_geom_resolve(L->g, n, &gm, e));
  int is_max = lw_op(n) == ECG_OP_MaxPool, is_lp = lw_op(n) == ECG_OP_LpPool;
  int64_t lp = ecg_attr_i(n, "p", 2);
  if (is_lp && lp < 1) return lw_node_err(L, n, e, "p must be a positive integer");
  int x = n->inputs[0], y = n->outputs[0], ind = n->n_outputs > 1 ? n->outputs[1] : -1;
  int isf = ecg_dtype_is_float(L->g->tensors[x]->dtype);
  if (lw_half(L, x)) return lw_node_err(L, n, e, "float16 pooling is not supported");
  if (!is_max && !isf) return lw_node_err(L, n, e, "%s of an integer tensor is not supported", is_lp ? "LpPool" : "AveragePool");
  int64_t xd[ECG_MAX_RANK];
  lw_dims(L, x, xd);
  int64_t nc = xd[0] * xd[1], in_sp = prod(gm.in, gm.sp), out_sp = prod(gm.out, gm.sp), ksz = prod(gm.k, gm.sp);
  int sp = gm.sp, cip = (int)ecg_attr_i(n, "count_include_pad", 0), so = (int)ecg_attr_i(n, "storage_order", 0);
  const char *T = lw_ctype(L, x);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n");
  nd_geom_decls(c, &gm);
  sb_printf(c, "    const %s *x = %s;\n", T, lw_ptr(L, x));
  sb_printf(c, "    %s *y = %s;\n", T, lw_ptr(L, y));
  if (ind >= 0) sb_printf(c, "    int64_t *ind = %s;\n", lw_ptr(L, ind));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 65536)\n", (long long)(nc * out_sp * ksz));
  sb_printf(c, "    for (int64_t p = 0; p < %lld; p++) {\n      const %s *xp = x + p * %lld;\n", (long long)nc, T, (long long)in_sp);
  sb_printf(c, "      for (int64_t o = 0; o < %lld; o++) {\n        int64_t oi[%d], rem = o;\n", (long long)out_sp, sp);
  sb_printf(c, "        for (int q = %d - 1; q >= 0; q--) { oi[q] = rem %% OUT[q]; rem /= OUT[q]; }\n", sp);
  if (is_max) sb_printf(c, "        %s best = 0; int64_t arg = -1;\n", T);
  else sb_printf(c, "        double sum = 0; int64_t cnt = 0;\n");
  sb_printf(c, "        for (int64_t kk = 0; kk < %lld; kk++) {\n          int64_t r2 = kk, off = 0, offc = 0, inside = 1, inpad = 1;\n", (long long)ksz);
  sb_printf(c, "          for (int q = %d - 1; q >= 0; q--) {\n            int64_t ki = r2 %% K[q]; r2 /= K[q];\n"
               "            int64_t pos = oi[q] * S[q] - PB[q] + ki * D[q];\n"
               "            if (pos < 0 || pos >= IN[q]) inside = 0;\n"
               "            if (pos < -PB[q] || pos >= IN[q] + PE[q]) inpad = 0;\n", sp);
  sb_printf(c, "          }\n          if (inside) {\n            int64_t m = 1, mc = 1; rem = kk;\n"
               "            for (int q = %d - 1; q >= 0; q--) { int64_t ki = rem %% K[q]; rem /= K[q]; int64_t pos = oi[q] * S[q] - PB[q] + ki * D[q]; off += pos * m; m *= IN[q]; }\n"
               "            for (int q = 0; q < %d; q++) { int64_t r3 = kk, ki = 0; for (int t = %d - 1; t >= q; t--) { ki = r3 %% K[t]; r3 /= K[t]; } offc += (oi[q] * S[q] - PB[q] + ki * D[q]) * mc; mc *= IN[q]; }\n",
            sp, sp, sp);
  if (is_max) sb_printf(c, "            %s v = xp[off];\n            if (arg < 0 || v > best) { best = v; arg = %s; }\n", T,
                        so ? "offc" : "off");
  else if (is_lp && lp == 1) sb_printf(c, "            sum += fabs((double)xp[off]);\n");
  else if (is_lp && lp == 2) sb_printf(c, "            sum += (double)xp[off] * xp[off];\n");
  else if (is_lp) sb_printf(c, "            sum += pow(fabs((double)xp[off]), %lld);\n", (long long)lp);
  else sb_printf(c, "            sum += xp[off]; cnt++;\n");
  sb_printf(c, "          }\n");
  if (!is_max && cip) sb_printf(c, "          else if (inpad) cnt++;\n");
  sb_printf(c, "        }\n");
  if (is_max) {
    sb_printf(c, "        y[p * %lld + o] = best;\n", (long long)out_sp);
    if (ind >= 0) sb_printf(c, "        ind[p * %lld + o] = arg < 0 ? 0 : p * %lld + arg;\n", (long long)out_sp, (long long)in_sp);
  } else if (is_lp) {
    char fin[48];
    snprintf(fin, sizeof fin, lp == 1 ? "sum" : lp == 2 ? "sqrt(sum)" : "pow(sum, 1.0 / %lld)", (long long)lp);
    sb_printf(c, "        y[p * %lld + o] = (%s)%s;\n", (long long)out_sp, T, fin);
  } else {
    sb_printf(c, "        y[p * %lld + o] = (%s)(cnt ? sum / cnt : 0);\n", (long long)out_sp, T);
  }
  sb_printf(c, "      }\n    }\n  }\n");
  return ECG_OK;
}

/** Col2Im (18), N-D, float32/float64: each (n, c) image plane is zeroed, then every
 *  block column l and block offset kk adds its value at image position
 *  l_q * s_q - pb_q + k_q * d_q (positions in the padding dropped), as ONNX's reference
 *  (the adjoint of im2col); OpenMP over the planes, which never share an output. */
int emit_col2im(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int x = n->inputs[0], y = n->outputs[0];
  if (!ecg_dtype_is_float(L->g->tensors[x]->dtype) || lw_half(L, x)) return lw_node_err(L, n, e, "only float32/float64 Col2Im is supported");
  ecg_conv_geom gm;
  ECG_TRY(ecg_col2im_geom(L->g, n, &gm, e));
  int sp = gm.sp;
  int64_t planes = gm.n * gm.c, img = prod(gm.in, sp), nblk = prod(gm.out, sp), ksz = prod(gm.k, sp);
  const char *T = lw_ctype(L, x);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n");
  nd_geom_decls(c, &gm);
  sb_printf(c, "    const %s *x = %s;\n    %s *y = %s;\n", T, lw_ptr(L, x), T, lw_ptr(L, y));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 65536)\n", (long long)(planes * ksz * nblk));
  sb_printf(c, "    for (int64_t p = 0; p < %lld; p++) {\n      %s *yp = y + p * %lld;\n", (long long)planes, T, (long long)img);
  sb_printf(c, "      for (int64_t i = 0; i < %lld; i++) yp[i] = 0;\n", (long long)img);
  sb_printf(c, "      for (int64_t kk = 0; kk < %lld; kk++) {\n        const %s *xr = x + (p * %lld + kk) * %lld;\n", (long long)ksz, T,
            (long long)ksz, (long long)nblk);
  sb_printf(c, "        int64_t ki[%d], rem = kk;\n        for (int q = %d - 1; q >= 0; q--) { ki[q] = rem %% K[q]; rem /= K[q]; }\n", sp, sp);
  sb_printf(c, "        for (int64_t l = 0; l < %lld; l++) {\n          int64_t r2 = l, off = 0, mul = 1, inside = 1;\n", (long long)nblk);
  sb_printf(c, "          for (int q = %d - 1; q >= 0; q--) { int64_t li = r2 %% OUT[q]; r2 /= OUT[q]; int64_t pos = li * S[q] - PB[q] + ki[q] * D[q];\n"
               "            if (pos < 0 || pos >= IN[q]) { inside = 0; break; } off += pos * mul; mul *= IN[q]; }\n", sp);
  sb_printf(c, "          if (inside) yp[off] += xr[l];\n        }\n      }\n    }\n  }\n");
  return ECG_OK;
}

/** DeformConv (19, 22), 2-D, float32/float64: Conv whose every tap (kh, kw) of output
 *  (oh, ow) samples X at (oh*s - pb + kh*d + dy, ow*s - pb + kw*d + dx), (dy, dx) the
 *  offset pair of the tap's offset group (offset channels (group, kh, kw, {y, x})),
 *  bilinearly with zero outside the image (a corner outside contributes 0), times the
 *  optional mask; groups, offset_group, bias; accumulated in double. */
int emit_deform_conv(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int x = n->inputs[0];
  if (!ecg_dtype_is_float(L->g->tensors[x]->dtype) || lw_half(L, x)) return lw_node_err(L, n, e, "only float32/float64 DeformConv is supported");
  ecg_conv_geom gm;
  ECG_TRY(ecg_conv_geom_resolve(L->g, n, &gm, e));
  if (gm.sp != 2) return lw_node_err(L, n, e, "only 2-D DeformConv is supported (input has %d spatial dims)", gm.sp);
  int64_t N = gm.n, C = gm.c, M = gm.m, G = gm.group, Cg = C / G, Mg = M / G, OG = ecg_attr_i(n, "offset_group", 1);
  int64_t H = gm.in[0], W = gm.in[1], OH = gm.out[0], OW = gm.out[1], K0 = gm.k[0], K1 = gm.k[1], KSZ = K0 * K1;
  const char *T = lw_ctype(L, x);
  int has_b = n->n_inputs > 3 && n->inputs[3] >= 0, has_m = n->n_inputs > 4 && n->inputs[4] >= 0;
  sbuf *c = &L->code;
  sb_printf(c, "  {\n");
  nd_geom_decls(c, &gm);
  sb_printf(c, "    const %s *x = %s, *w = %s, *off = %s;\n", T, lw_ptr(L, x), lw_ptr(L, n->inputs[1]), lw_ptr(L, n->inputs[2]));
  if (has_b) sb_printf(c, "    const %s *b = %s;\n", T, lw_ptr(L, n->inputs[3]));
  if (has_m) sb_printf(c, "    const %s *msk = %s;\n", T, lw_ptr(L, n->inputs[4]));
  sb_printf(c, "    %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 16384)\n", (long long)(N * M * OH * OW * Cg * KSZ));
  sb_printf(c, "    for (int64_t nm = 0; nm < %lld; nm++) {\n      int64_t nn = nm / %lld, m = nm %% %lld, g = m / %lld;\n", (long long)(N * M), (long long)M,
            (long long)M, (long long)Mg);
  sb_printf(c, "      for (int64_t oh = 0; oh < %lld; oh++)\n        for (int64_t ow = 0; ow < %lld; ow++) {\n", (long long)OH, (long long)OW);
  sb_printf(c, "          double acc = %s;\n", has_b ? "b[m]" : "0");
  sb_printf(c, "          for (int64_t ci = 0; ci < %lld; ci++) {\n            int64_t ch = g * %lld + ci, og = ch / %lld;\n", (long long)Cg, (long long)Cg,
            (long long)(C / OG));
  sb_printf(c, "            const %s *xp = x + (nn * %lld + ch) * %lld;\n", T, (long long)C, (long long)(H * W));
  sb_printf(c, "            for (int64_t kk = 0; kk < %lld; kk++) {\n              int64_t kh = kk / %lld, kw = kk %% %lld;\n", (long long)KSZ, (long long)K1,
            (long long)K1);
  sb_printf(c, "              int64_t oc = ((nn * %lld + og * %lld + 2 * kk) * %lld + oh) * %lld + ow;\n", (long long)(OG * 2 * KSZ), (long long)(2 * KSZ),
            (long long)OH, (long long)OW);
  sb_printf(c, "              double ph = (double)(oh * S[0] - PB[0] + kh * D[0]) + off[oc], pw = (double)(ow * S[1] - PB[1] + kw * D[1]) + off[oc + %lld];\n",
            (long long)(OH * OW));
  if (has_m)
    sb_printf(c, "              double mk = msk[((nn * %lld + og * %lld + kk) * %lld + oh) * %lld + ow];\n", (long long)(OG * KSZ), (long long)KSZ, (long long)OH,
              (long long)OW);
  sb_printf(c, "              double v = 0;\n              if (ph > -1 && ph < %lld && pw > -1 && pw < %lld) {\n", (long long)H, (long long)W);
  sb_printf(c, "                int64_t h0 = (int64_t)floor(ph), w0 = (int64_t)floor(pw);\n                double lh = ph - h0, lw = pw - w0;\n");
  sb_printf(c, "                double v00 = h0 >= 0 && w0 >= 0 ? xp[h0 * %lld + w0] : 0, v01 = h0 >= 0 && w0 + 1 < %lld ? xp[h0 * %lld + w0 + 1] : 0;\n",
            (long long)W, (long long)W, (long long)W);
  sb_printf(c, "                double v10 = h0 + 1 < %lld && w0 >= 0 ? xp[(h0 + 1) * %lld + w0] : 0, v11 = h0 + 1 < %lld && w0 + 1 < %lld ? xp[(h0 + 1) * %lld + w0 + 1] : 0;\n",
            (long long)H, (long long)W, (long long)H, (long long)W, (long long)W);
  sb_printf(c, "                v = (1 - lh) * ((1 - lw) * v00 + lw * v01) + lh * ((1 - lw) * v10 + lw * v11);\n              }\n");
  sb_printf(c, "              acc += (double)w[(m * %lld + ci) * %lld + kk] * v%s;\n            }\n          }\n", (long long)Cg, (long long)KSZ, has_m ? " * mk" : "");
  sb_printf(c, "          y[(nm * %lld + oh) * %lld + ow] = (%s)acc;\n        }\n    }\n  }\n", (long long)OH, (long long)OW, T);
  return ECG_OK;
}

/* Opening of a Conv/ConvTranspose kernel: the geometry tables and the x, w, b
 * (NULL when absent), y pointers of element type T. */
static void nd_conv_prologue(ecg_lower *L, const ecg_node *n, const ecg_conv_geom *gm, const char *T) {
  sbuf *c = &L->code;
  sb_printf(c, "  {\n");
  nd_geom_decls(c, gm);
  sb_printf(c, "    const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    const %s *w = %s;\n", T, lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    const %s *b = %s;\n", T, n->n_inputs > 2 && n->inputs[2] >= 0 ? lw_ptr(L, n->inputs[2]) : "NULL");
  sb_printf(c, "    %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
}

/** Conv, N-D, float dtypes: direct loops (groups, dilations, strides, pads, bias). */
int emit_conv_nd(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!ecg_dtype_is_float(L->g->tensors[n->inputs[0]]->dtype) || lw_half(L, n->inputs[0]))
    return lw_node_err(L, n, e, "only float32/float64 Conv is supported");
  ecg_conv_geom gm;
  ECG_TRY(ecg_conv_geom_resolve(L->g, n, &gm, e));
  int sp = gm.sp;
  int64_t N = gm.n, C = gm.c, M = gm.m, G = gm.group, Cg = C / G, Mg = M / G;
  int64_t in_sp = prod(gm.in, sp), out_sp = prod(gm.out, sp), ksz = prod(gm.k, sp);
  const char *T = lw_ctype(L, n->inputs[0]);
  sbuf *c = &L->code;
  nd_conv_prologue(L, n, &gm, T);
  sb_printf(c, "    #pragma omp parallel for if(%lld > 65536)\n", (long long)(N * M * out_sp * Cg * ksz));
  sb_printf(c, "    for (int64_t nm = 0; nm < %lld; nm++) {\n      int64_t nn = nm / %lld, m = nm %% %lld, g = m / %lld;\n", (long long)(N * M),
            (long long)M, (long long)M, (long long)Mg);
  sb_printf(c, "      for (int64_t o = 0; o < %lld; o++) {\n        int64_t oi[%d], rem = o;\n", (long long)out_sp, sp);
  sb_printf(c, "        for (int q = %d - 1; q >= 0; q--) { oi[q] = rem %% OUT[q]; rem /= OUT[q]; }\n", sp);
  sb_printf(c, "        double acc = b ? b[m] : 0;\n");
  sb_printf(c, "        for (int64_t kk = 0; kk < %lld; kk++) {\n          int64_t r2 = kk, off = 0, mul = 1, inside = 1;\n", (long long)ksz);
  sb_printf(c, "          for (int q = %d - 1; q >= 0; q--) { int64_t ki = r2 %% K[q]; r2 /= K[q]; int64_t pos = oi[q] * S[q] - PB[q] + ki * D[q];\n"
               "            if (pos < 0 || pos >= IN[q]) { inside = 0; break; } off += pos * mul; mul *= IN[q]; }\n", sp);
  sb_printf(c, "          if (!inside) continue;\n");
  sb_printf(c, "          for (int64_t ci = 0; ci < %lld; ci++)\n            acc += (double)x[(nn * %lld + g * %lld + ci) * %lld + off] * w[(m * %lld + ci) * %lld + kk];\n",
            (long long)Cg, (long long)C, (long long)Cg, (long long)in_sp, (long long)Cg, (long long)ksz);
  sb_printf(c, "        }\n        y[nm * %lld + o] = (%s)acc;\n      }\n    }\n  }\n", (long long)out_sp, T);
  return ECG_OK;
}

/** ConvTranspose, N-D, float dtypes: each output element gathers the input positions
 *  and kernel taps that map onto it (o = i*s - pb + k*d). */
int emit_convtranspose_nd(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  if (!ecg_dtype_is_float(L->g->tensors[n->inputs[0]]->dtype) || lw_half(L, n->inputs[0]))
    return lw_node_err(L, n, e, "only float32/float64 ConvTranspose is supported");
  ecg_conv_geom gm;
  ECG_TRY(ecg_conv_geom_resolve(L->g, n, &gm, e));
  int sp = gm.sp;
  int64_t N = gm.n, C = gm.c, G = gm.group, M = gm.m, Mg = M / G, Cg = C / G;
  int64_t in_sp = prod(gm.in, sp), out_sp = prod(gm.out, sp), ksz = prod(gm.k, sp);
  const char *T = lw_ctype(L, n->inputs[0]);
  sbuf *c = &L->code;
  nd_conv_prologue(L, n, &gm, T);
  sb_printf(c, "    #pragma omp parallel for if(%lld > 65536)\n", (long long)(N * M * out_sp * Cg * ksz));
  sb_printf(c, "    for (int64_t nm = 0; nm < %lld; nm++) {\n      int64_t nn = nm / %lld, m = nm %% %lld, g = m / %lld, mg = m %% %lld;\n",
            (long long)(N * M), (long long)M, (long long)M, (long long)Mg, (long long)Mg);
  sb_printf(c, "      for (int64_t o = 0; o < %lld; o++) {\n        int64_t oi[%d], rem = o;\n", (long long)out_sp, sp);
  sb_printf(c, "        for (int q = %d - 1; q >= 0; q--) { oi[q] = rem %% OUT[q]; rem /= OUT[q]; }\n", sp);
  sb_printf(c, "        double acc = b ? b[m] : 0;\n");
  sb_printf(c, "        for (int64_t kk = 0; kk < %lld; kk++) {\n          int64_t r2 = kk, off = 0, mul = 1, ok = 1;\n", (long long)ksz);
  sb_printf(c, "          for (int q = %d - 1; q >= 0; q--) { int64_t ki = r2 %% K[q]; r2 /= K[q]; int64_t t = oi[q] + PB[q] - ki * D[q];\n"
               "            if (t < 0 || t %% S[q]) { ok = 0; break; } int64_t i = t / S[q]; if (i >= IN[q]) { ok = 0; break; } off += i * mul; mul *= IN[q]; }\n", sp);
  sb_printf(c, "          if (!ok) continue;\n");
  sb_printf(c, "          for (int64_t ci = 0; ci < %lld; ci++)\n            acc += (double)x[(nn * %lld + g * %lld + ci) * %lld + off] * w[((g * %lld + ci) * %lld + mg) * %lld + kk];\n",
            (long long)Cg, (long long)C, (long long)Cg, (long long)in_sp, (long long)Cg, (long long)Mg, (long long)ksz);
  sb_printf(c, "        }\n        y[nm * %lld + o] = (%s)acc;\n      }\n    }\n  }\n", (long long)out_sp, T);
  return ECG_OK;
}
