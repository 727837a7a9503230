/* The calibration table: for every zoo model on its paper's
 * device preset, the papers' measured step times (CPU only, GPU only, human
 * expert) beside dplace's simulated ones, with their ratio, and op counts.
 * Also how long building each graph takes. The cells are judged by
 * dp_zoo_check_calibration, as tests/test_calibration.c does.
 * usage: bench_zoo [MODEL]   (default: every row of dp_zoo_paper_table)
 * Exit status: 0 when every cell holds, 1 when a cell misses (outside
 * +-30% or the wrong out-of-memory verdict) or a row cannot be evaluated,
 * 2 for an unknown MODEL. */
#include <stdio.h>
#include <string.h>

#include "dplace/zoo.h"

/* Prints " | paper dplace ratio" for one cell. */
static void print_cell(const dp_zoo_calibration_cell *c) {
    char pp[16], dp[32], ratio[16] = "";
    if (c->paper_s == DP_ZOO_NONE) snprintf(pp, sizeof pp, "-");
    else if (c->paper_s == DP_ZOO_OOM) snprintf(pp, sizeof pp, "OOM");
    else snprintf(pp, sizeof pp, "%.3f", c->paper_s);
    if (!c->simulated) snprintf(dp, sizeof dp, "n/a");
    else snprintf(dp, sizeof dp, "%.3f%s", c->dplace_s, c->dplace_oom ? " OOM" : "");
    if (c->paper_s == DP_ZOO_OOM) snprintf(ratio, sizeof ratio, c->miss ? "MISS" : "ok");
    else if (c->ratio > 0) snprintf(ratio, sizeof ratio, "%.2f%s", c->ratio, c->miss ? "*" : "");
    else if (c->miss) snprintf(ratio, sizeof ratio, "MISS");
    printf(" | %7s %11s %6s", pp, dp, ratio);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    printf("%-12s %-7s | %6s %6s %5s | %7s %11s %6s | %7s %11s %6s | %7s %11s %6s | %s\n", "model", "devices", "paper",
           "ops", "ratio", "cpu", "dplace", "ratio", "gpu", "dplace", "ratio", "expert", "dplace", "ratio", "build s");
    int n_bad = 0, n_rows = 0, n_failed = 0;
    for (const dp_zoo_paper_row *r = dp_zoo_paper_table(); r->model; r++) {
        if (only && strcmp(only, r->model)) continue;
        n_rows++;
        dp_zoo_calibration_row row;
        dp_error err;
        if (dp_zoo_check_calibration(r, DP_ZOO_CALIBRATION_TOLERANCE, &row, &err)) {
            printf("%-12s %-7s | not evaluated: %s\n", r->model, r->devices, err.msg);
            n_failed++;
            continue;
        }
        char ops_ratio[16] = "-", paper_ops[16] = "-";
        if (r->paper_ops) {
            snprintf(paper_ops, sizeof paper_ops, "%d", r->paper_ops);
            snprintf(ops_ratio, sizeof ops_ratio, "%.2f", (double)row.n_ops / r->paper_ops);
        }
        printf("%-12s %-7s | %6s %6d %5s", r->model, r->devices, paper_ops, row.n_ops, ops_ratio);
        for (int k = 0; k < DP_ZOO_CALIBRATION_PLACEMENT_COUNT; k++) print_cell(&row.cell[k]);
        printf(" | %.3f\n", row.build_s);
        for (int k = 0; k < DP_ZOO_CALIBRATION_PLACEMENT_COUNT; k++)
            if (row.cell[k].miss)
                printf("  miss: %s %s %s: %s\n", r->model, r->devices,
                       dp_zoo_calibration_placement_name((dp_zoo_calibration_placement)k), row.cell[k].note);
        fflush(stdout);
        n_bad += row.n_miss;
    }
    if (only && n_rows == 0) {
        fprintf(stderr, "bench_zoo: no paper row for model \"%s\"\n", only);
        return 2;
    }
    printf("cells outside +-30%% or with the wrong OOM verdict (marked * / MISS): %d", n_bad);
    if (n_failed) printf("; rows not evaluated: %d", n_failed);
    printf("\n");
    return n_bad || n_failed ? 1 : 0;
}
