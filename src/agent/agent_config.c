/* The agent's configuration checks (the combinations of settings that
 * cannot work together), the evaluator's defaults, and the old presets as
 * C functions, kept until the data presets (src/run/settings.c) are shown
 * equal to them. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/agent.h"

/* The Hierarchical Planner as seed 001 describes it (Sections 2 and 3),
 * with dplace's start for its grouper; the base of every preset after it. */
static void preset_hp_seed(dp_agent_config *c) {
    memset(c, 0, sizeof *c);
    c->walks.walks = 1; /* elite refinement off (dplace's; --set elite-moves=N) */
    snprintf(c->preset, sizeof c->preset, "hp");
    c->features.type_vocab = 200, c->features.type_dim = 20;            /* "embedding of size 20 ... 200 most common"  */
    c->features.out_slots = 6, c->features.out_dims = 4;                /* "output edges to 6 ... 4 elements"           */
    c->features.adj_per_dir = 6;                               /* "12 (6 for each direction)"                  */
    c->features.group_types = DP_AGENT_GROUP_TYPES_COUNTS;     /* "count of each operation type in the group"  */
    c->grouper.kind = DP_AGENT_GROUPER_KIND_LEARNED;
    c->grouper.groups = 256, c->grouper.hidden = 64;          /* "hidden size of 64", "256 in our experiments" */
    /* dplace's: the seed's uniform start leaves the grouper at ln 256 nats per
     * op for 300 updates (random mixtures of ops); a METIS prior of mass
     * 0.995: best 3.69 -> 2.39 s, mean 4.2 -> 2.7 s on nmt4 (0.92: 2.87 s;
     * docs/agents.md); none: the seed's */
    c->grouper.prior = DP_AGENT_GROUPER_KIND_METIS, c->grouper.prior_mass = 0.995f;
    c->grouper.scope_depth = 3;
    c->placer.kind = DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER;   /* attention after the decoder (EAGLE Fig. 4b)  */
    c->placer.hidden = 256, c->placer.attn_dim = 256, c->placer.dev_emb = 256; /* "LSTM hidden size of 256"              */
    c->placer.tanh_c = 5.0f, c->placer.temperature = 10.0f;         /* "C=5.0, and temperature T=10.0"             */
    c->placer.noise_amp = 0.1f, c->placer.noise_updates = 500;      /* "first 500 ... max amplitude of 0.1"         */
    c->placer.mem_mask = 0, c->placer.mem_scale = 1.0f;             /* dplace's memory-aware decoding: off       */
    c->warm.from = DP_AGENT_WARM_NONE;               /* not in the seeds: the networks' initial values */
    c->warm.steps = 200, c->warm.lr = 0.001f;         /* for --set warm-start=...                     */
    c->train.on = 1;
    c->train.algo = DP_AGENT_ALGO_REINFORCE;
    c->train.batch = 4;                                   /* "m=1 and k=4"                                */
    c->train.lr = 0.001f, c->train.clip = 1.0f;                   /* "norm 1.0"; the paper's lr 0.1, and 0.01 too,
                                                         collapse the placer here: Adam's first steps
                                                         move every weight by lr whatever the advantage,
                                                         and at 0.01 one update takes the placer's
                                                         entropy from ln 5 = 1.61 to 0.45 per decision
                                                         (docs/agents.md): --set lr=0.1 gives the paper's */
    c->train.clip_per_network = 1;                          /* "We train both policies ... clipping of norm 1.0" */
    c->train.baseline_decay = 0.9f;                         /* EMA of the reward; decay not given: ours     */
    c->train.fail_reward = -10.0;                           /* "large negative reward of -10"               */
    c->train.valid_only_after = 500;                        /* "only for valid placements after 500 steps"  */
    c->link.hidden = 64;                              /* link off; size for --set link=yes            */
    /* PPO and cross-entropy settings for --set algo=ppo|ppo-ce: EAGLE's */
    c->ppo.epochs = 4, c->ppo.minibatches = 1, c->ppo.clip = 0.3f;
    c->ppo.ratio = DP_AGENT_PPO_RATIO_DECISION;
    c->ce.every = 50, c->ce.elites = 5, c->ce.steps = 1, c->placer.post_mix = 0.1f;
    /* Mars's parts, for --set encoder=gcn: its sizes (preset_mars) */
    c->encoder.gcn_hidden = 256, c->encoder.gcn_layers = 3, c->encoder.pretrain_lr = 0.001f, c->encoder.train = 1;
    c->placer.seg_len = 128, c->placer.seg_keep = 16;
    c->placer.txl_layers = 2, c->placer.txl_heads = 8, c->placer.txl_inner = 1024, c->placer.txl_mem = 128, c->placer.txl_causal = 0;
}

/* dplace's elite refinement (issue 23; docs/agents.md, "Elite refinement"):
 * 2 walks of 100 moves per update from the update's best samples, 90% of the
 * moves read off the simulated critical path. every_update: a cross-entropy
 * step of 2 Adam steps on the best elite every update (the REINFORCE
 * presets; PPO-CE keeps its own interval). */
static void set_refinement(dp_agent_config *c, int every_update) {
    c->walks.moves = 100, c->walks.walks = 2, c->walks.critical = 0.9f;
    if (every_update) c->ce.every = c->train.batch, c->ce.elites = 1, c->ce.steps = 2;
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
    c->walks.chain = 4; /* session 14, without -> with: nmt4 2.050 -> 1.998 s, resnet152 1.421 -> 1.417, rnnlm
                           1.329 -> 1.287, inception_v3 0.093 -> 0.092; docs/agents.md, "Grown moves" */
}

/* ColocRL (seed 004, Section 3); numbers the extraction lost come from the
 * Hierarchical Planner (same authors, same setting): docs/agents.md. */
static void preset_colocrl(dp_agent_config *c) {
    preset_hp_seed(c);
    snprintf(c->preset, sizeof c->preset, "colocrl");
    c->grouper.kind = DP_AGENT_GROUPER_KIND_SCOPE;         /* colocation groups + per-cell/branch groups   */
    c->features.group_types = DP_AGENT_GROUP_TYPES_EMBEDDING;  /* op embedding per group: learned type vector  */
    c->placer.noise_amp = 0.0f, c->placer.noise_updates = 0;        /* no logit noise in ColocRL                    */
    c->train.baseline_decay = 0.0f, c->train.baseline_window = 10;/* "simple moving average baseline"             */
    c->train.baseline_init_fail = 1;                        /* "initializing the baseline with the failing signal" */
    c->train.fail_reward = 0.0;                             /* failing signal set per graph: automatic      */
    c->train.lr = 0.001f;                                   /* seed 004's value lost; 0.01 collapsed the placer
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
    c->grouper.groups = 256, c->grouper.hidden = 64;          /* "64 hidden units", "number of groups ... 256" */
    c->link.on = 1, c->link.hidden = 64;                 /* "an extra RNN ... parameters of the grouper
                                                         into inputs of the placer"; size: ours       */
    c->placer.kind = DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE;  /* "attention score is applied before ... decoder" */
    c->placer.hidden = 512, c->placer.attn_dim = 512;               /* "Both ... LSTM layers have a hidden size of 512" */
    c->placer.noise_amp = 0.0f, c->placer.noise_updates = 0;        /* not mentioned for EAGLE                       */
    c->placer.tanh_c = 0.0f, c->placer.temperature = 1.0f;          /* plain logits: the seed names no squashing; with
                                                         the HP's 5 tanh(l / 10) PPO's first steps
                                                         saturate the logits and it stops learning
                                                         (docs/agents.md)                             */
    c->train.algo = DP_AGENT_ALGO_PPO;
    c->train.batch = 10, c->ppo.epochs = 4;               /* "10 placements as a minibatch ... 4 times"    */
    c->ppo.clip = 0.3f, c->train.entropy = 0.01f;           /* "clip ratio ... 0.3", "coefficient of entropy ... 0.01" */
    c->train.lr = 0.0005f, c->train.clip = 1.0f;                  /* "norm ... 1.0"; the seed's lr 0.01, and 0.003,
                                                         collapse gnmt4's placer within a few updates
                                                         onto one out-of-memory placement
                                                         (docs/agents.md): --set lr=0.01             */
    c->grouper.prior = DP_AGENT_GROUPER_KIND_METIS;   /* dplace's, as hp's (with lr 0.0005: gnmt4 best
                                                         1.803 -> 1.472 s in 500 placements)        */
    c->ce.every = 50, c->ce.elites = 5;               /* PPO+CE: "interval ... 50", "top 5"           */
}

static void preset_eagle_ppo_ce(dp_agent_config *c) {
    preset_eagle(c);
    snprintf(c->preset, sizeof c->preset, "eagle-ppo-ce");
    c->train.algo = DP_AGENT_ALGO_PPO_CE;
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
    c->grouper.kind = DP_AGENT_GROUPER_KIND_METIS, c->grouper.groups = 256; /* fixed groups, as EAGLE's Table II  */
    c->link.on = 0;
    c->placer.kind = DP_AGENT_PLACER_KIND_TABLE;
    c->placer.tanh_c = 0.0f, c->placer.temperature = 1.0f;          /* plain logits                              */
    c->train.entropy = 0.0f;                                /* the uniform mixing explores               */
    c->ppo.clip = 0.2f;                               /* PPO's usual epsilon                       */
    c->train.lr = 0.003f;                                   /* EAGLE's before it moved to 0.0005         */
    c->placer.post_mix = 0.02f;                              /* issue 23: 0.3 kept a quarter of the groups
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
    c->walks.moves = 100, c->walks.walks = 2;         /* Post's cells of bench_learn, 1,000 placements, seed 1,
                                                         post -> post with 100 x 2 random moves: inception_v3
                                                         0.075 -> 0.055 s, gnmt4 1.549 -> 1.383, bert_base
                                                         3.519 -> 2.915 (controls 0.092, 1.630, 4.310);
                                                         300 moves: no better per second (nmt4)       */
    c->walks.critical = 0.9f;                         /* nmt4 k40x4, 200 updates, seeds 1 and 2: 0 1.746 1.740 s,
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
    c->features.type_ids = DP_AGENT_TYPE_IDS_FIXED;            /* "encode the operation types by one-hot encoding":
                                                         ids by name, the same on every graph (Table 3) */
    c->features.out_slots = 2, c->features.out_dims = 4;                /* input and output shapes, 8 numbers each (the
                                                         reference); counts not given in the paper      */
    c->encoder.kind = DP_AGENT_ENCODER_GCN;
    c->encoder.gcn_hidden = 256, c->encoder.gcn_layers = 3;           /* "three-layers of GCNs with 256 hidden units"   */
    c->encoder.pretrain_iters = 1000;                         /* "pre-train ... for 1000 iterations and save the
                                                         parameters corresponding to the lowest loss"   */
    c->encoder.pretrain_lr = 0.001f;                          /* not given: Deep Graph Infomax's own           */
    c->encoder.train = 1;                             /* "train the encoder and placer ... jointly"     */
    c->grouper.kind = DP_AGENT_GROUPER_KIND_NONE;          /* no grouping: every op is placed                */
    c->link.on = 0;
    c->placer.kind = DP_AGENT_PLACER_KIND_SEQ2SEQ_SEG;     /* "segment-level sequence-to-sequence model"     */
    c->placer.seg_len = 128;                                 /* "The length of the segment is set to 128"      */
    c->placer.seg_keep = 16;                                 /* memory: 16 segment workspaces, the rest recomputed */
    c->placer.hidden = 512, c->placer.attn_dim = 512, c->placer.dev_emb = 512; /* "Both hidden LSTM layers have a size of 512";
                                                         attention and device embedding: the reference's */
    c->placer.tanh_c = 0.0f, c->placer.temperature = 1.0f;          /* logits = Linear(h) in the reference            */
    c->placer.noise_amp = 0.0f, c->placer.noise_updates = 0;
    c->train.algo = DP_AGENT_ALGO_PPO;                      /* "proximal policy optimization"                 */
    c->train.batch = 20, c->ppo.minibatches = 4;          /* "For every 20 sampled placements, we shuffled
                                                         them into four mini-batches"                   */
    c->ppo.epochs = 3;                                /* "repeating this for three epochs"              */
    c->ppo.clip = 0.2f;                               /* "The clip ratio ... 0.2"                       */
    c->train.entropy = 0.001f, c->train.entropy_sum = 0;          /* "coefficient of entropy ... 0.001", on the mean
                                                         entropy per op: on the summed entropy (the
                                                         reference's; --set entropy-sum=yes) the policy
                                                         stayed uniform on bert_base (docs/agents.md)   */
    c->train.lr = 3e-4f, c->train.clip = 1.0f;                    /* "Adam ... 0.0003 and gradient clipping with a
                                                         1.0 norm"                                      */
    c->train.clip_per_network = 0;                          /* one norm over encoder and placer (reference)   */
    c->train.baseline_decay = 0.99f;                        /* Eq. 7: "We set mu to 0.99"                     */
    c->train.fail_reward = -10.0;                           /* "an extremely long per-step time ... such as
                                                         100 seconds": -sqrt(100)                       */
    c->train.valid_only_after = 1000000000;                 /* every sample trains                            */
    c->warm.from = DP_AGENT_WARM_BEST;               /* dplace's (DOPPLER's imitation warm start): the
                                                         paper is silent on the placer's start, and from
                                                         the uniform one the policy stayed random on the
                                                         simulator (docs/agents.md, "Mars presets");
                                                         --set warm-start=none is the paper's start       */
    c->warm.lr = 0.001f;                              /* at the paper's 512 units: 0.01 diverges on
                                                         bert_base by step 6 (Adam moves every weight of
                                                         a 512-wide matrix by ~lr at once); the benches'
                                                         32-unit networks take 0.01 (0.001 fits too little
                                                         there), docs/agents.md                          */
}

/* Mars without the Deep Graph Infomax pre-training (Table 2). */
static void preset_mars_nopretrain(dp_agent_config *c) {
    preset_mars(c);
    snprintf(c->preset, sizeof c->preset, "mars-nopretrain");
    c->encoder.pretrain_iters = 0;
}

/* Table 1's plain seq2seq placer: Mars with one segment over the whole
 * op sequence (the attention spans every op). */
static void preset_mars_seq2seq(dp_agent_config *c) {
    preset_mars(c);
    snprintf(c->preset, sizeof c->preset, "mars-seq2seq");
    c->placer.kind = DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE;
}

/* Table 1's Transformer-XL placer (and, without pre-training, Table 2's
 * encoder-placer, GDP, with a GCN for its GraphSAGE). Its sizes are not in
 * seed 002: ours (docs/agents.md). */
static void preset_mars_trfxl(dp_agent_config *c) {
    preset_mars(c);
    snprintf(c->preset, sizeof c->preset, "mars-trfxl");
    c->placer.kind = DP_AGENT_PLACER_KIND_TRFXL;
    c->placer.hidden = 256;                                  /* the width of the GCN's representations       */
    c->placer.txl_layers = 2, c->placer.txl_heads = 8, c->placer.txl_inner = 1024;
    c->placer.txl_mem = 128;                                 /* the previous segment                          */
    c->placer.txl_causal = 0;                                /* the whole graph is known: no mask             */
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
    c->encoder.op_order = DP_AGENT_OP_ORDER_DFS;
    c->placer.stick = 5.0f;                                  /* p(same GPU) = e^5 / (e^5 + D - 1): 0.97 on 5 devices */
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

dp_status dp_agent_config_check(const dp_agent_config *cfg, dp_error *err) {
    dp_status st = dp_settings_check_target(DP_SETTING_AGENT, cfg, err);
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
