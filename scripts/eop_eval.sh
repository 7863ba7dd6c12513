#!/bin/sh
# scripts/eop_eval.sh [--points N] [--runs R] [--graphs "lstm gru bert"] [--device-args ARGS] OUTDIR
# EOP's evaluation (VEE '22 §3.5, Fig. 8; issue 14 "Done means"): for LSTM- and GRU-shaped
# graphs (tests/bats/mkrnn.c at the paper's Table 3 parameters: batch 16, input 80, hidden
# 64, 2 layers, seq_len 1) and BERT (../shared/models/bert_tiny.onnx), each operator is
# swept (ecg-partition --emit-sweeps), timed on the CPU (C target, 1 thread) and on the
# OpenCL device (--target opencl, device 0 unless --device-args "--device N"; PoCL where no
# GPU is installed) by scripts/eop_profile.sh, and planned by ecg-partition --eop under both
# objectives.  Writes OUTDIR/GRAPH.{cpu,dev}.jsonl (the profiles), OUTDIR/GRAPH.OBJ.json
# (the reports) and prints, per graph and objective, the estimated time of every strategy
# (cpu-only, device-only, equal, fixed, EOP; ms, summed or two-queue makespan) and the
# held-out MAPE of the fitted patterns per device and pattern.  Times are estimates from
# the measured profiles, as the paper's AT is; they are only worth reading on a quiet machine.
set -eu
points=6; runs=10; graphs="lstm gru bert"; dargs=""
while [ $# -gt 1 ]; do
  case $1 in
    --points) points=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --graphs) graphs=$2; shift 2 ;;
    --device-args) dargs=$2; shift 2 ;;
    *) echo "eop_eval.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: eop_eval.sh [--points N] [--runs R] [--graphs \"lstm gru bert\"] [--device-args ARGS] OUTDIR" >&2; exit 2; }
out=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ECG_BIN:-$ROOT/bin}
mkdir -p "$out"
cc -std=gnu11 -O1 -I"$ROOT/format" -I"$ROOT/build/gen" -I"$ROOT/tools/common" "$ROOT/tests/bats/mkrnn.c" \
  "$ROOT/build/libecg.a" -lprotobuf-c -lzstd -lm -o "$out/mkrnn"
dev=$(clinfo -l 2>/dev/null | sed -n 's/.*Device #0: *//p' | head -1)
for gname in $graphs; do
  g="$out/$gname.ecg"
  case $gname in
    lstm|gru) "$out/mkrnn" "$gname" "$g" ;;
    bert) "$BIN/onnx2ecg" "$ROOT/../shared/models/bert_tiny.onnx" --input-shape input_ids=1x128 --input-shape attention_mask=1x128 -o "$g" ;;
    *) echo "eop_eval.sh: unknown graph '$gname' (lstm, gru, bert)" >&2; exit 2 ;;
  esac
  rm -rf "$out/$gname.sw"
  "$BIN/ecg-partition" --emit-sweeps "$out/$gname.sw" --points "$points" "$g"
  sh "$ROOT/scripts/eop_profile.sh" --runs "$runs" "$out/$gname.sw" "$out/$gname.cpu.jsonl"
  sh "$ROOT/scripts/eop_profile.sh" --runs "$runs" --device "opencl: ${dev:-device 0}" --lower-args "--target opencl" \
    --bench-args "--warmup 3 $dargs" "$out/$gname.sw" "$out/$gname.dev.jsonl"
  for obj in sum makespan; do
    "$BIN/ecg-partition" --eop --profiles "$out/$gname.cpu.jsonl" --profiles "$out/$gname.dev.jsonl" --objective "$obj" \
      --report "$out/$gname.$obj.json" -o "$out/$gname.$obj.ecg" "$g"
  done
done
# the table: one row per graph and objective; the MAPE of the pattern chosen for each
# swept operator, averaged per device and pattern
python3 - "$out" $graphs <<'PY'
import json, sys
out, graphs = sys.argv[1], sys.argv[2:]
print("| graph | objective | cpu-only | device-only | equal | fixed | EOP | best single / EOP |")
print("|---|---|---|---|---|---|---|---|")
mape = {}
for g in graphs:
    for obj in ("sum", "makespan"):
        r = json.load(open(f"{out}/{g}.{obj}.json"))["eop"]
        s = r["strategies"]
        best = min(s["cpu-only"], s["device-only"])
        print(f"| {g} | {obj} | " + " | ".join(f"{s[k]:.4g}" for k in ("cpu-only", "device-only", "equal", "fixed", "eop"))
              + f" | {best / s['eop']:.3f} |")
        if obj != "sum": continue
        for op in r["plan"]:
            for side in ("cpu", "device"):
                p = op.get(side)
                if not p or "pattern" not in p: continue
                mape.setdefault((side, p["pattern"]), []).append(p["mape"][p["pattern"]])
print()
print("| device | pattern | operators | mean held-out MAPE (%) |")
print("|---|---|---|---|")
for (side, pat), v in sorted(mape.items()):
    print(f"| {side} | {pat} | {len(v)} | {sum(v) / len(v):.1f} |")
PY
