/* libFuzzer harness: ecg-partition's EOP device-profile parser and pattern fitting
 * (pt_eop_profile_check: JSON lines {"device", "signature", "dim", "x", "ms"};
 * tools/partition/eopplan.c, eop.c) (issue 10, item 1: every text format a stage parses).
 *
 * Input: any bytes as the profile file, handed over through a memfd (/proc/self/fd/N).
 * Must never crash, leak or trip ASan/UBSan. Build: make fuzz-build. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "partition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz_eopprof", 0);
  if (fd < 0) return 0;
  size_t off = 0;
  while (off < size) {
    ssize_t w = write(fd, data + off, size - off);
    if (w <= 0) { close(fd); return 0; }
    off += (size_t)w;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ecg_err e = {0};
  int n, fits;
  pt_eop_profile_check(path, &n, &fits, &e);
  close(fd);
  return 0;
}
