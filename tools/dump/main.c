/* ecg-dump: print an ECG as JSON (for jq) or as Graphviz DOT (fusion blocks drawn as
 * clusters). Reads FILE or stdin. DESIGN.md "The ECG format". */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ecg.h"

static void usage(FILE *f) {
  fprintf(f, "usage: ecg-dump [--json|--dot|--summary] [-o FILE] [FILE.ecg|-]\n"
             "Print an ECG as JSON (default; for jq), as Graphviz DOT, or as a one-line summary.\n"
             "  --json      JSON: graph, tensors (dtype, shape, const bytes), nodes (op, mapping type, I/O, attributes),\n"
             "              fusion blocks (members, seed, dominant, fused mapping type, I/O, layout, plan, schedule),\n"
             "              partition subgraphs (id, strategy, weight, members)\n"
             "  --dot       Graphviz DOT; fusion blocks are clusters labelled with id and fused mapping type,\n"
             "              inside dashed clusters for the partition subgraphs (ecg-partition)\n"
             "  --summary   one line: nodes, tensors, constants, op histogram\n"
             "  -o, --output FILE  write to FILE instead of stdout\n"
             "  --no-validate  dump even a graph that fails validation (cycles, dangling tensors)\n"
             "  -h, --help  this help;  --version  the version\n");
}

static void jstr(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static void jshape(FILE *f, const ecg_tensor *t) {
  if (!t->shape_known) { fprintf(f, "null"); return; }
  fputc('[', f);
  for (size_t d = 0; d < t->n_dims; d++) {
    if (d) fputc(',', f);
    if (t->dims[d]->value >= 0) fprintf(f, "%lld", (long long)t->dims[d]->value);
    else jstr(f, t->dims[d]->symbol);
  }
  fputc(']', f);
}

static const char *tname(const ecg_graph *g, int id) { return id >= 0 && (size_t)id < g->n_tensors ? g->tensors[id]->name : ""; }

static void jattr(FILE *f, const ecg_attr *a) {
  switch (a->type) {
  case ECG_ATTR_FLOAT: fprintf(f, "%.9g", a->f); break;
  case ECG_ATTR_INT: fprintf(f, "%lld", (long long)a->i); break;
  case ECG_ATTR_STRING: {
    char *s = strndup((const char *)a->s.data, a->s.len);
    jstr(f, s);
    free(s);
    break;
  }
  case ECG_ATTR_INTS:
    fputc('[', f);
    for (size_t i = 0; i < a->n_ints; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)a->ints[i]);
    fputc(']', f);
    break;
  case ECG_ATTR_FLOATS:
    fputc('[', f);
    for (size_t i = 0; i < a->n_floats; i++) fprintf(f, "%s%.9g", i ? "," : "", a->floats[i]);
    fputc(']', f);
    break;
  default: fprintf(f, "\"<%s>\"", a->type == ECG_ATTR_TENSOR ? "tensor" : a->type == ECG_ATTR_GRAPH ? "graph" : "list"); break;
  }
}

/* A JSON list of tensor names. */
static void jnames(FILE *f, const ecg_graph *g, const int32_t *ids, size_t n) {
  fputc('[', f);
  for (size_t k = 0; k < n; k++) { if (k) fputc(',', f); jstr(f, tname(g, ids[k])); }
  fputc(']', f);
}

/* One fusion block (schema version 2 fields included). */
static void dump_json_block(FILE *f, const ecg_graph *g, const ecg_block *blk, const char *sep) {
  fprintf(f, "%s{\"id\":%d,\"nodes\":[", sep, blk->id);
  for (size_t k = 0; k < blk->n_nodes; k++) fprintf(f, "%s%d", k ? "," : "", blk->nodes[k]);
  fprintf(f, "],\"seed\":%d,\"dominant\":%d,\"mapping\":\"%s\",\"inputs\":", blk->seed, blk->dominant,
          ecg_mapping_name((int)blk->mapping_type));
  jnames(f, g, blk->inputs, blk->n_inputs);
  fprintf(f, ",\"outputs\":");
  jnames(f, g, blk->outputs, blk->n_outputs);
  fprintf(f, ",\"layout\":");
  jstr(f, blk->layout);
  fprintf(f, ",\"plan\":");
  jstr(f, blk->plan);
  const ecg_schedule *s = blk->schedule;
  if (s) {
    fprintf(f, ",\"schedule\":{\"tile\":[");
    for (size_t k = 0; k < s->n_tile; k++) fprintf(f, "%s%lld", k ? "," : "", (long long)s->tile[k]);
    fprintf(f, "],\"vector_width\":%d,\"unroll\":%d,\"intensive\":%s}", s->vector_width, s->unroll, s->intensive ? "true" : "false");
  }
  fputc('}', f);
}

static void dump_json(FILE *f, const ecg_graph *g) {
  fprintf(f, "{\"name\":");
  jstr(f, g->name);
  fprintf(f, ",\"opset\":%lld,\"source\":", (long long)g->opset);
  jstr(f, g->source);
  fprintf(f, ",\n\"inputs\":");
  jnames(f, g, g->inputs, g->n_inputs);
  fprintf(f, ",\"outputs\":");
  jnames(f, g, g->outputs, g->n_outputs);
  fprintf(f, ",\n\"tensors\":[\n");
  for (size_t i = 0; i < g->n_tensors; i++) {
    const ecg_tensor *t = g->tensors[i];
    fprintf(f, "%s{\"id\":%zu,\"name\":", i ? ",\n" : "", i);
    jstr(f, t->name);
    fprintf(f, ",\"dtype\":\"%s\",\"shape\":", ecg_dtype_name(t->dtype));
    jshape(f, t);
    fprintf(f, ",\"const\":%s,\"bytes\":%zu,\"ir_removable\":%s", t->is_const ? "true" : "false", t->data.len, t->ir_removable ? "true" : "false");
    if (t->layout && t->layout[0]) { fprintf(f, ",\"layout\":"); jstr(f, t->layout); }
    fputc('}', f);
  }
  fprintf(f, "],\n\"nodes\":[\n");
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    fprintf(f, "%s{\"index\":%zu,\"name\":", i ? ",\n" : "", i);
    jstr(f, n->name);
    fprintf(f, ",\"op\":");
    jstr(f, n->op_type);
    fprintf(f, ",\"domain\":");
    jstr(f, n->domain);
    fprintf(f, ",\"opset\":%lld,\"mapping\":\"%s\",\"flops\":%lld,\"fusion_block\":%d,\"inputs\":", (long long)n->opset,
            ecg_mapping_name(op ? (int)op->mapping : 0), (long long)(op ? op->flops(g, n) : -1), n->fusion_block);
    jnames(f, g, n->inputs, n->n_inputs);
    fprintf(f, ",\"outputs\":");
    jnames(f, g, n->outputs, n->n_outputs);
    fprintf(f, ",\"attrs\":{");
    for (size_t k = 0; k < n->n_attrs; k++) {
      if (k) fputc(',', f);
      jstr(f, n->attrs[k]->name);
      fputc(':', f);
      jattr(f, n->attrs[k]);
    }
    fprintf(f, "}}");
  }
  fprintf(f, "],\n\"blocks\":[\n");
  for (size_t b = 0; b < g->n_blocks; b++) dump_json_block(f, g, g->blocks[b], b ? ",\n" : "");
  fprintf(f, "],\n\"subgraphs\":[\n");
  for (size_t k = 0; k < g->n_subgraphs; k++) {
    const ecg_subgraph *sg = g->subgraphs[k];
    fprintf(f, "%s{\"id\":%d,\"strategy\":\"%s\",\"weight\":%.6g,\"nodes\":[", k ? ",\n" : "", sg->id, sg->strategy, sg->weight);
    for (size_t m = 0; m < sg->n_nodes; m++) fprintf(f, "%s%d", m ? "," : "", sg->nodes[m]);
    fprintf(f, "]}");
  }
  fprintf(f, "]}\n");
}

/* One fusion block as a DOT cluster labelled with its id and fused mapping type. */
static void dot_block(FILE *f, const ecg_block *blk) {
  fprintf(f, "  subgraph cluster_%d {\n    label=\"block %d\\n%s\";\n    style=rounded;\n", blk->id, blk->id,
          ecg_mapping_name((int)blk->mapping_type));
  for (size_t k = 0; k < blk->n_nodes; k++) fprintf(f, "    n%d;\n", blk->nodes[k]);
  fprintf(f, "  }\n");
}

static void dump_dot(FILE *f, const ecg_graph *g) {
  int *producer = malloc(sizeof(int) * (g->n_tensors + 1));
  ecg_producers(g, producer);
  fprintf(f, "digraph ecg {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n");
  for (size_t k = 0; k < g->n_inputs; k++) fprintf(f, "  t%d [shape=ellipse, label=\"%s\"];\n", g->inputs[k], tname(g, g->inputs[k]));
  for (size_t k = 0; k < g->n_outputs; k++) fprintf(f, "  o%zu [shape=ellipse, label=\"%s\"];\n", k, tname(g, g->outputs[k]));
  /* Partition subgraphs (AGO §IV-B) are outer clusters holding their blocks' clusters
   * (a block lies inside one subgraph) and their unblocked nodes. */
  for (size_t sI = 0; sI < g->n_subgraphs; sI++) {
    const ecg_subgraph *sg = g->subgraphs[sI];
    fprintf(f, "  subgraph cluster_s%d {\n    label=\"subgraph %d (%s)\\nweight %.1f\";\n    style=dashed;\n", sg->id, sg->id,
            sg->strategy, sg->weight);
    for (size_t k = 0; k < sg->n_nodes; k++) {
      int i = sg->nodes[k], b = i >= 0 && (size_t)i < g->n_nodes ? g->nodes[i]->fusion_block : -1; /* --no-validate */
      if (b < 0 || (size_t)b >= g->n_blocks) fprintf(f, "    n%d;\n", i);
      else if (g->blocks[b]->n_nodes && g->blocks[b]->nodes[0] == i) dot_block(f, g->blocks[b]);
    }
    fprintf(f, "  }\n");
  }
  for (size_t b = 0; b < g->n_blocks && g->n_subgraphs == 0; b++) dot_block(f, g->blocks[b]);
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    fprintf(f, "  n%zu [label=\"%s\\n%s\"];\n", i, n->op_type, ecg_mapping_name(op ? (int)op->mapping : 0));
    for (size_t k = 0; k < n->n_inputs; k++) {
      int t = n->inputs[k];
      if (t < 0 || (size_t)t >= g->n_tensors || g->tensors[t]->is_const) continue;
      char sh[96];
      ecg_shape_str(g->tensors[t], sh, sizeof sh);
      if (producer[t] >= 0) fprintf(f, "  n%d -> n%zu [label=\"%s\"];\n", producer[t], i, sh);
      else fprintf(f, "  t%d -> n%zu [label=\"%s\"];\n", t, i, sh);
    }
  }
  for (size_t k = 0; k < g->n_outputs; k++) {
    int t = g->outputs[k];
    if (t >= 0 && (size_t)t < g->n_tensors && producer[t] >= 0) fprintf(f, "  n%d -> o%zu;\n", producer[t], k);
  }
  fprintf(f, "}\n");
  free(producer);
}

static void dump_summary(FILE *f, const ecg_graph *g) {
  size_t consts = 0, cbytes = 0;
  for (size_t i = 0; i < g->n_tensors; i++) if (g->tensors[i]->is_const) { consts++; cbytes += g->tensors[i]->data.len; }
  int64_t flops = 0;
  int count[ECG_OP_COUNT] = {0};
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_op_info *op = ecg_op_lookup(g->nodes[i]->op_type, g->nodes[i]->domain);
    if (!op) continue;
    count[op->id]++;
    int64_t fl = op->flops(g, g->nodes[i]);
    if (fl > 0) flops += fl;
  }
  fprintf(f, "nodes %zu tensors %zu constants %zu (%zu bytes) flops %lld ops", g->n_nodes, g->n_tensors, consts, cbytes, (long long)flops);
  for (int i = 0; i < ECG_OP_COUNT; i++) if (count[i]) fprintf(f, " %s:%d", ecg_op_get(i)->name, count[i]);
  fprintf(f, "\n");
}

enum { OPT_JSON = 1, OPT_DOT, OPT_SUMMARY, OPT_NO_VALIDATE, OPT_OUTPUT, OPT_HELP, OPT_VERSION };

/** Parse the command line, read and validate the graph, print it. Exit codes:
 *  0 ok, 1 invalid input or I/O failure, 2 usage, 3 internal. */
int main(int argc, char **argv) {
  static const cli_opt opts[] = {{"json", 0, 0, OPT_JSON},       {"dot", 0, 0, OPT_DOT},
                                 {"summary", 0, 0, OPT_SUMMARY}, {"no-validate", 0, 0, OPT_NO_VALIDATE},
                                 {"output", 'o', 1, OPT_OUTPUT}, {"help", 'h', 0, OPT_HELP},
                                 {"version", 0, 0, OPT_VERSION}, {0, 0, 0, 0}};
  const char *in = "-", *out = "-", *val;
  int mode = 0, have_in = 0, validate = 1, c;
  ecg_err e = {0};
  cli cl;
  cli_init(&cl, argc, argv, opts);
  while ((c = cli_next(&cl, &val, &e)) != CLI_END) {
    switch (c) {
    case CLI_ERROR: usage(stderr); return cli_fail("ecg-dump", e.code, e.msg);
    case CLI_POSITIONAL:
      if (have_in++) return cli_fail("ecg-dump", ECG_ERR_USAGE, "more than one input file (try --help)");
      in = val;
      break;
    case OPT_HELP: usage(stdout); return 0;
    case OPT_VERSION: printf("ecg-dump %s\n", ECG_VERSION_STRING); return 0;
    case OPT_JSON: mode = 0; break;
    case OPT_DOT: mode = 1; break;
    case OPT_SUMMARY: mode = 2; break;
    case OPT_NO_VALIDATE: validate = 0; break;
    case OPT_OUTPUT: out = val; break;
    }
  }
  if (!strcmp(in, "-") && isatty(fileno(stdin))) { fprintf(stderr, "ecg-dump: no input (pipe an ECG in or name a file)\n"); usage(stderr); return 2; }
  ecg_graph *g = NULL;
  int rc = ecg_read_path(in, &g, &e), invalid = 0;
  if (rc == ECG_OK && validate) {
    rc = invalid = ecg_validate(g, &e);
    if (rc) ecg_graph_free(g);
  }
  /* --no-validate helps only with a graph that was read and failed validation */
  if (rc) { fprintf(stderr, "ecg-dump: %s%s\n", e.msg, invalid == ECG_ERR_INPUT ? " (--no-validate dumps it anyway)" : ""); return rc; }
  ecg_out o;
  rc = ecg_out_open(&o, out, &e);
  if (rc) { ecg_graph_free(g); return cli_fail("ecg-dump", rc, e.msg); }
  if (mode == 0) dump_json(o.f, g);
  else if (mode == 1) dump_dot(o.f, g);
  else dump_summary(o.f, g);
  ecg_graph_free(g);
  rc = ecg_out_commit(&o, &e);
  return rc ? cli_fail("ecg-dump", rc, e.msg) : 0;
}
