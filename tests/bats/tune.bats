#!/usr/bin/env bats
# Schedules (ECG schema 6, intensive_fusion schema 8) and ecg-partition --tune (AGO, INFOCOM
# 2023, §V: SPLIT/JOIN over the subgraphs, every schedule measured with the lowered code):
# schedules round-trip through ecg-dump and the validator, survive a renumbering stage,
# all-default knobs lower byte for byte as no schedule, forced knobs change model.c and stay
# correct against ONNX Runtime, a knob that does not apply is refused naming the node, a tiny
# tuning run writes its log, resumes from it without measuring again, and its ECG lowers and
# passes. Intensive fusion (§III-B) as a knob: off lowers an intensive-fusion block as its
# stages' kernels (every block off: ecg-fuse's plan without --intensive, byte for byte), on as
# the fused kernel; the tuner searches it, logs it, and AGO-NI pins it off.

load helpers

setup_file() {
  build_gen mkecg build/libecg.a
}

setup() {
  require_tools
  require_file "$BIN/ecg-fuse" "$BIN/ecg-partition" "$BATS_FILE_TMPDIR/mkecg"
  export ECG_OUT="$ROOT/build/bats-out-tune"
  mkdir -p "$ECG_OUT"
  M="$ROOT/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
  require_file "$M"
  [ -f "$ECG_OUT/cls.ecg" ] || "$BIN/onnx2ecg" "$M" --input-shape x=1x3x48x192 | "$BIN/ecg-fuse" --intensive | "$BIN/ecg-partition" -o "$ECG_OUT/cls.ecg"
}

@test "schedule: knobs round-trip through ecg-dump; out-of-range values are refused naming the node" {
  "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --set-schedule 0:t=1,a=gemm,u=4 --set-schedule 2:v=8 -o "$ECG_OUT/s.ecg"
  "$BIN/ecg-dump" --json "$ECG_OUT/s.ecg" > "$ECG_OUT/s.json"
  jq -e '.blocks[0].schedule | .threads == 1 and .conv_algo == "gemm" and .unroll == 4 and .vector_width == 0' "$ECG_OUT/s.json"
  jq -e '.blocks[2].schedule | .threads == 0 and .conv_algo == "auto" and .vector_width == 8' "$ECG_OUT/s.json"
  jq -e '[.blocks[] | select(.schedule)] | length == 2' "$ECG_OUT/s.json"
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --set-schedule 0:u=-1 -o "$ECG_OUT/bad.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"block 0 (node 'p2o.Conv.0', Conv)"*"unroll -1"* ]]
  [ ! -e "$ECG_OUT/bad.ecg" ]
  # a hand-made ECG whose schedule is out of range: every reader refuses it
  "$BATS_FILE_TMPDIR/mkecg" badschedule "$ECG_OUT/badsched.ecg"
  run --separate-stderr "$BIN/ecg-lower" -o "$ECG_OUT/badsched" "$ECG_OUT/badsched.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"node 'relu'"*"threads -2"*"out of range"* ]]
  [ ! -e "$ECG_OUT/badsched" ]
  run --separate-stderr "$BIN/ecg-dump" --json "$ECG_OUT/badsched.ecg"
  [ "$status" -eq 1 ]
}

@test "schedule: kept on its block when the ECG is partitioned again (renumbering by sort and fold: tests/unit/graph_test.c test_schedules)" {
  "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --set-schedule 5:v=16 -o "$ECG_OUT/r.ecg"
  "$BIN/ecg-dump" --json "$ECG_OUT/r.ecg" | jq -c '.blocks[5] | [.nodes, .schedule.vector_width]' > "$ECG_OUT/r1.txt"
  # relay replaces the subgraphs; ecg-fuse would re-form blocks and so drop them (its documented rule)
  "$BIN/ecg-partition" --strategy relay "$ECG_OUT/r.ecg" -o "$ECG_OUT/r2.ecg"
  "$BIN/ecg-dump" --json "$ECG_OUT/r2.ecg" | jq -c '.blocks[5] | [.nodes, .schedule.vector_width]' > "$ECG_OUT/r2.txt"
  cmp "$ECG_OUT/r1.txt" "$ECG_OUT/r2.txt"
  grep -q ',16]' "$ECG_OUT/r2.txt"
}

@test "schedule: all knobs 0 lower byte for byte as no schedule" {
  "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --set-schedule all:t=0,a=auto,v=0,u=0 -o "$ECG_OUT/z.ecg"
  "$BIN/ecg-dump" --json "$ECG_OUT/z.ecg" | jq -e '(.blocks | length) as $n | [.blocks[] | select(.schedule)] | length == $n'
  rm -rf "$ECG_OUT/l0" "$ECG_OUT/lz"
  "$BIN/ecg-lower" -o "$ECG_OUT/l0" "$ECG_OUT/cls.ecg"
  "$BIN/ecg-lower" -o "$ECG_OUT/lz" "$ECG_OUT/z.ecg"
  cmp "$ECG_OUT/l0/model.c" "$ECG_OUT/lz/model.c"
}

@test "schedule: forced knobs change model.c and the outputs stay correct against ONNX Runtime" {
  rm -rf "$ECG_OUT/l0"
  "$BIN/ecg-lower" -o "$ECG_OUT/l0" "$ECG_OUT/cls.ecg"
  local spec nth=0 res
  # vector_width on block 2 (a generated epilogue loop), not on all: a Conv whose activation
  # runs as the runtime kernel's builtin epilogue has no generated loop, and ecg-lower
  # refuses the knob there (the next test)
  for spec in "0:a=gemm,u=4" "0:a=gemm_t" "all:t=1" "2:v=8"; do
    nth=$((nth + 1))
    "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --set-schedule "$spec" -o "$ECG_OUT/f$nth.ecg"
    rm -rf "$ECG_OUT/f$nth"
    "$BIN/ecg-lower" -o "$ECG_OUT/f$nth" "$ECG_OUT/f$nth.ecg"
    ! cmp -s "$ECG_OUT/l0/model.c" "$ECG_OUT/f$nth/model.c" || false
    res=$("$BIN/ecg-bench" "$ECG_OUT/f$nth" --random 1 --ort --check --runs 2 --warmup 0)
    echo "$spec: $res"
    jq -e '.pass == true' <<<"$res"
  done
  # the two conv strategies really differ in the code: the params carry the forced algorithm
  grep -q 'ECG_ACT_NONE, 0, 0, 0, 0}, 1}' "$ECG_OUT/f1/model.c"
  grep -q 'ECG_ACT_NONE, 0, 0, 0, 0}, 2}' "$ECG_OUT/f2/model.c"
  grep -q 'omp_set_num_threads(nt_ < 1 ? nt_ : 1)' "$ECG_OUT/f3/model.c"
  grep -q 'simdlen(8)' "$ECG_OUT/f4/model.c"
}

@test "schedule: a knob its kernel cannot take is refused by ecg-lower naming the node" {
  "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --set-schedule 3:a=winograd -o "$ECG_OUT/w.ecg"
  run --separate-stderr "$BIN/ecg-lower" -o "$ECG_OUT/w" "$ECG_OUT/w.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"node '"*"(Conv): schedule conv_algo winograd does not apply"* ]]
  [ ! -e "$ECG_OUT/w" ]
  "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --set-schedule 0:v=8,u=2 -o "$ECG_OUT/vu.ecg"
  run --separate-stderr "$BIN/ecg-lower" -o "$ECG_OUT/vu" "$ECG_OUT/vu.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"exclude each other"* ]]
  "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --set-schedule all:v=8 -o "$ECG_OUT/va.ecg"
  run --separate-stderr "$BIN/ecg-lower" -o "$ECG_OUT/va" "$ECG_OUT/va.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"(Conv): schedule vector_width 8 / unroll 0: this kernel has no generated loop they apply to"* ]]
  [ ! -e "$ECG_OUT/va" ]
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --set-schedule 0:t=1
  [ "$status" -eq 2 ]
}

@test "ecg-partition --tune: a tiny run writes its log, resumes without measuring, and its ECG passes against ONNX Runtime" {
  local d="$ECG_OUT/tune"
  rm -rf "$d"; mkdir -p "$d"
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --budget 10 --runs 3 --warmup 1 --tune-log "$d/log.jsonl" --report "$d/r1.json" -o "$d/t1.ecg"
  echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$(wc -l < "$d/log.jsonl")" -ge 10 ]
  jq -e '.partition.tune | .budget == 10 and .explored == 10 and .measured == 10 and .from_log == 0' "$d/r1.json"
  jq -se 'all(.[]; (.key | length == 16) and (.cpu | length > 0) and .threads == 1 and (.invalid or .ms > 0))' "$d/log.jsonl"
  # not a terminal: one plain line per subgraph
  [[ "$stderr" == *"ecg-partition: tune: subgraph 1/"* ]]
  [[ "$stderr" != *$'\r'* ]]
  local nlog; nlog=$(wc -l < "$d/log.jsonl")
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --budget 10 --runs 3 --warmup 1 --tune-log "$d/log.jsonl" --report "$d/r2.json" -o "$d/t2.ecg"
  [ "$status" -eq 0 ]
  jq -e '.partition.tune | .explored == 10 and .measured == 0 and .from_log == 10' "$d/r2.json"
  [ "$(wc -l < "$d/log.jsonl")" -eq "$nlog" ]
  cmp "$d/t1.ecg" "$d/t2.ecg"
  # a node of no fusion block carries its schedule in a one-node block of plan "tune", only when a knob is set
  "$BIN/ecg-dump" --json "$d/t1.ecg" | jq -e '[.blocks[] | select(.plan == "tune")] | all((.nodes | length) == 1 and .schedule != null)'
  rm -rf "$d/lo"
  "$BIN/ecg-lower" -o "$d/lo" "$d/t1.ecg"
  run --separate-stderr "$BIN/ecg-bench" "$d/lo" --random 1 --ort --check --runs 2 --warmup 0
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  jq -e '.pass == true' <<<"$output"
}

@test "ecg-partition --tune: --emit-candidates and --measure farm the first round out; the tuner reuses their lines" {
  local d="$ECG_OUT/farm"
  rm -rf "$d"; mkdir -p "$d"
  "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --budget 4 --no-reformer --tune-in subgraph --emit-candidates "$d/cand"
  local n; n=$(ls "$d/cand"/*.ecg | wc -l)
  [ "$n" -ge 1 ] && [ "$n" -le 4 ] || false
  local f
  for f in "$d/cand"/*.ecg; do "$BIN/ecg-partition" --measure "$f" --runs 2 --warmup 0 >> "$d/log.jsonl"; done
  [ "$(wc -l < "$d/log.jsonl")" -eq "$n" ]
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --budget 4 --no-reformer --tune-in subgraph --runs 2 --warmup 0 --tune-log "$d/log.jsonl" --report "$d/r.json" -o "$d/t.ecg"
  [ "$status" -eq 0 ]
  jq -e '.partition.tune | .from_log >= 1 and .no_reformer and .tune_in == "subgraph"' "$d/r.json"
  jq -se 'all(.[]; .in == "subgraph")' "$d/log.jsonl"
}

@test "ecg-partition --tune-in model: each unit's time is the sum of its blocks' kernels in the profiled model (the units of all subgraphs add up to the model)" {
  local d="$ECG_OUT/inmodel"
  rm -rf "$d"; mkdir -p "$d"
  # AGO-NR (the subgraph itself is the unit), a short search per subgraph (--patience 1): the
  # first line of each subgraph is its start, the input's schedules; every kernel of the
  # model lies in exactly one subgraph
  local nsub; nsub=$("$BIN/ecg-dump" --json "$ECG_OUT/cls.ecg" | jq '.subgraphs | length')
  [ "$nsub" -ge 3 ]
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --no-reformer --budget 100 --patience 1 --runs 20 --warmup 3 --tune-log "$d/log.jsonl" --report "$d/r.json" -o "$d/t.ecg"
  echo "$stderr"
  [ "$status" -eq 0 ]
  jq -e '.partition.tune | .tune_in == "model" and .measured >= 1' "$d/r.json"
  jq -se --argjson n "$nsub" 'all(.[]; .in == "model" and (.invalid or .ms > 0)) and ([.[].sub] | unique | length == $n)' "$d/log.jsonl"
  # the whole model, profiled the same way: the starts add up to its kernels' total, within run-to-run noise
  rm -rf "$d/lo"
  "$BIN/ecg-lower" -o "$d/lo" "$ECG_OUT/cls.ecg"
  "$BIN/ecg-bench" "$d/lo" --random 1 --runs 20 --warmup 3 -q --profile "$d/p.json" > /dev/null
  local units total
  units=$(jq -s 'group_by(.sub) | map(.[0].ms) | add' "$d/log.jsonl"); total=$(jq '.total_ms' "$d/p.json")
  echo "units $units, model $total"
  awk -v u="$units" -v t="$total" 'BEGIN { exit !(u > 0.75 * t && u < 1.33 * t) }'
  # a unit is only part of the model: each below the total
  jq -se --argjson t "$total" 'all(.[]; .invalid or .ms < $t)' "$d/log.jsonl"
}

# Fake ecg-lower and ecg-bench next to a copy of ecg-partition (the tuner runs the tools
# beside its binary): a candidate with a knob set (unroll, vector_width, threads, conv_algo
# or intensive_fusion off) measures 0.5 ms the first time its file is timed and 1 ms after,
# the default schedule 1 ms; with FAKE_GOOD=U, unroll U measures 0.5 ms every time. So a
# gain seen once is noise and a gain seen every time is real.
fake_tools() {
  local t=$1
  mkdir -p "$t"
  cp "$BIN/ecg-partition" "$t/"
  cat > "$t/ecg-lower" <<EOS
#!/bin/sh
# ecg-lower [-q] -o DIR FILE: the candidate's knobs and its file's hash into DIR
while [ \$# -gt 1 ]; do case \$1 in -o) out=\$2; shift 2 ;; *) shift ;; esac; done
mkdir -p "\$out"
cksum < "\$1" | cut -d' ' -f1 > "\$out/id"
"$BIN/ecg-dump" --json "\$1" | jq -c '[.blocks[].schedule | select(.) | select(.unroll > 0 or .vector_width > 0 or .threads > 0 or .conv_algo != "auto" or .intensive_fusion == "off")] | [length, (map(.unroll) | max // 0)]' > "\$out/knobs"
EOS
  cat > "$t/ecg-bench" <<EOS
#!/bin/sh
# ecg-bench DIR ...: 0.5 ms on a knob's first timing (or always for unroll \$FAKE_GOOD), else 1
d=\$1; id=\$(cat "\$d/id"); set -- \$(jq -r '.[]' "\$d/knobs")
ms=1
if [ "\$1" -gt 0 ]; then
  if [ -n "\${FAKE_GOOD:-}" ] && [ "\$2" = "\$FAKE_GOOD" ]; then ms=0.5
  elif ! grep -qx "\$id" "$t/seen" 2>/dev/null; then ms=0.5; fi
fi
echo "\$id" >> "$t/seen"
echo "{\"median_ms\": \$ms}"
EOS
  chmod +x "$t/ecg-lower" "$t/ecg-bench"
}

@test "ecg-partition --tune --confirm: a gain measured once is rejected as noise, a repeated one is kept" {
  local d="$BATS_TEST_TMPDIR"
  fake_tools "$d/t0"
  # --confirm 0: every first-run gain is taken
  run --separate-stderr "$d/t0/ecg-partition" "$ECG_OUT/cls.ecg" --tune --no-reformer --tune-in subgraph --budget 12 --confirm 0 --report "$d/r0.json" -o "$d/t0.ecg"
  [ "$status" -eq 0 ]
  jq -e '.partition.tune | .confirm == 0 and .confirm_runs == 0 and .confirmed == 0 and .rejected_as_noise == 0 and .blocks_scheduled > 0' "$d/r0.json"
  # --confirm 2 (the default): each such gain measured twice more against the best, rejected
  fake_tools "$d/t2"
  run --separate-stderr "$d/t2/ecg-partition" "$ECG_OUT/cls.ecg" --tune --no-reformer --tune-in subgraph --budget 12 --tune-log "$d/l2.jsonl" --report "$d/r2.json" -o "$d/t2.ecg"
  [ "$status" -eq 0 ]
  jq -e '.partition.tune | .confirm == 2 and .rejected_as_noise > 0 and .confirmed == 0 and .confirm_runs == 4 * .rejected_as_noise and .blocks_scheduled == 0 and .explored == 12' "$d/r2.json"
  # the re-measurements are logged ("confirm": j): resumed, nothing is measured again
  jq -se --slurpfile r "$d/r2.json" '([.[] | select(.confirm)] | length) == $r[0].partition.tune.confirm_runs' "$d/l2.jsonl"
  local n; n=$(wc -l < "$d/l2.jsonl")
  run --separate-stderr "$d/t2/ecg-partition" "$ECG_OUT/cls.ecg" --tune --no-reformer --tune-in subgraph --budget 12 --tune-log "$d/l2.jsonl" --report "$d/r2b.json" -o "$d/t2b.ecg"
  [ "$status" -eq 0 ]
  jq -e '.partition.tune | .measured == 0 and .from_log == 12' "$d/r2b.json"
  [ "$(wc -l < "$d/l2.jsonl")" -eq "$n" ]
  cmp "$d/t2.ecg" "$d/t2b.ecg"
  # a knob that is faster on every run (unroll 4) is confirmed and kept
  fake_tools "$d/t4"
  FAKE_GOOD=4 run --separate-stderr "$d/t4/ecg-partition" "$ECG_OUT/cls.ecg" --tune --no-reformer --tune-in subgraph --budget 40 --patience 40 --report "$d/r4.json" -o "$d/t4.ecg"
  [ "$status" -eq 0 ]
  jq -e '.partition.tune | .confirmed > 0 and .blocks_scheduled > 0' "$d/r4.json"
  "$BIN/ecg-dump" --json "$d/t4.ecg" | jq -e '[.blocks[].schedule | select(.) | select(.unroll > 0 or .vector_width > 0 or .threads > 0 or .conv_algo != "auto")] | length > 0 and all(.unroll == 4)'
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --confirm -1
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--confirm expects an integer 0..100"* ]]
}

@test "ecg-partition --tune: usage errors" {
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --budget 0
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune-log x.jsonl
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-partition" --measure "$ECG_OUT/nonexistent.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"nonexistent.ecg"* ]]
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --tune-in everywhere
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--tune-in expects model or subgraph"* ]]
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune-in subgraph
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/cls.ecg" --tune --emit-candidates "$BATS_TEST_TMPDIR/c"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"needs --tune-in subgraph"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/c" ]
}

@test "schedule: every conv_algo forced on a 3x3 stride-1 conv (resnet18 at 56x56) stays correct against ONNX Runtime" {
  local line path; line=$(grep -v '^#' "$ROOT/scripts/models.tsv" | awk -F'\t' '$1 == "resnet18"'); path=$(cut -f2 <<<"$line")
  require_file "$ROOT/$path"
  "$BIN/onnx2ecg" "$ROOT/$path" --input-shape input=1x3x56x56 | "$BIN/ecg-fuse" | "$BIN/ecg-partition" -o "$ECG_OUT/r18.ecg"
  local a res
  for a in winograd gemm gemm_t blocked; do
    # block 1 is the first 3x3 stride-1 conv (64 channels, 14x14 after the stem)
    "$BIN/ecg-partition" "$ECG_OUT/r18.ecg" --set-schedule "1:a=$a" -o "$ECG_OUT/r18-$a.ecg"
    rm -rf "$ECG_OUT/r18-$a"
    "$BIN/ecg-lower" -o "$ECG_OUT/r18-$a" "$ECG_OUT/r18-$a.ecg"
    res=$("$BIN/ecg-bench" "$ECG_OUT/r18-$a" --random 1 --ort --check --runs 1 --warmup 0)
    echo "$a: $res"
    jq -e '.pass == true' <<<"$res"
  done
  ! cmp -s "$ECG_OUT/r18-winograd/model.c" "$ECG_OUT/r18-gemm/model.c" || false
}

# mv2_56: mobilenet_v2 at 56x56 fused with --intensive ($ECG_OUT/mv2i.ecg) and without
# ($ECG_OUT/mv2n.ecg), both partitioned; IBR: the ids of the intensive-fusion blocks (more
# than one Many-to-Many member), space-separated.
# lower_refused ECG SPEC OUT TEXT: ECG with --set-schedule SPEC (OUT.ecg) makes ecg-lower exit 1
# with TEXT in its message, leaving no directory OUT
lower_refused() {
  "$BIN/ecg-partition" "$1" --set-schedule "$2" -o "$3.ecg"
  run --separate-stderr "$BIN/ecg-lower" -o "$3" "$3.ecg"
  echo "$stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"$4"* ]]
  [ ! -e "$3" ]
}

mv2_56() {
  local m="$SHARED_MODELS/mobilenet_v2.onnx"
  require_file "$m"
  if [ ! -f "$ECG_OUT/mv2n.ecg" ]; then
    "$BIN/onnx2ecg" "$m" --input-shape input=1x3x56x56 -o "$ECG_OUT/mv2.ecg"
    "$BIN/ecg-fuse" --intensive "$ECG_OUT/mv2.ecg" | "$BIN/ecg-partition" -o "$ECG_OUT/mv2i.ecg"
    "$BIN/ecg-fuse" "$ECG_OUT/mv2.ecg" | "$BIN/ecg-partition" -o "$ECG_OUT/mv2n.ecg"
  fi
  IBR=$("$BIN/ecg-dump" --json "$ECG_OUT/mv2i.ecg" | jq -r '.nodes as $n | [.blocks[] | select([.nodes[] | $n[.].mapping | select(. == "Many-to-Many")] | length > 1) | .id] | map(tostring) | join(" ")')
}

@test "schedule: intensive_fusion off lowers an intensive-fusion block as its stages' kernels, on as the fused kernel, every block off as ecg-fuse without --intensive; outputs correct" {
  mv2_56
  echo "intensive blocks: $IBR"
  [ "$(wc -w <<<"$IBR")" -eq 17 ] # 17 inverted residuals, the first (no expansion) with the stem conv before it
  local d="$ECG_OUT/ifu" b res
  rm -rf "$d"; mkdir -p "$d"
  "$BIN/ecg-lower" -o "$d/l0" "$ECG_OUT/mv2i.ecg"
  "$BIN/ecg-lower" -o "$d/ln" "$ECG_OUT/mv2n.ecg"
  local k0 kn; k0=$(jq .kernels "$d/l0/model.json"); kn=$(jq .kernels "$d/ln/model.json")
  echo "kernels: intensive $k0, without $kn"
  [ "$kn" -eq $((k0 + 17 * 2)) ] # 17 chains pw-dw-pw or stem-dw-pw (3 kernels each)
  # one block off: its three stages, three kernels where there was one
  b=$(cut -d' ' -f3 <<<"$IBR")
  "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$b:i=off" -o "$d/one.ecg"
  "$BIN/ecg-dump" --json "$d/one.ecg" | jq -e --argjson b "$b" '.blocks[$b].schedule.intensive_fusion == "off"'
  "$BIN/ecg-lower" -o "$d/one" "$d/one.ecg"
  [ "$(jq .kernels "$d/one/model.json")" -eq $((k0 + 2)) ]
  [ "$(grep -c 'intensive fusion' "$d/one/model.c")" -eq $(($(grep -c 'intensive fusion' "$d/l0/model.c") - 1)) ]
  res=$("$BIN/ecg-bench" "$d/one" --random 1 --ort --check --runs 1 --warmup 0); echo "$res"
  jq -e '.pass == true' <<<"$res"
  # on: the fused kernel, the code of no schedule byte for byte
  "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$b:i=on" -o "$d/on.ecg"
  "$BIN/ecg-lower" -o "$d/on" "$d/on.ecg"
  [ "$(jq .kernels "$d/on/model.json")" -eq "$k0" ]
  cmp "$d/l0/model.c" "$d/on/model.c"
  # every intensive-fusion block off (--set-schedule takes at most 16 at a time): exactly the
  # kernels of the plan without --intensive (the stem chain's too: the stem conv's own block)
  local set=() n=0 f="$ECG_OUT/mv2i.ecg"
  for b in $IBR; do
    set+=(--set-schedule "$b:i=off"); n=$((n + 1))
    if [ "${#set[@]}" -eq 32 ] || [ "$n" -eq 17 ]; then
      "$BIN/ecg-partition" "$f" "${set[@]}" -o "$d/off$n.ecg"; f="$d/off$n.ecg"; set=()
    fi
  done
  "$BIN/ecg-dump" --json "$f" | jq -e '[.blocks[] | select(.schedule) | .schedule.intensive_fusion == "off"] | length == 17 and all'
  "$BIN/ecg-lower" -o "$d/off" "$f"
  [ "$(jq .kernels "$d/off/model.json")" -eq "$kn" ]
  cmp "$d/ln/model.c" "$d/off/model.c"
  res=$("$BIN/ecg-bench" "$d/off" --random 1 --ort --check --runs 1 --warmup 0); echo "$res"
  jq -e '.pass == true' <<<"$res"
  # the block's other knobs apply to the stages that take them: gemm to the two pointwise convs
  b=$(cut -d' ' -f3 <<<"$IBR")
  "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$b:i=off,a=gemm" -o "$d/g.ecg"
  "$BIN/ecg-lower" -o "$d/g" "$d/g.ecg"
  [ "$(grep -c 'ECG_ACT_[A-Z]*, [^}]*}, 1};' "$d/g/model.c")" -eq 2 ]
  res=$("$BIN/ecg-bench" "$d/g" --random 1 --ort --check --runs 1 --warmup 0); echo "$res"
  jq -e '.pass == true' <<<"$res"
}

@test "schedule: intensive_fusion is refused on a block that is no intensive-fusion chain, and a knob no stage takes, naming the node" {
  mv2_56
  local d="$ECG_OUT/ifu-bad" b
  rm -rf "$d"; mkdir -p "$d"
  # the last conv (1x1 320 -> 1280) with its activation: no chain
  local last
  last=$("$BIN/ecg-dump" --json "$ECG_OUT/mv2i.ecg" | jq -r '.nodes as $n | [.blocks[] | select([.nodes[] | $n[.].op] == ["Conv", "Clip"]) | .id] | if length == 1 then .[0] else error("blocks") end')
  for v in on off; do
    "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$last:i=$v" -o "$d/$v.ecg"
    run --separate-stderr "$BIN/ecg-lower" -o "$d/$v" "$d/$v.ecg"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"node '"*"(Conv): schedule intensive_fusion $v (block $last): the block is no intensive-fusion chain"* ]]
    [ ! -e "$d/$v" ]
  done
  b=$(cut -d' ' -f3 <<<"$IBR")
  lower_refused "$ECG_OUT/mv2i.ecg" "$b:i=off,a=winograd" "$d/w" "schedule conv_algo winograd: no stage kernel of this block (intensive_fusion off)"
  # the fused kernel is no Conv through ecg_rt1_conv2d
  lower_refused "$ECG_OUT/mv2i.ecg" "$b:i=on,a=gemm" "$d/g" "schedule conv_algo gemm: this kernel is no Conv"
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$b:i=sideways" -o "$d/x.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"intensive_fusion 'sideways' (auto, on, off)"* ]]
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$b:i=7" -o "$d/x.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"intensive_fusion 7 out of range"* ]]
}

@test "schedule: tile sets the fused inverted-residual kernel's output rows per band (outputs correct); tile 0 is no schedule; refused on another kernel and on a block lowered as its stages" {
  mv2_56
  local d="$ECG_OUT/tile" b last res
  rm -rf "$d"; mkdir -p "$d"
  "$BIN/ecg-lower" -o "$d/l0" "$ECG_OUT/mv2i.ecg"
  b=$(cut -d' ' -f3 <<<"$IBR")
  for r in 1 3 100; do
    "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$b:r=$r" -o "$d/r$r.ecg"
    "$BIN/ecg-dump" --json "$d/r$r.ecg" | jq -e --argjson b "$b" --argjson r "$r" '.blocks[$b].schedule.tile == [$r]'
    "$BIN/ecg-lower" -o "$d/r$r" "$d/r$r.ecg"
    # the kernel's parameters end with band_rows; every other chain keeps 0
    [ "$(grep -c "^static const ecg_ibr_params ibr[0-9]* = {.*, $r};" "$d/r$r/model.c")" -eq 1 ]
    [ "$(grep -c '^static const ecg_ibr_params ibr[0-9]* = {.*, 0};' "$d/r$r/model.c")" -eq $(($(grep -c '^static const ecg_ibr_params' "$d/l0/model.c") - 1)) ]
    res=$("$BIN/ecg-bench" "$d/r$r" --random 1 --ort --check --runs 1 --warmup 0); echo "$res"
    jq -e '.pass == true' <<<"$res"
  done
  "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$b:r=0" -o "$d/r0.ecg"
  "$BIN/ecg-lower" -o "$d/r0" "$d/r0.ecg"
  cmp "$d/l0/model.c" "$d/r0/model.c"
  last=$("$BIN/ecg-dump" --json "$ECG_OUT/mv2i.ecg" | jq -r '.nodes as $n | [.blocks[] | select([.nodes[] | $n[.].op] == ["Conv", "Clip"]) | .id] | if length == 1 then .[0] else error("blocks") end')
  lower_refused "$ECG_OUT/mv2i.ecg" "$last:r=4" "$d/c" "(Conv): schedule tile (block $last): this kernel is no intensive-fusion kernel"
  lower_refused "$ECG_OUT/mv2i.ecg" "$b:i=off,r=4" "$d/s" "schedule tile (block $b): the block is lowered as its stage kernels (intensive_fusion off)"
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --set-schedule "$b:r=-3" -o "$d/x.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"schedule tile 0 is -3 (tiles are > 0)"* ]]
}

@test "ecg-partition --tune: intensive_fusion is searched, logged (resumable) and chosen per intensive-fusion block; --no-intensive pins it off" {
  mv2_56
  local d="$ECG_OUT/tune-ifu"
  rm -rf "$d"; mkdir -p "$d"
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --tune --budget 30 --runs 2 --warmup 0 --tune-log "$d/log.jsonl" --report "$d/r1.json" -o "$d/t1.ecg"
  echo "$stderr"
  [ "$status" -eq 0 ]
  # every schedule in the log carries the knob (i); intensive-fusion blocks were measured both ways
  jq -se 'all(.[]; .sched | test("^(b[0-9]+:t[0-9]+a[0-9]+v[0-9]+u[0-9]+i[0-2](r[0-9]+)?;?)+$"))' "$d/log.jsonl"
  jq -se '[.[] | select(.invalid == false) | .sched] | (any(test("i1")) and any(test("i2")))' "$d/log.jsonl"
  # the tuned intensive-fusion blocks state their choice in the schedule, and the report counts them
  local on off; on=$(jq .partition.tune.intensive_on "$d/r1.json"); off=$(jq .partition.tune.intensive_off "$d/r1.json")
  echo "on $on off $off"
  [ $((on + off)) -ge 1 ]
  "$BIN/ecg-dump" --json "$d/t1.ecg" > "$d/t1.json"
  [ "$(jq '[.blocks[] | select(.schedule.intensive_fusion == "on")] | length' "$d/t1.json")" -eq "$on" ]
  [ "$(jq '[.blocks[] | select(.schedule.intensive_fusion == "off")] | length' "$d/t1.json")" -eq "$off" ]
  # resumed from the log: nothing measured again, the same ECG
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --tune --budget 30 --runs 2 --warmup 0 --tune-log "$d/log.jsonl" --report "$d/r2.json" -o "$d/t2.ecg"
  [ "$status" -eq 0 ]
  jq -e '.partition.tune | .measured == 0 and .from_log >= 1' "$d/r2.json"
  cmp "$d/t1.ecg" "$d/t2.ecg"
  "$BIN/ecg-lower" -o "$d/l1" "$d/t1.ecg"
  local k0 k1 res; k0=$("$BIN/ecg-lower" -o "$d/l0" "$ECG_OUT/mv2i.ecg" && jq .kernels "$d/l0/model.json"); k1=$(jq .kernels "$d/l1/model.json")
  echo "kernels $k0 -> $k1"
  [ "$k1" -ge $((k0 + off * 2 - 1)) ] && [ "$k1" -le $((k0 + off * 2)) ] || false
  res=$("$BIN/ecg-bench" "$d/l1" --random 1 --ort --check --runs 1 --warmup 0); echo "$res"
  jq -e '.pass == true' <<<"$res"
  # AGO-NI on the same ECG: every intensive-fusion block off from the start, never on
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --tune --no-intensive --budget 20 --runs 2 --warmup 0 --tune-log "$d/ni.jsonl" --report "$d/ni.json" -o "$d/ni.ecg"
  [ "$status" -eq 0 ]
  jq -se '[.[] | .sched | test("i1")] | any | not' "$d/ni.jsonl"
  jq -e '.partition.tune | .intensive_on == 0 and .no_intensive' "$d/ni.json"
  "$BIN/ecg-lower" -o "$d/lni" "$d/ni.ecg"
  ! grep -q 'intensive fusion' "$d/lni/model.c" || false
  res=$("$BIN/ecg-bench" "$d/lni" --random 1 --ort --check --runs 1 --warmup 0); echo "$res"
  jq -e '.pass == true' <<<"$res"
}

@test "ecg-partition --tune: the tile of a fused inverted residual (2 to 32 output rows per band) is among the candidates, on those blocks only, and they lower" {
  mv2_56
  local d="$ECG_OUT/tune-tile" f t
  rm -rf "$d"; mkdir -p "$d"
  # the first round's candidates, written, not measured (standalone subgraphs)
  "$BIN/ecg-partition" "$ECG_OUT/mv2i.ecg" --tune --tune-in subgraph --budget 2000 --emit-candidates "$d/c"
  : > "$d/tiles"
  for f in "$d"/c/*.ecg; do
    "$BIN/ecg-dump" --json "$f" | jq -c '.nodes as $n | .blocks[] | select((.schedule.tile // []) | length > 0)
      | {tile: .schedule.tile, m2m: ([.nodes[] | $n[.].mapping | select(. == "Many-to-Many")] | length), i: .schedule.intensive_fusion, f: $f}' --arg f "$f" >> "$d/tiles"
  done
  jq -sc 'map(.tile[0]) | unique' "$d/tiles"
  jq -se 'map(.tile[0]) | unique == [2, 4, 8, 16, 32]' "$d/tiles"
  # only on intensive-fusion blocks (3 Many-to-Many members), never with intensive_fusion off
  jq -se 'length >= 5 * 17 and all(.[]; .m2m == 3 and .i != "off")' "$d/tiles"
  for t in 2 32; do
    f=$(jq -sr --argjson t "$t" '[.[] | select(.tile[0] == $t)][0].f' "$d/tiles")
    "$BIN/ecg-lower" -o "$d/l$t" "$f"
    grep -q "^static const ecg_ibr_params ibr[0-9]* = {.*, $t};" "$d/l$t/model.c"
  done
}

@test "ecg-partition --tune: blocks of several Many-to-Many members that are no intensive-fusion chain (bert_tiny's row reductions) never get intensive_fusion" {
  local m="$SHARED_MODELS/bert_tiny.onnx" d="$ECG_OUT/tune-rows"
  require_file "$m"
  rm -rf "$d"; mkdir -p "$d"
  "$BIN/onnx2ecg" "$m" --input-shape input_ids=1x128 --input-shape attention_mask=1x128 | "$BIN/ecg-fuse" --intensive | "$BIN/ecg-partition" -o "$d/b.ecg"
  "$BIN/ecg-dump" --json "$d/b.ecg" | jq -e '.nodes as $n | [.blocks[] | select([.nodes[] | $n[.].mapping | select(. == "Many-to-Many")] | length > 1)] | length >= 1'
  run --separate-stderr "$BIN/ecg-partition" "$d/b.ecg" --tune --budget 6 --runs 2 --warmup 0 --tune-log "$d/log.jsonl" --report "$d/r.json" -o "$d/t.ecg"
  echo "$stderr"
  [ "$status" -eq 0 ]
  jq -se 'all(.[]; .sched | test("i[12]") | not)' "$d/log.jsonl"
  jq -e '.partition.tune | .intensive_on == 0 and .intensive_off == 0' "$d/r.json"
  "$BIN/ecg-dump" --json "$d/t.ecg" | jq -e '[.blocks[] | select(.schedule) | .schedule.intensive_fusion == "auto"] | all'
}
