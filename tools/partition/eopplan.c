/* eopplan.c: ecg-partition --eop: EOP (VEE '22) on an ECG from two measured device
 * profiles (scripts/eop_profile.sh): the plan goes into the ECG as placements (schema 4)
 * and, with every strategy's estimate, into a JSON report. ecg-lower --target
 * c+opencl runs it (tools/lower/hetero.c). --share S forces one share instead (pt_eop_force). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecg_arch.h"
#include "jsonl.h"
#include "partition.h"

/** One measurement of a profile. */
typedef struct sample {
  char *sig;
  int dim;
  double x, ms;
} sample;

/** A device profile. */
typedef struct profile {
  char device[128];
  sample *s;
  int n, cap;
} profile;

static void profile_free(profile *p) {
  for (int i = 0; i < p->n; i++) free(p->s[i].sig);
  free(p->s);
}

/** Read a profile file; with `here` (this machine's CPU model), a sample whose "cpu" key names
 *  another CPU is refused (times measured elsewhere do not plan this machine; DESIGN.md
 *  "Measured costs"). Errors: ECG_ERR_INPUT "PATH: strerror" or "PATH:LINE: ...". */
static int profile_load(const char *path, profile *p, const char *here, ecg_err *e) {
  memset(p, 0, sizeof *p);
  FILE *f = fopen(path, "r");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  char line[4096], sig[1024], dim[32], dev[128], cpu[256];
  int ln = 0, rc = ECG_OK;
  while (!rc && fgets(line, sizeof line, f)) {
    ln++;
    if (line[0] == '\n' || line[0] == '#') continue;
    double x, ms;
    if (!jsonl_str(line, "signature", sig, sizeof sig) || !jsonl_str(line, "dim", dim, sizeof dim) ||
        !jsonl_str(line, "device", dev, sizeof dev) || !jsonl_num(line, "x", &x) || !jsonl_num(line, "ms", &ms))
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: expected {\"device\", \"signature\", \"dim\", \"x\", \"ms\"}", path, ln);
    else if (pt_dim_of_name(dim) < 0)
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: dim '%s' (expected batch, rows, cols or k)", path, ln, dim);
    else if (!(x >= 1) || !(ms >= 0))
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: x must be >= 1 and ms >= 0", path, ln);
    else if (here && jsonl_str(line, "cpu", cpu, sizeof cpu) && strcmp(cpu, here))
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: measured on CPU '%s', not this machine's '%s' (--foreign-profiles plans with it anyway)",
                    path, ln, cpu, here);
    else if (p->device[0] && strcmp(p->device, dev))
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: device '%s' in a profile of '%s' (one device per file)", path, ln, dev, p->device);
    else {
      snprintf(p->device, sizeof p->device, "%s", dev);
      if (p->n == p->cap) {
        int nc = p->cap ? 2 * p->cap : 64;
        sample *ns = realloc(p->s, sizeof *ns * (size_t)nc);
        if (!ns) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
        p->s = ns;
        p->cap = nc;
      }
      p->s[p->n] = (sample){.sig = strdup(sig), .dim = pt_dim_of_name(dim), .x = x, .ms = ms};
      if (!p->s[p->n].sig) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      else p->n++;
    }
  }
  if (!rc && ferror(f)) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  fclose(f);
  if (!rc && p->n == 0) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: no samples", path);
  if (rc) profile_free(p);
  return rc;
}

/** Fit the samples of sig/dim in p, sorted by extent; false when there are none. */
static bool fit_of(const profile *p, const char *sig, int dim, eop_fit all[3], eop_fit *best) {
  double x[256], ms[256];
  int n = 0;
  for (int i = 0; i < p->n && n < 256; i++)
    if (p->s[i].dim == dim && !strcmp(p->s[i].sig, sig)) {
      int j = n++;
      while (j > 0 && x[j - 1] > p->s[i].x) { x[j] = x[j - 1]; ms[j] = ms[j - 1]; j--; }
      x[j] = p->s[i].x;
      ms[j] = p->s[i].ms;
    }
  return n > 0 && eop_fit_samples(x, ms, n, all, best) == 0;
}

int pt_eop_profile_check(const char *path, int *n_samples, int *n_fits, ecg_err *e) {
  profile p;
  ECG_TRY(profile_load(path, &p, NULL, e));
  *n_samples = p.n;
  *n_fits = 0;
  for (int i = 0; i < p.n; i++) {
    int first = 1;
    for (int j = 0; j < i && first; j++) first = !(p.s[j].dim == p.s[i].dim && !strcmp(p.s[j].sig, p.s[i].sig));
    eop_fit all[3], best;
    if (first && fit_of(&p, p.s[i].sig, p.s[i].dim, all, &best)) (*n_fits)++;
  }
  profile_free(&p);
  return ECG_OK;
}

/** Per-operator data of the report. */
typedef struct opinfo {
  int node, dim;
  eop_fit all[2][3];
} opinfo;

int pt_eop_report(ecg_graph *g, const pt_eop_opts *o, FILE *f, ecg_err *e) {
  profile pr[2] = {{{0}}};
  char here[256];
  ecg_cpu_name(here, sizeof here);
  ECG_TRY(profile_load(o->profiles[0], &pr[0], o->foreign ? NULL : here, e));
  int rc = profile_load(o->profiles[1], &pr[1], o->foreign ? NULL : here, e);
  if (rc) { profile_free(&pr[0]); return rc; }
  int nn = (int)g->n_nodes, *order = malloc(sizeof(int) * (size_t)(nn + 1)), *pos = malloc(sizeof(int) * (size_t)(nn + 1));
  int *producer = malloc(sizeof(int) * (g->n_tensors + 1)), *preds = malloc(sizeof(int) * (size_t)(nn * 8 + 1));
  eop_op *ops = calloc((size_t)nn + 1, sizeof *ops);
  opinfo *info = calloc((size_t)nn + 1, sizeof *info);
  double *alpha = malloc(sizeof(double) * (size_t)(nn + 1)), *eop_alpha = malloc(sizeof(double) * (size_t)(nn + 1));
  if (!order || !pos || !producer || !preds || !ops || !info || !alpha || !eop_alpha) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (!rc) rc = ecg_topo_order(g, order, e);
  int m = 0, skipped = 0, np = 0;
  if (!rc) {
    ecg_producers(g, producer);
    for (int i = 0; i < nn; i++) pos[i] = -1;
    for (int k = 0; k < nn && !rc; k++) {
      const ecg_node *n = g->nodes[order[k]];
      char sig[512];
      pt_op_signature(g, n, sig, sizeof sig);
      int64_t od[ECG_MAX_RANK];
      int r = n->n_outputs && n->outputs[0] >= 0 ? ecg_tensor_dims(g->tensors[n->outputs[0]], od) : -1;
      /* PatternMatch: the dimension whose best Eq. 2 time is least */
      double best_t = INFINITY;
      eop_op best_op = {0};
      opinfo bi = {.node = order[k], .dim = -1};
      for (int d = 0; d < PT_N_PLACE_DIMS; d++) { /* cols, k: profiled, never placed */
        int axis = pt_dim_axis(r, d);
        if (axis < 0 || od[axis] < 1) continue;
        eop_op cand = {.name = n->name, .extent = (double)od[axis]};
        opinfo ci = {.node = order[k], .dim = d};
        for (int dev = 0; dev < 2; dev++) cand.has[dev] = fit_of(&pr[dev], sig, d, ci.all[dev], &cand.t[dev]);
        if (!cand.has[0] && !cand.has[1]) continue;
        double a, t = eop_best_ratio(&cand, o->cm, &a);
        if (t < best_t) { best_t = t; best_op = cand; bi = ci; }
      }
      if (!isfinite(best_t)) { skipped++; continue; }
      /* predecessors among the operators kept */
      best_op.pred = preds + np;
      for (size_t i = 0; i < n->n_inputs; i++) {
        int t = n->inputs[i], p = t >= 0 ? producer[t] : -1;
        if (p >= 0 && pos[p] >= 0 && best_op.n_pred < 8) preds[np + best_op.n_pred++] = pos[p];
      }
      np += best_op.n_pred;
      pos[order[k]] = m;
      ops[m] = best_op;
      info[m++] = bi;
    }
  }
  if (!rc && m == 0) rc = ecg_errf(e, ECG_ERR_INPUT, "no operator of the graph has a sample in %s or %s (profiles of another model?)",
                                   o->profiles[0], o->profiles[1]);
  if (!rc) {
    fprintf(f, "{\"stage\": \"ecg-partition\", \"eop\": {\"devices\": [\"%s\", \"%s\"], \"objective\": \"%s\", \"cm_ms\": %g, "
               "\"operators\": %d, \"without_samples\": %d, \"strategies\": {",
            pr[0].device, pr[1].device, o->objective == EOP_SUM ? "sum" : "makespan", o->cm, m, skipped);
    for (int s = 0; s < EOP_N_STRATEGIES; s++) {
      /* the placed strategy's shares are kept (EOP, or the baseline --baseline names) */
      double t = eop_plan(ops, m, o->cm, o->objective, (eop_strategy)s, s == (int)o->placed ? eop_alpha : alpha);
      fprintf(f, "%s\"%s\": %.6g", s ? ", " : "", eop_strategy_name((eop_strategy)s), t);
    }
    bool *key = calloc((size_t)m + 1, sizeof *key);
    if (key) eop_key_ops(ops, m, 0.95, key);
    fprintf(f, "}, \"placed\": \"%s\", \"plan\": [", eop_strategy_name(o->placed));
    for (int i = 0; i < m; i++) {
      const ecg_node *n = g->nodes[info[i].node];
      fprintf(f, "%s\n  {\"node\": \"%s\", \"op\": \"%s\", \"dim\": \"%s\", \"extent\": %g, \"key\": %s, \"cpu_share\": %.2f",
              i ? "," : "", n->name, n->op_type, pt_dim_name(info[i].dim), ops[i].extent, key && key[i] ? "true" : "false",
              eop_alpha[i]);
      for (int dev = 0; dev < 2; dev++) {
        fprintf(f, ", \"%s\": ", dev ? "device" : "cpu");
        if (!ops[i].has[dev]) { fputs("null", f); continue; }
        fprintf(f, "{\"pattern\": \"%s\", \"mape\": {", eop_pattern_name(ops[i].t[dev].kind));
        for (int k = 0; k < 3; k++)
          fprintf(f, "%s\"%s\": %.4g", k ? ", " : "", eop_pattern_name((eop_pattern)k), info[i].all[dev][k].mape);
        fprintf(f, "}, \"full_ms\": %.6g}", eop_eval(&ops[i].t[dev], ops[i].extent));
      }
      fputc('}', f);
    }
    fprintf(f, "\n]}}\n");
    free(key);
    /* the EOP plan into the ECG: every planned operator's dimension and CPU share */
    for (int i = 0; !rc && i < m; i++) {
      const ecg_node *n = g->nodes[info[i].node];
      int r = ecg_tensor_rank(g->tensors[n->outputs[0]]);
      rc = ecg_placement_set(g, info[i].node, pt_dim_axis(r, info[i].dim), eop_alpha[i], pt_dim_name(info[i].dim), e);
    }
    if (ferror(f)) rc = ecg_errf(e, ECG_ERR_INPUT, "report: %s", strerror(errno));
  }
  free(order); free(pos); free(producer); free(preds); free(ops); free(info); free(alpha); free(eop_alpha);
  profile_free(&pr[0]);
  profile_free(&pr[1]);
  return rc;
}

int pt_eop_force(ecg_graph *g, double share, FILE *f, ecg_err *e) {
  int placed = 0;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    if (n->n_outputs < 1 || n->outputs[0] < 0) continue;
    const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
    if (!op || !op->flops || op->flops(g, n) <= 0) continue; /* data movement: not a key operator (as the sweeps) */
    int64_t od[ECG_MAX_RANK];
    int r = ecg_tensor_dims(g->tensors[n->outputs[0]], od), dim = -1;
    for (int d = PT_N_PLACE_DIMS - 1; d >= 0 && dim < 0; d--) { /* rows first, then batch */
      int axis = pt_dim_axis(r, d);
      if (axis >= 0 && od[axis] >= 2) dim = d;
    }
    if (dim < 0) continue;
    ECG_TRY(ecg_placement_set(g, (int)i, pt_dim_axis(r, dim), share, pt_dim_name(dim), e));
    placed++;
  }
  fprintf(f, "{\"stage\": \"ecg-partition\", \"eop\": {\"forced_share\": %g, \"placed\": %d}}\n", share, placed);
  if (ferror(f)) return ecg_errf(e, ECG_ERR_INPUT, "report: %s", strerror(errno));
  return ECG_OK;
}
