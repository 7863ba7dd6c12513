#!/usr/bin/env bats
# Determinism (issue 10, item 6): identical inputs give byte-identical outputs, across
# runs and across --zstd.  Every stage on a real model (BlazeFace) and an ONNX backend test:
# onnx2ecg twice (plain and --zstd) -> identical files; the --zstd stream and the plain one
# hold the same graph (identical ecg-dump --json and identical ecg-rewrite / ecg-fuse output
# from either); ecg-lower of the plain and of the zstd ECG, and twice -> identical
# directories (every file, weights.bin and the manifest included).

load helpers

setup() {
  require_tools
  require_file "$ROOT/bin/ecg-fuse" "$ROOT/bin/ecg-rewrite"
  T="$BATS_TEST_TMPDIR"
}

# same_everywhere ONNX [onnx2ecg args...]
same_everywhere() {
  local m=$1
  shift
  require_file "$m"
  "$BIN/onnx2ecg" "$m" "$@" -o "$T/a.ecg"
  "$BIN/onnx2ecg" "$m" "$@" -o "$T/b.ecg"
  cmp "$T/a.ecg" "$T/b.ecg"
  "$BIN/onnx2ecg" "$m" "$@" --zstd -o "$T/az.ecg"
  "$BIN/onnx2ecg" "$m" "$@" --zstd -o "$T/bz.ecg"
  cmp "$T/az.ecg" "$T/bz.ecg"
  ! cmp -s "$T/a.ecg" "$T/az.ecg" || false   # really compressed
  diff <("$BIN/ecg-dump" --json "$T/a.ecg") <("$BIN/ecg-dump" --json "$T/az.ecg")
  # later stages: same bytes whether they read the plain or the zstd stream, and run to run
  "$BIN/ecg-rewrite" "$T/a.ecg" -o "$T/r1.ecg"
  "$BIN/ecg-rewrite" "$T/az.ecg" -o "$T/r2.ecg"
  cmp "$T/r1.ecg" "$T/r2.ecg"
  "$BIN/ecg-fuse" "$T/r1.ecg" -o "$T/f1.ecg"
  "$BIN/ecg-fuse" "$T/r2.ecg" -o "$T/f2.ecg"
  cmp "$T/f1.ecg" "$T/f2.ecg"
  "$BIN/ecg-fuse" --zstd "$T/r1.ecg" -o "$T/f1z.ecg"
  # lowering: plain vs zstd input, and twice
  "$BIN/ecg-lower" -o "$T/l1" "$T/f1.ecg"
  "$BIN/ecg-lower" -o "$T/l2" "$T/f1z.ecg"
  "$BIN/ecg-lower" -o "$T/l3" "$T/f2.ecg"
  diff -r "$T/l1" "$T/l2"
  diff -r "$T/l1" "$T/l3"
  [ -s "$T/l1/model.c" ]
}

@test "determinism: BlazeFace, every stage, across runs and --zstd" {
  same_everywhere "$ROOT/models/face_detection_front_128x128_barracuda.onnx"
}

@test "determinism: ONNX backend test (conv with strides and padding), every stage" {
  same_everywhere "$NODE_DATA/test_conv_with_strides_padding/model.onnx"
}
