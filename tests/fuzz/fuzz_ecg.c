/* libFuzzer harness: the ECG stream reader and the validator (issue 10, item 1).
 *
 * Input: any bytes, read as an ECG stream (format/ECG.md: header, optionally zstd payload,
 * protobuf Graph) through ecg_read on an in-memory FILE, then ecg_validate; a graph that
 * validates is written again (ecg_write to /dev/null) and its shapes re-inferred.  Must
 * never crash, leak or trip ASan/UBSan.  Build: make fuzz-build (build-fuzz/fuzz/fuzz_ecg). */
#include <stdio.h>
#include <stdlib.h>

#include "ecg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "wb");
  if (size == 0) return 0; /* fmemopen refuses a zero-length buffer */
  FILE *f = fmemopen((void *)data, size, "rb");
  if (!f) return 0;
  ecg_err e = {0};
  ecg_graph *g = NULL;
  int rc = ecg_read(f, &g, &e);
  fclose(f);
  if (rc != ECG_OK) return 0;
  if (ecg_validate(g, &e) == ECG_OK) {
    if (devnull) ecg_write(devnull, g, 0, &e);
    ecg_infer_shapes(g, &e);
  }
  ecg_graph_free(g);
  return 0;
}
