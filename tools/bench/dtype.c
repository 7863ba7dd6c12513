/* dtype.c: bt_tensor basics, the one element-to-double conversion, seeded inputs. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bt_tensor_clear(bt_tensor *t) {
  if (!t) return;
  free(t->name);
  free(t->data);
  memset(t, 0, sizeof *t);
}

int bt_tensor_init(bt_tensor *t, const char *name, int dtype, int rank, const int64_t *dims,
                   ecg_err *e) {
  memset(t, 0, sizeof *t);
  size_t esize = ecg_dtype_size(dtype);
  if (esize == 0)
    return ecg_errf(e, ECG_ERR_INPUT, "tensor '%s': unsupported dtype %d (%s)", name, dtype,
                    ecg_dtype_name(dtype));
  if (rank < 0 || rank > ECG_MAX_RANK)
    return ecg_errf(e, ECG_ERR_INPUT, "tensor '%s': rank %d not supported (max %d)", name, rank,
                    ECG_MAX_RANK);
  size_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return ecg_errf(e, ECG_ERR_INPUT, "tensor '%s': negative dim %lld", name, (long long)dims[i]);
    if (__builtin_mul_overflow(n, (size_t)dims[i], &n))
      return ecg_errf(e, ECG_ERR_INPUT, "tensor '%s': shape too large", name);
    t->dims[i] = dims[i];
  }
  size_t bytes;
  if (__builtin_mul_overflow(n, esize, &bytes) || bytes > ((size_t)1 << 40))
    return ecg_errf(e, ECG_ERR_INPUT, "tensor '%s': shape too large", name);
  t->name = strdup(name);
  if (!t->name) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  t->dtype = dtype;
  t->rank = rank;
  t->nelem = n;
  t->bytes = bytes;
  return ECG_OK;
}

int bt_tensor_alloc(bt_tensor *t, ecg_err *e) {
  free(t->data);
  t->data = calloc(1, t->bytes ? t->bytes : 1);
  if (!t->data) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory (%zu bytes for '%s')", t->bytes, t->name);
  return ECG_OK;
}

char *bt_dims_str(const bt_tensor *t, char *buf, size_t cap) {
  if (t->rank == 0) {
    snprintf(buf, cap, "scalar");
    return buf;
  }
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < t->rank && len < cap; i++)
    len += (t->sym >> i & 1) ? (size_t)snprintf(buf + len, cap - len, "%s?", i ? "x" : "")
                              : (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "x" : "", (long long)t->dims[i]);
  return buf;
}

bool bt_same_shape(const bt_tensor *a, const bt_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bool bt_dtype_exact(int dtype) { return !ecg_dtype_is_float(dtype) && dtype != ECG_COMPLEX64 && dtype != ECG_COMPLEX128; }

void bt_scalar_view(int dtype, size_t nelem, int *sdtype, size_t *n) {
  *sdtype = dtype == ECG_COMPLEX64 ? ECG_FLOAT : dtype == ECG_COMPLEX128 ? ECG_DOUBLE : dtype;
  *n = *sdtype == dtype ? nelem : 2 * nelem;
}

/** IEEE half bits -> float: exact, subnormals, infinities and NaN included. */
static double half_to_double(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * ldexp(mant, -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * ldexp(mant | 0x400, exp - 25);
}

double bt_get_f64(int dtype, const void *buf, size_t i) {
  const unsigned char *p = (const unsigned char *)buf + i * ecg_dtype_size(dtype);
  union { float f; double d; int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32;
          uint32_t u32; int64_t i64; uint64_t u64; } v;
  memcpy(&v, p, ecg_dtype_size(dtype)); /* little-endian host (x86-64, aarch64) */
  switch (dtype) {
  case ECG_FLOAT: return v.f;
  case ECG_DOUBLE: return v.d;
  case ECG_INT8: return v.i8;
  case ECG_UINT8: return v.u8;
  case ECG_BOOL: return v.u8 != 0;
  case ECG_INT16: return v.i16;
  case ECG_UINT16: return v.u16;
  case ECG_INT32: return v.i32;
  case ECG_UINT32: return v.u32;
  case ECG_INT64: return (double)v.i64;
  case ECG_UINT64: return (double)v.u64;
  case ECG_FLOAT16: return half_to_double(v.u16);
  case ECG_BFLOAT16: {
    uint32_t bits = (uint32_t)v.u16 << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  default: return NAN;
  }
}

uint32_t bt_rand32(uint32_t *state) {
  uint32_t t = (*state += 0x6D2B79F5u);
  t = (t ^ (t >> 15)) * (t | 1u);
  t ^= t + (t ^ (t >> 7)) * (t | 61u);
  return t ^ (t >> 14);
}

/** True when name contains "mask", case-insensitively. */
static bool name_has_mask(const char *name) {
  for (const char *p = name; *p; p++) {
    if (tolower((unsigned char)p[0]) == 'm' && tolower((unsigned char)p[1]) == 'a' &&
        tolower((unsigned char)p[2]) == 's' && tolower((unsigned char)p[3]) == 'k')
      return true;
  }
  return false;
}

void bt_fill_random(bt_tensor *t, uint32_t *state) {
  int sdtype;
  size_t n;
  bt_scalar_view(t->dtype, t->nelem, &sdtype, &n);
  bool is_float = ecg_dtype_is_float(sdtype) && sdtype != ECG_BFLOAT16;
  uint32_t mod = (sdtype == ECG_BOOL || name_has_mask(t->name)) ? 2 : 100;
  for (size_t i = 0; i < n; i++) {
    uint32_t u = bt_rand32(state);
    if (sdtype == ECG_BFLOAT16) {
      float f = (float)((u >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0);
      uint32_t bits;
      memcpy(&bits, &f, 4);
      uint16_t b = (uint16_t)(bits >> 16); /* truncated to bfloat16 */
      memcpy((unsigned char *)t->data + 2 * i, &b, 2);
    } else if (is_float) {
      ecg_store_f64(t->data, sdtype, (int64_t)i, (u >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0);
    } else {
      ecg_store_i64(t->data, sdtype, (int64_t)i, (int64_t)(u % mod));
    }
  }
}
