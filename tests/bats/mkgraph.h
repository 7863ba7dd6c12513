/* mkgraph.h: the graph builders the test generators share (mkrnn.c, mksearch.c, mkrewrite.c: one place for the
 * seeded weights, the one-output node, graph inputs and outputs), on the ECG API of
 * format/ecg.h.  Static inline functions: each generator is one translation unit.
 *
 * Weights are seeded by a fixed LCG (mkg_seed), uniform in [-1, 1) times a scale, so a
 * generator writes the same bytes on every run and machine. */
#ifndef MKGRAPH_H
#define MKGRAPH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecg.h"

static uint32_t mkg_seed = 2020;

/** Next seeded value in [-1, 1). */
static inline float mkg_rnd(void) {
  mkg_seed = mkg_seed * 1664525u + 1013904223u;
  return (float)(mkg_seed >> 8) / 16777216.0f * 2 - 1;
}

/** A float32 constant of rank r and dims, seeded values times scale.  Returns its tensor id. */
static inline int mkg_weight(ecg_graph *g, const char *name, int r, const int64_t *dims, float scale) {
  int t = ecg_add_tensor(g, name, ECG_FLOAT, r, dims);
  int64_t n = ecg_tensor_numel(g->tensors[t]);
  float *d = malloc(sizeof *d * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) d[i] = mkg_rnd() * scale;
  ecg_tensor_set_data(g->tensors[t], d, sizeof *d * (size_t)n);
  g->tensors[t]->is_const = true;
  free(d);
  return t;
}

/** A float32 constant filled with one value v (shape r, dims). */
static inline int mkg_fill(ecg_graph *g, const char *name, int r, const int64_t *dims, float v) {
  int t = ecg_add_tensor(g, name, ECG_FLOAT, r, dims);
  int64_t n = ecg_tensor_numel(g->tensors[t]);
  float *d = malloc(sizeof *d * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) d[i] = v;
  ecg_tensor_set_data(g->tensors[t], d, sizeof *d * (size_t)n);
  g->tensors[t]->is_const = true;
  free(d);
  return t;
}

/** A node of op_type (ai.onnx, opset 13) with one float output named out (shape left to
 *  ecg_infer_shapes).  Returns the output's tensor id. */
static inline int mkg_op(ecg_graph *g, const char *op_type, const char *out, int n_in, const int *in) {
  int t = ecg_add_tensor(g, out, ECG_FLOAT, -1, NULL);
  ecg_add_node(g, out, op_type, "", 13, n_in, in, 1, &t);
  return t;
}
#define MKG_OP(g, type, out, ...) mkg_op(g, type, out, sizeof((int[]){__VA_ARGS__}) / sizeof(int), (int[]){__VA_ARGS__})

/** The node added last. */
static inline ecg_node *mkg_last(ecg_graph *g) { return g->nodes[g->n_nodes - 1]; }

/** A float32 graph input of rank r and dims.  Returns its tensor id. */
static inline int mkg_input(ecg_graph *g, const char *name, int r, const int64_t *dims) {
  int t = ecg_add_tensor(g, name, ECG_FLOAT, r, dims);
  g->inputs = realloc(g->inputs, sizeof *g->inputs * (g->n_inputs + 1));
  g->inputs[g->n_inputs++] = t;
  return t;
}

/** Mark tensor t a graph output. */
static inline void mkg_output(ecg_graph *g, int t) {
  g->outputs = realloc(g->outputs, sizeof *g->outputs * (g->n_outputs + 1));
  g->outputs[g->n_outputs++] = t;
}

/** Infer shapes, validate and write g to path (plain ECG); prints "PROG: message" on
 *  failure.  Frees g.  Returns 0, or 1 (invalid graph or write error). */
static inline int mkg_finish(const char *prog, ecg_graph *g, const char *path) {
  ecg_err e = {0};
  int rc = ecg_infer_shapes(g, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc == ECG_OK) rc = ecg_write_path(path, g, 0, &e);
  if (rc != ECG_OK) fprintf(stderr, "%s: %s\n", prog, e.msg);
  ecg_graph_free(g);
  return rc ? 1 : 0;
}

#endif
