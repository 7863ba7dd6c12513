/* libFuzzer harness: ecg-partition's EOP device-profile parser and pattern fitting
 * (pt_eop_profile_check: JSON lines {"device", "signature", "dim", "x", "ms"};
 * tools/partition/eopplan.c, eop.c) (issue 10, item 1: every text format a stage parses).
 *
 * Input: any bytes as the profile file, handed over through a memfd (/proc/self/fd/N).
 * Must never crash, leak or trip ASan/UBSan. Build: make fuzz-build. */
#include "fuzz_memfd.h"

#include "partition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_memfd(data, size, path, sizeof path);
  if (fd < 0) return 0;
  ecg_err e = {0};
  int n, fits;
  pt_eop_profile_check(path, &n, &fits, &e);
  close(fd);
  return 0;
}
