/* runner.c: build a lowered directory and drive its runner (tools/lower/LOWERED.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <unistd.h>

#include "bench.h"
#include "ecg_arch.h"

/** malloc'd printf; NULL on out of memory. */
static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

/** True when exe (a name without '/') is an executable file in $PATH, or exe (a path) is executable. */
static bool in_path(const char *exe) {
  if (strchr(exe, '/')) return access(exe, X_OK) == 0;
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char full[PATH_MAX];
    snprintf(full, sizeof full, "%.*s/%s", (int)len, len ? p : ".", exe);
    if (access(full, X_OK) == 0) return true;
    p += len + (end != NULL);
  }
  return false;
}

int bt_target_resolve(const char *arch, const char *cc, bt_target *t, ecg_err *e) {
  memset(t, 0, sizeof *t);
  const ecg_arch_info *a = ecg_arch_find(arch && *arch ? arch : "native");
  if (!a) return ecg_errf(e, ECG_ERR_INPUT, "model.json: unknown \"arch\" '%s' (expected one of %s)", arch, ecg_arch_names());
  snprintf(t->arch, sizeof t->arch, "%s", a->machine ? a->machine : ecg_arch_host());
  t->own_isa = a->machine != NULL && ecg_arch_is_host(a);
  if (ecg_arch_is_host(a)) return ECG_OK;
  t->emulated = true;
  t->qemu = a->qemu;
  const char *ld = getenv("QEMU_LD_PREFIX");
  snprintf(t->sysroot, sizeof t->sysroot, "%s", ld && *ld ? ld : a->sysroot);
  char gcc[128], missing[PATH_MAX] = "";
  snprintf(gcc, sizeof gcc, "%sgcc", a->cross);
  const char *need[3] = {cc ? cc : gcc, a->qemu, NULL};
  for (int i = 0; need[i]; i++)
    if (!in_path(need[i])) snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s", *missing ? ", " : "", need[i]);
  char libgomp[600];
  snprintf(libgomp, sizeof libgomp, "%s/lib/libgomp.so.1", t->sysroot);
  if (access(libgomp, R_OK) != 0) snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s", *missing ? ", " : "", libgomp);
  if (*missing)
    return ecg_errf(e, ECG_ERR_INPUT, "%s target on this %s host: %s not found; install the Debian packages %s (make setup)", a->name,
                    ecg_arch_host(), missing, a->packages);
  return ECG_OK;
}

int bt_build(const char *dir, const char *cc, const bt_target *t, bt_proc *p, ecg_err *e) {
  char *ccarg = cc ? xasprintf("CC=%s", cc) : NULL;
  if (cc && !ccarg) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  char *argv[8] = {"make", "-C", (char *)dir, "-s"};
  int k = 4;
  if (ccarg) argv[k++] = ccarg;
  if (t->own_isa) argv[k++] = "CROSS_COMPILE="; /* lowered for this machine's ISA by name: host gcc */
  int rc = bt_proc_run(argv, p, e);
  free(ccarg);
  if (rc) return rc;
  if (p->status != 0) return ecg_errf(e, ECG_ERR_INPUT, "%s: build failed (make exit %d)", dir, p->status);
  return ECG_OK;
}

void bt_io_clear(bt_io *io) {
  for (int i = 0; i < io->n_in; i++) bt_tensor_clear(&io->in[i]);
  for (int i = 0; i < io->n_out; i++) bt_tensor_clear(&io->out[i]);
  free(io->in);
  free(io->out);
  memset(io, 0, sizeof *io);
}

/** Parse "1x3x224x224" or "scalar" into dims; returns rank, or -1 when malformed. */
static int parse_dims(const char *s, int64_t *dims) {
  if (strcmp(s, "scalar") == 0) return 0;
  int rank = 0;
  for (;;) {
    if (rank < ECG_MAX_RANK && *s == '?' && (s[1] == 0 || s[1] == 'x')) { /* a symbolic dim: -1 */
      dims[rank++] = -1;
      if (!*++s) return rank;
      s++;
      continue;
    }
    if (rank == ECG_MAX_RANK || *s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || v < 0) return -1;
    dims[rank++] = v;
    if (*end == 0) return rank;
    if (*end != 'x') return -1;
    s = end + 1;
  }
}

/** Append one "input|output TAB NAME TAB DTYPE TAB DIMS" line (NUL-terminated, no
 *  newline) to io; DIMS "seq" marks a run-time sequence (bt_tensor.seq). Errors: ECG_ERR_INPUT (malformed), ECG_ERR_INTERNAL. */
static int info_line(char *line, bt_io *io, ecg_err *e) {
  char *f[4] = {line}, *rest = line;
  int nf = 0;
  while (nf < 4 && rest) f[nf++] = strsep(&rest, "\t");
  if (nf != 4 || rest) return ecg_errf(e, ECG_ERR_INPUT, "runner --info: malformed line '%s'", f[0]);
  bool is_in = strcmp(f[0], "input") == 0;
  if (!is_in && strcmp(f[0], "output") != 0)
    return ecg_errf(e, ECG_ERR_INPUT, "runner --info: expected input|output, got '%s'", f[0]);
  char *end;
  long dtype = strtol(f[2], &end, 10);
  int64_t dims[ECG_MAX_RANK];
  bool seq = strcmp(f[3], "seq") == 0; /* a run-time sequence: its items carry their shapes */
  int rank = seq ? 0 : parse_dims(f[3], dims);
  if (*end || end == f[2] || rank < 0)
    return ecg_errf(e, ECG_ERR_INPUT, "runner --info: bad dtype or dims for '%s': '%s' '%s'", f[1], f[2], f[3]);
  bt_tensor **arr = is_in ? &io->in : &io->out;
  int *n = is_in ? &io->n_in : &io->n_out;
  bt_tensor *na = realloc(*arr, sizeof **arr * (size_t)(*n + 1));
  if (!na) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  *arr = na;
  unsigned sym = 0;
  for (int d = 0; d < rank; d++)
    if (dims[d] < 0) { sym |= 1u << d; dims[d] = 0; }
  ECG_TRY(bt_tensor_init(&na[*n], f[1], (int)dtype, rank, dims, e));
  na[*n].sym = sym;
  na[*n].seq = seq;
  io->dynamic |= sym != 0;
  (*n)++;
  return ECG_OK;
}

/** Put `qemu -L sysroot` before the runner in argv[0..] when t is emulated; returns the
 *  number of slots used (0 or 3). The strings are t's (not to be freed). */
static int emu_prefix(const bt_target *t, char **argv) {
  if (!t->emulated) return 0;
  argv[0] = (char *)t->qemu;
  argv[1] = "-L";
  argv[2] = (char *)t->sysroot;
  return 3;
}

int bt_runner_info(const char *dir, const bt_target *t, bt_io *io, ecg_err *e) {
  memset(io, 0, sizeof *io);
  char *exe = xasprintf("%s/runner", dir);
  if (!exe) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  char *argv[6] = {0};
  int k = emu_prefix(t, argv);
  argv[k] = exe;
  argv[k + 1] = "--info";
  bt_proc p;
  int rc = bt_proc_run(argv, &p, e);
  if (!rc && p.status != 0)
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s --info failed (exit %d): %.600s", exe, p.status, p.err);
  char *save = NULL;
  for (char *line = rc ? NULL : strtok_r(p.out, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r') line[len - 1] = 0;
    if (*line) rc = info_line(line, io, e);
  }
  if (!rc && io->n_out == 0) rc = ecg_errf(e, ECG_ERR_INPUT, "%s --info lists no outputs", exe);
  if (rc) bt_io_clear(io);
  bt_proc_clear(&p);
  free(exe);
  return rc;
}

/** qsort comparator for doubles. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/** Sorted samples -> value at quantile q in [0,1], linear interpolation (as ort_run.mjs). */
static double quantile(const double *s, int n, double q) {
  double pos = q * (n - 1);
  int lo = (int)floor(pos), hi = (int)ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

int bt_samples_add(bt_samples *s, const double *v, int n, ecg_err *e) {
  if (s->n + n > s->cap) {
    int cap = (s->n + n) * 2;
    double *nv = realloc(s->v, sizeof *nv * (size_t)cap);
    if (!nv) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    s->v = nv;
    s->cap = cap;
  }
  memcpy(s->v + s->n, v, sizeof *v * (size_t)n);
  s->n += n;
  return ECG_OK;
}

void bt_samples_clear(bt_samples *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

void bt_timing_from(double *samples, int n, bt_timing *t) {
  memset(t, 0, sizeof *t);
  t->runs = n;
  if (n <= 0) {
    t->median_ms = t->p10_ms = t->p90_ms = NAN;
    return;
  }
  qsort(samples, (size_t)n, sizeof *samples, cmp_double);
  t->median_ms = quantile(samples, n, 0.5);
  t->p10_ms = quantile(samples, n, 0.1);
  t->p90_ms = quantile(samples, n, 0.9);
}

/** "NAME TAB DIMS" of the runner's output_shape line: output NAME of io takes that shape. */
static int output_shape_line(char *s, bt_io *io, ecg_err *e) {
  char *tab = strchr(s, '\t');
  int64_t dims[ECG_MAX_RANK];
  int rank = tab ? parse_dims(tab + 1, dims) : -1;
  if (rank < 0) return ecg_errf(e, ECG_ERR_INPUT, "runner: malformed output_shape line '%.200s'", s);
  *tab = 0;
  for (int i = 0; i < io->n_out; i++) {
    bt_tensor *o = &io->out[i];
    if (strcmp(o->name, s)) continue;
    bt_tensor nt;
    ECG_TRY(bt_tensor_init(&nt, o->name, o->dtype, rank, dims, e));
    bt_tensor_clear(o);
    *o = nt;
    return ECG_OK;
  }
  return ecg_errf(e, ECG_ERR_INPUT, "runner: output_shape of an unknown output '%.200s'", s);
}

int bt_runner_run(const char *dir, bt_target *tg, bt_io *io, char **in_paths, char **out_paths,
                  int threads, int warmup, int runs, const char *profile, bt_timing *t, bt_samples *acc, ecg_err *e) {
  int argc = 0, cap = 17 + 2 * (2 * io->n_in + io->n_out);
  char **argv = calloc((size_t)cap, sizeof *argv);
  if (!argv) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  int rc = ECG_OK;
  argc = emu_prefix(tg, argv);
  for (int i = 0; i < argc; i++) argv[i] = strdup(argv[i]);
  argv[argc++] = xasprintf("%s/runner", dir);
  argv[argc++] = strdup("--threads");
  argv[argc++] = xasprintf("%d", threads);
  argv[argc++] = strdup("--warmup");
  argv[argc++] = xasprintf("%d", warmup);
  argv[argc++] = strdup("--runs");
  argv[argc++] = xasprintf("%d", runs);
  if (profile) {
    argv[argc++] = strdup("--profile");
    argv[argc++] = strdup(profile);
  }
  if (tg->device >= 0) { /* OpenCL only: main.c refuses --device for a C directory */
    argv[argc++] = strdup("--device");
    argv[argc++] = xasprintf("%d", tg->device);
  }
  for (int i = 0; io->dynamic && i < io->n_in; i++) { /* a dynamic-shape build: the shapes of this run */
    char dims[256];
    if (io->in[i].seq) continue; /* a run-time sequence: its items carry their dims */
    argv[argc++] = strdup("--shape");
    argv[argc++] = xasprintf("%s=%s", io->in[i].name, io->in[i].rank ? bt_dims_str(&io->in[i], dims, sizeof dims) : "");
  }
  for (int i = 0; i < io->n_in; i++) {
    argv[argc++] = strdup("--in");
    argv[argc++] = xasprintf("%s=%s", io->in[i].name, in_paths[i]);
  }
  for (int i = 0; i < io->n_out; i++) {
    argv[argc++] = strdup("--out");
    argv[argc++] = xasprintf("%s=%s", io->out[i].name, out_paths[i]);
  }
  for (int i = 0; i < argc; i++)
    if (!argv[i]) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  bt_proc p = {0};
  double *samples = NULL;
  if (!rc) rc = bt_proc_run(argv, &p, e);
  if (!rc && p.status != 0)
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s failed (exit %d): %.800s", argv[tg->emulated ? 3 : 0], p.status, p.err);
  if (!rc) {
    int n = 0;
    samples = malloc(sizeof *samples * (p.out_len / 8 + 1));
    if (!samples) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    char *save = NULL;
    for (char *line = rc ? NULL : strtok_r(p.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      if (!strncmp(line, "device ", 7)) { snprintf(tg->device_name, sizeof tg->device_name, "%s", line + 7); continue; }
      if (!strncmp(line, "output_shape\t", 13) && !rc) { /* a dynamic-shape build: this run's output shape */
        rc = output_shape_line(line + 13, io, e);
        continue;
      }
      if (strncmp(line, "time_ms", 7) != 0 || (line[7] != ' ' && line[7] != '\t')) continue;
      char *end;
      double v = strtod(line + 8, &end);
      if (end != line + 8 && isfinite(v)) samples[n++] = v;
    }
    if (!rc && n == 0) rc = ecg_errf(e, ECG_ERR_INPUT, "%s printed no time_ms lines", argv[tg->emulated ? 3 : 0]);
    if (!rc && acc) rc = bt_samples_add(acc, samples, n, e);
    if (!rc) bt_timing_from(samples, n, t);
  }
  free(samples);
  bt_proc_clear(&p);
  for (int i = 0; i < argc; i++) free(argv[i]);
  free(argv);
  return rc;
}
