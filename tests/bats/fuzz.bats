#!/usr/bin/env bats
# Bounded, deterministic mutation fuzzing of the readers with the sanitizer builds:
# 200 mutants of a small ONNX model through onnx2ecg, 200 mutants of its ECG (and 50
# of the zstd-compressed ECG) through ecg-dump and ecg-lower (the ECG mutants also through
# ecg-rewrite).  Every run must exit 0
# or 1 (3 only with an out-of-memory message), never die on a signal, and never print
# a sanitizer report.  Seeds are fixed (tests/bats/mutate.c), so a failure reproduces:
# the failing inputs are listed and kept under $BATS_FILE_TMPDIR while bats runs.

load helpers

N=200
NZ=50
SEED=20240501

setup_file() {
  [ -x "$ROOT/build-san/bin/onnx2ecg" ] || return 0
  build_gen mutate
  local m="$NODE_DATA/test_conv_with_strides_padding/model.onnx" d="$BATS_FILE_TMPDIR"
  [ -f "$m" ] || return 0
  mkdir -p "$d/onnx" "$d/ecg" "$d/ecgz"
  "$ROOT/bin/onnx2ecg" "$m" -o "$d/seed.ecg"
  "$ROOT/bin/onnx2ecg" "$m" --zstd -o "$d/seedz.ecg"
  "$d/mutate" "$m" "$d/onnx" m "$SEED" "$N"
  "$d/mutate" "$d/seed.ecg" "$d/ecg" m "$SEED" "$N"
  "$d/mutate" "$d/seedz.ecg" "$d/ecgz" m "$SEED" "$NZ"
}

setup() {
  require_san
  require_file "$NODE_DATA/test_conv_with_strides_padding/model.onnx" "$BATS_FILE_TMPDIR/onnx/m-000"
  T="$BATS_TEST_TMPDIR"
}

# check FILE STATUS STDERR: append a line to $T/bad when the run broke the rules.
check() {
  local f=$1 st=$2 err=$3 why=""
  if printf '%s' "$err" | grep -Eq 'Sanitizer|runtime error|SUMMARY: '; then why="sanitizer report"
  elif [ "$st" -eq 0 ] || [ "$st" -eq 1 ]; then :
  elif [ "$st" -eq 3 ] && grep -qi 'out of memory' <<<"$err"; then :
  else why="exit $st"
  fi
  if [ -n "$why" ]; then
    printf '%s: %s: %s\n' "$f" "$why" "$(printf '%s' "$err" | grep -E 'ERROR|runtime error|SUMMARY|^[a-z0-9-]+:' | head -3 | tr '\n' ' ')" >> "$T/bad"
  fi
}

report() {
  if [ -s "$T/bad" ]; then
    echo "$(wc -l < "$T/bad") bad runs:"
    cat "$T/bad"
    return 1
  fi
}

@test "fuzz: onnx2ecg on $N mutants of a Conv model (then ecg-lower on what converts)" {
  local ok=0 f err st
  for f in "$BATS_FILE_TMPDIR"/onnx/m-*; do
    st=0; err=$("$SAN/onnx2ecg" "$f" -o "$T/out.ecg" 2>&1 >/dev/null) || st=$?
    check "$f" "$st" "$err"
    if [ "$st" -eq 0 ]; then
      ok=$((ok + 1))
      [ -s "$T/out.ecg" ] || echo "$f: exit 0 but no output" >> "$T/bad"
      st=0; err=$("$SAN/ecg-lower" -o "$T/low" "$T/out.ecg" 2>&1 >/dev/null) || st=$?
      check "$f (lowered)" "$st" "$err"
      rm -rf "$T/low"
    elif [ -e "$T/out.ecg" ]; then
      echo "$f: exit $st but output file written" >> "$T/bad"
    fi
    rm -f "$T/out.ecg"
  done
  echo "$ok of $N mutants converted"
  report
}

@test "fuzz: ecg-dump (--json and --dot) on $N mutants of an ECG" {
  local f err st mode
  for f in "$BATS_FILE_TMPDIR"/ecg/m-*; do
    for mode in --json --dot; do
      st=0; err=$("$SAN/ecg-dump" "$mode" "$f" 2>&1 >/dev/null) || st=$?
      check "$f $mode" "$st" "$err"
    done
  done
  report
}

@test "fuzz: ecg-lower on $N mutants of an ECG" {
  local f err st ok=0
  for f in "$BATS_FILE_TMPDIR"/ecg/m-*; do
    st=0; err=$("$SAN/ecg-lower" -o "$T/low" "$f" 2>&1 >/dev/null) || st=$?
    check "$f" "$st" "$err"
    if [ "$st" -eq 0 ]; then ok=$((ok + 1)); [ -f "$T/low/model.c" ] || echo "$f: exit 0 but no model.c" >> "$T/bad"
    elif [ -e "$T/low" ]; then echo "$f: exit $st but output dir written" >> "$T/bad"
    fi
    rm -rf "$T/low"
  done
  echo "$ok of $N mutants lowered"
  report
}

@test "fuzz: ecg-rewrite (every pass) on $N mutants of an ECG" {
  local f err st
  require_file "$SAN/ecg-rewrite"
  for f in "$BATS_FILE_TMPDIR"/ecg/m-*; do
    st=0; err=$("$SAN/ecg-rewrite" --passes fold,bnfold,cse,simplify,math "$f" -o "$T/rw.ecg" 2>&1 >/dev/null) || st=$?
    check "$f" "$st" "$err"
    if [ "$st" -ne 0 ] && [ -e "$T/rw.ecg" ]; then echo "$f: exit $st but output written" >> "$T/bad"; fi
    rm -f "$T/rw.ecg"
  done
  report
}

@test "fuzz: ecg-dump and ecg-lower on $NZ mutants of a zstd ECG" {
  local f err st
  for f in "$BATS_FILE_TMPDIR"/ecgz/m-*; do
    st=0; err=$("$SAN/ecg-dump" "$f" 2>&1 >/dev/null) || st=$?
    check "$f dump" "$st" "$err"
    st=0; err=$("$SAN/ecg-lower" -o "$T/low" "$f" 2>&1 >/dev/null) || st=$?
    check "$f lower" "$st" "$err"
    rm -rf "$T/low"
  done
  report
}

@test "fuzz: the mutants are deterministic and really mutated" {
  mkdir "$T/again"
  "$BATS_FILE_TMPDIR/mutate" "$BATS_FILE_TMPDIR/seed.ecg" "$T/again" m "$SEED" "$N"
  diff -r "$T/again" "$BATS_FILE_TMPDIR/ecg"
  local same=0 f
  for f in "$BATS_FILE_TMPDIR"/ecg/m-*; do cmp -s "$f" "$BATS_FILE_TMPDIR/seed.ecg" && same=$((same + 1)); done
  [ "$same" -lt $((N / 10)) ]
}
