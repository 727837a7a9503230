/* The device presets of today's machines (docs/devices.md): each family's
 * devices, figures and links as documented, the routes its topology gives
 * (DGX-1's NVLink mesh, NVSwitch, PCIe through the host), transfer times of
 * a known byte count, and every baseline placer on a small graph on each. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/devices.h"
#include "dplace/reference.h"
#include "dplace/zoo.h"
#include "test_util.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * 1024.0 * 1024.0)
#define PCIE3 (8e9 * 16 * 128.0 / 130.0 / 8.0)
#define PCIE4 (16e9 * 16 * 128.0 / 130.0 / 8.0)
#define PCIE5 (32e9 * 16 * 128.0 / 130.0 / 8.0)
#define LATENCY 40e-6

typedef enum topology { TOPO_HOST, TOPO_DGX1, TOPO_SWITCH } topology;

/* One family as docs/devices.md documents it. */
typedef struct family {
    const char *prefix;
    int max_gpus;
    const char *cpu_model;
    double cpu_flops, cpu_bw, cpu_mem;
    const char *gpu_model;
    double gpu_flops, gpu_bw, gpu_mib;
    double host_bw;
    topology topo;
    double fabric_bw; /* one NVLink (DGX1) or one GPU's NVLink total (SWITCH), per direction */
    const char *generation;
    double tensor[DP_TENSOR_MATH_COUNT]; /* dense tensor-core peaks: TF32, FP16, BF16 */
} family;

static const family families[] = {
    {"v100-nvlink", 8, "Broadwell-E5-2698v4", 2.816e12, 136.512e9, 512 * GIB, "V100-SXM2", 15.7e12, 900e9, 16160,
     PCIE3, TOPO_DGX1, 25e9, "volta", {0, 125e12, 0}},
    {"v100-pcie", 8, "Broadwell-E5-2698v4", 2.816e12, 136.512e9, 512 * GIB, "V100-PCIe", 14e12, 900e9, 16160, PCIE3,
     TOPO_HOST, 0, "volta", {0, 112e12, 0}},
    {"a100-sxm", 8, "Zen2-EPYC-7742", 9.216e12, 409.6e9, 1024 * GIB, "A100-SXM4", 19.5e12, 1555e9, 40536, PCIE4,
     TOPO_SWITCH, 300e9, "ampere", {156e12, 312e12, 312e12}},
    {"a100-pcie", 8, "Zen2-EPYC-7742", 9.216e12, 409.6e9, 1024 * GIB, "A100-PCIe", 19.5e12, 1555e9, 40326, PCIE4,
     TOPO_HOST, 0, "ampere", {156e12, 312e12, 312e12}},
    {"h100-sxm", 8, "SapphireRapids-8480C", 14.336e12, 614.4e9, 2048 * GIB, "H100-SXM5", 67e12, 3.35e12, 81082,
     PCIE5, TOPO_SWITCH, 450e9, "hopper", {494.7e12, 989.4e12, 989.4e12}},
    {"h100-pcie", 8, "SapphireRapids-8480C", 14.336e12, 614.4e9, 2048 * GIB, "H100-PCIe", 51e12, 2.0e12, 81008,
     PCIE5, TOPO_HOST, 0, "hopper", {378e12, 756e12, 756e12}},
    {"h200", 8, "SapphireRapids-8480C", 14.336e12, 614.4e9, 2048 * GIB, "H200-SXM", 67e12, 4.8e12, 141e9 / MIB,
     PCIE5, TOPO_SWITCH, 450e9, "hopper", {494.7e12, 989.4e12, 989.4e12}},
    {"l4", 8, "Zen3-EPYC-7763", 10.0352e12, 409.6e9, 512 * GIB, "L4", 30.3e12, 300e9, 23034, PCIE4, TOPO_HOST, 0,
     "ada", {60e12, 121e12, 121e12}},
    {"rtx4090", 4, "Zen3-TR-PRO-5975WX", 3.6864e12, 204.8e9, 256 * GIB, "RTX4090", 82.6e12, 1008e9, 24563, PCIE4,
     TOPO_HOST, 0, "ada", {82.6e12, 165.2e12, 165.2e12}},
};
#define N_FAMILIES ((int)(sizeof families / sizeof families[0]))

/* NVLinks between GPUs i and j of a DGX-1 with V100, as `nvidia-smi topo -m`
 * prints them (NV1, NV2) and the DGX-1 white paper draws them. */
static const int dgx1[8][8] = {
    {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
    {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1}, {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0},
};

static dp_devices *load(const char *prefix, int n) {
    char name[64];
    snprintf(name, sizeof name, "%sx%d", prefix, n);
    dp_error err;
    dp_devices *ds = dp_devices_preset(name, &err);
    if (!ds) fprintf(stderr, "%s: %s\n", name, err.msg);
    CHECK(ds);
    return ds;
}

/* The link from device a to device b, NULL when the set has none. */
static const dp_link *link_between(const dp_devices *ds, int32_t a, int32_t b) {
    for (int32_t l = 0; l < ds->n_links; l++)
        if (ds->links[l].from == a && ds->links[l].to == b) return &ds->links[l];
    return NULL;
}

/* GPU-GPU link directions a family's topology gives n GPUs. */
static int fabric_links(const family *f, int n) {
    int count = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && (f->topo == TOPO_SWITCH || (f->topo == TOPO_DGX1 && dgx1[i][j]))) count++;
    return count;
}

/* Every N of every family loads: one CPU (the host) and N GPUs, PCIe both
 * ways for each GPU plus the fabric's GPU-GPU links; N past the family's
 * range is refused naming the families. */
static void test_every_size_loads(void) {
    for (int k = 0; k < N_FAMILIES; k++) {
        const family *f = &families[k];
        for (int n = 1; n <= f->max_gpus; n++) {
            TEST_CASE("%sx%d", f->prefix, n);
            dp_devices *ds = load(f->prefix, n);
            CHECK_INT_EQ(ds->n_devices, n + 1);
            CHECK_INT_EQ(ds->host, 0);
            CHECK_INT_EQ(ds->kind_count[DP_DEVKIND_CPU], 1);
            CHECK_INT_EQ(ds->kind_count[DP_DEVKIND_GPU], n);
            CHECK_INT_EQ(ds->n_links, 2 * n + fabric_links(f, n));
            CHECK_INT_EQ(ds->staging, DP_STAGING_PIPELINED);
            dp_devices_free(ds);
        }
        char name[64];
        snprintf(name, sizeof name, "%sx%d", f->prefix, f->max_gpus + 1);
        TEST_CASE("%s", name);
        dp_error err;
        CHECK(!dp_devices_preset(name, &err));
        CHECK_STR_CONTAINS(err.msg, name);
        CHECK_STR_CONTAINS(err.msg, "v100-nvlinkxN");
        CHECK_STR_CONTAINS(err.msg, "rtx4090xN with N = 1..4");
    }
}

/* Each family's CPU and GPUs carry the figures docs/devices.md lists (the
 * GPUs' generation and dense tensor-core peaks too), and each GPU's PCIe
 * link to the host the bandwidth of its generation. */
static void test_figures_as_documented(void) {
    for (int k = 0; k < N_FAMILIES; k++) {
        const family *f = &families[k];
        TEST_CASE("%sx2", f->prefix);
        dp_devices *ds = load(f->prefix, 2);
        const dp_device *cpu = &ds->devices[0], *gpu = &ds->devices[2];
        CHECK(!strcmp(cpu->model, f->cpu_model));
        CHECK_NEAR(cpu->peak_flops, f->cpu_flops, 1e-12);
        CHECK_NEAR(cpu->mem_bandwidth, f->cpu_bw, 1e-12);
        CHECK_INT_EQ(cpu->memory_bytes, (uint64_t)f->cpu_mem);
        CHECK(!strcmp(gpu->model, f->gpu_model));
        CHECK_INT_EQ(gpu->kind, DP_DEVKIND_GPU);
        CHECK_NEAR(gpu->peak_flops, f->gpu_flops, 1e-12);
        CHECK_NEAR(gpu->mem_bandwidth, f->gpu_bw, 1e-12);
        CHECK_INT_EQ(gpu->memory_bytes, (uint64_t)(f->gpu_mib * MIB));
        CHECK_INT_EQ(gpu->streams, 1);
        CHECK(gpu->launch_overhead_s == 3.5e-6);
        CHECK(!strcmp(gpu->generation, f->generation));
        for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++) CHECK(gpu->tensor_flops[m] == f->tensor[m]);
        for (int32_t g = 1; g <= 2; g++) {
            const dp_link *up = link_between(ds, g, 0), *down = link_between(ds, 0, g);
            CHECK(up && down);
            CHECK_NEAR(up->bandwidth, f->host_bw, 1e-12);
            CHECK_NEAR(down->bandwidth, f->host_bw, 1e-12);
            CHECK(up->latency_s == LATENCY && down->latency_s == LATENCY);
        }
        dp_devices_free(ds);
    }
}

/* v100-nvlinkx8, DGX-1's hybrid cube mesh: the 16 pairs with NVLink have a
 * link of their own at 25 GB/s per NVLink (50 GB/s where a pair has two),
 * every GPU has six NVLinks, and the 12 pairs without one route through
 * cpu:0 over PCIe in two hops. */
static void test_dgx1_mesh_routes(void) {
    dp_devices *ds = load("v100-nvlink", 8);
    int32_t n = ds->n_devices;
    for (int i = 0; i < 8; i++) {
        double total = 0;
        for (int j = 0; j < 8; j++) {
            if (i == j) continue;
            TEST_CASE("v100-nvlinkx8 gpu:%d -> gpu:%d", i, j);
            int32_t a = i + 1, b = j + 1;
            const dp_link *l = link_between(ds, a, b);
            if (dgx1[i][j]) {
                CHECK(l);
                CHECK_NEAR(l->bandwidth, dgx1[i][j] * 25e9, 1e-12);
                CHECK_INT_EQ(ds->route_len[a * n + b], 1);
                CHECK(&ds->links[ds->route[(a * n + b) * 2]] == l);
                total += l->bandwidth;
            } else {
                CHECK(!l);
                CHECK_INT_EQ(ds->route_len[a * n + b], 2);
                CHECK_INT_EQ(ds->links[ds->route[(a * n + b) * 2]].to, 0);
                CHECK_INT_EQ(ds->links[ds->route[(a * n + b) * 2 + 1]].from, 0);
            }
        }
        TEST_CASE("v100-nvlinkx8 gpu:%d", i);
        CHECK_NEAR(total, 6 * 25e9, 1e-12);
    }
    dp_devices_free(ds);
}

/* v100-nvlinkx4 is the DGX-1's first four GPUs: fully connected, with two
 * NVLinks between gpu:0 and gpu:3, gpu:1 and gpu:2, gpu:2 and gpu:3. */
static void test_dgx1_subset(void) {
    dp_devices *ds = load("v100-nvlink", 4);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            if (i == j) continue;
            TEST_CASE("v100-nvlinkx4 gpu:%d -> gpu:%d", i, j);
            CHECK_INT_EQ(ds->route_len[(i + 1) * 5 + j + 1], 1);
            int lo = i < j ? i : j, hi = i < j ? j : i;
            int two = (lo == 0 && hi == 3) || (lo == 1 && hi == 2) || (lo == 2 && hi == 3);
            CHECK_NEAR(link_between(ds, i + 1, j + 1)->bandwidth, two ? 50e9 : 25e9, 1e-12);
        }
    dp_devices_free(ds);
}

/* a100-sxmx8, h100-sxmx8 and h200x8 (NVSwitch): every GPU pair has a link
 * of its own at one GPU's whole NVLink bandwidth (12, 18 and 18 NVLinks of
 * 25 GB/s). */
static void test_nvswitch_routes(void) {
    const char *prefix[] = {"a100-sxm", "h100-sxm", "h200"};
    const double bw[] = {300e9, 450e9, 450e9};
    for (int k = 0; k < 3; k++) {
        dp_devices *ds = load(prefix[k], 8);
        for (int32_t a = 1; a <= 8; a++)
            for (int32_t b = 1; b <= 8; b++) {
                if (a == b) continue;
                TEST_CASE("%sx8 gpu:%d -> gpu:%d", prefix[k], (int)a - 1, (int)b - 1);
                CHECK_INT_EQ(ds->route_len[a * 9 + b], 1);
                CHECK_NEAR(ds->links[ds->route[(a * 9 + b) * 2]].bandwidth, bw[k], 1e-12);
            }
        dp_devices_free(ds);
    }
}

/* The PCIe-only families: no GPU-GPU link, every GPU pair through cpu:0. */
static void test_pcie_routes_through_host(void) {
    for (int k = 0; k < N_FAMILIES; k++) {
        const family *f = &families[k];
        if (f->topo != TOPO_HOST) continue;
        dp_devices *ds = load(f->prefix, f->max_gpus);
        int32_t n = ds->n_devices;
        for (int32_t a = 1; a < n; a++)
            for (int32_t b = 1; b < n; b++) {
                if (a == b) continue;
                TEST_CASE("%sx%d gpu:%d -> gpu:%d", f->prefix, f->max_gpus, (int)a - 1, (int)b - 1);
                CHECK(!link_between(ds, a, b));
                CHECK_INT_EQ(ds->route_len[a * n + b], 2);
            }
        dp_devices_free(ds);
    }
}

/* Seconds for 1e9 bytes on free links: a hop's 40 us plus the bytes at the
 * route's slowest link (pipelined through the host: two latencies). */
static void test_transfer_seconds(void) {
    struct {
        const char *preset;
        int32_t from, to;
        double seconds;
    } cases[] = {
        {"v100-nvlinkx8", 1, 4, LATENCY + 1e9 / 50e9},      /* gpu:0 -> gpu:3, two NVLinks */
        {"v100-nvlinkx8", 1, 2, LATENCY + 1e9 / 25e9},      /* gpu:0 -> gpu:1, one NVLink  */
        {"v100-nvlinkx8", 1, 6, 2 * LATENCY + 1e9 / PCIE3}, /* gpu:0 -> gpu:5, via cpu:0   */
        {"v100-nvlinkx8", 0, 8, LATENCY + 1e9 / PCIE3},     /* cpu:0 -> gpu:7              */
        {"v100-pciex8", 1, 8, 2 * LATENCY + 1e9 / PCIE3},
        {"a100-sxmx8", 1, 8, LATENCY + 1e9 / 300e9},
        {"a100-pciex8", 1, 8, 2 * LATENCY + 1e9 / PCIE4},
        {"h100-sxmx8", 8, 1, LATENCY + 1e9 / 450e9},
        {"h100-pciex8", 1, 8, 2 * LATENCY + 1e9 / PCIE5},
        {"h100-pciex8", 0, 1, LATENCY + 1e9 / PCIE5},
        {"h200x8", 1, 8, LATENCY + 1e9 / 450e9},
        {"l4x8", 1, 8, 2 * LATENCY + 1e9 / PCIE4},
        {"rtx4090x4", 1, 4, 2 * LATENCY + 1e9 / PCIE4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TEST_CASE("%s, device %d -> device %d", cases[i].preset, (int)cases[i].from, (int)cases[i].to);
        dp_error err;
        dp_devices *ds = dp_devices_preset(cases[i].preset, &err);
        CHECK(ds);
        CHECK_NEAR(dp_devices_transfer_seconds(ds, cases[i].from, cases[i].to, 1e9), cases[i].seconds, 1e-12);
        dp_devices_free(ds);
    }
}

/* Every name dplace devices lists loads, and each new family is listed. */
static void test_listed_names(void) {
    int seen[N_FAMILIES] = {0};
    for (const char *const *p = dp_devices_preset_names(); *p; p++) {
        TEST_CASE("preset %s", *p);
        dp_error err;
        dp_devices *ds = dp_devices_preset(*p, &err);
        CHECK(ds);
        dp_devices_free(ds);
        for (int k = 0; k < N_FAMILIES; k++) {
            size_t len = strlen(families[k].prefix);
            if (!strncmp(*p, families[k].prefix, len) && (*p)[len] == 'x') seen[k] = 1;
        }
    }
    for (int k = 0; k < N_FAMILIES; k++) {
        TEST_CASE("family %s", families[k].prefix);
        CHECK(seen[k]);
    }
}

/* Every baseline placer on rnnlm (batch 16) on a preset: each that applies
 * gives a placement of the set's devices that the simulator finds valid,
 * single GPU and the expert among them, and the bound is below the best. */
static void baseline_on(const char *preset) {
    dp_error err;
    dp_graph *g = dp_zoo_build("rnnlm", 16, &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset(preset, &err);
    CHECK(ds);
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    dp_reference_options o = dp_reference_options_default();
    o.place.expert = dp_zoo_expert_placement;
    dp_reference r;
    CHECK_INT_EQ(dp_reference_compute(sim, g, ds, &o, &r, &err), DP_STATUS_OK);
    CHECK_INT_EQ(r.n, DP_PLACE_METHOD_COUNT);
    for (int32_t k = 0; k < r.n; k++) {
        TEST_CASE("rnnlm on %s, %s", preset, dp_place_method_name(r.reports[k].method));
        if (r.reports[k].method >= DP_PLACE_METHOD_ACCEL_BALANCED) { /* the zoo has no modules */
            CHECK_INT_EQ(r.reports[k].status, DP_STATUS_UNSUPPORTED);
            CHECK(!dp_reference_placement(&r, r.reports[k].method));
            continue;
        }
        CHECK_INT_EQ(r.reports[k].status, DP_STATUS_OK);
        const int32_t *p = dp_reference_placement(&r, r.reports[k].method);
        CHECK(p);
        for (int32_t i = 0; i < g->n_ops; i++) CHECK(p[i] >= 0 && p[i] < ds->n_devices);
        if (!r.reports[k].sim.valid) fprintf(stderr, "%s\n", r.reports[k].sim.reason);
        CHECK(r.reports[k].sim.valid);
        CHECK(r.reports[k].sim.step_time_s > 0 && isfinite(r.reports[k].sim.step_time_s));
    }
    TEST_CASE("rnnlm on %s", preset);
    CHECK(r.gpu_valid && r.expert_valid && r.best >= 0);
    CHECK(r.bound.bound_s > 0 && r.bound.bound_s <= r.best_s);
    dp_reference_free(&r);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
}

static void test_baseline_v100_nvlink(void) { baseline_on("v100-nvlinkx8"); }
static void test_baseline_v100_pcie(void) { baseline_on("v100-pciex8"); }
static void test_baseline_a100_sxm(void) { baseline_on("a100-sxmx8"); }
static void test_baseline_a100_pcie(void) { baseline_on("a100-pciex8"); }
static void test_baseline_h100_sxm(void) { baseline_on("h100-sxmx8"); }
static void test_baseline_h100_pcie(void) { baseline_on("h100-pciex8"); }
static void test_baseline_h200(void) { baseline_on("h200x8"); }
static void test_baseline_l4(void) { baseline_on("l4x8"); }
static void test_baseline_rtx4090(void) { baseline_on("rtx4090x4"); }

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_every_size_loads);
    TEST_RUN(test_figures_as_documented);
    TEST_RUN(test_dgx1_mesh_routes);
    TEST_RUN(test_dgx1_subset);
    TEST_RUN(test_nvswitch_routes);
    TEST_RUN(test_pcie_routes_through_host);
    TEST_RUN(test_transfer_seconds);
    TEST_RUN(test_listed_names);
    TEST_RUN(test_baseline_v100_nvlink);
    TEST_RUN(test_baseline_v100_pcie);
    TEST_RUN(test_baseline_a100_sxm);
    TEST_RUN(test_baseline_a100_pcie);
    TEST_RUN(test_baseline_h100_sxm);
    TEST_RUN(test_baseline_h100_pcie);
    TEST_RUN(test_baseline_h200);
    TEST_RUN(test_baseline_l4);
    TEST_RUN(test_baseline_rtx4090);
    return test_end();
}
