/* ecg runtime: the ARM64 NEON (Advanced SIMD) paths, included by ecg_gemm.c and ecg_pool.c
 * when the compiler defines __ARM_NEON (every aarch64 / armv8-a build), the counterparts
 * of their AVX2 paths. Internal to the runtime: static inline helpers only, no symbols.
 *
 * Tile parameters (the one place to tune them on a device; speed cannot be measured under
 * qemu, so these are the textbook choice for 32 128-bit registers, not measured):
 *   ECG_NEON_MR x ECG_NEON_NR = 8 x 12 micro-kernel: 24 accumulators + 3 B vectors + 2 A
 *   vectors = 29 of 32 v-registers; each k step is 24 by-element FMLAs
 *   (fmla vC.4s, vB.4s, vA.s[lane]) on 5 loads, the A column broadcast for free.
 *   ECG_NEON_KC / MCMAX / NCMAX: cache blocking as in ecg_gemm.c (KC*NR*4 = 12 KiB B panel). */
#ifndef ECG_NEON_H
#define ECG_NEON_H

#include <arm_neon.h>
#include <stddef.h>

#define ECG_NEON_MR 8
#define ECG_NEON_NR 12
#define ECG_NEON_KC 256
#define ECG_NEON_MCMAX 240 /* multiple of MR */
#define ECG_NEON_NCMAX 192 /* multiple of NR */

/* exp(x) on 4 lanes for x clamped to +-88.37: Cephes polynomial, relative error ~2e-7
 * (the same constants as the AVX2/AVX-512 exp256/exp512). */
static inline float32x4_t ecg_neon_exp(float32x4_t x) {
  x = vminq_f32(x, vdupq_n_f32(88.3762626647949f));
  x = vmaxq_f32(x, vdupq_n_f32(-88.3762626647949f));
  float32x4_t fx = vrndmq_f32(vfmaq_f32(vdupq_n_f32(0.5f), x, vdupq_n_f32(1.44269504088896341f)));
  x = vfmsq_f32(x, fx, vdupq_n_f32(0.693359375f));
  x = vfmsq_f32(x, fx, vdupq_n_f32(-2.12194440e-4f));
  float32x4_t y = vdupq_n_f32(1.9875691500E-4f);
  y = vfmaq_f32(vdupq_n_f32(1.3981999507E-3f), y, x);
  y = vfmaq_f32(vdupq_n_f32(8.3334519073E-3f), y, x);
  y = vfmaq_f32(vdupq_n_f32(4.1665795894E-2f), y, x);
  y = vfmaq_f32(vdupq_n_f32(1.6666665459E-1f), y, x);
  y = vfmaq_f32(vdupq_n_f32(5.0000001201E-1f), y, x);
  y = vfmaq_f32(vaddq_f32(x, vdupq_n_f32(1.f)), y, vmulq_f32(x, x));
  int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(fx), vdupq_n_s32(127)), 23);
  return vmulq_f32(y, vreinterpretq_f32_s32(e));
}

/* x[0, n4) with n4 a multiple of 4: sigmoid (silu == 0) or silu, 1/(1+exp(-x)) [* x]. */
static inline void ecg_neon_sigmoid(float *x, size_t n4, int silu) {
  const float32x4_t one = vdupq_n_f32(1.f);
  for (size_t i = 0; i < n4; i += 4) {
    float32x4_t v = vld1q_f32(x + i);
    float32x4_t s = vdivq_f32(silu ? v : one, vaddq_f32(one, ecg_neon_exp(vnegq_f32(v))));
    vst1q_f32(x + i, s);
  }
}

/* c[8,12] (row stride ldc) = alpha * sum_k a[k*8 + i] * b[k*bs + j] + beta * c (c not read
 * when beta == 0). a: MR-interleaved A panel; b: kc rows of 12 floats, row stride bs. */
static inline void ecg_neon_kern_8x12(int kc, const float *restrict a, const float *restrict b, ptrdiff_t bs,
                                      float *restrict c, ptrdiff_t ldc, float alpha, float beta) {
  float32x4_t c00 = vdupq_n_f32(0.f), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00;
  float32x4_t c20 = c00, c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
  float32x4_t c40 = c00, c41 = c00, c42 = c00, c50 = c00, c51 = c00, c52 = c00;
  float32x4_t c60 = c00, c61 = c00, c62 = c00, c70 = c00, c71 = c00, c72 = c00;
#define ECG_NEON_ROW(r, av, l)                 \
  c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, l); \
  c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, l); \
  c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, l)
  for (int k = 0; k < kc; k++) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
    const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
    ECG_NEON_ROW(0, a0, 0); ECG_NEON_ROW(1, a0, 1); ECG_NEON_ROW(2, a0, 2); ECG_NEON_ROW(3, a0, 3);
    ECG_NEON_ROW(4, a1, 0); ECG_NEON_ROW(5, a1, 1); ECG_NEON_ROW(6, a1, 2); ECG_NEON_ROW(7, a1, 3);
    a += 8;
    b += bs;
  }
#undef ECG_NEON_ROW
  const float32x4_t va = vdupq_n_f32(alpha), vb = vdupq_n_f32(beta);
  float32x4_t acc[8][3] = {{c00, c01, c02}, {c10, c11, c12}, {c20, c21, c22}, {c30, c31, c32},
                           {c40, c41, c42}, {c50, c51, c52}, {c60, c61, c62}, {c70, c71, c72}};
  for (int i = 0; i < 8; i++) {
    float *cr = c + (ptrdiff_t)i * ldc;
    for (int v = 0; v < 3; v++) {
      float32x4_t x = acc[i][v];
      if (alpha != 1.f) x = vmulq_f32(x, va);
      if (beta == 1.f) x = vaddq_f32(x, vld1q_f32(cr + 4 * v));
      else if (beta != 0.f) x = vfmaq_f32(x, vb, vld1q_f32(cr + 4 * v));
      vst1q_f32(cr + 4 * v, x);
    }
  }
}

/* Depthwise row: out[ox] = bias + sum_t tw[t] * base[toff[t] + ox], ox in [0, ow); base
 * readable up to ox = round_up(ow, 4). 16 outputs per step (4 accumulators), then 4. */
static inline void ecg_neon_dw_row(int ow, int nt, const float *base, const ptrdiff_t *toff, const float *tw,
                                   float bias, float *out) {
  int ox = 0;
  for (; ox + 16 <= ow; ox += 16) {
    float32x4_t a0 = vdupq_n_f32(bias), a1 = a0, a2 = a0, a3 = a0;
    for (int t = 0; t < nt; t++) {
      const float *s = base + toff[t] + ox;
      const float32x4_t wv = vdupq_n_f32(tw[t]);
      a0 = vfmaq_f32(a0, wv, vld1q_f32(s));
      a1 = vfmaq_f32(a1, wv, vld1q_f32(s + 4));
      a2 = vfmaq_f32(a2, wv, vld1q_f32(s + 8));
      a3 = vfmaq_f32(a3, wv, vld1q_f32(s + 12));
    }
    vst1q_f32(out + ox, a0);
    vst1q_f32(out + ox + 4, a1);
    vst1q_f32(out + ox + 8, a2);
    vst1q_f32(out + ox + 12, a3);
  }
  for (; ox < ow; ox += 4) {
    float32x4_t a0 = vdupq_n_f32(bias);
    for (int t = 0; t < nt; t++) a0 = vfmaq_f32(a0, vdupq_n_f32(tw[t]), vld1q_f32(base + toff[t] + ox));
    if (ox + 4 <= ow) {
      vst1q_f32(out + ox, a0);
    } else {
      float tmp[4];
      vst1q_f32(tmp, a0);
      for (int j = 0; ox + j < ow; j++) out[ox + j] = tmp[j];
    }
  }
}

/* De-interleave a stride-2 row: d[u] = s[2u] (phase 0) and d1[u] = s[2u+1], u in [0, n4),
 * n4 a multiple of 4; reads s[0, 2*n4). */
static inline void ecg_neon_split2(const float *s, int n4, float *d0, float *d1) {
  for (int u = 0; u < n4; u += 4) {
    float32x4x2_t v = vld2q_f32(s + 2 * u);
    vst1q_f32(d0 + u, v.val[0]);
    if (d1) vst1q_f32(d1 + u, v.val[1]);
  }
}

#endif /* ECG_NEON_H */
