/* libecg: fusion blocks (DNNFusion §3.4.3), partition subgraphs (AGO §IV-B) and the one
 * node-renumbering function every graph utility goes through (format/ecg.h, "fusion
 * blocks", "partition subgraphs"). */
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"
#include "scalar.h"

/* Complexity order of mapping types (§3.3.1): One-to-One < Reorganize < Shuffle <
 * One-to-Many < Many-to-Many; unknown lowest. */
static int mapping_rank(int m) {
  switch (m) {
  case ECG_MAP_ONE_TO_ONE: return 1;
  case ECG_MAP_REORGANIZE: return 2;
  case ECG_MAP_SHUFFLE: return 3;
  case ECG_MAP_ONE_TO_MANY: return 4;
  case ECG_MAP_MANY_TO_MANY: return 5;
  default: return 0;
  }
}

/* A node's mapping type: the registry's, else what the node carries. */
static int node_mapping(const ecg_node *n) {
  const ecg_op_info *op = ecg_node_op(n);
  return op ? (int)op->mapping : (int)n->mapping_type;
}

/* The block holding node i according to node->fusion_block, or -1 (also for an id out
 * of range). */
static int block_of(const ecg_graph *g, int i) {
  int b = g->nodes[i]->fusion_block;
  return b >= 0 && (size_t)b < g->n_blocks ? b : -1;
}

void ecg_block_internal_tensors(const ecg_graph *g, const int *producer, int *inner, int *reader) {
  for (size_t t = 0; t < g->n_tensors; t++) {
    inner[t] = producer[t] >= 0 ? block_of(g, producer[t]) : -1;
    if (reader) reader[t] = -1;
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) {
      int t = n->inputs[k];
      if (t < 0 || (size_t)t >= g->n_tensors || inner[t] < 0 || block_of(g, (int)i) == inner[t]) continue;
      inner[t] = -1;
      if (reader) reader[t] = (int)i;
    }
  }
  for (size_t k = 0; k < g->n_outputs; k++) {
    int t = g->outputs[k];
    if (t >= 0 && (size_t)t < g->n_tensors) inner[t] = -1;
  }
}

/* Append v to a protobuf-c int32 array of capacity cap (grown by doubling). */
static int push(int32_t **arr, size_t *n, size_t *cap, int32_t v) {
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 4;
    int32_t *r = realloc(*arr, c * sizeof *r);
    if (!r) return -1;
    *arr = r;
    *cap = c;
  }
  (*arr)[(*n)++] = v;
  return 0;
}

int ecg_block_io_compute(const ecg_graph *g, int b, const int *producer, const int *inner,
                         int *stamp, int32_t **in, size_t *n_in, int32_t **out, size_t *n_out) {
  const ecg_block *blk = g->blocks[b];
  size_t cap_in = 0, cap_out = 0;
  *in = *out = NULL;
  *n_in = *n_out = 0;
  for (size_t m = 0; m < blk->n_nodes; m++) {
    int i = blk->nodes[m];
    if (i < 0 || (size_t)i >= g->n_nodes) continue;
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) {
      int t = n->inputs[k];
      if (t < 0 || (size_t)t >= g->n_tensors || stamp[t] == b + 1) continue;
      if (producer[t] >= 0 && block_of(g, producer[t]) == b) continue;
      stamp[t] = b + 1;
      if (push(in, n_in, &cap_in, t)) goto oom;
    }
    for (size_t k = 0; k < n->n_outputs; k++) {
      int t = n->outputs[k];
      if (t < 0 || (size_t)t >= g->n_tensors || inner[t] == b) continue;
      if (push(out, n_out, &cap_out, t)) goto oom;
    }
  }
  return ECG_OK;
oom:
  free(*in);
  free(*out);
  *in = *out = NULL;
  return ECG_ERR_INTERNAL;
}

int ecg_block_refresh_io(ecg_graph *g, int b) {
  if (b >= 0 && (size_t)b >= g->n_blocks) return ECG_ERR_INTERNAL;
  if (g->n_blocks == 0) return ECG_OK;
  size_t nt = g->n_tensors + 1;
  int *producer = malloc(nt * sizeof(int)), *inner = malloc(nt * sizeof(int)), *stamp = calloc(nt, sizeof(int));
  int rc = producer && inner && stamp ? ECG_OK : ECG_ERR_INTERNAL;
  if (rc == ECG_OK) {
    ecg_producers(g, producer);
    ecg_block_internal_tensors(g, producer, inner, NULL);
  }
  for (size_t k = b < 0 ? 0 : (size_t)b; rc == ECG_OK && k < (b < 0 ? g->n_blocks : (size_t)b + 1); k++) {
    ecg_block *blk = g->blocks[k];
    int32_t *in, *out;
    size_t n_in, n_out;
    rc = ecg_block_io_compute(g, (int)k, producer, inner, stamp, &in, &n_in, &out, &n_out);
    if (rc != ECG_OK) break;
    free(blk->inputs);
    free(blk->outputs);
    blk->inputs = in;
    blk->n_inputs = n_in;
    blk->outputs = out;
    blk->n_outputs = n_out;
  }
  free(producer); free(inner); free(stamp);
  return rc;
}

static int cmp_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Clear ir_removable on tensors no longer produced and consumed inside one block;
 * returns how many were cleared, or -1 on out of memory. */
static int clear_stale_ir(ecg_graph *g) {
  size_t nt = g->n_tensors + 1;
  int *producer = malloc(nt * sizeof(int)), *inner = malloc(nt * sizeof(int));
  int cleared = 0;
  if (!producer || !inner) { free(producer); free(inner); return -1; }
  ecg_producers(g, producer);
  ecg_block_internal_tensors(g, producer, inner, NULL);
  for (size_t t = 0; t < g->n_tensors; t++)
    if (g->tensors[t]->ir_removable && inner[t] < 0) { g->tensors[t]->ir_removable = false; cleared++; }
  free(producer); free(inner);
  return cleared;
}

/* Remap a member list (of a block or a subgraph) in place through old_to_new (n_old
 * entries; an index out of range or mapped to -1 is a removed node, counted in
 * *removed); the kept members are sorted ascending. Returns the new count. */
static size_t remap_members(int32_t *nodes, size_t n, const int *old_to_new, size_t n_old, int *removed) {
  size_t w = 0;
  for (size_t m = 0; m < n; m++) {
    int v = nodes[m] >= 0 && (size_t)nodes[m] < n_old ? old_to_new[nodes[m]] : -1;
    if (v < 0) (*removed)++;
    else nodes[w++] = v;
  }
  qsort(nodes, w, sizeof *nodes, cmp_int32);
  return w;
}

int ecg_remap_nodes(ecg_graph *g, const int *old_to_new, size_t n_old, ecg_remap_report *rep,
                    ecg_err *e) {
  ecg_remap_report r = {0};
  if (n_old != g->n_nodes)
    return ecg_errf(e, ECG_ERR_INTERNAL, "ecg_remap_nodes: %zu entries for %zu nodes", n_old, g->n_nodes);
  size_t n_new = 0;
  for (size_t i = 0; i < n_old; i++) n_new += old_to_new[i] >= 0;
  ecg_node **moved = calloc(n_new + 1, sizeof *moved);
  int *block_new = malloc((g->n_blocks + 1) * sizeof(int));
  if (!moved || !block_new) {
    free(moved); free(block_new);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  for (size_t i = 0; i < n_old; i++) {
    int v = old_to_new[i];
    if (v < -1 || (v >= 0 && ((size_t)v >= n_new || moved[v]))) {
      free(moved); free(block_new);
      return ecg_errf(e, ECG_ERR_INTERNAL, "ecg_remap_nodes: node %zu maps to %d, not a renumbering onto 0..%zu", i, v, n_new);
    }
    if (v >= 0) moved[v] = g->nodes[i];
  }
  /* Blocks: remap members, seed and dominant (old indices; out of range = removed). */
#define MAP(x) ((x) >= 0 && (size_t)(x) < n_old ? old_to_new[x] : -1)
  size_t nb = 0;
  for (size_t b = 0; b < g->n_blocks; b++) {
    ecg_block *blk = g->blocks[b];
    size_t w = blk->n_nodes = remap_members(blk->nodes, blk->n_nodes, old_to_new, n_old, &r.members_removed);
    if (w > 0) r.roles_cleared += (blk->seed >= 0 && MAP(blk->seed) < 0) + (blk->dominant >= 0 && MAP(blk->dominant) < 0);
    blk->seed = blk->seed >= 0 ? MAP(blk->seed) : -1;
    blk->dominant = blk->dominant >= 0 ? MAP(blk->dominant) : -1;
    if (w == 0) {
      block_new[b] = -1;
      r.blocks_dropped++;
      protobuf_c_message_free_unpacked(&blk->base, NULL);
      continue;
    }
    block_new[b] = (int)nb;
    blk->id = (int)nb;
    g->blocks[nb++] = blk;
  }
  /* Partition subgraphs: the same remapping (AGO §IV-B; removing nodes keeps them acyclic). */
  size_t ns = 0;
  for (size_t k = 0; k < g->n_subgraphs; k++) {
    ecg_subgraph *sg = g->subgraphs[k];
    sg->n_nodes = remap_members(sg->nodes, sg->n_nodes, old_to_new, n_old, &r.subgraph_members_removed);
    if (sg->n_nodes == 0) {
      r.subgraphs_dropped++;
      protobuf_c_message_free_unpacked(&sg->base, NULL);
      continue;
    }
    sg->id = (int)ns;
    g->subgraphs[ns++] = sg;
  }
  g->n_subgraphs = ns;
#undef MAP
  g->n_blocks = nb;
  r.sparse_dropped = ecg_sparse_remap(g, old_to_new, n_old);
  r.placements_dropped = ecg_placement_remap(g, old_to_new, n_old);
  /* Nodes: free the removed, move the kept; fusion_block follows the block lists. */
  for (size_t i = 0; i < n_old; i++)
    if (old_to_new[i] < 0) protobuf_c_message_free_unpacked(&g->nodes[i]->base, NULL);
  if (n_new) memcpy(g->nodes, moved, n_new * sizeof *moved); /* g->nodes is NULL in an empty graph */
  g->n_nodes = n_new;
  for (size_t i = 0; i < n_new; i++) g->nodes[i]->fusion_block = -1;
  for (size_t b = 0; b < nb; b++)
    for (size_t m = 0; m < g->blocks[b]->n_nodes; m++) g->nodes[g->blocks[b]->nodes[m]]->fusion_block = (int)b;
  free(moved);
  free(block_new);
  int cleared = clear_stale_ir(g);
  if (cleared < 0 || ecg_block_refresh_io(g, -1) != ECG_OK) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  r.ir_cleared = cleared;
  if (rep) *rep = r;
  return ECG_OK;
}

int ecg_block_add(ecg_graph *g, const int *nodes, int n, int seed, ecg_err *e) {
  char lb[256];
  if (n < 1) { ecg_errf(e, ECG_ERR_INPUT, "a fusion block needs at least one node"); return -1; }
  for (int k = 0; k < n; k++) {
    if (nodes[k] < 0 || (size_t)nodes[k] >= g->n_nodes) {
      ecg_errf(e, ECG_ERR_INPUT, "fusion block: node index %d out of range (graph has %zu nodes)", nodes[k], g->n_nodes);
      return -1;
    }
    const ecg_node *nd = g->nodes[nodes[k]];
    if (nd->fusion_block >= 0) {
      ecg_errf(e, ECG_ERR_INPUT, "fusion block: node '%s' (%s) is already in block %d", ecg_node_label(g, nd, lb, sizeof lb), nd->op_type, nd->fusion_block);
      return -1;
    }
    for (int j = 0; j < k; j++)
      if (nodes[j] == nodes[k]) {
        ecg_errf(e, ECG_ERR_INPUT, "fusion block: node '%s' (%s) listed twice", ecg_node_label(g, nd, lb, sizeof lb), nd->op_type);
        return -1;
      }
  }
  bool seed_ok = seed == -1;
  for (int k = 0; k < n && !seed_ok; k++) seed_ok = nodes[k] == seed;
  if (!seed_ok) {
    if (seed >= 0 && (size_t)seed < g->n_nodes)
      ecg_errf(e, ECG_ERR_INPUT, "fusion block: seed node '%s' (%s) is not a member", ecg_node_label(g, g->nodes[seed], lb, sizeof lb), g->nodes[seed]->op_type);
    else
      ecg_errf(e, ECG_ERR_INPUT, "fusion block: seed %d is not a member", seed);
    return -1;
  }
  ecg_block *blk = malloc(sizeof *blk);
  ecg_block **grown = realloc(g->blocks, (g->n_blocks + 1) * sizeof *grown);
  if (grown) g->blocks = grown;
  if (blk) {
    ecg__fusion_block__init(blk);
    blk->nodes = malloc((size_t)n * sizeof *blk->nodes);
  }
  if (!blk || !grown || !blk->nodes) {
    if (blk) free(blk->nodes);
    free(blk);
    ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    return -1;
  }
  int id = (int)g->n_blocks;
  memcpy(blk->nodes, nodes, (size_t)n * sizeof *blk->nodes);
  blk->n_nodes = (size_t)n;
  qsort(blk->nodes, (size_t)n, sizeof *blk->nodes, cmp_int32);
  blk->id = id;
  blk->seed = seed;
  blk->dominant = -1;
  int best = 0;
  for (int k = 0; k < n; k++) {
    int m = node_mapping(g->nodes[blk->nodes[k]]);
    if (mapping_rank(m) > mapping_rank(best)) best = m;
    if (m == ECG_MAP_MANY_TO_MANY && blk->dominant < 0) blk->dominant = blk->nodes[k];
  }
  blk->mapping_type = (Ecg__MappingType)best;
  g->blocks[g->n_blocks++] = blk;
  for (int k = 0; k < n; k++) g->nodes[nodes[k]]->fusion_block = id;
  if (ecg_block_refresh_io(g, id) != ECG_OK) {
    ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (int k = 0; k < n; k++) g->nodes[nodes[k]]->fusion_block = -1;
    protobuf_c_message_free_unpacked(&blk->base, NULL);
    g->n_blocks--;
    return -1;
  }
  return id;
}

const char *ecg_conv_algo_name(int a) {
  static const char *const names[ECG_CONV_ALGO_COUNT] = {"auto", "gemm", "gemm_t", "winograd", "blocked"};
  return a >= 0 && a < ECG_CONV_ALGO_COUNT ? names[a] : "?";
}

const char *ecg_intensive_name(int v) {
  static const char *const names[ECG_INTENSIVE_COUNT] = {"auto", "on", "off"};
  return v >= 0 && v < ECG_INTENSIVE_COUNT ? names[v] : "?";
}

int ecg_block_set_schedule(ecg_graph *g, int b, const int64_t *tile, int n_tile, int vector_width,
                           int unroll, bool intensive) {
  if (b < 0 || (size_t)b >= g->n_blocks || n_tile < 0) return ECG_ERR_INTERNAL;
  ecg_schedule *s = malloc(sizeof *s);
  if (!s) return ECG_ERR_INTERNAL;
  ecg__schedule__init(s);
  s->tile = malloc((size_t)(n_tile ? n_tile : 1) * sizeof *s->tile);
  if (!s->tile) { free(s); return ECG_ERR_INTERNAL; }
  if (n_tile) memcpy(s->tile, tile, (size_t)n_tile * sizeof *s->tile);
  s->n_tile = (size_t)n_tile;
  s->vector_width = vector_width;
  s->unroll = unroll;
  s->intensive = intensive;
  if (g->blocks[b]->schedule) protobuf_c_message_free_unpacked(&g->blocks[b]->schedule->base, NULL);
  g->blocks[b]->schedule = s;
  return ECG_OK;
}

int ecg_row_space_of(const ecg_graph *g, const ecg_node *n, ecg_row_space *s) {
  if (!ecg_row_reduction(g, n, &s->a)) return -1;
  s->r = ecg_tensor_dims(ecg_node_input(g, n, 0), s->F);
  return 0;
}

/* Operand dims d (rank rd, right-aligned) against s's inner dims: all F's or all 1. */
static int row_inner_ok(const ecg_row_space *s, const int64_t *d, int rd) {
  int full = 1, ones = 1;
  for (int k = s->a; k < s->r; k++) {
    int j = k - (s->r - rd);
    int64_t v = j >= 0 ? d[j] : 1;
    if (v != s->F[k]) full = 0;
    if (v != 1) ones = 0;
  }
  return full || ones;
}

int ecg_row_level(const ecg_graph *g, const ecg_node *n, const ecg_row_space *s) {
  ecg_row_space t;
  int64_t d[ECG_MAX_RANK];
  if (ecg_row_space_of(g, n, &t) == 0)
    return t.a == s->a && t.r == s->r && !memcmp(t.F, s->F, sizeof(int64_t) * (size_t)s->r) ? ECG_ROW_RED : -1;
  if (n->n_outputs != 1 || !ecg_is_scalar_node(g, n)) return -1;
  const ecg_tensor *y = ecg_node_output(g, n, 0);
  if (!y || ecg_tensor_dims(y, d) != s->r) return -1;
  int full = 1, row = 1;
  for (int k = 0; k < s->r; k++) {
    if (d[k] != s->F[k]) full = 0;
    if (d[k] != (k < s->a ? s->F[k] : 1)) row = 0;
  }
  if (!full && !row) return -1;
  for (size_t i = 0; i < n->n_inputs; i++) {
    if (n->inputs[i] < 0) continue;
    int rd = ecg_bcast_dims(g, n, (int)i, d);
    if (rd < 0 || rd > s->r || !row_inner_ok(s, d, rd)) return -1;
  }
  return full ? ECG_ROW_FULL : ECG_ROW_ROW;
}

int ecg_permutation_of(const ecg_graph *g, const ecg_node *n, int *perm) {
  const ecg_op_info *op = ecg_node_op(n);
  const ecg_tensor *x = ecg_node_input(g, n, 0);
  int64_t d[ECG_MAX_RANK];
  if (!op || !(op->props & ECG_PROP_PERMUTE) || !x || n->n_outputs != 1) return -1;
  int r = ecg_tensor_dims(x, d);
  if (r < 0 || ecg_tensor_numel(x) < 0 || ecg_perm_attr(n, r, perm)) return -1;
  return r;
}

/* Row-major strides of the rank-r dims d. */
static void row_major(int r, const int64_t *d, int64_t *st) {
  int64_t s = 1;
  for (int i = r - 1; i >= 0; i--) { st[i] = s; s *= d[i]; }
}

/* n is a strided-IO node and tensor t (its operand or output) is a float32 matrix stack. */
static int strided_operand(const ecg_graph *g, const ecg_node *n, const ecg_tensor *t) {
  const ecg_op_info *op = ecg_node_op(n);
  return op && (op->props & ECG_PROP_STRIDED_IO) && t && t->dtype == ECG_FLOAT && ecg_tensor_rank(t) >= 2 &&
         ecg_tensor_numel(t) > 0;
}

int ecg_index_map_in(const ecg_graph *g, const ecg_node *n, int k, const ecg_node *p, int64_t *st, int *r) {
  int perm[ECG_MAX_RANK];
  int64_t d[ECG_MAX_RANK], xs[ECG_MAX_RANK];
  const ecg_tensor *t = ecg_node_input(g, n, k);
  if (!strided_operand(g, n, t) || p->outputs[0] != n->inputs[k] || (*r = ecg_permutation_of(g, p, perm)) < 2) return 0;
  row_major(ecg_tensor_dims(ecg_node_input(g, p, 0), d), d, xs);
  for (int i = 0; i < *r; i++) st[i] = xs[perm[i]];
  return st[*r - 1] == 1 || st[*r - 2] == 1;
}

int ecg_index_map_out(const ecg_graph *g, const ecg_node *n, const ecg_node *p, int64_t *st, int *r) {
  int perm[ECG_MAX_RANK];
  int64_t d[ECG_MAX_RANK], ys[ECG_MAX_RANK];
  const ecg_tensor *t = ecg_node_output(g, n, 0);
  if (!strided_operand(g, n, t) || p->inputs[0] != n->outputs[0] || (*r = ecg_permutation_of(g, p, perm)) < 2) return 0;
  const ecg_tensor *y = ecg_node_output(g, p, 0);
  if (!y || ecg_tensor_dims(y, d) != *r) return 0;
  row_major(*r, d, ys);
  for (int i = 0; i < *r; i++) st[perm[i]] = ys[i];
  return st[*r - 1] == 1;
}

int ecg_subgraphs_set(ecg_graph *g, const int *sub_of, int n_sub, const double *weight, const char *strategy,
                      ecg_err *e) {
  if (n_sub < 0 || (n_sub == 0 && g->n_nodes > 0))
    return ecg_errf(e, ECG_ERR_INTERNAL, "ecg_subgraphs_set: %d subgraphs for %zu nodes", n_sub, g->n_nodes);
  size_t *count = calloc((size_t)n_sub + 1, sizeof *count);
  if (!count) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t i = 0; i < g->n_nodes; i++) {
    if (sub_of[i] < 0 || sub_of[i] >= n_sub) {
      free(count);
      return ecg_errf(e, ECG_ERR_INTERNAL, "ecg_subgraphs_set: node %zu in subgraph %d (of %d)", i, sub_of[i], n_sub);
    }
    count[sub_of[i]]++;
  }
  for (int s = 0; s < n_sub; s++)
    if (!count[s]) {
      free(count);
      return ecg_errf(e, ECG_ERR_INTERNAL, "ecg_subgraphs_set: subgraph %d has no node", s);
    }
  ecg_subgraph **arr = calloc((size_t)n_sub + 1, sizeof *arr);
  bool ok = arr != NULL;
  for (int s = 0; ok && s < n_sub; s++) {
    ecg_subgraph *sg = malloc(sizeof *sg);
    if (!sg) { ok = false; break; }
    ecg__subgraph__init(sg);
    arr[s] = sg;
    sg->id = s;
    sg->weight = weight ? weight[s] : 0;
    sg->strategy = strdup(strategy ? strategy : "");
    sg->nodes = malloc(count[s] * sizeof *sg->nodes);
    if (!sg->strategy || !sg->nodes) ok = false;
  }
  if (!ok) {
    for (int s = 0; arr && s < n_sub; s++)
      if (arr[s]) {
        if (arr[s]->strategy == protobuf_c_empty_string) arr[s]->strategy = NULL;
        free(arr[s]->strategy); free(arr[s]->nodes); free(arr[s]);
      }
    free(arr); free(count);
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  for (size_t i = 0; i < g->n_nodes; i++) { /* ascending: nodes visited in index order */
    ecg_subgraph *sg = arr[sub_of[i]];
    sg->nodes[sg->n_nodes++] = (int32_t)i;
  }
  ecg_subgraphs_clear(g);
  free(g->subgraphs);
  g->subgraphs = arr;
  g->n_subgraphs = (size_t)n_sub;
  free(count);
  return ECG_OK;
}

size_t ecg_subgraphs_clear(ecg_graph *g) {
  size_t n = g->n_subgraphs;
  for (size_t k = 0; k < n; k++) protobuf_c_message_free_unpacked(&g->subgraphs[k]->base, NULL);
  free(g->subgraphs);
  g->subgraphs = NULL;
  g->n_subgraphs = 0;
  return n;
}
