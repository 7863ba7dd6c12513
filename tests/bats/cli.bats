#!/usr/bin/env bats
# Command-line conventions of every tool (DESIGN.md "Conventions every tool follows"):
# --help/--version exit 0 on stdout, usage errors exit 2 with a message on stderr.

load helpers

TOOLS="onnx2ecg ecg-dump ecg-lower ecg-bench ecg-rewrite ecg-partition ecg-prune"

setup() {
  require_tools
  RELU="$NODE_DATA/test_relu/model.onnx"
}

@test "--help: every tool exits 0 and prints usage on stdout, nothing on stderr" {
  for t in $TOOLS; do
    run --separate-stderr "$BIN/$t" --help
    [ "$status" -eq 0 ] || { echo "$t --help: exit $status"; false; }
    [[ "$output" == *"usage: $t"* ]] || { echo "$t --help: no 'usage: $t' on stdout"; false; }
    [ -z "$stderr" ] || { echo "$t --help wrote to stderr: $stderr"; false; }
  done
}

@test "-h: every tool accepts the short form" {
  for t in $TOOLS; do
    run --separate-stderr "$BIN/$t" -h
    [ "$status" -eq 0 ] || { echo "$t -h: exit $status"; false; }
    [[ "$output" == *"usage: $t"* ]]
  done
}

@test "--version: every tool exits 0 and prints its name and version" {
  for t in $TOOLS; do
    run --separate-stderr "$BIN/$t" --version
    [ "$status" -eq 0 ] || { echo "$t --version: exit $status"; false; }
    [[ "$output" =~ ^$t\ [0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "$t --version printed: $output"; false; }
  done
}

@test "unknown option: every tool exits 2, names the option on stderr, nothing on stdout" {
  for t in $TOOLS; do
    run --separate-stderr "$BIN/$t" --no-such-option
    [ "$status" -eq 2 ] || { echo "$t: exit $status, expected 2"; false; }
    [ -z "$output" ] || { echo "$t wrote to stdout: $output"; false; }
    [[ "$stderr" == *"--no-such-option"* ]] || { echo "$t stderr: $stderr"; false; }
  done
}

@test "onnx2ecg: missing MODEL exits 2 with a message" {
  run --separate-stderr "$BIN/onnx2ecg" -o "$BATS_TEST_TMPDIR/x.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"missing MODEL"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/x.ecg" ]
}

@test "onnx2ecg: two models exit 2" {
  run --separate-stderr "$BIN/onnx2ecg" "$RELU" "$RELU" -o "$BATS_TEST_TMPDIR/x.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"exactly one"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/x.ecg" ]
}

@test "onnx2ecg: -o without its argument exits 2" {
  run --separate-stderr "$BIN/onnx2ecg" "$RELU" -o
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"-o"* ]]
}

@test "onnx2ecg: malformed --input-shape exits 2" {
  require_file "$RELU"
  run --separate-stderr "$BIN/onnx2ecg" --input-shape nonsense "$RELU" -o "$BATS_TEST_TMPDIR/x.ecg"
  [ "$status" -eq 2 ]
  [ -n "$stderr" ]
  [ ! -e "$BATS_TEST_TMPDIR/x.ecg" ]
}

@test "onnx2ecg: refuses to write binary to a terminal (exit 2)" {
  require_cmd script
  require_file "$RELU"
  run script -qec "'$BIN/onnx2ecg' '$RELU'" /dev/null
  [ "$status" -eq 2 ]
  [[ "$output" == *"terminal"* ]]
  [[ "$output" != *ECGF* ]]
}

@test "onnx2ecg: --list-ops lists Conv and Relu with their schema versions" {
  run --separate-stderr "$BIN/onnx2ecg" --list-ops
  [ "$status" -eq 0 ]
  printf '%s\n' "$output" | grep -Fxq 'Conv 1,11,22'
  printf '%s\n' "$output" | grep -Fxq 'Relu 1,6,13,14'
  printf '%s\n' "$output" | grep -Fxq 'ReduceMax 1,11,12,13,18,20'
  # every line has the documented shape (ops of another domain name it last)
  [ -z "$(printf '%s\n' "$output" | grep -Ev '^[A-Za-z0-9_]+ [0-9]+(,[0-9]+)*( [a-z][a-z0-9_.]*)?$')" ]
  printf '%s\n' "$output" | grep -Fxq 'Adam 1 ai.onnx.preview.training'
}

@test "ecg-dump: terminal stdin and no file exits 2" {
  require_cmd script
  run script -qec "'$BIN/ecg-dump'" /dev/null
  [ "$status" -eq 2 ]
  [[ "$output" == *"no input"* ]]
}

@test "ecg-dump: two input files exit 2" {
  run --separate-stderr "$BIN/ecg-dump" a.ecg b.ecg
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"more than one"* ]]
}

@test "ecg-lower: missing -o DIR exits 2" {
  run --separate-stderr "$BIN/ecg-lower" "$BATS_TEST_TMPDIR/none.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"missing -o"* ]]
}

@test "ecg-lower: -o without its argument exits 2" {
  run --separate-stderr "$BIN/ecg-lower" -o
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"-o"* ]]
}

@test "ecg-lower: --prefix that is not a C identifier exits 2, no output dir" {
  run --separate-stderr "$BIN/ecg-lower" --prefix 9bad-name -o "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/none.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"9bad-name"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/d" ]
}

@test "ecg-lower: terminal stdin and no file exits 2" {
  require_cmd script
  run script -qec "'$BIN/ecg-lower' -o '$BATS_TEST_TMPDIR/d'" /dev/null
  [ "$status" -eq 2 ]
  [[ "$output" == *"no input"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/d" ]
}

@test "ecg-bench: missing DIR exits 2" {
  run --separate-stderr "$BIN/ecg-bench"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"missing"* ]]
  [ -z "$output" ]
}

@test "ecg-bench: option without its value exits 2" {
  run --separate-stderr "$BIN/ecg-bench" "$BATS_TEST_TMPDIR" --runs
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--runs"* ]]
}

@test "onnx2ecg --report FILE: the stages' report envelope; a report naming the model is refused, the model untouched" {
  local T="$BATS_TEST_TMPDIR" m="$NODE_DATA/test_conv_with_strides_padding/model.onnx"
  require_file "$m"
  cp "$m" "$T/m.onnx"
  "$BIN/onnx2ecg" "$T/m.onnx" --report "$T/r.json" -o "$T/m.ecg"
  cat "$T/r.json"
  jq -e '.stage == "onnx2ecg" and .before.nodes == 1 and .before.flops == null and .after.nodes == 1
      and .after.flops > 0 and .onnx2ecg.opset > 0 and (.time_ms | type) == "number"' "$T/r.json"
  run --separate-stderr "$BIN/onnx2ecg" "$T/m.onnx" --report - -o "$T/m2.ecg"
  [ "$status" -eq 0 ]
  jq -e '.stage == "onnx2ecg"' <<<"$stderr"
  run --separate-stderr "$BIN/onnx2ecg" "$T/m.onnx" --report "$T/m.onnx" -o "$T/m3.ecg"
  [ "$status" -eq 2 ]
  [ ! -e "$T/m3.ecg" ]
  cmp "$m" "$T/m.onnx"
}

@test "ecg-lower --report FILE: the report envelope with the lowering's kernels and memory; an unwritable report leaves no DIR" {
  local T="$BATS_TEST_TMPDIR" m="$NODE_DATA/test_conv_with_strides_padding/model.onnx"
  require_file "$m"
  "$BIN/onnx2ecg" "$m" -o "$T/m.ecg"
  "$BIN/ecg-lower" -o "$T/d" --report "$T/r.json" "$T/m.ecg"
  cat "$T/r.json"
  jq -e --slurpfile mj "$T/d/model.json" '.stage == "ecg-lower" and .before.nodes == 1 and .lower.kernels == $mj[0].kernels
      and .lower.arena_bytes == $mj[0].arena_bytes and .lower.weights_bytes == $mj[0].weights_bytes and .lower.arch == "native"' "$T/r.json"
  run --separate-stderr "$BIN/ecg-lower" -o "$T/d2" --report "$T/no/such/dir/r.json" "$T/m.ecg"
  [ "$status" -eq 1 ]
  [ ! -e "$T/d2" ]
}
