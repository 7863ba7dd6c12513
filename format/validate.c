/* libecg: the graph validator (STYLE 11; TVM well_formed). */
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"

/* Label of a unit of a quotient graph: a block (or, when subgraphs, a partition
 * subgraph), or a node in no block. */
static void unit_label(const ecg_graph *g, bool subgraphs, int u, char *buf, size_t n) {
  char lb[256];
  if (u < 0) snprintf(buf, n, "...");
  else if (subgraphs) snprintf(buf, n, "subgraph %d", u);
  else if ((size_t)u < g->n_blocks) snprintf(buf, n, "block %d", u);
  else {
    const ecg_node *nd = g->nodes[(size_t)u - g->n_blocks];
    snprintf(buf, n, "node '%s' (%s)", ecg_node_label(g, nd, lb, sizeof lb), nd->op_type);
  }
}

/* The quotient graph whose vertices are the nu units unit[i] of the nodes (an edge where
 * a value crosses between two of them) must be acyclic: for fusion blocks (units: blocks
 * and nodes in no block) a cycle would make the blocks impossible to run one after
 * another as whole kernels (DNNFusion §3.4.3); for partition subgraphs it is AGO's n-way
 * acyclic partition (Definition 1). On a cycle, the message walks it. */
static int quotient_acyclic(const ecg_graph *g, const int *producer, const int *unit, size_t nu, bool subgraphs,
                            ecg_err *e) {
  size_t ne = 0;
  for (size_t i = 0; i < g->n_nodes; i++) ne += g->nodes[i]->n_inputs;
  int *eu = malloc(sizeof(int) * (ne + 1)), *ev = malloc(sizeof(int) * (ne + 1));
  int *start = calloc(nu + 2, sizeof(int)), *succ = malloc(sizeof(int) * (ne + 1));
  int *indeg = calloc(nu + 1, sizeof(int)), *queue = malloc(sizeof(int) * (nu + 1));
  int *seen = calloc(nu + 1, sizeof(int));
  int rc = ECG_OK;
  if (!eu || !ev || !start || !succ || !indeg || !queue || !seen) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  ne = 0;
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
      int t = g->nodes[i]->inputs[k];
      if (t < 0 || producer[t] < 0) continue;
      int a = unit[producer[t]], b = unit[i];
      if (a == b) continue;
      eu[ne] = a; ev[ne++] = b;
      start[a + 1]++;
      indeg[b]++;
    }
  for (size_t u = 0; u < nu; u++) start[u + 1] += start[u];
  memcpy(queue, start, sizeof(int) * nu); /* fill cursors, reused as the queue below */
  for (size_t k = 0; k < ne; k++) succ[queue[eu[k]]++] = ev[k];
  size_t head = 0, tail = 0;
  for (size_t u = 0; u < nu; u++) if (indeg[u] == 0) queue[tail++] = (int)u;
  while (head < tail) {
    int u = queue[head++];
    for (int j = start[u]; j < start[u + 1]; j++) if (--indeg[succ[j]] == 0) queue[tail++] = succ[j];
  }
  if (tail == nu) goto out;
  /* Walk back along unfinished predecessors until a unit repeats: that loop is a cycle. */
  int u = 0;
  while (indeg[u] == 0) u++;
  while (!seen[u]) {
    seen[u] = 1;
    for (size_t k = 0; k < ne; k++) if (ev[k] == u && indeg[eu[k]] > 0) { u = eu[k]; break; }
  }
  /* u is on the cycle: repeating the same choices from u comes back to u. The walk goes
   * against the edges, so print it from its end. */
  int cyc[32], nc = 0, v = u;
  do {
    cyc[nc++] = v;
    for (size_t k = 0; k < ne; k++) if (ev[k] == v && indeg[eu[k]] > 0) { v = eu[k]; break; }
  } while (v != u && nc < 32);
  char msg[900] = "", lbu[300];
  size_t off = 0;
  for (int k = nc; k >= 0 && off < sizeof msg; k--) {
    if (k == nc) unit_label(g, subgraphs, v == u ? u : -1, lbu, sizeof lbu);
    else unit_label(g, subgraphs, cyc[k], lbu, sizeof lbu);
    int w = snprintf(msg + off, sizeof msg - off, "%s%s", k == nc ? "" : " -> ", lbu);
    if (w < 0) break;
    off += (size_t)w;
  }
  rc = ecg_errf(e, ECG_ERR_INPUT, "%s form a cycle: %s", subgraphs ? "partition subgraphs" : "fusion blocks", msg);
out:
  free(eu); free(ev); free(start); free(succ); free(indeg); free(queue); free(seen);
  return rc;
}

/* The block quotient graph (units: blocks, and nodes in no block) is acyclic. */
static int blocks_acyclic(const ecg_graph *g, const int *producer, ecg_err *e) {
  int *unit = malloc(sizeof(int) * (g->n_nodes + 1));
  if (!unit) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t i = 0; i < g->n_nodes; i++)
    unit[i] = g->nodes[i]->fusion_block >= 0 ? g->nodes[i]->fusion_block : (int)g->n_blocks + (int)i;
  int rc = quotient_acyclic(g, producer, unit, g->n_blocks + g->n_nodes, false, e);
  free(unit);
  return rc;
}

/* Partition subgraphs (AGO §IV-B, format/ecg.h): ids dense, members in range and
 * ascending, every node in exactly one subgraph, no fusion block split across two, and
 * the quotient graph over subgraphs acyclic. Nothing to check when there are none. */
static int validate_subgraphs(const ecg_graph *g, ecg_err *e) {
  if (g->n_subgraphs == 0) return ECG_OK;
  char lb[256];
  size_t nn = g->n_nodes;
  int *sub = malloc(sizeof(int) * (nn + 1)), *producer = malloc(sizeof(int) * (g->n_tensors + 1));
  int *block_sub = malloc(sizeof(int) * (g->n_blocks + 1));
  int rc = ECG_OK;
  if (!sub || !producer || !block_sub) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  for (size_t i = 0; i < nn; i++) sub[i] = -1;
  for (size_t b = 0; b < g->n_blocks; b++) block_sub[b] = -1;
  for (size_t s = 0; s < g->n_subgraphs; s++) {
    const ecg_subgraph *sg = g->subgraphs[s];
    if (sg->id != (int)s) { rc = ecg_errf(e, ECG_ERR_INPUT, "subgraph at position %zu has id %d (ids must be dense)", s, sg->id); goto out; }
    if (sg->n_nodes == 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "subgraph %zu has no node", s); goto out; }
    for (size_t m = 0; m < sg->n_nodes; m++) {
      int i = sg->nodes[m];
      if (i < 0 || (size_t)i >= nn) { rc = ecg_errf(e, ECG_ERR_INPUT, "subgraph %zu: member %zu is node index %d (of %zu)", s, m, i, nn); goto out; }
      const ecg_node *n = g->nodes[i];
      if (sub[i] >= 0) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s) is in subgraph %d and in subgraph %zu (a node is in exactly one)",
                      ecg_node_label(g, n, lb, sizeof lb), n->op_type, sub[i], s);
        goto out;
      }
      if (m > 0 && sg->nodes[m - 1] >= i) { rc = ecg_errf(e, ECG_ERR_INPUT, "subgraph %zu: members not listed in ascending order", s); goto out; }
      sub[i] = (int)s;
      int b = n->fusion_block;
      if (b >= 0 && (size_t)b < g->n_blocks) {
        if (block_sub[b] >= 0 && block_sub[b] != (int)s) {
          rc = ecg_errf(e, ECG_ERR_INPUT, "fusion block %d is split across subgraphs %d and %zu (node '%s' (%s))", b, block_sub[b], s,
                        ecg_node_label(g, n, lb, sizeof lb), n->op_type);
          goto out;
        }
        block_sub[b] = (int)s;
      }
    }
  }
  for (size_t i = 0; i < nn; i++)
    if (sub[i] < 0) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s) is in no subgraph (a partitioned graph covers every node)",
                    ecg_node_label(g, g->nodes[i], lb, sizeof lb), g->nodes[i]->op_type);
      goto out;
    }
  ecg_producers(g, producer);
  rc = quotient_acyclic(g, producer, sub, g->n_subgraphs, true, e);
out:
  free(sub); free(producer); free(block_sub);
  return rc;
}

/* Is tensor t in list[n]? */
static bool listed(const int32_t *list, size_t n, int t) {
  for (size_t k = 0; k < n; k++) if (list[k] == t) return true;
  return false;
}

/* Block b's listed inputs (or outputs) against the computed ones, as sets. */
static int same_io(const ecg_graph *g, int b, const char *what, const int32_t *have, size_t n_have,
                   const int32_t *want, size_t n_want, ecg_err *e) {
  for (size_t k = 0; k < n_have; k++) {
    int t = have[k];
    if (t < 0 || (size_t)t >= g->n_tensors) return ecg_errf(e, ECG_ERR_INPUT, "block %d: %s %zu refers to tensor id %d (of %zu)", b, what, k, t, g->n_tensors);
    if (!listed(want, n_want, t) || listed(have, k, t))
      return ecg_errf(e, ECG_ERR_INPUT, "block %d: its %s list tensor '%s'%s", b, what, g->tensors[t]->name,
                      listed(have, k, t) ? " twice" : strcmp(what, "inputs") == 0 ? ", which no member reads from outside the block" : ", which is not a value the block writes for a reader outside it");
  }
  for (size_t k = 0; k < n_want; k++)
    if (!listed(have, n_have, want[k]))
      return ecg_errf(e, ECG_ERR_INPUT, "block %d: tensor '%s' is missing from its %s (%s)", b, g->tensors[want[k]]->name, what,
                      strcmp(what, "inputs") == 0 ? "a member reads it from outside the block" : "a node outside the block or the graph output reads it");
  return ECG_OK;
}

/* Fusion blocks (ecg.h "fusion blocks"): membership, roles, order, inputs/outputs,
 * acyclicity of the quotient graph, ir_removable. Runs after the node checks, so tensor
 * ids of nodes are in range. */
static int validate_blocks(const ecg_graph *g, ecg_err *e) {
  size_t nn = g->n_nodes, nt = g->n_tensors, nb = g->n_blocks;
  char lb[256], lb2[256];
  int *owner = malloc(sizeof(int) * (nn + 1)), *pos = malloc(sizeof(int) * (nn + 1));
  int *producer = malloc(sizeof(int) * (nt + 1)), *inner = malloc(sizeof(int) * (nt + 1));
  int *reader = malloc(sizeof(int) * (nt + 1)), *stamp = calloc(nt + 1, sizeof(int));
  int rc = ECG_OK;
  if (!owner || !pos || !producer || !inner || !reader || !stamp) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  for (size_t i = 0; i < nn; i++) owner[i] = -1;
  for (size_t b = 0; b < nb; b++) {
    const ecg_block *blk = g->blocks[b];
    if (blk->id != (int)b) { rc = ecg_errf(e, ECG_ERR_INPUT, "block %zu: id is %d (block ids are dense: blocks[i].id == i)", b, blk->id); goto out; }
    if (blk->n_nodes == 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "block %zu has no nodes", b); goto out; }
    if (blk->layout && blk->layout[0] && strcmp(blk->layout, "NCHWc8") && strcmp(blk->layout, "NCHWc16")) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "block %zu: unknown layout '%.40s' (\"\" = NCHW, \"NCHWc8\" or \"NCHWc16\")", b, blk->layout);
      goto out;
    }
    for (size_t m = 0; m < blk->n_nodes; m++) {
      int i = blk->nodes[m];
      if (i < 0 || (size_t)i >= nn) { rc = ecg_errf(e, ECG_ERR_INPUT, "block %zu: member %d is not a node (the graph has %zu)", b, i, nn); goto out; }
      if (owner[i] >= 0) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s) is in block %d and again in block %zu (a node is in at most one block)",
                      ecg_node_label(g, g->nodes[i], lb, sizeof lb), g->nodes[i]->op_type, owner[i], b);
        goto out;
      }
      owner[i] = (int)b;
      pos[i] = (int)m;
    }
    const int32_t roles[2] = {blk->seed, blk->dominant};
    for (int r = 0; r < 2; r++)
      if (roles[r] != -1 && (roles[r] < 0 || (size_t)roles[r] >= nn || owner[roles[r]] != (int)b)) {
        if (roles[r] >= 0 && (size_t)roles[r] < nn)
          rc = ecg_errf(e, ECG_ERR_INPUT, "block %zu: its %s, node '%s' (%s), is not a member", b, r ? "dominant" : "seed",
                        ecg_node_label(g, g->nodes[roles[r]], lb, sizeof lb), g->nodes[roles[r]]->op_type);
        else
          rc = ecg_errf(e, ECG_ERR_INPUT, "block %zu: its %s is %d, neither a member nor -1", b, r ? "dominant" : "seed", roles[r]);
        goto out;
      }
    const ecg_schedule *s = blk->schedule;
    for (size_t k = 0; s && k < s->n_tile; k++)
      if (s->tile[k] <= 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "block %zu: schedule tile %zu is %lld (tiles are > 0)", b, k, (long long)s->tile[k]); goto out; }
    if (s && (s->vector_width < 0 || s->unroll < 0 || s->vector_width > ECG_SCHED_MAX_VECTOR || s->unroll > ECG_SCHED_MAX_UNROLL || s->threads < 0 ||
              s->threads > ECG_SCHED_MAX_THREADS || s->conv_algo < 0 || s->conv_algo >= ECG_CONV_ALGO_COUNT ||
              s->intensive_fusion < 0 || s->intensive_fusion >= ECG_INTENSIVE_COUNT)) {
      const int d = blk->dominant >= 0 ? blk->dominant : blk->nodes[0];
      rc = ecg_errf(e, ECG_ERR_INPUT,
                    "block %zu (node '%s', %s): schedule vector_width %d, unroll %d, threads %d, conv_algo %d, intensive_fusion %d out of range "
                    "(vector_width 0..%d, unroll 0..%d, threads 0..%d, conv_algo 0..%d, intensive_fusion 0..%d; 0 = the lowering chooses)",
                    b, ecg_node_label(g, g->nodes[d], lb, sizeof lb), g->nodes[d]->op_type, s->vector_width, s->unroll, s->threads,
                    s->conv_algo, s->intensive_fusion, ECG_SCHED_MAX_VECTOR, ECG_SCHED_MAX_UNROLL, ECG_SCHED_MAX_THREADS,
                    ECG_CONV_ALGO_COUNT - 1, ECG_INTENSIVE_COUNT - 1);
      goto out;
    }
  }
  for (size_t i = 0; i < nn; i++) {
    const ecg_node *n = g->nodes[i];
    if (n->fusion_block == owner[i]) continue;
    if (owner[i] >= 0)
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s) is a member of block %d but its fusion_block is %d", ecg_node_label(g, n, lb, sizeof lb), n->op_type, owner[i], n->fusion_block);
    else if (n->fusion_block >= 0 && (size_t)n->fusion_block < nb)
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s) has fusion_block %d but block %d does not list it", ecg_node_label(g, n, lb, sizeof lb), n->op_type, n->fusion_block, n->fusion_block);
    else
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s) has fusion_block %d but there is no such block (%zu blocks)", ecg_node_label(g, n, lb, sizeof lb), n->op_type, n->fusion_block, nb);
    goto out;
  }
  ecg_producers(g, producer);
  for (size_t i = 0; i < nn; i++) {
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; owner[i] >= 0 && k < n->n_inputs; k++) {
      int t = n->inputs[k], p = t >= 0 ? producer[t] : -1;
      if (p >= 0 && owner[p] == owner[i] && pos[p] > pos[(int)i]) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "block %d lists node '%s' (%s) before '%s' (%s), which produces its input '%s' (members are in topological order)",
                      owner[i], ecg_node_label(g, n, lb, sizeof lb), n->op_type, ecg_node_label(g, g->nodes[p], lb2, sizeof lb2), g->nodes[p]->op_type, g->tensors[t]->name);
        goto out;
      }
    }
  }
  ecg_block_internal_tensors(g, producer, inner, reader);
  for (size_t b = 0; b < nb; b++) {
    const ecg_block *blk = g->blocks[b];
    int32_t *in, *outs;
    size_t n_in, n_out;
    if ((rc = ecg_block_io_compute(g, (int)b, producer, inner, stamp, &in, &n_in, &outs, &n_out)) != ECG_OK) { rc = ecg_errf(e, rc, "out of memory"); goto out; }
    rc = same_io(g, (int)b, "inputs", blk->inputs, blk->n_inputs, in, n_in, e);
    if (rc == ECG_OK) rc = same_io(g, (int)b, "outputs", blk->outputs, blk->n_outputs, outs, n_out, e);
    free(in);
    free(outs);
    if (rc != ECG_OK) goto out;
  }
  if ((rc = blocks_acyclic(g, producer, e)) != ECG_OK) goto out;
  for (size_t t = 0; t < nt; t++) {
    const ecg_tensor *x = g->tensors[t];
    if (!x->ir_removable || inner[t] >= 0) continue;
    int p = producer[t];
    if (p < 0)
      rc = ecg_errf(e, ECG_ERR_INPUT, "tensor '%s' is ir_removable but no node produces it (graph inputs and constants stay in memory)", x->name);
    else if (owner[p] < 0)
      rc = ecg_errf(e, ECG_ERR_INPUT, "tensor '%s' is ir_removable but its producer '%s' (%s) is in no fusion block", x->name,
                    ecg_node_label(g, g->nodes[p], lb, sizeof lb), g->nodes[p]->op_type);
    else if (reader[t] >= 0)
      rc = ecg_errf(e, ECG_ERR_INPUT, "tensor '%s' is ir_removable but node '%s' (%s) outside its block %d reads it", x->name,
                    ecg_node_label(g, g->nodes[reader[t]], lb, sizeof lb), g->nodes[reader[t]]->op_type, owner[p]);
    else
      rc = ecg_errf(e, ECG_ERR_INPUT, "tensor '%s' is ir_removable but it is a graph output", x->name);
    goto out;
  }
out:
  free(owner); free(pos); free(producer); free(inner); free(reader); free(stamp);
  return rc;
}

/* A tensor no node, graph input or constant provides is allowed in a subgraph when the
 * node owning the subgraph captures it by name (ecg.h "control flow"). */
static bool captured(const ecg_node *owner, const ecg_tensor *t) {
  return owner && ecg_node_capture_index(owner, t->name, strlen(t->name)) >= 0;
}

/* ecg_validate, and ecg_validate_scope for a subgraph of node owner (captures allowed,
 * shape functions not re-run: the owner's shape function infers the subgraph). */
static int validate_impl(const ecg_graph *g, const ecg_node *owner, ecg_err *e) {
  size_t nt = g->n_tensors;
  char lb[256];
  int *writer = malloc(sizeof(int) * (nt + 1));
  bool *is_input = calloc(nt + 1, 1);
  int *order = malloc(sizeof(int) * (g->n_nodes + 1));
  int rc = ECG_OK;
  if (!writer || !is_input || !order) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  for (size_t t = 0; t < nt; t++) writer[t] = -1;
  for (size_t k = 0; k < g->n_inputs; k++) {
    int t = g->inputs[k];
    if (t < 0 || (size_t)t >= nt) { rc = ecg_errf(e, ECG_ERR_INPUT, "graph input %zu refers to tensor id %d (of %zu)", k, t, nt); goto out; }
    is_input[t] = true;
  }
  if (g->n_nodes > ECG_MAX_NODES || nt > ECG_MAX_TENSORS) {
    rc = ecg_errf(e, ECG_ERR_INPUT, "graph has %zu nodes and %zu tensors, more than the limit of %zu each",
                  g->n_nodes, nt, (size_t)ECG_MAX_NODES);
    goto out;
  }
  for (size_t t = 0; t < nt; t++) {
    const ecg_tensor *x = g->tensors[t];
    int64_t numel = ecg_tensor_numel(x);
    if (numel > ECG_MAX_ELEMENTS) {
      char sb[256];
      rc = ecg_errf(e, ECG_ERR_INPUT, "tensor '%s' has shape %s, more than the limit of 2^40 elements", x->name, ecg_shape_str(x, sb, sizeof sb));
      goto out;
    }
    if (!x->is_const) continue;
    size_t es = ecg_dtype_size(x->dtype);
    if (numel < 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "constant tensor '%s' has no static shape", x->name); goto out; }
    if (es == 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "constant tensor '%s' has unsupported dtype %s", x->name, ecg_dtype_name(x->dtype)); goto out; }
    if (x->data.len != (size_t)numel * es) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "constant tensor '%s' holds %zu bytes, its shape and dtype need %zu", x->name, x->data.len, (size_t)numel * es);
      goto out;
    }
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    if (n->n_outputs == 0) { /* every ONNX operator has at least one output */
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): has no outputs", ecg_node_label(g, n, lb, sizeof lb), n->op_type);
      goto out;
    }
    for (size_t k = 0; k < n->n_outputs; k++) {
      int t = n->outputs[k];
      if (t < 0) continue;
      if ((size_t)t >= nt) { rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): output %zu refers to tensor id %d (of %zu)", ecg_node_label(g, n, lb, sizeof lb), n->op_type, k, t, nt); goto out; }
      if (writer[t] >= 0 || is_input[t] || g->tensors[t]->is_const) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): tensor '%s' is written more than once", ecg_node_label(g, n, lb, sizeof lb), n->op_type, g->tensors[t]->name);
        goto out;
      }
      writer[t] = (int)i;
    }
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) {
      int t = n->inputs[k];
      if (t < 0) continue;
      if ((size_t)t >= nt) { rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): input %zu refers to tensor id %d (of %zu): dangling tensor", ecg_node_label(g, n, lb, sizeof lb), n->op_type, k, t, nt); goto out; }
      if (writer[t] < 0 && !is_input[t] && !g->tensors[t]->is_const && !captured(owner, g->tensors[t])) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): input '%s' is dangling: no node, graph input or initializer provides it", ecg_node_label(g, n, lb, sizeof lb), n->op_type, g->tensors[t]->name);
        goto out;
      }
    }
    if (!ecg_node_op(n)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s': unsupported operator %s (domain '%s')", ecg_node_label(g, n, lb, sizeof lb), n->op_type, n->domain);
      goto out;
    }
  }
  for (size_t k = 0; k < g->n_outputs; k++) {
    int t = g->outputs[k];
    if (t < 0 || (size_t)t >= nt) { rc = ecg_errf(e, ECG_ERR_INPUT, "graph output %zu refers to tensor id %d (of %zu)", k, t, nt); goto out; }
    if (writer[t] < 0 && !is_input[t] && !g->tensors[t]->is_const && !captured(owner, g->tensors[t])) { rc = ecg_errf(e, ECG_ERR_INPUT, "graph output '%s' is produced by no node", g->tensors[t]->name); goto out; }
  }
  if ((rc = ecg_topo_order(g, order, e)) != ECG_OK) goto out;
  if ((rc = validate_blocks(g, e)) != ECG_OK) goto out;
  if ((rc = validate_subgraphs(g, e)) != ECG_OK) goto out;
  if ((rc = ecg_sparse_validate(g, e)) != ECG_OK) goto out;
  if ((rc = ecg_placement_validate(g, e)) != ECG_OK) goto out;
  /* Shapes and dtypes: re-run each shape function on a copy and compare (a control-flow
   * node's shape function infers and checks its subgraphs, ecg_validate_scope). */
  if (!owner) {
    size_t len = ecg__graph__get_packed_size(g);
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
    ecg__graph__pack(g, buf);
    ecg_graph *c = ecg__graph__unpack(NULL, len, buf);
    free(buf);
    if (!c) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
    for (size_t oi = 0; oi < c->n_nodes && rc == ECG_OK; oi++) {
      ecg_node *n = c->nodes[order[oi]];
      const ecg_op_info *op = ecg_node_op(n);
      bool known = true;
      for (size_t k = 0; k < n->n_inputs; k++) {
        const ecg_tensor *t = ecg_node_input(c, n, (int)k);
        if (t && !t->shape_known) known = false;
      }
      if (!known) continue;
      int dt[16];
      int64_t dims[16][ECG_MAX_RANK];
      int rank[16];
      size_t no = n->n_outputs < 16 ? n->n_outputs : 16;
      for (size_t k = 0; k < no; k++) {
        const ecg_tensor *t = ecg_node_output(c, n, (int)k);
        dt[k] = t ? t->dtype : 0;
        rank[k] = t ? ecg_tensor_dims(t, dims[k]) : -1;
      }
      ecg_err sub;
      if (op->infer(c, n, &sub) != ECG_OK) { rc = ecg_errf(e, ECG_ERR_INPUT, "%s", sub.msg); break; }
      for (size_t k = 0; k < no && rc == ECG_OK; k++) {
        const ecg_tensor *t = ecg_node_output(c, n, (int)k);
        if (!t || rank[k] < 0) continue;
        int64_t d2[ECG_MAX_RANK];
        int r2 = ecg_tensor_dims(t, d2);
        bool same = r2 == rank[k] && t->dtype == dt[k];
        for (int j = 0; same && j < r2; j++) same = d2[j] == dims[k][j];
        if (!same) {
          char s1[128], s2[128];
          ecg_shape_str(g->tensors[g->nodes[order[oi]]->outputs[k]], s1, sizeof s1);
          ecg_shape_str(t, s2, sizeof s2);
          rc = ecg_errf(e, ECG_ERR_INPUT, "node '%s' (%s): output '%s' is %s %s but its inputs give %s %s",
                        ecg_node_label(c, n, lb, sizeof lb), n->op_type, t->name, ecg_dtype_name(dt[k]), s1,
                        ecg_dtype_name(t->dtype), s2);
        }
      }
    }
    ecg_graph_free(c);
  }
out:
  free(writer); free(is_input); free(order);
  return rc;
}

int ecg_validate(const ecg_graph *g, ecg_err *e) { return validate_impl(g, NULL, e); }

int ecg_validate_scope(const ecg_graph *sg, const ecg_node *owner, ecg_err *e) { return validate_impl(sg, owner, e); }
