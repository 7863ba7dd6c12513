#!/bin/sh
# make bench-fusion: every model of scripts/models.tsv lowered under each fusion plan
# (ecg-fuse --plan none, fixed, dnnfusion, and dnnfusion --intensive), each timed side by
# side with ONNX Runtime in one ecg-bench run (same seeded inputs, same thread count;
# outputs checked against ONNX Runtime's), medians over RUNS runs, in ROUNDS rounds that
# interleave the plans (each plan's latency: the median of its round medians; ONNX Runtime's:
# the median of all its runs' medians). Writes one JSON line per model, plan and thread
# count to out/bench_fusion.jsonl (round_medians_ms: each round's median) and prints a
# markdown table (ms; ratio = ours / ORT; "same code": plans that lowered to an identical
# model.c, which the latency criterion does not compare). A plan whose outputs miss the
# tolerance is checked again on the model's seeded data set (tools/bench/make_data.mjs, as
# scripts/e2e.sh makes it) with ecg-bench --ort-noise, and passes when it is no further from
# the reference than ONNX Runtime without graph optimisations is ("checked": "ort_noise"):
# the bar tests/bats/models.bats holds mlsd_320x320_tiny to; the table marks it "(ORT noise)".
# "(FAIL)" marks the rest.
#   ROUNDS=3 RUNS=20 THREADS="1 2" scripts/bench_fusion.sh [MODEL...]
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/ort_noise.sh
runs=${RUNS:-20}
rounds=${ROUNDS:-3}
threads=${THREADS:-1 2}
models=${*:-$(grep -v '^#' scripts/models.tsv | cut -f1)}
variants="none fixed dnnfusion intensive"
mkdir -p out/fusion
: > out/bench_fusion.jsonl
printf '| model | threads | none | fixed | dnnfusion | +intensive | ORT | dnnfusion/ORT | kernels none/fixed/dnnfusion/intensive | same code |\n|---|---|---|---|---|---|---|---|---|---|\n'
for m in $models; do
  line=$(grep -v '^#' scripts/models.tsv | awk -F'\t' -v n="$m" '$1 == n')
  path=$(printf '%s\n' "$line" | cut -f2); shapes=$(printf '%s\n' "$line" | cut -f3)
  args=""
  [ "$shapes" = "-" ] || for s in $(printf '%s' "$shapes" | tr ',' ' '); do args="$args --input-shape $s"; done
  # shellcheck disable=SC2086
  bin/onnx2ecg "$path" $args -o "out/fusion/$m.ecg" || continue
  data="out/fusion/$m.data/test_data_set_0"
  kern=""
  for v in $variants; do
    case $v in
      intensive) bin/ecg-fuse --plan dnnfusion --intensive "out/fusion/$m.ecg" -o "out/fusion/$m.$v.ecg" ;;
      *) bin/ecg-fuse --plan "$v" "out/fusion/$m.ecg" -o "out/fusion/$m.$v.ecg" ;;
    esac
    bin/ecg-lower -o "out/fusion/$m.$v" "out/fusion/$m.$v.ecg" || continue
    kern="$kern/$(jq -r .kernels "out/fusion/$m.$v/model.json")"
  done
  # which plans lowered to the same code (the latency criterion compares plans that differ)
  same=""; prev=""
  for v in $variants; do
    for u in $prev; do
      if cmp -s "out/fusion/$m.$u/model.c" "out/fusion/$m.$v/model.c"; then same="$same $u=$v"; break; fi
    done
    prev="$prev $v"
  done
  for t in $threads; do
    : > "out/fusion/$m.t$t.jsonl"
    # rounds interleave the plans (and ONNX Runtime, run beside each): drift of the machine
    # reaches every plan alike; each plan's latency is the median of its rounds' medians
    for r in $(seq "$rounds"); do
      for v in $variants; do
        json=$(bin/ecg-bench "out/fusion/$m.$v" --random 1 --ort --runs "$runs" --warmup 5 --threads "$t" 2>/dev/null)
        [ -n "$json" ] || json='{"pass":false}'
        printf '%s\n' "$json" | jq -c --arg v "$v" --argjson r "$r" '. + {plan: $v, round: $r}' >> "out/fusion/$m.t$t.jsonl"
      done
    done
    row="| $m | $t"
    for v in $variants; do
      agg=$(jq -s -c --arg m "$m" --arg v "$v" --arg same "${same# }" --slurpfile mj "out/fusion/$m.$v/model.json" '
        def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
        [.[] | select(.plan == $v)] as $x
        | {name: $m, plan: $v, threads: ($x[0].threads // null), rounds: ($x | length),
           pass: ($x | length > 0 and all(.pass == true)), max_abs_err: ([$x[].max_abs_err // empty] | max),
           median_ms: ([$x[].median_ms // empty] | med), round_medians_ms: [$x[].median_ms // empty],
           ort_median_ms: ([.[].ort_median_ms // empty] | med),
           nodes: $mj[0].nodes, kernels: $mj[0].kernels, arena_bytes: $mj[0].arena_bytes, same_code: $same}
        | . + {ratio: (if .median_ms and .ort_median_ms then .median_ms / .ort_median_ms else null end)}' "out/fusion/$m.t$t.jsonl")
      # a miss of the tolerance: the second bar, ONNX Runtime's own float32 disagreement
      checked=ort
      if [ "$(printf '%s' "$agg" | jq -r .pass)" != true ] && [ -f "out/fusion/$m.$v/model.json" ]; then
        # shellcheck disable=SC2086
        [ -f "$data/output_0.pb" ] || node tools/bench/make_data.mjs --model "$path" --out "$data" --seed 1 $args >&2
        if [ -f "$data/output_0.pb" ] &&
           ort_noise_pass "out/fusion/$m.$v" "$data" "out/fusion/$m.$v.t$t.noise" "out/fusion/$m.$v.t$t.noise.err"; then
          checked=ort_noise; agg=$(printf '%s' "$agg" | jq -c '.pass = true')
        fi
      fi
      agg=$(printf '%s' "$agg" | jq -c --arg c "$checked" '. + {checked: $c}')
      printf '%s\n' "$agg" >> out/bench_fusion.jsonl
      row="$row | $(printf '%s' "$agg" | jq -r '"\(.median_ms // "-" | if type == "number" then (. * 1000 | round / 1000) else . end)\(if .pass | not then " (FAIL)" elif .checked == "ort_noise" then " (ORT noise)" else "" end)"')"
      [ "$v" = dnnfusion ] && ort=$(printf '%s' "$agg" | jq -r '.ort_median_ms // "-" | if type == "number" then (. * 1000 | round / 1000) else . end') &&
        ratio=$(printf '%s' "$agg" | jq -r '.ratio // "-" | if type == "number" then (. * 1000 | round / 1000) else . end')
    done
    printf '%s | %s | %s | %s | %s |\n' "$row" "$ort" "$ratio" "${kern#/}" "${same# }"
  done
done
