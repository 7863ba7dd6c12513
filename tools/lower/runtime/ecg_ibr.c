/* Intensive fusion of an inverted-residual chain (AGO §III-B; MobileNet-V2, MNasNet,
 * EfficientNet): [pointwise conv] -> depthwise conv [-> pointwise conv] in one kernel, tiled
 * by output rows so that no element of an intermediate tensor is computed twice and the
 * expanded intermediate tensors never leave the cache (ecg_rt.h, ecg_rt1_ibr). On AVX-512,
 * expansions of whole 16-channel blocks (or of 64 channels and more) run the channel-blocked
 * kernel ecg_rt1_ibr16 (ecg_gemm.c: E and D in NCHWc16, no stride-2 permutes; measured on
 * an Intel Xeon, family 6 model 167, 1 thread, against the three convolutions run one
 * after another: mobilenet_v2's blocks 0.71-1.0 of their time, the blocks without an
 * expansion 1.0-1.07). Elsewhere the three stages run the runtime's own kernels on the
 * tile: the prepacked-weight GEMM with its in-register bias/activation epilogue for the
 * pointwise convolutions, ecg_rt1_conv2d's depthwise kernel on the tile's window of rows. */
#include <stdlib.h>
#include <string.h>

#include "ecg_rt.h"

/* Two windows + a depthwise tile. Measured on an AMD EPYC (1 MiB L2 per core, 32 MiB L3),
 * one thread, MobileNet-V2 blocks, ecg_rt1_ibr time / unfused time: 256 KiB 1.40-1.82, 1 MiB
 * 0.99-1.07, 4 MiB 0.93-1.00 (fewer, larger runtime calls; the tile still stays in L3). */
#ifndef IBR_TILE_BYTES
#define IBR_TILE_BYTES (4096 * 1024)
#endif

static int imin_(int a, int b) { return a < b ? a : b; }
static int imax_(int a, int b) { return a > b ? a : b; }

/* Output rows per tile and window rows for p. */
static void ibr_tiles(const ecg_ibr_params *p, int *R, int *RB) {
  int r = 1;
  for (int t = 2; t <= p->oh; t++) {
    size_t win = (size_t)p->cexp * (size_t)((t - 1) * p->sh + p->kh) * (size_t)p->w;
    size_t d = (size_t)p->cexp * (size_t)t * (size_t)p->ow;
    if ((2 * win + d) * sizeof(float) > IBR_TILE_BYTES) break;
    r = t;
  }
  if (p->band_rows > 0) r = imin_(p->band_rows, p->oh); /* a schedule's row tile */
  *R = r;
  *RB = (r - 1) * p->sh + p->kh;
}

/* The depthwise convolution of one tile: rows [r0, r0+rows) of E as the input image. */
static ecg_conv_params dw_tile(const ecg_ibr_params *p, int rows, int pt, int T) {
  ecg_conv_params c;
  memset(&c, 0, sizeof c);
  c.n = 1; c.c = c.m = c.group = p->cexp; c.h = rows; c.w = p->w;
  c.kh = p->kh; c.kw = p->kw; c.sh = p->sh; c.sw = p->sw; c.dh = c.dw = 1;
  c.pt = pt; c.pl = p->pl;
  c.oh = T; c.ow = p->ow;
  c.pb = imax_(0, (T - 1) * p->sh + p->kh - rows - pt);
  c.pr = imax_(0, (p->ow - 1) * p->sw + p->kw - p->w - p->pl);
  c.act = p->act2;
  return c;
}

/* A pointwise conv on a 1x1 plane: its packed weights are GEMM A panels (the layout
 * ecg_rt1_sgemm_packed_a reads), as ecg_rt1_conv2d_pack packs every conv on a plane
 * under 32 positions. */
static ecg_conv_params pw(int cin, int cout) { return ecg_rt1_conv1x1_plane(1, cin, cout, (ecg_act){ECG_ACT_NONE, 0, 0, 0, 0}); }

ecg_conv_params ecg_rt1_ibr_stem_conv(const ecg_ibr_params *p) {
  ecg_conv_params c;
  memset(&c, 0, sizeof c);
  c.n = p->n; c.c = p->cin; c.h = p->xh; c.w = p->xw; c.m = p->cexp; c.kh = p->k1h; c.kw = p->k1w;
  c.oh = p->h; c.ow = p->w; c.sh = p->s1h; c.sw = p->s1w; c.dh = c.dw = 1; c.pt = p->p1t; c.pl = p->p1l;
  c.pb = imax_(0, (p->h - 1) * p->s1h + p->k1h - p->xh - p->p1t);
  c.pr = imax_(0, (p->w - 1) * p->s1w + p->k1w - p->xw - p->p1l);
  c.group = 1; c.act = p->act1; c.algo = ECG_RT_CONV_GEMM;
  return c;
}

/* The stem conv of E rows [r0, r1) on its window of x's rows, from x row *x0 (h: the
 * window's rows; pads where the window reaches past the image). */
static ecg_conv_params stem_rows(const ecg_ibr_params *p, int r0, int r1, int *x0) {
  ecg_conv_params c = ecg_rt1_ibr_stem_conv(p);
  const int top = r0 * p->s1h - p->p1t; /* x row of the window's first tap row */
  const int a = imax_(0, top), b = imin_(p->xh, (r1 - 1) * p->s1h - p->p1t + p->k1h);
  c.n = 1; c.h = b - a; c.oh = r1 - r0; c.pt = a - top;
  c.pb = imax_(0, (r1 - 1) * p->s1h + p->k1h - c.h - c.pt);
  *x0 = a;
  return c;
}

size_t ecg_rt1_ibr_packed_floats(const ecg_ibr_params *p, int which) {
  if (ecg_rt1_ibr16_applies(p)) return ecg_rt1_ibr16_packed_floats(p, which);
  if (which == 3) return (size_t)p->cexp * p->kh * p->kw; /* the depthwise weights as given */
  if (which == 1 && p->k1h) { ecg_conv_params c = ecg_rt1_ibr_stem_conv(p); return ecg_rt1_conv2d_packed_floats(&c); }
  if (which == 1) { ecg_conv_params c = pw(p->cin, p->cexp); return ecg_rt1_conv2d_packed_floats(&c); }
  if (!p->cout) return 0; /* no W2 */
  ecg_conv_params c = pw(p->cexp, p->cout);
  return ecg_rt1_conv2d_packed_floats(&c);
}

void ecg_rt1_ibr_pack(const ecg_ibr_params *p, int which, const float *w, float *packed) {
  if (ecg_rt1_ibr16_applies(p)) {
    ecg_rt1_ibr16_pack(p, which, w, packed);
    return;
  }
  if (which == 3) {
    memcpy(packed, w, (size_t)p->cexp * p->kh * p->kw * sizeof(float));
    return;
  }
  if (which == 2 && !p->cout) return; /* no W2 */
  ecg_conv_params c = which == 1 ? (p->k1h ? ecg_rt1_ibr_stem_conv(p) : pw(p->cin, p->cexp)) : pw(p->cexp, p->cout);
  ecg_rt1_conv2d_pack(&c, w, packed);
}

/* Floats of the stem's buffers in the scratch (0 without a stem): E's new rows, then x's
 * window of rows for them; *k the stem conv's own scratch. */
static size_t stem_floats(const ecg_ibr_params *p, int RB, int threads, size_t *k) {
  *k = 0;
  if (!p->k1h) return 0;
  int x0;
  ecg_conv_params c = stem_rows(p, 0, imin_(RB, p->h), &x0);
  *k = ecg_rt1_conv2d_scratch_floats(&c, threads);
  return (size_t)p->cexp * RB * p->w + (size_t)p->cin * ((RB - 1) * p->s1h + p->k1h) * p->xw;
}

size_t ecg_rt1_ibr_scratch_floats(const ecg_ibr_params *p, int threads) {
  if (ecg_rt1_ibr16_applies(p)) return ecg_rt1_ibr16_scratch_floats(p, threads);
  int R, RB;
  ibr_tiles(p, &R, &RB);
  ecg_conv_params d = dw_tile(p, RB, p->pt, R);
  size_t k = ecg_rt1_conv2d_scratch_floats(&d, threads), g = ecg_rt1_sgemm_packed_a_scratch_floats(threads), ks;
  const size_t st = stem_floats(p, RB, threads, &ks);
  if (ks > k) k = ks;
  return 2 * (size_t)p->cexp * RB * p->w + (size_t)p->cexp * R * p->ow + st + (k > g ? k : g) + 64;
}

void ecg_rt1_ibr(const ecg_ibr_params *p, const float *x, const float *w1p, const float *b1, const float *wd,
             const float *bd, const float *w2p, const float *b2, float *y, float *scratch, long *e_rows) {
  if (ecg_rt1_ibr16_applies(p)) {
    ecg_rt1_ibr16(p, x, w1p, b1, wd, bd, w2p, b2, y, scratch, e_rows);
    return;
  }
  int R, RB;
  ibr_tiles(p, &R, &RB);
  const int H = p->h, W = p->w, OH = p->oh, OW = p->ow, CE = p->cexp;
  float *win[2] = {scratch, scratch + (size_t)CE * RB * W};
  size_t ks;
  float *D = win[1] + (size_t)CE * RB * W, *st = D + (size_t)CE * R * OW, *kscr = st + stem_floats(p, RB, 1, &ks);
  float *sx = st + (size_t)CE * RB * W; /* the stem's window of x's rows */
  const size_t XHW = p->k1h ? (size_t)p->xh * p->xw : (size_t)H * W; /* floats of a channel of x */
  for (int img = 0; img < p->n; img++) {
    const float *xi = x + (size_t)img * p->cin * XHW;
    float *yi = y + (size_t)img * (p->cout ? p->cout : CE) * OH * OW;
    int cur = 0, have_lo = 0, have_hi = 0; /* win[cur] holds E rows [have_lo, have_hi) */
    for (int oy0 = 0; oy0 < OH; oy0 += R) {
      const int oy1 = imin_(OH, oy0 + R), T = oy1 - oy0;
      const int lo = imax_(0, oy0 * p->sh - p->pt), hi = imin_(H, (oy1 - 1) * p->sh - p->pt + p->kh);
      const int rows = hi - lo, nxt = cur ^ 1;
      float *w = win[nxt];
      /* rows this tile shares with the previous one: carried over, not recomputed */
      const int keep_lo = imax_(lo, have_lo), keep_hi = imin_(hi, have_hi);
      for (int c = 0; keep_hi > keep_lo && c < CE; c++)
        memcpy(w + ((size_t)c * rows + (keep_lo - lo)) * W, win[cur] + ((size_t)c * (have_hi - have_lo) + (keep_lo - have_lo)) * W,
               sizeof(float) * (size_t)(keep_hi - keep_lo) * W);
      const int new_lo = keep_hi > keep_lo ? keep_hi : lo;
      if (new_lo < hi) { /* E rows [new_lo, hi) */
        float *e = w + (size_t)(new_lo - lo) * W;
        if (p->k1h) { /* the stem conv of rows [new_lo, hi) on a copy of its window of x's rows */
          int x0;
          ecg_conv_params c = stem_rows(p, new_lo, hi, &x0);
          for (int ci = 0; ci < p->cin; ci++)
            memcpy(sx + (size_t)ci * c.h * p->xw, xi + ((size_t)ci * p->xh + x0) * p->xw, sizeof(float) * (size_t)c.h * p->xw);
          ecg_rt1_conv2d(&c, sx, w1p, b1, st, kscr);
          for (int ce = 0; ce < CE; ce++)
            memcpy(e + (size_t)ce * rows * W, st + (size_t)ce * (hi - new_lo) * W, sizeof(float) * (size_t)(hi - new_lo) * W);
        } else if (w1p)
          ecg_rt1_sgemm_packed_a(CE, (hi - new_lo) * W, p->cin, w1p, xi + (size_t)new_lo * W, H * W, b1, p->act1, e, rows * W, kscr);
        else
          for (int c = 0; c < CE; c++)
            memcpy(e + (size_t)c * rows * W, xi + ((size_t)c * H + new_lo) * W, sizeof(float) * (size_t)(hi - new_lo) * W);
        if (e_rows) *e_rows += hi - new_lo;
      }
      cur = nxt; have_lo = lo; have_hi = hi;
      /* depthwise over the window: output rows [oy0, oy1) */
      ecg_conv_params d = dw_tile(p, rows, imax_(0, p->pt - oy0 * p->sh), T);
      if (!p->cout && T == OH) { /* no W2, one tile: the depthwise conv writes y */
        ecg_rt1_conv2d(&d, w, wd, bd, yi, kscr);
        continue;
      }
      ecg_rt1_conv2d(&d, w, wd, bd, D, kscr);
      if (!p->cout) { /* no W2: D's rows are y's */
        for (int c = 0; c < CE; c++) memcpy(yi + (size_t)c * OH * OW + (size_t)oy0 * OW, D + (size_t)c * T * OW, sizeof(float) * (size_t)T * OW);
        continue;
      }
      /* pointwise: y rows [oy0, oy1) of every output channel */
      ecg_rt1_sgemm_packed_a(p->cout, T * OW, CE, w2p, D, T * OW, b2, p->act3, yi + (size_t)oy0 * OW, OH * OW, kscr);
    }
  }
}
