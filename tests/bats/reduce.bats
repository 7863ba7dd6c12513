#!/usr/bin/env bats
# Reduce* over trailing axes (ecg-lower emit/reduce.c reduce_rows: one loop over the
# outputs, four partial accumulators per contiguous run merged with the reduction's own
# combine) against ONNX Runtime, next to the same operators over leading axes (the loop
# nest accumulating in y); Max's NaN propagates through the merge. Models: mkreduce.mjs.

load helpers

setup_file() {
  command -v node >/dev/null || return 0
  node "$ROOT/tests/bats/mkreduce.mjs" "$BATS_FILE_TMPDIR/m"
}

setup() {
  require_tools
  require_cmd node jq
  M="$BATS_FILE_TMPDIR/m"
  T="$BATS_TEST_TMPDIR"
}

@test "Reduce* over trailing axes take the partial-accumulator loop, over leading axes the loop nest; all agree with ONNX Runtime" {
  local op k res
  for op in ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceSumSquare ReduceLogSumExp; do
    for k in trail last lead; do
      rm -rf "$T/lo"
      "$BIN/onnx2ecg" "$M/${op}_$k.onnx" | "$BIN/ecg-lower" -o "$T/lo"
      if [ "$k" = lead ]; then ! grep -q 'a3 = a0' "$T/lo/model.c"; else grep -q 'a3 = a0' "$T/lo/model.c"; fi
      res=$("$BIN/ecg-bench" "$T/lo" --random 1 --ort --runs 1 --warmup 0)
      echo "$op $k: $res"
      jq -e '.pass == true' <<<"$res"
    done
  done
}

@test "ReduceMax over trailing axes: a NaN in the second partial accumulator reaches the output" {
  "$BIN/onnx2ecg" "$M/max_nan.onnx" | "$BIN/ecg-lower" -o "$T/lo"
  grep -q 'a3 = a0' "$T/lo/model.c"
  run --separate-stderr "$BIN/ecg-bench" "$T/lo" --data "$M/max_nan/data" --runs 1 --warmup 0 --rtol 0 --atol 0
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  jq -e '.pass == true' <<<"$output"
}
