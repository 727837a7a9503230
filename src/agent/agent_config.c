/* The agent's configuration (include/dplace/agent_config.h): the names of
 * its enum values, its rows (name, field, range, base value, help), the
 * checks of the combinations of settings that cannot work together, and
 * the evaluator's defaults. The presets that set the rows:
 * src/optimize/presets.c. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/agent.h"
#include "dplace/place.h"

/* ---- the choices of the enum settings ------------------------------------------ */

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
/* A warm start names the placers up to m-sct; those appended after it (the
 * accel placers) are reached through "best" alone, so saved settings keep
 * their meaning. */
_Static_assert(DP_AGENT_WARM_COUNT - DP_AGENT_WARM_CPU == DP_PLACE_METHOD_M_SCT + 1, "a warm start per placer up to m-sct");
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


static const char *const group_names[] = {"features", "grouper", "link",          "encoder",     "placer",
                                          "warm start", "training", "ppo", "cross-entropy", "elite walks"};
_Static_assert(sizeof group_names / sizeof group_names[0] == DP_AGENT_CONFIG_GROUP_COUNT, "a name per group");

const char *dp_agent_config_group_name(int g) {
    return g >= 0 && g < DP_AGENT_CONFIG_GROUP_COUNT ? group_names[g] : "?";
}

/* ---- the rows ------------------------------------------------------------------ */

/* X marks a row experimental: an idea of dplace's own, not tuned, still
 * under test (docs/agents.md marks it with a *). A paper's value, and any
 * key a preset sets with its source, is not. */
#define X DP_SETTING_EXPERIMENTAL
#define AGENT(f) 0, offsetof(dp_agent_config, f)
#define ENUM(names) 0, 0, names, (int)(sizeof names / sizeof names[0])
#define NUM(lo, hi) lo, hi, NULL, 0
#define BOOL 0, 1, NULL, 0
#define G(g) DP_AGENT_CONFIG_GROUP_##g

static const dp_setting rows[] = {
    /* features */
    {"type-ids", DP_SETTING_ENUM, AGENT(features.type_ids), ENUM(type_ids_names), G(FEATURES), 0,
     "op type ids: rank (most common types of the graph) or fixed (by name, the same on every graph)", "rank"},
    {"type-vocab", DP_SETTING_INT, AGENT(features.type_vocab), NUM(2, 100000), G(FEATURES), 0,
     "op types with an id of their own (type-ids=rank)", "200"},
    {"type-dim", DP_SETTING_INT, AGENT(features.type_dim), NUM(1, 1024), G(FEATURES), 0, "type embedding size", "20"},
    {"out-slots", DP_SETTING_INT, AGENT(features.out_slots), NUM(1, 64), G(FEATURES), 0, "outputs described per op",
     "6"},
    {"out-dims", DP_SETTING_INT, AGENT(features.out_dims), NUM(1, 16), G(FEATURES), 0,
     "dimensions described per output", "4"},
    {"adj-per-dir", DP_SETTING_INT, AGENT(features.adj_per_dir), NUM(0, 64), G(FEATURES), 0,
     "neighbours described per direction", "6"},
    {"group-types", DP_SETTING_ENUM, AGENT(features.group_types), ENUM(group_types_names), G(FEATURES), 0,
     "op types in the group embedding: counts (log(1 + count) per type) or embedding (the mean type embedding)",
     "counts"},
    /* grouper */
    {"grouper", DP_SETTING_ENUM, AGENT(grouper.kind), ENUM(grouper_names), G(GROUPER), 0,
     "how ops are grouped before the placer places the groups: learned (the Hierarchical Planner's feed-forward "
     "grouper), colocation, metis, scotch, fluid, random, scope, none (every op its own group), runs", "learned"},
    {"groups", DP_SETTING_INT, AGENT(grouper.groups), NUM(1, 4096), G(GROUPER), 0,
     "groups of the learned and partitioning groupers", "256"},
    {"grouper-hidden", DP_SETTING_INT, AGENT(grouper.hidden), NUM(1, 4096), G(GROUPER), 0,
     "hidden units of the learned grouper", "64"},
    {"grouper-prior", DP_SETTING_ENUM, AGENT(grouper.prior), ENUM(grouper_names), G(GROUPER), 0,
     "the learned grouper starts near this fixed grouping (none; metis, scotch, fluid, colocation, scope, runs); "
     "other groupers ignore it", "metis"},
    {"grouper-prior-mass", DP_SETTING_FLOAT, AGENT(grouper.prior_mass), NUM(0.01, 0.9999), G(GROUPER), 0,
     "the probability of each op's prior group at the start (its logit gets ln(m (groups - 1) / (1 - m)))", "0.995"},
    {"scope-depth", DP_SETTING_INT, AGENT(grouper.scope_depth), NUM(0, 64), G(GROUPER), 0,
     "scope components the scope grouper keeps", "3"},
    /* link */
    {"link", DP_SETTING_BOOL, AGENT(link.on), BOOL, G(LINK), 0,
     "EAGLE's extra RNN from the learned grouper's parameters to the placer's inputs", "no"},
    {"link-hidden", DP_SETTING_INT, AGENT(link.hidden), NUM(1, 4096), G(LINK), 0, "LSTM units of the link RNN", "64"},
    /* encoder */
    {"encoder", DP_SETTING_ENUM, AGENT(encoder.kind), ENUM(encoder_names), G(ENCODER), 0,
     "op encoder: none (groups) or gcn (every op, Mars)", "none"},
    {"op-order", DP_SETTING_ENUM, AGENT(encoder.op_order), ENUM(op_order_names), G(ENCODER), 0,
     "encoder=gcn: the order the placer visits the ops in: topo (the graph's FIFO topological order) or dfs "
     "(depth-first: a chain's ops follow each other)", "topo"},
    {"gcn-hidden", DP_SETTING_INT, AGENT(encoder.gcn_hidden), NUM(1, 4096), G(ENCODER), 0,
     "units per layer of the GCN encoder", "256"},
    {"gcn-layers", DP_SETTING_INT, AGENT(encoder.gcn_layers), NUM(1, 8), G(ENCODER), 0, "layers of the GCN encoder",
     "3"},
    {"pretrain-iters", DP_SETTING_INT, AGENT(encoder.pretrain_iters), NUM(0, 1e7), G(ENCODER), 0,
     "Deep Graph Infomax iterations of the GCN encoder before training (0: none)", "0"},
    {"pretrain-lr", DP_SETTING_FLOAT, AGENT(encoder.pretrain_lr), NUM(0, 100), G(ENCODER), 0,
     "Adam learning rate of the pre-training", "0.001"},
    {"encoder-train", DP_SETTING_BOOL, AGENT(encoder.train), BOOL, G(ENCODER), 0,
     "train the encoder with the placer (no: fixed representations, Mars Table 1)", "yes"},
    /* placer */
    {"placer", DP_SETTING_ENUM, AGENT(placer.kind), ENUM(placer_names), G(PLACER), 0,
     "the network that places the groups: seq2seq-after (attention after the decoder), seq2seq-before (EAGLE's, "
     "before it), gcn, table (Post's per-group distributions), seq2seq-seg (Mars's segments), trfxl", "seq2seq-after"},
    {"hidden", DP_SETTING_INT, AGENT(placer.hidden), NUM(1, 4096), G(PLACER), 0,
     "LSTM (seq2seq) or graph-convolution (gcn) units of the placer", "256"},
    {"attn-dim", DP_SETTING_INT, AGENT(placer.attn_dim), NUM(1, 4096), G(PLACER), 0, "attention units", "256"},
    {"dev-emb", DP_SETTING_INT, AGENT(placer.dev_emb), NUM(1, 4096), G(PLACER), 0, "device embedding size", "256"},
    {"tanh-c", DP_SETTING_FLOAT, AGENT(placer.tanh_c), NUM(0, 1000), G(PLACER), 0,
     "C of C tanh(l / T); 0: plain logits", "5"},
    {"temperature", DP_SETTING_FLOAT, AGENT(placer.temperature), NUM(1e-3, 1000), G(PLACER), 0, "T of C tanh(l / T)",
     "10"},
    {"stick", DP_SETTING_FLOAT, AGENT(placer.stick), NUM(0, 50), G(PLACER), 0,
     "seq2seq placers: added to the logit of the previous op's (group's) device when it is a GPU, a prior for "
     "placing neighbours in the sequence together (dplace's, in no paper; 0: none)", "0"},
    {"noise-amp", DP_SETTING_FLOAT, AGENT(placer.noise_amp), NUM(0, 100), G(PLACER), 0, "logit noise amplitude", "0.1"},
    {"noise-updates", DP_SETTING_INT, AGENT(placer.noise_updates), NUM(0, 1e9), G(PLACER), 0,
     "updates with logit noise", "500"},
    {"mem-mask", DP_SETTING_BOOL, AGENT(placer.mem_mask), BOOL, G(PLACER), X,
     "memory-aware decoding: an element may not go to a device its estimated bytes would overflow, given the "
     "sample's elements placed before it (not for placer=trfxl)", "no"},
    {"mem-scale", DP_SETTING_FLOAT, AGENT(placer.mem_scale), NUM(0.01, 100), G(PLACER), X,
     "scale of the memory mask's load estimate (1: the graph's bytes scaled to its peak memory by liveness)", "1"},
    {"seg-len", DP_SETTING_INT, AGENT(placer.seg_len), NUM(1, 1e6), G(PLACER), 0, "seq2seq-seg: ops per segment",
     "128"},
    {"seg-keep", DP_SETTING_INT, AGENT(placer.seg_keep), NUM(0, 1e6), G(PLACER), 0,
     "seq2seq-seg, trfxl: segments whose activations stay for the backward (the others are recomputed; 0: all)", "16"},
    {"txl-layers", DP_SETTING_INT, AGENT(placer.txl_layers), NUM(1, 8), G(PLACER), 0,
     "trfxl: layers (width: hidden)", "2"},
    {"txl-heads", DP_SETTING_INT, AGENT(placer.txl_heads), NUM(1, 256), G(PLACER), 0,
     "trfxl: attention heads (dividing hidden)", "8"},
    {"txl-inner", DP_SETTING_INT, AGENT(placer.txl_inner), NUM(1, 65536), G(PLACER), 0, "trfxl: feed-forward units",
     "1024"},
    {"txl-mem", DP_SETTING_INT, AGENT(placer.txl_mem), NUM(0, 1e6), G(PLACER), 0,
     "trfxl: memory positions kept from earlier segments", "128"},
    {"txl-causal", DP_SETTING_BOOL, AGENT(placer.txl_causal), BOOL, G(PLACER), 0,
     "trfxl: each op attends only to the ones before it", "no"},
    {"post-mix", DP_SETTING_FLOAT, AGENT(placer.post_mix), NUM(0, 1), G(PLACER), 0,
     "table placer: weight of the uniform distribution mixed in after a cross-entropy update", "0.1"},
    /* warm start */
    {"warm-start", DP_SETTING_ENUM, AGENT(warm.from), ENUM(warm_names), G(WARM), 0,
     "imitate a baseline placer's placement before training: none, best (the fastest baseline), or a placer "
     "(cpu, gpu, expert, scotch, mincut, metis, m-topo, m-etf, m-sct)", "none"},
    {"warm-steps", DP_SETTING_INT, AGENT(warm.steps), NUM(1, 1e6), G(WARM), 0,
     "Adam steps of the imitation warm start", "200"},
    {"warm-lr", DP_SETTING_FLOAT, AGENT(warm.lr), NUM(0, 100), G(WARM), 0,
     "learning rate of the imitation warm start", "0.001"},
    /* training */
    {"train", DP_SETTING_BOOL, AGENT(train.on), BOOL, G(TRAINING), 0,
     "train the policy (no: every update samples from the initial policy: the untrained control)", "yes"},
    {"algo", DP_SETTING_ENUM, AGENT(train.algo), ENUM(algo_names), G(TRAINING), 0,
     "training algorithm: reinforce, ppo, ppo-ce (PPO with cross-entropy over elite placements)", "reinforce"},
    {"batch", DP_SETTING_INT, AGENT(train.batch), NUM(1, 1024), G(TRAINING), 0,
     "placements sampled per policy update (the budget in placements is --placements)", "4"},
    {"lr", DP_SETTING_FLOAT, AGENT(train.lr), NUM(0, 100), G(TRAINING), 0, "Adam learning rate", "0.001"},
    {"entropy", DP_SETTING_FLOAT, AGENT(train.entropy), NUM(0, 100), G(TRAINING), 0,
     "entropy bonus per decision (0: none)", "0"},
    {"entropy-sum", DP_SETTING_BOOL, AGENT(train.entropy_sum), BOOL, G(TRAINING), 0,
     "entropy bonus on the sum over a placement's decisions, not their mean", "no"},
    {"clip", DP_SETTING_FLOAT, AGENT(train.clip), NUM(0, 1e9), G(TRAINING), 0, "gradient-norm clip (0: none)", "1"},
    {"clip-per-network", DP_SETTING_BOOL, AGENT(train.clip_per_network), BOOL, G(TRAINING), 0,
     "clip grouper and placer gradients each on its own", "yes"},
    {"baseline-decay", DP_SETTING_FLOAT, AGENT(train.baseline_decay), NUM(0, 1), G(TRAINING), 0,
     "EMA decay of the reward baseline", "0.9"},
    {"baseline-window", DP_SETTING_INT, AGENT(train.baseline_window), NUM(0, 100000), G(TRAINING), 0,
     "> 0: simple moving average of the last N rewards", "0"},
    {"baseline-init-fail", DP_SETTING_BOOL, AGENT(train.baseline_init_fail), BOOL, G(TRAINING), 0,
     "start the baseline at the failing reward", "no"},
    {"fail-reward", DP_SETTING_DOUBLE, AGENT(train.fail_reward), NUM(-1e9, 0), G(TRAINING), 0,
     "reward of an invalid placement (0: automatic)", "-10"},
    {"valid-only-after", DP_SETTING_INT, AGENT(train.valid_only_after), NUM(0, 1e9), G(TRAINING), 0,
     "updates after which only valid samples train", "500"},
    {"oom-shaped", DP_SETTING_BOOL, AGENT(train.oom_shaped), BOOL, G(TRAINING), X,
     "out-of-memory samples rewarded by time and overflow, not the failing reward", "no"},
    {"greedy-every", DP_SETTING_INT, AGENT(train.greedy_every), NUM(0, 1e9), G(TRAINING), X,
     "the policy's greedy placement evaluated before every N-th update: a candidate for the best, not a sample, in "
     "the per-update log's greedy_s (0: only the final policy's)", "0"},
    /* ppo */
    {"ppo-epochs", DP_SETTING_INT, AGENT(ppo.epochs), NUM(1, 1000), G(PPO), 0, "PPO passes over each update's samples",
     "4"},
    {"ppo-minibatches", DP_SETTING_INT, AGENT(ppo.minibatches), NUM(1, 1024), G(PPO), 0,
     "PPO: shuffled parts each pass is split into (at most batch)", "1"},
    {"ppo-clip", DP_SETTING_FLOAT, AGENT(ppo.clip), NUM(0, 10), G(PPO), 0, "PPO clip ratio epsilon", "0.3"},
    {"ppo-ratio", DP_SETTING_ENUM, AGENT(ppo.ratio), ENUM(ppo_ratio_names), G(PPO), 0,
     "PPO ratio per sequence (per network and sample) or per decision", "decision"},
    /* cross-entropy */
    {"ce-every", DP_SETTING_INT, AGENT(ce.every), NUM(1, 1e9), G(CE), 0, "samples between cross-entropy updates", "50"},
    {"ce-elites", DP_SETTING_INT, AGENT(ce.elites), NUM(1, 1024), G(CE), 0, "elite placements kept", "5"},
    {"ce-steps", DP_SETTING_INT, AGENT(ce.steps), NUM(1, 1000), G(CE), 0,
     "Adam steps per cross-entropy update (neural placers)", "1"},
    /* elite walks */
    {"elite-moves", DP_SETTING_INT, AGENT(walks.moves), NUM(0, 1e6), G(WALKS), 0,
     "element moves per walk, each judged by the simulator and kept when no slower; the walks start from the "
     "update's best samples and their ends join the elites, which the cross-entropy step (ce-every, ce-elites, "
     "ce-steps) imitates, with any algorithm (dplace's expert iteration; 0: off)", "0"},
    {"elite-walks", DP_SETTING_INT, AGENT(walks.walks), NUM(1, 64), G(WALKS), 0,
     "walks per update, each from one of the update's best samples (run on the evaluator's threads)", "1"},
    {"elite-critical", DP_SETTING_FLOAT, AGENT(walks.critical), NUM(0, 1), G(WALKS), 0,
     "share of the moves read off the simulated critical path (the element of an op waiting for a transfer to "
     "the producer's device, or the producer's to the consumer's)", "0"},
    {"elite-near", DP_SETTING_FLOAT, AGENT(walks.near), NUM(0, 1), G(WALKS), X,
     "share of the other moves that take an element to the device of a neighbouring op (the others: a device at "
     "random)", "0"},
    {"elite-chain", DP_SETTING_INT, AGENT(walks.chain), NUM(0, DP_AGENT_CHAIN_MAX), G(WALKS), 0,
     "a move that makes the placement slower grows, up to this many more elements, along the data flow (a "
     "neighbouring element joins it each time) and is kept at the first length that is no slower (0: off)", "0"},
    {"elite-train", DP_SETTING_BOOL, AGENT(walks.train), BOOL, G(WALKS), X,
     "the update's training reads each walk's end, when faster, in place of the sample it started from "
     "(self-imitation through the policy-gradient step itself)", "no"},
    {"elite-keep", DP_SETTING_BOOL, AGENT(walks.keep), BOOL, G(WALKS), X,
     "one more walk each update, from the best elite under its own grouping, so the best so far goes on being "
     "improved across updates; once that walk leads, the run's best no longer depends on training (the untrained "
     "control finds the same: docs/design/elite-walks.md)", "no"},
};
enum { N_ROWS = sizeof rows / sizeof rows[0] };
#undef X
#undef AGENT
#undef ENUM
#undef NUM
#undef BOOL
#undef G

const dp_setting *dp_agent_config_rows(int32_t *n) {
    if (n) *n = N_ROWS;
    return rows;
}

/* Names changed within the last release: the old one still sets the new. */
static const char *const renamed[][2] = {{"samples", "batch"}};

const char *dp_agent_config_renamed(const char *old_name) {
    for (size_t k = 0; old_name && k < sizeof renamed / sizeof renamed[0]; k++)
        if (!strcmp(renamed[k][0], old_name)) return renamed[k][1];
    return NULL;
}

void dp_agent_config_base(dp_agent_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    dp_setting_rows_base(rows, N_ROWS, cfg);
}

dp_status dp_agent_config_set(dp_agent_config *cfg, const char *key, const char *value, dp_error *err) {
    const char *now = dp_agent_config_renamed(key);
    const dp_setting *r = dp_setting_rows_find(rows, N_ROWS, now ? now : key);
    if (!r)
        return dp_error_set(err, DP_STATUS_INVALID, "unknown setting \"%.64s\" for an agent (--set help lists them)",
                            key);
    return dp_setting_set_field(r, cfg, value, err);
}

size_t dp_agent_config_format(const dp_agent_config *cfg, char *buf, size_t size) {
    return dp_setting_rows_format(rows, N_ROWS, 0, cfg, buf, size);
}

/* ---- the checks ---------------------------------------------------------------- */

dp_status dp_agent_config_check(const dp_agent_config *cfg, dp_error *err) {
    dp_status st = dp_setting_rows_check(rows, N_ROWS, 0, cfg, err);
    if (st) return st;
    if (cfg->link.on && cfg->grouper.kind != DP_AGENT_GROUPER_KIND_LEARNED)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: link=yes turns the learned grouper's parameters into placer inputs; the %s "
                            "grouper has none (use grouper=learned or link=no)",
                            dp_agent_grouper_kind_name(cfg->grouper.kind));
    if (cfg->ppo.minibatches > cfg->train.batch && cfg->train.algo != DP_AGENT_ALGO_REINFORCE)
        return dp_error_set(err, DP_STATUS_INVALID, "agent: ppo-minibatches = %d is more than samples = %d",
                            (int)cfg->ppo.minibatches, (int)cfg->train.batch);
    if (cfg->placer.kind == DP_AGENT_PLACER_KIND_TABLE && cfg->placer.tanh_c > 0)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: the table placer's logits are its table; tanh-c must be 0 with placer=table");
    if (cfg->train.algo == DP_AGENT_ALGO_PPO_CE && cfg->ce.elites > cfg->ce.every)
        return dp_error_set(err, DP_STATUS_INVALID, "agent: ce-elites = %d is more than ce-every = %d samples",
                            (int)cfg->ce.elites, (int)cfg->ce.every);
    if (cfg->grouper.kind == DP_AGENT_GROUPER_KIND_RUNS && cfg->warm.from == DP_AGENT_WARM_NONE)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: grouper=runs cuts the warm-start placement into runs; it needs warm-start (best, "
                            "m-etf, ...)");
    if (cfg->grouper.prior == DP_AGENT_GROUPER_KIND_LEARNED)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: grouper-prior=learned: the prior is a fixed grouping (none, metis, runs, ...)");
    if (cfg->grouper.kind == DP_AGENT_GROUPER_KIND_LEARNED && cfg->grouper.prior == DP_AGENT_GROUPER_KIND_RUNS &&
        cfg->warm.from == DP_AGENT_WARM_NONE)
        return dp_error_set(err, DP_STATUS_INVALID, "agent: grouper-prior=runs needs warm-start (best, m-etf, ...)");
    if (cfg->placer.mem_mask && cfg->placer.kind == DP_AGENT_PLACER_KIND_TRFXL)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: mem-mask needs a placer that decides element after element; the Transformer-XL "
                            "draws a segment's devices at once (use mem-mask=no with placer=trfxl)");
    int op_placer = cfg->placer.kind == DP_AGENT_PLACER_KIND_SEQ2SEQ_SEG || cfg->placer.kind == DP_AGENT_PLACER_KIND_TRFXL;
    if (cfg->encoder.kind == DP_AGENT_ENCODER_GCN) {
        if (cfg->grouper.kind != DP_AGENT_GROUPER_KIND_NONE)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: encoder=gcn places every op from its own representation; it needs "
                                "grouper=none, not %s",
                                dp_agent_grouper_kind_name(cfg->grouper.kind));
        if (!op_placer && cfg->placer.kind != DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE &&
            cfg->placer.kind != DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: encoder=gcn feeds a sequence placer (seq2seq-seg, seq2seq-before, "
                                "seq2seq-after, trfxl), not placer=%s",
                                dp_agent_placer_kind_name(cfg->placer.kind));
        if (cfg->placer.noise_amp > 0 && cfg->placer.noise_updates > 0)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: encoder=gcn draws no logit noise (its backward recomputes segments); "
                                "set noise-amp=0 or noise-updates=0");
        if (cfg->train.algo != DP_AGENT_ALGO_REINFORCE && cfg->train.batch % cfg->ppo.minibatches != 0)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: with encoder=gcn each PPO minibatch runs alone, so ppo-minibatches = %d "
                                "must divide samples = %d",
                                (int)cfg->ppo.minibatches, (int)cfg->train.batch);
    } else {
        if (op_placer)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: placer=%s places every op from the GCN encoder's representations; it "
                                "needs encoder=gcn (and grouper=none)",
                                dp_agent_placer_kind_name(cfg->placer.kind));
        if (cfg->encoder.pretrain_iters > 0)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "agent: pretrain-iters = %d pre-trains the GCN encoder; it needs encoder=gcn "
                                "(or pretrain-iters=0)",
                                (int)cfg->encoder.pretrain_iters);
    }
    if (cfg->placer.kind == DP_AGENT_PLACER_KIND_TRFXL && (cfg->placer.hidden % 2 || cfg->placer.hidden % cfg->placer.txl_heads))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: the Transformer-XL placer's width hidden = %d must be even and a multiple of "
                            "txl-heads = %d",
                            (int)cfg->placer.hidden, (int)cfg->placer.txl_heads);
    if (cfg->train.baseline_window == 0 && !(cfg->train.baseline_decay > 0 && cfg->train.baseline_decay < 1))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: the reward baseline needs baseline-decay in (0, 1) or baseline-window > 0");
    return DP_STATUS_OK;
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
