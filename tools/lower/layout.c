/* ecg-lower: global layout selection (GCD², Niu dissertation §4.4.1-4.4.2): the solvers
 * (exhaustive, frontier dynamic programming, GCD²'s partition heuristic) over the problem
 * of layout.h. */
#include "layout.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double tc_of(const lw_lsel *P, int e, int a, int b) { return P->tc[((size_t)e * P->k + a) * P->k + b]; }

double lw_lsel_cost(const lw_lsel *P, const int *choice) {
  double s = 0;
  for (int v = 0; v < P->nv; v++) s += P->cost[(size_t)v * P->k + choice[v]];
  for (int e = 0; e < P->ne; e++) s += tc_of(P, e, choice[P->src[e]], choice[P->dst[e]]);
  return s;
}

double lw_lsel_local(const lw_lsel *P, int *choice) {
  for (int v = 0; v < P->nv; v++) {
    int best = 0;
    for (int l = 1; l < P->k; l++)
      if (P->cost[(size_t)v * P->k + l] < P->cost[(size_t)v * P->k + best]) best = l;
    choice[v] = best;
  }
  return lw_lsel_cost(P, choice);
}

double lw_lsel_brute(const lw_lsel *P, int *choice) {
  double bits = P->nv * log2((double)(P->k > 1 ? P->k : 2));
  if (bits > 24) return -1;
  int *x = calloc((size_t)P->nv + 1, sizeof *x);
  if (!x) return -1;
  double best = INFINITY;
  for (int v = 0; v < P->nv; v++) choice[v] = 0;
  for (;;) {
    double c = lw_lsel_cost(P, x);
    if (c < best) {
      best = c;
      memcpy(choice, x, (size_t)P->nv * sizeof *x);
    }
    int v = 0;
    while (v < P->nv && ++x[v] == P->k) x[v++] = 0;
    if (v == P->nv) break;
  }
  free(x);
  return best;
}

/* ---------------------------------------------------------------- frontier DP */

typedef struct {
  uint64_t key; /* the frontier's layouts, base k */
  double cost;
  int parent;   /* index of the state it came from at the previous step */
  int lay;      /* the layout chosen for this step's vertex */
} dp_state;

static int by_key(const void *a, const void *b) {
  const dp_state *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->cost < y->cost ? -1 : x->cost > y->cost;
}
static int by_cost(const void *a, const void *b) {
  const dp_state *x = a, *y = b;
  return x->cost < y->cost ? -1 : x->cost > y->cost;
}

double lw_lsel_dp(const lw_lsel *P, int max_states, int *choice, int *exact) {
  int nv = P->nv, k = P->k;
  *exact = 1;
  if (nv == 0) return 0;
  if (max_states < 1) max_states = 1;
  int *last = malloc((size_t)nv * sizeof *last), *fr = malloc((size_t)(nv + 1) * sizeof *fr);
  int *nfr = malloc((size_t)(nv + 1) * sizeof *nfr), *pos = malloc((size_t)nv * sizeof *pos);
  dp_state **st = calloc((size_t)nv, sizeof *st);
  int *nst = calloc((size_t)nv, sizeof *nst);
  dp_state *cand = malloc((size_t)max_states * k * sizeof *cand);
  int *lay = malloc((size_t)(nv + 1) * sizeof *lay);
  double result = -1;
  if (!last || !fr || !nfr || !pos || !st || !nst || !cand || !lay) goto out;
  for (int v = 0; v < nv; v++) last[v] = -1;
  for (int e = 0; e < P->ne; e++)
    if (P->dst[e] > last[P->src[e]]) last[P->src[e]] = P->dst[e];
  int nf = 0; /* the frontier before step i: fr[0..nf), in ascending vertex order */
  int nprev = 1;
  dp_state root = {0, 0, -1, 0};
  const dp_state *prev = &root;
  int bits = 1;
  while ((1 << bits) < k) bits++;
  for (int i = 0; i < nv; i++) {
    for (int j = 0; j < nf; j++) pos[fr[j]] = j;
    /* the frontier after step i: fr minus those whose last use is i, plus i if used later */
    int nf2 = 0;
    for (int j = 0; j < nf; j++)
      if (last[fr[j]] > i) nfr[nf2++] = fr[j];
    if (last[i] > i) nfr[nf2++] = i;
    if (nf2 * bits > 62) goto out; /* a frontier too wide to key: refuse (-1) */
    int nc = 0;
    for (int s = 0; s < nprev; s++) {
      /* decode the previous state's layouts */
      uint64_t key = prev[s].key;
      for (int j = 0; j < nf; j++) {
        lay[j] = (int)(key & ((1u << bits) - 1));
        key >>= bits;
      }
      for (int l = 0; l < k; l++) {
        double c = prev[s].cost + P->cost[(size_t)i * k + l];
        if (c == INFINITY) continue;
        for (int e = 0; e < P->ne; e++)
          if (P->dst[e] == i) c += tc_of(P, e, lay[pos[P->src[e]]], l);
        uint64_t nk = 0;
        for (int j = nf2 - 1; j >= 0; j--) {
          int v = nfr[j], lv = v == i ? l : lay[pos[v]];
          nk = (nk << bits) | (uint64_t)lv;
        }
        cand[nc++] = (dp_state){nk, c, s, l};
      }
    }
    if (nc == 0) { /* every layout of vertex i is impossible under every state */
      result = INFINITY;
      goto out;
    }
    /* merge equal frontiers (keep the cheapest), then keep the max_states cheapest */
    qsort(cand, (size_t)nc, sizeof *cand, by_key);
    int m = 0;
    for (int c = 0; c < nc; c++)
      if (m == 0 || cand[c].key != cand[m - 1].key) cand[m++] = cand[c];
    if (m > max_states) {
      qsort(cand, (size_t)m, sizeof *cand, by_cost);
      m = max_states;
      *exact = 0;
    }
    st[i] = malloc((size_t)m * sizeof *st[i]);
    if (!st[i]) goto out;
    memcpy(st[i], cand, (size_t)m * sizeof *cand);
    nst[i] = m;
    prev = st[i];
    nprev = m;
    memcpy(fr, nfr, (size_t)nf2 * sizeof *fr);
    nf = nf2;
  }
  int best = 0;
  for (int s = 1; s < nst[nv - 1]; s++)
    if (st[nv - 1][s].cost < st[nv - 1][best].cost) best = s;
  result = st[nv - 1][best].cost;
  for (int i = nv - 1, s = best; i >= 0; i--) {
    choice[i] = st[i][s].lay;
    s = st[i][s].parent;
  }
out:
  if (st)
    for (int i = 0; i < nv; i++) free(st[i]);
  free(st); free(nst); free(last); free(fr); free(nfr); free(pos); free(cand); free(lay);
  return result;
}

/* ---------------------------------------------------------------- GCD² partitions */

enum { CUT_END = 0, CUT_ZERO, CUT_DOM, CUT_COMP };

double lw_lsel_gcd2(const lw_lsel *P, int max_part, int *choice, int *n_dominant, int *n_complementary) {
  int nv = P->nv, k = P->k;
  if (n_dominant) *n_dominant = 0;
  if (n_complementary) *n_complementary = 0;
  if (nv == 0) return 0;
  if (max_part < 1) max_part = 1;
  if (max_part * log2((double)(k > 1 ? k : 2)) > 20) return -1;
  /* cross[p]: edges from a vertex <= p to one > p; dom_src[p]: the source of the only one */
  int *cross = calloc((size_t)nv, sizeof *cross), *one = malloc((size_t)nv * sizeof *one);
  int *pstart = malloc((size_t)(nv + 1) * sizeof *pstart), *pcut = malloc((size_t)(nv + 1) * sizeof *pcut);
  int *fixed = malloc((size_t)nv * sizeof *fixed), *x = malloc((size_t)(max_part + 1) * sizeof *x);
  /* per part of the current run: for each out layout, the best assignment and its in-state */
  int *asg = malloc((size_t)nv * k * sizeof *asg), *from = malloc((size_t)(nv + 1) * k * sizeof *from);
  double *best = malloc((size_t)k * sizeof *best), *nbest = malloc((size_t)k * sizeof *nbest);
  double result = -1;
  if (!cross || !one || !pstart || !pcut || !fixed || !x || !asg || !from || !best || !nbest) goto out;
  for (int e = 0; e < P->ne; e++)
    for (int p = P->src[e]; p < P->dst[e]; p++) {
      cross[p]++;
      one[p] = e;
    }
  /* the parts */
  int np = 0;
  for (int s = 0; s < nv;) {
    int hi = s + max_part - 1 < nv - 1 ? s + max_part - 1 : nv - 1, end = -1, type = CUT_END;
    for (int p = s; p <= hi && end < 0; p++) {
      if (p == nv - 1) end = p, type = CUT_END;
      else if (cross[p] == 0) end = p, type = CUT_ZERO;
      else if (cross[p] == 1 && P->src[one[p]] == p) end = p, type = CUT_DOM;
    }
    if (end < 0) { /* a complementary cut: the fewest crossing edges, the latest such */
      end = hi;
      for (int p = hi; p >= s; p--)
        if (cross[p] < cross[end]) end = p;
      type = CUT_COMP;
    }
    pstart[np] = s;
    pcut[np++] = type;
    if (type == CUT_DOM && n_dominant) (*n_dominant)++;
    if (type == CUT_COMP && n_complementary) (*n_complementary)++;
    s = end + 1;
  }
  pstart[np] = nv;
  for (int v = 0; v < nv; v++) fixed[v] = -1;
  double total = 0; /* cost of the finalised runs */
  int run0 = 0;     /* first part of the current run */
  /* best[l]: the run so far with the last part's last vertex in l (or best[0] alone when
   * the previous cut was not dominant: nin == 1) */
  int nin = 1;
  best[0] = 0;
  for (int j = 0; j < np; j++) {
    int s = pstart[j], n = pstart[j + 1] - s, last = pstart[j + 1] - 1;
    int dom_in = j > run0 && pcut[j - 1] == CUT_DOM;
    for (int l = 0; l < k; l++) nbest[l] = INFINITY;
    for (int a = 0; a < nin; a++) {
      if (best[a] == INFINITY) continue;
      for (int v = 0; v < n; v++) x[v] = 0;
      for (;;) {
        double c = best[a];
        for (int v = 0; v < n; v++) c += P->cost[(size_t)(s + v) * k + x[v]];
        for (int e = 0; e < P->ne && c < INFINITY; e++) {
          int u = P->src[e], w = P->dst[e];
          if (w < s || w > last) continue;
          int lu = u >= s ? x[u - s] : fixed[u] >= 0 ? fixed[u] : dom_in ? a : -1;
          if (lu < 0) continue; /* cannot happen: an earlier vertex of the run crossing a non-dominant cut */
          c += tc_of(P, e, lu, x[w - s]);
        }
        int o = pcut[j] == CUT_DOM ? x[n - 1] : 0;
        if (c < nbest[o]) {
          nbest[o] = c;
          memcpy(asg + (size_t)s * k + (size_t)o * n, x, (size_t)n * sizeof *x);
          from[(size_t)j * k + o] = a;
        }
        int v = 0;
        while (v < n && ++x[v] == k) x[v++] = 0;
        if (v == n) break;
      }
    }
    nin = pcut[j] == CUT_DOM ? k : 1;
    memcpy(best, nbest, (size_t)nin * sizeof *best);
    if (pcut[j] == CUT_COMP || pcut[j] == CUT_END) { /* finalise the run: back from the best state */
      int o = 0;
      for (int l = 1; l < nin; l++)
        if (best[l] < best[o]) o = l;
      total = best[o];
      for (int q = j; q >= run0; q--) {
        int qs = pstart[q], qn = pstart[q + 1] - qs;
        memcpy(fixed + qs, asg + (size_t)qs * k + (size_t)o * qn, (size_t)qn * sizeof *fixed);
        o = from[(size_t)q * k + o];
      }
      run0 = j + 1;
      nin = 1;
      best[0] = total;
    }
  }
  memcpy(choice, fixed, (size_t)nv * sizeof *choice);
  result = lw_lsel_cost(P, choice);
out:
  free(cross); free(one); free(pstart); free(pcut); free(fixed); free(x); free(asg); free(from); free(best); free(nbest);
  return result;
}
