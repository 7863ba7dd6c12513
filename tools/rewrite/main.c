/* ecg-rewrite: graph rewriting passes over an ECG (DNNFusion, Niu dissertation §3.4.2).
 * Reads an ECG (FILE or stdin), runs the named passes in order, writes the rewritten ECG
 * (-o FILE or stdout).  Exit: 0 done, 1 invalid input, 2 usage, 3 internal error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ecg_measure.h"
#include "rewrite.h"
#include "subst.h"

#define MAX_RUN 32 /* passes in one --passes list */

static void usage(FILE *f) {
  size_t n;
  const rw_pass *p = rw_passes(&n);
  fprintf(f,
          "usage: ecg-rewrite [options] [FILE.ecg|-]\n"
          "Rewrite an ECG with semantics-preserving passes (run in the order given).\n"
          "  --passes LIST        comma-separated pass names (default: all, in the order below)\n");
  for (size_t i = 0; i < n; i++) fprintf(f, "      %-10s %s\n", p[i].name, p[i].help);
  sg_usage(f);
  fprintf(f,
          "  --rules FILE         math: add the rules of FILE (repeatable; format: tools/rewrite/rules/)\n"
          "  --list-rules         print every rule (built-in and --rules), one a line with its class\n"
          "  --fold-max-bytes N   fold: largest constant a folded node may write (default 1048576)\n"
          "  --timeout SECONDS    start no further pass after SECONDS (--budget is the same; subst: per algorithm)\n"
          "  --print-after        one line per pass on stderr: nodes, FLOPs, what fired\n"
          "  --report FILE        JSON report (- = stderr)\n"
          "  -o, --output FILE    output ECG (default stdout)\n"
          "  --zstd               compress the output\n"
          "  -q, --quiet          errors only on stderr (no notes)\n"
          "  -v, --verbose        a one-line summary on stderr\n"
          "  -h, --help           this help\n"
          "  --version            print the version\n");
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* What one pass run did, for --print-after and the report. */
typedef struct {
  const rw_pass *pass;
  rw_stats st;
  double ms;
  ecg_sizes after;
} pass_run;

/* Split LIST at commas into passes; exit-code style return (0 or 2). */
static int parse_passes(const char *list, const rw_pass **out, int *n) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  *n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    const rw_pass *p = rw_pass_find(tok);
    if (!p) { fprintf(stderr, "ecg-rewrite: unknown pass '%s' (known: %s)\n", tok, rw_pass_names()); return 2; }
    if (*n == MAX_RUN) { fprintf(stderr, "ecg-rewrite: more than %d passes\n", MAX_RUN); return 2; }
    out[(*n)++] = p;
  }
  if (*n == 0) { fprintf(stderr, "ecg-rewrite: --passes names no pass (known: %s)\n", rw_pass_names()); return 2; }
  return 0;
}

/* Node indices change under the passes: fusion blocks cannot stay valid, so they go
 * (ecg-fuse runs after ecg-rewrite). Returns how many were dropped. */
static size_t drop_blocks(ecg_graph *g) {
  size_t n = g->n_blocks;
  for (size_t i = 0; i < g->n_blocks; i++) protobuf_c_message_free_unpacked(&g->blocks[i]->base, NULL);
  free(g->blocks);
  g->blocks = NULL;
  g->n_blocks = 0;
  for (size_t i = 0; i < g->n_nodes; i++) g->nodes[i]->fusion_block = -1;
  return n;
}


static void print_counters(FILE *f, const rw_stats *st) {
  fprintf(f, "{");
  for (int c = 0; c < st->n_counters; c++)
    fprintf(f, "%s\"%s\": %d", c ? ", " : "", st->counters[c].name, st->counters[c].count);
  fprintf(f, "}");
}

static int write_report(const char *path, double ms, ecg_sizes before, ecg_sizes after, const pass_run *runs,
                        int n_runs, size_t blocks_dropped, int skipped) {
  FILE *f = !strcmp(path, "-") ? stderr : fopen(path, "w");
  if (!f) { perror(path); return 1; }
  int fired = 0;
  for (int i = 0; i < n_runs; i++) fired += runs[i].st.fired;
  fprintf(f, "{\"stage\": \"ecg-rewrite\", \"version\": \"%s\", \"time_ms\": %.3f, ", ECG_VERSION_STRING, ms);
  ecg_sizes_json(f, "before", before);
  fprintf(f, ", ");
  ecg_sizes_json(f, "after", after);
  fprintf(f, ", \"rewrite\": {\"fired\": %d, \"blocks_dropped\": %zu, \"passes_skipped\": %d, \"passes\": [", fired,
          blocks_dropped, skipped);
  for (int i = 0; i < n_runs; i++) {
    fprintf(f, "%s{\"name\": \"%s\", \"time_ms\": %.3f, \"fired\": %d, \"rules\": ", i ? ", " : "", runs[i].pass->name,
            runs[i].ms, runs[i].st.fired);
    print_counters(f, &runs[i].st);
    fprintf(f, ", ");
    ecg_sizes_json(f, "after", runs[i].after);
    fprintf(f, "}");
  }
  fprintf(f, "]");
  sg_report_json(f);
  fprintf(f, "}}\n");
  if (f != stderr && fclose(f) != 0) { perror(path); return 1; }
  return 0;
}

/* Run the passes over g; fills runs, *skipped (passes not started: --timeout).
 * Returns ECG_OK or the error of the failing pass (its message in e). */
static int run_passes(ecg_graph *g, const rw_pass **list, int n, const rw_opts *o, double timeout_s, bool print_after,
                      pass_run *runs, int *skipped, ecg_err *e) {
  double start = now_ms();
  ecg_sizes prev = ecg_measure(g, false);
  for (int i = 0; i < n; i++) {
    if (timeout_s > 0 && now_ms() - start > timeout_s * 1e3) {
      *skipped = n - i;
      fprintf(stderr, "ecg-rewrite: --timeout %.3g s reached, %d pass(es) not run\n", timeout_s, *skipped);
      return ECG_OK;
    }
    pass_run *r = &runs[i];
    r->pass = list[i];
    double t0 = now_ms();
    int rc = list[i]->run(g, o, &r->st, e);
    if (rc == ECG_OK) rc = ecg_topo_sort(g, e);
    if (rc != ECG_OK) return rc;
    if (ecg_validate(g, e) != ECG_OK) {
      char msg[sizeof e->msg];
      snprintf(msg, sizeof msg, "%s", e->msg);
      return ecg_errf(e, ECG_ERR_INTERNAL, "pass '%s' left an invalid graph: %s", list[i]->name, msg);
    }
    r->ms = now_ms() - t0;
    r->after = ecg_measure(g, false);
    if (print_after) {
      fprintf(stderr, "ecg-rewrite: after %-8s %zu nodes (%+ld), %.3f GFLOPs (%+lld), fired %d ", list[i]->name,
              r->after.nodes, (long)r->after.nodes - (long)prev.nodes, r->after.flops / 1e9,
              (long long)(r->after.flops - prev.flops), r->st.fired);
      print_counters(stderr, &r->st);
      fprintf(stderr, ", %.1f ms\n", r->ms);
    }
    prev = r->after;
  }
  return ECG_OK;
}

/* The command line (main's body); every rule rw_rules_*() appends to *rules is freed by
 * main() whatever this returns (no leak on the early usage exits). */
static int rewrite_main(int argc, char **argv, rw_rules *rules, sg_opts *so) {
  const char *out = "-", *in = "-", *report = NULL;
  const rw_pass *list[MAX_RUN];
  int n_list = 0, verbose = 0, quiet = 0, have_in = 0, zstd = 0, print_after = 0;
  double timeout_s = 0;
  rw_opts o = {.fold_max_bytes = 1u << 20, .search = so};
  int list_rules = 0;
  ecg_err e = {0};
  if (rw_rules_builtin(rules, &e) != ECG_OK) { fprintf(stderr, "ecg-rewrite: built-in rules: %s\n", e.msg); return 3; }
  o.rules = rules;
  size_t n_all;
  const rw_pass *all = rw_passes(&n_all);
  for (size_t i = 0; i < n_all; i++)
    if (all[i].by_default) list[n_list++] = &all[i];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
    if (!strcmp(a, "--version")) { printf("ecg-rewrite %s\n", ECG_VERSION_STRING); return 0; }
    if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) { verbose = 1; quiet = 0; continue; }
    if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) { quiet = 1; verbose = 0; continue; }
    if (!strcmp(a, "--zstd")) { zstd = 1; continue; }
    if (!strcmp(a, "--print-after")) { print_after = 1; continue; }
    if (!strcmp(a, "--list-rules")) { list_rules = 1; continue; }
    int src = sg_option(so, argc, argv, &i);
    if (src >= 0) { if (src) return src; continue; }
    if (!strcmp(a, "--passes") || !strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--report") ||
        !strcmp(a, "--fold-max-bytes") || !strcmp(a, "--timeout") || !strcmp(a, "--budget") || !strcmp(a, "--rules")) {
      if (i + 1 >= argc || !argv[i + 1][0]) { fprintf(stderr, "ecg-rewrite: option '%s' needs a value\n", a); return 2; }
      const char *v = argv[++i];
      char *end;
      if (!strcmp(a, "--report")) report = v;
      else if (!strcmp(a, "--rules")) {
        int rc = rw_rules_load(rules, v, &e);
        if (rc) { fprintf(stderr, "ecg-rewrite: %s\n", e.msg); rw_rules_free(rules); return rc; }
      }
      else if (!strcmp(a, "--passes")) { if (parse_passes(v, list, &n_list)) return 2; }
      else if (!strcmp(a, "--fold-max-bytes")) {
        long long b = strtoll(v, &end, 10);
        if (*end || b < 0) { fprintf(stderr, "ecg-rewrite: --fold-max-bytes expects a byte count >= 0\n"); return 2; }
        o.fold_max_bytes = (size_t)b;
      } else if (!strcmp(a, "--timeout") || !strcmp(a, "--budget")) {
        timeout_s = strtod(v, &end);
        if (*end || timeout_s <= 0) { fprintf(stderr, "ecg-rewrite: %s expects seconds > 0\n", a); return 2; }
      } else out = v;
      continue;
    }
    if (a[0] == '-' && a[1]) { fprintf(stderr, "ecg-rewrite: unknown option '%s'\n", a); usage(stderr); return 2; }
    if (have_in++) { fprintf(stderr, "ecg-rewrite: more than one input file\n"); return 2; }
    in = a;
  }
  so->budget_s = timeout_s;
  so->verbose = verbose;
  if (so->n_algos && n_list < MAX_RUN) {
    int k = 0;
    while (k < n_list && list[k]->run != rw_subst) k++;
    if (k == n_list) list[n_list++] = rw_pass_find("subst"); /* --search implies the subst pass */
  }
  if (list_rules) {
    for (int k = 0; k < rules->n; k++) printf("%-5s %-20s %s\n", rules->v[k].cls, rules->v[k].name, rules->v[k].text);
    rw_rules_free(rules);
    return 0;
  }
  if (!strcmp(in, "-") && isatty(fileno(stdin))) {
    fprintf(stderr, "ecg-rewrite: no input (pipe an ECG in or name a file)\n");
    usage(stderr);
    return 2;
  }
  if (!strcmp(out, "-") && isatty(fileno(stdout))) {
    fprintf(stderr, "ecg-rewrite: refusing to write a binary ECG to a terminal (use -o FILE or a pipe)\n");
    return 2;
  }
  double t0 = now_ms();
  ecg_graph *g = NULL;
  int rc = ecg_read_path(in, &g, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc != ECG_OK) { fprintf(stderr, "ecg-rewrite: %s\n", e.msg); ecg_graph_free(g); rw_rules_free(rules); return rc; }
  size_t dropped = drop_blocks(g);
  if (dropped) cli_note("ecg-rewrite", quiet, "%zu fusion block(s) dropped (node ids change; run ecg-fuse after ecg-rewrite)", dropped);
  size_t sub_dropped = ecg_subgraphs_clear(g);
  if (sub_dropped)
    cli_note("ecg-rewrite", quiet, "%zu partition subgraph(s) dropped (passes add nodes; run ecg-partition after ecg-rewrite)", sub_dropped);
  if (g->n_sparse_convs) { /* weights may change (bnfold): the FKW copies could not stay valid */
    cli_note("ecg-rewrite", quiet, "%zu pattern annotation(s) dropped (weights may change; run ecg-prune after ecg-rewrite)", g->n_sparse_convs);
    ecg_sparse_remap(g, NULL, 0);
  }
  ecg_sizes before = ecg_measure(g, false);
  pass_run runs[MAX_RUN];
  memset(runs, 0, sizeof runs);
  int skipped = 0;
  rc = run_passes(g, list, n_list, &o, timeout_s, print_after, runs, &skipped, &e);
  /* the passes re-infer shapes (numbers only): RDP gives symbolic dims their expressions again */
  if (rc == ECG_OK) rc = ecg_rdp_run(g, NULL, &e);
  if (rc == ECG_OK) rc = ecg_write_path(out, g, zstd ? 3 : 0, &e);
  if (rc != ECG_OK) { fprintf(stderr, "ecg-rewrite: %s\n", e.msg); ecg_graph_free(g); rw_rules_free(rules); return rc; }
  ecg_sizes after = ecg_measure(g, false);
  int n_runs = n_list - skipped, fired = 0;
  for (int i = 0; i < n_runs; i++) fired += runs[i].st.fired;
  if (report && write_report(report, now_ms() - t0, before, after, runs, n_runs, dropped, skipped)) {
    ecg_graph_free(g);
    rw_rules_free(rules);
    return 1;
  }
  if (verbose)
    fprintf(stderr, "ecg-rewrite: %d pass(es), %d rewrite(s): %zu -> %zu nodes, %.3f -> %.3f GFLOPs\n", n_runs, fired,
            before.nodes, after.nodes, before.flops / 1e9, after.flops / 1e9);
  ecg_graph_free(g);
  rw_rules_free(rules);
  return 0;
}

int main(int argc, char **argv) {
  rw_rules rules = {0};
  sg_opts so;
  sg_opts_init(&so);
  int rc = rewrite_main(argc, argv, &rules, &so);
  rw_rules_free(&rules);
  sg_opts_free(&so);
  return rc;
}
