/* Unit test of the layout-selection solvers (tools/lower/layout.c; GCD², Niu dissertation
 * §4.4.1-4.4.2) against exhaustive search on seeded random problems:
 *   - chains (GCD² Eq. 4.2): the frontier DP and the partition heuristic are both exact;
 *   - random DAGs with a small frontier: the DP is exact (it says so) and equals the optimum;
 *   - residual-style DAGs and random DAGs: the partition heuristic's cost is the cost of the
 *     choice it returns and never below the optimum; every solver's reported cost equals
 *     lw_lsel_cost of its choice; the local choice is never below the optimum;
 *   - impossible layouts (INFINITY) are never chosen.
 * Costs are random, transforms cost 0 on the diagonal. Prints "N passed, M failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

static int n_pass, n_fail;
static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 20);
}
static double rc(void) { return (rnd() % 1000) / 10.0; }

static void expect(int ok, const char *what, int t, double got, double want) {
  if (ok) n_pass++;
  else {
    n_fail++;
    printf("FAIL %s (case %d): got %.6f want %.6f\n", what, t, got, want);
  }
}

/* kind 0: chain; 1: residual blocks (v -> v+1, and v -> v+3 every third); 2: random DAG */
static void one(int t, int kind, int nv, int k) {
  int src[64], dst[64], ne = 0;
  for (int v = 0; v + 1 < nv; v++) {
    if (kind == 2 && rnd() % 4 == 0) continue;
    src[ne] = v, dst[ne++] = v + 1;
  }
  if (kind == 1)
    for (int v = 0; v + 3 < nv; v += 3) src[ne] = v, dst[ne++] = v + 3;
  if (kind == 2)
    for (int i = 0; i < nv / 2 && ne < 64; i++) {
      int a = (int)(rnd() % nv), b = (int)(rnd() % nv);
      if (a == b) continue;
      if (a > b) { int x = a; a = b; b = x; }
      src[ne] = a, dst[ne++] = b;
    }
  double cost[64 * 4], tc[64 * 16];
  for (int i = 0; i < nv * k; i++) cost[i] = rc();
  if (rnd() % 2) cost[(rnd() % nv) * k + 1 + rnd() % (k - 1)] = INFINITY; /* an unsupported layout */
  for (int e = 0; e < ne; e++)
    for (int a = 0; a < k; a++)
      for (int b = 0; b < k; b++) tc[(e * k + a) * k + b] = a == b ? 0 : rc() * 0.5;
  lw_lsel P = {nv, k, cost, ne, src, dst, tc};
  int opt[64], dp[64], gc[64], loc[64], exact = 0, nd = 0, nc = 0;
  double o = lw_lsel_brute(&P, opt);
  double d = lw_lsel_dp(&P, 1 << 12, dp, &exact);
  double g = lw_lsel_gcd2(&P, 4, gc, &nd, &nc);
  double l = lw_lsel_local(&P, loc);
  const char *kn[] = {"chain", "residual", "dag"};
  char w[128];
  snprintf(w, sizeof w, "%s nv=%d k=%d: dp exact and optimal", kn[kind], nv, k);
  expect(exact && fabs(d - o) < 1e-9, w, t, d, o);
  snprintf(w, sizeof w, "%s nv=%d k=%d: dp cost is its choice's", kn[kind], nv, k);
  expect(fabs(d - lw_lsel_cost(&P, dp)) < 1e-9, w, t, d, lw_lsel_cost(&P, dp));
  snprintf(w, sizeof w, "%s nv=%d k=%d: gcd2 cost is its choice's, >= optimum", kn[kind], nv, k);
  expect(g >= o - 1e-9 && fabs(g - lw_lsel_cost(&P, gc)) < 1e-9, w, t, g, o);
  if (kind == 0) {
    snprintf(w, sizeof w, "chain nv=%d k=%d: gcd2 exact (every cut dominant)", nv, k);
    expect(fabs(g - o) < 1e-9 && nc == 0, w, t, g, o);
  }
  snprintf(w, sizeof w, "%s nv=%d k=%d: local >= optimum", kn[kind], nv, k);
  expect(l >= o - 1e-9, w, t, l, o);
  snprintf(w, sizeof w, "%s nv=%d k=%d: optimum finite, no impossible layout chosen", kn[kind], nv, k);
  expect(isfinite(o) && isfinite(d) && isfinite(g), w, t, d, o);
}

int main(void) {
  int t = 0;
  for (int r = 0; r < 60; r++) one(t++, 0, 1 + (int)(rnd() % 10), 2 + (int)(rnd() % 3));
  for (int r = 0; r < 60; r++) one(t++, 1, 2 + (int)(rnd() % 9), 2 + (int)(rnd() % 3));
  for (int r = 0; r < 80; r++) one(t++, 2, 2 + (int)(rnd() % 9), 2 + (int)(rnd() % 2));
  /* a case where local is strictly worse: two vertices prefer layout 1 alone, but the
   * transform into and out of it costs more than it saves */
  {
    double cost[] = {1, 9, 5, 4, 1, 9}, tc[] = {0, 10, 10, 0, 0, 10, 10, 0};
    int src[] = {0, 1}, dst[] = {1, 2}, c[3], exact;
    lw_lsel P = {3, 2, cost, 2, src, dst, tc};
    double l = lw_lsel_local(&P, c), d = lw_lsel_dp(&P, 16, c, &exact);
    expect(l == 26 && d == 7 && c[1] == 0, "local 1+4+1 + 2 transforms = 26, global 1+5+1 = 7", t++, d, 7);
  }
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
