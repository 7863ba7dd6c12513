#!/usr/bin/env bats
# End-to-end correctness of every model in scripts/models.tsv against ONNX Runtime
# (scripts/e2e.sh NAME: convert, lower, make seeded ORT reference data, ecg-bench at
# its default tolerance rtol 1e-3 / atol 1e-4), plus ONNX backend node tests through
# the pipeline.  Needs `make models` and `make setup` (onnxruntime-node).

load helpers

# The models this file has a test for; must equal the names in scripts/models.tsv.
MODELS="mobilenet_v2 mnasnet1_0 squeezenet1_1 shufflenet_v2_x1_0 efficientnet_b0 resnet18 bert_tiny mlsd_320x320_tiny blazeface_front_128 ppocr_mobile_v2_cls openwakeword_embedding"

setup() {
  require_tools
  # e2e.sh's working files go to a directory of their own (not the interactive out/,
  # which other runs may be rewriting); kept under build/ so ORT reference data is reused.
  export ECG_OUT="$ROOT/build/bats-out"
}

# e2e NAME: run scripts/e2e.sh NAME --runs 3; assert exit 0 and "pass": true.
e2e() {
  local name=$1 path
  path=$(grep -v '^#' "$ROOT/scripts/models.tsv" | awk -F'\t' -v n="$name" '$1 == n {print $2}')
  [ -n "$path" ] || { echo "$name is not in scripts/models.tsv"; return 1; }
  require_file "$ROOT/$path"
  [ -f "$ECG_OUT/$name.data/test_data_set_0/output_0.pb" ] ||
    require_file "$ROOT/tools/bench/node_modules/onnxruntime-node" # make setup
  run --separate-stderr sh "$ROOT/scripts/e2e.sh" "$name" --runs 3
  echo "exit $status"
  echo "stdout: $output"
  echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  local json=${lines[-1]}
  [ "$(jq -r '.pass' <<<"$json")" = "true" ]
  [ "$(jq -r '.mismatches' <<<"$json")" = "0" ]
  [ "$(jq -r '.runs' <<<"$json")" = "3" ]
}

@test "scripts/models.tsv lists exactly the models tested here" {
  diff <(grep -v '^#' "$ROOT/scripts/models.tsv" | cut -f1 | grep . | sort) <(printf '%s\n' $MODELS | sort)
}

@test "e2e mobilenet_v2" { e2e mobilenet_v2; }
@test "e2e mnasnet1_0" { e2e mnasnet1_0; }
@test "e2e squeezenet1_1" { e2e squeezenet1_1; }
@test "e2e shufflenet_v2_x1_0" { e2e shufflenet_v2_x1_0; }
@test "e2e efficientnet_b0" { e2e efficientnet_b0; }
@test "e2e resnet18" { e2e resnet18; }
@test "e2e bert_tiny" { e2e bert_tiny; }
# M-LSD on uniform-noise inputs is ill-conditioned in float32: ONNX Runtime with graph
# optimisations disabled disagrees with its own optimised output (the reference data) on
# about 400 of 102400 'offsets' elements at rtol 1e-3, layer by layer from the third
# conv on. It does NOT meet the issue's rtol 1e-3 here (see the issue note); what this
# test holds us to is: no further from the reference than the reference from itself.
@test "e2e mlsd_320x320_tiny: within ONNX Runtime's own float32 disagreement" {
  run --separate-stderr sh "$ROOT/scripts/e2e.sh" mlsd_320x320_tiny --runs 1 --ort-noise
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  local json=${lines[-1]}
  local ours noise ours_abs noise_abs
  ours=$(jq -r '.mismatches' <<<"$json"); noise=$(jq -r '.ort_noise_mismatches' <<<"$json")
  ours_abs=$(jq -r '.max_abs_err' <<<"$json"); noise_abs=$(jq -r '.ort_noise_max_abs_err' <<<"$json")
  [ "$noise" != "null" ]
  [ "$ours" -le "$noise" ]
  jq -e --argjson a "$ours_abs" --argjson b "$noise_abs" -n '$a <= $b'
}
@test "e2e blazeface_front_128" { e2e blazeface_front_128; }
@test "e2e ppocr_mobile_v2_cls" { e2e ppocr_mobile_v2_cls; }
@test "e2e openwakeword_embedding" { e2e openwakeword_embedding; }

# node_test NAME [ecg-bench options]: an ONNX backend node test through the pipeline.
node_test() {
  local name=$1 dir="$NODE_DATA/$1"
  shift
  require_file "$dir/model.onnx" "$dir/test_data_set_0"
  local T="$BATS_TEST_TMPDIR"
  "$BIN/onnx2ecg" "$dir/model.onnx" | "$BIN/ecg-lower" -o "$T/d"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$dir/test_data_set_0" --runs 3 "$@"
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
}

@test "onnx backend node test: test_relu (atol 1e-7)" {
  node_test test_relu --atol 1e-7 --rtol 0
}

@test "onnx backend node test: test_conv_with_strides_padding (atol 1e-5)" {
  node_test test_conv_with_strides_padding --atol 1e-5
}

@test "ecg-bench detects a wrong expected output (exit 1, pass false)" {
  local dir="$NODE_DATA/test_relu" T="$BATS_TEST_TMPDIR"
  require_file "$dir/model.onnx" "$NODE_DATA/test_sigmoid/test_data_set_0"
  # the relu model checked against sigmoid's expected outputs (same shapes) must fail
  "$BIN/onnx2ecg" "$dir/model.onnx" | "$BIN/ecg-lower" -o "$T/d"
  mkdir "$T/data"
  cp "$NODE_DATA/test_sigmoid/test_data_set_0/input_0.pb" "$T/data/"
  cp "$NODE_DATA/test_sigmoid/test_data_set_0/output_0.pb" "$T/data/"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$T/data" --runs 1
  echo "exit $status; $output; $stderr"
  [ "$status" -eq 1 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "false" ]
}
