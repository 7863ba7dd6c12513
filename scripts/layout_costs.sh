#!/bin/sh
# Measure the layout costs of GCD²'s selection (ecg-lower --layout --layout-db DB) on this
# machine: every convolution an NCHWc block could run and every activation tensor's reorder
# (NCHW <-> NCHWc8/NCHWc16) that the given graphs need (ecg-lower --layout-keys), timed by
# rt_nchwc_test --costs (the runtime's kernels, median of 15 runs) at OMP_NUM_THREADS
# threads (default 1), appended to DB as JSON lines keyed by cpu, isa, threads and device
# (DESIGN.md "Measured costs"; ecg-fuse --host-key gives this host's key) and by the
# runtime's source id, "rt" (scripts/rt_id.sh). Signatures already in DB for this host and
# runtime are not measured again.
#
#   sh scripts/layout_costs.sh DB.jsonl GRAPH.ecg...
#
# Exit 1 when a tool fails.
set -eu
[ $# -ge 2 ] || { echo "usage: sh scripts/layout_costs.sh DB.jsonl GRAPH.ecg..." >&2; exit 2; }
db=$1
shift
bin=${BIN:-bin}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
rt=${LAYOUT_RT_DIR:-build/rt-native}
# the runtime these costs are of: its source id (scripts/rt_id.sh, as in every lowered
# directory); a test binary built from other sources is rebuilt, and lines measured with
# another runtime are measured again (ecg-lower reads only lines of its own runtime's id)
# shellcheck disable=SC2046 # the Makefile's order (byte order): the id ecg-lower embeds
id=$(sh scripts/rt_id.sh $(printf '%s\n' tools/lower/runtime/*.c tools/lower/runtime/*.h | LC_ALL=C sort) | sed -n 's/.*ECG_RT_SOURCE_ID "\(.*\)".*/\1/p')
if [ ! -x "$rt/rt_nchwc_test" ] || ! grep -q "\"$id\"" "$rt/ecg_rt_id.h" 2>/dev/null; then
  sh tests/unit/rt_build.sh native "$rt"
fi
key=$("$bin/ecg-fuse" --host-key)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layoutdb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
touch "$db"
jq -r --argjson k "$key" --arg rt "$id" 'select(.cpu == $k.cpu and .isa == $k.isa and .threads == $k.threads and .rt == $rt) | .signature' "$db" |
  sort -u > "$tmp/have"
for g in "$@"; do "$bin/ecg-lower" --layout-keys "$g"; done | sort -u > "$tmp/want"
comm -23 "$tmp/want" "$tmp/have" > "$tmp/todo"
echo "layout_costs.sh: $(wc -l < "$tmp/todo") signatures to measure ($(wc -l < "$tmp/want") needed)" >&2
"$rt/rt_nchwc_test" --costs < "$tmp/todo" > "$tmp/out"
jq -c --argjson k "$key" --arg rt "$id" '$k + {rt: $rt} + .' "$tmp/out" >> "$db"
