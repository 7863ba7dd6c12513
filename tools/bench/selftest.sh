#!/bin/sh
# selftest.sh [ECG_BENCH]: end-to-end checks of ecg-bench against a hand-made lowered
# directory (a runner for ONNX's test_add: sum = x + y, float32 3x4x5), without ecg-lower.
# Needs libonnx-testdata; the --ort and make_data checks need `make setup` (skipped
# otherwise). Exit 0 when every check passes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$here/../../bin/ecg-bench}
ADD=/usr/share/libonnx-testdata/data/node/test_add
T=$(mktemp -d "${TMPDIR:-/tmp}/ecg-bench-selftest.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
check() { # check NAME EXPECTED-RC ACTUAL-RC
	if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1 (exit $3, expected $2)"; fails=$((fails + 1)); fi
}

mkdir "$T/low"
cat > "$T/low/ecg_runner.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define N 60
static float x[N], y[N], s[N];
static int load(const char *p, float *b) {
  FILE *f = fopen(p, "rb"); if (!f) return 1;
  size_t n = fread(b, 4, N, f); int extra = fgetc(f); fclose(f);
  return n != N || extra != EOF;
}
int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--info")) {
    printf("input\tx\t1\t3x4x5\ninput\ty\t1\t3x4x5\noutput\tsum\t1\t3x4x5\n"); return 0; }
  int runs = 1, have = 0; const char *out = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1], *eq = strchr(v, '=');
    if (!strcmp(a, "--runs")) runs = atoi(v);
    else if (!strcmp(a, "--in") && eq) {
      if (load(eq + 1, !strncmp(v, "x=", 2) ? x : y)) { fprintf(stderr, "runner: bad %s\n", v); return 1; }
      have++;
    } else if (!strcmp(a, "--out") && eq) out = eq + 1;
  }
  if (have != 2) { fprintf(stderr, "runner: missing input\n"); return 1; }
  for (int i = 0; i < N; i++) s[i] = x[i] + y[i];
#ifdef BUG
  s[7] += 0.5f;
#endif
  for (int r = 0; r < runs; r++) printf("time_ms 0.001\n");
  if (out) { FILE *f = fopen(out, "wb"); fwrite(s, 4, N, f); fclose(f); }
  return 0;
}
EOF
printf 'runner: ecg_runner.c\n\t$(CC) -O1 -o $@ ecg_runner.c\n' > "$T/low/Makefile"
printf '{"model": "test_add", "source": "%s/model.onnx"}\n' "$ADD" > "$T/low/model.json"

out=$("$B" "$T/low" --data "$ADD/test_data_set_0" --runs 3); check "test_add passes" 0 $?
case $out in *'"pass":true'*'"runs":3'*) echo "ok   JSON: $out" ;; *) echo "FAIL JSON: $out"; fails=$((fails + 1)) ;; esac
"$B" "$T/low" --runs 2 >/dev/null; check "random inputs (no check)" 0 $?
rm -f "$T/low/runner"; "$B" "$T/low" --data "$ADD/test_data_set_0" --cc "cc -DBUG" >/dev/null 2>&1; check "wrong output -> 1" 1 $?
rm -f "$T/low/runner"; "$B" "$T/low" --cc "cc -include /nonexistent.h" >/dev/null 2>&1; check "build failure -> 1" 1 $?
rm -f "$T/low/runner"
"$B" "$T/low" --data /usr/share/libonnx-testdata/data/node/test_add_bcast/test_data_set_0 >/dev/null 2>&1; check "shape mismatch -> 1" 1 $?
"$B" "$T/low" --bogus >/dev/null 2>&1; check "usage -> 2" 2 $?
"$B" "$T/low" --data "$ADD/test_data_set_0" --random 1 >/dev/null 2>&1; check "--data with --random -> 2" 2 $?

# malformed .pb files: truncations and random bytes never crash
mkdir "$T/bad"; cp "$ADD"/test_data_set_0/* "$T/bad/"
crash=0
for len in 0 1 5 9 17 40 100 200 253; do
	head -c $len "$ADD/test_data_set_0/input_0.pb" > "$T/bad/input_0.pb"
	"$B" "$T/low" --data "$T/bad" --runs 1 >/dev/null 2>&1; rc=$?
	[ $rc -le 1 ] || crash=1
done
for i in 1 2 3 4 5 6 7 8; do
	head -c $((i * 37)) /dev/urandom > "$T/bad/output_0.pb"
	"$B" "$T/low" --data "$T/bad" --runs 1 >/dev/null 2>&1; rc=$?
	[ $rc -le 1 ] || crash=1
done
check "malformed .pb never crashes" 0 $crash

# --save round trip, and the same seeded inputs as make_data.mjs
"$B" "$T/low" --random 0 --save "$T/saved" --runs 1 >/dev/null; check "--save" 0 $?
"$B" "$T/low" --data "$T/saved" --runs 1 >/dev/null; check "saved data passes" 0 $?
if [ -d "$here/node_modules/onnxruntime-node" ] && command -v node >/dev/null; then
	node "$here/make_data.mjs" --model "$ADD/model.onnx" --out "$T/md" 2>/dev/null
	cmp -s "$T/md/input_0.pb" "$T/saved/input_0.pb" && cmp -s "$T/md/input_1.pb" "$T/saved/input_1.pb"
	check "--random 0 == make_data.mjs --seed 0" 0 $?
	"$B" "$T/low" --data "$T/md" --runs 1 >/dev/null; check "make_data.mjs data passes" 0 $?
	out=$("$B" "$T/low" --data "$ADD/test_data_set_0" --ort --runs 3); check "--ort" 0 $?
	case $out in *'"ratio":'[0-9]*) echo "ok   ratio present" ;; *) echo "FAIL no ratio: $out"; fails=$((fails + 1)) ;; esac
else
	echo "skip make_data/--ort checks (run make setup)"
fi
[ $fails -eq 0 ] && echo "selftest: all passed" || echo "selftest: $fails failed"
[ $fails -eq 0 ]
