/* libFuzzer harness: ONNX bytes -> ECG, the whole import of onnx2ecg (issue 10, item 1).
 *
 * Input: any bytes, read as an ONNX ModelProto.  Runs what onnx2ecg's main() runs after
 * reading the file: onnx2ecg_parse, onnx2ecg_convert (no --input-shape), the unsupported-
 * operator scan, ecg_compact, ecg_resolve_optionals, ecg_fold_constants (constant folding
 * and shape inference), ecg_validate, RDP (ecg_rdp_run) and ecg_write (to /dev/null).  Every error path must return a value, never
 * crash, leak or trip ASan/UBSan.  Build: make fuzz-build (build-fuzz/fuzz/fuzz_onnx). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

static void no_line(void *ctx, const char *line) { (void)ctx; (void)line; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "wb");
  ecg_err e = {0};
  Onnx__ModelProto *m = NULL;
  if (onnx2ecg_parse(data, size, "fuzz.onnx", &m, &e) != ECG_OK) return 0;
  onnx2ecg_opts opts = {.shapes = NULL, .n_shapes = 0, .source = "fuzz.onnx"};
  ecg_graph *g = NULL;
  int rc = onnx2ecg_convert(m, &opts, &g, NULL, &e);
  onnx__model_proto__free_unpacked(m, NULL);
  if (rc != ECG_OK) return 0;
  if (onnx2ecg_unsupported(g, no_line, NULL) == 0) {
    bool *keep = malloc(g->n_nodes + 1);
    if (keep) {
      memset(keep, 1, g->n_nodes + 1);
      rc = ecg_compact(g, keep, NULL);
      free(keep);
      int folded = 0;
      if (rc == ECG_OK) rc = ecg_resolve_optionals(g, NULL, &e);
      if (rc == ECG_OK) rc = ecg_fold_constants(g, &folded, &e);
      if (rc == ECG_OK) rc = ecg_validate(g, &e);
      if (rc == ECG_OK) rc = ecg_rdp_run(g, NULL, &e); /* symbolic dims: no --input-shape here */
      if (rc == ECG_OK && devnull) ecg_write(devnull, g, 0, &e);
    }
  }
  ecg_graph_free(g);
  return 0;
}
