/* The smaller Mars networks the benchmarks run (docs/design/mars-warm-start.md;
 * docs/results/bench_learn.md): one list for bench_learn and
 * bench_mars_tables, as the settings a front end passes to the job
 * (include/dplace/optimize.h). */
#ifndef DPLACE_BENCH_MARS_SIZES_H
#define DPLACE_BENCH_MARS_SIZES_H

#include <string.h>

#include "dplace/optimize.h"

#define BENCH_MARS_SETS_MAX 9

/* Writes into out (room for BENCH_MARS_SETS_MAX) the settings that shrink
 * the preset's networks to the benches' sizes when its encoder is a graph
 * network (none for an agent without one, or an unknown name), keeping a
 * preset without pre-training without it; returns how many. They go
 * before a run's own settings, which may override them. */
static inline int bench_mars_sets(const char *preset, dp_optimize_set *out) {
    static const dp_optimize_set sizes[BENCH_MARS_SETS_MAX] = {
        {"gcn-hidden", "32"}, {"hidden", "32"},  {"attn-dim", "32"},   {"dev-emb", "16"},  {"pretrain-iters", "200"},
        {"seg-keep", "0"},    {"txl-heads", "4"}, {"txl-inner", "128"},
        {"warm-lr", "0.01"}, /* the warm start's rate for 32 units (the preset's 0.001 is for 512) */
    };
    dp_settings s;
    if (dp_settings_preset(preset, &s) || s.agent.encoder.kind == DP_AGENT_ENCODER_NONE) return 0;
    int n = 0;
    for (int k = 0; k < BENCH_MARS_SETS_MAX; k++) {
        int pretrain = !strcmp(sizes[k].key, "pretrain-iters");
        if (!pretrain || s.agent.encoder.pretrain_iters != 0) out[n++] = sizes[k]; /* mars-nopretrain: none */
    }
    return n;
}

#endif
