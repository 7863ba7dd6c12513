/* eop.c: EOP's estimator and partitioner (VEE '22 §3-4; eop.h). */
#include "eop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRID 100 /* shares 0.00 .. 1.00 in steps of 0.01 (§3.2 step 3) */

const char *eop_pattern_name(eop_pattern p) {
  return p == EOP_CONSTANT ? "constant" : p == EOP_LINEAR ? "linear" : "staircase";
}

const char *eop_strategy_name(eop_strategy s) {
  static const char *const n[] = {"cpu-only", "device-only", "equal", "fixed", "eop"};
  return s >= 0 && s < EOP_N_STRATEGIES ? n[s] : "?";
}

double eop_eval(const eop_fit *f, double x) {
  if (x <= 0) return 0;
  double t = f->kind == EOP_CONSTANT ? f->b : f->kind == EOP_LINEAR ? f->a * x + f->b : f->b + f->a * ceil(x / f->w);
  return t > 0 ? t : 0;
}

/** MAPE in percent of f on the samples (a zero time counts against 1e-9 ms). */
static double mape(const eop_fit *f, const double *x, const double *ms, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += fabs(eop_eval(f, x[i]) - ms[i]) / fmax(ms[i], 1e-9);
  return 100 * s / n;
}

/** Least squares ms = a*z + b with b >= 0; a = 0 when z does not vary. [IMPL] A negative
 *  intercept is refitted through the origin (b = 0, a = sum z*ms / sum z^2): a line steeper
 *  than the samples warrant extrapolates to ~0 ms below the smallest sample, which is where
 *  EOP puts a device's small part (squeezenet1_1's 3x3 convs on PoCL: 40, 88, 156 ms at 19,
 *  37, 55 rows gave 3.2x - 23, i.e. 0.2 ms for 7 rows, and splits that ran 30x slower). */
static void ols(const double *z, const double *ms, int n, double *a, double *b) {
  double mz = 0, mm = 0, szz = 0, szm = 0;
  for (int i = 0; i < n; i++) { mz += z[i]; mm += ms[i]; }
  mz /= n;
  mm /= n;
  for (int i = 0; i < n; i++) { szz += (z[i] - mz) * (z[i] - mz); szm += (z[i] - mz) * (ms[i] - mm); }
  *a = szz > 0 ? szm / szz : 0;
  *b = mm - *a * mz;
  if (*b < 0) {
    double s2 = 0, sm = 0;
    for (int i = 0; i < n; i++) { s2 += z[i] * z[i]; sm += z[i] * ms[i]; }
    *a = s2 > 0 ? sm / s2 : 0;
    *b = 0;
  }
}

/** Fit pattern kind to the n samples (staircase: the best width by in-sample MAPE);
 *  f->mape is the in-sample MAPE. */
static void fit_one(eop_pattern kind, const double *x, const double *ms, int n, eop_fit *f) {
  double mean = 0, xmax = 0;
  for (int i = 0; i < n; i++) { mean += ms[i]; if (x[i] > xmax) xmax = x[i]; }
  *f = (eop_fit){.kind = kind, .b = mean / n, .w = xmax > 0 ? xmax : 1};
  if (kind == EOP_LINEAR) ols(x, ms, n, &f->a, &f->b);
  if (kind == EOP_STAIRCASE) {
    double *z = malloc(sizeof *z * (size_t)n), best = INFINITY;
    for (int c = 0; z && c < 64 + n; c++) {
      double w = c < 64 ? ldexp(1, c) : x[c - 64];
      if ((c < 64 && w > xmax) || !(w > 0)) continue;
      for (int i = 0; i < n; i++) z[i] = ceil(x[i] / w);
      eop_fit g = {.kind = EOP_STAIRCASE, .w = w};
      ols(z, ms, n, &g.a, &g.b);
      g.mape = mape(&g, x, ms, n);
      if (g.mape < best) { best = g.mape; *f = g; }
    }
    free(z);
  }
  f->mape = mape(f, x, ms, n);
}

/** Held-out MAPE of pattern kind: fitted on the even samples, scored on the odd ones and
 *  the other way round (samples in sweep order), averaged; in-sample below 4 samples. */
static double held_out(eop_pattern kind, const double *x, const double *ms, int n) {
  if (n < 4) { eop_fit f; fit_one(kind, x, ms, n, &f); return f.mape; }
  double *bx = malloc(sizeof *bx * (size_t)n * 2), s = 0;
  if (!bx) return INFINITY;
  double *by = bx + n;
  for (int fold = 0; fold < 2; fold++) {
    int m = 0;
    for (int i = fold; i < n; i += 2) { bx[m] = x[i]; by[m++] = ms[i]; }
    eop_fit f;
    fit_one(kind, bx, by, m, &f);
    m = 0;
    for (int i = 1 - fold; i < n; i += 2) { bx[m] = x[i]; by[m++] = ms[i]; }
    s += mape(&f, bx, by, m);
  }
  free(bx);
  return s / 2;
}

int eop_fit_samples(const double *x, const double *ms, int n, eop_fit all[3], eop_fit *best) {
  if (n < 1) return -1;
  double err[3], least = INFINITY;
  for (int k = 0; k < 3; k++) {
    fit_one((eop_pattern)k, x, ms, n, &all[k]);
    err[k] = held_out((eop_pattern)k, x, ms, n);
    all[k].mape = err[k];
    if (err[k] < least) least = err[k];
  }
  /* least held-out error; the simplest pattern within 10% of it (more parameters must
   * earn their place: a staircase also fits noise) */
  for (int k = 0; k < 3; k++)
    if (err[k] <= least * 1.1 + 1e-9) { *best = all[k]; break; }
  return 0;
}

/** The CPU part's extent for share alpha ([IMPL]: round(alpha * D)). */
static double cpu_part(const eop_op *o, double alpha) { return round(alpha * o->extent); }

double eop_op_time(const eop_op *o, double alpha, double cm) {
  double xc = cpu_part(o, alpha), xd = o->extent - xc;
  if (xd <= 0) return o->has[0] ? eop_eval(&o->t[0], o->extent) : INFINITY;
  if (xc <= 0) return o->has[1] ? eop_eval(&o->t[1], o->extent) : INFINITY;
  if (!o->has[0] || !o->has[1]) return INFINITY;
  return fmax(eop_eval(&o->t[0], xc), eop_eval(&o->t[1], xd)) + cm;
}

/** The operator's best single device: its share (1 CPU, 0 device) and time. */
static double best_single(const eop_op *o, double *alpha) {
  double tc = eop_op_time(o, 1, 0), td = eop_op_time(o, 0, 0);
  *alpha = tc <= td ? 1 : 0;
  return fmin(tc, td);
}

double eop_best_ratio(const eop_op *o, double cm, double *alpha) {
  double best = best_single(o, alpha), single = best; /* Eq. 3: split only to beat this */
  for (int k = 1; k < GRID; k++) {
    double t = eop_op_time(o, k / (double)GRID, cm);
    if (t < best && t < single) { best = t; *alpha = k / (double)GRID; }
  }
  return best;
}

double eop_score(const eop_op *ops, int n, const double *alpha, double cm, eop_objective obj) {
  if (obj == EOP_SUM) {
    double s = 0;
    for (int i = 0; i < n; i++) s += eop_op_time(&ops[i], alpha[i], cm);
    return s;
  }
  /* two in-order queues; ready[i] = when operator i's output is complete */
  double free_at[2] = {0, 0}, end = 0;
  double *ready = malloc(sizeof *ready * (size_t)(n + 1));
  if (!ready) return INFINITY;
  for (int i = 0; i < n; i++) {
    const eop_op *o = &ops[i];
    double in = 0;
    for (int p = 0; p < o->n_pred; p++)
      if (o->pred[p] >= 0 && o->pred[p] < i && ready[o->pred[p]] > in) in = ready[o->pred[p]];
    double xc = cpu_part(o, alpha[i]), xd = o->extent - xc;
    if (xd <= 0 || xc <= 0) { /* whole on one device */
      int d = xd <= 0 ? 0 : 1;
      double t = eop_op_time(o, d == 0 ? 1 : 0, cm), s = fmax(free_at[d], in);
      ready[i] = free_at[d] = s + t;
    } else {
      double e0 = fmax(free_at[0], in) + (o->has[0] ? eop_eval(&o->t[0], xc) : INFINITY);
      double e1 = fmax(free_at[1], in) + (o->has[1] ? eop_eval(&o->t[1], xd) : INFINITY);
      /* Split, copies and Concatenate (cm) after both parts, on the CPU queue */
      ready[i] = fmax(e0, e1) + cm;
      free_at[0] = ready[i];
      free_at[1] = e1;
    }
    if (ready[i] > end) end = ready[i];
  }
  free(ready);
  return end;
}

int eop_key_ops(const eop_op *ops, int n, double share, bool *key) {
  int *idx = malloc(sizeof *idx * (size_t)(n + 1));
  double *t = malloc(sizeof *t * (size_t)(n + 1)), total = 0, a;
  if (!idx || !t) { free(idx); free(t); return -1; }
  for (int i = 0; i < n; i++) {
    idx[i] = i;
    t[i] = best_single(&ops[i], &a);
    if (isfinite(t[i])) total += t[i];
    key[i] = false;
  }
  for (int i = 1; i < n; i++) { /* insertion sort by time, descending (stable) */
    int v = idx[i], j = i - 1;
    while (j >= 0 && t[idx[j]] < t[v]) { idx[j + 1] = idx[j]; j--; }
    idx[j + 1] = v;
  }
  int m = 0;
  double cum = 0;
  for (int i = 0; i < n && (total <= 0 ? 0 : cum / total <= share); i++) {
    key[idx[i]] = true;
    cum += isfinite(t[idx[i]]) ? t[idx[i]] : 0;
    m++;
  }
  free(idx);
  free(t);
  return m;
}

/** Both devices can run it. */
static bool both(const eop_op *o) { return o->has[0] && o->has[1]; }

double eop_plan(const eop_op *ops, int n, double cm, eop_objective obj, eop_strategy s, double *alpha) {
  if (s == EOP_FIXED) { /* one ratio from the graph's GPU-to-CPU speedup (AccPar/CoEdge) */
    double tc = 0, td = 0;
    for (int i = 0; i < n; i++)
      if (both(&ops[i])) { tc += eop_op_time(&ops[i], 1, 0); td += eop_op_time(&ops[i], 0, 0); }
    double sp = td > 0 ? tc / td : 1;
    for (int i = 0; i < n; i++) alpha[i] = both(&ops[i]) ? 1 / (1 + sp) : ops[i].has[0] ? 1 : 0;
    return eop_score(ops, n, alpha, cm, obj);
  }
  for (int i = 0; i < n; i++) {
    const eop_op *o = &ops[i];
    double single = o->has[0] ? 1 : 0;
    alpha[i] = s == EOP_CPU_ONLY ? (o->has[0] ? 1 : 0)
               : s == EOP_DEVICE_ONLY ? (o->has[1] ? 0 : 1)
               : s == EOP_EQUAL ? (both(o) ? 0.5 : single)
               : single;
  }
  if (s != EOP_EOP) return eop_score(ops, n, alpha, cm, obj);
  bool *key = malloc(sizeof *key * (size_t)(n + 1));
  int *ks = malloc(sizeof *ks * (size_t)(n + 1));
  if (!key || !ks || eop_key_ops(ops, n, 0.95, key) < 0) { free(key); free(ks); return -1; }
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (key[i]) { eop_best_ratio(&ops[i], cm, &alpha[i]); ks[m++] = i; }
    else best_single(&ops[i], &alpha[i]);
  }
  double score = eop_score(ops, n, alpha, cm, obj);
  /* C1-C3: the recurrence best[i] = min(best[i-1] + T_i, best[i-2] + TuneT(i-1, i)) read
   * left to right on the whole-graph score: each adjacent pair of key operators is tuned
   * jointly (Algorithm 2, both shares on the grid) and kept when the score drops */
  for (int j = 1; obj == EOP_MAKESPAN && j < m; j++) {
    int p = ks[j - 1], q = ks[j];
    if (!both(&ops[p]) || !both(&ops[q])) continue;
    double ap = alpha[p], aq = alpha[q], best = score;
    for (int u = 0; u <= GRID; u++)
      for (int v = 0; v <= GRID; v++) {
        alpha[p] = u / (double)GRID;
        alpha[q] = v / (double)GRID;
        double sc = eop_score(ops, n, alpha, cm, obj);
        if (sc < best - 1e-12) { best = sc; ap = alpha[p]; aq = alpha[q]; }
      }
    alpha[p] = ap;
    alpha[q] = aq;
    score = best;
  }
  free(key);
  free(ks);
  return score;
}
