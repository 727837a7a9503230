/* The op-level path of the agent (encoder=gcn; Mars, seed 002): instead of
 * a grouper and group embeddings, every op gets a row of node features
 * (one-hot type, input and output shapes), a GCN encoder over the op graph
 * turns them into representations, and a sequence placer places every op
 * in topological order: the segment-level seq2seq (seg_len ops at a time,
 * each segment started from the previous one's final state), or one
 * segment over the whole sequence (Table 1's plain seq2seq). The composed
 * policy is the nn engine's (dp_nn_mars): it runs the encoder once per
 * forward, the segments one after the other with a batch of samples, and
 * backward runs the segments in reverse, the gradient flowing through the
 * carried state, recomputing the forward of segments whose workspace was
 * reused (only seg_keep segment workspaces are kept).
 *
 * The policy runs batches of mars_B samples: a PPO minibatch (samples /
 * ppo_minibatches) or, for REINFORCE, all samples. Sampling draws the K
 * samples of an update in K / mars_B batches; each PPO minibatch runs alone
 * (forward with its own samples, ratio, backward), as in the PyTorch
 * reference of Mars's round (../shared/anchors/torch_mars_policy.py).
 *
 * Pre-training (Section 3.2): Deep Graph Infomax on the encoder for
 * pretrain_iters iterations, keeping the parameters of the lowest loss; its
 * Adam moments live in the encoder's part of the parameter store and are
 * reset with the whole optimiser when it ends. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "common/util.h"

static inline size_t alloc_count(int64_t n) { return n > 0 ? (size_t)n : 1; }
#define ALLOC(p, n) ((p) = calloc(alloc_count(n), sizeof *(p)))

/* The largest attention state a whole-sequence placer may need, in bytes:
 * one [T, B, T] block of weights (and as much again for its gradient). */
#define WHOLE_SEQUENCE_LIMIT ((double)(1u << 30))

static dp_nn_mars_config mars_config(const dp_agent *a) {
    const dp_agent_config *c = &a->cfg;
    dp_nn_mars_config mc;
    memset(&mc, 0, sizeof mc);
    mc.gcn = (dp_nn_gcn_config){a->OF, c->gcn_hidden, c->gcn_layers};
    mc.placer = (dp_nn_seq2seq_config){c->gcn_hidden,
                                       c->hidden,
                                       a->D,
                                       c->attn_dim,
                                       c->dev_emb,
                                       c->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER ? DP_NN_ATTENTION_MODE_AFTER
                                                                                       : DP_NN_ATTENTION_MODE_BEFORE,
                                       0, /* logits from the decoder state alone (the reference) */
                                       c->tanh_c,
                                       c->temperature,
                                       1,
                                       c->stick,
                                       agent_stick_mask(a)};
    if (c->placer == DP_AGENT_PLACER_KIND_TRFXL) {
        mc.placer_kind = DP_NN_MARS_PLACER_KIND_TXL;
        mc.txl = (dp_nn_txl_config){c->gcn_hidden, c->hidden,   c->txl_heads, c->txl_inner,
                                    c->txl_layers, c->txl_mem, a->D,          c->txl_causal};
    }
    /* seq2seq-seg and trfxl: segments; the plain seq2seq placers: one segment */
    mc.seg = c->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_SEG || c->placer == DP_AGENT_PLACER_KIND_TRFXL ? c->seg_len
                                                                                                         : a->N;
    mc.freeze_encoder = !c->encoder_train;
    return mc;
}

int agent_mars_specs(const dp_agent *a, dp_nn_tensor_spec *specs) {
    dp_nn_mars_config mc = mars_config(a);
    return dp_nn_mars_specs(specs, &mc);
}

int agent_mars_encoder_tensors(const dp_agent *a) {
    dp_nn_mars_config mc = mars_config(a);
    return dp_nn_gcn_specs(NULL, &mc.gcn);
}

int32_t agent_mars_batch(const dp_agent_config *c) {
    return c->algo == DP_AGENT_ALGO_REINFORCE ? c->samples : c->samples / c->ppo_minibatches;
}

dp_status agent_mars_init(dp_agent *a, dp_error *err) {
    const dp_agent_config *c = &a->cfg;
    const dp_graph *g = a->g;
    int32_t N = a->N, B = a->mars_B = agent_mars_batch(c);
    a->mars_steps = c->algo != DP_AGENT_ALGO_REINFORCE && c->ppo_ratio == DP_AGENT_PPO_RATIO_DECISION;
    dp_nn_mars_config mc = mars_config(a);
    if (mc.seg >= N && (c->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE || c->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER)) {
        double bytes = 4.0 * B * (double)N * N;
        if (bytes > WHOLE_SEQUENCE_LIMIT)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: the whole-sequence %s placer over the %d ops of %s keeps %d x %d attention "
                                "weights per sample (%.1f GiB for a batch of %d); use placer=seq2seq-seg (Mars's "
                                "segments) or a smaller graph",
                                dp_agent_placer_kind_name(c->placer), (int)N, g->name, (int)N, (int)N,
                                bytes / (1u << 30), (int)B);
    }
    /* the sequence: topological order; an op's group is its position */
    if (!ALLOC(a->seq, N) || !ALLOC(a->opx, (int64_t)N * a->OF) || !ALLOC(a->mdevs, (int64_t)B * N) ||
        !ALLOC(a->mlogp, B) || !ALLOC(a->ment, B) || !ALLOC(a->mdlogp, B) || !ALLOC(a->mdent, B) ||
        (a->mars_steps && (!ALLOC(a->mstep, (int64_t)B * N) || !ALLOC(a->mdstep, (int64_t)B * N))))
        goto nomem;
    if (c->op_order == DP_AGENT_OP_ORDER_DFS) {
        dp_status st = dp_graph_topo_depth_first(g, a->seq, err);
        if (st) return st;
    } else {
        memcpy(a->seq, g->topo, sizeof(int32_t) * (size_t)N);
    }
    for (int32_t j = 0; j < N; j++) a->group[a->seq[j]] = j;
    agent_op_features(&a->feat, g, c, a->seq, a->opx);
    int64_t E = a->feat.n_edges;
    int *src, *dst;
    if (!ALLOC(src, E) || !ALLOC(dst, E)) {
        free(src);
        goto nomem;
    }
    for (int64_t e = 0; e < E; e++) src[e] = a->group[a->feat.src[e]], dst[e] = a->group[a->feat.dst[e]];
    dp_status st = dp_nn_graph_init(&a->opgraph, N, src, dst, E, err);
    free(src), free(dst);
    if (st) return st;
    if ((st = dp_nn_mars_init(&a->mars, &mc, &a->params, &a->opgraph, a->opx, B, c->seg_keep, err))) return st;
    a->have_mars = 1;
    /* the encoder's tensors: the GCN layers and the DGI discriminator, first
     * in the policy's list */
    int ne = dp_nn_gcn_specs(NULL, &mc.gcn);
    a->i_enc = dp_nn_params_find(&a->params, "gcn0.weight");
    assert(a->i_enc >= 0);
    a->n_enc = ne;
    size_t lo = a->params.offset[a->i_enc], hi = a->params.offset[a->i_enc + ne - 1] + a->params.size[a->i_enc + ne - 1];
    a->enc_floats = hi - lo;
    if (c->pretrain_iters > 0 && !ALLOC(a->pretrain_keep, (int64_t)a->enc_floats)) goto nomem;
    a->st.pretrain_iters = c->pretrain_iters;
    a->st.pretrain_loss = a->st.pretrain_best = NAN;
    return DP_STATUS_OK;
nomem:
    return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the op-level policy of %s (%d ops)", g->name,
                        (int)N);
}

void agent_mars_free(dp_agent *a) {
    if (a->have_mars) dp_nn_mars_free(&a->mars);
    dp_nn_graph_free(&a->opgraph);
    free(a->seq), free(a->opx), free(a->mdevs), free(a->mlogp), free(a->ment), free(a->mdlogp), free(a->mdent);
    free(a->mstep), free(a->mdstep);
    free(a->pretrain_keep);
}

/* ---- pre-training -------------------------------------------------------------- */

/* The encoder's part of the parameter store as a store of its own (Adam
 * over it alone, with the pre-training's own step count). */
static dp_nn_params encoder_view(dp_agent *a) {
    dp_nn_params v = a->params;
    size_t lo = a->params.offset[a->i_enc];
    v.data += lo, v.grad += lo, v.m += lo, v.v += lo;
    v.count = a->enc_floats;
    v.step = a->pretrain_step;
    return v;
}

/* Ends the pre-training: the parameters of the lowest loss back in place,
 * and the optimiser starts afresh for training. */
static void pretrain_finish(dp_agent *a) {
    size_t lo = a->params.offset[a->i_enc];
    if (a->pretrain_have_keep) memcpy(a->params.data + lo, a->pretrain_keep, sizeof(float) * a->enc_floats);
    memset(a->params.m, 0, sizeof(float) * a->params.count);
    memset(a->params.v, 0, sizeof(float) * a->params.count);
    memset(a->params.grad, 0, sizeof(float) * a->params.count);
    a->params.step = 0;
}

dp_status dp_agent_pretrain(dp_agent *a, int64_t max_iters, dp_error *err) {
    (void)err;
    if (!a->op_level) return DP_STATUS_OK;
    dp_agent_state *s = &a->st;
    int64_t left = s->pretrain_iters - s->pretrain_done;
    if (left <= 0) return DP_STATUS_OK;
    if (max_iters >= 0 && max_iters < left) left = max_iters;
    double t0 = dp_now_s();
    size_t lo = a->params.offset[a->i_enc];
    for (int64_t it = 0; it < left; it++) {
        memset(a->params.grad + lo, 0, sizeof(float) * a->enc_floats);
        float loss = dp_nn_gcn_dgi_forward(&a->mars.gcn, &a->opgraph, a->opx, NULL, &a->rng);
        s->pretrain_loss = loss;
        if (!a->pretrain_have_keep || loss < s->pretrain_best) { /* the parameters this loss belongs to */
            s->pretrain_best = loss;
            memcpy(a->pretrain_keep, a->params.data + lo, sizeof(float) * a->enc_floats);
            a->pretrain_have_keep = 1;
        }
        dp_nn_gcn_dgi_backward(&a->mars.gcn, &a->opgraph, a->opx, 1.0f);
        dp_nn_params view = encoder_view(a);
        dp_nn_adam_update(&view, &a->adam, a->cfg.pretrain_lr);
        a->pretrain_step = view.step;
        s->pretrain_done++;
    }
    if (s->pretrain_done == s->pretrain_iters) pretrain_finish(a);
    s->pretrain_s += dp_now_s() - t0;
    return DP_STATUS_OK;
}

float agent_mars_dgi_loss(dp_agent *a) {
    dp_rng keep = a->rng;
    dp_rng fixed;
    dp_rng_seed(&fixed, 0x6d617273ULL); /* the same corruption each time: comparable losses */
    float loss = dp_nn_gcn_dgi_forward(&a->mars.gcn, &a->opgraph, a->opx, NULL, &fixed);
    a->rng = keep;
    return loss;
}

/* ---- sampling and training ------------------------------------------------------ */

int agent_mars_sample(dp_agent *a, dp_nn_decode_mode mode) {
    int32_t K = a->K, B = a->mars_B, N = a->N;
    assert(K % B == 0);
    float *ent = a->cfg.entropy > 0 ? a->ment : NULL;
    agent_progress(a, "sampling", 0, K);
    for (int32_t k0 = 0; k0 < K; k0 += B) {
        if (k0 > 0 && agent_cancel_requested(a)) return 1;
        /* per-decision log-probabilities for PPO's ratios (a->logp_step [K, N]) */
        dp_nn_mars_forward_steps(&a->mars, a->mlogp, a->mars_steps ? a->logp_step + (int64_t)k0 * N : NULL, ent,
                                 a->devs + (int64_t)k0 * N, mode, &a->rng);
        for (int32_t b = 0; b < B; b++) {
            a->logp[k0 + b] = a->mlogp[b];
            a->entropy[k0 + b] = ent ? ent[b] : 0.0f;
        }
        agent_progress(a, "sampling", k0 + B, K);
    }
    return 0;
}

/* The entropy term's weight per sample of a batch of n: the bonus on the
 * mean over samples of the summed (entropy-sum) or mean entropy per op. */
static float entropy_weight(const dp_agent *a, int32_t n) {
    return -a->cfg.entropy / (float)n / (a->cfg.entropy_sum ? 1.0f : (float)a->N);
}

void agent_mars_batch_forward(dp_agent *a) {
    dp_nn_mars_forward_steps(&a->mars, a->mlogp, a->mars_steps ? a->mstep : NULL, a->cfg.entropy > 0 ? a->ment : NULL,
                             a->mdevs, DP_NN_DECODE_MODE_TEACHER, NULL);
}

void agent_mars_batch_backward(dp_agent *a) {
    dp_nn_mars_backward(&a->mars, a->mdlogp, a->mdsteps_on ? a->mdstep : NULL, a->cfg.entropy > 0 ? a->mdent : NULL,
                        a->mdevs);
}

void agent_mars_train_reinforce(dp_agent *a, const double *adv) {
    int32_t K = a->K, N = a->N;
    assert(a->mars_B == K);
    /* the policy's saved state is the sampling forward's (one batch of K) */
    memcpy(a->mdevs, a->devs, sizeof(int32_t) * (size_t)K * N);
    for (int32_t k = 0; k < K; k++) {
        a->mdlogp[k] = (float)(-adv[k] / K);
        a->mdent[k] = entropy_weight(a, K);
    }
    dp_nn_params_zero_grad(&a->params);
    agent_mars_batch_backward(a);
    agent_optimizer_step(a);
}

int agent_mars_train_ppo(dp_agent *a, const double *adv) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, M = c->ppo_minibatches, B = a->mars_B, N = a->N;
    double eps = c->ppo_clip;
    int per_decision = a->mars_steps;
    assert(B * M == K);
    /* what a cancelled training puts back (only with a cancel flag to heed) */
    size_t P = a->params.count;
    int64_t step0 = a->params.step;
    int can_undo = a->eo.cancel != NULL;
    if (can_undo && !a->undo) a->undo = malloc(sizeof(float) * 3 * P);
    if (!a->undo) can_undo = 0; /* out of memory: train without checking */
    if (can_undo) {
        memcpy(a->undo, a->params.data, sizeof(float) * P);
        memcpy(a->undo + P, a->params.m, sizeof(float) * P);
        memcpy(a->undo + 2 * P, a->params.v, sizeof(float) * P);
    }
    int64_t total = (int64_t)c->ppo_epochs * M, done = 0;
    agent_progress(a, "training", 0, total);
    memcpy(a->old_logp, a->logp, sizeof(float) * (size_t)K);
    if (per_decision) memcpy(a->old_step, a->logp_step, sizeof(float) * (size_t)K * N);
    a->mdsteps_on = per_decision;
    for (int32_t k = 0; k < K; k++) a->order[k] = k;
    for (int32_t e = 0; e < c->ppo_epochs; e++) {
        if (M > 1)
            for (int32_t k = K - 1; k > 0; k--) { /* Fisher-Yates */
                int32_t j = (int32_t)dp_rng_below(&a->rng, (uint64_t)k + 1), t = a->order[k];
                a->order[k] = a->order[j], a->order[j] = t;
            }
        for (int32_t mb = 0; mb < M; mb++) {
            const int32_t *rows = a->order + (int64_t)mb * B;
            for (int32_t r = 0; r < B; r++)
                memcpy(a->mdevs + (int64_t)r * N, a->devs + (int64_t)rows[r] * N, sizeof(int32_t) * (size_t)N);
            agent_mars_batch_forward(a);
            for (int32_t r = 0; r < B; r++) {
                int32_t k = rows[r];
                a->mdent[r] = entropy_weight(a, B);
                if (!per_decision) {
                    a->mdlogp[r] = (float)(-agent_ppo_grad(a->mlogp[r], a->old_logp[k], adv[k], eps) / B);
                    continue;
                }
                /* one ratio per op, clipped on its own */
                a->mdlogp[r] = 0.0f;
                const float *now = a->mstep + (int64_t)r * N, *old = a->old_step + (int64_t)k * N;
                float *d = a->mdstep + (int64_t)r * N;
                for (int32_t j = 0; j < N; j++) d[j] = (float)(-agent_ppo_grad(now[j], old[j], adv[k], eps) / B);
            }
            dp_nn_params_zero_grad(&a->params);
            agent_mars_batch_backward(a);
            agent_optimizer_step(a);
            agent_progress(a, "training", ++done, total);
            if (can_undo && done < total && agent_cancel_requested(a)) {
                memcpy(a->params.data, a->undo, sizeof(float) * P);
                memcpy(a->params.m, a->undo + P, sizeof(float) * P);
                memcpy(a->params.v, a->undo + 2 * P, sizeof(float) * P);
                a->params.step = step0;
                a->mdsteps_on = 0;
                return 1;
            }
        }
    }
    a->mdsteps_on = 0;
    return 0;
}

void agent_mars_cross_entropy(dp_agent *a) {
    const dp_agent_config *c = &a->cfg;
    int32_t E = a->n_elites, B = a->mars_B, N = a->N;
    for (int32_t step = 0; step < c->ce_steps; step++) {
        dp_nn_params_zero_grad(&a->params);
        for (int32_t e0 = 0; e0 < E; e0 += B) {
            /* a batch of elites; rows past the last elite repeat it with weight 0 */
            for (int32_t r = 0; r < B; r++) {
                int32_t e = e0 + r < E ? e0 + r : E - 1;
                memcpy(a->mdevs + (int64_t)r * N, a->elite_devs + (int64_t)e * N, sizeof(int32_t) * (size_t)N);
                a->mdlogp[r] = e0 + r < E ? -1.0f / (float)E : 0.0f;
                a->mdent[r] = 0.0f;
            }
            agent_mars_batch_forward(a);
            agent_mars_batch_backward(a);
        }
        agent_optimizer_step(a);
    }
}

float agent_mars_logp_of(dp_agent *a, const int32_t *devs) {
    for (int32_t r = 0; r < a->mars_B; r++)
        memcpy(a->mdevs + (int64_t)r * a->N, devs, sizeof(int32_t) * (size_t)a->N);
    agent_mars_batch_forward(a);
    return a->mlogp[0];
}

void agent_mars_greedy(dp_agent *a, int32_t *devs) {
    /* every row decodes the same argmax sequence */
    dp_nn_mars_forward(&a->mars, a->mlogp, NULL, a->mdevs, DP_NN_DECODE_MODE_GREEDY, NULL);
    memcpy(devs, a->mdevs, sizeof(int32_t) * (size_t)a->N);
}
