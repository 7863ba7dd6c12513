#!/bin/sh
# make bench: every model of scripts/models.tsv (and ../shared/models through it) at 1 and 2
# threads, ours (ecg-rewrite's default passes, then the dnnfusion plan with AGO's intensive
# fusion, `ecg-fuse --intensive`, before the lowering: the fastest pipeline we have;
# STAGES="ecg-fuse" is the dnnfusion plan alone) vs ONNX Runtime side by side in one ecg-bench run (same inputs, same thread count),
# medians over RUNS runs, every output checked against ONNX Runtime's.
#   RUNS=20 THREADS="1 2" STAGES="ecg-rewrite | ecg-fuse --intensive" scripts/bench.sh [MODEL...]
# Writes out/bench.jsonl (one ecg-bench line per model and thread count), out/bench.md (a
# markdown table, also printed), out/bench.json (the rows and, per thread count, the
# geometric mean of the ratios ours/ORT) and out/bench.svg (the ratios, drawn by gnuplot).
# STAGES="" measures the unfused pipeline. Run it on a quiet machine: two cores are easily
# disturbed.
set -u
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
threads=${THREADS:-1 2}
stages=${STAGES-ecg-rewrite | ecg-fuse --intensive}
models=${*:-$(grep -v '^#' scripts/models.tsv | cut -f1)}
command -v gnuplot >/dev/null 2>&1 || { echo "bench.sh: gnuplot missing (make setup installs gnuplot-nox)" >&2; exit 1; }
mkdir -p out
: > out/bench.jsonl
for m in $models; do
  for t in $threads; do
    json=$(ECG_STAGES="$stages" sh scripts/e2e.sh "$m" --ort --runs "$runs" --warmup 5 --threads "$t" 2>/dev/null)
    [ -n "$json" ] || json='{"pass":false}'
    nodes=$(jq -r '.nodes // 0' "out/$m/model.json" 2>/dev/null)
    kernels=$(jq -r '.kernels // 0' "out/$m/model.json" 2>/dev/null)
    printf '%s\n' "$json" | jq -c --arg m "$m" --argjson n "${nodes:-0}" --argjson k "${kernels:-0}" --arg s "$stages" \
      '. + {name: $m, ops: $n, kernels: $k, stages: $s}' >> out/bench.jsonl
  done
done
jq -s --arg s "$stages" '{stages: $s, rows: ., geomean_ratio: (group_by(.threads) | map({key: (.[0].threads | tostring),
    value: ([.[] | select(.ratio != null) | .ratio | log] | if length > 0 then (add / length | exp) else null end)}) | from_entries)}' \
  out/bench.jsonl > out/bench.json
{
  printf '| model | nodes | kernels | threads | pass | max abs err | ours median ms | ORT median ms | ratio |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
  jq -r '.rows[] | "| \(.name) | \(.ops) | \(.kernels) | \(.threads // "-") | \(.pass) | \(.max_abs_err // "-") | \(.median_ms // "-") | \(.ort_median_ms // "-") | \(.ratio // "-") |"' out/bench.json
  jq -r '.geomean_ratio | to_entries[] | "\ngeometric mean of the ratios at \(.key) thread(s): \(.value)"' out/bench.json
} > out/bench.md
cat out/bench.md
# the plot: one bar per model and thread count; 1.0 is parity with ONNX Runtime
jq -r '.rows | group_by(.name)[] | "\(.[0].name)\t\(map(select(.threads == 1))[0].ratio // "NaN")\t\(map(select(.threads == 2))[0].ratio // "NaN")"' \
  out/bench.json > out/bench.dat
gnuplot <<GP
set terminal svg size 900,520 dynamic noenhanced
set output 'out/bench.svg'
set title "ecg (stages: ${stages:-none}) latency / ONNX Runtime latency, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
set ylabel 'ratio (lower is faster than ONNX Runtime)'
set style data histograms
set style histogram clustered
set style fill solid 0.8
set xtics rotate by -35 right nomirror
set bmargin 9
set yrange [0:*]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot 'out/bench.dat' using 2:xtic(1) title '1 thread', '' using 3 title '2 threads'
GP
