/* memplan_test: the arena placements of tools/lower/memplan.c (SOD², Niu dissertation
 * §5.4.2) on seeded random lifetimes shaped like a DNN's intermediates (most used by the
 * next kernel or two, some kept long by a skip connection), checked against an
 * independent validity check and, where small enough, against the exhaustive optimum
 * (itself checked against plain enumeration of every order on the smallest instances).
 * Prints each algorithm's mean and worst ratio to the optimum; issue 9 asks the run-time
 * plan to be within 1.1x of the optimum where that can be computed (SOD²: 1.05x, best-fit
 * greedy 1.16x). */
#include <stdio.h>

#include "lower.h"
#include "unit.h"

#define MAXN 13

static unsigned rng(unsigned *s) { /* xorshift32 */
  unsigned x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

/* n buffers over about n positions: one defined per position (a kernel's output), used
 * until 1-2 positions later, one in five kept 3-6 positions (a skip connection); sizes
 * from a few activation-like scales, multiples of 64 bytes */
static int make_instance(lw_buf *b, int n, unsigned *s) {
  static const int scale[] = {1, 2, 3, 4, 6, 8, 12, 16};
  for (int i = 0; i < n; i++) {
    int span = rng(s) % 5 == 0 ? 3 + (int)(rng(s) % 4) : 1 + (int)(rng(s) % 2);
    b[i] = (lw_buf){.bytes = 64u * (unsigned)scale[rng(s) % 8], .first = i, .last = i + span};
  }
  return n;
}

/* Every pair with intersecting lifetimes is disjoint in the arena, and top is the arena. */
static int valid(const lw_buf *b, int n, size_t top) {
  size_t end = 0;
  for (int i = 0; i < n; i++) {
    if (b[i].offset + b[i].bytes > end) end = b[i].offset + b[i].bytes;
    for (int j = i + 1; j < n; j++) {
      int live = !(b[i].last < b[j].first || b[j].last < b[i].first);
      int overlap = b[i].offset < b[j].offset + b[j].bytes && b[j].offset < b[i].offset + b[i].bytes;
      if (live && overlap) return 0;
    }
  }
  return end == top;
}

/* Plain enumeration of every order with lowest-gap placement (no pruning). */
static size_t brute(lw_buf *b, int n, int *order, int *used, int depth) {
  if (depth == n) {
    size_t top = 0;
    for (int i = 0; i < n; i++) { /* place order[0..n) lowest-gap, independently of memplan.c */
      int t = order[i];
      size_t off = 0;
      for (int moved = 1; moved;) {
        moved = 0;
        for (int j = 0; j < i; j++) {
          const lw_buf *u = &b[order[j]];
          if (u->last < b[t].first || b[t].last < u->first) continue;
          if (off < u->offset + u->bytes && u->offset < off + b[t].bytes) { off = u->offset + u->bytes; moved = 1; }
        }
      }
      b[t].offset = off;
      if (off + b[t].bytes > top) top = off + b[t].bytes;
    }
    return top;
  }
  size_t best = (size_t)-1;
  for (int t = 0; t < n; t++) {
    if (used[t]) continue;
    used[t] = 1;
    order[depth] = t;
    size_t v = brute(b, n, order, used, depth + 1);
    if (v < best) best = v;
    used[t] = 0;
  }
  return best;
}

/* The study (make memplan-study): n instances from seed, each planner's arena over the
 * optimum (exhaustive branch and bound; instances the budget leaves unsolved are counted
 * apart, over the lower bound), mean and max, as one JSON line. */
static int study(int instances, unsigned seed) {
  lw_buf b[MAXN];
  double sum[3] = {0}, worst[3] = {0}, sum_lb[3] = {0}, worst_lb[3] = {0};
  int exact_n = 0, at_opt[3] = {0};
  for (int it = 0; it < instances; it++) {
    int n = 5 + it % 8;
    make_instance(b, n, &seed);
    lw_plan_cmp c;
    if (lw_plan_compare(b, n, 20000000, &c)) return 3;
    for (int a = 0; a < 3; a++) {
      double rl = (double)c.arena[a] / (double)c.lower_bound;
      sum_lb[a] += rl;
      if (rl > worst_lb[a]) worst_lb[a] = rl;
      if (!c.optimum_exact) continue;
      double r = (double)c.arena[a] / (double)c.optimum;
      sum[a] += r;
      if (r > worst[a]) worst[a] = r;
      at_opt[a] += c.arena[a] == c.optimum;
    }
    exact_n += c.optimum_exact;
  }
  printf("{\"graphs\": %d, \"buffers\": \"5-12\", \"optimum_exact\": %d", instances, exact_n);
  for (int a = 0; a < 3; a++)
    printf(", \"%s\": {\"mean_over_optimum\": %.4f, \"max_over_optimum\": %.4f, \"optimal\": %d, "
           "\"mean_over_lower_bound\": %.4f, \"max_over_lower_bound\": %.4f}",
           lw_plan_name((lw_plan_algo)a), exact_n ? sum[a] / exact_n : 0, worst[a], at_opt[a], sum_lb[a] / instances, worst_lb[a]);
  printf("}\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--study")) return study(atoi(argv[2]), (unsigned)strtoul(argv[3], NULL, 10));
  unsigned seed = 12345;
  lw_buf b[MAXN];
  double sum[3] = {0}, worst[3] = {0};
  int count = 0, at_opt[3] = {0}, inexact = 0;
  for (int it = 0; it < 600; it++) {
    int n = 5 + it % 8; /* 5..12 buffers */
    make_instance(b, n, &seed);
    size_t lb = lw_plan_lower_bound(b, n);
    int exact;
    size_t opt = lw_plan_optimum(b, n, 20000000, &exact);
    CHECK(valid(b, n, opt), "instance %d: the optimum's placement is invalid", it);
    CHECK(opt >= lb, "instance %d: optimum %zu below the lower bound %zu", it, opt, lb);
    if (!exact) { inexact++; continue; }
    if (n <= 6) {
      int order[MAXN], used[MAXN] = {0};
      lw_buf c[MAXN];
      memcpy(c, b, sizeof c);
      size_t bf = brute(c, n, order, used, 0);
      CHECK(bf == opt, "instance %d: branch and bound %zu, enumeration %zu", it, opt, bf);
    }
    for (int a = 0; a < 3; a++) {
      size_t top = lw_plan_place(b, n, (lw_plan_algo)a);
      CHECK(valid(b, n, top), "instance %d: %s placement invalid", it, lw_plan_name((lw_plan_algo)a));
      CHECK(top >= opt, "instance %d: %s %zu below the optimum %zu", it, lw_plan_name((lw_plan_algo)a), top, opt);
      double r = (double)top / (double)opt;
      sum[a] += r;
      if (r > worst[a]) worst[a] = r;
      at_opt[a] += top == opt;
    }
    count++;
  }
  CHECK(count >= 500, "only %d instances solved exactly", count);
  for (int a = 0; a < 3; a++)
    printf("%-8s mean %.4f x optimum, worst %.4f, optimal on %d of %d instances\n", lw_plan_name((lw_plan_algo)a),
           sum[a] / count, worst[a], at_opt[a], count);
  printf("(%d instances, %d not solved exactly within the search budget)\n", count, inexact);
  /* issue 9: the run-time plan (peak-first) within 1.1x of the optimum */
  CHECK(sum[LW_PLAN_PEAK] / count <= 1.10, "peak-first mean ratio %.4f > 1.10", sum[LW_PLAN_PEAK] / count);
  /* two peaks of the same height (PP-OCR's classifier, positions 55-69 of its fused plan):
   * from the first peak outwards, the second peak's small buffers, nearer, take the hole its
   * large one needs (1.46x the optimum, like best-fit); ordered by the peak each buffer lives
   * through, peak-first is within 1.1x of the optimum (1.07x: not optimal) */
  {
    lw_buf tp[] = {{24576, 55, 62, 0}, {153600, 56, 57, 0}, {153600, 57, 61, 0}, {832, 58, 59, 0}, {256, 59, 60, 0},
                   {832, 60, 61, 0},   {153600, 61, 62, 0}, {24576, 62, 69, 0}, {153600, 63, 64, 0}, {153600, 64, 68, 0},
                   {832, 65, 66, 0},   {256, 66, 67, 0},    {832, 67, 68, 0},   {153600, 68, 69, 0}};
    int nt = (int)(sizeof tp / sizeof *tp);
    int exact;
    size_t lb = lw_plan_lower_bound(tp, nt), opt = lw_plan_optimum(tp, nt, 20000000, &exact);
    size_t top = lw_plan_place(tp, nt, LW_PLAN_PEAK);
    CHECK(valid(tp, nt, top), "two peaks: invalid placement");
    size_t bf = lw_plan_place(tp, nt, LW_PLAN_BESTFIT);
    printf("two peaks: peak-first %zu, best-fit %zu, optimum %zu (%s), lower bound %zu bytes\n", top, bf, opt,
           exact ? "exact" : "search budget ran out", lb);
    CHECK(exact && (double)top <= 1.1 * (double)opt, "two peaks: peak-first %zu, optimum %zu", top, opt);
    CHECK(top < bf, "two peaks: peak-first %zu not below best-fit %zu", top, bf);
    CHECK(bf > opt, "two peaks: best-fit %zu reaches the optimum %zu (the case no longer shows the problem)", bf, opt);
  }
  /* lifetimes before the first kernel (position -1, as the lowering gives buffers no kernel
   * writes) and an empty one (first > last): every planner places them, the lower bound counts
   * position -1 (libFuzzer found place_peak indexing its per-position table at -1) */
  {
    lw_buf nb[] = {{64, -1, -1, 0}, {64, -1, -1, 0}, {128, -1, 0, 0}, {32, 0, 1, 0}, {16, 3, 2, 0}};
    int nn = (int)(sizeof nb / sizeof *nb);
    CHECK(lw_plan_lower_bound(nb, nn) == 256, "negative lifetimes: lower bound %zu, expected 256", lw_plan_lower_bound(nb, nn));
    for (int a = 0; a < 3; a++) {
      size_t top = lw_plan_place(nb, nn, (lw_plan_algo)a);
      CHECK(valid(nb, nn, top) && top >= 256, "negative lifetimes: %s placement invalid (%zu)", lw_plan_name((lw_plan_algo)a), top);
    }
  }
  /* an empty plan and a single buffer */
  CHECK(lw_plan_place(b, 0, LW_PLAN_PEAK) == 0, "empty plan");
  b[0] = (lw_buf){.bytes = 128, .first = 0, .last = 0};
  CHECK(lw_plan_place(b, 1, LW_PLAN_PEAK) == 128 && b[0].offset == 0, "one buffer");
  return unit_summary();
}
