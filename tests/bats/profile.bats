#!/usr/bin/env bats
# ecg-bench --peak and --profile (issue 13 item 1): this core's FMA peak and streaming
# bandwidth, and each kernel's time, FLOPs, bytes, GFLOP/s, fraction of peak and roofline
# position, with a Chrome-trace timeline.

load helpers

setup() {
  require_tools
  require_cmd jq
  T="$BATS_TEST_TMPDIR"
  export ECG_PEAK_CACHE="$T/peak.json"  # never the user's cache
}

@test "ecg-bench --peak: positive FMA peak and bandwidth, cached per CPU, JSON on stdout" {
  run --separate-stderr "$BIN/ecg-bench" --peak
  [ "$status" -eq 0 ]
  echo "$output" | jq -e '.fma_gflops_per_core > 1 and .bandwidth_gbs > 0.1 and (.isa | test("avx512|avx2|vec128")) and (.cpu | length > 0)'
  jq -e '.fma_gflops_per_core > 1' "$ECG_PEAK_CACHE"
  run --separate-stderr "$BIN/ecg-bench" --peak "$T"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--peak takes no DIR"* ]]
}

@test "ecg-bench --peak agrees with ../shared/bench/peak.c within 5% (DESIGN.md: honest figures)" {
  local ref="$ROOT/../shared/bench/peak.c"
  require_file "$ref"
  case "$(uname -m)" in x86_64) ;; *) echo "the reference peak.c is x86-only"; return 1 ;; esac
  cc -O2 -march=native "$ref" -o "$T/refpeak"
  # a peak is the best a core can do: each side is the best of 5 runs, and of up to 5 tries
  # (interleaved), so a busy moment on a shared machine spoils neither; stop once they agree
  local ok=0 ours=0 theirs=0 o t isa try
  for try in 1 2 3 4 5; do
    o=$("$BIN/ecg-bench" --peak | jq '.fma_gflops_per_core')
    isa=$(jq -r '.isa' "$ECG_PEAK_CACHE")
    t=$("$T/refpeak" | sed -n "s/.*AVX-512 \([0-9.]*\) GFLOP.*AVX2 \([0-9.]*\) GFLOP.*/\1 \2/p")
    [ "$isa" = avx512 ] && t=${t% *} || t=${t#* }
    ours=$(awk -v a="$ours" -v b="$o" 'BEGIN { print (b > a ? b : a) }')
    theirs=$(awk -v a="$theirs" -v b="$t" 'BEGIN { print (b > a ? b : a) }')
    echo "try $try: ours $o (best $ours), ../shared/bench/peak.c $t (best $theirs) ($isa)"
    if awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a / b; exit !(d > 0.95 && d < 1.05) }'; then ok=1; break; fi
  done
  [ "$ok" -eq 1 ]
}

@test "ecg-bench --profile: per-kernel FLOPs and bytes are the conv's, shares sum to 1, a valid trace" {
  local m="$NODE_DATA/test_conv_with_strides_padding"
  require_file "$m/model.onnx"
  "$BIN/onnx2ecg" "$m/model.onnx" | "$BIN/ecg-lower" -o "$T/low"
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --data "$m/test_data_set_0" --runs 5 --profile "$T/p.json" --trace "$T/t.json"
  [ "$status" -eq 0 ]
  # X 1x1x7x5, W 1x1x3x3, stride 2, pads 1: Y 1x1x4x3, 12 outputs x 9 multiply-adds x 2
  # FLOPs = 216; bytes: X 140 + W 36 read, Y 48 written = 224
  jq -e '.kernels | length == 1' "$T/p.json"
  jq -e '.kernels[0] | .flops == 216 and .bytes == 224 and (.intensity - 216/224 | fabs) < 1e-6' "$T/p.json"
  jq -e '.kernels[0] | .ms > 0 and .gflops > 0 and .fraction_of_peak > 0 and (.bound == "memory" or .bound == "compute")' "$T/p.json"
  jq -e '([.kernels[].share] | add - 1 | fabs) < 1e-6 and .peak_gflops > 0 and .threads == 1 and .runs == 5' "$T/p.json"
  jq -e '[.traceEvents[] | select(.ph == "X")] | length == 1 and .[0].dur > 0' "$T/t.json"
}

@test "ecg-bench --profile on a fused model: one entry per kernel, FLOPs add up to the model's" {
  local m="$SHARED_MODELS/squeezenet1_1.onnx"
  require_file "$m"
  "$BIN/onnx2ecg" "$m" --input-shape input=1x3x64x64 | "$BIN/ecg-fuse" | "$BIN/ecg-lower" -o "$T/low"
  local blocks
  blocks=$(jq '.blocks' "$T/low/model.json")
  "$BIN/ecg-bench" "$T/low" --random 1 --runs 2 -q --profile "$T/p.json" --trace "$T/t.json" > /dev/null
  jq -e --argjson b "$blocks" '.kernels | length == $b' "$T/p.json"
  # each kernel names the ECG fusion block it generates (-1: a node of no block), as
  # model.json's kernel_costs do: every block of the ECG once, in the kernels' order
  local nblk
  nblk=$("$BIN/onnx2ecg" "$m" --input-shape input=1x3x64x64 | "$BIN/ecg-fuse" | "$BIN/ecg-dump" --json | jq '.blocks | length')
  [ "$nblk" -gt 10 ]
  jq -e --argjson n "$nblk" '[.kernels[].block | select(. >= 0)] == [range($n)]' "$T/p.json"
  jq -e '[.kernel_costs[].block]' "$T/low/model.json" > "$T/kb.json"
  jq -e --slurpfile kb "$T/kb.json" '[.kernels[].block] == $kb[0]' "$T/p.json"
  local flops_model
  flops_model=$("$BIN/onnx2ecg" "$m" --input-shape input=1x3x64x64 | "$BIN/ecg-fuse" --report - -o /dev/null 2>&1 >/dev/null | jq '.. | objects | select(has("flops")) | .flops' | head -1)
  jq -e --argjson f "$flops_model" '.flops == $f' "$T/p.json"
  jq -e --argjson b "$blocks" '[.traceEvents[] | select(.ph == "X")] | length == $b' "$T/t.json"
}

@test "ecg-bench --trace without --profile is a usage error; an unwritable --profile fails cleanly" {
  local m="$NODE_DATA/test_relu"
  "$BIN/onnx2ecg" "$m/model.onnx" | "$BIN/ecg-lower" -o "$T/low"
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --trace "$T/t.json"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--trace needs --profile"* ]]
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --data "$m/test_data_set_0" --profile "$T/nodir/p.json"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"nodir/p.json"* ]]
  [ ! -e "$T/nodir" ]
}

@test "ecg-bench --interleave K: the runs split into K chunks alternating ours and ONNX Runtime's, the medians over all runs of each side; usage errors" {
  require_cmd node
  local m="$SHARED_MODELS/squeezenet1_1.onnx" real res
  require_file "$m"
  "$BIN/onnx2ecg" "$m" --input-shape input=1x3x64x64 | "$BIN/ecg-fuse" | "$BIN/ecg-lower" -o "$T/low"
  make -s -C "$T/low" >/dev/null
  # both sides log each timed invocation's --runs: ours through a wrapper in place of the
  # built runner (make sees it newer than the sources), ONNX Runtime's through a script
  # that logs, then runs the real ort_run.mjs
  mv "$T/low/runner" "$T/low/runner.real"
  printf '#!/bin/sh\ncase " $* " in *" --runs "*) echo "ours $*" | sed "s/.*--runs \\([0-9]*\\).*/ours \\1/" >> %s/order;; esac\nexec %s/low/runner.real "$@"\n' "$T" "$T" > "$T/low/runner"
  chmod +x "$T/low/runner"
  real="$ROOT/tools/bench/ort_run.mjs"
  cat > "$T/ort_log.mjs" <<MJS
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
const a = process.argv.slice(2);
fs.appendFileSync('$T/order', 'ort ' + a[a.indexOf('--runs') + 1] + '\n');
process.stdout.write(execFileSync(process.execPath, ['$real', ...a], { env: { ...process.env, NODE_PATH: '$ROOT/tools/bench/node_modules' } }));
MJS
  res=$(ECG_BENCH_ORT="$T/ort_log.mjs" "$BIN/ecg-bench" "$T/low" --random 1 --ort --check --runs 10 --warmup 1 --interleave 4); echo "$res"
  cat "$T/order"
  [ "$(tr '\n' ' ' < "$T/order")" = "ours 3 ort 3 ours 3 ort 3 ours 2 ort 2 ours 2 ort 2 " ]
  jq -e '.pass == true and .runs == 10 and .interleave == 4 and .ratio > 0 and .ort_median_ms > 0 and .p10_ms <= .median_ms' <<<"$res"
  # without it, one chunk each
  rm "$T/order"
  res=$(ECG_BENCH_ORT="$T/ort_log.mjs" "$BIN/ecg-bench" "$T/low" --random 1 --ort --runs 10 --warmup 1); echo "$res"
  [ "$(tr '\n' ' ' < "$T/order")" = "ours 10 ort 10 " ]
  jq -e '.runs == 10 and (has("interleave") | not)' <<<"$res"
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --random 1 --interleave 2
  [ "$status" -eq 2 ] && [[ "$stderr" == *"--interleave needs --ort"* ]] || false
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --random 1 --ort --runs 3 --interleave 4
  [ "$status" -eq 2 ] && [[ "$stderr" == *"exceeds --runs 3"* ]] || false
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --random 1 --ort --interleave 2 --profile "$T/p.json"
  [ "$status" -eq 2 ] && [[ "$stderr" == *"without --profile"* ]] || false
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --random 1 --ort --interleave 0
  [ "$status" -eq 2 ]
}

@test "ecg-bench --ort-profile: ONNX Runtime's per-node profile beside ours (its own run); errors fail cleanly" {
  local m="$SHARED_MODELS/squeezenet1_1.onnx"
  require_file "$m"
  "$BIN/onnx2ecg" "$m" --input-shape input=1x3x64x64 | "$BIN/ecg-fuse" | "$BIN/ecg-lower" -o "$T/low"
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --random 1 --runs 4 --warmup 1 --ort --profile "$T/p.json" --ort-profile "$T/o.json"
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  # one entry per node ONNX Runtime ran (its own fusions: squeezenet1_1's 26 convs are
  # there under their output names, each with its activation), positive medians that add
  # up to total_ms, shares that add up to 1; the run's settings recorded
  jq -e '.threads == 1 and .runs == 4 and (.nodes | length) >= 26' "$T/o.json"
  jq -e '[.nodes[] | select(.op == "Conv")] | length == 26' "$T/o.json"
  jq -e 'all(.nodes[]; .median_ms >= 0 and (.name | length) > 0) and ([.nodes[].median_ms] | add) > 0' "$T/o.json"
  jq -e '(([.nodes[].median_ms] | add) - .total_ms | fabs) < 1e-6 and (([.nodes[].share] | add) - 1 | fabs) < 1e-6' "$T/o.json"
  # the same by hand, and a model ONNX Runtime cannot load: an error, no file
  run --separate-stderr "$BIN/ecg-bench" "$T/low" --random 1 --runs 2 --ort-profile "$T/bad.json" --model "$T/p.json"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"cannot load model"* ]]
  [ ! -e "$T/bad.json" ]
}
