/* dynshapes: one context of a dynamic-shape build (tools/lower/LOWERED.md "Dynamic shapes";
 * tests/bats/dynamic.bats) run at several input shapes in turn, A, B, A: the shape change
 * re-plans the arena and re-packs the weights inside one context, and the second run at A
 * must give the bytes of the first, and B again on more OpenMP threads the bytes of the first
 * B (the scratch re-sized). The model has one float32 input and one float32 output.
 *
 *   dynshapes DIR SHAPE_A SHAPE_B         (SHAPE e.g. 1x3x48x192)
 *
 * The input is filled with sin(0.37 k) and written to DIR/in_<SHAPE>.raw, the output to
 * DIR/out_<SHAPE>.raw (the runner's raw protocol, so the test compares with the runner run
 * once per shape). Also checked: a shape the model cannot take is refused by
 * set_input_shape or run with -3 and a message, and the context still runs afterwards.
 * Exit 0 ok, 1 on any failure (message on stderr). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#include "model.h"

/* "1x3x48x192" into dims; the rank, or -1. */
static int parse(const char *s, int64_t *dims) {
  int r = 0;
  while (*s && r < 8) {
    char *end;
    dims[r++] = strtoll(s, &end, 10);
    if (end == s) return -1;
    s = *end == 'x' ? end + 1 : end;
  }
  return r;
}

static int write_raw(const char *dir, const char *kind, const char *shape, const void *p, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_%s.raw", dir, kind, shape);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) { fprintf(stderr, "dynshapes: cannot write %s\n", path); return 1; }
  return 0;
}

/* Run ctx at shape (writing DIR/in_ and, when write, DIR/out_); out gets the output bytes
 * (malloc'd) and *bytes their count. 0 ok, 1 failure. */
static int run_at(ECG_MODEL(ctx) *ctx, const char *dir, const char *shape, int write, float **out, size_t *bytes) {
  int64_t d[8], od[8];
  int r = parse(shape, d), orank;
  if (r < 0) { fprintf(stderr, "dynshapes: bad shape %s\n", shape); return 1; }
  size_t n = 1;
  for (int i = 0; i < r; i++) n *= (size_t)d[i];
  float *x = malloc(n * sizeof *x);
  if (!x) return 1;
  for (size_t k = 0; k < n; k++) x[k] = (float)sin(0.37 * (double)k);
  const char *in = ECG_MODEL(input_info)(0)->name, *on = ECG_MODEL(output_info)(0)->name;
  if (ECG_MODEL(set_input_shape)(ctx, in, r, d) != 0 || ECG_MODEL(output_shape)(ctx, 0, &orank, od) != 0) {
    fprintf(stderr, "dynshapes: %s: %s\n", shape, ECG_MODEL(error)(ctx));
    free(x);
    return 1;
  }
  size_t m = 1;
  for (int i = 0; i < orank; i++) m *= (size_t)od[i];
  float *y = calloc(m ? m : 1, sizeof *y);
  if (!y) { free(x); return 1; }
  ECG_MODEL(bind)(ctx, in, x);
  ECG_MODEL(bind)(ctx, on, y);
  int rc = ECG_MODEL(run)(ctx);
  if (rc) fprintf(stderr, "dynshapes: run at %s: %d %s\n", shape, rc, ECG_MODEL(error)(ctx));
  if (!rc && write && (write_raw(dir, "in", shape, x, n * sizeof *x) || write_raw(dir, "out", shape, y, m * sizeof *y))) rc = 1;
  free(x);
  *out = y;
  *bytes = m * sizeof *y;
  return rc != 0;
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: dynshapes DIR SHAPE_A SHAPE_B\n"); return 1; }
  char wpath[4096];
  snprintf(wpath, sizeof wpath, "%s/weights.bin", argv[1]);
  ECG_MODEL(ctx) *ctx = ECG_MODEL(create)(wpath);
  if (!ctx) { fprintf(stderr, "dynshapes: cannot create the model from %s\n", wpath); return 1; }
  float *a1 = NULL, *b = NULL, *a2 = NULL;
  size_t na1 = 0, nb = 0, na2 = 0;
  int bad = run_at(ctx, argv[1], argv[2], 1, &a1, &na1) || run_at(ctx, argv[1], argv[3], 1, &b, &nb) ||
            run_at(ctx, argv[1], argv[2], 0, &a2, &na2);
  if (!bad && (na1 != na2 || memcmp(a1, a2, na1))) { fprintf(stderr, "dynshapes: the second run at %s differs from the first\n", argv[2]); bad = 1; }
#ifdef _OPENMP
  /* more threads than the scratch was sized for: run prepares again, same shape, same result */
  float *b2 = NULL;
  size_t nb2 = 0;
  omp_set_num_threads(omp_get_max_threads() + 2);
  if (!bad && (run_at(ctx, argv[1], argv[3], 0, &b2, &nb2) || nb2 != nb || memcmp(b, b2, nb))) {
    fprintf(stderr, "dynshapes: the run at %s on more threads differs\n", argv[3]);
    bad = 1;
  }
  free(b2);
#endif
  /* a rank the model cannot take: refused with a message, no run */
  int64_t wrong[1] = {5};
  if (!bad && (ECG_MODEL(set_input_shape)(ctx, ECG_MODEL(input_info)(0)->name, 1, wrong) != -3 || !ECG_MODEL(error)(ctx)[0])) {
    fprintf(stderr, "dynshapes: a rank-1 shape was not refused\n");
    bad = 1;
  }
  free(a1); free(b); free(a2);
  ECG_MODEL(destroy)(ctx);
  return bad;
}
