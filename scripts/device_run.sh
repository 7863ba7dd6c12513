#!/bin/sh
# device_run.sh DIR: on a GPU machine, run what scripts/device_pack.sh packed into DIR: register NVIDIA's
# OpenCL library as an ICD where it is installed without one (libnvidia-opencl.so.1; needs root), unpack
# the ICD loader and headers from DIR/debs under /tmp/ocl (not into /), build every DIR/*.opencl and
# DIR/*.c+opencl directory, and print one JSON line per model (device_check.py); with $OUT set, the
# build logs and results.jsonl go there too. RUNS timed runs per model (default 30).
# Exit: 0 when every model built, ran and matched; 1 otherwise (mlsd_320x320_tiny's ~220 mismatches
# are its known case: ONNX Runtime's own unoptimised run is as far off, tools/lower/LOWERED.md).
set -u
dir=${1:?usage: device_run.sh DIR}
out=${OUT:-/tmp/device_run}; mkdir -p "$out"
if [ ! -f /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q 'libnvidia-opencl\.so\.1'; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
mkdir -p /tmp/ocl
for f in "$dir"/debs/*.deb; do [ -f "$f" ] && dpkg -x "$f" /tmp/ocl; done
lib=/tmp/ocl/usr/lib/x86_64-linux-gnu
export CPATH=/tmp/ocl/usr/include LIBRARY_PATH=$lib LD_LIBRARY_PATH=$lib
nvidia-smi -L 2>/dev/null; PATH=/tmp/ocl/usr/bin:$PATH clinfo -l; gcc --version | head -n 1
fail=0
for d in "$dir"/*.opencl "$dir"/*.c+opencl; do
  [ -d "$d" ] || continue
  (cd "$d" && make -s -j"$(nproc)" >"$out/build_$(basename "$d" | tr + _).log" 2>&1) || { echo "build failed: $d" >&2; fail=1; }
done
for d in "$dir"/*.opencl "$dir"/*.c+opencl; do
  [ -x "$d/runner" ] || continue
  m=$(basename "$d"); m=${m%%.*}
  line=$(timeout 300 python3 "$dir/device_check.py" "$d" "$dir/data/$m/test_data_set_0" "${RUNS:-30}")
  printf '%s\n' "$line" | tee -a "$out/results.jsonl"
  case $line in *'"mismatches": 0,'*) ;; *) fail=1 ;; esac
done
exit $fail
