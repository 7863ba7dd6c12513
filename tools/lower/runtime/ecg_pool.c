/* ecg runtime: pooling (see ecg_rt.h for the contracts).
 * Each output row is built tap by tap: for every window position (ki, kj) the range of
 * output columns whose input column is inside the image is computed once, so the inner
 * loops have no bounds checks and vectorise for stride 1. Threads over the n*c planes. */
#include "ecg_rt.h"

#include <math.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#define ECG_PRAGMA(x) _Pragma(#x)
#else
#define ECG_PRAGMA(x)
#endif

static int pool_threads(double work) {
#ifdef _OPENMP
  if (omp_in_parallel() || work < 5e4) return 1;
  return omp_get_max_threads() > 1 ? omp_get_max_threads() : 1;
#else
  (void)work;
  return 1;
#endif
}

/* Output columns ox with 0 <= ox*s + off < w: [*lo, *hi). */
static void col_range(int ow, int w, int s, int off, int *lo, int *hi) {
  int a = off >= 0 ? 0 : (-off + s - 1) / s;
  int b = w - 1 - off < 0 ? 0 : (w - 1 - off) / s + 1;
  if (b > ow) b = ow;
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

static void pool2d(const ecg_pool_params *p, const float *x, float *y, int is_max) {
  const int h = p->h, w = p->w, oh = p->oh, ow = p->ow, kh = p->kh, kw = p->kw, sw = p->sw;
  const long planes = (long)p->n * p->c;
  int T = pool_threads((double)planes * oh * ow * kh * kw);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long pl = 0; pl < planes; pl++) {
    const float *xp = x + (size_t)pl * h * w;
    float *yp = y + (size_t)pl * oh * ow;
    for (int oy = 0; oy < oh; oy++) {
      float *restrict yr = yp + (size_t)oy * ow;
      const float init = is_max ? -INFINITY : 0.f;
      for (int ox = 0; ox < ow; ox++) yr[ox] = init;
      int rows = 0;
      for (int ki = 0; ki < kh; ki++) {
        int iy = oy * p->sh - p->pt + ki * p->dh;
        if (p->count_include_pad && iy >= -p->pt && iy < h + p->pb) rows++;
        if (iy < 0 || iy >= h) continue;
        if (!p->count_include_pad) rows++;
        const float *restrict xr = xp + (size_t)iy * w;
        for (int kj = 0; kj < kw; kj++) {
          int off = kj * p->dw - p->pl, lo, hi;
          col_range(ow, w, sw, off, &lo, &hi);
          if (is_max) {
            if (sw == 1) {
              for (int ox = lo; ox < hi; ox++) yr[ox] = xr[ox + off] > yr[ox] ? xr[ox + off] : yr[ox];
            } else {
              for (int ox = lo; ox < hi; ox++) {
                float v = xr[ox * sw + off];
                yr[ox] = v > yr[ox] ? v : yr[ox];
              }
            }
          } else {
            if (sw == 1) {
              for (int ox = lo; ox < hi; ox++) yr[ox] += xr[ox + off];
            } else {
              for (int ox = lo; ox < hi; ox++) yr[ox] += xr[ox * sw + off];
            }
          }
        }
      }
      if (!is_max) {
        for (int ox = 0; ox < ow; ox++) {
          int cols = 0;
          for (int kj = 0; kj < kw; kj++) {
            int ix = ox * sw - p->pl + kj * p->dw;
            cols += p->count_include_pad ? (ix >= -p->pl && ix < w + p->pr) : (ix >= 0 && ix < w);
          }
          int cnt = rows * cols;
          yr[ox] = cnt > 0 ? yr[ox] / (float)cnt : 0.f;
        }
      }
    }
  }
}

void ecg_maxpool2d(const ecg_pool_params *p, const float *x, float *y) { pool2d(p, x, y, 1); }
void ecg_avgpool2d(const ecg_pool_params *p, const float *x, float *y) { pool2d(p, x, y, 0); }

void ecg_global_avgpool(int nc, int hw, const float *x, float *y) {
  int T = pool_threads((double)nc * hw);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (int i = 0; i < nc; i++) {
    const float *xp = x + (size_t)i * hw;
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int j = 0;
    for (; j + 8 <= hw; j += 8)
      for (int l = 0; l < 8; l++) s[l] += xp[j + l];
    float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; j < hw; j++) t += xp[j];
    y[i] = hw > 0 ? t / (float)hw : 0.f;
  }
}

void ecg_global_maxpool(int nc, int hw, const float *x, float *y) {
  int T = pool_threads((double)nc * hw);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (int i = 0; i < nc; i++) {
    const float *xp = x + (size_t)i * hw;
    float m[8];
    int j = 0;
    for (int l = 0; l < 8; l++) m[l] = -INFINITY;
    for (; j + 8 <= hw; j += 8)
      for (int l = 0; l < 8; l++) m[l] = xp[j + l] > m[l] ? xp[j + l] : m[l];
    float t = -INFINITY;
    for (int l = 0; l < 8; l++) t = m[l] > t ? m[l] : t;
    for (; j < hw; j++) t = xp[j] > t ? xp[j] : t;
    y[i] = t;
  }
}
