/* Unit tests of libecg's graph utilities and fusion blocks (format/block.c, topo.c,
 * graph.c, validate.c; DNNFusion §3.4.3): blocks survive topological sorting,
 * compaction and constant folding with their node indices remapped; the validator
 * rejects every kind of bad block with a message naming the block and node; the
 * schema-2 block fields survive a write and a read. And the one window geometry
 * (format/geom.c): auto_pad, strides, dilations, ceil_mode, output_shape, errors; and
 * the one reduction table (format/ops/reduce.c): folding of every Reduce* against
 * hand-computed values, NaN, integer extremes, the C it gives the emitters.
 *
 *   make build/libecg.a
 *   cc -std=gnu11 -Iformat -Ibuild/gen tests/unit/graph_test.c build/libecg.a \
 *      -lprotobuf-c -lzstd -lm -o build/graph_test && build/graph_test
 */
#include "unit.h"

/* A node named name (op op_type, opset 13) reading in[] and writing out[]. */
static int named(ecg_graph *g, const char *name, const char *op, const int *in, int n_in, const int *o, int n_out) {
  return ecg_add_node(g, name, op, "", 13, n_in, in, n_out, o);
}

static int node_index(const ecg_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_nodes; i++) if (!strcmp(g->nodes[i]->name, name)) return (int)i;
  return -1;
}

/* Does tensor `name` appear in ids[n]? */
static bool has_tensor(const ecg_graph *g, const int32_t *ids, size_t n, const char *name) {
  for (size_t k = 0; k < n; k++) if (ids[k] >= 0 && !strcmp(g->tensors[ids[k]]->name, name)) return true;
  return false;
}

/* Block b's members by name, space-separated, in list order. */
static const char *members(const ecg_graph *g, int b) {
  static char buf[256];
  size_t off = 0;
  buf[0] = 0;
  for (size_t m = 0; m < g->blocks[b]->n_nodes && off < sizeof buf; m++)
    off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", m ? " " : "", g->nodes[g->blocks[b]->nodes[m]]->name);
  return buf;
}

static void expect_valid(const ecg_graph *g, const char *what) {
  ecg_err e = {0};
  int rc = ecg_validate(g, &e);
  CHECK(rc == ECG_OK, "%s: validate: %s", what, e.msg);
}

/* The graph of these tests, nodes deliberately out of topological order:
 *   add  = Add(b, kneg)  -> y  (graph output)        block 2 (seed add)
 *   relu = Relu(x)       -> a                        block 1 (seed relu)
 *   neg  = Neg(k)        -> kneg (k constant)         block 2
 *   sig  = Sigmoid(a)    -> b                        block 1
 *   exp  = Exp(a)        -> z  (graph output)        no block
 *   neg2 = Neg(k2)       -> kn2 (k2 constant)         block 0 (alone: folds away)
 *   mul  = Mul(z, kn2)   -> w  (graph output)        no block
 * kneg is ir_removable (produced and read inside block 2). */
static ecg_graph *build(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(1, 4), NULL);
  int k = cf32(g, "k", (float[]){1, 2, 3, 4}, DIMS(1, 4));
  int k2 = cf32(g, "k2", (float[]){5, 6, 7, 8}, DIMS(1, 4));
  int a = out(g, "a"), b = out(g, "b"), kneg = out(g, "kneg"), y = out(g, "y"), z = out(g, "z");
  int kn2 = out(g, "kn2"), w = out(g, "w");
  named(g, "add", "Add", IDS(b, kneg), IDS(y));
  named(g, "relu", "Relu", IDS(x), IDS(a));
  named(g, "neg", "Neg", IDS(k), IDS(kneg));
  named(g, "sig", "Sigmoid", IDS(a), IDS(b));
  named(g, "exp", "Exp", IDS(a), IDS(z));
  named(g, "neg2", "Neg", IDS(k2), IDS(kn2));
  named(g, "mul", "Mul", IDS(z, kn2), IDS(w));
  set_io(g, IDS(x), IDS(y, z, w));
  ecg_err e = {0};
  CHECK(ecg_block_add(g, IDS(5), 5, &e) == 0, "block 0: %s", e.msg);
  CHECK(ecg_block_add(g, IDS(3, 1), 1, &e) == 1, "block 1: %s", e.msg);
  CHECK(ecg_block_add(g, IDS(0, 2), 0, &e) == 2, "block 2: %s", e.msg);
  g->tensors[kneg]->ir_removable = true;
  ecg_err ie = {0};
  CHECK(ecg_infer_shapes(g, &ie) == ECG_OK, "infer: %s", ie.msg);
  return g;
}

static void test_block_add(void) {
  ecg_graph *g = build();
  CHECK(g->n_blocks == 3, "3 blocks, got %zu", g->n_blocks);
  int b1 = node_index(g, "relu") >= 0 ? g->nodes[node_index(g, "relu")]->fusion_block : -2;
  CHECK(b1 >= 0 && !strcmp(members(g, b1), "relu sig"), "block of relu holds '%s'", b1 >= 0 ? members(g, b1) : "?");
  const ecg_block *blk = g->blocks[b1];
  CHECK(blk->n_inputs == 1 && has_tensor(g, blk->inputs, blk->n_inputs, "x"), "relu/sig block reads x only (%zu inputs)", blk->n_inputs);
  CHECK(blk->n_outputs == 2 && has_tensor(g, blk->outputs, blk->n_outputs, "a") && has_tensor(g, blk->outputs, blk->n_outputs, "b"),
        "relu/sig block writes a (read by exp) and b (read by add): %zu outputs", blk->n_outputs);
  CHECK(blk->mapping_type == ECG__MAPPING_TYPE__ONE_TO_ONE && blk->dominant == -1, "One-to-One block, no dominant");
  expect_valid(g, "built");
  ecg_err e = {0};
  int iexp = node_index(g, "exp"), iadd = node_index(g, "add"), imul = node_index(g, "mul");
  CHECK(ecg_block_add(g, (int[]){iexp, iadd}, 2, -1, &e) == -1 && strstr(e.msg, "'add'") && strstr(e.msg, "already in block"),
        "a node already in a block is refused naming it: %s", e.msg);
  CHECK(ecg_block_add(g, &iexp, 1, imul, &e) == -1 && strstr(e.msg, "seed") && strstr(e.msg, "'mul'"), "a seed outside is refused: %s", e.msg);
  CHECK(ecg_block_add(g, (int[]){iexp, 99}, 2, -1, &e) == -1 && strstr(e.msg, "99"), "an index out of range is refused: %s", e.msg);
  CHECK(ecg_block_add(g, (int[]){iexp, iexp}, 2, -1, &e) == -1 && strstr(e.msg, "twice"), "a node listed twice is refused: %s", e.msg);
  CHECK(ecg_block_add(g, NULL, 0, -1, &e) == -1, "an empty block is refused");
  CHECK(g->n_blocks == 3 && g->nodes[iexp]->fusion_block == -1, "refusals leave the graph unchanged");
  CHECK(ecg_block_set_schedule(g, 0, (int64_t[]){4, 16}, 2, 8, 2, true) == ECG_OK, "schedule set");
  CHECK(g->blocks[0]->schedule && g->blocks[0]->schedule->n_tile == 2 && g->blocks[0]->schedule->intensive, "schedule stored");
  /* the GCD² layout annotation: "", NCHWc8, NCHWc16 valid; anything else refused naming the block */
  char *old = g->blocks[1]->layout;
  g->blocks[1]->layout = (char *)"NCHWc16";
  expect_valid(g, "layout NCHWc16");
  g->blocks[1]->layout = (char *)"NHWC";
  CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "block 1") && strstr(e.msg, "'NHWC'"),
        "an unknown block layout is refused naming the block: %s", e.msg);
  g->blocks[1]->layout = old;
  ecg_graph_free(g);
}

static void test_dominant(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(1, 2, 5, 5), NULL);
  int wt = cf32(g, "w", (float[18]){0}, DIMS(1, 2, 3, 3));
  int c = out(g, "c"), r = out(g, "r");
  named(g, "conv", "Conv", IDS(x, wt), IDS(c));
  named(g, "relu", "Relu", IDS(c), IDS(r));
  set_io(g, IDS(x), IDS(r));
  ecg_err e = {0};
  int b = ecg_block_add(g, IDS(1, 0), 1, &e);
  CHECK(b == 0 && g->blocks[0]->dominant == 0 && g->blocks[0]->mapping_type == ECG__MAPPING_TYPE__MANY_TO_MANY,
        "Conv+Relu: dominant conv, fused type Many-to-Many (%s)", e.msg);
  CHECK(g->blocks[0]->n_inputs == 2 && has_tensor(g, g->blocks[0]->inputs, 2, "w"), "constants are block inputs");
  CHECK(g->blocks[0]->n_outputs == 1 && has_tensor(g, g->blocks[0]->outputs, 1, "r"), "the graph output is the block output");
  int inner[8], producer[8];
  ecg_producers(g, producer);
  ecg_block_internal_tensors(g, producer, inner, NULL);
  CHECK(inner[c] == 0 && inner[r] == -1 && inner[x] == -1, "c is internal to block 0; r (graph output) and x are not");
  ecg_graph_free(g);
}

/* Topological sort, then folding (which sorts and compacts): blocks follow. */
static void test_survive_sort_and_fold(void) {
  ecg_graph *g = build();
  /* build() inferred shapes, which sorts: relu, neg, sig, exp, neg2, mul, add? check by name */
  int irelu = node_index(g, "relu"), isig = node_index(g, "sig"), iadd = node_index(g, "add");
  CHECK(irelu < isig && isig < iadd, "sorted: relu %d < sig %d < add %d", irelu, isig, iadd);
  int b1 = g->nodes[irelu]->fusion_block, b2 = g->nodes[iadd]->fusion_block;
  CHECK(b1 == 1 && b2 == 2 && g->nodes[isig]->fusion_block == 1, "fusion_block kept through sort (%d, %d)", b1, b2);
  CHECK(g->blocks[1]->seed == irelu && g->blocks[2]->seed == iadd, "seeds remapped to the new indices");
  CHECK(!strcmp(members(g, 2), "neg add"), "block 2 lists its members in topological order: '%s'", members(g, 2));
  expect_valid(g, "sorted");
  int nf = 0;
  ecg_err e = {0};
  CHECK(ecg_fold_constants(g, &nf, &e) == ECG_OK && nf == 2, "fold neg and neg2 (%d): %s", nf, e.msg);
  CHECK(g->n_blocks == 2, "the block of neg2 alone is dropped: %zu blocks", g->n_blocks);
  CHECK(!strcmp(members(g, 0), "relu sig") && !strcmp(members(g, 1), "add"), "blocks renumbered densely: '%s' / '%s'", members(g, 0), members(g, 1));
  iadd = node_index(g, "add");
  CHECK(g->blocks[1]->seed == iadd && g->nodes[iadd]->fusion_block == 1, "seed and fusion_block follow");
  CHECK(has_tensor(g, g->blocks[1]->inputs, g->blocks[1]->n_inputs, "kneg") && g->tensors[tid(g, "kneg")]->is_const,
        "the folded value is now a constant input of the block");
  CHECK(!g->tensors[tid(g, "kneg")]->ir_removable, "ir_removable cleared on what is now a constant");
  CHECK(tid(g, "k") < 0, "compaction dropped the dead constant k");
  expect_valid(g, "folded");
  ecg_graph_free(g);
}

/* Schedules (schema 6, intensive_fusion schema 8): the validator checks every knob's range and names the block's
 * node; a schedule stays on its block through a sort and a fold (which renumber nodes and
 * drop the emptied block of neg2, so the block ids shift). */
static void test_schedules(void) {
  ecg_graph *g = build();
  ecg_err e = {0};
  CHECK(ecg_block_set_schedule(g, 2, NULL, 0, 8, 0, false) == ECG_OK, "schedule of block 2 (neg add)");
  g->blocks[2]->schedule->threads = 2;
  g->blocks[2]->schedule->conv_algo = ECG_CONV_ALGO_GEMM_T;
  expect_valid(g, "scheduled");
  const int bad[][5] = {{-1, 0, 0, 0, 0}, {0, 5000, 0, 0, 0}, {0, 0, ECG_CONV_ALGO_COUNT, 0, 0}, {0, 0, 0, 33, 0}, {65, 0, 0, 0, 0},
                        {0, 0, 0, 0, ECG_INTENSIVE_COUNT}, {0, 0, 0, 0, -1}};
  for (int k = 0; k < 7; k++) {
    ecg_schedule *s = g->blocks[2]->schedule, keep = *s;
    s->vector_width = bad[k][0]; s->threads = bad[k][1]; s->conv_algo = bad[k][2]; s->unroll = bad[k][3];
    s->intensive_fusion = bad[k][4];
    CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "block 2") && strstr(e.msg, "node '") && strstr(e.msg, "out of range"),
          "bad schedule %d refused naming the node: %s", k, e.msg);
    *s = keep;
  }
  CHECK(!strcmp(ecg_conv_algo_name(ECG_CONV_ALGO_WINOGRAD), "winograd") && !strcmp(ecg_conv_algo_name(9), "?"), "algorithm names");
  CHECK(!strcmp(ecg_intensive_name(ECG_INTENSIVE_OFF), "off") && !strcmp(ecg_intensive_name(ECG_INTENSIVE_ON), "on") &&
            !strcmp(ecg_intensive_name(-1), "?"), "intensive_fusion names");
  g->blocks[2]->schedule->intensive_fusion = ECG_INTENSIVE_OFF; /* in range: valid (ecg-lower decides whether it applies) */
  expect_valid(g, "intensive_fusion off");
  int nf = 0;
  CHECK(ecg_topo_sort(g, &e) == ECG_OK, "sort: %s", e.msg);
  CHECK(ecg_fold_constants(g, &nf, &e) == ECG_OK && nf == 2, "fold: %s", e.msg);
  int iadd = node_index(g, "add"), b = g->nodes[iadd]->fusion_block;
  CHECK(b == 1 && g->blocks[b]->schedule && g->blocks[b]->schedule->vector_width == 8 && g->blocks[b]->schedule->threads == 2 &&
            g->blocks[b]->schedule->conv_algo == ECG_CONV_ALGO_GEMM_T && g->blocks[b]->schedule->intensive_fusion == ECG_INTENSIVE_OFF,
        "the schedule followed its block to id %d", b);
  CHECK(!g->blocks[0]->schedule, "the other block has none");
  expect_valid(g, "folded, scheduled");
  ecg_graph_free(g);
}

/* ecg_remap_nodes directly: a permutation with removals, and its report. */
static void test_remap(void) {
  ecg_graph *g = build();
  int n = (int)g->n_nodes, map[16];
  int isig = node_index(g, "sig"), ineg = node_index(g, "neg"), ineg2 = node_index(g, "neg2");
  int w = 0;
  for (int i = n - 1; i >= 0; i--) map[i] = (i == isig || i == ineg || i == ineg2) ? -1 : w++; /* reverse */
  ecg_remap_report rep = {0};
  ecg_err e = {0};
  CHECK(ecg_remap_nodes(g, map, (size_t)n, &rep, &e) == ECG_OK, "remap: %s", e.msg);
  CHECK(rep.members_removed == 3 && rep.blocks_dropped == 1 && rep.roles_cleared == 0 && rep.ir_cleared == 1,
        "report: %d members removed, %d blocks dropped, %d roles cleared, %d ir cleared", rep.members_removed,
        rep.blocks_dropped, rep.roles_cleared, rep.ir_cleared);
  CHECK(g->n_nodes == (size_t)n - 3 && g->n_blocks == 2, "%zu nodes, %zu blocks", g->n_nodes, g->n_blocks);
  CHECK(!strcmp(members(g, 0), "relu") && !strcmp(members(g, 1), "add"), "members remapped: '%s' / '%s'", members(g, 0), members(g, 1));
  for (size_t i = 0; i < g->n_nodes; i++) {
    const char *nm = g->nodes[i]->name;
    int want = !strcmp(nm, "relu") ? 0 : !strcmp(nm, "add") ? 1 : -1;
    CHECK(g->nodes[i]->fusion_block == want, "node %s: fusion_block %d, expected %d", nm, g->nodes[i]->fusion_block, want);
  }
  ecg_graph_free(g);
  /* a removed seed of a block that keeps other members becomes -1 */
  g = build();
  int keep_map[16], irelu = node_index(g, "relu");
  w = 0;
  for (int i = 0; i < (int)g->n_nodes; i++) keep_map[i] = i == irelu ? -1 : w++;
  CHECK(ecg_remap_nodes(g, keep_map, g->n_nodes, &rep, &e) == ECG_OK && rep.blocks_dropped == 0 && rep.roles_cleared == 1,
        "removing relu clears its block's seed (roles cleared %d)", rep.roles_cleared);
  CHECK(g->blocks[1]->seed == -1 && !strcmp(members(g, 1), "sig"), "block 1 keeps sig, seed -1");
  /* not a bijection: refused, graph unchanged */
  int bad[16] = {0};
  size_t nn = g->n_nodes;
  CHECK(ecg_remap_nodes(g, bad, nn, NULL, &e) == ECG_ERR_INTERNAL && g->n_nodes == nn, "a non-bijective map is refused: %s", e.msg);
  CHECK(ecg_remap_nodes(g, bad, nn + 1, NULL, &e) == ECG_ERR_INTERNAL, "a map of the wrong length is refused");
  ecg_graph_free(g);
}

/* ecg_compact removing a block member reports it. */
static void test_compact_report(void) {
  ecg_graph *g = build();
  bool keep[16];
  for (size_t i = 0; i < g->n_nodes; i++) keep[i] = strcmp(g->nodes[i]->name, "neg2") != 0;
  /* mul reads kn2 from neg2: make kn2 a constant first so the graph stays whole */
  ecg_tensor_set_data(g->tensors[tid(g, "kn2")], (float[]){1, 1, 1, 1}, 16);
  ecg_remap_report rep = {0};
  CHECK(ecg_compact(g, keep, &rep) == ECG_OK && rep.blocks_dropped == 1 && rep.members_removed == 1, "compact reports the dropped block");
  CHECK(tid(g, "k2") < 0 && g->n_blocks == 2, "k2 dropped, 2 blocks left");
  expect_valid(g, "compacted");
  ecg_graph_free(g);
}

/* Each bad block: the validator refuses with ECG_ERR_INPUT and a message holding want. */
static void expect_invalid(ecg_graph *g, const char *want, const char *what) {
  ecg_err e = {0};
  int rc = ecg_validate(g, &e);
  CHECK(rc == ECG_ERR_INPUT && strstr(e.msg, want), "%s: rc %d, message '%s' lacks '%s'", what, rc, e.msg, want);
  ecg_graph_free(g);
}

/* Append node i to block b's list (without touching fusion_block). */
static void list_in(ecg_graph *g, int b, int i) {
  ecg_block *blk = g->blocks[b];
  blk->nodes = realloc(blk->nodes, (blk->n_nodes + 1) * sizeof *blk->nodes);
  blk->nodes[blk->n_nodes++] = i;
}

static void test_validator(void) {
  ecg_graph *g = build();
  list_in(g, 1, node_index(g, "add"));
  expect_invalid(g, "node 'add' (Add) is in block 1 and again in block 2", "node in two blocks");

  g = build();
  g->nodes[node_index(g, "sig")]->fusion_block = 2;
  expect_invalid(g, "node 'sig' (Sigmoid) is a member of block 1 but its fusion_block is 2", "fusion_block disagrees");

  g = build();
  g->nodes[node_index(g, "exp")]->fusion_block = 7;
  expect_invalid(g, "node 'exp' (Exp) has fusion_block 7 but there is no such block", "no such block");

  g = build();
  g->nodes[node_index(g, "exp")]->fusion_block = 0;
  expect_invalid(g, "node 'exp' (Exp) has fusion_block 0 but block 0 does not list it", "unlisted member");

  g = build();
  list_in(g, 0, 42);
  expect_invalid(g, "block 0: member 42 is not a node", "member out of range");

  g = build();
  g->blocks[1]->seed = node_index(g, "exp");
  expect_invalid(g, "block 1: its seed, node 'exp' (Exp), is not a member", "seed outside");

  g = build();
  g->blocks[2]->dominant = node_index(g, "relu");
  expect_invalid(g, "block 2: its dominant, node 'relu' (Relu), is not a member", "dominant outside");

  g = build();
  g->blocks[1]->id = 5;
  expect_invalid(g, "block 1: id is 5", "ids not dense");

  g = build();
  g->blocks[0]->n_nodes = 0;
  g->nodes[node_index(g, "neg2")]->fusion_block = -1;
  expect_invalid(g, "block 0 has no nodes", "empty block");

  g = build();
  { int32_t *m = g->blocks[1]->nodes; int t = m[0]; m[0] = m[1]; m[1] = t; }
  expect_invalid(g, "block 1 lists node 'sig' (Sigmoid) before 'relu' (Relu)", "members out of order");

  g = build();
  g->blocks[1]->n_inputs = 0;
  expect_invalid(g, "block 1: tensor 'x' is missing from its inputs", "input missing");

  g = build();
  g->blocks[1]->outputs[0] = tid(g, "x");
  expect_invalid(g, "block 1: its outputs list tensor 'x'", "stray output");

  g = build();
  g->blocks[2]->n_outputs = 0;
  expect_invalid(g, "block 2: tensor 'y' is missing from its outputs", "graph output not a block output");

  g = build();
  g->tensors[tid(g, "a")]->ir_removable = true;
  expect_invalid(g, "tensor 'a' is ir_removable but node 'exp' (Exp) outside its block 1 reads it", "ir_removable read outside");

  g = build();
  g->tensors[tid(g, "y")]->ir_removable = true;
  expect_invalid(g, "tensor 'y' is ir_removable but it is a graph output", "ir_removable graph output");

  g = build();
  g->tensors[tid(g, "z")]->ir_removable = true;
  expect_invalid(g, "tensor 'z' is ir_removable but its producer 'exp' (Exp) is in no fusion block", "ir_removable unblocked");

  g = build();
  ecg_block_set_schedule(g, 1, (int64_t[]){0}, 1, 0, 0, false);
  expect_invalid(g, "block 1: schedule tile 0 is 0", "bad tile");

  /* A cycle between blocks: relu and sig in one block, exp between them outside. */
  g = ecg_graph_new();
  int x = tens(g, "x", ECG_FLOAT, DIMS(1, 4), NULL);
  int a = out(g, "a"), e1 = out(g, "e"), b = out(g, "b");
  named(g, "relu", "Relu", IDS(x), IDS(a));
  named(g, "exp", "Exp", IDS(a), IDS(e1));
  named(g, "sig", "Sigmoid", IDS(e1), IDS(b));
  set_io(g, IDS(x), IDS(b));
  ecg_err er = {0};
  CHECK(ecg_infer_shapes(g, &er) == ECG_OK, "cycle graph: %s", er.msg);
  CHECK(ecg_block_add(g, IDS(0, 2), 0, &er) == 0, "block around exp: %s", er.msg);
  expect_invalid(g, "fusion blocks form a cycle: block 0 -> node 'exp' (Exp) -> block 0", "cycle between blocks");
}

/* The schema-2 fields survive writing and reading a stream. */
static void test_roundtrip(void) {
  ecg_graph *g = build();
  ecg_block *blk = g->blocks[2];
  blk->plan = strdup("dnnfusion");
  blk->layout = strdup("NCHWc8");
  ecg_block_set_schedule(g, 2, (int64_t[]){1, 8, 32}, 3, 16, 4, true);
  FILE *f = tmpfile();
  ecg_err e = {0};
  CHECK(ecg_write(f, g, 3, &e) == ECG_OK, "write: %s", e.msg);
  rewind(f);
  ecg_graph *r = NULL;
  CHECK(ecg_read(f, &r, &e) == ECG_OK, "read: %s", e.msg);
  fclose(f);
  if (r) {
    const ecg_block *q = r->blocks[2];
    CHECK(r->n_blocks == 3 && !strcmp(q->plan, "dnnfusion") && !strcmp(q->layout, "NCHWc8") && q->seed == blk->seed &&
              q->dominant == -1 && q->n_inputs == blk->n_inputs && q->n_outputs == blk->n_outputs &&
              q->mapping_type == blk->mapping_type,
          "block fields survive the round trip");
    CHECK(q->schedule && q->schedule->n_tile == 3 && q->schedule->tile[2] == 32 && q->schedule->vector_width == 16 &&
              q->schedule->unroll == 4 && q->schedule->intensive,
          "schedule survives the round trip");
    expect_valid(r, "read back");
    ecg_graph_free(r);
  }
  ecg_graph_free(g);
}

/* ---- window geometry (ecg_conv_geom_resolve) */

/* A windowed node op over x (dims xd, rank r; a negative dim is symbolic) and, unless
 * wd is NULL, a weight of dims wd; attributes set by the caller. */
static ecg_node *win_node(ecg_graph *g, const char *op, const int64_t *xd, int r, const int64_t *wd, int rw) {
  int x = tens(g, "x", ECG_FLOAT, xd, r, "H");
  int ids[2] = {x, wd ? tens(g, "w", ECG_FLOAT, wd, rw, NULL) : -1};
  int y = out(g, "y");
  int k = ecg_add_node(g, op, op, "", 13, wd ? 2 : 1, ids, 1, &y);
  return g->nodes[k];
}

static void set_ints(ecg_node *n, const char *name, const int64_t *v, int count) { ecg_attr_set_ints(n, name, count, v); }
#define SET_INTS(n, name, ...) set_ints(n, name, (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* Resolve and compare out[], pb[], pe[] (sp = 2) with the wanted values. */
static void expect_geom(const char *what, const ecg_graph *g, const ecg_node *n, const int64_t *out_want,
                        const int64_t *pb_want, const int64_t *pe_want) {
  ecg_conv_geom gm;
  ecg_err e = {0};
  int rc = ecg_conv_geom_resolve(g, n, &gm, &e);
  CHECK(rc == ECG_OK, "%s: %s", what, e.msg);
  if (rc != ECG_OK) return;
  for (int i = 0; i < gm.sp; i++)
    CHECK(gm.out[i] == out_want[i] && gm.pb[i] == pb_want[i] && gm.pe[i] == pe_want[i],
          "%s: dim %d out %lld pads %lld/%lld, want %lld %lld/%lld", what, i, (long long)gm.out[i], (long long)gm.pb[i],
          (long long)gm.pe[i], (long long)out_want[i], (long long)pb_want[i], (long long)pe_want[i]);
}

#define V(...) (int64_t[]){__VA_ARGS__}

static void test_conv_geom(void) {
  ecg_graph *g = ecg_graph_new();
  /* x 7x8, kernel 3x2, strides 2, dilations 2: dilated kernel 5x3 */
  ecg_node *n = win_node(g, "Conv", DIMS(1, 2, 7, 8), DIMS(3, 2, 3, 2));
  SET_INTS(n, "strides", 2, 2);
  SET_INTS(n, "dilations", 2, 2);
  ecg_attr_set_s(n, "auto_pad", "SAME_UPPER");
  expect_geom("SAME_UPPER", g, n, V(4, 4), V(2, 0), V(2, 1));
  ecg_attr_set_s(n, "auto_pad", "SAME_LOWER");
  expect_geom("SAME_LOWER", g, n, V(4, 4), V(2, 1), V(2, 0));
  ecg_attr_set_s(n, "auto_pad", "VALID");
  SET_INTS(n, "pads", 1, 1, 1, 1);
  expect_geom("VALID ignores pads", g, n, V(2, 3), V(0, 0), V(0, 0));
  ecg_attr_set_s(n, "auto_pad", "NOTSET");
  SET_INTS(n, "pads", 1, 0, 2, 1);
  ecg_attr_remove(n, "strides");
  expect_geom("NOTSET pads", g, n, V(6, 7), V(1, 0), V(2, 1));
  ecg_conv_geom gm;
  ecg_err e = {0};
  CHECK(ecg_conv_geom_resolve(g, n, &gm, &e) == ECG_OK && gm.n == 1 && gm.c == 2 && gm.m == 3 && gm.group == 1 &&
            gm.k[0] == 3 && gm.k[1] == 2 && gm.d[0] == 2 && gm.s[0] == 1 && gm.x == 0 && gm.w == 1 && gm.b == -1,
        "channels, kernel, strides, operand positions");
  /* errors, each naming the node */
  struct { const char *attr, *sval; int64_t v[4]; int nv; const char *want; } bad[] = {
    {"auto_pad", "SAME", {0}, 0, "unknown auto_pad 'SAME'"},
    {"strides", NULL, {1}, 1, "attribute 'strides' has 1 values, expected 2"},
    {"strides", NULL, {0, 1}, 2, "attribute 'strides' has invalid value 0"},
    {"kernel_shape", NULL, {3, 3}, 2, "kernel_shape[1] = 3 but the weight has 2"},
    {"dilations", NULL, {5, 1}, 2, "window of spatial dim 0 (11) is larger than the padded input (10)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ecg_graph *b = ecg_graph_new();
    ecg_node *m = win_node(b, "Conv", DIMS(1, 2, 7, 8), DIMS(3, 2, 3, 2));
    SET_INTS(m, "pads", 1, 0, 2, 1);
    if (bad[i].sval) ecg_attr_set_s(m, bad[i].attr, bad[i].sval);
    else set_ints(m, bad[i].attr, bad[i].v, bad[i].nv);
    int rc = ecg_conv_geom_resolve(b, m, &gm, &e);
    CHECK(rc == ECG_ERR_INPUT && strstr(e.msg, "node 'Conv' (Conv)") && strstr(e.msg, bad[i].want),
          "bad %s: rc %d '%s' lacks '%s'", bad[i].attr, rc, e.msg, bad[i].want);
    ecg_graph_free(b);
  }
  ecg_graph_free(g);

  /* channels against group */
  g = ecg_graph_new();
  n = win_node(g, "Conv", DIMS(1, 4, 5, 5), DIMS(6, 2, 3, 3));
  ecg_attr_set_i(n, "group", 2);
  CHECK(ecg_conv_geom_resolve(g, n, &gm, &e) == ECG_OK && gm.group == 2 && gm.m == 6, "grouped conv: %s", e.msg);
  ecg_attr_set_i(n, "group", 4);
  CHECK(ecg_conv_geom_resolve(g, n, &gm, &e) == ECG_ERR_INPUT && strstr(e.msg, "channels"), "group mismatch: %s", e.msg);
  ecg_graph_free(g);

  /* symbolic input dim: unknown output and pads, the rest resolved */
  g = ecg_graph_new();
  n = win_node(g, "Conv", DIMS(1, 2, -1, 7), DIMS(3, 2, 3, 2));
  SET_INTS(n, "strides", 2, 2);
  ecg_attr_set_s(n, "auto_pad", "SAME_UPPER");
  expect_geom("symbolic SAME", g, n, V(-1, 4), V(-1, 0), V(-1, 1));
  ecg_graph_free(g);

  /* ConvTranspose: output_shape sets the pads (floor(total/2) first; ceil for SAME_LOWER) */
  g = ecg_graph_new();
  n = win_node(g, "ConvTranspose", DIMS(1, 2, 4, 5), DIMS(2, 3, 3, 2));
  SET_INTS(n, "strides", 2, 2);
  expect_geom("ConvTranspose NOTSET", g, n, V(9, 10), V(0, 0), V(0, 0));
  SET_INTS(n, "output_shape", 8, 7);
  expect_geom("ConvTranspose output_shape", g, n, V(8, 7), V(0, 1), V(1, 2));
  ecg_attr_set_s(n, "auto_pad", "SAME_LOWER");
  expect_geom("ConvTranspose output_shape SAME_LOWER", g, n, V(8, 7), V(1, 2), V(0, 1));
  ecg_attr_remove(n, "output_shape");
  expect_geom("ConvTranspose SAME_LOWER: out = in * s", g, n, V(8, 10), V(1, 0), V(0, 0));
  SET_INTS(n, "output_padding", 1, 1);
  CHECK(ecg_conv_geom_resolve(g, n, &gm, &e) == ECG_OK && gm.m == 3 && gm.out_pad[1] == 1 && gm.transposed, "ConvTranspose m, output_padding");
  ecg_graph_free(g);

  /* pooling: kernel_shape required, ceil_mode drops a window starting in the end padding */
  g = ecg_graph_new();
  n = win_node(g, "MaxPool", DIMS(1, 1, 4, 6), NULL, 0);
  CHECK(ecg_conv_geom_resolve(g, n, &gm, &e) == ECG_ERR_INPUT && strstr(e.msg, "missing attribute 'kernel_shape'"), "pool needs kernel_shape: %s", e.msg);
  SET_INTS(n, "kernel_shape", 2, 3);
  SET_INTS(n, "strides", 2, 2);
  SET_INTS(n, "pads", 0, 0, 1, 0);
  ecg_attr_set_i(n, "ceil_mode", 1);
  expect_geom("ceil_mode", g, n, V(2, 3), V(0, 0), V(1, 0));
  ecg_attr_set_i(n, "ceil_mode", 0);
  expect_geom("floor", g, n, V(2, 2), V(0, 0), V(1, 0));
  CHECK(ecg_conv_geom_resolve(g, n, &gm, &e) == ECG_OK && gm.pool && gm.m == 1 && gm.w == -1, "pool channels kept");
  ecg_graph_free(g);

  /* not a windowed operator */
  g = ecg_graph_new();
  n = win_node(g, "Relu", DIMS(1, 1, 4, 6), NULL, 0);
  CHECK(ecg_conv_geom_resolve(g, n, &gm, &e) == ECG_ERR_INPUT && strstr(e.msg, "not a convolution"), "Relu refused: %s", e.msg);
  ecg_graph_free(g);
}

/* QLinearConv reads its weight at input 3 and its bias at 8; shape inference agrees. */
static void test_qlinear_geom(void) {
  ecg_graph *g = ecg_graph_new();
  int x = tens(g, "x", ECG_UINT8, DIMS(1, 2, 7, 8), NULL), w = tens(g, "w", ECG_UINT8, DIMS(5, 2, 3, 2), NULL);
  int sc = cf32(g, "sc", (float[]){0.5f}, DIMS(1));
  int64_t zero = 0;
  int zp = ecg_add_tensor(g, "zp", ECG_UINT8, 0, NULL);
  ecg_tensor_set_data(g->tensors[zp], &zero, 1);
  int b = tens(g, "b", ECG_INT32, DIMS(5), NULL), y = out(g, "y");
  int in[9] = {x, sc, zp, w, sc, zp, sc, zp, b};
  int k = ecg_add_node(g, "qconv", "QLinearConv", "", 13, 9, in, 1, &y);
  ecg_node *n = g->nodes[k];
  SET_INTS(n, "strides", 2, 2);
  ecg_attr_set_s(n, "auto_pad", "SAME_LOWER");
  ecg_conv_geom gm;
  ecg_err e = {0};
  CHECK(ecg_conv_geom_resolve(g, n, &gm, &e) == ECG_OK && gm.w == 3 && gm.b == 8 && gm.m == 5 && gm.out[0] == 4 && gm.out[1] == 4 &&
            gm.pb[0] == 1 && gm.pe[0] == 1 && gm.pb[1] == 0 && gm.pe[1] == 0,
        "QLinearConv geometry: %s", e.msg);
  set_io(g, IDS(x, w, b), IDS(y));
  infer(g, ECG_OK, "QLinearConv");
  expect_shape(g, "y", "1x5x4x4");
  CHECK(g->tensors[y]->dtype == ECG_UINT8, "QLinearConv output dtype from y_zero_point");
  ecg_graph_free(g);
}

/* ---- the reduction table (ecg_reduction_of) */

/* Fold op over x (dtype dt, values v of dims d) reducing axis 1 (keepdims 0); the
 * folded output's values as doubles into got. Returns the folded node count. */
static int fold_reduce(const char *op, int dt, const double *v, int64_t d0, int64_t d1, double *got) {
  ecg_graph *g = ecg_graph_new();
  int x = ecg_add_tensor(g, "x", dt, 2, (int64_t[]){d0, d1});
  void *buf = calloc((size_t)(d0 * d1), 8);
  for (int64_t i = 0; i < d0 * d1; i++) {
    if (ecg_dtype_is_float(dt)) ecg_store_f64(buf, dt, i, v[i]);
    else ecg_store_i64(buf, dt, i, (int64_t)v[i]);
  }
  ecg_tensor_set_data(g->tensors[x], buf, (size_t)(d0 * d1) * ecg_dtype_size(dt));
  free(buf);
  int y = out(g, "y");
  int k = ecg_add_node(g, op, op, "", 13, 1, &x, 1, &y);
  ecg_attr_set_ints(g->nodes[k], "axes", 1, (int64_t[]){1});
  ecg_attr_set_i(g->nodes[k], "keepdims", 0);
  set_io(g, NULL, 0, &y, 1);
  int nf = 0;
  ecg_err e = {0};
  CHECK(ecg_fold_constants(g, &nf, &e) == ECG_OK, "%s: %s", op, e.msg);
  const ecg_tensor *t = g->tensors[g->outputs[0]];
  for (int64_t i = 0; t->is_const && i < d0; i++) got[i] = ecg_const_f64(t, i);
  ecg_graph_free(g);
  return nf;
}

static void test_reduction_table(void) {
  const double x[6] = {1, -2, 3, 0.5, 0.25, -4};
  struct { const char *op; double want[2]; } cases[] = {
    {"ReduceSum", {2, -3.25}},
    {"ReduceMean", {2.0 / 3, -3.25 / 3}},
    {"ReduceMax", {3, 0.5}},
    {"ReduceMin", {-2, -4}},
    {"ReduceProd", {-6, -0.5}},
    {"ReduceL1", {6, 4.75}},
    {"ReduceL2", {sqrt(14), sqrt(0.25 + 0.0625 + 16)}},
    {"ReduceSumSquare", {14, 16.3125}},
    {"ReduceLogSum", {log(2), NAN}},
    {"ReduceLogSumExp", {log(exp(1) + exp(-2) + exp(3)), log(exp(0.5) + exp(0.25) + exp(-4))}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    double got[2] = {-99, -99};
    int nf = fold_reduce(cases[i].op, ECG_FLOAT, x, 2, 3, got);
    for (int k = 0; k < 2; k++) {
      double w = cases[i].want[k];
      bool ok = isnan(w) ? isnan(got[k]) : fabs(got[k] - w) <= 1e-6 * (1 + fabs(w));
      CHECK(nf == 1 && ok, "%s row %d: folded %g, want %g", cases[i].op, k, got[k], w);
    }
    const ecg_op_info *op = ecg_op_lookup(cases[i].op, "");
    const ecg_reduction *r = ecg_reduction_of(op->id);
    CHECK(r && r->c_map && r->c_combine && r->c_finish, "%s has a table row", cases[i].op);
  }
  /* NaN propagates through Max and Min; integer Max of negatives starts from the lowest */
  const double xn[4] = {1, NAN, -3, 2};
  double got[2];
  fold_reduce("ReduceMax", ECG_FLOAT, xn, 2, 2, got);
  CHECK(isnan(got[0]) && got[1] == 2, "ReduceMax NaN: %g %g", got[0], got[1]);
  fold_reduce("ReduceMin", ECG_FLOAT, xn, 2, 2, got);
  CHECK(isnan(got[0]) && got[1] == -3, "ReduceMin NaN: %g %g", got[0], got[1]);
  const double xi[4] = {-7, -3, -9, -20};
  fold_reduce("ReduceMax", ECG_INT32, xi, 2, 2, got);
  CHECK(got[0] == -3 && got[1] == -9, "int32 ReduceMax of negatives: %g %g", got[0], got[1]);
  fold_reduce("ReduceMean", ECG_INT64, xi, 2, 2, got);
  CHECK(got[0] == -5 && got[1] == -14, "int64 ReduceMean truncates: %g %g", got[0], got[1]);
  /* the C the emitters print */
  const ecg_reduction *mx = ecg_reduction_of(ECG_OP_ReduceMax), *l2 = ecg_reduction_of(ECG_OP_ReduceL2);
  CHECK(!strcmp(ecg_reduction_identity_c(mx, ECG_INT32), "INT32_MIN") && !strcmp(ecg_reduction_identity_c(mx, ECG_UINT8), "0") &&
            !strcmp(ecg_reduction_identity_c(mx, ECG_FLOAT), "-INFINITY") && ecg_reduction_identity_c(mx, ECG_STRING) == NULL,
        "typed identities");
  char buf[128], mapped[64];
  snprintf(mapped, sizeof mapped, l2->c_map, "x[j]");
  snprintf(buf, sizeof buf, l2->c_combine, "y[o]", mapped);
  CHECK(!strcmp(buf, "y[o] + x[j] * x[j]"), "ReduceL2 step: %s", buf);
  snprintf(buf, sizeof buf, l2->c_finish, "y[i]", "cnt");
  CHECK(!strcmp(buf, "sqrt(y[i])"), "ReduceL2 finish: %s", buf);
  CHECK(ecg_reduction_of(ECG_OP_Relu) == NULL, "Relu is not a reduction");
}

/* EOP placements (schema 4): set, validate, remap with removals. */
static void test_placements(void) {
  ecg_graph *g = build();
  ecg_err e = {0};
  int isig = node_index(g, "sig"), iadd = node_index(g, "add"), irelu = node_index(g, "relu");
  CHECK(ecg_placement_set(g, isig, 0, 0.37, "batch", &e) == ECG_OK && ecg_placement_set(g, iadd, 0, 1, "rows", &e) == ECG_OK,
        "placements set: %s", e.msg);
  CHECK(ecg_placement_set(g, isig, 0, 0.5, "batch", &e) == ECG_OK && g->n_placements == 2 && g->placements[0]->cpu_share == 0.5f,
        "setting a placed node replaces its placement");
  expect_valid(g, "placed");
  CHECK(ecg_placement_set(g, irelu, 0, 1.5, "batch", &e) == ECG_ERR_INPUT && strstr(e.msg, "outside [0, 1]"), "share 1.5 refused: %s", e.msg);
  CHECK(ecg_placement_set(g, 999, 0, 0.5, "batch", &e) == ECG_ERR_INPUT, "node out of range refused");
  g->placements[1]->node = isig; /* hand-made: the same node placed twice */
  CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "placed twice"), "placed twice: %s", e.msg);
  g->placements[1]->node = iadd;
  g->placements[1]->axis = 9;
  CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "axis 9"), "axis beyond the rank: %s", e.msg);
  g->placements[1]->axis = 0;
  g->placements[0]->cpu_share = -0.25f;
  CHECK(ecg_validate(g, &e) == ECG_ERR_INPUT && strstr(e.msg, "cpu_share"), "negative share: %s", e.msg);
  g->placements[0]->cpu_share = 0.5f;
  /* remove sig: its placement goes, add's follows its new index */
  int n = (int)g->n_nodes, map[16], w = 0;
  for (int i = 0; i < n; i++) map[i] = i == isig ? -1 : w++;
  ecg_remap_report rep = {0};
  CHECK(ecg_remap_nodes(g, map, (size_t)n, &rep, &e) == ECG_OK && rep.placements_dropped == 1 && g->n_placements == 1,
        "remap drops the removed node's placement (%d dropped): %s", rep.placements_dropped, e.msg);
  CHECK(g->placements[0]->node == node_index(g, "add"), "the kept placement follows its node");
  CHECK(ecg_placement_validate(g, &e) == ECG_OK, "placements valid after the remap: %s", e.msg);
  ecg_graph_free(g);
}

/* ecg_node_copy_attrs: a deep copy (the copy outlives a change to the original), refused
 * onto a node that has attributes. */
static void test_copy_attrs(void) {
  ecg_graph *a = build(), *b = build();
  ecg_node *src = a->nodes[0], *dst = b->nodes[0], *other = b->nodes[1];
  ecg_attr_set_ints(src, "pads", 4, (int64_t[]){1, 2, 3, 4});
  ecg_attr_set_s(src, "auto_pad", "NOTSET");
  for (size_t i = dst->n_attrs; i > 0; i--) ecg_attr_remove(dst, dst->attrs[i - 1]->name);
  CHECK(ecg_node_copy_attrs(dst, src) == ECG_OK && dst->n_attrs == src->n_attrs, "copied %zu of %zu", dst->n_attrs, src->n_attrs);
  ecg_attr_set_ints(src, "pads", 4, (int64_t[]){9, 9, 9, 9});
  const int64_t *v = NULL;
  char buf[32];
  CHECK(ecg_attr_ints(dst, "pads", &v) == 4 && v[0] == 1 && v[3] == 4, "the copy keeps its own pads");
  CHECK(!strcmp(ecg_attr_s(dst, "auto_pad", "", buf, sizeof buf), "NOTSET"), "strings copied");
  ecg_attr_set_i(other, "axis", 1);
  CHECK(ecg_node_copy_attrs(other, src) == ECG_ERR_INTERNAL, "refused onto a node with attributes");
  ecg_graph_free(a);
  ecg_graph_free(b);
}

int main(void) {
  test_copy_attrs();
  test_placements();
  test_block_add();
  test_dominant();
  test_survive_sort_and_fold();
  test_schedules();
  test_remap();
  test_compact_report();
  test_validator();
  test_roundtrip();
  test_conv_geom();
  test_qlinear_geom();
  test_reduction_table();
  return unit_summary();
}
