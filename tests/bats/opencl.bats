#!/usr/bin/env bats
# ecg-lower --target opencl (issue 14, item 1): OpenCL C kernels and a host file linking only
# the ICD loader, run by ecg-bench on an OpenCL device and checked against expected outputs:
# ONNX backend node tests (small graphs: Conv, pooling, Gemm, MatMul, movement, elementwise),
# a real model unfused and fused (epilogues as device functions), and the refusals.
# On a machine without a GPU the device is PoCL (make setup installs pocl-opencl-icd,
# ocl-icd-opencl-dev and clinfo): a missing OpenCL device is a failure, never a skip.

load helpers

setup() {
  require_tools
  require_cmd clinfo
  require_file /usr/include/CL/cl.h # ocl-icd-opencl-dev
  clinfo -l 2>/dev/null | grep -q Device || { echo "no OpenCL device (clinfo -l lists none): install pocl-opencl-icd (make setup)" >&2; return 1; }
  export ECG_OUT="$ROOT/build/bats-out"
}

# cl_node_test NAME [ecg-bench options]: ONNX backend node test NAME lowered for OpenCL passes
# on device 0, and the report names the target and the device.
cl_node_test() {
  local name=$1 dir="$NODE_DATA/$1"
  shift
  require_file "$dir/model.onnx" "$dir/test_data_set_0"
  local T="$BATS_TEST_TMPDIR"
  "$BIN/onnx2ecg" "$dir/model.onnx" | "$BIN/ecg-lower" --target opencl -o "$T/d"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$dir/test_data_set_0" --runs 1 --warmup 0 --device 0 "$@"
  echo "exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
  [ "$(jq -r '.target' <<<"${lines[-1]}")" = "opencl" ]
  [ -n "$(jq -r '.device' <<<"${lines[-1]}")" ]
  [ "$(jq -r '.device' <<<"${lines[-1]}")" != "null" ]
}

@test "opencl: node tests (Conv, pooling, Gemm, MatMul, Transpose, Concat, Split, elementwise) pass on the OpenCL device" {
  for t in test_conv_with_strides_padding test_conv_with_autopad_same test_basic_conv_with_padding \
           test_maxpool_2d_pads test_maxpool_2d_ceil test_maxpool_2d_dilations test_averagepool_2d_pads_count_include_pad \
           test_averagepool_2d_precomputed_same_upper test_globalaveragepool test_globalmaxpool \
           test_gemm_all_attributes test_gemm_transposeA test_matmul_4d test_matmul_2d \
           test_transpose_all_permutations_3 test_concat_3d_axis_1 test_split_equal_parts_1d \
           test_add_bcast test_sigmoid test_clip test_erf test_pow_types_int64_int64 test_where_example test_flatten_axis2; do
    echo "== $t"
    cl_node_test "$t" --atol 1e-5
  done
}

@test "opencl: node tests (Softmax, LogSoftmax, Reduce*, Gather, Pad, Expand, Tile, Resize, LayerNorm, InstanceNorm) pass on the OpenCL device" {
  for t in test_softmax_axis_1 test_logsoftmax_large_number test_softmax_example_expanded \
           test_reduce_mean_keepdims_random test_reduce_max_do_not_keepdims_random test_reduce_log_sum_exp_keepdims_random \
           test_gather_2d_indices test_gather_negative_indices test_edge_pad test_reflect_pad test_constant_pad \
           test_expand_dim_changed test_tile test_resize_upsample_sizes_cubic test_resize_downsample_sizes_linear_pytorch_half_pixel \
           test_resize_upsample_sizes_nearest test_layer_normalization_4d_axis1 test_instancenorm_example; do
    echo "== $t"
    cl_node_test "$t" --atol 1e-5
  done
}

@test "opencl: the lowered directory is OpenCL kernels plus a host file linking -lOpenCL, no C runtime" {
  local dir="$NODE_DATA/test_conv_with_strides_padding" T="$BATS_TEST_TMPDIR"
  require_file "$dir/model.onnx"
  "$BIN/onnx2ecg" "$dir/model.onnx" | "$BIN/ecg-lower" --target opencl -o "$T/d"
  [ "$(jq -r '.target' "$T/d/model.json")" = "opencl" ]
  grep -q '__kernel void k0(ECG_CL_ARGS)' "$T/d/model.cl"
  grep -q 'clBuildProgram' "$T/d/model.c"
  grep -q -- '-lOpenCL' "$T/d/Makefile"
  [ ! -e "$T/d/ecg_gemm.c" ]
  ! grep -q 'omp' "$T/d/Makefile" || false
  # the C target is unchanged by the option's existence
  "$BIN/onnx2ecg" "$dir/model.onnx" | "$BIN/ecg-lower" --target c -o "$T/c"
  [ "$(jq -r '.target' "$T/c/model.json")" = "c" ]
  [ -e "$T/c/ecg_gemm.c" ]
}

# cl_model NAME FUSE...: model NAME converted, optionally through ecg-fuse (FUSE = "fuse"),
# lowered --target opencl into $BATS_TEST_TMPDIR/NAME-FUSE and checked on device 0.
cl_model() {
  local name=$1 fuse=$2 T="$BATS_TEST_TMPDIR" data ma path args
  data=$(model_data "$name") || return 1
  ma=$(model_args "$name"); args=$(head -1 <<<"$ma"); path=$(tail -1 <<<"$ma")
  # shellcheck disable=SC2086
  "$BIN/onnx2ecg" "$ROOT/$path" $args -o "$T/$name.ecg"
  if [ "$fuse" = fuse ]; then "$BIN/ecg-fuse" "$T/$name.ecg" -o "$T/$name.f.ecg"; mv "$T/$name.f.ecg" "$T/$name.ecg"; fi
  if [ "$fuse" = intensive ]; then "$BIN/ecg-fuse" --intensive "$T/$name.ecg" -o "$T/$name.f.ecg"; mv "$T/$name.f.ecg" "$T/$name.ecg"; fi
  "$BIN/ecg-lower" --target opencl -o "$T/$name-$fuse" "$T/$name.ecg"
  run --separate-stderr "$BIN/ecg-bench" "$T/$name-$fuse" --data "$data" --runs 1 --warmup 1
  echo "$name $fuse: exit $status"; echo "stdout: $output"; echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.pass' <<<"${lines[-1]}")" = "true" ]
  [ "$(jq -r '.mismatches' <<<"${lines[-1]}")" = "0" ]
  [ "$(jq -r '.target' <<<"${lines[-1]}")" = "opencl" ]
}

@test "opencl: squeezenet1_1 unfused and fused (ecg-fuse: Conv+Relu epilogues as device functions) pass" {
  cl_model squeezenet1_1 plain
  cl_model squeezenet1_1 fuse
  local T="$BATS_TEST_TMPDIR"
  grep -q '^void epi[0-9]*(__global float \*y, size_t n, ECG_CL_ARGS)' "$T/squeezenet1_1-fuse/model.cl"
  [ "$(jq -r '.kernels' "$T/squeezenet1_1-fuse/model.json")" -lt "$(jq -r '.kernels' "$T/squeezenet1_1-plain/model.json")" ]
}

@test "opencl: mobilenet_v2 fused passes" {
  cl_model mobilenet_v2 fuse
}

@test "opencl: efficientnet_b0 through ecg-fuse --intensive passes, its intensive-fusion blocks (expansions, squeeze-excitations) lowered as their stages" {
  cl_model efficientnet_b0 intensive
  local T="$BATS_TEST_TMPDIR"
  [ "$("$BIN/ecg-dump" --json "$T/efficientnet_b0.ecg" | jq '[.blocks[] | select(.nodes | length >= 6)] | length')" -ge 32 ]
  grep -q 'intensive fusion' "$ROOT/tools/lower/lower.c" # the C target's kernel comment the grep below looks for
  ! grep -q 'intensive fusion' "$T/efficientnet_b0-intensive/model.c" "$T/efficientnet_b0-intensive/model.cl" || false
}

@test "opencl: bert_tiny fused (Gather, MatMul with absorbed Transposes, row blocks: LayerNorm, Softmax) passes" {
  cl_model bert_tiny fuse
}

@test "opencl: an operator the OpenCL printer cannot express is refused, naming the node and op (exit 1, no output)" {
  local dir="$NODE_DATA/test_convtranspose" T="$BATS_TEST_TMPDIR"
  require_file "$dir/model.onnx"
  "$BIN/onnx2ecg" "$dir/model.onnx" -o "$T/m.ecg"
  run --separate-stderr "$BIN/ecg-lower" --target opencl -o "$T/d" "$T/m.ecg"
  echo "exit $status; stderr: $stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"(ConvTranspose): --target opencl does not support this operator yet"* ]]
  [[ "$stderr" == *"node '"* ]]
  [ ! -e "$T/d" ]
  # and an unknown target is a usage error
  run --separate-stderr "$BIN/ecg-lower" --target cuda -o "$T/d" "$T/m.ecg"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"unknown --target 'cuda'"* ]]
}

@test "opencl: ecg-bench --device names a missing device (exit 1) and is a usage error on a C directory" {
  local dir="$NODE_DATA/test_relu" T="$BATS_TEST_TMPDIR"
  require_file "$dir/model.onnx"
  "$BIN/onnx2ecg" "$dir/model.onnx" -o "$T/m.ecg"
  "$BIN/ecg-lower" --target opencl -o "$T/cl" "$T/m.ecg"
  run --separate-stderr "$BIN/ecg-bench" "$T/cl" --data "$dir/test_data_set_0" --runs 1 --device 99
  echo "exit $status; stderr: $stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"no OpenCL device 99"* ]]
  "$BIN/ecg-lower" -o "$T/c" "$T/m.ecg"
  run --separate-stderr "$BIN/ecg-bench" "$T/c" --data "$dir/test_data_set_0" --runs 1 --device 0
  echo "exit $status; stderr: $stderr"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"only --target opencl or c+opencl runs on OpenCL devices"* ]]
}

@test "opencl: scripts/device_pack.sh packs a model for a GPU machine; device_run.sh builds, runs and checks it" {
  local M="$ROOT/models/face_detection_front_128x128_barracuda.onnx" T="$BATS_TEST_TMPDIR"
  require_file "$M" # make models
  ECG_PACK_DEBS=0 sh "$ROOT/scripts/device_pack.sh" "$T/pk" opencl blazeface_front_128
  [ "$(cut -f1,2 "$T/pk/data/blazeface_front_128/test_data_set_0/meta.tsv" | tr '\t\n' ' ')" = \
    "input input:0 output Identity:0 output Identity_1:0 output Identity_2:0 output Identity_3:0 " ]
  run env OUT="$T/o" RUNS=2 sh "$T/pk/device_run.sh" "$T/pk"
  echo "$output"
  [ "$status" -eq 0 ]
  jq -e '.rc == 0 and .runs == 2 and .elements == 15232 and .mismatches == 0 and (.device | length) > 0' "$T/o/results.jsonl"
  # the check can fail: ONNX Runtime's first output shifted by 0.01 mismatches every element of it
  python3 - "$T/pk/data/blazeface_front_128/test_data_set_0/output_0.raw" <<'PY'
import array, sys
a = array.array('f'); a.frombytes(open(sys.argv[1], 'rb').read())
open(sys.argv[1], 'wb').write(array.array('f', [x + 0.01 for x in a]).tobytes())
PY
  run env OUT="$T/o2" RUNS=1 sh "$T/pk/device_run.sh" "$T/pk"
  [ "$status" -eq 1 ]
  jq -e '.mismatches == 512' "$T/o2/results.jsonl"
}
