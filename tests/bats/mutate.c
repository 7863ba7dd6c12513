/* mutate: deterministic byte mutations for the bats fuzz and malformed-input suites.
 *
 *   mutate IN OUTDIR PREFIX SEED N   write N mutants of IN as OUTDIR/PREFIX-K (K = 0..N-1)
 *   mutate --random SEED LEN OUT     write LEN pseudo-random bytes to OUT
 *
 * Each mutant applies 1-4 operations drawn from a xorshift64* generator seeded by
 * SEED and K: flip bits of a byte, set a byte to 0x00/0xff/0x7f/0x80, truncate,
 * duplicate a region in place, delete a region, overwrite 8 bytes with a
 * little-endian integer near a power of two (lengths/varints).  Same inputs -> same
 * files, on every machine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t st;
static uint64_t rnd(void) {
  st ^= st >> 12; st ^= st << 25; st ^= st >> 27;
  return st * 2685821657736338717ull;
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  size_t cap = 1 << 16, n = 0, got;
  unsigned char *b = malloc(cap);
  while ((got = fread(b + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) b = realloc(b, cap *= 2);
  }
  fclose(f);
  *len = n;
  return b;
}

static void spit(const char *path, const unsigned char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) { perror(path); exit(1); }
}

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "--random")) {
    st = strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
    size_t n = strtoull(argv[3], NULL, 10);
    unsigned char *b = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(rnd() >> 56);
    spit(argv[4], b, n);
    return 0;
  }
  if (argc != 6) {
    fprintf(stderr, "usage: mutate IN OUTDIR PREFIX SEED N | mutate --random SEED LEN OUT\n");
    return 2;
  }
  size_t len;
  unsigned char *orig = slurp(argv[1], &len);
  uint64_t seed = strtoull(argv[4], NULL, 10);
  int count = atoi(argv[5]);
  size_t cap = len * 2 + 64;
  unsigned char *b = malloc(cap), *tmp = malloc(cap);
  char path[4096];
  for (int k = 0; k < count; k++) {
    st = (seed * 1000003ull + (uint64_t)k) * 0x9E3779B97F4A7C15ull + 1;
    for (int w = 0; w < 4; w++) rnd();
    size_t n = len;
    memcpy(b, orig, len);
    int ops = 1 + (int)below(4);
    for (int o = 0; o < ops && n > 0; o++) {
      size_t at = below(n);
      switch (below(10)) {
      case 0: case 1: case 2: b[at] ^= (unsigned char)(1u << below(8)); break;
      case 3: case 4: { static const unsigned char v[] = {0x00, 0xff, 0x7f, 0x80}; b[at] = v[below(4)]; break; }
      case 5: n = at; break; /* truncate */
      case 6: { /* duplicate [at, at+r) right after itself, bounded by cap */
        size_t r = 1 + below(n - at < 64 ? n - at : 64);
        if (n + r > cap) break;
        memcpy(tmp, b + at, r);
        memmove(b + at + r, b + at, n - at);
        memcpy(b + at + r, tmp, r);
        n += r;
        break;
      }
      case 7: { /* delete [at, at+r) */
        size_t r = 1 + below(n - at < 32 ? n - at : 32);
        memmove(b + at, b + at + r, n - at - r);
        n -= r;
        break;
      }
      default: { /* an integer near a power of two, little-endian */
        uint64_t v = ((uint64_t)1 << below(63)) + below(3) - 1;
        for (int i = 0; i < 8 && at + i < n; i++) b[at + i] = (unsigned char)(v >> (8 * i));
        break;
      }
      }
    }
    snprintf(path, sizeof path, "%s/%s-%03d", argv[2], argv[3], k);
    spit(path, b, n);
  }
  return 0;
}
