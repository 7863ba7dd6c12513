#!/usr/bin/env bats
# ecg-rewrite: each pass fires on a graph built for it (tests/bats/mkrewrite.c) and the
# lowered graph gives the same outputs before and after on seeded inputs; real models stay
# correct against ONNX Runtime with ecg-rewrite in the pipeline, and the default passes
# never add nodes or FLOPs.

load helpers

setup_file() {
  build_gen mkrewrite build/libecg.a
}

setup() {
  require_tools
  require_file "$BIN/ecg-rewrite"
  export ECG_OUT="$ROOT/build/bats-out"
}

# fires KIND PASS MIN [ARGS...]: build KIND's graph, run --passes PASS (and ARGS), check the
# report says PASS fired at least MIN times and never added nodes or FLOPs, then lower both
# graphs and compare the outputs on seeded inputs (ecg-bench --random 1 --save, then --data).
fires() {
  local kind=$1 pass=$2 min=$3 T="$BATS_TEST_TMPDIR"
  shift 3
  "$BATS_FILE_TMPDIR/mkrewrite" "$kind" "$T/g.ecg"
  run --separate-stderr "$BIN/ecg-rewrite" --passes "$pass" "$@" --print-after --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  echo "stderr: $stderr"; cat "$T/r.json"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"after $pass"* ]]
  jq -e --arg p "$pass" --argjson m "$min" '.stage == "ecg-rewrite" and (.rewrite.passes[0].name == $p)
      and .rewrite.passes[0].fired >= $m and .after.nodes < .before.nodes and .after.flops <= .before.flops
      and .rewrite.passes[0].time_ms >= 0' "$T/r.json"
  "$BIN/ecg-lower" -o "$T/before" "$T/g.ecg"
  "$BIN/ecg-lower" -o "$T/after" "$T/r.ecg"
  "$BIN/ecg-bench" "$T/before" --random 1 --save "$T/data" --runs 1 >/dev/null
  run "$BIN/ecg-bench" "$T/after" --data "$T/data" --runs 1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"$output")" = "true" ]
}

@test "ecg-rewrite fold: constant subexpression folded, outputs unchanged" { fires fold fold 1; }
@test "ecg-rewrite bnfold: BN into Conv, grouped ConvTranspose, Gemm, MatMul; outputs unchanged" {
  fires bnfold bnfold 4
  jq -e '.rewrite.passes[0].rules | ."bn->conv" == 1 and ."bn->convtranspose" == 1 and ."bn->gemm" == 1 and ."bn->matmul" == 1' "$BATS_TEST_TMPDIR/r.json"
  [ -z "$("$BIN/ecg-dump" --json "$BATS_TEST_TMPDIR/r.ecg" | jq -r '.nodes[] | select(.op == "BatchNormalization") | .name')" ]
}
@test "ecg-rewrite padfold: a zero Pad into the stride-2 Conv after it; a valued Pad, a channel Pad, a Pad read by a Relu stay; outputs unchanged" {
  fires padfold padfold 1
  jq -e '.rewrite.passes[0].rules == {"pad->conv": 1}' "$BATS_TEST_TMPDIR/r.json"
  "$BIN/ecg-dump" --json "$BATS_TEST_TMPDIR/r.ecg" | jq -e '[.nodes[] | select(.op == "Pad")] | length == 3'
  # the folded Conv: its own pads plus the Pad's spatial ones (begin H 0+1, W 1+2; end H 1+2, W 0+1)
  "$BIN/ecg-dump" --json "$BATS_TEST_TMPDIR/r.ecg" | jq -e '.nodes[] | select(.outputs[0] == "c1") | .attrs.pads == [1, 3, 3, 1]'
}
@test "ecg-rewrite cse: duplicates merged, graph output names kept, outputs unchanged" {
  fires cse cse 4
  # the Exp that was a graph output keeps its name; both Tanh outputs stay
  "$BIN/ecg-dump" --json "$BATS_TEST_TMPDIR/r.ecg" | jq -e '[.nodes[] | select(.op == "Tanh")] | length == 2'
}
@test "ecg-rewrite simplify: neutral operands, Transpose/Reshape chains, neutral ops; outputs unchanged" {
  fires simplify simplify 12
  jq -e '.rewrite.passes[0].rules | ."x*1" == 2 and ."x+0" == 1 and ."x-0" == 1 and ."x/1" == 1 and ."x^1" == 1
      and ."transpose-transpose=id" == 1 and ."transpose-transpose" == 1 and ."reshape-reshape" >= 1
      and ."neutral-cast" == 1 and ."neutral-expand" == 1' "$BATS_TEST_TMPDIR/r.json"
  # 0 - x (not commutative) and x * 2 stay
  "$BIN/ecg-dump" --json "$BATS_TEST_TMPDIR/r.ecg" | jq -e '[.nodes[] | select(.op == "Sub" or .op == "Mul")] | length == 2'
}

@test "ecg-rewrite math: every rule (>= 149, the paper's 45/38/66 per class, and a --rules one) fires on its source; outputs unchanged" {
  local T="$BATS_TEST_TMPDIR" missing
  build_gen mkrules tools/rewrite/rules.c build/gen/rules_blob.o build/tools/common/cli.o build/libecg.a
  printf '# a user rule\ncomm max-self: Max(a, a) -> a\n' >"$T/user.rules"
  "$BIN/ecg-rewrite" --rules "$T/user.rules" --list-rules >"$T/rules.txt"
  # the class counts of DNNFusion §3.4.2 (45 associative, 38 distributive, 66 commutative)
  [ "$(grep -c '^assoc ' "$T/rules.txt")" -ge 45 ]
  [ "$(grep -c '^dist ' "$T/rules.txt")" -ge 38 ]
  [ "$(grep -c '^comm ' "$T/rules.txt")" -ge 66 ]
  [ "$(wc -l <"$T/rules.txt")" -ge 150 ]
  # one instance of every rule's source, side by side in one graph (tests/bats/mkrules.c)
  "$BATS_FILE_TMPDIR/mkrules" "$T/g.ecg" "$T/user.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --passes math --rules "$T/user.rules" --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  echo "$stderr"
  [ "$status" -eq 0 ]
  jq -e '.after.nodes < .before.nodes and .after.flops < .before.flops' "$T/r.json"
  # every rule fired at least once
  missing=$(comm -23 <(awk '{print $2}' "$T/rules.txt" | sort) <(jq -r '.rewrite.passes[0].rules | keys[]' "$T/r.json" | sort))
  echo "rules that did not fire: $missing"
  [ -z "$missing" ]
  # the lowered graph gives the same outputs before and after on seeded inputs
  "$BIN/ecg-lower" -o "$T/before" "$T/g.ecg"
  "$BIN/ecg-lower" -o "$T/after" "$T/r.ecg"
  "$BIN/ecg-bench" "$T/before" --random 1 --save "$T/data" --runs 1 >/dev/null
  run "$BIN/ecg-bench" "$T/after" --data "$T/data" --runs 1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"$output")" = "true" ]
}

@test "ecg-rewrite math: a rule whose condition (pos, nonneg, int, scalar) does not hold does not fire" {
  local T="$BATS_TEST_TMPDIR" n
  build_gen mkrules tools/rewrite/rules.c build/gen/rules_blob.o build/tools/common/cli.o build/libecg.a
  "$BATS_FILE_TMPDIR/mkrules" --violate "$T/v.ecg"
  "$BIN/ecg-rewrite" --passes math --report "$T/r.json" "$T/v.ecg" -o "$T/r.ecg"
  cat "$T/r.json"
  # the instances are the outputs n_<rule>; none of those rules fired
  "$BIN/ecg-dump" --json "$T/v.ecg" | jq -r '.outputs[]' | sed -n 's/^n_//p' | sort >"$T/names"
  n=$(wc -l <"$T/names")
  [ "$n" -ge 20 ]
  jq -e --rawfile names "$T/names" '.rewrite.passes[0].rules as $r | [$names | split("\n")[] | select(. != "") | $r[.] // 0] | add == 0' "$T/r.json"
  # the sqrt of a possibly negative constant stays
  "$BIN/ecg-dump" --json "$T/r.ecg" | jq -e '[.nodes[] | select(.op == "Sqrt")] | length >= 2'
}

# onnx_rewritten NAME RULE: an ONNX backend node test rewritten with the default passes;
# RULE fired, and the lowered model matches the test's expected outputs.
onnx_rewritten() {
  local dir="$NODE_DATA/$1" T="$BATS_TEST_TMPDIR"
  require_file "$dir/model.onnx" "$dir/test_data_set_0"
  "$BIN/onnx2ecg" "$dir/model.onnx" -o "$T/m.ecg"
  "$BIN/ecg-rewrite" --report "$T/r.json" "$T/m.ecg" -o "$T/r.ecg"
  cat "$T/r.json"
  jq -e --arg r "$2" '.rewrite.passes[] | select(.name == "math") | .rules[$r] > 0' "$T/r.json"
  "$BIN/ecg-lower" -o "$T/d" "$T/r.ecg"
  run "$BIN/ecg-bench" "$T/d" --data "$dir/test_data_set_0" --runs 1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
}

@test "ecg-rewrite math on ONNX's expanded LogSoftmax (large numbers): Log(ReduceSum(Exp(x))) -> ReduceLogSumExp" {
  onnx_rewritten test_logsoftmax_large_number_expanded log-reducesum-exp
}
@test "ecg-rewrite math on ONNX's expanded MeanVarianceNormalization: Pow(x, 2) -> x*x" {
  onnx_rewritten test_mvn_expanded pow-two
}

@test "ecg-rewrite --list-rules: one rule a line with its class; bad rule files exit 1 naming FILE:LINE" {
  local T="$BATS_TEST_TMPDIR"
  run "$BIN/ecg-rewrite" --list-rules
  [ "$status" -eq 0 ]
  [ -z "$(printf '%s\n' "$output" | grep -Ev '^(assoc|dist|comm) +[a-z0-9-]+ +[A-Z][A-Za-z]*\(.* -> ')" ]
  printf 'assoc ok: Mul(a, 1) -> a\n\nassoc bad: Mul(x, Frob(y)) -> x\n' >"$T/bad.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/bad.rules" --list-rules
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.rules:3: unknown operator"*"Frob"* ]]
  printf 'assoc bad: Mul(x, y) -> z\n' >"$T/bad.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/bad.rules" --list-rules
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.rules:1: target variable not bound"* ]]
  printf 'distrib x: Mul(a, b) -> a\n' >"$T/bad.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/bad.rules" --list-rules
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.rules:1: expected a class"* ]]
  # the matcher partitions at operators with none of the three properties: not in a source
  printf '# c\ncomm relu-relu: Relu(Relu(a)) -> Relu(a)\n' >"$T/bad.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/bad.rules" --list-rules
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.rules:2: operator with none of the associative/commutative/distributive"*"Relu"* ]]
  printf 'comm r: Exp(a) -> ReduceSum(a)\n' >"$T/bad.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/bad.rules" --list-rules
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.rules:1: target reduction without a reduction in the source"* ]]
  printf 'comm r: ReduceSum(a, b) -> a\n' >"$T/bad.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/bad.rules" --list-rules
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.rules:1: a reduction takes one operand"* ]]
  printf 'comm neg-neg: Neg(Neg(a)) -> a\n' >"$T/bad.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/bad.rules" --list-rules
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.rules:1: duplicate rule name"* ]]
  printf 'comm r: Mul(a, b) -> a if big(a)\n' >"$T/bad.rules"
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/bad.rules" --list-rules
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.rules:1: unknown condition (known: const, nonneg, pos, int, scalar)"* ]]
  run --separate-stderr "$BIN/ecg-rewrite" --rules "$T/none.rules" --list-rules
  [ "$status" -eq 1 ]
}

@test "ecg-rewrite fold: --fold-max-bytes bounds the folded constants" {
  local T="$BATS_TEST_TMPDIR"
  "$BATS_FILE_TMPDIR/mkrewrite" fold "$T/g.ecg"
  "$BIN/ecg-rewrite" --passes fold --fold-max-bytes 8 --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  jq -e '.rewrite.passes[0].fired == 0 and .after.nodes == .before.nodes' "$T/r.json"
}

@test "ecg-rewrite: every pass alone and the default list leave every graph valid" {
  local T="$BATS_TEST_TMPDIR" k p
  for k in fold bnfold padfold cse simplify math; do
    "$BATS_FILE_TMPDIR/mkrewrite" "$k" "$T/$k.ecg"
    for p in fold bnfold padfold cse simplify math fold,bnfold,padfold,cse,simplify,math,cse; do
      "$BIN/ecg-rewrite" --passes "$p" "$T/$k.ecg" -o "$T/$k.$p.ecg"
      "$BIN/ecg-dump" --summary "$T/$k.$p.ecg" >/dev/null
    done
    # the default passes, on a pipe
    "$BIN/ecg-rewrite" <"$T/$k.ecg" | "$BIN/ecg-dump" --summary - >/dev/null
  done
}

@test "ecg-rewrite: unknown pass is a usage error listing the known ones" {
  run --separate-stderr "$BIN/ecg-rewrite" --passes fold,tvm /dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"unknown pass 'tvm'"*"fold, bnfold, padfold, cse, simplify, math"* ]]
  run --separate-stderr "$BIN/ecg-rewrite" --bogus
  [ "$status" -eq 2 ]
  run "$BIN/ecg-rewrite" --version
  [ "$status" -eq 0 ]; [[ "$output" == "ecg-rewrite "* ]]
  run "$BIN/ecg-rewrite" --help
  [ "$status" -eq 0 ]; [[ "$output" == *"--passes"*"bnfold"* ]]
}

@test "ecg-rewrite: invalid input exits 1 naming the node, writes nothing" {
  local T="$BATS_TEST_TMPDIR"
  build_gen mkecg build/libecg.a
  "$BATS_FILE_TMPDIR/mkecg" dangling "$T/bad.ecg"
  run --separate-stderr "$BIN/ecg-rewrite" "$T/bad.ecg" -o "$T/out.ecg"
  echo "$stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"node"* ]]
  [ ! -e "$T/out.ecg" ]
  printf 'not an ecg' >"$T/junk.ecg"
  run --separate-stderr "$BIN/ecg-rewrite" "$T/junk.ecg" -o "$T/out.ecg"
  [ "$status" -eq 1 ]; [ ! -e "$T/out.ecg" ]
}

@test "ecg-rewrite: fusion blocks are dropped with a note (ecg-fuse runs after)" {
  local T="$BATS_TEST_TMPDIR"
  "$BATS_FILE_TMPDIR/mkrewrite" simplify "$T/g.ecg"
  "$BIN/ecg-fuse" "$T/g.ecg" -o "$T/f.ecg"
  run --separate-stderr "$BIN/ecg-rewrite" --report "$T/r.json" "$T/f.ecg" -o "$T/r.ecg"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"fusion block(s) dropped"* ]]
  jq -e '.rewrite.blocks_dropped > 0' "$T/r.json"
  "$BIN/ecg-dump" --json "$T/r.ecg" | jq -e '[.nodes[] | select(.fusion_block >= 0)] | length == 0'
}

# rewritten NAME: scripts/e2e.sh with the default ecg-rewrite passes before the lowering;
# the model still matches ONNX Runtime, and nodes and FLOPs never increase.
rewritten() {
  local name=$1 rep="$ECG_OUT/$1.rewrite.json"
  ECG_STAGES="ecg-rewrite --report $rep" run --separate-stderr sh "$ROOT/scripts/e2e.sh" "$name" --runs 1
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"; cat "$rep"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
  jq -e '.after.nodes <= .before.nodes and .after.flops <= .before.flops' "$rep"
}

@test "ecg-rewrite e2e: ppocr_mobile_v2_cls (bnfold fires)" {
  rewritten ppocr_mobile_v2_cls
  jq -e '.rewrite.passes[] | select(.name == "bnfold") | .fired > 0' "$ECG_OUT/ppocr_mobile_v2_cls.rewrite.json"
}
@test "ecg-rewrite e2e: bert_tiny (simplify and math fire: LayerNorm's Pow(x, 2), the attention scale)" {
  rewritten bert_tiny
  jq -e '.rewrite.passes[] | select(.name == "simplify") | .fired > 0' "$ECG_OUT/bert_tiny.rewrite.json"
  jq -e '.rewrite.passes[] | select(.name == "math") | .rules."pow-two" > 0 and .rules."matmul-mul-scalar" > 0' "$ECG_OUT/bert_tiny.rewrite.json"
}
@test "ecg-rewrite e2e: mobilenet_v2" { rewritten mobilenet_v2; }
@test "ecg-rewrite e2e: blazeface_front_128" { rewritten blazeface_front_128; }

@test "ecg-rewrite: on every model of scripts/models.tsv the default passes never add nodes or FLOPs" {
  local T="$BATS_TEST_TMPDIR" name path shapes args s
  while IFS=$'\t' read -r name path shapes; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    require_file "$ROOT/$path"
    args=()
    if [ "$shapes" != "-" ]; then for s in ${shapes//,/ }; do args+=(--input-shape "$s"); done; fi
    "$BIN/onnx2ecg" "$ROOT/$path" "${args[@]}" -o "$T/$name.ecg"
    "$BIN/ecg-rewrite" --report "$T/$name.json" "$T/$name.ecg" -o "$T/$name.rw.ecg"
    echo "$name $(jq -c '[.before.nodes, .after.nodes, .before.flops, .after.flops]' "$T/$name.json")"
    jq -e '.after.nodes <= .before.nodes and .after.flops <= .before.flops' "$T/$name.json" >/dev/null
  done <"$ROOT/scripts/models.tsv"
}
