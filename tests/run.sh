#!/bin/sh
# The whole test suite (make test): unit tests (C), ecg-bench's self-test, and the bats
# suites in tests/bats/ (CLI behaviour, malformed inputs under sanitizers, fuzzing,
# end-to-end correctness of every model against ONNX Runtime).
# Prints one closing line "N passed, M failed, K skipped" and exits non-zero on any failure.
# A skip is never a pass: skipped tests are listed with their reasons and counted apart.
# A missing prerequisite (a command or package `make setup` installs) is a failure, named
# at the start, never a silent skip (issue 10, item 5).
set -u
cd "$(dirname "$0")/.."
pass=0; fail=0; skipped=0
note() { printf '%s\n' "$*"; }
count_tap() { # count "ok"/"not ok"/"ok ... # skip" lines of a TAP stream in file $1
  p=$(grep '^ok ' "$1" | grep -vci ' # skip' || true); f=$(grep -c '^not ok ' "$1" || true)
  k=$(grep '^ok ' "$1" | grep -ci ' # skip' || true)
  pass=$((pass + p)); fail=$((fail + f)); skipped=$((skipped + k))
  if [ "$k" -gt 0 ]; then note "SKIPPED ($k):"; grep '^ok ' "$1" | grep -i ' # skip' | sed 's/^/  /'; fi
}
CC=${CC:-cc}
mkdir -p build
# Prerequisites: each missing one is named and counted as a failure.
prereq() { # prereq WHAT TEST-COMMAND...
  what=$1; shift
  if ! "$@" >/dev/null 2>&1; then note "MISSING PREREQUISITE: $what (run make setup)"; fail=$((fail + 1)); fi
}
prereq "bats" command -v bats
prereq "script(1) (bsdutils)" command -v script
prereq "node" command -v node
prereq "onnxruntime-node (tools/bench/node_modules)" test -d tools/bench/node_modules/onnxruntime-node
prereq "protobufjs (tools/bench/node_modules)" test -d tools/bench/node_modules/protobufjs
prereq "libonnx-testdata" test -d /usr/share/libonnx-testdata/data/node
prereq "qemu-aarch64 (qemu-user)" command -v qemu-aarch64
prereq "aarch64-linux-gnu-gcc" command -v aarch64-linux-gnu-gcc
prereq "riscv64-linux-gnu-gcc" command -v riscv64-linux-gnu-gcc
prereq "clang with libFuzzer (clang, libclang-rt-dev)" sh -c 'echo "int LLVMFuzzerTestOneInput(const char*d,unsigned long n){return 0;}" | clang -x c -fsanitize=fuzzer -o /dev/null -'
prereq "the sanitizer build (make san)" test -x build-san/bin/onnx2ecg
prereq "an OpenCL device through the ICD loader (pocl-opencl-icd, ocl-icd-opencl-dev, clinfo)" sh -c 'test -f /usr/include/CL/cl.h && clinfo -l 2>/dev/null | grep -q Device'
# A second stream of bats suites runs beside the unit tests and the other suites, from the
# start: on a 2-core machine the whole suite kept 1.09 cores busy on average (make test at
# 6ada78e's parent: 22.8 CPU minutes in 20.9). These suites write only their own folders
# (tune.bats build/bats-out-tune, lowered_san.bats build/lowered-checks, the others their
# test's temporary folder) and compare no timings: the tuner's runs (tune.bats, about 210 s
# of the 1020 s of bats), the libFuzzer smokes, conformance samples, dynamic-shape models,
# the -Werror and sanitizer builds, EOP's evaluation. Their TAP lines are printed and
# counted after the others'.
BG_SUITES="tune libfuzzer conformance dynmodels lowered_san eopeval"
bats --tap --timing $(for s in $BG_SUITES; do echo "tests/bats/$s.bats"; done) > build/bats-bg.log 2>&1 &
bg_pid=$!
# C unit tests: each prints "N passed, M failed" and exits non-zero on failure. partition:
# ecg-partition's CLUSTER and the ECG's subgraphs on 1200 seeded random DAGs (a few seconds);
# eop: EOP's pattern fitting and partitioner (Fig. 1 example, Eq. 3, joint tuning);
# layout: the GCD² layout-selection solvers (frontier DP, partition heuristic) against
# exhaustive search on random chains and DAGs;
# memplan: the arena placements (SOD² peak-first, best-fit, size-first) against the exhaustive optimum. The runtime
# tests (tests/unit/rt_build.sh) run natively and, cross-built for aarch64 (NEON paths),
# under qemu-aarch64.
QEMU_A64="qemu-aarch64 -L ${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}"
for t in ops graph rdp partition memplan eop layout rt rt_port rt_nchwc rt_aarch64 rt_port_aarch64 rt_nchwc_aarch64; do
  case $t in
    partition) cmd="$CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Iformat -Ibuild/gen -Itools/partition tests/unit/partition_test.c build/tools/partition/cluster.o build/tools/partition/weight.o build/gen/pt_weights_blob.o build/libecg.a -lprotobuf-c -lzstd -lm -o build/partition_test"
         exe=./build/partition_test ;;
    eop) cmd="$CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Iformat -Ibuild/gen -Itools/partition tests/unit/eop_test.c tools/partition/eop.c -lm -o build/eop_test"
         exe=./build/eop_test ;;
    layout) cmd="$CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Itools/lower tests/unit/layout_test.c tools/lower/layout.c -lm -o build/layout_test"
         exe=./build/layout_test ;;
    memplan) cmd="$CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Iformat -Ibuild/gen -Itools/lower -Itools/common tests/unit/memplan_test.c tools/lower/memplan.c tools/lower/runtime/ecg_plan.c -o build/memplan_test"
         exe=./build/memplan_test ;;
    ops|graph|rdp) cmd="$CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Iformat -Ibuild/gen tests/unit/${t}_test.c build/libecg.a -lprotobuf-c -lzstd -lm -o build/${t}_test"
         exe=./build/${t}_test ;;
    rt) cmd="sh tests/unit/rt_build.sh native build/rt-native"; exe=./build/rt-native/rt_test ;;
    rt_port) cmd=true; exe=./build/rt-native/rt_port_test ;;
    rt_nchwc) cmd=true; exe=./build/rt-native/rt_nchwc_test ;;
    rt_aarch64) cmd="sh tests/unit/rt_build.sh aarch64 build/rt-aarch64"; exe="$QEMU_A64 ./build/rt-aarch64/rt_test" ;;
    rt_port_aarch64) cmd=true; exe="$QEMU_A64 ./build/rt-aarch64/rt_port_test" ;;
    rt_nchwc_aarch64) cmd=true; exe="$QEMU_A64 ./build/rt-aarch64/rt_nchwc_test" ;;
  esac
  t0=$(date +%s)
  if $cmd && $exe > build/${t}_test.log 2>&1; then r=0; else r=1; fi
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' build/${t}_test.log | tail -1)
  note "unit/$t: ${line:-no summary} (exit $r, $(($(date +%s) - t0)) s)"
  p=$(printf '%s' "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); f=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
  [ "$r" -eq 0 ] || [ "${f:-0}" -gt 0 ] || fail=$((fail + 1))
done
# One source of truth for One-to-One operators: every scalar.def expression folded
# (libecg) and generated (ecg-lower's lw_scalar_stmt, compiled like a lowered model).
LOBJ="$(ls build/tools/lower/*.o build/tools/lower/emit/*.o build/tools/common/*.o | grep -v '/main\.o$') build/gen/runtime_blob.o build/gen/onnx.pb-c.o build/tools/lower/runtime/ecg_resize.o build/tools/lower/runtime/ecg_plan.o"
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
  # its exit status counts too: a non-zero exit without a FAIL line is one failure
  if sh tools/bench/selftest.sh build-san/bin/ecg-bench > build/bench_selftest.log 2>&1; then r=0; else r=1; fi
  p=$(grep -c '^ok ' build/bench_selftest.log || true); f=$(grep -c '^FAIL' build/bench_selftest.log || true)
  [ "$p" -gt 0 ] || f=$((f + 1))
  [ "$r" -eq 0 ] || [ "$f" -gt 0 ] || f=$((f + 1))
  pass=$((pass + p)); fail=$((fail + f))
  note "bench selftest: $p ok, $f failed (exit $r)"
  [ "$f" -eq 0 ] || grep -E '^FAIL' build/bench_selftest.log | sed 's/^/  /'
else
  note "MISSING: tools/bench/selftest.sh"; fail=$((fail + 1))
fi
# bats suites, each test's wall time appended ("in N ms"): CI should stay under 30 minutes
bats --tap --timing $(ls tests/bats/*.bats | grep -vE "/($(echo $BG_SUITES | tr ' ' '|'))\.bats\$") > build/bats.log 2>&1
cat build/bats.log
count_tap build/bats.log
if wait "$bg_pid"; then r=0; else r=1; fi
cat build/bats-bg.log
count_tap build/bats-bg.log
# a non-zero exit without a "not ok" line (bats itself failed) is one failure; so is a plan
# ("1..N") that the "ok" lines fall short of
if [ "$r" -ne 0 ] && ! grep -q '^not ok ' build/bats-bg.log; then note "bats ($BG_SUITES): exited $r"; fail=$((fail + 1)); fi
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' build/bats-bg.log | head -1)
[ -n "$plan" ] && [ "$(grep -c '^\(not \)\{0,1\}ok ' build/bats-bg.log)" -eq "$plan" ] || { note "bats ($BG_SUITES): ${plan:-no} plan, $(grep -c '^\(not \)\{0,1\}ok ' build/bats-bg.log) results"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
