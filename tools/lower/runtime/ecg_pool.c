/* ecg runtime: pooling (see ecg_rt.h for the contracts).
 * Per output row: the columns whose whole window lies inside the input (computed once per
 * call) go PV at a time through AVX2 (8 lanes) or NEON (4 lanes), strides 1 and 2 (stride 2
 * by an even/odd shuffle, vld2 on NEON); border columns and everything in the portable
 * build take a scalar per-column loop. With AVX-512, max pools of dilation-1 columns,
 * horizontal stride 1 or 2 and windows up to ECG_POOL_REG_KW columns run a
 * plane at a time in registers (maxpool_plane_reg), other max pools a row at a time
 * (maxpool_row512).
 * Threads over the n*c planes. */
#include "ecg_rt.h"
#include "ecg_pool.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* One vector of PV output columns: pv_t, pv_set1, pv_max, pv_add, pv_mul, pv_store, and
 * pv_cols(r, sw): PV consecutive outputs from input columns r[0], r[sw], ... (sw 1 or 2;
 * reads r[0, PV*sw)). */
#if defined(__AVX2__)
#include <immintrin.h>
#define ECG_POOL_VEC 1
#define PV 8
typedef __m256 pv_t;
#define pv_set1 _mm256_set1_ps
#define pv_max _mm256_max_ps
#define pv_add _mm256_add_ps
#define pv_mul _mm256_mul_ps
#define pv_store _mm256_storeu_ps
static inline pv_t pv_cols(const float *r, int sw) {
  if (sw == 1) return _mm256_loadu_ps(r);
  __m256 v0 = _mm256_loadu_ps(r), v1 = _mm256_loadu_ps(r + 8);
  __m256 ev = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
}
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define ECG_POOL_VEC 1
#define PV 4
typedef float32x4_t pv_t;
#define pv_set1 vdupq_n_f32
#define pv_max vmaxnmq_f32 /* NaN inputs ignored, as the scalar v > acc ? v : acc */
#define pv_add vaddq_f32
#define pv_mul vmulq_f32
#define pv_store vst1q_f32
static inline pv_t pv_cols(const float *r, int sw) { return sw == 1 ? vld1q_f32(r) : vld2q_f32(r).val[0]; }
#endif
#ifdef _OPENMP
#include <omp.h>
#define ECG_PRAGMA(x) _Pragma(#x)
#else
#define ECG_PRAGMA(x)
#endif

/* Output columns ox with 0 <= ox*s + off < w: [*lo, *hi). */
static void col_range(int ow, int w, int s, int off, int *lo, int *hi) {
  int a = off >= 0 ? 0 : (-off + s - 1) / s;
  int b = w - 1 - off < 0 ? 0 : (w - 1 - off) / s + 1;
  if (b > ow) b = ow;
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

/* Max or sum over the taps of output column ox; *cols = number of window columns counted
 * for the average. */
static float pool_col(const ecg_pool_params *p, const float *const *xr, int nr, int ox, int is_max, int *cols) {
  float acc = is_max ? -INFINITY : 0.f;
  int c = 0;
  for (int kj = 0; kj < p->kw; kj++) {
    int ix = ox * p->sw - p->pl + kj * p->dw;
    c += p->count_include_pad ? (ix >= -p->pl && ix < p->w + p->pr) : (ix >= 0 && ix < p->w);
    if (ix < 0 || ix >= p->w) continue;
    for (int r = 0; r < nr; r++) {
      float v = xr[r][ix];
      acc = is_max ? (v > acc ? v : acc) : acc + v;
    }
  }
  *cols = c;
  return acc;
}

#if defined(__AVX512F__)
/* Lanes l of a 16-float load at input column base with 0 <= base + l < w. */
static inline __mmask16 in_cols(int base, int w) {
  int lo = base < 0 ? -base : 0, hi = w - base < 16 ? w - base : 16;
  if (hi <= lo) return 0;
  return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}
/* One output row of a max pool with horizontal stride S (1 or 2), from the nr window rows
 * xr[] inside the input: 16 output columns a step, every column (borders and tail
 * included) by masked loads that read -inf outside [0, w) (a window with nothing inside
 * gives -inf), stride 2 by an even-lane permute of two loads; max as maxps(v, acc), which
 * ignores a NaN v as the scalar v > acc ? v : acc does. */
static void maxpool_row512(const ecg_pool_params *p, const float *const *xr, int nr, float *yr, const int S) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (int ox0 = 0; ox0 < p->ow; ox0 += 16) {
    __m512 acc = ninf;
    for (int kj = 0; kj < p->kw; kj++) {
      const int base = ox0 * S - p->pl + kj * p->dw;
      const __mmask16 m0 = in_cols(base, p->w), m1 = S == 2 ? in_cols(base + 16, p->w) : 0;
      if (!m0 && !m1) continue;
      for (int r = 0; r < nr; r++) {
        /* masked loads never touch the lanes outside the mask: the address may lie before the row */
        const float *a = (const float *)((uintptr_t)xr[r] + (intptr_t)base * (intptr_t)sizeof(float));
        __m512 v = _mm512_mask_loadu_ps(ninf, m0, a);
        if (S == 2) v = _mm512_permutex2var_ps(v, ev, _mm512_mask_loadu_ps(ninf, m1, (const float *)((uintptr_t)a + 64)));
        acc = _mm512_max_ps(v, acc);
      }
    }
    const int left = p->ow - ox0;
    _mm512_mask_storeu_ps(yr + ox0, left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u), acc);
  }
}

/* Max pool rows in registers (issue 13), for dilation-1 columns, stride S 1 or 2 and
 * kw <= ECG_POOL_REG_KW (other max pools: maxpool_row512): per 16 output columns, the
 * window's input columns (at most 3 vectors from column ox0 * S - pl, masked loads that
 * read -inf outside [0, w)) are reduced over the nr rows, then tap kj of every output lane
 * is picked from them by a permute with the index S * lane + kj (columns 32 and up from
 * the second and third vectors, blended in). It replaced a separable form (the row maxima
 * stored to a buffer and read back at unaligned offsets, a store-forwarding stall per
 * tap); against it, rt_test --bench maxpool, 1 thread, 2 rounds: squeezenet1_1's 3x3
 * stride-2 pools of 128x55x55 80 -> 69-74 us and 256x27x27 57-74 -> 36-37 us (ONNX
 * Runtime's NCHWc16 pools take 58 and 16 inside the model); 64x111x111 the same, 145-150
 * us. NaN inputs ignored as in maxpool_row512. */
typedef ecg_pool_reg_idx pool_reg_idx;
static int maxpool_reg_ok(const ecg_pool_params *p) {
  return p->dw == 1 && (p->sw == 1 || p->sw == 2) && p->kw <= ECG_POOL_REG_KW && 15 * p->sw + p->kw <= 48;
}
static void maxpool_reg_idx(const ecg_pool_params *p, pool_reg_idx *ix) {
  int lo[16], hi[16];
  for (int kj = 0; kj < p->kw; kj++) {
    unsigned m = 0;
    for (int l = 0; l < 16; l++) {
      const int c = p->sw * l + kj;
      lo[l] = c & 31;
      hi[l] = c >= 32 ? c - 16 : 0;
      if (c >= 32) m |= 1u << l;
    }
    ix->lo[kj] = _mm512_loadu_si512(lo);
    ix->hi[kj] = _mm512_loadu_si512(hi);
    ix->hm[kj] = (__mmask16)m;
  }
  ix->nv = (15 * p->sw + p->kw + 15) / 16;
}
/* The 3 x 16 columns of input row iy from column base (masks m[0..2]; -inf outside). */
typedef struct { __m512 v[3]; } mp_cols;
/* masked loads never touch the lanes outside the mask, so the address may lie before the
 * row: it is kept an integer (xc: the address of column base of row 0), never a pointer
 * outside the tensor */
static inline __attribute__((always_inline)) mp_cols mp_load(uintptr_t xc, int iy, int w, const __mmask16 *m, int three) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  const uintptr_t a = xc + (uintptr_t)((intptr_t)iy * w * (intptr_t)sizeof(float));
  mp_cols r = {{_mm512_mask_loadu_ps(ninf, m[0], (const float *)a), _mm512_mask_loadu_ps(ninf, m[1], (const float *)(a + 64)),
                three ? _mm512_mask_loadu_ps(ninf, m[2], (const float *)(a + 128)) : ninf}};
  return r;
}
/* The integer address of column base of a row starting at row (mp_load's xc). */
static inline uintptr_t mp_at(const float *row, int base) {
  return (uintptr_t)row + (uintptr_t)((intptr_t)base * (intptr_t)sizeof(float));
}
static inline __attribute__((always_inline)) mp_cols mp_max(mp_cols a, mp_cols b) {
  for (int k = 0; k < 3; k++) a.v[k] = _mm512_max_ps(a.v[k], b.v[k]);
  return a;
}
/* Output lane l = the max over taps kj < KW of input column S * l + kj of v (maxpool_reg_idx's
 * permutes: lo into (v0, v1), hi into (v1, v2) on the lanes hm marks). */
static inline __attribute__((always_inline)) __m512 mp_taps(mp_cols v, const __m512i *lo, const __m512i *hi,
                                                            const __mmask16 *hm, int KW) {
  __m512 acc = _mm512_set1_ps(-INFINITY);
  for (int kj = 0; kj < KW; kj++) {
    __m512 t = _mm512_permutex2var_ps(v.v[0], lo[kj], v.v[1]);
    if (hm[kj]) t = _mm512_mask_blend_ps(hm[kj], t, _mm512_permutex2var_ps(v.v[1], hi[kj], v.v[2]));
    acc = _mm512_max_ps(t, acc);
  }
  return acc;
}
static void maxpool_row_reg(const ecg_pool_params *p, const pool_reg_idx *ix, const float *const *xr, int nr, float *yr) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  for (int ox0 = 0; ox0 < p->ow; ox0 += 16) {
    const int base = ox0 * p->sw - p->pl;
    const __mmask16 m0 = in_cols(base, p->w), m1 = in_cols(base + 16, p->w), m2 = ix->nv > 2 ? in_cols(base + 32, p->w) : 0;
    __m512 v0 = ninf, v1 = ninf, v2 = ninf;
    for (int r = 0; r < nr; r++) { /* masked loads never touch the lanes outside the mask */
      const uintptr_t a = (uintptr_t)xr[r] + (uintptr_t)((intptr_t)base * (intptr_t)sizeof(float));
      v0 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, m0, (const float *)a), v0);
      v1 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, m1, (const float *)(a + 64)), v1);
      if (m2) v2 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, m2, (const float *)(a + 128)), v2);
    }
    const mp_cols v = {{v0, v1, v2}};
    const __m512 acc = mp_taps(v, ix->lo, ix->hi, ix->hm, p->kw);
    const int left = p->ow - ox0;
    _mm512_mask_storeu_ps(yr + ox0, left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u), acc);
  }
}

/* A whole plane of maxpool_row_reg's pools (issue 13), xp [h, w] -> yp [oh, ow]: the same
 * arithmetic with the loops turned around, 16 output columns outer and output rows inner,
 * so the column masks and permute indices stay in registers for the plane; a window row
 * shared with the previous output row's window (3x3 stride 2: one row of three) is loaded
 * once, and a vector with no lane inside the input is not loaded. Per output row through
 * ecg_rt1_pool_row, every row recomputed its masks, read its row pointers and indices back
 * from memory and loaded every window row. squeezenet1_1's 3x3 stride-2 pools, 1 thread,
 * hot, a harness calling ecg_rt1_maxpool2d, AMD EPYC Zen 4, 2 rounds: 256x27x27 44.6 ->
 * 18-24 us, 128x55x55 109 -> 37.5, 64x111x111 139 -> 104 (ONNX Runtime's NCHWc16 pools
 * inside the model: 22 and 37 us for the first two). */
static inline __attribute__((always_inline)) void maxpool_plane_body(const ecg_pool_params *p, const pool_reg_idx *ix,
                                                                     const float *xp, float *yp, const int KH, const int KW) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  const mp_cols none = {{ninf, ninf, ninf}};
  __m512i lo[ECG_POOL_REG_KW], hi[ECG_POOL_REG_KW];
  __mmask16 hm[ECG_POOL_REG_KW];
  for (int kj = 0; kj < KW; kj++) lo[kj] = ix->lo[kj], hi[kj] = ix->hi[kj], hm[kj] = ix->hm[kj];
  const int h = p->h, w = p->w, oh = p->oh, ow = p->ow, sh = p->sh, pt = p->pt, dh = p->dh, nv3 = ix->nv > 2;
  /* output rows [y0, y1) of a 3-row stride-2 window lie inside the input */
  const int fast = KH == 3 && sh == 2 && dh == 1, y0 = (pt + 1) / 2, y1m = h - 3 + pt < 0 ? 0 : (h - 3 + pt) / 2 + 1,
            y1 = y1m < oh ? y1m : oh;
  for (int ox0 = 0; ox0 < ow; ox0 += 16) {
    const int base = ox0 * p->sw - p->pl, left = ow - ox0;
    const __mmask16 m[3] = {in_cols(base, w), in_cols(base + 16, w), nv3 ? in_cols(base + 32, w) : 0};
    const int three = m[2] != 0;
    const __mmask16 ms = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
    const uintptr_t xc = mp_at(xp, base);
    int last = -1; /* the input row held in l */
    mp_cols l = none;
    for (int oy = 0; oy < oh; oy++) {
      mp_cols v = none;
      if (fast && oy >= y0 && oy < y1) { /* no checks; the window's first row is the last one's last */
        const int iy = oy * 2 - pt;
        if (last != iy) l = mp_load(xc, iy, w, m, three);
        v = mp_max(l, mp_load(xc, iy + 1, w, m, three));
        l = mp_load(xc, iy + 2, w, m, three);
        last = iy + 2;
        v = mp_max(v, l);
      } else
        for (int ki = 0; ki < KH; ki++) {
          const int iy = oy * sh - pt + ki * dh;
          if (iy < 0 || iy >= h) continue;
          if (iy != last) l = mp_load(xc, iy, w, m, three), last = iy;
          v = mp_max(v, l);
        }
      _mm512_mask_storeu_ps(yp + (size_t)oy * ow + ox0, ms, mp_taps(v, lo, hi, hm, KW));
    }
  }
}
/* One output row of each of np planes (maxpool_row_reg's arithmetic): the window rows of
 * plane k at xr[r] + k * xs, its output row at yr + k * ys; the column masks and permute
 * indices computed once for all planes. The fused Conv -> MaxPool kernel pools every
 * channel's row of its ring this way (ecg_gemm.c cpool_rows), where one ecg_rt1_pool_row call
 * per channel recomputed them per row. */
static void maxpool_rows_reg(const ecg_pool_params *p, const pool_reg_idx *ix, const float *const *xr, int nr, size_t xs,
                             int np, float *yr, size_t ys) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  const int KW = p->kw, w = p->w, ow = p->ow, nv3 = ix->nv > 2;
  for (int ox0 = 0; ox0 < ow; ox0 += 16) {
    const int base = ox0 * p->sw - p->pl, left = ow - ox0;
    const __mmask16 m[3] = {in_cols(base, w), in_cols(base + 16, w), nv3 ? in_cols(base + 32, w) : 0};
    const int three = m[2] != 0;
    const __mmask16 ms = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
    for (int k = 0; k < np; k++) {
      mp_cols v = {{ninf, ninf, ninf}};
      for (int r = 0; r < nr; r++) v = mp_max(v, mp_load(mp_at(xr[r] + (size_t)k * xs, base), 0, w, m, three));
      _mm512_mask_storeu_ps(yr + (size_t)k * ys + ox0, ms, mp_taps(v, ix->lo, ix->hi, ix->hm, KW));
    }
  }
}
/* 3x3 windows (the CNNs' pools) with the tap counts constant, so the tap loops unroll and
 * the indices stay in registers; other windows with the counts read from p. */
static void maxpool_plane_reg(const ecg_pool_params *p, const pool_reg_idx *ix, const float *xp, float *yp) {
  if (p->kh == 3 && p->kw == 3) maxpool_plane_body(p, ix, xp, yp, 3, 3);
  else maxpool_plane_body(p, ix, xp, yp, p->kh, p->kw);
}
#endif

void ecg_rt1_pool_rows_init(ecg_pool_rows *r, const ecg_pool_params *p, int is_max) {
  r->p = p;
  r->is_max = is_max;
  /* Interior columns [ilo, ihi): every window column inside the input. */
  int ilo = 0, ihi = p->ow;
  for (int kj = 0; kj < p->kw; kj++) {
    int lo, hi;
    col_range(p->ow, p->w, p->sw, kj * p->dw - p->pl, &lo, &hi);
    ilo = lo > ilo ? lo : ilo;
    ihi = hi < ihi ? hi : ihi;
  }
  if (ihi < ilo) ihi = ilo;
  r->ilo = ilo;
  r->ihi = ihi;
  r->reg = 0;
#if defined(__AVX512F__)
  r->reg = is_max && maxpool_reg_ok(p);
  if (r->reg) maxpool_reg_idx(p, &r->rix);
#endif
}

void ecg_rt1_pool_row(const ecg_pool_rows *rr, const float *const *xr, int nr, int rows, float *yr) {
  const ecg_pool_params *p = rr->p;
  const int ow = p->ow, w = p->w, kw = p->kw, sw = p->sw, is_max = rr->is_max, ilo = rr->ilo, ihi = rr->ihi;
  int ox = 0, cols;
#if defined(__AVX512F__)
  if (rr->reg) {
    maxpool_row_reg(p, &rr->rix, xr, nr, yr);
    return;
  }
  if (is_max && (sw == 1 || sw == 2)) {
    maxpool_row512(p, xr, nr, yr, sw);
    return;
  }
#endif
  for (; ox < ilo; ox++) {
    float v = pool_col(p, xr, nr, ox, is_max, &cols);
    yr[ox] = is_max ? v : (rows * cols > 0 ? v / (float)(rows * cols) : 0.f);
  }
#ifdef ECG_POOL_VEC
  if (sw <= 2) {
    const pv_t inv = pv_set1(rows > 0 ? 1.f / (float)(rows * kw) : 0.f);
    for (; ox + PV <= ihi && (ox + PV - 1) * sw + (kw - 1) * p->dw - p->pl + sw <= w; ox += PV) {
      pv_t acc = pv_set1(is_max ? -INFINITY : 0.f);
      for (int r = 0; r < nr; r++)
        for (int kj = 0; kj < kw; kj++) {
          pv_t v = pv_cols(xr[r] + ox * sw + kj * p->dw - p->pl, sw);
          acc = is_max ? pv_max(v, acc) : pv_add(acc, v);
        }
      pv_store(yr + ox, is_max ? acc : pv_mul(acc, inv));
    }
  }
#else
  (void)ihi; (void)w; (void)kw; (void)sw;
#endif
  for (; ox < ow; ox++) {
    float v = pool_col(p, xr, nr, ox, is_max, &cols);
    yr[ox] = is_max ? v : (rows * cols > 0 ? v / (float)(rows * cols) : 0.f);
  }
}

void ecg_rt1_pool_row_planes(const ecg_pool_rows *rr, const float *const *xr, int nr, int rows, size_t xs, int np, float *yr,
                         size_t ys) {
#if defined(__AVX512F__)
  if (rr->reg) {
    maxpool_rows_reg(rr->p, &rr->rix, xr, nr, xs, np, yr, ys);
    return;
  }
#endif
  const float *xk[64];
  for (int k = 0; k < np; k++) {
    for (int r = 0; r < nr; r++) xk[r] = xr[r] + (size_t)k * xs;
    ecg_rt1_pool_row(rr, xk, nr, rows, yr + (size_t)k * ys);
  }
}

static void pool2d(const ecg_pool_params *p, const float *x, float *y, int is_max) {
  const int h = p->h, w = p->w, oh = p->oh, ow = p->ow, kh = p->kh;
  const long planes = (long)p->n * p->c;
  int T = ecg_rt1_kernel_threads((double)planes * oh * ow * kh * p->kw);
  (void)T;
  ecg_pool_rows rr;
  ecg_rt1_pool_rows_init(&rr, p, is_max);
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long pl = 0; pl < planes; pl++) {
    const float *xp = x + (size_t)pl * h * w;
    float *yp = y + (size_t)pl * oh * ow;
#if defined(__AVX512F__)
    if (rr.reg) {
      maxpool_plane_reg(p, &rr.rix, xp, yp);
      continue;
    }
#endif
    const float *xr[kh];
    for (int oy = 0; oy < oh; oy++) {
      int nr = 0, rows = 0;
      for (int ki = 0; ki < kh; ki++) {
        int iy = oy * p->sh - p->pt + ki * p->dh;
        if (p->count_include_pad ? (iy >= -p->pt && iy < h + p->pb) : (iy >= 0 && iy < h)) rows++;
        if (iy >= 0 && iy < h) xr[nr++] = xp + (size_t)iy * w;
      }
      ecg_rt1_pool_row(&rr, xr, nr, rows, yp + (size_t)oy * ow);
    }
  }
}

void ecg_rt1_maxpool2d(const ecg_pool_params *p, const float *x, float *y) { pool2d(p, x, y, 1); }
void ecg_rt1_avgpool2d(const ecg_pool_params *p, const float *x, float *y) { pool2d(p, x, y, 0); }

void ecg_rt1_global_avgpool(int nc, int hw, const float *x, float *y) {
  int T = ecg_rt1_kernel_threads((double)nc * hw);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (int i = 0; i < nc; i++) {
    const float *xp = x + (size_t)i * hw;
    int j = 0;
    float t;
#if defined(__AVX2__)
    /* four independent 8-lane sums (32 floats a step): the adds' latency, not one chain */
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (; j + 32 <= hw; j += 32) {
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(xp + j));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(xp + j + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(xp + j + 16));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(xp + j + 24));
    }
    for (; j + 8 <= hw; j += 8) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(xp + j));
    a0 = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    t = _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
#else
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (; j + 8 <= hw; j += 8)
      for (int l = 0; l < 8; l++) s[l] += xp[j + l];
    t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
#endif
    for (; j < hw; j++) t += xp[j];
    y[i] = hw > 0 ? t / (float)hw : 0.f;
  }
}

void ecg_rt1_global_maxpool(int nc, int hw, const float *x, float *y) {
  int T = ecg_rt1_kernel_threads((double)nc * hw);
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
