/* libFuzzer harness: ecg-rewrite's rule-file parser (rw_rules_parse, the format of
 * tools/rewrite/rules/1-table34.rules) (issue 10, item 1).
 *
 * Input: any bytes as the text of a rule file.  Must never crash, leak or trip ASan/UBSan.
 * Build: make fuzz-build (build-fuzz/fuzz/fuzz_rules). */
#include "rewrite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ecg_err e = {0};
  rw_rules rs = {0};
  rw_rules_parse(&rs, "fuzz.rules", (const char *)data, size, &e);
  rw_rules_free(&rs);
  return 0;
}
