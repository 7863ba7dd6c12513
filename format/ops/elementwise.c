/* Elementwise operators (One-to-One): unary activations and math, binary arithmetic,
 * comparison and logic with numpy broadcasting (ONNX Broadcasting.md), Where, variadic
 * Max/Min/Sum/Mean, Cast and BatchNormalization.  Folding runs every one of them
 * through one broadcasting loop (eval_bcast) parameterised by a scalar kernel
 * (STYLE 12): floats are computed in double, integers and bool in int64. */
#include <math.h>

#include "ops_common.h"

/* ---------------------------------------------------------------- shapes */

/* Broadcast the shapes of inputs [first, first+count) of n into out[*rank]; *like is
 * the input sharing the most symbolic dims with the result (to keep their names). */
static int bcast_inputs(ecg_graph *g, ecg_node *n, int first, int count, int64_t *out, int *rank,
                        const ecg_tensor **like, ecg_err *e) {
  int r = 0;
  const ecg_tensor *ts[16] = {0};
  if (count < 1 || count > 16) return ecg_node_errf(e, g, n, "expected 1 to 16 inputs, got %d", count);
  for (int k = 0; k < count; k++) {
    ecg_tensor *t;
    ECG_TRY(ops_input(g, n, first + k, &t, e));
    int64_t d[ECG_MAX_RANK], tmp[ECG_MAX_RANK];
    int rt = ecg_bcast_dims(g, n, first + k, d);
    int rr = k == 0 ? ecg_broadcast_shape(rt, d, 0, NULL, tmp) : ecg_broadcast_shape(r, out, rt, d, tmp);
    if (rr < 0) {
      char a[128], b[128];
      return ecg_node_errf(e, g, n, "shapes %s and %s (input '%s') cannot be broadcast",
                           k ? ecg_shape_str(ts[0], a, sizeof a) : "?", ecg_shape_str(t, b, sizeof b), t->name);
    }
    if (rr > ECG_MAX_RANK) return ecg_node_errf(e, g, n, "rank %d exceeds %d", rr, ECG_MAX_RANK);
    memcpy(out, tmp, sizeof(int64_t) * (size_t)rr);
    r = rr;
    ts[k] = t;
  }
  int best = -1;
  *like = ts[0];
  for (int k = 0; k < count; k++) {
    int score = 0, rt = (int)ts[k]->n_dims;
    for (int j = 0; j < rt; j++)
      if (out[r - rt + j] < 0 && ts[k]->dims[j]->value < 0) score++;
    if (score > best) { best = score; *like = ts[k]; }
  }
  *rank = r;
  return ECG_OK;
}

/* Fail when the data inputs [first, first+count) disagree on dtype. */
static int same_dtype(ecg_graph *g, ecg_node *n, int first, int count, ecg_err *e) {
  const ecg_tensor *a = ecg_node_input(g, n, first);
  for (int k = 1; k < count; k++) {
    const ecg_tensor *b = ecg_node_input(g, n, first + k);
    if (a && b && a->dtype && b->dtype && a->dtype != b->dtype)
      return ecg_node_errf(e, g, n, "inputs '%s' (%s) and '%s' (%s) differ in dtype", a->name,
                           ecg_dtype_name(a->dtype), b->name, ecg_dtype_name(b->dtype));
  }
  return ECG_OK;
}

/* Broadcast inputs [first, first+count) into output 0 of dtype (-1: input first's). */
static int infer_bcast(ecg_graph *g, ecg_node *n, int first, int count, int dtype, ecg_err *e) {
  int64_t d[ECG_MAX_RANK];
  int r;
  const ecg_tensor *like;
  ECG_TRY(bcast_inputs(g, n, first, count, d, &r, &like, e));
  if (dtype < 0) dtype = ecg_node_input(g, n, first)->dtype;
  return ecg_set_output(g, n, 0, dtype, r, d, like);
}

/** Unary elementwise ops (Relu, Sigmoid, ..., Clip, Identity) and shape-preserving
 *  Softmax/LogSoftmax/InstanceNormalization: output 0 = input 0's dtype and shape. */
int ecg_infer_unary(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  return ecg_set_output(g, n, 0, x->dtype, r, d, x);
}

/** IsNaN, IsInf: input 0's shape, bool output. */
int ecg_infer_unary_bool(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  return ecg_set_output(g, n, 0, ECG_BOOL, r, d, x);
}

/** Cast: input 0's shape, dtype from the required attribute 'to'. */
int ecg_infer_cast(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ecg_tensor *x;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t to = ecg_attr_i(n, "to", -1);
  if (to >= 17 && to <= 26) /* ONNX's float8 (17-20, 24), 4-bit (21-23) and 2-bit (25, 26) types */
    return ecg_node_errf(e, g, n, "unsupported target type %s ('to' = %lld): float8, float4, int4/uint4 and int2/uint2 are not supported",
                         to <= 20 || to == 24 ? "float8" : to == 23 ? "float4" : "int4/int2", (long long)to);
  if (to <= 0 || to > ECG_BFLOAT16) return ecg_node_errf(e, g, n, "missing or invalid attribute 'to' (%lld)", (long long)to);
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  return ecg_set_output(g, n, 0, (int)to, r, d, x);
}

/** Binary arithmetic Add/Sub/Mul/Div/Pow/Mod/PRelu: numpy broadcast, input 0's dtype
 *  (Pow's exponent may differ in dtype). */
int ecg_infer_binary(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 2) return ecg_node_errf(e, g, n, "expected 2 inputs, got %zu", n->n_inputs);
  const ecg_op_info *op = ecg_node_op(n);
  if (op && op->id != ECG_OP_Pow) ECG_TRY(same_dtype(g, n, 0, 2, e));
  return infer_bcast(g, n, 0, 2, -1, e);
}

/** Comparison and logic Equal/Less/LessOrEqual/Greater/GreaterOrEqual/And/Or/Xor:
 *  numpy broadcast, bool output. */
int ecg_infer_compare(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 2) return ecg_node_errf(e, g, n, "expected 2 inputs, got %zu", n->n_inputs);
  ECG_TRY(same_dtype(g, n, 0, 2, e));
  return infer_bcast(g, n, 0, 2, ECG_BOOL, e);
}

/** Where(cond, X, Y): three-way broadcast, X's dtype. */
int ecg_infer_where(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 3) return ecg_node_errf(e, g, n, "expected 3 inputs, got %zu", n->n_inputs);
  ECG_TRY(same_dtype(g, n, 1, 2, e));
  int64_t d[ECG_MAX_RANK];
  int r;
  const ecg_tensor *like;
  ECG_TRY(bcast_inputs(g, n, 0, 3, d, &r, &like, e));
  return ecg_set_output(g, n, 0, ecg_node_input(g, n, 1)->dtype, r, d, like);
}

/** Variadic Max/Min/Sum/Mean: broadcast of all inputs, input 0's dtype. */
int ecg_infer_variadic(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs < 1) return ecg_node_errf(e, g, n, "expected at least 1 input");
  ECG_TRY(same_dtype(g, n, 0, (int)n->n_inputs, e));
  return infer_bcast(g, n, 0, (int)n->n_inputs, -1, e);
}

/** BatchNormalization(X, scale, B, mean, var): Y like X; the optional training outputs
 *  (running/saved mean and var) are [C]. Parameters must be [C]. */
int ecg_infer_batchnorm(ecg_graph *g, ecg_node *n, ecg_err *e) {
  if (n->n_inputs != 5) return ecg_node_errf(e, g, n, "expected 5 inputs, got %zu", n->n_inputs);
  if (ecg_attr_i(n, "spatial", 1) == 0) /* opset < 9: per-activation statistics */
    return ecg_node_errf(e, g, n, "spatial=0 (per-activation statistics) is not supported");
  ecg_tensor *x, *p;
  ECG_TRY(ops_input(g, n, 0, &x, e));
  int64_t d[ECG_MAX_RANK];
  int r = ecg_tensor_dims(x, d);
  if (r < 2) return ecg_node_errf(e, g, n, "input '%s' must have rank >= 2, has %d", x->name, r);
  for (int k = 1; k < 5; k++) {
    ECG_TRY(ops_input(g, n, k, &p, e));
    int64_t pd[ECG_MAX_RANK];
    int pr = ecg_tensor_dims(p, pd);
    if (pr != 1 || (pd[0] >= 0 && d[1] >= 0 && pd[0] != d[1]))
      return ecg_node_errf(e, g, n, "parameter '%s' must be [%lld]", p->name, (long long)d[1]);
  }
  ECG_TRY(ecg_set_output(g, n, 0, x->dtype, r, d, x));
  int from = 1;
  for (int k = 1; k < (int)n->n_outputs; k++)
    ECG_TRY(ops_set_out(g, n, k, ecg_node_input(g, n, 3)->dtype, 1, &d[1], x, &from, e));
  return ECG_OK;
}

/* ---------------------------------------------------------------- FLOPs */

/** FLOPs of one operation per output element (cheap elementwise ops). */
int64_t ecg_flops_elem(const ecg_graph *g, const ecg_node *n) { return ops_numel(ecg_node_output(g, n, 0)); }

/** FLOPs of four operations per output element (transcendental ops, softmax, norms). */
int64_t ecg_flops_elem4(const ecg_graph *g, const ecg_node *n) {
  int64_t m = ops_numel(ecg_node_output(g, n, 0));
  return m < 0 ? -1 : 4 * m;
}

/** Zero FLOPs: pure data movement or shape computation. */
int64_t ecg_flops_zero(const ecg_graph *g, const ecg_node *n) { return 0; }

/** One FLOP per input-0 element (reductions, global pooling). */
int64_t ecg_flops_in(const ecg_graph *g, const ecg_node *n) { return ops_numel(ecg_node_input(g, n, 0)); }

/** One FLOP per output-0 element (Resize/Upsample interpolation). */
int64_t ecg_flops_out(const ecg_graph *g, const ecg_node *n) { return ops_numel(ecg_node_output(g, n, 0)); }

/* ---------------------------------------------------------------- folding */

/* A scalar in both representations: f for float domains, i for integer/bool ones. */
typedef struct ew_val {
  double f;
  int64_t i;
} ew_val;

/* What a scalar kernel needs besides its operands. */
typedef struct ew_ctx {
  ecg_op_id op;
  bool isf;           /* computing in the float domain */
  bool exp_float;     /* Pow: the exponent is a float */
  int n_in;           /* operand count (variadic) */
  int out_dtype;
  double alpha, beta, gamma, lo, hi; /* activation attributes, Clip bounds */
  int64_t fmod;       /* Mod */
} ew_ctx;

/* Compute y from x[0..n_in); returns false when the value cannot be folded. */
typedef bool (*ew_fn)(const ew_ctx *c, const ew_val *x, ew_val *y);

/* The one broadcasting loop: y[p] = fn(x_first[p], ...) over output 0. */
static int eval_bcast(ecg_graph *g, ecg_node *n, int first, int count, ew_fn fn, const ew_ctx *c,
                      ecg_err *e) {
  ecg_tensor *out = ecg_node_output(g, n, 0);
  if (!out || count > 16) return ecg_node_errf(e, g, n, "nothing to fold");
  if (!ops_fold_dtype(out->dtype)) return ecg_node_errf(e, g, n, "dtype %s not handled", ecg_dtype_name(out->dtype));
  int64_t od[ECG_MAX_RANK], st[16][ECG_MAX_RANK], off[16] = {0}, idx[ECG_MAX_RANK] = {0};
  const ecg_tensor *in[16];
  int r = ecg_tensor_dims(out, od);
  for (int k = 0; k < count; k++) {
    in[k] = ecg_node_input(g, n, first + k);
    if (!in[k] || !in[k]->is_const || !ops_fold_dtype(in[k]->dtype))
      return ecg_node_errf(e, g, n, "input %d is not a foldable constant", first + k);
    int64_t d[ECG_MAX_RANK], s[ECG_MAX_RANK];
    int rk = ecg_tensor_dims(in[k], d);
    ops_strides(d, rk, s);
    for (int j = 0; j < r; j++) {
      int jk = j - (r - rk);
      st[k][j] = jk >= 0 && d[jk] != 1 ? s[jk] : 0;
    }
  }
  void *buf;
  ECG_TRY(ops_alloc(g, n, 0, &buf, e));
  bool fout = ecg_dtype_is_float(out->dtype);
  int64_t numel = ops_prod(od, r);
  for (int64_t p = 0; p < numel; p++) {
    ew_val x[16], y = {0, 0};
    for (int k = 0; k < count; k++) {
      x[k].f = ecg_const_f64(in[k], off[k]);
      x[k].i = ecg_const_i64(in[k], off[k]);
    }
    if (!fn(c, x, &y)) {
      ops_unfold(g, n, 0);
      return ecg_node_errf(e, g, n, "cannot fold element %lld (dtype %s)", (long long)p,
                           ecg_dtype_name(in[0]->dtype));
    }
    if (fout) ecg_store_f64(buf, out->dtype, p, y.f);
    else ecg_store_i64(buf, out->dtype, p, y.i);
    for (int j = r - 1; j >= 0; j--) {
      for (int k = 0; k < count; k++) off[k] += st[k][j];
      if (++idx[j] < od[j]) break;
      for (int k = 0; k < count; k++) off[k] -= st[k][j] * od[j];
      idx[j] = 0;
    }
  }
  return ECG_OK;
}

/* Integer arithmetic that wraps instead of overflowing (no undefined behaviour). */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Float to int64 conversion that never overflows (NaN -> 0, saturating). */
static int64_t f2i(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

static bool unary_int(const ew_ctx *c, int64_t v, int64_t *y) {
  switch (c->op) {
  case ECG_OP_Relu: *y = v > 0 ? v : 0; return true;
  case ECG_OP_Neg: *y = wrap_mul(v, -1); return true;
  case ECG_OP_Abs: *y = v < 0 ? wrap_mul(v, -1) : v; return true;
  case ECG_OP_Sign: *y = (v > 0) - (v < 0); return true;
  case ECG_OP_Not: *y = !v; return true;
  case ECG_OP_Floor: case ECG_OP_Ceil: case ECG_OP_Round: case ECG_OP_Identity: *y = v; return true;
  case ECG_OP_Clip: *y = v < c->lo ? f2i(c->lo) : v > c->hi ? f2i(c->hi) : v; return true;
  default: return false;
  }
}

static double unary_float(const ew_ctx *c, double v) {
  switch (c->op) {
  case ECG_OP_Relu: return v < 0 ? 0 : v;
  case ECG_OP_Sigmoid: return 1 / (1 + exp(-v));
  case ECG_OP_Tanh: return tanh(v);
  case ECG_OP_Exp: return exp(v);
  case ECG_OP_Log: return log(v);
  case ECG_OP_Sqrt: return sqrt(v);
  case ECG_OP_Neg: return -v;
  case ECG_OP_Abs: return fabs(v);
  case ECG_OP_Erf: return erf(v);
  case ECG_OP_Floor: return floor(v);
  case ECG_OP_Ceil: return ceil(v);
  case ECG_OP_Round: return nearbyint(v); /* half to even in the default rounding mode */
  case ECG_OP_Reciprocal: return 1 / v;
  case ECG_OP_Sin: return sin(v);
  case ECG_OP_Cos: return cos(v);
  case ECG_OP_Sign: return v != v ? v : (v > 0) - (v < 0);
  case ECG_OP_LeakyRelu: return v < 0 ? c->alpha * v : v;
  case ECG_OP_Elu: return v < 0 ? c->alpha * (exp(v) - 1) : v;
  case ECG_OP_Selu: return v <= 0 ? c->gamma * (c->alpha * exp(v) - c->alpha) : c->gamma * v;
  case ECG_OP_Softplus: return v > 30 ? v : log1p(exp(v));
  case ECG_OP_HardSigmoid: return fmax(0, fmin(1, c->alpha * v + c->beta));
  case ECG_OP_HardSwish: return v * fmax(0, fmin(1, v / 6 + 0.5));
  case ECG_OP_Clip: return v < c->lo ? c->lo : v > c->hi ? c->hi : v;
  default: return v; /* Identity */
  }
}

/* Unary kernel: Cast converts between domains, the rest compute in their own. */
static bool k_unary(const ew_ctx *c, const ew_val *x, ew_val *y) {
  if (c->op == ECG_OP_Cast) {
    if (c->out_dtype == ECG_BOOL) y->i = c->isf ? x->f != 0 : x->i != 0;
    else if (c->isf) { y->f = x->f; y->i = f2i(x->f); }
    else { y->i = x->i; y->f = (double)x->i; }
    return true;
  }
  if (!c->isf) return unary_int(c, x->i, &y->i);
  y->f = unary_float(c, x->f);
  return true;
}

static bool cmp(ecg_op_id op, int s) {
  switch (op) {
  case ECG_OP_Equal: return s == 0;
  case ECG_OP_Less: return s < 0;
  case ECG_OP_LessOrEqual: return s <= 0;
  case ECG_OP_Greater: return s > 0;
  default: return s >= 0; /* GreaterOrEqual */
  }
}

static bool binary_int(const ew_ctx *c, int64_t a, int64_t b, ew_val *y) {
  switch (c->op) {
  case ECG_OP_Add: y->i = wrap_add(a, b); return true;
  case ECG_OP_Sub: y->i = (int64_t)((uint64_t)a - (uint64_t)b); return true;
  case ECG_OP_Mul: y->i = wrap_mul(a, b); return true;
  case ECG_OP_PRelu: y->i = a < 0 ? wrap_mul(a, b) : a; return true;
  case ECG_OP_Div: /* truncates toward zero, as C */
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    y->i = a / b;
    return true;
  case ECG_OP_Mod:
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    y->i = a % b;
    if (!c->fmod && y->i != 0 && ((y->i < 0) != (b < 0))) y->i += b; /* sign of the divisor */
    return true;
  case ECG_OP_Pow: {
    if (b < 0) { y->i = f2i(pow((double)a, (double)b)); return true; }
    int64_t r = 1; /* exponentiation by squaring, wrapping like the integer type */
    for (; b > 0; b >>= 1, a = wrap_mul(a, a))
      if (b & 1) r = wrap_mul(r, a);
    y->i = r;
    return true;
  }
  default: return false;
  }
}

static double binary_float(const ew_ctx *c, double a, double b) {
  switch (c->op) {
  case ECG_OP_Add: return a + b;
  case ECG_OP_Sub: return a - b;
  case ECG_OP_Mul: return a * b;
  case ECG_OP_Div: return a / b;
  case ECG_OP_Pow: return pow(a, b);
  case ECG_OP_PRelu: return a < 0 ? a * b : a;
  default: { /* Mod: fmod=1 keeps the dividend's sign, fmod=0 the divisor's */
    double r = fmod(a, b);
    if (!c->fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
  }
}

/* Binary kernel: arithmetic in the domain of input 0, comparisons and logic to bool. */
static bool k_binary(const ew_ctx *c, const ew_val *x, ew_val *y) {
  const ew_val *a = &x[0], *b = &x[1];
  switch (c->op) {
  case ECG_OP_And: y->i = (a->i != 0) && (b->i != 0); return true;
  case ECG_OP_Or: y->i = (a->i != 0) || (b->i != 0); return true;
  case ECG_OP_Xor: y->i = (a->i != 0) != (b->i != 0); return true;
  case ECG_OP_Equal: case ECG_OP_Less: case ECG_OP_LessOrEqual: case ECG_OP_Greater:
  case ECG_OP_GreaterOrEqual:
    if (c->isf) y->i = cmp(c->op, (a->f > b->f) - (a->f < b->f)) && a->f == a->f && b->f == b->f;
    else y->i = cmp(c->op, (a->i > b->i) - (a->i < b->i));
    return true;
  default: break;
  }
  if (c->isf) { y->f = binary_float(c, a->f, b->f); return true; }
  if (c->op == ECG_OP_Pow && c->exp_float) { y->i = f2i(pow(a->f, b->f)); return true; }
  return binary_int(c, a->i, b->i, y);
}

/* Where kernel: x[0] ? x[1] : x[2]. */
static bool k_where(const ew_ctx *c, const ew_val *x, ew_val *y) {
  *y = x[0].i ? x[1] : x[2];
  return true;
}

/* Variadic kernel: fold Max/Min/Sum/Mean over x[0..n_in). */
static bool k_variadic(const ew_ctx *c, const ew_val *x, ew_val *y) {
  *y = x[0];
  for (int k = 1; k < c->n_in; k++) {
    const ew_val *v = &x[k];
    switch (c->op) {
    case ECG_OP_Max: if (c->isf ? v->f > y->f || v->f != v->f : v->i > y->i) *y = *v; break;
    case ECG_OP_Min: if (c->isf ? v->f < y->f || v->f != v->f : v->i < y->i) *y = *v; break;
    default: y->f += v->f; y->i = wrap_add(y->i, v->i); break; /* Sum, Mean */
    }
  }
  if (c->op == ECG_OP_Mean) { y->f /= c->n_in; y->i /= c->n_in; }
  return true;
}

/* Common context of node n: op id, domain of input dom_in, output dtype. */
static ew_ctx ctx_of(ecg_graph *g, ecg_node *n, int dom_in) {
  ew_ctx c = {0};
  const ecg_op_info *op = ecg_node_op(n);
  const ecg_tensor *x = ecg_node_input(g, n, dom_in), *y = ecg_node_output(g, n, 0);
  c.op = op ? op->id : ECG_OP_NONE;
  c.isf = x && ecg_dtype_is_float(x->dtype);
  c.out_dtype = y ? y->dtype : 0;
  c.n_in = (int)n->n_inputs;
  return c;
}

/** Fold unary ops and Cast/Identity; reads activation attributes and Clip's bounds
 *  (attributes min/max before opset 11, optional inputs 1 and 2 from 11). */
int ecg_eval_unary(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ew_ctx c = ctx_of(g, n, 0);
  bool selu = c.op == ECG_OP_Selu, hs = c.op == ECG_OP_HardSigmoid;
  c.alpha = ecg_attr_f(n, "alpha", selu ? 1.67326319217681884765625f : hs ? 0.2f : c.op == ECG_OP_Elu ? 1.0f : 0.01f);
  c.beta = ecg_attr_f(n, "beta", 0.5f);
  c.gamma = ecg_attr_f(n, "gamma", 1.05070102214813232421875f);
  c.lo = ecg_attr_f(n, "min", -INFINITY);
  c.hi = ecg_attr_f(n, "max", INFINITY);
  const ecg_tensor *lo = ecg_node_input(g, n, 1), *hi = ecg_node_input(g, n, 2);
  if (c.op == ECG_OP_Clip && lo && ecg_tensor_numel(lo) == 1) c.lo = ecg_const_f64(lo, 0);
  if (c.op == ECG_OP_Clip && hi && ecg_tensor_numel(hi) == 1) c.hi = ecg_const_f64(hi, 0);
  return eval_bcast(g, n, 0, 1, k_unary, &c, e);
}

/** Fold binary arithmetic, comparison and logic ops (Mod honours 'fmod'; integer Div
 *  truncates toward zero; division by zero is not folded). */
int ecg_eval_binary(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ew_ctx c = ctx_of(g, n, 0);
  const ecg_tensor *b = ecg_node_input(g, n, 1);
  c.exp_float = b && ecg_dtype_is_float(b->dtype);
  c.fmod = ecg_attr_i(n, "fmod", 0);
  return eval_bcast(g, n, 0, 2, k_binary, &c, e);
}

/** Fold Where(cond, X, Y). */
int ecg_eval_where(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ew_ctx c = ctx_of(g, n, 1);
  return eval_bcast(g, n, 0, 3, k_where, &c, e);
}

/** Fold variadic Max/Min/Sum/Mean (NaN propagates through Max/Min). */
int ecg_eval_variadic(ecg_graph *g, ecg_node *n, ecg_err *e) {
  ew_ctx c = ctx_of(g, n, 0);
  return eval_bcast(g, n, 0, c.n_in, k_variadic, &c, e);
}
