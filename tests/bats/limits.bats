#!/usr/bin/env bats
# Limits on hostile input (issue 10, item 2; format/ECG.md "Limits"), through the sanitizer
# builds: each limit is an exit-1 error with one line naming the node, tensor or field,
# no output file, no sanitizer report, and no allocation sized by the input's claims.
# The inputs are the hand-made seeds of the fuzz corpora (tests/fuzz/seeds, made by
# tests/fuzz/mkseeds.py).

load helpers

S="$BATS_TEST_DIRNAME/../fuzz/seeds"

setup() {
  require_san
  T="$BATS_TEST_TMPDIR"
}

# fails TOOL WORD ARGS...: TOOL (from build-san) exits 1, one stderr line "TOOL: ..."
# containing WORD, no output, no sanitizer report.
fails() {
  local tool=$1 word=$2
  shift 2
  run --separate-stderr "$SAN/$tool" "$@"
  echo "exit $status; stderr: $stderr"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 1 ]
  one_line "$stderr"
  [[ "$stderr" == "$tool: "* ]]
  grep -qF -- "$word" <<<"$stderr"
  [ -z "$output" ]
}

@test "limits: an inferred output over 2^40 elements names the node (ConstantOfShape, Expand, Tile)" {
  fails onnx2ecg "node 'n' (ConstantOfShape): output 'y' would have 1125899906842624 elements (shape 1048576x1048576x1024), more than the limit of 2^40" "$S/onnx/cos-huge.onnx" -o "$T/o.ecg"
  [ ! -e "$T/o.ecg" ]
  fails onnx2ecg "node 'n' (Expand): output 'y' would have" "$S/onnx/expand-huge.onnx" -o "$T/o.ecg"
  fails onnx2ecg "node 'n' (Tile): output 'y' would have 2199023255552 elements" "$S/onnx/tile-huge.onnx" -o "$T/o.ecg"
  [ ! -e "$T/o.ecg" ]
}

@test "limits: shapes whose element count overflows int64 are refused, not wrapped (UBSan silent)" {
  fails onnx2ecg "more than 2^63 elements (shape 1099511627776x1099511627776)" "$S/onnx/huge-dims.onnx" -o "$T/o.ecg"
  fails onnx2ecg "more than 2^63 elements (shape 9223372036854775807)" "$S/onnx/int64max-dim.onnx" -o "$T/o.ecg"
  fails onnx2ecg "initializer 'w' is too large" "$S/onnx/init-huge-dims.onnx" -o "$T/o.ecg"
}

@test "limits: the validator refuses a stored tensor shape over 2^40 elements" {
  "$BIN/onnx2ecg" --no-infer "$S/onnx/huge-dims.onnx" -o "$T/h.ecg"
  fails ecg-dump "tensor 'x' has shape 1099511627776x1099511627776, more than the limit of 2^40 elements" "$T/h.ecg"
  fails ecg-lower "more than the limit of 2^40 elements" -o "$T/low" "$T/h.ecg"
  [ ! -e "$T/low" ]
}

@test "limits: a folded constant over 256 MiB stays a node (ConstantOfShape of 2^27 floats)" {
  run --separate-stderr "$SAN/onnx2ecg" "$S/onnx/cos-unfolded.onnx" -o "$T/c.ecg"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 0 ]
  [ "$(wc -c < "$T/c.ecg")" -lt 4096 ]   # no 512 MiB constant in the stream
  "$BIN/ecg-dump" --json "$T/c.ecg" | jq -e '.nodes | map(.op) == ["ConstantOfShape"]'
}

@test "limits: subgraphs nested deeper than 64 levels are refused, naming the subgraph" {
  fails onnx2ecg "is nested more than 64 levels deep" "$S/onnx/if-deep.onnx" -o "$T/o.ecg"
}

@test "limits: an ECG header claiming more payload than the file holds allocates nothing large" {
  # plain build under a 300 MB address-space limit: the 1 GiB and 16 GiB claims must give
  # 'truncated' (exit 1), not 'out of memory' (exit 3)
  local f
  for f in hdr-more-than-file hdr-huge; do
    run --separate-stderr bash -c "ulimit -v 300000; '$BIN/ecg-dump' '$S/ecg/$f.ecg'"
    echo "$f: exit $status; $stderr"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"truncated ECG payload"* ]]
  done
  fails ecg-dump "truncated ECG payload (2 of 1073741824 bytes)" "$S/ecg/hdr-more-than-file.ecg"
  fails ecg-lower "truncated ECG payload (16 of 17179869184 bytes)" -o "$T/low" "$S/ecg/hdr-huge.ecg"
  [ ! -e "$T/low" ]
}

@test "limits: a zstd payload claiming 16 GiB of output is decompressed by stream, not preallocated" {
  run --separate-stderr bash -c "ulimit -v 300000; '$BIN/ecg-dump' '$S/ecg/hdr-zstd-bomb.ecg'"
  echo "exit $status; $stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"corrupt zstd payload"* ]]
  fails ecg-dump "corrupt zstd payload" "$S/ecg/hdr-zstd-bomb.ecg"
}

@test "limits: ecg-bench refuses a TensorProto whose dims overflow, naming the file" {
  require_file "$SAN/ecg-bench"
  # the reader is fuzzed directly (tests/fuzz/fuzz_tensorpb); here the whole tool on a
  # data set whose input_0.pb claims 2^62 x 4 floats
  mkdir -p "$T/data"
  cp "$S/tensorpb/huge-dims.pb" "$T/data/input_0.pb"
  "$BIN/onnx2ecg" "$NODE_DATA/test_relu/model.onnx" | "$BIN/ecg-lower" -o "$T/low"
  run --separate-stderr "$SAN/ecg-bench" "$T/low" --data "$T/data" --runs 1
  echo "exit $status; $stderr"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"input_0.pb"* ]]
}
