#!/usr/bin/env bats
# Cast from a float type to bfloat16 truncates the float32 value, as ONNX's reference Cast
# does (onnx/reference/ops/op_cast.py: float32_to_bfloat16(x, truncate=True); format/scalar.h
# narrow_bf16), in a Cast kernel and in a fused block alike. Models: mkcast.mjs.

load helpers

setup_file() {
  command -v node >/dev/null || return 0
  node "$ROOT/tests/bats/mkcast.mjs" "$BATS_FILE_TMPDIR/m"
}

setup() {
  require_tools
  require_cmd node jq
  M="$BATS_FILE_TMPDIR/m"
  T="$BATS_TEST_TMPDIR"
}

@test "Cast float32 -> bfloat16 truncates: a Cast kernel and a Cast fused into a block with an Add give the truncated bits (NaN stays NaN)" {
  "$BIN/onnx2ecg" "$M/cast_bf16.onnx" | "$BIN/ecg-lower" -o "$T/a"
  "$BIN/onnx2ecg" "$M/cast_bf16_const.onnx" | "$BIN/ecg-fuse" -o "$T/f.ecg"
  [ "$("$BIN/ecg-dump" "$T/f.ecg" | jq -c '[.blocks[].nodes | length]')" = '[2]' ] # Cast + Add, one block
  "$BIN/ecg-lower" -o "$T/b" "$T/f.ecg"
  for d in "a cast_bf16" "b cast_bf16_const"; do
    set -- $d
    run --separate-stderr "$BIN/ecg-bench" "$T/$1" --data "$M/$2/data" --runs 1 --warmup 0 --rtol 0 --atol 0
    [ "$status" -eq 0 ]
    [ "$(jq -r .pass <<<"$output")" = true ]
  done
}

@test "conformance: node/test_cast_FLOAT_to_BFLOAT16 passes (ONNX 1.12's data truncates), the other direction still does" {
  require_file "$NODE_DATA/test_cast_FLOAT_to_BFLOAT16/model.onnx"
  run sh "$ROOT/tools/bench/conformance.sh" --bin "$BIN" --jobs 1 --json "$T/c.json" -q --only '^test_cast_(FLOAT_to_BFLOAT16|BFLOAT16_to_FLOAT)$'
  [ "$status" -eq 0 ]
  [ "$(jq '.suites.node.pass' "$T/c.json")" = 2 ]
}
