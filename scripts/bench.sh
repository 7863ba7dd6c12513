#!/bin/sh
# make bench: every model of scripts/models.tsv at 1 and 2 threads, ours vs ONNX Runtime
# side by side in one ecg-bench run (same inputs, same thread count), medians over RUNS
# runs. Writes JSON lines to out/bench.jsonl and prints a markdown table.
#   RUNS=20 THREADS="1 2" scripts/bench.sh [MODEL...]
set -u
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
threads=${THREADS:-1 2}
models=${*:-$(grep -v '^#' scripts/models.tsv | cut -f1)}
mkdir -p out
: > out/bench.jsonl
printf '| model | ops | threads | pass | max abs err | ours median ms | ORT median ms | ratio |\n|---|---|---|---|---|---|---|---|\n'
for m in $models; do
  for t in $threads; do
    json=$(sh scripts/e2e.sh "$m" --ort --runs "$runs" --warmup 5 --threads "$t" 2>/dev/null)
    [ -n "$json" ] || json='{"pass":false}'
    nodes=$(jq -r '.nodes // "?"' "out/$m/model.json" 2>/dev/null)
    printf '%s\n' "$json" | jq -c --arg m "$m" --argjson n "${nodes:-0}" '. + {name: $m, ops: $n}' >> out/bench.jsonl
    printf '%s\n' "$json" | jq -r --arg m "$m" --arg n "$nodes" --arg t "$t" \
      '"| \($m) | \($n) | \($t) | \(.pass) | \(.max_abs_err // "-") | \(.median_ms // "-") | \(.ort_median_ms // "-") | \(.ratio // "-") |"'
  done
done
