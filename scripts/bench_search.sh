#!/bin/sh
# The OCGGS evaluation (Fang et al., PVLDB 2020, Table 3 / Fig. 4): every ecg-rewrite
# --search algorithm on ResNet blocks (2, 4, 6, 8; input 1x256x14x14) and Inception-v3 E
# blocks (1-4; input 1x1280x8x8) made by tests/bats/mksearch.c, K = 10.
#
#   sh scripts/bench_search.sh [OUT_DIR]      (make bench-search; default out/)
#   sh scripts/bench_search.sh --graphs-only  (make cost-db: build/search/{resnet,inception}2.ecg)
#
# Env: SEARCH_BUDGET seconds per algorithm and graph (default 60; the paper's is 3600),
#      COST_DB the cost table (default build/search/cost.jsonl from `make cost-db`; when it
#      is missing the roofline model is used and the table says so; JSON lines keyed by
#      host, tools/rewrite/cost.c; the synthetic P100-like table is used on this host with
#      grep -v '^#' tests/search/p100_like.jsonl | jq -c --argjson h "$(bin/ecg-fuse --host-key)" '. + $h'),
#      SEARCH_GRAPHS the graphs (default "resnet:2 resnet:4 resnet:6 resnet:8 inception:1
#      inception:2 inception:3 inception:4"), SEARCH_ALGOS (default all six),
#      TABLE_ONLY=1 to redo the table from an existing OUT_DIR/bench_search.jsonl.
# Writes OUT_DIR/bench_search.jsonl (one line per graph and algorithm: the report's search
# entry plus the graph) and OUT_DIR/bench_search.md (the Table-3-shaped table), and prints
# the table.  Times are wall-clock search times on this machine, as loaded as it is.
set -eu
out=${1:-out}
[ "$out" = "--graphs-only" ] && out=out
bin=${BIN:-bin}
budget=${SEARCH_BUDGET:-60}
db=${COST_DB:-build/search/cost.jsonl}
graphs=${SEARCH_GRAPHS:-"resnet:2 resnet:4 resnet:6 resnet:8 inception:1 inception:2 inception:3 inception:4"}
algos=${SEARCH_ALGOS:-"enu pruning dpp taso greedy sampling"}
mkdir -p "$out" build/search
gen=build/search/mksearch
[ -x "$gen" ] && [ "$gen" -nt tests/bats/mksearch.c ] && [ "$gen" -nt build/libecg.a ] ||
  cc -std=gnu11 -O1 -Iformat -Ibuild/gen tests/bats/mksearch.c build/libecg.a -lprotobuf-c -lzstd -lm -o "$gen"
[ "${1:-}" = "--graphs-only" ] && { for k in resnet inception; do [ -f "build/search/${k}2.ecg" ] || "$gen" $k 2 "build/search/${k}2.ecg"; done; exit 0; }
dbarg=""
model="roofline (no cost table: run make cost-db)"
if [ -f "$db" ]; then
  hk=$("$bin/ecg-fuse" --host-key)
  nk=$(grep -v '^#' "$db" | jq -n --argjson h "$hk" '[inputs | select(.cpu == $h.cpu and .isa == $h.isa and .threads == $h.threads) | .signature] | unique | length')
  dbarg="--cost-db $db"
  model="measured table $db ($nk signatures of this host: $(printf '%s' "$hk" | jq -r '"\(.cpu), \(.isa), \(.threads) thread(s)"')), roofline where a key is missing"
fi
jsonl="$out/bench_search.jsonl"
[ "${TABLE_ONLY:-0}" = 1 ] || : > "$jsonl"
[ "${TABLE_ONLY:-0}" = 1 ] && graphs=""
for gspec in $graphs; do
  kind=${gspec%%:*}
  n=${gspec#*:}
  g=build/search/$kind$n.ecg
  [ -f "$g" ] && [ "$g" -nt "$gen" ] || "$gen" "$kind" "$n" "$g"
  for a in $algos; do
    # shellcheck disable=SC2086
    "$bin/ecg-rewrite" -q --passes subst --search "$a" --timeout "$budget" $dbarg --report "$out/.r.json" "$g" -o /dev/null
    jq -c --arg g "$kind$n" --arg k "$kind" --argjson n "$n" --argjson nodes "$(jq .before.nodes "$out/.r.json")" \
      '.rewrite.search.algorithms[0] + {graph: $g, kind: $k, blocks: $n, nodes: $nodes}' "$out/.r.json" >> "$jsonl"
    tail -1 "$jsonl" | jq -r '"bench-search: \(.graph) \(.name): \(.time_s) s, \(.explored) sequences, cost \(.initial_cost) -> \(.final_cost) ms, finished \(.finished)"' >&2
  done
done
rm -f "$out/.r.json"
{
  echo "# ecg-rewrite --search on the OCGGS benchmark graphs (K = 10, budget $budget s per run)"
  echo
  echo "Cost model: $model. Machine: $(nproc) cores, $(uname -m); loaded by other jobs while measured."
  echo "'>' marks a run stopped by the budget (its best-so-far cost is shown in parentheses; the"
  echo "paper prints '-' for exact methods that did not finish)."
  echo
  jq -rs --arg algos "$algos" '
    ($algos | split(" ")) as $A
    | group_by(.graph) | sort_by(.[0].kind, .[0].blocks) | .[] as $rows
    | ($rows | map({(.name): .}) | add) as $r
    | [$rows[0].graph, ($rows[0].nodes | tostring), ($rows[0].initial_cost * 1000 | round / 1000 | tostring)]
      + [$A[] as $a | $r[$a] | if . == null then "" else
          (if .finished then "" else ">" end) + (.time_s * 1e6 | round / 1e6 | tostring) + " s / "
          + (if .finished then "" else "(" end) + (.final_cost * 1000 | round / 1000 | tostring)
          + (if .finished then "" else ")" end) end]
      + [$A[] as $a | $r[$a] |
          if . == null then "" else (if .finished then "" else ">" end) + (.explored | tostring) end]
    | "| " + join(" | ") + " |"' "$jsonl" > "$out/.rows"
  hdr="| graph | nodes | initial cost (ms)"
  sep="|---|---|---"
  for a in $algos; do hdr="$hdr | $a time / cost (ms)"; sep="$sep|---"; done
  for a in $algos; do hdr="$hdr | $a sequences"; sep="$sep|---"; done
  echo "$hdr |"
  echo "$sep|"
  cat "$out/.rows"
  rm -f "$out/.rows"
} > "$out/bench_search.md"
cat "$out/bench_search.md"
