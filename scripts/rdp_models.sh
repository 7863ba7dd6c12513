#!/bin/sh
# RDP (SOD² §5.4.1) on every model of scripts/models.tsv converted WITHOUT --input-shape:
# per model, the graph input symbols and how many tensors are fully constant, symbolic
# (numbers, symbols and operator-inferred expressions, at least one not a number) or
# nac/undef (onnx2ecg --report's rdp fields). Then every expression is checked against
# static shape inference at two bindings of the symbols: the model's --input-shape of
# models.tsv, and that shape with each symbolic dim d made 2 (d = 1) or 3d/2 rounded up to
# a multiple of 16 (scripts/rdp_check.mjs: "checked", "mismatched"). One JSON line per model;
# exits 1 when a conversion fails or an expression disagrees.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
T=$(mktemp -d "${TMPDIR:-/tmp}/rdp_models.XXXXXX")
trap 'rm -rf "$T"' EXIT
status=0
grep -v '^#' scripts/models.tsv > "$T/models"
while IFS='	' read -r name path shapes; do
  [ -n "$name" ] || continue
  if [ ! -f "$path" ]; then echo "{\"model\": \"$name\", \"error\": \"missing $path\"}"; status=1; continue; fi
  if ! "$BIN/onnx2ecg" "$path" -o "$T/m.ecg" --report "$T/r.json" 2> "$T/err"; then
    jq -cn --arg m "$name" --arg e "$(tail -1 "$T/err")" '{model: $m, error: $e}'; status=1; continue
  fi
  "$BIN/ecg-dump" "$T/m.ecg" > "$T/sym.json"
  checks='[]'
  if [ "$(jq .onnx2ecg.rdp.symbols "$T/r.json")" -gt 0 ] && [ "$shapes" != "-" ]; then
    for scale in 1 2; do
      # NAME=DIMS per input, the symbolic dims scaled; SYMBOL=VALUE for the checker
      args=""; binds=""
      for s in $(echo "$shapes" | tr ',' ' '); do
        in=${s%%=*}; dims=${s#*=}
        out=$(jq -r --arg in "$in" --arg d "$dims" --argjson sc "$scale" '
          ($d | split("x") | map(tonumber)) as $v
          | [.tensors[] | select(.name == $in)][0].shape as $sh
          | [range(0; $v | length) | if ($sh[.] | type) == "number" or $sc == 1 then [$v[.], null]
               else [(if $v[.] == 1 then 2 else ((($v[.] * 3 / 2) / 16 | ceil) * 16) end), $sh[.]] end] as $b
          | ($b | map(.[0] | tostring) | join("x")) + " " + ([range(0; $b | length) | select($sh[.] | type == "string") | "\($sh[.])=\(if $b[.][0] then $b[.][0] else $v[.] end)"] | join(" "))' "$T/sym.json")
        args="$args --input-shape $in=${out%% *}"; binds="$binds ${out#* }"
      done
      # shellcheck disable=SC2086
      if "$BIN/onnx2ecg" "$path" $args -o "$T/s.ecg" 2> "$T/err"; then
        "$BIN/ecg-dump" "$T/s.ecg" > "$T/static.json"
        # shellcheck disable=SC2086
        c=$(node scripts/rdp_check.mjs "$T/sym.json" "$T/static.json" $binds) || status=1
        checks=$(echo "$checks" | jq -c --argjson c "$c" --arg b "$(echo $binds)" '. + [{binding: $b} + $c]')
      else
        checks=$(echo "$checks" | jq -c --arg e "$(tail -1 "$T/err")" '. + [{error: $e}]'); status=1
      fi
    done
  fi
  jq -c --arg m "$name" --argjson c "$checks" '{model: $m} + .onnx2ecg.rdp + {checks: $c}' "$T/r.json"
done < "$T/models"
exit $status
