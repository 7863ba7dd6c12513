#!/usr/bin/env bats
# make install / uninstall (issue 11): the installed tools run from a temporary DESTDIR
# and find what they need (ecg-bench --ort: share/ecg/bench), the man pages render and
# their EXAMPLES run, libecg links through its pkg-config file, the five-line Makefile of
# examples/makefile builds two models with ecg.mk under make -j2 and links both into one
# program (and rebuilds only what changed), the ablation example prints its table, and
# bash completion completes options, plans and passes.

load helpers

setup_file() {
  ROOTDIR="$BATS_FILE_TMPDIR/root"
  export ROOTDIR P="$ROOTDIR/usr/local"
  make -C "$ROOT" -s install DESTDIR="$ROOTDIR" PREFIX=/usr/local > "$BATS_FILE_TMPDIR/install.log" 2>&1 ||
    { cat "$BATS_FILE_TMPDIR/install.log" >&2; return 1; }
}

setup() {
  T="$BATS_TEST_TMPDIR"
  CONV="$NODE_DATA/test_conv_with_strides_padding/model.onnx"
  RELU="$NODE_DATA/test_relu/model.onnx"
  require_file "$P/bin/onnx2ecg" "$CONV" "$RELU"
  # only the installed tools on PATH (no bin/ of the tree)
  export PATH="$P/bin:/usr/local/bin:/usr/bin:/bin"
  unset ECG_BENCH_ORT
  # The lowered directories build with -O1 and no -march here: these tests check what
  # gets built, where and whether it is right, not speed, and -O3 -march=native makes
  # each directory's GEMM take ~15 s to compile (its vector paths are tested elsewhere).
  export CFLAGS="-O1 -fopenmp"
}

@test "make install: tools, library, headers, pkg-config file, man pages, ecg.mk, completion" {
  local t
  for t in onnx2ecg ecg-dump ecg-rewrite ecg-fuse ecg-partition ecg-prune ecg-lower ecg-bench; do
    [ -x "$P/bin/$t" ]
    run "$P/bin/$t" --version
    [ "$status" -eq 0 ]
    [[ $output == "$t "* ]]
    [ -f "$P/share/man/man1/$t.1" ]
    [ -L "$P/share/bash-completion/completions/$t" ]
  done
  [ -f "$P/share/man/man7/ecg.7" ]
  [ -f "$P/lib/libecg.a" ] && [ -f "$P/lib/pkgconfig/ecg.pc" ] || false
  [ -f "$P/include/ecg/ecg.h" ] && [ -f "$P/include/ecg/ecg.pb-c.h" ] && [ -f "$P/include/ecg/ops.def" ] || false
  [ -f "$P/share/ecg/ecg.mk" ] && [ -f "$P/share/ecg/bench/ort_run.mjs" ] || false
}

@test "installed pipeline: onnx2ecg | ecg-rewrite | ecg-fuse | ecg-lower, ecg-bench --ort finds share/ecg/bench" {
  require_file "$ROOT/tools/bench/node_modules/onnxruntime-node"
  cd "$T"
  run bash -c "set -o pipefail; onnx2ecg '$CONV' | ecg-rewrite | ecg-fuse | ecg-lower -o out/conv"
  [ "$status" -eq 0 ]
  run ecg-bench out/conv --random 1 --ort --runs 2 --check
  [ "$status" -eq 0 ]
  [ "$(printf '%s\n' "$output" | tail -1 | jq -r '.pass, .reference' | tr '\n' ' ')" = "true ort " ]
}

@test "make uninstall removes what make install put there" {
  local d="$BATS_TEST_TMPDIR/root2"
  make -C "$ROOT" -s install DESTDIR="$d" PREFIX=/opt/ecg > /dev/null
  [ -x "$d/opt/ecg/bin/ecg-lower" ]
  make -C "$ROOT" -s uninstall DESTDIR="$d" PREFIX=/opt/ecg
  run find "$d" -type f -o -type l
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "man pages render with man -l and through MANPATH" {
  local p
  for p in "$P"/share/man/man1/*.1 "$P/share/man/man7/ecg.7"; do
    run man -l "$p"
    [ "$status" -eq 0 ]
    [[ $output == *NAME* ]] && [[ $output == *EXAMPLES* ]] || false
  done
  run env MANPATH="$P/share/man" man ecg-lower
  [ "$status" -eq 0 ]
  [[ $output == *"lower an ECG into C sources"* ]]
  run env MANPATH="$P/share/man" man 7 ecg
  [[ $output == *"ECG.MK"* ]]
}

@test "every man page's EXAMPLES run with the installed tools (model.onnx = a small Conv model)" {
  require_file "$ROOT/tools/bench/node_modules/onnxruntime-node"
  cd "$T"
  cp "$CONV" model.onnx
  local page n=0
  # ecg(7) first: it makes model.ecg and out/model, which the others use
  for page in ecg.7 onnx2ecg.1 ecg-dump.1 ecg-rewrite.1 ecg-fuse.1 ecg-partition.1 ecg-prune.1 ecg-lower.1 ecg-bench.1; do
    awk '/^# EXAMPLES/ { ex = 1; next } /^# / { ex = 0 } ex && /^```/ { code = !code; next } ex && code' \
      "$ROOT/man/$page.scd" > "ex-$page.sh"
    [ -s "ex-$page.sh" ] || { echo "$page: no example" >&2; return 1; }
    run bash -e -o pipefail "ex-$page.sh"
    [ "$status" -eq 0 ] || { echo "$page example failed:" >&2; cat "ex-$page.sh" >&2; echo "$output" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -eq 9 ]
  [ -s model.svg ] && grep -q '<svg' model.svg || false
  [ -f out/model/libnet.a ]
}

@test "libecg links through pkg-config (the installed headers and library)" {
  cd "$T"
  cat > count.c <<'EOF'
#include <stdio.h>
#include "ecg.h"
int main(int argc, char **argv) {
  ecg_graph *g = NULL;
  ecg_err e = {0};
  if (argc != 2 || ecg_read_path(argv[1], &g, &e)) { fprintf(stderr, "count: %s\n", e.msg); return 1; }
  printf("nodes %zu tensors %zu\n", g->n_nodes, g->n_tensors);
  ecg_graph_free(g);
  return 0;
}
EOF
  export PKG_CONFIG_SYSROOT_DIR="$ROOTDIR" PKG_CONFIG_PATH="$P/lib/pkgconfig"
  run pkg-config --modversion ecg
  [ "$output" = "$(sed -n 's/^#define ECG_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/format/ecg.h")" ]
  # the README's line, with count.c as prog.c
  local line
  line=$(grep -m1 '^cc prog.c \$(pkg-config' "$ROOT/README.md")
  [ -n "$line" ]
  cp count.c prog.c
  run bash -c "$line -o count"
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  onnx2ecg "$CONV" -o conv.ecg
  run ./count conv.ecg
  [ "$status" -eq 0 ]
  [ "$output" = "$(ecg-dump --summary conv.ecg | awk '{print "nodes " $2 " tensors " $4}')" ]
}

@test "examples/makefile: a five-line Makefile with ecg.mk builds two models with make -j2 and links both" {
  cd "$T"
  cp "$ROOT/examples/makefile/Makefile" "$ROOT/examples/makefile/app.c" .
  cp "$RELU" relu.onnx
  cp "$CONV" conv.onnx
  [ "$(grep -c . Makefile)" -le 5 ]
  # the README shows this very Makefile and command
  diff Makefile <(awk '/^```make$/ { m = 1; next } m && /^```/ { exit } m' "$ROOT/README.md")
  grep -qF 'Run it as `make -j2 app ECG_PREFIX=/usr/local`' "$ROOT/README.md"
  run make -j2 app ECG_PREFIX="$P"
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  [ -f build/relu/librelu.a ] && [ -f build/conv/libconv.a ] || false
  run ./app
  [ "$status" -eq 0 ]
  [ "$output" = "relu ok conv ok" ]
  # nothing changed: no tool runs again
  run make -j2 ECG_PREFIX="$P" app
  [ "$status" -eq 0 ]
  ! printf '%s\n' "$output" | grep -E 'onnx2ecg|ecg-lower|ecg-fuse|cc ' || false
  # conv's fusion options change: conv's stages, lowering, library and the program are
  # rebuilt, relu is not touched
  run make -j2 ECG_PREFIX="$P" app conv_ecg-fuse_FLAGS='--plan fixed'
  [ "$status" -eq 0 ]
  printf '%s\n' "$output" | grep -q 'ecg-fuse --plan fixed'
  printf '%s\n' "$output" | grep -q 'ecg-lower --prefix conv'
  ! printf '%s\n' "$output" | grep -E 'onnx2ecg|prefix relu' || false
  run ./app
  [ "$output" = "relu ok conv ok" ]
  # a touched ONNX file re-imports that model only
  touch relu.onnx
  run make -j2 ECG_PREFIX="$P" conv_ecg-fuse_FLAGS='--plan fixed'
  printf '%s\n' "$output" | grep -q 'onnx2ecg relu.onnx'
  ! printf '%s\n' "$output" | grep -q 'onnx2ecg conv.onnx' || false
}

@test "ecg.mk: a failing stage stops make and leaves no output under the target's name" {
  cd "$T"
  cp "$RELU" relu.onnx
  printf 'ECG_MODELS = relu\nrelu_STAGES = ecg-fuse\nrelu_ecg-fuse_FLAGS = --plan bogus\ninclude %s\n' "$P/share/ecg/ecg.mk" > Makefile
  run make
  [ "$status" -ne 0 ]
  [[ $output == *"--plan"* ]]
  [ ! -e build/relu.ecg ] && [ ! -e build/relu.ecg.tmp ] && [ ! -d build/relu ] || false
}

@test "examples/ablation (README): all 12 variants built, checked against ONNX Runtime, one table" {
  require_file "$ROOT/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$ROOT/tools/bench/node_modules/onnxruntime-node" "$ROOT/bin/ecg-bench"
  cd "$ROOT"
  # the README's command as written (the tree's tools), with 3 timed runs and a private
  # build folder given through the environment
  local line
  line=$(grep -m1 '^make -C examples/ablation MODEL=\$PWD/models/ch_ppocr' README.md)
  [ -n "$line" ]
  PATH="$ROOT/bin:$PATH" RUNS=3 ECG_BUILD="$T/abl" run bash -c "$line"
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  local j="$T/abl/ablation.json"
  [ "$(jq length "$j")" -eq 12 ]
  [ "$(jq -r '[.[].variant] | join(" ")' "$j")" = "r0_none_i0 r0_none_i1 r0_fixed_i0 r0_fixed_i1 r0_dnnfusion_i0 r0_dnnfusion_i1 r1_none_i0 r1_none_i1 r1_fixed_i0 r1_fixed_i1 r1_dnnfusion_i0 r1_dnnfusion_i1" ]
  [ "$(jq '[.[] | select(.pass == true and .ort_median_ms > 0 and .median_ms > 0)] | length' "$j")" -eq 12 ]
  # each variant is what its name says: rewrite folds the BatchNormalizations (fewer
  # nodes), --plan none lowers one kernel per node but its one zero-copy Reshape, the fusion
  # plans fewer kernels than --plan none after the same rewrite
  [ "$(jq 'map(select(.variant == "r1_none_i0"))[0].nodes < map(select(.variant == "r0_none_i0"))[0].nodes' "$j")" = true ]
  [ "$(jq '[.[] | select(.plan == "none" and .intensive == false) | .kernels == .nodes - 1] | all' "$j")" = true ]
  [ "$(jq '(map({key: .variant, value: .kernels}) | from_entries) as $k
            | [.[] | select(.plan != "none") | .kernels < $k[(.variant | split("_")[0]) + "_none_i0"]] | all' "$j")" = true ]
  # the markdown table printed on stdout: a header, a rule and one row per variant
  [ "$(printf '%s\n' "$output" | grep -c '^| r[01]_')" -eq 12 ]
  diff <(printf '%s\n' "$output" | grep '^|') "$T/abl/ablation.md"
}

@test "make viz MODEL=mobilenet_v2 (README): an SVG with fusion-block clusters, shapes, FLOPs and the legend" {
  require_file "$SHARED_MODELS/mobilenet_v2.onnx" "$ROOT/bin/ecg-fuse"
  command -v dot
  run make -C "$ROOT" -s viz MODEL=mobilenet_v2
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  local svg="$ROOT/out/viz/mobilenet_v2.svg" dotf="$ROOT/out/viz/mobilenet_v2.dot"
  grep -q '<svg' "$svg"
  # one cluster per fusion block, plus the legend
  [ "$(grep -c '^  subgraph cluster_[0-9]' "$dotf")" -eq "$(ecg-dump "$ROOT/out/viz/mobilenet_v2.ecg" | jq '.blocks | length')" ]
  grep -q 'mapping type (DNNFusion)' "$svg"
  grep -q '1x32x112x112' "$svg"
  grep -q 'M FLOPs' "$svg"
  grep -q 'label="block 0: Many-to-Many, [0-9]* ops, [0-9.]* M FLOPs"' "$dotf"
  run make -C "$ROOT" -s viz MODEL=no_such_model
  [ "$status" -ne 0 ]
  [[ $output == *"no model 'no_such_model'"* ]]
}

@test "bash completion: options from --help, --plan values, --passes lists" {
  # shellcheck disable=SC1091
  source "$P/share/bash-completion/completions/ecg"
  comp() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ecg_complete_tool "$1"; echo "${COMPREPLY[*]}"; }
  [ "$(comp ecg-fuse --pl)" = "--plan" ]
  [ "$(comp ecg-fuse --plan '')" = "dnnfusion fixed none" ]
  [ "$(comp ecg-lower --arch a)" = "aarch64" ]
  [ "$(comp ecg-partition --strategy '')" = "ago relay" ]
  [ "$(comp ecg-rewrite --passes fold,bn)" = "fold,bnfold" ]
  [[ " $(comp ecg-rewrite --passes '') " == *" math "* ]]
  [[ " $(comp ecg-bench --o) " == *" --ort "* ]]
  [[ " $(comp onnx2ecg --) " == *" --input-shape "* ]]
}

@test "-q and -v on every tool; -q silences notes, never errors" {
  local t
  for t in onnx2ecg ecg-dump ecg-rewrite ecg-fuse ecg-partition ecg-prune ecg-lower ecg-bench; do
    run "$t" -q --version
    [ "$status" -eq 0 ]
    run "$t" --quiet --version
    [ "$status" -eq 0 ]
    run "$t" -v --version
    [ "$status" -eq 0 ]
    "$t" --help | grep -q -- '-q, --quiet'
  done
  cd "$T"
  onnx2ecg "$CONV" | ecg-fuse -o fused.ecg
  # ecg-rewrite's note about the fusion blocks it drops (a model whose plan has blocks)
  require_file "$ROOT/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
  onnx2ecg "$ROOT/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" --input-shape x=1x3x48x192 | ecg-fuse -o blocks.ecg
  [ "$(ecg-dump blocks.ecg | jq '.blocks | length')" -gt 0 ]
  run --separate-stderr ecg-rewrite blocks.ecg -o r.ecg
  [ "$status" -eq 0 ] && [[ $stderr == *"note: "*"fusion block(s) dropped"* ]] || false
  run --separate-stderr ecg-rewrite -q blocks.ecg -o r.ecg
  [ "$status" -eq 0 ] && [ -z "$stderr" ] || false
  # ecg-bench's "not verified" note; with --check it is an error, and -q keeps it
  ecg-lower fused.ecg -o d
  run --separate-stderr ecg-bench d --random 1 --runs 1
  [ "$status" -eq 0 ] && [[ $stderr == *"not verified"* ]] || false
  run --separate-stderr ecg-bench d --random 1 --runs 1 -q
  [ "$status" -eq 0 ] && [ -z "$stderr" ] || false
  run --separate-stderr ecg-bench d --random 1 --runs 1 -q --check
  [ "$status" -eq 1 ] && [[ $stderr == *"not verified"* ]] || false
  # errors are printed under -q
  run --separate-stderr ecg-fuse -q --plan bogus fused.ecg
  [ "$status" -eq 2 ] && [[ $stderr == *"unknown plan 'bogus'"* ]] || false
}

@test "colour only on a terminal, never with NO_COLOR" {
  command -v script
  local esc=$'\033['
  # stderr on a terminal (script(1) gives the tool a pseudo-terminal)
  run script -qc "ecg-dump --bogus" /dev/null
  [[ $output == *"${esc}1;31mecg-dump${esc}0m: unknown option '--bogus'"* ]]
  run env NO_COLOR=1 script -qc "ecg-dump --bogus" /dev/null
  [[ $output == *"ecg-dump: unknown option '--bogus'"* ]]
  [[ $output != *"$esc"* ]]
  # stderr to a pipe or file: plain text
  run --separate-stderr ecg-dump --bogus
  [[ $stderr == *"ecg-dump: unknown option '--bogus'"* ]]
  [[ $stderr != *"$esc"* ]]
}

@test "conformance.sh: a progress count on stderr only when stderr is a terminal" {
  command -v script
  cd "$T"
  local only='^test_(relu|abs)$'
  # stderr on a terminal, stdout to a file: "conformance: K/2" rewritten in place
  run script -qc "sh '$ROOT/tools/bench/conformance.sh' --suite node --only '$only' --json c.json > out.txt" /dev/null
  [ "$status" -eq 0 ]
  [[ $output == *$'\r'"conformance: 2/2"* ]]
  [ "$(grep -c '^PASS' out.txt)" -eq 2 ]
  # stderr to a pipe: no progress
  run --separate-stderr sh "$ROOT/tools/bench/conformance.sh" --suite node --only "$only" --json c.json
  [ "$status" -eq 0 ]
  [[ $stderr != *"conformance: 1/2"* ]] && [[ $stderr != *$'\r'* ]] || false
}
