#!/usr/bin/env bats
# Resize over static shapes with at least 32768 outputs runs the first axis longer than 1
# over the threads (each element's index computed from its coordinates); at 2 threads every
# model agrees with ONNX Runtime: linear (channels split), cubic tf_crop_and_resize with
# extrapolated rows (images split), nearest. (Bi)linear float resizes of the last two axes
# take the plane kernel (emit/resize.c emit_plane) and agree too. Models: mkresize.mjs.

load helpers

setup_file() {
  command -v node >/dev/null || return 0
  node "$ROOT/tests/bats/mkresize.mjs" "$BATS_FILE_TMPDIR/m"
}

setup() {
  require_tools
  require_cmd node jq
  M="$BATS_FILE_TMPDIR/m"
  T="$BATS_TEST_TMPDIR"
}

# lower_check M PATTERN: model M lowered into $T/M, whose model.c has PATTERN, and which agrees
# with ONNX Runtime at 2 threads
lower_check() {
  local res
  "$BIN/onnx2ecg" "$M/$1.onnx" | "$BIN/ecg-lower" -o "$T/$1"
  grep -q "$2" "$T/$1/model.c"
  res=$("$BIN/ecg-bench" "$T/$1" --random 1 --ort --runs 1 --warmup 0 --threads 2)
  echo "$1: $res"
  jq -e '.pass == true' <<<"$res"
}

@test "resize: large Resize kernels are split over the threads and agree with ONNX Runtime at 2 threads" {
  local m
  for m in linear cubic nearest; do
    lower_check "$m" '#pragma omp parallel for schedule(static)'
  done
}

@test "resize: (bi)linear float resizes of the last two axes run the plane kernel and agree with ONNX Runtime" {
  local m
  for m in linear plane_r2 plane_down plane_w plane_wide; do
    lower_check "$m" '_pw0\['
  done
  # the cubic one stays with the per-element gather
  "$BIN/onnx2ecg" "$M/cubic.onnx" | "$BIN/ecg-lower" -o "$T/cubic"
  ! grep -q '_pw0\[' "$T/cubic/model.c" || false
}
