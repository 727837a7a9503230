/* The calibration table of issue 3: for every zoo model on its paper's
 * device preset, the papers' measured step times (CPU only, GPU only, human
 * expert) beside dplace's simulated ones, with their ratio, and op counts.
 * Also how long building each graph takes.
 * usage: bench_zoo [MODEL]   (default: every row of dp_zoo_paper_table) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

/* Simulates placement `spec` and prints "paper dplace ratio" for one cell;
 * returns 1 when the cell is outside +-30% or its OOM verdict differs. */
static int cell(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const char *spec, double paper, int32_t *p) {
    dp_error err;
    char dp[32], ratio[16] = "", pp[16];
    int bad = 0;
    if (paper == DP_ZOO_NONE) snprintf(pp, sizeof pp, "-");
    else if (paper == DP_ZOO_OOM) snprintf(pp, sizeof pp, "OOM");
    else snprintf(pp, sizeof pp, "%.3f", paper);
    if (dp_placement_resolve(spec, g, ds, p, &err)) {
        snprintf(dp, sizeof dp, "n/a");
    } else {
        dp_sim_result res;
        if (dp_sim_run(sim, p, NULL, &res, &err)) {
            snprintf(dp, sizeof dp, "error");
            bad = 1;
        } else {
            int oom = res.verdict == DP_SIM_VERDICT_OOM;
            snprintf(dp, sizeof dp, "%.3f%s", res.step_time_s, oom ? " OOM" : "");
            if (paper == DP_ZOO_OOM) {
                bad = !oom;
                snprintf(ratio, sizeof ratio, oom ? "ok" : "MISS");
            } else if (paper > 0) {
                double r = res.step_time_s / paper;
                snprintf(ratio, sizeof ratio, "%.2f%s", r, oom || fabs(r - 1) > 0.30 ? "*" : "");
                bad = oom || fabs(r - 1) > 0.30;
            }
        }
    }
    printf(" | %7s %11s %6s", pp, dp, ratio);
    return bad;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    printf("%-12s %-7s | %6s %6s %5s | %7s %11s %6s | %7s %11s %6s | %7s %11s %6s | %s\n", "model", "devices", "paper",
           "ops", "ratio", "cpu", "dplace", "ratio", "gpu", "dplace", "ratio", "expert", "dplace", "ratio", "build s");
    int n_bad = 0;
    for (const dp_zoo_paper_row *r = dp_zoo_paper_table(); r->model; r++) {
        if (only && strcmp(only, r->model)) continue;
        dp_error err;
        double t0 = dp_now_s();
        dp_graph *g = dp_zoo_build(r->model, 0, &err);
        double tb = dp_now_s() - t0;
        if (!g) {
            printf("%-12s %-7s | not built: %s\n", r->model, r->devices, err.msg);
            continue;
        }
        dp_devices *ds = dp_devices_preset(r->devices, &err);
        dp_sim *sim = ds ? dp_sim_init(g, ds, &err) : NULL;
        int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
        if (!sim || !p) {
            fprintf(stderr, "bench_zoo: %s\n", err.msg);
            return 1;
        }
        char ops_ratio[16] = "-", paper_ops[16] = "-";
        if (r->paper_ops) {
            snprintf(paper_ops, sizeof paper_ops, "%d", r->paper_ops);
            snprintf(ops_ratio, sizeof ops_ratio, "%.2f", (double)g->n_ops / r->paper_ops);
        }
        printf("%-12s %-7s | %6s %6d %5s", r->model, r->devices, paper_ops, g->n_ops, ops_ratio);
        n_bad += cell(sim, g, ds, "cpu", r->cpu_s, p);
        n_bad += cell(sim, g, ds, "gpu", r->gpu_s, p);
        n_bad += cell(sim, g, ds, "expert", r->expert_s, p);
        printf(" | %.3f\n", tb);
        fflush(stdout);
        free(p);
        dp_sim_free(sim);
        dp_devices_free(ds);
        dp_graph_free(g);
    }
    printf("cells outside +-30%% or with the wrong OOM verdict (marked * / MISS): %d\n", n_bad);
    return 0;
}
