#!/usr/bin/env bats
# Issue 9 (SOD², dynamic shapes): data sets at several sizes (make_data.mjs --size) run
# against one compiled model (ecg-bench --data D1 --data D2 ...), a set of another shape
# refused naming the input and both shapes; the dynamic-shape build (ecg-lower without
# --input-shape on a symbolic ECG: one build, run at sizes it never saw, shapes the model
# cannot take refused naming the input). RDP itself: tests/unit/rdp_test.c and
# pipeline.bats; memory plans: memplan.bats.

load helpers

setup() {
  require_tools
  require_cmd jq node
  T="$BATS_TEST_TMPDIR"
  CLS="$ROOT/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
}

@test "make_data --size: one data set per size; ecg-bench --data D1 --data D2: one JSON line each, a set of another shape fails naming input and shapes" {
  require_file "$CLS"
  node "$ROOT/tools/bench/make_data.mjs" --model "$CLS" --out "$T/sets" --size x=1x3x48x192 --size x=1x3x48x320
  node "$ROOT/tools/bench/make_data.mjs" --model "$CLS" --out "$T/seed7" --seed 7 --input-shape x=1x3x48x192
  [ -f "$T/sets/test_data_set_0/input_0.pb" ] && [ -f "$T/sets/test_data_set_1/output_0.pb" ] || false
  "$BIN/onnx2ecg" "$CLS" --input-shape x=1x3x48x192 | "$BIN/ecg-fuse" | "$BIN/ecg-lower" -o "$T/low"
  # two sets at the compiled size: both pass, one line each, exit 0
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --data "$T/sets/test_data_set_0" --data "$T/seed7" --runs 1 --warmup 0
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | wc -l)" -eq 2 ]
  [ "$(echo "$output" | jq -s '[.[] | .pass] == [true, true]')" = true ]
  [ "$(echo "$output" | jq -r -s '.[1].data')" = "$T/seed7" ]
  # a set at another width: its line fails with the input and both shapes, the others still run
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --data "$T/sets/test_data_set_1" --data "$T/sets/test_data_set_0" --runs 1 --warmup 0
  [ "$status" -eq 1 ]
  [ "$(echo "$output" | jq -s '[.[] | .pass] == [false, true]')" = true ]
  [[ "$stderr" == *"input 'x'"*"[1x3x48x320]"*"expects float32 [1x3x48x192]"* ]]
  [[ "$(echo "$output" | jq -r -s '.[0].error')" == *"[1x3x48x320]"* ]]
  # a wrong expected output is caught per set: the check can fail
  cp -r "$T/seed7" "$T/bad"; cp "$T/sets/test_data_set_0/output_0.pb" "$T/bad/output_0.pb"
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --data "$T/sets/test_data_set_0" --data "$T/bad" --runs 1 --warmup 0
  [ "$status" -eq 1 ]
  [ "$(echo "$output" | jq -s '[.[] | .pass] == [true, false]')" = true ]
}

@test "ecg-bench: --save and --profile take a single --data (usage error)" {
  run --separate-stderr "$BIN/ecg-bench" "$T/x" --data a --data b --save s
  [ "$status" -eq 2 ]; [[ "$stderr" == *"--save takes one --data"* ]]
}

@test "Optional: ONNX's optional node tests (an optional(tensor) input as element + flag) pass; an optional crossing into a Loop body is refused" {
  local d t
  for t in test_optional_get_element test_optional_has_element test_optional_has_element_empty; do
    d="$NODE_DATA/$t"
    require_file "$d/model.onnx"
    "$BIN/onnx2ecg" "$d/model.onnx" -o "$T/$t.ecg"
    # the optional input is two graph inputs, the operator an Identity of one of them
    [ "$("$BIN/ecg-dump" "$T/$t.ecg" | jq -c '[.inputs, [.nodes[].op]]')" = '[["optional_input","optional_input:present"],["Identity"]]' ]
    "$BIN/ecg-lower" -o "$T/$t" "$T/$t.ecg"
    run --separate-stderr "$BIN/ecg-bench" "$T/$t" --data "$d/test_data_set_0" --runs 1 --warmup 0
    [ "$status" -eq 0 ]; [ "$(jq .pass <<<"$output")" = true ]
  done
  # the flag is what the output reads: an empty optional gives false (the model of the full
  # one, fed the empty set: element zeros, flag 0), and a present one expected false fails
  run --separate-stderr "$BIN/ecg-bench" "$T/test_optional_has_element" --data "$NODE_DATA/test_optional_has_element_empty/test_data_set_0" --runs 1 --warmup 0
  [ "$status" -eq 0 ]; [ "$(jq .pass <<<"$output")" = true ]
  mkdir "$T/wrong"
  cp "$NODE_DATA/test_optional_has_element/test_data_set_0/input_0.pb" "$T/wrong/"
  cp "$NODE_DATA/test_optional_has_element_empty/test_data_set_0/output_0.pb" "$T/wrong/"
  run --separate-stderr "$BIN/ecg-bench" "$T/test_optional_has_element" --data "$T/wrong" --runs 1 --warmup 0
  [ "$status" -eq 1 ]; [ "$(jq .pass <<<"$output")" = false ]
  # (an optional of a sequence is a run-time sequence and its flag: tests/bats/sequences.bats)
}

@test "ecg-lower --input-shape: one ECG kept symbolic, static builds at three sizes, each right against ONNX Runtime's data" {
  require_file "$CLS"
  node "$ROOT/tools/bench/make_data.mjs" --model "$CLS" --out "$T/sets" --size x=1x3x48x192 --size x=1x3x48x320 --size x=2x3x48x256
  "$BIN/onnx2ecg" "$CLS" | "$BIN/ecg-fuse" -o "$T/sym.ecg"
  local k=0 s
  for s in 1x3x48x192 1x3x48x320 2x3x48x256; do
    "$BIN/ecg-lower" --input-shape "x=$s" -o "$T/l$k" "$T/sym.ecg"
    [ "$(jq -c '.inputs[0].shape | map(tostring) | join("x")' "$T/l$k/model.json")" = "\"$s\"" ]
    run --separate-stderr "$BIN/ecg-bench" "$T/l$k" --data "$T/sets/test_data_set_$k" --runs 1 --warmup 0
    [ "$status" -eq 0 ]; [ "$(jq .pass <<<"$output")" = true ]
    k=$((k + 1))
  done
  # bindings that do not fit the model: named errors, nothing written
  run --separate-stderr "$BIN/ecg-lower" --input-shape x=1x4x48x192 -o "$T/never" "$T/sym.ecg"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"input 'x' dim 1 is 3, 4 given"* ]]
  run --separate-stderr "$BIN/ecg-lower" --input-shape y=1x3x48x192 -o "$T/never" "$T/sym.ecg"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"'y' is not a graph input (inputs: 'x')"* ]]
  run --separate-stderr "$BIN/ecg-lower" --input-shape x=1x3x48 -o "$T/never" "$T/sym.ecg"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"rank 3 given"* ]]; [ ! -e "$T/never" ]
}

@test "dynamic-shape build: PP-OCR cls converted, fused, lowered and built once, right against ONNX Runtime at four sizes it never saw; bad shapes named" {
  require_file "$CLS"
  node "$ROOT/tools/bench/make_data.mjs" --model "$CLS" --out "$T/sets" --size x=1x3x48x96 --size x=1x3x48x320 --size x=2x3x48x192 --size x=1x3x64x480
  "$BIN/onnx2ecg" "$CLS" | "$BIN/ecg-fuse" | "$BIN/ecg-lower" -o "$T/dyn"
  grep -q '#define ECG_MODEL_DYNAMIC 1' "$T/dyn/model.h"
  [ "$(jq -c '.inputs[0].shape' "$T/dyn/model.json")" = "[-1,3,-1,-1]" ]
  run --separate-stderr "$BIN/ecg-bench" "$T/dyn" --data "$T/sets/test_data_set_0" --data "$T/sets/test_data_set_1" \
    --data "$T/sets/test_data_set_2" --data "$T/sets/test_data_set_3" --runs 1 --warmup 0
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -s '[.[] | select(.pass == true and .mismatches == 0)] | length')" -eq 4 ]
  # built once: a second run at another size rebuilds nothing
  local t0; t0=$(stat -c %y "$T/dyn/runner")
  run --separate-stderr "$BIN/ecg-bench" "$T/dyn" --data "$T/sets/test_data_set_2" --runs 1 --warmup 0
  [ "$status" -eq 0 ]; [ "$(jq .pass <<<"$output")" = true ]
  [ "$(stat -c %y "$T/dyn/runner")" = "$t0" ]
  # the check can fail: set 1's inputs with set 0's expected output (the same [1, 2] shape)
  mkdir "$T/bad"; cp "$T/sets/test_data_set_1/input_0.pb" "$T/bad/"; cp "$T/sets/test_data_set_0/output_0.pb" "$T/bad/"
  run --separate-stderr "$BIN/ecg-bench" "$T/dyn" --data "$T/bad" --runs 1 --warmup 0
  [ "$status" -eq 1 ]; [ "$(jq .pass <<<"$output")" = false ]
  # shapes the model cannot take: named, exit 1, never a crash
  head -c $((4 * 4 * 48 * 192)) /dev/zero > "$T/x4.bin"
  run --separate-stderr "$T/dyn/runner" --shape x=1x4x48x192 --in x="$T/x4.bin"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"input 'x': dim 1 is 4, the model's is 3"* ]]
  head -c $((4 * 3)) /dev/zero > "$T/x1.bin"
  run --separate-stderr "$T/dyn/runner" --shape x=1x3x1x1 --in x="$T/x1.bin"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"the input shapes are too small for the model: tensor '"*"' dim 2 would be 0"* ]]
  run --separate-stderr "$T/dyn/runner" --in x="$T/x1.bin"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"input 'x' has symbolic dims: give its shape with --shape x=DIMS"* ]]
  # without data sets there are no shapes to run at
  run --separate-stderr "$BIN/ecg-bench" "$T/dyn" --runs 1 --warmup 0
  [ "$status" -eq 2 ]; [[ "$stderr" == *"dynamic-shape build"*"--data"* ]]
}

@test "dynamic-shape build: one context run at 1x3x48x320, 2x3x48x96, then 1x3x48x320 again (re-planned, re-packed) gives the runner's bytes at each" {
  require_file "$CLS"
  "$BIN/onnx2ecg" "$CLS" | "$BIN/ecg-fuse" | "$BIN/ecg-lower" -o "$T/dyn"
  make -s -C "$T/dyn" > /dev/null
  cc -std=gnu11 -Wall -Wextra -Werror -O1 -fopenmp -I"$T/dyn" "$BATS_TEST_DIRNAME/dynshapes.c" "$T/dyn/libecg_model.a" -lm -o "$T/dynshapes"
  run --separate-stderr "$T/dynshapes" "$T/dyn" 1x3x48x320 2x3x48x96
  echo "$stderr"
  [ "$status" -eq 0 ]
  local s
  for s in 1x3x48x320 2x3x48x96; do
    "$T/dyn/runner" --shape "x=$s" --in "x=$T/dyn/in_$s.raw" --out "softmax_0.tmp_0=$T/r_$s.raw" > /dev/null
    cmp "$T/r_$s.raw" "$T/dyn/out_$s.raw"
  done
  # the comparison can fail: the two shapes' outputs differ
  ! cmp -s "$T/dyn/out_1x3x48x320.raw" <(head -c 8 "$T/dyn/out_2x3x48x96.raw") || false
}
