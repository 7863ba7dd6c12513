/* ecg-bench: build a lowered model directory, run it on ONNX test data or seeded random
 * inputs, check its outputs, time it, and optionally time ONNX Runtime side by side.
 * Prints one JSON object on stdout; messages on stderr prefixed "ecg-bench: ".
 * Exit: 0 pass (or no data to check), 1 mismatch / invalid input / build failure,
 * 2 usage, 3 internal error. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "manifest.h"

static const char usage_text[] =
    "usage: ecg-bench DIR [--data DIR]... [--random SEED] [--ort] [--check] [--rtol 1e-3] [--atol 1e-4]\n"
    "                 [--runs 20] [--warmup 3] [--threads 1] [--interleave K] [--ort-noise] [--ort-profile FILE] [--model M.onnx]\n"
    "                 [--cc CC] [--save DIR] [--device N] [--profile FILE [--trace FILE]] [-q|-v]\n"
    "                 [--help] [--version]\n"
    "       ecg-bench --peak\n"
    "       ecg-bench --profile-device SWEEPDIR [--target c|opencl] [--device N] [--runs R] [--threads T] > PROFILE.json\n"
    "\n"
    "Builds the lowered model directory DIR (an `ecg-lower -o DIR` output: it must hold\n"
    "ecg-lower.manifest; make -C DIR), runs DIR/runner on the inputs of an ONNX test data\n"
    "set (--data: input_K.pb, checked against output_K.pb) or on seeded random inputs\n"
    "(--random SEED, default 0: floats in [-1,1), integers in [0,100), or [0,2) for names\n"
    "containing \"mask\", bools 0/1), checks the outputs against a reference, and prints\n"
    "one JSON object: model, pass, reference, max_abs_err, max_rel_err (null when a\n"
    "mismatch is NaN or infinite: the error is unbounded), mismatches,\n"
    "worst_tensor, median_ms, p10_ms, p90_ms, runs, threads (+ ort_median_ms, ort_p10_ms,\n"
    "ort_p90_ms, ratio with --ort), arch, emulated, target (+ device for opencl).\n"
    "\n"
    "A directory lowered for another ISA (model.json \"arch\": ecg-lower --arch aarch64 or\n"
    "riscv64) is cross-built by its Makefile and run under qemu-user (qemu-aarch64 -L\n"
    "/usr/aarch64-linux-gnu, or $QEMU_LD_PREFIX): \"emulated\": true, --runs 1 --warmup 0\n"
    "unless given, and with --ort no ratio (emulated times are not performance).\n"
    "\n"
    "A directory lowered with --target opencl (model.json \"target\": \"opencl\") builds its\n"
    "host code against the OpenCL ICD loader and runs on OpenCL device N (--device N: an\n"
    "index into every platform's devices in order, as `clinfo -l` lists them; default 0);\n"
    "the report names it (\"device\": CL_DEVICE_NAME). On a machine without a GPU, PoCL\n"
    "(Debian pocl-opencl-icd) is the device. A --target c+opencl directory (EOP placements:\n"
    "kernels split between the CPU and the device) is built as a C one, also linking the\n"
    "ICD loader, and takes --device and reports the device alike.\n"
    "\n"
    "The reference is --data's output_K.pb, else (with --ort) ONNX Runtime's outputs on\n"
    "the same inputs. Without either nothing is checked: \"pass\": null, and stderr says\n"
    "\"not verified\".\n"
    "\n"
    "  --data DIR     ONNX test data set (input_K.pb / output_K.pb); repeat it (--data D1\n"
    "                 --data D2 ...) to run several data sets against the one compiled\n"
    "                 model: one JSON line each, with \"data\": DIR (a set that fails to\n"
    "                 load or run gets \"pass\": false and \"error\"); exit 1 if any fails.\n"
    "                 The inputs must have the shapes the model was compiled for (a set\n"
    "                 of another shape is an error naming the input and both shapes);\n"
    "                 a dynamic-shape build (ecg-lower without --input-shape) runs each\n"
    "                 set at its own input shapes, and needs --data\n"
    "  --random SEED  seeded random inputs\n"
    "  --ort          run ONNX Runtime (node tools/bench/ort_run.mjs; script from\n"
    "                 $ECG_BENCH_ORT, node from $ECG_NODE) on the same inputs: time it side\n"
    "                 by side, and without --data check our outputs against its outputs\n"
    "  --check        exit 1 unless the outputs were checked and passed (no reference = fail)\n"
    "  --rtol R, --atol A  pass when |ours-ref| <= A + R*|ref| elementwise\n"
    "  --runs R, --warmup W, --threads N  timing (medians/percentiles in ms)\n"
    "  --interleave K with --ort: split the R runs into K chunks and alternate the sides,\n"
    "                 ours then ONNX Runtime, chunk by chunk (each chunk a fresh process\n"
    "                 with its W warm-up runs); the medians and percentiles are over all R\n"
    "                 runs of each side, so a slow spell of the machine lands on both\n"
    "                 sides instead of one (default 1: all of ours, then all of ORT's).\n"
    "                 K <= R; not with --profile or --ort-noise\n"
    "  --ort-noise    with --data: also run ONNX Runtime with graph optimisations disabled\n"
    "                 and report how far IT is from the expected outputs at the same\n"
    "                 tolerance (ort_noise_max_abs_err, ort_noise_mismatches): the\n"
    "                 reference's own float32 disagreement on this input\n"
    "  --model M      ONNX model for --ort/--ort-noise (default: \"source\" in DIR/model.json)\n"
    "  --cc CC        compiler for the lowered directory (make CC=CC; MARCH=... from the\n"
    "                 environment reaches the lowered Makefile)\n"
    "  --save DIR     write the inputs and our outputs as input_K.pb / output_K.pb\n"
    "  --profile FILE per-kernel profile as JSON: mean ms over the timed runs, FLOPs and\n"
    "                 bytes (model.json kernel_costs), GFLOP/s, fraction of this machine's\n"
    "                 FMA peak (per core x --threads), arithmetic intensity, memory/compute\n"
    "                 bound and fraction of the roofline (the peak and the STREAM-triad\n"
    "                 bandwidth are measured once per CPU and cached in ~/.cache/ecg/peak.json,\n"
    "                 or $ECG_PEAK_CACHE); the runs are timed kernel by kernel\n"
    "  --trace FILE   with --profile: a Chrome-trace timeline (chrome://tracing, Perfetto)\n"
    "  --ort-profile FILE  ONNX Runtime's per-node profile, the layer-by-layer counterpart of\n"
    "                 --profile: one more ONNX Runtime run (--runs, --warmup, --threads) on the\n"
    "                 same inputs with its profiler on (not the run timed with --ort), each\n"
    "                 node's median kernel ms as JSON (tools/bench/ort_run.mjs --profile)\n"
    "  --peak         measure this core's FP32 FMA peak and streaming bandwidth now, print\n"
    "                 them as JSON and refresh the cache (no DIR)\n"
    "  --device N     OpenCL device of an opencl or c+opencl directory (usage error for a C one)\n"
    "  --profile-device SWEEPDIR\n"
    "                 EOP's device profile (VEE '22 §3.2): every one-node ECG that\n"
    "                 `ecg-partition --emit-sweeps SWEEPDIR` wrote (operators cut along batch\n"
    "                 and rows) lowered with --target (c, default, or opencl on --device) and\n"
    "                 timed (median of --runs, default 5), each operator's samples fitted to\n"
    "                 the three patterns (constant, linear, staircase; held-out MAPE); one\n"
    "                 JSON object on stdout (no DIR), one file per device\n"
    "  --target T     with --profile-device: c or opencl\n"
    "  -q, --quiet    errors only on stderr (no \"not verified\" note)\n"
    "  -v, --verbose  per-tensor details on stderr\n"
    "Exit: 0 pass (or nothing to check, without --check), 1 mismatch/not verified with\n"
    "--check/invalid input/build or ONNX Runtime failure/I/O failure, 2 usage, 3 internal.\n";

/** Options after parsing. Times in ms; tolerances are unitless. */
typedef struct opts {
  const char *dir, *data, *model, *cc, *save, *profile, *trace;
  const char *ort_profile;   /**< --ort-profile FILE: ONNX Runtime's per-node profile */
  uint32_t seed;
  double rtol, atol;
  int runs, warmup, threads;
  int interleave;            /**< --interleave K: chunks per side, alternated (1: one each) */
  int device;                /**< --device N; -1 when not given */
  bool runs_set, warmup_set; /**< given on the command line (else emulated runs use 1 and 0) */
  bool ort, ort_noise, verbose, check, quiet, peak;
  const char *profile_device, *target; /**< --profile-device SWEEPDIR, --target */
  const char **datas;        /**< every --data DIR in order (data = datas[0]); n_data of them */
  int n_data;
} opts;

/* ---------------------------------------------------------------- temp files */

/* Temporary directory and the files in it, removed at exit and on SIGINT/SIGTERM.
 * Paths are built before any file is created, so the signal handler only unlinks. */
static char g_tmpdir[PATH_MAX];
static char **g_tmpfiles;
static int g_ntmp;

/** Remove the temporary files and directory (async-signal-safe). */
static void cleanup_tmp(void) {
  for (int i = 0; i < g_ntmp; i++)
    if (g_tmpfiles[i]) unlink(g_tmpfiles[i]);
  if (g_tmpdir[0]) rmdir(g_tmpdir);
}

/** Between two data sets: remove the files and directory, forget their paths. */
static void reset_tmp(void) {
  cleanup_tmp();
  int n = g_ntmp + 1; /* the profile path follows the g_ntmp data paths */
  char **f = g_tmpfiles;
  g_ntmp = 0;
  g_tmpfiles = NULL;
  g_tmpdir[0] = 0;
  for (int i = 0; f && i < n; i++) free(f[i]);
  free(f);
}

/** SIGINT/SIGTERM: clean up and exit 128+sig. */
static void on_signal(int sig) {
  cleanup_tmp();
  _exit(128 + sig);
}

/** Create the temp dir and n file paths (NAME_K.bin style, never from tensor names).
 *  Errors: ECG_ERR_INPUT (I/O: "mkdtemp DIR: strerror"), ECG_ERR_INTERNAL (out of
 *  memory). paths[i] point into g_tmpfiles. */
static int make_tmp(int n_in, int n_out, char ***in_paths, char ***out_paths, ecg_err *e) {
  const char *base = getenv("TMPDIR");
  snprintf(g_tmpdir, sizeof g_tmpdir, "%s/ecg-bench.XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(g_tmpdir)) {
    int rc = ecg_errf(e, ECG_ERR_INPUT, "mkdtemp %s: %s", g_tmpdir, strerror(errno));
    g_tmpdir[0] = 0;
    return rc;
  }
  g_tmpfiles = calloc((size_t)(n_in + n_out + 2), sizeof *g_tmpfiles);
  if (!g_tmpfiles) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int i = 0; i < n_in + n_out; i++) {
    if (asprintf(&g_tmpfiles[i], "%s/%s_%d.bin", g_tmpdir, i < n_in ? "in" : "out", i < n_in ? i : i - n_in) < 0) {
      g_tmpfiles[i] = NULL;
      return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    }
    g_ntmp = i + 1;
  }
  /* the runner's --profile file (ecg-bench --profile) */
  if (asprintf(&g_tmpfiles[n_in + n_out], "%s/profile.tsv", g_tmpdir) < 0) {
    g_tmpfiles[n_in + n_out] = NULL;
    return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  }
  g_ntmp = n_in + n_out + 1;
  *in_paths = g_tmpfiles;
  *out_paths = g_tmpfiles + n_in;
  return ECG_OK;
}

/** Write bytes to path. ECG_ERR_INPUT "PATH: cannot write: strerror" on failure. */
static int write_raw(const char *path, const void *data, size_t bytes, ecg_err *e) {
  FILE *f = fopen(path, "wb");
  int ok = f && (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  if (f && fclose(f) != 0) ok = 0;
  return ok ? ECG_OK : ecg_errf(e, ECG_ERR_INPUT, "%s: cannot write: %s", path, strerror(errno));
}

/** Read exactly t->bytes bytes from path into t->data (allocated here); a sequence output
 *  (t->seq): the whole sequence file, whatever its size (up to 4 GiB), checked by its parse.
 *  ECG_ERR_INPUT when the runner wrote a file of another size (message names the tensor). */
static int read_raw(const char *path, bt_tensor *t, ecg_err *e) {
  struct stat st;
  if (stat(path, &st) != 0) return ecg_errf(e, ECG_ERR_INPUT, "output '%s': runner wrote no file", t->name);
  if (t->seq) {
    if ((uint64_t)st.st_size > ((uint64_t)1 << 32)) return ecg_errf(e, ECG_ERR_INPUT, "output '%s': sequence file too large", t->name);
    free(t->data);
    t->data = NULL;
    t->bytes = (size_t)st.st_size;
    ECG_TRY(bt_tensor_alloc(t, e));
    FILE *f = fopen(path, "rb");
    int ok = f && (t->bytes == 0 || fread(t->data, 1, t->bytes, f) == t->bytes);
    if (f) fclose(f);
    if (!ok) return ecg_errf(e, ECG_ERR_INPUT, "output '%s': cannot read %s", t->name, path);
    bt_tensor *items;
    int n;
    ECG_TRY(bt_seq_items(t, &items, &n, e)); /* well formed */
    free(items);
    return ECG_OK;
  }
  if ((size_t)st.st_size != t->bytes)
    return ecg_errf(e, ECG_ERR_INPUT, "output '%s': runner wrote %lld bytes, expected %zu", t->name,
                    (long long)st.st_size, t->bytes);
  ECG_TRY(bt_tensor_alloc(t, e));
  FILE *f = fopen(path, "rb");
  int ok = f && (t->bytes == 0 || fread(t->data, 1, t->bytes, f) == t->bytes);
  if (f) fclose(f);
  return ok ? ECG_OK : ecg_errf(e, ECG_ERR_INPUT, "output '%s': cannot read %s", t->name, path);
}

/* ---------------------------------------------------------------- test data */

/** A loaded set of TensorProtos (input_K.pb or output_K.pb, K = 0, 1, ...). */
typedef struct pbset {
  bt_tensor *t;
  int n;
} pbset;

/** Free a pbset. */
static void pbset_clear(pbset *s) {
  for (int i = 0; i < s->n; i++) bt_tensor_clear(&s->t[i]);
  free(s->t);
  memset(s, 0, sizeof *s);
}

/** The model tensor of ts[n] named name, or NULL. */
static const bt_tensor *io_input(const bt_tensor *ts, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(ts[i].name, name)) return &ts[i];
  return NULL;
}

/** The file's bytes (at most 4 GiB) into *buf (allocated), *len. ECG_ERR_INPUT when unreadable. */
static int slurp(const char *path, uint8_t **buf, size_t *len, ecg_err *e) {
  FILE *f = fopen(path, "rb");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  size_t cap = 1 << 16;
  *len = 0;
  *buf = malloc(cap);
  while (*buf) {
    if (*len == cap) {
      uint8_t *nb = cap < ((size_t)1 << 32) ? realloc(*buf, cap * 2) : NULL;
      if (!nb) { free(*buf); *buf = NULL; break; }
      *buf = nb;
      cap *= 2;
    }
    size_t got = fread(*buf + *len, 1, cap - *len, f);
    *len += got;
    if (!got) break;
  }
  fclose(f);
  return *buf ? ECG_OK : ecg_errf(e, ECG_ERR_INPUT, "%s: too large or out of memory", path);
}

/** Load dir/PREFIX_K.pb for K = 0.. while the files exist. Errors as bt_tensorpb_read.
 *  With the model's tensors want[nw] (its inputs, or its outputs): a file holding an ONNX
 *  OptionalProto for an optional value V (the model has V and V:present, format/ops/optional.c)
 *  gives two tensors, V (the element; zeros of the model's shape, or an empty sequence, when
 *  the optional is empty) and V:present (bool scalar); the file at the position of a run-time
 *  sequence V (files in the model's order, an optional counting once) is read as a
 *  SequenceProto, or an OptionalProto of one when V:present follows (seqpb.c). */
static int pbset_load(const char *dir, const char *prefix, const bt_tensor *wants, int nw, pbset *s, ecg_err *e) {
  memset(s, 0, sizeof *s);
  bool optionals = false;
  for (int i = 0; i < nw; i++) {
    size_t l = strlen(wants[i].name), ls = strlen(ECG_OPTIONAL_PRESENT);
    optionals |= l > ls && !strcmp(wants[i].name + l - ls, ECG_OPTIONAL_PRESENT);
  }
  for (int k = 0, wi = 0;; k++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, k);
    if (access(path, F_OK) != 0) return ECG_OK;
    bt_tensor *nt = realloc(s->t, sizeof *nt * (size_t)(s->n + 2));
    if (!nt) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
    s->t = nt;
    int present = -1;
    const bt_tensor *pw = wi < nw ? &wants[wi] : NULL;
    if (pw && pw->seq) { /* a run-time sequence, or an optional one */
      char pn[512];
      snprintf(pn, sizeof pn, "%s" ECG_OPTIONAL_PRESENT, pw->name);
      bool opt = wi + 1 < nw && !strcmp(wants[wi + 1].name, pn);
      uint8_t *buf = NULL;
      size_t len = 0;
      ECG_TRY(slurp(path, &buf, &len, e));
      int rc = ECG_OK;
      if (opt) {
        int r = bt_optionalpb_decode(buf, len, path, &s->t[s->n], &present, e);
        if (r == 0) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: '%s' is an optional sequence, but the file is no OptionalProto", path, pw->name);
        else if (r < 0) rc = -r;
        else if (!s->t[s->n].seq) {
          bt_tensor_clear(&s->t[s->n]);
          rc = ecg_errf(e, ECG_ERR_INPUT, "%s: '%s' is an optional sequence, but the file holds a tensor", path, pw->name);
        }
      } else {
        rc = bt_seqpb_decode(buf, len, path, &s->t[s->n], e);
      }
      free(buf);
      if (rc) return rc;
      wi += opt ? 2 : 1;
    } else {
      ECG_TRY(bt_pb_read(path, &s->t[s->n], optionals ? &present : NULL, e));
      wi += present < 0 ? 1 : 2;
    }
    s->n++;
    if (present < 0) continue;
    bt_tensor *el = &s->t[s->n - 1];
    char pn[512];
    snprintf(pn, sizeof pn, "%s" ECG_OPTIONAL_PRESENT, el->name);
    const bt_tensor *want = io_input(wants, nw, el->name), *wflag = io_input(wants, nw, pn);
    if ((!want || !wflag) && pw && wi >= 2 && wi - 1 < nw && strlen(wants[wi - 1].name) > strlen(pw->name) &&
        !strncmp(wants[wi - 1].name, pw->name, strlen(pw->name)) && !strcmp(wants[wi - 1].name + strlen(pw->name), ECG_OPTIONAL_PRESENT)) {
      want = pw; /* another name in the file than in the model: by position */
      wflag = &wants[wi - 1];
      snprintf(pn, sizeof pn, "%s" ECG_OPTIONAL_PRESENT, el->name);
    }
    if (!want || !wflag)
      return ecg_errf(e, ECG_ERR_INPUT, "%s: an optional value '%s', but the model has no optional input of that name", path, el->name);
    if (!present && want->seq) { /* empty: an empty sequence */
      char name[256];
      snprintf(name, sizeof name, "%s", el->name);
      bt_tensor_clear(el);
      ECG_TRY(bt_seq_from_items(el, name, want->dtype, NULL, 0, e));
    } else if (!present) { /* empty: the element buffer is zeros of the model's shape */
      char name[256];
      snprintf(name, sizeof name, "%s", el->name);
      bt_tensor_clear(el);
      ECG_TRY(bt_tensor_init(el, name, want->dtype, want->rank, want->dims, e));
      ECG_TRY(bt_tensor_alloc(el, e));
    }
    bt_tensor *fl = &s->t[s->n];
    memset(fl, 0, sizeof *fl);
    ECG_TRY(bt_tensor_init(fl, pn, ECG_BOOL, 0, NULL, e));
    s->n++;
    ECG_TRY(bt_tensor_alloc(fl, e));
    *(uint8_t *)fl->data = (uint8_t)present;
  }
}

/** Match each model tensor want[i] with a data tensor: map[i] = index into have.
 *  By TensorProto name when every wanted name is present, else by order when the
 *  counts agree. Then check dtype and shape. Errors: ECG_ERR_INPUT naming the tensor. */
static int match(const bt_tensor *want, int nw, const pbset *have, const char *what, const char *dir,
                 bool verbose, int *map, ecg_err *e) {
  bool by_name = true;
  for (int i = 0; i < nw && by_name; i++) {
    map[i] = -1;
    for (int j = 0; j < have->n; j++)
      if (strcmp(want[i].name, have->t[j].name) == 0) map[i] = j;
    by_name = map[i] >= 0;
  }
  if (!by_name) {
    if (have->n != nw)
      return ecg_errf(e, ECG_ERR_INPUT, "%s: %d %s_K.pb files for %d model %ss, and names do not match", dir,
                      have->n, what, nw, what);
    for (int i = 0; i < nw; i++) map[i] = i;
    if (verbose) fprintf(stderr, "ecg-bench: %ss matched by order (names differ)\n", what);
  }
  for (int i = 0; i < nw; i++) {
    const bt_tensor *w = &want[i];
    bt_tensor *h = &have->t[map[i]];
    /* ONNX's backend test data stores bfloat16 tensors as uint16 bits */
    if (w->dtype == ECG_BFLOAT16 && h->dtype == ECG_UINT16) h->dtype = ECG_BFLOAT16;
    if (w->seq || h->seq) { /* a run-time sequence: its items carry their shapes */
      if (h->seq && w->seq && h->dtype == 0) h->dtype = w->dtype; /* an empty one names no element type */
      if (w->seq != h->seq || w->dtype != h->dtype)
        return ecg_errf(e, ECG_ERR_INPUT, "%s '%s': %s/%s_%d.pb has %s of %s, the model expects %s of %s", what, w->name, dir, what,
                        map[i], h->seq ? "a sequence" : "a tensor", ecg_dtype_name(h->dtype), w->seq ? "a sequence" : "a tensor",
                        ecg_dtype_name(w->dtype));
      continue;
    }
    bool same = bt_same_shape(w, h);
    if (w->sym && w->rank == h->rank) { /* a dynamic-shape build: the numeric dims must match */
      same = true;
      for (int d = 0; d < w->rank; d++) same &= (w->sym >> d & 1) || w->dims[d] == h->dims[d];
    }
    if (w->dtype != h->dtype || !same) {
      char a[256], b[256];
      return ecg_errf(e, ECG_ERR_INPUT, "%s '%s': %s/%s_%d.pb has %s [%s], the model expects %s [%s]%s", what,
                      w->name, dir, what, map[i], ecg_dtype_name(h->dtype), bt_dims_str(h, b, sizeof b),
                      ecg_dtype_name(w->dtype), bt_dims_str(w, a, sizeof a),
                      w->dtype != h->dtype ? ""
                      : w->sym ? " (the numeric dims of a dynamic-shape build are fixed)"
                               : " (a lowered model runs at the shapes it was compiled for; other shapes are not supported)");
    }
  }
  return ECG_OK;
}

/* ---------------------------------------------------------------- args */

/** Parse a non-negative int option; false when malformed. */
static bool parse_int(const char *s, int min, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > INT_MAX) return false;
  *out = (int)v;
  return true;
}

/** Parse argv into *o. Returns 0 to run, -1 when --help/--version was printed,
 *  ECG_ERR_USAGE (message in e) otherwise. */
static int parse_args(int argc, char **argv, opts *o, ecg_err *e) {
  *o = (opts){.rtol = 1e-3, .atol = 1e-4, .runs = 20, .warmup = 3, .threads = 1, .interleave = 1, .device = -1};
  enum { O_DATA = 1, O_RANDOM, O_RTOL, O_ATOL, O_RUNS, O_WARMUP, O_THREADS, O_ORT, O_ORT_NOISE, O_MODEL, O_CC, O_SAVE,
         O_CHECK, O_VERBOSE, O_QUIET, O_HELP, O_VERSION, O_PROFILE, O_TRACE, O_PEAK, O_DEVICE, O_PROFDEV, O_TARGET, O_INTERLEAVE,
         O_ORT_PROFILE };
  static const cli_opt lo[] = {
      {"data", 0, 1, O_DATA},       {"random", 0, 1, O_RANDOM},   {"rtol", 0, 1, O_RTOL},
      {"atol", 0, 1, O_ATOL},       {"runs", 0, 1, O_RUNS},       {"warmup", 0, 1, O_WARMUP},
      {"threads", 0, 1, O_THREADS}, {"ort", 0, 0, O_ORT},         {"ort-noise", 0, 0, O_ORT_NOISE},
      {"model", 0, 1, O_MODEL},     {"cc", 0, 1, O_CC},           {"save", 0, 1, O_SAVE},
      {"check", 0, 0, O_CHECK},     {"verbose", 'v', 0, O_VERBOSE}, {"quiet", 'q', 0, O_QUIET}, {"help", 'h', 0, O_HELP},
      {"version", 0, 0, O_VERSION}, {"profile", 0, 1, O_PROFILE}, {"trace", 0, 1, O_TRACE},
      {"peak", 0, 0, O_PEAK},       {"device", 0, 1, O_DEVICE}, {"profile-device", 0, 1, O_PROFDEV},
      {"target", 0, 1, O_TARGET},   {"interleave", 0, 1, O_INTERLEAVE}, {"ort-profile", 0, 1, O_ORT_PROFILE}, {0, 0, 0, 0}};
  bool have_random = false;
  cli cl;
  cli_init(&cl, argc, argv, lo);
  const char *val;
  int c, n_pos = 0;
  while ((c = cli_next(&cl, &val, e)) != CLI_END) {
    char *end;
    int seed;
    switch (c) {
    case CLI_ERROR: return ECG_ERR_USAGE;
    case CLI_POSITIONAL:
      if (n_pos++) return ecg_errf(e, ECG_ERR_USAGE, "unexpected argument '%s'", val);
      o->dir = val;
      break;
    case O_DATA: {
      const char **nd = realloc(o->datas, sizeof *nd * (size_t)(o->n_data + 1));
      if (!nd) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
      o->datas = nd;
      o->datas[o->n_data++] = val;
      if (!o->data) o->data = val;
      break;
    }
    case O_RANDOM:
      if (!parse_int(val, 0, &seed)) return ecg_errf(e, ECG_ERR_USAGE, "--random expects a seed >= 0");
      o->seed = (uint32_t)seed;
      have_random = true;
      break;
    case O_RTOL: case O_ATOL: {
      double v = strtod(val, &end);
      if (end == val || *end || !(v >= 0) || !isfinite(v))
        return ecg_errf(e, ECG_ERR_USAGE, "--%s expects a number >= 0", c == O_RTOL ? "rtol" : "atol");
      *(c == O_RTOL ? &o->rtol : &o->atol) = v;
      break;
    }
    case O_RUNS: if (!parse_int(val, 1, &o->runs)) return ecg_errf(e, ECG_ERR_USAGE, "--runs expects an integer >= 1"); o->runs_set = true; break;
    case O_WARMUP: if (!parse_int(val, 0, &o->warmup)) return ecg_errf(e, ECG_ERR_USAGE, "--warmup expects an integer >= 0"); o->warmup_set = true; break;
    case O_THREADS: if (!parse_int(val, 1, &o->threads)) return ecg_errf(e, ECG_ERR_USAGE, "--threads expects an integer >= 1"); break;
    case O_INTERLEAVE:
      if (!parse_int(val, 1, &o->interleave)) return ecg_errf(e, ECG_ERR_USAGE, "--interleave expects an integer >= 1");
      break;
    case O_ORT: o->ort = true; break;
    case O_ORT_NOISE: o->ort_noise = true; break;
    case O_ORT_PROFILE: o->ort_profile = val; break;
    case O_MODEL: o->model = val; break;
    case O_CC: o->cc = val; break;
    case O_DEVICE: if (!parse_int(val, 0, &o->device)) return ecg_errf(e, ECG_ERR_USAGE, "--device expects an integer >= 0"); break;
    case O_SAVE: o->save = val; break;
    case O_PROFILE: o->profile = val; break;
    case O_TRACE: o->trace = val; break;
    case O_PEAK: o->peak = true; break;
    case O_PROFDEV: o->profile_device = val; break;
    case O_TARGET:
      if (strcmp(val, "c") && strcmp(val, "opencl")) return ecg_errf(e, ECG_ERR_USAGE, "--target expects c or opencl");
      o->target = val;
      break;
    case O_CHECK: o->check = true; break;
    case O_VERBOSE: o->verbose = true; o->quiet = false; break;
    case O_QUIET: o->quiet = true; o->verbose = false; break;
    case O_HELP: fputs(usage_text, stdout); return -1;
    case O_VERSION: printf("ecg-bench %s\n", ECG_VERSION_STRING); return -1;
    }
  }
  if (o->peak) {
    if (o->dir) return ecg_errf(e, ECG_ERR_USAGE, "--peak takes no DIR");
    return 0;
  }
  if (o->target && !o->profile_device) return ecg_errf(e, ECG_ERR_USAGE, "--target goes with --profile-device (a lowered DIR has its own)");
  if (o->profile_device) {
    if (o->dir) return ecg_errf(e, ECG_ERR_USAGE, "--profile-device takes no DIR");
    if (o->device >= 0 && (!o->target || strcmp(o->target, "opencl")))
      return ecg_errf(e, ECG_ERR_USAGE, "--profile-device --device needs --target opencl");
    return 0;
  }
  if (!o->dir) return ecg_errf(e, ECG_ERR_USAGE, "missing the lowered model directory DIR");
  if (o->trace && !o->profile) return ecg_errf(e, ECG_ERR_USAGE, "--trace needs --profile");
  if (o->interleave > 1) {
    if (!o->ort) return ecg_errf(e, ECG_ERR_USAGE, "--interleave needs --ort (it alternates ours and ONNX Runtime's runs)");
    if (o->profile || o->ort_noise)
      return ecg_errf(e, ECG_ERR_USAGE, "--interleave goes without --%s", o->profile ? "profile" : "ort-noise");
    if (o->interleave > o->runs) return ecg_errf(e, ECG_ERR_USAGE, "--interleave %d exceeds --runs %d (each chunk needs a run)", o->interleave, o->runs);
  }
  if (o->data && have_random) return ecg_errf(e, ECG_ERR_USAGE, "--data and --random exclude each other");
  if (o->n_data > 1 && (o->save || o->profile || o->ort_profile))
    return ecg_errf(e, ECG_ERR_USAGE, "--%s takes one --data (it would be overwritten by each data set)",
                    o->save ? "save" : o->profile ? "profile" : "ort-profile");
  return 0;
}

/** Before building anything: DIR is an ecg-lower output (its manifest lists the
 *  Makefile, which ecg-lower generated: a user's own Makefile is never run) and --data
 *  names a directory. Errors: ECG_ERR_INPUT naming the path and the problem. */
static int check_paths(const opts *o, ecg_err *e) {
  struct stat st;
  if (stat(o->dir, &st) != 0) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", o->dir, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return ecg_errf(e, ECG_ERR_INPUT, "%s: not a directory (expected an ecg-lower -o DIR output)", o->dir);
  ecg_manifest m;
  ECG_TRY(ecg_manifest_read(o->dir, &m, e));
  bool ours = m.present && ecg_names_has(&m.files, "Makefile");
  ecg_manifest_free(&m);
  if (!ours)
    return ecg_errf(e, ECG_ERR_INPUT, "%s: not a lowered model (no " ECG_MANIFEST_NAME " listing its Makefile); "
                    "make one with: onnx2ecg MODEL.onnx | ecg-lower -o %s", o->dir, o->dir);
  char mk[PATH_MAX], line[64] = "";
  snprintf(mk, sizeof mk, "%s/Makefile", o->dir);
  FILE *f = fopen(mk, "r");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", mk, strerror(errno));
  if (!fgets(line, sizeof line, f)) line[0] = 0;
  fclose(f);
  if (strncmp(line, "# Generated by ecg-lower", 24))
    return ecg_errf(e, ECG_ERR_INPUT, "%s: not the Makefile ecg-lower wrote; not running it (lower the model again)", mk);
  for (int i = 0; i < o->n_data; i++) {
    const char *d = o->datas[i];
    if (stat(d, &st) != 0) return ecg_errf(e, ECG_ERR_INPUT, "--data %s: %s", d, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return ecg_errf(e, ECG_ERR_INPUT, "--data %s: not a directory (expected input_K.pb/output_K.pb)", d);
  }
  return ECG_OK;
}

/* ---------------------------------------------------------------- run */

/** What one bench run measured; printed as the JSON object. */
typedef struct result {
  char model[PATH_MAX];
  bool checked;           /**< there was a reference to check against */
  const char *reference;  /**< "data" (--data), "ort" (ONNX Runtime's outputs), NULL (none) */
  bool pass;              /**< every output within tolerance (when checked) */
  double max_abs, max_rel;
  size_t mismatches;
  char worst[256];        /**< output with the largest |d|/(atol+rtol|exp|) */
  bt_timing ours, ort;    /**< ms */
  bool have_ort;
  int interleave;         /**< --interleave's chunks per side as run (1: none) */
  bool have_noise;        /**< --ort-noise measured the reference's own disagreement */
  double noise_max_abs;   /**< max |ORT unoptimised - expected| over all outputs */
  size_t noise_mismatches;
  bt_target target;       /**< where the runner ran (arch, emulated) */
} result;

/** Model name, ONNX source and target ISA from DIR/model.json (all optional): name
 *  defaults to DIR's basename; source and arch (arch[64]) are empty when absent. A
 *  relative source that does not exist from the current directory is tried relative to DIR. */
static void read_model_json(const char *dir, char *name, size_t ncap, char *source, size_t scap, char *arch, char *backend) {
  const char *b = strrchr(dir, '/');
  snprintf(name, ncap, "%s", b && b[1] ? b + 1 : dir);
  source[0] = 0;
  arch[0] = 0;
  snprintf(backend, 16, "c");
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/model.json", dir);
  FILE *f = fopen(path, "rb");
  if (!f) return;
  char *text = calloc(1, 1 << 20);
  if (text) {
    size_t got = fread(text, 1, (1 << 20) - 1, f);
    text[got] = 0;
    char tmp[PATH_MAX];
    if (bt_json_string(text, "model", tmp, sizeof tmp) && tmp[0]) snprintf(name, ncap, "%.*s", (int)ncap - 1, tmp);
    if (bt_json_string(text, "arch", tmp, sizeof tmp)) snprintf(arch, 64, "%.63s", tmp);
    if (bt_json_string(text, "target", tmp, sizeof tmp) && tmp[0]) snprintf(backend, 16, "%.15s", tmp);
    if (bt_json_string(text, "source", tmp, sizeof tmp) && tmp[0]) {
      if (tmp[0] != '/' && access(tmp, R_OK) != 0) snprintf(source, scap, "%s/%.*s", dir, (int)scap / 2, tmp);
      else snprintf(source, scap, "%.*s", (int)scap - 1, tmp);
    }
  }
  free(text);
  fclose(f);
}

/** Compare every output with its expected tensor; fill r's error fields. */
static void check_outputs(const opts *o, const bt_io *io, const pbset *exp, const int *map, result *r) {
  double worst = -1;
  r->checked = true;
  r->pass = true;
  for (int i = 0; i < io->n_out; i++) {
    const bt_tensor *ours = &io->out[i], *x = &exp->t[map[i]];
    bt_cmp c;
    if (ours->seq) bt_compare_seq(ours, x, o->rtol, o->atol, &c);
    else bt_compare(ours, x, o->rtol, o->atol, &c);
    if (c.max_abs > r->max_abs) r->max_abs = c.max_abs;
    if (c.max_rel > r->max_rel) r->max_rel = c.max_rel;
    r->mismatches += c.mismatches;
    if (c.mismatches) r->pass = false;
    if (c.worst > worst) {
      worst = c.worst;
      snprintf(r->worst, sizeof r->worst, "%s", ours->name);
    }
    if (o->verbose || c.mismatches) {
      fprintf(stderr, "ecg-bench: output '%s': max_abs_err %.6g max_rel_err %.6g mismatches %zu", ours->name,
              c.max_abs, c.max_rel, c.mismatches);
      if (c.mismatches && ours->seq) {
        fprintf(stderr, " (first at item %zu)", c.first_bad);
      } else if (c.mismatches) {
        int sd;
        size_t n;
        bt_scalar_view(ours->dtype, ours->nelem, &sd, &n);
        int prec = bt_dtype_exact(sd) ? 17 : 9;
        fprintf(stderr, " (first at %zu: ours %.*g, expected %.*g)", c.first_bad, prec,
                bt_get_f64(sd, ours->data, c.first_bad), prec, bt_get_f64(sd, x->data, c.first_bad));
      }
      fputc('\n', stderr);
    }
  }
}

/** Write inputs and our outputs as TensorProtos into o->save. */
static int save_all(const opts *o, const bt_tensor *ins, int n_in, const bt_io *io, ecg_err *e) {
  if (mkdir(o->save, 0777) != 0 && errno != EEXIST)
    return ecg_errf(e, ECG_ERR_INPUT, "--save %s: %s", o->save, strerror(errno));
  char path[PATH_MAX];
  for (int i = 0; i < n_in + io->n_out; i++) {
    bool in = i < n_in;
    snprintf(path, sizeof path, "%s/%s_%d.pb", o->save, in ? "input" : "output", in ? i : i - n_in);
    const bt_tensor *t = in ? &ins[i] : &io->out[i - n_in];
    ECG_TRY(t->seq ? bt_seqpb_write(path, t, e) : bt_tensorpb_write(path, t, e));
  }
  return ECG_OK;
}

/** Read ONNX Runtime's outputs from dir (ort_run.mjs --out-dir: FILE.bin per output,
 *  FILE the name with characters outside [A-Za-z0-9._:-] made '_') as tensors shaped
 *  like io's outputs into ref (io order), then remove dir. Errors: ECG_ERR_INPUT (a
 *  missing file or one of another size, naming the output), ECG_ERR_INTERNAL. */
static int read_ort_outputs(const char *dir, const bt_io *io, pbset *ref, ecg_err *e) {
  int rc = ECG_OK;
  memset(ref, 0, sizeof *ref);
  ref->t = calloc((size_t)io->n_out + 1, sizeof *ref->t);
  if (!ref->t) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  for (int i = 0; i < io->n_out; i++) {
    char safe[256], path[PATH_MAX + 300];
    size_t k = 0;
    for (const char *p = io->out[i].name; *p && k < sizeof safe - 1; p++)
      safe[k++] = (isalnum((unsigned char)*p) || strchr("._:-", *p)) ? *p : '_';
    safe[k] = 0;
    snprintf(path, sizeof path, "%s/%s.bin", dir, safe);
    bt_tensor *t = &ref->t[ref->n];
    if (!rc) rc = bt_tensor_init(t, io->out[i].name, io->out[i].dtype, io->out[i].rank, io->out[i].dims, e);
    if (!rc) ref->n++;
    if (!rc) rc = read_raw(path, t, e);
    remove(path);
  }
  char js[PATH_MAX + 32];
  snprintf(js, sizeof js, "%s/outputs.json", dir);
  remove(js);
  rmdir(dir);
  if (rc) pbset_clear(ref);
  return rc;
}

/** The ONNX model for an ONNX Runtime run: --model, else model.json's "source"; NULL, with
 *  ECG_ERR_INPUT in *e naming `flag`, when there is neither. */
static const char *ort_model(const opts *o, const char *source, const char *flag, ecg_err *e) {
  const char *m = o->model ? o->model : source;
  if (m && m[0]) return m;
  ecg_errf(e, ECG_ERR_INPUT, "%s: no --model and no \"source\" in %s/model.json", flag, o->dir);
  return NULL;
}

/** --ort-noise: run ONNX Runtime once more with graph optimisations disabled on the
 *  same inputs and compare ITS outputs with the expected ones (made by ORT with all
 *  optimisations): how far the reference disagrees with itself at this tolerance, the
 *  float32 noise floor of the model on this input. Fills r->noise_*. Errors:
 *  ECG_ERR_INPUT (ORT failed or wrote unexpected files), ECG_ERR_INTERNAL. */
static int ort_noise(const char *model, const bt_io *io, char **in_paths, const pbset *exp, const int *map,
                     const opts *o, result *r, ecg_err *e) {
  char dir[PATH_MAX + 16];
  snprintf(dir, sizeof dir, "%s/ortnoise", g_tmpdir);
  bt_timing t;
  pbset ref = {0};
  int rc = bt_ort_run(model, io, in_paths, 1, 0, 1, "disabled", dir, NULL, &t, NULL, e);
  if (!rc) rc = read_ort_outputs(dir, io, &ref, e);
  r->noise_max_abs = 0;
  r->noise_mismatches = 0;
  for (int i = 0; !rc && i < io->n_out; i++) {
    bt_cmp c;
    bt_compare(&ref.t[i], &exp->t[map[i]], o->rtol, o->atol, &c);
    if (c.max_abs > r->noise_max_abs) r->noise_max_abs = c.max_abs;
    r->noise_mismatches += c.mismatches;
    if (o->verbose)
      fprintf(stderr, "ecg-bench: ORT unoptimised vs expected, output '%s': max_abs_err %.6g mismatches %zu\n",
              ref.t[i].name, c.max_abs, c.mismatches);
  }
  pbset_clear(&ref);
  if (!rc) r->have_noise = true;
  return rc;
}

/** Build, run, check and time one lowered directory (see usage_text). Fills *r.
 *  Errors: ECG_ERR_INPUT (build failure: compiler output already on stderr; bad data;
 *  runner failure), ECG_ERR_INTERNAL. A failing --ort run is reported on stderr and
 *  returned as ECG_ERR_INPUT in *ort_rc while the rest still completes. */
static int bench(const opts *o_in, result *r, int *ort_rc, ecg_err *e) {
  opts oo = *o_in, *o = &oo;
  bt_io io = {0};
  pbset din = {0}, dout = {0};
  bt_tensor *rnd = NULL;
  int *imap = NULL, *omap = NULL, rc;
  char source[PATH_MAX];
  char **in_paths = NULL, **out_paths = NULL;
  bt_tensor *ordered = NULL; /* io.n_in shallow views of the input data, model order */
  bt_samples s_ours = {0}, s_ort = {0}; /* --interleave: every chunk's samples per side */
  /* --interleave K: chunk c of each side takes runs / K runs, one more for c < runs % K
   * (K set below, once an emulated run's runs are known) */
  int K = 1;
#define CHUNK_RUNS(c) (o->runs / K + ((c) < o->runs % K))
  char arch[64];
  char backend[16];
  read_model_json(o->dir, r->model, sizeof r->model, source, sizeof source, arch, backend);
  ECG_TRY(bt_target_resolve(arch, o->cc, &r->target, e));
  snprintf(r->target.backend, sizeof r->target.backend, "%s", backend);
  r->target.device = o->device;
  if (o->device >= 0 && strcmp(backend, "opencl") && strcmp(backend, "c+opencl"))
    return ecg_errf(e, ECG_ERR_USAGE, "--device: %s was lowered for target '%s'; only --target opencl or c+opencl runs on OpenCL devices", o->dir, backend);
  if (r->target.emulated) {
    if (!o->runs_set) oo.runs = 1;
    if (!o->warmup_set) oo.warmup = 0;
  }
  K = r->interleave = o->interleave < o->runs ? o->interleave : o->runs;

  bt_proc bp;
  if (o->verbose)
    fprintf(stderr, "ecg-bench: make -C %s (%s%s)\n", o->dir, r->target.arch, r->target.emulated ? ", cross-built, run under qemu-user" : "");
  rc = bt_build(o->dir, o->cc, &r->target, &bp, e);
  if (rc == ECG_ERR_INPUT || (o->verbose && !rc)) {
    fputs(bp.out, stderr);
    fputs(bp.err, stderr);
  }
  if (!rc || rc == ECG_ERR_INPUT) bt_proc_clear(&bp);
  if (rc) return rc;
  if ((rc = bt_runner_info(o->dir, &r->target, &io, e))) goto out;
  imap = calloc((size_t)io.n_in + 1, sizeof *imap);
  omap = calloc((size_t)io.n_out + 1, sizeof *omap);
  if (!imap || !omap) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }

  if (o->data) {
    if ((rc = pbset_load(o->data, "input", io.in, io.n_in, &din, e)) || (rc = pbset_load(o->data, "output", io.out, io.n_out, &dout, e))) goto out;
    if (dout.n == 0) { rc = ecg_errf(e, ECG_ERR_INPUT, "%s: no output_0.pb", o->data); goto out; }
    if ((rc = match(io.in, io.n_in, &din, "input", o->data, o->verbose, imap, e))) goto out;
    if ((rc = match(io.out, io.n_out, &dout, "output", o->data, o->verbose, omap, e))) goto out;
    for (int i = 0; i < io.n_in && !rc; i++) { /* a dynamic-shape build runs at the data set's input shapes */
      if (!io.in[i].sym) continue;
      bt_tensor nt;
      if ((rc = bt_tensor_init(&nt, io.in[i].name, io.in[i].dtype, din.t[imap[i]].rank, din.t[imap[i]].dims, e))) goto out;
      bt_tensor_clear(&io.in[i]);
      io.in[i] = nt;
    }
  } else if (io.dynamic) {
    rc = ecg_errf(e, ECG_ERR_USAGE, "%s is a dynamic-shape build: give the inputs (and so their shapes) with --data DIR", o->dir);
    goto out;
  } else {
    rnd = calloc((size_t)io.n_in + 1, sizeof *rnd);
    if (!rnd) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
    uint32_t state = o->seed;
    for (int i = 0; i < io.n_in; i++) {
      if (io.in[i].seq) {
        rc = ecg_errf(e, ECG_ERR_USAGE, "input '%s' is a run-time sequence: give the inputs with --data DIR", io.in[i].name);
        goto out;
      }
      if ((rc = bt_tensor_init(&rnd[i], io.in[i].name, io.in[i].dtype, io.in[i].rank, io.in[i].dims, e)) ||
          (rc = bt_tensor_alloc(&rnd[i], e)))
        goto out;
      bt_fill_random(&rnd[i], &state);
      imap[i] = i;
    }
  }
  if ((rc = make_tmp(io.n_in, io.n_out, &in_paths, &out_paths, e))) goto out;
  ordered = calloc((size_t)io.n_in + 1, sizeof *ordered);
  if (!ordered) { rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory"); goto out; }
  for (int i = 0; i < io.n_in; i++) {
    ordered[i] = o->data ? din.t[imap[i]] : rnd[i];
    if ((rc = write_raw(in_paths[i], ordered[i].data, ordered[i].bytes, e))) break;
  }
  if (!rc) {
    if (o->verbose) fprintf(stderr, "ecg-bench: running %s/runner (%d threads, %d warm-up, %d runs)\n", o->dir,
                            o->threads, o->warmup, o->runs);
    const char *prof = o->profile ? g_tmpfiles[io.n_in + io.n_out] : NULL;
    rc = bt_runner_run(o->dir, &r->target, &io, in_paths, out_paths, o->threads, o->warmup, CHUNK_RUNS(0), prof, &r->ours,
                       K > 1 ? &s_ours : NULL, e);
    if (!rc && prof) {
      bt_peak pk;
      bool cached;
      if (o->verbose) fprintf(stderr, "ecg-bench: this core's FMA peak and bandwidth (cached per CPU after the first time)\n");
      rc = bt_peak_get(false, &pk, &cached, e);
      if (!rc) rc = bt_profile_report(o->dir, r->model, prof, o->threads, o->runs, &pk, cached, o->profile, o->trace, e);
    }
  }
  for (int i = 0; i < io.n_out && !rc; i++) rc = read_raw(out_paths[i], &io.out[i], e);
  if (!rc && o->data) {
    check_outputs(o, &io, &dout, omap, r);
    r->reference = "data";
  }
  if (!rc && o->save) rc = save_all(o, ordered, io.n_in, &io, e);
  if (!rc && o->ort) {
    /* without --data, ONNX Runtime's outputs on the same inputs are the reference */
    ecg_err oe = {0};
    const char *model = ort_model(o, source, "--ort", &oe);
    char ort_dir[PATH_MAX + 16];
    snprintf(ort_dir, sizeof ort_dir, "%s/ort", g_tmpdir);
    pbset ref = {0};
    int orc = ECG_ERR_INPUT;
    if (model) {
      if (o->verbose) fprintf(stderr, "ecg-bench: running ONNX Runtime on %s\n", model);
      orc = bt_ort_run(model, &io, in_paths, o->threads, o->warmup, CHUNK_RUNS(0), NULL, o->data ? NULL : ort_dir, NULL, &r->ort,
                       K > 1 ? &s_ort : NULL, &oe);
      if (!orc && !o->data) orc = read_ort_outputs(ort_dir, &io, &ref, &oe);
    }
    if (orc) {
      fprintf(stderr, "ecg-bench: %s\n", oe.msg);
      *ort_rc = orc;
    } else {
      r->have_ort = true;
      if (!o->data) {
        for (int i = 0; i < io.n_out; i++) omap[i] = i;
        check_outputs(o, &io, &ref, omap, r);
        r->reference = "ort";
      }
    }
    pbset_clear(&ref);
    /* --interleave: the other chunks, alternating sides (the outputs were read and checked
     * from the first; later chunks compute the same ones) */
    for (int c = 1; c < K && r->have_ort && !rc; c++) {
      bt_timing tc;
      ecg_err ce = {0};
      rc = bt_runner_run(o->dir, &r->target, &io, in_paths, out_paths, o->threads, o->warmup, CHUNK_RUNS(c), NULL, &tc, &s_ours, e);
      if (!rc && (orc = bt_ort_run(model, &io, in_paths, o->threads, o->warmup, CHUNK_RUNS(c), NULL, NULL, NULL, &tc, &s_ort, &ce))) {
        fprintf(stderr, "ecg-bench: %s\n", ce.msg);
        *ort_rc = orc;
        r->have_ort = false;
      }
    }
    if (K > 1 && r->have_ort && !rc) {
      bt_timing_from(s_ours.v, s_ours.n, &r->ours);
      bt_timing_from(s_ort.v, s_ort.n, &r->ort);
    }
  }
  if (!rc && o->ort_profile) { /* a separate run: the profiler's overhead stays out of --ort's timing */
    ecg_err oe = {0};
    bt_timing tp;
    const char *model = ort_model(o, source, "--ort-profile", &oe);
    int orc = model ? bt_ort_run(model, &io, in_paths, o->threads, o->warmup, o->runs, NULL, NULL, o->ort_profile, &tp, NULL, &oe)
                    : ECG_ERR_INPUT;
    if (orc) {
      fprintf(stderr, "ecg-bench: %s\n", oe.msg);
      *ort_rc = orc;
    }
  }
  if (!rc && o->ort_noise && o->data) {
    ecg_err oe = {0};
    const char *model = ort_model(o, source, "--ort-noise", &oe);
    int orc = model ? ort_noise(model, &io, in_paths, &dout, omap, o, r, &oe) : ECG_ERR_INPUT;
    if (orc) {
      fprintf(stderr, "ecg-bench: %s\n", oe.msg);
      *ort_rc = orc;
    }
  }
out:
#undef CHUNK_RUNS
  bt_samples_clear(&s_ours);
  bt_samples_clear(&s_ort);
  free(ordered);
  for (int i = 0; rnd && i < io.n_in; i++) bt_tensor_clear(&rnd[i]);
  free(rnd);
  free(imap);
  free(omap);
  pbset_clear(&din);
  pbset_clear(&dout);
  bt_io_clear(&io);
  return rc;
}

/** Print the result as one JSON object on stdout. */
static void print_json(const opts *o, const result *r) {
  FILE *f = stdout;
  fputs("{\"model\":", f);
  bt_json_print_string(f, r->model);
  if (o->n_data > 1) { /* several data sets: which one this line is */
    fputs(",\"data\":", f);
    bt_json_print_string(f, o->data);
  }
  fprintf(f, ",\"pass\":%s,\"reference\":", !r->checked ? "null" : r->pass ? "true" : "false");
  if (r->reference) bt_json_print_string(f, r->reference);
  else fputs("null", f);
  if (r->checked) {
    fputs(",\"max_abs_err\":", f);
    bt_json_print_number(f, r->max_abs);
    fputs(",\"max_rel_err\":", f);
    bt_json_print_number(f, r->max_rel);
    fprintf(f, ",\"mismatches\":%zu,\"worst_tensor\":", r->mismatches);
    bt_json_print_string(f, r->worst);
  } else {
    fputs(",\"max_abs_err\":null,\"max_rel_err\":null,\"mismatches\":null,\"worst_tensor\":null", f);
  }
  const char *k[3] = {"median_ms", "p10_ms", "p90_ms"};
  const double ours[3] = {r->ours.median_ms, r->ours.p10_ms, r->ours.p90_ms};
  const double ort[3] = {r->ort.median_ms, r->ort.p10_ms, r->ort.p90_ms};
  for (int i = 0; i < 3; i++) {
    fprintf(f, ",\"%s\":", k[i]);
    bt_json_print_number(f, ours[i]);
  }
  fprintf(f, ",\"runs\":%d,\"threads\":%d", r->ours.runs, o->threads);
  if (r->interleave > 1) fprintf(f, ",\"interleave\":%d", r->interleave);
  if (o->ort) {
    for (int i = 0; i < 3; i++) {
      fprintf(f, ",\"ort_%s\":", k[i]);
      bt_json_print_number(f, r->have_ort ? ort[i] : NAN);
    }
    fputs(",\"ratio\":", f); /* none for an emulated run: its times are not performance */
    bt_json_print_number(f, r->have_ort && r->ort.median_ms > 0 && !r->target.emulated ? r->ours.median_ms / r->ort.median_ms : NAN);
  }
  if (o->ort_noise && o->data) {
    fputs(",\"ort_noise_max_abs_err\":", f);
    bt_json_print_number(f, r->have_noise ? r->noise_max_abs : NAN);
    fputs(",\"ort_noise_mismatches\":", f);
    if (r->have_noise) fprintf(f, "%zu", r->noise_mismatches);
    else fputs("null", f);
  }
  fputs(",\"arch\":", f);
  bt_json_print_string(f, r->target.arch);
  fputs(",\"target\":", f);
  bt_json_print_string(f, r->target.backend[0] ? r->target.backend : "c");
  if (!strcmp(r->target.backend, "opencl") || !strcmp(r->target.backend, "c+opencl")) {
    fputs(",\"device\":", f);
    bt_json_print_string(f, r->target.device_name);
  }
  fprintf(f, ",\"emulated\":%s}\n", r->target.emulated ? "true" : "false");
  fflush(f);
}

/** Parse arguments, run the bench, print the JSON; exit codes as in the header. */
int main(int argc, char **argv) {
  opts o;
  ecg_err e = {0};
  int rc = parse_args(argc, argv, &o, &e);
  if (rc) free(o.datas);
  if (rc < 0) return 0;
  if (rc) {
    fprintf(stderr, "ecg-bench: %s\n%s", e.msg, "usage: ecg-bench DIR [--data DIR] [--random SEED] ... (--help)\n");
    return ECG_ERR_USAGE;
  }
  if (o.profile_device) { /* ecg-bench --profile-device SWEEPDIR: time, fit, print */
    dp_opts d = {.sweeps = o.profile_device, .target = o.target ? o.target : "c", .device = o.device,
                 .runs = o.runs_set ? o.runs : 5, .threads = o.threads, .verbose = o.verbose};
    if ((rc = bt_profile_device(&d, &e))) fprintf(stderr, "ecg-bench: %s\n", e.msg);
    return rc;
  }
  if (o.peak) { /* ecg-bench --peak: measure, cache, print */
    bt_peak pk;
    bool cached;
    if ((rc = bt_peak_get(true, &pk, &cached, &e))) {
      fprintf(stderr, "ecg-bench: %s\n", e.msg);
      return rc;
    }
    bt_peak_json(stdout, &pk);
    putchar('\n');
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "ecg-bench: stdout: %s\n", strerror(errno ? errno : EIO));
      return ECG_ERR_INPUT;
    }
    return ECG_OK;
  }
  if ((rc = check_paths(&o, &e))) {
    fprintf(stderr, "ecg-bench: %s\n", e.msg);
    free(o.datas);
    return rc;
  }
  atexit(cleanup_tmp);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  if (o.n_data <= 1) { /* one data set (o.data) or none: the list has been checked and is not needed */
    free(o.datas);
    o.datas = NULL;
  }
  if (o.n_data > 1) { /* one compiled model, several data sets: one JSON line each */
    int worst = ECG_OK;
    for (int i = 0; i < o.n_data; i++) {
      opts oi = o;
      oi.data = o.datas[i];
      result r = {0};
      int ort_rc = 0;
      rc = bench(&oi, &r, &ort_rc, &e);
      if (rc) {
        fprintf(stderr, "ecg-bench: --data %s: %s\n", oi.data, e.msg);
        fputs("{\"model\":", stdout);
        bt_json_print_string(stdout, r.model);
        fputs(",\"data\":", stdout);
        bt_json_print_string(stdout, oi.data);
        fputs(",\"pass\":false,\"error\":", stdout);
        bt_json_print_string(stdout, e.msg);
        fputs("}\n", stdout);
        if (rc > worst) worst = rc;
      } else {
        print_json(&oi, &r);
        if (r.checked && !r.pass) {
          fprintf(stderr, "ecg-bench: --data %s: FAIL: %zu mismatches against the expected outputs (worst tensor '%s', rtol %g, atol %g)\n",
                  oi.data, r.mismatches, r.worst, o.rtol, o.atol);
          if (worst < ECG_ERR_INPUT) worst = ECG_ERR_INPUT;
        }
        if (ort_rc > worst) worst = ort_rc;
      }
      reset_tmp();
    }
    free(o.datas);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "ecg-bench: stdout: %s\n", strerror(errno ? errno : EIO));
      return ECG_ERR_INPUT;
    }
    return worst;
  }
  result r = {0};
  int ort_rc = 0;
  rc = bench(&o, &r, &ort_rc, &e);
  if (rc) {
    fprintf(stderr, "ecg-bench: %s\n", e.msg);
    return rc;
  }
  print_json(&o, &r);
  if (fflush(stdout) != 0 || ferror(stdout)) { /* EPIPE (SIGPIPE is ignored), ENOSPC */
    fprintf(stderr, "ecg-bench: stdout: %s\n", strerror(errno ? errno : EIO));
    return ECG_ERR_INPUT;
  }
  if (r.checked && !r.pass) {
    fprintf(stderr, "ecg-bench: FAIL: %zu mismatches against %s (worst tensor '%s', rtol %g, atol %g)\n", r.mismatches,
            !strcmp(r.reference, "ort") ? "ONNX Runtime" : "the expected outputs", r.worst, o.rtol, o.atol);
    return ECG_ERR_INPUT;
  }
  if (!r.checked) {
    if (o.check) { /* an error with --check: never silenced */
      fprintf(stderr, "ecg-bench: %s: not verified: no reference outputs (use --data DIR, or --ort to compare with ONNX Runtime)\n",
              o.dir);
      return ECG_ERR_INPUT;
    }
    cli_note("ecg-bench", o.quiet, "%s: not verified: no reference outputs (use --data DIR, or --ort to compare with ONNX Runtime)",
             o.dir);
  }
  return ort_rc ? ort_rc : ECG_OK;
}
