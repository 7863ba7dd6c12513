/* ecg-fuse internals: DNNFusion's fusion plans (Niu dissertation §3.3.2, §3.4.3) over the
 * ECG.  table.c: Table 3.3 as data; plan.c: the plans (none, fixed, dnnfusion). */
#ifndef ECG_FUSE_H
#define ECG_FUSE_H
#include "ecg.h"

/** Table 3.3 cell for (first, second) mapping types: the decision and the fused type. */
typedef enum { FUSE_BREAK = 0, FUSE_THROUGH, FUSE_DEPEND } fuse_decision;
typedef struct {
  fuse_decision decision;
  ecg_mapping fused; /**< mapping type of the fused pair (meaningless for FUSE_BREAK) */
} fuse_cell;
/** The cell of Table 3.3 for producer mapping `first` and consumer mapping `second`
 *  (colours as reconstructed in ../shared/notes/digest-niu.md §2.4). */
fuse_cell fuse_table(ecg_mapping first, ecg_mapping second);
/** Name of a decision: "through", "depend", "break". */
const char *fuse_decision_name(fuse_decision d);

/** Which plan ecg-fuse makes. */
typedef enum {
  PLAN_NONE = 0, /**< no blocks: every node its own kernel (the paper's OurB) */
  PLAN_FIXED,    /**< TVM-style fixed patterns: a Many-to-Many operator + its One-to-One
                      chain, and chains of One-to-One operators (OurB+) */
  PLAN_DNNFUSION /**< seed-based plan generation (Listing 3.1) over Table 3.3 */
} fuse_plan;

/** Counts of a plan, for the report. */
typedef struct {
  int blocks, fused_nodes, seeds, through, depend, breaks, cycle_rejects, shape_rejects;
  int depend_profiled, depend_rejected, candidates;
  int intensive; /**< chains merged by --intensive: inverted residuals, squeeze-and-excitation, Conv -> MaxPool */
  int se_chains; /**< of those, squeeze-and-excitation chains (plan.c se_merge) */
  int conv_pools; /**< of those, Conv [+ act] -> MaxPool chains (plan.c conv_pool_merge) */
  int row_blocks; /**< row-reduction blocks formed (rows.c) */
  int index_maps; /**< permutations absorbed as index maps (maps.c) */
} fuse_stats;

/* ---- the profile database (profile.c) */
typedef struct fuse_db fuse_db;
/** Load the records of path that match this host (CPU model from /proc/cpuinfo, the ISA
 *  this build targets, OMP_NUM_THREADS or 1; device "cpu"). ECG_ERR_INPUT naming the file
 *  and line for an unreadable file or a malformed record. */
int fuse_db_load(const char *path, fuse_db **out, ecg_err *e);
void fuse_db_free(fuse_db *db);
/** The latest record for signature sig: 1 and the times (ms), or 0. */
int fuse_db_lookup(const fuse_db *db, const char *sig, double *fused_ms, double *unfused_ms);
/** The signature of the pair producer p -> consumer c: op types, input/output shapes
 *  (constants marked c) and attributes of both. */
void fuse_pair_signature(const ecg_graph *g, int p, int c, char *buf, size_t sz);
/** Write DIR/NNN.sig, DIR/NNN.fused.ecg (p and c in one block) and DIR/NNN.unfused.ecg
 *  (no block): the pair as a graph of its own, non-constant inputs as graph inputs. */
int fuse_emit_candidate(const ecg_graph *g, int p, int c, const char *dir, int index, ecg_err *e);

/** What a plan is made with. */
typedef struct {
  fuse_plan plan;
  const fuse_db *db;     /**< measured fuse_depend decisions, or NULL (static rule) */
  const char *emit_dir;  /**< write every fuse_depend pair there as candidates, or NULL */
  int intensive;         /**< AGO intensive fusion: merge pointwise-depthwise-pointwise chains
                              and squeeze-and-excitation chains (chain.h) */
} fuse_opts;

/** The mapping type of node n as fusion sees it: the registry's, with elementwise
 *  operators whose operands broadcast (an operand with fewer elements than the output)
 *  counted as One-to-Many (DNNFusion §3.3.1). */
ecg_mapping fuse_node_mapping(const ecg_graph *g, const ecg_node *n);

/** The unit graph of a partial plan (units.c): each block one unit (ids 0..nblk), each
 *  node outside a block its own (nblk + node index). Producers and consumers per tensor,
 *  scratch for the cycle check. */
typedef struct fuse_units {
  const ecg_graph *g;
  int nn, nt, nu;
  int *unit;             /**< node -> unit id; a merging step updates it */
  int *prod;             /**< tensor -> producing node, -1 */
  int *cons_start, *cons; /**< consumers of tensor t: cons[cons_start[t] .. cons_start[t+1]) */
  char *in_group;        /**< per unit: in the group being formed */
  char *seen;
  int *queue;
} fuse_units;
/** Build the unit graph of g under blk (node -> block id or -1; nblk ids). ECG_OK or
 *  ECG_ERR_INTERNAL (out of memory; call fuse_units_free anyway). */
int fuse_units_init(fuse_units *u, const ecg_graph *g, const int *blk, int nblk);
void fuse_units_free(fuse_units *u);
/** Would the units marked in_group, plus unit extra (-1: none), merged into one block,
 *  lie on a cycle of the block graph (a path leaving the group and coming back)? */
int fuse_units_cycle(fuse_units *u, int extra);
/** Index-map absorption (maps.c; DNNFusion §3.4.4.2, Fig. 3.5, the dnnfusion plan): a
 *  permutation (ECG_PROP_PERMUTE) read only by an operator with strided operands
 *  (ECG_PROP_STRIDED_IO), or the only reader of such an operator's output when that
 *  operator's block has no epilogue, joins that operator's block (ecg_index_map_in/out
 *  decide that the strides fit), never making a cycle between blocks. Same arguments and
 *  result as fuse_row_merge (new blocks get the operator as seed). */
int fuse_index_maps(const ecg_graph *g, const int *order, int *blk, int *nblk, int *seed, ecg_mapping *type, ecg_err *e);
/** Row-reduction merging (rows.c; the dnnfusion plan's last step, DNNFusion §3.4.3):
 *  around each row reduction (ecg_row_reduction) of g, in topological order `order`,
 *  merge the plan's units (blocks of blk[node] >= 0, unblocked nodes) whose members are
 *  row reductions over the same [rows, inner] view or One-to-One/broadcasting operators
 *  of the full or the per-row shape, into one block of at most max_members nodes, never
 *  making a cycle between blocks. blk is updated; new block ids are taken from *nblk
 *  (seed[id] = the reduction, type[id] = Many-to-Many; both arrays need room for
 *  *nblk + n_nodes ids). Returns the number of blocks formed, or -1 (out of memory,
 *  ECG_ERR_INTERNAL in e). */
int fuse_row_merge(const ecg_graph *g, const int *order, int *blk, int *nblk, int *seed, ecg_mapping *type,
                   int max_members, ecg_err *e);
/** Replace g's fusion blocks with a plan: g->blocks, node->fusion_block, and
 *  tensor->ir_removable for intermediates produced and consumed inside one block (and
 *  not graph outputs). Blocks are limited to what ecg-lower generates as one kernel:
 *  One-to-One/One-to-Many members of equal output size, optionally after one
 *  Many-to-Many dominant operator (the block's first member); never a cycle between
 *  blocks. Table 3.3's fuse_depend pairs are decided by o->db where it has the pair
 *  (fuse when fused_ms <= unfused_ms), else by the static rule (fuse: the pair's outputs
 *  have equal element counts, so nothing is recomputed). ECG_OK, ECG_ERR_INPUT (writing a
 *  candidate failed) or ECG_ERR_INTERNAL (out of memory). */
int fuse_make_plan(ecg_graph *g, const fuse_opts *o, fuse_stats *st, ecg_err *e);
#endif
