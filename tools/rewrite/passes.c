/* ecg-rewrite: the pass table (STYLE 4: one file per pass, registered by name). */
#include <string.h>

#include "rewrite.h"
#include "subst.h"

/* Default order: folding first (exposes constants to bnfold and simplify), BatchNorm
 * folding, zero Pads into convolutions, then CSE, then simplification (which may make more nodes equal), then the
 * DNNFusion rules ("math": it keeps a rewrite only when FLOPs, or nodes at equal FLOPs,
 * drop, and every rule holds up to rounding; on every model of scripts/models.tsv it
 * leaves the outputs within the ONNX Runtime tolerance). */
static const rw_pass PASSES[] = {
    {"fold", rw_fold, "constant folding, each folded node's output at most --fold-max-bytes", true},
    {"bnfold", rw_bnfold, "BatchNormalization folded into a preceding Conv/ConvTranspose/Gemm/MatMul", true},
    {"padfold", rw_padfold, "a constant-zero spatial Pad folded into the pads of the Conv that reads it", true},
    {"cse", rw_cse, "common-subexpression elimination (same op, attributes and inputs)", true},
    {"simplify", rw_simplify, "x*1, x+0, x-0, x/1, x^1, Transpose/Reshape chains, neutral Cast/Reshape/Expand", true},
    {"math", rw_math, "DNNFusion §3.4.2 rules from rule files (--list-rules), best FLOP gain per partition", true},
    {"subst", rw_subst, "OCGGS graph-substitution search (--search, --max-steps, --cost-db; not default)", false},
};

const rw_pass *rw_passes(size_t *n) {
  *n = sizeof PASSES / sizeof *PASSES;
  return PASSES;
}

const rw_pass *rw_pass_find(const char *name) {
  for (size_t i = 0; i < sizeof PASSES / sizeof *PASSES; i++)
    if (!strcmp(PASSES[i].name, name)) return &PASSES[i];
  return NULL;
}

const char *rw_pass_names(void) {
  static char buf[256];
  size_t off = 0;
  buf[0] = 0;
  for (size_t i = 0; i < sizeof PASSES / sizeof *PASSES && off < sizeof buf; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? ", " : "", PASSES[i].name);
  return buf;
}
