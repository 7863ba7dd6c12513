/* libecg: the framed ECG stream (format/ECG.md): magic, version, flags, lengths,
 * protobuf payload, optionally zstd-compressed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
  unsigned char *buf = malloc(stored ? stored : 1);
  if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory reading %llu bytes", (unsigned long long)stored);
  got = fread(buf, 1, stored, f);
  if (got != stored) {
    free(buf);
    return ecg_errf(e, ECG_ERR_INPUT, "truncated ECG payload (%zu of %llu bytes)", got, (unsigned long long)stored);
  }
  if (flags & FLAG_ZSTD) {
    unsigned char *dec = malloc(raw ? raw : 1);
    if (!dec) { free(buf); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
    size_t r = ZSTD_decompress(dec, raw, buf, stored);
    free(buf);
    if (ZSTD_isError(r) || r != raw) {
      free(dec);
      return ecg_errf(e, ECG_ERR_INPUT, "corrupt zstd payload: %s", ZSTD_isError(r) ? ZSTD_getErrorName(r) : "length mismatch");
    }
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
  int rc = ecg_read(f, out, e);
  fclose(f);
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
  if (!ok || fflush(f) != 0) return ecg_errf(e, ECG_ERR_INTERNAL, "write error: %s", strerror(errno));
  return ECG_OK;
}

int ecg_write_path(const char *path, const ecg_graph *g, int zstd_level, ecg_err *e) {
  if (strcmp(path, "-") == 0) {
    if (isatty(fileno(stdout)))
      return ecg_errf(e, ECG_ERR_USAGE, "refusing to write a binary ECG to a terminal (redirect stdout or use -o FILE)");
    return ecg_write(stdout, g, zstd_level, e);
  }
  size_t n = strlen(path) + 16;
  char *tmp = malloc(n);
  if (!tmp) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    int rc = ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
    free(tmp);
    return rc;
  }
  int rc = ecg_write(f, g, zstd_level, e);
  if (fclose(f) != 0 && rc == ECG_OK) rc = ecg_errf(e, ECG_ERR_INTERNAL, "%s: %s", path, strerror(errno));
  if (rc == ECG_OK && rename(tmp, path) != 0) rc = ecg_errf(e, ECG_ERR_INTERNAL, "%s: %s", path, strerror(errno));
  if (rc != ECG_OK) remove(tmp);
  free(tmp);
  return rc;
}
