#!/bin/sh
# The whole test suite (make test): unit tests (C), ecg-bench's self-test, and the bats
# suites in tests/bats/ (CLI behaviour, malformed inputs under sanitizers, fuzzing,
# end-to-end correctness of every model against ONNX Runtime).
# Prints one closing line "N passed, M failed" and exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
pass=0; fail=0
note() { printf '%s\n' "$*"; }
count_tap() { # count "ok"/"not ok" lines of a TAP stream in file $1
  p=$(grep -c '^ok ' "$1" || true); f=$(grep -c '^not ok ' "$1" || true)
  pass=$((pass + p)); fail=$((fail + f))
}
CC=${CC:-cc}
mkdir -p build
# C unit tests: each prints "N passed, M failed" and exits non-zero on failure. partition:
# ecg-partition's CLUSTER and the ECG's subgraphs on 1200 seeded random DAGs (a few seconds). The runtime
# tests (tests/unit/rt_build.sh) run natively and, cross-built for aarch64 (NEON paths),
# under qemu-aarch64.
QEMU_A64="qemu-aarch64 -L ${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}"
for t in ops graph partition rt rt_port rt_aarch64 rt_port_aarch64; do
  case $t in
    partition) cmd="$CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Iformat -Ibuild/gen -Itools/partition tests/unit/partition_test.c build/tools/partition/cluster.o build/tools/partition/weight.o build/gen/pt_weights_blob.o build/libecg.a -lprotobuf-c -lzstd -lm -o build/partition_test"
         exe=./build/partition_test ;;
    ops|graph) cmd="$CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Iformat -Ibuild/gen tests/unit/${t}_test.c build/libecg.a -lprotobuf-c -lzstd -lm -o build/${t}_test"
         exe=./build/${t}_test ;;
    rt) cmd="sh tests/unit/rt_build.sh native build/rt-native"; exe=./build/rt-native/rt_test ;;
    rt_port) cmd=true; exe=./build/rt-native/rt_port_test ;;
    rt_aarch64) cmd="sh tests/unit/rt_build.sh aarch64 build/rt-aarch64"; exe="$QEMU_A64 ./build/rt-aarch64/rt_test" ;;
    rt_port_aarch64) cmd=true; exe="$QEMU_A64 ./build/rt-aarch64/rt_port_test" ;;
  esac
  if $cmd && $exe > build/${t}_test.log 2>&1; then r=0; else r=1; fi
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' build/${t}_test.log | tail -1)
  note "unit/$t: ${line:-no summary} (exit $r)"
  p=$(printf '%s' "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); f=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
  [ "$r" -eq 0 ] || [ "${f:-0}" -gt 0 ] || fail=$((fail + 1))
done
# One source of truth for One-to-One operators: every scalar.def expression folded
# (libecg) and generated (ecg-lower's lw_scalar_stmt, compiled like a lowered model).
LOBJ="$(ls build/tools/lower/*.o build/tools/lower/emit/*.o build/tools/common/*.o | grep -v '/main\.o$') build/gen/runtime_blob.o build/gen/onnx.pb-c.o build/tools/lower/runtime/ecg_resize.o"
# shellcheck disable=SC2086
if $CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Iformat -Ibuild/gen -Itools/lower tests/unit/scalar_test.c $LOBJ build/libecg.a \
     -lprotobuf-c -lzstd -lm -o build/scalar_test && ./build/scalar_test build/scalar_gen.c > build/scalar_test.log 2>&1 &&
   $CC -O2 -fno-math-errno -fno-trapping-math -Iformat build/scalar_gen.c -lm -o build/scalar_gen &&
   ./build/scalar_gen >> build/scalar_test.log 2>&1; then r=0; else r=1; fi
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' build/scalar_test.log | tail -1)
note "unit/scalar: ${line:-no summary} (exit $r)"
p=$(printf '%s' "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); f=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
[ "$r" -eq 0 ] || [ "${f:-0}" -gt 0 ] || fail=$((fail + 1))
# ecg-bench self-test (prints TAP-like ok/not ok lines)
if [ -f tools/bench/selftest.sh ]; then
  sh tools/bench/selftest.sh build-san/bin/ecg-bench > build/bench_selftest.log 2>&1 || true
  p=$(grep -c '^ok ' build/bench_selftest.log || true); f=$(grep -c '^FAIL' build/bench_selftest.log || true)
  [ "$p" -gt 0 ] || f=$((f + 1))
  pass=$((pass + p)); fail=$((fail + f))
  note "bench selftest: $p ok, $f failed"
fi
# bats suites
bats --tap tests/bats > build/bats.log 2>&1
cat build/bats.log
count_tap build/bats.log
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
