/* EOP (Xu et al., "EOP: Efficient Operator Partition for Deep Learning Inference over
 * Edge Servers", VEE '22) for ecg-partition: each key operator is split along one
 * dimension between the CPU and a device (an OpenCL GPU), with the CPU share alpha and the
 * device share beta = 1 - alpha. ../shared/notes/digest-eop.md gives the [IMPL] choices
 * taken where the paper is silent; each is named below.
 *
 * Times are in ms; extents (the size of an operator along its partition dimension) are
 * element counts along that dimension. Device 0 is the CPU, device 1 the other device. */
#ifndef ECG_EOP_H
#define ECG_EOP_H
#include <stdbool.h>

/** The paper's three performance patterns (§3.2), fitted per operator, dimension and
 *  device. Forms ([IMPL], digest §1.5): constant t = b; linear t = a*x + b (least squares,
 *  clamped at 0); staircase t = b + a*ceil(x / w) (least squares for a, b at each step
 *  width w tried). */
typedef enum { EOP_CONSTANT = 0, EOP_LINEAR, EOP_STAIRCASE } eop_pattern;

/** A fitted pattern and its error on the samples it was fitted on. */
typedef struct eop_fit {
  eop_pattern kind;
  double a, b, w;  /**< slope or step height, intercept, step width (staircase) */
  double mape;     /**< mean absolute percentage error in percent, held out: fitted on every
                        other sample of the sweep and scored on the rest, both ways
                        (in-sample below 4 samples) */
} eop_fit;

/** Fit the three patterns to n >= 1 samples (x[i] > 0 extents in sweep order, ms[i] >= 0
 *  times): all[] gets each pattern fitted on every sample (indexed by eop_pattern) with
 *  its held-out MAPE, *best the simplest whose held-out MAPE is within 10% of the least
 *  (the paper's "least error", made robust to noise: a staircase fits noise too).
 *  Staircase widths tried: every power of two up to max x and every sample extent.
 *  Returns 0, or -1 when n < 1. */
int eop_fit_samples(const double *x, const double *ms, int n, eop_fit all[3], eop_fit *best);
/** The pattern's time at extent x (ms, >= 0); 0 at x <= 0 (an empty part does not run). */
double eop_eval(const eop_fit *f, double x);
/** "constant", "linear", "staircase". */
const char *eop_pattern_name(eop_pattern p);

/** One operator of the graph, in a topological order: its time model on each device for
 *  a part of extent x (has[d] false: it cannot run on device d), its extent along the
 *  chosen dimension, and its predecessors among the operators (indices < its own). */
typedef struct eop_op {
  const char *name;
  double extent;
  eop_fit t[2];
  bool has[2];
  int n_pred;
  const int *pred;
} eop_op;

/** How a plan is scored. */
typedef enum {
  EOP_SUM = 0,  /**< the paper's Eq. 4: the sum of every operator's Eq. 2 time */
  EOP_MAKESPAN  /**< [IMPL] (digest §2.4): two in-order queues, CPU and device; an operator
                     (or part) starts when its device is free and its inputs are ready;
                     a split operator ends at the later part plus cm (the Concatenate
                     barrier); the score is the last end */
} eop_objective;

/** Eq. 2 for one operator at CPU share alpha: max(t_cpu(alpha*D), t_dev((1-alpha)*D)) + cm
 *  when both parts are non-empty, else the whole operator on one device (no cm). Returns
 *  INFINITY when alpha asks for a device the operator cannot run on. */
double eop_op_time(const eop_op *o, double alpha, double cm);
/** The CPU share in {0.00, 0.01, ..., 1.00} minimising Eq. 2 for o, behind Eq. 3's gate:
 *  a split share is kept only when it beats the operator's best single device (the share
 *  is then 0 or 1). Returns the time; *alpha gets the share. */
double eop_best_ratio(const eop_op *o, double cm, double *alpha);
/** Score of the shares alpha[0..n) under obj (ms). */
double eop_score(const eop_op *ops, int n, const double *alpha, double cm, eop_objective obj);

/** Key operators (§2.3, [IMPL] digest): sorted by their best single-device time, the
 *  shortest prefix whose share of the total exceeds share (0.95); key[i] set for them.
 *  Returns how many are key. */
int eop_key_ops(const eop_op *ops, int n, double share, bool *key);

/** Strategies compared (§5): every operator on the CPU, on the device, split 0.5/0.5
 *  (Equal), split at the graph's speedup sp = sum t_cpu / sum t_dev as beta = sp/(1+sp)
 *  (Fixed), and EOP. */
typedef enum { EOP_CPU_ONLY = 0, EOP_DEVICE_ONLY, EOP_EQUAL, EOP_FIXED, EOP_EOP, EOP_N_STRATEGIES } eop_strategy;
/** "cpu-only", "device-only", "equal", "fixed", "eop". */
const char *eop_strategy_name(eop_strategy s);

/** Shares for strategy s into alpha[0..n) and the score under obj. EOP: key operators get
 *  their best ratio (eop_best_ratio), the others their best single device; then the
 *  joint tuning of adjacent key operators (C1-C3, Algorithm 2) as the 1-D dynamic program
 *  best[i] = min(best[i-1] + T_i, best[i-2] + TuneT(i-1, i)) over the key operators in
 *  order, TuneT searching both shares on the 0.01 grid (101 x 101) for the lowest score
 *  of the whole graph under obj with the others fixed; a joint choice is kept only when
 *  it lowers the score. Under EOP_SUM joint tuning cannot beat the per-operator optimum
 *  (the digest's ambiguity 2), so it changes nothing there. Operators that cannot run on
 *  a device are kept off it by every strategy. Returns the score (ms), or -1 on out of
 *  memory. */
double eop_plan(const eop_op *ops, int n, double cm, eop_objective obj, eop_strategy s, double *alpha);

#endif
