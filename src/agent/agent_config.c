/* The agent's configuration checks (the combinations of settings that
 * cannot work together) and the evaluator's defaults. The settings
 * themselves and the presets: src/run/settings.c. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/agent.h"

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
