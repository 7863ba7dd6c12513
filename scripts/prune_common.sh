# prune_common.sh: sourced by prune_layers.sh and prune_e2e.sh (run from the repository root).
# prune_model NAME DIR: import scripts/models.tsv's NAME at its input shapes, prune it
# (8 patterns, 3.6x connectivity) into DIR/p.ecg with its ONNX export DIR/p.onnx and report
# DIR/prune.json, and make the expected outputs DIR/data with ONNX Runtime (seed 1).
prune_model() {
  pm_line=$(grep -v '^#' scripts/models.tsv | awk -F'\t' -v n="$1" '$1 == n')
  [ -n "$pm_line" ] || { echo "prune: no model '$1' in scripts/models.tsv" >&2; exit 2; }
  pm_path=$(printf '%s' "$pm_line" | cut -f2); pm_shapes=$(printf '%s' "$pm_line" | cut -f3); pm_dir=$2
  mkdir -p "$pm_dir"
  set -- # the function's own arguments: the --input-shape options from here on
  [ "$pm_shapes" = - ] || for s in $(printf '%s' "$pm_shapes" | tr ',' ' '); do set -- "$@" --input-shape "$s"; done
  onnx2ecg "$pm_path" "$@" -o "$pm_dir/g.ecg"
  ecg-prune "$pm_dir/g.ecg" -o "$pm_dir/p.ecg" --export-onnx "$pm_dir/p.onnx" --report "$pm_dir/prune.json"
  node tools/bench/make_data.mjs --model "$pm_dir/p.onnx" --out "$pm_dir/data" --seed 1 "$@" 2>/dev/null
}
