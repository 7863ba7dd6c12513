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
  int intensive; /**< inverted-residual chains merged by --intensive */
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
/** This host's key: CPU model name, ISA ("avx512", "avx2", "neon", "generic"), threads. */
void fuse_host_key(char *cpu, size_t ncpu, const char **isa, int *threads);
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
  int intensive;         /**< AGO intensive fusion: merge pointwise-depthwise-pointwise chains */
} fuse_opts;

/** The mapping type of node n as fusion sees it: the registry's, with elementwise
 *  operators whose operands broadcast (an operand with fewer elements than the output)
 *  counted as One-to-Many (DNNFusion §3.3.1). */
ecg_mapping fuse_node_mapping(const ecg_graph *g, const ecg_node *n);

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
