/* Operator roles that intensive fusion (AGO §III-B) builds on: pointwise and depthwise
 * convolutions, and the activations the runtime applies in its kernels' epilogues. One
 * definition, used by ecg-fuse --intensive (which blocks to merge) and ecg-lower (how to
 * generate the merged block), so the two always agree. */
#ifndef ECG_CHAIN_H
#define ECG_CHAIN_H
#include "ecg.h"

/** Convolution roles (4-D float32 NCHW Conv with constant weights and bias, dilation 1). */
typedef enum {
  ECG_CONV_OTHER = 0,
  ECG_CONV_POINTWISE, /**< 1x1 kernel, stride 1, no padding, group 1 */
  ECG_CONV_DEPTHWISE, /**< group == input channels == output channels, any kernel/stride/pads */
  ECG_CONV_STEM       /**< a CNN's first layer: group 1, at most 4 input channels, at least 16
                           output channels, in * kh * kw <= 36, strides 1 or 2, pads under
                           the kernel's extent: the first stage of an intensive-fusion
                           chain may be one (the runtime computes it from rows of the
                           image, ecg_rt.h ecg_ibr_params k1h) */
} ecg_conv_role;

/** The role of node n (ECG_CONV_OTHER for anything but such a Conv). */
ecg_conv_role ecg_conv_role_of(const ecg_graph *g, const ecg_node *n);

/** Activations a runtime kernel applies itself; the numbering is ecg_rt.h's ecg_act_kind. */
typedef enum {
  ECG_BACT_NONE = 0, ECG_BACT_RELU, ECG_BACT_CLIP, ECG_BACT_LEAKY, ECG_BACT_SIGMOID, ECG_BACT_HARDSWISH,
  ECG_BACT_SILU /**< x * sigmoid(x): two nodes, ecg_builtin_act_chain only */
} ecg_builtin_act;

/** The builtin activation node n computes, with its parameters (Clip: bounds; LeakyRelu:
 *  alpha in *a), or ECG_BACT_NONE when n is not one (Clip bounds must be constants). */
ecg_builtin_act ecg_builtin_act_of(const ecg_graph *g, const ecg_node *n, float *a, float *b);

/** The builtin activation that the chain ns[0..n) (topological order, float32) computes
 *  from tensor x alone, with its parameters: one node of ecg_builtin_act_of whose only
 *  non-constant input is x, or SiLU (the exporters' form of PyTorch's nn.SiLU, e.g.
 *  efficientnet_b0): s = Sigmoid(x), then Mul(x, s) or Mul(s, x), no broadcasting.
 *  ECG_BACT_NONE for anything else. The caller checks that no node outside the chain
 *  reads its intermediate results (the Sigmoid's output). */
ecg_builtin_act ecg_builtin_act_chain(const ecg_graph *g, int x, const int *ns, int n, float *a, float *b);

/** Geometry of depthwise node n: kernel, strides, pads top/left (bottom/right follow from
 *  the output shape). 0, or -1 when n is not depthwise. */
int ecg_dw_geometry(const ecg_graph *g, const ecg_node *n, int *kh, int *kw, int *sh, int *sw, int *pt, int *pl);
/** The same for any conv with a role (pointwise, depthwise, stem): 0, or -1 for
 *  ECG_CONV_OTHER. */
int ecg_conv_geometry(const ecg_graph *g, const ecg_node *n, int *kh, int *kw, int *sh, int *sw, int *pt, int *pl);
/** The bias of f when f adds a constant row vector to the float32 tensor x (shape [..., N],
 *  static): f is Add(x, c) or Add(c, x), c constant float32 of dims [N] or [1, ..., 1, N],
 *  f's output of x's shape. A GEMM whose output x is adds c per column in its micro-kernel
 *  (ecg_rt1_sgemm_packed's bias_n) instead of in a generated epilogue pass (the fixed plan's
 *  MatMul + bias Add, TVM-style; DNNFusion §3.4.4 epilogue). Returns c's tensor id, or -1
 *  when f is no such Add. */
int ecg_bias_n_of(const ecg_graph *g, int x, const ecg_node *f);

/** An intensive-fusion chain (AGO §III-B) as node indices, -1 where a stage is absent:
 *  [pointwise or stem conv pw1 [act1]] -> depthwise conv dw [act2] [-> pointwise conv pw2].
 *  An activation is ecg_builtin_act_chain's: one node, or SiLU as its Sigmoid and Mul
 *  (efficientnet_b0's), so up to two nodes each. Without pw2 (an expansion whose depthwise
 *  output goes elsewhere than one pointwise conv: EfficientNet's and MnasNet-A1's MBConv,
 *  whose squeeze-and-excitation reads it) pw1 is present and the chain's output is the
 *  depthwise stage's (after act2). */
typedef struct {
  int pw1, act1[2], nact1;
  int dw, act2[2], nact2;
  int pw2;
} ecg_ibr_chain;
/** Match the members idx[0..nm) of a block (topological order) against an intensive-fusion
 *  chain (ecg_ibr_chain), each stage reading the previous one's output, then, after pw2,
 *  One-to-One members of pw2's output size (its epilogue; none without pw2). Fills *m and
 *  returns the index in idx of the first epilogue member (nm when there is none), or -1
 *  when the members are no such chain. What ecg-fuse --intensive forms, ecg-lower
 *  generates as one ecg_rt1_ibr kernel (or stage by stage, schedule intensive_fusion off)
 *  and ecg-partition --tune searches intensive_fusion on. */
int ecg_ibr_match(const ecg_graph *g, const int *idx, int nm, ecg_ibr_chain *m);
/** A squeeze-and-excitation chain (Hu et al.; EfficientNet's, MnasNet-A1's, MobileNet-V3's
 *  MBConv), as node indices (-1: absent): x [n, c, h, w] -> GlobalAveragePool ->
 *  pointwise conv fc1 on the 1x1 plane [+ act1] -> pointwise conv fc2 [+ act2] [-> the
 *  scale: Mul of x and the scales, broadcasting them over x's planes]; or its tail alone,
 *  fc2 [+ act2] -> the scale (gap and fc1 absent; fc2 reads u). Activations are
 *  ecg_builtin_act_chain's (one node, or SiLU as Sigmoid and Mul). */
typedef struct {
  int gap, fc1, act1[2], nact1, fc2, act2[2], nact2, scale;
  int x;    /**< tensor: the pool's input (the scale's other operand), [n, c, h, w] static float32 */
  int u;    /**< tensor: fc2's input, [n, cmid, 1, 1] (read from outside when gap < 0) */
  int y;    /**< tensor: the chain's output, [n, c, h, w] (scale) or [n, cout, 1, 1] */
} ecg_se_chain;
/** Match the members idx[0..nm) of a block (topological order) against a
 *  squeeze-and-excitation chain, every member a stage of it (nothing else): the whole chain
 *  (at least the pool and the two convs), or its tail fc2 [+ act2] -> scale (the scale
 *  present), each stage reading the previous one's output (and the scale Mul x too). 0 and
 *  *m filled, or -1. The caller checks that no node outside the block reads an
 *  intermediate result. The whole chain is what ecg-fuse --intensive forms (AGO §III:
 *  intensive fusion of several compute-intensive operators without recomputation); the
 *  tail what the dnnfusion plan forms from Table 3.3's Many-to-Many -> One-to-Many cell
 *  (the scale joins fc2's block: the scales are computed once and broadcast, nothing is
 *  recomputed). ecg-lower generates either as one ecg_rt1_se kernel (a whole chain stage by
 *  stage under schedule intensive_fusion off) and ecg-partition --tune searches
 *  intensive_fusion on whole chains. */
int ecg_se_match(const ecg_graph *g, const int *idx, int nm, ecg_se_chain *m);
/** Node n can begin a squeeze-and-excitation chain: a GlobalAveragePool of a static 4-D
 *  float32 tensor. */
int ecg_se_head(const ecg_graph *g, const ecg_node *n);
/** Match the members idx[0..nm) of a block (topological order) against a Conv -> MaxPool
 *  chain: a group-1 Conv (4-D static float32 NCHW, constant weights and bias; at most 4
 *  input channels and 36 taps per output, a CNN's first layer) [-> one
 *  builtin activation (ecg_builtin_act_of) of its output] -> a 2-D MaxPool of that output
 *  (static float32, dilations 1, no Indices output), each reading the previous one's
 *  output. Fills the node indices (*act -1 when absent) and returns 0, or -1. The caller
 *  checks that no node outside the block reads the conv's or the activation's output. What
 *  ecg-fuse --intensive forms (AGO §III: a compute-intensive operator fused with the
 *  window reduction after it, nothing recomputed), ecg-lower generates as one
 *  ecg_rt1_conv2d_maxpool kernel (stage by stage under schedule intensive_fusion off). */
int ecg_conv_pool_match(const ecg_graph *g, const int *idx, int nm, int *conv, int *act, int *pool);
/** Members idx[0..nm) form an intensive-fusion chain of any kind (ecg_ibr_match,
 *  ecg_se_match with the pool, or ecg_conv_pool_match): 1 or 0. */
int ecg_intensive_match(const ecg_graph *g, const int *idx, int nm);
#endif
