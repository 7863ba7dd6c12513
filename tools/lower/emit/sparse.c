/* Emitter for pattern-pruned convolutions (PatDNN, Niu dissertation §2.5): a Conv that
 * carries a pattern annotation (g->sparse_convs, built by ecg-prune) gets a kernel
 * generated for its layer (filters in FKR order; for each filter the kernels of one
 * pattern after another, each pattern's loop straight-line code with the pattern's tap
 * offsets as constants: no branch and no index decoding in the inner loop), or the CSR
 * baseline (ecg_rt1_csr_conv2d). The levels of Fig. 2.13, one generator (gen_fkw):
 *   fkr: one pass per kernel over an output tile of <= 2048 floats held in an L1 array,
 *        each tap its own load (`--sparse fkr`);
 *   lre: §2.5.4 load-redundancy elimination: a tile of R output rows x V vectors of
 *        LANES floats stays in registers across all kernels of the filter, and for each
 *        kernel every input vector (input row, column shift) is loaded once and used by
 *        every tap of the pattern and every output row of the tile that reads it (e.g.
 *        the centre column of a pattern with three vertical taps: R + 2 loads serve 3R
 *        FMAs); the tile comes from a static rule (`--sparse lre`);
 *   lre-filter: + §2.5.4 filter-level LRE (Fig. 2.11 right): the register tile spans F
 *        filters (fl_build groups them; static rule F = 2), and one load of an input vector
 *        serves the kernels of every filter of the tile at that (channel, pattern): one
 *        straight-line loop per (pattern, mask of the tile's filters) (`--sparse lre-filter`);
 *   fkw: each layer's tile, filters per tile included, measured on this machine (§2.5.5;
 *        the --sparse-tune file, JSON lines, filled by scripts/prune_layers.sh), the default.
 * model.json's "kernel_loads" counts the kernels whose input a tile loads (fewer than
 * "kernels" where a tile's filters share (channel, pattern) pairs). The FKW index arrays go into weights.bin at the widths of
 * ecg_sparse_fkw_widths (uint8/uint16/uint32), which the kernels read as such; a layer
 * with more than 256 input channels may be paged (index = channel mod 256, one stride
 * entry per pattern and page of 256 channels) when that is smaller. All levels
 * read a zero-padded copy of the input (ecg_rt1_sparse_pad, in scratch), thread over
 * tiles, and run the block's epilogue on each finished output row segment. */
#include <stdlib.h>
#include <string.h>

#include "ecg_arch.h"
#include "emit.h"
#include "jsonl.h"

#define TILE_FLOATS 2048 /* fkr: output floats per tile (the accumulators stay in L1) */
#define MAX_LANES 16     /* widest vector of an lre tile (the scratch slack assumes it) */

#define MAX_FILTERS 4  /* filters of a filter-level LRE register tile */

/* The tile of one layer: level (LW_SPARSE_FKR or LW_SPARSE_LRE) and, for lre, the
 * register tile of filters x rows x vecs vectors of lanes floats (filters > 1: filter-level
 * LRE). */
typedef struct sp_tile {
  lw_sparse_mode level;
  int lanes, rows, vecs, filters;
  int tuned; /* from the --sparse-tune file */
} sp_tile;

/* The arrays of a filter-level LRE kernel (PatDNN §2.5.4, Fig. 2.11 right) with F filters per
 * register tile, built from the FKW annotation by fl_build: the filters in FKR order cut
 * into ng = ceil(m / F) tiles of F filters (the last may hold fewer), each filled greedily
 * (fl_build). A tile's kernels are the distinct (input channel, pattern) pairs of its
 * filters, ordered by (pattern, mask) in the order up/um list them (mask bit j: the
 * tile's filter j holds a kernel there), then by channel; each carries the 4-ish weights
 * (the pattern's taps) of every filter of its mask, in j order. One input load then serves
 * the popcount(mask) filters. */
typedef struct fl_arrays {
  int F;           /* filters per tile, 2..MAX_FILTERS */
  int64_t ng;      /* tiles */
  int32_t *slot;   /* [ng * F] original output channel of the tile's filter j (0 past m: never written) */
  int32_t *goff;   /* [ng + 1] first kernel of each tile in gidx */
  int32_t *gidx;   /* [nidx] input channel of each kernel */
  int32_t *gst;    /* [ng * (nu + 1)] per tile, kernels before its (pattern, mask) number i (relative to goff) */
  int32_t *gwof;   /* [ng] first weight of each tile in gw */
  float *gw;       /* [nw] the weights (as many as the annotation's) */
  size_t nidx, nw; /* kernels (input loads per tile row: the kernel-level count minus the shared ones), weights */
  int nu;          /* (pattern, mask) pairs occurring in the layer; only they get code */
  int *up;         /* [nu] their pattern */
  unsigned *um;    /* [nu] their mask */
} fl_arrays;

static void fl_free(fl_arrays *a) {
  free(a->slot); free(a->goff); free(a->gidx); free(a->gst); free(a->gwof); free(a->gw); free(a->up); free(a->um);
  memset(a, 0, sizeof *a);
}

static const char *c_uint(int width) { return width == 1 ? "uint8_t" : width == 2 ? "uint16_t" : "uint32_t"; }

/* Put arr[n] into weights.bin as width-byte unsigned integers (every entry fits: widths
 * from ecg_sparse_fkw_widths); its C expression into buf. */
static int blob_uint(ecg_lower *L, const int32_t *arr, size_t n, int width, char *buf, size_t cap, ecg_err *e) {
  unsigned char *tmp = malloc(n * (size_t)width + 4);
  if (!tmp) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t i = 0; i < n; i++) {
    uint32_t v = (uint32_t)arr[i];
    if (width == 1) tmp[i] = (uint8_t)v;
    else if (width == 2) { uint16_t h = (uint16_t)v; memcpy(tmp + 2 * i, &h, 2); }
    else memcpy(tmp + 4 * i, &v, 4);
  }
  size_t off = lw_blob(L, tmp, n * (size_t)width);
  free(tmp);
  if (off == (size_t)-1) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  snprintf(buf, cap, "((const %s *)(ctx->w + %zu))", c_uint(width), off);
  return ECG_OK;
}

static int blob_f32(ecg_lower *L, const float *arr, size_t n, char *buf, size_t cap, ecg_err *e) {
  size_t off = lw_blob(L, arr, n * sizeof *arr);
  if (off == (size_t)-1) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  snprintf(buf, cap, "((const float *)(ctx->w + %zu))", off);
  return ECG_OK;
}

/* ------------------------------------------------------------------ tuning file */

int lw_sparse_tune_load(ecg_lower *L, const char *path, ecg_err *e) {
  FILE *f = fopen(path, "r");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: cannot read the --sparse-tune file", path);
  char hcpu[256], cpu[256], isa[32], kind[32], dev[32], sig[1024];
  const char *hisa;
  int hthreads, lineno = 0, rc = ECG_OK, cap = 0;
  ecg_host_key(hcpu, sizeof hcpu, &hisa, &hthreads);
  char *line = NULL;
  size_t lcap = 0;
  while (rc == ECG_OK && getline(&line, &lcap, f) > 0) {
    lineno++;
    if (line[strspn(line, " \t\r\n")] == 0) continue;
    double th, la, ro, ve, ms;
    if (!jsonl_str(line, "cpu", cpu, sizeof cpu) || !jsonl_str(line, "isa", isa, sizeof isa) || !jsonl_num(line, "threads", &th) ||
        !jsonl_str(line, "signature", sig, sizeof sig) || !jsonl_str(line, "kind", kind, sizeof kind)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: not a measured-cost record (needs cpu, isa, threads, kind, signature)", path, lineno);
      break;
    }
    if (strcmp(kind, "sparse_conv")) continue;
    char loop[8] = "reg";
    if (jsonl_str(line, "loop", loop, sizeof loop) && strcmp(loop, "reg") && strcmp(loop, "l1")) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: loop '%s' (expected reg or l1)", path, lineno, loop);
      break;
    }
    if (!strcmp(loop, "l1")) la = 0, ro = ve = 1; /* the fkr loop order: accumulators in an L1 tile */
    if ((strcmp(loop, "l1") && (!jsonl_num(line, "lanes", &la) || !jsonl_num(line, "rows", &ro) || !jsonl_num(line, "vecs", &ve) ||
                                (la != 8 && la != 16) || ro < 1 || ro > 8 || ve < 1 || ve > 8)) || !jsonl_num(line, "ms", &ms) || !(ms >= 0)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: a sparse_conv record needs ms >= 0 and, unless its loop is l1, lanes (8 or 16), rows (1-8) and vecs (1-8)",
                    path, lineno);
      break;
    }
    double fi = 1;
    if (jsonl_num(line, "filters", &fi) && (strcmp(loop, "reg") || fi < 1 || fi > 4 || fi != (int)fi)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: filters (filters per register tile) must be 1 to 4, in a record whose loop is reg", path, lineno);
      break;
    }
    if (jsonl_str(line, "device", dev, sizeof dev) && strcmp(dev, "cpu")) continue;
    if (strcmp(cpu, hcpu) || strcmp(isa, hisa) || (int)th != hthreads) continue;
    if (L->n_tune == cap) {
      cap = cap ? 2 * cap : 32;
      lw_sparse_tune *nt = realloc(L->tune, sizeof *nt * (size_t)cap);
      if (!nt) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      L->tune = nt;
    }
    char *s = strdup(sig);
    if (!s) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    L->tune[L->n_tune++] = (lw_sparse_tune){s, (int)la, (int)ro, (int)ve, (int)fi, ms};
  }
  free(line);
  fclose(f);
  return rc;
}

void lw_sparse_tune_free(ecg_lower *L) {
  for (int i = 0; i < L->n_tune; i++) free(L->tune[i].sig);
  free(L->tune);
  L->tune = NULL;
  L->n_tune = 0;
}

/* The layer's signature in the tuning file: shapes, geometry and sparsity. */
static void layer_sig(const int64_t *xd, const int64_t *od, const int64_t *k, const int64_t *st, const int64_t *dl,
                      const ecg_sparse_conv *s, char *buf, size_t cap) {
  snprintf(buf, cap, "SparseConv[%lldx%lldx%lldx%lld>%lldx%lldx%lldx%lld|k=%lldx%lld,s=%lldx%lld,d=%lldx%lld|kernels=%zu,patterns=%zu]",
           (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3], (long long)od[0], (long long)od[1], (long long)od[2],
           (long long)od[3], (long long)k[0], (long long)k[1], (long long)st[0], (long long)st[1], (long long)dl[0], (long long)dl[1],
           s->n_index, s->n_patterns);
}

/* The tile of a layer: forced (--sparse-tile), the fastest measured (fkw), or the static
 * rule: 16 lanes (8 when a row has at most 8 outputs), as many vectors as cover 32
 * columns, 4 rows, 1 filter (2 for lre-filter). Rows and vecs are clamped to the output,
 * filters to the layer's m. */
static sp_tile pick_tile(const ecg_lower *L, const char *sig, int64_t oh, int64_t ow, int64_t m) {
  sp_tile t = {L->sparse == LW_SPARSE_FKR ? LW_SPARSE_FKR : LW_SPARSE_LRE, ow <= 8 ? 8 : 16, 4, 0, L->sparse == LW_SPARSE_LRE_FILTER ? 2 : 1, 0};
  int64_t cols = ow < 32 ? ow : 32;
  t.vecs = (int)((cols + t.lanes - 1) / t.lanes);
  if (L->tile_force[0]) {
    t.lanes = L->tile_force[0]; t.rows = L->tile_force[1]; t.vecs = L->tile_force[2];
    if (L->tile_force[3]) t.filters = L->tile_force[3];
  } else if (L->sparse == LW_SPARSE_FKW) {
    double best = -1;
    for (int i = 0; i < L->n_tune; i++)
      if (!strcmp(L->tune[i].sig, sig) && (best < 0 || L->tune[i].ms < best)) {
        best = L->tune[i].ms;
        t.tuned = 1;
        if (L->tune[i].lanes == 0) t.level = LW_SPARSE_FKR; /* the l1 loop order measured fastest */
        else {
          t.level = LW_SPARSE_LRE; t.lanes = L->tune[i].lanes; t.rows = L->tune[i].rows; t.vecs = L->tune[i].vecs;
          t.filters = L->tune[i].filters;
        }
      }
  }
  if (t.filters > m) t.filters = (int)m;
  if (t.rows > oh) t.rows = (int)oh;
  while (t.vecs > 1 && (int64_t)(t.vecs - 1) * t.lanes >= ow) t.vecs--;
  return t;
}

/* ------------------------------------------------------------------ generator */

/* Taps of pattern mask: (kernel row, kernel column) pairs, row-major. */
static int pattern_taps(uint32_t mask, const int64_t *k, int *kr, int *kc) {
  int nt = 0;
  for (int64_t q = 0; q < k[0] * k[1] && q < 32; q++)
    if (mask >> q & 1u) { kr[nt] = (int)(q / k[1]); kc[nt] = (int)(q % k[1]); nt++; }
  return nt;
}

static void pattern_pic(uint32_t mask, const int64_t *k, char *pic) {
  int pc = 0;
  for (int64_t q = 0; q < k[0] * k[1] && q < 32; q++) {
    if (q && q % k[1] == 0) pic[pc++] = '/';
    pic[pc++] = (mask >> q & 1u) ? 'x' : '.';
  }
  pic[pc] = 0;
}

/* The LRE body of one pattern for nj filters of a register tile (§2.5.4, Fig. 2.11): every
 * distinct input vector (input row u*sh + kr*dh of the tile, column shift kc*dw, vector v) is
 * loaded once and feeds every (filter, output row u, tap) that reads it: kernel-level LRE
 * across the taps and rows of one kernel, filter-level LRE across the kernels of the tile's
 * filters js[0..nj-1] at the same channel and pattern. Filter js[jj]'s accumulators are
 * a<j>_<u>_<v>, its weights w[jj * nt + i] (the caller's w). */
static void gen_lre_pattern(sbuf *b, const sp_tile *t, const int *kr, const int *kc, int nt, const int *js, int nj, const int64_t *st,
                            const int64_t *dl, int64_t wp) {
  int R = t->rows, V = t->vecs, LN = t->lanes;
  int maxrow = (R - 1) * (int)st[0], maxcol = 0;
  for (int i = 0; i < nt; i++) {
    if (kr[i] * (int)dl[0] + (R - 1) * (int)st[0] > maxrow) maxrow = kr[i] * (int)dl[0] + (R - 1) * (int)st[0];
    if (kc[i] * (int)dl[1] > maxcol) maxcol = kc[i] * (int)dl[1];
  }
  for (int jj = 0; jj < nj; jj++)
    for (int i = 0; i < nt; i++) sb_printf(b, "        const float w%d_%d = w[%d];\n", jj, i, jj * nt + i);
  for (int row = 0; row <= maxrow; row++)
    for (int col = 0; col <= maxcol; col++) {
      int users = 0;
      for (int i = 0; i < nt; i++)
        for (int u = 0; u < R; u++) users += u * (int)st[0] + kr[i] * (int)dl[0] == row && kc[i] * (int)dl[1] == col;
      if (!users) continue;
      for (int v = 0; v < V; v++) {
        long long off = (long long)row * wp + col + (long long)v * LN * st[1];
        if (st[1] == 1) sb_printf(b, "        { ecg_spv%d x; memcpy(&x, xc + %lld, sizeof x);", LN, off);
        else if (st[1] == 2) sb_printf(b, "        { ecg_spv%d x; ECG_SP_EVEN%d(x, xc + %lld);", LN, LN, off);
        else sb_printf(b, "        { ecg_spv%d x; for (int l = 0; l < %d; l++) x[l] = xc[%lld + l * %lld];", LN, LN, off, (long long)st[1]);
        if (users * nj > 1) sb_printf(b, " ECG_SP_KEEP%d(x);", LN);
        for (int jj = 0; jj < nj; jj++)
          for (int i = 0; i < nt; i++)
            for (int u = 0; u < R; u++)
              if (u * (int)st[0] + kr[i] * (int)dl[0] == row && kc[i] * (int)dl[1] == col)
                sb_printf(b, " a%d_%d_%d += w%d_%d * x;", js[jj], u, v, jj, i);
        sb_printf(b, " }\n");
      }
    }
}

/* The loop over the kernels of stride entry i (pattern i of a filter; for filter-level LRE,
 * the i-th (pattern, filter mask) of a tile's filters), each step advancing w by step
 * weights (k0, st, w in scope); with pages > 1 one loop per page pg of 256 input channels
 * (index = channel mod 256). */
static void loop_head(sbuf *b, int pages, size_t i, int step) {
  if (pages > 1)
    sb_printf(b, "    for (int pg = 0; pg < %d; pg++)\n    for (size_t k = k0 + st[%zu + pg]; k < k0 + st[%zu + pg]; k++, w += %d) {\n", pages,
              i * (size_t)pages, i * (size_t)pages + 1, step);
  else sb_printf(b, "    for (size_t k = k0 + st[%zu]; k < k0 + st[%zu]; k++, w += %d) {\n", i, i + 1, step);
}

/* The head of a loop in a layer kernel over the kernels of pattern p (stride entry i; mask:
 * the tile's filters that hold them, 0 for the one filter of a kernel-level kernel, which
 * reads each kernel's nt weights, else nt per filter of the mask): its comment, the loop
 * (loop_head) and `const float *xc = xb + channel * PL` left open for the caller to end;
 * fills the pattern's taps, returns their number. */
static int pattern_head(sbuf *b, const ecg_sparse_conv *s, int pages, const int64_t *k, size_t p, size_t i, unsigned mask, int *kr,
                        int *kc) {
  int nt = pattern_taps(s->patterns[p], k, kr, kc);
  char pic[64];
  pattern_pic(s->patterns[p], k, pic);
  sb_printf(b, "    /* pattern %zu: %s", p, pic);
  for (int j = 0; mask && j < MAX_FILTERS; j++)
    if (mask >> j & 1u) sb_printf(b, "%s%d", mask & ((1u << j) - 1) ? ", " : "; filters of the tile: ", j);
  sb_printf(b, " */\n");
  loop_head(b, pages, i, nt * (mask ? __builtin_popcount(mask) : 1));
  sb_printf(b, "      const float *xc = xb + %s * PL", pages > 1 ? "((size_t)idx[k] + (size_t)pg * 256)" : "(size_t)idx[k]");
  return nt;
}

/* The kernel of one layer into L->decls as `static void fkw<u>(...)`. */
static void gen_fkw(ecg_lower *L, int u, const ecg_sparse_conv *s, const sp_tile *t, const ecg_fkw_widths *wd, const fl_arrays *fa,
                    const int64_t *od,
                    const int64_t *k, const int64_t *st, const int64_t *dl, int64_t wp, int64_t hp) {
  sbuf *b = &L->decls;
  int64_t m = od[1], oh = od[2], ow = od[3];
  size_t np = s->n_patterns;
  int ntap0 = __builtin_popcount(s->patterns[0]);
  char wfirst[64];
  if (wd->wof) snprintf(wfirst, sizeof wfirst, "wof[%s]", t->level == LW_SPARSE_FKR ? "f" : "g");
  else snprintf(wfirst, sizeof wfirst, "(size_t)k0 * %d", ntap0);
  if (t->level == LW_SPARSE_LRE && !L->sparse_types) {
    sb_printf(b, "/* vectors of the pattern-sparse LRE kernels (GCC/Clang vector extensions: one AVX-512 register,\n"
                 " * two AVX2 or four NEON registers for 16 lanes) */\n"
                 "typedef float ecg_spv8 __attribute__((vector_size(32)));\ntypedef float ecg_spv16 __attribute__((vector_size(64)));\n"
                 "/* ECG_SP_KEEPn(x): x (a loaded input vector) stays in its register for every tap and output row that\n"
                 " * reads it (LRE); without it GCC folds each use into an FMA's memory operand and reloads it (x86: one\n"
                 " * register holds the vector only with AVX-512 for 16 lanes, AVX for 8; elsewhere a no-op) */\n"
                 "#if defined(__GNUC__) && defined(__AVX512F__)\n#define ECG_SP_KEEP16(x) __asm__(\"\" : \"+v\"(x))\n#else\n#define ECG_SP_KEEP16(x) ((void)0)\n#endif\n"
                 "#if defined(__GNUC__) && defined(__AVX__)\n#define ECG_SP_KEEP8(x) __asm__(\"\" : \"+x\"(x))\n#else\n#define ECG_SP_KEEP8(x) ((void)0)\n#endif\n"
                 "/* ECG_SP_EVENn(p): the n floats p[0], p[2], ..., p[2n-2] (stride-2 convs): two loads and a shuffle */\n"
                 "#if defined(__clang__) || __GNUC__ >= 12\n"
                 "#define ECG_SP_EVEN8(x, p) do { ecg_spv8 lo_, hi_; memcpy(&lo_, (p), 32); memcpy(&hi_, (p) + 8, 32); \\\n"
                 "  x = __builtin_shufflevector(lo_, hi_, 0, 2, 4, 6, 8, 10, 12, 14); } while (0)\n"
                 "#define ECG_SP_EVEN16(x, p) do { ecg_spv16 lo_, hi_; memcpy(&lo_, (p), 64); memcpy(&hi_, (p) + 16, 64); \\\n"
                 "  x = __builtin_shufflevector(lo_, hi_, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); } while (0)\n"
                 "#else\n#define ECG_SP_EVEN8(x, p) do { for (int l_ = 0; l_ < 8; l_++) x[l_] = (p)[2 * l_]; } while (0)\n"
                 "#define ECG_SP_EVEN16(x, p) do { for (int l_ = 0; l_ < 16; l_++) x[l_] = (p)[2 * l_]; } while (0)\n#endif\n\n");
    L->sparse_types = 1;
  }
  sb_printf(b, "/* FKW pattern-sparse conv (PatDNN): %lld filters, %zu kernels, %zu patterns; ", (long long)m, s->n_index, np);
  if (t->level == LW_SPARSE_FKR) sb_printf(b, "fkr: tiles of <= %d outputs in an L1 array%s */\n", TILE_FLOATS, t->tuned ? " (tuned)" : "");
  else if (!fa) sb_printf(b, "lre: register tiles of %d rows x %d vectors of %d floats%s */\n", t->rows, t->vecs, t->lanes, t->tuned ? " (tuned)" : "");
  else sb_printf(b, "lre-filter: register tiles of %d filters x %d rows x %d vectors of %d floats%s; %zu kernel loads for %zu kernels */\n",
                 fa->F, t->rows, t->vecs, t->lanes, t->tuned ? " (tuned)" : "", fa->nidx, s->n_index);
  sb_printf(b, "static void fkw%d(const ecg_conv_params *p, const float *xp, const float *wt, const %s *off, const %s *reo,\n"
               "                  const %s *idx, const %s *str, const %s *wof, const float *bias, float *y) {\n",
            u, c_uint(wd->offset), c_uint(wd->reorder), c_uint(wd->index), c_uint(wd->stride), c_uint(wd->wof ? wd->wof : 4));
  if (!wd->wof) sb_printf(b, "  (void)wof; /* every pattern has %d taps: a filter's weights start at off[f] * %d */\n", ntap0, ntap0);
  sb_printf(b, "  const size_t PL = (size_t)%lld * %lld;\n", (long long)hp, (long long)wp);
  if (t->level == LW_SPARSE_FKR) {
    int64_t rb = TILE_FLOATS / ow;
    if (rb < 1) rb = 1;
    if (rb > oh) rb = oh;
    int64_t nrb = (oh + rb - 1) / rb;
    sb_printf(b, "  enum { M = %lld, OH = %lld, OW = %lld, RB = %lld, NRB = %lld };\n"
                 "#pragma omp parallel for schedule(dynamic, 1)\n"
                 "  for (int t = 0; t < M * NRB; t++) {\n"
                 "    const int f = t / NRB, y0 = (t %% NRB) * RB, ny = OH - y0 < RB ? OH - y0 : RB, o = reo[f];\n"
                 "    float acc[RB * OW];\n    const float b = bias ? bias[o] : 0.f;\n"
                 "    for (int i = 0; i < ny * OW; i++) acc[i] = b;\n"
                 "    const %s *st = str + (size_t)f * %zu;\n    const size_t k0 = off[f];\n    const float *w = wt + %s;\n"
                 "    const float *xb = xp;\n",
              (long long)m, (long long)oh, (long long)ow, (long long)rb, (long long)nrb, c_uint(wd->stride), np * wd->pages + 1, wfirst);
    for (size_t p = 0; p < np; p++) {
      int kr[32], kc[32], nt = pattern_head(b, s, wd->pages, k, p, p, 0, kr, kc);
      sb_printf(b, " + (size_t)y0 * %lld;\n", (long long)(st[0] * wp));
      for (int i = 0; i < nt; i++) sb_printf(b, "      const float w%d = w[%d];\n", i, i);
      sb_printf(b, "      for (int yy = 0; yy < ny; yy++) {\n        const float *xr = xc + (size_t)yy * %lld;\n        float *a = acc + yy * OW;\n"
                   "#pragma omp simd\n        for (int ox = 0; ox < OW; ox++) a[ox] +=",
                (long long)(st[0] * wp));
      for (int i = 0; i < nt; i++)
        sb_printf(b, "%s w%d * xr[%lld + ox * %lld]", i ? " +" : "", i, (long long)(kr[i] * dl[0] * wp + kc[i] * dl[1]), (long long)st[1]);
      sb_printf(b, ";\n      }\n    }\n");
    }
    sb_printf(b, "    float *yo = y + ((size_t)o * OH + y0) * OW;\n    memcpy(yo, acc, (size_t)ny * OW * sizeof *yo);\n"
                 "    ecg_rt1_act_apply(p->act, yo, (size_t)ny * OW);\n  }\n}\n\n");
    return;
  }
  int R = t->rows, V = t->vecs, LN = t->lanes, F = fa ? fa->F : 1;
  int64_t tw = (int64_t)V * LN, nry = (oh + R - 1) / R, ncx = (ow + tw - 1) / tw, ng = (m + F - 1) / F;
  /* a task: the R output rows of the tile's F filters (reo[g * F + j], j < nf; F = 1:
   * kernel-level LRE only), column chunk after chunk; the epilogue runs once on each
   * filter's R full rows (contiguous in y) */
  sb_printf(b, "  enum { M = %lld, F = %d, NG = %lld, OH = %lld, OW = %lld, R = %d, TW = %lld, NRY = %lld, NCX = %lld };\n"
               "#pragma omp parallel for schedule(static)\n"
               "  for (int t = 0; t < NG * NRY; t++) {\n"
               "    const int g = t / NRY, y0 = t %% NRY * R, ny = OH - y0 < R ? OH - y0 : R, nf = M - g * F < F ? M - g * F : F;\n"
               "    (void)nf;\n"
               "    const %s *st = str + (size_t)g * %zu;\n    const size_t k0 = off[g];\n",
            (long long)m, F, (long long)ng, (long long)oh, (long long)ow, R, (long long)tw, (long long)nry, (long long)ncx, c_uint(wd->stride),
            fa ? (size_t)fa->nu + 1 : np * (size_t)wd->pages + 1);
  for (int j = 0; j < F; j++) { /* reo has NG * F entries: a missing filter's (j >= nf) is a valid channel, never written */
    char cond[32] = "";
    if (j) snprintf(cond, sizeof cond, " && %d < nf", j);
    sb_printf(b, "    const int o%d = reo[g * F + %d];\n    const ecg_spv%d b%d = (ecg_spv%d){0} + (bias%s ? bias[o%d] : 0.f);\n"
                 "    float *yr%d = y + ((size_t)o%d * OH + y0) * OW;\n",
              j, j, LN, j, LN, cond, j, j, j);
  }
  sb_printf(b, "    for (int x0 = 0; x0 < OW; x0 += TW) {\n    ecg_spv%d", LN);
  for (int j = 0; j < F; j++)
    for (int uu = 0; uu < R; uu++)
      for (int v = 0; v < V; v++) sb_printf(b, "%s a%d_%d_%d = b%d", j || uu || v ? "," : "", j, uu, v, j);
  sb_printf(b, ";\n    const float *w = wt + %s;\n"
               "    const float *xb = xp + (size_t)y0 * %lld + (size_t)x0 * %lld;\n",
            fa ? "wof[g]" : wfirst, (long long)(st[0] * wp), (long long)st[1]);
  size_t nloops = fa ? (size_t)fa->nu : np;
  for (size_t i = 0; i < nloops; i++) {
    size_t p = fa ? (size_t)fa->up[i] : i;
    unsigned mask = fa ? fa->um[i] : 0;
    int kr[32], kc[32], js[MAX_FILTERS] = {0}, nj = fa ? 0 : 1;
    for (int j = 0; j < F && fa; j++)
      if (mask >> j & 1u) js[nj++] = j;
    int nt = pattern_head(b, s, fa ? 1 : wd->pages, k, p, i, mask, kr, kc);
    sb_printf(b, ";\n");
    gen_lre_pattern(b, t, kr, kc, nt, js, nj, st, dl, wp);
    sb_printf(b, "    }\n");
  }
  /* store the valid rows and columns of the chunk of each filter; the epilogue once on
   * each filter's rows */
  sb_printf(b, "    float ob[R][TW];\n    const int nx = OW - x0 < TW ? OW - x0 : TW;\n");
  for (int j = 0; j < F; j++) {
    sb_printf(b, j ? "    if (%d < nf) {\n" : "    {\n", j);
    for (int uu = 0; uu < R; uu++)
      for (int v = 0; v < V; v++) sb_printf(b, "    memcpy(&ob[%d][%d], &a%d_%d_%d, sizeof a%d_%d_%d);\n", uu, v * LN, j, uu, v, j, uu, v);
    sb_printf(b, "    for (int r = 0; r < ny; r++) memcpy(yr%d + (size_t)r * OW + x0, ob[r], (size_t)nx * sizeof *yr%d);\n    }\n", j, j);
  }
  sb_printf(b, "    }\n");
  for (int j = 0; j < F; j++)
    sb_printf(b, j ? "    if (%d < nf) ecg_rt1_act_apply(p->act, yr%d, (size_t)ny * OW);\n" : "    ecg_rt1_act_apply(p->act, yr%d, (size_t)ny * OW);\n", j, j);
  sb_printf(b, "  }\n}\n\n");
}

/* Kernels of filter r whose (channel, pattern) also occurs in filter r + 1 (FKR order):
 * the loads a filter-level LRE over pairs of adjacent filters could share. */
static int64_t shared_kernels(const ecg_sparse_conv *s, int64_t c) {
  size_t np = s->n_patterns, m = s->n_reorder;
  int *pat = malloc(((size_t)c + 1) * sizeof *pat);
  if (!pat) return -1;
  int64_t shared = 0;
  for (size_t r = 0; r + 1 < m; r++) {
    for (int64_t ci = 0; ci < c; ci++) pat[ci] = -1;
    for (size_t p = 0; p < np; p++)
      for (int32_t q = s->offset[r + 1] + s->stride[(r + 1) * (np + 1) + p]; q < s->offset[r + 1] + s->stride[(r + 1) * (np + 1) + p + 1]; q++)
        pat[s->index[q]] = (int)p;
    for (size_t p = 0; p < np; p++)
      for (int32_t q = s->offset[r] + s->stride[r * (np + 1) + p]; q < s->offset[r] + s->stride[r * (np + 1) + p + 1]; q++)
        shared += pat[s->index[q]] == (int)p;
  }
  free(pat);
  return shared;
}

#define FL_WINDOW 32 /* fl_build: the candidates for a tile's next filter, in FKR order */

static int uint_width(int64_t maxval) { return maxval < 256 ? 1 : maxval < 65536 ? 2 : 4; }

/* Fill a (fl_arrays) for F filters per register tile from annotation s of a conv with m
 * filters and c input channels. Tile g starts with the first filter in FKR order not yet in
 * a tile; each next member is, among the next FL_WINDOW filters not yet in a tile, the one
 * with the most kernels whose (channel, pattern) the tile already holds (ties: the first),
 * the filter similarity of FKR (§2.5.2) counted at identical positions; FKR order keeps
 * filters of equal length together, so a tile's filters also do similar work. The weights
 * are s's, regrouped. Errors: ECG_ERR_INTERNAL (out of memory; a is then empty). */
static int fl_build(const ecg_sparse_conv *s, int64_t m, int64_t c, int F, fl_arrays *a, ecg_err *e) {
  size_t np = s->n_patterns, nm = ((size_t)1 << F) - 1;
  memset(a, 0, sizeof *a);
  a->F = F;
  a->ng = (m + F - 1) / F;
  int64_t ng = a->ng;
  int32_t *pat = malloc((size_t)(m * c) * sizeof *pat), *wo = malloc((size_t)(m * c) * sizeof *wo);
  int32_t *gcnt = calloc((size_t)ng * np * nm, sizeof *gcnt);
  unsigned char *inmask = calloc((size_t)c * np, 1), *taken = calloc((size_t)m, 1);
  int *nt = malloc(np * sizeof *nt);
  a->slot = malloc((size_t)(ng * F) * sizeof *a->slot);
  a->goff = malloc((size_t)(ng + 1) * sizeof *a->goff);
  a->gidx = malloc(s->n_index * sizeof *a->gidx + 4);
  a->gwof = malloc((size_t)ng * sizeof *a->gwof);
  a->gw = malloc(s->n_weight * sizeof *a->gw + 4);
  a->up = malloc(np * nm * sizeof *a->up);
  a->um = malloc(np * nm * sizeof *a->um);
  int rc = ECG_OK;
  if (!pat || !wo || !gcnt || !inmask || !taken || !nt || !a->slot || !a->goff || !a->gidx || !a->gwof || !a->gw || !a->up || !a->um)
    rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc == ECG_OK) {
    /* per FKR position and channel: the kernel's pattern (-1: none) and first weight */
    for (size_t p = 0; p < np; p++) nt[p] = __builtin_popcount(s->patterns[p]);
    for (int64_t q = 0; q < m * c; q++) pat[q] = -1;
    int32_t wi = 0;
    for (int64_t r = 0; r < m; r++)
      for (size_t p = 0; p < np; p++)
        for (int32_t q = s->stride[r * (int64_t)(np + 1) + (int64_t)p]; q < s->stride[r * (int64_t)(np + 1) + (int64_t)p + 1]; q++) {
          int64_t ci = s->index[s->offset[r] + q];
          pat[r * c + ci] = (int32_t)p;
          wo[r * c + ci] = wi;
          wi += nt[p];
        }
    int64_t next = 0;
    size_t nk = 0, nw = 0;
    for (int64_t g = 0; g < ng; g++) {
      int64_t mem[MAX_FILTERS];
      int nf = 0;
      while (taken[next]) next++;
      for (int64_t cand = next; nf < F && cand >= 0;) {
        mem[nf] = cand;
        taken[cand] = 1;
        for (int64_t ci = 0; ci < c; ci++)
          if (pat[cand * c + ci] >= 0) inmask[ci * (int64_t)np + pat[cand * c + ci]] |= (unsigned char)(1u << nf);
        nf++;
        int64_t best = -1, bs = -1;
        for (int64_t r = next + 1, seen = 0; nf < F && r < m && seen < FL_WINDOW; r++) {
          if (taken[r]) continue;
          seen++;
          int64_t sc = 0;
          for (int64_t ci = 0; ci < c; ci++) sc += pat[r * c + ci] >= 0 && inmask[ci * (int64_t)np + pat[r * c + ci]];
          if (sc > bs) bs = sc, best = r;
        }
        cand = best;
      }
      for (int j = 0; j < F; j++) a->slot[g * F + j] = j < nf ? s->reorder[mem[j]] : 0;
      a->goff[g] = (int32_t)nk;
      a->gwof[g] = (int32_t)nw;
      for (size_t p = 0; p < np; p++)
        for (size_t mask = 1; mask <= nm; mask++)
          for (int64_t ci = 0; ci < c; ci++) {
            if (inmask[ci * (int64_t)np + (int64_t)p] != mask) continue;
            a->gidx[nk++] = (int32_t)ci;
            for (int j = 0; j < nf; j++)
              if (mask >> j & 1u) {
                memcpy(a->gw + nw, s->weight + wo[mem[j] * c + ci], (size_t)nt[p] * sizeof *a->gw);
                nw += (size_t)nt[p];
              }
            gcnt[((size_t)g * np + p) * nm + mask - 1]++;
          }
      for (int64_t ci = 0; ci < c * (int64_t)np; ci++) inmask[ci] = 0;
    }
    a->goff[ng] = (int32_t)nk;
    a->nidx = nk;
    a->nw = nw;
    /* the (pattern, mask) pairs of the layer, and each tile's prefix counts over them */
    for (size_t i = 0; i < np * nm; i++) {
      int any = 0;
      for (int64_t g = 0; g < ng && !any; g++) any = gcnt[(size_t)g * np * nm + i] > 0;
      if (any) { a->up[a->nu] = (int)(i / nm); a->um[a->nu++] = (unsigned)(i % nm + 1); }
    }
    a->gst = malloc((size_t)ng * ((size_t)a->nu + 1) * sizeof *a->gst + 4);
    if (!a->gst) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (int64_t g = 0; rc == ECG_OK && g < ng; g++) {
      int32_t run = 0, *gs = a->gst + g * (a->nu + 1);
      for (int i = 0; i < a->nu; i++) {
        gs[i] = run;
        run += gcnt[((size_t)g * np + (size_t)a->up[i]) * nm + a->um[i] - 1];
      }
      gs[a->nu] = run;
    }
  }
  free(pat); free(wo); free(gcnt); free(inmask); free(taken); free(nt);
  if (rc) fl_free(a);
  return rc;
}

/* Put fa's arrays into weights.bin at the narrowest widths (their C expressions into
 * a0..a5: weights, goff, slot, gidx, gst, gwof; the widths into wd) and return their index
 * bytes (the weights not counted), or -1 with e set (out of memory). */
static int64_t fl_blob(ecg_lower *L, const fl_arrays *fa, int64_t m, int64_t c, ecg_fkw_widths *wd, char (*a)[96], ecg_err *e) {
  int32_t maxst = 0;
  for (int64_t g = 0; g < fa->ng; g++)
    if (fa->gst[g * (fa->nu + 1) + fa->nu] > maxst) maxst = fa->gst[g * (fa->nu + 1) + fa->nu];
  *wd = (ecg_fkw_widths){uint_width((int64_t)fa->nidx), uint_width(m - 1), uint_width(c - 1), uint_width(maxst), uint_width((int64_t)fa->nw), 1};
  size_t nst = (size_t)fa->ng * ((size_t)fa->nu + 1);
  int rc = blob_f32(L, fa->gw, fa->nw, a[0], 96, e);
  if (!rc) rc = blob_uint(L, fa->goff, (size_t)fa->ng + 1, wd->offset, a[1], 96, e);
  if (!rc) rc = blob_uint(L, fa->slot, (size_t)(fa->ng * fa->F), wd->reorder, a[2], 96, e);
  if (!rc) rc = blob_uint(L, fa->gidx, fa->nidx, wd->index, a[3], 96, e);
  if (!rc) rc = blob_uint(L, fa->gst, nst, wd->stride, a[4], 96, e);
  if (!rc) rc = blob_uint(L, fa->gwof, (size_t)fa->ng, wd->wof, a[5], 96, e);
  if (rc) return -1;
  return (fa->ng + 1) * wd->offset + fa->ng * fa->F * wd->reorder + (int64_t)fa->nidx * wd->index + (int64_t)nst * wd->stride + fa->ng * wd->wof;
}

int emit_conv_sparse(ecg_lower *L, const ecg_node *n, int si, ecg_err *e) {
  const ecg_sparse_conv *s = L->g->sparse_convs[si];
  int64_t xd[ECG_MAX_RANK], od[ECG_MAX_RANK], k[2], st[2], dl[2], pd[4];
  ecg_conv_geom gm;
  int r = lw_dims(L, n->inputs[0], xd);
  lw_dims(L, n->outputs[0], od);
  ECG_TRY(lw_geom_2d(L, n, e, &gm, k, st, dl, pd));
  if (r != 4 || gm.group != 1 || od[3] > TILE_FLOATS)
    return lw_node_err(L, n, e, "a pattern-annotated Conv must be 2-D, group 1, with output rows of at most %d (lower with --sparse dense)", TILE_FLOATS);
  int64_t hp = (od[2] - 1) * st[0] + (k[0] - 1) * dl[0] + 1, wp = (od[3] - 1) * st[1] + (k[1] - 1) * dl[1] + 1;
  int64_t m = od[1], c = xd[1], kk = k[0] * k[1];
  int u = lw_conv_params_decl(L, r, xd, od, m, k, st, dl, pd, 1);
  char buf[128], cpr[32], bias[200] = "NULL", a0[96], a1[96], a2[96], a3[96], a4[96], a5[96] = "NULL", sig[512], lb[256];
  layer_sig(xd, od, k, st, dl, s, sig, sizeof sig);
  sp_tile t = pick_tile(L, sig, od[2], od[3], m);
  fl_arrays fa = {0}; /* filter-level LRE (t.filters > 1) */
  /* scratch: the padded input, plus the slack the lre tiles read past the last plane
   * (rows of a partial row block, columns of a partial vector: read, never stored) */
  int64_t plane = c * hp * wp, need = plane;
  if (L->sparse != LW_SPARSE_CSR && t.level == LW_SPARSE_LRE) {
    int64_t nry = (od[2] + t.rows - 1) / t.rows, tw = (int64_t)t.vecs * t.lanes, ncx = (od[3] + tw - 1) / tw;
    need = (c - 1) * hp * wp + ((nry * t.rows - 1) * st[0] + (k[0] - 1) * dl[0]) * wp + (ncx * tw - 1) * st[1] + (k[1] - 1) * dl[1] + 1 + st[1];
    if (need < plane) need = plane;
  }
  snprintf(buf, sizeof buf, "%lld", (long long)need);
  lw_need_scratch(L, buf);
  if (n->n_inputs > 2 && n->inputs[2] >= 0) snprintf(bias, sizeof bias, "%s", lw_ptr(L, n->inputs[2]));
  lw_conv_params_ref(L, u, cpr, sizeof cpr);
  int64_t idx_bytes = 0;
  if (L->sparse != LW_SPARSE_CSR && t.level == LW_SPARSE_LRE && t.filters > 1) {
    ecg_fkw_widths wd;
    char fb[6][96];
    ECG_TRY(fl_build(s, m, c, t.filters, &fa, e));
    idx_bytes = fl_blob(L, &fa, m, c, &wd, fb, e);
    if (idx_bytes < 0) { fl_free(&fa); return ECG_ERR_INTERNAL; }
    memcpy(a0, fb[0], 96); memcpy(a1, fb[1], 96); memcpy(a2, fb[2], 96); memcpy(a3, fb[3], 96); memcpy(a4, fb[4], 96); memcpy(a5, fb[5], 96);
    gen_fkw(L, u, s, &t, &wd, &fa, od, k, st, dl, wp, hp);
  } else if (L->sparse != LW_SPARSE_CSR) {
    size_t np = s->n_patterns;
    ecg_fkw_widths wd;
    ecg_sparse_fkw_widths(s, c, &wd);
    idx_bytes = ecg_sparse_fkw_index_bytes(s, c);
    int rc = blob_f32(L, s->weight, s->n_weight, a0, sizeof a0, e);
    if (!rc) rc = blob_uint(L, s->offset, s->n_offset, wd.offset, a1, sizeof a1, e);
    if (!rc) rc = blob_uint(L, s->reorder, s->n_reorder, wd.reorder, a2, sizeof a2, e);
    if (!rc && wd.pages > 1) { /* index = channel mod 256; stride per (pattern, page) */
      size_t G = (size_t)wd.pages, ns = (size_t)m * (np * G + 1);
      int32_t *ix = malloc(s->n_index * sizeof *ix + 4), *sp = malloc(ns * sizeof *sp + 4);
      if (!ix || !sp) { free(ix); free(sp); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
      for (size_t q = 0; q < s->n_index; q++) ix[q] = s->index[q] & 255;
      for (int64_t f = 0; f < m; f++) {
        const int32_t *sf = s->stride + f * (int64_t)(np + 1);
        int32_t *df = sp + (size_t)f * (np * G + 1);
        for (size_t p = 0; p < np; p++)
          for (size_t g = 0; g < G; g++) { /* the group's channels ascend: page g starts at its first channel >= 256 g */
            int32_t q = sf[p];
            while (q < sf[p + 1] && s->index[s->offset[f] + q] < (int32_t)(256 * g)) q++;
            df[p * G + g] = q;
          }
        df[np * G] = sf[np];
      }
      rc = blob_uint(L, ix, s->n_index, 1, a3, sizeof a3, e);
      if (!rc) rc = blob_uint(L, sp, ns, wd.stride, a4, sizeof a4, e);
      free(ix); free(sp);
    } else {
      if (!rc) rc = blob_uint(L, s->index, s->n_index, wd.index, a3, sizeof a3, e);
      if (!rc) rc = blob_uint(L, s->stride, s->n_stride, wd.stride, a4, sizeof a4, e);
    }
    if (!rc && wd.wof) { /* first weight of each reordered filter: the layer mixes pattern sizes */
      int32_t *wof = malloc((size_t)m * sizeof *wof + 4);
      if (!wof) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      int32_t run = 0;
      for (int64_t f = 0; f < m; f++) {
        wof[f] = run;
        for (size_t p = 0; p < np; p++)
          run += (s->stride[f * (np + 1) + p + 1] - s->stride[f * (np + 1) + p]) * __builtin_popcount(s->patterns[p]);
      }
      rc = blob_uint(L, wof, (size_t)m, wd.wof, a5, sizeof a5, e);
      free(wof);
    }
    ECG_TRY(rc);
    gen_fkw(L, u, s, &t, &wd, NULL, od, k, st, dl, wp, hp);
  } else { /* CSR of the dense weight, filters in their own order */
    const float *w = (const float *)L->g->tensors[n->inputs[1]]->data.data;
    int32_t *rowptr = malloc(((size_t)m + 1) * sizeof *rowptr), *col = malloc((size_t)(m * c * kk) * sizeof *col + 4);
    float *val = malloc((size_t)(m * c * kk) * sizeof *val + 4);
    int rc = rowptr && col && val ? ECG_OK : ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    size_t nz = 0;
    for (int64_t f = 0; rc == ECG_OK && f < m; f++) {
      rowptr[f] = (int32_t)nz;
      for (int64_t q = 0; q < c * kk; q++)
        if (w[f * c * kk + q] != 0.0f) { col[nz] = (int32_t)q; val[nz++] = w[f * c * kk + q]; }
    }
    if (rc == ECG_OK) rowptr[m] = (int32_t)nz;
    if (!rc) rc = blob_uint(L, rowptr, (size_t)m + 1, 4, a1, sizeof a1, e);
    if (!rc) rc = blob_uint(L, col, nz, 4, a2, sizeof a2, e);
    if (!rc) rc = blob_f32(L, val, nz, a0, sizeof a0, e);
    idx_bytes = ((int64_t)m + 1) * 4 + (int64_t)nz * 4;
    free(rowptr); free(col); free(val);
    ECG_TRY(rc);
  }
  L->n_sparse++;
  /* model.json "sparse_layers": what this layer got */
  sb_printf(&L->sparse_json, "%s{\"node\": ", L->sparse_json.len ? ", " : "");
  lw_json_str(&L->sparse_json, ecg_node_label(L->g, n, lb, sizeof lb));
  sb_printf(&L->sparse_json, ", \"signature\": ");
  lw_json_str(&L->sparse_json, sig);
  if (L->sparse == LW_SPARSE_CSR) sb_printf(&L->sparse_json, ", \"level\": \"csr\"");
  else if (t.level == LW_SPARSE_FKR) sb_printf(&L->sparse_json, ", \"level\": \"fkr\", \"tuned\": %s", t.tuned ? "true" : "false");
  else sb_printf(&L->sparse_json, ", \"level\": \"%s\", \"lanes\": %d, \"rows\": %d, \"vecs\": %d, \"filters\": %d, \"tuned\": %s",
                 t.filters > 1 ? "lre-filter" : "lre", t.lanes, t.rows, t.vecs, t.filters, t.tuned ? "true" : "false");
  /* kernel loads per tile row: one per kernel (kernel level), one per (channel, pattern) of a tile (filter level) */
  if (L->sparse != LW_SPARSE_CSR && t.level == LW_SPARSE_LRE)
    sb_printf(&L->sparse_json, ", \"kernel_loads\": %zu", t.filters > 1 ? fa.nidx : s->n_index);
  fl_free(&fa);
  sb_printf(&L->sparse_json, ", \"index_bytes\": %lld, \"shared_kernels\": %lld, \"kernels\": %zu}", (long long)idx_bytes,
            (long long)shared_kernels(s, c), s->n_index);
  const char *x = lw_ptr(L, n->inputs[0]);
  sb_printf(&L->code, "  for (int img = 0; img < %lld; img++) {\n    ecg_rt1_sparse_pad(&cp%d, %s + (size_t)img * %lld, ctx->scratch, %lld, %lld);\n",
            (long long)xd[0], u, x, (long long)(c * xd[2] * xd[3]), (long long)hp, (long long)wp);
  if (need > plane) /* the slack is read (never stored): keep it defined */
    sb_printf(&L->code, "    memset(ctx->scratch + %lld, 0, %lld * sizeof(float));\n", (long long)plane, (long long)(need - plane));
  const char *y = lw_ptr(L, n->outputs[0]);
  if (L->sparse != LW_SPARSE_CSR)
    sb_printf(&L->code, "    fkw%d(%s, ctx->scratch, %s, %s, %s, %s, %s, %s, %s, %s + (size_t)img * %lld);\n  }\n", u, cpr, a0, a1, a2, a3,
              a4, a5, bias, y, (long long)(m * od[2] * od[3]));
  else
    sb_printf(&L->code, "    ecg_rt1_csr_conv2d(%s, ctx->scratch, %lld, %lld, (const int *)%s, (const int *)%s, %s, %s, %s + (size_t)img * %lld);\n  }\n",
              cpr, (long long)hp, (long long)wp, a1, a2, a0, bias, y, (long long)(m * od[2] * od[3]));
  return ECG_OK;
}
