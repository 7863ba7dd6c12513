/* sweep.c: single-operator ECGs for EOP's device profiles (VEE '22 §3.2 step 1:
 * "sample the operator's execution time along a dimension on each device").
 *
 * For each distinct operator signature of a graph (op type, attributes, input shapes) and
 * each partition dimension it has (eop.h: batch, the outermost output axis; rows, the
 * second-to-last output axis: H of NCHW, M of a MatMul), `points` one-node graphs whose
 * non-constant inputs are cut along that axis in proportion (so the output extent takes
 * `points` values up to the full one; constants, i.e. weights, unchanged), shapes
 * inferred by the registry. scripts/eop_profile.sh lowers and times each on a device. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eop.h"
#include "partition.h"

static const char *const dim_names[PT_N_DIMS] = {"batch", "rows", "cols", "k"};

const char *pt_dim_name(int d) { return d >= 0 && d < PT_N_DIMS ? dim_names[d] : "?"; }

int pt_dim_of_name(const char *s) {
  for (int d = 0; d < PT_N_DIMS; d++)
    if (!strcmp(s, dim_names[d])) return d;
  return -1;
}

int pt_dim_axis(int rank, int d) {
  if (d == PT_DIM_BATCH) return rank >= 1 ? 0 : -1;
  if (d == PT_DIM_COLS) return rank >= 1 ? rank - 1 : -1;
  if (d == PT_DIM_K) return -1; /* a reduction axis: no output axis */
  return rank >= 2 ? rank - 2 : -1;
}

/** Append "[d0xd1x...]" of tensor t to buf (len used of cap). */
static void put_shape(char *buf, size_t cap, size_t *len, const ecg_tensor *t) {
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(t, d);
  *len += (size_t)snprintf(buf + *len, *len < cap ? cap - *len : 0, "[");
  for (int i = 0; i < r && *len < cap; i++) *len += (size_t)snprintf(buf + *len, cap - *len, "%s%lld", i ? "x" : "", (long long)d[i]);
  if (*len < cap) *len += (size_t)snprintf(buf + *len, cap - *len, "]");
}

void pt_op_signature(const ecg_graph *g, const ecg_node *n, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "%s", n->op_type);
  for (size_t i = 0; i < n->n_inputs && len < cap; i++) {
    if (n->inputs[i] < 0) { len += (size_t)snprintf(buf + len, cap - len, "[]"); continue; }
    put_shape(buf, cap, &len, g->tensors[n->inputs[i]]);
  }
  /* attributes: their packed bytes, hashed (two nodes with the same shapes and attributes
   * time alike) */
  uint64_t h = 1469598103934665603ull;
  for (size_t a = 0; a < n->n_attrs; a++) {
    size_t sz = protobuf_c_message_get_packed_size(&n->attrs[a]->base);
    uint8_t *p = malloc(sz ? sz : 1);
    if (!p) continue;
    protobuf_c_message_pack(&n->attrs[a]->base, p);
    for (size_t k = 0; k < sz; k++) h = (h ^ p[k]) * 1099511628211ull;
    free(p);
  }
  if (len < cap) snprintf(buf + len, cap - len, "{%016llx}", (unsigned long long)h);
}

/** Copy of constant t's data with axis `ax` cut from d_old[ax] to d_new[ax] (the leading
 *  part; dims d_new otherwise d_old, rank r) into s's tensor ti.  Returns ECG_OK or
 *  ECG_ERR_INTERNAL (out of memory). */
static int slice_const(ecg_graph *s, int ti, const ecg_tensor *t, int r, const int64_t *d_old, const int64_t *d_new, int ax, ecg_err *e) {
  int64_t numel = ecg_tensor_numel(t), outer = 1, inner = 1;
  if (numel <= 0) return ecg_tensor_set_data(s->tensors[ti], t->data.data, t->data.len) ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : ECG_OK;
  size_t es = t->data.len / (size_t)numel;
  for (int k = 0; k < ax; k++) outer *= d_old[k];
  for (int k = ax + 1; k < r; k++) inner *= d_old[k];
  size_t from = (size_t)(d_old[ax] * inner) * es, to = (size_t)(d_new[ax] * inner) * es;
  uint8_t *buf = malloc(to * (size_t)outer + 1);
  if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int64_t o = 0; o < outer; o++) memcpy(buf + (size_t)o * to, t->data.data + (size_t)o * from, to);
  int rc = ecg_tensor_set_data(s->tensors[ti], buf, to * (size_t)outer) ? ecg_errf(e, ECG_ERR_INTERNAL, "out of memory") : ECG_OK;
  free(buf);
  return rc;
}

/** A one-node graph: node n of g with its constant inputs copied and its non-constant
 *  inputs as graph inputs whose `axis` extent is scaled by num/den (at least 1) when they
 *  have that axis (only input 0 when first_only: a MatMul's B is not cut with A's rows);
 *  with cut (per input: an axis, or -1) instead, exactly those axes are scaled, constants
 *  (weights) included, sliced to their leading part.  Outputs inferred. *out_extent gets
 *  output 0's extent on `axis` (-1 when axis < 0).
 *  Errors: ECG_ERR_INPUT (inference refused the cut shape), ECG_ERR_INTERNAL. */
static int one_node(const ecg_graph *g, const ecg_node *n, int axis, int64_t num, int64_t den, bool first_only, const int *cut,
                    ecg_graph **out, int64_t *out_extent, ecg_err *e) {
  ecg_graph *s = ecg_graph_new();
  if (!s) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  s->opset = g->opset;
  s->name = strdup(n->name); /* replaces protobuf-c's shared empty default, not to be freed */
  if (!s->name) { s->name = (char *)protobuf_c_empty_string; ecg_graph_free(s); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  int in[64], outs[16], nin = (int)n->n_inputs, nout = (int)n->n_outputs, gin[64], ngin = 0, rc = ECG_OK;
  if (nin > 64 || nout > 16) { ecg_graph_free(s); return ecg_errf(e, ECG_ERR_INPUT, "node '%s': too many operands to sweep", n->name); }
  for (int i = 0; i < nin && !rc; i++) {
    in[i] = -1;
    if (n->inputs[i] < 0) continue;
    const ecg_tensor *t = g->tensors[n->inputs[i]];
    int64_t d0[ECG_MAX_RANK], d[ECG_MAX_RANK];
    int r = ecg_tensor_dims(t, d0);
    memcpy(d, d0, sizeof d);
    int ax = cut ? cut[i] : !t->is_const && (!first_only || i == 0) ? axis : -1;
    if (ax >= 0 && r > ax && d[ax] > 1) d[ax] = (d[ax] * num + den - 1) / den;
    in[i] = ecg_add_tensor(s, t->name, t->dtype, r, d);
    if (in[i] < 0) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    if (t->is_const) {
      s->tensors[in[i]]->is_const = true;
      if (ax >= 0 && r > ax && d[ax] != d0[ax]) rc = slice_const(s, in[i], t, r, d0, d, ax, e);
      else if (ecg_tensor_set_data(s->tensors[in[i]], t->data.data, t->data.len)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    } else {
      int dup = 0;
      for (int k = 0; k < ngin; k++) dup |= strcmp(s->tensors[gin[k]]->name, t->name) == 0;
      if (!dup) gin[ngin++] = in[i];
    }
  }
  for (int i = 0; i < nout && !rc; i++) {
    outs[i] = n->outputs[i] < 0 ? -1 : ecg_add_tensor(s, g->tensors[n->outputs[i]]->name, g->tensors[n->outputs[i]]->dtype, -1, NULL);
    if (n->outputs[i] >= 0 && outs[i] < 0) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  int k = rc ? -1 : ecg_add_node(s, n->name, n->op_type, n->domain, n->opset, nin, in, nout, outs);
  if (!rc && k < 0) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (!rc && ecg_node_copy_attrs(s->nodes[k], n)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (!rc) {
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    if (!op || !op->infer) rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): no shape inference to sweep it", n->name, n->op_type);
    else rc = op->infer(s, s->nodes[k], e);
  }
  if (!rc) {
    s->inputs = malloc(sizeof(int32_t) * (size_t)(ngin + 1));
    s->outputs = malloc(sizeof(int32_t) * (size_t)(nout + 1));
    if (!s->inputs || !s->outputs) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (int i = 0; !rc && i < ngin; i++) s->inputs[i] = gin[i];
    s->n_inputs = (size_t)ngin;
    for (int i = 0; !rc && i < nout; i++)
      if (outs[i] >= 0) s->outputs[s->n_outputs++] = outs[i];
  }
  if (!rc && s->n_outputs) {
    int64_t d[ECG_MAX_RANK];
    int r = ecg_tensor_dims(s->tensors[s->outputs[0]], d);
    *out_extent = axis >= 0 && r > axis ? d[axis] : -1;
  }
  if (!rc) rc = ecg_validate(s, e);
  if (rc) { ecg_graph_free(s); return rc; }
  *out = s;
  return ECG_OK;
}

int pt_emit_sweeps(const ecg_graph *g, const char *dir, int points, FILE *index, int *written, ecg_err *e) {
  *written = 0;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", dir, strerror(errno));
  char (*seen)[512] = calloc(g->n_nodes + 1, sizeof *seen);
  if (!seen) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  size_t nseen = 0;
  int rc = ECG_OK;
  for (size_t i = 0; i < g->n_nodes && !rc; i++) {
    const ecg_node *n = g->nodes[i];
    if (n->n_outputs < 1 || n->outputs[0] < 0) continue;
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    if (!op || !op->flops || op->flops(g, n) <= 0) continue; /* data movement: not a key operator */
    char sig[512];
    pt_op_signature(g, n, sig, sizeof sig);
    int dup = 0;
    for (size_t k = 0; k < nseen && !dup; k++) dup = strcmp(seen[k], sig) == 0;
    if (dup) continue;
    snprintf(seen[nseen++], sizeof seen[0], "%s", sig);
    int64_t od[ECG_MAX_RANK];
    int r = ecg_tensor_dims(g->tensors[n->outputs[0]], od);
    /* a matrix product's N and K (HW1W2): cut on B (cols), on A and B (k), weights too */
    int64_t ad[ECG_MAX_RANK], bd[ECG_MAX_RANK];
    int ra = n->n_inputs >= 2 && n->inputs[0] >= 0 ? ecg_tensor_dims(g->tensors[n->inputs[0]], ad) : 0;
    int rb = n->n_inputs >= 2 && n->inputs[1] >= 0 ? ecg_tensor_dims(g->tensors[n->inputs[1]], bd) : 0;
    bool contract = (op->props & ECG_PROP_CONTRACT) && ra >= 2 && rb >= 2 && n->n_inputs <= 8;
    for (int dim = 0; dim < PT_N_DIMS && !rc; dim++) {
      int axis = pt_dim_axis(r, dim), cut[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
      if (dim >= PT_N_PLACE_DIMS) {
        if (!contract) continue;
        if (dim == PT_DIM_COLS) cut[1] = rb - 1;
        else { cut[0] = ra - 1; cut[1] = rb - 2; }
        if ((dim == PT_DIM_COLS ? bd[rb - 1] : ad[ra - 1]) < 2) continue;
      } else if (axis < 0 || od[axis] < 2 || (dim == PT_DIM_ROWS && axis == 0)) continue;
      int64_t last = -1;
      for (int p = 1; p <= points && !rc; p++) {
        ecg_graph *s = NULL;
        int64_t x = -1;
        ecg_err se = {0};
        /* every non-constant input cut, else input 0 alone (a MatMul's B, a broadcast partner) */
        if (dim >= PT_N_PLACE_DIMS ? one_node(g, n, axis, p, points, false, cut, &s, &x, &se)
                                   : one_node(g, n, axis, p, points, false, NULL, &s, &x, &se) &&
                                         (se.code == ECG_ERR_INTERNAL || one_node(g, n, axis, p, points, true, NULL, &s, &x, &se))) {
          /* a cut this operator's shapes cannot take (e.g. a broadcast partner): not this dim */
          if (se.code == ECG_ERR_INTERNAL) rc = ecg_errf(e, ECG_ERR_INTERNAL, "%s", se.msg);
          break;
        }
        if (dim == PT_DIM_K) x = (ad[ra - 1] * p + points - 1) / points; /* the cut K */
        if (x > 0 && x != last) {
          char path[4200];
          snprintf(path, sizeof path, "%s/%04d.ecg", dir, *written);
          rc = ecg_write_path(path, s, 0, e);
          if (!rc) {
            fprintf(index, "%s\t%s\t%lld\t%s\n", sig, pt_dim_name(dim), (long long)x, path);
            (*written)++;
            last = x;
          }
        }
        ecg_graph_free(s);
      }
    }
  }
  free(seen);
  return rc;
}
