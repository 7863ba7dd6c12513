# Shared setup for the bats suites: locate the repository, the tools and their
# sanitizer builds, and the model/test-data directories.  Load with `load helpers`.

bats_require_minimum_version 1.5.0

ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
BIN="$ROOT/bin"
SAN="$ROOT/build-san/bin"
SHARED_MODELS="$ROOT/../shared/models"
NODE_DATA="${ECG_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}"
export ROOT BIN SAN SHARED_MODELS NODE_DATA

# Sanitizer settings for every build-san tool run from a test.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=98"

# require_file PATH...: fail the test, naming what is missing, when a prerequisite that
# `make test` provides (make, make san, make models, make setup) is absent.  A failure,
# not a skip: tests/run.sh counts "ok ... # skip" lines as passes.
require_file() {
  local f
  for f in "$@"; do
    [ -e "$f" ] || { echo "missing prerequisite $f (run make, make san, make models, make setup)" >&2; return 1; }
  done
}

# require_cmd CMD...: fail the test (never skip) when a command `make setup` installs is missing.
require_cmd() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null || { echo "missing prerequisite command $c (run make setup)" >&2; return 1; }
  done
}

require_tools() { require_file "$BIN/onnx2ecg" "$BIN/ecg-dump" "$BIN/ecg-lower" "$BIN/ecg-bench"; }
require_san() { require_file "$SAN/onnx2ecg" "$SAN/ecg-dump" "$SAN/ecg-lower"; }

# no_sanitizer_report TEXT: fail when TEXT holds an ASan/UBSan/LSan report.
no_sanitizer_report() {
  if printf '%s' "$1" | grep -E -q 'Sanitizer|runtime error|SUMMARY: '; then
    echo "sanitizer report:" >&2
    printf '%s\n' "$1" >&2
    return 1
  fi
}

# one_line TEXT: TEXT is exactly one non-empty line.
one_line() {
  local n
  n=$(printf '%s\n' "$1" | grep -c .)
  [ "$n" -eq 1 ] || { echo "expected one line, got $n:" >&2; printf '%s\n' "$1" >&2; return 1; }
}

# build_gen NAME [LIBS...]: compile tests/bats/NAME.c (with the given extra sources or
# archives, e.g. build/libecg.a or build/gen/onnx.pb-c.c, relative to the repo root)
# into $BATS_FILE_TMPDIR/NAME, once per test file (format/, build/gen/ and tools/common/
# are on the include path).
build_gen() {
  local name=$1 out="$BATS_FILE_TMPDIR/$1" extra=() f
  shift
  [ -x "$out" ] && return 0
  for f in "$@"; do [ -f "$ROOT/$f" ] || { echo "build_gen: missing $f (run make)" >&2; return 1; }; extra+=("$ROOT/$f"); done
  cc -std=gnu11 -O1 -g -I"$ROOT/format" -I"$ROOT/build/gen" -I"$ROOT/tools/common" "$BATS_TEST_DIRNAME/$name.c" \
    "${extra[@]}" -lprotobuf-c -lzstd -lm -o "$out"
}
