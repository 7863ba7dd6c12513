/* runner: the command-line driver of a lowered model (tools/lower/LOWERED.md, "Runner
 * protocol"). Copied into every lowered directory by ecg-lower; built by its Makefile.
 *   runner --info
 *   runner [--weights FILE] [--device N] [--threads N] [--warmup W] [--runs R] [--profile FILE|-] --in NAME=FILE ... [--out NAME=FILE ...]
 * --profile writes mean milliseconds per kernel (per node) over the timed runs.
 * Inputs and outputs are raw little-endian files of exactly the tensor's bytes; one
 * "time_ms <float>" line per timed run goes to stdout; an OpenCL model (ecg-lower --target
 * opencl) runs on OpenCL device N (--device, else ECG_CL_DEVICE, else 0) and prints
 * "device <CL_DEVICE_NAME>" first. Exit 0 ok, 1 bad input, 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "model.h"
#ifndef ECG_MODEL_OPENCL
#include "ecg_rt.h" /* ecg_rt1_build_id, for the message when the runtime does not match */
#endif

#define INFO ECG_MODEL(tensor_info)

static void print_info(const char *kind, const INFO *t) {
  printf("%s\t%s\t%d\t", kind, t->name, t->dtype);
  if (t->rank == 0) printf("scalar");
  for (int d = 0; d < t->rank; d++) printf("%s%lld", d ? "x" : "", (long long)t->dims[d]);
  printf("\n");
}

static const INFO *find(const char *name, int *is_out) {
  for (int i = 0; i < ECG_MODEL(num_inputs)(); i++)
    if (!strcmp(ECG_MODEL(input_info)(i)->name, name)) { *is_out = 0; return ECG_MODEL(input_info)(i); }
  for (int i = 0; i < ECG_MODEL(num_outputs)(); i++)
    if (!strcmp(ECG_MODEL(output_info)(i)->name, name)) { *is_out = 1; return ECG_MODEL(output_info)(i); }
  return NULL;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int usage(void) {
  fprintf(stderr, "usage: runner --info | runner [--weights FILE] [--device N] [--threads N] [--warmup W] [--runs R] --in NAME=FILE ... [--out NAME=FILE ...]\n");
  return 2;
}

/* Everything main() allocates, freed by finish() on every exit path (the runner is built
 * under ASan/LeakSanitizer by the sanitizer end-to-end tests, issue 10 item 3). */
static int n_in, n_out;
static void **inbuf, **outbuf;
static const char **outpath;
static ECG_MODEL(ctx) *ctx;

/* Free what main() allocated and return rc. */
static int finish(int rc) {
  if (ctx) ECG_MODEL(destroy)(ctx);
  for (int k = 0; inbuf && k < n_in; k++) free(inbuf[k]);
  for (int k = 0; outbuf && k < n_out; k++) free(outbuf[k]);
  free(inbuf); free(outbuf); free(outpath);
  return rc;
}

#ifndef ECG_RUNNER_SPINCOUNT
#define ECG_RUNNER_SPINCOUNT "10000"
#endif
/* libgomp's idle threads spin GOMP_SPINCOUNT times (default 300000, with OMP_WAIT_POLICY
 * unset) before they sleep; with a pause instruction per spin that is milliseconds on this
 * machine's Xeon, and a thread that spins that long spends the CPU time another process
 * on its core wanted: when that process and our worker share a core, the scheduler lets
 * each region's worker in late and every parallel region waits for it (resnet18 at 224,
 * 2 threads, a busy loop on the other core: 69 ms against 26 ms on 1 thread; ORT 24 ms).
 * 10000 spins (about a kernel gap: regions follow each other within microseconds) keep
 * quiet-machine runs within 2% (squeezenet1_1, 3 interleaved rounds: 3.30 vs 3.35 ms)
 * and make contended ones about 1-thread speed (resnet18: 36 ms, 30000: 45, default:
 * 160, measured beside another engineer's build); OMP_WAIT_POLICY=PASSIVE (sleep at
 * once) costs a futex wake per region, 3.30 -> 5.0 ms. libgomp reads the variable when
 * it loads, before main(): so set it and exec this program again, once, unless the user
 * set GOMP_SPINCOUNT or OMP_WAIT_POLICY, or argv[0] is not a path (or the exec fails:
 * then run as we are). */
static void spin_policy(char **argv) {
#ifdef _OPENMP
  /* a bare name would be looked up in PATH, which may hold another program */
  if (getenv("GOMP_SPINCOUNT") || getenv("OMP_WAIT_POLICY") || !argv[0] || !strchr(argv[0], '/')) return;
  if (setenv("GOMP_SPINCOUNT", ECG_RUNNER_SPINCOUNT, 1) != 0) return;
  execv(argv[0], argv);
  unsetenv("GOMP_SPINCOUNT"); /* not re-executed: the variable would only mislead */
#else
  (void)argv;
#endif
}

int main(int argc, char **argv) {
  spin_policy(argv);
  const char *weights = "weights.bin", *profile = NULL;
  int threads = 0, warmup = 1, runs = 1;
  n_in = ECG_MODEL(num_inputs)(); n_out = ECG_MODEL(num_outputs)();
  inbuf = calloc((size_t)n_in + 1, sizeof(void *)); outbuf = calloc((size_t)n_out + 1, sizeof(void *));
  outpath = calloc((size_t)n_out + 1, sizeof(char *));
  if (!inbuf || !outbuf || !outpath) return finish(3);
  /* default weights next to the runner binary */
  static char wpath[4096];
  const char *slash = strrchr(argv[0], '/');
  if (slash) { snprintf(wpath, sizeof wpath, "%.*s/weights.bin", (int)(slash - argv[0]), argv[0]); weights = wpath; }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--info")) {
      for (int k = 0; k < n_in; k++) print_info("input", ECG_MODEL(input_info)(k));
      for (int k = 0; k < n_out; k++) print_info("output", ECG_MODEL(output_info)(k));
      return finish(0);
    }
    if (i + 1 >= argc) return finish(usage());
    const char *v = argv[++i];
    if (!strcmp(a, "--weights")) weights = v;
    else if (!strcmp(a, "--threads")) threads = atoi(v);
    else if (!strcmp(a, "--warmup")) warmup = atoi(v);
    else if (!strcmp(a, "--runs")) runs = atoi(v);
    else if (!strcmp(a, "--profile")) profile = v;
    else if (!strcmp(a, "--device")) {
#ifdef ECG_MODEL_OPENCL
      setenv("ECG_CL_DEVICE", v, 1);
#else
      fprintf(stderr, "runner: --device needs a model lowered with --target opencl (this one is C)\n");
      return finish(2);
#endif
    }
    else if (!strcmp(a, "--in") || !strcmp(a, "--out")) {
      const char *eq = strchr(v, '=');
      if (!eq) return finish(usage());
      char name[1024];
      snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
      int is_out;
      const INFO *t = find(name, &is_out);
      if (!t || is_out != !strcmp(a, "--out")) { fprintf(stderr, "runner: no graph %s named '%s'\n", a + 2, name); return finish(1); }
      int idx = 0;
      if (is_out) { while (ECG_MODEL(output_info)(idx) != t) idx++; outpath[idx] = eq + 1; continue; }
      while (ECG_MODEL(input_info)(idx) != t) idx++;
      FILE *f = fopen(eq + 1, "rb");
      if (!f) { fprintf(stderr, "runner: %s: %s\n", eq + 1, strerror(errno)); return finish(1); }
      free(inbuf[idx]); /* given twice: the last one counts */
      inbuf[idx] = malloc(t->bytes ? t->bytes : 1);
      if (!inbuf[idx]) { fclose(f); return finish(3); }
      size_t got = t->bytes ? fread(inbuf[idx], 1, t->bytes, f) : 0;
      int extra = fgetc(f);
      fclose(f);
      if (got != t->bytes || extra != EOF) { fprintf(stderr, "runner: %s: expected exactly %zu bytes for input '%s'\n", eq + 1, t->bytes, name); return finish(1); }
    } else return finish(usage());
  }
  if (runs < 1 || warmup < 0) return finish(usage());
#ifdef _OPENMP
  if (threads > 0) omp_set_num_threads(threads);
#endif
  (void)threads; /* an OpenCL model's device runs its own threads */
  ctx = ECG_MODEL(create)(weights);
#ifdef ECG_MODEL_OPENCL
  if (!ctx && errno == ENODEV) {
    fprintf(stderr, "runner: no OpenCL device %s (ECG_CL_DEVICE; `clinfo -l` lists them; on a machine without a GPU, "
                    "install pocl-opencl-icd)\n", getenv("ECG_CL_DEVICE") ? getenv("ECG_CL_DEVICE") : "0");
    return finish(1);
  }
  if (!ctx && errno == EINVAL) { fprintf(stderr, "runner: cannot create the OpenCL model (weights '%s', or the program did not build)\n", weights); return finish(1); }
  if (ctx) printf("device %s\n", ECG_MODEL(device_name)(ctx));
#else
  if (!ctx && errno == ENOEXEC) {
    fprintf(stderr, "runner: the runtime library linked in (%s) is not the one model.c was compiled against "
                    "(other runtime sources, ISA or OpenMP setting); rebuild with `make clean all`\n", ecg_rt1_build_id());
    return finish(1);
  }
#endif
  if (!ctx) { fprintf(stderr, "runner: cannot load weights '%s': %s\n", weights, strerror(errno)); return finish(1); }
  for (int k = 0; k < n_in; k++) {
    const INFO *t = ECG_MODEL(input_info)(k);
    if (!inbuf[k]) { fprintf(stderr, "runner: input '%s' not given (--in %s=FILE)\n", t->name, t->name); return finish(1); }
    ECG_MODEL(bind)(ctx, t->name, inbuf[k]);
  }
  for (int k = 0; k < n_out; k++) {
    const INFO *t = ECG_MODEL(output_info)(k);
    outbuf[k] = calloc(1, t->bytes ? t->bytes : 1);
    if (!outbuf[k]) return finish(3);
    ECG_MODEL(bind)(ctx, t->name, outbuf[k]);
  }
  for (int r = 0; r < warmup; r++) ECG_MODEL(run)(ctx);
  if (profile && ECG_MODEL(profile)(ctx, 1) != 0) return finish(3);
  for (int r = 0; r < runs; r++) {
    double t0 = now_ms();
    int rc = ECG_MODEL(run)(ctx);
    if (rc != 0) {
      fprintf(stderr, "runner: run failed (%d: %s)\n", rc,
              rc == -2 ? "a run-time check failed: a Loop ran other than the iterations its scan outputs were compiled for"
                       : "an input or output is unbound");
      return finish(1);
    }
    printf("time_ms %.6f\n", now_ms() - t0);
  }
  for (int k = 0; k < n_out; k++) {
    if (!outpath[k]) continue;
    const INFO *t = ECG_MODEL(output_info)(k);
    FILE *f = fopen(outpath[k], "wb");
    if (!f || (t->bytes && fwrite(outbuf[k], 1, t->bytes, f) != t->bytes) || fclose(f) != 0) {
      fprintf(stderr, "runner: cannot write %s\n", outpath[k]);
      return finish(1);
    }
  }
  if (profile) {
    FILE *f = strcmp(profile, "-") ? fopen(profile, "w") : stderr;
    if (!f) { fprintf(stderr, "runner: cannot write %s\n", profile); return finish(1); }
    const char *name;
    double ms, total = 0;
    for (int i = 0; ECG_MODEL(profile_read)(ctx, i, &name, &ms) == 0; i++) total += ms;
    fprintf(f, "# per-kernel profile: mean ms per run over %d runs (total %.3f ms)\n", runs, total / runs);
    for (int i = 0; ECG_MODEL(profile_read)(ctx, i, &name, &ms) == 0; i++)
      fprintf(f, "%.4f\t%5.1f%%\t%d\t%s\n", ms / runs, total > 0 ? 100 * ms / total : 0, i, name);
    if (f != stderr) fclose(f);
  }
  return finish(0);
}
