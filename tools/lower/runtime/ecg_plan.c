/* ecg runtime: arena placement (ecg_plan.h; SOD², Niu dissertation §5.4.2).
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
 *   - size-first (TFLite-style): largest first, the lowest gap.
 * The orders are total (ties broken by index), so any sort gives the same placement; the
 * sort here is a stable insertion sort with an explicit context (no globals: the runtime
 * has no writable data). */
#include <stdlib.h>

#include "ecg_plan.h"

/** Conflict: lifetimes intersect. */
static int clash(const ecg_plan_buf *a, const ecg_plan_buf *b) { return !(a->last < b->first || b->last < a->first); }

size_t ecg_rt1_plan_fit(const ecg_plan_buf *b, const int *done, int nd, int t, int best_fit, int *scratch) {
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
    const ecg_plan_buf *u = &b[scratch[i]];
    if (u->offset > cur && u->offset - cur >= need) {
      if (!best_fit) return cur;
      if (u->offset - cur < best_size) { best_size = u->offset - cur; best = cur; }
    }
    if (u->offset + u->bytes > cur) cur = u->offset + u->bytes;
  }
  return best != (size_t)-1 ? best : cur;
}

/** Place b[order[0..n)] in that order; returns the arena size (max end). */
static size_t place_in_order(ecg_plan_buf *b, const int *order, int n, int best_fit, int *scratch) {
  size_t top = 0;
  for (int i = 0; i < n; i++) {
    int t = order[i];
    b[t].offset = ecg_rt1_plan_fit(b, order, i, t, best_fit, scratch);
    if (b[t].offset + b[t].bytes > top) top = b[t].offset + b[t].bytes;
  }
  return top;
}

/* The positions the buffers' lifetimes cover: [*lo, *hi). Positions may be negative (a buffer
 * live only before the first kernel has lifetime [-1, -1]); an empty lifetime (first > last)
 * covers none. */
static void plan_span(const ecg_plan_buf *b, int n, int *lo, int *hi) {
  *lo = 0; *hi = 0;
  for (int i = 0; i < n; i++) {
    if (b[i].first > b[i].last) continue;
    if (b[i].first < *lo) *lo = b[i].first;
    if (b[i].last + 1 > *hi) *hi = b[i].last + 1;
  }
}

size_t ecg_rt1_plan_lower_bound(const ecg_plan_buf *b, int n) {
  int lo, hi;
  plan_span(b, n, &lo, &hi);
  size_t best = 0;
  for (int p = lo; p < hi; p++) {
    size_t live = 0;
    for (int i = 0; i < n; i++) if (b[i].first <= p && p <= b[i].last) live += b[i].bytes;
    if (live > best) best = live;
  }
  return best;
}

/* The sort keys of the orders, passed explicitly. */
typedef struct order_ctx {
  const ecg_plan_buf *b;
  int peak;           /**< the peak-memory position */
  const size_t *live; /**< per buffer: the most bytes live at one position of its lifetime */
} order_ctx;
typedef int (*order_cmp)(const order_ctx *c, int a, int d);

static int by_size(const order_ctx *c, int a, int d) {
  if (c->b[a].bytes != c->b[d].bytes) return c->b[a].bytes < c->b[d].bytes ? 1 : -1;
  return a - d;
}
static int by_first(const order_ctx *c, int a, int d) {
  if (c->b[a].first != c->b[d].first) return c->b[a].first - c->b[d].first;
  if (c->b[a].bytes != c->b[d].bytes) return c->b[a].bytes < c->b[d].bytes ? 1 : -1;
  return a - d;
}
/* distance of a buffer's lifetime from the peak position (0 when live there) */
static int dist(const order_ctx *c, int i) {
  const ecg_plan_buf *b = &c->b[i];
  return b->last < c->peak ? c->peak - b->last : b->first > c->peak ? b->first - c->peak : 0;
}
/* buffers through higher peaks first, larger first, then nearer the global peak */
static int by_live(const order_ctx *c, int a, int d) {
  if (c->live[a] != c->live[d]) return c->live[a] < c->live[d] ? 1 : -1;
  if (c->b[a].bytes != c->b[d].bytes) return c->b[a].bytes < c->b[d].bytes ? 1 : -1;
  int da = dist(c, a), dd = dist(c, d);
  if (da != dd) return da - dd;
  return a - d;
}
/* nearer the peak first, larger first at equal distance */
static int by_peak(const order_ctx *c, int a, int d) {
  int da = dist(c, a), dd = dist(c, d);
  if (da != dd) return da - dd;
  if (c->b[a].bytes != c->b[d].bytes) return c->b[a].bytes < c->b[d].bytes ? 1 : -1;
  return a - d;
}

/** order[0..n) = 0..n-1 sorted by cmp (a total order). */
static void sort_order(int *order, int n, const order_ctx *c, order_cmp cmp) {
  for (int i = 0; i < n; i++) {
    int v = i, j = i;
    while (j > 0 && cmp(c, order[j - 1], v) > 0) { order[j] = order[j - 1]; j--; }
    order[j] = v;
  }
}

/* Peak-first (SOD² §5.4.2) in two orders, keeping the smaller arena: from the peak-memory
 * position outwards (by distance, the paper's traversal), and by the height of the highest
 * position each buffer lives through (a graph with several peaks of about the same height,
 * e.g. PP-OCR's classifier, fragments the second peak when its small buffers, nearer the
 * first, are placed before its large ones). Both start at the peak: its buffers come first.
 * order: 2n ints. */
static size_t place_peak(ecg_plan_buf *b, int n, int *order) {
  int lo, hi; /* live[p - lo]: the bytes live at position p */
  plan_span(b, n, &lo, &hi);
  size_t *live = calloc((size_t)(hi - lo) + 1, sizeof *live);
  size_t *blive = calloc((size_t)n + 1, sizeof *blive);
  size_t *off = malloc(sizeof *off * (size_t)n + 1);
  if (!live || !blive || !off) { free(live); free(blive); free(off); return (size_t)-1; }
  for (int i = 0; i < n; i++)
    for (int p = b[i].first; p <= b[i].last; p++) live[p - lo] += b[i].bytes;
  size_t best = 0;
  order_ctx c = {b, lo, blive}; /* the peak-memory position: the first with the largest live total */
  for (int p = lo; p < hi; p++) if (live[p - lo] > best) { best = live[p - lo]; c.peak = p; }
  for (int i = 0; i < n; i++)
    for (int p = b[i].first; p <= b[i].last; p++) if (live[p - lo] > blive[i]) blive[i] = live[p - lo];
  size_t top = (size_t)-1;
  for (int v = 0; v < 2; v++) {
    sort_order(order, n, &c, v ? by_live : by_peak);
    size_t t = place_in_order(b, order, n, 1, order + n);
    if (t < top) {
      top = t;
      for (int i = 0; i < n; i++) off[i] = b[i].offset;
    }
  }
  for (int i = 0; i < n; i++) b[i].offset = off[i];
  free(live); free(blive); free(off);
  return top;
}

size_t ecg_rt1_plan_place(ecg_plan_buf *b, int n, int algo) {
  if (n <= 0) return 0;
  int *order = malloc(sizeof(int) * (size_t)n * 2);
  if (!order) return (size_t)-1;
  order_ctx c = {b, 0, NULL};
  size_t top;
  if (algo == ECG_PLAN_PEAK) top = place_peak(b, n, order);
  else {
    sort_order(order, n, &c, algo == ECG_PLAN_BESTFIT ? by_first : by_size);
    top = place_in_order(b, order, n, algo == ECG_PLAN_BESTFIT, order + n);
  }
  free(order);
  return top;
}
