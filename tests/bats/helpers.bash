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

# model_args NAME: for model NAME of scripts/models.tsv, onnx2ecg's --input-shape arguments
# on the first line (empty when none), its path (relative to the repository root) on the second.
model_args() {
  local line path shapes args=""
  line=$(grep -v '^#' "$ROOT/scripts/models.tsv" | awk -F'\t' -v n="$1" '$1 == n')
  [ -n "$line" ] || { echo "model_args: no model '$1' in scripts/models.tsv" >&2; return 1; }
  path=$(cut -f2 <<<"$line"); shapes=$(cut -f3 <<<"$line")
  if [ "$shapes" != "-" ]; then for s in ${shapes//,/ }; do args="$args --input-shape $s"; done; fi
  printf '%s\n%s\n' "$args" "$path"
}

# model_data NAME (with ECG_OUT set): the ONNX Runtime reference outputs on seeded inputs for
# model NAME of scripts/models.tsv (the data set e2e.sh makes, shared with models.bats), made
# when missing; prints the data set's directory.
model_data() {
  local name=$1 ma path args data="$ECG_OUT/$1.data/test_data_set_0"
  ma=$(model_args "$name") || return 1
  args=$(head -1 <<<"$ma"); path=$(tail -1 <<<"$ma")
  require_file "$ROOT/$path"
  if [ ! -f "$data/output_0.pb" ]; then
    require_file "$ROOT/tools/bench/node_modules/onnxruntime-node"
    mkdir -p "$ECG_OUT"
    # shellcheck disable=SC2086
    node "$ROOT/tools/bench/make_data.mjs" --model "$ROOT/$path" --out "$data" --seed 1 $args >&2 || return 1
  fi
  require_file "$data/output_0.pb" && echo "$data"
}
