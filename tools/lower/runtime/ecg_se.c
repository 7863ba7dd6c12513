/* Squeeze-and-excitation chains in one kernel (ecg_rt.h ecg_rt1_se; AGO §III intensive
 * fusion of compute-intensive operators, here on a 1x1 plane where nothing would be
 * recomputed anyway): GlobalAveragePool -> 1x1 conv + act -> 1x1 conv + act [-> the
 * broadcasting scale of x], or its tail (1x1 conv + act -> scale). The stages run the runtime's own kernels: the global average
 * pool, ecg_rt1_conv2d's matrix-vector path over the packed A panels; the pooled vector,
 * the hidden vector and the scales live in the scratch only. */
#include <stdint.h>
#include <string.h>

#include "ecg_rt.h"
#include "ecg_nchwc.h"

#ifdef _OPENMP
#define ECG_PRAGMA(x) _Pragma(#x)
#else
#define ECG_PRAGMA(x)
#endif

/* A 1x1 conv on the 1x1 plane of n images: cin -> cout channels. */
static ecg_conv_params se_fc(int n, int cin, int cout, ecg_act act) { return ecg_rt1_conv1x1_plane(n, cin, cout, act); }

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

size_t ecg_rt1_se_packed_floats(const ecg_se_params *p, int which) {
  ecg_act none = {ECG_ACT_NONE, 0, 0, 0, 0};
  ecg_conv_params c = which == 1 ? se_fc(p->n, p->c, p->cmid, none) : se_fc(p->n, p->cmid, p->cout, none);
  return ecg_rt1_conv2d_packed_floats(&c);
}

void ecg_rt1_se_pack(const ecg_se_params *p, int which, const float *w, float *packed) {
  ecg_act none = {ECG_ACT_NONE, 0, 0, 0, 0};
  ecg_conv_params c = which == 1 ? se_fc(p->n, p->c, p->cmid, none) : se_fc(p->n, p->cmid, p->cout, none);
  ecg_rt1_conv2d_pack(&c, w, packed);
}

size_t ecg_rt1_se_scratch_floats(const ecg_se_params *p, int threads) {
  ecg_conv_params c1 = se_fc(p->n, p->c, p->cmid, p->act1), c2 = se_fc(p->n, p->cmid, p->cout, p->act2);
  size_t k1 = ecg_rt1_conv2d_scratch_floats(&c1, threads), k2 = ecg_rt1_conv2d_scratch_floats(&c2, threads);
  return up16((size_t)p->n * p->c) + up16((size_t)p->n * p->cmid) + up16((size_t)p->n * p->cout) + (k1 > k2 ? k1 : k2) + 16;
}

void ecg_rt1_se(const ecg_se_params *p, const float *x, const float *u, const float *w1p, const float *b1, const float *w2p,
                const float *b2, float *y, float *scratch) {
  const int n = p->n, C = p->c;
  const size_t hw = (size_t)p->h * p->w;
  float *m = scratch, *h = m + up16((size_t)n * C), *s = h + up16((size_t)n * p->cmid);
  float *kscr = s + up16((size_t)n * p->cout);
  ecg_conv_params c1 = se_fc(n, C, p->cmid, p->act1), c2 = se_fc(n, p->cmid, p->cout, p->act2);
  if (p->pool && p->blk) /* NCHWc, n = 1: the pooled [ceil(c/blk)*blk] vector is m in NCHW order */
    ecg_rt1_nchwc_global_avgpool(n, C, (int)hw, p->blk, x, m);
  else if (p->pool)
    ecg_rt1_global_avgpool(n * C, (int)hw, x, m);
  if (p->pool) {
    ecg_rt1_conv2d(&c1, m, w1p, b1, h, kscr);
  } else
    h = (float *)(uintptr_t)u; /* read only */
  if (!p->scale) {
    ecg_rt1_conv2d(&c2, h, w2p, b2, y, kscr);
    return;
  }
  ecg_rt1_conv2d(&c2, h, w2p, b2, s, kscr);
  if (p->blk) { /* NCHWc: y[cb][j][l] = x[cb][j][l] * s[cb*blk + l], lanes past c zero */
    const int B = p->blk, cbs = (C + B - 1) / B;
    int T = ecg_rt1_kernel_threads((double)cbs * B * (double)hw);
    (void)T;
    ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
    for (int cb = 0; cb < cbs; cb++) {
      float v[16] = {0};
      for (int l = 0; l < B && cb * B + l < C; l++) v[l] = s[cb * B + l];
      const float *xp = x + (size_t)cb * hw * B;
      float *yp = y + (size_t)cb * hw * B;
      for (size_t j = 0; j < hw; j++)
        for (int l = 0; l < B; l++) yp[j * B + l] = xp[j * B + l] * v[l];
    }
    return;
  }
  const long planes = (long)n * C;
  int T = ecg_rt1_kernel_threads((double)planes * (double)hw);
  (void)T;
  if (x == y) { /* in place (the lowering stores x in y's buffer): one pointer, vectorised */
    ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
    for (long i = 0; i < planes; i++) {
      float *yp = y + (size_t)i * hw;
      const float v = s[i];
      for (size_t j = 0; j < hw; j++) yp[j] *= v;
    }
    return;
  }
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long i = 0; i < planes; i++) {
    const float *restrict xp = x + (size_t)i * hw;
    float *restrict yp = y + (size_t)i * hw;
    const float v = s[i];
    for (size_t j = 0; j < hw; j++) yp[j] = xp[j] * v;
  }
}
