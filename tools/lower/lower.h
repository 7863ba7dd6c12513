/* ecg-lower internals: the lowering context and the emitter interface.
 *
 * DESIGN.md "Emitters speak in mapping types"; DNNFusion §3.4.4 (code generation from
 * fusion blocks).  A block's kernel is one C function `static void k<B>(struct P_ctx *ctx)`
 * in model.c; each operator's emitter (tools/lower/emit/<family>.c) writes the body for
 * its node.  Emitters get C expressions for their tensors' base pointers from
 * lw_ptr(), so they never know where a tensor lives (graph I/O buffer, weights blob,
 * arena slot of the static memory plan).
 */
#ifndef ECG_LOWER_H
#define ECG_LOWER_H

#include <stdarg.h>

#include "ecg.h"

/** A growable string. */
typedef struct sbuf {
  char *s;
  size_t len, cap;
  int oom;
} sbuf;
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(sbuf *b);

/** Where a tensor lives at run time. */
typedef enum { LW_NONE = 0, LW_INPUT, LW_OUTPUT, LW_CONST, LW_ARENA } lw_storage;

typedef struct lw_tensor {
  lw_storage where;
  int io_index;      /**< slot in ctx->io[] for LW_INPUT/LW_OUTPUT */
  size_t offset;     /**< bytes into the weights blob (LW_CONST) or the arena (LW_ARENA) */
  size_t bytes;
  int alias_of;      /**< Reorganize output sharing its input's storage: that tensor id; -1 none */
} lw_tensor;

/** The lowering of one graph. */
typedef struct ecg_lower {
  const ecg_graph *g;
  const char *prefix;
  const char *arch;      /**< target ISA name (ecg_arch.h): "native", "aarch64", "riscv64" */
  lw_tensor *t;          /**< per tensor id */
  sbuf decls;            /**< file-scope declarations (kernel parameter structs) */
  sbuf code;             /**< kernel functions */
  sbuf init;             /**< statements run once in create (weight packing) */
  size_t weights_bytes;  /**< size of weights.bin */
  size_t arena_bytes;
  int n_packed;          /**< prepacked weight buffers ctx->pk[], filled at create */
  sbuf scratch_expr;     /**< C expression: max scratch floats over kernels (may call runtime) */
  int n_io;
  int n_tmp;             /**< counter for unique local names */
} ecg_lower;

/** Emitter for one node: append C statements (the body of the node's kernel function)
 *  to L->code. Returns ECG_OK or ECG_ERR_INPUT (unsupported dtype/attribute, naming
 *  the node). */
typedef int (*ecg_emit_fn)(ecg_lower *L, const ecg_node *n, ecg_err *e);

/** The emitter for op id, or NULL (tools/lower/emit/emitters.c). */
ecg_emit_fn ecg_emitter(ecg_op_id id);

/** C expression of tensor id's base pointer, typed as pointer to its C element type
 *  (const for weights). Writes into a small rotating buffer: copy if kept long. */
const char *lw_ptr(ecg_lower *L, int tensor_id);
/** True when tensors a and b resolve to the same storage (a Reorganize alias). */
int lw_same_storage(const ecg_lower *L, int a, int b);
/** Fail with ECG_ERR_INPUT and "node 'NAME' (OP): <message>" (printf-style); the one
 *  error helper of every emitter. Returns ECG_ERR_INPUT. */
int lw_node_err(const ecg_lower *L, const ecg_node *n, ecg_err *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** The registry id of node n's operator (lowering only sees registered ops). */
ecg_op_id lw_op(const ecg_node *n);
/** C type in which tensor id's values are computed: its storage type, or float for
 *  float16/bfloat16 (stored as uint16_t; see lw_half). */
const char *lw_vtype(const ecg_lower *L, int tensor_id);
/** 1 when tensor id is float16, 2 when bfloat16, else 0: its elements are converted
 *  with ecg_h2f/ecg_f2h (ecg_bf2f/ecg_f2bf) in generated code. */
int lw_half(const ecg_lower *L, int tensor_id);
/** C element type of tensor id ("float", "int64_t", ...). */
const char *lw_ctype(const ecg_lower *L, int tensor_id);
/** A prepacked-weight buffer ctx->pk[slot] of size_expr floats (a C expression, e.g. a
 *  runtime size query), allocated in create before any packing statement that follows
 *  in L->init. Returns the slot. */
int lw_packed_slot(ecg_lower *L, const char *size_expr);
/** Ask for `expr` floats of per-call scratch (ctx->scratch); the plan keeps the max. */
void lw_need_scratch(ecg_lower *L, const char *expr);
/** A fresh identifier suffix for locals. */
int lw_uid(ecg_lower *L);

/* Loop-nest generator shared by every strided kernel (elementwise with broadcast,
 * transpose, slice, concat, reductions): iterates a rank-r index space `dims` and keeps
 * one running element offset per operand (o0, o1, ...), operand k moving by strides[k][d]
 * along dimension d.  body is a C statement using o0..o{n-1}; `base` gives each
 * operand's starting offset (may be NULL = 0).  Adjacent dims are merged where every
 * operand allows it; the innermost loop gets `#pragma omp simd` when safe, the
 * outermost parallel loop is split across OpenMP threads when the space is large. */
#define LW_MAX_OPS 8
void lw_loops(ecg_lower *L, int rank, const int64_t *dims, int n_ops,
              int64_t strides[][ECG_MAX_RANK], const int64_t *base, const char *body,
              int parallel);

/** Row-major contiguous strides of dims into st; returns numel. */
int64_t lw_strides(int rank, const int64_t *dims, int64_t *st);
/** Strides of an input of rank ri broadcast to the output rank ro (numpy rules:
 *  aligned right, stride 0 where the input dim is 1 and the output's is not). */
void lw_bcast_strides(int ro, const int64_t *odims, int ri, const int64_t *idims, int64_t *st);
/** Static dims of tensor id (all known after the checks in lower.c); returns rank. */
int lw_dims(const ecg_lower *L, int tensor_id, int64_t *dims);
/** Normalise a possibly negative axis for rank r; -1 when out of range. */
int lw_axis(int64_t axis, int r);

#endif
