#!/bin/sh
# Issue 12's first "Done means": every model of scripts/models.tsv (the shared benchmark
# models included) passes `ecg-bench --data` (its outputs against ONNX Runtime's on seeded
# inputs, scripts/e2e.sh) after `ecg-fuse | ecg-partition`, untuned and tuned
# (`ecg-partition --tune --budget PARTITION_BUDGET`: every candidate schedule the tuner
# measures is lowered and timed on this machine; the chosen ones go into the ECG that is
# then lowered and checked). A run that misses the tolerance passes when it is no further
# from the reference than ONNX Runtime without graph optimisations is (ecg-bench
# --ort-noise; "checked": "ort_noise"), the bar tests/bats/models.bats holds
# mlsd_320x320_tiny to.
#
#   sh scripts/partition_models.sh [OUT_DIR]      (make check-partition-models; default out/)
#
# Env: PARTITION_MODELS the model names (default: every line of scripts/models.tsv),
#      PARTITION_BUDGET schedules the tuner measures per model (default 20),
#      PARTITION_TIMEOUT seconds of tuning per model (default 120).
# Writes OUT_DIR/partition_models.jsonl (one line per model and configuration: pass, how it
# was checked, subgraphs, blocks given a schedule) and prints one line per run and a
# summary; exit 1 when a run fails or does not pass.
set -u
out=${1:-out}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/ort_noise.sh
budget=${PARTITION_BUDGET:-20}
timeout=${PARTITION_TIMEOUT:-120}
models=${PARTITION_MODELS:-$(grep -v '^#' scripts/models.tsv | cut -f1)}
mkdir -p "$out"
jsonl="$out/partition_models.jsonl"
: > "$jsonl"
fail=0
for m in $models; do
  for cfg in untuned tuned; do
    log="$out/$m.partition.$cfg.tune.jsonl"
    rm -f "$log"
    if [ "$cfg" = untuned ]; then stage="ecg-partition"
    else stage="ecg-partition --tune --budget $budget --timeout $timeout --tune-log $log"; fi
    ECG_OUT="$out" ECG_STAGES="ecg-fuse|$stage" sh scripts/e2e.sh "$m" --runs 1 > "$out/$m.partition.$cfg.out" 2> "$out/$m.partition.$cfg.err"
    res=$(tail -n 1 "$out/$m.partition.$cfg.out")
    pass=$(printf '%s' "$res" | jq -r '.pass' 2>/dev/null || echo null)
    [ -n "$pass" ] || pass=null
    how=data
    if [ "$pass" != true ] && [ -d "$out/$m" ] && [ -f "$out/$m.data/test_data_set_0/output_0.pb" ]; then
      if ort_noise_pass "$out/$m" "$out/$m.data/test_data_set_0" "$out/$m.partition.$cfg.noise" "$out/$m.partition.$cfg.err"; then
        pass=true; how=ort_noise
      fi
    fi
    # what the partition put in the ECG that was lowered: subgraphs, and blocks with a schedule
    subgraphs=null; scheduled=null
    if [ -f "$out/$m.ecg" ]; then
      subgraphs=$(bin/ecg-dump --json "$out/$m.ecg" 2>/dev/null | jq '(.subgraphs // []) | length' 2>/dev/null || echo null)
      scheduled=$(bin/ecg-dump --json "$out/$m.ecg" 2>/dev/null | jq '[(.blocks // [])[] | select(.schedule)] | length' 2>/dev/null || echo null)
    fi
    measured=0
    [ -f "$log" ] && measured=$(grep -c . "$log")
    jq -cn --arg m "$m" --arg c "$cfg" --argjson p "$pass" --arg how "$how" --argjson s "${subgraphs:-null}" \
      --argjson k "${scheduled:-null}" --argjson n "$measured" \
      '{model: $m, config: $c, pass: $p, checked: $how, subgraphs: $s, blocks_scheduled: $k, log_lines: $n}' | tee -a "$jsonl"
    [ "$pass" = true ] || { fail=1; echo "partition_models.sh: $m $cfg failed (see $out/$m.partition.$cfg.err)" >&2; }
  done
done
echo "partition_models.sh: $(grep -c '"pass":true' "$jsonl") of $(grep -c . "$jsonl") runs pass" >&2
exit $fail
