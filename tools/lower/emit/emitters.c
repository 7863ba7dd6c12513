/* The emitter table: registry op id -> emitter (DESIGN.md: an operator's kernel
 * emitter lives in one file under tools/lower/emit/). Ops without an entry make
 * ecg-lower fail with "no kernel emitter", naming the node. */
#include "emit.h"

static const ecg_emit_fn EMITTERS[ECG_OP_COUNT] = {
#define EWISE(id) [ECG_OP_##id] = emit_elementwise
  EWISE(Relu), EWISE(Sigmoid), EWISE(Tanh), EWISE(Exp), EWISE(Log), EWISE(Sqrt), EWISE(Neg),
  EWISE(Abs), EWISE(Erf), EWISE(Floor), EWISE(Ceil), EWISE(Round), EWISE(Reciprocal), EWISE(Sin),
  EWISE(Cos), EWISE(Sign), EWISE(Not), EWISE(LeakyRelu), EWISE(Elu), EWISE(Selu), EWISE(Softplus),
  EWISE(HardSigmoid), EWISE(HardSwish), EWISE(Clip), EWISE(Cast), EWISE(Identity), EWISE(Add),
  EWISE(Sub), EWISE(Mul), EWISE(Div), EWISE(Pow), EWISE(Mod), EWISE(PRelu), EWISE(Equal),
  EWISE(Less), EWISE(LessOrEqual), EWISE(Greater), EWISE(GreaterOrEqual), EWISE(And), EWISE(Or),
  EWISE(Xor), EWISE(Where), EWISE(BatchNormalization), EWISE(Tan), EWISE(Asin), EWISE(Acos),
  EWISE(Atan), EWISE(Sinh), EWISE(Cosh), EWISE(Asinh), EWISE(Acosh), EWISE(Atanh), EWISE(Softsign),
  EWISE(ThresholdedRelu), EWISE(Shrink), EWISE(Celu), EWISE(IsNaN), EWISE(IsInf), EWISE(BitShift),
  EWISE(Gelu), EWISE(Mish), EWISE(BitwiseAnd), EWISE(BitwiseOr), EWISE(BitwiseXor), EWISE(BitwiseNot),
#undef EWISE
  [ECG_OP_Max] = emit_variadic, [ECG_OP_Min] = emit_variadic, [ECG_OP_Sum] = emit_variadic,
  [ECG_OP_Mean] = emit_variadic,
  [ECG_OP_Conv] = emit_conv, [ECG_OP_DeformConv] = emit_deform_conv, [ECG_OP_ConvTranspose] = emit_convtranspose,
  [ECG_OP_MatMul] = emit_matmul, [ECG_OP_Gemm] = emit_gemm,
  [ECG_OP_MaxPool] = emit_pool, [ECG_OP_AveragePool] = emit_pool,
  [ECG_OP_LpPool] = emit_pool_nd,
  [ECG_OP_GlobalAveragePool] = emit_global_pool, [ECG_OP_GlobalMaxPool] = emit_global_pool,
  [ECG_OP_Softmax] = emit_softmax, [ECG_OP_LogSoftmax] = emit_softmax,
  [ECG_OP_ReduceMean] = emit_reduce, [ECG_OP_ReduceSum] = emit_reduce, [ECG_OP_ReduceMax] = emit_reduce,
  [ECG_OP_ReduceMin] = emit_reduce, [ECG_OP_ReduceProd] = emit_reduce, [ECG_OP_ReduceL2] = emit_reduce,
  [ECG_OP_ReduceSumSquare] = emit_reduce, [ECG_OP_ReduceL1] = emit_reduce,
  [ECG_OP_ReduceLogSum] = emit_reduce, [ECG_OP_ReduceLogSumExp] = emit_reduce,
  [ECG_OP_Hardmax] = emit_hardmax, [ECG_OP_CumSum] = emit_cumsum,
  /* recurrent, Einsum, LRN, MVN, Det, Dropout (rnn.c) */
  [ECG_OP_RNN] = emit_rnn, [ECG_OP_GRU] = emit_rnn, [ECG_OP_LSTM] = emit_rnn, [ECG_OP_Einsum] = emit_einsum,
  [ECG_OP_LRN] = emit_lrn, [ECG_OP_MeanVarianceNormalization] = emit_mvn, [ECG_OP_Det] = emit_det,
  [ECG_OP_Dropout] = emit_dropout,
  [ECG_OP_ArgMax] = emit_argreduce, [ECG_OP_ArgMin] = emit_argreduce,
  [ECG_OP_InstanceNormalization] = emit_norm, [ECG_OP_LayerNormalization] = emit_norm,
  [ECG_OP_RotaryEmbedding] = emit_rotary, [ECG_OP_Attention] = emit_attention,
  [ECG_OP_GroupNormalization] = emit_groupnorm, [ECG_OP_RMSNormalization] = emit_rmsnorm,
  [ECG_OP_Reshape] = emit_copy, [ECG_OP_Flatten] = emit_copy, [ECG_OP_Squeeze] = emit_copy,
  [ECG_OP_Unsqueeze] = emit_copy,
  [ECG_OP_Transpose] = emit_transpose, [ECG_OP_DepthToSpace] = emit_space_depth,
  [ECG_OP_SpaceToDepth] = emit_space_depth,
  [ECG_OP_Concat] = emit_concat, [ECG_OP_Split] = emit_split, [ECG_OP_Slice] = emit_slice,
  [ECG_OP_Expand] = emit_expand, [ECG_OP_Gather] = emit_gather, [ECG_OP_Tile] = emit_tile,
  [ECG_OP_NegativeLogLikelihoodLoss] = emit_loss, [ECG_OP_SoftmaxCrossEntropyLoss] = emit_loss,
  [ECG_OP_GatherElements] = emit_gather_elements, [ECG_OP_Trilu] = emit_trilu,
  [ECG_OP_ConstantOfShape] = emit_constant_of_shape, [ECG_OP_Range] = emit_range, [ECG_OP_Shape] = emit_shape,
  [ECG_OP_Pad] = emit_pad, [ECG_OP_CenterCropPad] = emit_center_crop_pad, [ECG_OP_Col2Im] = emit_col2im, [ECG_OP_Resize] = emit_resize, [ECG_OP_Upsample] = emit_resize,
  /* sampling and signal processing (signal.c) */
  [ECG_OP_GridSample] = emit_grid_sample, [ECG_OP_RoiAlign] = emit_roi_align,
  [ECG_OP_HannWindow] = emit_window, [ECG_OP_HammingWindow] = emit_window, [ECG_OP_BlackmanWindow] = emit_window,
  [ECG_OP_MelWeightMatrix] = emit_mel_weight_matrix, [ECG_OP_DFT] = emit_dft, [ECG_OP_STFT] = emit_stft,
  /* index operators (index.c) */
  [ECG_OP_GatherND] = emit_gather_nd, [ECG_OP_ScatterElements] = emit_scatter_elements,
  [ECG_OP_Scatter] = emit_scatter_elements, [ECG_OP_ScatterND] = emit_scatter_nd,
  [ECG_OP_OneHot] = emit_onehot, [ECG_OP_MaxUnpool] = emit_max_unpool, [ECG_OP_Compress] = emit_compress,
  [ECG_OP_NonZero] = emit_nonzero, [ECG_OP_TopK] = emit_topk, [ECG_OP_EyeLike] = emit_eyelike,
  [ECG_OP_CastLike] = emit_castlike, [ECG_OP_ReverseSequence] = emit_reverse_sequence,
  /* data-dependent selection (select.c) */
  [ECG_OP_NonMaxSuppression] = emit_nms, [ECG_OP_Unique] = emit_unique,
  [ECG_OP_TfIdfVectorizer] = emit_tfidf,
  /* quantization (quant.c) */
  [ECG_OP_QuantizeLinear] = emit_quantize, [ECG_OP_DequantizeLinear] = emit_quantize,
  [ECG_OP_DynamicQuantizeLinear] = emit_dynamic_quantize,
  [ECG_OP_MatMulInteger] = emit_matmul_integer, [ECG_OP_QLinearMatMul] = emit_matmul_integer,
  [ECG_OP_ConvInteger] = emit_conv_integer, [ECG_OP_QLinearConv] = emit_conv_integer,
  /* ai.onnx.preview.training optimizers (train.c) */
  [ECG_OP_If] = emit_if, [ECG_OP_Loop] = emit_loop, [ECG_OP_Scan] = emit_scan, [ECG_OP_SequenceMap] = emit_sequence_map,
  [ECG_OP_Adagrad] = emit_optimizer, [ECG_OP_Momentum] = emit_optimizer, [ECG_OP_Adam] = emit_optimizer,
};

ecg_emit_fn ecg_emitter(ecg_op_id id) { return id >= 0 && id < ECG_OP_COUNT ? EMITTERS[id] : NULL; }

/* The emitters that print their sizes through lw_dim / lw_dim_prod (dyn.c), so they lower
 * nodes with symbolic dims (a dynamic-shape build); each refuses, naming the node, the cases
 * it does not cover yet. Every other emitter is refused on a symbolic shape by lower.c. */
int lw_emit_dynamic(ecg_emit_fn fn) {
  static const ecg_emit_fn ok[] = {emit_elementwise, emit_variadic, emit_conv, emit_pool, emit_global_pool,
                                   emit_copy, emit_matmul, emit_softmax, emit_shape, emit_transpose, emit_concat,
                                   emit_split, emit_slice, emit_reduce, emit_resize, emit_convtranspose, emit_rnn, emit_pad,
                                   /* their subgraphs take run-time shapes (LW_HEAP, rtd): an outer operand
                                    * of symbolic dims that is a graph input (lower.c refuses others) */
                                   emit_loop, emit_sequence_map};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    if (ok[i] == fn) return 1;
  return 0;
}

