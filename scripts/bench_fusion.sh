#!/bin/sh
# make bench-fusion: every model of scripts/models.tsv lowered under each fusion plan
# (ecg-fuse --plan none, fixed, dnnfusion, and dnnfusion --intensive), each timed side by
# side with ONNX Runtime in one ecg-bench run (same seeded inputs, same thread count;
# outputs checked against ONNX Runtime's), medians over RUNS runs. Writes JSON lines to
# out/bench_fusion.jsonl and prints a markdown table (ms; ratio = ours / ORT).
#   RUNS=20 THREADS="1 2" scripts/bench_fusion.sh [MODEL...]
set -u
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
threads=${THREADS:-1 2}
models=${*:-$(grep -v '^#' scripts/models.tsv | cut -f1)}
variants="none fixed dnnfusion intensive"
mkdir -p out/fusion
: > out/bench_fusion.jsonl
printf '| model | threads | none | fixed | dnnfusion | +intensive | ORT | dnnfusion/ORT | kernels none/fixed/dnnfusion/intensive |\n|---|---|---|---|---|---|---|---|---|\n'
for m in $models; do
  line=$(grep -v '^#' scripts/models.tsv | awk -F'\t' -v n="$m" '$1 == n')
  path=$(printf '%s\n' "$line" | cut -f2); shapes=$(printf '%s\n' "$line" | cut -f3)
  args=""
  [ "$shapes" = "-" ] || for s in $(printf '%s' "$shapes" | tr ',' ' '); do args="$args --input-shape $s"; done
  # shellcheck disable=SC2086
  bin/onnx2ecg "$path" $args -o "out/fusion/$m.ecg" || continue
  kern=""
  for v in $variants; do
    case $v in
      intensive) bin/ecg-fuse --plan dnnfusion --intensive "out/fusion/$m.ecg" -o "out/fusion/$m.$v.ecg" ;;
      *) bin/ecg-fuse --plan "$v" "out/fusion/$m.ecg" -o "out/fusion/$m.$v.ecg" ;;
    esac
    bin/ecg-lower -o "out/fusion/$m.$v" "out/fusion/$m.$v.ecg" || continue
    kern="$kern/$(jq -r .kernels "out/fusion/$m.$v/model.json")"
  done
  for t in $threads; do
    row="| $m | $t"; ort=""; ratio=""
    for v in $variants; do
      json=$(bin/ecg-bench "out/fusion/$m.$v" --random 1 --ort --runs "$runs" --warmup 5 --threads "$t" 2>/dev/null)
      [ -n "$json" ] || json='{"pass":false}'
      printf '%s\n' "$json" | jq -c --arg m "$m" --arg v "$v" --slurpfile mj "out/fusion/$m.$v/model.json" \
        '. + {name: $m, plan: $v, nodes: $mj[0].nodes, kernels: $mj[0].kernels, arena_bytes: $mj[0].arena_bytes}' >> out/bench_fusion.jsonl
      row="$row | $(printf '%s' "$json" | jq -r '"\(.median_ms // "-")\(if .pass == true then "" else " (FAIL)" end)"')"
      [ "$v" = dnnfusion ] && ort=$(printf '%s' "$json" | jq -r '.ort_median_ms // "-"') && ratio=$(printf '%s' "$json" | jq -r '.ratio // "-"')
    done
    printf '%s | %s | %s | %s |\n' "$row" "$ort" "$ratio" "${kern#/}"
  done
done
