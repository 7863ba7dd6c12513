/* ecg-fuse: fusion plans for an ECG (DNNFusion, Niu dissertation §3.4.3).
 * Reads an ECG (FILE or stdin), writes it with fusion blocks (-o FILE or stdout). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ecg_arch.h"
#include "ecg_measure.h"
#include "fuse.h"

#define PROG "ecg-fuse"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ecg-fuse [options] [FILE.ecg|-]\n"
          "Group the operators of an ECG into fusion blocks, each lowered as one kernel.\n"
          "  --plan P           dnnfusion (default: seeds + Table 3.3), fixed (a complex\n"
          "                     operator + its elementwise chain), none (no blocks)\n"
          "  --profile-db FILE  decide Table 3.3's 'depend' pairs from measured latencies (JSON\n"
          "                     lines; scripts/profile_fusion.sh fills it); pairs it lacks and\n"
          "                     every pair without it use the static rule (fuse: no recomputation)\n"
          "  --no-profile       ignore --profile-db: the static rule only\n"
          "  --emit-candidates DIR  write each 'depend' pair as DIR/NNN.{fused,unfused}.ecg\n"
          "  --intensive        AGO intensive fusion: expanding pointwise -> depthwise [-> pointwise]\n"
          "                     convolution chains (inverted residuals; without the last conv where\n"
          "                     the depthwise output has other readers) become one row-tiled kernel,\n"
          "                     squeeze-excitation chains (GlobalAveragePool -> 1x1 conv -> 1x1\n"
          "                     conv [-> the scaling Mul]) one kernel, Conv [-> activation] ->\n"
          "                     MaxPool one kernel\n"
          "  --host-key         print this machine's profile-database key (JSON) and exit\n"
          "  --report FILE      JSON report (- = stderr): nodes, FLOPs, intermediate and peak live\n"
          "                     bytes and kernels before/after, compute/memory-intensive layers,\n"
          "                     blocks by fused mapping type, fusion_rate = nodes / kernels of the\n"
          "                     plan (every node outside a block one kernel; the lowered\n"
          "                     model.json's \"kernels\" also leaves out zero-copy Reshapes),\n"
          "                     fusion_rate_bound = nodes / Many-to-Many nodes (Table 3.3\n"
          "                     puts at most one in a block; only --intensive passes it)\n"
          "  -v, --verbose      the same as a one-screen table on stderr\n"
          "  -o, --output FILE  output ECG (default stdout)\n"
          "  --zstd             compress the output\n"
          "  -q, --quiet        errors only on stderr\n"
          "  -h, --help         this help\n"
          "  --version          print the version\n");
}

enum { OPT_PLAN = 1, OPT_OUTPUT, OPT_REPORT, OPT_PROFILE_DB, OPT_EMIT, OPT_NO_PROFILE, OPT_INTENSIVE, OPT_ZSTD,
       OPT_HOST_KEY, OPT_VERBOSE, OPT_QUIET, OPT_HELP, OPT_VERSION };

int main(int argc, char **argv) {
  static const cli_opt opts[] = {
      {"plan", 0, 1, OPT_PLAN},          {"output", 'o', 1, OPT_OUTPUT},        {"report", 0, 1, OPT_REPORT},
      {"profile-db", 0, 1, OPT_PROFILE_DB}, {"emit-candidates", 0, 1, OPT_EMIT}, {"no-profile", 0, 0, OPT_NO_PROFILE},
      {"intensive", 0, 0, OPT_INTENSIVE}, {"zstd", 0, 0, OPT_ZSTD},              {"host-key", 0, 0, OPT_HOST_KEY},
      {"verbose", 'v', 0, OPT_VERBOSE},   {"quiet", 'q', 0, OPT_QUIET},   {"help", 'h', 0, OPT_HELP},            {"version", 0, 0, OPT_VERSION},
      {0, 0, 0, 0}};
  const char *out = "-", *in = "-", *report = NULL, *db_path = NULL, *emit_dir = NULL, *val;
  int no_profile = 0, intensive = 0, verbose = 0, quiet = 0, have_in = 0, zstd = 0, c;
  fuse_plan plan = PLAN_DNNFUSION;
  const char *plan_name = "dnnfusion";
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
    case OPT_PLAN:
      plan_name = val;
      if (!strcmp(val, "none")) plan = PLAN_NONE;
      else if (!strcmp(val, "fixed")) plan = PLAN_FIXED;
      else if (!strcmp(val, "dnnfusion")) plan = PLAN_DNNFUSION;
      else { fprintf(stderr, PROG ": unknown plan '%s' (known: dnnfusion, fixed, none)\n", val); return 2; }
      break;
    case OPT_OUTPUT: out = val; break;
    case OPT_REPORT: report = val; break;
    case OPT_PROFILE_DB: db_path = val; break;
    case OPT_EMIT: emit_dir = val; break;
    case OPT_NO_PROFILE: no_profile = 1; break;
    case OPT_INTENSIVE: intensive = 1; break;
    case OPT_ZSTD: zstd = 1; break;
    case OPT_VERBOSE: verbose = 1; quiet = 0; break;
    case OPT_QUIET: quiet = 1; verbose = 0; break;
    case OPT_HELP: usage(stdout); return 0;
    case OPT_VERSION: printf(PROG " %s\n", ECG_VERSION_STRING); return 0;
    case OPT_HOST_KEY: { /* the key profile records of this machine carry */
      char cpu[256];
      const char *isa;
      int th;
      ecg_host_key(cpu, sizeof cpu, &isa, &th);
      printf("{\"cpu\": \"%s\", \"isa\": \"%s\", \"threads\": %d, \"device\": \"cpu\"}\n", cpu, isa, th);
      return 0;
    }
    }
  }
  if (!strcmp(in, "-") && isatty(fileno(stdin))) { fprintf(stderr, PROG ": no input (pipe an ECG in or name a file)\n"); usage(stderr); return 2; }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ecg_graph *g = NULL;
  int rc = ecg_read_path(in, &g, &e);
  if (rc) { fprintf(stderr, PROG ": %s\n", e.msg); return rc; }
  ecg_sizes before = ecg_measure(g, false);
  fuse_stats st;
  fuse_db *db = NULL;
  if (db_path && !no_profile && (rc = fuse_db_load(db_path, &db, &e)) != ECG_OK) {
    fprintf(stderr, PROG ": %s\n", e.msg);
    ecg_graph_free(g);
    return rc;
  }
  size_t sub_dropped = ecg_subgraphs_clear(g); /* new blocks could straddle them */
  if (sub_dropped) cli_note(PROG, quiet, "%zu partition subgraph(s) dropped (run ecg-partition after ecg-fuse)", sub_dropped);
  fuse_opts fo = {plan, db, emit_dir, intensive};
  rc = fuse_make_plan(g, &fo, &st, &e);
  fuse_db_free(db);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc == ECG_OK) rc = ecg_write_path(out, g, zstd ? 3 : 0, &e);
  if (rc != ECG_OK) { fprintf(stderr, PROG ": %s\n", e.msg); ecg_graph_free(g); return rc; }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ecg_sizes after = ecg_measure(g, true);
  long kernels = (long)g->n_nodes - st.fused_nodes + st.blocks;
  /* layers before/after, compute-intensive (a Many-to-Many operator in it) or memory-
   * intensive (dissertation Table 3.5); blocks by fused mapping type */
  int compute = 0, compute_after = 0, by_type[8] = {0};
  char *blk_compute = calloc(g->n_blocks + 1, 1);
  for (size_t i = 0; i < g->n_nodes; i++) {
    int m2m = fuse_node_mapping(g, g->nodes[i]) == ECG_MAP_MANY_TO_MANY, b = g->nodes[i]->fusion_block;
    compute += m2m;
    if (b < 0 || (size_t)b >= g->n_blocks) compute_after += m2m;
    else if (m2m && blk_compute) blk_compute[b] = 1;
  }
  for (size_t b = 0; b < g->n_blocks; b++) {
    compute_after += blk_compute && blk_compute[b];
    int t = (int)g->blocks[b]->mapping_type;
    if (t >= 0 && t < 8) by_type[t]++;
  }
  free(blk_compute);
  static const ecg_mapping types[] = {ECG_MAP_ONE_TO_ONE, ECG_MAP_ONE_TO_MANY, ECG_MAP_MANY_TO_MANY, ECG_MAP_REORGANIZE, ECG_MAP_SHUFFLE};
  double rate = kernels > 0 ? (double)g->n_nodes / (double)kernels : 0;
  /* Table 3.3 makes Many-to-Many -> Many-to-Many a fuse_break and a block's fused type is
   * Many-to-Many once one member is: a block holds at most one Many-to-Many operator, so a
   * plan without intensive fusion has at least one kernel per Many-to-Many node, and
   * nodes / Many-to-Many nodes bounds its fusion rate (the export, e.g. BatchNormalization
   * folded into the convolutions or not, decides the bound; only --intensive passes it) */
  double bound = compute > 0 ? (double)g->n_nodes / (double)compute : 0;
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  if (report) {
    FILE *f = !strcmp(report, "-") ? stderr : fopen(report, "w");
    if (!f) { perror(report); ecg_graph_free(g); return 1; }
    fprintf(f, "{\"stage\": \"ecg-fuse\", \"version\": \"%s\", \"time_ms\": %.3f, "
               "\"before\": {\"nodes\": %zu, \"flops\": %lld, \"intermediate_bytes\": %lld, \"peak_bytes\": %lld, \"kernels\": %zu}, "
               "\"after\": {\"nodes\": %zu, \"flops\": %lld, \"intermediate_bytes\": %lld, \"peak_bytes\": %lld, \"kernels\": %ld}, "
               "\"fuse\": {\"plan\": \"%s\", \"blocks\": %d, \"fused_nodes\": %d, \"fusion_rate\": %.3f, "
               "\"fusion_rate_bound\": %.3f, "
               "\"compute_intensive_layers\": %d, \"memory_intensive_layers\": %zu, "
               "\"layers_after\": {\"compute_intensive\": %d, \"memory_intensive\": %ld}, \"blocks_by_type\": {",
            ECG_VERSION_STRING, ms, before.nodes, (long long)before.flops, (long long)before.intermediate_bytes,
            (long long)before.peak_bytes, before.nodes, after.nodes, (long long)after.flops, (long long)after.intermediate_bytes,
            (long long)after.peak_bytes, kernels, plan_name, st.blocks, st.fused_nodes, rate, bound, compute, g->n_nodes - (size_t)compute,
            compute_after, kernels - compute_after);
    for (size_t k = 0; k < sizeof types / sizeof *types; k++)
      fprintf(f, "%s\"%s\": %d", k ? ", " : "", ecg_mapping_name(types[k]), by_type[types[k]]);
    fprintf(f, "}, \"seeds\": %d, \"through\": %d, \"depend\": %d, \"depend_profiled\": %d, \"depend_rejected\": %d, "
               "\"break\": %d, \"cycle_rejects\": %d, \"shape_rejects\": %d, \"intensive_chains\": %d, \"se_chains\": %d, "
               "\"conv_pool_chains\": %d, \"row_blocks\": %d, \"index_maps\": %d}}\n",
            st.seeds, st.through, st.depend, st.depend_profiled, st.depend_rejected, st.breaks, st.cycle_rejects, st.shape_rejects,
            st.intensive, st.se_chains, st.conv_pools, st.row_blocks, st.index_maps);
    if (f != stderr && fclose(f) != 0) { perror(report); ecg_graph_free(g); return 1; }
  }
  if (verbose) { /* one screen: the dissertation's Table 3.5 for this model */
    fprintf(stderr, PROG ": plan %s%s\n", plan_name, intensive ? " + intensive" : "");
    fprintf(stderr, "                        %14s %14s\n", "before", "after");
    fprintf(stderr, "  layers (kernels)      %14zu %14ld   fusion rate %.2f (Table 3.3 bound %.2f)\n", before.nodes, kernels,
            rate, bound);
    fprintf(stderr, "    compute-intensive   %14d %14d\n", compute, compute_after);
    fprintf(stderr, "    memory-intensive    %14zu %14ld\n", g->n_nodes - (size_t)compute, kernels - compute_after);
    fprintf(stderr, "  intermediate bytes    %14lld %14lld\n", (long long)before.intermediate_bytes, (long long)after.intermediate_bytes);
    fprintf(stderr, "  peak live bytes       %14lld %14lld\n", (long long)before.peak_bytes, (long long)after.peak_bytes);
    fprintf(stderr, "  blocks %d (%d nodes):", st.blocks, st.fused_nodes);
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) fprintf(stderr, " %s %d", ecg_mapping_name(types[k]), by_type[types[k]]);
    fprintf(stderr, "\n  decisions: %d through, %d depend (%d profiled, %d rejected), %d break; %d row blocks, %d index maps, "
                    "%d intensive chains (%d squeeze-excitation, %d conv-maxpool)\n",
            st.through, st.depend, st.depend_profiled, st.depend_rejected, st.breaks, st.row_blocks, st.index_maps, st.intensive,
            st.se_chains, st.conv_pools);
  }
  ecg_graph_free(g);
  return 0;
}
