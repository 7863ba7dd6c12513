#!/bin/sh
# The main job on a real model: fetch it (make models), convert it with onnx2ecg, fuse it
# with ecg-fuse (DNNFusion plan), lower it with ecg-lower, build and run it with ecg-bench against ONNX Runtime outputs on
# seeded inputs, and time it side by side with ONNX Runtime (1 thread).
#   scripts/demo.sh [MODEL]   (a name from scripts/models.tsv; default blazeface_front_128)
set -eu
cd "$(dirname "$0")/.."
model=${1:-blazeface_front_128}
echo "demo: $model: onnx2ecg | ecg-fuse | ecg-lower -o out/$model && ecg-bench out/$model --data ... --ort" >&2
json=$(ECG_STAGES="ecg-fuse" sh scripts/e2e.sh "$model" --ort --runs 20 --threads 1) || { printf '%s\n' "$json"; exit 1; }
printf '%s\n' "$json"
printf '%s\n' "$json" | jq -r '"demo: \(.model): pass=\(.pass) max_abs_err=\(.max_abs_err) ours=\(.median_ms) ms ONNX Runtime=\(.ort_median_ms) ms ratio=\(.ratio)"' >&2
