/* ecg runtime: Resize/Upsample coordinate transformation and interpolation taps.
 * One implementation serves both ecg-lower (which links it to precompute static tap
 * tables) and lowered models (whose kernels call it when scales or roi are known only
 * at run time). Semantics follow the ONNX Resize reference (opset 10-19). Pure
 * functions, no allocation. */
#ifndef ECG_RESIZE_H
#define ECG_RESIZE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most taps per output index along one axis (cubic). */
#define ECG_RZ_MAX_TAPS 4

/** coordinate_transformation_mode values. */
enum { ECG_RZ_HALF_PIXEL = 0, ECG_RZ_HALF_PIXEL_SYMMETRIC, ECG_RZ_PYTORCH_HALF_PIXEL, ECG_RZ_ALIGN_CORNERS,
       ECG_RZ_ASYMMETRIC, ECG_RZ_TF_HALF_PIXEL_FOR_NN, ECG_RZ_TF_CROP_AND_RESIZE };
/** nearest_mode values. */
enum { ECG_RZ_ROUND_PREFER_FLOOR = 0, ECG_RZ_ROUND_PREFER_CEIL, ECG_RZ_FLOOR, ECG_RZ_CEIL };

/** Options shared by every axis: mode 0 nearest, 1 linear, 2 cubic; ctm and nm from the
 *  enums above; cubic_a (Keys coefficient); exclude_outside. */
typedef struct ecg_resize_opts {
  int mode, ctm, nm;
  double cubic_a;
  int exclude_outside;
} ecg_resize_opts;

/** Source coordinate (in input elements) of output index x on an axis of in_len input
 *  and out_len output elements with scale s; r0/r1 are the roi start/end fractions for
 *  tf_crop_and_resize. *outside is set when tf_crop_and_resize falls outside the input
 *  (the element is then extrapolation_value). */
double ecg_rt1_resize_coord(const ecg_resize_opts *o, int64_t x, int64_t in_len, int64_t out_len, double s, double r0,
                        double r1, int *outside);

/** The taps of source coordinate xo: input indices idx[K] (edge-clamped into
 *  [0, in_len)) and weights w[K]; returns K (2 for nearest and linear, 4 for cubic;
 *  nearest puts weight 1 on one tap). */
int ecg_rt1_resize_taps(const ecg_resize_opts *o, double xo, int64_t in_len, int64_t *idx, double *w);

#ifdef __cplusplus
}
#endif
#endif
