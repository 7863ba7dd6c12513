/* ecg-lower: global layout selection (GCD², Niu dissertation §4.4.1-4.4.2), the solver.
 *
 * A problem is GCD²'s graph (Eq. 4.1): nv vertices (fusion blocks) in topological order
 * 0..nv-1, k candidate layouts (e.g. NCHW, NCHWc8, NCHWc16), cost[v*k + l] the measured
 * time of vertex v in layout l (any unit, the same everywhere; INFINITY: v cannot run in
 * l), and ne edges src[e] -> dst[e] (src < dst) with tc[e*k*k + a*k + b] the time of
 * transforming the tensor on e from layout a (the producer's) to b (the consumer's),
 * 0 when a == b. A choice gives every vertex a layout; its cost is
 *   Agg_Cost = sum_v cost[v][choice[v]] + sum_e tc[e][choice[src]][choice[dst]].
 * The problem is PBQP (NP-hard in general). Pure functions; no allocation survives a call. */
#ifndef ECG_LOWER_LAYOUT_H
#define ECG_LOWER_LAYOUT_H

typedef struct lw_lsel {
  int nv, k;
  const double *cost; /* [nv * k] */
  int ne;
  const int *src, *dst; /* [ne], src[e] < dst[e] */
  const double *tc;     /* [ne * k * k] */
} lw_lsel;

/** Agg_Cost of choice[nv] (Eq. 4.1; the paper's printed recurrence omits the vertex term,
 *  which is included here). INFINITY when a vertex runs in a layout it cannot. */
double lw_lsel_cost(const lw_lsel *P, const int *choice);

/** Local choice (each block's own preference, the baseline): per vertex the layout of
 *  least cost[v][l], ties to the lowest l; transform costs ignored in the choice. Returns
 *  the Agg_Cost of that choice. */
double lw_lsel_local(const lw_lsel *P, int *choice);

/** Exhaustive search over all k^nv choices (the check of the other solvers; nv * log2 k
 *  <= 24). Returns the optimum, choice filled; -1 when the problem is too large. */
double lw_lsel_brute(const lw_lsel *P, int *choice);

/** Exact dynamic programming over the topological order with the frontier (the vertices
 *  already chosen that have an edge to a vertex not yet chosen) as the state. On a chain
 *  the frontier is one vertex and this is GCD²'s Eq. 4.2, O(nv * k^2); a DAG whose
 *  frontier stays at or under max_states states (k^|frontier|) is solved exactly too.
 *  When a frontier would need more states, only the max_states cheapest partial choices
 *  are kept (a beam) and *exact is set to 0; else 1. Returns the Agg_Cost found, choice
 *  filled; -1 on out of memory or a frontier wider than 62 bits of layouts. */
double lw_lsel_dp(const lw_lsel *P, int max_states, int *choice, int *exact);

/** GCD²'s partition heuristic (§4.4.2): the topological order is cut at dominant cut
 *  edges (an edge (u, v) that every source-to-sink path crosses: at that position the
 *  only edge running from an earlier to a later vertex; v has u as its one predecessor),
 *  and, where a part would exceed max_part vertices, at complementary cuts (the position
 *  with the fewest crossing edges). Each part is searched exhaustively. Across a dominant
 *  cut the parts are joined by dynamic programming on the layout of u (so a chain is
 *  solved exactly); across a complementary cut the earlier parts' layouts are fixed and
 *  the crossing edges' transform costs charged to the later part. Returns the Agg_Cost,
 *  choice filled; *n_dominant and *n_complementary (may be NULL) count the cuts; -1 on
 *  out of memory or max_part * log2 k > 20. */
double lw_lsel_gcd2(const lw_lsel *P, int max_part, int *choice, int *n_dominant, int *n_complementary);

#endif
