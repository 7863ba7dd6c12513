#!/bin/sh
# scripts/eop_models.sh [SHARE...]: every model of scripts/models.tsv through
# ecg-fuse | ecg-partition --eop --share S | ecg-lower --target c+opencl, run on OpenCL device 0
# (PoCL without a GPU) and checked against ONNX Runtime's outputs (scripts/e2e.sh; mlsd_320x320_tiny
# against the bar models.bats holds the C target to: no further from the reference than ONNX
# Runtime's unoptimised run). Shares default to 0.5 and 0.37 (DESIGN.md: forced ratios).
# One line per model and share: NAME SHARE pass|FAIL kernels-split kernels-on-cpu mismatches;
# exit 1 when any fails. `make test-eop` runs it (long: minutes per share on PoCL).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ $# -gt 0 ] || set -- 0.5 0.37
export ECG_OUT=${ECG_OUT:-out/eop}
export ECG_TARGET=c+opencl
fail=0
for share in "$@"; do
  for name in $(grep -v '^#' scripts/models.tsv | cut -f1); do
    extra=""
    [ "$name" = mlsd_320x320_tiny ] && extra=--ort-noise
    # shellcheck disable=SC2086
    json=$(ECG_STAGES="ecg-fuse|ecg-partition --eop --share $share" sh scripts/e2e.sh "$name" --runs 1 --warmup 0 $extra 2>"$ECG_OUT/$name.$share.err" | tail -n 1)
    ok=$(printf '%s' "$json" | jq -r 'if .ort_noise_mismatches != null then (.mismatches <= .ort_noise_mismatches and .max_abs_err <= .ort_noise_max_abs_err) else .pass end' 2>/dev/null)
    ran=$(jq -r '[.placements[].ran] | "split=\(map(select(. == "split")) | length) cpu=\(map(select(. == "cpu")) | length)"' "$ECG_OUT/$name.c_opencl/model.json" 2>/dev/null)
    mis=$(printf '%s' "$json" | jq -r '.mismatches' 2>/dev/null)
    if [ "$ok" = true ]; then echo "$name $share pass $ran mismatches=$mis"; else echo "$name $share FAIL $ran mismatches=$mis (stderr: $ECG_OUT/$name.$share.err)"; fail=1; fi
  done
done
exit $fail
