/* ecg-lower --layout: global layout selection on a fused ECG (GCD², Niu dissertation
 * §4.4.1-4.4.2, on the CPU layouts NCHW, NCHWc8, NCHWc16).
 *
 * Vertices are the kernels: each fusion block, and each node in no block. A vertex may
 * take an NCHWc layout when every non-constant tensor it reads or writes is a 4-D float32
 * tensor and either its dominant node is a 2-D convolution the NCHWc kernels compute
 * (ecg_rt1_nchwc_conv2d_supported: group 1 or depthwise; ecg_conv_geom_resolve, so no
 * operator name is compared) with members elementwise (ECG_PROP_ELEMWISE) over same-shape
 * operands, or it is one 2-D max/average pool, one GlobalAveragePool or one channel
 * concatenation of 16-channel multiples (nchwc_other), or a squeeze-and-excitation block of
 * a batch of one (chain.h ecg_se_match with the scale: ecg_rt1_se on NCHWc x and y); every
 * other vertex stays NCHW. A pool or concat chosen NCHWc
 * that is in no block gets a block of its own (ecg_block_add) to carry the layout. Costs are measured on this machine
 * (scripts/layout_costs.sh: `ecg-lower --layout-keys` lists the signatures, rt_nchwc_test
 * --costs times them; JSON lines keyed by cpu, isa, threads and device, DESIGN.md
 * "Measured costs"): a conv vertex costs its kernel's time in each layout; an elementwise,
 * pool, concat or squeeze-and-excitation vertex costs the same in every layout and is not counted (squeezenet1_1's
 * MaxPools measured 71/30 us NCHW against 76/33 NCHWc16 in the model, its Concats move
 * nothing in either); an edge costs the reorder of
 * its tensor (NCHW -> NCHWc, NCHWc -> NCHW, or both between NCHWc8 and NCHWc16); graph
 * inputs and outputs stay NCHW, so a vertex reading or writing one pays that reorder.
 * The solvers are layout.c's. The chosen layouts are written into the blocks' `layout`
 * annotation (format/ECG.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "ecg_arch.h"
#include "ecg_rt_id.h" /* ECG_RT_SOURCE_ID: the embedded runtime's source id (build/gen, scripts/rt_id.sh) */
#include "jsonl.h"
#include "layout.h"
#include "lower.h"
#include "layout_sel.h"
#include "emit/emit.h"

#define NL 3 /* NCHW, NCHWc8, NCHWc16 */
static const char *const lay_name[NL] = {"", "NCHWc8", "NCHWc16"};
static const char *const mode_name[] = {"nchw", "nchwc8", "nchwc16", "local", "global"};

int lw_layout_parse(const char *s) {
  for (int i = 0; i < 5; i++)
    if (!strcmp(s, mode_name[i])) return i;
  return -1;
}

typedef struct {
  int nv;
  int *vert;       /* per node: its vertex */
  int *order;      /* vertex ids in topological order: order[i] */
  int *pos;        /* per vertex: position in order */
  int *dom;        /* per vertex: the conv node whose time is its cost, -1 none */
  int *ok;         /* per vertex: may take an NCHWc layout */
  int *block;      /* per vertex: the fusion block, -1 a lone node */
  char **conv_sig; /* per vertex with dom >= 0 */
  int *other;      /* per vertex: one pool or channel concat node (nchwc_other), alone */
} lgraph;

static int is_float4(const ecg_graph *g, int t, int64_t *d) {
  const ecg_tensor *x = g->tensors[t];
  return x->dtype == 1 && ecg_tensor_dims(x, d) == 4 && d[0] > 0 && d[1] > 0 && d[2] > 0 && d[3] > 0;
}

/* A mean over the spatial dims of a float32 4-D x (a reduction of the registry's table that
 * maps nothing, sums and divides by the count, over axes {2, 3} exactly): a
 * GlobalAveragePool (mnasnet1_0 ends on x.mean([2, 3])). Its output [n, c, 1, 1]
 * (keepdims 1), or [n, c] (keepdims 0) with c a multiple of 16, which has the bytes of
 * [n, c/C, 1, 1, C] in either NCHWc layout (flat_mean: the NCHWc kernel writes it as it
 * lies, no reorder). */
static int spatial_mean(const ecg_graph *g, const ecg_node *n) {
  const ecg_reduction *r = ecg_reduction_of(lw_op(n));
  int64_t d[ECG_MAX_RANK], o[ECG_MAX_RANK];
  int red[ECG_MAX_RANK];
  if (!r || r->map != ECG_RED_MAP_NONE || r->combine != ECG_RED_SUM || r->fin != ECG_RED_FIN_MEAN || n->n_inputs < 1 ||
      n->inputs[0] < 0 || !is_float4(g, n->inputs[0], d) || ecg_reduced_dims(g, n, 4, red) || red[0] || red[1] || !red[2] || !red[3])
    return 0;
  const ecg_tensor *y = g->tensors[n->outputs[0]];
  if (is_float4(g, n->outputs[0], o)) return 1;
  return y->dtype == 1 && ecg_tensor_dims(y, o) == 2 && o[0] == d[0] && o[1] == d[1] && d[1] % 16 == 0;
}
/* t is the 2-D output of a spatial_mean node: NCHW bytes whichever layout its kernel runs in */
static int flat_mean(const ecg_graph *g, const int *prod, int t) {
  int64_t d[ECG_MAX_RANK];
  return prod[t] >= 0 && !is_float4(g, t, d) && spatial_mean(g, g->nodes[prod[t]]);
}

/* The kernels other than convolutions that have NCHWc forms, for a node n alone in its
 * vertex: 1 a 2-D MaxPool/AveragePool (ecg_conv_geom_resolve's pool geometry; float32 4-D
 * operands, one output: ecg_rt1_nchwc_maxpool2d / avgpool2d), 3 a GlobalAveragePool or a
 * spatial_mean
 * (ecg_rt1_nchwc_global_avgpool), 2 a channel concatenation (a
 * data-movement operator, ECG_PROP_MOVE, whose float32 4-D inputs, two or more, share the
 * output's batch and spatial dims and whose channels, each a multiple of 16, add up to the
 * output's: for channel counts that are multiples of C, NCHWc places each input's channels
 * in one contiguous slab at the same byte offset as NCHW does, so the NCHW Concat moves the
 * same bytes and a producer can write its slab in place); 0 otherwise. */
static int nchwc_other(const ecg_graph *g, const ecg_node *n) {
  int64_t d[ECG_MAX_RANK], o[ECG_MAX_RANK];
  if (lw_op(n) == ECG_OP_NONE || n->n_outputs != 1 || n->outputs[0] < 0) return 0;
  if (spatial_mean(g, n)) return 3;
  if (!is_float4(g, n->outputs[0], o)) return 0;
  ecg_conv_geom gm;
  ecg_err ig = {0};
  if (ecg_conv_geom_resolve(g, n, &gm, &ig) == ECG_OK && gm.pool && gm.sp == 2 && !gm.transposed)
    return n->n_inputs >= 1 && n->inputs[0] >= 0 && is_float4(g, n->inputs[0], d) ? 1 : 0;
  if (lw_op(n) == ECG_OP_GlobalAveragePool) /* the emitters' own operator test (emit/nn.c) */
    return n->n_inputs >= 1 && n->inputs[0] >= 0 && is_float4(g, n->inputs[0], d) ? 3 : 0;
  const ecg_op_info *op = ecg_op_get(lw_op(n));
  if (!op || !(op->props & ECG_PROP_MOVE) || n->n_inputs < 2 || o[1] % 16) return 0;
  int64_t sum = 0;
  for (size_t k = 0; k < n->n_inputs; k++) {
    int t = n->inputs[k];
    if (t < 0 || g->tensors[t]->is_const || !is_float4(g, t, d) || d[0] != o[0] || d[2] != o[2] || d[3] != o[3] || d[1] % 16)
      return 0;
    sum += d[1];
  }
  return sum == o[1] ? 2 : 0;
}

static void reorder_sig(const ecg_graph *g, int t, char *buf, size_t n) {
  int64_t d[ECG_MAX_RANK];
  ecg_tensor_dims(g->tensors[t], d);
  snprintf(buf, n, "reorder %lld %lld %lld", (long long)d[0], (long long)d[1], (long long)(d[2] * d[3]));
}

/* The vertex of node i's block or the node, members listed. */
static int build(const ecg_graph *g, lgraph *G, ecg_err *e) {
  size_t nn = g->n_nodes;
  memset(G, 0, sizeof *G);
  G->vert = malloc((nn + 1) * sizeof(int));
  int nv = 0;
  int *bv = malloc((g->n_blocks + 1) * sizeof(int));
  if (!G->vert || !bv) { free(bv); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  for (size_t b = 0; b < g->n_blocks; b++) bv[b] = -1;
  for (size_t i = 0; i < nn; i++) {
    int b = g->nodes[i]->fusion_block;
    if (b >= 0) {
      if (bv[b] < 0) bv[b] = nv++;
      G->vert[i] = bv[b];
    } else
      G->vert[i] = nv++;
  }
  G->nv = nv;
  G->order = malloc((nv + 1) * sizeof(int));
  G->pos = malloc((nv + 1) * sizeof(int));
  G->dom = malloc((nv + 1) * sizeof(int));
  G->ok = malloc((nv + 1) * sizeof(int));
  G->block = malloc((nv + 1) * sizeof(int));
  G->conv_sig = calloc(nv + 1, sizeof(char *));
  G->other = calloc(nv + 1, sizeof(int));
  int *prod = malloc((g->n_tensors + 1) * sizeof(int)), *indeg = calloc(nv + 1, sizeof(int));
  int *elem = malloc((nv + 1) * sizeof(int));
  if (!G->order || !G->pos || !G->dom || !G->ok || !G->block || !G->conv_sig || !G->other || !prod || !indeg || !elem) {
    free(bv); free(prod); free(indeg); free(elem);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  ecg_producers(g, prod);
  for (int v = 0; v < nv; v++) G->dom[v] = -1, G->ok[v] = 1, G->block[v] = -1, elem[v] = 1;
  for (size_t b = 0; b < g->n_blocks; b++)
    if (bv[b] >= 0) G->block[bv[b]] = (int)b;
  /* eligibility: 4-D float operands everywhere; a supported conv dominant or all elementwise */
  for (size_t i = 0; i < nn; i++) {
    const ecg_node *n = g->nodes[i];
    int v = G->vert[i];
    int64_t d[ECG_MAX_RANK], d0[ECG_MAX_RANK];
    const ecg_op_info *op = lw_op(n) == ECG_OP_NONE ? NULL : ecg_op_get(lw_op(n));
    int ew = op && (op->props & ECG_PROP_ELEMWISE), have0 = 0;
    for (size_t k = 0; k < n->n_outputs; k++) {
      if (n->outputs[k] < 0) continue;
      if (!is_float4(g, n->outputs[k], d)) G->ok[v] = G->ok[v] && flat_mean(g, prod, n->outputs[k]);
      else if (!have0) { memcpy(d0, d, sizeof d); have0 = 1; }
    }
    for (size_t k = 0; k < n->n_inputs; k++) {
      int t = n->inputs[k];
      if (t < 0) continue;
      if (g->tensors[t]->is_const) { /* an elementwise member's constants: scalars only */
        if (ew && ecg_tensor_numel(g->tensors[t]) != 1) ew = 0;
        continue;
      }
      if (!is_float4(g, t, d)) G->ok[v] = 0;
      else if (!have0 || memcmp(d, d0, 4 * sizeof d[0])) ew = 0; /* elementwise only on same shapes */
    }
    int is_conv = 0;
    int isdom = G->block[v] >= 0 ? g->blocks[G->block[v]]->dominant == (int)i : 1;
    ecg_conv_geom gm;
    ecg_err ig = {0};
    if (isdom && lw_op(n) != ECG_OP_NONE && ecg_conv_geom_resolve(g, n, &gm, &ig) == ECG_OK && !gm.transposed && !gm.pool &&
        gm.sp == 2 && gm.w >= 0 && g->tensors[n->inputs[gm.w]]->is_const) {
      /* the condition of ecg_rt1_nchwc_conv2d_supported (runtime/ecg_nchwc.h) */
      if (gm.group == 1 || (gm.group == gm.c && gm.m == gm.c)) {
        G->dom[v] = (int)i;
        char s[256];
        snprintf(s, sizeof s, "conv %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld",
                 (long long)gm.n, (long long)gm.c, (long long)gm.in[0], (long long)gm.in[1], (long long)gm.m,
                 (long long)gm.k[0], (long long)gm.k[1], (long long)gm.s[0], (long long)gm.s[1], (long long)gm.d[0],
                 (long long)gm.d[1], (long long)gm.pb[0], (long long)gm.pb[1], (long long)gm.pe[0], (long long)gm.pe[1],
                 (long long)gm.group);
        G->conv_sig[v] = strdup(s);
        is_conv = 1;
      }
    }
    if (!is_conv && nchwc_other(g, n) && (G->block[v] < 0 || g->blocks[G->block[v]]->n_nodes == 1)) {
      G->other[v] = 1; /* a pool or channel concat alone in its vertex */
      is_conv = 1;
    }
    if (!is_conv && !ew) elem[v] = 0; /* a member the NCHWc kernels and epilogues cannot run */
    for (size_t o = 0; o < g->n_outputs; o++) /* graph outputs stay NCHW: their producers too */
      for (size_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] == g->outputs[o]) G->ok[v] = 0;
  }
  for (size_t b = 0; b < g->n_blocks; b++) { /* squeeze-and-excitation blocks: ecg_rt1_se on NCHWc x and y */
    ecg_se_chain se;
    int64_t d[ECG_MAX_RANK];
    const ecg_block *B = g->blocks[b];
    if (bv[b] < 0 || B->n_nodes < 2 || ecg_se_match(g, B->nodes, (int)B->n_nodes, &se) != 0 || se.scale < 0 ||
        !is_float4(g, se.x, d) || d[0] != 1)
      continue;
    int v = bv[b];
    G->other[v] = 1, elem[v] = 1, G->dom[v] = -1; /* its 1x1-plane convs run as in NCHW: costed alike */
    free(G->conv_sig[v]);
    G->conv_sig[v] = NULL;
  }
  for (size_t i = 0; i < nn; i++) { /* control flow reads captured tensors where they lie: NCHW */
    const ecg_op_info *op = lw_op(g->nodes[i]) == ECG_OP_NONE ? NULL : ecg_op_get(lw_op(g->nodes[i]));
    if (!op || !(op->props & ECG_PROP_CONTROL)) continue;
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t >= 0 && prod[t] >= 0) G->ok[G->vert[prod[t]]] = 0;
    }
  }
  for (int v = 0; v < nv; v++) /* NCHWc lowering: conv blocks, and pools and channel concats */
    if (!elem[v] || (!G->other[v] && (G->block[v] < 0 || G->dom[v] < 0))) G->ok[v] = 0;
  /* topological order of the quotient graph (Kahn) */
  for (size_t i = 0; i < nn; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t >= 0 && prod[t] >= 0 && G->vert[prod[t]] != G->vert[i]) indeg[G->vert[i]]++;
    }
  int head = 0, tail = 0;
  for (int v = 0; v < nv; v++)
    if (!indeg[v]) G->order[tail++] = v;
  /* members per vertex: scan all nodes per popped vertex (graphs of a few hundred kernels) */
  while (head < tail) {
    int v = G->order[head++];
    for (size_t i = 0; i < nn; i++) {
      if (G->vert[i] != v) continue;
      for (size_t o = 0; o < g->nodes[i]->n_outputs; o++) {
        int t = g->nodes[i]->outputs[o];
        if (t < 0) continue;
        for (size_t j = 0; j < nn; j++) {
          if (G->vert[j] == v) continue;
          for (size_t k = 0; k < g->nodes[j]->n_inputs; k++)
            if (g->nodes[j]->inputs[k] == t && --indeg[G->vert[j]] == 0) G->order[tail++] = G->vert[j];
        }
      }
    }
  }
  free(bv); free(prod); free(indeg); free(elem);
  if (tail != nv) return ecg_errf(e, ECG_ERR_INPUT, "the fusion blocks form a cycle: no layout selection");
  for (int i = 0; i < nv; i++) G->pos[G->order[i]] = i;
  return ECG_OK;
}

static void lgraph_free(lgraph *G) {
  if (G->conv_sig)
    for (int v = 0; v < G->nv; v++) free(G->conv_sig[v]);
  free(G->conv_sig); free(G->vert); free(G->order); free(G->pos); free(G->dom); free(G->ok); free(G->block); free(G->other);
}

/* ---------------------------------------------------------------- the cost database */
typedef struct {
  char **sig;
  double (*ms)[4];
  int n;
} ldb;

static int db_load(const char *path, ldb *db, ecg_err *e) {
  memset(db, 0, sizeof *db);
  FILE *f = fopen(path, "r");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: cannot read the layout cost database", path);
  char hcpu[256], cpu[256], isa[32], dev[32], sig[256], rtid[64];
  const char *hisa;
  int hthreads, cap = 0;
  ecg_host_key(hcpu, sizeof hcpu, &hisa, &hthreads);
  char *line = NULL;
  size_t lcap = 0;
  int rc = ECG_OK;
  while (rc == ECG_OK && getline(&line, &lcap, f) > 0) {
    double th;
    if (!jsonl_str(line, "cpu", cpu, sizeof cpu) || !jsonl_str(line, "isa", isa, sizeof isa) ||
        !jsonl_num(line, "threads", &th) || !jsonl_str(line, "signature", sig, sizeof sig))
      continue;
    if (strcmp(cpu, hcpu) || strcmp(isa, hisa) || (int)th != hthreads) continue;
    if (jsonl_str(line, "device", dev, sizeof dev) && strcmp(dev, "cpu")) continue;
    /* measured with another runtime (scripts/layout_costs.sh's "rt"): its kernels are not
     * the ones this lowering emits (a line without "rt", written by hand, is taken) */
    if (jsonl_str(line, "rt", rtid, sizeof rtid) && strcmp(rtid, ECG_RT_SOURCE_ID)) continue;
    double m[4];
    const char *k4[2][4] = {{"nchw_ms", "nchwc8_ms", "nchwc16_ms", NULL}, {"to8_ms", "from8_ms", "to16_ms", "from16_ms"}};
    int tr = !strncmp(sig, "reorder", 7);
    for (int j = 0; j < 4; j++) m[j] = k4[tr][j] && jsonl_num(line, k4[tr][j], &m[j]) ? m[j] : INFINITY;
    if (db->n == cap) {
      cap = cap ? 2 * cap : 64;
      char **s2 = realloc(db->sig, cap * sizeof *s2);
      double(*m2)[4] = s2 ? realloc(db->ms, cap * sizeof *m2) : NULL;
      if (s2) db->sig = s2;
      if (m2) db->ms = m2;
      if (!s2 || !m2) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    }
    db->sig[db->n] = strdup(sig);
    memcpy(db->ms[db->n++], m, sizeof m);
  }
  free(line);
  fclose(f);
  return rc;
}

static const double *db_find(const ldb *db, const char *sig) {
  for (int i = db->n - 1; i >= 0; i--) /* the latest measurement wins */
    if (db->sig[i] && !strcmp(db->sig[i], sig)) return db->ms[i];
  return NULL;
}

static void db_free(ldb *db) {
  for (int i = 0; i < db->n; i++) free(db->sig[i]);
  free(db->sig);
  free(db->ms);
}

/* Whether tensor t, 4-D [n, c, h, w], has the same bytes in layouts a and b (0 NCHW, else
 * the block C): a batch of one on a 1x1 plane (a GlobalAveragePool's output, an SE
 * vector) holds its c values first and in order in every layout; read as NCHW (b = 0) the
 * NCHWc zero lanes after them are never read, read as NCHWc every lane must exist: c a
 * multiple of b's block. No reorder is emitted or costed between such layouts. */
static int same_bytes(const ecg_graph *g, int t, int a, int b) {
  int64_t d[ECG_MAX_RANK];
  const int lanes[NL] = {0, 8, 16};
  if (a == b) return 1;
  if (!is_float4(g, t, d) || d[0] != 1 || d[2] * d[3] != 1) return 0;
  return b == 0 || d[1] % lanes[b] == 0;
}

/* ms of reordering tensor t from layout a to b (0 when equal) */
static double tcost(const double *r, int a, int b) {
  if (a == b) return 0;
  double from = a == 0 ? 0 : r[a == 1 ? 1 : 3], to = b == 0 ? 0 : r[b == 1 ? 0 : 2];
  return from + to;
}

/* ---------------------------------------------------------------- the pass */

int lw_layout_keys(const ecg_graph *g, FILE *out, ecg_err *e) {
  lgraph G;
  int rc = build(g, &G, e);
  for (int v = 0; rc == ECG_OK && v < G.nv; v++)
    if (G.conv_sig[v] && G.ok[v]) fprintf(out, "%s\n", G.conv_sig[v]);
  for (size_t t = 0; rc == ECG_OK && t < g->n_tensors; t++) {
    int64_t d[ECG_MAX_RANK];
    if (!g->tensors[t]->is_const && is_float4(g, (int)t, d)) {
      char s[128];
      reorder_sig(g, (int)t, s, sizeof s);
      fprintf(out, "%s\n", s);
    }
  }
  lgraph_free(&G);
  return rc;
}

int lw_layout_select(ecg_graph *g, int mode, const char *db_path, sbuf *json, ecg_err *e) {
  lgraph G;
  ldb db = {0};
  int rc = build(g, &G, e);
  if (rc == ECG_OK) rc = db_load(db_path, &db, e);
  int nv = G.nv, ne = 0, cap = 0;
  int *src = NULL, *dst = NULL;
  double *cost = calloc((size_t)nv * NL + 1, sizeof *cost), *tc = NULL;
  int *prod = malloc((g->n_tensors + 1) * sizeof *prod);
  if (rc == ECG_OK && (!cost || !prod)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK) ecg_producers(g, prod);
  /* vertex costs */
  for (int v = 0; rc == ECG_OK && v < nv; v++) {
    int p = G.pos[v];
    for (int l = 1; l < NL; l++) cost[(size_t)p * NL + l] = G.ok[v] ? 0 : INFINITY;
    if (G.ok[v] && G.conv_sig[v]) {
      const double *m = db_find(&db, G.conv_sig[v]);
      if (!m) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': no measured layout cost for '%s' in %s for this CPU (run scripts/layout_costs.sh)",
                      g->nodes[G.dom[v]]->name, G.conv_sig[v], db_path);
        break;
      }
      for (int l = 0; l < NL; l++) cost[(size_t)p * NL + l] = m[l];
    }
  }
  /* edges (one per tensor and consuming vertex), graph inputs and outputs */
  for (size_t i = 0; rc == ECG_OK && i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    int v = G.vert[i];
    for (size_t k = 0; rc == ECG_OK && k < n->n_inputs; k++) {
      int t = n->inputs[k];
      int64_t d[ECG_MAX_RANK];
      if (t < 0 || g->tensors[t]->is_const || !is_float4(g, t, d)) continue;
      int u = prod[t] >= 0 ? G.vert[prod[t]] : -1;
      if (u == v) continue;
      int dup = 0; /* the same tensor read twice by one vertex: one reorder */
      for (size_t i2 = 0; i2 < i && !dup; i2++)
        if (G.vert[i2] == v)
          for (size_t k2 = 0; k2 < g->nodes[i2]->n_inputs; k2++) dup |= g->nodes[i2]->inputs[k2] == t;
      for (size_t k2 = 0; k2 < k; k2++) dup |= n->inputs[k2] == t;
      if (dup) continue;
      char s[128];
      reorder_sig(g, t, s, sizeof s);
      const double *r = db_find(&db, s);
      if (!r && (G.ok[v] || (u >= 0 && G.ok[u]))) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "tensor '%s': no measured layout cost for '%s' in %s for this CPU (run scripts/layout_costs.sh)",
                      g->tensors[t]->name, s, db_path);
        break;
      }
      if (!r) continue; /* both ends NCHW-only */
      if (u < 0) { /* a graph input: NCHW in, reordered by the consumer */
        for (int l = 1; l < NL; l++) cost[(size_t)G.pos[v] * NL + l] += same_bytes(g, t, 0, l) ? 0 : tcost(r, 0, l);
        continue;
      }
      if (ne == cap) {
        cap = cap ? 2 * cap : 64;
        int *s2 = realloc(src, cap * sizeof *s2), *d2 = s2 ? realloc(dst, cap * sizeof *d2) : NULL;
        double *t2 = d2 ? realloc(tc, (size_t)cap * NL * NL * sizeof *t2) : NULL;
        if (s2) src = s2;
        if (d2) dst = d2;
        if (t2) tc = t2;
        if (!t2) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      }
      src[ne] = G.pos[u], dst[ne] = G.pos[v];
      for (int a = 0; a < NL; a++)
        for (int b = 0; b < NL; b++) tc[((size_t)ne * NL + a) * NL + b] = same_bytes(g, t, a, b) ? 0 : tcost(r, a, b);
      ne++;
    }
  }
  for (size_t o = 0; rc == ECG_OK && o < g->n_outputs; o++) { /* graph outputs stay NCHW */
    int t = g->outputs[o];
    int64_t d[ECG_MAX_RANK];
    if (t < 0 || prod[t] < 0 || !is_float4(g, t, d)) continue;
    char s[128];
    reorder_sig(g, t, s, sizeof s);
    const double *r = db_find(&db, s);
    int v = G.vert[prod[t]];
    if (!r && G.ok[v]) { rc = ecg_errf(e, ECG_ERR_INPUT, "graph output '%s': no measured cost for '%s' in %s", g->tensors[t]->name, s, db_path); break; }
    if (r)
      for (int l = 1; l < NL; l++) cost[(size_t)G.pos[v] * NL + l] += same_bytes(g, t, l, 0) ? 0 : tcost(r, l, 0);
  }
  if (rc == ECG_OK) {
    lw_lsel P = {nv, NL, cost, ne, src, dst, tc};
    int *ch[5], exact = 0, nd = 0, ncut = 0;
    double pred[5], gcd2 = -1;
    for (int m = 0; m < 5; m++) ch[m] = malloc((size_t)(nv + 1) * sizeof(int));
    int *gc = malloc((size_t)(nv + 1) * sizeof(int));
    if (!ch[0] || !ch[1] || !ch[2] || !ch[3] || !ch[4] || !gc) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    else {
      for (int m = 0; m < 3; m++) { /* fixed: every eligible vertex in that layout */
        for (int p = 0; p < nv; p++) ch[m][p] = cost[(size_t)p * NL + m] < INFINITY ? m : 0;
        pred[m] = lw_lsel_cost(&P, ch[m]);
      }
      pred[3] = lw_lsel_local(&P, ch[3]);
      pred[4] = lw_lsel_dp(&P, 1 << 14, ch[4], &exact);
      gcd2 = lw_lsel_gcd2(&P, 6, gc, &nd, &ncut);
      if (pred[4] < 0) rc = ecg_errf(e, ECG_ERR_INTERNAL, "layout selection: out of memory");
      else if (gcd2 >= 0 && gcd2 < pred[4]) { /* a beam DP can lose to the heuristic */
        memcpy(ch[4], gc, (size_t)nv * sizeof(int));
        pred[4] = gcd2;
      }
    }
    if (rc == ECG_OK) {
      int count[NL] = {0}, eligible = 0, measured = 0;
      for (int v = 0; v < nv && rc == ECG_OK; v++) {
        int l = ch[mode][G.pos[v]];
        count[l]++;
        if (G.block[v] < 0 && l) { /* a lone pool or concat in NCHWc: a block of its own carries the layout */
          for (size_t i = 0; i < g->n_nodes; i++)
            if (G.vert[i] == v) {
              int node = (int)i;
              G.block[v] = ecg_block_add(g, &node, 1, -1, e);
              break;
            }
          if (G.block[v] < 0) rc = ECG_ERR_INTERNAL;
        }
        if (G.block[v] >= 0) {
          ecg_block *b = g->blocks[G.block[v]];
          if (b->layout && b->layout != protobuf_c_empty_string) free(b->layout);
          b->layout = strdup(lay_name[l]);
        }
        eligible += G.ok[v];
        measured += G.ok[v] && G.conv_sig[v];
      }
      if (rc == ECG_OK) {
        sb_printf(json, "\"layout\": {\"mode\": \"%s\", \"db\": ", mode_name[mode]);
        lw_json_str(json, db_path);
        sb_printf(json, ", \"vertices\": %d, \"eligible\": %d, \"measured_convs\": %d, \"edges\": %d, \"predicted_ms\": {", nv,
                  eligible, measured, ne);
        for (int m = 0; m < 5; m++) sb_printf(json, "%s\"%s\": %.6f", m ? ", " : "", mode_name[m], pred[m]);
        sb_printf(json, "}, \"dp_exact\": %s, \"gcd2_ms\": %.6f, \"dominant_cuts\": %d, \"complementary_cuts\": %d, "
                        "\"chosen\": {\"NCHW\": %d, \"NCHWc8\": %d, \"NCHWc16\": %d}}",
                  exact ? "true" : "false", gcd2, nd, ncut, count[0], count[1], count[2]);
      }
    }
    for (int m = 0; m < 5; m++) free(ch[m]);
    free(gc);
  }
  free(cost); free(tc); free(src); free(dst); free(prod);
  db_free(&db);
  lgraph_free(&G);
  return rc;
}

/* ---------------------------------------------------------------- lowering the layouts */

int lw_block_lanes(const ecg_graph *g, int b) {
  const char *l = b >= 0 && (size_t)b < g->n_blocks ? g->blocks[b]->layout : NULL;
  return !l || !l[0] ? 0 : !strcmp(l, "NCHWc8") ? 8 : !strcmp(l, "NCHWc16") ? 16 : 0;
}

static size_t padded_floats(const int64_t *d, int C) {
  return (size_t)d[0] * (size_t)((d[1] + C - 1) / C) * C * (size_t)d[2] * (size_t)d[3];
}

/* Whether kernel k is a channel concatenation in an NCHWc layout (nchwc_other 2) of a batch of
 * one whose inputs each lie in its layout or in NCHW: each NCHW input is then reordered
 * straight into its slab of the output (concat_direct_emit; for channel counts that are
 * multiples of C an input's channels are one contiguous slab at the same byte offset in
 * NCHW and NCHWc), not into the reorder buffers and copied from there (kernel_reorders
 * gives it none). */
static int concat_direct(const ecg_lower *L, int k) {
  const ecg_graph *g = L->g;
  const lw_kernel *K = &L->k[k];
  int64_t d[ECG_MAX_RANK];
  if (!L->klay[k] || K->kind != LW_K_SINGLE || K->nm != 1) return 0;
  const ecg_node *n = g->nodes[K->members[0]];
  if (nchwc_other(g, n) != 2 || !is_float4(g, n->outputs[0], d) || d[0] != 1 || L->t[n->outputs[0]].where != LW_ARENA) return 0;
  for (size_t q = 0; q < n->n_inputs; q++)
    if (L->lay[n->inputs[q]] != 0 && L->lay[n->inputs[q]] != L->klay[k]) return 0;
  return 1;
}

/* The inputs of kernel k stored in another layout than the kernel's: calls f for each
 * (tensor, floats of its copy in the kernel's layout, floats of an NCHW stage between two
 * NCHWc layouts or 0). Returns the total bytes (64-byte aligned pieces); none for a
 * concat_direct kernel, which reorders into its own output. */
static size_t kernel_reorders(ecg_lower *L, int k, const int *prod,
                              void (*f)(ecg_lower *L, int t, size_t off, size_t stage_off, int64_t *d), int *bad) {
  const ecg_graph *g = L->g;
  const lw_kernel *K = &L->k[k];
  int C = L->klay[k];
  size_t total = 0;
  if (concat_direct(L, k)) return 0;
  for (int m = 0; m < K->nm; m++) {
    const ecg_node *n = g->nodes[K->members[m]];
    for (size_t q = 0; q < n->n_inputs; q++) {
      int t = n->inputs[q];
      if (t < 0 || g->tensors[t]->is_const || L->lay[t] == C) continue;
      if (prod[t] >= 0 && L->node_kernel[prod[t]] == k) continue;
      if (same_bytes(g, t, L->lay[t] / 8, C / 8)) continue; /* 0, 8, 16 -> 0, 1, 2 */
      int dup = 0;
      for (int m2 = 0; m2 <= m && !dup; m2++) {
        const ecg_node *n2 = g->nodes[K->members[m2]];
        for (size_t q2 = 0; q2 < (m2 == m ? q : n2->n_inputs); q2++) dup |= n2->inputs[q2] == t;
      }
      if (dup) continue;
      int64_t d[ECG_MAX_RANK];
      if (!is_float4(g, t, d)) { *bad = t; return 0; }
      size_t copy = C ? padded_floats(d, C) : (size_t)(d[0] * d[1] * d[2] * d[3]);
      size_t stage = C && L->lay[t] ? (size_t)(d[0] * d[1] * d[2] * d[3]) : 0;
      size_t off = total, soff = total + (copy * 4 + 63) / 64 * 64;
      total = soff + (stage * 4 + 63) / 64 * 64;
      if (f) f(L, t, off, stage ? soff : (size_t)-1, d);
    }
  }
  return total;
}

int lw_layout_storage(ecg_lower *L, ecg_err *e) {
  const ecg_graph *g = L->g;
  int any = 0;
  for (size_t b = 0; b < g->n_blocks; b++) any |= lw_block_lanes(g, (int)b) != 0;
  if (!any) return ECG_OK;
  if (L->target != LW_TARGET_C || L->hetero)
    return ecg_errf(e, ECG_ERR_INPUT, "NCHWc block layouts are lowered for --target c only");
  L->lay = calloc(g->n_tensors + 1, sizeof *L->lay);
  L->klay = calloc((size_t)L->nk + 1, sizeof *L->klay);
  L->ptr_over = calloc(g->n_tensors + 1, sizeof *L->ptr_over);
  int *prod = malloc((g->n_tensors + 1) * sizeof *prod);
  if (!L->lay || !L->klay || !L->ptr_over || !prod) { free(prod); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  ecg_producers(g, prod);
  int rc = ECG_OK;
  for (int k = 0; k < L->nk && rc == ECG_OK; k++) {
    const lw_kernel *K = &L->k[k];
    int b = g->nodes[K->members[0]]->fusion_block;
    L->klay[k] = lw_block_lanes(g, b);
    if (!L->klay[k]) continue;
    /* what lw_emit_nchwc_kernel computes: a conv, alone or with its epilogue; a pool or a
     * channel concat alone */
    if (K->kind == LW_K_SINGLE && nchwc_other(g, g->nodes[K->members[0]])) continue;
    if (K->kind == LW_K_SE) continue; /* a squeeze-and-excitation chain (build() checked it) */
    int dom = K->kind == LW_K_EPI ? K->dominant : K->kind == LW_K_SINGLE ? K->members[0] : -1;
    ecg_conv_geom gm;
    ecg_err ig = {0};
    const ecg_node *dn = dom >= 0 ? g->nodes[dom] : NULL;
    int64_t d[ECG_MAX_RANK];
    if (!dn || ecg_conv_geom_resolve(g, dn, &gm, &ig) != ECG_OK || gm.transposed || gm.pool || gm.sp != 2 || gm.w < 0 ||
        !(gm.group == 1 || (gm.group == gm.c && gm.m == gm.c)) || !is_float4(g, dn->inputs[0], d) ||
        !is_float4(g, dn->outputs[0], d) || (gm.b >= 0 && g->tensors[dn->inputs[gm.b]]->dtype != 1) ||
        g->tensors[dn->inputs[gm.w]]->dtype != 1)
      rc = ecg_errf(e, ECG_ERR_INPUT, "block %d: layout %s: the NCHWc lowering takes a 2-D group-1 or depthwise float32 "
                    "convolution with its elementwise epilogue, a 2-D pool or a concatenation of 16-channel multiples only",
                    b, g->blocks[b]->layout);
  }
  for (size_t t = 0; t < g->n_tensors && rc == ECG_OK; t++)
    if (prod[t] >= 0 && !flat_mean(g, prod, (int)t)) L->lay[t] = L->klay[L->node_kernel[prod[t]]];
  for (size_t t = 0; t < g->n_tensors && rc == ECG_OK; t++) {
    int64_t d[ECG_MAX_RANK];
    if (!L->lay[t] || L->t[t].where == LW_NONE) continue;
    if (L->t[t].where != LW_ARENA || !is_float4(g, (int)t, d)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "block %d: layout NCHWc%d: its output '%s' is a graph output or not a 4-D float32 "
                    "tensor (graph inputs and outputs stay NCHW)", g->nodes[prod[t]]->fusion_block, L->lay[t], g->tensors[t]->name);
      break;
    }
    if (L->t[t].bytes) L->t[t].bytes = padded_floats(d, L->lay[t]) * sizeof(float);
  }
  for (size_t i = 0; i < g->n_nodes && rc == ECG_OK; i++) { /* control flow reads captures where they lie */
    const ecg_op_info *op = lw_op(g->nodes[i]) == ECG_OP_NONE ? NULL : ecg_op_get(lw_op(g->nodes[i]));
    for (size_t k = 0; op && (op->props & ECG_PROP_CONTROL) && k < g->nodes[i]->n_inputs && rc == ECG_OK; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t >= 0 && L->lay[t])
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s) reads '%s', which an NCHWc block writes: control flow reads NCHW only",
                      g->nodes[i]->name, g->nodes[i]->op_type, g->tensors[t]->name);
    }
  }
  for (size_t t = 0; t < g->n_tensors && rc == ECG_OK; t++) { /* Reshape aliases read bytes as they lie */
    int a = L->t[t].alias_of;
    /* [1, c, 1, 1] (a GlobalAveragePool's output before a Flatten): the same bytes (same_bytes) */
    if (a >= 0 && same_bytes(g, a, L->lay[a] / 8, L->lay[t] / 8)) continue;
    if (a >= 0 && L->lay[a] != L->lay[t])
      rc = ecg_errf(e, ECG_ERR_INPUT, "tensor '%s' shares the storage of '%s' (a Reshape-like node), which an NCHWc block "
                    "writes: not supported; give that block the NCHW layout", g->tensors[t]->name, g->tensors[a]->name);
  }
  for (int k = 0; k < L->nk && rc == ECG_OK; k++) {
    int bad = -1;
    size_t need = kernel_reorders(L, k, prod, NULL, &bad);
    if (bad >= 0)
      rc = ecg_errf(e, ECG_ERR_INPUT, "tensor '%s': a kernel reads it in another layout, but it is not a 4-D float32 tensor",
                    g->tensors[bad]->name);
    if (need > L->lay_bytes) L->lay_bytes = need;
  }
  free(prod);
  if (rc == ECG_OK) sb_printf(&L->decls, "#include \"ecg_nchwc.h\" /* GCD² NCHWc layouts */\n");
  return rc;
}

/* Emits the reorder of tensor t into the buffers at off for the kernel being emitted (its
 * layout's copy of t, which lw_ptr then names). Where the kernel run just before left the
 * same copy at the same place (two consumers of one tensor in one layout, in a row:
 * squeezenet1_1's expand convs reading their squeeze's output), no code: the buffers are
 * written by reorders only, so that copy is still there. */
static void emit_reorder(ecg_lower *L, int t, size_t off, size_t stage_off, int64_t *d) {
  const int k = (int)(L->cur - L->k);
  int C = L->klay[k], from = L->lay[t];
  char dst[96];
  snprintf(dst, sizeof dst, "((float *)(ctx->arena + %zu))", L->lay_base + off);
  long long n = d[0], c = d[1], hw = d[2] * d[3];
  const char *src = lw_ptr(L, t);
  int held = 0;
  for (int i = 0; i < L->lay_nheld[1]; i++)
    held |= L->lay_held[1][i].t == t && L->lay_held[1][i].C == C && L->lay_held[1][i].off == off;
  if (L->lay_nheld[0] < 16) L->lay_held[0][L->lay_nheld[0]++] = (struct lw_lay_copy){t, C, off};
  if (held)
    sb_printf(&L->code, "  /* tensor %d in this kernel's layout: the copy the last kernel left at %s */\n", t, dst);
  else if (C && from) { /* NCHWc8 <-> NCHWc16 through NCHW */
    char st[96];
    snprintf(st, sizeof st, "((float *)(ctx->arena + %zu))", L->lay_base + stage_off);
    sb_printf(&L->code, "  ecg_rt1_nchwc_to_nchw(%lld, %lld, %lld, %d, %s, %s);\n", n, c, hw, from, src, st);
    sb_printf(&L->code, "  ecg_rt1_nchw_to_nchwc(%lld, %lld, %lld, %d, %s, %s);\n", n, c, hw, C, st, dst);
  } else if (C)
    sb_printf(&L->code, "  ecg_rt1_nchw_to_nchwc(%lld, %lld, %lld, %d, %s, %s);\n", n, c, hw, C, src, dst);
  else
    sb_printf(&L->code, "  ecg_rt1_nchwc_to_nchw(%lld, %lld, %lld, %d, %s, %s);\n", n, c, hw, from, src, dst);
  L->ptr_over[t] = strdup(dst);
}

int lw_layout_enter(ecg_lower *L, int k, ecg_err *e) {
  const ecg_graph *g = L->g;
  int *prod = malloc((g->n_tensors + 1) * sizeof *prod), bad = -1;
  if (!prod) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  ecg_producers(g, prod);
  L->cur = &L->k[k];
  /* the copies kernel k - 1 left (emitted just before k, so run just before it) */
  L->lay_nheld[1] = L->lay_held_k == k - 1 && k > 0 ? L->lay_nheld[0] : 0;
  memcpy(L->lay_held[1], L->lay_held[0], sizeof L->lay_held[0]);
  L->lay_nheld[0] = 0;
  L->lay_held_k = k;
  kernel_reorders(L, k, prod, emit_reorder, &bad);
  free(prod);
  return bad >= 0 ? ecg_errf(e, ECG_ERR_INTERNAL, "layout reorder of a tensor that is not 4-D") : ECG_OK;
}

void lw_layout_leave(ecg_lower *L) {
  for (size_t t = 0; t < L->g->n_tensors; t++) {
    free(L->ptr_over[t]);
    L->ptr_over[t] = NULL;
  }
}

/* The code of a concat_direct kernel: per input, nothing where its producer wrote it in place
 * (its slab, in the layout), a copy where it lies elsewhere in the layout, a reorder from NCHW
 * into its slab otherwise. squeezenet1_1 at 1 thread, whose last fire's expands run NCHW
 * (Winograd) before an NCHWc16 Concat: that Concat 51 -> 33 us in the model (6 alternating
 * profile rounds; it reordered both into the buffers, then copied them), the arena 2.27 ->
 * 2.12 MB. */
static int concat_direct_emit(ecg_lower *L, int k) {
  const ecg_graph *g = L->g;
  const ecg_node *n = g->nodes[L->k[k].members[0]];
  const int C = L->klay[k], y = n->outputs[0];
  int64_t off = 0; /* floats of the output before this input's slab */
  for (size_t q = 0; q < n->n_inputs; q++) {
    const int t = n->inputs[q];
    int64_t d[ECG_MAX_RANK];
    lw_dims(L, t, d);
    const int64_t len = d[1] * d[2] * d[3];
    char dst[256];
    snprintf(dst, sizeof dst, "(%s + %lld)", lw_ptr(L, y), (long long)off);
    if (L->lay[t] == C) {
      if (!(L->t[t].where == LW_ARENA && L->t[t].offset == L->t[y].offset + (size_t)off * sizeof(float)))
        sb_printf(&L->code, "  memcpy(%s, %s, %lld);\n", dst, lw_ptr(L, t), (long long)len * (long long)sizeof(float));
    } else
      sb_printf(&L->code, "  ecg_rt1_nchw_to_nchwc(1, %lld, %lld, %d, %s, %s);\n", (long long)d[1], (long long)(d[2] * d[3]), C,
                lw_ptr(L, t), dst);
    off += len;
  }
  return ECG_OK;
}

int lw_emit_nchwc_kernel(ecg_lower *L, int k, ecg_err *e) {
  const ecg_graph *g = L->g;
  lw_kernel *K = &L->k[k];
  int C = L->klay[k];
  const int other = K->kind == LW_K_SINGLE ? nchwc_other(g, g->nodes[K->members[0]]) : 0;
  if (other == 2 && concat_direct(L, k)) return concat_direct_emit(L, k);
  if (other == 2) return lw_emit_kernel_plain(L, k, e); /* a channel concat: the same bytes as NCHW's (nchwc_other) */
  if (K->kind == LW_K_SE) return lw_emit_se(L, k, e);     /* ecg_se_params.blk = C (emit/se.c) */
  if (other == 3) {
    const ecg_node *pn = g->nodes[K->members[0]];
    int64_t d[ECG_MAX_RANK];
    lw_dims(L, pn->inputs[0], d);
    sb_printf(&L->code, "  ecg_rt1_nchwc_global_avgpool(%lld, %lld, %lld, %d, %s, ", (long long)d[0], (long long)d[1],
              (long long)(d[2] * d[3]), C, lw_ptr(L, pn->inputs[0]));
    sb_printf(&L->code, "%s);\n", lw_ptr(L, pn->outputs[0]));
    return ECG_OK;
  }
  if (other == 1) {
    const ecg_node *pn = g->nodes[K->members[0]];
    int u = lw_pool_params_decl(L, pn, e);
    if (u < 0) return ECG_ERR_INPUT;
    sb_printf(&L->code, "  %s(&pp%d, %d, %s, ", lw_op(pn) == ECG_OP_MaxPool ? "ecg_rt1_nchwc_maxpool2d" : "ecg_rt1_nchwc_avgpool2d",
              u, C, lw_ptr(L, pn->inputs[0]));
    sb_printf(&L->code, "%s);\n", lw_ptr(L, pn->outputs[0]));
    return ECG_OK;
  }
  const ecg_node *n = g->nodes[K->kind == LW_K_EPI ? K->dominant : K->members[0]];
  char fname[64], act[160];
  L->epi_skip = 0;
  L->epi_x = n->outputs[0];
  if (K->kind == LW_K_EPI && lw_builtin_epilogue(L, K, act, sizeof act)) {
    /* Relu, Clip, ...: applied to the tiles before the store, as in NCHW and as the layout
     * cost database measures them (mobilenet_v2's 576x14x14 depthwise + Clip in NCHWc16,
     * in-model, 1 thread: 57 -> 46 us against a generated epilogue) */
    L->epi_act = act;
    L->epi_used = 0;
  } else if (K->kind == LW_K_EPI) {
    snprintf(fname, sizeof fname, "%sepi%d", L->sym ? L->sym : "", k);
    /* The epilogue addresses its same-shape operands by the run's offset from y through
     * the logical [n, c, h, w] index map, which wraps at c: while it is generated, the
     * block's 4-D tensors read as [n, ceil(c/C)*C, h, w], whose map is the identity over
     * the whole padded NCHWc buffer. */
    enum { MAXT = 64 };
    ecg_tensor *padt[MAXT];
    int64_t oldc[MAXT];
    int np = 0;
    for (int m = 0; m < K->nm; m++) {
      const ecg_node *mn = g->nodes[K->members[m]];
      if (mn == n) continue; /* the conv's own input keeps its shape */
      for (size_t q = 0; q < mn->n_inputs + mn->n_outputs; q++) {
        int t = q < mn->n_inputs ? mn->inputs[q] : mn->outputs[q - mn->n_inputs];
        int64_t d[ECG_MAX_RANK];
        if (t < 0 || g->tensors[t]->is_const || !is_float4(g, t, d) || np == MAXT) continue;
        int seen = 0;
        for (int j = 0; j < np; j++) seen |= padt[j] == g->tensors[t];
        if (seen) continue;
        padt[np] = g->tensors[t];
        oldc[np] = d[1];
        padt[np++]->dims[1]->value = (d[1] + C - 1) / C * C;
      }
    }
    int erc = lw_emit_epilogue(L, k, fname, e);
    for (int j = 0; j < np; j++) padt[j]->dims[1]->value = oldc[j];
    if (erc) return erc;
    snprintf(act, sizeof act, "((ecg_act){ECG_ACT_FN, 0, 0, %s, ctx})", fname);
    L->epi_act = act;
    L->epi_used = 0;
  }
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], kk[2], s[2], d[2], p[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  int rc = lw_geom_2d(L, n, e, &gm, kk, s, d, p);
  if (rc == ECG_OK) {
    int u = lw_conv_params_decl(L, r, xd, od, gm.m, kk, s, d, p, gm.group);
    char buf[96];
    snprintf(buf, sizeof buf, "ecg_rt1_nchwc_conv2d_packed_floats(&cp%d, %d)", u, C);
    int off = lw_packed_slot(L, buf);
    const char *wp = lw_ptr(L, n->inputs[1]);
    sb_printf(L->t[n->inputs[1]].where == LW_CONST ? &L->init : &L->code, "  ecg_rt1_nchwc_conv2d_pack(&cp%d, %d, %s, ctx->pk[%d]);\n",
              u, C, wp, off);
    char bias[200] = "NULL", cpr[32];
    if (gm.b >= 0) snprintf(bias, sizeof bias, "%s", lw_ptr(L, n->inputs[gm.b]));
    lw_conv_params_ref(L, u, cpr, sizeof cpr);
    snprintf(buf, sizeof buf, "ecg_rt1_nchwc_conv2d_scratch_floats(&cp%d, %d, threads)", u, C);
    lw_need_scratch(L, buf);
    sb_printf(&L->code, "  ecg_rt1_nchwc_conv2d(%s, %d, %s, ctx->pk[%d], %s, NULL, %s, ctx->scratch);\n", cpr, C,
              lw_ptr(L, n->inputs[0]), off, bias, lw_ptr(L, n->outputs[0]));
  }
  L->epi_act = NULL;
  L->epi_x = -1;
  return rc;
}

void lw_layout_free(ecg_lower *L) {
  if (L->ptr_over)
    for (size_t t = 0; t < L->g->n_tensors; t++) free(L->ptr_over[t]);
  free(L->ptr_over);
  free(L->lay);
  free(L->klay);
  L->ptr_over = NULL, L->lay = NULL, L->klay = NULL;
}
