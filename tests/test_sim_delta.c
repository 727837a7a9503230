/* Simulator results on zoo-sized graphs: the full simulation against
 * checksums computed by the simulator before its speed-up (0fd1a89), and
 * delta simulation (dp_sim_delta_*) against full simulations of the same
 * placements, bit for bit. */
#include <pthread.h>
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

/* Two GPUs of 40 MB beside the CPU: many moves to them run out of memory,
 * and a unit with large parameters surely does (dp_sim_delta_surely_oom). */
static const char *tiny_devices =
    "{\"format\":\"dplace-devices\",\"version\":1,\"name\":\"tiny\",\"devices\":["
    "{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":5e11,\"memory_bandwidth\":5e10,"
    "\"memory_bytes\":64000000000},"
    "{\"name\":\"gpu:0\",\"kind\":\"gpu\",\"peak_flops\":5e12,\"memory_bandwidth\":3e11,\"memory_bytes\":40000000},"
    "{\"name\":\"gpu:1\",\"kind\":\"gpu\",\"peak_flops\":5e12,\"memory_bandwidth\":3e11,\"memory_bytes\":40000000}],"
    "\"links\":[{\"from\":\"cpu:0\",\"to\":\"gpu:0\",\"bandwidth\":1.2e10,\"latency_s\":1e-5},"
    "{\"from\":\"cpu:0\",\"to\":\"gpu:1\",\"bandwidth\":1.2e10,\"latency_s\":1e-5}]}";

static const char *mixed_devices = MIXED_DEVICES("");
static const char *mixed_devices_saf = MIXED_DEVICES("\"host_staging\":\"store-and-forward\",");

/* The device set: a preset's name, "mixed", "mixed-saf" or "tiny". */
static dp_devices *devices_named(const char *name) {
    dp_error err;
    dp_devices *ds = strcmp(name, "mixed") == 0       ? dp_devices_read_string(mixed_devices, "mixed", &err)
                     : strcmp(name, "mixed-saf") == 0 ? dp_devices_read_string(mixed_devices_saf, "mixed", &err)
                     : strcmp(name, "tiny") == 0      ? dp_devices_read_string(tiny_devices, "tiny", &err)
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

/* ---- the full simulation against the checksums of the simulator before its speed-up ------------ */

typedef struct golden_case {
    const char *graph, *devices;
    placement_kind kind;
    uint64_t seed;
    double noise;     /* > 0: 5 steps, 1 warm-up */
    int mean;         /* report the mean of the measured steps */
    uint64_t hash;    /* result_hash by the simulator of test_sim_golden.inc */
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

/* Every golden case simulates to the checksum of the simulator before its
 * speed-up. */
static void test_full_matches_old_checksums(void) {
    size_t n = sizeof golden / sizeof golden[0];
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        TEST_CASE("case %zu: %s on %s, kind %d, seed %llu", k, golden[k].graph, golden[k].devices, (int)golden[k].kind,
                  (unsigned long long)golden[k].seed);
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
    test_case_[0] = '\0'; /* the count is over every case */
    CHECK_INT_EQ(bad, 0);
}

/* ---- delta evaluation against full simulations -------------------------------------------- */

/* TensorFlow's units: a colocation group, or an op outside every group. */
typedef struct units {
    int32_t n;
    int32_t *first, *members; /* unit k: members[first[k] .. first[k+1]) */
} units;

static units make_units(const dp_graph *g) {
    units u;
    int32_t n = g->n_ops, *id = malloc((size_t)n * sizeof(int32_t));
    int32_t *group_unit = malloc(((size_t)g->n_colocate + 1) * sizeof(int32_t));
    for (int32_t c = 0; c < g->n_colocate; c++) group_unit[c] = -1;
    u.n = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->coloc_group[i];
        if (c < 0) id[i] = u.n++;
        else id[i] = group_unit[c] >= 0 ? group_unit[c] : (group_unit[c] = u.n++);
    }
    u.first = calloc((size_t)u.n + 1, sizeof(int32_t));
    u.members = malloc((size_t)n * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) u.first[id[i] + 1]++;
    for (int32_t k = 0; k < u.n; k++) u.first[k + 1] += u.first[k];
    int32_t *at = malloc(((size_t)u.n + 1) * sizeof(int32_t));
    memcpy(at, u.first, ((size_t)u.n + 1) * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) u.members[at[id[i]]++] = i;
    free(at);
    free(id);
    free(group_unit);
    return u;
}

static void free_units(units *u) {
    free(u->first);
    free(u->members);
}

/* A random move from placement p: one unit to another device, two units
 * swapped, a few single ops anywhere (splitting groups, breaking
 * constraints), or a unit to the device it is on (no change); sometimes an
 * op listed twice. Fills ops/devs, returns their count. */
static int32_t random_move(const units *u, const int32_t *p, int32_t D, dp_rng *rng, int32_t *ops, int32_t *devs) {
    int32_t n = 0, kind = (int32_t)dp_rng_below(rng, 10);
    int32_t a = (int32_t)dp_rng_below(rng, (uint64_t)u->n), b = (int32_t)dp_rng_below(rng, (uint64_t)u->n);
    if (kind < 5) { /* a unit to a random device (maybe the CPU, maybe against a constraint) */
        int32_t dev = (int32_t)dp_rng_below(rng, (uint64_t)D);
        for (int32_t j = u->first[a]; j < u->first[a + 1]; j++) ops[n] = u->members[j], devs[n++] = dev;
    } else if (kind < 8) { /* two units swapped */
        int32_t da = p[u->members[u->first[a]]], db = p[u->members[u->first[b]]];
        for (int32_t j = u->first[a]; j < u->first[a + 1]; j++) ops[n] = u->members[j], devs[n++] = db;
        for (int32_t j = u->first[b]; j < u->first[b + 1]; j++) ops[n] = u->members[j], devs[n++] = da;
    } else if (kind < 9) { /* a few ops anywhere */
        int32_t k = 1 + (int32_t)dp_rng_below(rng, 4);
        int32_t n_ops = u->first[u->n];
        for (int32_t j = 0; j < k; j++) {
            ops[n] = (int32_t)dp_rng_below(rng, (uint64_t)n_ops);
            devs[n++] = (int32_t)dp_rng_below(rng, (uint64_t)D);
        }
    } else { /* no change */
        for (int32_t j = u->first[a]; j < u->first[a + 1]; j++) ops[n] = u->members[j], devs[n++] = p[u->members[j]];
    }
    if (n > 0 && dp_rng_below(rng, 4) == 0) { /* an op listed again: its last device counts */
        ops[n] = ops[0];
        devs[n++] = (int32_t)dp_rng_below(rng, (uint64_t)D);
    }
    return n;
}

/* Whether some device's peak is over its capacity. */
static int over_capacity(const dp_sim_result *r) {
    for (int32_t d = 0; d < r->n_devices; d++)
        if (r->device[d].peak_bytes > r->device[d].memory_bytes) return 1;
    return 0;
}

typedef struct delta_case {
    const char *graph, *devices;
    placement_kind kind;
    int moves;
} delta_case;

static void check_delta_case(const delta_case *c, uint64_t seed, int *verdicts, int *oom_flagged) {
    dp_graph *g = graph_named(c->graph);
    dp_devices *ds = devices_named(c->devices);
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    dp_sim_workspace *ws = dp_sim_workspace_init(sim, &err);
    dp_sim_delta *d = dp_sim_delta_init(sim, &err);
    CHECK(ws && d);
    int32_t n = g->n_ops, D = ds->n_devices;
    units u = make_units(g);
    int32_t *p = malloc((size_t)n * sizeof(int32_t)), *q = malloc((size_t)n * sizeof(int32_t));
    int32_t *ops = malloc(((size_t)2 * n + 8) * sizeof(int32_t)), *devs = malloc(((size_t)2 * n + 8) * sizeof(int32_t));
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    make_placement(c->kind, g, ds, &rng, p);
    dp_sim_result full, delta, base;
    CHECK_INT_EQ(dp_sim_delta_set_base(d, p, &base, &err), DP_STATUS_OK);
    CHECK_INT_EQ(dp_sim_run_ws(sim, ws, p, NULL, &full, &err), DP_STATUS_OK);
    CHECK(result_hash(&base) == result_hash(&full));
    for (int m = 0; m < c->moves; m++) {
        int32_t k = random_move(&u, p, D, &rng, ops, devs);
        memcpy(q, p, (size_t)n * sizeof(int32_t));
        for (int32_t j = 0; j < k; j++) q[ops[j]] = devs[j];
        int surely = dp_sim_delta_surely_oom(d, k, ops, devs);
        CHECK_INT_EQ(dp_sim_delta_try(d, k, ops, devs, &delta, &err), DP_STATUS_OK);
        CHECK_INT_EQ(dp_sim_run_ws(sim, ws, q, NULL, &full, &err), DP_STATUS_OK);
        if (result_hash(&delta) != result_hash(&full)) {
            fprintf(stderr, "%s on %s, move %d (%d ops): delta %.17g %s, full %.17g %s\n", c->graph, c->devices, m,
                    k, delta.step_time_s, delta.reason, full.step_time_s, full.reason);
            CHECK(!"delta result differs from the full simulation");
        }
        verdicts[full.verdict]++;
        if (surely) {
            (*oom_flagged)++;
            CHECK(over_capacity(&full)); /* the check is sound */
        }
        if (dp_rng_below(&rng, 3) == 0) { /* accept: the moved placement is the base */
            CHECK_INT_EQ(dp_sim_delta_accept(d, &err), DP_STATUS_OK);
            memcpy(p, q, (size_t)n * sizeof(int32_t));
            CHECK(memcmp(dp_sim_delta_base(d), p, (size_t)n * sizeof(int32_t)) == 0);
            CHECK(result_hash(dp_sim_delta_base_result(d)) == result_hash(&full));
            CHECK_INT_EQ(dp_sim_delta_accept(d, &err), DP_STATUS_INVALID); /* nothing tried since */
        }
    }
    /* the base's result is still the full simulation's after tries not accepted */
    CHECK_INT_EQ(dp_sim_run_ws(sim, ws, p, NULL, &full, &err), DP_STATUS_OK);
    CHECK(result_hash(dp_sim_delta_base_result(d)) == result_hash(&full));
    free(p);
    free(q);
    free(ops);
    free(devs);
    free_units(&u);
    dp_sim_delta_free(d);
    dp_sim_workspace_free(ws);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Delta evaluation equals the full simulation of the moved placement, bit
 * for bit, over random moves (accepted or not) on zoo and synthetic graphs;
 * its memory check is sound; the cases meet every verdict. */
static void test_delta_equals_full_on_random_moves(void) {
    static const delta_case cases[] = {
        {"synthetic-500", "k40x4", PLACE_GPUS, 300},   {"synthetic-500", "mixed", PLACE_ANY, 300},
        {"synthetic-500", "mixed-saf", PLACE_BLOCKS, 300}, {"synthetic-2000", "p100x2", PLACE_ONE_GPU, 150},
        {"synthetic-2000", "mixed", PLACE_BLOCKS, 150}, {"rnnlm", "mixed", PLACE_GPUS, 40},
        {"bert_base", "mixed-saf", PLACE_BLOCKS, 25}, {"rnnlm", "tiny", PLACE_ONE_GPU, 40},
        {"synthetic-2000", "tiny", PLACE_GPUS, 100},
    };
    int verdicts[DP_SIM_VERDICT_COUNT] = {0}, oom_flagged = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        TEST_CASE("%s on %s, kind %d", cases[k].graph, cases[k].devices, (int)cases[k].kind);
        check_delta_case(&cases[k], 100 + k, verdicts, &oom_flagged);
    }
    test_case_[0] = '\0'; /* the counts are over every case */
    printf("  verdicts: valid %d, constraint %d, colocation %d, oom %d; surely_oom said yes %d times\n",
           verdicts[DP_SIM_VERDICT_VALID], verdicts[DP_SIM_VERDICT_CONSTRAINT], verdicts[DP_SIM_VERDICT_COLOCATION],
           verdicts[DP_SIM_VERDICT_OOM], oom_flagged);
    for (int v = 0; v < DP_SIM_VERDICT_COUNT; v++) CHECK(verdicts[v] > 0); /* every verdict was met */
    CHECK(oom_flagged > 0);
}

/* synthetic-500 on k40x4 with a delta evaluator, for the error tests. */
typedef struct delta_fixture {
    dp_graph *g;
    dp_devices *ds;
    dp_sim *sim;
    dp_sim_delta *d;
    int32_t *p; /* a placement of PLACE_GPUS */
} delta_fixture;

static delta_fixture delta_open(void) {
    delta_fixture f;
    f.g = graph_named("synthetic-500");
    f.ds = devices_named("k40x4");
    dp_error err;
    f.sim = dp_sim_init(f.g, f.ds, &err);
    f.d = dp_sim_delta_init(f.sim, &err);
    CHECK(f.sim && f.d);
    f.p = malloc((size_t)f.g->n_ops * sizeof(int32_t));
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    make_placement(PLACE_GPUS, f.g, f.ds, &rng, f.p);
    return f;
}

static void delta_close(delta_fixture *f) {
    free(f->p);
    dp_sim_delta_free(f->d);
    dp_sim_free(f->sim);
    dp_devices_free(f->ds);
    dp_graph_free(f->g);
}

/* Before a base is set there is none, and trying, accepting and the
 * critical path are refused. */
static void test_delta_needs_a_base(void) {
    delta_fixture f = delta_open();
    dp_error err;
    int32_t op = 3, dev = 1, n_path = 1;
    dp_sim_result res;
    CHECK(dp_sim_delta_base(f.d) == NULL && dp_sim_delta_base_result(f.d) == NULL);
    CHECK_INT_EQ(dp_sim_delta_try(f.d, 1, &op, &dev, &res, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_sim_delta_accept(f.d, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_sim_delta_critical_path(f.d, NULL, 0, &n_path, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(n_path, 0);
    delta_close(&f);
}

/* A base with a device out of range is refused, naming the op. */
static void test_delta_bad_base_refused(void) {
    delta_fixture f = delta_open();
    dp_error err;
    f.p[5] = f.ds->n_devices;
    CHECK_INT_EQ(dp_sim_delta_set_base(f.d, f.p, NULL, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "device 5");
    delta_close(&f);
}

/* A move with an op or a device out of range is refused and leaves nothing
 * to accept; the memory check says no to it. */
static void test_delta_bad_move_refused(void) {
    delta_fixture f = delta_open();
    dp_error err;
    int32_t op = 3, dev = 1, bad_op = f.g->n_ops, bad_dev = f.ds->n_devices;
    dp_sim_result res;
    CHECK_INT_EQ(dp_sim_delta_set_base(f.d, f.p, NULL, &err), DP_STATUS_OK);
    CHECK_INT_EQ(dp_sim_delta_try(f.d, 1, &bad_op, &dev, &res, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_sim_delta_try(f.d, 1, &op, &bad_dev, &res, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_sim_delta_accept(f.d, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_sim_delta_surely_oom(f.d, 1, &bad_op, &dev), 0);
    delta_close(&f);
}

/* An empty move is the base, and accepting it keeps the base. */
static void test_delta_empty_move_is_the_base(void) {
    delta_fixture f = delta_open();
    dp_error err;
    dp_sim_result res;
    CHECK_INT_EQ(dp_sim_delta_set_base(f.d, f.p, NULL, &err), DP_STATUS_OK);
    dp_sim_result base = *dp_sim_delta_base_result(f.d);
    CHECK_INT_EQ(dp_sim_delta_try(f.d, 0, NULL, NULL, &res, &err), DP_STATUS_OK);
    CHECK(result_hash(&res) == result_hash(&base));
    CHECK_INT_EQ(dp_sim_delta_accept(f.d, &err), DP_STATUS_OK);
    CHECK(memcmp(dp_sim_delta_base(f.d), f.p, (size_t)f.g->n_ops * sizeof(int32_t)) == 0);
    delta_close(&f);
}

/* The critical path: from time 0 to the step time, each step starting when
 * the one before it ended (a pipelined copy's second hop after its first),
 * ops taking their time; the same after accepting moves. */
static void check_path(dp_sim_delta *d, const dp_sim *sim, const dp_devices *ds) {
    dp_error err;
    int32_t len = 0;
    CHECK_INT_EQ(dp_sim_delta_critical_path(d, NULL, 0, &len, &err), DP_STATUS_OK);
    CHECK(len >= 1);
    dp_sim_path_step *st = malloc((size_t)len * sizeof *st);
    int32_t len2 = 0;
    CHECK_INT_EQ(dp_sim_delta_critical_path(d, st, len, &len2, &err), DP_STATUS_OK);
    CHECK_INT_EQ(len2, len);
    const dp_sim_result *base = dp_sim_delta_base_result(d);
    CHECK(st[0].start_s == 0.0);
    CHECK(st[len - 1].op >= 0 && st[len - 1].end_s == base->step_time_s);
    for (int32_t k = 0; k < len; k++) {
        if (st[k].op >= 0) {
            CHECK_INT_EQ(st[k].device, dp_sim_delta_base(d)[st[k].op]);
            CHECK(st[k].end_s == st[k].start_s + dp_sim_op_seconds(sim, st[k].op, st[k].device));
        } else {
            CHECK(st[k].link >= 0 && st[k].link < ds->n_links && st[k].producer >= 0 && st[k].tensor >= 0);
        }
        if (k == 0) continue;
        int same_copy = st[k].op < 0 && st[k - 1].op < 0 && st[k].tensor == st[k - 1].tensor &&
                        st[k].device == st[k - 1].device;
        CHECK(st[k].start_s == st[k - 1].end_s || same_copy);
    }
    /* a short buffer gets the path's beginning */
    if (len > 2) {
        dp_sim_path_step two[2];
        CHECK_INT_EQ(dp_sim_delta_critical_path(d, two, 2, &len2, &err), DP_STATUS_OK);
        CHECK_INT_EQ(len2, len);
        CHECK(memcmp(two, st, sizeof two) == 0);
    }
    free(st);
}

/* The critical path holds together (check_path) on synthetic-2000, after
 * the base is set and after accepted moves, pipelined and stored and
 * forwarded. */
static void test_delta_critical_path(void) {
    static const char *const devs[] = {"k40x4", "mixed-saf"};
    for (int v = 0; v < 2; v++) {
        TEST_CASE("synthetic-2000 on %s", devs[v]);
        dp_graph *g = graph_named("synthetic-2000");
        dp_devices *ds = devices_named(devs[v]);
        dp_error err;
        dp_sim *sim = dp_sim_init(g, ds, &err);
        dp_sim_delta *d = dp_sim_delta_init(sim, &err);
        CHECK(sim && d);
        units u = make_units(g);
        int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
        int32_t *ops = malloc(((size_t)2 * g->n_ops + 8) * sizeof(int32_t));
        int32_t *mdevs = malloc(((size_t)2 * g->n_ops + 8) * sizeof(int32_t));
        dp_rng rng;
        dp_rng_seed(&rng, 7 + (uint64_t)v);
        make_placement(PLACE_GPUS, g, ds, &rng, p);
        CHECK_INT_EQ(dp_sim_delta_set_base(d, p, NULL, &err), DP_STATUS_OK);
        check_path(d, sim, ds);
        for (int m = 0; m < 20; m++) {
            dp_sim_result res;
            int32_t k = random_move(&u, dp_sim_delta_base(d), ds->n_devices, &rng, ops, mdevs);
            CHECK_INT_EQ(dp_sim_delta_try(d, k, ops, mdevs, &res, &err), DP_STATUS_OK);
            if (m % 4 == 0) {
                TEST_CASE("synthetic-2000 on %s, after move %d", devs[v], m);
                CHECK_INT_EQ(dp_sim_delta_accept(d, &err), DP_STATUS_OK);
                check_path(d, sim, ds);
            }
        }
        free(p);
        free(ops);
        free(mdevs);
        free_units(&u);
        dp_sim_delta_free(d);
        dp_sim_free(sim);
        dp_devices_free(ds);
        dp_graph_free(g);
    }
}

/* Threads: each with a delta evaluator of its own over one context, the
 * same moves give the same results as one thread alone. */
enum { N_THREADS = 3, THREAD_MOVES = 30 };

typedef struct delta_job {
    const dp_sim *sim;
    const dp_graph *g;
    const dp_devices *ds;
    const units *u;
    uint64_t seed;
    uint64_t hashes[THREAD_MOVES];
} delta_job;

static void *delta_thread(void *arg) {
    delta_job *job = arg;
    dp_error err;
    dp_sim_delta *d = dp_sim_delta_init(job->sim, &err);
    int32_t n = job->g->n_ops;
    int32_t *p = malloc((size_t)n * sizeof(int32_t));
    int32_t *ops = malloc(((size_t)2 * n + 8) * sizeof(int32_t)), *devs = malloc(((size_t)2 * n + 8) * sizeof(int32_t));
    dp_rng rng;
    dp_rng_seed(&rng, job->seed);
    make_placement(PLACE_GPUS, job->g, job->ds, &rng, p);
    dp_sim_delta_set_base(d, p, NULL, &err);
    for (int m = 0; m < THREAD_MOVES; m++) {
        dp_sim_result res;
        int32_t k = random_move(job->u, dp_sim_delta_base(d), job->ds->n_devices, &rng, ops, devs);
        dp_sim_delta_try(d, k, ops, devs, &res, &err);
        job->hashes[m] = result_hash(&res);
        if (m % 3 == 0) dp_sim_delta_accept(d, &err);
    }
    free(p);
    free(ops);
    free(devs);
    dp_sim_delta_free(d);
    return NULL;
}

/* Three threads' delta evaluators on one context give what each gives
 * alone. */
static void test_delta_threads_share_one_context(void) {
    dp_graph *g = graph_named("synthetic-2000");
    dp_devices *ds = devices_named("mixed");
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    units u = make_units(g);
    delta_job alone[N_THREADS], together[N_THREADS];
    pthread_t th[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        alone[t] = (delta_job){sim, g, ds, &u, 50 + (uint64_t)t, {0}};
        together[t] = alone[t];
        delta_thread(&alone[t]);
    }
    for (int t = 0; t < N_THREADS; t++) CHECK_INT_EQ(pthread_create(&th[t], NULL, delta_thread, &together[t]), 0);
    for (int t = 0; t < N_THREADS; t++) CHECK_INT_EQ(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < N_THREADS; t++) {
        TEST_CASE("thread %d", t);
        CHECK(memcmp(alone[t].hashes, together[t].hashes, sizeof alone[t].hashes) == 0);
    }
    free_units(&u);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
}

int main(int argc, char **argv) {
    print_golden = argc > 1 && strcmp(argv[1], "--print-golden") == 0;
    if (print_golden) { /* the checksums of the simulator as it is, for test_sim_golden.inc */
        test_full_matches_old_checksums();
        return 0;
    }
    test_init(argc, argv);
    TEST_RUN(test_full_matches_old_checksums);
    TEST_RUN(test_delta_equals_full_on_random_moves);
    TEST_RUN(test_delta_needs_a_base);
    TEST_RUN(test_delta_bad_base_refused);
    TEST_RUN(test_delta_bad_move_refused);
    TEST_RUN(test_delta_empty_move_is_the_base);
    TEST_RUN(test_delta_critical_path);
    TEST_RUN(test_delta_threads_share_one_context);
    return test_end();
}
