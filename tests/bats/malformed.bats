#!/usr/bin/env bats
# Malformed and unsupported inputs, run through the sanitizer builds (build-san/bin):
# exit 1, a one-line error naming the problem, no output file or directory, and no
# ASan/UBSan/LSan report (DESIGN.md: never a crash, never partial output).

load helpers

setup_file() {
  [ -x "$ROOT/build-san/bin/onnx2ecg" ] || return 0   # each test then fails in setup, naming what is missing
  build_gen mkecg build/libecg.a
  build_gen mkonnx build/gen/onnx.pb-c.c
  build_gen mutate
}

setup() {
  require_san
  require_file "$BATS_FILE_TMPDIR/mkecg" "$BATS_FILE_TMPDIR/mkonnx" "$BATS_FILE_TMPDIR/mutate"
  SQUEEZE="$SHARED_MODELS/squeezenet1_1.onnx"
  T="$BATS_TEST_TMPDIR"
}

# onnx_fails FILE WORD: onnx2ecg -o OUT FILE exits 1 with one line on stderr naming
# WORD (case-insensitive), writes nothing, and the sanitizers stay silent.
onnx_fails() {
  run --separate-stderr "$SAN/onnx2ecg" "$1" -o "$T/out.ecg"
  echo "exit $status; stderr: $stderr"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 1 ]
  one_line "$stderr"
  [[ "$stderr" == onnx2ecg:* ]]
  grep -qi -- "$2" <<<"$stderr"
  [ -z "$output" ]
  [ ! -e "$T/out.ecg" ]
  # no temporary left behind either
  [ -z "$(ls -A "$T" | grep '^out\.ecg')" ]
}

# lower_fails FILE WORD: ecg-lower -o DIR FILE exits 1 naming WORD; no DIR, no temp dir.
lower_fails() {
  run --separate-stderr "$SAN/ecg-lower" -o "$T/lowered" "$1"
  echo "ecg-lower exit $status; stderr: $stderr"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 1 ]
  one_line "$stderr"
  [[ "$stderr" == ecg-lower:* ]]
  grep -qi -- "$2" <<<"$stderr"
  [ ! -e "$T/lowered" ]
  [ -z "$(ls -A "$T" | grep '^lowered')" ]
}

# dump_fails FILE WORD: ecg-dump -o OUT FILE exits 1 naming WORD; no OUT.
dump_fails() {
  run --separate-stderr "$SAN/ecg-dump" -o "$T/dump.json" "$1"
  echo "ecg-dump exit $status; stderr: $stderr"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 1 ]
  one_line "$stderr"
  [[ "$stderr" == ecg-dump:* ]]
  grep -qi -- "$2" <<<"$stderr"
  [ ! -e "$T/dump.json" ]
  [ -z "$(ls -A "$T" | grep '^dump\.json')" ]
}

# ---------------------------------------------------------------- ONNX input

@test "onnx2ecg: truncated ONNX model (head -c of squeezenet) -> exit 1, no output" {
  require_file "$SQUEEZE"
  for n in 100 4096 1000000 3000000; do
    head -c "$n" "$SQUEEZE" > "$T/trunc.onnx"
    onnx_fails "$T/trunc.onnx" "trunc.onnx"
    grep -qi "not a valid ONNX model\|truncated" <<<"$stderr"
  done
}

@test "onnx2ecg: random bytes -> exit 1, no output" {
  for seed in 1 2 3; do
    "$BATS_FILE_TMPDIR/mutate" --random "$seed" 4096 "$T/random.onnx"
    onnx_fails "$T/random.onnx" "not a valid ONNX model"
  done
}

@test "onnx2ecg: empty file -> exit 1, no output" {
  : > "$T/empty.onnx"
  onnx_fails "$T/empty.onnx" "empty.onnx"
  grep -qi "empty\|not a valid ONNX model" <<<"$stderr"
}

@test "onnx2ecg: missing file -> exit 1 naming the file, no output" {
  onnx_fails "$T/does-not-exist.onnx" "does-not-exist.onnx: No such file"
}

@test "onnx2ecg: empty stdin -> exit 1" {
  run --separate-stderr "$SAN/onnx2ecg" - -o "$T/out.ecg" < /dev/null
  no_sanitizer_report "$stderr"
  [ "$status" -eq 1 ]
  one_line "$stderr"
  [ ! -e "$T/out.ecg" ]
}

@test "onnx2ecg: one unsupported operator -> exit 1 naming node and op" {
  "$BATS_FILE_TMPDIR/mkonnx" unknown1 "$T/u1.onnx"
  onnx_fails "$T/u1.onnx" "FrobnicateOp"
  [[ "$stderr" == *"unsupported operator"* ]]
  [[ "$stderr" == *"'frob'"* ]]
}

@test "onnx2ecg: two unsupported operators -> both listed at once, one line each" {
  "$BATS_FILE_TMPDIR/mkonnx" unknown2 "$T/u2.onnx"
  run --separate-stderr "$SAN/onnx2ecg" "$T/u2.onnx" -o "$T/out.ecg"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 1 ]
  [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 2 ]
  [ "$(grep -c 'unsupported operator' <<<"$stderr")" -eq 2 ]
  grep -q "FrobnicateOp" <<<"$stderr"
  grep -q "WibbleOp" <<<"$stderr"
  [ "$(grep -c "Relu" <<<"$stderr")" -eq 0 ]
  [ ! -e "$T/out.ecg" ]
}

@test "onnx2ecg: the generated valid model converts (control for the generator)" {
  "$BATS_FILE_TMPDIR/mkonnx" relu "$T/relu.onnx"
  run --separate-stderr "$SAN/onnx2ecg" "$T/relu.onnx" -o "$T/out.ecg"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 0 ]
  [ -s "$T/out.ecg" ]
  [ "$(head -c 4 "$T/out.ecg")" = "ECGF" ]
}

# ---------------------------------------------------------------- ECG input

@test "ecg: the generated valid ECG dumps and lowers (control for the generator)" {
  "$BATS_FILE_TMPDIR/mkecg" valid "$T/valid.ecg"
  run --separate-stderr "$SAN/ecg-dump" "$T/valid.ecg"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.nodes[0].op' <<<"$output")" = "Relu" ]
  run --separate-stderr "$SAN/ecg-lower" -o "$T/lowered" "$T/valid.ecg"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 0 ]
  [ -f "$T/lowered/model.c" ]
}

@test "ecg: wrong magic (an ONNX file) -> ecg-lower and ecg-dump exit 1" {
  "$BATS_FILE_TMPDIR/mkonnx" relu "$T/bad.ecg"
  lower_fails "$T/bad.ecg" "bad magic"
  dump_fails "$T/bad.ecg" "bad magic"
}

@test "ecg: wrong magic (first byte changed) -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" valid "$T/valid.ecg"
  { printf 'X'; tail -c +2 "$T/valid.ecg"; } > "$T/bad.ecg"
  lower_fails "$T/bad.ecg" "magic"
  dump_fails "$T/bad.ecg" "magic"
}

@test "ecg: unsupported schema version -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" valid "$T/valid.ecg"
  { head -c 4 "$T/valid.ecg"; printf '\011\000'; tail -c +7 "$T/valid.ecg"; } > "$T/v9.ecg"
  lower_fails "$T/v9.ecg" "version 9"
  dump_fails "$T/v9.ecg" "version 9"
}

@test "ecg: truncated header and truncated payload -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" valid "$T/valid.ecg"
  head -c 10 "$T/valid.ecg" > "$T/th.ecg"
  lower_fails "$T/th.ecg" "truncated ECG header"
  dump_fails "$T/th.ecg" "truncated ECG header"
  size=$(stat -c %s "$T/valid.ecg")
  head -c $((size - 5)) "$T/valid.ecg" > "$T/tp.ecg"
  lower_fails "$T/tp.ecg" "truncated ECG payload"
  dump_fails "$T/tp.ecg" "truncated ECG payload"
}

@test "ecg: empty input -> exit 1" {
  : > "$T/empty.ecg"
  lower_fails "$T/empty.ecg" "empty"
  dump_fails "$T/empty.ecg" "empty"
}

@test "ecg: missing file -> exit 1 naming it" {
  lower_fails "$T/nope.ecg" "nope.ecg"
  dump_fails "$T/nope.ecg" "nope.ecg"
}

@test "ecg-lower: graph with a cycle -> exit 1 naming a node on it" {
  "$BATS_FILE_TMPDIR/mkecg" cycle "$T/cycle.ecg"
  lower_fails "$T/cycle.ecg" "cycle"
  grep -q "relu_a\|relu_b" <<<"$stderr"
}

@test "ecg: fusion blocks dump as DOT clusters and in JSON, and lower" {
  "$BATS_FILE_TMPDIR/mkecg" blocks "$T/blocks.ecg"
  run --separate-stderr "$SAN/ecg-dump" --dot "$T/blocks.ecg"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 0 ]
  grep -q 'subgraph cluster_0' <<<"$output"
  grep -qF 'label="block 0: One-to-One, 2 ops, ' <<<"$output"
  run --separate-stderr "$SAN/ecg-dump" --json "$T/blocks.ecg"
  [ "$status" -eq 0 ]
  [ "$(jq -c '.blocks[0] | [.nodes, .seed, .dominant, .mapping, .inputs, .outputs, .plan]' <<<"$output")" = '[[0,1],0,-1,"One-to-One",["x"],["y"],"dnnfusion"]' ]
  [ "$(jq -c '[.nodes[].fusion_block]' <<<"$output")" = '[0,0]' ]
  run --separate-stderr "$SAN/ecg-lower" -o "$T/lowered" "$T/blocks.ecg"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 0 ]
}

@test "ecg-lower and ecg-dump: a cycle between fusion blocks -> exit 1 naming it" {
  "$BATS_FILE_TMPDIR/mkecg" blockcycle "$T/bc.ecg"
  lower_fails "$T/bc.ecg" "fusion blocks form a cycle"
  grep -qF "block 0 -> node 'exp' (Exp) -> block 0" <<<"$stderr"
  dump_fails "$T/bc.ecg" "cycle"
}

@test "ecg-lower: dangling tensor id -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" dangling "$T/dangling.ecg"
  lower_fails "$T/dangling.ecg" "dangling"
  grep -q "'relu'" <<<"$stderr"
}

@test "ecg-lower: node input with no producer (missing initializer) -> exit 1 naming it" {
  "$BATS_FILE_TMPDIR/mkecg" noproducer "$T/np.ecg"
  lower_fails "$T/np.ecg" "'w'"
  grep -q "'add'" <<<"$stderr"
}

@test "ecg-lower: unsupported operator -> exit 1 naming node and op" {
  "$BATS_FILE_TMPDIR/mkecg" unsupported "$T/unsup.ecg"
  lower_fails "$T/unsup.ecg" "NoSuchOp"
  grep -q "mystery" <<<"$stderr"
}

@test "ecg-lower: constant with the wrong byte count -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" badconst "$T/bc.ecg"
  lower_fails "$T/bc.ecg" "'w'"
}

@test "ecg-lower: graph output produced by no node -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" badout "$T/bo.ecg"
  lower_fails "$T/bo.ecg" "'y'"
}

@test "ecg-lower: a failed lowering leaves an earlier lowering in place" {
  "$BATS_FILE_TMPDIR/mkecg" valid "$T/valid.ecg"
  "$SAN/ecg-lower" -o "$T/keep" "$T/valid.ecg"
  cp "$T/keep/model.c" "$T/model.c.before"
  "$BATS_FILE_TMPDIR/mkecg" cycle "$T/cycle.ecg"
  run --separate-stderr "$SAN/ecg-lower" -o "$T/keep" "$T/cycle.ecg"
  no_sanitizer_report "$stderr"
  [ "$status" -eq 1 ]
  cmp "$T/keep/model.c" "$T/model.c.before"
}

@test "ecg-dump: graph with a cycle -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" cycle "$T/cycle.ecg"
  dump_fails "$T/cycle.ecg" "cycle"
}

@test "ecg-dump: dangling tensor id -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" dangling "$T/dangling.ecg"
  dump_fails "$T/dangling.ecg" "dangling"
}

@test "ecg-dump: node input with no producer (missing initializer) -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" noproducer "$T/np.ecg"
  dump_fails "$T/np.ecg" "'w'"
}

@test "ecg-dump: unsupported operator -> exit 1" {
  "$BATS_FILE_TMPDIR/mkecg" unsupported "$T/unsup.ecg"
  dump_fails "$T/unsup.ecg" "NoSuchOp"
}

@test "ecg-dump: every output mode survives the broken graphs without a sanitizer report" {
  for k in cycle dangling noproducer unsupported badconst badout; do
    "$BATS_FILE_TMPDIR/mkecg" "$k" "$T/$k.ecg"
    for mode in --json --dot --summary; do
      run --separate-stderr "$SAN/ecg-dump" "$mode" "$T/$k.ecg"
      echo "$k $mode: exit $status"
      no_sanitizer_report "$stderr"
      [ "$status" -eq 0 ] || [ "$status" -eq 1 ]
    done
  done
}
