/* app.c: one program linking two models built by ecg.mk (examples/makefile/Makefile):
 * relu, y = Relu(x) with x float32 [3,4,5], and conv, y = Conv(x, W) with x [1,1,7,5],
 * W [1,1,3,3], strides 2, pads 1 -> y [1,1,4,3] (ONNX's test_relu and
 * test_conv_with_strides_padding).  Each output is checked against a direct computation
 * here; prints "relu ok conv ok" and exits 0, or names the first mismatch and exits 1. */
#include <math.h>
#include <stdio.h>

#include "relu/model.h"
#include "conv/model.h"

int main(void) {
  float rx[60], ry[60], cx[35], cw[9], cy[12];
  for (int i = 0; i < 60; i++) rx[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < 35; i++) cx[i] = (float)i;
  for (int i = 0; i < 9; i++) cw[i] = (float)(i % 3) - 1.0f;
  relu_ctx *r = relu_create("build/relu/weights.bin");
  conv_ctx *c = conv_create("build/conv/weights.bin");
  if (!r || !c) { perror("create"); return 1; }
  if (relu_bind(r, "x", rx) || relu_bind(r, "y", ry) || relu_run(r)) { fprintf(stderr, "relu: run failed\n"); return 1; }
  if (conv_bind(c, "x", cx) || conv_bind(c, "W", cw) || conv_bind(c, "y", cy) || conv_run(c)) { fprintf(stderr, "conv: run failed\n"); return 1; }
  for (int i = 0; i < 60; i++)
    if (ry[i] != (rx[i] > 0 ? rx[i] : 0)) { fprintf(stderr, "relu: y[%d] = %g\n", i, ry[i]); return 1; }
  for (int oh = 0; oh < 4; oh++)
    for (int ow = 0; ow < 3; ow++) {
      float s = 0;
      for (int kh = 0; kh < 3; kh++)
        for (int kw = 0; kw < 3; kw++) {
          int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
          if (ih >= 0 && ih < 7 && iw >= 0 && iw < 5) s += cx[ih * 5 + iw] * cw[kh * 3 + kw];
        }
      if (fabsf(cy[oh * 3 + ow] - s) > 1e-4f) { fprintf(stderr, "conv: y[%d,%d] = %g, expected %g\n", oh, ow, cy[oh * 3 + ow], s); return 1; }
    }
  relu_destroy(r);
  conv_destroy(c);
  printf("relu ok conv ok\n");
  return 0;
}
