/* ort.c: time ONNX Runtime side by side via tools/bench/ort_run.mjs (onnxruntime-node). */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

int bt_ort_script(char *buf, size_t cap, ecg_err *e) {
  const char *env = getenv("ECG_BENCH_ORT");
  if (env && *env) {
    snprintf(buf, cap, "%s", env);
    if (access(buf, R_OK) != 0) return ecg_errf(e, ECG_ERR_INPUT, "ECG_BENCH_ORT=%s: not readable", buf);
    return ECG_OK;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return ecg_errf(e, ECG_ERR_INPUT, "cannot locate ort_run.mjs (set ECG_BENCH_ORT)");
  exe[n] = 0;
  /* bin/ecg-bench -> bin/../tools/bench; build-san/bin/ecg-bench -> two levels up; an
   * installed PREFIX/bin/ecg-bench -> PREFIX/share/ecg/bench (make install puts it there) */
  for (int up = 1; up <= 3; up++) {
    char *slash = strrchr(exe, '/');
    if (!slash) break;
    *slash = 0;
    if (up == 2) {
      snprintf(buf, cap, "%s/share/ecg/bench/ort_run.mjs", exe[0] ? exe : "/");
      if (access(buf, R_OK) == 0) return ECG_OK;
    }
    snprintf(buf, cap, "%s/tools/bench/ort_run.mjs", exe[0] ? exe : "/");
    if (up > 1 && access(buf, R_OK) == 0) return ECG_OK;
  }
  return ecg_errf(e, ECG_ERR_INPUT,
                  "ort_run.mjs not found in ../share/ecg/bench or tools/bench above the ecg-bench binary (set ECG_BENCH_ORT)");
}

int bt_ort_run(const char *model, const bt_io *io, char **in_paths, int threads, int warmup,
               int runs, const char *opt_level, const char *out_dir, const char *profile, bt_timing *t, bt_samples *acc,
               ecg_err *e) {
  char script[PATH_MAX + 64];
  ECG_TRY(bt_ort_script(script, sizeof script, e));
  const char *node = getenv("ECG_NODE");
  int cap = 18 + 4 * io->n_in, argc = 0, rc = ECG_OK;
  char **argv = calloc((size_t)cap, sizeof *argv);
  if (!argv) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  char nums[3][24];
  snprintf(nums[0], sizeof nums[0], "%d", threads);
  snprintf(nums[1], sizeof nums[1], "%d", warmup);
  snprintf(nums[2], sizeof nums[2], "%d", runs);
  const char *fixed[] = {node && *node ? node : "node", script, "--model", model, "--threads", nums[0],
                         "--warmup", nums[1], "--runs", nums[2]};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) argv[argc++] = strdup(fixed[i]);
  if (opt_level) { argv[argc++] = strdup("--opt-level"); argv[argc++] = strdup(opt_level); }
  if (out_dir) { argv[argc++] = strdup("--out-dir"); argv[argc++] = strdup(out_dir); }
  if (profile) { argv[argc++] = strdup("--profile"); argv[argc++] = strdup(profile); }
  for (int i = 0; i < io->n_in; i++) {
    char dims[256];
    argv[argc++] = strdup("--in");
    if (asprintf(&argv[argc++], "%s=%s", io->in[i].name, in_paths[i]) < 0) argv[argc - 1] = NULL;
    argv[argc++] = strdup("--input-shape");
    if (asprintf(&argv[argc++], "%s=%s", io->in[i].name, bt_dims_str(&io->in[i], dims, sizeof dims)) < 0)
      argv[argc - 1] = NULL;
  }
  for (int i = 0; i < argc; i++)
    if (!argv[i]) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  bt_proc p = {0};
  if (!rc) rc = bt_proc_run(argv, &p, e);
  if (!rc && p.status != 0)
    rc = ecg_errf(e, ECG_ERR_INPUT, "ONNX Runtime run failed (exit %d): %.800s", p.status, p.err);
  if (!rc) {
    memset(t, 0, sizeof *t);
    double r = 0;
    if (!bt_json_number(p.out, "median_ms", &t->median_ms) || !bt_json_number(p.out, "p10_ms", &t->p10_ms) ||
        !bt_json_number(p.out, "p90_ms", &t->p90_ms) || !bt_json_number(p.out, "runs", &r))
      rc = ecg_errf(e, ECG_ERR_INPUT, "ort_run.mjs printed no timing JSON: %.300s", p.out);
    t->runs = (int)r;
  }
  if (!rc && acc) { /* "times_ms":[a,b,...]: the samples, sorted */
    const char *q = strstr(p.out, "\"times_ms\":[");
    int n = 0;
    if (q) {
      q += strlen("\"times_ms\":[");
      while (*q && *q != ']' && !rc) {
        char *end;
        double v = strtod(q, &end);
        if (end == q || !isfinite(v)) break;
        rc = bt_samples_add(acc, &v, 1, e);
        n++;
        q = end + (*end == ',');
      }
    }
    if (!rc && (!q || *q != ']' || n != t->runs))
      rc = ecg_errf(e, ECG_ERR_INPUT, "ort_run.mjs printed no \"times_ms\" of %d samples: %.300s", t->runs, p.out);
  }
  bt_proc_clear(&p);
  for (int i = 0; i < argc; i++) free(argv[i]);
  free(argv);
  return rc;
}
