/* Fusion plans (DNNFusion, Niu dissertation §3.4.3, Listing 3.1; baselines of §3.5).
 *
 * dnnfusion: seeds are One-to-One operators, smallest intermediate result first; a seed's
 * block grows along successors, then predecessors (an operator may join with some but not
 * all of its predecessors), each step decided by Table 3.3 (table.c) on the block's fused
 * mapping type and the candidate's: through joins, break stops, depend is decided by the
 * profile database where it has the pair (--profile-db), else by the static rule (join:
 * the constraint check below already holds the candidate to what recomputes nothing).  fixed: TVM-style
 * patterns, a Many-to-Many operator with the chain of One-to-One operators that follows
 * it through single-consumer edges, and such chains alone.  none: no blocks.
 *
 * Constraint check (both plans): a block holds One-to-One/One-to-One-broadcasting
 * (One-to-Many) operators whose outputs have the block's element count, after at most
 * one Many-to-Many operator with one float32 output that comes first (the kernels
 * ecg-lower generates: one loop nest, or a runtime kernel with a generated epilogue);
 * at most MAX_MEMBERS members; never a cycle between blocks. One exception to equal
 * element counts: a squeeze-and-excitation tail (se_tail_ok), a pointwise conv on a 1x1
 * plane [+ act] whose result scales a larger tensor through a broadcasting Mul (Table 3.3's
 * Many-to-Many -> One-to-Many depend cell; ecg-lower computes the scales once, then the
 * broadcast); nothing joins such a block after the Mul. On an ECG kept symbolic
 * (onnx2ecg without --input-shape), element counts are compared as RDP's shapes
 * (tensor_key): tensors of the same dims, numbers or RDP expressions, have equal counts.
 */
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "fuse.h"
#include "scalar.h"

#define MAX_MEMBERS 24 /* block-size bound: the register pressure of one fused loop body */

typedef struct {
  ecg_graph *g;
  int nn, nt;
  int *pos;              /* topological position of each node */
  int *cons_start, *cons; /* consumers of tensor t: cons[cons_start[t] .. cons_start[t+1]) */
  int *prod;             /* producer of each tensor, -1 */
  char *graph_out;       /* tensor is a graph output */
  int *blk;              /* node -> block, -1 */
  int *mark;             /* scratch for the cycle check */
  int stamp;
  int *queue;
  const int *queue_order; /* the topological order (node indices by position) */
  const fuse_opts *o;
  ecg_err *e;
  char **keys;           /* element counts of symbolic tensors (their dims joined by '*'), interned */
  int nkeys;
  int err;               /* a candidate could not be written */
} fctx;

ecg_mapping fuse_node_mapping(const ecg_graph *g, const ecg_node *n) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  if (!op) return ECG_MAP_MANY_TO_MANY;
  if (op->mapping != ECG_MAP_ONE_TO_ONE) return (ecg_mapping)op->mapping;
  const ecg_tensor *y = ecg_node_output(g, n, 0);
  int64_t m = y ? ecg_tensor_numel(y) : -1;
  for (size_t k = 0; k < n->n_inputs; k++) {
    const ecg_tensor *x = ecg_node_input(g, n, (int)k);
    if (x && ecg_tensor_numel(x) >= 0 && ecg_tensor_numel(x) < m) return ECG_MAP_ONE_TO_MANY;
  }
  return ECG_MAP_ONE_TO_ONE;
}

/* The element count of tensor t as a key: the number (>= 0) for a static shape; for a
 * shape with symbolic dims that RDP expressed (an ECG kept symbolic: SOD²'s fusion over RDP's
 * shapes, Niu §5.4.2), -2 - k for the k-th distinct string of its dims joined by '*', so two
 * tensors of the same symbolic shape share a key; -1 when unknown or not expressed. */
static int64_t tensor_key(const fctx *c, const ecg_tensor *t) {
  int64_t n = t ? ecg_tensor_numel(t) : -1;
  if (n >= 0 || !t || !t->shape_known) return n;
  char buf[1024];
  size_t len = 0;
  buf[0] = 0;
  for (size_t d = 0; d < t->n_dims; d++) {
    const Ecg__Dim *x = t->dims[d];
    if (x->value < 0 && (x->kind != ECG__DIM_KIND__DIM_SYMBOL && x->kind != ECG__DIM_KIND__DIM_EXPR)) return -1;
    int w = x->value >= 0 ? snprintf(buf + len, sizeof buf - len, "%s%lld", d ? "*" : "", (long long)x->value)
                          : snprintf(buf + len, sizeof buf - len, "%s(%s)", d ? "*" : "", x->symbol ? x->symbol : "");
    if (w < 0 || (size_t)w >= sizeof buf - len) return -1;
    len += (size_t)w;
  }
  fctx *m = (fctx *)c; /* the interning table only grows */
  for (int k = 0; k < m->nkeys; k++) if (!strcmp(m->keys[k], buf)) return -2 - k;
  char **nk = realloc(m->keys, sizeof *nk * ((size_t)m->nkeys + 1));
  if (!nk) return -1;
  m->keys = nk;
  if (!(m->keys[m->nkeys] = strdup(buf))) return -1;
  return -2 - m->nkeys++;
}

static int64_t out_numel(const fctx *c, int v) {
  const ecg_tensor *y = ecg_node_output(c->g, c->g->nodes[v], 0);
  return tensor_key(c, y);
}

/* A One-to-One member ecg-lower can put in a block of `numel` elements (a key of
 * tensor_key: a symbolic count is <= -2). */
static int member_ok(const fctx *c, int v, int64_t numel) {
  const ecg_node *n = c->g->nodes[v];
  return n->n_outputs == 1 && out_numel(c, v) == numel && (numel > 0 || numel <= -2) && ecg_is_scalar_node(c->g, n);
}

/* A Many-to-Many operator that can lead a block of `numel` elements (never a control-flow
 * node: its subgraphs run as nested code, ECG_PROP_CONTROL). */
static int dominant_ok(const fctx *c, int v, int64_t numel) {
  const ecg_node *n = c->g->nodes[v];
  const ecg_tensor *y = ecg_node_output(c->g, n, 0);
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  if (!op || (op->props & ECG_PROP_CONTROL)) return 0;
  return fuse_node_mapping(c->g, n) == ECG_MAP_MANY_TO_MANY && n->n_outputs == 1 && y && y->dtype == ECG_FLOAT &&
         tensor_key(c, y) == numel;
}

/* Would block b plus node v have a path leaving the block and coming back? */
static int creates_cycle(fctx *c, int b, int v) {
  int head = 0, tail = 0;
  c->stamp++;
  for (int i = 0; i < c->nn; i++)
    if (c->blk[i] == b || i == v) c->queue[tail++] = i;
  int nmem = tail;
  while (head < tail) {
    int u = c->queue[head++];
    const ecg_node *n = c->g->nodes[u];
    for (size_t k = 0; k < n->n_outputs; k++) {
      int t = n->outputs[k];
      if (t < 0) continue;
      for (int j = c->cons_start[t]; j < c->cons_start[t + 1]; j++) {
        int w = c->cons[j];
        int inside = c->blk[w] == b || w == v;
        if (inside) {
          if (head > nmem) return 1; /* reached through an outside node */
          continue;
        }
        if (c->mark[w] == c->stamp) continue;
        c->mark[w] = c->stamp;
        c->queue[tail++] = w;
      }
    }
  }
  return 0;
}

typedef struct {
  int id, n, dominant;
  int64_t numel;
  ecg_mapping type;
  int closed; /* a squeeze-and-excitation tail joined: nothing more may (se_tail_ok) */
} blockinfo;

static int add_member(fctx *c, blockinfo *B, int v) {
  c->blk[v] = B->id;
  B->n++;
  return 0;
}

/* Decide a fuse_depend pair (producer p, consumer q): the profile database where it has
 * the pair, else the static rule (join). Emits the pair as a candidate when asked. */
static int depend_decision(fctx *c, int p, int q, fuse_stats *st) {
  if (c->o->emit_dir && !c->err && fuse_emit_candidate(c->g, p, q, c->o->emit_dir, st->candidates++, c->e) != ECG_OK)
    c->err = 1;
  double fm, um;
  char sig[4096];
  if (!c->o->db) return 1;
  fuse_pair_signature(c->g, p, q, sig, sizeof sig);
  if (!fuse_db_lookup(c->o->db, sig, &fm, &um)) return 1;
  st->depend_profiled++;
  if (fm <= um) return 1;
  st->depend_rejected++;
  return 0;
}

/* The chain list[0..n) (topological order) keeps its intermediates inside: the outputs of
 * list[0..n-1) are no graph outputs and are read only by members (the last member's output
 * is the chain's). */
static int inner_only(const fctx *c, const int *list, int n) {
  for (int i = 0; i + 1 < n; i++) {
    int t = c->g->nodes[list[i]]->outputs[0];
    if (c->graph_out[t]) return 0;
    for (int j = c->cons_start[t]; j < c->cons_start[t + 1]; j++) {
      int in = 0;
      for (int k = 0; k < n && !in; k++) in = c->cons[j] == list[k];
      if (!in) return 0;
    }
  }
  return 1;
}

/* Would successor v, joining block B, make it a squeeze-and-excitation tail (chain.h
 * ecg_se_match without the pool: a pointwise conv on a 1x1 plane [+ act] -> the Mul that
 * scales a tensor by its result, broadcasting it over the planes)? That block ecg-lower
 * generates as one kernel (ecg_rt1_se) that computes the block's elements once and then
 * the broadcast, so Table 3.3's Many-to-Many -> One-to-Many pair recomputes nothing,
 * although v's output is larger than the block's. The block's intermediates must have no
 * reader outside it (v aside). */
static int se_tail_ok(fctx *c, const blockinfo *B, int v) {
  if (B->dominant < 0 || B->n + 1 > 8) return 0;
  int list[8], n = 0;
  for (int p = 0; p < c->nn && n < 8; p++) { /* members and v in topological order */
    int w = c->queue_order[p];
    if (c->blk[w] == B->id || w == v) list[n++] = w;
  }
  ecg_se_chain se;
  if (n != B->n + 1 || ecg_se_match(c->g, list, n, &se) != 0 || se.gap >= 0 || se.scale != v) return 0;
  return inner_only(c, list, n); /* v is the last: its output leaves */
}

/* Try to join v to block B as a successor (succ = 1) or predecessor of member u; counts
 * decisions. */
static int try_join(fctx *c, blockinfo *B, int u, int v, int succ, fuse_stats *st) {
  if (c->blk[v] >= 0 || B->n >= MAX_MEMBERS || B->closed) return 0;
  ecg_mapping mv = fuse_node_mapping(c->g, c->g->nodes[v]);
  int as_dominant = 0, tail = 0;
  if (!member_ok(c, v, B->numel)) {
    if (succ && se_tail_ok(c, B, v)) tail = 1;
    else if (succ || B->dominant >= 0 || !dominant_ok(c, v, B->numel)) { st->shape_rejects++; return 0; }
    else as_dominant = 1;
  }
  fuse_cell cell = succ ? fuse_table(B->type, mv) : fuse_table(mv, B->type);
  if (cell.decision == FUSE_BREAK) { st->breaks++; return 0; }
  /* ecg-lower runs the dominant operator first: every member must come after it */
  if (as_dominant) {
    for (int i = 0; i < c->nn; i++) if (c->blk[i] == B->id && c->pos[i] < c->pos[v]) return 0;
  } else if (B->dominant >= 0 && c->pos[v] < c->pos[B->dominant]) return 0;
  if (creates_cycle(c, B->id, v)) { st->cycle_rejects++; return 0; }
  if (cell.decision == FUSE_DEPEND) {
    if (!depend_decision(c, succ ? u : v, succ ? v : u, st)) return 0;
    st->depend++;
  } else st->through++;
  add_member(c, B, v);
  if (as_dominant) B->dominant = v;
  B->closed |= tail;
  B->type = cell.fused;
  return 1;
}

/* Grow B from its members: successors first, then predecessors (Listing 3.1), until no
 * candidate joins. */
static void grow(fctx *c, blockinfo *B, fuse_stats *st) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (int pass = 0; pass < 2; pass++)
      for (int u = 0; u < c->nn; u++) {
        if (c->blk[u] != B->id) continue;
        const ecg_node *n = c->g->nodes[u];
        if (pass == 0) {
          for (size_t k = 0; k < n->n_outputs; k++) {
            int t = n->outputs[k];
            if (t < 0) continue;
            for (int j = c->cons_start[t]; j < c->cons_start[t + 1]; j++) changed |= try_join(c, B, u, c->cons[j], 1, st);
          }
        } else if (u != B->dominant) {
          for (size_t k = 0; k < n->n_inputs; k++) {
            int t = n->inputs[k];
            if (t >= 0 && c->prod[t] >= 0) changed |= try_join(c, B, u, c->prod[t], 0, st);
          }
        }
      }
  }
}

/* Fixed patterns: v (a Many-to-Many operator or a One-to-One one) and the One-to-One
 * chain after it through single-consumer, non-output edges. */
static void chain(fctx *c, blockinfo *B, int v, fuse_stats *st) {
  for (int cur = v;;) {
    int t = c->g->nodes[cur]->outputs[0];
    if (t < 0 || c->graph_out[t] || c->cons_start[t + 1] - c->cons_start[t] != 1) return;
    int w = c->cons[c->cons_start[t]];
    if (c->blk[w] >= 0 || !member_ok(c, w, B->numel) || B->n >= MAX_MEMBERS) return;
    add_member(c, B, w);
    st->through++;
    cur = w;
  }
}

/* The single consumer of node v's output 0, or -1 (none, several, or a graph output). */
static int sole_consumer(const fctx *c, int v) {
  int t = c->g->nodes[v]->outputs[0];
  if (t < 0 || c->graph_out[t] || c->cons_start[t + 1] - c->cons_start[t] != 1) return -1;
  return c->cons[c->cons_start[t]];
}

/* Block v belongs to holds exactly the nodes of list[0..n) (or v is in no block). */
static int block_is(const fctx *c, int v, const int *list, int n) {
  int b = c->blk[v];
  if (b < 0) return 1;
  int cnt = 0;
  for (int i = 0; i < c->nn; i++) {
    if (c->blk[i] != b) continue;
    int in = 0;
    for (int j = 0; j < n; j++) if (list[j] == i) in = 1;
    if (!in) return 0;
    cnt++;
  }
  return cnt > 0;
}

/* Whether conv n may be an intensive-fusion chain's first stage: pointwise, or a stem. */
static int first_stage(const ecg_graph *g, const ecg_node *n) {
  ecg_conv_role r = ecg_conv_role_of(g, n);
  return r == ECG_CONV_POINTWISE || r == ECG_CONV_STEM;
}

/* The activation after node v (ecg_builtin_act_chain on v's output t, which no graph output
 * is): t's sole consumer, or SiLU's Sigmoid s and Mul m (t read by exactly s and m, s's
 * output by m alone). Its members into act[0..*n) (*n = 0: none); returns the node whose
 * output is the stage's (the last member, or v). */
static int act_after(const fctx *c, int v, int act[2], int *n) {
  const ecg_graph *g = c->g;
  float a, b;
  int t = g->nodes[v]->outputs[0];
  *n = 0;
  act[0] = act[1] = -1;
  if (t < 0 || c->graph_out[t]) return v;
  int nc = c->cons_start[t + 1] - c->cons_start[t];
  if (nc == 1) {
    int u = c->cons[c->cons_start[t]];
    if (ecg_builtin_act_chain(g, t, &u, 1, &a, &b) == ECG_BACT_NONE) return v;
    act[0] = u;
    *n = 1;
    return u;
  }
  if (nc != 2) return v;
  for (int k = 0; k < 2; k++) {
    int pair[2] = {c->cons[c->cons_start[t] + k], c->cons[c->cons_start[t] + 1 - k]};
    if (sole_consumer(c, pair[0]) == pair[1] && ecg_builtin_act_chain(g, t, pair, 2, &a, &b) == ECG_BACT_SILU) {
      act[0] = pair[0];
      act[1] = pair[1];
      *n = 2;
      return pair[1];
    }
  }
  return v;
}

/* Intensive fusion (AGO §III-B; ecg-fuse --intensive): an inverted-residual chain
 * pointwise conv [+ activation] -> depthwise conv [+ activation] -> pointwise conv
 * [+ its epilogue block] becomes one block (the first conv may also be a CNN's stem conv,
 * ECG_CONV_STEM: mobilenet_v2's and mnasnet1_0's 3x3 stride-2 3 -> 32, whose 32x112x112
 * output then stays in the cache; AMD EPYC Zen 4, mnasnet1_0 in-model profile, 1 thread:
 * stem 390 + depthwise 191 + pointwise 181 us -> 617 us as one kernel; end to end, 5
 * interleaved rounds, medians: mnasnet1_0 7.32 -> 7.06 ms at 1 thread, 4.49 -> 4.21 at 2;
 * mobilenet_v2 8.41 -> 8.02 and 4.79 -> 4.66 in a slower period of the VM), which
 * ecg-lower generates as one row-tiled kernel (ecg_rt.h ecg_rt1_ibr) that computes every intermediate element once. Intermediate
 * tensors must have a single consumer. The first pointwise conv must expand (more output
 * than input channels): the expanded tensor is what the fused kernel keeps in the cache; a
 * depthwise -> pointwise pair, or a chain that does not expand, keeps nothing larger than
 * its input there and measured no faster than its kernels (Intel Xeon model 167: ecg_rt1_ibr16
 * 0.94-1.07 of their time on mobilenet_v2's 32x112x112 pair, 1 thread; in make bench,
 * blazeface_front_128's 24..96-channel pairs 0.61 -> 0.76 of ONNX Runtime's time,
 * shufflenet_v2_x1_0's non-expanding chains 0.71 -> 0.76). ecg_ibr_match (format/chain.c)
 * still accepts such chains in a given ECG.
 * Activations are ecg_builtin_act_chain's: one node, or SiLU's Sigmoid and Mul. Where the
 * depthwise stage's output goes elsewhere than to one pointwise conv that can join
 * (EfficientNet's MBConv: its squeeze-and-excitation pools and scales it), the expansion
 * and the depthwise stage still become one block (ecg_ibr_chain without pw2): the
 * expanded tensor stays in the cache, the depthwise output is the block's.
 * Returns the number of chains merged. */
static int intensive_merge(fctx *c, int *nblk, int *seed, ecg_mapping *type) {
  int merged = 0;
  for (int p = 0; p < c->nn; p++) {
    int d = c->queue[p]; /* topological order, see fuse_make_plan */
    const ecg_graph *g = c->g;
    if (ecg_conv_role_of(g, g->nodes[d]) != ECG_CONV_DEPTHWISE) continue;
    int pw1 = -1, act1[2] = {-1, -1}, act2[2], n1 = 0, n2 = 0;
    /* the first stage: a conv whose output, after its activation, d alone reads */
    int in = g->nodes[d]->inputs[0], prev = in >= 0 ? c->prod[in] : -1;
    if (prev >= 0 && sole_consumer(c, prev) == d) {
      const ecg_node *pn = g->nodes[prev];
      if (first_stage(g, pn)) pw1 = prev; /* no activation */
      for (size_t k = 0; k < pn->n_inputs && pw1 < 0; k++) { /* prev the last member of pp's activation */
        int t = pn->inputs[k], pp = t >= 0 ? c->prod[t] : -1, a[2], na;
        if (pp >= 0 && first_stage(g, g->nodes[pp]) && act_after(c, pp, a, &na) == prev && na > 0) {
          pw1 = pp;
          act1[0] = a[0];
          act1[1] = a[1];
          n1 = na;
        }
      }
    }
    if (pw1 < 0) continue;
    int last = act_after(c, d, act2, &n2), q = sole_consumer(c, last);
    /* expanding: pw1's weight [cexp, cin, 1, 1] makes more channels than it reads (static
     * even where the activations' dims are symbols) */
    int64_t w1d[ECG_MAX_RANK];
    if (ecg_tensor_dims(ecg_node_input(g, g->nodes[pw1], 1), w1d) != 4 || w1d[0] <= w1d[1]) continue;
    int first[3] = {pw1, act1[0], act1[1]}, mid[3] = {d, act2[0], act2[1]};
    if (!block_is(c, pw1, first, 1 + n1)) continue;
    if (!block_is(c, d, mid, 1 + n2)) continue;
    /* pw2's block: pw2 first, then its One-to-One epilogue (bq -1: pw2 is in no block);
     * -2: no pw2 joins, the chain ends at the depthwise stage */
    int bq = q >= 0 && ecg_conv_role_of(g, g->nodes[q]) == ECG_CONV_POINTWISE ? c->blk[q] : -2;
    for (int i = 0; bq >= 0 && i < c->nn; i++)
      if (c->blk[i] == bq && i != q && (c->pos[i] < c->pos[q] || !ecg_is_scalar_node(g, g->nodes[i]))) bq = -2;
    int id = (*nblk)++;
    seed[id] = d;
    type[id] = ECG_MAP_MANY_TO_MANY;
    for (int j = 0; j < 3; j++) {
      if (first[j] >= 0) c->blk[first[j]] = id;
      if (mid[j] >= 0) c->blk[mid[j]] = id;
    }
    if (bq >= 0) { for (int i = 0; i < c->nn; i++) if (c->blk[i] == bq) c->blk[i] = id; }
    else if (bq == -1) c->blk[q] = id;
    merged++;
  }
  return merged;
}

/* Make the chain list[0..n) (n <= 8) one new Many-to-Many block seeded by node sd, when
 * each member's current block holds chain nodes only (block_is; such a block moves whole)
 * and the new block closes no cycle between blocks (creates_cycle; undone then). 1 when
 * merged, else 0 with the blocks as they were. */
static int merge_group(fctx *c, const int *list, int n, int sd, int *nblk, int *seed, ecg_mapping *type) {
  int old[8];
  for (int i = 0; i < n; i++) if (!block_is(c, list[i], list, n)) return 0;
  int id = (*nblk)++;
  for (int i = 0; i < n; i++) {
    old[i] = c->blk[list[i]];
    if (old[i] >= 0) for (int u = 0; u < c->nn; u++) if (c->blk[u] == old[i]) c->blk[u] = id;
    c->blk[list[i]] = id;
  }
  if (creates_cycle(c, id, -1)) {
    for (int i = 0; i < n; i++) c->blk[list[i]] = old[i];
    (*nblk)--;
    return 0;
  }
  seed[id] = sd;
  type[id] = ECG_MAP_MANY_TO_MANY;
  return 1;
}

/* Intensive fusion of squeeze-and-excitation chains (AGO §III: several compute-intensive
 * operators in one kernel, without recomputation; ecg-fuse --intensive): GlobalAveragePool
 * -> pointwise conv [+ act] -> pointwise conv [+ act] [-> the Mul scaling the pool's input
 * by the result] (chain.h ecg_se_match, the definition ecg-lower and the tuner share)
 * becomes one block, which ecg-lower generates as one ecg_rt1_se kernel: the pooled
 * vector, the hidden vector and the scales are computed once each and never reach memory.
 * Candidates: the pool's descendants in topological order (a chain whose intermediates
 * have readers only inside it is a prefix of them), the longest prefix that is a chain,
 * whose intermediates are read only inside it and are no graph outputs, and whose members'
 * current blocks hold no other node. Such a group reads only the pool's input (produced
 * before it) and constants, so it cannot close a cycle between blocks; creates_cycle
 * checks it all the same. Returns the number of chains merged. */
static int se_merge(fctx *c, const int *order, int *nblk, int *seed, ecg_mapping *type) {
  const ecg_graph *g = c->g;
  int merged = 0, cand[8];
  for (int p = 0; p < c->nn; p++) {
    int v = order[p];
    if (!ecg_se_head(g, g->nodes[v])) continue;
    /* the first (at most 8) descendants of v in topological order, v first */
    int head = 0, tail = 0;
    c->stamp++;
    c->queue[tail++] = v;
    c->mark[v] = c->stamp;
    while (head < tail) {
      const ecg_node *n = g->nodes[c->queue[head++]];
      for (size_t k = 0; k < n->n_outputs; k++) {
        int t = n->outputs[k];
        if (t < 0) continue;
        for (int j = c->cons_start[t]; j < c->cons_start[t + 1]; j++) {
          int w = c->cons[j];
          if (c->mark[w] != c->stamp) { c->mark[w] = c->stamp; c->queue[tail++] = w; }
        }
      }
    }
    int nc = 0;
    for (int q = p; q < c->nn && nc < 8; q++) if (c->mark[order[q]] == c->stamp) cand[nc++] = order[q];
    for (int len = nc; len >= 3; len--) {
      ecg_se_chain se;
      if (ecg_se_match(g, cand, len, &se) != 0) continue;
      if (!inner_only(c, cand, len)) continue; /* se.y, the last member's output, leaves */
      if (!merge_group(c, cand, len, v, nblk, seed, type)) continue;
      merged++;
      break;
    }
  }
  return merged;
}

/* Intensive fusion of Conv [+ act] -> MaxPool (AGO §III: a compute-intensive operator and
 * the window reduction after it in one kernel, nothing recomputed; ecg-fuse --intensive):
 * chain.h ecg_conv_pool_match, the definition ecg-lower and the tuner share. ecg-lower
 * generates the block as one ecg_rt1_conv2d_maxpool kernel, which pools the conv rows from
 * a ring in the cache (a CNN's first layer: squeezenet1_1's 64x111x111 conv output never
 * reaches memory). The conv's and the activation's outputs must have the next member as
 * their only reader, and the members' current blocks hold no other node. Returns the
 * number of chains merged. */
static int conv_pool_merge(fctx *c, const int *order, int *nblk, int *seed, ecg_mapping *type) {
  const ecg_graph *g = c->g;
  int merged = 0;
  for (int p = 0; p < c->nn; p++) {
    int v = order[p], in = g->nodes[v]->n_inputs ? g->nodes[v]->inputs[0] : -1;
    int prev = in >= 0 ? c->prod[in] : -1;
    if (prev < 0 || sole_consumer(c, prev) != v) continue;
    int list[3], n = 0, cv, ac, pl;
    int t = g->nodes[prev]->n_inputs ? g->nodes[prev]->inputs[0] : -1, pp = t >= 0 ? c->prod[t] : -1;
    if (pp >= 0 && sole_consumer(c, pp) == prev) { /* conv -> act -> pool */
      list[0] = pp; list[1] = prev; list[2] = v;
      if (ecg_conv_pool_match(g, list, 3, &cv, &ac, &pl) == 0) n = 3;
    }
    if (!n) { /* conv -> pool */
      list[0] = prev; list[1] = v;
      if (ecg_conv_pool_match(g, list, 2, &cv, &ac, &pl) == 0) n = 2;
    }
    if (n && merge_group(c, list, n, cv, nblk, seed, type)) merged++;
  }
  return merged;
}

static fctx *sort_ctx;
static int seed_cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  int64_t bx = out_numel(sort_ctx, x), by = out_numel(sort_ctx, y);
  if (bx != by) return bx < by ? -1 : 1;
  return sort_ctx->pos[x] - sort_ctx->pos[y];
}

/* Write the plan into the ECG through libecg's block API (schema v2: members in
 * topological order, inputs/outputs, dominant, fused mapping type, plan): blocks in order
 * of their first member; ir_removable intermediates. */
static int write_blocks(fctx *c, int nblk, const int *seed, const ecg_mapping *type, const int *order, const char *plan,
                        fuse_stats *st, ecg_err *e) {
  ecg_graph *g = c->g;
  for (size_t b = 0; b < g->n_blocks; b++) ecg__fusion_block__free_unpacked(g->blocks[b], NULL);
  free(g->blocks);
  g->blocks = NULL;
  g->n_blocks = 0;
  for (int i = 0; i < c->nn; i++) g->nodes[i]->fusion_block = -1;
  for (int t = 0; t < c->nt; t++) g->tensors[t]->ir_removable = 0;
  int *count = calloc((size_t)nblk + 1, sizeof(int)), *list = malloc(sizeof(int) * ((size_t)c->nn + 1));
  char *done = calloc((size_t)nblk + 1, 1);
  int rc = count && list && done ? ECG_OK : ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int i = 0; rc == ECG_OK && i < c->nn; i++) if (c->blk[i] >= 0) count[c->blk[i]]++;
  for (int p = 0; rc == ECG_OK && p < c->nn; p++) {
    int b = c->blk[order[p]];
    if (b < 0 || count[b] < 2 || done[b]) continue;
    done[b] = 1;
    int n = 0;
    for (int q = p; q < c->nn; q++) if (c->blk[order[q]] == b) list[n++] = order[q];
    int id = ecg_block_add(g, list, n, seed[b], e);
    if (id < 0) { rc = ECG_ERR_INTERNAL; break; }
    ecg_block *fb = g->blocks[id];
    fb->mapping_type = (Ecg__MappingType)type[b];
    if (fb->plan && fb->plan != protobuf_c_empty_string) free(fb->plan);
    fb->plan = strdup(plan);
    if (!fb->plan) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    st->fused_nodes += n;
  }
  /* ir_removable: produced in a block, every reader in the same block, not an output */
  int *inner = rc == ECG_OK ? malloc(sizeof(int) * ((size_t)c->nt + 1)) : NULL;
  if (rc == ECG_OK && !inner) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK) {
    ecg_block_internal_tensors(g, c->prod, inner, NULL);
    for (int t = 0; t < c->nt; t++) g->tensors[t]->ir_removable = inner[t] >= 0;
  }
  free(inner);
  st->blocks = (int)g->n_blocks;
  free(count); free(list); free(done);
  return rc;
}

int fuse_make_plan(ecg_graph *g, const fuse_opts *o, fuse_stats *st, ecg_err *e) {
  memset(st, 0, sizeof *st);
  fctx c = {0};
  fuse_plan plan = o->plan;
  c.g = g;
  c.o = o;
  c.e = e;
  c.nn = (int)g->n_nodes;
  c.nt = (int)g->n_tensors;
  int *order = malloc(sizeof(int) * ((size_t)c.nn + 1));
  c.pos = malloc(sizeof(int) * ((size_t)c.nn + 1));
  c.cons_start = calloc((size_t)c.nt + 2, sizeof(int));
  c.prod = malloc(sizeof(int) * ((size_t)c.nt + 1));
  c.graph_out = calloc((size_t)c.nt + 1, 1);
  c.blk = malloc(sizeof(int) * ((size_t)c.nn + 1));
  c.mark = calloc((size_t)c.nn + 1, sizeof(int));
  c.queue = malloc(sizeof(int) * ((size_t)c.nn + 1));
  /* at most nn blocks from the plan, nn from row merging, nn from intensive merging
   * (inverted residuals, squeeze-and-excitation and Conv -> MaxPool chains: at least two
   * nodes each), nn spare */
  int *seed = malloc(sizeof(int) * (4 * (size_t)c.nn + 1)), *seeds = malloc(sizeof(int) * ((size_t)c.nn + 1));
  ecg_mapping *type = malloc(sizeof(ecg_mapping) * (4 * (size_t)c.nn + 1));
  int rc = ECG_OK;
  if (!order || !c.pos || !c.cons_start || !c.prod || !c.graph_out || !c.blk || !c.mark || !c.queue || !seed || !seeds || !type)
    rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK) rc = ecg_topo_order(g, order, e);
  c.queue_order = order;
  size_t ncons = 0;
  if (rc == ECG_OK) {
    for (int p = 0; p < c.nn; p++) c.pos[order[p]] = p;
    for (int t = 0; t < c.nt; t++) c.prod[t] = -1;
    for (size_t k = 0; k < g->n_outputs; k++) c.graph_out[g->outputs[k]] = 1;
    for (int i = 0; i < c.nn; i++) {
      const ecg_node *n = g->nodes[i];
      c.blk[i] = -1;
      for (size_t k = 0; k < n->n_outputs; k++) if (n->outputs[k] >= 0) c.prod[n->outputs[k]] = i;
      for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0) { c.cons_start[n->inputs[k] + 1]++; ncons++; }
    }
    for (int t = 0; t < c.nt; t++) c.cons_start[t + 1] += c.cons_start[t];
    c.cons = malloc(sizeof(int) * (ncons + 1));
    int *fill = calloc((size_t)c.nt + 1, sizeof(int));
    if (!c.cons || !fill) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (int p = 0; rc == ECG_OK && p < c.nn; p++) { /* consumers in topological order */
      const ecg_node *n = g->nodes[order[p]];
      for (size_t k = 0; k < n->n_inputs; k++) {
        int t = n->inputs[k];
        if (t < 0) continue;
        int dup = 0;
        for (int j = c.cons_start[t]; j < c.cons_start[t] + fill[t]; j++) if (c.cons[j] == order[p]) dup = 1;
        if (!dup) c.cons[c.cons_start[t] + fill[t]++] = order[p];
        else c.cons[c.cons_start[t] + fill[t]++] = order[p]; /* keep counts consistent */
      }
    }
    free(fill);
  }
  int nblk = 0;
  if (rc == ECG_OK && plan == PLAN_FIXED) {
    for (int p = 0; p < c.nn; p++) {
      int v = order[p];
      if (c.blk[v] >= 0) continue;
      int64_t m = out_numel(&c, v);
      int dom = dominant_ok(&c, v, m);
      if (!dom && !member_ok(&c, v, m)) continue;
      blockinfo B = {nblk, 0, dom ? v : -1, m, fuse_node_mapping(g, g->nodes[v])};
      add_member(&c, &B, v);
      seed[nblk] = v;
      chain(&c, &B, v, st);
      type[nblk] = dom ? ECG_MAP_MANY_TO_MANY : B.type;
      nblk++;
    }
  } else if (rc == ECG_OK && plan == PLAN_DNNFUSION) {
    int ns = 0;
    for (int v = 0; v < c.nn; v++) if (member_ok(&c, v, out_numel(&c, v))) seeds[ns++] = v;
    sort_ctx = &c;
    qsort(seeds, (size_t)ns, sizeof(int), seed_cmp);
    for (int i = 0; i < ns; i++) {
      int v = seeds[i];
      if (c.blk[v] >= 0) continue;
      blockinfo B = {nblk, 0, -1, out_numel(&c, v), fuse_node_mapping(g, g->nodes[v])};
      add_member(&c, &B, v);
      seed[nblk] = v;
      st->seeds++;
      grow(&c, &B, st);
      type[nblk] = B.type;
      nblk++;
    }
    if (rc == ECG_OK) {
      st->index_maps = fuse_index_maps(g, order, c.blk, &nblk, seed, type, e);
      if (st->index_maps < 0) rc = ECG_ERR_INTERNAL;
    }
    if (rc == ECG_OK) {
      st->row_blocks = fuse_row_merge(g, order, c.blk, &nblk, seed, type, MAX_MEMBERS, e);
      if (st->row_blocks < 0) rc = ECG_ERR_INTERNAL;
    }
  }
  if (rc == ECG_OK && o->intensive) {
    memcpy(c.queue, order, sizeof(int) * (size_t)c.nn);
    st->intensive = intensive_merge(&c, &nblk, seed, type);
    st->se_chains = se_merge(&c, order, &nblk, seed, type);
    st->conv_pools = conv_pool_merge(&c, order, &nblk, seed, type);
    st->intensive += st->se_chains + st->conv_pools;
  }
  if (rc == ECG_OK && c.err) rc = ECG_ERR_INPUT; /* the candidate writer's message is in e */
  static const char *const plan_names[] = {"none", "fixed", "dnnfusion"};
  if (rc == ECG_OK) rc = write_blocks(&c, nblk, seed, type, order, plan_names[plan], st, e);
  free(order); free(c.pos); free(c.cons_start); free(c.cons); free(c.prod); free(c.graph_out); free(c.blk);
  free(c.mark); free(c.queue); free(seed); free(seeds); free(type);
  for (int k = 0; k < c.nkeys; k++) free(c.keys[k]);
  free(c.keys);
  return rc;
}
