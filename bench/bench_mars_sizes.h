/* The smaller Mars networks the benchmarks run (docs/design/mars-warm-start.md;
 * docs/results/bench_learn.md): one list for bench_learn and
 * bench_mars_tables. */
#ifndef DPLACE_BENCH_MARS_SIZES_H
#define DPLACE_BENCH_MARS_SIZES_H

#include <string.h>

#include "dplace/agent.h"

/* Shrinks c's networks to the benches' sizes when its encoder is a graph
 * network (an agent without one is left as it is), keeping a preset
 * without pre-training without it; returns 0, or 1 with err set. */
static inline int bench_mars_shrink(dp_agent_config *c, dp_error *err) {
    static const char *const sizes[][2] = {
        {"gcn-hidden", "32"}, {"hidden", "32"},  {"attn-dim", "32"},   {"dev-emb", "16"},  {"pretrain-iters", "200"},
        {"seg-keep", "0"},    {"txl-heads", "4"}, {"txl-inner", "128"},
        {"warm-lr", "0.01"}, /* the warm start's rate for 32 units (the preset's 0.001 is for 512) */
    };
    if (c->encoder.kind == DP_AGENT_ENCODER_NONE) return 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        if (!strcmp(sizes[k][0], "pretrain-iters") && c->encoder.pretrain_iters == 0) continue; /* mars-nopretrain */
        if (dp_agent_config_set(c, sizes[k][0], sizes[k][1], err)) return 1;
    }
    return 0;
}

#endif
