/* Einsum equation parsing, shared by the shape function (format/ops/rnn.c) and the
 * emitter (tools/lower/emit/rnn.c).  Private: static inline, no libecg symbols.
 *
 * An equation "term,term,...[->term]" names every dim of every operand by a label
 * (a-z, A-Z) or, through one "...", by the broadcast "ellipsis" dims.  Parsing maps
 * each operand dim to a variable:
 *   0..25   'A'..'Z'      26..51  'a'..'z'   (so sorting ids sorts labels by ASCII,
 *                                              numpy's implicit-output order)
 *   52..59  ellipsis dims, right-aligned over the operands (numpy broadcasting)
 * Implicit mode (no "->"): the output is the ellipsis dims, then every label that
 * occurs exactly once, in increasing order.  Spaces are ignored. */
#ifndef ECG_EINSUM_EQ_H
#define ECG_EINSUM_EQ_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ecg.h"

enum { EQ_NLAB = 52, EQ_ELL0 = 52, EQ_NVAR = 60, EQ_MAX_IN = 8 };

typedef struct einsum_eq {
  int n_in;                          /**< operands */
  int in_rank[EQ_MAX_IN];            /**< rank of each operand */
  int in_var[EQ_MAX_IN][ECG_MAX_RANK]; /**< variable of each operand dim */
  int out_rank;
  int out_var[ECG_MAX_RANK];         /**< variable of each output dim */
  int n_ell;                         /**< broadcast ellipsis dims (max over operands) */
} einsum_eq;

static inline int eq_label(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
  return -1;
}

/* One term (spaces removed) of an operand of rank `rank` (-1: the output, whose
 * ellipsis covers all n_ell_out dims) into vars; *has_ell = whether it has "...".
 * Returns the term's rank, or -1 with err filled. */
static inline int eq_term(const char *s, size_t len, int rank, int n_ell_out, int *vars, int *has_ell,
                          char *err, size_t n_err) {
  int letters = 0, ell = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') {
      if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || ell) {
        snprintf(err, n_err, "malformed ellipsis in term '%.*s'", (int)len, s);
        return -1;
      }
      ell = 1;
      i += 2;
    } else if (eq_label(s[i]) >= 0) {
      letters++;
    } else {
      snprintf(err, n_err, "invalid character '%c' in term '%.*s'", s[i], (int)len, s);
      return -1;
    }
  }
  *has_ell = ell;
  int ne = rank < 0 ? (ell ? n_ell_out : 0) : rank - letters;
  if (rank >= 0 && (ne < 0 || (!ell && ne != 0))) {
    snprintf(err, n_err, "term '%.*s' has %d labels for an operand of rank %d", (int)len, s, letters, rank);
    return -1;
  }
  int r = letters + ne;
  if (r > ECG_MAX_RANK || ne > EQ_NVAR - EQ_ELL0) {
    snprintf(err, n_err, "term '%.*s' has rank %d > %d", (int)len, s, r, ECG_MAX_RANK);
    return -1;
  }
  int k = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') {
      /* right-aligned ellipsis variables: the operand's ne dims are the last ne of n_ell */
      for (int j = 0; j < ne; j++) vars[k++] = EQ_ELL0 + (n_ell_out - ne) + j;
      i += 2;
    } else {
      vars[k++] = eq_label(s[i]);
    }
  }
  return r;
}

/** Parse equation eq for n_in operands of the given ranks into *q; 0, or -1 with a
 *  message in err. */
static inline int einsum_parse(const char *eq, int n_in, const int *ranks, einsum_eq *q, char *err, size_t n_err) {
  char s[512];
  size_t n = 0;
  for (const char *p = eq; *p; p++)
    if (*p != ' ' && *p != '\t') {
      if (n + 1 >= sizeof s) { snprintf(err, n_err, "equation too long"); return -1; }
      s[n++] = *p;
    }
  s[n] = 0;
  memset(q, 0, sizeof *q);
  if (n_in < 1 || n_in > EQ_MAX_IN) { snprintf(err, n_err, "%d operands (1..%d supported)", n_in, EQ_MAX_IN); return -1; }
  q->n_in = n_in;
  char *arrow = strstr(s, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - s) : n;
  /* ellipsis width: max over operands of rank - letters */
  const char *t = s;
  int ell_w[EQ_MAX_IN];
  for (int i = 0; i < n_in; i++) {
    const char *end = memchr(t, ',', lhs_len - (size_t)(t - s));
    size_t len = end ? (size_t)(end - t) : lhs_len - (size_t)(t - s);
    if ((i < n_in - 1) != (end != NULL)) {
      snprintf(err, n_err, "equation '%.60s' does not have %d input terms", eq, n_in);
      return -1;
    }
    int letters = 0, has = 0;
    for (size_t k = 0; k < len; k++) letters += eq_label(t[k]) >= 0, has |= t[k] == '.';
    ell_w[i] = has ? ranks[i] - letters : 0;
    if (ell_w[i] > q->n_ell) q->n_ell = ell_w[i];
    t = end ? end + 1 : t + len;
  }
  if (q->n_ell > EQ_NVAR - EQ_ELL0) { snprintf(err, n_err, "too many ellipsis dims"); return -1; }
  t = s;
  int count[EQ_NVAR] = {0}, any_ell = 0;
  for (int i = 0; i < n_in; i++) {
    const char *end = memchr(t, ',', lhs_len - (size_t)(t - s));
    size_t len = end ? (size_t)(end - t) : lhs_len - (size_t)(t - s);
    int has;
    /* the operand's ellipsis dims are the last ell_w[i] of the n_ell variables */
    int vars[ECG_MAX_RANK + 8];
    int r = eq_term(t, len, ranks[i], q->n_ell, vars, &has, err, n_err);
    if (r < 0) return -1;
    q->in_rank[i] = r;
    for (int k = 0; k < r; k++) {
      q->in_var[i][k] = vars[k];
      count[vars[k]]++;
    }
    any_ell |= has && ell_w[i] > 0;
    t = end ? end + 1 : t + len;
  }
  if (arrow) {
    const char *o = arrow + 2;
    int has;
    int r = eq_term(o, strlen(o), -1, q->n_ell, q->out_var, &has, err, n_err);
    if (r < 0) return -1;
    if (any_ell && !has) {
      snprintf(err, n_err, "an ellipsis in the inputs but not in the output is not supported");
      return -1;
    }
    q->out_rank = r;
    for (int k = 0; k < r; k++) {
      int v = q->out_var[k];
      if (v < EQ_NLAB && !count[v]) { snprintf(err, n_err, "output label '%c' is not in any input", v < 26 ? 'A' + v : 'a' + v - 26); return -1; }
      for (int j = 0; j < k; j++)
        if (q->out_var[j] == v) { snprintf(err, n_err, "output repeats a label"); return -1; }
    }
  } else {
    int r = 0;
    for (int j = 0; j < q->n_ell; j++) q->out_var[r++] = EQ_ELL0 + j;
    for (int v = 0; v < EQ_NLAB; v++)
      if (count[v] == 1) {
        if (r >= ECG_MAX_RANK) { snprintf(err, n_err, "output rank > %d", ECG_MAX_RANK); return -1; }
        q->out_var[r++] = v;
      }
    q->out_rank = r;
  }
  return 0;
}

/** Size of every variable from the operand dims (dims[i] of operand i; -1 symbolic)
 *  into size[EQ_NVAR] (-1 unknown, 0 for unused); ellipsis dims broadcast (1 vs n).
 *  0, or -1 with a message. */
static inline int einsum_sizes(const einsum_eq *q, int64_t dims[][ECG_MAX_RANK], int64_t *size, char *err, size_t n_err) {
  int seen[EQ_NVAR] = {0};
  for (int v = 0; v < EQ_NVAR; v++) size[v] = 0;
  for (int i = 0; i < q->n_in; i++)
    for (int k = 0; k < q->in_rank[i]; k++) {
      int v = q->in_var[i][k];
      int64_t d = dims[i][k];
      if (!seen[v]) { seen[v] = 1; size[v] = d; continue; }
      if (size[v] == d) continue;
      if (v >= EQ_ELL0 && (d == 1 || size[v] == 1)) { if (size[v] == 1) size[v] = d; continue; }
      if (d < 0 || size[v] < 0) { size[v] = -1; continue; }
      snprintf(err, n_err, "operand %d dim %d is %lld, another dim with the same label is %lld", i, k, (long long)d,
               (long long)size[v]);
      return -1;
    }
  for (int v = EQ_ELL0; v < EQ_ELL0 + q->n_ell; v++)
    if (!seen[v]) size[v] = 1;
  return 0;
}
#endif
