#!/bin/sh
# Convert, lower, run and check one model from scripts/models.tsv against ONNX Runtime:
#   scripts/e2e.sh NAME [ecg-bench options...]
# Writes OUT/NAME.ecg, OUT/NAME/ (lowered), OUT/NAME.data/test_data_set_0 (seeded inputs and
# ONNX Runtime outputs), and prints ecg-bench's JSON line. Exit status is ecg-bench's.
# OUT is $ECG_OUT, default out/ in the repo. With ECG_ARCH=aarch64 (or riscv64) the model is
# lowered with --arch $ECG_ARCH into OUT/NAME.$ECG_ARCH/ and ecg-bench cross-builds it and runs
# it under qemu-user (same reference data).
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
# shellcheck disable=SC2086
bin/onnx2ecg "$path" $args -o "$out/$name.ecg"
# ECG_STAGES: optimising stages inserted before the lowering, e.g. "ecg-fuse --plan fixed"
# (each word list one stage; several stages separated by '|').
if [ -n "${ECG_STAGES:-}" ]; then
  cp "$out/$name.ecg" "$out/$name.in.ecg"
  printf '%s\n' "$ECG_STAGES" | tr '|' '\n' | while read -r stage; do
    [ -n "$stage" ] || continue
    # shellcheck disable=SC2086
    bin/$stage "$out/$name.in.ecg" -o "$out/$name.st.ecg"
    mv "$out/$name.st.ecg" "$out/$name.in.ecg"
  done
  mv "$out/$name.in.ecg" "$out/$name.ecg"
fi
low="$out/$name${ECG_ARCH:+.$ECG_ARCH}"
bin/ecg-lower ${ECG_ARCH:+--arch "$ECG_ARCH"} -o "$low" "$out/$name.ecg"
if [ ! -f "$out/$name.data/test_data_set_0/output_0.pb" ]; then
  # shellcheck disable=SC2086
  node tools/bench/make_data.mjs --model "$path" --out "$out/$name.data/test_data_set_0" --seed 1 $dargs >&2
fi
exec bin/ecg-bench "$low" --data "$out/$name.data/test_data_set_0" "$@"
