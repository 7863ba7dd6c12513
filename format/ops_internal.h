/* Internal declarations shared by the registry (registry.c) and the per-operator
 * files in format/ops/.  Not part of the public libecg API. */
#ifndef ECG_OPS_INTERNAL_H
#define ECG_OPS_INTERNAL_H
#include "ecg.h"

/* Every function named in ops.def, declared once from the table itself. */
#define ECG_OP(id, onnx, mapping, props, since, infer, flops, eval, dyn, rdp)                     \
  int infer(ecg_graph *g, ecg_node *n, ecg_err *e);                                              \
  int64_t flops(const ecg_graph *g, const ecg_node *n);                                          \
  int eval(ecg_graph *g, ecg_node *n, ecg_err *e);                                               \
  int rdp(ecg_rdp *r, const ecg_node *n, int dir);
#include "ops.def"
#undef ECG_OP

/** The registry row of a node (by op_type/domain), or NULL. */
const ecg_op_info *ecg_node_op(const ecg_node *n);

/** Fail with ECG_ERR_INPUT naming node n: "node 'NAME' (OP): <message>". */
int ecg_node_errf(ecg_err *e, const ecg_graph *g, const ecg_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** Allocate output i's data buffer as a constant of its (static) shape and dtype;
 *  returns a pointer to the zero-filled bytes or NULL on OOM. */
void *ecg_alloc_output_data(ecg_graph *g, ecg_node *n, int i);

/** Block b's inputs and outputs as ecg_block_refresh_io defines them, into new arrays
 *  in and out (caller frees). producer: ecg_producers; inner: ecg_block_internal_tensors;
 *  stamp: g->n_tensors ints, never equal to b + 1 on entry for this b (zeroed once, then
 *  reused for distinct b). Returns ECG_OK or ECG_ERR_INTERNAL (out of memory). */
int ecg_block_io_compute(const ecg_graph *g, int b, const int *producer, const int *inner,
                         int *stamp, int32_t **in, size_t *n_in, int32_t **out, size_t *n_out);

/** Validate subgraph sg of control-flow node owner (ecg.h "control flow") like
 *  ecg_validate, except that a tensor no node, subgraph input or constant provides is
 *  allowed when owner captures its name (ECG_ATTR_CAPTURES), and shape functions are not
 *  re-run (owner's shape function infers sg right after). Errors as ecg_validate. */
int ecg_validate_scope(const ecg_graph *sg, const ecg_node *owner, ecg_err *e);

#endif
