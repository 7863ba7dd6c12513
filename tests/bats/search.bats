#!/usr/bin/env bats
# ecg-rewrite --search (pass "subst"): the OCGGS search algorithms on small graphs built by
# tests/bats/mksearch.c.  Every structural rule fires somewhere (under a cost table that
# makes it pay), and the lowered graph gives the same outputs before and after on seeded
# inputs; Pruning and DPP explore fewer sequences than unpruned enumeration and reach
# its cost; a substitution that would make a cycle is rejected; an unknown --search
# name is a usage error listing the known ones.  The rule files' rules are substitutions
# too: beside conv-merge on a small graph, and on one instance of every rule (mkrules),
# with outputs compared before and after.

load helpers

setup_file() {
  build_gen mksearch build/libecg.a
}

setup() {
  require_tools
  require_file "$BIN/ecg-rewrite"
  T="$BATS_TEST_TMPDIR"
}

# same_outputs A.ecg B.ecg: lower both, outputs of B equal A's on seeded inputs.
same_outputs() {
  "$BIN/ecg-lower" -o "$T/before" "$1"
  "$BIN/ecg-lower" -o "$T/after" "$2"
  "$BIN/ecg-bench" "$T/before" --random 1 --save "$T/data" --runs 1 >/dev/null
  run "$BIN/ecg-bench" "$T/after" --data "$T/data" --runs 1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"$output")" = "true" ]
}

# to_db: "KEY = MS" lines on stdin -> $T/db.jsonl, cost records (tools/rewrite/cost.c) keyed
# by this host (ecg-fuse --host-key), so ecg-rewrite --cost-db uses them.
to_db() {
  local key
  key=$("$BIN/ecg-fuse" --host-key)
  grep -v '^#' | while IFS= read -r l; do
    jq -cn --argjson h "$key" --arg s "${l% = *}" --argjson ms "${l##* = }" '$h + {kind: "node_time", signature: $s, ms: $ms}'
  done > "$T/db.jsonl"
}

# A table under which the ResNet block's 1x1 shortcut is slow, so that enlarging it to 3x3,
# merging it with the block's first 3x3 Conv and moving the two Relu before the Split pays
# (the path of OCGGS Fig. 1: the graph's shapes are those of mksearch resnet 2 16 8).
resnet_db() {
  to_db <<'EOF'
# KEY = MS
Conv 1x16x8x8 c16x16x3x3 c16 -> 1x16x8x8 k3x3 s1x1 p1,1,1,1 d1x1 g1 = 1
Conv 1x16x8x8 c16x16x1x1 c16 -> 1x16x8x8 k1x1 s1x1 p0,0,0,0 d1x1 g1 = 1.5
Conv 1x16x8x8 c32x16x3x3 c32 -> 1x32x8x8 k3x3 s1x1 p1,1,1,1 d1x1 g1 = 1.2
Split 1x32x8x8 c2 -> 1x16x8x8 1x16x8x8 a1 = 0.01
Relu 1x16x8x8 -> 1x16x8x8 = 0.01
Relu 1x32x8x8 -> 1x32x8x8 = 0.012
Add 1x16x8x8 1x16x8x8 -> 1x16x8x8 = 0.01
EOF
}

# uphill_db: as resnet_db, but enlarging the 1x1 Conv costs more (+0.4 ms, above TASO's
# alpha = 1.05 bound) before the merge pays it back: the path greedy search cannot take.
uphill_db() {
  resnet_db
  sed -i 's/k1x1 s1x1 p0,0,0,0 d1x1 g1","ms":1.5/k1x1 s1x1 p0,0,0,0 d1x1 g1","ms":0.6/' "$T/db.jsonl"
  grep -q '"ms":0.6' "$T/db.jsonl"
}

@test "ecg-rewrite --search: every algorithm on 2 ResNet blocks; exact ones agree, pruned explore less, outputs unchanged" {
  "$BATS_FILE_TMPDIR/mksearch" resnet 2 "$T/g.ecg" 16 8
  uphill_db
  run --separate-stderr "$BIN/ecg-rewrite" --search greedy,taso,enu,pruning,dpp,sampling --cost-db "$T/db.jsonl" -v \
    --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  echo "$stderr"; cat "$T/r.json"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"subst sampling: done"* ]]
  jq -e '.rewrite.search.algorithms as $a | ($a | length) == 6 and ($a | all(.finished and .explored > 0
      and .final_cost <= .initial_cost and .time_s >= 0))' "$T/r.json"
  # the exact searches find the optimum: enlarge, merge and Relu-before-Split in both blocks;
  # greedy and TASO (alpha 1.05) stop at the first uphill step, Sampling (eta 1) takes it
  jq -e '[.rewrite.search.algorithms[] | select(.name == "enu" or .name == "pruning" or .name == "dpp") | .final_cost]
      | (max - min) < 1e-9' "$T/r.json"
  jq -e '(.rewrite.search.algorithms | map({(.name): .}) | add) as $s
      | $s.pruning.explored < $s.enu.explored and $s.dpp.explored < $s.enu.explored
      and ($s.sampling.final_cost - $s.enu.final_cost | fabs) < 1e-9 and $s.enu.final_cost < $s.enu.initial_cost
      and $s.greedy.steps == 0 and $s.taso.steps == 0
      and ($s.enu.applied | sort) == ["conv-enlarge", "conv-enlarge", "conv-merge", "conv-merge", "split-unary", "split-unary"]' "$T/r.json"
  # --search adds the subst pass after the default passes
  jq -e '.rewrite.search.picked == "enu" and .rewrite.passes[-1].name == "subst" and .rewrite.passes[-1].fired == 6' "$T/r.json"
  "$BIN/ecg-dump" --json "$T/r.ecg" | jq -e '[.nodes[] | select(.op == "Conv")] | length == 4'
  same_outputs "$T/g.ecg" "$T/r.ecg"
}

@test "ecg-rewrite --search: each algorithm alone keeps outputs" {
  "$BATS_FILE_TMPDIR/mksearch" resnet 1 "$T/g.ecg" 16 8
  resnet_db
  for a in greedy taso enu pruning dpp sampling; do
    "$BIN/ecg-rewrite" --passes subst --search "$a" --cost-db "$T/db.jsonl" --report "$T/r.json" "$T/g.ecg" -o "$T/r_$a.ecg"
    jq -e --arg a "$a" '.rewrite.search.picked == $a and .rewrite.search.algorithms[0].steps == 3' "$T/r.json"
  done
  same_outputs "$T/g.ecg" "$T/r_greedy.ecg"
  for a in taso enu pruning dpp sampling; do cmp <("$BIN/ecg-dump" --json "$T/r_greedy.ecg") <("$BIN/ecg-dump" --json "$T/r_$a.ecg"); done
}

@test "ecg-rewrite --passes subst without --search runs Sampling" {
  "$BATS_FILE_TMPDIR/mksearch" convcat 1 "$T/g.ecg"
  "$BIN/ecg-rewrite" --passes subst --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  jq -e '.rewrite.search.picked == "sampling" and .rewrite.search.algorithms[0].steps == 2' "$T/r.json"
}

@test "ecg-rewrite --search: conv-merge then split-concat (roofline costs), outputs unchanged" {
  "$BATS_FILE_TMPDIR/mksearch" convcat 1 "$T/g.ecg"
  run "$BIN/ecg-rewrite" --search pruning --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 0 ]
  cat "$T/r.json"
  jq -e '.rewrite.search.algorithms[0].applied == ["conv-merge", "split-concat"]' "$T/r.json"
  "$BIN/ecg-dump" --json "$T/r.ecg" | jq -e '[.nodes[].op] | sort == ["Conv", "Relu"]'
  same_outputs "$T/g.ecg" "$T/r.ecg"
}

@test "ecg-rewrite --search: concat-ew, ew-concat and split-unary fire, outputs unchanged" {
  "$BATS_FILE_TMPDIR/mksearch" concat 1 "$T/g.ecg"
  to_db <<'EOF'
Add 4x6 4x6 -> 4x6 = 1
Add 8x6 8x6 -> 8x6 = 0.01
Mul 8x6 8x6 -> 8x6 = 1
Mul 4x6 4x6 -> 4x6 = 0.01
Concat 4x6 4x6 -> 8x6 a0 = 0.01
EOF
  run "$BIN/ecg-rewrite" --search dpp --cost-db "$T/db.jsonl" --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 0 ]
  cat "$T/r.json"
  jq -e '.rewrite.search.algorithms[0].applied | sort == ["concat-ew", "ew-concat", "split-unary"]' "$T/r.json"
  same_outputs "$T/g.ecg" "$T/r.ecg"
}

# cycle_db: costs under which merging two MatMuls of mksearch cycle pays.
cycle_db() {
  to_db <<'EOF'
MatMul 8x8 c8x8 -> 8x8 = 1
MatMul 8x8 8x8 -> 8x8 = 1
MatMul 8x8 c8x16 -> 8x16 = 1.1
MatMul 8x8 8x16 -> 8x16 = 1.1
EOF
}

@test "ecg-rewrite --search: matmul-merge fires, the merge that would make a cycle is rejected" {
  "$BATS_FILE_TMPDIR/mksearch" cycle 1 "$T/g.ecg"
  cycle_db
  run "$BIN/ecg-rewrite" --search enu --cost-db "$T/db.jsonl" --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 0 ]
  cat "$T/r.json"
  jq -e '.rewrite.search.algorithms[0] | .cycles_rejected >= 1 and .applied == ["matmul-merge"]' "$T/r.json"
  "$BIN/ecg-dump" --json "$T/r.ecg" | jq -e '[.nodes[] | select(.op == "MatMul")] | length == 2'
  same_outputs "$T/g.ecg" "$T/r.ecg"
}

@test "ecg-rewrite --search: unknown name, bad --max-steps and a bad cost table are errors" {
  "$BATS_FILE_TMPDIR/mksearch" cycle 1 "$T/g.ecg"
  run "$BIN/ecg-rewrite" --search greedy,bogus "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown search 'bogus' (known: greedy, taso, enu, pruning, dpp, sampling)"* ]]
  [ ! -e "$T/r.ecg" ]
  run "$BIN/ecg-rewrite" --search greedy --max-steps -1 "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 2 ]
  printf '{"cpu": "x", "isa": "avx2", "threads": 1, "signature": "MatMul 8x8 -> 8x8", "ms": 1}\nRelu 8x8 -> 8x8 = 1\n' > "$T/bad.txt"
  run "$BIN/ecg-rewrite" --search greedy --cost-db "$T/bad.txt" "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 1 ]
  [[ "$output" == *"bad.txt:2: not a cost record"* ]]
  printf '{"cpu": "x", "isa": "avx2", "threads": 1, "signature": "A", "ms": -1}\n' > "$T/bad.txt"
  run "$BIN/ecg-rewrite" --search greedy --cost-db "$T/bad.txt" "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 1 ]
  [[ "$output" == *"bad.txt:1: time -1 ms is not >= 0"* ]]
  printf '{"cpu": "x", "isa": "avx2", "threads": 1, "signature": "A", "ms": 1e999}\n' > "$T/bad.txt"
  run "$BIN/ecg-rewrite" --search greedy --cost-db "$T/bad.txt" "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 1 ]
  [[ "$output" == *"bad.txt:1: not a cost record"* ]]
  [ ! -e "$T/r.ecg" ]
}

@test "ecg-rewrite --cost-db: samples of another machine are ignored and named, this host's are used" {
  "$BATS_FILE_TMPDIR/mksearch" cycle 1 "$T/g.ecg"
  cycle_db
  # the same signatures from another CPU, with times that would forbid the merge
  jq -c '.cpu = "Other CPU 9000" | .ms = (if .signature | test("x16") then 50 else 0.001 end)' "$T/db.jsonl" > "$T/other.jsonl"
  cat "$T/other.jsonl" "$T/db.jsonl" > "$T/mixed.jsonl"
  printf '{"kind": "fusion_pair", "cpu": "x", "isa": "y", "threads": 1, "signature": "s", "ms": 1}\n' >> "$T/mixed.jsonl"
  run --separate-stderr "$BIN/ecg-rewrite" --search enu --cost-db "$T/mixed.jsonl" --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  echo "$stderr"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"mixed.jsonl: 4 sample(s) of another machine ignored (the first: cpu 'Other CPU 9000'"* ]]
  jq -e '.rewrite.search.algorithms[0] | .applied == ["matmul-merge"] and .cost_table_hits > 0' "$T/r.json"
  # only the other machine's samples: none is used (every node costed by the roofline)
  run --separate-stderr "$BIN/ecg-rewrite" --search enu --cost-db "$T/other.jsonl" --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  [ "$status" -eq 0 ]
  jq -e '.rewrite.search.algorithms[0] | .cost_table_hits == 0 and .cost_roofline > 0' "$T/r.json"
}

# mathconv_db: costs under which merging the two Convs pays (OCGGS Fig. 2) and a Neg costs
# more than a Mul, for mksearch mathconv (C 8, HW 6).
mathconv_db() {
  to_db <<'EOF2'
Conv 1x8x6x6 c8x8x3x3 c8 -> 1x8x6x6 k3x3 s1x1 p1,1,1,1 d1x1 g1 = 1
Conv 1x8x6x6 c16x8x3x3 c16 -> 1x16x6x6 k3x3 s1x1 p1,1,1,1 d1x1 g1 = 1.2
Split 1x16x6x6 c2 -> 1x8x6x6 1x8x6x6 a1 = 0.01
Neg 1x8x6x6 -> 1x8x6x6 = 0.1
Neg 1x16x6x6 -> 1x16x6x6 = 0.15
Mul 1x8x6x6 c8x1x1 -> 1x8x6x6 = 0.01
EOF2
}

@test "ecg-rewrite --search: rule-file rules are substitutions beside the structural ones; every algorithm finds merge + mul-neg-const twice, outputs unchanged" {
  "$BATS_FILE_TMPDIR/mksearch" mathconv 1 "$T/g.ecg"
  mathconv_db
  run --separate-stderr "$BIN/ecg-rewrite" --passes subst --search enu,pruning,dpp,greedy,taso,sampling --cost-db "$T/db.jsonl" \
    --report "$T/r.json" "$T/g.ecg" -o "$T/r.ecg"
  echo "$stderr"; cat "$T/r.json"
  [ "$status" -eq 0 ]
  jq -e '(.rewrite.search.algorithms | map({(.name): .}) | add) as $s
      | ($s.enu.applied | sort) == ["conv-merge", "mul-neg-const", "mul-neg-const"]
      and ([$s[] | .final_cost] | (max - min) < 1e-9) and $s.enu.final_cost < $s.enu.initial_cost
      and $s.pruning.explored < $s.enu.explored and $s.dpp.explored < $s.enu.explored' "$T/r.json"
  # the pass counts rule-file rules by name, like the structural ones
  jq -e '.rewrite.passes[0].rules == {"conv-merge": 1, "mul-neg-const": 2}' "$T/r.json"
  "$BIN/ecg-dump" --json "$T/r.ecg" | jq -e '[.nodes[].op] | sort == ["Conv", "Mul", "Mul", "Split"]'
  same_outputs "$T/g.ecg" "$T/r.ecg"
  # each algorithm's own result keeps the outputs too (Sampling took another order)
  "$BIN/ecg-rewrite" --passes subst --search sampling --cost-db "$T/db.jsonl" "$T/g.ecg" -o "$T/s.ecg"
  same_outputs "$T/g.ecg" "$T/s.ecg"
}

@test "ecg-rewrite --search: the rule files' rules applied by the search keep outputs (greedy rounds over one instance of every rule)" {
  build_gen mkrules tools/rewrite/rules.c build/gen/rules_blob.o build/tools/common/cli.o build/libecg.a
  "$BATS_FILE_TMPDIR/mkrules" "$T/g.ecg"
  cp "$T/g.ecg" "$T/cur.ecg"
  : > "$T/applied.txt"
  # rounds of at most 32 steps (roofline costs) until a round finds nothing that pays
  for round in 1 2 3 4 5 6 7 8 9 10 11 12; do
    "$BIN/ecg-rewrite" --passes subst --search greedy --max-steps 32 --report "$T/r.json" "$T/cur.ecg" -o "$T/next.ecg"
    jq -r '.rewrite.search.algorithms[0].applied[]' "$T/r.json" >> "$T/applied.txt"
    mv "$T/next.ecg" "$T/cur.ecg"
    [ "$(jq '.rewrite.search.algorithms[0].steps' "$T/r.json")" -gt 0 ] || break
  done
  "$BIN/ecg-rewrite" --list-rules | awk '{print $2}' | sort > "$T/rules.txt"
  sort -u "$T/applied.txt" > "$T/fired.txt"
  echo "rule-file rules the search applied: $(comm -12 "$T/rules.txt" "$T/fired.txt" | wc -l) of $(wc -l < "$T/rules.txt")"
  echo "not applied (no cost gain under the roofline): $(comm -23 "$T/rules.txt" "$T/fired.txt" | tr '\n' ' ')"
  # nearly every rule, reductions and rules with numbers in the target among them
  [ "$(comm -12 "$T/rules.txt" "$T/fired.txt" | wc -l)" -ge 180 ]
  grep -qx 'reducesum-square' "$T/fired.txt"
  grep -qx 'sqrt-reducesum-square' "$T/fired.txt"
  grep -qx 'add-mul-one' "$T/fired.txt"
  same_outputs "$T/g.ecg" "$T/cur.ecg"
}
