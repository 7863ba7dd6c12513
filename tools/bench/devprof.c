/* devprof.c: ecg-bench --profile-device SWEEPDIR (issue 14 item 2; EOP, Xu et al. VEE '22 §3.2:
 * "sample the operator's execution time along a dimension on each device" and fit one of
 * three performance patterns).
 *
 * SWEEPDIR is what `ecg-partition --emit-sweeps` writes: one-node ECGs of each operator cut
 * along its partition dimensions (batch; rows: H of NCHW, M of a MatMul), indexed in
 * SWEEPDIR/index.tsv (signature, dim, extent, file). Each is lowered (ecg-lower next to this
 * program, --target c or opencl) and timed by this program on seeded inputs (median of
 * --runs, on OpenCL device --device for opencl), then every (signature, dimension) group is
 * fitted by EOP's fitter (tools/partition/eop.c: constant, linear, staircase, held-out MAPE)
 * and the device's profile printed as one JSON object on stdout (one file per device:
 * redirect it). The sweeps cut batch and rows (MatMul's M), and a matrix product's N (cols)
 * and K (k) too: with M, the paper's HW1W2. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "ecg_arch.h"
#include "../partition/eop.h"

/** One timed sample. */
typedef struct dp_sample {
  char sig[512], dim[16];
  double x, ms;
} dp_sample;

/* This program's directory (for ecg-lower beside it) into buf. */
static int self_dir(char *buf, size_t cap, ecg_err *e) {
  ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
  if (n <= 0) return ecg_errf(e, ECG_ERR_INTERNAL, "/proc/self/exe: %s", strerror(errno));
  buf[n] = 0;
  char *slash = strrchr(buf, '/');
  if (slash) *slash = 0;
  return ECG_OK;
}

/* Lower sweep file `ecg` into dir and time it; *ms the median, name the device's. */
static int one_sample(const char *bin, const char *self, const char *ecg, const char *dir, const dp_opts *o, double *ms, char *name,
                      size_t name_cap, ecg_err *e) {
  char lower[4200], runs[16], threads[16], device[16];
  snprintf(lower, sizeof lower, "%s/ecg-lower", bin);
  snprintf(runs, sizeof runs, "%d", o->runs);
  snprintf(threads, sizeof threads, "%d", o->threads);
  snprintf(device, sizeof device, "%d", o->device < 0 ? 0 : o->device);
  char *la[] = {lower, "-q", "--target", (char *)o->target, "-o", (char *)dir, (char *)ecg, NULL};
  bt_proc p = {0};
  ECG_TRY(bt_proc_run(la, &p, e));
  if (p.status) {
    int rc = ecg_errf(e, ECG_ERR_INPUT, "%s: ecg-lower failed (exit %d): %s", ecg, p.status, p.err ? p.err : "");
    bt_proc_clear(&p);
    return rc;
  }
  bt_proc_clear(&p);
  int opencl = strcmp(o->target, "c") != 0;
  char *ba[] = {(char *)self, (char *)dir, "--random", "1", "--runs", runs, "--warmup", "2", "-q", "--threads", threads,
                opencl ? "--device" : NULL, device, NULL};
  ECG_TRY(bt_proc_run(ba, &p, e));
  int rc = ECG_OK;
  if (p.status || !p.out || !bt_json_number(p.out, "median_ms", ms))
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s: the timing run failed (exit %d): %s", ecg, p.status, p.err ? p.err : "");
  else if (!bt_json_string(p.out, "device", name, name_cap) || !name[0])
    snprintf(name, name_cap, "cpu");
  bt_proc_clear(&p);
  return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st; (void)flag; (void)ftw;
  remove(path);
  return 0;
}

/* Remove dir and everything under it (a sample's lowered directory, the work directory). */
static void rm_flat(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void json_fit(FILE *f, const eop_fit *t) {
  fprintf(f, "{\"a\": %.6g, \"b\": %.6g, \"w\": %.6g, \"mape\": %.4g}", t->a, t->b, t->w, t->mape);
}

int bt_profile_device(const dp_opts *o, ecg_err *e) {
  char bin[4096], self[4200], index[4200], line[8192];
  ECG_TRY(self_dir(bin, sizeof bin, e));
  snprintf(self, sizeof self, "%s/ecg-bench", bin);
  snprintf(index, sizeof index, "%s/index.tsv", o->sweeps);
  FILE *in = fopen(index, "r");
  if (!in) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s (make it with ecg-partition --emit-sweeps %s)", index, strerror(errno), o->sweeps);
  const char *tmp = getenv("TMPDIR");
  char work[4200];
  snprintf(work, sizeof work, "%s/ecg-devprof.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(work)) { fclose(in); return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", work, strerror(errno)); }
  dp_sample *s = NULL;
  int n = 0, cap = 0, rc = ECG_OK, ln = 0;
  char device[256] = "", cpu[256];
  ecg_cpu_name(cpu, sizeof cpu);
  while (!rc && fgets(line, sizeof line, in)) {
    ln++;
    char *f[4], *save = NULL, *t = strtok_r(line, "\t\n", &save);
    int k = 0;
    for (; t && k < 4; t = strtok_r(NULL, "\t\n", &save)) f[k++] = t;
    if (k != 4) { rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: expected signature, dim, extent, file", index, ln); break; }
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      dp_sample *ns = realloc(s, sizeof *s * (size_t)cap);
      if (!ns) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      s = ns;
    }
    dp_sample *d = &s[n];
    snprintf(d->sig, sizeof d->sig, "%s", f[0]);
    snprintf(d->dim, sizeof d->dim, "%s", f[1]);
    d->x = strtod(f[2], NULL);
    char dir[4300], name[256];
    snprintf(dir, sizeof dir, "%s/%04d", work, n);
    rc = one_sample(bin, self, f[3], dir, o, &d->ms, name, sizeof name, e);
    rm_flat(dir);
    if (rc) break;
    if (!device[0]) snprintf(device, sizeof device, "%s", strcmp(o->target, "c") ? name : cpu);
    if (o->verbose) fprintf(stderr, "ecg-bench: %s %s %g: %.4g ms\n", d->sig, d->dim, d->x, d->ms);
    n++;
  }
  fclose(in);
  rm_flat(work);
  if (!rc && !n) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: no sweeps", index);
  FILE *out = stdout; /* printed only once every sample is timed: a failure prints nothing */
  if (!rc) {
    /* one group per (signature, dimension), samples in sweep order (ascending extent) */
    double mape_sum[3] = {0}, best_sum[3] = {0};
    int groups = 0, best_n[3] = {0};
    fprintf(out, "{\"device\": ");
    bt_json_print_string(out, device);
    fprintf(out, ", \"cpu\": ");
    bt_json_print_string(out, cpu);
    fprintf(out, ", \"target\": \"%s\", \"threads\": %d, \"runs\": %d, \"operators\": [", o->target, o->threads, o->runs);
    for (int i = 0; i < n; i++) {
      int first = 1;
      for (int j = 0; j < i && first; j++) first = strcmp(s[j].sig, s[i].sig) || strcmp(s[j].dim, s[i].dim);
      if (!first) continue;
      double x[256], ms[256];
      int m = 0;
      for (int j = i; j < n && m < 256; j++)
        if (!strcmp(s[j].sig, s[i].sig) && !strcmp(s[j].dim, s[i].dim)) { x[m] = s[j].x; ms[m++] = s[j].ms; }
      eop_fit all[3], best;
      if (eop_fit_samples(x, ms, m, all, &best)) continue;
      fprintf(out, "%s\n  {\"signature\": ", groups++ ? "," : "");
      bt_json_print_string(out, s[i].sig);
      fprintf(out, ", \"dim\": \"%s\", \"samples\": [", s[i].dim);
      for (int k = 0; k < m; k++) fprintf(out, "%s[%g, %.6g]", k ? ", " : "", x[k], ms[k]);
      fprintf(out, "], \"pattern\": \"%s\", \"fits\": {", eop_pattern_name(best.kind));
      for (int p = 0; p < 3; p++) {
        fprintf(out, "%s\"%s\": ", p ? ", " : "", eop_pattern_name((eop_pattern)p));
        json_fit(out, &all[p]);
        mape_sum[p] += all[p].mape;
      }
      fprintf(out, "}}");
      best_sum[best.kind] += best.mape;
      best_n[best.kind]++;
    }
    /* the estimator's accuracy: mean held-out MAPE of each pattern over every group, and of
     * the chosen pattern over the groups that chose it */
    fprintf(out, "\n], \"mape\": {");
    for (int p = 0; p < 3; p++)
      fprintf(out, "%s\"%s\": {\"all\": %.4g, \"chosen\": %.4g, \"chosen_by\": %d}", p ? ", " : "", eop_pattern_name((eop_pattern)p),
              groups ? mape_sum[p] / groups : 0, best_n[p] ? best_sum[p] / best_n[p] : 0, best_n[p]);
    fprintf(out, "}, \"groups\": %d, \"samples_timed\": %d}\n", groups, n);
    if (fflush(out) != 0 || ferror(out)) rc = ecg_errf(e, ECG_ERR_INPUT, "stdout: %s", strerror(errno ? errno : EIO));
  }
  free(s);
  return rc;
}
