/* bench_agent: the Hierarchical Planner paper's Table 1 (the Hierarchical Planner paper) beside
 * dplace's, and ColocRL on the models it reports (the ColocRL paper, whose extracted
 * table lost its numbers). For each model on its paper preset: the paper's
 * HP step time and its reduction over the best prior placement; then
 * dplace's learned best after U updates, dplace's best baseline (every
 * placer, m-ETF included), dplace's reduction over the best prior placement
 * (CPU, GPU, expert, Scotch, MinCut, as the paper defines it) and over its
 * best baseline, the lower bound, and the run's wall time with the share
 * spent in the policy and in the simulator. Each model runs the job
 * `dplace optimize --agent AGENT --updates U` runs (include/dplace/optimize.h);
 * the presets here have no search after training.
 *
 * usage: bench_agent [UPDATES [AGENT [MODEL...]]]
 *        defaults: 1000 (the paper's) hp inception_v3 resnet152 rnnlm nmt2 nmt4 nmt8
 *        AGENT colocrl runs rnnlm nmt2 inception_v3 on k40x2 and k40x4
 * Threads: DPLACE_THREADS (default 2). Not a test: run it by hand
 * (bench/README.md; docs/results/bench_agent.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/nn.h"
#include "dplace/optimize.h"
#include "dplace/place.h"
#include "dplace/zoo.h"

typedef struct paper_row {
    const char *model, *devices;
    double hp_s, reduction_pct; /* the Hierarchical Planner paper's Table 1; NAN: not reported */
} paper_row;

static const paper_row hp_table[] = {
    {"inception_v3", "k40x2", 0.13, 16.3}, {"resnet152", "k40x2", 1.18, 0.0}, {"rnnlm", "k40x2", 1.57, 0.0},
    {"nmt2", "k40x2", 0.84, 60.6},         {"nmt4", "k40x4", 1.69, 53.7},     {"nmt8", "k40x8", 4.07, -4.9},
};

/* The paper's prior placements' best (CPU, GPU, expert, Scotch, MinCut):
 * inf when none is valid. */
static double prior_best(const dp_reference *ref) {
    double prior = INFINITY;
    for (int32_t k = 0; k < ref->n; k++) {
        dp_place_method m = ref->reports[k].method;
        if (!ref->reports[k].status && ref->reports[k].sim.valid &&
            (m == DP_PLACE_METHOD_CPU || m == DP_PLACE_METHOD_GPU || m == DP_PLACE_METHOD_EXPERT ||
             m == DP_PLACE_METHOD_SCOTCH || m == DP_PLACE_METHOD_MINCUT))
            prior = fmin(prior, ref->reports[k].sim.step_time_s);
    }
    return prior;
}

/* One row of a finished job: the paper's figures, the learned best beside
 * the references, the share of the run in the policy and the simulator. */
static void print_row(const dp_optimize *op, const char *model, const char *devices, const paper_row *paper,
                      long updates) {
    const dp_reference *ref = dp_optimize_reference(op);
    const dp_run_state *s = dp_optimize_state(op);
    double prior = prior_best(ref), wall = dp_optimize_result(op)->wall_s;
    double best_base = ref->best >= 0 ? ref->best_s : INFINITY;
    const char *best_name = ref->best >= 0 ? ref->best_name : "none";
    char paper_hp[32] = "n/a", paper_red[32] = "n/a";
    if (paper && isfinite(paper->hp_s)) snprintf(paper_hp, sizeof paper_hp, "%.2f", paper->hp_s);
    if (paper && isfinite(paper->reduction_pct)) snprintf(paper_red, sizeof paper_red, "%.1f%%", paper->reduction_pct);
    char learned[32] = "none", red_prior[32] = "n/a", red_base[32] = "n/a";
    if (isfinite(s->best_s)) {
        snprintf(learned, sizeof learned, "%.3f", s->best_s);
        if (isfinite(prior)) snprintf(red_prior, sizeof red_prior, "%.1f%%", 100 * (prior - s->best_s) / prior);
        if (isfinite(best_base))
            snprintf(red_base, sizeof red_base, "%.1f%%", 100 * (best_base - s->best_s) / best_base);
    }
    char base[48];
    snprintf(base, sizeof base, "%.3f %s", best_base, best_name);
    printf("%-13s %-6s %6s %7s | %8s %8.3f %-16s %8s %8s %7.3f | %5ld %7.1f %5.0f%% %5.0f%% %6lld\n", model, devices,
           paper_hp, paper_red, learned, prior, base, red_prior, red_base, ref->bound.bound_s, updates, wall,
           100 * s->policy_s / fmax(s->elapsed_s, 1e-9), 100 * s->eval_s / fmax(s->elapsed_s, 1e-9),
           (long long)s->best_update);
    fflush(stdout);
}

/* One model: the job `dplace optimize --agent AGENT --updates U` runs,
 * every placer (m-ETF included) and the expert as its references. */
static int run(const char *agent, const char *model, const char *devices, const paper_row *paper, long updates,
               int threads) {
    dp_error err;
    dp_graph *g = dp_zoo_build(model, 0, &err);
    dp_devices *ds = g ? dp_devices_preset(devices, &err) : NULL;
    dp_optimize_options o = dp_optimize_options_default();
    o.g = g, o.ds = ds, o.agent = agent, o.threads = threads, o.max_updates = updates;
    o.expert = dp_zoo_expert_placement;
    dp_optimize *op = ds ? dp_optimize_init(&o, &err) : NULL;
    int rc = !op || dp_optimize_run(op, NULL, &err);
    if (rc) fprintf(stderr, "bench_agent: %s: %s\n", model, err.msg);
    else print_row(op, model, devices, paper, updates);
    dp_optimize_free(op);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}

int main(int argc, char **argv) {
    long updates = argc > 1 ? atol(argv[1]) : 1000;
    const char *agent = argc > 2 ? argv[2] : "hp";
    int threads = getenv("DPLACE_THREADS") ? atoi(getenv("DPLACE_THREADS")) : 2;
    dp_settings probe;
    if (updates < 1 || dp_settings_preset(agent, &probe) || threads < 1) {
        fprintf(stderr, "usage: bench_agent [UPDATES [hp|colocrl [MODEL...]]]\n");
        return 2;
    }
    dp_nn_set_threads(threads);
    printf("bench_agent: agent %s, %ld updates per model, %d threads\n", agent, updates, threads);
    printf("%-13s %-6s %6s %7s | %8s %8s %-16s %8s %8s %7s | %5s %7s %6s %6s %6s\n", "model", "preset", "paper",
           "paper", "learned", "prior", "best baseline", "vs prior", "vs base", "bound", "upd", "wall s", "policy",
           "sim", "best@");
    printf("%-13s %-6s %6s %7s | %8s %8s %-16s %8s %8s %7s |\n", "", "", "HP s", "reduct", "s", "s", "s", "", "", "s");
    int rc = 0;
    if (!strcmp(agent, "colocrl")) {
        const char *models[] = {"rnnlm", "nmt2", "inception_v3"}, *sets[] = {"k40x2", "k40x4"};
        for (int m = 0; m < 3; m++)
            for (int d = 0; d < 2; d++) {
                int chosen = argc <= 3;
                for (int k = 3; k < argc; k++) chosen |= !strcmp(argv[k], models[m]);
                if (chosen) rc |= run(agent, models[m], sets[d], NULL, updates, threads);
            }
        return rc;
    }
    for (size_t r = 0; r < sizeof hp_table / sizeof hp_table[0]; r++) {
        int chosen = argc <= 3;
        for (int k = 3; k < argc; k++) chosen |= !strcmp(argv[k], hp_table[r].model);
        if (chosen) rc |= run(agent, hp_table[r].model, hp_table[r].devices, &hp_table[r], updates, threads);
    }
    return rc;
}
