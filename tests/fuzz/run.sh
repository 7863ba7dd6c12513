#!/bin/sh
# tests/fuzz/run.sh [--seconds N] [--runs N] [--smoke] [--replay-only] [NAME...]: the libFuzzer campaign
# (issue 10, item 1).  NAME is one of the harnesses in build-fuzz/fuzz/ (make fuzz-build):
# onnx ecg tensorpb lower rules profiledb eopprof costdb (default: all).
#
# For each harness: replay every regression input of tests/fuzz/regress/NAME/ (a crash
# found once, kept so it stays fixed), then fuzz for N seconds (default 60) on the corpus
# build-fuzz/corpus/NAME (--smoke: build-fuzz/corpus-smoke/NAME), seeded from tests/fuzz/seeds/NAME/ (hand-made edge cases), ONNX's
# backend test models (libonnx-testdata) and, except with --smoke, the small real models
# under models/ (< 1 MB).  ECG seeds are made with bin/onnx2ecg (plain and --zstd).
# --runs N stops each harness after N executions (the campaign of issue 10: 10000000), with
# --seconds as a cap when both are given (without --seconds, no time cap).
# Prints one line per harness: "fuzz NAME: RUNS runs in S s, cov C ft F, corpus K, OK|FAILED";
# crashes go to build-fuzz/artifacts/NAME-*.  Exit 0 when nothing crashed, leaked or hung.
set -u
cd "$(dirname "$0")/../.."
secs=60; runs=""; secs_given=0; smoke=0; replay_only=0; names=""
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) secs=$2; secs_given=1; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --replay-only) replay_only=1; shift ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) names="$names $1"; shift ;;
  esac
done
if [ -n "$runs" ] && [ $secs_given = 0 ]; then secs=0; fi # libFuzzer: 0 = no time limit
[ -n "$names" ] || names="onnx ecg tensorpb lower rules profiledb eopprof costdb"
F=build-fuzz
NODE=${ECG_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}
mkdir -p "$F/corpus" "$F/artifacts" "$F/logs"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS_EXTRA:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TMPDIR="${TMPDIR:-/tmp}"

# seed NAME DIR: fill the corpus DIR of harness NAME (idempotent: names are content hashes)
seed() {
  name=$1; dir=$2
  mkdir -p "$dir"
  [ -d "tests/fuzz/seeds/$name" ] && cp tests/fuzz/seeds/"$name"/* "$dir"/ 2>/dev/null
  case $name in
    onnx)
      for m in "$NODE"/*/model.onnx; do cp "$m" "$dir/node-$(basename "$(dirname "$m")").onnx"; done
      [ $smoke = 1 ] || for m in models/*.onnx; do
        [ -f "$m" ] && [ "$(wc -c < "$m")" -lt 1000000 ] && cp "$m" "$dir/model-$(basename "$m")"; done ;;
    ecg|lower)
      # a few hundred node tests as ECGs (every 4th, plain; every 16th, zstd)
      i=0; every=4; [ $smoke = 1 ] && every=32
      for m in "$NODE"/*/model.onnx; do
        i=$((i + 1)); [ $((i % every)) = 0 ] || continue
        t=$(basename "$(dirname "$m")")
        [ -f "$dir/$t.ecg" ] || bin/onnx2ecg "$m" -o "$dir/$t.ecg" 2>/dev/null
        [ $((i % (every * 4))) = 0 ] && { [ -f "$dir/$t.z.ecg" ] || bin/onnx2ecg "$m" --zstd -o "$dir/$t.z.ecg" 2>/dev/null; }
      done
      [ $smoke = 1 ] || for m in models/*.onnx; do
        [ -f "$m" ] && [ "$(wc -c < "$m")" -lt 500000 ] || continue
        o="$dir/model-$(basename "$m" .onnx).ecg"
        [ -f "$o" ] || bin/onnx2ecg "$m" --input-shape input=1x3x128x128 -o "$o" 2>/dev/null || bin/onnx2ecg "$m" -o "$o" 2>/dev/null
      done ;;
    tensorpb)
      i=0
      for p in "$NODE"/*/test_data_set_0/*.pb; do
        i=$((i + 1)); [ $((i % 3)) = 0 ] || continue
        [ "$(wc -c < "$p")" -lt 20000 ] && cp "$p" "$dir/$(basename "$(dirname "$(dirname "$p")")")-$(basename "$p")"
      done ;;
    rules) cp tools/rewrite/rules/*.rules "$dir"/ ;;
    profiledb|eopprof|costdb) : ;; # hand-made seeds only (tests/fuzz/seeds/NAME)
  esac
}

bad=0
for n in $names; do
  h="$F/fuzz/fuzz_$n"
  if [ ! -x "$h" ]; then echo "fuzz $n: missing $h (run make fuzz-build)"; bad=1; continue; fi
  # 1. regressions
  if [ -d "tests/fuzz/regress/$n" ] && [ -n "$(ls -A "tests/fuzz/regress/$n")" ]; then
    if "$h" -runs=1 tests/fuzz/regress/"$n"/* > "$F/logs/$n-regress.log" 2>&1; then
      echo "fuzz $n: $(ls "tests/fuzz/regress/$n" | wc -l) regression inputs replayed, OK"
    else
      echo "fuzz $n: regression replay FAILED (log: $F/logs/$n-regress.log)"
      grep -E 'ERROR|SUMMARY|Running:' "$F/logs/$n-regress.log" | tail -5
      bad=1
    fi
  fi
  [ $replay_only = 1 ] && continue
  # 2. fuzzing
  c="$F/corpus/$n"; [ $smoke = 1 ] && c="$F/corpus-smoke/$n"  # the smoke never reads a campaign's corpus
  seed "$n" "$c"
  log="$F/logs/$n.log"
  if nice "$h" -max_total_time="$secs" ${runs:+-runs=$runs} -timeout=25 -rss_limit_mb=2560 -malloc_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$F/artifacts/$n-" "$c" > "$log" 2>&1; then st=OK; else st=FAILED; bad=1; fi
  # (not $runs: that is the --runs cap, which every later harness would otherwise get as the
  # count this one executed)
  ran=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  el=$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(printf '%s' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p'); ft=$(printf '%s' "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  corp=$(printf '%s' "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
  echo "fuzz $n: ${ran:-?} runs in ${el:-?} s, cov ${cov:-?} ft ${ft:-?}, corpus ${corp:-?}, $st"
  [ $st = OK ] || { grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5; }
done
exit $bad
