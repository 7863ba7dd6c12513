#!/usr/bin/env bats
# ecg-fuse (DNNFusion plans) and block lowering: every plan keeps every model correct
# against ONNX Runtime; blocks cut kernels; IR_removable intermediates never get memory.

load helpers

setup() {
  require_tools
  require_file "$BIN/ecg-fuse"
  export ECG_OUT="$ROOT/build/bats-out"
}

# fused NAME PLAN [EXTRA]: scripts/e2e.sh with ecg-fuse --plan PLAN [EXTRA] before the lowering.
fused() {
  local name=$1 plan=$2 extra=${3:-}
  ECG_STAGES="ecg-fuse --plan $plan $extra" run --separate-stderr sh "$ROOT/scripts/e2e.sh" "$name" --runs 1
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
  [ "$(jq -r '.mismatches' <<<"${lines[-1]}")" = "0" ]
  # the lowering formed the plan's blocks: fewer kernels than nodes
  local nodes kernels
  nodes=$(jq -r '.nodes' "$ECG_OUT/$name/model.json"); kernels=$(jq -r '.kernels' "$ECG_OUT/$name/model.json")
  echo "nodes $nodes kernels $kernels"
  if [ "$plan" = none ]; then [ "$kernels" -le "$nodes" ]; else [ "$kernels" -lt "$nodes" ]; fi
  # no IR_removable tensor has a place in the memory plan
  local removable planned
  removable=$("$BIN/ecg-dump" --json "$ECG_OUT/$name.ecg" | jq -r '[.tensors[] | select(.ir_removable) | .name] | sort | .[]')
  planned=$(jq -r '[.memory_plan[].tensor] | sort | .[]' "$ECG_OUT/$name/model.json")
  [ -z "$(comm -12 <(printf '%s\n' "$removable") <(printf '%s\n' "$planned") | grep .)" ]
  [ "$plan" = none ] || [ -n "$removable" ]
}

@test "ecg-fuse dnnfusion: mobilenet_v2" { fused mobilenet_v2 dnnfusion; }
@test "ecg-fuse fixed: mobilenet_v2" { fused mobilenet_v2 fixed; }
@test "ecg-fuse none: mobilenet_v2" { fused mobilenet_v2 none; }
@test "ecg-fuse --intensive (AGO): mobilenet_v2 as inverted-residual kernels, correct, fewer kernels" {
  fused mobilenet_v2 dnnfusion --intensive
  local k
  k=$(jq -r .kernels "$ECG_OUT/mobilenet_v2/model.json")
  grep -q 'ecg_rt1_ibr(' "$ECG_OUT/mobilenet_v2/model.c"
  [ "$k" -le 30 ] # 17 chains: 100 nodes in 21 kernels (54 without --intensive)
}
@test "ecg-fuse --intensive: only expanding chains (mobilenet_v2's first, non-expanding block joins its stem conv; blazeface_front_128's depthwise-pointwise pairs stay apart)" {
  local e="$ECG_OUT/intensive-expanding"
  mkdir -p "$e"
  "$BIN/onnx2ecg" "$ROOT/../shared/models/mobilenet_v2.onnx" --input-shape input=1x3x224x224 -o "$e/mv2.ecg"
  run --separate-stderr "$BIN/ecg-fuse" --intensive -v "$e/mv2.ecg" -o "$e/mv2i.ecg"
  echo "$stderr"
  [ "$status" -eq 0 ]
  # 17 inverted residuals: 16 expanding, and the first (depthwise -> pointwise, no expansion)
  # with the 3x3 stride-2 stem conv before it, 3 -> 32 channels, as its first stage
  [[ "$stderr" == *" 17 intensive chains"* ]]
  "$BIN/ecg-dump" --json "$e/mv2i.ecg" | jq -e '.blocks[0].nodes == [0, 1, 2, 3, 4] and ([.nodes[0:5][] | .op] == ["Conv", "Clip", "Conv", "Clip", "Conv"])'
  "$BIN/ecg-lower" -o "$e/mv2l" "$e/mv2i.ecg"
  grep -q 'ecg_ibr_params ibr[0-9]* = {1, 3, 112, 112, 32, .* 3, 3, 2, 2, 1, 1, 224, 224, 0};' "$e/mv2l/model.c"
  require_file "$ROOT/models/face_detection_front_128x128_barracuda.onnx"
  "$BIN/onnx2ecg" "$ROOT/models/face_detection_front_128x128_barracuda.onnx" -o "$e/bf.ecg"
  run --separate-stderr "$BIN/ecg-fuse" --intensive -v "$e/bf.ecg" -o "$e/bfi.ecg"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *" 0 intensive chains"* ]]
}
@test "ecg-fuse --intensive (AGO): mnasnet1_0" {
  fused mnasnet1_0 dnnfusion --intensive
  grep -q 'ecg_rt1_ibr(' "$ECG_OUT/mnasnet1_0/model.c"
}
@test "ecg-fuse dnnfusion: efficientnet_b0, each squeeze-excitation's scale Mul in fc2's block (Table 3.3 Many-to-Many -> One-to-Many, depend)" {
  fused efficientnet_b0 dnnfusion
  # the 16 blocks {fc2, Sigmoid, scale Mul}: one ecg_rt1_se kernel each (the tail, no pool),
  # scaling in place (the pool kernel, the scaled tensor's other reader, runs before)
  [ "$(grep -c 'ecg_rt1_se(' "$ECG_OUT/efficientnet_b0/model.c")" -eq 16 ]
  grep 'ecg_rt1_se(' "$ECG_OUT/efficientnet_b0/model.c" | awk -F', ' '$2 != $(NF - 1) { bad = 1; print } END { exit bad }'
  local T="$BATS_TEST_TMPDIR"
  "$BIN/ecg-fuse" --report "$T/r.json" "$ECG_OUT/efficientnet_b0.ecg" -o "$T/f.ecg"
  cat "$T/r.json"
  jq -e '.fuse.depend == 16 and .fuse.se_chains == 0 and .after.kernels == 100' "$T/r.json"
  # OpenCL has no such kernel: each of those blocks is lowered as [fc2 + Sigmoid], [Mul]
  "$BIN/ecg-lower" --target opencl -o "$T/cl" "$T/f.ecg"
  [ "$(jq .kernels "$T/cl/model.json")" -eq $(($(jq .kernels "$ECG_OUT/efficientnet_b0/model.json") + 16)) ]
}
@test "ecg-fuse --intensive (AGO): efficientnet_b0's squeeze-excitation chains one kernel each, each expansion with its depthwise conv one kernel, correct, fusion rate >= 3" {
  fused efficientnet_b0 dnnfusion --intensive
  # 16 MBConvs, each GlobalAveragePool -> 1x1 conv, SiLU -> 1x1 conv, Sigmoid -> scale Mul
  [ "$(grep -c 'ecg_rt1_se(' "$ECG_OUT/efficientnet_b0/model.c")" -eq 16 ]
  # and each expansion (the stem conv before the first) [1x1 conv, SiLU -> depthwise conv,
  # SiLU] one kernel without a second pointwise conv (cout 0): the squeeze-excitation reads
  # the depthwise output
  [ "$(grep -c 'ecg_rt1_ibr(' "$ECG_OUT/efficientnet_b0/model.c")" -eq 16 ]
  [ "$(grep 'static const ecg_ibr_params' "$ECG_OUT/efficientnet_b0/model.c" | grep -c '{ECG_ACT_SILU, [^}]*}, {ECG_ACT_SILU, ')" -eq 16 ]
  grep 'static const ecg_ibr_params' "$ECG_OUT/efficientnet_b0/model.c" | awk -F', ' '$14 != 0 { bad = 1; print } END { exit bad }'
  grep 'ecg_rt1_ibr(' "$ECG_OUT/efficientnet_b0/model.c" | awk -F', ' '$7 != "NULL" || $8 != "NULL" { bad = 1; print } END { exit bad }'
  jq -e '.nodes / .kernels >= 3.0' "$ECG_OUT/efficientnet_b0/model.json"
  # each scales in place: the scaled tensor (argument 2) is stored in the output (the last but one)
  grep 'ecg_rt1_se(' "$ECG_OUT/efficientnet_b0/model.c" | awk -F', ' '$2 != $(NF - 1) { bad = 1; print } END { exit bad }'
  # the plan: 16 chains, each of three kernels (pool; fc1 + SiLU; fc2 + Sigmoid + scale) made one
  local T="$BATS_TEST_TMPDIR"
  "$BIN/onnx2ecg" "$SHARED_MODELS/efficientnet_b0.onnx" --input-shape input=1x3x224x224 -o "$T/e.ecg"
  "$BIN/ecg-fuse" --intensive --report "$T/ri.json" "$T/e.ecg" -o "$T/i.ecg"
  "$BIN/ecg-fuse" --report "$T/rn.json" "$T/e.ecg" -o "$T/n.ecg"
  cat "$T/ri.json" "$T/rn.json"
  jq -e '.fuse.se_chains == 16 and .fuse.intensive_chains == 32 and .fuse.fusion_rate >= 3.0' "$T/ri.json"
  jq -e '.fuse.se_chains == 0 and .fuse.intensive_chains == 0' "$T/rn.json"
  # the squeeze-excitations' three kernels made one, the expansions' two
  [ "$(jq .after.kernels "$T/rn.json")" -eq $(($(jq .after.kernels "$T/ri.json") + 16 * 2 + 16)) ]
  "$BIN/ecg-dump" "$T/i.ecg" >/dev/null # validates: blocks acyclic, every node in at most one block
}
@test "schedule intensive_fusion off lowers a squeeze-excitation block as its three stages, an expansion without a second pointwise conv as its two; every one off is the plan without --intensive" {
  local T="$BATS_TEST_TMPDIR" ids b res
  "$BIN/onnx2ecg" "$SHARED_MODELS/efficientnet_b0.onnx" --input-shape input=1x3x224x224 -o "$T/e.ecg"
  "$BIN/ecg-fuse" --intensive "$T/e.ecg" -o "$T/i.ecg"
  "$BIN/ecg-fuse" "$T/e.ecg" -o "$T/n.ecg"
  ids=$("$BIN/ecg-dump" --json "$T/i.ecg" | jq -r '.nodes as $n | [.blocks[] | select($n[.nodes[0]].op == "GlobalAveragePool") | .id] | map(tostring) | join(" ")')
  echo "squeeze-excitation blocks: $ids"
  [ "$(wc -w <<<"$ids")" -eq 16 ]
  "$BIN/ecg-lower" -o "$T/l0" "$T/i.ecg"
  "$BIN/ecg-lower" -o "$T/ln" "$T/n.ecg"
  b=$(cut -d' ' -f2 <<<"$ids")
  "$BIN/ecg-partition" "$T/i.ecg" --set-schedule "$b:i=off" -o "$T/one.ecg"
  "$BIN/ecg-lower" -o "$T/one" "$T/one.ecg"
  [ "$(jq .kernels "$T/one/model.json")" -eq $(($(jq .kernels "$T/l0/model.json") + 2)) ]
  [ "$(grep -c 'ecg_rt1_se(' "$T/one/model.c")" -eq 16 ] # 15 chains, 1 tail
  res=$("$BIN/ecg-bench" "$T/one" --random 1 --ort --check --runs 1 --warmup 0); echo "$res"
  jq -e '.pass == true' <<<"$res"
  # the expansion blocks (two convolutions): one off is its two stages
  local xids
  xids=$("$BIN/ecg-dump" --json "$T/i.ecg" | jq -r '.nodes as $n | [.blocks[] | select($n[.nodes[0]].op == "Conv" and ([.nodes[] | select($n[.].op == "Conv")] | length) == 2) | .id] | map(tostring) | join(" ")')
  echo "expansion blocks: $xids"
  [ "$(wc -w <<<"$xids")" -eq 16 ]
  b=$(cut -d' ' -f3 <<<"$xids")
  "$BIN/ecg-partition" "$T/i.ecg" --set-schedule "$b:i=off" -o "$T/onex.ecg"
  "$BIN/ecg-lower" -o "$T/onex" "$T/onex.ecg"
  [ "$(jq .kernels "$T/onex/model.json")" -eq $(($(jq .kernels "$T/l0/model.json") + 1)) ]
  [ "$(grep -c 'ecg_rt1_ibr(' "$T/onex/model.c")" -eq 15 ]
  res=$("$BIN/ecg-bench" "$T/onex" --random 1 --ort --check --runs 1 --warmup 0); echo "$res"
  jq -e '.pass == true' <<<"$res"
  local s1=() s2=() # at most 16 --set-schedule a run
  for b in $ids; do s1+=(--set-schedule "$b:i=off"); done
  for b in $xids; do s2+=(--set-schedule "$b:i=off"); done
  "$BIN/ecg-partition" "$T/i.ecg" "${s1[@]}" | "$BIN/ecg-partition" "${s2[@]}" -o "$T/off.ecg"
  "$BIN/ecg-lower" -o "$T/off" "$T/off.ecg"
  cmp "$T/ln/model.c" "$T/off/model.c"
}
@test "ecg-fuse --intensive: Conv + Relu -> MaxPool one kernel (squeezenet1_1's 3x3 and resnet18's 7x7 RGB first layers), correct; intensive_fusion off is the plan without --intensive" {
  fused squeezenet1_1 dnnfusion --intensive
  [ "$(grep -c 'ecg_rt1_conv2d_maxpool(' "$ECG_OUT/squeezenet1_1/model.c")" -eq 1 ]
  fused resnet18 dnnfusion --intensive
  [ "$(grep -c 'ecg_rt1_conv2d_maxpool(' "$ECG_OUT/resnet18/model.c")" -eq 1 ]
  local T="$BATS_TEST_TMPDIR" b res
  "$BIN/onnx2ecg" "$SHARED_MODELS/squeezenet1_1.onnx" --input-shape input=1x3x224x224 -o "$T/s.ecg"
  "$BIN/ecg-fuse" --intensive --report "$T/ri.json" "$T/s.ecg" -o "$T/i.ecg"
  "$BIN/ecg-fuse" --report "$T/rn.json" "$T/s.ecg" -o "$T/n.ecg"
  cat "$T/ri.json" "$T/rn.json"
  # the first conv, its Relu and the max pool: two kernels made one; the later pools read Concats
  jq -e '.fuse.conv_pool_chains == 1 and .fuse.intensive_chains == 1' "$T/ri.json"
  jq -e '.fuse.conv_pool_chains == 0' "$T/rn.json"
  [ "$(jq .after.kernels "$T/rn.json")" -eq $(($(jq .after.kernels "$T/ri.json") + 1)) ]
  "$BIN/ecg-dump" "$T/i.ecg" >/dev/null # validates
  # intensive_fusion off on that block: the conv + Relu kernel and the pool kernel, the same C
  # as the plan without --intensive
  b=$("$BIN/ecg-dump" --json "$T/i.ecg" | jq -r '.nodes as $n | [.blocks[] | select(any(.nodes[]; $n[.].op == "MaxPool")) | .id][0]')
  "$BIN/ecg-partition" "$T/i.ecg" --set-schedule "$b:i=off" -o "$T/off.ecg"
  "$BIN/ecg-lower" -o "$T/off" "$T/off.ecg"
  "$BIN/ecg-lower" -o "$T/ln" "$T/n.ecg"
  cmp "$T/ln/model.c" "$T/off/model.c"
  # --target opencl has no fused kernel: it lowers the block as its stages, the same OpenCL
  # program as the plan without --intensive; a schedule forcing the fused kernel (on) is
  # refused there, naming the node
  "$BIN/ecg-lower" --target opencl -o "$T/cl" "$T/i.ecg"
  "$BIN/ecg-lower" --target opencl -o "$T/cln" "$T/n.ecg"
  cmp "$T/cl/model.c" "$T/cln/model.c"
  cmp "$T/cl/model.cl" "$T/cln/model.cl"
  [ "$(jq .kernels "$T/cl/model.json")" -eq "$(jq .kernels "$T/cln/model.json")" ]
  "$BIN/ecg-partition" "$T/i.ecg" --set-schedule "$b:i=on" -o "$T/on.ecg"
  run --separate-stderr "$BIN/ecg-lower" --target opencl -o "$T/clon" "$T/on.ecg"
  echo "$stderr"
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"intensive-fusion kernels"* ]]
  [ ! -e "$T/clon" ]
}
@test "ecg-fuse dnnfusion: bert_tiny" { fused bert_tiny dnnfusion; }
@test "ecg-fuse fixed: bert_tiny" { fused bert_tiny fixed; }
@test "ecg-fuse dnnfusion: resnet18" { fused resnet18 dnnfusion; }
@test "ecg-fuse dnnfusion: shufflenet_v2_x1_0" { fused shufflenet_v2_x1_0 dnnfusion; }
@test "ecg-fuse dnnfusion: blazeface_front_128" { fused blazeface_front_128 dnnfusion; }
@test "ecg-fuse dnnfusion: ppocr_mobile_v2_cls" { fused ppocr_mobile_v2_cls dnnfusion; }
@test "ecg-fuse dnnfusion: openwakeword_embedding" { fused openwakeword_embedding dnnfusion; }
@test "ecg-fuse dnnfusion: mnasnet1_0" { fused mnasnet1_0 dnnfusion; }
@test "ecg-fuse dnnfusion: squeezenet1_1" { fused squeezenet1_1 dnnfusion; }

# Row-reduction blocks (tools/fuse/rows.c, tools/lower/rowblock.c) on a graph built for them
# (tests/bats/mkrewrite.c rows): LayerNorm, Softmax, RMSNorm, a rank-4 block over two
# axes, ReduceMin/L2/LogSumExp/L1; the fused lowering agrees with the unfused one (every
# node its own kernel, checked against ONNX Runtime by the conformance suites).
@test "ecg-fuse dnnfusion: row-reduction blocks (LayerNorm, Softmax, RMSNorm, ...) are one kernel each, outputs unchanged" {
  local T="$BATS_TEST_TMPDIR"
  build_gen mkrewrite build/libecg.a
  "$BATS_FILE_TMPDIR/mkrewrite" rows "$T/g.ecg"
  "$BIN/ecg-fuse" --report "$T/r.json" "$T/g.ecg" -o "$T/f.ecg"
  cat "$T/r.json"
  jq -e '.fuse.row_blocks == 5' "$T/r.json"
  "$BIN/ecg-lower" -o "$T/none" "$T/g.ecg"
  "$BIN/ecg-lower" -o "$T/fused" "$T/f.ecg"
  [ "$(jq -r .kernels "$T/fused/model.json")" -eq 5 ]
  [ "$(jq -r .kernels "$T/none/model.json")" -eq 38 ]
  # only the block outputs (graph outputs here) have memory
  [ -z "$(jq -r '.memory_plan[].tensor' "$T/fused/model.json")" ]
  "$BIN/ecg-bench" "$T/none" --random 1 --save "$T/data" --runs 1 >/dev/null 2>&1
  run "$BIN/ecg-bench" "$T/fused" --data "$T/data" --runs 1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"$output")" = "true" ]
  # bert_tiny: every LayerNorm (ReduceMean ... Add) is one row block
  require_file "$SHARED_MODELS/bert_tiny.onnx"
  "$BIN/onnx2ecg" "$SHARED_MODELS/bert_tiny.onnx" --input-shape input_ids=1x128 --input-shape attention_mask=1x128 |
    "$BIN/ecg-fuse" --report "$T/b.json" >/dev/null
  jq -e '.fuse.row_blocks == 5 and .fuse.index_maps == 8' "$T/b.json"
}

# Index maps (tools/fuse/maps.c; DNNFusion Fig. 3.5): Transposes read only by a MatMul, or
# writing its result, become the GEMM's strides (tests/bats/mkrewrite.c maps); one with no
# contiguous matrix dim stays a kernel. Outputs equal the unfused lowering's.
@test "ecg-fuse dnnfusion: Transposes around MatMul become index maps (no kernel), outputs unchanged" {
  local T="$BATS_TEST_TMPDIR"
  build_gen mkrewrite build/libecg.a
  "$BATS_FILE_TMPDIR/mkrewrite" maps "$T/g.ecg"
  "$BIN/ecg-fuse" --report "$T/r.json" "$T/g.ecg" -o "$T/f.ecg"
  cat "$T/r.json"
  jq -e '.fuse.index_maps == 5' "$T/r.json"
  "$BIN/ecg-lower" -o "$T/none" "$T/g.ecg"
  "$BIN/ecg-lower" -o "$T/fused" "$T/f.ecg"
  # 4 MatMuls + the one Transpose the GEMM cannot take; unfused: 10 nodes
  [ "$(jq -r .kernels "$T/fused/model.json")" -eq 5 ]
  [ "$(jq -r .kernels "$T/none/model.json")" -eq 10 ]
  grep -q 'ecg_rt1_sgemm(1, 0, 3, 2, 4' "$T/fused/model.c"   # A read transposed through its map
  "$BIN/ecg-bench" "$T/none" --random 1 --save "$T/data" --runs 1 >/dev/null 2>&1
  run "$BIN/ecg-bench" "$T/fused" --data "$T/data" --runs 1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"$output")" = "true" ]
}

@test "ecg-fuse: unknown plan is a usage error naming the known ones" {
  run --separate-stderr "$BIN/ecg-fuse" --plan tvm /dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"unknown plan 'tvm'"*"dnnfusion"* ]]
}

@test "ecg-fuse: report has the fusion rate and blocks; the ECG validates with its blocks" {
  local T="$BATS_TEST_TMPDIR"
  require_file "$SHARED_MODELS/mobilenet_v2.onnx"
  "$BIN/onnx2ecg" "$SHARED_MODELS/mobilenet_v2.onnx" --input-shape input=1x3x224x224 -o "$T/m.ecg"
  "$BIN/ecg-fuse" --report "$T/r.json" "$T/m.ecg" -o "$T/f.ecg"
  jq -e '.stage == "ecg-fuse" and .fuse.blocks > 0 and .fuse.fusion_rate > 1.5 and .after.kernels < .before.kernels' "$T/r.json"
  jq -e '.after.intermediate_bytes < .before.intermediate_bytes and .after.peak_bytes < .before.peak_bytes' "$T/r.json"
  jq -e '.fuse.layers_after.compute_intensive + .fuse.layers_after.memory_intensive == .after.kernels
      and ([.fuse.blocks_by_type[]] | add) == .fuse.blocks' "$T/r.json"
  # Table 3.3's bound: at most one Many-to-Many node per block, so no fewer kernels than those
  # nodes without --intensive (mobilenet_v2: 52 convolutions, the pool, the classifier)
  jq -e '.fuse.compute_intensive_layers == 54 and .fuse.layers_after.compute_intensive == 54
      and ((.fuse.fusion_rate_bound - .before.nodes / 54) | fabs) < 0.001 and .fuse.fusion_rate <= .fuse.fusion_rate_bound' "$T/r.json"
  "$BIN/ecg-fuse" --intensive --report "$T/ri.json" "$T/m.ecg" -o "$T/fi.ecg"
  jq -e '.fuse.fusion_rate > .fuse.fusion_rate_bound' "$T/ri.json"
  run --separate-stderr "$BIN/ecg-fuse" -v "$T/m.ecg" -o "$T/f2.ecg"
  [ "$status" -eq 0 ]
  echo "$stderr"
  [[ "$stderr" == *"fusion rate 1.82 (Table 3.3 bound 1.85)"*"compute-intensive"*"memory-intensive"*"peak live bytes"* ]]
  "$BIN/ecg-dump" --summary "$T/f.ecg" >/dev/null
}

# A two-node candidate pair of bert_tiny's plan: MatMul/Gemm or elementwise, 'depend' in Table 3.3.
candidates() {
  local T=$1
  require_file "$SHARED_MODELS/bert_tiny.onnx"
  "$BIN/onnx2ecg" "$SHARED_MODELS/bert_tiny.onnx" --input-shape input_ids=1x128 --input-shape attention_mask=1x128 -o "$T/b.ecg"
  "$BIN/ecg-fuse" --emit-candidates "$T/c" --report "$T/r0.json" "$T/b.ecg" -o "$T/f0.ecg"
}

@test "ecg-fuse --profile-db decides Table 3.3 'depend' pairs from measured latencies" {
  local T="$BATS_TEST_TMPDIR"
  candidates "$T"
  local nd sig key
  nd=$(jq -r '.fuse.depend' "$T/r0.json")
  [ "$nd" -gt 0 ]
  [ "$(ls "$T"/c/*.sig | wc -l)" -eq "$nd" ]
  # a record saying fusing the first pair is slower: that pair is not fused any more
  key=$("$BIN/ecg-fuse" --host-key)
  sig=$(cat "$T/c/000.sig")
  jq -cn --argjson k "$key" --arg s "$sig" '$k + {kind: "fusion_pair", signature: $s, fused_ms: 2.0, unfused_ms: 1.0, runs: 1}' > "$T/db"
  "$BIN/ecg-fuse" --profile-db "$T/db" --report "$T/r1.json" "$T/b.ecg" -o "$T/f1.ecg"
  jq -e '.fuse.depend_profiled >= 1 and .fuse.depend_rejected >= 1' "$T/r1.json"
  jq -e --slurpfile a "$T/r0.json" '.after.kernels > $a[0].after.kernels' "$T/r1.json"
  # the same record saying it is faster: the plan is the static rule's
  jq -cn --argjson k "$key" --arg s "$sig" '$k + {kind: "fusion_pair", signature: $s, fused_ms: 1.0, unfused_ms: 2.0, runs: 1}' > "$T/db2"
  "$BIN/ecg-fuse" --profile-db "$T/db2" --report "$T/r2.json" "$T/b.ecg" -o "$T/f2.ecg"
  jq -e --slurpfile a "$T/r0.json" '.fuse.depend_rejected == 0 and .after.kernels == $a[0].after.kernels' "$T/r2.json"
  # records of another machine are ignored; --no-profile ignores the database
  jq -c '.cpu = "another CPU"' "$T/db" > "$T/db3"
  "$BIN/ecg-fuse" --profile-db "$T/db3" --report "$T/r3.json" "$T/b.ecg" -o "$T/f3.ecg"
  jq -e '.fuse.depend_profiled == 0' "$T/r3.json"
  "$BIN/ecg-fuse" --profile-db "$T/db" --no-profile --report "$T/r4.json" "$T/b.ecg" -o "$T/f4.ecg"
  jq -e '.fuse.depend_profiled == 0' "$T/r4.json"
}

@test "ecg-fuse --profile-db: a malformed record is exit 1 naming the line" {
  local T="$BATS_TEST_TMPDIR"
  printf '{"cpu": "x"}\n' > "$T/db"
  require_file "$SHARED_MODELS/squeezenet1_1.onnx"
  "$BIN/onnx2ecg" "$SHARED_MODELS/squeezenet1_1.onnx" --input-shape input=1x3x224x224 -o "$T/s.ecg"
  run --separate-stderr "$BIN/ecg-fuse" --profile-db "$T/db" "$T/s.ecg" -o "$T/o.ecg"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"db:1: not a profile record"* ]]
  [ ! -e "$T/o.ecg" ]
}

@test "scripts/profile_fusion.sh measures a candidate pair into the database" {
  local T="$BATS_TEST_TMPDIR"
  candidates "$T"
  run --separate-stderr sh "$ROOT/scripts/profile_fusion.sh" "$T/c/000.unfused.ecg" "$T/db" 3
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  [ "$(wc -l < "$T/db")" -eq 1 ]
  jq -e '.kind == "fusion_pair" and .fused_ms > 0 and .unfused_ms > 0 and (.signature | length) > 0' "$T/db"
}
