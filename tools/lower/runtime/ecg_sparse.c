/* ecg runtime: pattern-sparse convolution support (PatDNN, Niu dissertation §2.5; see
 * ecg_rt.h for the contracts): the zero-padded input copy the FKW kernels generated into
 * model.c read without bounds checks, and the CSR convolution they are compared with.
 * Threads: OpenMP over channels (padding) and over (filter, row block) tiles (CSR). */
#include "ecg_rt.h"

#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#define ECG_PRAGMA(x) _Pragma(#x)
#else
#define ECG_PRAGMA(x)
#endif

static int sp_threads(void) {
#ifdef _OPENMP
  if (omp_in_parallel()) return 1;
  return omp_get_max_threads() > 1 ? omp_get_max_threads() : 1;
#else
  return 1;
#endif
}

void ecg_rt1_sparse_pad(const ecg_conv_params *p, const float *x, float *xp, int hp, int wp) {
  const int T = sp_threads();
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1 && p->c >= 8))
  for (int ci = 0; ci < p->c; ci++) {
    float *d = xp + (size_t)ci * hp * wp;
    const float *s = x + (size_t)ci * p->h * p->w;
    for (int yy = 0; yy < hp; yy++) {
      int sy = yy - p->pt;
      float *dr = d + (size_t)yy * wp;
      if (sy < 0 || sy >= p->h) { memset(dr, 0, (size_t)wp * sizeof *dr); continue; }
      int x0 = p->pl < wp ? p->pl : wp;                        /* left zeros */
      int nx = p->w < wp - x0 ? p->w : wp - x0;                 /* copied columns */
      if (nx < 0) nx = 0;
      memset(dr, 0, (size_t)x0 * sizeof *dr);
      memcpy(dr + x0, s + (size_t)sy * p->w, (size_t)nx * sizeof *dr);
      memset(dr + x0 + nx, 0, (size_t)(wp - x0 - nx) * sizeof *dr);
    }
  }
}

/* Output rows per CSR tile: the accumulators of a tile stay in L1 (<= 2048 floats). */
static int rows_per_tile(int oh, int ow) {
  int rb = 2048 / (ow > 0 ? ow : 1);
  if (rb < 1) rb = 1;
  return rb < oh ? rb : oh;
}

void ecg_rt1_csr_conv2d(const ecg_conv_params *p, const float *xp, int hp, int wp, const int *rowptr, const int *col,
                    const float *val, const float *bias, float *y) {
  const int T = sp_threads();
  (void)T;
  const int kk = p->kh * p->kw, ow = p->ow, sw = p->sw;
  const int rb = rows_per_tile(p->oh, ow), nrb = (p->oh + rb - 1) / rb;
  const size_t plane = (size_t)hp * wp;
  ECG_PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(T) if (T > 1))
  for (int t = 0; t < p->m * nrb; t++) {
    const int f = t / nrb, y0 = (t % nrb) * rb, ny = p->oh - y0 < rb ? p->oh - y0 : rb;
    float acc[2048];
    const float b = bias ? bias[f] : 0.f;
    for (int i = 0; i < ny * ow; i++) acc[i] = b;
    for (int j = rowptr[f]; j < rowptr[f + 1]; j++) {
      /* decode the column: input channel, kernel row and column */
      const int ci = col[j] / kk, tap = col[j] % kk, r = tap / p->kw, c = tap % p->kw;
      const float v = val[j];
      const float *xc = xp + (size_t)ci * plane + (size_t)r * p->dh * wp + (size_t)c * p->dw;
      for (int yy = 0; yy < ny; yy++) {
        const float *xr = xc + (size_t)(y0 + yy) * p->sh * wp;
        float *a = acc + yy * ow;
        ECG_PRAGMA(omp simd)
        for (int ox = 0; ox < ow; ox++) a[ox] += v * xr[ox * sw];
      }
    }
    float *yo = y + ((size_t)f * p->oh + y0) * ow;
    memcpy(yo, acc, (size_t)ny * ow * sizeof *yo);
    ecg_rt1_act_apply(p->act, yo, (size_t)ny * ow);
  }
}
