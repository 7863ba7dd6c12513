/* ecg-prune: PatDNN pattern and connectivity pruning of an ECG (Niu dissertation ch. 2).
 * Reads an ECG (FILE or stdin), writes it with pruned weights and pattern annotations
 * (-o FILE or stdout); --export-onnx writes the pruned model as ONNX, --report a JSON
 * report in the project envelope. */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ecg_measure.h"
#include "prune.h"

#define PROG "ecg-prune"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ecg-prune [options] [FILE.ecg|-]\n"
          "PatDNN pruning (no retraining: weights are only projected): each 3x3 kernel of a\n"
          "group-1 Conv keeps the centre and 3 more taps, the best of the model's top-k natural\n"
          "patterns by L2 norm; every such Conv but the first keeps its kernels of largest L2\n"
          "norm (connectivity). Pruned layers carry a pattern annotation with their FKW arrays,\n"
          "and ecg-lower gives them sparse kernels.\n"
          "  --patterns K         size of the pattern set (default 8; 1..56)\n"
          "  --connectivity RATE  kernels per layer / kernels kept (default 3.6; 1 = off)\n"
          "  --prune-first        connectivity-prune the first Conv too (it is exempt by default,\n"
          "                       §2.4.2; for graphs that are one layer of a network)\n"
          "  --detect             change no weight: find the patterns and removed kernels the\n"
          "                       weights already have (a model trained with PatDNN) and annotate\n"
          "  --export-onnx FILE   the pruned model as ONNX (dense, zeros in place), from the\n"
          "                       source model (--onnx, default the path recorded by onnx2ecg)\n"
          "  --onnx FILE          the source ONNX model for --export-onnx and --drift\n"
          "  --drift SEED         with --export-onnx: run ONNX Runtime on the source and the\n"
          "                       pruned model on inputs drawn from SEED; report max abs and\n"
          "                       cosine similarity per output\n"
          "  --input-shape N=DIMS for --drift: a dynamic input dim (as onnx2ecg)\n"
          "  --report FILE        JSON report (- = stderr): per-layer and total compression,\n"
          "                       pattern histogram, FKW vs CSR index bytes, drift\n"
          "  -o, --output FILE    output ECG (default stdout)\n"
          "  --zstd               compress the output\n"
          "  -v, --verbose        per-layer summary on stderr\n"
          "  -q, --quiet          errors only on stderr (the default; cancels -v)\n"
          "  -h, --help           this help\n"
          "  --version            print the version\n");
}

enum { OPT_PATTERNS = 1, OPT_CONN, OPT_FIRST, OPT_DETECT, OPT_EXPORT, OPT_ONNX, OPT_DRIFT, OPT_SHAPE, OPT_REPORT, OPT_OUTPUT,
       OPT_ZSTD, OPT_VERBOSE, OPT_QUIET, OPT_HELP, OPT_VERSION };

static void mask_str(uint32_t mk, int64_t kh, int64_t kw, char *b) {
  int n = 0;
  for (int64_t r = 0; r < kh; r++) {
    if (r) b[n++] = '/';
    for (int64_t c = 0; c < kw; c++) b[n++] = (mk >> (r * kw + c) & 1u) ? 'x' : '.';
  }
  b[n] = 0;
}

/* Locate tools/prune/drift.mjs above the running binary (bin/ or build-san/bin/). */
static int drift_script(char *buf, size_t cap) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -1;
  exe[n] = 0;
  for (int up = 1; up <= 3; up++) {
    char *slash = strrchr(exe, '/');
    if (!slash) break;
    *slash = 0;
    snprintf(buf, cap, "%s/tools/prune/drift.mjs", exe[0] ? exe : "/");
    if (up > 1 && access(buf, R_OK) == 0) return 0;
  }
  return -1;
}

/* Run drift.mjs; returns its one-line JSON (malloc'd) or NULL with e set. */
static char *run_drift(const char *dense, const char *pruned, const char *seed, char **shapes, int n_shapes, ecg_err *e) {
  char script[PATH_MAX + 32];
  if (drift_script(script, sizeof script) != 0) { ecg_errf(e, ECG_ERR_INPUT, "tools/prune/drift.mjs not found above the ecg-prune binary"); return NULL; }
  int fd[2];
  if (pipe(fd) != 0) { ecg_errf(e, ECG_ERR_INTERNAL, "pipe failed"); return NULL; }
  pid_t pid = fork();
  if (pid < 0) { close(fd[0]); close(fd[1]); ecg_errf(e, ECG_ERR_INTERNAL, "fork failed"); return NULL; }
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]); close(fd[1]);
    const char *node = getenv("ECG_NODE");
    char *argv[32 + 2 * 16];
    int a = 0;
    argv[a++] = (char *)(node && *node ? node : "node");
    argv[a++] = script;
    argv[a++] = "--dense"; argv[a++] = (char *)dense;
    argv[a++] = "--pruned"; argv[a++] = (char *)pruned;
    argv[a++] = "--seed"; argv[a++] = (char *)seed;
    for (int i = 0; i < n_shapes && i < 16; i++) { argv[a++] = "--input-shape"; argv[a++] = shapes[i]; }
    argv[a] = NULL;
    execvp(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t cap = 4096, len = 0;
  char *out = malloc(cap);
  ssize_t got;
  while (out && (got = read(fd[0], out + len, cap - len - 1)) > 0) {
    len += (size_t)got;
    if (len + 1 == cap) { char *nb = realloc(out, cap *= 2); if (!nb) { free(out); out = NULL; } else out = nb; }
  }
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (!out) { ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); return NULL; }
  out[len] = 0;
  while (len && (out[len - 1] == '\n' || out[len - 1] == '\r')) out[--len] = 0;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || len == 0 || out[0] != '{') {
    free(out);
    ecg_errf(e, ECG_ERR_INPUT, "--drift: %s failed (exit %d; see its message above)", script, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return NULL;
  }
  return out;
}

static void write_report(FILE *f, const ecg_graph *g, const prune_result *r, const prune_opts *o, double ms,
                         ecg_sizes before, ecg_sizes after, int64_t conv_w, int64_t conv_nz, const char *drift) {
  char lb[256], ms_[64];
  int64_t pw = 0, pnz = 0, fkw = 0, csr = 0, csrn = 0;
  fprintf(f, "{\"stage\": \"ecg-prune\", \"version\": \"%s\", \"time_ms\": %.3f, ", ECG_VERSION_STRING, ms);
  fprintf(f, "\"before\": {\"nodes\": %zu, \"flops\": %lld, \"intermediate_bytes\": %lld}, ", before.nodes, (long long)before.flops, (long long)before.intermediate_bytes);
  fprintf(f, "\"after\": {\"nodes\": %zu, \"flops\": %lld, \"intermediate_bytes\": %lld}, ", after.nodes, (long long)after.flops, (long long)after.intermediate_bytes);
  fprintf(f, "\"prune\": {\"mode\": \"%s\", \"retrained\": false, ", o->detect ? "detect" : "prune");
  if (!o->detect) {
    fprintf(f, "\"patterns\": %d, \"connectivity\": %g, \"pattern_set\": [", o->k_patterns, o->connectivity);
    for (int p = 0; p < r->n_set; p++) {
      mask_str(r->set[p], 3, 3, ms_);
      fprintf(f, "%s{\"mask\": \"%s\", \"kernels\": %lld}", p ? ", " : "", ms_, (long long)r->set_hist[p]);
    }
    fprintf(f, "], ");
  }
  fprintf(f, "\"layers\": [");
  for (int i = 0; i < r->n_layers; i++) {
    const prune_layer *L = &r->layers[i];
    const ecg_node *n = g->nodes[L->node];
    fprintf(f, "%s{\"node\": \"%s\", \"shape\": [%lld, %lld, %lld, %lld], \"annotated\": %s, \"patterned\": %s, \"connectivity\": %s, "
               "\"kernels\": %lld, \"kept_kernels\": %lld, \"weights\": %lld, \"nonzero\": %lld, \"compression\": %.4f",
            i ? ", " : "", ecg_node_label(g, n, lb, sizeof lb), (long long)L->dims[0], (long long)L->dims[1], (long long)L->dims[2],
            (long long)L->dims[3], L->annotated ? "true" : "false", L->patterned ? "true" : "false", L->connectivity ? "true" : "false",
            (long long)L->kernels, (long long)L->kept, (long long)L->weights, (long long)L->nonzero,
            L->nonzero ? (double)L->weights / (double)L->nonzero : 0.0);
    if (L->annotated) {
      fprintf(f, ", \"histogram\": [");
      for (int p = 0; p < L->n_patterns; p++) {
        mask_str(L->masks[p], L->dims[2], L->dims[3], ms_);
        fprintf(f, "%s{\"mask\": \"%s\", \"kernels\": %lld}", p ? ", " : "", ms_, (long long)L->hist[p]);
      }
      fprintf(f, "], \"fkw_index_bytes\": %lld, \"csr_index_bytes\": %lld, \"csr_narrow_index_bytes\": %lld, \"fkw_index_saving\": %.4f",
              (long long)L->fkw_index_bytes, (long long)L->csr_index_bytes, (long long)L->csr_narrow_index_bytes,
              L->csr_index_bytes ? 1.0 - (double)L->fkw_index_bytes / (double)L->csr_index_bytes : 0.0);
      pw += L->weights; pnz += L->nonzero; fkw += L->fkw_index_bytes; csr += L->csr_index_bytes; csrn += L->csr_narrow_index_bytes;
    }
    if (L->why) fprintf(f, ", \"note\": \"%s\"", L->why);
    fprintf(f, "}");
  }
  fprintf(f, "], \"conv_weights\": %lld, \"conv_nonzero\": %lld, \"compression\": %.4f, "
             "\"annotated_weights\": %lld, \"annotated_nonzero\": %lld, \"annotated_compression\": %.4f, "
             "\"fkw_index_bytes\": %lld, \"csr_index_bytes\": %lld, \"fkw_index_saving\": %.4f, "
             "\"csr_narrow_index_bytes\": %lld, \"fkw_index_saving_vs_narrow_csr\": %.4f, \"drift\": %s}}\n",
          (long long)conv_w, (long long)conv_nz, conv_nz ? (double)conv_w / (double)conv_nz : 0.0, (long long)pw, (long long)pnz,
          pnz ? (double)pw / (double)pnz : 0.0, (long long)fkw, (long long)csr, csr ? 1.0 - (double)fkw / (double)csr : 0.0,
          (long long)csrn, csrn ? 1.0 - (double)fkw / (double)csrn : 0.0, drift ? drift : "null");
}

/* Weights and non-zeros of every Conv with a constant float32 weight (the total CONV
 * compression counts depthwise and unpruned layers as they are). */
static void conv_totals(const ecg_graph *g, int64_t *w, int64_t *nz) {
  *w = *nz = 0;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    const ecg_tensor *t = n->n_inputs > 1 ? ecg_node_input(g, n, 1) : NULL;
    if (!op || op->id != ECG_OP_Conv || !t || !t->is_const || t->dtype != ECG_FLOAT || !ecg_tensor_static(t)) continue;
    int64_t numel = ecg_tensor_numel(t);
    const float *v = (const float *)t->data.data;
    *w += numel;
    for (int64_t q = 0; q < numel; q++) *nz += v[q] != 0.0f;
  }
}

int main(int argc, char **argv) {
  static const cli_opt opts[] = {
      {"patterns", 0, 1, OPT_PATTERNS}, {"connectivity", 0, 1, OPT_CONN}, {"detect", 0, 0, OPT_DETECT}, {"prune-first", 0, 0, OPT_FIRST},
      {"export-onnx", 0, 1, OPT_EXPORT}, {"onnx", 0, 1, OPT_ONNX},        {"drift", 0, 1, OPT_DRIFT},
      {"input-shape", 0, 1, OPT_SHAPE},  {"report", 0, 1, OPT_REPORT},    {"output", 'o', 1, OPT_OUTPUT},
      {"zstd", 0, 0, OPT_ZSTD},          {"verbose", 'v', 0, OPT_VERBOSE}, {"quiet", 'q', 0, OPT_QUIET}, {"help", 'h', 0, OPT_HELP},
      {"version", 0, 0, OPT_VERSION},    {0, 0, 0, 0}};
  const char *out = "-", *in = "-", *report = NULL, *export_path = NULL, *onnx_src = NULL, *drift_seed = NULL, *val;
  char *shapes[16];
  int n_shapes = 0, exported = 0, verbose = 0, have_in = 0, zstd = 0, c;
  prune_opts po = {8, 3.6, false, false};
  ecg_err e = {0};
  cli cl;
  cli_init(&cl, argc, argv, opts);
  while ((c = cli_next(&cl, &val, &e)) != CLI_END) {
    char *end;
    switch (c) {
    case CLI_ERROR: usage(stderr); return cli_fail(PROG, e.code, e.msg);
    case CLI_POSITIONAL:
      if (have_in++) return cli_fail(PROG, ECG_ERR_USAGE, "more than one input file (try --help)");
      in = val;
      break;
    case OPT_PATTERNS:
      po.k_patterns = (int)strtol(val, &end, 10);
      if (*end || po.k_patterns < 1 || po.k_patterns > 56) return cli_fail(PROG, ECG_ERR_USAGE, "--patterns: an integer from 1 to 56 (try --help)");
      break;
    case OPT_CONN:
      po.connectivity = strtod(val, &end);
      if (*end || !(po.connectivity >= 1.0) || !isfinite(po.connectivity)) return cli_fail(PROG, ECG_ERR_USAGE, "--connectivity: a number >= 1 (try --help)");
      break;
    case OPT_DETECT: po.detect = true; break;
    case OPT_FIRST: po.prune_first = true; break;
    case OPT_EXPORT: export_path = val; break;
    case OPT_ONNX: onnx_src = val; break;
    case OPT_DRIFT:
      strtoul(val, &end, 10);
      if (*end) return cli_fail(PROG, ECG_ERR_USAGE, "--drift: a non-negative integer seed (try --help)");
      drift_seed = val;
      break;
    case OPT_SHAPE:
      if (n_shapes == 16) return cli_fail(PROG, ECG_ERR_USAGE, "--input-shape: at most 16");
      shapes[n_shapes++] = (char *)val;
      break;
    case OPT_REPORT: report = val; break;
    case OPT_OUTPUT: out = val; break;
    case OPT_ZSTD: zstd = 1; break;
    case OPT_VERBOSE: verbose = 1; break;
    case OPT_QUIET: verbose = 0; break;
    case OPT_HELP: usage(stdout); return 0;
    case OPT_VERSION: printf(PROG " %s\n", ECG_VERSION_STRING); return 0;
    }
  }
  if (drift_seed && !export_path) return cli_fail(PROG, ECG_ERR_USAGE, "--drift needs --export-onnx (the pruned model ONNX Runtime runs)");
  if (!strcmp(in, "-") && isatty(fileno(stdin))) { fprintf(stderr, PROG ": no input (pipe an ECG in or name a file)\n"); usage(stderr); return 2; }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ecg_graph *g = NULL;
  int rc = ecg_read_path(in, &g, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc) { fprintf(stderr, PROG ": %s\n", e.msg); ecg_graph_free(g); return rc; }
  if (g->n_sparse_convs && !po.detect) {
    fprintf(stderr, PROG ": the input already carries %zu pattern annotation(s): pruning again is refused (use --detect to re-read them)\n", g->n_sparse_convs);
    ecg_graph_free(g);
    return 1;
  }
  ecg_sparse_remap(g, NULL, 0); /* --detect re-derives every annotation */
  ecg_sizes before = ecg_measure(g, false);
  prune_result r;
  rc = prune_run(g, &po, &r, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc == ECG_OK && export_path) {
    const char *src = onnx_src ? onnx_src : g->source;
    if (!src || !*src) rc = ecg_errf(&e, ECG_ERR_INPUT, "--export-onnx: the ECG records no source model; name it with --onnx");
    else if ((rc = prune_export_onnx(g, src, export_path, &e)) == ECG_OK) exported = 1;
  }
  char *drift = NULL;
  if (rc == ECG_OK && drift_seed) {
    drift = run_drift(onnx_src ? onnx_src : g->source, export_path, drift_seed, shapes, n_shapes, &e);
    if (!drift) rc = e.code;
  }
  if (rc == ECG_OK) rc = ecg_write_path(out, g, zstd ? 3 : 0, &e);
  if (rc != ECG_OK) {
    fprintf(stderr, PROG ": %s\n", e.msg);
    if (exported) unlink(export_path); /* a later step failed: no partial output */
    free(drift); prune_result_free(&r); ecg_graph_free(g);
    return rc;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  ecg_sizes after = ecg_measure(g, false);
  int64_t cw, cnz;
  conv_totals(g, &cw, &cnz);
  if (report) {
    FILE *f = !strcmp(report, "-") ? stderr : fopen(report, "w");
    if (!f) { perror(report); free(drift); prune_result_free(&r); ecg_graph_free(g); return 1; }
    write_report(f, g, &r, &po, ms, before, after, cw, cnz, drift);
    if (f != stderr && fclose(f) != 0) { perror(report); free(drift); prune_result_free(&r); ecg_graph_free(g); return 1; }
  }
  if (verbose) {
    char lb[256];
    for (int i = 0; i < r.n_layers; i++) {
      const prune_layer *L = &r.layers[i];
      fprintf(stderr, PROG ": %-40s %4lldx%-4lld %lldx%lld  kernels %lld/%lld  patterns %d  %.2fx%s%s\n",
              ecg_node_label(g, g->nodes[L->node], lb, sizeof lb), (long long)L->dims[0], (long long)L->dims[1], (long long)L->dims[2],
              (long long)L->dims[3], (long long)L->kept, (long long)L->kernels, L->n_patterns,
              L->nonzero ? (double)L->weights / (double)L->nonzero : 0.0, L->why ? "  " : "", L->why ? L->why : "");
    }
    fprintf(stderr, PROG ": %zu layer(s) annotated; CONV weights %lld -> %lld non-zero (%.2fx)%s\n", g->n_sparse_convs,
            (long long)cw, (long long)cnz, cnz ? (double)cw / (double)cnz : 0.0, po.detect ? "" : " (no retraining)");
  }
  free(drift);
  prune_result_free(&r);
  ecg_graph_free(g);
  return 0;
}
