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
  # MatMul [3x4]x[4x3]: batch (rows of A) cut to 1, 2, 3; HW1W2: N (cols of B) to 1, 2, 3 and
  # K (cols of A, rows of B) to 2, 3, 4
  [ "$(cut -f2,3 "$T/sw/index.tsv" | tr '\t\n' ' ')" = "batch 1 batch 2 batch 3 cols 1 cols 2 cols 3 k 2 k 3 k 4 " ]
  "$BIN/ecg-dump" --json "$(sed -n 4p "$T/sw/index.tsv" | cut -f4)" | jq -e '[.tensors[].shape] == [[3, 4], [4, 1], [3, 1]]'
  "$BIN/ecg-dump" --json "$(sed -n 7p "$T/sw/index.tsv" | cut -f4)" | jq -e '[.tensors[].shape] == [[3, 2], [2, 3], [3, 3]]'
  for f in $(cut -f4 "$T/sw/index.tsv"); do "$BIN/ecg-dump" "$f" > /dev/null; done
  sh "$ROOT/scripts/eop_profile.sh" --runs 3 --device "cpu a" "$T/sw" "$T/a.jsonl"
  sed 's/"cpu a"/"cpu b"/' "$T/a.jsonl" > "$T/b.jsonl"
  [ "$(wc -l < "$T/a.jsonl")" -eq 9 ]
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
  # the paper's baselines as placements: --baseline equal places 0.5
  "$BIN/ecg-partition" --eop --baseline equal --profiles "$T/a.jsonl" --profiles "$T/b.jsonl" --report "$T/r2.json" -o "$T/eq.ecg" "$T/g.ecg"
  jq -e '.eop.placed == "equal" and .eop.plan[0].cpu_share == 0.5' "$T/r2.json"
  "$BIN/ecg-dump" --json "$T/eq.ecg" | jq -e '.placements[0].cpu_share == 0.5'
  jq -e '.eop.placed == "eop"' "$T/r.json"
  run --separate-stderr "$BIN/ecg-partition" --eop --baseline half --profiles "$T/a.jsonl" --profiles "$T/b.jsonl" "$T/g.ecg"
  [ "$status" -eq 2 ]
  # and it survives the stages after it (ecg-fuse renumbers nodes through ecg_remap_nodes)
  "$BIN/ecg-fuse" "$T/placed.ecg" | "$BIN/ecg-dump" --json | jq -e '.placements | length == 1'
  "$BIN/ecg-lower" -o "$T/low" "$T/placed.ecg"    # the C lowering ignores placements
}

@test "eop: a malformed profile names FILE:LINE; usage errors exit 2" {
  printf '{"device": "x", "signature": "s", "dim": "width", "x": 4, "ms": 1}\n' > "$T/bad.jsonl"
  run --separate-stderr "$BIN/ecg-partition" --eop --profiles "$T/bad.jsonl" --profiles "$T/bad.jsonl" -o "$T/out.ecg" "$T/g.ecg"
  [ "$status" -eq 1 ]
  [ ! -e "$T/out.ecg" ]
  [[ "$stderr" == *"bad.jsonl:1: dim 'width' (expected batch, rows, cols or k)"* ]]
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
  # a sample measured on another CPU model is refused, unless --foreign-profiles
  printf '{"cpu": "Some Other CPU 9000", "device": "x", "signature": "s", "dim": "rows", "x": 4, "ms": 1}\n' > "$T/far.jsonl"
  run --separate-stderr "$BIN/ecg-partition" --eop --profiles "$T/far.jsonl" --profiles "$T/far.jsonl" -o "$T/out.ecg" "$T/g.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"far.jsonl:1: measured on CPU 'Some Other CPU 9000', not this machine's"* ]]
  [ ! -e "$T/out.ecg" ]
  run --separate-stderr "$BIN/ecg-partition" --eop --foreign-profiles --profiles "$T/far.jsonl" --profiles "$T/far.jsonl" -o "$T/out.ecg" "$T/g.ecg"
  [[ "$stderr" != *"measured on CPU"* ]]    # past the check (no operator of g has a sample in it)
  run --separate-stderr "$BIN/ecg-partition" --foreign-profiles "$T/g.ecg"
  [ "$status" -eq 2 ]
}

# ---- ecg-lower --target c+opencl: the placements run (issue 14 item 3). On a machine without
# a GPU the device is PoCL on the same CPU (make setup installs it): a missing OpenCL device
# is a failure, never a skip.

require_opencl() {
  require_cmd clinfo
  require_file /usr/include/CL/cl.h
  clinfo -l 2>/dev/null | grep -q Device || { echo "no OpenCL device (clinfo -l lists none): install pocl-opencl-icd (make setup)" >&2; return 1; }
}

# hetero_check DIR DATA [ecg-bench options]: the c+opencl directory DIR passes on DATA, its
# report names the target and the device.
hetero_check() {
  local dir=$1 data=$2
  shift 2
  run --separate-stderr "$BIN/ecg-bench" "$dir" --data "$data" --runs 1 --warmup 0 "$@"
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  jq -e '.pass == true and .mismatches == 0 and .target == "c+opencl" and (.device | type == "string" and length > 0)' <<<"${lines[-1]}"
}

@test "eop: c+opencl runs forced splits (0.5, 0.37) of MatMul, Gemm, Conv (rows of H: halo, pads), pooling, and device-only (0), CPU-only (1)" {
  require_opencl
  local T="$BATS_TEST_TMPDIR" t s
  for t in test_matmul_4d test_gemm_all_attributes test_conv_with_strides_padding test_conv_with_autopad_same \
           test_averagepool_2d_pads_count_include_pad test_maxpool_2d_ceil; do
    require_file "$NODE_DATA/$t/model.onnx"
    "$BIN/onnx2ecg" "$NODE_DATA/$t/model.onnx" -o "$T/$t.ecg"
    local shares="0.5 0.37"
    case $t in test_matmul_4d|test_conv_with_strides_padding) shares="0.5 0.37 0 1" ;; esac
    for s in $shares; do
      echo "== $t --share $s"
      "$BIN/ecg-partition" --eop --share "$s" -o "$T/p.ecg" "$T/$t.ecg"
      rm -rf "$T/d"
      "$BIN/ecg-lower" --target c+opencl -o "$T/d" "$T/p.ecg"
      jq -c '.placements' "$T/d/model.json"
      case $s in
        0) jq -e '.placements | length == 1 and .[0].ran == "device" and .[0].cpu_rows == 0' "$T/d/model.json" ;;
        1) jq -e '.placements | length == 1 and .[0].ran == "cpu"' "$T/d/model.json"
           ! grep -q '__kernel' "$T/d/model.cl" || false ;;
        *) jq -e --argjson s "$s" '.placements | length == 1 and .[0].ran == "split" and .[0].cpu_rows > 0 and .[0].cpu_rows < .[0].extent
              and .[0].cpu_rows == ((.[0].extent * $s) | round)' "$T/d/model.json"
           grep -q 'clEnqueueWriteBufferRect' "$T/d/model.c"
           grep -q 'clEnqueueReadBufferRect' "$T/d/model.c" ;;
      esac
      hetero_check "$T/d" "$NODE_DATA/$t/test_data_set_0" --atol 1e-5
    done
  done
}

@test "eop: a placed kernel that cannot be cut runs whole on the CPU, the note naming the node and why" {
  require_opencl
  local T="$BATS_TEST_TMPDIR" dir="$NODE_DATA/test_softmax_axis_1"
  require_file "$dir/model.onnx"
  "$BIN/onnx2ecg" "$dir/model.onnx" | "$BIN/ecg-partition" --eop --share 0.5 -o "$T/p.ecg"
  run --separate-stderr "$BIN/ecg-lower" --target c+opencl -o "$T/d" "$T/p.ecg"
  echo "exit $status; stderr: $stderr"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"(Softmax): placed with cpu_share 0.50, but it runs whole on the CPU: this operator (no cut rule)"* ]]
  jq -e '.placements == [.placements[0]] and .placements[0].ran == "cpu" and (.placements[0].why | test("no cut rule"))' "$T/d/model.json"
  run --separate-stderr "$BIN/ecg-lower" -q --target c+opencl -o "$T/dq" "$T/p.ecg"    # -q silences the note
  [ "$status" -eq 0 ] && [ -z "$stderr" ] || false
  hetero_check "$T/d" "$dir/test_data_set_0" --atol 1e-5
  # usage: --share without --eop, with --profiles, or outside [0, 1]
  run --separate-stderr "$BIN/ecg-partition" --share 0.5 "$T/p.ecg"
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-partition" --eop --share 1.5 "$T/p.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--share expects a CPU share in [0, 1]"* ]]
}

# eop_model NAME MODE: model NAME fused, placed (MODE: a forced share, or "eop": planned from
# the profiles in tests/eop/, measured with scripts/eop_profile.sh on PoCL), lowered --target
# c+opencl, checked on its data set; at least one kernel ran split or on the device.
eop_model() {
  local name=$1 mode=$2 T="$BATS_TEST_TMPDIR" data ma
  export ECG_OUT="$ROOT/build/bats-out"
  data=$(model_data "$name") || return 1
  ma=$(model_args "$name")
  # shellcheck disable=SC2046
  "$BIN/onnx2ecg" "$ROOT/$(tail -1 <<<"$ma")" $(head -1 <<<"$ma") | "$BIN/ecg-fuse" -o "$T/$name.ecg"
  if [ "$mode" = eop ]; then
    require_file "$ROOT/tests/eop/$name.cpu.jsonl" "$ROOT/tests/eop/$name.pocl.jsonl"
    # measured on the machine that made them (another CPU model than CI's): --foreign-profiles
    "$BIN/ecg-partition" --eop --foreign-profiles --profiles "$ROOT/tests/eop/$name.cpu.jsonl" --profiles "$ROOT/tests/eop/$name.pocl.jsonl" \
      --report "$T/$name.eop.json" -o "$T/$name.p.ecg" "$T/$name.ecg"
  else
    "$BIN/ecg-partition" --eop --share "$mode" -o "$T/$name.p.ecg" "$T/$name.ecg"
  fi
  rm -rf "$T/$name-d"
  "$BIN/ecg-lower" --target c+opencl -o "$T/$name-d" "$T/$name.p.ecg"
  jq -c '[.placements[].ran] | group_by(.) | map({(.[0]): length}) | add' "$T/$name-d/model.json"
  # forced shares: kernels ran split; a plan may keep everything on the CPU (PoCL's plain loop
  # nests are far slower than the C kernels on the same cores), so only its placements are checked
  if [ "$mode" = eop ]; then jq -e '.placements | length >= 1' "$T/$name-d/model.json"
  else jq -e '[.placements[] | select(.ran == "split")] | length >= 1' "$T/$name-d/model.json"; fi
  hetero_check "$T/$name-d" "$data"
}

@test "eop: bert_tiny and squeezenet1_1 with EOP placements from measured profiles (CPU + PoCL) pass" {
  require_opencl
  eop_model bert_tiny eop
  eop_model squeezenet1_1 eop
}

@test "eop: bert_tiny (0.5) and squeezenet1_1 (0.37) with every splittable kernel split pass" {
  require_opencl
  eop_model bert_tiny 0.5
  # Q.K^T reads K through an absorbed Transpose (an input index map): cut through its permutation
  jq -e '[.placements[] | select(.node == "/MatMul")] | length == 1 and .[0].ran == "split"' "$BATS_TEST_TMPDIR/bert_tiny-d/model.json"
  eop_model squeezenet1_1 0.37
}

@test "eop: ecg-bench --profile-device times the sweeps on the CPU and on the OpenCL device and fits the three patterns" {
  require_opencl
  local T="$BATS_TEST_TMPDIR"
  "$BIN/ecg-partition" --emit-sweeps "$T/sw" --points 3 "$T/g.ecg"
  run --separate-stderr "$BIN/ecg-bench" --profile-device "$T/sw" --runs 2
  echo "exit $status; stderr: $stderr"
  [ "$status" -eq 0 ]
  # one MatMul: batch (M), cols (N) and k (K) groups of 3 samples each
  jq -e '.target == "c" and .groups == 3 and .samples_timed == 9 and ([.operators[].dim] == ["batch", "cols", "k"])
         and ([.operators[].samples | length] == [3, 3, 3])
         and (.operators[0].pattern | test("^(constant|linear|staircase)$")) and (.operators[0].fits | keys == ["constant", "linear", "staircase"])
         and ([.mape[].chosen_by] | add == 3)' <<<"$output"
  run --separate-stderr "$BIN/ecg-bench" --profile-device "$T/sw" --runs 2 --target opencl --device 0
  [ "$status" -eq 0 ]
  jq -e '.target == "opencl" and (.device | length > 0) and .groups == 3 and (.operators[0].fits.linear.mape >= 0)' <<<"$output"
  # errors: no sweeps (exit 1, nothing on stdout), --device without --target opencl, a DIR too (usage)
  run --separate-stderr "$BIN/ecg-bench" --profile-device "$T/nowhere"
  [ "$status" -eq 1 ]
  [ -z "$output" ]
  [[ "$stderr" == *"nowhere/index.tsv: No such file or directory"* ]]
  run --separate-stderr "$BIN/ecg-bench" --profile-device "$T/sw" --device 0
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-bench" --profile-device "$T/sw" "$T"
  [ "$status" -eq 2 ]
}

@test "eop: HW1W2 sweeps of a MatMul with constant weights slice the weights (N: the first columns of the full product)" {
  build_gen mkrnn build/libecg.a
  "$BATS_FILE_TMPDIR/mkrnn" lstm "$T/lstm.ecg"
  "$BIN/ecg-partition" --emit-sweeps "$T/sw" --points 4 "$T/lstm.ecg"
  # the first MatMul, x [16, 80] times W [80, 256] (a weight): batch, cols (N) and k (K) sweeps
  [ "$(grep -c '^MatMul\[16x80\]\[80x256\]' "$T/sw/index.tsv")" -eq 12 ]
  local full cols k
  full=$(awk -F'\t' '$1 ~ /^MatMul\[16x80\]/ && $2 == "batch" && $3 == 16 {print $4}' "$T/sw/index.tsv")
  cols=$(awk -F'\t' '$1 ~ /^MatMul\[16x80\]/ && $2 == "cols" && $3 == 64 {print $4}' "$T/sw/index.tsv")
  k=$(awk -F'\t' '$1 ~ /^MatMul\[16x80\]/ && $2 == "k" && $3 == 40 {print $4}' "$T/sw/index.tsv")
  "$BIN/ecg-dump" --json "$cols" | jq -e '[.tensors[] | {shape, const}] == [{"shape": [16, 80], "const": false}, {"shape": [80, 64], "const": true}, {"shape": [16, 64], "const": false}]'
  "$BIN/ecg-dump" --json "$k" | jq -e '[.tensors[].shape] == [[16, 40], [40, 256], [16, 256]]'
  for f in full cols; do
    "$BIN/ecg-lower" -q -o "$T/$f" "${!f}"
    "$BIN/ecg-bench" "$T/$f" --random 1 --runs 1 --warmup 0 -q --save "$T/$f.out" > /dev/null
  done
  # same seeded x; the cut product is the full one's first 64 columns, bit for bit
  python3 "$BATS_TEST_DIRNAME/pbfloat.py" "$T/full.out/output_0.pb" > "$T/full.json"
  python3 "$BATS_TEST_DIRNAME/pbfloat.py" "$T/cols.out/output_0.pb" > "$T/cols.json"
  jq -e -n --slurpfile f "$T/full.json" --slurpfile c "$T/cols.json" \
    '$f[0].dims == [16, 256] and $c[0].dims == [16, 64] and
     ([range(16) as $r | range(64) as $j | ($f[0].values[$r * 256 + $j] == $c[0].values[$r * 64 + $j])] | all)'
  # profiles and plans carry cols/k samples; the plan places along batch/rows only
  sh "$ROOT/scripts/eop_profile.sh" --runs 1 "$T/sw" "$T/cpu.jsonl"
  grep -q '"dim": "cols"' "$T/cpu.jsonl"
  grep -q '"dim": "k"' "$T/cpu.jsonl"
  "$BIN/ecg-partition" --eop --profiles "$T/cpu.jsonl" --profiles "$T/cpu.jsonl" --report "$T/r.json" -o "$T/p.ecg" "$T/lstm.ecg"
  jq -e '[.eop.plan[].dim] | all(. == "batch" or . == "rows")' "$T/r.json"
}
