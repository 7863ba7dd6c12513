/* Emitters (tools/lower/emit/): one function per operator family; the table in
 * emitters.c maps every registry op id to its emitter. */
#ifndef ECG_EMIT_H
#define ECG_EMIT_H
#include "../lower.h"

/** Expand an expression template ($0.. inputs, $T type, $a $b floats) into out;
 *  -1 on a bad template. */
int lw_expand_expr(sbuf *out, const char *tmpl, const char *const *vals, int n_vals, const char *ctype,
                   double a, double b);
/** out[i] = tmpl(inputs broadcast to out's shape); in_dims/in_rank give each input's
 *  shape (may differ from the tensor's own to express per-channel broadcasts). */
int lw_emit_map(ecg_lower *L, int out_id, int n_in, const int *in_ids, int64_t in_dims[][ECG_MAX_RANK],
                const int *in_rank, const char *tmpl, double a, double b);

/** The resolved geometry (ecg_conv_geom_resolve) of a 1-D or 2-D windowed node into
 *  *gm and as the runtime's 2-D parameters (a 1-D op uses the second, width, slot):
 *  kernel k[2], strides s[2], dilations d[2], pads p[4] (top, left, bottom, right).
 *  Errors: the resolver's, and 3 or more spatial dims (ECG_ERR_INPUT naming the node). */
int lw_geom_2d(ecg_lower *L, const ecg_node *n, ecg_err *e, ecg_conv_geom *gm, int64_t *k, int64_t *s, int64_t *d,
               int64_t *p);

/** Gemm's geometry (ONNX Gemm: Y[M, N] = alpha * A' B' + beta * C, A' = transA ? A^T : A):
 *  the dims of A, B and Y into ad, bd, od, the attributes, M, N, K, and whether C takes part
 *  (present and beta != 0). Shared by the C and OpenCL Gemm emitters (nn.c). */
typedef struct lw_gemm_geom {
  int64_t ad[ECG_MAX_RANK], bd[ECG_MAX_RANK], od[ECG_MAX_RANK], M, N, K;
  int ta, tb, has_c;
  float alpha, beta;
} lw_gemm_geom;
void lw_gemm_geom_of(ecg_lower *L, const ecg_node *n, lw_gemm_geom *g);

/** The ecg_act argument of a runtime call: the fusion block's epilogue being fused
 *  (L->epi_act, marked used), else ECG_ACT_NONE (nn.c). */
const char *lw_act_arg(ecg_lower *L);
/** The C initialiser "{ECG_ACT_<KIND>, a, b, 0, 0}" of an ecg_act (ecg_rt.h) applying the
 *  builtin activation k (format/chain.h; the numbering is ecg_act_kind's) with parameters
 *  a, b, written into buf of sz bytes (nn.c). */
void lw_act_init(int k, float a, float b, char *buf, size_t sz);
/** lw_act_init of the activation that the nodes ns[0..n) compute from tensor t
 *  (ecg_builtin_act_chain: one node, or SiLU's two); none where n is 0 or t < 0 (nn.c). */
void lw_act_chain_init(const ecg_lower *L, int t, const int *ns, int n, char *buf, size_t sz);
/** Declare `static const ecg_conv_params cp<u>` (file scope) for a 1-D or 2-D NCHW
 *  operator: input dims xd (rank r), output dims od, m output channels, kernel k[2],
 *  strides s[2], dilations d[2], pads p[4], group; returns u (nn.c). */
int lw_conv_params_decl(ecg_lower *L, int r, const int64_t *xd, const int64_t *od, int64_t m, const int64_t *k,
                        const int64_t *s, const int64_t *d, const int64_t *p, int64_t group);
/** "&cp<u>", or the name of a local copy carrying the block's epilogue as its act
 *  (declared into L->code), written into buf (nn.c). */
const char *lw_conv_params_ref(ecg_lower *L, int u, char *buf, size_t n);
/** Conv node n carrying pattern annotation g->sparse_convs[si] (PatDNN, Niu §2.5):
 *  the FKW kernel generated for its patterns, or the CSR baseline (L->sparse), with
 *  the block's epilogue (sparse.c). */
int emit_conv_sparse(ecg_lower *L, const ecg_node *n, int si, ecg_err *e);

int emit_elementwise(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_variadic(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_conv(ecg_lower *L, const ecg_node *n, ecg_err *e);
/** Check the schedule's conv_algo for Conv node n of input dims xd (rank r), output dims
 *  od, m output channels, kernel k, strides s, group; sets L->conv_algo_next for
 *  lw_conv_params_decl. ECG_ERR_INPUT naming the node when it does not apply (nn.c). */
int lw_conv_algo_check(ecg_lower *L, const ecg_node *n, int r, const int64_t *xd, const int64_t *od, int64_t m,
                       const int64_t *k, const int64_t *s, int64_t group, ecg_err *e);
/** The packed-weight slot of Conv node n whose parameters are cp<u>, with the
 *  ecg_rt1_conv2d_pack call that fills it (at create for constant weights, else in the
 *  kernel); returns the slot. */
int lw_conv_weights(ecg_lower *L, const ecg_node *n, int u);
/** Declare `static const ecg_pool_params pp<u>` for the static-shape pooling node n;
 *  returns u, or -1 with e set (lw_geom_2d's errors). */
int lw_pool_params_decl(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_convtranspose(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_matmul(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_gemm(ecg_lower *L, const ecg_node *n, ecg_err *e);
/** 1 when the emitter of MatMul/Gemm n lowers it as one ecg_rt1_sgemm_packed call that can
 *  add a constant row vector (bias_n, [N] floats) in its micro-kernel: the lowering then
 *  hands the block's bias Add to it (ecg_lower.epi_bias). Static shapes only. */
int lw_gemm_takes_bias_n(ecg_lower *L, const ecg_node *n);
int emit_pool(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_global_pool(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_softmax(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_reduce(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_argreduce(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_norm(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_groupnorm(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_rmsnorm(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_copy(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_transpose(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_concat(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_split(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_slice(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_gather(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_expand(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_tile(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_pad(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_rotary(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_attention(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_center_crop_pad(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_col2im(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_resize(ecg_lower *L, const ecg_node *n, ecg_err *e);
/* sampling and signal processing (signal.c) */
int emit_grid_sample(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_roi_align(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_window(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_mel_weight_matrix(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_dft(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_stft(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_space_depth(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_constant_of_shape(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_range(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_shape(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_conv_nd(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_deform_conv(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_convtranspose_nd(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_pool_nd(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_loss(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_gather_elements(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_trilu(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_hardmax(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_cumsum(ecg_lower *L, const ecg_node *n, ecg_err *e);
/* recurrent, Einsum, LRN, MVN, Det, Dropout (rnn.c) */
int emit_rnn(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_einsum(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_lrn(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_mvn(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_det(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_dropout(ecg_lower *L, const ecg_node *n, ecg_err *e);
/* index operators (index.c) */
int emit_gather_nd(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_scatter_elements(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_scatter_nd(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_onehot(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_max_unpool(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_compress(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_nonzero(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_topk(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_eyelike(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_castlike(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_reverse_sequence(ecg_lower *L, const ecg_node *n, ecg_err *e);
/* data-dependent selection (select.c) */
int emit_nms(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_unique(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_tfidf(ecg_lower *L, const ecg_node *n, ecg_err *e);
/* quant.c: quantization (QuantizeLinear .. QLinearConv) */
int emit_quantize(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_dynamic_quantize(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_matmul_integer(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_conv_integer(ecg_lower *L, const ecg_node *n, ecg_err *e);
/* control.c: If, Loop, Scan as nested code (lw_lower_subgraph) */
int emit_if(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_loop(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_scan(ecg_lower *L, const ecg_node *n, ecg_err *e);
int emit_sequence_map(ecg_lower *L, const ecg_node *n, ecg_err *e);
/* train.c: ai.onnx.preview.training optimizers (Adagrad, Momentum, Adam) */
int emit_optimizer(ecg_lower *L, const ecg_node *n, ecg_err *e);
#endif
