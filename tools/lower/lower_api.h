/* ecg-lower's entry point, used by main.c. */
#ifndef ECG_LOWER_API_H
#define ECG_LOWER_API_H
#include "ecg.h"
/** Lower graph g (validated here; every shape must be static) into directory dir,
 *  which must exist and be empty: model.h, model.c, runtime sources, weights.bin,
 *  model.json, Makefile (tools/lower/LOWERED.md). Symbols are prefixed with prefix
 *  (a C identifier). arch names the target ISA (ecg_arch.h; NULL = "native"): it is recorded
 *  in model.json and, for a foreign ISA, makes the Makefile cross-build; the generated C
 *  and weights do not depend on it (ISA-dependent packing happens at create time).
 *  sparse picks the kernel of Convs carrying a PatDNN pattern annotation: "fkw" (NULL, the
 *  default: per-pattern generated code over the FKW arrays), "csr" (the CSR baseline) or
 *  "dense" (ignore the annotation). memory_plan picks how intermediates are placed in the
 *  arena (memplan.c): "peak" (NULL, the default: SOD²'s peak-first plan), "bestfit" or
 *  "size" (the baselines).
 *  Errors: ECG_ERR_USAGE (unknown arch, sparse or memory_plan), ECG_ERR_INPUT (invalid graph, symbolic shape,
 *  operator or dtype without an emitter: the message names the node), ECG_ERR_INTERNAL
 *  (I/O, OOM). */
/** What a lowering made (the numbers model.json records): kernels = passes over memory
 *  (kernel functions, not counting zero-copy Reshapes, plus one per epilogue a runtime call
 *  could not take), blocks = kernel functions, weights and arena (the static memory plan's
 *  intermediates) in bytes, convs given a sparse kernel. */
typedef struct ecg_lower_stats {
  int kernels, blocks, sparse_convs;
  size_t weights_bytes, arena_bytes;
  size_t arena_lower_bound; /**< bytes live at the peak position: no plan needs less */
  char *notes;              /**< c+opencl: one line per placed node that runs whole on the CPU
                                 though placed on the device, naming it and why (malloc'd, the
                                 caller frees it; NULL when none): the notes -q silences */
} ecg_lower_stats;
/** As above; st (may be NULL) receives the lowering's numbers on success. */
int ecg_lower_dir(const ecg_graph *g, const char *dir, const char *prefix, const char *arch, const char *sparse,
                  const char *memory_plan, ecg_lower_stats *st, ecg_err *e);
/** As above for back end target: "c" (ecg_lower_dir), "opencl" (OpenCL C kernels in model.cl,
 *  a host model.c linking -lOpenCL; an operator the OpenCL printer cannot express is refused
 *  with ECG_ERR_INPUT naming the node and op) or "c+opencl" (C, the kernels with an EOP
 *  placement split between the CPU and OpenCL device ECG_CL_DEVICE; hetero.c). An unknown
 *  target is ECG_ERR_USAGE. */
int ecg_lower_dir_target(const ecg_graph *g, const char *dir, const char *prefix, const char *arch, const char *sparse,
                         const char *memory_plan, const char *target, ecg_lower_stats *st, ecg_err *e);
/** Options of the pattern-sparse kernels (PatDNN §2.5.4-2.5.5), for ecg_lower_dir_sparse. */
typedef struct ecg_lower_sparse_opts {
  const char *tune_path; /**< --sparse-tune FILE: measured tiles (JSON lines); NULL = none */
  int tile[4];           /**< --sparse-tile LANESxROWSxVECS[xFILTERS] forced on every LRE layer (filters 0 =
                              the level's own: 1 for lre, 2 for lre-filter); zeros = not forced */
} ecg_lower_sparse_opts;
/** ecg_lower_dir_target with sparse kernel options (so may be NULL). sparse may also be "fkr"
 *  (ablation: FKR code with accumulators in memory), "lre" (+ kernel-level load-redundancy
 *  elimination, register tiles of one filter, static tile rule) or "lre-filter" (+ filter-level
 *  LRE, register tiles of 2 filters, static tile rule; PatDNN §2.5.4, Fig. 2.11); "fkw" takes
 *  each layer's fastest tile (filters per tile included) measured in so->tune_path.
 *  Extra errors: ECG_ERR_INPUT for an unreadable or malformed tuning file (file:line). */
int ecg_lower_dir_sparse(const ecg_graph *g, const char *dir, const char *prefix, const char *arch, const char *sparse,
                         const char *memory_plan, const char *target, const ecg_lower_sparse_opts *so, ecg_lower_stats *st,
                         ecg_err *e);
#endif
