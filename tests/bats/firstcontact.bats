#!/usr/bin/env bats
# A new user's first steps (issue 16): ecg-lower owns only what it writes
# (tools/lower/LOWERED.md "Ownership of DIR"), `ecg-bench --random N --ort` checks against
# ONNX Runtime, ecg-bench builds only lowered directories, messages name the user's path
# with the right exit code (usage 2, I/O 1), MARCH= builds portable code, and the
# README's pipeline runs as written.

load helpers

setup_file() {
  [ -x "$ROOT/bin/onnx2ecg" ] || return 0
  local sq="$ROOT/../shared/models/squeezenet1_1.onnx"
  [ -f "$sq" ] && "$ROOT/bin/onnx2ecg" "$sq" --input-shape input=1x3x224x224 -o "$BATS_FILE_TMPDIR/sq.ecg"
  local conv="$NODE_DATA/test_conv_with_strides_padding/model.onnx"
  [ -f "$conv" ] && "$ROOT/bin/onnx2ecg" "$conv" -o "$BATS_FILE_TMPDIR/conv.ecg"
  return 0
}

setup() {
  require_tools
  T="$BATS_TEST_TMPDIR"
  SQUEEZE="$SHARED_MODELS/squeezenet1_1.onnx"
  SQ="$BATS_FILE_TMPDIR/sq.ecg"
  CONV="$BATS_FILE_TMPDIR/conv.ecg"
  RELU="$NODE_DATA/test_relu/model.onnx"
}

# tree_sum DIR: one line per file under DIR (path, sha256), sorted; sub-folders included.
tree_sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); }

# tfjs_folder DIR: a TensorFlow.js model folder (model.json, a weight shard, a README, a sub-folder).
tfjs_folder() {
  mkdir -p "$1/assets"
  printf '{"format": "graph-model", "weightsManifest": [{"paths": ["group1-shard1of1.bin"]}]}\n' > "$1/model.json"
  head -c 4096 /dev/urandom > "$1/group1-shard1of1.bin"
  printf 'My model. Do not delete.\n' > "$1/README"
  printf 'label\n' > "$1/assets/labels.txt"
}

# ---------------------------------------------------------------- defect 1: ownership

@test "ecg-lower: a TF.js model folder given as -o is left byte-identical (exit 1, names the first foreign file)" {
  require_file "$CONV"
  tfjs_folder "$T/web"
  rm -r "$T/web/assets" # flat: model.json, the weight shard, a README
  before=$(tree_sum "$T/web")
  run --separate-stderr "$BIN/ecg-lower" -o "$T/web" "$CONV"
  echo "$stderr"
  diff <(echo "$before") <(tree_sum "$T/web")
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"$T/web: not empty and not an ecg-lower output"* ]]
  [[ "$stderr" == *"first foreign file: 'README'"* ]]
  [[ "$stderr" == *"--force"* ]]
  [ -z "$(ls -d "$T"/web.* 2>/dev/null)" ] # no temporary directory left beside it
  # with a sub-folder too
  tfjs_folder "$T/web2"
  before=$(tree_sum "$T/web2")
  run --separate-stderr "$BIN/ecg-lower" -o "$T/web2" "$CONV"
  diff <(echo "$before") <(tree_sum "$T/web2")
  [ "$status" -eq 1 ]
}

@test "ecg-lower: a file the user added to a lowered directory survives re-lowering (built or not)" {
  require_file "$CONV"
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  echo "my notes" > "$T/d/notes.txt"
  mkdir "$T/d/mine" && echo keep > "$T/d/mine/file"
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  [ "$(cat "$T/d/notes.txt")" = "my notes" ]
  [ "$(cat "$T/d/mine/file")" = "keep" ]
  make -s -C "$T/d" runner
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  [ "$(cat "$T/d/notes.txt")" = "my notes" ]
  [ "$(cat "$T/d/mine/file")" = "keep" ]
  [ ! -e "$T/d/runner" ] # a stale build product of the old output is the tool's: gone
  [ -f "$T/d/model.c" ]
  grep -qx 'file model.c' "$T/d/ecg-lower.manifest"
  ! grep -q 'notes.txt' "$T/d/ecg-lower.manifest" || false
}

@test "ecg-lower: its own earlier output (built) is replaced whole; the directory holds exactly the manifest's files" {
  require_file "$CONV"
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  make -s -C "$T/d"
  old=$(stat -c %i "$T/d")
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  [ "$(stat -c %i "$T/d")" != "$old" ] # a new directory renamed into place
  diff <(ls -A "$T/d" | grep -vx ecg-lower.manifest) <(sed -n 's/^file //p' "$T/d/ecg-lower.manifest" | sort)
  [ -z "$(ls -d "$T"/d.* 2>/dev/null)" ]
}

@test "ecg-lower -o LINK: a symbolic link to a directory stays a link; the files go into its target" {
  require_file "$CONV"
  mkdir "$T/real"
  ln -s "$T/real" "$T/link"
  "$BIN/ecg-lower" -o "$T/link" "$CONV"
  "$BIN/ecg-lower" -o "$T/link/" "$CONV"
  [ -L "$T/link" ]
  [ -f "$T/real/model.c" ] && [ -f "$T/real/ecg-lower.manifest" ] || false
  [ -z "$(ls -d "$T"/*ecg-lower-tmp* 2>/dev/null)" ]
}

@test "ecg-lower --force writes into a foreign folder, replacing same-named files and deleting nothing" {
  require_file "$CONV"
  tfjs_folder "$T/web"
  "$BIN/ecg-lower" --force -o "$T/web" "$CONV"
  [ "$(cat "$T/web/README")" = "My model. Do not delete." ]
  [ -f "$T/web/group1-shard1of1.bin" ] && [ -f "$T/web/assets/labels.txt" ] || false
  jq -e '.prefix == "ecg_model"' "$T/web/model.json" # model.json was overwritten: --force says so
}

@test "ecg-lower creates missing parent directories (mkdir -p); a file in the way is exit 1 naming it" {
  require_file "$CONV"
  "$BIN/ecg-lower" -o "$T/a/b/c/model" "$CONV"
  [ -f "$T/a/b/c/model/model.c" ]
  touch "$T/file"
  run --separate-stderr "$BIN/ecg-lower" -o "$T/file/model" "$CONV"
  [ "$status" -eq 1 ]
  [ "$stderr" = "ecg-lower: $T/file/model: '$T/file' is not a directory" ]
}

# ---------------------------------------------------------------- defect 2: --ort checks

@test "ecg-bench --random 1 --ort: pass true on a correct model; a flipped weight gives pass false and exit 1" {
  require_file "$SQ" "$ROOT/tools/bench/node_modules/onnxruntime-node"
  "$BIN/ecg-lower" -o "$T/sq" "$SQ"
  run --separate-stderr "$BIN/ecg-bench" "$T/sq" --random 1 --ort --runs 1 --warmup 0
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  jq -e '.pass == true and .reference == "ort" and .mismatches == 0' <<<"${lines[-1]}"
  # flip bit 6 of the first weight's top byte (its exponent): the model is now wrong
  local b
  b=$(od -An -tu1 -j3 -N1 "$T/sq/weights.bin" | tr -d ' ')
  printf "\\$(printf %o $((b ^ 64)))" | dd of="$T/sq/weights.bin" bs=1 seek=3 conv=notrunc 2>/dev/null
  run --separate-stderr "$BIN/ecg-bench" "$T/sq" --random 1 --ort --runs 1 --warmup 0
  echo "$output"; echo "$stderr"
  [ "$status" -eq 1 ]
  # the broken weight overflows; where it makes NaN (Winograd's transforms subtract infinities)
  # the error is unbounded and max_abs_err null, never a misleading 0
  jq -e '.pass == false and .reference == "ort" and .mismatches > 0 and (.max_abs_err == null or .max_abs_err > 0)' <<<"${lines[-1]}"
  [[ "$stderr" == *"FAIL"*"ONNX Runtime"* ]]
}

@test "ecg-bench without a reference: pass null, 'not verified' on stderr, exit 0; --check makes it exit 1" {
  require_file "$CONV"
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --random 1 --runs 1
  [ "$status" -eq 0 ]
  jq -e '.pass == null and .reference == null' <<<"$output"
  [[ "$stderr" == *"$T/d: not verified"* ]]
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --random 1 --runs 1 --check
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"not verified"* ]]
}

# ---------------------------------------------------------------- defect 3: bench builds only lowered dirs

@test "ecg-bench never runs a user's Makefile: a folder without a manifest is exit 1, nothing built" {
  mkdir "$T/proj"
  printf 'all:\n\ttouch ran-make\nrunner:\n\ttouch ran-make\n' > "$T/proj/Makefile"
  run --separate-stderr "$BIN/ecg-bench" "$T/proj" --random 1
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"$T/proj: not a lowered model"* ]]
  [ ! -e "$T/proj/ran-make" ]
  [ -z "$output" ]
}

@test "ecg-bench never runs a user's Makefile: one put in place of a lowered directory's is refused" {
  require_file "$CONV"
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  printf 'all:\n\ttouch ran-make\nrunner:\n\ttouch ran-make\n' > "$T/d/Makefile"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --random 1
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"$T/d/Makefile: not the Makefile ecg-lower wrote"* ]]
  [ ! -e "$T/d/ran-make" ]
}

@test "ecg-bench checks --data exists before building anything" {
  require_file "$CONV"
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  run --separate-stderr "$BIN/ecg-bench" "$T/d" --data "$T/no-such-data"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"--data $T/no-such-data: No such file or directory"* ]]
  [ ! -e "$T/d/runner" ] && [ ! -e "$T/d/model.o" ] || false
}

# ---------------------------------------------------------------- defect 4: the README runs as written

@test "README: the pipeline block runs verbatim in an empty directory holding model.onnx" {
  require_file "$SQUEEZE" "$ROOT/tools/bench/node_modules/onnxruntime-node"
  # the first ```sh block after "## The pipeline"
  awk '/^## The pipeline/ {p = 1} p && /^```sh$/ {b = 1; next} b && /^```$/ {exit} b' "$ROOT/README.md" > "$T/block.sh"
  cat "$T/block.sh"
  grep -q 'ecg-lower -o' "$T/block.sh"
  grep -q -- '--ort' "$T/block.sh"
  grep -q 'export PATH=\$PWD/bin:\$PATH' "$ROOT/README.md"
  mkdir "$T/user" && cp "$SQUEEZE" "$T/user/model.onnx"
  cd "$T/user"
  run --separate-stderr env PATH="$BIN:$PATH" bash -e -o pipefail "$T/block.sh"
  echo "exit $status"; echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  jq -e '.pass == true and .reference == "ort"' <<<"${lines[-1]}"
}

# ---------------------------------------------------------------- defect 5: messages and exit codes

@test "usage errors: a single-dash long option is exit 2 naming it as typed, in every tool" {
  run --separate-stderr "$BIN/onnx2ecg" -input-shape x=1 m.onnx
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"unknown option '-input-shape'"*"'--input-shape'"* ]]
  [[ "$stderr" != *"'onnx2ecg'"* ]]
  for t in onnx2ecg ecg-dump ecg-lower ecg-bench; do
    run --separate-stderr "$BIN/$t" -verbose x
    [ "$status" -eq 2 ] || { echo "$t: exit $status"; false; }
    [[ "$stderr" == *"'-verbose'"* ]] || { echo "$t: $stderr"; false; }
    run --separate-stderr "$BIN/$t" --help=yes
    [ "$status" -eq 2 ] || { echo "$t --help=yes: exit $status"; false; }
  done
}

@test "usage errors: an empty value (-o \"\", --data \"\") is exit 2 naming the option, in every tool" {
  require_file "$RELU" "$CONV"
  run --separate-stderr "$BIN/onnx2ecg" "$RELU" -o ""
  [ "$status" -eq 2 ] && [[ "$stderr" == *"'-o' needs a non-empty value"* ]] || false
  run --separate-stderr "$BIN/ecg-dump" "$CONV" -o ""
  [ "$status" -eq 2 ] && [[ "$stderr" == *"'-o' needs a non-empty value"* ]] || false
  run --separate-stderr "$BIN/ecg-lower" -o "" "$CONV"
  [ "$status" -eq 2 ] && [[ "$stderr" == *"'-o' needs a non-empty value"* ]] || false
  run --separate-stderr "$BIN/ecg-bench" "$T" --data ""
  [ "$status" -eq 2 ] && [[ "$stderr" == *"'--data' needs a non-empty value"* ]] || false
  run --separate-stderr "$BIN/onnx2ecg" "$RELU" --output=
  [ "$status" -eq 2 ] && [[ "$stderr" == *"'--output=' needs a non-empty value"* ]] || false
}

@test "options: --name=VALUE and --name VALUE are the same in every tool" {
  require_file "$RELU"
  "$BIN/onnx2ecg" "$RELU" --output="$T/a.ecg"
  "$BIN/onnx2ecg" "$RELU" --output "$T/b.ecg"
  cmp "$T/a.ecg" "$T/b.ecg"
  "$BIN/ecg-dump" --summary --output="$T/s.txt" "$T/a.ecg"
  grep -q '^nodes 1 ' "$T/s.txt"
  "$BIN/ecg-lower" --output="$T/d" --prefix=foo "$T/a.ecg"
  jq -e '.prefix == "foo"' "$T/d/model.json"
}

@test "a missing parent directory is exit 1 naming the path the user gave, never a temporary name" {
  require_file "$RELU" "$CONV"
  run --separate-stderr "$BIN/onnx2ecg" "$RELU" -o "$T/nodir/x.ecg"
  [ "$status" -eq 1 ]
  [ "$stderr" = "onnx2ecg: $T/nodir/x.ecg: No such file or directory" ]
  run --separate-stderr "$BIN/ecg-dump" "$CONV" -o "$T/nodir/x.json"
  [ "$status" -eq 1 ]
  [ "$stderr" = "ecg-dump: $T/nodir/x.json: No such file or directory" ]
}

@test "a full disk is exit 1 with 'No space left on device' (-o /dev/full), nothing left behind" {
  require_file "$RELU" "$CONV"
  # (a tool that renames a temporary file over /dev/full, as onnx2ecg did, replaces the device)
  [ -c /dev/full ] || { echo "/dev/full is not the full device: restore it (mknod -m 666 /dev/full c 1 7)"; false; }
  run --separate-stderr "$BIN/onnx2ecg" "$RELU" -o /dev/full
  [ "$status" -eq 1 ]
  [ "$stderr" = "onnx2ecg: /dev/full: No space left on device" ]
  run --separate-stderr "$BIN/ecg-dump" "$CONV" -o /dev/full
  [ "$status" -eq 1 ]
  [ "$stderr" = "ecg-dump: /dev/full: No space left on device" ]
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  run --separate-stderr bash -c "'$BIN/ecg-bench' '$T/d' --runs 1 > /dev/full"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"ecg-bench: stdout: No space left on device"* ]]
  [ -c /dev/full ] # written in place, never renamed over
  [ -z "$(ls /dev/full.* 2>/dev/null)" ]
}

# in_small_fs SIZE SCRIPT: run SCRIPT (bash) in a private mount namespace with a tmpfs of SIZE
# mounted on $T/mnt (DESIGN.md: `ulimit -f` raises SIGXFSZ, not ENOSPC).
in_small_fs() {
  mkdir -p "$T/mnt"
  unshare -Urm true 2>/dev/null || skip "no user namespaces here (unshare -Urm): cannot mount a small tmpfs"
  run --separate-stderr unshare -Urm bash -c "mount -t tmpfs -o size=$1 tmpfs '$T/mnt' && $2"
}

@test "ecg-lower on a full disk (256 KiB tmpfs): exit 1, 'No space left on device', names DIR, leaves nothing" {
  require_file "$SQ"
  in_small_fs 256k "'$BIN/ecg-lower' -o '$T/mnt/out/model' '$SQ'; rc=\$?; ls -A '$T/mnt/out'; exit \$rc"
  echo "$stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == "ecg-lower: $T/mnt/out/model/"*": No space left on device" ]]
  [[ "$stderr" != *ecg-lower-tmp* ]]
  [ -z "$output" ] # no partial output directory
}

@test "a read-only file system is exit 1 with 'Read-only file system' naming the user's path" {
  require_file "$RELU" "$CONV"
  in_small_fs 1m "mount -o remount,ro '$T/mnt' && { '$BIN/onnx2ecg' '$RELU' -o '$T/mnt/x.ecg'; echo \$?; '$BIN/ecg-lower' -o '$T/mnt/d' '$CONV'; echo \$?; }"
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ] && [ "${lines[1]}" = 1 ] || false
  [[ "$stderr" == *"onnx2ecg: $T/mnt/x.ecg: Read-only file system"* ]]
  [[ "$stderr" == *"ecg-lower: $T/mnt/d: Read-only file system"* ]]
}

@test "permission denied is exit 1 with 'Permission denied' naming the user's path" {
  require_file "$CONV"
  local d
  d=$(mktemp -d /tmp/ecg-eacces.XXXXXX)
  chmod 755 "$d" && mkdir "$d/ro" && chmod 555 "$d/ro"
  if [ "$(id -u)" = 0 ]; then # root ignores permissions: drop to nobody
    command -v setpriv >/dev/null || { rm -rf "$d"; skip "running as root without setpriv"; }
    run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN/ecg-lower" -o "$d/ro/model" < "$CONV"
  else
    run --separate-stderr "$BIN/ecg-lower" -o "$d/ro/model" < "$CONV"
  fi
  rm -rf "$d"
  echo "$stderr"
  [ "$status" -eq 1 ]
  [ "$stderr" = "ecg-lower: $d/ro/model: Permission denied" ]
}

@test "a closed pipe (EPIPE, SIGPIPE ignored) is exit 1 with 'Broken pipe', never 3" {
  require_file "$SQUEEZE"
  # the ECG (megabytes) overfills the pipe, so the write fails once `true` has exited
  bash -c "trap '' PIPE; '$BIN/onnx2ecg' '$SQUEEZE' --input-shape input=1x3x224x224 2>'$T/err'; echo \$? > '$T/rc'" | true
  cat "$T/err"
  [ "$(cat "$T/rc")" = 1 ]
  [ "$(cat "$T/err")" = "onnx2ecg: stdout: Broken pipe" ]
}

@test "ecg-dump model.onnx: names the file, does not suggest --no-validate" {
  require_file "$RELU"
  run --separate-stderr "$BIN/ecg-dump" "$RELU"
  [ "$status" -eq 1 ]
  [[ "$stderr" == "ecg-dump: $RELU: not an ECG stream"*"onnx2ecg"* ]]
  [[ "$stderr" != *"--no-validate"* ]]
}

# ---------------------------------------------------------------- defect 6: docs and MARCH

@test "MARCH=x86-64: the lowered code builds without AVX and passes its check against ONNX Runtime" {
  require_file "$SQ" "$ROOT/tools/bench/node_modules/onnxruntime-node"
  "$BIN/ecg-lower" -o "$T/d" "$SQ"
  grep -q '^MARCH ?= native$' "$T/d/Makefile"
  grep -q 'x86-64-v3' "$T/d/Makefile"
  run --separate-stderr env MARCH=x86-64 "$BIN/ecg-bench" "$T/d" --random 1 --ort --runs 1 --warmup 0
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  jq -e '.pass == true' <<<"${lines[-1]}"
  # no AVX register anywhere in the objects
  if command -v objdump >/dev/null; then
    [ "$(objdump -d "$T/d"/*.o | grep -c '%ymm\|%zmm')" -eq 0 ]
  fi
}

@test "docs: the link line (-fopenmp -lm) is in model.h and LOWERED.md; LOWERED.md names the files ecg-lower writes" {
  require_file "$CONV"
  "$BIN/ecg-lower" -o "$T/d" "$CONV"
  grep -q -- '-fopenmp .*lib.*\.a -lm' "$T/d/model.h"
  grep -q -- '-fopenmp .*lib.*\.a -lm' "$ROOT/tools/lower/LOWERED.md"
  grep -q 'MARCH=x86-64-v3' "$ROOT/tools/lower/LOWERED.md"
  ! grep -q 'ecg_runner\.c' "$ROOT/tools/lower/LOWERED.md" || false
  # every file name in LOWERED.md's first table (first column, backquoted, no wildcard) exists
  for f in $(sed -n '1,/^## /s/^| `\([^`*$]*\)` |.*/\1/p' "$ROOT/tools/lower/LOWERED.md"); do
    [ -e "$T/d/$f" ] || { echo "LOWERED.md names $f, which ecg-lower does not write"; false; }
  done
}
