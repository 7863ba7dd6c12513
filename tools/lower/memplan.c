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

/** Conflict: lifetimes intersect. */
static int clash(const lw_buf *a, const lw_buf *b) { return !(a->last < b->first || b->last < a->first); }

/** Offset for b[t] among the placed buffers done[0..nd) (offsets set): the lowest offset
 *  that fits (best_fit = 0) or the start of the smallest gap that fits, the free space
 *  above the highest buffer counting as unbounded (best_fit = 1). */
static size_t fit(const lw_buf *b, const int *done, int nd, int t, int best_fit, int *scratch) {
  /* the intervals [offset, offset + bytes) of conflicting placed buffers, sorted */
  int n = 0;
  for (int i = 0; i < nd; i++)
    if (clash(&b[done[i]], &b[t])) {
      int v = done[i], j = n++;
      while (j > 0 && b[scratch[j - 1]].offset > b[v].offset) { scratch[j] = scratch[j - 1]; j--; }
      scratch[j] = v;
    }
  size_t need = b[t].bytes, cur = 0, best = (size_t)-1, best_size = (size_t)-1;
  for (int i = 0; i < n; i++) {
    const lw_buf *u = &b[scratch[i]];
    if (u->offset > cur && u->offset - cur >= need) {
      if (!best_fit) return cur;
      if (u->offset - cur < best_size) { best_size = u->offset - cur; best = cur; }
    }
    if (u->offset + u->bytes > cur) cur = u->offset + u->bytes;
  }
  return best != (size_t)-1 ? best : cur;
}

/** Place b[order[0..n)] in that order; returns the arena size (max end). */
static size_t place_in_order(lw_buf *b, const int *order, int n, int best_fit, int *scratch) {
  size_t top = 0;
  for (int i = 0; i < n; i++) {
    int t = order[i];
    b[t].offset = fit(b, order, i, t, best_fit, scratch);
    if (b[t].offset + b[t].bytes > top) top = b[t].offset + b[t].bytes;
  }
  return top;
}

size_t lw_plan_lower_bound(const lw_buf *b, int n) {
  int span = 0;
  for (int i = 0; i < n; i++) if (b[i].last + 1 > span) span = b[i].last + 1;
  size_t best = 0;
  for (int p = 0; p < span; p++) {
    size_t live = 0;
    for (int i = 0; i < n; i++) if (b[i].first <= p && p <= b[i].last) live += b[i].bytes;
    if (live > best) best = live;
  }
  return best;
}

/* Sort keys for the orders (deterministic: ties broken by index). */
static const lw_buf *g_b;
static int g_peak;
static int by_size(const void *x, const void *y) {
  int a = *(const int *)x, c = *(const int *)y;
  if (g_b[a].bytes != g_b[c].bytes) return g_b[a].bytes < g_b[c].bytes ? 1 : -1;
  return a - c;
}
static int by_first(const void *x, const void *y) {
  int a = *(const int *)x, c = *(const int *)y;
  if (g_b[a].first != g_b[c].first) return g_b[a].first - g_b[c].first;
  if (g_b[a].bytes != g_b[c].bytes) return g_b[a].bytes < g_b[c].bytes ? 1 : -1;
  return a - c;
}
/* distance of a buffer's lifetime from the peak position (0 when live there); larger
 * buffers first at equal distance */
static int dist(const lw_buf *b) { return b->last < g_peak ? g_peak - b->last : b->first > g_peak ? b->first - g_peak : 0; }
/* per buffer: the most bytes live at one position of its lifetime (its highest peak) */
static size_t *g_live;
/* buffers through higher peaks first, larger first, then nearer the global peak */
static int by_live(const void *x, const void *y) {
  int a = *(const int *)x, c = *(const int *)y;
  if (g_live[a] != g_live[c]) return g_live[a] < g_live[c] ? 1 : -1;
  if (g_b[a].bytes != g_b[c].bytes) return g_b[a].bytes < g_b[c].bytes ? 1 : -1;
  int da = dist(&g_b[a]), dc = dist(&g_b[c]);
  if (da != dc) return da - dc;
  return a - c;
}
static int by_peak(const void *x, const void *y) {
  int a = *(const int *)x, c = *(const int *)y, da = dist(&g_b[a]), dc = dist(&g_b[c]);
  if (da != dc) return da - dc;
  if (g_b[a].bytes != g_b[c].bytes) return g_b[a].bytes < g_b[c].bytes ? 1 : -1;
  return a - c;
}

/* Peak-first (SOD² §5.4.2) in two orders, keeping the smaller arena: from the peak-memory
 * position outwards (by distance, the paper's traversal), and by the height of the highest
 * position each buffer lives through (a graph with several peaks of about the same height,
 * e.g. PP-OCR's classifier, fragments the second peak when its small buffers, nearer the
 * first, are placed before its large ones). Both start at the peak: its buffers come first. */
static size_t place_peak(lw_buf *b, int n, int *order) {
  int span = 0;
  for (int i = 0; i < n; i++) if (b[i].last + 1 > span) span = b[i].last + 1;
  size_t *live = calloc((size_t)span + 1, sizeof *live);
  g_live = calloc((size_t)n + 1, sizeof *g_live);
  size_t *off = malloc(sizeof *off * (size_t)n + 1);
  if (!live || !g_live || !off) { free(live); free(g_live); free(off); return (size_t)-1; }
  for (int i = 0; i < n; i++)
    for (int p = b[i].first; p <= b[i].last; p++) live[p] += b[i].bytes;
  size_t best = 0;
  g_peak = 0; /* the peak-memory position: the first with the largest live total */
  for (int p = 0; p < span; p++) if (live[p] > best) { best = live[p]; g_peak = p; }
  for (int i = 0; i < n; i++)
    for (int p = b[i].first; p <= b[i].last; p++) if (live[p] > g_live[i]) g_live[i] = live[p];
  size_t top = (size_t)-1;
  for (int v = 0; v < 2; v++) {
    for (int i = 0; i < n; i++) order[i] = i;
    qsort(order, (size_t)n, sizeof *order, v ? by_live : by_peak);
    size_t t = place_in_order(b, order, n, 1, order + n);
    if (t < top) {
      top = t;
      for (int i = 0; i < n; i++) off[i] = b[i].offset;
    }
  }
  for (int i = 0; i < n; i++) b[i].offset = off[i];
  free(live); free(g_live); free(off);
  g_live = NULL;
  return top;
}

size_t lw_plan_place(lw_buf *b, int n, lw_plan_algo algo) {
  if (n <= 0) return 0;
  int *order = malloc(sizeof(int) * (size_t)n * 2);
  if (!order) return (size_t)-1;
  for (int i = 0; i < n; i++) order[i] = i;
  g_b = b;
  int best_fit = 1;
  if (algo == LW_PLAN_PEAK) {
    size_t top = place_peak(b, n, order);
    free(order);
    return top;
  } else if (algo == LW_PLAN_BESTFIT) {
    qsort(order, (size_t)n, sizeof *order, by_first);
  } else {
    qsort(order, (size_t)n, sizeof *order, by_size);
    best_fit = 0;
  }
  size_t top = place_in_order(b, order, n, best_fit, order + n);
  free(order);
  return top;
}

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
    size_t off = fit(s->b, s->order, depth, t, 0, s->scratch);
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
