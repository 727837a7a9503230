/* The presets as data (include/dplace/settings_job.h): each a base preset
 * plus key=value lines over the table's rows, each line with its source
 * (docs/design/preset-sources.md), applied through dp_settings_set. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "dplace/settings_job.h"

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
