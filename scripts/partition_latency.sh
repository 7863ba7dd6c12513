#!/bin/sh
# partition_latency.sh OUT BUDGET: AGO's end-to-end and ablation comparison (INFOCOM 2023,
# Fig. 10/13) on this machine (make partition-latency; not part of make test).
#
# For mobilenet_v2 and mnasnet1_0 (../shared/models, or LAT_MODELS="name=path ...") at
# 56x56, 112x112 and 224x224 (LAT_SIZES), four pipelines, each lowered and timed by
# ecg-bench --random 1 --ort --check (so every variant is checked against ONNX Runtime and
# timed side by side with it on the same inputs):
#   untuned  onnx2ecg | ecg-fuse --intensive | ecg-partition
#   ago      ... | ecg-partition --tune --budget BUDGET              (SPLIT/JOIN; intensive
#            fusion on/off chosen per intensive-fusion block, measured)
#   ago-ni   onnx2ecg | ecg-fuse | ecg-partition --tune --budget BUDGET --no-intensive
#            (no intensive fusion at all; on the --intensive ECG, --no-intensive would pin every
#            such block off and lower the same kernels, but each block's stages would share one
#            schedule: fused without --intensive, each stage is a block tuned on its own)
#   ago-nr   ... --intensive | ecg-partition --tune --budget BUDGET --no-reformer
# The three tuned variants get the same budget. The four lowered variants of a model and size
# are then timed interleaved: LAT_ROUNDS rounds (default 3) of the four, each an ecg-bench run
# beside ONNX Runtime; a variant's ms and ONNX Runtime's are medians over the rounds, the ratio
# the median of the per-round ratios (taken side by side, so load shared by both cancels).
# Writes OUT.jsonl (one line per model, size and variant: ms, ONNX Runtime's ms, ratio, the
# rounds, tuning time, schedules explored, --confirm's counts (confirm_runs, confirmed,
# rejected_as_noise), blocks given a schedule, intensive-fusion blocks the
# tuner left on and turned off), OUT.md (the table),
# OUT.json (the lines as one array) and the tuned ECGs in OUT.d/.
# Environment: LAT_RUNS (ecg-bench --runs per round, default 30), LAT_THREADS (default 1),
# TUNE_RUNS (ecg-bench --runs per tuning measurement, default 5).
set -eu
OUT=${1:-out/partition_latency}
BUDGET=${2:-100}
BIN=${BIN:-bin}
RUNS=${LAT_RUNS:-30}
TH=${LAT_THREADS:-1}
TR=${TUNE_RUNS:-5}
ROUNDS=${LAT_ROUNDS:-3}
SIZES=${LAT_SIZES:-"56 112 224"}
MODELS=${LAT_MODELS:-"mobilenet_v2=../shared/models/mobilenet_v2.onnx mnasnet1_0=../shared/models/mnasnet1_0.onnx"}
W=${TMPDIR:-/tmp}/partition_latency.$$
mkdir -p "$W" "$(dirname "$OUT")" "$OUT.d"
trap 'rm -rf "$W"' EXIT
: > "$OUT.jsonl"
for m in $MODELS; do
  name=${m%%=*}; onnx=${m#*=}
  [ -f "$onnx" ] || { echo "partition_latency: $onnx missing" >&2; exit 1; }
  for h in $SIZES; do
    "$BIN/onnx2ecg" "$onnx" --input-shape "input=1x3x${h}x${h}" -o "$W/m.ecg"
    "$BIN/ecg-fuse" --intensive "$W/m.ecg" | "$BIN/ecg-partition" -o "$W/i.ecg"
    "$BIN/ecg-fuse" "$W/m.ecg" | "$BIN/ecg-partition" -o "$W/n.ecg"
    # tune (or not) and lower the four variants; the tuned ECGs are kept in OUT.d/
    for v in untuned ago ago-ni ago-nr; do
      t0=$(date +%s.%N)
      case $v in
        untuned) cp "$W/i.ecg" "$W/$v.ecg" ;;
        ago)    "$BIN/ecg-partition" "$W/i.ecg" --tune --budget "$BUDGET" --runs "$TR" --threads "$TH" --report "$W/$v.rep" -o "$W/$v.ecg" ;;
        ago-ni) "$BIN/ecg-partition" "$W/n.ecg" --tune --budget "$BUDGET" --runs "$TR" --threads "$TH" --no-intensive --report "$W/$v.rep" -o "$W/$v.ecg" ;;
        ago-nr) "$BIN/ecg-partition" "$W/i.ecg" --tune --budget "$BUDGET" --runs "$TR" --threads "$TH" --no-reformer --report "$W/$v.rep" -o "$W/$v.ecg" ;;
      esac
      t1=$(date +%s.%N)
      awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }' > "$W/$v.tsec"
      cp "$W/$v.ecg" "$OUT.d/$name-$h-$v.ecg"
      rm -rf "$W/lo-$v"
      "$BIN/ecg-lower" -o "$W/lo-$v" "$W/$v.ecg"
    done
    # time them interleaved: LAT_ROUNDS rounds of the four, each beside ONNX Runtime
    : > "$W/rounds.jsonl"
    r=0
    while [ "$r" -lt "$ROUNDS" ]; do
      for v in untuned ago ago-ni ago-nr; do
        "$BIN/ecg-bench" "$W/lo-$v" --random 1 --ort --check --runs "$RUNS" --threads "$TH" -q | jq -c --arg v "$v" '. + {variant: $v}' >> "$W/rounds.jsonl"
      done
      r=$((r + 1))
    done
    for v in untuned ago ago-ni ago-nr; do
      meas=0; sched=0; ion=0; ioff=0; conf='{}'
      if [ -f "$W/$v.rep" ]; then
        meas=$(jq '.partition.tune.explored' "$W/$v.rep"); sched=$(jq '.partition.tune.blocks_scheduled' "$W/$v.rep")
        ion=$(jq '.partition.tune.intensive_on' "$W/$v.rep"); ioff=$(jq '.partition.tune.intensive_off' "$W/$v.rep")
        conf=$(jq -c '.partition.tune | {confirm, confirm_runs, confirmed, rejected_as_noise}' "$W/$v.rep")
        rm -f "$W/$v.rep"
      fi
      jq -sc --arg m "$name" --argjson h "$h" --arg v "$v" --argjson b "$BUDGET" --argjson meas "$meas" \
        --argjson sched "$sched" --argjson ion "$ion" --argjson ioff "$ioff" --argjson tsec "$(cat "$W/$v.tsec")" --argjson conf "$conf" '
        def med: sort | if length == 0 then null else .[length / 2 | floor] end;
        [.[] | select(.variant == $v)] as $x
        | {model: $m, size: $h, variant: $v, budget: (if $v == "untuned" then 0 else $b end), explored: $meas,
           blocks_scheduled: $sched, intensive_on: $ion, intensive_off: $ioff, tune_seconds: $tsec, pass: ($x | all(.pass == true)), rounds: ($x | length),
           ms: ($x | map(.median_ms) | med), ort_ms: ($x | map(.ort_median_ms) | med),
           ratio_to_ort: ($x | map(.median_ms / .ort_median_ms) | med), ms_rounds: ($x | map(.median_ms)),
           threads: $x[0].threads} + $conf' "$W/rounds.jsonl" | tee -a "$OUT.jsonl"
    done
  done
done
jq -s '.' "$OUT.jsonl" > "$OUT.json"
{
  echo "| model | size | untuned ms | AGO ms | AGO-NI ms | AGO-NR ms | ORT ms (median of the runs) | untuned/ORT | AGO/ORT | AGO-NI/ORT | AGO-NR/ORT |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  jq -rs 'group_by([.model, .size])[]
    | (map({(.variant): .}) | add) as $r
    | [$r.untuned.model, ($r.untuned.size | tostring),
       ($r.untuned.ms, $r.ago.ms, $r["ago-ni"].ms, $r["ago-nr"].ms | . * 1000 | round / 1000 | tostring),
       ([$r.untuned.ort_ms, $r.ago.ort_ms, $r["ago-ni"].ort_ms, $r["ago-nr"].ort_ms] | sort | .[length / 2 | floor] | . * 1000 | round / 1000 | tostring),
       ($r.untuned.ratio_to_ort, $r.ago.ratio_to_ort, $r["ago-ni"].ratio_to_ort, $r["ago-nr"].ratio_to_ort | . * 100 | round / 100 | tostring)]
    | "| " + join(" | ") + " |"' "$OUT.jsonl"
  echo
  echo "Budget $BUDGET schedules per tuned variant (explored may be less: searches that stop early do not pass their rest on); $ROUNDS interleaved rounds of ecg-bench --runs $RUNS --threads $TH; ms are medians over the rounds; ratios are the median of ours / ONNX Runtime measured side by side in the same ecg-bench run (lower is faster)."
} > "$OUT.md"
cat "$OUT.md"
