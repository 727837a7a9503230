/* dplace neural-network engine: the layers, parameter store, optimiser and
 * checkpoints the placement agents are built from.
 *
 * Conventions (llm.c style):
 *  - every tensor is a row-major float32 array; shapes are given in brackets
 *    in the comment above each function, e.g. inp [N, C];
 *  - arguments come in the order outputs, saved activations, inputs,
 *    weights, sizes;
 *  - forward functions overwrite their outputs; backward functions ACCUMULATE
 *    (+=) into every gradient they are given, so the caller zeroes gradients
 *    once per update. A NULL gradient pointer means "not needed";
 *  - scratch buffers are owned by the caller, their size is stated;
 *  - dense products go through nn_gemm: the engine's own AVX2/AVX-512
 *    kernels where the CPU has them (checked at run time), else OpenBLAS;
 *    the thread count is set with dp_nn_set_threads.
 * Linear weights are stored [out, in] like PyTorch. LSTM gate order is
 * i, f, g, o (PyTorch's). */
#ifndef DPLACE_NN_H
#define DPLACE_NN_H

#include <stddef.h>
#include <stdint.h>

#include "dplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- runtime ------------------------------------------------------------ */

/* Sets the number of threads of the dense products (n >= 1): the engine's
 * own thread pool and OpenBLAS. Until called, OpenBLAS's default. */
void dp_nn_set_threads(int n);
/* Returns that number of threads. */
int dp_nn_get_threads(void);
/* The layers and models run with subnormal floats flushed to zero (x86
 * FTZ/DAZ, set on entry and restored on return; a subnormal operand costs
 * ~100 cycles per instruction). on = 0 keeps IEEE subnormals. Default on. */
void dp_nn_set_flush_denormals(int on);

/* Vectorisable float approximations used by the layers (max error about 2
 * ulp for exp on [-87, 88]; tanh absolute error below 5e-7). */
float dp_nn_exp(float x);
float dp_nn_tanh(float x);
float dp_nn_sigmoid(float x);

/* ---- dense layers ------------------------------------------------------- */

/* out [N, OC] = inp [N, C] @ weight[OC, C]^T + bias [OC]; bias may be NULL. */
void dp_nn_linear_forward(float *out, const float *inp, const float *weight,
                          const float *bias, int N, int C, int OC);
/* out [N, OC] = inp [N, C] @ weight_t [C, OC] + bias [OC]: the same layer
 * with its weight stored input-major (the transpose of the layout above).
 * For a few rows at a time (a decoder scoring its choices one step at a
 * time) it runs several times faster: each output row is a sum of weight
 * rows, with no sums across vector lanes. Its sums are taken in another
 * order than dp_nn_linear_forward's, so the two agree to rounding only. */
void dp_nn_linear_forward_t(float *out, const float *inp, const float *weight_t, const float *bias, int N, int C,
                            int OC);
/* dinp [N, C] += dout @ weight; dweight [OC, C] += dout^T @ inp;
 * dbias [OC] += column sums of dout [N, OC]. Any gradient may be NULL. */
void dp_nn_linear_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                           const float *inp, const float *weight, int N, int C, int OC);

/* out [N, C] = table [V, C] rows idx [N]; every idx in [0, V). */
void dp_nn_embedding_forward(float *out, const int *idx, const float *table, int N, int V, int C);
/* dtable [V, C] rows idx[n] += dout [N, C] row n. */
void dp_nn_embedding_backward(float *dtable, const float *dout, const int *idx, int N, int V, int C);

/* out [n] = max(inp, 0); out may alias inp. */
void dp_nn_relu_forward(float *out, const float *inp, size_t n);
/* dinp [n] += dout where out > 0 (out is the forward result). */
void dp_nn_relu_backward(float *dinp, const float *dout, const float *out, size_t n);
/* out [n] = tanh(inp); out may alias inp. */
void dp_nn_tanh_forward(float *out, const float *inp, size_t n);
/* dinp [n] += dout * (1 - out^2). */
void dp_nn_tanh_backward(float *dinp, const float *dout, const float *out, size_t n);
/* out [n] = 1 / (1 + exp(-inp)); out may alias inp. */
void dp_nn_sigmoid_forward(float *out, const float *inp, size_t n);
/* dinp [n] += dout * out * (1 - out). */
void dp_nn_sigmoid_backward(float *dinp, const float *dout, const float *out, size_t n);
/* PReLU with a learned slope: out [N, C] = inp >= 0 ? inp : slope * inp, where
 * slope has S entries, S == 1 (shared) or S == C (one per channel). */
void dp_nn_prelu_forward(float *out, const float *inp, const float *slope, int N, int C, int S);
/* dinp [N, C] += dout * (inp >= 0 ? 1 : slope); dslope [S] += sum dout * inp
 * over the negative inputs. */
void dp_nn_prelu_backward(float *dinp, float *dslope, const float *dout, const float *inp,
                          const float *slope, int N, int C, int S);

/* Column concatenation: out [N, sum widths] = [inps[0] | inps[1] | ...], where
 * inps[k] is [N, widths[k]]. */
void dp_nn_concat_forward(float *out, const float *const *inps, const int *widths, int nin, int N);
/* dinps[k] [N, widths[k]] += the matching columns of dout; NULL entries skip. */
void dp_nn_concat_backward(float *const *dinps, const float *dout, const int *widths, int nin, int N);

/* ---- aggregation of rows by a group index -------------------------------- */

/* out [G, C] = sum of inp [N, C] rows with group [N] == g; group in [0, G). */
void dp_nn_group_sum_forward(float *out, const float *inp, const int *group, int N, int C, int G);
/* dinp [N, C] row n += dout [G, C] row group[n]. */
void dp_nn_group_sum_backward(float *dinp, const float *dout, const int *group, int N, int C, int G);
/* out [G, C] = mean of the rows in each group (0 for an empty group);
 * count [G] saves the group sizes for the backward pass. */
void dp_nn_group_mean_forward(float *out, float *count, const float *inp, const int *group,
                              int N, int C, int G);
/* dinp [N, C] row n += dout [G, C] row g / count[g], g = group[n]. */
void dp_nn_group_mean_backward(float *dinp, const float *dout, const float *count,
                               const int *group, int N, int C, int G);
/* out [G] = number of rows with group [N] == g (no gradient: indices only). */
void dp_nn_group_count_forward(float *out, const int *group, int N, int G);
/* out [G, V] = number of rows n with group[n] == g and category[n] == v,
 * e.g. op-type counts per group (no gradient). */
void dp_nn_group_histogram_forward(float *out, const int *group, const int *category,
                                   int N, int G, int V);
/* out [G, G] = 1 where an edge src[e] -> dst[e] joins group[src] to
 * group[dst], else 0 (no gradient). */
void dp_nn_group_adjacency_forward(float *out, const int *group, const int *src,
                                   const int *dst, int E, int G);

/* ---- recurrent layers ---------------------------------------------------- */

/* An LSTM's parameters are one block: w_ih [4H, C], w_hh [4H, H], bias [4H]. */
size_t dp_nn_lstm_param_count(int C, int H);
/* Floats of scratch dp_nn_lstm_backward needs. */
size_t dp_nn_lstm_scratch_count(int B, int T, int H);

/* LSTM over a sequence, batch first. out [B, T, H] hidden states, h_last,
 * c_last [B, H] final state (may be NULL); saved: cell [B, T, H] cell states,
 * gates [B, T, 4H] activated gates; inp [B, T, C]; h0, c0 [B, H] initial
 * state (NULL: zeros); w the parameter block. reverse != 0 runs from t = T-1
 * down to 0 (the backward direction of a bidirectional LSTM); then the final
 * state is the one at t = 0. */
void dp_nn_lstm_forward(float *out, float *h_last, float *c_last, float *cell, float *gates,
                        const float *inp, const float *h0, const float *c0, const float *w,
                        int B, int T, int C, int H, int reverse);
/* Backward of dp_nn_lstm_forward. Accumulates dinp [B, T, C], dh0, dc0 [B, H],
 * dw (parameter block); dout [B, T, H] and dh_last, dc_last [B, H] (NULL:
 * zeros) are the incoming gradients; scratch has dp_nn_lstm_scratch_count
 * floats. */
void dp_nn_lstm_backward(float *dinp, float *dh0, float *dc0, float *dw, float *scratch,
                         const float *dout, const float *dh_last, const float *dc_last,
                         const float *out, const float *cell, const float *gates,
                         const float *inp, const float *h0, const float *c0, const float *w,
                         int B, int T, int C, int H, int reverse);

/* Bidirectional LSTM: parameters are two LSTM blocks (forward, backward
 * direction), 2 * dp_nn_lstm_param_count(C, H) floats. Saved activations are
 * one block of dp_nn_bilstm_act_count(B, T, H) floats. */
size_t dp_nn_bilstm_act_count(int B, int T, int H);
size_t dp_nn_bilstm_scratch_count(int B, int T, int H);
/* out [B, T, 2H] = [forward states | backward states]; h0, c0 [2, B, H]
 * (NULL: zeros) and h_last, c_last [2, B, H] (may be NULL) hold the forward
 * direction's state first; inp [B, T, C]. */
void dp_nn_bilstm_forward(float *out, float *h_last, float *c_last, float *acts, const float *inp,
                          const float *h0, const float *c0, const float *w,
                          int B, int T, int C, int H);
/* Accumulates dinp [B, T, C], dh0, dc0 [2, B, H], dw; dout [B, T, 2H],
 * dh_last, dc_last [2, B, H] (NULL: zeros); scratch has
 * dp_nn_bilstm_scratch_count floats. */
void dp_nn_bilstm_backward(float *dinp, float *dh0, float *dc0, float *dw, float *scratch,
                           const float *dout, const float *dh_last, const float *dc_last,
                           const float *acts, const float *inp, const float *h0, const float *c0,
                           const float *w, int B, int T, int C, int H);

/* One LSTM cell step: h, c [B, H]; saved gates [B, 4H]; x [B, C];
 * h_prev, c_prev [B, H] (NULL: zeros); w the parameter block. */
void dp_nn_lstm_cell_forward(float *h, float *c, float *gates, const float *x,
                             const float *h_prev, const float *c_prev, const float *w,
                             int B, int C, int H);
/* Accumulates dx [B, C], dh_prev, dc_prev [B, H], dw; dh, dc [B, H] incoming
 * (dc may be NULL); scratch [B, 4H]. */
void dp_nn_lstm_cell_backward(float *dx, float *dh_prev, float *dc_prev, float *dw, float *scratch,
                              const float *dh, const float *dc, const float *c, const float *gates,
                              const float *x, const float *h_prev, const float *c_prev,
                              const float *w, int B, int C, int H);

/* Decoder step: the cell input is [embedding of the previous device | extra]
 * where prev [B] is the teacher-forced or sampled previous device (the start
 * symbol is any row of the table, usually the last); extra [B, X] (e.g. an
 * attention context; NULL when X == 0). Outputs h, c [B, H]; saved: x
 * [B, E + X] the cell input, gates [B, 4H]; table [V, E]; w the LSTM block
 * for input size E + X. */
void dp_nn_decoder_step_forward(float *h, float *c, float *x, float *gates, const int *prev,
                                const float *extra, const float *h_prev, const float *c_prev,
                                const float *table, const float *w,
                                int B, int V, int E, int X, int H);
/* Accumulates dextra [B, X], dh_prev, dc_prev [B, H], dtable [V, E], dw;
 * scratch [B, 4H + E + X]. */
void dp_nn_decoder_step_backward(float *dextra, float *dh_prev, float *dc_prev, float *dtable,
                                 float *dw, float *scratch, const float *dh, const float *dc,
                                 const float *c, const float *x, const float *gates,
                                 const int *prev, const float *h_prev, const float *c_prev,
                                 const float *w, int B, int V, int E, int X, int H);

/* ---- additive (Bahdanau) attention ----------------------------------------
 * score[b, j] = v . tanh(keys[b, j] + query[b] @ w_q^T), att = softmax_j,
 * ctx[b] = sum_j att[b, j] enc[b, j]. keys = enc @ w_k^T is computed once per
 * sequence with dp_nn_linear_forward (and its gradient dkeys flows back
 * through dp_nn_linear_backward), so a decoder step only pays for the query.
 * The query is the previous decoder state (context fed as decoder input,
 * "before") or the new one (context joined to the output, "after"). */

/* ctx [B, E]; saved: att [B, T], act [B, T, A] the tanh values, qp [B, A]
 * the projected query; query [B, Q], keys [B, T, A], enc [B, T, E];
 * w_q [A, Q], v [A]. */
void dp_nn_attention_forward(float *ctx, float *att, float *act, float *qp, const float *query,
                             const float *keys, const float *enc, const float *w_q,
                             const float *v, int B, int T, int Q, int A, int E);
/* Accumulates dquery [B, Q], dkeys [B, T, A], denc [B, T, E], dw_q [A, Q],
 * dv [A] from dctx [B, E]; scratch [B, T + A]. */
void dp_nn_attention_backward(float *dquery, float *dkeys, float *denc, float *dw_q, float *dv,
                              float *scratch, const float *dctx, const float *att, const float *act,
                              const float *query, const float *enc, const float *w_q,
                              const float *v, int B, int T, int Q, int A, int E);

/* ---- graph layers (Mars's encoder, Deep Graph Infomax) ------------------- */

/* Sparse normalised adjacency D^-1/2 (A + I) D^-1/2 of an undirected graph
 * in CSR form (edges are made symmetric, duplicates merged, self-loops
 * added once). */
typedef struct dp_nn_graph {
    int n;          /* nodes */
    int64_t nnz;    /* stored entries, self-loops included */
    int64_t *row;   /* [n + 1] row starts */
    int *col;       /* [nnz] column of each entry */
    float *val;     /* [nnz] normalised weight of each entry */
} dp_nn_graph;

/* Builds g from E directed edges src[e] -> dst[e] over n nodes. Errors:
 * DP_STATUS_INVALID for an endpoint outside [0, n), DP_STATUS_NOMEM. */
dp_status dp_nn_graph_init(dp_nn_graph *g, int n, const int *src, const int *dst, int64_t E,
                           dp_error *err);
/* Frees g's arrays and zeroes it; safe on a zeroed or freed graph. */
void dp_nn_graph_free(dp_nn_graph *g);

/* Graph convolution: out [N, OC] = Ahat (inp [N, C] @ weight[OC, C]^T) + bias
 * [OC]; saved xw [N, OC] the product before propagation; bias may be NULL. */
void dp_nn_gcn_forward(float *out, float *xw, const float *inp, const dp_nn_graph *g,
                       const float *weight, const float *bias, int N, int C, int OC);
/* Accumulates dinp [N, C], dweight [OC, C], dbias [OC]; scratch [N, OC]. */
void dp_nn_gcn_backward(float *dinp, float *dweight, float *dbias, float *scratch,
                        const float *dout, const float *inp, const dp_nn_graph *g,
                        const float *weight, int N, int C, int OC);

/* Mean readout with sigmoid: out [C] = sigmoid(mean of inp [N, C] rows). */
void dp_nn_readout_forward(float *out, const float *inp, int N, int C);
/* dinp [N, C] += dout [C] * out (1 - out) / N for every row. */
void dp_nn_readout_backward(float *dinp, const float *dout, const float *out, int N, int C);

/* Bilinear discriminator: out [N] = inp[n] . (weight [C, C] @ summary [C]) +
 * bias[0]; saved ws [C] = weight @ summary; bias may be NULL. */
void dp_nn_bilinear_forward(float *out, float *ws, const float *inp, const float *summary,
                            const float *weight, const float *bias, int N, int C);
/* Accumulates dinp [N, C], dsummary [C], dweight [C, C], dbias [1] from
 * dout [N]; scratch [C]. */
void dp_nn_bilinear_backward(float *dinp, float *dsummary, float *dweight, float *dbias,
                             float *scratch, const float *dout, const float *ws,
                             const float *inp, const float *summary, const float *weight,
                             int N, int C);

/* Binary cross-entropy with logits, averaged: returns
 * mean_n [max(x, 0) - x y + log(1 + exp(-|x|))] for logits x [N], labels y [N]. */
float dp_nn_bce_logits_forward(const float *logits, const float *labels, int N);
/* dlogits [N] += dloss * (sigmoid(x) - y) / N. */
void dp_nn_bce_logits_backward(float *dlogits, float dloss, const float *logits,
                               const float *labels, int N);

/* perm [N] = a uniformly random permutation of 0..N-1 (Fisher-Yates). */
void dp_nn_permutation_sample(int *perm, dp_rng *rng, int N);
/* Node-permutation corruption: out [N, C] row n = inp row perm[n]. */
void dp_nn_permute_rows_forward(float *out, const float *inp, const int *perm, int N, int C);
/* dinp [N, C] row perm[n] += dout row n. */
void dp_nn_permute_rows_backward(float *dinp, const float *dout, const int *perm, int N, int C);

/* ---- categorical policy head ---------------------------------------------- */

/* logits [N, D] = tanh_c * tanh(inp / temperature) + noise (noise [N, D] may
 * be NULL); saved act [N, D] the tanh values. tanh_c <= 0 disables the
 * squashing: logits = inp / temperature + noise, and act is unused. */
void dp_nn_policy_logits_forward(float *logits, float *act, const float *inp, const float *noise,
                                 int N, int D, float tanh_c, float temperature);
/* dinp [N, D] += dlogits * tanh_c (1 - act^2) / temperature. */
void dp_nn_policy_logits_backward(float *dinp, const float *dlogits, const float *act,
                                  int N, int D, float tanh_c, float temperature);
/* noise [n] = amplitude * z / max|z| with z standard normal deviates, so the
 * largest magnitude is exactly amplitude (the Hierarchical Planner's
 * exploration noise). */
void dp_nn_noise_fill(float *noise, dp_rng *rng, size_t n, float amplitude);

/* logp [N, D] = log_softmax(inp) row by row. */
void dp_nn_log_softmax_forward(float *logp, const float *inp, int N, int D);
/* dinp [N, D] += dlogp - softmax * row sum of dlogp. */
void dp_nn_log_softmax_backward(float *dinp, const float *dlogp, const float *logp, int N, int D);
/* actions [N] sampled from the rows of logp [N, D] with rng (one uniform
 * per row, inverse CDF). */
void dp_nn_categorical_sample(int *actions, const float *logp, dp_rng *rng, int N, int D);
/* actions [N] = argmax of each row of logp [N, D] (greedy decoding). */
void dp_nn_categorical_argmax(int *actions, const float *logp, int N, int D);
/* out [N] = logp[n, actions[n]]. */
void dp_nn_categorical_logprob_forward(float *out, const float *logp, const int *actions,
                                       int N, int D);
/* dlogp [N, D] at (n, actions[n]) += dout[n]. */
void dp_nn_categorical_logprob_backward(float *dlogp, const float *dout, const int *actions,
                                        int N, int D);
/* out [N] = -sum_d p log p, p = exp(logp [N, D]). */
void dp_nn_categorical_entropy_forward(float *out, const float *logp, int N, int D);
/* dlogp [N, D] += -dout[n] p (1 + logp). */
void dp_nn_categorical_entropy_backward(float *dlogp, const float *dout, const float *logp,
                                        int N, int D);

/* ---- parameters, optimiser, checkpoints ----------------------------------- */

typedef enum dp_nn_init {
    DP_NN_INIT_ZERO = 0,    /* all zeros                                  */
    DP_NN_INIT_CONST,       /* all equal to scale                         */
    DP_NN_INIT_UNIFORM,     /* uniform in [-scale, scale)                 */
    DP_NN_INIT_NORMAL,      /* normal with standard deviation scale       */
    DP_NN_INIT_COUNT
} dp_nn_init;

#define DP_NN_NAME_MAX 48

/* One named tensor of a model. */
typedef struct dp_nn_tensor_spec {
    const char *name;  /* unique, shorter than DP_NN_NAME_MAX */
    size_t count;      /* floats */
    dp_nn_init init;
    float scale;
} dp_nn_tensor_spec;

/* A model's parameters: values, gradients and both Adam moments are four
 * allocations of count floats each; tensor i lives at offset[i] in each. */
typedef struct dp_nn_params {
    int ntensors;
    char (*name)[DP_NN_NAME_MAX]; /* [ntensors] */
    size_t *offset;               /* [ntensors] */
    size_t *size;                 /* [ntensors] */
    size_t count;                 /* total floats */
    float *data;
    float *grad;
    float *m;
    float *v;
    int64_t step;                 /* Adam steps taken */
} dp_nn_params;

/* Lays out the tensors of specs [n] and initialises them with rng. Errors:
 * DP_STATUS_INVALID (duplicate or overlong name, zero size), NOMEM. */
dp_status dp_nn_params_init(dp_nn_params *p, const dp_nn_tensor_spec *specs, int n,
                            dp_rng *rng, dp_error *err);
/* Frees p and zeroes it; safe on a zeroed or freed store. */
void dp_nn_params_free(dp_nn_params *p);
/* Index of the tensor called name, or -1. */
int dp_nn_params_find(const dp_nn_params *p, const char *name);
/* Value and gradient pointers of tensor i. */
float *dp_nn_params_tensor(const dp_nn_params *p, int i);
float *dp_nn_params_grad(const dp_nn_params *p, int i);
/* Sets every gradient to zero. */
void dp_nn_params_zero_grad(dp_nn_params *p);

/* Adam settings; lr comes from a schedule at each step. */
typedef struct dp_nn_adam {
    double beta1, beta2, eps, weight_decay; /* weight_decay: L2 added to grad */
} dp_nn_adam;

/* PyTorch's defaults: beta1 0.9, beta2 0.999, eps 1e-8, no weight decay. */
dp_nn_adam dp_nn_adam_default(void);
/* Adam steps a parameter store may hold: 0 .. DP_NN_MAX_STEP (2^40, as the
 * agent checkpoint allows); checkpoints outside it are refused, and
 * dp_nn_adam_update saturates there (a negative step restarts at 1). */
#define DP_NN_MAX_STEP ((int64_t)1 << 40)

/* One Adam step with bias correction at learning rate lr: step += 1, then
 * m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2,
 * w -= lr (m / (1-b1^step)) / (sqrt(v / (1-b2^step)) + eps). */
void dp_nn_adam_update(dp_nn_params *p, const dp_nn_adam *cfg, float lr);
/* The same step with two learning rates: lr_head for the tensors before
 * tensor `first`, lr_tail for the rest (one step count for all). */
void dp_nn_adam_update_split(dp_nn_params *p, const dp_nn_adam *cfg, int first, float lr_head, float lr_tail);
/* Global L2 norm of all gradients (accumulated in double). */
double dp_nn_grad_norm(const dp_nn_params *p);
/* Scales all gradients by max_norm / norm when norm > max_norm; returns the
 * norm before clipping. */
double dp_nn_grad_clip(dp_nn_params *p, double max_norm);
/* The same over tensors first .. first + n - 1 only (contiguous in p): one
 * clip per network of a model whose networks share one store. */
double dp_nn_grad_clip_range(dp_nn_params *p, int first, int n, double max_norm);

typedef enum dp_nn_lr_kind {
    DP_NN_LR_KIND_CONSTANT = 0,
    DP_NN_LR_KIND_STEP_DECAY,   /* base * gamma^floor(step / every) */
    DP_NN_LR_KIND_COUNT
} dp_nn_lr_kind;

typedef struct dp_nn_lr_schedule {
    dp_nn_lr_kind kind;
    float base;
    int64_t every;   /* steps per decay (STEP_DECAY) */
    float gamma;     /* decay factor (STEP_DECAY) */
} dp_nn_lr_schedule;

/* Learning rate for the update numbered step (0-based). */
float dp_nn_lr_at(const dp_nn_lr_schedule *s, int64_t step);

#define DP_NN_CHECKPOINT_VERSION 1u

/* Writes p's values, Adam moments and step to path as a versioned binary
 * checkpoint: written to a temporary file in the same directory, flushed,
 * then renamed over path, so path always holds a whole checkpoint.
 * Errors: DP_STATUS_IO. */
dp_status dp_nn_checkpoint_save(const dp_nn_params *p, const char *path, dp_error *err);
/* Reads a checkpoint into p, whose tensor names and sizes must match.
 * Errors: DP_STATUS_IO (cannot open or read, truncated), DP_STATUS_PARSE (not
 * a dplace checkpoint, corrupt checksum, a step outside 0..DP_NN_MAX_STEP,
 * a non-finite value or moment, a negative second moment), DP_STATUS_UNSUPPORTED (other
 * version), DP_STATUS_INVALID (tensors do not match p). p is unchanged on
 * error. */
dp_status dp_nn_checkpoint_load(dp_nn_params *p, const char *path, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
