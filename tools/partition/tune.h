/* tune.h: AGO's divide-and-conquer schedule tuner (Xu et al., INFOCOM 2023, §V, the
 * "reformer layer"), driven by ecg-partition --tune.
 *
 * The unit of a schedule is a fusion block: its Schedule (format/ecg.proto, schema 6)
 * holds knobs that ecg-lower honours in the generated code: threads (the kernel runs on at
 * most that many OpenMP threads), conv_algo (the Conv kernel's strategy, forced instead of
 * the runtime's cost), vector_width and unroll (the pragmas of the kernel's innermost
 * generated loop) and intensive_fusion (schema 8, AGO §III-B as a search dimension: an
 * intensive-fusion block lowered as its one fused row-tiled kernel, on, or as the kernels of
 * its stages, off, the plan ecg-fuse makes without --intensive; ecg-lower obeys it). Every
 * candidate is measured with the real lowered code on this machine, in one of two ways
 * (--tune-in):
 *  - model (the default): the whole graph, every block at its best schedule so far and the
 *    candidate's blocks at the candidate's, lowered by ecg-lower and run by ecg-bench
 *    --random --profile; the candidate's time is the sum of the mean times of the kernels
 *    its blocks generate (model.json kernel_costs "block"). A block's kernel runs as it
 *    will in the model: its weights come from wherever the kernels before it left them, its
 *    input was just written by its producer, its output is read by the next.
 *  - subgraph (AGO's and TVM's setting): the candidate's blocks extracted as a standalone
 *    ECG whose inputs are the boundary tensors (pt_extract), lowered and timed alone
 *    (ecg-bench --random, the median). Repeated runs of one small kernel keep its weights
 *    and input in the caches, and the schedules chosen so lost to the defaults inside the
 *    model (tools/partition/data/latency_b40_ibr16.md: untuned fastest on both models at
 *    all three input sizes). --emit-candidates and --measure farm out candidates of this
 *    kind only.
 *
 * SPLIT (§V): each partition subgraph S_i is cut into mini-subgraphs M_ij of at most one
 * complex operator: its fusion blocks (an intensive-fusion block, AGO §III-B, is one kernel
 * and stays one mini-subgraph; a node of no block is a one-node block while tuning, kept in
 * the output with plan "tune" only when its schedule sets a knob). Each M_ij is tuned alone by coordinate search (one knob of
 * one block changed at a time from the best so far, in a seeded random order) until its
 * best stops improving (--patience measurements in a row without a gain of 1%; with
 * --confirm K a gain counts only when K more measurements of both, alternated, keep it:
 * a single run's noise on a VM is larger than most knobs' gains). JOIN: the
 * mini-subgraphs' best schedules are composed into S_i's, which is measured as one
 * standalone ECG and searched further the same way with the budget left. AGO-NR
 * (--no-reformer) skips SPLIT: S_i is searched directly from the default schedule. The
 * default schedule of an intensive-fusion block states intensive_fusion on, every other
 * knob 0; its intensive_fusion is searched like any knob (on, off), so the tuner chooses per
 * block between the fused kernel and the stages, measured; coarse before fine, a round
 * of the search tries the intensive_fusion changes before the other knobs. AGO-NI (--no-intensive) pins
 * it off on every intensive-fusion block, from the start: no intensive fusion at all (on
 * an ECG fused without --intensive there are no such blocks, and it changes nothing); the
 * other knobs of those blocks are searched as anywhere. */
#ifndef ECG_PT_TUNE_H
#define ECG_PT_TUNE_H
#include <stdbool.h>
#include <stdio.h>

#include "ecg.h"
#include "partition.h"

/** What the tuner does (ecg-partition's options). */
typedef struct pt_tune_opts {
  int budget;             /**< measurements in all (--budget N, > 0) */
  double timeout;         /**< seconds of wall clock; no new measurement after it (0: none) */
  int patience;           /**< measurements without a 1% gain that end a search (default 4) */
  int confirm;            /**< --confirm K: a schedule that measures 1% faster than the best is
                               measured K more times, alternating with the best, and taken only
                               if its median still beats the best's by 1% (0: taken at once) */
  int runs, warmup;       /**< ecg-bench --runs/--warmup per measurement (default 10, 2) */
  int threads;            /**< ecg-bench --threads: the thread count tuned for (default 1) */
  unsigned seed;          /**< order of the candidates (default 1) */
  bool no_intensive;      /**< AGO-NI: intensive_fusion pinned off on every intensive-fusion block */
  bool no_reformer;       /**< AGO-NR: no SPLIT/JOIN, each subgraph searched directly */
  bool in_subgraph;       /**< --tune-in subgraph: candidates measured as standalone ECGs
                               (else in the whole model, by their kernels' profile times) */
  const char *log;        /**< --tune-log FILE.jsonl: read to skip measured candidates, appended to */
  const char *emit_dir;   /**< --emit-candidates DIR: write the first round's candidates, measure none */
  const char *fit_out;    /**< --fit-data FILE: one JSON line per mini-subgraph (AGO Fig. 8 data) */
  const pt_weights *w;    /**< the weights (Eq. 1 products for --fit-data) */
  int verbose;
} pt_tune_opts;

/** What the tuner did. */
typedef struct pt_tune_stats {
  int measured;           /**< measurements taken here (counted in the budget) */
  int reused;             /**< candidates whose time came from the log (counted too: the budget
                               is the number of schedules explored, wherever measured) */
  int invalid;            /**< candidates ecg-lower refused (a knob that does not apply; free) */
  int confirm_runs;       /**< --confirm's measurements (not counted in the budget) */
  int confirmed, rejected; /**< gains --confirm kept, and those it found to be noise */
  int emitted;            /**< --emit-candidates: files written */
  int subgraphs, minis;   /**< units tuned: joined subgraphs, mini-subgraphs */
  int blocks_scheduled;   /**< blocks whose chosen schedule sets a knob */
  int intensive_on;       /**< intensive-fusion blocks tuned whose chosen intensive_fusion is on */
  int intensive_off;      /**< ... is off (lowered as their stages' kernels) */
  double seconds;         /**< wall-clock time of the tuning */
} pt_tune_stats;

/** Tune g (fused, partitioned: ecg-partition's subgraphs; static shapes) and store the chosen
 *  schedule of every block in g (blocks whose best is the default get none; blocks of
 *  subgraphs the budget did not reach keep the schedule they had). Tool paths:
 *  ecg-lower and ecg-bench next to the running binary, else on PATH. Errors: ECG_ERR_INPUT
 *  when g has no subgraphs or a candidate cannot be extracted (the message names the node),
 *  or the log cannot be read or written (naming it), or the default schedule of a unit
 *  fails to lower or run (naming the unit's first node); ECG_ERR_INTERNAL out of memory. */
int pt_tune(ecg_graph *g, const pt_tune_opts *o, pt_tune_stats *st, ecg_err *e);

/** ecg-partition --measure FILE: lower and time one candidate ECG as the tuner does and
 *  print its tuning-log line to f (ms null and "invalid": true when ecg-lower refuses it).
 *  Errors: ECG_ERR_INPUT for an unreadable FILE or a failed run (naming FILE). */
int pt_measure_file(const char *path, const pt_tune_opts *o, FILE *f, ecg_err *e);

/** The standalone ECG of the nodes keep[i] of g: a copy holding those nodes and the
 *  tensors they touch, whose inputs are the non-constant tensors they read but do not
 *  produce and whose outputs are the tensors they produce that another node or g's output
 *  reads (the boundary tensors of AGO's mini-subgraphs); blocks, schedules and subgraphs
 *  follow through ecg_compact. *out is validated. Errors: ECG_ERR_INPUT (the result does
 *  not validate, e.g. no node kept), ECG_ERR_INTERNAL out of memory. */
int pt_extract(const ecg_graph *g, const bool *keep, ecg_graph **out, ecg_err *e);

#endif
