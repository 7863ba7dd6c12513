#!/bin/sh
# make bench-contention (issue 13 item 4): do 2-thread runs degrade when another process
# uses the other core more than ONNX Runtime's do? Every model (default: those of
# scripts/models.tsv) at 2 threads, ours (the dnnfusion plan) and ONNX Runtime side by side
# in one ecg-bench run, first alone, then with a busy loop pinned to the last core
# (taskset); the degradation is contended / alone, per side.
#   RUNS=20 [WAIT="default passive"] scripts/bench_contention.sh [MODEL...]
# WAIT lists OpenMP wait policies to try for our side (default: libgomp's own; passive:
# OMP_WAIT_POLICY=PASSIVE, threads sleep at once instead of spinning at barriers).
# Writes out/contention.jsonl and out/contention.md (also printed). Run it on an otherwise
# quiet machine.
set -u
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
waits=${WAIT:-default passive}
models=${*:-$(grep -v '^#' scripts/models.tsv | cut -f1)}
command -v taskset >/dev/null 2>&1 || { echo "bench_contention.sh: taskset missing (util-linux)" >&2; exit 1; }
last=$(($(nproc) - 1))
mkdir -p out
: > out/contention.jsonl
busy=""
stop_busy() { [ -z "$busy" ] || kill "$busy" 2>/dev/null; busy=""; }
trap stop_busy EXIT INT TERM
for m in $models; do
  # lowered and run once; a run whose outputs miss the reference (mlsd_320x320_tiny's known
  # case, within ONNX Runtime's own noise) is still timed, its "pass" in the lines
  ECG_STAGES=ecg-fuse sh scripts/e2e.sh "$m" --runs 1 --warmup 0 2>/dev/null | jq -e '.median_ms != null' > /dev/null 2>&1 ||
    { echo "bench_contention.sh: $m does not lower or run" >&2; continue; }
  for w in $waits; do
    for load in alone busy; do
      [ $load = busy ] && { taskset -c "$last" sh -c 'while :; do :; done' & busy=$!; }
      if [ "$w" = passive ]; then set -- env OMP_WAIT_POLICY=PASSIVE; else set -- env -u OMP_WAIT_POLICY; fi
      json=$("$@" ECG_STAGES=ecg-fuse sh scripts/e2e.sh "$m" --ort --runs "$runs" --warmup 5 --threads 2 2>/dev/null)
      stop_busy
      printf '%s\n' "${json:-{\}}" | jq -c --arg m "$m" --arg w "$w" --arg l "$load" '. + {name: $m, wait: $w, load: $l}' >> out/contention.jsonl
    done
  done
done
{
  printf '| model | wait | ours alone ms | ours busy ms | ours busy/alone | ORT alone ms | ORT busy ms | ORT busy/alone |\n'
  printf '|---|---|---|---|---|---|---|---|\n'
  jq -s -r 'group_by(.name + .wait)[] | (map(select(.load == "alone"))[0]) as $a | (map(select(.load == "busy"))[0]) as $b |
    "| \($a.name) | \($a.wait) | \($a.median_ms) | \($b.median_ms) | \(($b.median_ms / $a.median_ms * 100 | round) / 100) | \($a.ort_median_ms) | \($b.ort_median_ms) | \(($b.ort_median_ms / $a.ort_median_ms * 100 | round) / 100) |"' out/contention.jsonl
} > out/contention.md
cat out/contention.md
