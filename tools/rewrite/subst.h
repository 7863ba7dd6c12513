/* ecg-rewrite pass "subst": OCGGS graph-substitution search (Fang, Shen, Wang, Chen,
 * "Optimizing DNN Computation Graph using Graph Substitutions", PVLDB 13(11) 2020, §3-5;
 * digest in ../shared/notes/digest-ocggs.md).
 *
 * The search runs on a light copy of the ECG, an sg graph: flat arrays of nodes and
 * values (STYLE 6), no weight data, so a search state is copied with two memcpy.  Node i
 * and value t of the sg built from an ECG are node i and tensor t of that ECG; the search
 * only appends nodes and values and marks replaced nodes dead, so the sequence it picks is
 * replayed onto the ECG by materialising the appended nodes in order (sg_materialize):
 * new constants (concatenated or zero-padded weights) are computed from their recipe.
 *
 * The substitutions are every match of the structural rules (subst.c) and every match of
 * the rule set of the math pass (the rule files; substmath.c, through math.c's per-match
 * API): sg_enumerate lists them, sg_sub_check re-checks one, sg_apply applies one.
 *
 * Files: subst.c (the sg graph, the structural rules, materialisation), substmath.c (the
 * rule-file rules as substitutions), cost.c (the cost model: measured table, roofline
 * fallback), search.c (greedy, TASO, ENU, Pruning, DPP, Sampling and the pass). */
#ifndef RW_SUBST_H
#define RW_SUBST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rewrite.h"

#define SG_MAX_IN 16   /**< node inputs the sg models (wider nodes are kept opaque and frozen) */
#define SG_MAX_OUT 8   /**< node outputs */
#define SG_MAX_RANK 6  /**< value rank */

/** Where a constant value's data comes from when the sequence is materialised. */
enum { SG_R_ECG = 0,   /**< an ECG tensor (value id = tensor id) */
       SG_R_CONCAT,    /**< concatenation of constants a and b along axis p[0] */
       SG_R_PAD,       /**< weight a [M,C,kh,kw] zero-padded, centred, to [M,C,p[0],p[1]] */
       SG_R_I64,       /**< int64 vector p[0..n-1] (n = dims[0]): Split sizes */
       SG_R_NUM };     /**< float32 scalar num: a number of a rule's target */

/** One value (tensor) of an sg graph: static shape (elements), producer node or -1. */
typedef struct sg_val {
  int rank;
  int64_t dim[SG_MAX_RANK];
  int producer;       /**< sg node writing it, -1 for graph inputs and constants */
  bool is_const;
  int dtype;          /**< ONNX dtype code */
  int recipe, a, b;   /**< SG_R_*: how a new constant is computed from values a, b */
  int64_t p[SG_MAX_OUT];
  double num;         /**< SG_R_NUM's value; with uniform: the value of every element */
  unsigned cprops;    /**< RW_COND_* a constant with known data meets (rw_const_props); 0 otherwise */
  bool uniform;       /**< a constant with known data whose elements all equal num */
} sg_val;

/** One node.  Attributes are the few the structural rules read and write; every other
 *  operator is opaque (kept as it is in the ECG, attributes untouched). */
typedef struct sg_node {
  int op;             /**< ecg_op_id */
  int n_in, in[SG_MAX_IN];   /**< value ids, -1 omitted */
  int n_out, out[SG_MAX_OUT];
  bool alive;
  bool opaque;        /**< an ECG node the rules may read through but never rewrite */
  bool plain;         /**< no attributes (elementwise rules need it) */
  int64_t k[2], s[2], d[2], pad[4], group; /**< Conv (2-D): kernel, strides, dilations, pads b0,b1,e0,e1, group */
  int axis;           /**< Split/Concat axis (>= 0) */
  bool red;           /**< a reduction the rule files may match (rw_reduction_info) */
  int red_bits;       /**< its reduced dims, bit d for dim d of its input */
  int64_t keep;       /**< its keepdims */
  int opset;          /**< ONNX opset of the node (0: 13) */
  bool folded;        /**< every input constant: folded when materialised, costs 0 */
  int pos, j;         /**< OCGGS label (Def. 6): pos = step that made it (0 for G0), j = index */
  double cost;        /**< ms under the cost model */
  int64_t flops;      /**< FLOPs (registry for ECG nodes, computed for new ones) */
  int src;            /**< the ECG node it is (sg_from_ecg), -1 for nodes the rules made */
} sg_node;

/** An sg graph: nodes and values in arrays (never renumbered; dead nodes stay). */
typedef struct sg_graph {
  int nn, nv, cap_n, cap_v;
  sg_node *n;
  sg_val *v;
  int n_outs;
  int *outs;          /**< graph output value ids (owned, n_outs entries) */
  int n_alive;        /**< live nodes */
  double cost;        /**< sum of live nodes' cost (ms) */
} sg_graph;

#define SG_SUB_MAX 8   /**< nodes one substitution matches (larger rule-file matches are not offered) */

/** One graph substitution tau = (rule, match) (OCGGS Def. 2).  rule < the structural rule
 *  count: a structural rule (sg_rules); above: rule-file rule rule - that count. */
typedef struct sg_sub {
  int rule;            /**< index into sg_rules() */
  int n;               /**< matched nodes */
  int node[SG_SUB_MAX]; /**< matched sg node ids (a rule-file match: its root first) */
  int kpos, kj;        /**< key(tau): lexicographic max of the matched nodes' labels (§2.2) */
} sg_sub;

/** A structural rule: enumerate its substitutions (those with a node id >= from), and
 *  check/apply one.  apply appends nodes labelled (pos, 0..), marks the matched nodes
 *  dead and rewires their readers; returns false (graph unchanged in meaning but maybe
 *  grown: caller discards the copy) when the result is invalid. */
typedef struct sg_rule {
  const char *name;
  const char *help;
  /** Call emit(ctx, &sub) for each match touching a node id >= from. */
  void (*enumerate)(const sg_graph *g, int from, void (*emit)(void *ctx, const sg_sub *s), void *ctx);
  /** True when sub still matches g (the DPP reuse check). */
  bool (*check)(const sg_graph *g, const sg_sub *s);
  /** Apply sub to g (which it matches); false on out of memory or a shape it cannot make. */
  bool (*apply)(sg_graph *g, const sg_sub *s, int pos);
} sg_rule;

/** The structural rules (subst.c); *n receives their count. */
const sg_rule *sg_rules(int *n);

/** Build the sg of g (shapes inferred; value i = tensor i, node i = node i), each node
 *  costed with db.  Nodes the registry does not know, with more than SG_MAX_IN inputs or
 *  SG_MAX_OUT outputs, with a non-static shape, a Conv that is not 2-D, or a producer
 *  of an input past SG_MAX_IN stay opaque (never rewritten).  Returns ECG_OK or
 *  ECG_ERR_INTERNAL (out of memory). */
struct sg_cost_db;
int sg_from_ecg(const ecg_graph *g, sg_graph *s, const struct sg_cost_db *db, ecg_err *e);
/** Deep copy src into dst (dst's old arrays freed). False on out of memory. */
bool sg_copy(sg_graph *dst, const sg_graph *src);
/** Free the arrays of s. */
void sg_free(sg_graph *s);
/** True when the live nodes of s form a DAG (no cycle). O(nodes + edges). */
bool sg_acyclic(const sg_graph *s);
/** Structural hash of the live graph (TASO's dedup of seen graphs). */
uint64_t sg_hash(const sg_graph *s);
struct sg_opts;
/** The number of substitution rules of the search: the structural ones, then o's rule files. */
int sg_n_rules(const struct sg_opts *o);
/** The name of rule (an sg_sub's rule index; rs: the rule-file rules of the search's
 *  options); a static string or rs's. */
const char *sg_rule_name(const rw_rules *rs, int rule);
/** Call emit(ctx, &sub) for every substitution of g, structural and rule-file, touching a
 *  node id >= from (sub.rule set, key not). */
void sg_enumerate(const sg_graph *g, int from, const struct sg_opts *o, void (*emit)(void *ctx, const sg_sub *s), void *ctx);
/** True when sub still matches g (the DPP reuse check). */
bool sg_sub_check(const sg_graph *g, const sg_sub *sub, const struct sg_opts *o);
/** Apply sub at step pos (1-based) to s: the rule's apply, then the cycle check and cost
 *  update (o->db).  Returns 1 when applied, 0 when the rule refuses, -1 when the result
 *  has a cycle (rejected, OCGGS/TASO); on 0 and -1 s is garbage (apply to a copy). */
int sg_apply(sg_graph *s, const sg_sub *sub, int pos, const struct sg_opts *o);

/* sg editing helpers (subst.c), shared with substmath.c. */
/** A new value of the given shape (producer -1, recipe SG_R_ECG); its id, -1 on OOM. */
int sg_add_val(sg_graph *g, int rank, const int64_t *dims, int dtype, bool is_const);
/** A new live node labelled (pos, j), attributes copied from proto when given (else a
 *  plain node); its id, -1 on OOM. */
int sg_add_node(sg_graph *g, const sg_node *proto, int op, int n_in, const int *in, int n_out, const int *out, int pos, int j);
/** Mark node i dead. */
void sg_kill(sg_graph *g, int i);
/** Every live reader of value from (and the graph outputs) reads to instead. */
void sg_replace(sg_graph *g, int from, int to);
/** Readers of value v: live node inputs plus graph outputs. */
int sg_uses(const sg_graph *g, int v);
/** True when v is a graph output. */
bool sg_is_gout(const sg_graph *g, int v);

/* substmath.c: the rule-file rules as substitutions (base: the structural rule count). */
/** Emit every match of every rule of rs in g touching a node >= from, as rule base + k. */
void sg_math_enumerate(const sg_graph *g, const rw_rules *rs, int base, int from, void (*emit)(void *ctx, const sg_sub *s), void *ctx);
/** True when sub (a rule-file substitution) still matches g with the same nodes. */
bool sg_math_check(const sg_graph *g, const rw_rules *rs, int base, const sg_sub *sub);
/** Apply rule-file substitution sub to g at step pos: the target built by the registry in a
 *  scratch ECG of the bound tensors' shapes (rw_build_target), copied into g as new nodes
 *  (a node whose inputs are all constants is folded: constant output, cost 0, when the
 *  registry can fold it and its output fits fold_max bytes); the root's readers read the
 *  target, the matched nodes die.  False when it no longer matches, a shape does not
 *  infer, the target's shape or dtype differs from the root's, a graph output would be
 *  renamed onto a graph input or constant, or out of memory. */
bool sg_math_apply(sg_graph *g, const rw_rules *rs, int base, const sg_sub *sub, int pos, size_t fold_max);
/** Compute sub's key (kpos, kj) from the labels of its nodes in s. */
void sg_sub_key(const sg_graph *s, sg_sub *sub);

/** Write the nodes s appended (beyond g's nodes) into g, rewire g's nodes to s's values,
 *  disconnect s's dead nodes, infer shapes, fold the appended nodes s marks folded
 *  (ecg_fold_constants_limit, fold_max bytes), remove dead nodes.  s must have been built
 *  from g by sg_from_ecg and then only applied to.  Errors: ECG_ERR_INTERNAL. */
int sg_materialize(ecg_graph *g, const sg_graph *s, size_t fold_max, ecg_err *e);

/* ------------------------------------------------------------------ cost.c */

/** The cost model (OCGGS §2.1: additive, node cost = its run time): a table of measured
 *  per-node times keyed by operator and shapes (--cost-db FILE), else a roofline
 *  estimate max(FLOPs / peak, bytes / bandwidth) + a per-node overhead; a folded node
 *  (every input constant) costs 0. */
typedef struct sg_cost_db {
  int n, cap;
  char **key;
  double *ms;
  double peak_gflops, gbytes_s, node_ms; /**< roofline parameters */
  int hits, misses;
  int foreign;         /**< samples of another CPU, ISA or thread count, ignored */
  char foreign_key[400]; /**< the first of them: "cpu 'X', isa Y, N thread(s)" */
  int other_kind;      /**< lines of another kind or device, skipped */
  FILE *keys_out;      /**< when set, every key missing from the table is logged (sg_cost_log_key) */
  const char *graphs_dir; /**< with keys_out: one single-node ECG per logged key is written here */
  const ecg_graph *src;   /**< the ECG the search started from (attributes of its nodes) */
  char **logged;
  int n_logged, cap_logged;
} sg_cost_db;

/** An empty table with the default roofline (peak 50 GFLOP/s, 10 GB/s, 0.002 ms). */
void sg_cost_init(sg_cost_db *db);
/** Parse cost-table text named file into db: JSON lines (blank and '#' lines skipped)
 *  {"cpu", "isa", "threads", "device", "kind": "node_time", "signature": KEY, "ms": time of
 *  one run of the node in milliseconds, "runs"} (cost.c; DESIGN.md "Measured costs").
 *  Samples of another CPU, ISA or thread count than this host's (ecg_host_key) are
 *  ignored and counted in db->foreign (the first described in db->foreign_key); another
 *  kind or device: skipped, counted in db->other_kind; a signature given twice: the later
 *  sample wins.  Errors: ECG_ERR_INPUT "FILE:LINE: what" (not a record with cpu, isa,
 *  threads, signature and a finite ms, empty signature, negative time, line over 4095
 *  bytes, NUL byte), ECG_ERR_INTERNAL (out of memory). */
int sg_cost_parse(sg_cost_db *db, const char *file, const char *text, size_t len, ecg_err *e);
/** Read and parse a cost table from path; errors as sg_cost_parse, ECG_ERR_INPUT when it
 *  cannot be read.  Says on stderr how many samples of another machine it ignored. */
int sg_cost_load(sg_cost_db *db, const char *path, ecg_err *e);
/** Free db's table. */
void sg_cost_free(sg_cost_db *db);
/** The key of node i of s ("Conv 1x256x14x14 c256x256x3x3 k3x3 s1x1 p1,1,1,1 d1x1 g1";
 *  a reduction ends " r<reduced-dims bits, hex> k<keepdims>"). */
void sg_cost_key(const sg_graph *s, int i, char *buf, size_t n);
/** Log key (of node i of s) once: "N<TAB>KEY" on db->keys_out and, with db->graphs_dir,
 *  a single-node ECG DIR/N.ecg (seeded inputs and weights; attributes from db->src for
 *  the nodes of the input ECG) that `make cost-db` times with ecg-bench.  Write errors
 *  are reported on stderr once and logging stops. */
void sg_cost_log_key(sg_cost_db *db, const sg_graph *s, int i, const char *key);
/** Cost of node i of s in ms (table, else roofline; 0 for a folded node). */
double sg_cost_node(const sg_cost_db *db, const sg_graph *s, int i);

/* ------------------------------------------------------------------ search.c */

/** Search algorithms (OCGGS §2.1, Alg. 1-3, plus greedy and unpruned enumeration). */
typedef enum { SG_GREEDY, SG_TASO, SG_ENU, SG_PRUNING, SG_DPP, SG_SAMPLING, SG_N_ALGOS } sg_algo;

/** Options of the subst pass (from the command line). */
typedef struct sg_opts {
  int algos[SG_N_ALGOS], n_algos; /**< --search list, run in order on the same input */
  int max_steps;       /**< K (default 10) */
  double budget_s;     /**< wall-clock limit per algorithm (--timeout/--budget; 0 = 60 s) */
  double alpha;        /**< TASO's cost bound (1.05) */
  int q, eta;          /**< Sampling's sample size Q (20) and eta (1) */
  int verbose;         /**< progress on stderr */
  const rw_rules *rules; /**< the rule files' rules, substitutions beside the structural ones (NULL: none) */
  size_t fold_max;     /**< bytes a folded constant may have (--fold-max-bytes) */
  sg_cost_db db;
} sg_opts;

/** What one algorithm did (the report's "search" list). */
typedef struct sg_result {
  int algo;
  double time_s;
  long long explored;  /**< sequences (search states) generated */
  long long cycles;    /**< substitutions rejected because they made a cycle */
  int cost_hits, cost_misses; /**< nodes costed from the table / by the roofline */
  bool finished;       /**< false when the budget stopped it */
  double initial_cost, final_cost;
  int n_steps;
  int applied[32];     /**< rule index per step of the best sequence */
} sg_result;

/** Known --search names ("greedy, taso, enu, pruning, dpp, sampling"). */
const char *sg_algo_names(void);
/** The algorithm named name (SG_*), or -1. */
int sg_algo_find(const char *name);
/** Set the defaults (K 10, alpha 1.05, Q 20, eta 1, roofline). */
void sg_opts_init(sg_opts *o);
/** Parse "--search" LIST into o; exit-code style (0, or 2 with a message on stderr). */
int sg_parse_search(sg_opts *o, const char *list);
/** Free what the options own (cost table, key log). */
void sg_opts_free(sg_opts *o);
/** The subst options for --help. */
void sg_usage(FILE *f);
/** Parse argv[*i] when it is a subst option (--search, --max-steps, --cost-db,
 *  --cost-keys, --cost-graphs), consuming its value (*i advances).  Returns -1 when it is
 *  not one, 0 when parsed, 2 on a usage error, 1 when the cost table is invalid or a
 *  file cannot be opened (message on stderr). */
int sg_option(sg_opts *o, int argc, char **argv, int *i);
/** Run one algorithm on s0 (not modified); *best receives the best graph found (caller
 *  frees). Returns ECG_OK or ECG_ERR_INTERNAL. */
int sg_search(const sg_graph *s0, const sg_opts *o, int algo, sg_graph *best, sg_result *r, ecg_err *e);
/** Write the "search" member of the report (after the last subst run): ", \"search\": {...}",
 *  nothing when the pass did not run. */
void sg_report_json(FILE *f);
/** The pass: every --search algorithm on g, then the lowest-cost graph is written back. */
int rw_subst(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e);

#endif
