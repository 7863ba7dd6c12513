/* libFuzzer harness: ecg-rewrite's cost-table parser (sg_cost_parse, the --cost-db format
 * of tools/rewrite/cost.c: JSON lines keyed by cpu, isa, threads, device and signature,
 * DESIGN.md "Measured costs"; blank and '#' lines skipped) (issue 7, item 4).
 *
 * Input: any bytes as the text of a cost table.  Must never crash, leak or trip ASan/UBSan.
 * Build: make fuzz-build (build-fuzz/fuzz/fuzz_costdb). */
#include "subst.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ecg_err e = {0};
  sg_cost_db db;
  sg_cost_init(&db);
  sg_cost_parse(&db, "fuzz.jsonl", (const char *)data, size, &e);
  sg_cost_free(&db);
  return 0;
}
