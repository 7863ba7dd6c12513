# ablation.json (an array of rows, row.jq) -> a markdown table.
def onoff: if . then "on" else "off" end;
def num: if . == null then "-" elif type == "number" then (. * 10000 | round / 10000 | tostring) else tostring end;
"| variant | rewrite | plan | intensive | nodes | kernels | pass | max abs err | ms | ORT ms | ms / ORT ms |",
"|---|---|---|---|---:|---:|---|---:|---:|---:|---:|",
(.[] | "| \(.variant) | \(.rewrite | onoff) | \(.plan) | \(.intensive | onoff) | \(.nodes) | \(.kernels) | \(.pass) | \(.max_abs_err) | \(.median_ms | num) | \(.ort_median_ms | num) | \(.ratio | num) |")
