/* onnx2ecg: ONNX ModelProto -> ECG graph (see import.h for the phases).
 *
 * Names.  ONNX graphs are in SSA form: every value has one unique name.  All names of a
 * graph are interned into one table (`names`), and a union-find over it implements the
 * removal of Identity and Dropout nodes: the node's input and output become one value.
 * The root of each set gives the ECG tensor its name; a set holding a graph input or a
 * graph output is rooted at that name, so the names ONNX gives the model's inputs and
 * outputs survive.  When both sides are such names (Identity from a graph input to a
 * graph output, or between two graph outputs) the node is kept.
 */
#include "import.h"

#include <stdlib.h>
#include <string.h>

/** A protobuf-c proto2 optional string is NULL when absent; this reads it as "". */
#define S(x) ((x) ? (x) : "")

/* ---------------------------------------------------------------- name table */

enum {
  F_INPUT = 1,    /**< graph input that is not an initializer */
  F_INIT = 2,     /**< initializer */
  F_OUTPUT = 4,   /**< graph output */
  F_CONSUMED = 8  /**< read by some node or a graph output */
};

/** Interned value names of one ONNX graph with union-find links and ECG tensor ids. */
typedef struct names {
  const char **key;  /**< name (points into the ONNX model, which outlives the table) */
  int *parent;       /**< union-find parent index; parent[i] == i for a root */
  int *tid;          /**< ECG tensor id of a root, -1 until created */
  unsigned char *flags; /**< F_* */
  int n, cap;
  int *slot;         /**< open addressing: index + 1, 0 empty; nslot is a power of two */
  size_t nslot;
} names;

/** FNV-1a hash of a NUL-terminated string. */
static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/** Free the table's arrays (not the names, which belong to the model). */
static void names_free(names *nm) {
  free(nm->key); free(nm->parent); free(nm->tid); free(nm->flags); free(nm->slot);
  memset(nm, 0, sizeof *nm);
}

/** Index of name s, or -1 when it was never interned. */
static int names_find(const names *nm, const char *s) {
  if (!nm->nslot) return -1;
  for (size_t h = hash_str(s) & (nm->nslot - 1);; h = (h + 1) & (nm->nslot - 1)) {
    int v = nm->slot[h];
    if (!v) return -1;
    if (strcmp(nm->key[v - 1], s) == 0) return v - 1;
  }
}

/** Index of name s, interning it (as its own root, no tensor, no flags) when new.
 *  Returns -1 on out of memory. */
static int names_intern(names *nm, const char *s) {
  int i = names_find(nm, s);
  if (i >= 0) return i;
  if ((size_t)(nm->n + 1) * 2 > nm->nslot) {
    size_t ns = nm->nslot ? nm->nslot * 2 : 256;
    int *slot = calloc(ns, sizeof *slot);
    if (!slot) return -1;
    for (int k = 0; k < nm->n; k++) {
      size_t h = hash_str(nm->key[k]) & (ns - 1);
      while (slot[h]) h = (h + 1) & (ns - 1);
      slot[h] = k + 1;
    }
    free(nm->slot);
    nm->slot = slot;
    nm->nslot = ns;
  }
  if (nm->n == nm->cap) {
    int cap = nm->cap ? nm->cap * 2 : 128;
    const char **key = realloc(nm->key, sizeof *key * (size_t)cap);
    if (key) nm->key = key;
    int *parent = realloc(nm->parent, sizeof *parent * (size_t)cap);
    if (parent) nm->parent = parent;
    int *tid = realloc(nm->tid, sizeof *tid * (size_t)cap);
    if (tid) nm->tid = tid;
    unsigned char *flags = realloc(nm->flags, (size_t)cap);
    if (flags) nm->flags = flags;
    if (!key || !parent || !tid || !flags) return -1;
    nm->cap = cap;
  }
  i = nm->n++;
  nm->key[i] = s;
  nm->parent[i] = i;
  nm->tid[i] = -1;
  nm->flags[i] = 0;
  size_t h = hash_str(s) & (nm->nslot - 1);
  while (nm->slot[h]) h = (h + 1) & (nm->nslot - 1);
  nm->slot[h] = i + 1;
  return i;
}

/** Root of i's set (with path halving). */
static int names_root(names *nm, int i) {
  while (nm->parent[i] != i) {
    nm->parent[i] = nm->parent[nm->parent[i]];
    i = nm->parent[i];
  }
  return i;
}

/* ---------------------------------------------------------------- helpers */

/** Converter state for one ONNX graph (the main graph or a subgraph). */
typedef struct conv {
  const Onnx__ModelProto *m;
  const Onnx__GraphProto *gp;
  ecg_graph *g;
  names nm;
  int64_t opset;     /**< the model's ai.onnx opset */
  bool top;          /**< the main graph (Identity removal and --input-shape apply) */
  int depth;         /**< subgraph nesting: 0 for the main graph (ECG_MAX_SUBGRAPH_DEPTH) */
} conv;

/** "dims 2x3x4" of an ONNX dims array into buf ("scalar" for rank 0). */
static const char *dims_str(const int64_t *dims, size_t n, char *buf, size_t nb) {
  size_t off = 0;
  buf[0] = 0;
  if (n == 0) snprintf(buf, nb, "scalar");
  for (size_t i = 0; i < n && off < nb; i++) {
    int w = snprintf(buf + off, nb - off, "%s%lld", i ? "x" : "", (long long)dims[i]);
    if (w < 0) break;
    off += (size_t)w;
  }
  return buf;
}

/** Label of ONNX node idx: its name, or "OP#idx" when unnamed. */
static const char *onnx_node_label(const Onnx__NodeProto *np, size_t idx, char *buf, size_t nb) {
  if (np->name && np->name[0]) snprintf(buf, nb, "%s", np->name);
  else snprintf(buf, nb, "%s#%zu", S(np->op_type), idx);
  return buf;
}

/** True for the default ONNX domain ("" or "ai.onnx"). */
static bool default_domain(const char *d) { return !d || !d[0] || strcmp(d, "ai.onnx") == 0; }

/** Opset version the model imports for domain d (the ai.onnx opset for the default
 *  domain), or 0 when the model does not import d. */
static int64_t domain_opset(const Onnx__ModelProto *m, const char *d) {
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (default_domain(d) ? default_domain(o->domain) : strcmp(S(o->domain), d) == 0)
      return o->has_version ? o->version : 0;
  }
  return 0;
}

/** ECG tensor id for ONNX name index i (through its root), creating the tensor (dtype 0,
 *  unknown shape) on first use.  Returns -1 on out of memory. */
static int tensor_of(conv *c, int i) {
  int r = names_root(&c->nm, i);
  if (c->nm.tid[r] < 0) c->nm.tid[r] = ecg_add_tensor(c->g, c->nm.key[r], ECG_UNDEFINED, -1, NULL);
  return c->nm.tid[r];
}

/** ECG tensor id for an ONNX value name; "" (an omitted optional operand) gives -1 in
 *  *tid.  Returns ECG_OK or ECG_ERR_INTERNAL. */
static int tensor_by_name(conv *c, const char *name, int *tid, ecg_err *e) {
  *tid = -1;
  if (!name || !name[0]) return ECG_OK;
  int i = names_intern(&c->nm, name);
  if (i < 0 || (*tid = tensor_of(c, i)) < 0) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}

/** Append v to a protobuf-c int32 repeated field (arr, n).  Returns ECG_OK or
 *  ECG_ERR_INTERNAL. */
static int push_i32(int32_t **arr, size_t *n, int32_t v, ecg_err *e) {
  int32_t *r = realloc(*arr, sizeof *r * (*n + 1));
  if (!r) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  r[(*n)++] = v;
  *arr = r;
  return ECG_OK;
}

/** Add key=value to g's metadata map.  Returns ECG_OK or ECG_ERR_INTERNAL. */
static int add_meta(ecg_graph *g, const char *k, const char *v, ecg_err *e) {
  Ecg__Graph__MetadataEntry **r = realloc(g->metadata, sizeof *r * (g->n_metadata + 1));
  if (!r) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  g->metadata = r;
  Ecg__Graph__MetadataEntry *me = malloc(sizeof *me);
  if (!me) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  ecg__graph__metadata_entry__init(me);
  me->key = strdup(k);
  me->value = strdup(v);
  g->metadata[g->n_metadata++] = me;
  if (!me->key || !me->value) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}

/* ---------------------------------------------------------------- tensor data */

/** Store the low `size` bytes of bits little-endian at out. */
static void store_le(unsigned char *out, uint64_t bits, size_t size) {
  for (size_t k = 0; k < size; k++) out[k] = (unsigned char)(bits >> (8 * k));
}

/** Make t a constant holding TensorProto tp: dtype, shape (tp's dims) and raw
 *  little-endian data from raw_data or the typed field for the dtype (float_data,
 *  int32_data for int8/int16/uint8/uint16/bool/float16/bfloat16 bit patterns, int64_data,
 *  double_data, uint64_data for uint32/uint64; complex types take two values per
 *  element).  what names the tensor in messages ("initializer 'W'").
 *  Errors (ECG_ERR_INPUT): external data, string or unknown dtype, negative dims, a byte
 *  or value count that does not match the dims; ECG_ERR_INTERNAL: out of memory. */
static int tensor_from_proto(ecg_tensor *t, const Onnx__TensorProto *tp, const char *what,
                             ecg_err *e) {
  char db[256];
  bool external = tp->n_external_data > 0 ||
                  (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
  if (external) return ecg_errf(e, ECG_ERR_INPUT, "%s uses external data (not supported)", what);
  if (tp->segment)
    return ecg_errf(e, ECG_ERR_INPUT, "%s is a segmented tensor (not supported)", what);
  int dt = tp->has_data_type ? tp->data_type : ECG_UNDEFINED;
  if (dt == ECG_STRING) return ecg_errf(e, ECG_ERR_INPUT, "%s is a string tensor (not supported)", what);
  size_t es = ecg_dtype_size(dt);
  if (es == 0) return ecg_errf(e, ECG_ERR_INPUT, "%s has unsupported data type %d (%s)", what, dt, ecg_dtype_name(dt));
  if (tp->n_dims > ECG_MAX_RANK)
    return ecg_errf(e, ECG_ERR_INPUT, "%s has rank %zu (at most %d supported)", what, tp->n_dims, ECG_MAX_RANK);
  uint64_t numel = 1;
  for (size_t i = 0; i < tp->n_dims; i++) {
    if (tp->dims[i] < 0)
      return ecg_errf(e, ECG_ERR_INPUT, "%s has a negative dimension (dims %s)", what, dims_str(tp->dims, tp->n_dims, db, sizeof db));
    if (tp->dims[i] > 0 && numel > (UINT64_C(1) << 40) / (uint64_t)tp->dims[i])
      return ecg_errf(e, ECG_ERR_INPUT, "%s is too large (dims %s)", what, dims_str(tp->dims, tp->n_dims, db, sizeof db));
    numel *= (uint64_t)tp->dims[i];
  }
  size_t need = (size_t)numel * es;
  unsigned char *buf = NULL;
  const void *src;
  if (tp->has_raw_data) {
    if (tp->raw_data.len != need)
      return ecg_errf(e, ECG_ERR_INPUT, "%s holds %zu bytes of raw data, but its dims %s of %s need %zu",
                      what, tp->raw_data.len, dims_str(tp->dims, tp->n_dims, db, sizeof db), ecg_dtype_name(dt), need);
    src = tp->raw_data.data;
  } else {
    bool cplx = dt == ECG_COMPLEX64 || dt == ECG_COMPLEX128;
    size_t nval = (size_t)numel * (cplx ? 2 : 1), vs = cplx ? es / 2 : es, have;
    const char *field;
    switch (dt) {
    case ECG_FLOAT: case ECG_COMPLEX64: have = tp->n_float_data; field = "float_data"; break;
    case ECG_INT32: case ECG_INT16: case ECG_INT8: case ECG_UINT16: case ECG_UINT8:
    case ECG_BOOL: case ECG_FLOAT16: case ECG_BFLOAT16: have = tp->n_int32_data; field = "int32_data"; break;
    case ECG_INT64: have = tp->n_int64_data; field = "int64_data"; break;
    case ECG_DOUBLE: case ECG_COMPLEX128: have = tp->n_double_data; field = "double_data"; break;
    case ECG_UINT32: case ECG_UINT64: have = tp->n_uint64_data; field = "uint64_data"; break;
    default: return ecg_errf(e, ECG_ERR_INPUT, "%s has unsupported data type %s", what, ecg_dtype_name(dt));
    }
    if (have != nval)
      return ecg_errf(e, ECG_ERR_INPUT, "%s holds %zu values in %s, but its dims %s need %zu",
                      what, have, field, dims_str(tp->dims, tp->n_dims, db, sizeof db), nval);
    buf = malloc(need ? need : 1);
    if (!buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory (%s: %zu bytes)", what, need);
    for (size_t i = 0; i < nval; i++) {
      uint64_t bits = 0;
      switch (dt) {
      case ECG_FLOAT: case ECG_COMPLEX64: { uint32_t u; memcpy(&u, &tp->float_data[i], 4); bits = u; break; }
      case ECG_INT64: bits = (uint64_t)tp->int64_data[i]; break;
      case ECG_DOUBLE: case ECG_COMPLEX128: memcpy(&bits, &tp->double_data[i], 8); break;
      case ECG_UINT32: case ECG_UINT64: bits = tp->uint64_data[i]; break;
      default: bits = (uint64_t)(uint32_t)tp->int32_data[i]; break;
      }
      store_le(buf + i * vs, bits, vs);
    }
    src = buf;
  }
  t->dtype = dt;
  int rc = ecg_tensor_set_shape(t, (int)tp->n_dims, tp->dims, NULL);
  if (rc == ECG_OK) rc = ecg_tensor_set_data(t, src, need);
  free(buf);
  if (rc != ECG_OK) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory (%s)", what);
  return ECG_OK;
}

/** A new Ecg__Tensor named name holding TensorProto tp (for TENSOR attributes).
 *  Errors as tensor_from_proto. */
static int new_tensor_from_proto(const Onnx__TensorProto *tp, const char *what,
                                 ecg_tensor **out, ecg_err *e) {
  ecg_tensor *t = malloc(sizeof *t);
  if (!t) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  ecg__tensor__init(t);
  t->name = strdup(S(tp->name));
  if (!t->name) { free(t); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  int rc = tensor_from_proto(t, tp, what, e);
  if (rc != ECG_OK) { protobuf_c_message_free_unpacked(&t->base, NULL); return rc; }
  *out = t;
  return ECG_OK;
}

/* ---------------------------------------------------------------- value types */

/** Read a ValueInfo's tensor type into dtype, rank (-1 when the shape is absent), dims
 *  (-1 for dynamic) and syms (dim_param, or NULL for "?").  what names the value.
 *  optional (may be NULL: refused) is set for optional(tensor), or optional(sequence(tensor))
 *  when sequence is given; sequence (may be NULL: refused) for sequence(tensor), the dtype
 *  and shape then the element's (format/ECG.md "Sequences").  Errors (ECG_ERR_INPUT): not
 *  such a type (map, sparse, a refused sequence or optional), rank above ECG_MAX_RANK.  A
 *  missing type gives dtype 0 and rank -1. */
static int value_type_opt(const Onnx__ValueInfoProto *vi, const char *what, int *dtype, int *rank,
                          int64_t *dims, const char **syms, bool *optional, bool *sequence, ecg_err *e) {
  *dtype = ECG_UNDEFINED;
  *rank = -1;
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return ECG_OK;
  /* optional(tensor) or optional(sequence(tensor)): the element's type (the caller adds
   * the presence flag) */
  if (optional && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type &&
      tp->optional_type->elem_type &&
      (tp->optional_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
       (sequence && tp->optional_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE))) {
    *optional = true;
    tp = tp->optional_type->elem_type;
  }
  /* sequence(tensor): a run-time sequence of the element type (format/ECG.md "Sequences") */
  if (sequence && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type &&
      tp->sequence_type->elem_type && tp->sequence_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    *sequence = true;
    tp = tp->sequence_type->elem_type;
  }
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return ecg_errf(e, ECG_ERR_INPUT, "%s is not a tensor, sequence(tensor) or optional of one: not supported (maps, sparse "
                                      "tensors, nested sequences and optionals)", what);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  *dtype = tt->has_elem_type ? tt->elem_type : ECG_UNDEFINED;
  if (*dtype == ECG_STRING) return ecg_errf(e, ECG_ERR_INPUT, "%s is a string tensor (not supported)", what);
  if (!tt->shape) return ECG_OK;
  if (tt->shape->n_dim > ECG_MAX_RANK)
    return ecg_errf(e, ECG_ERR_INPUT, "%s has rank %zu (at most %d supported)", what, tt->shape->n_dim, ECG_MAX_RANK);
  *rank = (int)tt->shape->n_dim;
  for (int i = 0; i < *rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    dims[i] = -1;
    syms[i] = NULL;
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
      dims[i] = d->dim_value;
    else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param && d->dim_param[0])
      syms[i] = d->dim_param;
  }
  return ECG_OK;
}

/** value_type_opt without optional types. */
static int value_type(const Onnx__ValueInfoProto *vi, const char *what, int *dtype, int *rank,
                      int64_t *dims, const char **syms, ecg_err *e) {
  return value_type_opt(vi, what, dtype, rank, dims, syms, NULL, NULL, e);
}

/** Set tensor tid's dtype and shape from ValueInfo vi (unchanged when vi has no type). */
static int seed_from_value_info(conv *c, int tid, const Onnx__ValueInfoProto *vi, const char *what,
                                ecg_err *e) {
  int dtype, rank;
  int64_t dims[ECG_MAX_RANK];
  const char *syms[ECG_MAX_RANK];
  ECG_TRY(value_type(vi, what, &dtype, &rank, dims, syms, e));
  ecg_tensor *t = c->g->tensors[tid];
  if (dtype != ECG_UNDEFINED) t->dtype = dtype;
  if (rank >= 0 && ecg_tensor_set_shape(t, rank, dims, syms) != ECG_OK)
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}

/* ---------------------------------------------------------------- --input-shape */

/** A dim_param bound to a number by --input-shape (the same symbol in another input gets
 *  the same value: ONNX dim_params with one name denote one size). */
typedef struct binding { char sym[64]; int64_t value; } binding;

/** Apply the --input-shape bindings to the main graph's inputs (their tensors already
 *  carry the ValueInfo shapes).  Errors (ECG_ERR_INPUT): NAME not a graph input, rank
 *  differs from the model's, a static dim differs. */
static int apply_input_shapes(conv *c, const onnx2ecg_opts *o, ecg_err *e) {
  if (!o || o->n_shapes <= 0) return ECG_OK;
  binding *bind = calloc((size_t)o->n_shapes * ECG_MAX_RANK + 1, sizeof *bind);
  int nb = 0, rc = ECG_OK;
  if (!bind) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  bool *given = calloc(c->g->n_tensors + 1, 1);
  if (!given) { free(bind); return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); }
  for (int k = 0; k < o->n_shapes && rc == ECG_OK; k++) {
    const cli_shape *s = &o->shapes[k];
    int i = names_find(&c->nm, s->name), tid = -1;
    if (i >= 0 && (c->nm.flags[i] & F_INPUT)) tid = c->nm.tid[names_root(&c->nm, i)];
    if (tid < 0) {
      char list[512] = "";
      size_t off = 0;
      for (size_t j = 0; j < c->g->n_inputs && off < sizeof list; j++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s'%s'", j ? ", " : "", c->g->tensors[c->g->inputs[j]]->name);
      rc = ecg_errf(e, ECG_ERR_INPUT, "--input-shape: '%s' is not a graph input (inputs: %s)", s->name,
                    c->g->n_inputs ? list : "none");
      break;
    }
    ecg_tensor *t = c->g->tensors[tid];
    int64_t dims[ECG_MAX_RANK];
    const char *syms[ECG_MAX_RANK];
    int r = ecg_tensor_rank(t);
    if (r >= 0 && r != s->rank) {
      char sb[256];
      rc = ecg_errf(e, ECG_ERR_INPUT, "--input-shape: input '%s' has rank %d (%s) in the model, %d dims given",
                    s->name, r, ecg_shape_str(t, sb, sizeof sb), s->rank);
      break;
    }
    for (int d = 0; d < s->rank; d++) {
      int64_t model = r >= 0 ? t->dims[d]->value : -1;
      if (model >= 0 && s->dims[d] >= 0 && model != s->dims[d]) {
        rc = ecg_errf(e, ECG_ERR_INPUT, "--input-shape: input '%s' dim %d is %lld in the model, %lld given",
                      s->name, d, (long long)model, (long long)s->dims[d]);
        break;
      }
      if (model >= 0) { dims[d] = model; syms[d] = NULL; continue; }
      dims[d] = s->dims[d];
      syms[d] = s->dims[d] < 0 ? s->syms[d] : NULL;
      const char *msym = r >= 0 ? t->dims[d]->symbol : NULL;
      if (s->dims[d] >= 0 && msym && msym[0] && strcmp(msym, "?") != 0) {
        snprintf(bind[nb].sym, sizeof bind[nb].sym, "%s", msym);
        bind[nb++].value = s->dims[d];
      }
    }
    if (rc != ECG_OK) break;
    if (ecg_tensor_set_shape(t, s->rank, dims, syms) != ECG_OK) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    given[tid] = true;
  }
  /* Propagate symbol bindings to the other inputs sharing the dim_param. */
  for (size_t j = 0; rc == ECG_OK && j < c->g->n_inputs; j++) {
    int tid = c->g->inputs[j];
    ecg_tensor *t = c->g->tensors[tid];
    if (given[tid] || !t->shape_known) continue;
    for (size_t d = 0; d < t->n_dims; d++) {
      if (t->dims[d]->value >= 0) continue;
      for (int b = 0; b < nb; b++)
        if (strcmp(bind[b].sym, t->dims[d]->symbol) == 0) {
          t->dims[d]->value = bind[b].value;
          if (t->dims[d]->symbol != protobuf_c_empty_string) free(t->dims[d]->symbol);
          t->dims[d]->symbol = (char *)protobuf_c_empty_string;
          break;
        }
    }
  }
  free(bind);
  free(given);
  return rc;
}

/* ---------------------------------------------------------------- attributes */

static int convert_graph(const Onnx__ModelProto *m, const Onnx__GraphProto *gp, int64_t opset,
                         int depth, const onnx2ecg_opts *o, ecg_graph *g, onnx2ecg_stats *st,
                         ecg_err *e);

/** The attribute type of a; for IR 0.0.1 files without a type, guessed from the field
 *  that is set (0 when none is). */
static int attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) return (int)a->type;
  if (a->g) return ECG_ATTR_GRAPH;
  if (a->t) return ECG_ATTR_TENSOR;
  if (a->n_floats) return ECG_ATTR_FLOATS;
  if (a->n_ints) return ECG_ATTR_INTS;
  if (a->n_strings) return ECG_ATTR_STRINGS;
  if (a->n_graphs) return ECG_ATTR_GRAPHS;
  if (a->n_tensors) return ECG_ATTR_TENSORS;
  if (a->has_s) return ECG_ATTR_STRING;
  if (a->has_f) return ECG_ATTR_FLOAT;
  if (a->has_i) return ECG_ATTR_INT;
  return 0;
}

/** Copy bytes into a freshly allocated ProtobufCBinaryData.  Returns false on OOM. */
static bool copy_bytes(ProtobufCBinaryData *dst, const ProtobufCBinaryData *src) {
  dst->len = src->len;
  dst->data = malloc(src->len ? src->len : 1);
  if (!dst->data) { dst->len = 0; return false; }
  if (src->len) memcpy(dst->data, src->data, src->len);
  return true;
}

/** Convert subgraph sg (attribute what) into a new ECG graph *out: same conversion as
 *  the main graph, but Identity nodes are kept and names from the outer scope become
 *  plain (unproduced) tensors of the subgraph.  Errors as onnx2ecg_convert. */
static int convert_subgraph(const conv *c, const Onnx__GraphProto *sg, ecg_graph **out, ecg_err *e) {
  ecg_graph *g = ecg_graph_new();
  if (!g) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (c->depth + 1 > ECG_MAX_SUBGRAPH_DEPTH) {
    ecg_graph_free(g);
    return ecg_errf(e, ECG_ERR_INPUT, "subgraph '%s' is nested more than %d levels deep", sg->name ? sg->name : "", ECG_MAX_SUBGRAPH_DEPTH);
  }
  int rc = convert_graph(c->m, sg, c->opset, c->depth + 1, NULL, g, NULL, e);
  if (rc != ECG_OK) { ecg_graph_free(g); return rc; }
  *out = g;
  return ECG_OK;
}

/** The TypeProto attribute 'type' of an Optional node en (label lb), the element type of
 *  the optional it makes (the empty optional when the node has no input), as the int
 *  attributes format/ops/optional.c reads: "dtype" (the tensor's, or the sequence's
 *  element's), "sequence" (1 for sequence(tensor)) and, when the element's rank is known,
 *  "shape" (ints; -1 for a dim not fixed).  Errors (ECG_ERR_INPUT): another type (map,
 *  sparse, nested sequences or optionals), a string element, a rank over ECG_MAX_RANK. */
static int optional_type_attr(ecg_node *en, const Onnx__AttributeProto *a, const char *lb, ecg_err *e) {
  const Onnx__TypeProto *tp = a->tp;
  bool seq = false;
  if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type) {
    seq = true;
    tp = tp->sequence_type->elem_type;
  }
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type || !tp->tensor_type->has_elem_type ||
      tp->tensor_type->elem_type == ECG_STRING)
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Optional: attribute 'type' is not a tensor or sequence(tensor) type of a "
                                      "numeric element (not supported)", lb);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (ecg_attr_set_i(en, "dtype", tt->elem_type) || ecg_attr_set_i(en, "sequence", seq))
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (!tt->shape) return ECG_OK;
  if (tt->shape->n_dim > ECG_MAX_RANK)
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Optional: attribute 'type' has rank %zu (at most %d supported)", lb,
                    tt->shape->n_dim, ECG_MAX_RANK);
  int64_t d[ECG_MAX_RANK];
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *x = tt->shape->dim[i];
    d[i] = x->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && x->dim_value >= 0 ? x->dim_value : -1;
  }
  if (ecg_attr_set_ints(en, "shape", (int)tt->shape->n_dim, d)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}

/** Copy ONNX attribute a of node n (label lb) into ECG node en: FLOAT, INT, STRING,
 *  TENSOR (converted like an initializer), GRAPH (converted recursively), FLOATS, INTS,
 *  STRINGS, GRAPHS.  Errors (ECG_ERR_INPUT): TENSORS, sparse tensors, type protos,
 *  references to function attributes, bad tensors; ECG_ERR_INTERNAL: out of memory. */
static int copy_attr(conv *c, ecg_node *en, const Onnx__AttributeProto *a, const char *lb, ecg_err *e) {
  const char *an = S(a->name);
  if (a->ref_attr_name && a->ref_attr_name[0])
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op %s: attribute '%s' refers to a function attribute (not supported)", lb, en->op_type, an);
  int type = attr_type(a);
  switch (type) {
  case ECG_ATTR_FLOAT: case ECG_ATTR_INT: case ECG_ATTR_STRING: case ECG_ATTR_TENSOR:
  case ECG_ATTR_GRAPH: case ECG_ATTR_FLOATS: case ECG_ATTR_INTS: case ECG_ATTR_STRINGS:
  case ECG_ATTR_GRAPHS:
    break;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    if (!strcmp(en->op_type, "Optional") && !strcmp(an, "type")) return optional_type_attr(en, a, lb, e);
    /* fall through */
  default:
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op %s: attribute '%s' has unsupported type %d (tensors, sparse tensors and type protos are not supported)",
                    lb, en->op_type, an, type);
  }
  if (a->n_ints > ECG_MAX_ATTR_VALUES || a->n_floats > ECG_MAX_ATTR_VALUES || a->n_strings > ECG_MAX_ATTR_VALUES || a->n_graphs > ECG_MAX_ATTR_VALUES)
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op %s: attribute '%s' holds more than %zu values", lb, en->op_type, an, (size_t)ECG_MAX_ATTR_VALUES);
  ecg_attr *ea = ecg_attr_add(en, an, type);
  if (!ea) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  char what[512];
  snprintf(what, sizeof what, "attribute '%s' of node '%s' (%s)", an, lb, en->op_type);
  switch (type) {
  case ECG_ATTR_FLOAT: ea->f = a->f; break;
  case ECG_ATTR_INT: ea->i = a->i; break;
  case ECG_ATTR_STRING:
    if (!copy_bytes(&ea->s, &a->s)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    break;
  case ECG_ATTR_TENSOR:
    if (!a->t) return ecg_errf(e, ECG_ERR_INPUT, "%s has no tensor", what);
    ECG_TRY(new_tensor_from_proto(a->t, what, &ea->t, e));
    break;
  case ECG_ATTR_GRAPH:
    if (!a->g) return ecg_errf(e, ECG_ERR_INPUT, "%s has no graph", what);
    ECG_TRY(convert_subgraph(c, a->g, &ea->g, e));
    break;
  case ECG_ATTR_FLOATS:
    ea->floats = malloc(sizeof(float) * (a->n_floats + 1));
    if (!ea->floats) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    if (a->n_floats) memcpy(ea->floats, a->floats, sizeof(float) * a->n_floats);
    ea->n_floats = a->n_floats;
    break;
  case ECG_ATTR_INTS:
    ea->ints = malloc(sizeof(int64_t) * (a->n_ints + 1));
    if (!ea->ints) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    if (a->n_ints) memcpy(ea->ints, a->ints, sizeof(int64_t) * a->n_ints);
    ea->n_ints = a->n_ints;
    break;
  case ECG_ATTR_STRINGS:
    ea->strings = calloc(a->n_strings + 1, sizeof *ea->strings);
    if (!ea->strings) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (size_t k = 0; k < a->n_strings; k++) {
      if (!copy_bytes(&ea->strings[k], &a->strings[k])) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      ea->n_strings = k + 1;
    }
    break;
  case ECG_ATTR_GRAPHS:
    ea->graphs = calloc(a->n_graphs + 1, sizeof *ea->graphs);
    if (!ea->graphs) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    for (size_t k = 0; k < a->n_graphs; k++) {
      ECG_TRY(convert_subgraph(c, a->graphs[k], &ea->graphs[k], e));
      ea->n_graphs = k + 1;
    }
    break;
  }
  return ECG_OK;
}

/** Append to the list (names, *n) the names subgraph sg reads from outer scopes: tensors
 *  no node of sg writes that are neither sg's inputs nor constants (its own nested
 *  control-flow nodes already list what they capture as inputs), each once. Returns
 *  ECG_OK or ECG_ERR_INTERNAL. */
static bool flag_at(const ecg_graph *g, const int32_t *ids, size_t n, size_t k);

static int free_names(const ecg_graph *sg, const char ***names, size_t *n, ecg_err *e) {
  bool *bound = calloc(sg->n_tensors + 1, 1);
  if (!bound) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t k = 1; k < sg->n_outputs; k++) /* an optional output's flag: ecg_resolve_optionals produces it */
    if (flag_at(sg, sg->outputs, sg->n_outputs, k)) bound[sg->outputs[k]] = true;
  for (size_t k = 0; k < sg->n_inputs; k++)
    if (sg->inputs[k] >= 0 && (size_t)sg->inputs[k] < sg->n_tensors) bound[sg->inputs[k]] = true;
  for (size_t i = 0; i < sg->n_nodes; i++)
    for (size_t k = 0; k < sg->nodes[i]->n_outputs; k++) {
      int t = sg->nodes[i]->outputs[k];
      if (t >= 0 && (size_t)t < sg->n_tensors) bound[t] = true;
    }
  int rc = ECG_OK;
  for (size_t t = 0; t < sg->n_tensors && rc == ECG_OK; t++) {
    if (bound[t] || sg->tensors[t]->is_const) continue;
    bool dup = false;
    for (size_t k = 0; k < *n && !dup; k++) dup = strcmp((*names)[k], sg->tensors[t]->name) == 0;
    if (dup) continue;
    const char **r = realloc(*names, sizeof *r * (*n + 1));
    if (!r) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    *names = r;
    r[(*n)++] = sg->tensors[t]->name;
  }
  free(bound);
  return rc;
}

/** Make the outer values the subgraphs of node ni read explicit (ecg.h "control flow"):
 *  append one input per captured name, resolved in this graph (where it may itself be a
 *  capture of an enclosing subgraph), and list the names in the attribute
 *  ECG_ATTR_CAPTURES. Nothing changes for a node without subgraphs. Returns ECG_OK or
 *  ECG_ERR_INTERNAL. */
static int add_captures(conv *c, int ni, ecg_err *e) {
  ecg_node *n = c->g->nodes[ni];
  const char **names = NULL;
  size_t nn = 0;
  int rc = ECG_OK;
  for (size_t k = 0; k < n->n_attrs && rc == ECG_OK; k++) {
    const ecg_attr *a = n->attrs[k];
    if (a->g) rc = free_names(a->g, &names, &nn, e);
    for (size_t j = 0; j < a->n_graphs && rc == ECG_OK; j++) rc = free_names(a->graphs[j], &names, &nn, e);
  }
  if (rc != ECG_OK || nn == 0) { free(names); return rc; }
  int32_t *in = realloc(n->inputs, sizeof *in * (n->n_inputs + nn));
  ecg_attr *ca = in ? ecg_attr_add(n, ECG_ATTR_CAPTURES, ECG_ATTR_STRINGS) : NULL;
  if (in) n->inputs = in;
  if (!ca || !(ca->strings = calloc(nn, sizeof *ca->strings))) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (size_t k = 0; k < nn && rc == ECG_OK; k++) {
    ProtobufCBinaryData src = {strlen(names[k]), (uint8_t *)names[k]};
    if (!copy_bytes(&ca->strings[k], &src)) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); break; }
    ca->n_strings = k + 1;
    int tid;
    if ((rc = tensor_by_name(c, names[k], &tid, e)) != ECG_OK) break;
    n->inputs[n->n_inputs++] = tid;
  }
  free(names);
  return rc;
}

/* ---------------------------------------------------------------- optionals at control flow */

/** Output or input k of the list (ids, n) of graph g is the presence flag of the value before
 *  it: named "V:present" after V (format/ops/optional.c). */
static bool flag_at(const ecg_graph *g, const int32_t *ids, size_t n, size_t k) {
  if (k == 0 || k >= n || ids[k] < 0 || ids[k - 1] < 0) return false;
  const char *nm = g->tensors[ids[k]]->name, *vn = g->tensors[ids[k - 1]]->name;
  size_t l = strlen(nm), ls = strlen(ECG_OPTIONAL_PRESENT), lv = strlen(vn);
  return l == lv + ls && !strncmp(nm, vn, lv) && !strcmp(nm + lv, ECG_OPTIONAL_PRESENT);
}

/** Insert v at position at of the int32 list (arr, n). */
static int insert_i32(int32_t **arr, size_t *n, size_t at, int32_t v, ecg_err *e) {
  ECG_TRY(push_i32(arr, n, v, e));
  memmove(*arr + at + 1, *arr + at, sizeof **arr * (*n - 1 - at));
  (*arr)[at] = v;
  return ECG_OK;
}

/** A new bool scalar tensor of g named "V:present" for tensor v (-1: none); its id in *out. */
static int new_flag(ecg_graph *g, int v, int *out, ecg_err *e) {
  *out = -1;
  if (v < 0) return ECG_OK;
  char pn[1024];
  snprintf(pn, sizeof pn, "%s" ECG_OPTIONAL_PRESENT, g->tensors[v]->name);
  for (size_t j = 0; j < g->n_tensors; j++)
    if (!strcmp(g->tensors[j]->name, pn)) return ecg_errf(e, ECG_ERR_INPUT, "the name '%s' of the presence flag of '%s' is taken", pn, g->tensors[v]->name);
  if ((*out = ecg_add_tensor(g, pn, ECG_BOOL, 0, NULL)) < 0) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}

/** Optional values crossing the boundary of control-flow node ni (label lb), after its
 *  subgraphs were converted (an optional subgraph input or output V is followed there by its
 *  flag V:present): an If whose branches give an optional output Y gets the output
 *  Y:present after Y; a Loop whose body carries an optional value (as its input or output)
 *  carries its flag as one more loop-carried value after it: the node's input flag is an
 *  OptionalHasElement of the initial value (ecg_resolve_optionals makes it the flag, or true
 *  for a plain value), the node's output Y gets Y:present, and a body side that is a plain
 *  value gets a flag too (an input nothing reads, or an output of constant true). */
static int cf_optional_flags(conv *c, int ni, const char *lb, ecg_err *e) {
  ecg_graph *g = c->g;
  ecg_node *n = g->nodes[ni];
  if (!strcmp(n->op_type, "If") && !n->domain[0]) {
    const ecg_attr *a0 = NULL, *a1 = NULL;
    for (size_t k = 0; k < n->n_attrs; k++) {
      if (!strcmp(n->attrs[k]->name, "then_branch")) a0 = n->attrs[k];
      if (!strcmp(n->attrs[k]->name, "else_branch")) a1 = n->attrs[k];
    }
    if (!a0 || !a1 || !a0->g || !a1->g) return ECG_OK; /* shape inference names what is missing */
    const ecg_graph *b0 = a0->g, *b1 = a1->g;
    if (b0->n_outputs == n->n_outputs && b1->n_outputs == n->n_outputs) return ECG_OK;
    size_t k0 = 0, k1 = 0, nk = n->n_outputs;
    for (size_t j = 0; j < nk; j++, k0++, k1++) {
      bool f0 = flag_at(b0, b0->outputs, b0->n_outputs, k0 + 1), f1 = flag_at(b1, b1->outputs, b1->n_outputs, k1 + 1);
      if (!f0 && !f1) continue;
      if (!f0 || !f1)
        return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op If: output %zu is an optional value in one branch and not in the other "
                                          "(not supported)", lb, j);
      size_t at = j + (n->n_outputs - nk) + 1; /* after the node's output j */
      int f;
      ECG_TRY(new_flag(g, n->outputs[at - 1], &f, e));
      ECG_TRY(insert_i32(&n->outputs, &n->n_outputs, at, f, e));
      k0++, k1++;
    }
    return ECG_OK;
  }
  if (!strcmp(n->op_type, "SequenceMap") && !n->domain[0]) { /* its first input and its outputs are run-time sequences */
    if (n->n_inputs && n->inputs[0] >= 0) g->tensors[n->inputs[0]]->sequence = true;
    for (size_t k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0) g->tensors[n->outputs[k]]->sequence = true;
    return ECG_OK;
  }
  if (strcmp(n->op_type, "Loop") || n->domain[0]) return ECG_OK;
  ecg_graph *b = NULL;
  for (size_t k = 0; k < n->n_attrs; k++)
    if (!strcmp(n->attrs[k]->name, "body")) b = n->attrs[k]->g;
  if (!b || n->n_inputs < 2) return ECG_OK;
  size_t N = n->n_inputs - 2, done = 0; /* loop-carried values; flags added so far */
  for (size_t j = 0; j < N; j++) {
    size_t bi = 2 + j + done, bo = 1 + j + done, nin = 2 + j + done, nout = j + done;
    /* a sequence the body carries is a run-time sequence from its initial value on (its
     * items' shapes may change per iteration): the operators making it stay nodes */
    if (bi < b->n_inputs && b->tensors[b->inputs[bi]]->sequence && n->inputs[nin] >= 0) g->tensors[n->inputs[nin]]->sequence = true;
    bool fi = flag_at(b, b->inputs, b->n_inputs, bi + 1), fo = flag_at(b, b->outputs, b->n_outputs, bo + 1);
    if (!fi && !fo) continue;
    if (bi >= b->n_inputs || bo >= b->n_outputs) return ECG_OK; /* shape inference names the mismatch */
    int f;
    if (!fi) {
      ECG_TRY(new_flag(b, b->inputs[bi], &f, e));
      ECG_TRY(insert_i32(&b->inputs, &b->n_inputs, bi + 1, f, e));
    }
    if (!fo) { /* a plain body output: present */
      ECG_TRY(new_flag(b, b->outputs[bo], &f, e));
      uint8_t one = 1;
      if (ecg_tensor_set_data(b->tensors[f], &one, 1)) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      ECG_TRY(insert_i32(&b->outputs, &b->n_outputs, bo + 1, f, e));
    }
    int x = n->inputs[nin], fx = -1;
    if (x >= 0) { /* the initial value's flag: OptionalHasElement(x), resolved with the optionals */
      char pn[1024];
      snprintf(pn, sizeof pn, "%s" ECG_OPTIONAL_PRESENT "#%d", g->tensors[x]->name, ni);
      if ((fx = ecg_add_tensor(g, pn, ECG_BOOL, 0, NULL)) < 0) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      int in1[1] = {x}, out1[1] = {fx};
      if (ecg_add_node(g, pn, "OptionalHasElement", "", c->opset, 1, in1, 1, out1) < 0)
        return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      n = g->nodes[ni];
    }
    ECG_TRY(insert_i32(&n->inputs, &n->n_inputs, nin + 1, fx, e));
    if (nout < n->n_outputs) {
      ECG_TRY(new_flag(g, n->outputs[nout], &f, e));
      ECG_TRY(insert_i32(&n->outputs, &n->n_outputs, nout + 1, f, e));
    }
    done++;
  }
  return ECG_OK;
}

/* ---------------------------------------------------------------- Constant nodes */

/** Make tensor tid the value of Constant node np (label lb): attribute value (a
 *  TensorProto), value_float / value_int (scalars), value_floats / value_ints (1-D).
 *  Errors (ECG_ERR_INPUT): value_string(s), sparse_value, no or several values. */
static int constant_value(conv *c, const Onnx__NodeProto *np, const char *lb, int tid, ecg_err *e) {
  ecg_tensor *t = c->g->tensors[tid];
  if (np->n_attribute != 1)
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Constant: expected exactly one value attribute, found %zu", lb, np->n_attribute);
  const Onnx__AttributeProto *a = np->attribute[0];
  const char *an = S(a->name);
  int rc;
  if (strcmp(an, "value") == 0) {
    if (!a->t) return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Constant: attribute 'value' holds no tensor", lb);
    char what[300];
    snprintf(what, sizeof what, "Constant node '%s'", lb);
    return tensor_from_proto(t, a->t, what, e);
  } else if (strcmp(an, "value_float") == 0) {
    t->dtype = ECG_FLOAT;
    rc = ecg_tensor_set_shape(t, 0, NULL, NULL);
    if (rc == ECG_OK) rc = ecg_tensor_set_data(t, &a->f, sizeof a->f);
  } else if (strcmp(an, "value_int") == 0) {
    t->dtype = ECG_INT64;
    rc = ecg_tensor_set_shape(t, 0, NULL, NULL);
    if (rc == ECG_OK) rc = ecg_tensor_set_data(t, &a->i, sizeof a->i);
  } else if (strcmp(an, "value_floats") == 0) {
    int64_t n = (int64_t)a->n_floats;
    t->dtype = ECG_FLOAT;
    rc = ecg_tensor_set_shape(t, 1, &n, NULL);
    if (rc == ECG_OK) rc = ecg_tensor_set_data(t, a->floats, sizeof(float) * a->n_floats);
  } else if (strcmp(an, "value_ints") == 0) {
    int64_t n = (int64_t)a->n_ints;
    t->dtype = ECG_INT64;
    rc = ecg_tensor_set_shape(t, 1, &n, NULL);
    if (rc == ECG_OK) rc = ecg_tensor_set_data(t, a->ints, sizeof(int64_t) * a->n_ints);
  } else if (strcmp(an, "value_string") == 0 || strcmp(an, "value_strings") == 0) {
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Constant: string constants (%s) are not supported", lb, an);
  } else if (strcmp(an, "sparse_value") == 0) {
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Constant: sparse constants are not supported", lb);
  } else {
    return ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Constant: unknown attribute '%s'", lb, an);
  }
  if (rc != ECG_OK) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}

/* ---------------------------------------------------------------- graphs */

/** True when np is an ai.onnx op named op. */
static bool is_op(const Onnx__NodeProto *np, const char *op) {
  return default_domain(np->domain) && strcmp(S(np->op_type), op) == 0;
}

/** Union the sets of ONNX names a (input side) and b (output side) for a removed
 *  Identity/Dropout; a set holding a graph input or output keeps that name as its root.
 *  Returns false (node must be kept) when both sets hold such a name. */
static bool merge_names(names *nm, int a, int b) {
  int ra = names_root(nm, a), rb = names_root(nm, b);
  if (ra == rb) return true;
  bool sa = nm->flags[ra] & (F_INPUT | F_OUTPUT), sb = nm->flags[rb] & (F_INPUT | F_OUTPUT);
  if (sa && sb) return false;
  if (sb) nm->parent[ra] = rb;
  else nm->parent[rb] = ra;
  return true;
}

/** Convert ONNX graph gp of model m into the empty ECG graph g (see onnx2ecg_convert);
 *  depth 0 is the main graph (Identity/Dropout removal, --input-shape bindings o and
 *  counts st).  Errors as onnx2ecg_convert. */
static int convert_graph(const Onnx__ModelProto *m, const Onnx__GraphProto *gp, int64_t opset,
                         int depth, const onnx2ecg_opts *o, ecg_graph *g, onnx2ecg_stats *st,
                         ecg_err *e) {
  conv cv = {.m = m, .gp = gp, .g = g, .opset = opset, .top = depth == 0, .depth = depth};
  if (gp->n_node > ECG_MAX_NODES || gp->n_initializer + gp->n_input + gp->n_output + gp->n_value_info > ECG_MAX_TENSORS)
    return ecg_errf(e, ECG_ERR_INPUT, "graph '%s' has %zu nodes and %zu initializers, more than the limit of %zu each",
                    gp->name ? gp->name : "", gp->n_node, gp->n_initializer, (size_t)ECG_MAX_NODES);
  conv *c = &cv;
  names *nm = &c->nm;
  int rc = ECG_OK;
  char lb[256], what[320];
  bool *removed = calloc(gp->n_node + 1, 1);
  if (!removed) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
#define FAIL(X) do { rc = (X); goto out; } while (0)
#define INTERN(I, NAME) do { if (((I) = names_intern(nm, (NAME))) < 0) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory")); } while (0)
  g->opset = opset;
  free(g->name == protobuf_c_empty_string ? NULL : g->name);
  g->name = strdup(S(gp->name));
  if (!g->name) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));

  /* 1. intern every name, with flags */
  int ix;
  for (size_t k = 0; k < gp->n_initializer; k++) {
    INTERN(ix, S(gp->initializer[k]->name));
    nm->flags[ix] |= F_INIT;
  }
  for (size_t k = 0; k < gp->n_input; k++) {
    INTERN(ix, S(gp->input[k]->name));
    if (!(nm->flags[ix] & F_INIT)) nm->flags[ix] |= F_INPUT;
  }
  for (size_t k = 0; k < gp->n_output; k++) {
    INTERN(ix, S(gp->output[k]->name));
    nm->flags[ix] |= F_OUTPUT | F_CONSUMED;
  }
  for (size_t i = 0; i < gp->n_node; i++) {
    const Onnx__NodeProto *np = gp->node[i];
    if (!np->op_type || !np->op_type[0])
      FAIL(ecg_errf(e, ECG_ERR_INPUT, "node '%s' has no op_type", onnx_node_label(np, i, lb, sizeof lb)));
    for (size_t k = 0; k < np->n_input; k++)
      if (np->input[k][0]) { INTERN(ix, np->input[k]); nm->flags[ix] |= F_CONSUMED; }
    for (size_t k = 0; k < np->n_output; k++)
      if (np->output[k][0]) INTERN(ix, np->output[k]);
  }

  /* 2. Identity / Dropout removal (main graph only): rewire by merging names */
  for (size_t i = 0; c->top && i < gp->n_node; i++) {
    const Onnx__NodeProto *np = gp->node[i];
    bool drop = is_op(np, "Dropout");
    if (!drop && !is_op(np, "Identity")) continue;
    onnx_node_label(np, i, lb, sizeof lb);
    if (np->n_input < 1 || !np->input[0][0] || np->n_output < 1 || !np->output[0][0])
      FAIL(ecg_errf(e, ECG_ERR_INPUT, "node '%s' op %s: missing input or output", lb, np->op_type));
    /* a Dropout whose mask is used, or with a training_mode input, stays a node (the
     * registry's Dropout: inference copy and all-true mask, training mode refused) */
    if (drop && np->n_output >= 2 && np->output[1][0] && (nm->flags[names_find(nm, np->output[1])] & F_CONSUMED)) continue;
    if (drop && np->n_input >= 3 && np->input[2][0]) continue;
    int a = names_find(nm, np->input[0]), b = names_find(nm, np->output[0]);
    if (merge_names(nm, a, b)) {
      removed[i] = true;
      if (st) st->identities_removed++;
    }
  }

  /* 3. graph inputs, then initializers (constants) */
  for (size_t k = 0; k < gp->n_input; k++) {
    const Onnx__ValueInfoProto *vi = gp->input[k];
    ix = names_find(nm, S(vi->name));
    if (!(nm->flags[ix] & F_INPUT)) continue; /* an initializer: a constant, not an input */
    int tid = tensor_of(c, ix);
    if (tid < 0) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
    bool dup = false;
    for (size_t j = 0; j < g->n_inputs; j++) dup |= g->inputs[j] == tid;
    if (dup) continue;
    if (c->top) snprintf(what, sizeof what, "graph input '%s'", S(vi->name));
    else snprintf(what, sizeof what, "subgraph '%s' input '%s'", S(gp->name), S(vi->name));
    bool optional = false, sequence = false;
    { /* an optional input (of the main graph, or a Loop body's loop-carried one): element +
       * presence flag; a sequence input: a run-time sequence */
      int dtype, rank;
      int64_t dims[ECG_MAX_RANK];
      const char *syms[ECG_MAX_RANK];
      if ((rc = value_type_opt(vi, what, &dtype, &rank, dims, syms, &optional, &sequence, e)) != ECG_OK) goto out;
      if (optional || sequence) {
        ecg_tensor *t = g->tensors[tid];
        t->dtype = dtype;
        t->sequence = sequence;
        if (rank >= 0 && ecg_tensor_set_shape(t, rank, dims, syms) != ECG_OK) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
      }
    }
    if (!optional && !sequence && (rc = seed_from_value_info(c, tid, vi, what, e)) != ECG_OK) goto out;
    if (c->top && g->tensors[tid]->dtype == ECG_UNDEFINED)
      FAIL(ecg_errf(e, ECG_ERR_INPUT, "graph input '%s' has no tensor element type", S(vi->name)));
    if ((rc = push_i32(&g->inputs, &g->n_inputs, tid, e)) != ECG_OK) goto out;
    if (optional) {
      char pn[1024];
      snprintf(pn, sizeof pn, "%s" ECG_OPTIONAL_PRESENT, S(vi->name));
      if (names_find(nm, pn) >= 0) FAIL(ecg_errf(e, ECG_ERR_INPUT, "graph input '%s': the name '%s' of its presence flag is taken", S(vi->name), pn));
      int pt = ecg_add_tensor(g, pn, ECG_BOOL, 0, NULL);
      if (pt < 0) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
      if ((rc = push_i32(&g->inputs, &g->n_inputs, pt, e)) != ECG_OK) goto out;
    }
  }
  if (c->top && (rc = apply_input_shapes(c, o, e)) != ECG_OK) goto out;
  for (size_t k = 0; k < gp->n_initializer; k++) {
    const Onnx__TensorProto *tp = gp->initializer[k];
    int tid = tensor_of(c, names_find(nm, S(tp->name)));
    if (tid < 0) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
    snprintf(what, sizeof what, "initializer '%s'", S(tp->name));
    if ((rc = tensor_from_proto(g->tensors[tid], tp, what, e)) != ECG_OK) goto out;
    if (st) st->initializers++;
  }

  /* 4. nodes */
  for (size_t i = 0; i < gp->n_node; i++) {
    const Onnx__NodeProto *np = gp->node[i];
    if (removed[i]) continue;
    onnx_node_label(np, i, lb, sizeof lb);
    if (is_op(np, "Constant")) {
      if (np->n_output != 1 || !np->output[0][0])
        FAIL(ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Constant: expected one output", lb));
      ix = names_find(nm, np->output[0]);
      int tid = tensor_of(c, ix);
      if (tid < 0) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
      if (g->tensors[tid]->is_const || (nm->flags[names_root(nm, ix)] & F_INPUT))
        FAIL(ecg_errf(e, ECG_ERR_INPUT, "node '%s' op Constant: output '%s' is defined twice", lb, np->output[0]));
      if ((rc = constant_value(c, np, lb, tid, e)) != ECG_OK) goto out;
      if (st) st->constants++;
      continue;
    }
    int *ids = malloc(sizeof(int) * (np->n_input + np->n_output + 1));
    if (!ids) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
    for (size_t k = 0; k < np->n_input && rc == ECG_OK; k++) rc = tensor_by_name(c, np->input[k], &ids[k], e);
    for (size_t k = 0; k < np->n_output && rc == ECG_OK; k++) rc = tensor_by_name(c, np->output[k], &ids[np->n_input + k], e);
    int ni = rc == ECG_OK ? ecg_add_node(g, S(np->name), np->op_type, default_domain(np->domain) ? "" : np->domain,
                                         default_domain(np->domain) ? opset : domain_opset(m, np->domain),
                                         (int)np->n_input, ids, (int)np->n_output, ids + np->n_input)
                          : -1;
    free(ids);
    if (rc != ECG_OK) goto out;
    if (ni < 0) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
    for (size_t k = 0; k < np->n_attribute; k++)
      if ((rc = copy_attr(c, g->nodes[ni], np->attribute[k], lb, e)) != ECG_OK) goto out;
    if ((rc = cf_optional_flags(c, ni, lb, e)) != ECG_OK) goto out;
    if ((rc = add_captures(c, ni, e)) != ECG_OK) goto out;
  }

  /* 5. graph outputs; value_info seeds intermediate dtypes and shapes */
  for (size_t k = 0; k < gp->n_output; k++) {
    const Onnx__ValueInfoProto *vi = gp->output[k];
    int tid = tensor_of(c, names_find(nm, S(vi->name)));
    if (tid < 0) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
    ecg_tensor *t = g->tensors[tid];
    bool is_in = false;
    for (size_t j = 0; j < g->n_inputs; j++) is_in |= g->inputs[j] == tid;
    if (c->top) snprintf(what, sizeof what, "graph output '%s'", S(vi->name));
    else snprintf(what, sizeof what, "subgraph '%s' output '%s'", S(gp->name), S(vi->name));
    bool optional = false, sequence = false;
    { /* a sequence output (a run-time sequence; in a subgraph, an If branch's: control flow's
       * shape inference refuses it elsewhere); an optional output of the main graph: the
       * element, its presence flag following it */
      int dtype, rank;
      int64_t dims[ECG_MAX_RANK];
      const char *syms[ECG_MAX_RANK];
      if ((rc = value_type_opt(vi, what, &dtype, &rank, dims, syms, &optional, &sequence, e)) != ECG_OK) goto out;
      if (sequence && !t->is_const && !is_in) { /* its producer's inference refines the shape */
        t->dtype = dtype;
        t->sequence = true;
        if (ecg_tensor_set_shape(t, rank, dims, syms) != ECG_OK) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
      }
      if (sequence && (t->is_const || (is_in && !t->sequence)))
        FAIL(ecg_errf(e, ECG_ERR_INPUT, "%s is a sequence, but the value it names is a tensor", what));
    }
    if (!optional && !sequence && !t->is_const && !is_in && (rc = seed_from_value_info(c, tid, vi, what, e)) != ECG_OK) goto out;
    if ((rc = push_i32(&g->outputs, &g->n_outputs, tid, e)) != ECG_OK) goto out;
    if (optional) { /* its presence flag follows it as the output "V:present", which
                     * ecg_resolve_optionals connects to the flag of the optional it is */
      char pn[1024];
      snprintf(pn, sizeof pn, "%s" ECG_OPTIONAL_PRESENT, t->name);
      if (names_find(nm, pn) >= 0)
        FAIL(ecg_errf(e, ECG_ERR_INPUT, "%s: the name '%s' of its presence flag is taken", what, pn));
      int pt = -1;
      for (size_t i = 0; i < g->n_nodes && pt < 0; i++) /* the flag output a control-flow node gives after it */
        for (size_t k = 1; k < g->nodes[i]->n_outputs; k++)
          if (g->nodes[i]->outputs[k - 1] == tid && flag_at(g, g->nodes[i]->outputs, g->nodes[i]->n_outputs, k)) pt = g->nodes[i]->outputs[k];
      for (size_t j = 0; pt < 0 && j < g->n_tensors; j++)
        if (!strcmp(g->tensors[j]->name, pn)) FAIL(ecg_errf(e, ECG_ERR_INPUT, "%s: the name '%s' of its presence flag is taken", what, pn));
      if (pt >= 0) {
        if ((rc = push_i32(&g->outputs, &g->n_outputs, pt, e)) != ECG_OK) goto out;
        continue;
      }
      pt = ecg_add_tensor(g, pn, ECG_BOOL, 0, NULL);
      if (pt < 0) FAIL(ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"));
      if ((rc = push_i32(&g->outputs, &g->n_outputs, pt, e)) != ECG_OK) goto out;
    }
  }
  for (size_t k = 0; k < gp->n_value_info; k++) {
    const Onnx__ValueInfoProto *vi = gp->value_info[k];
    ix = names_find(nm, S(vi->name));
    if (ix < 0) continue;
    int tid = nm->tid[names_root(nm, ix)];
    if (tid < 0 || g->tensors[tid]->is_const || g->tensors[tid]->shape_known ||
        (nm->flags[names_root(nm, ix)] & F_INPUT))
      continue;
    snprintf(what, sizeof what, "value '%s'", S(vi->name));
    ecg_err ignore; /* value_info is only a hint: a non-tensor entry is skipped */
    (void)seed_from_value_info(c, tid, vi, what, &ignore);
  }
out:
#undef FAIL
#undef INTERN
  free(removed);
  names_free(nm);
  return rc;
}

/* ---------------------------------------------------------------- public */

int onnx2ecg_parse(const uint8_t *buf, size_t len, const char *label, Onnx__ModelProto **out,
                   ecg_err *e) {
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
  if (!m) return ecg_errf(e, ECG_ERR_INPUT, "%s: not a valid ONNX model (protobuf decoding failed)", label);
  if (!m->graph) {
    onnx__model_proto__free_unpacked(m, NULL);
    return ecg_errf(e, ECG_ERR_INPUT, "%s: not a valid ONNX model (no graph)", label);
  }
  *out = m;
  return ECG_OK;
}

int onnx2ecg_convert(const Onnx__ModelProto *m, const onnx2ecg_opts *opts, ecg_graph **out,
                     onnx2ecg_stats *st, ecg_err *e) {
  bool have = false;
  for (size_t i = 0; i < m->n_opset_import; i++) have |= default_domain(m->opset_import[i]->domain);
  int64_t opset = domain_opset(m, "");
  /* A model of only non-default-domain nodes (ai.onnx.preview.training) may import no
   * ai.onnx opset: its graph opset is then ours, unused by those nodes. */
  bool other_only = !have && m->graph && m->graph->n_node > 0;
  for (size_t i = 0; other_only && i < m->graph->n_node; i++)
    other_only = !default_domain(m->graph->node[i]->domain) &&
                 ecg_op_lookup(S(m->graph->node[i]->op_type), m->graph->node[i]->domain) != NULL;
  if (other_only) have = true, opset = ONNX2ECG_OPSET_NEWEST;
  if (!have) {
    char doms[256] = "";
    for (size_t i = 0; i < m->n_opset_import; i++)
      snprintf(doms + strlen(doms), sizeof doms - strlen(doms), "%s'%s'", i ? ", " : "",
               m->opset_import[i]->domain ? m->opset_import[i]->domain : "");
    return ecg_errf(e, ECG_ERR_INPUT, "unsupported: the model imports no ai.onnx opset, only domain %s", doms);
  }
  if (opset < ONNX2ECG_OPSET_MIN)
    return ecg_errf(e, ECG_ERR_INPUT, "ai.onnx opset %lld is not valid (opsets start at %d)", (long long)opset,
                    ONNX2ECG_OPSET_MIN);
  ecg_graph *g = ecg_graph_new();
  if (!g) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (st) {
    memset(st, 0, sizeof *st);
    st->opset = opset;
    st->nodes_onnx = (int)m->graph->n_node;
  }
  int rc = convert_graph(m, m->graph, opset, 0, opts, g, st, e);
  if (rc == ECG_OK && opts && opts->source) {
    g->source = strdup(opts->source);
    if (!g->source) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  char v[32];
  snprintf(v, sizeof v, "%lld", (long long)(m->has_ir_version ? m->ir_version : 0));
  if (rc == ECG_OK) rc = add_meta(g, "onnx.ir_version", v, e);
  if (rc == ECG_OK && m->producer_name && m->producer_name[0]) rc = add_meta(g, "onnx.producer_name", m->producer_name, e);
  if (rc == ECG_OK && m->producer_version && m->producer_version[0]) rc = add_meta(g, "onnx.producer_version", m->producer_version, e);
  if (rc != ECG_OK) { ecg_graph_free(g); return rc; }
  if (st) st->nodes_imported = (int)g->n_nodes;
  *out = g;
  return ECG_OK;
}

int onnx2ecg_unsupported(const ecg_graph *g, onnx2ecg_line_fn fn, void *ctx) {
  int n = 0;
  char lb[256], line[700];
  for (size_t i = 0; i < g->n_nodes; i++) {
    const ecg_node *nd = g->nodes[i];
    const ecg_op_info *op = ecg_op_lookup(nd->op_type, nd->domain);
    bool impl = false;
    int v = op ? ecg_op_schema_version(op->id, nd->opset, &impl) : 0;
    if (op && impl) continue;
    char vs[128];
    if (op) ecg_op_versions(op->id, true, vs, sizeof vs);
    if (op && v > 0) /* the schema in effect at this opset is one ecg does not implement */
      snprintf(line, sizeof line, "unsupported operator version: node '%s' op %s-%d (opset %lld; implemented versions of %s: %s)",
               ecg_node_label(g, nd, lb, sizeof lb), nd->op_type, v, (long long)nd->opset, nd->op_type, vs);
    else if (op)
      snprintf(line, sizeof line, "unsupported operator version: node '%s' op %s has no schema at opset %lld (implemented versions: %s)",
               ecg_node_label(g, nd, lb, sizeof lb), nd->op_type, (long long)nd->opset, vs);
    else
      snprintf(line, sizeof line, "unsupported operator: node '%s' op %s (domain '%s', opset %lld)",
               ecg_node_label(g, nd, lb, sizeof lb), nd->op_type, nd->domain, (long long)nd->opset);
    fn(ctx, line);
    n++;
  }
  return n;
}
