/* seqpb.c: run-time sequence values in ecg-bench (issue 9): ONNX SequenceProto files
 * (onnx-data.proto; the input_K.pb / output_K.pb of a sequence graph input or output), the
 * runner's sequence files (tools/lower/LOWERED.md "Sequences") they are turned into, and
 * their comparison.
 *
 * A sequence bt_tensor (seq set) holds in data the sequence file: little-endian int64 count,
 * then per item int64 dtype, rank and dims[rank] and the item's dense bytes; dtype is the
 * items' element type (0 for an empty sequence whose file gives none), rank 0. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "onnx.pb-c.h"

/** Largest sequence file built or read (bytes), as for .pb files. */
#define SEQ_MAX_BYTES ((size_t)1 << 32)

typedef struct { uint8_t *p; size_t len, cap; bool oom; } growbuf;

static void put(growbuf *b, const void *src, size_t n) {
  if (b->oom) return;
  if (b->len + n > SEQ_MAX_BYTES) { b->oom = true; return; }
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    uint8_t *np = realloc(b->p, cap);
    if (!np) { b->oom = true; return; }
    b->p = np;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->len, src, n);
  b->len += n;
}
static void put64(growbuf *b, int64_t v) { put(b, &v, 8); }

/* One protobuf varint at *p (< end); false when malformed. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  *v = 0;
  for (int sh = 0; sh < 64 && *p < end; sh += 7) {
    uint8_t c = *(*p)++;
    *v |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80)) return true;
  }
  return false;
}

int bt_seq_from_items(bt_tensor *t, const char *name, int dtype, const bt_tensor *items, int n, ecg_err *e) {
  memset(t, 0, sizeof *t);
  growbuf b = {0};
  put64(&b, n);
  for (int i = 0; i < n; i++) {
    put64(&b, items[i].dtype);
    put64(&b, items[i].rank);
    for (int k = 0; k < items[i].rank; k++) put64(&b, items[i].dims[k]);
    put(&b, items[i].data, items[i].bytes);
  }
  t->name = strdup(name ? name : "");
  if (b.oom || !t->name) {
    free(b.p);
    free(t->name);
    t->name = NULL;
    return ecg_errf(e, b.oom ? ECG_ERR_INPUT : ECG_ERR_INTERNAL, "sequence '%s': too large (over 4 GiB) or out of memory", name ? name : "");
  }
  t->seq = true;
  t->dtype = dtype;
  t->nelem = 1;
  t->data = b.p;
  t->bytes = b.len;
  return ECG_OK;
}

int bt_seqpb_decode(const uint8_t *buf, size_t len, const char *what, bt_tensor *t, ecg_err *e) {
  memset(t, 0, sizeof *t);
  const uint8_t *p = buf, *end = buf + len;
  char name[256] = "";
  uint64_t et = 0;
  bt_tensor *items = NULL;
  int n = 0, rc = ECG_OK, dtype = 0;
  while (p < end && rc == ECG_OK) {
    uint64_t key, v;
    if (!varint(&p, end, &key)) { rc = ecg_errf(e, ECG_ERR_INPUT, "%s: not a valid ONNX SequenceProto", what); break; }
    int field = (int)(key >> 3), wt = (int)(key & 7);
    if (field == 2 && wt == 0) {
      if (!varint(&p, end, &et)) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: not a valid ONNX SequenceProto", what);
      continue;
    }
    if (wt != 2 || !varint(&p, end, &v) || v > (uint64_t)(end - p)) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s: not a valid ONNX SequenceProto", what);
      break;
    }
    if (field == 1) {
      snprintf(name, sizeof name, "%.*s", (int)(v < sizeof name ? v : sizeof name - 1), (const char *)p);
    } else if (field == 3) { /* tensor_values */
      if (n >= (1 << 20)) { rc = ecg_errf(e, ECG_ERR_INPUT, "%s: sequence of more than 2^20 tensors", what); break; }
      bt_tensor *ni = realloc(items, sizeof *ni * (size_t)(n + 1));
      if (!ni) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
      items = ni;
      if ((rc = bt_tensorpb_decode(p, (size_t)v, what, &items[n], e)) != ECG_OK) break;
      if (n && items[n].dtype != items[0].dtype) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "%s: sequence items of different dtypes (%s, %s)", what, ecg_dtype_name(items[0].dtype),
                      ecg_dtype_name(items[n].dtype));
        bt_tensor_clear(&items[n]);
        break;
      }
      dtype = items[n].dtype;
      n++;
    } else {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s: sequence '%s' holds sequences, maps, optionals or sparse tensors (not supported)", what, name);
      break;
    }
    p += v;
  }
  if (rc == ECG_OK && et != 0 && et != 1) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: sequence '%s' of element type %llu (only tensors are supported)", what, name, (unsigned long long)et);
  if (rc == ECG_OK) rc = bt_seq_from_items(t, name, dtype, items, n, e);
  for (int i = 0; i < n; i++) bt_tensor_clear(&items[i]);
  free(items);
  return rc;
}

int bt_seq_items(const bt_tensor *t, bt_tensor **items, int *n, ecg_err *e) {
  const uint8_t *p = t->data, *end = p + t->bytes;
  int64_t cnt;
  *items = NULL;
  *n = 0;
#define WORD(V) do { if (end - p < 8) goto bad; memcpy(&(V), p, 8); p += 8; } while (0)
  WORD(cnt);
  if (cnt < 0 || (uint64_t)cnt > t->bytes / 16 + 1) goto bad;
  *items = calloc((size_t)cnt + 1, sizeof **items);
  if (!*items) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int64_t i = 0; i < cnt; i++) {
    bt_tensor *v = &(*items)[i];
    int64_t dt, r;
    WORD(dt);
    WORD(r);
    size_t es = ecg_dtype_size((int)dt);
    if (r < 0 || r > ECG_MAX_RANK || !es || dt == ECG_STRING) goto bad;
    v->name = t->name; /* borrowed: items are views */
    v->dtype = (int)dt;
    v->rank = (int)r;
    v->nelem = 1;
    for (int k = 0; k < v->rank; k++) {
      WORD(v->dims[k]);
      if (v->dims[k] < 0 || v->dims[k] > ((int64_t)1 << 40) || (v->dims[k] && v->nelem > ((size_t)1 << 40) / (size_t)v->dims[k])) goto bad;
      v->nelem *= (size_t)v->dims[k];
    }
    v->bytes = v->nelem * es;
    if ((size_t)(end - p) < v->bytes) goto bad;
    v->data = (void *)p;
    p += v->bytes;
    (*n)++;
  }
#undef WORD
  if (p == end) return ECG_OK;
bad:
  free(*items);
  *items = NULL;
  *n = 0;
  return ecg_errf(e, ECG_ERR_INPUT, "sequence '%s': malformed sequence file", t->name ? t->name : "");
}

void bt_compare_seq(const bt_tensor *ours, const bt_tensor *exp, double rtol, double atol, bt_cmp *r) {
  memset(r, 0, sizeof *r);
  bt_tensor *a = NULL, *b = NULL;
  int na = 0, nb = 0;
  ecg_err e;
  if (bt_seq_items(ours, &a, &na, &e) || bt_seq_items(exp, &b, &nb, &e) || na != nb) { /* the count differs */
    r->mismatches = 1;
    r->worst = r->max_abs = r->max_rel = INFINITY;
    free(a);
    free(b);
    return;
  }
  for (int i = 0; i < na; i++) {
    if (a[i].dtype != b[i].dtype || !bt_same_shape(&a[i], &b[i])) { /* an item of another shape */
      if (r->mismatches++ == 0) r->first_bad = (size_t)i;
      r->worst = r->max_abs = r->max_rel = INFINITY;
      continue;
    }
    bt_cmp c;
    bt_compare(&a[i], &b[i], rtol, atol, &c);
    if (c.max_abs > r->max_abs) r->max_abs = c.max_abs;
    if (c.max_rel > r->max_rel) r->max_rel = c.max_rel;
    if (c.worst > r->worst) r->worst = c.worst;
    if (c.mismatches && r->mismatches == 0) r->first_bad = (size_t)i;
    r->mismatches += c.mismatches;
  }
  free(a);
  free(b);
}

int bt_seqpb_write(const char *path, const bt_tensor *t, ecg_err *e) {
  bt_tensor *it = NULL;
  int n = 0;
  ECG_TRY(bt_seq_items(t, &it, &n, e));
  growbuf b = {0};
  uint8_t hdr[16];
  size_t nl = strlen(t->name ? t->name : "");
  /* name = 1 (length-delimited), elem_type = 2 (TENSOR = 1), tensor_values = 3 */
  hdr[0] = 0x0a;
  size_t h = 1;
  for (uint64_t v = nl;; v >>= 7) { hdr[h++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)); if (v <= 0x7f) break; }
  put(&b, hdr, h);
  put(&b, t->name ? t->name : "", nl);
  hdr[0] = 0x10; hdr[1] = 1;
  put(&b, hdr, 2);
  for (int i = 0; i < n && !b.oom; i++) {
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    tp.n_dims = (size_t)it[i].rank;
    tp.dims = it[i].dims;
    tp.has_data_type = 1;
    tp.data_type = it[i].dtype;
    tp.has_raw_data = 1;
    tp.raw_data.len = it[i].bytes;
    tp.raw_data.data = it[i].data;
    size_t sz = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *tb = malloc(sz ? sz : 1);
    if (!tb) { b.oom = true; break; }
    onnx__tensor_proto__pack(&tp, tb);
    hdr[0] = 0x1a;
    h = 1;
    for (uint64_t v = sz;; v >>= 7) { hdr[h++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)); if (v <= 0x7f) break; }
    put(&b, hdr, h);
    put(&b, tb, sz);
    free(tb);
  }
  free(it);
  if (b.oom) { free(b.p); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory writing %s", path); }
  ecg_out o;
  int rc = ecg_out_open(&o, path, e);
  if (!rc && b.len && fwrite(b.p, 1, b.len, o.f) != b.len) {
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s: cannot write: %s", path, strerror(errno));
    ecg_out_abort(&o);
  } else if (!rc) {
    rc = ecg_out_commit(&o, e);
  }
  free(b.p);
  return rc;
}
