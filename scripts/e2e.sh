#!/bin/sh
# Convert, lower, run and check one model from scripts/models.tsv against ONNX Runtime:
#   scripts/e2e.sh NAME [ecg-bench options...]
# Writes OUT/NAME.ecg, OUT/NAME/ (lowered), OUT/NAME.data/test_data_set_0 (seeded inputs and
# ONNX Runtime outputs), and prints ecg-bench's JSON line. Exit status is ecg-bench's.
# OUT is $ECG_OUT, default out/ in the repo.
# With ECG_OPSET=N the model is first re-declared at ai.onnx opset N
# (tools/bench/redeclare_opset.mjs: Reduce axes as inputs, Split num_outputs, ...) into
# OUT/NAME-opsetN.onnx, and every file above is named NAME-opsetN.
set -eu
name=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
line=$(grep -v '^#' scripts/models.tsv | awk -F'\t' -v n="$name" '$1 == n')
[ -n "$line" ] || { echo "e2e.sh: unknown model '$name' (see scripts/models.tsv)" >&2; exit 2; }
path=$(printf '%s\n' "$line" | cut -f2)
shapes=$(printf '%s\n' "$line" | cut -f3)
[ -f "$path" ] || { echo "e2e.sh: $path missing (run make models)" >&2; exit 1; }
args=""; dargs=""
if [ "$shapes" != "-" ]; then
  for s in $(printf '%s' "$shapes" | tr ',' ' '); do args="$args --input-shape $s"; dargs="$dargs --input-shape $s"; done
fi
out=${ECG_OUT:-out}
mkdir -p "$out"
if [ -n "${ECG_OPSET:-}" ]; then
  name=$name-opset$ECG_OPSET
  node tools/bench/redeclare_opset.mjs --model "$path" --opset "$ECG_OPSET" --out "$out/$name.onnx"
  path=$out/$name.onnx
fi
# shellcheck disable=SC2086
bin/onnx2ecg "$path" $args -o "$out/$name.ecg"
bin/ecg-lower -o "$out/$name" "$out/$name.ecg"
if [ ! -f "$out/$name.data/test_data_set_0/output_0.pb" ]; then
  # shellcheck disable=SC2086
  node tools/bench/make_data.mjs --model "$path" --out "$out/$name.data/test_data_set_0" --seed 1 $dargs >&2
fi
exec bin/ecg-bench "$out/$name" --data "$out/$name.data/test_data_set_0" "$@"
