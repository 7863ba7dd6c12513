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
#include "runtime/ecg_plan.h"

/** A growable string. */
typedef struct sbuf {
  char *s;
  size_t len, cap;
  int oom;
} sbuf;
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(sbuf *b);

/** Where a tensor lives at run time. */
typedef enum { LW_NONE = 0, LW_INPUT, LW_OUTPUT, LW_CONST, LW_ARENA,
               LW_SEQ, /**< a run-time sequence held by the context (ctx->sq[seq]; emit/sequence.c) */
               LW_HEAP /**< a subgraph tensor of run-time shape (an item of a sequence, what the body makes
                            of it): a context buffer ctx->hb[rtd - 1] grown to fit, its dims ctx->rd[rtd - 1] */
} lw_storage;

typedef struct lw_tensor {
  lw_storage where;
  int io_index;      /**< slot in ctx->io[] for LW_INPUT/LW_OUTPUT */
  size_t offset;     /**< bytes into the weights blob (LW_CONST) or the arena (LW_ARENA) */
  size_t bytes;
  int alias_of;      /**< Reorganize output sharing its input's storage, or a Concat input placed
                          in the Concat's output (find_aliases): that tensor id; -1 none */
  size_t alias_off;  /**< bytes into alias_of's storage where this tensor starts (a Concat input:
                          its slab of the output); 0 otherwise */
  int fixed;         /**< storage given from outside (a subgraph's capture of an outer tensor):
                          the memory plan never places it */
  int pinned;        /**< live through every kernel (a subgraph's inputs and outputs, which the
                          control-flow code around the kernels reads and writes) */
  int dbuf;          /**< dynamic mode (ecg_lower.dyn), LW_ARENA: the run-time plan's buffer holding it
                          (ctx->off[dbuf] + offset); unused otherwise */
  int seq;           /**< LW_SEQ: its slot in ctx->sq[]; for a sequence graph output that is a graph
                          input, the slot its copy is published from; -1 otherwise */
  int rtd;           /**< a tensor of run-time extents (a Slice of run-time operands in a subgraph, read
                          only by sequence operators; lower.c bound_slices): 1 + its row in ctx->rd[]
                          (the extents the Slice gave this run), its storage planned for the bound
                          (its input's shape); 0 otherwise */
} lw_tensor;

/** Which kernel a Conv carrying a PatDNN pattern annotation (g->sparse_convs) gets. */
typedef enum {
  LW_SPARSE_FKW = 0, /**< LRE kernels with each layer's tuned tile (--sparse-tune; the default) */
  LW_SPARSE_CSR,     /**< the CSR baseline (ecg_rt1_csr_conv2d) */
  LW_SPARSE_DENSE,   /**< ignore the annotation: the dense kernel on the zeros */
  LW_SPARSE_FKR,     /**< ablation: FKR + per-pattern straight-line code, accumulators in an L1 tile */
  LW_SPARSE_LRE,     /**< ablation: + register tiles with kernel-level load-redundancy elimination, static tile rule */
  LW_SPARSE_LRE_FILTER /**< ablation: + filter-level LRE (§2.5.4, Fig. 2.11 right): a register tile across
                            filters x output rows x columns, one input load for the kernels of several
                            filters at one (channel, pattern); static tile rule */
} lw_sparse_mode;

/** One measured tile of a pattern-sparse conv (the --sparse-tune file, DESIGN.md
 *  "Measured costs": JSON lines keyed by cpu, isa, threads, device and signature). */
typedef struct lw_sparse_tune {
  char *sig;             /**< emit/sparse.c's layer signature */
  int lanes, rows, vecs; /**< the tile: rows x vecs vectors of lanes floats; lanes 0: the fkr loop ("loop": "l1") */
  int filters;           /**< filters per register tile (1: kernel-level LRE only; 2-4: filter-level LRE) */
  double ms;             /**< measured kernel time */
} lw_sparse_tune;

/* ---------------------------------------------------------------- memplan.c
 * Placing intermediates in the arena (SOD², Niu dissertation §5.4.2). */

/** One buffer to place (runtime/ecg_plan.h: the same planner serves the lowering and the
 *  run-time plan of a dynamic-shape build): size in bytes (aligned by the caller), lifetime
 *  [first, last] in kernel positions (inclusive), and the offset in bytes the plan gives it. */
typedef ecg_plan_buf lw_buf;

/** Placement algorithms: each puts buffers one at a time into a gap between the placed
 *  buffers whose lifetimes intersect its own. */
typedef enum {
  LW_PLAN_PEAK = 0, /**< SOD²: buffers live at the peak-memory position first, then outwards
                         from it (forward and backward), each into the tightest gap */
  LW_PLAN_BESTFIT,  /**< MNN-style: execution order, the tightest ("smallest fitting") gap */
  LW_PLAN_SIZE      /**< TFLite-style: largest first, the lowest gap */
} lw_plan_algo;

/** Set b[i].offset for all n buffers with algo; returns the arena size in bytes (the
 *  highest end), (size_t)-1 on out of memory. */
size_t lw_plan_place(lw_buf *b, int n, lw_plan_algo algo);
/** The largest total of bytes live at one position: no placement needs less. */
size_t lw_plan_lower_bound(const lw_buf *b, int n);
/** The smallest arena over all placement orders with lowest-gap placement (which reaches
 *  every optimum), by branch and bound from the best of the three heuristics, visiting at
 *  most budget search nodes; sets the offsets and *exact (1 when the search finished, so
 *  the result is optimal). Returns the arena size, (size_t)-1 on out of memory. */
size_t lw_plan_optimum(lw_buf *b, int n, long budget, int *exact);
/** Every planner on one set of buffers (SOD² §5.4.2's comparison): the arena of each
 *  algorithm, the lower bound (bytes live at the peak position) and the optimum when the
 *  branch and bound finishes within its budget (optimum_exact; else optimum is the best
 *  arena found). Bytes. */
typedef struct lw_plan_cmp {
  int buffers;
  size_t arena[3];       /**< indexed by lw_plan_algo */
  size_t lower_bound;
  size_t optimum;
  int optimum_exact;
} lw_plan_cmp;
/** Most buffers lw_plan_compare searches for the optimum (each search node tries every
 *  unplaced buffer: the cost grows with n^3 per node). */
#define LW_PLAN_SEARCH_MAX 24
/** Fill *c for b[0..n) (b is not changed: the planners run on a copy). The optimum: a
 *  heuristic that reaches the lower bound is optimal; else, for n <= LW_PLAN_SEARCH_MAX,
 *  branch and bound limited to budget nodes; else the best heuristic with optimum_exact 0.
 *  Returns 0, -1 on out of memory. */
int lw_plan_compare(const lw_buf *b, int n, long budget, lw_plan_cmp *c);
/** "peak", "bestfit", "size". */
const char *lw_plan_name(lw_plan_algo a);
/** Parse such a name into *a; -1 when unknown. */
int lw_plan_parse(const char *s, lw_plan_algo *a);

/** How a kernel (one fusion block) is generated. */
typedef enum {
  LW_K_SINGLE = 0, /**< one node: its emitter */
  LW_K_EW,         /**< One-to-One members only: one loop nest (lw_emit_ew_block) */
  LW_K_EPI,        /**< a Many-to-Many dominant node + One-to-One members as its epilogue */
  LW_K_IBR,        /**< intensive fusion (AGO §III-B): [pointwise conv [+act]] -> depthwise
                        conv [+act] -> pointwise conv (the dominant) + epilogue (ecg_rt1_ibr) */
  LW_K_ROW,        /**< row reductions with One-to-One members over [rows, inner]
                        (lw_emit_row_block) */
  LW_K_SE,         /**< intensive fusion of a squeeze-and-excitation chain (chain.h
                        ecg_se_match): pool -> 1x1 conv -> 1x1 conv [-> scale] (ecg_rt1_se) */
  LW_K_CPOOL       /**< intensive fusion of Conv [+act] -> MaxPool (chain.h
                        ecg_conv_pool_match; ecg_rt1_conv2d_maxpool) */
} lw_kernel_kind;

/** Kernel kind k is an intensive-fusion kind (ecg-fuse --intensive; C target only). */
static inline int lw_kind_intensive(lw_kernel_kind k) { return k == LW_K_IBR || k == LW_K_SE || k == LW_K_CPOOL; }

/** One kernel of the lowered model: a fusion block (DNNFusion §3.4.3), or a node of no
 *  block. */
typedef struct lw_kernel {
  int *members;          /**< node indices: the core members in topological order, then the
                              index maps (permutations absorbed by the dominant node) */
  int nm;
  int nm_core;           /**< members[0..nm_core) are generated; the rest are index maps that
                              move no data (lw_operand_view, lw_output_view) */
  int dominant;          /**< LW_K_EPI: node index of the Many-to-Many member; LW_K_IBR: the
                              last pointwise conv; LW_K_SE: the last member; else -1 */
  int epi_from;          /**< members[epi_from..nm) are the dominant's One-to-One epilogue */
  lw_kernel_kind kind;
  int fallback;          /**< LW_K_EPI whose emitter ran without the epilogue: one extra pass */
  int nparts;            /**< kernels its fusion block is lowered as: 1, or the stages of an
                              intensive-fusion block whose schedule sets intensive_fusion off
                              (ECG_INTENSIVE_OFF); the block's schedule then applies to every
                              stage that takes a knob (ecg_lower.sched_shared) */
} lw_kernel;

/** The back end a lowering prints (ecg-lower --target; ../shared/DESIGN.md "Flags"). */
typedef enum {
  LW_TARGET_C = 0, /**< C with OpenMP and the runtime library (model.c) */
  LW_TARGET_OPENCL /**< OpenCL C kernels (model.cl) and a host file (model.c) linking only -lOpenCL */
} lw_target;

/** The lowering of one graph. */
/** Most guard entries (nested flattened Ifs) of one node. */
#define LW_MAX_GUARD 16
typedef struct ecg_lower {
  const ecg_graph *g;
  const char *prefix;
  const char *arch;      /**< target ISA name (ecg_arch.h): "native", "aarch64", "riscv64" */
  lw_tensor *t;          /**< per tensor id */
  sbuf decls;            /**< file-scope declarations (kernel parameter structs) */
  sbuf code;             /**< kernel functions */
  sbuf init;             /**< statements run once in create (weight packing) */
  sbuf pk_sizes;         /**< a static build's create: each packed-weights slot's bytes, pkb_[slot] =
                              (lw_packed_slot), before the one region they share is allocated */
  int pk_dyn;            /**< 1: a dynamic build (dyn.c), whose slots are allocated one by one; its
                              subgraphs (static, dyn 0) keep the scheme */
  size_t weights_bytes;  /**< size of weights.bin */
  size_t arena_bytes;    /**< bytes of the arena the model needs (ARENA_BYTES): the plan's top, raised
                              by nested subgraph regions */
  size_t arena_base;     /**< where this graph's plan starts in the arena (0; a subgraph: above the
                              plan of the graph holding it, lw_lower_subgraph) */
  size_t plan_bytes;     /**< bytes of this graph's own plan, from arena_base */
  const char *arena_name; /**< the C expression of the arena a static plan's offsets are in: NULL for
                               ctx->arena; "ctx->rgn" in the subgraphs of a dynamic build, whose
                               static plans share one context buffer of rgn_bytes */
  size_t rgn_bytes;      /**< a dynamic build: the bytes its control-flow nodes' subgraphs need (ctx->rgn) */
  size_t *region_off;    /**< per kernel: where a control-flow kernel's subgraphs are planned (an
                              arena buffer of the plan, live at that kernel only; plan_memory) */
  size_t arena_lower_bound; /**< bytes live at the peak position (lw_plan_lower_bound) */
  lw_plan_cmp plan_cmp;  /**< every planner on this graph's buffers (model.json memory_plans) */
  lw_plan_algo plan;     /**< how intermediates are placed (ecg-lower --memory-plan) */
  int n_packed;          /**< prepacked weight buffers ctx->pk[], filled at create */
  sbuf scratch_expr;     /**< C expression: max scratch floats over kernels (may call runtime) */
  int n_io;
  int n_seq;             /**< run-time sequence slots ctx->sq[] (emit/sequence.c) */
  int n_rtd;             /**< rows of run-time extents ctx->rd[] (lw_tensor.rtd) */
  int n_tmp;             /**< counter for unique local names */
  lw_kernel *k;          /**< kernels in execution order (kernels.c) */
  int nk;
  int *node_kernel;      /**< per node index: its kernel */
  const char *epi_act;   /**< set while emitting a LW_K_EPI dominant node: the C expression of
                              the ecg_act that applies the block's epilogue; NULL otherwise */
  int epi_used;          /**< the dominant node's emitter passed epi_act to its runtime call */
  const char *epi_bias;  /**< set while emitting a LW_K_EPI dominant GEMM whose first epilogue member
                              adds a constant row vector (ecg_bias_n_of): the C pointer of that
                              vector, for the runtime call's bias_n; NULL otherwise */
  int epi_bias_used;     /**< the dominant node's emitter passed epi_bias to its runtime call */
  int epi_skip;          /**< epilogue members the dominant's call applies itself (the bias Add: 1) */
  int epi_x;             /**< the tensor the rest of the epilogue reads as the stored y: the
                              dominant's output, or the bias Add's when epi_skip is 1 */
  const lw_kernel *cur;  /**< the kernel being emitted (its index maps serve lw_operand_view) */
  const ecg_schedule *sched; /**< the tuner's schedule of the kernel being emitted (its fusion block's,
                              ecg-partition --tune); NULL when none or all knobs 0 (the defaults) */
  int conv_algo_next;    /**< ECG_CONV_ALGO_* the next lw_conv_params_decl records (emit_conv sets it) */
  int sched_shared;      /**< the kernel being emitted is one of its block's nparts > 1 kernels: a
                              conv_algo its Conv cannot take is skipped, not refused */
  int *sched_left;       /**< per fusion block: its kernels not yet emitted (kernel_schedule_used
                              checks a shared schedule's knobs when the last one is) */
  int *sched_acc;        /**< per fusion block: LW_SCHED_* bits its kernels took so far */
  int sched_used;        /**< LW_SCHED_* bits: the knobs the kernel's code took (a set knob that
                              no code took is refused, naming the node) */
  lw_sparse_mode sparse; /**< kernels for pattern-annotated convs (ecg-lower --sparse) */
  int n_sparse;          /**< convs lowered to a sparse kernel */
  lw_sparse_tune *tune;  /**< --sparse-tune records of this cpu, isa and thread count */
  int n_tune;
  int tile_force[4];     /**< --sparse-tile lanes, rows, vecs, filters for every LRE layer; 0 = not forced */
  int sparse_types;      /**< the vector types of the LRE kernels are declared in decls */
  sbuf sparse_json;      /**< model.json "sparse_layers" entries */
  unsigned char *blob;   /**< lowering-made constants (lw_blob), appended to weights.bin */
  size_t blob_start, blob_len, blob_cap; /**< blob's first byte in weights.bin; used and allocated bytes */
  lw_target target;      /**< LW_TARGET_OPENCL: kernels are OpenCL C (opencl.c) */
  int64_t *cl_work;      /**< OpenCL: per kernel, the largest index space its loops cover (work-items
                              worth launching; 0: the kernel moves nothing and is not enqueued) */
  const char *sym;       /**< prefix of the kernel-local symbols (epilogue functions) of a split
                              part's lowering (hetero.c); NULL: none */
  /* ---- --target c+opencl (hetero.c): C lowering, placed kernels on an OpenCL device */
  int hetero;            /**< 1: c+opencl (target is LW_TARGET_C for the main lowering) */
  sbuf cl_decls, cl_code; /**< model.cl: the device parts' epilogues and __kernels */
  sbuf cl_names;         /**< the device kernels' names, one C string literal a line, comma-ended */
  int n_clk;             /**< device kernels in model.cl */
  size_t het_base;       /**< host scratch of the CPU parts: ctx->arena + het_base (after the plan) */
  size_t het_host, het_dev; /**< bytes of host scratch (CPU parts) and device buffer (device parts) */
  sbuf het_json;         /**< model.json "placements": what ran where, and why */
  sbuf het_notes;        /**< one line per placed kernel run on the CPU instead (ecg_lower_stats.notes) */
  /* ---- GCD² layouts (blocks annotated NCHWc8/NCHWc16; layout_sel.c) */
  int *lay;              /**< per tensor: channel block C of its stored layout (0 NCHW, 8 or 16 NCHWc); NULL: all NCHW */
  int *klay;             /**< per kernel: the layout it computes in (0, 8, 16) */
  char **ptr_over;       /**< per tensor: what lw_ptr returns instead (its reordered copy, while one kernel is emitted) */
  size_t lay_base, lay_bytes; /**< the reorder buffers: arena bytes [lay_base, lay_base + lay_bytes) */
  struct lw_lay_copy { int t, C; size_t off; } lay_held[2][16]; /**< the reordered copies in the buffers: [0] what
                             the kernel being emitted writes, [1] what the kernel before it left */
  int lay_nheld[2], lay_held_k; /**< their counts (16 at most recorded); the kernel [0] is for (-1: none) */
  /* ---- dynamic shapes (dyn.c; issue 9 item 2, SOD² §5.4): symbolic dims kept, sizes at run time */
  int dyn;               /**< 1: the ECG keeps symbolic dims and no --input-shape bound them */
  char **syms;           /**< the graph inputs' symbols (ECG names), n_sym: run-time variables s0.. */
  int n_sym;
  char ***dexpr;         /**< per tensor with a symbolic dim, per dim: its C expression over s0.. (NULL
                              for a number); NULL for a static tensor */
  int n_dbuf;            /**< buffers of the run-time memory plan (ctx->off[]) */
  int *dbuf_tensor;      /**< per run-time buffer: the tensor (alias root) it holds */
  int *dbuf_life;        /**< per run-time buffer: first and last kernel position (2 ints) */
  sbuf prep;             /**< statements of the generated prepare_ (run when the input shapes change):
                              conv parameters, scratch sizes, weight packing */
  /* ---- guarded nodes (a dynamic build's flattened Ifs: ecg_flatten_ifs, ECG_ATTR_GUARD) */
  int *gd_n;             /**< per node: guard entries (0: unguarded); NULL when no node is guarded */
  int (*gd_c)[LW_MAX_GUARD]; /**< per node: each entry's condition tensor */
  int (*gd_s)[LW_MAX_GUARD]; /**< per node: each entry's sign (1: runs when true, 0: when false) */
  unsigned char *tguard; /**< per tensor: 1 when a guarded node writes it (its sizes may not fit
                              when its branch is not taken: checked when the node runs) */
} ecg_lower;

/** Print node i's guard as a C condition (its entries' condition tensors read at run time,
 *  joined by &&, outer Ifs first) into c; nothing when node i is unguarded. Returns 1 when
 *  it printed one. */
int lw_guard_c(ecg_lower *L, int i, sbuf *c);

/* ---------------------------------------------------------------- dyn.c: dynamic shapes
 * The one abstraction through which converted emitters print a dim, an element count or a
 * stride: static, the number exactly as the static lowering prints it; dynamic, a C
 * expression over the symbol constants s0.. that every generated kernel declares
 * (lw_dyn_prologue). Emitters not converted yet are refused on symbolic shapes (lower.c,
 * lw_emit_dynamic). */

/** Give every dim that RDP proved equal to a number (DIM_EXPR whose expression is an integer,
 *  e.g. a Reshape's "200" numeric inference missed) that number as its value, so the lowering
 *  sees it as static. Nothing else changes. */
void lw_dyn_numbers(ecg_graph *g);
/** The control flow of a dynamic-shape build (g keeps symbolic dims, no --input-shape):
 *  every If whose branches hold no run-time sequence is flattened into guarded nodes
 *  (ecg_flatten_ifs; LOWERED.md "Dynamic shapes"), then the graph is inferred again and RDP
 *  (format/rdp.c, SOD² §5.4.1) gives the branches' tensors their dims as expressions over
 *  the graph inputs' symbols, so each branch node is lowered like any node of the graph and
 *  its intermediates are planned at run time. Nothing changes when g has no such If or no
 *  symbolic dim. Errors: those of ecg_flatten_ifs, ecg_infer_shapes and ecg_rdp_run; a
 *  graph input dim that is an expression (onnx2ecg --dim-multiple), which this second RDP
 *  cannot take: ECG_ERR_INPUT naming the If. */
int lw_dyn_flatten(ecg_graph *g, ecg_err *e);
/** Print the generated check that symbolic dim d of tensor t (L->dexpr[t][d] not NULL) is at
 *  least 1, or 0 when the C expression `empty` (an input is empty) holds: otherwise ctx->msg
 *  names the tensor, the dim and its value and the statement `fail` runs (bind_: "return
 *  -3;", a guarded kernel: "ctx->err = -3; return;"). */
void lw_dyn_dim_check(const ecg_lower *L, sbuf *c, int t, int d, const char *empty, const char *fail);
/** 1 when some tensor of g has a known rank and a dim that is not a number. */
int lw_graph_symbolic(const ecg_graph *g);
/** Enter the dynamic mode: collect the graph inputs' symbols (L->syms) and translate every
 *  symbolic dim of a tensor some node touches into C (L->dexpr; RDP's (E/K) floor division
 *  becomes ecg_fdiv_(E, K)). Errors (ECG_ERR_INPUT, naming the node, the operator and the
 *  tensor): a dim RDP left nac or undef, an unknown rank, a target other than C;
 *  ECG_ERR_INTERNAL (out of memory). */
int lw_dyn_setup(ecg_lower *L, ecg_err *e);
/** Free what lw_dyn_setup and the dynamic planning allocated. */
void lw_dyn_free(ecg_lower *L);
/** 1 when tensor id has a symbolic dim (dynamic mode only). */
int lw_tensor_dyn(const ecg_lower *L, int id);
/** 1 when node n reads or writes a tensor with a symbolic dim. */
int lw_node_dyn(const ecg_lower *L, const ecg_node *n);
/** C expression of dim d of tensor id: its number ("48"), or the symbolic expression
 *  ("ecg_fdiv_((s1+15), 16)"). A small rotating buffer: copy if kept long. */
const char *lw_dim(const ecg_lower *L, int id, int d);
/** C expression of the product of dims [from, to) of tensor id (an element count, or a
 *  row-major stride when to is the rank): a number when they are all numbers ("1152"),
 *  else "(K*(e1)*(e2))". The same rotating buffer as lw_dim. */
const char *lw_dim_prod(const ecg_lower *L, int id, int from, int to);
/** Append "  const int64_t s0 = SRC[0], s1 = SRC[1];" (the symbol constants a dynamic
 *  kernel's expressions use; SRC e.g. "ctx->sym") to c; nothing in the static mode. */
void lw_dyn_prologue(const ecg_lower *L, sbuf *c, const char *src);
/** 1 when dim da of tensor a and dim db of tensor b are provably equal (the same number,
 *  or the same RDP expression). */
int lw_dyn_same_dim(const ecg_lower *L, int a, int da, int b, int db);
/** 1 when dim d of tensor id is the number 1. */
int lw_dyn_unit(const ecg_lower *L, int id, int d);
/** model.c of a dynamic build: the context's fields for the run-time sizes (symbols, input
 *  shapes, the plan's offsets ctx->off[], capacities, the error message). */
void lw_dyn_ctx_fields(const ecg_lower *L, sbuf *b);
/** model.c of a dynamic build: P_error, P_set_input_shape, bind_ (symbols from the input
 *  shapes, a symbol met twice checked, every symbolic dim checked >= 1: -3 with the message
 *  naming the input or tensor), P_output_shape, and prepare_ (scratch from L->scratch_expr,
 *  L->prep's packing, the run-time memory plan with ecg_rt1_plan_place, arena grown). */
void lw_dyn_write_api(ecg_lower *L, sbuf *b);
/** model.h of a dynamic build: ECG_MODEL_DYNAMIC and the declarations of the shape API. */
void lw_dyn_write_header(const ecg_lower *L, sbuf *b);
/** Dynamic mode: a prepacked-weight slot ctx->pk[slot] that prepare_ (re)allocates and fills
 *  (L->prep) instead of create. Returns the slot. */
int lw_dyn_packed_slot(ecg_lower *L);
/** Dynamic mode: the loop nest of an elementwise kernel over the dims of output tensor out
 *  (loops.c): operand k (0 = the output) is row-major in its own shape and moves along the
 *  output dims d where real[k][d] is 1 (its dim equals the output's there), stays where 0
 *  (broadcast); body uses the offsets o0.. as with lw_loops. Unit dims drop out, adjacent
 *  dims along which every operand agrees merge; the outer loop is parallel above 32768
 *  elements, decided at run time. */
void lw_dloops(ecg_lower *L, int out, int n_ops, unsigned char real[][ECG_MAX_RANK], const char *body);
/** Dynamic mode: the general loop nest over the dims of output tensor out: operand k's
 *  element offset moves by the C expression st[k][d] along output dim d (NULL: it stays)
 *  from base[k] (NULL array or entry: 0); dim d joins the loop of the kept dim before it
 *  where merge[d] (NULL: none merge; the caller guarantees every operand's offsets stay
 *  affine over the merged loop: its stride before equals its stride after times the dim).
 *  Unit dims drop out. With parallel, the outer loops are collapsed into one parallel space
 *  above 32768 elements (decided at run time) where operand 0 moves along each of them; the
 *  innermost loop is simd where operand 0 moves along it (else it accumulates: a reduction). */
void lw_dloops_st(ecg_lower *L, int out, int n_ops, const char *const st[][ECG_MAX_RANK], const char *const *base,
                  const unsigned char *merge, const char *body, int parallel);

/** "__global " when L prints OpenCL C (every pointer into a device buffer carries it), "" for C. */
const char *lw_gq(const ecg_lower *L);
/** OpenCL: note that the kernel being emitted iterates an index space of n elements
 *  (grid-stride loops over get_global_id(0); the host launches min(n, cap) work-items). */
void lw_cl_work(ecg_lower *L, int64_t n);
/** OpenCL: scalar expression x (format/ops/scalar.def, as the registry holds it, its helper
 *  macros expanded) with each `_Generic(E, float: F, default: D)` selection replaced by D,
 *  which model.cl's prelude declares overloadable for float and double (OpenCL has no
 *  function designators in expressions). Written into tmp (sb_free it); returns tmp's text. */
const char *lw_cl_expr(sbuf *tmp, const char *x);
/** Append s to b as a C string literal (quotes, backslashes and non-printable bytes escaped). */
void lw_c_str(sbuf *b, const char *s);
/** Append s to b as a JSON string literal (quotes, backslashes and control characters escaped). */
void lw_json_str(sbuf *b, const char *s);
/** Write n bytes of data to dir/name. ECG_OK, or ECG_ERR_INPUT naming the path and the
 *  reason (ENOSPC, EACCES, ...), ECG_ERR_INTERNAL (out of memory). */
int lw_write_file(const char *dir, const char *name, const void *data, size_t n, ecg_err *e);
/** OpenCL host file model.c, first part (opencl.c): the comment, includes, sizes and the
 *  context struct (OpenCL objects, device buffers, bound host buffers). */
void lw_cl_host_head(ecg_lower *L, sbuf *b);
/** OpenCL host file model.c, second part (after the I/O tables and kernel_names_): the
 *  program (model.cl: the OpenCL C prelude, the epilogue device functions and one __kernel
 *  per block) as a string, run (inputs written, kernels enqueued in order on one in-order
 *  queue, outputs read back, one clFinish), destroy, the device choice (ECG_CL_DEVICE) and
 *  create (program built once, weights uploaded once); also writes the program as dir/model.cl.
 *  ECG_OK or the write error. */
int lw_cl_host_body(ecg_lower *L, sbuf *b, const char *dir, ecg_err *e);

/** The OpenCL program as the C string cl_source_ (the prelude, kernel arguments A, W and n_io
 *  io buffers, decls, code) into b, and the same text as dir/model.cl. ECG_OK or the write
 *  error (ECG_ERR_INPUT naming the path), ECG_ERR_INTERNAL (out of memory). */
int lw_cl_print_program(sbuf *b, const char *dir, int n_io, const sbuf *decls, const sbuf *code, ecg_err *e);
/** Print the host functions pick_device_ (ECG_CL_DEVICE: an index into every platform's
 *  devices in order) and cl_open_ (context, in-order queue, cl_source_ built; 0, ENODEV or
 *  EINVAL with the build log on stderr), shared by --target opencl and c+opencl. */
void lw_cl_print_open(sbuf *b);

/* ---- --target c+opencl (hetero.c; EOP, Xu et al. VEE '22 §3: a key operator split along one
 * dimension, the CPU and the device each computing a part, concurrently) */
/** Kernel p of a c+opencl lowering: when its node carries a placement (Graph.placements)
 *  that gives the device a part, print the whole C function k<p> (the device part: its cut
 *  inputs written to the device, its OpenCL kernel enqueued, its slice of each output read
 *  back, all non-blocking; then the CPU part: the same kernel lowered by the C emitters on
 *  the CPU's cut, its slices copied in place; then one clFinish) and set *done; else (no
 *  placement, a CPU share of all rows, or a kernel that cannot be cut: a line in
 *  L->het_notes naming the node and why) leave *done 0: the kernel is the plain C one. Errors:
 *  ECG_ERR_INTERNAL (out of memory). */
int lw_het_kernel(ecg_lower *L, int p, int *done, ecg_err *e);
/** c+opencl model.c pieces: the context fields, the statements of create (after the weights
 *  are read into ctx->w: the device opened, its buffers and kernels made) and of destroy. */
void lw_het_ctx_fields(const ecg_lower *L, sbuf *b);
void lw_het_create(const ecg_lower *L, sbuf *b);
void lw_het_destroy(const ecg_lower *L, sbuf *b);

/** Append n bytes made by the lowering (FKW index arrays, CSR arrays) to weights.bin at a
 *  64-byte aligned offset and return the offset (ctx->w + offset at run time); sets
 *  b.oom-style failure by returning (size_t)-1 on out of memory. */
size_t lw_blob(ecg_lower *L, const void *data, size_t n);

/** A subgraph lowered as nested code (lw_lower_subgraph): kernel functions
 *  `<name>_k<q>(struct P_ctx *)`, q < nk, written at file scope, and the storage of the
 *  subgraph's tensors (view: an ecg_lower whose g and t are the subgraph's, for lw_ptr). */
typedef struct lw_sub {
  char name[32];
  int nk;
  ecg_graph *sg;         /**< the bound, inferred copy of the subgraph (owned) */
  ecg_lower view;        /**< L with g = sg, t = the subgraph's storage (owned) */
} lw_sub;
/** Lower subgraph sg of control-flow node n (Niu dissertation ch. 5 / issue 9: control flow
 *  as nested code): a copy bound to n and inferred (ecg_subgraph_infer), static shapes
 *  checked, kernels formed (one per node) and emitted as file-scope functions (L->decls),
 *  captures stored where the outer tensors live, constants appended to weights.bin (lw_blob),
 *  every other tensor planned (L->plan) inside the region L's own plan gave the node's
 *  kernel (L->region_off: a buffer live at that kernel only, sized by a dry run of the same
 *  planning; inputs and outputs pinned live throughout), nested control flow recursively
 *  inside regions of that plan.
 *  The caller emits the calls and the copies in and out, then lw_sub_free. Errors: those
 *  of ecg_subgraph_infer, a non-static shape or a missing emitter in the subgraph
 *  (ECG_ERR_INPUT "node 'N' (Op): subgraph 'S': ..."), ECG_ERR_INTERNAL. */
int lw_lower_subgraph(ecg_lower *L, const ecg_node *n, const ecg_graph *sg, lw_sub *out, ecg_err *e);
void lw_sub_free(lw_sub *s);

/** Form the kernels of L->g (kernels.c): the fusion blocks of the ECG (node->fusion_block
 *  with g->blocks) and one kernel per node outside any block, in a topological order of
 *  the block graph. A block that cannot be generated as one kernel (mixed members, a
 *  cycle) is split into one-node kernels with a note on stderr. A block's schedule
 *  intensive_fusion (AGO §III-B as a tuning knob, ECG schema 8): off lowers an
 *  intensive-fusion block (LW_K_IBR) as one kernel per stage ([pointwise [+act]],
 *  [depthwise [+act]], [pointwise + epilogue], each formed like a block of its own, nparts
 *  set on them), on or auto as the one fused kernel. Fills L->sched_left (kernels per
 *  block). ECG_OK, ECG_ERR_INPUT naming the node when intensive_fusion is on or off on a
 *  block that is no intensive-fusion chain, or ECG_ERR_INTERNAL (out of memory). */
int lw_form_kernels(ecg_lower *L, const int *order, ecg_err *e);
/** Tensors of L->g that a kernel keeps in registers (IR_removable: produced and consumed
 *  inside one kernel, not a graph output) lose their storage (LW_NONE); the dominant
 *  output of a LW_K_EPI or LW_K_IBR kernel, when read only inside, is stored in the
 *  block's output buffer (alias), where its epilogue runs in place; so is the scaled input
 *  of a LW_K_SE kernel with its scale when its other readers run before that kernel
 *  (ecg_rt1_se scales in place). Call after lw_form_kernels (kernels in execution order),
 *  before planning. */
void lw_kernel_storage(ecg_lower *L);
/** Nominal work of kernel k (cost.c): *flops = the registry's FLOP count summed over its
 *  members (multiply-add = 2 FLOPs, as ecg_op_info.flops), *bytes = bytes of the distinct
 *  tensors it reads from outside itself (inputs, weights, other kernels' outputs) plus the
 *  bytes it writes to storage of their own (IR_removable tensors and aliases excluded).
 *  producer is ecg_producers' array. Shapes must be static (lower.c checks). Used for
 *  model.json's "kernel_costs" (ecg-bench --profile: GFLOP/s, roofline; issue 13). */
void lw_kernel_cost(const ecg_lower *L, const int *producer, int k, int64_t *flops, int64_t *bytes);
/** Emit the body of kernel k (the statements of its kernel function): with GCD² layouts
 *  (L->klay), the reorders of its inputs (lw_layout_enter) and its NCHWc or NCHW code. */
int lw_emit_kernel(ecg_lower *L, int k, ecg_err *e);
/** The NCHW body of kernel k (its emitters), with no reorders. */
int lw_emit_kernel_plain(ecg_lower *L, int k, ecg_err *e);

/* ---------------------------------------------------------------- layout_sel.c: lowering
 * the blocks' GCD² layouts ("NCHWc8", "NCHWc16"; format/ECG.md) */

/** After the kernels are formed: when some block has an NCHWc layout, set L->klay (each
 *  kernel's layout: its block's), L->lay (each tensor's stored layout: its producing
 *  kernel's) with the padded bytes of NCHWc tensors, L->lay_bytes (the largest total of
 *  reorder buffers one kernel needs) and declare the NCHWc runtime header. No NCHWc block:
 *  nothing changes (model.c as without the annotation). Errors (ECG_ERR_INPUT, naming the
 *  block): an NCHWc block that is not a 2-D group-1 or depthwise convolution with
 *  elementwise same-shape members over 4-D float32 tensors, that writes a graph output or
 *  a tensor another node aliases (Reshape), or a target other than C. */
int lw_layout_storage(ecg_lower *L, ecg_err *e);
/** Before kernel k: reorder each input whose stored layout differs from the kernel's into
 *  the reorder buffers and point lw_ptr at the copy. */
int lw_layout_enter(ecg_lower *L, int k, ecg_err *e);
/** After a kernel: lw_ptr back to the tensors' own storage. */
void lw_layout_leave(ecg_lower *L);
/** Kernel k in NCHWc (L->klay[k]): its convolution through ecg_rt1_nchwc_conv2d with the
 *  block's epilogue (the generated function on runs of whole NCHWc positions). */
int lw_emit_nchwc_kernel(ecg_lower *L, int k, ecg_err *e);
/** Free what lw_layout_storage allocated. */
void lw_layout_free(ecg_lower *L);
/** The channel block of fusion block b's layout annotation: 8 (NCHWc8), 16 (NCHWc16), or 0
 *  (NCHW: "", none, or b < 0 / out of range). */
int lw_block_lanes(const ecg_graph *g, int b);
/** Write to L->decls the epilogue function `fname` (ecg_epilogue_fn) of LW_K_EPI kernel
 *  k: on a segment y[0..n) of the dominant node's output it computes the One-to-One
 *  members (block.c; operands addressed through broadcasting index maps, split into runs
 *  along which every address moves by one or stays) and stores the block's outputs. */
int lw_emit_epilogue(ecg_lower *L, int k, const char *fname, ecg_err *e);
/* 1 when kernel K's epilogue is one of the runtime's built-in activations (Relu, Clip,
 * LeakyRelu, Sigmoid, HardSwish, SiLU) applied in place to the dominant node's output,
 * with the C expression of that ecg_act written into buf (sz bytes); 0 otherwise, buf
 * untouched (the caller then generates an ECG_ACT_FN epilogue with lw_emit_epilogue).
 * C target only. lower.c describes the conditions. */
int lw_builtin_epilogue(const ecg_lower *L, const lw_kernel *K, char *buf, size_t sz);
/** Emit kernel k of kind LW_K_IBR: one ecg_rt1_ibr call, the epilogue as its act3 (emit/ibr.c). */
int lw_emit_ibr(ecg_lower *L, int k, ecg_err *e);
/** Emit kernel k of kind LW_K_SE: one ecg_rt1_se call, its two 1x1 convs' weights packed at
 *  create (emit/se.c). ECG_ERR_INTERNAL when the kernel's members are no such chain. */
int lw_emit_se(ecg_lower *L, int k, ecg_err *e);
/** Emit kernel k of kind LW_K_CPOOL: one ecg_rt1_conv2d_maxpool call, the conv's weights
 *  packed at create, its activation built in (emit/convpool.c). ECG_ERR_INTERNAL when the
 *  kernel's members are no such chain; the conv's schedule errors (emit_conv's). */
int lw_emit_conv_pool(ecg_lower *L, int k, ecg_err *e);

/** The strided view of input k of node n (a node of the kernel being emitted): *base gets
 *  the tensor whose storage holds it (n's input itself, or, when a permutation of the
 *  kernel is its index map, that permutation's input) and st[] its element strides per
 *  dim of n's input (row-major for a plain tensor). Returns the rank (DNNFusion Fig. 3.5;
 *  ecg_index_map_in). */
int lw_operand_view(const ecg_lower *L, const ecg_node *n, int k, int *base, int64_t *st);
/** The same for n's output 0: *dst the tensor written (the output itself, or the output
 *  of the permutation that is its index map), st[] the element strides per dim of n's
 *  output (ecg_index_map_out). Returns the rank. */
int lw_output_view(const ecg_lower *L, const ecg_node *n, int *dst, int64_t *st);

/** Emitter for one node: append C statements (the body of the node's kernel function)
 *  to L->code. Returns ECG_OK or ECG_ERR_INPUT (unsupported dtype/attribute, naming
 *  the node). */
typedef int (*ecg_emit_fn)(ecg_lower *L, const ecg_node *n, ecg_err *e);

/** The emitter for op id, or NULL (tools/lower/emit/emitters.c). */
ecg_emit_fn ecg_emitter(ecg_op_id id);
/** Whether emitter fn handles symbolic dims (emit/emitters.c: the emitters converted to
 *  lw_dim so far); the others are refused on a symbolic shape, naming the node. */
int lw_emit_dynamic(ecg_emit_fn fn);
/** OpenCL: the emitter printing kernel code for C emitter fn, or NULL when the OpenCL printer
 *  cannot express that operator yet (opencl.c). The index-map emitters (lw_loops based) are
 *  their own OpenCL emitters; Conv, Gemm, MatMul and pooling have OpenCL loop nests. */
ecg_emit_fn lw_cl_emitter(ecg_emit_fn fn);

/** C expression of tensor id's base pointer, typed as pointer to its C element type
 *  (const for weights). Writes into a small rotating buffer: copy if kept long. */
const char *lw_ptr(ecg_lower *L, int tensor_id);
/** Optional input i of node n as C into buf (sz bytes): lw_ptr of it, or NULL when the
 *  node has no such input (a bias left out). */
void lw_ptr_opt(ecg_lower *L, const ecg_node *n, int i, char *buf, size_t sz);
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
/** Which schedule knobs a kernel's code took (ecg_lower.sched_used). */
enum { LW_SCHED_SIMD = 1, /**< vector_width / unroll: the innermost generated loop's pragmas */
       LW_SCHED_CONV = 2, /**< conv_algo: the ecg_conv_params of a Conv's runtime call */
       LW_SCHED_TILE = 4  /**< tile: output rows per band of the intensive-fusion kernel (ecg_ibr_params.band_rows) */ };
/** Print, indented by ind, the pragma line(s) in front of the current kernel's innermost
 *  generated loop, whose default pragma is `#pragma BASE` (BASE "omp simd" or "omp
 *  parallel for simd"). AGO §V's tunable vector width and unroll: a schedule's
 *  vector_width V adds " simdlen(V)"; its unroll U (BASE "omp simd" only; a parallel
 *  loop keeps its pragma) replaces the line by "#pragma GCC ivdep" and "#pragma GCC unroll
 *  U" (an OpenMP simd loop takes no other pragma, so unroll excludes vector_width: the
 *  kernel_schedule check refuses both). Marks LW_SCHED_SIMD used when a knob went in. */
void lw_inner_pragma(ecg_lower *L, sbuf *c, int ind, const char *base);

void lw_loops(ecg_lower *L, int rank, const int64_t *dims, int n_ops,
              int64_t strides[][ECG_MAX_RANK], const int64_t *base, const char *body,
              int parallel);

/** Open a parallel loop `for (int64_t VAR ...) {` over n independent iterations at the given
 *  indent (the caller closes it): C, `#pragma omp parallel for if(work > threshold)` over
 *  0..n-1; OpenCL, a grid-stride loop over get_global_id(0) (the iterations are spread over
 *  the work-items; lw_cl_work(n)). The printer piece of the emitters that write their own
 *  loop over output elements (Softmax, Gather, Pad). */
void lw_par_for(ecg_lower *L, int indent, const char *var, int64_t n, int64_t work, int64_t threshold);
/** lw_par_for with the iteration count n and the work as C expressions (lw_dim_prod's: numbers,
 *  or run-time sizes in a dynamic build); the OpenCL caller records its work-items itself. */
void lw_par_for_expr(ecg_lower *L, int indent, const char *var, const char *n, const char *work, int64_t threshold);
/** Row-major contiguous strides of dims into st; returns numel. */
int64_t lw_strides(int rank, const int64_t *dims, int64_t *st);
/** Strides of an input of rank ri broadcast to the output rank ro (numpy rules:
 *  aligned right, stride 0 where the input dim is 1 and the output's is not). */
void lw_bcast_strides(int ro, const int64_t *odims, int ri, const int64_t *idims, int64_t *st);
/** Static dims of tensor id (all known after the checks in lower.c); returns rank. */
int lw_dims(const ecg_lower *L, int tensor_id, int64_t *dims);
/** Normalise a possibly negative axis for rank r; -1 when out of range. */
int lw_axis(int64_t axis, int r);
/** The opening of a load of tensor id's element as its vtype: "ecg_h2f(" (float16),
 *  "ecg_bf2f(" (bfloat16) or "(" — close it with ")" after the element expression. */
const char *lw_load_open(const ecg_lower *L, int id);
/** Index of node n in L->g->nodes (n must belong to the graph). */
int lw_node_index(const ecg_lower *L, const ecg_node *n);

/* ---- fused code generation (block.c; DNNFusion §3.4.4.1) */
struct ecg_scalar_view;
/** Append to b the C literal of v as type ctype: "((float)0.5)", NAN and INFINITY spelt
 *  out. */
void lw_literal(sbuf *b, const char *ctype, double v);
/** Append to out one C block statement that sets the local `dst` (of the vtype of n's
 *  output 0) to the scalar expression of One-to-One node n (format/ops/scalar.def), its
 *  operands being the C expressions vals[k] (loaded values of the operands' vtypes;
 *  entries for absent optional inputs are ignored). Returns 0, -1 on out of memory. */
int lw_scalar_stmt(ecg_lower *L, sbuf *out, const ecg_node *n, const struct ecg_scalar_view *v,
                   const char *const *vals, const char *dst);
/** True when tensor tid is read by a node outside members[0..nm) or is a graph output. */
int lw_tensor_used_outside(const ecg_lower *L, int tid, const int *members, int nm);
/** Emit one loop nest computing the One-to-One block members[0..nm) (node indices in
 *  topological order, every member's output of the same element count): operands from
 *  outside are loaded with broadcasting index maps, members' values stay in registers,
 *  and only outputs used outside the block (or every output when nm == 1) are stored.
 *  Errors (ECG_ERR_INPUT naming the node): a member that is not a scalar expression, a
 *  member of another element count, more than LW_MAX_OPS memory streams. */
int lw_emit_ew_block(ecg_lower *L, const int *members, int nm, ecg_err *e);
/** Emit one row-reduction kernel for members[0..nm) (topological order; every member's
 *  ecg_row_level over the row space of the first row reduction is >= 0): one loop over
 *  rows, one pass over a row's inner elements per dependency level, reductions in
 *  registers, only outputs used outside stored (rowblock.c; DNNFusion §3.4.4 with the
 *  plan's row blocks, tools/fuse/rows.c). Errors: ECG_ERR_INPUT naming the node (a
 *  member that does not fit, too many operands), ECG_ERR_INTERNAL (out of memory). */
int lw_emit_row_block(ecg_lower *L, const int *members, int nm, ecg_err *e);
/** The C literal of scalar constant tensor id (one element, not bfloat16) as its vtype,
 *  into buf[n]; 1 on success, 0 when it is not such a constant (buf unchanged). */
int lw_const_literal(const ecg_lower *L, int id, char *buf, size_t n);

/** Append s to b as a JSON string literal (quotes, escapes). */
void lw_json_str(sbuf *b, const char *s);

/* ---------------------------------------------------------------- emit/sparse.c
 * The --sparse-tune file (PatDNN §2.5.5 parameter tuning, measured here). */
/** Read the tuning file path into L->tune: the lines whose cpu, isa and threads match
 *  this machine (ecg_host_key; OMP_NUM_THREADS) and whose kind is "sparse_conv". Errors:
 *  ECG_ERR_INPUT (unreadable file, a line without the fields: path:line), ECG_ERR_INTERNAL. */
int lw_sparse_tune_load(ecg_lower *L, const char *path, ecg_err *e);
/** Free L->tune. */
void lw_sparse_tune_free(ecg_lower *L);

/* ---------------------------------------------------------------- run-time sequences (emit/sequence.c) */

/** 1 when node n is control flow (registry ECG_PROP_CONTROL: If, Loop, Scan), which its own
 *  emitter lowers even where it reads or writes a run-time sequence (an If's sequence output). */
int lw_node_control(const ecg_node *n);
/** 1 when node n reads or writes a run-time sequence (Tensor.sequence; format/ECG.md
 *  "Sequences"): it is lowered by lw_emit_sequence, whatever its operator. */
int lw_node_seq(const ecg_lower *L, const ecg_node *n);
/** The kernel of node n on run-time sequences: Identity (a copy), SequenceInsert, SequenceErase,
 *  SequenceAt (the element must have the static shape of the output, else the run fails: -2),
 *  SequenceLength, SequenceConstruct, SequenceEmpty. A sequence is the context's list of owned
 *  tensors (P_value: dtype, rank, dims, bytes, data); positions are read at run time and checked
 *  (-2 outside the sequence); out of memory fails the run (-4). Errors: ECG_ERR_INPUT naming the
 *  node for another operator, or an element tensor without a static shape. */
int lw_emit_sequence(ecg_lower *L, const ecg_node *n, ecg_err *e);
/** Node n of lowering L reads or writes a tensor of run-time shape (LW_HEAP): it is lowered by
 *  lw_emit_rtshape (emit/sequence.c), which takes Identity, Shape, Size and the elementwise
 *  binary arithmetic operators with numpy broadcasting at run time, and refuses others. */
int lw_node_rt(const ecg_lower *L, const ecg_node *n);
/** Emit code inserting a copy of tensor id (static, or of run-time dims: lw_tensor.rtd) into
 *  the sequence slot expression q (a seq_ *) at position p_ (a C variable in scope), setting the
 *  int rc_ in scope on failure (-4); node n names an error (a tensor of no known shape). */
int lw_seq_put(ecg_lower *L, const ecg_node *n, const char *q, int id, ecg_err *e);
/** Emit, into L's code, the run-time dims of the captures of sub s of control-flow node n
 *  that read an outer tensor of symbolic dims (a graph input of a dynamic build): their
 *  ctx->rd rows, from the outer tensor's dims. */
void lw_sub_rt_dims(ecg_lower *L, const ecg_node *n, const lw_sub *s);
int lw_emit_rtshape(ecg_lower *L, const ecg_node *n, ecg_err *e);
/** The C expression of sequence tensor id as a `const P_sequence *` (a graph input's bound
 *  struct, or the context's slot). */
const char *lw_seq_ref(const ecg_lower *L, int id);
/** Print the model.c helpers of run-time sequences (the slot type seq_ and its functions). */
void lw_seq_helpers(const ecg_lower *L, sbuf *b);

#endif

