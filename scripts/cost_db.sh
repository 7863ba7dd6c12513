#!/bin/sh
# Fill ecg-rewrite's cost table (--cost-db; JSON lines keyed by cpu, isa, threads, device and
# signature, the format of measured costs in DESIGN.md, described in tools/rewrite/cost.c)
# by timing, with ecg-bench on this machine, every node key the subst search meets on the
# given graphs (OCGGS §2.1: node cost = its measured run time).
#
#   sh scripts/cost_db.sh DB.jsonl GRAPH.ecg...
#
# For each graph, the searches (pruning, taso and sampling, K = 10, at most
# COST_DB_SEARCH_S seconds each, default 20) log the keys missing from DB.txt and write
# one single-node ECG per key (ecg-rewrite --cost-keys --cost-graphs); each is lowered and
# timed (median of COST_DB_RUNS runs, default 20, after 3 warm-ups, OMP_NUM_THREADS
# threads, default 1) and one record {"cpu", "isa", "threads", "device", "kind":
# "node_time", "signature", "ms", "runs"} is appended to DB.jsonl.  Keys already there for
# this host (ecg-fuse --host-key) are not measured again, so the table only grows; samples
# of other machines stay in the file and ecg-rewrite ignores them.  Exit 1 when a tool fails.
set -eu
[ $# -ge 2 ] || { echo "usage: sh scripts/cost_db.sh DB.jsonl GRAPH.ecg..." >&2; exit 2; }
db=$1
shift
bin=${BIN:-bin}
search_s=${COST_DB_SEARCH_S:-20}
runs=${COST_DB_RUNS:-20}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/costdb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
key=$("$bin/ecg-fuse" --host-key)
touch "$db"
for g in "$@"; do
  for a in pruning taso sampling; do
    rm -rf "$tmp/k" && mkdir -p "$tmp/k"
    "$bin/ecg-rewrite" -q --passes subst --search "$a" --timeout "$search_s" --cost-db "$db" \
      --cost-keys "$tmp/k/keys.tsv" --cost-graphs "$tmp/k" "$g" -o /dev/null
    while IFS='	' read -r id sig; do
      grep -v '^#' "$db" | jq -e --argjson h "$key" --arg s "$sig" -n \
        '[inputs | select(.signature == $s and .cpu == $h.cpu and .isa == $h.isa and .threads == $h.threads)] | length > 0' \
        > /dev/null && continue
      [ -f "$tmp/k/$id.ecg" ] || { echo "cost_db: no graph for '$sig' (skipped)" >&2; continue; }
      rm -rf "$tmp/l"
      "$bin/ecg-lower" -o "$tmp/l" "$tmp/k/$id.ecg"
      ms=$("$bin/ecg-bench" "$tmp/l" --random 1 --runs "$runs" --warmup 3 --threads "$OMP_NUM_THREADS" -q | jq -r '.median_ms')
      jq -cn --argjson h "$key" --arg s "$sig" --argjson ms "$ms" --argjson runs "$runs" \
        '$h + {kind: "node_time", signature: $s, ms: $ms, runs: $runs}' >> "$db"
      echo "cost_db: $sig = $ms ms" >&2
    done < "$tmp/k/keys.tsv"
  done
done
