#!/bin/sh
# partition_fit.sh: fit c and b of AGO Eq. 1 (Xu et al., INFOCOM 2023, §IV-A, Fig. 8) on
# this machine from measured tuning budgets (make partition-fit).
#
# For each model below, ecg-partition --tune tunes the subgraphs one after the other with a
# large budget and a wall-clock bound (FIT_SECONDS per model), and --fit-data records, per
# mini-subgraph (one fusion block: at most one complex operator), Eq. 1's product
# P = sum over its operators of prod_l ln(s_l), its operator count n, and the schedules it
# explored until its best stopped improving (--patience in a row without a 1% gain). Only
# the mini-subgraphs whose search ended that way ("stable": --patience reached; "exhausted": every
# single-knob change of the best tried) are fitted: budget = c*P + b*n
# (Eq. 1 summed over the operators, AGO's sum rule), least squares. Writes into OUT (default
# tools/partition/data): fit_data.jsonl (the points), fit.json (c, b, points, R^2) and
# weights_fitted.txt (weights.txt's format, fitted 1; max_weight = c * 1024 keeps the
# built-in threshold's place on the new scale). The built-in weights.txt is not replaced.
#
# Environment: FIT_MODELS ("name=onnx:shape ..."), FIT_SECONDS (default 120), FIT_PATIENCE
# (default 4), FIT_RUNS (ecg-bench runs per measurement, default 5).
set -eu
OUT=${1:-tools/partition/data}
BIN=${BIN:-bin}
W=${TMPDIR:-/tmp}/partition_fit.$$
mkdir -p "$W" "$OUT"
trap 'rm -rf "$W"' EXIT
SECS=${FIT_SECONDS:-120}
PAT=${FIT_PATIENCE:-4}
RUNS=${FIT_RUNS:-5}
MODELS=${FIT_MODELS:-"cls=models/ch_ppocr_mobile_v2.0_cls_infer.onnx:x=1x3x48x192 mobilenet_v2=../shared/models/mobilenet_v2.onnx:input=1x3x56x56 mnasnet1_0=../shared/models/mnasnet1_0.onnx:input=1x3x56x56"}
: > "$W/all.jsonl"
for m in $MODELS; do
  name=${m%%=*}; rest=${m#*=}; onnx=${rest%%:*}; shape=${rest#*:}
  [ -f "$onnx" ] || { echo "partition_fit: $onnx missing (make models, or ../shared/models)" >&2; exit 1; }
  "$BIN/onnx2ecg" "$onnx" --input-shape "$shape" | "$BIN/ecg-fuse" | "$BIN/ecg-partition" -o "$W/$name.ecg"
  echo "partition_fit: $name: tuning for up to ${SECS} s" >&2
  "$BIN/ecg-partition" "$W/$name.ecg" --tune --budget 100000 --timeout "$SECS" --patience "$PAT" --runs "$RUNS" \
    --warmup 1 --fit-data "$W/$name.fit.jsonl" -o /dev/null
  jq -c --arg m "$name" '. + {model: $m}' "$W/$name.fit.jsonl" >> "$W/all.jsonl"
done
cp "$W/all.jsonl" "$OUT/fit_data.jsonl"
# least squares budget = c*P + b*n over the stable points (2x2 normal equations)
jq -s '
  [.[] | select(.stopped == "stable" or .stopped == "exhausted")] as $p
  | ($p | length) as $k
  | ([$p[] | .prod_log * .prod_log] | add) as $pp | ([$p[] | .prod_log * .ops] | add) as $pn
  | ([$p[] | .ops * .ops] | add) as $nn | ([$p[] | .prod_log * .trials] | add) as $py
  | ([$p[] | .ops * .trials] | add) as $ny
  | ($pp * $nn - $pn * $pn) as $det
  | (if $k >= 2 and $det != 0 then ($py * $nn - $pn * $ny) / $det else null end) as $c
  | (if $k >= 2 and $det != 0 then ($pp * $ny - $pn * $py) / $det else null end) as $b
  | ([$p[] | .trials] | add / ($k | if . == 0 then 1 else . end)) as $mean
  | (if $c == null then null else
       1 - ([$p[] | (.trials - ($c * .prod_log + $b * .ops)) | . * .] | add) / ([$p[] | (.trials - $mean) | . * .] | add | if . == 0 then 1 else . end)
     end) as $r2
  | {model: "budget = c * sum_v prod_l ln(s_l) + b * n_ops (AGO Eq. 1 summed over a mini-subgraph)",
     c: $c, b: $b, r2: $r2, points: $k, points_not_stable: (length - $k),
     budget_unit: "schedules explored until the best stopped improving (ecg-partition --tune --patience)",
     cpu: "see fit_data.jsonl and the tuning runs"}' "$OUT/fit_data.jsonl" > "$W/fit.json"
cp "$W/fit.json" "$OUT/fit.json"
c=$(jq -r '.c' "$OUT/fit.json"); b=$(jq -r '.b' "$OUT/fit.json"); k=$(jq -r '.points' "$OUT/fit.json")
[ "$c" != null ] || { echo "partition_fit: fewer than 2 stable points; raise FIT_SECONDS" >&2; exit 1; }
td=$(awk -v c="$c" 'BEGIN { t = c * 1024; if (t <= 0) t = 1024; printf "%.6g", t }')
cat > "$OUT/weights_fitted.txt" <<EOF
# AGO Eq. 1 fitted on this machine by make partition-fit (scripts/partition_fit.sh) from
# $k mini-subgraphs whose tuning stopped improving: budget = c * prod_l ln(s_l) + b per
# operator (least squares; fit.json has R^2, fit_data.jsonl the points). max_weight is
# c * 1024, the built-in threshold on the fitted scale (b ignored). Use with --weights.
c $c
b $b
max_weight $td
fitted 1
EOF
cat "$OUT/fit.json"
