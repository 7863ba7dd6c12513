/* Shared by the runtime unit tests (rt_test.c, rt_port_test.c): a seeded xorshift
 * generator and random activations. Include after ecg_rt.h, once per test program. */
#ifndef RT_TESTUTIL_H
#define RT_TESTUTIL_H
#include <stdint.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
/* 32 random bits (xorshift64). */
static uint32_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}
/* Uniform integer in [lo, hi]. */
static int ri(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }
/* Uniform float in [-1, 1] on a 1e-4 grid. */
static float rf(void) { return (float)((rnd() % 20001) / 10000.0 - 1.0); }
/* A random fused activation (every kind; Clip [-0.5, 0.7], LeakyRelu 0.1). */
static ecg_act rand_act(void) {
  ecg_act a = {(ecg_act_kind)ri(0, 6), 0, 0};
  if (a.kind == ECG_ACT_CLIP) { a.a = -0.5f; a.b = 0.7f; }
  if (a.kind == ECG_ACT_LEAKY) a.a = 0.1f;
  return a;
}
#endif
