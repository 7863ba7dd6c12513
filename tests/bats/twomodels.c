/* twomodels: two lowered models (prefixes conv_a and gemm_b, tests/bats/runtime.bats) in
 * one program, sharing one runtime. Both are created, then run interleaved: A, B, A again
 * (the second run of A must give the same bytes as the first: no state leaks between the
 * two models through the runtime).
 *
 *   twomodels DIR_A DIR_B
 *
 * Every input is filled with sin(0.37 k + i) (i the input's index) and written to
 * DIR/in_NAME.raw, every output to DIR/out_NAME.raw (raw little-endian float32: the
 * runner's protocol, so the test can run each model's own runner on the same inputs and
 * compare). Exit 0 ok, 1 on any failure (message on stderr). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a/model.h"
#include "b/model.h"

static int write_raw(const char *dir, const char *kind, const char *name, const void *p, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_%s.raw", dir, kind, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) { fprintf(stderr, "twomodels: cannot write %s\n", path); return 1; }
  return 0;
}

/* Create model P from DIR/weights.bin; fill and bind its inputs (written to DIR), bind
 * zeroed outputs into outs[]. Sets ctx; returns 1 on failure. */
#define SETUP(P, dir, ctx, outs)                                                                        \
  do {                                                                                                  \
    char w[4096];                                                                                       \
    snprintf(w, sizeof w, "%s/weights.bin", dir);                                                     \
    if (!(ctx = P##_create(w))) { fprintf(stderr, "twomodels: " #P "_create: %s\n", strerror(errno)); return 1; } \
    for (int i = 0; i < P##_num_inputs(); i++) {                                                        \
      const P##_tensor_info *t = P##_input_info(i);                                                     \
      if (t->dtype != 1) { fprintf(stderr, "twomodels: input %s is not float32\n", t->name); return 1; } \
      float *x = malloc(t->bytes + 4);                                                                  \
      for (size_t k = 0; k < t->bytes / 4; k++) x[k] = sinf(0.37f * (float)k + (float)i);               \
      if (write_raw(dir, "in", t->name, x, t->bytes) || P##_bind(ctx, t->name, x)) return 1;            \
    }                                                                                                   \
    for (int i = 0; i < P##_num_outputs() && i < 8; i++) {                                              \
      const P##_tensor_info *t = P##_output_info(i);                                                    \
      outs[i] = calloc(1, t->bytes + 4);                                                                \
      if (P##_bind(ctx, t->name, outs[i])) return 1;                                                    \
    }                                                                                                   \
  } while (0)

#define SAVE(P, dir, outs)                                                                              \
  for (int i = 0; i < P##_num_outputs() && i < 8; i++)                                                  \
    if (write_raw(dir, "out", P##_output_info(i)->name, outs[i], P##_output_info(i)->bytes)) return 1;

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: twomodels DIR_A DIR_B\n"); return 2; }
  conv_a_ctx *a;
  gemm_b_ctx *b;
  void *oa[8] = {0}, *ob[8] = {0};
  SETUP(conv_a, argv[1], a, oa);
  SETUP(gemm_b, argv[2], b, ob);
  if (conv_a_run(a) || gemm_b_run(b)) { fprintf(stderr, "twomodels: run failed\n"); return 1; }
  const conv_a_tensor_info *y = conv_a_output_info(0);
  void *first = malloc(y->bytes + 4);
  memcpy(first, oa[0], y->bytes);
  memset(oa[0], 0, y->bytes);
  if (conv_a_run(a)) { fprintf(stderr, "twomodels: run failed\n"); return 1; }
  if (memcmp(first, oa[0], y->bytes)) { fprintf(stderr, "twomodels: conv_a's second run differs from its first\n"); return 1; }
  SAVE(conv_a, argv[1], oa);
  SAVE(gemm_b, argv[2], ob);
  conv_a_destroy(a);
  gemm_b_destroy(b);
  printf("ok\n");
  return 0;
}
