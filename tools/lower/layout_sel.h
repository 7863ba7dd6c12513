/* ecg-lower --layout: global layout selection on a fused ECG (GCD², Niu dissertation
 * §4.4.1-4.4.2); the pass over the graph (layout_sel.c) around layout.h's solvers. */
#ifndef ECG_LOWER_LAYOUT_SEL_H
#define ECG_LOWER_LAYOUT_SEL_H
#include <stdio.h>

#include "lower.h"

/** Modes of --layout: 0 nchw, 1 nchwc8, 2 nchwc16 (every eligible block in that layout),
 *  3 local (each block's own cheapest layout), 4 global (least Agg_Cost: the exact frontier
 *  DP, or GCD²'s partition heuristic where that finds less). -1 for an unknown name. */
int lw_layout_parse(const char *s);

/** Print the signatures whose costs the selection needs, one per line: "conv N C H W M KH
 *  KW SH SW DH DW PT PL PB PR GROUP" per eligible convolution and "reorder N C HW" per
 *  4-D float32 activation tensor (the input of rt_nchwc_test --costs). Errors:
 *  ECG_ERR_INPUT when the blocks form a cycle; ECG_ERR_INTERNAL out of memory. */
int lw_layout_keys(const ecg_graph *g, FILE *out, ecg_err *e);

/** Select a layout per fusion block under mode with the costs of db_path (JSON lines of
 *  this host's cpu, isa and threads), write it into each block's `layout` ("" NCHW,
 *  "NCHWc8", "NCHWc16"), and append the report's `"layout": {...}` member to json: mode,
 *  vertices, eligible blocks, edges, predicted_ms (Agg_Cost in ms of the measured convs
 *  and reorders) for every mode, dp_exact, gcd2_ms, dominant and complementary cuts, and
 *  how many blocks got each layout. Errors (ECG_ERR_INPUT): the database unreadable, a
 *  signature missing from it (named, with the node or tensor); ECG_ERR_INTERNAL. */
int lw_layout_select(ecg_graph *g, int mode, const char *db_path, sbuf *json, ecg_err *e);
#endif
