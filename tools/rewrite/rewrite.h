/* ecg-rewrite: graph rewriting passes over an ECG (DNNFusion, Niu dissertation §3.4.2;
 * DESIGN.md tools/rewrite/).
 *
 * Every pass has one signature (STYLE 4) and is registered by name in one table
 * (passes.c), so a pipeline is a list of names (`--passes fold,bnfold,cse,simplify`).
 * A pass rewrites the graph in place, keeps it valid (ecg_validate) and semantically
 * equal on every input, counts what fired in its rw_stats, and asks the registry
 * (ecg_op_lookup: op id, mapping type, ECG_PROP_* flags) about operators; it never
 * compares op_type strings.  Passes run on graphs whose shapes were inferred by
 * onnx2ecg; a node whose op the registry does not know is left alone.
 *
 * Node deletion goes through rw_remove_dead (ecg_compact), which renumbers nodes, so the
 * driver (main.c) drops fusion blocks before the passes run: ecg-fuse comes after
 * ecg-rewrite in the pipeline (DESIGN.md "Conventions across issues").
 */
#ifndef RW_REWRITE_H
#define RW_REWRITE_H

#include <stdbool.h>

#include "ecg.h"

/** Most distinct counters one pass reports (rules or cases that fired). */
#define RW_MAX_COUNTERS 512

/** What one run of a pass did: named counters, one per rule or case that fired. */
typedef struct rw_stats {
  int fired;                           /**< total rewrites (sum of the counters) */
  int n_counters;
  struct { const char *name; int count; } counters[RW_MAX_COUNTERS]; /**< name: static string */
} rw_stats;

/* ---------------------------------------------------------------- rules (rules.c) */

/** Most terms in one rule (source and target together) and operands per term. */
#define RW_MAX_TERMS 32
#define RW_MAX_KIDS 4
#define RW_MAX_VARS 8

/** One term of a rule pattern: an operator applied to terms, a variable or a number. */
typedef struct rw_term {
  ecg_op_id op;      /**< registry id; ECG_OP_NONE for a variable or a number */
  int var;           /**< variable index (0..RW_MAX_VARS-1), -1 for operators and numbers */
  double num;        /**< the value of a number term */
  int n_kids;
  int kids[RW_MAX_KIDS]; /**< indices into rw_rule.terms */
} rw_term;

/** Rule conditions on a variable: const(V) (a constant); nonneg(V) (a constant with no
 *  element < 0, or the output of an operator the registry marks ECG_PROP_NONNEG); and,
 *  each implying a constant, pos(V) (every element > 0), int(V) (every element an
 *  integer, |v| < 1e6), scalar(V) (one element). */
enum { RW_COND_CONST = 1, RW_COND_NONNEG = 2, RW_COND_POS = 4, RW_COND_INT = 8, RW_COND_SCALAR = 16 };

/** One rewrite rule of a rule file (DNNFusion Table 3.4 and its generalisations). */
typedef struct rw_rule {
  char cls[8];           /**< "assoc", "dist" or "comm" */
  char name[64];
  char text[256];        /**< "SOURCE -> TARGET [if ...]" as written, for --list-rules */
  int src, dst;          /**< root term indices */
  int n_terms;
  rw_term terms[RW_MAX_TERMS];
  int n_vars;
  char vars[RW_MAX_VARS][64];
  unsigned cond[RW_MAX_VARS]; /**< RW_COND_* per variable */
} rw_rule;

/** A growable list of rules. */
typedef struct rw_rules {
  rw_rule *v;
  int n, cap;
} rw_rules;

/** Parse rule text (the format of tools/rewrite/rules/1-table34.rules) named file (for
 *  messages) and append its rules to rs. Errors: ECG_ERR_INPUT "FILE:LINE: what" (syntax,
 *  unknown operator, a source operator with none of the associative/commutative/
 *  distributive properties (the matcher partitions the graph there, §3.4.2), a reduction
 *  term without exactly one operand, a target reduction with none in the source (its
 *  axes), target variable not in the source, unknown condition, a duplicate rule name),
 *  ECG_ERR_INTERNAL (out of memory). */
int rw_rules_parse(rw_rules *rs, const char *file, const char *text, size_t len, ecg_err *e);
/** Append the rules shipped inside the binary (tools/rewrite/rules/, embedded). */
int rw_rules_builtin(rw_rules *rs, ecg_err *e);
/** Read and parse a rule file from path; errors as rw_rules_parse, or ECG_ERR_INPUT when
 *  it cannot be read. */
int rw_rules_load(rw_rules *rs, const char *path, ecg_err *e);
/** Free the list (not rs itself). */
void rw_rules_free(rw_rules *rs);

/* ------------------------------------------------ the rule matcher, per match (math.c) */

/** Most operands of one node the matcher reads (a node with more keeps its first ones). */
#define RW_VIEW_MAX_IN 16

/** One node as the rule matcher sees it. */
typedef struct rw_vnode {
  ecg_op_id op;                 /**< registry id; ECG_OP_NONE when the registry does not know it */
  int n_in, in[RW_VIEW_MAX_IN]; /**< operand tensor ids (-1: omitted) */
  int n_out, out0;              /**< number of outputs, tensor id of the first */
  bool plain;                   /**< the node carries no attribute */
  /* a reduction the rules may match (float input of static shape, constant axes reducing
   * at least one dim, no attribute but axes/keepdims/noop_with_empty_axes): */
  bool red;
  int red_rank;                 /**< its input's rank */
  int red_mask[ECG_MAX_RANK];   /**< 1 per reduced dim */
  int64_t red_keep;             /**< keepdims */
  int64_t red_dims[ECG_MAX_RANK]; /**< its input's shape (elements) */
} rw_vnode;

/** A read-only view of a graph for the rule matcher, so that one matcher serves the math
 *  pass (an ecg_graph, math.c) and the OCGGS search (its weightless sg graph,
 *  subst.h).  Tensors and nodes are ids of the viewed graph. */
typedef struct rw_view {
  const void *g, *aux;                                   /**< the viewed graph, its index */
  int (*producer)(const struct rw_view *v, int t);       /**< the live node writing t, -1 */
  int (*uses)(const struct rw_view *v, int t);           /**< node inputs reading t + graph outputs naming it */
  bool (*node)(const struct rw_view *v, int i, rw_vnode *n); /**< node i; false when it may not be rewritten */
  int (*dtype)(const struct rw_view *v, int t);          /**< ONNX dtype code */
  int (*dims)(const struct rw_view *v, int t, int64_t *d); /**< static rank (d: elements per dim), -1 */
  bool (*is_const)(const struct rw_view *v, int t);
  bool (*const_cond)(const struct rw_view *v, int t, unsigned c); /**< constant t with its data meets every RW_COND_* of c */
  bool (*const_all)(const struct rw_view *v, int t, double x); /**< constant t holds x in every element */
} rw_view;

/** One match of a rule: a graph substitution (OCGGS Def. 2) of the rule set. */
typedef struct rw_match {
  const rw_rule *r;
  int root;                    /**< node computing the source's root */
  int bind[RW_MAX_VARS];       /**< tensor per variable, -1 unbound */
  int node[RW_MAX_TERMS];      /**< node per source term, -1 */
  int n_set, set[RW_MAX_TERMS]; /**< the distinct matched nodes, root first */
  /* the match's reductions (all alike): */
  bool has_red;
  int red_rank, red_mask[ECG_MAX_RANK];
  int64_t red_keep, red_dims[ECG_MAX_RANK];
} rw_match;

/** Match rule r rooted at node root of v (DNNFusion §3.4.2): operator terms match
 *  single-output producers with that registry id (element-wise and MatMul nodes plain,
 *  reductions alike), commutative operands in either order, variables bind tensors,
 *  numbers match constants of that value; the root writes float32; every intermediate is
 *  read only inside the match; the rule's conditions hold.  True and *m filled when it
 *  matches. */
bool rw_match_at(const rw_view *v, const rw_rule *r, int root, rw_match *m);

/** What rw_build_target made. */
typedef struct rw_target {
  char key[RW_MAX_TERMS][128];
  int tensor[RW_MAX_TERMS], n;   /**< built subterms (identical ones once) */
  int made[RW_MAX_TERMS], n_made; /**< nodes created, in creation (topological) order */
} rw_target;

/** Build m's target into g (whose tensor ids m binds): nodes named after name (unique
 *  "<name>_rwN"), opset opset, shapes inferred by the registry, a target reduction given
 *  the matched dims as its "axes" attribute.  *b (zeroed by the caller) lists the nodes
 *  made.  Returns the tensor computing the target, -1 when a shape does not infer or a
 *  target reduction's operand is not shaped like the matched reductions' input, -2 on out
 *  of memory. */
int rw_build_target(ecg_graph *g, const rw_match *m, const char *name, int opset, rw_target *b);

/** FLOPs and count of nodes (of g, in topological order) that stay after folding: a node
 *  whose inputs are all constants, or outputs of earlier folded nodes of the list, counts
 *  as folded when the registry can evaluate its op and its output fits fold_max bytes. */
void rw_nodes_cost(const ecg_graph *g, const int *nodes, int n, size_t fold_max, int64_t *flops, int *count);

/** Which conditions (RW_COND_CONST/NONNEG/POS/INT/SCALAR) constant t meets; 0 when t is
 *  not a constant with all its data.  *uniform receives whether every element equals *value. */
unsigned rw_const_props(const ecg_tensor *t, bool *uniform, double *value);

/** The reduction facts of node n of g for the matcher (rw_vnode's red fields); false when
 *  n is not a reduction the rules may match. */
bool rw_reduction_info(const ecg_graph *g, const ecg_node *n, rw_vnode *x);

/** Options shared by every pass (set from the command line). */
typedef struct rw_opts {
  size_t fold_max_bytes;  /**< fold: largest output (bytes, all outputs of a node) a
                               folded node may write as a constant */
  const rw_rules *rules;  /**< math: the rule set (built-in plus --rules files) */
  const struct sg_opts *search; /**< subst: --search options (subst.h); NULL: sampling, defaults */
} rw_opts;

/** A pass: rewrite g in place, count what fired into st (zeroed by the caller).
 *  Returns ECG_OK, ECG_ERR_INPUT naming the node that is invalid, or
 *  ECG_ERR_INTERNAL (out of memory). */
typedef int (*rw_pass_fn)(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e);

/** One row of the pass table. */
typedef struct rw_pass {
  const char *name;   /**< --passes name */
  rw_pass_fn run;
  const char *help;   /**< one line for --help */
  bool by_default;    /**< part of the default --passes list */
} rw_pass;

/** The pass table, in default order; *n receives its length. */
const rw_pass *rw_passes(size_t *n);
/** The pass named name, or NULL. */
const rw_pass *rw_pass_find(const char *name);
/** "fold, bnfold, ..." : the known names, for messages (static buffer). */
const char *rw_pass_names(void);

/* Passes (one file each). */
int rw_fold(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e);      /* fold.c */
int rw_bnfold(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e);    /* bnfold.c */
int rw_padfold(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e);   /* padfold.c */
int rw_cse(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e);       /* cse.c */
int rw_simplify(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e);  /* simplify.c */
int rw_math(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e);      /* math.c */

/* ---------------------------------------------------------------- helpers (util.c) */

/** Add one to counter name (a static string) of st, and to st->fired. */
void rw_count(rw_stats *st, const char *name);
/** The registry id of n's operator, or ECG_OP_NONE when the registry does not know it. */
ecg_op_id rw_op(const ecg_node *n);
/** The registry row of n's operator, or NULL. */
const ecg_op_info *rw_info(const ecg_node *n);
/** Index of the node writing tensor t, or -1 (graph input, constant, unused). O(nodes). */
int rw_producer(const ecg_graph *g, int t);
/** Number of node inputs reading tensor t, plus one per graph output naming it. */
int rw_uses(const ecg_graph *g, int t);
/** True when tensor t is a graph output. */
bool rw_is_output(const ecg_graph *g, int t);
/** True when tensor t is a graph input. */
bool rw_is_input(const ecg_graph *g, int t);
/** Every node input reading tensor from reads tensor to instead (graph outputs untouched). */
void rw_replace_uses(ecg_graph *g, int from, int to);
/** Remove node node_idx, whose output out computes the same values (same dtype and shape)
 *  as tensor in: readers of out read in instead.  When out is a graph output its name
 *  must survive, so in's producer writes out instead (possible when in is produced by a
 *  node and is not itself a graph output).  The node is only disconnected here
 *  (rw_remove_dead deletes it).  Returns true when done, false when it cannot be
 *  (the graph is then unchanged). */
bool rw_bypass(ecg_graph *g, int node_idx, int in, int out);
/** Set input i of n to tensor t, growing the input list with -1 entries as needed.
 *  Returns ECG_OK or ECG_ERR_INTERNAL. */
int rw_set_input(ecg_node *n, int i, int t);
/** "<base>_rw<N>" with the smallest N naming no tensor of g, into buf; returns buf. */
const char *rw_unique_name(const ecg_graph *g, const char *base, char *buf, size_t n);
/** Add a float32 constant named after base ("<base>_rw<N>", unique) with the given shape
 *  (rank dims) and numel values; returns its tensor id, or -1 on out of memory. */
int rw_add_const_f32(ecg_graph *g, const char *base, int rank, const int64_t *dims, const float *vals);
/** Add an int64 constant, as rw_add_const_f32. */
int rw_add_const_i64(ecg_graph *g, const char *base, int rank, const int64_t *dims, const int64_t *vals);
/** Delete every node none of whose outputs is read by a node or a graph output, repeatedly,
 *  then unreferenced tensors (ecg_compact).  Returns ECG_OK or ECG_ERR_INTERNAL. */
int rw_remove_dead(ecg_graph *g, ecg_err *e);
/** True when constant tensor t (static shape) holds value v in every element. */
bool rw_const_all(const ecg_tensor *t, double v);
/** True when tensors a and b have the same dtype and the same known static shape. */
bool rw_same_shape(const ecg_tensor *a, const ecg_tensor *b);

#endif
