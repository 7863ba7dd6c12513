/* tune.c: AGO's SPLIT/JOIN schedule tuner (INFOCOM 2023, §V); see tune.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chain.h"
#include "ecg_arch.h"
#include "jsonl.h"
#include "tune.h"

/* ---------------------------------------------------------------- knobs */

/* One block's knobs; all 0 = the lowering's defaults (no schedule). K_INTENSIVE is the
 * schedule's intensive_fusion (ECG_INTENSIVE_*), searched on intensive-fusion blocks only
 * (on, off; AGO-NI pins it off) and 0 on every other block. K_TILE is the schedule's tile,
 * one value, the fused inverted-residual kernel's output rows per band (ecg_ibr_params
 * band_rows: how many rows of the expanded tensor are live at once), searched on those
 * blocks only (ecg_ibr_match); 0 lets the kernel choose from the cache sizes. */
enum { K_THREADS = 0, K_ALGO, K_VEC, K_UNROLL, K_INTENSIVE, K_TILE, K_N };
typedef struct { int v[K_N]; } knobs;
static const char *const knob_key[K_N] = {"t", "a", "v", "u", "i", "r"};
/* The values searched per knob (threads: filled per run, the powers of 2 below --threads). */
static const int algo_vals[] = {0, ECG_CONV_ALGO_GEMM, ECG_CONV_ALGO_GEMM_T, ECG_CONV_ALGO_WINOGRAD, ECG_CONV_ALGO_BLOCKED};
static const int vec_vals[] = {0, 4, 8, 16};
static const int unroll_vals[] = {0, 2, 4, 8};
static const int intensive_vals[] = {ECG_INTENSIVE_ON, ECG_INTENSIVE_OFF};
static const int tile_vals[] = {0, 2, 4, 8, 16, 32};

typedef struct { int n; int v[8]; } valset;

static int knobs_default(const knobs *k) {
  for (int i = 0; i < K_N; i++)
    if (k->v[i]) return 0;
  return 1;
}

/* ---------------------------------------------------------------- extraction */

int pt_extract(const ecg_graph *g, const bool *keep, ecg_graph **out, ecg_err *e) {
  *out = NULL;
  size_t sz = ecg__graph__get_packed_size(g);
  uint8_t *buf = malloc(sz ? sz : 1);
  if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  ecg__graph__pack(g, buf);
  ecg_graph *s = ecg__graph__unpack(NULL, sz, buf);
  free(buf);
  if (!s) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  size_t nt = s->n_tensors;
  char *role = calloc(nt + 1, 1); /* bit 1: read by a kept node, 2: produced by one, 4: read by another node or g's output */
  int32_t *ins = malloc((nt + 1) * sizeof *ins), *outs = malloc((nt + 1) * sizeof *outs);
  int rc = ECG_OK;
  if (!role || !ins || !outs) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK) {
    for (size_t i = 0; i < s->n_nodes; i++) {
      const ecg_node *n = s->nodes[i];
      for (size_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0) role[n->inputs[k]] |= keep[i] ? 1 : 4;
      for (size_t k = 0; keep[i] && k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) role[n->outputs[k]] |= 2;
    }
    for (size_t k = 0; k < s->n_outputs; k++) role[s->outputs[k]] |= 4;
    size_t ni = 0, no = 0;
    for (size_t t = 0; t < nt; t++) {
      if ((role[t] & 3) == 1 && !s->tensors[t]->is_const) ins[ni++] = (int32_t)t;
      if ((role[t] & 6) == 6) outs[no++] = (int32_t)t;
    }
    free(s->inputs);
    free(s->outputs);
    s->inputs = ins; s->n_inputs = ni;
    s->outputs = outs; s->n_outputs = no;
    ins = outs = NULL;
    ecg_remap_report rep;
    if (ecg_compact(s, keep, &rep) != ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  free(role); free(ins); free(outs);
  if (rc == ECG_OK) rc = ecg_validate(s, e);
  if (rc) { ecg_graph_free(s); return rc; }
  *out = s;
  return ECG_OK;
}

/* FNV-1a of g's packed bytes: the key of a candidate in the tuning log (the extracted ECG
 * with its schedules: the same candidate of the same model hashes alike). */
static int graph_key(const ecg_graph *g, uint64_t *key) {
  size_t sz = ecg__graph__get_packed_size(g);
  uint8_t *buf = malloc(sz ? sz : 1);
  if (!buf) return -1;
  ecg__graph__pack(g, buf);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sz; i++) h = (h ^ buf[i]) * 1099511628211ull;
  free(buf);
  *key = h;
  return 0;
}

/* ---------------------------------------------------------------- measuring */

/* The directory of the running binary (ecg-lower and ecg-bench are looked up there first). */
static void tool_path(const char *name, char *out, size_t cap) {
  char exe[PATH_MAX - 64];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
      snprintf(out, cap, "%s/%s", exe, name);
      if (access(out, X_OK) == 0) return;
    }
  }
  snprintf(out, cap, "%s", name);
}

/* 'x' with single quotes escaped, for sh -c. */
static void shq(char *out, size_t cap, const char *s) {
  size_t k = 0;
  if (k < cap) out[k++] = '\'';
  for (; *s && k + 5 < cap; s++) {
    if (*s == '\'') { memcpy(out + k, "'\\''", 4); k += 4; }
    else out[k++] = *s;
  }
  if (k < cap) out[k++] = '\'';
  out[k < cap ? k : cap - 1] = 0;
}

/* The sum of the mean times (ms) of the kernels of ecg-bench --profile file path whose
 * "block" is marked in unit[0..nblocks): *ms, or 0 when no kernel line names one (a unit
 * of zero-copy kernels). Returns 0, or -1 when the file cannot be read. */
static int profile_sum(const char *path, const unsigned char *unit, int nblocks, double *ms) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[8192];
  double sum = 0;
  while (fgets(line, sizeof line, f)) {
    double b, t;
    if (!strstr(line, "\"index\":") || !jsonl_num(line, "block", &b) || !jsonl_num(line, "ms", &t)) continue;
    if (b >= 0 && b < nblocks && unit[(int)b]) sum += t;
  }
  fclose(f);
  *ms = sum;
  return 0;
}

/* Lower and time candidate file ecg_path in work dir wd: *ms the median of the runs, or
 * with unit (in-model tuning, nblocks entries) the sum of the mean times of the kernels
 * of the marked blocks (profile_sum); *ms = NAN and *invalid = 1 when ecg-lower refuses it
 * (why: its message) or the run fails. */
static int measure_path(const char *ecg_path, const char *wd, const pt_tune_opts *o, const unsigned char *unit, int nblocks,
                        double *ms, int *invalid, char *why, size_t cap, ecg_err *e) {
  char lower[PATH_MAX + 64], bench[PATH_MAX + 64], qe[PATH_MAX + 16], ql[PATH_MAX + 96], qd[PATH_MAX + 16], qerr[PATH_MAX + 16], cmd[8 * PATH_MAX];
  char dir[PATH_MAX], err[PATH_MAX];
  tool_path("ecg-lower", lower, sizeof lower);
  tool_path("ecg-bench", bench, sizeof bench);
  snprintf(dir, sizeof dir, "%s/lo", wd);
  snprintf(err, sizeof err, "%s/err.txt", wd);
  shq(qe, sizeof qe, ecg_path);
  shq(qd, sizeof qd, dir);
  shq(qerr, sizeof qerr, err);
  *ms = NAN;
  *invalid = 0;
  why[0] = 0;
  char ql2[PATH_MAX + 96];
  shq(ql, sizeof ql, lower);
  shq(ql2, sizeof ql2, bench);
  snprintf(cmd, sizeof cmd, "rm -rf %s && %s -q -o %s %s 2>%s", qd, ql, qd, qe, qerr);
  int st = system(cmd);
  if (st == -1) return ecg_errf(e, ECG_ERR_INTERNAL, "cannot run %s: %s", lower, strerror(errno));
  FILE *ef = NULL;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1) { /* refused: a knob that does not apply */
      *invalid = 1;
      if ((ef = fopen(err, "r"))) {
        if (!fgets(why, (int)cap, ef)) why[0] = 0;
        fclose(ef);
        why[strcspn(why, "\n")] = 0;
      }
      return ECG_OK;
    }
    return ecg_errf(e, ECG_ERR_INPUT, "%s: ecg-lower failed (status %d)", ecg_path, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
  char prof[PATH_MAX + 16], qp[PATH_MAX + 32], popt[PATH_MAX + 48] = "";
  snprintf(prof, sizeof prof, "%s/p.json", wd);
  if (unit) {
    shq(qp, sizeof qp, prof);
    snprintf(popt, sizeof popt, " --profile %s", qp);
  }
  snprintf(cmd, sizeof cmd, "%s %s --random 1 --runs %d --warmup %d --threads %d%s -q 2>%s", ql2, qd, o->runs, o->warmup, o->threads,
           popt, qerr);
  FILE *p = popen(cmd, "r");
  if (!p) return ecg_errf(e, ECG_ERR_INTERNAL, "cannot run %s: %s", bench, strerror(errno));
  char line[4096] = "";
  double v = NAN;
  while (fgets(line, sizeof line, p))
    if (jsonl_num(line, "median_ms", &v)) break;
  while (fgets(line, sizeof line, p)) {}
  st = pclose(p);
  if (st != 0 || !isfinite(v)) {
    *invalid = 1;
    snprintf(why, cap, "ecg-bench failed (status %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return ECG_OK;
  }
  if (unit && profile_sum(prof, unit, nblocks, &v) != 0) {
    *invalid = 1;
    snprintf(why, cap, "ecg-bench wrote no profile");
    return ECG_OK;
  }
  *ms = v;
  return ECG_OK;
}

/* ---------------------------------------------------------------- the tuning log */

typedef struct { uint64_t key; double ms; int invalid; } logrec;
typedef struct {
  logrec *r;
  int n, cap;
  char cpu[128];
  const char *isa;
  int host_threads;
} tlog;

static int log_add(tlog *L, uint64_t key, double ms, int invalid) {
  if (L->n == L->cap) {
    int cap = L->cap ? 2 * L->cap : 256;
    logrec *r = realloc(L->r, (size_t)cap * sizeof *r);
    if (!r) return -1;
    L->r = r; L->cap = cap;
  }
  L->r[L->n++] = (logrec){key, ms, invalid};
  return 0;
}

static const logrec *log_find(const tlog *L, uint64_t key) {
  for (int i = L->n - 1; i >= 0; i--)
    if (L->r[i].key == key) return &L->r[i];
  return NULL;
}

/* Read the records of this CPU and --threads from path (absent file: none). */
static int log_load(tlog *L, const char *path, int threads, ecg_err *e) {
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? ECG_OK : ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  char line[8192], cpu[128], key[32];
  int lineno = 0, rc = ECG_OK;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (line[0] == '\n' || line[0] == '#') continue;
    double th = 0, ms = NAN;
    if (!jsonl_str(line, "key", key, sizeof key) || !jsonl_str(line, "cpu", cpu, sizeof cpu) || !jsonl_num(line, "threads", &th)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: not a tuning-log line (key, cpu, threads)", path, lineno);
      break;
    }
    if (strcmp(cpu, L->cpu) || (int)th != threads) continue; /* measured elsewhere: not reused */
    int invalid = strstr(line, "\"invalid\": true") != NULL;
    if (!invalid && !jsonl_num(line, "ms", &ms)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: no ms", path, lineno);
      break;
    }
    if (log_add(L, strtoull(key, NULL, 16), ms, invalid)) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
  }
  fclose(f);
  return rc;
}

/* One line of the tuning log; confirm > 0: the confirm-th --confirm measurement of the
 * schedule (its key is the schedule's mixed with that count: confirm_key). */
static void log_line(FILE *f, const tlog *L, const pt_tune_opts *o, uint64_t key, int sub, const char *unit,
                     const char *sched, double ms, int invalid, int confirm) {
  fprintf(f, "{\"key\": \"%016llx\", \"cpu\": \"%s\", \"isa\": \"%s\", \"threads\": %d, \"device\": \"cpu\", \"runs\": %d, \"sub\": %d, \"unit\": \"%s\", "
             "\"in\": \"%s\", \"sched\": \"%s\", \"ms\": ",
          (unsigned long long)key, L->cpu, L->isa, o->threads, o->runs, sub, unit, o->in_subgraph ? "subgraph" : "model", sched);
  if (isfinite(ms)) fprintf(f, "%.6g", ms);
  else fprintf(f, "null");
  if (confirm > 0) fprintf(f, ", \"confirm\": %d", confirm);
  fprintf(f, ", \"invalid\": %s}\n", invalid ? "true" : "false");
  fflush(f);
}

/* ---------------------------------------------------------------- the search */

typedef struct tuner {
  ecg_graph *g;
  const pt_tune_opts *o;
  pt_tune_stats *st;
  tlog log;
  FILE *logf;           /* appended to (NULL: no --tune-log) */
  FILE *fitf;           /* --fit-data */
  char wd[PATH_MAX];    /* work directory */
  knobs *best;          /* per block: its best knobs so far (the chosen ones once its subgraph
                           is tuned); in-model tuning measures every block of ctx_set at them */
  unsigned char *tuned; /* per block: searched (its subgraph got budget) */
  unsigned char *bad;   /* per block, its intensive_fusion value, knob and value index: ecg-lower
                           refused it (BAD below; what a block takes depends on whether it is
                           one fused kernel or its stages) */
  unsigned char *ibr;   /* per block: block_ibr's 2 (inverted residual), 1 (other intensive-fusion chain) or 0 */
  unsigned char *ctx_set; /* in-model tuning, per block: its subgraph's turn has come, so the
                           candidates' model holds it at best (else at the input's schedule) */
  unsigned char *unit;  /* in-model tuning: per block, in the unit being measured */
  valset vals[K_N];
  int spent;            /* schedules explored (measured + reused) */
  struct { uint64_t key; int n; } *rm; /* --confirm: re-measurements taken so far per schedule key */
  int nrm, caprm;
  double t0;
  int tty;
  int cur_sub, n_sub;
} tuner;

/* The index into tuner.bad of block b in intensive_fusion state st, knob q, value index x. */
#define BAD(b, st, q, x) ((((size_t)(b) * ECG_INTENSIVE_COUNT + (size_t)(st)) * K_N + (size_t)(q)) * 8 + (size_t)(x))

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static int out_of_budget(const tuner *T) {
  return T->spent >= T->o->budget || (T->o->timeout > 0 && now_s() - T->t0 >= T->o->timeout);
}

static void progress(const tuner *T, double best) {
  if (!T->tty || T->o->emit_dir) return;
  int width = 30, fill = T->o->budget ? (int)((double)T->spent * width / T->o->budget) : width;
  if (fill > width) fill = width;
  fprintf(stderr, "\r[%.*s%*s] %d/%d schedules, subgraph %d/%d, best %.4g ms ", fill, "##############################",
          width - fill, "", T->spent, T->o->budget, T->cur_sub + 1, T->n_sub, best);
}

/* "b<id>:t1a0v8u0;..." of the blocks blk[0..nb) under knobs k[]. */
static void sched_str(const int *blk, int nb, const knobs *k, char *out, size_t cap) {
  size_t len = 0;
  out[0] = 0;
  for (int i = 0; i < nb && len < cap; i++) {
    len += (size_t)snprintf(out + len, cap - len, "%sb%d:", i ? ";" : "", blk[i]);
    for (int q = 0; q < K_N && len < cap; q++) /* a tile only where set: the logs before it had no "r" */
      if (q != K_TILE || k[i].v[q]) len += (size_t)snprintf(out + len, cap - len, "%s%d", knob_key[q], k[i].v[q]);
  }
}

/* Put knobs k on block b of g in place of its schedule (none when all are 0); the caller
 * saved the old one. ECG_OK or ECG_ERR_INTERNAL (out of memory). */
static int put_knobs(ecg_graph *g, int b, const knobs *k, ecg_err *e) {
  ecg_block *blk = g->blocks[b];
  blk->schedule = NULL;
  if (knobs_default(k)) return ECG_OK;
  const int64_t tile = k->v[K_TILE];
  if (ecg_block_set_schedule(g, b, &tile, tile ? 1 : 0, k->v[K_VEC], k->v[K_UNROLL], false) != ECG_OK)
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  blk->schedule->threads = k->v[K_THREADS];
  blk->schedule->conv_algo = k->v[K_ALGO];
  blk->schedule->intensive_fusion = k->v[K_INTENSIVE];
  return ECG_OK;
}

/* The candidate ECG of the unit blk[0..nb) under knobs k[]: the standalone ECG of its
 * blocks (--tune-in subgraph), or a copy of the whole graph with every block of T->ctx_set
 * at T->best and the unit's at k (in-model tuning). */
static int unit_graph(tuner *T, const int *blk, int nb, const knobs *k, ecg_graph **out, ecg_err *e) {
  ecg_graph *g = T->g;
  const int whole = !T->o->in_subgraph;
  const size_t nblk = g->n_blocks;
  bool *keep = calloc(g->n_nodes + 1, sizeof *keep);
  if (!keep) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  /* the schedules go on g's blocks for the copy, and come off again */
  ecg_schedule **saved = calloc(nblk + 1, sizeof *saved);
  unsigned char *put = calloc(nblk + 1, 1);
  if (!saved || !put) { free(keep); free(saved); free(put); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  int rc = ECG_OK;
  for (size_t b = 0; whole && b < nblk && rc == ECG_OK; b++)
    if (T->ctx_set[b]) {
      saved[b] = g->blocks[b]->schedule;
      put[b] = 1;
      rc = put_knobs(g, (int)b, &T->best[b], e);
    }
  for (int i = 0; i < nb && rc == ECG_OK; i++) {
    ecg_block *b = g->blocks[blk[i]];
    for (size_t m = 0; m < b->n_nodes; m++) keep[b->nodes[m]] = true;
    if (put[blk[i]]) { /* in-model: the context's schedule for it goes */
      if (b->schedule) protobuf_c_message_free_unpacked(&b->schedule->base, NULL);
    } else saved[blk[i]] = b->schedule;
    put[blk[i]] = 1;
    rc = put_knobs(g, blk[i], &k[i], e);
  }
  for (size_t i = 0; whole && i < g->n_nodes; i++) keep[i] = true; /* in-model: a copy of all of g */
  if (rc == ECG_OK) rc = pt_extract(g, keep, out, e);
  for (size_t b = 0; b < nblk; b++)
    if (put[b]) {
      ecg_block *bb = g->blocks[b];
      if (bb->schedule) protobuf_c_message_free_unpacked(&bb->schedule->base, NULL);
      bb->schedule = saved[b];
    }
  free(saved);
  free(put);
  free(keep);
  return rc;
}

/* The tuning-log key of candidate c of the unit blk[0..nb): its packed bytes' hash, with the
 * unit's blocks mixed in for in-model tuning (one graph holds every unit). Nonzero: out of
 * memory. */
static int unit_key(const tuner *T, const ecg_graph *c, const int *blk, int nb, uint64_t *key) {
  if (graph_key(c, key)) return 1;
  if (!T->o->in_subgraph)
    for (int i = 0; i < nb; i++) *key = (*key ^ (uint64_t)(blk[i] + 1)) * 1099511628211ull;
  return 0;
}

/* Write candidate c of the unit blk[0..nb) to the work directory and time it (measure_path;
 * in-model tuning sums the unit's blocks' kernels). */
static int measure_unit(tuner *T, const ecg_graph *c, const int *blk, int nb, double *ms, int *invalid, char *why, size_t cap,
                        ecg_err *e) {
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/c.ecg", T->wd);
  ECG_TRY(ecg_write_path(path, c, 0, e));
  if (!T->o->in_subgraph) {
    memset(T->unit, 0, T->g->n_blocks);
    for (int i = 0; i < nb; i++) T->unit[blk[i]] = 1;
  }
  return measure_path(path, T->wd, T->o, T->o->in_subgraph ? NULL : T->unit, (int)T->g->n_blocks, ms, invalid, why, cap, e);
}

/* Explore one schedule of the unit blk[0..nb) (subgraph sub): its time from the log, or
 * measured (counted in the budget), or -1 when ecg-lower refuses it (free). emit mode:
 * write the candidate file, time NAN. */
static int explore(tuner *T, int sub, const char *unit, const int *blk, int nb, const knobs *k, double *ms, int *invalid,
                   ecg_err *e) {
  ecg_graph *c = NULL;
  *ms = NAN;
  *invalid = 0;
  ECG_TRY(unit_graph(T, blk, nb, k, &c, e));
  uint64_t key;
  if (unit_key(T, c, blk, nb, &key)) { ecg_graph_free(c); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  const logrec *r = log_find(&T->log, key);
  char sched[4096];
  sched_str(blk, nb, k, sched, sizeof sched);
  int rc = ECG_OK;
  if (r) {
    *ms = r->ms;
    *invalid = r->invalid;
    if (!r->invalid) { T->spent++; T->st->reused++; }
    else T->st->invalid++;
  } else if (T->o->emit_dir) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%016llx.ecg", T->o->emit_dir, (unsigned long long)key);
    rc = ecg_write_path(path, c, 0, e);
    if (rc == ECG_OK) { T->st->emitted++; T->spent++; log_add(&T->log, key, NAN, 1); }
  } else {
    char why[512];
    rc = measure_unit(T, c, blk, nb, ms, invalid, why, sizeof why, e);
    if (rc == ECG_OK) {
      if (*invalid) {
        T->st->invalid++;
        if (T->o->verbose) fprintf(stderr, "ecg-partition: tune: %s refused: %s\n", sched, why);
      } else { T->spent++; T->st->measured++; }
      if (log_add(&T->log, key, *ms, *invalid)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      if (T->logf) log_line(T->logf, &T->log, T->o, key, sub, unit, sched, *ms, *invalid, 0);
    }
  }
  ecg_graph_free(c);
  return rc;
}

/* Measure the unit blk[0..nb) of subgraph sub under knobs k once more (--confirm), not
 * counted in the budget. The j-th re-measurement of a schedule is logged under its key
 * mixed with j, so a resumed run that takes the same decisions finds it in the log.
 * *ms NAN when it no longer lowers or runs. */
static int remeasure(tuner *T, int sub, const char *unit, const int *blk, int nb, const knobs *k, double *ms, ecg_err *e) {
  ecg_graph *c = NULL;
  *ms = NAN;
  ECG_TRY(unit_graph(T, blk, nb, k, &c, e));
  uint64_t key;
  if (unit_key(T, c, blk, nb, &key)) { ecg_graph_free(c); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  int j = 0;
  while (j < T->nrm && T->rm[j].key != key) j++;
  if (j == T->nrm) {
    if (T->nrm == T->caprm) {
      int cap = T->caprm ? 2 * T->caprm : 64;
      void *r = realloc(T->rm, (size_t)cap * sizeof *T->rm);
      if (!r) { ecg_graph_free(c); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
      T->rm = r;
      T->caprm = cap;
    }
    T->rm[T->nrm].key = key;
    T->rm[T->nrm++].n = 0;
  }
  const int nth = ++T->rm[j].n;
  const uint64_t ckey = (key ^ (0x9E3779B97F4A7C15ull * (uint64_t)nth)) * 1099511628211ull;
  const logrec *r = log_find(&T->log, ckey);
  int rc = ECG_OK, invalid = 0;
  if (r) {
    *ms = r->ms;
    invalid = r->invalid;
  } else {
    char why[512], sched[4096];
    rc = measure_unit(T, c, blk, nb, ms, &invalid, why, sizeof why, e);
    if (rc == ECG_OK) {
      if (log_add(&T->log, ckey, *ms, invalid)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      sched_str(blk, nb, k, sched, sizeof sched);
      if (T->logf) log_line(T->logf, &T->log, T->o, ckey, sub, unit, sched, *ms, invalid, nth);
    }
  }
  ecg_graph_free(c);
  if (rc == ECG_OK) T->st->confirm_runs++;
  if (invalid) *ms = NAN;
  return rc;
}

static int cmp_ms(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
/* The median of v[0..n) (sorted in place; NAN entries are skipped; NAN when all are). */
static double median_ms(double *v, int n) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(v[i])) v[m++] = v[i];
  qsort(v, (size_t)m, sizeof *v, cmp_ms);
  return m ? (m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2])) : NAN;
}

/* --confirm: candidate k measured cand_ms, under 0.99 of best knobs cur's *best_ms. Both are
 * measured o->confirm more times, alternating (the best first), so that a burst of load
 * lands on both; *keep = 1 when the candidate's median (its first time included) is still
 * under 0.99 of the best's. *best_ms becomes the median of the schedule that wins, so the
 * next candidates are compared with a steadier time than a single run's. */
static int confirm_gain(tuner *T, int sub, const char *unit, const int *blk, int nb, const knobs *cur, const knobs *k,
                        double cand_ms, double *best_ms, int *keep, ecg_err *e) {
  const int K = T->o->confirm;
  double *bv = malloc((size_t)(K + 1) * 2 * sizeof *bv), *cv;
  if (!bv) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  cv = bv + K + 1;
  bv[0] = *best_ms;
  cv[0] = cand_ms;
  int rc = ECG_OK;
  for (int i = 1; i <= K && rc == ECG_OK; i++) {
    rc = remeasure(T, sub, unit, blk, nb, cur, &bv[i], e);
    if (rc == ECG_OK) rc = remeasure(T, sub, unit, blk, nb, k, &cv[i], e);
  }
  if (rc == ECG_OK) {
    const double b = median_ms(bv, K + 1), c = median_ms(cv, K + 1);
    *keep = isfinite(c) && isfinite(b) && c < 0.99 * b;
    *best_ms = *keep ? c : b;
    if (*keep) T->st->confirmed++;
    else T->st->rejected++;
  }
  free(bv);
  return rc;
}

/* Block b is an intensive-fusion block (AGO §III): its members are a chain ecg-fuse
 * --intensive forms and ecg-lower generates as one kernel (chain.h ecg_intensive_match:
 * an inverted residual or a squeeze-and-excitation chain, the definitions all three use),
 * so its schedule may set intensive_fusion. Returns 2 for an inverted residual
 * (ecg_ibr_match: its fused kernel also takes a tile), 1 for another intensive-fusion chain
 * (squeeze-and-excitation, conv + pool), 0 for neither. */
static int block_ibr(const ecg_graph *g, int b) {
  const ecg_block *blk = g->blocks[b];
  ecg_ibr_chain ib;
  if (!ecg_intensive_match(g, blk->nodes, (int)blk->n_nodes)) return 0;
  return ecg_ibr_match(g, blk->nodes, (int)blk->n_nodes, &ib) >= 0 ? 2 : 1;
}

/* Coordinate search over the unit blk[0..nb) from knobs cur[] (updated to the best found),
 * for at most `share` schedules (the starting one included), stopping after --patience
 * schedules in a row without a 1% gain. *best_ms: the best time, *trials the schedules
 * explored, *best_at the trial that found the best (1: the start). */
static int search(tuner *T, int sub, const char *unit, const int *blk, int nb, knobs *cur, int share, double *best_ms,
                  int *trials, int *best_at, const char **why, ecg_err *e) {
  double ms;
  int invalid, start = T->spent;
  *trials = *best_at = 0;
  *best_ms = NAN;
  ECG_TRY(explore(T, sub, unit, blk, nb, cur, &ms, &invalid, e));
  if (T->o->emit_dir) invalid = 0;
  else if (invalid) {
    char lb[256];
    const ecg_node *n = T->g->nodes[T->g->blocks[blk[0]]->nodes[0]];
    return ecg_errf(e, ECG_ERR_INPUT, "subgraph %d (node '%s'): the starting schedule does not lower or run", sub,
                    ecg_node_label(T->g, n, lb, sizeof lb));
  }
  *best_ms = ms;
  *trials = *best_at = 1;
  progress(T, *best_ms);
  /* candidates: every single-knob change of one block, in a seeded random order, the
   * intensive_fusion changes first */
  int cap = nb * K_N * 8, nc;
  int (*cand)[3] = malloc((size_t)cap * sizeof *cand);
  if (!cand) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  unsigned rng = T->o->seed * 2654435761u + (unsigned)sub * 40503u + (unsigned)nb;
  int fails = 0, improved = 1, rc = ECG_OK;
  *why = "exhausted"; /* every single-knob change of the best tried */
  while (improved && rc == ECG_OK) {
    improved = 0;
    nc = 0;
    for (int i = 0; i < nb; i++)
      for (int q = 0; q < K_N; q++) {
        /* intensive_fusion: on an intensive-fusion block only, and not under AGO-NI (pinned off) */
        if (q == K_INTENSIVE && (!T->ibr[blk[i]] || T->o->no_intensive)) continue;
        /* tile: on a fused inverted-residual block only (AGO-NI: none is fused) */
        if (q == K_TILE && (T->ibr[blk[i]] != 2 || T->o->no_intensive)) continue;
        for (int x = 0; x < T->vals[q].n; x++)
          if (T->vals[q].v[x] != cur[i].v[q] && !T->bad[BAD(blk[i], cur[i].v[K_INTENSIVE], q, x)]) {
            cand[nc][0] = i; cand[nc][1] = q; cand[nc][2] = x; nc++;
          }
      }
    for (int i = nc - 1; i > 0; i--) { /* Fisher-Yates, xorshift */
      rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
      int j = (int)(rng % (unsigned)(i + 1));
      int t[3] = {cand[i][0], cand[i][1], cand[i][2]};
      memcpy(cand[i], cand[j], sizeof t);
      memcpy(cand[j], t, sizeof t);
    }
    /* coarse before fine: the intensive_fusion changes (which kernels run) first, in their
     * shuffled order, then the knobs that tune one kernel's code (a stable partition) */
    for (int i = 0, front = 0; i < nc; i++)
      if (cand[i][1] == K_INTENSIVE) {
        int t[3] = {cand[i][0], cand[i][1], cand[i][2]};
        memmove(cand[front + 1], cand[front], (size_t)(i - front) * sizeof *cand);
        memcpy(cand[front++], t, sizeof t);
      }
    for (int c = 0; c < nc && rc == ECG_OK; c++) {
      if (T->spent - start >= share || out_of_budget(T)) { *why = "budget"; improved = 0; break; }
      if (!T->o->emit_dir && fails >= T->o->patience) { *why = "stable"; improved = 0; break; }
      knobs *k = malloc((size_t)nb * sizeof *k);
      if (!k) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      memcpy(k, cur, (size_t)nb * sizeof *k);
      k[cand[c][0]].v[cand[c][1]] = T->vals[cand[c][1]].v[cand[c][2]];
      rc = explore(T, sub, unit, blk, nb, k, &ms, &invalid, e);
      if (rc == ECG_OK && invalid && !T->o->emit_dir) {
        T->bad[BAD(blk[cand[c][0]], cur[cand[c][0]].v[K_INTENSIVE], cand[c][1], cand[c][2])] = 1;
      } else if (rc == ECG_OK && !T->o->emit_dir) {
        (*trials)++;
        int keep = ms < 0.99 * *best_ms;
        if (keep && T->o->confirm > 0) rc = confirm_gain(T, sub, unit, blk, nb, cur, k, ms, best_ms, &keep, e);
        else if (keep) *best_ms = ms;
        if (rc == ECG_OK && keep) {
          *best_at = *trials;
          memcpy(cur, k, (size_t)nb * sizeof *k);
          fails = 0;
          improved = 1;
        } else fails++;
        progress(T, *best_ms);
      }
      free(k);
      if (improved) break;
    }
    if (T->o->emit_dir) break; /* only the first round's candidates are known before measuring */
  }
  free(cand);
  return rc;
}

/* Eq. 1's product over node n's loops (c = 1, b = 0), for the fit data. */
static double prod_log(const ecg_graph *g, int node) {
  pt_weights one = {.c = 1, .b = 0, .max_weight = 1};
  double w = 0;
  ecg_err e2 = {0};
  return pt_node_weight(g, g->nodes[node], &one, &w, &e2) == ECG_OK ? w : 0;
}

static double blocks_weight(const tuner *T, const int *blk, int nb, double *plog, int *nops) {
  double w = 0;
  *plog = 0;
  *nops = 0;
  for (int i = 0; i < nb; i++) {
    const ecg_block *b = T->g->blocks[blk[i]];
    for (size_t m = 0; m < b->n_nodes; m++) {
      double x = 0;
      ecg_err e2 = {0};
      if (pt_node_weight(T->g, T->g->nodes[b->nodes[m]], T->o->w, &x, &e2) == ECG_OK) w += x;
      *plog += prod_log(T->g, b->nodes[m]);
      (*nops)++;
    }
  }
  return w;
}

int pt_tune(ecg_graph *g, const pt_tune_opts *o, pt_tune_stats *st, ecg_err *e) {
  memset(st, 0, sizeof *st);
  if (!g->n_subgraphs) return ecg_errf(e, ECG_ERR_INPUT, "the graph has no partition subgraphs to tune (run ecg-partition without --tune first, or with it: it partitions)");
  tuner T = {.g = g, .o = o, .st = st, .t0 = now_s(), .tty = isatty(2), .n_sub = (int)g->n_subgraphs};
  ecg_host_key(T.log.cpu, sizeof T.log.cpu, &T.log.isa, &T.log.host_threads);
  T.vals[K_THREADS].n = 1;
  for (int t = 1; t < o->threads && T.vals[K_THREADS].n < 8; t *= 2) T.vals[K_THREADS].v[T.vals[K_THREADS].n++] = t;
  T.vals[K_ALGO].n = 5; memcpy(T.vals[K_ALGO].v, algo_vals, sizeof algo_vals);
  T.vals[K_VEC].n = 4; memcpy(T.vals[K_VEC].v, vec_vals, sizeof vec_vals);
  T.vals[K_UNROLL].n = 4; memcpy(T.vals[K_UNROLL].v, unroll_vals, sizeof unroll_vals);
  T.vals[K_INTENSIVE].n = 2; memcpy(T.vals[K_INTENSIVE].v, intensive_vals, sizeof intensive_vals);
  T.vals[K_TILE].n = 6; memcpy(T.vals[K_TILE].v, tile_vals, sizeof tile_vals);
  int rc = ECG_OK;
  size_t nb = g->n_blocks;
  T.best = calloc(nb + 1, sizeof *T.best);
  T.bad = calloc(BAD(nb + 1, 0, 0, 0), 1);
  T.tuned = calloc(nb + 1, 1);
  int *blk = malloc((nb + 1) * sizeof *blk), *sub_of = malloc((nb + 1) * sizeof *sub_of);
  knobs *cur = calloc(nb + 1, sizeof *cur);
  if (!T.best || !T.bad || !T.tuned || !blk || !sub_of || !cur) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK && o->log) rc = log_load(&T.log, o->log, o->threads, e);
  if (rc == ECG_OK && o->log && !o->emit_dir && !(T.logf = fopen(o->log, "a"))) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", o->log, strerror(errno));
  if (rc == ECG_OK && o->fit_out && !(T.fitf = fopen(o->fit_out, "w"))) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", o->fit_out, strerror(errno));
  if (rc == ECG_OK && o->emit_dir && mkdir(o->emit_dir, 0777) != 0 && errno != EEXIST) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", o->emit_dir, strerror(errno));
  if (rc == ECG_OK && !o->emit_dir) {
    const char *tmp = getenv("TMPDIR");
    snprintf(T.wd, sizeof T.wd, "%s/ecg-tune.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(T.wd)) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", T.wd, strerror(errno));
  }
  /* a node in no fusion block gets a one-node block while tuning, so it can carry a schedule
   * (a one-node block lowers exactly as a node of no block: kernels.c, LW_K_SINGLE); at the
   * end only those whose chosen schedule sets a knob keep theirs */
  size_t n_orig = g->n_blocks;
  for (size_t i = 0; rc == ECG_OK && i < g->n_nodes; i++) {
    int node = (int)i;
    if (g->nodes[i]->fusion_block < 0 && ecg_block_add(g, &node, 1, -1, e) < 0) rc = ECG_ERR_INTERNAL;
  }
  if (rc == ECG_OK && g->n_blocks > nb) {
    nb = g->n_blocks;
    knobs *b2 = realloc(T.best, (nb + 1) * sizeof *b2);
    if (b2) T.best = b2;
    unsigned char *t2 = b2 ? realloc(T.tuned, nb + 1) : NULL;
    if (t2) T.tuned = t2;
    unsigned char *bad2 = t2 ? realloc(T.bad, BAD(nb + 1, 0, 0, 0)) : NULL;
    if (bad2) T.bad = bad2;
    int *blk2 = bad2 ? realloc(blk, (nb + 1) * sizeof *blk2) : NULL;
    if (blk2) blk = blk2;
    int *sub2 = blk2 ? realloc(sub_of, (nb + 1) * sizeof *sub2) : NULL;
    if (sub2) sub_of = sub2;
    knobs *cur2 = sub2 ? realloc(cur, (nb + 1) * sizeof *cur2) : NULL;
    if (cur2) cur = cur2;
    if (!cur2) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    else {
      memset(T.best, 0, (nb + 1) * sizeof *T.best);
      memset(T.tuned, 0, nb + 1);
      memset(T.bad, 0, BAD(nb + 1, 0, 0, 0));
    }
  }
  /* which blocks are intensive-fusion blocks (their intensive_fusion knob is searched) */
  if (rc == ECG_OK && !(T.ibr = calloc(nb + 1, 1))) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  /* in-model tuning: each block's schedule in the candidates' model, set as its subgraph's turn comes */
  if (rc == ECG_OK && (!(T.ctx_set = calloc(nb + 1, 1)) || !(T.unit = calloc(nb + 1, 1))))
    rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t b = 0; rc == ECG_OK && b < nb; b++) T.ibr[b] = block_ibr(g, (int)b);
  /* each block's subgraph (a block lies in one subgraph) */
  for (size_t b = 0; rc == ECG_OK && b < nb; b++) {
    sub_of[b] = -1;
    for (size_t s = 0; s < g->n_subgraphs && sub_of[b] < 0; s++)
      for (size_t m = 0; m < g->subgraphs[s]->n_nodes; m++)
        if (g->subgraphs[s]->nodes[m] == g->blocks[b]->nodes[0]) { sub_of[b] = (int)s; break; }
  }
  double wleft = 0;
  for (size_t s = 0; s < g->n_subgraphs; s++) wleft += g->subgraphs[s]->weight > 0 ? g->subgraphs[s]->weight : 1;
  for (size_t s = 0; rc == ECG_OK && s < g->n_subgraphs && !out_of_budget(&T); s++) {
    T.cur_sub = (int)s;
    int n = 0;
    for (size_t b = 0; b < nb; b++)
      if (sub_of[b] == (int)s) blk[n++] = (int)b;
    double ws = g->subgraphs[s]->weight > 0 ? g->subgraphs[s]->weight : 1;
    /* the budget left, shared by weight (AGO's weight measures tuning complexity) */
    int share = (int)ceil((o->budget - T.spent) * ws / wleft);
    wleft -= ws;
    if (n == 0 || share < 1) continue;
    int spent0 = T.spent, trials, best_at;
    double best_ms = NAN, ws_minis = 0;
    /* the start: the defaults; an intensive-fusion block's knob stated (on), or pinned off
     * under AGO-NI: no intensive fusion at all */
    for (int i = 0; i < n; i++) {
      cur[i] = (knobs){{0}};
      if (T.ibr[blk[i]]) cur[i].v[K_INTENSIVE] = o->no_intensive ? ECG_INTENSIVE_OFF : ECG_INTENSIVE_ON;
      T.best[blk[i]] = cur[i];
      T.ctx_set[blk[i]] = 1;
    }
    /* SPLIT: each block (<= 1 complex operator, or one intensive kernel) alone, with about
     * 60% of the share; a mini-subgraph's least part is its start, plus, for an
     * intensive-fusion block whose intensive_fusion is searched, the other value (the
     * search tries it first: both kernel structures measured on the block alone, where a
     * block's difference is not lost in the joined subgraph's noise). A share too small to
     * give every mini-subgraph its least part and the joined subgraph one more schedule
     * goes to the joined subgraph alone */
    int need = 0;
    for (int i = 0; i < n; i++) need += 1 + (T.ibr[blk[i]] && !o->no_intensive);
    if (!o->no_reformer && n > 1 && share >= need + 2) {
      for (int i = 0; i < n; i++) { double pl; int no; ws_minis += blocks_weight(&T, &blk[i], 1, &pl, &no); }
      int split_budget = share * 6 / 10 > need ? share * 6 / 10 : need;
      if (split_budget > share - 1) split_budget = share - 1;
      for (int i = 0; i < n && rc == ECG_OK && !out_of_budget(&T); i++) {
        double pl, wm;
        int no, least = 1 + (T.ibr[blk[i]] && !o->no_intensive);
        need -= least; /* now: the least parts of the minis after this one */
        wm = blocks_weight(&T, &blk[i], 1, &pl, &no);
        /* each mini-subgraph's part by weight, at least its least part, within what is left */
        int sh = (int)floor(split_budget * (ws_minis > 0 ? wm / ws_minis : 1.0 / n));
        int room = split_budget - (T.spent - spent0) - need;
        if (sh < least) sh = least;
        if (sh > room) sh = room > 1 ? room : 1;
        double mms;
        const char *why = "";
        rc = search(&T, (int)s, "mini", &blk[i], 1, &cur[i], sh, &mms, &trials, &best_at, &why, e);
        T.best[blk[i]] = cur[i]; /* the next mini-subgraphs are measured beside its best */
        st->minis++;
        if (rc == ECG_OK && T.fitf && !o->emit_dir && trials > 0)
          fprintf(T.fitf, "{\"sub\": %zu, \"block\": %d, \"ops\": %d, \"prod_log\": %.6g, \"trials\": %d, \"best_at\": %d, \"stopped\": \"%s\", \"ms\": %.6g}\n",
                  s, blk[i], no, pl, trials, best_at, why, mms);
      }
    }
    /* JOIN (or AGO-NR, or a one-block subgraph): the composed schedule as the start */
    if (rc == ECG_OK && !out_of_budget(&T)) {
      int left = share - (T.spent - spent0);
      if (left < 1) left = 1;
      const char *why = "";
      rc = search(&T, (int)s, n > 1 ? "joined" : "mini", blk, n, cur, left, &best_ms, &trials, &best_at, &why, e);
      if (n == 1) st->minis++;
      if (rc == ECG_OK && n == 1 && T.fitf && !o->emit_dir && trials > 0) {
        double pl; int no;
        blocks_weight(&T, blk, 1, &pl, &no);
        fprintf(T.fitf, "{\"sub\": %zu, \"block\": %d, \"ops\": %d, \"prod_log\": %.6g, \"trials\": %d, \"best_at\": %d, \"stopped\": \"%s\", \"ms\": %.6g}\n",
                s, blk[0], no, pl, trials, best_at, why, best_ms);
      }
    }
    st->subgraphs++;
    for (int i = 0; i < n; i++) { T.best[blk[i]] = cur[i]; T.tuned[blk[i]] = 1; }
    if (rc == ECG_OK && !o->emit_dir) {
      if (T.tty) fprintf(stderr, "\r%*s\r", 100, "");
      if (!T.tty || o->verbose)
      {
        char best[64];
        if (isfinite(best_ms)) snprintf(best, sizeof best, "best %.4g ms", best_ms);
        else snprintf(best, sizeof best, "stopped before JOIN (--timeout)");
        fprintf(stderr, "ecg-partition: tune: subgraph %zu/%zu: %d block%s, %d schedule%s, %s (%d/%d spent)\n", s + 1,
                g->n_subgraphs, n, n == 1 ? "" : "s", T.spent - spent0, T.spent - spent0 == 1 ? "" : "s", best, T.spent,
                o->budget);
      }
    }
  }
  if (T.tty && !o->emit_dir) fprintf(stderr, "\r%*s\r", 100, "");
  /* the chosen schedules into g */
  for (size_t b = 0; rc == ECG_OK && b < n_orig && !o->emit_dir; b++) {
    if (!T.tuned[b]) continue; /* not reached within the budget: the input's schedule stays */
    if (knobs_default(&T.best[b])) { /* the defaults won: no schedule */
      if (g->blocks[b]->schedule) protobuf_c_message_free_unpacked(&g->blocks[b]->schedule->base, NULL);
      g->blocks[b]->schedule = NULL;
      continue;
    }
    const int64_t tile = T.best[b].v[K_TILE];
    if (ecg_block_set_schedule(g, (int)b, &tile, tile ? 1 : 0, T.best[b].v[K_VEC], T.best[b].v[K_UNROLL], false) != ECG_OK) {
      rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      break;
    }
    g->blocks[b]->schedule->threads = T.best[b].v[K_THREADS];
    g->blocks[b]->schedule->conv_algo = T.best[b].v[K_ALGO];
    g->blocks[b]->schedule->intensive_fusion = T.best[b].v[K_INTENSIVE];
    st->blocks_scheduled++;
    if (T.best[b].v[K_INTENSIVE] == ECG_INTENSIVE_OFF) st->intensive_off++;
    else if (T.best[b].v[K_INTENSIVE] == ECG_INTENSIVE_ON) st->intensive_on++;
  }
  /* the one-node blocks made above: kept (renumbered densely after the fusion blocks) only
   * where a knob is set */
  if (g->n_blocks > n_orig) {
    size_t nk = 0;
    int *keep_node = malloc((g->n_blocks - n_orig + 1) * sizeof *keep_node);
    knobs *keep_k = malloc((g->n_blocks - n_orig + 1) * sizeof *keep_k);
    if (!keep_node || !keep_k) { if (rc == ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
    for (size_t b = n_orig; b < g->n_blocks; b++) {
      ecg_block *blk1 = g->blocks[b];
      int node = blk1->nodes[0];
      if (keep_node && keep_k && rc == ECG_OK && !o->emit_dir && T.tuned[b] && !knobs_default(&T.best[b])) {
        keep_node[nk] = node;
        keep_k[nk++] = T.best[b];
      }
      g->nodes[node]->fusion_block = -1;
      protobuf_c_message_free_unpacked(&blk1->base, NULL);
      g->blocks[b] = NULL;
    }
    g->n_blocks = n_orig;
    for (size_t k = 0; k < nk && rc == ECG_OK; k++) {
      int id = ecg_block_add(g, &keep_node[k], 1, -1, e);
      if (id < 0 || ecg_block_set_schedule(g, id, NULL, 0, keep_k[k].v[K_VEC], keep_k[k].v[K_UNROLL], false) != ECG_OK) {
        rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
        break;
      }
      g->blocks[id]->schedule->threads = keep_k[k].v[K_THREADS];
      g->blocks[id]->schedule->conv_algo = keep_k[k].v[K_ALGO];
      g->blocks[id]->plan = strdup("tune");
      if (!g->blocks[id]->plan) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      st->blocks_scheduled++;
    }
    free(keep_node);
    free(keep_k);
  }
  if (T.logf && fclose(T.logf) != 0 && rc == ECG_OK) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", o->log, strerror(errno));
  if (T.fitf && fclose(T.fitf) != 0 && rc == ECG_OK) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", o->fit_out, strerror(errno));
  if (T.wd[0]) {
    char q[PATH_MAX + 16], cmd[PATH_MAX + 32];
    shq(q, sizeof q, T.wd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", q);
    if (system(cmd) != 0 && o->verbose) fprintf(stderr, "ecg-partition: could not remove %s\n", T.wd);
  }
  st->seconds = now_s() - T.t0;
  free(T.best); free(T.bad); free(T.rm); free(T.ibr); free(T.tuned); free(blk); free(sub_of); free(cur); free(T.log.r);
  free(T.ctx_set); free(T.unit);
  return rc;
}

int pt_measure_file(const char *path, const pt_tune_opts *o, FILE *f, ecg_err *e) {
  ecg_graph *g = NULL;
  ECG_TRY(ecg_read_path(path, &g, e));
  int rc = ecg_validate(g, e);
  uint64_t key = 0;
  if (rc == ECG_OK && graph_key(g, &key)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  tlog L = {0};
  ecg_host_key(L.cpu, sizeof L.cpu, &L.isa, &L.host_threads);
  char wd[PATH_MAX];
  const char *tmp = getenv("TMPDIR");
  snprintf(wd, sizeof wd, "%s/ecg-measure.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int made = 0;
  if (rc == ECG_OK) {
    if (mkdtemp(wd)) made = 1;
    else rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", wd, strerror(errno));
  }
  double ms = NAN;
  int invalid = 0;
  char why[512];
  if (rc == ECG_OK) rc = measure_path(path, wd, o, NULL, 0, &ms, &invalid, why, sizeof why, e);
  if (rc == ECG_OK) {
    char sched[4096] = "";
    size_t len = 0;
    for (size_t b = 0; b < g->n_blocks && len < sizeof sched; b++) {
      const ecg_schedule *s = g->blocks[b]->schedule;
      if (s)
        len += (size_t)snprintf(sched + len, sizeof sched - len, "%sb%zu:t%da%dv%du%di%d", len ? ";" : "", b, s->threads, s->conv_algo,
                                s->vector_width, s->unroll, s->intensive_fusion);
    }
    pt_tune_opts os = *o; /* a standalone candidate: measured as --tune-in subgraph measures */
    os.in_subgraph = true;
    log_line(f, &L, &os, key, -1, "file", sched, ms, invalid, 0);
  }
  if (made) {
    char q[PATH_MAX + 16], cmd[PATH_MAX + 32];
    shq(q, sizeof q, wd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", q);
    if (system(cmd) != 0) {}
  }
  ecg_graph_free(g);
  return rc;
}
