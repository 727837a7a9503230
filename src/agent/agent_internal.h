/* The agent's parts, shared by the files of src/agent. Not public API. */
#ifndef DPLACE_AGENT_INTERNAL_H
#define DPLACE_AGENT_INTERNAL_H

#include "dplace/agent.h"
#include "dplace/nn.h"
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

/* op rows x [n_ops, F] = [type embedding rows trows [n_ops, type_dim] | rest]. */
void agent_features_op_rows(const agent_features *f, const float *trows, int32_t type_dim, float *x);

/* Group embedding ge [G, GF] of the grouping group[n_ops]:
 * [type part | log(1 + summed shapes) | adjacency row]; the type part is
 * log(1 + type counts) [G, V] (COUNTS) or the mean of the group's type
 * embedding rows [G, type_dim] (EMBEDDING; count [G] keeps the sizes for
 * the backward). scratch [G, type part + S + G]. */
int32_t agent_group_dim(const agent_features *f, const dp_agent_config *cfg, int32_t G);
void agent_group_embed(const agent_features *f, const dp_agent_config *cfg, const int32_t *group, int32_t G,
                       const float *trows, float *ge, float *count, float *scratch);

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
    dp_nn_seq2seq placer;
    int i_type_emb;     /* tensor index of the type embedding (0)            */
    int i_placer;       /* first tensor of the placer; the grouper's before  */
    dp_nn_adam adam;

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
    float *ge, *dge;    /* [K, G, GF]                                           */
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

    dp_rng rng;
    double fail_reward;
    int have_baseline;
    dp_agent_state st;
    int32_t *best;      /* [N] */
    int have_best;
};

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
/* Logit-noise amplitude of update number `update` (0-based). */
float agent_noise_at(const dp_agent_config *c, int64_t update);

#endif
