#!/usr/bin/env bats
# The generated C itself (issue 10, item 3), on one real model (BlazeFace): the lowered
# directory builds with -O3 -Wall -Wextra -Werror, and the model runs end to end against
# ONNX Runtime's outputs with the lowered code built under ASan/UBSan/LeakSanitizer
# (ecg-bench --cc; a sanitizer report fails the runner).  Every model: make test-lowered.
# The runtime itself compiles warning-free with gcc and clang for each ISA it targets.

load helpers

setup() {
  require_tools
  require_file "$ROOT/models/face_detection_front_128x128_barracuda.onnx"
  export ECG_CHECK_OUT="$ROOT/build/lowered-checks"
}

@test "lowered C (BlazeFace) builds with -Wall -Wextra -Werror" {
  run sh "$ROOT/scripts/lowered_checks.sh" --warnings blazeface_front_128
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == "ok   blazeface_front_128: lowered C builds with -O3 -Wall -Wextra -Werror" ]]
}

@test "the runtime compiles with -Wall -Wextra -Werror for every ISA it targets (gcc and clang; AVX-512, AVX2, plain x86-64; aarch64 where the cross compiler is)" {
  local rt="$ROOT/tools/lower/runtime" T="$BATS_TEST_TMPDIR" cc m f fails=0
  sh "$ROOT/scripts/rt_id.sh" "$rt"/*.c "$rt"/*.h > "$T/ecg_rt_id.h"
  # one compile command a line, run as parallel jobs (one core each; 37 s serial on 2 cores)
  : > "$T/cmds"
  for cc in gcc clang; do
    command -v "$cc" >/dev/null || continue
    # clang's OpenMP needs libomp's headers (not in make setup's packages): without them, gcc only
    printf '#include <omp.h>\nint main(void) { return omp_get_max_threads() < 0; }\n' > "$T/omp.c"
    "$cc" -fopenmp -c "$T/omp.c" -o /dev/null 2>/dev/null || { echo "note: $cc has no OpenMP headers here; skipped"; continue; }
    for m in skylake-avx512 x86-64-v3 x86-64; do
      for f in "$rt"/*.c; do echo "$cc $m $f"; done >> "$T/cmds"
    done
  done
  if command -v aarch64-linux-gnu-gcc >/dev/null; then
    for f in "$rt"/*.c; do echo "aarch64-linux-gnu-gcc - $f"; done >> "$T/cmds"
  fi
  [ "$(wc -l < "$T/cmds")" -ge 30 ] # gcc's three ISAs at least
  export rt T
  xargs -P "$(nproc)" -L 1 sh -c 'm=; [ "$1" = - ] || m="-march=$1"
    "$0" -O1 $m -fopenmp -Wall -Wextra -Werror -I"$rt" -I"$T" -c "$2" -o /dev/null 2>&1 || echo "FAIL $0 $1 $2"' \
    < "$T/cmds" > "$T/fails" || true
  cat "$T/fails"
  fails=$(grep -c '^FAIL' "$T/fails" || true)
  [ "$fails" -eq 0 ]
}

@test "BlazeFace end to end with the lowered code under ASan/UBSan: passes, no sanitizer report" {
  [ -f "$ECG_CHECK_OUT/san/blazeface_front_128.data/test_data_set_0/output_0.pb" ] ||
    require_file "$ROOT/tools/bench/node_modules/onnxruntime-node"
  run sh "$ROOT/scripts/lowered_checks.sh" --san blazeface_front_128
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == "ok   blazeface_front_128: end to end under ASan/UBSan: "*'"pass":true'* ]]
  ! grep -E 'Sanitizer|runtime error' "$ECG_CHECK_OUT/blazeface_front_128.san.log" || false
}
