/* peak.c: this machine's per-core FP32 FMA peak and streaming bandwidth (issue 13 item 1),
 * the denominators of `ecg-bench --profile`'s fractions of peak and roofline.
 *
 * FMA peak: 16 independent multiply-add chains on the widest vectors the CPU runs
 * (AVX-512, else AVX2+FMA on x86-64; 128-bit vectors elsewhere), written with GCC vector
 * extensions in functions compiled for that ISA (target attributes: ecg-bench itself stays
 * built for the baseline ISA) and picked at run time with __builtin_cpu_supports. A chain
 * step is one FMA, 2 FLOPs per lane. DESIGN.md asks it to agree with
 * ../shared/bench/peak.c within 5% on the same machine.
 * Bandwidth: the STREAM triad a[i] = b[i] + s*c[i] on three 64 MiB arrays, one thread,
 * counted as STREAM counts it (12 bytes per element: two reads and a write; the
 * write-allocate read is not counted). Best of 5 repetitions for both. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "ecg_arch.h"

#define CHAINS 16 /* STEP16 below */
#define REPS 5

/** Seconds on the monotonic clock. */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One FMA kernel per vector width: `iters` steps of CHAINS (16) independent chains
 * c = c * m + a, kept in registers (named variables: indexing lanes would put them in
 * memory); returns a value depending on every chain (so nothing is elided). */
#define STEP16(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11) OP(12) OP(13) OP(14) OP(15)
#define DECL(i) vec c##i = z + (seed + (float)(i));
#define FMA(i) c##i = c##i * m + a;
#define SUM(i) +c##i
#define FMA_KERNEL(NAME, TARGET, BYTES)             \
  TARGET static float NAME(long iters) {          \
    typedef float vec __attribute__((vector_size(BYTES))); \
    const vec z = {0};                            \
    /* start values the compiler cannot see: c = 1 is this map's fixed point, and a     \
     * chain it can prove constant leaves the loop (a 1/16 overcount) */              \
    volatile float seed_ = 0.5f;                  \
    const float seed = seed_;                     \
    const vec m = z + 0.9999999f, a = z + 1e-7f;  \
    STEP16(DECL)                                  \
    for (long k = 0; k < iters; k++) { STEP16(FMA) } \
    vec s = z STEP16(SUM);                        \
    float r = 0;                                  \
    for (int l = 0; l < (BYTES) / 4; l++) r += s[l]; \
    return r;                                     \
  }

#if defined(__x86_64__)
FMA_KERNEL(fma_avx512, __attribute__((target("avx512f,fma"))), 64)
FMA_KERNEL(fma_avx2, __attribute__((target("avx2,fma"))), 32)
#endif
/* 128-bit vectors: NEON on aarch64 (FMA), SSE elsewhere on x86-64 (multiply and add) */
FMA_KERNEL(fma_128, , 16)

/** Best GFLOP/s of fn over REPS runs of about 0.2 s each. */
static double fma_rate(float (*fn)(long), int lanes) {
  long iters = 1 << 16;
  volatile float sink = 0;
  for (;;) { /* calibrate: about 0.2 s a run */
    double t = now_s();
    sink += fn(iters);
    t = now_s() - t;
    if (t > 0.05 || iters > (1L << 40)) { iters = (long)((double)iters * 0.2 / (t > 0 ? t : 1e-3)) + 1; break; }
    iters *= 4;
  }
  double best = 0;
  for (int r = 0; r < REPS; r++) {
    double t = now_s();
    sink += fn(iters);
    t = now_s() - t;
    double g = (double)iters * CHAINS * lanes * 2 / t / 1e9;
    if (g > best) best = g;
  }
  (void)sink;
  return best;
}

/** Best STREAM-triad bandwidth in GB/s (1e9 bytes/s), one thread; 0 on out of memory. */
static double triad_rate(void) {
  const size_t n = (size_t)1 << 24; /* 64 MiB per array */
  float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
  double best = 0;
  if (a && b && c) {
    for (size_t i = 0; i < n; i++) { a[i] = 0; b[i] = (float)(i & 255); c[i] = 1.0f; }
    for (int r = 0; r < REPS; r++) {
      double t = now_s();
      for (size_t i = 0; i < n; i++) a[i] = b[i] + 0.5f * c[i];
      __asm__ volatile("" : : "r"(a) : "memory");
      t = now_s() - t;
      double g = (double)n * 12 / t / 1e9;
      if (g > best) best = g;
    }
  }
  free(a);
  free(b);
  free(c);
  return best;
}

int bt_peak_measure(bt_peak *p, ecg_err *e) {
  memset(p, 0, sizeof *p);
  ecg_cpu_name(p->cpu, sizeof p->cpu);
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    snprintf(p->isa, sizeof p->isa, "avx512");
    p->fma_gflops = fma_rate(fma_avx512, 16);
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    snprintf(p->isa, sizeof p->isa, "avx2");
    p->fma_gflops = fma_rate(fma_avx2, 8);
  }
#endif
  if (!p->isa[0]) {
    snprintf(p->isa, sizeof p->isa, "vec128");
    p->fma_gflops = fma_rate(fma_128, 4);
  }
  p->bandwidth_gbs = triad_rate();
  if (!(p->bandwidth_gbs > 0)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory (the bandwidth test needs 192 MiB)");
  return ECG_OK;
}

/** The cache file: $ECG_PEAK_CACHE, else $XDG_CACHE_HOME/ecg/peak.json, else
 *  $HOME/.cache/ecg/peak.json (directories made on demand when mk). */
static int cache_path(char *buf, size_t cap, bool mk) {
  const char *env = getenv("ECG_PEAK_CACHE");
  if (env && *env) { snprintf(buf, cap, "%s", env); return 0; }
  const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  char dir[4096];
  if (x && *x) snprintf(dir, sizeof dir, "%s", x);
  else if (h && *h) snprintf(dir, sizeof dir, "%s/.cache", h);
  else return -1;
  if (mk) mkdir(dir, 0777);
  size_t l = strlen(dir);
  snprintf(dir + l, sizeof dir - l, "/ecg");
  if (mk) mkdir(dir, 0777);
  snprintf(buf, cap, "%s/peak.json", dir);
  return 0;
}

void bt_peak_json(FILE *f, const bt_peak *p) {
  fputs("{\"cpu\":", f);
  bt_json_print_string(f, p->cpu);
  fputs(",\"isa\":", f);
  bt_json_print_string(f, p->isa);
  fputs(",\"fma_gflops_per_core\":", f);
  bt_json_print_number(f, p->fma_gflops);
  fputs(",\"bandwidth_gbs\":", f);
  bt_json_print_number(f, p->bandwidth_gbs);
  fputs(",\"bandwidth_method\":\"STREAM triad, 1 thread, 3 x 64 MiB, 12 bytes per element\"}", f);
}

int bt_peak_get(bool remeasure, bt_peak *p, bool *cached, ecg_err *e) {
  char path[4200];
  *cached = false;
  bool have_path = cache_path(path, sizeof path, false) == 0;
  if (!remeasure && have_path) {
    FILE *f = fopen(path, "r");
    if (f) {
      char text[2048];
      size_t n = fread(text, 1, sizeof text - 1, f);
      text[n] = 0;
      fclose(f);
      char cpu[sizeof p->cpu];
      memset(p, 0, sizeof *p);
      ecg_cpu_name(cpu, sizeof cpu);
      if (bt_json_string(text, "cpu", p->cpu, sizeof p->cpu) && !strcmp(p->cpu, cpu) &&
          bt_json_string(text, "isa", p->isa, sizeof p->isa) && bt_json_number(text, "fma_gflops_per_core", &p->fma_gflops) &&
          bt_json_number(text, "bandwidth_gbs", &p->bandwidth_gbs) && p->fma_gflops > 0 && p->bandwidth_gbs > 0) {
        *cached = true;
        return ECG_OK;
      }
    }
  }
  ECG_TRY(bt_peak_measure(p, e));
  /* cache it (best effort: a read-only home only costs a measurement next time),
   * through a temporary name so a reader never sees half a file */
  if (have_path && cache_path(path, sizeof path, true) == 0) {
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (f) {
      bt_peak_json(f, p);
      fputc('\n', f);
      if (fclose(f) == 0) rename(tmp, path);
      else remove(tmp);
    }
  }
  return ECG_OK;
}
