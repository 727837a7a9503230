/* The calibration holds: every cell of the papers' step-time tables (each
 * zoo model on its paper's device preset under the cpu, gpu and expert
 * placements, dp_zoo_paper_table) is within +-30% of the paper's time, and
 * every cell the papers report as out of memory is out of memory. The cells
 * are judged by dp_zoo_check_calibration, the function bench/bench_zoo
 * prints (docs/calibration.md). */
#include "dplace/zoo.h"
#include "test_util.h"

/* Every paper row evaluates and every judged cell holds; prints each cell,
 * and paper beside dplace for the first that misses. */
static void test_every_cell(void) {
    int rows = 0, judged = 0;
    for (const dp_zoo_paper_row *r = dp_zoo_paper_table(); r->model; r++) {
        dp_zoo_calibration_row row;
        dp_error err;
        dp_status st = dp_zoo_check_calibration(r, DP_ZOO_CALIBRATION_TOLERANCE, &row, &err);
        if (st) fprintf(stderr, "%s on %s: %s\n", r->model, r->devices, err.msg);
        CHECK_INT_EQ(st, DP_STATUS_OK);
        rows++;
        for (int k = 0; k < DP_ZOO_CALIBRATION_PLACEMENT_COUNT; k++) {
            const dp_zoo_calibration_cell *c = &row.cell[k];
            const char *name = dp_zoo_calibration_placement_name((dp_zoo_calibration_placement)k);
            if (!c->judged) continue;
            judged++;
            char paper[16], dplace[32];
            if (c->paper_s == DP_ZOO_OOM) snprintf(paper, sizeof paper, "OOM");
            else snprintf(paper, sizeof paper, "%.3f s", c->paper_s);
            if (!c->simulated) snprintf(dplace, sizeof dplace, "none");
            else snprintf(dplace, sizeof dplace, "%.3f s%s", c->dplace_s, c->dplace_oom ? " OOM" : "");
            printf("  %-12s %-7s %-6s paper %-9s dplace %-13s", r->model, r->devices, name, paper, dplace);
            if (c->ratio > 0) printf(" ratio %.2f", c->ratio);
            printf("\n");
            if (c->miss) {
                fprintf(stderr, "%s on %s, %s: paper %s, dplace %s: %s\n", r->model, r->devices, name, paper,
                        dplace, c->note);
                exit(1);
            }
        }
        CHECK_INT_EQ(row.n_miss, 0);
    }
    /* the table is not empty, and has both kinds of cell */
    CHECK(rows >= 9);
    CHECK(judged >= 20);
}

/* The judging itself: a cell off by more than the tolerance misses, an OOM
 * cell that fits misses (nmt2's GPU-only cell with the paper's OOM: dplace
 * runs out of memory too; with a tolerance of zero every measured cell
 * misses, the OOM cells still hold). */
static void test_judging(void) {
    const dp_zoo_paper_row *nmt2 = NULL;
    for (const dp_zoo_paper_row *r = dp_zoo_paper_table(); r->model; r++)
        if (!strcmp(r->model, "nmt2")) nmt2 = r;
    CHECK(nmt2 != NULL);
    dp_zoo_calibration_row row;
    dp_error err;
    CHECK_INT_EQ(dp_zoo_check_calibration(nmt2, 0.0, &row, &err), DP_STATUS_OK);
    const dp_zoo_calibration_cell *cpu = &row.cell[DP_ZOO_CALIBRATION_PLACEMENT_CPU];
    const dp_zoo_calibration_cell *gpu = &row.cell[DP_ZOO_CALIBRATION_PLACEMENT_GPU];
    CHECK(cpu->judged && cpu->miss && cpu->ratio > 0);
    CHECK_STR_CONTAINS(cpu->note, "outside");
    CHECK(gpu->judged && !gpu->miss && gpu->dplace_oom);
    CHECK_INT_EQ(row.n_miss, 2);
    /* a measured time where dplace runs out of memory misses; an OOM where
     * dplace fits misses */
    dp_zoo_paper_row fake = *nmt2;
    fake.gpu_s = 2.5;
    fake.expert_s = DP_ZOO_OOM;
    CHECK_INT_EQ(dp_zoo_check_calibration(&fake, 0.3, &row, &err), DP_STATUS_OK);
    CHECK(row.cell[DP_ZOO_CALIBRATION_PLACEMENT_GPU].miss);
    CHECK_STR_CONTAINS(row.cell[DP_ZOO_CALIBRATION_PLACEMENT_GPU].note, "dplace runs out of memory");
    CHECK(row.cell[DP_ZOO_CALIBRATION_PLACEMENT_EXPERT].miss);
    CHECK_STR_CONTAINS(row.cell[DP_ZOO_CALIBRATION_PLACEMENT_EXPERT].note, "the paper runs out of memory");
    /* no expert placement for BERT: not simulated; a miss only where the
     * paper has a value for it */
    fake = *nmt2;
    fake.model = "bert_base";
    fake.devices = "p100x4";
    fake.cpu_s = fake.gpu_s = DP_ZOO_NONE;
    fake.expert_s = 1.0;
    CHECK_INT_EQ(dp_zoo_check_calibration(&fake, 0.3, &row, &err), DP_STATUS_OK);
    CHECK(!row.cell[DP_ZOO_CALIBRATION_PLACEMENT_EXPERT].simulated);
    CHECK(row.cell[DP_ZOO_CALIBRATION_PLACEMENT_EXPERT].miss);
    CHECK_STR_CONTAINS(row.cell[DP_ZOO_CALIBRATION_PLACEMENT_EXPERT].note, "no expert placement");
    CHECK_INT_EQ(row.n_miss, 1);
    /* an unknown model is an error naming it, not a miss */
    fake.model = "nmt3";
    CHECK_INT_EQ(dp_zoo_check_calibration(&fake, 0.3, &row, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "calibration of nmt3 on p100x4");
}

int main(void) {
    TEST_RUN(test_every_cell);
    TEST_RUN(test_judging);
    printf("test_calibration: all passed\n");
    return 0;
}
