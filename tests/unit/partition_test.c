/* Property and unit tests of ecg-partition (AGO, Xu et al., INFOCOM 2023, §IV; tools/partition/)
 * and of the partition subgraphs in libecg (format/block.c, validate.c):
 *   - CLUSTER (Algorithm 1) on >= 1000 seeded random DAGs of varied shapes (chains,
 *     trees, dense, residual windows, layered, fan-in), unit labels permuted: every unit in
 *     exactly one subgraph, the quotient graph acyclic (an independent DFS, not the code
 *     under test), no merged subgraph at or over Td, the Relay rules held;
 *   - the same shapes built as ECGs (Sum, Relu, MatMul, Reshape nodes, some fusion
 *     blocks) through pt_partition for both strategies: ecg_validate accepts them, the
 *     independent checks hold, weights are the sums of AGO Eq. 1, blocks stay whole, and
 *     the subgraphs survive a write/read and a compaction;
 *   - hand-made cases: AGO Fig. 9 (no subgraph holds Conv1 and Conv3 without Conv2), a
 *     chain merging under Td, and the validator rejecting a cyclic partition, a node in no
 *     subgraph or in two, a block split across subgraphs, non-dense ids.
 *
 *   make && cc -std=gnu11 -Iformat -Ibuild/gen -Itools/partition tests/unit/partition_test.c \
 *     build/tools/partition/cluster.o build/tools/partition/weight.o build/gen/pt_weights_blob.o \
 *     build/libecg.a -lprotobuf-c -lzstd -lm -o build/partition_test && build/partition_test
 */
#include <stdio.h>

#include "partition.h"
#include "unit.h"

static unsigned long long rng_state;
static unsigned rnd(void) { /* xorshift64*: the same sequence on every machine */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (unsigned)((rng_state * 2685821657736338717ULL) >> 33);
}
static int rint_(int n) { return n > 0 ? (int)(rnd() % (unsigned)n) : 0; }
static double runif(void) { return rnd() / 2147483648.0; }

/* A random DAG on n vertices 0..n-1 where every edge goes from a lower to a higher
 * vertex; shape picks the family. Edges into src/dst (capacity cap); returns the count. */
static int random_dag(int shape, int n, int *src, int *dst, int cap) {
  int ne = 0, width = 1 + rint_(6);
  double p = 0.03 + 0.4 * runif();
#define EDGE(a, b) do { if (ne < cap) { src[ne] = (a); dst[ne++] = (b); } } while (0)
  for (int i = 1; i < n; i++) {
    switch (shape) {
    case 0: EDGE(i - 1, i); break;                            /* chain */
    case 1: EDGE(rint_(i), i); break;                         /* random tree (fan-out) */
    case 2:                                                   /* dense random */
      for (int j = 0, k = 0; j < i && k < 4; j++) if (runif() < p) { EDGE(j, i); k++; }
      break;
    case 3: {                                                 /* residual: local window */
      int k = 1 + rint_(3);
      for (int t = 0; t < k; t++) { int j = i - 1 - rint_(i < 4 ? i : 4); EDGE(j, i); }
      break;
    }
    case 4: {                                                 /* layered, width w */
      int layer = i / width;
      if (layer == 0) break;
      int k = 1 + rint_(3);
      for (int t = 0; t < k; t++) EDGE((layer - 1) * width + rint_(width), i);
      break;
    }
    default:                                                  /* fan-in: sources merge late */
      if (i > n / 2) { EDGE(rint_(n / 2 + 1), i); if (runif() < 0.7) EDGE(i - 1, i); }
      break;
    }
  }
#undef EDGE
  return ne;
}

/* Independent check of a partition group[n] of a DAG: every group non-empty and the
 * quotient graph acyclic (iterative three-colour DFS). */
static bool quotient_ok(int n, const int *src, const int *dst, int ne, const int *group, int ng, char *why, size_t nwhy) {
  int *cnt = calloc((size_t)ng + 1, sizeof(int)), *color = calloc((size_t)ng + 1, sizeof(int));
  int *stack = malloc(sizeof(int) * ((size_t)ng + 1)), *it = calloc((size_t)ng + 1, sizeof(int));
  int *qa = malloc(sizeof(int) * ((size_t)ne + 1)), *qb = malloc(sizeof(int) * ((size_t)ne + 1));
  bool ok = true;
  for (int v = 0; v < n && ok; v++) {
    if (group[v] < 0 || group[v] >= ng) { snprintf(why, nwhy, "unit %d in group %d of %d", v, group[v], ng); ok = false; }
    else cnt[group[v]]++;
  }
  for (int s = 0; s < ng && ok; s++) if (!cnt[s]) { snprintf(why, nwhy, "group %d empty", s); ok = false; }
  int nq = 0;
  for (int k = 0; k < ne && ok; k++)
    if (group[src[k]] != group[dst[k]]) { qa[nq] = group[src[k]]; qb[nq++] = group[dst[k]]; }
  for (int s0 = 0; s0 < ng && ok; s0++) {
    if (color[s0]) continue;
    int sp = 0;
    stack[sp++] = s0;
    color[s0] = 1;
    while (sp && ok) {
      int u = stack[sp - 1], next = -1;
      for (; it[u] < nq; it[u]++)
        if (qa[it[u]] == u) {
          int w = qb[it[u]];
          if (color[w] == 1) { snprintf(why, nwhy, "quotient cycle through groups %d and %d", u, w); ok = false; break; }
          if (color[w] == 0) { next = w; it[u]++; break; }
        }
      if (!ok) break;
      if (next >= 0) { color[next] = 1; stack[sp++] = next; }
      else { color[u] = 2; sp--; }
    }
  }
  free(cnt); free(color); free(stack); free(it); free(qa); free(qb);
  return ok;
}

enum { MAXN = 160, MAXE = 4 * MAXN };

/* ---- CLUSTER on abstract DAGs */
static void abstract_dags(int count) {
  int src[MAXE], dst[MAXE], psrc[MAXE], pdst[MAXE], perm[MAXN], group[MAXN], cx[MAXN], ok_runs = 0, merged = 0;
  double w[MAXN];
  bool delim[MAXN];
  for (int t = 0; t < count; t++) {
    rng_state = 0x9E3779B97F4A7C15ULL ^ (unsigned long long)(t + 1) * 0xBF58476D1CE4E5B9ULL;
    int shape = t % 6, n = 1 + rint_(MAXN);
    int ne = random_dag(shape, n, src, dst, MAXE);
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) { int j = rint_(i + 1), x = perm[i]; perm[i] = perm[j]; perm[j] = x; }
    for (int k = 0; k < ne; k++) { psrc[k] = perm[src[k]]; pdst[k] = perm[dst[k]]; }
    for (int i = 0; i < n; i++) {
      w[i] = runif() < 0.1 ? 0.5 : exp(6 * runif()); /* 1 .. 400, a few light */
      cx[i] = runif() < 0.3;
      delim[i] = !cx[i] && runif() < 0.15;
    }
    pt_dag d = {n, ne, w, cx, delim, psrc, pdst};
    for (int strat = 0; strat < 2; strat++) {
      pt_rules r = strat ? (pt_rules){INFINITY, 1, true} : (pt_rules){50 + 2000 * runif(), -1, false};
      int ng = -1;
      pt_cluster_stats st;
      ecg_err e = {0};
      int rc = pt_cluster(&d, &r, group, &ng, &st, &e);
      char why[200] = "";
      bool ok = rc == ECG_OK && quotient_ok(n, psrc, pdst, ne, group, ng, why, sizeof why);
      /* the rules: a group of more than one unit stays under Td, with <= max_complex complex units and no delimiter */
      double gw[MAXN] = {0};
      int gn[MAXN] = {0}, gc[MAXN] = {0}, gd[MAXN] = {0};
      for (int i = 0; ok && i < n; i++) { gw[group[i]] += w[i]; gn[group[i]]++; gc[group[i]] += cx[i]; gd[group[i]] += delim[i]; }
      for (int s = 0; ok && s < ng; s++) {
        if (gn[s] < 2) continue;
        if (!(gw[s] < r.max_weight)) { snprintf(why, sizeof why, "group %d weighs %g >= Td %g", s, gw[s], r.max_weight); ok = false; }
        if (r.max_complex >= 0 && gc[s] > r.max_complex) { snprintf(why, sizeof why, "group %d holds %d complex units", s, gc[s]); ok = false; }
        if (r.delim_alone && gd[s]) { snprintf(why, sizeof why, "group %d merges a delimiter", s); ok = false; }
      }
      if (ok && st.merges != n - ng) { snprintf(why, sizeof why, "%d merges but %d units -> %d groups", st.merges, n, ng); ok = false; }
      merged += st.merges;
      if (ok) ok_runs++;
      else CHECK(false, "abstract DAG %d (shape %d, %d units, %d edges, %s): rc %d %s %s", t, shape, n, ne, strat ? "relay" : "ago", rc, e.msg, why);
    }
  }
  CHECK(ok_runs == 2 * count, "abstract DAGs: %d of %d runs hold every property", ok_runs, 2 * count);
  CHECK(merged > count, "abstract DAGs: CLUSTER merged only %d times over %d DAGs (the test would not see merges)", merged, count);
  printf("abstract DAGs: %d runs on %d DAGs, %d merges, all properties held in %d\n", 2 * count, count, merged, ok_runs);
}

/* ---- random ECGs */

/* Build the DAG as an ECG over [1,8] float tensors: a node with several predecessors is
 * a Sum, a single-predecessor node a Relu, MatMul (x W[8,8]) or Reshape; sources read the
 * graph input. Sinks' outputs are the graph outputs. Returns the graph. */
static ecg_graph *random_ecg(int n, const int *src, const int *dst, int ne) {
  ecg_graph *g = ecg_graph_new();
  g->opset = 13;
  int x = tens(g, "x", ECG_FLOAT, DIMS(1, 8), NULL);
  float wv[64];
  for (int i = 0; i < 64; i++) wv[i] = 0.01f * (float)i;
  int wt = cf32(g, "W", wv, DIMS(8, 8));
  int64_t shp[2] = {1, 8};
  int sh = ci64(g, "shape", shp, 2, -1);
  int *used = calloc((size_t)n + 1, sizeof(int)), outs[MAXN], no = 0;
  char name[32];
  for (int i = 0; i < n; i++) {
    int in[8], k = 0;
    for (int e2 = 0; e2 < ne && k < 8; e2++) if (dst[e2] == i) { in[k++] = g->nodes[src[e2]]->outputs[0]; used[src[e2]] = 1; }
    if (k == 0) in[k++] = x;
    snprintf(name, sizeof name, "y%d", i);
    int y = out(g, name);
    snprintf(name, sizeof name, "n%d", i);
    const char *op = k > 1 ? "Sum" : (const char *[]){"Relu", "MatMul", "Reshape", "Relu"}[rint_(4)];
    if (!strcmp(op, "MatMul")) in[k++] = wt;
    if (!strcmp(op, "Reshape")) in[k++] = sh;
    ecg_add_node(g, name, op, "", 13, k, in, 1, &y);
  }
  for (int i = 0; i < n; i++) if (!used[i]) outs[no++] = g->nodes[i]->outputs[0];
  set_io(g, &x, 1, outs, no);
  free(used);
  return g;
}

/* Stages (longest path) of the DAG, for choosing safe fusion blocks. */
static void dag_stages(int n, const int *src, const int *dst, int ne, int *st) {
  for (int i = 0; i < n; i++) st[i] = 0;
  for (int i = 0; i < n; i++) /* vertices are in topological order */
    for (int k = 0; k < ne; k++) if (dst[k] == i && st[src[k]] + 1 > st[i]) st[i] = st[src[k]] + 1;
}

/* The independent checks on g's stored partition. */
static bool ecg_partition_ok(const ecg_graph *g, pt_strategy s, const pt_weights *w, double td, bool weights, char *why,
                             size_t nwhy) {
  int nn = (int)g->n_nodes, group[MAXN], src[MAXE], dst[MAXE], ne = 0, seen[MAXN] = {0}, producer[4 * MAXN + 8];
  for (size_t k = 0; k < g->n_subgraphs; k++)
    for (size_t m = 0; m < g->subgraphs[k]->n_nodes; m++) {
      int i = g->subgraphs[k]->nodes[m];
      if (i < 0 || i >= nn || seen[i]++) { snprintf(why, nwhy, "node %d listed twice or out of range", i); return false; }
      group[i] = (int)k;
    }
  for (int i = 0; i < nn; i++) if (!seen[i]) { snprintf(why, nwhy, "node %d in no subgraph", i); return false; }
  ecg_producers(g, producer);
  for (int i = 0; i < nn; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t >= 0 && producer[t] >= 0 && ne < MAXE) { src[ne] = producer[t]; dst[ne++] = i; }
    }
  if (!quotient_ok(nn, src, dst, ne, group, (int)g->n_subgraphs, why, nwhy)) return false;
  for (size_t b = 0; b < g->n_blocks; b++)
    for (size_t m = 1; m < g->blocks[b]->n_nodes; m++)
      if (group[g->blocks[b]->nodes[m]] != group[g->blocks[b]->nodes[0]]) { snprintf(why, nwhy, "block %zu split", b); return false; }
  for (size_t k = 0; k < g->n_subgraphs; k++) {
    const ecg_subgraph *sg = g->subgraphs[k];
    double sum = 0, wv;
    int cx = 0, dl = 0, units = 0;
    for (size_t m = 0; m < sg->n_nodes; m++) {
      const ecg_node *n = g->nodes[sg->nodes[m]];
      ecg_err e;
      if (pt_node_weight(g, n, w, &wv, &e)) { snprintf(why, nwhy, "weight: %s", e.msg); return false; }
      sum += wv;
      const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
      cx += op->mapping == ECG_MAP_MANY_TO_MANY;
      dl += op->mapping == ECG_MAP_REORGANIZE || op->mapping == ECG_MAP_SHUFFLE;
      units += n->fusion_block < 0 || g->blocks[n->fusion_block]->nodes[0] == sg->nodes[m];
    }
    if (weights && fabs(sum - sg->weight) > 1e-9 * (1 + sum)) { snprintf(why, nwhy, "subgraph %zu weight %g, members sum to %g", k, sg->weight, sum); return false; }
    if (strcmp(sg->strategy, s == PT_RELAY ? "relay" : "ago")) { snprintf(why, nwhy, "subgraph %zu strategy '%s'", k, sg->strategy); return false; }
    if (units > 1 && s == PT_AGO && !(sum < td)) { snprintf(why, nwhy, "subgraph %zu of %d units weighs %g >= Td %g", k, units, sum, td); return false; }
    if (units > 1 && s == PT_RELAY && (cx > 1 || dl)) { snprintf(why, nwhy, "relay subgraph %zu: %d complex, %d delimiters", k, cx, dl); return false; }
  }
  return true;
}

static void random_ecgs(int count) {
  int src[MAXE], dst[MAXE], st[MAXN], ok_runs = 0, blocks = 0, multi = 0;
  pt_weights w;
  ecg_err e = {0};
  CHECK(pt_weights_load(NULL, &w, &e) == ECG_OK, "built-in weights: %s", e.msg);
  for (int t = 0; t < count; t++) {
    rng_state = 0xD1B54A32D192ED03ULL ^ (unsigned long long)(t + 1) * 0x94D049BB133111EBULL;
    int shape = t % 6, n = 1 + rint_(80);
    int ne = random_dag(shape, n, src, dst, MAXE);
    ecg_graph *g = random_ecg(n, src, dst, ne);
    int rc = ecg_infer_shapes(g, &e);
    CHECK(rc == ECG_OK, "random ECG %d: infer: %s", t, e.msg);
    if (rc) { ecg_graph_free(g); continue; }
    /* some fusion blocks: pairs producer -> consumer one stage apart, kept when the graph stays valid */
    dag_stages(n, src, dst, ne, st);
    for (int k = 0; k < ne; k++) {
      int a = src[k], b = dst[k];
      if (st[b] != st[a] + 1 || g->nodes[a]->fusion_block >= 0 || g->nodes[b]->fusion_block >= 0 || runif() < 0.6) continue;
      int id = ecg_block_add(g, (int[]){a, b}, 2, -1, &e);
      if (id < 0) continue;
      if (ecg_validate(g, &e) == ECG_OK) { blocks++; continue; }
      /* two blocks together can still make a block cycle: undo the last one */
      g->nodes[a]->fusion_block = g->nodes[b]->fusion_block = -1;
      protobuf_c_message_free_unpacked(&g->blocks[id]->base, NULL);
      g->n_blocks--;
    }
    rc = ecg_validate(g, &e);
    CHECK(rc == ECG_OK, "random ECG %d with blocks invalid before partitioning: %s", t, e.msg);
    for (int s = 0; s < 2 && rc == ECG_OK; s++) {
      double td = 3 + 60 * runif(); /* node weights here are ~2..9 */
      pt_cluster_stats cs;
      int mc;
      char why[1100] = "";
      int prc = pt_partition(g, (pt_strategy)s, &w, td, &cs, &mc, &e);
      bool ok = prc == ECG_OK;
      if (!ok) snprintf(why, sizeof why, "pt_partition: %s", e.msg);
      if (ok && ecg_validate(g, &e) != ECG_OK) { ok = false; snprintf(why, sizeof why, "ecg_validate: %s", e.msg); }
      if (ok) ok = ecg_partition_ok(g, (pt_strategy)s, &w, td, true, why, sizeof why);
      for (size_t k = 0; ok && k < g->n_subgraphs; k++) multi += g->subgraphs[k]->n_nodes > 1;
      if (ok && t % 50 == 0) { /* the subgraphs survive a write and a read */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ecg_graph *h = NULL;
        ok = ecg_write(f, g, t % 100 ? 0 : 3, &e) == ECG_OK;
        fclose(f);
        FILE *r = ok ? fmemopen(buf, len, "rb") : NULL;
        ok = r && ecg_read(r, &h, &e) == ECG_OK && h->n_subgraphs == g->n_subgraphs;
        for (size_t k = 0; ok && k < h->n_subgraphs; k++)
          ok = h->subgraphs[k]->n_nodes == g->subgraphs[k]->n_nodes && h->subgraphs[k]->weight == g->subgraphs[k]->weight &&
               !memcmp(h->subgraphs[k]->nodes, g->subgraphs[k]->nodes, g->subgraphs[k]->n_nodes * sizeof(int32_t));
        if (!ok) snprintf(why, sizeof why, "write/read lost the subgraphs");
        if (r) fclose(r);
        free(buf);
        ecg_graph_free(h);
      }
      if (ok) ok_runs++;
      else CHECK(false, "random ECG %d (shape %d, %d nodes, %zu blocks, %s, Td %.1f): %s", t, shape, n, g->n_blocks, s ? "relay" : "ago", td, why);
    }
    /* compaction: drop a sink node (and its graph output); the subgraphs follow */
    if (rc == ECG_OK && g->n_nodes > 1 && g->n_outputs > 1) {
      int y = g->outputs[g->n_outputs - 1], sink = -1;
      for (size_t i = 0; i < g->n_nodes; i++) if (g->nodes[i]->outputs[0] == y) sink = (int)i;
      bool keep[MAXN];
      for (size_t i = 0; i < g->n_nodes; i++) keep[i] = (int)i != sink;
      g->n_outputs--;
      size_t before = g->n_nodes;
      ecg_remap_report rep;
      char why[1100] = "";
      bool ok = ecg_compact(g, keep, &rep) == ECG_OK && g->n_nodes == before - 1;
      if (ok && ecg_validate(g, &e) != ECG_OK) { ok = false; snprintf(why, sizeof why, "%s", e.msg); }
      /* (weights are the partitioner's: a removed member leaves them as they were) */
      if (ok) ok = ecg_partition_ok(g, PT_RELAY, &w, INFINITY, false, why, sizeof why);
      CHECK(ok, "random ECG %d: after compaction: %s", t, why);
    }
    ecg_graph_free(g);
  }
  CHECK(ok_runs == 2 * count, "random ECGs: %d of %d partitions hold every property", ok_runs, 2 * count);
  CHECK(blocks > count / 2 && multi > count, "random ECGs: only %d blocks, %d multi-node subgraphs", blocks, multi);
  printf("random ECGs: %d partitions of %d graphs (%d fusion blocks, %d multi-node subgraphs), all properties held in %d\n",
         2 * count, count, blocks, multi, ok_runs);
}

/* ---- hand-made cases */

/* AGO Fig. 9: Conv1 -> Conv2 -> Conv3 and Conv1 -> Conv3. Grouping Conv1 with Conv3 alone
 * would make a cycle with Conv2; CLUSTER never does, whatever Td. */
static void fig9(void) {
  int src[] = {0, 1, 0}, dst[] = {1, 2, 2}, group[3], ng, cx[3] = {1, 1, 1};
  double w[] = {10, 1, 10};
  for (double td = 2; td < 40; td += 1) {
    pt_dag d = {3, 3, w, cx, NULL, src, dst};
    pt_rules r = {td, -1, false};
    ecg_err e;
    int rc = pt_cluster(&d, &r, group, &ng, NULL, &e);
    CHECK(rc == ECG_OK && !(group[0] == group[2] && group[1] != group[0]), "Fig. 9, Td %g: Conv1 and Conv3 grouped without Conv2", td);
  }
  /* A chain of 4 units of weight 1 under Td 100 becomes one subgraph; under Td 2.5 pairs. */
  int cs[] = {0, 1, 2}, cd[] = {1, 2, 3}, g4[4];
  double w4[] = {1, 1, 1, 1};
  pt_dag d = {4, 3, w4, NULL, NULL, cs, cd};
  pt_rules r = {100, -1, false};
  ecg_err e;
  CHECK(pt_cluster(&d, &r, g4, &ng, NULL, &e) == ECG_OK && ng == 1, "chain under Td 100: %d subgraphs, expected 1", ng);
  r.max_weight = 2.5;
  CHECK(pt_cluster(&d, &r, g4, &ng, NULL, &e) == ECG_OK && ng == 2 && g4[0] == g4[1] && g4[2] == g4[3],
        "chain under Td 2.5: %d subgraphs (%d %d %d %d), expected pairs", ng, g4[0], g4[1], g4[2], g4[3]);
  /* A cycle in the input is an error, not a partition. */
  int ys[] = {0, 1}, yd[] = {1, 0};
  pt_dag cyc = {2, 2, w4, NULL, NULL, ys, yd};
  CHECK(pt_cluster(&cyc, &r, g4, &ng, NULL, &e) == ECG_ERR_INPUT && strstr(e.msg, "cycle"), "a cyclic input: %s", e.msg);
}

/* The validator's subgraph rules, each broken once on a diamond a -> {b, c} -> d. */
static void validator(void) {
  int src[] = {0, 0, 1, 2}, dst[] = {1, 2, 3, 3};
  ecg_graph *g = random_ecg(4, src, dst, 4);
  ecg_err e = {0};
  CHECK(ecg_infer_shapes(g, &e) == ECG_OK, "diamond: %s", e.msg);
  struct { int sub[4], n; const char *want; } cases[] = {
      {{0, 1, 2, 0}, 3, "cycle"},  /* {a, d} {b} {c}: a -> b -> d */
      {{0, 0, 0, 0}, 1, NULL},     /* one subgraph: fine */
      {{0, 1, 1, 2}, 3, NULL},     /* {a} {b, c} {d}: fine */
  };
  for (int k = 0; k < 3; k++) {
    CHECK(ecg_subgraphs_set(g, cases[k].sub, cases[k].n, NULL, "ago", &e) == ECG_OK, "set: %s", e.msg);
    int rc = ecg_validate(g, &e);
    if (cases[k].want) CHECK(rc == ECG_ERR_INPUT && strstr(e.msg, cases[k].want), "case %d: rc %d '%s', expected '%s'", k, rc, e.msg, cases[k].want);
    else CHECK(rc == ECG_OK, "case %d: %s", k, e.msg);
  }
  /* now {a} {b, c} {d}: break it by hand */
  ecg_subgraph *s1 = g->subgraphs[1];
  s1->n_nodes = 1; /* c in no subgraph */
  CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "in no subgraph"), "uncovered node: %s", e.msg);
  s1->n_nodes = 2;
  s1->nodes[1] = 0; /* a twice (and c uncovered) */
  CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "exactly one"), "node twice: %s", e.msg);
  s1->nodes[1] = 2;
  s1->id = 5;
  CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "dense"), "ids not dense: %s", e.msg);
  s1->id = 1;
  CHECK(ecg_validate(g, &e) == ECG_OK, "restored: %s", e.msg);
  CHECK(ecg_block_add(g, (int[]){0, 1}, 2, -1, &e) >= 0, "block a,b: %s", e.msg);
  CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "split across subgraphs"), "split block: %s", e.msg);
  CHECK(ecg_subgraphs_clear(g) == 3 && ecg_validate(g, &e) == ECG_OK, "cleared: %s", e.msg);
  ecg_graph_free(g);
}

int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 1200;
  fig9();
  validator();
  abstract_dags(count);
  random_ecgs(count);
  return unit_summary();
}
