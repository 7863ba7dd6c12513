/* Emitters for the data-dependent selection operators (format/ops/select.c):
 * NonMaxSuppression and Unique (Many-to-Many).
 *
 * The output sizes that depend on the data are static here (the model's declared
 * shapes); each kernel zero-fills its outputs and writes at most that many rows, so a
 * run whose data yields more selects is truncated and one that yields fewer leaves
 * zeros.  Scalar operands that are graph inputs (NMS thresholds and limit) are read at
 * run time. */
#include <string.h>

#include "../lower.h"
#include "emit.h"


static int has_input(const ecg_node *n, size_t i) { return n->n_inputs > i && n->inputs[i] >= 0; }
static int has_output(const ecg_node *n, size_t i) { return n->n_outputs > i && n->outputs[i] >= 0; }
static int dtype_of(const ecg_lower *L, int id) { return L->g->tensors[id]->dtype; }
static long long LL(int64_t v) { return (long long)v; }

static int is_real(int dt) { return dt == ECG_FLOAT || dt == ECG_DOUBLE; }
static int is_plain(int dt) {
  return dt != ECG_FLOAT16 && dt != ECG_BFLOAT16 && dt != ECG_STRING && dt != ECG_COMPLEX64 &&
         dt != ECG_COMPLEX128 && ecg_dtype_ctype(dt) && ecg_dtype_size(dt) > 0;
}

/* Stable merge sort of the int64 positions a[0..cnt) (scratch b of the same size),
 * `before` a C condition true when position R must precede position L (strictly):
 * equal keys keep their order; `before` is C statements setting int bf_ from L_ and R_.
 * Leaves the sorted run in *a. */
static void emit_merge_sort(sbuf *c, const char *cnt, const char *before) {
  sb_printf(c, "      for (int64_t w = 1; w < %s; w *= 2) {\n", cnt);
  sb_printf(c, "        for (int64_t lo = 0; lo < %s; lo += 2 * w) {\n", cnt);
  sb_printf(c, "          int64_t mid = lo + w < %s ? lo + w : %s, hi = lo + 2 * w < %s ? lo + 2 * w : %s;\n", cnt, cnt, cnt, cnt);
  sb_printf(c, "          int64_t i = lo, j = mid, t = lo;\n");
  sb_printf(c, "          while (i < mid && j < hi) { int64_t L_ = a[i], R_ = a[j]; int bf_; %s b[t++] = bf_ ? (j++, R_) : (i++, L_); }\n", before);
  sb_printf(c, "          while (i < mid) b[t++] = a[i++];\n          while (j < hi) b[t++] = a[j++];\n        }\n");
  sb_printf(c, "        int64_t *tmp = a; a = b; b = tmp;\n      }\n");
}

/** NonMaxSuppression: boxes [B,N,4], scores [B,C,N] -> selected_indices int64 [M,3].
 *  Per (batch, class): the boxes with score > score_threshold (when given; as the ONNX
 *  reference) sorted by score descending (ties: lower box index first), then greedily
 *  kept unless their IoU with a kept box is > iou_threshold (default 0), at most
 *  max_output_boxes_per_class (default 0) per class.  center_point_box 0: [y1,x1,y2,x2]
 *  any diagonal corners; 1: [x_center, y_center, width, height].  Rows past M dropped. */
int emit_nms(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int bx = n->inputs[0], scr = n->inputs[1], out = n->outputs[0];
  if (!is_real(dtype_of(L, bx)) || !is_real(dtype_of(L, scr)))
    return lw_node_err(L, n, e, "boxes/scores dtype other than float/double is not supported");
  for (size_t i = 2; i < 5; i++)
    if (has_input(n, i) && !is_plain(dtype_of(L, n->inputs[i]))) return lw_node_err(L, n, e, "scalar operand dtype not supported");
  int64_t bd[ECG_MAX_RANK], sd[ECG_MAX_RANK], od[2];
  lw_dims(L, bx, bd);
  lw_dims(L, scr, sd);
  lw_dims(L, out, od);
  int64_t B = bd[0], N = bd[1], C = sd[1], M = od[0];
  if (sd[0] != B || sd[2] != N || bd[2] != 4 || od[1] != 3) return lw_node_err(L, n, e, "inconsistent shapes are not supported");
  int center = ecg_attr_i(n, "center_point_box", 0) != 0;
  char sz[64];
  snprintf(sz, sizeof sz, "%lld", LL(6 * (N > 0 ? N : 1))); /* three int64 arrays of N, in floats */
  lw_need_scratch(L, sz);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *bx = %s;\n", lw_ctype(L, bx), lw_ptr(L, bx));
  sb_printf(c, "    const %s *sc = %s;\n", lw_ctype(L, scr), lw_ptr(L, scr));
  sb_printf(c, "    int64_t *y = %s, m = 0;\n    memset(y, 0, %zu);\n", lw_ptr(L, out), L->t[out].bytes);
  if (has_input(n, 2)) sb_printf(c, "    int64_t maxo = (int64_t)%s[0];\n", lw_ptr(L, n->inputs[2]));
  else sb_printf(c, "    int64_t maxo = 0;\n");
  if (has_input(n, 3)) sb_printf(c, "    double iou_t = (double)%s[0];\n", lw_ptr(L, n->inputs[3]));
  else sb_printf(c, "    double iou_t = 0.0;\n");
  if (has_input(n, 4)) sb_printf(c, "    double st = (double)%s[0]; const int has_st = 1;\n", lw_ptr(L, n->inputs[4]));
  else sb_printf(c, "    double st = 0.0; const int has_st = 0;\n");
  sb_printf(c, "    int64_t *pa = (int64_t *)ctx->scratch, *pb = pa + %lld, *sel = pb + %lld;\n", LL(N), LL(N));
  sb_printf(c, "    for (int64_t bc = 0; bc < %lld && maxo > 0; bc++) {\n", LL(B * C));
  sb_printf(c, "      const %s *s = sc + bc * %lld;\n", lw_ctype(L, scr), LL(N));
  sb_printf(c, "      const %s *bb = bx + (bc / %lld) * %lld;\n", lw_ctype(L, bx), LL(C > 0 ? C : 1), LL(N * 4));
  sb_printf(c, "      int64_t *a = pa, *b = pb, nc = 0, ns = 0;\n");
  sb_printf(c, "      for (int64_t j = 0; j < %lld; j++) if (!has_st || (double)s[j] > st) a[nc++] = j;\n", LL(N));
  emit_merge_sort(c, "nc", "bf_ = s[R_] > s[L_];");
  sb_printf(c, "      for (int64_t q = 0; q < nc && ns < maxo; q++) {\n");
  sb_printf(c, "        int64_t j = a[q]; int keep = 1;\n");
  /* corners (ymin, xmin, ymax, xmax) of box p into v0..v3 */
  const char *corners =
      center ? "double %s0 = (double)p[1] - (double)p[3] / 2, %s1 = (double)p[0] - (double)p[2] / 2, "
               "%s2 = (double)p[1] + (double)p[3] / 2, %s3 = (double)p[0] + (double)p[2] / 2;\n"
             : "double %s0 = p[0] < p[2] ? p[0] : p[2], %s1 = p[1] < p[3] ? p[1] : p[3], "
               "%s2 = p[0] < p[2] ? p[2] : p[0], %s3 = p[1] < p[3] ? p[3] : p[1];\n";
  sb_printf(c, "        { const %s *p = bb + j * 4; ", lw_ctype(L, bx));
  sb_printf(c, corners, "u", "u", "u", "u");
  sb_printf(c, "        for (int64_t t = 0; t < ns; t++) {\n");
  sb_printf(c, "          const %s *p = bb + sel[t] * 4; ", lw_ctype(L, bx));
  sb_printf(c, corners, "v", "v", "v", "v");
  sb_printf(c, "          double iy0 = u0 > v0 ? u0 : v0, ix0 = u1 > v1 ? u1 : v1, iy1 = u2 < v2 ? u2 : v2, ix1 = u3 < v3 ? u3 : v3;\n");
  sb_printf(c, "          double ia = (iy1 > iy0 ? iy1 - iy0 : 0.0) * (ix1 > ix0 ? ix1 - ix0 : 0.0);\n");
  sb_printf(c, "          double au = (u2 - u0) * (u3 - u1), av = (v2 - v0) * (v3 - v1), un = au + av - ia;\n");
  sb_printf(c, "          if (ia <= 0 || au <= 0 || av <= 0 || un <= 0) continue;\n");
  sb_printf(c, "          if (ia / un > iou_t) { keep = 0; break; }\n        }}\n");
  sb_printf(c, "        if (!keep) continue;\n        sel[ns++] = j;\n");
  sb_printf(c, "        if (m < %lld) { y[m * 3] = bc / %lld; y[m * 3 + 1] = bc %% %lld; y[m * 3 + 2] = j; }\n",
            LL(M), LL(C > 0 ? C : 1), LL(C > 0 ? C : 1));
  sb_printf(c, "        m++;\n      }\n    }\n    (void)st; (void)iou_t;\n  }\n");
  return ECG_OK;
}

/** Unique: X -> Y (unique elements, or slices along 'axis'), indices (first
 *  occurrence), inverse_indices (per element/slice of X, its position in Y), counts.
 *  sorted=1: Y ascending (slices lexicographically); sorted=0: order of first
 *  occurrence.  A stable merge sort of the L positions groups equal ones; U (the
 *  declared count) bounds what is written. */
int emit_unique(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int x = n->inputs[0];
  if (!is_plain(dtype_of(L, x)) || !has_output(n, 0)) return lw_node_err(L, n, e, "this dtype is not supported");
  int64_t xd[ECG_MAX_RANK], yd[ECG_MAX_RANK];
  int r = lw_dims(L, x, xd), axis = -1, y = n->outputs[0];
  if (ecg_attr_find(n, "axis") && (axis = lw_axis(ecg_attr_i(n, "axis", 0), r)) < 0) return lw_node_err(L, n, e, "axis out of range");
  lw_dims(L, y, yd);
  int64_t outer = 1, inner = 1, len, U;
  if (axis < 0) {
    for (int i = 0; i < r; i++) inner *= xd[i];
    len = inner;
    inner = 1;
    U = yd[0];
  } else {
    for (int i = 0; i < axis; i++) outer *= xd[i];
    for (int i = axis + 1; i < r; i++) inner *= xd[i];
    len = xd[axis];
    U = yd[axis];
  }
  int64_t S = outer * inner;
  if (U > len) return lw_node_err(L, n, e, "declared unique count exceeds the input length (not supported)");
  for (int o = 1; o < 4; o++)
    if (has_output(n, (size_t)o)) {
      int64_t d1[ECG_MAX_RANK];
      if (lw_dims(L, n->outputs[o], d1) != 1 || d1[0] != (o == 2 ? len : U))
        return lw_node_err(L, n, e, "output shapes that disagree are not supported");
    }
  int sorted = ecg_attr_i(n, "sorted", 1) != 0;
  char sz[64];
  snprintf(sz, sizeof sz, "%lld", LL(12 * (len > 0 ? len : 1))); /* six int64 arrays of len */
  lw_need_scratch(L, sz);
  const char *xt = lw_ctype(L, x);
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n", xt, lw_ptr(L, x));
  sb_printf(c, "    %s *y = %s;\n    memset(y, 0, %zu);\n", lw_ctype(L, y), lw_ptr(L, y), L->t[y].bytes);
  const char *names[4] = {NULL, "yi", "yv", "yc"};
  for (int o = 1; o < 4; o++)
    if (has_output(n, (size_t)o))
      sb_printf(c, "    int64_t *%s = %s; memset(%s, 0, %zu);\n", names[o], lw_ptr(L, n->outputs[o]), names[o], L->t[n->outputs[o]].bytes);
  sb_printf(c, "    int64_t *pa = (int64_t *)ctx->scratch, *pb = pa + %lld, *grp = pb + %lld, *first = grp + %lld, *cnt = first + %lld, *rank = cnt + %lld;\n",
            LL(len), LL(len), LL(len), LL(len), LL(len));
  sb_printf(c, "    int64_t *a = pa, *b = pb, ng = 0;\n");
  sb_printf(c, "    for (int64_t j = 0; j < %lld; j++) a[j] = j;\n", LL(len));
  /* cv = sign of slice P - slice Q (element e of slice k at (e / inner) * len * inner + k * inner + e % inner) */
  char cmp[512];
  snprintf(cmp, sizeof cmp,
           "cv = 0; for (int64_t e_ = 0; e_ < %lld && !cv; e_++) { int64_t o_ = (e_ / %lld) * %lld + e_ %% %lld; "
           "%s p_ = x[o_ + P_ * %lld], q_ = x[o_ + Q_ * %lld]; cv = p_ < q_ ? -1 : p_ > q_ ? 1 : 0; }",
           LL(S), LL(inner), LL(len * inner), LL(inner), xt, LL(inner), LL(inner));
  char before[700];
  snprintf(before, sizeof before, "{ int64_t P_ = R_, Q_ = L_; int cv; %s bf_ = cv < 0; }", cmp);
  sb_printf(c, "    {\n      const int64_t ulen_ = %lld;\n", LL(len));
  emit_merge_sort(c, "ulen_", before);
  sb_printf(c, "    }\n");
  sb_printf(c, "    for (int64_t q = 0; q < %lld; q++) {\n", LL(len));
  sb_printf(c, "      int cv = 1;\n      if (q > 0) { int64_t P_ = a[q - 1], Q_ = a[q]; %s }\n", cmp);
  sb_printf(c, "      if (cv != 0) { first[ng] = a[q]; cnt[ng] = 0; ng++; }\n");
  sb_printf(c, "      grp[a[q]] = ng - 1; cnt[ng - 1]++;\n    }\n");
  if (sorted) {
    sb_printf(c, "    for (int64_t g = 0; g < ng; g++) rank[g] = g;\n");
  } else {
    sb_printf(c, "    { int64_t rr = 0; for (int64_t k = 0; k < %lld; k++) if (first[grp[k]] == k) rank[grp[k]] = rr++; }\n", LL(len));
  }
  sb_printf(c, "    for (int64_t g = 0; g < ng; g++) {\n      int64_t u = rank[g];\n      if (u >= %lld) continue;\n", LL(U));
  sb_printf(c, "      for (int64_t e_ = 0; e_ < %lld; e_++) y[(e_ / %lld) * %lld + u * %lld + e_ %% %lld] = x[(e_ / %lld) * %lld + first[g] * %lld + e_ %% %lld];\n",
            LL(S), LL(inner), LL(U * inner), LL(inner), LL(inner), LL(inner), LL(len * inner), LL(inner), LL(inner));
  if (has_output(n, 1)) sb_printf(c, "      yi[u] = first[g];\n");
  if (has_output(n, 3)) sb_printf(c, "      yc[u] = cnt[g];\n");
  sb_printf(c, "    }\n");
  if (has_output(n, 2)) sb_printf(c, "    for (int64_t k = 0; k < %lld; k++) yv[k] = rank[grp[k]];\n", LL(len));
  sb_printf(c, "  }\n");
  return ECG_OK;
}

/** TfIdfVectorizer: X int32/int64 [C] or [N,C] -> float [O] or [N,O].  Per row, every
 *  n-gram with n in [min_gram_length, max_gram_length] whose items are `d` apart,
 *  d = 1 .. max_skip_count + 1 (unigrams only at d = 1, so each is counted once), that
 *  matches a pool n-gram adds one to its ngram_indexes slot.  Mode TF: the counts;
 *  IDF: weight (1 without weights) where the count is > 0; TFIDF: count * weight.
 *  The pool is a static table; string inputs are not supported. */
int emit_tfidf(ecg_lower *L, const ecg_node *n, ecg_err *e) {
  int x = n->inputs[0], y = n->outputs[0], xdt = dtype_of(L, x);
  if (xdt != ECG_INT32 && xdt != ECG_INT64) return lw_node_err(L, n, e, "input dtype not supported (int32/int64 only)");
  if (dtype_of(L, y) != ECG_FLOAT) return lw_node_err(L, n, e, "output dtype not supported");
  int64_t xd[ECG_MAX_RANK], yd[ECG_MAX_RANK];
  int r = lw_dims(L, x, xd);
  lw_dims(L, y, yd);
  int64_t rows = r == 2 ? xd[0] : 1, C = xd[r - 1], O = yd[r - 1];
  int64_t mn = ecg_attr_i(n, "min_gram_length", 1), mx = ecg_attr_i(n, "max_gram_length", 1), sk = ecg_attr_i(n, "max_skip_count", 0);
  char mode[16];
  ecg_attr_s(n, "mode", "TF", mode, sizeof mode);
  int md = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : !strcmp(mode, "TFIDF") ? 2 : -1;
  if (md < 0) return lw_node_err(L, n, e, "this mode is not supported");
  if (mn < 1 || mx < mn || sk < 0 || mx > 64 || sk > 1000000) return lw_node_err(L, n, e, "gram lengths / skip count not supported");
  const int64_t *pool, *cnts, *idx;
  const float *wts;
  int np = ecg_attr_ints(n, "pool_int64s", &pool), nc = ecg_attr_ints(n, "ngram_counts", &cnts);
  int ni = ecg_attr_ints(n, "ngram_indexes", &idx), nw = ecg_attr_floats(n, "weights", &wts);
  if (np < 0 && ecg_attr_find(n, "pool_strings")) return lw_node_err(L, n, e, "pool_strings is not supported");
  if (np < 0) np = 0;
  if (nc < 0) nc = 0;
  if (ni < 0) ni = 0;
  /* the grams: level i (length i + 1) holds pool[cnts[i] .. cnts[i+1] or np) */
  int64_t ng = 0;
  for (int i = 0; i < nc; i++) {
    int64_t lo = cnts[i], hi = i + 1 < nc ? cnts[i + 1] : np;
    if (lo < 0 || hi < lo || hi > np || (hi - lo) % (i + 1)) return lw_node_err(L, n, e, "inconsistent ngram_counts not supported");
    ng += (hi - lo) / (i + 1);
  }
  if (ng != ni || (nw >= 0 && nw != ni)) return lw_node_err(L, n, e, "ngram_indexes / weights of the wrong length are not supported");
  for (int i = 0; i < ni; i++)
    if (idx[i] < 0 || idx[i] >= O) return lw_node_err(L, n, e, "ngram_indexes outside the output are not supported");
  int u = lw_uid(L);
  /* tables: per gram its length, pool offset, output slot, weight */
  sb_printf(&L->decls, "static const int64_t tfp%d[%d] = {", u, np > 0 ? np : 1);
  for (int i = 0; i < np; i++) sb_printf(&L->decls, "%s%lld", i ? "," : "", LL(pool[i]));
  sb_printf(&L->decls, "%s};\nstatic const int64_t tfg%d[%lld] = {", np ? "" : "0", u, LL(ng > 0 ? 3 * ng : 1));
  int first = 1;
  for (int i = 0, gi = 0; i < nc; i++) {
    int64_t lo = cnts[i], hi = i + 1 < nc ? cnts[i + 1] : np;
    for (int64_t p = lo; p < hi; p += i + 1, gi++) {
      sb_printf(&L->decls, "%s%d,%lld,%lld", first ? "" : ",", i + 1, LL(p), LL(idx[gi]));
      first = 0;
    }
  }
  sb_printf(&L->decls, "%s};\nstatic const float tfw%d[%d] = {", ng ? "" : "0", u, nw > 0 ? nw : 1);
  for (int i = 0; i < nw; i++) sb_printf(&L->decls, "%s%.9g", i ? "," : "", (double)wts[i]);
  sb_printf(&L->decls, "%s};\n", nw > 0 ? "" : "0");
  sbuf *c = &L->code;
  sb_printf(c, "  {\n    const %s *x = %s;\n    float *y = %s;\n", lw_ctype(L, x), lw_ptr(L, x), lw_ptr(L, y));
  sb_printf(c, "    memset(y, 0, %zu);\n", L->t[y].bytes);
  sb_printf(c, "    for (int64_t row = 0; row < %lld; row++) {\n", LL(rows));
  sb_printf(c, "      const %s *xr = x + row * %lld; float *yr = y + row * %lld;\n", lw_ctype(L, x), LL(C), LL(O));
  sb_printf(c, "      for (int64_t d = 1; d <= %lld; d++)\n", LL(sk + 1));
  sb_printf(c, "        for (int64_t g = 0; g < %lld; g++) {\n", LL(ng));
  sb_printf(c, "          int64_t len = tfg%d[3 * g], off = tfg%d[3 * g + 1];\n", u, u);
  sb_printf(c, "          if (len < %lld || len > %lld || (len == 1 && d > 1)) continue;\n", LL(mn), LL(mx));
  sb_printf(c, "          for (int64_t s = 0; s + (len - 1) * d < %lld; s++) {\n", LL(C));
  sb_printf(c, "            int64_t k = 0;\n            while (k < len && (int64_t)xr[s + k * d] == tfp%d[off + k]) k++;\n", u);
  sb_printf(c, "            if (k == len) yr[tfg%d[3 * g + 2]] += 1.0f;\n          }\n        }\n", u);
  if (md > 0) {
    sb_printf(c, "      for (int64_t g = 0; g < %lld; g++) {\n        int64_t o = tfg%d[3 * g + 2];\n", LL(ng), u);
    const char *w = nw > 0 ? "tfw%d[g]" : "1.0f";
    char wb[32];
    snprintf(wb, sizeof wb, w, u);
    if (md == 1) sb_printf(c, "        if (yr[o] > 0) yr[o] = %s;\n      }\n", wb);
    else sb_printf(c, "        yr[o] *= %s;\n      }\n", wb);
  }
  sb_printf(c, "      (void)tfw%d;\n    }\n  }\n", u);
  return ECG_OK;
}
