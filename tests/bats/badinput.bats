#!/usr/bin/env bats
# The bad-input matrix (issue 10, item 4/"done means"): one table of hostile inputs per
# kind of reader, run through every tool that reads it (sanitizer builds).  Each case must
# give exit 1 with a one-line message "TOOL: ..." containing the expected words (exit 2
# for usage: a "TOOL: ..." line naming the problem, the usage text may come with it), no output file or directory, and no sanitizer report.  Failing cases are listed
# all at once.  Inputs: hand-made (here and tests/fuzz/seeds/, tests/fuzz/regress/).

load helpers

S="$BATS_TEST_DIRNAME/../fuzz/seeds"
R="$BATS_TEST_DIRNAME/../fuzz/regress"

setup_file() {
  [ -x "$ROOT/bin/onnx2ecg" ] || return 0
  local d="$BATS_FILE_TMPDIR/in"
  mkdir -p "$d"
  : > "$d/empty.ecg"
  printf 'ECGF' > "$d/magic-only.ecg"
  hdr() { printf 'ECGF'; printf "$1"; } # hdr 'VERSION FLAGS STORED RAW' as \x escapes
  hdr '\x63\x00\x00\x00\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > "$d/v99.ecg"
  hdr '\x01\x00\x04\x00\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > "$d/flags.ecg"
  hdr '\x01\x00\x00\x00\0\0\0\0\0\0\x01\0\0\0\0\0\0\0\x01\0' > "$d/too-large.ecg"
  hdr '\x01\x00\x00\x00\x04\0\0\0\0\0\0\0\x05\0\0\0\0\0\0\0' > "$d/lengths-differ.ecg"
  hdr '\x01\x00\x00\x00\x08\0\0\0\0\0\0\0\x08\0\0\0\0\0\0\0' > "$d/garbage.ecg"; printf '\xff\xff\xff\xff\xff\xff\xff\xff' >> "$d/garbage.ecg"
  hdr '\x01\x00\x01\x00\x08\0\0\0\0\0\0\0\x10\0\0\0\0\0\0\0' > "$d/bad-zstd.ecg"; printf 'notzstd!' >> "$d/bad-zstd.ecg"
  "$ROOT/bin/onnx2ecg" --no-infer "$S/onnx/huge-dims.onnx" -o "$d/huge-shape.ecg"
  "$ROOT/bin/onnx2ecg" --no-infer "$S/onnx/cycle.onnx" -o "$d/cycle.ecg"
  "$ROOT/bin/onnx2ecg" "$S/onnx/relu.onnx" -o "$d/good.ecg"
  head -c 30 "$d/good.ecg" > "$d/truncated.ecg"
  cp "$S/ecg/hdr-zstd-bomb.ecg" "$d/zstd-bomb.ecg"
}

setup() {
  require_san
  require_file "$SAN/ecg-fuse" "$SAN/ecg-rewrite" "$BATS_FILE_TMPDIR/in/good.ecg"
  T="$BATS_TEST_TMPDIR"
  IN="$BATS_FILE_TMPDIR/in"
}

# check_case TOOL WANT_EXIT WORDS ARGS...: run build-san/TOOL ARGS; append to $T/bad on any
# broken rule (exit, one-line "TOOL: " stderr naming WORDS, no output, sanitizers silent).
check_case() {
  local tool=$1 want=$2 words=$3 err st why=""
  shift 3
  rm -rf "$T/out" "$T/out.x"
  st=0; err=$("$SAN/$tool" "$@" 2>&1 >"$T/stdout") || st=$?
  if printf '%s' "$err" | grep -Eq 'Sanitizer|runtime error'; then why="sanitizer report"
  elif [ "$st" -ne "$want" ]; then why="exit $st, expected $want"
  elif [ "$want" -eq 1 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -ne 1 ]; then why="not one line"
  elif [ "$want" -eq 1 ] && ! printf '%s\n' "$err" | grep -q "^$tool: "; then why="message does not start with '$tool: '"
  elif [ "$want" -eq 2 ] && ! printf '%s\n' "$err" | grep "^$tool: " | grep -qiF -- "$words"; then why="no '$tool: ' line naming '$words' (usage text may follow)"
  elif ! printf '%s' "$err" | grep -qiF -- "$words"; then why="message lacks '$words'"
  elif [ -e "$T/out" ] || [ -e "$T/out.x" ]; then why="output written"
  elif [ "$want" -eq 1 ] && [ -s "$T/stdout" ]; then why="output on stdout"
  fi
  [ -z "$why" ] || printf '%s %s: %s: %s\n' "$tool" "$*" "$why" "$(printf '%s' "$err" | head -2 | tr '\n' ' ')" >> "$T/bad"
  echo x >> "$T/count"
}

report() {
  echo "$(wc -l < "$T/count") cases"
  if [ -s "$T/bad" ]; then cat "$T/bad"; return 1; fi
  [ "$(wc -l < "$T/count")" -ge 30 ] # the matrix cannot shrink unnoticed
}

# The hostile ECG inputs and the words their message must hold.
ECG_CASES='empty.ecg|empty input
magic-only.ecg|truncated ECG header
v99.ecg|version 99 is not supported
flags.ecg|unknown ECG header flags
too-large.ecg|payload length too large
lengths-differ.ecg|lengths differ
truncated.ecg|truncated ECG payload
garbage.ecg|protobuf decoding failed
bad-zstd.ecg|corrupt zstd payload
zstd-bomb.ecg|corrupt zstd payload: truncated frame
huge-shape.ecg|more than the limit of 2^40
cycle.ecg|cycle'

# ecg_matrix TOOL OUTARGS...: every ECG case (file and stdin), then the usage cases.
ecg_matrix() {
  local tool=$1 f words
  shift
  while IFS='|' read -r f words; do
    check_case "$tool" 1 "$words" "$@" "$IN/$f"
    check_case "$tool" 1 "$words" "$@" - < "$IN/$f"
  done <<<"$ECG_CASES"
  check_case "$tool" 1 "is this an ONNX file" "$@" "$S/onnx/relu.onnx"
  check_case "$tool" 1 "No such file" "$@" "$T/missing.ecg"
  check_case "$tool" 1 "Is a directory" "$@" "$T"
  check_case "$tool" 1 "node 'Reshape#4' (Reshape): cannot reshape 210 elements" "$@" "$R/ecg/reshape-prod-overflow"
  check_case "$tool" 2 "--bogus" "$@" --bogus "$IN/good.ecg"
  check_case "$tool" 2 "-bogus-opt" "$@" -bogus-opt "$IN/good.ecg"
  check_case "$tool" 2 "more than one" "$@" "$IN/good.ecg" "$IN/good.ecg"
}

@test "bad-input matrix: ecg-dump" { ecg_matrix ecg-dump -o "$T/out"; report; }
@test "bad-input matrix: ecg-rewrite" { ecg_matrix ecg-rewrite -o "$T/out"; report; }
@test "bad-input matrix: ecg-fuse" { ecg_matrix ecg-fuse -o "$T/out"; report; }
@test "bad-input matrix: ecg-lower" { ecg_matrix ecg-lower -o "$T/out"; report; }
@test "bad-input matrix: ecg-partition" {
  ecg_matrix ecg-partition -o "$T/out"
  check_case ecg-partition 2 "--strategy" -o "$T/out" --strategy nonsense "$IN/good.ecg"
  check_case ecg-partition 2 "--max-weight" -o "$T/out" --max-weight abc "$IN/good.ecg"
  check_case ecg-partition 1 "No such file" -o "$T/out" --weights "$T/missing.txt" "$IN/good.ecg"
  report
}
@test "bad-input matrix: ecg-prune" {
  ecg_matrix ecg-prune -o "$T/out"
  check_case ecg-prune 2 "--patterns" -o "$T/out" --patterns 0 "$IN/good.ecg"
  check_case ecg-prune 2 "--patterns" -o "$T/out" --patterns 57 "$IN/good.ecg"
  check_case ecg-prune 2 "--connectivity" -o "$T/out" --connectivity abc "$IN/good.ecg"
  report
}

# The hostile ONNX inputs (tests/fuzz/seeds/onnx, tests/fuzz/mkseeds.py) and their words.
ONNX_CASES='empty.onnx|not a valid ONNX model
cos-huge.onnx|(ConstantOfShape): output '"'"'y'"'"' would have 1125899906842624 elements
expand-huge.onnx|(Expand): output '"'"'y'"'"' would have
tile-huge.onnx|(Tile): output '"'"'y'"'"' would have 2199023255552 elements
huge-dims.onnx|more than 2^63 elements
int64max-dim.onnx|more than 2^63 elements
init-huge-dims.onnx|initializer '"'"'w'"'"' is too large
init-short.onnx|holds 8 bytes of raw data, but its dims 4x4 of float32 need 64
rank9.onnx|rank 9
reshape-neg.onnx|more than one -1
range-huge.onnx|range is too long
conv-zero-kernel.onnx|kernel_shape[0] must be >= 1
const-node.onnx|need 4
cycle.onnx|cycle
if-deep.onnx|nested more than 64 levels deep
attr-many-ints.onnx|perm has 300 entries'

@test "bad-input matrix: onnx2ecg" {
  local f words
  while IFS='|' read -r f words; do
    check_case onnx2ecg 1 "$words" -o "$T/out" "$S/onnx/$f"
    check_case onnx2ecg 1 "$words" -o "$T/out" - < "$S/onnx/$f"
  done <<<"$ONNX_CASES"
  check_case onnx2ecg 1 "not a valid ONNX model" -o "$T/out" "$IN/good.ecg"
  check_case onnx2ecg 1 "No such file" -o "$T/out" "$T/missing.onnx"
  check_case onnx2ecg 1 "Is a directory" -o "$T/out" "$T"
  check_case onnx2ecg 2 "--bogus" -o "$T/out" --bogus "$S/onnx/relu.onnx"
  check_case onnx2ecg 2 "-bogus-opt" -o "$T/out" -bogus-opt "$S/onnx/relu.onnx"
  check_case onnx2ecg 2 "--input-shape 'nonsense'" -o "$T/out" --input-shape nonsense "$S/onnx/relu.onnx"
  report
}

# ecg-bench: a lowered ONNX test_relu (x: float32 3x4x5) and hostile data sets.
@test "bad-input matrix: ecg-bench" {
  require_file "$SAN/ecg-bench" "$NODE_DATA/test_relu/model.onnx"
  local low="$T/low" good="$NODE_DATA/test_relu/test_data_set_0" f n k
  "$BIN/onnx2ecg" "$NODE_DATA/test_relu/model.onnx" | "$BIN/ecg-lower" -o "$low"
  "$BIN/ecg-bench" "$low" --data "$good" --runs 1 > /dev/null   # builds the runner once; the good data passes
  mkdir -p "$T/d"
  # each hostile TensorProto as the input, then as the expected output
  for f in "$S"/tensorpb/*.pb; do
    for k in input_0 output_0; do
      rm -rf "$T/d" && mkdir "$T/d" && cp "$good"/*.pb "$T/d/" && cp "$f" "$T/d/$k.pb"
      check_case ecg-bench 1 "$k.pb" "$low" --data "$T/d" --runs 1
    done
  done
  # the real input cut short, and random bytes
  for n in 0 3 9 40 200; do
    rm -rf "$T/d" && mkdir "$T/d" && cp "$good"/*.pb "$T/d/" && head -c $n "$good/input_0.pb" > "$T/d/input_0.pb"
    check_case ecg-bench 1 "input_0.pb" "$low" --data "$T/d" --runs 1
  done
  rm -rf "$T/d" && mkdir "$T/d" && cp "$good"/*.pb "$T/d/" && head -c 300 /dev/urandom > "$T/d/input_0.pb"
  check_case ecg-bench 1 "input_0.pb" "$low" --data "$T/d" --runs 1
  rm -f "$T/d/input_0.pb"
  check_case ecg-bench 1 "0 input_K.pb files for 1 model inputs" "$low" --data "$T/d" --runs 1
  check_case ecg-bench 1 "No such file" "$low" --data "$T/nodata" --runs 1
  # directories that are not a lowering of ours
  mkdir -p "$T/user" && printf 'all:\n\ttouch ran\n' > "$T/user/Makefile"
  check_case ecg-bench 1 "manifest" "$T/user" --runs 1
  [ ! -e "$T/user/ran" ] || echo "ecg-bench ran a user's Makefile" >> "$T/bad"
  check_case ecg-bench 1 "$T/missing" "$T/missing" --runs 1
  check_case ecg-bench 1 "$good/input_0.pb" "$good/input_0.pb" --runs 1
  # usage
  check_case ecg-bench 2 "--bogus" "$low" --bogus
  check_case ecg-bench 2 "-bogus-opt" "$low" -bogus-opt
  check_case ecg-bench 2 "--random" "$low" --data "$good" --random 1
  check_case ecg-bench 2 "--runs" "$low" --runs abc
  check_case ecg-bench 2 "--runs" "$low" --runs
  report
}
