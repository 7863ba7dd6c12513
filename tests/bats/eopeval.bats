#!/usr/bin/env bats
# EOP's evaluation graphs and script (issue 14 "Done means"; VEE '22 Fig. 8): the LSTM and
# GRU cells of tests/bats/mkrnn.c have the operators of their equations, run through the
# C lowering, and scripts/eop_eval.sh profiles them on the CPU and the OpenCL device
# (PoCL here), plans them and prints the table (make eop-eval runs it at full size).

load helpers

setup() {
  require_tools
  require_cmd jq
  require_cmd clinfo
  T="$BATS_TEST_TMPDIR"
  build_gen mkrnn build/libecg.a
}

# op histogram of an ECG: "Add:4 MatMul:2 ..." sorted by op
ops() { "$BIN/ecg-dump" --json "$1" | jq -r '[.nodes[].op] | group_by(.) | map("\(.[0]):\(length)") | join(" ")'; }

@test "eopeval: LSTM and GRU cells have their equations' operators and run" {
  "$BATS_FILE_TMPDIR/mkrnn" lstm "$T/lstm.ecg"
  "$BATS_FILE_TMPDIR/mkrnn" gru "$T/gru.ecg"
  # 2 layers x 1 step: per LSTM cell 2 dense (MatMul + Add), gates Add, Split, 3 Sigmoid, 2 Tanh, 3 Mul, c Add
  [ "$(ops "$T/lstm.ecg")" = "Add:8 MatMul:4 Mul:6 Sigmoid:6 Split:2 Tanh:4" ]
  # per GRU cell 2 dense, 2 Split, r/z/n pre-activation Adds, 2 Sigmoid, Tanh, 3 Mul, 1 - z, h Add
  [ "$(ops "$T/gru.ecg")" = "Add:12 MatMul:4 Mul:6 Sigmoid:4 Split:4 Sub:2 Tanh:2" ]
  "$BIN/ecg-dump" --json "$T/lstm.ecg" | jq -e '[.tensors[] | select(.name == "x0")][0].shape == [16, 80]'
  for k in lstm gru; do
    "$BIN/ecg-lower" -q -o "$T/$k" "$T/$k.ecg"
    "$BIN/ecg-bench" "$T/$k" --random 1 --runs 1 --warmup 0 -q | jq -e '.median_ms > 0'
  done
  run "$BATS_FILE_TMPDIR/mkrnn" rnn "$T/x.ecg"
  [ "$status" -eq 2 ]
}

@test "eopeval: the evaluation script profiles both devices and plans; EOP is never worse than one device alone" {
  run --separate-stderr sh "$ROOT/scripts/eop_eval.sh" --points 2 --runs 1 --graphs gru "$T/ev"
  [ "$status" -eq 0 ]
  [[ "$output" == *"| gru | sum |"* ]]
  [[ "$output" == *"| gru | makespan |"* ]]
  [[ "$output" == *"mean held-out MAPE"* ]]
  jq -e '.device | startswith("opencl: ")' <(head -1 "$T/ev/gru.dev.jsonl")
  for obj in sum makespan; do
    jq -e '.eop.strategies as $s | ($s | keys) == ["cpu-only", "device-only", "eop", "equal", "fixed"]
           and $s.eop <= $s["cpu-only"] * 1.000001 and $s.eop <= $s["device-only"] * 1.000001' "$T/ev/gru.$obj.json"
  done
}
