/* ecg runtime: placing intermediate buffers in one arena (SOD², Niu dissertation §5.4.2;
 * ../shared/notes/digest-niu.md §4.4). One implementation serves ecg-lower (which links
 * it to plan static shapes at lowering time: tools/lower/memplan.c) and lowered models
 * built without --input-shape (whose create/run plan the arena when the input shapes are
 * known: tools/lower/LOWERED.md "Dynamic shapes"). No globals, no writable data. */
#ifndef ECG_PLAN_H
#define ECG_PLAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One buffer to place: size in bytes (aligned by the caller), lifetime [first, last] in
 *  kernel positions (inclusive; a position may be negative, -1 being before the first kernel,
 *  and first > last is an empty lifetime), and the offset in bytes the plan gives it. */
typedef struct ecg_plan_buf {
  size_t bytes;
  int first, last;
  size_t offset;
} ecg_plan_buf;

/** Placement algorithms: each puts buffers one at a time into a gap between the placed
 *  buffers whose lifetimes intersect its own. */
enum {
  ECG_PLAN_PEAK = 0, /**< SOD²: buffers live at the peak-memory position first, then outwards
                          from it (forward and backward), each into the tightest gap */
  ECG_PLAN_BESTFIT,  /**< MNN-style: execution order, the tightest ("smallest fitting") gap */
  ECG_PLAN_SIZE      /**< TFLite-style: largest first, the lowest gap */
};

/** Set b[i].offset for all n buffers with algo (ECG_PLAN_*); returns the arena size in
 *  bytes (the highest end), (size_t)-1 on out of memory (b's offsets then unspecified). */
size_t ecg_rt1_plan_place(ecg_plan_buf *b, int n, int algo);
/** The largest total of bytes live at one position: no placement needs less. */
size_t ecg_rt1_plan_lower_bound(const ecg_plan_buf *b, int n);
/** Offset for b[t] among the placed buffers done[0..nd) (offsets set): the lowest offset
 *  that fits (best_fit 0) or the start of the smallest gap that fits, the free space above
 *  the highest buffer counting as unbounded (best_fit 1). scratch: nd ints. */
size_t ecg_rt1_plan_fit(const ecg_plan_buf *b, const int *done, int nd, int t, int best_fit, int *scratch);

#ifdef __cplusplus
}
#endif
#endif
