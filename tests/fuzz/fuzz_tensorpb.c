/* libFuzzer harness: ecg-bench's TensorProto reader (tools/bench/tensorpb.c), the reader of
 * ONNX test data input_K.pb / output_K.pb (issue 10, item 1).
 *
 * Input: any bytes, decoded with bt_tensorpb_decode, as an OptionalProto with
 * bt_optionalpb_decode (an optional graph input's data) and as a SequenceProto with
 * bt_seqpb_decode (a sequence's, whose items are then parsed back); the tensors are freed again.  Must never
 * crash, leak or trip ASan/UBSan.  Build: make fuzz-build (build-fuzz/fuzz/fuzz_tensorpb). */
#include <stdlib.h>

#include "bench.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ecg_err e = {0};
  bt_tensor t;
  if (bt_tensorpb_decode(data, size, "fuzz.pb", &t, &e) == ECG_OK) bt_tensor_clear(&t);
  int present = -1;
  if (bt_optionalpb_decode(data, size, "fuzz.pb", &t, &present, &e) == 1) bt_tensor_clear(&t);
  if (bt_seqpb_decode(data, size, "fuzz.pb", &t, &e) == ECG_OK) {
    bt_tensor *items;
    int n;
    if (bt_seq_items(&t, &items, &n, &e) == ECG_OK) free(items);
    bt_tensor_clear(&t);
  }
  return 0;
}
