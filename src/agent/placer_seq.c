/* The sequence placers: the seq2seq family over the encoder's sequence, all
 * run by the nn engine's segment placer (nn_mars.h):
 *
 *   seq2seq-after   bi-LSTM encoder, LSTM decoder, attention after the
 *                   decoder cell (Hierarchical Planner, ColocRL)
 *   seq2seq-before  attention before the cell (EAGLE; Mars's Table 1 plain
 *                   seq2seq over every op)
 *   seq2seq-seg     Mars's segment-level seq2seq: seg_len elements at a
 *                   time, each segment started from the previous one's state
 *   trfxl           the Transformer-XL placer (Mars's Table 1, GDP)
 *
 * The first two are one segment as long as the sequence. */
#include <assert.h>
#include <stdlib.h>

#include "agent/agent_internal.h"

/* What a whole-sequence seq2seq may keep per batch, in bytes: one [T, B, T]
 * block of attention weights (and as much again for its gradient). */
#define WHOLE_SEQUENCE_LIMIT ((double)(1u << 30))

typedef struct placer_seq {
    agent_placer base;
    dp_nn_seg seg;
    int have_seg;
} placer_seq;

static int is_segmented(const dp_agent_config *c) {
    return c->placer.kind == DP_AGENT_PLACER_KIND_SEQ2SEQ_SEG || c->placer.kind == DP_AGENT_PLACER_KIND_TRFXL;
}

static dp_nn_seg_config seq_config(const agent_placer *p) {
    const dp_agent_config *c = p->ctx.cfg;
    dp_nn_seg_config sc;
    sc.kind = c->placer.kind == DP_AGENT_PLACER_KIND_TRFXL ? DP_NN_SEG_KIND_TXL : DP_NN_SEG_KIND_SEQ2SEQ;
    sc.seq2seq = (dp_nn_seq2seq_config){
        p->F,
        c->placer.hidden,
        p->D,
        c->placer.attn_dim,
        c->placer.dev_emb,
        c->placer.kind == DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER ? DP_NN_ATTENTION_MODE_AFTER : DP_NN_ATTENTION_MODE_BEFORE,
        /* EAGLE joins the context to the output too; Mars's reference
         * computes the logits from the decoder state alone */
        c->placer.kind == DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE && c->encoder.kind == DP_AGENT_ENCODER_NONE,
        c->placer.tanh_c,
        c->placer.temperature,
        1 /* the B samples place one sequence: one encoder for all */,
        c->placer.stick,
        p->stick_mask};
    sc.txl = (dp_nn_txl_config){p->F,         c->placer.hidden,     c->placer.txl_heads, c->placer.txl_inner,
                                c->placer.txl_layers, c->placer.txl_mem, p->D,          c->placer.txl_causal};
    sc.seg = is_segmented(c) ? c->placer.seg_len : p->T;
    return sc;
}

static int seq_specs(const agent_placer *p, dp_nn_tensor_spec *specs) {
    dp_nn_seg_config sc = seq_config(p);
    return dp_nn_seg_specs(specs, &sc);
}

static dp_status seq_bind(agent_placer *base, dp_error *err) {
    placer_seq *p = (placer_seq *)base;
    const dp_agent_config *c = base->ctx.cfg;
    int32_t T = base->T, B = base->B;
    if (!is_segmented(c)) {
        double bytes = 4.0 * B * (double)T * T;
        if (bytes > WHOLE_SEQUENCE_LIMIT)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: the whole-sequence %s placer over the %d elements of %s keeps %d x %d "
                                "attention weights per sample (%.1f GiB for a batch of %d); use placer=seq2seq-seg "
                                "(Mars's segments), fewer groups or a smaller graph",
                                dp_agent_placer_kind_name(c->placer.kind), (int)T, base->ctx.g->name, (int)T, (int)T,
                                bytes / (1u << 30), (int)B);
    }
    dp_nn_seg_config sc = seq_config(base);
    dp_status st = dp_nn_seg_init(&p->seg, &sc, base->ctx.params, T, B, c->placer.seg_keep, err);
    p->have_seg = st == DP_STATUS_OK;
    return st;
}

static void seq_free(agent_placer *base) {
    placer_seq *p = (placer_seq *)base;
    if (p->have_seg) dp_nn_seg_free(&p->seg);
    free(p);
}

static void seq_forward(agent_placer *base, agent_encoder *e, int32_t *devs, float *logp, float *logp_step,
                        float *entropy, dp_nn_decode_mode mode, float noise, dp_rng *rng) {
    placer_seq *p = (placer_seq *)base;
    p->seg.mask = (dp_nn_memory_mask){base->mask_w, base->mask_cap};
    dp_nn_seg_forward(&p->seg, logp, logp_step, entropy, devs, e->x, mode, rng, noise);
}

static void seq_backward(agent_placer *base, float *dx, const int32_t *devs, const float *dlogp,
                         const float *dlogp_step, const float *dentropy) {
    placer_seq *p = (placer_seq *)base;
    dp_nn_seg_backward(&p->seg, dx, dlogp, dlogp_step, dentropy, devs);
}

static const agent_placer_ops seq_ops = {"seq", seq_specs, seq_bind, seq_free, seq_forward, seq_backward, NULL};

agent_placer *agent_placer_seq_new(void) {
    placer_seq *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->base.ops = &seq_ops;
    return &p->base;
}
