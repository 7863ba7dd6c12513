#!/bin/sh
# prune_layers.sh: per-layer times of the dense conv, the CSR baseline and the FKW kernel
# (ecg-prune + ecg-lower --sparse), PatDNN Fig. 2.13 style.
#
#   sh scripts/prune_layers.sh vgg [SCALE]    the VGG-16 layers of Table 2.6 (tools/prune/gen_layers.mjs),
#                                            spatial size divided by SCALE (default 1)
#   sh scripts/prune_layers.sh model NAME     every conv of models.tsv's NAME, from the runner's
#                                            per-kernel profile of the whole pruned model
# Env: THREADS (default 1), RUNS (default 10), OUT (default out/prune_layers).
# Prints one JSON line per layer (times in ms, medians for vgg, profile means for model);
# each variant is checked: the sparse kernels against ONNX Runtime on the exported pruned
# model (ecg-bench --data), the dense layer against ONNX Runtime (--ort).
set -eu
cd "$(dirname "$0")/.."
TOP=$PWD
PATH="$TOP/bin:$PATH"
THREADS=${THREADS:-1}; RUNS=${RUNS:-10}; OUT=${OUT:-out/prune_layers}
case $OUT in /*) ;; *) OUT=$TOP/$OUT ;; esac
mode=${1:-vgg}
mkdir -p "$OUT"

median() { # median_ms of an ecg-bench JSON line; fails when the check did not pass
  [ "$(printf '%s' "$1" | jq -r .pass)" = true ] || { echo "prune_layers: check failed: $1" >&2; exit 1; }
  printf '%s' "$1" | jq -r .median_ms
}

case $mode in
vgg)
  scale=${2:-1}
  node tools/prune/gen_layers.mjs --which vgg --out "$OUT/vgg" --scale "$scale"
  for i in 1 2 3 4 5 6 7 8 9; do
    d="$OUT/vgg/L$i"; mkdir -p "$d"
    onnx2ecg "$OUT/vgg/L$i.onnx" -o "$d/g.ecg"
    # L1 is VGG-16's first layer (exempt from connectivity pruning); L2-L9 are inner layers
    first=--prune-first; [ "$i" -gt 1 ] || first=
    ecg-prune "$d/g.ecg" -o "$d/p.ecg" --export-onnx "$d/p.onnx" --report "$d/prune.json" $first
    node tools/bench/make_data.mjs --model "$d/p.onnx" --out "$d/data" --seed 1 2>/dev/null
    ecg-fuse "$d/g.ecg" | ecg-lower -o "$d/dense"
    ecg-fuse "$d/p.ecg" | ecg-lower --sparse csr -o "$d/csr"
    ecg-fuse "$d/p.ecg" | ecg-lower --sparse fkw -o "$d/fkw"
    dn=$(median "$(ecg-bench "$d/dense" --random 1 --ort --runs "$RUNS" --threads "$THREADS" 2>/dev/null)")
    cs=$(median "$(ecg-bench "$d/csr" --data "$d/data" --runs "$RUNS" --threads "$THREADS" 2>/dev/null)")
    fk=$(median "$(ecg-bench "$d/fkw" --data "$d/data" --runs "$RUNS" --threads "$THREADS" 2>/dev/null)")
    jq -nc --arg l "L$i" --argjson dn "$dn" --argjson cs "$cs" --argjson fk "$fk" --argjson t "$THREADS" \
       --slurpfile p "$d/prune.json" \
       '{layer: $l, shape: $p[0].prune.layers[0].shape, compression: $p[0].prune.compression, threads: $t,
         dense_ms: $dn, csr_ms: $cs, fkw_ms: $fk, fkw_vs_dense: ($dn / $fk * 100 | round / 100),
         fkw_vs_csr: ($cs / $fk * 100 | round / 100), csr_vs_dense: ($dn / $cs * 100 | round / 100)}'
  done
  ;;
model)
  name=${2:?model NAME}
  line=$(grep -v '^#' scripts/models.tsv | awk -F'\t' -v n="$name" '$1 == n')
  [ -n "$line" ] || { echo "prune_layers: no model '$name' in scripts/models.tsv" >&2; exit 2; }
  path=$(printf '%s' "$line" | cut -f2); shapes=$(printf '%s' "$line" | cut -f3)
  d="$OUT/$name"; mkdir -p "$d"
  set --
  [ "$shapes" = - ] || for s in $(printf '%s' "$shapes" | tr ',' ' '); do set -- "$@" --input-shape "$s"; done
  onnx2ecg "$path" "$@" -o "$d/g.ecg"
  ecg-prune "$d/g.ecg" -o "$d/p.ecg" --export-onnx "$d/p.onnx" --report "$d/prune.json"
  node tools/bench/make_data.mjs --model "$d/p.onnx" --out "$d/data" --seed 1 "$@" 2>/dev/null
  for k in dense csr fkw; do
    ecg-fuse "$d/p.ecg" | ecg-lower --sparse "$k" -o "$d/$k"
    median "$(ecg-bench "$d/$k" --data "$d/data" --runs 1 2>/dev/null)" >/dev/null
    # raw little-endian inputs for the runner, from the data set's TensorProtos
    node --input-type=module -e "
      import fs from 'node:fs'; import { onnxRoot } from '$PWD/tools/bench/onnx_build.mjs';
      const T = onnxRoot().lookupType('onnx.TensorProto');
      for (const f of fs.readdirSync('$d/data').filter((f) => f.startsWith('input_'))) {
        const t = T.decode(fs.readFileSync('$d/data/' + f));
        fs.writeFileSync('$d/' + t.name + '.bin', t.rawData);
        console.log(t.name);
      }" > "$d/inputs.txt"
    set --
    while read -r nm; do set -- "$@" --in "$nm=$d/$nm.bin"; done < "$d/inputs.txt"
    (cd "$d/$k" && OMP_NUM_THREADS=$THREADS ./runner --threads "$THREADS" --warmup 2 --runs "$RUNS" --profile "$d/prof_$k.txt" "$@" >/dev/null)
  done
  # one line per conv of the pruned model: its kernel's mean time in each variant
  jq -r '.prune.layers[] | select(.annotated) | .node' "$d/prune.json" | while read -r conv; do
    t() { awk -F'\t' -v n="$conv" '!/^#/ && index($NF, n) {print $1 + 0; exit}' "$d/prof_$1.txt"; }
    dn=$(t dense); cs=$(t csr); fk=$(t fkw)
    jq -nc --arg l "$conv" --argjson dn "${dn:-null}" --argjson cs "${cs:-null}" --argjson fk "${fk:-null}" --argjson t "$THREADS" \
       --slurpfile p "$d/prune.json" \
       '($p[0].prune.layers[] | select(.node == $l)) as $L |
        {layer: $l, shape: $L.shape, compression: $L.compression, threads: $t, dense_ms: $dn, csr_ms: $cs, fkw_ms: $fk,
         fkw_vs_dense: (if $dn and $fk then ($dn / $fk * 100 | round / 100) else null end),
         fkw_vs_csr: (if $cs and $fk then ($cs / $fk * 100 | round / 100) else null end)}'
  done
  ;;
*) echo "usage: sh scripts/prune_layers.sh vgg [SCALE] | model NAME" >&2; exit 2 ;;
esac
