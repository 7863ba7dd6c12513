/* ecg-lower: ECG on stdin (or FILE) -> a directory of C sources (tools/lower/LOWERED.md).
 * The directory is written under a temporary name and renamed when complete, so a
 * failure leaves no partial output. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ecg_arch.h"
#include "lower_api.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ecg-lower -o DIR [options] [FILE.ecg|-]\n"
          "Lower an ECG (from FILE or stdin) into DIR: C kernels, model.h API, weights.bin,\n"
          "model.json and a Makefile (`make -C DIR` builds the library and a runner).\n"
          "  -o, --output DIR   output directory (created; replaced if it holds an earlier lowering)\n"
          "  --prefix NAME      C symbol prefix (default ecg_model)\n"
          "  --arch ISA         target ISA: native (default: this machine), aarch64 (NEON), riscv64;\n"
          "                     recorded in model.json; a foreign ISA's Makefile cross-builds\n"
          "                     (CROSS_COMPILE=aarch64-linux-gnu- style, STATIC=1; see LOWERED.md)\n"
          "  -v                 progress on stderr\n"
          "  -h, --help         this help\n"
          "  --version          print the version\n");
}

static int valid_ident(const char *s) {
  if (!s[0] || isdigit((unsigned char)s[0])) return 0;
  for (; *s; s++) if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/* Remove a directory tree written by an earlier ecg-lower run (flat: files only). */
static int remove_flat_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *ent;
  char path[4096];
  while ((ent = readdir(d))) {
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    if (unlink(path) != 0) { closedir(d); return -1; }
  }
  closedir(d);
  return rmdir(dir);
}

int main(int argc, char **argv) {
  const char *out = NULL, *in = "-", *prefix = "ecg_model", *arch = "native";
  int verbose = 0, have_in = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
    if (!strcmp(a, "--version")) { printf("ecg-lower %s\n", ECG_VERSION_STRING); return 0; }
    if (!strcmp(a, "-v")) { verbose = 1; continue; }
    if ((!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--prefix") || !strcmp(a, "--arch")) && i + 1 < argc) {
      if (!strcmp(a, "--prefix")) prefix = argv[++i];
      else if (!strcmp(a, "--arch")) arch = argv[++i];
      else out = argv[++i];
      continue;
    }
    if (a[0] == '-' && a[1]) { fprintf(stderr, "ecg-lower: unknown option '%s'\n", a); usage(stderr); return 2; }
    if (have_in++) { fprintf(stderr, "ecg-lower: more than one input file\n"); return 2; }
    in = a;
  }
  if (!out) { fprintf(stderr, "ecg-lower: missing -o DIR\n"); usage(stderr); return 2; }
  if (!ecg_arch_find(arch)) { fprintf(stderr, "ecg-lower: unknown --arch '%s' (expected one of %s)\n", arch, ecg_arch_names()); return 2; }
  if (!valid_ident(prefix)) { fprintf(stderr, "ecg-lower: --prefix '%s' is not a C identifier\n", prefix); return 2; }
  if (!strcmp(in, "-") && isatty(fileno(stdin))) { fprintf(stderr, "ecg-lower: no input (pipe an ECG in or name a file)\n"); usage(stderr); return 2; }
  ecg_err e = {0};
  ecg_graph *g = NULL;
  int rc = ecg_read_path(in, &g, &e);
  if (rc) { fprintf(stderr, "ecg-lower: %s\n", e.msg); return rc; }
  size_t len = strlen(out) + 32;
  char *tmp = malloc(len);
  if (!tmp) { ecg_graph_free(g); fprintf(stderr, "ecg-lower: out of memory\n"); return 3; }
  snprintf(tmp, len, "%s.tmp%ld", out, (long)getpid());
  if (mkdir(tmp, 0777) != 0) {
    fprintf(stderr, "ecg-lower: cannot create %s: %s\n", tmp, strerror(errno));
    ecg_graph_free(g); free(tmp);
    return 1;
  }
  rc = ecg_lower_dir(g, tmp, prefix, arch, &e);
  if (rc == ECG_OK) {
    struct stat st;
    if (stat(out, &st) == 0) {
      char mark[4096];
      snprintf(mark, sizeof mark, "%s/model.json", out);
      if (!S_ISDIR(st.st_mode) || access(mark, F_OK) != 0 || remove_flat_dir(out) != 0) {
        rc = ecg_errf(&e, ECG_ERR_INPUT, "%s exists and is not an earlier ecg-lower output; not replacing it", out);
      }
    }
    if (rc == ECG_OK && rename(tmp, out) != 0) rc = ecg_errf(&e, ECG_ERR_INTERNAL, "rename %s: %s", out, strerror(errno));
  }
  if (rc != ECG_OK) {
    remove_flat_dir(tmp);
    fprintf(stderr, "ecg-lower: %s\n", e.msg);
  } else if (verbose) {
    fprintf(stderr, "ecg-lower: %zu nodes -> %s\n", g->n_nodes, out);
  }
  free(tmp);
  ecg_graph_free(g);
  return rc;
}
