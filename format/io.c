/* libecg: the framed ECG stream (format/ECG.md): magic, version, flags, lengths,
 * protobuf payload, optionally zstd-compressed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "ecg.h"

static const unsigned char MAGIC[4] = {'E', 'C', 'G', 'F'};
enum { HEADER_BYTES = 24, FLAG_ZSTD = 1 };
/* Refuse absurd lengths before allocating: 16 GiB. */
#define MAX_PAYLOAD ((uint64_t)16 << 30)

static uint64_t get_le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++, v >>= 8) p[i] = (unsigned char)(v & 0xff);
}

/* Read up to n bytes from f into a buffer grown as bytes arrive (first chunk at most
 * 1 MiB, then doubling, never beyond n).  *got receives the count (< n at end of file).
 * Returns ECG_OK or ECG_ERR_INTERNAL (out of memory; nothing allocated then). */
static int read_grow(FILE *f, uint64_t n, unsigned char **out, size_t *got) {
  size_t cap = n < ((size_t)1 << 20) ? (size_t)n : (size_t)1 << 20, len = 0;
  unsigned char *b = malloc(cap ? cap : 1);
  if (!b) return ECG_ERR_INTERNAL;
  while (len < n) {
    if (len == cap) {
      size_t nc = cap * 2 > n ? (size_t)n : cap * 2;
      unsigned char *nb = realloc(b, nc);
      if (!nb) { free(b); return ECG_ERR_INTERNAL; }
      b = nb; cap = nc;
    }
    size_t r = fread(b + len, 1, cap - len, f);
    if (r == 0) break;
    len += r;
  }
  *out = b; *got = len;
  return ECG_OK;
}

/* Decompress one zstd frame of `stored` bytes that must yield exactly `raw` bytes, into a
 * buffer grown with the output actually produced (a header's claimed raw size alone never
 * allocates).  Returns ECG_OK, ECG_ERR_INPUT (*why says what) or ECG_ERR_INTERNAL. */
static int unzstd_grow(const unsigned char *src, size_t stored, uint64_t raw, unsigned char **out, const char **why) {
  ZSTD_DCtx *dc = ZSTD_createDCtx();
  if (!dc) return ECG_ERR_INTERNAL;
  size_t cap = raw < ((size_t)1 << 20) ? (size_t)raw : (size_t)1 << 20;
  unsigned char *b = malloc(cap + 1); /* +1: room to see output beyond raw */
  if (!b) { ZSTD_freeDCtx(dc); return ECG_ERR_INTERNAL; }
  ZSTD_inBuffer in = {src, stored, 0};
  ZSTD_outBuffer ob = {b, cap + 1, 0};
  int rc = ECG_OK;
  for (;;) {
    size_t r = ZSTD_decompressStream(dc, &ob, &in);
    if (ZSTD_isError(r)) { *why = ZSTD_getErrorName(r); rc = ECG_ERR_INPUT; break; }
    if (ob.pos > raw) { *why = "length mismatch"; rc = ECG_ERR_INPUT; break; }
    if (r == 0) { /* frame complete */
      if (ob.pos != raw || in.pos != in.size) { *why = "length mismatch"; rc = ECG_ERR_INPUT; }
      break;
    }
    if (ob.pos == ob.size) { /* grow, at most to raw + 1 */
      size_t nc = cap * 2 > raw ? (size_t)raw : cap * 2;
      if (nc <= cap) { *why = "length mismatch"; rc = ECG_ERR_INPUT; break; }
      unsigned char *nb = realloc(b, nc + 1);
      if (!nb) { rc = ECG_ERR_INTERNAL; break; }
      b = nb; cap = nc; ob.dst = b; ob.size = cap + 1;
    } else if (in.pos == in.size) { *why = "truncated frame"; rc = ECG_ERR_INPUT; break; }
  }
  ZSTD_freeDCtx(dc);
  if (rc != ECG_OK) { free(b); return rc; }
  *out = b;
  return ECG_OK;
}

int ecg_read(FILE *f, ecg_graph **out, ecg_err *e) {
  unsigned char h[HEADER_BYTES];
  size_t got = fread(h, 1, HEADER_BYTES, f);
  if (got == 0) return ecg_errf(e, ECG_ERR_INPUT, "empty input: expected an ECG stream");
  if (got >= 4 && memcmp(h, MAGIC, 4) != 0)
    return ecg_errf(e, ECG_ERR_INPUT, "not an ECG stream (bad magic; is this an ONNX file? use onnx2ecg)");
  if (got < HEADER_BYTES) return ecg_errf(e, ECG_ERR_INPUT, "truncated ECG header (%zu of %d bytes)", got, HEADER_BYTES);
  unsigned version = (unsigned)get_le(h + 4, 2), flags = (unsigned)get_le(h + 6, 2);
  uint64_t stored = get_le(h + 8, 8), raw = get_le(h + 16, 8);
  if (version == 0 || version > ECG_FRAME_VERSION)
    return ecg_errf(e, ECG_ERR_INPUT, "ECG stream version %u is not supported (this build reads stream version %d, schema %d)", version, ECG_FRAME_VERSION, ECG_SCHEMA_VERSION);
  if (flags & ~(unsigned)FLAG_ZSTD) return ecg_errf(e, ECG_ERR_INPUT, "unknown ECG header flags 0x%x", flags);
  if (stored > MAX_PAYLOAD || raw > MAX_PAYLOAD) return ecg_errf(e, ECG_ERR_INPUT, "ECG payload length too large");
  if (!(flags & FLAG_ZSTD) && stored != raw) return ecg_errf(e, ECG_ERR_INPUT, "corrupt ECG header: lengths differ without compression");
  /* Memory follows the bytes really present (a header may claim gigabytes in a file of a
   * few bytes: "tensor data larger than the file", format/ECG.md "Limits"). */
  unsigned char *buf = NULL;
  size_t have = 0;
  int rc = read_grow(f, stored, &buf, &have);
  if (rc == ECG_ERR_INTERNAL) return ecg_errf(e, rc, "out of memory reading the ECG payload");
  if (have != stored) {
    free(buf);
    return ecg_errf(e, ECG_ERR_INPUT, "truncated ECG payload (%zu of %llu bytes)", have, (unsigned long long)stored);
  }
  if (flags & FLAG_ZSTD) {
    unsigned char *dec = NULL;
    const char *why = NULL;
    rc = unzstd_grow(buf, stored, raw, &dec, &why);
    free(buf);
    if (rc == ECG_ERR_INTERNAL) return ecg_errf(e, rc, "out of memory decompressing the ECG payload");
    if (rc != ECG_OK) return ecg_errf(e, ECG_ERR_INPUT, "corrupt zstd payload: %s", why);
    buf = dec;
  }
  ecg_graph *g = ecg__graph__unpack(NULL, raw, buf);
  free(buf);
  if (!g) return ecg_errf(e, ECG_ERR_INPUT, "corrupt ECG payload: protobuf decoding failed");
  *out = g;
  return ECG_OK;
}

int ecg_read_path(const char *path, ecg_graph **out, ecg_err *e) {
  if (strcmp(path, "-") == 0) return ecg_read(stdin, out, e);
  FILE *f = fopen(path, "rb");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen succeeds on a directory */
    fclose(f);
    return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(EISDIR));
  }
  int rc = ecg_read(f, out, e);
  fclose(f);
  if (rc != ECG_OK && e) { /* name the file the user gave */
    char why[sizeof e->msg];
    snprintf(why, sizeof why, "%s", e->msg);
    ecg_errf(e, rc, "%s: %s", path, why);
  }
  return rc;
}

int ecg_write(FILE *f, const ecg_graph *g, int zstd_level, ecg_err *e) {
  size_t raw = ecg__graph__get_packed_size(g);
  unsigned char *buf = malloc(raw ? raw : 1);
  if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory packing %zu bytes", raw);
  ecg__graph__pack(g, buf);
  unsigned char *payload = buf;
  size_t stored = raw;
  unsigned flags = 0;
  if (zstd_level > 0) {
    size_t cap = ZSTD_compressBound(raw);
    unsigned char *c = malloc(cap);
    if (!c) { free(buf); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
    size_t r = ZSTD_compress(c, cap, buf, raw, zstd_level);
    if (ZSTD_isError(r)) {
      free(buf); free(c);
      return ecg_errf(e, ECG_ERR_INTERNAL, "zstd: %s", ZSTD_getErrorName(r));
    }
    payload = c;
    stored = r;
    flags |= FLAG_ZSTD;
  }
  unsigned char h[HEADER_BYTES];
  memcpy(h, MAGIC, 4);
  put_le(h + 4, ECG_FRAME_VERSION, 2);
  put_le(h + 6, flags, 2);
  put_le(h + 8, stored, 8);
  put_le(h + 16, raw, 8);
  int ok = fwrite(h, 1, HEADER_BYTES, f) == HEADER_BYTES && fwrite(payload, 1, stored, f) == stored;
  if (payload != buf) free(payload);
  free(buf);
  if (!ok || fflush(f) != 0) return ecg_errf(e, ECG_ERR_INPUT, "%s", strerror(errno ? errno : EIO));
  return ECG_OK;
}

int ecg_out_open(ecg_out *o, const char *path, ecg_err *e) {
  memset(o, 0, sizeof *o);
  o->path = path;
  if (strcmp(path, "-") == 0) {
    o->path = "stdout";
    o->f = stdout;
    return ECG_OK;
  }
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(EISDIR));
    o->f = fopen(path, "wb"); /* a device or FIFO: no rename over it */
  } else {
    size_t n = strlen(path) + 24;
    o->tmp = malloc(n);
    if (!o->tmp) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    snprintf(o->tmp, n, "%s.tmp%ld", path, (long)getpid());
    o->f = fopen(o->tmp, "wb");
  }
  if (!o->f) {
    int rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
    free(o->tmp);
    o->tmp = NULL;
    return rc;
  }
  return ECG_OK;
}

int ecg_out_commit(ecg_out *o, ecg_err *e) {
  int err = 0;
  if (fflush(o->f) != 0 || ferror(o->f)) err = errno ? errno : EIO;
  if (o->f != stdout) {
    if (fclose(o->f) != 0 && !err) err = errno;
    o->f = NULL;
  }
  if (!err && o->tmp && rename(o->tmp, o->path) != 0) err = errno;
  int rc = err ? ecg_errf(e, ECG_ERR_INPUT, "%s: %s", o->path, strerror(err)) : ECG_OK;
  ecg_out_abort(o);
  return rc;
}

void ecg_out_abort(ecg_out *o) {
  if (o->f && o->f != stdout) fclose(o->f);
  o->f = NULL;
  if (o->tmp) remove(o->tmp);
  free(o->tmp);
  o->tmp = NULL;
}

int ecg_write_path(const char *path, const ecg_graph *g, int zstd_level, ecg_err *e) {
  if (strcmp(path, "-") == 0 && isatty(fileno(stdout)))
    return ecg_errf(e, ECG_ERR_USAGE, "refusing to write a binary ECG to a terminal (redirect stdout or use -o FILE)");
  ecg_out o;
  ECG_TRY(ecg_out_open(&o, path, e));
  int rc = ecg_write(o.f, g, zstd_level, e);
  if (rc == ECG_ERR_INPUT) {
    char why[sizeof e->msg];
    snprintf(why, sizeof why, "%s", e->msg);
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", o.path, why);
  }
  if (rc != ECG_OK) {
    ecg_out_abort(&o);
    return rc;
  }
  return ecg_out_commit(&o, e);
}
