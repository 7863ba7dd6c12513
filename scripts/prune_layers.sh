#!/bin/sh
# prune_layers.sh: per-layer times of the pattern-sparse kernels in the shape of PatDNN's
# Fig. 2.13 (Niu dissertation §2.6.3): the dense conv, the CSR baseline, and the FKW
# kernel at each optimisation level (ecg-lower --sparse fkr, lre = + kernel-level LRE,
# lre-filter = + filter-level LRE, fkw = the tile, filters per tile included, tuned per
# layer on this machine), every variant checked against ONNX Runtime on the exported
# pruned model (ecg-bench --data) before it is timed.
#
#   sh scripts/prune_layers.sh vgg [SCALE]    the VGG-16 layers L1-L9 of Table 2.6 (tools/prune/gen_layers.mjs),
#                                            spatial size divided by SCALE (default 1)
#   sh scripts/prune_layers.sh model NAME     every pattern-pruned conv of models.tsv's NAME
# Env: THREADS (default 1), RUNS (default 3), ROUNDS (default 8), OUT (default out/prune_layers),
#      STAT (median or min over the rounds, default median), LAYERS (vgg: which of 1-9, default all), TILES (the tuner's candidate tiles LANESxROWSxVECS[xFILTERS]), TUNE (the tuning file the
#      measurements are appended to, default $OUT/sparse_tune.jsonl; `ecg-lower --sparse-tune`).
# Times: each kernel's mean over RUNS runs of the runner's per-kernel profile (the sparse
# kernels include their input padding), the median (STAT=min: the least) of ROUNDS rounds
# in which the variants run in turn (interleaved, so a load change hits all variants alike). Tuning (§2.5.5, exhaustive over TILES and
# the fkr loop order, measured here): the layer is lowered with each candidate tile
# (--sparse lre --sparse-tile) and with --sparse fkr, each conv's kernel time recorded as
# one JSON line keyed by cpu, isa, threads and the layer's signature (DESIGN.md "Measured
# costs"); the fkw variant then takes each layer's fastest candidate from that file.
# Prints one JSON line per layer: times in ms, speedups of each level over dense, over
# CSR and over the previous level (fkr_vs_dense, lre_vs_fkr, lref_vs_lre, fkw_vs_lref, ...;
# lref = lre-filter), and the kernel loads of kernel- and filter-level LRE.
set -eu
cd "$(dirname "$0")/.."
TOP=$PWD
PATH="$TOP/bin:$PATH"
THREADS=${THREADS:-1}; RUNS=${RUNS:-3}; ROUNDS=${ROUNDS:-8}; OUT=${OUT:-out/prune_layers}; STAT=${STAT:-median}
TILES=${TILES:-"16x4x2 16x4x1 16x2x2 16x6x1 16x1x4 8x4x2 8x4x1 16x4x2x2 16x2x2x2 16x4x1x2 16x2x1x4 16x1x2x4 8x4x1x2 8x2x1x4"}
case $OUT in /*) ;; *) OUT=$TOP/$OUT ;; esac
TUNE=${TUNE:-$OUT/sparse_tune.jsonl}
mode=${1:-vgg}
mkdir -p "$OUT"
export OMP_NUM_THREADS=$THREADS

# check DIR DATA: the lowered DIR passes against ONNX Runtime's outputs in DATA
check() {
  r=$(ecg-bench "$1" --data "$2" --runs 1 --threads "$THREADS" 2>/dev/null) || true
  [ "$(printf '%s' "$r" | jq -r .pass)" = true ] || { echo "prune_layers: $1: check failed: $r" >&2; exit 1; }
}

# inputs DIR DATA: raw little-endian inputs for the runner from DATA's TensorProtos; sets "$@"-ready args in DIR/in_args
inputs() {
  node --input-type=module -e "
    import fs from 'node:fs'; import { onnxRoot } from '$TOP/tools/bench/onnx_build.mjs';
    const T = onnxRoot().lookupType('onnx.TensorProto');
    for (const f of fs.readdirSync('$2').filter((f) => f.startsWith('input_'))) {
      const t = T.decode(fs.readFileSync('$2/' + f));
      fs.writeFileSync('$1/' + t.name + '.bin', t.rawData);
      console.log('--in ' + t.name + '=$1/' + t.name + '.bin');
    }" > "$1/in_args"
}

# build D NAME ECG DATA ecg-lower-args...: lower into D/NAME and check it
build() {
  d=$1; name=$2; ecg=$3; data=$4; shift 4
  rm -rf "${d:?}/$name"
  ecg-fuse "$ecg" | ecg-lower "$@" -o "$d/$name"
  check "$d/$name" "$data"
  VARIANTS="$VARIANTS $name"
}

# profile D: ROUNDS rounds, each running every built variant once in turn (interleaved, so
# a load change on this machine hits all variants alike), RUNS timed runs per profile
profile() {
  r=1
  while [ "$r" -le "$ROUNDS" ]; do
    for name in $VARIANTS; do
      # shellcheck disable=SC2046
      (cd "$1/$name" && ./runner --threads "$THREADS" --warmup 2 --runs "$RUNS" --profile "$1/prof_${name}_$r.txt" $(cat "$1/in_args") >/dev/null)
    done
    r=$((r + 1))
  done
}

# kt D NAME CONV: CONV's kernel time (ms) in variant NAME: the median (STAT=median, the
# default) or the least (STAT=min) of the rounds' means
kt() {
  cat "$1"/prof_"$2"_*.txt | awk -F'\t' -v n="$3" '!/^#/ { k = split($NF, a, " "); for (i = 1; i <= k; i++) if (a[i] == n) print $1 + 0 }' |
    sort -g | if [ "$STAT" = min ]; then head -1; else awk '{a[NR] = $1} END {if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; fi
}

# records D NAME: NAME's measured kernel time of every sparse conv as tuning records
records() {
  jq -c --arg th "$THREADS" '.sparse_host as $h | .sparse_layers[] | {cpu: $h.cpu, isa: $h.isa, threads: ($th | tonumber), device: "cpu",
      kind: "sparse_conv", signature} + (if .level == "fkr" then {loop: "l1"} else {loop: "reg", lanes, rows, vecs, filters} end) + {node}' "$1/$2/model.json" |
  while read -r rec; do
    nd=$(printf '%s' "$rec" | jq -r .node)
    ms=$(kt "$1" "$2" "$nd")
    [ -n "$ms" ] && printf '%s' "$rec" | jq -c --argjson ms "$ms" --argjson runs "$RUNS" --argjson rounds "$ROUNDS" \
      'del(.node) + {ms: $ms, runs: $runs, rounds: $rounds}' >> "$TUNE"
  done
}

# measure D ECG DATA: the tuning candidates (every tile of TILES and the fkr loop order),
# then the levels with fkw taking the fastest candidate; one JSON line per conv
measure() {
  d=$1; ecg=$2; data=$3
  inputs "$d" "$data"
  rm -f "$d"/prof_*.txt
  VARIANTS=""
  build "$d" fkr "$ecg" "$data" --sparse fkr
  for tile in $TILES; do build "$d" "tile_$tile" "$ecg" "$data" --sparse lre --sparse-tile "$tile"; done
  profile "$d"
  for name in $VARIANTS; do records "$d" "$name"; done
  VARIANTS=""
  build "$d" dense "$ecg" "$data" --sparse dense
  build "$d" csr "$ecg" "$data" --sparse csr
  build "$d" lre "$ecg" "$data" --sparse lre
  build "$d" lref "$ecg" "$data" --sparse lre-filter
  build "$d" fkw "$ecg" "$data" --sparse fkw --sparse-tune "$TUNE"
  VARIANTS="$VARIANTS fkr"
  rm -f "$d"/prof_fkr_*.txt
  profile "$d"
  jq -c '.sparse_layers[]' "$d/fkw/model.json" | while read -r L; do
    nd=$(printf '%s' "$L" | jq -r .node)
    jq -nc --argjson L "$L" --arg th "$THREADS" --argjson dn "$(kt "$d" dense "$nd")" --argjson cs "$(kt "$d" csr "$nd")" \
       --argjson fr "$(kt "$d" fkr "$nd")" --argjson lr "$(kt "$d" lre "$nd")" --argjson lf "$(kt "$d" lref "$nd")" \
       --argjson fk "$(kt "$d" fkw "$nd")" --argjson rounds "$ROUNDS" --argjson runs "$RUNS" --arg stat "$STAT" --slurpfile lre "$d/lre/model.json" \
       --slurpfile lref "$d/lref/model.json" '
      def r(a; b): (a / b * 100 | round / 100);
      {node: $L.node, signature: $L.signature, threads: ($th | tonumber), rounds: $rounds, runs: $runs, stat: $stat,
       tile: (if $L.level == "fkr" then {loop: "l1", tuned: $L.tuned} else {lanes: $L.lanes, rows: $L.rows, vecs: $L.vecs, filters: $L.filters, tuned: $L.tuned} end),
       static_tile: ($lre[0].sparse_layers[] | select(.node == $L.node) | {lanes, rows, vecs}),
       lref_tile: ($lref[0].sparse_layers[] | select(.node == $L.node) | {lanes, rows, vecs, filters}),
       dense_ms: $dn, csr_ms: $cs, fkr_ms: $fr, lre_ms: $lr, lref_ms: $lf, fkw_ms: $fk,
       fkr_vs_dense: r($dn; $fr), lre_vs_dense: r($dn; $lr), lref_vs_dense: r($dn; $lf), fkw_vs_dense: r($dn; $fk), csr_vs_dense: r($dn; $cs),
       fkr_vs_csr: r($cs; $fr), lre_vs_csr: r($cs; $lr), lref_vs_csr: r($cs; $lf), fkw_vs_csr: r($cs; $fk),
       lre_vs_fkr: r($fr; $lr), lref_vs_lre: r($lr; $lf), fkw_vs_lref: r($lf; $fk), fkw_vs_lre: r($lr; $fk),
       kernels: $L.kernels, shared_kernels: $L.shared_kernels,
       lref_kernel_loads: ($lref[0].sparse_layers[] | select(.node == $L.node) | .kernel_loads)}'
  done
}

case $mode in
vgg)
  scale=${2:-1}
  node tools/prune/gen_layers.mjs --which vgg --out "$OUT/vgg" --scale "$scale"
  for i in ${LAYERS:-1 2 3 4 5 6 7 8 9}; do
    d="$OUT/vgg/L$i"; mkdir -p "$d"
    onnx2ecg "$OUT/vgg/L$i.onnx" -o "$d/g.ecg"
    # L1 is VGG-16's first layer (exempt from connectivity pruning); L2-L9 are inner layers
    first=--prune-first; [ "$i" -gt 1 ] || first=
    ecg-prune "$d/g.ecg" -o "$d/p.ecg" --export-onnx "$d/p.onnx" --report "$d/prune.json" $first
    node tools/bench/make_data.mjs --model "$d/p.onnx" --out "$d/data" --seed 1 2>/dev/null
    measure "$d" "$d/p.ecg" "$d/data" | jq -c --arg l "L$i" --arg s "$scale" --slurpfile p "$d/prune.json" \
      '{layer: $l, scale: ($s | tonumber), shape: $p[0].prune.layers[0].shape, compression: $p[0].prune.layers[0].compression,
        fkw_index_bytes: $p[0].prune.layers[0].fkw_index_bytes, csr_index_bytes: $p[0].prune.layers[0].csr_index_bytes,
        fkw_index_saving: $p[0].prune.layers[0].fkw_index_saving} + .'
  done
  ;;
model)
  name=${2:?model NAME}
  d="$OUT/$name"
  . "$TOP/scripts/prune_common.sh"
  prune_model "$name" "$d"
  measure "$d" "$d/p.ecg" "$d/data" | while read -r row; do
    nd=$(printf '%s' "$row" | jq -r .node)
    printf '%s' "$row" | jq -c --arg n "$nd" --slurpfile p "$d/prune.json" \
      '($p[0].prune.layers[] | select(.node == $n)) as $L |
       {layer: $n, shape: $L.shape, compression: $L.compression, fkw_index_bytes: $L.fkw_index_bytes,
        csr_index_bytes: $L.csr_index_bytes, fkw_index_saving: $L.fkw_index_saving} + .'
  done
  ;;
*) echo "usage: sh scripts/prune_layers.sh vgg [SCALE] | model NAME" >&2; exit 2 ;;
esac
