#!/usr/bin/env bats
# EOP's first steps in ecg-partition (issue 14 items 2-3; VEE '22): one-node sweeps of each
# operator (--emit-sweeps), device profiles timed by scripts/eop_profile.sh, and the plan:
# placements in the ECG (schema 4), every strategy's estimate in the report (--eop). The
# algorithms themselves: tests/unit/eop_test.c.

load helpers

setup() {
  require_tools
  require_cmd jq
  T="$BATS_TEST_TMPDIR"
  M="$NODE_DATA/test_matmul_2d/model.onnx"
  require_file "$M" "$BIN/ecg-partition"
  "$BIN/onnx2ecg" "$M" -o "$T/g.ecg"
}

@test "eop: sweeps cut each operator along its dimension, profiled, planned; identical devices tie" {
  run --separate-stderr "$BIN/ecg-partition" -v --emit-sweeps "$T/sw" --points 3 "$T/g.ecg"
  [ "$status" -eq 0 ]
  [ -z "$output" ]                       # no ECG on stdout in this mode
  # MatMul [3x4]x[4x3]: batch (rows of A) cut to 1, 2, 3
  [ "$(cut -f2,3 "$T/sw/index.tsv" | tr '\t\n' ' ')" = "batch 1 batch 2 batch 3 " ]
  for f in $(cut -f4 "$T/sw/index.tsv"); do "$BIN/ecg-dump" "$f" > /dev/null; done
  sh "$ROOT/scripts/eop_profile.sh" --runs 3 --device "cpu a" "$T/sw" "$T/a.jsonl"
  sed 's/"cpu a"/"cpu b"/' "$T/a.jsonl" > "$T/b.jsonl"
  [ "$(wc -l < "$T/a.jsonl")" -eq 3 ]
  run --separate-stderr "$BIN/ecg-partition" --eop --profiles "$T/a.jsonl" --profiles "$T/b.jsonl" --objective sum \
    --report "$T/r.json" -o "$T/placed.ecg" "$T/g.ecg"
  [ "$status" -eq 0 ]
  jq -e '.eop.operators == 1 and .eop.devices == ["cpu a", "cpu b"]' "$T/r.json"
  jq -e '.eop.strategies as $s | $s["cpu-only"] == $s["device-only"] and $s.eop <= $s["cpu-only"] and $s.eop <= $s.equal' "$T/r.json"
  jq -e '.eop.plan[0] | .op == "MatMul" and .dim == "batch" and .extent == 3 and (.cpu.pattern | test("constant|linear|staircase"))' "$T/r.json"
  # the plan is in the ECG (schema 4): the MatMul's placement, its share as in the report
  local share
  share=$(jq '.eop.plan[0].cpu_share' "$T/r.json")
  "$BIN/ecg-dump" --json "$T/placed.ecg" | jq -e --argjson s "$share" '.placements == [{"node": 0, "dim": "batch", "axis": 0, "cpu_share": $s}]'
  # and it survives the stages after it (ecg-fuse renumbers nodes through ecg_remap_nodes)
  "$BIN/ecg-fuse" "$T/placed.ecg" | "$BIN/ecg-dump" --json | jq -e '.placements | length == 1'
  "$BIN/ecg-lower" -o "$T/low" "$T/placed.ecg"    # the C lowering ignores placements
}

@test "eop: a malformed profile names FILE:LINE; usage errors exit 2" {
  printf '{"device": "x", "signature": "s", "dim": "cols", "x": 4, "ms": 1}\n' > "$T/bad.jsonl"
  run --separate-stderr "$BIN/ecg-partition" --eop --profiles "$T/bad.jsonl" --profiles "$T/bad.jsonl" -o "$T/out.ecg" "$T/g.ecg"
  [ "$status" -eq 1 ]
  [ ! -e "$T/out.ecg" ]
  [[ "$stderr" == *"bad.jsonl:1: dim 'cols' (expected batch or rows)"* ]]
  [ -z "$output" ]
  run --separate-stderr "$BIN/ecg-partition" --eop --profiles "$T/bad.jsonl" "$T/g.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--eop needs --profiles CPU.jsonl --profiles DEVICE.jsonl"* ]]
  run --separate-stderr "$BIN/ecg-partition" --eop --profiles a --profiles b --objective fast "$T/g.ecg"
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-partition" --emit-sweeps "$T/sw" --points 0 "$T/g.ecg"
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-partition" --eop --profiles "$T/missing" --profiles "$T/missing" "$T/g.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"missing: No such file or directory"* ]]
}
