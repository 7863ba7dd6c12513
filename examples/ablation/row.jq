# One row of the ablation table: ecg-bench's JSON line (input) with the variant's name ($v)
# and its lowered model.json ($m[0]: nodes, kernels).
{variant: $v,
 rewrite: ($v | startswith("r1")),
 plan: ($v | split("_")[1:-1] | join("_")),
 intensive: ($v | endswith("_i1")),
 nodes: $m[0].nodes, kernels: $m[0].kernels,
 pass, max_abs_err, median_ms, ort_median_ms, ratio}
