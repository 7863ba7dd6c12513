/* ecg runtime: the thread count of each run of a model (ecg_rt.h "Threads per run"). */
#include "ecg_rt.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int ecg_rt1_kernel_threads(double work) {
#ifdef _OPENMP
  if (omp_in_parallel() || work < 5e4) return 1;
  return omp_get_max_threads() > 1 ? omp_get_max_threads() : 1;
#else
  (void)work;
  return 1;
#endif
}

/* Runs between probes of the count not chosen: 8 .. 64 while T is chosen (a probe of one
 * thread costs a slower run), 2 .. 16 while one thread is (a load on the other cores
 * often comes and goes: mnasnet1_0 at 224x224, 2 threads, beside another engineer's build,
 * stayed on one thread for most of a 23-run benchmark with 8 .. 64, and for 5 of 20 quiet
 * runs after a burst with 4 .. 16) */
#define TEAM_EVERY_MIN 8
#define TEAM_EVERY_MAX 64
#define TEAM_EVERY_MIN_1 2
#define TEAM_EVERY_MAX_1 16

/* The time of count c: the median of its last 3 runs, the faster of 2, or its one run;
 * 0 when none (one slow run among fast ones does not move it). */
static double team_ms(const ecg_team *t, int c) {
  const double *v = t->ms[c];
  switch (t->nms[c]) {
  case 0: return 0;
  case 1: return v[0];
  case 2: return v[0] < v[1] ? v[0] : v[1];
  default: {
    const double lo = v[0] < v[1] ? v[0] : v[1], hi = v[0] < v[1] ? v[1] : v[0];
    return v[2] < lo ? lo : v[2] > hi ? hi : v[2];
  }
  }
}

/* The count with the lower time (T on a tie or while either is unmeasured). */
static int team_best(const ecg_team *t) {
  const double a = team_ms(t, 0), b = team_ms(t, 1);
  return a > 0 && b > 0 && a < b ? 0 : 1;
}

int ecg_rt1_team_pick(ecg_team *t) {
  t->probe = 0;
  if (!t->nms[0] && t->nms[1] < 3) return 1; /* T until 3 warm runs on T are measured */
  if (t->warm) { /* the measured run of a probe of T */
    t->warm = 0;
    t->probe = 1;
    return 1;
  }
  if (!t->nms[0] || t->since >= t->every) {
    if (t->nms[0] && team_best(t) == 0) { /* probe T: first a run that wakes its threads */
      t->warm = 1;
      t->probe = 2;
      return 1;
    }
    t->probe = 1;
    return 0;
  }
  return team_best(t);
}

void ecg_rt1_team_record(ecg_team *t, double ms) {
  if (t->probe == 2) return; /* woke the threads of a probe of T: not measured */
  const int before = team_best(t);
  /* the first run (page faults, cold caches) is not counted; a probe replaces the stale
   * runs of its count (the load they were measured under may be gone) */
  if (t->runs > 1) {
    const int c = t->cur;
    if (t->probe) t->nms[c] = 0;
    if (t->nms[c] < 3) t->ms[c][t->nms[c]++] = ms;
    else {
      t->ms[c][0] = t->ms[c][1];
      t->ms[c][1] = t->ms[c][2];
      t->ms[c][2] = ms;
    }
  }
  if (!t->probe) {
    t->since++;
    return;
  }
  t->since = 0;
  const int best = team_best(t), lo = best ? TEAM_EVERY_MIN : TEAM_EVERY_MIN_1, hi = best ? TEAM_EVERY_MAX : TEAM_EVERY_MAX_1;
  t->every = best != before ? lo : 2 * t->every < lo ? lo : 2 * t->every > hi ? hi : 2 * t->every;
}

void ecg_rt1_team_begin(ecg_team *t, int fixed) {
  t->cur = -1; /* not chosen here: ecg_rt1_team_end only gives back the caller's count */
  t->probe = 0;
  t->caller = 0;
#ifdef _OPENMP
  if (t->cap > 0 && !omp_in_parallel() && omp_get_max_threads() > t->cap) {
    t->caller = omp_get_max_threads();
    omp_set_num_threads(t->cap);
  }
#endif
#if defined(_OPENMP) && !defined(ECG_TEAM_FIXED)
  const int T = omp_get_max_threads();
  if (T <= 1 || fixed || omp_in_parallel()) return;
  if (t->threads != T) { /* first run, or the caller changed T: start over */
    t->nms[0] = t->nms[1] = 0;
    t->threads = T;
    t->runs = t->since = 0;
    t->every = TEAM_EVERY_MIN;
  }
  t->runs++;
  t->cur = ecg_rt1_team_pick(t);
  if (t->cur == 0) omp_set_num_threads(1);
  t->t0 = omp_get_wtime();
#else
  (void)fixed;
#endif
}

void ecg_rt1_team_end(ecg_team *t) {
#if defined(_OPENMP) && !defined(ECG_TEAM_FIXED)
  if (t->cur >= 0) {
    const double ms = (omp_get_wtime() - t->t0) * 1e3;
    if (t->cur == 0) omp_set_num_threads(t->threads);
    ecg_rt1_team_record(t, ms);
  }
#endif
#ifdef _OPENMP
  if (t->caller) omp_set_num_threads(t->caller);
  t->caller = 0;
#else
  (void)t;
#endif
}
