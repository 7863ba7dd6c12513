# ort_noise.sh: sourced by the check-*-models scripts (run from the repository root).
# ort_noise_pass DIR DATA OUT ERR: run the lowered model DIR on the data set DATA with
# ecg-bench --ort-noise (ONNX Runtime without graph optimisations as a second reference),
# its JSON line to OUT, its stderr appended to ERR; succeeds when DIR is no further from the
# expected outputs than ONNX Runtime's own unoptimised run is (mismatches and max abs error):
# the bar tests/bats/models.bats holds mlsd_320x320_tiny to.
ort_noise_pass() {
  bin/ecg-bench "$1" --data "$2" --runs 1 --ort-noise > "$3" 2>> "$4"
  tail -n 1 "$3" | jq -e '.ort_noise_mismatches != null and .mismatches <= .ort_noise_mismatches
      and .max_abs_err <= .ort_noise_max_abs_err' > /dev/null 2>&1
}
