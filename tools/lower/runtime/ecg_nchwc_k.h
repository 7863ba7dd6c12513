/* ecg runtime: the NCHWc kernels for one block size, included by ecg_nchwc.c once per
 * block (NC = 8, then NC = 16) with NCV the vector type of NC floats, NCI that of NC ints, and NCS(name) the
 * name suffixed by the block. Contracts: ecg_nchwc.h. Not a public header. */

/* Unaligned vector load / store (memcpy compiles to one vmovups). */
static inline NCV NCS(ld)(const float *p) {
  NCV v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void NCS(st)(float *p, const NCV *v) { memcpy(p, v, sizeof *v); }
/* bias lanes of output block ob (zero past m, or all zero without bias). */
static inline NCV NCS(bias)(const float *bias, int m, int ob) {
  float b[NC] = {0};
  if (bias)
    for (int l = 0; l < NC && ob * NC + l < m; l++) b[l] = bias[ob * NC + l];
  return NCS(ld)(b);
}

/* The epilogue of nb output positions y[0, nb*NC) of channel block ob: + res, act, zero
 * lanes past m. */
static void NCS(epi)(float *y, const float *res, int nb, ecg_act act, int m, int ob) {
  size_t n = (size_t)nb * NC;
  if (res)
    for (size_t i = 0; i < n; i++) y[i] += res[i];
  if (act.kind == ECG_ACT_RELU)
    for (size_t i = 0; i < n; i++) y[i] = y[i] > 0 ? y[i] : 0;
  else if (act.kind == ECG_ACT_CLIP)
    for (size_t i = 0; i < n; i++) y[i] = y[i] < act.a ? act.a : y[i] > act.b ? act.b : y[i];
  else if (act.kind != ECG_ACT_NONE)
    ecg_rt1_act_apply(act, y, n);
  int live = m - ob * NC;
  if (live < NC)
    for (int j = 0; j < nb; j++)
      for (int l = live; l < NC; l++) y[(size_t)j * NC + l] = 0;
}

#define NC_OWB 8 /* output columns per register block */
#define NC_PG 4  /* max pooling: output positions per group of independent chains */

/* One output row oy of output channel block ob of image b, group-1 convolution. */
static void NCS(conv_row)(const ecg_conv_params *p, const float *x, const float *pw, const float *bias,
                          const float *res, float *y, int b, int ob, int oy) {
  int cbi = (p->c + NC - 1) / NC, cbo = (p->m + NC - 1) / NC;
  int kh = p->kh, kw = p->kw, w = p->w, sw = p->sw, dw = p->dw;
  size_t orow = (((size_t)b * cbo + ob) * p->oh + oy) * (size_t)p->ow * NC;
  float *yr = y + orow;
  const float *rr = res ? res + orow : NULL;
  NCV bv = NCS(bias)(bias, p->m, ob);
  for (int ox = 0; ox < p->ow; ox += NC_OWB) {
    int nb = p->ow - ox < NC_OWB ? p->ow - ox : NC_OWB;
    int ix0 = ox * sw - p->pl;
    int inner = nb == NC_OWB && ix0 >= 0 && ix0 + (NC_OWB - 1) * sw + (kw - 1) * dw < w;
    NCV acc[NC_OWB];
    for (int j = 0; j < NC_OWB; j++) acc[j] = bv;
    for (int ib = 0; ib < cbi; ib++)
      for (int ky = 0; ky < kh; ky++) {
        int iy = oy * p->sh - p->pt + ky * p->dh;
        if (iy < 0 || iy >= p->h) continue;
        const float *xr = x + (((size_t)b * cbi + ib) * p->h + iy) * (size_t)w * NC;
        const float *wk = pw + ((((size_t)ob * cbi + ib) * kh + ky) * kw) * NC * NC;
        for (int kx = 0; kx < kw; kx++, wk += NC * NC) {
          if (inner) {
            const float *xp = xr + (size_t)(ix0 + kx * dw) * NC;
            size_t js = (size_t)sw * NC;
            for (int ic = 0; ic < NC; ic++) {
              NCV wv = NCS(ld)(wk + ic * NC);
              for (int j = 0; j < NC_OWB; j++) acc[j] += xp[j * js + ic] * wv;
            }
          } else {
            for (int j = 0; j < nb; j++) {
              int ix = (ox + j) * sw - p->pl + kx * dw;
              if (ix < 0 || ix >= w) continue;
              const float *xp = xr + (size_t)ix * NC;
              for (int ic = 0; ic < NC; ic++) acc[j] += xp[ic] * NCS(ld)(wk + ic * NC);
            }
          }
        }
      }
    for (int j = 0; j < nb; j++) NCS(st)(yr + (size_t)(ox + j) * NC, &acc[j]);
    NCS(epi)(yr + (size_t)ox * NC, rr ? rr + (size_t)ox * NC : NULL, nb, p->act, p->m, ob);
  }
}

/* One output row of channel block cb, depthwise (one filter per channel). */
static void NCS(dw_row)(const ecg_conv_params *p, const float *x, const float *pw, const float *bias,
                        const float *res, float *y, int b, int cb, int oy) {
  int cbs = (p->c + NC - 1) / NC, kh = p->kh, kw = p->kw, w = p->w, sw = p->sw, dw = p->dw;
  size_t orow = (((size_t)b * cbs + cb) * p->oh + oy) * (size_t)p->ow * NC;
  float *yr = y + orow;
  const float *rr = res ? res + orow : NULL;
  const float *xc = x + ((size_t)b * cbs + cb) * p->h * (size_t)w * NC;
  const float *wc = pw + (size_t)cb * kh * kw * NC;
  NCV bv = NCS(bias)(bias, p->m, cb);
  for (int ox = 0; ox < p->ow; ox += NC_OWB) {
    int nb = p->ow - ox < NC_OWB ? p->ow - ox : NC_OWB;
    int ix0 = ox * sw - p->pl;
    int inner = nb == NC_OWB && ix0 >= 0 && ix0 + (NC_OWB - 1) * sw + (kw - 1) * dw < w;
    NCV acc[NC_OWB];
    for (int j = 0; j < NC_OWB; j++) acc[j] = bv;
    for (int ky = 0; ky < kh; ky++) {
      int iy = oy * p->sh - p->pt + ky * p->dh;
      if (iy < 0 || iy >= p->h) continue;
      const float *xr = xc + (size_t)iy * w * NC;
      for (int kx = 0; kx < kw; kx++) {
        NCV wv = NCS(ld)(wc + ((size_t)ky * kw + kx) * NC);
        if (inner) {
          const float *xp = xr + (size_t)(ix0 + kx * dw) * NC;
          for (int j = 0; j < NC_OWB; j++) acc[j] += NCS(ld)(xp + (size_t)j * sw * NC) * wv;
        } else {
          for (int j = 0; j < nb; j++) {
            int ix = (ox + j) * sw - p->pl + kx * dw;
            if (ix >= 0 && ix < w) acc[j] += NCS(ld)(xr + (size_t)ix * NC) * wv;
          }
        }
      }
    }
    for (int j = 0; j < nb; j++) NCS(st)(yr + (size_t)(ox + j) * NC, &acc[j]);
    NCS(epi)(yr + (size_t)ox * NC, rr ? rr + (size_t)ox * NC : NULL, nb, p->act, p->m, cb);
  }
}

static void NCS(conv)(const ecg_conv_params *p, const float *x, const float *pw, const float *bias,
                      const float *res, float *y) {
  int dwc = p->group > 1;
  int cbo = (p->m + NC - 1) / NC;
  long items = (long)p->n * cbo * p->oh;
  double work = (double)items * p->ow * p->kh * p->kw * (dwc ? NC : (double)p->c * NC);
  int T = ecg_rt1_kernel_threads(work);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long it = 0; it < items; it++) {
    int oy = (int)(it % p->oh), ob = (int)(it / p->oh % cbo), b = (int)(it / p->oh / cbo);
    if (dwc)
      NCS(dw_row)(p, x, pw, bias, res, y, b, ob, oy);
    else
      NCS(conv_row)(p, x, pw, bias, res, y, b, ob, oy);
  }
}

static void NCS(pack)(const ecg_conv_params *p, const float *w, float *packed) {
  int kk = p->kh * p->kw;
  if (p->group > 1) { /* depthwise [cb][kh][kw][NC] */
    int cbs = (p->c + NC - 1) / NC;
    for (int cb = 0; cb < cbs; cb++)
      for (int k = 0; k < kk; k++)
        for (int l = 0; l < NC; l++) {
          int ch = cb * NC + l;
          packed[((size_t)cb * kk + k) * NC + l] = ch < p->c ? w[(size_t)ch * kk + k] : 0.0f;
        }
    return;
  }
  int cbi = (p->c + NC - 1) / NC, cbo = (p->m + NC - 1) / NC;
  for (int ob = 0; ob < cbo; ob++)
    for (int ib = 0; ib < cbi; ib++)
      for (int k = 0; k < kk; k++)
        for (int ic = 0; ic < NC; ic++)
          for (int oc = 0; oc < NC; oc++) {
            int o = ob * NC + oc, i = ib * NC + ic;
            packed[((((size_t)ob * cbi + ib) * kk + k) * NC + ic) * NC + oc] =
                o < p->m && i < p->c ? w[((size_t)o * p->c + i) * kk + k] : 0.0f;
          }
}

static void NCS(to)(int n, int c, int hw, const float *x, float *y) {
  int cbs = (c + NC - 1) / NC;
  long items = (long)n * cbs;
  int T = ecg_rt1_kernel_threads((double)items * hw * NC);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long it = 0; it < items; it++) {
    int cb = (int)(it % cbs), b = (int)(it / cbs), live = c - cb * NC < NC ? c - cb * NC : NC;
    float *yb = y + (size_t)it * hw * NC;
    const float *xb = x + ((size_t)b * c + (size_t)cb * NC) * hw;
    for (int i = 0; i < hw; i++)
      for (int l = 0; l < NC; l++) yb[(size_t)i * NC + l] = l < live ? xb[(size_t)l * hw + i] : 0.0f;
  }
}

static void NCS(from)(int n, int c, int hw, const float *x, float *y) {
  int cbs = (c + NC - 1) / NC;
  long items = (long)n * c;
  int T = ecg_rt1_kernel_threads((double)items * hw);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long it = 0; it < items; it++) {
    int ch = (int)(it % c), b = (int)(it / c);
    const float *xb = x + (((size_t)b * cbs + ch / NC) * hw) * NC + ch % NC;
    float *yb = y + (size_t)it * hw;
    for (int i = 0; i < hw; i++) yb[i] = xb[(size_t)i * NC];
  }
}

static void NCS(pool)(const ecg_pool_params *p, int is_max, const float *x, float *y) {
  int cbs = (p->c + NC - 1) / NC;
  long items = (long)p->n * cbs * p->oh;
  int T = ecg_rt1_kernel_threads((double)items * p->ow * p->kh * p->kw * NC);
  (void)T;
  /* row-major items: a thread takes a run of output rows of every channel block, the rows
   * of x that a team's band-major producers (conv_blocked_run) wrote on its core */
  const long planes = (long)p->n * cbs;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long it = 0; it < items; it++) {
    int oy = (int)(it / planes);
    long plane = it % planes;
    const float *xc = x + (size_t)plane * p->h * p->w * NC;
    float *yr = y + ((size_t)plane * p->oh + oy) * (size_t)p->ow * NC;
    int iy0 = oy * p->sh - p->pt, rows_in = iy0 >= 0 && iy0 + (p->kh - 1) * p->dh < p->h;
    /* max pooling over windows inside x, in vectors (the loop below selects lane by lane:
     * squeezenet1_1's 128x55x55 pool 209 -> 76 us in the model), NC_PG positions at a time,
     * each its own chain of compare-and-blend (one chain at a time: 80 against 69 us
     * standalone) */
    int lo = (p->pl + p->sw - 1) / p->sw, hi = (p->w - 1 - (p->kw - 1) * p->dw + p->pl) / p->sw + 1; /* [lo, hi) inside */
    if (!is_max || !rows_in || p->w - 1 - (p->kw - 1) * p->dw + p->pl < 0) lo = hi = 0;
    if (hi > p->ow) hi = p->ow;
    int live = p->c - (int)(plane % cbs) * NC;
    for (int ox = lo; ox < hi;) {
      const int G = hi - ox >= NC_PG ? NC_PG : 1; /* a group, or the last positions one by one */
      NCV m[NC_PG];
      for (int j = 0; j < G; j++)
        for (int l = 0; l < NC; l++) m[j][l] = -INFINITY; /* as the NCHW pool: NaN never wins */
      for (int ky = 0; ky < p->kh; ky++)
        for (int kx = 0; kx < p->kw; kx++) {
          const float *xp = xc + ((size_t)(iy0 + ky * p->dh) * p->w + (size_t)(ox * p->sw - p->pl + kx * p->dw)) * NC;
          for (int j = 0; j < G; j++) {
            NCV v = NCS(ld)(xp + (size_t)j * p->sw * NC);
            NCI gt = v > m[j]; /* lanes where v wins (-1): a compare and a blend */
            m[j] = (NCV)((gt & (NCI)v) | (~gt & (NCI)m[j]));
          }
        }
      for (int j = 0; j < G; j++) {
        for (int l = live; l < NC; l++) m[j][l] = 0.0f;
        NCS(st)(yr + (size_t)(ox + j) * NC, &m[j]);
      }
      ox += G;
    }
    for (int ox = 0; ox < p->ow; ox++) {
      if (ox >= lo && ox < hi) continue; /* written above */
      float acc[NC];
      for (int l = 0; l < NC; l++) acc[l] = is_max ? -INFINITY : 0.0f;
      int cnt = 0;
      for (int ky = 0; ky < p->kh; ky++) {
        int iy = oy * p->sh - p->pt + ky * p->dh;
        for (int kx = 0; kx < p->kw; kx++) {
          int ix = ox * p->sw - p->pl + kx * p->dw;
          if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) {
            /* count_include_pad counts positions inside the padded input */
            if (p->count_include_pad && iy < p->h + p->pb && ix < p->w + p->pr && iy >= -p->pt && ix >= -p->pl) cnt++;
            continue;
          }
          cnt++;
          const float *v = xc + ((size_t)iy * p->w + ix) * NC;
          if (is_max)
            for (int l = 0; l < NC; l++) acc[l] = v[l] > acc[l] ? v[l] : acc[l];
          else
            for (int l = 0; l < NC; l++) acc[l] += v[l];
        }
      }
      float *o = yr + (size_t)ox * NC;
      float inv = cnt ? 1.0f / (float)cnt : 0.0f;
      /* live: the block's channels, above */
      for (int l = 0; l < NC; l++) o[l] = l >= live ? 0.0f : is_max ? acc[l] : acc[l] * inv;
    }
  }
}

static void NCS(gap)(int n, int c, int hw, const float *x, float *y) {
  int cbs = (c + NC - 1) / NC;
  long items = (long)n * cbs;
  int T = ecg_rt1_kernel_threads((double)items * hw * NC);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long it = 0; it < items; it++) {
    const float *xb = x + (size_t)it * hw * NC;
    float acc[NC] = {0};
    for (int i = 0; i < hw; i++)
      for (int l = 0; l < NC; l++) acc[l] += xb[(size_t)i * NC + l];
    for (int l = 0; l < NC; l++) y[(size_t)it * NC + l] = hw ? acc[l] / (float)hw : 0.0f;
  }
}

static void NCS(add_act)(int n, int c, int hw, const float *a, const float *b, ecg_act act, float *y) {
  int cbs = (c + NC - 1) / NC;
  long items = (long)n * cbs;
  int T = ecg_rt1_kernel_threads((double)items * hw * NC);
  (void)T;
  ECG_PRAGMA(omp parallel for schedule(static) num_threads(T) if (T > 1))
  for (long it = 0; it < items; it++) {
    size_t off = (size_t)it * hw * NC, len = (size_t)hw * NC;
    if (b)
      for (size_t i = 0; i < len; i++) y[off + i] = a[off + i] + b[off + i];
    else if (y != a)
      memcpy(y + off, a + off, len * sizeof(float));
    NCS(epi)(y + off, NULL, hw, act, c, (int)(it % cbs));
  }
}

#undef NC_OWB
#undef NC_PG
