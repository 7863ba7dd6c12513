/* ecg-rewrite: graph-editing helpers shared by the passes (rewrite.h). */
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"

void rw_count(rw_stats *st, const char *name) {
  st->fired++;
  for (int i = 0; i < st->n_counters; i++)
    if (!strcmp(st->counters[i].name, name)) { st->counters[i].count++; return; }
  if (st->n_counters == RW_MAX_COUNTERS) return; /* total still counted */
  st->counters[st->n_counters].name = name;
  st->counters[st->n_counters++].count = 1;
}

const ecg_op_info *rw_info(const ecg_node *n) { return ecg_op_lookup(n->op_type, n->domain); }

ecg_op_id rw_op(const ecg_node *n) {
  const ecg_op_info *op = rw_info(n);
  return op ? op->id : ECG_OP_NONE;
}

int rw_producer(const ecg_graph *g, int t) {
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i]->n_outputs; k++)
      if (g->nodes[i]->outputs[k] == t) return (int)i;
  return -1;
}

bool rw_is_output(const ecg_graph *g, int t) {
  for (size_t k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == t) return true;
  return false;
}

bool rw_is_input(const ecg_graph *g, int t) {
  for (size_t k = 0; k < g->n_inputs; k++)
    if (g->inputs[k] == t) return true;
  return false;
}

int rw_uses(const ecg_graph *g, int t) {
  int n = 0;
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) n += g->nodes[i]->inputs[k] == t;
  for (size_t k = 0; k < g->n_outputs; k++) n += g->outputs[k] == t;
  return n;
}

void rw_replace_uses(ecg_graph *g, int from, int to) {
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++)
      if (g->nodes[i]->inputs[k] == from) g->nodes[i]->inputs[k] = to;
}

bool rw_bypass(ecg_graph *g, int node_idx, int in, int out) {
  ecg_node *n = g->nodes[node_idx];
  if (in < 0 || out < 0 || in == out) return false;
  if (rw_is_output(g, out)) {
    /* out's name must survive: in's producer writes out, readers of in read out */
    int p = rw_producer(g, in);
    if (p < 0 || p == node_idx || rw_is_output(g, in)) return false;
    ecg_node *pn = g->nodes[p];
    for (size_t k = 0; k < pn->n_outputs; k++)
      if (pn->outputs[k] == in) pn->outputs[k] = out;
    rw_replace_uses(g, in, out);
  } else {
    rw_replace_uses(g, out, in);
  }
  for (size_t k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] == out) n->outputs[k] = -1;
  return true;
}

int rw_set_input(ecg_node *n, int i, int t) {
  if ((size_t)i >= n->n_inputs) {
    int32_t *r = realloc(n->inputs, sizeof *r * (size_t)(i + 1));
    if (!r) return ECG_ERR_INTERNAL;
    n->inputs = r;
    for (size_t k = n->n_inputs; k < (size_t)i; k++) r[k] = -1;
    n->n_inputs = (size_t)i + 1;
  }
  n->inputs[i] = t;
  return ECG_OK;
}

const char *rw_unique_name(const ecg_graph *g, const char *base, char *buf, size_t n) {
  for (int k = 0;; k++) {
    snprintf(buf, n, "%s_rw%d", base, k);
    if (ecg_find_tensor(g, buf) < 0) return buf;
  }
}

/* A new constant tensor of dtype with numel elements of elem bytes; -1 on OOM. */
static int add_const(ecg_graph *g, const char *base, int dtype, int rank, const int64_t *dims,
                     const void *vals, size_t elem) {
  char name[512];
  rw_unique_name(g, base, name, sizeof name);
  int t = ecg_add_tensor(g, name, dtype, rank, dims);
  if (t < 0) return -1;
  int64_t numel = ecg_tensor_numel(g->tensors[t]);
  if (ecg_tensor_set_data(g->tensors[t], vals, (size_t)numel * elem) != ECG_OK) return -1;
  return t;
}

int rw_add_const_f32(ecg_graph *g, const char *base, int rank, const int64_t *dims, const float *vals) {
  return add_const(g, base, ECG_FLOAT, rank, dims, vals, sizeof *vals);
}

int rw_add_const_i64(ecg_graph *g, const char *base, int rank, const int64_t *dims, const int64_t *vals) {
  return add_const(g, base, ECG_INT64, rank, dims, vals, sizeof *vals);
}

int rw_remove_dead(ecg_graph *g, ecg_err *e) {
  size_t nt = g->n_tensors, nn = g->n_nodes;
  int *uses = calloc(nt + 1, sizeof *uses);
  bool *keep = malloc(sizeof *keep * (nn + 1));
  if (!uses || !keep) { free(uses); free(keep); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  for (size_t i = 0; i < nn; i++) {
    keep[i] = true;
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++)
      if (g->nodes[i]->inputs[k] >= 0) uses[g->nodes[i]->inputs[k]]++;
  }
  for (size_t k = 0; k < g->n_outputs; k++) uses[g->outputs[k]]++;
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = nn; i-- > 0;) {
      ecg_node *n = g->nodes[i];
      if (!keep[i]) continue;
      bool live = false;
      for (size_t k = 0; k < n->n_outputs && !live; k++) live = n->outputs[k] >= 0 && uses[n->outputs[k]] > 0;
      if (live) continue;
      keep[i] = false;
      changed = true;
      for (size_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0) uses[n->inputs[k]]--;
    }
  }
  int rc = ecg_compact(g, keep, NULL) == ECG_OK ? ECG_OK : ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  free(uses);
  free(keep);
  return rc;
}

bool rw_const_all(const ecg_tensor *t, double v) {
  if (!t || !t->is_const) return false;
  int64_t n = ecg_tensor_numel(t);
  if (n < 1 || (size_t)n * ecg_dtype_size(t->dtype) != t->data.len) return false;
  for (int64_t i = 0; i < n; i++)
    if (ecg_const_f64(t, i) != v) return false;
  return true;
}

bool rw_same_shape(const ecg_tensor *a, const ecg_tensor *b) {
  int64_t da[ECG_MAX_RANK], db[ECG_MAX_RANK];
  if (!a || !b || a->dtype != b->dtype || !ecg_tensor_static(a) || !ecg_tensor_static(b)) return false;
  int ra = ecg_tensor_dims(a, da), rb = ecg_tensor_dims(b, db);
  return ra == rb && ra <= ECG_MAX_RANK && !memcmp(da, db, sizeof *da * (size_t)ra);
}
