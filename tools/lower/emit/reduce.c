/* Emitters for reductions and normalisations (Many-to-Many): Softmax, LogSoftmax,
 * Reduce*, ArgMax/ArgMin, LayerNormalization, InstanceNormalization.  Each views its
 * input as [outer, K, inner] around the reduced axes and accumulates in double. */
#include <stdlib.h>
#include <string.h>

#include "emit.h"



/* outer/K/inner sizes for the axis range [a0, a1) of dims. */
static void split3(int r, const int64_t *dims, int a0, int a1, int64_t *outer, int64_t *K, int64_t *inner) {
  *outer = *K = *inner = 1;
  for (int d = 0; d < r; d++) *(d < a0 ? outer : d < a1 ? K : inner) *= dims[d];
}

/** Softmax / LogSoftmax: opset < 13 flattens to 2-D at axis (default 1); opset >= 13
 *  normalises along the single axis (default -1). */
int emit_softmax(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], outer, K, inner;
  int r = lw_dims(L, n->inputs[0], xd);
  if (!ecg_dtype_is_float(L->g->tensors[n->inputs[0]]->dtype)) return lw_node_err(L, n, e, "needs a float input");
  int legacy = n->opset > 0 && n->opset < 13;
  int axis = lw_axis(ecg_attr_i(n, "axis", legacy ? 1 : -1), r);
  if (axis < 0 && r > 0) return lw_node_err(L, n, e, "axis out of range");
  if (r == 0) axis = 0;
  split3(r, xd, axis, legacy ? r : axis + 1, &outer, &K, &inner);
  (void)outer; (void)inner;
  /* sizes through lw_dim_prod: numbers, or run-time expressions in a dynamic build */
  int x = n->inputs[0], end = legacy ? r : axis + 1;
  char sK[768], sI[768], sKI[768], sO[1600], sW[768];
  snprintf(sK, sizeof sK, "%s", lw_dim_prod(L, x, axis, end));
  snprintf(sI, sizeof sI, "%s", lw_dim_prod(L, x, end, r));
  snprintf(sKI, sizeof sKI, "%s", lw_dim_prod(L, x, axis, r));
  snprintf(sW, sizeof sW, "%s", lw_dim_prod(L, x, 0, r));
  if (lw_tensor_dyn(L, x)) snprintf(sO, sizeof sO, "(%s*%s)", lw_dim_prod(L, x, 0, axis), sI);
  else snprintf(sO, sizeof sO, "%lld", (long long)(outer * inner));
  int logsm = lw_op(n) == ECG_OP_LogSoftmax;
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    %sconst %s *x = %s;\n", lw_gq(L), T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %s%s *y = %s;\n", lw_gq(L), T, lw_ptr(L, n->outputs[0]));
  lw_cl_work(L, outer * inner); /* OpenCL: its work-items (nothing for C) */
  lw_par_for_expr(L, 4, "j", sO, sW, 16384);
  sb_printf(c, "      int64_t base = (j / %s) * %s + j %% %s;\n", sI, sKI, sI);
  sb_printf(c, "      %s mx = x[base];\n      #pragma omp simd reduction(max:mx)\n      for (int64_t k = 1; k < %s; k++) { %s v = x[base + k * %s]; mx = v > mx ? v : mx; }\n", T,
            sK, T, sI);
  sb_printf(c, "      if (mx != mx) { for (int64_t k = 0; k < %s; k++) y[base + k * %s] = mx; continue; }\n", sK, sI);
  if (logsm) {
    sb_printf(c, "      %s sum = 0;\n      #pragma omp simd reduction(+:sum)\n      for (int64_t k = 0; k < %s; k++) sum += ecg_exp(x[base + k * %s] - mx);\n", T,
              sK, sI);
    sb_printf(c, "      %s ls = (%s)log(sum);\n      for (int64_t k = 0; k < %s; k++) y[base + k * %s] = x[base + k * %s] - mx - ls;\n", T, T,
              sK, sI, sI);
  } else {
    sb_printf(c, "      %s sum = 0;\n      #pragma omp simd reduction(+:sum)\n      for (int64_t k = 0; k < %s; k++) { %s v = ecg_exp(x[base + k * %s] - mx); y[base + k * %s] = v; sum += v; }\n",
              T, sK, T, sI, sI);
    sb_printf(c, "      %s inv = (%s)1 / sum;\n      for (int64_t k = 0; k < %s; k++) y[base + k * %s] *= inv;\n", T, T, sK, sI);
  }
  sb_printf(c, "    }\n  }\n");
  return ECG_OK;
}

/* The accumulation of a Reduce* as C, from its row of the reduction table
 * (ecg_reduction_of): *init the accumulator's initial value for the output dtype, step
 * "acc = combine(acc, map(elem))"'s right-hand side, fin the finish over fin_acc and count
 * ("" when there is none). */
static int reduce_c(const ecg_lower *L, const ecg_node *n, const char *acc, const char *elem, const char *fin_acc,
                    const char *count, const char **init, char *step, char *fin, size_t n_buf, ecg_err *e) {
  const ecg_reduction *r = ecg_reduction_of(lw_op(n));
  int dt = L->g->tensors[n->outputs[0]]->dtype;
  *init = r ? ecg_reduction_identity_c(r, dt) : NULL;
  if (!*init) return lw_node_err(L, n, e, "reduction to %s is not supported", ecg_dtype_name(dt));
  char mapped[128];
  snprintf(mapped, sizeof mapped, r->c_map, elem);
  snprintf(step, n_buf, r->c_combine, acc, mapped);
  if (r->fin == ECG_RED_FIN_NONE) fin[0] = 0;
  else snprintf(fin, n_buf, r->c_finish, fin_acc, count);
  return ECG_OK;
}

/* Reduce* whose axes are a graph input (known at run time; the output shape is static,
 * declared by the model): the kernel builds the reduced-axis mask from the axes values,
 * checks it against the compiled output size (a mismatch leaves the output zeroed rather
 * than writing out of bounds), then accumulates with run-time output strides. */
static int emit_reduce_runtime(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd);
  const char *T = lw_ctype(L, n->outputs[0]), *init;
  char acc[256], fin[256];
  ECG_TRY(reduce_c(L, n, "y[o]", "x[j]", "y[i]", "cnt", &init, acc, fin, sizeof acc, e));
  int64_t na = ecg_tensor_numel(L->g->tensors[n->inputs[1]]), xn = ecg_tensor_numel(L->g->tensors[n->inputs[0]]);
  int64_t on = ecg_tensor_numel(L->g->tensors[n->outputs[0]]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    static const int64_t dim[%d] = {", r > 0 ? r : 1);
  for (int d = 0; d < r; d++) sb_printf(c, "%s%lld", d ? ", " : "", (long long)xd[d]);
  sb_printf(c, "%s};\n    int red[%d] = {0};\n", r ? "" : "0", r > 0 ? r : 1);
  sb_printf(c, "    for (int64_t k = 0; k < %lld; k++) { int64_t a = (int64_t)%s[k]; if (a < 0) a += %d; if (a >= 0 && a < %d) red[a] = 1; }\n",
            (long long)na, lw_ptr(L, n->inputs[1]), r, r);
  if (na == 0 && !ecg_attr_i(n, "noop_with_empty_axes", 0)) sb_printf(c, "    for (int d = 0; d < %d; d++) red[d] = 1;\n", r);
  sb_printf(c, "    int64_t ost[%d], s = 1;\n    double cnt = 1;\n", r > 0 ? r : 1);
  sb_printf(c, "    for (int d = %d - 1; d >= 0; d--) { if (red[d]) { ost[d] = 0; cnt *= dim[d]; } else { ost[d] = s; s *= dim[d]; } }\n", r);
  sb_printf(c, "    for (int64_t i = 0; i < %lld; i++) y[i] = (%s)%s;\n", (long long)on, T, init);
  sb_printf(c, "    if (s == %lld) {\n      for (int64_t j = 0; j < %lld; j++) {\n        int64_t rem = j, o = 0;\n", (long long)on, (long long)xn);
  sb_printf(c, "        for (int d = %d - 1; d >= 0; d--) { o += (rem %% dim[d]) * ost[d]; rem /= dim[d]; }\n", r);
  sb_printf(c, "        y[o] = (%s)(%s);\n      }\n", T, acc);
  if (fin[0]) sb_printf(c, "      for (int64_t i = 0; i < %lld; i++) y[i] = (%s)(%s);\n", (long long)on, T, fin);
  sb_printf(c, "    } else {\n      for (int64_t i = 0; i < %lld; i++) y[i] = 0;\n    }\n  }\n", (long long)on);
  return ECG_OK;
}

/* A Reduce* as one independent loop over output elements (each accumulates its own
 * reduced index space in a register): the OpenCL printer's form, where the C form's shared
 * accumulation into y would race between work-items. red[d]: dim d is reduced. */
static int reduce_by_output(ecg_lower *L, const ecg_node *n, int r, const int64_t *xd, const int *red, int64_t count,
                            ecg_err *e) {
  int64_t xst[ECG_MAX_RANK];
  lw_strides(r, xd, xst);
  const char *T = lw_ctype(L, n->outputs[0]), *init;
  char acc[256], fin[256], count_c[64];
  snprintf(count_c, sizeof count_c, "(%s)%lld", T, (long long)count);
  ECG_TRY(reduce_c(L, n, "acc", "x[b + o]", "acc", count_c, &init, acc, fin, sizeof acc, e));
  sbuf *c = &L->code;
  sb_printf(c, "  {\n  %sconst %s *x = %s;\n", lw_gq(L), T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "  %s%s *y = %s;\n", lw_gq(L), T, lw_ptr(L, n->outputs[0]));
  lw_par_for(L, 2, "g", ecg_tensor_numel(L->g->tensors[n->outputs[0]]), ecg_tensor_numel(L->g->tensors[n->inputs[0]]), 32768);
  sb_printf(c, "    int64_t q = g, b = 0;\n");
  for (int d = r - 1; d >= 0; d--)
    if (!red[d] && xd[d] != 1) sb_printf(c, "    b += q %% %lld * %lld; q /= %lld;\n", (long long)xd[d], (long long)xst[d], (long long)xd[d]);
  sb_printf(c, "    %s acc = (%s)%s;\n    for (int64_t k = 0; k < %lld; k++) {\n      int64_t p = k, o = 0;\n", T, T, init, (long long)count);
  for (int d = r - 1; d >= 0; d--)
    if (red[d] && xd[d] != 1) sb_printf(c, "      o += p %% %lld * %lld; p /= %lld;\n", (long long)xd[d], (long long)xst[d], (long long)xd[d]);
  sb_printf(c, "      acc = (%s)(%s);\n    }\n    y[g] = (%s)(%s);\n  }\n  }\n", T, acc, T, fin[0] ? fin : "acc");
  return ECG_OK;
}

/* A Reduce* over trailing axes in C (output element g reduces the contiguous run
 * x[g * count .. (g + 1) * count)): one loop over the outputs, each run accumulated in four
 * partial accumulators (four independent dependency chains) merged at the end with the
 * reduction's own combine (ecg_reduction c_combine on two accumulators: every reduction of
 * the table is associative and commutative), then finished. The loop nest of emit_reduce
 * keeps one accumulator per output in y: a chain of count dependent steps per output
 * (mnasnet1_0's ReduceMean over 1280x7x7: 42 us, ONNX Runtime 14). The order of the
 * additions differs from it (rounding, within the comparisons' tolerance). */
static int reduce_rows(ecg_lower *L, const ecg_node *n, int64_t on, int64_t count, ecg_err *e) {
  const ecg_reduction *r = ecg_reduction_of(lw_op(n));
  const char *T = lw_ctype(L, n->outputs[0]), *init;
  char step[4][256], fin[256], count_c[64], merge[3][256];
  snprintf(count_c, sizeof count_c, "(%s)%lld", T, (long long)count);
  const char *acc[4] = {"a0", "a1", "a2", "a3"}, *elem[4] = {"xr[k]", "xr[k + 1]", "xr[k + 2]", "xr[k + 3]"};
  for (int q = 0; q < 4; q++) ECG_TRY(reduce_c(L, n, acc[q], elem[q], "a0", count_c, &init, step[q], fin, sizeof fin, e));
  snprintf(merge[0], sizeof merge[0], r->c_combine, "a0", "a1");
  snprintf(merge[1], sizeof merge[1], r->c_combine, "a2", "a3");
  snprintf(merge[2], sizeof merge[2], r->c_combine, "a0", "a2");
  sbuf *c = &L->code;
  sb_printf(c, "  {\n  const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "  %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  /* threads only for a run over 4 MiB of float32: mnasnet1_0's 1280x49 took 8.6 us on one
   * thread, 52 on two (the team's start and the input in the other core's cache) */
  lw_par_for(L, 2, "g", on, on * count, (int64_t)1 << 20);
  sb_printf(c, "    const %s *xr = x + g * %lld;\n", T, (long long)count);
  sb_printf(c, "    %s a0 = (%s)%s, a1 = a0, a2 = a0, a3 = a0;\n    int64_t k = 0;\n", T, T, init);
  sb_printf(c, "    for (; k + 4 <= %lld; k += 4) {\n", (long long)count);
  for (int q = 0; q < 4; q++) sb_printf(c, "      %s = (%s)(%s);\n", acc[q], T, step[q]);
  sb_printf(c, "    }\n    for (; k < %lld; k++) a0 = (%s)(%s);\n", (long long)count, T, step[0]); /* a0's step on xr[k] */
  sb_printf(c, "    a0 = (%s)(%s);\n    a2 = (%s)(%s);\n    a0 = (%s)(%s);\n", T, merge[0], T, merge[1], T, merge[2]);
  sb_printf(c, "    y[g] = (%s)(%s);\n  }\n  }\n", T, fin[0] ? fin : "a0");
  return ECG_OK;
}

/** ReduceSum/Mean/Max/Min/Prod/L2/SumSquare over any set of axes: the output is the
 *  accumulator; operand 0 (output) has stride 0 along reduced axes. Reduced axes that are
 *  the trailing ones (of 8 or more elements): reduce_rows. */
int emit_reduce(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], st[2][ECG_MAX_RANK], xst[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd), red[ECG_MAX_RANK];
  if (!ecg_attr_find(n, "axes") && n->n_inputs > 1 && n->inputs[1] >= 0 && !L->g->tensors[n->inputs[1]]->is_const)
    return L->target == LW_TARGET_OPENCL ? lw_node_err(L, n, e, "--target opencl needs constant axes")
           : lw_node_dyn(L, n)            ? lw_node_err(L, n, e, "run-time axes are not supported with symbolic dims yet")
                                          : emit_reduce_runtime(L, n, e);
  if (ecg_reduced_dims(L->g, n, r, red)) return lw_node_err(L, n, e, "axes must be a constant within the rank");
  lw_strides(r, xd, xst);
  int64_t s = 1, count = 1;
  for (int d = r - 1; d >= 0; d--) {
    st[0][d] = red[d] ? 0 : s;
    if (!red[d]) s *= xd[d]; else count *= xd[d];
    st[1][d] = xst[d];
  }
  const char *T = lw_ctype(L, n->outputs[0]), *init;
  char acc[2048], fin[2048], count_c[800];
  snprintf(count_c, sizeof count_c, "(%s)%lld", T, (long long)count);
  if (lw_node_dyn(L, n)) { /* a dynamic build: the same loop nest over run-time sizes */
    int x = n->inputs[0], y = n->outputs[0];
    char cnt[768] = "1", sy[ECG_MAX_RANK][768], sx[ECG_MAX_RANK][768], on[768];
    const char *stp[2][ECG_MAX_RANK];
    size_t too_long = 0; /* an expression longer than its buffer: refused, never truncated */
    for (int d = 0; d < r; d++) {
      if (red[d]) too_long |= (size_t)snprintf(cnt + strlen(cnt), sizeof cnt - strlen(cnt), "*(%s)", lw_dim(L, x, d)) >= sizeof cnt - strlen(cnt);
      int len = snprintf(sy[d], sizeof sy[d], "1");
      for (int q = d + 1; q < r && len < (int)sizeof sy[d]; q++)
        if (!red[q]) len += snprintf(sy[d] + len, sizeof sy[d] - (size_t)len, "*(%s)", lw_dim(L, x, q));
      too_long |= len >= (int)sizeof sy[d];
      snprintf(sx[d], sizeof sx[d], "%s", lw_dim_prod(L, x, d + 1, r));
      stp[0][d] = red[d] ? NULL : sy[d];
      stp[1][d] = sx[d];
    }
    if (too_long) return lw_node_err(L, n, e, "a size expression too long for this emitter");
    snprintf(count_c, sizeof count_c, "(%s)(%s)", T, cnt);
    snprintf(on, sizeof on, "%s", lw_dim_prod(L, y, 0, (int)L->g->tensors[y]->n_dims));
    ECG_TRY(reduce_c(L, n, "y[o0]", "x[o1]", "y[i]", count_c, &init, acc, fin, sizeof acc, e));
    sb_printf(&L->code, "  {\n  const %s *x = %s;\n", T, lw_ptr(L, x));
    sb_printf(&L->code, "  %s *y = %s;\n", T, lw_ptr(L, y));
    sb_printf(&L->code, "  for (int64_t i = 0; i < %s; i++) y[i] = (%s)%s;\n", on, T, init);
    char body[2100];
    snprintf(body, sizeof body, "y[o0] = %s;", acc);
    lw_dloops_st(L, x, 2, stp, NULL, NULL, body, 1);
    if (fin[0]) sb_printf(&L->code, "  for (int64_t i = 0; i < %s; i++) y[i] = (%s)(%s);\n", on, T, fin);
    sb_printf(&L->code, "  }\n");
    return ECG_OK;
  }
  ECG_TRY(reduce_c(L, n, "y[o0]", "x[o1]", "y[i]", count_c, &init, acc, fin, sizeof acc, e));
  int64_t on = ecg_tensor_numel(L->g->tensors[n->outputs[0]]);
  sbuf *c = &L->code;
  if (L->target == LW_TARGET_OPENCL) return reduce_by_output(L, n, r, xd, red, count, e);
  int trailing = count >= 8 && on > 0, seen = 0; /* the reduced dims (of extent > 1) all after the kept ones */
  for (int d = 0; d < r; d++) {
    if (xd[d] == 1) continue;
    if (red[d]) seen = 1;
    else if (seen) trailing = 0;
  }
  if (trailing) return reduce_rows(L, n, on, count, e);
  sb_printf(c, "  {\n  const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "  %s *y = %s;\n", T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "  for (int64_t i = 0; i < %lld; i++) y[i] = (%s)%s;\n", (long long)on, T, init);
  char body[2100];
  snprintf(body, sizeof body, "y[o0] = %s;", acc);
  lw_loops(L, r, xd, 2, st, NULL, body, 0);
  if (fin[0]) sb_printf(c, "  for (int64_t i = 0; i < %lld; i++) y[i] = (%s)(%s);\n", (long long)on, T, fin);
  sb_printf(c, "  }\n");
  return ECG_OK;
}

/** ArgMax / ArgMin along axis (int64 output; ties take the first, or the last with
 *  select_last_index). */
int emit_argreduce(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], outer, K, inner;
  int r = lw_dims(L, n->inputs[0], xd);
  int axis = lw_axis(ecg_attr_i(n, "axis", 0), r);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  split3(r, xd, axis, axis + 1, &outer, &K, &inner);
  int last = (int)ecg_attr_i(n, "select_last_index", 0), mx = lw_op(n) == ECG_OP_ArgMax;
  const char *T = lw_ctype(L, n->inputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    int64_t *y = %s;\n", lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)(outer * inner));
  sb_printf(c, "      int64_t base = (j / %lld) * %lld + j %% %lld, best = 0;\n", (long long)inner, (long long)(K * inner), (long long)inner);
  sb_printf(c, "      %s bv = x[base];\n", T);
  sb_printf(c, "      for (int64_t k = 1; k < %lld; k++) { %s v = x[base + k * %lld]; if (v %s bv) { bv = v; best = k; } }\n", (long long)K, T,
            (long long)inner, mx ? (last ? ">=" : ">") : (last ? "<=" : "<"));
  sb_printf(c, "      y[j] = best;\n    }\n  }\n");
  return ECG_OK;
}

/** LayerNormalization (axis, epsilon; optional Mean / InvStdDev outputs) and
 *  InstanceNormalization (per n, c over the spatial dims; scale, B per channel). */
int emit_norm(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], outer, K, inner;
  int r = lw_dims(L, n->inputs[0], xd);
  if (L->g->tensors[n->inputs[0]]->dtype != ECG_FLOAT) return lw_node_err(L, n, e, "only float32 is supported");
  int inst = lw_op(n) == ECG_OP_InstanceNormalization;
  int axis = inst ? 2 : lw_axis(ecg_attr_i(n, "axis", -1), r);
  if (axis < 0 || (inst && r < 3)) return lw_node_err(L, n, e, "axis out of range");
  split3(r, xd, axis, r, &outer, &K, &inner);
  float eps = ecg_attr_f(n, "epsilon", 1e-5f);
  int64_t sn = n->inputs[1] >= 0 ? ecg_tensor_numel(L->g->tensors[n->inputs[1]]) : 1;
  int has_b = n->n_inputs > 2 && n->inputs[2] >= 0;
  int64_t bn = has_b ? ecg_tensor_numel(L->g->tensors[n->inputs[2]]) : 1;
  sbuf *c = &L->code;
  const char *G = lw_gq(L), *DT = L->target == LW_TARGET_OPENCL ? "ecg_dbl" : "double"; /* model.cl: ecg_dbl */
  sb_printf(c, "  {\n    %sconst float *x = %s;\n", G, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %sfloat *y = %s;\n", G, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    %sconst float *sc = %s;\n", G, lw_ptr(L, n->inputs[1]));
  sb_printf(c, "    %sconst float *bi = %s;\n", G, has_b ? lw_ptr(L, n->inputs[2]) : "0");
  lw_par_for(L, 4, "j", outer, outer * K, 16384);
  sb_printf(c, "      %sconst float *xr = x + j * %lld;\n      %sfloat *yr = y + j * %lld;\n", G, (long long)K, G, (long long)K);
  sb_printf(c, "      %s mean = 0, var = 0;\n      for (int64_t k = 0; k < %lld; k++) mean += xr[k];\n      mean /= %lld;\n",
            DT, (long long)K, (long long)K);
  sb_printf(c, "      for (int64_t k = 0; k < %lld; k++) { %s d = xr[k] - mean; var += d * d; }\n      var /= %lld;\n",
            (long long)K, DT, (long long)K);
  sb_printf(c, "      float inv = (float)(1.0 / sqrt(var + %.9g));\n", eps);
  if (inst) {
    int64_t C = xd[1];
    sb_printf(c, "      float s = sc[j %% %lld], b = bi ? bi[j %% %lld] : 0.0f;\n", (long long)C, (long long)C);
    sb_printf(c, "      for (int64_t k = 0; k < %lld; k++) yr[k] = ((float)(xr[k] - mean) * inv) * s + b;\n", (long long)K);
  } else {
    sb_printf(c, "      for (int64_t k = 0; k < %lld; k++) yr[k] = ((float)(xr[k] - mean) * inv) * sc[k %% %lld] + (bi ? bi[k %% %lld] : 0.0f);\n",
              (long long)K, (long long)sn, (long long)bn);
    if (n->n_outputs > 1 && n->outputs[1] >= 0) sb_printf(c, "      %s[j] = (float)mean;\n", lw_ptr(L, n->outputs[1]));
    if (n->n_outputs > 2 && n->outputs[2] >= 0) sb_printf(c, "      %s[j] = inv;\n", lw_ptr(L, n->outputs[2]));
  }
  (void)inner;
  sb_printf(c, "    }\n  }\n");
  return ECG_OK;
}

/** Hardmax: 1 at the first maximum along axis (opset < 13: of the 2-D view at axis,
 *  default 1; from 13: the single axis, default -1), 0 elsewhere. */
int emit_hardmax(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], outer, K, inner;
  int r = lw_dims(L, n->inputs[0], xd);
  int legacy = n->opset > 0 && n->opset < 13;
  int axis = lw_axis(ecg_attr_i(n, "axis", legacy ? 1 : -1), r);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  split3(r, xd, axis, legacy ? r : axis + 1, &outer, &K, &inner);
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n    %s *y = %s;\n", T, lw_ptr(L, n->inputs[0]), T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)(outer * inner));
  sb_printf(c, "      int64_t base = (j / %lld) * %lld + j %% %lld, best = 0;\n", (long long)inner, (long long)(K * inner), (long long)inner);
  sb_printf(c, "      for (int64_t k = 1; k < %lld; k++) if (x[base + k * %lld] > x[base + best * %lld]) best = k;\n", (long long)K, (long long)inner, (long long)inner);
  sb_printf(c, "      for (int64_t k = 0; k < %lld; k++) y[base + k * %lld] = (%s)(k == best);\n    }\n  }\n", (long long)K, (long long)inner, T);
  return ECG_OK;
}

/** CumSum(x, axis): running sums along axis (exclusive, reverse attributes).  The axis
 *  is a scalar input read at run time: one loop nest per possible axis. */
int emit_cumsum(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], outer, K, inner;
  int r = lw_dims(L, n->inputs[0], xd);
  if (r < 1) return lw_node_err(L, n, e, "input must have rank >= 1");
  int excl = ecg_attr_i(n, "exclusive", 0) != 0, rev = ecg_attr_i(n, "reverse", 0) != 0;
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n    %s *y = %s;\n", T, lw_ptr(L, n->inputs[0]), T, lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    int64_t ax = (int64_t)%s[0];\n    if (ax < 0) ax += %d;\n    switch (ax) {\n", lw_ptr(L, n->inputs[1]), r);
  for (int a = 0; a < r; a++) {
    split3(r, xd, a, a + 1, &outer, &K, &inner);
    sb_printf(c, "    case %d:\n      for (int64_t j = 0; j < %lld; j++) {\n", a, (long long)(outer * inner));
    sb_printf(c, "        int64_t base = (j / %lld) * %lld + j %% %lld;\n        %s acc = 0;\n", (long long)inner, (long long)(K * inner), (long long)inner, T);
    sb_printf(c, "        for (int64_t q = 0; q < %lld; q++) {\n          int64_t k = q;\n", (long long)K);
    if (rev) sb_printf(c, "          k = %lld - 1 - q;\n", (long long)K);
    sb_printf(c, "          %s v = x[base + k * %lld];\n", T, (long long)inner);
    if (excl) sb_printf(c, "          y[base + k * %lld] = acc; acc += v;\n", (long long)inner);
    else sb_printf(c, "          acc += v; y[base + k * %lld] = acc;\n", (long long)inner);
    sb_printf(c, "        }\n      }\n      break;\n");
  }
  sb_printf(c, "    default: break;\n    }\n  }\n");
  return ECG_OK;
}

/** GroupNormalization (18, 21): X [N, C, D...] float32, num_groups G; each (n, group) is
 *  the contiguous run of C/G channels x spatial values, normalised with its own mean and
 *  biased variance (double accumulation), y = (x - mean) / sqrt(var + epsilon) * scale + bias
 *  with scale/bias per group (opset 18) or per channel (21). */
int emit_groupnorm(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], xd);
  if (L->g->tensors[n->inputs[0]]->dtype != ECG_FLOAT) return lw_node_err(L, n, e, "only float32 is supported");
  int64_t G = ecg_attr_i(n, "num_groups", 0), C = r >= 2 ? xd[1] : 0, S = 1;
  if (r < 2 || G <= 0 || C % G) return lw_node_err(L, n, e, "num_groups must divide the channels");
  for (int d = 2; d < r; d++) S *= xd[d];
  int per_group = n->opset > 0 && n->opset < 21;
  int64_t Cg = C / G, K = Cg * S;
  float eps = ecg_attr_f(n, "epsilon", 1e-5f);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const float *x = %s, *sc = %s, *bi = %s;\n", lw_ptr(L, n->inputs[0]), lw_ptr(L, n->inputs[1]), lw_ptr(L, n->inputs[2]));
  sb_printf(c, "    float *y = %s;\n", lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 16384)\n", (long long)(xd[0] * C * S));
  sb_printf(c, "    for (int64_t j = 0; j < %lld; j++) { /* (batch, group) */\n", (long long)(xd[0] * G));
  sb_printf(c, "      const float *xr = x + j * %lld;\n      float *yr = y + j * %lld;\n", (long long)K, (long long)K);
  sb_printf(c, "      double mean = 0, var = 0;\n      for (int64_t k = 0; k < %lld; k++) mean += xr[k];\n      mean /= %lld;\n",
            (long long)K, (long long)K);
  sb_printf(c, "      for (int64_t k = 0; k < %lld; k++) { double d = xr[k] - mean; var += d * d; }\n      var /= %lld;\n",
            (long long)K, (long long)K);
  sb_printf(c, "      float inv = (float)(1.0 / sqrt(var + %.9g));\n      int64_t grp = j %% %lld;\n", eps, (long long)G);
  sb_printf(c, "      for (int64_t ch = 0; ch < %lld; ch++) {\n", (long long)Cg);
  if (per_group) sb_printf(c, "        float s = sc[grp], b = bi[grp];\n");
  else sb_printf(c, "        float s = sc[grp * %lld + ch], b = bi[grp * %lld + ch];\n", (long long)Cg, (long long)Cg);
  sb_printf(c, "        for (int64_t k = ch * %lld; k < (ch + 1) * %lld; k++) yr[k] = (float)(xr[k] - mean) * inv * s + b;\n      }\n",
            (long long)S, (long long)S);
  sb_printf(c, "    }\n  }\n");
  return ECG_OK;
}

/** RMSNormalization (23): X [outer, K] float32 with K the product of dims axis..r-1;
 *  y = x / sqrt(mean(x^2) + epsilon) * scale, the mean in double, scale indexed through its
 *  broadcast strides over the normalized dims. */
int emit_rmsnorm(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t xd[ECG_MAX_RANK], sd[ECG_MAX_RANK], outer, K, inner;
  int r = lw_dims(L, n->inputs[0], xd), rs = lw_dims(L, n->inputs[1], sd);
  if (L->g->tensors[n->inputs[0]]->dtype != ECG_FLOAT || L->g->tensors[n->inputs[1]]->dtype != ECG_FLOAT)
    return lw_node_err(L, n, e, "only float32 is supported");
  int axis = lw_axis(ecg_attr_i(n, "axis", -1), r);
  if (axis < 0) return lw_node_err(L, n, e, "axis out of range");
  split3(r, xd, axis, r, &outer, &K, &inner);
  (void)inner;
  float eps = ecg_attr_f(n, "epsilon", 1e-5f);
  /* scale's stride along each normalized dim (0 where it broadcasts) */
  int64_t sst[ECG_MAX_RANK], acc = 1;
  for (int i = r - 1; i >= axis; i--) {
    int k = i - (r - rs);
    int64_t sdim = k >= 0 ? sd[k] : 1;
    sst[i] = sdim == 1 ? 0 : acc;
    acc *= sdim;
  }
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const float *x = %s, *sc = %s;\n    float *y = %s;\n", lw_ptr(L, n->inputs[0]), lw_ptr(L, n->inputs[1]),
            lw_ptr(L, n->outputs[0]));
  sb_printf(c, "    #pragma omp parallel for if(%lld > 16384)\n", (long long)(outer * K));
  sb_printf(c, "    for (int64_t j = 0; j < %lld; j++) {\n      const float *xr = x + j * %lld;\n      float *yr = y + j * %lld;\n",
            (long long)outer, (long long)K, (long long)K);
  sb_printf(c, "      double ss = 0;\n      for (int64_t k = 0; k < %lld; k++) ss += (double)xr[k] * xr[k];\n", (long long)K);
  sb_printf(c, "      float inv = (float)(1.0 / sqrt(ss / %lld + %.9g));\n", (long long)K, eps);
  sb_printf(c, "      for (int64_t k = 0; k < %lld; k++) {\n        int64_t rem = k, si = 0;\n", (long long)K);
  for (int i = r - 1; i >= axis; i--)
    sb_printf(c, "        si += (rem %% %lld) * %lld; rem /= %lld;\n", (long long)xd[i], (long long)sst[i], (long long)xd[i]);
  sb_printf(c, "        yr[k] = (xr[k] * inv) * sc[si];\n      }\n    }\n  }\n");
  return ECG_OK;
}
