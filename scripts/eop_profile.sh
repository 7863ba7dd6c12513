#!/bin/sh
# scripts/eop_profile.sh [-j N] [--runs R] [--device NAME] [--lower-args ARGS] [--bench-args ARGS] SWEEPDIR OUT.jsonl
# EOP's device profile (VEE '22 §3.2 step 1): time every one-node ECG that
# `ecg-partition --emit-sweeps SWEEPDIR` wrote, lowered with `ecg-lower ARGS` and run by
# `ecg-bench --random 1 ARGS` (median of R runs, default 10; e.g. --bench-args "--threads 2"), and write one JSON line per
# sample: {"cpu": MODEL, "isa": ISA, "threads": T, "device": NAME, "signature": S, "dim": D,
# "x": EXTENT, "ms": MEDIAN} (DESIGN.md "Measured costs": keyed by CPU model, ISA, threads,
# device and operator signature), the input of `ecg-partition --eop --profiles`. NAME defaults to "cpu: " and this CPU's model.
# Each sample is an independent command over its own files: -j N runs N at once (on
# another machine of the same kind: the same files with GNU parallel --sshlogin); times
# are only comparable when nothing else runs, so -j 1 is the default.
set -eu
jobs=1; runs=10; device=""; largs=""; bargs=""
while [ $# -gt 2 ]; do
  case $1 in
    -j) jobs=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --lower-args) largs=$2; shift 2 ;;
    --bench-args) bargs=$2; shift 2 ;;
    *) echo "eop_profile.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 2 ] || { echo "usage: eop_profile.sh [-j N] [--runs R] [--device NAME] [--lower-args ARGS] [--bench-args ARGS] SWEEPDIR OUT.jsonl" >&2; exit 2; }
dir=$1; out=$2
[ -f "$dir/index.tsv" ] || { echo "eop_profile.sh: $dir/index.tsv: no such file (run ecg-partition --emit-sweeps $dir first)" >&2; exit 1; }
BIN=${ECG_BIN:-$(cd "$(dirname "$0")/.." && pwd)/bin}
cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -1)
[ -n "$device" ] || device="cpu: $cpu"
if grep -q ' avx512f' /proc/cpuinfo; then isa=avx512; elif grep -q ' avx2' /proc/cpuinfo; then isa=avx2; else isa=$(uname -m); fi
threads=$(printf '%s\n' "$bargs" | sed -n 's/.*--threads[ =]\([0-9]*\).*/\1/p'); threads=${threads:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/eop_profile.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# one sample: lower, bench, print the JSON line (SIG DIM X FILE as $1..$4)
one() {
  d="$work/$(basename "$4" .ecg)"
  # shellcheck disable=SC2086
  "$BIN/ecg-lower" -q $largs -o "$d" "$4" &&
  ms=$("$BIN/ecg-bench" "$d" --random 1 --runs "$runs" --warmup 2 -q $bargs | sed -n 's/.*"median_ms":\([0-9.e+-]*\).*/\1/p') &&
  [ -n "$ms" ] && rm -rf "$d" &&
  printf '{"cpu": "%s", "isa": "%s", "threads": %s, "device": "%s", "signature": "%s", "dim": "%s", "x": %s, "ms": %s}\n' \
    "$cpu" "$isa" "$threads" "$device" "$1" "$2" "$3" "$ms"
}
i=0
while IFS="$(printf '\t')" read -r sig dim x file; do
  i=$((i + 1))
  if [ "$jobs" -gt 1 ]; then
    ( one "$sig" "$dim" "$x" "$file" > "$work/$i.jsonl" ) &
    [ $((i % jobs)) -ne 0 ] || wait
  else
    one "$sig" "$dim" "$x" "$file" > "$work/$i.jsonl" || { echo "eop_profile.sh: $file failed" >&2; exit 1; }
  fi
done < "$dir/index.tsv"
wait
n=$(cat "$dir/index.tsv" | wc -l)
got=$(cat "$work"/*.jsonl 2>/dev/null | wc -l)
[ "$got" -eq "$n" ] || { echo "eop_profile.sh: $got of $n samples timed" >&2; exit 1; }
for k in $(seq 1 "$n"); do cat "$work/$k.jsonl"; done > "$out.tmp"
mv "$out.tmp" "$out"
