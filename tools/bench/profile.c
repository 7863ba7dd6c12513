/* profile.c: `ecg-bench --profile FILE [--trace FILE]` (issue 13 item 1): each kernel's
 * mean time (the runner's --profile), its nominal FLOPs and bytes (model.json
 * "kernel_costs", written by ecg-lower), GFLOP/s, fraction of the measured FMA peak, and
 * its place on the roofline (peak.c); a Chrome-trace timeline (chrome://tracing,
 * https://ui.perfetto.dev). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"

/** One kernel: the runner's mean time and model.json's nominal work. */
typedef struct kprof {
  char *name;
  double ms;          /**< mean ms per run */
  long long flops;    /**< -1 when model.json has no cost for it */
  long long bytes;
  int block;          /**< the ECG fusion block it generates (model.json), -1: none or unknown */
} kprof;

/** Parse the runner's profile ("MS TAB PCT% TAB INDEX TAB NAME" lines after a '#' line)
 *  into ks[0..*n). Errors: ECG_ERR_INPUT (malformed line, index out of order). */
static int parse_runner_profile(char *text, kprof **ks, int *n, ecg_err *e) {
  *ks = NULL;
  *n = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#' || !line[0]) continue;
    double ms, pct;
    int idx, off = 0;
    if (sscanf(line, "%lf\t%lf%%\t%d\t%n", &ms, &pct, &idx, &off) != 3 || off == 0 || idx != *n)
      return ecg_errf(e, ECG_ERR_INPUT, "runner --profile: malformed line '%.80s'", line);
    kprof *nk = realloc(*ks, sizeof *nk * (size_t)(*n + 1));
    if (!nk) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    *ks = nk;
    nk[*n] = (kprof){.name = strdup(line + off), .ms = ms, .flops = -1, .bytes = -1, .block = -1};
    if (!nk[*n].name) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    (*n)++;
  }
  return ECG_OK;
}

/** Fill ks[].block/flops/bytes from model.json's "kernel_costs" ({"index": I, "block": K,
 *  "flops": F, "bytes": B} objects; before "block" existed, without it). A directory
 *  lowered before kernel_costs existed leaves -1. */
static void read_costs(const char *json, kprof *ks, int n) {
  const char *p = strstr(json, "\"kernel_costs\"");
  if (!p) return;
  const char *end = strchr(p, ']');
  for (p = strchr(p, '{'); p && (!end || p < end); p = strchr(p + 1, '{')) {
    int idx, blk = -1;
    long long f, b;
    if ((sscanf(p, "{\"index\": %d, \"block\": %d, \"flops\": %lld, \"bytes\": %lld}", &idx, &blk, &f, &b) == 4 ||
         sscanf(p, "{\"index\": %d, \"flops\": %lld, \"bytes\": %lld}", &idx, &f, &b) == 3) && idx >= 0 && idx < n) {
      ks[idx].flops = f;
      ks[idx].bytes = b;
      ks[idx].block = blk;
    }
  }
}

/** Open path.PID.tmp for writing; the caller renames it over path (atomic_close). */
static FILE *atomic_open(const char *path, char *tmp, size_t cap, ecg_err *e) {
  snprintf(tmp, cap, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  return f;
}

/** Close f and rename tmp over path; on failure remove tmp. */
static int atomic_close(FILE *f, const char *tmp, const char *path, ecg_err *e) {
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) {
    int err = errno ? errno : EIO;
    remove(tmp);
    return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(err));
  }
  return ECG_OK;
}

/** Print v, or null when the denominator d was not positive. */
static void num_or_null(FILE *f, double v, double d) { bt_json_print_number(f, d > 0 ? v : NAN); }

int bt_profile_report(const char *dir, const char *model, const char *runner_profile, int threads, int runs,
                      const bt_peak *pk, bool peak_cached, const char *json_out, const char *trace_out, ecg_err *e) {
  kprof *ks = NULL;
  int n = 0, rc;
  unsigned char *raw = NULL;
  size_t len;
  ECG_TRY(cli_read_path(runner_profile, &raw, &len, e));
  rc = parse_runner_profile((char *)raw, &ks, &n, e);
  free(raw);
  char mj[4200];
  snprintf(mj, sizeof mj, "%s/model.json", dir);
  unsigned char *json = NULL;
  if (!rc) rc = cli_read_path(mj, &json, &len, e);
  if (!rc) read_costs((const char *)json, ks, n);
  free(json);
  /* the roofline: per-core peak times threads; bandwidth as measured with one thread */
  double peak = pk->fma_gflops * threads, bw = pk->bandwidth_gbs, total_ms = 0;
  long long total_flops = 0, total_bytes = 0;
  bool all_costs = true;
  for (int i = 0; i < n; i++) {
    total_ms += ks[i].ms;
    if (ks[i].flops < 0) all_costs = false;
    else { total_flops += ks[i].flops; total_bytes += ks[i].bytes; }
  }
  char tmp[4300];
  FILE *f = rc ? NULL : atomic_open(json_out, tmp, sizeof tmp, e);
  if (!rc && !f) rc = ECG_ERR_INPUT;
  if (!rc) {
    fputs("{\"model\":", f);
    bt_json_print_string(f, model);
    fprintf(f, ",\"threads\":%d,\"runs\":%d,\"peak\":", threads, runs);
    bt_peak_json(f, pk);
    fprintf(f, ",\"peak_cached\":%s,\"peak_gflops\":", peak_cached ? "true" : "false");
    bt_json_print_number(f, peak);
    fputs(",\"total_ms\":", f);
    bt_json_print_number(f, total_ms);
    fputs(",\"flops\":", f);
    if (all_costs) fprintf(f, "%lld", total_flops);
    else fputs("null", f);
    fputs(",\"bytes\":", f);
    if (all_costs) fprintf(f, "%lld", total_bytes);
    else fputs("null", f);
    fputs(",\"gflops\":", f);
    num_or_null(f, all_costs ? total_flops / (total_ms * 1e6) : NAN, total_ms);
    fputs(",\"fraction_of_peak\":", f);
    num_or_null(f, all_costs ? total_flops / (total_ms * 1e6) / peak : NAN, total_ms);
    fputs(",\"kernels\":[", f);
    for (int i = 0; i < n; i++) {
      const kprof *k = &ks[i];
      double gf = k->flops >= 0 && k->ms > 0 ? k->flops / (k->ms * 1e6) : NAN;
      double gbs = k->bytes >= 0 && k->ms > 0 ? k->bytes / (k->ms * 1e6) : NAN;
      double ai = k->bytes > 0 && k->flops >= 0 ? (double)k->flops / (double)k->bytes : NAN;
      double attainable = isfinite(ai) ? fmin(peak, ai * bw) : NAN;
      fprintf(f, "%s\n {\"index\":%d,\"block\":%d,\"name\":", i ? "," : "", i, k->block);
      bt_json_print_string(f, k->name);
      fputs(",\"ms\":", f);
      bt_json_print_number(f, k->ms);
      fputs(",\"share\":", f);
      num_or_null(f, k->ms / total_ms, total_ms);
      fputs(",\"flops\":", f);
      if (k->flops >= 0) fprintf(f, "%lld,\"bytes\":%lld", k->flops, k->bytes);
      else fputs("null,\"bytes\":null", f);
      fputs(",\"gflops\":", f);
      bt_json_print_number(f, gf);
      fputs(",\"gbs\":", f);
      bt_json_print_number(f, gbs);
      fputs(",\"fraction_of_peak\":", f);
      bt_json_print_number(f, gf / peak);
      fputs(",\"intensity\":", f);
      bt_json_print_number(f, ai);
      fputs(",\"bound\":", f);
      if (isfinite(ai)) bt_json_print_string(f, ai * bw < peak ? "memory" : "compute");
      else fputs("null", f);
      fputs(",\"fraction_of_roofline\":", f);
      bt_json_print_number(f, attainable > 0 ? gf / attainable : NAN);
      fputc('}', f);
    }
    fputs("\n]}\n", f);
    rc = atomic_close(f, tmp, json_out, e);
  }
  if (!rc && trace_out) {
    f = atomic_open(trace_out, tmp, sizeof tmp, e);
    if (!f) rc = ECG_ERR_INPUT;
    else {
      /* Chrome trace event format: complete events ("ph":"X"), microseconds */
      fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"model\":", f);
      bt_json_print_string(f, model);
      fprintf(f, ",\"note\":\"mean duration of each kernel over %d runs (%d threads), laid end to end in execution order\"},"
                 "\"traceEvents\":[", runs, threads);
      fputs("\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":", f);
      bt_json_print_string(f, model);
      fputs("}}", f);
      double ts = 0;
      for (int i = 0; i < n; i++) {
        const kprof *k = &ks[i];
        fputs(",\n{\"name\":", f);
        bt_json_print_string(f, k->name);
        fputs(",\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":", f);
        bt_json_print_number(f, ts * 1e3);
        fputs(",\"dur\":", f);
        bt_json_print_number(f, k->ms * 1e3);
        fprintf(f, ",\"args\":{\"index\":%d,\"gflops\":", i);
        bt_json_print_number(f, k->flops >= 0 && k->ms > 0 ? k->flops / (k->ms * 1e6) : NAN);
        fputs("}}", f);
        ts += k->ms;
      }
      fputs("\n]}\n", f);
      rc = atomic_close(f, tmp, trace_out, e);
    }
  }
  for (int i = 0; i < n; i++) free(ks[i].name);
  free(ks);
  return rc;
}
