/* Intensive fusion of an inverted-residual chain (AGO §III-B; MobileNet-V2, MNasNet,
 * EfficientNet): [pointwise conv] -> depthwise conv -> pointwise conv in one kernel, tiled
 * by output rows so that no element of an intermediate tensor is computed twice and the
 * expanded intermediate tensors never leave the cache (see ecg_rt.h, ecg_ibr). */
#include <stdlib.h>
#include <string.h>

#include "ecg_rt.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(_OPENMP)
#define ECG_IBR_PARALLEL_FOR _Pragma("omp parallel for schedule(static) if (!omp_in_parallel())")
#else
#define ECG_IBR_PARALLEL_FOR
#endif
#define IBR_TILE_BYTES (192 * 1024) /* ring + depthwise tile: about an L2 share */

static int imin_(int a, int b) { return a < b ? a : b; }
static int imax_(int a, int b) { return a > b ? a : b; }

/* Output rows per tile and ring rows for p. */
static void ibr_tiles(const ecg_ibr_params *p, int *R, int *RB) {
  int r = 1;
  for (int t = 2; t <= p->oh; t++) {
    size_t ring = (size_t)p->cexp * (size_t)((t - 1) * p->sh + p->kh) * (size_t)p->w;
    size_t d = (size_t)p->cexp * (size_t)t * (size_t)p->ow;
    if ((ring + d) * sizeof(float) > IBR_TILE_BYTES) break;
    r = t;
  }
  *R = r;
  *RB = (r - 1) * p->sh + p->kh;
}

size_t ecg_ibr_scratch_floats(const ecg_ibr_params *p) {
  int R, RB;
  ibr_tiles(p, &R, &RB);
  return (size_t)p->cexp * ((size_t)RB * (size_t)p->w + (size_t)R * (size_t)p->ow) + 16;
}

/* y[c][0..len) += bias[c]; act; for c in [0, C), rows of stride ld. */
static void bias_act(int C, float *y, size_t ld, size_t len, const float *bias, ecg_act act) {
  if (!bias && act.kind == ECG_ACT_NONE) return;
  ECG_IBR_PARALLEL_FOR
  for (int c = 0; c < C; c++) {
    float *r = y + (size_t)c * ld;
    if (bias)
      for (size_t i = 0; i < len; i++) r[i] += bias[c];
    ecg_act_apply(act, r, len);
  }
}

void ecg_ibr(const ecg_ibr_params *p, const float *x, const float *w1, const float *b1, const float *wd,
             const float *bd, const float *w2, const float *b2, float *y, float *scratch, long *e_rows) {
  int R, RB;
  ibr_tiles(p, &R, &RB);
  const int H = p->h, W = p->w, OH = p->oh, OW = p->ow, CE = p->cexp;
  float *ring = scratch, *D = scratch + (size_t)CE * RB * W;
  for (int img = 0; img < p->n; img++) {
    const float *xi = x + (size_t)img * p->cin * H * W;
    float *yi = y + (size_t)img * p->cout * OH * OW;
    int next = 0; /* the next row of the intermediate E to compute; rows [next-RB, next) are in the ring */
    for (int oy0 = 0; oy0 < OH; oy0 += R) {
      const int oy1 = imin_(OH, oy0 + R), T = oy1 - oy0;
      const int need_hi = imin_(H, (oy1 - 1) * p->sh - p->pt + p->kh);
      while (next < need_hi) { /* E rows [next, next+cnt): contiguous ring slots */
        const int slot = next % RB, cnt = imin_(need_hi - next, RB - slot);
        float *e = ring + (size_t)slot * W;
        if (w1) {
          ecg_sgemm(0, 0, CE, cnt * W, p->cin, 1.0f, w1, p->cin, xi + (size_t)next * W, H * W, 0.0f, e, RB * W);
          bias_act(CE, e, (size_t)RB * W, (size_t)cnt * W, b1, p->act1);
        } else {
          for (int c = 0; c < CE; c++) memcpy(e + (size_t)c * RB * W, xi + ((size_t)c * H + next) * W, sizeof(float) * (size_t)cnt * W);
        }
        if (e_rows) *e_rows += cnt;
        next += cnt;
      }
      /* depthwise rows [oy0, oy1) of every channel into D [CE][T*OW] */
      ECG_IBR_PARALLEL_FOR
      for (int c = 0; c < CE; c++) {
        const float *wk = wd + (size_t)c * p->kh * p->kw;
        const float bias = bd ? bd[c] : 0.f;
        for (int oy = oy0; oy < oy1; oy++) {
          float *acc = D + (size_t)c * R * OW + (size_t)(oy - oy0) * OW;
          for (int ox = 0; ox < OW; ox++) acc[ox] = bias;
          for (int ky = 0; ky < p->kh; ky++) {
            const int iy = oy * p->sh - p->pt + ky;
            if (iy < 0 || iy >= H) continue;
            const float *row = ring + ((size_t)c * RB + (size_t)(iy % RB)) * W;
            for (int kx = 0; kx < p->kw; kx++) {
              const float wv = wk[ky * p->kw + kx];
              const int off = kx - p->pl; /* ix = ox * sw + off */
              const int lo = off >= 0 ? 0 : (-off + p->sw - 1) / p->sw;
              const int hi = imin_(OW, W - off > 0 ? (W - off - 1) / p->sw + 1 : 0);
              if (p->sw == 1) {
                const float *r = row + off;
#pragma omp simd
                for (int ox = lo; ox < hi; ox++) acc[ox] += wv * r[ox];
              } else {
                for (int ox = lo; ox < hi; ox++) acc[ox] += wv * row[ox * p->sw + off];
              }
            }
          }
        }
        (void)imax_;
      }
      bias_act(CE, D, (size_t)R * OW, (size_t)T * OW, NULL, p->act2);
      /* pointwise: y rows [oy0, oy1) of every output channel */
      ecg_sgemm(0, 0, p->cout, T * OW, CE, 1.0f, w2, CE, D, R * OW, 0.0f, yi + (size_t)oy0 * OW, OH * OW);
      bias_act(p->cout, yi + (size_t)oy0 * OW, (size_t)OH * OW, (size_t)T * OW, b2, p->act3);
    }
  }
}
