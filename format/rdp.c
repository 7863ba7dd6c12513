/* libecg: rank and dimension propagation (RDP), SOD² (Niu dissertation ch. 5) §5.4.1,
 * Table 5.3 and Algorithm 2, over the lattice undef > {constant, symbol, operator-inferred
 * expression} > nac.
 *
 * Numeric shape inference (registry.c) runs first and fixes every rank and every dim it can
 * compute as a number; RDP then gives every other dim a lattice value: a symbol of a graph
 * input, an expression over those symbols (a polynomial with integer coefficients whose
 * atoms are symbols and floor divisions (E/K) by a positive integer), nac (no such
 * expression: a data-dependent size) or undef (nothing determined it). Small integer
 * tensors (at most RDP_MAX_VALS elements, rank <= 1: the Shape -> Gather -> Unsqueeze ->
 * Concat -> Reshape chains of real exports) carry their values in the same lattice, which
 * is how a Reshape's target made of symbolic dims is recovered.
 *
 * Transfer functions are registry properties (ops.def column rdp): ecg_rdp_generic for
 * most operators, which runs the operator's own shape function (and reference evaluation,
 * for small integer outputs) at three probe bindings of the symbols and keeps, for each
 * output dim or value, the input dim or value that equals it at every probe (a constant
 * when it does not change); the others compute expressions (convolution arithmetic, sums,
 * quotients, values of shape tensors). Forward and backward sweeps alternate to a fixed
 * point (bounded: the lattice has height 3 per element). Ranks: numeric inference already
 * knows every rank (it refuses an unknown one), so the rank lattice is trivial here.
 *
 * The meet: undef ^ x = x; equal values meet to themselves; a number that numeric
 * inference (or the model's declared shape) fixed stays that number; two different
 * expressions meet to nac (no equality proof is attempted beyond the canonical form:
 * terms combined and ordered, an added constant folded into a single floor division, exact
 * quotients divided out). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_common.h"

#define SX_T 8 /* terms of a polynomial */
#define SX_F 4 /* factors of a term */
#define RDP_PROBES 3

enum { SX_UNDEF = 0, SX_VAL, SX_NAC };

typedef struct {
  int64_t c;
  int nf;
  int f[SX_F]; /* atom ids, ascending */
} sx_mono;

/** A lattice value: UNDEF, NAC, or VAL: sum of n terms (0 terms = the constant 0). */
typedef struct {
  int kind;
  int n;
  sx_mono t[SX_T];
} sx;

typedef struct {
  int fdiv;   /* 0: a symbol; 1: floor(arg / k) */
  int vsym;   /* a value-determined symbol (ISVDOS output dim), not a graph input's */
  char *name; /* symbol name (fdiv: NULL) */
  sx arg;
  int64_t k;
} sx_atom;

struct ecg_rdp {
  ecg_graph *g;
  sx_atom *atoms;
  int n_atoms, cap_atoms;
  int *nval;                   /* per tensor: values carried (-1: none) */
  sx (*dims)[ECG_MAX_RANK];    /* per tensor */
  sx (*vals)[RDP_MAX_VALS];    /* per tensor */
  int *producer;
  bool edo_nac; /* phase 2: execution-determined outputs still undef become nac */
  bool oom;
  const ecg_rdp_hint *hints; /* input symbols known to be multiples (ecg_rdp_run_hinted) */
  int n_hints;
  /* Value-determined symbols proved equal to a number (a model-declared dim downstream):
   * name -> value, kept across the reruns of ecg_rdp_run_hinted. */
  char **bind_name;
  int64_t *bind_val;
  int n_bind, cap_bind, new_binds;
};

/* ---------------------------------------------------------------- expressions */

static sx sx_k(int64_t v) {
  sx x = {.kind = SX_VAL};
  if (v) { x.n = 1; x.t[0].c = v; }
  return x;
}
static sx sx_nac(void) { return (sx){.kind = SX_NAC}; }
static sx sx_atomv(int id) {
  sx x = {.kind = SX_VAL, .n = 1};
  x.t[0].c = 1;
  x.t[0].nf = 1;
  x.t[0].f[0] = id;
  return x;
}
static bool sx_const(const sx *x, int64_t *v) {
  if (x->kind != SX_VAL) return false;
  if (x->n == 0) { *v = 0; return true; }
  if (x->n == 1 && x->t[0].nf == 0) { *v = x->t[0].c; return true; }
  return false;
}
static int mono_cmp(const sx_mono *a, const sx_mono *b) {
  if (a->nf != b->nf) return a->nf < b->nf ? -1 : 1;
  for (int i = 0; i < a->nf; i++)
    if (a->f[i] != b->f[i]) return a->f[i] < b->f[i] ? -1 : 1;
  return 0;
}
static bool sx_eq(const sx *a, const sx *b) {
  if (a->kind != b->kind) return false;
  if (a->kind != SX_VAL) return true;
  if (a->n != b->n) return false;
  for (int i = 0; i < a->n; i++)
    if (a->t[i].c != b->t[i].c || mono_cmp(&a->t[i], &b->t[i])) return false;
  return true;
}
/* Add term m into x (canonical: sorted, combined, no zero coefficients). */
static void sx_add_term(sx *x, const sx_mono *m) {
  if (x->kind != SX_VAL || m->c == 0) return;
  int i = 0;
  while (i < x->n && mono_cmp(&x->t[i], m) < 0) i++;
  if (i < x->n && !mono_cmp(&x->t[i], m)) {
    if (__builtin_add_overflow(x->t[i].c, m->c, &x->t[i].c)) { *x = sx_nac(); return; }
    if (x->t[i].c == 0) { memmove(&x->t[i], &x->t[i + 1], (size_t)(x->n - i - 1) * sizeof *x->t); x->n--; }
    return;
  }
  if (x->n == SX_T) { *x = sx_nac(); return; }
  memmove(&x->t[i + 1], &x->t[i], (size_t)(x->n - i) * sizeof *x->t);
  x->t[i] = *m;
  x->n++;
}
static sx sx_norm(ecg_rdp *r, sx x);
static sx sx_add(ecg_rdp *r, sx a, const sx *b, int64_t sign) {
  if (a.kind != SX_VAL || b->kind != SX_VAL) return a.kind == SX_UNDEF || b->kind == SX_UNDEF ? (sx){0} : sx_nac();
  for (int i = 0; i < b->n; i++) {
    sx_mono m = b->t[i];
    if (__builtin_mul_overflow(m.c, sign, &m.c)) return sx_nac();
    sx_add_term(&a, &m);
  }
  return sx_norm(r, a);
}
static sx sx_mul(ecg_rdp *r, const sx *a, const sx *b) {
  if (a->kind != SX_VAL || b->kind != SX_VAL) return a->kind == SX_UNDEF || b->kind == SX_UNDEF ? (sx){0} : sx_nac();
  sx x = sx_k(0);
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++) {
      sx_mono m = {0};
      if (a->t[i].nf + b->t[j].nf > SX_F || __builtin_mul_overflow(a->t[i].c, b->t[j].c, &m.c)) return sx_nac();
      int p = 0, q = 0;
      while (p < a->t[i].nf || q < b->t[j].nf)
        m.f[m.nf++] = q >= b->t[j].nf || (p < a->t[i].nf && a->t[i].f[p] <= b->t[j].f[q]) ? a->t[i].f[p++] : b->t[j].f[q++];
      sx_add_term(&x, &m);
      if (x.kind != SX_VAL) return x;
    }
  return sx_norm(r, x);
}
static int64_t floordiv(int64_t a, int64_t k) { return a / k - ((a % k) != 0 && ((a < 0) != (k < 0))); }
static int atom_intern(ecg_rdp *r, int fdiv, const char *name, const sx *arg, int64_t k) {
  for (int i = 0; i < r->n_atoms; i++) {
    const sx_atom *a = &r->atoms[i];
    if (a->fdiv != fdiv) continue;
    if (!fdiv && !strcmp(a->name, name)) return i;
    if (fdiv && a->k == k && sx_eq(&a->arg, arg)) return i;
  }
  if (r->n_atoms == r->cap_atoms) {
    int cap = r->cap_atoms ? 2 * r->cap_atoms : 16;
    sx_atom *na = realloc(r->atoms, (size_t)cap * sizeof *na);
    if (!na) { r->oom = true; return -1; }
    r->atoms = na;
    r->cap_atoms = cap;
  }
  sx_atom *a = &r->atoms[r->n_atoms];
  memset(a, 0, sizeof *a);
  a->fdiv = fdiv;
  if (!fdiv) {
    a->name = strdup(name);
    if (!a->name) { r->oom = true; return -1; }
  } else {
    a->arg = *arg;
    a->k = k;
  }
  return r->n_atoms++;
}
/** floor(x / k), k > 0: exact where every coefficient divides; else one atom. */
static sx sx_fdiv(ecg_rdp *r, const sx *x, int64_t k) {
  if (x->kind != SX_VAL || k <= 0) return x->kind == SX_UNDEF ? (sx){0} : sx_nac();
  if (k == 1) return *x;
  int64_t c0 = 0;
  bool rest_div = true;
  for (int i = 0; i < x->n; i++) {
    if (x->t[i].nf == 0) c0 = x->t[i].c;
    else if (x->t[i].c % k) rest_div = false;
  }
  if (rest_div) { /* floor((k*q + c0) / k) = q + floor(c0 / k) */
    sx q = {.kind = SX_VAL};
    for (int i = 0; i < x->n; i++)
      if (x->t[i].nf) { sx_mono m = x->t[i]; m.c /= k; sx_add_term(&q, &m); }
    sx c = sx_k(floordiv(c0, k));
    return sx_add(r, q, &c, 1);
  }
  /* floor(floor(a / k1) / k) = floor(a / (k1 k)) (constants are already folded in) */
  if (x->n == 1 && x->t[0].c == 1 && x->t[0].nf == 1 && r->atoms[x->t[0].f[0]].fdiv) {
    const sx_atom *a = &r->atoms[x->t[0].f[0]];
    int64_t kk;
    sx arg = a->arg;
    if (!__builtin_mul_overflow(a->k, k, &kk)) return sx_fdiv(r, &arg, kk);
  }
  int id = atom_intern(r, 1, NULL, x, k);
  return id < 0 ? sx_nac() : sx_atomv(id);
}
/* Canonical form: a lone floor-division atom plus a constant c becomes one atom,
 * floor((E + c*K) / K), so floor((H-1)/2)+1 and ceil(H/2) = floor((H+1)/2) agree. */
static sx sx_norm(ecg_rdp *r, sx x) {
  if (x.kind != SX_VAL || x.n != 2 || x.t[0].nf != 0 || x.t[1].nf != 1 || x.t[1].c != 1) return x;
  const sx_atom *a = &r->atoms[x.t[1].f[0]];
  if (!a->fdiv) return x;
  int64_t ck;
  if (__builtin_mul_overflow(x.t[0].c, a->k, &ck)) return x;
  sx ek = sx_k(ck), arg = a->arg;
  int64_t k = a->k;
  sx_add_term(&arg, &ek.t[0]);
  if (arg.kind != SX_VAL) return x;
  return sx_fdiv(r, &arg, k);
}
/** a / b exactly (Reshape's -1): b a constant or a single term dividing every term of a. */
static sx sx_div_exact(ecg_rdp *r, const sx *a, const sx *b) {
  if (a->kind != SX_VAL || b->kind != SX_VAL) return a->kind == SX_UNDEF || b->kind == SX_UNDEF ? (sx){0} : sx_nac();
  int64_t k;
  if (sx_const(b, &k)) return k > 0 ? sx_fdiv(r, a, k) : sx_nac();
  if (b->n != 1) return sx_nac();
  const sx_mono *d = &b->t[0];
  sx q = {.kind = SX_VAL};
  for (int i = 0; i < a->n; i++) {
    sx_mono m = {.c = a->t[i].c};
    if (d->c == 0 || m.c % d->c) return sx_nac();
    m.c /= d->c;
    int p = 0;
    for (int j = 0; j < a->t[i].nf; j++) {
      if (p < d->nf && a->t[i].f[j] == d->f[p]) p++;
      else m.f[m.nf++] = a->t[i].f[j];
    }
    if (p < d->nf) return sx_nac();
    sx_add_term(&q, &m);
  }
  return sx_norm(r, q);
}
/* Value of x under probe p (symbol j = 64 * (2 + j % 5 + 5 p)); *ok false on overflow. */
static int64_t probe_sym(const ecg_rdp *r, int id, int p) {
  int j = 0;
  for (int i = 0; i < id; i++) j += !r->atoms[i].fdiv;
  return 64 * (2 + j % 5 + 5 * p);
}
static int64_t sx_eval(const ecg_rdp *r, const sx *x, int p, bool *ok) {
  int64_t v = 0;
  if (x->kind != SX_VAL) { *ok = false; return 0; }
  for (int i = 0; i < x->n; i++) {
    int64_t t = x->t[i].c;
    for (int j = 0; j < x->t[i].nf; j++) {
      const sx_atom *a = &r->atoms[x->t[i].f[j]];
      int64_t f = a->fdiv ? floordiv(sx_eval(r, &a->arg, p, ok), a->k) : probe_sym(r, x->t[i].f[j], p);
      if (__builtin_mul_overflow(t, f, &t)) *ok = false;
    }
    if (__builtin_add_overflow(v, t, &v)) *ok = false;
  }
  return v;
}
static int sx_str(const ecg_rdp *r, const sx *x, char *buf, size_t n) {
  size_t o = 0;
#define PUT(...) (o += (size_t)snprintf(buf + (o < n ? o : n), o < n ? n - o : 0, __VA_ARGS__))
  if (x->kind == SX_NAC) return PUT("?"), (int)o;
  if (x->kind == SX_UNDEF) return PUT("?"), (int)o;
  if (x->n == 0) return PUT("0"), (int)o;
  for (int q = 0; q < x->n; q++) { /* the constant term (first when present) printed last */
    int i = x->t[0].nf == 0 ? (q + 1) % x->n : q;
    const sx_mono *m = &x->t[i];
    int64_t c = m->c;
    if (q && c >= 0) PUT("+");
    if (c < 0 && m->nf) { PUT("-"); c = -c; }
    if (m->nf == 0 || c != 1) PUT("%lld%s", (long long)c, m->nf ? "*" : "");
    for (int j = 0; j < m->nf; j++) {
      const sx_atom *a = &r->atoms[m->f[j]];
      if (j) PUT("*");
      if (a->fdiv) {
        char sub[256];
        sx_str(r, &a->arg, sub, sizeof sub);
        PUT(a->arg.n > 1 ? "((%s)/%lld)" : "(%s/%lld)", sub, (long long)a->k);
      } else {
        PUT("%s", a->name);
      }
    }
  }
#undef PUT
  return (int)o;
}

/* ---------------------------------------------------------------- lattice updates */

/* Meet *cur with x; returns 1 when *cur changed. A number stays (numeric inference or the
 * model's declaration fixed it). */
static int meet(sx *cur, const sx *x) {
  int64_t v;
  if (x->kind == SX_UNDEF || cur->kind == SX_NAC) return 0;
  if (cur->kind == SX_UNDEF) { *cur = *x; return 1; }
  if (sx_eq(cur, x)) return 0;
  if (sx_const(cur, &v)) return 0;
  *cur = sx_nac();
  return 1;
}
/* The atom id when x is exactly one value-determined symbol, else -1. */
static int bare_vsym(const ecg_rdp *r, const sx *x) {
  if (x->kind != SX_VAL || x->n != 1 || x->t[0].c != 1 || x->t[0].nf != 1) return -1;
  int a = x->t[0].f[0];
  return r->atoms[a].vsym ? a : -1;
}
static int64_t bound_value(const ecg_rdp *r, const char *name) {
  for (int i = 0; i < r->n_bind; i++)
    if (!strcmp(r->bind_name[i], name)) return r->bind_val[i];
  return -1;
}
/* Record that value-determined symbol atom a equals the number v (SOD² §5.4.1: a dim fixed
 * by the model's declaration determines the ISVDOS dim that flows into it). */
static void bind_vsym(ecg_rdp *r, int a, int64_t v) {
  if (v < 0 || bound_value(r, r->atoms[a].name) >= 0) return;
  if (r->n_bind == r->cap_bind) {
    int cap = r->cap_bind ? 2 * r->cap_bind : 8;
    char **nn = realloc(r->bind_name, (size_t)cap * sizeof *nn);
    if (!nn) { r->oom = true; return; }
    r->bind_name = nn;
    int64_t *nv = realloc(r->bind_val, (size_t)cap * sizeof *nv);
    if (!nv) { r->oom = true; return; }
    r->bind_val = nv;
    r->cap_bind = cap;
  }
  char *d = strdup(r->atoms[a].name);
  if (!d) { r->oom = true; return; }
  r->bind_name[r->n_bind] = d;
  r->bind_val[r->n_bind++] = v;
  r->new_binds++;
}
static int set_dim(ecg_rdp *r, int t, int i, sx x) {
  if (t < 0 || i < 0 || i >= (int)r->g->tensors[t]->n_dims) return 0;
  int64_t c;
  int a;
  sx *cur = &r->dims[t][i];
  if (sx_const(cur, &c) && (a = bare_vsym(r, &x)) >= 0) bind_vsym(r, a, c);
  else if (sx_const(&x, &c) && (a = bare_vsym(r, cur)) >= 0) { bind_vsym(r, a, c); return 0; } /* next round */
  return meet(cur, &x);
}
static int set_val(ecg_rdp *r, int t, int i, sx x) {
  if (t < 0 || i < 0 || i >= r->nval[t]) return 0;
  return meet(&r->vals[t][i], &x);
}
static int in_id(const ecg_node *n, int i) { return i < (int)n->n_inputs ? n->inputs[i] : -1; }
static int out_id(const ecg_node *n, int i) { return i < (int)n->n_outputs ? n->outputs[i] : -1; }
static int rank_of(const ecg_rdp *r, int t) {
  return t >= 0 && r->g->tensors[t]->shape_known ? (int)r->g->tensors[t]->n_dims : -1;
}
static bool all_val(const sx *x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i].kind != SX_VAL) return false;
  return true;
}
static sx numel_of(ecg_rdp *r, int t, int skip_from, int skip_to) {
  sx p = sx_k(1);
  for (int i = 0; i < rank_of(r, t); i++)
    if (i < skip_from || i >= skip_to) p = sx_mul(r, &p, &r->dims[t][i]);
  return p;
}

/* ---------------------------------------------------------------- probing */

/* A scratch one-node graph holding n with its inputs at probe p: constants copied, dims
 * and carried values evaluated. NULL when an input dim or value is undefined (the probe
 * waits) or on out of memory; *wait set in the first case. */
static ecg_graph *probe_graph(ecg_rdp *r, const ecg_node *n, int p, bool *wait) {
  ecg_graph *g = r->g, *s = ecg_graph_new();
  if (!s) { r->oom = true; return NULL; }
  s->opset = g->opset;
  int ins[64], outs[64];
  int ni = n->n_inputs < 64 ? (int)n->n_inputs : 64, no = n->n_outputs < 64 ? (int)n->n_outputs : 64;
  for (int i = 0; i < ni; i++) {
    int t = n->inputs[i];
    ins[i] = -1;
    if (t < 0) continue;
    const ecg_tensor *x = g->tensors[t];
    int rk = rank_of(r, t);
    int64_t d[ECG_MAX_RANK];
    for (int k = 0; k < rk; k++) {
      bool ok = true;
      if (r->dims[t][k].kind == SX_UNDEF) { *wait = true; goto fail; }
      /* a nac dim gets a value no symbol takes, so nothing can match it */
      d[k] = r->dims[t][k].kind == SX_NAC ? 64 * 37 + 1 + 2 * (t % 7) + p : sx_eval(r, &r->dims[t][k], p, &ok);
      if (!ok || d[k] < 0) goto fail;
    }
    ins[i] = ecg_add_tensor(s, x->name, x->dtype, rk, d);
    if (ins[i] < 0) { r->oom = true; goto fail; }
    ecg_tensor *y = s->tensors[ins[i]];
    if (x->is_const) {
      if (ecg_tensor_set_data(y, x->data.data, x->data.len)) { r->oom = true; goto fail; }
    } else if (r->nval[t] >= 0 && all_val(r->vals[t], r->nval[t])) {
      int64_t v[RDP_MAX_VALS];
      size_t es = ecg_dtype_size(x->dtype);
      unsigned char buf[RDP_MAX_VALS * 8];
      for (int k = 0; k < r->nval[t]; k++) {
        bool ok = true;
        v[k] = sx_eval(r, &r->vals[t][k], p, &ok);
        if (!ok) goto fail;
        ecg_store_i64(buf, x->dtype, k, v[k]);
      }
      if (ecg_tensor_set_data(y, buf, (size_t)r->nval[t] * es)) { r->oom = true; goto fail; }
    }
  }
  for (int i = 0; i < no; i++) {
    int t = n->outputs[i];
    outs[i] = t < 0 ? -1 : ecg_add_tensor(s, g->tensors[t]->name, g->tensors[t]->dtype, -1, NULL);
    if (t >= 0 && outs[i] < 0) { r->oom = true; goto fail; }
  }
  int k = ecg_add_node(s, n->name, n->op_type, n->domain, n->opset, ni, ins, no, outs);
  if (k < 0 || ecg_node_copy_attrs(s->nodes[k], n) != ECG_OK) { r->oom = true; goto fail; }
  return s;
fail:
  ecg_graph_free(s);
  return NULL;
}

/* Output dims (and, for small integer outputs of a foldable operator whose inputs are all
 * known, values) of n at each probe. Returns false when some probe cannot run. */
typedef struct {
  int rank[RDP_PROBES][16];
  int64_t dim[RDP_PROBES][16][ECG_MAX_RANK];
  int nval[RDP_PROBES][16];
  int64_t val[RDP_PROBES][16][RDP_MAX_VALS];
} probe_out;
static bool run_probes(ecg_rdp *r, const ecg_node *n, probe_out *po) {
  const ecg_op_info *op = ecg_node_op(n);
  if (!op || n->n_outputs > 16 || n->n_inputs > 64) return false;
  for (int p = 0; p < RDP_PROBES; p++) {
    bool wait = false;
    ecg_graph *s = probe_graph(r, n, p, &wait);
    if (!s) return false;
    ecg_node *m = s->nodes[0];
    ecg_err e;
    bool ok = op->infer(s, m, &e) == ECG_OK;
    bool all_data = ecg_op_foldable(op);
    for (size_t i = 0; ok && i < m->n_inputs; i++)
      if (m->inputs[i] >= 0 && !s->tensors[m->inputs[i]]->is_const) all_data = false;
    for (size_t i = 0; ok && i < m->n_outputs; i++) {
      const ecg_tensor *t = ecg_node_output(s, m, (int)i);
      po->nval[p][i] = -1;
      po->rank[p][i] = t ? ecg_tensor_dims(t, po->dim[p][i]) : -1;
      if (t && t->dtype != ECG_INT64 && t->dtype != ECG_INT32) all_data = false;
      int64_t ne = t ? ecg_tensor_numel(t) : -1;
      if (t && (ne < 0 || ne > RDP_MAX_VALS || t->n_dims > 1)) all_data = false;
    }
    if (ok && all_data && op->eval(s, m, &e) == ECG_OK) {
      for (size_t i = 0; i < m->n_outputs; i++) {
        const ecg_tensor *t = ecg_node_output(s, m, (int)i);
        if (!t || !t->is_const) continue;
        int64_t ne = ecg_tensor_numel(t);
        po->nval[p][i] = (int)ne;
        for (int64_t k = 0; k < ne; k++) po->val[p][i][k] = ecg_const_i64(t, k);
      }
    }
    ecg_graph_free(s);
    if (!ok) return false;
  }
  return true;
}

/* The lattice value among n's input dims and values equal to ys at every probe (or the
 * constant when ys does not change), else nac. */
static sx match(ecg_rdp *r, const ecg_node *n, const int64_t *ys) {
  bool same = true;
  for (int p = 1; p < RDP_PROBES; p++) same &= ys[p] == ys[0];
  if (same) return sx_k(ys[0]);
  for (size_t i = 0; i < n->n_inputs; i++) {
    int t = n->inputs[i];
    if (t < 0) continue;
    for (int w = 0; w < 2; w++) {
      int cnt = w ? r->nval[t] : rank_of(r, t);
      sx *xs = w ? r->vals[t] : r->dims[t];
      for (int k = 0; k < cnt; k++) {
        if (xs[k].kind != SX_VAL) continue;
        bool eq = true;
        for (int p = 0; p < RDP_PROBES && eq; p++) {
          bool ok = true;
          eq = sx_eval(r, &xs[k], p, &ok) == ys[p] && ok;
        }
        if (eq) return xs[k];
      }
    }
  }
  return sx_nac();
}

int ecg_rdp_generic(ecg_rdp *r, const ecg_node *n, int dir) {
  const ecg_op_info *op = ecg_node_op(n);
  int changed = 0;
  if (!op) return 0;
  if (dir) { /* backward: a one-input elementwise operator has its output's shape */
    if (!(op->props & ECG_PROP_ELEMWISE)) return 0;
    int x = in_id(n, 0), y = out_id(n, 0);
    for (size_t i = 1; i < n->n_inputs; i++)
      if (n->inputs[i] >= 0 && !r->g->tensors[n->inputs[i]]->is_const) return 0;
    if (x < 0 || y < 0 || rank_of(r, x) != rank_of(r, y)) return 0;
    for (int k = 0; k < rank_of(r, y); k++)
      if (r->dims[x][k].kind != SX_VAL || bare_vsym(r, &r->dims[x][k]) >= 0) changed |= set_dim(r, x, k, r->dims[y][k]);
    return changed;
  }
  bool open = false; /* anything left to decide? */
  for (size_t i = 0; i < n->n_outputs; i++) {
    int t = n->outputs[i];
    if (t < 0) continue;
    for (int k = 0; k < rank_of(r, t); k++) open |= r->dims[t][k].kind == SX_UNDEF;
    for (int k = 0; k < r->nval[t]; k++) open |= r->vals[t][k].kind == SX_UNDEF;
  }
  for (size_t i = 0; !open && i < n->n_inputs; i++) /* a value-determined symbol flowing in may meet a number */
    for (int k = 0; n->inputs[i] >= 0 && k < rank_of(r, n->inputs[i]); k++) open |= bare_vsym(r, &r->dims[n->inputs[i]][k]) >= 0;
  if (!open) return 0;
  if (op->dyn == ECG_DYN_EDO) { /* sizes known only after execution: nac once backward
                                  * propagation has had its chance (phase 2) */
    if (!r->edo_nac) return 0;
    for (size_t i = 0; i < n->n_outputs; i++)
      for (int k = 0; n->outputs[i] >= 0 && k < rank_of(r, n->outputs[i]); k++)
        changed |= set_dim(r, n->outputs[i], k, sx_nac());
    return changed;
  }
  static probe_out po; /* large; RDP is single-threaded per process */
  if (!run_probes(r, n, &po)) return 0;
  for (size_t i = 0; i < n->n_outputs && i < 16; i++) {
    int t = n->outputs[i];
    if (t < 0) continue;
    int rk = rank_of(r, t);
    bool ranks = true;
    for (int p = 0; p < RDP_PROBES; p++) ranks &= po.rank[p][i] == rk;
    if (!ranks) continue;
    for (int k = 0; k < rk; k++) {
      int64_t fixed;
      /* a number already here still meets the probe's value: that is how a value-determined
       * symbol flowing into a declared dim gets bound (set_dim) */
      if (r->dims[t][k].kind != SX_UNDEF && !sx_const(&r->dims[t][k], &fixed)) continue;
      int64_t ys[RDP_PROBES];
      bool unknown = false;
      for (int p = 0; p < RDP_PROBES; p++) unknown |= (ys[p] = po.dim[p][i][k]) < 0;
      if (unknown && op->dyn == ECG_DYN_ISVDOS) {
        /* a size that depends on input values (Range's length from run-time start/limit):
         * a value-determined symbol of its own, or the number it was proved equal to */
        char nm[300];
        snprintf(nm, sizeof nm, "%s.%d", r->g->tensors[t]->name, k);
        int64_t v = bound_value(r, nm);
        if (v >= 0) { changed |= set_dim(r, t, k, sx_k(v)); continue; }
        int id = atom_intern(r, 0, nm, NULL, 0);
        if (id < 0) continue;
        r->atoms[id].vsym = 1;
        changed |= set_dim(r, t, k, sx_atomv(id));
        continue;
      }
      changed |= set_dim(r, t, k, match(r, n, ys));
    }
    bool vals = r->nval[t] >= 0;
    for (int p = 0; p < RDP_PROBES; p++) vals &= po.nval[p][i] == r->nval[t];
    for (int k = 0; vals && k < r->nval[t]; k++) {
      if (r->vals[t][k].kind != SX_UNDEF) continue;
      int64_t ys[RDP_PROBES];
      for (int p = 0; p < RDP_PROBES; p++) ys[p] = po.val[p][i][k];
      changed |= set_val(r, t, k, match(r, n, ys));
    }
  }
  return changed;
}

/* ---------------------------------------------------------------- expression transfers */

int ecg_rdp_conv(ecg_rdp *r, const ecg_node *n, int dir) {
  if (dir) return 0;
  ecg_conv_geom gm;
  ecg_err e;
  int x = in_id(n, 0), y = out_id(n, 0), changed = 0;
  if (x < 0 || y < 0 || ecg_conv_geom_resolve(r->g, n, &gm, &e) != ECG_OK || rank_of(r, y) != gm.sp + 2)
    return ecg_rdp_generic(r, n, dir);
  changed |= set_dim(r, y, 0, r->dims[x][0]);
  if (gm.pool) changed |= set_dim(r, y, 1, r->dims[x][1]);
  for (int k = 0; k < gm.sp; k++) {
    const sx *in = &r->dims[x][2 + k];
    int64_t dk = (gm.k[k] - 1) * gm.d[k] + 1;
    sx o;
    if (gm.transposed) {
      if (gm.auto_pad != ECG_PAD_NOTSET || ecg_attr_find(n, "output_shape") || gm.pb[k] < 0) continue;
      sx s = sx_k(gm.s[k]), c = sx_k(-gm.s[k] + gm.out_pad[k] + dk - gm.pb[k] - gm.pe[k]);
      o = sx_mul(r, in, &s);
      o = sx_add(r, o, &c, 1);
    } else if (gm.auto_pad == ECG_PAD_SAME_UPPER || gm.auto_pad == ECG_PAD_SAME_LOWER) {
      sx c = sx_k(gm.s[k] - 1);
      o = sx_add(r, *in, &c, 1);
      o = sx_fdiv(r, &o, gm.s[k]);
    } else {
      if (gm.pb[k] < 0 || gm.pe[k] < 0) continue;
      int64_t ck = gm.pb[k] + gm.pe[k] - dk + (gm.ceil_mode ? gm.s[k] - 1 : 0);
      sx c = sx_k(ck), one = sx_k(1);
      o = sx_add(r, *in, &c, 1);
      o = sx_fdiv(r, &o, gm.s[k]);
      o = sx_add(r, o, &one, 1);
    }
    if (in->kind == SX_VAL) changed |= set_dim(r, y, 2 + k, o);
  }
  return changed | ecg_rdp_generic(r, n, dir);
}

int ecg_rdp_concat(ecg_rdp *r, const ecg_node *n, int dir) {
  int y = out_id(n, 0), rk = rank_of(r, y), ax, changed = 0;
  if (y < 0 || !ops_axis(ecg_attr_i(n, "axis", 0), rk, &ax)) return ecg_rdp_generic(r, n, dir);
  if (dir) {
    /* one input with an unknown extent on the axis: the output's minus the others' */
    int miss = -1;
    sx rest = r->dims[y][ax];
    for (size_t i = 0; i < n->n_inputs; i++) {
      int t = n->inputs[i];
      if (t < 0 || rank_of(r, t) != rk) return 0;
      if (r->dims[t][ax].kind != SX_VAL) {
        if (miss >= 0) return 0;
        miss = t;
      } else rest = sx_add(r, rest, &r->dims[t][ax], -1);
    }
    return miss >= 0 && rest.kind == SX_VAL ? set_dim(r, miss, ax, rest) : 0;
  }
  sx sum = sx_k(0);
  int nv = 0;
  for (size_t i = 0; i < n->n_inputs; i++) {
    int t = n->inputs[i];
    if (t < 0 || rank_of(r, t) != rk) return ecg_rdp_generic(r, n, dir);
    sum = sx_add(r, sum, &r->dims[t][ax], 1);
    for (int k = 0; k < rk; k++)
      if (k != ax) changed |= set_dim(r, y, k, r->dims[t][k]);
    if (r->nval[y] >= 0 && rk == 1) {
      int m = r->nval[t];
      if (m < 0 && r->g->tensors[t]->is_const) m = 0;
      for (int k = 0; k < (m > 0 ? m : 0) && nv + k < r->nval[y]; k++) changed |= set_val(r, y, nv + k, r->vals[t][k]);
      nv += m > 0 ? m : 0;
    }
  }
  changed |= set_dim(r, y, ax, sum);
  return changed | ecg_rdp_generic(r, n, dir);
}

/* Reshape / Flatten: the one dim the others leave is the element count's quotient. */
static int quotient_dim(ecg_rdp *r, int x, int y) {
  int ry = rank_of(r, y), miss = -1;
  sx known = sx_k(1);
  for (int k = 0; k < ry; k++) {
    if (r->dims[y][k].kind == SX_VAL) known = sx_mul(r, &known, &r->dims[y][k]);
    else if (miss >= 0) return 0;
    else miss = k;
  }
  if (miss < 0) return 0;
  sx all = numel_of(r, x, 0, 0);
  if (all.kind != SX_VAL) return 0;
  return set_dim(r, y, miss, sx_div_exact(r, &all, &known));
}

int ecg_rdp_reshape(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), s = in_id(n, 1), y = out_id(n, 0), changed = 0;
  if (x < 0 || y < 0) return 0;
  if (dir) return quotient_dim(r, y, x); /* the input's one unknown dim */
  int ry = rank_of(r, y);
  bool allowzero = ecg_attr_i(n, "allowzero", 0) != 0;
  if (s >= 0 && r->nval[s] == ry) {
    for (int k = 0; k < ry; k++) {
      int64_t v;
      const sx *sv = &r->vals[s][k];
      if (sv->kind != SX_VAL) continue;
      if (!sx_const(sv, &v) || v > 0 || (v == 0 && allowzero)) changed |= set_dim(r, y, k, *sv);
      else if (v == 0 && k < rank_of(r, x)) changed |= set_dim(r, y, k, r->dims[x][k]);
    }
  }
  changed |= quotient_dim(r, x, y);
  return changed | ecg_rdp_generic(r, n, dir);
}

int ecg_rdp_flatten(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), y = out_id(n, 0), rx = rank_of(r, x);
  int64_t ax = ecg_attr_i(n, "axis", 1);
  if (ax < 0) ax += rx;
  if (dir || x < 0 || y < 0 || rank_of(r, y) != 2 || ax < 0 || ax > rx) return dir ? 0 : ecg_rdp_generic(r, n, dir);
  return set_dim(r, y, 0, numel_of(r, x, (int)ax, rx)) | set_dim(r, y, 1, numel_of(r, x, 0, (int)ax));
}

/* ISDO: the value of Shape is its input's dims (start/end of Shape-15 included). */
int ecg_rdp_shape(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), y = out_id(n, 0), rx = rank_of(r, x), changed = 0;
  if (dir || x < 0 || y < 0) return 0;
  int64_t st = ecg_attr_i(n, "start", 0), en = ecg_attr_i(n, "end", rx);
  if (st < 0) st += rx;
  if (en < 0) en += rx;
  st = st < 0 ? 0 : st > rx ? rx : st;
  en = en < 0 ? 0 : en > rx ? rx : en;
  for (int64_t k = st; k < en; k++) changed |= set_val(r, y, (int)(k - st), r->dims[x][k]);
  return changed;
}

/* ISDO: the value of Size is its input's element count. */
int ecg_rdp_size(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), y = out_id(n, 0);
  if (dir || x < 0 || y < 0 || r->nval[y] != 1) return 0;
  return set_val(r, y, 0, numel_of(r, x, 0, 0));
}

int ecg_rdp_gather(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), ix = in_id(n, 1), y = out_id(n, 0), changed = 0;
  if (!dir && x >= 0 && y >= 0 && ix >= 0 && r->nval[x] >= 0 && r->nval[y] >= 0 && rank_of(r, x) <= 1) {
    for (int k = 0; k < r->nval[y] && k < r->nval[ix]; k++) {
      int64_t i;
      if (!sx_const(&r->vals[ix][k], &i)) continue;
      if (i < 0) i += r->nval[x];
      if (i >= 0 && i < r->nval[x]) changed |= set_val(r, y, k, r->vals[x][i]);
    }
  }
  return changed | ecg_rdp_generic(r, n, dir);
}

/* Values pass through unchanged (Unsqueeze, Squeeze of a small vector; Cast; Identity). */
static int pass_values(ecg_rdp *r, const ecg_node *n) {
  int x = in_id(n, 0), y = out_id(n, 0), changed = 0;
  if (x < 0 || y < 0 || r->nval[x] != r->nval[y]) return 0;
  for (int k = 0; k < r->nval[y]; k++) changed |= set_val(r, y, k, r->vals[x][k]);
  return changed;
}
int ecg_rdp_unsqueeze(ecg_rdp *r, const ecg_node *n, int dir) {
  return (dir ? 0 : pass_values(r, n)) | ecg_rdp_generic(r, n, dir);
}
int ecg_rdp_squeeze(ecg_rdp *r, const ecg_node *n, int dir) {
  return (dir ? 0 : pass_values(r, n)) | ecg_rdp_generic(r, n, dir);
}
int ecg_rdp_cast(ecg_rdp *r, const ecg_node *n, int dir) {
  return (dir ? 0 : pass_values(r, n)) | ecg_rdp_generic(r, n, dir);
}

/* Slice-10+ with constant starts/ends/axes/steps along an axis of symbolic extent L: the
 * extent of the unclamped range (a negative index counts from L, an end at or beyond 2^40
 * is L, one at or below -2^40 with a negative step is before the first element), e.g.
 * x[..., -4:-1] has 3 and x[..., 1:] has L - 1. The range is clamped only when L is too
 * small for it, which this expression does not model: a consumer checks the extent at run
 * time (tools/lower: the dynamic Slice fails the run when the clamped extent differs). */
static int slice_dims(ecg_rdp *r, const ecg_node *n, int x, int y) {
  int64_t st[ECG_MAX_RANK], en[ECG_MAX_RANK], ax[ECG_MAX_RANK], sp[ECG_MAX_RANK];
  int rk = rank_of(r, x), changed = 0;
  if (n->opset < 10 || rk != rank_of(r, y)) return 0;
  int ns = ecg_const_ints(ecg_node_input(r->g, n, 1), st, ECG_MAX_RANK);
  if (ns <= 0 || ecg_const_ints(ecg_node_input(r->g, n, 2), en, ECG_MAX_RANK) != ns) return 0;
  const ecg_tensor *at = ecg_node_input(r->g, n, 3), *pt = ecg_node_input(r->g, n, 4);
  if (at && ecg_const_ints(at, ax, ECG_MAX_RANK) != ns) return 0;
  if (pt && ecg_const_ints(pt, sp, ECG_MAX_RANK) != ns) return 0;
  const int64_t big = ECG_MAX_ELEMENTS; /* no dim is longer: an end from here on is "to the end" */
  for (int i = 0; i < ns; i++) {
    int a = at ? (int)(ax[i] < 0 ? ax[i] + rk : ax[i]) : i;
    int64_t s = st[i], e = en[i], step = pt ? sp[i] : 1, c;
    if (a < 0 || a >= rk || step == 0 || sx_const(&r->dims[x][a], &c) || r->dims[x][a].kind != SX_VAL) continue;
    /* the range's ends as L * uses + k (uses 0 or 1), so that L cancels out of hi - lo
     * (RDP's normal form folds an added constant into a floor division: (E/K) - 1 and
     * (E/K) - 4 would not) */
    int ulo = 0, uhi = 0;
    int64_t klo, khi;
    if (step > 0) {
      if (s < 0) { ulo = 1; klo = s; } else klo = s;
      if (e >= big) { uhi = 1; khi = 0; } else if (e < 0) { uhi = 1; khi = e; } else khi = e;
    } else {
      if (s >= big) { uhi = 1; khi = -1; } else if (s < 0) { uhi = 1; khi = s; } else khi = s;
      if (e <= -big) klo = -1; else if (e < 0) { ulo = 1; klo = e; } else klo = e;
    }
    int64_t m = step > 0 ? step : -step;
    sx len = sx_k(khi - klo + m - 1);
    if (uhi != ulo) len = sx_add(r, len, &r->dims[x][a], uhi ? 1 : -1);
    if (m > 1) len = sx_fdiv(r, &len, m);
    changed |= set_dim(r, y, a, len);
  }
  return changed;
}

/* Slice: of a small vector's values with constant bounds (step 1); dims by slice_dims, then probing. */
int ecg_rdp_slice(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), y = out_id(n, 0), changed = 0;
  int64_t st[1], en[1];
  if (!dir && x >= 0 && y >= 0 && r->nval[x] >= 0 && r->nval[y] >= 0 && n->opset >= 10 &&
      ecg_const_ints(ecg_node_input(r->g, n, 1), st, 1) == 1 && ecg_const_ints(ecg_node_input(r->g, n, 2), en, 1) == 1) {
    int64_t len = r->nval[x], s0 = st[0] < 0 ? st[0] + len : st[0];
    const ecg_tensor *steps = ecg_node_input(r->g, n, 4);
    int64_t sp[1] = {1};
    if (steps && ecg_const_ints(steps, sp, 1) != 1) sp[0] = 0;
    if (sp[0] == 1 && s0 >= 0)
      for (int k = 0; k < r->nval[y] && s0 + k < len; k++) changed |= set_val(r, y, k, r->vals[x][s0 + k]);
  }
  if (!dir && x >= 0 && y >= 0) changed |= slice_dims(r, n, x, y);
  return changed | ecg_rdp_generic(r, n, dir);
}

/* Add, Sub, Mul, Div on small integer vectors (shape arithmetic): elementwise on values. */
int ecg_rdp_arith(ecg_rdp *r, const ecg_node *n, int dir) {
  int a = in_id(n, 0), b = in_id(n, 1), y = out_id(n, 0), changed = 0;
  const ecg_op_info *op = ecg_node_op(n);
  if (!dir && a >= 0 && b >= 0 && y >= 0 && r->nval[y] >= 0 && r->nval[a] >= 0 && r->nval[b] >= 0 &&
      !ecg_dtype_is_float(r->g->tensors[y]->dtype)) {
    for (int k = 0; k < r->nval[y]; k++) {
      const sx *u = &r->vals[a][r->nval[a] == 1 ? 0 : k], *v = &r->vals[b][r->nval[b] == 1 ? 0 : k];
      if ((r->nval[a] != 1 && k >= r->nval[a]) || (r->nval[b] != 1 && k >= r->nval[b])) break;
      int64_t d;
      sx o;
      if (op->id == ECG_OP_Add) o = sx_add(r, *u, v, 1);
      else if (op->id == ECG_OP_Sub) o = sx_add(r, *u, v, -1);
      else if (op->id == ECG_OP_Mul) o = sx_mul(r, u, v);
      else o = sx_const(v, &d) && d > 0 ? sx_fdiv(r, u, d) : sx_nac();
      changed |= set_val(r, y, k, o);
    }
  }
  return changed | ecg_rdp_generic(r, n, dir);
}

/* Pad with constant amounts (attribute or constant input, ecg_pad_amounts): each dim plus
 * its begin and end amounts (reflect-padding an audio frame: sequence + 128). */
int ecg_rdp_pad(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), y = out_id(n, 0), rk = rank_of(r, x), changed = 0;
  int64_t pb[ECG_MAX_RANK], pe[ECG_MAX_RANK];
  if (!dir && x >= 0 && y >= 0 && rk == rank_of(r, y) && ecg_pad_amounts(r->g, (ecg_node *)n, rk, pb, pe, NULL) == ECG_OK)
    for (int k = 0; k < rk; k++) {
      sx a = sx_k(pb[k] + pe[k]);
      changed |= set_dim(r, y, k, sx_add(r, r->dims[x][k], &a, 1));
    }
  return changed | ecg_rdp_generic(r, n, dir);
}

/* ConstantOfShape: the output's dims are the input's values. */
int ecg_rdp_of_shape(ecg_rdp *r, const ecg_node *n, int dir) {
  int s = in_id(n, 0), y = out_id(n, 0), changed = 0;
  if (!dir && s >= 0 && y >= 0 && r->nval[s] == rank_of(r, y))
    for (int k = 0; k < r->nval[s]; k++) changed |= set_dim(r, y, k, r->vals[s][k]);
  return changed | ecg_rdp_generic(r, n, dir);
}

/* Expand: broadcast of the input's dims with the shape operand's values. */
int ecg_rdp_expand(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), s = in_id(n, 1), y = out_id(n, 0), changed = 0;
  int ry = rank_of(r, y), rx = rank_of(r, x);
  if (!dir && x >= 0 && s >= 0 && y >= 0 && r->nval[s] >= 0 && r->nval[s] <= ry) {
    for (int k = 0; k < ry; k++) {
      int ks = k - (ry - r->nval[s]), kx = k - (ry - rx);
      sx a = ks >= 0 ? r->vals[s][ks] : sx_k(1), b = kx >= 0 ? r->dims[x][kx] : sx_k(1);
      int64_t v;
      if (sx_const(&a, &v) && v == 1) changed |= set_dim(r, y, k, b);
      else if (sx_const(&b, &v) && v == 1) changed |= set_dim(r, y, k, a);
      else if (sx_eq(&a, &b)) changed |= set_dim(r, y, k, a);
    }
  }
  return changed | ecg_rdp_generic(r, n, dir);
}

/* Resize / Upsample with constant integer scales: dim * scale. */
int ecg_rdp_resize(ecg_rdp *r, const ecg_node *n, int dir) {
  int x = in_id(n, 0), y = out_id(n, 0), rx = rank_of(r, x), changed = 0;
  const float *sc = NULL;
  float buf[ECG_MAX_RANK];
  int ns = -1;
  const ecg_tensor *st = NULL;
  if (n->opset < 9) ns = ecg_attr_floats(n, "scales", &sc);
  else st = ecg_node_input(r->g, n, n->opset < 11 ? 1 : 2);
  if (st && st->is_const && st->dtype == ECG_FLOAT && ecg_tensor_numel(st) == rx && rx <= ECG_MAX_RANK) {
    for (int k = 0; k < rx; k++) buf[k] = (float)ecg_const_f64(st, k);
    sc = buf;
    ns = rx;
  }
  if (!dir && x >= 0 && y >= 0 && ns == rx && rank_of(r, y) == rx)
    for (int k = 0; k < rx; k++) {
      if (sc[k] != (float)(int64_t)sc[k] || sc[k] < 1) continue;
      sx f = sx_k((int64_t)sc[k]);
      changed |= set_dim(r, y, k, sx_mul(r, &r->dims[x][k], &f));
    }
  return changed | ecg_rdp_generic(r, n, dir);
}

/* ---------------------------------------------------------------- driver */

static void rdp_free(ecg_rdp *r) {
  for (int i = 0; i < r->n_bind; i++) free(r->bind_name[i]);
  free(r->bind_name);
  free(r->bind_val);
  for (int i = 0; i < r->n_atoms; i++) free(r->atoms[i].name);
  free(r->atoms);
  free(r->nval);
  free(r->dims);
  free(r->vals);
  free(r->producer);
}

/* Initial lattice values: numbers from the stored shapes, graph inputs' symbols (an
 * unnamed dim becomes the symbol "INPUT.K"), constants' small integer values; every
 * other non-number undef. */
static int rdp_init(ecg_rdp *r, ecg_graph *g) {
  size_t nt = g->n_tensors;
  r->g = g;
  r->nval = malloc((nt + 1) * sizeof *r->nval);
  r->dims = calloc(nt + 1, sizeof *r->dims);
  r->vals = calloc(nt + 1, sizeof *r->vals);
  r->producer = malloc((nt + 1) * sizeof *r->producer);
  if (!r->nval || !r->dims || !r->vals || !r->producer) return ECG_ERR_INTERNAL;
  ecg_producers(g, r->producer);
  bool *is_in = calloc(nt + 1, 1);
  if (!is_in) return ECG_ERR_INTERNAL;
  for (size_t i = 0; i < g->n_inputs; i++)
    if (g->inputs[i] >= 0 && (size_t)g->inputs[i] < nt) is_in[g->inputs[i]] = true;
  for (size_t t = 0; t < nt; t++) {
    const ecg_tensor *x = g->tensors[t];
    int rk = x->shape_known ? (int)x->n_dims : -1;
    int64_t ne = ecg_tensor_numel(x);
    bool small_int = (x->dtype == ECG_INT64 || x->dtype == ECG_INT32) && rk >= 0 && rk <= 1 &&
                     (rk == 0 || (x->dims[0]->value >= 0 && x->dims[0]->value <= RDP_MAX_VALS));
    r->nval[t] = small_int ? (int)(rk == 0 ? 1 : x->dims[0]->value) : -1;
    for (int k = 0; k < rk && k < ECG_MAX_RANK; k++) {
      const Ecg__Dim *d = x->dims[k];
      if (d->value >= 0) r->dims[t][k] = sx_k(d->value);
      else if (is_in[t] && r->producer[t] < 0 && !x->is_const) {
        char nm[256];
        if (d->symbol && d->symbol[0] && strcmp(d->symbol, "?")) snprintf(nm, sizeof nm, "%s", d->symbol);
        else snprintf(nm, sizeof nm, "%s.%d", x->name, k);
        int64_t mult = 1; /* a hinted multiple K: the dim is K * (the atom "SYMBOL:K") */
        for (int h = 0; h < r->n_hints; h++)
          if (!strcmp(r->hints[h].symbol, nm) && r->hints[h].multiple > 1) mult = r->hints[h].multiple;
        if (mult > 1) { size_t l = strlen(nm); snprintf(nm + l, sizeof nm - l, ":%lld", (long long)mult); }
        int id = atom_intern(r, 0, nm, NULL, 0);
        if (id < 0) { free(is_in); return ECG_ERR_INTERNAL; }
        r->dims[t][k] = sx_atomv(id);
        if (mult > 1) { sx km = sx_k(mult); r->dims[t][k] = sx_mul(r, &km, &r->dims[t][k]); }
      }
    }
    if (x->is_const && r->nval[t] >= 0 && ne == r->nval[t])
      for (int k = 0; k < r->nval[t]; k++) r->vals[t][k] = sx_k(ecg_const_i64(x, k));
  }
  free(is_in);
  return r->oom ? ECG_ERR_INTERNAL : ECG_OK;
}

int ecg_rdp_run(ecg_graph *g, ecg_rdp_stats *st, ecg_err *e) { return ecg_rdp_run_hinted(g, NULL, 0, st, e); }

int ecg_rdp_run_hinted(ecg_graph *g, const ecg_rdp_hint *hints, int n_hints, ecg_rdp_stats *st, ecg_err *e) {
  ecg_rdp r = {.hints = hints, .n_hints = n_hints};
  int rc = ECG_OK;
  int *order = malloc((g->n_nodes + 1) * sizeof *order);
  if (!order) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if ((rc = ecg_topo_order(g, order, e)) != ECG_OK) goto out;
  int iters = 0;
  /* Rounds: a round that proves value-determined symbols equal to numbers is run again
   * from the start with those numbers (each round binds at least one more symbol; a
   * handful suffices for any real graph, the bound only keeps the work finite). */
  for (int round = 0; round < 8; round++) {
  if (round) { /* the lattice of the last round goes; the bindings stay */
    for (int i = 0; i < r.n_atoms; i++) free(r.atoms[i].name);
    free(r.atoms); free(r.nval); free(r.dims); free(r.vals); free(r.producer);
    r.atoms = NULL; r.n_atoms = r.cap_atoms = 0;
    r.nval = NULL; r.dims = NULL; r.vals = NULL; r.producer = NULL;
    r.edo_nac = false;
  }
  r.new_binds = 0;
  if (rdp_init(&r, g) != ECG_OK) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  for (int phase = 0; phase < 2; phase++, r.edo_nac = true)
  for (int changed = 1; changed && iters < 64 * (round + 1); iters++) {
    changed = 0;
    for (size_t i = 0; i < g->n_nodes; i++) { /* forward */
      const ecg_op_info *op = ecg_node_op(g->nodes[order[i]]);
      if (op) changed |= op->rdp(&r, g->nodes[order[i]], 0);
    }
    for (size_t i = g->n_nodes; i-- > 0;) { /* backward */
      const ecg_op_info *op = ecg_node_op(g->nodes[order[i]]);
      if (op) changed |= op->rdp(&r, g->nodes[order[i]], 1);
    }
    if (r.oom) break;
  }
  if (r.oom || !r.new_binds) break;
  }
  if (r.oom) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  ecg_rdp_stats s = {.iterations = iters, .symbols = 0};
  for (int i = 0; i < r.n_atoms; i++) s.symbols += !r.atoms[i].fdiv && !r.atoms[i].vsym;
  /* write the lattice into the stored dims */
  for (size_t t = 0; t < g->n_tensors; t++) {
    ecg_tensor *x = g->tensors[t];
    if (!x->shape_known || x->is_const) { s.constant++; continue; }
    int cls = 0; /* 0 constant, 1 expression, 2 nac/undef */
    for (size_t k = 0; k < x->n_dims && k < ECG_MAX_RANK; k++) {
      Ecg__Dim *d = x->dims[k];
      if (d->value >= 0) continue;
      const sx *v = &r.dims[t][k];
      int64_t c;
      char buf[256];
      if (v->kind == SX_VAL && sx_const(v, &c)) {
        d->kind = ECG__DIM_KIND__DIM_EXPR; /* proved equal to a number numeric inference missed */
        snprintf(buf, sizeof buf, "%lld", (long long)c);
        if (cls < 1) cls = 1;
      } else if (v->kind == SX_VAL) {
        bool sym = v->n == 1 && v->t[0].c == 1 && v->t[0].nf == 1 && !r.atoms[v->t[0].f[0]].fdiv;
        d->kind = sym ? ECG__DIM_KIND__DIM_SYMBOL : ECG__DIM_KIND__DIM_EXPR;
        sx_str(&r, v, buf, sizeof buf);
        if (cls < 1) cls = 1;
      } else { /* the symbol numeric inference gave stays (an If's "then:3|else:2") */
        d->kind = v->kind == SX_NAC ? ECG__DIM_KIND__DIM_NAC : ECG__DIM_KIND__DIM_UNDEF;
        cls = 2;
        continue;
      }
      if (strlen(buf) >= sizeof buf - 1) { d->kind = ECG__DIM_KIND__DIM_NAC; snprintf(buf, sizeof buf, "?"); cls = 2; }
      char *dup = strdup(buf);
      if (!dup) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
      if (d->symbol && d->symbol != protobuf_c_empty_string) free(d->symbol);
      d->symbol = dup;
    }
    if (cls == 0) s.constant++;
    else if (cls == 1) s.symbolic++;
    else s.nac++;
    for (size_t k = 0; k < x->n_dims; k++)
      if (x->dims[k]->value < 0 && x->dims[k]->kind == ECG__DIM_KIND__DIM_UNDEF) { s.undef++; break; }
  }
  if (st) *st = s;
out:
  rdp_free(&r);
  free(order);
  return rc;
}

const char *ecg_dyn_name(int dyn) {
  switch (dyn) {
  case ECG_DYN_ISDO: return "ISDO";
  case ECG_DYN_ISDOS: return "ISDOS";
  case ECG_DYN_ISVDOS: return "ISVDOS";
  case ECG_DYN_EDO: return "EDO";
  default: return "?";
  }
}
