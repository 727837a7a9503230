/* Helpers shared by the tests: a small device set, sealing a hand-built
 * graph, simulating a placement, and judging a gradient check. Every failure
 * ends the test (test_util.h). */
#ifndef DPLACE_TEST_FIXTURES_H
#define DPLACE_TEST_FIXTURES_H

#include <stdio.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/nn_check.h"
#include "dplace/settings_job.h"
#include "dplace/sim.h"
#include "test_util.h"

/* cpu:0 and n_gpus GPUs of gpu_mem bytes (1 TFLOP/s, 100 GB/s); a link of
 * `bw` bytes/s and 1 ms latency from the CPU to each GPU and between each
 * pair of GPUs, both directions. */
static inline dp_devices *fixture_devices(int n_gpus, uint64_t gpu_mem, double bw) {
    dp_error err;
    dp_devices *ds = dp_devices_init("test");
    CHECK(ds);
    dp_device cpu = {"cpu:0", DP_DEVKIND_CPU, "cpu", 1e9, 1e9, (uint64_t)1 << 40, 0, 1, 0, "", 0, {{0, 0}}, {0, 0, 0}, 0, 0};
    CHECK(dp_devices_add(ds, &cpu, &err) == DP_STATUS_OK);
    for (int i = 0; i < n_gpus; i++) {
        dp_device gpu = {"", DP_DEVKIND_GPU, "gpu", 1e12, 1e11, gpu_mem, 0, 1, 0, "", 0, {{0, 0}}, {0, 0, 0}, 0, 0};
        snprintf(gpu.name, sizeof gpu.name, "gpu:%d", i);
        CHECK(dp_devices_add(ds, &gpu, &err) == DP_STATUS_OK);
        CHECK(dp_devices_add_link(ds, "cpu:0", gpu.name, bw, 1e-3, 1, &err) == DP_STATUS_OK);
        for (int j = 0; j < i; j++) {
            char other[16];
            snprintf(other, sizeof other, "gpu:%d", j);
            CHECK(dp_devices_add_link(ds, other, gpu.name, bw, 1e-3, 1, &err) == DP_STATUS_OK);
        }
    }
    dp_status st = dp_devices_finalize(ds, "test", &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    CHECK(st == DP_STATUS_OK);
    return ds;
}

/* Seals g; a failure prints the message and ends the test. */
static inline void fixture_finalize(dp_graph *g) {
    dp_error err;
    dp_status st = dp_graph_finalize(g, "test", &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    CHECK(st == DP_STATUS_OK);
}

/* A graph and a device set read from JSON text, a simulator context of
 * them and room for a run's result: the hand-worked simulator tests'. */
typedef struct sim_fixture {
    dp_graph *g;
    dp_devices *ds;
    dp_sim *sim;
    dp_sim_result res;
} sim_fixture;

static inline sim_fixture sim_fixture_open(const char *graph_json, const char *devices_json) {
    sim_fixture f;
    dp_error err;
    f.g = dp_graph_read_string(graph_json, "test-graph", &err);
    if (!f.g) fprintf(stderr, "graph: %s\n", err.msg);
    CHECK(f.g);
    f.ds = dp_devices_read_string(devices_json, "test-devices", &err);
    if (!f.ds) fprintf(stderr, "devices: %s\n", err.msg);
    CHECK(f.ds);
    f.sim = dp_sim_init(f.g, f.ds, &err);
    if (!f.sim) fprintf(stderr, "sim: %s\n", err.msg);
    CHECK(f.sim);
    return f;
}

static inline void sim_fixture_close(sim_fixture *f) {
    dp_sim_free(f->sim);
    dp_devices_free(f->ds);
    dp_graph_free(f->g);
}

/* Simulates placement p of g on ds once (no noise), in a context of its own. */
static inline dp_sim_result fixture_simulate(const dp_graph *g, const dp_devices *ds, const int32_t *p) {
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    if (!sim) fprintf(stderr, "%s\n", err.msg);
    CHECK(sim);
    dp_sim_result r;
    dp_status st = dp_sim_run(sim, p, NULL, &r, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    CHECK(st == DP_STATUS_OK);
    dp_sim_free(sim);
    return r;
}

/* Prints one line per tensor of a gradient check (dp_nn_gradcheck's results
 * r for the n tensors t, labelled what) and ends the test when a relative
 * error exceeds tol, when more than a quarter of a tensor's points were
 * skipped as kinks, or when a tensor's numeric gradient never exceeds reach
 * (the loss does not reach the tensor, so the check would compare 0 with 0).
 * Returns the largest relative error. */
static inline double fixture_gradcheck_report(const char *what, const dp_nn_check_tensor *t,
                                              const dp_nn_check_result *r, int n, double tol, double reach) {
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        printf("  %-22s %-14s max rel err %.2e  (%zu checked, %zu kinks skipped, |numeric| <= %.3g; at %zu: "
               "analytic %.6g numeric %.6g)\n",
               what, t[i].name, r[i].max_rel, r[i].checked, r[i].skipped, r[i].max_numeric, r[i].worst,
               r[i].analytic, r[i].numeric);
        if (r[i].max_rel > worst) worst = r[i].max_rel;
        if (!(r[i].max_rel <= tol)) {
            fprintf(stderr, "gradient check failed: %s %s rel err %.3e > %.1e\n", what, t[i].name, r[i].max_rel,
                    tol);
            exit(1);
        }
        if (r[i].skipped * 4 > r[i].checked + r[i].skipped) {
            fprintf(stderr, "gradient check of %s %s: too many kinks skipped (%zu of %zu)\n", what, t[i].name,
                    r[i].skipped, r[i].checked + r[i].skipped);
            exit(1);
        }
        if (!(r[i].max_numeric > reach)) {
            fprintf(stderr, "gradient check of %s %s compares nothing: largest |numeric| %.3g <= %.0e\n", what,
                    t[i].name, r[i].max_numeric, reach);
            exit(1);
        }
    }
    return worst;
}

/* The agent part of a preset (include/dplace/settings_job.h) into *c: 0, or -1
 * for an unknown name. */
static inline int agent_preset(const char *name, dp_agent_config *c) {
    dp_settings s;
    int r = dp_settings_preset(name, &s);
    if (!r) *c = s.agent;
    return r;
}

#endif
