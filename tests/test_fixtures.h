/* Fixtures shared by the tests of the placers, groupers and agents: a small
 * device set and sealing a hand-built graph. Every failure ends the test
 * (test_util.h). */
#ifndef DPLACE_TEST_FIXTURES_H
#define DPLACE_TEST_FIXTURES_H

#include <stdio.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "test_util.h"

/* cpu:0 and n_gpus GPUs of gpu_mem bytes (1 TFLOP/s, 100 GB/s); a link of
 * `bw` bytes/s and 1 ms latency from the CPU to each GPU and between each
 * pair of GPUs, both directions. */
static inline dp_devices *fixture_devices(int n_gpus, uint64_t gpu_mem, double bw) {
    dp_error err;
    dp_devices *ds = dp_devices_init("test");
    CHECK(ds);
    dp_device cpu = {"cpu:0", DP_DEVKIND_CPU, "cpu", 1e9, 1e9, (uint64_t)1 << 40, 0, 1, 0};
    CHECK(dp_devices_add(ds, &cpu, &err) == DP_STATUS_OK);
    for (int i = 0; i < n_gpus; i++) {
        dp_device gpu = {"", DP_DEVKIND_GPU, "gpu", 1e12, 1e11, gpu_mem, 0, 1, 0};
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

#endif
