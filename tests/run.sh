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
# C unit tests: each prints "N passed, M failed" and exits non-zero on failure.
for t in ops graph rt; do
  case $t in
    ops|graph) cmd="$CC -std=gnu11 -O1 -g -fsanitize=address,undefined -Iformat -Ibuild/gen tests/unit/${t}_test.c build/libecg.a -lprotobuf-c -lzstd -lm -o build/${t}_test" ;;
    rt) cmd="$CC -O3 -march=native -fopenmp -Itools/lower/runtime tests/unit/rt_test.c $(ls tools/lower/runtime/*.c) -lm -o build/rt_test" ;;
  esac
  [ -f tests/unit/${t}_test.c ] || continue
  if $cmd && ./build/${t}_test > build/${t}_test.log 2>&1; then r=0; else r=1; fi
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' build/${t}_test.log | tail -1)
  note "unit/$t: ${line:-no summary} (exit $r)"
  p=$(printf '%s' "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); f=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
  [ "$r" -eq 0 ] || [ "${f:-0}" -gt 0 ] || fail=$((fail + 1))
done
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
