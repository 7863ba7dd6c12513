#!/usr/bin/env bats
# Issue 9's dynamic-shape models (the '#dyn' lines of scripts/models.tsv: PP-OCRv4 det and
# rec, PP-OCR cls, silero VAD) through scripts/dynamic_models.sh, at the first two sizes of
# each (make dynamic-models runs all five): each data set checked against ONNX Runtime's
# outputs. PP-OCR rec and cls are converted, fused and lowered once with their symbols into
# one dynamic-shape build that runs every size (each size also bound by ecg-lower
# --input-shape into a static build, timed beside it); PP-OCR det, whose dynamic lowering
# is refused (RDP leaves its FPN Concat's dims nac: they agree only for sizes that are
# multiples of 32) and onnx2ecg --dim-multiple says so, lowers once too; silero VAD is
# converted once with its chunk length symbolic (the partial-shape fold decides its inner If
# on an exported squeeze(dim)) and lowered once: its outer If on the sample rate becomes
# both branches' nodes under a guard (ecg_flatten_ifs), so the one build runs every length
# and both sample rates, the branch chosen at run time.

load helpers

setup() {
  require_tools
  require_cmd jq node
  T="$BATS_TEST_TMPDIR"
}

@test "dynamic models: silero VAD at 8 kHz and 16 kHz, two chunk lengths, one ECG, one dynamic build, both branches of the If on sr" {
  require_file "$ROOT/models/silero_vad.onnx"
  run --separate-stderr env DYN_SIZES=2 RUNS=1 ECG_OUT="$T" sh "$ROOT/scripts/dynamic_models.sh" silero_vad
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -s 'length')" -eq 4 ]
  [ "$(echo "$output" | jq -s '[.[] | select(.pass == true and .mismatches == 0)] | length')" -eq 4 ]
  [ "$(echo "$output" | jq -r -s '[.[].values] | unique | join(" ")')" = "sr=16000 sr=8000" ]
  [ "$(echo "$output" | jq -r -s '[.[].build] | unique | join(" ")')" = "dynamic" ]
  grep -q '#define ECG_MODEL_DYNAMIC 1' "$T/dynamic/silero_vad.dyn/model.h"
  # only the taken branch runs: its kernels return at once otherwise
  grep -q 'return; /\* its branch is not taken \*/' "$T/dynamic/silero_vad.dyn/model.c"
  # chunks too short for the model fail naming what does not fit (no crash): 32 samples
  # leave no STFT frame, 128 too few frames for the adaptive normalisation's reflect Slices
  printf '\200\076\0\0\0\0\0\0' > "$T/sr.bin"; head -c 512 /dev/zero > "$T/h.bin"
  for n in 32 128; do
    head -c $((4 * n)) /dev/zero > "$T/in.bin"
    run --separate-stderr "$T/dynamic/silero_vad.dyn/runner" --shape input=1x$n --shape sr= --shape h=2x1x64 --shape c=2x1x64 \
      --in "input=$T/in.bin" --in "sr=$T/sr.bin" --in "h=$T/h.bin" --in "c=$T/h.bin"
    [ "$status" -eq 1 ]; [[ "$stderr" == *"the input shapes are too small for the model"* ]]
  done
  # the two sample rates give different outputs: the check would catch the wrong branch
  run cmp -s "$T/dynamic/silero_vad.1.data1/output_0.pb" "$T/dynamic/silero_vad.1.data2/output_0.pb"
  [ "$status" -ne 0 ]
}

@test "dynamic models: PP-OCRv4 rec (widths 80, 160) and cls (widths 96, 192), one dynamic build each, a static one per size beside it" {
  require_file "$ROOT/models/ch_PP-OCRv4_rec_infer.onnx"
  run --separate-stderr env DYN_SIZES=2 RUNS=1 ECG_OUT="$T" sh "$ROOT/scripts/dynamic_models.sh" ppocr_v4_rec ppocr_v2_cls
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -s '[.[] | select(.pass == true and .build == "dynamic" and .static_median_ms > 0 and .dyn_vs_static > 0)] | length')" -eq 4 ]
  grep -q '#define ECG_MODEL_DYNAMIC 1' "$T/dynamic/ppocr_v4_rec.dyn/model.h"
  # one ECG, its input still symbolic
  "$BIN/ecg-dump" "$T/dynamic/ppocr_v4_rec.ecg" | head -c 20000 | grep -q '"name":"x","dtype":"float32","shape":\["[^"]*",3,48,"[^"]*"\]'
}

@test "dynamic models: PP-OCRv4 det at 320x320 from one dynamic build (heights and widths multiples of 32); another size refused naming the input" {
  require_file "$ROOT/models/ch_PP-OCRv4_det_infer.onnx"
  run --separate-stderr env DYN_SIZES=1 RUNS=1 ECG_OUT="$T" sh "$ROOT/scripts/dynamic_models.sh" ppocr_v4_det
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -s '[.[] | select(.pass == true and .build == "dynamic")] | length')" -eq 1 ]
  # the --dim-multiple hint: the input's height is 32 times a symbol, and a height of 330 is refused
  head -c $((4 * 3 * 330 * 320)) /dev/zero > "$T/x.bin"
  run --separate-stderr "$T/dynamic/ppocr_v4_det.dyn/runner" --shape x=1x3x330x320 --in "x=$T/x.bin"
  [ "$status" -eq 1 ]; [[ "$stderr" == *"input 'x': dim 2 is 330, but this build takes multiples of 32 there"* ]]
}
