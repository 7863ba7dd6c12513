#!/bin/sh
# prune_e2e.sh: a pattern-pruned model end to end (PatDNN, Niu dissertation §2.6.2), side
# by side: the pruned model with dense kernels (--sparse dense: what the pruned model
# costs without the sparse kernels; the same work as the unpruned model), with FKW
# kernels (--sparse fkw, each layer's tile from TUNE when given), and ONNX Runtime on the
# same pruned export (ecg-bench --ort), at each thread count of THREADS. Every build is
# checked against ONNX Runtime's outputs of the exported pruned model (--data) first.
#
#   sh scripts/prune_e2e.sh NAME          a model of scripts/models.tsv (e.g. resnet18)
# Env: THREADS (default "1 2"), ROUNDS (default 5: rounds of interleaved runs, dense,
#      fkw, dense, fkw, ...), RUNS (per ecg-bench call, default 10), OUT (default
#      out/prune_e2e), TUNE (a --sparse-tune file, e.g. prune_layers.sh's; its records of
#      1 thread are used for every thread count: the lowering runs with OMP_NUM_THREADS=1),
#      OMP_WAIT_POLICY (passed to the runs and recorded: on a machine with more runnable
#      threads than cores, "passive" keeps OpenMP's idle threads from spinning away the
#      time slices of the working ones).
# Prints one JSON line per thread count: medians over the rounds of each build's median,
# and the ratios dense/fkw and ort/fkw (> 1: fkw faster).
set -eu
cd "$(dirname "$0")/.."
TOP=$PWD
PATH="$TOP/bin:$PATH"
THREADS=${THREADS:-"1 2"}; ROUNDS=${ROUNDS:-5}; RUNS=${RUNS:-10}; OUT=${OUT:-out/prune_e2e}; TUNE=${TUNE:-}
case $OUT in /*) ;; *) OUT=$TOP/$OUT ;; esac
name=${1:?usage: sh scripts/prune_e2e.sh NAME}
d="$OUT/$name"
. "$TOP/scripts/prune_common.sh"
prune_model "$name" "$d"
rm -rf "$d/dense" "$d/fkw"
ecg-fuse "$d/p.ecg" | ecg-lower --sparse dense -o "$d/dense"
if [ -n "$TUNE" ]; then ecg-fuse "$d/p.ecg" | OMP_NUM_THREADS=1 ecg-lower --sparse fkw --sparse-tune "$TUNE" -o "$d/fkw"
else ecg-fuse "$d/p.ecg" | ecg-lower --sparse fkw -o "$d/fkw"; fi
tuned=$(jq '[.sparse_layers[] | select(.tuned)] | length' "$d/fkw/model.json")
med() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for t in $THREADS; do
  : > "$d/dense_$t.txt"; : > "$d/fkw_$t.txt"; : > "$d/ort_$t.txt"
  r=1
  while [ "$r" -le "$ROUNDS" ]; do
    for k in dense fkw; do
      res=$(ecg-bench "$d/$k" --data "$d/data" --ort --runs "$RUNS" --threads "$t" 2>/dev/null) || true
      [ "$(printf '%s' "$res" | jq -r .pass)" = true ] || { echo "prune_e2e: $k at $t threads: check failed: $res" >&2; exit 1; }
      printf '%s' "$res" | jq -r .median_ms >> "$d/${k}_$t.txt"
      printf '%s' "$res" | jq -r '.ort_median_ms // empty' >> "$d/ort_$t.txt"
    done
    r=$((r + 1))
  done
  dn=$(med < "$d/dense_$t.txt"); fk=$(med < "$d/fkw_$t.txt"); ort=$(med < "$d/ort_$t.txt")
  jq -nc --arg m "$name" --argjson t "$t" --argjson dn "$dn" --argjson fk "$fk" --argjson ort "${ort:-null}" --argjson r "$ROUNDS" \
     --argjson tuned "$tuned" --slurpfile p "$d/prune.json" --arg wp "${OMP_WAIT_POLICY:-}" --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
    '{model: $m, threads: $t, rounds: $r, compression: $p[0].prune.compression, tuned_layers: $tuned,
      omp_wait_policy: (if $wp == "" then null else $wp end), loadavg_at_end: ($load | tonumber),
      dense_ms: $dn, fkw_ms: $fk, ort_pruned_ms: $ort, dense_over_fkw: ($dn / $fk * 100 | round / 100),
      ort_over_fkw: (if $ort then ($ort / $fk * 100 | round / 100) else null end)}'
done
