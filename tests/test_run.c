/* The run driver's lower bound (dp_run_lower_bound): no placement simulates
 * faster than it under either executor (every placement of small random
 * graphs, random placements of zoo graphs), its fan-out part is exact where a heavy
 * tensor's two consumers must share a device or wait for its transfer, and
 * its weighted work part where a slow CPU can take only some of the work. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dplace/common.h"
#include "dplace/placement.h"
#include "dplace/run.h"
#include "dplace/zoo.h"
#include "test_fixtures.h"
#include "test_util.h"

static dp_run_bound bound_of(const dp_graph *g, const dp_devices *ds, const dp_sim *sim) {
    dp_run_bound b;
    dp_error err;
    CHECK(dp_run_lower_bound(g, ds, sim, &b, &err) == DP_STATUS_OK);
    CHECK(b.bound_s == fmax(b.critical_path_s, fmax(b.work_s, b.fanout_s)));
    return b;
}

/* The smallest step time over every placement of g on ds (n_ops^devices
 * placements: small graphs only). */
static double best_of_all(const dp_graph *g, const dp_devices *ds, const dp_sim *sim) {
    int32_t n = g->n_ops, D = ds->n_devices, p[8] = {0};
    CHECK(n <= 8);
    double best = INFINITY;
    for (;;) {
        dp_sim_result r;
        dp_error err;
        CHECK(dp_sim_run((dp_sim *)sim, p, NULL, &r, &err) == DP_STATUS_OK);
        best = fmin(best, r.step_time_s);
        int32_t k = 0;
        while (k < n && ++p[k] == D) p[k++] = 0;
        if (k == n) return best;
    }
}

/* g's bound on ds, and (in *best) the smallest step time of all its
 * placements under g's executor. */
static dp_run_bound bound_and_best(const dp_graph *g, const dp_devices *ds, double *best) {
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    dp_run_bound b = bound_of(g, ds, sim);
    *best = best_of_all(g, ds, sim);
    dp_sim_free(sim);
    return b;
}

/* u (1 s on a GPU) makes a tensor that takes 0.6 s to cross a link; a and b
 * (1 s each) both read it. Sharing u's GPU costs 3 s, sending the tensor to
 * another GPU for one of them 1 + 0.601 + 1: the fan-out bound is that
 * optimum, above the critical path's 2 s. */
static void test_fanout_exact(void) {
    dp_error err;
    dp_devices *ds = fixture_devices(2, (uint64_t)1 << 40, 1e10);
    dp_graph *g = dp_graph_init("fanout");
    CHECK(g);
    const char *names[3] = {"u", "a", "b"};
    for (int i = 0; i < 3; i++) {
        int32_t op = dp_graph_add_op(g, names[i], "MatMul", NULL, NULL, &err);
        CHECK(op == i);
        if (i > 0) CHECK(dp_graph_add_input(g, op, 0, 0, &err) == DP_STATUS_OK);
        CHECK(dp_graph_add_output_bytes(g, op, i == 0 ? 6000000000ULL : 4, &err) == DP_STATUS_OK);
        CHECK(dp_graph_add_cost(g, op, "gpu", 1.0, &err) == DP_STATUS_OK);
        CHECK(dp_graph_add_cost(g, op, "cpu", 100.0, &err) == DP_STATUS_OK);
    }
    fixture_finalize(g);
    double best;
    dp_run_bound b = bound_and_best(g, ds, &best);
    printf("  critical path %.6f s, fan-out %.6f s, best placement %.6f s\n", b.critical_path_s, b.fanout_s, best);
    CHECK_NEAR(b.critical_path_s, 2.0, 1e-12);
    CHECK_NEAR(b.fanout_s, 2.601, 1e-9);
    CHECK_NEAR(best, b.bound_s, 1e-9);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Five independent ops of 1 s on a GPU and 4 s on the CPU, on the CPU and
 * one GPU: the equal-weight work bound (2.5 s) counts the CPU's stream as a
 * GPU's; the weighted one finds the optimum, four ops on the GPU and one on
 * the CPU (4 s). */
static void test_work_weighted(void) {
    dp_error err;
    dp_devices *ds = fixture_devices(1, (uint64_t)1 << 40, 1e10);
    dp_graph *g = dp_graph_init("work");
    CHECK(g);
    for (int32_t i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof name, "op%d", (int)i);
        CHECK(dp_graph_add_op(g, name, "MatMul", NULL, NULL, &err) == i);
        CHECK(dp_graph_add_output_bytes(g, i, 4, &err) == DP_STATUS_OK);
        CHECK(dp_graph_add_cost(g, i, "gpu", 1.0, &err) == DP_STATUS_OK);
        CHECK(dp_graph_add_cost(g, i, "cpu", 4.0, &err) == DP_STATUS_OK);
    }
    fixture_finalize(g);
    double best;
    dp_run_bound b = bound_and_best(g, ds, &best);
    printf("  work: equal weights %.6f s, weighted %.6f s, best placement %.6f s\n", b.work_uniform_s, b.work_s,
           best);
    CHECK_NEAR(b.work_uniform_s, 2.5, 1e-12);
    CHECK_NEAR(best, 4.0, 1e-9);
    CHECK(b.work_s <= best);
    CHECK_NEAR(b.work_s, 4.0, 1e-3);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Random DAGs of 6 ops (random costs, some heavy tensors, fan-outs) on a
 * CPU and two GPUs: the bound is at most the best of all 729 placements (1,000 graphs),
 * under TensorFlow's executor and, for every other graph, the eager one (the
 * host taking 0.05 s to issue an op and 0.03 s to turn from GPU work to a
 * CPU op, some ops fused and issued for nothing). */
static void test_bound_below_every_placement(void) {
    dp_error err;
    dp_devices *ds = fixture_devices(2, (uint64_t)1 << 40, 1e10);
    ds->devices[0].dispatch_s = 0.05;
    ds->devices[0].switch_s = 0.03;
    dp_rng rng, fused_rng;
    dp_rng_seed(&rng, 7);
    dp_rng_seed(&fused_rng, 8);
    int tighter = 0, weighted = 0;
    for (int trial = 0; trial < 1000; trial++) {
        TEST_CASE("trial %d", trial);
        dp_graph *g = dp_graph_init("random");
        CHECK(g);
        for (int32_t i = 0; i < 6; i++) {
            char name[8];
            snprintf(name, sizeof name, "op%d", (int)i);
            int32_t op = dp_graph_add_op(g, name, "MatMul", NULL, NULL, &err);
            CHECK(op == i);
            for (int32_t j = 0; j < i; j++)
                if (dp_rng_below(&rng, 3) == 0) CHECK(dp_graph_add_input(g, op, j, 0, &err) == DP_STATUS_OK);
            uint64_t bytes = dp_rng_below(&rng, 2) ? dp_rng_below(&rng, 20) * 500000000ULL : 1000;
            CHECK(dp_graph_add_output_bytes(g, op, bytes, &err) == DP_STATUS_OK);
            double gpu = 0.1 + (double)dp_rng_below(&rng, 20) * 0.1;
            CHECK(dp_graph_add_cost(g, op, "gpu", gpu, &err) == DP_STATUS_OK);
            CHECK(dp_graph_add_cost(g, op, "cpu", gpu * (1 + (double)dp_rng_below(&rng, 4)), &err) ==
                  DP_STATUS_OK);
        }
        fixture_finalize(g);
        g->executor = trial % 2 ? DP_EXECUTOR_TORCH : DP_EXECUTOR_TF;
        for (int32_t i = 0; i < g->n_ops && trial % 2; i++) g->ops[i].fused = dp_rng_below(&fused_rng, 3) == 0;
        double best;
        dp_run_bound b = bound_and_best(g, ds, &best);
        if (!(b.bound_s <= best * (1 + 1e-12))) {
            fprintf(stderr, "trial %d: bound %.9f s (critical path %.9f, work %.9f, fan-out %.9f) above the best "
                            "placement's %.9f s\n",
                    trial, b.bound_s, b.critical_path_s, b.work_s, b.fanout_s, best);
            exit(1);
        }
        tighter += b.fanout_s > fmax(b.critical_path_s, b.work_s);
        weighted += b.work_s > b.work_uniform_s * (1 + 1e-9) && b.work_s > b.critical_path_s;
        dp_graph_free(g);
    }
    test_case_[0] = '\0'; /* the counts are over every trial */
    printf("  1000 graphs: the fan-out part raised the bound on %d, the weighted work on %d\n", tighter, weighted);
    CHECK(tighter > 0 && weighted > 0); /* the trials exercise both */
    dp_devices_free(ds);
}

/* Random placements (and the single-GPU one) of zoo graphs on their
 * benchmarks' machines never beat the bound, under either executor. */
static void test_bound_below_zoo_placements(void) {
    static const char *const cases[][2] = {{"gnmt4", "p100x4"}, {"rnnlm", "k40x2"}, {"inception_v3", "k40x4"}};
    dp_rng rng;
    dp_rng_seed(&rng, 11);
    for (size_t c = 0; c < 2 * sizeof cases / sizeof cases[0]; c++) {
        dp_executor ex = c % 2 ? DP_EXECUTOR_TORCH : DP_EXECUTOR_TF;
        TEST_CASE("%s on %s, %s", cases[c / 2][0], cases[c / 2][1], dp_executor_name(ex));
        dp_error err;
        dp_graph *g = dp_zoo_build(cases[c / 2][0], 0, &err);
        CHECK(g);
        g->executor = ex;
        dp_devices *ds = dp_devices_preset(cases[c / 2][1], &err);
        CHECK(ds);
        dp_sim *sim = dp_sim_init(g, ds, &err);
        CHECK(sim);
        dp_run_bound b = bound_of(g, ds, sim);
        int32_t *p = malloc(sizeof(int32_t) * (size_t)g->n_ops);
        CHECK(p);
        double best = INFINITY;
        for (int k = 0; k < 8; k++) {
            for (int32_t i = 0; i < g->n_ops; i++) {
                int32_t d = k == 0 ? 1 : (int32_t)dp_rng_below(&rng, (uint64_t)ds->n_devices);
                while (!dp_placement_allowed(g, ds, i, d)) d = (d + 1) % ds->n_devices;
                p[i] = d;
            }
            dp_sim_result r;
            CHECK(dp_sim_run(sim, p, NULL, &r, &err) == DP_STATUS_OK);
            best = fmin(best, r.step_time_s);
        }
        printf("  %s on %s, %s: bound %.6f s (fan-out %.6f s), best of 8 placements %.6f s\n", cases[c / 2][0],
               cases[c / 2][1], dp_executor_name(ex), b.bound_s, b.fanout_s, best);
        CHECK(b.bound_s <= best);
        free(p);
        dp_sim_free(sim);
        dp_devices_free(ds);
        dp_graph_free(g);
    }
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_fanout_exact);
    TEST_RUN(test_work_weighted);
    TEST_RUN(test_bound_below_every_placement);
    TEST_RUN(test_bound_below_zoo_placements);
    return test_end();
}
