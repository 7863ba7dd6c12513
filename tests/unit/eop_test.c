/* eop_test: EOP's estimator and partitioner (tools/partition/eop.c; VEE '22): pattern
 * fitting on synthetic sweeps of each pattern, the paper's Fig. 1 example under every
 * strategy, Eq. 3's gate, key-operator selection, and joint tuning of adjacent operators
 * under the two-queue makespan objective (digest-eop.md §2.4). */
#include <math.h>
#include <stdio.h>

#include "eop.h"
#include "unit.h"

#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

/* an operator whose time on each device is linear through the origin: T_cpu, T_dev for
 * the whole extent D = 100 */
static eop_op lin_op(const char *name, double tcpu, double tdev, int n_pred, const int *pred) {
  eop_op o = {.name = name, .extent = 100, .n_pred = n_pred, .pred = pred};
  o.t[0] = (eop_fit){.kind = EOP_LINEAR, .a = tcpu / 100};
  o.t[1] = (eop_fit){.kind = EOP_LINEAR, .a = tdev / 100};
  o.has[0] = o.has[1] = true;
  return o;
}

static void test_fit(void) {
  double x[64], y[64];
  eop_fit all[3], best;
  int n = 0;
  for (int i = 1; i <= 64; i++, n++) { x[n] = 16.0 * i; y[n] = 0.02 * x[n] + 0.1; }
  eop_fit_samples(x, y, n, all, &best);
  CHECK(best.kind == EOP_LINEAR && best.mape < 1e-6 && NEAR(best.a, 0.02, 1e-9), "linear sweep fitted as %s (MAPE %g)",
        eop_pattern_name(best.kind), best.mape);
  for (int i = 0; i < n; i++) y[i] = 0.5 + 0.3 * ceil(x[i] / 64);
  eop_fit_samples(x, y, n, all, &best);
  CHECK(best.kind == EOP_STAIRCASE && best.mape < 1e-6 && NEAR(best.w, 64, 1e-9), "staircase sweep fitted as %s w %g (MAPE %g)",
        eop_pattern_name(best.kind), best.w, best.mape);
  CHECK(all[EOP_LINEAR].mape > 1, "a line should not fit the steps (MAPE %g)", all[EOP_LINEAR].mape);
  for (int i = 0; i < n; i++) y[i] = 2.0 + ((i * 7919) % 11 - 5) * 0.001; /* constant with +-0.25% noise */
  eop_fit_samples(x, y, n, all, &best);
  CHECK(best.kind == EOP_CONSTANT || fabs(best.a) * x[n - 1] < 0.02, "constant sweep fitted as %s slope %g",
        eop_pattern_name(best.kind), best.a);
  CHECK(best.mape < 0.3, "constant sweep MAPE %g", best.mape);
  CHECK(eop_eval(&best, 0) == 0, "an empty part takes no time");
  CHECK(eop_fit_samples(x, y, 0, all, &best) == -1, "no samples");
}

static void test_fig1(void) {
  /* Fig. 1: Transpose (CPU 2, GPU 2) -> Dense (4, 2) -> Tanh (1.5, 1), no cm */
  static const int p1[] = {0}, p2[] = {1};
  eop_op ops[3] = {lin_op("Transpose", 2, 2, 0, NULL), lin_op("Dense", 4, 2, 1, p1), lin_op("Tanh", 1.5, 1, 1, p2)};
  double al[3], t[EOP_N_STRATEGIES];
  for (int s = 0; s < EOP_N_STRATEGIES; s++) t[s] = eop_plan(ops, 3, 0, EOP_SUM, (eop_strategy)s, al);
  printf("Fig. 1 example (sum of Eq. 2, ms): cpu-only %.3f, device-only %.3f, equal %.3f, fixed %.3f, eop %.3f\n", t[0], t[1],
         t[2], t[3], t[4]);
  CHECK(NEAR(t[EOP_CPU_ONLY], 7.5, 1e-9) && NEAR(t[EOP_DEVICE_ONLY], 5, 1e-9), "unpartitioned %g %g", t[0], t[1]);
  CHECK(NEAR(t[EOP_EQUAL], 3.75, 1e-9), "equal %g (the paper: about 4)", t[EOP_EQUAL]);
  CHECK(NEAR(t[EOP_FIXED], 3.4, 1e-9), "fixed %g (linear scaling, every op split at 0.4/0.6)", t[EOP_FIXED]);
  CHECK(t[EOP_EOP] < t[EOP_FIXED] && t[EOP_EOP] < 3.0, "eop %g should beat fixed", t[EOP_EOP]);
  eop_plan(ops, 3, 0, EOP_SUM, EOP_EOP, al);
  CHECK(NEAR(al[0], 0.5, 1e-9) && NEAR(al[1], 0.33, 1e-9) && NEAR(al[2], 0.4, 1e-9), "eop shares %g %g %g", al[0], al[1], al[2]);
  /* Eq. 3: with a large cm no split pays; every op on its best single device */
  double big = eop_plan(ops, 3, 10, EOP_SUM, EOP_EOP, al);
  CHECK(NEAR(big, 5, 1e-9), "eop with cm 10: %g, expected the device-only 5", big);
  for (int i = 0; i < 3; i++) CHECK(al[i] == 0 || al[i] == 1, "op %d split (%g) though cm is 10", i, al[i]);
}

static void test_key(void) {
  eop_op ops[5] = {lin_op("a", 90, 95, 0, NULL), lin_op("b", 6, 7, 0, NULL), lin_op("c", 2, 3, 0, NULL),
                   lin_op("d", 1, 2, 0, NULL), lin_op("e", 1, 2, 0, NULL)};
  bool key[5];
  int m = eop_key_ops(ops, 5, 0.95, key);
  CHECK(m == 2 && key[0] && key[1] && !key[2], "key operators: %d (expected the 90 and the 6 of 100)", m);
}

static void test_makespan(void) {
  /* two independent operators, each 2 ms on either device, cm 1: splitting one alone does
   * not pay (max(1,1)+1 = 2), but running them on different devices at once does */
  eop_op ops[2] = {lin_op("A", 2, 2, 0, NULL), lin_op("B", 2, 2, 0, NULL)};
  double al[2];
  double sum = eop_plan(ops, 2, 1, EOP_SUM, EOP_EOP, al);
  double mk = eop_plan(ops, 2, 1, EOP_MAKESPAN, EOP_EOP, al);
  CHECK(NEAR(sum, 4, 1e-9), "sum objective %g", sum);
  CHECK(NEAR(mk, 2, 1e-9) && al[0] != al[1], "makespan with joint tuning %g (shares %g %g), expected 2 on two devices", mk,
        al[0], al[1]);
  double cpu = eop_plan(ops, 2, 1, EOP_MAKESPAN, EOP_CPU_ONLY, al);
  CHECK(NEAR(cpu, 4, 1e-9), "cpu-only makespan %g", cpu);
  /* a dependent chain cannot overlap: makespan = sum */
  static const int p0[] = {0};
  eop_op chain[2] = {lin_op("A", 2, 2, 0, NULL), lin_op("B", 2, 2, 1, p0)};
  CHECK(NEAR(eop_plan(chain, 2, 1, EOP_MAKESPAN, EOP_EOP, al), 4, 1e-9), "a chain overlaps nothing");
  /* an operator the device cannot run stays on the CPU in every strategy */
  eop_op one[1] = {lin_op("X", 3, 1, 0, NULL)};
  one[0].has[1] = false;
  for (int s = 0; s < EOP_N_STRATEGIES; s++) {
    double t = eop_plan(one, 1, 0, EOP_MAKESPAN, (eop_strategy)s, al);
    CHECK(NEAR(t, 3, 1e-9) && al[0] == 1, "%s put a CPU-only op on the device (%g, share %g)", eop_strategy_name((eop_strategy)s),
          t, al[0]);
  }
}

int main(void) {
  test_fit();
  test_fig1();
  test_key();
  test_makespan();
  return unit_summary();
}
