/* The runtime's vector paths (AVX-512, AVX2 or NEON, whichever this build has) against its
 * portable C path, on edge shapes: remainders of the micro-kernel tile in M, N and K, of
 * the KC block, strides 1 and 2, padding, depthwise, pooling, the vectorised exp of
 * sigmoid/SiLU. Build (tests/unit/rt_build.sh does it, natively or for aarch64):
 *   CC VECFLAGS -c ecg_gemm.c ecg_pool.c ...                       (vector runtime)
 *   CC PORTFLAGS -include tests/unit/rt_port.h -c ecg_gemm.c ...  (port_* symbols, no SIMD)
 *   CC VECFLAGS -DECG_EXPECT_KERNEL=... rt_port_test.c both sets -lm
 * Pass: every element within 1e-5 relative error, |vec - port| <= 1e-5 * max(|port|, rms),
 * (1e-4 for 3x3 stride-1 group-1 convs with 8 or more channels in and out: both builds
 * may run them as Winograd F(4x4, 3x3), whose transforms, with FMA contraction in one
 * build and not the other, round differently by a few 1e-5 of the rms),
 * rms the root mean square of the whole output (for elements that cancel to near 0).
 * Also checks ecg_rt1_gemm_kernel_name(): the vector build runs the kernel it should
 * (ECG_EXPECT_KERNEL, e.g. "neon-8x12" for aarch64) and the reference is "c-6x16".
 * Prints "N passed, M failed"; exit 1 on any failure. */
#include "ecg_rt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The portable build's entry points (tests/unit/rt_port.h renamed them), same types. */
#define ECG_PORT_DECL(f) extern __typeof__(f) port_##f;
ECG_PORT_DECL(ecg_rt1_act_apply) ECG_PORT_DECL(ecg_rt1_sgemm) ECG_PORT_DECL(ecg_rt1_sgemm_packed_b_floats)
ECG_PORT_DECL(ecg_rt1_sgemm_pack_b) ECG_PORT_DECL(ecg_rt1_sgemm_packed) ECG_PORT_DECL(ecg_rt1_gemm_kernel_name)
ECG_PORT_DECL(ecg_rt1_conv2d_packed_floats) ECG_PORT_DECL(ecg_rt1_conv2d_pack) ECG_PORT_DECL(ecg_rt1_conv2d_scratch_floats)
ECG_PORT_DECL(ecg_rt1_conv2d) ECG_PORT_DECL(ecg_rt1_maxpool2d) ECG_PORT_DECL(ecg_rt1_avgpool2d)
#undef ECG_PORT_DECL

#ifndef ECG_EXPECT_KERNEL
#define ECG_EXPECT_KERNEL "c-6x16"
#endif

#include "rt_testutil.h"

static int n_pass, n_fail;
static double worst_rel;
/* n floats uniform in [-1, 1) times scale (at least one element allocated). */
static float *rbuf(size_t n, float scale) {
  float *p = malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; i < n; i++) p[i] = scale * rf();
  return p;
}

/* got (vector path) vs ref (portable path), n floats: the relative rule above, tol 1e-5 or 1e-4. */
static void cmp_tol(const char *what, const float *got, const float *ref, size_t n, double tol) {
  double ss = 0;
  for (size_t i = 0; i < n; i++) ss += (double)ref[i] * ref[i];
  const double rms = n ? sqrt(ss / (double)n) : 0;
  size_t bad = n;
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - ref[i]), den = fmax(fabs(ref[i]), rms);
    double rel = den > 0 ? d / den : d;
    if (rel > worst) worst = rel;
    if (!(rel <= tol) && !(got[i] == ref[i]) && !(isnan(got[i]) && isnan(ref[i])) && bad == n) bad = i;
  }
  if (worst > worst_rel && worst <= 1e-5) worst_rel = worst;
  if (bad < n) {
    n_fail++;
    printf("FAIL %s: at %zu vector %.9g portable %.9g (worst relative error %.3g)\n", what, bad, got[bad], ref[bad], worst);
  } else {
    n_pass++;
  }
}
static void cmp(const char *what, const float *got, const float *ref, size_t n) { cmp_tol(what, got, ref, n, 1e-5); }


static void test_gemm(int packed, int M, int N, int K) {
  int tA = ri(0, 1), tB = ri(0, 1), lda = (tA ? M : K) + ri(0, 2), ldb = (tB ? K : N) + ri(0, 2), ldc = N + ri(0, 2);
  float *A = rbuf((size_t)(tA ? K : M) * lda, 1.f), *B = rbuf((size_t)(tB ? N : K) * ldb, 1.f);
  float *C1 = rbuf((size_t)M * ldc, 1.f), *C2 = malloc((size_t)M * ldc * sizeof(float) + 4);
  memcpy(C2, C1, (size_t)M * ldc * sizeof(float));
  float beta = (float)ri(0, 1), alpha = packed ? 1.f : 0.75f;
  float *bias = packed && ri(0, 1) ? rbuf(N, 1.f) : NULL;
  ecg_act act = packed ? rand_act() : (ecg_act){ECG_ACT_NONE, 0, 0};
  if (packed) {
    float *p1 = malloc((ecg_rt1_sgemm_packed_b_floats(K, N) + 1) * sizeof(float));
    float *p2 = malloc((port_ecg_rt1_sgemm_packed_b_floats(K, N) + 1) * sizeof(float));
    ecg_rt1_sgemm_pack_b(tB, K, N, B, ldb, p1);
    port_ecg_rt1_sgemm_pack_b(tB, K, N, B, ldb, p2);
    ecg_rt1_sgemm_packed(tA, M, N, K, A, lda, p1, bias, act, beta, C1, ldc);
    port_ecg_rt1_sgemm_packed(tA, M, N, K, A, lda, p2, bias, act, beta, C2, ldc);
    free(p1);
    free(p2);
  } else {
    ecg_rt1_sgemm(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C1, ldc);
    port_ecg_rt1_sgemm(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C2, ldc);
  }
  char what[160];
  snprintf(what, sizeof what, "%s tA=%d tB=%d M=%d N=%d K=%d beta=%g act=%d", packed ? "sgemm_packed" : "sgemm", tA,
           tB, M, N, K, beta, act.kind);
  cmp(what, C1, C2, (size_t)M * ldc);
  free(A); free(B); free(C1); free(C2); free(bias);
}

static int out_dim(int in, int k, int s, int d, int pa, int pb) { return (in + pa + pb - ((k - 1) * d + 1)) / s + 1; }

/* threads: OpenMP threads for the call (the scratch is sized for them). */
static void test_conv(int n, int c, int h, int w, int m, int k, int s, int pad, int g, int threads) {
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  ecg_conv_params p;
  memset(&p, 0, sizeof p);
  p.n = n; p.c = c; p.h = h; p.w = w; p.m = m; p.kh = p.kw = k; p.sh = p.sw = s; p.dh = p.dw = 1;
  p.pt = p.pl = pad; p.pb = p.pr = pad > 0 ? pad - (k % 2 == 0) : 0; p.group = g; p.act = rand_act();
  p.oh = out_dim(h, k, s, 1, p.pt, p.pb);
  p.ow = out_dim(w, k, s, 1, p.pl, p.pr);
  if (p.oh <= 0 || p.ow <= 0) return;
  size_t xs = (size_t)n * c * h * w, ws = (size_t)m * (c / g) * k * k, ys = (size_t)n * m * p.oh * p.ow;
  float *x = rbuf(xs, 1.f), *wt = rbuf(ws, 1.f), *bias = rbuf(m, 1.f), *y1 = rbuf(ys, 1.f), *y2 = rbuf(ys, 1.f);
  float *pw1 = malloc((ecg_rt1_conv2d_packed_floats(&p) + 1) * sizeof(float));
  float *pw2 = malloc((port_ecg_rt1_conv2d_packed_floats(&p) + 1) * sizeof(float));
  float *s1 = malloc((ecg_rt1_conv2d_scratch_floats(&p, threads) + 1) * sizeof(float));
  float *s2 = malloc((port_ecg_rt1_conv2d_scratch_floats(&p, threads) + 1) * sizeof(float));
  ecg_rt1_conv2d_pack(&p, wt, pw1);
  port_ecg_rt1_conv2d_pack(&p, wt, pw2);
  ecg_rt1_conv2d(&p, x, pw1, bias, y1, s1);
  port_ecg_rt1_conv2d(&p, x, pw2, bias, y2, s2);
  char what[200];
  snprintf(what, sizeof what, "conv n%d c%d %dx%d m%d k%d s%d pad%d g%d act%d", n, c, h, w, m, k, s, pad, g, p.act.kind);
  const int wino = k == 3 && s == 1 && g == 1 && c >= 8 && m >= 8;
  cmp_tol(what, y1, y2, ys, wino ? 1e-4 : 1e-5);
  free(x); free(wt); free(bias); free(y1); free(y2); free(pw1); free(pw2); free(s1); free(s2);
}

static void test_pool(int c, int h, int w, int k, int s, int pad, int is_max, int cip) {
  ecg_pool_params p;
  memset(&p, 0, sizeof p);
  p.n = 1; p.c = c; p.h = h; p.w = w; p.kh = p.kw = k; p.sh = p.sw = s; p.dh = p.dw = 1;
  p.pt = p.pl = p.pb = p.pr = pad; p.count_include_pad = cip;
  p.oh = out_dim(h, k, s, 1, pad, pad);
  p.ow = out_dim(w, k, s, 1, pad, pad);
  if (p.oh <= 0 || p.ow <= 0) return;
  size_t ys = (size_t)c * p.oh * p.ow;
  float *x = rbuf((size_t)c * h * w, 1.f), *y1 = malloc(ys * sizeof(float)), *y2 = malloc(ys * sizeof(float));
  (is_max ? ecg_rt1_maxpool2d : ecg_rt1_avgpool2d)(&p, x, y1);
  (is_max ? port_ecg_rt1_maxpool2d : port_ecg_rt1_avgpool2d)(&p, x, y2);
  char what[160];
  snprintf(what, sizeof what, "%s c%d %dx%d k%d s%d pad%d cip%d", is_max ? "maxpool" : "avgpool", c, h, w, k, s, pad, cip);
  cmp(what, y1, y2, ys);
  free(x); free(y1); free(y2);
}

static void test_act(ecg_act_kind kind, int n) {
  float *a = rbuf((size_t)n, 30.f), *b = malloc(((size_t)n + 1) * sizeof(float));
  memcpy(b, a, (size_t)n * sizeof(float));
  ecg_act act = {kind, 0, 0};
  ecg_rt1_act_apply(act, a, (size_t)n);
  port_ecg_rt1_act_apply(act, b, (size_t)n);
  char what[64];
  snprintf(what, sizeof what, "act %d n=%d (exp on [-30, 30])", kind, n);
  cmp(what, a, b, (size_t)n);
  free(a); free(b);
}

int main(void) {
  /* the kernel this build runs */
  const char *kn = ecg_rt1_gemm_kernel_name(), *kp = port_ecg_rt1_gemm_kernel_name();
  if (strcmp(kn, ECG_EXPECT_KERNEL) || strcmp(kp, "c-6x16")) {
    n_fail++;
    printf("FAIL kernel: vector build runs %s (expected %s), reference %s (expected c-6x16)\n", kn, ECG_EXPECT_KERNEL, kp);
  } else {
    n_pass++;
    printf("kernel: %s vs portable %s\n", kn, kp);
  }
  /* GEMM: remainders of every tile (NEON 8x12, AVX2 6x16, AVX-512 8x48) and of KC = 256 */
  const int ms[] = {1, 5, 7, 8, 9, 13, 17, 25}, ns[] = {1, 3, 11, 12, 13, 16, 25, 49}, ks[] = {1, 3, 255, 257};
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      test_gemm(0, ms[i], ns[j], ks[(i + j) % 4]);
      test_gemm(1, ms[i], ns[j], ks[(i + 2 * j + 1) % 4]);
    }
  test_gemm(0, 250, 200, 300); /* several mc/nc tiles */
  test_gemm(1, 97, 193, 513);
  /* Conv: im2col (k 3, 5; strides 1, 2; pads), 1x1, grouped, depthwise with ow across the
   * 16/4-column steps of the NEON row kernel */
  const int hw[] = {5, 7, 12, 17, 23};
  for (int s = 1; s <= 2; s++)
    for (int pad = 0; pad <= 2; pad++)
      for (int i = 0; i < 5; i++) {
        int h = hw[i], w = hw[(i + s + pad) % 5] + 2 * s;
        test_conv(1, 3 + i, h, w, 5 + 3 * i, 3, s, pad, 1, 1);
        test_conv(1, 8, h, w, 8, 3, s, pad, 8, 1);          /* depthwise */
        test_conv(2, 6, h, w, 12, 5, s, pad, 6, 1);         /* depthwise, multiplier 2 */
        test_conv(1, 12, h, w, 9, 3, s, pad, 3, 1);         /* grouped */
      }
  test_conv(1, 16, 14, 14, 24, 1, 1, 0, 1, 1); /* 1x1 GEMM on the input in place */
  test_conv(1, 40, 8, 8, 20, 1, 1, 0, 1, 1);
  test_conv(1, 32, 28, 28, 32, 3, 2, 1, 32, 2); /* threaded */
  test_conv(1, 24, 20, 20, 40, 3, 1, 1, 1, 2);
  /* Pooling: strides 1 and 2, padding, count_include_pad */
  for (int s = 1; s <= 2; s++)
    for (int pad = 0; pad <= 1; pad++)
      for (int k = 2; k <= 3; k++)
        for (int m = 0; m <= 1; m++) {
          test_pool(3, 9 + k, 13 + 4 * s + pad, k, s, pad, m, 0);
          test_pool(2, 21, 33, k, s, pad, m, 1);
        }
  for (int n = 1; n <= 37; n += 6) {
    test_act(ECG_ACT_SIGMOID, n);
    test_act(ECG_ACT_SILU, n);
  }
  test_act(ECG_ACT_SIGMOID, 1000);
  test_act(ECG_ACT_SILU, 1000);
  printf("worst relative error (passing cases): %.3g\n", worst_rel);
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
