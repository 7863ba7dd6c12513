/* ecg-rewrite "subst": the cost model (OCGGS §2.1: additive; a node's cost is the time to
 * compute its outputs, measured per operator and shape as in MetaFlow/TASO).
 *
 * A node's key names its operator, its operands' shapes ('c' before a constant's),
 * its outputs' shapes and the attributes the rules change (Conv geometry, Split/Concat
 * axis):  "Conv 1x256x14x14 c256x256x3x3 c256 -> 1x256x14x14 k3x3 s1x1 p1,1,1,1 d1x1 g1".
 * Measured times live in the project's one format of measured costs (DESIGN.md
 * "Measured costs", as ecg-fuse's profile database): JSON lines keyed by CPU model, ISA,
 * threads, device and signature (the key above), filled by `make cost-db` with ecg-bench:
 *   {"cpu": "AMD EPYC 9R14", "isa": "avx512", "threads": 1, "device": "cpu",
 *    "kind": "node_time", "signature": "Relu 1x256x14x14 -> 1x256x14x14", "ms": 0.011, "runs": 20}
 * Samples of another CPU, ISA or thread count are ignored (counted, and named once on
 * stderr by sg_cost_load); lines of another kind or device are skipped (a profile database
 * may share the file).  A key not in the table costs the roofline estimate
 * max(FLOPs / peak, bytes / bandwidth) + a per-node overhead. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ecg_arch.h"
#include "jsonl.h"
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

/* Append or replace (a later sample of a signature wins) key -> ms. */
static int put(sg_cost_db *db, const char *key, double ms, ecg_err *e) {
  int at = find(db, key);
  if (at >= 0) { db->ms[at] = ms; return ECG_OK; }
  if (db->n == db->cap) {
    int c = db->cap * 2 + 16;
    char **k = realloc(db->key, sizeof *k * (size_t)c);
    if (k) db->key = k;
    double *m = realloc(db->ms, sizeof *m * (size_t)c);
    if (m) db->ms = m;
    if (!k || !m) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    db->cap = c;
  }
  if (!(db->key[db->n] = strdup(key))) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  db->ms[db->n++] = ms;
  return ECG_OK;
}

int sg_cost_parse(sg_cost_db *db, const char *file, const char *text, size_t len, ecg_err *e) {
  char hcpu[256];
  const char *hisa;
  int hthreads, line = 0;
  ecg_host_key(hcpu, sizeof hcpu, &hisa, &hthreads);
  for (size_t at = 0; at < len;) {
    size_t end = at;
    while (end < len && text[end] != '\n') end++;
    line++;
    char buf[4096];
    size_t n = end - at;
    if (n >= sizeof buf) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: line longer than %zu bytes", file, line, sizeof buf - 1);
    memcpy(buf, text + at, n);
    buf[n] = 0;
    at = end + 1;
    if (memchr(buf, 0, n)) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: NUL byte in the line", file, line);
    const char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    if (!*s || *s == '#') continue;
    char cpu[256], isa[32], dev[32], kind[32], sig[1024];
    double th, ms;
    if (*s != '{' || !jsonl_str(s, "cpu", cpu, sizeof cpu) || !jsonl_str(s, "isa", isa, sizeof isa) ||
        !jsonl_num(s, "threads", &th) || !jsonl_str(s, "signature", sig, sizeof sig) || !jsonl_num(s, "ms", &ms))
      return ecg_errf(e, ECG_ERR_INPUT,
                      "%s:%d: not a cost record (a JSON line with cpu, isa, threads, signature and ms; "
                      "optional device, kind \"node_time\", runs)",
                      file, line);
    if (!sig[0]) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: empty signature", file, line);
    if (ms < 0) return ecg_errf(e, ECG_ERR_INPUT, "%s:%d: time %g ms is not >= 0", file, line, ms);
    if ((jsonl_str(s, "kind", kind, sizeof kind) && strcmp(kind, "node_time")) ||
        (jsonl_str(s, "device", dev, sizeof dev) && strcmp(dev, "cpu"))) {
      db->other_kind++;
      continue;
    }
    if (strcmp(cpu, hcpu) || strcmp(isa, hisa) || th != hthreads) {
      if (!db->foreign++)
        snprintf(db->foreign_key, sizeof db->foreign_key, "cpu '%s', isa %s, %g thread(s)", cpu, isa, th);
      continue;
    }
    ECG_TRY(put(db, sig, ms, e));
  }
  return ECG_OK;
}

int sg_cost_load(sg_cost_db *db, const char *path, ecg_err *e) {
  unsigned char *buf;
  size_t len;
  ECG_TRY(cli_read_path(path, &buf, &len, e));
  int rc = sg_cost_parse(db, path, (const char *)buf, len, e);
  free(buf);
  if (rc == ECG_OK && db->foreign) {
    char cpu[256];
    const char *isa;
    int th;
    ecg_host_key(cpu, sizeof cpu, &isa, &th);
    fprintf(stderr,
            "ecg-rewrite: %s: %d sample(s) of another machine ignored (the first: %s; this host: cpu '%s', isa %s, "
            "%d thread(s))\n",
            path, db->foreign, db->foreign_key, cpu, isa, th);
  }
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
  else if (off < n && x->red)
    snprintf(buf + off, n - off, " r%x k%lld", (unsigned)x->red_bits, (long long)x->keep);
}

static double bytes_of(const sg_val *v) {
  double b = v->dtype ? (double)ecg_dtype_size(v->dtype) : 4;
  for (int k = 0; k < v->rank; k++) b *= (double)v->dim[k];
  return b;
}

double sg_cost_node(const sg_cost_db *db, const sg_graph *s, int i) {
  if (s->n[i].folded) return 0; /* computed once when the graph is compiled */
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
