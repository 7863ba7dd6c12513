#!/bin/sh
# prune_table.sh: the markdown tables of make bench-prune from prune_layers.sh's and
# prune_e2e.sh's JSON lines (PatDNN Fig. 2.13 per layer; FKW vs CSR index bytes, §2.5.3;
# end to end).   sh scripts/prune_table.sh LAYERS.jsonl... [-- E2E.jsonl]
set -eu
layers=""; e2e=""; sep=0
for f in "$@"; do
  if [ "$f" = -- ]; then sep=1; continue; fi
  if [ "$sep" = 1 ]; then e2e="$e2e $f"; else layers="$layers $f"; fi
done
echo "| layer | shape | compression | threads | dense ms | CSR ms | fkr ms | +LRE kernel ms | +LRE filter ms | +tuning ms | tuned tile (LxRxVxF) | fkr/dense | LRE-k/dense | LRE-f/dense | tuned/dense | tuned/CSR | LRE-k/fkr | LRE-f/LRE-k | tuned/LRE-f | loads k/f | FKW idx B | CSR idx B | saving |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# shellcheck disable=SC2086
cat $layers | jq -r '"| \(.layer) | \(.shape | map(tostring) | join("x")) | \(.compression)x | \(.threads) | \(.dense_ms) | \(.csr_ms) | \(.fkr_ms) | \(.lre_ms) | \(.lref_ms) | \(.fkw_ms) | " +
  (if .tile.lanes then "\(.tile.lanes)x\(.tile.rows)x\(.tile.vecs)x\(.tile.filters)" else "fkr loop" end) +
  " | \(.fkr_vs_dense) | \(.lre_vs_dense) | \(.lref_vs_dense) | \(.fkw_vs_dense) | \(.fkw_vs_csr) | \(.lre_vs_fkr) | \(.lref_vs_lre) | \(.fkw_vs_lref) | \(.kernels)/\(.lref_kernel_loads) | \(.fkw_index_bytes) | \(.csr_index_bytes) | \(.fkw_index_saving * 1000 | round / 10)% |"'
# shellcheck disable=SC2086
cat $layers | jq -s -r '"\nTimes: each kernel\u0027s \(.[0].stat // "least") over \(.[0].rounds) interleaved rounds of \(.[0].runs)-run means. CONV weights of these layers: \(map(.shape | reduce .[] as $d (1; . * $d)) | add) dense, \(map((.shape | reduce .[] as $d (1; . * $d)) / .compression) | add | round) kept, reduction \((map(.shape | reduce .[] as $d (1; . * $d)) | add) / (map((.shape | reduce .[] as $d (1; . * $d)) / .compression) | add) * 100 | round / 100)x." +
  "\nTotal index bytes: FKW \(map(.fkw_index_bytes) | add), CSR \(map(.csr_index_bytes) | add), saving \((1 - (map(.fkw_index_bytes) | add) / (map(.csr_index_bytes) | add)) * 1000 | round / 10)%; geometric-mean speedups: fkr/dense \([.[] | .fkr_vs_dense | log] | add / length | exp * 100 | round / 100), LRE-k/fkr \([.[] | .lre_vs_fkr | log] | add / length | exp * 100 | round / 100), LRE-f/LRE-k \([.[] | .lref_vs_lre | log] | add / length | exp * 100 | round / 100), tuned/LRE-f \([.[] | .fkw_vs_lref | log] | add / length | exp * 100 | round / 100), tuned/dense \([.[] | .fkw_vs_dense | log] | add / length | exp * 100 | round / 100), tuned/CSR \([.[] | .fkw_vs_csr | log] | add / length | exp * 100 | round / 100)"'
if [ -n "$e2e" ]; then
  echo
  echo "| model | threads | compression | dense kernels ms | fkw ms | ORT (pruned) ms | dense/fkw | ORT/fkw |"
  echo "|---|---|---|---|---|---|---|---|"
  # shellcheck disable=SC2086
  cat $e2e | jq -r '"| \(.model) | \(.threads) | \(.compression) | \(.dense_ms) | \(.fkw_ms) | \(.ort_pruned_ms) | \(.dense_over_fkw) | \(.ort_over_fkw) |"'
fi
