/* tensorpb.c: ONNX TensorProto files (backend test data input_K.pb / output_K.pb). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "onnx.pb-c.h"

/** Largest .pb file read (bytes); larger files are refused, not allocated. */
#define TPB_MAX_FILE ((size_t)1 << 32)

/** One typed repeated field of a TensorProto: count, element bytes, pointer, and
 *  whether its values are integers to be truncated to the tensor's element size
 *  (int32_data/int64_data/uint64_data) or floats stored verbatim (float_data as
 *  float32, double_data as float64). */
typedef struct typed_field {
  size_t n;
  size_t esize;
  const void *p;
  bool integer;
} typed_field;

/** Which typed field carries the values of dtype (ONNX onnx.proto comments), with
 *  its expected count per tensor element in *per (2 for complex). */
static typed_field field_for(const Onnx__TensorProto *tp, int dtype, size_t *per) {
  *per = 1;
  switch (dtype) {
  case ECG_COMPLEX64: *per = 2; /* fall through */
  case ECG_FLOAT: return (typed_field){tp->n_float_data, 4, tp->float_data, false};
  case ECG_COMPLEX128: *per = 2; /* fall through */
  case ECG_DOUBLE: return (typed_field){tp->n_double_data, 8, tp->double_data, false};
  case ECG_INT64: return (typed_field){tp->n_int64_data, 8, tp->int64_data, true};
  case ECG_UINT32: case ECG_UINT64: return (typed_field){tp->n_uint64_data, 8, tp->uint64_data, true};
  default: /* int8/16/32, uint8/16, bool, float16/bfloat16 bits */
    return (typed_field){tp->n_int32_data, 4, tp->int32_data, true};
  }
}

int bt_tensorpb_decode(const uint8_t *buf, size_t len, const char *what, bt_tensor *t, ecg_err *e) {
  memset(t, 0, sizeof *t);
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
  if (!tp) return ecg_errf(e, ECG_ERR_INPUT, "%s: not a valid ONNX TensorProto", what);
  int rc = ECG_OK;
  const char *name = tp->name ? tp->name : "";
  if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s: tensor '%s' uses external data (unsupported)", what, name);
    goto out;
  }
  if (tp->segment) {
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s: tensor '%s' is segmented (unsupported)", what, name);
    goto out;
  }
  if (!tp->has_data_type || tp->data_type == ECG_STRING || ecg_dtype_size(tp->data_type) == 0) {
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s: tensor '%s' has unsupported data_type %d", what, name,
                  tp->has_data_type ? tp->data_type : 0);
    goto out;
  }
  if (tp->n_dims > ECG_MAX_RANK) {
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s: tensor '%s' has rank %zu (max %d)", what, name, tp->n_dims, ECG_MAX_RANK);
    goto out;
  }
  rc = bt_tensor_init(t, name, tp->data_type, (int)tp->n_dims, tp->dims, e);
  if (rc) { /* name the file too: "FILE: tensor 'x': shape too large" */
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    ecg_errf(e, rc, "%s: %s", what, msg);
    goto out;
  }

  size_t per, esize = ecg_dtype_size(t->dtype);
  typed_field f = field_for(tp, t->dtype, &per);
  if (tp->has_raw_data) {
    if (tp->raw_data.len != t->bytes) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s: tensor '%s': raw_data has %zu bytes, shape needs %zu", what,
                    name, tp->raw_data.len, t->bytes);
      goto out;
    }
    if ((rc = bt_tensor_alloc(t, e))) goto out;
    if (t->bytes) memcpy(t->data, tp->raw_data.data, t->bytes);
  } else {
    size_t want = t->nelem * per, sesize = esize / per;
    if (f.n != want) {
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s: tensor '%s' has %zu typed values, shape needs %zu", what, name,
                    f.n, want);
      goto out;
    }
    if ((rc = bt_tensor_alloc(t, e))) goto out;
    /* Integers: keep the low sesize bytes (two's complement truncation, which is also
     * how float16/bfloat16 bits travel in int32_data). Floats: same-size copy. */
    for (size_t i = 0; i < want; i++)
      memcpy((unsigned char *)t->data + i * sesize, (const unsigned char *)f.p + i * f.esize, sesize);
  }
out:
  if (rc) bt_tensor_clear(t);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  return rc;
}

/* One protobuf varint at *p (< end); false when malformed. */
static bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  *v = 0;
  for (int sh = 0; sh < 64 && *p < end; sh += 7) {
    uint8_t b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << sh;
    if (!(b & 0x80)) return true;
  }
  return false;
}

/* An ONNX OptionalProto (onnx-data.proto: name = 1, elem_type = 2, tensor_value = 3) holding a
 * tensor or nothing: true with the name field (printable, NUL-terminated into name), the
 * elem_type and the tensor bytes (*tv NULL when absent). Anything else (another field, a
 * non-printable name: a TensorProto's packed dims) is false. */
static bool optional_fields(const uint8_t *buf, size_t len, char *name, size_t ncap, uint64_t *elem_type,
                            const uint8_t **tv, size_t *tvlen, const uint8_t **sv, size_t *svlen) {
  const uint8_t *p = buf, *end = buf + len;
  bool have_name = false, have_type = false;
  *tv = *sv = NULL;
  *tvlen = *svlen = 0;
  while (p < end) {
    uint64_t key, v;
    if (!pb_varint(&p, end, &key)) return false;
    int field = (int)(key >> 3), wt = (int)(key & 7);
    if (field == 2 && wt == 0) {
      if (!pb_varint(&p, end, elem_type)) return false;
      have_type = true;
    } else if ((field == 1 || field == 3 || field == 5) && wt == 2) {
      if (!pb_varint(&p, end, &v) || v > (uint64_t)(end - p)) return false;
      if (field == 1) {
        if (v == 0 || v >= ncap) return false;
        for (uint64_t i = 0; i < v; i++)
          if (p[i] < 0x20 || p[i] > 0x7e) return false;
        memcpy(name, p, v);
        name[v] = 0;
        have_name = true;
      } else if (field == 3) {
        *tv = p;
        *tvlen = (size_t)v;
      } else { /* sequence_value */
        *sv = p;
        *svlen = (size_t)v;
      }
      p += v;
    } else {
      return false;
    }
  }
  return have_name && have_type;
}

int bt_optionalpb_decode(const uint8_t *buf, size_t len, const char *what, bt_tensor *t, int *present, ecg_err *e) {
  char name[256];
  uint64_t et = 0;
  const uint8_t *tv, *sv;
  size_t tvlen, svlen;
  memset(t, 0, sizeof *t);
  if (!optional_fields(buf, len, name, sizeof name, &et, &tv, &tvlen, &sv, &svlen)) return 0;
  if (et == 3 && !tv) { /* a sequence (SEQUENCE = 3), or an empty optional of one */
    if (sv) {
      int rc = bt_seqpb_decode(sv, svlen, what, t, e);
      if (rc) return -rc;
      free(t->name);
      t->name = strdup(name);
      if (!t->name) { bt_tensor_clear(t); return -ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
      *present = 1;
      return 1;
    }
    t->name = strdup(name);
    if (!t->name) return -ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    t->seq = true;
    *present = 0;
    return 1;
  }
  if (et == 1 && tv) { /* a tensor */
    int rc = bt_tensorpb_decode(tv, tvlen, what, t, e);
    if (rc) return -rc;
    free(t->name);
    t->name = strdup(name);
    if (!t->name) { bt_tensor_clear(t); return -ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
    *present = 1;
    return 1;
  }
  if (et != 0 || tv || sv) return -ecg_errf(e, ECG_ERR_INPUT, "%s: optional '%s' holds a map or another optional (not supported)", what, name);
  t->name = strdup(name); /* empty: no element */
  if (!t->name) return -ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  *present = 0;
  return 1;
}

int bt_tensorpb_read(const char *path, bt_tensor *t, ecg_err *e) {
  return bt_pb_read(path, t, NULL, e);
}

int bt_pb_read(const char *path, bt_tensor *t, int *present, ecg_err *e) {
  memset(t, 0, sizeof *t);
  FILE *f = fopen(path, "rb");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  uint8_t *buf = malloc(cap);
  int rc = ECG_OK;
  while (buf) {
    if (len == cap) {
      if (cap >= TPB_MAX_FILE) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "%s: file too large", path);
        break;
      }
      uint8_t *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) {
      if (ferror(f)) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: read error", path);
      break;
    }
  }
  fclose(f);
  if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory reading %s", path);
  if (!rc && present) { /* an OptionalProto, when the caller accepts one */
    *present = -1;
    int r = bt_optionalpb_decode(buf, len, path, t, present, e);
    if (r != 0) { free(buf); return r < 0 ? -r : ECG_OK; }
  }
  if (!rc) rc = bt_tensorpb_decode(buf, len, path, t, e);
  free(buf);
  return rc;
}

int bt_tensorpb_write(const char *path, const bt_tensor *t, ecg_err *e) {
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  tp.n_dims = (size_t)t->rank;
  tp.dims = (int64_t *)t->dims;
  tp.has_data_type = 1;
  tp.data_type = t->dtype;
  tp.name = t->name;
  tp.has_raw_data = 1;
  tp.raw_data.len = t->bytes;
  tp.raw_data.data = t->data;
  size_t n = onnx__tensor_proto__get_packed_size(&tp);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory writing %s", path);
  onnx__tensor_proto__pack(&tp, buf);
  ecg_out o;
  int rc = ecg_out_open(&o, path, e);
  if (!rc && fwrite(buf, 1, n, o.f) != n) {
    rc = ecg_errf(e, ECG_ERR_INPUT, "%s: cannot write: %s", path, strerror(errno));
    ecg_out_abort(&o);
  } else if (!rc) {
    rc = ecg_out_commit(&o, e);
  }
  free(buf);
  return rc;
}
