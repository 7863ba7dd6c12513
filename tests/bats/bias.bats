#!/usr/bin/env bats
# A GEMM block's bias Add (MatMul/Gemm + a constant row vector, as transformer exports write
# their linear layers) is added by ecg_rt1_sgemm_packed's bias_n in the micro-kernel; the
# rest of the block's epilogue runs after it (the runtime's activation, or a generated
# epilogue reading the biased y). Models: mkbias.mjs.

load helpers

setup_file() {
  command -v node >/dev/null || return 0
  node "$ROOT/tests/bats/mkbias.mjs" "$BATS_FILE_TMPDIR/m"
}

setup() {
  require_tools
  require_cmd node jq
  M="$BATS_FILE_TMPDIR/m"
  T="$BATS_TEST_TMPDIR"
}

# lower M/$1.onnx under plan $2 into $T/$1; print the GEMM call's bias argument
lower_bias() {
  rm -rf "$T/$1"
  "$BIN/onnx2ecg" "$M/$1.onnx" | "$BIN/ecg-fuse" --plan "$2" | "$BIN/ecg-lower" -o "$T/$1"
  grep -o 'ecg_rt1_sgemm_packed([^;]*' "$T/$1/model.c" | awk -F', ' '{ print $8 }'
}

@test "MatMul/Gemm + bias Add: the bias goes to the GEMM's bias_n where it is a row vector the block alone reads and the unbiased product is not read again; every model agrees with ONNX Runtime" {
  local m bias res
  for m in bias bias_relu bias_res gemm bias_both bias_reuse full; do
    # bias_both and bias_reuse under dnnfusion: one block MatMul+Add+Relu that stores y1
    # too; one block MatMul+Add+Add whose last Add reads the MatMul's own output again
    case $m in
      bias_both | bias_reuse) bias=$(lower_bias "$m" dnnfusion) ;;
      *) bias=$(lower_bias "$m" fixed) ;;
    esac
    echo "$m: bias argument '$bias'"
    case $m in
      bias_both | bias_reuse | full) [ "$bias" = NULL ] ;;
      *) [[ "$bias" == *"ctx->w + "* ]] ;;
    esac
    res=$("$BIN/ecg-bench" "$T/$m" --random 1 --ort --runs 1 --warmup 0)
    echo "$res"
    jq -e '.pass == true' <<<"$res"
  done
  # what follows the bias: the runtime's Relu on the accumulators, a generated epilogue
  # adding r (reading the biased y, not the bias again), nothing
  grep -q 'MatMul+Add+Relu' "$T/bias_both/model.c"
  grep -q 'MatMul+Add+Add' "$T/bias_reuse/model.c"
  grep -q 'ECG_ACT_RELU' "$T/bias_relu/model.c"
  grep -q 'ECG_ACT_FN' "$T/bias_res/model.c"
  ! grep -q 'ctx->w' <(sed -n '/^static void epi/,/^}/p' "$T/bias_res/model.c") || false
  ! grep -q '^static void epi' "$T/bias/model.c" || false
}
