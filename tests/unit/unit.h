/* Helpers shared by the libecg unit tests (tests/unit/NAME_test.c): a pass/fail counter,
 * and small builders of graphs (tensors, constants, nodes, graph inputs/outputs). Each
 * test file includes this once; its main prints "N passed, M failed" (tests/run.sh). */
#ifndef ECG_UNIT_H
#define ECG_UNIT_H
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ecg.h"

#define UNIT_UNUSED __attribute__((unused))

static int n_pass, n_fail;

/* Print the closing summary line and return the exit code. */
UNIT_UNUSED static int unit_summary(void) {
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (cond) n_pass++;                                                                            \
    else {                                                                                         \
      n_fail++;                                                                                    \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

/* ---- graph-building helpers */

#define DIMS(...) (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define IDS(...) (int[]){__VA_ARGS__}, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int))

/* A tensor of dtype and dims (dims < 0: symbolic named sym). */
UNIT_UNUSED static int tens(ecg_graph *g, const char *name, int dtype, const int64_t *d, int r, const char *sym) {
  int id = ecg_add_tensor(g, name, dtype, r, d);
  const char *syms[ECG_MAX_RANK] = {sym, sym, sym, sym, sym, sym, sym, sym};
  ecg_tensor_set_shape(g->tensors[id], r, d, syms);
  return id;
}

/* An unknown-shape output tensor. */
UNIT_UNUSED static int out(ecg_graph *g, const char *name) { return ecg_add_tensor(g, name, 0, -1, NULL); }

/* A constant int64 tensor of shape d (r = -1: 1-D of count values; r = 0: scalar). */
UNIT_UNUSED static int ci64(ecg_graph *g, const char *name, const int64_t *v, int count, int r) {
  int64_t d[1] = {count};
  int id = ecg_add_tensor(g, name, ECG_INT64, r < 0 ? 1 : r, d);
  ecg_tensor_set_data(g->tensors[id], v, sizeof(int64_t) * (size_t)count);
  return id;
}

/* A constant float tensor of dims d. */
UNIT_UNUSED static int cf32(ecg_graph *g, const char *name, const float *v, const int64_t *d, int r) {
  int id = ecg_add_tensor(g, name, ECG_FLOAT, r, d);
  int64_t m = 1;
  for (int i = 0; i < r; i++) m *= d[i];
  ecg_tensor_set_data(g->tensors[id], v, sizeof(float) * (size_t)m);
  return id;
}

UNIT_UNUSED static ecg_node *node(ecg_graph *g, const char *op, int opset, const int *in, int n_in, const int *o, int n_out) {
  int k = ecg_add_node(g, op, op, "", opset, n_in, in, n_out, o);
  return g->nodes[k];
}

UNIT_UNUSED static void set_io(ecg_graph *g, const int *in, int n_in, const int *o, int n_out) {
  g->inputs = malloc(sizeof(int32_t) * (size_t)(n_in ? n_in : 1));
  g->outputs = malloc(sizeof(int32_t) * (size_t)(n_out ? n_out : 1));
  for (int i = 0; i < n_in; i++) g->inputs[i] = in[i];
  for (int i = 0; i < n_out; i++) g->outputs[i] = o[i];
  g->n_inputs = (size_t)n_in;
  g->n_outputs = (size_t)n_out;
}

UNIT_UNUSED static const char *shape(ecg_graph *g, int id) {
  static char buf[8][128];
  static int k;
  k = (k + 1) % 8;
  return ecg_shape_str(g->tensors[id], buf[k], sizeof buf[k]);
}

UNIT_UNUSED static int tid(ecg_graph *g, const char *name) { return ecg_find_tensor(g, name); }

/* Infer g's shapes; expect code rc. */
UNIT_UNUSED static void infer(ecg_graph *g, int rc, const char *what) {
  ecg_err e = {0};
  int got = ecg_infer_shapes(g, &e);
  CHECK(got == rc, "%s: infer returned %d (%s), expected %d", what, got, e.msg, rc);
  if (rc != ECG_OK && got == rc) CHECK(strstr(e.msg, "node '") != NULL, "%s: message names no node: %s", what, e.msg);
}

UNIT_UNUSED static void expect_shape(ecg_graph *g, const char *name, const char *want) {
  int id = tid(g, name);
  CHECK(id >= 0 && !strcmp(shape(g, id), want), "%s: shape %s, expected %s", name, id >= 0 ? shape(g, id) : "(missing)", want);
}

UNIT_UNUSED static void expect_i64(ecg_graph *g, const char *name, const int64_t *v, int count) {
  int id = tid(g, name);
  const ecg_tensor *t = id >= 0 ? g->tensors[id] : NULL;
  bool ok = t && t->is_const && ecg_tensor_numel(t) == count;
  for (int i = 0; ok && i < count; i++) ok = ecg_const_i64(t, i) == v[i];
  CHECK(ok, "%s: folded values differ (const %d, numel %lld)", name, t ? t->is_const : -1,
        t ? (long long)ecg_tensor_numel(t) : -1LL);
}

/* Fold g's constants; without declared outputs every node output is kept as one so
 * the folded values survive the dead-tensor sweep. */
UNIT_UNUSED static void fold(ecg_graph *g, int want_folded, const char *what) {
  ecg_err e = {0};
  if (g->n_outputs == 0) {
    int ids[256], k = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
      for (size_t j = 0; j < g->nodes[i]->n_outputs && k < 256; j++) ids[k++] = g->nodes[i]->outputs[j];
    set_io(g, NULL, 0, ids, k);
  }
  int nf = -1, rc = ecg_fold_constants(g, &nf, &e);
  CHECK(rc == ECG_OK, "%s: fold failed: %s", what, e.msg);
  if (want_folded >= 0) CHECK(nf == want_folded, "%s: folded %d nodes, expected %d", what, nf, want_folded);
}

#endif
