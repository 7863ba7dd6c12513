#!/bin/sh
# SOD² §5.4.2 memory-plan study (make memplan-study): every planner of tools/lower/memplan.c
# (peak-first, SOD²'s and ecg-lower's default; best-fit, MNN's "smallest fitting slot";
# size-first) on
#   - every model of scripts/models.tsv (onnx2ecg with its --input-shape | ecg-fuse |
#     ecg-lower; model.json memory_plans): arena / optimum where the optimum is known (a
#     heuristic reaching the lower bound, or branch and bound over at most 24 buffers),
#     else arena / lower bound (the bytes live at the peak position), and
#   - STUDY_GRAPHS (1000) seeded random small graphs (5-12 buffers, seed STUDY_SEED=1):
#     arena / exhaustive optimum.
# One JSON line per model, then the random graphs' line, then the mean and max per planner
# over the models. Exits 1 when a model fails to lower.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
CC=${CC:-cc}
T=$(mktemp -d "${TMPDIR:-/tmp}/memplan_study.XXXXXX")
trap 'rm -rf "$T"' EXIT
status=0
grep -v '^#' scripts/models.tsv > "$T/models"
: > "$T/rows"
while IFS='	' read -r name path shapes; do
  [ -n "$name" ] || continue
  args=""
  if [ "$shapes" != "-" ]; then for s in $(echo "$shapes" | tr ',' ' '); do args="$args --input-shape $s"; done; fi
  # shellcheck disable=SC2086
  if "$BIN/onnx2ecg" "$path" $args 2> "$T/err" | "$BIN/ecg-fuse" 2>> "$T/err" | "$BIN/ecg-lower" -o "$T/$name" 2>> "$T/err"; then
    jq -c --arg m "$name" '.memory_plans as $p | ($p | if .optimum_exact then .optimum else .lower_bound end) as $ref
      | {model: $m} + $p + {reference: (if $p.optimum_exact then "optimum" else "lower_bound" end),
         peak_ratio: ($p.peak / $ref), bestfit_ratio: ($p.bestfit / $ref), size_ratio: ($p.size / $ref)}' \
      "$T/$name/model.json" | tee -a "$T/rows"
  else
    jq -cn --arg m "$name" --arg e "$(tail -1 "$T/err")" '{model: $m, error: $e}'; status=1
  fi
done < "$T/models"
$CC -std=gnu11 -O2 -Iformat -Ibuild/gen -Itools/lower -Itools/common tests/unit/memplan_test.c tools/lower/memplan.c tools/lower/runtime/ecg_plan.c \
  -o "$T/study" || exit 3
"$T/study" --study "${STUDY_GRAPHS:-1000}" "${STUDY_SEED:-1}" | jq -c '{random_graphs: .}'
jq -sc '{models: length,
  peak: {mean: (map(.peak_ratio) | add / length), max: (map(.peak_ratio) | max)},
  bestfit: {mean: (map(.bestfit_ratio) | add / length), max: (map(.bestfit_ratio) | max)},
  size: {mean: (map(.size_ratio) | add / length), max: (map(.size_ratio) | max)},
  peak_never_worse_than_bestfit: (map(.peak <= .bestfit) | all)}' "$T/rows"
exit $status
