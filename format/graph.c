/* libecg: graph construction, tensors, nodes, attributes, constants (format/ecg.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ecg.h"

int ecg_errf(ecg_err *e, int code, const char *fmt, ...) {
  if (e) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
  }
  return code;
}

/* ---------------------------------------------------------------- dtypes */

size_t ecg_dtype_size(int dtype) {
  switch (dtype) {
  case ECG_FLOAT: case ECG_INT32: case ECG_UINT32: return 4;
  case ECG_UINT8: case ECG_INT8: case ECG_BOOL: return 1;
  case ECG_UINT16: case ECG_INT16: case ECG_FLOAT16: case ECG_BFLOAT16: return 2;
  case ECG_INT64: case ECG_UINT64: case ECG_DOUBLE: case ECG_COMPLEX64: return 8;
  case ECG_COMPLEX128: return 16;
  default: return 0;
  }
}

const char *ecg_dtype_name(int dtype) {
  static const char *names[] = {"undefined", "float32", "uint8", "int8", "uint16", "int16",
                                "int32", "int64", "string", "bool", "float16", "float64",
                                "uint32", "uint64", "complex64", "complex128", "bfloat16"};
  return dtype >= 0 && dtype < (int)(sizeof names / sizeof *names) ? names[dtype] : "unknown";
}

const char *ecg_dtype_ctype(int dtype) {
  switch (dtype) {
  case ECG_FLOAT: return "float";
  case ECG_DOUBLE: return "double";
  case ECG_INT8: return "int8_t";
  case ECG_UINT8: return "uint8_t";
  case ECG_INT16: return "int16_t";
  case ECG_UINT16: return "uint16_t";
  case ECG_INT32: return "int32_t";
  case ECG_UINT32: return "uint32_t";
  case ECG_INT64: return "int64_t";
  case ECG_UINT64: return "uint64_t";
  case ECG_BOOL: return "uint8_t";
  default: return NULL;
  }
}

bool ecg_dtype_is_float(int dtype) {
  return dtype == ECG_FLOAT || dtype == ECG_DOUBLE || dtype == ECG_FLOAT16 || dtype == ECG_BFLOAT16;
}

/* ---------------------------------------------------------------- graph */

ecg_graph *ecg_graph_new(void) {
  ecg_graph *g = malloc(sizeof *g);
  if (g) ecg__graph__init(g);
  return g;
}

void ecg_graph_free(ecg_graph *g) {
  if (g) protobuf_c_message_free_unpacked(&g->base, NULL);
}

static char *xstrdup(const char *s) {
  char *r = strdup(s ? s : "");
  return r;
}

/* Grow a protobuf-c repeated field (pointer array) by one slot. */
static int grow(void *arr_p, size_t n, size_t elem) {
  void **arr = arr_p;
  void *r = realloc(*arr, (n + 1) * elem);
  if (!r) return -1;
  *arr = r;
  return 0;
}

int ecg_tensor_set_shape(ecg_tensor *t, int rank, const int64_t *dims, const char *const *syms) {
  for (size_t i = 0; i < t->n_dims; i++) protobuf_c_message_free_unpacked(&t->dims[i]->base, NULL);
  free(t->dims);
  t->dims = NULL;
  t->n_dims = 0;
  t->shape_known = rank >= 0;
  if (rank <= 0) return ECG_OK;
  t->dims = calloc((size_t)rank, sizeof *t->dims);
  if (!t->dims) return ECG_ERR_INTERNAL;
  for (int i = 0; i < rank; i++) {
    Ecg__Dim *d = malloc(sizeof *d);
    if (!d) return ECG_ERR_INTERNAL;
    ecg__dim__init(d);
    d->value = dims[i] >= 0 ? dims[i] : -1;
    if (dims[i] < 0) {
      d->symbol = xstrdup(syms && syms[i] && syms[i][0] ? syms[i] : "?");
      if (!d->symbol) { free(d); return ECG_ERR_INTERNAL; }
    } else {
      d->symbol = (char *)protobuf_c_empty_string;
    }
    t->dims[t->n_dims++] = d;
  }
  return ECG_OK;
}

int ecg_tensor_refine_shape(ecg_tensor *t, int rank, const int64_t *dims, const char *const *syms) {
  int64_t d[ECG_MAX_RANK];
  if (rank < 0 || rank > ECG_MAX_RANK || !t->shape_known || (int)t->n_dims != rank)
    return ecg_tensor_set_shape(t, rank, dims, syms);
  for (int k = 0; k < rank; k++) d[k] = dims[k] < 0 && t->dims[k]->value >= 0 ? t->dims[k]->value : dims[k];
  return ecg_tensor_set_shape(t, rank, d, syms);
}

int ecg_add_tensor(ecg_graph *g, const char *name, int dtype, int rank, const int64_t *dims) {
  if (grow(&g->tensors, g->n_tensors, sizeof *g->tensors)) return -1;
  ecg_tensor *t = malloc(sizeof *t);
  if (!t) return -1;
  ecg__tensor__init(t);
  t->name = xstrdup(name);
  t->dtype = dtype;
  if (!t->name || ecg_tensor_set_shape(t, rank, dims, NULL)) {
    protobuf_c_message_free_unpacked(&t->base, NULL);
    return -1;
  }
  g->tensors[g->n_tensors] = t;
  return (int)g->n_tensors++;
}

int ecg_tensor_set_data(ecg_tensor *t, const void *data, size_t nbytes) {
  void *copy = malloc(nbytes ? nbytes : 1);
  if (!copy) return ECG_ERR_INTERNAL;
  if (nbytes) memcpy(copy, data, nbytes);
  free(t->data.data);
  t->data.data = copy;
  t->data.len = nbytes;
  t->is_const = true;
  return ECG_OK;
}

int ecg_tensor_rank(const ecg_tensor *t) { return t->shape_known ? (int)t->n_dims : -1; }

int ecg_tensor_dims(const ecg_tensor *t, int64_t *dims) {
  if (!t->shape_known) return -1;
  for (size_t i = 0; i < t->n_dims && i < ECG_MAX_RANK; i++) dims[i] = t->dims[i]->value;
  return (int)t->n_dims;
}

int64_t ecg_tensor_numel(const ecg_tensor *t) {
  if (!t->shape_known) return -1;
  int64_t n = 1;
  bool over = false;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i]->value < 0) return -1;
    if (!over && __builtin_mul_overflow(n, t->dims[i]->value, &n)) over = true;
  }
  return over ? INT64_MAX : n;
}

bool ecg_tensor_static(const ecg_tensor *t) { return ecg_tensor_numel(t) >= 0; }

const char *ecg_shape_str(const ecg_tensor *t, char *buf, size_t n) {
  if (!t->shape_known) {
    snprintf(buf, n, "?");
    return buf;
  }
  size_t off = 0;
  buf[0] = 0;
  if (t->n_dims == 0) snprintf(buf, n, "scalar");
  for (size_t i = 0; i < t->n_dims && off < n; i++) {
    const Ecg__Dim *d = t->dims[i];
    int w = d->value >= 0 ? snprintf(buf + off, n - off, "%s%lld", i ? "x" : "", (long long)d->value)
                          : snprintf(buf + off, n - off, "%s%s", i ? "x" : "", d->symbol);
    if (w < 0) break;
    off += (size_t)w;
  }
  return buf;
}

int ecg_find_tensor(const ecg_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_tensors; i++)
    if (strcmp(g->tensors[i]->name, name) == 0) return (int)i;
  return -1;
}

int ecg_add_node(ecg_graph *g, const char *name, const char *op_type, const char *domain,
                 int64_t opset, int n_in, const int *inputs, int n_out, const int *outputs) {
  if (grow(&g->nodes, g->n_nodes, sizeof *g->nodes)) return -1;
  ecg_node *n = malloc(sizeof *n);
  if (!n) return -1;
  ecg__node__init(n);
  n->name = xstrdup(name);
  n->op_type = xstrdup(op_type);
  n->domain = xstrdup(domain);
  n->opset = opset;
  n->fusion_block = -1;
  n->inputs = malloc(sizeof(int32_t) * (size_t)(n_in > 0 ? n_in : 1));
  n->outputs = malloc(sizeof(int32_t) * (size_t)(n_out > 0 ? n_out : 1));
  if (!n->name || !n->op_type || !n->domain || !n->inputs || !n->outputs) {
    protobuf_c_message_free_unpacked(&n->base, NULL);
    return -1;
  }
  for (int i = 0; i < n_in; i++) n->inputs[i] = inputs[i];
  for (int i = 0; i < n_out; i++) n->outputs[i] = outputs[i];
  n->n_inputs = (size_t)n_in;
  n->n_outputs = (size_t)n_out;
  g->nodes[g->n_nodes] = n;
  return (int)g->n_nodes++;
}

ecg_tensor *ecg_node_input(const ecg_graph *g, const ecg_node *n, int i) {
  if (i < 0 || (size_t)i >= n->n_inputs || n->inputs[i] < 0 || (size_t)n->inputs[i] >= g->n_tensors)
    return NULL;
  return g->tensors[n->inputs[i]];
}

ecg_tensor *ecg_node_output(const ecg_graph *g, const ecg_node *n, int i) {
  if (i < 0 || (size_t)i >= n->n_outputs || n->outputs[i] < 0 || (size_t)n->outputs[i] >= g->n_tensors)
    return NULL;
  return g->tensors[n->outputs[i]];
}

const char *ecg_node_label(const ecg_graph *g, const ecg_node *n, char *buf, size_t n_buf) {
  if (n->name && n->name[0]) {
    snprintf(buf, n_buf, "%s", n->name);
  } else {
    size_t idx = 0;
    while (idx < g->n_nodes && g->nodes[idx] != n) idx++;
    snprintf(buf, n_buf, "%s#%zu", n->op_type, idx);
  }
  return buf;
}

int ecg_compact(ecg_graph *g, const bool *keep, ecg_remap_report *rep) {
  size_t nt = g->n_tensors, nn = g->n_nodes;
  bool *used = calloc(nt ? nt : 1, sizeof *used);
  int *remap = malloc(sizeof(int) * (nt > nn ? nt : nn ? nn : 1));
  if (!used || !remap) { free(used); free(remap); return ECG_ERR_INTERNAL; }
  /* nodes: through the one renumbering function, so blocks follow */
  int w = 0;
  for (size_t i = 0; i < nn; i++) remap[i] = keep[i] ? w++ : -1;
  if (ecg_remap_nodes(g, remap, nn, rep, NULL) != ECG_OK) { free(used); free(remap); return ECG_ERR_INTERNAL; }
  for (size_t i = 0; i < g->n_nodes; i++) {
    ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0) used[n->inputs[k]] = true;
    for (size_t k = 0; k < n->n_outputs; k++) if (n->outputs[k] >= 0) used[n->outputs[k]] = true;
  }
  for (size_t k = 0; k < g->n_inputs; k++) used[g->inputs[k]] = true;
  for (size_t k = 0; k < g->n_outputs; k++) used[g->outputs[k]] = true;
  w = 0;
  for (size_t t = 0; t < nt; t++) {
    if (!used[t]) {
      protobuf_c_message_free_unpacked(&g->tensors[t]->base, NULL);
      remap[t] = -1;
      continue;
    }
    remap[t] = w;
    g->tensors[w++] = g->tensors[t];
  }
  g->n_tensors = (size_t)w;
  for (size_t i = 0; i < g->n_nodes; i++) {
    ecg_node *n = g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0) n->inputs[k] = remap[n->inputs[k]];
    for (size_t k = 0; k < n->n_outputs; k++) if (n->outputs[k] >= 0) n->outputs[k] = remap[n->outputs[k]];
  }
  for (size_t k = 0; k < g->n_inputs; k++) g->inputs[k] = remap[g->inputs[k]];
  for (size_t k = 0; k < g->n_outputs; k++) g->outputs[k] = remap[g->outputs[k]];
  /* a block's inputs and outputs are tensors its kept members use: all kept */
  for (size_t b = 0; b < g->n_blocks; b++) {
    ecg_block *blk = g->blocks[b];
    for (size_t k = 0; k < blk->n_inputs; k++) blk->inputs[k] = remap[blk->inputs[k]];
    for (size_t k = 0; k < blk->n_outputs; k++) blk->outputs[k] = remap[blk->outputs[k]];
  }
  free(used);
  free(remap);
  return ECG_OK;
}

/* ---------------------------------------------------------------- attributes */

const ecg_attr *ecg_attr_find(const ecg_node *n, const char *name) {
  for (size_t i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i]->name, name) == 0) return n->attrs[i];
  return NULL;
}

int64_t ecg_attr_i(const ecg_node *n, const char *name, int64_t def) {
  const ecg_attr *a = ecg_attr_find(n, name);
  return a ? a->i : def;
}

float ecg_attr_f(const ecg_node *n, const char *name, float def) {
  const ecg_attr *a = ecg_attr_find(n, name);
  return a ? a->f : def;
}

const char *ecg_attr_s(const ecg_node *n, const char *name, const char *def, char *buf,
                       size_t n_buf) {
  const ecg_attr *a = ecg_attr_find(n, name);
  if (!a) {
    if (!def) return NULL;
    snprintf(buf, n_buf, "%s", def);
    return buf;
  }
  size_t len = a->s.len < n_buf - 1 ? a->s.len : n_buf - 1;
  if (len) memcpy(buf, a->s.data, len);
  buf[len] = 0;
  return buf;
}

int ecg_attr_ints(const ecg_node *n, const char *name, const int64_t **vals) {
  const ecg_attr *a = ecg_attr_find(n, name);
  if (!a) return -1;
  static const int64_t none[1]; /* an empty list is never NULL: callers memcpy 0 bytes from it */
  *vals = a->ints ? a->ints : none;
  return (int)a->n_ints;
}

int ecg_attr_floats(const ecg_node *n, const char *name, const float **vals) {
  const ecg_attr *a = ecg_attr_find(n, name);
  if (!a) return -1;
  static const float none[1]; /* as in ecg_attr_ints */
  *vals = a->floats ? a->floats : none;
  return (int)a->n_floats;
}

int ecg_node_copy_attrs(ecg_node *dst, const ecg_node *src) {
  if (dst->n_attrs || !src->n_attrs) return dst->n_attrs ? ECG_ERR_INTERNAL : ECG_OK;
  dst->attrs = calloc(src->n_attrs + 1, sizeof *dst->attrs);
  if (!dst->attrs) return ECG_ERR_INTERNAL;
  for (size_t a = 0; a < src->n_attrs; a++) { /* through the wire form: a deep copy */
    size_t sz = protobuf_c_message_get_packed_size(&src->attrs[a]->base);
    uint8_t *p = malloc(sz ? sz : 1);
    if (!p) return ECG_ERR_INTERNAL;
    protobuf_c_message_pack(&src->attrs[a]->base, p);
    dst->attrs[a] = (Ecg__Attribute *)protobuf_c_message_unpack(src->attrs[a]->base.descriptor, NULL, sz, p);
    free(p);
    if (!dst->attrs[a]) return ECG_ERR_INTERNAL;
    dst->n_attrs = a + 1;
  }
  return ECG_OK;
}

void ecg_attr_remove(ecg_node *n, const char *name) {
  for (size_t i = 0; i < n->n_attrs; i++) {
    if (strcmp(n->attrs[i]->name, name) != 0) continue;
    protobuf_c_message_free_unpacked(&n->attrs[i]->base, NULL);
    memmove(&n->attrs[i], &n->attrs[i + 1], (n->n_attrs - i - 1) * sizeof *n->attrs);
    n->n_attrs--;
    return;
  }
}

ecg_attr *ecg_attr_add(ecg_node *n, const char *name, int type) {
  ecg_attr_remove(n, name);
  if (grow(&n->attrs, n->n_attrs, sizeof *n->attrs)) return NULL;
  ecg_attr *a = malloc(sizeof *a);
  if (!a) return NULL;
  ecg__attribute__init(a);
  a->name = xstrdup(name);
  if (!a->name) { free(a); return NULL; }
  a->type = type;
  n->attrs[n->n_attrs++] = a;
  return a;
}

int ecg_attr_set_i(ecg_node *n, const char *name, int64_t v) {
  ecg_attr *a = ecg_attr_add(n, name, ECG_ATTR_INT);
  if (!a) return ECG_ERR_INTERNAL;
  a->i = v;
  return ECG_OK;
}

int ecg_attr_set_f(ecg_node *n, const char *name, float v) {
  ecg_attr *a = ecg_attr_add(n, name, ECG_ATTR_FLOAT);
  if (!a) return ECG_ERR_INTERNAL;
  a->f = v;
  return ECG_OK;
}

int ecg_attr_set_s(ecg_node *n, const char *name, const char *v) {
  ecg_attr *a = ecg_attr_add(n, name, ECG_ATTR_STRING);
  if (!a) return ECG_ERR_INTERNAL;
  a->s.len = strlen(v);
  a->s.data = malloc(a->s.len + 1);
  if (!a->s.data) return ECG_ERR_INTERNAL;
  memcpy(a->s.data, v, a->s.len + 1);
  return ECG_OK;
}

int ecg_attr_set_ints(ecg_node *n, const char *name, int count, const int64_t *v) {
  ecg_attr *a = ecg_attr_add(n, name, ECG_ATTR_INTS);
  if (!a) return ECG_ERR_INTERNAL;
  a->ints = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
  if (!a->ints) return ECG_ERR_INTERNAL;
  if (count > 0) memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
  a->n_ints = (size_t)(count > 0 ? count : 0);
  return ECG_OK;
}

int ecg_attr_set_floats(ecg_node *n, const char *name, int count, const float *v) {
  ecg_attr *a = ecg_attr_add(n, name, ECG_ATTR_FLOATS);
  if (!a) return ECG_ERR_INTERNAL;
  a->floats = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  if (!a->floats) return ECG_ERR_INTERNAL;
  if (count > 0) memcpy(a->floats, v, sizeof(float) * (size_t)count);
  a->n_floats = (size_t)(count > 0 ? count : 0);
  return ECG_OK;
}

/* ---------------------------------------------------------------- constants */

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) { mant <<= 1; exp--; }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

#define LOAD(T) do { T v; memcpy(&v, p + (size_t)i * sizeof(T), sizeof(T)); return v; } while (0)
double ecg_const_f64(const ecg_tensor *t, int64_t i) {
  const unsigned char *p = t->data.data;
  switch (t->dtype) {
  case ECG_FLOAT: LOAD(float);
  case ECG_DOUBLE: LOAD(double);
  case ECG_INT8: LOAD(int8_t);
  case ECG_UINT8: case ECG_BOOL: LOAD(uint8_t);
  case ECG_INT16: LOAD(int16_t);
  case ECG_UINT16: LOAD(uint16_t);
  case ECG_INT32: LOAD(int32_t);
  case ECG_UINT32: LOAD(uint32_t);
  case ECG_INT64: LOAD(int64_t);
  case ECG_UINT64: LOAD(uint64_t);
  case ECG_FLOAT16: { uint16_t h; memcpy(&h, p + (size_t)i * 2, 2); return half_to_float(h); }
  default: return 0;
  }
}

int64_t ecg_const_i64(const ecg_tensor *t, int64_t i) {
  const unsigned char *p = t->data.data;
  switch (t->dtype) {
  case ECG_INT64: LOAD(int64_t);
  case ECG_UINT64: LOAD(uint64_t);
  case ECG_INT32: LOAD(int32_t);
  case ECG_UINT32: LOAD(uint32_t);
  case ECG_INT16: LOAD(int16_t);
  case ECG_UINT16: LOAD(uint16_t);
  case ECG_INT8: LOAD(int8_t);
  case ECG_UINT8: case ECG_BOOL: LOAD(uint8_t);
  default: { /* a float constant read as an integer: saturate (NaN reads as 0), never UB */
    double v = ecg_const_f64(t, i);
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
  }
  }
}
#undef LOAD

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)h;
}

#define STORE(T, V) do { T v_ = (T)(V); memcpy((unsigned char *)buf + (size_t)i * sizeof(T), &v_, sizeof(T)); } while (0)
void ecg_store_f64(void *buf, int dtype, int64_t i, double v) {
  switch (dtype) {
  case ECG_FLOAT: STORE(float, v); break;
  case ECG_DOUBLE: STORE(double, v); break;
  case ECG_INT8: STORE(int8_t, v); break;
  case ECG_UINT8: STORE(uint8_t, v); break;
  case ECG_BOOL: STORE(uint8_t, v != 0); break;
  case ECG_INT16: STORE(int16_t, v); break;
  case ECG_UINT16: STORE(uint16_t, v); break;
  case ECG_INT32: STORE(int32_t, v); break;
  case ECG_UINT32: STORE(uint32_t, v); break;
  case ECG_INT64: STORE(int64_t, v); break;
  case ECG_UINT64: STORE(uint64_t, v); break;
  case ECG_FLOAT16: STORE(uint16_t, float_to_half((float)v)); break;
  default: break;
  }
}

void ecg_store_i64(void *buf, int dtype, int64_t i, int64_t v) {
  switch (dtype) {
  case ECG_INT8: STORE(int8_t, v); break;
  case ECG_UINT8: STORE(uint8_t, v); break;
  case ECG_BOOL: STORE(uint8_t, v != 0); break;
  case ECG_INT16: STORE(int16_t, v); break;
  case ECG_UINT16: STORE(uint16_t, v); break;
  case ECG_INT32: STORE(int32_t, v); break;
  case ECG_UINT32: STORE(uint32_t, v); break;
  case ECG_INT64: STORE(int64_t, v); break;
  case ECG_UINT64: STORE(uint64_t, v); break;
  default: ecg_store_f64(buf, dtype, i, (double)v); break;
  }
}
#undef STORE

int ecg_bind_input(ecg_graph *g, const char *name, int rank, const int64_t *dims, ecg_err *e) {
  int tid = -1;
  for (size_t i = 0; i < g->n_inputs; i++)
    if (g->inputs[i] >= 0 && (size_t)g->inputs[i] < g->n_tensors && !strcmp(g->tensors[g->inputs[i]]->name, name)) tid = g->inputs[i];
  if (tid < 0) {
    char list[512] = "";
    size_t off = 0;
    for (size_t j = 0; j < g->n_inputs && off < sizeof list; j++)
      off += (size_t)snprintf(list + off, sizeof list - off, "%s'%s'", j ? ", " : "", g->tensors[g->inputs[j]]->name);
    return ecg_errf(e, ECG_ERR_INPUT, "--input-shape: '%s' is not a graph input (inputs: %s)", name, g->n_inputs ? list : "none");
  }
  ecg_tensor *t = g->tensors[tid];
  char sb[256];
  if (!t->shape_known || (int)t->n_dims != rank)
    return ecg_errf(e, ECG_ERR_INPUT, "--input-shape: input '%s' has shape %s, rank %d given", name, ecg_shape_str(t, sb, sizeof sb), rank);
  /* the symbols bound, checked first so that g is unchanged on error */
  const char *sym[ECG_MAX_RANK];
  int64_t val[ECG_MAX_RANK];
  int ns = 0;
  for (int k = 0; k < rank; k++) {
    const Ecg__Dim *d = t->dims[k];
    if (dims[k] < 0) continue;
    if (d->value >= 0 && d->value != dims[k])
      return ecg_errf(e, ECG_ERR_INPUT, "--input-shape: input '%s' dim %d is %lld, %lld given", name, k, (long long)d->value, (long long)dims[k]);
    if (d->value >= 0 || !d->symbol || !d->symbol[0] || !strcmp(d->symbol, "?")) continue;
    for (int j = 0; j < ns; j++)
      if (!strcmp(sym[j], d->symbol) && val[j] != dims[k])
        return ecg_errf(e, ECG_ERR_INPUT, "--input-shape: input '%s': symbol '%s' given %lld and %lld", name, d->symbol,
                        (long long)val[j], (long long)dims[k]);
    sym[ns] = d->symbol;
    val[ns++] = dims[k];
  }
  char symbuf[ECG_MAX_RANK][256]; /* copies: setting t's shape frees its symbols */
  for (int j = 0; j < ns; j++) {
    snprintf(symbuf[j], sizeof symbuf[j], "%s", sym[j]);
    sym[j] = symbuf[j];
  }
  int64_t nd[ECG_MAX_RANK];
  for (size_t i = 0; i < g->n_inputs; i++) {
    ecg_tensor *u = g->tensors[g->inputs[i]];
    if (!u->shape_known || u->n_dims > ECG_MAX_RANK) continue;
    const char *keep[ECG_MAX_RANK];
    bool changed = false;
    for (size_t k = 0; k < u->n_dims; k++) {
      nd[k] = u->dims[k]->value;
      keep[k] = u->dims[k]->value < 0 ? u->dims[k]->symbol : NULL;
      if (u == t && dims[k] >= 0 && nd[k] < 0) { nd[k] = dims[k]; changed = true; continue; }
      for (int j = 0; j < ns && nd[k] < 0; j++)
        if (keep[k] && !strcmp(keep[k], sym[j])) { nd[k] = val[j]; changed = true; }
    }
    if (!changed) continue;
    char *copy[ECG_MAX_RANK] = {0}; /* the symbols survive set_shape freeing the old dims */
    for (size_t k = 0; k < u->n_dims; k++)
      if (nd[k] < 0 && keep[k] && !(copy[k] = xstrdup(keep[k]))) {
        for (size_t j = 0; j < k; j++) free(copy[j]);
        return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      }
    int rc = ecg_tensor_set_shape(u, (int)u->n_dims, nd, (const char *const *)copy);
    for (size_t k = 0; k < ECG_MAX_RANK; k++) free(copy[k]);
    if (rc) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  return ECG_OK;
}
