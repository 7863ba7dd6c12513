/* ecg-prune --export-onnx: the pruned model as a dense ONNX file with the zeros in place,
 * so that ONNX Runtime computes the reference outputs of the pruned model (issue 8 item 6). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "onnx.pb-c.h"
#include "prune.h"

/* Element q of an ONNX float tensor (raw_data or float_data). */
static float onnx_f32(const Onnx__TensorProto *t, int64_t q) {
  if (t->has_raw_data) {
    float v;
    memcpy(&v, t->raw_data.data + q * 4, 4);
    return v;
  }
  return t->float_data[q];
}

/* Replace initializer t's values by the pruned weights w[numel] after checking that every
 * weight pruning kept equals t's value. */
static int patch(Onnx__TensorProto *t, const ecg_tensor *wt, const char *node, const char *src, ecg_err *e) {
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(wt, d);
  int64_t numel = ecg_tensor_numel(wt);
  bool same = t->data_type == ECG_FLOAT && (int)t->n_dims == r;
  for (int i = 0; same && i < r; i++) same = t->dims[i] == d[i];
  if (!same) return ecg_errf(e, ECG_ERR_INPUT, "node '%s': initializer '%s' of %s has another dtype or shape than the pruned weight", node, wt->name, src);
  if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s': initializer '%s' of %s is stored in external data (not supported by --export-onnx)", node, wt->name, src);
  if (t->has_raw_data ? t->raw_data.len != (size_t)numel * 4 : t->n_float_data != (size_t)numel)
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s': initializer '%s' of %s holds the wrong number of values", node, wt->name, src);
  const float *w = (const float *)wt->data.data;
  for (int64_t q = 0; q < numel; q++)
    if (w[q] != 0.0f && w[q] != onnx_f32(t, q))
      return ecg_errf(e, ECG_ERR_INPUT, "node '%s': weight '%s' [%lld] is %g in the ECG but %g in %s: the ECG's weights were changed "
                      "by an earlier stage (ecg-rewrite bnfold?), so the source model plus zeros is not the pruned model; "
                      "run ecg-prune on onnx2ecg's output to export", node, wt->name, (long long)q, w[q], onnx_f32(t, q), src);
  uint8_t *raw = malloc((size_t)numel * 4 + 4);
  if (!raw) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  memcpy(raw, w, (size_t)numel * 4);
  /* the message was unpacked with the default allocator: free what we replace */
  if (t->has_raw_data) free(t->raw_data.data);
  free(t->float_data);
  t->float_data = NULL;
  t->n_float_data = 0;
  t->has_raw_data = 1;
  t->raw_data.data = raw;
  t->raw_data.len = (size_t)numel * 4;
  return ECG_OK;
}

int prune_export_onnx(const ecg_graph *g, const char *src, const char *out_path, ecg_err *e) {
  uint8_t *buf = NULL;
  size_t len = 0;
  char lb[256];
  ECG_TRY(cli_read_path(src, &buf, &len, e));
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
  free(buf);
  if (!m || !m->graph) {
    if (m) onnx__model_proto__free_unpacked(m, NULL);
    return ecg_errf(e, ECG_ERR_INPUT, "%s: not an ONNX model (protobuf does not decode)", src);
  }
  int rc = ECG_OK;
  for (size_t i = 0; rc == ECG_OK && i < g->n_sparse_convs; i++) {
    const ecg_node *n = g->nodes[g->sparse_convs[i]->node];
    const ecg_tensor *wt = ecg_node_input(g, n, 1);
    Onnx__TensorProto *t = NULL;
    for (size_t k = 0; k < m->graph->n_initializer && !t; k++)
      if (m->graph->initializer[k]->name && !strcmp(m->graph->initializer[k]->name, wt->name)) t = m->graph->initializer[k];
    if (!t) rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': its weight '%s' is not an initializer of %s", ecg_node_label(g, n, lb, sizeof lb), wt->name, src);
    else rc = patch(t, wt, ecg_node_label(g, n, lb, sizeof lb), src, e);
  }
  if (rc == ECG_OK) {
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *ob = malloc(n + 1);
    ecg_out o;
    if (!ob) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    else {
      onnx__model_proto__pack(m, ob);
      rc = ecg_out_open(&o, out_path, e);
      if (rc == ECG_OK) {
        if (fwrite(ob, 1, n, o.f) != n) { rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", out_path, strerror(errno)); ecg_out_abort(&o); }
        else rc = ecg_out_commit(&o, e);
      }
      free(ob);
    }
  }
  onnx__model_proto__free_unpacked(m, NULL);
  return rc;
}
