#!/usr/bin/env bats
# Smoke of the libFuzzer harnesses (tests/fuzz/, issue 10 item 1): each replays its
# regression inputs (tests/fuzz/regress/NAME/, crashes found and fixed) and then fuzzes a
# few seconds from its seeds; any crash, leak, sanitizer report or hang fails.  The real
# campaign is `make fuzz FUZZ_SECONDS=N` (outside make test).  The harnesses are built by
# `make fuzz-build` (clang, libclang-rt-dev: make setup), a prerequisite of make test.

load helpers

SMOKE_SECONDS=${ECG_FUZZ_SMOKE_SECONDS:-4}

setup() {
  require_file "$ROOT/bin/onnx2ecg"
  T="$BATS_TEST_TMPDIR"
}

smoke() {
  require_file "$ROOT/build-fuzz/fuzz/fuzz_$1"
  run sh "$ROOT/tests/fuzz/run.sh" --smoke --seconds "$SMOKE_SECONDS" "$1"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"fuzz $1: "*" runs in "*", OK"* ]]
  # the harness really ran inputs (a run that executes nothing must not pass)
  local runs
  runs=$(printf '%s\n' "$output" | sed -n "s/^fuzz $1: \([0-9]*\) runs in.*/\1/p")
  [ "${runs:-0}" -gt 100 ]
}

@test "libFuzzer smoke: ONNX importer (parse, convert, fold, infer, validate, write)" { smoke onnx; }
@test "libFuzzer smoke: ECG reader and validator" { smoke ecg; }
@test "libFuzzer smoke: ecg-bench TensorProto reader" { smoke tensorpb; }
@test "libFuzzer smoke: lowering of valid ECGs" { smoke lower; }
@test "libFuzzer smoke: ecg-rewrite rule-file parser" { smoke rules; }
@test "libFuzzer smoke: ecg-rewrite cost-table parser" { smoke costdb; }
@test "libFuzzer smoke: ecg-fuse profile-database parser" { smoke profiledb; }
@test "libFuzzer smoke: ecg-partition EOP device-profile parser and pattern fitting" { smoke eopprof; }

@test "libFuzzer: every regression input is replayed and still passes" {
  local n d count=0
  for d in "$ROOT"/tests/fuzz/regress/*/; do
    n=$(basename "$d")
    require_file "$ROOT/build-fuzz/fuzz/fuzz_$n"
    run sh "$ROOT/tests/fuzz/run.sh" --replay-only "$n"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"regression inputs replayed, OK"* ]]
    count=$((count + $(ls "$d" | wc -l)))
  done
  [ "$count" -gt 0 ]
}

@test "libFuzzer: in a campaign of several harnesses each fuzzes for the whole --seconds (none is capped at the count the one before it ran)" {
  # run.sh kept each harness's executed count in the variable of the --runs cap, so every
  # later harness ran with -runs=that count: the fast tensorpb reader, after the slow
  # lowering harness, stopped within a second
  require_file "$ROOT/build-fuzz/fuzz/fuzz_lower"
  require_file "$ROOT/build-fuzz/fuzz/fuzz_tensorpb"
  run sh "$ROOT/tests/fuzz/run.sh" --smoke --seconds 3 lower tensorpb
  echo "$output"
  [ "$status" -eq 0 ]
  local r1 r2 s2
  r1=$(printf '%s\n' "$output" | sed -n 's/^fuzz lower: \([0-9]*\) runs in.*/\1/p')
  r2=$(printf '%s\n' "$output" | sed -n 's/^fuzz tensorpb: \([0-9]*\) runs in.*/\1/p')
  s2=$(printf '%s\n' "$output" | sed -n 's/^fuzz tensorpb: [0-9]* runs in \([0-9]*\) s.*/\1/p')
  [ "${r1:-0}" -gt 0 ]
  [ "${r2:-0}" -ne "$r1" ]
  [ "${s2:-0}" -ge 2 ]
}
