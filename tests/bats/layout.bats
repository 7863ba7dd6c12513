#!/usr/bin/env bats
# ecg-lower --layout (issue 13 item 3; GCD², Niu dissertation §4.4.1-4.4.2): the selection
# pass's plumbing on BlazeFace with cost databases written here (the solvers themselves are
# checked against exhaustive search in tests/unit/layout_test.c, the NCHWc kernels in
# tests/unit/rt_nchwc_test.c; real costs come from scripts/layout_costs.sh).

load helpers

setup() {
  require_tools
  require_cmd jq
  T="$BATS_TEST_TMPDIR"
  M="$ROOT/models/face_detection_front_128x128_barracuda.onnx"
  require_file "$M"
  "$BIN/onnx2ecg" "$M" | "$BIN/ecg-fuse" > "$T/g.ecg"
  "$BIN/ecg-lower" --layout-keys "$T/g.ecg" > "$T/keys"
  KEY=$("$BIN/ecg-fuse" --host-key)
}

# db FILE NCHW_MS NCHWC_MS REORDER_MS: every key of $T/keys with these costs, this host's key
db() {
  jq -R -c --argjson k "$KEY" --argjson a "$2" --argjson b "$3" --argjson r "$4" '
    if startswith("reorder") then $k + {kind: "layout_transform", signature: ., to8_ms: $r, from8_ms: $r, to16_ms: $r, from16_ms: $r}
    else $k + {kind: "layout_block", signature: ., nchw_ms: $a, nchwc8_ms: $b, nchwc16_ms: $b} end' "$T/keys" > "$1"
}

# cheap_nchwc NAME ECG: ../shared/models/NAME.onnx at 1x3x224x224 through ecg-fuse into ECG, its
# keys in $T/keys and $T/db a database where every NCHWc kernel is 10x cheaper than NCHW
cheap_nchwc() {
  require_file "$SHARED_MODELS/$1.onnx"
  "$BIN/onnx2ecg" "$SHARED_MODELS/$1.onnx" --input-shape input=1x3x224x224 | "$BIN/ecg-fuse" > "$2"
  "$BIN/ecg-lower" --layout-keys "$2" > "$T/keys"
  db "$T/db" 10 1 0.01
}

# matches_ort DIR [ARG...]: the lowered model in DIR, run once with ecg-bench's ARGs, matches
# ONNX Runtime's outputs (ecg-bench --ort --check exits 0)
matches_ort() {
  local d=$1
  shift
  run --separate-stderr "$BIN/ecg-bench" "$d" --ort --check --runs 1 --warmup 0 "$@"
  echo "$d: $output $stderr"
  [ "$status" -eq 0 ]
}

@test "layout: --layout-keys lists the convolutions and reorders to measure" {
  grep -q '^conv 1 ' "$T/keys"
  grep -q '^reorder 1 ' "$T/keys"
  # every line is one of the two forms rt_nchwc_test --costs reads
  ! grep -Ev '^(conv( [0-9]+){16}|reorder( [0-9]+){3})$' "$T/keys" || false
}

@test "layout: NCHW measured cheapest -> global, local and nchw choose NCHW; model.c byte-identical; correct vs ONNX Runtime" {
  db "$T/db" 1 2 0.1
  "$BIN/ecg-lower" -o "$T/plain" "$T/g.ecg"
  for mode in nchw local global; do
    "$BIN/ecg-lower" --layout "$mode" --layout-db "$T/db" --report "$T/$mode.json" -o "$T/$mode" "$T/g.ecg"
    cmp "$T/plain/model.c" "$T/$mode/model.c"
    jq -e '.lower.layout.chosen.NCHWc8 == 0 and .lower.layout.chosen.NCHWc16 == 0' "$T/$mode.json"
  done
  # the predictions: NCHW costs 1 per measured conv; fixed NCHWc costs 2 per conv plus reorders
  nconv=$(grep -c '^conv' "$T/keys")
  jq -e --argjson n "$nconv" '.lower.layout.measured_convs == $n and .lower.layout.predicted_ms.nchw == $n and
      .lower.layout.predicted_ms.global == $n and .lower.layout.predicted_ms.nchwc16 > 2 * $n - 1e-9 and .lower.layout.dp_exact' "$T/global.json"
  matches_ort "$T/global"
}

@test "layout: NCHWc measured cheaper -> global picks NCHWc blocks and predicts less than nchw and local; every mode lowers and matches ONNX Runtime" {
  db "$T/db" 10 1 0.01
  "$BIN/ecg-lower" -o "$T/plain" "$T/g.ecg"
  for mode in global local nchwc8 nchwc16; do
    "$BIN/ecg-lower" --layout "$mode" --layout-db "$T/db" --report "$T/$mode.json" -o "$T/$mode" "$T/g.ecg"
    jq -e '.lower.layout.chosen.NCHWc8 + .lower.layout.chosen.NCHWc16 > 0' "$T/$mode.json"
    grep -q 'ecg_rt1_nchwc_conv2d(' "$T/$mode/model.c"
    ! cmp -s "$T/plain/model.c" "$T/$mode/model.c" || false
    matches_ort "$T/$mode"
  done
  jq -e '.lower.layout.chosen.NCHWc16 > 0 and .lower.layout.chosen.NCHWc8 == 0' "$T/nchwc16.json"
  jq -e '.lower.layout.predicted_ms as $p | $p.global <= $p.local + 1e-9 and $p.global < $p.nchw and
      $p.global <= $p.nchwc8 + 1e-9 and $p.global <= $p.nchwc16 + 1e-9' "$T/global.json"
}

@test "layout: a signature missing from the database is an error naming it; no --layout-db is a usage error; unknown mode is a usage error" {
  db "$T/db" 1 2 0.1
  grep -v "$(grep -m1 '^conv' "$T/keys")\"" "$T/db" > "$T/db2"
  run --separate-stderr "$BIN/ecg-lower" --layout global --layout-db "$T/db2" -o "$T/out" "$T/g.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"no measured layout cost for 'conv "* ]]
  [ ! -e "$T/out" ]
  run --separate-stderr "$BIN/ecg-lower" --layout global -o "$T/out" "$T/g.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--layout needs --layout-db FILE"* ]]
  run --separate-stderr "$BIN/ecg-lower" --layout diagonal --layout-db "$T/db" -o "$T/out" "$T/g.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"unknown --layout 'diagonal' (expected global, local, nchw, nchwc8 or nchwc16)"* ]]
}

@test "layout: costs of another CPU or of another runtime are ignored (the database is keyed by host and runtime id)" {
  KEY='{"cpu": "Some Other CPU", "isa": "avx2", "threads": 1, "device": "cpu"}' db "$T/db" 1 2 0.1
  run --separate-stderr "$BIN/ecg-lower" --layout global --layout-db "$T/db" -o "$T/out" "$T/g.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"no measured layout cost"* ]]
  # this host, but measured with other runtime sources (scripts/layout_costs.sh's "rt"): ignored;
  # with this build's runtime id (the one ecg-lower writes into every lowered directory): taken
  KEY=$(jq -c '. + {rt: "0000000000000000"}' <<<"$KEY") db "$T/db2" 1 2 0.1
  run --separate-stderr "$BIN/ecg-lower" --layout global --layout-db "$T/db2" -o "$T/out" "$T/g.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"no measured layout cost"* ]]
  "$BIN/ecg-lower" -o "$T/plain" "$T/g.ecg"
  local id
  id=$(sed -n 's/.*ECG_RT_SOURCE_ID "\(.*\)".*/\1/p' "$T/plain/ecg_rt_id.h")
  KEY=$(jq -c --arg id "$id" '. + {rt: $id}' <<<"$KEY") db "$T/db3" 1 2 0.1
  "$BIN/ecg-lower" --layout global --layout-db "$T/db3" -o "$T/out" "$T/g.ecg"
}

@test "layout: squeezenet1_1 in NCHWc: its pools and channel Concats take the layout, the expands write their slabs of the Concat in place; matches ONNX Runtime" {
  cheap_nchwc squeezenet1_1 "$T/sq.ecg"
  for mode in nchwc16 nchwc8 global; do
    "$BIN/ecg-lower" --layout "$mode" --layout-db "$T/db" --report "$T/$mode.json" -o "$T/$mode" "$T/sq.ecg"
    # the 3 MaxPools and the GlobalAveragePool in NCHWc; one reorder, the graph input into the
    # first conv: the pool's [1, 1000, 1, 1] output has the same bytes in both layouts, so the
    # Flatten after it (the graph output) reads it as it lies
    [ "$(grep -c 'ecg_rt1_nchwc_maxpool2d(' "$T/$mode/model.c")" -eq 3 ]
    [ "$(grep -c 'ecg_rt1_nchwc_global_avgpool(' "$T/$mode/model.c")" -eq 1 ]
    [ "$(grep -c 'ecg_rt1_nchw_to_nchwc(' "$T/$mode/model.c")" -eq 1 ]
    [ "$(grep -c 'ecg_rt1_nchwc_to_nchw(' "$T/$mode/model.c")" -eq 0 ]
    # the 8 Concats move nothing: each expand wrote its slab in place
    [ "$(grep -A3 "node from '/features/features.[0-9]*/Concat'" "$T/$mode/model.c" | grep -c '(void)ctx;')" -eq 8 ]
    [ "$(grep -A3 "node from '/features/features.[0-9]*/Concat'" "$T/$mode/model.c" | grep -c 'memcpy')" -eq 0 ]
    matches_ort "$T/$mode" --threads 2
  done
  jq -e '.lower.layout.chosen.NCHWc8 + .lower.layout.chosen.NCHWc16 == .lower.layout.eligible and .lower.layout.eligible >= 37' "$T/global.json"
}

@test "layout: two kernels in a row reading one tensor in one other layout reorder it once (squeezenet1_1's expands of an NCHW squeeze); matches ONNX Runtime" {
  cheap_nchwc squeezenet1_1 "$T/sq.ecg"
  # the squeeze convs (1x1, 16/32/48/64 output channels) measured cheapest in NCHW, the rest
  # in NCHWc16: each fire's two expands read the squeeze's output in NCHWc16
  jq -c 'if (.signature | test("^conv 1 (64|128|256|384|512) [0-9]+ [0-9]+ (16|32|48|64) 1 1 ")) then . + {nchw_ms: 0.001, nchwc8_ms: 50, nchwc16_ms: 50} else . end' \
    "$T/db" > "$T/db_sq"
  "$BIN/ecg-lower" --layout global --layout-db "$T/db_sq" -o "$T/d" "$T/sq.ecg"
  # 8 fires: the first expand reorders the squeeze's output, the second reads that copy
  [ "$(grep -c 'ecg_rt1_nchw_to_nchwc(1, \(16\|32\|48\|64\), ' "$T/d/model.c")" -eq 8 ]
  [ "$(grep -c 'the copy the last kernel left at' "$T/d/model.c")" -eq 8 ]
  matches_ort "$T/d" --threads 2
}

@test "layout: an NCHWc channel Concat reorders its NCHW inputs straight into its slabs (squeezenet1_1's last fire); matches ONNX Runtime" {
  cheap_nchwc squeezenet1_1 "$T/sq.ecg"
  # the last two fires' expands (64x13x13 -> 256, 1x1 and 3x3) measured cheapest in NCHW, and
  # their Concats' outputs (512x13x13) dear to reorder: those Concats take NCHWc
  jq -c 'if (.signature | test("^conv 1 64 13 13 256 ")) then . + {nchw_ms: 0.001, nchwc8_ms: 50, nchwc16_ms: 50}
    elif .signature == "reorder 1 512 169" then . + {to8_ms: 50, from8_ms: 50, to16_ms: 50, from16_ms: 50} else . end' \
    "$T/db" > "$T/db_ex"
  "$BIN/ecg-lower" --layout global --layout-db "$T/db_ex" -o "$T/d" "$T/sq.ecg"
  # its Concat: one reorder per input, into its output at the slab's offset (256 x 169 floats
  # apart), no copy loop
  local body
  body=$(sed -n "/node from '\/features\/features.12\/Concat'/,/^}/p" "$T/d/model.c")
  echo "$body"
  [ "$(grep -c 'ecg_rt1_nchw_to_nchwc(1, 256, 169, \(8\|16\), .* + 0));' <<<"$body")" -eq 1 ]
  [ "$(grep -c 'ecg_rt1_nchw_to_nchwc(1, 256, 169, \(8\|16\), .* + 43264));' <<<"$body")" -eq 1 ]
  [ "$(grep -c 'for (\|memcpy' <<<"$body")" -eq 0 ]
  matches_ort "$T/d" --threads 2
}

@test "layout: efficientnet_b0 in NCHWc16: its squeeze-and-excitation blocks and GlobalAveragePools take the layout; matches ONNX Runtime" {
  cheap_nchwc efficientnet_b0 "$T/e.ecg"
  "$BIN/ecg-lower" --layout nchwc16 --layout-db "$T/db" --report "$T/r.json" -o "$T/d" "$T/e.ecg"
  # 16 MBConv blocks: each SE tail (fc2, Sigmoid, the scale) runs ecg_rt1_se on NCHWc16 x and y
  # (ecg_se_params' last field, blk), each pool as ecg_rt1_nchwc_global_avgpool; the head's
  # pool too, whose [1, 1280, 1, 1] output a Flatten reads as it lies
  [ "$(grep -c '^static const ecg_se_params se[0-9]* = {.*, 1, 0, 16};' "$T/d/model.c")" -eq 16 ]
  [ "$(grep -c 'ecg_rt1_nchwc_global_avgpool(' "$T/d/model.c")" -eq 17 ]
  matches_ort "$T/d" --threads 2
}

@test "layout: mnasnet1_0 in NCHWc16: its head's ReduceMean over the spatial dims runs as the NCHWc global average pool, no reorder before it; matches ONNX Runtime" {
  cheap_nchwc mnasnet1_0 "$T/m.ecg"
  "$BIN/ecg-lower" --layout nchwc16 --layout-db "$T/db" --report "$T/r.json" -o "$T/d" "$T/m.ecg"
  # x.mean([2, 3]) (keepdims 0): its [1, 1280] output has the bytes of the NCHWc16 pool's
  # [1, 80, 1, 1, 16], which the Gemm after it reads as they lie: no reorder into NCHW
  [ "$(grep -A2 "node from '/ReduceMean'" "$T/d/model.c" | grep -c 'ecg_rt1_nchwc_global_avgpool(1, 1280, 49, 16,')" -eq 1 ]
  [ "$(grep -A3 "node from '/ReduceMean'" "$T/d/model.c" | grep -c 'ecg_rt1_nchwc_to_nchw(')" -eq 0 ]
  matches_ort "$T/d" --threads 2
}

@test "layout: scripts/layout_costs.sh measures with this build's runtime: its lines carry ecg-lower's runtime id and ecg-lower takes them" {
  sh "$ROOT/scripts/layout_costs.sh" "$T/m.jsonl" "$T/g.ecg"
  "$BIN/ecg-lower" -o "$T/plain" "$T/g.ecg"
  local id
  id=$(sed -n 's/.*ECG_RT_SOURCE_ID "\(.*\)".*/\1/p' "$T/plain/ecg_rt_id.h")
  [ -n "$id" ]
  jq -e -s --arg id "$id" 'length > 0 and all(.rt == $id)' "$T/m.jsonl"
  "$BIN/ecg-lower" --layout global --layout-db "$T/m.jsonl" --report "$T/r.json" -o "$T/out" "$T/g.ecg"
  jq -e '.lower.layout.measured_convs > 0' "$T/r.json"
  # measured again only for another runtime: nothing to do the second time
  run sh "$ROOT/scripts/layout_costs.sh" "$T/m.jsonl" "$T/g.ecg"
  [[ "$output" == *"0 signatures to measure"* ]]
}

@test "layout: scripts/e2e.sh with ECG_LAYOUT=global (make bench's pipeline) measures the costs at the run's thread count, lowers with them and passes" {
  run --separate-stderr env ECG_LAYOUT=global ECG_LAYOUT_DB="$T/db.jsonl" ECG_LAYOUT_THREADS=2 ECG_OUT="$T/out" \
    sh "$ROOT/scripts/e2e.sh" blazeface_front_128 --runs 1 --warmup 0 --threads 2
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  jq -e '.pass' <<<"${lines[-1]}"
  jq -e -s 'length > 0 and all(.threads == 2)' "$T/db.jsonl"
}
