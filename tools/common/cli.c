/* The shared command-line parser (cli.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Fill e with a usage error and evaluate to CLI_ERROR. */
#define USAGE_ERR(...) (ecg_errf(e, ECG_ERR_USAGE, __VA_ARGS__), CLI_ERROR)

void cli_init(cli *c, int argc, char **argv, const cli_opt *opts) {
  memset(c, 0, sizeof *c);
  c->argc = argc;
  c->argv = argv;
  c->opts = opts;
  c->i = 1;
}

/** The option named name (len bytes, long form) or NULL. */
static const cli_opt *find_long(const cli_opt *o, const char *name, size_t len) {
  for (; o->id; o++)
    if (o->name && strlen(o->name) == len && !strncmp(o->name, name, len)) return o;
  return NULL;
}

/** The option with short letter ch or NULL. */
static const cli_opt *find_short(const cli_opt *o, char ch) {
  for (; o->id; o++)
    if (o->short_name && o->short_name == ch) return o;
  return NULL;
}

int cli_next(cli *c, const char **value, ecg_err *e) {
  *value = NULL;
  if (c->i >= c->argc) return CLI_END;
  const char *a = c->argv[c->i++];
  c->typed = a;
  if (c->rest || a[0] != '-' || !a[1]) { *value = a; return CLI_POSITIONAL; }
  if (!strcmp(a, "--")) {
    c->rest = 1;
    return cli_next(c, value, e);
  }
  const cli_opt *o = NULL;
  const char *attached = NULL; /* --name=VALUE */
  if (a[1] == '-') {
    const char *eq = strchr(a + 2, '=');
    o = find_long(c->opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
    if (o && eq) attached = eq + 1;
    if (!o) return USAGE_ERR("unknown option '%s' (try --help)", a);
  } else if (a[2]) {
    const char *eq = strchr(a + 1, '=');
    const cli_opt *l = find_long(c->opts, a + 1, eq ? (size_t)(eq - a - 1) : strlen(a + 1));
    if (l) return USAGE_ERR("unknown option '%s' (did you mean '-%s'? long options take two dashes)", a, a);
    return USAGE_ERR("unknown option '%s' (try --help; short options are not combined)", a);
  } else {
    o = find_short(c->opts, a[1]);
    if (!o) return USAGE_ERR("unknown option '%s' (try --help)", a);
  }
  if (!o->has_arg) {
    if (attached) return USAGE_ERR("option '--%s' takes no value ('%s')", o->name, a);
    return o->id;
  }
  if (!attached) {
    if (c->i >= c->argc) return USAGE_ERR("option '%s' needs a value (try --help)", a);
    attached = c->argv[c->i++];
  }
  if (!attached[0]) return USAGE_ERR("option '%s' needs a non-empty value", a);
  *value = attached;
  return o->id;
}

int cli_fail(const char *prog, int code, const char *msg) {
  if (cli_colour(stderr)) fprintf(stderr, "\033[1;31m%s\033[0m: %s\n", prog, msg);
  else fprintf(stderr, "%s: %s\n", prog, msg);
  return code;
}

bool cli_colour(FILE *f) {
  const char *nc = getenv("NO_COLOR");
  return isatty(fileno(f)) && !(nc && *nc);
}

bool cli_progress(bool quiet) { return !quiet && isatty(fileno(stderr)); }

void cli_note(const char *prog, bool quiet, const char *fmt, ...) {
  if (quiet) return;
  va_list ap;
  va_start(ap, fmt);
  if (cli_colour(stderr)) fprintf(stderr, "%s: \033[33mnote\033[0m: ", prog);
  else fprintf(stderr, "%s: note: ", prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_read_all(FILE *f, unsigned char **buf, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  unsigned char *b = malloc(cap);
  if (!b) return ENOMEM;
  for (;;) {
    if (n + 1 >= cap) {
      unsigned char *r = realloc(b, cap * 2);
      if (!r) { free(b); return ENOMEM; }
      b = r;
      cap *= 2;
    }
    size_t got = fread(b + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) { int err = errno ? errno : EIO; free(b); return err; }
  b[n] = 0;
  *buf = b;
  *len = n;
  return 0;
}

int cli_read_path(const char *path, unsigned char **buf, size_t *len, ecg_err *e) {
  FILE *f = fopen(path, "rb");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  int err = cli_read_all(f, buf, len);
  fclose(f);
  if (err == ENOMEM) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory reading %s", path);
  if (err) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(err));
  return ECG_OK;
}

int cli_parse_shape(const char *arg, cli_shape *s, ecg_err *e) {
  memset(s, 0, sizeof *s);
  const char *eq = strrchr(arg, '=');
  if (!eq || eq == arg || !eq[1])
    return ecg_errf(e, ECG_ERR_USAGE, "--input-shape '%s': expected NAME=D0xD1x... (e.g. input=1x3x224x224)", arg);
  size_t nlen = (size_t)(eq - arg);
  char *name = malloc(nlen + 1);
  if (!name) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  memcpy(name, arg, nlen);
  name[nlen] = 0;
  s->name = name; /* owned by the caller for the program's life */
  const char *p = eq + 1;
  while (*p) {
    if (s->rank == ECG_MAX_RANK)
      return ecg_errf(e, ECG_ERR_USAGE, "--input-shape '%s': more than %d dims", arg, ECG_MAX_RANK);
    const char *q = p;
    while (*q && *q != 'x' && *q != 'X' && *q != ',') q++;
    size_t len = (size_t)(q - p);
    if (len == 0 || len >= sizeof s->syms[0])
      return ecg_errf(e, ECG_ERR_USAGE, "--input-shape '%s': empty or too long dimension", arg);
    char tok[32];
    memcpy(tok, p, len);
    tok[len] = 0;
    char *end;
    long long v = strtoll(tok, &end, 10);
    if (*end == 0 && tok[0] != '-' && tok[0] != '+') {
      if (v < 0 || v > (1LL << 40))
        return ecg_errf(e, ECG_ERR_USAGE, "--input-shape '%s': dimension %s out of range", arg, tok);
      s->dims[s->rank] = v;
    } else if ((tok[0] >= 'A' && tok[0] <= 'Z') || (tok[0] >= 'a' && tok[0] <= 'z') || tok[0] == '_' || tok[0] == '?') {
      s->dims[s->rank] = -1; /* keep dynamic, named tok */
      memcpy(s->syms[s->rank], tok, len + 1);
    } else {
      return ecg_errf(e, ECG_ERR_USAGE, "--input-shape '%s': bad dimension '%s'", arg, tok);
    }
    s->rank++;
    p = *q ? q + 1 : q;
    if (*q && !*p) return ecg_errf(e, ECG_ERR_USAGE, "--input-shape '%s': trailing separator", arg);
  }
  return ECG_OK;
}
