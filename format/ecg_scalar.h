/* Scalar helpers of the One-to-One expressions (format/ops/scalar.def).
 *
 * One source of truth for what each elementwise operator computes (DNNFusion §3.3.1,
 * One-to-One mapping type): the expressions in scalar.def call only C operators, <math.h>
 * (type-generic through <tgmath.h> in generated code) and the helpers below.  This header
 * is compiled twice: into libecg, where constant folding evaluates the expressions with
 * T = double (floats) or int64_t (integers and bool), and, copied verbatim into every
 * lowered directory, into the generated kernels, where T is the tensor's compute type
 * (float for float32/float16/bfloat16).  Every helper is a pure function, defined for
 * every input (no traps: integer division by 0 gives 0), with NaN propagated as ONNX's
 * reference implementation does.
 */
#ifndef ECG_SCALAR_H
#define ECG_SCALAR_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/** NaN-propagating max/min (ONNX Max/Min: a NaN operand gives NaN). Any arithmetic type. */
#define ecg_max(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define ecg_min(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))

/** x narrowed to bfloat16 by truncation, as a value: the float32 nearest x (round to nearest
 *  even) with its low 16 bits cleared, which ONNX's reference Cast to bfloat16 computes
 *  (float32_to_bfloat16(x, truncate=True)); NaN stays NaN (truncating a NaN whose payload
 *  lies in the low bits would give infinity). Exactly representable in bfloat16, so a store
 *  that rounds (ecg_f2bf) keeps it. */
static inline double ecg_bf16_trunc(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return x;
  u &= 0xffff0000u;
  memcpy(&f, &u, 4);
  return f;
}

/** ONNX Mod with fmod=0 on integers: the remainder takes the divisor's sign; b == 0 gives 0. */
static inline int64_t ecg_imod(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t r = b == -1 ? 0 : a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
/** ONNX Mod with fmod=1 on integers (C's %, the dividend's sign); b == 0 gives 0. */
static inline int64_t ecg_tmod(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }
/** ONNX Mod with fmod=0 on floats: fmod with the divisor's sign. */
static inline double ecg_fmod_floor(double a, double b) {
  double r = fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
/** Integer Div truncating toward zero; b == 0 gives 0; INT64_MIN / -1 wraps. */
static inline int64_t ecg_idiv(int64_t a, int64_t b) {
  return b == 0 ? 0 : b == -1 ? (int64_t)(0ULL - (uint64_t)a) : a / b;
}
/** Integer Pow by squaring, wrapping like the integer type; a negative exponent goes
 *  through double pow (truncated toward zero, saturating). */
static inline int64_t ecg_ipow(int64_t a, int64_t b) {
  if (b < 0) {
    double v = pow((double)a, (double)b);
    return v != v ? 0 : v >= 9.2233720368547758e18 ? INT64_MAX : v <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)v;
  }
  uint64_t r = 1, x = (uint64_t)a;
  for (; b > 0; b >>= 1, x *= x)
    if (b & 1) r *= x;
  return (int64_t)r;
}

/* float32 exp and erf written with arithmetic and bit moves only, so loops over them
 * vectorise (libm's expf/erff calls do not without -ffast-math). Cephes expf (about
 * 1 ulp); erf: Taylor series below 0.5, Abramowitz-Stegun 7.1.26 above (abs err 1.5e-7).
 * For double arguments ecg_exp/ecg_erf are libm's exp/erf. */
static inline float ecg_expf(float x) {
  float xc = x > 88.3762626647949f ? 88.3762626647949f : (x < -87.3365447504f ? -87.3365447504f : x);
  float fx = floorf(xc * 1.44269504088896341f + 0.5f);
  float r = xc - fx * 0.693359375f + fx * 2.12194440e-4f, r2 = r * r;
  float y = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r
             + 1.6666665459e-1f) * r + 5.0000001201e-1f) * r2 + r + 1.0f;
  int32_t e = (int32_t)fx + 127;
  uint32_t bits = (uint32_t)e << 23;
  float p;
  memcpy(&p, &bits, 4);
  float res = y * p;
  return x != x ? x : (x > 88.3762626647949f ? INFINITY : (x < -87.3365447504f ? 0.0f : res));
}
static inline float ecg_erff(float x) {
  float a = fabsf(x), x2 = x * x;
  float small = x * (1.1283791671f + x2 * (-0.3761263890f + x2 * (0.1128379167f + x2 * (-0.0268661707f
                + x2 * (0.0052239776f + x2 * -0.0008548327f)))));
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float y = 1.0f - ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t * ecg_expf(-a * a);
  return a < 0.5f ? small : (x < 0 ? -y : y);
}
static inline double ecg_exp_d(double x) { return exp(x); }
static inline double ecg_erf_d(double x) { return erf(x); }
/** exp / erf: the vectorisable float32 versions above for float, libm's for double. */
#define ecg_exp(x) _Generic((x), float: ecg_expf, default: ecg_exp_d)(x)
#define ecg_erf(x) _Generic((x), float: ecg_erff, default: ecg_erf_d)(x)

#endif
