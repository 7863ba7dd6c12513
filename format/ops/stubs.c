/* TEMPORARY stubs: every ops.def function not yet implemented. Remove each as it is implemented in its family file. */
#include "ops_internal.h"
int ecg_eval_concat(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_eval_constant_of_shape(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_eval_copy(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_eval_gather(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_eval_none(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_eval_range(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_eval_shape(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_eval_slice(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_eval_transpose(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "not foldable"); }
int ecg_infer_concat(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_constant_of_shape(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_depth_to_space(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_expand(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_flatten(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_gather(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_pad(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_range(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_reshape(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_resize(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_shape(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_size(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_slice(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_space_to_depth(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_split(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_squeeze(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_tile(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_transpose(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
int ecg_infer_unsqueeze(ecg_graph *g, ecg_node *n, ecg_err *e) { return ecg_node_errf(e, g, n, "shape function not implemented"); }
