/* ecg-lower: ECG on stdin (or FILE) -> a directory of C sources (tools/lower/LOWERED.md).
 *
 * Ownership of the output directory (LOWERED.md "Ownership"): everything is lowered into
 * a fresh temporary directory beside DIR, with a manifest of what was written; only
 * then is DIR touched. A DIR that does not exist is created (parents too, like
 * mkdir -p); an empty DIR, or one holding nothing but files of its own manifest, is
 * swapped with the new directory in one atomic rename; a DIR that also holds other
 * files (or is a symbolic link) gets each new file renamed in, and only files of its old
 * manifest are deleted.
 * A non-empty DIR with no manifest is refused unless --force (which still deletes
 * nothing). A failure leaves DIR as it was, and messages name DIR, never the
 * temporary name. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <time.h>

#include "cli.h"
#include "ecg_measure.h"
#include "ecg_arch.h"
#include "lower.h"
#include "layout_sel.h"
#include "lower_api.h"
#include "manifest.h"

#define PROG "ecg-lower"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ecg-lower -o DIR [options] [FILE.ecg|-]\n"
          "Lower an ECG (from FILE or stdin) into DIR: C kernels, model.h API, weights.bin,\n"
          "model.json and a Makefile (`make -C DIR` builds the library and a runner).\n"
          "  -o, --output DIR   output directory: created with its parents when missing;\n"
          "                     an earlier ecg-lower output there is replaced (only the files\n"
          "                     listed in its " ECG_MANIFEST_NAME "; other files are kept)\n"
          "  --force            write into a non-empty DIR that ecg-lower did not make,\n"
          "                     replacing same-named files and deleting nothing\n"
          "  --prefix NAME      C symbol prefix (default ecg_model)\n"
          "  --arch ISA         target ISA: native (default: this machine), aarch64 (NEON), riscv64;\n"
          "                     recorded in model.json; a foreign ISA's Makefile cross-builds\n"
          "                     (CROSS_COMPILE=aarch64-linux-gnu- style, STATIC=1; see LOWERED.md)\n"
          "  --target T         back end: c (default: C with OpenMP and the runtime library),\n"
          "                     opencl (OpenCL C kernels and a host file linking -lOpenCL; an\n"
          "                     operator it cannot express yet is refused, naming the node) or\n"
          "                     c+opencl (C, and each node an EOP placement gives the device a\n"
          "                     share of (ecg-partition --eop) split between the CPU and the\n"
          "                     OpenCL device, both parts running at once; LOWERED.md)\n"
          "  --input-shape NAME=DIMS  bind the symbolic dims of graph input NAME (e.g.\n"
          "                     x=1x3x640x480; repeatable; the same symbol in other inputs\n"
          "                     takes the same size), then infer shapes and fold again: one\n"
          "                     ECG made without onnx2ecg --input-shape, many static builds\n"
          "  -q, --quiet        errors only on stderr (no warnings)\n"
          "  --memory-plan A    how intermediates share the arena: peak (default; SOD² §5.4.2:\n"
          "                     the buffers live at the peak-memory position first, then outwards,\n"
          "                     each into the tightest gap), bestfit (execution order, smallest\n"
          "                     fitting gap) or size (largest first, lowest gap); model.json\n"
          "                     records arena_bytes and arena_lower_bound (the peak live bytes)\n"
          "  --sparse K         kernel for Convs carrying a PatDNN pattern annotation (ecg-prune):\n"
          "                     fkw (default: per-pattern generated code over the FKW arrays,\n"
          "                     register tiles with load-redundancy elimination, each layer's\n"
          "                     tile from --sparse-tune), csr (the CSR baseline), dense (ignore\n"
          "                     the annotation); ablations (PatDNN Fig. 2.13): fkr (FKR code,\n"
          "                     accumulators in memory), lre (+ kernel-level load-redundancy\n"
          "                     elimination, static tile rule), lre-filter (+ filter-level LRE:\n"
          "                     one input load serves the kernels of 2 filters at the same\n"
          "                     channel and pattern)\n"
          "  --sparse-tune FILE measured tiles of the sparse convs (JSON lines, kind sparse_conv,\n"
          "                     keyed by cpu, isa, threads, signature; scripts/prune_layers.sh);\n"
          "                     a layer gets its fastest tile on this cpu, isa and OMP_NUM_THREADS\n"
          "  --sparse-tile LxRxV[xF] force every lre/fkw layer's tile: L lanes (8, 16), R rows, V\n"
          "                     vectors (1-8), F filters per tile (1-4; filter-level LRE when\n"
          "                     > 1; default 1, lre-filter 2; for the tuner)\n"
          "  --layout MODE      GCD² layout selection per fusion block from measured costs\n"
          "                     (--layout-db): nchw, nchwc8, nchwc16 (every eligible block),\n"
          "                     local (each block's cheapest), global (least total with the\n"
          "                     reorders); the report's layout.predicted_ms gives every mode\n"
          "  --layout-db FILE   measured layout costs (JSON lines; scripts/layout_costs.sh)\n"
          "  --layout-keys      print the signatures --layout needs measured, and exit\n"
          "  --report FILE      JSON report in the stages' envelope (- = stderr): before/after\n"
          "                     (nodes, FLOPs, intermediate and peak bytes), lower {kernels,\n"
          "                     blocks, weights_bytes, arena_bytes, sparse_convs, arch}\n"
          "  -v, --verbose      progress on stderr\n"
          "  -h, --help         this help\n"
          "  --version          print the version\n"
          "Exit codes: 0 ok, 1 invalid input or I/O failure, 2 usage error, 3 internal error.\n");
}

static int valid_ident(const char *s) {
  if (!s[0] || isdigit((unsigned char)s[0])) return 0;
  for (; *s; s++) if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/** path = dir/name into buf (cap bytes). */
static char *join(char *buf, size_t cap, const char *dir, const char *name) {
  snprintf(buf, cap, "%s/%s", dir, name);
  return buf;
}

/** mkdir -p of path's parent directories (not path itself). ECG_ERR_INPUT naming the
 *  directory that could not be made. */
static int make_parents(const char *path, ecg_err *e) {
  char *p = strdup(path);
  if (!p) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  int rc = ECG_OK;
  for (char *s = strchr(p + 1, '/'); s && !rc; s = strchr(s + 1, '/')) {
    *s = 0;
    struct stat st;
    if (stat(p, &st) != 0 && mkdir(p, 0777) != 0 && errno != EEXIST)
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s: cannot create directory '%s': %s", path, p, strerror(errno));
    else if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
      rc = ecg_errf(e, ECG_ERR_INPUT, "%s: '%s' is not a directory", path, p);
    *s = '/';
  }
  free(p);
  return rc;
}

/** What is in the output directory before lowering. */
typedef struct target {
  bool exists;        /**< DIR exists (a directory) */
  bool is_link;       /**< DIR is a symbolic link to a directory: filled file by file, never replaced */
  ecg_names entries;  /**< its entries, sorted */
  ecg_manifest m;     /**< its manifest, if any */
  int n_foreign;      /**< entries not owned by m */
} target;

/** Look at DIR: refuse a non-directory, and a non-empty directory without a manifest
 *  unless force. Errors: ECG_ERR_INPUT naming DIR (and its first foreign file). */
static int inspect(const char *out, bool force, target *t, ecg_err *e) {
  memset(t, 0, sizeof *t);
  struct stat st;
  if (stat(out, &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return ECG_OK; /* make_parents names the culprit */
    return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", out, strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return ecg_errf(e, ECG_ERR_INPUT, "%s: exists and is not a directory", out);
  t->exists = true;
  t->is_link = lstat(out, &st) == 0 && S_ISLNK(st.st_mode);
  ECG_TRY(ecg_list_dir(out, &t->entries, e));
  ECG_TRY(ecg_manifest_read(out, &t->m, e));
  const char *first = NULL;
  for (int i = 0; i < t->entries.n; i++)
    if (!ecg_manifest_owns(&t->m, t->entries.v[i]) && !t->n_foreign++) first = t->entries.v[i];
  if (first && !t->m.present && !force)
    return ecg_errf(e, ECG_ERR_INPUT,
                    "%s: not empty and not an ecg-lower output (no " ECG_MANIFEST_NAME "; first foreign file: '%s'); "
                    "choose an empty or new directory, or --force to write into it (deletes nothing)",
                    out, first);
  return ECG_OK;
}

static void target_free(target *t) {
  ecg_names_free(&t->entries);
  ecg_manifest_free(&t->m);
}

/** Remove the files of a temporary directory we created, then the directory. */
static void remove_tmp(const char *dir) {
  ecg_names l;
  char p[4096];
  if (ecg_list_dir(dir, &l, NULL) == ECG_OK) {
    for (int i = 0; i < l.n; i++) unlink(join(p, sizeof p, dir, l.v[i]));
    ecg_names_free(&l);
  }
  rmdir(dir);
}

/** Write tmp's manifest: every file in tmp, and what its Makefile builds from them
 *  (X.o per source but the runner's, libecg_rt.a when the runtime is built here,
 *  lib<prefix>.a/.so, runner). */
static int write_manifest(const char *tmp, const char *prefix, ecg_names *files, ecg_err *e) {
  ecg_names built = {0};
  char p[4096];
  int rc = ecg_list_dir(tmp, files, e);
  for (int i = 0; !rc && i < files->n; i++) {
    const char *f = files->v[i];
    size_t n = strlen(f);
    if (n < 3 || strcmp(f + n - 2, ".c") || !strcmp(f, "runner_main.c")) continue;
    snprintf(p, sizeof p, "%.*s.o", (int)(n - 2), f);
    rc = ecg_names_add(&built, p, e);
  }
  if (!rc) rc = ecg_names_add(&built, "libecg_rt.a", e);
  snprintf(p, sizeof p, "lib%s.a", prefix);
  if (!rc) rc = ecg_names_add(&built, p, e);
  snprintf(p, sizeof p, "lib%s.so", prefix);
  if (!rc) rc = ecg_names_add(&built, p, e);
  if (!rc) rc = ecg_names_add(&built, "runner", e);
  if (!rc) rc = ecg_manifest_write(join(p, sizeof p, tmp, ECG_MANIFEST_NAME), files, &built, e);
  ecg_names_free(&built);
  return rc;
}

/** Delete from dir the files of manifest m that keep does not hold (and, when
 *  also_manifest, the manifest itself); a missing file is fine. */
static void delete_owned(const char *dir, const ecg_manifest *m, const ecg_names *keep, bool also_manifest) {
  char p[4096];
  const ecg_names *lists[2] = {&m->files, &m->built};
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < lists[k]->n; i++)
      if (!keep || !ecg_names_has(keep, lists[k]->v[i])) unlink(join(p, sizeof p, dir, lists[k]->v[i]));
  if (also_manifest) unlink(join(p, sizeof p, dir, ECG_MANIFEST_NAME));
}

/** Move the lowered files from tmp into the existing directory out, one rename each,
 *  then delete the files of out's old manifest that the new output does not have,
 *  and put the new manifest in last. Files not in the old manifest are never touched. */
static int install_files(const char *tmp, const char *out, const target *t, const ecg_names *files, ecg_err *e) {
  char a[4096], b[4096];
  struct stat st;
  for (int i = 0; i < files->n; i++) /* check first: nothing moves if one cannot */
    if (stat(join(b, sizeof b, out, files->v[i]), &st) == 0 && S_ISDIR(st.st_mode))
      return ecg_errf(e, ECG_ERR_INPUT, "%s: cannot write %s: a directory of that name is in the way", out, files->v[i]);
  for (int i = 0; i < files->n; i++)
    if (strcmp(files->v[i], ECG_MANIFEST_NAME) &&
        rename(join(a, sizeof a, tmp, files->v[i]), join(b, sizeof b, out, files->v[i])) != 0)
      return ecg_errf(e, ECG_ERR_INPUT, "%s: cannot write %s: %s", out, files->v[i], strerror(errno));
  if (t->m.present) delete_owned(out, &t->m, files, false);
  if (rename(join(a, sizeof a, tmp, ECG_MANIFEST_NAME), join(b, sizeof b, out, ECG_MANIFEST_NAME)) != 0)
    return ecg_errf(e, ECG_ERR_INPUT, "%s: cannot write " ECG_MANIFEST_NAME ": %s", out, strerror(errno));
  return ECG_OK;
}

/** Put the complete output in tmp at out (see the file comment). tmp is gone or empty
 *  afterwards on success. Errors: ECG_ERR_INPUT naming out. */
static int install(const char *tmp, const char *out, const target *t, const ecg_names *files, bool verbose, bool quiet, ecg_err *e) {
  if (!t->exists || (t->entries.n == 0 && !t->is_link)) { /* new or empty: one rename */
    if (rename(tmp, out) == 0) return ECG_OK;
    if (errno != ENOTEMPTY && errno != EEXIST) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", out, strerror(errno));
    return ecg_errf(e, ECG_ERR_INPUT, "%s: appeared while lowering; not replacing it", out);
  }
  if (t->m.present && t->n_foreign == 0 && !t->is_link && renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_EXCHANGE) == 0) {
    delete_owned(tmp, &t->m, NULL, true); /* tmp now holds the old output, all of it ours */
    if (rmdir(tmp) != 0) cli_note(PROG, quiet, "%s: the previous output could not be removed completely", out);
    return ECG_OK;
  }
  if (verbose && t->n_foreign)
    fprintf(stderr, PROG ": %s: keeping %d file(s) that ecg-lower did not write\n", out, t->n_foreign);
  return install_files(tmp, out, t, files, e);
}

/** Rewrite "TMP/rest" at the start of msg as "OUT/rest": messages name the user's
 *  directory, never the temporary one. */
static void name_user_dir(char *msg, size_t cap, const char *tmp, const char *out) {
  size_t n = strlen(tmp);
  if (strncmp(msg, tmp, n) || (msg[n] != '/' && msg[n] != ':')) return;
  char rest[1024];
  snprintf(rest, sizeof rest, "%s", msg + n);
  snprintf(msg, cap, "%s%s", out, rest);
}

enum { OPT_OUTPUT = 1, OPT_PREFIX, OPT_ARCH, OPT_SPARSE, OPT_FORCE, OPT_VERBOSE, OPT_QUIET, OPT_REPORT, OPT_HELP, OPT_VERSION,
       OPT_MEMPLAN, OPT_TARGET, OPT_SPARSE_TUNE, OPT_SPARSE_TILE, OPT_LAYOUT, OPT_LAYOUT_DB, OPT_LAYOUT_KEYS, OPT_INPUT_SHAPE };

int main(int argc, char **argv) {
  static const cli_opt opts[] = {{"output", 'o', 1, OPT_OUTPUT}, {"prefix", 0, 1, OPT_PREFIX},
                                 {"arch", 0, 1, OPT_ARCH},       {"sparse", 0, 1, OPT_SPARSE},   {"force", 0, 0, OPT_FORCE},
                                 {"verbose", 'v', 0, OPT_VERBOSE}, {"quiet", 'q', 0, OPT_QUIET}, {"report", 0, 1, OPT_REPORT},
                                 {"help", 'h', 0, OPT_HELP},     {"version", 0, 0, OPT_VERSION},
                                 {"memory-plan", 0, 1, OPT_MEMPLAN}, {"target", 0, 1, OPT_TARGET},
                                 {"sparse-tune", 0, 1, OPT_SPARSE_TUNE}, {"sparse-tile", 0, 1, OPT_SPARSE_TILE},
                                 {"layout", 0, 1, OPT_LAYOUT}, {"layout-db", 0, 1, OPT_LAYOUT_DB},
                                 {"layout-keys", 0, 0, OPT_LAYOUT_KEYS}, {"input-shape", 0, 1, OPT_INPUT_SHAPE},
                                 {0, 0, 0, 0}};
  cli_shape shapes[16];
  int n_shapes = 0;
  ecg_lower_sparse_opts so = {0};
  const char *out = NULL, *in = "-", *prefix = "ecg_model", *arch = "native", *sparse = "fkw", *report = NULL, *val, *memplan = "peak";
  const char *backend = "c", *layout_db = NULL;
  int layout = -1, layout_keys = 0; /* --layout (layout_sel.h), absent: no selection, NCHW */
  sbuf layout_json = {0};
  bool verbose = false, force = false, quiet = false;
  int have_in = 0, c;
  ecg_err e = {0};
  cli cl;
  cli_init(&cl, argc, argv, opts);
  while ((c = cli_next(&cl, &val, &e)) != CLI_END) {
    switch (c) {
    case CLI_ERROR: usage(stderr); return cli_fail(PROG, e.code, e.msg);
    case CLI_POSITIONAL:
      if (have_in++) return cli_fail(PROG, ECG_ERR_USAGE, "more than one input file (try --help)");
      in = val;
      break;
    case OPT_OUTPUT: out = val; break;
    case OPT_PREFIX: prefix = val; break;
    case OPT_ARCH: arch = val; break;
    case OPT_TARGET:
      if (strcmp(val, "c") && strcmp(val, "opencl") && strcmp(val, "c+opencl")) { fprintf(stderr, PROG ": unknown --target '%s' (expected c, opencl or c+opencl)\n", val); return 2; }
      backend = val;
      break;
    case OPT_SPARSE:
      if (strcmp(val, "fkw") && strcmp(val, "lre") && strcmp(val, "lre-filter") && strcmp(val, "fkr") && strcmp(val, "csr") && strcmp(val, "dense")) {
        fprintf(stderr, PROG ": unknown --sparse '%s' (expected fkw, lre-filter, lre, fkr, csr or dense)\n", val);
        return 2;
      }
      sparse = val;
      break;
    case OPT_SPARSE_TUNE: so.tune_path = val; break;
    case OPT_SPARSE_TILE: {
      char tail;
      /* LxRxV or LxRxVxF, nothing after */
      int n4 = sscanf(val, "%dx%dx%dx%d%c", &so.tile[0], &so.tile[1], &so.tile[2], &so.tile[3], &tail);
      int nf = n4 == 4 ? 4 : sscanf(val, "%dx%dx%d%c", &so.tile[0], &so.tile[1], &so.tile[2], &tail);
      if (nf == 3) so.tile[3] = 0;
      if ((nf != 3 && nf != 4) || (so.tile[0] != 8 && so.tile[0] != 16) || so.tile[1] < 1 || so.tile[1] > 8 || so.tile[2] < 1 ||
          so.tile[2] > 8 || (nf == 4 && (so.tile[3] < 1 || so.tile[3] > 4))) {
        fprintf(stderr, PROG ": --sparse-tile LANESxROWSxVECS[xFILTERS]: lanes 8 or 16, rows and vecs 1 to 8, filters 1 to 4 (got '%s')\n", val);
        return 2;
      }
      break;
    }
    case OPT_MEMPLAN: {
      lw_plan_algo a;
      if (lw_plan_parse(val, &a) != 0) { fprintf(stderr, PROG ": unknown --memory-plan '%s' (expected peak, bestfit or size)\n", val); return 2; }
      memplan = val;
      break;
    }
    case OPT_FORCE: force = true; break;
    case OPT_VERBOSE: verbose = true; quiet = false; break;
    case OPT_QUIET: quiet = true; verbose = false; break;
    case OPT_REPORT: report = val; break;
    case OPT_LAYOUT:
      if ((layout = lw_layout_parse(val)) < 0) { fprintf(stderr, PROG ": unknown --layout '%s' (expected global, local, nchw, nchwc8 or nchwc16)\n", val); return 2; }
      break;
    case OPT_LAYOUT_DB: layout_db = val; break;
    case OPT_LAYOUT_KEYS: layout_keys = 1; break;
    case OPT_HELP: usage(stdout); return 0;
    case OPT_VERSION: printf(PROG " %s\n", ECG_VERSION_STRING); return 0;
    case OPT_INPUT_SHAPE:
      if (n_shapes == 16) { fprintf(stderr, PROG ": at most 16 --input-shape\n"); return 2; }
      if (cli_parse_shape(val, &shapes[n_shapes], &e) != ECG_OK) {
        for (int i = 0; i < n_shapes; i++) free((void *)shapes[i].name);
        return cli_fail(PROG, e.code, e.msg);
      }
      n_shapes++;
      break;
    }
  }
  if (layout_keys) { /* the signatures to measure (scripts/layout_costs.sh); no lowering */
    ecg_graph *kg = NULL;
    int krc = ecg_read_path(in, &kg, &e);
    if (!krc) krc = lw_layout_keys(kg, stdout, &e);
    ecg_graph_free(kg);
    if (krc) fprintf(stderr, PROG ": %s\n", e.msg);
    return krc;
  }
  if (layout >= 0 && !layout_db) { fprintf(stderr, PROG ": --layout needs --layout-db FILE (measured costs: scripts/layout_costs.sh)\n"); return 2; }
  if (!out) { fprintf(stderr, PROG ": missing -o DIR\n"); usage(stderr); return 2; }
  if (!ecg_arch_find(arch)) { fprintf(stderr, PROG ": unknown --arch '%s' (expected one of %s)\n", arch, ecg_arch_names()); return 2; }
  if (!valid_ident(prefix)) { fprintf(stderr, PROG ": --prefix '%s' is not a C identifier\n", prefix); return 2; }
  if (!strcmp(in, "-") && isatty(fileno(stdin))) { fprintf(stderr, PROG ": no input (pipe an ECG in or name a file)\n"); usage(stderr); return 2; }
  /* strip trailing slashes: "out/model/" names out/model */
  char *dir = strdup(out);
  if (!dir) return cli_fail(PROG, ECG_ERR_INTERNAL, "out of memory");
  for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) dir[n - 1] = 0;

  target t;
  ecg_graph *g = NULL;
  char tmp[4096] = "";
  ecg_names files = {0};
  int rc = inspect(dir, force, &t, &e);
  if (!rc && t.is_link) { /* work beside the real directory: renames stay on its file system */
    char *real = realpath(dir, NULL);
    if (!real) rc = ecg_errf(&e, ECG_ERR_INPUT, "%s: %s", dir, strerror(errno));
    else { free(dir); dir = real; }
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ecg_out ro = {0};
  ecg_lower_stats ls = {0};
  /* the report file first: one that cannot be written leaves no output either */
  if (!rc && report && strcmp(report, "-")) rc = ecg_out_open(&ro, report, &e);
  if (!rc) rc = ecg_read_path(in, &g, &e);
  /* --input-shape: bind symbolic dims of the stored graph, then infer and fold again (the
   * shape subgraphs kept for the symbols become constants): one ECG, many static builds */
  for (int i = 0; !rc && i < n_shapes; i++) rc = ecg_bind_input(g, shapes[i].name, shapes[i].rank, shapes[i].dims, &e);
  if (!rc && n_shapes) rc = ecg_fold_static_ifs(g, NULL, NULL, &e);
  if (!rc && n_shapes) rc = ecg_validate(g, &e);
  if (!rc && !n_shapes) rc = lw_dyn_flatten(g, &e); /* a dynamic build's Ifs: guarded nodes */
  if (!rc && !n_shapes) lw_dyn_numbers(g); /* symbolic dims RDP proved to be numbers become those numbers */
  for (int i = 0; i < n_shapes; i++) free((void *)shapes[i].name);
  if (!rc && !t.exists) rc = make_parents(dir, &e);
  if (!rc) {
    snprintf(tmp, sizeof tmp, "%s.ecg-lower-tmp%ld", dir, (long)getpid());
    if (mkdir(tmp, 0777) != 0) {
      rc = ecg_errf(&e, ECG_ERR_INPUT, "%s: %s", dir, strerror(errno));
      tmp[0] = 0;
    }
  }
  if (!rc && layout >= 0) rc = lw_layout_select(g, layout, layout_db, &layout_json, &e);
  if (!rc && layout_json.oom) rc = ecg_errf(&e, ECG_ERR_INTERNAL, "out of memory");
  if (!rc) rc = ecg_lower_dir_sparse(g, tmp, prefix, arch, sparse, memplan, backend, &so, &ls, &e);
  for (char *line = ls.notes, *nl; !rc && line && *line; line = nl + 1) { /* c+opencl: placed nodes run on the CPU */
    if (!(nl = strchr(line, '\n'))) break;
    *nl = 0;
    cli_note(PROG, quiet, "%s", line);
  }
  free(ls.notes);
  ls.notes = NULL;
  if (!rc) rc = write_manifest(tmp, prefix, &files, &e);
  if (!rc) rc = install(tmp, dir, &t, &files, verbose, quiet, &e);
  if (tmp[0]) {
    name_user_dir(e.msg, sizeof e.msg, tmp, dir);
    if (rc) remove_tmp(tmp); /* still only our new files */
    else rmdir(tmp);         /* gone after a swap, empty after file moves */
  }
  if (!rc && report) { /* DESIGN.md "Conventions across issues": the one report envelope */
    FILE *rf = ro.f ? ro.f : stderr;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(rf, "{\"stage\": \"ecg-lower\", \"version\": \"%s\", \"time_ms\": %.3f, ", ECG_VERSION_STRING,
            (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
    ecg_sizes_json(rf, "before", ecg_measure(g, false));
    fprintf(rf, ", ");
    ecg_sizes_json(rf, "after", ecg_measure(g, true));
    fprintf(rf, ", \"lower\": {\"kernels\": %d, \"blocks\": %d, \"weights_bytes\": %zu, \"arena_bytes\": %zu, "
                "\"arena_lower_bound\": %zu, \"memory_plan\": \"%s\", \"sparse_convs\": %d, \"arch\": \"%s\", \"target\": \"%s\"%s%s}}\n",
            ls.kernels, ls.blocks, ls.weights_bytes, ls.arena_bytes, ls.arena_lower_bound, memplan, ls.sparse_convs, arch, backend,
            layout_json.len ? ", " : "", layout_json.len ? layout_json.s : "");
    if (ro.f) rc = ecg_out_commit(&ro, &e);
  } else if (ro.f) ecg_out_abort(&ro);
  if (rc) fprintf(stderr, PROG ": %s\n", e.msg);
  else if (verbose) fprintf(stderr, PROG ": %zu nodes -> %s\n", g->n_nodes, dir);
  sb_free(&layout_json);
  ecg_names_free(&files);
  target_free(&t);
  ecg_graph_free(g);
  free(dir);
  return rc;
}
