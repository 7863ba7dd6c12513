/* libecg: the graph validator (STYLE 11; TVM well_formed). */
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"

int ecg_validate(const ecg_graph *g, ecg_err *e) {
  size_t nt = g->n_tensors;
  char lb[256];
  int *writer = malloc(sizeof(int) * (nt + 1));
  bool *is_input = calloc(nt + 1, 1);
  int *order = malloc(sizeof(int) * (g->n_nodes + 1));
  int rc = ECG_OK;
  if (!writer || !is_input || !order) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  for (size_t t = 0; t < nt; t++) writer[t] = -1;
  for (size_t k = 0; k < g->n_inputs; k++) {
    int t = g->inputs[k];
    if (t < 0 || (size_t)t >= nt) { rc = ecg_errf(e, ECG_ERR_INPUT, "graph input %zu refers to tensor id %d (of %zu)", k, t, nt); goto out; }
    is_input[t] = true;
  }
  for (size_t t = 0; t < nt; t++) {
    const ecg_tensor *x = g->tensors[t];
    if (!x->is_const) continue;
    int64_t numel = ecg_tensor_numel(x);
    size_t es = ecg_dtype_size(x->dtype);
    if (numel < 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "constant tensor '%s' has no static shape", x->name); goto out; }
    if (es == 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "constant tensor '%s' has unsupported dtype %s", x->name, ecg_dtype_name(x->dtype)); goto out; }
    if (x->data.len != (size_t)numel * es) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "constant tensor '%s' holds %zu bytes, its shape and dtype need %zu", x->name, x->data.len, (size_t)numel * es);
      goto out;
    }
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_outputs; k++) {
      int t = n->outputs[k];
      if (t < 0) continue;
      if ((size_t)t >= nt) { rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): output %zu refers to tensor id %d (of %zu)", ecg_node_label(g, n, lb, sizeof lb), n->op_type, k, t, nt); goto out; }
      if (writer[t] >= 0 || is_input[t] || g->tensors[t]->is_const) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): tensor '%s' is written more than once", ecg_node_label(g, n, lb, sizeof lb), n->op_type, g->tensors[t]->name);
        goto out;
      }
      writer[t] = (int)i;
    }
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) {
      int t = n->inputs[k];
      if (t < 0) continue;
      if ((size_t)t >= nt) { rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): input %zu refers to tensor id %d (of %zu): dangling tensor", ecg_node_label(g, n, lb, sizeof lb), n->op_type, k, t, nt); goto out; }
      if (writer[t] < 0 && !is_input[t] && !g->tensors[t]->is_const) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): input '%s' is dangling: no node, graph input or initializer provides it", ecg_node_label(g, n, lb, sizeof lb), n->op_type, g->tensors[t]->name);
        goto out;
      }
    }
    if (!ecg_node_op(n)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': unsupported operator %s (domain '%s')", ecg_node_label(g, n, lb, sizeof lb), n->op_type, n->domain);
      goto out;
    }
  }
  for (size_t k = 0; k < g->n_outputs; k++) {
    int t = g->outputs[k];
    if (t < 0 || (size_t)t >= nt) { rc = ecg_errf(e, ECG_ERR_INPUT, "graph output %zu refers to tensor id %d (of %zu)", k, t, nt); goto out; }
    if (writer[t] < 0 && !is_input[t] && !g->tensors[t]->is_const) { rc = ecg_errf(e, ECG_ERR_INPUT, "graph output '%s' is produced by no node", g->tensors[t]->name); goto out; }
  }
  if ((rc = ecg_topo_order(g, order, e)) != ECG_OK) goto out;
  /* Shapes and dtypes: re-run each shape function on a copy and compare. */
  {
    size_t len = ecg__graph__get_packed_size(g);
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
    ecg__graph__pack(g, buf);
    ecg_graph *c = ecg__graph__unpack(NULL, len, buf);
    free(buf);
    if (!c) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
    for (size_t oi = 0; oi < c->n_nodes && rc == ECG_OK; oi++) {
      ecg_node *n = c->nodes[order[oi]];
      const ecg_op_info *op = ecg_node_op(n);
      bool known = true;
      for (size_t k = 0; k < n->n_inputs; k++) {
        const ecg_tensor *t = ecg_node_input(c, n, (int)k);
        if (t && !t->shape_known) known = false;
      }
      if (!known) continue;
      int dt[16];
      int64_t dims[16][ECG_MAX_RANK];
      int rank[16];
      size_t no = n->n_outputs < 16 ? n->n_outputs : 16;
      for (size_t k = 0; k < no; k++) {
        const ecg_tensor *t = ecg_node_output(c, n, (int)k);
        dt[k] = t ? t->dtype : 0;
        rank[k] = t ? ecg_tensor_dims(t, dims[k]) : -1;
      }
      ecg_err sub;
      if (op->infer(c, n, &sub) != ECG_OK) { rc = ecg_errf(e, ECG_ERR_INPUT, "%s", sub.msg); break; }
      for (size_t k = 0; k < no && rc == ECG_OK; k++) {
        const ecg_tensor *t = ecg_node_output(c, n, (int)k);
        if (!t || rank[k] < 0) continue;
        int64_t d2[ECG_MAX_RANK];
        int r2 = ecg_tensor_dims(t, d2);
        bool same = r2 == rank[k] && t->dtype == dt[k];
        for (int j = 0; same && j < r2; j++) same = d2[j] == dims[k][j];
        if (!same) {
          char s1[128], s2[128];
          ecg_shape_str(g->tensors[g->nodes[order[oi]]->outputs[k]], s1, sizeof s1);
          ecg_shape_str(t, s2, sizeof s2);
          rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): output '%s' is %s %s but its inputs give %s %s",
                        ecg_node_label(c, n, lb, sizeof lb), n->op_type, t->name, ecg_dtype_name(dt[k]), s1,
                        ecg_dtype_name(t->dtype), s2);
        }
      }
    }
    ecg_graph_free(c);
  }
out:
  free(writer); free(is_input); free(order);
  return rc;
}
