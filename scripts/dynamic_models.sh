#!/bin/sh
# Issue 9's dynamic-shape models (the '#dyn' lines of scripts/models.tsv) at every size they
# list, checked against ONNX Runtime and timed side by side:
#   sh scripts/dynamic_models.sh [NAME...]     (make dynamic-models)
# Per model: onnx2ecg converts the model ONCE without --input-shape (symbols kept, SOD²'s
# RDP; with the line's --dim-multiple hints), ecg-fuse fuses that symbolic ECG, and
# ecg-lower lowers it ONCE without
# --input-shape into a dynamic-shape build (kernels over run-time sizes, tools/lower/
# LOWERED.md "Dynamic shapes"), built once and run at every size ("build": "dynamic").
# Next to it, each size is also bound by `ecg-lower --input-shape` into a static build from
# the same ECG, timed on the same data right after ("static_median_ms", "dyn_vs_static" =
# dynamic / static median). Where the dynamic lowering is refused (an operator not yet
# lowered with symbolic dims, a dim RDP left nac; the refusal is printed) the bound
# per-size builds are the fallback ("build": "bound"). Where the symbolic conversion is
# refused (an If whose branches give different ranks until an input size is known), the
# model is converted per size with --input-shape instead ("build": "converted
# per size").
# Each size gets one data set per value set (make_data.mjs --input-value, e.g. sr=16000 and
# sr=8000: one build runs both branches of silero's run-time If), all run against that one
# build by `ecg-bench --data D1 --data D2 --ort`. Prints one JSON line per data set (name,
# size, values, build, pass, max_abs_err, median_ms, ort_median_ms, ratio, and for a dynamic
# build static_median_ms and dyn_vs_static).
# Env: RUNS (default 5), ECG_OUT (default out; files in out/dynamic), DYN_SIZES=N (only the
# first N sizes of each model: the test suite's short run). Exit 1 if any data set fails.
set -u
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
out=${ECG_OUT:-out}/dynamic
mkdir -p "$out"
want=" $* "
status=0
tab=$(printf '\t')
grep "^#dyn$tab" scripts/models.tsv > "$out/list" || { echo "dynamic_models.sh: no #dyn lines in scripts/models.tsv" >&2; exit 1; }
while IFS="$tab" read -r _ name path sizes values mults; do
  [ "$want" = "  " ] || case $want in *" $name "*) ;; *) continue ;; esac
  [ -f "$path" ] || { echo "dynamic_models.sh: $path missing (run make models)" >&2; status=1; continue; }
  build=bound
  hints=""
  [ -z "${mults:-}" ] || [ "$mults" = "-" ] || for m in $(printf '%s' "$mults" | tr ',' ' '); do hints="$hints --dim-multiple $m"; done
  # shellcheck disable=SC2086
  if ! bin/onnx2ecg "$path" $hints -o "$out/$name.ecg" 2> "$out/$name.err" || ! bin/ecg-fuse < "$out/$name.ecg" > "$out/$name.f.ecg"; then
    echo "dynamic_models.sh: $name: the symbolic conversion is refused, converting per size: $(cat "$out/$name.err")" >&2
    build="converted per size"
  else
    rm -rf "$out/$name.dyn"
    if bin/ecg-lower "$out/$name.f.ecg" -o "$out/$name.dyn" 2> "$out/$name.err"; then
      build=dynamic
    else
      echo "dynamic_models.sh: $name: the dynamic lowering is refused, binding per size: $(cat "$out/$name.err")" >&2
    fi
  fi
  k=0
  printf '%s\n' "$sizes" | tr ';' '\n' | head -n "${DYN_SIZES:-1000}" > "$out/$name.sizes"
  while read -r size; do
    k=$((k + 1))
    dir=$out/$name.$k
    args=""
    for b in $(printf '%s' "$size" | tr ',' ' '); do args="$args --input-shape $b"; done
    # shellcheck disable=SC2086
    if [ "$build" = bound ] || [ "$build" = dynamic ]; then
      bin/ecg-lower "$out/$name.f.ecg" $args -o "$dir" || { status=1; continue; }
    else
      { bin/onnx2ecg "$path" $args -o "$out/$name.$k.ecg" && bin/ecg-fuse < "$out/$name.$k.ecg" > "$out/$name.$k.f.ecg" &&
        bin/ecg-lower "$out/$name.$k.f.ecg" -o "$dir"; } || { status=1; continue; }
    fi
    dargs=""
    j=0
    printf '%s\n' "$values" | tr ';' '\n' > "$out/$name.values"
    while read -r v; do
      j=$((j + 1))
      vargs=""
      [ "$v" = "-" ] || for b in $(printf '%s' "$v" | tr ',' ' '); do vargs="$vargs --input-value $b"; done
      # shellcheck disable=SC2086
      node tools/bench/make_data.mjs --model "$path" --out "$dir.data$j" $args $vargs --seed "$k" 2>/dev/null || { status=1; continue; }
      dargs="$dargs --data $dir.data$j"
    done < "$out/$name.values"
    # shellcheck disable=SC2086
    if [ "$build" = dynamic ]; then # the one dynamic build (checked against ONNX Runtime), then the static one of this size
      bin/ecg-bench "$out/$name.dyn" $dargs --ort --model "$path" --runs "$runs" --warmup 1 > "$out/$name.$k.jsonl" || status=1
      bin/ecg-bench "$dir" $dargs --runs "$runs" --warmup 1 > "$out/$name.$k.static.jsonl" || status=1
    else
      bin/ecg-bench "$dir" $dargs --ort --model "$path" --runs "$runs" --warmup 1 > "$out/$name.$k.jsonl" || status=1
    fi
    j=0
    while read -r line; do
      j=$((j + 1))
      v=$(sed -n "${j}p" "$out/$name.values")
      st=null
      [ "$build" = dynamic ] && st=$(sed -n "${j}p" "$out/$name.$k.static.jsonl" | jq -c '.median_ms // null' 2>/dev/null)
      printf '%s\n' "$line" | jq -c --arg n "$name" --arg s "$size" --arg v "$v" --arg b "$build" --argjson st "${st:-null}" \
        '{name: $n, size: $s, values: $v, build: $b, pass, max_abs_err, mismatches, median_ms, ort_median_ms, ratio}
         + (if $b == "dynamic" then {static_median_ms: $st, dyn_vs_static: (if $st then .median_ms / $st else null end)} else {} end)'
    done < "$out/$name.$k.jsonl"
  done < "$out/$name.sizes"
done < "$out/list"
exit $status
