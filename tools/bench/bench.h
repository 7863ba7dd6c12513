/* ecg-bench internals: tensors in memory, TensorProto files, comparison, processes.
 *
 * ecg-bench compiles a lowered model directory (tools/lower/LOWERED.md), runs its
 * `runner` on ONNX backend-test data or seeded random inputs, compares the outputs
 * with the expected ones, times it, and optionally times ONNX Runtime side by side.
 *
 * Errors are values (STYLE 8): functions return ECG_OK or an ECG_ERR_* code and fill an
 * ecg_err; only main() prints and picks the exit code.
 * Ownership: a bt_tensor owns its name and data; bt_tensor_clear frees them.
 */
#ifndef ECG_BENCH_H
#define ECG_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ecg.h"

/** A dense tensor: row-major, little-endian, dtype an ONNX code (ECG_FLOAT, ...). */
typedef struct bt_tensor {
  char *name;                    /**< owned, never NULL once filled ("" allowed) */
  int dtype;                     /**< ONNX TensorProto.DataType code */
  int rank;                      /**< 0..ECG_MAX_RANK */
  int64_t dims[ECG_MAX_RANK];    /**< each >= 0 */
  size_t nelem;                  /**< product of dims (1 for rank 0) */
  size_t bytes;                  /**< nelem * ecg_dtype_size(dtype) */
  void *data;                    /**< owned, `bytes` bytes; NULL until loaded */
  unsigned sym;                  /**< bit i: dim i is symbolic (a dynamic-shape model's --info '?';
                                      dims[i] is 0 until a data set gives the size) */
  bool seq;                      /**< a run-time sequence (runner --info "seq"): dtype is its items'
                                      element type, rank 0, and data holds `bytes` bytes of its
                                      sequence file (seqpb.c; tools/lower/LOWERED.md "Sequences") */
} bt_tensor;

/* ---------------------------------------------------------------- dtype.c */

/** Free t's name and data and zero it. NULL is allowed. */
void bt_tensor_clear(bt_tensor *t);
/** Set t's name (copied), dtype and shape, compute nelem and bytes; data stays NULL.
 *  Errors: ECG_ERR_INPUT (dtype not numeric/bool, rank > ECG_MAX_RANK, negative dim,
 *  size overflow; message names the tensor), ECG_ERR_INTERNAL (out of memory). */
int bt_tensor_init(bt_tensor *t, const char *name, int dtype, int rank, const int64_t *dims,
                   ecg_err *e);
/** Allocate t->bytes zeroed bytes of data (at least 1). ECG_ERR_INTERNAL on OOM. */
int bt_tensor_alloc(bt_tensor *t, ecg_err *e);
/** Format dims as "1x3x224x224" ("scalar" for rank 0) into buf of cap bytes; returns buf. */
char *bt_dims_str(const bt_tensor *t, char *buf, size_t cap);
/** True when a and b have the same rank and dims. */
bool bt_same_shape(const bt_tensor *a, const bt_tensor *b);
/** True for integer and bool dtypes (compared exactly). */
bool bt_dtype_exact(int dtype);
/** For comparison, view a tensor as scalars: complex64 -> 2*n float32, complex128 ->
 *  2*n float64, others unchanged. Writes the scalar dtype and count. */
void bt_scalar_view(int dtype, size_t nelem, int *sdtype, size_t *n);
/** Element i of buf (dtype, little-endian) converted to double; the one conversion
 *  path used by comparison and reporting (float16 and bfloat16 included). */
double bt_get_f64(int dtype, const void *buf, size_t i);
/** Fill t->data (allocated) with seeded values from *state (mulberry32, the same
 *  generator as make_data.mjs): floats uniform in [-1,1); integers in [0,2) when the
 *  name contains "mask" (any case), else [0,100); bool 0/1. */
void bt_fill_random(bt_tensor *t, uint32_t *state);
/** One step of mulberry32: advances *state, returns 32 random bits. */
uint32_t bt_rand32(uint32_t *state);

/* ---------------------------------------------------------------- tensorpb.c */

/** Decode an ONNX TensorProto from buf (len bytes) into t (name, dtype, dims, dense
 *  data). Accepts raw_data and the typed fields float_data, int32_data (also int8,
 *  int16, uint8, uint16, bool, float16/bfloat16 bits), int64_data, double_data,
 *  uint64_data (uint32, uint64), for every numeric dtype and bool. `what` names the
 *  source in messages (a path). Errors: ECG_ERR_INPUT (not a TensorProto, external
 *  or segmented data, string tensor, element count not matching dims), ECG_ERR_INTERNAL. */
int bt_tensorpb_decode(const uint8_t *buf, size_t len, const char *what, bt_tensor *t, ecg_err *e);
/** Read path and decode it (see bt_tensorpb_decode). ECG_ERR_INPUT when unreadable. */
int bt_tensorpb_read(const char *path, bt_tensor *t, ecg_err *e);
/** Decode an ONNX OptionalProto (onnx-data.proto; the input_K.pb of an optional graph
 *  input) holding a tensor, a sequence of tensors (t then a sequence tensor, seqpb.c) or
 *  nothing: 1 with t the element named as the optional and *present 1, or t holding only the
 *  name and *present 0 for an empty optional (t->seq set when its elem_type says sequence);
 *  0 when buf is not an OptionalProto (then it is a TensorProto); -code on error (e set: a
 *  map optional, a bad element). */
int bt_optionalpb_decode(const uint8_t *buf, size_t len, const char *what, bt_tensor *t, int *present, ecg_err *e);
/** bt_tensorpb_read that also accepts an OptionalProto when present is non-NULL: *present
 *  -1 for a TensorProto, else 1 / 0 as bt_optionalpb_decode says. */
int bt_pb_read(const char *path, bt_tensor *t, int *present, ecg_err *e);
/** Write t as a TensorProto (name, dims, data_type, raw_data) to path, through a
 *  temporary name and rename. Errors: ECG_ERR_INPUT (write failure: path and
 *  strerror), ECG_ERR_INTERNAL (out of memory). */
int bt_tensorpb_write(const char *path, const bt_tensor *t, ecg_err *e);

/* ---------------------------------------------------------------- seqpb.c */

/** Decode an ONNX SequenceProto (onnx-data.proto: name 1, elem_type 2, tensor_values 3) into
 *  sequence tensor t (seq; data its sequence file). Errors: ECG_ERR_INPUT naming `what` (not
 *  a SequenceProto, items of other dtypes, a sequence of sequences/maps/optionals, a bad item
 *  tensor, over 2^20 items or 4 GiB), ECG_ERR_INTERNAL. */
int bt_seqpb_decode(const uint8_t *buf, size_t len, const char *what, bt_tensor *t, ecg_err *e);
/** Build sequence tensor t named name of element dtype from items[n] (copied). Errors as
 *  bt_seqpb_decode. */
int bt_seq_from_items(bt_tensor *t, const char *name, int dtype, const bt_tensor *items, int n, ecg_err *e);
/** The items of sequence tensor t as views into its data (names borrowed): *items is
 *  allocated (free() it, nothing else), *n their count. Errors: ECG_ERR_INPUT (a malformed
 *  sequence file), ECG_ERR_INTERNAL. */
int bt_seq_items(const bt_tensor *t, bt_tensor **items, int *n, ecg_err *e);
/** Write sequence tensor t as a SequenceProto of TensorProtos (raw_data) to path, through a
 *  temporary name and rename. Errors as bt_tensorpb_write. */
int bt_seqpb_write(const char *path, const bt_tensor *t, ecg_err *e);

/* ---------------------------------------------------------------- compare.c */

/** Result of comparing one tensor elementwise: |ours - exp| <= atol + rtol*|exp|. */
typedef struct bt_cmp {
  double max_abs;    /**< max |ours - exp| over finite pairs; INFINITY when a mismatch is NaN or
                          infinite (printed as null: unbounded) */
  double max_rel;    /**< max |ours - exp| / |exp| over finite pairs with exp != 0 */
  double worst;      /**< max |ours - exp| / (atol + rtol*|exp|); > 1 means a mismatch */
  size_t mismatches; /**< elements failing the test (NaN equals NaN; exact for integers) */
  size_t first_bad;  /**< scalar index of the first mismatch (valid when mismatches > 0) */
} bt_cmp;

/** Compare ours with exp (same dtype and shape, checked by the caller). Integer and
 *  bool dtypes are compared exactly, floats with the tolerance test; NaN == NaN and
 *  an infinity equals the same infinity. */
void bt_compare(const bt_tensor *ours, const bt_tensor *exp, double rtol, double atol, bt_cmp *r);
/** bt_compare of two sequence tensors, item by item: another count is one mismatch, an item of
 *  another dtype or shape one mismatch each (both with unbounded errors); first_bad is then the
 *  index of the first item that differs. */
void bt_compare_seq(const bt_tensor *ours, const bt_tensor *exp, double rtol, double atol, bt_cmp *r);

/* ---------------------------------------------------------------- proc.c */

/** Captured output of a child process. */
typedef struct bt_proc {
  int status;      /**< exit code, or 128 + signal number when killed */
  char *out;       /**< stdout, NUL-terminated, owned (may be NULL when not captured) */
  size_t out_len;  /**< bytes */
  char *err;       /**< stderr, NUL-terminated, owned */
  size_t err_len;  /**< bytes */
} bt_proc;

/** Run argv (argv[0] looked up in PATH) to completion, capturing stdout and stderr.
 *  Errors: ECG_ERR_INTERNAL (cannot spawn, pipe or memory failure). A non-zero exit
 *  of the child is not an error here: look at p->status. */
int bt_proc_run(char *const argv[], bt_proc *p, ecg_err *e);
/** Free the captured buffers. */
void bt_proc_clear(bt_proc *p);

/* ---------------------------------------------------------------- runner.c */

/** Model I/O as reported by `runner --info`. Owns the tensors (no data). */
typedef struct bt_io {
  bt_tensor *in, *out;
  int n_in, n_out;
  bool dynamic;                  /**< some dim is symbolic: a dynamic-shape build, which takes the input
                                      shapes at run time (runner --shape) and reports the outputs' */
} bt_io;

/** Timing summary in ms: percentiles by linear interpolation between sorted samples. */
typedef struct bt_timing {
  double median_ms, p10_ms, p90_ms;
  int runs;
} bt_timing;

/** Timing samples in ms gathered over several runs of a side (ecg-bench --interleave):
 *  v[0..n) owned, grown by bt_samples_add. */
typedef struct bt_samples {
  double *v;
  int n, cap;
} bt_samples;
/** Append n samples to s. Errors: ECG_ERR_INTERNAL (out of memory). */
int bt_samples_add(bt_samples *s, const double *v, int n, ecg_err *e);
/** Free s's samples and zero it. */
void bt_samples_clear(bt_samples *s);

/** Where the lowered directory's code runs: on this machine, or under qemu-user when
 *  model.json's "arch" names another ISA (see bt_target_resolve). */
typedef struct bt_target {
  char arch[64];          /**< reported ISA: the host's uname -m for native, else model.json's arch */
  bool emulated;          /**< the runner runs under qemu-user */
  bool own_isa;           /**< lowered for this machine's ISA by name (--arch aarch64 on an aarch64
                               host): built with CROSS_COMPILE= (the host's gcc) */
  const char *qemu;       /**< emulator ("qemu-aarch64") when emulated */
  char sysroot[512];      /**< qemu -L: $QEMU_LD_PREFIX, else the Debian cross sysroot */
  char backend[16];       /**< model.json "target": "c" (also when absent) or "opencl" */
  int device;             /**< OpenCL device index for the runner (--device N); -1: the runner's default */
  char device_name[256];  /**< the CL_DEVICE_NAME the runner reported ("" for C) */
} bt_target;

/** Resolve the target of a lowered directory from its model.json "arch" (NULL or "" =
 *  native). A foreign ISA needs its cross compiler (unless cc is given), the qemu-user
 *  emulator and the cross sysroot. Errors: ECG_ERR_INPUT (unknown arch; a missing tool:
 *  the message names the Debian packages to install). */
int bt_target_resolve(const char *arch, const char *cc, bt_target *t, ecg_err *e);
/** Build the lowered directory: `make -C dir -s [CC=cc]` (plus `CROSS_COMPILE=` when a
 *  foreign-ISA directory runs on its own ISA), output captured in *p (caller clears it).
 *  Errors: ECG_ERR_INPUT when make fails (p->status != 0; the compiler's messages are in
 *  p->out and p->err), ECG_ERR_INTERNAL (cannot spawn). */
int bt_build(const char *dir, const char *cc, const bt_target *t, bt_proc *p, ecg_err *e);
/** Run `dir/runner --info` (through qemu when t->emulated) and parse its lines. Errors:
 *  ECG_ERR_INPUT (runner fails, malformed line), ECG_ERR_INTERNAL. */
int bt_runner_info(const char *dir, const bt_target *t, bt_io *io, ecg_err *e);
/** Free io's tensors. */
void bt_io_clear(bt_io *io);
/** Run dir/runner (through qemu when tg->emulated) on input files in_paths[i] (io->in order) writing outputs to
 *  out_paths[i] (io->out order); parse the "time_ms" lines into *t. profile (NULL: none) is
 *  passed as `--profile FILE`: the runner writes its per-kernel mean times there. A dynamic
 *  io (io->dynamic) passes each input's shape (`--shape NAME=DIMS`) and takes each output's
 *  shape from the runner's "output_shape NAME DIMS" lines into io->out. With acc (NULL:
 *  none), the run's samples are also appended to *acc. Errors:
 *  ECG_ERR_INPUT (runner exits non-zero, stderr in the message; no time lines). */
int bt_runner_run(const char *dir, bt_target *tg, bt_io *io, char **in_paths, char **out_paths,
                  int threads, int warmup, int runs, const char *profile, bt_timing *t, bt_samples *acc, ecg_err *e);
/** Summarise n samples (ms; sorted in place) into *t. */
void bt_timing_from(double *samples, int n, bt_timing *t);

/* ---------------------------------------------------------------- ort.c */

/** Locate tools/bench/ort_run.mjs: $ECG_BENCH_ORT, else, for an installed ecg-bench,
 *  BINDIR/../share/ecg/bench/ort_run.mjs (make install), else the first
 *  <ancestor>/tools/bench/ort_run.mjs going up from this executable's directory's
 *  parent (bin/.., build-san/bin/../..). Writes into buf (cap bytes).
 *  ECG_ERR_INPUT if absent. */
int bt_ort_script(char *buf, size_t cap, ecg_err *e);
/** Run ONNX Runtime (node ort_run.mjs; node from $ECG_NODE or PATH) on model with the
 *  inputs (io->in order, with their shapes passed as --input-shape) and the same
 *  threads/warmup/runs; fill *t from its JSON line and, with acc (NULL: none), append its
 *  samples ("times_ms") to *acc. With profile (NULL: none), ONNX Runtime's profiler is on and
 *  the per-node profile is written to that file (ort_run.mjs --profile). Errors: ECG_ERR_INPUT (script
 *  missing or failing; its stderr in the message), ECG_ERR_INTERNAL. */
int bt_ort_run(const char *model, const bt_io *io, char **in_paths, int threads, int warmup,
               int runs, const char *opt_level, const char *out_dir, const char *profile, bt_timing *t, bt_samples *acc,
               ecg_err *e);

/* ---------------------------------------------------------------- peak.c */

/** This machine's per-core limits (issue 13 item 1; the roofline of ecg-bench --profile). */
typedef struct bt_peak {
  char cpu[128];        /**< /proc/cpuinfo "model name" (the cache key) */
  char isa[16];         /**< vectors the FMA test ran on: "avx512", "avx2", "vec128" */
  double fma_gflops;    /**< FP32 FMA peak of one core, GFLOP/s (an FMA = 2 FLOPs) */
  double bandwidth_gbs; /**< STREAM-triad bandwidth of one thread, GB/s (1e9 bytes/s) */
} bt_peak;

/** Measure *p now (about 2 s: 5 x 0.2 s of FMA chains, 5 triads over 192 MiB). Errors:
 *  ECG_ERR_INTERNAL (out of memory). */
int bt_peak_measure(bt_peak *p, ecg_err *e);
/** *p from the cache ($ECG_PEAK_CACHE, else $XDG_CACHE_HOME or ~/.cache /ecg/peak.json)
 *  when it was measured on a CPU of the same name and remeasure is false (*cached set);
 *  else measured (bt_peak_measure) and the cache rewritten (best effort). Errors as
 *  bt_peak_measure. */
int bt_peak_get(bool remeasure, bt_peak *p, bool *cached, ecg_err *e);
/** Print *p as one JSON object (no newline): cpu, isa, fma_gflops_per_core,
 *  bandwidth_gbs, bandwidth_method. */
void bt_peak_json(FILE *f, const bt_peak *p);

/* ---------------------------------------------------------------- profile.c */

/** Write the per-kernel profile of lowered directory dir as JSON to json_out (and a
 *  Chrome-trace timeline to trace_out unless NULL), both through a temporary name and
 *  rename: each kernel's mean ms from runner_profile (the runner's --profile file), its
 *  nominal FLOPs and bytes from dir/model.json "kernel_costs" (null when the directory
 *  predates them), GFLOP/s, GB/s, fraction_of_peak (of pk's per-core FMA peak times
 *  threads), arithmetic intensity (FLOPs/byte), "bound" (memory or compute: below or
 *  above the ridge point peak/bandwidth) and fraction_of_roofline (of min(peak,
 *  intensity x bandwidth)); model names the model. The trace lays the mean durations end
 *  to end in execution order (one run's shape, not one run's timestamps). Errors:
 *  ECG_ERR_INPUT (unreadable or malformed profile, unwritable output: the path and
 *  strerror), ECG_ERR_INTERNAL (out of memory). */
int bt_profile_report(const char *dir, const char *model, const char *runner_profile, int threads, int runs,
                      const bt_peak *pk, bool peak_cached, const char *json_out, const char *trace_out, ecg_err *e);

/* ---------------------------------------------------------------- json.c */

/** Find "key": "string" at any depth of a JSON text and copy the unescaped string
 *  into out (cap bytes). Returns true when found. Minimal: for model.json. */
bool bt_json_string(const char *json, const char *key, char *out, size_t cap);
/** Find "key": number in a JSON text; true when found and parsed. */
bool bt_json_number(const char *json, const char *key, double *v);
/** Print s as a JSON string literal (quoted, escaped) to f. */
void bt_json_print_string(FILE *f, const char *s);
/** Print v as a JSON number (%.6g), or null when not finite. */
void bt_json_print_number(FILE *f, double v);

/* ---------------------------------------------------------------- devprof.c */

/** ecg-bench --profile-device options. */
typedef struct dp_opts {
  const char *sweeps;  /**< ecg-partition --emit-sweeps DIR (index.tsv: signature, dim, extent, file) */
  const char *target;  /**< ecg-lower --target for every sweep: "c" (the CPU) or "opencl" */
  int device;          /**< OpenCL device (opencl; -1: 0) */
  int runs, threads;   /**< timed runs per sample (median), --threads of the C target */
  bool verbose;        /**< one line per sample on stderr */
} dp_opts;
/** EOP's device profile (VEE '22 §3.2): every sweep of o->sweeps lowered (ecg-lower beside
 *  this program) and timed by this program (median of o->runs ms, seeded inputs), each
 *  (signature, dimension) group fitted with eop_fit_samples (constant, linear, staircase;
 *  held-out MAPE in percent); one JSON object on stdout: device (CL_DEVICE_NAME, or this
 *  CPU's model for c), cpu, target, threads, runs, operators [{signature, dim, samples
 *  [[extent, ms]...], pattern (the one chosen), fits {constant|linear|staircase: {a, b, w,
 *  mape}}}], mape {pattern: {all (mean over every group), chosen (mean where chosen),
 *  chosen_by}}, groups, samples_timed. Printed only when every sample was timed. Errors:
 *  ECG_ERR_INPUT (no index.tsv, a malformed line: FILE:LINE, a sweep that does not lower
 *  or run: its file and the tool's stderr), ECG_ERR_INTERNAL. */
int bt_profile_device(const dp_opts *o, ecg_err *e);

#endif
