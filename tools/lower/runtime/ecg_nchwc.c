/* ecg runtime: NCHWc kernels (contracts in ecg_nchwc.h). The bodies are in ecg_nchwc_k.h,
 * written once over a vector type of NC floats and instantiated here for NC = 8 and 16;
 * the entry points dispatch on the block size C. */
#include "ecg_nchwc.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#define ECG_PRAGMA(x) _Pragma(#x)
#else
#define ECG_PRAGMA(x)
#endif

/* Threads for `work` multiply-adds or element visits: one inside a parallel region or
 * under 5e4, else all of omp_get_max_threads(). */
/* 64-byte vectors in a build without AVX-512 are passed differently between functions
 * (GCC's -Wpsabi note); these helpers are static and inlined, so no ABI is crossed. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef float ecg_nchwc_v8 __attribute__((vector_size(32)));
typedef float ecg_nchwc_v16 __attribute__((vector_size(64)));
typedef int ecg_nchwc_i8 __attribute__((vector_size(32)));
typedef int ecg_nchwc_i16 __attribute__((vector_size(64)));

#define NC 8
#define NCV ecg_nchwc_v8
#define NCI ecg_nchwc_i8
#define NCS(name) name##_c8
#include "ecg_nchwc_k.h"
#undef NC
#undef NCV
#undef NCI
#undef NCS
#define NC 16
#define NCV ecg_nchwc_v16
#define NCI ecg_nchwc_i16
#define NCS(name) name##_c16
#include "ecg_nchwc_k.h"
#undef NC
#undef NCV
#undef NCI
#undef NCS

size_t ecg_rt1_nchwc_floats(int n, int c, int h, int w, int C) {
  return (size_t)n * ((c + C - 1) / C) * (size_t)h * w * C;
}

void ecg_rt1_nchw_to_nchwc(int n, int c, int hw, int C, const float *x, float *y) {
  if (C == 16) to_c16(n, c, hw, x, y);
  else to_c8(n, c, hw, x, y);
}

void ecg_rt1_nchwc_to_nchw(int n, int c, int hw, int C, const float *x, float *y) {
  if (C == 16) from_c16(n, c, hw, x, y);
  else from_c8(n, c, hw, x, y);
}

int ecg_rt1_nchwc_conv2d_supported(const ecg_conv_params *p, int C) {
  if (C != 8 && C != 16) return 0;
  if (p->group == 1) return 1;
  return p->group == p->c && p->m == p->c;
}

size_t ecg_rt1_nchwc_conv2d_packed_floats(const ecg_conv_params *p, int C) {
  size_t kk = (size_t)p->kh * p->kw, cb = (size_t)(p->c + C - 1) / C;
  if (p->group > 1) return cb * kk * C;
  return (size_t)((p->m + C - 1) / C) * cb * kk * C * C;
}

void ecg_rt1_nchwc_conv2d_pack(const ecg_conv_params *p, int C, const float *w, float *packed) {
  if (C == 16) pack_c16(p, w, packed);
  else pack_c8(p, w, packed);
}

size_t ecg_rt1_nchwc_conv2d_scratch_floats(const ecg_conv_params *p, int C, int threads) {
  if (C != 16) return 0;
  size_t a = ecg_rt1_nchwc16_blocked_scratch_floats(p, threads), b = ecg_rt1_nchwc16_dw_scratch_floats(p, threads);
  return a > b ? a : b;
}

void ecg_rt1_nchwc_conv2d(const ecg_conv_params *p, int C, const float *x, const float *packed, const float *bias,
                          const float *res, float *y, float *scratch) {
  if (C == 16 && ecg_rt1_nchwc16_blocked(p, x, packed, bias, res, y, scratch)) return;
  if (C == 16 && ecg_rt1_nchwc16_dw(p, x, packed, bias, res, y, scratch)) return;
  if (C == 16) conv_c16(p, x, packed, bias, res, y);
  else conv_c8(p, x, packed, bias, res, y);
}

void ecg_rt1_nchwc_maxpool2d(const ecg_pool_params *p, int C, const float *x, float *y) {
  if (C == 16) pool_c16(p, 1, x, y);
  else pool_c8(p, 1, x, y);
}

void ecg_rt1_nchwc_avgpool2d(const ecg_pool_params *p, int C, const float *x, float *y) {
  if (C == 16) pool_c16(p, 0, x, y);
  else pool_c8(p, 0, x, y);
}

void ecg_rt1_nchwc_global_avgpool(int n, int c, int hw, int C, const float *x, float *y) {
  if (C == 16) gap_c16(n, c, hw, x, y);
  else gap_c8(n, c, hw, x, y);
}

void ecg_rt1_nchwc_add_act(int n, int c, int hw, int C, const float *a, const float *b, ecg_act act, float *y) {
  if (C == 16) add_act_c16(n, c, hw, a, b, act, y);
  else add_act_c8(n, c, hw, a, b, act, y);
}
