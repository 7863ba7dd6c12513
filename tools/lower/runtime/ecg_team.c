/* ecg runtime: the thread count of each run of a model (ecg_rt.h "Threads per run"). */
#include "ecg_rt.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Runs between probes of the count not chosen: 8 .. 64 while T is chosen (a probe of one
 * thread costs a slower run), 4 .. 16 while one thread is (a load on the other cores
 * often comes and goes: mnasnet1_0 at 224x224, 2 threads, beside another engineer's build,
 * stayed on one thread for most of a 23-run benchmark with 8 .. 64) */
#define TEAM_EVERY_MIN 8
#define TEAM_EVERY_MAX 64
#define TEAM_EVERY_MIN_1 4
#define TEAM_EVERY_MAX_1 16

/* The count with the lower mean (T on a tie or while either is unmeasured). */
static int team_best(const ecg_team *t) { return t->ms[0] > 0 && t->ms[1] > 0 && t->ms[0] < t->ms[1] ? 0 : 1; }

int ecg_rt1_team_pick(ecg_team *t) {
  t->probe = 0;
  if (t->ms[1] <= 0) return 1; /* T until a warm run on T is measured */
  if (t->ms[0] <= 0 || t->since >= t->every) {
    t->probe = 1;
    return t->ms[0] <= 0 ? 0 : !team_best(t);
  }
  return team_best(t);
}

void ecg_rt1_team_record(ecg_team *t, double ms) {
  const int before = team_best(t);
  /* the first run (page faults, cold caches) is not counted; a probe replaces the stale
   * mean of its count (the load it was measured under may be gone) */
  if (t->runs > 1) t->ms[t->cur] = t->ms[t->cur] > 0 && !t->probe ? 0.5 * t->ms[t->cur] + 0.5 * ms : ms;
  if (!t->probe) {
    t->since++;
    return;
  }
  t->since = 0;
  const int best = team_best(t), lo = best ? TEAM_EVERY_MIN : TEAM_EVERY_MIN_1, hi = best ? TEAM_EVERY_MAX : TEAM_EVERY_MAX_1;
  t->every = best != before ? lo : 2 * t->every < lo ? lo : 2 * t->every > hi ? hi : 2 * t->every;
}

void ecg_rt1_team_begin(ecg_team *t, int fixed) {
  t->cur = -1; /* not chosen here: ecg_rt1_team_end does nothing */
  t->probe = 0;
#if defined(_OPENMP) && !defined(ECG_TEAM_FIXED)
  const int T = omp_get_max_threads();
  if (T <= 1 || fixed || omp_in_parallel()) return;
  if (t->threads != T) { /* first run, or the caller changed T: start over */
    t->ms[0] = t->ms[1] = 0;
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
  if (t->cur < 0) return;
  const double ms = (omp_get_wtime() - t->t0) * 1e3;
  if (t->cur == 0) omp_set_num_threads(t->threads);
  ecg_rt1_team_record(t, ms);
#else
  (void)t;
#endif
}
