#!/bin/sh
# partition_latency.sh OUT BUDGET: AGO's end-to-end and ablation comparison (INFOCOM 2023,
# Fig. 10/13) on this machine (make partition-latency; not part of make test).
#
# For mobilenet_v2 and mnasnet1_0 (../shared/models, or LAT_MODELS="name=path ...") at
# 56x56, 112x112 and 224x224 (LAT_SIZES), four pipelines, each lowered and timed by
# ecg-bench --random 1 --ort --check (so every variant is checked against ONNX Runtime and
# timed side by side with it on the same inputs):
#   untuned  onnx2ecg | ecg-fuse --intensive | ecg-partition
#   ago      ... | ecg-partition --tune --budget BUDGET              (SPLIT/JOIN)
#   ago-ni   onnx2ecg | ecg-fuse | ecg-partition --tune --budget BUDGET --no-intensive
#   ago-nr   ... --intensive | ecg-partition --tune --budget BUDGET --no-reformer
# The three tuned variants get the same budget. Writes OUT.jsonl (one line per model, size
# and variant: median ms, ONNX Runtime's median in the same run, their ratio, tuning time
# and measurements), OUT.md (the table) and OUT.json (the lines as one array).
# Environment: LAT_RUNS (ecg-bench --runs for the final timing, default 30), LAT_THREADS
# (default 1), TUNE_RUNS (ecg-bench --runs per tuning measurement, default 5).
set -eu
OUT=${1:-out/partition_latency}
BUDGET=${2:-100}
BIN=${BIN:-bin}
RUNS=${LAT_RUNS:-30}
TH=${LAT_THREADS:-1}
TR=${TUNE_RUNS:-5}
SIZES=${LAT_SIZES:-"56 112 224"}
MODELS=${LAT_MODELS:-"mobilenet_v2=../shared/models/mobilenet_v2.onnx mnasnet1_0=../shared/models/mnasnet1_0.onnx"}
W=${TMPDIR:-/tmp}/partition_latency.$$
mkdir -p "$W" "$(dirname "$OUT")"
trap 'rm -rf "$W"' EXIT
: > "$OUT.jsonl"
for m in $MODELS; do
  name=${m%%=*}; onnx=${m#*=}
  [ -f "$onnx" ] || { echo "partition_latency: $onnx missing" >&2; exit 1; }
  for h in $SIZES; do
    "$BIN/onnx2ecg" "$onnx" --input-shape "input=1x3x${h}x${h}" -o "$W/m.ecg"
    "$BIN/ecg-fuse" --intensive "$W/m.ecg" | "$BIN/ecg-partition" -o "$W/i.ecg"
    "$BIN/ecg-fuse" "$W/m.ecg" | "$BIN/ecg-partition" -o "$W/n.ecg"
    for v in untuned ago ago-ni ago-nr; do
      t0=$(date +%s.%N)
      case $v in
        untuned) cp "$W/i.ecg" "$W/$v.ecg" ;;
        ago)    "$BIN/ecg-partition" "$W/i.ecg" --tune --budget "$BUDGET" --runs "$TR" --threads "$TH" --report "$W/$v.rep" -o "$W/$v.ecg" ;;
        ago-ni) "$BIN/ecg-partition" "$W/n.ecg" --tune --budget "$BUDGET" --runs "$TR" --threads "$TH" --no-intensive --report "$W/$v.rep" -o "$W/$v.ecg" ;;
        ago-nr) "$BIN/ecg-partition" "$W/i.ecg" --tune --budget "$BUDGET" --runs "$TR" --threads "$TH" --no-reformer --report "$W/$v.rep" -o "$W/$v.ecg" ;;
      esac
      t1=$(date +%s.%N)
      rm -rf "$W/lo"
      "$BIN/ecg-lower" -o "$W/lo" "$W/$v.ecg"
      res=$("$BIN/ecg-bench" "$W/lo" --random 1 --ort --check --runs "$RUNS" --threads "$TH" -q)
      meas=0; sched=0
      if [ -f "$W/$v.rep" ]; then
        meas=$(jq '.partition.tune.explored' "$W/$v.rep"); sched=$(jq '.partition.tune.blocks_scheduled' "$W/$v.rep")
        rm -f "$W/$v.rep"
      fi
      echo "$res" | jq -c --arg m "$name" --argjson h "$h" --arg v "$v" --argjson b "$BUDGET" --argjson meas "$meas" \
        --argjson sched "$sched" --argjson tsec "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" \
        '{model: $m, size: $h, variant: $v, budget: (if $v == "untuned" then 0 else $b end), explored: $meas,
          blocks_scheduled: $sched, tune_seconds: $tsec, pass: .pass, ms: .median_ms, ort_ms: .ort_median_ms,
          ratio_to_ort: .ratio, threads: .threads}' | tee -a "$OUT.jsonl"
    done
  done
done
jq -s '.' "$OUT.jsonl" > "$OUT.json"
{
  echo "| model | size | untuned ms | AGO ms | AGO-NI ms | AGO-NR ms | ORT ms (median of the runs) | untuned/ORT | AGO/ORT | AGO-NI/ORT | AGO-NR/ORT |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  jq -rs 'group_by(.model + "/" + (.size | tostring))[]
    | (map({(.variant): .}) | add) as $r
    | [$r.untuned.model, ($r.untuned.size | tostring),
       ($r.untuned.ms, $r.ago.ms, $r["ago-ni"].ms, $r["ago-nr"].ms | . * 1000 | round / 1000 | tostring),
       ([$r.untuned.ort_ms, $r.ago.ort_ms, $r["ago-ni"].ort_ms, $r["ago-nr"].ort_ms] | sort | .[length / 2 | floor] | . * 1000 | round / 1000 | tostring),
       ($r.untuned.ratio_to_ort, $r.ago.ratio_to_ort, $r["ago-ni"].ratio_to_ort, $r["ago-nr"].ratio_to_ort | . * 100 | round / 100 | tostring)]
    | "| " + join(" | ") + " |"' "$OUT.jsonl"
  echo
  echo "Budget $BUDGET schedules per tuned variant; ecg-bench --runs $RUNS --threads $TH; ratios are ours / ONNX Runtime measured side by side in the same ecg-bench run (lower is faster)."
} > "$OUT.md"
cat "$OUT.md"
