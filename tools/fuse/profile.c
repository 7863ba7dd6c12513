/* The profile database of measured costs (DESIGN.md "Measured costs"; DNNFusion §3.4.3:
 * the yellow, fuse_depend cells of Table 3.3 are decided by profiling).
 *
 * Format: JSON lines, one measurement per line, keyed by CPU model, ISA, threads,
 * device and operator signature:
 *   {"cpu": "AMD EPYC", "isa": "avx512", "threads": 1, "device": "cpu",
 *    "kind": "fusion_pair", "signature": "Conv[...]>Mul[...]",
 *    "fused_ms": 0.41, "unfused_ms": 0.52, "runs": 30}
 * A signature names each operator with its input and output shapes and attributes.
 * scripts/profile_fusion.sh fills a database: ecg-fuse --emit-candidates writes each
 * depend pair of a model as two small ECGs (fused, unfused), which it lowers and times
 * with ecg-bench.  Lines of another CPU, ISA or thread count are ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ecg_arch.h"
#include "fuse.h"
#include "jsonl.h"

struct fuse_db {
  char **sig;
  double *fused, *unfused;
  int n, cap;
};

void fuse_host_key(char *cpu, size_t ncpu, const char **isa, int *threads) { ecg_host_key(cpu, ncpu, isa, threads); }

int fuse_db_load(const char *path, fuse_db **out, ecg_err *e) {
  FILE *f = fopen(path, "r");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: cannot read the profile database", path);
  fuse_db *db = calloc(1, sizeof *db);
  char cpu[256], hcpu[256], isa[32], dev[32];
  const char *hisa;
  int hthreads;
  fuse_host_key(hcpu, sizeof hcpu, &hisa, &hthreads);
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, rc = db ? ECG_OK : ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  while (rc == ECG_OK && getline(&line, &cap, f) > 0) {
    lineno++;
    if (line[strspn(line, " \t\r\n")] == 0) continue;
    char sig[4096];
    double th, fm, um;
    if (!jsonl_str(line, "signature", sig, sizeof sig) || !jsonl_str(line, "cpu", cpu, sizeof cpu) ||
        !jsonl_str(line, "isa", isa, sizeof isa) || !jsonl_num(line, "threads", &th) ||
        !jsonl_num(line, "fused_ms", &fm) || !jsonl_num(line, "unfused_ms", &um)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: not a profile record (needs cpu, isa, threads, signature, fused_ms, unfused_ms)", path, lineno);
      break;
    }
    if (jsonl_str(line, "device", dev, sizeof dev) && strcmp(dev, "cpu")) continue;
    if (strcmp(cpu, hcpu) || strcmp(isa, hisa) || (int)th != hthreads) continue;
    if (db->n == db->cap) {
      int nc = db->cap ? 2 * db->cap : 64;
      char **s = realloc(db->sig, sizeof *s * (size_t)nc);
      double *a = s ? realloc(db->fused, sizeof *a * (size_t)nc) : NULL;
      if (s) db->sig = s;
      if (a) db->fused = a;
      double *b = a ? realloc(db->unfused, sizeof *b * (size_t)nc) : NULL;
      if (b) db->unfused = b;
      if (!s || !a || !b) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      db->cap = nc;
    }
    db->sig[db->n] = strdup(sig);
    db->fused[db->n] = fm;
    db->unfused[db->n] = um;
    if (!db->sig[db->n]) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    db->n++; /* a later line for the same signature wins (lookup scans backwards) */
  }
  free(line);
  fclose(f);
  if (rc != ECG_OK) { fuse_db_free(db); return rc; }
  *out = db;
  return ECG_OK;
}

void fuse_db_free(fuse_db *db) {
  if (!db) return;
  for (int i = 0; i < db->n; i++) free(db->sig[i]);
  free(db->sig); free(db->fused); free(db->unfused); free(db);
}

int fuse_db_lookup(const fuse_db *db, const char *sig, double *fused_ms, double *unfused_ms) {
  for (int i = db ? db->n - 1 : -1; i >= 0; i--)
    if (!strcmp(db->sig[i], sig)) { *fused_ms = db->fused[i]; *unfused_ms = db->unfused[i]; return 1; }
  return 0;
}

/* Append node n's signature part: Op[in shapes;...>out shapes|attr=value,...]. */
static void node_sig(const ecg_graph *g, const ecg_node *n, char *buf, size_t sz) {
  size_t len = strlen(buf);
  char sh[128];
  len += (size_t)snprintf(buf + len, len < sz ? sz - len : 0, "%s[", n->op_type);
  for (size_t k = 0; k < n->n_inputs && len < sz; k++) {
    const ecg_tensor *t = ecg_node_input(g, n, (int)k);
    len += (size_t)snprintf(buf + len, sz - len, "%s%s%s", k ? ";" : "", t ? ecg_shape_str(t, sh, sizeof sh) : "-", t && t->is_const ? "c" : "");
  }
  const ecg_tensor *y = ecg_node_output(g, n, 0);
  if (len < sz) len += (size_t)snprintf(buf + len, sz - len, ">%s", y ? ecg_shape_str(y, sh, sizeof sh) : "-");
  for (size_t a = 0; a < n->n_attrs && len < sz; a++) {
    const ecg_attr *at = n->attrs[a];
    len += (size_t)snprintf(buf + len, sz - len, "|%s=", at->name);
    if (at->n_ints)
      for (size_t i = 0; i < at->n_ints && len < sz; i++) len += (size_t)snprintf(buf + len, sz - len, "%s%lld", i ? "," : "", (long long)at->ints[i]);
    else if (at->s.len && len < sz) len += (size_t)snprintf(buf + len, sz - len, "%.*s", (int)at->s.len, (const char *)at->s.data);
    else if (len < sz) len += (size_t)snprintf(buf + len, sz - len, "%lld/%.9g", (long long)at->i, at->f);
  }
  if (len < sz) snprintf(buf + len, sz - len, "]");
}

void fuse_pair_signature(const ecg_graph *g, int p, int c, char *buf, size_t sz) {
  buf[0] = 0;
  node_sig(g, g->nodes[p], buf, sz);
  size_t len = strlen(buf);
  if (len + 1 < sz) { buf[len] = '>'; buf[len + 1] = 0; }
  node_sig(g, g->nodes[c], buf, sz);
}

/* Deep copy of a protobuf message through pack/unpack. */
#define PB_COPY(type, fn, x)                                                                       \
  ({                                                                                               \
    size_t n_ = fn##__get_packed_size(x);                                                          \
    uint8_t *b_ = malloc(n_ ? n_ : 1);                                                             \
    type *r_ = NULL;                                                                               \
    if (b_) { fn##__pack(x, b_); r_ = fn##__unpack(NULL, n_, b_); free(b_); }                      \
    r_;                                                                                            \
  })

/* Write the two-node graph of producer p and consumer c to path, as one block (fused)
 * or not. */
static int write_pair(const ecg_graph *g, int p, int c, int fused, const char *path, ecg_err *e) {
  ecg_graph *s = ecg_graph_new();
  if (!s) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  int *map = malloc(sizeof(int) * (g->n_tensors + 1));
  int rc = map ? ECG_OK : ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t t = 0; map && t < g->n_tensors; t++) map[t] = -1;
  s->opset = g->opset;
  s->inputs = malloc(sizeof(int32_t) * 32);
  s->outputs = malloc(sizeof(int32_t) * 2);
  int nodes[2] = {p, c};
  for (int k = 0; rc == ECG_OK && k < 2; k++) {
    const ecg_node *n = g->nodes[nodes[k]];
    for (int pass = 0; pass < 2; pass++) {
      size_t cnt = pass ? n->n_outputs : n->n_inputs;
      for (size_t j = 0; j < cnt; j++) {
        int t = pass ? n->outputs[j] : n->inputs[j];
        if (t < 0 || map[t] >= 0) continue;
        Ecg__Tensor *tc = PB_COPY(Ecg__Tensor, ecg__tensor, g->tensors[t]);
        Ecg__Tensor **nt = realloc(s->tensors, sizeof *nt * (s->n_tensors + 1));
        if (!tc || !nt) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
        tc->ir_removable = 0;
        s->tensors = nt;
        map[t] = (int)s->n_tensors;
        s->tensors[s->n_tensors++] = tc;
        if (!pass && !tc->is_const && s->n_inputs < 32) s->inputs[s->n_inputs++] = map[t];
      }
    }
    Ecg__Node *nc = PB_COPY(Ecg__Node, ecg__node, n);
    Ecg__Node **nn = realloc(s->nodes, sizeof *nn * (s->n_nodes + 1));
    if (!nc || !nn) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    s->nodes = nn;
    for (size_t j = 0; j < nc->n_inputs; j++) if (nc->inputs[j] >= 0) nc->inputs[j] = map[nc->inputs[j]];
    for (size_t j = 0; j < nc->n_outputs; j++) if (nc->outputs[j] >= 0) nc->outputs[j] = map[nc->outputs[j]];
    nc->fusion_block = -1;
    s->nodes[s->n_nodes++] = nc;
  }
  if (rc == ECG_OK) {
    s->outputs[s->n_outputs++] = map[g->nodes[c]->outputs[0]];
    if (fused) {
      int nodes2[2] = {0, 1};
      if (ecg_block_add(s, nodes2, 2, 1, e) < 0) rc = ECG_ERR_INTERNAL;
      else s->tensors[s->nodes[0]->outputs[0]]->ir_removable = 1;
    }
  }
  if (rc == ECG_OK) rc = ecg_write_path(path, s, 0, e);
  free(map);
  ecg_graph_free(s);
  return rc;
}

int fuse_emit_candidate(const ecg_graph *g, int p, int c, const char *dir, int index, ecg_err *e) {
  char path[4096], sig[4096];
  mkdir(dir, 0777);
  fuse_pair_signature(g, p, c, sig, sizeof sig);
  snprintf(path, sizeof path, "%s/%03d.sig", dir, index);
  FILE *f = fopen(path, "w");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: cannot write", path);
  fprintf(f, "%s\n", sig);
  if (fclose(f) != 0) return ecg_errf(e, ECG_ERR_INPUT, "%s: write error", path);
  snprintf(path, sizeof path, "%s/%03d.fused.ecg", dir, index);
  ECG_TRY(write_pair(g, p, c, 1, path, e));
  snprintf(path, sizeof path, "%s/%03d.unfused.ecg", dir, index);
  return write_pair(g, p, c, 0, path, e);
}
