/* ecg runtime: the kernels that lowered models call.
 *
 * Copied verbatim into every lowered model directory and compiled there with any of
 *   cc -O3 -march=native -fopenmp     (AVX2/FMA micro-kernels, OpenMP threads)
 *   aarch64-linux-gnu-gcc -O3 -fopenmp (NEON micro-kernels, ecg_neon.h)
 *   cc -O2                            (portable C, one thread)
 * Every function is a pure function of its arguments (no global mutable state).
 * Threads: OpenMP; the caller picks the count with omp_set_num_threads(). A call made
 * from inside a parallel region runs on one thread (no nested regions).
 *
 * All tensors are float32. Sizes of packed buffers and scratch are in floats; buffers
 * need no particular alignment (4-byte aligned floats are enough; 64-byte alignment is
 * a little faster).
 */
#ifndef ECG_RT_H
#define ECG_RT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fused epilogue activation applied after bias. */
typedef enum {
  ECG_ACT_NONE = 0,
  ECG_ACT_RELU,      /* max(x, 0) */
  ECG_ACT_CLIP,      /* min(max(x, a), b) */
  ECG_ACT_LEAKY,     /* x < 0 ? a * x : x */
  ECG_ACT_SIGMOID,   /* 1 / (1 + exp(-x)) */
  ECG_ACT_HARDSWISH, /* x * clamp(x / 6 + 1/2, 0, 1)  (ONNX HardSwish) */
  ECG_ACT_SILU,      /* x * sigmoid(x) */
  ECG_ACT_FN         /* fn(x, n, arg): a generated fusion-block epilogue */
} ecg_act_kind;
/* A generated epilogue (DNNFusion §3.4.4: the One-to-One successors of a Many-to-Many
 * operator fused into it): called on row segments x[0..n) of the kernel's output tensor
 * (after bias, while the tile is in cache), from any OpenMP thread, on disjoint segments;
 * it reads the segment, computes the fused operators and writes their results (possibly
 * back into x). Segments are contiguous runs of the row-major output: one output row of a
 * GEMM tile, or a run of one output channel's plane of a convolution. */
typedef void (*ecg_epilogue_fn)(float *x, size_t n, const void *arg);
typedef struct {
  ecg_act_kind kind;
  float a, b;
  ecg_epilogue_fn fn; /* ECG_ACT_FN only */
  const void *arg;    /* passed to fn */
} ecg_act;

/* Apply act in place to x[n] (ECG_ACT_FN: act.fn(x, n, act.arg)). */
void ecg_act_apply(ecg_act act, float *x, size_t n);

/* ------------------------------------------------------------------ GEMM */

/* C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, all row-major with leading
 * dimensions (in floats).
 *   transA == 0: A is [M, lda >= K];  transA != 0: A is [K, lda >= M] and op(A) = A^T.
 *   transB == 0: B is [K, ldb >= N];  transB != 0: B is [N, ldb >= K] and op(B) = B^T.
 *   C is [M, ldc >= N].
 * beta == 0: C is overwritten and never read (it may hold garbage or NaN); any other
 * beta scales the old C. Temporary pack buffers (at most 240*256 + 256*192 floats, about
 * 430 KiB, per thread) come from one malloc per call; if malloc fails the call runs on
 * fewer threads, or as a slow unpacked loop. */
void ecg_sgemm(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc);

/* Prepacked constant B (weights): pack once at model creation, reuse every run.
 * Layout: ceil(N/NR) panels; panel p holds K rows of NR floats, element (k, j) of panel p
 * is op(B)[k, NR*p + j], zero for columns >= N. Size: ceil(N/NR) * NR * K floats.
 * NR is the micro-kernel width of this build: 48 with AVX-512F (8x48 kernel), 12 with
 * NEON (8x12), else 16 (6x16 AVX2 kernel, or portable C). Pack and use in the same build (they always are:
 * the runtime is compiled once per model directory). */
size_t ecg_sgemm_packed_b_floats(int K, int N);
/* op(B)[K,N] -> packed[ecg_sgemm_packed_b_floats(K, N)]; transB as in ecg_sgemm. */
void ecg_sgemm_pack_b(int transB, int K, int N, const float *B, int ldb, float *packed);
/* C[M,N] = act(op(A)[M,K] * packedB[K,N] + bias_n[N] + beta * C).
 * A: transA == 0: [M, lda >= K], else [K, lda >= M]. packed from ecg_sgemm_pack_b(K, N).
 * bias_n [N] may be NULL. beta 0 (C write-only) or 1 (accumulate into C). C [M, ldc >= N]. */
void ecg_sgemm_packed(int transA, int M, int N, int K, const float *A, int lda, const float *packed,
                      const float *bias_n, ecg_act act, float beta, float *C, int ldc);

/* Name of the GEMM/conv micro-kernel this build of the runtime runs, MRxNR: "avx512-8x48",
 * "avx2-6x16", "neon-8x12" (aarch64, tile parameters in ecg_neon.h) or "c-6x16" (portable C).
 * Chosen at compile time by the compiler's predefined macros (__AVX512F__, __AVX2__ with
 * __FMA__, __ARM_NEON); a static string. */
const char *ecg_gemm_kernel_name(void);

/* ------------------------------------------------------------------ Conv */

/* 2-D convolution, NCHW float32 (1-D convs are called with h = kh = 1). */
typedef struct {
  int n, c, h, w;     /* input  [n, c, h, w] */
  int m, kh, kw;      /* weight [m, c/group, kh, kw] */
  int oh, ow;         /* output [n, m, oh, ow] */
  int sh, sw, dh, dw; /* strides, dilations */
  int pt, pl, pb, pr; /* pads: top, left, bottom, right */
  int group;
  ecg_act act; /* applied after bias */
} ecg_conv_params;

/* Size in floats of the prepacked weights.
 * Depthwise (group == c > 1, m a multiple of c): the weights as they are, [m, kh*kw].
 * Otherwise, per group g (G = group, mg = m/G, Kg = (c/G)*kh*kw): ceil(mg/MR) panels of
 * Kg x MR floats (element (k, i) of panel q = w[g*mg + MR*q + i][k], zero past mg);
 * total G * ceil(mg/MR) * MR * Kg; MR is 8 with AVX-512F or NEON, else 6 (see NR above). */
size_t ecg_conv2d_packed_floats(const ecg_conv_params *p);
/* w [m, c/group, kh, kw] (ONNX layout) -> packed[ecg_conv2d_packed_floats(p)]. */
void ecg_conv2d_pack(const ecg_conv_params *p, const float *w, float *packed);
/* Scratch floats that ecg_conv2d needs when it runs on up to `threads` OpenMP threads
 * (pass the omp_get_max_threads() in force at the time of the call; values < 1 mean 1).
 * Per thread (plus 32 floats of alignment slack): a 256 x 192 im2col/pack block, or for
 * depthwise convs one zero-padded, stride-split input plane of Hp * sw * Lp floats,
 * Hp = (oh-1)*sh + (kh-1)*dh + 1, Lp = round_up(round_up(ow, 8) + (kw-1)*dw/sw + 1, 8)
 * (AVX-512 builds read depthwise inputs in place when sw <= 2 and kw <= 8: then only one
 * row of w + 64 zero floats is used, but w + 96 floats per thread are asked for).
 * The call uses omp_get_max_threads() threads, so `threads` must be at least that. */
size_t ecg_conv2d_scratch_floats(const ecg_conv_params *p, int threads);
/* y [n, m, oh, ow] = act(conv(x [n, c, h, w], w) + bias [m]); bias may be NULL.
 * packed_w from ecg_conv2d_pack, scratch of ecg_conv2d_scratch_floats(p, threads) floats.
 * x and y never alias. Strategy: 1x1/stride-1/unpadded = GEMM straight on the NCHW input;
 * depthwise = direct kernel vectorised along the output width; otherwise implicit im2col
 * (packed straight into GEMM panels, in bounded blocks) + packed GEMM per group. Bias and
 * activation are applied in the GEMM epilogue while the tile is in L1. */
void ecg_conv2d(const ecg_conv_params *p, const float *x, const float *packed_w, const float *bias,
                float *y, float *scratch);

/* Pattern-sparse convolution (PatDNN, Niu dissertation §2.5). The FKW kernels themselves
 * are generated per layer into model.c (per-pattern straight-line code, ecg-lower's
 * emit/sparse.c); these are the pieces they share.
 * ecg_sparse_pad: xp [c, hp, wp] = one image x [c, h, w] placed at (pt, pl) in zeros,
 * cropped to hp = (oh-1)*sh + (kh-1)*dh + 1 rows and wp = (ow-1)*sw + (kw-1)*dw + 1
 * columns, so that output (oy, ox), tap (r, c) reads xp[(oy*sh + r*dh) * wp + ox*sw + c*dw]
 * with no bounds check. Threads over channels. */
void ecg_sparse_pad(const ecg_conv_params *p, const float *x, float *xp, int hp, int wp);
/* The CSR baseline (§2.6: "a CSR sparse version"): y [m, oh, ow] (one image) =
 * act(conv(xp, W) + bias) for W [m, c*kh*kw] in CSR: rowptr [m+1], col [nnz] (column =
 * ci*kh*kw + r*kw + c, decoded per non-zero), val [nnz]. xp from ecg_sparse_pad. One
 * non-zero per pass over an output tile of <= 2048 floats (ow <= 2048). Threads over
 * (filter, row block) tiles; act runs on each tile's rows of one output plane. */
void ecg_csr_conv2d(const ecg_conv_params *p, const float *xp, int hp, int wp, const int *rowptr, const int *col,
                    const float *val, const float *bias, float *y);

/* ConvTranspose 2-D NCHW: x [n, c, h, w], w [c, m/group, kh, kw] (ONNX layout), y [n, m, oh, ow];
 * pads/strides/dilations as in ecg_conv_params with (c, m) meaning (input, output) channels;
 * oh/ow given (output_padding is implied by them). bias [m] may be NULL; act applies.
 * Scratch: (m/group)*kh*kw * h*w floats (one column matrix, reused per image and group). */
size_t ecg_convtranspose2d_scratch_floats(const ecg_conv_params *p);
void ecg_convtranspose2d(const ecg_conv_params *p, const float *x, const float *w, const float *bias,
                         float *y, float *scratch);

/* ------------------------------------------------------------------ Intensive fusion */

/* C[M,N] = act(packedA[M,K] * B[K,N] + bias_m[M]) with A prepacked as the weights of a
 * 1x1 group-1 convolution (ecg_conv2d_pack with m = M, c = K, kh = kw = 1); B row-major
 * [K, ldb >= N] (e.g. rows of an NCHW tensor), C [M, ldc >= N]; bias_m may be NULL; act
 * may be ECG_ACT_FN (segments are rows of C). scratch: ecg_sgemm_packed_a_scratch_floats
 * (threads) floats, or NULL to allocate per call. */
void ecg_sgemm_packed_a(int M, int N, int K, const float *packed_a, const float *B, int ldb, const float *bias_m,
                        ecg_act act, float *C, int ldc, float *scratch);
size_t ecg_sgemm_packed_a_scratch_floats(int threads);

/* An inverted-residual chain fused into one kernel (AGO §III-B, intensive fusion of
 * complex operators): E = act1(W1 x + b1) (a 1x1 convolution; absent when cexp == 0 is
 * not the case and w1 is NULL, then E = x), D = act2(depthwise(E) + bd) (kh x kw, strides
 * sh/sw, pads pt/pl, dilation 1, one filter per channel), y = act3(W2 D + b2) (a 1x1
 * convolution), all NCHW float32. Tiled by output rows: E's rows are computed once each
 * into a window of (R-1)*sh + kh rows (the kh - sh rows two tiles share are carried over,
 * not recomputed), D one tile of R rows at a time, so no element of E or D is recomputed
 * and neither is written outside the scratch.
 *   x [n, cin, h, w]; w1p, w2p: W1 [cexp, cin] and W2 [cout, cexp] packed by
 *   ecg_ibr_pack; wd [cexp, kh*kw]; biases may be NULL; y [n, cout, oh, ow].
 * act3 may be ECG_ACT_FN: it sees row segments of one output channel of y (after b2).
 * e_rows, when not NULL, is increased by the rows of E computed (n * h when nothing is
 * recomputed; the test of AGO's no-recomputation property). */
typedef struct {
  int n, cin, h, w;
  int cexp;
  int kh, kw, sh, sw, pt, pl, oh, ow;
  int cout;
  ecg_act act1, act2, act3;
} ecg_ibr_params;
/* Floats of packed W1 (0 when there is no W1) and of packed W2. */
size_t ecg_ibr_packed_floats(const ecg_ibr_params *p, int which);
/* Pack W1 [cexp, cin] (which = 1) or W2 [cout, cexp] (which = 2) into packed. */
void ecg_ibr_pack(const ecg_ibr_params *p, int which, const float *w, float *packed);
/* Scratch floats ecg_ibr needs on up to `threads` threads. */
size_t ecg_ibr_scratch_floats(const ecg_ibr_params *p, int threads);
void ecg_ibr(const ecg_ibr_params *p, const float *x, const float *w1p, const float *b1, const float *wd,
             const float *bd, const float *w2p, const float *b2, float *y, float *scratch, long *e_rows);

/* ------------------------------------------------------------------ Pooling */

/* Pooling, NCHW float32: x [n, c, h, w] -> y [n, c, oh, ow]; window kh x kw with
 * strides, dilations and pads as in ecg_conv_params. Max ignores padding (a window with
 * no element inside the input gives -inf). Average divides by the number of elements
 * inside the input, or with count_include_pad by those inside the padded input
 * [-pt, h+pb) x [-pl, w+pr). */
typedef struct {
  int n, c, h, w, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl, pb, pr;
  int count_include_pad;
} ecg_pool_params;
void ecg_maxpool2d(const ecg_pool_params *p, const float *x, float *y);
void ecg_avgpool2d(const ecg_pool_params *p, const float *x, float *y);
/* y[nc] = mean (or max) over hw of x[nc, hw] */
void ecg_global_avgpool(int nc, int hw, const float *x, float *y);
void ecg_global_maxpool(int nc, int hw, const float *x, float *y);

#ifdef __cplusplus
}
#endif
#endif /* ECG_RT_H */
