/* ecg-partition internals: AGO's weighted acyclic graph partitioning (Xu et al., "AGO:
 * Boosting Mobile AI Inference Performance by Removing Constraints on Graph Optimization",
 * INFOCOM 2023, §IV) over the ECG.
 *   weight.c:  operator weights, AGO Eq. 1, and the weights file (--weights);
 *   cluster.c: CLUSTER (Algorithm 1) over an abstract DAG of units, and its use on an ECG
 *              (units = fusion blocks and nodes in no block) for both strategies.
 *   eop.c:     EOP (VEE '22): performance patterns, partition ratios, joint tuning (eop.h);
 *              driven by ecg-partition --eop (eopplan.c); ecg-lower --target c+opencl runs the plan.
 *   tune.c:    the SPLIT/JOIN schedule tuner of AGO §V (tune.h), driven by ecg-partition --tune. */
#ifndef ECG_PARTITION_H
#define ECG_PARTITION_H
#include <stdbool.h>
#include <stdio.h>

#include "ecg.h"
#include "eop.h"

/* ---------------------------------------------------------------- weights (weight.c) */

/** The parameters of AGO Eq. 1, w_v = c * prod_{l in loops(v)} ln(s_l) + b, and the
 *  default threshold Td of Algorithm 1, as read from a weights file. Units: a weight is
 *  AGO's tuning-budget scale (Fig. 8 budgets in hundreds of schedules) once c and b are
 *  fitted; the shipped defaults are NOT fitted (tools/partition/weights.txt says so). */
typedef struct pt_weights {
  double c;          /**< slope (default 1) */
  double b;          /**< bias (default 0) */
  double max_weight; /**< Td, the default of --max-weight */
  bool fitted;       /**< the file says its c and b were fitted on measurements */
  char source[256];  /**< where they came from: a path, or "built-in weights.txt" */
} pt_weights;

/** Parse a weights file's text (name for messages): lines "key value" with keys c, b,
 *  max_weight, fitted (0/1); '#' starts a comment; every key is required except fitted.
 *  Errors: ECG_ERR_INPUT "NAME:LINE: ..." for an unknown key, a bad number, a missing key
 *  or max_weight <= 0. */
int pt_weights_parse(const char *name, const char *text, size_t len, pt_weights *w, ecg_err *e);
/** Load path, or the weights.txt embedded at build time when path is NULL. Errors as
 *  pt_weights_parse, plus ECG_ERR_INPUT "PATH: strerror" for an unreadable file. */
int pt_weights_load(const char *path, pt_weights *w, ecg_err *e);

/** The loop nest of node n's reference implementation, its extents into ext[max]
 *  (outermost first; returns the count, extents of 1 included, or minus the error code): for Conv, ConvTranspose,
 *  ConvInteger, QLinearConv and pooling (the shared ecg_conv_geom_resolve) batch, output
 *  channels, output spatial dims, input channels per group and kernel dims (pooling: no
 *  channel reduction); for every other operator the dims of output 0, plus, for a
 *  Many-to-Many operator (registry mapping), one reduction loop whose extent is the larger
 *  of FLOPs/(2|Y|) (the contraction length of MatMul/Gemm) and |X0|/|Y| (the reduced
 *  volume of a reduction), when it exceeds 1. Errors: ECG_ERR_INPUT naming the node when
 *  output 0 (or a convolution operand) has a symbolic or unknown shape. */
int pt_loop_nest(const ecg_graph *g, const ecg_node *n, int64_t *ext, int max, ecg_err *e);
/** AGO Eq. 1 for node n: c * prod over loops of extent > 1 of ln(extent) + b (an empty
 *  product is 1). Errors as pt_loop_nest. */
int pt_node_weight(const ecg_graph *g, const ecg_node *n, const pt_weights *w, double *out, ecg_err *e);

/* ---------------------------------------------------------------- CLUSTER (cluster.c) */

/** A DAG of units to partition: n units with weights w[n], complex[n] (the number of
 *  complex = Many-to-Many operators inside) and delim[n] (a Reshape/Transpose-like unit:
 *  registry mapping Reorganize or Shuffle), and ne directed edges src[k] -> dst[k]
 *  (duplicates allowed, no self loops). */
typedef struct pt_dag {
  int n, ne;
  const double *w;
  const int *complex;
  const bool *delim;
  const int *src, *dst;
} pt_dag;

/** What may merge (Algorithm 1 line 6 and the baseline's extra constraints). */
typedef struct pt_rules {
  double max_weight;     /**< Td: merge only while w_v + w_u < Td (INFINITY: no limit) */
  int max_complex;       /**< at most this many complex operators per subgraph; < 0 no limit */
  bool delim_alone;      /**< delimiter units never merge (Relay's Reshape/Transpose) */
} pt_rules;

/** What CLUSTER did. */
typedef struct pt_cluster_stats {
  int merges;       /**< hyper nodes formed (Algorithm 1 line 7) */
  int iterations;   /**< candidate selections (line 5) */
} pt_cluster_stats;

/** CLUSTER (AGO Algorithm 1) on d: topological stages (longest path from a source,
 *  Definition 2); repeatedly the heaviest candidate v (ties: lowest index) merges with
 *  the lightest unit u of its affix set (undirected neighbours whose stage differs by
 *  exactly 1, Definition 3; ties: lowest index) that r admits, the hyper node returning to
 *  the candidates, else v leaves them; edges and stages are recomputed after every merge.
 *  By Theorem 1 the quotient stays acyclic. On return group_of[i] (n entries) is unit i's
 *  subgraph, numbered in a topological order of the quotient graph (by final stage, then
 *  lowest member), and *n_groups their number. Errors: ECG_ERR_INPUT when d has a cycle,
 *  ECG_ERR_INTERNAL out of memory. */
int pt_cluster(const pt_dag *d, const pt_rules *r, int *group_of, int *n_groups, pt_cluster_stats *st, ecg_err *e);

/** Partitioning strategies: AGO's CLUSTER, or the Relay-style baseline AGO compares with
 *  (at most one complex operator per subgraph, Reshape/Transpose-like operators alone, no
 *  weight limit), both through pt_cluster. */
typedef enum { PT_AGO = 0, PT_RELAY } pt_strategy;

/** Partition g (static shapes; fusion blocks are units never split) and store the result
 *  as g's subgraphs (ecg_subgraphs_set), each with its weight and strategy name. Node
 *  weights by pt_node_weight under w; max_weight is Td for PT_AGO. *max_complex receives
 *  the largest number of complex operators in one subgraph. Errors: those of
 *  pt_node_weight and pt_cluster, ECG_ERR_INTERNAL out of memory. */
int pt_partition(ecg_graph *g, pt_strategy s, const pt_weights *w, double max_weight, pt_cluster_stats *st,
                 int *max_complex, ecg_err *e);

/* ---------------------------------------------------------------- EOP (sweep.c, eopplan.c) */

/** EOP's partition dimensions (VEE '22 Table 2), read on an operator's output 0:
 *  batch = axis 0; rows = axis rank-2 (H of NCHW, M of a [.., M, N] MatMul output). The
 *  placements use these two (PT_N_PLACE_DIMS). A matrix product (ECG_PROP_CONTRACT) is also
 *  swept along the rest of HW1W2: cols = N (B's and the output's last axis) and k = K (A's
 *  last and B's second-to-last axis), for the device profiles only: a K split needs a sum
 *  of partial products, not a Concat, and the lowering cuts no N. */
enum { PT_DIM_BATCH = 0, PT_DIM_ROWS, PT_N_PLACE_DIMS, PT_DIM_COLS = PT_N_PLACE_DIMS, PT_DIM_K, PT_N_DIMS };
/** "batch", "rows", "cols" or "k". */
const char *pt_dim_name(int d);
/** The dimension named s (pt_dim_name's inverse), or -1. */
int pt_dim_of_name(const char *s);
/** The output axis of dimension d for an output of rank r, or -1 when it has none. */
int pt_dim_axis(int rank, int d);
/** The profile key of node n: op type, input shapes, a hash of its attributes
 *  ("Conv[1x3x224x224][32x3x3x3][32]{hex}"), into buf (cap bytes). */
void pt_op_signature(const ecg_graph *g, const ecg_node *n, char *buf, size_t cap);
/** Write, for each distinct signature of g's operators with FLOPs, and each of its
 *  partition dimensions with an extent >= 2, up to `points` one-node ECGs DIR/NNNN.ecg
 *  whose non-constant inputs are cut along that axis to k/points of it (k = 1..points;
 *  weights unchanged; shapes inferred), and one index line per file:
 *  "SIGNATURE TAB DIM TAB EXTENT TAB PATH" (EXTENT: the output's extent on the axis).
 *  *written counts the files. Errors: ECG_ERR_INPUT (DIR not creatable, a write failing:
 *  the path and strerror), ECG_ERR_INTERNAL. A dimension whose cut the operator refuses
 *  (shape inference fails) is skipped. */
int pt_emit_sweeps(const ecg_graph *g, const char *dir, int points, FILE *index, int *written, ecg_err *e);

/** EOP options (ecg-partition --eop). */
typedef struct pt_eop_opts {
  const char *profiles[2]; /**< JSON-lines device profiles: the CPU's, the device's */
  double cm;               /**< Split + copies + Concatenate of a split operator, ms (the
                                paper's constant pattern; [IMPL] one constant per graph) */
  eop_objective objective;
  bool foreign;            /**< accept samples whose "cpu" is not this machine's CPU model */
  eop_strategy placed;     /**< whose shares become the placements: EOP_EOP (default) or a
                                baseline (ecg-partition --baseline), so each runs with c+opencl */
} pt_eop_opts;
/** EOP over g's operators (topological order) from two device profiles (lines
 *  {"device": NAME, "signature": S, "dim": "batch"|"rows", "x": EXTENT, "ms": T}, as
 *  scripts/eop_profile.sh writes): each operator's patterns per device and dimension
 *  (eop_fit_samples), its dimension (the one whose best Eq. 2 time is least,
 *  PatternMatch), then every strategy (eop_plan); the JSON report (per strategy: the
 *  score; per operator: dimension, extent, patterns with their MAPE, the EOP share) to f,
 *  and each planned operator's placement (axis, CPU share of the strategy o->placed) into g
 *  (ecg_placement_set).
 *  Operators without samples on a device cannot run there in the plan; operators without
 *  any (data movement) are left out and counted. A sample whose "cpu" key is not this
 *  machine's CPU model (ecg_cpu_name) is refused unless o->foreign. Errors: ECG_ERR_INPUT
 *  (unreadable or malformed profile, another machine's: FILE:LINE; symbolic shapes),
 *  ECG_ERR_INTERNAL. */
int pt_eop_report(ecg_graph *g, const pt_eop_opts *o, FILE *f, ecg_err *e);
/** Forced ratios (ecg-partition --eop --share S; DESIGN.md: EOP in CI runs with forced
 *  ratios so the split path runs without a GPU): every operator with FLOPs (as the sweeps
 *  choose them) whose rows dimension (else batch) has an extent >= 2 gets a placement with
 *  CPU share S along it; one JSON line {"stage", "eop": {"forced_share", "placed"}} to f.
 *  Errors: ECG_ERR_INPUT (a write error on f), ECG_ERR_INTERNAL. */
int pt_eop_force(ecg_graph *g, double share, FILE *f, ecg_err *e);
/** Read the device profile at path as pt_eop_report does and fit every (signature,
 *  dimension) group in it: *n_samples lines, *n_fits groups fitted. Errors as
 *  pt_eop_report's profile errors. (The libFuzzer harness tests/fuzz/fuzz_eopprof.c.) */
int pt_eop_profile_check(const char *path, int *n_samples, int *n_fits, ecg_err *e);

#endif
