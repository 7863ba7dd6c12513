#!/usr/bin/env bats
# Run-time sequences (issue 9 item 4): a sequence (or optional sequence) graph input or output
# is a Tensor.sequence in the ECG, a list of owned tensors in the lowered code
# (tools/lower/LOWERED.md "Sequences"), a SequenceProto / OptionalProto file for ecg-bench.
# Hand-made models: tests/bats/mkseq.mjs; ONNX's own node tests.

load helpers

setup_file() {
  command -v node >/dev/null || return 0
  node "$ROOT/tests/bats/mkseq.mjs" "$BATS_FILE_TMPDIR/m"
}

setup() {
  require_tools
  require_cmd node jq
  M="$BATS_FILE_TMPDIR/m"
  T="$BATS_TEST_TMPDIR"
}

@test "conformance: ONNX's sequence and optional-sequence graph input/output tests pass, and an If with sequence branches" {
  require_file "$NODE_DATA/test_identity_sequence/model.onnx"
  run sh "$ROOT/tools/bench/conformance.sh" --bin "$BIN" --jobs 1 --json "$T/c.json" -q \
    --only '^test_(identity_sequence|identity_opt|optional_get_element_sequence|sequence_insert_at_back|sequence_insert_at_front|if_seq)$'
  [ "$status" -eq 0 ]
  [ "$(jq '.suites.node.pass' "$T/c.json")" = 6 ]
}

@test "a sequence entering a Loop body is refused naming the subgraph and the value" {
  require_file "$NODE_DATA/test_loop13_seq/model.onnx"
  run --separate-stderr "$BIN/onnx2ecg" "$NODE_DATA/test_loop13_seq/model.onnx" -o "$T/never.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"subgraph 'loop_body' input 'seq_in' is not a tensor"*"not supported"* ]]
  [ ! -e "$T/never.ecg" ]
}

@test "onnx2ecg: a sequence input is a Tensor.sequence; an optional one adds its flag, also as an output" {
  "$BIN/onnx2ecg" "$NODE_DATA/test_sequence_insert_at_front/model.onnx" -o "$T/g.ecg"
  [ "$("$BIN/ecg-dump" "$T/g.ecg" | jq -c '[.tensors[] | select(.sequence) | .name]')" = '["sequence","output_sequence"]' ]
  [ "$("$BIN/ecg-dump" "$T/g.ecg" | jq -c '[.nodes[].op]')" = '["SequenceInsert"]' ]
  "$BIN/onnx2ecg" "$NODE_DATA/test_identity_opt/model.onnx" -o "$T/o.ecg"
  [ "$("$BIN/ecg-dump" "$T/o.ecg" | jq -c '[.inputs, .outputs]')" = '[["opt_in","opt_in:present"],["opt_out","opt_out:present"]]' ]
}

@test "SequenceAt/Length/Erase at a run-time position: right; a position outside or an item of another shape fails the run (-2)" {
  "$BIN/onnx2ecg" "$M/seq_ops.onnx" | "$BIN/ecg-lower" -o "$T/d"
  run "$BIN/ecg-bench" "$T/d" --data "$M/seq_ops/data_ok" --runs 2 --warmup 1
  [ "$status" -eq 0 ]
  [ "$(jq -r .pass <<<"$output")" = true ]
  for bad in badpos badshape; do
    run "$BIN/ecg-bench" "$T/d" --data "$M/seq_ops/data_$bad" --runs 1 --warmup 0
    [ "$status" -eq 1 ]
    [[ "$output" == *"run failed (-2: a run-time check failed"*"a sequence position or item does not fit"* ]]
  done
  # the runner's protocol: --info marks the sequences; a malformed sequence file is named
  run "$T/d/runner" --info
  [[ "$output" == *$'input\ts\t1\tseq'* ]]; [[ "$output" == *$'output\te\t1\tseq'* ]]
  printf 'garbage' > "$T/bad.seq"
  printf '\0\0\0\0\0\0\0\0' > "$T/p.bin"
  run "$T/d/runner" --in s="$T/bad.seq" --in p="$T/p.bin"
  [ "$status" -eq 1 ]
  [[ "$output" == *"not a sequence file"*"for input 's'"* ]]
}

@test "ecg-bench --save writes sequence outputs as SequenceProtos that check against themselves" {
  "$BIN/onnx2ecg" "$M/seq_ops.onnx" | "$BIN/ecg-lower" -o "$T/d"
  run "$BIN/ecg-bench" "$T/d" --data "$M/seq_ops/data_ok" --runs 1 --warmup 0 --save "$T/s"
  [ "$status" -eq 0 ]
  run "$BIN/ecg-bench" "$T/d" --data "$T/s" --runs 1 --warmup 0
  [ "$status" -eq 0 ]
  [ "$(jq -r .pass <<<"$output")" = true ]
  # and a wrong expected sequence (one item fewer) is a mismatch, not a pass
  cp "$M/seq_ops/data_ok/"input_*.pb "$M/seq_ops/data_ok/output_0.pb" "$M/seq_ops/data_ok/output_1.pb" "$T/s/"
  cp "$M/seq_ops/data_badshape/output_2.pb" "$T/s/output_2.pb"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$T/s" --runs 1 --warmup 0
  [ "$status" -eq 1 ]
  [ "$(jq -r '[.pass, .worst_tensor, .mismatches] | @csv' <<<"$output")" = 'false,"e",1' ]
}

@test "a non-sequence operator on a run-time sequence is refused naming the node; sequences are not lowered with --target opencl" {
  run --separate-stderr "$BIN/onnx2ecg" "$M/seq_relu.onnx" -o "$T/never.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"node 'relu' (Relu): input 's' is a run-time sequence, which only the sequence operators and Identity take"* ]]
  [ ! -e "$T/never.ecg" ]
  run --separate-stderr "$BIN/ecg-lower" --target opencl -o "$T/cl" < <("$BIN/onnx2ecg" "$M/seq_ops.onnx")
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"run-time sequences are not supported by --target opencl"* ]]
  [ ! -e "$T/cl" ]
}
