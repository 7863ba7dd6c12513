#!/bin/sh
# scripts/device_pack.sh DIR TARGET MODEL...: pack models of scripts/models.tsv for a GPU machine that
# has no network, no node and none of our tools (e.g. the device machine lent to some sessions):
#   DIR/MODEL.TARGET      onnx2ecg | ecg-rewrite | ecg-fuse --intensive [| ecg-partition --eop
#                         --share ${SHARE:-0.5} for c+opencl] | ecg-lower --target TARGET (unbuilt)
#   DIR/data/MODEL/test_data_set_0   make_data.mjs's seeded inputs and ONNX Runtime's outputs (seed 1),
#                         as raw files and meta.tsv (tools/bench/pb2raw.mjs)
#   DIR/debs              the OpenCL ICD loader, its headers and clinfo (apt-get download;
#                         ECG_PACK_DEBS=0: none, for a machine that has them)
#   DIR/device_run.sh, DIR/device_check.py   what runs there
# TARGET: opencl or c+opencl. On the GPU machine, from DIR's parent: `sh DIR/device_run.sh DIR` builds
# every packed directory and prints one JSON line per model (device, median ms, mismatches at
# ecg-bench's default rtol 1e-3, atol 1e-4). Packing again replaces a model's directory and keeps its data.
# Exit: 0 ok, 1 a stage failed (its message on stderr), 2 usage.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 DIR opencl|c+opencl MODEL..." >&2; exit 2; }
dir=$1; target=$2; shift 2
case $target in opencl|c+opencl) ;; *) echo "$0: TARGET must be opencl or c+opencl, not '$target'" >&2; exit 2 ;; esac
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir/data" "$dir/debs"
dir=$(cd "$dir" && pwd)
cd "$top"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for name in "$@"; do
  line=$(grep -v '^#' scripts/models.tsv | awk -F'\t' -v n="$name" '$1 == n')
  [ -n "$line" ] || { echo "$0: unknown model '$name' (see scripts/models.tsv)" >&2; exit 1; }
  path=$(printf '%s\n' "$line" | cut -f2); shapes=$(printf '%s\n' "$line" | cut -f3)
  args=""
  [ "$shapes" = "-" ] || for s in $(printf '%s' "$shapes" | tr ',' ' '); do args="$args --input-shape $s"; done
  # shellcheck disable=SC2086
  bin/onnx2ecg "$path" $args -o "$tmp/g.ecg"
  bin/ecg-rewrite "$tmp/g.ecg" -o "$tmp/r.ecg"
  bin/ecg-fuse --intensive "$tmp/r.ecg" -o "$tmp/f.ecg"
  if [ "$target" = c+opencl ]; then
    bin/ecg-partition --eop --share "${SHARE:-0.5}" "$tmp/f.ecg" -o "$tmp/p.ecg"; mv "$tmp/p.ecg" "$tmp/f.ecg"
  fi
  rm -rf "$dir/$name.$target"
  bin/ecg-lower --target "$target" -o "$dir/$name.$target" "$tmp/f.ecg"
  data=$dir/data/$name/test_data_set_0
  if [ ! -f "$data/meta.tsv" ]; then
    # shellcheck disable=SC2086
    node tools/bench/make_data.mjs --model "$path" --out "$data" --seed 1 $args
    node tools/bench/pb2raw.mjs "$data"
    rm -f "$data"/*.pb
  fi
done
if [ "${ECG_PACK_DEBS:-1}" != 0 ] && ! ls "$dir"/debs/ocl-icd-libopencl1_*.deb >/dev/null 2>&1; then
  (cd "$dir/debs" && apt-get download ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers clinfo)
fi
cp scripts/device_run.sh scripts/device_check.py "$dir/"
du -sh "$dir"
