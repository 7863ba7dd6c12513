/* libecg: the Extended Computational Graph (ECG) library.
 *
 * The ECG is DNNFusion's graph representation (Niu dissertation §3.3): the ONNX-level
 * graph (tensors with dtype and possibly symbolic shape, nodes with attributes) plus
 * what each optimisation stage adds (mapping type per node, IR_removable per tensor,
 * fusion blocks, layouts).  The schema is format/ecg.proto; the byte layout of the
 * framed stream is format/ECG.md.
 *
 * In memory a graph is the protobuf-c message itself (ecg_graph == Ecg__Graph), so
 * fields a stage does not know pass through untouched.  Nodes and tensors are flat
 * arrays indexed by integer ids (STYLE 6); a node's inputs/outputs are tensor ids,
 * -1 for an omitted optional operand.
 *
 * Errors are values (STYLE 8): functions return ECG_OK (0) or an error code and fill
 * an ecg_err with a one-line message naming the node and the problem.  The library
 * never prints and never exits; only a tool's main() picks the exit code, and the
 * error codes are chosen to equal the tool exit codes of DESIGN.md.
 *
 * Ownership: every *_new has a *_free; pointers returned by getters point into the
 * graph and live as long as it does.
 */
#ifndef ECG_H
#define ECG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ecg.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ECG_VERSION_STRING "0.1.0"
/** Schema version written in the frame header (format/ECG.md). */
#define ECG_SCHEMA_VERSION 1
/** Maximum tensor rank handled anywhere in the project. */
#define ECG_MAX_RANK 8

typedef Ecg__Graph ecg_graph;
typedef Ecg__Node ecg_node;
typedef Ecg__Tensor ecg_tensor;
typedef Ecg__Attribute ecg_attr;

/* ---------------------------------------------------------------- errors */

/** Error codes; equal to the exit codes of DESIGN.md "Conventions". */
enum {
  ECG_OK = 0,
  ECG_ERR_INPUT = 1,    /**< input invalid or unsupported (bad file, bad graph, unknown op) */
  ECG_ERR_USAGE = 2,    /**< bad command line */
  ECG_ERR_INTERNAL = 3  /**< a bug or resource failure (out of memory, write error) */
};

/** An error value: code and a one-line message (no trailing newline). */
typedef struct ecg_err {
  int code;
  char msg[1024];
} ecg_err;

/** Fill *e (if non-NULL) with code and a printf-style message; returns code. */
int ecg_errf(ecg_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** Forward a non-zero error code from expression X to the caller. */
#define ECG_TRY(X)                                                                                 \
  do {                                                                                             \
    int ecg_rc_ = (X);                                                                             \
    if (ecg_rc_ != ECG_OK) return ecg_rc_;                                                         \
  } while (0)

/* ---------------------------------------------------------------- dtypes */

/** ONNX TensorProto.DataType codes (onnx.proto), used as ECG dtypes. */
enum {
  ECG_UNDEFINED = 0, ECG_FLOAT = 1, ECG_UINT8 = 2, ECG_INT8 = 3, ECG_UINT16 = 4,
  ECG_INT16 = 5, ECG_INT32 = 6, ECG_INT64 = 7, ECG_STRING = 8, ECG_BOOL = 9,
  ECG_FLOAT16 = 10, ECG_DOUBLE = 11, ECG_UINT32 = 12, ECG_UINT64 = 13,
  ECG_COMPLEX64 = 14, ECG_COMPLEX128 = 15, ECG_BFLOAT16 = 16
};

/** Size in bytes of one element of dtype; 0 for unsupported/variable (string). */
size_t ecg_dtype_size(int dtype);
/** Lower-case name ("float32", "int64", ...); "unknown" for others. */
const char *ecg_dtype_name(int dtype);
/** C element type used by generated code ("float", "int64_t", "uint8_t" for bool, ...);
 *  NULL when the dtype has no C type in this project. */
const char *ecg_dtype_ctype(int dtype);

/* ---------------------------------------------------------------- graph */

/** A new empty graph (opset 0, no tensors). Returns NULL on out of memory. */
ecg_graph *ecg_graph_new(void);
/** Free a graph and everything it owns. NULL is allowed. */
void ecg_graph_free(ecg_graph *g);

/** Append a tensor named name with dtype and shape; rank < 0 means shape unknown.
 *  dims[i] < 0 means unknown (symbol "?" unless set later).  Returns the new tensor
 *  id (>= 0) or -1 on out of memory. */
int ecg_add_tensor(ecg_graph *g, const char *name, int dtype, int rank, const int64_t *dims);
/** Set tensor t's shape: rank dims, dims[i] >= 0 known, < 0 symbolic with symbol
 *  syms[i] (syms may be NULL: symbol "?"). rank < 0 makes the shape unknown.
 *  Returns ECG_OK or ECG_ERR_INTERNAL (out of memory). */
int ecg_tensor_set_shape(ecg_tensor *t, int rank, const int64_t *dims, const char *const *syms);
/** Set the inferred shape of a node output like ecg_tensor_set_shape, but where an
 *  inferred dim is unknown (< 0) and t already holds a known dim at that position with
 *  the same rank (a shape the model declared in value_info or its graph outputs), keep
 *  the declared dim (SOD² §5.3: declared shapes as hints). Returns ECG_OK or
 *  ECG_ERR_INTERNAL. */
int ecg_tensor_refine_shape(ecg_tensor *t, int rank, const int64_t *dims, const char *const *syms);
/** Make t a constant holding nbytes of raw little-endian data (copied).
 *  Returns ECG_OK or ECG_ERR_INTERNAL. */
int ecg_tensor_set_data(ecg_tensor *t, const void *data, size_t nbytes);
/** Number of elements, or -1 when the shape is unknown or has a symbolic dim. */
int64_t ecg_tensor_numel(const ecg_tensor *t);
/** Rank, or -1 when unknown. */
int ecg_tensor_rank(const ecg_tensor *t);
/** Copy the shape into dims[ECG_MAX_RANK] (-1 for a symbolic dim); returns the rank or -1. */
int ecg_tensor_dims(const ecg_tensor *t, int64_t *dims);
/** True when the shape is known and every dim is a number. */
bool ecg_tensor_static(const ecg_tensor *t);
/** Format the shape as "1x3x224x224" ("N" for symbolic dims, "?" unknown rank). */
const char *ecg_shape_str(const ecg_tensor *t, char *buf, size_t n);
/** Tensor id by name, or -1. Linear scan; tools that look up often build a map. */
int ecg_find_tensor(const ecg_graph *g, const char *name);

/** Append a node; inputs/outputs are tensor ids (-1 = omitted). Returns the node
 *  index or -1 on out of memory. fusion_block starts at -1. */
int ecg_add_node(ecg_graph *g, const char *name, const char *op_type, const char *domain,
                 int64_t opset, int n_in, const int *inputs, int n_out, const int *outputs);
/** The tensor behind input i of n, or NULL when i is out of range or omitted. */
ecg_tensor *ecg_node_input(const ecg_graph *g, const ecg_node *n, int i);
/** The tensor behind output i of n, or NULL. */
ecg_tensor *ecg_node_output(const ecg_graph *g, const ecg_node *n, int i);
/** A node's display name: its name, or "op_type#index" when unnamed (static buffer
 *  per thread is not used: writes into buf). */
const char *ecg_node_label(const ecg_graph *g, const ecg_node *n, char *buf, size_t n_buf);

/** Remove nodes whose keep[i] is false, and then every tensor no longer referenced by
 *  a node, graph input or graph output; renumbers ids. Returns ECG_OK or
 *  ECG_ERR_INTERNAL. keep has g->n_nodes entries. */
int ecg_compact(ecg_graph *g, const bool *keep);

/** producer[t] = index of the node writing tensor t, or -1 (graph input/constant).
 *  producer has g->n_tensors entries. */
void ecg_producers(const ecg_graph *g, int *producer);
/** n_consumers[t] = number of node inputs plus graph outputs reading tensor t. */
void ecg_consumer_counts(const ecg_graph *g, int *n_consumers);
/** Topological order of nodes into order[g->n_nodes] (Kahn, stable by index).
 *  Returns ECG_OK, or ECG_ERR_INPUT naming a node on a cycle. */
int ecg_topo_order(const ecg_graph *g, int *order, ecg_err *e);
/** Reorder g->nodes topologically (stable). Same errors as ecg_topo_order. */
int ecg_topo_sort(ecg_graph *g, ecg_err *e);

/* ---------------------------------------------------------------- attributes */

/** Attribute by name, or NULL. */
const ecg_attr *ecg_attr_find(const ecg_node *n, const char *name);
/** Integer attribute, or def when absent. */
int64_t ecg_attr_i(const ecg_node *n, const char *name, int64_t def);
/** Float attribute, or def when absent. */
float ecg_attr_f(const ecg_node *n, const char *name, float def);
/** String attribute copied NUL-terminated into buf (truncated to n_buf-1); when absent,
 *  def is copied into buf (NULL def: returns NULL). Returns buf (or NULL). */
const char *ecg_attr_s(const ecg_node *n, const char *name, const char *def, char *buf,
                       size_t n_buf);
/** Integer-list attribute: *vals points into the node; returns the count, or -1 absent. */
int ecg_attr_ints(const ecg_node *n, const char *name, const int64_t **vals);
/** Float-list attribute; as ecg_attr_ints. */
int ecg_attr_floats(const ecg_node *n, const char *name, const float **vals);
/** Add (or replace) an attribute; the ecg_attr returned belongs to n. NULL on OOM. */
ecg_attr *ecg_attr_add(ecg_node *n, const char *name, int type);
/** Convenience setters over ecg_attr_add. Return ECG_OK or ECG_ERR_INTERNAL. */
int ecg_attr_set_i(ecg_node *n, const char *name, int64_t v);
int ecg_attr_set_f(ecg_node *n, const char *name, float v);
int ecg_attr_set_s(ecg_node *n, const char *name, const char *v);
int ecg_attr_set_ints(ecg_node *n, const char *name, int count, const int64_t *v);
int ecg_attr_set_floats(ecg_node *n, const char *name, int count, const float *v);
/** Remove an attribute if present. */
void ecg_attr_remove(ecg_node *n, const char *name);

/** ONNX AttributeProto.AttributeType codes. */
enum { ECG_ATTR_FLOAT = 1, ECG_ATTR_INT = 2, ECG_ATTR_STRING = 3, ECG_ATTR_TENSOR = 4,
       ECG_ATTR_GRAPH = 5, ECG_ATTR_FLOATS = 6, ECG_ATTR_INTS = 7, ECG_ATTR_STRINGS = 8,
       ECG_ATTR_TENSORS = 9, ECG_ATTR_GRAPHS = 10 };

/* ---------------------------------------------------------------- constants */

/** Read element i of a constant tensor as int64 (integer, bool and float dtypes;
 *  floats truncate). The caller checks i < numel. */
int64_t ecg_const_i64(const ecg_tensor *t, int64_t i);
/** Read element i of a constant tensor as double (any numeric dtype). */
double ecg_const_f64(const ecg_tensor *t, int64_t i);
/** Store v (converted) as element i of a buffer of dtype. */
void ecg_store_f64(void *buf, int dtype, int64_t i, double v);
/** Store v (converted) as element i of a buffer of dtype. */
void ecg_store_i64(void *buf, int dtype, int64_t i, int64_t v);
/** Read a constant integer tensor (any int dtype) into vals[max]; returns the count, or
 *  -1 when t is NULL, not a constant, or has more than max elements. */
int ecg_const_ints(const ecg_tensor *t, int64_t *vals, int max);
/** True for float16/float32/float64/bfloat16. */
bool ecg_dtype_is_float(int dtype);

/* ---------------------------------------------------------------- stream I/O */

/** Read one framed ECG (format/ECG.md) from f: magic, version, optional zstd.
 *  Errors: ECG_ERR_INPUT (bad magic, newer version, truncated, corrupt payload),
 *  ECG_ERR_INTERNAL (out of memory). *out is set only on success. */
int ecg_read(FILE *f, ecg_graph **out, ecg_err *e);
/** Read from path ("-" = stdin). Same errors as ecg_read. */
int ecg_read_path(const char *path, ecg_graph **out, ecg_err *e);
/** Write g framed to f; zstd_level > 0 compresses the payload. Returns ECG_OK or
 *  ECG_ERR_INTERNAL (write or compression error). */
int ecg_write(FILE *f, const ecg_graph *g, int zstd_level, ecg_err *e);
/** Write to path ("-" = stdout) through a temporary file renamed on success, so a
 *  failed write leaves no partial output. Refuses a terminal stdout
 *  (ECG_ERR_USAGE). */
int ecg_write_path(const char *path, const ecg_graph *g, int zstd_level, ecg_err *e);

/* ---------------------------------------------------------------- validation */

/** Check g (STYLE 11): tensor ids in range, every non-constant node input produced by
 *  exactly one node or a graph input, no tensor written twice, no cycle, constants
 *  have numel * dtype_size bytes, graph outputs produced, node outputs' dtypes and
 *  shapes agree with the registry's shape function where the op is known.
 *  Returns ECG_OK or ECG_ERR_INPUT with the first problem (node and tensor named). */
int ecg_validate(const ecg_graph *g, ecg_err *e);

/* ---------------------------------------------------------------- registry */

/** DNNFusion Table 3.2 mapping types, ordered by complexity (§3.3.1 multi-input rule):
 *  One-to-One < Reorganize < Shuffle < One-to-Many < Many-to-Many. */
typedef enum ecg_mapping {
  ECG_MAP_ONE_TO_ONE = ECG__MAPPING_TYPE__ONE_TO_ONE,
  ECG_MAP_ONE_TO_MANY = ECG__MAPPING_TYPE__ONE_TO_MANY,
  ECG_MAP_MANY_TO_MANY = ECG__MAPPING_TYPE__MANY_TO_MANY,
  ECG_MAP_REORGANIZE = ECG__MAPPING_TYPE__REORGANIZE,
  ECG_MAP_SHUFFLE = ECG__MAPPING_TYPE__SHUFFLE
} ecg_mapping;

/** Mathematical properties (DNNFusion §3.4.2) as bit flags. */
enum {
  ECG_PROP_ASSOC = 1u << 0,  /**< associative */
  ECG_PROP_COMM = 1u << 1,   /**< commutative */
  ECG_PROP_DIST = 1u << 2,   /**< distributes over Add */
  ECG_PROP_ELEMWISE = 1u << 3, /**< elementwise over (broadcast) inputs */
  ECG_PROP_SHAPE = 1u << 4   /**< output depends only on input shapes (Shape, Size) */
};

/** Operator ids, one per ops.def row. */
typedef enum ecg_op_id {
  ECG_OP_NONE = -1,
#define ECG_OP(id, onnx, mapping, props, since, infer, flops, eval) ECG_OP_##id,
#include "ops.def"
#undef ECG_OP
  ECG_OP_COUNT
} ecg_op_id;

/** Shape/dtype function: set dtype and shape of every output of node n from its
 *  inputs (constant inputs may be read). Shapes may stay symbolic. Returns ECG_OK or
 *  ECG_ERR_INPUT naming the node and what is inconsistent. */
typedef int (*ecg_infer_fn)(ecg_graph *g, ecg_node *n, ecg_err *e);
/** FLOP count of node n (multiply-add = 2 FLOPs); -1 when shapes are not static. */
typedef int64_t (*ecg_flops_fn)(const ecg_graph *g, const ecg_node *n);
/** Reference evaluation for constant folding: all inputs are constants with static
 *  shapes and outputs are inferred; fill every output's data. Returns ECG_OK,
 *  ECG_ERR_INPUT (dtype not handled: the node is then simply not folded). */
typedef int (*ecg_eval_fn)(ecg_graph *g, ecg_node *n, ecg_err *e);

/** One operator's description: the single place an operator is known (DESIGN.md). */
typedef struct ecg_op_info {
  ecg_op_id id;
  const char *name;      /**< ONNX op_type */
  ecg_mapping mapping;   /**< DNNFusion Table 3.2 */
  unsigned props;        /**< ECG_PROP_* */
  int since;             /**< first ai.onnx opset supported */
  ecg_infer_fn infer;
  ecg_flops_fn flops;    /**< ecg_flops_zero for pure data movement */
  ecg_eval_fn eval;      /**< ecg_eval_none (always refuses) when not constant-foldable */
} ecg_op_info;

/** The registry row for (op_type, domain) or NULL if unsupported. Domain "" and
 *  "ai.onnx" are the same. */
const ecg_op_info *ecg_op_lookup(const char *op_type, const char *domain);
/** The registry row for id (0 <= id < ECG_OP_COUNT). */
const ecg_op_info *ecg_op_get(ecg_op_id id);
/** The domain of registry row id: "" for the default ai.onnx domain, else its name
 *  ("ai.onnx.preview.training"). */
const char *ecg_op_domain(ecg_op_id id);
/** Name of a mapping type ("One-to-One", ...). */
const char *ecg_mapping_name(int mapping);

/** Run each node's shape function in topological order (SOD² §5.3 static shape
 *  propagation; symbolic dims propagate as symbols), then set node mapping types from
 *  the registry. Errors: ECG_ERR_INPUT (unknown op, inconsistent shapes, cycle). */
int ecg_infer_shapes(ecg_graph *g, ecg_err *e);

/** Fold every node whose inputs are all constants and whose op has an eval function
 *  into constants, repeatedly, then drop dead nodes and tensors. *n_folded (may be
 *  NULL) receives the number of nodes folded. Errors as ecg_infer_shapes. */
int ecg_fold_constants(ecg_graph *g, int *n_folded, ecg_err *e);
/** ecg_fold_constants, but a node is folded only when its outputs together hold at most
 *  max_bytes bytes (so folding never writes an unbounded constant, e.g. a large Expand or
 *  ConstantOfShape, into the weights); SIZE_MAX folds everything. Same errors. */
int ecg_fold_constants_limit(ecg_graph *g, size_t max_bytes, int *n_folded, ecg_err *e);

/* Shape-function helpers shared by the per-operator files (format/ops/). */

/** Numpy-style multidirectional broadcast of a and b (ONNX Broadcasting.md) into out;
 *  returns the rank, or -1 when incompatible. Symbolic dims (-1) broadcast
 *  with 1 and with themselves. */
int ecg_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int64_t *out);
/** The dims of input i of node n as the elementwise broadcast sees them. Usually the
 *  tensor's own shape; for the legacy (opset < 7) broadcasting of Add, Sub, Mul, Div,
 *  Pow, the comparisons and logic ops (attribute broadcast=1 with 'axis'), and PRelu's
 *  per-channel slope (opset < 7, 1-D slope of the channel count), input 1 is aligned at
 *  the axis: its dims followed by 1s up to input 0's rank. Returns the rank (-1 unknown). */
int ecg_bcast_dims(const ecg_graph *g, const ecg_node *n, int i, int64_t *dims);
/** Set output i of n to dtype and the given dims; symbols for -1 dims are copied from
 *  `like` where its dims line up from the right (may be NULL). */
int ecg_set_output(ecg_graph *g, ecg_node *n, int i, int dtype, int rank, const int64_t *dims,
                   const ecg_tensor *like);

#ifdef __cplusplus
}
#endif
#endif /* ECG_H */
