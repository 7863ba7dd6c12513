#!/bin/sh
# GCD² layout selection end to end (issue 13 item 3): each model (scripts/models.tsv names)
# converted and fused, its layout costs measured here (scripts/layout_costs.sh into
# $LAYOUT_DB, default build/layout_costs.jsonl), lowered under every --layout mode (nchw,
# global, local, nchwc8, nchwc16), then LAYOUT_ROUNDS (default 3) interleaved rounds of
# ecg-bench --ort --check (ours and ONNX Runtime side by side, LAYOUT_RUNS runs each,
# default 20, OMP_NUM_THREADS threads, default 1). Prints one JSON line per run
# {"round", "model", "mode", "predicted_ms", "chosen", "bench"}; summarise with
#   jq -s 'group_by(.model + .mode) | ...'
# (the medians of the rounds: out/layout_e2e.md from make bench-layout).
#
#   sh scripts/layout_e2e.sh [MODEL...]      (default mobilenet_v2 resnet18 efficientnet_b0)
set -eu
bin=${BIN:-bin}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
rounds=${LAYOUT_ROUNDS:-3}
runs=${LAYOUT_RUNS:-20}
db=${LAYOUT_DB:-build/layout_costs.jsonl}
[ $# -gt 0 ] || set -- mobilenet_v2 resnet18 efficientnet_b0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layout_e2e.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$db")"
for m in "$@"; do
  line=$(awk -F'\t' -v m="$m" '$1 == m' scripts/models.tsv)
  [ -n "$line" ] || { echo "layout_e2e.sh: no model '$m' in scripts/models.tsv" >&2; exit 1; }
  path=$(printf '%s' "$line" | cut -f2); shape=$(printf '%s' "$line" | cut -f3)
  set -f
  # shellcheck disable=SC2046
  "$bin/onnx2ecg" "$path" $(for s in $shape; do printf -- '--input-shape %s ' "$s"; done) | "$bin/ecg-fuse" > "$tmp/$m.ecg"
  set +f
done
sh scripts/layout_costs.sh "$db" "$tmp"/*.ecg
for m in "$@"; do
  for mode in nchw global local nchwc8 nchwc16; do
    "$bin/ecg-lower" --layout "$mode" --layout-db "$db" --report "$tmp/$m.$mode.json" -o "$tmp/$m.$mode" "$tmp/$m.ecg"
  done
done
for r in $(seq "$rounds"); do
  for m in "$@"; do
    for mode in nchw global local nchwc8 nchwc16; do
      b=$("$bin/ecg-bench" "$tmp/$m.$mode" --ort --check --runs "$runs" --warmup 3 --threads "$OMP_NUM_THREADS" 2>/dev/null | tail -n 1) || true
      jq -c --argjson r "$r" --arg m "$m" --arg mode "$mode" --argjson b "${b:-null}" \
        '{round: $r, model: $m, mode: $mode, predicted_ms: .lower.layout.predicted_ms[$mode], chosen: .lower.layout.chosen, bench: $b}' \
        "$tmp/$m.$mode.json"
    done
  done
done
