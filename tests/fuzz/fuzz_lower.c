/* libFuzzer harness: the lowering of a valid ECG (ecg_lower_dir, tools/lower) (issue 10,
 * item 1).
 *
 * Input: any bytes as an ECG stream.  Streams that do not read or do not validate are
 * dropped (fuzz_ecg covers those paths); a valid graph is lowered into a fresh directory
 * under $TMPDIR (default /tmp; use a tmpfs), which is removed afterwards.  The generator
 * must not crash, write out of bounds (ASan), leak or trip UBSan; ECG_ERR_INPUT for an
 * unsupported node is a fine answer.  Build: make fuzz-build (build-fuzz/fuzz/fuzz_lower). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ecg.h"
#include "lower_api.h"

/* Remove dir and the plain files in it (what ecg_lower_dir writes: no subdirectories
 * beyond one level, removed recursively anyway). */
static void rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    while ((de = readdir(d))) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
      if (unlink(p) != 0) rm_tree(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  FILE *f = fmemopen((void *)data, size, "rb");
  if (!f) return 0;
  ecg_err e = {0};
  ecg_graph *g = NULL;
  int rc = ecg_read(f, &g, &e);
  fclose(f);
  if (rc != ECG_OK) return 0;
  if (ecg_validate(g, &e) == ECG_OK) {
    const char *t = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ecg-fuzz-lower.XXXXXX", t && *t ? t : "/tmp");
    if (mkdtemp(dir)) {
      ecg_lower_dir(g, dir, "model", NULL, "fkw", NULL, NULL, &e);
      rm_tree(dir);
    }
  }
  ecg_graph_free(g);
  return 0;
}
