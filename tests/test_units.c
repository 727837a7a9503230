/* Placement units and device masks (include/dplace/units.h): TensorFlow's
 * units from the graph's colocation groups, units from any grouping, the
 * devices each unit may use, and the expansion of a unit placement. */
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/units.h"
#include "test_util.h"

enum { CPU = 0, G0 = 1, G1 = 2, G2 = 3, G3 = 4 }; /* k40x4 */

/* Adds op `name` reading the previous op (if any), in colocation group
 * `coloc` (NULL: none) with device constraint `dev` (NULL: none). */
static int32_t add(dp_graph *g, const char *name, const char *coloc, const char *dev) {
    dp_error err;
    int32_t id = dp_graph_add_op(g, name, "MatMul", NULL, coloc, &err);
    CHECK(id >= 0);
    if (id > 0) CHECK(dp_graph_add_input(g, id, id - 1, 0, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_output_bytes(g, id, 8, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "gpu", 1e-3, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "cpu", 1e-2, &err) == DP_STATUS_OK);
    if (dev) CHECK(dp_devcon_parse(dev, &g->ops[id].device) == 0);
    return id;
}

/* x(cpu) v1[B] y v2[A](gpu) u1[B](gpu:1) u2[A] z(gpu:0): groups numbered by
 * first appearance, B before A. */
static dp_graph *seven(void) {
    dp_graph *g = dp_graph_init("seven");
    CHECK(g);
    add(g, "x", NULL, "cpu");
    add(g, "v1", "B", NULL);
    add(g, "y", NULL, NULL);
    add(g, "v2", "A", "gpu");
    add(g, "u1", "B", "gpu:1");
    add(g, "u2", "A", NULL);
    add(g, "z", NULL, "gpu:0");
    dp_error err;
    dp_status st = dp_graph_finalize(g, "seven", &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    CHECK(st == DP_STATUS_OK);
    return g;
}

static void check_ints(const int32_t *got, const int32_t *want, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        if (got[i] != want[i]) fprintf(stderr, "entry %d\n", i);
        CHECK_INT_EQ(got[i], want[i]);
    }
}

/* dp_graph_finalize numbers the colocation groups once; the units follow:
 * one per group or free op, in the order of their first op; freeing
 * empties them, twice is fine. */
static void test_colocation_units(void) {
    dp_graph *g = seven();
    CHECK_INT_EQ(g->n_colocate, 2);
    const int32_t groups[7] = {-1, 0, -1, 1, 0, 1, -1};
    check_ints(g->coloc_group, groups, 7);

    dp_error err;
    dp_units u;
    CHECK_INT_EQ(dp_units_init(&u, g, &err), DP_STATUS_OK);
    CHECK_INT_EQ(u.n_ops, 7);
    CHECK_INT_EQ(u.n_units, 5); /* x, B, y, A, z: in the order of their first op */
    const int32_t unit_of[7] = {0, 1, 2, 3, 1, 3, 4};
    const int32_t first[6] = {0, 1, 3, 4, 6, 7};
    const int32_t members[7] = {0, 1, 4, 2, 3, 5, 6};
    check_ints(u.unit_of, unit_of, 7);
    check_ints(u.first, first, 6);
    check_ints(u.members, members, 7);
    dp_units_free(&u);
    CHECK(!u.unit_of && !u.first && !u.members && u.n_units == 0);
    dp_units_free(&u); /* twice is fine */
    dp_graph_free(g);
}

/* The device masks of a set and of each op: every device, the GPUs, what
 * an op's constraint allows. */
static void test_op_masks(void) {
    dp_graph *g = seven();
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    CHECK(dp_mask_all(ds) == 0x1f);
    CHECK(dp_mask_gpus(ds) == 0x1e);
    CHECK(dp_mask_op(g, ds, 0) == dp_mask_bit(CPU));
    CHECK(dp_mask_op(g, ds, 2) == 0x1f);
    CHECK(dp_mask_op(g, ds, 3) == 0x1e);
    CHECK(dp_mask_op(g, ds, 4) == dp_mask_bit(G1));
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Devices per unit: the pool unless a member says otherwise; a member's
 * constraint binds its whole unit. */
static void test_unit_masks(void) {
    dp_graph *g = seven();
    dp_error err;
    dp_units u;
    CHECK_INT_EQ(dp_units_init(&u, g, &err), DP_STATUS_OK);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    dp_mask mask[5];
    CHECK_INT_EQ(dp_units_masks(&u, g, ds, dp_mask_gpus(ds), mask, &err), DP_STATUS_OK);
    CHECK(mask[0] == dp_mask_bit(CPU)); /* a CPU-only op stays on the CPU */
    CHECK(mask[1] == dp_mask_bit(G1));  /* u1's constraint binds v1 too */
    CHECK(mask[2] == 0x1e);
    CHECK(mask[3] == 0x1e);
    CHECK(mask[4] == dp_mask_bit(G0));
    CHECK_INT_EQ(dp_units_masks(&u, g, ds, dp_mask_all(ds), mask, &err), DP_STATUS_OK);
    CHECK(mask[2] == 0x1f);
    CHECK(mask[3] == 0x1e);
    CHECK_INT_EQ(dp_mask_first(mask[3]), G0);
    CHECK_INT_EQ(dp_mask_count(mask[3]), 4);
    dp_units_free(&u);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A unit placement expands to a valid op placement. */
static void test_unit_placement_expands(void) {
    dp_graph *g = seven();
    dp_error err;
    dp_units u;
    CHECK_INT_EQ(dp_units_init(&u, g, &err), DP_STATUS_OK);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    const int32_t unit_dev[5] = {CPU, G1, G3, G2, G0};
    int32_t p[7];
    dp_units_expand(&u, unit_dev, p);
    const int32_t want[7] = {CPU, G1, G3, G2, G1, G2, G0};
    check_ints(p, want, 7);
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    dp_sim_result res;
    CHECK_INT_EQ(dp_sim_run(sim, p, NULL, &res, &err), DP_STATUS_OK);
    CHECK(res.valid);
    dp_sim_free(sim);
    dp_units_free(&u);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A device set without the device a unit needs: the error names the op. */
static void test_masks_without_a_device(void) {
    dp_graph *g = seven();
    dp_error err;
    dp_devices *ds = dp_devices_read_string(
        "{\"format\":\"dplace-devices\",\"version\":1,\"name\":\"cpu-only\",\"devices\":[{\"name\":\"cpu:0\","
        "\"kind\":\"cpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,\"memory_bytes\":1000000}],\"links\":[]}",
        "cpu-only", &err);
    if (!ds) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds);
    CHECK(dp_mask_gpus(ds) == 1); /* no GPU: every device */
    dp_units u;
    CHECK_INT_EQ(dp_units_init(&u, g, &err), DP_STATUS_OK);
    dp_mask mask[5];
    CHECK_INT_EQ(dp_units_masks(&u, g, ds, dp_mask_gpus(ds), mask, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "op 4 \"u1\" must run on gpu:1, which device set \"cpu-only\" lacks");
    dp_units_free(&u);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* The grouping of seven's ops the tests below use: 5 groups, group 4
 * empty. */
static const int32_t seven_group[7] = {2, 0, 1, 1, 0, 1, 3};

/* Units from a grouping: unit k is group k, empty groups included. */
static void test_units_from_groups(void) {
    dp_error err;
    dp_units u;
    CHECK_INT_EQ(dp_units_init_from_groups(&u, seven_group, 7, 5, &err), DP_STATUS_OK);
    CHECK_INT_EQ(u.n_units, 5);
    check_ints(u.unit_of, seven_group, 7);
    const int32_t first[6] = {0, 2, 5, 6, 7, 7}; /* unit 4 is empty */
    const int32_t members[7] = {1, 4, 2, 3, 5, 0, 6};
    check_ints(u.first, first, 6);
    check_ints(u.members, members, 7);
    dp_units_free(&u);
}

/* The masks of units from a grouping: each member's constraint binds its
 * unit; an empty unit gets the pool. */
static void test_units_from_groups_masks(void) {
    dp_graph *g = seven();
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    dp_units u;
    CHECK_INT_EQ(dp_units_init_from_groups(&u, seven_group, 7, 5, &err), DP_STATUS_OK);
    dp_mask mask[5];
    CHECK_INT_EQ(dp_units_masks(&u, g, ds, dp_mask_gpus(ds), mask, &err), DP_STATUS_OK);
    CHECK(mask[0] == dp_mask_bit(G1));
    CHECK(mask[1] == 0x1e);
    CHECK(mask[2] == dp_mask_bit(CPU));
    CHECK(mask[3] == dp_mask_bit(G0));
    CHECK(mask[4] == 0x1e); /* empty: the pool */
    dp_units_free(&u);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A placement of units from a grouping expands op by op. */
static void test_units_from_groups_expand(void) {
    dp_error err;
    dp_units u;
    CHECK_INT_EQ(dp_units_init_from_groups(&u, seven_group, 7, 5, &err), DP_STATUS_OK);
    const int32_t unit_dev[5] = {G1, G2, CPU, G0, G3};
    int32_t p[7];
    dp_units_expand(&u, unit_dev, p);
    const int32_t want[7] = {CPU, G1, G2, G2, G1, G2, G0};
    check_ints(p, want, 7);
    dp_units_free(&u);
}

/* A unit whose members' constraints exclude each other is refused, naming
 * the op. */
static void test_units_from_groups_clash_refused(void) {
    dp_graph *g = seven();
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    dp_units u;
    dp_mask mask[5];
    const int32_t clash[7] = {0, 0, 0, 0, 0, 0, 0};
    CHECK_INT_EQ(dp_units_init_from_groups(&u, clash, 7, 1, &err), DP_STATUS_OK);
    CHECK_INT_EQ(dp_units_masks(&u, g, ds, dp_mask_gpus(ds), mask, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "op 3 \"v2\" must run on gpu");
    CHECK_STR_CONTAINS(err.msg, "other ops of its unit");
    dp_units_free(&u);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Group ids out of range are refused, naming the op, leaving no units. */
static void test_units_from_groups_ids_out_of_range(void) {
    dp_error err;
    dp_units u;
    const int32_t bad[7] = {0, 1, 2, 5, 0, 1, 3};
    CHECK_INT_EQ(dp_units_init_from_groups(&u, bad, 7, 5, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "op 3 is in group 5, out of range 0..4");
    CHECK(!u.unit_of);
    const int32_t negative[7] = {0, 1, 2, -1, 0, 1, 3};
    CHECK_INT_EQ(dp_units_init_from_groups(&u, negative, 7, 5, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "op 3 is in group -1");
}

/* On a synthetic training graph: every colocation group is one unit, every
 * other op its own, and the units partition the ops. */
static void test_units_of_a_training_graph(void) {
    dp_error err;
    dp_graph *g = dp_graph_synth(3000, 3, &err);
    CHECK(g);
    CHECK(g->n_colocate > 10);
    dp_units u;
    CHECK_INT_EQ(dp_units_init(&u, g, &err), DP_STATUS_OK);
    int32_t alone = 0;
    for (int32_t i = 0; i < g->n_ops; i++) alone += g->coloc_group[i] < 0;
    CHECK_INT_EQ(u.n_units, g->n_colocate + alone);
    int32_t *unit_group = malloc((size_t)u.n_units * sizeof(int32_t));
    CHECK(unit_group);
    for (int32_t k = 0; k < u.n_units; k++) unit_group[k] = -2;
    int32_t last_first = -1;
    for (int32_t k = 0; k < u.n_units; k++) {
        TEST_CASE("unit %d", (int)k);
        CHECK(u.first[k + 1] > u.first[k]); /* none empty */
        CHECK(u.members[u.first[k]] > last_first); /* numbered by first op */
        last_first = u.members[u.first[k]];
        for (int32_t j = u.first[k]; j < u.first[k + 1]; j++) {
            int32_t op = u.members[j];
            CHECK_INT_EQ(u.unit_of[op], k);
            if (j > u.first[k]) CHECK(op > u.members[j - 1]);
            int32_t c = g->coloc_group[op];
            if (c < 0) CHECK_INT_EQ(u.first[k + 1] - u.first[k], 1);
            if (unit_group[k] == -2) unit_group[k] = c;
            CHECK_INT_EQ(c, unit_group[k]);
        }
    }
    test_case_[0] = '\0';
    CHECK_INT_EQ(u.first[u.n_units], g->n_ops);
    /* and the names agree: ops of one group share the group's name */
    for (int32_t i = 0; i < g->n_ops; i++) {
        TEST_CASE("op %d", (int)i);
        int32_t c = g->coloc_group[i];
        CHECK_INT_EQ(c < 0, g->ops[i].colocate < 0);
        if (c >= 0) CHECK_INT_EQ(g->ops[u.members[u.first[u.unit_of[i]]]].colocate, g->ops[i].colocate);
    }
    free(unit_group);
    dp_units_free(&u);
    dp_graph_free(g);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_colocation_units);
    TEST_RUN(test_op_masks);
    TEST_RUN(test_unit_masks);
    TEST_RUN(test_unit_placement_expands);
    TEST_RUN(test_masks_without_a_device);
    TEST_RUN(test_units_from_groups);
    TEST_RUN(test_units_from_groups_masks);
    TEST_RUN(test_units_from_groups_expand);
    TEST_RUN(test_units_from_groups_clash_refused);
    TEST_RUN(test_units_from_groups_ids_out_of_range);
    TEST_RUN(test_units_of_a_training_graph);
    return test_end();
}
