/* Mars's policy (seed 002) in the nn engine: the GCN encoder of the graph's
 * operations feeding a segment-level placer that places every operation,
 * SEG at a time, each segment starting from the previous one's final state:
 * Mars's segment-level seq2seq, or the Transformer-XL placer it compares
 * with (nn_txl.h; its memory of the previous segment is a constant).
 *
 * The policy binds one graph and its node features and holds one segment
 * workspace per saved segment; it runs the GCN once per forward, the
 * segments one after the other with the B samples batched, and backward
 * runs the segments in reverse, the gradient flowing through the carried
 * state (as autograd does over the whole sequence in the PyTorch reference),
 * recomputing the forward of segments whose workspace was reused when fewer
 * workspaces than segments were asked for (max_saved). Parameters live in
 * the caller's dp_nn_params (dp_nn_mars_specs lists them: the GCN's, the
 * DGI discriminator's, the placer's), so DGI pre-training
 * (dp_nn_gcn_dgi_forward on m->gcn), checkpoints and Adam cover them. */
#ifndef DPLACE_NN_MARS_H
#define DPLACE_NN_MARS_H

#include "dplace/nn_models.h"
#include "dplace/nn_txl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dp_nn_mars_placer_kind {
    DP_NN_MARS_PLACER_KIND_SEQ2SEQ = 0, /* Mars's segment-level seq2seq              */
    DP_NN_MARS_PLACER_KIND_TXL,         /* the Transformer-XL placer (GDP, Table 1)   */
    DP_NN_MARS_PLACER_KIND_COUNT
} dp_nn_mars_placer_kind;

typedef struct dp_nn_mars_config {
    dp_nn_gcn_config gcn;        /* node features -> embeddings (Mars: 3 layers of 256, PReLU) */
    dp_nn_seq2seq_config placer; /* SEQ2SEQ: in_dim must be gcn.hidden; shared_input implied   */
    int seg;                     /* operations per segment (Mars: 128)                          */
    int freeze_encoder;          /* 1: backward stops at the embeddings (fixed representations) */
    dp_nn_mars_placer_kind placer_kind;
    dp_nn_txl_config txl;        /* TXL: in_dim must be gcn.hidden                              */
} dp_nn_mars_config;

typedef struct dp_nn_mars {
    dp_nn_mars_config cfg;
    const dp_nn_graph *g; /* bound at init, caller-owned */
    const float *x;       /* [N, F] node features, caller-owned */
    int N, B, nseg, slots, tail_T;
    dp_nn_gcn gcn;
    dp_nn_seq2seq *segs;  /* SEQ2SEQ: [slots] workspaces of SEG operations */
    dp_nn_seq2seq tail;   /* and the last segment's when shorter than SEG  */
    dp_nn_txl *txls;      /* TXL: the same */
    dp_nn_txl ttail;
    float *tmem;          /* TXL: [nseg] saved start memories (for recomputation) */
    int *tmlen;           /* [nseg] their lengths */
    int *held;            /* [slots] the segment each workspace holds, -1: none */
    const float *emb;     /* [N, H_gcn] embeddings of the last forward */
    float *mem;           /* one allocation for the arrays below */
    float *demb;          /* [N, H_gcn] */
    float *starts;        /* [nseg] saved start states (for recomputation) */
    float *lp, *ent, *sstep; /* [B], [B], [B, SEG] per-segment scratch */
    float *dstate;           /* two state gradients */
    int *imem;
    int *sact;               /* [B, SEG] per-segment actions */
    int *sprev;              /* [nseg, B] saved previous devices */
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
