/* Agent presets and settings: one table of keys, so that every setting can
 * be overridden by name (dplace optimize --set KEY=VALUE and the component
 * flags), printed, and compared when a checkpoint is resumed. The values of
 * the presets and their sources in the seeds: docs/agents.md. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/agent.h"

static const char *const grouper_names[] = {"learned", "colocation", "metis", "scotch", "fluid",
                                            "random",  "scope",      "none",  "runs"};
_Static_assert(sizeof grouper_names / sizeof grouper_names[0] == DP_AGENT_GROUPER_KIND_COUNT, "a name per grouper");
static const char *const placer_names[] = {"seq2seq-after", "seq2seq-before", "gcn", "table", "seq2seq-seg", "trfxl"};
_Static_assert(sizeof placer_names / sizeof placer_names[0] == DP_AGENT_PLACER_KIND_COUNT, "a name per placer");
static const char *const algo_names[] = {"reinforce", "ppo", "ppo-ce"};
_Static_assert(sizeof algo_names / sizeof algo_names[0] == DP_AGENT_ALGO_COUNT, "a name per algorithm");
static const char *const ppo_ratio_names[] = {"sequence", "decision"};
_Static_assert(sizeof ppo_ratio_names / sizeof ppo_ratio_names[0] == DP_AGENT_PPO_RATIO_COUNT, "a name per ratio");
static const char *const encoder_names[] = {"none", "gcn"};
_Static_assert(sizeof encoder_names / sizeof encoder_names[0] == DP_AGENT_ENCODER_COUNT, "a name per encoder");
static const char *const op_order_names[] = {"topo", "dfs"};
_Static_assert(sizeof op_order_names / sizeof op_order_names[0] == DP_AGENT_OP_ORDER_COUNT, "a name per op order");
static const char *const warm_names[] = {"none",   "best",  "cpu",   "gpu",    "expert", "scotch",
                                         "mincut", "metis", "m-topo", "m-etf", "m-sct"};
_Static_assert(sizeof warm_names / sizeof warm_names[0] == DP_AGENT_WARM_COUNT, "a name per warm start");
static const char *const type_ids_names[] = {"rank", "fixed"};
_Static_assert(sizeof type_ids_names / sizeof type_ids_names[0] == DP_AGENT_TYPE_IDS_COUNT, "a name per type-id scheme");
static const char *const group_types_names[] = {"counts", "embedding"};
_Static_assert(sizeof group_types_names / sizeof group_types_names[0] == DP_AGENT_GROUP_TYPES_COUNT,
               "a name per group-type feature");

const char *dp_agent_grouper_kind_name(dp_agent_grouper_kind k) {
    return (unsigned)k < DP_AGENT_GROUPER_KIND_COUNT ? grouper_names[k] : "?";
}
const char *dp_agent_placer_kind_name(dp_agent_placer_kind k) {
    return (unsigned)k < DP_AGENT_PLACER_KIND_COUNT ? placer_names[k] : "?";
}
const char *dp_agent_algo_name(dp_agent_algo a) { return (unsigned)a < DP_AGENT_ALGO_COUNT ? algo_names[a] : "?"; }
const char *dp_agent_warm_name(dp_agent_warm w) { return (unsigned)w < DP_AGENT_WARM_COUNT ? warm_names[w] : "?"; }
const char *dp_agent_encoder_name(dp_agent_encoder e) {
    return (unsigned)e < DP_AGENT_ENCODER_COUNT ? encoder_names[e] : "?";
}

typedef enum key_kind { KEY_INT, KEY_FLOAT, KEY_DOUBLE, KEY_BOOL, KEY_ENUM } key_kind;

typedef struct key_def {
    const char *name;
    key_kind kind;
    size_t offset;
    double min, max;               /* numbers                   */
    const char *const *names;      /* enums                     */
    int n_names;
    const char *help;
} key_def;

#define OFF(f) offsetof(dp_agent_config, f)
static const key_def keys[] = {
    {"grouper", KEY_ENUM, OFF(grouper), 0, 0, grouper_names, DP_AGENT_GROUPER_KIND_COUNT,
     "how ops are grouped before the placer places the groups: learned (the Hierarchical Planner's feed-forward "
     "grouper), colocation, metis, scotch, fluid, random, scope, none (every op its own group), runs"},
    {"groups", KEY_INT, OFF(groups), 1, 4096, NULL, 0, "groups of the learned and partitioning groupers"},
    {"grouper-hidden", KEY_INT, OFF(grouper_hidden), 1, 4096, NULL, 0, "hidden units of the learned grouper"},
    {"grouper-prior", KEY_ENUM, OFF(grouper_prior), 0, 0, grouper_names, DP_AGENT_GROUPER_KIND_COUNT,
     "the learned grouper starts near this fixed grouping (none; metis, scotch, fluid, colocation, scope, runs); "
     "other groupers ignore it"},
    {"grouper-prior-mass", KEY_FLOAT, OFF(grouper_prior_mass), 0.01, 0.9999, NULL, 0,
     "the probability of each op's prior group at the start (its logit gets ln(m (groups - 1) / (1 - m)))"},
    {"scope-depth", KEY_INT, OFF(scope_depth), 0, 64, NULL, 0, "scope components the scope grouper keeps"},
    {"link", KEY_BOOL, OFF(link), 0, 1, NULL, 0,
     "EAGLE's extra RNN from the learned grouper's parameters to the placer's inputs"},
    {"link-hidden", KEY_INT, OFF(link_hidden), 1, 4096, NULL, 0, "LSTM units of the link RNN"},
    {"encoder", KEY_ENUM, OFF(encoder), 0, 0, encoder_names, DP_AGENT_ENCODER_COUNT,
     "op encoder: none (groups) or gcn (every op, Mars)"},
    {"op-order", KEY_ENUM, OFF(op_order), 0, 0, op_order_names, DP_AGENT_OP_ORDER_COUNT,
     "encoder=gcn: the order the placer visits the ops in: topo (the graph's FIFO topological order) or dfs "
     "(depth-first: a chain's ops follow each other)"},
    {"gcn-hidden", KEY_INT, OFF(gcn_hidden), 1, 4096, NULL, 0, "units per layer of the GCN encoder"},
    {"gcn-layers", KEY_INT, OFF(gcn_layers), 1, 8, NULL, 0, "layers of the GCN encoder"},
    {"pretrain-iters", KEY_INT, OFF(pretrain_iters), 0, 1e7, NULL, 0,
     "Deep Graph Infomax iterations of the GCN encoder before training (0: none)"},
    {"pretrain-lr", KEY_FLOAT, OFF(pretrain_lr), 0, 100, NULL, 0, "Adam learning rate of the pre-training"},
    {"encoder-train", KEY_BOOL, OFF(encoder_train), 0, 1, NULL, 0,
     "train the encoder with the placer (no: fixed representations, Mars Table 1)"},
    {"placer", KEY_ENUM, OFF(placer), 0, 0, placer_names, DP_AGENT_PLACER_KIND_COUNT,
     "the network that places the groups: seq2seq-after (attention after the decoder), seq2seq-before (EAGLE's, "
     "before it), gcn, table (Post's per-group distributions), seq2seq-seg (Mars's segments), trfxl"},
    {"seg-len", KEY_INT, OFF(seg_len), 1, 1e6, NULL, 0, "seq2seq-seg: ops per segment"},
    {"seg-keep", KEY_INT, OFF(seg_keep), 0, 1e6, NULL, 0,
     "seq2seq-seg, trfxl: segments whose activations stay for the backward (the others are recomputed; 0: all)"},
    {"txl-layers", KEY_INT, OFF(txl_layers), 1, 8, NULL, 0, "trfxl: layers (width: hidden)"},
    {"txl-heads", KEY_INT, OFF(txl_heads), 1, 256, NULL, 0, "trfxl: attention heads (dividing hidden)"},
    {"txl-inner", KEY_INT, OFF(txl_inner), 1, 65536, NULL, 0, "trfxl: feed-forward units"},
    {"txl-mem", KEY_INT, OFF(txl_mem), 0, 1e6, NULL, 0, "trfxl: memory positions kept from earlier segments"},
    {"txl-causal", KEY_BOOL, OFF(txl_causal), 0, 1, NULL, 0, "trfxl: each op attends only to the ones before it"},
    {"hidden", KEY_INT, OFF(hidden), 1, 4096, NULL, 0, "LSTM (seq2seq) or graph-convolution (gcn) units of the placer"},
    {"attn-dim", KEY_INT, OFF(attn_dim), 1, 4096, NULL, 0, "attention units"},
    {"dev-emb", KEY_INT, OFF(dev_emb), 1, 4096, NULL, 0, "device embedding size"},
    {"group-types", KEY_ENUM, OFF(group_types), 0, 0, group_types_names, DP_AGENT_GROUP_TYPES_COUNT,
     "op types in the group embedding"},
    {"type-ids", KEY_ENUM, OFF(type_ids), 0, 0, type_ids_names, DP_AGENT_TYPE_IDS_COUNT,
     "op type ids: rank (most common types of the graph) or fixed (by name, the same on every graph)"},
    {"type-vocab", KEY_INT, OFF(type_vocab), 2, 100000, NULL, 0, "op types with an id of their own (type-ids=rank)"},
    {"type-dim", KEY_INT, OFF(type_dim), 1, 1024, NULL, 0, "type embedding size"},
    {"out-slots", KEY_INT, OFF(out_slots), 1, 64, NULL, 0, "outputs described per op"},
    {"out-dims", KEY_INT, OFF(out_dims), 1, 16, NULL, 0, "dimensions described per output"},
    {"adj-per-dir", KEY_INT, OFF(adj_per_dir), 0, 64, NULL, 0, "neighbours described per direction"},
    {"tanh-c", KEY_FLOAT, OFF(tanh_c), 0, 1000, NULL, 0, "C of C tanh(l / T); 0: plain logits"},
    {"temperature", KEY_FLOAT, OFF(temperature), 1e-3, 1000, NULL, 0, "T of C tanh(l / T)"},
    {"stick", KEY_FLOAT, OFF(stick), 0, 50, NULL, 0,
     "seq2seq placers: added to the logit of the previous op's (group's) device when it is a GPU, a prior for "
     "placing neighbours in the sequence together (dplace's, not in the seeds; 0: none)"},
    {"noise-amp", KEY_FLOAT, OFF(noise_amp), 0, 100, NULL, 0, "logit noise amplitude"},
    {"noise-updates", KEY_INT, OFF(noise_updates), 0, 1e9, NULL, 0, "updates with logit noise"},
    {"algo", KEY_ENUM, OFF(algo), 0, 0, algo_names, DP_AGENT_ALGO_COUNT,
     "training algorithm: reinforce, ppo, ppo-ce (PPO with cross-entropy over elite placements)"},
    {"samples", KEY_INT, OFF(samples), 1, 1024, NULL, 0, "placements sampled per update"},
    {"lr", KEY_FLOAT, OFF(lr), 0, 100, NULL, 0, "Adam learning rate"},
    {"entropy", KEY_FLOAT, OFF(entropy), 0, 100, NULL, 0, "entropy bonus per decision (0: none)"},
    {"entropy-sum", KEY_BOOL, OFF(entropy_sum), 0, 1, NULL, 0,
     "entropy bonus on the sum over a placement's decisions, not their mean"},
    {"clip", KEY_FLOAT, OFF(clip), 0, 1e9, NULL, 0, "gradient-norm clip (0: none)"},
    {"clip-per-network", KEY_BOOL, OFF(clip_per_network), 0, 1, NULL, 0,
     "clip grouper and placer gradients each on its own"},
    {"baseline-decay", KEY_FLOAT, OFF(baseline_decay), 0, 1, NULL, 0, "EMA decay of the reward baseline"},
    {"baseline-window", KEY_INT, OFF(baseline_window), 0, 100000, NULL, 0,
     "> 0: simple moving average of the last N rewards"},
    {"baseline-init-fail", KEY_BOOL, OFF(baseline_init_fail), 0, 1, NULL, 0, "start the baseline at the failing reward"},
    {"fail-reward", KEY_DOUBLE, OFF(fail_reward), -1e9, 0, NULL, 0, "reward of an invalid placement (0: automatic)"},
    {"mem-mask", KEY_BOOL, OFF(mem_mask), 0, 1, NULL, 0,
     "memory-aware decoding: an element may not go to a device its estimated bytes would overflow, given the "
     "sample's elements placed before it (not for placer=trfxl)"},
    {"mem-scale", KEY_FLOAT, OFF(mem_scale), 0.01, 100, NULL, 0,
     "scale of the memory mask's load estimate (1: the graph's bytes scaled to its peak memory by liveness)"},
            {"oom-shaped", KEY_BOOL, OFF(oom_shaped), 0, 1, NULL, 0,
     "out-of-memory samples rewarded by time and overflow, not the failing reward"},
    {"warm-start", KEY_ENUM, OFF(warm_start), 0, 0, warm_names, DP_AGENT_WARM_COUNT,
     "imitate a baseline placer's placement before training: none, best (the fastest baseline), or a placer "
     "(cpu, gpu, expert, scotch, mincut, metis, m-topo, m-etf, m-sct)"},
    {"warm-steps", KEY_INT, OFF(warm_steps), 1, 1e6, NULL, 0, "Adam steps of the imitation warm start"},
    {"warm-lr", KEY_FLOAT, OFF(warm_lr), 0, 100, NULL, 0, "learning rate of the imitation warm start"},
    {"train", KEY_BOOL, OFF(train), 0, 1, NULL, 0,
     "train the policy (no: every update samples from the initial policy: the untrained control)"},
    {"valid-only-after", KEY_INT, OFF(valid_only_after), 0, 1e9, NULL, 0, "updates after which only valid samples train"},
    {"ppo-epochs", KEY_INT, OFF(ppo_epochs), 1, 1000, NULL, 0, "PPO passes over each update's samples"},
    {"ppo-minibatches", KEY_INT, OFF(ppo_minibatches), 1, 1024, NULL, 0,
     "PPO: shuffled parts each pass is split into (at most samples)"},
    {"ppo-clip", KEY_FLOAT, OFF(ppo_clip), 0, 10, NULL, 0, "PPO clip ratio epsilon"},
    {"ppo-ratio", KEY_ENUM, OFF(ppo_ratio), 0, 0, ppo_ratio_names, DP_AGENT_PPO_RATIO_COUNT,
     "PPO ratio per sequence (per network and sample) or per decision"},
    {"ce-every", KEY_INT, OFF(ce_every), 1, 1e9, NULL, 0, "ppo-ce: samples between cross-entropy updates"},
    {"ce-elites", KEY_INT, OFF(ce_elites), 1, 1024, NULL, 0, "ppo-ce: elite placements kept"},
    {"ce-steps", KEY_INT, OFF(ce_steps), 1, 1000, NULL, 0, "ppo-ce: Adam steps per cross-entropy update (neural placers)"},
    {"elite-moves", KEY_INT, OFF(elite_moves), 0, 1e6, NULL, 0,
     "element moves per update that refine the update's best sample by the simulator; the result joins the "
     "elites, which the cross-entropy step (ce-every, ce-elites, ce-steps) imitates, with any algorithm "
     "(dplace's expert iteration; 0: off)"},
    {"elite-walks", KEY_INT, OFF(elite_walks), 1, 64, NULL, 0,
     "elite refinement: walks per update, each from one of the update's best samples (run on the evaluator's threads)"},
    {"elite-critical", KEY_FLOAT, OFF(elite_critical), 0, 1, NULL, 0,
     "elite refinement: share of the moves read off the simulated critical path (the element of an op waiting for a "
     "transfer to the producer's device, or the producer's to the consumer's)"},
    {"elite-near", KEY_FLOAT, OFF(elite_near), 0, 1, NULL, 0,
     "elite refinement: share of the moves that take an element to the device of a neighbouring op (the others: a device "
     "at random)"},
    {"elite-chain", KEY_INT, OFF(elite_chain), 0, DP_AGENT_CHAIN_MAX, NULL, 0,
     "elite refinement: a move that makes the placement slower grows, up to this many more elements, along the data "
     "flow (a neighbouring element joins it each time) and is kept at the first length that is no slower (0: off)"},
    {"elite-train", KEY_BOOL, OFF(elite_train), 0, 1, NULL, 0,
     "elite refinement: the update's training reads each walk's end, when faster, in place of the sample it started "
     "from (self-imitation through the policy-gradient step itself)"},
    {"elite-keep", KEY_BOOL, OFF(elite_keep), 0, 1, NULL, 0,
     "elite refinement: one more walk each update, from the best elite under its own grouping, so the best so far "
     "goes on being refined across updates; once that walk leads, the run's best no longer depends on training (the "
     "untrained control finds the same: docs/agents.md)"},
    {"greedy-every", KEY_INT, OFF(greedy_every), 0, 1e9, NULL, 0,
     "the policy's greedy placement evaluated before every N-th update: a candidate for the best, not a sample, in the "
     "per-update log's greedy_s (0: only the final policy's)"},
    {"post-mix", KEY_FLOAT, OFF(post_mix), 0, 1, NULL, 0,
     "table placer: weight of the uniform distribution mixed in after a cross-entropy update"},
};
#undef OFF
enum { N_KEYS = sizeof keys / sizeof keys[0] };

const char *const *dp_agent_config_keys(void) {
    static const char *names[N_KEYS + 1];
    for (int i = 0; i < N_KEYS; i++) names[i] = keys[i].name;
    return names;
}

const char *dp_agent_config_key_help(const char *key) {
    for (int i = 0; key && i < N_KEYS; i++)
        if (!strcmp(keys[i].name, key)) return keys[i].help;
    return NULL;
}

static const char *const preset_names[] = {"hp",   "colocrl",         "eagle",        "eagle-ppo-ce",
                                           "post", "mars",            "mars-nopretrain", "mars-seq2seq",
                                           "mars-trfxl", "mars-dplace", "dplace", NULL};
const char *const *dp_agent_preset_names(void) { return preset_names; }

/* The Hierarchical Planner as seed 001 describes it (Sections 2 and 3),
 * with dplace's start for its grouper; the base of every preset after it. */
static void preset_hp_seed(dp_agent_config *c) {
    memset(c, 0, sizeof *c);
    c->elite_walks = 1; /* elite refinement off (dplace's; --set elite-moves=N) */
    snprintf(c->preset, sizeof c->preset, "hp");
    c->type_vocab = 200, c->type_dim = 20;            /* "embedding of size 20 ... 200 most common"  */
    c->out_slots = 6, c->out_dims = 4;                /* "output edges to 6 ... 4 elements"           */
    c->adj_per_dir = 6;                               /* "12 (6 for each direction)"                  */
    c->group_types = DP_AGENT_GROUP_TYPES_COUNTS;     /* "count of each operation type in the group"  */
    c->grouper = DP_AGENT_GROUPER_KIND_LEARNED;
    c->groups = 256, c->grouper_hidden = 64;          /* "hidden size of 64", "256 in our experiments" */
    /* dplace's: the seed's uniform start leaves the grouper at ln 256 nats per
     * op for 300 updates (random mixtures of ops); a METIS prior of mass
     * 0.995: best 3.69 -> 2.39 s, mean 4.2 -> 2.7 s on nmt4 (0.92: 2.87 s;
     * docs/agents.md); none: the seed's */
    c->grouper_prior = DP_AGENT_GROUPER_KIND_METIS, c->grouper_prior_mass = 0.995f;
    c->scope_depth = 3;
    c->placer = DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER;   /* attention after the decoder (EAGLE Fig. 4b)  */
    c->hidden = 256, c->attn_dim = 256, c->dev_emb = 256; /* "LSTM hidden size of 256"              */
    c->tanh_c = 5.0f, c->temperature = 10.0f;         /* "C=5.0, and temperature T=10.0"             */
    c->noise_amp = 0.1f, c->noise_updates = 500;      /* "first 500 ... max amplitude of 0.1"         */
    c->mem_mask = 0, c->mem_scale = 1.0f;             /* dplace's memory-aware decoding: off       */
    c->warm_start = DP_AGENT_WARM_NONE;               /* not in the seeds: the networks' initial values */
    c->warm_steps = 200, c->warm_lr = 0.001f;         /* for --set warm-start=...                     */
    c->train = 1;
    c->algo = DP_AGENT_ALGO_REINFORCE;
    c->samples = 4;                                   /* "m=1 and k=4"                                */
    c->lr = 0.001f, c->clip = 1.0f;                   /* "norm 1.0"; the paper's lr 0.1, and 0.01 too,
                                                         collapse the placer here: Adam's first steps
                                                         move every weight by lr whatever the advantage,
                                                         and at 0.01 one update takes the placer's
                                                         entropy from ln 5 = 1.61 to 0.45 per decision
                                                         (docs/agents.md): --set lr=0.1 gives the paper's */
    c->clip_per_network = 1;                          /* "We train both policies ... clipping of norm 1.0" */
    c->baseline_decay = 0.9f;                         /* EMA of the reward; decay not given: ours     */
    c->fail_reward = -10.0;                           /* "large negative reward of -10"               */
    c->valid_only_after = 500;                        /* "only for valid placements after 500 steps"  */
    c->link_hidden = 64;                              /* link off; size for --set link=yes            */
    /* PPO and cross-entropy settings for --set algo=ppo|ppo-ce: EAGLE's */
    c->ppo_epochs = 4, c->ppo_minibatches = 1, c->ppo_clip = 0.3f;
    c->ppo_ratio = DP_AGENT_PPO_RATIO_DECISION;
    c->ce_every = 50, c->ce_elites = 5, c->ce_steps = 1, c->post_mix = 0.1f;
    /* Mars's parts, for --set encoder=gcn: its sizes (preset_mars) */
    c->gcn_hidden = 256, c->gcn_layers = 3, c->pretrain_lr = 0.001f, c->encoder_train = 1;
    c->seg_len = 128, c->seg_keep = 16;
    c->txl_layers = 2, c->txl_heads = 8, c->txl_inner = 1024, c->txl_mem = 128, c->txl_causal = 0;
}

/* dplace's elite refinement (issue 23; docs/agents.md, "Elite refinement"):
 * 2 walks of 100 moves per update from the update's best samples, 90% of the
 * moves read off the simulated critical path. every_update: a cross-entropy
 * step of 2 Adam steps on the best elite every update (the REINFORCE
 * presets; PPO-CE keeps its own interval). */
static void set_refinement(dp_agent_config *c, int every_update) {
    c->elite_moves = 100, c->elite_walks = 2, c->elite_critical = 0.9f;
    if (every_update) c->ce_every = c->samples, c->ce_elites = 1, c->ce_steps = 2;
}

/* The hp preset: the Hierarchical Planner with dplace's elite refinement and a cross-entropy step on the best
 * elite every update (issue 23, session 12; ColocRL's settings, below; not in the seed: --set elite-moves=0 is
 * the Hierarchical Planner as published). bench_learn's hp cells, 4,000 placements, seed 1, without -> with
 * (controls without -> with): inception_v3 k40x2 0.115 -> 0.093 s (0.156 -> 0.134), resnet152 k40x2 1.444 ->
 * 1.421 (7.512 -> 5.117), nmt2 k40x2 1.958 -> 1.551 (2.481 -> 2.006), nmt4 k40x4 2.387 -> 2.050 (2.864 ->
 * 2.480), rnnlm k40x2 1.440 -> 1.329 (1.621 -> 1.430); docs/agents.md */
static void preset_hp(dp_agent_config *c) {
    preset_hp_seed(c);
    set_refinement(c, 1);
    c->elite_chain = 4; /* session 14, without -> with: nmt4 2.050 -> 1.998 s, resnet152 1.421 -> 1.417, rnnlm
                           1.329 -> 1.287, inception_v3 0.093 -> 0.092; docs/agents.md, "Grown moves" */
}

/* ColocRL (seed 004, Section 3); numbers the extraction lost come from the
 * Hierarchical Planner (same authors, same setting): docs/agents.md. */
static void preset_colocrl(dp_agent_config *c) {
    preset_hp_seed(c);
    snprintf(c->preset, sizeof c->preset, "colocrl");
    c->grouper = DP_AGENT_GROUPER_KIND_SCOPE;         /* colocation groups + per-cell/branch groups   */
    c->group_types = DP_AGENT_GROUP_TYPES_EMBEDDING;  /* op embedding per group: learned type vector  */
    c->noise_amp = 0.0f, c->noise_updates = 0;        /* no logit noise in ColocRL                    */
    c->baseline_decay = 0.0f, c->baseline_window = 10;/* "simple moving average baseline"             */
    c->baseline_init_fail = 1;                        /* "initializing the baseline with the failing signal" */
    c->fail_reward = 0.0;                             /* failing signal set per graph: automatic      */
    c->lr = 0.001f;                                   /* seed 004's value lost; 0.01 collapsed the placer
                                                         on rnnlm k40x2 in 5 updates (issue 23,
                                                         docs/agents.md); hp's 0.001 does not          */
    /* dplace's elite refinement with a cross-entropy step on the best elite every update (issue 23; not in
     * the seed: --set elite-moves=0 is ColocRL as published). bench_learn's ColocRL cells, 1,000 placements,
     * seed 1, without -> with (controls with it): rnnlm k40x2 1.716 -> 1.533 s (1.651), rnnlm k40x4 1.703 ->
     * 1.529 (1.632), nmt2 k40x2 2.151 -> 1.624 (2.105), nmt2 k40x4 1.792 -> 1.518 (1.829), inception_v3
     * k40x2 0.112 -> 0.068 (0.073), k40x4 0.079 -> 0.057 (0.061); docs/agents.md */
    set_refinement(c, 1);
}

/* EAGLE (seed 003, Sections III and IV.C): the Hierarchical Planner's
 * features and grouper, the extra link RNN, the seq2seq placer with
 * attention before the decoder, PPO. What the paper leaves open is the
 * Hierarchical Planner's (it was reproduced from the same TensorFlow
 * grappler code): docs/agents.md. */
static void preset_eagle(dp_agent_config *c) {
    preset_hp_seed(c);
    snprintf(c->preset, sizeof c->preset, "eagle");
    c->groups = 256, c->grouper_hidden = 64;          /* "64 hidden units", "number of groups ... 256" */
    c->link = 1, c->link_hidden = 64;                 /* "an extra RNN ... parameters of the grouper
                                                         into inputs of the placer"; size: ours       */
    c->placer = DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE;  /* "attention score is applied before ... decoder" */
    c->hidden = 512, c->attn_dim = 512;               /* "Both ... LSTM layers have a hidden size of 512" */
    c->noise_amp = 0.0f, c->noise_updates = 0;        /* not mentioned for EAGLE                       */
    c->tanh_c = 0.0f, c->temperature = 1.0f;          /* plain logits: the seed names no squashing; with
                                                         the HP's 5 tanh(l / 10) PPO's first steps
                                                         saturate the logits and it stops learning
                                                         (docs/agents.md)                             */
    c->algo = DP_AGENT_ALGO_PPO;
    c->samples = 10, c->ppo_epochs = 4;               /* "10 placements as a minibatch ... 4 times"    */
    c->ppo_clip = 0.3f, c->entropy = 0.01f;           /* "clip ratio ... 0.3", "coefficient of entropy ... 0.01" */
    c->lr = 0.0005f, c->clip = 1.0f;                  /* "norm ... 1.0"; the seed's lr 0.01, and 0.003,
                                                         collapse gnmt4's placer within a few updates
                                                         onto one out-of-memory placement
                                                         (docs/agents.md): --set lr=0.01             */
    c->grouper_prior = DP_AGENT_GROUPER_KIND_METIS;   /* dplace's, as hp's (with lr 0.0005: gnmt4 best
                                                         1.803 -> 1.472 s in 500 placements)        */
    c->ce_every = 50, c->ce_elites = 5;               /* PPO+CE: "interval ... 50", "top 5"           */
}

static void preset_eagle_ppo_ce(dp_agent_config *c) {
    preset_eagle(c);
    snprintf(c->preset, sizeof c->preset, "eagle-ppo-ce");
    c->algo = DP_AGENT_ALGO_PPO_CE;
    /* dplace's elite refinement of the elites its cross-entropy step imitates (issue 23, session 9; not the
     * seed's: --set elite-moves=0 is EAGLE's PPO+CE). bench_learn's cells, 1,000 placements, seed 1, without ->
     * with (controls with it): inception_v3 0.057 -> 0.056 s (0.086), gnmt4 1.603 -> 1.360 (1.544), bert_base
     * 3.898 -> 3.404 (3.987); docs/agents.md. The eagle preset (PPO alone) stays the seed's: refinement brings
     * the cross-entropy step with it, which would make the two presets one */
    set_refinement(c, 0);
}

/* Post (Gao, Chen and Li, NeurIPS 2018, as seed 003 describes it): one
 * distribution per group, starting uniform, PPO every few samples and a
 * cross-entropy minimisation over the elites every ce_every samples, after
 * which each distribution is mixed with the uniform one. The grouping,
 * mixing weight and PPO sizes are our choices: docs/agents.md. */
static void preset_post(dp_agent_config *c) {
    preset_eagle_ppo_ce(c);
    snprintf(c->preset, sizeof c->preset, "post");
    c->grouper = DP_AGENT_GROUPER_KIND_METIS, c->groups = 256; /* fixed groups, as EAGLE's Table II  */
    c->link = 0;
    c->placer = DP_AGENT_PLACER_KIND_TABLE;
    c->tanh_c = 0.0f, c->temperature = 1.0f;          /* plain logits                              */
    c->entropy = 0.0f;                                /* the uniform mixing explores               */
    c->ppo_clip = 0.2f;                               /* PPO's usual epsilon                       */
    c->lr = 0.003f;                                   /* EAGLE's before it moved to 0.0005         */
    c->post_mix = 0.02f;                              /* issue 23: 0.3 kept a quarter of the groups
                                                         at random, 1,000 placements left Post
                                                         behind MinCut on bert_base (4.470 s) and
                                                         0.02 beats it (3.519 s, 3 seeds;
                                                         docs/agents.md)                          */
    /* dplace's elite refinement (issue 23; not Post's: --set elite-moves=0 is Post as seed 003 describes it).
     * Without it the table converges on local optima slower than the expert (greedy within 2% of the best):
     * bench_learn's Post cells, 1,000 placements, seed 1, without -> with (controls with it): inception_v3
     * 0.075 -> 0.045 s (0.085), gnmt4 1.549 -> 1.374 (1.460), bert_base 3.519 -> 2.808 (3.950); 100 x 2
     * random moves: 0.055, 1.383, 2.915; the critical share: the dplace preset's measurements */
    set_refinement(c, 0);
}

/* dplace's own composition (issue 23; not a paper's): one device
 * distribution per METIS group trained by PPO and cross-entropy over the
 * elites, whose elites are refined by the simulator every update
 * (docs/agents.md, "Elite refinement"). README's main job. Today it is the
 * post preset with its refinement (both measured in post's comment and
 * below); it stays fixed under this name whatever the post preset
 * becomes, and dplace's next changes land here. */
static void preset_dplace(dp_agent_config *c) {
    preset_post(c);
    snprintf(c->preset, sizeof c->preset, "dplace");
    c->elite_moves = 100, c->elite_walks = 2;         /* Post's cells of bench_learn, 1,000 placements, seed 1,
                                                         post -> post with 100 x 2 random moves: inception_v3
                                                         0.075 -> 0.055 s, gnmt4 1.549 -> 1.383, bert_base
                                                         3.519 -> 2.915 (controls 0.092, 1.630, 4.310);
                                                         300 moves: no better per second (nmt4)       */
    c->elite_critical = 0.9f;                         /* nmt4 k40x4, 200 updates, seeds 1 and 2: 0 1.746 1.740 s,
                                                         0.4 1.679 1.666, 0.7 1.604 1.689, 0.9 1.597 1.648,
                                                         1 1.624 (seed 1)                          */
}

/* Mars (seed 002, Sections 3 and 4.2): node features (one-hot op type,
 * input and output shapes), a GCN encoder pre-trained by Deep Graph
 * Infomax, the segment-level seq2seq placer over every op, PPO. What the
 * paper leaves open follows the PyTorch reference of the policy
 * (../shared/anchors/torch_mars_policy.py): docs/agents.md. */
static void preset_mars(dp_agent_config *c) {
    preset_hp_seed(c);
    snprintf(c->preset, sizeof c->preset, "mars");
    c->type_ids = DP_AGENT_TYPE_IDS_FIXED;            /* "encode the operation types by one-hot encoding":
                                                         ids by name, the same on every graph (Table 3) */
    c->out_slots = 2, c->out_dims = 4;                /* input and output shapes, 8 numbers each (the
                                                         reference); counts not given in the paper      */
    c->encoder = DP_AGENT_ENCODER_GCN;
    c->gcn_hidden = 256, c->gcn_layers = 3;           /* "three-layers of GCNs with 256 hidden units"   */
    c->pretrain_iters = 1000;                         /* "pre-train ... for 1000 iterations and save the
                                                         parameters corresponding to the lowest loss"   */
    c->pretrain_lr = 0.001f;                          /* not given: Deep Graph Infomax's own           */
    c->encoder_train = 1;                             /* "train the encoder and placer ... jointly"     */
    c->grouper = DP_AGENT_GROUPER_KIND_NONE;          /* no grouping: every op is placed                */
    c->link = 0;
    c->placer = DP_AGENT_PLACER_KIND_SEQ2SEQ_SEG;     /* "segment-level sequence-to-sequence model"     */
    c->seg_len = 128;                                 /* "The length of the segment is set to 128"      */
    c->seg_keep = 16;                                 /* memory: 16 segment workspaces, the rest recomputed */
    c->hidden = 512, c->attn_dim = 512, c->dev_emb = 512; /* "Both hidden LSTM layers have a size of 512";
                                                         attention and device embedding: the reference's */
    c->tanh_c = 0.0f, c->temperature = 1.0f;          /* logits = Linear(h) in the reference            */
    c->noise_amp = 0.0f, c->noise_updates = 0;
    c->algo = DP_AGENT_ALGO_PPO;                      /* "proximal policy optimization"                 */
    c->samples = 20, c->ppo_minibatches = 4;          /* "For every 20 sampled placements, we shuffled
                                                         them into four mini-batches"                   */
    c->ppo_epochs = 3;                                /* "repeating this for three epochs"              */
    c->ppo_clip = 0.2f;                               /* "The clip ratio ... 0.2"                       */
    c->entropy = 0.001f, c->entropy_sum = 0;          /* "coefficient of entropy ... 0.001", on the mean
                                                         entropy per op: on the summed entropy (the
                                                         reference's; --set entropy-sum=yes) the policy
                                                         stayed uniform on bert_base (docs/agents.md)   */
    c->lr = 3e-4f, c->clip = 1.0f;                    /* "Adam ... 0.0003 and gradient clipping with a
                                                         1.0 norm"                                      */
    c->clip_per_network = 0;                          /* one norm over encoder and placer (reference)   */
    c->baseline_decay = 0.99f;                        /* Eq. 7: "We set mu to 0.99"                     */
    c->fail_reward = -10.0;                           /* "an extremely long per-step time ... such as
                                                         100 seconds": -sqrt(100)                       */
    c->valid_only_after = 1000000000;                 /* every sample trains                            */
    c->warm_start = DP_AGENT_WARM_BEST;               /* dplace's (DOPPLER's imitation warm start): the
                                                         paper is silent on the placer's start, and from
                                                         the uniform one the policy stayed random on the
                                                         simulator (docs/agents.md, "Mars presets");
                                                         --set warm-start=none is the paper's start       */
    c->warm_lr = 0.001f;                              /* at the paper's 512 units: 0.01 diverges on
                                                         bert_base by step 6 (Adam moves every weight of
                                                         a 512-wide matrix by ~lr at once); the benches'
                                                         32-unit networks take 0.01 (0.001 fits too little
                                                         there), docs/agents.md                          */
}

/* Mars without the Deep Graph Infomax pre-training (Table 2). */
static void preset_mars_nopretrain(dp_agent_config *c) {
    preset_mars(c);
    snprintf(c->preset, sizeof c->preset, "mars-nopretrain");
    c->pretrain_iters = 0;
}

/* Table 1's plain seq2seq placer: Mars with one segment over the whole
 * op sequence (the attention spans every op). */
static void preset_mars_seq2seq(dp_agent_config *c) {
    preset_mars(c);
    snprintf(c->preset, sizeof c->preset, "mars-seq2seq");
    c->placer = DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE;
}

/* Table 1's Transformer-XL placer (and, without pre-training, Table 2's
 * encoder-placer, GDP, with a GCN for its GraphSAGE). Its sizes are not in
 * seed 002: ours (docs/agents.md). */
static void preset_mars_trfxl(dp_agent_config *c) {
    preset_mars(c);
    snprintf(c->preset, sizeof c->preset, "mars-trfxl");
    c->placer = DP_AGENT_PLACER_KIND_TRFXL;
    c->hidden = 256;                                  /* the width of the GCN's representations       */
    c->txl_layers = 2, c->txl_heads = 8, c->txl_inner = 1024;
    c->txl_mem = 128;                                 /* the previous segment                          */
    c->txl_causal = 0;                                /* the whole graph is known: no mask             */
}

/* Mars with dplace's sequence prior (not in the seeds; docs/agents.md):
 * the ops in depth-first topological order, so neighbours in the sequence
 * are mostly neighbours in the graph, and a constant bonus on the logit of
 * the previous op's device when it is a GPU. A random placement scatters
 * every op's neighbours over the devices and is transfer-bound whatever the
 * policy prefers; with the prior, the first samples are runs of ops on one
 * GPU (measured: inception_v3's first-update mean 0.36 -> 0.17 s,
 * docs/agents.md). */
static void preset_mars_dplace(dp_agent_config *c) {
    preset_mars(c);
    snprintf(c->preset, sizeof c->preset, "mars-dplace");
    c->op_order = DP_AGENT_OP_ORDER_DFS;
    c->stick = 5.0f;                                  /* p(same GPU) = e^5 / (e^5 + D - 1): 0.97 on 5 devices */
}

int dp_agent_preset(const char *name, dp_agent_config *cfg) {
    if (!name) return -1;
    if (strcmp(name, "hp") == 0) preset_hp(cfg);
    else if (strcmp(name, "colocrl") == 0) preset_colocrl(cfg);
    else if (strcmp(name, "eagle") == 0) preset_eagle(cfg);
    else if (strcmp(name, "eagle-ppo-ce") == 0) preset_eagle_ppo_ce(cfg);
    else if (strcmp(name, "post") == 0) preset_post(cfg);
    else if (strcmp(name, "mars") == 0) preset_mars(cfg);
    else if (strcmp(name, "mars-nopretrain") == 0) preset_mars_nopretrain(cfg);
    else if (strcmp(name, "mars-seq2seq") == 0) preset_mars_seq2seq(cfg);
    else if (strcmp(name, "mars-trfxl") == 0) preset_mars_trfxl(cfg);
    else if (strcmp(name, "mars-dplace") == 0) preset_mars_dplace(cfg);
    else if (strcmp(name, "dplace") == 0) preset_dplace(cfg);
    else return -1;
    return 0;
}

static const key_def *find_key(const char *name) {
    for (int i = 0; i < N_KEYS; i++)
        if (strcmp(keys[i].name, name) == 0) return &keys[i];
    return NULL;
}

dp_status dp_agent_config_set(dp_agent_config *cfg, const char *key, const char *value, dp_error *err) {
    const key_def *k = find_key(key);
    if (!k) return dp_error_set(err, DP_STATUS_INVALID, "agent: unknown setting \"%.64s\"", key);
    char *base = (char *)cfg + k->offset;
    if (k->kind == KEY_ENUM) {
        for (int i = 0; i < k->n_names; i++)
            if (strcmp(value, k->names[i]) == 0) {
                *(int *)base = i;
                return DP_STATUS_OK;
            }
        char list[256] = "";
        for (int i = 0; i < k->n_names; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", k->names[i]);
        return dp_error_set(err, DP_STATUS_INVALID, "agent: %s \"%.64s\" is not one of %s", key, value, list);
    }
    if (k->kind == KEY_BOOL) {
        if (strcmp(value, "1") == 0 || strcmp(value, "yes") == 0 || strcmp(value, "true") == 0) *(int *)base = 1;
        else if (strcmp(value, "0") == 0 || strcmp(value, "no") == 0 || strcmp(value, "false") == 0) *(int *)base = 0;
        else return dp_error_set(err, DP_STATUS_INVALID, "agent: %s wants yes or no, not \"%.64s\"", key, value);
        return DP_STATUS_OK;
    }
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (!*value || *end || errno || !isfinite(v) || v < k->min || v > k->max ||
        (k->kind == KEY_INT && v != floor(v)))
        return dp_error_set(err, DP_STATUS_INVALID, "agent: %s wants %s in [%g, %g], not \"%.64s\"", key,
                            k->kind == KEY_INT ? "a whole number" : "a number", k->min, k->max, value);
    if (k->kind == KEY_INT) *(int32_t *)base = (int32_t)v;
    else if (k->kind == KEY_FLOAT) *(float *)base = (float)v;
    else *(double *)base = v;
    return DP_STATUS_OK;
}

dp_status dp_agent_config_check(const dp_agent_config *cfg, dp_error *err) {
    char buf[64];
    for (int i = 0; i < N_KEYS; i++) {
        const key_def *k = &keys[i];
        const char *base = (const char *)cfg + k->offset;
        double v;
        if (k->kind == KEY_ENUM) {
            int e = *(const int *)base;
            if (e < 0 || e >= k->n_names) return dp_error_set(err, DP_STATUS_INVALID, "agent: bad %s %d", k->name, e);
            continue;
        }
        if (k->kind == KEY_BOOL) continue;
        v = k->kind == KEY_INT ? *(const int32_t *)base
            : k->kind == KEY_FLOAT ? *(const float *)base : *(const double *)base;
        if (!isfinite(v) || v < k->min || v > k->max) {
            snprintf(buf, sizeof buf, "%g", v);
            return dp_error_set(err, DP_STATUS_INVALID, "agent: %s = %s is outside [%g, %g]", k->name, buf, k->min,
                                k->max);
        }
    }
    if (cfg->link && cfg->grouper != DP_AGENT_GROUPER_KIND_LEARNED)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: link=yes turns the learned grouper's parameters into placer inputs; the %s "
                            "grouper has none (use grouper=learned or link=no)",
                            dp_agent_grouper_kind_name(cfg->grouper));
    if (cfg->ppo_minibatches > cfg->samples && cfg->algo != DP_AGENT_ALGO_REINFORCE)
        return dp_error_set(err, DP_STATUS_INVALID, "agent: ppo-minibatches = %d is more than samples = %d",
                            (int)cfg->ppo_minibatches, (int)cfg->samples);
    if (cfg->placer == DP_AGENT_PLACER_KIND_TABLE && cfg->tanh_c > 0)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: the table placer's logits are its table; tanh-c must be 0 with placer=table");
    if (cfg->algo == DP_AGENT_ALGO_PPO_CE && cfg->ce_elites > cfg->ce_every)
        return dp_error_set(err, DP_STATUS_INVALID, "agent: ce-elites = %d is more than ce-every = %d samples",
                            (int)cfg->ce_elites, (int)cfg->ce_every);
    if (cfg->grouper == DP_AGENT_GROUPER_KIND_RUNS && cfg->warm_start == DP_AGENT_WARM_NONE)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: grouper=runs cuts the warm-start placement into runs; it needs warm-start (best, "
                            "m-etf, ...)");
    if (cfg->grouper_prior == DP_AGENT_GROUPER_KIND_LEARNED)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: grouper-prior=learned: the prior is a fixed grouping (none, metis, runs, ...)");
    if (cfg->grouper == DP_AGENT_GROUPER_KIND_LEARNED && cfg->grouper_prior == DP_AGENT_GROUPER_KIND_RUNS &&
        cfg->warm_start == DP_AGENT_WARM_NONE)
        return dp_error_set(err, DP_STATUS_INVALID, "agent: grouper-prior=runs needs warm-start (best, m-etf, ...)");
    if (cfg->mem_mask && cfg->placer == DP_AGENT_PLACER_KIND_TRFXL)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: mem-mask needs a placer that decides element after element; the Transformer-XL "
                            "draws a segment's devices at once (use mem-mask=no with placer=trfxl)");
    int op_placer = cfg->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_SEG || cfg->placer == DP_AGENT_PLACER_KIND_TRFXL;
    if (cfg->encoder == DP_AGENT_ENCODER_GCN) {
        if (cfg->grouper != DP_AGENT_GROUPER_KIND_NONE)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: encoder=gcn places every op from its own representation; it needs "
                                "grouper=none, not %s",
                                dp_agent_grouper_kind_name(cfg->grouper));
        if (!op_placer && cfg->placer != DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE &&
            cfg->placer != DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: encoder=gcn feeds a sequence placer (seq2seq-seg, seq2seq-before, "
                                "seq2seq-after, trfxl), not placer=%s",
                                dp_agent_placer_kind_name(cfg->placer));
        if (cfg->noise_amp > 0 && cfg->noise_updates > 0)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: encoder=gcn draws no logit noise (its backward recomputes segments); "
                                "set noise-amp=0 or noise-updates=0");
        if (cfg->algo != DP_AGENT_ALGO_REINFORCE && cfg->samples % cfg->ppo_minibatches != 0)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: with encoder=gcn each PPO minibatch runs alone, so ppo-minibatches = %d "
                                "must divide samples = %d",
                                (int)cfg->ppo_minibatches, (int)cfg->samples);
    } else {
        if (op_placer)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: placer=%s places every op from the GCN encoder's representations; it "
                                "needs encoder=gcn (and grouper=none)",
                                dp_agent_placer_kind_name(cfg->placer));
        if (cfg->pretrain_iters > 0)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: pretrain-iters = %d pre-trains the GCN encoder; it needs encoder=gcn "
                                "(or pretrain-iters=0)",
                                (int)cfg->pretrain_iters);
    }
    if (cfg->placer == DP_AGENT_PLACER_KIND_TRFXL && (cfg->hidden % 2 || cfg->hidden % cfg->txl_heads))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: the Transformer-XL placer's width hidden = %d must be even and a multiple of "
                            "txl-heads = %d",
                            (int)cfg->hidden, (int)cfg->txl_heads);
    if (cfg->baseline_window == 0 && !(cfg->baseline_decay > 0 && cfg->baseline_decay < 1))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: the reward baseline needs baseline-decay in (0, 1) or baseline-window > 0");
    return DP_STATUS_OK;
}

size_t dp_agent_config_format(const dp_agent_config *cfg, char *buf, size_t size) {
    size_t len = 0;
    char one[160];
    for (int i = 0; i < N_KEYS; i++) {
        const key_def *k = &keys[i];
        const char *base = (const char *)cfg + k->offset;
        switch (k->kind) {
        case KEY_ENUM: snprintf(one, sizeof one, "%s=%s", k->name, k->names[*(const int *)base]); break;
        case KEY_BOOL: snprintf(one, sizeof one, "%s=%s", k->name, *(const int *)base ? "yes" : "no"); break;
        case KEY_INT: snprintf(one, sizeof one, "%s=%d", k->name, (int)*(const int32_t *)base); break;
        case KEY_FLOAT: snprintf(one, sizeof one, "%s=%.7g", k->name, (double)*(const float *)base); break;
        case KEY_DOUBLE: snprintf(one, sizeof one, "%s=%.17g", k->name, *(const double *)base); break;
        }
        int w = snprintf(buf && len < size ? buf + len : NULL, buf && len < size ? size - len : 0, "%s%s",
                         i ? " " : "", one);
        len += (size_t)w;
    }
    return len;
}

dp_agent_eval_options dp_agent_eval_options_default(void) {
    dp_agent_eval_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.cache = 1;
    o.sim = dp_sim_options_default();
    o.measure_timeout_s = 600.0;
    return o;
}
