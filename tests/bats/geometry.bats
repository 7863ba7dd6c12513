#!/usr/bin/env bats
# One resolved window geometry (format/geom.c, ecg_conv_geom_resolve) for Conv, ConvTranspose,
# ConvInteger, MaxPool and AveragePool: auto_pad VALID, SAME_UPPER and SAME_LOWER with strides
# and dilations, 1-D, 2-D and 3-D (the runtime's 2-D kernels and the N-D loops), through the
# whole pipeline. Each case checks the inferred output shape against the ONNX formula and the
# lowered kernel's values against ONNX Runtime. ONNX Runtime refuses SAME with dilations for
# Conv and computes the pads of dilated SAME pools without the dilation, so those cases
# take their reference from the same model with the pads the ONNX formula gives written out
# explicitly (auto_pad NOTSET). Needs `make setup` (onnxruntime-node).

load helpers

setup_file() {
  [ -x "$ROOT/bin/onnx2ecg" ] || return 0
  build_gen mkonnx build/gen/onnx.pb-c.c
}

setup() {
  require_tools
  require_file "$BATS_FILE_TMPDIR/mkonnx" "$ROOT/tools/bench/node_modules/onnxruntime-node"
  T="$BATS_TEST_TMPDIR"
  # the lowered Makefile honours CFLAGS: build the small kernels quickly, as conformance.sh does
  export CFLAGS="-O1 -fopenmp"
}

# window OP AUTO_PAD STRIDE DILATION XDIMS KDIMS WANT_SHAPE REF_AUTO_PAD:
# y = OP(x) with those attributes must infer WANT_SHAPE (JSON list) and match ONNX Runtime
# run on the model whose auto_pad is REF_AUTO_PAD (the same, or PADS=... explicit pads).
window() {
  local op=$1 ap=$2 s=$3 d=$4 x=$5 k=$6 want=$7 ref=$8
  "$BATS_FILE_TMPDIR/mkonnx" window "$T/m.onnx" "$op" "$ap" "$s" "$d" "$x" "$k"
  "$BATS_FILE_TMPDIR/mkonnx" window "$T/ref.onnx" "$op" "$ref" "$s" "$d" "$x" "$k"
  "$BIN/onnx2ecg" "$T/m.onnx" -o "$T/m.ecg"
  local got
  got=$("$BIN/ecg-dump" "$T/m.ecg" | jq -c '.tensors[] | select(.name == "y") | .shape')
  echo "$op $ap s=$s d=$d x=$x k=$k: inferred $got, want $want"
  [ "$got" = "$want" ]
  rm -rf "$T/d" "$T/data"
  node "$ROOT/tools/bench/make_data.mjs" --model "$T/ref.onnx" --out "$T/data" --seed 1 >/dev/null
  "$BIN/ecg-lower" -o "$T/d" "$T/m.ecg"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$T/data" --runs 1 --atol 1e-5
  echo "exit $status; $output; $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
}

@test "Conv VALID, strides 2, dilations 2: floor((in - dilated kernel) / s) + 1" {
  window Conv VALID 2 2 1x2x7x8 3x2 '[1,3,2,3]' VALID
}

@test "Conv SAME_UPPER, strides 2, dilations 2: ceil(in / s), odd total padding at the end" {
  window Conv SAME_UPPER 2 2 1x2x7x8 3x2 '[1,3,4,4]' PADS=2,0,2,1
}

@test "Conv SAME_LOWER, strides 2, dilations 2: odd total padding at the beginning" {
  window Conv SAME_LOWER 2 2 1x2x7x8 3x2 '[1,3,4,4]' PADS=2,1,2,0
}

@test "Conv 1-D SAME_LOWER, strides 2, dilations 2 (the width slot of the 2-D kernel)" {
  window Conv SAME_LOWER 2 2 1x2x10 3 '[1,3,5]' PADS=2,1
}

@test "Conv 3-D SAME_UPPER, strides 2 (N-D loops)" {
  window Conv SAME_UPPER 2 1 1x2x5x6x7 3x2x2 '[1,3,3,3,4]' SAME_UPPER
}

@test "MaxPool SAME_LOWER, strides 2, dilations 2: the ONNX formula, not ONNX Runtime's undilated pads" {
  window MaxPool SAME_LOWER 2 2 1x2x7x8 3x2 '[1,2,4,4]' PADS=2,1,2,0
}

@test "MaxPool VALID, strides 2, dilations 2" {
  window MaxPool VALID 2 2 1x2x7x8 3x2 '[1,2,2,3]' VALID
}

@test "AveragePool SAME_UPPER and SAME_LOWER, strides 2" {
  window AveragePool SAME_UPPER 2 1 1x2x7x8 3x2 '[1,2,4,4]' SAME_UPPER
  window AveragePool SAME_LOWER 2 1 1x2x7x8 3x2 '[1,2,4,4]' SAME_LOWER
}

@test "ConvTranspose VALID (dilations 2), SAME_UPPER and SAME_LOWER (out = in * s), strides 2" {
  window ConvTranspose VALID 2 2 1x2x4x5 3x2 '[1,3,11,11]' VALID
  window ConvTranspose SAME_UPPER 2 1 1x2x4x5 3x2 '[1,3,8,10]' SAME_UPPER
  window ConvTranspose SAME_LOWER 2 1 1x2x4x5 3x2 '[1,3,8,10]' SAME_LOWER
}

@test "ConvInteger SAME_LOWER (strides 2), SAME_UPPER (dilations 2), VALID" {
  window ConvInteger SAME_LOWER 2 1 1x2x7x8 3x2 '[1,3,4,4]' SAME_LOWER
  window ConvInteger SAME_UPPER 2 2 1x2x7x8 3x2 '[1,3,4,4]' PADS=2,0,2,1
  window ConvInteger VALID 2 2 1x2x7x8 3x2 '[1,3,2,3]' VALID
}
