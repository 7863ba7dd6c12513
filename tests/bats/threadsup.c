/* threadsup DIR THREADS OUT: create DIR's lowered model (default prefix) with OpenMP at one
 * thread, set OpenMP's count to THREADS, run three times on a fixed input pattern, write the
 * first output to OUT and print OpenMP's thread count after each run (runtime.bats: a
 * static build's scratch is sized at create, so a run must not take more threads than
 * that, and must give the caller its count back). */
#include "model.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/weights.bin", argv[1]);
  omp_set_num_threads(1);
  ecg_model_ctx *c = ecg_model_create(path);
  if (!c) { fprintf(stderr, "create failed\n"); return 1; }
  const ecg_model_tensor_info *in = ecg_model_input_info(0), *out = ecg_model_output_info(0);
  float *x = malloc(in->bytes), *y = calloc(1, out->bytes);
  for (size_t i = 0; i < in->bytes / sizeof(float); i++) x[i] = (float)((i * 7919) % 255) / 255.f - 0.5f;
  if (ecg_model_bind(c, in->name, x) || ecg_model_bind(c, out->name, y)) return 1;
  omp_set_num_threads(atoi(argv[2]));
  for (int r = 0; r < 3; r++) {
    if (ecg_model_run(c)) { fprintf(stderr, "run failed\n"); return 1; }
    printf("%d\n", omp_get_max_threads());
  }
  FILE *f = fopen(argv[3], "wb");
  if (!f || fwrite(y, 1, out->bytes, f) != out->bytes || fclose(f)) return 1;
  ecg_model_destroy(c);
  free(x);
  free(y);
  return 0;
}
