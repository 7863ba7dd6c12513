#!/usr/bin/env bats
# ONNX's backend tests through the pipeline, fast subset (every operator type at least
# once: tools/bench/conformance.sh --fast).  The full suite is `make conformance`.
# A CRASH, TIMEOUT or FAIL is a defect; UNSUPPORTED is allowed (with a reason).

load helpers

setup() {
  require_tools
  require_file "$NODE_DATA/test_relu/model.onnx"
}

@test "conformance --fast: no FAIL, CRASH or TIMEOUT; every non-pass has a reason" {
  json="$BATS_TEST_TMPDIR/conformance.json"
  run sh "$ROOT/tools/bench/conformance.sh" --fast --timeout 120 --json "$json" -q
  echo "$output" | grep -E '^(FAIL|CRASH|TIMEOUT)' || true
  [ "$status" -eq 0 ]
  [ "$(jq '[.tests[] | select(.status == "PASS")] | length' "$json")" -gt 50 ]
  [ "$(jq '[.tests[] | select(.status != "PASS" and (.reason | length) == 0)] | length' "$json")" -eq 0 ]
}

@test "conformance: one line per test and totals per suite; --only selects" {
  json="$BATS_TEST_TMPDIR/c.json"
  run sh "$ROOT/tools/bench/conformance.sh" --suite node --only '^test_(relu|bernoulli)$' --json "$json" -q
  [ "$status" -eq 0 ]
  [[ "$output" == *"PASS        node/test_relu"* ]]
  [[ "$output" == *"UNSUPPORTED node/test_bernoulli"*"Bernoulli"* ]]
  [[ "$output" == *"node: 1/2 pass, 0 fail, 1 unsupported, 0 crash, 0 timeout"* ]]
  [ "$(jq -r '.suites.node.total' "$json")" -eq 2 ]
  [ "$(jq -r '.tests[] | select(.test == "test_relu") | .status' "$json")" = PASS ]
}

@test "onnx2ecg --list-ops prints schema versions; --model-ops marks unsupported operators" {
  run "$BIN/onnx2ecg" --list-ops
  [ "$status" -eq 0 ]
  [[ "$output" == *"Relu 1,6,13,14"* ]]
  run "$BIN/onnx2ecg" --model-ops "$NODE_DATA/test_bernoulli/model.onnx"
  [ "$status" -eq 0 ]
  [[ "$output" == "Bernoulli ai.onnx 15 unsupported"* ]]
  run "$BIN/onnx2ecg" --model-ops "$NODE_DATA/test_if/model.onnx"
  [ "$status" -eq 0 ]
  [[ "$output" == "If ai.onnx 11 supported"* ]]
}
