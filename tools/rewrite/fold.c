/* ecg-rewrite pass "fold": constant folding with a bounded output size.
 * Every node whose inputs are all constants (or, for shape operators, whose input shape is
 * static) and whose operator has a reference evaluation in the registry becomes a
 * constant, unless its outputs would exceed o->fold_max_bytes (a folded Expand or
 * ConstantOfShape may be far larger than its inputs: folding it would bloat the weights).
 * The work is libecg's ecg_fold_constants_limit (SOD² §5.3 constant folding). */
#include "rewrite.h"

int rw_fold(ecg_graph *g, const rw_opts *o, rw_stats *st, ecg_err *e) {
  int folded = 0;
  ECG_TRY(ecg_fold_constants_limit(g, o->fold_max_bytes, &folded, e));
  for (int i = 0; i < folded; i++) rw_count(st, "folded");
  return rw_remove_dead(g, e);
}
