/* Mars's policy (the Mars paper) in the nn engine: a segment-level placer that
 * places every element of a sequence (the graph's operations), SEG at a
 * time, each segment starting from the previous one's final state: Mars's
 * segment-level seq2seq, or the Transformer-XL placer it compares with
 * (nn_txl.h; its memory of the previous segment is a constant); and the
 * composed policy, the GCN encoder of the graph's operations feeding that
 * placer.
 *
 * The segment placer holds one segment workspace per saved segment; it runs
 * the segments one after the other with the B samples batched, and
 * backward runs them in reverse, the gradient flowing through the carried
 * state (as autograd does over the whole sequence in the PyTorch
 * reference), recomputing the forward of segments whose workspace was
 * reused when fewer workspaces than segments were asked for (max_saved).
 * One segment as long as the sequence is the plain seq2seq placer.
 * Parameters live in the caller's dp_nn_params (the *_specs functions list
 * them), so one Adam, checkpoints and DGI pre-training (dp_nn_gcn_dgi_forward
 * on the composed policy's gcn) cover them. */
#ifndef DPLACE_NN_MARS_H
#define DPLACE_NN_MARS_H

#include "dplace/nn_models.h"
#include "dplace/nn_txl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dp_nn_seg_kind {
    DP_NN_SEG_KIND_SEQ2SEQ = 0, /* Mars's segment-level seq2seq              */
    DP_NN_SEG_KIND_TXL,         /* the Transformer-XL placer (GDP, Table 1)   */
    DP_NN_SEG_KIND_COUNT
} dp_nn_seg_kind;

/* ---- the segment placer ------------------------------------------------------ */

typedef struct dp_nn_seg_config {
    dp_nn_seg_kind kind;
    dp_nn_seq2seq_config seq2seq; /* SEQ2SEQ: shared_input implied              */
    dp_nn_txl_config txl;         /* TXL                                        */
    int seg;                      /* elements per segment (Mars: 128)           */
} dp_nn_seg_config;

typedef struct dp_nn_seg {
    dp_nn_seg_config cfg;
    int N, B, F, nseg, slots, tail_T;
    dp_nn_seq2seq *segs;  /* SEQ2SEQ: [slots] workspaces of SEG elements   */
    dp_nn_seq2seq tail;   /* and the last segment's when shorter than SEG  */
    dp_nn_txl *txls;      /* TXL: the same */
    dp_nn_txl ttail;
    float *tmem;          /* TXL: [nseg] saved start memories (for recomputation) */
    int *tmlen;           /* [nseg] their lengths */
    int *held;            /* [slots] the segment each workspace holds, -1: none */
    const float *x;       /* [N, F] the input of the last forward (caller-owned) */
    float noise;          /* the logit noise of the last forward               */
    float *mem;           /* one allocation for the arrays below */
    float *starts;        /* [nseg] saved start states (for recomputation) */
    float *lp, *ent, *sstep; /* [B], [B], [B, SEG] per-segment scratch */
    float *dstate;           /* two state gradients */
    int *imem;
    int *sact;               /* [B, SEG] per-segment actions */
    int *sprev;              /* [nseg, B] saved previous devices */
    /* memory-aware decoding (SEQ2SEQ): set by the caller before a forward,
     * w [N] over the whole sequence (NULL: off); the loads at each
     * segment's start are saved for recomputation */
    dp_nn_memory_mask mask;
    float *sload;            /* [nseg, B, D] */
} dp_nn_seg;

/* Number of tensors and, when specs is not NULL, their specs (placer.* or txl.*). */
int dp_nn_seg_specs(dp_nn_tensor_spec *specs, const dp_nn_seg_config *cfg);
/* Binds m to the tensors in p and allocates workspaces for B samples of
 * sequences of N elements: min(max_saved, segments) segment workspaces
 * (max_saved <= 0: one per segment, nothing recomputed). Errors:
 * DP_STATUS_INVALID (sizes, kind, missing tensors), NOMEM. */
dp_status dp_nn_seg_init(dp_nn_seg *m, const dp_nn_seg_config *cfg, const dp_nn_params *p, int N, int B,
                         int max_saved, dp_error *err);
void dp_nn_seg_free(dp_nn_seg *m);
/* Places the N elements of x [N, F] (shared by the B samples; kept by
 * pointer until the backward) for B samples: logp_sum [B] = sum over the
 * elements of log p(actions[b, n]), logp_step [B, N] (may be NULL) each
 * decision's log-probability, entropy [B] (may be NULL) the summed
 * entropies, actions [B, N] read (TEACHER) or written (SAMPLE, GREEDY);
 * noise_amp > 0 adds logit noise from rng (SEQ2SEQ only, and only when
 * every segment keeps its workspace: a backward cannot recompute it). */
void dp_nn_seg_forward(dp_nn_seg *m, float *logp_sum, float *logp_step, float *entropy, int *actions,
                       const float *x, dp_nn_decode_mode mode, dp_rng *rng, float noise_amp);
/* Accumulates the parameter gradients of sum_b dlogp[b] logp_sum[b] +
 * sum_{b,n} dlogp_step[b, n] log p(actions[b, n]) + sum_b dentropy[b]
 * entropy[b] for the last forward (any weight array may be NULL: zero;
 * actions as in that forward), through the carried seq2seq state (the
 * Transformer-XL's memory a constant), and adds dL/dx to dx [N, F] when
 * not NULL. */
void dp_nn_seg_backward(dp_nn_seg *m, float *dx, const float *dlogp, const float *dlogp_step,
                        const float *dentropy, const int *actions);

/* ---- Mars's policy: GCN encoder + segment placer ------------------------------- */

typedef struct dp_nn_mars_config {
    dp_nn_gcn_config gcn;        /* node features -> embeddings (Mars: 3 layers of 256, PReLU) */
    dp_nn_seq2seq_config placer; /* SEQ2SEQ: in_dim must be gcn.hidden; shared_input implied   */
    int seg;                     /* operations per segment (Mars: 128)                          */
    int freeze_encoder;          /* 1: backward stops at the embeddings (fixed representations) */
    dp_nn_seg_kind placer_kind;
    dp_nn_txl_config txl;        /* TXL: in_dim must be gcn.hidden                              */
} dp_nn_mars_config;

typedef struct dp_nn_mars {
    dp_nn_mars_config cfg;
    const dp_nn_graph *g; /* bound at init, caller-owned */
    const float *x;       /* [N, F] node features, caller-owned */
    int N, B;
    dp_nn_gcn gcn;
    dp_nn_seg seg;
    const float *emb;     /* [N, H_gcn] embeddings of the last forward */
    float *demb;          /* [N, H_gcn] */
} dp_nn_mars;

/* Number of tensors and, when specs is not NULL, their specs (GCN and DGI
 * discriminator, then the placer's: placer.* or txl.*). */
int dp_nn_mars_specs(dp_nn_tensor_spec *specs, const dp_nn_mars_config *cfg);
/* Binds m to the tensors in p, to the graph g of N nodes and its features x
 * [N, F] (both kept by pointer) and allocates workspaces for B samples:
 * min(max_saved, segments) segment workspaces (max_saved <= 0: one per
 * segment, nothing recomputed). Errors: DP_STATUS_INVALID (sizes, missing
 * tensors, the placer's in_dim not gcn.hidden), NOMEM. */
dp_status dp_nn_mars_init(dp_nn_mars *m, const dp_nn_mars_config *cfg, const dp_nn_params *p,
                          const dp_nn_graph *g, const float *x, int B, int max_saved,
                          dp_error *err);
void dp_nn_mars_free(dp_nn_mars *m);
/* Places every operation for B samples: logp_sum [B] = sum over all
 * operations of log p(actions[b, n]), entropy [B] (may be NULL) the summed
 * entropies, actions [B, N] read (TEACHER) or written (SAMPLE, GREEDY). */
void dp_nn_mars_forward(dp_nn_mars *m, float *logp_sum, float *entropy, int *actions,
                        dp_nn_decode_mode mode, dp_rng *rng);
/* The same, and logp_step [B, N] (may be NULL) each decision's
 * log p(actions[b, n]) (PPO's per-decision ratios). */
void dp_nn_mars_forward_steps(dp_nn_mars *m, float *logp_sum, float *logp_step, float *entropy, int *actions,
                              dp_nn_decode_mode mode, dp_rng *rng);
/* Accumulates the parameter gradients of sum_b dlogp[b] logp_sum[b] +
 * sum_{b,n} dlogp_step[b, n] log p(actions[b, n]) + sum_b dentropy[b]
 * entropy[b] for the last forward (dlogp_step, dentropy may be NULL; actions
 * as in that forward), through the placer (the seq2seq's carried state
 * included; the Transformer-XL's memory a constant) and, unless
 * freeze_encoder, the GCN. m->emb must still be the forward's (no other
 * dp_nn_gcn_encode on m->gcn in between). */
void dp_nn_mars_backward(dp_nn_mars *m, const float *dlogp, const float *dlogp_step,
                         const float *dentropy, const int *actions);

#ifdef __cplusplus
}
#endif
#endif
