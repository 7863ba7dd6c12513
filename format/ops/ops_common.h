/* Small helpers shared by the operator family files in format/ops/ (private to them).
 * Everything here is static inline so each family file stays self-contained. */
#ifndef ECG_OPS_COMMON_H
#define ECG_OPS_COMMON_H
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"

/** Symbol of dim i of t when it is symbolic, else NULL. */
static inline const char *ops_sym(const ecg_tensor *t, int i) {
  return t && i >= 0 && (size_t)i < t->n_dims && t->dims[i]->value < 0 ? t->dims[i]->symbol : NULL;
}

/** Set output i of n to dtype and dims with the given symbols for symbolic dims
 *  (syms[k] may be NULL: "?"). */
static inline int ops_set_out_syms(ecg_graph *g, ecg_node *n, int i, int dtype, int rank,
                                   const int64_t *dims, const char *const *syms, ecg_err *e) {
  ecg_tensor *t = ecg_node_output(g, n, i);
  if (!t) return ECG_OK; /* omitted optional output */
  if (rank > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output rank %d exceeds %d", rank, ECG_MAX_RANK);
  t->dtype = dtype;
  if (ecg_tensor_refine_shape(t, rank, dims, syms) != ECG_OK)
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}

/** Set output i of n to dtype and dims; dim k keeps the symbol of src's dim from[k]
 *  when from (may be NULL) names one (>= 0) and dims[k] is symbolic. */
static inline int ops_set_out(ecg_graph *g, ecg_node *n, int i, int dtype, int rank,
                              const int64_t *dims, const ecg_tensor *src, const int *from,
                              ecg_err *e) {
  const char *syms[ECG_MAX_RANK] = {0};
  for (int k = 0; k < rank && k < ECG_MAX_RANK && from; k++)
    if (dims[k] < 0) syms[k] = ops_sym(src, from[k]);
  return ops_set_out_syms(g, n, i, dtype, rank, dims, syms, e);
}

/** Normalise axis a (negative counts from the end) into [0, rank); false if out of range. */
static inline bool ops_axis(int64_t a, int rank, int *out) {
  if (a < -rank || a >= rank) return false;
  *out = (int)(a < 0 ? a + rank : a);
  return true;
}

/** The input i of n, failing with a message when it is missing. */
static inline int ops_input(const ecg_graph *g, const ecg_node *n, int i, ecg_tensor **t, ecg_err *e) {
  *t = ecg_node_input(g, n, i);
  if (!*t) return ecg_node_errf(e, g, n, "missing input %d", i);
  if (!(*t)->shape_known) return ecg_node_errf(e, g, n, "input '%s' has unknown rank", (*t)->name);
  if ((*t)->n_dims > ECG_MAX_RANK)
    return ecg_node_errf(e, g, n, "input '%s' has rank %zu > %d", (*t)->name, (*t)->n_dims, ECG_MAX_RANK);
  return ECG_OK;
}

/** Read constant integer input i into vals[max]; *count = -1 when the input is omitted.
 *  Fails when it is present but not constant (what names the dynamic feature). */
static inline int ops_const_input(const ecg_graph *g, const ecg_node *n, int i, int64_t *vals,
                                  int max, int *count, const char *what, ecg_err *e) {
  const ecg_tensor *t = ecg_node_input(g, n, i);
  *count = -1;
  if (!t) return ECG_OK;
  if (!t->is_const)
    return ecg_node_errf(e, g, n, "input '%s' is not a constant: a dynamic %s is not supported",
                         t->name, what);
  *count = ecg_const_ints(t, vals, max);
  if (*count < 0) return ecg_node_errf(e, g, n, "input '%s' has too many elements", t->name);
  return ECG_OK;
}

/** Length of input i when it is present, not a constant, and a static scalar or 1-D
 *  tensor (a shape-like operand known only at run time: Reshape's shape, Slice's
 *  starts, ...); -1 otherwise. The output rank may then still be known. */
static inline int ops_runtime_operand(const ecg_graph *g, const ecg_node *n, int i) {
  const ecg_tensor *t = ecg_node_input(g, n, i);
  if (!t || t->is_const || !t->shape_known || t->n_dims > 1) return -1;
  int64_t m = ecg_tensor_numel(t);
  return m >= 0 && m <= 64 ? (int)m : -1;
}

/** Output i of n as dtype with rank r and every dim unknown (declared shapes from the
 *  model may fill them: ecg_tensor_refine_shape). */
static inline int ops_set_out_unknown(ecg_graph *g, ecg_node *n, int i, int dtype, int r, ecg_err *e) {
  int64_t d[ECG_MAX_RANK];
  if (r < 0 || r > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "output rank %d out of range", r);
  for (int k = 0; k < r; k++) d[k] = -1;
  return ops_set_out_syms(g, n, i, dtype, r, d, NULL, e);
}

/** Product of dims[0..r); -1 when any is symbolic; saturates at INT64_MAX on overflow
 *  (hostile shapes; check_output_sizes in registry.c then refuses the result). */
static inline int64_t ops_prod(const int64_t *d, int r) {
  int64_t p = 1;
  bool over = false;
  for (int i = 0; i < r; i++) {
    if (d[i] < 0) return -1;
    if (!over && __builtin_mul_overflow(p, d[i], &p)) over = true;
  }
  return over ? INT64_MAX : p;
}

/** Element count of tensor t or -1 (NULL allowed). */
static inline int64_t ops_numel(const ecg_tensor *t) { return t ? ecg_tensor_numel(t) : -1; }

/** Byte size of one element for data-movement folding; fails for variable-size dtypes. */
static inline int ops_elem_size(const ecg_graph *g, const ecg_node *n, const ecg_tensor *t,
                                size_t *es, ecg_err *e) {
  *es = ecg_dtype_size(t->dtype);
  if (*es == 0) return ecg_node_errf(e, g, n, "dtype %s not handled", ecg_dtype_name(t->dtype));
  return ECG_OK;
}

/** Row-major strides of dims[0..r). */
static inline void ops_strides(const int64_t *d, int r, int64_t *s) {
  int64_t acc = 1;
  for (int i = r - 1; i >= 0; i--) { s[i] = acc; acc *= d[i]; }
}

/** True for the dtypes the reference evaluation reads and writes exactly (numeric and
 *  bool; not string, bfloat16 or complex). */
static inline bool ops_fold_dtype(int dt) {
  return ecg_dtype_size(dt) > 0 && dt != ECG_BFLOAT16 && dt != ECG_COMPLEX64 && dt != ECG_COMPLEX128;
}

/** Undo a partial fold of output i (after a failed eval): it is no longer a constant. */
static inline void ops_unfold(ecg_graph *g, ecg_node *n, int i) {
  ecg_tensor *t = ecg_node_output(g, n, i);
  if (!t) return;
  free(t->data.data);
  t->data.data = NULL;
  t->data.len = 0;
  t->is_const = false;
}

/** Allocate output i's constant data or fail with ECG_ERR_INTERNAL. */
static inline int ops_alloc(ecg_graph *g, ecg_node *n, int i, void **buf, ecg_err *e) {
  ecg_tensor *t = ecg_node_output(g, n, i);
  if (!t) return ecg_node_errf(e, g, n, "output %d is omitted", i);
  if (ecg_dtype_size(t->dtype) == 0)
    return ecg_node_errf(e, g, n, "dtype %s not handled", ecg_dtype_name(t->dtype));
  *buf = ecg_alloc_output_data(g, n, i);
  if (!*buf) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  return ECG_OK;
}
#endif
