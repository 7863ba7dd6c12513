/* onnx2ecg: convert an ONNX model into the ECG framed stream (DESIGN.md "The pipeline").
 *
 *   onnx2ecg [options] MODEL.onnx|-  > model.ecg
 *
 * main() parses the command line, reads the model, runs the import phases (import.h),
 * constant folding / shape inference and the validator from libecg, writes the stream,
 * and maps errors to exit codes: 0 ok, 1 invalid or unsupported input, 2 usage error,
 * 3 internal error.  Errors are single lines on stderr prefixed "onnx2ecg: "; nothing is
 * written to the output on error (ecg_write_path writes through a temporary file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ecg_measure.h"
#include "import.h"

#define PROG "onnx2ecg"

/** Print the usage text to f. */
static void usage(FILE *f) {
  fprintf(f,
          "usage: " PROG " [options] MODEL.onnx|-\n"
          "Convert an ONNX model into an ECG stream on stdout (any ai.onnx opset: each\n"
          "node's operator schema version at the model's opset must be one ecg implements,\n"
          "see --list-ops).\n"
          "\n"
          "  -o FILE                   write to FILE instead of stdout ('-' = stdout)\n"
          "  --input-shape NAME=DIMS   fix the dynamic dims of graph input NAME, e.g.\n"
          "                            input=1x3x224x224 (repeatable; a dim may be a\n"
          "                            symbol such as N to keep it dynamic)\n"
          "  --dim-multiple SYM=K      input symbol SYM takes only multiples of K (RDP works\n"
          "                            with SYM = K * SYM:K, so a model whose branches agree\n"
          "                            only for such sizes keeps expressions, not nac;\n"
          "                            repeatable; a dynamic build then takes only them)\n"
          "  --no-fold                 do not fold constant subgraphs (shapes are still\n"
          "                            inferred)\n"
          "  --no-infer                skip folding, shape inference and validation:\n"
          "                            write the graph as imported (debugging)\n"
          "  --zstd                    compress the stream (zstd level 3)\n"
          "  --report FILE             JSON report in the stages' envelope (- = stderr):\n"
          "                            stage, version, time_ms, before (the ONNX graph:\n"
          "                            nodes) and after (nodes, FLOPs, intermediate and peak\n"
          "                            bytes), onnx2ecg {opset, nodes imported, folded, ...,\n"
          "                            rdp: symbolic dims' counts}\n"
          "  --list-ops                print the supported operators with the ONNX schema\n"
          "                            versions implemented (\"Name 1,6,13,14\"; \"Name 1\n"
          "                            DOMAIN\" for another domain, counting its own\n"
          "                            opsets); a model at opset N runs an operator's\n"
          "                            newest version <= N, which must be listed\n"
          "  --model-ops               print the operators MODEL.onnx uses, one per line\n"
          "                            (\"Name domain opset supported|unsupported\"), and exit\n"
          "  -q, --quiet               errors only on stderr\n"
          "  -v, --verbose             progress on stderr\n"
          "  -h, --help                this help\n"
          "  --version                 print the version\n"
          "\n"
          "Exit codes: 0 ok, 1 invalid or unsupported model, 2 usage error, 3 internal error.\n");
}

/** Print "onnx2ecg: MSG" on stderr and return code (the exit code). */
static int fail(int code, const char *msg) { return cli_fail(PROG, code, msg); }

/** onnx2ecg_unsupported callback: one error line on stderr. */
static void print_line(void *ctx, const char *line) {
  (void)ctx;
  fprintf(stderr, PROG ": %s\n", line);
}

/** Seconds since an arbitrary point (monotonic). */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/** Print s as a JSON string (quoted, escaped) on f. */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

/** --model-ops: each distinct (domain, op_type) of m's main graph once, in order of first
 *  use: "Name domain opset supported|unsupported" (domain "" printed as "ai.onnx"). */
static void print_model_ops(const Onnx__ModelProto *m) {
  const Onnx__GraphProto *gr = m->graph;
  for (size_t i = 0; i < gr->n_node; i++) {
    const char *op = gr->node[i]->op_type ? gr->node[i]->op_type : "";
    const char *dom = gr->node[i]->domain && gr->node[i]->domain[0] ? gr->node[i]->domain : "ai.onnx";
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++) {
      const char *dj = gr->node[j]->domain && gr->node[j]->domain[0] ? gr->node[j]->domain : "ai.onnx";
      seen = gr->node[j]->op_type && strcmp(gr->node[j]->op_type, op) == 0 && strcmp(dj, dom) == 0;
    }
    if (seen) continue;
    long long opset = 0;
    for (size_t k = 0; k < m->n_opset_import; k++) {
      const char *d = m->opset_import[k]->domain && m->opset_import[k]->domain[0] ? m->opset_import[k]->domain : "ai.onnx";
      if (strcmp(d, dom) == 0) opset = (long long)m->opset_import[k]->version;
    }
    const ecg_op_info *info = ecg_op_lookup(op, strcmp(dom, "ai.onnx") ? dom : "");
    bool impl = false;
    if (info) ecg_op_schema_version(info->id, opset, &impl);
    printf("%s %s %lld %s\n", op, dom, opset, (strcmp(op, "Constant") == 0 && strcmp(dom, "ai.onnx") == 0) || impl ? "supported" : "unsupported");
  }
}

enum { OPT_OUTPUT = 1, OPT_VERBOSE, OPT_QUIET, OPT_HELP, OPT_INPUT_SHAPE, OPT_ZSTD, OPT_REPORT, OPT_LIST_OPS, OPT_NO_FOLD, OPT_NO_INFER,
       OPT_VERSION, OPT_MODEL_OPS, OPT_DIM_MULTIPLE };

/** Most --dim-multiple hints. */
#define MAX_HINTS 16

/** The whole tool; shapes (argc + 1 zeroed slots, owned by main) receives the
 *  --input-shape bindings.  Returns the exit code. */
static int run(int argc, char **argv, onnx2ecg_shape *shapes) {
  static const cli_opt options[] = {
      {"input-shape", 0, 1, OPT_INPUT_SHAPE}, {"zstd", 0, 0, OPT_ZSTD},       {"report", 0, 1, OPT_REPORT},
      {"list-ops", 0, 0, OPT_LIST_OPS},       {"model-ops", 0, 0, OPT_MODEL_OPS}, {"no-fold", 0, 0, OPT_NO_FOLD},
      {"no-infer", 0, 0, OPT_NO_INFER},       {"verbose", 'v', 0, OPT_VERBOSE}, {"quiet", 'q', 0, OPT_QUIET}, {"help", 'h', 0, OPT_HELP},
      {"version", 0, 0, OPT_VERSION},         {"output", 'o', 1, OPT_OUTPUT},   {"dim-multiple", 0, 1, OPT_DIM_MULTIPLE},
      {0, 0, 0, 0}};
  ecg_rdp_hint hints[MAX_HINTS];
  int n_hints = 0;
  const char *out_path = "-", *model = NULL, *val;
  const char *report = NULL;
  bool zstd = false, fold = true, infer = true, verbose = false, model_ops = false;
  int n_shapes = 0, n_models = 0;
  ecg_err e = {0};
  cli cl;
  cli_init(&cl, argc, argv, options);
  int c;
  while ((c = cli_next(&cl, &val, &e)) != CLI_END) {
    switch (c) {
    case CLI_ERROR: return fail(e.code, e.msg);
    case CLI_POSITIONAL: model = val; n_models++; break;
    case OPT_OUTPUT: out_path = val; break;
    case OPT_VERBOSE: verbose = true; break;
    case OPT_QUIET: verbose = false; break;
    case OPT_HELP: usage(stdout); return 0;
    case OPT_VERSION: printf(PROG " %s (ECG schema %d)\n", ECG_VERSION_STRING, ECG_SCHEMA_VERSION); return 0;
    case OPT_ZSTD: zstd = true; break;
    case OPT_REPORT: report = val; break;
    case OPT_NO_FOLD: fold = false; break;
    case OPT_NO_INFER: fold = infer = false; break;
    case OPT_MODEL_OPS: model_ops = true; break;
    case OPT_LIST_OPS:
      for (int i = 0; i < ECG_OP_COUNT; i++) {
        const ecg_op_info *op = ecg_op_get((ecg_op_id)i);
        char vs[128];
        ecg_op_versions((ecg_op_id)i, true, vs, sizeof vs);
        if (ecg_op_domain((ecg_op_id)i)[0]) /* another domain: its own opset numbers */
          printf("%s %s %s\n", op->name, vs, ecg_op_domain((ecg_op_id)i));
        else
          printf("%s %s\n", op->name, vs);
      }
      return 0;
    case OPT_INPUT_SHAPE:
      if (cli_parse_shape(val, &shapes[n_shapes], &e) != ECG_OK) return fail(e.code, e.msg);
      n_shapes++;
      break;
    case OPT_DIM_MULTIPLE: {
      const char *eq = strrchr(val, '=');
      char *end;
      long long k = eq ? strtoll(eq + 1, &end, 10) : 0;
      if (!eq || eq == val || !eq[1] || *end || k < 2 || k > (1 << 20))
        return fail(ECG_ERR_USAGE, "--dim-multiple: expected SYMBOL=K with K from 2 to 2^20, e.g. H=32");
      if (n_hints == MAX_HINTS) return fail(ECG_ERR_USAGE, "at most 16 --dim-multiple");
      static char names[MAX_HINTS][256];
      snprintf(names[n_hints], sizeof names[n_hints], "%.*s", (int)(eq - val), val);
      hints[n_hints] = (ecg_rdp_hint){names[n_hints], k};
      n_hints++;
      break;
    }
    }
  }
  if (n_models != 1)
    return fail(ECG_ERR_USAGE, n_models == 0 ? "missing MODEL.onnx (try --help)" : "expected exactly one MODEL.onnx (try --help)");
  if (!model_ops && strcmp(out_path, "-") == 0 && isatty(fileno(stdout)))
    return fail(ECG_ERR_USAGE, "refusing to write a binary ECG to a terminal (redirect stdout or use -o FILE)");

  /* read */
  double t0 = now_s();
  FILE *f = strcmp(model, "-") == 0 ? stdin : fopen(model, "rb");
  if (!f) {
    snprintf(e.msg, sizeof e.msg, "%s: %s", model, strerror(errno));
    return fail(ECG_ERR_INPUT, e.msg);
  }
  uint8_t *buf = NULL;
  size_t len = 0;
  int err = cli_read_all(f, &buf, &len);
  if (f != stdin) fclose(f);
  if (err) {
    snprintf(e.msg, sizeof e.msg, "%s: %s", model, strerror(err));
    return fail(err == ENOMEM ? ECG_ERR_INTERNAL : ECG_ERR_INPUT, e.msg);
  }
  const char *label = strcmp(model, "-") == 0 ? "<stdin>" : model;
  if (verbose) fprintf(stderr, PROG ": read %s (%zu bytes)\n", label, len);

  /* parse and convert */
  Onnx__ModelProto *m = NULL;
  if (onnx2ecg_parse(buf, len, label, &m, &e) != ECG_OK) { free(buf); return fail(e.code, e.msg); }
  free(buf);
  if (model_ops) {
    print_model_ops(m);
    onnx__model_proto__free_unpacked(m, NULL);
    return 0;
  }
  if (verbose)
    fprintf(stderr, PROG ": ONNX IR %lld, producer '%s%s%s', %zu nodes, %zu initializers\n",
            (long long)(m->has_ir_version ? m->ir_version : 0), m->producer_name ? m->producer_name : "",
            m->producer_version && m->producer_version[0] ? " " : "",
            m->producer_version ? m->producer_version : "", m->graph->n_node, m->graph->n_initializer);
  onnx2ecg_opts opts = {.shapes = shapes, .n_shapes = n_shapes, .source = model};
  onnx2ecg_stats st;
  ecg_graph *g = NULL;
  int rc = onnx2ecg_convert(m, &opts, &g, &st, &e);
  onnx__model_proto__free_unpacked(m, NULL);
  if (rc != ECG_OK) return fail(rc, e.msg);
  if (verbose)
    fprintf(stderr, PROG ": imported opset %lld: %d nodes (%d Constant -> constants, %d Identity/Dropout removed), %zu tensors, %zu inputs, %zu outputs\n",
            (long long)st.opset, st.nodes_imported, st.constants, st.identities_removed, g->n_tensors,
            g->n_inputs, g->n_outputs);

  /* every unsupported operator at once, before any inference */
  if (onnx2ecg_unsupported(g, print_line, NULL) > 0) { ecg_graph_free(g); return ECG_ERR_INPUT; }

  /* drop tensors nothing reads (unused initializers); folding compacts again */
  bool *keep = malloc(g->n_nodes + 1);
  if (!keep) { ecg_graph_free(g); return fail(ECG_ERR_INTERNAL, "out of memory"); }
  memset(keep, 1, g->n_nodes + 1);
  rc = ecg_compact(g, keep, NULL);
  free(keep);
  if (rc != ECG_OK) { ecg_graph_free(g); return fail(ECG_ERR_INTERNAL, "out of memory"); }

  /* sequences with static lengths become tensor operators; fold / infer, validate */
  int folded = 0, n_seq = 0;
  int n_opt = 0;
  if (infer) rc = ecg_resolve_optionals(g, &n_opt, &e);
  if (rc == ECG_OK && verbose && n_opt) fprintf(stderr, PROG ": %d optional operators replaced by Identities\n", n_opt);
  if (rc == ECG_OK && infer) rc = ecg_resolve_sequences(g, &n_seq, &e);
  if (rc == ECG_OK && verbose && n_seq) fprintf(stderr, PROG ": %d sequence operators replaced by tensor operators\n", n_seq);
  int n_if = 0;
  if (rc == ECG_OK && fold) {
    /* an If whose condition folds to a constant (e.g. a test on a static dim) is replaced by
     * its taken branch, then the graph is folded again, until no such If is left */
    rc = ecg_fold_static_ifs(g, &folded, &n_if, &e);
  } else if (rc == ECG_OK && infer) rc = ecg_infer_shapes(g, &e);
  if (rc == ECG_OK && infer) rc = ecg_validate(g, &e);
  /* SOD² RDP: symbolic dims get their symbol, expression or nac (format/rdp.c) */
  ecg_rdp_stats rdp = {0};
  if (rc == ECG_OK && infer) rc = ecg_rdp_run_hinted(g, hints, n_hints, &rdp, &e);
  if (rc != ECG_OK) { ecg_graph_free(g); return fail(rc, e.msg); }
  if (verbose && n_if) fprintf(stderr, PROG ": %d If nodes with a constant condition replaced by their taken branch\n", n_if);
  if (verbose && infer && rdp.symbols)
    fprintf(stderr, PROG ": RDP: %d input symbols; tensors %d constant, %d symbolic, %d nac (%d undef), %d sweeps\n",
            rdp.symbols, rdp.constant, rdp.symbolic, rdp.nac, rdp.undef, rdp.iterations);
  if (verbose && infer)
    fprintf(stderr, PROG ": %s: %d nodes folded, %zu nodes left, graph valid\n",
            fold ? "folded constants and inferred shapes" : "inferred shapes", folded, g->n_nodes);

  /* the report file first: a report that cannot be written leaves no output either */
  ecg_out ro = {0};
  if (report && strcmp(report, "-") && (!strcmp(report, model) || !strcmp(report, out_path))) {
    ecg_graph_free(g);
    return fail(ECG_ERR_USAGE, "--report FILE names the model or the output");
  }
  if (report && strcmp(report, "-") && ecg_out_open(&ro, report, &e) != ECG_OK) { ecg_graph_free(g); return fail(e.code, e.msg); }
  /* write */
  rc = ecg_write_path(out_path, g, zstd ? 3 : 0, &e);
  if (rc != ECG_OK) {
    if (ro.f) ecg_out_abort(&ro);
    ecg_graph_free(g);
    return fail(rc, e.msg);
  }
  double t1 = now_s();
  if (verbose) fprintf(stderr, PROG ": wrote %s%s\n", strcmp(out_path, "-") ? out_path : "<stdout>", zstd ? " (zstd)" : "");
  if (report) { /* DESIGN.md "Conventions across issues": the one report envelope */
    FILE *rf = ro.f ? ro.f : stderr;
    ecg_sizes after = ecg_measure(g, false);
    fprintf(rf, "{\"stage\": \"onnx2ecg\", \"version\": \"%s\", \"time_ms\": %.3f, "
                "\"before\": {\"nodes\": %d, \"flops\": null, \"intermediate_bytes\": null, \"peak_bytes\": null}, ",
            ECG_VERSION_STRING, (t1 - t0) * 1e3, st.nodes_onnx);
    ecg_sizes_json(rf, "after", after);
    fprintf(rf, ", \"onnx2ecg\": {\"model\": ");
    json_str(rf, model);
    fprintf(rf, ", \"opset\": %lld, \"nodes_imported\": %d, \"folded\": %d, \"constants\": %d, "
                "\"identities_removed\": %d, \"initializers\": %d, \"tensors\": %zu, \"inputs\": %zu, \"outputs\": %zu, "
                "\"rdp\": {\"symbols\": %d, \"constant\": %d, \"symbolic\": %d, \"nac\": %d, \"undef\": %d, \"sweeps\": %d}}}\n",
            (long long)st.opset, st.nodes_imported, folded, st.constants, st.identities_removed, st.initializers, g->n_tensors,
            g->n_inputs, g->n_outputs, rdp.symbols, rdp.constant, rdp.symbolic, rdp.nac, rdp.undef, rdp.iterations);
    if (ro.f && ecg_out_commit(&ro, &e) != ECG_OK) { ecg_graph_free(g); return fail(e.code, e.msg); }
  }
  ecg_graph_free(g);
  return 0;
}

int main(int argc, char **argv) {
  onnx2ecg_shape *shapes = calloc((size_t)argc + 1, sizeof *shapes);
  if (!shapes) return fail(ECG_ERR_INTERNAL, "out of memory");
  int rc = run(argc, argv, shapes);
  for (int i = 0; i <= argc; i++) free((void *)shapes[i].name);
  free(shapes);
  return rc;
}
