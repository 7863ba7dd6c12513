/* Emitter for Resize (opset 10-13+) and Upsample (7-9): nearest and (bi)linear modes
 * with the ONNX coordinate transformation modes.  Source coordinates are computed at
 * lowering time into static index/weight tables (shapes are static), so the kernel is
 * a gather over at most two interpolated axes (One-to-Many). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

static int node_err(ecg_lower *L, const ecg_node *n, ecg_err *e, const char *what) {
  char lb[256];
  return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): %s", ecg_node_label(L->g, n, lb, sizeof lb), n->op_type, what);
}

/* Per-axis scales from the scales input/attribute, or out/in when sizes are given. */
static void get_scales(ecg_lower *L, const ecg_node *n, int r, const int64_t *id, const int64_t *od, double *scale) {
  for (int d = 0; d < r; d++) scale[d] = id[d] ? (double)od[d] / (double)id[d] : 1;
  const ecg_tensor *s = NULL;
  const float *fa;
  int c = ecg_attr_floats(n, "scales", &fa);
  if (c == r) { for (int d = 0; d < r; d++) scale[d] = fa[d]; return; }
  int is_upsample = ecg_op_lookup(n->op_type, n->domain)->id == ECG_OP_Upsample;
  int idx = is_upsample || (n->opset > 0 && n->opset < 11) ? 1 : 2;
  if ((size_t)idx < n->n_inputs && n->inputs[idx] >= 0) s = L->g->tensors[n->inputs[idx]];
  if (s && s->is_const && ecg_tensor_numel(s) == r)
    for (int d = 0; d < r; d++) scale[d] = ecg_const_f64(s, d);
}

int emit_resize(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int64_t id[ECG_MAX_RANK], od[ECG_MAX_RANK], ist[ECG_MAX_RANK];
  int r = lw_dims(L, n->inputs[0], id);
  lw_dims(L, n->outputs[0], od);
  lw_strides(r, id, ist);
  double scale[ECG_MAX_RANK];
  get_scales(L, n, r, id, od, scale);
  int is_upsample = ecg_op_lookup(n->op_type, n->domain)->id == ECG_OP_Upsample;
  int legacy = is_upsample || (n->opset > 0 && n->opset < 11);
  char mode[32], ctm[40], nm[40];
  ecg_attr_s(n, "mode", "nearest", mode, sizeof mode);
  ecg_attr_s(n, "coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel", ctm, sizeof ctm);
  ecg_attr_s(n, "nearest_mode", legacy ? "floor" : "round_prefer_floor", nm, sizeof nm);
  int linear = !strcmp(mode, "linear") || !strcmp(mode, "bilinear");
  if (!linear && strcmp(mode, "nearest")) return node_err(L, n, e, "only nearest and linear modes are supported");
  if (!strcmp(ctm, "tf_crop_and_resize")) return node_err(L, n, e, "coordinate mode tf_crop_and_resize is not supported");
  int u = lw_uid(L);
  int n_interp = 0;
  for (int d = 0; d < r; d++) {
    if (linear && od[d] != id[d]) n_interp++;
  }
  if (n_interp > 2) return node_err(L, n, e, "linear resize of more than two axes is not supported");
  /* tables: src index i0[d][x], i1[d][x], weight w[d][x] */
  for (int d = 0; d < r; d++) {
    sb_printf(&L->decls, "static const int64_t rz%d_i0_%d[%lld] = {", u, d, (long long)od[d]);
    sbuf i1 = {0}, w = {0};
    for (int64_t x = 0; x < od[d]; x++) {
      double s = scale[d] > 0 ? scale[d] : 1, in_len = (double)id[d], out_len = (double)od[d], xo;
      if (!strcmp(ctm, "align_corners")) xo = out_len == 1 ? 0 : x * (in_len - 1) / (out_len - 1);
      else if (!strcmp(ctm, "asymmetric")) xo = x / s;
      else if (!strcmp(ctm, "pytorch_half_pixel")) xo = out_len > 1 ? (x + 0.5) / s - 0.5 : 0;
      else if (!strcmp(ctm, "tf_half_pixel_for_nn")) xo = (x + 0.5) / s;
      else xo = (x + 0.5) / s - 0.5; /* half_pixel */
      int64_t a, b;
      double wt = 0;
      if (linear && od[d] != id[d]) {
        if (xo < 0) xo = 0;
        if (xo > in_len - 1) xo = in_len - 1;
        a = (int64_t)floor(xo);
        b = a + 1 < id[d] ? a + 1 : id[d] - 1;
        wt = xo - (double)a;
      } else if (linear) {
        a = b = x;
      } else {
        double f = floor(xo);
        if (!strcmp(nm, "floor")) a = (int64_t)f;
        else if (!strcmp(nm, "ceil")) a = (int64_t)ceil(xo);
        else if (!strcmp(nm, "round_prefer_ceil")) a = (int64_t)(xo - f >= 0.5 ? f + 1 : f);
        else a = (int64_t)(xo - f > 0.5 ? f + 1 : f); /* round_prefer_floor */
        if (a < 0) a = 0;
        if (a > id[d] - 1) a = id[d] - 1;
        b = a;
      }
      sb_printf(&L->decls, "%s%lld", x ? "," : "", (long long)(a * ist[d]));
      sb_printf(&i1, "%s%lld", x ? "," : "", (long long)(b * ist[d]));
      sb_printf(&w, "%s%.9g", x ? "," : "", wt);
    }
    sb_printf(&L->decls, "};\nstatic const int64_t rz%d_i1_%d[%lld] = {%s};\n", u, d, (long long)od[d], i1.s ? i1.s : "0");
    sb_printf(&L->decls, "static const float rz%d_w_%d[%lld] = {%s};\n", u, d, (long long)od[d], w.s ? w.s : "0");
    sb_free(&i1);
    sb_free(&w);
  }
  /* loops over the output; the interpolated axes (at most 2) blend corners */
  int ax[2] = {-1, -1}, na = 0;
  for (int d = 0; d < r; d++) if (linear && od[d] != id[d]) ax[na++] = d;
  const char *T = lw_ctype(L, n->outputs[0]);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", T, lw_ptr(L, n->inputs[0]));
  sb_printf(c, "    %s *y = %s;\n    int64_t j = 0;\n", T, lw_ptr(L, n->outputs[0]));
  for (int d = 0; d < r; d++) sb_printf(c, "%*sfor (int64_t x%d = 0; x%d < %lld; x%d++) {\n", 4 + 2 * d, "", d, d, (long long)od[d], d);
  int ind = 4 + 2 * r;
  sb_printf(c, "%*sint64_t base = 0", ind, "");
  for (int d = 0; d < r; d++) if (d != ax[0] && d != ax[1]) sb_printf(c, " + rz%d_i0_%d[x%d]", u, d, d);
  sb_printf(c, ";\n");
  if (na == 0) sb_printf(c, "%*sy[j++] = x[base];\n", ind, "");
  else if (na == 1) {
    int a = ax[0];
    sb_printf(c, "%*sfloat w = rz%d_w_%d[x%d];\n%*sy[j++] = (%s)((1 - w) * x[base + rz%d_i0_%d[x%d]] + w * x[base + rz%d_i1_%d[x%d]]);\n", ind, "", u, a, a,
              ind, "", T, u, a, a, u, a, a);
  } else {
    int a = ax[0], b = ax[1];
    sb_printf(c, "%*sfloat wa = rz%d_w_%d[x%d], wb = rz%d_w_%d[x%d];\n", ind, "", u, a, a, u, b, b);
    sb_printf(c, "%*sint64_t a0 = rz%d_i0_%d[x%d], a1 = rz%d_i1_%d[x%d], b0 = rz%d_i0_%d[x%d], b1 = rz%d_i1_%d[x%d];\n", ind, "", u, a, a, u, a, a,
              u, b, b, u, b, b);
    sb_printf(c, "%*sy[j++] = (%s)((1 - wa) * ((1 - wb) * x[base + a0 + b0] + wb * x[base + a0 + b1]) + wa * ((1 - wb) * x[base + a1 + b0] + wb * x[base + a1 + b1]));\n",
              ind, "", T);
  }
  for (int d = r - 1; d >= 0; d--) sb_printf(c, "%*s}\n", 4 + 2 * d, "");
  sb_printf(c, "  }\n");
  return ECG_OK;
}
