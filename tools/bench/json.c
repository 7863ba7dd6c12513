/* json.c: the little JSON ecg-bench needs: find a key's string or number value in
 * model.json or ort_run.mjs's output line, and print strings and numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/** Pointer just past `"key"` and the following ':' (whitespace skipped) for the first
 *  occurrence of key used as an object key in json; NULL when absent. */
static const char *find_value(const char *json, const char *key) {
  size_t klen = strlen(key);
  for (const char *p = strchr(json, '"'); p; p = strchr(p + 1, '"')) {
    if (strncmp(p + 1, key, klen) != 0 || p[1 + klen] != '"') continue;
    const char *q = p + 2 + klen;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
    if (*q != ':') continue;
    q++;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
    return q;
  }
  return NULL;
}

bool bt_json_string(const char *json, const char *key, char *out, size_t cap) {
  const char *p = find_value(json, key);
  if (!p || *p != '"' || cap == 0) return false;
  size_t n = 0;
  for (p++; *p && *p != '"'; p++) {
    char c = *p;
    if (c == '\\') {
      p++;
      switch (*p) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'u': {
        char hex[5] = {0};
        for (int i = 0; i < 4; i++) {
          if (!p[1 + i]) return false;
          hex[i] = p[1 + i];
        }
        long v = strtol(hex, NULL, 16);
        c = v > 0 && v < 128 ? (char)v : '?';
        p += 4;
        break;
      }
      case 0: return false;
      default: c = *p; break; /* \" \\ \/ */
      }
    }
    if (n + 1 >= cap) return false;
    out[n++] = c;
  }
  if (*p != '"') return false;
  out[n] = 0;
  return true;
}

bool bt_json_number(const char *json, const char *key, double *v) {
  const char *p = find_value(json, key);
  if (!p) return false;
  char *end;
  *v = strtod(p, &end);
  return end != p;
}

void bt_json_print_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", f);
    else if (*p == '\t') fputs("\\t", f);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

void bt_json_print_number(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
  else fputs("null", f);
}
