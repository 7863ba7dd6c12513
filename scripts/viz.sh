#!/bin/sh
# make viz: render a model's graph with Graphviz.
#   scripts/viz.sh MODEL "STAGES" OUTDIR
# MODEL: a name of scripts/models.tsv (imported with its --input-shape arguments), a path
# to an ONNX file (imported as is) or to an ECG.  STAGES: the ECG -> ECG commands run on it
# in order ("bin/ecg-rewrite bin/ecg-fuse"; "" for none).  Writes OUTDIR/NAME.ecg,
# OUTDIR/NAME.dot (ecg-dump --dot: fusion blocks as clusters, nodes filled by mapping type)
# and OUTDIR/NAME.svg (dot -Tsvg), and prints the SVG's path.  Exit 1 when the model is
# unknown or a tool fails (nothing is left under the output names), 2 on usage.
set -eu
cd "$(dirname "$0")/.."
[ $# -eq 3 ] || { echo "usage: scripts/viz.sh MODEL STAGES OUTDIR" >&2; exit 2; }
model=$1 stages=$2 out=$3
command -v dot >/dev/null 2>&1 || { echo "viz: Graphviz's dot is missing (apt-get install graphviz, or make setup)" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d "$out/.viz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case $model in
  *.ecg) name=$(basename "$model" .ecg); cp "$model" "$tmp/g.ecg" ;;
  *.onnx) name=$(basename "$model" .onnx); bin/onnx2ecg "$model" -o "$tmp/g.ecg" ;;
  *)
    line=$(awk -F'\t' -v n="$model" '$1 == n' scripts/models.tsv)
    [ -n "$line" ] || { echo "viz: no model '$model' in scripts/models.tsv (or give a path to .onnx or .ecg)" >&2; exit 1; }
    name=$model
    path=$(printf '%s\n' "$line" | cut -f2); shapes=$(printf '%s\n' "$line" | cut -f3)
    set -- "$path"
    if [ "$shapes" != "-" ]; then
      for s in $(printf '%s' "$shapes" | tr ',' ' '); do set -- "$@" --input-shape "$s"; done
    fi
    bin/onnx2ecg "$@" -o "$tmp/g.ecg" ;;
esac
for s in $stages; do
  $s "$tmp/g.ecg" -o "$tmp/next.ecg"
  mv "$tmp/next.ecg" "$tmp/g.ecg"
done
bin/ecg-dump --dot "$tmp/g.ecg" -o "$tmp/g.dot"
dot -Tsvg "$tmp/g.dot" -o "$tmp/g.svg"
mv "$tmp/g.ecg" "$out/$name.ecg"
mv "$tmp/g.dot" "$out/$name.dot"
mv "$tmp/g.svg" "$out/$name.svg"
echo "$out/$name.svg"
