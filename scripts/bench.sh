#!/bin/sh
# make bench: every model of scripts/models.tsv (and ../shared/models through it) at 1 and 2
# threads, ours (ecg-rewrite's default passes, then the dnnfusion plan with AGO's intensive
# fusion, `ecg-fuse --intensive`, then the lowering with GCD²'s global layout selection: the
# fastest pipeline we have;
# STAGES="ecg-fuse" is the dnnfusion plan alone) vs ONNX Runtime side by side in one ecg-bench run (same inputs, same thread count),
# medians over RUNS runs, every output checked against ONNX Runtime's; ROUNDS such side-by-side
# runs per row (default 3), the row's ratio the median of the rounds' ratios (and its times the
# medians of the rounds' medians; each round's in round_ratios, round_ms, round_ort_ms). Each
# round interleaves the sides (ecg-bench --interleave INTERLEAVE, default 4: RUNS split into 4
# chunks, ours then ONNX Runtime's, alternating), so that a slow spell of this VM lands on both.
#   RUNS=20 ROUNDS=3 INTERLEAVE=4 THREADS="1 2" STAGES="ecg-rewrite | ecg-fuse --intensive" LAYOUT=global scripts/bench.sh [MODEL...]
# Writes out/bench.jsonl (one ecg-bench line per model and thread count), out/bench.md (a
# markdown table, also printed), out/bench.json (the rows and, per thread count, the
# geometric mean of the ratios ours/ORT) and out/bench.svg (the ratios, drawn by gnuplot).
# STAGES="" measures the unfused pipeline. LAYOUT=global (the default; or local, nchwc16, ...)
# lowers every model with GCD²'s layout selection from costs measured here per thread count
# (scripts/layout_costs.sh into build/layout_costs.jsonl, once per CPU, thread count and
# runtime; e2e.sh ECG_LAYOUT); LAYOUT="" lowers without it (every block NCHW). Run it on a
# quiet machine: two cores are easily disturbed.
set -u
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
rounds=${ROUNDS:-3}
interleave=${INTERLEAVE:-4}
threads=${THREADS:-1 2}
stages=${STAGES-ecg-rewrite | ecg-fuse --intensive}
layout=${LAYOUT-global}
models=${*:-$(grep -v '^#' scripts/models.tsv | cut -f1)}
command -v gnuplot >/dev/null 2>&1 || { echo "bench.sh: gnuplot missing (make setup installs gnuplot-nox)" >&2; exit 1; }
mkdir -p out
: > out/bench.jsonl
for m in $models; do
  for t in $threads; do
    json=$(ECG_STAGES="$stages" ECG_LAYOUT="$layout" ECG_LAYOUT_THREADS="$t" sh scripts/e2e.sh "$m" --ort --interleave "$interleave" --runs "$runs" --warmup 5 --threads "$t" 2>/dev/null)
    [ -n "$json" ] || json='{"pass":false}'
    # further rounds on the same lowered model and data: ours and ONNX Runtime again, side
    # by side; the row reports the medians over the rounds (a burst of noise on this VM
    # lasting a second or two lands on one side of one round, not on the row)
    r=1
    while [ "$r" -lt "$rounds" ] && printf '%s' "$json" | jq -e '.ratio != null' >/dev/null; do
      more=$(bin/ecg-bench "${ECG_OUT:-out}/$m" --data "${ECG_OUT:-out}/$m.data/test_data_set_0" --ort --interleave "$interleave" --runs "$runs" --warmup 5 --threads "$t" 2>/dev/null)
      [ -n "$more" ] || break
      json=$(printf '%s\n%s\n' "$json" "$more" | jq -sc '.[0] + {round_ratios: ((.[0].round_ratios // [.[0].ratio]) + [.[1].ratio]),
        round_ms: ((.[0].round_ms // [.[0].median_ms]) + [.[1].median_ms]), round_ort_ms: ((.[0].round_ort_ms // [.[0].ort_median_ms]) + [.[1].ort_median_ms]),
        pass: (.[0].pass and .[1].pass)}')
      r=$((r + 1))
    done
    json=$(printf '%s' "$json" | jq -c 'def med: sort | .[(length - 1) / 2 | floor];
      if .round_ratios then . + {ratio: (.round_ratios | med), median_ms: (.round_ms | med), ort_median_ms: (.round_ort_ms | med), rounds: (.round_ratios | length)} else . end')
    nodes=$(jq -r '.nodes // 0' "out/$m/model.json" 2>/dev/null)
    kernels=$(jq -r '.kernels // 0' "out/$m/model.json" 2>/dev/null)
    printf '%s\n' "$json" | jq -c --arg m "$m" --argjson n "${nodes:-0}" --argjson k "${kernels:-0}" --arg s "$stages" --arg l "$layout" \
      '. + {name: $m, ops: $n, kernels: $k, stages: $s, layout: $l}' >> out/bench.jsonl
  done
done
jq -s --arg s "$stages" --arg l "$layout" '{stages: $s, layout: $l, rows: ., geomean_ratio: (group_by(.threads) | map({key: (.[0].threads | tostring),
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
set title "ecg (stages: ${stages:-none}${layout:+, layout $layout}) latency / ONNX Runtime latency, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
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
