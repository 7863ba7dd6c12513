/* ecg-rewrite "subst": the cost model (OCGGS §2.1: additive; a node's cost is the time to
 * compute its outputs, measured per operator and shape as in MetaFlow/TASO).
 *
 * A node's key names its operator, its operands' shapes ('c' before a constant's),
 * its outputs' shapes and the attributes the rules change (Conv geometry, Split/Concat
 * axis):  "Conv 1x256x14x14 c256x256x3x3 c256 -> 1x256x14x14 k3x3 s1x1 p1,1,1,1 d1x1 g1".
 * Measured times live in a text table (--cost-db FILE, filled by `make cost-db` with
 * ecg-bench), one "KEY = MS" a line, '#' comments.  A key not in the table costs the
 * roofline estimate max(FLOPs / peak, bytes / bandwidth) + a per-node overhead. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "subst.h"

void sg_cost_init(sg_cost_db *db) {
  memset(db, 0, sizeof *db);
  db->peak_gflops = 50;
  db->gbytes_s = 10;
  db->node_ms = 0.002;
}

void sg_cost_free(sg_cost_db *db) {
  for (int i = 0; i < db->n; i++) free(db->key[i]);
  free(db->key);
  free(db->ms);
  db->key = NULL;
  db->ms = NULL;
  db->n = db->cap = 0;
}

static int find(const sg_cost_db *db, const char *key) {
  for (int i = 0; i < db->n; i++)
    if (!strcmp(db->key[i], key)) return i;
  return -1;
}

int sg_cost_parse(sg_cost_db *db, const char *file, const char *text, size_t len, ecg_err *e) {
  int line = 0;
  for (size_t at = 0; at < len;) {
    size_t end = at;
    while (end < len && text[end] != '\n') end++;
    line++;
    char buf[1024];
    size_t n = end - at;
    if (n >= sizeof buf) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: line longer than %zu bytes", file, line, sizeof buf - 1);
    memcpy(buf, text + at, n);
    buf[n] = 0;
    at = end + 1;
    if (memchr(buf, 0, n)) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: NUL byte in the line", file, line);
    char *hash = strchr(buf, '#');
    if (hash) *hash = 0;
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) continue;
    char *eq = strrchr(s, '=');
    if (!eq) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: expected 'KEY = MS'", file, line);
    char *k_end = eq;
    while (k_end > s && isspace((unsigned char)k_end[-1])) k_end--;
    *k_end = 0;
    if (!*s) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: empty key before '='", file, line);
    char *num = eq + 1, *stop;
    while (isspace((unsigned char)*num)) num++;
    double ms = strtod(num, &stop);
    while (isspace((unsigned char)*stop)) stop++;
    if (stop == num || *stop) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: '%s' is not a time in ms", file, line, num);
    if (!isfinite(ms) || ms < 0) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: time %g ms is not >= 0", file, line, ms);
    if (find(db, s) >= 0) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: key '%s' given twice", file, line, s);
    if (db->n == db->cap) {
      int c = db->cap * 2 + 16;
      char **k = realloc(db->key, sizeof *k * (size_t)c);
      if (k) db->key = k;
      double *m = realloc(db->ms, sizeof *m * (size_t)c);
      if (m) db->ms = m;
      if (!k || !m) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      db->cap = c;
    }
    if (!(db->key[db->n] = strdup(s))) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    db->ms[db->n++] = ms;
  }
  return ECG_OK;
}

int sg_cost_load(sg_cost_db *db, const char *path, ecg_err *e) {
  unsigned char *buf;
  size_t len;
  ECG_TRY(cli_read_path(path, &buf, &len, e));
  int rc = sg_cost_parse(db, path, (const char *)buf, len, e);
  free(buf);
  return rc;
}

static size_t put_dims(char *buf, size_t n, const sg_val *v) {
  size_t off = 0;
  if (v->rank == 0) off += (size_t)snprintf(buf, n, "s");
  for (int k = 0; k < v->rank && off < n; k++) off += (size_t)snprintf(buf + off, n - off, "%s%lld", k ? "x" : "", (long long)v->dim[k]);
  return off < n ? off : n;
}

void sg_cost_key(const sg_graph *s, int i, char *buf, size_t n) {
  const sg_node *x = &s->n[i];
  const ecg_op_info *op = x->op >= 0 ? ecg_op_get((ecg_op_id)x->op) : NULL;
  size_t off = (size_t)snprintf(buf, n, "%s", op ? op->name : "?");
  for (int k = 0; k < x->n_in + x->n_out + 1 && off + 2 < n; k++) {
    if (k == x->n_in) { off += (size_t)snprintf(buf + off, n - off, " ->"); continue; }
    int v = k < x->n_in ? x->in[k] : x->out[k - x->n_in - 1];
    buf[off++] = ' ';
    buf[off] = 0;
    if (v < 0) { off += (size_t)snprintf(buf + off, n - off, "-"); continue; }
    if (s->v[v].is_const) off += (size_t)snprintf(buf + off, n - off, "c");
    off += put_dims(buf + off, n - off, &s->v[v]);
  }
  if (off < n && x->op == ECG_OP_Conv && !x->opaque)
    snprintf(buf + off, n - off, " k%lldx%lld s%lldx%lld p%lld,%lld,%lld,%lld d%lldx%lld g%lld", (long long)x->k[0],
             (long long)x->k[1], (long long)x->s[0], (long long)x->s[1], (long long)x->pad[0], (long long)x->pad[1],
             (long long)x->pad[2], (long long)x->pad[3], (long long)x->d[0], (long long)x->d[1], (long long)x->group);
  else if (off < n && (x->op == ECG_OP_Split || x->op == ECG_OP_Concat) && !x->opaque)
    snprintf(buf + off, n - off, " a%d", x->axis);
}

static double bytes_of(const sg_val *v) {
  double b = v->dtype ? (double)ecg_dtype_size(v->dtype) : 4;
  for (int k = 0; k < v->rank; k++) b *= (double)v->dim[k];
  return b;
}

double sg_cost_node(const sg_cost_db *db, const sg_graph *s, int i) {
  char key[1024];
  sg_cost_key(s, i, key, sizeof key);
  int at = find(db, key);
  sg_cost_db *m = (sg_cost_db *)db; /* hit/miss counters and the key log only */
  if (at >= 0) {
    m->hits++;
    return db->ms[at];
  }
  m->misses++;
  if (db->keys_out) sg_cost_log_key(m, s, i, key);
  const sg_node *x = &s->n[i];
  double bytes = 0;
  for (int k = 0; k < x->n_in; k++)
    if (x->in[k] >= 0 && s->v[x->in[k]].rank >= 0) bytes += bytes_of(&s->v[x->in[k]]);
  for (int k = 0; k < x->n_out; k++)
    if (x->out[k] >= 0 && s->v[x->out[k]].rank >= 0) bytes += bytes_of(&s->v[x->out[k]]);
  double t_c = (double)x->flops / (db->peak_gflops * 1e6), t_m = bytes / (db->gbytes_s * 1e6);
  return (t_c > t_m ? t_c : t_m) + db->node_ms;
}
