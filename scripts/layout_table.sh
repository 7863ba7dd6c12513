#!/bin/sh
# Markdown table of scripts/layout_e2e.sh's JSON lines (stdin or FILE): per model and
# --layout mode, the blocks per layout, the DP's predicted cost (measured conv blocks and
# reorders only), the medians over rounds of our latency, ONNX Runtime's and their ratio,
# and whether every round matched ONNX Runtime.
set -eu
jq -s -r '
  def med: sort | .[(length - 1) / 2 | floor];
  "| model | layout | blocks NCHW/c8/c16 | predicted ms | ours ms (median) | ORT ms (median) | ratio (median) | correct |",
  "|---|---|---|---:|---:|---:|---:|---|",
  (group_by(.model) | .[] | sort_by(.mode) | group_by(.mode) | .[] |
   "| \(.[0].model) | \(.[0].mode) | \(.[0].chosen.NCHW)/\(.[0].chosen.NCHWc8)/\(.[0].chosen.NCHWc16) | \(.[0].predicted_ms * 100 | round / 100) | \(map(.bench.median_ms // empty) | med * 100 | round / 100) | \(map(.bench.ort_median_ms // empty) | med * 100 | round / 100) | \(map(.bench.ratio // empty) | med * 1000 | round / 1000) | \(map(.bench.pass == true) | all) |")
' "${1:--}"
