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

@test "conformance: ONNX's sequence and optional-sequence graph input/output tests pass, If with sequence and optional branches, Loops carrying sequences" {
  require_file "$NODE_DATA/test_identity_sequence/model.onnx"
  run sh "$ROOT/tools/bench/conformance.sh" --bin "$BIN" --jobs 1 --json "$T/c.json" -q \
    --only '^test_(identity_sequence|identity_opt|optional_get_element_sequence|sequence_insert_at_back|sequence_insert_at_front|if_seq|if_opt|loop13_seq|loop16_seq_none)$'
  [ "$status" -eq 0 ]
  [ "$(jq '.suites.node.pass' "$T/c.json")" = 9 ]
}

@test "conformance: SequenceMap over items of different shapes, as the operator and as its expanded Loop (SequenceAt of run-time shapes)" {
  require_file "$NODE_DATA/test_sequence_map_identity_1_sequence/model.onnx"
  run sh "$ROOT/tools/bench/conformance.sh" --bin "$BIN" --jobs 1 --json "$T/c.json" -q --only '^test_sequence_map_'
  [ "$status" -eq 0 ]
  [ "$(jq '.suites.node.pass' "$T/c.json")" = 12 ]
}

@test "a tensor of symbolic dims beside sequences (a dynamic build): SequenceMap and the same Loop, one compiled model run at two sizes" {
  for m in seqmap_dyn loop_dyn; do
    "$BIN/onnx2ecg" "$M/$m.onnx" | "$BIN/ecg-lower" -o "$T/$m"
    grep -q 'set_input_shape' "$T/$m/model.c" # the dynamic-shape API
    run "$BIN/ecg-bench" "$T/$m" --data "$M/$m/data_k3" --data "$M/$m/data_k1" --runs 1 --warmup 0
    [ "$status" -eq 0 ]
    [ "$(jq -s -c 'map(.pass)' <<<"$output")" = '[true,true]' ]
  done
  grep -q 'ctx->rgn' "$T/loop_dyn/model.c" # the Loop body's static plan in its own buffer
  # a body capturing an intermediate (placed by the run-time plan) is refused naming the Loop
  run --separate-stderr "$BIN/ecg-lower" -o "$T/never" < <("$BIN/onnx2ecg" "$M/loop_dyn_cap.onnx")
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"node 'loop' (Loop): control flow is not supported with symbolic dims yet (its subgraphs read an intermediate"* ]]
  [ ! -e "$T/never" ]
  # the other size's expected items: a mismatch
  mkdir "$T/w"; cp "$M/seqmap_dyn/data_k3/"input_*.pb "$T/w/"; cp "$M/seqmap_dyn/data_k1/output_0.pb" "$T/w/"
  run --separate-stderr "$BIN/ecg-bench" "$T/seqmap_dyn" --data "$T/w" --runs 1 --warmup 0
  [ "$status" -eq 1 ]; [ "$(jq -r .pass <<<"$output")" = false ]
}

@test "SequenceMap: items of run-time shapes through Add/Mul (numpy broadcasting at run time) and Shape; different lengths or shapes that do not broadcast fail the run (-2)" {
  "$BIN/onnx2ecg" "$M/seqmap.onnx" -o "$T/g.ecg"
  [ "$("$BIN/ecg-dump" "$T/g.ecg" | jq -c '[.nodes[0].op, .nodes[0].outputs, ([.tensors[] | select(.sequence) | .name])]')" = '["SequenceMap",["a","b","s"],["x","z","a","b","s"]]' ]
  "$BIN/ecg-lower" -o "$T/d" < "$T/g.ecg"
  grep -q 'hb_need_' "$T/d/model.c"
  run "$BIN/ecg-bench" "$T/d" --data "$M/seqmap/data_ok" --runs 2 --warmup 1
  [ "$status" -eq 0 ]; [ "$(jq -r .pass <<<"$output")" = true ]
  for bad in badlen nobcast; do
    run "$BIN/ecg-bench" "$T/d" --data "$M/seqmap/data_$bad" --runs 1 --warmup 0
    [ "$status" -eq 1 ]
    [[ "$output" == *"run failed (-2: a run-time check failed"*"SequenceMap"* ]]
  done
  # an operator whose kernel takes no run-time shape is refused naming it
  run --separate-stderr "$BIN/ecg-lower" -o "$T/never" < <("$BIN/onnx2ecg" "$M/seqmap_relu.onnx")
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"subgraph 'map': node 'relu' (Relu): tensor 'in0' has a run-time shape"*"not supported"* ]]
  [ ! -e "$T/never" ]
}

@test "If with an optional-sequence output: the empty Optional of a 'type' attribute and Optional(x) cross the branch boundary with their flags" {
  "$BIN/onnx2ecg" "$M/if_opt.onnx" -o "$T/g.ecg"
  [ "$("$BIN/ecg-dump" "$T/g.ecg" | jq -c '[.outputs, .nodes[0].outputs]')" = '[["o","o:present"],["o","o:present"]]' ]
  [ "$("$BIN/ecg-dump" "$T/g.ecg" | jq -c '[.nodes[0].attrs.then_branch.nodes[].op]')" = '["SequenceEmpty"]' ]
  "$BIN/ecg-lower" -o "$T/d" < "$T/g.ecg"
  for d in then else; do
    run "$BIN/ecg-bench" "$T/d" --data "$M/if_opt/data_$d" --runs 1 --warmup 0
    [ "$status" -eq 0 ]; [ "$(jq -r .pass <<<"$output")" = true ]
  done
  # the other branch's expected value is a mismatch (flag and items)
  mkdir "$T/w"; cp "$M/if_opt/data_then/input_0.pb" "$M/if_opt/data_else/output_0.pb" "$T/w/"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$T/w" --runs 1 --warmup 0
  [ "$status" -eq 1 ]; [ "$(jq -r .pass <<<"$output")" = false ]
}

@test "Loop carrying a sequence whose items change shape per iteration (a Slice of run-time extents): right at two trip counts" {
  "$BIN/onnx2ecg" "$M/loop_seq.onnx" | "$BIN/ecg-lower" -o "$T/d"
  grep -q 'int64_t rd\[1\]\[8\]' "$T/d/model.c"
  for d in m3 m6; do
    run "$BIN/ecg-bench" "$T/d" --data "$M/loop_seq/data_$d" --runs 2 --warmup 1
    [ "$status" -eq 0 ]; [ "$(jq -r .pass <<<"$output")" = true ]
  done
  # 3 iterations' inputs against 6 iterations' items: a mismatch
  mkdir "$T/w"; cp "$M/loop_seq/data_m3/"input_*.pb "$M/loop_seq/data_m6/output_0.pb" "$T/w/"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$T/w" --runs 1 --warmup 0
  [ "$status" -eq 1 ]; [ "$(jq -r .pass <<<"$output")" = false ]
  # such a slice read by a tensor operator (ReduceSum) has no static shape nor a bound: refused naming it
  run --separate-stderr "$BIN/ecg-lower" -o "$T/never" < <("$BIN/onnx2ecg" "$M/loop_seq_sum.onnx")
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"subgraph 'body': node 'slice' (Slice): tensor 'sl' has a run-time shape"*"not supported"* ]]
  [ ! -e "$T/never" ]
}

@test "Loop carrying an optional sequence (its flag carried beside it): an empty and a present initial value" {
  "$BIN/onnx2ecg" "$M/loop_optseq.onnx" -o "$T/g.ecg"
  # the initial flag: an Identity of the input's flag o:present (ecg_resolve_optionals)
  [ "$("$BIN/ecg-dump" "$T/g.ecg" | jq -c '[.nodes[] | select(.op == "Loop") | .attrs.body.inputs[2:4], .attrs.body.outputs[1:3], .outputs]')" = \
    '[["oi","oi:present"],["so","so:present"],["y","y:present"]]' ]
  [ "$("$BIN/ecg-dump" "$T/g.ecg" | jq -r '(.nodes[] | select(.op == "Loop") | .inputs[3]) as $f | .nodes[] | select(.outputs[0] == $f) | .inputs[0]')" = "o:present" ]
  "$BIN/ecg-lower" -o "$T/d" < "$T/g.ecg"
  for d in none some; do
    run "$BIN/ecg-bench" "$T/d" --data "$M/loop_optseq/data_$d" --runs 1 --warmup 0
    [ "$status" -eq 0 ]; [ "$(jq -r .pass <<<"$output")" = true ]
  done
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
