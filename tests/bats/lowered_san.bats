#!/usr/bin/env bats
# The generated C itself (issue 10, item 3), on one real model (BlazeFace): the lowered
# directory builds with -O3 -Wall -Wextra -Werror, and the model runs end to end against
# ONNX Runtime's outputs with the lowered code built under ASan/UBSan/LeakSanitizer
# (ecg-bench --cc; a sanitizer report fails the runner).  Every model: make test-lowered.

load helpers

setup() {
  require_tools
  require_file "$ROOT/models/face_detection_front_128x128_barracuda.onnx"
  export ECG_CHECK_OUT="$ROOT/build/lowered-checks"
}

@test "lowered C (BlazeFace) builds with -Wall -Wextra -Werror" {
  run sh "$ROOT/scripts/lowered_checks.sh" --warnings blazeface_front_128
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == "ok   blazeface_front_128: lowered C builds with -O3 -Wall -Wextra -Werror" ]]
}

@test "BlazeFace end to end with the lowered code under ASan/UBSan: passes, no sanitizer report" {
  [ -f "$ECG_CHECK_OUT/san/blazeface_front_128.data/test_data_set_0/output_0.pb" ] ||
    require_file "$ROOT/tools/bench/node_modules/onnxruntime-node"
  run sh "$ROOT/scripts/lowered_checks.sh" --san blazeface_front_128
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == "ok   blazeface_front_128: end to end under ASan/UBSan: "*'"pass":true'* ]]
  ! grep -E 'Sanitizer|runtime error' "$ECG_CHECK_OUT/blazeface_front_128.san.log"
}
