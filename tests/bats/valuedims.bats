#!/usr/bin/env bats
# Sizes that depend on input values (issue 9, SOD²'s ISVDOS class): a Range whose limit is
# computed at run time gets a value-determined symbol in RDP, bound to the number a declared
# dim downstream gives it; the lowering checks the length at run time; an unbound one is
# refused naming the tensor. Hand-made models: tests/bats/mkvaluedims.mjs.

load helpers

setup_file() {
  command -v node >/dev/null || return 0
  node "$ROOT/tests/bats/mkvaluedims.mjs" "$BATS_FILE_TMPDIR/m"
}

setup() {
  require_tools
  require_cmd node jq
  M="$BATS_FILE_TMPDIR/m"
  T="$BATS_TEST_TMPDIR"
}

@test "RDP: a Range's run-time length meets the declared output dim: the Range and what follows are 4" {
  "$BIN/onnx2ecg" "$M/range_decl.onnx" -o "$T/g.ecg"
  [ "$("$BIN/ecg-dump" "$T/g.ecg" | jq -c '[.tensors[] | select(.name == "r" or .name == "r2") | .shape[0]]')" = '["4","4"]' ]
  # without the declaration the length stays a value-determined symbol of its own
  [ "$("$BIN/onnx2ecg" "$M/range_open.onnx" | "$BIN/ecg-dump" | jq -c '[.tensors[] | select(.name == "r") | .shape[0], .rdp[0]]')" = '["r.0","symbol"]' ]
}

@test "Range of a value-determined length: right when the values give it, P_run -2 when they give another" {
  "$BIN/onnx2ecg" "$M/range_decl.onnx" | "$BIN/ecg-lower" -o "$T/d"
  run "$BIN/ecg-bench" "$T/d" --data "$M/range_decl/data_4" --runs 1 --warmup 0
  [ "$status" -eq 0 ]
  [ "$(jq -r .pass <<<"$output")" = true ]
  run "$BIN/ecg-bench" "$T/d" --data "$M/range_decl/data_6" --runs 1 --warmup 0
  [ "$status" -eq 1 ]
  [[ "$output" == *"run failed (-2: a run-time check failed"*"a Range's or Slice's run-time operands gave another shape"* ]]
}

@test "Range of a length nothing fixes: ecg-lower exits 1 naming the node, the tensor and why, writes nothing" {
  run "$BIN/ecg-lower" -o "$T/d" < <("$BIN/onnx2ecg" "$M/range_open.onnx")
  [ "$status" -eq 1 ]
  [[ "$output" == *"node 'Range_r' (Range): tensor 'r'"*"depends on input values (ISVDOS)"* ]]
  [ ! -e "$T/d" ]
}

@test "conformance: the window functions' _expanded tests (a Range of Cast(size)) pass" {
  require_file "$NODE_DATA/test_hannwindow_expanded/model.onnx"
  run sh "$ROOT/tools/bench/conformance.sh" --bin "$BIN" --jobs 1 --only '^test_(hann|hamming|blackman)window(_symmetric)?_expanded$' --json "$T/c.json" -q
  [ "$status" -eq 0 ]
  [ "$(jq '.suites.node.pass' "$T/c.json")" = 6 ]
}

@test "Slice of run-time starts/ends into a declared shape: right when the operands give it, P_run -2 when they give another" {
  "$BIN/onnx2ecg" "$M/slice_decl.onnx" | "$BIN/ecg-lower" -o "$T/d"
  run "$BIN/ecg-bench" "$T/d" --data "$M/slice_decl/data_13" --runs 1 --warmup 0
  [ "$status" -eq 0 ]
  [ "$(jq -r .pass <<<"$output")" = true ]
  run "$BIN/ecg-bench" "$T/d" --data "$M/slice_decl/data_14" --runs 1 --warmup 0
  [ "$status" -eq 1 ]
  [[ "$output" == *"run failed (-2: a run-time check failed"*"Slice's run-time operands gave another shape"* ]]
}

@test "Loop body: a Slice of run-time starts (iteration-dependent) gets its size from the body's declared output by RDP (test_loop11 passes)" {
  require_file "$NODE_DATA/test_loop11/model.onnx"
  run sh "$ROOT/tools/bench/conformance.sh" --bin "$BIN" --jobs 1 --only '^test_loop11$' --json "$T/c.json" -q
  [ "$status" -eq 0 ]
  [ "$(jq '.suites.node.pass' "$T/c.json")" = 1 ]
}
