/* dplace: learned placers. An agent is a composition of parts, each
 * swappable (docs/agents.md lists every preset and every hyperparameter with
 * its source in the seed papers):
 *
 *   features   per-op features as the Hierarchical Planner and ColocRL
 *              describe them: a learned op-type embedding, the zero- or
 *              -1-padded output shapes, and adjacency (the BFS indices of the
 *              op's neighbours); per group: op-type counts (or the mean type
 *              embedding), summed output shapes, a one-hot group adjacency row
 *   encoder    none (groups, as above), or Mars's: every op placed, its
 *              node features (one-hot type by name, input and output
 *              shapes) through GCN layers over the op graph, pre-trained by
 *              Deep Graph Infomax; the placer then reads the op sequence
 *              segment by segment (segment-level seq2seq or Transformer-XL)
 *   grouper    the learned feed-forward grouper (Hierarchical Planner), a
 *              heuristic grouper of src/place (colocation, metis, scotch,
 *              fluid, random), ColocRL's scope groups, or none
 *   link       optionally EAGLE's extra RNN: an LSTM over the groups that
 *              reads the learned grouper's output-layer parameters of each
 *              group and appends its state to the group's embedding
 *   placer     the seq2seq placer: bi-LSTM encoder over the groups, LSTM
 *              decoder with additive attention after the decoder cell
 *              (Hierarchical Planner) or before it (EAGLE); the GCN placer
 *              (EAGLE Table II); or Post's table of one device distribution
 *              per group
 *   algorithm  REINFORCE, PPO (clipped surrogate, several epochs over the
 *              samples), or PPO joined with cross-entropy minimisation over
 *              the elite placements (Post), each against a moving-average
 *              baseline
 *   evaluator  the simulator (threads, a cache keyed by the placement, the
 *              papers' noisy protocol optionally) or an external measuring
 *              command (include/dplace/measure.h)
 *
 * Presets reproduce the papers ("hp", "colocrl", "eagle", "post", "mars",
 * ...); dp_agent_config_set
 * overrides one component or hyperparameter, so the papers' ablations are
 * command lines. Every random choice draws from the agent's seeded
 * generator: the same seed gives the same run, and a run resumed from a
 * checkpoint continues exactly as the uninterrupted run would have. */
#ifndef DPLACE_AGENT_H
#define DPLACE_AGENT_H

#include <signal.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/run.h"
#include "dplace/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_AGENT_CHAIN_MAX 64 /* the most elements elite-chain adds to a move */

typedef enum dp_agent_grouper_kind {
    DP_AGENT_GROUPER_KIND_LEARNED = 0, /* feed-forward grouper, trained jointly */
    DP_AGENT_GROUPER_KIND_COLOCATION,  /* dp_group colocation (fixed)          */
    DP_AGENT_GROUPER_KIND_METIS,       /* dp_group metis into `groups`          */
    DP_AGENT_GROUPER_KIND_SCOTCH,
    DP_AGENT_GROUPER_KIND_FLUID,
    DP_AGENT_GROUPER_KIND_RANDOM,
    DP_AGENT_GROUPER_KIND_SCOPE,       /* colocation joined with the layer scope
                                          (ColocRL's per-cell / per-branch groups) */
    DP_AGENT_GROUPER_KIND_NONE,        /* each op its own group                */
    DP_AGENT_GROUPER_KIND_RUNS,        /* the warm-start placement's ops of each
                                          device in topological order, cut into
                                          `groups` contiguous runs in all
                                          (dplace's; needs warm-start)         */
    DP_AGENT_GROUPER_KIND_COUNT
} dp_agent_grouper_kind;

typedef enum dp_agent_placer_kind {
    DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER = 0, /* attention after the decoder cell (HP) */
    DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE,    /* attention before it (EAGLE)           */
    DP_AGENT_PLACER_KIND_GCN,               /* two GCN layers over the group graph,
                                               a softmax per group (EAGLE Table II) */
    DP_AGENT_PLACER_KIND_TABLE,             /* one learned distribution per group,
                                               starting uniform (Post)              */
    DP_AGENT_PLACER_KIND_SEQ2SEQ_SEG,       /* segment-level seq2seq over every op
                                               (Mars; encoder=gcn): seg_len ops at a
                                               time, each segment started from the
                                               previous one's final state            */
    DP_AGENT_PLACER_KIND_TRFXL,             /* Transformer-XL over every op (Mars
                                               Table 1, GDP); encoder=gcn            */
    DP_AGENT_PLACER_KIND_COUNT
} dp_agent_placer_kind;

typedef enum dp_agent_algo {
    DP_AGENT_ALGO_REINFORCE = 0,
    DP_AGENT_ALGO_PPO,      /* clipped surrogate, ppo_epochs passes per update   */
    DP_AGENT_ALGO_PPO_CE,   /* PPO, and every ce_every samples a cross-entropy
                               step towards the ce_elites best placements (Post) */
    DP_AGENT_ALGO_COUNT
} dp_agent_algo;

/* What PPO's probability ratio is taken over. */
typedef enum dp_agent_ppo_ratio {
    DP_AGENT_PPO_RATIO_SEQUENCE = 0, /* one ratio per network and sample: the whole
                                        sequence of decisions (the Mars reference)   */
    DP_AGENT_PPO_RATIO_DECISION,     /* one ratio per decision (each group's device,
                                        each op's group), clipped on its own        */
    DP_AGENT_PPO_RATIO_COUNT
} dp_agent_ppo_ratio;

/* What turns the op features into the placer's inputs. */
typedef enum dp_agent_encoder {
    DP_AGENT_ENCODER_NONE = 0, /* groups: grouper + group embeddings                */
    DP_AGENT_ENCODER_GCN,      /* every op: GCN layers over the op graph (Mars), the
                                  placer places each op in topological order        */
    DP_AGENT_ENCODER_COUNT
} dp_agent_encoder;

/* The order in which a placer over every op (encoder=gcn) visits the ops. */
typedef enum dp_agent_op_order {
    DP_AGENT_OP_ORDER_TOPO = 0, /* the graph's FIFO topological order (level by level) */
    DP_AGENT_OP_ORDER_DFS,      /* depth-first topological order (dp_graph_topo_depth_first):
                                   neighbours in the sequence are mostly neighbours in
                                   the graph */
    DP_AGENT_OP_ORDER_COUNT
} dp_agent_op_order;

/* Where the imitation warm start's placement comes from (dplace's, after
 * DOPPLER: the policy first imitates a heuristic's placement). */
typedef enum dp_agent_warm {
    DP_AGENT_WARM_NONE = 0, /* no warm start: the networks' initial values (the seeds')  */
    DP_AGENT_WARM_BEST,     /* the fastest valid placement of the baseline placers      */
    DP_AGENT_WARM_CPU,      /* then one per dp_place_method, in its order: cpu, gpu,     */
                            /* expert, scotch, mincut, metis, m-topo, m-etf, m-sct        */
    DP_AGENT_WARM_COUNT = DP_AGENT_WARM_CPU + 9
} dp_agent_warm;

/* How op types become ids. */
typedef enum dp_agent_type_ids {
    DP_AGENT_TYPE_IDS_RANK = 0, /* the type-vocab - 1 most common types of the graph */
    DP_AGENT_TYPE_IDS_FIXED,    /* a fixed list of TensorFlow type names: the same id
                                   on every graph (transfer, --init)               */
    DP_AGENT_TYPE_IDS_COUNT
} dp_agent_type_ids;

/* What the placer reads about the op types of a group. */
typedef enum dp_agent_group_types {
    DP_AGENT_GROUP_TYPES_COUNTS = 0, /* log(1 + count of each type)  (HP)        */
    DP_AGENT_GROUP_TYPES_EMBEDDING,  /* mean of the learned type embeddings (ColocRL) */
    DP_AGENT_GROUP_TYPES_COUNT
} dp_agent_group_types;

typedef struct dp_agent_config {
    char preset[32];
    /* op features */
    dp_agent_type_ids type_ids;
    int32_t type_vocab;   /* most common op types kept (the rest share one id) */
    int32_t type_dim;     /* learned type embedding size                      */
    int32_t out_slots;    /* outputs described per op                          */
    int32_t out_dims;     /* dimensions described per output                   */
    int32_t adj_per_dir;  /* neighbours described per direction                */
    dp_agent_group_types group_types;
    /* grouper */
    dp_agent_grouper_kind grouper;
    int32_t groups;         /* learned and partitioning groupers               */
    int32_t grouper_hidden;
    dp_agent_grouper_kind grouper_prior; /* the learned grouper's logits get a
                               constant added at the group a fixed grouping
                               (metis, runs, ...) gives the op, so
                               training starts from contiguous groups, not
                               random mixtures (dplace's; NONE: no prior;
                               other groupers ignore it)                  */
    float grouper_prior_mass; /* that group's probability at the start (the
                               network's logits equal): 0.995 adds 12.4 with 256 groups */
    int32_t scope_depth;    /* scope grouper: leading scope components kept    */
    /* link (EAGLE's extra RNN; learned grouper only) */
    int link;               /* on/off                                          */
    int32_t link_hidden;    /* its LSTM units                                  */
    /* encoder (Mars) */
    dp_agent_encoder encoder;
    dp_agent_op_order op_order; /* encoder=gcn: the placer's op sequence       */
    int32_t gcn_hidden;     /* units per GCN layer                             */
    int32_t gcn_layers;     /* GCN layers, each followed by PReLU              */
    int32_t pretrain_iters; /* Deep Graph Infomax iterations before training   */
    float pretrain_lr;      /* their Adam learning rate                        */
    int encoder_train;      /* trained with the placer (0: fixed representations) */
    /* placer */
    dp_agent_placer_kind placer;
    int32_t seg_len;        /* seq2seq-seg: ops per segment                     */
    int32_t seg_keep;       /* seq2seq-seg, trfxl: segment workspaces kept
                               between the forward and the backward; the
                               others' forwards are recomputed               */
    int32_t txl_layers;     /* trfxl: layers (its width is `hidden`)            */
    int32_t txl_heads;      /* trfxl: attention heads                           */
    int32_t txl_inner;      /* trfxl: feed-forward units                        */
    int32_t txl_mem;        /* trfxl: memory positions from earlier segments    */
    int txl_causal;         /* trfxl: an op attends only to the ones before it  */
    int32_t hidden;         /* LSTM units (encoder: per direction); GCN units   */
    int32_t attn_dim;
    int32_t dev_emb;        /* device embedding size                           */
    float tanh_c;           /* logits C tanh(l / T); C <= 0: plain logits       */
    float temperature;
    float stick;            /* seq2seq placers: logit bonus of the previous
                               element's device when it is a GPU
                               (dplace's; 0: none)                        */
    float noise_amp;        /* logit noise amplitude for the first updates     */
    int32_t noise_updates;
    /* imitation warm start (dplace's; DOPPLER) */
    dp_agent_warm warm_start; /* the placement imitated before training       */
    int32_t warm_steps;     /* Adam steps on -log p(that placement)            */
    float warm_lr;          /* their learning rate                              */
    /* algorithm */
    int train;              /* train the policy (0: sample from the initial
                               policy only: the untrained control)        */
    dp_agent_algo algo;
    int32_t samples;        /* placements sampled per update (k)               */
    float lr;               /* Adam, constant                                   */
    float entropy;          /* bonus on the mean entropy per decision (0: none) */
    int entropy_sum;        /* the bonus is on the entropy summed over a
                               placement's decisions, not their mean (Mars's
                               reference)                                     */
    float clip;             /* gradient-norm clip                              */
    int clip_per_network;   /* clip the grouper (with the type embedding) and
                               the placer each on its own, not all at once   */
    float baseline_decay;   /* exponential moving average of the reward        */
    int32_t baseline_window;/* > 0: simple moving average of the last N instead */
    int baseline_init_fail; /* start the baseline at the failing reward        */
    double fail_reward;     /* reward of an invalid placement; 0: automatic,
                               -sqrt(10 * serial time on the first GPU)        */
    int32_t valid_only_after; /* from this update on, only valid samples train */
    int mem_mask;           /* memory-aware decoding: an element may not go to
                               a device its estimated bytes would overflow,
                               given the sample's earlier elements (dplace's) */
    float mem_scale;        /* the load estimate's scale (1: calibrated on the
                               graph's peak memory by liveness)           */
    int oom_shaped;         /* out-of-memory placements the simulator timed get
                               -sqrt(t) (1.25 + 4 (r - 1)), r the worst device's
                               peak / capacity, instead of the failing reward */
    /* PPO */
    int32_t ppo_epochs;     /* passes over each update's samples               */
    int32_t ppo_minibatches;/* each pass split into this many shuffled parts  */
    float ppo_clip;         /* epsilon of clip(r, 1 - eps, 1 + eps)            */
    dp_agent_ppo_ratio ppo_ratio;
    /* cross-entropy over elites (PPO_CE) */
    int32_t ce_every;       /* samples between two cross-entropy updates       */
    int32_t ce_elites;      /* best placements kept (K of "top K")             */
    int32_t ce_steps;       /* Adam steps per cross-entropy update             */
    /* elite refinement (dplace's expert iteration) */
    int32_t elite_moves;    /* > 0: after each update's evaluation, this many
                               element moves (one element to another device,
                               judged by the simulator, kept when no slower)
                               from the update's best sample; the refined
                               placement joins the elites, and the
                               cross-entropy step over the elites (ce_every,
                               ce_elites, ce_steps) runs with any algorithm
                               (0: off, the seeds)                           */
    int32_t elite_walks;   /* walks per update, from the update's best
                               samples (on the evaluator's threads)          */
    float elite_critical;  /* share of its moves read off the current
                               placement's simulated critical path (a
                               transfer on it removed, or an op of it moved) */
    float elite_near;      /* share of the other moves that take an element to the
                               device of an op one of its ops reads from or
                               feeds (the others: a device at random)        */
    int32_t elite_chain;   /* > 0: a move that makes the placement slower
                               grows, up to this many more elements, along
                               the data flow (each time a neighbouring
                               element not on the target device joins it),
                               and is kept at the first length that is no
                               slower (0: single-element moves only; at
                               most DP_AGENT_CHAIN_MAX)                     */
    int elite_train;       /* the update's training (REINFORCE or PPO) reads
                               each walk's end, when faster, in place of the
                               sample it started from: its devices, its
                               reward in the advantage, its log-probability
                               under the policy before the update as PPO's
                               old one (self-imitation; the per-update
                               statistics and the baseline keep the sample's
                               own)                                          */
    int elite_keep;        /* one more walk each update, from the best elite
                               (under the grouping it was found with), so
                               the refinement of the best so far goes on
                               across updates (dplace's; 0: the walks start
                               from the update's samples only)              */
    int32_t greedy_every;   /* > 0: before every greedy_every-th update (not the
                               first) the policy's greedy placement is
                               evaluated and offered as the best; not a
                               sample (the budget does not count it) and
                               training does not read it (0: only the final
                               policy's, dp_method_ops.final)               */
    float post_mix;         /* table placer: after a cross-entropy update, each
                               group's distribution becomes (1 - m) p + m / D,
                               p the elites' device frequencies (exact
                               minimiser); 0 < m. Neural placers: unused      */
} dp_agent_config;

/* Names of the presets, NULL-terminated: "hp", "colocrl", "eagle",
 * "eagle-ppo-ce", "post", "mars", "mars-nopretrain", "mars-seq2seq",
 * "mars-trfxl", "mars-dplace", "dplace". */
const char *const *dp_agent_preset_names(void);
/* Fills cfg with a preset; returns 0, or -1 for an unknown name. */
int dp_agent_preset(const char *name, dp_agent_config *cfg);
/* Overrides one setting: key is a component ("grouper", "placer", "algo",
 * "group-types") or a hyperparameter ("groups", "hidden", "lr", "samples",
 * ..., listed by dp_agent_config_keys). Errors (DP_STATUS_INVALID) name the
 * key and the value. */
dp_status dp_agent_config_set(dp_agent_config *cfg, const char *key, const char *value, dp_error *err);
/* The keys dp_agent_config_set takes, NULL-terminated. */
const char *const *dp_agent_config_keys(void);
/* A key's one-line description (what `--set help` prints), or NULL for a
 * key dp_agent_config_keys does not list. */
const char *dp_agent_config_key_help(const char *key);
/* Checks a whole configuration (ranges, combinations): DP_STATUS_INVALID
 * with a message naming the setting. */
dp_status dp_agent_config_check(const dp_agent_config *cfg, dp_error *err);
/* Writes every setting as "key=value key=value ..." (the order of
 * dp_agent_config_keys); returns the length it needed. */
size_t dp_agent_config_format(const dp_agent_config *cfg, char *buf, size_t size);
/* Names of the enum values, as dp_agent_config_set spells them. */
const char *dp_agent_grouper_kind_name(dp_agent_grouper_kind k);
const char *dp_agent_placer_kind_name(dp_agent_placer_kind k);
const char *dp_agent_algo_name(dp_agent_algo a);
const char *dp_agent_encoder_name(dp_agent_encoder e);
const char *dp_agent_warm_name(dp_agent_warm w);

/* One placement's evaluation. */
typedef struct dp_agent_eval_result {
    double step_time_s;
    int valid;
    int cancelled;   /* stopped by the cancel flag: not a measurement        */
    double overflow; /* out of memory in the simulator: worst peak / capacity
                        (> 1); else 0                                        */
    char reason[192];
} dp_agent_eval_result;

/* Evaluates placements somewhere else (a distributed front end's worker
 * ranks, src/dist): given the K placements place[K, n_ops] of a batch, it
 * fills res[k] for every k with todo[k] != 0 (the others the cache
 * answered), each exactly as dp_agent_evaluate on an evaluator of the same
 * options would, so that where a placement is evaluated never changes a
 * run. *cancelled set: the cancel flag stopped it (res then means nothing).
 * Errors abandon the update with them. */
typedef dp_status (*dp_agent_remote_fn)(void *user, const int32_t *place, int32_t K, int32_t n_ops, const int *todo,
                                        dp_agent_eval_result *res, int *cancelled, dp_error *err);

/* How sampled placements are evaluated. */
typedef struct dp_agent_eval_options {
    int32_t threads;        /* evaluations in parallel (>= 1)                  */
    int cache;              /* reuse the result of a placement seen before     */
    dp_sim_options sim;     /* noise, steps, warm-up of the simulator; its seed
                               is mixed with a hash of the placement, so a
                               placement always gets the same measurement      */
    const char *measure_cmd;    /* not NULL: run this command instead (measure.h) */
    double measure_timeout_s;
    const char *measure_dir;    /* where placement files for it go (NULL: /tmp) */
    /* NULL, or a flag (set by a SIGINT handler, say): once non-zero, running
     * measurements are stopped and the update in flight is abandoned,
     * leaving the agent as it was before it */
    const volatile sig_atomic_t *cancel;
    /* NULL, or called during an update with what it is doing ("sampling",
     * "evaluating", "training") and how far (done of total): a Mars update
     * over every op of a large graph takes minutes. Agents over every op
     * also check the cancel flag between the batches of sampling and the
     * minibatches of training, abandoning the update as above. */
    void (*progress)(void *user, const char *phase, int64_t done, int64_t total);
    void *progress_user;
    /* NULL, or where the expert placement comes from (the zoo's
     * dp_zoo_expert_placement): for warm-start=expert and =best */
    dp_status (*expert)(const dp_graph *g, const dp_devices *ds, int32_t *out, dp_error *err);
    /* NULL, or where the placements that missed the cache are evaluated
     * instead of this process's threads (the cache stays here) */
    dp_agent_remote_fn remote;
    void *remote_user;
} dp_agent_eval_options;

/* Defaults: 1 thread, cache on, the simulator without noise, 1 step, no
 * cancel flag, no progress callback. */
dp_agent_eval_options dp_agent_eval_options_default(void);

/* The evaluator on its own, as an agent uses it (a distributed run's
 * workers evaluate the placements their controller sends with one):
 * simulator contexts for eo's threads, or eo's measuring command, and the
 * cache when eo asks for it. It keeps pointers to g, ds and eo's strings. */
typedef struct dp_agent_evaluator dp_agent_evaluator;
dp_agent_evaluator *dp_agent_evaluator_init(const dp_graph *g, const dp_devices *ds, const dp_agent_eval_options *eo,
                                            dp_error *err);
void dp_agent_evaluator_free(dp_agent_evaluator *e);
/* Evaluates place[K, n_ops] into res[K] (cached[k] set when the cache
 * answered); results depend on the placements and eo only, never on the
 * threads. *cancelled: the cancel flag stopped a measurement. Errors: the
 * evaluator's own (NOMEM, a placement file it cannot write). */
dp_status dp_agent_evaluate(dp_agent_evaluator *e, const int32_t *place, int32_t K, dp_agent_eval_result *res,
                            int *cached, int *cancelled, dp_error *err);

typedef struct dp_agent dp_agent;

/* Builds an agent for g (finalized) on ds: the features, the grouper's
 * groups (heuristic groupers run here), the networks initialised from seed,
 * and the evaluator (simulator contexts or the measuring command). The
 * agent keeps pointers to g, ds and the strings of eo: they must outlive it.
 * Errors: DP_STATUS_INVALID (a bad configuration, a device set that cannot
 * host the graph, too many groups for the placer), UNSUPPORTED, NOMEM. */
dp_agent *dp_agent_init(const dp_graph *g, const dp_devices *ds, const dp_agent_config *cfg,
                        const dp_agent_eval_options *eo, uint64_t seed, dp_error *err);
void dp_agent_free(dp_agent *a);

/* One policy update: samples cfg.samples placements, evaluates them, and
 * trains the networks on their rewards. Errors only for the agent's own
 * failures (NOMEM, a placement file it cannot write for --measure); a
 * placement that fails to run is a failed sample, not an error. When the
 * evaluator's cancel flag stops a measurement (or, for agents over every op,
 * is found set between batches of sampling or training), the update is
 * abandoned: the agent is left exactly as before it (the state's n_last is
 * 0). */
dp_status dp_agent_update(dp_agent *a, dp_error *err);

/* Runs up to max_iters (< 0: all) more iterations of the GCN encoder's
 * Deep Graph Infomax pre-training, of pretrain-iters in all; the last one
 * puts back the parameters of the lowest loss and resets the optimiser.
 * dp_agent_update finishes it first when it is not done, so calling this is
 * only needed to see its progress. Nothing to do without an encoder. */
dp_status dp_agent_pretrain(dp_agent *a, int64_t max_iters, dp_error *err);

/* The current state; valid until the next call on a. */
const dp_run_state *dp_agent_get_state(const dp_agent *a);

/* The policy's parameters as one vector of *count floats (the parameter
 * store's values, its tensors in order): what an async distributed run's
 * controllers and server exchange. Writing through it changes the policy. */
float *dp_agent_params(dp_agent *a, size_t *count);
/* Takes values (the count of dp_agent_params) as the policy's parameters,
 * and the preparation (pre-training, warm start) as done, as
 * dp_agent_load_policy does; Adam's moments and everything else stay. */
void dp_agent_params_set(dp_agent *a, const float *values);
/* Sets a's counters and best placement from s: updates, samples,
 * baseline, best_s, best_update, best_sample, best_elapsed_s, elapsed_s,
 * policy_s, eval_s, and best_placement (copied) when not NULL; an async
 * run's server keeps the progress of the shared policy in its agent so
 * that its checkpoint holds it. */
void dp_agent_set_progress(dp_agent *a, const dp_run_state *s);

/* a as a method of the run driver (run.h): its step is dp_agent_update,
 * its preparation dp_agent_pretrain, its checkpoints dp_agent_save and
 * dp_agent_load. */
dp_method dp_agent_method(dp_agent *a);

/* The agent's most likely placement now (greedy decoding of grouper and
 * placer), into out[n_ops]; no training, no evaluation. */
dp_status dp_agent_greedy(dp_agent *a, int32_t *out, dp_error *err);

/* Writes the whole training state (configuration, counters, generator,
 * baseline, best placement, parameters and Adam moments) to path,
 * atomically, with a checksum. */
dp_status dp_agent_save(const dp_agent *a, const char *path, dp_error *err);
/* Restores a state saved by dp_agent_save for the same graph, devices and
 * configuration; the agent is unchanged on error (DP_STATUS_IO: cannot
 * read; PARSE: not an agent checkpoint, truncated, bad checksum;
 * UNSUPPORTED: other version; INVALID: made for another graph, device set
 * or configuration, naming the difference). */
dp_status dp_agent_load(dp_agent *a, const char *path, dp_error *err);

/* Starts a from the parameters of another agent's checkpoint (any graph,
 * any run: Mars's transfer, Table 3): every tensor of a must be in the file
 * with the same name and size; their values are copied, nothing else
 * (counters, baseline, optimiser moments and the best placement stay a's),
 * and the encoder's pre-training counts as done. Errors: IO, PARSE,
 * UNSUPPORTED (as dp_agent_load), INVALID (a tensor missing or of another
 * size, named); a is unchanged on error. */
dp_status dp_agent_load_policy(dp_agent *a, const char *path, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
