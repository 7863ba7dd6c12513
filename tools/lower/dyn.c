/* dyn.c: the dynamic-shape lowering mode (issue 9 item 2; SOD², Niu dissertation §5.4:
 * RDP's symbolic dims become run-time sizes; tools/lower/LOWERED.md "Dynamic shapes").
 *
 * When an ECG keeps symbolic dims (onnx2ecg without --input-shape) and ecg-lower binds none,
 * every dim is a C expression over the graph inputs' symbols, which the generated code holds
 * in local constants sy0, sy1, ... (lw_dyn_prologue; a prefix no emitter gives its own
 * locals: the One-to-One emitters name scalar operands s1, s2, ..., which shadowed them). RDP (format/rdp.c) stored each dim as a
 * number, a symbol (DIM_SYMBOL) or an expression over the symbols (DIM_EXPR: integers,
 * symbols, + - *, (E/K) floor division); this file translates them into C once per tensor
 * and is the one place emitters get a dim, an element count or a stride from (lw_dim,
 * lw_dim_prod): a static dim prints as its number exactly as the static lowering always
 * printed it, so a converted emitter's static output is unchanged byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* ---------------------------------------------------------------- expressions */

/** Parser state: RDP's expression text, the symbols it may name, the C text written. */
typedef struct xp {
  const char *s;
  char *const *sym;
  int n_sym;
  sbuf out;
  int bad;
} xp;

static void xp_sum(xp *p);

static void xp_ws(xp *p) {
  while (*p->s == ' ') p->s++;
}

/* factor := integer | symbol | '(' sum ')'; a symbol is the longest input symbol that
 * matches here (symbols such as "p2o.DynamicDimension.0" hold dots and digits) */
static void xp_factor(xp *p) {
  xp_ws(p);
  if (*p->s == '(') {
    p->s++;
    sb_printf(&p->out, "(");
    xp_sum(p);
    xp_ws(p);
    if (*p->s != ')') { p->bad = 1; return; }
    p->s++;
    sb_printf(&p->out, ")");
    return;
  }
  int best = -1;
  size_t bl = 0;
  for (int i = 0; i < p->n_sym; i++) {
    size_t l = strlen(p->sym[i]);
    if (l > bl && !strncmp(p->s, p->sym[i], l)) { best = i; bl = l; }
  }
  if (best >= 0) {
    sb_printf(&p->out, "sy%d", best);
    p->s += bl;
    return;
  }
  if (*p->s >= '0' && *p->s <= '9') {
    char *end;
    long long v = strtoll(p->s, &end, 10);
    sb_printf(&p->out, "%lld", v);
    p->s = end;
    return;
  }
  p->bad = 1;
}

/* term := factor (('*' | '/') factor)*: E/K becomes ecg_fdiv_(E, K), floor division */
static void xp_term(xp *p) {
  size_t start = p->out.len;
  xp_factor(p);
  for (;;) {
    xp_ws(p);
    char op = *p->s;
    if (p->bad || (op != '*' && op != '/')) return;
    p->s++;
    if (op == '*') { sb_printf(&p->out, "*"); xp_factor(p); continue; }
    /* wrap what was written since start: ecg_fdiv_(<lhs>, <rhs>) */
    char *lhs = strndup(p->out.s ? p->out.s + start : "", p->out.len - start);
    if (!lhs) { p->bad = 1; return; }
    p->out.len = start;
    if (p->out.s) p->out.s[start] = 0;
    sb_printf(&p->out, "ecg_fdiv_(%s, ", lhs);
    free(lhs);
    xp_factor(p);
    sb_printf(&p->out, ")");
  }
}

/* sum := term (('+' | '-') term)* */
static void xp_sum(xp *p) {
  xp_term(p);
  for (;;) {
    xp_ws(p);
    char op = *p->s;
    if (p->bad || (op != '+' && op != '-')) return;
    p->s++;
    sb_printf(&p->out, "%c", op);
    xp_term(p);
  }
}

/* ---------------------------------------------------------------- setup */

/** Index of symbol name in L->syms, adding it when add; -1 when absent. */
static int sym_index(ecg_lower *L, const char *name, int add) {
  for (int i = 0; i < L->n_sym; i++) if (!strcmp(L->syms[i], name)) return i;
  if (!add) return -1;
  char **ns = realloc(L->syms, sizeof *ns * ((size_t)L->n_sym + 1));
  if (!ns) return -2;
  L->syms = ns;
  if (!(L->syms[L->n_sym] = strdup(name))) return -2;
  return L->n_sym++;
}

/** The symbol of graph input dim x: a DIM_SYMBOL is its own symbol (*mult 1); a DIM_EXPR
 *  "K*NAME" (onnx2ecg --dim-multiple: RDP's K * the atom NAME) is NAME with *mult K. Returns
 *  the symbol's index in L->syms (added when add), -1 when x is neither form or the symbol
 *  is unknown, -2 on out of memory. */
static int input_dim_sym(ecg_lower *L, const Ecg__Dim *x, int add, int64_t *mult) {
  *mult = 1;
  if (!x->symbol || !x->symbol[0]) return -1;
  if (x->kind == ECG__DIM_KIND__DIM_SYMBOL) return sym_index(L, x->symbol, add);
  if (x->kind != ECG__DIM_KIND__DIM_EXPR) return -1;
  char *end;
  long long k = strtoll(x->symbol, &end, 10);
  if (end == x->symbol || *end != '*' || k < 2 || !end[1]) return -1;
  for (const char *c = end + 1; *c; c++)
    if (strchr("+-*/() ", *c)) return -1;
  *mult = k;
  return sym_index(L, end + 1, add);
}

int lw_dyn_flatten(ecg_graph *g, ecg_err *e) {
  if (!lw_graph_symbolic(g)) return ECG_OK;
  const ecg_node *first = NULL;
  for (size_t i = 0; i < g->n_nodes && !first; i++) {
    const ecg_op_info *op = ecg_op_lookup(g->nodes[i]->op_type, g->nodes[i]->domain);
    if (op && op->id == ECG_OP_If) first = g->nodes[i];
  }
  if (!first) return ECG_OK;
  for (size_t k = 0; k < g->n_inputs; k++) { /* RDP seeds only plain symbols */
    const ecg_tensor *t = g->tensors[g->inputs[k]];
    for (size_t d = 0; t->shape_known && d < t->n_dims; d++)
      if (t->dims[d]->value < 0 && t->dims[d]->kind == ECG__DIM_KIND__DIM_EXPR) {
        char lb[256];
        return ecg_errf(e, ECG_ERR_INPUT, "node '%s' (If): control flow in a dynamic-shape build needs plain input symbols, but input '%s' dim %zu is '%s' "
                        "(onnx2ecg --dim-multiple); fix dims with --input-shape", ecg_node_label(g, first, lb, sizeof lb), t->name, d,
                        t->dims[d]->symbol ? t->dims[d]->symbol : "?");
      }
  }
  int n = 0;
  ECG_TRY(ecg_flatten_ifs(g, &n, e));
  if (!n) return ECG_OK;
  ECG_TRY(ecg_rdp_run(g, NULL, e));
  /* each output: the branches' values of one shape (RDP's: the same number or expression
   * per dim), else the Where would broadcast one of them */
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_attr *a = ecg_attr_find(g->nodes[i], ECG_ATTR_SELECT);
    const ecg_node *w = g->nodes[i];
    if (!a || a->type != ECG_ATTR_STRING || w->n_inputs != 3) continue;
    const ecg_tensor *x = g->tensors[w->inputs[1]], *y = g->tensors[w->inputs[2]];
    bool same = x->shape_known && y->shape_known && x->n_dims == y->n_dims;
    for (size_t d = 0; same && d < x->n_dims; d++) {
      const Ecg__Dim *p = x->dims[d], *q = y->dims[d];
      same = p->value >= 0 ? p->value == q->value
                           : q->value < 0 && p->kind == q->kind && p->kind != ECG__DIM_KIND__DIM_NAC && p->kind != ECG__DIM_KIND__DIM_UNDEF &&
                                 p->symbol && q->symbol && !strcmp(p->symbol, q->symbol);
    }
    if (!same) {
      char sx[128], sy[128];
      return ecg_errf(e, ECG_ERR_INPUT, "node '%.*s' (If): its branches give output '%s' shapes %s and %s, not one expression of the input sizes: "
                      "a dynamic-shape build of it is not supported (fix dims with --input-shape)", (int)a->s.len, (const char *)a->s.data,
                      g->tensors[w->outputs[0]]->name, ecg_shape_str(x, sx, sizeof sx), ecg_shape_str(y, sy, sizeof sy));
    }
  }
  return ECG_OK;
}

int lw_graph_symbolic(const ecg_graph *g) {
  for (size_t i = 0; i < g->n_tensors; i++)
    if (!g->tensors[i]->sequence && g->tensors[i]->shape_known && !ecg_tensor_static(g->tensors[i])) return 1; /* a sequence: its items carry their dims */
  return 0;
}

/* The C expressions of tensor id's symbolic dims into L->dexpr[id] (once per tensor); n the
 * node that touches it (out: as an output), NULL for a graph input or output, for the
 * message. Errors: an unknown rank, a dim that is not an expression over the symbols. */
static int dyn_tensor(ecg_lower *L, int id, const ecg_node *n, int out, ecg_err *e) {
  const ecg_graph *g = L->g;
  char lb[256], sh[128], who[400];
  if (id < 0 || L->dexpr[id]) return ECG_OK;
  const ecg_tensor *t = g->tensors[id];
  if (t->sequence) return ECG_OK; /* a run-time sequence: its items carry their dims */
  if (n) snprintf(who, sizeof who, "node '%s' (%s): tensor", ecg_node_label(g, n, lb, sizeof lb), n->op_type);
  else snprintf(who, sizeof who, "graph %s", out ? "output" : "input");
  if (!t->shape_known)
    return ecg_errf(e, ECG_ERR_INPUT, "%s '%s' has an unknown rank, not static: a dynamic-shape build of it is not supported (fix dims with --input-shape)",
                    who, t->name);
  if (ecg_tensor_static(t)) return ECG_OK;
  if (!(L->dexpr[id] = calloc(t->n_dims + 1, sizeof(char *)))) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t d = 0; d < t->n_dims; d++) {
    const Ecg__Dim *x = t->dims[d];
    if (x->value >= 0) continue;
    int ok = x->kind == ECG__DIM_KIND__DIM_SYMBOL || x->kind == ECG__DIM_KIND__DIM_EXPR;
    xp p = {.s = x->symbol ? x->symbol : "", .sym = L->syms, .n_sym = L->n_sym};
    if (ok) {
      xp_sum(&p);
      xp_ws(&p);
      if (*p.s || p.bad || p.out.oom || !p.out.s) ok = 0;
    }
    if (!ok) {
      sb_free(&p.out);
      const ecg_op_info *op = n ? ecg_op_lookup(n->op_type, n->domain) : NULL;
      return ecg_errf(e, ECG_ERR_INPUT, "%s '%s' has shape %s, not static: dim %zu ('%s') is %s, so a build for every input size is not supported; %s", who,
                      t->name, ecg_shape_str(t, sh, sizeof sh), d, x->symbol ? x->symbol : "?",
                      x->kind == ECG__DIM_KIND__DIM_NAC ? "not a constant expression of the input sizes (RDP: nac)"
                      : x->kind == ECG__DIM_KIND__DIM_UNDEF ? "undetermined (RDP: undef)"
                      : "not an expression over the graph inputs' symbols",
                      out && op && (op->props & ECG_PROP_CONTROL)
                          ? "its subgraphs give it different or run-time shapes (dynamic shapes are not supported)"
                      : out && op && op->dyn == ECG_DYN_ISVDOS
                          ? "its size depends on input values (ISVDOS) and no declared dim downstream fixes it (format/ECG.md, value-determined symbols)"
                          : "fix dims with --input-shape");
    }
    L->dexpr[id][d] = p.out.s;
  }
  return ECG_OK;
}

int lw_dyn_setup(ecg_lower *L, ecg_err *e) {
  const ecg_graph *g = L->g;
  L->dyn = 1;
  L->pk_dyn = 1;
  if (L->target != LW_TARGET_C || L->hetero)
    return ecg_errf(e, ECG_ERR_INPUT, "symbolic dims (a dynamic-shape build) are supported by --target c only; fix dims with --input-shape");
  /* the symbols: the graph inputs' DIM_SYMBOL dims, in order of first appearance */
  for (size_t k = 0; k < g->n_inputs; k++) {
    const ecg_tensor *t = g->tensors[g->inputs[k]];
    if (t->sequence) continue; /* a run-time sequence: its items carry their dims */
    if (!t->shape_known)
      return ecg_errf(e, ECG_ERR_INPUT, "graph input '%s' has an unknown rank, not static: a dynamic-shape build of it is not supported", t->name);
    for (size_t d = 0; d < t->n_dims; d++) {
      const Ecg__Dim *x = t->dims[d];
      int64_t mult;
      if (x->value >= 0) continue;
      int si = input_dim_sym(L, x, 1, &mult);
      if (si == -2) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      if (si < 0)
        return ecg_errf(e, ECG_ERR_INPUT, "graph input '%s' dim %zu ('%s') is not static and not a symbol RDP analysed: not supported (convert with this onnx2ecg, "
                        "or fix dims with --input-shape)", t->name, d, x->symbol ? x->symbol : "?");
    }
  }
  L->dexpr = calloc(g->n_tensors + 1, sizeof *L->dexpr);
  if (!L->dexpr) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  /* every tensor a node touches, and the graph's inputs and outputs: each dim a number or
   * an expression over the symbols */
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
      int out = k >= n->n_inputs, id = out ? n->outputs[k - n->n_inputs] : n->inputs[k];
      ECG_TRY(dyn_tensor(L, id, n, out, e));
    }
  }
  for (size_t k = 0; k < g->n_inputs + g->n_outputs; k++)
    ECG_TRY(dyn_tensor(L, k < g->n_inputs ? g->inputs[k] : g->outputs[k - g->n_inputs], NULL, k >= g->n_inputs, e));
  return ECG_OK;
}

void lw_dyn_free(ecg_lower *L) {
  for (size_t i = 0; L->dexpr && i < L->g->n_tensors; i++) {
    if (!L->dexpr[i]) continue;
    for (size_t d = 0; d < L->g->tensors[i]->n_dims; d++) free(L->dexpr[i][d]);
    free(L->dexpr[i]);
  }
  free(L->dexpr);
  for (int i = 0; i < L->n_sym; i++) free(L->syms[i]);
  free(L->syms);
  free(L->dbuf_tensor);
  free(L->dbuf_life);
  sb_free(&L->prep);
}

/* ---------------------------------------------------------------- dims as C */

int lw_tensor_dyn(const ecg_lower *L, int id) { return L->dexpr && id >= 0 && L->dexpr[id] != NULL; }

int lw_node_dyn(const ecg_lower *L, const ecg_node *n) {
  for (size_t k = 0; k < n->n_inputs; k++) if (lw_tensor_dyn(L, n->inputs[k])) return 1;
  for (size_t k = 0; k < n->n_outputs; k++) if (lw_tensor_dyn(L, n->outputs[k])) return 1;
  return 0;
}

/* a small ring of strings: the results of lw_dim and lw_dim_prod stay valid for the next 15 */
static char *ring_slot(void) {
  static __thread char ring[16][768];
  static __thread int slot;
  return ring[slot++ & 15];
}

const char *lw_dim(const ecg_lower *L, int id, int d) {
  char *b = ring_slot();
  if (lw_tensor_dyn(L, id) && L->dexpr[id][d]) snprintf(b, 768, "%s", L->dexpr[id][d]);
  else snprintf(b, 768, "%lld", (long long)L->g->tensors[id]->dims[d]->value);
  return b;
}

const char *lw_dim_prod(const ecg_lower *L, int id, int from, int to) {
  char *b = ring_slot();
  long long c = 1;
  sbuf s = {0};
  for (int d = from; d < to; d++) {
    if (lw_tensor_dyn(L, id) && L->dexpr[id][d]) sb_printf(&s, "%s(%s)", s.len ? "*" : "", L->dexpr[id][d]);
    else c *= (long long)L->g->tensors[id]->dims[d]->value;
  }
  if (!s.len) snprintf(b, 768, "%lld", c);
  else if (c == 1) snprintf(b, 768, "(%s)", s.s);
  else snprintf(b, 768, "(%lld*%s)", c, s.oom ? "0" : s.s);
  sb_free(&s);
  return b;
}

void lw_dyn_prologue(const ecg_lower *L, sbuf *c, const char *src) {
  if (!L->dyn || !L->n_sym) return;
  sb_printf(c, "  const int64_t ");
  for (int i = 0; i < L->n_sym; i++) sb_printf(c, "%ssy%d = %s[%d]", i ? ", " : "", i, src, i);
  sb_printf(c, ";\n");
}

int lw_dyn_same_dim(const ecg_lower *L, int a, int da, int b, int db) {
  const char *x = lw_tensor_dyn(L, a) ? L->dexpr[a][da] : NULL, *y = lw_tensor_dyn(L, b) ? L->dexpr[b][db] : NULL;
  if (!x && !y) return L->g->tensors[a]->dims[da]->value == L->g->tensors[b]->dims[db]->value;
  return x && y && !strcmp(x, y);
}

int lw_dyn_unit(const ecg_lower *L, int id, int d) {
  return !(lw_tensor_dyn(L, id) && L->dexpr[id][d]) && L->g->tensors[id]->dims[d]->value == 1;
}

void lw_dyn_dim_check(const ecg_lower *L, sbuf *c, int t, int d, const char *empty, const char *fail) {
  const char *x = L->dexpr[t][d];
  sb_printf(c, "  if ((%s) < !%s) { snprintf(ctx->msg, sizeof ctx->msg, \"the input shapes are too small for the model: tensor '%%s' dim %%d would be %%lld\", ",
            x, empty);
  lw_c_str(c, L->g->tensors[t]->name);
  sb_printf(c, ", %d, (long long)(%s)); %s }\n", d, x, fail);
}

/* ---------------------------------------------------------------- the generated API */

void lw_dyn_ctx_fields(const ecg_lower *L, sbuf *b) {
  if (!L->dyn) return;
  sb_printf(b, "  /* dynamic shapes (LOWERED.md \"Dynamic shapes\") */\n"
               "  int64_t sym[NSYM];         /* the symbols' values, bound from the input shapes */\n"
               "  int64_t in_dims[NIN][8];   /* the input shapes set by %s_set_input_shape */\n"
               "  int in_set[NIN];\n  int dirty;                 /* input shapes changed since the last prepare_ */\n"
               "  int empty;                 /* an input is empty: intermediate dims may be 0 (bind_) */\n"
               "  int bound;                 /* sym holds the current input shapes' symbols */\n"
               "  size_t off[NBUF];          /* the run-time memory plan: each buffer's arena offset */\n"
               "  size_t arena_cap, scratch_cap, pk_cap[NPACKED]; /* bytes of arena, floats of scratch and packed weights held */\n"
               "  size_t arena_used;         /* bytes of the current plan */\n"
               "  int threads;               /* the OpenMP threads the scratch was sized for */\n"
               "  char msg[512];             /* the last shape error */\n",
            L->prefix);
}

void lw_dyn_write_api(ecg_lower *L, sbuf *b) {
  const ecg_graph *g = L->g;
  const char *P = L->prefix;
  sb_printf(b, "/* ---- dynamic shapes: sizes bound at run time (LOWERED.md \"Dynamic shapes\") */\n");
  sb_printf(b, "static const char *const sym_names_[NSYM + 1] = {");
  for (int i = 0; i < L->n_sym; i++) { lw_c_str(b, L->syms[i]); sb_printf(b, ", "); }
  sb_printf(b, "\"\"};\n");
  /* per input dim: the symbol it binds (-1 for a number) and the multiple it must be of
   * (onnx2ecg --dim-multiple: the symbol is the size / K) */
  sbuf mul = {0};
  sb_printf(b, "static const signed char in_sym_[NIN][8] = {\n");
  sb_printf(&mul, "static const int in_mul_[NIN][8] = {\n");
  for (size_t k = 0; k < g->n_inputs; k++) {
    const ecg_tensor *t = g->tensors[g->inputs[k]];
    sb_printf(b, "  {");
    sb_printf(&mul, "  {");
    for (int d = 0; d < 8; d++) {
      int si = -1;
      int64_t m = 1;
      if ((size_t)d < t->n_dims && t->dims[d]->value < 0) si = input_dim_sym(L, t->dims[d], 0, &m);
      sb_printf(b, "%s%d", d ? ", " : "", si);
      sb_printf(&mul, "%s%lld", d ? ", " : "", (long long)m);
    }
    sb_printf(b, "},\n");
    sb_printf(&mul, "},\n");
  }
  sb_printf(b, "};\n%s};\n\n", mul.s ? mul.s : "");
  if (mul.oom) b->oom = 1;
  sb_free(&mul);
  sb_printf(b, "const char *%s_error(const %s_ctx *ctx) { return ctx->msg; }\n\n", P, P);
  sb_printf(b, "int %s_set_input_shape(%s_ctx *ctx, const char *name, int rank, const int64_t *dims) {\n", P, P);
  sb_printf(b, "  for (int i = 0; i < NIN; i++) {\n    const %s_tensor_info *t = &%s_inputs_info_[i];\n"
               "    if (strcmp(name, t->name) != 0) continue;\n", P, P);
  sb_printf(b, "    if (rank != t->rank) { snprintf(ctx->msg, sizeof ctx->msg, \"input '%%s': rank %%d given, the model's is %%d\", name, rank, t->rank); return -3; }\n");
  sb_printf(b, "    for (int d = 0; d < rank; d++) {\n"
               "      if (dims[d] < 0 || dims[d] > ((int64_t)1 << 40)) { snprintf(ctx->msg, sizeof ctx->msg, \"input '%%s': dim %%d is %%lld (sizes from 0 to 2^40)\", name, d, (long long)dims[d]); return -3; }\n"
               "      if (t->dims[d] >= 0 && dims[d] != t->dims[d]) { snprintf(ctx->msg, sizeof ctx->msg, \"input '%%s': dim %%d is %%lld, the model's is %%lld\", name, d, (long long)dims[d], (long long)t->dims[d]); return -3; }\n"
               "    }\n");
  sb_printf(b, "    for (int d = 0; d < rank; d++) ctx->in_dims[i][d] = dims[d];\n    ctx->in_set[i] = 1;\n    ctx->dirty = 1;\n    ctx->bound = 0;\n    return 0;\n  }\n"
               "  snprintf(ctx->msg, sizeof ctx->msg, \"'%%s' is not a graph input\", name);\n  return -1;\n}\n\n");
  /* bind_: symbols from the inputs, then every symbolic dim of every tensor checked >= 1 */
  sb_printf(b, "/* The symbols from the input shapes: a symbol in two places must have one value; every\n"
               " * intermediate dim (RDP's expressions) must be at least 1 (at least 0 when an input is\n"
               " * empty: ONNX's empty tensors). 0, or -3 with ctx->msg. */\n"
               "static int bind_(struct %s_ctx *ctx) {\n  int from[NSYM + 1][2], empty = 0;\n  for (int s = 0; s < NSYM; s++) from[s][0] = -1;\n", P);
  sb_printf(b, "  for (int i = 0; i < NIN; i++) {\n    const %s_tensor_info *t = &%s_inputs_info_[i];\n"
               "    if (t->sequence) continue; /* a run-time sequence: its items carry their dims */\n"
               "    if (!ctx->in_set[i]) { snprintf(ctx->msg, sizeof ctx->msg, \"input '%%s': shape not set (%s_set_input_shape)\", t->name); return -3; }\n"
               "    for (int d = 0; d < t->rank; d++) {\n      int s = in_sym_[i][d];\n      int64_t k = in_mul_[i][d], v = ctx->in_dims[i][d] / k;\n"
               "      empty |= ctx->in_dims[i][d] == 0;\n      if (s < 0) continue;\n"
               "      if (ctx->in_dims[i][d] %% k) { snprintf(ctx->msg, sizeof ctx->msg, \"input '%%s': dim %%d is %%lld, but this build takes multiples of %%lld there (onnx2ecg --dim-multiple)\", t->name, d, (long long)ctx->in_dims[i][d], (long long)k); return -3; }\n"
               "      if (from[s][0] < 0) { ctx->sym[s] = v; from[s][0] = i; from[s][1] = d; continue; }\n"
               "      if (ctx->sym[s] != v) {\n"
               "        snprintf(ctx->msg, sizeof ctx->msg, \"input '%%s': dim %%d is %%lld, but it is symbol '%%s', which input '%%s' dim %%d sets to %%lld\",\n"
               "                 t->name, d, (long long)ctx->in_dims[i][d], sym_names_[s], %s_inputs_info_[from[s][0]].name, from[s][1], (long long)(ctx->sym[s] * k));\n"
               "        return -3;\n      }\n    }\n  }\n", P, P, P, P);
  lw_dyn_prologue(L, b, "ctx->sym");
  sb_printf(b, "  (void)empty;\n");
  /* each distinct expression once, naming the first tensor that has it */
  /* (a guarded node's outputs are checked when it runs: its branch may not be taken) */
  for (size_t t = 0; t < g->n_tensors; t++) {
    if (!lw_tensor_dyn(L, (int)t) || (L->tguard && L->tguard[t])) continue;
    for (size_t d = 0; d < g->tensors[t]->n_dims; d++) {
      const char *x = L->dexpr[t][d];
      int seen = 0;
      if (!x) continue;
      for (size_t u = 0; u <= t && !seen; u++)
        for (size_t f = 0; lw_tensor_dyn(L, (int)u) && !(L->tguard && L->tguard[u]) && f < g->tensors[u]->n_dims && !seen; f++)
          if ((u < t || f < d) && L->dexpr[u][f] && !strcmp(L->dexpr[u][f], x)) seen = 1;
      if (seen) continue;
      lw_dyn_dim_check(L, b, (int)t, (int)d, "empty", "return -3;");
    }
  }
  sb_printf(b, "  ctx->empty = empty;\n  ctx->bound = 1;\n  return 0;\n}\n\n");
  /* output shapes */
  sb_printf(b, "int %s_output_shape(%s_ctx *ctx, int i, int *rank, int64_t *dims) {\n"
               "  if (i < 0 || i >= %zu) return -1;\n  if (!ctx->bound && bind_(ctx) != 0) return -3;\n", P, P, g->n_outputs);
  lw_dyn_prologue(L, b, "ctx->sym");
  sb_printf(b, "  switch (i) {\n");
  for (size_t k = 0; k < g->n_outputs; k++) {
    int id = g->outputs[k];
    const ecg_tensor *t = g->tensors[id];
    if (t->sequence) { /* a run-time sequence: no shape of its own (its items carry theirs) */
      sb_printf(b, "  case %zu: *rank = -1; break;\n", k);
      continue;
    }
    sb_printf(b, "  case %zu: *rank = %zu;", k, t->n_dims);
    for (size_t d = 0; d < t->n_dims; d++) sb_printf(b, " dims[%zu] = %s;", d, lw_dim(L, id, (int)d));
    sb_printf(b, " break;\n");
  }
  sb_printf(b, "  }\n  (void)dims;\n  return 0;\n}\n\n");
  /* prepare_: scratch, packed weights, the memory plan */
  sb_printf(b, "static const int buf_life_[NBUF + 1][2] = {");
  for (int i = 0; i < L->n_dbuf; i++) sb_printf(b, "%s{%d, %d}", i ? ", " : "", L->dbuf_life[2 * i], L->dbuf_life[2 * i + 1]);
  sb_printf(b, "%s{0, 0}};\n\n", L->n_dbuf ? ", " : "");
  sb_printf(b, "static void *alloc64(size_t n);\n");
  sb_printf(b, "/* For new input shapes: bind the symbols, size the scratch, pack the weights whose packed\n"
               " * layout depends on the sizes (the runtime picks each conv's strategy from its sizes), and plan\n"
               " * the intermediates (SOD² §5.4.2, the runtime's planner, ecg_plan.h). 0, -3 (shapes; ctx->msg), -4 (out of memory). */\n"
               "static int prepare_(struct %s_ctx *ctx) {\n  int rc = bind_(ctx);\n  if (rc) return rc;\n", P);
  lw_dyn_prologue(L, b, "ctx->sym");
  sb_printf(b, "  size_t scratch = 0;\n  int threads = 1;\n#ifdef _OPENMP\n  threads = omp_get_max_threads();\n#endif\n  (void)threads;\n%s",
            L->scratch_expr.s ? L->scratch_expr.s : "");
  sb_printf(b, "%s", L->prep.s ? L->prep.s : "");
  sb_printf(b, "  if (scratch > ctx->scratch_cap || !ctx->scratch) {\n    free(ctx->scratch);\n"
               "    if (!(ctx->scratch = alloc64(scratch * sizeof(float)))) { ctx->scratch_cap = 0; snprintf(ctx->msg, sizeof ctx->msg, \"out of memory (scratch)\"); return -4; }\n"
               "    ctx->scratch_cap = scratch;\n  }\n");
  sb_printf(b, "  ecg_plan_buf *b = malloc(sizeof *b * (NBUF + 1));\n  if (!b) { snprintf(ctx->msg, sizeof ctx->msg, \"out of memory (plan)\"); return -4; }\n");
  for (int i = 0; i < L->n_dbuf; i++) {
    int t = L->dbuf_tensor[i];
    const char *x = lw_dim_prod(L, t, 0, (int)g->tensors[t]->n_dims);
    if (L->tguard && L->tguard[t]) /* an untaken branch's size may be negative */
      sb_printf(b, "  b[%d].bytes = ((size_t)((%s) > 0 ? (%s) : 0) * %zu + 63) / 64 * 64;\n", i, x, x, ecg_dtype_size(g->tensors[t]->dtype));
    else sb_printf(b, "  b[%d].bytes = ((size_t)%s * %zu + 63) / 64 * 64;\n", i, x, ecg_dtype_size(g->tensors[t]->dtype));
  }
  /* the buffers planned: L->n_dbuf of them (NBUF is at least 1, for the arrays) */
  sb_printf(b, "  for (int i = 0; i < %d; i++) { if (!b[i].bytes) b[i].bytes = 64; b[i].first = buf_life_[i][0]; b[i].last = buf_life_[i][1]; }\n"
               "  size_t top = ecg_rt1_plan_place(b, %d, %d);\n"
               "  if (top == (size_t)-1) { free(b); snprintf(ctx->msg, sizeof ctx->msg, \"out of memory (plan)\"); return -4; }\n"
               "  for (int i = 0; i < %d; i++) ctx->off[i] = b[i].offset;\n  free(b);\n"
               "  if (top > ctx->arena_cap) {\n    free(ctx->arena);\n"
               "    if (!(ctx->arena = alloc64(top))) { ctx->arena_cap = 0; snprintf(ctx->msg, sizeof ctx->msg, \"out of memory (arena of %%zu bytes)\", top); return -4; }\n"
               "    ctx->arena_cap = top;\n  }\n  ctx->arena_used = top;\n  ctx->threads = threads;\n  ctx->dirty = 0;\n  return 0;\n}\n\n",
            L->n_dbuf, L->n_dbuf, (int)L->plan, L->n_dbuf);
}

void lw_dyn_write_header(const ecg_lower *L, sbuf *b) {
  if (!L->dyn) return;
  const char *P = L->prefix;
  sb_printf(b, "/* A dynamic-shape build (ecg-lower on an ECG with symbolic dims, no --input-shape): one build\n"
               " * for every input size. The input_info/output_info dims are -1 where symbolic (bytes 0).\n"
               " * Before run: set every input's shape; a shape the model cannot take (a dim that must equal\n"
               " * another, or sizes too small for the model) makes set_input_shape or run return -3 with the\n"
               " * reason, naming the input, in %s_error(). After the shapes are set, output_shape gives\n"
               " * each output's shape (bind buffers of that size). run plans the intermediates and packs\n"
               " * size-dependent weights when the shapes changed since the last run. */\n#define ECG_MODEL_DYNAMIC 1\n", P);
  sb_printf(b, "/** Set graph input name's shape (rank dims, each 0..2^40; the model's numeric dims must match):\n"
               " *  0, -1 for an unknown name, -3 for a shape that does not fit (%s_error says why). */\n"
               "int %s_set_input_shape(%s_ctx *ctx, const char *name, int rank, const int64_t *dims);\n", P, P, P);
  sb_printf(b, "/** Output i's shape for the input shapes set: 0; -1 when i is out of range; -3 when the input\n"
               " *  shapes are unset or inconsistent (%s_error). dims has room for 8. */\n"
               "int %s_output_shape(%s_ctx *ctx, int i, int *rank, int64_t *dims);\n", P, P, P);
  sb_printf(b, "/** The last shape error's message (\"\" when none). */\nconst char *%s_error(const %s_ctx *ctx);\n", P, P);
}

int lw_dyn_packed_slot(ecg_lower *L) { return L->n_packed++; }

void lw_dyn_numbers(ecg_graph *g) {
  for (size_t i = 0; i < g->n_tensors; i++) {
    ecg_tensor *t = g->tensors[i];
    for (size_t d = 0; t->shape_known && d < t->n_dims; d++) {
      Ecg__Dim *x = t->dims[d];
      if (x->value >= 0 || x->kind != ECG__DIM_KIND__DIM_EXPR || !x->symbol || !*x->symbol) continue;
      char *end;
      long long v = strtoll(x->symbol, &end, 10);
      if (!*end && v >= 0) x->value = v;
    }
  }
}
