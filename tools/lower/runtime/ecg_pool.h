/* ecg runtime, internal: the per-row pooling of ecg_pool.c, shared with the fused
 * Conv -> MaxPool kernel of ecg_gemm.c (ecg_rt1_conv2d_maxpool). Not part of the ABI
 * lowered code calls (ecg_rt.h). */
#ifndef ECG_POOL_H
#define ECG_POOL_H
#include "ecg_rt.h"
#if defined(__AVX512F__)
#include <immintrin.h>
#define ECG_POOL_REG_KW 17
/* Permute indices of maxpool_row_reg (ecg_pool.c) for one pool geometry. */
typedef struct {
  __m512i lo[ECG_POOL_REG_KW], hi[ECG_POOL_REG_KW]; /* permute indices into (v0, v1) and (v1, v2) */
  __mmask16 hm[ECG_POOL_REG_KW];                    /* lanes taken from (v1, v2) */
  int nv;                                           /* input vectors per 16 outputs */
} ecg_pool_reg_idx;
#endif

/** What one output row of pool p needs beyond its input rows, computed once per call
 *  (ecg_rt1_pool_rows_init): the interior columns [ilo, ihi) (every window column inside the
 *  input) and, with AVX-512, the register path's permute indices. */
typedef struct {
  const ecg_pool_params *p;
  int is_max, ilo, ihi, reg;
#if defined(__AVX512F__)
  ecg_pool_reg_idx rix;
#endif
} ecg_pool_rows;

/** Fill r for pool p (is_max: MaxPool, else AveragePool). No errors. */
void ecg_rt1_pool_rows_init(ecg_pool_rows *r, const ecg_pool_params *p, int is_max);
/** One output row yr [p->ow] from the nr window rows xr[0..nr) that lie inside the input
 *  (each p->w floats; a max over no row is -inf); rows: the window rows an average counts
 *  (count_include_pad: the padding rows too). No errors. */
void ecg_rt1_pool_row(const ecg_pool_rows *r, const float *const *xr, int nr, int rows, float *yr);
/** ecg_rt1_pool_row on np planes at once: plane k's window rows at xr[r] + k * xs, its output
 *  row at yr + k * ys (strides in floats); nr <= 64. The same results as np ecg_rt1_pool_row
 *  calls, with the AVX-512 register path's masks computed once. No errors. */
void ecg_rt1_pool_row_planes(const ecg_pool_rows *r, const float *const *xr, int nr, int rows, size_t xs, int np, float *yr,
                         size_t ys);
#endif
