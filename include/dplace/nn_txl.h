/* The Transformer-XL placer that Mars (the Mars paper) compares with (the
 * encoder-placer of GDP, Zhou et al. 2019): segment-level self-attention
 * with a recurrence memory over the previous segment and relative
 * positional encodings (Dai et al. 2019), multi-head, layer norm, a
 * position-wise feed-forward network, and a per-operation device softmax.
 * The layers it is built from (layer norm, relative multi-head attention,
 * the sinusoid table) are public like every other layer: shapes in
 * brackets, arguments ordered outputs, saved activations, inputs, weights,
 * sizes; backward functions accumulate (+=).
 *
 * The placer's API is shaped like the seq2seq's (nn_models.h): B samples,
 * SAMPLE/TEACHER/GREEDY, logp_sum and entropy per sample, per-sample and
 * per-decision weights in backward, the state handed from one segment to
 * the next (here the memory). Unlike the seq2seq it is not autoregressive:
 * a segment's device distributions do not depend on the sampled devices, so
 * one forward serves all B samples, which differ only in their draws. */
#ifndef DPLACE_NN_TXL_H
#define DPLACE_NN_TXL_H

#include "dplace/nn_models.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- layers ------------------------------------------------------------------ */

/* Layer normalisation over the C columns of each row: out [N, C] = (inp -
 * mean) rstd g + b, with mean, rstd [N] saved (eps 1e-5, as PyTorch). */
void dp_nn_layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                             const float *g, const float *b, int N, int C);
/* dinp [N, C], dg [C], db [C] += ...; any may be NULL. */
void dp_nn_layernorm_backward(float *dinp, float *dg, float *db, const float *dout,
                              const float *inp, const float *mean, const float *rstd,
                              const float *g, int N, int C);

/* R [NR, d] = sinusoid encodings of the relative positions first, first +
 * 1, ..., first + NR - 1: R[r, k] = sin(pos f_k), R[r, d/2 + k] = cos(pos
 * f_k), f_k = 10000^(-2k/d) (Dai et al.); d even. No gradient. */
void dp_nn_sinusoid_forward(float *R, int first, int NR, int d);

/* Relative multi-head attention of Transformer-XL for a segment of T
 * queries over K = M + T keys (M memory positions, then the segment).
 * Query i sits at position M + i, key j at j; their relative distance is
 * M + i - j, in [-(T-1), M+T-1], whose projected encoding is row
 * M + i - j + T - 1 of rk [NR = M + 2T - 1, d]. Per head h (columns
 * h dh .. h dh + dh - 1 of every [., d] array, dh = d / heads):
 *   s[i, j] = ((q_i + u) . k_j + (q_i + vb) . rk[M+i-j+T-1]) / sqrt(dh),
 *   masked to j <= M + i when causal; prob = softmax_j s; out_i = sum_j
 *   prob[i, j] v_j.
 * out [T, d]; saved prob [heads, T, K]; q [T, d], k, v [K, d], rk [NR, d],
 * u, vb [d]; scratch of dp_nn_rel_attention_scratch_count floats. */
size_t dp_nn_rel_attention_scratch_count(int T, int M, int d);
void dp_nn_rel_attention_forward(float *out, float *prob, float *scratch, const float *q,
                                 const float *k, const float *v, const float *rk, const float *u,
                                 const float *vb, int T, int M, int d, int heads, int causal);
/* dq [T, d], dk, dv [K, d], drk [NR, d], du, dvb [d] += ... (any may be
 * NULL) from dout [T, d]; prob as saved; scratch as forward. */
void dp_nn_rel_attention_backward(float *dq, float *dk, float *dv, float *drk, float *du,
                                  float *dvb, float *scratch, const float *dout, const float *prob,
                                  const float *q, const float *k, const float *v, const float *rk,
                                  const float *u, const float *vb, int T, int M, int d, int heads,
                                  int causal);

/* ---- the placer ----------------------------------------------------------------- */

typedef struct dp_nn_txl_config {
    int in_dim;   /* F: features per operation (Mars: the GCN's 256)              */
    int d_model;  /* d: width of the layers (even, a multiple of heads)           */
    int heads;    /* attention heads                                               */
    int d_inner;  /* feed-forward hidden units                                     */
    int layers;   /* L                                                             */
    int mem_len;  /* M: memory positions kept from the previous segments (>= 0)   */
    int devices;  /* D                                                             */
    int causal;   /* 1: an operation attends to the memory and the ones before it;
                   * 0: to the memory and the whole segment (the graph is known)  */
} dp_nn_txl_config;

#define DP_NN_TXL_MAX_LAYERS 8

/* The memory one segment hands to the next: mem [L, len, d], the hidden
 * states that entered each layer at the last len positions (the previous
 * segment's, and before it older ones while len < mem_len). As a start,
 * NULL or len 0: no memory. The next segment treats it as a constant
 * (stop-gradient), as Transformer-XL does. */
typedef struct dp_nn_txl_state {
    float *mem;
    int len;
} dp_nn_txl_state;

typedef struct dp_nn_txl {
    dp_nn_txl_config cfg;
    /* values and gradients */
    float *w_in, *b_in, *w_out, *b_out;
    float *dw_in, *db_in, *dw_out, *db_out;
    struct dp_nn_txl_layer {
        float *qkv, *wr, *u, *vb, *wo, *g1, *b1, *w1, *c1, *w2, *c2, *g2, *b2;
        float *dqkv, *dwr, *du, *dvb, *dwo, *dg1, *db1, *dw1, *dc1, *dw2, *dc2, *dg2, *db2;
        /* saved: cat [K, d] (memory, then the layer's input), q [T, d], k, v
         * [K, d], rk [NR, d], prob [heads, T, K], a [T, d], y1 [T, d] (before
         * the first norm), mean1, rstd1 [T], y [T, d], f [T, d_inner] (after
         * the ReLU), y2 [T, d], mean2, rstd2 [T], out [T, d] */
        float *cat, *q, *k, *v, *rk, *prob, *a, *y1, *mean1, *rstd1, *y, *f, *y2, *mean2, *rstd2, *out;
    } layer[DP_NN_TXL_MAX_LAYERS];
    /* workspace for B samples and segments of T, one allocation */
    int B, T, M; /* M: the memory length of the last forward */
    float *mem;
    float *h0, *R, *logp, *ent_t, *dlogp_t, *dlogits, *dh, *dtmp, *dq, *dk, *dv, *drk, *dy, *df, *attn_scratch;
    double *u01; /* [T, B] uniforms of a sampling forward */
    /* the memory for the next segment */
    dp_nn_txl_state last;
} dp_nn_txl;

/* Number of tensors and, when specs is not NULL, their specs. */
int dp_nn_txl_specs(dp_nn_tensor_spec *specs, const dp_nn_txl_config *cfg);
/* Binds to the tensors in p and sizes the workspace for B samples and
 * segments of T operations. Errors: DP_STATUS_INVALID (sizes, missing
 * tensors), NOMEM. */
dp_status dp_nn_txl_init(dp_nn_txl *m, const dp_nn_txl_config *cfg, const dp_nn_params *p, int B,
                         int T, dp_error *err);
void dp_nn_txl_free(dp_nn_txl *m);
/* One segment: inp [T, F] the operations' features (shared by the B
 * samples), start the memory (NULL: none; may be &m->last); logp_sum [B],
 * entropy [B] (may be NULL), actions [B, T] read (TEACHER) or written. The
 * memory for the next segment goes to m->last. */
void dp_nn_txl_segment_forward(dp_nn_txl *m, float *logp_sum, float *entropy, int *actions,
                               const float *inp, const dp_nn_txl_state *start,
                               dp_nn_decode_mode mode, dp_rng *rng);
/* Accumulates the parameter gradients of sum_b dlogp[b] logp_sum[b] +
 * sum_{b,t} dlogp_step[b, t] log p(actions[b, t]) + sum_b dentropy[b]
 * entropy[b] for the last forward (any weight array may be NULL), and adds
 * dL/d(inp) to dinp [T, F] when not NULL. The memory is a constant. */
void dp_nn_txl_segment_backward(dp_nn_txl *m, float *dinp, const float *dlogp,
                                const float *dlogp_step, const float *dentropy,
                                const int *actions, const float *inp);

#ifdef __cplusplus
}
#endif
#endif
