/* compare.c: elementwise comparison of an output with its expected value. */
#include <math.h>
#include <string.h>

#include "bench.h"

void bt_compare(const bt_tensor *ours, const bt_tensor *exp, double rtol, double atol, bt_cmp *r) {
  memset(r, 0, sizeof *r);
  int sdtype;
  size_t n;
  bt_scalar_view(exp->dtype, exp->nelem, &sdtype, &n);
  bool exact = bt_dtype_exact(sdtype);
  size_t esize = ecg_dtype_size(sdtype);
  for (size_t i = 0; i < n; i++) {
    double a = bt_get_f64(sdtype, ours->data, i), b = bt_get_f64(sdtype, exp->data, i);
    double d = fabs(a - b), score;
    bool bad;
    if (exact) {
      /* bytes, not doubles: int64 values above 2^53 must still compare exactly */
      bad = sdtype == ECG_BOOL ? (a != 0) != (b != 0)
                               : memcmp((const unsigned char *)ours->data + i * esize,
                                        (const unsigned char *)exp->data + i * esize, esize) != 0;
      score = bad ? INFINITY : 0;
    } else if (!isfinite(a) || !isfinite(b)) {
      bad = !(isnan(a) && isnan(b)) && a != b; /* NaN == NaN, inf == same inf */
      score = bad ? INFINITY : 0;
    } else {
      double tol = atol + rtol * fabs(b);
      bad = d > tol;
      score = tol > 0 ? d / tol : (d > 0 ? INFINITY : 0);
    }
    if (isfinite(a) && isfinite(b)) {
      if (d > r->max_abs) r->max_abs = d;
      if (b != 0 && d / fabs(b) > r->max_rel) r->max_rel = d / fabs(b);
    } else if (bad && !exact) {
      r->max_abs = r->max_rel = INFINITY; /* NaN or inf where another value was expected: unbounded */
    }
    if (score > r->worst) r->worst = score;
    if (bad && r->mismatches++ == 0) r->first_bad = i;
  }
}
