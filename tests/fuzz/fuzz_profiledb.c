/* libFuzzer harness: ecg-fuse's profile-database parser (fuse_db_load; JSON lines keyed by
 * cpu, isa, threads, signature; tools/fuse/profile.c) (issue 10, item 1).
 *
 * Input: any bytes as the database file, handed to fuse_db_load through a memfd
 * (/proc/self/fd/N), then looked up once.  Must never crash, leak or trip ASan/UBSan.
 * Build: make fuzz-build (build-fuzz/fuzz/fuzz_profiledb). */
#include "fuzz_memfd.h"

#include "fuse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_memfd(data, size, path, sizeof path);
  if (fd < 0) return 0;
  ecg_err e = {0};
  fuse_db *db = NULL;
  if (fuse_db_load(path, &db, &e) == ECG_OK) {
    double a, b;
    fuse_db_lookup(db, "Conv(f32[1x3x8x8])+Relu", &a, &b);
    fuse_db_free(db);
  }
  close(fd);
  return 0;
}
