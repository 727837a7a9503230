/* dplace: a learned agent's configuration (include/dplace/agent.h): its
 * settings by component, and their rows (include/dplace/settings.h), so
 * that one parser sets any of them by name and a checkpoint's identity is
 * the rows formatted. Adding a knob is one field here and one row in
 * src/agent/agent_config.c; the presets that set it live above
 * (include/dplace/settings_job.h).
 *
 * The structs are nested by component, as the rows' groups are, so that
 * an agent's code reads cfg->placer.hidden or cfg->walks.moves.
 *
 * Layer: agent (src/agent). */
#ifndef DPLACE_AGENT_CONFIG_H
#define DPLACE_AGENT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "dplace/common.h"
#include "dplace/settings.h"
#include "dplace/units.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_AGENT_CHAIN_MAX 64 /* the most elements elite-chain adds to a move */

/* How ops are grouped before the placer places the groups. */
typedef enum dp_agent_grouper_kind {
    DP_AGENT_GROUPER_KIND_LEARNED = 0, /* feed-forward grouper, trained jointly */
    DP_AGENT_GROUPER_KIND_COLOCATION,  /* dp_group colocation (fixed)          */
    DP_AGENT_GROUPER_KIND_METIS,       /* dp_group metis into `groups`          */
    DP_AGENT_GROUPER_KIND_SCOTCH,
    DP_AGENT_GROUPER_KIND_FLUID,
    DP_AGENT_GROUPER_KIND_RANDOM,
    DP_AGENT_GROUPER_KIND_SCOPE,       /* TensorFlow's colocation groups joined
                                          with the layer scope (ColocRL's
                                          per-cell / per-branch groups)       */
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
    DP_AGENT_ALGO_PPO,      /* clipped surrogate, ppo.epochs passes per update   */
    DP_AGENT_ALGO_PPO_CE,   /* PPO, and every ce.every samples a cross-entropy
                               step towards the ce.elites best placements (Post) */
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
    DP_AGENT_WARM_NONE = 0, /* no warm start: the networks' initial values (the papers') */
    DP_AGENT_WARM_BEST,     /* the fastest valid placement of the baseline placers      */
    DP_AGENT_WARM_CPU,      /* then one per dp_place_method up to m-sct, in its order:   */
                            /* cpu, gpu, expert, scotch, mincut, metis, m-topo, m-etf,    */
                            /* m-sct (the accel placers after it only through best)       */
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

/* The per-op features the Hierarchical Planner and ColocRL describe. */
typedef struct dp_agent_features {
    dp_agent_type_ids type_ids;
    int32_t type_vocab;   /* most common op types kept (the rest share one id) */
    int32_t type_dim;     /* learned type embedding size                      */
    int32_t out_slots;    /* outputs described per op                          */
    int32_t out_dims;     /* dimensions described per output                   */
    int32_t adj_per_dir;  /* neighbours described per direction                */
    dp_agent_group_types group_types;
} dp_agent_features;

typedef struct dp_agent_grouper_config {
    dp_agent_grouper_kind kind;
    int32_t groups;       /* learned and partitioning groupers                 */
    int32_t hidden;       /* the learned grouper's hidden units                */
    dp_agent_grouper_kind prior; /* the learned grouper's logits get a constant
                             added at the group a fixed grouping (metis, runs,
                             ...) gives the op, so training starts from
                             contiguous groups, not random mixtures
                             (dplace's; NONE: no prior; other groupers
                             ignore it)                                     */
    float prior_mass;     /* that group's probability at the start (the
                             network's logits equal)                        */
    int32_t scope_depth;  /* scope grouper: leading scope components kept     */
} dp_agent_grouper_config;

/* EAGLE's extra RNN (learned grouper only). */
typedef struct dp_agent_link_config {
    int on;
    int32_t hidden;       /* its LSTM units                                    */
} dp_agent_link_config;

/* Mars's graph encoder. */
typedef struct dp_agent_encoder_config {
    dp_agent_encoder kind;
    dp_agent_op_order op_order; /* encoder=gcn: the placer's op sequence       */
    int32_t gcn_hidden;     /* units per GCN layer                             */
    int32_t gcn_layers;     /* GCN layers, each followed by PReLU              */
    int32_t pretrain_iters; /* Deep Graph Infomax iterations before training   */
    float pretrain_lr;      /* their Adam learning rate                        */
    int train;              /* trained with the placer (0: fixed representations) */
} dp_agent_encoder_config;

typedef struct dp_agent_placer_config {
    dp_agent_placer_kind kind;
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
    int mem_mask;           /* memory-aware decoding: an element may not go to
                               a device its estimated bytes would overflow,
                               given the sample's earlier elements (dplace's) */
    float mem_scale;        /* the load estimate's scale (1: calibrated on the
                               graph's peak memory by liveness)           */
    int32_t seg_len;        /* seq2seq-seg: ops per segment                     */
    int32_t seg_keep;       /* seq2seq-seg, trfxl: segment workspaces kept
                               between the forward and the backward; the
                               others' forwards are recomputed               */
    int32_t txl_layers;     /* trfxl: layers (its width is `hidden`)            */
    int32_t txl_heads;      /* trfxl: attention heads                           */
    int32_t txl_inner;      /* trfxl: feed-forward units                        */
    int32_t txl_mem;        /* trfxl: memory positions from earlier segments    */
    int txl_causal;         /* trfxl: an op attends only to the ones before it  */
    float post_mix;         /* table placer: after a cross-entropy update, each
                               group's distribution becomes (1 - m) p + m / D,
                               p the elites' device frequencies (exact
                               minimiser); 0 < m. Neural placers: unused      */
} dp_agent_placer_config;

/* The imitation warm start (dplace's; DOPPLER). */
typedef struct dp_agent_warm_config {
    dp_agent_warm from;     /* the placement imitated before training          */
    int32_t steps;          /* Adam steps on -log p(that placement)            */
    float lr;               /* their learning rate                              */
} dp_agent_warm_config;

/* The training algorithm and its reward. */
typedef struct dp_agent_train_config {
    int on;                 /* train the policy (0: sample from the initial
                               policy only: the untrained control)        */
    dp_agent_algo algo;
    int32_t batch;          /* placements sampled per update (k)               */
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
    int oom_shaped;         /* out-of-memory placements the simulator timed get
                               -sqrt(t) (1.25 + 4 x), x the worst device's
                               (peak - capacity) / capacity, instead of the
                               failing reward                              */
    int32_t greedy_every;   /* > 0: before every greedy_every-th update (not the
                               first) the policy's greedy placement is
                               evaluated and offered as the best; not a
                               sample (the budget does not count it) and
                               training does not read it (0: only the final
                               policy's, dp_method_ops.final)               */
} dp_agent_train_config;

typedef struct dp_agent_ppo_config {
    int32_t epochs;         /* passes over each update's samples               */
    int32_t minibatches;    /* each pass split into this many shuffled parts  */
    float clip;             /* epsilon of clip(r, 1 - eps, 1 + eps)            */
    dp_agent_ppo_ratio ratio;
} dp_agent_ppo_config;

/* Cross-entropy over the elite placements (algo ppo-ce, and the elite walks). */
typedef struct dp_agent_ce_config {
    int32_t every;          /* samples between two cross-entropy updates       */
    int32_t elites;         /* best placements kept (K of "top K")             */
    int32_t steps;          /* Adam steps per cross-entropy update             */
} dp_agent_ce_config;

/* The elite walks (dplace's expert iteration inside training). */
typedef struct dp_agent_walks_config {
    int32_t moves;          /* > 0: after each update's evaluation, this many
                               element moves (one element to another device,
                               judged by the simulator, kept when no slower)
                               from the update's best samples; the walks'
                               ends join the elites, and the cross-entropy
                               step over the elites (ce) runs with any
                               algorithm (0: off, the papers')              */
    int32_t walks;          /* walks per update, from the update's best
                               samples (on the evaluator's threads)          */
    float critical;         /* share of its moves read off the current
                               placement's simulated critical path          */
    float near;             /* share of the other moves that take an element
                               to the device of an op one of its ops reads
                               from or feeds (the others: a device at random) */
    int32_t chain;          /* > 0: a move that makes the placement slower
                               grows, up to this many more elements, along
                               the data flow, and is kept at the first length
                               that is no slower (at most DP_AGENT_CHAIN_MAX) */
    int train;              /* the update's training reads each walk's end,
                               when faster, in place of the sample it started
                               from (self-imitation)                         */
    int keep;               /* one more walk each update, from the best elite
                               (under the grouping it was found with)        */
} dp_agent_walks_config;

/* A learned agent's settings, by component. */
typedef struct dp_agent_config {
    char preset[32];
    dp_agent_features features;
    dp_agent_grouper_config grouper;
    dp_agent_link_config link;
    dp_agent_encoder_config encoder;
    dp_agent_placer_config placer;
    dp_agent_warm_config warm;
    dp_agent_train_config train;
    dp_agent_ppo_config ppo;
    dp_agent_ce_config ce;
    dp_agent_walks_config walks;
    dp_units_spec units;    /* what a sample places (dplace/units.h; --units,
                               not in the table): OP (zeroed), each op with its
                               colocation group; MODULE, whole modules        */
} dp_agent_config;

/* The groups of the agent's rows, in the order --set help prints them. */
typedef enum dp_agent_config_group {
    DP_AGENT_CONFIG_GROUP_FEATURES = 0,
    DP_AGENT_CONFIG_GROUP_GROUPER,
    DP_AGENT_CONFIG_GROUP_LINK,
    DP_AGENT_CONFIG_GROUP_ENCODER,
    DP_AGENT_CONFIG_GROUP_PLACER,
    DP_AGENT_CONFIG_GROUP_WARM,
    DP_AGENT_CONFIG_GROUP_TRAINING,
    DP_AGENT_CONFIG_GROUP_PPO,
    DP_AGENT_CONFIG_GROUP_CE,
    DP_AGENT_CONFIG_GROUP_WALKS,
    DP_AGENT_CONFIG_GROUP_COUNT
} dp_agent_config_group;

/* The agent's rows, by group; *n their count. Their base values are the
 * Hierarchical Planner as its paper gives it, with dplace's start for its
 * grouper (a METIS prior) and learning rate, and the other parts at the
 * values the presets that use them start from. */
const dp_setting *dp_agent_config_rows(int32_t *n);
/* The group's name as --set help prints it ("placer", "elite walks"), or
 * "?". */
const char *dp_agent_config_group_name(int g);
/* The new name of an agent setting renamed within the last release, or
 * NULL: the old name still sets it (the caller may warn). */
const char *dp_agent_config_renamed(const char *old_name);

/* Every row's base value; preset "" and units OP. */
void dp_agent_config_base(dp_agent_config *cfg);
/* Sets one agent setting by name from text (a renamed one's old name
 * too). DP_STATUS_INVALID naming the key and what it wants for an unknown
 * key or a bad value; cfg unchanged then. */
dp_status dp_agent_config_set(dp_agent_config *cfg, const char *key, const char *value, dp_error *err);
/* Writes every row as "key=value ..." in the rows' order (a checkpoint's
 * identity); returns the length it needed (snprintf's rule). */
size_t dp_agent_config_format(const dp_agent_config *cfg, char *buf, size_t size);
/* Checks a whole configuration (ranges, combinations): DP_STATUS_INVALID
 * with a message naming the setting. */
dp_status dp_agent_config_check(const dp_agent_config *cfg, dp_error *err);

/* Names of the enum values, as dp_agent_config_set spells them ("?" for a
 * value out of range). */
const char *dp_agent_grouper_kind_name(dp_agent_grouper_kind k);
const char *dp_agent_placer_kind_name(dp_agent_placer_kind k);
const char *dp_agent_algo_name(dp_agent_algo a);
const char *dp_agent_encoder_name(dp_agent_encoder e);
const char *dp_agent_warm_name(dp_agent_warm w);

#ifdef __cplusplus
}
#endif
#endif
