#!/bin/sh
# RDP (SOD² §5.4.1) on every model of scripts/models.tsv converted WITHOUT --input-shape:
# per model, the graph input symbols and how many tensors are fully constant, symbolic
# (numbers, symbols and operator-inferred expressions) or nac/undef (onnx2ecg --report's
# rdp fields). One JSON line per model; a model that fails to convert prints its error.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
T=${TMPDIR:-/tmp}/rdp_models.$$
mkdir -p "$T"
grep -v '^#' scripts/models.tsv | while IFS='	' read -r name path _shapes; do
  [ -n "$name" ] || continue
  if [ ! -f "$path" ]; then echo "{\"model\": \"$name\", \"error\": \"missing $path\"}"; continue; fi
  if "$BIN/onnx2ecg" "$path" -o "$T/m.ecg" --report "$T/r.json" 2> "$T/err"; then
    jq -c --arg m "$name" '{model: $m} + .onnx2ecg.rdp' "$T/r.json"
  else
    jq -cn --arg m "$name" --arg e "$(tail -1 "$T/err")" '{model: $m, error: $e}'
  fi
done
rm -rf "$T"
