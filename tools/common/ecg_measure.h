/* Size measures every optimising stage reports before and after its work (DESIGN.md
 * "Conventions across issues": the --report envelope's "before"/"after" objects). */
#ifndef ECG_MEASURE_H
#define ECG_MEASURE_H

#include <stdbool.h>

#include "ecg.h"

/** What a stage's report says about one graph. */
typedef struct ecg_sizes {
  size_t nodes;                /**< number of nodes */
  int64_t flops;               /**< sum of the registry's FLOP counts (multiply-add = 2); nodes
                                    with symbolic shapes or unknown ops count 0 */
  int64_t intermediate_bytes;  /**< bytes of node outputs that are not graph outputs (static
                                    shapes only); with skip_removable, IR_removable tensors
                                    (fused away, no memory) are left out */
  int64_t peak_bytes;          /**< the most intermediate bytes alive at once in a topological
                                    order (live from the producer to the last reader; the
                                    same exclusions): the lower bound of a static memory plan
                                    in that order; -1 when the graph has a cycle */
} ecg_sizes;

/** Measure g: nodes, FLOPs and intermediate bytes as ecg_sizes describes.
 *  Never fails (an allocation failure only drops the graph-output exclusion). */
ecg_sizes ecg_measure(const ecg_graph *g, bool skip_removable);

/** Write `"key": {"nodes": N, "flops": F, "intermediate_bytes": B, "peak_bytes": P}` (no trailing
 *  separator) to f: one of the report envelope's "before"/"after" objects. */
void ecg_sizes_json(FILE *f, const char *key, ecg_sizes s);

#endif
