/* runner: the command-line driver of a lowered model (tools/lower/LOWERED.md, "Runner
 * protocol"). Copied into every lowered directory by ecg-lower; built by its Makefile.
 *   runner --info
 *   runner [--weights FILE] [--device N] [--threads N] [--warmup W] [--runs R] [--profile FILE|-] [--shape NAME=DIMS ...] --in NAME=FILE ... [--out NAME=FILE ...]
 * --profile writes mean milliseconds per kernel (per node) over the timed runs.
 * Inputs and outputs are raw little-endian files of exactly the tensor's bytes; one
 * "time_ms <float>" line per timed run goes to stdout; an OpenCL model (ecg-lower --target
 * opencl) runs on OpenCL device N (--device, else ECG_CL_DEVICE, else 0) and prints
 * "device <CL_DEVICE_NAME>" first. A dynamic-shape model (model.h defines ECG_MODEL_DYNAMIC)
 * takes each input's shape with --shape NAME=DIMS (e.g. x=1x3x48x192; --info prints its
 * symbolic dims as '?'), prints "output_shape NAME DIMS" for each output before the
 * timings, and writes outputs of those shapes; a shape the model cannot take exits 1 with
 * the model's message naming the input. A run-time sequence input or output (tensor_info
 * .sequence; --info prints its dims as "seq") travels as a sequence file (tools/lower/LOWERED.md
 * "Sequences": little-endian int64 count, then per item int64 dtype, rank and dims and the
 * item's raw bytes). Exit 0 ok, 1 bad input, 2 usage. */
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
  if (t->sequence) { printf("seq\n"); return; } /* a run-time sequence: its items carry their shapes */
  if (t->rank == 0) printf("scalar");
  for (int d = 0; d < t->rank; d++) {
    if (t->dims[d] < 0) printf("%s?", d ? "x" : ""); /* a symbolic dim (dynamic-shape model) */
    else printf("%s%lld", d ? "x" : "", (long long)t->dims[d]);
  }
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
  fprintf(stderr, "usage: runner --info | runner [--weights FILE] [--device N] [--threads N] [--warmup W] [--runs R] [--shape NAME=DIMS ...] --in NAME=FILE ... [--out NAME=FILE ...]\n");
  return 2;
}

/* Bytes of one element of ONNX dtype code dt (0 when unknown). */
static size_t dtype_size(int dt) {
  switch (dt) {
  case 2: case 3: case 9: return 1;      /* uint8, int8, bool */
  case 4: case 5: case 10: case 16: return 2; /* uint16, int16, float16, bfloat16 */
  case 1: case 6: case 12: return 4;     /* float, int32, uint32 */
  case 7: case 11: case 13: return 8;    /* int64, double, uint64 */
  default: return 0;
  }
}

/* "1x3x48x192" into dims (at most 8); the rank, or -1 when malformed. */
static int parse_dims(const char *s, int64_t *dims) {
  int r = 0;
  while (*s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || r == 8 || v < 0) return -1;
    dims[r++] = v;
    if (*end == 'x') end++;
    else if (*end) return -1;
    s = end;
  }
  return r;
}

/* Sequence file bytes raw[len] into *s, items pointing into raw: 0, or -1 when malformed
 * (truncated, trailing bytes, another dtype than dt, rank > 8, negative dims, sizes that do
 * not fit). */
static int seq_parse(unsigned char *raw, size_t len, int dt, ECG_MODEL(sequence) *s) {
  size_t at = 0;
  int64_t w;
#define WORD(V) do { if (len - at < 8) return -1; memcpy(&(V), raw + at, 8); at += 8; } while (0)
  WORD(w);
  if (w < 0 || (uint64_t)w > len / 16) return -1;
  s->n = (int)w;
  s->items = calloc((size_t)w + 1, sizeof *s->items);
  if (!s->items) return -1;
  for (int i = 0; i < s->n; i++) {
    ECG_MODEL(value) *v = &s->items[i];
    int64_t d, r;
    WORD(d);
    WORD(r);
    if (d != dt || r < 0 || r > 8) return -1;
    v->dtype = (int)d;
    v->rank = (int)r;
    size_t m = dtype_size(dt);
    for (int k = 0; k < v->rank; k++) {
      WORD(v->dims[k]);
      if (v->dims[k] < 0 || v->dims[k] > ((int64_t)1 << 40) || (v->dims[k] && m > ((size_t)1 << 62) / (size_t)v->dims[k])) return -1;
      m *= (size_t)v->dims[k];
    }
    if (len - at < m) return -1;
    v->bytes = m;
    v->data = raw + at;
    at += m;
  }
#undef WORD
  return at == len ? 0 : -1;
}

/* Write sequence s to path as a sequence file: 0, or -1. */
static int seq_write(const char *path, const ECG_MODEL(sequence) *s) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int64_t w = s->n;
  int ok = fwrite(&w, 8, 1, f) == 1;
  for (int i = 0; ok && i < s->n; i++) {
    const ECG_MODEL(value) *v = &s->items[i];
    int64_t h[2] = {v->dtype, v->rank};
    ok = fwrite(h, 8, 2, f) == 2 && (v->rank == 0 || fwrite(v->dims, 8, (size_t)v->rank, f) == (size_t)v->rank) &&
         (v->bytes == 0 || fwrite(v->data, 1, v->bytes, f) == v->bytes);
  }
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

/* Everything main() allocates, freed by finish() on every exit path (the runner is built
 * under ASan/LeakSanitizer by the sanitizer end-to-end tests, issue 10 item 3). */
static int n_in, n_out;
static void **inbuf, **outbuf;
static const char **outpath, **inpath;
static size_t *outbytes, *inbytes;
static int64_t (*shape)[8]; /* --shape per input */
static void **inraw;        /* a sequence input's file bytes (its items point into them) */
static int *srank;          /* its rank, -1 when not given */
static ECG_MODEL(ctx) *ctx;

/* Free what main() allocated and return rc. */
static int finish(int rc) {
  if (ctx) ECG_MODEL(destroy)(ctx);
  for (int k = 0; inbuf && k < n_in; k++) {
    if (inraw && inraw[k]) free(((ECG_MODEL(sequence) *)inbuf[k])->items);
    free(inbuf[k]);
  }
  for (int k = 0; inraw && k < n_in; k++) free(inraw[k]);
  free(inraw);
  for (int k = 0; outbuf && k < n_out; k++) free(outbuf[k]);
  free(inbuf); free(outbuf); free(outpath); free(inpath); free(outbytes); free(shape); free(srank);
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
  inpath = calloc((size_t)n_in + 1, sizeof(char *));
  outbytes = calloc((size_t)n_out + 1, sizeof(size_t));
  shape = calloc((size_t)n_in + 1, sizeof *shape);
  srank = calloc((size_t)n_in + 1, sizeof *srank);
  inbytes = calloc((size_t)n_in + 1, sizeof *inbytes);
  inraw = calloc((size_t)n_in + 1, sizeof *inraw);
  if (!inbuf || !outbuf || !outpath || !inpath || !outbytes || !shape || !srank || !inbytes || !inraw) return finish(3);
  for (int k = 0; k < n_in; k++) srank[k] = -1;
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
      inpath[idx] = eq + 1; /* given twice: the last one counts; read once the shapes are known */
    } else if (!strcmp(a, "--shape")) {
      const char *eq = strchr(v, '=');
      if (!eq) return finish(usage());
      int idx = -1;
      for (int k = 0; k < n_in; k++)
        if (strlen(ECG_MODEL(input_info)(k)->name) == (size_t)(eq - v) && !strncmp(ECG_MODEL(input_info)(k)->name, v, (size_t)(eq - v))) idx = k;
      if (idx < 0) { fprintf(stderr, "runner: no graph input named '%.*s' (--shape)\n", (int)(eq - v), v); return finish(1); }
      if ((srank[idx] = parse_dims(eq + 1, shape[idx])) < 0) { fprintf(stderr, "runner: --shape %s: expected NAME=DIMS, e.g. x=1x3x48x192\n", v); return finish(2); }
    } else return finish(usage());
  }
  /* each input's bytes: the model's, or those of its --shape (a dynamic-shape model) */
  for (int k = 0; k < n_in; k++) {
    const INFO *t = ECG_MODEL(input_info)(k);
    inbytes[k] = t->bytes;
    int dyn = 0;
    for (int d = 0; d < t->rank; d++) dyn |= !t->sequence && t->dims[d] < 0; /* a sequence: its items carry their dims */
    if (srank[k] >= 0 && !dyn) { /* a static input: --shape may only repeat its shape */
      int same = srank[k] == t->rank;
      for (int d = 0; same && d < t->rank; d++) same = shape[k][d] == t->dims[d];
      if (!same) { fprintf(stderr, "runner: input '%s': --shape differs from the shape this model was compiled for\n", t->name); return finish(1); }
    } else if (srank[k] >= 0) {
      size_t b = dtype_size(t->dtype);
      for (int d = 0; d < srank[k]; d++) b *= (size_t)shape[k][d];
      inbytes[k] = b;
    } else if (dyn) {
      fprintf(stderr, "runner: input '%s' has symbolic dims: give its shape with --shape %s=DIMS\n", t->name, t->name);
      return finish(1);
    }
  }
  for (int k = 0; k < n_in; k++) {
    const INFO *t = ECG_MODEL(input_info)(k);
    if (!inpath[k]) continue;
    if (t->sequence) { /* a sequence file, read whole (bounded) and parsed */
      FILE *f = fopen(inpath[k], "rb");
      if (!f) { fprintf(stderr, "runner: %s: %s\n", inpath[k], strerror(errno)); return finish(1); }
      size_t cap = 1 << 12, len = 0;
      unsigned char *raw = malloc(cap);
      while (raw) {
        if (len == cap) {
          unsigned char *nr = cap < ((size_t)1 << 32) ? realloc(raw, cap * 2) : NULL;
          if (!nr) { free(raw); raw = NULL; break; }
          raw = nr;
          cap *= 2;
        }
        size_t got = fread(raw + len, 1, cap - len, f);
        len += got;
        if (!got) break;
      }
      fclose(f);
      inraw[k] = raw;
      inbuf[k] = calloc(1, sizeof(ECG_MODEL(sequence)));
      if (!raw || !inbuf[k]) return finish(3);
      if (seq_parse(raw, len, t->dtype, (ECG_MODEL(sequence) *)inbuf[k])) {
        fprintf(stderr, "runner: %s: not a sequence file of %d-typed tensors for input '%s'\n", inpath[k], t->dtype, t->name);
        return finish(1);
      }
      continue;
    }
    FILE *f = fopen(inpath[k], "rb");
    if (!f) { fprintf(stderr, "runner: %s: %s\n", inpath[k], strerror(errno)); return finish(1); }
    inbuf[k] = malloc(inbytes[k] ? inbytes[k] : 1);
    if (!inbuf[k]) { fclose(f); return finish(3); }
    size_t got = inbytes[k] ? fread(inbuf[k], 1, inbytes[k], f) : 0;
    int extra = fgetc(f);
    fclose(f);
    if (got != inbytes[k] || extra != EOF) {
      fprintf(stderr, "runner: %s: expected exactly %zu bytes for input '%s'\n", inpath[k], inbytes[k], t->name);
      return finish(1);
    }
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
  for (int k = 0; k < n_out; k++) outbytes[k] = ECG_MODEL(output_info)(k)->bytes;
#ifdef ECG_MODEL_DYNAMIC
  /* the input shapes, then each output's shape for them */
  for (int k = 0; k < n_in; k++) {
    const INFO *t = ECG_MODEL(input_info)(k);
    if (t->sequence) continue; /* a run-time sequence: its items carry their dims */
    int rc = srank[k] >= 0 ? ECG_MODEL(set_input_shape)(ctx, t->name, srank[k], shape[k]) : 0;
    if (srank[k] < 0) { /* a static input: its own shape */
      rc = ECG_MODEL(set_input_shape)(ctx, t->name, t->rank, t->dims);
    }
    if (rc) { fprintf(stderr, "runner: %s\n", ECG_MODEL(error)(ctx)); return finish(1); }
  }
  for (int k = 0; k < n_out; k++) {
    const INFO *t = ECG_MODEL(output_info)(k);
    if (t->sequence) continue; /* a run-time sequence: written as a sequence file */
    int rank;
    int64_t dims[8];
    if (ECG_MODEL(output_shape)(ctx, k, &rank, dims)) { fprintf(stderr, "runner: %s\n", ECG_MODEL(error)(ctx)); return finish(1); }
    size_t b = dtype_size(t->dtype);
    printf("output_shape\t%s\t", t->name);
    if (!rank) printf("scalar");
    for (int d = 0; d < rank; d++) { printf("%s%lld", d ? "x" : "", (long long)dims[d]); b *= (size_t)dims[d]; }
    printf("\n");
    outbytes[k] = b;
  }
#endif
 
  for (int k = 0; k < n_in; k++) {
    const INFO *t = ECG_MODEL(input_info)(k);
    if (!inbuf[k]) { fprintf(stderr, "runner: input '%s' not given (--in %s=FILE)\n", t->name, t->name); return finish(1); }
    ECG_MODEL(bind)(ctx, t->name, inbuf[k]);
  }
  for (int k = 0; k < n_out; k++) {
    const INFO *t = ECG_MODEL(output_info)(k);
    if (t->sequence) outbytes[k] = sizeof(ECG_MODEL(sequence)); /* filled by the run */
    outbuf[k] = calloc(1, outbytes[k] ? outbytes[k] : 1);
    if (!outbuf[k]) return finish(3);
    ECG_MODEL(bind)(ctx, t->name, outbuf[k]);
  }
  for (int r = 0; r < warmup; r++) {
    int rc = ECG_MODEL(run)(ctx);
#ifdef ECG_MODEL_DYNAMIC
    if (rc == -3) { fprintf(stderr, "runner: %s\n", ECG_MODEL(error)(ctx)); return finish(1); }
#endif
    (void)rc;
  }
  if (profile && ECG_MODEL(profile)(ctx, 1) != 0) return finish(3);
  for (int r = 0; r < runs; r++) {
    double t0 = now_ms();
    int rc = ECG_MODEL(run)(ctx);
    if (rc != 0) {
      fprintf(stderr, "runner: run failed (%d: %s)\n", rc,
              rc == -2 ? "a run-time check failed: a Loop ran other than the iterations its scan outputs were compiled for, "
                           "a Range's or Slice's run-time operands gave another shape than the one it was compiled for, "
                           "or a sequence position or item does not fit the sequence or the shape compiled for (a SequenceMap: sequences of different lengths, items whose shapes do not broadcast)"
              : rc == -3 ? "the input shapes do not fit the model (or a sequence input is malformed)"
              : rc == -4 ? "out of memory"
                       : "an input or output is unbound");
      return finish(1);
    }
    printf("time_ms %.6f\n", now_ms() - t0);
  }
  for (int k = 0; k < n_out; k++) {
    if (!outpath[k]) continue;
    if (ECG_MODEL(output_info)(k)->sequence) {
      if (seq_write(outpath[k], (const ECG_MODEL(sequence) *)outbuf[k])) { fprintf(stderr, "runner: cannot write %s\n", outpath[k]); return finish(1); }
      continue;
    }
    FILE *f = fopen(outpath[k], "wb");
    if (!f || (outbytes[k] && fwrite(outbuf[k], 1, outbytes[k], f) != outbytes[k]) || fclose(f) != 0) {
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
