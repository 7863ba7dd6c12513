/* ecg-prune internals: PatDNN pattern and connectivity pruning (Niu dissertation §2.3-2.4),
 * detection of pattern sparsity already in the weights, statistics for the report, and the
 * export of the pruned model as ONNX. The pruned layers carry the libecg pattern
 * annotation (format/ecg.h, "pattern-pruned convolutions"; FKW arrays §2.5.3). */
#ifndef ECG_PRUNE_H
#define ECG_PRUNE_H

#include "ecg.h"

/** Options of one pruning run. */
typedef struct prune_opts {
  int k_patterns;       /**< size of the model's pattern set (top-k natural patterns), >= 1 */
  double connectivity;  /**< connectivity pruning rate (kernels per layer / kept kernels), >= 1 */
  bool detect;          /**< find the patterns already in the weights; change nothing */
  bool prune_first;     /**< connectivity-prune the first Conv too (single-layer test graphs) */
} prune_opts;

/** What was done to one Conv layer (one entry of the report's "layers"). */
typedef struct prune_layer {
  int node;                 /**< node index */
  int64_t dims[4];          /**< weight [m, c, kh, kw] */
  int64_t kernels, kept;    /**< m*c kernels; kernels with a non-zero left */
  int64_t weights, nonzero; /**< m*c*kh*kw; non-zero weights after pruning */
  bool patterned;           /**< kernel pattern pruning applied (3x3) / patterns found */
  bool connectivity;        /**< connectivity pruning applied (not the first layer) */
  bool annotated;           /**< carries a pattern annotation */
  int n_patterns;           /**< patterns used in the layer */
  uint32_t masks[64];       /**< the layer's pattern masks (annotated layers) */
  int64_t hist[64];         /**< kernels per pattern */
  int64_t fkw_index_bytes;  /**< offset + reorder + index + stride (+ weight offsets), at the widths the FKW kernel reads */
  int64_t csr_index_bytes;  /**< CSR int32 row pointers + int32 column indices, as the CSR kernel reads them */
  int64_t csr_narrow_index_bytes; /**< the same CSR arrays at their narrowest widths (no kernel reads these) */
  const char *why;          /**< --detect: why a layer carries no annotation; NULL otherwise */
} prune_layer;

/** The result of a run: per-layer entries and the model's pattern set. */
typedef struct prune_result {
  prune_layer *layers;
  int n_layers;
  uint32_t set[64];         /**< the model-wide pattern set (3x3 masks, bit r*3+c) */
  int n_set;
  int64_t set_hist[64];     /**< kernels projected onto each pattern of the set */
} prune_result;

/** Prune (or, with o->detect, only analyse) every eligible Conv of g (group 1, constant
 *  float32 weight [m, c, kh, kw], kh*kw <= 32): 3x3 kernels are projected onto the best
 *  of the top-k natural patterns (largest kept L2 norm; centre always kept); every
 *  layer but the first Conv of the graph keeps its ceil(m*c / rate) kernels of largest
 *  L2 norm. Zeros are written into the weights in place and each pruned layer gets a
 *  pattern annotation (ecg_sparse_set). No retraining: values are only projected.
 *  Errors: ECG_ERR_INPUT (bad options), ECG_ERR_INTERNAL (out of memory). *r is owned by
 *  the caller (prune_result_free). */
int prune_run(ecg_graph *g, const prune_opts *o, prune_result *r, ecg_err *e);
/** Free r's arrays. */
void prune_result_free(prune_result *r);

/** Write the pruned model as ONNX to out_path: the source model src_path (an ONNX file)
 *  with the weight initializer of every annotated Conv replaced by its pruned dense
 *  values (zeros in place), everything else byte-for-byte as decoded. Errors
 *  (ECG_ERR_INPUT): src unreadable or not ONNX; a weight that is not an initializer of
 *  src, or of another shape or dtype; kept weights that differ from src's (the ECG's
 *  weights were changed by an earlier stage, e.g. ecg-rewrite's bnfold, so src plus
 *  zeros would not be the pruned model); an output write failure. No partial file. */
int prune_export_onnx(const ecg_graph *g, const char *src_path, const char *out_path, ecg_err *e);

#endif
