/* The scalar-expression view of One-to-One operators (format/ops/scalar.def).
 *
 * DNNFusion §3.3.1 / §3.4.4: a One-to-One operator is a scalar function of its operands,
 * which a fusion block inlines wherever the value is consumed.  scalar.def holds each
 * expression once; this API gives constant folding and code generation the same view of
 * a node: which expression, which operands (node inputs, or stand-ins for absent
 * optional inputs), the broadcast shape of each operand, and the attribute values.
 */
#ifndef ECG_SCALAR_VIEW_H
#define ECG_SCALAR_VIEW_H
#include "ecg.h"

#define ECG_SCALAR_MAX_OPERANDS 16

/** One row of scalar.def: the expressions as C source text. */
typedef struct ecg_scalar_row {
  ecg_op_id id;
  int dom;                  /**< operand whose dtype is the compute type T */
  const char *a_attr, *b_attr; /**< attribute names ("" unused; "name=VALUE" string test) */
  double a_def, b_def;      /**< their ONNX defaults */
  const char *fexpr, *iexpr; /**< float / integer expression; "NOFLOAT" / "NOINT" = undefined */
  int variadic;             /**< 1: fexpr/iexpr combine (x0 acc, x1 next), ffinal/ifinal finish */
  const char *ffinal, *ifinal;
} ecg_scalar_row;

/** The row of op id, or NULL when the operator is not a scalar expression. */
const ecg_scalar_row *ecg_scalar_row_of(ecg_op_id id);

/** Node n seen as a scalar expression. */
typedef struct ecg_scalar_view {
  const ecg_scalar_row *row;
  int n_operands;                          /**< x0 .. x{n_operands-1} */
  int input[ECG_SCALAR_MAX_OPERANDS];      /**< node input index of operand k, or -1 */
  int same_as[ECG_SCALAR_MAX_OPERANDS];    /**< input == -1: operand whose value stands in, or -1 */
  double cval[ECG_SCALAR_MAX_OPERANDS];    /**< input == -1 and same_as == -1: this constant */
  int rank[ECG_SCALAR_MAX_OPERANDS];       /**< operand's shape as broadcast against the output */
  int64_t dims[ECG_SCALAR_MAX_OPERANDS][ECG_MAX_RANK];
  double a, b;                             /**< attribute values (defaults applied) */
  int dom_dtype, out_dtype;                /**< dtype of the compute domain, of output 0 */
  int isf;                                 /**< the domain is floating point */
  int narrow_bf16;                         /**< 1: the value is narrowed to bfloat16 by truncation
                                                (ecg_bf16_trunc) before it is stored: Cast from a
                                                float type to bfloat16, as ONNX's reference Cast
                                                does (onnx/reference/ops/op_cast.py,
                                                float32_to_bfloat16(x, truncate=True); the
                                                backend test data of Cast-13 was made so) */
} ecg_scalar_view;

/** Fill v for node n. Returns ECG_OK; ECG_ERR_INPUT naming the node when n is not a
 *  scalar expression (no row, BatchNormalization in training mode, more than
 *  ECG_SCALAR_MAX_OPERANDS operands, no expression for its dtype domain, a missing
 *  required input or unknown shapes). */
int ecg_scalar_view_of(const ecg_graph *g, const ecg_node *n, ecg_scalar_view *v, ecg_err *e);

/** True when n is a scalar expression (ecg_scalar_view_of would succeed). */
bool ecg_is_scalar_node(const ecg_graph *g, const ecg_node *n);

/** Evaluate v's expression on one element: operands xf (float domain) or xi (integer
 *  domain), one per operand. Writes *yf or *yi (the domain's); false when the domain has
 *  no expression. The same expression text that code generation emits, compiled here
 *  with T = double or int64_t. */
bool ecg_scalar_eval1(const ecg_scalar_view *v, const double *xf, const int64_t *xi, double *yf, int64_t *yi);

/** Constant folding of any scalar node whose operands are constants: output 0 =
 *  the expression over the broadcast operands (registry eval function). */
int ecg_eval_scalar(ecg_graph *g, ecg_node *n, ecg_err *e);

#endif
