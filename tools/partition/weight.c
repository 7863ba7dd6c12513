/* Operator weights, AGO Eq. 1 (Xu et al., INFOCOM 2023, §IV-A), and the weights file
 * that holds c, b and Td (tools/partition/partition.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

/* tools/partition/data/weights.txt, embedded by scripts/embed.sh. */
extern const struct { const char *name; const unsigned char *data; size_t size; } pt_weight_files[];

int pt_weights_parse(const char *name, const char *text, size_t len, pt_weights *w, ecg_err *e) {
  bool have_c = false, have_b = false, have_t = false;
  w->fitted = false;
  size_t pos = 0;
  for (int line = 1; pos < len; line++) {
    size_t end = pos;
    while (end < len && text[end] != '\n') end++;
    char buf[256];
    size_t n = end - pos < sizeof buf - 1 ? end - pos : sizeof buf - 1;
    memcpy(buf, text + pos, n);
    buf[n] = 0;
    pos = end + 1;
    char *hash = strchr(buf, '#');
    if (hash) *hash = 0;
    char key[64], val[128], extra[8];
    int got = sscanf(buf, "%63s %127s %7s", key, val, extra);
    if (got <= 0) continue;
    if (got != 2) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: expected 'key value'", name, line);
    char *rest;
    errno = 0;
    double v = strtod(val, &rest);
    if (*rest || errno || !isfinite(v)) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: '%s' is not a number", name, line, val);
    if (!strcmp(key, "c")) { w->c = v; have_c = true; }
    else if (!strcmp(key, "b")) { w->b = v; have_b = true; }
    else if (!strcmp(key, "max_weight")) {
      if (v <= 0) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: max_weight must be > 0", name, line);
      w->max_weight = v;
      have_t = true;
    } else if (!strcmp(key, "fitted")) w->fitted = v != 0;
    else return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: unknown key '%s' (known: c, b, max_weight, fitted)", name, line, key);
  }
  if (!have_c || !have_b || !have_t)
    return ecg_errf(e, ECG_ERR_INPUT, "%s: missing key '%s'", name, !have_c ? "c" : !have_b ? "b" : "max_weight");
  snprintf(w->source, sizeof w->source, "%s", name);
  return ECG_OK;
}

int pt_weights_load(const char *path, pt_weights *w, ecg_err *e) {
  if (!path) {
    for (int i = 0; pt_weight_files[i].name; i++)
      if (!strcmp(pt_weight_files[i].name, "weights.txt"))
        return pt_weights_parse("built-in weights.txt", (const char *)pt_weight_files[i].data, pt_weight_files[i].size, w, e);
    return ecg_errf(e, ECG_ERR_INTERNAL, "no built-in weights.txt");
  }
  FILE *f = fopen(path, "rb");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  enum { MAX_TEXT = 1 << 16 }; /* a weights file is a few lines */
  char *buf = malloc(MAX_TEXT);
  if (!buf) { fclose(f); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  size_t len = fread(buf, 1, MAX_TEXT, f);
  int rc = ferror(f) ? ecg_errf(e, ECG_ERR_INPUT, "%s: read error", path)
           : len == MAX_TEXT ? ecg_errf(e, ECG_ERR_INPUT, "%s: 64 KiB or more, not a weights file", path)
                             : pt_weights_parse(path, buf, len, w, e);
  fclose(f);
  free(buf);
  return rc;
}

/* Number of elements of a static tensor, or -1. */
static int64_t numel(const ecg_tensor *t) { return t ? ecg_tensor_numel(t) : -1; }

int pt_loop_nest(const ecg_graph *g, const ecg_node *n, int64_t *ext, int max, ecg_err *e) {
  char lb[256];
  int k = 0;
  ecg_conv_geom gm;
  ecg_err ignore;
  if (ecg_conv_geom_resolve(g, n, &gm, &ignore) == ECG_OK) { /* the 2+sp+1+sp loop nest of a sliding window */
    bool known = gm.n >= 0 && gm.m >= 0 && gm.c >= 0;
    for (int s = 0; s < gm.sp; s++) known = known && gm.out[s] >= 0;
    if (!known)
      return -ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): symbolic dimension, its weight needs static shapes (fix them with onnx2ecg --input-shape)",
                      ecg_node_label(g, n, lb, sizeof lb), n->op_type);
    if (2 + 2 * gm.sp + 1 > max) return -ecg_errf(e, ECG_ERR_INTERNAL, "pt_loop_nest: more than %d loops", max);
    ext[k++] = gm.n;
    ext[k++] = gm.m;
    for (int s = 0; s < gm.sp; s++) ext[k++] = gm.out[s];
    if (!gm.pool) ext[k++] = gm.c / gm.group;
    for (int s = 0; s < gm.sp; s++) ext[k++] = gm.k[s];
    return k;
  }
  const ecg_tensor *y = ecg_node_output(g, n, 0);
  if (!y || !ecg_tensor_static(y))
    return -ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): output '%s' has a symbolic or unknown shape, its weight needs static shapes (fix them with onnx2ecg --input-shape)",
                    ecg_node_label(g, n, lb, sizeof lb), n->op_type, y ? y->name : "?");
  int64_t dims[ECG_MAX_RANK];
  int r = ecg_tensor_dims(y, dims);
  if (r + 1 > max) return -ecg_errf(e, ECG_ERR_INTERNAL, "pt_loop_nest: more than %d loops", max);
  for (int i = 0; i < r; i++) ext[k++] = dims[i];
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  int64_t ny = numel(y);
  if (op && op->mapping == ECG_MAP_MANY_TO_MANY && ny > 0) {
    int64_t fl = op->flops(g, n), nx = numel(ecg_node_input(g, n, 0));
    int64_t red = fl > 0 ? fl / (2 * ny) : 1;
    if (nx > 0 && nx / ny > red) red = nx / ny;
    if (red > 1) ext[k++] = red;
  }
  return k;
}

int pt_node_weight(const ecg_graph *g, const ecg_node *n, const pt_weights *w, double *out, ecg_err *e) {
  int64_t ext[4 * ECG_MAX_RANK];
  int k = pt_loop_nest(g, n, ext, 4 * ECG_MAX_RANK, e);
  if (k < 0) return -k;
  double p = 1;
  for (int i = 0; i < k; i++)
    if (ext[i] > 1) p *= log((double)ext[i]);
  *out = w->c * p + w->b;
  return ECG_OK;
}
