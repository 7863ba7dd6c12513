/* ecg-rewrite pass "subst": the OCGGS search algorithms over the structural rules of
 * subst.c (Fang et al., PVLDB 13(11) 2020; digest-ocggs.md §2):
 *   greedy    apply the best cost-decreasing substitution until none is left or K steps
 *   taso      TASO's cost-bounded backtracking (§2.1): a min-heap of graphs, children
 *             kept when cost < alpha * best (alpha = 1.05), fewer than 2x the ops, not
 *             seen before (structural hash), sequences of at most K steps
 *   enu       unpruned enumeration of every sequence of at most K steps (ENU)
 *   pruning   Algorithm 1: depth-first, only ordered sequences under the partial order of
 *             Def. 8 (O(1) key encoding of §2.2: key(tau) = max label of its nodes, a step
 *             may follow tau* only when key(tau*) < key(tau))
 *   dpp       Algorithm 2: as pruning, but a child's substitutions are the parent's that
 *             are disjoint from tau*, ordered after it and still matching (reused without
 *             matching) plus new matches anchored on the nodes tau* made (Theorems 5-6)
 *   sampling  Algorithm 3: a level-wise beam of Q sequences, Q/2 of the best
 *             cost-non-increasing and Q/2 of the best reached through at most eta
 *             cost-increasing steps, ranked by potential (Def. 12)
 * Every algorithm stops at --timeout seconds (then reports finished: false and its best
 * so far) and counts the sequences it generated ("explored").  Costs: cost.c.
 * Known gaps (the paper's, digest §2.2): a match can appear without using a node that
 * tau* made (a reader count changed), which DPP's reuse misses; the key order assumes
 * substitutions with disjoint nodes commute, which pruning relies on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "subst.h"

#define MAX_K 32

static const char *const NAMES[SG_N_ALGOS] = {"greedy", "taso", "enu", "pruning", "dpp", "sampling"};

const char *sg_algo_names(void) { return "greedy, taso, enu, pruning, dpp, sampling"; }

int sg_algo_find(const char *name) {
  for (int i = 0; i < SG_N_ALGOS; i++)
    if (!strcmp(NAMES[i], name)) return i;
  return -1;
}

void sg_opts_init(sg_opts *o) {
  memset(o, 0, sizeof *o);
  o->max_steps = 10;
  o->alpha = 1.05;
  o->q = 20;
  o->eta = 1;
  sg_cost_init(&o->db);
}

void sg_opts_free(sg_opts *o) {
  sg_cost_free(&o->db);
  for (int i = 0; i < o->db.n_logged; i++) free(o->db.logged[i]);
  free(o->db.logged);
  o->db.logged = NULL;
  o->db.n_logged = 0;
  if (o->db.keys_out && o->db.keys_out != stdout) fclose(o->db.keys_out);
  o->db.keys_out = NULL;
}

void sg_usage(FILE *f) {
  fprintf(f,
          "  --search LIST        subst: algorithms, comma-separated (%s; default sampling);\n"
          "                       each runs on the same input, the lowest-cost result is kept\n"
          "  --max-steps K        subst: at most K substitutions (default 10)\n"
          "  --cost-db FILE       subst: measured node times, JSON lines (make cost-db)\n"
          "  --cost-keys FILE     subst: write every node key missing from the table\n"
          "  --cost-graphs DIR    subst: with --cost-keys, one single-node ECG per key (DIR/N.ecg)\n",
          sg_algo_names());
}

int sg_option(sg_opts *o, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  static const char *const FLAGS[] = {"--search", "--max-steps", "--cost-db", "--cost-keys", "--cost-graphs"};
  int f = 0;
  while (f < 5 && strcmp(a, FLAGS[f])) f++;
  if (f == 5) return -1;
  if (*i + 1 >= argc || !argv[*i + 1][0]) { fprintf(stderr, "ecg-rewrite: option '%s' needs a value\n", a); return 2; }
  const char *v = argv[++*i];
  char *end;
  ecg_err e = {0};
  switch (f) {
  case 0: return sg_parse_search(o, v);
  case 1: {
    long k = strtol(v, &end, 10);
    if (*end || k < 0 || k > MAX_K) { fprintf(stderr, "ecg-rewrite: --max-steps expects 0..%d\n", MAX_K); return 2; }
    o->max_steps = (int)k;
    return 0;
  }
  case 2:
    if (sg_cost_load(&o->db, v, &e) != ECG_OK) { fprintf(stderr, "ecg-rewrite: %s\n", e.msg); return 1; }
    return 0;
  case 3:
    if (o->db.keys_out) fclose(o->db.keys_out);
    if (!(o->db.keys_out = fopen(v, "w"))) { perror(v); return 1; }
    return 0;
  default: o->db.graphs_dir = v; return 0;
  }
}

int sg_parse_search(sg_opts *o, const char *list) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  o->n_algos = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int a = sg_algo_find(t);
    if (a < 0) { fprintf(stderr, "ecg-rewrite: unknown search '%s' (known: %s)\n", t, sg_algo_names()); return 2; }
    if (o->n_algos == SG_N_ALGOS) { fprintf(stderr, "ecg-rewrite: --search lists more than %d names\n", SG_N_ALGOS); return 2; }
    o->algos[o->n_algos++] = a;
  }
  if (!o->n_algos) { fprintf(stderr, "ecg-rewrite: --search names no algorithm (known: %s)\n", sg_algo_names()); return 2; }
  return 0;
}

/* ------------------------------------------------------------ shared machinery */

typedef struct {
  sg_sub *v;
  int n, cap;
} sublist;

typedef struct {
  const sg_opts *o;
  double t0, deadline;
  long long explored, cycles;
  bool stopped, oom;
  double best_cost;
  sg_sub best_seq[MAX_K];
  int best_len;
  sg_graph best;
  int n0;            /* live nodes of the input graph (TASO's 2x bound) */
  int algo;
  double last_note;
} run;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static bool expired(run *r) {
  if (r->stopped) return true;
  double t = now_s();
  if (r->o->verbose && t - r->last_note >= 1.0) {
    r->last_note = t;
    fprintf(stderr, "ecg-rewrite: subst %s: %.1f s, %lld sequences, best cost %.4f ms\n", NAMES[r->algo], t - r->t0,
            r->explored, r->best_cost);
  }
  return r->stopped = t > r->deadline;
}

static bool push(sublist *l, const sg_sub *s) {
  if (l->n == l->cap) {
    int c = l->cap * 2 + 16;
    sg_sub *p = realloc(l->v, sizeof *p * (size_t)c);
    if (!p) return false;
    l->v = p;
    l->cap = c;
  }
  l->v[l->n++] = *s;
  return true;
}

typedef struct {
  sublist *l;
  const sg_graph *g;
  bool oom;
} emit_ctx;

static void emit(void *ctx, const sg_sub *s) {
  emit_ctx *c = ctx;
  sg_sub t = *s;
  sg_sub_key(c->g, &t);
  if (!push(c->l, &t)) c->oom = true;
}

/* Every substitution of g (structural and rule-file) touching a node >= from, appended to l. */
static bool find_subs(const sg_graph *g, int from, const sg_opts *o, sublist *l) {
  emit_ctx c = {.l = l, .g = g};
  sg_enumerate(g, from, o, emit, &c);
  return !c.oom;
}

static bool key_less(const sg_sub *a, const sg_sub *b) {
  return a->kpos < b->kpos || (a->kpos == b->kpos && a->kj < b->kj);
}

static bool disjoint(const sg_sub *a, const sg_sub *b) {
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++)
      if (a->node[i] == b->node[j]) return false;
  return true;
}

/* child = g with s applied as step pos; false when the rule refuses or makes a cycle. */
static bool child_of(run *r, const sg_graph *g, const sg_sub *s, int pos, sg_graph *child) {
  if (!sg_copy(child, g)) { r->oom = r->stopped = true; return false; }
  r->explored++;
  int rc = sg_apply(child, s, pos, r->o);
  r->cycles += rc < 0;
  return rc > 0;
}

/* Record g reached by seq[0..len-1] when it beats the best. */
static void consider(run *r, const sg_graph *g, const sg_sub *seq, int len) {
  if (!(g->cost < r->best_cost - 1e-12)) return;
  r->best_cost = g->cost;
  memcpy(r->best_seq, seq, sizeof *seq * (size_t)len);
  r->best_len = len;
  if (!sg_copy(&r->best, g)) r->oom = r->stopped = true;
}

/* ------------------------------------------------------------ greedy */

static void greedy(run *r, const sg_graph *s0) {
  sg_graph cur = {0}, child = {0}, pick = {0};
  sg_sub seq[MAX_K];
  if (!sg_copy(&cur, s0)) { r->oom = true; return; }
  for (int step = 0; step < r->o->max_steps && !expired(r); step++) {
    sublist l = {0};
    if (!find_subs(&cur, 0, r->o, &l)) r->oom = r->stopped = true;
    int at = -1;
    double best = cur.cost;
    for (int i = 0; i < l.n && !expired(r); i++) {
      if (!child_of(r, &cur, &l.v[i], step + 1, &child) || !(child.cost < best - 1e-12)) continue;
      best = child.cost;
      at = i;
      sg_graph t = pick;
      pick = child;
      child = t;
    }
    if (at >= 0) {
      seq[step] = l.v[at];
      sg_graph t = cur;
      cur = pick;
      pick = t;
      consider(r, &cur, seq, step + 1);
    }
    free(l.v);
    if (at < 0) break;
  }
  sg_free(&cur);
  sg_free(&child);
  sg_free(&pick);
}

/* ------------------------------------------------------------ TASO */

typedef struct {
  double cost;
  int len;
  sg_sub seq[MAX_K];
} tstate;

typedef struct {
  tstate *v;
  int n, cap;
} heap;

static bool heap_push(heap *h, const tstate *s) {
  if (h->n == h->cap) {
    int c = h->cap * 2 + 64;
    tstate *p = realloc(h->v, sizeof *p * (size_t)c);
    if (!p) return false;
    h->v = p;
    h->cap = c;
  }
  int i = h->n++;
  while (i > 0 && h->v[(i - 1) / 2].cost > s->cost) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = *s;
  return true;
}

static tstate heap_pop(heap *h) {
  tstate top = h->v[0], last = h->v[--h->n];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->v[c + 1].cost < h->v[c].cost) c++;
    if (!(h->v[c].cost < last.cost)) break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n) h->v[i] = last;
  return top;
}

/* Open-addressing set of graph hashes. */
typedef struct {
  uint64_t *v;
  size_t cap, n;
} hset;

static bool hset_add(hset *s, uint64_t h) {
  if (!h) h = 1;
  if (2 * (s->n + 1) > s->cap) {
    hset t = {.cap = s->cap ? s->cap * 2 : 1024};
    if (!(t.v = calloc(t.cap, sizeof *t.v))) return false;
    for (size_t i = 0; i < s->cap; i++)
      if (s->v[i]) hset_add(&t, s->v[i]);
    free(s->v);
    *s = t;
  }
  size_t i = h & (s->cap - 1);
  while (s->v[i]) {
    if (s->v[i] == h) return false;
    i = (i + 1) & (s->cap - 1);
  }
  s->v[i] = h;
  s->n++;
  return true;
}

/* Replay seq on s0 into g (TASO keeps sequences, not graphs, in its queue). */
static bool replay(run *r, const sg_graph *s0, const sg_sub *seq, int len, sg_graph *g) {
  if (!sg_copy(g, s0)) { r->oom = r->stopped = true; return false; }
  for (int i = 0; i < len; i++)
    if (sg_apply(g, &seq[i], i + 1, r->o) <= 0) return false;
  return true;
}

static void taso(run *r, const sg_graph *s0) {
  heap h = {0};
  hset seen = {0};
  sg_graph g = {0}, child = {0};
  tstate root = {.cost = s0->cost};
  hset_add(&seen, sg_hash(s0));
  heap_push(&h, &root);
  while (h.n && !expired(r)) {
    tstate st = heap_pop(&h);
    if (!replay(r, s0, st.seq, st.len, &g)) continue;
    consider(r, &g, st.seq, st.len);
    if (st.len >= r->o->max_steps) continue;
    sublist l = {0};
    if (!find_subs(&g, 0, r->o, &l)) r->oom = r->stopped = true;
    for (int i = 0; i < l.n && !expired(r); i++) {
      if (!child_of(r, &g, &l.v[i], st.len + 1, &child)) continue;
      if (!(child.cost < r->o->alpha * r->best_cost) || child.n_alive >= 2 * r->n0) continue;
      if (!hset_add(&seen, sg_hash(&child))) continue;
      tstate c = st;
      c.seq[c.len++] = l.v[i];
      c.cost = child.cost;
      if (!heap_push(&h, &c)) r->oom = r->stopped = true;
    }
    free(l.v);
  }
  free(h.v);
  free(seen.v);
  sg_free(&g);
  sg_free(&child);
}

/* ------------------------------------------------------------ ENU and Pruning (Alg. 1) */

static void dfs(run *r, const sg_graph *g, sg_sub *seq, int len, bool ordered) {
  consider(r, g, seq, len);
  if (len == r->o->max_steps || expired(r)) return;
  sublist l = {0};
  if (!find_subs(g, 0, r->o, &l)) r->oom = r->stopped = true;
  sg_graph child = {0};
  for (int i = 0; i < l.n && !expired(r); i++) {
    if (ordered && len > 0 && !key_less(&seq[len - 1], &l.v[i])) continue;
    if (!child_of(r, g, &l.v[i], len + 1, &child)) continue;
    seq[len] = l.v[i];
    dfs(r, &child, seq, len + 1, ordered);
  }
  sg_free(&child);
  free(l.v);
}

/* ------------------------------------------------------------ DPP (Alg. 2) */

/* The child-substitution set of g, reached from its father by last (made nodes >= from):
 * the father's set delta filtered (disjoint from last, still matching, and, when ordered,
 * after last) plus the new matches anchored on the made nodes. */
static bool child_set(const sg_opts *o, const sg_graph *g, const sublist *delta, const sg_sub *last, int from, bool ordered,
                      sublist *out) {
  for (int i = 0; i < delta->n; i++) {
    const sg_sub *t = &delta->v[i];
    if (!disjoint(t, last) || (ordered && !key_less(last, t)) || !sg_sub_check(g, t, o)) continue;
    if (!push(out, t)) return false;
  }
  return find_subs(g, from, o, out);
}

static void dpp(run *r, const sg_graph *g, sg_sub *seq, int len, const sublist *delta) {
  consider(r, g, seq, len);
  if (len == r->o->max_steps || expired(r)) return;
  sg_graph child = {0};
  for (int i = 0; i < delta->n && !expired(r); i++) {
    if (!child_of(r, g, &delta->v[i], len + 1, &child)) continue;
    seq[len] = delta->v[i];
    sublist d = {0};
    if (!child_set(r->o, &child, delta, &delta->v[i], g->nn, true, &d)) r->oom = r->stopped = true;
    dpp(r, &child, seq, len + 1, &d);
    free(d.v);
  }
  sg_free(&child);
}

/* ------------------------------------------------------------ Sampling (Alg. 3) */

typedef struct {
  sg_graph g;
  sg_sub seq[MAX_K];
  int len;
  int inc;          /* successive cost-increasing steps at the end */
  bool up;          /* the last step increased the cost */
  double key;       /* cost, or potential */
  sublist delta;    /* child substitutions (DP reuse, no order check) */
  int from;         /* first node the last step made */
} sstate;

typedef struct {
  sstate *v;
  int n, cap;
} slist;

static void sstate_free(sstate *s) {
  sg_free(&s->g);
  free(s->delta.v);
  memset(s, 0, sizeof *s);
}

static void slist_free(slist *l) {
  for (int i = 0; i < l->n; i++) sstate_free(&l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static bool spush(slist *l, sstate *s) { /* takes s */
  if (l->n == l->cap) {
    int c = l->cap * 2 + 16;
    sstate *p = realloc(l->v, sizeof *p * (size_t)c);
    if (!p) return false;
    l->v = p;
    l->cap = c;
  }
  l->v[l->n++] = *s;
  memset(s, 0, sizeof *s);
  return true;
}

/* Children of p (steps in p's delta; only those touching p's last made nodes when
 * dependent), appended to out; counted and compared with the best. */
static void expand(run *r, const sstate *p, bool dependent, slist *out) {
  if (p->len >= r->o->max_steps) return;
  for (int i = 0; i < p->delta.n && !expired(r); i++) {
    const sg_sub *t = &p->delta.v[i];
    if (dependent) {
      bool dep = false;
      for (int k = 0; k < t->n; k++) dep |= t->node[k] >= p->from;
      if (!dep) continue;
    }
    sstate c = {0};
    if (!child_of(r, &p->g, t, p->len + 1, &c.g)) { sg_free(&c.g); continue; }
    memcpy(c.seq, p->seq, sizeof *c.seq * (size_t)p->len);
    c.seq[p->len] = *t;
    c.len = p->len + 1;
    c.up = c.g.cost > p->g.cost + 1e-12;
    c.inc = c.up ? p->inc + 1 : 0;
    c.key = c.g.cost;
    c.from = p->g.nn;
    if (!child_set(r->o, &c.g, &p->delta, t, p->g.nn, false, &c.delta)) r->oom = r->stopped = true;
    consider(r, &c.g, c.seq, c.len);
    if (!spush(out, &c)) { sstate_free(&c); r->oom = r->stopped = true; }
  }
}

static int by_key(const void *a, const void *b) {
  double x = ((const sstate *)a)->key, y = ((const sstate *)b)->key;
  return x < y ? -1 : x > y;
}

/* Move the best m of in (by key, distinct graphs) to out; the rest are freed. */
static void take_best(slist *in, int m, slist *out, run *r) {
  qsort(in->v, (size_t)in->n, sizeof *in->v, by_key);
  hset seen = {0};
  int taken = 0;
  for (int i = 0; i < in->n; i++) {
    if (taken < m && isfinite(in->v[i].key) && hset_add(&seen, sg_hash(&in->v[i].g))) {
      if (!spush(out, &in->v[i])) r->oom = r->stopped = true;
      taken++;
    } else sstate_free(&in->v[i]);
  }
  in->n = 0;
  free(seen.v);
}

static void sampling(run *r, const sg_graph *s0) {
  int half = r->o->q / 2 > 0 ? r->o->q / 2 : 1;
  slist level = {0};
  sstate root = {0};
  if (!sg_copy(&root.g, s0) || !find_subs(&root.g, 0, r->o, &root.delta)) { r->oom = true; sstate_free(&root); return; }
  root.key = s0->cost;
  spush(&level, &root);
  while (level.n && !expired(r)) {
    slist tmp = {0}, des = {0}, inc = {0}, fur = {0};
    for (int i = 0; i < level.n; i++) expand(r, &level.v[i], false, &tmp);
    for (int i = 0; i < tmp.n; i++) { /* split: non-increasing / further exploration */
      sstate *c = &tmp.v[i];
      if (!c->up) spush(&des, c);
      else if (c->inc <= r->o->eta) spush(&fur, c);
      else sstate_free(c);
    }
    tmp.n = 0;
    while (fur.n && !expired(r)) {
      /* potential (Def. 12, eta steps): lowest cost after one dependent decreasing step */
      slist kids = {0};
      for (int i = 0; i < fur.n; i++) {
        sstate *f = &fur.v[i];
        slist mine = {0};
        expand(r, f, true, &mine);
        f->key = INFINITY;
        for (int k = 0; k < mine.n; k++)
          if (mine.v[k].g.cost < f->g.cost - 1e-12 && mine.v[k].g.cost < f->key) f->key = mine.v[k].g.cost;
        slist_free(&mine);
      }
      slist pick = {0};
      take_best(&fur, half, &pick, r);
      for (int i = 0; i < pick.n; i++) expand(r, &pick.v[i], true, &kids);
      slist_free(&pick);
      free(fur.v);
      memset(&fur, 0, sizeof fur);
      for (int i = 0; i < kids.n; i++) {
        sstate *c = &kids.v[i];
        if (c->up && c->inc <= r->o->eta) {
          sstate copy = {0};
          copy = *c;
          memset(c, 0, sizeof *c);
          spush(&fur, &copy);
        } else if (!c->up) spush(&inc, c);
        else sstate_free(c);
      }
      kids.n = 0;
      slist_free(&kids);
    }
    slist_free(&fur);
    slist_free(&level);
    take_best(&des, half, &level, r);
    take_best(&inc, half, &level, r);
    slist_free(&des);
    slist_free(&inc);
    slist_free(&tmp);
  }
  slist_free(&level);
}

/* ------------------------------------------------------------ driver */

int sg_search(const sg_graph *s0, const sg_opts *o, int algo, sg_graph *best, sg_result *res, ecg_err *e) {
  run r = {.o = o, .algo = algo, .best_cost = s0->cost, .n0 = s0->n_alive};
  int hits0 = o->db.hits, misses0 = o->db.misses;
  r.t0 = r.last_note = now_s();
  r.deadline = r.t0 + (o->budget_s > 0 ? o->budget_s : 60);
  if (!sg_copy(&r.best, s0)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  sg_sub seq[MAX_K];
  int k = o->max_steps;
  if (k > MAX_K) return ecg_errf(e, ECG_ERR_INTERNAL, "--max-steps above %d", MAX_K);
  switch (algo) {
  case SG_GREEDY: greedy(&r, s0); break;
  case SG_TASO: taso(&r, s0); break;
  case SG_ENU: dfs(&r, s0, seq, 0, false); break;
  case SG_PRUNING: dfs(&r, s0, seq, 0, true); break;
  case SG_DPP: {
    sublist d = {0};
    if (!find_subs(s0, 0, o, &d)) r.oom = true;
    else dpp(&r, s0, seq, 0, &d);
    free(d.v);
    break;
  }
  default: sampling(&r, s0); break;
  }
  memset(res, 0, sizeof *res);
  res->algo = algo;
  res->time_s = now_s() - r.t0;
  res->explored = r.explored;
  res->cycles = r.cycles;
  res->cost_hits = o->db.hits - hits0;
  res->cost_misses = o->db.misses - misses0;
  res->finished = !r.stopped || (algo == SG_GREEDY && !r.oom);
  res->initial_cost = s0->cost;
  res->final_cost = r.best_cost;
  res->n_steps = r.best_len;
  for (int i = 0; i < r.best_len; i++) res->applied[i] = r.best_seq[i].rule;
  if (o->verbose)
    fprintf(stderr, "ecg-rewrite: subst %s: %s in %.3f s, %lld sequences, cost %.4f -> %.4f ms, %d step(s)\n",
            NAMES[algo], res->finished ? "done" : "stopped by the budget", res->time_s, r.explored, s0->cost,
            r.best_cost, r.best_len);
  *best = r.best;
  if (r.oom) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory in the %s search", NAMES[algo]);
  return ECG_OK;
}

/* The last run's results, for the report. */
static sg_result LAST[SG_N_ALGOS];
static int N_LAST = -1, PICKED = -1;
static const rw_rules *LAST_RULES; /* the rule-file rules of LAST (they live until exit) */

void sg_report_json(FILE *f) {
  if (N_LAST < 0) return;
  fprintf(f, ", \"search\": {\"picked\": \"%s\", \"algorithms\": [", PICKED >= 0 ? NAMES[LAST[PICKED].algo] : "");
  for (int i = 0; i < N_LAST; i++) {
    const sg_result *x = &LAST[i];
    fprintf(f,
            "%s{\"name\": \"%s\", \"time_s\": %.6f, \"explored\": %lld, \"cycles_rejected\": %lld, \"finished\": %s, "
            "\"initial_cost\": %.6f, \"final_cost\": %.6f, \"cost_table_hits\": %d, \"cost_roofline\": %d, "
            "\"steps\": %d, \"applied\": [",
            i ? ", " : "", NAMES[x->algo], x->time_s, x->explored, x->cycles, x->finished ? "true" : "false", x->initial_cost,
            x->final_cost, x->cost_hits, x->cost_misses, x->n_steps);
    for (int k = 0; k < x->n_steps; k++) fprintf(f, "%s\"%s\"", k ? ", " : "", sg_rule_name(LAST_RULES, x->applied[k]));
    fprintf(f, "]}");
  }
  fprintf(f, "]}");
}

int rw_subst(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e) {
  sg_opts def;
  const sg_opts *so = o->search;
  if (!so || !so->n_algos) { /* --passes subst without --search: Sampling */
    if (so) def = *so;
    else sg_opts_init(&def);
    def.algos[def.n_algos++] = SG_SAMPLING;
    so = &def;
  }
  ((sg_opts *)so)->db.src = g;
  ((sg_opts *)so)->rules = o->rules;   /* the rule set is part of the substitutions */
  ((sg_opts *)so)->fold_max = o->fold_max_bytes;
  LAST_RULES = o->rules;
  sg_graph s0 = {0}, pick = {0};
  ECG_TRY(sg_from_ecg(g, &s0, &so->db, e));
  N_LAST = 0;
  PICKED = -1;
  int rc = ECG_OK;
  for (int i = 0; i < so->n_algos && rc == ECG_OK; i++) {
    sg_graph best = {0};
    rc = sg_search(&s0, so, so->algos[i], &best, &LAST[N_LAST], e);
    if (rc == ECG_OK && (PICKED < 0 || best.cost < pick.cost - 1e-12)) {
      sg_free(&pick);
      pick = best;
      PICKED = N_LAST;
    } else sg_free(&best);
    N_LAST++;
  }
  if (rc == ECG_OK && PICKED >= 0 && LAST[PICKED].n_steps > 0) {
    for (int k = 0; k < LAST[PICKED].n_steps; k++) rw_count(st, sg_rule_name(so->rules, LAST[PICKED].applied[k]));
    rc = sg_materialize(g, &pick, so->fold_max, e);
  }
  ((sg_opts *)so)->db.src = NULL;
  sg_free(&s0);
  sg_free(&pick);
  return rc;
}
