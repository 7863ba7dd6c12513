#!/usr/bin/env bats
# ecg-lower --memory-plan (issue 9 item 3; SOD², Niu dissertation §5.4.2): SOD²'s
# peak-first placement of intermediates (the default) and its baselines give correct
# models, never less than the lower bound; the algorithms themselves are checked against
# the exhaustive optimum in tests/unit/memplan_test.c.

load helpers

setup() {
  require_tools
  require_cmd jq
  T="$BATS_TEST_TMPDIR"
}

@test "memory plans: BlazeFace correct against ONNX Runtime under peak, bestfit and size; arena >= lower bound" {
  local m="$ROOT/models/face_detection_front_128x128_barracuda.onnx" a
  require_file "$m"
  "$BIN/onnx2ecg" "$m" | "$BIN/ecg-fuse" > "$T/g.ecg"
  for a in peak bestfit size; do
    "$BIN/ecg-lower" --memory-plan "$a" -o "$T/$a" "$T/g.ecg"
    jq -e --arg a "$a" '.memory_plan_algo == $a and .arena_bytes >= .arena_lower_bound and .arena_lower_bound > 0' "$T/$a/model.json"
    run --separate-stderr "$BIN/ecg-bench" "$T/$a" --ort --check --runs 1 --warmup 0
    echo "$a: $output"
    [ "$status" -eq 0 ]
  done
}

@test "memory plans: on mobilenet_v2 (fused) peak-first reaches the lower bound; best-fit does not" {
  local m="$SHARED_MODELS/mobilenet_v2.onnx"
  require_file "$m"
  "$BIN/onnx2ecg" "$m" --input-shape input=1x3x224x224 | "$BIN/ecg-fuse" > "$T/g.ecg"
  "$BIN/ecg-lower" -o "$T/peak" "$T/g.ecg"
  "$BIN/ecg-lower" --memory-plan bestfit -o "$T/bestfit" "$T/g.ecg"
  jq -e '.memory_plan_algo == "peak" and .arena_bytes == .arena_lower_bound' "$T/peak/model.json"
  jq -e '.arena_bytes > .arena_lower_bound' "$T/bestfit/model.json"
  # the report carries the same numbers
  "$BIN/ecg-lower" --report "$T/r.json" -o "$T/peak2" "$T/g.ecg"
  jq -e '.lower.memory_plan == "peak" and .lower.arena_bytes == .lower.arena_lower_bound' "$T/r.json"
}

@test "memory plans: an unknown --memory-plan is a usage error naming the choices, nothing written" {
  run --separate-stderr "$BIN/ecg-lower" --memory-plan nonsense -o "$T/out" /dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"unknown --memory-plan 'nonsense' (expected peak, bestfit or size)"* ]]
  [ ! -e "$T/out" ]
}
