#!/usr/bin/env bats
# Composition of the tools over pipes and files (DESIGN.md "The pipeline"), the
# framed stream (--zstd), determinism, ecg-dump's JSON/DOT, shape errors, and the
# lowered directory's contract (tools/lower/LOWERED.md).

load helpers

setup_file() {
  [ -x "$ROOT/bin/onnx2ecg" ] || return 0
  local sq="$ROOT/../shared/models/squeezenet1_1.onnx"
  if [ -f "$sq" ]; then
    "$ROOT/bin/onnx2ecg" "$sq" --input-shape input=1x3x224x224 -o "$BATS_FILE_TMPDIR/sq.ecg"
    "$ROOT/bin/onnx2ecg" "$sq" --input-shape input=1x3x224x224 --zstd -o "$BATS_FILE_TMPDIR/sq.zst.ecg"
  fi
  build_gen mkonnx build/gen/onnx.pb-c.c
}

setup() {
  require_tools
  SQUEEZE="$SHARED_MODELS/squeezenet1_1.onnx"
  CONV="$NODE_DATA/test_conv_with_strides_padding/model.onnx"
  SQ="$BATS_FILE_TMPDIR/sq.ecg"
  SQZ="$BATS_FILE_TMPDIR/sq.zst.ecg"
  T="$BATS_TEST_TMPDIR"
}

@test "onnx2ecg MODEL | ecg-lower -o DIR (stdin to stdout to stdin)" {
  require_file "$SQUEEZE"
  run bash -c "set -o pipefail; '$BIN/onnx2ecg' '$SQUEEZE' --input-shape input=1x3x224x224 | '$BIN/ecg-lower' -o '$T/d'"
  [ "$status" -eq 0 ]
  [ -f "$T/d/model.c" ]
  [ "$(jq -r '.inputs[0].name' "$T/d/model.json")" = "input" ]
  [ "$(jq -c '.inputs[0].shape' "$T/d/model.json")" = "[1,3,224,224]" ]
}

@test "onnx2ecg reads the model from stdin ('-')" {
  require_file "$SQ"
  "$BIN/onnx2ecg" - --input-shape input=1x3x224x224 -o "$T/stdin.ecg" < "$SQUEEZE"
  diff <("$BIN/ecg-dump" "$T/stdin.ecg" | jq -c '.nodes, .tensors') <("$BIN/ecg-dump" "$SQ" | jq -c '.nodes, .tensors')
}

@test "ecg-lower -o DIR < FILE equals ecg-lower -o DIR FILE" {
  require_file "$SQ"
  "$BIN/ecg-lower" -o "$T/a" < "$SQ"
  "$BIN/ecg-lower" -o "$T/b" "$SQ"
  diff -r "$T/a" "$T/b"
}

@test "ecg-lower output is deterministic (lower twice: identical directories)" {
  require_file "$SQ"
  "$BIN/ecg-lower" -o "$T/a" "$SQ"
  "$BIN/ecg-lower" -o "$T/b" "$SQ"
  diff -r "$T/a" "$T/b"
}

@test "onnx2ecg output is deterministic" {
  require_file "$SQ"
  "$BIN/onnx2ecg" "$SQUEEZE" --input-shape input=1x3x224x224 -o "$T/again.ecg"
  cmp "$SQ" "$T/again.ecg"
}

@test "--zstd: framed with the zstd flag, smaller, readable by ecg-dump with the same content" {
  require_file "$SQ" "$SQZ"
  [ "$(head -c 4 "$SQZ")" = "ECGF" ]
  # u16 flags at offset 6: bit 0 = zstd
  [ "$(od -An -tu2 -j6 -N2 "$SQZ" | tr -d ' ')" = "1" ]
  [ "$(od -An -tu2 -j6 -N2 "$SQ" | tr -d ' ')" = "0" ]
  [ "$(stat -c %s "$SQZ")" -lt "$(stat -c %s "$SQ")" ]
  diff <("$BIN/ecg-dump" "$SQZ") <("$BIN/ecg-dump" "$SQ")
}

@test "--zstd: lowering the compressed stream gives a byte-identical directory" {
  require_file "$SQ" "$SQZ"
  "$BIN/ecg-lower" -o "$T/plain" "$SQ"
  "$BIN/ecg-lower" -o "$T/zstd" < "$SQZ"
  diff -r "$T/plain" "$T/zstd"
}

@test "ecg-dump --json | jq: mapping types (Conv Many-to-Many, Relu One-to-One)" {
  require_file "$SQ"
  run bash -c "'$BIN/ecg-dump' --json '$SQ' | jq -r '.nodes[] | select(.op == \"Conv\") | .mapping' | sort -u"
  [ "$status" -eq 0 ]
  [ "$output" = "Many-to-Many" ]
  run bash -c "'$BIN/ecg-dump' --json '$SQ' | jq -r '.nodes[] | select(.op == \"Relu\") | .mapping' | sort -u"
  [ "$status" -eq 0 ]
  [ "$output" = "One-to-One" ]
  # every node of a converted model carries a known mapping type
  run bash -c "'$BIN/ecg-dump' '$SQ' | jq -e '[.nodes[].mapping] | all(. as \$m | [\"One-to-One\",\"One-to-Many\",\"Many-to-Many\",\"Reorganize\",\"Shuffle\"] | index(\$m))'"
  [ "$status" -eq 0 ]
  # graph fields
  run bash -c "'$BIN/ecg-dump' '$SQ' | jq -r '.inputs[0], (.nodes | length > 10)'"
  [ "${lines[0]}" = "input" ]
  [ "${lines[1]}" = "true" ]
}

@test "ecg-dump --dot prints a digraph with a node per operator" {
  require_file "$SQ"
  run "$BIN/ecg-dump" --dot "$SQ"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == "digraph"*"{" ]]
  [ "${lines[-1]}" = "}" ]
  [[ "$output" == *"->"* ]]
  [ "$(grep -c 'Conv' <<<"$output")" -ge "$("$BIN/ecg-dump" "$SQ" | jq '[.nodes[] | select(.op == "Conv")] | length')" ]
  if command -v dot >/dev/null; then
    "$BIN/ecg-dump" --dot "$SQ" | dot -Tsvg > /dev/null
  fi
}

@test "ecg-dump --summary is one line with node and op counts" {
  require_file "$SQ"
  run "$BIN/ecg-dump" --summary "$SQ"
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 1 ]
  n=$("$BIN/ecg-dump" "$SQ" | jq '.nodes | length')
  [[ "$output" == "nodes $n "* ]]
  [[ "$output" == *" Conv:"* ]]
}

@test "ecg-dump -o FILE writes the file and nothing on stdout" {
  require_file "$SQ"
  run "$BIN/ecg-dump" --json -o "$T/d.json" "$SQ"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  jq -e '.nodes | length > 0' "$T/d.json"
}

@test "onnx2ecg --input-shape with an unknown input name exits 1 naming the inputs" {
  require_file "$SQUEEZE"
  run --separate-stderr "$BIN/onnx2ecg" "$SQUEEZE" --input-shape nosuch=1x3x224x224 -o "$T/x.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"nosuch"* ]]
  [[ "$stderr" == *"'input'"* ]]
  [ ! -e "$T/x.ecg" ]
}

@test "symbolic shapes: lowering without --input-shape gives one dynamic-shape build (runner --info shows the symbols as ?)" {
  require_file "$SQUEEZE"
  "$BIN/onnx2ecg" "$SQUEEZE" -o "$T/sym.ecg"
  "$BIN/ecg-dump" "$T/sym.ecg" | jq -e '.tensors[0].shape | map(type) | index("string") != null'
  "$BIN/ecg-lower" -o "$T/d" "$T/sym.ecg"
  grep -q '#define ECG_MODEL_DYNAMIC 1' "$T/d/model.h"
  grep -q 'ecg_model_set_input_shape' "$T/d/model.h"
  [ "$(jq -c '.inputs[0].shape' "$T/d/model.json")" = "[1,3,-1,-1]" ]
  make -s -C "$T/d" runner
  [ "$("$T/d/runner" --info | head -1)" = "$(printf 'input\tinput\t1\t1x3x?x?')" ]
}

@test "symbolic shapes: a generated [N,4] model lowers dynamically; an operator not converted yet is refused naming it, --input-shape fixes it" {
  require_file "$BATS_FILE_TMPDIR/mkonnx"
  "$BATS_FILE_TMPDIR/mkonnx" symbolic "$T/sym.onnx"
  "$BIN/onnx2ecg" "$T/sym.onnx" -o "$T/sym.ecg"
  "$BIN/ecg-lower" -o "$T/ok" "$T/sym.ecg"
  grep -q '#define ECG_MODEL_DYNAMIC 1' "$T/ok/model.h"
  "$BATS_FILE_TMPDIR/mkonnx" symbolic_hardmax "$T/hm.onnx"
  "$BIN/onnx2ecg" "$T/hm.onnx" -o "$T/hm.ecg"
  run --separate-stderr "$BIN/ecg-lower" -o "$T/d" "$T/hm.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"node 'hmax' (Hardmax): this operator is not supported with symbolic dims yet; fix dims with --input-shape"* ]]
  [ ! -e "$T/d" ]
  ! ls "$T" | grep -q 'ecg-lower-tmp' || false
  "$BIN/onnx2ecg" "$T/hm.onnx" --input-shape x=2x4 -o "$T/fixed.ecg"
  "$BIN/ecg-lower" -o "$T/d" "$T/fixed.ecg"
  [ "$(jq -c '.inputs[0].shape' "$T/d/model.json")" = "[2,4]" ]
  [ "$(jq -c '.outputs[0].shape' "$T/d/model.json")" = "[2,4]" ]
  ! grep -q 'ECG_MODEL_DYNAMIC' "$T/d/model.h" || false
}

@test "lowered dir: model.h model.c weights.bin model.json Makefile; make builds runner, .a, .so" {
  require_file "$CONV"
  "$BIN/onnx2ecg" "$CONV" | "$BIN/ecg-lower" -o "$T/d"
  for f in model.h model.c weights.bin model.json Makefile; do
    [ -f "$T/d/$f" ] || { echo "missing $f"; false; }
  done
  jq -e '.prefix == "ecg_model" and (.inputs | length) == 2 and (.outputs | length) == 1' "$T/d/model.json"
  grep -q 'ecg_model_create' "$T/d/model.h"
  make -s -C "$T/d"
  [ -x "$T/d/runner" ]
  [ -f "$T/d/libecg_model.a" ]
  [ -f "$T/d/libecg_model.so" ]
  nm -D "$T/d/libecg_model.so" | grep -q ' T ecg_model_run$'
}

@test "runner --info lists every input and output with dtype and dims" {
  require_file "$CONV"
  "$BIN/onnx2ecg" "$CONV" | "$BIN/ecg-lower" -o "$T/d"
  make -s -C "$T/d" runner
  run "$T/d/runner" --info
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 3 ]
  [ "${lines[0]}" = "$(printf 'input\tx\t1\t1x1x7x5')" ]
  [ "${lines[1]}" = "$(printf 'input\tW\t1\t1x1x3x3')" ]
  [ "${lines[2]}" = "$(printf 'output\ty\t1\t1x1x4x3')" ]
}

@test "runner rejects an input file of the wrong size (exit 1)" {
  require_file "$CONV"
  "$BIN/onnx2ecg" "$CONV" | "$BIN/ecg-lower" -o "$T/d"
  make -s -C "$T/d" runner
  head -c 7 /dev/zero > "$T/short.bin"
  head -c 36 /dev/zero > "$T/w.bin"
  run --separate-stderr "$T/d/runner" --in x="$T/short.bin" --in W="$T/w.bin"
  [ "$status" -eq 1 ]
  [ -n "$stderr" ]
}

@test "ecg-lower --prefix foo: symbols foo_* in libfoo.a, model.json prefix foo" {
  require_file "$CONV"
  "$BIN/onnx2ecg" "$CONV" | "$BIN/ecg-lower" --prefix foo -o "$T/d"
  jq -e '.prefix == "foo"' "$T/d/model.json"
  grep -q 'foo_create' "$T/d/model.h"
  [ "$(grep -c 'ecg_model_' "$T/d/model.h")" -eq 0 ]
  make -s -C "$T/d"
  [ -f "$T/d/libfoo.a" ]
  [ -f "$T/d/libfoo.so" ]
  run nm "$T/d/libfoo.a"
  [[ "$output" == *" T foo_create"* ]]
  [[ "$output" == *" T foo_run"* ]]
  [[ "$output" == *" T foo_destroy"* ]]
  "$T/d/runner" --info | grep -q '^output	y'
}

@test "ecg-lower replaces its own earlier output but refuses a foreign directory" {
  require_file "$CONV"
  "$BIN/onnx2ecg" "$CONV" -o "$T/c.ecg"
  "$BIN/ecg-lower" -o "$T/d" "$T/c.ecg"
  "$BIN/ecg-lower" -o "$T/d" "$T/c.ecg"
  [ -f "$T/d/model.c" ]
  mkdir "$T/foreign"
  echo precious > "$T/foreign/notes.txt"
  run --separate-stderr "$BIN/ecg-lower" -o "$T/foreign" "$T/c.ecg"
  [ "$status" -ne 0 ]
  [ "$(cat "$T/foreign/notes.txt")" = "precious" ]
  [ -z "$(ls -d "$T"/foreign.tmp* 2>/dev/null)" ]
}

@test "RDP: without --input-shape squeezenet keeps height/width as expressions, equal to static inference at 224x160" {
  require_file "$SQUEEZE"
  "$BIN/onnx2ecg" "$SQUEEZE" -o "$T/sym.ecg" --report "$T/r.json"
  [ "$(jq .onnx2ecg.rdp.symbols "$T/r.json")" -eq 2 ]
  [ "$(jq .onnx2ecg.rdp.nac "$T/r.json")" -eq 0 ]
  "$BIN/ecg-dump" "$T/sym.ecg" > "$T/sym.json"
  # the first conv (3x3, stride 2, no padding): floor((H - 3) / 2) + 1
  jq -e '[.tensors[] | select(.shape == [1,64,"((height-1)/2)","((width-1)/2)"] and .rdp == ["constant","constant","expr","expr"])] | length > 0' "$T/sym.json"
  "$BIN/onnx2ecg" "$SQUEEZE" --input-shape input=1x3x224x160 -o "$T/s.ecg"
  "$BIN/ecg-dump" "$T/s.ecg" > "$T/static.json"
  run node "$ROOT/scripts/rdp_check.mjs" "$T/sym.json" "$T/static.json" height=224 width=160
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq .mismatched)" -eq 0 ]
  [ "$(echo "$output" | jq .checked)" -gt 100 ]
  # a wrong binding is caught: the checker can fail
  run node "$ROOT/scripts/rdp_check.mjs" "$T/sym.json" "$T/static.json" height=225 width=160
  [ "$status" -eq 1 ]
  # ecg-lower turns the expressions into C over the run-time symbols (the dynamic build)
  "$BIN/ecg-lower" -o "$T/d" "$T/sym.ecg"
  grep -q 'ecg_fdiv_((sy0-1), 2)' "$T/d/model.c"
}

@test "onnx2ecg --dim-multiple: the hinted input dim is K times a new symbol (RDP), the dynamic build refuses other sizes; a malformed hint exits 2" {
  require_file "$SQUEEZE"
  "$BIN/onnx2ecg" "$SQUEEZE" --dim-multiple height=32 -o "$T/h.ecg" --report "$T/r.json"
  [ "$(jq .onnx2ecg.rdp.nac "$T/r.json")" -eq 0 ]
  [ "$("$BIN/ecg-dump" "$T/h.ecg" | jq -c '.tensors[0].shape')" = '[1,3,"32*height:32","width"]' ]
  "$BIN/ecg-lower" -o "$T/d" "$T/h.ecg"
  make -s -C "$T/d" runner
  head -c $((4 * 3 * 100 * 96)) /dev/zero > "$T/x.bin"
  run --separate-stderr "$T/d/runner" --shape input=1x3x100x96 --in "input=$T/x.bin"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"input 'input': dim 2 is 100, but this build takes multiples of 32 there"* ]]
  head -c $((4 * 3 * 96 * 96)) /dev/zero > "$T/y.bin"
  "$T/d/runner" --shape input=1x3x96x96 --in "input=$T/y.bin" > /dev/null
  for bad in height height=1 =32 height=x; do
    run --separate-stderr "$BIN/onnx2ecg" "$SQUEEZE" --dim-multiple "$bad" -o "$T/never.ecg"
    [ "$status" -eq 2 ]; [[ "$stderr" == *"--dim-multiple: expected SYMBOL=K"* ]]; [ ! -e "$T/never.ecg" ]
  done
}

@test "symbolic shapes: two inputs sharing symbol N: one dynamic build right at N=3 against ONNX Runtime; N=2 and N=3 together refused naming both inputs" {
  require_file "$BATS_FILE_TMPDIR/mkonnx"
  require_cmd node
  "$BATS_FILE_TMPDIR/mkonnx" symbolic_add "$T/add.onnx"
  "$BIN/onnx2ecg" "$T/add.onnx" | "$BIN/ecg-lower" -o "$T/d"
  node "$ROOT/tools/bench/make_data.mjs" --model "$T/add.onnx" --out "$T/set" --input-shape x=3x4 --input-shape x2=3x4
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$T/set" --runs 1 --warmup 0
  [ "$status" -eq 0 ]; [ "$(jq .pass <<<"$output")" = true ]
  head -c 32 /dev/zero > "$T/a.bin"; head -c 48 /dev/zero > "$T/b.bin"
  run --separate-stderr "$T/d/runner" --shape x=2x4 --shape x2=3x4 --in "x=$T/a.bin" --in "x2=$T/b.bin"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"input 'x2': dim 0 is 3, but it is symbol 'N', which input 'x' dim 0 sets to 2"* ]]
}
