/* ecg runtime: packed SGEMM and convolution (see ecg_rt.h for the contracts).
 *
 * GEMM design (BLIS/MLAS style):
 *   micro-kernel  MR x NR, C tile kept in registers: 8 x 48 with AVX-512F (24 zmm
 *                 accumulators; edge tiles use 1..8 rows and 1..3 vectors, masked stores),
 *                 else 6 x 16 (AVX2+FMA: 12 ymm accumulators; portable C the same shape);
 *   A panels      MR rows x kc, interleaved [k][MR] (weights of a conv: prepacked, full K);
 *   B panels      kc x NR columns, [k][NR]         (prepacked weights, packed per block,
 *                 packed straight from the NCHW input by implicit im2col, or read in place
 *                 with a row stride for 1x1 convs);
 *   blocking      kc = 256 (B micro-panel 16 KiB, or 48 KiB for NR = 48: kc 128..384 measured
 *                 the same on Zen 5), tiles of mc <= 240 rows x
 *                 nc <= 192 columns (A block and B block in L2), tile shape chosen by a
 *                 small cost model so the tile count balances across threads;
 *   epilogue      alpha/beta, bias (per row or per column) and activation applied to each
 *                 tile right after its last k block, while it is in L1 (AVX-512: in the
 *                 micro-kernel's registers, before the store).
 *   transposed    convs on small planes with many channels (7x7, 14x14: conv_swap) run as
 *                 Y^T = X_col^T W^T: positions are the micro-kernel's rows, channels its
 *                 columns (no mostly empty column panel for 49 = 48 + 1 positions), the
 *                 X_col^T block packed once per tile of all 512 channels, the C^T tile
 *                 stored back transposed.
 *   Winograd      3x3 stride-1 convs (dilated ones as dh*dw phases) as F(4x4, 3x3): 36
 *                 GEMMs [m, c] x [c, tiles] per band of output tiles on the same
 *                 micro-kernels (section "Winograd" below).
 * Threads: one OpenMP loop over all tiles of all (image, group) GEMMs of a call.
 */
#include "ecg_rt.h"
#include "ecg_pool.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#define ECG_PRAGMA(x) _Pragma(#x)
#else
#define ECG_PRAGMA(x)
#endif

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ECG_AVX2 1
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#define ECG_AVX512 1
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "ecg_neon.h" /* NEON micro-kernel, depthwise row, exp; tile parameters */
#define ECG_NEON 1
#endif

#ifdef ECG_AVX512
/* 8 x 48 micro-kernel: 24 zmm accumulators; 8 divides the channel counts of nearly every
 * conv, so the weight panels carry no padding rows. */
#define MR 8
#define NR 48
#define KC 256
#define MCMAX 240 /* multiple of MR */
#define NCMAX 192 /* multiple of NR */
#elif defined(ECG_NEON)
#define MR ECG_NEON_MR
#define NR ECG_NEON_NR
#define KC ECG_NEON_KC
#define MCMAX ECG_NEON_MCMAX
#define NCMAX ECG_NEON_NCMAX
#else
#define MR 6
#define NR 16
#define KC 256
#define MCMAX 240 /* multiple of MR */
#define NCMAX 192 /* multiple of NR */
#endif

static inline int imin(int a, int b) { return a < b ? a : b; }
static inline int imax(int a, int b) { return a > b ? a : b; }
static inline int cdiv(int a, int b) { return (a + b - 1) / b; }

/* Bytes of this core's L2 (sysconf; 1 MiB where it does not say): the Winograd band rows
 * and ibr16's bands size from it. Read on every call, not cached: a cache would be the
 * runtime's one mutable global (the runtime keeps none, runtime.bats), and glibc answers
 * from the CPU features it read at start-up (4.3 ns a call on glibc 2.36, Zen 4). */
static long l2_cache_bytes(void) {
  long l2 = 0;
#ifdef _SC_LEVEL2_CACHE_SIZE
  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return l2 > 0 ? l2 : 1L << 20;
}

/* Whether the micro-kernel may read B in place (B_DIRECT) from rows ldb floats apart, K of
 * them: a stride that is no multiple of 256 bytes spreads the rows over the L1 sets; one
 * that is cycles them over 64 / gcd(64, lines per row mod 64) sets, and a KC-row panel
 * thrashes the L1 (12 ways) once more than 8 of its rows share a set. 8 or fewer do not,
 * from 32 rows on (rt_test --bench, 1 thread, 2 rounds, against packing B): mobilenet_v2's
 * 96x56x56 -> 24 1x1 conv (16 sets) 129-130 -> 150-153 GFLOP/s, 32x112x112 -> 16 (4 sets)
 * 94 -> 98-114 (oneDNN: 131 in its blocked layout); with 16 and 24 rows (16x112x112 -> 96,
 * 24x56x56 -> 144) in place measured the same or up to 9% slower at 2 threads, so those
 * stay packed. */
static int b_direct_ok(long ldb, int K) {
  if (ldb % 64) return 1;
  if (K < 32) return 0;
  int a = 64, b = (int)((ldb / 16) % 64); /* a = gcd(64, lines per row mod 64) */
  while (b) { int t = a % b; a = b; b = t; }
  return cdiv(imin(K, KC), 64 / a) <= 8;
}

static int ecg_threads(void) {
#ifdef _OPENMP
  if (omp_in_parallel()) return 1;
  return imax(1, omp_get_max_threads());
#else
  return 1;
#endif
}
static int ecg_tid(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}
/* Threads of the current team (1 outside a parallel region or without OpenMP). */
static int ecg_team_size(void) {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

/* ------------------------------------------------------------------ activation */

/* Sigmoid and SiLU in vector registers: s = 1 / (1 + e), e = exp(-x) = 2^n * p(r) with
 * x clamped to [-88, 88] (e stays finite; sigmoid(-88) is 6e-39, below what float32
 * sums resolve), n = round(-x log2 e), r = -x - n ln2 by Cody-Waite's two-constant
 * reduction (|r| <= ln2/2), p a degree-5 polynomial interpolating exp at Chebyshev nodes
 * of [-0.347, 0.347] (max relative error of e 2.3e-7 over [-87, 88], measured in float32
 * arithmetic), then the reciprocal as the hardware estimate plus one Newton step
 * (relative error about 2^-22 with the 12-bit AVX2 estimate, below 1e-7 with AVX-512's
 * 14-bit one) instead of a division. A NaN input gives NaN (the clamps keep it: maxps and
 * minps return their second operand when either is NaN). Horner on t = x + n ln2 = -r
 * with the odd coefficients negated. */
#define ECG_SIG_C0 1.000000119e+00f
#define ECG_SIG_C1 (-1.000000000e+00f)
#define ECG_SIG_C2 4.999885559e-01f
#define ECG_SIG_C3 (-1.666650325e-01f)
#define ECG_SIG_C4 4.191895947e-02f
#define ECG_SIG_C5 (-8.369355462e-03f)
#define ECG_LOG2E 1.44269504088896341f
#define ECG_LN2_HI 0.693359375f
#define ECG_LN2_LO (-2.12194440e-4f)

#if defined(ECG_AVX2) && !defined(ECG_AVX512) /* the AVX-512 build applies activations with act512_apply */
/* 1 / (1 + exp(-v)) on 8 lanes (see above). */
static inline __m256 sigmoid256(__m256 v) {
  const __m256 x = _mm256_min_ps(_mm256_set1_ps(88.f), _mm256_max_ps(_mm256_set1_ps(-88.f), v));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(-ECG_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 t = _mm256_fmadd_ps(n, _mm256_set1_ps(ECG_LN2_HI), x);
  t = _mm256_fmadd_ps(n, _mm256_set1_ps(ECG_LN2_LO), t);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(ECG_SIG_C5), t, _mm256_set1_ps(ECG_SIG_C4));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(ECG_SIG_C3));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(ECG_SIG_C2));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(ECG_SIG_C1));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(ECG_SIG_C0));
  /* 2^n for n in [-127, 127]: the exponent field n + 127 (n = -127 gives 0: e underflows to 0) */
  const __m256i en = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 d = _mm256_fmadd_ps(p, _mm256_castsi256_ps(en), _mm256_set1_ps(1.f));
  const __m256 r0 = _mm256_rcp_ps(d);
  return _mm256_fmadd_ps(r0, _mm256_fnmadd_ps(d, r0, _mm256_set1_ps(1.f)), r0);
}
#endif

#ifdef ECG_AVX512
static void act512_apply(ecg_act act, float *x, size_t n);
#endif

void ecg_rt1_act_apply(ecg_act act, float *x, size_t n) {
  size_t i = 0;
  if (act.kind == ECG_ACT_FN) {
    act.fn(x, n, act.arg);
    return;
  }
#ifdef ECG_AVX512
  if (act.kind != ECG_ACT_NONE) {
    act512_apply(act, x, n);
    return;
  }
#elif defined(ECG_AVX2)
  if (act.kind == ECG_ACT_SIGMOID || act.kind == ECG_ACT_SILU) {
    for (; i + 8 <= n; i += 8) {
      __m256 v = _mm256_loadu_ps(x + i), s = sigmoid256(v);
      _mm256_storeu_ps(x + i, act.kind == ECG_ACT_SILU ? _mm256_mul_ps(v, s) : s);
    }
  }
#endif
#ifdef ECG_NEON
  if (act.kind == ECG_ACT_SIGMOID || act.kind == ECG_ACT_SILU) {
    i = n & ~(size_t)3;
    ecg_neon_sigmoid(x, i, act.kind == ECG_ACT_SILU);
  }
#endif
  switch (act.kind) {
  case ECG_ACT_NONE: case ECG_ACT_FN: break;
  case ECG_ACT_RELU:
    for (i = 0; i < n; i++) x[i] = x[i] > 0.f ? x[i] : 0.f;
    break;
  case ECG_ACT_CLIP: {
    float lo = act.a, hi = act.b;
    for (i = 0; i < n; i++) {
      float v = x[i] < lo ? lo : x[i];
      x[i] = v > hi ? hi : v;
    }
    break;
  }
  case ECG_ACT_LEAKY: {
    float al = act.a;
    for (i = 0; i < n; i++) x[i] = x[i] < 0.f ? al * x[i] : x[i];
    break;
  }
  case ECG_ACT_SIGMOID:
    for (; i < n; i++) x[i] = 1.f / (1.f + expf(-x[i]));
    break;
  case ECG_ACT_HARDSWISH:
    for (i = 0; i < n; i++) {
      float t = x[i] * (1.f / 6.f) + 0.5f;
      t = t < 0.f ? 0.f : t;
      t = t > 1.f ? 1.f : t;
      x[i] = x[i] * t;
    }
    break;
  case ECG_ACT_SILU:
    for (; i < n; i++) x[i] = x[i] / (1.f + expf(-x[i]));
    break;
  }
}

/* ------------------------------------------------------------------ micro-kernel */

#ifdef ECG_AVX512
#define ECG_AI static inline __attribute__((always_inline))

/* 1 / (1 + exp(-v)) on 16 lanes, as sigmoid256 (section "activation"), with the exact
 * power of two of vscalefps and the 14-bit reciprocal estimate. */
ECG_AI __m512 sigmoid512(__m512 v) {
  const __m512 x = _mm512_min_ps(_mm512_set1_ps(88.f), _mm512_max_ps(_mm512_set1_ps(-88.f), v));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(-ECG_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 t = _mm512_fmadd_ps(n, _mm512_set1_ps(ECG_LN2_HI), x);
  t = _mm512_fmadd_ps(n, _mm512_set1_ps(ECG_LN2_LO), t);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(ECG_SIG_C5), t, _mm512_set1_ps(ECG_SIG_C4));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(ECG_SIG_C3));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(ECG_SIG_C2));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(ECG_SIG_C1));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(ECG_SIG_C0));
  const __m512 d = _mm512_add_ps(_mm512_scalef_ps(p, n), _mm512_set1_ps(1.f));
  const __m512 r0 = _mm512_rcp14_ps(d);
  return _mm512_fmadd_ps(r0, _mm512_fnmadd_ps(d, r0, _mm512_set1_ps(1.f)), r0);
}

/* act applied to 16 lanes: the results of the scalar loops of ecg_rt1_act_apply (NaN
 * included), Sigmoid and SiLU within about 3e-7 relative (sigmoid512). */
ECG_AI __m512 act512(ecg_act act, __m512 v) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.f);
  switch (act.kind) {
  case ECG_ACT_NONE: return v;
  case ECG_ACT_RELU: return _mm512_max_ps(v, zero); /* NaN -> 0, as x > 0 ? x : 0 */
  case ECG_ACT_CLIP: return _mm512_min_ps(_mm512_set1_ps(act.b), _mm512_max_ps(_mm512_set1_ps(act.a), v));
  case ECG_ACT_LEAKY:
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, _mm512_set1_ps(act.a));
  case ECG_ACT_SIGMOID: return sigmoid512(v);
  case ECG_ACT_HARDSWISH: {
    __m512 t = _mm512_fmadd_ps(v, _mm512_set1_ps(1.f / 6.f), _mm512_set1_ps(0.5f));
    t = _mm512_min_ps(_mm512_max_ps(t, zero), one);
    return _mm512_mul_ps(v, t);
  }
  case ECG_ACT_SILU: return _mm512_mul_ps(v, sigmoid512(v));
  case ECG_ACT_FN: return v; /* applied to the stored row (k512) */
  }
  return v;
}

/* act512 out of line: for kernels that apply an activation rarely enough (once per stored
 * vector of a row) that inlining every kind into them is not worth the code. */
static __attribute__((noinline)) __m512 act512_call(ecg_act act, __m512 v) { return act512(act, v); }

/* x[0..n) = act(x), 16 lanes at a time, the tail masked; kind is a constant at each call
 * site so act512 is specialised. */
ECG_AI void act512_loop(const ecg_act_kind kind, ecg_act act, float *x, size_t n) {
  act.kind = kind;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, act512(act, _mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(x + i, m, act512(act, _mm512_maskz_loadu_ps(m, x + i)));
  }
}
/* ecg_rt1_act_apply for every kind but ECG_ACT_NONE and ECG_ACT_FN. */
static void act512_apply(ecg_act act, float *x, size_t n) {
  switch (act.kind) {
  case ECG_ACT_RELU: act512_loop(ECG_ACT_RELU, act, x, n); break;
  case ECG_ACT_CLIP: act512_loop(ECG_ACT_CLIP, act, x, n); break;
  case ECG_ACT_LEAKY: act512_loop(ECG_ACT_LEAKY, act, x, n); break;
  case ECG_ACT_SIGMOID: act512_loop(ECG_ACT_SIGMOID, act, x, n); break;
  case ECG_ACT_HARDSWISH: act512_loop(ECG_ACT_HARDSWISH, act, x, n); break;
  case ECG_ACT_SILU: act512_loop(ECG_ACT_SILU, act, x, n); break;
  case ECG_ACT_NONE: case ECG_ACT_FN: break;
  }
}

/* Epilogue fused into the micro-kernel's store (only after the last k block). */
typedef struct {
  const float *bias_m; /* bias of the tile's first row, or NULL */
  const float *bias_n; /* bias of the tile's first column, or NULL */
  ecg_act act;
} ep_t;

static inline __mmask16 tail_mask(int n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u); }
/* p + off as an address only (masked loads may start outside the array they read). */
static inline const float *fptr(const float *p, ptrdiff_t off) {
  return (const float *)((uintptr_t)p + (intptr_t)off * (intptr_t)sizeof(float));
}
/* Lanes l of a 16-float load at input column base with 0 <= base + l < w. */
static inline __mmask16 col_mask(int base, int w) {
  int lo = imax(0, -base), hi = imin(16, w - base);
  if (hi <= lo) return 0;
  return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* c[mr, nr] (row stride ldc) = ep(alpha * sum_k a[k*MR + i] * b[k*bs + j] + beta * c),
 * nv = ceil(nr/16) vectors per row; c is not read when beta == 0; columns >= nr untouched.
 * b must be readable for nv*16 columns per row. */
/* Tiles of at most ECG_PF_ROWS rows prefetch b ECG_PF_DIST rows ahead: with few rows, b is
 * the stream (a swapped conv's weights on a plane of a few positions: resnet18 at 56x56,
 * layer4's 3x3 convs on 2x2, 9.4 MB of weights each, 0.60 -> 0.41 ms, 15.7 -> 23 GB/s of
 * the 27 a plain read loop gets), and the hardware prefetcher alone left it short; wider
 * tiles are bound by their FMAs. Distances 8, 16 and 32 and rows <= 8 measured the same
 * (resnet18 and mnasnet1_0 at 56x56, 3 interleaved rounds); no prefetch was 7-12% slower. */
#ifndef ECG_PF_ROWS
#define ECG_PF_ROWS 4
#endif
#ifndef ECG_PF_DIST
#define ECG_PF_DIST 16
#endif
/* The A panel (a conv's prepacked weights, MR floats per k, read once per tile from memory
 * inside a model) is prefetched ECG_PF_A floats (4 KB, 128 k) ahead, one line per two k:
 * squeezenet1_1's classifier (1x1, 512 -> 1000 on 13x13, 2 MB of weights) with the caches
 * flushed before each run 1318-1349 -> 1227-1264 us, hot unchanged (1 thread); end to end
 * (Xeon model 167, interleaved rounds, medians, 1 / 2 threads) squeezenet1_1 6.05 -> 5.55 /
 * 3.87 -> 3.62 ms, resnet18 (Winograd's transformed weights) 23.1 -> 21.1 / 11.9 -> 11.5,
 * mnasnet1_0, mobilenet_v2 and efficientnet_b0 within the noise. */
#ifndef ECG_PF_A
#define ECG_PF_A 1024
#endif
/* k512's store of the tile acc [mr][nv] into c (row stride ldc, the last vector masked by
 * lm): + bias_m[i] per row (bm may be NULL), then act512 with the kind a constant at each
 * call (ECG_ACT_NONE, ECG_ACT_RELU or ECG_ACT_CLIP, its bounds from act). */
ECG_AI void k512_store(const int mr, const int nv, const ecg_act_kind kind, __m512 acc[][3], float *restrict c,
                       ptrdiff_t ldc, __mmask16 lm, const float *bm, ecg_act act) {
  act.kind = kind;
#pragma GCC unroll 8
  for (int i = 0; i < mr; i++) {
    float *cr = c + (size_t)i * ldc;
    const __m512 bi = bm ? _mm512_set1_ps(bm[i]) : _mm512_setzero_ps();
#pragma GCC unroll 3
    for (int v = 0; v < nv; v++) {
      const __m512 x = act512(act, _mm512_add_ps(acc[i][v], bi));
      if (v < nv - 1) _mm512_storeu_ps(cr + 16 * v, x);
      else _mm512_mask_storeu_ps(cr + 16 * v, lm, x);
    }
  }
}
ECG_AI void k512(const int mr, const int nv, int kc, const float *restrict a, const float *restrict b,
                 ptrdiff_t bs, float *restrict c, ptrdiff_t ldc, int nr, float alpha, float beta,
                 const ep_t *ep) {
  __m512 acc[MR][3];
#pragma GCC unroll 8
  for (int i = 0; i < mr; i++)
#pragma GCC unroll 3
    for (int v = 0; v < nv; v++) acc[i][v] = _mm512_setzero_ps();
  for (int k = 0; k < kc; k++) {
    __m512 bv[3];
    if (mr <= ECG_PF_ROWS)
#pragma GCC unroll 3
      for (int v = 0; v < nv; v++) _mm_prefetch((const char *)(b + ECG_PF_DIST * bs + 16 * v), _MM_HINT_T0);
#pragma GCC unroll 3
    for (int v = 0; v < nv; v++) bv[v] = _mm512_loadu_ps(b + 16 * v);
    if (!(k & 1)) _mm_prefetch((const char *)(a + ECG_PF_A), _MM_HINT_T0);
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++) {
      __m512 t = _mm512_set1_ps(a[i]);
#pragma GCC unroll 3
      for (int v = 0; v < nv; v++) acc[i][v] = _mm512_fmadd_ps(t, bv[v], acc[i][v]);
    }
    a += MR;
    b += bs;
  }
  const __mmask16 lm = tail_mask(nr - 16 * (nv - 1));
  /* the common epilogue, a conv's C = act(AB + bias per row) with act none, Relu or Clip:
   * its tests made once per tile, not once per vector (rt_test --bench, 1 thread, GFLOP/s:
   * squeezenet1_1's 1x1 16x55x55->64 81 -> 100, 32x27x27->128 96 -> 108; mobilenet_v2's
   * 16x112x112->96 79 -> 95, 24x56x56->144 89 -> 104: small-K tiles spend the most on their
   * stores). SiLU and the other kinds stay per vector below: applying them to the stored
   * rows instead measured 53 -> 52 on efficientnet_b0's 16x112x112->96 SiLU conv. */
  const int kind = ep ? ep->act.kind : ECG_ACT_NONE;
  if (alpha == 1.f && beta == 0.f && (!ep || !ep->bias_n) &&
      (kind == ECG_ACT_NONE || kind == ECG_ACT_FN || kind == ECG_ACT_RELU || kind == ECG_ACT_CLIP)) {
    const float *bm = ep ? ep->bias_m : NULL;
    const ecg_act act = ep ? ep->act : (ecg_act){ECG_ACT_NONE, 0, 0, NULL, NULL};
    if (kind == ECG_ACT_RELU) k512_store(mr, nv, ECG_ACT_RELU, acc, c, ldc, lm, bm, act);
    else if (kind == ECG_ACT_CLIP) k512_store(mr, nv, ECG_ACT_CLIP, acc, c, ldc, lm, bm, act);
    else k512_store(mr, nv, ECG_ACT_NONE, acc, c, ldc, lm, bm, act); /* an ECG_ACT_FN epilogue runs later */
    return;
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int i = 0; i < mr; i++) {
    float *cr = c + (size_t)i * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < nv; v++) {
      const __mmask16 m = v == nv - 1 ? lm : (__mmask16)0xFFFF;
      __m512 x = acc[i][v];
      if (alpha != 1.f) x = _mm512_mul_ps(x, va);
      if (beta == 1.f) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, cr + 16 * v));
      else if (beta != 0.f) x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, cr + 16 * v), x);
      if (ep) {
        if (ep->bias_m) x = _mm512_add_ps(x, _mm512_set1_ps(ep->bias_m[i]));
        if (ep->bias_n) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, ep->bias_n + 16 * v));
        x = act512(ep->act, x);
      }
      if (m == 0xFFFF) _mm512_storeu_ps(cr + 16 * v, x);
      else _mm512_mask_storeu_ps(cr + 16 * v, m, x);
    }
  }
}

#define ECG_K512(r, v)                                                                           \
  static void k512_##r##_##v(int kc, const float *a, const float *b, ptrdiff_t bs, float *c,     \
                             ptrdiff_t ldc, int nr, float alpha, float beta, const ep_t *ep) {   \
    k512(r, v, kc, a, b, bs, c, ldc, nr, alpha, beta, ep);                                       \
  }
#define ECG_K512R(r) ECG_K512(r, 1) ECG_K512(r, 2) ECG_K512(r, 3)
ECG_K512R(1) ECG_K512R(2) ECG_K512R(3) ECG_K512R(4) ECG_K512R(5) ECG_K512R(6) ECG_K512R(7) ECG_K512R(8)
#undef ECG_K512R
#undef ECG_K512
typedef void (*k512_fn)(int, const float *, const float *, ptrdiff_t, float *, ptrdiff_t, int, float, float,
                        const ep_t *);
static const k512_fn k512_tab[MR][3] = {
    {k512_1_1, k512_1_2, k512_1_3}, {k512_2_1, k512_2_2, k512_2_3}, {k512_3_1, k512_3_2, k512_3_3},
    {k512_4_1, k512_4_2, k512_4_3}, {k512_5_1, k512_5_2, k512_5_3}, {k512_6_1, k512_6_2, k512_6_3},
    {k512_7_1, k512_7_2, k512_7_3}, {k512_8_1, k512_8_2, k512_8_3}};
#elif defined(ECG_NEON)
#define ecg_kern ecg_neon_kern_8x12 /* ecg_neon.h */
#else
#define ecg_kern kern_6x16
/* c[6,16] (row stride ldc) = alpha * sum_k a[k*6 + i] * b[k*bs + j] + beta * c
 * (c not read when beta == 0). */
static void kern_6x16(int kc, const float *restrict a, const float *restrict b, ptrdiff_t bs,
                      float *restrict c, ptrdiff_t ldc, float alpha, float beta) {
#ifdef ECG_AVX2
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
#define ECG_K1                                                                                  \
  do {                                                                                          \
    __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), t;                             \
    t = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(t, b0, c00); c01 = _mm256_fmadd_ps(t, b1, c01); \
    t = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(t, b0, c10); c11 = _mm256_fmadd_ps(t, b1, c11); \
    t = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(t, b0, c20); c21 = _mm256_fmadd_ps(t, b1, c21); \
    t = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(t, b0, c30); c31 = _mm256_fmadd_ps(t, b1, c31); \
    t = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(t, b0, c40); c41 = _mm256_fmadd_ps(t, b1, c41); \
    t = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(t, b0, c50); c51 = _mm256_fmadd_ps(t, b1, c51); \
    a += 6;                                                                                     \
    b += bs;                                                                                    \
  } while (0)
  int k = 0;
  for (; k + 4 <= kc; k += 4) {
    _mm_prefetch((const char *)(b + 8 * bs), _MM_HINT_T0);
    ECG_K1;
    ECG_K1;
    ECG_K1;
    ECG_K1;
  }
  for (; k < kc; k++) ECG_K1;
#undef ECG_K1
  __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#define ECG_ST(i, x0, x1)                                                                  \
  do {                                                                                     \
    float *cr = c + (i) * ldc;                                                             \
    if (alpha != 1.f) { x0 = _mm256_mul_ps(x0, va); x1 = _mm256_mul_ps(x1, va); }            \
    if (beta == 1.f) {                                                                     \
      x0 = _mm256_add_ps(x0, _mm256_loadu_ps(cr)); x1 = _mm256_add_ps(x1, _mm256_loadu_ps(cr + 8)); \
    } else if (beta != 0.f) {                                                              \
      x0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr), x0);                                   \
      x1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr + 8), x1);                               \
    }                                                                                      \
    _mm256_storeu_ps(cr, x0);                                                              \
    _mm256_storeu_ps(cr + 8, x1);                                                          \
  } while (0)
  ECG_ST(0, c00, c01);
  ECG_ST(1, c10, c11);
  ECG_ST(2, c20, c21);
  ECG_ST(3, c30, c31);
  ECG_ST(4, c40, c41);
  ECG_ST(5, c50, c51);
#undef ECG_ST
#else
  float acc[MR][NR];
  memset(acc, 0, sizeof acc);
  for (int k = 0; k < kc; k++) {
    for (int i = 0; i < MR; i++) {
      float ai = a[i];
      for (int j = 0; j < NR; j++) acc[i][j] += ai * b[j];
    }
    a += MR;
    b += bs;
  }
  for (int i = 0; i < MR; i++) {
    float *cr = c + i * ldc;
    for (int j = 0; j < NR; j++) {
      float v = alpha * acc[i][j];
      cr[j] = beta == 0.f ? v : v + beta * cr[j];
    }
  }
#endif
}

#endif /* ECG_AVX512 */

const char *ecg_rt1_gemm_kernel_name(void) {
#if defined(ECG_AVX512)
  return "avx512-8x48";
#elif defined(ECG_AVX2)
  return "avx2-6x16";
#elif defined(ECG_NEON)
  return "neon-8x12";
#else
  return "c-6x16";
#endif
}

/* ------------------------------------------------------------------ packing */

/* op(A) rows [i0, i0+mc) x k [k0, k0+kc) -> panels of MR rows: dst[q*kc*MR + k*MR + i]. */
static void pack_a(int transA, const float *A, int lda, int i0, int mc, int k0, int kc, float *dst) {
  for (int ip = 0; ip < mc; ip += MR) {
    int mr = imin(MR, mc - ip);
    float *d = dst + (size_t)(ip / MR) * kc * MR;
    if (!transA) {
      for (int i = 0; i < mr; i++) {
        const float *s = A + (size_t)(i0 + ip + i) * lda + k0;
        for (int k = 0; k < kc; k++) d[k * MR + i] = s[k];
      }
      for (int i = mr; i < MR; i++)
        for (int k = 0; k < kc; k++) d[k * MR + i] = 0.f;
    } else {
      for (int k = 0; k < kc; k++) {
        const float *s = A + (size_t)(k0 + k) * lda + i0 + ip;
        int i = 0;
        for (; i < mr; i++) d[k * MR + i] = s[i];
        for (; i < MR; i++) d[k * MR + i] = 0.f;
      }
    }
  }
}

/* op(B) k [k0, k0+kc) x columns [j0, j0+nc) -> panels of NR columns: dst[p*kc*NR + k*NR + j]. */
static void pack_b(int transB, const float *B, int ldb, int k0, int kc, int j0, int nc, float *dst) {
  for (int jp = 0; jp < nc; jp += NR) {
    int nr = imin(NR, nc - jp);
    float *d = dst + (size_t)(jp / NR) * kc * NR;
    if (!transB) {
      for (int k = 0; k < kc; k++) {
        const float *s = B + (size_t)(k0 + k) * ldb + j0 + jp;
        float *dk = d + (size_t)k * NR;
        if (nr == NR) {
          memcpy(dk, s, NR * sizeof(float));
        } else {
          int j = 0;
          for (; j < nr; j++) dk[j] = s[j];
          for (; j < NR; j++) dk[j] = 0.f;
        }
      }
    } else {
      for (int j = 0; j < nr; j++) {
        const float *s = B + (size_t)(j0 + jp + j) * ldb + k0;
        for (int k = 0; k < kc; k++) d[(size_t)k * NR + j] = s[k];
      }
      for (int j = nr; j < NR; j++)
        for (int k = 0; k < kc; k++) d[(size_t)k * NR + j] = 0.f;
    }
  }
}

/* Implicit im2col: the B matrix of a conv is X_col[k = (ci, ki, kj), j = (oy, ox)]. */
typedef struct {
  const float *x; /* first input channel of this image and group, [cg, h, w] */
  int h, w, kh, kw, sh, sw, dh, dw, pt, pl, ow;
} conv_src;

/* X_col rows k [k0, k0+kc) x columns j [j0, j0+nc) -> panels of pw columns:
 * dst[p*kc*pw + k*pw + j], columns past nc zero. pw = NR gives B panels (C = W * X_col);
 * pw = MR gives A panels of X_col^T (the transposed product of conv_swap). */
static void pack_b_conv(const conv_src *s, int k0, int kc, int j0, int nc, float *dst, const int pw) {
  const int h = s->h, w = s->w, kw = s->kw, khw = s->kh * s->kw, ow = s->ow, sw = s->sw;
  const int npan = cdiv(nc, pw);
  const int oy0 = j0 / ow, ox0 = j0 % ow;
  for (int k = 0; k < kc; k++) {
    int kk = k0 + k, ci = kk / khw, r = kk % khw, ki = r / kw, kj = r % kw;
    const float *plane = s->x + (size_t)ci * h * w;
    int oy = oy0, ox = ox0, j = 0;
    int iyoff = ki * s->dh - s->pt, ixoff = kj * s->dw - s->pl;
    while (j < nc) {
      int off = j % pw;
      int len = imin(imin(pw - off, nc - j), ow - ox);
      float *d = dst + (size_t)(j / pw) * kc * pw + (size_t)k * pw + off;
      int iy = oy * s->sh + iyoff;
      if (iy < 0 || iy >= h) {
        for (int t = 0; t < len; t++) d[t] = 0.f;
      } else {
        const float *row = plane + (size_t)iy * w;
        int ix0 = ox * sw + ixoff;
#ifdef ECG_AVX512
        if (sw == 1) { /* 16 columns per step: masked loads (zeros outside the image row) */
          for (int t = 0; t < len; t += 16) /* (stride 2 measured slower this way) */
            _mm512_mask_storeu_ps(d + t, tail_mask(len - t), _mm512_maskz_loadu_ps(col_mask(ix0 + t, w), fptr(row, ix0 + t)));
          goto next;
        }
#endif
        if (sw == 1) {
          int a = imin(imax(-ix0, 0), len), b = imax(imin(w - ix0, len), a), t = 0;
          if (len == pw && a == 0 && b == pw) { /* whole panel row inside the image */
            memcpy(d, row + ix0, (size_t)pw * sizeof(float));
            goto next;
          }
          for (; t < a; t++) d[t] = 0.f;
          for (; t < b; t++) d[t] = row[ix0 + t];
          for (; t < len; t++) d[t] = 0.f;
        } else {
          int t = 0;
#ifdef ECG_AVX2
          if (sw == 2 && ix0 >= 0 && ix0 + 2 * len <= w) { /* even columns, 8 at a time */
            for (; t + 8 <= len; t += 8) {
              __m256 v0 = _mm256_loadu_ps(row + ix0 + 2 * t), v1 = _mm256_loadu_ps(row + ix0 + 2 * t + 8);
              __m256 ev = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
              _mm256_storeu_ps(d + t, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8)));
            }
          }
#elif defined(ECG_NEON)
          if (sw == 2 && ix0 >= 0 && ix0 + 2 * len <= w) { /* even columns, 4 at a time */
            t = len & ~3;
            ecg_neon_split2(row + ix0, t, d, NULL);
          }
#endif
          for (; t < len; t++) {
            int ix = ix0 + t * sw;
            d[t] = (unsigned)ix < (unsigned)w ? row[ix] : 0.f;
          }
        }
      }
    next:
      j += len;
      ox += len;
      if (ox == ow) { ox = 0; oy++; }
    }
    if (nc % pw) {
      float *d = dst + (size_t)(npan - 1) * kc * pw + (size_t)k * pw;
      for (int t = nc % pw; t < pw; t++) d[t] = 0.f;
    }
  }
}

/* ------------------------------------------------------------------ tile driver */

/* Tiles of a swapped conv (conv_swap): at most SW_SP output positions (the micro-kernel's
 * rows) x SW_CH output channels (its columns: the whole weight block of a 512-channel layer
 * in one tile, so the X_col^T panels are packed once per position tile). Per thread: the
 * X_col^T block (SW_SP x KC) and the C^T tile (SW_SP x SW_CH). */
#define SW_KC KC /* 64, 128 and 256 measured the same on the 7x7 and 14x14 layers */
#define SW_SP ((64 / MR) * MR)
#define SW_CH ((512 + NR - 1) / NR * NR)
#define ECG_SWAP_BUF_FLOATS ((size_t)SW_SP * SW_KC + (size_t)SW_SP * SW_CH + 64)

enum { B_PACKED, B_PACK, B_DIRECT, B_CONV };

typedef struct {
  int M, N, K;
  const float *A; int lda, transA, a_packed; /* a_packed: panels [ceil(M/6)][K][6] */
  const float *B; int ldb, transB, b_mode;   /* B_PACKED: panels [ceil(N/16)][K][16] */
  conv_src cs;                               /* B_CONV */
  float alpha, beta;
  const float *bias_m, *bias_n; /* per row of C / per column of C, or NULL */
  ecg_act act;
  float *C; int ldc;
  int b_full; /* B_DIRECT rows readable for whole NR panels (no packing of a last narrow panel) */
  int swap; /* conv computed transposed (conv_swap): A = weights packed as B panels
             * [ceil(M/NR)][K][NR], the X_col^T A panels packed per tile from cs, C^T
             * accumulated in a tile buffer and stored transposed (run_tile_swap) */
} job_t;

/* Bias and activation of a micro tile; a generated epilogue (ECG_ACT_FN) is left to
 * fn_epilogue, once per row of the macro tile. */
static void epilogue(const job_t *J, float *c, int i0, int mr, int j0, int nr) {
  const int act = J->act.kind != ECG_ACT_NONE && J->act.kind != ECG_ACT_FN;
  if (!J->bias_m && !J->bias_n && !act) return;
  for (int i = 0; i < mr; i++) {
    float *r = c + (size_t)i * J->ldc;
    if (J->bias_m) {
      float bm = J->bias_m[i0 + i];
      for (int j = 0; j < nr; j++) r[j] += bm;
    }
    if (J->bias_n) {
      const float *bn = J->bias_n + j0;
      for (int j = 0; j < nr; j++) r[j] += bn[j];
    }
    if (act) ecg_rt1_act_apply(J->act, r, (size_t)nr);
  }
}

/* A generated epilogue on the rows of a finished macro tile (still in L2): one call per
 * row of nc elements instead of one per micro-tile row, so its fixed cost is spread. */
static void fn_epilogue(const job_t *J, int i0, int mc, int j0, int nc) {
  if (J->act.kind != ECG_ACT_FN) return;
  for (int i = 0; i < mc; i++) J->act.fn(J->C + (size_t)(i0 + i) * J->ldc + j0, (size_t)nc, J->act.arg);
}

/* C tile rows [i0, i0+mc) x columns [j0, j0+nc); i0 % MR == 0, j0 % NR == 0.
 * bufA: mc*KC floats (when A is not prepacked), bufB: KC*nc floats (B not prepacked). */
static void run_tile(const job_t *J, int i0, int mc, int j0, int nc, float *bufA, float *bufB) {
  const int K = J->K;
  if (K == 0) {
    for (int i = 0; i < mc; i++) {
      float *r = J->C + (size_t)(i0 + i) * J->ldc + j0;
      for (int j = 0; j < nc; j++) r[j] = J->beta == 0.f ? 0.f : J->beta * r[j];
    }
    epilogue(J, J->C + (size_t)i0 * J->ldc + j0, i0, mc, j0, nc);
    fn_epilogue(J, i0, mc, j0, nc);
    return;
  }
  for (int pc = 0; pc < K; pc += KC) {
    const int kc = imin(KC, K - pc);
    const float *bp, *ap;
    ptrdiff_t bpanel, bs, apanel;
    switch (J->b_mode) {
    case B_PACKED:
      bp = J->B + (size_t)(j0 / NR) * K * NR + (size_t)pc * NR;
      bpanel = (ptrdiff_t)K * NR;
      bs = NR;
      break;
    case B_DIRECT:
      bp = J->B + (size_t)pc * J->ldb + j0;
      bpanel = NR;
      bs = J->ldb;
      break;
    case B_CONV:
      pack_b_conv(&J->cs, pc, kc, j0, nc, bufB, NR);
      bp = bufB;
      bpanel = (ptrdiff_t)kc * NR;
      bs = NR;
      break;
    default:
      pack_b(J->transB, J->B, J->ldb, pc, kc, j0, nc, bufB);
      bp = bufB;
      bpanel = (ptrdiff_t)kc * NR;
      bs = NR;
      break;
    }
    if (J->a_packed) {
      ap = J->A + (size_t)(i0 / MR) * K * MR + (size_t)pc * MR;
      apanel = (ptrdiff_t)K * MR;
    } else {
      pack_a(J->transA, J->A, J->lda, i0, mc, pc, kc, bufA);
      ap = bufA;
      apanel = (ptrdiff_t)kc * MR;
    }
    const float beta = pc == 0 ? J->beta : 1.f;
    const int last = pc + kc >= K;
    for (int jp = 0; jp < nc; jp += NR) {
      const int nr = imin(NR, nc - jp);
      const float *b = bp + (jp / NR) * bpanel;
      ptrdiff_t s = bs;
      if (J->b_mode == B_DIRECT && nr < NR && !J->b_full) {
        pack_b(0, J->B, J->ldb, pc, kc, j0 + jp, nr, bufB);
        b = bufB;
        s = NR;
      }
      for (int ip = 0; ip < mc; ip += MR) {
        const int mr = imin(MR, mc - ip);
        const float *a = ap + (ip / MR) * apanel;
        float *c = J->C + (size_t)(i0 + ip) * J->ldc + j0 + jp;
#ifdef ECG_AVX512
        if (last && (J->bias_m || J->bias_n || (J->act.kind != ECG_ACT_NONE && J->act.kind != ECG_ACT_FN))) {
          ep_t ep = {J->bias_m ? J->bias_m + i0 + ip : NULL, J->bias_n ? J->bias_n + j0 + jp : NULL, J->act};
          k512_tab[mr - 1][(nr + 15) / 16 - 1](kc, a, b, s, c, J->ldc, nr, J->alpha, beta, &ep);
        } else {
          k512_tab[mr - 1][(nr + 15) / 16 - 1](kc, a, b, s, c, J->ldc, nr, J->alpha, beta, NULL);
        }
#else
        if (mr == MR && nr == NR) {
          ecg_kern(kc, a, b, s, c, J->ldc, J->alpha, beta);
        } else {
          float tmp[MR * NR];
          ecg_kern(kc, a, b, s, tmp, NR, 1.f, 0.f);
          for (int i = 0; i < mr; i++) {
            float *cr = c + (size_t)i * J->ldc;
            for (int j = 0; j < nr; j++) {
              float v = J->alpha * tmp[i * NR + j];
              cr[j] = beta == 0.f ? v : v + beta * cr[j];
            }
          }
        }
        if (last) epilogue(J, c, i0 + ip, mr, j0 + jp, nr);
#endif
      }
    }
    if (last) fn_epilogue(J, i0, mc, j0, nc);
  }
}

/* y[i0+j, j0+i] = act(t[i*ldt + j] + bias_m[i0+j]) for i < nc positions, j < mc channels:
 * the C^T tile of a swapped conv stored back into its NCHW output (rows of J->C), 8x8
 * blocks transposed in registers; the activation (or generated epilogue) then runs on each
 * channel's run of nc positions. */
static void transpose_out(const job_t *J, const float *t, int ldt, int i0, int mc, int j0, int nc) {
  const ptrdiff_t ldc = J->ldc;
  int j = 0;
#ifdef ECG_AVX2
  for (; j + 8 <= mc; j += 8) {
    float *y = J->C + (size_t)(i0 + j) * ldc + j0;
    int i = 0;
    for (; i + 8 <= nc; i += 8) {
      const float *s = t + (size_t)i * ldt + j;
      __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ldt), r2 = _mm256_loadu_ps(s + 2 * ldt),
             r3 = _mm256_loadu_ps(s + 3 * ldt), r4 = _mm256_loadu_ps(s + 4 * ldt), r5 = _mm256_loadu_ps(s + 5 * ldt),
             r6 = _mm256_loadu_ps(s + 6 * ldt), r7 = _mm256_loadu_ps(s + 7 * ldt);
      __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
             t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
             t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
      __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
             u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
             u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
             u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      __m256 o[8] = {_mm256_permute2f128_ps(u0, u4, 0x20), _mm256_permute2f128_ps(u1, u5, 0x20),
                     _mm256_permute2f128_ps(u2, u6, 0x20), _mm256_permute2f128_ps(u3, u7, 0x20),
                     _mm256_permute2f128_ps(u0, u4, 0x31), _mm256_permute2f128_ps(u1, u5, 0x31),
                     _mm256_permute2f128_ps(u2, u6, 0x31), _mm256_permute2f128_ps(u3, u7, 0x31)};
      for (int q = 0; q < 8; q++) {
        __m256 v = J->bias_m ? _mm256_add_ps(o[q], _mm256_set1_ps(J->bias_m[i0 + j + q])) : o[q];
        _mm256_storeu_ps(y + (size_t)q * ldc + i, v);
      }
    }
    for (int q = 0; q < 8; q++) {
      const float b = J->bias_m ? J->bias_m[i0 + j + q] : 0.f;
      for (int ii = i; ii < nc; ii++) y[(size_t)q * ldc + ii] = t[(size_t)ii * ldt + j + q] + b;
    }
  }
#endif
  for (; j < mc; j++) {
    float *y = J->C + (size_t)(i0 + j) * ldc + j0;
    const float b = J->bias_m ? J->bias_m[i0 + j] : 0.f;
    for (int i = 0; i < nc; i++) y[i] = t[(size_t)i * ldt + j] + b;
  }
  if (J->act.kind != ECG_ACT_NONE)
    for (j = 0; j < mc; j++) ecg_rt1_act_apply(J->act, J->C + (size_t)(i0 + j) * ldc + j0, (size_t)nc);
}

/* Tile of a swapped conv: output channels [i0, i0+mc) (i0 % NR == 0) x positions
 * [j0, j0+nc) (j0 % MR == 0), computed as C^T[nc, mc] = X_col^T[nc, K] * W^T[K, mc] into
 * tile (ceil(nc/MR)*MR rows x ceil(mc/NR)*NR floats) with the X_col^T block packed into
 * bufA (ceil(nc/MR)*MR*KC floats), then stored transposed (transpose_out). */
static void run_tile_swap(const job_t *J, int i0, int mc, int j0, int nc, float *bufA, float *tile) {
  const int K = J->K, ldt = cdiv(mc, NR) * NR;
  for (int pc = 0; pc < K; pc += SW_KC) {
    const int kc = imin(SW_KC, K - pc);
    const float beta = pc == 0 ? 0.f : 1.f;
    if (J->b_mode == B_CONV) pack_b_conv(&J->cs, pc, kc, j0, nc, bufA, MR);
    else pack_a(1, J->B, J->ldb, j0, nc, pc, kc, bufA); /* 1x1: X [K, ohw] is X_col */
    for (int jp = 0; jp < mc; jp += NR) {
      const float *b = J->A + (size_t)((i0 + jp) / NR) * K * NR + (size_t)pc * NR;
#ifdef ECG_AVX512
      const int nv = (imin(NR, mc - jp) + 15) / 16;
#endif
      for (int ip = 0; ip < nc; ip += MR) {
        const float *a = bufA + (size_t)(ip / MR) * kc * MR;
        float *c = tile + (size_t)ip * ldt + jp;
#ifdef ECG_AVX512
        k512_tab[imin(MR, nc - ip) - 1][nv - 1](kc, a, b, NR, c, ldt, 16 * nv, 1.f, beta, NULL);
#else
        ecg_kern(kc, a, b, NR, c, ldt, 1.f, beta); /* tile rows and columns padded to MR, NR */
#endif
      }
    }
  }
  transpose_out(J, tile, ldt, i0, mc, j0, nc);
}

/* A batch of `njobs` GEMMs sharing shapes: job t uses A + t%G*a_g, B/conv x + t/G*b_img +
 * t%G*b_g, C + t/G*c_img + t%G*c_g, bias_m + t%G*bias_g (t = img*G + g). */
typedef struct {
  job_t j;
  int G;
  size_t a_g, b_img, b_g, c_img, c_g, bias_g;
} batch_t;

/* Pick the tile shape (mc, nc) minimising a simple cost: rounds of tiles per thread times
 * (multiply-adds incl. padding waste + packing work + fixed overhead per tile). */
static void choose_tiles(const job_t *J, int njobs, int T, int *pmc, int *pnc) {
  const int M = J->M, N = J->N;
  const double K = J->K > 0 ? J->K : 1;
  /* swapped convs: rows of C (channels) are the micro-kernel's columns and vice versa */
  const int gm = J->swap ? NR : MR, gn = J->swap ? MR : NR;
  const int mcmax = J->swap ? SW_CH : MCMAX, ncmax = J->swap ? SW_SP : NCMAX;
  const double ca = J->a_packed ? 0.0 : 6.0;
  const double cb = J->b_mode == B_PACKED ? 0.0 : J->b_mode == B_DIRECT ? 1.0 : 6.0;
  const double ct = J->swap ? 16.0 : 0.0; /* the transposed store of a swapped tile, per element */
  int tm0 = cdiv(M, mcmax), tn0 = cdiv(N, ncmax);
  int tm1 = imin(tm0 + 8, imax(tm0, cdiv(M, gm))), tn1 = imin(tn0 + 24, imax(tn0, cdiv(N, gn)));
  double best = -1;
  int bmc = gm, bnc = gn;
  for (int tm = tm0; tm <= tm1; tm++) {
    int mc = cdiv(cdiv(M, tm), gm) * gm;
    int rtm = cdiv(M, mc);
    for (int tn = tn0; tn <= tn1; tn++) {
      int nc = cdiv(cdiv(N, tn), gn) * gn;
      int rtn = cdiv(N, nc);
      double tiles = (double)njobs * rtm * rtn;
      double rounds = ceil(tiles / T);
      double per = (double)mc * nc * K + cb * nc * K + ca * mc * K + ct * mc * nc + 4000.0;
      double cost = rounds * per;
      if (best < 0 || cost < best * 0.999) { best = cost; bmc = mc; bnc = nc; }
    }
  }
  *pmc = imax(gm, imin(bmc, mcmax));
  *pnc = imax(gn, imin(bnc, ncmax));
}

#define ECG_CONV_BUF_FLOATS ((size_t)KC * NCMAX + 32)

static float *align64(float *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

static void naive_job(const job_t *J);

/* Runs every tile of every job. scratch: T * per_thread floats, or NULL to malloc. */
static void run_batch(const batch_t *bt, int njobs, float *scratch, size_t per_thread) {
  const job_t *J = &bt->j;
  if (J->M <= 0 || J->N <= 0 || njobs <= 0) return;
  int T = ecg_threads(), mc, nc;
  choose_tiles(J, njobs, T, &mc, &nc);
  const int tm = cdiv(J->M, mc), tn = cdiv(J->N, nc);
  const long total = (long)njobs * tm * tn;
  const double flops = 2.0 * J->M * J->N * (double)J->K * njobs;
  if (flops < 2e5) T = 1;
  if (T > total) T = (int)total;
  float *own = NULL;
  if (!scratch) { /* one malloc for all threads; on failure fewer threads, then unpacked */
    per_thread = J->swap ? ECG_SWAP_BUF_FLOATS
                 : (J->a_packed ? 0 : (size_t)mc * KC) + (J->b_mode == B_PACKED ? 0 : (size_t)KC * nc) + 32;
    while (T > 1 && !(own = (float *)malloc((size_t)T * per_thread * sizeof(float)))) T = 1;
    if (!own) own = (float *)malloc(per_thread * sizeof(float));
    if (!own) {
      for (int t = 0; t < njobs; t++) {
        int g = t % bt->G, img = t / bt->G;
        job_t jj = *J;
        jj.A += (size_t)g * bt->a_g;
        jj.B += (size_t)img * bt->b_img + (size_t)g * bt->b_g;
        jj.C += (size_t)img * bt->c_img + (size_t)g * bt->c_g;
        naive_job(&jj);
      }
      return;
    }
    scratch = own;
  }
  (void)T;
  /* static: the tiles are sized for rounds of T (choose_tiles), and thread k takes the same
   * run of positions in consecutive convs, so it reads what it wrote into its own L2 (2
   * threads, interleaved rounds, medians, against dynamic chunks of 1: bert_tiny 0.815 ->
   * 0.710 ms, squeezenet1_1 3.47 -> 3.17, efficientnet_b0 6.05 -> 5.66, mobilenet_v2 3.38
   * -> 3.19, mnasnet1_0 3.54 -> 3.41, resnet18 10.96 -> 10.75; with a busy loop on the
   * other core no worse: bert_tiny 1.005 -> 1.007, mobilenet_v2 5.03 -> 4.96) */
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long t = 0; t < total; t++) {
    float *buf = scratch + (size_t)ecg_tid() * per_thread;
    long q = t;
    int jn = (int)(q % tn); q /= tn;
    int jm = (int)(q % tm); q /= tm;
    int job = (int)q, g = job % bt->G, img = job / bt->G;
    job_t jj = *J;
    jj.A += (size_t)g * bt->a_g;
    if (J->b_mode == B_CONV)
      jj.cs.x += (size_t)img * bt->b_img + (size_t)g * bt->b_g;
    else
      jj.B += (size_t)img * bt->b_img + (size_t)g * bt->b_g;
    jj.C += (size_t)img * bt->c_img + (size_t)g * bt->c_g;
    if (jj.bias_m) jj.bias_m += (size_t)g * bt->bias_g;
    float *b0 = align64(buf);
    float *bA = J->a_packed ? NULL : b0;
    float *bB = J->a_packed ? b0 : align64(b0 + (size_t)mc * KC);
    int i0 = jm * mc, j0 = jn * nc;
    if (J->swap)
      run_tile_swap(&jj, i0, imin(mc, J->M - i0), j0, imin(nc, J->N - j0), b0, align64(b0 + (size_t)SW_SP * SW_KC));
    else
      run_tile(&jj, i0, imin(mc, J->M - i0), j0, imin(nc, J->N - j0), bA, bB);
  }
  free(own);
}

/* Only reached when no pack buffer could be allocated (ecg_rt1_sgemm, ecg_rt1_sgemm_packed). */
static void naive_job(const job_t *J) {
  for (int i = 0; i < J->M; i++) {
    float *cr = J->C + (size_t)i * J->ldc;
    for (int j = 0; j < J->N; j++) {
      float s = 0.f;
      for (int k = 0; k < J->K; k++) {
        float a = J->transA ? J->A[(size_t)k * J->lda + i] : J->A[(size_t)i * J->lda + k];
        float b = J->b_mode == B_PACKED ? J->B[(size_t)(j / NR) * J->K * NR + (size_t)k * NR + j % NR]
                  : J->transB ? J->B[(size_t)j * J->ldb + k] : J->B[(size_t)k * J->ldb + j];
        s += a * b;
      }
      s *= J->alpha;
      cr[j] = J->beta == 0.f ? s : s + J->beta * cr[j];
    }
    epilogue(J, cr, i, 1, 0, J->N);
  }
}

/* ------------------------------------------------------------------ GEMM entry points */

void ecg_rt1_sgemm(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc) {
  batch_t bt;
  memset(&bt, 0, sizeof bt);
  bt.G = 1;
  job_t *J = &bt.j;
  J->M = M; J->N = N; J->K = K;
  J->A = A; J->lda = lda; J->transA = transA;
  J->B = B; J->ldb = ldb; J->transB = transB; J->b_mode = B_PACK;
  J->alpha = alpha; J->beta = beta;
  J->C = C; J->ldc = ldc;
  run_batch(&bt, 1, NULL, 0);
}

size_t ecg_rt1_sgemm_packed_b_floats(int K, int N) { return (size_t)cdiv(N, NR) * NR * (size_t)(K > 0 ? K : 0); }

void ecg_rt1_sgemm_pack_b(int transB, int K, int N, const float *B, int ldb, float *packed) {
  if (K > 0 && N > 0) pack_b(transB, B, ldb, 0, K, 0, N, packed);
}

#ifdef ECG_AVX512
/* One row (M = 1: a classifier's Gemm, 1280 x 1000 weights) against the prepacked B:
 * C[0, N) = act(a * B + bias_n + beta * C), each 48-column panel read once as one stream
 * ([K][48] contiguous, prefetched 16 rows ahead), two sets of three accumulators (even and
 * odd k) so the FMA latency does not bound it: the weights' streaming bandwidth does. The
 * tile driver would walk the panels in 256-row blocks, four panels at a time, with one
 * accumulator chain per vector. Threads over panels. */
static void gemv_packed_b(int transA, int N, int K, const float *A, int lda, const float *packed, const float *bias_n,
                          ecg_act act, float beta, float *C) {
  const int np = cdiv(N, NR);
  const ptrdiff_t as = transA ? lda : 1; /* a[k] = A[k * as] */
  int T = ecg_threads();
  if (2.0 * N * K < 2e5) T = 1;
  if (T > np) T = np;
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (int q = 0; q < np; q++) {
    const float *b = packed + (size_t)q * K * NR;
    __m512 e0 = _mm512_setzero_ps(), e1 = e0, e2 = e0, o0 = e0, o1 = e0, o2 = e0;
    int k = 0;
    for (; k + 2 <= K; k += 2, b += 2 * NR) {
      _mm_prefetch((const char *)(b + 16 * NR), _MM_HINT_T0);
      _mm_prefetch((const char *)(b + 16 * NR + 16), _MM_HINT_T0);
      _mm_prefetch((const char *)(b + 16 * NR + 32), _MM_HINT_T0);
      _mm_prefetch((const char *)(b + 17 * NR), _MM_HINT_T0);
      _mm_prefetch((const char *)(b + 17 * NR + 16), _MM_HINT_T0);
      _mm_prefetch((const char *)(b + 17 * NR + 32), _MM_HINT_T0);
      const __m512 x0 = _mm512_set1_ps(A[k * as]), x1 = _mm512_set1_ps(A[(k + 1) * as]);
      e0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(b), e0);
      e1 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(b + 16), e1);
      e2 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(b + 32), e2);
      o0 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(b + NR), o0);
      o1 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(b + NR + 16), o1);
      o2 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(b + NR + 32), o2);
    }
    if (k < K) {
      const __m512 x0 = _mm512_set1_ps(A[k * as]);
      e0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(b), e0);
      e1 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(b + 16), e1);
      e2 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(b + 32), e2);
    }
    __m512 v[3] = {_mm512_add_ps(e0, o0), _mm512_add_ps(e1, o1), _mm512_add_ps(e2, o2)};
    const int j0 = q * NR, nr = imin(NR, N - j0);
    for (int t = 0; t < 3 && 16 * t < nr; t++) {
      const __mmask16 m = tail_mask(nr - 16 * t);
      float *c = C + j0 + 16 * t;
      __m512 x = v[t];
      if (beta != 0.f) x = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(m, c), x);
      if (bias_n) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, bias_n + j0 + 16 * t));
      if (act.kind != ECG_ACT_NONE && act.kind != ECG_ACT_FN) x = act512_call(act, x);
      _mm512_mask_storeu_ps(c, m, x);
    }
    if (act.kind == ECG_ACT_FN) act.fn(C + j0, (size_t)nr, act.arg);
  }
}
#endif

void ecg_rt1_sgemm_packed(int transA, int M, int N, int K, const float *A, int lda, const float *packed,
                      const float *bias_n, ecg_act act, float beta, float *C, int ldc) {
#ifdef ECG_AVX512
  if (M == 1 && N > 0 && K > 0) {
    gemv_packed_b(transA, N, K, A, lda, packed, bias_n, act, beta, C);
    return;
  }
#endif
  batch_t bt;
  memset(&bt, 0, sizeof bt);
  bt.G = 1;
  job_t *J = &bt.j;
  J->M = M; J->N = N; J->K = K;
  J->A = A; J->lda = lda; J->transA = transA;
  J->B = packed; J->b_mode = B_PACKED;
  J->alpha = 1.f; J->beta = beta;
  J->bias_n = bias_n; J->act = act;
  J->C = C; J->ldc = ldc;
  if (K <= 0) J->b_mode = B_PACK; /* nothing to read */
  run_batch(&bt, 1, NULL, 0);
}

/* ------------------------------------------------------------------ convolution */

static int conv_is_dw(const ecg_conv_params *p) {
  return p->group > 1 && p->group == p->c && p->m % p->c == 0;
}
static int conv_is_1x1(const ecg_conv_params *p) {
  return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 &&
         p->pb == 0 && p->pr == 0 && p->oh == p->h && p->ow == p->w;
}
/* A strided 1x1 conv without pads (resnet18's downsamples: 1x1 stride 2) is computed as
 * the stride-1 1x1 conv (conv_sub_view) of its input subsampled into the scratch, one image
 * at a time (ecg_rt1_conv2d), so it runs the kernels of stride-1 pointwise convs instead of
 * the GEMM's B packing gathering strided columns per tile. rt_test --bench, AMD EPYC Zen 4
 * (lscpu family 25 model 17), 1 thread (2 threads), GFLOP/s, before -> after: 64x56x56->128
 * 84.9 -> 93.9 (158 -> 155), 128x28x28->256 75.6 -> 97.4-97.6 (149 -> 172), 256x14x14->512
 * 88.6 -> 98.7 (139 -> 163); the same convs at stride 1 on the subsampled planes run
 * 104-105, the rest is the subsampling. Inside resnet18 (3 interleaved profiles, 1 thread,
 * fraction of the measured 117 GFLOP/s): 55-66% -> 72-78%. Packing, scratch and run all
 * follow the view, so a schedule's conv_algo applies to the stride-1 conv. */
static int conv_sub(const ecg_conv_params *p) {
  return p->kh == 1 && p->kw == 1 && (p->sh > 1 || p->sw > 1) && p->group == 1 && !(p->pt | p->pl | p->pb | p->pr) &&
         p->oh == (p->h - 1) / p->sh + 1 && p->ow == (p->w - 1) / p->sw + 1;
}
static ecg_conv_params conv_sub_view(const ecg_conv_params *p) {
  ecg_conv_params v = *p;
  v.n = 1;
  v.h = p->oh;
  v.w = p->ow;
  v.sh = v.sw = v.dh = v.dw = 1;
  return v;
}
/* Floats of one subsampled image (c x oh x ow, rounded to 16). */
static size_t conv_sub_floats(const ecg_conv_params *p) { return ((size_t)p->c * p->oh * p->ow + 15) & ~(size_t)15; }

/* Row length of a stride-split padded plane for the depthwise kernel. */
static int dw_row_len(const ecg_conv_params *p) {
  return cdiv(cdiv(p->ow, 8) * 8 + ((p->kw - 1) * p->dw) / p->sw + 1, 8) * 8;
}

static int conv_direct(const ecg_conv_params *p);
static size_t dr_buf_floats(const ecg_conv_params *p);
#define DR_J 8 /* conv_direct: output channels per register tile */
#define DR_R 3 /* conv_direct: 16-column output vectors per register tile */
static int dw_cb(const ecg_conv_params *p);
#ifdef ECG_AVX512
static size_t cb_per_thread(const ecg_conv_params *p);
#endif
static int conv_wg(const ecg_conv_params *p);
static size_t wg_packed_floats(const ecg_conv_params *p);
static void wg_pack(const ecg_conv_params *p, const float *w, float *packed);
static size_t wg_per_thread(const ecg_conv_params *p);
static void conv_wg_run(const ecg_conv_params *p, const float *x, const float *U, const float *bias, float *y,
                        float *scratch);

/* Compute the (non-depthwise) conv transposed, Y_g^T [oh*ow, mg] = X_col^T * W_g^T, when
 * a cost in multiply-adds says so: the micro-kernel tiles its rows (MR; on AVX-512 edge
 * kernels of any row count) and its columns (NR; AVX-512: vectors of 16), so a plane of
 * 7x7 = 49 or 14x14 = 196 positions leaves a mostly empty last column panel in the plain
 * orientation (49 = 48 + 1) but fills the rows of the transposed one, whose columns are
 * the channels (multiples of 16); the im2col block is packed (about 6 multiply-adds per
 * float) once per MCMAX = 240 channels in the plain orientation, once per SW_CH = 528
 * transposed (a 1x1 conv: read in place plain, about 2 per float transposed); the
 * transposed store costs about 16 per output. Measured on Zen 4 (rt_test --bench): 3x3 on
 * 7x7 and 14x14 planes and 1x1 on 7x7 planes 1.16-1.6x faster transposed, 1x1 on 14x14
 * planes 0.95x (kept plain by the cost). Planes of 2..31 positions (a 56x56 input's last
 * stages: 2x2, 4x4) fill at most one vector of the plain orientation (the 8 x 16 edge tile
 * for 4 positions: 4x the multiply-adds, 8 broadcasts per 8 FMAs) but a 4 x 48 tile
 * transposed: mnasnet1_0 at 56x56, 1 thread, 1.18 -> 1.00 ms end to end (its 2x2 1x1
 * convs, 0.72 of the 1.2 ms, were at 30 GFLOP/s). Never for a 1x1 plane (conv_gemv, and
 * the pointwise convs of ecg_ibr.c keep the A-panel layout they rely on). */
static int conv_blocked(const ecg_conv_params *p);
static int wg_shape_ok(const ecg_conv_params *p);
static int wg_fewer_macs(const ecg_conv_params *p);
static size_t bk_plane_floats(const ecg_conv_params *p);
static size_t bk_part_floats(const ecg_conv_params *p);
static void bk_pack(const ecg_conv_params *p, const float *w, float *packed);
static void conv_blocked_run(const ecg_conv_params *p, const float *x, const float *wp, const float *bias, float *y,
                             float *xp, int c16, const float *res);

static int conv_swap(const ecg_conv_params *p) {
  if (p->algo == ECG_RT_CONV_GEMM_T && !conv_is_dw(p)) return 1; /* a schedule's choice */
  if (p->algo) return 0;
  if (conv_is_dw(p) || conv_direct(p) || conv_blocked(p) || conv_wg(p) || (long)p->oh * p->ow < 2) return 0;
  const int mg = p->m / p->group, n = p->oh * p->ow;
  const double K = (double)(p->c / p->group) * p->kh * p->kw, pw1 = conv_is_1x1(p);
#ifdef ECG_AVX512
  const double rows_m = mg, rows_n = n, cols_n = cdiv(n, 16) * 16, cols_m = cdiv(mg, 16) * 16;
#else
  const double rows_m = cdiv(mg, MR) * MR, rows_n = cdiv(n, MR) * MR, cols_n = cdiv(n, NR) * NR, cols_m = cdiv(mg, NR) * NR;
#endif
#ifdef ECG_AVX512
  /* one 16-column vector per tile row: 8 broadcasts and 1 load per 8 FMAs, bound by the
   * loads (9/8 of the FMA time); 2 and 3 vectors are bound by the FMAs. Im2col convs
   * only: resnet18 at 56x56 (3x3 convs on 4x4 planes turn transposed), 1 thread, 3.89 ->
   * 3.74 ms; the 1x1 convs of mnasnet1_0 and mobilenet_v2 at 56x56 on 4x4 planes measured
   * 1-2% slower transposed (5 interleaved rounds each) */
  const double vec1 = cols_n == 16 && !pw1 ? 9.0 / 8.0 : 1.0;
#else
  const double vec1 = 1.0;
#endif
  const double plain = vec1 * rows_m * cols_n * K + (pw1 ? 1.0 : 6.0 * cdiv(mg, MCMAX)) * n * K;
  const double swapped = rows_n * cols_m * K + (pw1 ? 2.0 : 6.0 * cdiv(mg, SW_CH)) * n * K + 16.0 * mg * n;
#ifdef ECG_SWAP_OVERRIDE /* measuring and testing both orientations: ECG_SWAP=0|1 */
  if (getenv("ECG_SWAP")) return atoi(getenv("ECG_SWAP"));
#endif
  return swapped < 0.95 * plain;
}

size_t ecg_rt1_conv2d_packed_floats(const ecg_conv_params *p) {
  if (conv_sub(p)) {
    const ecg_conv_params v = conv_sub_view(p);
    return ecg_rt1_conv2d_packed_floats(&v);
  }
  if (conv_is_dw(p)) return (size_t)p->m * p->kh * p->kw;
  if (conv_direct(p)) return (size_t)cdiv(p->m, DR_J) * DR_J * p->c * p->kh * p->kw;
  if (conv_blocked(p)) return (size_t)cdiv(p->m, 16) * cdiv(p->c, 16) * p->kh * p->kw * 256;
  if (conv_wg(p)) return wg_packed_floats(p);
  int G = p->group, mg = p->m / G;
  size_t Kg = (size_t)(p->c / G) * p->kh * p->kw;
  if (conv_swap(p)) return (size_t)G * cdiv(mg, NR) * NR * Kg;
  return (size_t)G * cdiv(mg, MR) * MR * Kg;
}

void ecg_rt1_conv2d_pack(const ecg_conv_params *p, const float *w, float *packed) {
  if (conv_sub(p)) {
    const ecg_conv_params v = conv_sub_view(p);
    ecg_rt1_conv2d_pack(&v, w, packed);
    return;
  }
  if (conv_is_dw(p)) {
    memcpy(packed, w, (size_t)p->m * p->kh * p->kw * sizeof(float));
    return;
  }
  int G = p->group, mg = p->m / G, Kg = (p->c / G) * p->kh * p->kw;
  if (Kg <= 0 || mg <= 0) return;
  if (conv_blocked(p)) {
    bk_pack(p, w, packed);
    return;
  }
  if (conv_wg(p)) {
    wg_pack(p, w, packed);
    return;
  }
  if (conv_direct(p)) { /* [ceil(m/DR_J)][Kg][DR_J]: the DR_J output channels of a block per tap */
    for (int q = 0; q < cdiv(p->m, DR_J); q++)
      for (int k = 0; k < Kg; k++)
        for (int j = 0; j < DR_J; j++)
          packed[((size_t)q * Kg + k) * DR_J + j] = DR_J * q + j < p->m ? w[(size_t)(DR_J * q + j) * Kg + k] : 0.f;
    return;
  }
  if (conv_swap(p)) { /* W_g^T [Kg, mg] as B panels */
    for (int g = 0; g < G; g++)
      pack_b(1, w + (size_t)g * mg * Kg, Kg, 0, Kg, 0, mg, packed + (size_t)g * cdiv(mg, NR) * NR * Kg);
    return;
  }
  for (int g = 0; g < G; g++)
    pack_a(0, w + (size_t)g * mg * Kg, Kg, 0, mg, 0, Kg, packed + (size_t)g * cdiv(mg, MR) * MR * Kg);
}

/* Rows of the padded plane: input rows -pt .. (oh-1)*sh - pt + (kh-1)*dh. */
static int dw_plane_rows(const ecg_conv_params *p) { return (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1; }
#ifdef ECG_AVX512
/* AVX-512 depthwise reads the input in place for horizontal strides 1 and 2. */
static int dw_direct(const ecg_conv_params *p) { return (p->sw == 1 || p->sw == 2) && p->kw <= 8; }
#endif
static size_t conv_per_thread(const ecg_conv_params *p) {
#ifdef ECG_AVX512
  if (dw_cb(p)) return cb_per_thread(p);
  if (conv_is_dw(p) && dw_direct(p)) return (size_t)p->w + 64 + 32; /* one zero row */
#endif
  if (conv_is_dw(p)) return (size_t)dw_plane_rows(p) * p->sw * dw_row_len(p) + 32;
  if (conv_direct(p)) return dr_buf_floats(p);
  if (conv_wg(p)) return wg_per_thread(p);
  if (conv_swap(p)) return ECG_SWAP_BUF_FLOATS;
  return ECG_CONV_BUF_FLOATS;
}

size_t ecg_rt1_conv2d_scratch_floats(const ecg_conv_params *p, int threads) {
  if (p->n <= 0 || p->m <= 0 || p->oh <= 0 || p->ow <= 0) return 0; /* an empty output: the conv does nothing */
  if (conv_sub(p)) { /* one subsampled image, then the stride-1 conv's scratch */
    const ecg_conv_params v = conv_sub_view(p);
    return conv_sub_floats(p) + ecg_rt1_conv2d_scratch_floats(&v, threads);
  }
  if (conv_blocked(p)) /* one padded plane, shared by the threads, and each thread's partial sums */
    return bk_plane_floats(p) + (size_t)(threads < 1 ? 1 : threads) * bk_part_floats(p); /* of bk_view(p) */
  return (size_t)(threads < 1 ? 1 : threads) * conv_per_thread(p);
}

/* out[ox] = bias + sum_t tw[t] * base[toff[t] + ox], ox in [0, ow); readable up to
 * ox = round_up(ow, 8). */
static void dw_row(int ow, int nt, const float *base, const ptrdiff_t *toff, const float *tw, float bias,
                   float *out) {
#ifdef ECG_AVX2
  int ox = 0;
  for (; ox + 32 <= ow; ox += 32) {
    __m256 a0 = _mm256_set1_ps(bias), a1 = a0, a2 = a0, a3 = a0;
    for (int t = 0; t < nt; t++) {
      __m256 wv = _mm256_broadcast_ss(tw + t);
      const float *s = base + toff[t] + ox;
      a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s), a0);
      a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 8), a1);
      a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 16), a2);
      a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 24), a3);
    }
    _mm256_storeu_ps(out + ox, a0);
    _mm256_storeu_ps(out + ox + 8, a1);
    _mm256_storeu_ps(out + ox + 16, a2);
    _mm256_storeu_ps(out + ox + 24, a3);
  }
  for (; ox + 16 <= ow; ox += 16) {
    __m256 a0 = _mm256_set1_ps(bias), a1 = a0;
    for (int t = 0; t < nt; t++) {
      __m256 wv = _mm256_broadcast_ss(tw + t);
      const float *s = base + toff[t] + ox;
      a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s), a0);
      a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 8), a1);
    }
    _mm256_storeu_ps(out + ox, a0);
    _mm256_storeu_ps(out + ox + 8, a1);
  }
  for (; ox < ow; ox += 8) {
    __m256 a0 = _mm256_set1_ps(bias);
    for (int t = 0; t < nt; t++)
      a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(tw + t), _mm256_loadu_ps(base + toff[t] + ox), a0);
    if (ox + 8 <= ow) {
      _mm256_storeu_ps(out + ox, a0);
    } else {
      float tmp[8];
      _mm256_storeu_ps(tmp, a0);
      for (int j = 0; ox + j < ow; j++) out[ox + j] = tmp[j];
    }
  }
#elif defined(ECG_NEON)
  ecg_neon_dw_row(ow, nt, base, toff, tw, bias, out);
#else
  for (int ox = 0; ox < ow; ox++) out[ox] = bias;
  for (int t = 0; t < nt; t++) {
    const float *s = base + toff[t];
    float wt = tw[t];
    for (int ox = 0; ox < ow; ox++) out[ox] += wt * s[ox];
  }
#endif
}

#ifdef ECG_AVX2
/* Two output rows at once (more independent FMA chains): rows base and base + rs give
 * out0[ox] and out1[ox], as in dw_row. */
static void dw_row2(int ow, int nt, const float *base, ptrdiff_t rs, const ptrdiff_t *toff, const float *tw,
                    float bias, float *out0, float *out1) {
  int ox = 0;
  for (; ox + 32 <= ow; ox += 32) {
    __m256 a0 = _mm256_set1_ps(bias), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (int t = 0; t < nt; t++) {
      __m256 wv = _mm256_broadcast_ss(tw + t);
      const float *s = base + toff[t] + ox, *u = s + rs;
      a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s), a0);
      a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 8), a1);
      a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 16), a2);
      a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 24), a3);
      b0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(u), b0);
      b1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(u + 8), b1);
      b2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(u + 16), b2);
      b3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(u + 24), b3);
    }
    _mm256_storeu_ps(out0 + ox, a0);
    _mm256_storeu_ps(out0 + ox + 8, a1);
    _mm256_storeu_ps(out0 + ox + 16, a2);
    _mm256_storeu_ps(out0 + ox + 24, a3);
    _mm256_storeu_ps(out1 + ox, b0);
    _mm256_storeu_ps(out1 + ox + 8, b1);
    _mm256_storeu_ps(out1 + ox + 16, b2);
    _mm256_storeu_ps(out1 + ox + 24, b3);
  }
  for (; ox + 16 <= ow; ox += 16) {
    __m256 a0 = _mm256_set1_ps(bias), a1 = a0, b0 = a0, b1 = a0;
    for (int t = 0; t < nt; t++) {
      __m256 wv = _mm256_broadcast_ss(tw + t);
      const float *s = base + toff[t] + ox, *u = s + rs;
      a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s), a0);
      a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 8), a1);
      b0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(u), b0);
      b1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(u + 8), b1);
    }
    _mm256_storeu_ps(out0 + ox, a0);
    _mm256_storeu_ps(out0 + ox + 8, a1);
    _mm256_storeu_ps(out1 + ox, b0);
    _mm256_storeu_ps(out1 + ox + 8, b1);
  }
  for (; ox < ow; ox += 8) {
    __m256 a0 = _mm256_set1_ps(bias), b0 = a0;
    for (int t = 0; t < nt; t++) {
      __m256 wv = _mm256_broadcast_ss(tw + t);
      const float *s = base + toff[t] + ox;
      a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s), a0);
      b0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + rs), b0);
    }
    if (ox + 8 <= ow) {
      _mm256_storeu_ps(out0 + ox, a0);
      _mm256_storeu_ps(out1 + ox, b0);
    } else {
      float t0[8], t1[8];
      _mm256_storeu_ps(t0, a0);
      _mm256_storeu_ps(t1, b0);
      for (int j = 0; ox + j < ow; j++) {
        out0[ox + j] = t0[j];
        out1[ox + j] = t1[j];
      }
    }
  }
}
#endif

/* One input channel t = img*c + ic of a depthwise conv: stride-split padded plane, then
 * the mult output channels ic*mult .. ic*mult+mult-1. plane: h*sw*Lp floats whose pad
 * columns are zero when sw == 1. */
static void dw_channel(const ecg_conv_params *p, const float *x, const float *w, const float *bias,
                       float *y, float *plane, long t) {
  const int c = p->c, h = p->h, wd = p->w, oh = p->oh, ow = p->ow, kh = p->kh, kw = p->kw;
  const int sw = p->sw, mult = p->m / p->c, Lp = dw_row_len(p);
  const int img = (int)(t / c), ic = (int)(t % c);
  const float *xc = x + ((size_t)img * c + ic) * h * wd;
  const int Hp = dw_plane_rows(p);
  for (int iy = imax(0, -p->pt); iy < h && iy + p->pt < Hp; iy++) {
    const float *src = xc + (size_t)iy * wd;
    float *prow = plane + (size_t)(iy + p->pt) * sw * Lp;
#ifdef ECG_AVX2
    if (sw == 2) { /* split even/odd padded columns 8 at a time */
      float *d0 = prow, *d1 = prow + Lp;
      for (int u = 0; u < Lp; u += 8) {
        const int lo = 2 * u - p->pl; /* input column of padded column 2u */
        __m256 v0, v1;
        if (lo >= 0 && lo + 16 <= wd) {
          v0 = _mm256_loadu_ps(src + lo);
          v1 = _mm256_loadu_ps(src + lo + 8);
        } else { /* masked loads: lanes outside [0, wd) read as 0 and are never touched */
          const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
          const __m256i i0 = _mm256_add_epi32(_mm256_set1_epi32(lo), iota);
          const __m256i i1 = _mm256_add_epi32(i0, _mm256_set1_epi32(8));
          const __m256i m1 = _mm256_set1_epi32(-1), wv = _mm256_set1_epi32(wd);
          __m256i k0 = _mm256_and_si256(_mm256_cmpgt_epi32(i0, m1), _mm256_cmpgt_epi32(wv, i0));
          __m256i k1 = _mm256_and_si256(_mm256_cmpgt_epi32(i1, m1), _mm256_cmpgt_epi32(wv, i1));
          const float *sp = (const float *)((uintptr_t)src + (intptr_t)lo * (intptr_t)sizeof(float));
          v0 = _mm256_maskload_ps(sp, k0);
          v1 = _mm256_maskload_ps(sp + 8, k1);
        }
        __m256 ev = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
        __m256 od = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1));
        _mm256_storeu_ps(d0 + u, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8)));
        _mm256_storeu_ps(d1 + u, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), 0xD8)));
      }
      continue;
    }
#endif
    for (int r = 0; r < sw; r++) {
      float *d = prow + (size_t)r * Lp;
      if (sw == 1) {
        int a = imin(p->pl, Lp), b = imin(p->pl + wd, Lp);
        if (b > a) memcpy(d + a, src, (size_t)(b - a) * sizeof(float));
      } else { /* columns u with 0 <= u*sw + r - pl < wd: [a, b) */
        int off = r - p->pl;
        int a = off >= 0 ? 0 : (-off + sw - 1) / sw;
        int b = wd - 1 - off < 0 ? 0 : (wd - 1 - off) / sw + 1, u = 0;
        a = imin(a, Lp);
        b = imax(imin(b, Lp), a);
        const float *sr = src + off;
        for (; u < a; u++) d[u] = 0.f;
        for (; u < b; u++) d[u] = sr[u * sw];
        for (; u < Lp; u++) d[u] = 0.f;
      }
    }
  }
  ptrdiff_t toff[kh * kw]; /* tap (ki, kj): offset from the first padded row of a window */
  for (int ki = 0; ki < kh; ki++)
    for (int kj = 0; kj < kw; kj++) {
      int u = kj * p->dw;
      toff[ki * kw + kj] = ((ptrdiff_t)ki * p->dh * sw + u % sw) * Lp + u / sw;
    }
  for (int q = 0; q < mult; q++) {
    const int oc = ic * mult + q;
    const float *wk = w + (size_t)oc * kh * kw;
    const float b = bias ? bias[oc] : 0.f;
    float *yc = y + ((size_t)img * p->m + oc) * oh * ow;
    const ptrdiff_t rs = (ptrdiff_t)p->sh * sw * Lp; /* plane floats per output row */
    const int fn = p->act.kind == ECG_ACT_FN; /* a generated epilogue: once per plane, below */
    int oy = 0;
#ifdef ECG_AVX2
    for (; oy + 2 <= oh; oy += 2) {
      float *yr = yc + (size_t)oy * ow;
      dw_row2(ow, kh * kw, plane + oy * rs, rs, toff, wk, b, yr, yr + ow);
      if (!fn) ecg_rt1_act_apply(p->act, yr, (size_t)2 * ow);
    }
#endif
    for (; oy < oh; oy++) {
      float *yr = yc + (size_t)oy * ow;
      dw_row(ow, kh * kw, plane + oy * rs, toff, wk, b, yr);
      if (!fn) ecg_rt1_act_apply(p->act, yr, (size_t)ow);
    }
    if (fn) p->act.fn(yc, (size_t)oh * ow, p->act.arg);
  }
}

#ifdef ECG_AVX512

#define ECG_DW_KWMAX 8
/* act on one vector in kernels that store a vector at a time: Relu, Clip and SiLU inline
 * (SiLU: efficientnet's every conv), the other kinds out of line (act512_call); an
 * ECG_ACT_FN epilogue is left to the caller (applied to the stored run). */
ECG_AI __m512 act512_cheap(const ecg_act act, __m512 x) {
  switch (act.kind) {
  case ECG_ACT_NONE: case ECG_ACT_FN: return x;
  case ECG_ACT_RELU: return _mm512_max_ps(x, _mm512_setzero_ps());
  case ECG_ACT_SILU: return _mm512_mul_ps(x, sigmoid512(x));
  case ECG_ACT_CLIP: return act512(act, x);
  default: return act512_call(act, x);
  }
}
/* acc[r][cc] (after the activation) -> output row oy + r, columns ox0 + 16*cc .. (clipped
 * to ow) of the plane yc. */
ECG_AI void dw512_store(const int R, const int C, const ecg_conv_params *p, __m512 acc[8][4], float *yc, int oy,
                        int ox0) {
  const int ow = p->ow;
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    float *yr = yc + (size_t)(oy + r) * ow;
#pragma GCC unroll 4
    for (int cc = 0; cc < C; cc++) {
      const int ox = ox0 + 16 * cc;
      const __m512 x = act512_cheap(p->act, acc[r][cc]);
      if (ox + 16 <= ow) _mm512_storeu_ps(yr + ox, x);
      else _mm512_mask_storeu_ps(yr + ox, tail_mask(ow - ox), x);
    }
  }
}
/* Output rows oy .. oy+R-1, columns ox0 .. ox0+16*C-1 (stores clipped to ow) of one
 * depthwise output plane: acc = bias + sum over taps of w * input, the input read in place
 * from xc [h, w] (stride S = 1, or 2: two loads and an even-lane permute), rows outside the
 * image read from zrow (w zero floats). mk[(2*cc + half)*ECG_DW_KWMAX + kj]: load mask of chunk cc,
 * tap column kj (half 1: the second load of stride 2), lanes inside [0, w) only. */
ECG_AI void dw512_blk(const int R, const int C, const int S, const ecg_conv_params *p, const float *xc,
                      const float *zrow, const float *wk, float bias, float *yc, int oy, int ox0,
                      const __mmask16 *mk) {
  const int kh = p->kh, kw = p->kw, w = p->w, h = p->h;
  __m512 acc[8][4];
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int cc = 0; cc < C; cc++) acc[r][cc] = _mm512_set1_ps(bias);
  const intptr_t shift = ((intptr_t)ox0 * S - p->pl) * (intptr_t)sizeof(float);
  for (int ki = 0; ki < kh; ki++) {
    uintptr_t rb[8]; /* address of input column ox0*S - pl of the tap row of output row r */
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      int iy = (oy + r) * p->sh - p->pt + ki * p->dh;
      rb[r] = (uintptr_t)((unsigned)iy < (unsigned)h ? xc + (size_t)iy * w : zrow) + shift;
    }
    const float *wr = wk + (size_t)ki * kw;
    intptr_t o = 0; /* bytes: kj * dw floats */
    const intptr_t od = (intptr_t)p->dw * (intptr_t)sizeof(float);
    for (int kj = 0; kj < kw; kj++, o += od) {
      const __m512 wv = _mm512_set1_ps(wr[kj]);
#pragma GCC unroll 4
      for (int cc = 0; cc < C; cc++) {
        const __mmask16 m0 = mk[2 * cc * ECG_DW_KWMAX + kj], m1 = mk[(2 * cc + 1) * ECG_DW_KWMAX + kj];
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
          const uintptr_t a = rb[r] + o + (uintptr_t)(64 * S * cc);
          __m512 v = _mm512_maskz_loadu_ps(m0, (const float *)a);
          if (S == 2) v = _mm512_permutex2var_ps(v, ev, _mm512_maskz_loadu_ps(m1, (const float *)(a + 64)));
          acc[r][cc] = _mm512_fmadd_ps(wv, v, acc[r][cc]);
        }
      }
    }
  }
  dw512_store(R, C, p, acc, yc, oy, ox0);
}

/* dw512_blk for 3x3 kernels, stride S both ways, no dilation: each input row is loaded
 * once per tap column and feeds the up to 3 output rows that read it (R + 2 rows loaded
 * for R output rows at stride 1, 2R + 1 at stride 2, instead of 3R), the 9 weights held
 * in registers. Same arguments and results as dw512_blk. */
ECG_AI void dw512_blk3(const int R, const int C, const int S, const ecg_conv_params *p, const float *xc,
                       const float *zrow, const float *wk, float bias, float *yc, int oy, int ox0,
                       const __mmask16 *mk) {
  const int w = p->w, h = p->h;
  __m512 acc[8][4], wv[9];
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
#pragma GCC unroll 9
  for (int t = 0; t < 9; t++) wv[t] = _mm512_set1_ps(wk[t]);
#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int cc = 0; cc < C; cc++) acc[r][cc] = _mm512_set1_ps(bias);
  const intptr_t shift = ((intptr_t)ox0 * S - p->pl) * (intptr_t)sizeof(float);
#pragma GCC unroll 17
  for (int u = 0; u < (R - 1) * S + 3; u++) { /* input row oy*S - pt + u */
    const int iy = oy * S - p->pt + u;
    const uintptr_t rb = (uintptr_t)((unsigned)iy < (unsigned)h ? xc + (size_t)iy * w : zrow) + shift;
#pragma GCC unroll 3
    for (int kj = 0; kj < 3; kj++) {
#pragma GCC unroll 4
      for (int cc = 0; cc < C; cc++) {
        const uintptr_t a = rb + (uintptr_t)(kj * (int)sizeof(float)) + (uintptr_t)(64 * S * cc);
        __m512 v = _mm512_maskz_loadu_ps(mk[2 * cc * ECG_DW_KWMAX + kj], (const float *)a);
        if (S == 2)
          v = _mm512_permutex2var_ps(v, ev, _mm512_maskz_loadu_ps(mk[(2 * cc + 1) * ECG_DW_KWMAX + kj], (const float *)(a + 64)));
#pragma GCC unroll 3
        for (int ki = 0; ki < 3; ki++) { /* output row r reads input row r*S + ki */
          const int r = (u - ki) / S;
          if (u - ki >= 0 && (u - ki) % S == 0 && r < R) acc[r][cc] = _mm512_fmadd_ps(wv[ki * 3 + kj], v, acc[r][cc]);
        }
      }
    }
  }
  dw512_store(R, C, p, acc, yc, oy, ox0);
}

/* dw512_blk3 applies: 3x3 taps, no dilation, equal strides (sw is 1 or 2 here). */
static inline int dw_k3(const ecg_conv_params *p) {
  return p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && p->sh == p->sw;
}
#define ECG_DWB(R, C)                                                                             \
  static void dw512_##R##_##C(int S, const ecg_conv_params *p, const float *xc, const float *zrow, \
                              const float *wk, float bias, float *yc, int oy, int ox0,           \
                              const __mmask16 *mk) {                                              \
    const int k3 = dw_k3(p);                                                                      \
    if (S == 1 && k3) dw512_blk3(R, C, 1, p, xc, zrow, wk, bias, yc, oy, ox0, mk);                 \
    else if (k3) dw512_blk3(R, C, 2, p, xc, zrow, wk, bias, yc, oy, ox0, mk);                      \
    else if (S == 1) dw512_blk(R, C, 1, p, xc, zrow, wk, bias, yc, oy, ox0, mk);                  \
    else dw512_blk(R, C, 2, p, xc, zrow, wk, bias, yc, oy, ox0, mk);                              \
  }
ECG_DWB(1, 1) ECG_DWB(2, 1) ECG_DWB(3, 1) ECG_DWB(4, 1) ECG_DWB(5, 1) ECG_DWB(6, 1) ECG_DWB(7, 1) ECG_DWB(8, 1)
ECG_DWB(1, 2) ECG_DWB(2, 2) ECG_DWB(3, 2) ECG_DWB(4, 2) ECG_DWB(5, 2) ECG_DWB(6, 2) ECG_DWB(7, 2) ECG_DWB(8, 2)
ECG_DWB(1, 3) ECG_DWB(2, 3) ECG_DWB(3, 3) ECG_DWB(4, 3) ECG_DWB(5, 3)
ECG_DWB(1, 4) ECG_DWB(2, 4) ECG_DWB(3, 4) ECG_DWB(4, 4)
#undef ECG_DWB
typedef void (*dw512_fn)(int, const ecg_conv_params *, const float *, const float *, const float *, float, float *,
                         int, int, const __mmask16 *);

/* One output plane (image img, output channel oc) straight from the input: column groups
 * of C <= 4 chunks of 16, rows in blocks of 8/C (about 8 accumulators). */
static void dw512_plane(const ecg_conv_params *p, const float *x, const float *w, const float *bias, float *y,
                        const float *zrow, long t) {
  static const dw512_fn tab[4][8] = {
      {dw512_1_1, dw512_2_1, dw512_3_1, dw512_4_1, dw512_5_1, dw512_6_1, dw512_7_1, dw512_8_1},
      {dw512_1_2, dw512_2_2, dw512_3_2, dw512_4_2, dw512_5_2, dw512_6_2, dw512_7_2, dw512_8_2},
      {dw512_1_3, dw512_2_3, dw512_3_3, dw512_4_3, dw512_5_3},
      {dw512_1_4, dw512_2_4, dw512_3_4, dw512_4_4}};
  /* rows per block: about 8 accumulators, or 16 for 3x3 kernels (dw512_blk3: 16 + 9 weights) */
  static const int rows_of[2][4] = {{8, 4, 3, 2}, {8, 8, 5, 4}}; /* [3x3 kernel][C - 1] */
  const int mult = p->m / p->c, oc = (int)(t % p->m), img = (int)(t / p->m), ic = oc / mult;
  const int S = p->sw, ow = p->ow, oh = p->oh, kw = p->kw;
  const float *xc = x + ((size_t)img * p->c + ic) * p->h * p->w;
  const float *wk = w + (size_t)oc * p->kh * kw;
  float *yc = y + ((size_t)img * p->m + oc) * oh * ow;
  const float b = bias ? bias[oc] : 0.f;
  const int nch = cdiv(ow, 16), k3 = dw_k3(p);
  __mmask16 mk[4 * 2 * ECG_DW_KWMAX];
  for (int c0 = 0; c0 < nch;) {
    const int C = imin(4, nch - c0), ox0 = 16 * c0, R = rows_of[k3 != 0][C - 1];
    for (int cc = 0; cc < C; cc++)
      for (int kj = 0; kj < kw; kj++) {
        int base = (ox0 + 16 * cc) * S + kj * p->dw - p->pl;
        mk[2 * cc * ECG_DW_KWMAX + kj] = col_mask(base, p->w);
        mk[(2 * cc + 1) * ECG_DW_KWMAX + kj] = col_mask(base + 16, p->w);
      }
    const int nb = cdiv(oh, R); /* row blocks of (almost) equal size */
    for (int q = 0, oy = 0; q < nb; q++) {
      const int r = (oh - oy) / (nb - q) + ((oh - oy) % (nb - q) != 0);
      tab[C - 1][r - 1](S, p, xc, zrow, wk, b, yc, oy, ox0, mk);
      oy += r;
    }
    c0 += C;
  }
  /* a generated epilogue once on the finished plane (in L1/L2): one long run it can
   * vectorise, instead of a call per row segment of 16..64 floats */
  if (p->act.kind == ECG_ACT_FN) p->act.fn(yc, (size_t)oh * ow, p->act.arg);
}

/* Depthwise convolution by blocks of 16 channels (AVX-512; one filter per channel, m == c,
 * horizontal stride 1 or 2): for image img, channels c0 .. c0+15 and a band of output rows,
 * the band's input rows are transposed (16x16 register transposes) into a zero-padded
 * channel-interleaved tile Xp [row][col][16 channels], each output position is then one
 * vector of 16 channels, acc = bias + sum over taps of w[tap] (16 channels: the block's
 * [16][kh*kw] weights transposed to [kh*kw][16] per task) * Xp[...] (R positions of a row at a time, the input read as
 * the FMAs' memory operands), the activation applied to the tile Yt [position][16], and Yt
 * transposed back into the 16 NCHW planes (runs of 16 consecutive positions, masked
 * stores). NCHW planes of 7x7 .. 28x28, stride 2 and 5x5 kernels leave most lanes of a
 * row-vectorised kernel empty or spend them on even/odd permutes; here every lane is a
 * channel. Measured on Zen 4 (rt_test --bench dw): see dw_cb. */
#define CB_YT 16384 /* floats of the output tile Yt of a band (64 KiB) */
typedef struct {
  int nb;      /* output rows per band */
  int wp, hb;  /* Xp: columns (padded) and rows of a band */
} cb_geom;
static cb_geom cb_shape(const ecg_conv_params *p) {
  cb_geom g;
  g.nb = imax(1, imin(p->oh, CB_YT / (16 * p->ow)));
  g.wp = (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1;
  g.hb = (g.nb - 1) * p->sh + (p->kh - 1) * p->dh + 1;
  return g;
}
/* Floats of one thread's scratch: Xp, Yt (16 positions of slack: the last transpose
 * reads a whole 16-position chunk), the block's weights [kh*kw][16] and alignment. */
static size_t cb_per_thread(const ecg_conv_params *p) {
  const cb_geom g = cb_shape(p);
  return (size_t)g.hb * g.wp * 16 + ((size_t)g.nb * p->ow + 16) * 16 + (size_t)cdiv(p->kh * p->kw, 16) * 256 + 96;
}

/* Depthwise convs computed by channel blocks: one filter per channel (m == c), horizontal
 * stride 1 or 2, and kernels of 16 taps or more (5x5: the even/odd permutes and tap loads
 * of dw512_plane cost more than the transposes) or output rows of at most 8 columns
 * (7x7 planes: dw512_plane leaves 9 of 16 lanes empty). Measured on Zen 4, 1 thread,
 * GFLOP/s dw512_plane -> channel blocks (rt_test --bench dw): 5x5 672x14x14 s1 33.8 ->
 * 58.7, 240x28x28 s1 42.9 -> 61.6, 144x56x56 s2 22.1 -> 46.2, 1152x7x7 s1 15.6 -> 50.1;
 * 3x3 960x7x7 s1 17.5 -> 28.5; but 3x3 576x14x14 s1 43.6 -> 37.3, 144x56x56 s1 54.5 ->
 * 41.7, 192x28x28 s2 25.7 -> 23.4 (kept on dw512_plane: 9 taps do not pay for the
 * transposes). */
static int dw_cb(const ecg_conv_params *p) {
  if (!conv_is_dw(p) || p->m != p->c || (p->sw != 1 && p->sw != 2)) return 0;
#ifdef ECG_DWCB_OVERRIDE /* measuring and testing both kernels: ECG_DWCB=0|1 */
  if (getenv("ECG_DWCB")) return atoi(getenv("ECG_DWCB"));
#endif
  return p->kh * p->kw >= 16 || p->ow <= 8;
}

/* r[0..16) = the 16x16 transpose of r[0..16) (row i, lane j -> row j, lane i). */
ECG_AI void tr16(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int g = 0; g < 4; g++) {
    u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; j++) {
    __m512 v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44), v1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xEE);
    __m512 w0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44), w1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xEE);
    r[j] = _mm512_shuffle_f32x4(v0, w0, 0x88);
    r[4 + j] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
    r[8 + j] = _mm512_shuffle_f32x4(v1, w1, 0x88);
    r[12 + j] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
  }
}

/* dst[j][l] = src[l * plane + j] for columns j < n and lanes l < nl (0 for l >= nl): n
 * columns of nl channel rows (NCHW, rows plane floats apart) into NCHWc16 positions, 16
 * columns per tr16. Masked loads never touch the columns past n. */
static void c16_from_rows(const float *src, size_t plane, int nl, int n, float *dst) {
  for (int c0 = 0; c0 < n; c0 += 16) {
    const int k = imin(16, n - c0);
    const __mmask16 m = tail_mask(k);
    __m512 v[16];
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++) v[l] = l < nl ? _mm512_maskz_loadu_ps(m, src + (size_t)l * plane + c0) : _mm512_setzero_ps();
    tr16(v);
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) { /* constant indices: v stays in registers */
      if (j >= k) break;
      _mm512_storeu_ps(dst + (size_t)(c0 + j) * 16, v[j]);
    }
  }
}

/* R consecutive output positions of one row: yt[r*16 ..] = bias + sum_taps wt[tap] *
 * xr[(ki*dh)*rs + (kj*dw)*16 + r*S*16] (xr: Xp at the row's first tap row and the first
 * position's column). */
ECG_AI void cb_pos(const int R, const int S, const float *xr, ptrdiff_t rs, const float *wt, int kh, int kw, int dh,
                   int dw, __m512 bias, ecg_act act, float *yt) {
  __m512 acc[8];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) acc[r] = bias;
  for (int ki = 0; ki < kh; ki++) {
    const float *xk = xr + (ptrdiff_t)ki * dh * rs;
    for (int kj = 0; kj < kw; kj++, wt += 16) {
      const __m512 w = _mm512_loadu_ps(wt);
      const float *xq = xk + (ptrdiff_t)kj * dw * 16;
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) acc[r] = _mm512_fmadd_ps(w, _mm512_loadu_ps(xq + r * S * 16), acc[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) _mm512_storeu_ps(yt + r * 16, act512_cheap(act, acc[r]));
}
#define ECG_CBP(R, S)                                                                                     \
  static void cb_pos_##R##_##S(const float *xr, ptrdiff_t rs, const float *wt, int kh, int kw, int dh, int dw, \
                               __m512 bias, ecg_act act, float *yt) {                                    \
    cb_pos(R, S, xr, rs, wt, kh, kw, dh, dw, bias, act, yt);                                             \
  }
ECG_CBP(1, 1) ECG_CBP(2, 1) ECG_CBP(3, 1) ECG_CBP(4, 1) ECG_CBP(5, 1) ECG_CBP(6, 1) ECG_CBP(7, 1) ECG_CBP(8, 1)
ECG_CBP(1, 2) ECG_CBP(2, 2) ECG_CBP(3, 2) ECG_CBP(4, 2) ECG_CBP(5, 2) ECG_CBP(6, 2) ECG_CBP(7, 2) ECG_CBP(8, 2)
#undef ECG_CBP
typedef void (*cb_pos_fn)(const float *, ptrdiff_t, const float *, int, int, int, int, __m512, ecg_act, float *);

/* Task t = (img * nblk + blk) * nband + band of dw_cb_run. c16 0: x, y NCHW, wd the ONNX
 * weights [m][kh*kw] (transposed per task), res unused. c16 1: x, y and res (may be NULL)
 * NCHWc16 (ecg_nchwc.h), wd the NCHWc16 depthwise packing [ceil(m/16)][kh*kw][16] (already
 * Wt's layout); the input rows are copied, not transposed, the tiles computed straight
 * into y's band, then + res, the activation and lanes past m zeroed on the band. */
static void cb_task(const ecg_conv_params *p, const float *x, const float *wd, const float *bias, float *y,
                    float *buf, long t, int c16, const float *res) {
  static const cb_pos_fn tab[2][8] = {
      {cb_pos_1_1, cb_pos_2_1, cb_pos_3_1, cb_pos_4_1, cb_pos_5_1, cb_pos_6_1, cb_pos_7_1, cb_pos_8_1},
      {cb_pos_1_2, cb_pos_2_2, cb_pos_3_2, cb_pos_4_2, cb_pos_5_2, cb_pos_6_2, cb_pos_7_2, cb_pos_8_2}};
  const cb_geom g = cb_shape(p);
  const int nblk = cdiv(p->m, 16), nband = cdiv(p->oh, g.nb);
  const int band = (int)(t % nband), blk = (int)(t / nband % nblk), img = (int)(t / nband / nblk);
  const int c0 = 16 * blk, nc = imin(16, p->m - c0), oy0 = band * g.nb, nb = imin(g.nb, p->oh - oy0);
  const int h = p->h, w = p->w, ow = p->ow, khw = p->kh * p->kw, wp = g.wp;
  const int hb = (nb - 1) * p->sh + (p->kh - 1) * p->dh + 1;
  float *xp = align64(buf), *yt = align64(xp + (size_t)g.hb * wp * 16);
  float *wt = align64(yt + ((size_t)g.nb * ow + 16) * 16);
  if (c16) wt = (float *)wd + (size_t)blk * khw * 16;
  for (int t0 = 0; t0 < khw && !c16; t0 += 16) { /* weights [16 channels][khw] -> wt [khw][16] */
    const __mmask16 m = tail_mask(khw - t0);
    __m512 r[16];
#pragma GCC unroll 16
    for (int c = 0; c < 16; c++) r[c] = c < nc ? _mm512_maskz_loadu_ps(m, wd + (size_t)(c0 + c) * khw + t0) : _mm512_setzero_ps();
    tr16(r);
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) _mm512_storeu_ps(wt + (size_t)(t0 + j) * 16, r[j]);
  }
  const float *xc = x + (c16 ? ((size_t)img * nblk + blk) * 16 : (size_t)img * p->c + c0) * h * w;
  const int wv = imax(0, imin(w, wp - p->pl)); /* input columns the band reads */
  /* Xp rows u = padded rows oy0*sh + u: image row oy0*sh - pt + u */
  for (int u = 0; u < hb; u++) {
    float *d = xp + (size_t)u * wp * 16;
    const int iy = oy0 * p->sh - p->pt + u;
    if (iy < 0 || iy >= h || wv == 0) {
      memset(d, 0, (size_t)wp * 16 * sizeof(float));
      continue;
    }
    if (p->pl > 0) memset(d, 0, (size_t)imin(p->pl, wp) * 16 * sizeof(float));
    if (p->pl + wv < wp) memset(d + (size_t)(p->pl + wv) * 16, 0, (size_t)(wp - p->pl - wv) * 16 * sizeof(float));
    if (c16) { /* the NCHWc16 row's positions as they are */
      memcpy(d + (size_t)p->pl * 16, xc + (size_t)iy * w * 16, (size_t)wv * 16 * sizeof(float));
      continue;
    }
    const float *src = xc + (size_t)iy * w;
    for (int x0 = 0; x0 < wv; x0 += 16) {
      const __mmask16 m = tail_mask(wv - x0);
      __m512 r[16];
#pragma GCC unroll 16
      for (int c = 0; c < 16; c++) r[c] = c < nc ? _mm512_maskz_loadu_ps(m, src + (size_t)c * h * w + x0) : _mm512_setzero_ps();
      tr16(r);
      float *dc = d + (size_t)(p->pl + x0) * 16;
      const int nx = imin(16, wv - x0);
#pragma GCC unroll 16
      for (int j = 0; j < 16; j++)
        if (j < nx) _mm512_storeu_ps(dc + j * 16, r[j]);
    }
  }
  /* compute Yt [nb*ow][16] */
  const __mmask16 cm = tail_mask(nc);
  const __m512 bv = bias ? _mm512_maskz_loadu_ps(cm, bias + c0) : _mm512_setzero_ps();
  const int S = p->sw;
  const ptrdiff_t rs = (ptrdiff_t)wp * 16;
  const size_t yo = c16 ? ((((size_t)img * nblk + blk) * p->oh + oy0) * ow) * 16 : 0; /* the band in y */
  /* a built-in activation applied to the tiles before the store (a residual comes first:
   * then after the band), not in a pass of its own: mobilenet_v2's 32x112x112 in NCHWc16
   * spent 8% of its time in that pass (perf) */
  const ecg_act none = {ECG_ACT_NONE, 0, 0, 0, 0};
  const int fuse = p->act.kind != ECG_ACT_NONE && p->act.kind != ECG_ACT_FN && !(c16 && res);
  const ecg_act fa = fuse ? p->act : none;
  if (c16) yt = y + yo;
  for (int r = 0; r < nb; r++) {
    const float *xr = xp + (ptrdiff_t)r * p->sh * rs;
    float *yr = yt + (size_t)r * ow * 16;
    for (int ox = 0; ox < ow;) {
      const int R = imin(8, ow - ox);
      tab[S - 1][R - 1](xr + (ptrdiff_t)ox * S * 16, rs, wt, p->kh, p->kw, p->dh, p->dw, bv, fa, yr + (size_t)ox * 16);
      ox += R;
    }
  }
  const int P = nb * ow;
  if (c16) {
    if (res)
      for (size_t i = 0; i < (size_t)P * 16; i += 16)
        _mm512_storeu_ps(yt + i, _mm512_add_ps(_mm512_loadu_ps(yt + i), _mm512_loadu_ps(res + yo + i)));
    if (p->act.kind == ECG_ACT_FN) p->act.fn(yt, (size_t)P * 16, p->act.arg);
    else if (p->act.kind != ECG_ACT_NONE && !fuse) act512_apply(p->act, yt, (size_t)P * 16);
    if (nc < 16)
      for (size_t i = 0; i < (size_t)P * 16; i += 16) _mm512_storeu_ps(yt + i, _mm512_maskz_loadu_ps(cm, yt + i));
    return;
  }
  /* Yt -> the nc planes, runs of 16 positions (the activation applied in the tiles: fa) */
  float *yc = y + ((size_t)img * p->m + c0) * p->oh * ow + (size_t)oy0 * ow;
  const size_t plane = (size_t)p->oh * ow;
  for (int q0 = 0; q0 < P; q0 += 16) {
    __m512 r[16];
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) r[j] = _mm512_loadu_ps(yt + (size_t)(q0 + j) * 16);
    tr16(r);
    const __mmask16 m = tail_mask(P - q0);
#pragma GCC unroll 16
    for (int c = 0; c < 16; c++)
      if (c < nc) _mm512_mask_storeu_ps(yc + c * plane + q0, m, r[c]);
  }
  if (p->act.kind == ECG_ACT_FN)
    for (int c = 0; c < nc; c++) p->act.fn(yc + c * plane, (size_t)P, p->act.arg);
}

static void dw_cb_run(const ecg_conv_params *p, const float *x, const float *wd, const float *bias, float *y,
                      float *scratch, int c16, const float *res) {
  const cb_geom g = cb_shape(p);
  const long tasks = (long)p->n * cdiv(p->m, 16) * cdiv(p->oh, g.nb);
  const size_t per = cb_per_thread(p);
  int T = ecg_threads();
  if ((double)p->n * p->m * p->oh * p->ow * p->kh * p->kw < 5e4) T = 1;
  (void)T;
  /* static: the tasks are alike, and a dynamic schedule's per-task atomics cost more than
   * they balance on planes of 7x7 and 14x14 (rt_test --bench, 2 threads, 3 interleaved
   * rounds: mobilenet_v2's 960x7x7 38-46 -> 69-75 GFLOP/s, efficientnet_b0's 5x5 1152x7x7
   * 94 -> 116-132) */
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long t = 0; t < tasks; t++) cb_task(p, x, wd, bias, y, scratch + (size_t)ecg_tid() * per, t, c16, res);
}
#endif

/* Depthwise (channel multiplier mult = m/c): per input channel, build a zero-padded plane
 * split by the horizontal stride (phase r holds padded columns r, r+sw, ...), so every tap
 * reads a contiguous row; then each output row is a sum of shifted rows. */
static void conv_dw(const ecg_conv_params *p, const float *x, const float *w, const float *bias,
                    float *y, float *scratch) {
#ifdef ECG_AVX512
  if (dw_cb(p)) {
    dw_cb_run(p, x, w, bias, y, scratch, 0, NULL);
    return;
  }
  if (dw_direct(p)) {
    float *zrow = align64(scratch);
    memset(zrow, 0, ((size_t)p->w + 64) * sizeof(float));
    const long planes = (long)p->n * p->m;
    int T = ecg_threads();
    if ((double)p->n * p->m * p->oh * p->ow * p->kh * p->kw < 5e4) T = 1;
    (void)T;
    /* static, as dw_cb_run: mobilenet_v2's 576x14x14, 2 threads, 69 -> 95-98 GFLOP/s */
    ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
    for (long t = 0; t < planes; t++) dw512_plane(p, x, w, bias, y, zrow, t);
    return;
  }
#endif
  const size_t per = conv_per_thread(p), plane_floats = (size_t)dw_plane_rows(p) * p->sw * dw_row_len(p);
  const long total = (long)p->n * p->c;
  int T = ecg_threads();
  if ((double)p->n * p->m * p->oh * p->ow * p->kh * p->kw < 5e4) T = 1;
  (void)T;
  ECG_PRAGMA(omp parallel num_threads(T) if (T > 1))
  {
    /* Only image rows (and for stride 1 only image columns) are ever written: pads stay 0. */
    float *plane = align64(scratch + (size_t)ecg_tid() * per);
    memset(plane, 0, plane_floats * sizeof(float));
    ECG_PRAGMA(omp for schedule(dynamic, 1))
    for (long t = 0; t < total; t++) dw_channel(p, x, w, bias, y, plane, t);
  }
}

#ifdef ECG_AVX512
/* Direct convolution for few input channels and taps (a CNN's first layer: 3 channels,
 * 3x3, stride 2), where the im2col panels of the GEMM path (K = 27 rows) cost as much as
 * the multiply-adds. Per output row, the c * kh input rows it reads are copied once into
 * zero-padded rows (dr_build): for stride 2 split into their even and odd columns, so
 * every tap of every output vector is one unaligned load with no mask and no permute.
 * A register tile is DR_R vectors of 16 output columns times DR_J output channels: per
 * tap, DR_R loads and DR_J weight broadcasts feed DR_R * DR_J FMAs (24 accumulators,
 * bound by the FMA ports). The weights are packed at model creation as
 * [ceil(m/DR_J)][K][DR_J] (K = c*kh*kw in ONNX's order, zero past m). The previous kernel
 * (one vector of 16 columns times 16 channels, a broadcast per FMA, masked loads and a
 * permute per tap for stride 2) was bound by its loads: squeezenet1_1's 3x224x224->64
 * 3x3s2 at 99 GFLOP/s (rt_test --bench, 1 thread). resnet18's 7x7 (K = 147) stays with
 * the blocked path (K <= 36). */
static int conv_direct(const ecg_conv_params *p) {
  return p->algo == ECG_RT_CONV_AUTO && p->group == 1 && p->c <= 4 && (long)p->c * p->kh * p->kw <= 36 && p->kw <= ECG_DW_KWMAX &&
         (p->sw == 1 || p->sw == 2) && p->m >= 16 && p->ow >= 16;
}

/* Floats of one phase row of dr_build's buffer: output vectors of 16 columns (rounded
 * up) plus the taps' reach, rounded up to 16. */
static int dr_phase_len(const ecg_conv_params *p) {
  return cdiv(cdiv(p->ow, 16) * 16 + (p->kw - 1) * p->dw / p->sw + 1, 16) * 16;
}
/* Floats of a thread's row buffer: c * kh rows of sw phase rows, and 16 for alignment. */
static size_t dr_buf_floats(const ecg_conv_params *p) { return (size_t)p->c * p->kh * p->sw * dr_phase_len(p) + 16; }

/* The input rows output row oy of image img reads: buf row (ci*kh + ki) phase ph, column i
 * = input column S*i + ph - pl of row oy*sh - pt + ki*dh (0 outside the image). Returns a
 * bit mask of the rows inside the image (c * kh <= 36 < 64); the others are not written. */
#ifndef DR_PF_NEXT /* 1: prefetch the next output row's input rows (ibr16's measurements) */
#define DR_PF_NEXT 1
#endif
ECG_AI unsigned long long dr_build(const int S, const ecg_conv_params *p, const float *xi, int oy, float *buf) {
  const int L = dr_phase_len(p), h = p->h, w = p->w;
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  unsigned long long in = 0;
  for (int ci = 0; ci < p->c; ci++)
    for (int ki = 0; ki < p->kh; ki++) {
      const int iy = oy * p->sh - p->pt + ki * p->dh, rr = ci * p->kh + ki;
      if ((unsigned)iy >= (unsigned)h) continue;
      in |= 1ull << rr;
      const float *row = xi + ((size_t)ci * h + iy) * w;
      float *d = buf + (size_t)rr * S * L;
      for (int i = 0; i < L; i += 16) {
        const int c0 = S * i - p->pl; /* input column of lane 0 of phase 0 */
        const __m512 a = _mm512_maskz_loadu_ps(col_mask(c0, w), fptr(row, c0));
        if (S == 1) {
          _mm512_storeu_ps(d + i, a);
        } else {
          const __m512 b = _mm512_maskz_loadu_ps(col_mask(c0 + 16, w), fptr(row, c0 + 16));
          _mm512_storeu_ps(d + i, _mm512_permutex2var_ps(a, ev, b));
          _mm512_storeu_ps(d + L + i, _mm512_permutex2var_ps(a, od, b));
        }
      }
    }
#if DR_PF_NEXT
  for (int ci = 0; ci < p->c; ci++) /* the next output row's input rows, while this one computes */
    for (int ki = 0; ki < p->kh; ki++) {
      const int iy = (oy + 1) * p->sh - p->pt + ki * p->dh;
      if ((unsigned)iy >= (unsigned)h) continue;
      const float *row = xi + ((size_t)ci * h + iy) * w;
      for (int c = 0; c < w; c += 16) _mm_prefetch((const char *)(row + c), _MM_HINT_T0);
    }
#endif
  return in;
}

/* The R x DR_J register tile at output columns ox0 .. ox0 + 16R - 1 of channels co0 ..
 * co0 + DR_J - 1 (clipped to m) of the output row whose input rows dr_build put in buf:
 * channel co0 + j's row at yr + j * plane. */
ECG_AI void dr_tile(const int S, const int R, const int KW, const ecg_conv_params *p, const float *buf,
                    unsigned long long in, const float *wq, const float *bias, const int co0, float *yr, size_t plane,
                    int ox0) {
  const int L = dr_phase_len(p), kh = p->kh, kw = KW ? KW : p->kw, dw = KW ? 1 : p->dw, ow = p->ow;
  __m512 acc[DR_R][DR_J];
#pragma GCC unroll 8
  for (int j = 0; j < DR_J; j++)
#pragma GCC unroll 3
    for (int r = 0; r < R; r++) acc[r][j] = _mm512_setzero_ps();
  const float *wk = wq;
  for (int rr = 0; rr < p->c * kh; rr++, wk += (size_t)kw * DR_J) {
    if (!(in >> rr & 1)) continue; /* a padding row adds nothing */
    const float *b = buf + (size_t)rr * S * L + ox0;
#pragma GCC unroll 3
    for (int kj = 0; kj < kw; kj++) {
      const int off = kj * dw;
      const float *s = b + (size_t)(off % S) * L + off / S;
      __m512 v[DR_R];
#pragma GCC unroll 3
      for (int r = 0; r < R; r++) v[r] = _mm512_loadu_ps(s + 16 * r);
      const float *wt = wk + (size_t)kj * DR_J;
#pragma GCC unroll 8
      for (int j = 0; j < DR_J; j++) {
        const __m512 wj = _mm512_set1_ps(wt[j]);
#pragma GCC unroll 3
        for (int r = 0; r < R; r++) acc[r][j] = _mm512_fmadd_ps(wj, v[r], acc[r][j]);
      }
    }
  }
  const int nco = imin(DR_J, p->m - co0), relu = p->act.kind == ECG_ACT_RELU;
  ecg_act ra = p->act;
  ra.kind = ECG_ACT_RELU; /* a constant kind: act512 inlines to the one max */
#pragma GCC unroll 8
  for (int j = 0; j < DR_J; j++) { /* constant indices: acc stays in registers */
    if (j >= nco) break;
    /* bias after the sum, as the GEMM epilogue adds it: the same roundings as im2col */
    const __m512 bj = _mm512_set1_ps(bias ? bias[co0 + j] : 0.f);
#pragma GCC unroll 3
    for (int r = 0; r < R; r++) {
      __m512 v = bias ? _mm512_add_ps(acc[r][j], bj) : acc[r][j];
      if (relu) v = act512(ra, v);
      _mm512_mask_storeu_ps(yr + j * plane + ox0 + 16 * r, tail_mask(ow - ox0 - 16 * r), v);
    }
  }
  /* the other kinds on the stored rows, out of this register-heavy loop */
  if (!relu && p->act.kind != ECG_ACT_NONE && p->act.kind != ECG_ACT_FN)
    for (int j = 0; j < nco; j++) act512_apply(p->act, yr + j * plane + ox0, (size_t)imin(16 * R, ow - ox0));
}

/* Output row oy of channel blocks q0 .. q1-1 (DR_J channels each) of image img: channel
 * co's row at y0 + (co - DR_J * q0) * plane. buf: dr_build's rows of oy. */
ECG_AI void dr_row(const int S, const ecg_conv_params *p, const float *wp, const float *bias, const float *buf,
                   unsigned long long in, int q0, int q1, float *y0, size_t plane) {
  const int K = p->c * p->kh * p->kw, nv = cdiv(p->ow, 16);
  for (int q = q0; q < q1; q++) {
    const int co0 = DR_J * q;
    const float *wq = wp + (size_t)q * K * DR_J;
    float *yr = y0 + (size_t)(co0 - DR_J * q0) * plane;
    int v = 0;
    if (p->kw == 3 && p->dw == 1) { /* the common first layer: its taps unrolled */
      for (; v + DR_R <= nv; v += DR_R) dr_tile(S, DR_R, 3, p, buf, in, wq, bias, co0, yr, plane, 16 * v);
      if (nv - v == 2) dr_tile(S, 2, 3, p, buf, in, wq, bias, co0, yr, plane, 16 * v);
      else if (nv - v == 1) dr_tile(S, 1, 3, p, buf, in, wq, bias, co0, yr, plane, 16 * v);
    } else {
      for (; v + DR_R <= nv; v += DR_R) dr_tile(S, DR_R, 0, p, buf, in, wq, bias, co0, yr, plane, 16 * v);
      if (nv - v == 2) dr_tile(S, 2, 0, p, buf, in, wq, bias, co0, yr, plane, 16 * v);
      else if (nv - v == 1) dr_tile(S, 1, 0, p, buf, in, wq, bias, co0, yr, plane, 16 * v);
    }
    if (p->act.kind == ECG_ACT_FN) /* a generated epilogue: once per finished channel row */
      for (int j = 0; j < imin(DR_J, p->m - co0); j++) p->act.fn(yr + (size_t)j * plane, (size_t)p->ow, p->act.arg);
  }
}

/* Output rows oy0 .. oy1-1 of channel blocks q0 .. q1-1 (DR_J channels each) of image img. */
ECG_AI void dr_rows(const int S, const ecg_conv_params *p, const float *x, const float *wp, const float *bias, float *y,
                    float *buf, int img, int q0, int q1, int oy0, int oy1) {
  const size_t plane = (size_t)p->oh * p->ow;
  const float *xi = x + (size_t)img * p->c * p->h * p->w;
  for (int oy = oy0; oy < oy1; oy++) {
    const unsigned long long in = dr_build(S, p, xi, oy, buf);
    dr_row(S, p, wp, bias, buf, in, q0, q1, y + ((size_t)img * p->m + DR_J * q0) * plane + (size_t)oy * p->ow, plane);
  }
}
/* ------------------------------------------------------------------ Conv -> MaxPool */

/* Conv [+ activation] -> MaxPool as one kernel (ecg_rt1_conv2d_maxpool; AGO §III intensive
 * fusion of a compute-intensive operator with the window reduction after it): where the
 * conv runs as conv_direct (a CNN's first layer), each thread computes the conv rows its
 * pooled rows need into a ring of kh rows per channel ([channel][kh slots][ow], in L2),
 * each conv row once, and pools them from there, so the conv output (squeezenet1_1:
 * 64x111x111, 3.15 MB) is neither written to memory nor read back. */
static int cpool_fused(const ecg_conv_params *p, const ecg_pool_params *q) {
  return conv_direct(p) && p->act.kind != ECG_ACT_FN && q->n == p->n && q->c == p->m && q->h == p->oh && q->w == p->ow &&
         q->dh == 1 && q->kh >= 1 && q->kh <= 64 && q->sh >= 1 && q->oh > 0 && q->ow > 0; /* cpool_rows: xr[64] */
}
/* Floats of a thread's scratch: dr_build's rows, the ring, alignment. */
static size_t cpool_per_thread(const ecg_conv_params *p, const ecg_pool_params *q) {
  return dr_buf_floats(p) + (size_t)cdiv(p->m, DR_J) * DR_J * q->kh * p->ow + 32;
}

/* Pooled rows py0 .. py1-1 of max pool q (pr: its row state) over a conv's output rows
 * (oh rows of ow), which row(ctx, cy, dst, cst) computes, nch channels of them, into ring
 * slot cy % kh (channel k's row at dst + k * cst, cst = kh * ow): each conv row once, in
 * increasing order, and a window [lo, lo + kh) never reaches back past the kh rows computed
 * last. yc: the pooled plane of the ring's first channel (planes q->oh * q->ow apart). The
 * Conv -> MaxPool kernels of conv_direct (cpool_rows) and of the blocked conv (bkpool_run)
 * share it. */
static void cpool_ring(const ecg_pool_params *q, const ecg_pool_rows *pr, int oh, int ow, int nch, float *ring,
                       void (*row)(void *ctx, int cy, float *dst, size_t cst), void *ctx, float *yc, int py0, int py1) {
  const int RS = q->kh;
  const size_t cst = (size_t)RS * ow; /* floats between two channels of the ring */
  int next = -1; /* conv rows below next are computed (-1: none yet) */
  for (int py = py0; py < py1; py++) {
    const int lo = py * q->sh - q->pt, a = imax(lo, 0), b = imin(lo + RS, oh);
    for (int cy = next < 0 ? a : imax(a, next); cy < b; cy++) row(ctx, cy, ring + (size_t)(cy % RS) * ow, cst);
    if (b > next) next = b;
    const float *xr[64];
    int nr = 0;
    for (int cy = a; cy < b; cy++) xr[nr++] = ring + (size_t)(cy % RS) * ow;
    ecg_rt1_pool_row_planes(pr, xr, nr, nr, cst, nch, yc + (size_t)py * q->ow, (size_t)q->oh * q->ow);
  }
}

/* conv_direct's rows for cpool_ring: blocks b0 .. b1-1 of image xi, dr_build's rows in buf */
typedef struct {
  const ecg_conv_params *p;
  const float *xi, *wp, *bias;
  float *buf;
  int b0, b1;
} dr_src;
ECG_AI void dr_src_row(const int S, void *ctx, int cy, float *dst, size_t cst) {
  const dr_src *d = (const dr_src *)ctx;
  const unsigned long long in = dr_build(S, d->p, d->xi, cy, d->buf);
  dr_row(S, d->p, d->wp, d->bias, d->buf, in, d->b0, d->b1, dst, cst);
}
static void dr_src_row_s1(void *ctx, int cy, float *dst, size_t cst) { dr_src_row(1, ctx, cy, dst, cst); }
static void dr_src_row_s2(void *ctx, int cy, float *dst, size_t cst) { dr_src_row(2, ctx, cy, dst, cst); }

/* Pooled rows py0 .. py1-1 of the channels of blocks b0 .. b1-1 (DR_J channels each) of
 * image img, their conv rows computed into this thread's ring (cpool_ring). */
ECG_AI void cpool_rows(const int S, const ecg_conv_params *p, const ecg_pool_params *q, const ecg_pool_rows *pr,
                       const float *x, const float *wp, const float *bias, float *y, float *buf, float *ring, int img,
                       int b0, int b1, int py0, int py1) {
  const int c0 = DR_J * b0, c1 = imin(p->m, DR_J * b1);
  dr_src d = {p, x + (size_t)img * p->c * p->h * p->w, wp, bias, buf, b0, b1};
  cpool_ring(q, pr, p->oh, p->ow, c1 - c0, ring, S == 1 ? dr_src_row_s1 : dr_src_row_s2, &d,
             y + ((size_t)img * p->m + c0) * q->oh * q->ow, py0, py1);
}

/* Rows r0 .. r1-1 of blocks b0 .. b1-1 of image img: conv output rows into y (q NULL), or
 * pooled rows of pool q (cpool_rows; buf and ring this thread's). */
ECG_AI void dr_range(const int S, const ecg_conv_params *p, const ecg_pool_params *q, const ecg_pool_rows *pr,
                     const float *x, const float *wp, const float *bias, float *y, float *buf, float *ring, int img, int b0,
                     int b1, int r0, int r1) {
  if (q) cpool_rows(S, p, q, pr, x, wp, bias, y, buf, ring, img, b0, b1, r0, r1);
  else dr_rows(S, p, x, wp, bias, y, buf, img, b0, b1, r0, r1);
}
static void dr_range_s1(const ecg_conv_params *p, const ecg_pool_params *q, const ecg_pool_rows *pr, const float *x,
                        const float *wp, const float *bias, float *y, float *buf, float *ring, int img, int b0, int b1,
                        int r0, int r1) {
  dr_range(1, p, q, pr, x, wp, bias, y, buf, ring, img, b0, b1, r0, r1);
}
static void dr_range_s2(const ecg_conv_params *p, const ecg_pool_params *q, const ecg_pool_rows *pr, const float *x,
                        const float *wp, const float *bias, float *y, float *buf, float *ring, int img, int b0, int b1,
                        int r0, int r1) {
  dr_range(2, p, q, pr, x, wp, bias, y, buf, ring, img, b0, b1, r0, r1);
}

/* conv_direct's call: the conv alone (q NULL) or fused with max pool q (ecg_rt1_conv2d_maxpool).
 * The conv alone: each thread takes a contiguous run of (image, channel block) units with
 * all their rows when there are enough units, so a thread's output is whole channel planes,
 * as the next kernel's split over planes reads them (a max pool; squeezenet1_1 at 2
 * threads, first conv + max pool 364 + 179 -> 271 + 124 us against rows handed out in
 * chunks); runs of output rows otherwise (fewer units than threads). Fused with a pool:
 * always runs of pooled rows of every channel, as the next kernel, a 1x1 conv's GEMM split
 * over positions, reads them from the same core's L2 (squeezenet1_1 at 2 threads, 3
 * interleaved profiles: its fire2 squeeze conv 63-72 -> 38-42 us, the fused kernel 263-285
 * against 257-276; end to end, 7 interleaved rounds, median 3.26 -> 3.08 ms). */
static void conv_direct_run(const ecg_conv_params *p, const ecg_pool_params *q, const float *x, const float *wp,
                            const float *bias, float *y, float *scratch) {
  const int nq = cdiv(p->m, DR_J), oh = q ? q->oh : p->oh;
  const size_t per = q ? cpool_per_thread(p, q) : dr_buf_floats(p);
  ecg_pool_rows pr;
  if (q) ecg_rt1_pool_rows_init(&pr, q, 1);
  int T = ecg_threads();
  if ((double)p->n * p->m * p->oh * p->ow * p->c * p->kh * p->kw < 1e5) T = 1;
  (void)T;
  ECG_PRAGMA(omp parallel num_threads(T) if (T > 1))
  {
    const int nt = ecg_team_size(), tid = ecg_tid();
    float *buf = align64(scratch + (size_t)tid * per), *ring = q ? align64(buf + dr_buf_floats(p)) : NULL;
    void (*const run)(const ecg_conv_params *, const ecg_pool_params *, const ecg_pool_rows *, const float *,
                      const float *, const float *, float *, float *, float *, int, int, int, int, int) =
        p->sw == 1 ? dr_range_s1 : dr_range_s2;
    const long units = (long)p->n * nq;
    if (units >= nt && !q) { /* the conv alone */
      const long u0 = units * tid / nt, u1 = units * (tid + 1) / nt;
      for (long u = u0; u < u1;) {
        const int img = (int)(u / nq), b0 = (int)(u % nq), b1 = (int)imin(nq, b0 + (int)(u1 - u));
        run(p, NULL, NULL, x, wp, bias, y, buf, NULL, img, b0, b1, 0, oh);
        u += b1 - b0;
      }
    } else {
      const long rows = (long)p->n * oh, r0 = rows * tid / nt, r1 = rows * (tid + 1) / nt;
      for (long r = r0; r < r1;) {
        const int img = (int)(r / oh), y0 = (int)(r % oh), y1 = (int)imin(oh, y0 + (int)(r1 - r));
        run(p, q, q ? &pr : NULL, x, wp, bias, y, buf, ring, img, 0, nq, y0, y1);
        r += y1 - y0;
      }
    }
  }
}
/* ------------------------------------------------------------------ blocked direct conv */

/* Group-1 convolutions as a direct sum on 16-channel blocks (the NCHWc16 register tiling
 * oneDNN and ONNX Runtime's MLAS use; issue 13 item 2), inside an NCHW call: the input
 * image is copied once into a zero-padded NCHWc16 plane xp [ceil(c/16)][Hp][Wp][16]
 * (Hp = (oh-1)*sh + (kh-1)*dh + 1 rows from input row -pt, Wp likewise from column -pl;
 * lanes past c are 0), the weights are packed at model creation as
 * [ceil(m/16)][ceil(c/16)][kh][kw][16 in][16 out] (zero past c and m), and each register
 * tile is BK_RW consecutive output positions of one output row times two 16-channel output
 * blocks: per input channel, two weight vectors and one broadcast per position feed
 * 2 * BK_RW FMAs (28 accumulators, bound by the FMA ports, not the loads). A tile's
 * weights (two blocks: 2 * ceil(c/16) * kh * kw KiB) stay in L2 while the tiles of every
 * row reuse them; the weights come from memory once per call, as the direct sum reads each
 * once. The accumulators are transposed back to NCHW rows in registers (tr16: 64
 * shuffles per 16x16 tile; it replaced a 1 KiB tile read back by one gather per output
 * channel, rt_test --bench RT_BENCH_ALGO=4, 1 thread, 2 rounds: squeezenet1_1's
 * 16x55x55->64 3x3 168-180 -> 195 GFLOP/s, 512x13x13->1000 1x1 162-170 -> 188, resnet18's
 * 64x56x56->64 3x3 174 -> 197), with bias, activation and a generated epilogue per row
 * segment. Compared with im2col GEMM: no packing of a K x positions panel per channel
 * block, and no micro-kernel columns wasted on planes of 49 or 196 positions; compared
 * with Winograd it reads the weights once instead of the 4x larger U. */
#define BK_RW 14 /* output positions per register tile (2 x 14 accumulators) */
#define BK_WG_U_BYTES (16.0 * 1024 * 1024)
#define BK_BAND 56 /* output positions per work item (whole rows) */
#ifndef BK_BAND_MAJOR /* 0: work items pair-major always (conv_blocked_run) */
#define BK_BAND_MAJOR 1
#endif
#define BK_1X1_BYTES (512.0 * 1024)
#define BK_1X1_MAXPOS 196 /* positions of a blocked 1x1 conv (a 14x14 plane) */
#define BK_1X1_MAXPOS_HALF 64 /* BK_1X1_MAXPOS where fma512_halved() (an 8x8 plane) */
#define BK_WG_MIN_C 64    /* input channels from which a Winograd-shaped conv stays Winograd */

/* Whether this AVX-512 CPU runs a 512-bit FMA as two 256-bit halves (AMD family 19h, Zen 4:
 * two 256-bit FMA pipes; Intel's AVX-512 server cores have two 512-bit ones), so that the
 * blocked direct sum peaks at half the FLOPs per cycle while Winograd's transforms (loads,
 * adds, shuffles) cost about the same: the Winograd rule below then keeps few-channel and
 * 256-channel 3x3 convs Winograd. CPUID as GCC's and clang's __builtin_cpu_is read it
 * (their runtime library's CPU model, filled once; __builtin_cpu_init returns at once after
 * the first call): no state of ours, the runtime keeps no writable globals. */
static int fma512_halved(void) {
  __builtin_cpu_init();
  return __builtin_cpu_is("amdfam19h") ? 1 : 0;
}

/* Lanes per position of the padded plane: 16, or c when the input has fewer channels (a
 * CNN's first layer: 3), so its plane is not padded to 16 channels. */
static int bk_lanes(const ecg_conv_params *p) { return p->c < 16 ? p->c : 16; }

/* The geometry conv_blocked_run computes p with: an unpadded stride-1 1x1 conv as one row
 * of h*w positions (NCHW planes are contiguous), so a 7x7 plane makes register tiles of 13
 * or 14 positions instead of rows of 7; p otherwise. */
static ecg_conv_params bk_view(const ecg_conv_params *p) {
  ecg_conv_params v = *p;
  if (p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && !(p->pt | p->pl | p->pb | p->pr)) {
    v.w = v.ow = p->h * p->w;
    v.h = v.oh = 1;
  }
  return v;
}

static void bk_geom(const ecg_conv_params *p, int *Hp, int *Wp) {
  *Hp = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1;
  *Wp = (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1;
}

/* Floats of the shared padded input plane (one image at a time). */
static size_t bk_plane_floats(const ecg_conv_params *p0) {
  const ecg_conv_params v = bk_view(p0), *p = &v;
  int Hp, Wp;
  bk_geom(p, &Hp, &Wp);
  return (size_t)cdiv(p->c, 16) * Hp * Wp * bk_lanes(p) + 16;
}

/* The OB x RW register tile at output row oy, columns ox0 .. ox0+RW-1, of the output
 * blocks whose packed weights start at wq (the second block wstride floats later);
 * out[o * BK_RW + r] gets block o's 16 channels at position r. Meanwhile pfn cache lines
 * from pf (and as many from pf + wstride for the second block) are prefetched into L2,
 * npf per tap. */
ECG_AI void bk_tile(const int OB, const int RW, const int H, const int XS, const int CL, const ecg_conv_params *p,
                    const float *xp, int Hp, int Wp, const float *wq, size_t wstride, int oy, int ox0, int cb0, int cb1,
                    __m512 *part, const float *pf, int npf, int pfn) {
  __m512 a0[BK_RW], a1[BK_RW];
  if (cb0 == 0) {
#pragma GCC unroll 14
    for (int r = 0; r < RW; r++) a0[r] = a1[r] = _mm512_setzero_ps();
  } else {
#pragma GCC unroll 14
    for (int r = 0; r < RW; r++) {
      a0[r] = _mm512_loadu_ps((const float *)&part[r]);
      if (OB > 1) a1[r] = _mm512_loadu_ps((const float *)&part[BK_RW + r]);
    }
  }
  const int kh = p->kh, kw = p->kw, cl = CL ? CL : bk_lanes(p);
  const size_t xs = XS ? (size_t)XS : (size_t)p->sw * cl; /* floats between positions */
  const size_t rs = H ? (size_t)p->sh * Wp * cl : 0;   /* H: positions H.. are the next output row's */
  for (int cb = cb0; cb < cb1; cb++)
    for (int ky = 0; ky < kh; ky++) {
      const float *xr = xp + (((size_t)cb * Hp + (size_t)oy * p->sh + (size_t)ky * p->dh) * Wp + (size_t)ox0 * p->sw) * cl;
      const float *wk = wq + ((size_t)cb * kh + ky) * kw * 256;
      for (int kx = 0; kx < kw; kx++, wk += 256) {
        const float *xk = xr + (size_t)kx * p->dw * cl;
        for (int l = 0; l < npf && pfn > 0; l++, pfn--, pf += 16) {
          _mm_prefetch((const char *)pf, _MM_HINT_T1);
          if (OB > 1) _mm_prefetch((const char *)(pf + wstride), _MM_HINT_T1);
        }
#pragma GCC unroll 4
        for (int ic = 0; ic < cl; ic++) {
          const __m512 w0 = _mm512_loadu_ps(wk + ic * 16);
          const __m512 w1 = OB > 1 ? _mm512_loadu_ps(wk + wstride + ic * 16) : w0;
#pragma GCC unroll 14
          for (int r = 0; r < RW; r++) {
            const __m512 b = _mm512_set1_ps(H && r >= H ? xk[rs + (r - H) * xs + ic] : xk[r * xs + ic]);
            a0[r] = _mm512_fmadd_ps(w0, b, a0[r]);
            if (OB > 1) a1[r] = _mm512_fmadd_ps(w1, b, a1[r]);
          }
        }
      }
    }
#pragma GCC unroll 14
  for (int r = 0; r < RW; r++) {
    _mm512_storeu_ps((float *)&part[r], a0[r]);
    if (OB > 1) _mm512_storeu_ps((float *)&part[BK_RW + r], a1[r]);
  }
}

typedef void (*bk_fn)(const ecg_conv_params *, const float *, int, int, const float *, size_t, int, int, int, int,
                      __m512 *, const float *, int, int);
/* One instance per blocks (OB), positions (RW) and position stride: XS 16 (stride 1) and
 * 32 (stride 2) as constants, so the RW broadcasts address with immediate offsets from one
 * register instead of RW index registers (which spilled); 0 for other strides. XS 3 and 6:
 * 3 input channels (RGB first layers) at strides 1 and 2, the 3 channels unrolled. */
#define BK_INST(OB, RW, XS)                                                                                    \
  static void bk_##OB##_##RW##_##XS(const ecg_conv_params *p, const float *xp, int Hp, int Wp, const float *wq, \
                                    size_t ws, int oy, int ox0, int cb0, int cb1, __m512 *part,                \
                                    const float *pf, int npf, int pfn) {                                       \
    bk_tile(OB, RW, 0, XS, XS == 3 || XS == 6 ? 3 : 0, p, xp, Hp, Wp, wq, ws, oy, ox0, cb0, cb1, part, pf, npf, pfn); \
  }
#define BK_INST_RW(OB, XS)                                                                                     \
  BK_INST(OB, 1, XS) BK_INST(OB, 2, XS) BK_INST(OB, 3, XS) BK_INST(OB, 4, XS) BK_INST(OB, 5, XS)              \
  BK_INST(OB, 6, XS) BK_INST(OB, 7, XS) BK_INST(OB, 8, XS) BK_INST(OB, 9, XS) BK_INST(OB, 10, XS)             \
  BK_INST(OB, 11, XS) BK_INST(OB, 12, XS) BK_INST(OB, 13, XS) BK_INST(OB, 14, XS)
#define BK_ROW(OB, XS)                                                                                         \
  {0, bk_##OB##_1_##XS, bk_##OB##_2_##XS, bk_##OB##_3_##XS, bk_##OB##_4_##XS, bk_##OB##_5_##XS,               \
   bk_##OB##_6_##XS, bk_##OB##_7_##XS, bk_##OB##_8_##XS, bk_##OB##_9_##XS, bk_##OB##_10_##XS,                 \
   bk_##OB##_11_##XS, bk_##OB##_12_##XS, bk_##OB##_13_##XS, bk_##OB##_14_##XS}
BK_INST_RW(1, 0)
BK_INST_RW(2, 0)
BK_INST_RW(1, 16)
BK_INST_RW(2, 16)
BK_INST_RW(1, 32)
BK_INST_RW(2, 32)
BK_INST_RW(1, 3)
BK_INST_RW(2, 3)
BK_INST_RW(1, 6)
BK_INST_RW(2, 6)
static const bk_fn bk_fns[5][2][BK_RW + 1] = {{BK_ROW(1, 0), BK_ROW(2, 0)}, {BK_ROW(1, 16), BK_ROW(2, 16)},
                                              {BK_ROW(1, 32), BK_ROW(2, 32)}, {BK_ROW(1, 3), BK_ROW(2, 3)},
                                              {BK_ROW(1, 6), BK_ROW(2, 6)}};
/* Row pairs: outputs BK_PH positions wide (7x7 planes: resnet18's layer4) fill a tile with
 * two rows of BK_PH, the second row's broadcasts from a second base (one register), so the
 * tile is 2 x 14 instead of 2 x 7 accumulators. XS as above (0, 16, 32: 16-lane planes). */
#define BK_PH 7
#define BK_INSTP(OB, XS)                                                                                        \
  static void bkp_##OB##_##XS(const ecg_conv_params *p, const float *xp, int Hp, int Wp, const float *wq, size_t ws, \
                              int oy, int ox0, int cb0, int cb1, __m512 *part, const float *pf, int npf, int pfn) { \
    bk_tile(OB, 2 * BK_PH, BK_PH, XS, 0, p, xp, Hp, Wp, wq, ws, oy, ox0, cb0, cb1, part, pf, npf, pfn);        \
  }
BK_INSTP(1, 0)
BK_INSTP(2, 0)
BK_INSTP(1, 16)
BK_INSTP(2, 16)
BK_INSTP(1, 32)
BK_INSTP(2, 32)
static const bk_fn bk_pair_fns[3][2] = {{bkp_1_0, bkp_2_0}, {bkp_1_16, bkp_2_16}, {bkp_1_32, bkp_2_32}};

/* Writes tile `acc` (OB blocks from output block q, RW positions) to the NCHW rows of image
 * y: + bias and a built-in activation (a generated epilogue runs once per finished band of
 * rows, conv_blocked_run). */
static void bk_store(const ecg_conv_params *p, const __m512 *acc, int OB, int RW, int q, const float *bias, float *y,
                     int oy, int ox0) {
  const size_t plane = (size_t)p->oh * p->ow;
  const __mmask16 ms = tail_mask(RW);
  const ecg_act act = p->act;
  for (int o = 0; o < OB; o++) {
    __m512 v[16];
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++) v[r] = r < RW ? _mm512_loadu_ps((const float *)&acc[o * BK_RW + r]) : _mm512_setzero_ps();
    tr16(v); /* v[j]: channel co0 + j at the RW positions */
    const int co0 = 16 * (q + o), nco = imin(16, p->m - co0);
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) { /* constant indices: v stays in registers */
      if (j >= nco) break;
      __m512 u = v[j];
      if (bias) u = _mm512_add_ps(u, _mm512_set1_ps(bias[co0 + j])); /* after the sum, as the GEMM epilogue */
      if (act.kind == ECG_ACT_RELU) u = _mm512_max_ps(u, _mm512_setzero_ps());
      else if (act.kind != ECG_ACT_NONE && act.kind != ECG_ACT_FN) u = act512_call(act, u);
      float *yr = y + (size_t)(co0 + j) * plane + (size_t)oy * p->ow + ox0;
      _mm512_mask_storeu_ps(yr, ms, u);
    }
  }
}

/* bk_store for NCHWc16 output (conv_blocked_run with c16): tile `acc` + bias + res (an
 * NCHWc16 tensor of y's shape, or NULL) and a built-in activation, written as whole
 * positions of 16 channels; lanes past m written as 0 (the NCHWc contract, ecg_nchwc.h). */
static void bk_store_c16(const ecg_conv_params *p, const __m512 *acc, int OB, int RW, int q, const float *bias,
                         const float *res, float *y, int oy, int ox0) {
  const ecg_act act = p->act;
  for (int o = 0; o < OB; o++) {
    const int co0 = 16 * (q + o);
    const __mmask16 live = tail_mask(p->m - co0);
    const __m512 bv = bias ? _mm512_maskz_loadu_ps(live, bias + co0) : _mm512_setzero_ps();
    const size_t off = (((size_t)(q + o) * p->oh + oy) * p->ow + ox0) * 16;
    for (int r = 0; r < RW; r++) {
      __m512 u = _mm512_add_ps(_mm512_loadu_ps((const float *)&acc[o * BK_RW + r]), bv);
      if (res) u = _mm512_add_ps(u, _mm512_loadu_ps(res + off + (size_t)r * 16));
      if (act.kind == ECG_ACT_RELU) u = _mm512_max_ps(u, _mm512_setzero_ps());
      else if (act.kind != ECG_ACT_NONE && act.kind != ECG_ACT_FN) u = act512_call(act, u);
      _mm512_storeu_ps(y + off + (size_t)r * 16, _mm512_maskz_mov_ps(live, u));
    }
  }
}

static void bk_pack(const ecg_conv_params *p, const float *w, float *packed) {
  const int CB = cdiv(p->c, 16), MB = cdiv(p->m, 16), kk = p->kh * p->kw;
  for (int q = 0; q < MB; q++)
    for (int cb = 0; cb < CB; cb++)
      for (int k = 0; k < kk; k++)
        for (int i = 0; i < 16; i++)
          for (int o = 0; o < 16; o++) {
            const int oc = 16 * q + o, ic = 16 * cb + i;
            packed[(((size_t)q * CB + cb) * kk + k) * 256 + i * 16 + o] =
                oc < p->m && ic < p->c ? w[((size_t)oc * p->c + ic) * kk + k] : 0.f;
          }
}

/* The band geometry of conv_blocked_run: output rows per work item (R: about BK_BAND
 * positions, so a chunk's weights serve several register tiles from L1) and input blocks
 * per chunk (CBK: two output blocks' weights of a chunk within about 24 KiB of L1). */
static void bk_bands(const ecg_conv_params *p, int *R, int *CBK) {
  *R = imax(1, imin(p->oh, BK_BAND / p->ow));
  *CBK = imax(1, 12 / (p->kh * p->kw));
}

/* Floats of one thread's partial sums: a band's register tiles (2 x BK_RW vectors each). */
static size_t bk_part_floats(const ecg_conv_params *p0) {
  const ecg_conv_params v = bk_view(p0), *p = &v;
  int R, CBK;
  bk_bands(p, &R, &CBK);
  return (size_t)R * cdiv(p->ow, BK_RW) * 2 * BK_RW * 16;
}

/* The padded input plane xp [ceil(c/16)][Hp][Wp][cl lanes] of image xb (NCHW, or NCHWc16 with
 * c16), rows split over the team (an orphaned omp for: call it inside the parallel region;
 * its implicit barrier ends it). */
static void bk_pad(const ecg_conv_params *p, const float *xb, float *xp, int Hp, int Wp, int c16) {
  const int CB = cdiv(p->c, 16), cl = bk_lanes(p);
  ECG_PRAGMA(omp for schedule(static))
  for (long t = 0; t < (long)CB * Hp; t++) { /* padded row t of xp */
    const int cb = (int)(t / Hp), iy = (int)(t % Hp) - p->pt;
    float *row = xp + (size_t)t * Wp * cl;
    const int x0 = imax(0, p->pl), x1 = imin(Wp, p->w + p->pl); /* padded columns holding input */
    if (iy < 0 || iy >= p->h || cl != 16 || x1 <= x0) {
      memset(row, 0, (size_t)Wp * cl * sizeof(float));
      if (iy < 0 || iy >= p->h) continue;
    }
    if (c16 && x1 > x0) { /* the NCHWc16 row's positions as they are */
      memset(row, 0, (size_t)x0 * 16 * sizeof(float));
      memset(row + (size_t)x1 * 16, 0, (size_t)(Wp - x1) * 16 * sizeof(float));
      memcpy(row + (size_t)x0 * 16, xb + (((size_t)cb * p->h + iy) * p->w + (x0 - p->pl)) * 16,
             (size_t)(x1 - x0) * 16 * sizeof(float));
      continue;
    }
    if (cl == 16 && x1 > x0) { /* 16 columns of the block's 16 channel rows, transposed in registers */
      memset(row, 0, (size_t)x0 * 16 * sizeof(float));
      memset(row + (size_t)x1 * 16, 0, (size_t)(Wp - x1) * 16 * sizeof(float));
      c16_from_rows(xb + ((size_t)cb * 16 * p->h + iy) * p->w + (x0 - p->pl), (size_t)p->h * p->w, imin(16, p->c - cb * 16),
                    x1 - x0, row + (size_t)x0 * 16);
      continue;
    }
    for (int l = 0; l < 16 && cb * 16 + l < p->c; l++) {
      const float *src = xb + ((size_t)(cb * 16 + l) * p->h + iy) * p->w;
      for (int c = x0; c < x1; c++) row[(size_t)c * cl + l] = src[c - p->pl];
    }
  }
}

/* The team of a blocked conv of one image (p: its bk_view): one thread under 1e5
 * multiply-adds per image, else ecg_threads(). */
static int bk_team(const ecg_conv_params *p) {
  return (double)p->m * p->oh * p->ow * p->c * p->kh * p->kw < 1e5 ? 1 : ecg_threads();
}

/* The tile kernels' input form (bk_fns' first index): 16-lane planes at stride 1 or 2,
 * 3-lane planes (RGB first layers) at stride 1 or 2, other strides (0). */
static int bk_xsel(const ecg_conv_params *p) {
  const int cl = bk_lanes(p), s12 = p->sw == 1 ? 1 : p->sw == 2 ? 2 : 0;
  return !s12 ? 0 : cl == 16 ? s12 : cl == 3 ? 2 + s12 : 0;
}

/* The blocked direct conv p: x and y NCHW (c16 0: the input transposed into xp's padded
 * NCHWc16 plane, the tiles transposed back into y's rows), or x, y and res [n, m, oh, ow]
 * (may be NULL) NCHWc16 (c16 1, ecg_nchwc.h; only for p->c >= 16: the plane's rows are
 * copied, or x is read in place when p has no pads; an ECG_ACT_FN epilogue runs on a band's
 * positions of each block, as ecg_nchwc.h says). */
static void conv_blocked_run(const ecg_conv_params *p0, const float *x, const float *wp, const float *bias, float *y,
                             float *xp, int c16, const float *res) {
  const ecg_conv_params flat = bk_view(p0), *p = &flat;
  int Hp, Wp, R, CBK;
  bk_geom(p, &Hp, &Wp);
  bk_bands(p, &R, &CBK);
  const int CB = cdiv(p->c, 16), MB = cdiv(p->m, 16), pairs = cdiv(MB, 2);
  const int nseg = cdiv(p->ow, BK_RW), rw = cdiv(p->ow, nseg), oh = p->oh;
  /* a one-row view (bk_view's 1x1 convs) is cut into bands of SB register tiles, not one
   * band of h*w positions: squeezenet1_1's 128x55x55->16 in NCHWc16 was one work item for
   * any number of threads and kept 217 tiles of partial sums live (layout cost database,
   * 2 threads: 0.112 ms against 0.056 for NCHW's GEMM) */
  const int SB = oh == 1 ? imax(1, BK_BAND / rw) : nseg, bands = oh == 1 ? cdiv(nseg, SB) : cdiv(oh, R);
  const size_t wblk = (size_t)CB * p->kh * p->kw * 256; /* floats of one output block's weights */
  const int xsel = bk_xsel(p);
  float *parts = xp + bk_plane_floats(p);
  const size_t pf = bk_part_floats(p);
  /* NCHWc16 input without pads: its planes are the padded plane (rows of w positions) */
  const int inplace = c16 && !(p->pt | p->pl | p->pb | p->pr);
  if (inplace) {
    Hp = p->h;
    Wp = p->w;
  }
  const int T = bk_team(p);
  (void)T;
  /* Work items band-major (bm: a thread takes a run of bands, every pair of output blocks)
   * where a team shares an input plane larger than the weights, so that each thread reads
   * the rows of the plane it padded itself (and the next kernel, split over positions,
   * the rows it wrote); pair-major otherwise, each thread streaming its pairs' weights once.
   * In the model at 2 threads (Xeon, family 6 model 167): squeezenet1_1 2.766 -> 2.712 ms (8
   * alternating rounds of 400 runs, medians; its 16- and 32-channel expands and squeezes);
   * resnet18's 7x7 stem 952 -> 901 us and 64x56x56->128 s2 conv 447 -> 420 (4 profile rounds),
   * though its MaxPool after the stem, split by planes, went 102 -> 128 us (a pool split by
   * rows measured no better); mobilenet_v2, mnasnet1_0 within the noise. */
  const int bm = BK_BAND_MAJOR && T > 1 && (size_t)CB * Hp * Wp * bk_lanes(p) > wblk * MB;
  for (int b = 0; b < p->n; b++) {
    const float *xb = x + (size_t)b * (c16 ? (size_t)CB * 16 : (size_t)p->c) * p->h * p->w;
    const size_t ybo = (size_t)b * (c16 ? (size_t)MB * 16 : (size_t)p->m) * p->oh * p->ow;
    float *yb = y + ybo;
    const float *rb = res ? res + ybo : NULL;
    const float *xpb = inplace ? xb : xp;
    ECG_PRAGMA(omp parallel num_threads(T) if (T > 1)) {
      if (!inplace) bk_pad(p, xb, xp, Hp, Wp, c16);
      __m512 *part = (__m512 *)(void *)(parts + (size_t)ecg_tid() * pf);
      ECG_PRAGMA(omp for schedule(static))
      for (long it = 0; it < (long)pairs * bands; it++) {
        const int q = 2 * (int)(bm ? it % pairs : it / bands), band = (int)(bm ? it / pairs : it % bands), OB = imin(2, MB - q);
        const int oy0 = oh == 1 ? 0 : band * R, rows = oh == 1 ? 1 : imin(R, oh - oy0);
        const int sg0 = oh == 1 ? band * SB : 0, sg1 = oh == 1 ? imin(nseg, sg0 + SB) : nseg; /* the band's tiles in a row */
        const int px0 = sg0 * rw, npx = imin(p->ow, sg1 * rw) - px0; /* its positions in a row: [px0, px0 + npx) */
        const float *wq = wp + (size_t)q * wblk;
        /* rows paired into one tile (bk_pair_fns) where the output is BK_PH wide */
        const int pair = p->ow == BK_PH && rw == BK_PH && xsel <= 2 && oh > 1;
        const int ntile = (pair ? cdiv(rows, 2) : rows) * (sg1 - sg0);
        for (int cb0 = 0; cb0 < CB; cb0 += CBK) {
          const int cb1 = imin(CB, cb0 + CBK);
          /* the next chunk's weights (both blocks) into L2 while this one computes, a share
           * per register tile, spread over the tile's taps (bk_tile): inside a model the
           * weights come from memory on every run. Spread, not issued in one burst before
           * each tile: rt_test --bench-cold, 1 thread, 2 rounds, resnet18's 256x14x14->256
           * 175-180 -> 193-197 GFLOP/s, 512x7x7->512 155-159 -> 167-179, 3x3s2 256->512
           * 147-152 -> 161-169; resnet18 end to end, 5 interleaved rounds, medians: 1 thread
           * 18.39 -> 17.62 ms, 2 threads 10.57 -> 10.18 */
          size_t nl = cb1 < CB ? (size_t)imin(CB - cb1, CBK) * p->kh * p->kw * 16 : 0; /* lines per block */
          const float *nw = wq + (size_t)cb1 * p->kh * p->kw * 256;
          /* after the last chunk, the first chunk of the next item's pair when it starts a
           * new pair (its weights not in cache yet; a thread's items are consecutive):
           * mnasnet1_0's 320x7x7->1280, 3 interleaved profiles at 1 thread, 308-328 ->
           * 278-285 us; end to end, interleaved rounds, medians: mnasnet1_0 2 threads
           * 3.97 -> 3.84 ms, efficientnet_b0 1 thread 10.87 -> 10.41, 2 threads 6.24 ->
           * 6.32 in 5 rounds and 6.52 -> 6.33 in 8; mobilenet_v2 and squeezenet1_1 ties */
          const long nq = 2 * (bm ? (it + 1) % pairs : (it + 1) / bands); /* the next item's pair */
          if (cb1 == CB && nq != q && it + 1 < (long)pairs * bands) {
            nw = wp + (size_t)nq * wblk;
            nl = (size_t)imin(CB, CBK) * p->kh * p->kw * 16;
          }
          for (int r = 0, ti = 0; r < rows;) {
            const int two = pair && r + 1 < rows; /* rows r and r+1 in one tile */
            for (int sg = sg0; sg < sg1; sg++, ti++) {
              const int ox0 = sg * rw, RW = imin(rw, p->ow - ox0);
              const int l0 = (int)(nl * ti / ntile), l1 = (int)(nl * (ti + 1) / ntile);
              __m512 *slot = part + (size_t)ti * 2 * BK_RW;
              (two ? bk_pair_fns[xsel][OB - 1] : bk_fns[xsel][OB - 1][RW])(p, xpb, Hp, Wp, wq, wblk, oy0 + r, ox0, cb0, cb1, slot,
                                                                          nw + (size_t)l0 * 16,
                                                                          cdiv(l1 - l0, (cb1 - cb0) * p->kh * p->kw), l1 - l0);
              for (int h = 0; cb1 == CB && h <= two; h++) /* the second row's positions follow the first's in the tile */
                if (c16) bk_store_c16(p, slot + h * RW, OB, RW, q, bias, rb, yb, oy0 + r + h, ox0);
                else bk_store(p, slot + h * RW, OB, RW, q, bias, yb, oy0 + r + h, ox0);
            }
            r += two ? 2 : 1;
          }
        }
        /* the band's positions: rows whole rows, or npx positions of the one row */
        const size_t bpos = oh == 1 ? (size_t)npx : (size_t)rows * p->ow, boff = (size_t)oy0 * p->ow + (oh == 1 ? px0 : 0);
        if (p->act.kind == ECG_ACT_FN && c16) /* once per block on the band's positions, then lanes past m zeroed */
          for (int o = 0; o < OB; o++) {
            float *yo = yb + ((size_t)(q + o) * p->oh * p->ow + boff) * 16;
            p->act.fn(yo, bpos * 16, p->act.arg);
            const __mmask16 live = tail_mask(p->m - 16 * (q + o));
            if (live != 0xFFFF)
              for (size_t i = 0; i < bpos; i++) _mm512_storeu_ps(yo + i * 16, _mm512_maskz_loadu_ps(live, yo + i * 16));
          }
        else if (p->act.kind == ECG_ACT_FN) /* the generated epilogue: once per channel on the band's positions, contiguous in NCHW */
          for (int j = 16 * q; j < imin(p->m, 16 * (q + OB)); j++)
            p->act.fn(yb + (size_t)j * p->oh * p->ow + boff, bpos, p->act.arg);
      }
    }
  }
}

/* Whether ch channels padded to whole 16-channel blocks get at most ch / frac padded lanes. */
static int bk_pad_ok(int ch, int frac) { return (16 * cdiv(ch, 16) - ch) * frac <= ch; }

/* Whether conv p runs as the blocked direct sum (conv_blocked_run): a schedule forcing it
 * (ECG_RT_CONV_BLOCKED), or the default choice below. */
static int conv_blocked(const ecg_conv_params *p) {
  if (p->group != 1 || p->n <= 0 || conv_direct(p)) return 0;
  if (p->algo) return p->algo == ECG_RT_CONV_BLOCKED;
  /* RGB first layers with large kernels too (resnet18's 7x7s2 3->64: 144-148 -> 162-172
   * GFLOP/s, rt_test --bench, 3 interleaved rounds); 3x3 ones stay with conv_direct (its
   * 103-116 against 79-89 blocked) */
  if (p->c == 3 && p->kh * p->kw >= 25 && p->m >= 16) return 1;
  /* input channels padded to whole 16-channel blocks by at most 1/8: openwakeword_embedding's
   * 24-channel 1x3 and 3x1 convs, padded to 32 lanes, ran 2-4x slower than the GEMM path
   * (Xeon, AVX-512; 1x3 24x74x32->24 on an AMD EPYC Zen 4, rt_test --bench: 54.5 against
   * 59.8 GFLOP/s at 1 thread, 59.9 against 112 at 2); its 72-channel ones, padded to 80,
   * run faster blocked (Zen 4, rt_test --bench, GEMM against blocked, 1 thread (2 threads):
   * 3x1 72x32x8->72 65.8 -> 76.6 (87.9 -> 103), 1x3 72x30x8->72 65.7 -> 80.7 (87.2 -> 108),
   * 1x3 48x32x8->72 66.6 -> 86.8 (117 -> 116), 1x3 72x14x4->96 59.6 -> 73.6 (43 -> 101)) */
  if (p->c < 16 || !bk_pad_ok(p->c, 8)) return 0;
  /* output channels likewise, and for 1x1 convs by at most 1/16: squeezenet1_1's classifier
   * 512x13x13->1000 (8 padded channels of 1008), 3 interleaved profiles inside the model,
   * GEMM against blocked: 1 thread 1003-1093 -> 944-967 us, 2 threads 547-599 -> 516-544 */
  if (!bk_pad_ok(p->m, p->kh * p->kw == 1 ? 16 : 8)) return 0;
  /* 1x1 convs too where the plane is small and the weights large: their weights come from
   * memory on every run inside a model, and the blocked order streams each once
   * (rt_test --bench with the caches flushed, 1 thread, 3 rounds: mobilenet_v2's
   * 320x7x7->1280, 1.6 MB, 92-104 -> 113-121 GFLOP/s; 960x7x7->320, 1.2 MB, 88-100 ->
   * 98-114; 160x7x7->960, 0.6 MB, a tie, 88-95 against 80-87 once such planes run as one
   * row of positions (bk_view); up to 14x14 planes since the tile store transposes in
   * registers: squeezenet1_1's classifier 512x13x13->1000, 2 MB, inside the model 1106 ->
   * 1013 us at 1 thread, 652 -> 555 at 2). Never under 16
   * positions: conv_gemv's 1x1 planes and ecg_ibr.c's pointwise stages rely on the GEMM
   * packing. Those were an Intel Xeon; on an AMD EPYC Zen 4 (fma512_halved) only up to
   * 8x8 planes: from 10x10 the GEMM path is within 5% at 1 thread and wins at 2, at 8x8
   * the two tie or GEMM leads (rt_test --bench-cold, GFLOP/s at 1 / 2 threads, GEMM against
   * blocked, 2 rounds: 512x8x8->1000 97 / 172-185 against 96-97 / 171-193, 320x8x8->1280
   * 100-104 / 161-186 against 86-97 / 141-155, 512x10x10->1000 93-95 / 182 against 97 /
   * 156-171, 512x12x12->1000
   * 103-109 / 200-205 against 99 / 168-173; squeezenet1_1's classifier 512x13x13->1000
   * inside the model, the kernel's mean over 300 runs, 3 alternating rounds: 1 thread
   * 1672-1955 against 1696-1720 us, 2 threads 868-982 against 944-1494), while 7x7 planes
   * (49 positions: a 48-column GEMM tile and 1 column) stay blocked (320x7x7->1280 78-80
   * against 94-100 at 1 thread). */
  if (p->kh * p->kw == 1) {
    const long pos = (long)p->oh * p->ow, maxpos = fma512_halved() ? BK_1X1_MAXPOS_HALF : BK_1X1_MAXPOS;
    return pos >= 16 && pos <= maxpos && (double)p->c * p->m * sizeof(float) >= BK_1X1_BYTES && p->sh == 1 && p->sw == 1;
  }
  /* Winograd where its transformed weights U (36 floats per channel pair) stay within
   * BK_WG_U_BYTES and the input has at least BK_WG_MIN_C channels: resnet18's 64- and
   * 128-channel 3x3 layers, U 0.6 and 2.4 MB, run faster as Winograd inside the model
   * (64x56x56: 927 against 1405 us blocked, 1 thread); its 256-channel ones (U 9.4 MB)
   * measured faster blocked with the caches flushed before each run (rt_test --bench-cold:
   * 146 -> 158 GFLOP/s), but inside the model, where U stays in the last-level cache, faster
   * as Winograd (Xeon, family 6 model 167, 2 MiB L2 per core, ecg-bench --profile, 300-run
   * profiles in alternating rounds, blocked -> Winograd, per layer3 conv: 1 thread
   * 1396-1443 -> 1326-1362 us (3 rounds), 2 threads 751-806 -> 665-679 (3 rounds) and
   * 749-756 -> 659-676 (5 rounds); the whole profile 20.95 -> 20.69 and 11.34 -> 10.79 ms, then
   * 20.24 -> 20.10 and 10.89 -> 10.86 in the 5-round set), so U up to 16 MiB runs Winograd
   * there too; 512x7x7->512 (U 38 MB) stays blocked (its layer4 convs 1457-1486 us blocked
   * against 4775-5218 Winograd, 1 thread). With fewer input channels the
   * transforms are not paid back: squeezenet1_1's 3x3 expands, inside the model, 1 thread
   * (2 threads), Winograd against blocked: 16x55x55->64 371 -> 334 us (245 -> 210),
   * 32x27x27->128 326 -> 302 (200 -> 170), 48x13x13->192 172 -> 158 (113 -> 90);
   * 64x13x13->256 a tie (277 -> 285, 155 -> 155). Dilated ones too: Winograd runs them
   * per phase, on planes of (h / d) x (w / d) (mlsd_320x320_tiny's 64x80x80->64 dilation 5:
   * 16x16 phases), whose tiles waste most of the transforms; inside the model, 2 interleaved
   * profiles, Winograd against blocked: 1 thread 3277-3418 -> 2604-2727 us, 2 threads
   * 2537-2604 -> 1406-1945.
   * Those were an Intel Xeon (family 6 model 167). On an AMD EPYC Zen 4 (fma512_halved) the
   * direct sum runs at half the FLOPs per cycle, and Winograd is faster for few input
   * channels too (BK_WG_MIN_C does not apply there): rt_test --bench-cold, 1 thread
   * (2 threads), blocked against Winograd, nominal GFLOP/s: resnet18's 256x14x14->256 (U 9.4 MB) 107 -> 210 (201 -> 336),
   * squeezenet1_1's 16x55x55->64 91 -> 102 (181 -> 170), 32x27x27->128 103 -> 119 (208 ->
   * 181); 512x7x7->512 (U 38 MB) stays blocked (hot: 103 against 56); squeezenet1_1 end to
   * end with its six 16- and 32-channel 3x3 expands Winograd (ecg-partition --set-schedule
   * a=winograd), interleaved rounds, medians: 7.33 -> 6.62 ms at 1 thread (5 rounds), 3.98 ->
   * 3.74 at 2 (9 rounds). Dilated ones stay blocked (mlsd's d5: 1 thread 102 -> 137,
   * 2 threads 201 -> 174). */
  if (wg_shape_ok(p) && wg_fewer_macs(p))
    return (p->c < BK_WG_MIN_C && !fma512_halved()) || p->dh != 1 || p->dw != 1 ||
           36.0 * sizeof(float) * p->c * p->m > BK_WG_U_BYTES;
  /* other shapes from 32 input channels, as before the Winograd rule above (16-31 channels
   * not measured blocked) */
  return p->c >= 32;
}

/* Conv [+ activation] -> MaxPool as one kernel where the conv runs blocked (resnet18's 7x7
 * stride-2 RGB stem, 64x112x112, 3.2 MB, then a 3x3 stride-2 pool): as cpool_rows does for
 * conv_direct, each thread computes the conv rows its pooled rows need, every output block,
 * into a ring of kh rows per channel and pools them from there (cpool_ring), so the conv
 * output is neither written to memory nor read back. For convs with small weights (every
 * conv row reads all of them: BKP_W_BYTES) and an NCHW image, not 1x1 views or ECG_ACT_FN
 * epilogues. */
#define BKP_W_BYTES (256 * 1024)
static int bkpool_fused(const ecg_conv_params *p, const ecg_pool_params *q) {
  return conv_blocked(p) && !(p->kh == 1 && p->kw == 1) && p->act.kind != ECG_ACT_FN &&
         (double)cdiv(p->m, 16) * cdiv(p->c, 16) * p->kh * p->kw * 256 * sizeof(float) <= BKP_W_BYTES && q->n == p->n &&
         q->c == p->m && q->h == p->oh && q->w == p->ow && q->dh == 1 && q->kh >= 1 && q->kh <= 64 && q->sh >= 1 &&
         q->oh > 0 && q->ow > 0; /* cpool_ring: xr[64] */
}
/* Floats of a thread's scratch: one row's register tiles, the ring, alignment. */
static size_t bkpool_per_thread(const ecg_conv_params *p, const ecg_pool_params *q) {
  return (size_t)cdiv(p->ow, BK_RW) * 2 * BK_RW * 16 + (size_t)p->m * q->kh * p->ow + 32;
}
/* The blocked conv's rows for cpool_ring: conv row cy, every pair of output blocks, from the
 * padded plane xp; the tiles' partial sums in part (one row's segments). */
typedef struct {
  const ecg_conv_params *p, *ring; /* ring: p with oh = the ring's rows (bk_store's plane) */
  const float *xp, *wp, *bias;
  int Hp, Wp, xsel, CB, CBK, MB, nseg, rw;
  size_t wblk;
  __m512 *part;
} bk_src;
static void bk_src_row(void *ctx, int cy, float *dst, size_t cst) {
  const bk_src *b = (const bk_src *)ctx;
  const ecg_conv_params *p = b->p;
  (void)cst; /* bk_store's plane: b->ring's oh * ow, the same */
  for (int q = 0; q < b->MB; q += 2) {
    const int OB = imin(2, b->MB - q);
    const float *wq = b->wp + (size_t)q * b->wblk;
    for (int cb0 = 0; cb0 < b->CB; cb0 += b->CBK) {
      const int cb1 = imin(b->CB, cb0 + b->CBK);
      for (int sg = 0; sg < b->nseg; sg++) {
        const int ox0 = sg * b->rw, RW = imin(b->rw, p->ow - ox0);
        __m512 *slot = b->part + (size_t)sg * 2 * BK_RW;
        bk_fns[b->xsel][OB - 1][RW](p, b->xp, b->Hp, b->Wp, wq, b->wblk, cy, ox0, cb0, cb1, slot, NULL, 0, 0);
        if (cb1 == b->CB) bk_store(b->ring, slot, OB, RW, q, b->bias, dst, 0, ox0);
      }
    }
  }
}
/* bkpool_fused's kernel: per image, the padded plane shared by the team (bk_pad), then each
 * thread a run of pooled rows of every channel. scratch: bk_plane_floats(p), then
 * bkpool_per_thread(p, q) per thread. */
static void bkpool_run(const ecg_conv_params *p, const ecg_pool_params *q, const float *x, const float *wp,
                       const float *bias, float *y, float *scratch) {
  int Hp, Wp, R, CBK;
  bk_geom(p, &Hp, &Wp);
  bk_bands(p, &R, &CBK);
  ecg_conv_params ring = *p;
  ring.oh = q->kh;
  ecg_pool_rows pr;
  ecg_rt1_pool_rows_init(&pr, q, 1);
  const int nseg = cdiv(p->ow, BK_RW);
  bk_src src = {p, &ring, scratch, wp, bias, Hp, Wp, bk_xsel(p), cdiv(p->c, 16), CBK, cdiv(p->m, 16), nseg,
                cdiv(p->ow, nseg), (size_t)cdiv(p->c, 16) * p->kh * p->kw * 256, NULL};
  float *thr = scratch + bk_plane_floats(p);
  const size_t per = bkpool_per_thread(p, q);
  const int T = bk_team(p);
  (void)T;
  for (int img = 0; img < p->n; img++) {
    const float *xb = x + (size_t)img * p->c * p->h * p->w;
    ECG_PRAGMA(omp parallel num_threads(T) if (T > 1)) {
      bk_pad(p, xb, scratch, Hp, Wp, 0);
      const int nt = ecg_team_size(), tid = ecg_tid();
      bk_src mine = src;
      mine.part = (__m512 *)(void *)align64(thr + (size_t)tid * per);
      float *rg = align64((float *)(mine.part + (size_t)nseg * 2 * BK_RW));
      cpool_ring(q, &pr, p->oh, p->ow, p->m, rg, bk_src_row, &mine, y + (size_t)img * p->m * q->oh * q->ow,
                 (int)((long)q->oh * tid / nt), (int)((long)q->oh * (tid + 1) / nt));
    }
  }
}
#else
static int conv_blocked(const ecg_conv_params *p) { (void)p; return 0; }
static size_t bk_plane_floats(const ecg_conv_params *p) { (void)p; return 0; }
static size_t bk_part_floats(const ecg_conv_params *p) { (void)p; return 0; }
static void bk_pack(const ecg_conv_params *p, const float *w, float *packed) { (void)p; (void)w; (void)packed; }
static __attribute__((unused)) void conv_blocked_run(const ecg_conv_params *p, const float *x, const float *wp,
                                                     const float *bias, float *y, float *xp, int c16, const float *res) {
  (void)p; (void)x; (void)wp; (void)bias; (void)y; (void)xp; (void)c16; (void)res;
}
static int conv_direct(const ecg_conv_params *p) { (void)p; return 0; }
static size_t dr_buf_floats(const ecg_conv_params *p) { (void)p; return 0; }
static __attribute__((unused)) int dw_cb(const ecg_conv_params *p) { (void)p; return 0; }
#endif

/* ------------------------------------------------------------------ intensive fusion in channel blocks */

/* ecg_rt1_ibr (ecg_ibr.c; AGO §III-B intensive fusion, without recomputation) in channel
 * blocks of 16 for AVX-512: the expanded tensor E (a ring of rows shared by the team) and the
 * depthwise output D (per thread, one group of output rows) live in the scratch in NCHWc16
 * ([block][row][column][16]), so that
 *  - the first pointwise conv computes 2 blocks of 16 channels x 14 positions per register
 *    tile (28 accumulators; the input x broadcast from NCHW, one scalar per position and
 *    input channel) and stores them activated into E's rows: no transposes;
 *  - the depthwise conv reads each tap as one vector of 16 channels at any stride (no
 *    even/odd permutes at stride 2, which bind dw512_plane to the shuffle port);
 *  - the second pointwise conv broadcasts D's scalars the same way and transposes its
 *    tiles (tr16) into the NCHW rows of y, with b2 and act3 (a generated epilogue: on each
 *    output channel's run of the band).
 * E's rows are kept in a ring of RB = (T-1)*sh + kh rows (row r in slot r % RB): the
 * kh - sh rows two bands share are neither recomputed nor copied. Bands of T output rows
 * are sized so that E's ring fits in I16_TILE_BYTES (L2: 1 MiB measured best against 512 KiB
 * and 2 MiB on an Intel Xeon, family 6 model 167, 2 MiB L2, hot) where the whole plane's
 * ring fits there (one band), else in I16_BAND_BYTES (half of L2). Within a band, the depthwise
 * and second pointwise stages run per group of G output rows (>= 28 positions; >= 14 with a
 * team) on one thread. With several threads one team runs the whole kernel: the first stage's chunks and
 * the groups are split over it (static schedule), a barrier between them.
 * Applies (ecg_rt1_ibr16_applies): cexp a multiple of 16, or at least 64 (mnasnet's 72 and
 * 120: the last block's lanes past cexp computed from zero weights and never read),
 * horizontal stride 1 or 2, a vertical stride no larger than kh <= 16 (every row of E is
 * read); with no W1, cin == cexp. Packed weights: W1 as [ceil(cexp/16)][cin][16] (zero past
 * cexp), W2 as [ceil(cout/16)][cexp][16] (zero past cout). Scratch: E's ring, a zero row,
 * the depthwise weights as [block][kh*kw][16], and one D per thread
 * (ecg_rt1_ibr16_scratch_floats). No errors are detected at run time. */
#ifdef ECG_AVX512
#ifndef I16_TILE_BYTES
#define I16_TILE_BYTES (1024 * 1024)
#endif
#define I16_RW 14 /* positions per register tile */
/* The first pointwise stage prefetches x's chunk I16_PF_X chunks ahead, a line at each end
 * of every input channel's run (x is NCHW: cin streams the hardware prefetcher follows
 * poorly, and inside a model x comes from L3 or memory); 0: none. Where a plane's E ring
 * does not fit in I16_TILE_BYTES, bands are sized to I16_BAND_BYTES (0: half of L2), so
 * that the ring stays in L2 and fewer of its lines come cold from memory on each run. With
 * dr_build's prefetch (DR_PF_NEXT), on an AMD EPYC Zen 4 (1 MiB L2; ecg-bench --profile,
 * alternating rounds of 100 runs, 1 thread, the medians of each kernel's mean): against
 * neither prefetch and 256 KiB bands (10 rounds), mnasnet1_0's first four chains 649 -> 599,
 * 468 -> 438, 403 -> 369, 381 -> 366 us; against the runtime before the three changes (1 MiB
 * bands, 8 rounds), the profile totals of mnasnet1_0 7.41 -> 7.27 ms, efficientnet_b0 12.29
 * -> 12.11, mobilenet_v2 7.22 -> 7.25 (its first four chains a median 0.95 of before) and
 * squeezenet1_1 (dr_build only) 6.60 -> 6.80, within its noise (its conv_direct kernel 658
 * -> 653). rt_test --bench-cold ibr, the stem chain
 * 3x224x224->32->16 at 1 thread: 586-606 us cold, 533-545 with only x warmed before each
 * call, 519 hot: x's lines are most of the cold penalty. */
#ifndef I16_PF_X
#define I16_PF_X 4
#endif
#ifndef I16_PAIR_MAJOR /* 0: the first stage chunk-major always */
#define I16_PAIR_MAJOR 1
#endif
#ifndef I16_BAND_BYTES
#define I16_BAND_BYTES 0
#endif
/* Pointwise stages pair-major where a pair of output blocks spans at most I16_PM_TILES
 * register tiles (the first stage's chunks of a band; the second stage's tiles of a group;
 * always where the team shares a group, I16_PM_SHARED): the pair's tiles run in a row and
 * each prefetches its slice of the next pair's weights into L2 (i16_pf_next), so the weights,
 * which come from memory once per call inside a model, stream over the whole pass instead of
 * stalling the first tile of every chunk (tile-major, each chunk read all of W from memory
 * or L2 at the FMA rate, about 32 GB/s against this VM's 13.5 GB/s STREAM triad). mnasnet1_0
 * (ecg-bench --profile, alternating rounds, medians, Xeon model 167): 1 thread, 6 rounds,
 * total 5.920 -> 5.842 ms, its 192x7x7->1152 k5 chains 380-382 -> 372-377 us, 192x7x7->1152
 * ->320 472 -> 463, 96x14x14->576 k5 353 -> 344; 2 threads, 8 rounds, those chains 216-221
 * -> 212-215, 267 -> 259 and 204 -> 199 (totals within the noise); mobilenet_v2 and
 * efficientnet_b0 at 2 threads within the noise (3.384 / 3.368, 5.820 / 5.847 ms). With the
 * prefetch tested in the k loop of every call (not only of the instances that prefetch),
 * mnasnet1_0's 56x56 chains went 3-7% slower. */
#ifndef I16_PM_TILES
#define I16_PM_TILES 8
#endif
#ifndef I16_PM_SHARED
#define I16_PM_SHARED 1
#endif

int ecg_rt1_ibr16_applies(const ecg_ibr_params *p) {
  return p->cexp >= 16 && (p->cexp % 16 == 0 || p->cexp >= 64) && (p->sw == 1 || p->sw == 2) && p->sh >= 1 && p->kh >= p->sh &&
         p->kh <= 16 && p->kw >= 1 && p->oh >= 1 && p->ow >= 1 && p->cout >= 0;
}

/* E's ring budget where the whole plane's does not fit in I16_TILE_BYTES: half of L2. */
static size_t i16_band_bytes(void) {
#if I16_BAND_BYTES
  return I16_BAND_BYTES;
#else
  return (size_t)l2_cache_bytes() / 2;
#endif
}

typedef struct {
  int nb, nb2;  /* channel blocks of E/D and of y */
  int Wp;       /* E's padded row: columns -pl .. Wp-pl-1 of the image */
  int T, RB;    /* output rows per band, E ring rows */
  int G;        /* output rows per group of the depthwise + second pointwise stage (>= 28 positions; D's slots) */
} i16_geom;
static i16_geom i16_shape(const ecg_ibr_params *p) {
  i16_geom g;
  g.nb = cdiv(p->cexp, 16);
  g.nb2 = cdiv(p->cout, 16);
  g.Wp = imax(p->pl + p->w, (p->ow - 1) * p->sw + p->kw);
  const size_t row = (size_t)g.nb * g.Wp * 16 * sizeof(float), whole = ((size_t)(p->oh - 1) * p->sh + p->kh) * row;
  const size_t budget = whole <= I16_TILE_BYTES ? whole : i16_band_bytes();
  g.T = 1;
  for (int t = 2; t <= p->oh; t++) {
    if (((size_t)(t - 1) * p->sh + p->kh) * row > budget) break;
    g.T = t;
  }
  if (p->band_rows > 0) g.T = imin(p->band_rows, p->oh); /* a schedule's row tile */
  g.RB = (g.T - 1) * p->sh + p->kh;
  g.G = imax(1, cdiv(2 * I16_RW, p->ow));
  return g;
}

/* The first stage's reduction length: cin, or a stem conv's cin * k1h * k1w. */
static int i16_k1(const ecg_ibr_params *p) { return p->k1h ? p->cin * p->k1h * p->k1w : p->cin; }
/* Floats of a thread's rows for a stem first stage: dr_build's rows of one row of E, a
 * zero phase row for the taps outside the image, alignment (0 without a stem). */
static size_t i16_stem_floats(const ecg_ibr_params *p) {
  if (!p->k1h) return 0;
  const ecg_conv_params sc = ecg_rt1_ibr_stem_conv(p);
  return dr_buf_floats(&sc) + (size_t)dr_phase_len(&sc) + 16;
}

size_t ecg_rt1_ibr16_packed_floats(const ecg_ibr_params *p, int which) {
  if (which == 3) return (size_t)cdiv(p->cexp, 16) * p->kh * p->kw * 16;
  return which == 1 ? (size_t)cdiv(p->cexp, 16) * 16 * i16_k1(p) : (size_t)cdiv(p->cout, 16) * 16 * p->cexp;
}
void ecg_rt1_ibr16_pack(const ecg_ibr_params *p, int which, const float *w, float *packed) {
  if (which == 3) { /* the depthwise weights [cexp][tap] as [block][tap][16], zero past cexp */
    const int KK = p->kh * p->kw;
    for (int cb = 0; cb < cdiv(p->cexp, 16); cb++)
      for (int t = 0; t < KK; t++)
        for (int l = 0; l < 16; l++) packed[((size_t)cb * KK + t) * 16 + l] = cb * 16 + l < p->cexp ? w[(size_t)(cb * 16 + l) * KK + t] : 0.f;
    return;
  }
  const int M = which == 1 ? p->cexp : p->cout, K = which == 1 ? i16_k1(p) : p->cexp;
  for (int ob = 0; ob < cdiv(M, 16); ob++)
    for (int k = 0; k < K; k++)
      for (int l = 0; l < 16; l++) {
        const int o = ob * 16 + l;
        packed[((size_t)ob * K + k) * 16 + l] = o < M ? w[(size_t)o * K + k] : 0.f;
      }
}
size_t ecg_rt1_ibr16_scratch_floats(const ecg_ibr_params *p, int threads) {
  const i16_geom g = i16_shape(p); /* E's ring is shared by the team, D is per thread */
  const size_t nt = (size_t)(threads < 1 ? 1 : threads);
  return ((size_t)g.nb * g.RB * g.Wp + (size_t)g.Wp + nt * g.nb * g.G * p->ow + g.nb) * 16 + 6 * 16 + nt * i16_stem_floats(p);
}

/* acc[o][j] = init[o] + sum_k w[o*wob + k*16 .. +16] * src(k, j), o < OB, j < RW, with
 * src(k, j) = s[(k / 16) * kbs + (k % 16) * ks + j * js]: positions j of x (NCHW: kbs = 16 h w,
 * ks = h w, js = 1) or of an NCHWc16 band (kbs = positions * 16, ks = 1, js = 16); with koff,
 * src(k, j) = s[koff[k] + j * js] (a stem conv's taps in dr_build's rows). With e,
 * act(acc[o][j]) is stored at e + off[j] + o * ob1 (E's ring); else out[o*RW + j] = acc[o][j].
 * H: the last of the OB blocks holds at most 8 channels and is summed in 8-lane vectors,
 * which Zen 4 runs two per cycle against one 16-lane FMA; its lanes 8..15 come out zero
 * (i16_pw_pick says where).
 * The weights stream is prefetched ECG_PF_A floats ahead (they come from memory once per
 * band: mnasnet1_0's 7x7 stages expand 192 -> 1152, 885 KB per pointwise conv): mnasnet1_0
 * 6.71 -> 6.18 ms at 1 thread, 4.11 -> 3.98 at 2; mobilenet_v2 at 2 threads 3.70 -> 3.55;
 * efficientnet_b0 within the noise (interleaved rounds, medians, Xeon model 167). With pfl
 * > 0, pfl further lines from pf (the next pair's weights, I16_PM_TILES) are prefetched
 * into L2, one per k. */
ECG_AI void i16_pw(const int OB, const int H, const int RW, const float *s, size_t kbs, size_t ks, size_t js, int K,
                   const float *w, size_t wob, const __m512 *init, __m512 *out, ecg_act act, float *e,
                   const size_t *off, size_t ob1, const size_t *koff, const float *pf, int pfl) {
  const int OF = OB - H; /* blocks of 16 lanes: 1 or 2 (H only as a pair's second, i16_pw_pick) */
  __m512 acc[2][I16_RW];
  __m256 acch[I16_RW];
#pragma GCC unroll 2
  for (int o = 0; o < OF; o++)
#pragma GCC unroll 14
    for (int j = 0; j < RW; j++) acc[o][j] = koff ? _mm512_setzero_ps() : init[o];
  if (H)
#pragma GCC unroll 14
    for (int j = 0; j < RW; j++) acch[j] = koff ? _mm256_setzero_ps() : _mm512_castps512_ps256(init[OB - 1]);
  for (int k0 = 0; k0 < K; k0 += 16) {
    const float *sk = s + (size_t)(k0 / 16) * kbs, *wk = w + (size_t)k0 * 16;
    const int kn = imin(16, K - k0);
    for (int kk = 0; kk < kn; kk++, sk += ks, wk += 16) {
      const float *sj = koff ? s + koff[k0 + kk] : sk;
      _mm_prefetch((const char *)(wk + ECG_PF_A), _MM_HINT_T0);
      if (OB > 1) _mm_prefetch((const char *)(wk + wob + ECG_PF_A), _MM_HINT_T0);
      if (pfl > 0) { /* the next pair's weights into L2, a line per k */
        _mm_prefetch((const char *)pf, _MM_HINT_T1);
        pf += 16;
        pfl--;
      }
      const __m512 w0 = _mm512_loadu_ps(wk), w1 = OF > 1 ? _mm512_loadu_ps(wk + wob) : w0;
      const __m256 wh = H ? _mm256_loadu_ps(wk + (OB - 1) * wob) : _mm256_setzero_ps();
#pragma GCC unroll 14
      for (int j = 0; j < RW; j++) {
        const __m512 xb = _mm512_set1_ps(sj[j * js]);
        acc[0][j] = _mm512_fmadd_ps(w0, xb, acc[0][j]);
        if (OF > 1) acc[1][j] = _mm512_fmadd_ps(w1, xb, acc[1][j]);
        if (H) acch[j] = _mm256_fmadd_ps(wh, _mm512_castps512_ps256(xb), acch[j]);
      }
    }
  }
  if (koff) { /* a stem conv: the bias after the sum, as conv_direct and the GEMM path add it */
#pragma GCC unroll 2
    for (int o = 0; o < OF; o++)
#pragma GCC unroll 14
      for (int j = 0; j < RW; j++) acc[o][j] = _mm512_add_ps(acc[o][j], init[o]);
    if (H)
#pragma GCC unroll 14
      for (int j = 0; j < RW; j++) acch[j] = _mm256_add_ps(acch[j], _mm512_castps512_ps256(init[OB - 1]));
  }
  if (H)
#pragma GCC unroll 14
    for (int j = 0; j < RW; j++) acc[OB - 1][j] = _mm512_zextps256_ps512(acch[j]);
  if (e) {
#pragma GCC unroll 14
    for (int j = 0; j < RW; j++) {
      _mm512_storeu_ps(e + off[j], act512_cheap(act, acc[0][j]));
      if (OB > 1) _mm512_storeu_ps(e + off[j] + ob1, act512_cheap(act, acc[1][j]));
    }
    return;
  }
#pragma GCC unroll 2
  for (int o = 0; o < OB; o++)
#pragma GCC unroll 14
    for (int j = 0; j < RW; j++) out[o * RW + j] = acc[o][j];
}
/* out[j] = bias + sum over taps w[tap][16] * row(ky)[((ox0 + j) * S + kx) * 16 ..], j < RW:
 * one output row of one channel block of the depthwise conv, its kh input rows given. */
ECG_AI void i16_dw(const int RW, const int S, const float *const *rows, int kh, int kw, const float *w, __m512 bias,
                   int ox0, __m512 *out) {
  __m512 acc[I16_RW];
#pragma GCC unroll 14
  for (int j = 0; j < RW; j++) acc[j] = bias;
  for (int ky = 0; ky < kh; ky++) {
    const float *r = rows[ky] + (size_t)ox0 * S * 16;
    for (int kx = 0; kx < kw; kx++, w += 16) {
      const __m512 wv = _mm512_loadu_ps(w);
#pragma GCC unroll 14
      for (int j = 0; j < RW; j++) acc[j] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r + (size_t)(j * S + kx) * 16), acc[j]);
    }
  }
#pragma GCC unroll 14
  for (int j = 0; j < RW; j++) out[j] = acc[j];
}
typedef void (*i16_pw_fn)(const float *, size_t, size_t, size_t, int, const float *, size_t, const __m512 *, __m512 *, ecg_act,
                          float *, const size_t *, size_t, const size_t *, const float *, int);
typedef void (*i16_dw_fn)(const float *const *, int, int, const float *, __m512, int, __m512 *);
/* PF: with the next pair's prefetch (pf, pfl); without, they are ignored (no test in the k loop) */
#define ECG_I16_PW(NAME, OB, H, RW, PF)                                                                        \
  static void NAME##_##RW(const float *s, size_t kbs, size_t ks, size_t js, int K, const float *w, size_t wob,  \
                          const __m512 *init, __m512 *out, ecg_act act, float *e, const size_t *off, size_t ob1, \
                          const size_t *koff, const float *pf, int pfl) {                                       \
    i16_pw(OB, H, RW, s, kbs, ks, js, K, w, wob, init, out, act, e, off, ob1, koff, PF ? pf : NULL, PF ? pfl : 0); \
  }
#define ECG_I16(RW)                                                                                              \
  ECG_I16_PW(i16_pw1, 1, 0, RW, 0) ECG_I16_PW(i16_pw2, 2, 0, RW, 0) ECG_I16_PW(i16_pw2h, 2, 1, RW, 0)          \
  ECG_I16_PW(i16_pw1p, 1, 0, RW, 1) ECG_I16_PW(i16_pw2p, 2, 0, RW, 1) ECG_I16_PW(i16_pw2hp, 2, 1, RW, 1)       \
  static void i16_dw1_##RW(const float *const *rows, int kh, int kw, const float *w, __m512 b, int ox0, __m512 *o) { \
    i16_dw(RW, 1, rows, kh, kw, w, b, ox0, o);                                                                  \
  }                                                                                                             \
  static void i16_dw2_##RW(const float *const *rows, int kh, int kw, const float *w, __m512 b, int ox0, __m512 *o) { \
    i16_dw(RW, 2, rows, kh, kw, w, b, ox0, o);                                                                  \
  }
ECG_I16(1) ECG_I16(2) ECG_I16(3) ECG_I16(4) ECG_I16(5) ECG_I16(6) ECG_I16(7)
ECG_I16(8) ECG_I16(9) ECG_I16(10) ECG_I16(11) ECG_I16(12) ECG_I16(13) ECG_I16(14)
#undef ECG_I16
#undef ECG_I16_PW
#define I16_TAB(P) {0, P##_1, P##_2, P##_3, P##_4, P##_5, P##_6, P##_7, P##_8, P##_9, P##_10, P##_11, P##_12, P##_13, P##_14}
static const i16_pw_fn i16_pw_fns[2][3][I16_RW + 1] = {{I16_TAB(i16_pw1), I16_TAB(i16_pw2), I16_TAB(i16_pw2h)},
                                                        {I16_TAB(i16_pw1p), I16_TAB(i16_pw2p), I16_TAB(i16_pw2hp)}};
static const i16_dw_fn i16_dw_fns[2][I16_RW + 1] = {I16_TAB(i16_dw1), I16_TAB(i16_dw2)};
#undef I16_TAB
/* The kernel for OB blocks from block ob of m channels, RW positions: a pair whose second
 * block holds at most 8 channels sums that block in 8-lane vectors (I16_HALF 0: never), e.g.
 * a cout of 24, computed as 32 before. rt_test --bench ibr, AMD EPYC Zen 4, 1 thread, 3
 * alternating rounds, medians: mnasnet1_0's 24x56x56->72->24 347.9 -> 310.6 us,
 * mobilenet_v2's 24x56x56->144->24 610.5 -> 569.3, 16x112x112->96 s2->24 726.8 -> 704.9,
 * mnasnet1_0's 16x112x112->48 s2->24 383.6 -> 375.2; the others within 0.5%. A lone
 * 8-channel block (a cout of 40: pairs 0-1, then block 2 alone) measured 1.5-3% slower in
 * 8-lane vectors (40x28x28->240->40 410.8 -> 416.8), so it keeps 16. */
#ifndef I16_HALF
#define I16_HALF 1
#endif
static i16_pw_fn i16_pw_pick(int OB, int ob, int m, int RW, int pfl) {
  const int half = I16_HALF && OB == 2 && m - (ob + 1) * 16 <= 8;
  return i16_pw_fns[pfl > 0][OB - 1 + half][RW];
}

/* Bias vector of block ob of a bias of m channels (NULL: zeros). */
static __m512 i16_bias(const float *b, int m, int ob) {
  return b && m > ob * 16 ? _mm512_maskz_loadu_ps(tail_mask(m - ob * 16), b + (size_t)ob * 16) : _mm512_setzero_ps();
}

/* Block cb of D for gr output rows from oy: D[t][ox][16] = act2(depthwise(E) + bd), the kh
 * input rows of each output row read from E's ring (rows outside the image: zrow). D is
 * [gr*ow][16] floats. Without W2 (cout 0) D is the kernel's output: yq, y's NCHW image
 * (plane OHW floats), gets block cb's channels of those rows instead, each tile transposed
 * (tr16) into the channels' rows. */
ECG_AI void i16_dw_group(const ecg_ibr_params *p, const i16_geom *g, const float *E, const float *zrow, const float *wd,
                         const float *bdt, int cb, int oy, int gr, float *D, float *yq, size_t OHW) {
  const size_t rowf = (size_t)g->Wp * 16;
  const __m512 bv = _mm512_loadu_ps(bdt + cb * 16);
  for (int t = 0; t < gr; t++) {
    const float *rr[16];
    for (int ky = 0; ky < p->kh; ky++) {
      const int iy = (oy + t) * p->sh - p->pt + ky;
      rr[ky] = iy >= 0 && iy < p->h ? E + ((size_t)cb * g->RB + iy % g->RB) * rowf : zrow;
    }
    for (int ox0 = 0; ox0 < p->ow; ox0 += I16_RW) {
      const int RW = imin(I16_RW, p->ow - ox0);
      __m512 out[I16_RW];
      i16_dw_fns[p->sw - 1][RW](rr, p->kh, p->kw, wd + (size_t)cb * p->kh * p->kw * 16, bv, ox0, out);
      if (yq) {
        __m512 v[16];
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) v[j] = j < RW ? act512_cheap(p->act2, out[j]) : _mm512_setzero_ps();
        tr16(v);
        const __mmask16 m = tail_mask(RW);
        float *yr = yq + (size_t)cb * 16 * OHW + (size_t)(oy + t) * p->ow + ox0;
        const int nl = imin(16, p->cexp - cb * 16);
        for (int l = 0; l < nl; l++) _mm512_mask_storeu_ps(yr + (size_t)l * OHW, m, v[l]);
        continue;
      }
      float *dq = D + ((size_t)t * p->ow + ox0) * 16;
      for (int j = 0; j < RW; j++) _mm512_storeu_ps(dq + (size_t)j * 16, act512_cheap(p->act2, out[j]));
    }
  }
}
/* Register tiles for P positions shared by T threads: ceil(P / 14), and with a team (T > 1)
 * rounded up to a multiple of T and of balanced widths (i16_tile: tile q holds positions
 * [q P / n, (q + 1) P / n)), so that a static split gives every thread as many positions: a
 * 7x7 plane was 3 tiles of 14 and one of 7, split 28 and 21 over 2 threads; now 12, 12 | 12,
 * 13. One thread keeps tiles of 14 and the rest (mnasnet1_0's 7x7 chains in the model
 * measured 1-3% slower in balanced tiles: 346/349/344/423 against 355/351/348/432 us, 5
 * profile rounds). */
static int i16_ntiles(int P, int T) {
  const int n = cdiv(P, I16_RW);
  return T > 1 ? cdiv(n, T) * T : n;
}
static void i16_tile(int P, int n, int T, int q, int *p0, int *RW) {
  *p0 = T > 1 ? (int)((long)q * P / n) : q * I16_RW;
  *RW = T > 1 ? (int)((long)(q + 1) * P / n) - *p0 : imin(I16_RW, P - *p0);
}
/* Work item it of a stage's n tiles x np pairs of blocks: its tile *q and first block *ob,
 * pair-major (pm: a pair's n tiles in a row) or tile-major. */
static void i16_item(int it, int n, int np, int pm, int *q, int *ob) {
  *q = pm ? it % n : it / np;
  *ob = 2 * (pm ? it / n : it % np);
}
/* Slice q of n of the packed weights of the pair of blocks after ob (wp [blocks][K][16], nb
 * blocks): *pf its first line, *pfl its lines (0 past the last pair, and unless pm). Pair-major
 * loops run a pair's n tiles in a row and prefetch the next pair's weights a slice per tile. */
static void i16_pf_next(int pm, const float *wp, int K, int nb, int ob, int q, int n, const float **pf, int *pfl) {
  const int L = !pm || n < 2 ? 0 : imax(0, imin(2, nb - ob - 2)) * K; /* lines of the next pair (none where a pair is one tile) */
  const int a = (int)((long)q * L / n), b = (int)((long)(q + 1) * L / n);
  *pf = L ? wp + ((size_t)(ob + 2) * K + a) * 16 : NULL; /* no pointer past the weights */
  *pfl = b - a;
}
/* Output blocks ob, ob + 1 of y (NCHW, plane OHW floats, yq its first position of the group)
 * at tile c of nt over the group's GP positions of D ([block][GP][16]), tiles shared by T
 * threads (i16_ntiles): act3(W2 D + b2). */
ECG_AI void i16_pw2_tile(const ecg_ibr_params *p, const i16_geom *g, const float *D, int GP, int nt, int T, int c, int ob,
                         const float *w2p, const float *b2, float *yq, size_t OHW, const float *pf, int pfl) {
  int p0, RW;
  i16_tile(GP, nt, T, c, &p0, &RW);
  const int OB = imin(2, g->nb2 - ob);
  __m512 init[2] = {i16_bias(b2, p->cout, ob), i16_bias(b2, p->cout, ob + 1)}, out[2 * I16_RW];
  i16_pw_pick(OB, ob, p->cout, RW, pfl)(D + (size_t)p0 * 16, (size_t)GP * 16, 1, 16, p->cexp, w2p + (size_t)ob * p->cexp * 16, (size_t)p->cexp * 16,
                         init, out, p->act3, NULL, NULL, 0, NULL, pf, pfl);
  for (int o = 0; o < OB; o++) {
    __m512 v[16];
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) v[j] = j < RW ? act512_cheap(p->act3, out[o * RW + j]) : _mm512_setzero_ps();
    tr16(v);
    const __mmask16 m = tail_mask(RW);
    const int nl = imin(16, p->cout - (ob + o) * 16);
    for (int l = 0; l < nl; l++) _mm512_mask_storeu_ps(yq + p0 + (size_t)((ob + o) * 16 + l) * OHW, m, v[l]);
  }
}

/* Zeroes the pad columns of one row of E (er: its first padded column) that column col of
 * the image ends: the left pad where col is 0, the right pad where col is W-1, both where
 * col is -1. The first stage calls it for the rows it computes, so E's pads are written by
 * the thread that wrote the row, which is, mostly, the one whose depthwise stage reads it:
 * zeroed once per call for the whole ring, split by block, half of every row's pads were
 * the other core's modified lines (rt_test --bench ibr, 2 threads: the depthwise stage of
 * 64x14x14->384 alone took 19.6 us with those writes, 12.3 without any, 1 thread 19.1-19.4
 * either way; whole chains 32x28x28->192 97.6 -> 89.3 us, 40x28x28->240 k5 174.7 -> 162.6,
 * the others within the noise; 2 threads, 5 interleaved rounds: mobilenet_v2 3.19 -> 3.07
 * ms, mnasnet1_0 3.32 -> 3.26, efficientnet_b0 5.55 -> 5.56). */
static void i16_row_pads(const ecg_ibr_params *p, int W, int Wp, float *er, int col) {
  if (col <= 0) memset(er, 0, (size_t)p->pl * 16 * sizeof(float));
  if (col == -1 || col == W - 1) memset(er + (size_t)(p->pl + W) * 16, 0, (size_t)(Wp - p->pl - W) * 16 * sizeof(float));
}

void ecg_rt1_ibr16(const ecg_ibr_params *p, const float *x, const float *w1p, const float *b1, const float *wd,
                   const float *bd, const float *w2p, const float *b2, float *y, float *scratch, long *e_rows) {
  i16_geom g = i16_shape(p);
  const int H = p->h, W = p->w, OH = p->oh, OW = p->ow, KK = p->kh * p->kw, NB = g.nb, RB = g.RB, Wp = g.Wp;
  const size_t HW = (size_t)H * W, OHW = (size_t)OH * OW, rowf = (size_t)Wp * 16;
  const size_t XHW = p->k1h ? (size_t)p->xh * p->xw : HW; /* floats of a channel of x */
  float *E = align64(scratch), *zrow = E + (size_t)NB * RB * rowf, *bdt = zrow + rowf;
  float *D = bdt + (size_t)NB * 16; /* one [NB][G*ow][16] per thread */
  double macs = (double)p->n * ((double)H * W * i16_k1(p) * p->cexp + (double)OHW * p->cexp * (KK + p->cout));
  int T = ecg_rt1_kernel_threads(macs);
  float *stem0 = D + (size_t)T * NB * g.G * OW * 16; /* one i16_stem_floats(p) per thread */
  /* With a team, groups of one register tile's rows (g.G's half, in D's slots sized for
   * g.G): a 14x14 plane makes 14 groups instead of 7, which split evenly over 2 threads
   * (7 split 4 and 3). mnasnet1_0 at 2 threads (ecg-bench --profile, 8 alternating rounds,
   * AMD EPYC Zen 4): profile total 4.09 -> 3.99 ms, faster in 7 of 8 rounds; its chains
   * ending on 14x14 planes 159/192/196/196/249 -> 148/182/185/184/232 us (a second set of 8
   * rounds: those chains a median 0.95 of before, the totals within the VM's noise);
   * rt_test --bench ibr, 2 threads, best of 4: 64x14x14->384 111.3 -> 103.6 us, 96x14x14->576
   * s2 163.6 -> 157.2. One thread keeps g.G (with 14-position groups mnasnet1_0 measured
   * 7.05 against 7.19 ms, 6 rounds). */
  const int Gt = T > 1 ? imax(1, cdiv(I16_RW, OW)) : g.G;
  /* With a team and several bands, a band's rows a multiple of T groups, so that every
   * thread gets as many groups of the depthwise and second pointwise stages (the band's
   * ring only gets rows to spare): mobilenet_v2's 16x112x112->96 s2 chain made bands of 5
   * rows, groups split 3 and 2. rt_test --bench, 2 threads, 6 alternating rounds, that
   * chain 440-446 us against 448-528 (1 thread unchanged); 16x112x112->48 and
   * 24x56x56->144 (bands of 11 and 13 rows) within the noise; in-model profiles at 2
   * threads on this VM too noisy to show it. I16_BAL 0: the old bands. */
#ifndef I16_BAL
#define I16_BAL 1
#endif
  if (I16_BAL && T > 1 && p->band_rows <= 0 && g.T < OH && g.T > T * Gt) g.T -= g.T % (T * Gt);
  ECG_PRAGMA(omp parallel num_threads(T) if (T > 1))
  {
    /* the depthwise bias in blocks and the zero row (the depthwise weights come packed as
     * [block][tap][16]: ecg_rt1_ibr16_pack, which 3); E's pad columns: i16_row_pads */
    ECG_PRAGMA(omp for schedule(static))
    for (int cb = 0; cb < NB; cb++) {
      for (int l = 0; l < 16; l++) bdt[cb * 16 + l] = bd && cb * 16 + l < p->cexp ? bd[cb * 16 + l] : 0.f;
      if (cb == 0) memset(zrow, 0, rowf * sizeof(float));
    }
    /* a stem first stage: this thread's rows of x (dr_build) and a zero phase row after them */
    const ecg_conv_params sc = p->k1h ? ecg_rt1_ibr_stem_conv(p) : (ecg_conv_params){0};
    float *sbuf = NULL, *szr = NULL;
    if (p->k1h) {
      sbuf = align64(stem0 + (size_t)ecg_tid() * i16_stem_floats(p));
      szr = sbuf + dr_buf_floats(&sc);
      memset(szr, 0, (size_t)dr_phase_len(&sc) * sizeof(float));
    }
    for (int img = 0; img < p->n; img++) {
      const float *xi = x + (size_t)img * p->cin * XHW;
      float *yi = y + (size_t)img * (p->cout ? p->cout : p->cexp) * OHW, *yd = p->cout ? NULL : yi; /* yd: D is y */
      int have = 0; /* E rows [0, have) of this image are computed (the ring holds the last RB) */
      for (int oy0 = 0; oy0 < OH; oy0 += g.T) {
        const int oy1 = imin(OH, oy0 + g.T), TP = (oy1 - oy0) * OW; /* positions of y in the band */
        const int hi = imin(H, (oy1 - 1) * p->sh - p->pt + p->kh), lo = have;
        const int rows = oy1 - oy0, ng = cdiv(rows, Gt);
        /* Where groups of Gt rows would split unevenly over the team and D's slots hold the
         * band, the band is one group, shared: a 7x7 plane at 2 threads made groups of 2, 2, 2
         * and 1 rows, 4 rows on one thread, 3 on the other; one group of 49 positions gives
         * each thread half of the depthwise blocks, then 2 of 4 balanced tiles (i16_ntiles).
         * shared: the team splits every group (the depthwise stage by block). With the first
         * stage pair-major there (pm below): mnasnet1_0's 192x7x7->1152 k5 chains in the
         * model at 2 threads 220-225 -> 204-214 us (5 alternating profile rounds); rt_test
         * --bench, that chain 180-191 -> 166-175 us, balanced tiles alone 173-188 -> 175-182. */
        const int Gs = T > 1 && rows % (T * Gt) && rows <= T * g.G ? rows : Gt;
        const int shared = T > 1 && !(ng >= 2 * T && Gs == Gt);
        /* 1. E rows [lo, hi): act1(W1 x + b1), or x itself, into the ring */
        if (hi > lo) {
          const int P = (hi - lo) * W;
          if (p->k1h) {
            /* a stem conv (AGO §III-B with a CNN's first layer as the first stage): per row of
             * E, its input rows split by dr_build (conv_direct's rows: even and odd columns at
             * stride 2), then chunks of 14 positions x 2 blocks as for a pointwise W1, each
             * tap k read at koff[k] in those rows (rows outside the image: the zero row) */
            const int S = sc.sw, L = dr_phase_len(&sc), K1 = i16_k1(p), nch = cdiv(W, I16_RW), npair = cdiv(NB, 2);
            size_t off[I16_RW], koff[64];
            int row = -1; /* the row of E sbuf holds */
            ECG_PRAGMA(omp for schedule(static))
            for (long it = 0; it < (long)(hi - lo) * nch * npair; it++) {
              const int r = lo + (int)(it / ((long)nch * npair)), q = (int)(it % ((long)nch * npair)) / npair;
              const int ob = 2 * (int)(it % npair), OB = imin(2, NB - ob), p0 = q * I16_RW, RW = imin(I16_RW, W - p0);
              if (r != row) {
                row = r;
                const unsigned long long in = dr_build(S, &sc, xi, r, sbuf);
                for (int k = 0; k < K1; k++) {
                  const int kx = k % p->k1w, rr = k / p->k1w; /* rr = ci * k1h + ky */
                  koff[k] = in >> rr & 1 ? (size_t)rr * S * L + (size_t)(kx % S) * L + (size_t)(kx / S) : (size_t)(szr - sbuf);
                }
              }
              float *er = E + (size_t)(r % RB) * rowf; /* block 0's row r */
              for (int j = 0; j < RW; j++) off[j] = (size_t)(p->pl + p0 + j) * 16 + (size_t)(er - E);
              const __m512 init[2] = {i16_bias(b1, p->cexp, ob), i16_bias(b1, p->cexp, ob + 1)};
              i16_pw_pick(OB, ob, p->cexp, RW, 0)(sbuf + p0, 0, 0, 1, K1, w1p + (size_t)ob * K1 * 16, (size_t)K1 * 16, init, NULL, p->act1,
                                     E + (size_t)ob * RB * rowf, off, (size_t)RB * rowf, koff, NULL, 0);
              if (p0 == 0 || p0 + RW == W)
                for (int o = 0; o < OB; o++)
                  i16_row_pads(p, W, Wp, er + (size_t)(ob + o) * RB * rowf, p0 == 0 && p0 + RW == W ? -1 : p0 == 0 ? 0 : W - 1);
            }
          } else if (w1p) {
            const int nch = i16_ntiles(P, T), npair = cdiv(NB, 2);
            /* a chunk of positions for each pair of blocks, chunk-major: a thread's range
             * covers whole chunks (x's chunk read from L1 after the first pair) where there are
             * many, and splits W1's blocks where the plane is a few chunks (a 2x2 plane: 1).
             * Pair-major where the team shares the groups (pm): a thread computes the blocks of
             * E its depthwise stage reads, and reads half of W1 once (chunk-major, each thread
             * read all of W1 once per chunk); and where the band is a few chunks
             * (I16_PM_TILES), with the next pair's weights prefetched */
            const int pm = (shared || nch <= I16_PM_TILES) && I16_PAIR_MAJOR;
            size_t off[I16_RW]; /* position p0 + j: E row lo + p0 / W (ring slot sl), column col, of block 0 */
            int offq = -1;      /* the chunk off[] is for */
            ECG_PRAGMA(omp for schedule(static))
            for (int it = 0; it < nch * npair; it++) {
              int q, ob, p0, RW;
              i16_item(it, nch, npair, pm, &q, &ob);
              const int OB = imin(2, NB - ob);
              i16_tile(P, nch, T, q, &p0, &RW);
              if (q != offq) {
                offq = q;
                if (I16_PF_X > 0 && !pm && q + I16_PF_X < nch) { /* x's chunk I16_PF_X ahead, each input channel's lines */
                  int pn, nr;
                  i16_tile(P, nch, T, q + I16_PF_X, &pn, &nr);
                  const float *xn = xi + (size_t)lo * W + pn;
                  nr--;
                  for (int k = 0; k < p->cin; k++) {
                    _mm_prefetch((const char *)(xn + (size_t)k * HW), _MM_HINT_T0);
                    _mm_prefetch((const char *)(xn + (size_t)k * HW + nr), _MM_HINT_T0);
                  }
                }
                for (int j = 0, sl = (lo + p0 / W) % RB, col = p0 % W; j < RW; j++, col++) {
                  if (col == W) {
                    col = 0;
                    if (++sl == RB) sl = 0;
                  }
                  off[j] = ((size_t)sl * Wp + p->pl + col) * 16;
                }
              }
              const __m512 init[2] = {i16_bias(b1, p->cexp, ob), i16_bias(b1, p->cexp, ob + 1)};
              const float *pf;
              int pfl;
              i16_pf_next(pm, w1p, p->cin, NB, ob, q, nch, &pf, &pfl);
              i16_pw_pick(OB, ob, p->cexp, RW, pfl)(xi + (size_t)lo * W + p0, 16 * HW, HW, 1, p->cin, w1p + (size_t)ob * p->cin * 16,
                                     (size_t)p->cin * 16, init, NULL, p->act1, E + (size_t)ob * RB * rowf, off, (size_t)RB * rowf, NULL, pf, pfl);
              for (int j = 0, col = p0 % W; j < RW; j++, col = col + 1 == W ? 0 : col + 1) /* the row's pads, with its ends */
                if (col == 0 || col == W - 1)
                  for (int o = 0; o < OB; o++)
                    i16_row_pads(p, W, Wp, E + (size_t)(ob + o) * RB * rowf + off[j] - (size_t)(p->pl + col) * 16, col);
            }
          } else { /* E = x: rows transposed into the ring, 16 columns at a time */
            ECG_PRAGMA(omp for schedule(static))
            for (long it = 0; it < (long)NB * (hi - lo); it++) {
              const int cb = (int)(it / (hi - lo)), r = lo + (int)(it % (hi - lo));
              float *er = E + ((size_t)cb * RB + r % RB) * rowf + (size_t)p->pl * 16;
              i16_row_pads(p, W, Wp, er - (size_t)p->pl * 16, -1);
              c16_from_rows(xi + (size_t)cb * 16 * HW + (size_t)r * W, HW, imin(16, p->cexp - cb * 16), W, er);
            }
          }
          if (e_rows && ecg_tid() == 0) *e_rows += hi - lo;
          have = hi;
        }
        /* 2+3. per group of G output rows: D = act2(depthwise(E) + bd) for every block
         * (NCHWc16 [block][G*ow][16], in L1/L2), then those rows of y = act3(W2 D + b2):
         * tiles of 2 blocks x 14 positions transposed into NCHW. With groups enough for
         * every thread (at least 2 per thread) a group runs on one thread, in its own D;
         * with fewer (a plane of a few rows: mnasnet1_0 at 56x56 ends on 2x2 planes with one
         * group, and one thread would stream all of W2) every group is split over the team,
         * the depthwise by block and the second pointwise by pair of output blocks, in one
         * shared D with a barrier between. With the first stage split by block pair too:
         * mnasnet1_0 at 2 threads (Xeon model 167, interleaved rounds, medians) 0.780 ->
         * 0.596 ms at 56x56 (its 2x2 blocks 76 -> about 40 us), 1.334 -> 1.290 at 112x112;
         * at 224x224 1.5-2.8% slower in four sets (3.26-3.38 against 3.20-3.32 ms), where
         * neither the threshold (ng >= T: the same) nor the first stage (the old loop: the
         * same) is the cause; 1 thread within the noise. Not traced further. */
        const int nob = cdiv(g.nb2, 2);
        float *yb = yi + (size_t)oy0 * OW;
        /* Without W2, D is y, and on planes of short rows (a group's rows a few lines of each
         * channel's plane) two threads writing neighbouring groups write the same lines: there
         * each thread takes whole channel blocks, every group of them. rt_test --bench silu, 2
         * threads, AMD EPYC Zen 4, 2 rounds: 192x7x7->1152 k5 146.6/148.3 us against
         * 158.7/158.2 by groups, 80x14x14->480 112.1/111.9 against 121.1/109.0; on the 28- to
         * 112-column planes blocks and groups within 3% either way (40x28x28->240, 15 blocks,
         * 180 against 174 by groups), so they keep groups. */
#ifndef I16_YD_SPLIT_OW
#define I16_YD_SPLIT_OW 28
#endif
        if (yd && T > 1 && OW < I16_YD_SPLIT_OW) {
          ECG_PRAGMA(omp for schedule(static))
          for (int cb = 0; cb < NB; cb++)
            for (int gi = 0; gi < ng; gi++) {
              const int t0 = gi * Gt, gr = imin(Gt, rows - t0);
              i16_dw_group(p, &g, E, zrow, wd, bdt, cb, oy0 + t0, gr, NULL, yd, OHW);
            }
        } else if (!shared) {
          ECG_PRAGMA(omp for schedule(static))
          for (int gi = 0; gi < ng; gi++) {
            const int t0 = gi * Gt, gr = imin(Gt, rows - t0), GP = gr * OW;
            float *Dg = D + (size_t)ecg_tid() * NB * g.G * OW * 16;
            for (int cb = 0; cb < NB; cb++) i16_dw_group(p, &g, E, zrow, wd, bdt, cb, oy0 + t0, gr, Dg + (size_t)cb * GP * 16, yd, OHW);
            const int nt = i16_ntiles(GP, 1), pm2 = nt <= I16_PM_TILES;
            for (int it = 0; it < nt * nob; it++) {
              int c, ob, pfl;
              const float *pf;
              i16_item(it, nt, nob, pm2, &c, &ob);
              i16_pf_next(pm2, w2p, p->cexp, g.nb2, ob, c, nt, &pf, &pfl);
              i16_pw2_tile(p, &g, Dg, GP, nt, 1, c, ob, w2p, b2, yb + (size_t)t0 * OW, OHW, pf, pfl);
            }
          }
        } else {
          for (int t0 = 0; t0 < rows; t0 += Gs) {
            const int gr = imin(Gs, rows - t0), GP = gr * OW;
            ECG_PRAGMA(omp for schedule(static))
            for (int cb = 0; cb < NB; cb++) i16_dw_group(p, &g, E, zrow, wd, bdt, cb, oy0 + t0, gr, D + (size_t)cb * GP * 16, yd, OHW);
            const int nt = i16_ntiles(GP, T);
            ECG_PRAGMA(omp for schedule(static))
            for (int it = 0; it < nt * nob; it++) {
              int c, ob, pfl;
              const float *pf;
              i16_item(it, nt, nob, I16_PM_SHARED, &c, &ob);
              i16_pf_next(I16_PM_SHARED, w2p, p->cexp, g.nb2, ob, c, nt, &pf, &pfl);
              i16_pw2_tile(p, &g, D, GP, nt, T, c, ob, w2p, b2, yb + (size_t)t0 * OW, OHW, pf, pfl);
            }
          }
        }
        if (p->act3.kind == ECG_ACT_FN) {
          ECG_PRAGMA(omp for schedule(static))
          for (int o = 0; o < p->cout; o++) p->act3.fn(yb + (size_t)o * OHW, (size_t)TP, p->act3.arg);
        }
      }
    }
  }
}
#else
int ecg_rt1_ibr16_applies(const ecg_ibr_params *p) { (void)p; return 0; }
size_t ecg_rt1_ibr16_packed_floats(const ecg_ibr_params *p, int which) { (void)p; (void)which; return 0; }
void ecg_rt1_ibr16_pack(const ecg_ibr_params *p, int which, const float *w, float *packed) { (void)p; (void)which; (void)w; (void)packed; }
size_t ecg_rt1_ibr16_scratch_floats(const ecg_ibr_params *p, int threads) { (void)p; (void)threads; return 0; }
void ecg_rt1_ibr16(const ecg_ibr_params *p, const float *x, const float *w1p, const float *b1, const float *wd,
                   const float *bd, const float *w2p, const float *b2, float *y, float *scratch, long *e_rows) {
  (void)p; (void)x; (void)w1p; (void)b1; (void)wd; (void)bd; (void)w2p; (void)b2; (void)y; (void)scratch; (void)e_rows;
}
#endif

/* ------------------------------------------------------------------ Winograd F(4x4, 3x3) */

/* 3x3 stride-1 convolutions as Winograd's minimal filtering F(4x4, 3x3) (Lavin & Gray,
 * "Fast Algorithms for Convolutional Neural Networks", CVPR 2016, §4-5: interpolation
 * points 0, +-1, +-2, +-1/2 and infinity): each 4x4 output tile is A^T [(G g G^T) . (B^T d B)] A
 * for its 6x6 input patch d, so the multiply-adds become 36 independent GEMMs
 *   Y_xi [m, tiles] = U_xi [m, c] * V_xi [c, tiles],  xi = 0..35 (one per 6x6 point),
 * U = G g G^T transformed and packed at model creation (as the A panels of a 1x1 conv),
 * V = B^T d B per tile and channel, Y transformed back by A^T . A. 36 multiply-adds per
 * tile and channel pair instead of 144: 4x fewer nominally (planes not a multiple of 4
 * compute the clipped tiles' dead outputs). Work is cut into jobs of a band of tile rows
 * (about WG_TILES tiles, so one band's V and a block of its Y stay in L2) times a block of
 * output channels; each job transforms its band's input (all channels: repeated per
 * channel block, a cost of 1/m of the GEMMs), runs the 36 GEMMs per block of WG_MB
 * channels with the packed micro-kernels (B read in place, rows of ldv floats), and
 * transforms its outputs with bias, activation or the generated epilogue applied to each
 * channel's finished run of output rows. Rounding differs from the direct sum (the
 * transforms' coefficients reach 8 and 5): relative errors of about 1e-6 of the sum of
 * |products| on random data, inside the 1e-4 the runtime's tests allow.
 * Dilated convs (dh, dw > 1, stride 1) split into dh*dw phases: the outputs (oy, ox) with
 * oy % dh == pa and ox % dw == pb are an undilated 3x3 conv of the input rows
 * dh*u + pa - pt and columns dw*v + pb - pl, each phase a Winograd conv of its own
 * (mlsd's 64x80x80 dilation-5 layer: 25 phases of 16x16). */
#define WG_TILES 48
#define WG_VW (NR > 16 ? 16 : NR) /* B column granularity the micro-kernels read */
#define WG_MB (((64 + MR - 1) / MR) * MR)

typedef struct {
  int tx, ty, rows, tch, ldv, mb; /* tiles per row/column, tile rows per band, tiles and
                                   * V/Y row length per band, channels per GEMM block */
} wg_geom;

/* The geometry of p with bands of `rows` tile rows (clipped to 1 .. all of them). */
static wg_geom wg_shape_rows(const ecg_conv_params *p, int rows) {
  wg_geom g;
  g.tx = cdiv(cdiv(p->ow, p->dw), 4); /* tiles of the largest phase (dilation: see conv_wg_run) */
  g.ty = cdiv(cdiv(p->oh, p->dh), 4);
  g.rows = imax(1, imin(g.ty, rows));
  g.tch = g.rows * g.tx;
  g.ldv = cdiv(g.tch, WG_VW) * WG_VW;
  if (g.ldv % 64 == 0) g.ldv += WG_VW; /* rows 256 bytes apart would share L1 sets */
  g.mb = imin(WG_MB, cdiv(p->m, MR) * MR);
  return g;
}

/* One thread's geometry: bands of about WG_TILES tiles, as even as whole tile rows allow
 * (7 rows of 7 tiles: 4 + 3, not 6 + 1, whose last band would fill a third of its column
 * vector). */
static wg_geom wg_shape(const ecg_conv_params *p) {
  const int tx = cdiv(cdiv(p->ow, p->dw), 4), ty = cdiv(cdiv(p->oh, p->dh), 4);
  const int rmax = imin(ty, imax(1, WG_TILES / tx));
  return wg_shape_rows(p, cdiv(ty, cdiv(ty, rmax)));
}

/* Most tile rows per band that T > 1 threads may take (wg_shape_threads): as many as keep
 * a band's V and Y (36 floats per tile and input or output channel of a block) within this
 * CPU's L2 (sysconf; 1 MiB where it does not say), and never fewer than one thread's. */
static int wg_rows_cap(const ecg_conv_params *p) {
  const wg_geom g1 = wg_shape(p);
  const long tiles = l2_cache_bytes() / (36L * (long)sizeof(float) * (p->c + g1.mb));
  return imax(g1.rows, imin(g1.ty, (int)(tiles / g1.tx)));
}

/* The geometry T threads run p with. One thread: wg_shape. More: the band height, from
 * wg_rows_cap down to bands of 2 * WG_VW tiles (or one thread's, if shorter), minimising
 * rounds of bands over the threads x the tiles of a band, ties to the taller band (fewer
 * input transforms); conv_wg_run then splits channel blocks when the bands are too few.
 * resnet18's 64x56x56 layers (14 x 14 tiles) took one thread's 5 bands of 3 rows, 10 jobs
 * of half the channels each repeating the input transform: 2 threads 1.41x one; 2 bands
 * of 7 rows: 1.93x (rt_test --bench, 5 interleaved rounds, 418 -> 575 GFLOP/s). */
static wg_geom wg_shape_threads(const ecg_conv_params *p, int T) {
  wg_geom best = wg_shape(p);
  if (T <= 1) return best;
  const int rmin = imin(best.rows, cdiv(2 * WG_VW, best.tx));
  double bcost = -1;
  for (int r = wg_rows_cap(p); r >= rmin; r--) {
    const wg_geom g = wg_shape_rows(p, r);
    const long jobs = (long)p->n * cdiv(g.ty, g.rows);
    const double cost = (double)((jobs + T - 1) / T) * g.tch;
    if (bcost < 0 || cost < bcost) { bcost = cost; best = g; }
  }
  return best;
}

/* Whether conv p runs as Winograd F(4x4, 3x3): group 1, 3x3, strides 1 (any dilation), at
 * least 8 input and output channels, and fewer multiply-adds by a margin once the tiles
 * are rounded to the micro-kernel's column vectors (a 7x7 plane gives 4 tiles, padded to
 * 16 columns: more work than the direct conv, so it stays direct). */
static int wg_shape_ok(const ecg_conv_params *p) {
  return p->group == 1 && p->kh == 3 && p->kw == 3 && p->sh == 1 && p->sw == 1 && p->dh >= 1 && p->dw >= 1 &&
         p->c >= 8 && p->m >= 8 && !conv_direct(p);
}
/* The multiply-add count above, with the transforms' cost: 1 when Winograd wins it. */
static int wg_fewer_macs(const ecg_conv_params *p) {
  const wg_geom g = wg_shape(p);
  const int full = g.ty / g.rows, rest = g.ty % g.rows; /* bands of g.rows tile rows, and a shorter one */
  const double cols = (double)full * cdiv(g.tch, WG_VW) * WG_VW + (rest ? cdiv(rest * g.tx, WG_VW) * WG_VW : 0);
  const double direct = 9.0 * p->oh * p->ow * p->c * p->m;
  const double phases = (double)p->dh * p->dw;
  const double wino = phases * (36.0 * cols * p->c * p->m + 200.0 * g.ty * g.tx * (p->c + p->m));
  return wino < 0.6 * direct;
}
static int conv_wg(const ecg_conv_params *p) {
  if (!wg_shape_ok(p)) return 0;
  if (p->algo) return p->algo == ECG_RT_CONV_WINOGRAD; /* a schedule's choice */
#ifdef ECG_WG_OVERRIDE /* measuring and testing both paths: ECG_WG=0|1 */
  if (getenv("ECG_WG")) return atoi(getenv("ECG_WG"));
#endif
  return !conv_blocked(p) && wg_fewer_macs(p);
}

/* Floats of the transforms' row buffers (wg_input, wg_output). */
static size_t wg_buf(const wg_geom *g) {
  const size_t txp = (size_t)cdiv(g->tx, 16) * 16;
  return 12 * (4 * txp + 16) + 4 * (txp + 16) + 30 * (size_t)g->ldv + 4 * txp + 64;
}

/* Scratch floats per thread for any thread count: the tallest band any may take. */
static size_t wg_per_thread(const ecg_conv_params *p) {
  const wg_geom g = wg_shape_rows(p, wg_rows_cap(p));
  return 36 * (size_t)g.ldv * (p->c + g.mb) + wg_buf(&g) + 3 * 32;
}

double ecg_rt1_conv2d_macs(const ecg_conv_params *p) {
  if (conv_wg(p)) {
    const wg_geom g = wg_shape(p);
    return 36.0 * p->n * p->dh * p->dw * g.ty * g.tx * p->c * p->m;
  }
  return (double)p->n * p->m * p->oh * p->ow * (p->c / (p->group > 0 ? p->group : 1)) * p->kh * p->kw;
}

static size_t wg_packed_floats(const ecg_conv_params *p) { return 36 * (size_t)cdiv(p->m, MR) * MR * p->c; }

/* U_xi = (G g G^T)[xi] for every (m, c), written straight into the A panels of the m x c
 * matrix of each point xi (the layout pack_a gives: panel q = m / MR, element (c, m % MR);
 * rows past m zero), G g first, then (G g) G^T, in double. */
static void wg_pack(const ecg_conv_params *p, const float *w, float *packed) {
  static const double G[6][3] = {{1.0 / 4, 0, 0},          {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  const int M = p->m, C = p->c, Mp = cdiv(M, MR) * MR;
  const size_t ua = (size_t)Mp * C;
  for (int mm = 0; mm < Mp; mm++)
    for (int k = 0; k < C; k++) {
      float *dst = packed + ((size_t)(mm / MR) * C + k) * MR + mm % MR;
      if (mm >= M) {
        for (int xi = 0; xi < 36; xi++) dst[xi * ua] = 0.f;
        continue;
      }
      const float *g = w + ((size_t)mm * C + k) * 9;
      double gt[6][3];
      for (int a = 0; a < 6; a++)
        for (int cc = 0; cc < 3; cc++) gt[a][cc] = G[a][0] * g[cc] + G[a][1] * g[3 + cc] + G[a][2] * g[6 + cc];
      for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++)
          dst[(a * 6 + b) * ua] = (float)(gt[a][0] * G[b][0] + gt[a][1] * G[b][1] + gt[a][2] * G[b][2]);
    }
}

/* Columns [0, n) of the 6-point combination B^T: o_i[x] = sum_k BT[i][k] d[x * ts + k * ps],
 * the points of column x ps floats apart, columns ts floats apart. wg_input runs it along
 * rows (the 6 input rows of a tile row: ps the row stride, ts 1), then along each combined
 * row's tiles, read in place (ps 1, ts 4: tile t's points are q[4t .. 4t + 5]). The
 * horizontal step once split each row into its 4 phases with scalar stores that this loop
 * then read back with vector loads, each of which waited on several of those stores (perf:
 * half of the transform's samples on two loads, 8.8% of resnet18 at 1 thread); reading in
 * place: rt_test --bench resnet18, 5 alternating rounds, medians, 1 thread: 64x56x56->64 222
 * -> 247 GFLOP/s, 128x28x28 247 -> 255, 256x14x14 254 -> 262, squeezenet1_1's 64x13x13->256
 * 193 -> 189 (4 tiles a row); in the model (5 rounds) resnet18's layer1 convs 975-1060 ->
 * 914-971 us, total 19.45 -> 19.23 ms. */
static inline __attribute__((always_inline)) void wg_bt6(int n, const float *restrict d, size_t ps, const int ts,
                                                         float *restrict o0, float *restrict o1, float *restrict o2,
                                                         float *restrict o3, float *restrict o4, float *restrict o5) {
  for (int x = 0; x < n; x++) {
    const float *c = d + (size_t)x * ts;
    const float a0 = c[0], a1 = c[ps], a2 = c[2 * ps], a3 = c[3 * ps], a4 = c[4 * ps], a5 = c[5 * ps];
    o0[x] = 4.f * a0 - 5.f * a2 + a4;
    o1[x] = -4.f * (a1 + a2) + a3 + a4;
    o2[x] = 4.f * (a1 - a2) - a3 + a4;
    o3[x] = 2.f * (a3 - a1) - a2 + a4;
    o4[x] = 2.f * (a1 - a3) - a2 + a4;
    o5[x] = 4.f * a1 - 5.f * a3 + a5;
  }
}

/* V [36][c][ldv] = B^T d B for the tiles of tile rows [ty0, ty1) of phase (pa, pb) (dilation:
 * input rows dh*u + pa - pt, columns dw*v + pb - pl) of one image x [c, h, w]
 * (tile t = (ty - ty0)*tx + tx at column t; columns tch..ldv zero): per tile row and
 * channel, the 6 input rows of its patches (zero-padded) combined vertically along the
 * whole row, then each result combined horizontally along the tiles, read in place
 * (wg_bt6). Input channels [c0, c1) only (the other channels' rows of V are not written).
 * buf: WG_BUF floats. */
static void wg_input(const ecg_conv_params *p, const wg_geom *g, const float *x, int ty0, int ty1, int pa, int pb,
                     int c0, int c1, float *V, float *buf) {
  const int TX = g->tx, C = p->c, h = p->h, w = p->w, txp = cdiv(TX, 16) * 16;
  const int L = 4 * txp + 16, len = 4 * TX + 4;
  const size_t vxi = (size_t)C * g->ldv;
  float *rp = buf, *q = buf + 6 * (size_t)L; /* rows, combined rows */
  const int ntail = g->ldv - (ty1 - ty0) * TX;
  for (int c = c0; c < c1; c++) {
    const float *plane = x + (size_t)c * h * w;
    for (int ty = ty0; ty < ty1; ty++) {
      for (int k = 0; k < 6; k++) {
        float *r = rp + (size_t)k * L;
        const int iy = p->dh * (4 * ty + k) + pa - p->pt;
        if (iy < 0 || iy >= h) {
          memset(r, 0, (size_t)len * sizeof(float));
        } else if (p->dw > 1) { /* r[i] = row[dw*i + pb - pl] inside the row, else 0 */
          const float *row = plane + (size_t)iy * w;
          for (int i = 0; i < len; i++) {
            const int ix = p->dw * i + pb - p->pl;
            r[i] = ix >= 0 && ix < w ? row[ix] : 0.f;
          }
        } else { /* r[i] = row[i - pl] inside the row, else 0 */
          const float *row = plane + (size_t)iy * w;
          const int a = imin(len, p->pl), bnd = imin(len, p->pl + w), lo = imax(a, bnd);
          if (a > 0) memset(r, 0, (size_t)a * sizeof(float));
          if (bnd > a) memcpy(r + a, row + (a - p->pl), (size_t)(bnd - a) * sizeof(float));
          if (len > lo) memset(r + lo, 0, (size_t)(len - lo) * sizeof(float));
        }
      }
      wg_bt6(len, rp, (size_t)L, 1, q, q + L, q + 2 * L, q + 3 * L, q + 4 * L, q + 5 * L);
      const size_t off = (size_t)c * g->ldv + (size_t)(ty - ty0) * TX;
      for (int i = 0; i < 6; i++) {
        float *v = V + (size_t)(i * 6) * vxi + off;
        wg_bt6(TX, q + (size_t)i * L, 1, 4, v, v + vxi, v + 2 * vxi, v + 3 * vxi, v + 4 * vxi, v + 5 * vxi);
      }
    }
    if (ntail > 0)
      for (int xi = 0; xi < 36; xi++) memset(V + xi * vxi + (size_t)c * g->ldv + (g->ldv - ntail), 0, (size_t)ntail * sizeof(float));
  }
}

/* o_i[t] = sum_r AT[i][r] s_r[t], i = 0..3, t in [0, n): the 6-to-4 output combination. */
static void wg_at6(int n, const float *restrict s0, const float *restrict s1, const float *restrict s2,
                   const float *restrict s3, const float *restrict s4, const float *restrict s5, float *restrict o0,
                   float *restrict o1, float *restrict o2, float *restrict o3) {
  for (int t = 0; t < n; t++) {
    const float a0 = s0[t], a1 = s1[t], a2 = s2[t], a3 = s3[t], a4 = s4[t], a5 = s5[t];
    const float p12 = a1 + a2, m12 = a1 - a2, p34 = a3 + a4, m34 = a3 - a4;
    o0[t] = a0 + p12 + p34;
    o1[t] = m12 + 2.f * m34;
    o2[t] = p12 + 4.f * p34;
    o3[t] = m12 + 8.f * m34 + a5;
  }
}

/* out[4t + j] = o_j[t] + b, t in [0, n): four phases interleaved back into a row. */
static void wg_join4(int n, const float *restrict o0, const float *restrict o1, const float *restrict o2,
                     const float *restrict o3, float b, float *restrict out) {
  for (int t = 0; t < n; t++) {
    out[4 * t] = o0[t] + b;
    out[4 * t + 1] = o1[t] + b;
    out[4 * t + 2] = o2[t] + b;
    out[4 * t + 3] = o3[t] + b;
  }
}

/* Output channels [m0, m0+mb) of tile rows [ty0, ty1) of phase (pa, pb): y = A^T Y A + bias
 * from Y [36][mb][ldv], written into one image y [m, oh, ow] (rows dh*r + pa, columns
 * dw*c + pb): per channel, the 6 rows of Y combined along the whole band (the vertical
 * A^T), each of the 4 results combined again (the horizontal A) and interleaved into
 * output rows. The activation is wg_job's. buf: wg_buf floats. */
static void wg_output(const ecg_conv_params *p, const wg_geom *g, const float *Y, int m0, int mb, int ty0, int ty1,
                       int pa, int pb, const float *bias, float *y, float *buf) {
  const int TX = g->tx, oh = p->oh, ow = p->ow, ldv = g->ldv, n = (ty1 - ty0) * TX;
  const size_t yxi = (size_t)mb * ldv, plane = (size_t)oh * ow;
  float *gb = buf, *ob = buf + 24 * (size_t)ldv, *orow = buf + 28 * (size_t)ldv; /* g[4][6][ldv], o[4][ldv], a row */
  for (int mi = 0; mi < mb; mi++) {
    const float b = bias ? bias[m0 + mi] : 0.f;
    float *yc = y + (size_t)(m0 + mi) * plane;
    const float *s = Y + (size_t)mi * ldv;
    for (int j = 0; j < 6; j++) /* g_i[j] = sum_r AT[i][r] Y[r*6 + j] */
      wg_at6(n, s + (size_t)j * yxi, s + (size_t)(6 + j) * yxi, s + (size_t)(12 + j) * yxi, s + (size_t)(18 + j) * yxi,
             s + (size_t)(24 + j) * yxi, s + (size_t)(30 + j) * yxi, gb + (size_t)j * ldv, gb + (size_t)(6 + j) * ldv,
             gb + (size_t)(12 + j) * ldv, gb + (size_t)(18 + j) * ldv);
    for (int i = 0; i < 4; i++) {
      const float *gi = gb + (size_t)(6 * i) * ldv;
      wg_at6(n, gi, gi + ldv, gi + 2 * ldv, gi + 3 * ldv, gi + 4 * ldv, gi + 5 * ldv, ob, ob + ldv, ob + 2 * ldv,
             ob + 3 * ldv);
      for (int ty = ty0; ty < ty1; ty++) {
        const int oy = p->dh * (4 * ty + i) + pa;
        if (oy >= oh) break;
        const size_t o = (size_t)(ty - ty0) * TX;
        if (p->dw > 1) { /* this phase's columns pb, pb + dw, ... of the row */
          wg_join4(TX, ob + o, ob + ldv + o, ob + 2 * ldv + o, ob + 3 * ldv + o, b, orow);
          float *yr = yc + (size_t)oy * ow;
          for (int u = 0, ox = pb; ox < ow; u++, ox += p->dw) yr[ox] = orow[u];
        } else if (4 * TX == ow) {
          wg_join4(TX, ob + o, ob + ldv + o, ob + 2 * ldv + o, ob + 3 * ldv + o, b, yc + (size_t)oy * ow);
        } else {
          wg_join4(TX, ob + o, ob + ldv + o, ob + 2 * ldv + o, ob + 3 * ldv + o, b, orow);
          memcpy(yc + (size_t)oy * ow, orow, (size_t)ow * sizeof(float));
        }
      }
    }
  }
}

/* One job: image img, tile rows [ty0, ty1) of every phase, output channels [m0, m1); then
 * act (or the generated epilogue) once on each channel's run of output rows
 * dh*4*ty0 .. min(dh*4*ty1, oh), which the job's phases have all written. */
/* The 36 GEMMs Y = U V and the output transform of output channels [m0, m1) of tile rows
 * [ty0, ty1) of phase (pa, pb), from the band's transformed input V (wg_input). Y: 36 *
 * ldv * mb floats, buf: wg_buf floats. */
static void wg_band_out(const ecg_conv_params *p, const wg_geom *g, const float *V, float *Y, float *buf,
                        const float *U, const float *bias, float *yi, int ty0, int ty1, int pa, int pb, int m0,
                        int m1) {
  const int C = p->c, tch = (ty1 - ty0) * g->tx;
  const size_t ua = (size_t)cdiv(p->m, MR) * MR * C;
  for (int ms = m0; ms < m1; ms += g->mb) {
    const int mb = imin(g->mb, m1 - ms);
    for (int xq = 0; xq < 36; xq++) {
      job_t J;
      memset(&J, 0, sizeof J);
      J.M = mb; J.N = tch; J.K = C;
      J.A = U + xq * ua + (size_t)(ms / MR) * C * MR; J.a_packed = 1;
      J.B = V + (size_t)xq * C * g->ldv; J.ldb = g->ldv; J.b_mode = B_DIRECT; J.b_full = 1;
      J.alpha = 1.f; J.beta = 0.f;
      J.C = Y + (size_t)xq * mb * g->ldv; J.ldc = g->ldv;
      run_tile(&J, 0, mb, 0, tch, NULL, NULL);
    }
    wg_output(p, g, Y, ms, mb, ty0, ty1, pa, pb, bias, yi, buf);
  }
}

/* The built-in activation on output channels [m0, m1) of tile rows [ty0, ty1) of image yi. */
static void wg_act(const ecg_conv_params *p, float *yi, int ty0, int ty1, int m0, int m1) {
  if (p->act.kind == ECG_ACT_NONE) return;
  const int r0 = imin(p->oh, 4 * p->dh * ty0), r1 = imin(p->oh, 4 * p->dh * ty1);
  for (int mm = m0; mm < m1; mm++)
    ecg_rt1_act_apply(p->act, yi + ((size_t)mm * p->oh + r0) * p->ow, (size_t)(r1 - r0) * p->ow);
}

/* A thread's scratch (wg_per_thread floats from ts): V [36][c][ldv], Y [36][mb][ldv], then
 * the transforms' buffer. */
static void wg_bufs(const ecg_conv_params *p, const wg_geom *g, float *ts, float **V, float **Y, float **buf) {
  *V = align64(ts);
  *Y = align64(*V + 36 * (size_t)g->ldv * p->c);
  *buf = align64(*Y + 36 * (size_t)g->ldv * g->mb);
}

/* One thread's job: tile rows [ty0, ty1) of image img, output channels [m0, m1), every
 * phase, in this thread's scratch (V, Y, buf). */
static void wg_job(const ecg_conv_params *p, const wg_geom *g, const float *x, const float *U, const float *bias,
                   float *y, int img, int ty0, int ty1, int m0, int m1, float *scratch) {
  const int C = p->c;
  float *V, *Y, *buf;
  wg_bufs(p, g, scratch, &V, &Y, &buf);
  const float *xi = x + (size_t)img * C * p->h * p->w;
  float *yi = y + (size_t)img * p->m * p->oh * p->ow;
  for (int pa = 0; pa < p->dh && pa < p->oh; pa++)
    for (int pb = 0; pb < p->dw && pb < p->ow; pb++) {
      wg_input(p, g, xi, ty0, ty1, pa, pb, 0, C, V, buf);
      wg_band_out(p, g, V, Y, buf, U, bias, yi, ty0, ty1, pa, pb, m0, m1);
    }
  wg_act(p, yi, ty0, ty1, m0, m1);
}

static void conv_wg_run(const ecg_conv_params *p, const float *x, const float *U, const float *bias, float *y,
                        float *scratch) {
  int T = ecg_threads();
  const wg_geom g = wg_shape_threads(p, T);
  const int bands = cdiv(g.ty, g.rows);
  /* channel blocks (multiples of MR) to balance the jobs over the threads: nmb from 1 to
   * 4 minimising rounds of jobs x job time. A job of m/k output channels costs, per input
   * channel, WG_XFORM (its input transform, repeated by every block of a band) + m/k (its
   * products), in units of one output channel's products: the input transform took 10% of
   * squeezenet1_1's 64x13x13->256 on one thread (perf), 28 / (28 + 256). One band of one
   * image (stride 1) transforms once, shared by the team (below): WG_XFORM / T. One
   * thread: 1. (The earlier model, 3% of a job per block, chose the same nmb on every
   * shape of rt_test and its --bench.) */
  enum { WG_XFORM = 28 };
  int nmb = 1;
  /* one band of one image (stride 1): the team shares its input transform (below) */
  const int shared = (long)p->n * bands == 1 && p->dh == 1 && p->dw == 1;
  if (T > 1) {
    const long nb = (long)p->n * bands;
    double best = -1;
    for (int k = 1; k <= imin(4, cdiv(p->m, MR)); k++) {
      const double rounds = (double)((nb * k + T - 1) / T), prod = (double)p->m / k;
      const double cost = shared ? (double)WG_XFORM / T + rounds * prod : rounds * (WG_XFORM + prod);
      if (best < 0 || cost < best) { best = cost; nmb = k; }
    }
  }
  const int mstep = cdiv(cdiv(p->m, nmb), MR) * MR;
  nmb = cdiv(p->m, mstep);
  const long total = (long)p->n * bands * nmb;
  if (T > total) T = (int)total;
  const size_t per = wg_per_thread(p);
  (void)T;
  if (T > 1 && shared) {
    /* one band of one image, its output channels split over the team: the team transforms
     * the input once, into thread 0's V, each thread a share of the input channels, where
     * every thread transformed all of it (squeezenet1_1's 64x13x13->256 at 2 threads: the
     * input transform took 19% of the time, against 10% on one thread) */
    ECG_PRAGMA(omp parallel num_threads(T)) {
      const int nt = ecg_team_size(), tid = ecg_tid();
      float *V, *Y0, *buf0, *Vt, *Y, *buf;
      wg_bufs(p, &g, scratch, &V, &Y0, &buf0); /* thread 0's V: the team's */
      wg_bufs(p, &g, scratch + (size_t)tid * per, &Vt, &Y, &buf);
      (void)Y0; (void)buf0; (void)Vt;
      wg_input(p, &g, x, 0, g.ty, 0, 0, p->c * tid / nt, p->c * (tid + 1) / nt, V, buf);
      ECG_PRAGMA(omp barrier)
      for (int mq = tid; mq < nmb; mq += nt) {
        const int m0 = mq * mstep, m1 = imin(p->m, (mq + 1) * mstep);
        wg_band_out(p, &g, V, Y, buf, U, bias, y, 0, g.ty, 0, 0, m0, m1);
        wg_act(p, y, 0, g.ty, m0, m1);
      }
    }
    return;
  }
  ECG_PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(T) if (T > 1))
  for (long t = 0; t < total; t++) {
    const int mq = (int)(t % nmb), band = (int)(t / nmb % bands), img = (int)(t / nmb / bands);
    const int ty0 = band * g.rows, ty1 = imin(g.ty, ty0 + g.rows);
    wg_job(p, &g, x, U, bias, y, img, ty0, ty1, mq * mstep, imin(p->m, (mq + 1) * mstep),
           scratch + (size_t)ecg_tid() * per);
  }
}

void ecg_rt1_sgemm_packed_a(int M, int N, int K, const float *packed_a, const float *B, int ldb, const float *bias_m,
                        ecg_act act, float *C, int ldc, float *scratch) {
  batch_t bt;
  memset(&bt, 0, sizeof bt);
  bt.G = 1;
  job_t *J = &bt.j;
  J->M = M; J->N = N; J->K = K;
  J->A = packed_a; J->a_packed = 1;
  J->B = B; J->ldb = ldb;
  J->b_mode = b_direct_ok(ldb, K) ? B_DIRECT : B_PACK; /* strides of 256 bytes would thrash L1 sets */
  J->alpha = 1.f; J->beta = 0.f;
  J->bias_m = bias_m; J->act = act;
  J->C = C; J->ldc = ldc;
  run_batch(&bt, 1, scratch, scratch ? ECG_CONV_BUF_FLOATS : 0);
}

size_t ecg_rt1_sgemm_packed_a_scratch_floats(int threads) { return (size_t)(threads < 1 ? 1 : threads) * ECG_CONV_BUF_FLOATS; }

/* A 1x1 conv on a 1x1 plane (a matrix-vector product: efficientnet's squeeze-excite
 * convs, 1152 -> 48 -> 1152 channels) from the A panels that ecg_rt1_conv2d_pack made
 * (MR rows, [K][MR] each): y[img][i] = act(bias[i] + sum_k w[i][k] x[img][k]), four
 * partial sums per row (independent FMA chains over k), one pass over the weights. The
 * GEMM path would spend a micro-kernel column panel of NR on one column. Threads over
 * (image, panel); act (or the generated epilogue) on each panel's run of channels. */
static int conv_gemv(const ecg_conv_params *p) {
  return conv_is_1x1(p) && p->oh == 1 && p->ow == 1 && p->group == 1;
}
static void conv_gemv_run(const ecg_conv_params *p, const float *x, const float *A, const float *bias, float *y) {
  const int M = p->m, K = p->c, np = cdiv(M, MR);
  const long tasks = (long)p->n * np;
  int T = ecg_threads();
  if ((double)p->n * M * K < 1e5) T = 1;
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long t = 0; t < tasks; t++) {
    const int img = (int)(t / np), q = (int)(t % np), mr = imin(MR, M - q * MR);
    const float *a = A + (size_t)q * K * MR, *xi = x + (size_t)img * K;
    float s0[MR], s1[MR], s2[MR], s3[MR];
    for (int i = 0; i < MR; i++) s0[i] = s1[i] = s2[i] = s3[i] = 0.f;
    int k = 0;
#ifdef ECG_AVX512 /* MR = 8: one ymm per k */
    __m256 v0 = _mm256_setzero_ps(), v1 = v0, v2 = v0, v3 = v0;
    for (; k + 4 <= K; k += 4, a += 4 * MR) {
      v0 = _mm256_fmadd_ps(_mm256_loadu_ps(a), _mm256_set1_ps(xi[k]), v0);
      v1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + MR), _mm256_set1_ps(xi[k + 1]), v1);
      v2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 2 * MR), _mm256_set1_ps(xi[k + 2]), v2);
      v3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 3 * MR), _mm256_set1_ps(xi[k + 3]), v3);
    }
    _mm256_storeu_ps(s0, v0);
    _mm256_storeu_ps(s1, v1);
    _mm256_storeu_ps(s2, v2);
    _mm256_storeu_ps(s3, v3);
#endif
    for (; k + 4 <= K; k += 4, a += 4 * MR) {
      const float x0 = xi[k], x1 = xi[k + 1], x2 = xi[k + 2], x3 = xi[k + 3];
      for (int i = 0; i < MR; i++) {
        s0[i] += a[i] * x0;
        s1[i] += a[MR + i] * x1;
        s2[i] += a[2 * MR + i] * x2;
        s3[i] += a[3 * MR + i] * x3;
      }
    }
    for (; k < K; k++, a += MR)
      for (int i = 0; i < MR; i++) s0[i] += a[i] * xi[k];
    float *yq = y + (size_t)img * M + (size_t)q * MR;
    for (int i = 0; i < mr; i++) yq[i] = ((s0[i] + s1[i]) + (s2[i] + s3[i])) + (bias ? bias[q * MR + i] : 0.f);
    ecg_rt1_act_apply(p->act, yq, (size_t)mr);
  }
}

ecg_conv_params ecg_rt1_conv1x1_plane(int n, int cin, int cout, ecg_act act) {
  ecg_conv_params c;
  memset(&c, 0, sizeof c);
  c.n = n; c.c = cin; c.m = cout; c.h = c.w = c.oh = c.ow = 1; c.kh = c.kw = 1;
  c.sh = c.sw = c.dh = c.dw = 1; c.group = 1;
  c.act = act;
  return c;
}

size_t ecg_rt1_conv2d_maxpool_scratch_floats(const ecg_conv_params *p, const ecg_pool_params *q, int threads) {
  if (p->n <= 0 || p->m <= 0 || p->oh <= 0 || p->ow <= 0) return 0;
#ifdef ECG_AVX512
  if (cpool_fused(p, q)) return (size_t)(threads < 1 ? 1 : threads) * cpool_per_thread(p, q);
  if (bkpool_fused(p, q)) return bk_plane_floats(p) + (size_t)(threads < 1 ? 1 : threads) * bkpool_per_thread(p, q);
#else
  (void)q;
#endif
  return (((size_t)p->n * p->m * p->oh * p->ow + 15) & ~(size_t)15) + ecg_rt1_conv2d_scratch_floats(p, threads);
}

void ecg_rt1_conv2d_maxpool(const ecg_conv_params *p, const ecg_pool_params *q, const float *x, const float *packed_w,
                            const float *bias, float *y, float *scratch) {
  if (p->n <= 0 || p->m <= 0 || p->oh <= 0 || p->ow <= 0) return;
#ifdef ECG_AVX512
  if (cpool_fused(p, q)) {
    conv_direct_run(p, q, x, packed_w, bias, y, scratch);
    return;
  }
  if (bkpool_fused(p, q)) {
    bkpool_run(p, q, x, packed_w, bias, y, scratch);
    return;
  }
#endif
  /* the conv into the scratch, then the pool from there */
  float *t = scratch;
  ecg_rt1_conv2d(p, x, packed_w, bias, t, t + (((size_t)p->n * p->m * p->oh * p->ow + 15) & ~(size_t)15));
  ecg_rt1_maxpool2d(q, t, y);
}

#ifdef ECG_AVX512
static int c16_applies(const ecg_conv_params *p) { return p->group == 1 && p->c >= 16 && p->n > 0; }
size_t ecg_rt1_nchwc16_blocked_scratch_floats(const ecg_conv_params *p, int threads) {
  if (!c16_applies(p)) return 0;
  return bk_plane_floats(p) + (size_t)imax(1, threads) * bk_part_floats(p) + 16;
}
int ecg_rt1_nchwc16_blocked(const ecg_conv_params *p, const float *x, const float *packed, const float *bias,
                            const float *res, float *y, float *scratch) {
  if (!c16_applies(p) || !scratch) return 0;
  conv_blocked_run(p, x, packed, bias, y, scratch, 1, res);
  return 1;
}
static int c16dw_applies(const ecg_conv_params *p) {
  return conv_is_dw(p) && p->m == p->c && (p->sw == 1 || p->sw == 2) && p->n > 0;
}
size_t ecg_rt1_nchwc16_dw_scratch_floats(const ecg_conv_params *p, int threads) {
  return c16dw_applies(p) ? (size_t)imax(1, threads) * cb_per_thread(p) : 0;
}
int ecg_rt1_nchwc16_dw(const ecg_conv_params *p, const float *x, const float *packed, const float *bias, const float *res,
                       float *y, float *scratch) {
  if (!c16dw_applies(p) || !scratch) return 0;
  dw_cb_run(p, x, packed, bias, y, scratch, 1, res);
  return 1;
}
#else
size_t ecg_rt1_nchwc16_dw_scratch_floats(const ecg_conv_params *p, int threads) {
  (void)p; (void)threads;
  return 0;
}
int ecg_rt1_nchwc16_dw(const ecg_conv_params *p, const float *x, const float *packed, const float *bias, const float *res,
                       float *y, float *scratch) {
  (void)p; (void)x; (void)packed; (void)bias; (void)res; (void)y; (void)scratch;
  return 0;
}
size_t ecg_rt1_nchwc16_blocked_scratch_floats(const ecg_conv_params *p, int threads) {
  (void)p; (void)threads;
  return 0;
}
int ecg_rt1_nchwc16_blocked(const ecg_conv_params *p, const float *x, const float *packed, const float *bias,
                            const float *res, float *y, float *scratch) {
  (void)p; (void)x; (void)packed; (void)bias; (void)res; (void)y; (void)scratch;
  return 0;
}
#endif

void ecg_rt1_conv2d(const ecg_conv_params *p, const float *x, const float *packed_w, const float *bias,
                float *y, float *scratch) {
  if (p->n <= 0 || p->m <= 0 || p->oh <= 0 || p->ow <= 0) return;
  if (conv_sub(p)) { /* per image: subsample x into the scratch, then the stride-1 conv */
    const ecg_conv_params v = conv_sub_view(p);
    const size_t ohw = (size_t)p->oh * p->ow;
    const int T = ecg_rt1_kernel_threads((double)p->c * p->oh * p->w); /* the input rows read */
    (void)T;
    for (int b = 0; b < p->n; b++) {
      const float *xb = x + (size_t)b * p->c * p->h * p->w;
      ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
      for (long r = 0; r < (long)p->c * p->oh; r++) { /* row oy of channel ci */
        const int ci = (int)(r / p->oh), oy = (int)(r % p->oh);
        const float *src = xb + ((size_t)ci * p->h + (size_t)oy * p->sh) * p->w;
        float *dst = scratch + (size_t)ci * ohw + (size_t)oy * p->ow;
        int ox = 0;
#ifdef ECG_AVX512
        if (p->sw == 2) { /* 16 outputs from 32 inputs: the even lanes of two vectors (masked at the row's end) */
          const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
          for (; ox < p->ow; ox += 16) {
            const int k = imin(16, p->ow - ox), n = imin(32, p->w - 2 * ox); /* outputs, inputs left */
            const __m512 lo = _mm512_maskz_loadu_ps(tail_mask(n), src + 2 * ox);
            const __m512 hi = _mm512_maskz_loadu_ps(n > 16 ? tail_mask(n - 16) : 0, src + 2 * ox + 16);
            _mm512_mask_storeu_ps(dst + ox, tail_mask(k), _mm512_permutex2var_ps(lo, ev, hi));
          }
        }
#endif
        for (; ox < p->ow; ox++) dst[ox] = src[(size_t)ox * p->sw];
      }
      ecg_rt1_conv2d(&v, scratch, packed_w, bias, y + (size_t)b * p->m * ohw, scratch + conv_sub_floats(p));
    }
    return;
  }
  if (conv_is_dw(p)) {
    conv_dw(p, x, packed_w, bias, y, scratch);
    return;
  }
#ifdef ECG_AVX512
  if (conv_direct(p)) {
    conv_direct_run(p, NULL, x, packed_w, bias, y, scratch);
    return;
  }
  if (conv_blocked(p)) {
    conv_blocked_run(p, x, packed_w, bias, y, scratch, 0, NULL);
    return;
  }
#endif
  if (conv_wg(p)) {
    conv_wg_run(p, x, packed_w, bias, y, scratch);
    return;
  }
  if (conv_gemv(p)) {
    conv_gemv_run(p, x, packed_w, bias, y);
    return;
  }
  const int G = p->group, mg = p->m / G, cg = p->c / G, ohw = p->oh * p->ow;
  const int Kg = cg * p->kh * p->kw;
  batch_t bt;
  memset(&bt, 0, sizeof bt);
  job_t *J = &bt.j;
  J->M = mg; J->N = ohw; J->K = Kg;
  J->A = packed_w; J->a_packed = 1;
  J->alpha = 1.f; J->beta = 0.f;
  J->bias_m = bias; J->act = p->act;
  J->C = y; J->ldc = ohw;
  bt.G = G;
  bt.a_g = (size_t)cdiv(mg, MR) * MR * Kg;
  bt.b_img = (size_t)p->c * p->h * p->w;
  bt.b_g = (size_t)cg * p->h * p->w;
  bt.c_img = (size_t)p->m * ohw;
  bt.c_g = (size_t)mg * ohw;
  bt.bias_g = (size_t)mg;
  if (conv_swap(p)) {
    J->swap = 1;
    bt.a_g = (size_t)cdiv(mg, NR) * NR * Kg;
  }
  /* In-place B rows with a stride that is a multiple of 256 bytes would thrash L1 sets,
   * unless few rows share a set (b_direct_ok). */
  if (conv_is_1x1(p) && (J->swap || b_direct_ok(ohw, Kg))) {
    J->B = x; J->ldb = ohw; J->b_mode = B_DIRECT;
  } else if (conv_is_1x1(p) && !J->swap) {
    J->B = x; J->ldb = ohw; J->b_mode = B_PACK;
  } else {
    J->b_mode = B_CONV;
    conv_src *s = &J->cs;
    s->x = x; s->h = p->h; s->w = p->w; s->kh = p->kh; s->kw = p->kw;
    s->sh = p->sh; s->sw = p->sw; s->dh = p->dh; s->dw = p->dw;
    s->pt = p->pt; s->pl = p->pl; s->ow = p->ow;
  }
  run_batch(&bt, p->n * G, scratch, conv_per_thread(p));
}

/* ------------------------------------------------------------------ ConvTranspose */

size_t ecg_rt1_convtranspose2d_scratch_floats(const ecg_conv_params *p) {
  return (size_t)(p->m / p->group) * p->kh * p->kw * p->h * p->w;
}

/* Per image and group: cols[(oc, ki, kj), (iy, ix)] = W_g^T * X_g (GEMM), then col2im:
 * y[oc, iy*sh - pt + ki*dh, ix*sw - pl + kj*dw] += cols[...]. */
void ecg_rt1_convtranspose2d(const ecg_conv_params *p, const float *x, const float *w, const float *bias,
                         float *y, float *scratch) {
  const int G = p->group, mg = p->m / G, cg = p->c / G, h = p->h, wd = p->w, hw = h * wd;
  const int kh = p->kh, kw = p->kw, oh = p->oh, ow = p->ow, Mc = mg * kh * kw;
  int T = ecg_threads();
  if ((double)p->n * p->m * oh * ow < 2e4) T = 1;
  (void)T;
  for (int img = 0; img < p->n; img++) {
    for (int g = 0; g < G; g++) {
      ecg_rt1_sgemm(1, 0, Mc, hw, cg, 1.f, w + (size_t)g * cg * Mc, Mc,
                x + ((size_t)img * p->c + (size_t)g * cg) * hw, hw, 0.f, scratch, hw);
      ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
      for (int o = 0; o < mg; o++) {
        const int oc = g * mg + o;
        float *yc = y + ((size_t)img * p->m + oc) * oh * ow;
        const float b = bias ? bias[oc] : 0.f;
        for (int i = 0; i < oh * ow; i++) yc[i] = b;
        for (int ki = 0; ki < kh; ki++)
          for (int kj = 0; kj < kw; kj++) {
            const float *col = scratch + ((size_t)(o * kh + ki) * kw + kj) * hw;
            for (int iy = 0; iy < h; iy++) {
              int oy = iy * p->sh - p->pt + ki * p->dh;
              if (oy < 0 || oy >= oh) continue;
              float *yr = yc + (size_t)oy * ow;
              const float *cr = col + (size_t)iy * wd;
              int off = kj * p->dw - p->pl;
              for (int ix = 0; ix < wd; ix++) {
                int ox = ix * p->sw + off;
                if ((unsigned)ox < (unsigned)ow) yr[ox] += cr[ix];
              }
            }
          }
        ecg_rt1_act_apply(p->act, yc, (size_t)oh * ow);
      }
    }
  }
}
