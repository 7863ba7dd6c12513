#!/usr/bin/env bats
# ecg-prune (PatDNN, Niu dissertation ch. 2): pattern + connectivity pruning of a small
# residual graph (tools/prune/gen_layers.mjs), its ONNX export checked by ONNX Runtime
# against the FKW, CSR and dense kernels of ecg-lower, --detect finding the same
# annotation in the exported weights, the report, the annotation's validation and
# remapping, and the usage errors.

load helpers

setup_file() {
  build_gen mkprune build/libecg.a
  local T="$BATS_FILE_TMPDIR"
  node "$ROOT/tools/prune/gen_layers.mjs" --which small --out "$T" --seed 7
  "$BIN/onnx2ecg" "$T/small.onnx" -o "$T/g.ecg"
  "$BIN/ecg-prune" "$T/g.ecg" -o "$T/p.ecg" --export-onnx "$T/p.onnx" --report "$T/r.json" --drift 1
  node "$ROOT/tools/bench/make_data.mjs" --model "$T/p.onnx" --out "$T/data" --seed 2 2>/dev/null
}

setup() {
  require_tools
  require_file "$BIN/ecg-prune" "$BATS_FILE_TMPDIR/p.ecg" "$BATS_FILE_TMPDIR/data/output_0.pb"
}

@test "ecg-prune: report envelope, 4-entry patterns with the centre, connectivity, compression, index bytes, drift" {
  local R="$BATS_FILE_TMPDIR/r.json"
  cat "$R"
  jq -e '.stage == "ecg-prune" and (.before.nodes | type == "number") and (.after.flops | type == "number")
      and .prune.retrained == false and .prune.patterns == 8 and .prune.connectivity == 3.6
      and (.prune.pattern_set | length == 8)
      and all(.prune.pattern_set[].mask; (gsub("[^x]"; "") | length == 4) and .[5:6] == "x")
      and (.prune.layers | length == 3) and all(.prune.layers[]; .annotated)
      and .prune.layers[0].kept_kernels == .prune.layers[0].kernels
      and .prune.layers[1].kept_kernels == ((.prune.layers[1].kernels / 3.6) | ceil)
      and .prune.layers[1].nonzero == .prune.layers[1].kept_kernels * 4
      and .prune.layers[2].nonzero == .prune.layers[2].kept_kernels
      and .prune.compression > 4 and .prune.compression == (.prune.conv_weights / .prune.conv_nonzero * 10000 | round / 10000)
      and .prune.fkw_index_bytes < .prune.csr_index_bytes
      and (.prune.drift.outputs[0].cosine | . > 0 and . <= 1) and .prune.drift.max_abs > 0' "$R"
}

@test "ecg-prune: FKW, CSR and dense kernels of the pruned graph match ONNX Runtime on the exported ONNX" {
  local T="$BATS_FILE_TMPDIR" k
  for k in fkw csr dense; do
    "$BIN/ecg-fuse" "$T/p.ecg" | "$BIN/ecg-lower" --sparse "$k" -o "$BATS_TEST_TMPDIR/$k"
    run "$BIN/ecg-bench" "$BATS_TEST_TMPDIR/$k" --data "$T/data" --runs 1
    echo "$k: $output"
    [ "$status" -eq 0 ]
    [ "$(jq -r .pass <<<"$output")" = true ]
  done
  # the annotated convs got sparse kernels (with the fused Add+Relu epilogue) or none
  jq -e '.sparse == "fkw" and .sparse_convs == 3' "$BATS_TEST_TMPDIR/fkw/model.json"
  jq -e '.sparse == "csr" and .sparse_convs == 3' "$BATS_TEST_TMPDIR/csr/model.json"
  jq -e '.sparse_convs == 0' "$BATS_TEST_TMPDIR/dense/model.json"
  [ "$(grep -c '^static void fkw' "$BATS_TEST_TMPDIR/fkw/model.c")" -eq 3 ]
  grep -q 'ECG_ACT_FN' "$BATS_TEST_TMPDIR/fkw/model.c"
  # the dense graph is not the pruned one: its outputs differ from the pruned reference
  "$BIN/ecg-lower" -o "$BATS_TEST_TMPDIR/orig" "$T/g.ecg"
  run "$BIN/ecg-bench" "$BATS_TEST_TMPDIR/orig" --data "$T/data" --runs 1
  [ "$status" -eq 1 ]
}

@test "sparse levels (Fig. 2.13 ablation): fkr, lre and fkw with a tuning file match ONNX Runtime; index bytes are what the kernels read" {
  local T="$BATS_FILE_TMPDIR" D="$BATS_TEST_TMPDIR" k
  for k in fkr lre; do
    "$BIN/ecg-fuse" "$T/p.ecg" | "$BIN/ecg-lower" --sparse "$k" -o "$D/$k"
    run "$BIN/ecg-bench" "$D/$k" --data "$T/data" --runs 1
    echo "$k: $output"
    [ "$status" -eq 0 ] && [ "$(jq -r .pass <<<"$output")" = true ] || false
    jq -e --arg k "$k" '.sparse == $k and (.sparse_layers | length == 3) and all(.sparse_layers[]; .level == $k)' "$D/$k/model.json"
  done
  # lre: register tiles, one load per (input row, column shift) shared by the taps that read it
  grep -q 'ecg_spv16' "$D/lre/model.c"
  ! grep -q 'ecg_spv' "$D/fkr/model.c" || false
  # a tuning record for the second conv (this machine's key, from model.json): fkw takes its
  # tile, the others keep the static rule; a record of another cpu is ignored
  jq -c '.sparse_host as $h | .sparse_layers[1] | {cpu: $h.cpu, isa: $h.isa, threads: 1, device: "cpu", kind: "sparse_conv",
         signature, lanes: 8, rows: 2, vecs: 3, ms: 0.5}' "$D/lre/model.json" > "$D/tune.jsonl"
  jq -c '.sparse_host as $h | .sparse_layers[1] | {cpu: "other", isa: $h.isa, threads: 1, device: "cpu", kind: "sparse_conv",
         signature, lanes: 16, rows: 1, vecs: 1, ms: 0.1}' "$D/lre/model.json" >> "$D/tune.jsonl"
  "$BIN/ecg-fuse" "$T/p.ecg" | OMP_NUM_THREADS=1 "$BIN/ecg-lower" --sparse-tune "$D/tune.jsonl" -o "$D/fkw"
  run "$BIN/ecg-bench" "$D/fkw" --data "$T/data" --runs 1
  [ "$status" -eq 0 ] && [ "$(jq -r .pass <<<"$output")" = true ] || false
  jq -e '[.sparse_layers[] | [.tuned, .lanes, .rows]] == [[false, 16, 4], [true, 8, 2], [false, 16, 4]] and .sparse_layers[1].vecs == 2' "$D/fkw/model.json"
  grep -q 'register tiles of 2 rows x 2 vectors of 8 floats (tuned)' "$D/fkw/model.c"
  # a forced tile (the tuner's) at stride 2 and 1x1 too
  "$BIN/ecg-fuse" "$T/p.ecg" | "$BIN/ecg-lower" --sparse lre --sparse-tile 8x3x1 -o "$D/forced"
  run "$BIN/ecg-bench" "$D/forced" --data "$T/data" --runs 1
  [ "$status" -eq 0 ] && [ "$(jq -r .pass <<<"$output")" = true ] || false
  # the report's FKW index bytes are the arrays the generated kernels read, at the widths
  # they read them (every array here fits uint8_t); CSR's are its kernel's int32 arrays
  jq -e --slurpfile r "$T/r.json" '([.sparse_layers[].index_bytes] | add) == $r[0].prune.fkw_index_bytes' "$D/lre/model.json"
  "$BIN/ecg-fuse" "$T/p.ecg" | "$BIN/ecg-lower" --sparse csr -o "$D/csr"
  jq -e --slurpfile r "$T/r.json" '([.sparse_layers[].index_bytes] | add) == $r[0].prune.csr_index_bytes' "$D/csr/model.json"
  grep -q 'const uint8_t \*idx' "$D/lre/model.c"
  jq -e '.prune.fkw_index_saving > 0.8 and .prune.csr_narrow_index_bytes < .prune.csr_index_bytes' "$T/r.json"
  # bad tuning files and tiles: named errors, no output
  echo '{"cpu": "x"}' > "$D/bad.jsonl"
  run "$BIN/ecg-lower" --sparse-tune "$D/bad.jsonl" -o "$D/bad" "$T/p.ecg"
  [ "$status" -eq 1 ] && [[ "$output" == *"bad.jsonl:1: not a measured-cost record"* ]] && [ ! -e "$D/bad" ] || false
  run "$BIN/ecg-lower" --sparse-tune "$D/missing.jsonl" -o "$D/bad" "$T/p.ecg"
  [ "$status" -eq 1 ] && [ ! -e "$D/bad" ] || false
  run "$BIN/ecg-lower" --sparse-tile 12x4x2 -o "$D/bad" "$T/p.ecg"
  [ "$status" -eq 2 ] && [ ! -e "$D/bad" ] || false
}

@test "filter-level LRE (lre-filter, Fig. 2.11 right): odd channels, stride 2, asymmetric pads, dilation, partial tiles of 2-4 filters match ONNX Runtime" {
  local T="$BATS_FILE_TMPDIR" D="$BATS_TEST_TMPDIR" tile
  node "$ROOT/tools/prune/gen_layers.mjs" --which odd --out "$D" --seed 5
  "$BIN/onnx2ecg" "$D/odd.onnx" -o "$D/g.ecg"
  "$BIN/ecg-prune" "$D/g.ecg" -o "$D/p.ecg" --export-onnx "$D/p.onnx" --report "$D/r.json" --prune-first
  node "$ROOT/tools/bench/make_data.mjs" --model "$D/p.onnx" --out "$D/data" --seed 3 2>/dev/null
  # 13, 11 and 5 filters: no tile of 2, 3 or 4 filters divides them all; 8 and 16 lanes,
  # row and column tiles that leave partial ones (outputs 12x10, 13x9, 13x9)
  for tile in default 16x4x2x3 8x3x1x4; do
    if [ "$tile" = default ]; then "$BIN/ecg-fuse" "$D/p.ecg" | "$BIN/ecg-lower" --sparse lre-filter -o "$D/$tile"
    else "$BIN/ecg-fuse" "$D/p.ecg" | "$BIN/ecg-lower" --sparse lre-filter --sparse-tile "$tile" -o "$D/$tile"; fi
    run "$BIN/ecg-bench" "$D/$tile" --data "$D/data" --runs 1
    echo "$tile: $output"
    [ "$status" -eq 0 ] && [ "$(jq -r .pass <<<"$output")" = true ] || false
    # every conv got filter-level tiles; one load per (channel, pattern) of a tile: never
    # more loads than kernels, fewer where the tile's filters share kernels
    jq -e '.sparse == "lre-filter" and (.sparse_layers | length == 3) and all(.sparse_layers[]; .level == "lre-filter" and .kernel_loads <= .kernels)
           and any(.sparse_layers[]; .kernel_loads < .kernels)' "$D/$tile/model.json"
  done
  jq -e '[.sparse_layers[].filters] == [2, 2, 2]' "$D/default/model.json"
  jq -e '[.sparse_layers[].filters] == [3, 3, 3]' "$D/16x4x2x3/model.json"
  grep -q 'register tiles of 4 filters x 3 rows x 1 vectors of 8 floats' "$D/8x3x1x4/model.c"
  grep -q 'filters of the tile: 0, 1' "$D/default/model.c"
  # the reference can fail: the dense graph before pruning does not match the pruned outputs
  "$BIN/ecg-lower" -o "$D/orig" "$D/g.ecg"
  run "$BIN/ecg-bench" "$D/orig" --data "$D/data" --runs 1
  [ "$status" -eq 1 ]
  # a tuning record with filters: fkw takes it (kernel level where filters is 1 or absent)
  jq -c '.sparse_host as $h | .sparse_layers[1] | {cpu: $h.cpu, isa: $h.isa, threads: 1, device: "cpu", kind: "sparse_conv",
         signature, loop: "reg", lanes: 8, rows: 2, vecs: 2, filters: 4, ms: 0.5}' "$D/default/model.json" > "$D/tune.jsonl"
  "$BIN/ecg-fuse" "$D/p.ecg" | OMP_NUM_THREADS=1 "$BIN/ecg-lower" --sparse-tune "$D/tune.jsonl" -o "$D/fkw"
  run "$BIN/ecg-bench" "$D/fkw" --data "$D/data" --runs 1
  [ "$status" -eq 0 ] && [ "$(jq -r .pass <<<"$output")" = true ] || false
  jq -e '[.sparse_layers[] | [.level, .filters, .tuned]] == [["lre", 1, false], ["lre-filter", 4, true], ["lre", 1, false]]' "$D/fkw/model.json"
  # bad filters: named errors, no output
  jq -c '.filters = 5' "$D/tune.jsonl" > "$D/bad.jsonl"
  run "$BIN/ecg-lower" --sparse-tune "$D/bad.jsonl" -o "$D/bad" "$D/p.ecg"
  [ "$status" -eq 1 ] && [[ "$output" == *"bad.jsonl:1: filters"* ]] && [ ! -e "$D/bad" ] || false
  run "$BIN/ecg-lower" --sparse-tile 16x4x2x5 -o "$D/bad" "$D/p.ecg"
  [ "$status" -eq 2 ] && [ ! -e "$D/bad" ] || false
  run "$BIN/ecg-lower" --sparse-tile 16x4x2z -o "$D/bad" "$D/p.ecg"
  [ "$status" -eq 2 ] && [ ! -e "$D/bad" ] || false
}

@test "FKW paging: a 512-channel layer (VGG L8, 1x1 spatial) stores channel mod 256 in one byte, stride per (pattern, page); kernels match ONNX Runtime" {
  local D="$BATS_TEST_TMPDIR" k
  node "$ROOT/tools/prune/gen_layers.mjs" --which vgg --out "$D" --scale 28 --seed 3
  "$BIN/onnx2ecg" "$D/L8.onnx" -o "$D/g.ecg"
  "$BIN/ecg-prune" "$D/g.ecg" -o "$D/p.ecg" --export-onnx "$D/p.onnx" --report "$D/r.json" --prune-first
  node "$ROOT/tools/bench/make_data.mjs" --model "$D/p.onnx" --out "$D/data" --seed 4 2>/dev/null
  for k in fkr lre; do
    "$BIN/ecg-fuse" "$D/p.ecg" | "$BIN/ecg-lower" --sparse "$k" -o "$D/$k"
    run "$BIN/ecg-bench" "$D/$k" --data "$D/data" --runs 1
    echo "$k: $output"
    [ "$status" -eq 0 ] && [ "$(jq -r .pass <<<"$output")" = true ] || false
    grep -q 'for (int pg = 0; pg < 2; pg++)' "$D/$k/model.c"
    grep -q 'const uint8_t \*idx' "$D/$k/model.c"
    jq -e --slurpfile r "$D/r.json" '.sparse_layers[0].index_bytes == $r[0].prune.fkw_index_bytes' "$D/$k/model.json"
  done
  # 72818 kernels at one byte + 512 filters x (8 patterns x 2 pages + 1) strides + offsets (4 B) + reorder (2 B)
  jq -e '.prune.layers[0] | .kept_kernels == 72818 and .fkw_index_bytes == 72818 + 512 * 17 + 513 * 4 + 512 * 2 and .fkw_index_saving > 0.9' "$D/r.json"
  jq -e '.prune.fkw_index_saving_vs_narrow_csr > 0.85' "$D/r.json"
}

@test "ecg-prune --detect: the exported model's patterns and removed kernels, no value changed, same kernels" {
  local T="$BATS_FILE_TMPDIR" D="$BATS_TEST_TMPDIR"
  "$BIN/onnx2ecg" "$T/p.onnx" -o "$D/e.ecg"
  run --separate-stderr "$BIN/ecg-prune" --detect "$D/e.ecg" -o "$D/d.ecg" --report "$D/d.json"
  [ "$status" -eq 0 ]
  jq -e --slurpfile p "$T/r.json" '.prune.mode == "detect" and
      ([.prune.layers[] | [.kept_kernels, .nonzero, .histogram]] == [$p[0].prune.layers[] | [.kept_kernels, .nonzero, .histogram]])' "$D/d.json"
  "$BIN/ecg-fuse" "$D/d.ecg" | "$BIN/ecg-lower" -o "$D/det"
  "$BIN/ecg-fuse" "$T/p.ecg" | "$BIN/ecg-lower" -o "$D/pr"
  cmp "$D/det/model.c" "$D/pr/model.c"
  cmp "$D/det/weights.bin" "$D/pr/weights.bin"
  # detect on the dense graph: nothing is pattern-sparse, nothing annotated, weights unchanged
  "$BIN/ecg-prune" --detect "$T/g.ecg" -o "$D/dd.ecg" --report "$D/dd.json"
  jq -e 'all(.prune.layers[]; .annotated == false and (.note | test("dense")))' "$D/dd.json"
  "$BIN/ecg-lower" -o "$D/dd" "$D/dd.ecg"
  "$BIN/ecg-lower" -o "$D/gg" "$T/g.ecg"
  cmp "$D/dd/weights.bin" "$D/gg/weights.bin"
}

@test "pattern annotation: validated (node, FKW arrays, weights), remapped with the nodes" {
  local T="$BATS_FILE_TMPDIR" D="$BATS_TEST_TMPDIR" m
  for m in weight index node; do
    "$BATS_FILE_TMPDIR/mkprune" "$m" "$T/p.ecg" "$D/$m.ecg"
    run "$BIN/ecg-lower" -o "$D/out_$m" "$D/$m.ecg"
    echo "$m: $output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"node '"* ]]
    [ ! -e "$D/out_$m" ]
  done
  "$BATS_FILE_TMPDIR/mkprune" remap "$T/p.ecg" "$D/remap.ecg"
  # ecg-rewrite cannot keep the FKW copies valid across its passes: it drops them and says so
  run --separate-stderr "$BIN/ecg-rewrite" "$T/p.ecg" -o "$D/rw.ecg"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"pattern annotation(s) dropped"* ]]
  run --separate-stderr "$BIN/ecg-prune" "$T/p.ecg" -o "$D/again.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"already carries"* ]]
}

@test "ecg-prune: usage errors, export needs the unchanged source, no partial output" {
  local T="$BATS_FILE_TMPDIR" D="$BATS_TEST_TMPDIR"
  run "$BIN/ecg-prune" --connectivity 0.5 "$T/g.ecg" -o "$D/x.ecg"
  [ "$status" -eq 2 ]
  run "$BIN/ecg-prune" --patterns 57 "$T/g.ecg" -o "$D/x.ecg"
  [ "$status" -eq 2 ]
  run "$BIN/ecg-prune" --drift 1 "$T/g.ecg" -o "$D/x.ecg"
  [ "$status" -eq 2 ]
  [ ! -e "$D/x.ecg" ]
  # a source model whose weights are not the ECG's (same names, another seed): export refuses
  node "$ROOT/tools/prune/gen_layers.mjs" --which small --out "$D/other" --seed 8
  run "$BIN/ecg-prune" "$T/g.ecg" -o "$D/x.ecg" --export-onnx "$D/x.onnx" --onnx "$D/other/small.onnx"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"node '"*"in the ECG but"* ]]
  [ ! -e "$D/x.onnx" ] && [ ! -e "$D/x.ecg" ] || false
  run "$SAN/ecg-prune" "$T/g.ecg" -o "$D/san.ecg" --report "$D/san.json"
  no_sanitizer_report "$output"
  [ "$status" -eq 0 ]
}

@test "fuzz: ecg-prune --detect and ecg-lower on 100 mutants of a pruned ECG (sanitizers)" {
  local T="$BATS_FILE_TMPDIR" D="$BATS_TEST_TMPDIR" f st err bad=0
  require_file "$SAN/ecg-prune" "$SAN/ecg-lower"
  build_gen mutate
  mkdir -p "$D/mut"
  "$T/mutate" "$T/p.ecg" "$D/mut" m 20261124 100
  for f in "$D"/mut/m-*; do
    for cmd in "$SAN/ecg-prune --detect $f -o $D/o.ecg" "$SAN/ecg-lower -o $D/low $f"; do
      st=0; err=$($cmd 2>&1 >/dev/null) || st=$?
      if printf '%s' "$err" | grep -Eq 'Sanitizer|runtime error|SUMMARY: ' || { [ "$st" -ne 0 ] && [ "$st" -ne 1 ]; }; then
        echo "$cmd: exit $st: $err" | head -3; bad=$((bad + 1))
      fi
      rm -rf "$D/low" "$D/o.ecg"
    done
  done
  [ "$bad" -eq 0 ]
}
