/* ecg-partition: AGO's weighted acyclic graph partitioning (Xu et al., INFOCOM 2023, §IV)
 * of an ECG into subgraphs, or the Relay-style baseline. Reads an ECG (FILE or stdin),
 * writes it with partition subgraphs (-o FILE or stdout). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ecg_measure.h"
#include "partition.h"
#include "tune.h"

#define PROG "ecg-partition"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ecg-partition [options] [FILE.ecg|-]\n"
          "Partition an ECG into subgraphs (AGO, INFOCOM 2023, §IV); fusion blocks stay whole.\n"
          "  --strategy S       ago (default): CLUSTER (Algorithm 1), affix merging while the\n"
          "                     subgraph weight stays below --max-weight, any number of complex\n"
          "                     operators per subgraph; relay: the baseline AGO compares with, at\n"
          "                     most one complex (Many-to-Many) operator per subgraph and\n"
          "                     Reshape/Transpose-like (Reorganize, Shuffle) operators alone\n"
          "  --max-weight W     the threshold Td (default: the weights file's max_weight)\n"
          "  --weights FILE     c, b and max_weight of AGO Eq. 1 (default: the built-in\n"
          "                     tools/partition/data/weights.txt: UNFITTED c=1, b=0, Td=1024)\n"
          "  --report FILE      JSON report (- = stderr): nodes, FLOPs, intermediate bytes before/\n"
          "                     after, subgraphs, the weight of each, log2 histogram, mean, median,\n"
          "                     Jain's fairness index\n"
          "  -o, --output FILE  output ECG (default stdout)\n"
          "  --zstd             compress the output\n"
          "  -q, --quiet        errors only on stderr\n"
          "  -v, --verbose      a one-line summary on stderr\n"
          "  -h, --help         this help\n"
          "  --version          print the version\n"
          "EOP (VEE '22: operators split between the CPU and a device), first steps:\n"
          "  --emit-sweeps DIR  write one-node ECGs of each operator cut along its partition\n"
          "                     dimensions (batch, rows; a MatMul's N and K too: cols, k) into DIR,\n"
          "                     indexed in DIR/index.tsv, for\n"
          "                     scripts/eop_profile.sh to time on a device; no ECG output\n"
          "  --points N         sizes per operator and dimension (default 6)\n"
          "  --eop              plan from two device profiles (--profiles CPU --profiles DEV):\n"
          "                     performance patterns, partition ratios, joint tuning; each planned\n"
          "                     operator's placement (axis, CPU share) goes into the output ECG,\n"
          "                     and the plan with every strategy's estimate (cpu-only, device-only,\n"
          "                     equal, fixed, eop) into --report FILE as JSON; ecg-lower --target\n"
          "                     c+opencl runs the placements\n"
          "  --profiles FILE    a device profile (JSON lines), twice: the CPU's, then the device's\n"
          "  --cm MS            Split + copies + Concatenate of a split operator (default 0.05)\n"
          "  --objective O      makespan (default: two in-order device queues) or sum (Eq. 4)\n"
          "  --baseline S       place by strategy S instead of EOP: cpu-only, device-only, equal\n"
          "                     (0.5), fixed (the graph's speedup ratio) or eop (default); the\n"
          "                     paper's baselines, run by ecg-lower --target c+opencl\n"
          "  --foreign-profiles plan with samples measured on another CPU model (their \"cpu\"\n"
          "                     key; refused by default: times from elsewhere plan nothing here)\n"
          "  --share S          with --eop instead of --profiles: every operator with FLOPs gets\n"
          "                     CPU share S (0..1) along its rows dimension (else batch): forced\n"
          "                     ratios, so the split path of ecg-lower --target c+opencl runs\n"
          "                     whatever a plan would decide (0.5 = the paper's Equal baseline)\n"
          "Tuning (AGO §V: SPLIT/JOIN over the subgraphs, every schedule measured here with the\n"
          "lowered code: ecg-lower, then ecg-bench --random 1):\n"
          "  --tune             partition, then choose each fusion block's schedule (threads,\n"
          "                     conv_algo, vector_width, unroll; intensive_fusion on/off on an\n"
          "                     intensive-fusion block) into the output ECG\n"
          "  --budget N         schedules explored in all (default 100)\n"
          "  --timeout S        no new measurement after S seconds\n"
          "  --tune-log FILE    JSON lines, one per measurement (key, cpu, threads, schedule, ms),\n"
          "                     appended to; candidates it holds for this CPU are not measured again\n"
          "  --patience K       a search ends after K schedules without a 1%% gain (default 4)\n"
          "  --confirm K        a schedule 1%% faster than the best is measured K more times,\n"
          "                     alternating with the best, and kept only if its median still\n"
          "                     is 1%% faster (default 2; 0 keeps a single run's gain; these\n"
          "                     measurements are not counted in the budget)\n"
          "  --runs R, --warmup W, --threads T   ecg-bench's timing per measurement (10, 2, 1)\n"
          "  --seed S           order of the candidates (default 1)\n"
          "  --no-intensive     AGO-NI: no intensive fusion at all (intensive_fusion pinned off)\n"
          "  --no-reformer      AGO-NR: no SPLIT/JOIN, each subgraph searched directly\n"
          "  --tune-in W        where a candidate is measured: model (default: the whole model\n"
          "                     lowered and profiled, the candidate's blocks' kernel times summed)\n"
          "                     or subgraph (its blocks extracted and timed alone, AGO's setting)\n"
          "  --emit-candidates DIR  write the first round's candidate ECGs (DIR/KEY.ecg), measure\n"
          "                     none, write no ECG: measure them anywhere with --measure\n"
          "                     (standalone subgraphs: needs --tune-in subgraph)\n"
          "  --measure FILE     lower and time one candidate ECG; print its tuning-log line\n"
          "  --set-schedule B:K=V,...  force block B's (or all blocks') schedule by hand: t|threads,\n"
          "                     a|conv_algo (auto, gemm, gemm_t, winograd, blocked), v|vector_width, u|unroll,\n"
          "                     i|intensive_fusion (auto, on, off: an intensive-fusion block as one\n"
          "                     kernel or as its stages' kernels), r|tile (the fused intensive-fusion\n"
          "                     kernel's output rows per band)\n"
          "  --fit-data FILE    per mini-subgraph: Eq. 1's product, operators, schedules explored\n"
          "                     until the best stopped improving (scripts/partition_fit.sh)\n");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Summary statistics of the subgraph weights w[n] (AGO §VI-B, Fig. 14). */
typedef struct {
  double mean, median, jain, min, max;
} wstats;

static wstats weight_stats(const double *w, int n, double *sorted) {
  wstats s = {0};
  if (n == 0) return s;
  double sum = 0, sq = 0;
  for (int k = 0; k < n; k++) { sum += w[k]; sq += w[k] * w[k]; sorted[k] = w[k]; }
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
  s.mean = sum / n;
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.jain = sq > 0 ? sum * sum / (n * sq) : 0; /* Jain's fairness index (1 = all equal) */
  s.min = sorted[0];
  s.max = sorted[n - 1];
  return s;
}

/* A double as JSON (null for a non-finite value). */
static void jnum(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
  else fprintf(f, "null");
}

/* Write the report into rep (opened by the caller: stderr for "-", else an ecg_out whose
 * commit renames it into place). */
static int write_report(ecg_out *rep, double ms, ecg_sizes before, size_t sub_before, ecg_sizes after, const ecg_graph *g,
                        const char *strategy, const pt_weights *w, double td, const pt_cluster_stats *st, int max_complex,
                        const pt_tune_stats *ts, const pt_tune_opts *to, ecg_err *e) {
  int n = (int)g->n_subgraphs;
  double *wt = malloc(((size_t)n + 1) * sizeof *wt), *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
  if (!wt || !sorted) {
    free(wt); free(sorted);
    if (rep->f != stderr) ecg_out_abort(rep);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  for (int k = 0; k < n; k++) wt[k] = g->subgraphs[k]->weight;
  wstats s = weight_stats(wt, n, sorted);
  FILE *f = rep->f;
  fprintf(f, "{\"stage\": \"ecg-partition\", \"version\": \"%s\", \"time_ms\": %.3f, ", ECG_VERSION_STRING, ms);
  ecg_sizes_json(f, "before", before);
  fprintf(f, ", ");
  ecg_sizes_json(f, "after", after);
  fprintf(f, ", \"partition\": {\"strategy\": \"%s\", \"weights_file\": \"%s\", \"fitted\": %s, \"c\": ", strategy, w->source,
          w->fitted ? "true" : "false");
  jnum(f, w->c);
  fprintf(f, ", \"b\": ");
  jnum(f, w->b);
  fprintf(f, ", \"max_weight\": ");
  jnum(f, td);
  fprintf(f, ", \"subgraphs_before\": %zu, \"subgraphs\": %d, \"merges\": %d, \"iterations\": %d, "
             "\"max_complex_per_subgraph\": %d, \"weights\": [",
          sub_before, n, st->merges, st->iterations, max_complex);
  for (int k = 0; k < n; k++) { fprintf(f, "%s", k ? ", " : ""); jnum(f, wt[k]); }
  /* AGO Fig. 14: bin k counts weights in [2^k, 2^(k+1)); weights <= 0 counted apart */
  fprintf(f, "], \"histogram_log2\": [");
  int lo = 0, hi = -1, nonpos = 0;
  for (int k = 0; k < n; k++) {
    if (wt[k] <= 0) { nonpos++; continue; }
    int bin = (int)floor(log2(wt[k]));
    if (hi < lo) lo = hi = bin;
    if (bin < lo) lo = bin;
    if (bin > hi) hi = bin;
  }
  for (int b = lo; b <= hi; b++) {
    int c = 0;
    for (int k = 0; k < n; k++) c += wt[k] > 0 && (int)floor(log2(wt[k])) == b;
    fprintf(f, "%s{\"bin\": %d, \"lo\": ", b > lo ? ", " : "", b);
    jnum(f, ldexp(1, b));
    fprintf(f, ", \"hi\": ");
    jnum(f, ldexp(1, b + 1));
    fprintf(f, ", \"count\": %d}", c);
  }
  fprintf(f, "], \"nonpositive\": %d, \"mean_weight\": ", nonpos);
  jnum(f, s.mean);
  fprintf(f, ", \"median_weight\": ");
  jnum(f, s.median);
  fprintf(f, ", \"min_weight\": ");
  jnum(f, s.min);
  fprintf(f, ", \"max_weight_seen\": ");
  jnum(f, s.max);
  fprintf(f, ", \"jain\": ");
  jnum(f, s.jain);
  if (ts)
    fprintf(f, ", \"tune\": {\"budget\": %d, \"explored\": %d, \"measured\": %d, \"from_log\": %d, \"refused\": %d, \"confirm\": %d, \"confirm_runs\": %d, \"confirmed\": %d, \"rejected_as_noise\": %d, \"seconds\": %.3f, "
               "\"subgraphs\": %d, \"mini_subgraphs\": %d, \"blocks_scheduled\": %d, \"intensive_on\": %d, \"intensive_off\": %d, "
               "\"no_intensive\": %s, \"no_reformer\": %s, \"tune_in\": \"%s\", \"threads\": %d}",
            to->budget, ts->measured + ts->reused, ts->measured, ts->reused, ts->invalid, to->confirm, ts->confirm_runs, ts->confirmed,
            ts->rejected, ts->seconds, ts->subgraphs, ts->minis, ts->blocks_scheduled, ts->intensive_on, ts->intensive_off, to->no_intensive ? "true" : "false",
            to->no_reformer ? "true" : "false", to->in_subgraph ? "subgraph" : "model", to->threads);
  fprintf(f, "}}\n");
  free(wt);
  free(sorted);
  if (f == stderr) return ECG_OK;
  return ecg_out_commit(rep, e);
}

enum { OPT_STRATEGY = 1, OPT_MAX_WEIGHT, OPT_WEIGHTS, OPT_OUTPUT, OPT_REPORT, OPT_ZSTD, OPT_VERBOSE, OPT_QUIET, OPT_HELP, OPT_VERSION,
       OPT_SWEEPS, OPT_POINTS, OPT_EOP, OPT_PROFILES, OPT_CM, OPT_OBJECTIVE, OPT_SHARE, OPT_FOREIGN, OPT_BASELINE,
       OPT_TUNE, OPT_BUDGET, OPT_TIMEOUT, OPT_TUNE_LOG, OPT_PATIENCE, OPT_CONFIRM, OPT_RUNS, OPT_WARMUP, OPT_THREADS, OPT_SEED, OPT_NO_INTENSIVE,
       OPT_NO_REFORMER, OPT_EMIT_CAND, OPT_MEASURE, OPT_FIT_DATA, OPT_SET_SCHED, OPT_TUNE_IN };

/* --set-schedule SPEC: "BLOCK:key=value,..." (BLOCK a block id or "all"; keys t|threads,
 * a|conv_algo (auto, gemm, gemm_t, winograd, blocked or 0..4), v|vector_width, u|unroll,
 * i|intensive_fusion (auto, on, off or 0..2), r|tile (an intensive-fusion kernel's output
 * rows per band; 0 none)) applied to g's blocks, replacing their schedules. The values are
 * checked by the validator after. */
static int set_schedule(ecg_graph *g, const char *spec, ecg_err *e) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", spec);
  char *colon = strchr(buf, ':');
  if (!colon) return ecg_errf(e, ECG_ERR_USAGE, "--set-schedule '%s': expected BLOCK:key=value,... (try --help)", spec);
  *colon = 0;
  long lo = 0, hi = (long)g->n_blocks - 1;
  if (strcmp(buf, "all")) {
    char *end;
    lo = hi = strtol(buf, &end, 10);
    if (*end || end == buf || lo < 0 || lo >= (long)g->n_blocks)
      return ecg_errf(e, ECG_ERR_INPUT, "--set-schedule '%s': no block '%s' (the graph has %zu blocks)", spec, buf, g->n_blocks);
  }
  int k[6] = {0, 0, 0, 0, 0, 0}; /* threads, conv_algo, vector_width, unroll, intensive_fusion, tile */
  for (char *kv = strtok(colon + 1, ","); kv; kv = strtok(NULL, ",")) {
    char *eq = strchr(kv, '=');
    if (!eq) return ecg_errf(e, ECG_ERR_USAGE, "--set-schedule '%s': '%s' is not key=value", spec, kv);
    *eq++ = 0;
    int which = !strcmp(kv, "t") || !strcmp(kv, "threads") ? 0 : !strcmp(kv, "a") || !strcmp(kv, "conv_algo") ? 1
              : !strcmp(kv, "v") || !strcmp(kv, "vector_width") ? 2 : !strcmp(kv, "u") || !strcmp(kv, "unroll") ? 3
              : !strcmp(kv, "i") || !strcmp(kv, "intensive_fusion") ? 4 : !strcmp(kv, "r") || !strcmp(kv, "tile") ? 5 : -1;
    if (which < 0) return ecg_errf(e, ECG_ERR_USAGE, "--set-schedule '%s': unknown knob '%s' (threads, conv_algo, vector_width, unroll, intensive_fusion, tile)", spec, kv);
    char *end;
    long v = strtol(eq, &end, 10);
    if (which == 1 && (*end || end == eq))
      for (v = 0; v < ECG_CONV_ALGO_COUNT && strcmp(eq, ecg_conv_algo_name((int)v)); v++) {}
    else if (which == 4 && (*end || end == eq))
      for (v = 0; v < ECG_INTENSIVE_COUNT && strcmp(eq, ecg_intensive_name((int)v)); v++) {}
    else if (*end || end == eq) return ecg_errf(e, ECG_ERR_USAGE, "--set-schedule '%s': '%s' is not an integer", spec, eq);
    if (which == 1 && v == ECG_CONV_ALGO_COUNT) return ecg_errf(e, ECG_ERR_USAGE, "--set-schedule '%s': conv_algo '%s' (auto, gemm, gemm_t, winograd, blocked)", spec, eq);
    if (which == 4 && v == ECG_INTENSIVE_COUNT) return ecg_errf(e, ECG_ERR_USAGE, "--set-schedule '%s': intensive_fusion '%s' (auto, on, off)", spec, eq);
    k[which] = (int)v;
  }
  for (long b = lo; b <= hi; b++) {
    const int64_t tile = k[5];
    if (ecg_block_set_schedule(g, (int)b, &tile, tile ? 1 : 0, k[2], k[3], false) != ECG_OK) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    g->blocks[b]->schedule->threads = k[0];
    g->blocks[b]->schedule->conv_algo = k[1];
    g->blocks[b]->schedule->intensive_fusion = k[4];
  }
  return ECG_OK;
}

/* An integer option value in [lo, hi] into *v; 0, or -1 (the caller reports usage). */
static int int_opt(const char *val, long lo, long hi, int *v) {
  char *end;
  long x = strtol(val, &end, 10);
  if (*end || end == val || x < lo || x > hi) return -1;
  *v = (int)x;
  return 0;
}

/* --emit-sweeps DIR: the one-node ECGs and DIR/index.tsv (written under a temporary
 * name and renamed, so an index never lists files that were not written). */
static int emit_sweeps(const ecg_graph *g, const char *dir, int points, int verbose, ecg_err *e) {
  char idx[4200], tmp[4300];
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", dir, strerror(errno));
  snprintf(idx, sizeof idx, "%s/index.tsv", dir);
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", idx, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", tmp, strerror(errno));
  int written = 0, rc = pt_emit_sweeps(g, dir, points, f, &written, e);
  if (fclose(f) != 0 && !rc) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", tmp, strerror(errno));
  if (!rc && rename(tmp, idx) != 0) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", idx, strerror(errno));
  if (rc) remove(tmp);
  else if (verbose) fprintf(stderr, PROG ": %d one-node ECGs in %s (index.tsv)\n", written, dir);
  return rc;
}

int main(int argc, char **argv) {
  static const cli_opt opts[] = {
      {"strategy", 0, 1, OPT_STRATEGY}, {"max-weight", 0, 1, OPT_MAX_WEIGHT}, {"weights", 0, 1, OPT_WEIGHTS},
      {"output", 'o', 1, OPT_OUTPUT},   {"report", 0, 1, OPT_REPORT},         {"zstd", 0, 0, OPT_ZSTD},
      {"verbose", 'v', 0, OPT_VERBOSE}, {"help", 'h', 0, OPT_HELP},           {"version", 0, 0, OPT_VERSION},
      {"quiet", 'q', 0, OPT_QUIET},     {"emit-sweeps", 0, 1, OPT_SWEEPS},    {"points", 0, 1, OPT_POINTS},
      {"eop", 0, 0, OPT_EOP},           {"profiles", 0, 1, OPT_PROFILES},     {"cm", 0, 1, OPT_CM},
      {"objective", 0, 1, OPT_OBJECTIVE}, {"share", 0, 1, OPT_SHARE}, {"foreign-profiles", 0, 0, OPT_FOREIGN},
      {"baseline", 0, 1, OPT_BASELINE}, {"tune", 0, 0, OPT_TUNE}, {"budget", 0, 1, OPT_BUDGET},
      {"timeout", 0, 1, OPT_TIMEOUT},   {"tune-log", 0, 1, OPT_TUNE_LOG},     {"patience", 0, 1, OPT_PATIENCE},
      {"confirm", 0, 1, OPT_CONFIRM},
      {"runs", 0, 1, OPT_RUNS},         {"warmup", 0, 1, OPT_WARMUP},         {"threads", 0, 1, OPT_THREADS},
      {"seed", 0, 1, OPT_SEED},         {"no-intensive", 0, 0, OPT_NO_INTENSIVE}, {"no-reformer", 0, 0, OPT_NO_REFORMER},
      {"emit-candidates", 0, 1, OPT_EMIT_CAND}, {"measure", 0, 1, OPT_MEASURE}, {"fit-data", 0, 1, OPT_FIT_DATA},
      {"set-schedule", 0, 1, OPT_SET_SCHED}, {"tune-in", 0, 1, OPT_TUNE_IN},
      {0, 0, 0, 0}};
  const char *set_sched[16];
  int n_set = 0;
  pt_tune_opts to = {.budget = 100, .patience = 4, .confirm = 2, .runs = 10, .warmup = 2, .threads = 1, .seed = 1};
  int tune = 0, seed = 1, tune_in = 0;
  const char *measure = NULL;
  double share = -1;
  const char *sweeps = NULL;
  int points = 6, eop = 0, n_prof = 0;
  pt_eop_opts eo = {.cm = 0.05, .objective = EOP_MAKESPAN, .placed = EOP_EOP};
  const char *out = "-", *in = "-", *report = NULL, *weights_path = NULL, *strategy = "ago", *val;
  pt_strategy strat = PT_AGO;
  double td = -1;
  int verbose = 0, have_in = 0, zstd = 0, c;
  ecg_err e = {0};
  cli cl;
  cli_init(&cl, argc, argv, opts);
  while ((c = cli_next(&cl, &val, &e)) != CLI_END) {
    switch (c) {
    case CLI_ERROR: usage(stderr); return cli_fail(PROG, e.code, e.msg);
    case CLI_POSITIONAL:
      if (have_in++) return cli_fail(PROG, ECG_ERR_USAGE, "more than one input file (try --help)");
      in = val;
      break;
    case OPT_STRATEGY:
      strategy = val;
      if (!strcmp(val, "ago")) strat = PT_AGO;
      else if (!strcmp(val, "relay")) strat = PT_RELAY;
      else {
        char msg[300];
        snprintf(msg, sizeof msg, "--strategy '%.200s': unknown strategy (known: ago, relay) (try --help)", val);
        return cli_fail(PROG, ECG_ERR_USAGE, msg);
      }
      break;
    case OPT_MAX_WEIGHT: {
      char *end;
      td = strtod(val, &end);
      if (*end || !(td > 0) || !isfinite(td)) return cli_fail(PROG, ECG_ERR_USAGE, "--max-weight expects a number > 0 (try --help)");
      break;
    }
    case OPT_WEIGHTS: weights_path = val; break;
    case OPT_SWEEPS: sweeps = val; break;
    case OPT_POINTS: {
      char *end;
      long v = strtol(val, &end, 10);
      if (*end || end == val || v < 1 || v > 64) return cli_fail(PROG, ECG_ERR_USAGE, "--points expects an integer 1..64 (try --help)");
      points = (int)v;
      break;
    }
    case OPT_EOP: eop = 1; break;
    case OPT_PROFILES:
      if (n_prof == 2) return cli_fail(PROG, ECG_ERR_USAGE, "--profiles given more than twice (the CPU's, the device's)");
      eo.profiles[n_prof++] = val;
      break;
    case OPT_CM: {
      char *end;
      eo.cm = strtod(val, &end);
      if (*end || end == val || !(eo.cm >= 0) || !isfinite(eo.cm)) return cli_fail(PROG, ECG_ERR_USAGE, "--cm expects a time in ms >= 0 (try --help)");
      break;
    }
    case OPT_OBJECTIVE:
      if (!strcmp(val, "sum")) eo.objective = EOP_SUM;
      else if (!strcmp(val, "makespan")) eo.objective = EOP_MAKESPAN;
      else return cli_fail(PROG, ECG_ERR_USAGE, "--objective expects makespan or sum (try --help)");
      break;
    case OPT_FOREIGN: eo.foreign = true; break;
    case OPT_BASELINE: {
      int k = -1;
      for (int st = 0; st < EOP_N_STRATEGIES; st++)
        if (!strcmp(val, eop_strategy_name((eop_strategy)st))) k = st;
      if (k < 0) return cli_fail(PROG, ECG_ERR_USAGE, "--baseline expects cpu-only, device-only, equal, fixed or eop (try --help)");
      eo.placed = (eop_strategy)k;
      break;
    }
    case OPT_SHARE: {
      char *end;
      share = strtod(val, &end);
      if (*end || end == val || !(share >= 0 && share <= 1)) return cli_fail(PROG, ECG_ERR_USAGE, "--share expects a CPU share in [0, 1] (try --help)");
      break;
    }
    case OPT_TUNE: tune = 1; break;
    case OPT_BUDGET: if (int_opt(val, 1, 100000000, &to.budget)) return cli_fail(PROG, ECG_ERR_USAGE, "--budget expects a number of measurements >= 1 (try --help)"); break;
    case OPT_PATIENCE: if (int_opt(val, 1, 100000, &to.patience)) return cli_fail(PROG, ECG_ERR_USAGE, "--patience expects an integer >= 1 (try --help)"); break;
    case OPT_CONFIRM: if (int_opt(val, 0, 100, &to.confirm)) return cli_fail(PROG, ECG_ERR_USAGE, "--confirm expects an integer 0..100 (try --help)"); break;
    case OPT_RUNS: if (int_opt(val, 1, 100000, &to.runs)) return cli_fail(PROG, ECG_ERR_USAGE, "--runs expects an integer >= 1 (try --help)"); break;
    case OPT_WARMUP: if (int_opt(val, 0, 100000, &to.warmup)) return cli_fail(PROG, ECG_ERR_USAGE, "--warmup expects an integer >= 0 (try --help)"); break;
    case OPT_THREADS: if (int_opt(val, 1, 1024, &to.threads)) return cli_fail(PROG, ECG_ERR_USAGE, "--threads expects an integer 1..1024 (try --help)"); break;
    case OPT_SEED: if (int_opt(val, 0, 2147483647, &seed)) return cli_fail(PROG, ECG_ERR_USAGE, "--seed expects an integer >= 0 (try --help)"); to.seed = (unsigned)seed; break;
    case OPT_TIMEOUT: {
      char *end;
      to.timeout = strtod(val, &end);
      if (*end || end == val || !(to.timeout > 0) || !isfinite(to.timeout)) return cli_fail(PROG, ECG_ERR_USAGE, "--timeout expects seconds > 0 (try --help)");
      break;
    }
    case OPT_TUNE_LOG: to.log = val; break;
    case OPT_NO_INTENSIVE: to.no_intensive = true; break;
    case OPT_NO_REFORMER: to.no_reformer = true; break;
    case OPT_TUNE_IN:
      if (!strcmp(val, "model")) to.in_subgraph = false;
      else if (!strcmp(val, "subgraph")) to.in_subgraph = true;
      else return cli_fail(PROG, ECG_ERR_USAGE, "--tune-in expects model or subgraph (try --help)");
      tune_in = 1;
      break;
    case OPT_EMIT_CAND: to.emit_dir = val; break;
    case OPT_MEASURE: measure = val; break;
    case OPT_FIT_DATA: to.fit_out = val; break;
    case OPT_SET_SCHED:
      if (n_set == 16) return cli_fail(PROG, ECG_ERR_USAGE, "--set-schedule given more than 16 times");
      set_sched[n_set++] = val;
      break;
    case OPT_OUTPUT: out = val; break;
    case OPT_REPORT: report = val; break;
    case OPT_ZSTD: zstd = 1; break;
    case OPT_VERBOSE: verbose = 1; break;
    case OPT_QUIET: verbose = 0; break; /* nothing but errors and -v lines to silence */
    case OPT_HELP: usage(stdout); return 0;
    case OPT_VERSION: printf(PROG " %s\n", ECG_VERSION_STRING); return 0;
    }
  }
  if (measure) { /* one candidate, timed; its tuning-log line on stdout */
    if (have_in || tune || eop || sweeps) return cli_fail(PROG, ECG_ERR_USAGE, "--measure FILE takes no other input or mode (try --help)");
    int rc = pt_measure_file(measure, &to, stdout, &e);
    if (rc) fprintf(stderr, PROG ": %s\n", e.msg);
    return rc;
  }
  if (!tune && (to.log || to.emit_dir || to.fit_out || to.no_intensive || to.no_reformer || tune_in))
    return cli_fail(PROG, ECG_ERR_USAGE, "--tune-log, --emit-candidates, --fit-data, --no-intensive, --no-reformer and --tune-in go with --tune (try --help)");
  if (to.emit_dir && !to.in_subgraph)
    return cli_fail(PROG, ECG_ERR_USAGE, "--emit-candidates writes standalone subgraph candidates: it needs --tune-in subgraph (try --help)");
  if (tune && n_set) return cli_fail(PROG, ECG_ERR_USAGE, "--set-schedule and --tune exclude each other (the tuner chooses the schedules)");
  if (tune && (eop || sweeps)) return cli_fail(PROG, ECG_ERR_USAGE, "--tune excludes --eop and --emit-sweeps");
  if (!strcmp(in, "-") && isatty(fileno(stdin))) {
    fprintf(stderr, PROG ": no input (pipe an ECG in or name a file)\n");
    usage(stderr);
    return 2;
  }
  if (share >= 0 && (!eop || n_prof)) return cli_fail(PROG, ECG_ERR_USAGE, "--share goes with --eop, instead of --profiles (try --help)");
  if (eop && n_prof != 2 && share < 0) return cli_fail(PROG, ECG_ERR_USAGE, "--eop needs --profiles CPU.jsonl --profiles DEVICE.jsonl (try --help)");
  if (eop && sweeps) return cli_fail(PROG, ECG_ERR_USAGE, "--eop and --emit-sweeps exclude each other");
  if (eo.placed != EOP_EOP && !n_prof) return cli_fail(PROG, ECG_ERR_USAGE, "--baseline goes with --eop --profiles (try --help)");
  if (eo.foreign && !n_prof) return cli_fail(PROG, ECG_ERR_USAGE, "--foreign-profiles goes with --eop --profiles (try --help)");
  if (!eop && n_prof) return cli_fail(PROG, ECG_ERR_USAGE, "--profiles is for --eop (try --help)");
  if (eop || sweeps) { /* the EOP modes: --emit-sweeps writes no ECG; --eop writes it with placements */
    ecg_graph *g = NULL;
    int rc = ecg_read_path(in, &g, &e);
    if (!rc) rc = ecg_validate(g, &e);
    if (!rc && sweeps) rc = emit_sweeps(g, sweeps, points, verbose, &e);
    if (!rc && eop) {
      /* the ECG with the placements on stdout (or -o); the plan as JSON in --report FILE
       * ("-": stderr), written to a temporary name first so a failure leaves neither */
      ecg_out rep = {.f = NULL};
      FILE *sink = NULL;
      if (report && strcmp(report, "-")) rc = ecg_out_open(&rep, report, &e);
      else if (report) rep.f = stderr;
      else rc = (sink = fopen("/dev/null", "w")) ? ECG_OK : ecg_errf(&e, ECG_ERR_INTERNAL, "/dev/null: %s", strerror(errno));
      if (!rc) rc = share >= 0 ? pt_eop_force(g, share, rep.f ? rep.f : sink, &e) : pt_eop_report(g, &eo, rep.f ? rep.f : sink, &e);
      if (!rc) rc = ecg_validate(g, &e);
      if (!rc) rc = ecg_write_path(out, g, zstd ? 3 : 0, &e);
      if (rep.f && rep.f != stderr) {
        if (rc) ecg_out_abort(&rep);
        else rc = ecg_out_commit(&rep, &e);
      }
      if (sink) fclose(sink);
      if (!rc && verbose) fprintf(stderr, PROG ": EOP placements for %zu nodes\n", g->n_placements);
    }
    if (rc) fprintf(stderr, PROG ": %s\n", e.msg);
    ecg_graph_free(g);
    return rc;
  }
  pt_weights w;
  int rc = pt_weights_load(weights_path, &w, &e);
  if (rc) { fprintf(stderr, PROG ": %s\n", e.msg); return rc; }
  if (td < 0) td = w.max_weight;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ecg_graph *g = NULL;
  rc = ecg_read_path(in, &g, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc) { fprintf(stderr, PROG ": %s\n", e.msg); ecg_graph_free(g); return rc; }
  ecg_sizes before = ecg_measure(g, true);
  size_t sub_before = g->n_subgraphs;
  pt_cluster_stats st = {0};
  int max_complex = 0;
  rc = pt_partition(g, strat, &w, td, &st, &max_complex, &e);
  if (rc == ECG_OK && (rc = ecg_validate(g, &e)) != ECG_OK) {
    char msg[sizeof e.msg];
    snprintf(msg, sizeof msg, "%s", e.msg);
    rc = ecg_errf(&e, ECG_ERR_INTERNAL, "the partition is invalid: %s", msg);
  }
  for (int i = 0; rc == ECG_OK && i < n_set; i++) rc = set_schedule(g, set_sched[i], &e);
  if (rc == ECG_OK && n_set && (rc = ecg_validate(g, &e)) != ECG_OK) rc = ECG_ERR_INPUT; /* a knob out of range: the validator's message names it */
  pt_tune_stats ts = {0};
  if (rc == ECG_OK && tune) {
    to.w = &w;
    to.verbose = verbose;
    rc = pt_tune(g, &to, &ts, &e);
    if (rc == ECG_OK && (rc = ecg_validate(g, &e)) != ECG_OK) {
      char msg[sizeof e.msg];
      snprintf(msg, sizeof msg, "%s", e.msg);
      rc = ecg_errf(&e, ECG_ERR_INTERNAL, "the tuned schedules are invalid: %s", msg);
    }
    if (rc == ECG_OK && to.emit_dir) {
      if (verbose) fprintf(stderr, PROG ": %d candidate ECGs in %s\n", ts.emitted, to.emit_dir);
      ecg_graph_free(g);
      return 0;
    }
    if (rc == ECG_OK && verbose)
      fprintf(stderr, PROG ": tune: %d schedules explored (%d measured, %d from the log, %d refused by ecg-lower) in %.1f s; %d blocks scheduled\n",
              ts.measured + ts.reused, ts.measured, ts.reused, ts.invalid, ts.seconds, ts.blocks_scheduled);
  }
  /* the report file is opened first, so a bad report path leaves no output ECG either */
  ecg_out rep = {.f = stderr};
  if (rc == ECG_OK && report && strcmp(report, "-")) rc = ecg_out_open(&rep, report, &e);
  if (rc == ECG_OK) rc = ecg_write_path(out, g, zstd ? 3 : 0, &e);
  if (rc) {
    fprintf(stderr, PROG ": %s\n", e.msg);
    if (rep.f != stderr) ecg_out_abort(&rep);
    ecg_graph_free(g);
    return rc;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  ecg_sizes after = ecg_measure(g, true);
  if (report &&
      (rc = write_report(&rep, ms, before, sub_before, after, g, strategy, &w, strat == PT_RELAY ? INFINITY : td, &st, max_complex,
                                 tune ? &ts : NULL, &to, &e))) {
    fprintf(stderr, PROG ": %s\n", e.msg);
    ecg_graph_free(g);
    return rc;
  }
  if (verbose) {
    double sum = 0;
    for (size_t k = 0; k < g->n_subgraphs; k++) sum += g->subgraphs[k]->weight;
    fprintf(stderr, PROG ": %s: %zu nodes -> %zu subgraphs (%d merges), mean weight %.1f, Td %g%s\n", strategy, g->n_nodes,
            g->n_subgraphs, st.merges, g->n_subgraphs ? sum / (double)g->n_subgraphs : 0.0, strat == PT_RELAY ? INFINITY : td,
            w.fitted ? "" : " (unfitted weights)");
  }
  ecg_graph_free(g);
  return 0;
}
