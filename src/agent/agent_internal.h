/* The agent's parts, shared by the files of src/agent. Not public API. */
#ifndef DPLACE_AGENT_INTERNAL_H
#define DPLACE_AGENT_INTERNAL_H

#include "dplace/agent.h"
#include "dplace/nn.h"
#include "dplace/nn_mars.h"
#include "dplace/nn_models.h"
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
 * (link [G, link_hidden], the link RNN's states) is there when cfg->link.
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

typedef struct agent_eval agent_eval;

/* One result as the cache keeps it. */
typedef struct agent_result {
    double step_time_s;
    int valid;
    int cancelled; /* stopped by the cancel flag: not a measurement */
    double overflow; /* out of memory in the simulator: worst peak / capacity (> 1); else 0 */
    char reason[192];
} agent_result;

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
const dp_sim *agent_eval_sim(const agent_eval *e);

/* ---- the agent (agent.c) --------------------------------------------------- */

struct dp_agent {
    const dp_graph *g;
    const dp_devices *ds;
    dp_agent_config cfg;
    dp_agent_eval_options eo;
    uint64_t seed;
    int32_t N, D, G, K;

    agent_features feat;
    agent_eval *eval;

    /* networks: one parameter store for all of them */
    dp_nn_params params;
    int learned_grouper;
    dp_nn_grouper grouper;
    int i_type_emb;     /* tensor index of the type embedding (0)            */
    int i_placer;       /* first tensor of the placer; the grouper's and the
                           link's before it                                  */
    dp_nn_adam adam;
    int32_t gwidth[4];  /* widths of the parts of a group embedding         */

    /* link RNN (EAGLE): LSTM over the groups reading [w2 row g | b2 g] */
    int i_link;
    int32_t LX, LH;     /* input (grouper hidden + 1) and state sizes        */
    float *lx, *lout, *lcell, *lgates, *ldx, *ldout, *lscratch;

    /* placer (agent_policy.c): seq2seq for the K samples and for one */
    dp_nn_seq2seq placer, placer1;
    int have_placer, have_placer1;
    /* GCN and table placers: base logits [G, D] per group, then a head
     * per sample: logits, log-probabilities [K, G, D] */
    int i_gcn, i_table;
    dp_nn_graph ggraph;      /* group graph of the GCN placer               */
    int ggraph_ok;           /* built for the current grouping              */
    int32_t *gsrc, *gdst;    /* [n_edges] group-level edges                 */
    float *gxw[2], *gh[2], *gdh, *gdpre, *gcscratch; /* [G, hidden]           */
    float *hbase, *hdbase;   /* [G, D]                                       */
    float *htact, *hlogp, *hnoise, *hdlog, *hdlg, *hdl; /* [K, G, D]         */

    /* PPO: log-probabilities when the samples were drawn */
    float *old_logp;    /* [K] */
    float old_logp_g;
    /* per decision: the placer's [K, G] (filled by every placer forward), the
     * grouper's [N]; old values; weights for the backward when step_weights */
    float *logp_step, *old_step, *dlogp_step;
    float *old_rows, *dlogp_rows;
    /* agents over every op: parameters, Adam's m and v [3, params.count]
     * before an update's training, put back when it is cancelled (allocated
     * on first use, only when there is a cancel flag) */
    float *undo;
    int step_weights;
    float *mb_weight;   /* [K] 1 for the samples of the current minibatch   */
    int32_t *order;     /* [K] */
    /* cross-entropy over elites: the best placements so far (best first) */
    int32_t n_elites;
    double *elite_reward;   /* [ce_elites] */
    uint64_t *elite_hash;   /* [ce_elites] hash of the op placement          */
    int32_t *elite_devs;    /* [ce_elites, G] */
    int32_t *elite_group;   /* [ce_elites, N] (learned grouper only)         */
    int64_t ce_updates;     /* cross-entropy updates done                    */
    int32_t *best_group_scratch; /* [N] the grouping, kept while another is used */

    /* units: TensorFlow colocation groups, and the devices each may use */
    dp_units units;
    int32_t n_units;
    const int32_t *unit_of; /* [N] = units.unit_of */
    int32_t *unit_first;/* [n_units] lowest op of each unit */
    dp_mask *unit_mask; /* [n_units] devices every member allows */

    /* per-update buffers */
    int32_t *group;     /* [N] grouping of this update (fixed groupers: constant) */
    float *x, *dx;      /* [N, F] op rows and their gradient                    */
    float *trows;       /* [N, type_dim] type embedding rows                    */
    float *dtype_rows;  /* [N, type_dim] their gradient                         */
    float *ge;          /* [G, GF] the group embedding all samples place        */
    float *dge0;        /* [G, GF] its gradient                                 */
    float *gcount, *gscratch;
    float *dgpart;      /* [G, type_dim] gradient of the group type part        */
    int32_t GF;
    int32_t *devs;      /* [K, G]                                               */
    float *logp, *dlogp;/* [K]                                                  */
    float *entropy, *dentropy; /* [K] placer entropies (summed over groups)      */
    float grouper_entropy;
    int32_t *place;     /* [K, N]                                               */
    agent_result *res;  /* [K]                                                  */
    int *cached;        /* [K]                                                  */
    dp_agent_sample *last; /* [K]                                               */
    double *window;     /* [baseline_window] rewards of the moving average       */
    int32_t window_n, window_pos;

    /* op-level path (encoder=gcn, Mars: agent_mars.c): groups are the ops,
     * numbered by their position in the sequence the placer reads */
    int op_level;
    int32_t OF;         /* node features per op                                 */
    int32_t *seq;       /* [N] ops in sequence (topological) order              */
    float *opx;         /* [N, OF] node features in sequence order              */
    dp_nn_graph opgraph;/* the op graph over sequence positions                 */
    dp_nn_mars mars;    /* encoder + placer for batches of mars_B samples        */
    int have_mars;
    int32_t mars_B;
    int32_t *mdevs;     /* [mars_B, N] the batch's devices                       */
    float *mlogp, *ment, *mdlogp, *mdent; /* [mars_B]                            */
    int mars_steps;     /* PPO ratios per decision: per-op log-probabilities kept */
    float *mstep, *mdstep; /* [mars_B, N] the batch's, and their weights           */
    int mdsteps_on;     /* the backward reads mdstep                             */
    int i_enc, n_enc;   /* the encoder's tensors (GCN layers, DGI discriminator) */
    size_t enc_floats;
    float *pretrain_keep;    /* [enc_floats] parameters of the lowest DGI loss    */
    int pretrain_have_keep;
    int64_t pretrain_step;   /* Adam steps of the pre-training                   */

    dp_rng rng;
    double fail_reward;
    int have_baseline;
    dp_agent_state st;
    int32_t *best;      /* [N] */
    int have_best;
};

/* ---- placers (agent_policy.c) ---------------------------------------------- */

/* Tensor specs of the placer a->cfg names (and of the link RNN when on),
 * for group embeddings of width a->GF; returns their number. */
int agent_placer_specs(const dp_agent *a, dp_nn_tensor_spec *specs);
/* Binds the placer and the link to a->params and sizes their buffers.
 * Errors: NOMEM, INVALID. */
dp_status agent_placer_init(dp_agent *a, dp_error *err);
void agent_placer_free(dp_agent *a);
/* Link RNN forward: a->lout [G, LH] from the grouper's output layer. */
void agent_link_forward(dp_agent *a);
/* Accumulates the link's gradients and, through it, the grouper's output
 * layer gradients, from dlink [G, LH]. */
void agent_link_backward(dp_agent *a, const float *dlink);
/* Places B (K, or 1 for greedy decoding and cross-entropy steps) samples
 * from the group embedding a->ge [G, GF] (one grouping for all): a->devs [B, G] sampled,
 * greedy or read (TEACHER), a->logp [B], a->logp_step [B, G] (each
 * decision's log-probability) and a->entropy [B]; noise > 0
 * adds logit noise. */
void agent_placer_forward(dp_agent *a, int32_t B, dp_nn_decode_mode mode, float noise);
/* Accumulates the placer's gradients of sum_b a->dlogp[b] logp[b] +
 * a->dentropy[b] entropy[b] (+ sum_{b,g} a->dlogp_step[b, g] log p(dev_bg)
 * when a->step_weights) for the last forward of batch B, and of the
 * group embedding into dge0 [G, GF] when not NULL (summed over samples). */
void agent_placer_backward(dp_agent *a, int32_t B, float *dge0);
/* Table placer: sets each group's distribution to (1 - mix) times the
 * device frequencies among the elites plus mix times uniform (the exact
 * cross-entropy minimiser, then Post's mixing). */
void agent_table_set_from_elites(dp_agent *a);

/* Turns group devices dev[G] into an op placement out[N]: each op takes its
 * group's device; a colocation unit follows its lowest op, and a unit whose
 * device a member's constraint forbids goes to its first allowed device (as
 * TensorFlow's placer with soft placement does). */
void agent_expand(const dp_agent *a, const int32_t *group, const int32_t *dev, int32_t *out);

/* Adds one reward to the reward baseline: the exponential moving average
 * (decay baseline_decay; the first reward starts it), or the mean of the
 * last baseline_window rewards. */
void agent_baseline_add(dp_agent *a, double r);
/* Reward of one evaluated placement: -sqrt(step time) when valid; the
 * shaped out-of-memory reward when oom_shaped; else the failing reward. */
double agent_reward(const dp_agent *a, const agent_result *r);
/* PPO's clipped-surrogate gradient with respect to log p: d/d(log p) of
 * min(r A, clip(r, 1 - eps, 1 + eps) A), r = exp(logp - old): r A where the
 * unclipped term is the smaller (or they are equal), else 0. */
double agent_ppo_grad(double logp, double old, double adv, double eps);
/* The cross-entropy update over the current elites (normally every
 * ce_every samples of PPO_CE). */
void agent_train_cross_entropy(dp_agent *a);
/* log p(group) + log p(devs [G] | group) under the current policy, without
 * noise (group is read only with the learned grouper). */
float agent_logp_of(dp_agent *a, const int32_t *group, const int32_t *devs);
/* Logit-noise amplitude of update number `update` (0-based). */
float agent_noise_at(const dp_agent_config *c, int64_t update);
/* Clips the gradients (per network or all at once) and takes one Adam step. */
void agent_optimizer_step(dp_agent *a);

/* ---- op-level path (agent_mars.c) --------------------------------------------- */

/* Samples per batch of the op-level policy: a PPO minibatch, or all samples
 * for REINFORCE. */
int32_t agent_mars_batch(const dp_agent_config *c);
/* Number of the encoder's tensors (GCN layers, DGI discriminator): the
 * first of agent_mars_specs. */
int agent_mars_encoder_tensors(const dp_agent *a);
/* Tensor specs of the encoder and placer (a->OF and a->D set). */
int agent_mars_specs(const dp_agent *a, dp_nn_tensor_spec *specs);
/* Builds the sequence (a->seq, a->group = positions), the node features,
 * the op graph and the policy, bound to a->params. Errors: INVALID (a
 * whole-sequence placer too large for the graph), NOMEM. */
dp_status agent_mars_init(dp_agent *a, dp_error *err);
void agent_mars_free(dp_agent *a);
/* Samples (or decodes greedily) a->devs [K, N], a->logp, a->entropy in
 * batches of mars_B, reporting progress after each; returns 1 (work left
 * undone) when the cancel flag is found set between batches, else 0. */
int agent_mars_sample(dp_agent *a, dp_nn_decode_mode mode);
/* Teacher-forced forward of the batch a->mdevs [mars_B, N]: a->mlogp and
 * (entropy > 0) a->ment. */
void agent_mars_batch_forward(dp_agent *a);
/* Accumulates the gradients of sum_b a->mdlogp[b] mlogp[b] + a->mdent[b]
 * ment[b] for the last forward (a->mdent used when entropy > 0). */
void agent_mars_batch_backward(dp_agent *a);
/* REINFORCE step on the last sampling (one batch of K) with advantages adv[K]. */
void agent_mars_train_reinforce(dp_agent *a, const double *adv);
/* PPO: ppo_epochs passes, each over ppo_minibatches shuffled minibatches
 * run one at a time, reporting progress after each. When the cancel flag
 * is found set between minibatches, the parameters, Adam's moments and step
 * are put back as they were and 1 is returned (the caller puts back the
 * generator); else 0. */
int agent_mars_train_ppo(dp_agent *a, const double *adv);
/* The seq2seq decoders' stick_mask: the GPUs among the first 64 devices
 * (the previous op's device is favoured only when it is a GPU: a run of
 * ops on the CPU is what a start from near uniform must not repeat). */
uint64_t agent_stick_mask(const dp_agent *a);
/* The eval options' progress callback, if any. */
void agent_progress(const dp_agent *a, const char *phase, int64_t done, int64_t total);
/* Whether the eval options' cancel flag is set. */
int agent_cancel_requested(const dp_agent *a);
/* ce_steps Adam steps on -1/E sum_e log p(elite_e). */
void agent_mars_cross_entropy(dp_agent *a);
/* log p(devs [N]) under the current policy. */
float agent_mars_logp_of(dp_agent *a, const int32_t *devs);
/* The most likely devices [N] (greedy decoding). */
void agent_mars_greedy(dp_agent *a, int32_t *devs);
/* The DGI loss now, with a fixed corruption (tests). */
float agent_mars_dgi_loss(dp_agent *a);

#endif
