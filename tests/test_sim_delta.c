/* Simulator results on zoo-sized graphs: the full simulation against
 * checksums computed by the simulator before its speed-up (issue 20), and
 * delta simulation (dp_sim_delta_*) against full simulations of the same
 * placements, bit for bit. */
#include <stdint.h>

#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"
#include "test_util.h"

/* ---- hashing a result, field by field ------------------------------------------------ */

typedef struct hasher {
    uint64_t h;
} hasher;

static void hash_bytes(hasher *hs, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        hs->h ^= b[i];
        hs->h *= 0x100000001b3ULL; /* FNV-1a */
    }
}
static void hash_u64(hasher *hs, uint64_t v) { hash_bytes(hs, &v, sizeof v); }
static void hash_double(hasher *hs, double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    hash_u64(hs, b);
}

/* Every field of a result (the link array's entries, not its address). */
static uint64_t result_hash(const dp_sim_result *r) {
    hasher hs = {0xcbf29ce484222325ULL};
    hash_double(&hs, r->step_time_s);
    hash_u64(&hs, (uint64_t)r->valid);
    hash_u64(&hs, (uint64_t)r->verdict);
    hash_bytes(&hs, r->reason, strlen(r->reason));
    hash_u64(&hs, (uint64_t)r->n_devices);
    for (int32_t d = 0; d < r->n_devices; d++) {
        const dp_sim_device_stats *s = &r->device[d];
        hash_double(&hs, s->busy_s);
        hash_u64(&hs, s->peak_bytes);
        hash_u64(&hs, s->param_bytes);
        hash_u64(&hs, s->memory_bytes);
        hash_u64(&hs, (uint64_t)s->n_ops);
    }
    hash_u64(&hs, (uint64_t)r->n_links);
    for (int32_t l = 0; l < r->n_links; l++) {
        hash_double(&hs, r->link[l].busy_s);
        hash_u64(&hs, r->link[l].bytes);
        hash_u64(&hs, (uint64_t)r->link[l].n_transfers);
    }
    hash_u64(&hs, r->transfer_bytes);
    hash_u64(&hs, (uint64_t)r->n_transfers);
    hash_u64(&hs, (uint64_t)r->steps_measured);
    return hs.h;
}

/* ---- graphs, device sets, placements ---------------------------------------------------- */

/* A CPU and three GPUs, the third with two streams, a direct link between
 * the first two GPUs, GPU memory small enough that some placements run out. */
#define MIXED_DEVICES(staging)                                                                                    \
    "{\"format\":\"dplace-devices\",\"version\":1,\"name\":\"mixed\"," staging "\"devices\":["                  \
    "{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":5e11,\"memory_bandwidth\":5e10,"                        \
    "\"memory_bytes\":64000000000},"                                                                              \
    "{\"name\":\"gpu:0\",\"kind\":\"gpu\",\"peak_flops\":5e12,\"memory_bandwidth\":3e11,\"memory_bytes\":"      \
    "2000000000},"                                                                                                \
    "{\"name\":\"gpu:1\",\"kind\":\"gpu\",\"peak_flops\":5e12,\"memory_bandwidth\":3e11,\"memory_bytes\":"      \
    "2000000000},"                                                                                                \
    "{\"name\":\"gpu:2\",\"kind\":\"gpu\",\"model\":\"fast\",\"peak_flops\":9e12,\"memory_bandwidth\":7e11,"    \
    "\"memory_bytes\":3000000000,\"streams\":2}],"                                                               \
    "\"links\":[{\"from\":\"cpu:0\",\"to\":\"gpu:0\",\"bandwidth\":1.2e10,\"latency_s\":1e-5},"                  \
    "{\"from\":\"cpu:0\",\"to\":\"gpu:1\",\"bandwidth\":1.2e10,\"latency_s\":1e-5},"                             \
    "{\"from\":\"cpu:0\",\"to\":\"gpu:2\",\"bandwidth\":1e10,\"latency_s\":2e-5},"                               \
    "{\"from\":\"gpu:0\",\"to\":\"gpu:1\",\"bandwidth\":2e10,\"latency_s\":5e-6}]}"

static const char *mixed_devices = MIXED_DEVICES("");
static const char *mixed_devices_saf = MIXED_DEVICES("\"host_staging\":\"store-and-forward\",");

/* The device set: a preset's name, "mixed" or "mixed-saf". */
static dp_devices *devices_named(const char *name) {
    dp_error err;
    dp_devices *ds = strcmp(name, "mixed") == 0       ? dp_devices_read_string(mixed_devices, "mixed", &err)
                     : strcmp(name, "mixed-saf") == 0 ? dp_devices_read_string(mixed_devices_saf, "mixed", &err)
                                                      : dp_devices_preset(name, &err);
    if (!ds) fprintf(stderr, "devices %s: %s\n", name, err.msg);
    CHECK(ds);
    return ds;
}

static dp_graph *graph_named(const char *name) {
    dp_error err;
    dp_graph *g = dp_zoo_build(name, 0, &err);
    if (!g) fprintf(stderr, "graph %s: %s\n", name, err.msg);
    CHECK(g);
    return g;
}

typedef enum placement_kind {
    PLACE_ANY,     /* every op on any device: constraints broken, groups split */
    PLACE_GPUS,    /* every colocation group on a random GPU, CPU-only ops on the CPU */
    PLACE_ONE_GPU, /* the first GPU, CPU-only ops on the CPU */
    PLACE_BLOCKS   /* runs of about 200 ops in op order per random device, groups kept */
} placement_kind;

/* A placement of the given kind, drawn from rng. */
static void make_placement(placement_kind kind, const dp_graph *g, const dp_devices *ds, dp_rng *rng,
                           int32_t *p) {
    int32_t D = ds->n_devices, n = g->n_ops, cpu = dp_devices_nth(ds, DP_DEVKIND_CPU, 0);
    int32_t *group_dev = malloc(((size_t)g->n_colocate + 1) * sizeof(int32_t));
    for (int32_t k = 0; k < g->n_colocate; k++) group_dev[k] = -1;
    int32_t block_dev = 0;
    for (int32_t i = 0; i < n; i++) {
        if (kind == PLACE_ANY) {
            p[i] = (int32_t)dp_rng_below(rng, (uint64_t)D);
            continue;
        }
        if (g->ops[i].device.kind == DP_DEVCON_CPU) {
            p[i] = cpu;
            continue;
        }
        int32_t d;
        if (kind == PLACE_ONE_GPU) d = 1;
        else if (kind == PLACE_GPUS) d = 1 + (int32_t)dp_rng_below(rng, (uint64_t)D - 1);
        else {
            if (i % 200 == 0) block_dev = (int32_t)dp_rng_below(rng, (uint64_t)D);
            d = block_dev;
        }
        int32_t c = g->coloc_group[i];
        if (c >= 0) {
            if (group_dev[c] < 0) group_dev[c] = d;
            d = group_dev[c];
        }
        p[i] = d;
    }
    free(group_dev);
}

/* ---- the full simulation against the checksums of the simulator before issue 20 ------------ */

typedef struct golden_case {
    const char *graph, *devices;
    placement_kind kind;
    uint64_t seed;
    double noise;     /* > 0: 5 steps, 1 warm-up */
    int mean;         /* report the mean of the measured steps */
    uint64_t hash;    /* result_hash by the simulator of 0fd1a89 */
} golden_case;

static const golden_case golden[] = {
#include "test_sim_golden.inc"
};

static uint64_t run_case(const golden_case *c, dp_sim_verdict *verdict, double *step) {
    dp_graph *g = graph_named(c->graph);
    dp_devices *ds = devices_named(c->devices);
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    dp_rng rng;
    dp_rng_seed(&rng, c->seed);
    make_placement(c->kind, g, ds, &rng, p);
    dp_sim_options o = dp_sim_options_default();
    if (c->noise > 0) {
        o.noise_sigma = c->noise;
        o.seed = c->seed;
        o.steps = 5;
        o.warmup = 1;
        o.mean = c->mean;
    }
    dp_sim_result res;
    CHECK_INT_EQ(dp_sim_run(sim, p, &o, &res, &err), DP_STATUS_OK);
    uint64_t h = result_hash(&res);
    *verdict = res.verdict;
    *step = res.step_time_s;
    free(p);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return h;
}

static int print_golden = 0;

static void test_full_matches_old_checksums(void) {
    size_t n = sizeof golden / sizeof golden[0];
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        dp_sim_verdict verdict;
        double step;
        uint64_t h = run_case(&golden[k], &verdict, &step);
        if (print_golden) {
            const golden_case *c = &golden[k];
            printf("    {\"%s\", \"%s\", %d, %llu, %g, %d, 0x%016llxULL}, /* %s, %.6f s */\n", c->graph, c->devices,
                   (int)c->kind, (unsigned long long)c->seed, c->noise, c->mean, (unsigned long long)h,
                   dp_sim_verdict_name(verdict), step);
        } else if (h != golden[k].hash) {
            fprintf(stderr, "case %zu (%s on %s, kind %d, seed %llu): hash %016llx, expected %016llx\n", k,
                    golden[k].graph, golden[k].devices, (int)golden[k].kind, (unsigned long long)golden[k].seed,
                    (unsigned long long)h, (unsigned long long)golden[k].hash);
            bad++;
        }
    }
    CHECK_INT_EQ(bad, 0);
}

int main(int argc, char **argv) {
    print_golden = argc > 1 && strcmp(argv[1], "--print-golden") == 0;
    TEST_RUN(test_full_matches_old_checksums);
    return 0;
}
