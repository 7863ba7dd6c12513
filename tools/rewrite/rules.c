/* ecg-rewrite: rule files (DNNFusion §3.4.2 rules as data; format in
 * tools/rewrite/rules/1-table34.rules).  One rule a line:
 *   CLASS NAME: SOURCE -> TARGET [if COND, COND...]
 * Operators are resolved through the registry at parse time, so a typo is a line-numbered
 * error, never a rule that silently never fires. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rewrite.h"

/* The rule files embedded by the Makefile (scripts/embed.sh, $(BUILD)/gen/rules_blob.c). */
extern const struct { const char *name; const unsigned char *data; size_t size; } rw_rule_files[];

typedef struct {
  const char *s;  /* cursor */
  const char *file;
  int line;
  rw_rule *r;
  ecg_err *e;
  bool has_red; /* the source has a reduction */
} parser;

static int fail(parser *p, const char *what, const char *tok) {
  return ecg_errf(p->e, ECG_ERR_INPUT, "%s:%d: %s%s%.*s%s", p->file, p->line, what, tok ? " at '" : "",
                  tok ? (int)strcspn(tok, "\n") : 0, tok ? tok : "", tok ? "'" : "");
}

static void skip_ws(parser *p) {
  while (*p->s == ' ' || *p->s == '\t') p->s++;
}

/* An identifier into buf (letters, digits, '_', '-'); its length, 0 when none. */
static size_t ident(parser *p, char *buf, size_t n) {
  skip_ws(p);
  size_t k = 0;
  while ((isalnum((unsigned char)p->s[k]) || p->s[k] == '_' || p->s[k] == '-') && k + 1 < n) k++;
  memcpy(buf, p->s, k);
  buf[k] = 0;
  p->s += k;
  return k;
}

static bool eat(parser *p, char c) {
  skip_ws(p);
  if (*p->s != c) return false;
  p->s++;
  return true;
}

/* Variable index of name; in_source adds it when new, else it must exist (-1). */
static int var_index(rw_rule *r, const char *name, bool in_source) {
  for (int v = 0; v < r->n_vars; v++)
    if (!strcmp(r->vars[v], name)) return v;
  if (!in_source || r->n_vars == RW_MAX_VARS) return -1;
  snprintf(r->vars[r->n_vars], sizeof r->vars[0], "%s", name);
  return r->n_vars++;
}

/* term := Op(term, ...) | variable | number; returns the term index or -1 (error in p->e). */
static int term(parser *p, bool in_source) {
  rw_rule *r = p->r;
  if (r->n_terms == RW_MAX_TERMS) { fail(p, "rule too long", NULL); return -1; }
  int t = r->n_terms++;
  rw_term *x = &r->terms[t];
  *x = (rw_term){.op = ECG_OP_NONE, .var = -1};
  skip_ws(p);
  const char *at = p->s;
  char *end;
  double num = strtod(p->s, &end);
  if (end != p->s && (isdigit((unsigned char)*p->s) || *p->s == '-' || *p->s == '.')) {
    x->num = num;
    p->s = end;
    return t;
  }
  char name[64];
  if (!ident(p, name, sizeof name)) { fail(p, "expected an operator, a variable or a number", at); return -1; }
  if (!eat(p, '(')) {
    if ((x->var = var_index(r, name, in_source)) < 0) {
      fail(p, in_source ? "too many variables" : "target variable not bound by the source", at);
      return -1;
    }
    return t;
  }
  const ecg_op_info *op = ecg_op_lookup(name, "");
  if (!op) { fail(p, "unknown operator", at); return -1; }
  if (in_source && !(op->props & (ECG_PROP_ASSOC | ECG_PROP_COMM | ECG_PROP_DIST))) {
    fail(p, "operator with none of the associative/commutative/distributive properties in a source "
            "(the matcher partitions the graph at such operators)", at);
    return -1;
  }
  if (ecg_reduction_of(op->id)) {
    if (!in_source && !p->has_red) { fail(p, "target reduction without a reduction in the source (its axes)", at); return -1; }
    p->has_red |= in_source;
  }
  x->op = op->id;
  do {
    if (x->n_kids == RW_MAX_KIDS) { fail(p, "too many operands", at); return -1; }
    int k = term(p, in_source);
    if (k < 0) return -1;
    r->terms[t].kids[r->terms[t].n_kids++] = k;
  } while (eat(p, ','));
  if (!eat(p, ')')) { fail(p, "expected ')'", p->s); return -1; }
  if (ecg_reduction_of(op->id) && r->terms[t].n_kids != 1) { fail(p, "a reduction takes one operand", at); return -1; }
  return t;
}

/* COND{, COND}: const(v), nonneg(v), pos(v), int(v) or scalar(v) (rewrite.h RW_COND_*). */
static int conditions(parser *p) {
  static const struct { const char *name; unsigned bit; } CONDS[] = {
      {"const", RW_COND_CONST}, {"nonneg", RW_COND_NONNEG}, {"pos", RW_COND_POS}, {"int", RW_COND_INT},
      {"scalar", RW_COND_SCALAR}};
  do {
    char name[32], var[32];
    const char *at = p->s;
    ident(p, name, sizeof name);
    unsigned c = 0;
    for (size_t k = 0; k < sizeof CONDS / sizeof *CONDS && !c; k++)
      if (!strcmp(name, CONDS[k].name)) c = CONDS[k].bit;
    if (!c) return fail(p, "unknown condition (known: const, nonneg, pos, int, scalar)", at);
    int v;
    if (!eat(p, '(') || !ident(p, var, sizeof var) || !eat(p, ')')) return fail(p, "expected COND(variable)", at);
    if ((v = var_index(p->r, var, false)) < 0) return fail(p, "condition on a variable not in the source", at);
    p->r->cond[v] |= c;
  } while (eat(p, ','));
  return ECG_OK;
}

/* One non-empty, non-comment line into p->r. */
static int rule_line(parser *p) {
  rw_rule *r = p->r;
  memset(r, 0, sizeof *r);
  const char *at = p->s;
  if (!ident(p, r->cls, sizeof r->cls) ||
      (strcmp(r->cls, "assoc") && strcmp(r->cls, "dist") && strcmp(r->cls, "comm")))
    return fail(p, "expected a class (assoc, dist, comm)", at);
  at = p->s;
  if (!ident(p, r->name, sizeof r->name) || !eat(p, ':')) return fail(p, "expected 'NAME:'", at);
  skip_ws(p);
  snprintf(r->text, sizeof r->text, "%.*s", (int)strcspn(p->s, "\n"), p->s);
  if ((r->src = term(p, true)) < 0) return p->e->code;
  if (r->terms[r->src].op == ECG_OP_NONE) return fail(p, "the source must be an operator term", at);
  skip_ws(p);
  if (strncmp(p->s, "->", 2)) return fail(p, "expected '->'", p->s);
  p->s += 2;
  if ((r->dst = term(p, false)) < 0) return p->e->code;
  skip_ws(p);
  if (!strncmp(p->s, "if", 2) && !isalnum((unsigned char)p->s[2])) {
    p->s += 2;
    ECG_TRY(conditions(p));
  }
  skip_ws(p);
  if (*p->s && *p->s != '\n' && *p->s != '#') return fail(p, "unexpected text", p->s);
  return ECG_OK;
}

int rw_rules_parse(rw_rules *rs, const char *file, const char *text, size_t len, ecg_err *e) {
  char *buf = malloc(len + 1);
  if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  memcpy(buf, text, len);
  buf[len] = 0;
  int rc = ECG_OK, line = 0;
  for (char *s = buf; *s && rc == ECG_OK; line++) {
    char *nl = strchr(s, '\n');
    if (nl) *nl = 0;
    char *q = s + strspn(s, " \t\r");
    if (*q && *q != '#') {
      if (rs->n == rs->cap) {
        rw_rule *v = realloc(rs->v, sizeof *v * (size_t)(rs->cap ? rs->cap * 2 : 64));
        if (!v) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
        rs->v = v;
        rs->cap = rs->cap ? rs->cap * 2 : 64;
      }
      for (char *c = q; *c; c++) if (*c == '\r') *c = ' ';
      parser p = {q, file, line + 1, &rs->v[rs->n], e, false};
      if ((rc = rule_line(&p)) == ECG_OK) {
        for (int k = 0; k < rs->n && rc == ECG_OK; k++)
          if (!strcmp(rs->v[k].name, rs->v[rs->n].name)) rc = fail(&p, "duplicate rule name", rs->v[k].name);
        if (rc == ECG_OK) rs->n++;
      }
    }
    if (!nl) break;
    s = nl + 1;
  }
  free(buf);
  return rc;
}

int rw_rules_builtin(rw_rules *rs, ecg_err *e) {
  for (int i = 0; rw_rule_files[i].name; i++)
    ECG_TRY(rw_rules_parse(rs, rw_rule_files[i].name, (const char *)rw_rule_files[i].data, rw_rule_files[i].size, e));
  return ECG_OK;
}

int rw_rules_load(rw_rules *rs, const char *path, ecg_err *e) {
  unsigned char *buf;
  size_t len;
  ECG_TRY(cli_read_path(path, &buf, &len, e));
  int rc = rw_rules_parse(rs, path, (const char *)buf, len, e);
  free(buf);
  return rc;
}

void rw_rules_free(rw_rules *rs) {
  free(rs->v);
  rs->v = NULL;
  rs->n = rs->cap = 0;
}
