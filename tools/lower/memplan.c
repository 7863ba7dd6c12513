/* memplan.c: placing intermediate buffers in one arena (SOD², Niu dissertation §5.4.2;
 * ../shared/notes/digest-niu.md §4.4), with the baselines it is compared against.
 *
 * A buffer has a size and a lifetime [first, last] in kernel positions; two buffers whose
 * lifetimes intersect may not overlap in the arena. Every algorithm here places buffers
 * one at a time, each into a gap left by the already placed buffers whose lifetimes
 * intersect its own; they differ in the order and in which gap:
 *   - peak-first (SOD²): the buffers live at the peak-memory position first, packed; then
 *     outwards from the peak, forward and backward, each new buffer into the tightest
 *     gap (memory demand falls monotonically away from the peak, so reuse is easy there);
 *     where a graph has several peaks that is not so, and the same placement is also tried
 *     with the buffers ordered by the height of the highest position they live through,
 *     keeping the smaller arena (place_peak);
 *   - best-fit (MNN's "smallest fitting slot"): in execution order, the tightest gap;
 *   - size-first (TFLite-style): largest first, the lowest gap;
 *   - the optimum: every order with the lowest gap (any optimal placement is reached by
 *     placing its buffers in offset order lowest-first), by branch and bound. */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* The heuristics live in the runtime (runtime/ecg_plan.c), which dynamic-shape builds call at
 * run time; the lowering links the same object. */
size_t lw_plan_lower_bound(const lw_buf *b, int n) { return ecg_rt1_plan_lower_bound(b, n); }

size_t lw_plan_place(lw_buf *b, int n, lw_plan_algo algo) { return ecg_rt1_plan_place(b, n, (int)algo); }

/* Branch and bound over placement orders with lowest-gap placement. */
typedef struct bnb {
  lw_buf *b;
  int n;
  int *order, *used, *scratch;
  size_t best, bound;  /**< best arena found; lower bound (stop when reached) */
  size_t *best_off;
  long nodes, budget;
  int exhausted;       /**< the budget ran out before the search finished */
} bnb;

static void bnb_go(bnb *s, int depth, size_t top) {
  if (top >= s->best || s->best == s->bound) return;
  if (depth == s->n) {
    s->best = top;
    for (int i = 0; i < s->n; i++) s->best_off[i] = s->b[i].offset;
    return;
  }
  if (++s->nodes > s->budget) { s->exhausted = 1; return; }
  for (int t = 0; t < s->n && !s->exhausted; t++) {
    if (s->used[t]) continue;
    size_t off = ecg_rt1_plan_fit(s->b, s->order, depth, t, 0, s->scratch);
    s->b[t].offset = off;
    s->order[depth] = t;
    s->used[t] = 1;
    bnb_go(s, depth + 1, off + s->b[t].bytes > top ? off + s->b[t].bytes : top);
    s->used[t] = 0;
  }
}

size_t lw_plan_optimum(lw_buf *b, int n, long budget, int *exact) {
  *exact = 0;
  if (n <= 0) { *exact = 1; return 0; }
  bnb s = {.b = b, .n = n, .budget = budget};
  s.order = calloc((size_t)n, sizeof(int));
  s.used = calloc((size_t)n, sizeof(int));
  s.scratch = calloc((size_t)n, sizeof(int));
  s.best_off = calloc((size_t)n, sizeof(size_t));
  if (!s.order || !s.used || !s.scratch || !s.best_off) {
    free(s.order); free(s.used); free(s.scratch); free(s.best_off);
    return (size_t)-1;
  }
  /* start from the best heuristic: the search only has to beat it */
  s.bound = lw_plan_lower_bound(b, n);
  s.best = (size_t)-1;
  for (int a = 0; a < 3; a++) {
    size_t top = lw_plan_place(b, n, (lw_plan_algo)a);
    if (top < s.best) {
      s.best = top;
      for (int i = 0; i < n; i++) s.best_off[i] = b[i].offset;
    }
  }
  bnb_go(&s, 0, 0);
  for (int i = 0; i < n; i++) b[i].offset = s.best_off[i];
  *exact = !s.exhausted;
  free(s.order); free(s.used); free(s.scratch); free(s.best_off);
  return s.best;
}

int lw_plan_compare(const lw_buf *b, int n, long budget, lw_plan_cmp *c) {
  memset(c, 0, sizeof *c);
  c->buffers = n;
  lw_buf *w = malloc(sizeof *w * (size_t)(n > 0 ? n : 1));
  if (!w) return -1;
  for (int a = 0; a < 3; a++) {
    memcpy(w, b, sizeof *w * (size_t)n);
    c->arena[a] = lw_plan_place(w, n, (lw_plan_algo)a);
    if (c->arena[a] == (size_t)-1) { free(w); return -1; }
  }
  c->lower_bound = lw_plan_lower_bound(b, n);
  size_t best = c->arena[0];
  for (int a = 1; a < 3; a++) if (c->arena[a] < best) best = c->arena[a];
  if (best == c->lower_bound) { /* a heuristic at the lower bound is optimal */
    c->optimum = best;
    c->optimum_exact = 1;
  } else if (n <= LW_PLAN_SEARCH_MAX) {
    memcpy(w, b, sizeof *w * (size_t)n);
    c->optimum = lw_plan_optimum(w, n, budget, &c->optimum_exact);
  } else { /* too many buffers to search: the best heuristic, not known optimal */
    c->optimum = best;
    c->optimum_exact = 0;
  }
  free(w);
  return c->optimum == (size_t)-1 ? -1 : 0;
}

const char *lw_plan_name(lw_plan_algo a) {
  return a == LW_PLAN_PEAK ? "peak" : a == LW_PLAN_BESTFIT ? "bestfit" : "size";
}

int lw_plan_parse(const char *s, lw_plan_algo *a) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, lw_plan_name((lw_plan_algo)i))) { *a = (lw_plan_algo)i; return 0; }
  return -1;
}
