#!/usr/bin/env bats
# The runtime library and symbols of lowered directories (tools/lower/LOWERED.md "The
# runtime library", ../shared/DESIGN.md "Symbols" and "ISA-dependent data"): two models
# with different --prefix link into one program and share one runtime; every symbol is
# the model's prefix or ecg_rt1_; no mutable globals; the runtime is compiled once per
# configuration (ECG_RT_CACHE) and a directory still builds on its own; a model linked
# with a runtime of other sources or another ISA/OpenMP setting refuses to run.

load helpers

A_TEST=test_conv_with_strides_padding
B_TEST=test_gemm_all_attributes

setup() {
  require_tools
  T="$BATS_TEST_TMPDIR"
}

# lower NODE_TEST PREFIX DIR: ONNX's node test model lowered with --prefix into DIR.
lower() {
  require_file "$NODE_DATA/$1/model.onnx"
  "$BIN/onnx2ecg" "$NODE_DATA/$1/model.onnx" | "$BIN/ecg-lower" --prefix "$2" -o "$3"
}

# runner_ref DIR: run DIR/runner on DIR/in_*.raw, writing DIR/ref_NAME.raw per output.
runner_ref() {
  local args=() kind name
  while IFS=$'\t' read -r kind name _; do
    if [ "$kind" = input ]; then args+=(--in "$name=$1/in_$name.raw"); else args+=(--out "$name=$1/ref_$name.raw"); fi
  done < <("$1/runner" --info)
  "$1/runner" "${args[@]}" > /dev/null
}

# same_outputs DIR: every DIR/out_*.raw equals the runner's DIR/ref_*.raw byte for byte.
same_outputs() {
  local n=0 f
  for f in "$1"/out_*.raw; do
    cmp "$f" "${f/out_/ref_}" || return 1
    n=$((n + 1))
  done
  [ "$n" -ge 1 ]
}

@test "two lowered models (--prefix conv_a, gemm_b) link into one program, share one runtime and both run correctly" {
  lower "$A_TEST" conv_a "$T/a"
  lower "$B_TEST" gemm_b "$T/b"
  make -s -C "$T/a"
  make -s -C "$T/b"
  # each model alone is right (ONNX's expected outputs)
  for d in a:$A_TEST b:$B_TEST; do
    run --separate-stderr "$BIN/ecg-bench" "$T/${d%%:*}" --data "$NODE_DATA/${d#*:}/test_data_set_0" --runs 1
    echo "$output $stderr"
    [ "$status" -eq 0 ]
    [ "$(jq -r .pass <<<"${lines[-1]}")" = true ]
  done
  # one program, both static libraries (each carries the runtime: the linker takes one copy)
  cc -std=gnu11 -Wall -Wextra -Werror -O1 -fopenmp -I"$T" "$BATS_TEST_DIRNAME/twomodels.c" \
    "$T/a/libconv_a.a" "$T/b/libgemm_b.a" -lm -o "$T/two_static"
  run "$T/two_static" "$T/a" "$T/b"
  echo "$output"
  [ "$status" -eq 0 ]
  runner_ref "$T/a"
  runner_ref "$T/b"
  same_outputs "$T/a"
  same_outputs "$T/b"
  # the runtime is in the program once
  [ "$(nm "$T/two_static" | grep -c ' T ecg_rt1_sgemm_packed$')" -eq 1 ]
  # the same with both shared libraries (each with its runtime hidden inside)
  rm -f "$T"/a/out_* "$T"/b/out_*
  cc -std=gnu11 -O1 -fopenmp -I"$T" "$BATS_TEST_DIRNAME/twomodels.c" -L"$T/a" -lconv_a -L"$T/b" -lgemm_b \
    -Wl,-rpath,"$T/a:$T/b" -lm -o "$T/two_shared"
  run "$T/two_shared" "$T/a" "$T/b"
  echo "$output"
  [ "$status" -eq 0 ]
  same_outputs "$T/a"
  same_outputs "$T/b"
}

@test "symbols: the model's prefix or ecg_rt1_ only; the shared library exports the model's alone; no mutable globals" {
  lower "$A_TEST" conv_a "$T/a"
  make -s -C "$T/a"
  run bash -c "nm -g --defined-only '$T/a/libconv_a.a' | awk 'NF == 3 {print \$3}' | sort -u"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -n "$output" ]
  ! grep -v -E '^(conv_a_|ecg_rt1_)' <<<"$output" || false
  grep -qx conv_a_create <<<"$output"
  grep -qx ecg_rt1_conv2d <<<"$output"
  grep -qx ecg_rt1_build_id <<<"$output"
  run bash -c "nm -D --defined-only '$T/a/libconv_a.so' | awk 'NF == 3 {print \$3}' | sort -u"
  echo "$output"
  ! grep -v -E '^conv_a_' <<<"$output" || false
  grep -qx conv_a_run <<<"$output"
  # no writable data in any object, model or runtime (read-only tables only)
  run bash -c "size -A '$T/a/libconv_a.a' | awk '/\\.o/ {f = \$1} \$1 ~ /^\\.(data|bss|tdata|tbss)/ && \$1 !~ /^\\.data\\.rel\\.ro/ && \$2 > 0 {print f, \$1, \$2}'"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  size -A "$T/a/libconv_a.a" | grep -q '^model.o' # the check looked at the objects
}

@test "the runtime is compiled once per configuration (ECG_RT_CACHE); an edited runtime source is compiled, not taken from the cache" {
  export ECG_RT_CACHE="$T/cache" CFLAGS="-O0 -fopenmp"
  lower "$A_TEST" conv_a "$T/a"
  lower "$B_TEST" gemm_b "$T/b"
  run make -C "$T/a"
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q -- '-c ecg_gemm.c' <<<"$output"     # compiled here the first time
  [ "$(ls "$T/cache" | wc -l)" -eq 1 ]
  lib=$(ls "$T"/cache/*/libecg_rt.a)
  grep -q '^cc: cc -O0 -fopenmp' "$(dirname "$lib")/config.txt"
  run make -C "$T/b"
  echo "$output"
  [ "$status" -eq 0 ]
  ! grep -q -- '-c ecg_gemm.c' <<<"$output" || false   # the second directory links the cached library
  grep -q "cp $lib libgemm_b.a" <<<"$output"
  [ ! -e "$T/b/libecg_rt.a" ]
  "$T/b/runner" --info > /dev/null
  # another configuration (no OpenMP) gets its own library
  run make -C "$T/b" clean all CFLAGS=-O0
  [ "$status" -eq 0 ]
  grep -q -- '-c ecg_gemm.c' <<<"$output"
  [ "$(ls "$T/cache" | wc -l)" -eq 2 ]
  # an edited runtime source in a directory: its own build, never the cached one
  echo '/* edited */' >> "$T/b/ecg_pool.c"
  run make -C "$T/b" clean all
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q -- '-c ecg_pool.c' <<<"$output"
  [ "$(ls "$T/cache" | wc -l)" -eq 3 ]
  [ "$("$T/b/runner" --info | grep -c .)" -ge 2 ]
}

@test "a lowered directory builds on its own: no cache (ECG_RT_CACHE=), or a cache it cannot write (a note, no failure)" {
  export CFLAGS="-O0 -fopenmp"
  lower "$A_TEST" conv_a "$T/a"
  run --separate-stderr env ECG_RT_CACHE= make -C "$T/a"
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  grep -q -- '-c ecg_gemm.c' <<<"$output"
  [ -f "$T/a/libecg_rt.a" ]
  run "$BIN/ecg-bench" "$T/a" --data "$NODE_DATA/$A_TEST/test_data_set_0" --runs 1
  [ "$(jq -r .pass <<<"${lines[-1]}")" = true ]
  make -s -C "$T/a" clean
  run --separate-stderr env ECG_RT_CACHE=/proc/ecg-no-cache make -C "$T/a"
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  grep -q 'note: cannot write the runtime cache /proc/ecg-no-cache/' <<<"$stderr"
  [ -x "$T/a/runner" ]
}

# refused NAME LIB CFLAGS...: DIR $T/a's model.c compiled with CFLAGS, linked with the runtime
# library LIB into a runner: it exits 1 with the mismatch message and writes no output.
refused() {
  local name=$1 lib=$2
  shift 2
  cc "$@" -c "$T/a/model.c" -I"$T/a" -o "$T/m_$name.o"
  cc -O1 -fopenmp -I"$T/a" "$T/a/runner_main.c" "$T/m_$name.o" "$lib" -lm -o "$T/r_$name"
  run --separate-stderr "$T/r_$name" --in x="$T/x.raw" --in W="$T/w.raw" --out y="$T/y.raw"
  echo "$name: $status $stderr"
  [ "$status" -eq 1 ]
  grep -q 'the runtime library linked in (ecg_rt1 [0-9a-f]* [a-z0-9_]*+.*openmp) is not the one model.c was compiled against' <<<"$stderr"
  [ ! -e "$T/y.raw" ]
}

@test "a model linked with a runtime of other sources, or another ISA/OpenMP setting, refuses to run (exit 1, no output)" {
  lower "$A_TEST" conv_a "$T/a"
  make -s -C "$T/a" runner
  lib=$(make -s -C "$T/a" ecg-rt)
  [ -f "$lib" ]
  head -c 140 /dev/zero > "$T/x.raw"; head -c 36 /dev/zero > "$T/w.raw"
  "$T/a/runner" --in x="$T/x.raw" --in W="$T/w.raw" --out y="$T/y.raw" > /dev/null
  rm "$T/y.raw"
  # model.c compiled without OpenMP: its scratch would be sized for one thread
  refused noomp "$lib" -O1
  # model.c compiled against other runtime sources (another ECG_RT_SOURCE_ID)
  refused src "$lib" -O1 -fopenmp -DECG_RT_ID_H '-DECG_RT_SOURCE_ID="0123456789abcdef"'
}

@test "a static build's packed weights are one region, in transparent huge pages where Linux offers them (madvise)" {
  require_file "$SHARED_MODELS/mobilenet_v2.onnx"
  "$BIN/onnx2ecg" "$SHARED_MODELS/mobilenet_v2.onnx" --input-shape input=1x3x224x224 | "$BIN/ecg-fuse" | "$BIN/ecg-lower" -o "$T/m"
  # every slot's bytes summed, one allocation, the slots carved from it; none allocated alone
  grep -q 'ctx->pkr = huge_region_(off_)' "$T/m/model.c"
  ! grep -q 'ctx->pk\[[0-9]*\] = alloc64' "$T/m/model.c" || false
  make -s -C "$T/m"
  cc -std=gnu11 -O1 -fopenmp -I"$T/m" "$BATS_TEST_DIRNAME/hugepk.c" "$T/m/libecg_model.a" -lm -o "$T/hp"
  run "$T/hp" "$T/m"
  echo "AnonHugePages kB: $output"
  [ "$status" -eq 0 ]
  # mobilenet_v2's packed weights are about 14 MB: at least one 2 MiB page where THP is on
  # (always or madvise); where it is off (never) or /proc is missing, the model still runs
  local thp
  thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo none)
  if [[ "$thp" == *"[madvise]"* || "$thp" == *"[always]"* ]]; then [ "$output" -ge 2048 ]; fi
}

@test "a static build's context created at 1 OpenMP thread runs on 1 after the caller raised OpenMP's count to 4 (its scratch was sized at create), gives the count back, same outputs, no ASan report" {
  require_file "$SHARED_MODELS/resnet18.onnx"
  "$BIN/onnx2ecg" "$SHARED_MODELS/resnet18.onnx" --input-shape input=1x3x224x224 | "$BIN/ecg-fuse" | "$BIN/ecg-lower" -o "$T/r"
  make -s -C "$T/r"
  # (at 224x224 its Winograd convs index the scratch by thread: the old code overflowed it here)
  cc -std=gnu11 -O1 -g -fsanitize=address -fopenmp -I"$T/r" "$BATS_TEST_DIRNAME/threadsup.c" "$T/r/libecg_model.a" -lm -o "$T/up"
  run "$T/up" "$T/r" 1 "$T/y1.raw"
  echo "$output"
  [ "$status" -eq 0 ]
  run "$T/up" "$T/r" 4 "$T/y4.raw"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" != *AddressSanitizer* ]]
  [ "${lines[0]}" = 4 ] && [ "${lines[1]}" = 4 ] && [ "${lines[2]}" = 4 ] || false # the caller's count, restored
  cmp "$T/y1.raw" "$T/y4.raw"
}
