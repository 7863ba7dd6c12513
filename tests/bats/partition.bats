#!/usr/bin/env bats
# ecg-partition (AGO, INFOCOM 2023, §IV): every real model partitions into a valid acyclic
# cover under both strategies (the validator checks it on read), the partition survives the
# lowering and the model stays correct against ONNX Runtime, AGO's subgraphs are fewer,
# heavier and more balanced than the Relay baseline's, and the command line fails cleanly.
# The random-DAG property test is tests/unit/partition_test.c.

load helpers

setup() {
  require_tools
  require_file "$BIN/ecg-fuse" "$BIN/ecg-partition"
  export ECG_OUT="$ROOT/build/bats-out-partition"
  mkdir -p "$ECG_OUT"
}

# ecg MODEL: convert MODEL of scripts/models.tsv and fuse it into $ECG_OUT/MODEL.f.ecg.
ecg() {
  local line path shapes args=()
  line=$(grep -v '^#' "$ROOT/scripts/models.tsv" | awk -F'\t' -v n="$1" '$1 == n')
  path=$(cut -f2 <<<"$line"); shapes=$(cut -f3 <<<"$line")
  require_file "$ROOT/$path"
  if [ "$shapes" != "-" ]; then for s in ${shapes//,/ }; do args+=(--input-shape "$s"); done; fi
  [ -f "$ECG_OUT/$1.f.ecg" ] || { "$BIN/onnx2ecg" "$ROOT/$path" "${args[@]}" | "$BIN/ecg-fuse" -o "$ECG_OUT/$1.f.ecg"; }
}

@test "ecg-partition: every model, both strategies: a valid acyclic cover, every node in exactly one subgraph, blocks whole" {
  local m s
  for m in $(grep -v '^#' "$ROOT/scripts/models.tsv" | cut -f1); do
    ecg "$m"
    for s in ago relay; do
      run --separate-stderr "$BIN/ecg-partition" --strategy "$s" "$ECG_OUT/$m.f.ecg" -o "$ECG_OUT/$m.$s.ecg" --report "$ECG_OUT/$m.$s.json"
      echo "$m $s: exit $status $stderr"
      [ "$status" -eq 0 ]
      # ecg-dump validates on read (acyclic quotient, exact cover); check the cover again from the JSON
      "$BIN/ecg-dump" --json "$ECG_OUT/$m.$s.ecg" > "$ECG_OUT/$m.$s.dump.json"
      jq -e '(.nodes | length) as $n | [.subgraphs[].nodes[]] | (length == $n) and ((unique | length) == $n)' "$ECG_OUT/$m.$s.dump.json"
      # a fusion block's members share one subgraph
      jq -e '([.subgraphs[] | .id as $s | .nodes[] | {key: tostring, value: $s}] | from_entries) as $sub
             | all(.blocks[]; [.nodes[] | $sub[tostring]] | unique | length == 1)' "$ECG_OUT/$m.$s.dump.json"
      jq -e --arg s "$s" '.stage == "ecg-partition" and .partition.strategy == $s and .partition.subgraphs == (.partition.weights | length)
             and .partition.jain > 0 and .partition.jain <= 1 and .before.nodes == .after.nodes' "$ECG_OUT/$m.$s.json"
    done
    # Relay: at most one complex operator per subgraph unless one fusion block holds more
    jq -e '.partition.max_complex_per_subgraph <= 1' "$ECG_OUT/$m.relay.json" ||
      [ "$("$BIN/ecg-dump" --json "$ECG_OUT/$m.f.ecg" | jq '[.blocks[] | [.nodes[]] | length] | max')" -gt 1 ]
  done
}

@test "ecg-partition: AGO has fewer, heavier, more balanced subgraphs than Relay on mobilenet_v2, efficientnet_b0, bert_tiny" {
  local m
  for m in mobilenet_v2 efficientnet_b0 bert_tiny; do
    ecg "$m"
    "$BIN/ecg-partition" "$ECG_OUT/$m.f.ecg" -o /dev/null --report "$ECG_OUT/$m.cmp.ago.json"
    "$BIN/ecg-partition" --strategy relay "$ECG_OUT/$m.f.ecg" -o /dev/null --report "$ECG_OUT/$m.cmp.relay.json"
    jq -c '.partition | {strategy, subgraphs, mean_weight, median_weight, jain}' "$ECG_OUT/$m.cmp.ago.json" "$ECG_OUT/$m.cmp.relay.json"
    jq -s -e '.[0].partition as $a | .[1].partition as $r
              | $a.subgraphs < $r.subgraphs and $a.mean_weight > $r.mean_weight and $a.jain > $r.jain
              and $a.max_weight_seen < $a.max_weight' "$ECG_OUT/$m.cmp.ago.json" "$ECG_OUT/$m.cmp.relay.json"
  done
}

@test "ecg-fuse | ecg-partition | ecg-lower: mobilenet_v2 (AGO, intensive fusion) correct against ONNX Runtime" {
  ECG_STAGES="ecg-fuse --intensive|ecg-partition" run --separate-stderr sh "$ROOT/scripts/e2e.sh" mobilenet_v2 --runs 1
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
  [ "$("$BIN/ecg-dump" --json "$ECG_OUT/mobilenet_v2.ecg" | jq '.subgraphs | length')" -gt 1 ]
}

@test "ecg-fuse | ecg-partition --strategy relay | ecg-lower: bert_tiny correct against ONNX Runtime" {
  ECG_STAGES="ecg-fuse|ecg-partition --strategy relay" run --separate-stderr sh "$ROOT/scripts/e2e.sh" bert_tiny --runs 1
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
}

@test "ecg-partition: Td bounds merged subgraphs; a tiny Td merges nothing; the sanitizer build agrees" {
  ecg mobilenet_v2
  require_file "$SAN/ecg-partition"
  run --separate-stderr "$SAN/ecg-partition" --max-weight 200 "$ECG_OUT/mobilenet_v2.f.ecg" -o "$ECG_OUT/td.ecg" --report -
  no_sanitizer_report "$stderr"
  [ "$status" -eq 0 ]
  jq -e '.partition.max_weight == 200 and .partition.merges > 0' <<<"$stderr"
  # every subgraph of more than one unit weighs < 200 (units: blocks and unblocked nodes)
  "$BIN/ecg-dump" --json "$ECG_OUT/td.ecg" | jq -e '
    ([.nodes | to_entries[] | {key: (.key | tostring), value: .value.fusion_block}] | from_entries) as $blk
    | all(.subgraphs[]; ([.nodes[] | if $blk[tostring] >= 0 then "b\($blk[tostring])" else "n\(.)" end] | unique | length) == 1 or .weight < 200)'
  run --separate-stderr "$BIN/ecg-partition" --max-weight 1e-9 "$ECG_OUT/mobilenet_v2.f.ecg" -o /dev/null --report -
  [ "$status" -eq 0 ]
  jq -e '.partition.merges == 0' <<<"$stderr"
}

@test "ecg-partition: --weights reads c, b and Td from a file; bad files and flags fail cleanly" {
  ecg mobilenet_v2
  printf 'c 2\nb 1 # bias\nmax_weight 500\n' > "$ECG_OUT/w.txt"
  run --separate-stderr "$BIN/ecg-partition" --weights "$ECG_OUT/w.txt" "$ECG_OUT/mobilenet_v2.f.ecg" -o /dev/null --report -
  [ "$status" -eq 0 ]
  jq -e '.partition.c == 2 and .partition.b == 1 and .partition.max_weight == 500 and .partition.fitted == false' <<<"$stderr"
  printf 'c 2\nslope 1\n' > "$ECG_OUT/bad.txt"
  run --separate-stderr "$BIN/ecg-partition" --weights "$ECG_OUT/bad.txt" "$ECG_OUT/mobilenet_v2.f.ecg" -o "$BATS_TEST_TMPDIR/never.ecg"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"bad.txt:2: unknown key 'slope'"* ]]; [ ! -e "$BATS_TEST_TMPDIR/never.ecg" ]
  run --separate-stderr "$BIN/ecg-partition" --weights "$ECG_OUT/missing.txt" "$ECG_OUT/mobilenet_v2.f.ecg" -o /dev/null
  [ "$status" -eq 1 ]; [[ "$stderr" == *"missing.txt: No such file"* ]]
  run --separate-stderr "$BIN/ecg-partition" --strategy tvm "$ECG_OUT/mobilenet_v2.f.ecg" -o /dev/null
  [ "$status" -eq 2 ]; [[ "$stderr" == *"known: ago, relay"* ]]
  run --separate-stderr "$BIN/ecg-partition" --max-weight -3 "$ECG_OUT/mobilenet_v2.f.ecg" -o /dev/null
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-partition" --tune --budget 0 "$ECG_OUT/mobilenet_v2.f.ecg" -o /dev/null
  [ "$status" -eq 2 ]
  run --separate-stderr "$BIN/ecg-partition" --no-reformer "$ECG_OUT/mobilenet_v2.f.ecg" -o /dev/null
  [ "$status" -eq 2 ]; [[ "$stderr" == *"go with --tune"* ]]
  run --separate-stderr "$BIN/ecg-partition" -o /dev/null /dev/null
  echo "empty input: exit $status: $stderr"
  [ "$status" -eq 1 ]
}

@test "ecg-partition: a symbolic dimension is an error naming the node" {
  require_file "$ROOT/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
  # without --input-shape the PP-OCR classifier keeps its symbolic batch and width
  "$BIN/onnx2ecg" "$ROOT/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" -o "$ECG_OUT/ppocr_sym.ecg"
  run --separate-stderr "$BIN/ecg-partition" "$ECG_OUT/ppocr_sym.ecg" -o "$BATS_TEST_TMPDIR/never.ecg"
  echo "$stderr"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"node '"*"symbolic"* ]]; [ ! -e "$BATS_TEST_TMPDIR/never.ecg" ]
}

@test "ecg-partition: ecg-dump --dot draws subgraphs as clusters; ecg-fuse and ecg-rewrite drop them with a note" {
  ecg mobilenet_v2
  "$BIN/ecg-partition" "$ECG_OUT/mobilenet_v2.f.ecg" -o "$ECG_OUT/p.ecg"
  n=$("$BIN/ecg-dump" --json "$ECG_OUT/p.ecg" | jq '.subgraphs | length')
  [ "$("$BIN/ecg-dump" --dot "$ECG_OUT/p.ecg" | grep -c 'subgraph cluster_s')" -eq "$n" ]
  run --separate-stderr "$BIN/ecg-fuse" "$ECG_OUT/p.ecg" -o "$ECG_OUT/refused.ecg"
  [ "$status" -eq 0 ]; [[ "$stderr" == *"partition subgraph(s) dropped"* ]]
  [ "$("$BIN/ecg-dump" --json "$ECG_OUT/refused.ecg" | jq '.subgraphs | length')" -eq 0 ]
  run --separate-stderr "$BIN/ecg-rewrite" "$ECG_OUT/p.ecg" -o /dev/null
  [ "$status" -eq 0 ]; [[ "$stderr" == *"partition subgraph(s) dropped"* ]]
}
