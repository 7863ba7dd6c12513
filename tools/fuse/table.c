/* DNNFusion Table 3.3 (Niu dissertation §3.3.2) as data: for every ordered pair of
 * mapping types, whether fusing the producer (row) with the consumer (column) is legal
 * and profitable (through), legal but to be decided by profiling (depend), or not
 * (break), and the mapping type of the fused result.  The colours were lost from the
 * text; this is the reconstruction of ../shared/notes/digest-niu.md §2.4, cells marked
 * there as inferred included (Reorganize/Shuffle pairs through, One-to-Many ->
 * One-to-Many depend). */
#include "fuse.h"

#define T(f) {FUSE_THROUGH, ECG_MAP_##f}
#define D(f) {FUSE_DEPEND, ECG_MAP_##f}
#define B {FUSE_BREAK, ECG_MAP_ONE_TO_ONE}
/* rows: first (producer); columns: second (consumer); order One-to-One, One-to-Many,
 * Many-to-Many, Reorganize, Shuffle */
static const fuse_cell TABLE[5][5] = {
    {T(ONE_TO_ONE), T(ONE_TO_MANY), T(MANY_TO_MANY), T(REORGANIZE), T(SHUFFLE)},
    {T(ONE_TO_MANY), D(ONE_TO_MANY), B, D(ONE_TO_MANY), D(ONE_TO_MANY)},
    {T(MANY_TO_MANY), D(MANY_TO_MANY), B, D(MANY_TO_MANY), D(MANY_TO_MANY)},
    {T(REORGANIZE), D(ONE_TO_MANY), D(MANY_TO_MANY), T(REORGANIZE), T(REORGANIZE)},
    {T(SHUFFLE), D(ONE_TO_MANY), D(MANY_TO_MANY), T(REORGANIZE), T(SHUFFLE)},
};
#undef T
#undef D
#undef B

static int row_of(ecg_mapping m) {
  switch (m) {
  case ECG_MAP_ONE_TO_ONE: return 0;
  case ECG_MAP_ONE_TO_MANY: return 1;
  case ECG_MAP_MANY_TO_MANY: return 2;
  case ECG_MAP_REORGANIZE: return 3;
  case ECG_MAP_SHUFFLE: return 4;
  default: return -1;
  }
}

fuse_cell fuse_table(ecg_mapping first, ecg_mapping second) {
  int r = row_of(first), c = row_of(second);
  if (r < 0 || c < 0) return (fuse_cell){FUSE_BREAK, ECG_MAP_ONE_TO_ONE};
  return TABLE[r][c];
}

const char *fuse_decision_name(fuse_decision d) {
  return d == FUSE_THROUGH ? "through" : d == FUSE_DEPEND ? "depend" : "break";
}
