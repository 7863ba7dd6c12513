#!/bin/sh
# Fill ecg-rewrite's cost table (--cost-db, format in tools/rewrite/cost.c) by timing, with
# ecg-bench on this machine, every node key the subst search meets on the given graphs
# (OCGGS §2.1: node cost = its measured run time).
#
#   sh scripts/cost_db.sh DB.txt GRAPH.ecg...
#
# For each graph, the searches (pruning, taso and sampling, K = 10, at most
# COST_DB_SEARCH_S seconds each, default 20) log the keys missing from DB.txt and write
# one single-node ECG per key (ecg-rewrite --cost-keys --cost-graphs); each is lowered and
# timed (median of COST_DB_RUNS runs, default 20, after 3 warm-ups) and "KEY = MS" is
# appended to DB.txt.  Keys already in DB.txt are not measured again, so the table only
# grows; delete it to measure afresh.  Exit 1 when a tool fails.
set -eu
[ $# -ge 2 ] || { echo "usage: sh scripts/cost_db.sh DB.txt GRAPH.ecg..." >&2; exit 2; }
db=$1
shift
bin=${BIN:-bin}
search_s=${COST_DB_SEARCH_S:-20}
runs=${COST_DB_RUNS:-20}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/costdb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -f "$db" ] || printf '# ecg-rewrite cost table: KEY = median ms (ecg-bench, %s runs, %s)\n' "$runs" "$(uname -m)" > "$db"
for g in "$@"; do
  for a in pruning taso sampling; do
    rm -rf "$tmp/k" && mkdir -p "$tmp/k"
    "$bin/ecg-rewrite" -q --passes subst --search "$a" --timeout "$search_s" --cost-db "$db" \
      --cost-keys "$tmp/k/keys.tsv" --cost-graphs "$tmp/k" "$g" -o /dev/null
    while IFS='	' read -r id key; do
      awk -F' = ' -v k="$key" '$1 == k { f = 1 } END { exit !f }' "$db" && continue
      [ -f "$tmp/k/$id.ecg" ] || { echo "cost_db: no graph for '$key' (skipped)" >&2; continue; }
      rm -rf "$tmp/l"
      "$bin/ecg-lower" -o "$tmp/l" "$tmp/k/$id.ecg"
      ms=$("$bin/ecg-bench" "$tmp/l" --random 1 --runs "$runs" --warmup 3 -q | jq -r '.median_ms')
      printf '%s = %s\n' "$key" "$ms" >> "$db"
      echo "cost_db: $key = $ms ms" >&2
    done < "$tmp/k/keys.tsv"
  done
done
