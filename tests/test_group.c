/* Grouping heuristics: colocated ops share a group under every method, the
 * colocation rule on hand-built graphs, group counts, seeds, fluid on
 * disconnected graphs and long chains, figures and the groups file. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dplace/devices.h"
#include "dplace/group.h"
#include "dplace/zoo.h"
#include "place/place_internal.h"
#include "test_fixtures.h"
#include "test_util.h"

static int32_t add(dp_graph *g, const char *name, const char *coloc, uint64_t out_bytes, const int32_t *ins,
                   int n_in) {
    dp_error err;
    int32_t id = dp_graph_add_op(g, name, "MatMul", NULL, coloc, &err);
    CHECK(id >= 0);
    for (int k = 0; k < n_in; k++) CHECK(dp_graph_add_input(g, id, ins[k], 0, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_output_bytes(g, id, out_bytes, &err) == DP_STATUS_OK);
    g->ops[id].flops = 1e6;
    return id;
}

static void run(dp_group_method m, const dp_graph *g, int32_t n, uint64_t seed, int32_t *out, int32_t *made) {
    dp_error err;
    dp_group_options opt = dp_group_options_default();
    opt.n_groups = n;
    opt.seed = seed;
    dp_status st = dp_group_run(m, g, &opt, out, made, &err);
    if (st) fprintf(stderr, "%s: %s\n", dp_group_method_name(m), err.msg);
    CHECK_INT_EQ(st, DP_STATUS_OK);
}

/* Groups are dense 0..made-1, each non-empty; colocated ops together. */
static void check_grouping(const dp_graph *g, const int32_t *grp, int32_t made, const char *what) {
    int32_t *count = calloc((size_t)made, sizeof(int32_t));
    int32_t *of_string = malloc(((size_t)dp_graph_n_strings(g) + 1) * sizeof(int32_t));
    CHECK(count && of_string);
    for (int32_t s = 0; s < dp_graph_n_strings(g); s++) of_string[s] = -1;
    for (int32_t i = 0; i < g->n_ops; i++) {
        CHECK(grp[i] >= 0 && grp[i] < made);
        count[grp[i]]++;
        int32_t c = g->ops[i].colocate;
        if (c < 0) continue;
        if (of_string[c] < 0) of_string[c] = grp[i];
        if (of_string[c] != grp[i]) {
            fprintf(stderr, "%s: colocation group \"%s\" split\n", what, dp_graph_str(g, c));
            exit(1);
        }
    }
    for (int32_t k = 0; k < made; k++) CHECK(count[k] > 0);
    free(count);
    free(of_string);
}

/* a -> b -> c -> d (each feeds only the next), d -> e and d -> f, e and f ->
 * g; x colocated with e; h alone; y (CPU-only) -> z (pinned to gpu:0). */
static void test_colocation_rule(void) {
    dp_graph *g = dp_graph_init("rule");
    int32_t a = add(g, "a", NULL, 4, NULL, 0);
    int32_t b = add(g, "b", NULL, 4, &a, 1);
    int32_t c = add(g, "c", NULL, 4, &b, 1);
    int32_t d = add(g, "d", NULL, 4, &c, 1);
    int32_t e = add(g, "e", "E", 4, &d, 1);
    int32_t f = add(g, "f", NULL, 4, &d, 1);
    int32_t ef[2] = {e, f};
    int32_t gg = add(g, "g", NULL, 4, ef, 2);
    int32_t x = add(g, "x", "E", 4, NULL, 0);
    int32_t h = add(g, "h", NULL, 4, NULL, 0);
    int32_t y = add(g, "y", NULL, 4, NULL, 0);
    g->ops[y].device = (dp_devcon){DP_DEVCON_CPU, -1};
    int32_t z = add(g, "z", NULL, 4, &y, 1);
    g->ops[z].device = (dp_devcon){DP_DEVCON_GPU, 0};
    fixture_finalize(g);
    int32_t grp[16], made = 0;
    run(DP_GROUP_METHOD_COLOCATION, g, 0, 1, grp, &made);
    check_grouping(g, grp, made, "colocation");
    /* the chain collapses into d's group; e and f feed only g: {a,b,c,d},
     * {e,f,g,x} (x by colocation with e), {h}, {y}, {z} */
    CHECK_INT_EQ(grp[a], grp[d]);
    CHECK_INT_EQ(grp[b], grp[d]);
    CHECK_INT_EQ(grp[c], grp[d]);
    CHECK(grp[d] != grp[e]); /* d feeds two ops */
    CHECK_INT_EQ(grp[e], grp[gg]);
    CHECK_INT_EQ(grp[f], grp[gg]);
    CHECK_INT_EQ(grp[x], grp[e]);
    CHECK(grp[h] != grp[a] && grp[h] != grp[e]);
    CHECK(grp[y] != grp[z]); /* y feeds only z, but their constraints differ */
    CHECK_INT_EQ(made, 5);
    dp_graph_free(g);
}

/* synthetic-3000 (it has colocation groups) and two group arrays. */
typedef struct synth {
    dp_graph *g;
    int32_t *g1, *g2;
} synth;

static synth synth_open(void) {
    synth f;
    dp_error err;
    f.g = dp_zoo_build("synthetic-3000", 0, &err);
    CHECK(f.g);
    CHECK(f.g->n_colocate > 0);
    f.g1 = malloc((size_t)f.g->n_ops * sizeof(int32_t)), f.g2 = malloc((size_t)f.g->n_ops * sizeof(int32_t));
    CHECK(f.g1 && f.g2);
    return f;
}

static void synth_close(synth *f) {
    free(f->g1);
    free(f->g2);
    dp_graph_free(f->g);
}

/* Every method keeps colocation on a model with colocation groups and
 * makes exactly the asked number of groups (colocation: its own). */
static void test_every_method_keeps_colocation(void) {
    synth f = synth_open();
    for (int m = 0; m < DP_GROUP_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_group_method_name((dp_group_method)m));
        int32_t made1 = 0;
        run((dp_group_method)m, f.g, 16, 3, f.g1, &made1);
        check_grouping(f.g, f.g1, made1, dp_group_method_name((dp_group_method)m));
        if (m != DP_GROUP_METHOD_COLOCATION) CHECK_INT_EQ(made1, 16);
    }
    synth_close(&f);
}

/* Every method is reproducible for a seed; random and fluid give another
 * grouping for another seed. */
static void test_every_method_seeded(void) {
    synth f = synth_open();
    for (int m = 0; m < DP_GROUP_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_group_method_name((dp_group_method)m));
        int32_t made1 = 0, made2 = 0;
        run((dp_group_method)m, f.g, 16, 3, f.g1, &made1);
        run((dp_group_method)m, f.g, 16, 3, f.g2, &made2);
        CHECK_INT_EQ(made1, made2);
        CHECK(memcmp(f.g1, f.g2, (size_t)f.g->n_ops * sizeof(int32_t)) == 0);
        if (m == DP_GROUP_METHOD_RANDOM || m == DP_GROUP_METHOD_FLUID) {
            run((dp_group_method)m, f.g, 16, 4, f.g2, &made2);
            CHECK(memcmp(f.g1, f.g2, (size_t)f.g->n_ops * sizeof(int32_t)) != 0);
        }
    }
    synth_close(&f);
}

/* One group asked: everything in it (colocation makes its own). */
static void test_every_method_one_group(void) {
    synth f = synth_open();
    for (int m = 0; m < DP_GROUP_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_group_method_name((dp_group_method)m));
        int32_t made1 = 0;
        run((dp_group_method)m, f.g, 1, 3, f.g1, &made1);
        if (m != DP_GROUP_METHOD_COLOCATION) {
            CHECK_INT_EQ(made1, 1);
            for (int32_t i = 0; i < f.g->n_ops; i++) CHECK_INT_EQ(f.g1[i], 0);
        }
    }
    synth_close(&f);
}

/* The method names round-trip. */
static void test_group_method_names_round_trip(void) {
    for (int m = 0; m < DP_GROUP_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_group_method_name((dp_group_method)m));
        dp_group_method back;
        CHECK(dp_group_method_from_name(dp_group_method_name((dp_group_method)m), &back) == 0);
        CHECK_INT_EQ(back, m);
    }
}

/* More parts than a device set has devices (the partitioners' arrays are
 * sized by the request, not by DP_MAX_DEVICES). */
static void test_more_groups_than_devices(void) {
    synth f = synth_open();
    for (int m = 1; m < DP_GROUP_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_group_method_name((dp_group_method)m));
        int32_t made = 0;
        run((dp_group_method)m, f.g, 100, 3, f.g1, &made);
        CHECK_INT_EQ(made, 100);
        check_grouping(f.g, f.g1, made, dp_group_method_name((dp_group_method)m));
    }
    synth_close(&f);
}

/* The partitioners balance compute within 1.2 and cut far fewer bytes
 * than random groups. */
static void test_partitioners_balance_and_cut(void) {
    synth f = synth_open();
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x1", &err);
    CHECK(ds);
    dp_group_options opt = dp_group_options_default();
    opt.n_groups = 8;
    opt.reference = &ds->devices[1];
    dp_group_method parts[] = {DP_GROUP_METHOD_METIS, DP_GROUP_METHOD_SCOTCH};
    for (int k = 0; k < 2; k++) {
        TEST_CASE("%s", dp_group_method_name(parts[k]));
        int32_t made = 0;
        CHECK(dp_group_run(parts[k], f.g, &opt, f.g1, &made, &err) == DP_STATUS_OK);
        dp_group_stats st;
        CHECK(dp_group_get_stats(f.g, f.g1, made, opt.reference, &st, &err) == DP_STATUS_OK);
        CHECK_INT_EQ(st.n_groups, 8);
        CHECK(st.imbalance < 1.2);
        /* far fewer bytes cut than random groups */
        int32_t made_r = 0;
        dp_group_stats sr;
        opt.seed = 1;
        CHECK(dp_group_run(DP_GROUP_METHOD_RANDOM, f.g, &opt, f.g2, &made_r, &err) == DP_STATUS_OK);
        CHECK(dp_group_get_stats(f.g, f.g2, made_r, opt.reference, &sr, &err) == DP_STATUS_OK);
        CHECK(st.cut_bytes * 3 < sr.cut_bytes);
    }
    dp_devices_free(ds);
    synth_close(&f);
}

/* a, b (one colocation group) -> c: two units. */
static dp_graph *few_units(void) {
    dp_graph *g = dp_graph_init("few");
    int32_t a = add(g, "a", "AB", 4, NULL, 0);
    int32_t b = add(g, "b", "AB", 4, &a, 1);
    add(g, "c", NULL, 4, &b, 1);
    fixture_finalize(g);
    return g;
}

/* More groups than colocation units: as many groups as units. */
static void test_more_groups_than_units(void) {
    dp_graph *g = few_units();
    for (int m = 1; m < DP_GROUP_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_group_method_name((dp_group_method)m));
        int32_t grp[3], made = 0;
        run((dp_group_method)m, g, 10, 1, grp, &made);
        CHECK_INT_EQ(made, 2);
        check_grouping(g, grp, made, dp_group_method_name((dp_group_method)m));
    }
    dp_graph_free(g);
}

/* Zero groups are refused. */
static void test_zero_groups_refused(void) {
    dp_graph *g = few_units();
    dp_error err;
    int32_t grp[3], made;
    dp_group_options opt = dp_group_options_default();
    opt.n_groups = 0;
    CHECK_INT_EQ(dp_group_run(DP_GROUP_METHOD_METIS, g, &opt, grp, &made, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "at least 1");
    dp_graph_free(g);
}

/* Fluid on three components (sizes 40, 20, 2) with 6 communities: shares 4,
 * 2, 0 (largest remainders); the 2-vertex component joins the smallest. */
static void test_fluid_disconnected(void) {
    dp_graph *g = dp_graph_init("parts");
    int sizes[3] = {40, 20, 2};
    int32_t first[3];
    for (int c = 0; c < 3; c++) {
        int32_t prev = -1;
        for (int i = 0; i < sizes[c]; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "c%d_%d", c, i);
            prev = add(g, nm, NULL, 4, &prev, i ? 1 : 0);
            if (i == 0) first[c] = prev;
        }
    }
    fixture_finalize(g);
    int32_t grp[64], made = 0;
    run(DP_GROUP_METHOD_FLUID, g, 6, 5, grp, &made);
    CHECK_INT_EQ(made, 6);
    check_grouping(g, grp, made, "fluid");
    /* groups never span components 0 and 1 */
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 20; j++) CHECK(grp[first[0] + i] != grp[first[1] + j]);
    CHECK_INT_EQ(grp[first[2]], grp[first[2] + 1]);
    dp_graph_free(g);
}

/* Fluid on a chain of 3000 (long for 100 sweeps): every vertex still gets
 * a group, and two communities are two runs. */
static void test_fluid_long_chain(void) {
    int32_t made = 0;
    dp_graph *g = dp_graph_init("long-chain");
    int32_t prev = -1;
    for (int i = 0; i < 3000; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "l%d", i);
        prev = add(g, nm, NULL, 4, &prev, i ? 1 : 0);
    }
    fixture_finalize(g);
    int32_t *big = malloc(3000 * sizeof(int32_t));
    CHECK(big);
    run(DP_GROUP_METHOD_FLUID, g, 2, 1, big, &made);
    CHECK_INT_EQ(made, 2);
    check_grouping(g, big, made, "fluid chain");
    /* two communities on a chain are two runs: one boundary */
    int boundaries = 0;
    for (int i = 1; i < 3000; i++) boundaries += big[i] != big[i - 1];
    CHECK(boundaries >= 1);
    free(big);
    dp_graph_free(g);
}

/* a -> b, (a, b) -> c, a -> d, in groups {a} and {b, c, d}. */
static dp_graph *stats_graph(void) {
    dp_graph *g = dp_graph_init("stats");
    int32_t a = add(g, "a", NULL, 100, NULL, 0);
    int32_t b = add(g, "b", NULL, 10, &a, 1);
    int32_t ab[2] = {a, b};
    add(g, "c", NULL, 1, ab, 2);
    add(g, "d", NULL, 1, &a, 1);
    fixture_finalize(g);
    return g;
}

/* Figures: cut bytes once per (tensor, consuming group), cut edges, group
 * sizes, imbalance. */
static void test_stats(void) {
    dp_graph *g = stats_graph();
    int32_t grp[4] = {0, 1, 1, 1};
    dp_group_stats st;
    dp_error err;
    CHECK(dp_group_get_stats(g, grp, 2, NULL, &st, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(st.cut_bytes, 100); /* a's tensor goes to group 1 once */
    CHECK_INT_EQ(st.cut_edges, 3);
    CHECK_INT_EQ(st.min_ops, 1);
    CHECK_INT_EQ(st.max_ops, 3);
    CHECK_NEAR(st.imbalance, 1.5, 1e-12);
    dp_graph_free(g);
}

/* A group id out of range is refused. */
static void test_stats_group_out_of_range(void) {
    dp_graph *g = stats_graph();
    int32_t grp[4] = {2, 1, 1, 1};
    dp_group_stats st;
    dp_error err;
    CHECK_INT_EQ(dp_group_get_stats(g, grp, 2, NULL, &st, &err), DP_STATUS_INVALID);
    dp_graph_free(g);
}

/* The groups file: format, method, count and each op's group. */
static void test_groups_file(void) {
    dp_graph *g = stats_graph();
    int32_t grp[4] = {0, 1, 1, 1};
    dp_error err;
    char path[] = "/tmp/dplace_groups_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK(dp_group_write_file(path, g, "metis", grp, 2, &err) == DP_STATUS_OK);
    FILE *f = fopen(path, "r");
    CHECK(f);
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    CHECK_STR_CONTAINS(buf, "\"format\": \"dplace-groups\"");
    CHECK_STR_CONTAINS(buf, "\"method\": \"metis\"");
    CHECK_STR_CONTAINS(buf, "\"n_groups\": 2");
    CHECK_STR_CONTAINS(buf, "\"groups\": [0,1,1,1]");
    dp_graph_free(g);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_colocation_rule);
    TEST_RUN(test_every_method_keeps_colocation);
    TEST_RUN(test_every_method_seeded);
    TEST_RUN(test_every_method_one_group);
    TEST_RUN(test_group_method_names_round_trip);
    TEST_RUN(test_more_groups_than_devices);
    TEST_RUN(test_partitioners_balance_and_cut);
    TEST_RUN(test_more_groups_than_units);
    TEST_RUN(test_zero_groups_refused);
    TEST_RUN(test_fluid_disconnected);
    TEST_RUN(test_fluid_long_chain);
    TEST_RUN(test_stats);
    TEST_RUN(test_stats_group_out_of_range);
    TEST_RUN(test_groups_file);
    return test_end();
}
