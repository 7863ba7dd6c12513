#!/bin/sh
# Fill the fusion profile database (tools/fuse/profile.c; DNNFusion §3.4.3): every Table 3.3
# 'depend' pair of a model's dnnfusion plan, lowered fused and unfused and timed with
# ecg-bench on seeded inputs on this machine; one JSON line per pair appended to DB.
#   scripts/profile_fusion.sh MODEL.ecg DB [RUNS]
# Threads: OMP_NUM_THREADS (default 1), the key ecg-fuse --profile-db matches records on.
set -eu
[ $# -ge 2 ] || { echo "usage: profile_fusion.sh MODEL.ecg DB [RUNS]" >&2; exit 2; }
ecg=$1 db=$2 runs=${3:-30}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/bin
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ecg-profile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$bin/ecg-fuse" --no-profile --emit-candidates "$tmp/c" "$ecg" -o "$tmp/plan.ecg"
key=$("$bin/ecg-fuse" --host-key)
n=0
for sig in "$tmp"/c/*.sig; do
  [ -f "$sig" ] || continue
  base=${sig%.sig}
  for v in fused unfused; do
    "$bin/ecg-lower" -o "$base.$v" "$base.$v.ecg"
    "$bin/ecg-bench" "$base.$v" --random 1 --runs "$runs" --warmup 3 --threads "$OMP_NUM_THREADS" > "$base.$v.json"
  done
  jq -cn --argjson key "$key" --rawfile sig "$sig" --slurpfile f "$base.fused.json" --slurpfile u "$base.unfused.json" \
    --argjson runs "$runs" \
    '$key + {kind: "fusion_pair", signature: ($sig | rtrimstr("\n")), fused_ms: $f[0].median_ms, unfused_ms: $u[0].median_ms, runs: $runs}' >> "$db"
  n=$((n + 1))
done
echo "profile_fusion.sh: $n pairs measured, appended to $db" >&2
