#!/usr/bin/env bats
# Cross-compilation (ecg-lower --arch aarch64|riscv64): the lowered Makefile cross-builds
# with Debian's cross toolchains, ecg-bench runs the runner under qemu-user and checks it
# against ONNX Runtime's outputs. Needs `make setup` (gcc-aarch64-linux-gnu,
# gcc-riscv64-linux-gnu, their libgomp1/libc6-dev cross packages, qemu-user) and
# `make models`. The runtime's NEON unit tests under qemu-aarch64 are in tests/run.sh.

load helpers

setup() {
  require_tools
  export ECG_OUT="$ROOT/build/bats-out" # shares models.bats's reference data
}

# e2e_arch ARCH NAME: scripts/e2e.sh NAME lowered with --arch ARCH; pass, emulated, arch.
e2e_arch() {
  local arch=$1 name=$2 path
  require_file /usr/bin/qemu-$arch
  path=$(grep -v '^#' "$ROOT/scripts/models.tsv" | awk -F'\t' -v n="$name" '$1 == n {print $2}')
  require_file "$ROOT/$path"
  run --separate-stderr env ECG_ARCH="$arch" sh "$ROOT/scripts/e2e.sh" "$name"
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  local json=${lines[-1]}
  [ "$(jq -r '.pass' <<<"$json")" = "true" ]
  [ "$(jq -r '.mismatches' <<<"$json")" = "0" ]
  [ "$(jq -r '.emulated' <<<"$json")" = "true" ]
  [ "$(jq -r '.arch' <<<"$json")" = "$arch" ]
  [ "$(jq -r '.runs' <<<"$json")" = "1" ] # emulated default: one run, no warm-up
  [ "$(jq -r '.arch' "$ECG_OUT/$name.$arch/model.json")" = "$arch" ]
}

@test "e2e --arch aarch64 squeezenet1_1 (CNN) under qemu-aarch64" { e2e_arch aarch64 squeezenet1_1; }
@test "e2e --arch aarch64 mobilenet_v2 (depthwise CNN) under qemu-aarch64" { e2e_arch aarch64 mobilenet_v2; }
@test "e2e --arch aarch64 bert_tiny (transformer) under qemu-aarch64" { e2e_arch aarch64 bert_tiny; }
@test "e2e --arch aarch64 openwakeword_embedding (audio) under qemu-aarch64" { e2e_arch aarch64 openwakeword_embedding; }
@test "e2e --arch riscv64 squeezenet1_1 under qemu-riscv64" { e2e_arch riscv64 squeezenet1_1; }
@test "e2e --arch riscv64 bert_tiny under qemu-riscv64" { e2e_arch riscv64 bert_tiny; }

# lower_node ARCH DIR: ONNX's test_conv_with_strides_padding lowered with --arch ARCH into DIR.
lower_node() {
  require_file "$NODE_DATA/test_conv_with_strides_padding/model.onnx"
  "$BIN/onnx2ecg" "$NODE_DATA/test_conv_with_strides_padding/model.onnx" | "$BIN/ecg-lower" --arch "$1" -o "$2"
}

@test "ecg-lower --arch: only Makefile and model.json differ from native; native has no cross lines" {
  local T="$BATS_TEST_TMPDIR"
  lower_node native "$T/n"
  lower_node aarch64 "$T/a"
  run diff -rq "$T/n" "$T/a"
  echo "$output"
  [ "$(grep -c . <<<"$output")" -eq 2 ]
  grep -q 'Makefile differ' <<<"$output"
  grep -q 'model.json differ' <<<"$output"
  [ "$(jq -r .arch "$T/n/model.json")" = native ]
  [ "$(jq -r .arch "$T/a/model.json")" = aarch64 ]
  ! grep -q CROSS_COMPILE "$T/n/Makefile" || false
  grep -q '^CROSS_COMPILE ?= aarch64-linux-gnu-$' "$T/a/Makefile"
  # the default build is the cross compiler; CROSS_COMPILE= and CC= override it
  run make -C "$T/a" -n model.o
  grep -q '^aarch64-linux-gnu-gcc -O2 -fopenmp' <<<"$output" # model.c: MODEL_CFLAGS, -O3 made -O2
  run make -C "$T/a" -n model.o CROSS_COMPILE=
  grep -q '^gcc -O2 -fopenmp' <<<"$output"
}

@test "ecg-lower --arch with an unknown ISA: exit 2 naming the valid ones" {
  run --separate-stderr "$BIN/ecg-lower" --arch sparc -o "$BATS_TEST_TMPDIR/x" /dev/null
  echo "$status $stderr"
  [ "$status" -eq 2 ]
  grep -q "unknown --arch 'sparc'" <<<"$stderr"
  grep -q "native, aarch64, riscv64" <<<"$stderr"
  [ ! -e "$BATS_TEST_TMPDIR/x" ]
}

@test "STATIC=1: a self-contained aarch64 runner (runs under qemu without the sysroot)" {
  require_file /usr/bin/qemu-aarch64
  local T="$BATS_TEST_TMPDIR"
  lower_node aarch64 "$T/a"
  make -C "$T/a" -s STATIC=1 runner 2>/dev/null
  run env -u QEMU_LD_PREFIX qemu-aarch64 "$T/a/runner" --info
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q '^output' <<<"$output"
}

@test "ecg-bench --arch aarch64 node test: pass, emulated; --ort gives no ratio" {
  require_file /usr/bin/qemu-aarch64 "$ROOT/tools/bench/node_modules/onnxruntime-node"
  local T="$BATS_TEST_TMPDIR"
  lower_node aarch64 "$T/a"
  run --separate-stderr "$BIN/ecg-bench" "$T/a" --data "$NODE_DATA/test_conv_with_strides_padding/test_data_set_0" --atol 1e-5 \
    --ort --model "$NODE_DATA/test_conv_with_strides_padding/model.onnx"
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = true ]
  [ "$(jq -r '.emulated' <<<"${lines[-1]}")" = true ]
  [ "$(jq -r '.ratio' <<<"${lines[-1]}")" = null ]
  [ "$(jq -r '.ort_median_ms' <<<"${lines[-1]}")" != null ]
}

@test "ecg-bench on a foreign ISA without the cross tools: exit 1 naming the Debian packages" {
  local T="$BATS_TEST_TMPDIR"
  lower_node aarch64 "$T/a"
  mkdir "$T/emptybin"
  run --separate-stderr env PATH="$T/emptybin" "$BIN/ecg-bench" "$T/a" --random 1
  echo "exit $status; $stderr"
  [ "$status" -eq 1 ]
  grep -q 'aarch64-linux-gnu-gcc' <<<"$stderr"
  grep -q 'qemu-aarch64' <<<"$stderr"
  grep -q 'gcc-aarch64-linux-gnu libgomp1-arm64-cross' <<<"$stderr"
  grep -q 'qemu-user' <<<"$stderr"
  [ -z "$output" ]
}

@test "ecg-bench on a native directory reports the host ISA, not emulated" {
  local T="$BATS_TEST_TMPDIR"
  lower_node native "$T/n"
  run --separate-stderr "$BIN/ecg-bench" "$T/n" --random 1 --runs 1
  [ "$status" -eq 0 ]
  [ "$(jq -r '.emulated' <<<"${lines[-1]}")" = false ]
  [ "$(jq -r '.arch' <<<"${lines[-1]}")" = "$(uname -m)" ]
}
