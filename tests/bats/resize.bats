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

@test "resize: large Resize kernels are split over the threads and agree with ONNX Runtime at 2 threads" {
  local m res
  for m in linear cubic nearest; do
    "$BIN/onnx2ecg" "$M/$m.onnx" | "$BIN/ecg-lower" -o "$T/$m"
    grep -q '#pragma omp parallel for schedule(static)' "$T/$m/model.c"
    res=$("$BIN/ecg-bench" "$T/$m" --random 1 --ort --runs 1 --warmup 0 --threads 2)
    echo "$m: $res"
    jq -e '.pass == true' <<<"$res"
  done
}

@test "resize: (bi)linear float resizes of the last two axes run the plane kernel and agree with ONNX Runtime" {
  local m res
  for m in linear plane_r2 plane_down plane_w plane_wide; do
    "$BIN/onnx2ecg" "$M/$m.onnx" | "$BIN/ecg-lower" -o "$T/$m"
    grep -q '_pw0\[' "$T/$m/model.c"
    res=$("$BIN/ecg-bench" "$T/$m" --random 1 --ort --runs 1 --warmup 0 --threads 2)
    echo "$m: $res"
    jq -e '.pass == true' <<<"$res"
  done
  # the cubic one stays with the per-element gather
  "$BIN/onnx2ecg" "$M/cubic.onnx" | "$BIN/ecg-lower" -o "$T/cubic"
  ! grep -q '_pw0\[' "$T/cubic/model.c"
}
