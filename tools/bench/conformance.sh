#!/bin/sh
# conformance.sh: ONNX's own backend test suite through the whole pipeline.
#
#   conformance.sh [--suite NAME]... [--only REGEX] [--fast] [--jobs N] [--timeout S]
#                  [--stages 'ecg-fuse --plan fixed|STAGE ARGS...']
#                  [--json FILE] [--data-root DIR] [--bin DIR] [-q]
#
# For every test directory (model.onnx + test_data_set_N/) of the chosen suites under
# DATA-ROOT (default /usr/share/libonnx-testdata/data, Debian's libonnx-testdata):
#   onnx2ecg model.onnx | ecg-lower -o TMP && ecg-bench TMP --data test_data_set_N
# for every data set, with ONNX's tolerances (rtol 1e-3, atol 1e-7; per-test
# exceptions in tolerance() below, each with its reason), N tests in parallel, each
# test bounded by --timeout seconds (convert + lower + build + every data set).
#
# One line per test:  STATUS SUITE/TEST TIME REASON, where STATUS is
#   PASS         every data set matches
#   FAIL         a mismatch (worst tensor and error), a build failure, or a tool that
#                rejected a valid model without saying "unsupported"
#   UNSUPPORTED  a tool exited 1 saying the operator/dtype/attribute is unsupported
#                ("support" in its message), has no emitter, or needs static shapes
#   CRASH        a tool died on a signal, or exited 2 (usage) / 3 (internal) / other
#   TIMEOUT      the test ran past --timeout
# then totals per suite, and a JSON summary (--json, default conformance.json):
#   {"suites": {NAME: {pass, fail, unsupported, crash, timeout, total}},
#    "tests": [{"suite", "test", "status", "reason", "time_s"}]}
# Exit: 0 when there is no FAIL, CRASH or TIMEOUT; 1 otherwise; 2 usage.
#
# --fast keeps, over the suites in order, the first test (in name order) of every operator type not
# already covered (onnx2ecg --model-ops): every op type at least once, for CI.
# Generated C is compiled with $CONFORMANCE_CFLAGS (default -O1 -fopenmp: the lowered
# Makefile honours CFLAGS from the environment); OMP_NUM_THREADS=1 per test.
set -u
here=$(cd "$(dirname "$0")" && pwd)
self="$here/$(basename "$0")"
ROOT=${ECG_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
BINDIR=$here/../../bin
TIMEOUT=120

# ---------------------------------------------------------------- one test (worker)
# tolerance TEST -> "RTOL ATOL": ONNX's defaults (onnx/backend/test/runner: rtol=1e-3,
# atol=1e-7) unless the test has a documented exception.  A test directory with a file
# `tolerance` ("RTOL ATOL"; the generated opset tests of gen_opset_tests.mjs) uses that.
tolerance() {
	case $1 in
	# Sums of many float terms whose expected values are near 0 (ONNX Runtime's
	# backend-test overrides use atol 1e-5..1e-4 for the same reason).
	*) echo "1e-3 1e-7" ;;
	esac
}

# classify TOOL RC ERRFILE: print "STATUS<TAB>REASON" for a failed tool.
classify() {
	msg=$(grep -v '^[[:space:]]*$' "$3" | head -n 3 | tr '\t\n' '  ' | sed "s/^$1: //; s/ *\$//" | cut -c1-300)
	if [ "$2" -eq 1 ]; then
		if printf '%s' "$msg" | grep -qiE 'support|no kernel emitter|not static'; then
			printf 'UNSUPPORTED\t%s: %s\n' "$1" "$msg"
		elif printf '%s' "$msg" | grep -qE 'failed \(exit (1(29|[3-9][0-9])|2[0-9][0-9])\)'; then
			printf 'CRASH\t%s: %s\n' "$1" "$msg" # the runner died on a signal
		else
			printf 'FAIL\t%s: %s\n' "$1" "$msg"
		fi
	elif [ "$2" -ge 128 ]; then
		printf 'CRASH\t%s: killed by signal %d %s\n' "$1" $(($2 - 128)) "$msg"
	else
		printf 'CRASH\t%s: exit %d: %s\n' "$1" "$2" "$msg"
	fi
}

# run_one DIR TMP: the test's status line on stdout ("STATUS<TAB>REASON").
run_one() {
	dir=$1 tmp=$2 name=$(basename "$1")
	"$BINDIR/onnx2ecg" "$dir/model.onnx" > "$tmp/g.ecg" 2> "$tmp/err"
	rc=$?; [ $rc -eq 0 ] || { classify onnx2ecg $rc "$tmp/err"; return; }
	if [ -n "$STAGES" ]; then # optimising stages between the converter and the lowering
		old_ifs=$IFS; IFS='|'
		for stage in $STAGES; do
			IFS=$old_ifs
			set -- $stage
			st=$1; shift
			"$BINDIR/$st" "$@" < "$tmp/g.ecg" > "$tmp/s.ecg" 2> "$tmp/err"
			rc=$?; [ $rc -eq 0 ] || { classify "$st" $rc "$tmp/err"; return; }
			mv "$tmp/s.ecg" "$tmp/g.ecg"
		done
		IFS=$old_ifs
	fi
	"$BINDIR/ecg-lower" -o "$tmp/m" < "$tmp/g.ecg" 2> "$tmp/err"
	rc=$?; [ $rc -eq 0 ] || { classify ecg-lower $rc "$tmp/err"; return; }
	if [ -f "$dir/tolerance" ]; then set -- $(cat "$dir/tolerance"); else set -- $(tolerance "$name"); fi
	n=0
	for ds in "$dir"/test_data_set_*; do
		[ -d "$ds" ] || continue
		n=$((n + 1))
		"$BINDIR/ecg-bench" "$tmp/m" --data "$ds" --runs 1 --warmup 0 --rtol "$1" --atol "$2" \
			> "$tmp/out" 2> "$tmp/err"
		rc=$?
		[ $rc -eq 0 ] && continue
		if [ $rc -eq 1 ] && grep -q '"pass":false' "$tmp/out"; then
			printf 'FAIL\t%s: %s\n' "$(basename "$ds")" "$(jq -r '"\(.worst_tensor) max_abs_err \(.max_abs_err) max_rel_err \(.max_rel_err) mismatches \(.mismatches)"' "$tmp/out" 2>/dev/null)"
		else
			classify ecg-bench $rc "$tmp/err"
		fi
		return
	done
	[ $n -gt 0 ] && printf 'PASS\t\n' || printf 'FAIL\tno test_data_set_N\n'
}

# worker SUITE DIR: run one test under the time bound; one TSV result line on stdout.
worker() {
	suite=$1 dir=$2 name=$(basename "$2")
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/ecg-conf.XXXXXX") || { printf 'CRASH\t%s\t%s\t0\tmktemp failed\n' "$suite" "$name"; return; }
	t0=$(date +%s.%N)
	CONF_BIN=$BINDIR OMP_NUM_THREADS=1 CFLAGS=${CONFORMANCE_CFLAGS:--O1 -fopenmp} \
		timeout -k 5 "$TIMEOUT" sh "$self" --run-one "$dir" "$tmp" > "$tmp/status" 2> /dev/null
	rc=$?
	t1=$(date +%s.%N)
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		line=$(printf 'TIMEOUT\tover %ss' "$TIMEOUT")
	else
		line=$(head -n 1 "$tmp/status")
		[ -n "$line" ] || line=$(printf 'CRASH\tconformance worker exit %d' $rc)
	fi
	rm -rf "$tmp"
	printf '%s\t%s\t%s\t%s\t%s\n' "${line%%	*}" "$suite" "$name" "$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")" "$(printf '%s' "$line" | cut -f2-)"
}

case ${1:-} in
--run-one) shift; BINDIR=${CONF_BIN:-$BINDIR}; run_one "$@"; exit 0 ;;
--worker) shift; TIMEOUT=$1 BINDIR=$2; shift 2; worker "$@"; exit 0 ;;
esac

# ---------------------------------------------------------------- driver
# One function, parsed whole before it runs: editing this file during a run is safe.
main() {
usage() {
	sed -n '2,/^set -u/p' "$self" | sed '$d; s/^# \{0,1\}//'
}
SUITES="" ONLY="" FAST=0 JOBS=2 JSON=conformance.json QUIET=0 STAGES=${STAGES:-}
while [ $# -gt 0 ]; do
	case $1 in
	--suite) SUITES="$SUITES ${2:?--suite needs a name}"; shift 2 ;;
	--only) ONLY=${2:?--only needs a regex}; shift 2 ;;
	--fast) FAST=1; shift ;;
	--stages) STAGES=${2?--stages needs a value}; shift 2 ;;
	--jobs|-j) JOBS=${2:?}; shift 2 ;;
	--timeout) TIMEOUT=${2:?}; shift 2 ;;
	--json) JSON=${2:?}; shift 2 ;;
	--data-root) ROOT=${2:?}; shift 2 ;;
	--bin) BINDIR=${2:?}; shift 2 ;;
	-q) QUIET=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "conformance.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
	esac
done
export STAGES
[ -n "$SUITES" ] || SUITES="node pytorch-converted pytorch-operator simple"
BINDIR=$(cd "$BINDIR" 2>/dev/null && pwd) || { echo "conformance.sh: no bin dir (run make)" >&2; exit 2; }
for t in onnx2ecg ecg-lower ecg-bench; do
	[ -x "$BINDIR/$t" ] || { echo "conformance.sh: $BINDIR/$t missing (run make)" >&2; exit 2; }
done
command -v jq > /dev/null || { echo "conformance.sh: needs jq" >&2; exit 2; }
[ -d "$ROOT" ] || { echo "conformance.sh: no test data at $ROOT (apt-get install libonnx-testdata)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ecg-conformance.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
# a snapshot of the tools and of this script, so a rebuild or an edit during the run
# cannot mix versions
mkdir "$work/bin" && cp "$BINDIR/onnx2ecg" "$BINDIR/ecg-lower" "$BINDIR/ecg-bench" "$work/bin/" || exit 2
for st in $(printf '%s' "$STAGES" | tr '|' '\n' | awk '{print $1}'); do
	cp "$BINDIR/$st" "$work/bin/" || { echo "conformance.sh: stage '$st' not in $BINDIR" >&2; exit 2; }
done
cp "$self" "$work/conformance.sh" || exit 2
BINDIR=$work/bin self=$work/conformance.sh
: > "$work/list"
: > "$work/seen"
for s in $SUITES; do
	[ -d "$ROOT/$s" ] || { echo "conformance.sh: no suite '$s' under $ROOT" >&2; exit 2; }
	for d in "$ROOT/$s"/*/; do
		d=${d%/}
		[ -f "$d/model.onnx" ] || continue
		n=$(basename "$d")
		if [ -n "$ONLY" ]; then printf '%s\n' "$n" | grep -qE "$ONLY" || continue; fi
		if [ $FAST -eq 1 ]; then
			new=0
			for op in $("$BINDIR/onnx2ecg" --model-ops "$d/model.onnx" 2> /dev/null | awk '{print $2 "/" $1}'); do
				grep -qxF "$op" "$work/seen" || { echo "$op" >> "$work/seen"; new=1; }
			done
			[ $new -eq 1 ] || continue
		fi
		printf '%s %s\n' "$s" "$d" >> "$work/list"
	done
done
total=$(wc -l < "$work/list")
[ "$QUIET" -eq 1 ] || echo "conformance: $total tests, $JOBS jobs, timeout ${TIMEOUT}s" >&2

# one result line per test as it finishes: STATUS SUITE/TEST TIME REASON
# (a progress count on stderr, rewritten in place, only when stderr is a terminal and stdout
# is not: on a terminal stdout the result lines show the progress themselves)
progress=0
[ "$QUIET" -eq 0 ] && [ -t 2 ] && ! [ -t 1 ] && progress=1
xargs -r -P "$JOBS" -L 1 sh "$self" --worker "$TIMEOUT" "$BINDIR" < "$work/list" |
	{ done_n=0; while IFS='	' read -r st su te ti re; do
		printf '%s\t%s\t%s\t%s\t%s\n' "$st" "$su" "$te" "$ti" "$re" >> "$work/results"
		printf '%-11s %s/%s %.1fs %s\n' "$st" "$su" "$te" "$ti" "$re"
		done_n=$((done_n + 1))
		[ $progress -eq 0 ] || printf '\rconformance: %d/%d' "$done_n" "$total" >&2
	done; [ $progress -eq 0 ] || printf '\n' >&2; }
[ -f "$work/results" ] || : > "$work/results"

# totals per suite, and the JSON summary
sort -t '	' -k2,2 -k3,3 "$work/results" > "$work/sorted"
jq -R -s '
  [split("\n")[] | select(length > 0) | split("\t")
   | {suite: .[1], test: .[2], status: .[0], reason: (.[4] // ""), time_s: ((.[3] | tonumber? ) // 0)}] as $t
  | {suites: ($t | group_by(.suite) | map({key: .[0].suite, value: {
        pass: map(select(.status == "PASS")) | length,
        fail: map(select(.status == "FAIL")) | length,
        unsupported: map(select(.status == "UNSUPPORTED")) | length,
        crash: map(select(.status == "CRASH")) | length,
        timeout: map(select(.status == "TIMEOUT")) | length,
        total: length}}) | from_entries),
     tests: $t}' "$work/sorted" > "$work/json" && mv "$work/json" "$JSON"
jq -r '.suites | to_entries[] | "\(.key): \(.value.pass)/\(.value.total) pass, \(.value.fail) fail, \(.value.unsupported) unsupported, \(.value.crash) crash, \(.value.timeout) timeout"' "$JSON"
bad=$(jq '[.tests[] | select(.status == "FAIL" or .status == "CRASH" or .status == "TIMEOUT")] | length' "$JSON")
[ "$QUIET" -eq 1 ] || echo "conformance: summary in $JSON" >&2
[ "$bad" -eq 0 ]
}
main "$@"
exit $?
