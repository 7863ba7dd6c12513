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
/** Version of the stream framing written in the frame header (format/ECG.md). It bumps
 *  only for an incompatible change (DESIGN.md "Conventions across issues: The ECG"). */
#define ECG_FRAME_VERSION 1
/** Revision of the schema format/ecg.proto. It grows by optional fields, so readers and
 *  writers of every schema version interoperate; format/ECG.md lists what each added. */
#define ECG_SCHEMA_VERSION 8
/** Maximum tensor rank handled anywhere in the project. */
#define ECG_MAX_RANK 8

/* Limits on hostile input (issue 10, item 2; format/ECG.md "Limits"): each is an exit-1
 * error naming the tensor, node or field, never an allocation attempt or an overflow. */
/** Most elements of one tensor with a static shape (2^40): element counts and byte sizes
 *  (at most 16 bytes per element) then always fit int64_t and size_t. */
#define ECG_MAX_ELEMENTS ((int64_t)1 << 40)
/** Most bytes a default constant fold (ecg_fold_constants) writes for one node's outputs
 *  (256 MiB); larger results stay computed at run time. */
#define ECG_FOLD_MAX_BYTES ((size_t)256 << 20)
/** Most nodes, and most tensors, in one graph (16 Mi each). */
#define ECG_MAX_NODES ((size_t)1 << 24)
#define ECG_MAX_TENSORS ((size_t)1 << 24)
/** Most values in one ints/floats attribute (16 Mi). */
#define ECG_MAX_ATTR_VALUES ((size_t)1 << 24)
/** Deepest nesting of subgraph attributes (If/Loop/Scan bodies) an importer follows. */
#define ECG_MAX_SUBGRAPH_DEPTH 64

typedef Ecg__Graph ecg_graph;
typedef Ecg__Node ecg_node;
typedef Ecg__Tensor ecg_tensor;
typedef Ecg__Attribute ecg_attr;
typedef Ecg__FusionBlock ecg_block;
typedef Ecg__Schedule ecg_schedule;
typedef Ecg__Subgraph ecg_subgraph;

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
/** Number of elements, or -1 when the shape is unknown or has a symbolic dim.  A product
 *  that overflows int64_t saturates at INT64_MAX (never undefined behaviour); the
 *  validator and shape inference refuse any count above ECG_MAX_ELEMENTS. */
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

/** What ecg_remap_nodes (and so ecg_compact and ecg_topo_sort) had to drop to keep the
 *  annotations valid; a stage reports non-zero counts on stderr (DESIGN.md "Conventions
 *  across issues: The ECG"). */
typedef struct ecg_remap_report {
  int members_removed;  /**< block members that were removed nodes */
  int blocks_dropped;   /**< blocks left without members, dropped (later ids shift down) */
  int roles_cleared;    /**< seeds and dominants of kept blocks set to -1: their node was removed */
  int ir_cleared;       /**< ir_removable flags cleared: the tensor no longer lies inside one block */
  int subgraph_members_removed; /**< partition subgraph members that were removed nodes */
  int subgraphs_dropped;        /**< partition subgraphs left without members, dropped (ids shift down) */
  int sparse_dropped;   /**< pattern annotations (sparse_convs) dropped: their Conv was removed */
  int placements_dropped; /**< EOP placements dropped: their node was removed */
} ecg_remap_report;

/** Remove nodes whose keep[i] is false, and then every tensor no longer referenced by
 *  a node, graph input or graph output; renumbers ids. Fusion blocks follow through
 *  ecg_remap_nodes (removed nodes leave their blocks; blocks' inputs/outputs are
 *  recomputed). rep (may be NULL) receives what the blocks lost (see ecg_remap_nodes).
 *  Returns ECG_OK or ECG_ERR_INTERNAL. keep has g->n_nodes entries. */
int ecg_compact(ecg_graph *g, const bool *keep, ecg_remap_report *rep);

/** producer[t] = index of the node writing tensor t, or -1 (graph input/constant).
 *  producer has g->n_tensors entries. */
void ecg_producers(const ecg_graph *g, int *producer);
/** n_consumers[t] = number of node inputs plus graph outputs reading tensor t. */
void ecg_consumer_counts(const ecg_graph *g, int *n_consumers);
/** Topological order of nodes into order[g->n_nodes] (Kahn, stable by index).
 *  Returns ECG_OK, or ECG_ERR_INPUT naming a node on a cycle. */
int ecg_topo_order(const ecg_graph *g, int *order, ecg_err *e);
/** Reorder g->nodes topologically (stable), remapping fusion blocks through
 *  ecg_remap_nodes. Same errors as ecg_topo_order. */
int ecg_topo_sort(ecg_graph *g, ecg_err *e);

/* ---------------------------------------------------------------- fusion blocks */

/* A fusion block (DNNFusion §3.4.3) is a set of nodes lowered into one kernel. g->blocks
 * is dense: g->blocks[i]->id == i, and node->fusion_block names the block holding the
 * node (-1 none). A block's nodes are listed in topological order; its inputs/outputs
 * are derived from its members (ecg_block_refresh_io) and kept current by every utility
 * that changes the node list. ecg_validate checks all of it. */

/** Renumber or delete nodes and remap every annotation that refers to node indices
 *  (DESIGN.md: the one function every renumbering utility goes through). old_to_new has
 *  n_old == g->n_nodes entries: node i moves to index old_to_new[i], or is removed (and
 *  freed) when it is -1; the kept entries must be a bijection onto 0..n_kept-1.
 *  Afterwards: g->nodes is in the new order; each block's nodes, seed and dominant are
 *  remapped (a removed member leaves its block; a removed seed or dominant becomes -1)
 *  and its members are listed in ascending new index; blocks left empty are dropped and
 *  the others renumbered densely, node->fusion_block following; every block's
 *  inputs/outputs are recomputed; ir_removable flags that no longer hold are cleared;
 *  partition subgraphs are remapped the same way (removed members leave, members listed
 *  ascending, emptied subgraphs dropped and ids kept dense; removing nodes never makes
 *  the subgraph quotient cyclic). Tensor ids are unchanged. rep (may be NULL) receives what was dropped.
 *  Errors: ECG_ERR_INTERNAL when old_to_new is not such a mapping (a caller bug; g is
 *  then unchanged) or out of memory. */
int ecg_remap_nodes(ecg_graph *g, const int *old_to_new, size_t n_old, ecg_remap_report *rep,
                    ecg_err *e);

/* ---------------------------------------------------------------- partition subgraphs */

/* Partition subgraphs (AGO, Xu et al. INFOCOM 2023, §IV-B; schema version 3): g->subgraphs
 * is either empty (unpartitioned) or covers the graph: ids dense (g->subgraphs[i]->id ==
 * i), every node in exactly one subgraph, members listed in ascending index, every fusion
 * block inside one subgraph, and the quotient graph over subgraphs acyclic (AGO
 * Definition 1, "n-way acyclic partition"). ecg_remap_nodes keeps them valid; ecg_validate
 * checks them. */

/** Replace g's subgraphs with the partition sub_of[i] (node i's subgraph, 0..n_sub-1;
 *  g->n_nodes entries), weight[s] the weight of subgraph s (AGO Eq. 1 summed; may be NULL:
 *  0) and strategy the name stored in each ("ago", "relay"). Members are stored in
 *  ascending order. Does not check acyclicity (ecg_validate does).
 *  Errors: ECG_ERR_INTERNAL for an entry outside 0..n_sub-1, an empty subgraph id (a
 *  caller bug; g unchanged) or out of memory. */
int ecg_subgraphs_set(ecg_graph *g, const int *sub_of, int n_sub, const double *weight, const char *strategy,
                      ecg_err *e);
/** Drop every partition subgraph (a stage that cannot keep them valid, e.g. one that
 *  re-forms fusion blocks or adds nodes, calls this and says so on stderr). Returns how
 *  many were dropped. */
size_t ecg_subgraphs_clear(ecg_graph *g);

/** Add a fusion block holding the n nodes nodes[] (indices, any order) with the given
 *  seed (a member, or -1 for none). The block gets id g->n_blocks, its members are stored
 *  in ascending index order (topological when g is sorted) and their fusion_block is set;
 *  mapping_type is the most complex member mapping type in the order of ecg_mapping
 *  (the §3.3.1 rule; ecg-fuse may overwrite it from Table 3.3); dominant is the first
 *  Many-to-Many member (-1 none); layout "", plan "", no schedule; inputs/outputs are
 *  computed (ecg_block_refresh_io). Returns the new block id (>= 0), or -1 with *e
 *  (may be NULL) set: ECG_ERR_INPUT when n < 1, a node index is out of range or listed
 *  twice, a node is already in a block, or the seed is not a member (the message names
 *  the node); ECG_ERR_INTERNAL on out of memory. On error g is unchanged. */
int ecg_block_add(ecg_graph *g, const int *nodes, int n, int seed, ecg_err *e);

/** Recompute block b's inputs (tensor ids its members read that no member produces,
 *  constants included, omitted operands excluded; each once, in order of first use by
 *  the members in list order) and outputs (tensor ids members produce that a non-member
 *  reads or that are graph outputs; in member order). b < 0 refreshes every block.
 *  Returns ECG_OK, or ECG_ERR_INTERNAL (out of memory, b out of range). */
int ecg_block_refresh_io(ecg_graph *g, int b);

/** Which tensors lie inside one block (DNNFusion §3.4.3: the candidates for
 *  ir_removable): inner[t] = the block id when tensor t is produced by a member of that
 *  block (by node->fusion_block), every node reading it is in the same block, and it is
 *  not a graph output; else -1. reader (may be NULL): for a tensor produced in a block
 *  but not inner, the index of a node outside the block that reads it (-1: it is only a
 *  graph output, or not produced in a block). producer is ecg_producers' array; inner
 *  and reader have g->n_tensors entries. */
void ecg_block_internal_tensors(const ecg_graph *g, const int *producer, int *inner, int *reader);

/** The permutation a Transpose-like node n applies to a rank-r input (attribute 'perm':
 *  output dim i is input dim perm[i]; absent: the dims reversed). 0, or -1 when 'perm' has
 *  another length than r or is not a permutation of 0..r-1. The one reader of 'perm'. */
int ecg_perm_attr(const ecg_node *n, int r, int *perm);
/** Index maps (DNNFusion §3.4.4.2, Fig. 3.5). The permutation of permutation node n
 *  (ECG_PROP_PERMUTE: output dim i is input dim perm[i]); returns the rank, or -1 when n
 *  is not one or its input shape is not static. */
int ecg_permutation_of(const ecg_graph *g, const ecg_node *n, int *perm);
/** Can node n (ECG_PROP_STRIDED_IO) read its input k (rank >= 2, float32) through the
 *  index map of permutation node p that produces it, i.e. from p's input with element
 *  strides st[i] = (p's input's row-major stride of dim perm[i])? Yes (1, st filled, rank
 *  in *r) when one of the two matrix dims has unit stride; else 0. */
int ecg_index_map_in(const ecg_graph *g, const ecg_node *n, int k, const ecg_node *p, int64_t *st, int *r);
/** Can n (ECG_PROP_STRIDED_IO) write its output 0 (rank >= 2, float32) straight into the
 *  output of permutation node p that reads it: element strides st[perm[i]] = (p's
 *  output's row-major stride i)? Yes (1) when the last dim has unit stride; else 0. */
int ecg_index_map_out(const ecg_graph *g, const ecg_node *n, const ecg_node *p, int64_t *st, int *r);

/** The space of a row-reduction block (DNNFusion §3.4.3-3.4.4; ecg-fuse's rows.c, ecg-lower's
 *  rowblock.c): F, rank r, seen as rows (dims [0, a)) x inner elements (dims [a, r)). */
typedef struct ecg_row_space {
  int r, a;
  int64_t F[ECG_MAX_RANK];
} ecg_row_space;
/** Levels of a row-block member. */
enum { ECG_ROW_FULL = 0, /**< One-to-One, output F: one value per element */
       ECG_ROW_ROW,      /**< One-to-One, output F with the inner dims 1: one value per row */
       ECG_ROW_RED };    /**< row reduction F -> one value per row (ecg_row_reduction) */
/** The row space of row reduction n (its input's dims, split at its first reduced axis);
 *  0, or -1 when n is not a row reduction. */
int ecg_row_space_of(const ecg_graph *g, const ecg_node *n, ecg_row_space *s);
/** The level of node n as a member of a row block over s: ECG_ROW_RED for a row reduction
 *  over the same F and a; ECG_ROW_FULL / ECG_ROW_ROW for a One-to-One (scalar
 *  expression) node with one output of dims F / of F with the inner dims set to 1 (FULL
 *  when the inner dims are all 1 anyway), whose every operand's trailing dims [a, r)
 *  (right-aligned broadcast) are all F's or all 1; -1 otherwise. */
int ecg_row_level(const ecg_graph *g, const ecg_node *n, const ecg_row_space *s);

/** Schedule knobs (Schedule in ecg.proto; schema 6 adds threads and conv_algo). Every
 *  knob left 0 means "the lowering chooses", and a block whose knobs are all 0 lowers
 *  byte for byte as one with no schedule. conv_algo: the strategy of the block's Conv
 *  kernel (ecg_rt1_conv2d), which otherwise the runtime picks by its cost. */
enum { ECG_CONV_ALGO_AUTO = 0, /**< the runtime's cost model (today's choice) */
       ECG_CONV_ALGO_GEMM,     /**< implicit im2col packed into GEMM panels, plain orientation */
       ECG_CONV_ALGO_GEMM_T,   /**< the same GEMM transposed (Y^T = X_col^T W^T) */
       ECG_CONV_ALGO_WINOGRAD, /**< Winograd F(4x4, 3x3): group 1, 3x3, stride 1, >= 8 channels in and out */
       ECG_CONV_ALGO_BLOCKED,  /**< the direct sum on 16-channel blocks (ecg_rt.h; AVX-512 builds, the GEMM
                                    path elsewhere): group 1 */
       ECG_CONV_ALGO_COUNT };
/** Upper bounds the validator enforces on a schedule's knobs. */
enum { ECG_SCHED_MAX_VECTOR = 64, ECG_SCHED_MAX_UNROLL = 32, ECG_SCHED_MAX_THREADS = 1024 };
/** The name of conv algorithm a ("auto", "gemm", "gemm_t", "winograd", "blocked"; "?" out of range). */
const char *ecg_conv_algo_name(int a);

/** A schedule's intensive_fusion knob (schema 8; AGO §III-B intensive fusion as a tuning
 *  dimension, §V). It applies to an intensive-fusion block, ecg-fuse --intensive's
 *  [pointwise conv [+act]] -> depthwise conv [+act] -> pointwise conv [+ epilogue] chain:
 *  AUTO lowers the block as it was formed (one fused kernel), ON the same but states it
 *  (ecg-lower refuses ON and OFF on any other block, naming the node), OFF lowers each
 *  stage as its own kernel, [pointwise [+act]], [depthwise [+act]], [pointwise + the
 *  block's epilogue]: the blocks ecg-fuse forms for those nodes without --intensive. */
enum { ECG_INTENSIVE_AUTO = 0, ECG_INTENSIVE_ON, ECG_INTENSIVE_OFF, ECG_INTENSIVE_COUNT };
/** The name of intensive_fusion value v ("auto", "on", "off"; "?" out of range). */
const char *ecg_intensive_name(int v);

/** Set block b's schedule (replacing any): n_tile tile sizes, vector width, unroll and
 *  the intensive flag (AGO §III-B). Returns ECG_OK or ECG_ERR_INTERNAL (out of memory,
 *  b out of range). */
int ecg_block_set_schedule(ecg_graph *g, int b, const int64_t *tile, int n_tile, int vector_width,
                           int unroll, bool intensive);

/* ---------------------------------------------------------------- pattern-pruned convolutions */

/* PatDNN (Niu dissertation §2.3-2.5): g->sparse_convs marks 2-D Conv nodes whose dense
 * weight W [m, c, kh, kw] (float32, zeros in place) follows kernel patterns (each kept
 * kernel's non-zeros lie inside one mask of the layer's pattern set) and connectivity
 * pruning (whole kernels zero), and carries the weights in the FKW format (§2.5.3) in
 * filter-kernel-reorder order (§2.5.2). format/ECG.md documents the arrays. */
typedef Ecg__SparseConv ecg_sparse_conv;

/** Index into g->sparse_convs of the annotation of node index `node`, or -1. */
int ecg_sparse_find(const ecg_graph *g, int node);
/** When node index `node` is a Conv that can carry a pattern annotation (group 1, a
 *  constant static float32 rank-4 weight [m, c, kh, kw] with kh*kw <= 32 taps), fill
 *  dims[4] with the weight dims and *w (may be NULL) with its data, and return 0; else -1. */
int ecg_sparse_weight_dims(const ecg_graph *g, int node, int64_t *dims, const float **w);
/** Set (or replace) the annotation of Conv node `node`: the pattern set patterns[np]
 *  (masks over kh*kw, bit r*kw+c) and kpat[m*c], the pattern id of kernel (filter f,
 *  input channel ci) at kpat[f*c+ci], or -1 for a removed kernel. The FKW arrays are
 *  built from the node's weight as it is (the caller has already zeroed what it
 *  prunes): filters sorted by length, then by their per-pattern kernel counts (FKR),
 *  kernels grouped by pattern id, input channels ascending. Errors: ECG_ERR_INPUT (not
 *  such a Conv, np outside 1..64), ECG_ERR_INTERNAL (out of memory); g unchanged then. */
int ecg_sparse_set(ecg_graph *g, int node, const uint32_t *patterns, int np, const int *kpat, bool detected,
                   ecg_err *e);
/** Check every pattern annotation: node in range and such a Conv, one annotation per
 *  node, 1..64 distinct non-empty masks inside the kernel, FKW array sizes (offset m+1
 *  from 0 to the kernel count, reorder a permutation, stride m*(P+1) rising from 0 to
 *  each filter's length, input channels in range and distinct per filter, weights as
 *  many as the kernels' patterns keep), and the dense weight equal to the FKW values
 *  inside the patterns and zero elsewhere. ECG_OK or ECG_ERR_INPUT naming the node. */
/** Entry widths in bytes (1, 2 or 4) of the FKW index arrays of one annotation as
 *  ecg-lower's generated kernels read them (Niu dissertation §2.5.3, Fig. 2.16): each
 *  array at the narrowest unsigned width that holds its largest entry (offset: the kept
 *  kernels; reorder: m - 1; index: c - 1; stride: the longest filter). wof is 0 when every
 *  pattern of the layer has the same number of taps (a filter's first weight is then
 *  offset * taps), else the width of the per-filter weight offsets the kernel also reads. */
typedef struct ecg_fkw_widths {
  int offset, reorder, index, stride, wof;
  int pages; /**< 1, or G > 1 when the layer has c > 256 input channels and paging makes the
                  arrays smaller: index holds channel mod 256 (one byte) and stride has
                  P*G + 1 entries per filter, the kernels before (pattern p, page g) at
                  p*G + g (channels of a pattern group ascend, so each page is a range) */
} ecg_fkw_widths;
/** The widths above for annotation s of a Conv with c input channels. */
void ecg_sparse_fkw_widths(const ecg_sparse_conv *s, int64_t c, ecg_fkw_widths *w);
/** Bytes of FKW index structure the generated kernel reads: offset (m+1), reorder (m),
 *  index (kept kernels), stride (m*(P*pages+1)) and, when needed, weight offsets (m), each
 *  at its ecg_sparse_fkw_widths width. The weights themselves are not counted. */
int64_t ecg_sparse_fkw_index_bytes(const ecg_sparse_conv *s, int64_t c);
int ecg_sparse_validate(const ecg_graph *g, ecg_err *e);
/** Remap the annotations' node indices through old_to_new (ecg_remap_nodes' mapping);
 *  annotations of removed nodes are dropped. Returns the number dropped. Called only by
 *  ecg_remap_nodes. */
int ecg_sparse_remap(ecg_graph *g, const int *old_to_new, size_t n_old);

/* ---------------------------------------------------------------- convolution geometry */

/** ONNX auto_pad values (Conv, ConvTranspose, pooling, ConvInteger, QLinearConv). */
typedef enum ecg_auto_pad {
  ECG_PAD_NOTSET = 0,  /**< explicit 'pads' (default 0) */
  ECG_PAD_SAME_UPPER,  /**< pad so that out = ceil(in / stride) (ConvTranspose: in * stride); odd extra at the end */
  ECG_PAD_SAME_LOWER,  /**< the same, odd extra at the beginning */
  ECG_PAD_VALID        /**< no padding; 'pads' is ignored */
} ecg_auto_pad;

/** The resolved sliding-window geometry of one Conv, ConvTranspose, ConvInteger,
 *  QLinearConv, MaxPool or AveragePool node: the one reading of its attributes that
 *  shape inference and every emitter share. Spatial arrays hold sp entries, outermost
 *  first; a dim is -1 where a symbolic input dim leaves it unknown (shape inference
 *  only; lowering sees static shapes). Units are elements. */
typedef struct ecg_conv_geom {
  int sp;                    /**< spatial rank: input rank - 2 (>= 1) */
  int x, w, b;               /**< input positions of X, W (-1 for pooling) and the bias (-1 none or absent) */
  bool transposed;           /**< ConvTranspose: out = s*(in-1) + out_pad + dilated kernel - pads */
  bool pool;                 /**< MaxPool/AveragePool: no weight, channels kept */
  bool ceil_mode;            /**< pooling: ceil instead of floor in the output size */
  ecg_auto_pad auto_pad;
  int64_t n;                 /**< batch */
  int64_t c;                 /**< input channels */
  int64_t m;                 /**< output channels (pooling: c) */
  int64_t group;             /**< channel groups (pooling: 1) */
  int64_t in[ECG_MAX_RANK];  /**< input spatial dims */
  int64_t k[ECG_MAX_RANK];   /**< kernel spatial dims (undilated) */
  int64_t out[ECG_MAX_RANK]; /**< output spatial dims */
  int64_t s[ECG_MAX_RANK];   /**< strides (>= 1) */
  int64_t d[ECG_MAX_RANK];   /**< dilations (>= 1) */
  int64_t pb[ECG_MAX_RANK];  /**< padding at the beginning of each spatial dim (-1 unknown) */
  int64_t pe[ECG_MAX_RANK];  /**< padding at the end (-1 unknown) */
  int64_t out_pad[ECG_MAX_RANK]; /**< ConvTranspose output_padding (else 0) */
} ecg_conv_geom;

/** Resolve node n's geometry from its operands' shapes and its attributes (ONNX
 *  Operators.md; ONNX Runtime where the text is ambiguous, as noted):
 *  - NOTSET: 'pads' [b..., e...] (default 0). VALID: no padding, 'pads' ignored.
 *  - Conv/pooling: out = floor((in + pb + pe - ((k-1)*d+1)) / s) + 1 (ceil_mode: ceil,
 *    dropping a last window that would start in the end padding); SAME_*: out =
 *    ceil(in / s) and total = max(0, (out-1)*s + (k-1)*d+1 - in), split floor(total/2)
 *    at the beginning for SAME_UPPER and ceil(total/2) for SAME_LOWER.
 *  - ConvTranspose: out = s*(in-1) + output_padding + (k-1)*d+1 - pb - pe; with
 *    output_shape (its last sp values; 'pads' then ignored) or SAME_* (out = in*s):
 *    total = max(0, s*(in-1) + output_padding + (k-1)*d+1 - out), split floor(total/2)
 *    at the beginning, ceil(total/2) for SAME_LOWER (ONNX Runtime's and the ONNX
 *    backend tests' reading; Operators.md's text gives NOTSET the ceil).
 *  kernel_shape defaults to W's spatial dims and must agree with them; pooling needs it.
 *  Errors (ECG_ERR_INPUT, message naming the node): not one of these operators, a
 *  missing operand, input rank < 3, W of another rank, unknown auto_pad, an attribute
 *  list of the wrong length or with a value out of range (kernel, strides, dilations
 *  >= 1; output_padding >= 0), channels that do not match W and group, a window larger
 *  than the padded input, a negative ConvTranspose output. */
int ecg_conv_geom_resolve(const ecg_graph *g, const ecg_node *n, ecg_conv_geom *gm, ecg_err *e);

/** Pad node n's constant pads per axis of its rank-r input (ONNX Operators.md Pad): pb[i] and
 *  pe[i] the elements added at the beginning and end of axis i (0 on axes that the axes
 *  input, opset 18, leaves out; negative crops). Pads from the 'pads' attribute (opset < 11;
 *  'paddings' in opset 1) or constant input 1, axes from constant input 3. The one reading
 *  of Pad's geometry: shape inference and ecg-rewrite's padfold use it. Errors
 *  (ECG_ERR_INPUT, naming the node): pads or axes not constant, a pads count other than
 *  twice the axes, an axis out of range or repeated. */
int ecg_pad_amounts(ecg_graph *g, ecg_node *n, int r, int64_t *pb, int64_t *pe, ecg_err *e);
/** Col2Im (opset 18; ONNX Operators.md Col2Im) read as the transpose of a convolution's
 *  im2col: input [N, C * prod(block_shape), L], constant image_shape and block_shape
 *  ([sp] each), attributes strides, dilations, pads ([b..., e...]).  Fills gm with n, c
 *  (= m: image channels), in = image_shape, k = block_shape, out = blocks per spatial dim
 *  (floor((in + pb + pe - ((k-1)*d+1)) / s) + 1; L = their product), s, d, pb, pe.
 *  Errors (ECG_ERR_INPUT, naming the node): rank != 3, run-time image/block shapes,
 *  lengths that differ, non-positive sizes, a block larger than the padded image, dim 1
 *  not a multiple of prod(block_shape), dim 2 not the block count. */
int ecg_col2im_geom(const ecg_graph *g, const ecg_node *n, ecg_conv_geom *gm, ecg_err *e);

/** RotaryEmbedding (opset 23; ONNX Operators.md RotaryEmbedding-23) operands: X 4-D
 *  [batch, heads, seq, head_size] or 3-D [batch, seq, heads * head_size] (attribute
 *  num_heads), cos_cache / sin_cache [batch, seq, >= rot/2] or, with position_ids
 *  [batch, seq] (int64), [positions, >= rot/2].  rot = rotary_embedding_dim (0: head_size),
 *  even; the first rot elements of each head are rotated (halves, or even/odd pairs when
 *  interleaved), the rest copied.  Dims are -1 where unknown (shape inference only). */
typedef struct ecg_rotary_geom {
  int x_rank;                /**< 3 or 4 */
  bool interleaved;          /**< pairs (2i, 2i+1) instead of (i, i + rot/2) */
  bool has_pos;              /**< position_ids given: caches indexed by position */
  int64_t b, heads, seq, head; /**< batch, heads, sequence length, head size */
  int64_t rot;               /**< rotated elements per head (even, <= head) */
  int64_t positions;         /**< cache rows with position_ids (else -1) */
  int64_t cache_cols;        /**< the caches' last dim (>= rot/2) */
} ecg_rotary_geom;
/** Resolve node n's RotaryEmbedding operands into rg.  Errors (ECG_ERR_INPUT, naming the
 *  node): X not 3-D/4-D, a 3-D X without num_heads or not divisible by it, rot odd or
 *  larger than the head, caches of different shapes or of the wrong rank/size for the
 *  presence of position_ids, position_ids not [batch, seq]. */
int ecg_rotary_resolve(const ecg_graph *g, const ecg_node *n, ecg_rotary_geom *rg, ecg_err *e);

/** Attention (opset 23; ONNX Operators.md Attention-23) operands: Q, K, V all 4-D
 *  [batch, heads, seq, head_size] or all 3-D [batch, seq, heads * head_size] (attributes
 *  q_num_heads, kv_num_heads); grouped-query heads (q heads a multiple of kv heads: q head
 *  h reads kv head h / (q_heads / kv_heads)); optional attn_mask (bool: true attends;
 *  Q's dtype: added to the scores) broadcast to [batch, q_heads, q_seq, total_seq];
 *  optional past_key / past_value [batch, kv_heads, past_seq, head_size]; is_causal,
 *  scale (default 1/sqrt(head_size)), softcap (0 = off).  Dims -1 where unknown. */
typedef struct ecg_attention_geom {
  int rank;                  /**< 3 or 4 */
  int64_t b, qh, kvh;        /**< batch, q heads, kv heads */
  int64_t qs, ks, past, total; /**< q seq, new kv seq, past seq (0 none), past + ks */
  int64_t d, dv;             /**< head size of Q/K and of V */
  bool causal;               /**< is_causal */
  bool mask_bool;            /**< attn_mask is bool (else additive) */
  int mask_rank;             /**< attn_mask's rank, -1 without a mask */
  int64_t mask_dims[ECG_MAX_RANK]; /**< attn_mask's dims */
  double scale;              /**< score scale */
  double softcap;            /**< softcap * tanh(score / softcap) when > 0 */
} ecg_attention_geom;
/** Resolve node n's Attention operands into ag.  Errors (ECG_ERR_INPUT, naming the node):
 *  mixed ranks, 3-D inputs without head counts or not divisible by them, head sizes or
 *  batches that disagree, q heads not a multiple of kv heads, only one of past_key /
 *  past_value or of the wrong shape, a mask of another dtype or not broadcastable,
 *  negative softcap, the qk_matmul_output output (not supported). */
int ecg_attention_resolve(const ecg_graph *g, const ecg_node *n, ecg_attention_geom *ag, ecg_err *e);

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
/** Integer-list attribute: *vals points into the node (to a static empty array, never NULL,
 *  for an empty list); returns the count, or -1 absent. */
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
/** Deep-copy every attribute of src onto dst, which has none (a node rebuilt in another
 *  graph: ecg-partition's sweeps, ecg-lower's split parts). ECG_OK, or ECG_ERR_INTERNAL on
 *  out of memory or when dst already has attributes (what was copied stays on dst). */
int ecg_node_copy_attrs(ecg_node *dst, const ecg_node *src);

/** ONNX AttributeProto.AttributeType codes. */
enum { ECG_ATTR_FLOAT = 1, ECG_ATTR_INT = 2, ECG_ATTR_STRING = 3, ECG_ATTR_TENSOR = 4,
       ECG_ATTR_GRAPH = 5, ECG_ATTR_FLOATS = 6, ECG_ATTR_INTS = 7, ECG_ATTR_STRINGS = 8,
       ECG_ATTR_TENSORS = 9, ECG_ATTR_GRAPHS = 10 };

/* ---------------------------------------------------------------- EOP placements
 * (Xu et al., VEE '22; schema version 4): g->placements, one per placed node, written by
 * ecg-partition --eop (placement.c). */

/** Set (or replace) node's placement: its output axis `axis` split with the CPU share
 *  cpu_share in [0, 1] (1 = CPU only, 0 = device only); dim names the dimension ("batch",
 *  "rows"). Errors: ECG_ERR_INPUT (node or share out of range), ECG_ERR_INTERNAL (OOM). */
int ecg_placement_set(ecg_graph *g, int node, int axis, double cpu_share, const char *dim, ecg_err *e);
/** Check every placement: node in range and placed once, share in [0, 1], axis inside the
 *  node's output 0 rank when that is known. Errors: ECG_ERR_INPUT naming the node. */
int ecg_placement_validate(const ecg_graph *g, ecg_err *e);
/** Remap placements through old_to_new (ecg_remap_nodes); returns how many were dropped
 *  because their node was removed. */
int ecg_placement_remap(ecg_graph *g, const int *old_to_new, size_t n_old);

/* ---------------------------------------------------------------- constants */

/** Read element i of a constant tensor as int64 (integer, bool and float dtypes;
 *  floats truncate toward zero and saturate at INT64_MIN/INT64_MAX, NaN reads as 0: a
 *  hostile float shape operand must not be undefined behaviour). The caller checks
 *  i < numel. */
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
/** Read from path ("-" = stdin). Same errors as ecg_read, the message prefixed
 *  with "PATH: " for a file. */
int ecg_read_path(const char *path, ecg_graph **out, ecg_err *e);
/** Write g framed to f; zstd_level > 0 compresses the payload. Returns ECG_OK,
 *  ECG_ERR_INPUT (write failed: the message is strerror, e.g. "No space left on
 *  device", "Broken pipe"; the caller names the file) or ECG_ERR_INTERNAL (out of
 *  memory, compression error). */
int ecg_write(FILE *f, const ecg_graph *g, int zstd_level, ecg_err *e);
/** Write to path ("-" = stdout) through ecg_out (below), so a failed write leaves no
 *  partial output. Refuses a terminal stdout (ECG_ERR_USAGE). I/O errors are
 *  ECG_ERR_INPUT "PATH: strerror" with the path as given ("stdout" for "-"). */
int ecg_write_path(const char *path, const ecg_graph *g, int zstd_level, ecg_err *e);

/** An output file being written (DESIGN.md: outputs go to a temporary name and are
 *  renamed when complete). A regular file (or a new one) is written as PATH.tmpPID in
 *  the same directory and renamed over PATH by ecg_out_commit; stdout ("-") and an
 *  existing non-regular file (/dev/null, /dev/full, a FIFO) are written in place.
 *  Messages always name path as the user gave it, never the temporary name. */
typedef struct ecg_out {
  FILE *f;          /**< write here between open and commit/abort */
  const char *path; /**< as given (borrowed); "stdout" for "-" in messages */
  char *tmp;        /**< owned temporary name, NULL when writing in place */
} ecg_out;
/** Open path for writing. Errors: ECG_ERR_INPUT "PATH: strerror" (missing parent
 *  directory, EACCES, EROFS, ...), ECG_ERR_INTERNAL (out of memory). */
int ecg_out_open(ecg_out *o, const char *path, ecg_err *e);
/** Flush, close and rename into place. Errors: ECG_ERR_INPUT "PATH: strerror"
 *  (ENOSPC, EPIPE, EIO, ...); the temporary file is then removed. o is released
 *  either way. */
int ecg_out_commit(ecg_out *o, ecg_err *e);
/** Close o and remove its temporary file (after a failure). NULL f is allowed. */
void ecg_out_abort(ecg_out *o);

/* ---------------------------------------------------------------- validation */

/** Check g (STYLE 11): tensor ids in range, every non-constant node input produced by
 *  exactly one node or a graph input, no tensor written twice, no cycle, constants
 *  have numel * dtype_size bytes, graph outputs produced, node outputs' dtypes and
 *  shapes agree with the registry's shape function where the op is known; and the
 *  fusion blocks (DNNFusion §3.4.3): ids dense, members exist and are listed in
 *  topological order, every node in at most one block and node->fusion_block agreeing
 *  with the block lists, seed and dominant members (or -1), inputs/outputs as
 *  ecg_block_refresh_io computes them (as sets), no cycle between blocks (the quotient
 *  graph whose vertices are blocks and unblocked nodes is acyclic), and every
 *  ir_removable tensor produced and consumed only inside one block and not a graph
 *  output; and, when g has partition subgraphs (AGO §IV-B), ids dense, every node in
 *  exactly one subgraph, members ascending, every fusion block inside one subgraph, and
 *  the quotient graph over subgraphs acyclic.
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
  ECG_PROP_DIST = 1u << 2,   /**< distributes over Add or Mul, or maps one to the other
                                  (Mul, MatMul, Sub, Div, Neg, Abs, Exp, Log, ...: ops.def) */
  ECG_PROP_ELEMWISE = 1u << 3, /**< elementwise over (broadcast) inputs */
  ECG_PROP_SHAPE = 1u << 4,  /**< output depends only on input shapes (Shape, Size) */
  ECG_PROP_PERMUTE = 1u << 5, /**< a pure permutation of its input's dims (Transpose): an
                                   index map its consumer can absorb (DNNFusion Fig. 3.5) */
  ECG_PROP_STRIDED_IO = 1u << 6, /**< its kernel reads operands and writes its output as
                                     strided batched matrices, so it absorbs index maps */
  ECG_PROP_NONNEG = 1u << 7, /**< no output element is negative (NaN aside): Relu, Abs, Exp,
                                 Sqrt, ...; the math pass's nonneg(V) condition */
  ECG_PROP_CONTROL = 1u << 8, /**< control flow (If, Loop, Scan): runs subgraphs held in its
                                  GRAPH attributes as nested code; never fused with other
                                  nodes, never folded or rewritten through (format/ECG.md
                                  "Control flow") */
  ECG_PROP_CONTRACT = 1u << 9, /**< a matrix product Y[.., M, N] = sum_K A[.., M, K] B[.., K, N]
                                   of inputs 0 and 1, both of rank >= 2 where it is used: its
                                   M, K and N can be cut (EOP's HW1W2 sweeps, VEE '22 §3.2) */
  ECG_PROP_SEQ_PASS = 1u << 10, /**< passes a run-time sequence (Tensor.sequence) through
                                     unchanged (Identity): the one non-sequence operator
                                     that may read one (format/ECG.md "Sequences") */
  ECG_PROP_MOVE = 1u << 11 /**< data movement: every element of its outputs is an element of
                                its input 0 or a value fixed by its attributes and other
                                inputs (Reshape, Slice, Gather, Concat, ...), no arithmetic on
                                input 0's values; the partial-shape fold relies on it */
};

/* ---------------------------------------------------------------- control flow */

/* A node with subgraphs (GRAPH/GRAPHS attributes: If's branches, Loop's and Scan's body)
 * reads the outer scope's values by name (ONNX IR "Names Within a Graph"). In the ECG
 * these outer references are explicit: the node's inputs are its ONNX inputs followed by
 * one implicit input per outer value its subgraphs read (at any depth), and its STRINGS
 * attribute ECG_ATTR_CAPTURES lists, in the same order, the names the subgraphs use for
 * them. A subgraph tensor that no node of the subgraph writes, that is no subgraph input
 * and no constant, is such a capture and must be named in the list. Every utility that
 * renames, replaces or removes outer tensors thereby keeps the binding (it is positional),
 * liveness and topological order see the reads, and the subgraph keeps its own names. */

/** Name of the STRINGS attribute listing a control-flow node's captured names. */
#define ECG_ATTR_CAPTURES "ecg.captures"
/** How many trailing inputs of n are captures (the length of its ECG_ATTR_CAPTURES
 *  attribute, at most n->n_inputs); 0 for a node without captures. */
int ecg_node_n_captures(const ecg_node *n);
/** Input index of the capture named name (len bytes, not NUL-terminated) of n, or -1. */
int ecg_node_capture_index(const ecg_node *n, const char *name, size_t len);

/** Kinds of control-flow node (ecg_cf.kind). */
enum { ECG_CF_IF = 1, ECG_CF_LOOP, ECG_CF_SCAN, ECG_CF_SEQMAP };
/** Most scan inputs and most scan outputs of one Scan. */
#define ECG_CF_MAX_SCAN 64

/** A control-flow node's structure, read from its inputs and attributes (format/ops/
 *  control.c; ONNX If-1..23, Loop-1..23, Scan-8 and Scan-9..23). Input indices: If reads
 *  cond (0); Loop reads M (0, may be omitted), cond (1, may be omitted), then n_state
 *  initial values; Scan reads (Scan-8 only: sequence_lens, 0, must be omitted) n_state
 *  initial states from first_state, then n_scan_in scan inputs. Outputs: n_state final
 *  values, then n_scan_out scan outputs. Loop's body: inputs (iteration int64 scalar, cond
 *  bool scalar, n_state values), outputs (cond, n_state values, n_scan_out slices); Scan's
 *  body: inputs (n_state states, n_scan_in slices), outputs (n_state states, n_scan_out
 *  slices). */
typedef struct ecg_cf {
  int kind;                        /**< ECG_CF_IF, ECG_CF_LOOP, ECG_CF_SCAN, ECG_CF_SEQMAP (SequenceMap:
                                        n_scan_in inputs, each a sequence read item by item or a
                                        tensor read whole; body inputs and outputs one per node
                                        input and output; n_scan_out outputs, all sequences) */
  ecg_graph *body[2];              /**< If: then_branch, else_branch; Loop, Scan: body, NULL */
  int n_explicit;                  /**< ONNX inputs (the node's inputs before its captures) */
  int first_state;                 /**< input index of the first initial state value */
  int n_state, n_scan_in, n_scan_out;
  int batch;                       /**< Scan-8: every input and output has batch axis 0 and the
                                        scan inputs and outputs the sequence axis 1 */
  int64_t trip;                    /**< iterations: Scan's scan-axis extent, Loop's constant M;
                                        -1 unknown (a symbolic extent, a run-time M) */
  int64_t in_axis[ECG_CF_MAX_SCAN];  /**< Scan: each scan input's axis, normalised (Scan-8: 1) */
  int64_t in_rev[ECG_CF_MAX_SCAN];   /**< Scan: 1 = that scan input is read last to first */
  int64_t out_axis[ECG_CF_MAX_SCAN]; /**< Scan: each scan output's axis as given (normalised by
                                          ecg_infer_scan's check; Scan-8: 1) */
  int64_t out_rev[ECG_CF_MAX_SCAN];  /**< Scan: 1 = that scan output is written last to first */
} ecg_cf;

/** Fill *cf for control-flow node n of g (op with ECG_PROP_CONTROL). Errors
 *  (ECG_ERR_INPUT naming the node): a missing subgraph attribute, input/output counts
 *  that disagree with the body, bad Scan axes/directions, Scan-8 sequence_lens (not
 *  supported), more than ECG_CF_MAX_SCAN scan inputs or outputs. */
int ecg_cf_info(const ecg_graph *g, const ecg_node *n, ecg_cf *cf, ecg_err *e);
/** Bind subgraph sg (one of n's bodies, or a copy of one) to n and infer it: every
 *  capture gets its outer tensor's dtype and shape, the body inputs their dtypes and
 *  shapes as ecg_cf describes (Scan slices: the scan input without its scan axis), then
 *  sg is checked (ecg_validate_scope: every outer reference captured) and inferred
 *  (ecg_infer_shapes). Errors: ECG_ERR_INPUT "node 'N' (Op): subgraph 'S': <problem>",
 *  including nesting deeper than ECG_MAX_SUBGRAPH_DEPTH; ECG_ERR_INTERNAL. */
int ecg_subgraph_infer(const ecg_graph *g, const ecg_node *n, ecg_graph *sg, ecg_err *e);
/** The branch an If node takes when its condition is a constant (folded from static
 *  shapes, SOD² ch. 5: an input-shape-and-value-determined choice known at compile time):
 *  0 then_branch, 1 else_branch; -1 when n is not an If or its condition is not constant. */
int ecg_if_taken_branch(const ecg_graph *g, const ecg_node *n);
/** Replace every If of g whose condition is a constant by the nodes of its taken branch,
 *  inside subgraphs too (the untaken branch is never inferred, lowered or run): the
 *  branch's tensors become tensors of the enclosing graph named "<If name>/<name>", its
 *  outputs the If's outputs. Shapes of the new tensors are unknown until the caller infers
 *  (ecg_fold_constants) again. *n_inlined (may be NULL) = Ifs replaced. ECG_OK, ECG_ERR_INPUT
 *  (a malformed If, naming it) or ECG_ERR_INTERNAL (out of memory). */
int ecg_inline_constant_ifs(ecg_graph *g, int *n_inlined, ecg_err *e);
/** ecg_fold_constants, then ecg_inline_constant_ifs and folding again until no If with a
 *  constant condition is left (a test on a dim that binding made static).  *n_folded and
 *  *n_inlined (may be NULL) count folded nodes and replaced Ifs. Errors: theirs. */
int ecg_fold_static_ifs(ecg_graph *g, int *n_folded, int *n_inlined, ecg_err *e);
/** Name of the STRINGS attribute holding a guarded node's guard (ecg_flatten_ifs): entries
 *  "+NAME" or "-NAME", NAME a bool tensor of one element; the node runs only when every
 *  "+" tensor is true and every "-" tensor false, tested in order (an entry's tensor is
 *  computed only when the entries before it hold: a nested If's condition). */
#define ECG_ATTR_GUARD "ecg.guard"
/** Flatten every If of g that is not constant and holds no run-time sequence (format/ECG.md
 *  "Control flow", guarded flattening; SOD² §5.4.2's control flow over symbolic shapes):
 *  both branches' nodes become nodes of g (tensors named "<If>/then/<name>",
 *  "<If>/else/<name>", inline_branch's renaming) guarded by the condition (ECG_ATTR_GUARD:
 *  "+cond" for then_branch, "-cond" for else_branch, after the If's own guard), and each
 *  output y_k becomes Where(cond, then value, else value) under the If's guard (and
 *  ECG_ATTR_SELECT). Not flattened: an If whose branches give an output two ranks or two
 *  different numbers in a dim (a consumer refuses it as before). An If inside a branch is
 *  flattened in turn (in rounds: each round's new tensors are inferred, ecg_infer_shapes,
 *  so its condition has a shape), its guard extended. The Ifs removed, the caller runs
 *  ecg_rdp_run for the new tensors' symbolic dims. A consumer must run a guarded node only
 *  under its guard (the untaken branch may have sizes that do not fit). *n_flat (may be
 *  NULL) = Ifs flattened. Errors: ECG_ERR_INPUT naming a malformed If (or those of
 *  ecg_infer_shapes), ECG_ERR_INTERNAL. */
int ecg_flatten_ifs(ecg_graph *g, int *n_flat, ecg_err *e);
/** Name of the STRING attribute ecg_flatten_ifs gives each Where it makes of an If's output:
 *  the If's name (its inputs 1 and 2 are the then and else values, which must have one
 *  shape: a consumer checks, naming the If). */
#define ECG_ATTR_SELECT "ecg.select"
/** Node n's guard (ECG_ATTR_GUARD): up to max entries, cond[k] the tensor id of entry k,
 *  sign[k] 1 for "+", 0 for "-". Returns the entry count (0: unguarded), or -1 for a
 *  malformed guard (an entry not "+NAME"/"-NAME", or NAME no tensor of g). */
int ecg_node_guard(const ecg_graph *g, const ecg_node *n, int max, int *cond, int *sign);
/** The size limit of the ecg_fold_constants_limit running on this thread (bytes), or 0
 *  when none runs: subgraph shape inference folds too while it is non-zero. */
size_t ecg_fold_active_limit(void);

/** Operator ids, one per ops.def row. */
typedef enum ecg_op_id {
  ECG_OP_NONE = -1,
#define ECG_OP(id, onnx, mapping, props, since, infer, flops, eval, dyn, rdp) ECG_OP_##id,
#include "ops.def"
#undef ECG_OP
  ECG_OP_COUNT
} ecg_op_id;

/** SOD² dynamism classes (Niu dissertation §5.3, Table 5.2): what an operator's output
 *  shape (and value) depends on. One per registry row (ops.def column dyn). */
typedef enum ecg_dyn {
  ECG_DYN_ISDO = 1,  /**< input shape determined output: the value follows from input shapes */
  ECG_DYN_ISDOS,     /**< input shape determined output shape */
  ECG_DYN_ISVDOS,    /**< input shape and value determined output shape (shape operands) */
  ECG_DYN_EDO        /**< execution determined output: the shape is known after running */
} ecg_dyn;
/** "ISDO", "ISDOS", "ISVDOS", "EDO" ("?" otherwise). */
const char *ecg_dyn_name(int dyn);

/** State of one rank-and-dimension-propagation run (format/rdp.c; opaque). */
typedef struct ecg_rdp ecg_rdp;
/** RDP transfer of one node (SOD² §5.4.1, Algorithm 2): dir 0 forward (meet the outputs'
 *  rank, dims and small integer values with what the inputs give), dir 1 backward (meet
 *  the inputs' with what the outputs give). Returns 1 when some lattice value changed,
 *  else 0. */
typedef int (*ecg_rdp_fn)(ecg_rdp *r, const ecg_node *n, int dir);

/** Most values RDP carries for one small integer tensor (rank <= 1: shape arithmetic). */
#define RDP_MAX_VALS 8
/** What ecg_rdp_run found, per non-constant tensor with a known rank (constants count as
 *  constant): every dim a number; every dim a number, symbol or expression (at least one
 *  not a number); some dim nac or undef (undef counts those with an undef dim too). */
typedef struct ecg_rdp_stats {
  int constant, symbolic, nac, undef;
  int symbols;    /**< graph input symbols */
  int iterations; /**< forward+backward sweeps to the fixed point */
} ecg_rdp_stats;
/** Rank and dimension propagation (SOD² §5.4.1, Algorithm 2; format/rdp.c) over g after
 *  ecg_infer_shapes: each dim that is not a number gets its lattice value, stored in the
 *  dim (kind DIM_SYMBOL / DIM_EXPR with the expression in symbol, e.g. "2*H", "((W+3)/4)" for
 *  floor((W+3)/4); DIM_NAC / DIM_UNDEF keeping the symbol numeric inference gave). Numbers
 *  are not changed, so validation and every later stage see the same numeric shapes.
 *  st (may be NULL) receives the counts. Errors: ECG_ERR_INPUT (a cycle),
 *  ECG_ERR_INTERNAL (out of memory). */
int ecg_rdp_run(ecg_graph *g, ecg_rdp_stats *st, ecg_err *e);
/** A graph input symbol known to take only multiples of `multiple` (> 1): a model whose
 *  branches agree only then (PP-OCRv4 det: its FPN Concat's inputs have the same height
 *  only for heights that are multiples of 32). */
typedef struct ecg_rdp_hint {
  const char *symbol;
  int64_t multiple;
} ecg_rdp_hint;
/** ecg_rdp_run with hints: each hinted input dim is multiple * the atom "SYMBOL:K" (a new
 *  symbol; the stored input dim becomes the DIM_EXPR "K*SYMBOL:K"), so floor divisions by
 *  divisors of K cancel and expressions that agree on those sizes meet equal instead of nac.
 *  A build from such an ECG takes only those sizes (tools/lower/LOWERED.md). Errors as
 *  ecg_rdp_run. */
int ecg_rdp_run_hinted(ecg_graph *g, const ecg_rdp_hint *hints, int n_hints, ecg_rdp_stats *st, ecg_err *e);

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
  ecg_dyn dyn;           /**< SOD² dynamism class (Table 5.2) */
  ecg_rdp_fn rdp;        /**< RDP transfer function (format/rdp.c) */
} ecg_op_info;

/** The registry row for (op_type, domain) or NULL if unsupported. Domain "" and
 *  "ai.onnx" are the same. */
const ecg_op_info *ecg_op_lookup(const char *op_type, const char *domain);
/** The registry row for id (0 <= id < ECG_OP_COUNT). */
const ecg_op_info *ecg_op_get(ecg_op_id id);
/** True when constant folding can evaluate op (it has a reference eval, not
 *  ecg_eval_none): a node of op whose inputs are all constants folds. */
bool ecg_op_foldable(const ecg_op_info *op);
/** The domain of registry row id: "" for the default ai.onnx domain, else its name
 *  ("ai.onnx.preview.training"). */
const char *ecg_op_domain(ecg_op_id id);
/** The ONNX schema version of operator id in effect in a model importing `opset` of the
 *  operator's domain: the newest since_version of its ONNX history (format/op_versions.def,
 *  from ONNX's docs/Changelog.md) at or below opset; 0 when the operator has no schema at
 *  or below opset.  *implemented (may be NULL) receives whether ecg implements that
 *  version (a node is accepted only then, DESIGN.md "Order"). */
int ecg_op_schema_version(ecg_op_id id, int64_t opset, bool *implemented);
/** Write operator id's schema versions as "1,6,13,14" into buf (size bytes, always
 *  terminated): the versions ecg implements when `implemented`, else ONNX's whole history.
 *  Returns the number of versions written. */
int ecg_op_versions(ecg_op_id id, bool implemented, char *buf, size_t size);
/** Name of a mapping type ("One-to-One", ...). */
const char *ecg_mapping_name(int mapping);

/** Run each node's shape function in topological order (SOD² §5.3 static shape
 *  propagation; symbolic dims propagate as symbols), then set node mapping types from
 *  the registry. Errors: ECG_ERR_INPUT (unknown op, inconsistent shapes, cycle, an
 *  output of more than ECG_MAX_ELEMENTS elements: "node 'N' (Op): output 'y' would
 *  have E elements (shape S), more than the limit 2^40"). */
int ecg_infer_shapes(ecg_graph *g, ecg_err *e);

/** Fold every node whose inputs are all constants and whose op has an eval function
 *  into constants, repeatedly, then drop dead nodes and tensors. A data-movement node
 *  (ECG_PROP_MOVE) reading a Shape whose input has some symbolic dims folds too when its
 *  result holds only the known dims (Gather(Shape(x), i) of a known dim i: the partial-shape
 *  fold, which decides an If on a rank check before RDP runs). *n_folded (may be
 *  NULL) receives the number of nodes folded.  Nodes whose outputs would hold more than
 *  ECG_FOLD_MAX_BYTES stay unfolded (ecg_fold_constants_limit with that bound). Errors as
 *  ecg_infer_shapes. */
int ecg_fold_constants(ecg_graph *g, int *n_folded, ecg_err *e);
/** ecg_fold_constants, but a node is folded only when its outputs together hold at most
 *  max_bytes bytes (so folding never writes an unbounded constant, e.g. a large Expand or
 *  ConstantOfShape, into the weights); SIZE_MAX folds everything. Same errors. */
int ecg_fold_constants_limit(ecg_graph *g, size_t max_bytes, int *n_folded, ecg_err *e);

/** Replace the sequence operators of g (SequenceEmpty/Construct/Insert/Erase/At/Length,
 *  ConcatFromSequence, SplitToSequence; format/ops/sequence.c) by tensor operators where
 *  every sequence's length and every position and split are known statically: each
 *  sequence becomes the list of tensors it holds, SequenceAt an Identity of one, SequenceLength
 *  a constant, ConcatFromSequence a Concat (new_axis=1: of Reshapes adding the axis),
 *  SplitToSequence Slices (keepdims=0: and Reshapes). Shapes of the tensor operators before
 *  a sequence operator are inferred on the way. *n_resolved (may be NULL) gets the count
 *  replaced. Errors: ECG_ERR_INPUT naming the node for an invalid position, split or axis,
 *  or a sequence operator that cannot be resolved ("sequence values are supported only
 *  with lengths and positions known when the model is converted ..."; the shape function
 *  of a sequence operator left in a subgraph says the same); ECG_ERR_INTERNAL. */
int ecg_resolve_sequences(ecg_graph *g, int *n_resolved, ecg_err *e);
/* (A run-time sequence, Tensor.sequence, is never resolved: its operators stay nodes; see
 *  format/ECG.md "Sequences".) */
/** Make y a run-time sequence (Tensor.sequence) like x: x's element dtype, and x's element
 *  shape when x has one (else no shape). Errors: ECG_ERR_INTERNAL (out of memory). */
int ecg_sequence_like(ecg_tensor *y, const ecg_tensor *x, ecg_err *e);

/** Bind graph input `name` to the shape dims[rank] (SOD²'s one ECG, many static builds:
 *  ecg-lower --input-shape): every symbolic dim of the input takes its number (dims[i] < 0
 *  keeps that dim symbolic), and the same symbol in the other graph inputs takes the same
 *  number (ONNX: one dim_param names one size). The caller then re-infers shapes and folds
 *  (ecg_fold_constants), which turns the shape subgraphs kept for the symbols into
 *  constants. Errors (ECG_ERR_INPUT, g unchanged): no graph input of that name (the
 *  message lists them), another rank, a number that differs from a stored number, or one
 *  symbol given two numbers. */
int ecg_bind_input(ecg_graph *g, const char *name, int rank, const int64_t *dims, ecg_err *e);

/** Suffix of the graph input holding an optional graph input's presence flag (bool scalar):
 *  an ONNX input V of type optional(tensor) or optional(sequence(tensor)) becomes the graph
 *  inputs V (the element) and "V:present" (format/ops/optional.c); an optional graph output
 *  likewise the outputs V and "V:present". */
#define ECG_OPTIONAL_PRESENT ":present"
/** Replace the optional operators of g (Optional, OptionalHasElement, OptionalGetElement;
 *  format/ops/optional.c) by Identities of the element or the presence flag: an optional
 *  is the pair (V, V:present) of graph inputs, or Optional(x) with a constant true flag.
 *  An optional graph output V followed by the output "V:present" that no node writes (as
 *  onnx2ecg makes them) gets an Identity of V's flag into it. *n_resolved (may be NULL) gets
 *  the count replaced. Errors: ECG_ERR_INPUT naming the node or output for what cannot be
 *  resolved (an empty Optional constructor, one crossing a subgraph boundary, an optional
 *  graph output whose flag is not known); ECG_ERR_INTERNAL. */
int ecg_resolve_optionals(ecg_graph *g, int *n_resolved, ecg_err *e);

/* ---------------------------------------------------------------- reductions */

/* Each Reduce* operator is y = finish(combine over the reduced axes of map(x)): one row
 * of one table (format/ops/reduce.c) from which constant folding (ecg_eval_reduce) and
 * the emitters (tools/lower/emit/reduce.c) both derive their code. */

/** Element map applied before combining. */
typedef enum ecg_red_map { ECG_RED_MAP_NONE, ECG_RED_MAP_ABS, ECG_RED_MAP_SQUARE, ECG_RED_MAP_EXP } ecg_red_map;
/** Combining operation (its identity starts the accumulator). */
typedef enum ecg_red_combine { ECG_RED_SUM, ECG_RED_PROD, ECG_RED_MAX, ECG_RED_MIN } ecg_red_combine;
/** Final transform of the accumulator. */
typedef enum ecg_red_fin { ECG_RED_FIN_NONE, ECG_RED_FIN_MEAN, ECG_RED_FIN_SQRT, ECG_RED_FIN_LOG } ecg_red_fin;

/** One reduction operator's meaning, with the C it generates: printf formats over
 *  strings with positional arguments (c_map: %1$s the element; c_combine: %1$s the
 *  accumulator, %2$s the mapped element; c_finish: %1$s the accumulator, %2$s the
 *  element count). Max and Min propagate NaN (ONNX Runtime's and numpy's behaviour). */
typedef struct ecg_reduction {
  ecg_op_id op;
  ecg_red_map map;
  ecg_red_combine combine;
  ecg_red_fin fin;
  const char *c_map, *c_combine, *c_finish;
} ecg_reduction;

/** The table row of Reduce* operator op, or NULL when op is not a reduction. */
const ecg_reduction *ecg_reduction_of(ecg_op_id op);
/** The dims a Reduce* node n reduces, for its rank-r input: red[d] = 1 for each reduced
 *  dim (axes attribute or constant axes input; none with noop_with_empty_axes; all when
 *  axes are absent). Returns 0, or -1 when the axes are not a constant or are invalid. */
int ecg_reduced_dims(const ecg_graph *g, const ecg_node *n, int r, int *red);
/** A row reduction (DNNFusion §3.4.4, row-reduction fusion blocks): n is a Reduce* of the
 *  reduction table on float32, keepdims=1, whose constant axes are exactly the trailing
 *  dims [a, r) of its rank-r input (a < r), so that its output [d0..d(a-1), 1, ..., 1]
 *  holds one value per "row" of the input seen as [rows, prod(d(a)..d(r-1))]. Returns 1
 *  and sets *a, else 0. */
int ecg_row_reduction(const ecg_graph *g, const ecg_node *n, int *a);
/** The accumulator's initial value: 0 (sum), 1 (product), -inf / +inf (max / min). */
double ecg_reduction_identity_f(const ecg_reduction *r);
/** The same for an int64 accumulator: 0, 1, INT64_MIN, INT64_MAX. */
int64_t ecg_reduction_identity_i(const ecg_reduction *r);
/** C expression of the initial value for an accumulator of dtype (e.g. "-INFINITY",
 *  "INT32_MIN", "0" for an unsigned max); NULL for a dtype without a C type. */
const char *ecg_reduction_identity_c(const ecg_reduction *r, int dtype);
/** combine(acc, map(x)) in double. */
double ecg_reduction_step_f(const ecg_reduction *r, double acc, double x);
/** combine(acc, map(x)) in int64 (wrapping; exp maps through double). */
int64_t ecg_reduction_step_i(const ecg_reduction *r, int64_t acc, int64_t x);
/** finish(acc) over count reduced elements (mean divides by count; count 0 leaves acc). */
double ecg_reduction_finish_f(const ecg_reduction *r, double acc, int64_t count);
/** The same in int64 (mean truncates; sqrt and log through double). */
int64_t ecg_reduction_finish_i(const ecg_reduction *r, int64_t acc, int64_t count);

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
