/* ecg-lower: the strided loop-nest generator every index-map kernel is built from
 * (lower.h lw_loops). DNNFusion §3.4.4: One-to-One, Reorganize, Shuffle and
 * One-to-Many operators are index maps from output to input coordinates. */
#include <stdio.h>
#include <string.h>

#include "lower.h"

/* Parallelise loop nests above this many elements. */
#define PAR_MIN 32768

int64_t lw_strides(int rank, const int64_t *dims, int64_t *st) {
  int64_t n = 1;
  for (int d = rank - 1; d >= 0; d--) {
    st[d] = n;
    n *= dims[d];
  }
  return n;
}

void lw_bcast_strides(int ro, const int64_t *odims, int ri, const int64_t *idims, int64_t *st) {
  int64_t s = 1;
  for (int d = ro - 1; d >= 0; d--) {
    int id = d - (ro - ri);
    if (id < 0) { st[d] = 0; continue; }
    st[d] = (idims[id] == 1 && odims[d] != 1) ? 0 : s;
    s *= idims[id];
  }
}

void lw_par_for(ecg_lower *L, int indent, const char *var, int64_t n, int64_t work, int64_t threshold) {
  char ns[32], ws[32];
  snprintf(ns, sizeof ns, "%lld", (long long)n);
  snprintf(ws, sizeof ws, "%lld", (long long)work);
  if (L->target == LW_TARGET_OPENCL) lw_cl_work(L, n);
  lw_par_for_expr(L, indent, var, ns, ws, threshold);
}

void lw_par_for_expr(ecg_lower *L, int indent, const char *var, const char *n, const char *work, int64_t threshold) {
  sbuf *c = &L->code;
  if (L->target == LW_TARGET_OPENCL) {
    sb_printf(c, "%*sfor (int64_t %s = get_global_id(0); %s < %s; %s += get_global_size(0)) {\n", indent, "", var, var, n, var);
    return;
  }
  sb_printf(c, "%*s#pragma omp parallel for if(%s > %lld)\n", indent, "", work, (long long)threshold);
  sb_printf(c, "%*sfor (int64_t %s = 0; %s < %s; %s++) {\n", indent, "", var, var, n, var);
}

void lw_inner_pragma(ecg_lower *L, sbuf *c, int ind, const char *base) {
  const ecg_schedule *s = L->target == LW_TARGET_C ? L->sched : NULL;
  if (s && s->unroll > 0 && !strcmp(base, "omp simd")) {
    sb_printf(c, "%*s#pragma GCC ivdep\n%*s#pragma GCC unroll %d\n", ind, "", ind, "", s->unroll);
    L->sched_used |= LW_SCHED_SIMD;
  } else if (s && s->vector_width > 0) {
    sb_printf(c, "%*s#pragma %s simdlen(%d)\n", ind, "", base, s->vector_width);
    L->sched_used |= LW_SCHED_SIMD;
  } else
    sb_printf(c, "%*s#pragma %s\n", ind, "", base);
}

void lw_loops(ecg_lower *L, int rank, const int64_t *dims, int n_ops,
              int64_t strides[][ECG_MAX_RANK], const int64_t *base, const char *body, int parallel) {
  int64_t D[ECG_MAX_RANK], S[LW_MAX_OPS][ECG_MAX_RANK];
  int r = 0;
  int64_t numel = 1;
  for (int d = 0; d < rank; d++) numel *= dims[d];
  if (numel == 0) return;
  /* drop unit dims, merge mergeable neighbours */
  for (int d = 0; d < rank; d++) {
    if (dims[d] == 1) continue;
    if (r > 0) {
      int ok = 1;
      for (int k = 0; k < n_ops; k++)
        if (S[k][r - 1] != strides[k][d] * dims[d]) ok = 0;
      if (ok) {
        D[r - 1] *= dims[d];
        for (int k = 0; k < n_ops; k++) S[k][r - 1] = strides[k][d];
        continue;
      }
    }
    D[r] = dims[d];
    for (int k = 0; k < n_ops; k++) S[k][r] = strides[k][d];
    r++;
  }
  sbuf *c = &L->code;
  int u = lw_uid(L);
  if (L->target == LW_TARGET_OPENCL) {
    /* OpenCL printer: the same index space as a grid-stride loop over get_global_id(0); each
     * work-item recovers its coordinates by division and each operand's offset from them */
    lw_cl_work(L, numel);
    sb_printf(c, "  for (int64_t g%d = get_global_id(0); g%d < %lld; g%d += get_global_size(0)) {\n    int64_t q%d = g%d;\n", u, u,
              (long long)numel, u, u, u);
    for (int l = r - 1; l >= 0; l--) {
      if (l) sb_printf(c, "    const int64_t i%d_%d = q%d %% %lld; q%d /= %lld;\n", u, l, u, (long long)D[l], u, (long long)D[l]);
      else sb_printf(c, "    const int64_t i%d_0 = q%d;\n", u, u);
    }
    for (int k = 0; k < n_ops; k++) {
      sb_printf(c, "    const int64_t o%d = %lld", k, (long long)(base ? base[k] : 0));
      for (int l = 0; l < r; l++)
        if (S[k][l]) sb_printf(c, " + i%d_%d * %lld", u, l, (long long)S[k][l]);
      sb_printf(c, ";\n");
    }
    sb_printf(c, "    %s\n  }\n", body);
    return;
  }
  sb_printf(c, "  {\n");
  if (r == 0) {
    sb_printf(c, "    ");
    for (int k = 0; k < n_ops; k++) sb_printf(c, "const int64_t o%d = %lld; ", k, (long long)(base ? base[k] : 0));
    sb_printf(c, "\n    %s\n  }\n", body);
    return;
  }
  for (int l = 0; l < r; l++) {
    int ind = 4 + 2 * l;
    int inner = l == r - 1;
    if (l == 0 && parallel && numel >= PAR_MIN && S[0][0] != 0) {
      if (inner) lw_inner_pragma(L, c, ind, "omp parallel for simd");
      else sb_printf(c, "%*s#pragma omp parallel for\n", ind, "");
    } else if (inner && S[0][l] != 0)
      lw_inner_pragma(L, c, ind, "omp simd");
    sb_printf(c, "%*sfor (int64_t i%d_%d = 0; i%d_%d < %lld; i%d_%d++) {\n", ind, "", u, l, u, l, (long long)D[l], u, l);
    sb_printf(c, "%*s", ind + 2, "");
    for (int k = 0; k < n_ops; k++) {
      const char *name = inner ? "o" : "a";
      if (l == 0)
        sb_printf(c, "const int64_t %s%d%s = %lld + i%d_%d * %lld; ", name, k, inner ? "" : "_0", (long long)(base ? base[k] : 0), u, l, (long long)S[k][l]);
      else
        sb_printf(c, "const int64_t %s%d%s%.0d = a%d_%d + i%d_%d * %lld; ", name, k, inner ? "" : "_", inner ? 0 : l, k, l - 1, u, l, (long long)S[k][l]);
    }
    sb_printf(c, "\n");
  }
  sb_printf(c, "%*s%s\n", 4 + 2 * r, "", body);
  for (int l = r - 1; l >= 0; l--) sb_printf(c, "%*s}\n", 4 + 2 * l, "");
  sb_printf(c, "  }\n");
}

/* One loop nest of lw_dloops_st: the outer loops perfectly nested (collapsed into one
 * parallel space when par), the offsets of the outer coordinates at the top of the
 * innermost loop's body. */
static void dloops_nest(ecg_lower *L, sbuf *c, int u, int r, int n_ops, const int *keep, const int *grp,
                        const char *const st[][ECG_MAX_RANK], const char *const *base, const char *body, int simd, int par) {
  int ind = 4 + 2 * (r - 1);
  for (int l = 0; l < r; l++) {
    int in = 4 + 2 * l, inner = l == r - 1;
    if (par && l == 0 && inner) lw_inner_pragma(L, c, in, simd ? "omp parallel for simd" : "omp parallel for");
    else if (par && l == 0 && r > 2) sb_printf(c, "%*s#pragma omp parallel for collapse(%d)\n", in, "", r - 1);
    else if (par && l == 0) sb_printf(c, "%*s#pragma omp parallel for\n", in, "");
    if (inner && l > 0) {
      sb_printf(c, "%*s", in, "");
      for (int k = 0; k < n_ops; k++) {
        sb_printf(c, "const int64_t a%d = %s", k, base && base[k] ? base[k] : "0");
        for (int q = 0; q < l; q++) if (st[k][keep[grp[q + 1] - 1]]) sb_printf(c, " + i%d_%d * S%d_%d_%d", u, q, u, k, q);
        sb_printf(c, "; ");
      }
      sb_printf(c, "\n");
    }
    if (inner && simd && !(par && l == 0)) lw_inner_pragma(L, c, in, "omp simd");
    sb_printf(c, "%*sfor (int64_t i%d_%d = 0; i%d_%d < D%d_%d; i%d_%d++) {\n", in, "", u, l, u, l, u, l, u, l);
  }
  sb_printf(c, "%*s", ind + 2, "");
  for (int k = 0; k < n_ops; k++) {
    char sx[64] = "0";
    if (st[k][keep[grp[r] - 1]]) snprintf(sx, sizeof sx, "S%d_%d_%d", u, k, r - 1);
    if (r > 1) sb_printf(c, "const int64_t o%d = a%d + i%d_%d * %s; ", k, k, u, r - 1, sx);
    else sb_printf(c, "const int64_t o%d = %s + i%d_%d * %s; ", k, base && base[k] ? base[k] : "0", u, r - 1, sx);
  }
  sb_printf(c, "\n");
  sb_printf(c, "%*s%s\n", ind + 2, "", body);
  for (int l = r - 1; l >= 0; l--) sb_printf(c, "%*s}\n", 4 + 2 * l, "");
}

/* The dynamic-shape loop nest (lower.h): the same offsets o0.. as lw_loops, the extents and
 * strides C expressions over the symbol constants, computed once per call. */
void lw_dloops_st(ecg_lower *L, int out, int n_ops, const char *const st[][ECG_MAX_RANK], const char *const *base,
                  const unsigned char *merge, const char *body, int parallel) {
  const ecg_tensor *t = L->g->tensors[out];
  int rank = (int)t->n_dims, keep[ECG_MAX_RANK], grp[ECG_MAX_RANK + 1], r = 0;
  /* drop unit dims; a dim the caller lets merge joins the group of the kept dim before it */
  int nk = 0;
  for (int d = 0; d < rank; d++) if (!lw_dyn_unit(L, out, d)) keep[nk++] = d;
  for (int i = 0; i < nk; i++)
    if (!(i > 0 && merge && merge[keep[i]])) grp[r++] = i;
  grp[r] = nk;
  sbuf *c = &L->code;
  int u = lw_uid(L);
  sb_printf(c, "  {\n");
  if (r == 0) {
    sb_printf(c, "    ");
    for (int k = 0; k < n_ops; k++) sb_printf(c, "const int64_t o%d = %s; ", k, base && base[k] ? base[k] : "0");
    sb_printf(c, "\n    %s\n  }\n", body);
    return;
  }
  /* extents: the product of a group's dims; strides: along the group's innermost dim */
  for (int l = 0; l < r; l++) {
    sb_printf(c, "    const int64_t D%d_%d = 1", u, l);
    for (int i = grp[l]; i < grp[l + 1]; i++) sb_printf(c, " * %s", lw_dim(L, out, keep[i]));
    sb_printf(c, ";\n");
  }
  for (int k = 0; k < n_ops; k++)
    for (int l = 0; l < r; l++) {
      const char *x = st[k][keep[grp[l + 1] - 1]];
      if (x) sb_printf(c, "    const int64_t S%d_%d_%d = %s;\n", u, k, l, x);
    }
  sb_printf(c, "    const int64_t N%d = 1", u);
  for (int l = 0; l < r; l++) sb_printf(c, " * D%d_%d", u, l);
  sb_printf(c, ";\n    (void)N%d;\n", u);
  /* as lw_loops: the loops are parallel only where operand 0 (the store) moves along every
   * one of them, the innermost simd only where it moves along it (else a reduction); the
   * choice by size is made at run time: a parallel nest above PAR_MIN elements, else the
   * same nest serial (an OpenMP region with a false if() still costs a call and hides the
   * restrict pointers from the vectoriser) */
  int simd = st[0][keep[grp[r] - 1]] != NULL;
  for (int l = 0; l < r - 1; l++) parallel &= st[0][keep[grp[l + 1] - 1]] != NULL;
  if (r == 1) parallel &= simd; /* the one loop is the parallel one */
  if (parallel) {
    sb_printf(c, "    if (N%d >= %d) {\n", u, PAR_MIN);
    dloops_nest(L, c, u, r, n_ops, keep, grp, st, base, body, simd, 1);
    sb_printf(c, "    } else {\n");
  }
  dloops_nest(L, c, u, r, n_ops, keep, grp, st, base, body, simd, 0);
  if (parallel) sb_printf(c, "    }\n");
  sb_printf(c, "  }\n");
}

void lw_dloops(ecg_lower *L, int out, int n_ops, unsigned char real[][ECG_MAX_RANK], const char *body) {
  int rank = (int)L->g->tensors[out]->n_dims;
  static __thread char sbuf_[LW_MAX_OPS][ECG_MAX_RANK][768];
  const char *st[LW_MAX_OPS][ECG_MAX_RANK];
  unsigned char merge[ECG_MAX_RANK];
  /* operand k, row-major in its own shape (its dims the output's where it moves, 1 where it
   * stays): its stride along d is the product of the output dims after d along which it moves */
  for (int k = 0; k < n_ops; k++)
    for (int d = 0; d < rank; d++) {
      st[k][d] = NULL;
      if (!real[k][d]) continue;
      char *b = sbuf_[k][d];
      int len = snprintf(b, 768, "1");
      for (int q = d + 1; q < rank; q++)
        if (real[k][q] && !lw_dyn_unit(L, out, q) && len < 700) len += snprintf(b + len, (size_t)(768 - len), " * %s", lw_dim(L, out, q));
      st[k][d] = b;
    }
  /* neighbours along which every operand agrees (moves or stays) merge */
  int prev = -1;
  for (int d = 0; d < rank; d++) {
    merge[d] = 0;
    if (lw_dyn_unit(L, out, d)) continue;
    if (prev >= 0) {
      merge[d] = 1;
      for (int k = 0; k < n_ops; k++) merge[d] &= real[k][d] == real[k][prev];
    }
    prev = d;
  }
  lw_dloops_st(L, out, n_ops, st, NULL, merge, body, 1);
}
