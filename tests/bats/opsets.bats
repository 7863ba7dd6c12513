#!/usr/bin/env bats
# ONNX opsets 18-23 (issue 17): per-operator versioning, the generated opset tests
# (tools/bench/gen_opset_tests.mjs: small models with ONNX Runtime's outputs; a sample here,
# all of them in `make conformance`), refusals, and real models re-declared at opsets 18 and
# 22 (tools/bench/redeclare_opset.mjs through scripts/e2e.sh with ECG_OPSET).

load helpers

setup() {
  require_tools
  require_file "$ROOT/tools/bench/node_modules/onnxruntime-node"
  export ECG_OUT="$ROOT/build/bats-out"
}

# One case per signature change of opsets 18-23 and per operator added in them, with its edge cases.
SAMPLE='^(reduce_(max|l1|logsum|sumsquare)_(axes_neg_keep|no_axes_scalar|no_axes_noop|runtime_axes)|reduce_max_bool_opset20|reduce_min_int32_negative|split_num_outputs_(uneven|last_one)|pad_(axes_negative|wrap|wrap_axes)|scatter_(elements|nd)_max|averagepool_dilations_pads_strides|cast_saturate_float_to_int32|castlike_opset19|shape_ops_opset23|conv_relu_pool_opset22|groupnorm_per_group_opset18|groupnorm_per_channel_opset21|dft_axis_input_opset20|gridsample_cubic_opset20|resize_keep_aspect_not_larger|resize_half_pixel_symmetric|rmsnorm_axis_negative_broadcast_scale|gelu_tanh_wide_range|gelu_fused_matmul_add|mish_wide_range|bitwise_not_uint8|bitwise_xor_int64_broadcast|lppool_p3_ceil_dilations_strides|center_crop_pad_mixed_axes_negative|col2im_strides_pads_dilations|rotary_3d_position_ids_interleaved_partial|attention_past_causal_gqa|attention_3d_mask_past|attention_bool_mask_broadcast|deform_conv_pads_strides_bias_mask)$'

@test "generated opset 18-23 tests (sample): every one passes against ONNX Runtime" {
  gen="$BATS_TEST_TMPDIR/gen"
  run node "$ROOT/tools/bench/gen_opset_tests.mjs" --out "$gen" --only "$SAMPLE"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(ls "$gen/opset" | wc -l)" -ge 20 ]
  json="$BATS_TEST_TMPDIR/opset.json"
  run sh "$ROOT/tools/bench/conformance.sh" --data-root "$gen" --suite opset --json "$json" -q
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq '.suites.opset.pass' "$json")" -eq "$(jq '.suites.opset.total' "$json")" ]
}

@test "opset 18-24 models with an operator or version ecg lacks: refused naming it (exit 1)" {
  gen="$BATS_TEST_TMPDIR/gen"
  node "$ROOT/tools/bench/gen_opset_tests.mjs" --out "$gen" --only '^refuse_'
  n=0
  for d in "$gen"/opset-refused/*/; do
    run --separate-stderr "$BIN/onnx2ecg" "$d/model.onnx" -o "$BATS_TEST_TMPDIR/g.ecg"
    echo "$d: exit $status: $stderr"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"$(cat "$d/expect")"* ]]
    [[ "$stderr" == *"node '"* ]]
    [[ "$stderr" != *"opset 18 is not supported"* ]]
    n=$((n + 1))
  done
  [ "$n" -ge 5 ]
}

@test "onnx2ecg: an opset-18 ReduceMax with axes as an input converts; opset 17's form is ReduceMax-13" {
  run "$BIN/onnx2ecg" --list-ops
  [[ "$output" == *"ReduceMean 1,11,13,18"* ]]
  [[ "$output" == *"Split 2,11,13,18"* ]]
}

# e2e_at NAME OPSET: scripts/e2e.sh on the model re-declared at OPSET; exit 0, pass true.
e2e_at() {
  run --separate-stderr env ECG_OPSET="$2" sh "$ROOT/scripts/e2e.sh" "$1" --runs 1
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
}

@test "e2e mnasnet1_0 at opset 18 (ReduceMean axes input)" { e2e_at mnasnet1_0 18; }
@test "e2e mnasnet1_0 at opset 22" { e2e_at mnasnet1_0 22; }
@test "e2e bert_tiny at opset 18" { e2e_at bert_tiny 18; }
@test "e2e bert_tiny at opset 22" { e2e_at bert_tiny 22; }
@test "e2e shufflenet_v2_x1_0 at opset 18" { e2e_at shufflenet_v2_x1_0 18; }
@test "e2e shufflenet_v2_x1_0 at opset 22" { e2e_at shufflenet_v2_x1_0 22; }
@test "e2e blazeface_front_128 at opset 18" { e2e_at blazeface_front_128 18; }
@test "e2e blazeface_front_128 at opset 22" { e2e_at blazeface_front_128 22; }
@test "e2e openwakeword_embedding at opset 22" { e2e_at openwakeword_embedding 22; }
# M-LSD's Split becomes num_outputs=8; held to ONNX Runtime's own float32 disagreement as
# at its own opset (models.bats).
@test "e2e mlsd_320x320_tiny at opset 22 (Split num_outputs): within ONNX Runtime's own disagreement" {
  run --separate-stderr env ECG_OPSET=22 sh "$ROOT/scripts/e2e.sh" mlsd_320x320_tiny --runs 1 --ort-noise
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  local json=${lines[-1]}
  [ "$(jq -r '.ort_noise_mismatches' <<<"$json")" != "null" ]
  [ "$(jq -r '.mismatches' <<<"$json")" -le "$(jq -r '.ort_noise_mismatches' <<<"$json")" ]
  jq -e --argjson a "$(jq -r '.max_abs_err' <<<"$json")" --argjson b "$(jq -r '.ort_noise_max_abs_err' <<<"$json")" -n '$a <= $b'
}
