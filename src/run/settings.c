/* Settings (include/dplace/settings.h): the one table of every setting of
 * the learned agents and of the search, the presets as data over it, and
 * the parser and printer that read and write a setting by name. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/settings.h"

/* ---- the choices of the enum settings ---------------------------------------- */

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

static const char *const group_names[] = {"features", "grouper", "link",          "encoder",     "placer", "warm start",
                                          "training", "ppo",     "cross-entropy", "elite walks", "search"};
_Static_assert(sizeof group_names / sizeof group_names[0] == DP_SETTING_GROUP_COUNT, "a name per group");

const char *dp_setting_group_name(dp_setting_group g) {
    return (unsigned)g < DP_SETTING_GROUP_COUNT ? group_names[g] : "?";
}

/* ---- the table ----------------------------------------------------------------- */

/* A row with its base value (the text dp_settings_set reads): the base is
 * the Hierarchical Planner as its paper gives it, with dplace's start for
 * its grouper (a METIS prior) and learning rate, and the settings of the
 * other parts at the values the presets that use them start from. */
typedef struct row {
    dp_setting s;
    const char *base;
} row;

#define X DP_SETTING_EXPERIMENTAL
#define AGENT(f) DP_SETTING_AGENT, offsetof(dp_agent_config, f)
#define SEARCH(f) DP_SETTING_SEARCH, offsetof(dp_search_options, f)
#define ENUM(names) 0, 0, names, (int)(sizeof names / sizeof names[0])
#define NUM(lo, hi) lo, hi, NULL, 0
#define BOOL 0, 1, NULL, 0
#define G(g) DP_SETTING_GROUP_##g

static const row rows[] = {
    /* features */
    {{"type-ids", DP_SETTING_ENUM, AGENT(features.type_ids), ENUM(type_ids_names), G(FEATURES), 0,
      "op type ids: rank (most common types of the graph) or fixed (by name, the same on every graph)"}, "rank"},
    {{"type-vocab", DP_SETTING_INT, AGENT(features.type_vocab), NUM(2, 100000), G(FEATURES), X,
      "op types with an id of their own (type-ids=rank)"}, "200"},
    {{"type-dim", DP_SETTING_INT, AGENT(features.type_dim), NUM(1, 1024), G(FEATURES), X, "type embedding size"}, "20"},
    {{"out-slots", DP_SETTING_INT, AGENT(features.out_slots), NUM(1, 64), G(FEATURES), 0, "outputs described per op"},
     "6"},
    {{"out-dims", DP_SETTING_INT, AGENT(features.out_dims), NUM(1, 16), G(FEATURES), X,
      "dimensions described per output"}, "4"},
    {{"adj-per-dir", DP_SETTING_INT, AGENT(features.adj_per_dir), NUM(0, 64), G(FEATURES), X,
      "neighbours described per direction"}, "6"},
    {{"group-types", DP_SETTING_ENUM, AGENT(features.group_types), ENUM(group_types_names), G(FEATURES), 0,
      "op types in the group embedding: counts (log(1 + count) per type) or embedding (the mean type embedding)"},
     "counts"},
    /* grouper */
    {{"grouper", DP_SETTING_ENUM, AGENT(grouper.kind), ENUM(grouper_names), G(GROUPER), 0,
      "how ops are grouped before the placer places the groups: learned (the Hierarchical Planner's feed-forward "
      "grouper), colocation, metis, scotch, fluid, random, scope, none (every op its own group), runs"}, "learned"},
    {{"groups", DP_SETTING_INT, AGENT(grouper.groups), NUM(1, 4096), G(GROUPER), 0,
      "groups of the learned and partitioning groupers"}, "256"},
    {{"grouper-hidden", DP_SETTING_INT, AGENT(grouper.hidden), NUM(1, 4096), G(GROUPER), X,
      "hidden units of the learned grouper"}, "64"},
    {{"grouper-prior", DP_SETTING_ENUM, AGENT(grouper.prior), ENUM(grouper_names), G(GROUPER), X,
      "the learned grouper starts near this fixed grouping (none; metis, scotch, fluid, colocation, scope, runs); "
      "other groupers ignore it"}, "metis"},
    {{"grouper-prior-mass", DP_SETTING_FLOAT, AGENT(grouper.prior_mass), NUM(0.01, 0.9999), G(GROUPER), X,
      "the probability of each op's prior group at the start (its logit gets ln(m (groups - 1) / (1 - m)))"}, "0.995"},
    {{"scope-depth", DP_SETTING_INT, AGENT(grouper.scope_depth), NUM(0, 64), G(GROUPER), X,
      "scope components the scope grouper keeps"}, "3"},
    /* link */
    {{"link", DP_SETTING_BOOL, AGENT(link.on), BOOL, G(LINK), 0,
      "EAGLE's extra RNN from the learned grouper's parameters to the placer's inputs"}, "no"},
    {{"link-hidden", DP_SETTING_INT, AGENT(link.hidden), NUM(1, 4096), G(LINK), X, "LSTM units of the link RNN"}, "64"},
    /* encoder */
    {{"encoder", DP_SETTING_ENUM, AGENT(encoder.kind), ENUM(encoder_names), G(ENCODER), 0,
      "op encoder: none (groups) or gcn (every op, Mars)"}, "none"},
    {{"op-order", DP_SETTING_ENUM, AGENT(encoder.op_order), ENUM(op_order_names), G(ENCODER), 0,
      "encoder=gcn: the order the placer visits the ops in: topo (the graph's FIFO topological order) or dfs "
      "(depth-first: a chain's ops follow each other)"}, "topo"},
    {{"gcn-hidden", DP_SETTING_INT, AGENT(encoder.gcn_hidden), NUM(1, 4096), G(ENCODER), X,
      "units per layer of the GCN encoder"}, "256"},
    {{"gcn-layers", DP_SETTING_INT, AGENT(encoder.gcn_layers), NUM(1, 8), G(ENCODER), X, "layers of the GCN encoder"},
     "3"},
    {{"pretrain-iters", DP_SETTING_INT, AGENT(encoder.pretrain_iters), NUM(0, 1e7), G(ENCODER), 0,
      "Deep Graph Infomax iterations of the GCN encoder before training (0: none)"}, "0"},
    {{"pretrain-lr", DP_SETTING_FLOAT, AGENT(encoder.pretrain_lr), NUM(0, 100), G(ENCODER), X,
      "Adam learning rate of the pre-training"}, "0.001"},
    {{"encoder-train", DP_SETTING_BOOL, AGENT(encoder.train), BOOL, G(ENCODER), X,
      "train the encoder with the placer (no: fixed representations, Mars Table 1)"}, "yes"},
    /* placer */
    {{"placer", DP_SETTING_ENUM, AGENT(placer.kind), ENUM(placer_names), G(PLACER), 0,
      "the network that places the groups: seq2seq-after (attention after the decoder), seq2seq-before (EAGLE's, "
      "before it), gcn, table (Post's per-group distributions), seq2seq-seg (Mars's segments), trfxl"},
     "seq2seq-after"},
    {{"hidden", DP_SETTING_INT, AGENT(placer.hidden), NUM(1, 4096), G(PLACER), 0,
      "LSTM (seq2seq) or graph-convolution (gcn) units of the placer"}, "256"},
    {{"attn-dim", DP_SETTING_INT, AGENT(placer.attn_dim), NUM(1, 4096), G(PLACER), 0, "attention units"}, "256"},
    {{"dev-emb", DP_SETTING_INT, AGENT(placer.dev_emb), NUM(1, 4096), G(PLACER), 0, "device embedding size"}, "256"},
    {{"tanh-c", DP_SETTING_FLOAT, AGENT(placer.tanh_c), NUM(0, 1000), G(PLACER), 0,
      "C of C tanh(l / T); 0: plain logits"}, "5"},
    {{"temperature", DP_SETTING_FLOAT, AGENT(placer.temperature), NUM(1e-3, 1000), G(PLACER), 0, "T of C tanh(l / T)"},
     "10"},
    {{"stick", DP_SETTING_FLOAT, AGENT(placer.stick), NUM(0, 50), G(PLACER), 0,
      "seq2seq placers: added to the logit of the previous op's (group's) device when it is a GPU, a prior for "
      "placing neighbours in the sequence together (dplace's, in no paper; 0: none)"}, "0"},
    {{"noise-amp", DP_SETTING_FLOAT, AGENT(placer.noise_amp), NUM(0, 100), G(PLACER), 0, "logit noise amplitude"},
     "0.1"},
    {{"noise-updates", DP_SETTING_INT, AGENT(placer.noise_updates), NUM(0, 1e9), G(PLACER), 0,
      "updates with logit noise"}, "500"},
    {{"mem-mask", DP_SETTING_BOOL, AGENT(placer.mem_mask), BOOL, G(PLACER), X,
      "memory-aware decoding: an element may not go to a device its estimated bytes would overflow, given the "
      "sample's elements placed before it (not for placer=trfxl)"}, "no"},
    {{"mem-scale", DP_SETTING_FLOAT, AGENT(placer.mem_scale), NUM(0.01, 100), G(PLACER), X,
      "scale of the memory mask's load estimate (1: the graph's bytes scaled to its peak memory by liveness)"}, "1"},
    {{"seg-len", DP_SETTING_INT, AGENT(placer.seg_len), NUM(1, 1e6), G(PLACER), X, "seq2seq-seg: ops per segment"},
     "128"},
    {{"seg-keep", DP_SETTING_INT, AGENT(placer.seg_keep), NUM(0, 1e6), G(PLACER), X,
      "seq2seq-seg, trfxl: segments whose activations stay for the backward (the others are recomputed; 0: all)"},
     "16"},
    {{"txl-layers", DP_SETTING_INT, AGENT(placer.txl_layers), NUM(1, 8), G(PLACER), X,
      "trfxl: layers (width: hidden)"}, "2"},
    {{"txl-heads", DP_SETTING_INT, AGENT(placer.txl_heads), NUM(1, 256), G(PLACER), X,
      "trfxl: attention heads (dividing hidden)"}, "8"},
    {{"txl-inner", DP_SETTING_INT, AGENT(placer.txl_inner), NUM(1, 65536), G(PLACER), X, "trfxl: feed-forward units"},
     "1024"},
    {{"txl-mem", DP_SETTING_INT, AGENT(placer.txl_mem), NUM(0, 1e6), G(PLACER), X,
      "trfxl: memory positions kept from earlier segments"}, "128"},
    {{"txl-causal", DP_SETTING_BOOL, AGENT(placer.txl_causal), BOOL, G(PLACER), X,
      "trfxl: each op attends only to the ones before it"}, "no"},
    {{"post-mix", DP_SETTING_FLOAT, AGENT(placer.post_mix), NUM(0, 1), G(PLACER), 0,
      "table placer: weight of the uniform distribution mixed in after a cross-entropy update"}, "0.1"},
    /* warm start */
    {{"warm-start", DP_SETTING_ENUM, AGENT(warm.from), ENUM(warm_names), G(WARM), 0,
      "imitate a baseline placer's placement before training: none, best (the fastest baseline), or a placer "
      "(cpu, gpu, expert, scotch, mincut, metis, m-topo, m-etf, m-sct)"}, "none"},
    {{"warm-steps", DP_SETTING_INT, AGENT(warm.steps), NUM(1, 1e6), G(WARM), X,
      "Adam steps of the imitation warm start"}, "200"},
    {{"warm-lr", DP_SETTING_FLOAT, AGENT(warm.lr), NUM(0, 100), G(WARM), X,
      "learning rate of the imitation warm start"}, "0.001"},
    /* training */
    {{"train", DP_SETTING_BOOL, AGENT(train.on), BOOL, G(TRAINING), 0,
      "train the policy (no: every update samples from the initial policy: the untrained control)"}, "yes"},
    {{"algo", DP_SETTING_ENUM, AGENT(train.algo), ENUM(algo_names), G(TRAINING), 0,
      "training algorithm: reinforce, ppo, ppo-ce (PPO with cross-entropy over elite placements)"}, "reinforce"},
    {{"batch", DP_SETTING_INT, AGENT(train.batch), NUM(1, 1024), G(TRAINING), 0,
      "placements sampled per policy update (the budget in placements is --placements)"}, "4"},
    {{"lr", DP_SETTING_FLOAT, AGENT(train.lr), NUM(0, 100), G(TRAINING), 0, "Adam learning rate"}, "0.001"},
    {{"entropy", DP_SETTING_FLOAT, AGENT(train.entropy), NUM(0, 100), G(TRAINING), 0,
      "entropy bonus per decision (0: none)"}, "0"},
    {{"entropy-sum", DP_SETTING_BOOL, AGENT(train.entropy_sum), BOOL, G(TRAINING), X,
      "entropy bonus on the sum over a placement's decisions, not their mean"}, "no"},
    {{"clip", DP_SETTING_FLOAT, AGENT(train.clip), NUM(0, 1e9), G(TRAINING), X, "gradient-norm clip (0: none)"}, "1"},
    {{"clip-per-network", DP_SETTING_BOOL, AGENT(train.clip_per_network), BOOL, G(TRAINING), 0,
      "clip grouper and placer gradients each on its own"}, "yes"},
    {{"baseline-decay", DP_SETTING_FLOAT, AGENT(train.baseline_decay), NUM(0, 1), G(TRAINING), 0,
      "EMA decay of the reward baseline"}, "0.9"},
    {{"baseline-window", DP_SETTING_INT, AGENT(train.baseline_window), NUM(0, 100000), G(TRAINING), 0,
      "> 0: simple moving average of the last N rewards"}, "0"},
    {{"baseline-init-fail", DP_SETTING_BOOL, AGENT(train.baseline_init_fail), BOOL, G(TRAINING), 0,
      "start the baseline at the failing reward"}, "no"},
    {{"fail-reward", DP_SETTING_DOUBLE, AGENT(train.fail_reward), NUM(-1e9, 0), G(TRAINING), 0,
      "reward of an invalid placement (0: automatic)"}, "-10"},
    {{"valid-only-after", DP_SETTING_INT, AGENT(train.valid_only_after), NUM(0, 1e9), G(TRAINING), 0,
      "updates after which only valid samples train"}, "500"},
    {{"oom-shaped", DP_SETTING_BOOL, AGENT(train.oom_shaped), BOOL, G(TRAINING), X,
      "out-of-memory samples rewarded by time and overflow, not the failing reward"}, "no"},
    {{"greedy-every", DP_SETTING_INT, AGENT(train.greedy_every), NUM(0, 1e9), G(TRAINING), X,
      "the policy's greedy placement evaluated before every N-th update: a candidate for the best, not a sample, in "
      "the per-update log's greedy_s (0: only the final policy's)"}, "0"},
    /* ppo */
    {{"ppo-epochs", DP_SETTING_INT, AGENT(ppo.epochs), NUM(1, 1000), G(PPO), 0, "PPO passes over each update's samples"},
     "4"},
    {{"ppo-minibatches", DP_SETTING_INT, AGENT(ppo.minibatches), NUM(1, 1024), G(PPO), 0,
      "PPO: shuffled parts each pass is split into (at most batch)"}, "1"},
    {{"ppo-clip", DP_SETTING_FLOAT, AGENT(ppo.clip), NUM(0, 10), G(PPO), 0, "PPO clip ratio epsilon"}, "0.3"},
    {{"ppo-ratio", DP_SETTING_ENUM, AGENT(ppo.ratio), ENUM(ppo_ratio_names), G(PPO), X,
      "PPO ratio per sequence (per network and sample) or per decision"}, "decision"},
    /* cross-entropy */
    {{"ce-every", DP_SETTING_INT, AGENT(ce.every), NUM(1, 1e9), G(CE), 0, "samples between cross-entropy updates"},
     "50"},
    {{"ce-elites", DP_SETTING_INT, AGENT(ce.elites), NUM(1, 1024), G(CE), 0, "elite placements kept"}, "5"},
    {{"ce-steps", DP_SETTING_INT, AGENT(ce.steps), NUM(1, 1000), G(CE), 0,
      "Adam steps per cross-entropy update (neural placers)"}, "1"},
    /* elite walks */
    {{"elite-moves", DP_SETTING_INT, AGENT(walks.moves), NUM(0, 1e6), G(WALKS), 0,
      "element moves per walk, each judged by the simulator and kept when no slower; the walks start from the "
      "update's best samples and their ends join the elites, which the cross-entropy step (ce-every, ce-elites, "
      "ce-steps) imitates, with any algorithm (dplace's expert iteration; 0: off)"}, "0"},
    {{"elite-walks", DP_SETTING_INT, AGENT(walks.walks), NUM(1, 64), G(WALKS), 0,
      "walks per update, each from one of the update's best samples (run on the evaluator's threads)"}, "1"},
    {{"elite-critical", DP_SETTING_FLOAT, AGENT(walks.critical), NUM(0, 1), G(WALKS), 0,
      "share of the moves read off the simulated critical path (the element of an op waiting for a transfer to "
      "the producer's device, or the producer's to the consumer's)"}, "0"},
    {{"elite-near", DP_SETTING_FLOAT, AGENT(walks.near), NUM(0, 1), G(WALKS), X,
      "share of the other moves that take an element to the device of a neighbouring op (the others: a device at "
      "random)"}, "0"},
    {{"elite-chain", DP_SETTING_INT, AGENT(walks.chain), NUM(0, DP_AGENT_CHAIN_MAX), G(WALKS), 0,
      "a move that makes the placement slower grows, up to this many more elements, along the data flow (a "
      "neighbouring element joins it each time) and is kept at the first length that is no slower (0: off)"}, "0"},
    {{"elite-train", DP_SETTING_BOOL, AGENT(walks.train), BOOL, G(WALKS), X,
      "the update's training reads each walk's end, when faster, in place of the sample it started from "
      "(self-imitation through the policy-gradient step itself)"}, "no"},
    {{"elite-keep", DP_SETTING_BOOL, AGENT(walks.keep), BOOL, G(WALKS), X,
      "one more walk each update, from the best elite under its own grouping, so the best so far goes on being "
      "improved across updates; once that walk leads, the run's best no longer depends on training (the untrained "
      "control finds the same: docs/design/elite-walks.md)"}, "no"},
    /* search */
    {{"search-after", DP_SETTING_SECONDS, DP_SETTING_RUN, offsetof(dp_settings, search_after_s), NUM(0, 1e9),
      G(SEARCH), 0,
      "after a learned agent's run, dplace's search from its best placement for this long (90s, 2m; 0: none; "
      "--search-after)"}, "0"},
    {{"moves", DP_SETTING_INT, SEARCH(moves), NUM(1, 1000000), G(SEARCH), 0,
      "moves each search chain proposes per update"}, "32"},
    {{"t0", DP_SETTING_DOUBLE, SEARCH(t0), NUM(1e-12, 100), G(SEARCH), 0,
      "starting temperature: a move x times slower (relative) is accepted with probability exp(-x / t)"}, "0.001"},
    {{"decay", DP_SETTING_DOUBLE, SEARCH(decay), NUM(1e-12, 1), G(SEARCH), 0, "the temperature's factor per update"},
     "0.97"},
    {{"t-min", DP_SETTING_DOUBLE, SEARCH(t_min), NUM(0, 1), G(SEARCH), 0, "the temperature's floor, relative to t0"},
     "0.01"},
    {{"restart", DP_SETTING_INT, SEARCH(restart_steps), NUM(1, 1e9), G(SEARCH), 0,
      "updates without a better placement of its own after which a chain restarts from the best found"}, "60"},
    {{"sync", DP_SETTING_INT, SEARCH(sync_steps), NUM(1, 1e9), G(SEARCH), 0,
      "every this many updates the chain with the worst current placement restarts from the best"}, "10"},
    {{"critical", DP_SETTING_DOUBLE, SEARCH(critical), NUM(0, 1), G(SEARCH), 0,
      "share of moves proposed from the simulated critical path"}, "0.4"},
    {{"swap", DP_SETTING_DOUBLE, SEARCH(swap), NUM(0, 1), G(SEARCH), 0, "share of swaps among the other moves"},
     "0.25"},
};
enum { N_ROWS = sizeof rows / sizeof rows[0] };
#undef X
#undef AGENT
#undef SEARCH
#undef ENUM
#undef NUM
#undef BOOL
#undef G

const dp_setting *dp_settings_table(int32_t *n) {
    static dp_setting table[N_ROWS];
    if (!table[0].name)
        for (int i = 0; i < N_ROWS; i++) table[i] = rows[i].s;
    if (n) *n = N_ROWS;
    return table;
}

/* Names changed within the last release: the old one still sets the new. */
static const char *const renamed[][2] = {{"samples", "batch"}};

const char *dp_settings_renamed(const char *old_name) {
    for (size_t k = 0; old_name && k < sizeof renamed / sizeof renamed[0]; k++)
        if (!strcmp(renamed[k][0], old_name)) return renamed[k][1];
    return NULL;
}

static const row *find_row(const char *name) {
    if (!name) return NULL;
    const char *now = dp_settings_renamed(name);
    if (now) name = now;
    for (int i = 0; i < N_ROWS; i++)
        if (!strcmp(rows[i].s.name, name)) return &rows[i];
    return NULL;
}

const dp_setting *dp_settings_find(const char *name) {
    const row *r = find_row(name);
    return r ? &dp_settings_table(NULL)[r - rows] : NULL;
}

/* ---- setting and printing one value ------------------------------------------- */

/* The field of setting r in the struct p of r's target. */
static void *field(const dp_setting *r, const void *p) { return (char *)p + r->offset; }

/* The struct of target t in s. */
static void *target_of(dp_settings *s, dp_setting_target t) {
    return t == DP_SETTING_AGENT ? (void *)&s->agent : t == DP_SETTING_SEARCH ? (void *)&s->search : (void *)s;
}

/* Sets r's field in p (the struct of its target) from text. */
static dp_status set_field(const dp_setting *r, void *p, const char *value, dp_error *err) {
    void *f = field(r, p);
    if (r->type == DP_SETTING_ENUM) {
        for (int i = 0; i < r->n_choices; i++)
            if (!strcmp(value, r->choices[i])) {
                *(int *)f = i;
                return DP_STATUS_OK;
            }
        char list[256] = "";
        for (int i = 0; i < r->n_choices; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", r->choices[i]);
        return dp_error_set(err, DP_STATUS_INVALID, "setting %s: \"%.64s\" is not one of %s", r->name, value, list);
    }
    if (r->type == DP_SETTING_BOOL) {
        if (!strcmp(value, "1") || !strcmp(value, "yes") || !strcmp(value, "true")) *(int *)f = 1;
        else if (!strcmp(value, "0") || !strcmp(value, "no") || !strcmp(value, "false")) *(int *)f = 0;
        else return dp_error_set(err, DP_STATUS_INVALID, "setting %s wants yes or no, not \"%.64s\"", r->name, value);
        return DP_STATUS_OK;
    }
    double v;
    if (r->type == DP_SETTING_SECONDS) {
        v = !strcmp(value, "0") || !strcmp(value, "0s") ? 0.0 : dp_parse_duration(value);
        if (!(v >= r->min && v <= r->max))
            return dp_error_set(err, DP_STATUS_INVALID,
                                "setting %s wants a duration such as 90s, 2m or 1h (0: off), not \"%.64s\"", r->name,
                                value);
        *(double *)f = v;
        return DP_STATUS_OK;
    }
    char *end;
    errno = 0;
    v = strtod(value, &end);
    if (!*value || *end || errno || !isfinite(v) || v < r->min || v > r->max ||
        (r->type == DP_SETTING_INT && v != floor(v)))
        return dp_error_set(err, DP_STATUS_INVALID, "setting %s wants %s in [%g, %g], not \"%.64s\"", r->name,
                            r->type == DP_SETTING_INT ? "a whole number" : "a number", r->min, r->max, value);
    if (r->type == DP_SETTING_INT) *(int32_t *)f = (int32_t)v;
    else if (r->type == DP_SETTING_FLOAT) *(float *)f = (float)v;
    else *(double *)f = v;
    return DP_STATUS_OK;
}

dp_status dp_settings_set(dp_settings *s, const char *key, const char *value, dp_error *err) {
    const dp_setting *r = dp_settings_find(key);
    if (!r) return dp_error_set(err, DP_STATUS_INVALID, "unknown setting \"%.64s\" (--set help lists them)", key);
    return set_field(r, target_of(s, r->target), value, err);
}

dp_status dp_agent_config_set(dp_agent_config *cfg, const char *key, const char *value, dp_error *err) {
    const dp_setting *r = dp_settings_find(key);
    if (!r || r->target != DP_SETTING_AGENT)
        return dp_error_set(err, DP_STATUS_INVALID, "unknown setting \"%.64s\" for an agent (--set help lists them)", key);
    return set_field(r, cfg, value, err);
}

/* Writes v in the fewest significant digits that read back as v, so help
 * shows 0.4 and not 0.40000000000000002 while a written value still
 * round-trips exactly. */
static size_t format_double(double v, char *buf, size_t size) {
    char tmp[40];
    for (int digits = 6; digits < 17; digits++) {
        snprintf(tmp, sizeof tmp, "%.*g", digits, v);
        if (strtod(tmp, NULL) == v) return (size_t)snprintf(buf, size, "%s", tmp);
    }
    return (size_t)snprintf(buf, size, "%.17g", v);
}

/* Writes r's value read from p (the struct of its target). */
static size_t format_field(const dp_setting *r, const void *p, char *buf, size_t size) {
    const void *f = field(r, p);
    switch (r->type) {
    case DP_SETTING_ENUM: {
        int e = *(const int *)f;
        return (size_t)snprintf(buf, size, "%s", e >= 0 && e < r->n_choices ? r->choices[e] : "?");
    }
    case DP_SETTING_BOOL: return (size_t)snprintf(buf, size, "%s", *(const int *)f ? "yes" : "no");
    case DP_SETTING_INT: return (size_t)snprintf(buf, size, "%d", (int)*(const int32_t *)f);
    case DP_SETTING_FLOAT: return (size_t)snprintf(buf, size, "%.7g", (double)*(const float *)f);
    case DP_SETTING_DOUBLE: return format_double(*(const double *)f, buf, size);
    case DP_SETTING_SECONDS: return (size_t)snprintf(buf, size, "%gs", *(const double *)f);
    }
    return 0;
}

size_t dp_setting_format(const dp_setting *r, const dp_settings *s, char *buf, size_t size) {
    return format_field(r, target_of((dp_settings *)s, r->target), buf, size);
}

size_t dp_settings_format_target(dp_setting_target target, const void *p, char *buf, size_t size) {
    size_t len = 0;
    char one[160];
    for (int i = 0; i < N_ROWS; i++) {
        const dp_setting *r = &rows[i].s;
        if (r->target != target) continue;
        format_field(r, p, one, sizeof one);
        int w = snprintf(buf && len < size ? buf + len : NULL, buf && len < size ? size - len : 0, "%s%s=%s",
                         len ? " " : "", r->name, one);
        len += (size_t)w;
    }
    return len;
}

dp_status dp_settings_check_target(dp_setting_target target, const void *p, dp_error *err) {
    for (int i = 0; i < N_ROWS; i++) {
        const dp_setting *r = &rows[i].s;
        if (r->target != target) continue;
        const void *f = field(r, p);
        if (r->type == DP_SETTING_ENUM) {
            int e = *(const int *)f;
            if (e < 0 || e >= r->n_choices)
                return dp_error_set(err, DP_STATUS_INVALID, "setting %s: value %d is not a choice", r->name, e);
            continue;
        }
        if (r->type == DP_SETTING_BOOL) continue;
        double v = r->type == DP_SETTING_INT     ? *(const int32_t *)f
                   : r->type == DP_SETTING_FLOAT ? *(const float *)f
                                                 : *(const double *)f;
        if (!isfinite(v) || v < r->min || v > r->max)
            return dp_error_set(err, DP_STATUS_INVALID, "setting %s = %g is outside [%g, %g]", r->name, v, r->min,
                                r->max);
    }
    return DP_STATUS_OK;
}

void dp_settings_base(dp_settings *s) {
    memset(s, 0, sizeof *s);
    s->search.seed = 1, s->search.threads = 1;
    for (int i = 0; i < N_ROWS; i++) {
        dp_error err;
        dp_status st = set_field(&rows[i].s, target_of(s, rows[i].s.target), rows[i].base, &err);
        (void)st;
        assert(st == DP_STATUS_OK);
    }
}

/* ---- the presets ----------------------------------------------------------------- */

#define LINES(a) a, (int32_t)(sizeof a / sizeof a[0])

/* dplace's elite walks as the REINFORCE presets use them: two walks of 100
 * moves per update from the update's best samples, 90% of the moves read
 * off the simulated critical path, and a cross-entropy step of two Adam
 * steps on the best elite every update (docs/design/elite-walks.md). */
#define WALKS_LINES                                                                                                 \
    {"elite-moves", "100", "dplace's elite walks (docs/design/elite-walks.md); 0: the paper's system"},            \
    {"elite-walks", "2", "dplace's: two walks per update, from the update's two best samples"},                    \
    {"elite-critical", "0.9", "dplace's: 90% of the moves read off the simulated critical path"}
#define WALKS_CE_EVERY_UPDATE_LINES                                                                                 \
    {"ce-every", "4", "dplace's: a cross-entropy step on the best elite every update (the batch's 4 samples)"},    \
    {"ce-elites", "1", "dplace's: the best elite"}, {"ce-steps", "2", "dplace's: two Adam steps"}

static const dp_preset_line hp_lines[] = {
    {"groups", "256", "the Hierarchical Planner: \"256 in our experiments\""},
    {"grouper-hidden", "64", "the Hierarchical Planner: \"hidden size of 64\""},
    {"hidden", "256", "the Hierarchical Planner: \"LSTM hidden size of 256\""},
    {"tanh-c", "5", "the Hierarchical Planner: \"C=5.0, and temperature T=10.0\""},
    {"noise-amp", "0.1", "the Hierarchical Planner: \"first 500 ... max amplitude of 0.1\""},
    {"batch", "4", "the Hierarchical Planner: \"m=1 and k=4\""},
    {"lr", "0.001", "dplace's: the paper's 0.1, and 0.01, collapse the placer here (docs/design/hp-grouper.md)"},
    {"grouper-prior", "metis", "dplace's: the grouper starts near METIS groups (docs/design/hp-grouper.md)"},
    {"valid-only-after", "500", "the Hierarchical Planner: \"only for valid placements after 500 steps\""},
    WALKS_LINES,
    WALKS_CE_EVERY_UPDATE_LINES,
    {"elite-chain", "4", "dplace's: a slower move grown by up to 4 elements along the data flow"},
};

static const dp_preset_line colocrl_lines[] = {
    {"grouper", "scope", "ColocRL: colocation groups joined per LSTM cell, per branch (\"each LSTM cell ...\")"},
    {"group-types", "embedding", "ColocRL: the group's op embedding, a learned type vector"},
    {"noise-amp", "0", "ColocRL: no logit noise"},
    {"noise-updates", "0", "ColocRL: no logit noise"},
    {"baseline-decay", "0", "ColocRL: \"simple moving average baseline\""},
    {"baseline-window", "10", "ColocRL: \"simple moving average baseline\" (window: dplace's)"},
    {"baseline-init-fail", "yes", "ColocRL: \"initializing the baseline with the failing signal\""},
    {"fail-reward", "0", "ColocRL: the failing signal set per graph (automatic)"},
    {"lr", "0.001", "dplace's: the paper's value was lost in extraction; 0.01 collapsed the placer on rnnlm"},
    WALKS_LINES,
    WALKS_CE_EVERY_UPDATE_LINES,
};

static const dp_preset_line eagle_lines[] = {
    {"groups", "256", "EAGLE: \"number of groups ... 256\""},
    {"grouper-hidden", "64", "EAGLE: \"64 hidden units\""},
    {"link", "yes", "EAGLE: \"an extra RNN ... parameters of the grouper into inputs of the placer\""},
    {"link-hidden", "64", "dplace's: the link's size is not given"},
    {"placer", "seq2seq-before", "EAGLE: \"attention score is applied before ... decoder\""},
    {"hidden", "512", "EAGLE: \"Both ... LSTM layers have a hidden size of 512\""},
    {"attn-dim", "512", "EAGLE: \"Both ... LSTM layers have a hidden size of 512\""},
    {"noise-amp", "0", "EAGLE: no logit noise"},
    {"noise-updates", "0", "EAGLE: no logit noise"},
    {"tanh-c", "0", "EAGLE names no squashing: plain logits (with 5 tanh(l / 10) PPO saturates the logits)"},
    {"temperature", "1", "plain logits"},
    {"algo", "ppo", "EAGLE: proximal policy optimization"},
    {"batch", "10", "EAGLE: \"10 placements as a minibatch\""},
    {"ppo-epochs", "4", "EAGLE: \"... 4 times\""},
    {"ppo-clip", "0.3", "EAGLE: \"clip ratio ... 0.3\""},
    {"entropy", "0.01", "EAGLE: \"coefficient of entropy ... 0.01\""},
    {"lr", "0.0005", "dplace's: the paper's 0.01, and 0.003, collapse gnmt4's placer within a few updates"},
    {"clip", "1", "EAGLE: \"norm ... 1.0\""},
    {"grouper-prior", "metis", "dplace's, as the hp preset's"},
    {"ce-every", "50", "EAGLE, PPO with cross-entropy: \"interval ... 50\""},
    {"ce-elites", "5", "EAGLE, PPO with cross-entropy: \"top 5\""},
};

static const dp_preset_line eagle_ppo_ce_lines[] = {
    {"algo", "ppo-ce", "EAGLE: PPO with cross-entropy minimisation over the elite placements"},
    WALKS_LINES,
};

static const dp_preset_line post_lines[] = {
    {"grouper", "metis", "dplace's: fixed METIS groups, as EAGLE's Table II"},
    {"groups", "256", "dplace's: as EAGLE's"},
    {"link", "no", "Post has no grouper network"},
    {"placer", "table", "Post: one device distribution per group, starting uniform"},
    {"tanh-c", "0", "plain logits"},
    {"temperature", "1", "plain logits"},
    {"entropy", "0", "dplace's: the uniform mixing explores"},
    {"ppo-clip", "0.2", "dplace's: PPO's usual epsilon"},
    {"lr", "0.003", "dplace's: EAGLE's before it moved to 0.0005"},
    {"post-mix", "0.02", "dplace's: 0.3 kept a quarter of the groups at random; 0.02 beats MinCut on bert_base"},
    WALKS_LINES,
};

static const dp_preset_line dplace_lines[] = {
    {"search-after", "3m", "dplace's: then dplace's search for 3 min from its usual starts and the learned best "
                           "(docs/design/learn-then-search.md)"},
};

static const dp_preset_line mars_lines[] = {
    {"type-ids", "fixed", "Mars: \"encode the operation types by one-hot encoding\" (the same id on every graph)"},
    {"out-slots", "2", "Mars's reference: input and output shapes, 8 numbers each"},
    {"out-dims", "4", "Mars's reference: input and output shapes, 8 numbers each"},
    {"encoder", "gcn", "Mars: a graph convolutional encoder"},
    {"gcn-hidden", "256", "Mars: \"three-layers of GCNs with 256 hidden units\""},
    {"gcn-layers", "3", "Mars: \"three-layers of GCNs with 256 hidden units\""},
    {"pretrain-iters", "1000", "Mars: \"pre-train ... for 1000 iterations\""},
    {"pretrain-lr", "0.001", "Deep Graph Infomax's own (not given)"},
    {"encoder-train", "yes", "Mars: \"train the encoder and placer ... jointly\""},
    {"grouper", "none", "Mars: every op is placed"},
    {"link", "no", "Mars has no grouper"},
    {"placer", "seq2seq-seg", "Mars: \"segment-level sequence-to-sequence model\""},
    {"seg-len", "128", "Mars: \"The length of the segment is set to 128\""},
    {"seg-keep", "16", "dplace's: 16 segment workspaces kept, the rest recomputed"},
    {"hidden", "512", "Mars: \"Both hidden LSTM layers have a size of 512\""},
    {"attn-dim", "512", "Mars's reference"},
    {"dev-emb", "512", "Mars's reference"},
    {"tanh-c", "0", "Mars's reference: logits = Linear(h)"},
    {"temperature", "1", "Mars's reference: logits = Linear(h)"},
    {"noise-amp", "0", "Mars: no logit noise"},
    {"noise-updates", "0", "Mars: no logit noise"},
    {"algo", "ppo", "Mars: \"proximal policy optimization\""},
    {"batch", "20", "Mars: \"For every 20 sampled placements, we shuffled them into four mini-batches\""},
    {"ppo-minibatches", "4", "Mars: \"... four mini-batches\""},
    {"ppo-epochs", "3", "Mars: \"repeating this for three epochs\""},
    {"ppo-clip", "0.2", "Mars: \"The clip ratio ... 0.2\""},
    {"entropy", "0.001", "Mars: \"coefficient of entropy ... 0.001\" (on the mean entropy per op)"},
    {"entropy-sum", "no", "dplace's: on the summed entropy (the reference's) the policy stayed uniform"},
    {"lr", "0.0003", "Mars: \"Adam ... 0.0003\""},
    {"clip", "1", "Mars: \"gradient clipping with a 1.0 norm\""},
    {"clip-per-network", "no", "Mars's reference: one norm over encoder and placer"},
    {"baseline-decay", "0.99", "Mars, Eq. 7: \"We set mu to 0.99\""},
    {"fail-reward", "-10", "Mars: \"an extremely long per-step time ... such as 100 seconds\": -sqrt(100)"},
    {"valid-only-after", "1000000000", "Mars: every sample trains"},
    {"warm-start", "best", "dplace's (DOPPLER's imitation warm start): from the uniform start the policy stayed "
                           "random on the simulator (docs/design/mars-warm-start.md); none: the paper's start"},
    {"warm-lr", "0.001", "dplace's: at 512 units 0.01 diverges on bert_base"},
};

static const dp_preset_line mars_nopretrain_lines[] = {
    {"pretrain-iters", "0", "Mars, Table 2: without the pre-training"},
};

static const dp_preset_line mars_seq2seq_lines[] = {
    {"placer", "seq2seq-before", "Mars, Table 1: one plain seq2seq over the whole op sequence"},
};

static const dp_preset_line mars_trfxl_lines[] = {
    {"placer", "trfxl", "Mars, Table 1: the Transformer-XL placer (GDP's)"},
    {"hidden", "256", "dplace's: the width of the GCN's representations (sizes not given)"},
    {"txl-layers", "2", "dplace's (sizes not given)"},
    {"txl-heads", "8", "dplace's (sizes not given)"},
    {"txl-inner", "1024", "dplace's (sizes not given)"},
    {"txl-mem", "128", "dplace's: the previous segment"},
    {"txl-causal", "no", "dplace's: the whole graph is known, no mask"},
};

static const dp_preset_line mars_dplace_lines[] = {
    {"op-order", "dfs", "dplace's sequence prior: neighbours in the sequence are mostly neighbours in the graph "
                        "(docs/design/mars-sequence-prior.md)"},
    {"stick", "5", "dplace's sequence prior: p(same GPU) = e^5 / (e^5 + D - 1), 0.97 on 5 devices"},
};

static const dp_preset presets[] = {
    {"hp", NULL,
     "the Hierarchical Planner: learned feed-forward grouper (256 groups), seq2seq placer with attention after the "
     "decoder, REINFORCE; with dplace's elite walks (--set elite-moves=0: the paper's)",
     LINES(hp_lines)},
    {"colocrl", NULL,
     "ColocRL: colocation + per-cell/branch groups, seq2seq placer, REINFORCE with a moving-average baseline and a "
     "failing signal; with dplace's elite walks (--set elite-moves=0: the paper's)",
     LINES(colocrl_lines)},
    {"eagle", NULL,
     "EAGLE: learned grouper linked to the placer by an extra RNN, seq2seq placer (512 units) with attention "
     "before the decoder, PPO",
     LINES(eagle_lines)},
    {"eagle-ppo-ce", "eagle",
     "EAGLE trained by PPO with cross-entropy over elite placements; with dplace's elite walks (--set "
     "elite-moves=0: the paper's)",
     LINES(eagle_ppo_ce_lines)},
    {"post", "eagle-ppo-ce",
     "Post (as the EAGLE paper describes it): METIS groups, one device distribution per group, PPO and "
     "cross-entropy over elites mixed with the uniform; with dplace's elite walks (--set elite-moves=0: Post)",
     LINES(post_lines)},
    {"dplace", "post",
     "dplace's own: Post's policy with elite walks, then dplace's search from its best in the same run "
     "(search-after)",
     LINES(dplace_lines)},
    {"mars", NULL,
     "Mars: every op placed; GCN encoder pre-trained by Deep Graph Infomax, segment-level seq2seq placer, PPO; "
     "from dplace's imitation warm start (--set warm-start=none: the paper's)",
     LINES(mars_lines)},
    {"mars-nopretrain", "mars", "Mars without the pre-training (its Table 2)", LINES(mars_nopretrain_lines)},
    {"mars-seq2seq", "mars",
     "Mars with one plain seq2seq over the whole op sequence (its Table 1; small graphs only)",
     LINES(mars_seq2seq_lines)},
    {"mars-trfxl", "mars", "Mars with the Transformer-XL placer (its Table 1)", LINES(mars_trfxl_lines)},
    {"mars-dplace", "mars",
     "Mars with dplace's sequence prior: ops in depth-first order, the previous op's device favoured",
     LINES(mars_dplace_lines)},
};
enum { N_PRESETS = sizeof presets / sizeof presets[0] };
#undef LINES

const char *const *dp_settings_preset_names(void) {
    static const char *names[N_PRESETS + 1];
    for (int i = 0; i < N_PRESETS; i++) names[i] = presets[i].name;
    return names;
}

const dp_preset *dp_settings_preset_find(const char *name) {
    for (int i = 0; name && i < N_PRESETS; i++)
        if (!strcmp(presets[i].name, name)) return &presets[i];
    return NULL;
}

int dp_settings_preset(const char *name, dp_settings *s) {
    const dp_preset *p = dp_settings_preset_find(name);
    if (!p) return -1;
    if (p->base) {
        int r = dp_settings_preset(p->base, s);
        (void)r;
        assert(r == 0);
    } else {
        dp_settings_base(s);
    }
    for (int32_t k = 0; k < p->n_lines; k++) {
        dp_error err;
        dp_status st = dp_settings_set(s, p->lines[k].key, p->lines[k].value, &err);
        (void)st;
        assert(st == DP_STATUS_OK);
    }
    snprintf(s->agent.preset, sizeof s->agent.preset, "%s", p->name);
    return 0;
}
