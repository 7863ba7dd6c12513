/* mkrules: one ECG holding, for every rewrite rule of ecg-rewrite (the built-in rule files
 * of tools/rewrite/rules/ plus the given ones), an instance of the rule's SOURCE pattern,
 * for tests/bats/rewrite.bats (built against tools/rewrite/rules.c, the embedded rule
 * files and build/libecg.a).
 *
 *   mkrules [--violate] OUT.ecg [RULES...]
 *
 * Each instance is a subgraph of its own, read by an Identity whose output is the graph
 * output y_<rule> (the Identity has none of the three properties, so the math pass's
 * partition ends there and the rule's root need not keep a graph output's name).  A
 * variable becomes a float32 graph input <rule>_<var> of shape [8, 8]; under nonneg(V)
 * alone Relu of one (non-negative by the registry); under another condition a seeded
 * constant that satisfies it: scalar(V) shape [], else [8, 8]; pos/nonneg(V) values in
 * [0.5, 1.5), int(V) integers 1..3, const(V) +-[0.5, 1.5).
 * A number becomes a scalar constant; identical subterms are one node; reductions reduce
 * the last axis with keepdims = 1 (axes as an input: the graph is at opset 18).
 *
 * With --violate only rules with a value condition are instantiated, each breaking it
 * (nonneg alone: the plain input, which may be negative; negative constant values for
 * pos/nonneg, non-integers for int, an [8, 8] constant for scalar): the rule must not fire
 * there (outputs n_<rule>).
 *
 * Exit 0 on success, 2 usage, 1 a rule file or graph error, 3 write error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/rewrite/rewrite.h"

#define N 8 /* every operand is N x N */

static uint32_t seed = 4242;
static float rnd01(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)(seed >> 8) / 16777216.0f;
}

/* Values satisfying (or, with violate, breaking) the conditions c of one variable. */
static float value(unsigned c, bool violate) {
  float m = 0.5f + rnd01();
  if (c & RW_COND_INT) return (float)(1 + (int)(rnd01() * 3)) + (violate ? 0.5f : 0.0f);
  if (c & (RW_COND_POS | RW_COND_NONNEG)) return violate ? -m : m;
  return rnd01() < 0.5f ? -m : m;
}

typedef struct {
  ecg_graph *g;
  const rw_rule *r;
  bool violate;
  int var[RW_MAX_VARS];          /* tensor per variable, -1 not yet made */
  char key[RW_MAX_TERMS][160];   /* identical subterms are one node */
  int made[RW_MAX_TERMS], n_made;
} inst;

static void key_of(const rw_rule *r, int ti, char *buf, size_t n) {
  const rw_term *x = &r->terms[ti];
  if (x->var >= 0) { snprintf(buf, n, "v%d", x->var); return; }
  if (x->op == ECG_OP_NONE) { snprintf(buf, n, "%.17g", x->num); return; }
  size_t off = (size_t)snprintf(buf, n, "%d(", (int)x->op);
  for (int k = 0; k < x->n_kids && off + 1 < n; k++) {
    key_of(r, x->kids[k], buf + off, n - off);
    off += strlen(buf + off);
    if (off + 1 < n) buf[off++] = ',', buf[off] = 0;
  }
  if (off + 1 < n) buf[off++] = ')', buf[off] = 0;
}

static int add_input(ecg_graph *g, const char *name, int rank, const int64_t *dims) {
  int t = ecg_add_tensor(g, name, ECG_FLOAT, rank, dims);
  g->inputs = realloc(g->inputs, sizeof *g->inputs * (g->n_inputs + 1));
  g->inputs[g->n_inputs++] = t;
  return t;
}

static int add_const(ecg_graph *g, const char *name, int rank, const int64_t *dims, unsigned c, bool violate,
                     const double *fixed) {
  float v[N * N];
  int t = ecg_add_tensor(g, name, ECG_FLOAT, rank, dims);
  int64_t n = ecg_tensor_numel(g->tensors[t]);
  for (int64_t i = 0; i < n; i++) v[i] = fixed ? (float)*fixed : value(c, violate);
  ecg_tensor_set_data(g->tensors[t], v, sizeof *v * (size_t)n);
  return t;
}

/* Source term ti as a tensor of the graph. */
static int make(inst *s, int ti) {
  const rw_term *x = &s->r->terms[ti];
  ecg_graph *g = s->g;
  char name[256], key[160];
  int64_t dims[2] = {N, N};
  if (x->var >= 0) {
    if (s->var[x->var] >= 0) return s->var[x->var];
    unsigned c = s->r->cond[x->var];
    bool scalar = (c & RW_COND_SCALAR) && !s->violate;
    snprintf(name, sizeof name, "%s_%s%s", s->r->name, s->r->vars[x->var], s->violate ? "_v" : "");
    if (c == RW_COND_NONNEG) { /* Relu(input): nonneg by the registry; violated: the input itself */
      char rn[300];
      int in = add_input(g, name, 2, dims);
      if (s->violate) return s->var[x->var] = in;
      snprintf(rn, sizeof rn, "%s_relu", name);
      int t = ecg_add_tensor(g, rn, ECG_FLOAT, -1, NULL);
      ecg_add_node(g, rn, "Relu", "", 18, 1, &in, 1, &t);
      return s->var[x->var] = t;
    }
    return s->var[x->var] = c ? add_const(g, name, scalar ? 0 : 2, dims, c, s->violate, NULL) : add_input(g, name, 2, dims);
  }
  key_of(s->r, ti, key, sizeof key);
  for (int i = 0; i < s->n_made; i++)
    if (!strcmp(s->key[i], key)) return s->made[i];
  snprintf(name, sizeof name, "%s%s_t%d", s->r->name, s->violate ? "_v" : "", ti);
  int t;
  if (x->op == ECG_OP_NONE) {
    t = add_const(g, name, 0, NULL, 0, false, &x->num);
  } else {
    int in[RW_MAX_KIDS + 1], n_in = x->n_kids;
    for (int k = 0; k < x->n_kids; k++) in[k] = make(s, x->kids[k]);
    const ecg_op_info *op = ecg_op_get(x->op);
    if (ecg_reduction_of(x->op)) { /* last axis, keepdims 1, axes as an input (opset 18) */
      char an[300];
      int64_t one = 1, last = -1;
      snprintf(an, sizeof an, "%s_axes", name);
      in[n_in] = ecg_add_tensor(g, an, ECG_INT64, 1, &one);
      ecg_tensor_set_data(g->tensors[in[n_in++]], &last, sizeof last);
    }
    t = ecg_add_tensor(g, name, ECG_FLOAT, -1, NULL);
    ecg_add_node(g, name, op->name, "", 18, n_in, in, 1, &t);
  }
  if (s->n_made < RW_MAX_TERMS) {
    snprintf(s->key[s->n_made], sizeof s->key[0], "%s", key);
    s->made[s->n_made++] = t;
  }
  return t;
}

int main(int argc, char **argv) {
  bool violate = argc > 1 && !strcmp(argv[1], "--violate");
  if (argc < 2 + violate) { fprintf(stderr, "usage: mkrules [--violate] OUT.ecg [RULES...]\n"); return 2; }
  const char *out = argv[1 + violate];
  rw_rules rs = {0};
  ecg_err e = {0};
  int rc = rw_rules_builtin(&rs, &e);
  for (int i = 2 + violate; i < argc && rc == ECG_OK; i++) rc = rw_rules_load(&rs, argv[i], &e);
  if (rc != ECG_OK) { fprintf(stderr, "mkrules: %s\n", e.msg); rw_rules_free(&rs); return 1; }
  ecg_graph *g = ecg_graph_new();
  g->name = strdup("rules");
  g->opset = 18;
  for (int k = 0; k < rs.n; k++) {
    const rw_rule *r = &rs.v[k];
    unsigned any = 0;
    for (int v = 0; v < r->n_vars; v++) any |= r->cond[v] & ~(unsigned)RW_COND_CONST;
    if (violate && !any) continue;
    inst s = {.g = g, .r = r, .violate = violate};
    memset(s.var, -1, sizeof s.var);
    int root = make(&s, r->src);
    char name[256];
    snprintf(name, sizeof name, "%c_%s", violate ? 'n' : 'y', r->name);
    int y = ecg_add_tensor(g, name, ECG_FLOAT, -1, NULL);
    ecg_add_node(g, name, "Identity", "", 18, 1, &root, 1, &y);
    g->outputs = realloc(g->outputs, sizeof *g->outputs * (g->n_outputs + 1));
    g->outputs[g->n_outputs++] = y;
  }
  rw_rules_free(&rs);
  rc = ecg_infer_shapes(g, &e);
  if (rc == ECG_OK) rc = ecg_validate(g, &e);
  if (rc == ECG_OK) rc = ecg_write_path(out, g, 0, &e);
  if (rc != ECG_OK) fprintf(stderr, "mkrules: %s\n", e.msg);
  ecg_graph_free(g);
  return rc;
}
