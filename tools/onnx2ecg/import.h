/* onnx2ecg: ONNX ModelProto -> ECG graph (the import half of the tool; main.c holds the
 * command line).
 *
 * The import is split in phases so that main() decides what to print and when:
 *   onnx2ecg_parse        bytes -> Onnx__ModelProto (protobuf-c), never crashes on garbage
 *   onnx2ecg_convert      ModelProto -> ecg_graph: tensors, initializers, attributes,
 *                         Constant nodes -> constant tensors, Identity/Dropout removed,
 *                         --input-shape bindings applied.  No shape inference here.
 *   onnx2ecg_unsupported  every node the registry does not know, reported all at once
 * after which main() runs ecg_fold_constants / ecg_infer_shapes and ecg_validate.
 *
 * Errors are values (STYLE 8): ECG_ERR_INPUT for a bad or unsupported model (the message
 * names the tensor or node), ECG_ERR_INTERNAL for out of memory.  Nothing here prints.
 */
#ifndef ONNX2ECG_IMPORT_H
#define ONNX2ECG_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ecg.h"
#include "cli.h"
#include "onnx.pb-c.h"

/** The smallest valid ai.onnx opset.  There is no model-wide ceiling: each node is
 *  checked against its operator's schema versions (ecg_op_schema_version,
 *  format/op_versions.def; DESIGN.md "Order"). */
#define ONNX2ECG_OPSET_MIN 1
/** The graph opset recorded for a model that imports no ai.onnx opset (only another
 *  domain's operators): the newest ai.onnx opset ONNX Runtime, the reference, runs. */
#define ONNX2ECG_OPSET_NEWEST 23

/** One --input-shape binding (tools/common/cli.h). */
typedef cli_shape onnx2ecg_shape;

/** Import options. */
typedef struct onnx2ecg_opts {
  const onnx2ecg_shape *shapes;    /**< --input-shape bindings (may be NULL) */
  int n_shapes;
  const char *source;              /**< model path as given, stored in g->source */
} onnx2ecg_opts;

/** What the import changed, for -v and --report. */
typedef struct onnx2ecg_stats {
  int64_t opset;                   /**< the model's ai.onnx opset */
  int nodes_onnx;                  /**< nodes in the ONNX main graph */
  int nodes_imported;              /**< ECG nodes after Constant/Identity/Dropout handling */
  int constants;                   /**< Constant nodes turned into constant tensors */
  int identities_removed;          /**< Identity and Dropout nodes removed by rewiring */
  int initializers;                /**< initializers imported as constants */
} onnx2ecg_stats;

/** Parse len bytes of an ONNX model.  label names the model in messages (its path).
 *  On success *out owns the message (free with onnx__model_proto__free_unpacked(m, NULL)).
 *  Errors: ECG_ERR_INPUT "LABEL: not a valid ONNX model (protobuf decoding failed)" or
 *  "LABEL: ONNX model has no graph". */
int onnx2ecg_parse(const uint8_t *buf, size_t len, const char *label, Onnx__ModelProto **out,
                   ecg_err *e);

/** Convert the model's main graph into a new ECG graph *out (free with ecg_graph_free).
 *  Checks the ai.onnx opset is at least ONNX2ECG_OPSET_MIN (per-node versions are
 *  checked by onnx2ecg_unsupported), converts
 *  initializers (raw_data or typed fields) to raw little-endian bytes, graph inputs' and
 *  outputs' dtypes and shapes from their ValueInfo (dim_value, dim_param as a symbol, or
 *  "?"), applies opts->shapes, copies every attribute (subgraphs recursively), turns
 *  Constant nodes into constant tensors and removes Identity/Dropout (graph output names
 *  are kept).  st (may be NULL) receives counts.  Errors: ECG_ERR_INPUT naming the
 *  tensor/node/option (external data, string tensors, byte counts not matching dims,
 *  unknown --input-shape name, rank mismatch, used Dropout mask ...), ECG_ERR_INTERNAL. */
int onnx2ecg_convert(const Onnx__ModelProto *m, const onnx2ecg_opts *opts, ecg_graph **out,
                     onnx2ecg_stats *st, ecg_err *e);

/** Callback receiving one unsupported-operator line (no trailing newline). */
typedef void (*onnx2ecg_line_fn)(void *ctx, const char *line);

/** Call fn once per node of g that ecg cannot run, all of them (not a stop at the first):
 *  an (op_type, domain) the registry does not know, "unsupported operator: node 'NAME' op
 *  OP (domain 'D', opset N)"; or an operator whose schema version in effect at the node's
 *  opset is not implemented (ecg_op_schema_version), "unsupported operator version: node
 *  'NAME' op OP-V (opset N; implemented versions of OP: 1,11,13)".  Returns the count. */
int onnx2ecg_unsupported(const ecg_graph *g, onnx2ecg_line_fn fn, void *ctx);



#endif /* ONNX2ECG_IMPORT_H */
