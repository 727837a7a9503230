/* The agent's parts, shared by the files of src/agent. Not public API.
 *
 * A learned agent is a policy, an encoder feeding a placer, around a shared
 * core (struct dp_agent, agent.c):
 *
 *   encoder  what is placed and what the placer reads about it: the groups
 *            of a grouper (learned or fixed) with their embeddings
 *            (encoder_groups.c), or every op through the GCN encoder
 *            (encoder_ops.c). It makes the sequence x [T, F] all samples of
 *            an update share; a learned grouper's choice of groups is a
 *            decision of its own with its log-probability.
 *   placer   a device for each of the T elements, B samples at a time: the
 *            seq2seq family (attention after or before the decoder, the
 *            segment-level seq2seq, the Transformer-XL; placer_seq.c) or
 *            the independent placers (GCN, Post's table;
 *            placer_independent.c).
 *   core     graph, devices, configuration, evaluator, parameters and
 *            optimiser, baseline, elites, counters; one sampling loop, one
 *            PPO loop, one REINFORCE step and one cross-entropy step serve
 *            every encoder and placer (agent.c), on the training
 *            primitives of agent_train.c.
 *
 * Files call downwards only: agent.c -> encoders, placers -> agent_train.c,
 * agent_features.c, agent_eval.c -> nn, sim. */
#ifndef DPLACE_AGENT_INTERNAL_H
#define DPLACE_AGENT_INTERNAL_H

#include "dplace/agent.h"
#include "dplace/nn.h"
#include "dplace/nn_mars.h"
#include "dplace/nn_models.h"
#include "dplace/run.h"
#include "dplace/units.h"

/* ---- features (agent_features.c) ------------------------------------------ */

/* Placement-independent facts about the ops, computed once. */
typedef struct agent_features {
    int32_t n_ops;
    int32_t F;          /* op row: type_dim + out_slots * out_dims + 2 * adj_per_dir */
    int32_t S;          /* shape part of a row: out_slots * out_dims                 */
    int32_t V;          /* type vocabulary (ids 0..V-1, 0 = the rarer types)        */
    int32_t *type_id;   /* [n_ops]                                                  */
    float *rest;        /* [n_ops, F - type_dim] shapes and adjacency (-1 padded)    */
    float *shape_sum;   /* [n_ops, S] shapes with padding as 0, for group sums       */
    int64_t n_edges;
    int32_t *src, *dst; /* [n_edges] op-level edges (producer -> consumer)          */
} agent_features;

dp_status agent_features_init(agent_features *f, const dp_graph *g, const dp_agent_config *cfg, dp_error *err);
void agent_features_free(agent_features *f);

/* Size of the fixed type vocabulary (type-ids=fixed), id 0 included. */
int32_t agent_fixed_type_count(void);

/* Mars's node features, one row per op in the order order[n_ops]: x [n_ops,
 * agent_op_feature_dim] = [one-hot type id (V) | input shapes | output
 * shapes], the first out_slots inputs and outputs with out_dims dimensions
 * each (S = out_slots * out_dims per side), each dimension divided by the
 * largest of the graph; missing cells 0. */
int32_t agent_op_feature_dim(const agent_features *f);
void agent_op_features(const agent_features *f, const dp_graph *g, const dp_agent_config *cfg, const int32_t *order,
                       float *x);

/* op rows x [n_ops, F] = [type embedding rows trows [n_ops, type_dim] | rest]. */
void agent_features_op_rows(const agent_features *f, const float *trows, int32_t type_dim, float *x);

/* Group embedding ge [G, GF] of the grouping group[n_ops]:
 * [type part | log(1 + summed shapes) | adjacency row | link part]; the
 * type part is log(1 + type counts) [G, V] (COUNTS) or the mean of the
 * group's type embedding rows [G, type_dim] (EMBEDDING; count [G] keeps the
 * sizes for the backward); the adjacency row [G] is left out for the GCN
 * placer (the adjacency is its graph) and the link part [G, link_hidden]
 * (link [G, link_hidden], the link RNN's states) is there when cfg->link.on.
 * widths[4] gets the four parts' widths (0 for a part left out).
 * scratch [G, type part + S + G]. */
int32_t agent_group_dim(const agent_features *f, const dp_agent_config *cfg, int32_t G, int32_t *widths);
void agent_group_embed(const agent_features *f, const dp_agent_config *cfg, const int32_t *group, int32_t G,
                       const float *trows, const float *link, float *ge, float *count, float *scratch);

/* Fixed groupings: the heuristic groupers, ColocRL's scope groups, none.
 * Fills group[n_ops] and *n_groups. */
dp_status agent_group_fixed(const dp_graph *g, const dp_devices *ds, const dp_agent_config *cfg, uint64_t seed,
                            int32_t *group, int32_t *n_groups, dp_error *err);

/* ---- evaluator (agent_eval.c) ---------------------------------------------- */

/* The evaluator is the public dp_agent_evaluator (agent.h), its results
 * the public dp_agent_eval_result. */
typedef struct dp_agent_evaluator agent_eval;
typedef dp_agent_eval_result agent_result;

agent_eval *agent_eval_init(const dp_graph *g, const dp_devices *ds, const dp_agent_eval_options *eo,
                            uint64_t seed, dp_error *err);
void agent_eval_free(agent_eval *e);
/* Evaluates K placements place[K, n_ops] into res[K] (cached[k] set when the
 * cache answered), in parallel over the evaluator's threads. *cancelled is
 * set when the cancel flag stopped a measurement (res then means nothing,
 * and nothing was cached). */
dp_status agent_eval_run(agent_eval *e, const int32_t *place, int32_t K, agent_result *res, int *cached,
                         int *cancelled, dp_error *err);
void agent_eval_cache_stats(const agent_eval *e, int64_t *lookups, int64_t *hits);
/* An evaluator's result r from a simulation's (the overflow of an
 * out-of-memory one: the worst device's peak / capacity). */
void agent_result_from_sim(const dp_sim_result *sr, agent_result *r);
const dp_sim *agent_eval_sim(const agent_eval *e);

/* ---- encoders (encoder_groups.c, encoder_ops.c) ------------------------------ */

typedef struct agent_encoder agent_encoder;

/* What builds an encoder: the agent's graph, devices, configuration and
 * features, its parameter store (for specs and binding) and seed. */
typedef struct agent_ctx {
    const dp_graph *g;
    const dp_devices *ds;
    const dp_agent_config *cfg;
    const agent_features *feat;
    dp_nn_params *params;
    uint64_t seed;
    const int32_t *runs; /* grouper=runs: the grouping [n_ops] into cfg->grouper.groups */
    const int32_t *prior; /* grouper-prior: the learned grouper's prior group per op, or NULL */
} agent_ctx;

typedef struct agent_encoder_ops {
    const char *name;
    /* Sizes the sequence (fills T, F, n_rows, choice) before any tensor
     * exists: fixed groupings are computed here. Errors: INVALID, NOMEM. */
    dp_status (*init)(agent_encoder *e, dp_error *err);
    /* Number of its tensors and, when specs is not NULL, their specs. */
    int (*specs)(const agent_encoder *e, dp_nn_tensor_spec *specs);
    /* Binds it to its tensors in ctx.params and allocates its workspaces. */
    dp_status (*bind)(agent_encoder *e, dp_error *err);
    void (*free)(agent_encoder *e);
    /* x [T, F] for the choice: SAMPLE and GREEDY choose anew (a learned
     * grouper; noise > 0 adds logit noise), TEACHER keeps the current one.
     * Returns log p(choice) (0 when it decides nothing) and sets entropy. */
    float (*forward)(agent_encoder *e, dp_nn_decode_mode mode, float noise, dp_rng *rng);
    /* Accumulates the gradients of <dx, x> (dx [T, F], NULL: nothing reaches
     * x) + dlogp log p(choice) + dentropy H(choice) + sum_i drows[i]
     * log p(choice_i) (drows [n_rows], may be NULL) for the last forward. */
    void (*backward)(agent_encoder *e, const float *dx, const float *drows, float dlogp, float dentropy);
    /* Each of its decisions' log-probability in the last forward, out [n_rows]. */
    void (*rows)(const agent_encoder *e, float *out);
    /* The graph over the elements for the current choice (GCN placer). */
    const dp_nn_graph *(*graph)(agent_encoder *e);
    /* Deep Graph Infomax: the loss of one iteration, its gradients
     * accumulated into the encoder's tensors (rng draws the corruption; a
     * NULL rng: a fixed one, nothing accumulated); NULL when it has none. */
    float (*dgi_step)(agent_encoder *e, dp_rng *rng);
} agent_encoder_ops;

struct agent_encoder {
    const agent_encoder_ops *ops;
    agent_ctx ctx;
    int32_t T, F;        /* elements placed, features per element               */
    int32_t n_rows;      /* decisions of its own (a learned grouper: one per op) */
    int needs_dx;        /* x depends on parameters: backward wants dx          */
    int32_t *choice;     /* [n_ops] each op's element: its group, or its position */
    const float *x;      /* [T, F] the last forward's sequence                  */
    float entropy;       /* of the choice in the last forward                   */
    int first_tensor, n_tensors; /* its tensors in the store (set by the core)  */
};

/* The encoders, for ctx (which they keep); NULL when out of memory. */
agent_encoder *agent_encoder_groups_new(const agent_ctx *ctx);
agent_encoder *agent_encoder_ops_new(const agent_ctx *ctx);

/* ---- placers (placer_seq.c, placer_independent.c) ------------------------------ */

typedef struct agent_placer agent_placer;

typedef struct agent_placer_ops {
    const char *name;
    /* Number of its tensors and, when specs is not NULL, their specs. */
    int (*specs)(const agent_placer *p, dp_nn_tensor_spec *specs);
    /* Binds it to its tensors and sizes its workspaces for batches of B.
     * Errors: INVALID, NOMEM. */
    dp_status (*bind)(agent_placer *p, dp_error *err);
    void (*free)(agent_placer *p);
    /* Places the encoder's sequence e->x for B samples: devs [B, T]
     * sampled, greedy or read (TEACHER), logp [B], logp_step [B, T] (each
     * decision's log-probability), entropy [B] (summed over the elements);
     * noise > 0 adds logit noise drawn from rng. */
    void (*forward)(agent_placer *p, agent_encoder *e, int32_t *devs, float *logp, float *logp_step, float *entropy,
                    dp_nn_decode_mode mode, float noise, dp_rng *rng);
    /* Accumulates the gradients of sum_b dlogp[b] logp[b] + sum_{b,t}
     * dlogp_step[b, t] log p(devs[b, t]) + sum_b dentropy[b] entropy[b]
     * (dlogp_step, dentropy may be NULL: zero) for the last forward, and
     * adds dL/dx to dx [T, F] when not NULL. */
    void (*backward)(agent_placer *p, float *dx, const int32_t *devs, const float *dlogp, const float *dlogp_step,
                     const float *dentropy);
    /* Sets the policy to the exact cross-entropy minimiser of the elites
     * elite_devs [E, T] (NULL: gradient steps instead). */
    void (*fit)(agent_placer *p, const int32_t *elite_devs, int32_t E);
} agent_placer_ops;

struct agent_placer {
    const agent_placer_ops *ops;
    agent_ctx ctx;
    int32_t T, F, D, B;  /* elements, features per element, devices, samples per forward */
    uint64_t stick_mask; /* the devices the stick prior favours (GPUs among the first 64) */
    /* memory-aware decoding (mem-mask; NULL: off): the elements' estimated
     * bytes [T] for the encoder's current choice and the devices'
     * capacities [D], owned by the core (dp_nn_memory_mask) */
    const float *mask_w, *mask_cap;
};

/* Empty placers of each kind (the core fills ctx, T, F, D, B and
 * stick_mask before specs and bind); NULL when out of memory. */
agent_placer *agent_placer_seq_new(void);   /* seq2seq-after, -before, -seg, trfxl */
agent_placer *agent_placer_gcn_new(void);
agent_placer *agent_placer_table_new(void);

/* ---- training primitives (agent_train.c) ---------------------------------------- */

/* Reward of one evaluated placement: -sqrt(step time) when valid; the
 * shaped out-of-memory reward when cfg->train.oom_shaped; else fail_reward. */
double agent_reward(const dp_agent_config *cfg, double fail_reward, const agent_result *r);
/* PPO's clipped-surrogate gradient with respect to log p: d/d(log p) of
 * min(r A, clip(r, 1 - eps, 1 + eps) A), r = exp(logp - old): r A where the
 * unclipped term is the smaller (or they are equal), else 0. */
double agent_ppo_grad(double logp, double old, double adv, double eps);
/* Logit-noise amplitude of update number `update` (0-based). */
float agent_noise_at(const dp_agent_config *c, int64_t update);

/* The reward baseline: the exponential moving average (decay
 * baseline_decay; the first reward starts it), or the mean of the last
 * baseline_window rewards. */
typedef struct agent_baseline {
    int have;
    double value;
    double *window; /* [baseline_window] */
    int32_t n, pos;
} agent_baseline;
void agent_baseline_add(agent_baseline *b, const dp_agent_config *cfg, double r);

/* Clips the gradients (the encoder's network, tensors [0, first_placer),
 * and the placer's each on their own with clip_per_network, else all at
 * once) and takes one Adam step, the encoder's network at lr_encoder and
 * the placer's at lr; norms[2] (may be NULL) gets the two networks'
 * gradient norms before clipping. Returns 1, or 0 without a step (the
 * parameters, moments and step count as they were) when a norm is not
 * finite: a backward that overflowed would turn every parameter NaN. */
int agent_optimizer_step(dp_nn_params *p, dp_nn_adam *adam, const dp_agent_config *cfg, int first_placer,
                         float lr_encoder, float lr, double *norms);

/* The best distinct placements so far, best first (cross-entropy over elites). */
typedef struct agent_elites {
    int32_t cap, n, T, N;
    double *reward;     /* [cap] */
    uint64_t *hash;     /* [cap] hash of the op placement */
    int32_t *devs;      /* [cap, T] */
    int32_t *choice;    /* [cap, N] the encoder's choice, when it decides (else NULL) */
} agent_elites;
/* Offers a sample (its op placement place [N], element devices devs [T],
 * the encoder's choice [N] or NULL, reward r): kept when among the cap
 * best distinct placements. */
void agent_elites_offer(agent_elites *el, const int32_t *place, const int32_t *devs, const int32_t *choice, double r);

/* Elite walks (elite_moves > 0; agent_walks.c): greedy walks over
 * element moves from the update's best samples, simulated by delta
 * evaluators, whose ends join the elites. */
/* The ops each element moves under one choice of groups (CSR in at/ops;
 * an op follows the element of its unit's lowest op, as agent_expand
 * places it) and the elements holding ops. */
typedef struct agent_elements {
    const int32_t *choice; /* [N] each op's element                           */
    int32_t *at, *ops;     /* [T + 1], [N]                                      */
    int32_t *nonempty;     /* [T] elements holding ops                          */
    int32_t n_nonempty;
} agent_elements;

#define AGENT_WALK_FROM_NONE (-1)  /* the walk did not run this update */
#define AGENT_WALK_FROM_ELITE (-2) /* it started from the best elite      */

typedef struct agent_walk {
    dp_sim_delta *d;       /* over the evaluator's simulator                    */
    dp_rng rng;            /* seeded from the agent's generator each update     */
    int32_t *mv_op, *mv_dev; /* [N] the move being tried                        */
    int32_t *devs;         /* [T] the walk's element devices                    */
    int32_t *place;        /* [N] and its op placement                          */
    agent_result res;      /* the end's evaluation                              */
    dp_sim_path_step *path; /* [path_cap] the current placement's critical path */
    int32_t path_n, path_cap;
    int path_ok;           /* path is the current placement's                   */
    const agent_elements *el; /* the elements its moves move                    */
    int32_t from;          /* the sample it started from, or
                              AGENT_WALK_FROM_NONE (none this update) or
                              AGENT_WALK_FROM_ELITE (the best elite)            */
    int32_t sims;          /* moves simulated this update                       */
    int32_t chained;       /* moves kept this update after growing (elite-chain) */
} agent_walk;

typedef struct agent_walks {
    int32_t n_walks;       /* elite_walks, + 1 with elite_keep (run after the
                              samples' walks)                                  */
    agent_walk *walk;      /* [n_walks]                                         */
    agent_elements upd;    /* under the update's choice                         */
    agent_elements kept;   /* under the best elite's (elite_keep)               */
    int32_t *kept_choice;  /* [N] that choice, copied at the walk's start       */
} agent_walks;

/* Parameters and Adam's state, saved before a training that may be
 * abandoned and put back when it is. */
typedef struct agent_undo {
    float *keep; /* [3, count]: values, m, v */
    int64_t step;
    int have;
} agent_undo;
void agent_undo_save(agent_undo *u, const dp_nn_params *p);
void agent_undo_restore(const agent_undo *u, dp_nn_params *p);

/* ---- the agent core (agent.c) --------------------------------------------------- */

struct dp_agent {
    const dp_graph *g;
    const dp_devices *ds;
    dp_agent_config cfg;
    dp_agent_eval_options eo;
    uint64_t seed;
    int32_t N, D, T, K;  /* ops, devices, elements placed, samples per update   */
    int32_t B;           /* samples per placer forward: K, or a PPO minibatch
                            when the encoder places every op                   */

    agent_features feat;
    agent_eval *eval;

    /* the policy: one parameter store (tensor 0 the type embedding, then
     * the encoder's, then the placer's), one Adam */
    dp_nn_params params;
    dp_nn_adam adam;
    int first_placer;        /* first tensor of the placer                      */
    agent_encoder *enc;
    agent_placer *placer;    /* batches of B                                    */
    agent_placer *placer1;   /* batches of 1 (cross-entropy, greedy, log p of one);
                                made on first use                               */
    float *dx;               /* [T, F] gradient of the encoder's sequence         */
    /* memory-aware decoding (mem-mask): each op's estimated bytes, each
     * element's for the current choice, the devices' capacities */
    float *op_bytes, *mem_w, *mem_cap; /* [N], [T], [D]                          */

    /* units: TensorFlow colocation groups, and the devices each may use */
    dp_units units;
    int32_t *unit_first;     /* [n_units] lowest op of each unit                  */
    dp_mask *unit_mask;      /* [n_units] devices every member allows             */

    /* the samples of an update */
    int32_t *devs;           /* [K, T]                                           */
    float *logp, *logp_step, *entropy; /* [K], [K, T], [K] (the placer's)         */
    float logp_enc;          /* log p(choice) of the encoder                      */
    float *samp_logp;        /* [K] the placer's log-probabilities when sampled    */
    float samp_enc;          /* and the encoder's                                  */
    double norm_sum[2];      /* gradient norms of this update's optimiser steps    */
    int32_t n_steps;
    int32_t *place;          /* [K, N]                                           */
    agent_result *res;       /* [K]                                              */
    int *cached;             /* [K]                                              */
    dp_run_sample *last;     /* [K]                                              */
    /* training */
    float *old_logp, *old_step, *old_rows; /* [K], [K, T], [n_rows]               */
    float *dlogp, *dstep, *dent, *drows;   /* [B], [B, T], [B], [n_rows]          */
    int32_t *order;          /* [K] samples in minibatch order                    */
    unsigned char *in_mb;    /* [K] in the current minibatch                      */
    int32_t *bsample;        /* [B] the sample each batch row holds (-1: none)    */
    int32_t *bdevs;          /* [B, T] a gathered minibatch (B < K)               */
    float *blogp, *bstep, *bent; /* [B], [B, T], [B]                              */
    int32_t *choice_keep;    /* [N] the update's choice, kept while another is used */
    int32_t *greedy_place;   /* [N] greedy-every: the greedy placement before the update */
    int32_t *devs1;          /* [T] one placement for the batch-of-one placer       */
    float *step1;            /* [T] its per-decision log-probabilities             */
    agent_undo undo;
    agent_baseline baseline;
    agent_elites elites;
    agent_walks walks;      /* the elite walks' state                     */
    int64_t ce_updates;
    /* the encoder's Deep Graph Infomax pre-training */
    size_t enc_lo, enc_floats; /* the encoder's floats in the store            */
    float *pretrain_keep;      /* [enc_floats] parameters of the lowest loss     */
    int pretrain_have_keep;
    int64_t pretrain_step;     /* Adam steps of the pre-training                 */
    /* the imitation warm start (agent_warm.c): its target, made on first use */
    int32_t *warm_place;       /* [N] the imitated placement (NULL until made)    */
    int32_t *runs, *runs_devs; /* grouper=runs: the grouping [N], runs' devices [groups] */
    int32_t *prior;            /* grouper-prior: each op's prior group [N] in [0, groups) */
    int32_t *warm_choice, *warm_devs; /* [N], [T]                                */

    dp_rng rng;
    double fail_reward;
    dp_run_state st;
    dp_agent_prep prep;       /* pre-training and warm start (st.prep_* sum them) */
    int32_t *best;           /* [N] */
    int have_best;
};

/* (agent_train.c) Turns element devices dev[T] into an op placement out[N]: each op takes
 * its element's device (choice[N]); a colocation unit follows its lowest
 * op, and a unit whose device a member's constraint forbids goes to its
 * first allowed device (as TensorFlow's placer with soft placement does). */
void agent_expand(const dp_agent *a, const int32_t *choice, const int32_t *dev, int32_t *out);
/* log p(choice) + log p(devs [T] | choice) under the current policy, without
 * noise (choice is read only when the encoder decides). */
float agent_logp_of(dp_agent *a, const int32_t *choice, const int32_t *devs);
/* The cross-entropy update over the current elites (normally every
 * ce_every samples of PPO_CE). */
void agent_train_cross_entropy(dp_agent *a);
/* The batch-of-one placer (made on first use); NULL when out of memory. */
agent_placer *agent_placer_one(dp_agent *a);
/* The imitation warm start (agent_warm.c). agent_warm_place makes
 * a->warm_place [N] once: the placement of the baseline placer
 * cfg.warm.from names (the state's warm_target_s and warm_from set).
 * agent_warm_runs cuts it into T runs: choice [N] (each device's ops in
 * topological order, T contiguous runs shared out by op counts) and devs
 * [T] the runs' devices. agent_warm_target gives the target the policy
 * imitates: the encoder's choice [N] (its own when fixed, the runs for a
 * learned grouper) and each element's device [T] (the one most of its ops
 * are on). Errors: INVALID (no valid placement), NOMEM. */
dp_status agent_warm_place(dp_agent *a, dp_error *err);
void agent_warm_runs(const dp_agent *a, int32_t T, int32_t *choice, int32_t *devs);
dp_status agent_warm_target(dp_agent *a, int32_t *choice, int32_t *devs, dp_error *err);
/* Elite walks (agent_walks.c). agent_walks_init makes the walks' delta
 * evaluators and arrays (by dp_agent_init when elite_moves > 0): INVALID
 * when placements are measured by a command or with noise (the walks'
 * moves are judged by the simulator's noiseless protocol), NOMEM.
 * agent_walks_run walks cfg.walks.moves element moves from each of the
 * update's elite_walks best samples (by agent_walk_score, the search's
 * rule: dp_sim_score_parts; none from a sample that failed otherwise), on
 * the evaluator's threads, each walk with a generator seeded from the
 * agent's in walk order, and with elite_keep one more from the best elite
 * (under its own grouping; from = AGENT_WALK_FROM_ELITE); the ends stay in
 * a->walks.walk (from = AGENT_WALK_FROM_NONE: the walk did not run). */
dp_status agent_walks_init(dp_agent *a, dp_error *err);
double agent_walk_score(const agent_result *r);
dp_status agent_walks_run(dp_agent *a, dp_error *err);
void agent_walks_free(agent_walks *r);
/* The DGI loss now, with a fixed corruption (tests). */
float agent_dgi_loss(dp_agent *a);

/* Sets the run state's prep_done, prep_total and prep_s from a->prep. */
static inline void agent_prep_sync(dp_agent *a) {
    a->st.prep_done = a->prep.pretrain_done + a->prep.warm_done;
    a->st.prep_total = a->prep.pretrain_iters + a->prep.warm_steps;
    a->st.prep_s = a->prep.pretrain_s;
}

#endif
