/* ecg-rewrite pass "padfold": a zero Pad folded into the convolution that reads it.
 *
 *   Conv(Pad(x, pads, constant 0), W, b; pads_c) = Conv(x, W, b; pads_c + pads)
 *
 * A constant-zero Pad of the spatial axes only is the convolution's own zero padding: the
 * padded elements meet the same weights either way. TensorFlow exports (mlsd_320x320_tiny:
 * a Pad before every stride-2 depthwise conv, "SAME" padding made explicit) write and read
 * the padded tensor for nothing; ONNX Runtime's optimiser folds it too (its
 * PadFusion). Conditions: the Pad's mode is constant with value 0 (absent, attribute or a
 * constant input), its pads are constant and non-negative (no crop), the batch and channel
 * axes are not padded (format's ecg_pad_amounts reads them), its output is read by that Conv only (not a graph output), the
 * Conv has a static rank of 3 to 5, auto_pad NOTSET and explicit or default pads. The Conv
 * then reads x and carries the summed pads; the Pad has no reader left and is deleted.
 * Output shapes are unchanged (the conv's output extent depends on input + pads only). */
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"

/* Pad node pd's begin/end pads per axis of rank r into pb/pe (ecg_pad_amounts); false when
 * pd is not a foldable zero pad (see the file comment). */
static bool zero_pad(ecg_graph *g, ecg_node *pd, int r, int64_t *pb, int64_t *pe) {
  char mode[16];
  ecg_attr_s(pd, "mode", "constant", mode, sizeof mode);
  if (strcmp(mode, "constant") != 0) return false;
  if (pd->n_inputs > 2 && pd->inputs[2] >= 0) {
    const ecg_tensor *v = ecg_node_input(g, pd, 2);
    if (!v || !v->is_const || !rw_const_all(v, 0)) return false;
  } else if (ecg_attr_f(pd, "value", 0) != 0)
    return false;
  ecg_err e = {0}; /* run-time pads or axes: not foldable, no error */
  if (ecg_pad_amounts(g, pd, r, pb, pe, &e) != ECG_OK) return false;
  for (int d = 0; d < r; d++)
    if (pb[d] < 0 || pe[d] < 0) return false; /* a crop */
  return pb[0] == 0 && pe[0] == 0 && pb[1] == 0 && pe[1] == 0;
}

/* Fold the Pad that feeds Conv node ci's input 0, when every condition holds. */
static int fold_one(ecg_graph *g, int ci, rw_stats *st) {
  ecg_node *cv = g->nodes[ci];
  int y = cv->n_inputs > 0 ? cv->inputs[0] : -1, pi = y >= 0 ? rw_producer(g, y) : -1;
  if (pi < 0 || rw_op(g->nodes[pi]) != ECG_OP_Pad || rw_uses(g, y) != 1 || rw_is_output(g, y)) return ECG_OK;
  ecg_node *pd = g->nodes[pi];
  if (pd->n_inputs < 1 || pd->inputs[0] < 0 || pd->outputs[0] != y) return ECG_OK;
  const ecg_tensor *xt = g->tensors[pd->inputs[0]];
  int r = ecg_tensor_rank(xt);
  if (r < 3 || r > 5 || ecg_tensor_rank(g->tensors[y]) != r) return ECG_OK;
  char ap[16];
  ecg_attr_s(cv, "auto_pad", "NOTSET", ap, sizeof ap);
  if (strcmp(ap, "NOTSET") != 0) return ECG_OK;
  int64_t pb[ECG_MAX_RANK], pe[ECG_MAX_RANK], cp[2 * ECG_MAX_RANK];
  if (!zero_pad(g, pd, r, pb, pe)) return ECG_OK;
  const int s = r - 2; /* spatial axes */
  const int64_t *old;
  int n = ecg_attr_ints(cv, "pads", &old);
  if (n > 0 && n != 2 * s) return ECG_OK;
  for (int k = 0; k < 2 * s; k++) cp[k] = n > 0 ? old[k] : 0;
  for (int k = 0; k < s; k++) {
    cp[k] += pb[2 + k];
    cp[s + k] += pe[2 + k];
  }
  if (ecg_attr_set_ints(cv, "pads", 2 * s, cp) != ECG_OK) return ECG_ERR_INTERNAL;
  if (rw_set_input(cv, 0, pd->inputs[0])) return ECG_ERR_INTERNAL;
  rw_count(st, "pad->conv");
  return ECG_OK;
}

int rw_padfold(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e) {
  (void)o;
  for (size_t i = 0; i < g->n_nodes; i++) {
    if (rw_op(g->nodes[i]) != ECG_OP_Conv) continue;
    if (fold_one(g, (int)i, st) != ECG_OK) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  return rw_remove_dead(g, e);
}
