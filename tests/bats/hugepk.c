/* hugepk DIR: create DIR's lowered model (default prefix), run it once on a fixed input
 * pattern, and print the kB of this process's anonymous memory in transparent huge pages
 * (/proc/self/smaps_rollup's AnonHugePages; -1 where the file is missing): runtime.bats
 * checks that a static build's packed weights, one region, are in huge pages where Linux
 * offers them (madvise). */
#include "model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/weights.bin", argv[1]);
  ecg_model_ctx *c = ecg_model_create(path);
  if (!c) { fprintf(stderr, "create failed\n"); return 1; }
  const ecg_model_tensor_info *in = ecg_model_input_info(0), *out = ecg_model_output_info(0);
  float *x = malloc(in->bytes), *y = calloc(1, out->bytes);
  for (size_t i = 0; i < in->bytes / sizeof(float); i++) x[i] = (float)((i * 7919) % 255) / 255.f - 0.5f;
  if (ecg_model_bind(c, in->name, x) || ecg_model_bind(c, out->name, y) || ecg_model_run(c)) { fprintf(stderr, "run failed\n"); return 1; }
  long kb = -1;
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "AnonHugePages:", 14)) kb = atol(line + 14);
  if (f) fclose(f);
  printf("%ld\n", kb);
  ecg_model_destroy(c);
  free(x);
  free(y);
  return 0;
}
