/* ecg runtime: kernels on the blocked channel layout NCHWc (issue 13 item 3; GCD², Niu
 * dissertation §4.3-4.4: per-operator layouts chosen globally, here the CPU layouts
 * NCHW / NCHWc8 / NCHWc16).
 *
 * Layout NCHWc with block C (8 or 16): a tensor of logical shape [n, c, h, w] is stored as
 * [n, ceil(c/C), h, w, C]; element (b, ch, y, x) is at
 *   ((b * ceil(c/C) + ch / C) * h + y) * w * C + x * C + ch % C.
 * The lanes of the last channel block past c (when c % C != 0) hold 0.0f: every kernel
 * here writes them as zeros and may rely on them being zeros in its inputs (reorders
 * write them, convolutions multiply them by zero weights, pooling keeps zeros zero).
 * Size in floats: ecg_rt1_nchwc_floats.
 *
 * C = 8 fills an AVX2 register, C = 16 an AVX-512 register. The kernels are written once
 * with GCC/Clang vector types of C floats (ecg_nchwc_k.h, instantiated for 8 and 16): the
 * compiler maps them onto AVX-512, AVX2, SSE, NEON or scalar code, so the portable build
 * is the same source and correct for both block sizes.
 *
 * Threads: OpenMP over independent (image, channel block, output row) items; one thread
 * when called from inside a parallel region or for small work.
 * Errors: none are detected at run time; callers check ecg_rt1_nchwc_conv2d_supported
 * (and C in {8, 16}) when lowering. */
#ifndef ECG_NCHWC_H
#define ECG_NCHWC_H

#include "ecg_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of a [n, c, h, w] tensor in NCHWc (padded to whole channel blocks). */
size_t ecg_rt1_nchwc_floats(int n, int c, int h, int w, int C);

/* Reorders (the layout-transform operators of GCD²'s edges): x [n, c, hw] NCHW ->
 * y NCHWc (padded lanes written as 0), and back. x and y never alias. */
void ecg_rt1_nchw_to_nchwc(int n, int c, int hw, int C, const float *x, float *y);
void ecg_rt1_nchwc_to_nchw(int n, int c, int hw, int C, const float *x, float *y);

/* 1 when ecg_rt1_nchwc_conv2d computes p with block C: C 8 or 16; group 1 (any m, c,
 * kernel, stride, dilation, pads) or depthwise (group == c == m). 0 otherwise. An
 * ECG_ACT_FN epilogue is called on runs of whole NCHWc positions (n = positions * C
 * floats of the NCHWc output, padded lanes included, which are zeroed afterwards): it
 * must address its operands by the run's offset from y, so they are NCHWc tensors of
 * y's shape (ecg-lower's layout lowering makes sure of it). */
int ecg_rt1_nchwc_conv2d_supported(const ecg_conv_params *p, int C);
/* Packed weights, made once at model creation from w [m, c/group, kh, kw] (ONNX layout):
 * group 1: OIhw{C}i{C}o blocks, [ceil(m/C)][ceil(c/C)][kh][kw][C in][C out], zero past c
 * and m; depthwise: [ceil(c/C)][kh][kw][C], zero past c. */
size_t ecg_rt1_nchwc_conv2d_packed_floats(const ecg_conv_params *p, int C);
void ecg_rt1_nchwc_conv2d_pack(const ecg_conv_params *p, int C, const float *w, float *packed);
/* y = act(conv(x, w) + bias + res), all NCHWc with block C: x [n, c, h, w], y and res
 * [n, m, oh, ow]; bias [m] (plain) and res (the fused residual Add) may be NULL.
 * Group 1: direct convolution register-blocked over 8 output columns x C output channels
 * (8 vector accumulators), inputs broadcast one channel at a time; with C = 16 and at
 * least 16 input channels, AVX-512 builds run the blocked direct conv's 2 x 14 register
 * tiles instead (ecg_rt1_nchwc16_blocked below). Depthwise: 8 output
 * columns x C channels per step (with C = 16 on AVX-512 builds, stride 1 or 2: the NCHW
 * depthwise kernel's channel-block tiles, ecg_rt1_nchwc16_dw below). x, y never alias; res
 * may equal y. */
void ecg_rt1_nchwc_conv2d(const ecg_conv_params *p, int C, const float *x, const float *packed, const float *bias,
                          const float *res, float *y, float *scratch);
/* Scratch floats ecg_rt1_nchwc_conv2d needs for p with block C on up to `threads` OpenMP
 * threads (pass the omp_get_max_threads() in force at the call; values < 1 mean 1): 0 except
 * where the blocked or depthwise paths below run. scratch may be NULL when it is 0. */
size_t ecg_rt1_nchwc_conv2d_scratch_floats(const ecg_conv_params *p, int C, int threads);

/* Internal to the runtime (ecg_gemm.c): ecg_rt1_nchwc_conv2d's group-1 convs with block 16
 * and at least 16 input channels on AVX-512 builds, computed by the register tiles of the
 * NCHW blocked direct conv (ecg_gemm.c "blocked direct conv"; weights in the same
 * [out block][in block][ky][kx][16 in][16 out] packing) on the NCHWc16 tensors as they are:
 * no transposes in or out. Scratch (floats, for up to `threads` OpenMP threads): the padded
 * input plane, ceil(c/16) * Hp * Wp * 16 (Hp, Wp: the input rows and columns the conv
 * reads, pads included), plus per thread a band's partial sums; 0 where it does not apply.
 * ecg_rt1_nchwc16_blocked returns 1 when it computed y, 0 when p does not qualify, the build
 * has no AVX-512 or scratch is NULL (the caller then computes y itself). */
size_t ecg_rt1_nchwc16_blocked_scratch_floats(const ecg_conv_params *p, int threads);
int ecg_rt1_nchwc16_blocked(const ecg_conv_params *p, const float *x, const float *packed, const float *bias,
                            const float *res, float *y, float *scratch);

/* Internal to the runtime (ecg_gemm.c): ecg_rt1_nchwc_conv2d's depthwise convs (group ==
 * c == m, horizontal stride 1 or 2) with block 16 on AVX-512 builds, computed by the
 * channel-block tiles of the NCHW depthwise kernel (ecg_gemm.c dw_cb: up to 8 output
 * positions x 16 channels in registers, the taps read from a zero-padded copy of the band's
 * input rows) on the NCHWc16 tensors as they are: the rows memcpy'd, the weights already in
 * the depthwise packing [ceil(c/16)][kh][kw][16], the tiles stored straight into y, + res,
 * the activation (or the ECG_ACT_FN epilogue on the band's positions) and lanes past m
 * zeroed per band. Scratch (floats): per thread one band's padded rows (and the NCHW
 * kernel's transposition buffers, unused here); 0 where it does not apply. Returns 1 when
 * it computed y, 0 when p does not qualify, the build has no AVX-512 or scratch is NULL. */
size_t ecg_rt1_nchwc16_dw_scratch_floats(const ecg_conv_params *p, int threads);
int ecg_rt1_nchwc16_dw(const ecg_conv_params *p, const float *x, const float *packed, const float *bias,
                       const float *res, float *y, float *scratch);

/* Pooling in NCHWc (the window semantics of ecg_rt1_maxpool2d / ecg_rt1_avgpool2d in
 * ecg_rt.h): x [n, c, h, w] -> y [n, c, oh, ow], C lanes at a time. */
void ecg_rt1_nchwc_maxpool2d(const ecg_pool_params *p, int C, const float *x, float *y);
void ecg_rt1_nchwc_avgpool2d(const ecg_pool_params *p, int C, const float *x, float *y);
/* GlobalAveragePool: x [n, c, hw] NCHWc -> y [n, c, 1, 1] NCHWc ([n, ceil(c/C), C]). */
void ecg_rt1_nchwc_global_avgpool(int n, int c, int hw, int C, const float *x, float *y);
/* Elementwise epilogue on same-shape NCHWc tensors: y = act(a + b) (b may be NULL: y =
 * act(a)); padded lanes written as 0. [n, c, hw] logical. y may alias a or b. */
void ecg_rt1_nchwc_add_act(int n, int c, int hw, int C, const float *a, const float *b, ecg_act act, float *y);

#ifdef __cplusplus
}
#endif
#endif /* ECG_NCHWC_H */
