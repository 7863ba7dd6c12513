/* jsonl.c: see jsonl.h. */
#include "jsonl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Where the value of "key" starts (after the colon and blanks), or NULL: the first
 *  "key" followed by a colon (a string value equal to "key" is not the key). */
static const char *value_of(const char *line, const char *key) {
  char pat[128];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  for (const char *p = strstr(line, pat); p; p = strstr(p + 1, pat)) {
    const char *q = p + strlen(pat);
    while (*q == ' ' || *q == '\t') q++;
    if (*q != ':') continue;
    for (q++; *q == ' ' || *q == '\t'; q++) {}
    return q;
  }
  return NULL;
}

int jsonl_str(const char *line, const char *key, char *out, size_t cap) {
  const char *p = value_of(line, key);
  if (!p || *p != '"') return 0;
  const char *q = strchr(p + 1, '"');
  if (!q || (size_t)(q - p - 1) >= cap) return 0;
  memcpy(out, p + 1, (size_t)(q - p - 1));
  out[q - p - 1] = 0;
  return 1;
}

int jsonl_num(const char *line, const char *key, double *v) {
  const char *p = value_of(line, key);
  if (!p) return 0;
  char *end;
  *v = strtod(p, &end);
  return end != p && isfinite(*v);
}
