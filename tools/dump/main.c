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
             "  --json      JSON: graph, tensors (dtype, shape: numbers, symbols or RDP expressions such as\n"
             "              \"((H+1)/2)\" (/ floors), rdp: each dim's lattice value when onnx2ecg ran RDP, const bytes), nodes (op, mapping type, I/O, attributes;\n"
             "              a subgraph attribute as the same JSON, nested),\n"
             "              fusion blocks (members, seed, dominant, fused mapping type, I/O, layout, plan, schedule),\n"
             "              partition subgraphs (id, strategy, weight, members), EOP placements\n"
             "  --dot       Graphviz DOT: nodes with operator, output shape and FLOPs, filled by mapping type (legend);\n"
             "              fusion blocks are clusters labelled with id, fused mapping type, op count and FLOPs,\n"
             "              inside shaded clusters for the partition subgraphs (ecg-partition)\n"
             "  --summary   one line: nodes, tensors, constants, op histogram\n"
             "  -o, --output FILE  write to FILE instead of stdout\n"
             "  --no-validate  dump even a graph that fails validation (cycles, dangling tensors)\n"
             "  -q, --quiet / -v, --verbose  errors only / progress on stderr (ecg-dump prints only errors either way)\n"
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

static void dump_json(FILE *f, const ecg_graph *g);

/* One attribute value as JSON; subgraphs recursively (their nesting is bounded by the
 * validator, ECG_MAX_SUBGRAPH_DEPTH). */
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
  case ECG_ATTR_STRINGS: /* e.g. a control-flow node's captured names (ecg.captures) */
    fputc('[', f);
    for (size_t i = 0; i < a->n_strings; i++) {
      char *s = strndup((const char *)a->strings[i].data, a->strings[i].len);
      if (i) fputc(',', f);
      jstr(f, s);
      free(s);
    }
    fputc(']', f);
    break;
  case ECG_ATTR_GRAPH: /* a subgraph (If's branches, Loop's and Scan's body): the same JSON, nested */
    if (a->g) dump_json(f, a->g);
    else fprintf(f, "null");
    break;
  case ECG_ATTR_GRAPHS:
    fputc('[', f);
    for (size_t i = 0; i < a->n_graphs; i++) {
      if (i) fputc(',', f);
      dump_json(f, a->graphs[i]);
    }
    fputc(']', f);
    break;
  default: fprintf(f, "\"<tensor>\""); break;
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
    fprintf(f, "],\"vector_width\":%d,\"unroll\":%d,\"intensive\":%s,\"threads\":%d,\"conv_algo\":\"%s\",\"intensive_fusion\":\"%s\"}",
            s->vector_width, s->unroll, s->intensive ? "true" : "false", s->threads, ecg_conv_algo_name(s->conv_algo),
            ecg_intensive_name(s->intensive_fusion));
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
    bool rdp = false; /* SOD² RDP's lattice value per dim, when onnx2ecg recorded one */
    for (size_t d = 0; d < t->n_dims; d++) rdp |= t->dims[d]->value < 0 && t->dims[d]->kind != ECG__DIM_KIND__DIM_UNANALYSED;
    if (rdp) {
      static const char *const kinds[] = {"?", "symbol", "expr", "nac", "undef"};
      fprintf(f, ",\"rdp\":[");
      for (size_t d = 0; d < t->n_dims; d++) {
        int k = t->dims[d]->kind;
        fprintf(f, "%s\"%s\"", d ? "," : "", t->dims[d]->value >= 0 ? "constant" : k >= 0 && k <= 4 ? kinds[k] : "?");
      }
      fputc(']', f);
    }
    fprintf(f, ",\"const\":%s,\"bytes\":%zu,\"ir_removable\":%s", t->is_const ? "true" : "false", t->data.len, t->ir_removable ? "true" : "false");
    if (t->sequence) fprintf(f, ",\"sequence\":true"); /* a run-time sequence of such tensors */
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
  fprintf(f, "],\n\"placements\":[\n");
  for (size_t k = 0; k < g->n_placements; k++) {
    const Ecg__Placement *p = g->placements[k];
    fprintf(f, "%s{\"node\":%d,\"dim\":", k ? ",\n" : "", p->node);
    jstr(f, p->dim);
    fprintf(f, ",\"axis\":%d,\"cpu_share\":%.2f}", p->axis, p->cpu_share);
  }
  fprintf(f, "]}\n");
}

/* s with '"' and '\\' escaped and control characters dropped, for a DOT string (buf of n
 * bytes, truncated to fit). */
static const char *dot_esc(const char *s, char *buf, size_t n) {
  size_t j = 0;
  for (; s && *s && j + 3 < n; s++) {
    if (*s == '"' || *s == '\\') buf[j++] = '\\';
    if ((unsigned char)*s >= 0x20) buf[j++] = *s;
  }
  buf[j] = 0;
  return buf;
}

/* FLOPs as a short label: "0", "850", "12.3 K", "10.8 M", "1.2 G". */
static const char *flops_str(int64_t fl, char *buf, size_t n) {
  static const char *unit[] = {"", " K", " M", " G", " T"};
  double v = (double)(fl > 0 ? fl : 0);
  int u = 0;
  while (v >= 1000 && u < 4) { v /= 1000; u++; }
  snprintf(buf, n, u ? "%.3g%s" : "%.0f%s", v, unit[u]);
  return buf;
}

/* The fill colour of a mapping type (DNNFusion Table 3.2), indexed by ecg_mapping; a
 * light palette so the black labels stay readable. */
static const char *map_colour(int m) {
  static const char *c[] = {"#eeeeee", "#cfe8cf", "#fde0b8", "#f6b6b6", "#cddcf5", "#e3cdf2"};
  return m >= 0 && m < (int)(sizeof c / sizeof *c) ? c[m] : c[0];
}

static int64_t node_flops(const ecg_graph *g, size_t i) {
  const ecg_op_info *op = ecg_op_lookup(g->nodes[i]->op_type, g->nodes[i]->domain);
  int64_t fl = op ? op->flops(g, g->nodes[i]) : 0;
  return fl > 0 ? fl : 0;
}

/* One fusion block as a DOT cluster: id, fused mapping type, op count and FLOPs (AGO
 * intensive blocks drawn bold blue). */
static void dot_block(FILE *f, const ecg_graph *g, const ecg_block *blk) {
  char fl[32];
  int64_t sum = 0;
  for (size_t k = 0; k < blk->n_nodes; k++)
    if (blk->nodes[k] >= 0 && (size_t)blk->nodes[k] < g->n_nodes) sum += node_flops(g, (size_t)blk->nodes[k]);
  bool intensive = blk->schedule && blk->schedule->intensive;
  fprintf(f, "  subgraph cluster_%d {\n    label=\"block %d%s: %s, %zu ops, %s FLOPs\"; labeljust=l; fontsize=9;\n"
             "    style=\"rounded,%s\"; color=\"%s\"; penwidth=%s;\n",
          blk->id, blk->id, intensive ? " (intensive)" : "", ecg_mapping_name((int)blk->mapping_type), blk->n_nodes,
          flops_str(sum, fl, sizeof fl), intensive ? "bold" : "dashed", intensive ? "#1f5fa8" : "#333333",
          intensive ? "1.5" : "1");
  for (size_t k = 0; k < blk->n_nodes; k++) fprintf(f, "    n%d;\n", blk->nodes[k]);
  fprintf(f, "  }\n");
}

/* Graphviz DOT: one box per node (operator, first output's shape, FLOPs; filled by
 * mapping type), graph inputs and outputs as ellipses, fusion blocks as clusters (dot_block) inside
 * shaded clusters for the partition subgraphs, edges labelled with the tensor's shape
 * where they leave a block, and a legend of the colours.  Constants are left out (they would double the picture). */
static void dump_dot(FILE *f, const ecg_graph *g) {
  int *producer = malloc(sizeof(int) * (g->n_tensors + 1)), *blk_of = malloc(sizeof(int) * (g->n_nodes + 1));
  ecg_producers(g, producer);
  for (size_t i = 0; i < g->n_nodes; i++) blk_of[i] = -1;
  for (size_t b = 0; b < g->n_blocks; b++)
    for (size_t k = 0; k < g->blocks[b]->n_nodes; k++)
      if (g->blocks[b]->nodes[k] >= 0 && (size_t)g->blocks[b]->nodes[k] < g->n_nodes) blk_of[g->blocks[b]->nodes[k]] = (int)b;
  char sh[96], fl[32], e1[256], e2[256];
  fprintf(f, "digraph ecg {\n  rankdir=TB; newrank=true; nodesep=0.25; ranksep=0.3; fontname=\"Helvetica\";\n"
             "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eeeeee\", fontname=\"Helvetica\", fontsize=10, margin=\"0.08,0.03\"];\n"
             "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\", fontcolor=\"#555555\", arrowsize=0.6];\n");
  /* (bounds checked throughout: --no-validate dumps graphs with dangling ids) */
  for (size_t k = 0; k < g->n_inputs; k++) {
    int id = g->inputs[k];
    if (id < 0 || (size_t)id >= g->n_tensors) continue;
    fprintf(f, "  t%d [shape=ellipse, style=filled, fillcolor=white, label=\"%s\\n%s\"];\n", id, dot_esc(tname(g, id), e1, sizeof e1),
            ecg_shape_str(g->tensors[id], sh, sizeof sh));
  }
  for (size_t k = 0; k < g->n_outputs; k++) {
    int id = g->outputs[k];
    fprintf(f, "  o%zu [shape=ellipse, style=filled, fillcolor=white, label=\"%s\\n%s\"];\n", k, dot_esc(tname(g, id), e1, sizeof e1),
            id >= 0 && (size_t)id < g->n_tensors ? ecg_shape_str(g->tensors[id], sh, sizeof sh) : "");
  }
  /* Partition subgraphs (AGO §IV-B) are outer clusters holding their blocks' clusters
   * (a block lies inside one subgraph) and their unblocked nodes. */
  for (size_t sI = 0; sI < g->n_subgraphs; sI++) {
    const ecg_subgraph *sg = g->subgraphs[sI];
    fprintf(f, "  subgraph cluster_s%d {\n    label=\"subgraph %d (%s), weight %.1f\"; labeljust=r; fontsize=9;\n"
               "    style=\"rounded,filled\"; fillcolor=\"#f4f4f4\"; color=\"#999999\";\n",
            sg->id, sg->id, dot_esc(sg->strategy, e1, sizeof e1), sg->weight);
    for (size_t k = 0; k < sg->n_nodes; k++) {
      int i = sg->nodes[k], b = i >= 0 && (size_t)i < g->n_nodes ? blk_of[i] : -1; /* --no-validate */
      if (b < 0) fprintf(f, "    n%d;\n", i);
      else if (g->blocks[b]->n_nodes && g->blocks[b]->nodes[0] == i) dot_block(f, g, g->blocks[b]);
    }
    fprintf(f, "  }\n");
  }
  for (size_t b = 0; b < g->n_blocks && g->n_subgraphs == 0; b++) dot_block(f, g, g->blocks[b]);
  int used[8] = {0};
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    int m = op ? (int)op->mapping : 0;
    if (m >= 0 && m < 8) used[m] = 1;
    int out = n->n_outputs ? n->outputs[0] : -1;
    const char *shape = out >= 0 && (size_t)out < g->n_tensors ? ecg_shape_str(g->tensors[out], sh, sizeof sh) : "";
    int64_t nf = node_flops(g, i);
    fprintf(f, "  n%zu [label=\"%s\\n%s", i, dot_esc(n->op_type, e1, sizeof e1), shape);
    if (nf) fprintf(f, "\\n%s FLOPs", flops_str(nf, fl, sizeof fl));
    fprintf(f, "\", fillcolor=\"%s\", tooltip=\"%s (%s)\"];\n", map_colour(m), dot_esc(n->name, e2, sizeof e2), ecg_mapping_name(m));
    for (size_t k = 0; k < n->n_inputs; k++) {
      int t = n->inputs[k];
      if (t < 0 || (size_t)t >= g->n_tensors || g->tensors[t]->is_const) continue;
      /* an edge inside one block carries no label: the box above it names the shape */
      int inside = producer[t] >= 0 && blk_of[i] >= 0 && blk_of[producer[t]] == blk_of[i];
      if (producer[t] >= 0)
        fprintf(f, "  n%d -> n%zu%s%s%s;\n", producer[t], i, inside ? "" : " [label=\"",
                inside ? "" : ecg_shape_str(g->tensors[t], sh, sizeof sh), inside ? "" : "\"]");
      else fprintf(f, "  t%d -> n%zu;\n", t, i);
    }
  }
  for (size_t k = 0; k < g->n_outputs; k++) {
    int t = g->outputs[k];
    if (t >= 0 && (size_t)t < g->n_tensors && producer[t] >= 0) fprintf(f, "  n%d -> o%zu;\n", producer[t], k);
  }
  /* legend: the mapping types that occur */
  fprintf(f, "  subgraph cluster_legend {\n    label=\"mapping type (DNNFusion)\"; fontsize=9; style=rounded; color=\"#999999\";\n");
  int prev = -1;
  for (int m = 0; m < 8; m++) {
    if (!used[m]) continue;
    fprintf(f, "    legend%d [label=\"%s\", fillcolor=\"%s\"];\n", m, ecg_mapping_name(m), map_colour(m));
    if (prev >= 0) fprintf(f, "    legend%d -> legend%d [style=invis];\n", prev, m);
    prev = m;
  }
  fprintf(f, "  }\n}\n");
  free(producer);
  free(blk_of);
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

enum { OPT_JSON = 1, OPT_DOT, OPT_SUMMARY, OPT_NO_VALIDATE, OPT_OUTPUT, OPT_QUIET, OPT_VERBOSE, OPT_HELP, OPT_VERSION };

/** Parse the command line, read and validate the graph, print it. Exit codes:
 *  0 ok, 1 invalid input or I/O failure, 2 usage, 3 internal. */
int main(int argc, char **argv) {
  static const cli_opt opts[] = {{"json", 0, 0, OPT_JSON},       {"dot", 0, 0, OPT_DOT},
                                 {"summary", 0, 0, OPT_SUMMARY}, {"no-validate", 0, 0, OPT_NO_VALIDATE},
                                 {"output", 'o', 1, OPT_OUTPUT}, {"help", 'h', 0, OPT_HELP},
                                 {"quiet", 'q', 0, OPT_QUIET}, {"verbose", 'v', 0, OPT_VERBOSE},
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
    case OPT_QUIET: case OPT_VERBOSE: break; /* nothing but errors to silence or add */
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
