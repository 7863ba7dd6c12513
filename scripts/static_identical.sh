#!/bin/sh
# The static-lowering safety net of issue 9's dynamic mode: for every model of
# scripts/models.tsv (non-#dyn lines, converted with their --input-shape bindings), print
# the sha256 of the model.c and model.h that a tool directory's onnx2ecg | [ecg-fuse |]
# ecg-lower write, one line per model and pipeline:
#   sh scripts/static_identical.sh BINDIR OUTDIR > sums.txt
# Run it with main's bin/ and a branch's bin/ and diff the two lists: a lowering change
# that must not touch static builds leaves them byte-identical.
set -u
cd "$(dirname "$0")/.."
bin=$1
out=$2
mkdir -p "$out"
tab=$(printf '\t')
grep -v '^#' scripts/models.tsv | while IFS="$tab" read -r name path shapes; do
  [ -f "$path" ] || { echo "$name missing $path"; continue; }
  args=""
  [ "$shapes" = "-" ] || for b in $(printf '%s' "$shapes" | tr ',' ' '); do args="$args --input-shape $b"; done
  # shellcheck disable=SC2086
  "$bin/onnx2ecg" "$path" $args -o "$out/$name.ecg" 2>/dev/null || { echo "$name convert-failed"; continue; }
  "$bin/ecg-fuse" < "$out/$name.ecg" > "$out/$name.f.ecg" 2>/dev/null || { echo "$name fuse-failed"; continue; }
  for v in plain fused; do
    in=$out/$name.ecg
    [ $v = fused ] && in=$out/$name.f.ecg
    rm -rf "$out/$name.$v"
    if "$bin/ecg-lower" "$in" -o "$out/$name.$v" 2>/dev/null; then
      echo "$name $v $(cat "$out/$name.$v/model.c" "$out/$name.$v/model.h" | sha256sum | cut -c1-16) $(sha256sum < "$out/$name.$v/model.c" | cut -c1-16)"
    else
      echo "$name $v lower-failed"
    fi
  done
done
