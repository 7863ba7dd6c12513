#!/bin/sh
# scripts/lowered_checks.sh [--warnings] [--san] [NAME...]: checks of the generated C itself
# (issue 10, item 3) on models of scripts/models.tsv (default: every model).
#   --warnings  lower NAME and build its runner with -O3 -Wall -Wextra -Werror (the lowered
#               Makefile's CFLAGS): the generated code and the runtime compile without warnings
#   --san       run NAME end to end (scripts/e2e.sh: ONNX Runtime reference data, ecg-bench)
#               with the lowered code built under ASan/UBSan/LeakSanitizer at -O1 (ecg-bench --cc);
#               a sanitizer report makes the runner, hence ecg-bench, exit non-zero; the
#               outputs must pass as in tests/bats/models.bats (tolerance, or the --ort-noise bar)
# Without --warnings or --san both run. Work goes to $ECG_CHECK_OUT (default build/lowered-checks).
# Prints one line per model and check ("ok" or "FAIL ..."); exit 1 when any failed.
set -u
cd "$(dirname "$0")/.."
warn=0; san=0; names=""
for a in "$@"; do
  case $a in
    --warnings) warn=1 ;;
    --san) san=1 ;;
    -*) echo "lowered_checks.sh: unknown option $a" >&2; exit 2 ;;
    *) names="$names $a" ;;
  esac
done
[ $warn = 1 ] || [ $san = 1 ] || { warn=1; san=1; }
[ -n "$names" ] || names=$(grep -v '^#' scripts/models.tsv | cut -f1 | grep .)
out=${ECG_CHECK_OUT:-build/lowered-checks}
mkdir -p "$out"
SAN_CC="cc -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
fails=0
for n in $names; do
  line=$(grep -v '^#' scripts/models.tsv | awk -F'\t' -v m="$n" '$1 == m')
  [ -n "$line" ] || { echo "FAIL $n: not in scripts/models.tsv"; fails=$((fails + 1)); continue; }
  path=$(printf '%s\n' "$line" | cut -f2); shapes=$(printf '%s\n' "$line" | cut -f3); args=""
  [ "$shapes" = "-" ] || for s in $(printf '%s' "$shapes" | tr ',' ' '); do args="$args --input-shape $s"; done
  if [ $warn = 1 ]; then
    d="$out/warn/$n"
    # shellcheck disable=SC2086
    if bin/onnx2ecg "$path" $args -o "$out/$n.ecg" && bin/ecg-lower -o "$d" "$out/$n.ecg" &&
       make -s -C "$d" clean >/dev/null && make -s -C "$d" runner CFLAGS="-O3 -march=native -fopenmp -Wall -Wextra -Werror" > "$out/$n.warn.log" 2>&1; then
      echo "ok   $n: lowered C builds with -O3 -Wall -Wextra -Werror"
    else
      echo "FAIL $n: warnings or build failure (log: $out/$n.warn.log)"; grep -m3 -E 'warning|error' "$out/$n.warn.log"; fails=$((fails + 1))
    fi
  fi
  if [ $san = 1 ]; then
    rm -f "$out/san/$n/runner" # rebuilt with the sanitizer compiler
    # the bar of tests/bats/models.bats: the expected outputs at the usual tolerance, or,
    # for a model ill-conditioned in float32 (M-LSD), no further from them than ONNX
    # Runtime's own unoptimised run (--ort-noise); and no sanitizer report in either case
    # at -O1 (the lowered Makefile's CFLAGS from the environment; ASan's advice for its
    # checks): the runtime library under ASan/UBSan at the lowered default -O3 took 6 min 44 s
    # to compile its ecg_gemm.c alone, at -O1 44 s (AMD EPYC Zen 4), and a fresh machine (CI)
    # has no cached build of it
    res=$(CFLAGS="-O1 -march=${MARCH:-native} -fopenmp" ECG_OUT="$out/san" sh scripts/e2e.sh "$n" --runs 1 --ort-noise --cc "$SAN_CC" 2> "$out/$n.san.log")
    if printf '%s' "$res" | grep -q '"pass":' && ! grep -q -E 'Sanitizer|runtime error' "$out/$n.san.log" &&
       printf '%s' "$res" | jq -e '.pass == true or (.ort_noise_mismatches != null and .mismatches <= .ort_noise_mismatches
                                    and .max_abs_err <= .ort_noise_max_abs_err)' > /dev/null; then
      echo "ok   $n: end to end under ASan/UBSan: $res"
    else
      echo "FAIL $n: end to end under ASan/UBSan (log: $out/$n.san.log): $res"
      grep -m5 -E 'ERROR|SUMMARY|runtime error' "$out/$n.san.log"; fails=$((fails + 1))
    fi
  fi
done
[ $fails -eq 0 ]
