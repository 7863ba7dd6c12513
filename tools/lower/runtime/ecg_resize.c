/* ecg runtime: Resize coordinate transformation and taps (ecg_resize.h). */
#include <math.h>

#include "ecg_resize.h"

/* The cubic convolution weights (Keys, coefficient A) of the 4 neighbours at
 * distances 1 + t, t, 1 - t, 2 - t from the source coordinate (t in (0, 1]). */
static void cubic_coeffs(double t, double A, double *c) {
  c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

double ecg_rt1_resize_coord(const ecg_resize_opts *o, int64_t x, int64_t in_len, int64_t out_len, double s, double r0,
                        double r1, int *outside) {
  double in = (double)in_len, out_f = s * in, xo;
  *outside = 0;
  switch (o->ctm) {
  case ECG_RZ_ALIGN_CORNERS: xo = out_f == 1 ? 0 : (double)x * (in - 1) / (out_f - 1); break;
  case ECG_RZ_ASYMMETRIC: xo = (double)x / s; break;
  case ECG_RZ_PYTORCH_HALF_PIXEL: xo = out_len > 1 ? ((double)x + 0.5) / s - 0.5 : 0; break;
  case ECG_RZ_TF_HALF_PIXEL_FOR_NN: xo = ((double)x + 0.5) / s; break;
  case ECG_RZ_HALF_PIXEL_SYMMETRIC: {
    double adj = (double)out_len / out_f, off = in / 2 * (1 - adj);
    xo = off + ((double)x + 0.5) / s - 0.5;
    break;
  }
  case ECG_RZ_TF_CROP_AND_RESIZE:
    xo = out_f == 1 ? (r1 - r0) * (in - 1) / 2 : (double)x * (r1 - r0) * (in - 1) / (out_f - 1);
    xo += r0 * (in - 1);
    *outside = !(xo >= 0 && xo <= in - 1);
    break;
  default: xo = ((double)x + 0.5) / s - 0.5; break; /* half_pixel */
  }
  return xo;
}

int ecg_rt1_resize_taps(const ecg_resize_opts *o, double xo, int64_t in_len, int64_t *idx, double *w) {
  if (!(xo == xo)) xo = 0;
  if (xo > 1e15) xo = 1e15;
  if (xo < -1e15) xo = -1e15;
  double f = floor(xo), ratio;
  if (xo == f) { f -= 1; ratio = 1; } /* an integral coordinate: ratio 1 between x-1 and x */
  else ratio = xo - f;
  int K = o->mode == 2 ? 4 : 2, pad = K / 2;
  int64_t start = (int64_t)f - (K / 2 - 1), lo = -pad, hi = in_len + pad - K;
  if (start < lo) start = lo;
  if (start > hi) start = hi;
  double c[ECG_RZ_MAX_TAPS];
  if (o->mode == 2) cubic_coeffs(ratio, o->cubic_a, c);
  else if (o->mode == 1) { c[0] = 1 - ratio; c[1] = ratio; }
  else {
    int up;
    if (ratio == 1) up = 1; /* integral: the coordinate itself */
    else if (o->nm == ECG_RZ_FLOOR) up = 0;
    else if (o->nm == ECG_RZ_CEIL) up = 1;
    else if (o->nm == ECG_RZ_ROUND_PREFER_CEIL) up = ratio >= 0.5;
    else up = ratio > 0.5; /* round_prefer_floor */
    c[0] = !up;
    c[1] = up;
  }
  if (o->exclude_outside && o->mode != 0) {
    double sum = 0;
    for (int k = 0; k < K; k++) {
      if (start + k < 0 || start + k >= in_len) c[k] = 0;
      sum += c[k];
    }
    if (sum != 0) for (int k = 0; k < K; k++) c[k] /= sum;
  }
  for (int k = 0; k < K; k++) {
    int64_t i = start + k;
    idx[k] = i < 0 ? 0 : i >= in_len ? in_len - 1 : i;
    w[k] = c[k];
  }
  return K;
}
