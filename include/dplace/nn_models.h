/* dplace agent models built from the nn layers: the feed-forward grouper
 * (Hierarchical Planner, EAGLE), the seq2seq placer with additive attention
 * (Hierarchical Planner: context after the decoder cell; EAGLE: before it;
 * Mars: segment by segment, carrying the decoder state), and the GCN encoder
 * with its Deep Graph Infomax pre-training loss (Mars).
 *
 * A model does not own parameters: dp_nn_*_specs lists its tensors, the
 * caller puts the tensors of all its models into one dp_nn_params (so one
 * Adam and one global clip cover the whole agent), and dp_nn_*_bind points
 * the model at them. Saved activations live in a per-model workspace sized
 * for a batch, one allocation. */
#ifndef DPLACE_NN_MODELS_H
#define DPLACE_NN_MODELS_H

#include "dplace/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a policy picks its actions in a forward pass. */
typedef enum dp_nn_decode_mode {
    DP_NN_DECODE_MODE_SAMPLE = 0, /* sample from the policy, write actions  */
    DP_NN_DECODE_MODE_TEACHER,    /* read actions (teacher forcing)         */
    DP_NN_DECODE_MODE_GREEDY,     /* argmax, write actions                  */
    DP_NN_DECODE_MODE_COUNT
} dp_nn_decode_mode;

/* ---- feed-forward grouper: Linear ReLU Linear, policy head ------------------ */

typedef struct dp_nn_grouper_config {
    int in_dim;        /* features per op                      */
    int hidden;        /* hidden units (64 in the papers)      */
    int groups;        /* output classes                       */
    float tanh_c;      /* <= 0: plain logits                   */
    float temperature; /* divides the logits (1: none)         */
} dp_nn_grouper_config;

typedef struct dp_nn_grouper {
    dp_nn_grouper_config cfg;
    float *w1, *b1, *w2, *b2;     /* values  */
    float *dw1, *db1, *dw2, *db2; /* gradients */
    /* workspace for N rows, one allocation */
    int cap;
    float *mem;
    float *h, *l, *tact, *logp, *noise, *dlogp, *dl, *dh;
    /* a prior (NULL: none; set by the caller after init): row n's logit
     * of class prior[n] gets prior_scale added before the softmax (a
     * constant: the gradients are unchanged) */
    const int32_t *prior;
    float prior_scale;
} dp_nn_grouper;

/* Number of tensors and, when specs is not NULL, their specs. */
int dp_nn_grouper_specs(dp_nn_tensor_spec *specs, const dp_nn_grouper_config *cfg);
/* Points m at its tensors in p (found by name) and sizes its workspace for
 * up to N rows. Errors: DP_STATUS_INVALID (missing tensor), NOMEM. */
dp_status dp_nn_grouper_init(dp_nn_grouper *m, const dp_nn_grouper_config *cfg,
                             const dp_nn_params *p, int N, dp_error *err);
void dp_nn_grouper_free(dp_nn_grouper *m);
/* logp_sum = sum_n log p(actions[n] | inp[n]); inp [N, F]; actions [N]
 * read or written per mode; noise_amp > 0 adds exploration noise drawn from
 * rng; entropy (may be NULL) gets the summed entropy. */
float dp_nn_grouper_forward(dp_nn_grouper *m, int *actions, float *entropy, const float *inp,
                            dp_nn_decode_mode mode, dp_rng *rng, float noise_amp, int N);
/* Accumulates parameter gradients (and dinp [N, F] if not NULL) of
 * dlogp * logp_sum + dentropy * entropy for the last forward. */
void dp_nn_grouper_backward(dp_nn_grouper *m, float *dinp, const int *actions, const float *inp,
                            float dlogp, float dentropy, int N);
/* The same, each row's log-probability weighted by dlogp + dlogp_rows[n]
 * (dlogp_rows [N] may be NULL): per-decision weights, as PPO's
 * per-decision ratios need. */
void dp_nn_grouper_backward_rows(dp_nn_grouper *m, float *dinp, const int *actions, const float *inp,
                                 const float *dlogp_rows, float dlogp, float dentropy, int N);

/* ---- seq2seq placer ----------------------------------------------------------- */

typedef enum dp_nn_attention_mode {
    /* context from the previous decoder state, fed to the cell with the
     * previous device's embedding (EAGLE, Fig. 4a) */
    DP_NN_ATTENTION_MODE_BEFORE = 0,
    /* context from the new decoder state, joined to the cell output before
     * the softmax layer (Hierarchical Planner, Fig. 4b) */
    DP_NN_ATTENTION_MODE_AFTER,
    DP_NN_ATTENTION_MODE_COUNT
} dp_nn_attention_mode;

typedef struct dp_nn_seq2seq_config {
    int in_dim;      /* F: features per sequence element                 */
    int hidden;      /* H: LSTM units (encoder: per direction)           */
    int devices;     /* D: actions per step                              */
    int attn_dim;    /* A: attention units                               */
    int emb_dim;     /* E: device embedding size                         */
    dp_nn_attention_mode mode;
    int ctx_to_output; /* BEFORE mode: also join the context to the output */
    float tanh_c;      /* C in C tanh(l / T); <= 0: plain logits           */
    float temperature; /* T                                               */
    /* 1: the B samples share one input sequence inp [T, F], so the encoder,
     * its attention keys and its state run once for all of them (Mars:
     * one encoding of a segment serves every sampled placement); 0: inp
     * [B, T, F], one encoder per sample. */
    int shared_input;
    /* >= 0: a constant added to the logit of the previous step's device
     * (not of the start symbol) before the softmax: a prior for placing
     * consecutive elements together (dplace's, in no paper; 0: none).
     * A constant: no parameter, the gradients' formulas are unchanged. */
    float stick;
    /* bit d set: the bonus applies when the previous device is d (devices
     * 64 and up: always); 0: every device */
    uint64_t stick_mask;
} dp_nn_seq2seq_config;

/* The state one segment hands to the next (Mars's segment-level placer).
 * Be = 1 with shared_input, else B. Any array may be NULL: zeros (prev: the
 * start symbol D). As a gradient, the same arrays hold d(loss)/d(state) and
 * prev is unused. */
typedef struct dp_nn_seq2seq_state {
    float *enc_h, *enc_c; /* [2, Be, H] final encoder state: forward direction, then backward */
    float *dec_h, *dec_c; /* [B, H] final decoder state                                        */
    int *prev;            /* [B] device of the last element                                    */
    float *load;          /* [B, D] the memory mask's device loads (dp_nn_memory_mask)         */
} dp_nn_seq2seq_state;

/* Memory-aware decoding (dplace's; in no paper): element t weighs
 * w[t] (its estimated bytes) and device d holds cap[d]; in each sample,
 * element t may not go to a device whose load (the weights of the
 * sample's elements placed on it so far) plus w[t] exceeds its capacity
 * (its logit becomes DP_NN_MASKED; when no device has room, none is). The
 * mask is a function of the sample's own earlier actions, so a
 * teacher-forced forward reproduces it and PPO's ratios stay exact; it is a
 * constant to the gradient. */
typedef struct dp_nn_memory_mask {
    const float *w;   /* [T] the elements' weights; NULL: no mask */
    const float *cap; /* [D] */
} dp_nn_memory_mask;
#define DP_NN_MASKED (-1e30f)
/* Masks row l [D] of an element weighing w for loads load [D] (see
 * dp_nn_memory_mask). */
void dp_nn_memory_mask_row(float *l, const float *load, const float *cap, float w, int D);

typedef struct dp_nn_seq2seq {
    dp_nn_seq2seq_config cfg;
    int in_x, out_x; /* decoder cell input and output-layer widths */
    int Be;          /* encoder batch: 1 with shared_input, else B */
    int use_p;       /* context enters the cell as att @ P (see nn_seq2seq.c) */
    /* values and gradients */
    float *enc, *wk, *wq, *v, *emb, *dec, *wo, *bo;
    float *denc_w, *dwk, *dwq, *dv, *demb, *ddec, *dwo, *dbo;
    /* workspace for batch B and length T, one allocation */
    int B, T;
    float *mem;
    int *imem;
    /* saved by forward */
    float *enc_acts, *encs, *keys, *enc_h0, *enc_c0, *ep, *P, *h, *c, *gates, *att, *qp, *ctx,
        *tact, *noise, *logp;
    int *prev; /* [T + 1, B] decoder inputs: the carried or start symbol, then the actions */
    double *u; /* [T, B] the uniforms a sampling forward draws up front */
    /* backward scratch; *_s: per-sample partial sums, added in sample order */
    float *enc_scratch, *dG, *dl, *dqps, *dkeys, *dencs, *dctx, *dP, *dep, *dh, *dc, *dh2, *datt,
        *dlog, *dlg, *dkeys_s, *dv_s, *dep_s;
    /* the samples are split into up to `parts` ranges decoded on their own
     * threads, each with its scratch of attention values [parts, T A + T] */
    int parts;
    float *pact;
    /* memory-aware decoding: set by the caller before a forward (w NULL: off) */
    dp_nn_memory_mask mask;
    float *load;     /* [B, D] the running loads of the forward in flight */
    /* the final state of the last forward (the next segment's start) */
    dp_nn_seq2seq_state last;
    float *h_last, *c_last; /* = last.dec_h, last.dec_c */
} dp_nn_seq2seq;

int dp_nn_seq2seq_specs(dp_nn_tensor_spec *specs, const dp_nn_seq2seq_config *cfg);
/* Binds to the tensors in p and sizes the workspace for batch B, length T. */
dp_status dp_nn_seq2seq_init(dp_nn_seq2seq *m, const dp_nn_seq2seq_config *cfg,
                             const dp_nn_params *p, int B, int T, dp_error *err);
void dp_nn_seq2seq_free(dp_nn_seq2seq *m);
/* One segment: encodes inp ([B, T, F], or [T, F] with shared_input) with the
 * bidirectional LSTM started from start->enc_h/enc_c and decodes one device
 * per element from start->dec_h/dec_c, the first cell fed the embedding of
 * start->prev: logp_sum [B] = sum_t log p(actions[b, t]); entropy [B] (may
 * be NULL) the summed entropies; actions [B, T] read or written per mode;
 * noise_amp > 0 adds logit noise from rng. start may be NULL (all zeros,
 * start symbol) and may point at m->last (continue from the last forward).
 * Writes the final state into m->last. */
void dp_nn_seq2seq_segment_forward(dp_nn_seq2seq *m, float *logp_sum, float *entropy, int *actions,
                                   const float *inp, const dp_nn_seq2seq_state *start,
                                   dp_nn_decode_mode mode, dp_rng *rng, float noise_amp);
/* Backward of the last segment forward: accumulates the parameter
 * gradients of L = sum_b dlogp[b] logp_sum[b] + sum_{b,t} dlogp_step[b, t]
 * log p(actions[b, t]) + sum_b dentropy[b] entropy[b] + <dlast, m->last>
 * (dlogp_step [B, T], dentropy, dlast and any of its arrays may be NULL:
 * zero), and adds dL/d(input) to dinp (shape of inp; NULL: not needed) and
 * dL/d(start state) to dstart's non-NULL arrays (NULL: the start is a
 * constant, truncated backpropagation). dstart must not overlap dlast. */
void dp_nn_seq2seq_segment_backward(dp_nn_seq2seq *m, float *dinp, const dp_nn_seq2seq_state *dstart,
                                    const float *dlogp, const float *dlogp_step,
                                    const float *dentropy, const dp_nn_seq2seq_state *dlast,
                                    const int *actions, const float *inp);
/* The whole sequence as one segment with the decoder started from dec_h0,
 * dec_c0 [B, H] (NULL: zeros; pass m->h_last and m->c_last to continue from
 * the previous forward) and the encoder from zeros. */
void dp_nn_seq2seq_forward(dp_nn_seq2seq *m, float *logp_sum, float *entropy, int *actions,
                           const float *inp, const float *dec_h0, const float *dec_c0,
                           dp_nn_decode_mode mode, dp_rng *rng, float noise_amp);
/* Accumulates the gradients of sum_b dlogp[b] logp_sum[b] + dentropy[b]
 * entropy[b] (dentropy may be NULL) for the last forward, and dinp if not
 * NULL. The decoder's start state is treated as a constant. */
void dp_nn_seq2seq_backward(dp_nn_seq2seq *m, float *dinp, const float *dlogp,
                            const float *dentropy, const int *actions, const float *inp);

/* ---- GCN encoder with Deep Graph Infomax --------------------------------------- */

typedef struct dp_nn_gcn_config {
    int in_dim;  /* features per node             */
    int hidden;  /* units per layer (256 in Mars) */
    int layers;  /* GCN layers, each + PReLU (3)  */
} dp_nn_gcn_config;

#define DP_NN_GCN_MAX_LAYERS 8

typedef struct dp_nn_gcn {
    dp_nn_gcn_config cfg;
    float *w[DP_NN_GCN_MAX_LAYERS], *b[DP_NN_GCN_MAX_LAYERS], *a[DP_NN_GCN_MAX_LAYERS];
    float *dw[DP_NN_GCN_MAX_LAYERS], *db[DP_NN_GCN_MAX_LAYERS], *da[DP_NN_GCN_MAX_LAYERS];
    float *disc, *ddisc;     /* bilinear discriminator weight [H, H] */
    float *disc_b, *ddisc_b; /* and bias [1]                         */
    /* workspace for N nodes, two passes (clean, corrupted), one allocation */
    int N;
    float *mem;
    int *perm;
    float *xc;                              /* corrupted features [N, F]  */
    float *xw[2], *pre[2], *out[2];         /* per pass [layers, N, H]    */
    float *summary, *ws, *scores, *labels;  /* [H], [H], [2N], [2N]       */
    float *dscores, *dsum, *dcur, *dnext, *scratch, *dH, *hscratch;
} dp_nn_gcn;

int dp_nn_gcn_specs(dp_nn_tensor_spec *specs, const dp_nn_gcn_config *cfg);
dp_status dp_nn_gcn_init(dp_nn_gcn *m, const dp_nn_gcn_config *cfg, const dp_nn_params *p, int N,
                         dp_error *err);
void dp_nn_gcn_free(dp_nn_gcn *m);
/* Node embeddings: returns the [N, H] output of the last layer for inp
 * [N, F] (pass 0 of the workspace; valid until the next call). */
const float *dp_nn_gcn_encode(dp_nn_gcn *m, const dp_nn_graph *g, const float *inp);
/* Accumulates the gradients of sum dout [N, H] * encode output for the last
 * dp_nn_gcn_encode (pass 0), and dinp [N, F] if not NULL. */
void dp_nn_gcn_encode_backward(dp_nn_gcn *m, float *dinp, const dp_nn_graph *g, const float *inp,
                               const float *dout);
/* Deep Graph Infomax loss: encodes inp and a node permutation of it drawn
 * from rng (perm given: used instead when not NULL), summary s = sigmoid(mean
 * of clean embeddings), scores h^T W s for both, returns the mean binary
 * cross-entropy (clean label 1, corrupted 0). */
float dp_nn_gcn_dgi_forward(dp_nn_gcn *m, const dp_nn_graph *g, const float *inp, const int *perm,
                            dp_rng *rng);
/* Accumulates dloss * gradients of the last DGI loss. */
void dp_nn_gcn_dgi_backward(dp_nn_gcn *m, const dp_nn_graph *g, const float *inp, float dloss);

#ifdef __cplusplus
}
#endif
#endif
