/* Placement units and device masks (include/dplace/units.h): TensorFlow's
 * units from the graph's colocation groups, units from any grouping, the
 * devices each unit may use, and the expansion of a unit placement. */
#include "dplace/agent.h"
#include "dplace/devices.h"
#include "dplace/placement.h"
#include "dplace/search.h"
#include "dplace/settings_job.h"
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

/* ---- modules of a PyTorch export ---------------------------------------- */

/* Adds op `name` of `type` in `scope` (colocation group `coloc`, NULL: none)
 * reading ins[n_in] (slot 0), with a 1 MB output and 1 ms on a GPU. */
static int32_t add_mod(dp_graph *g, const char *name, const char *type, const char *scope, const char *coloc,
                       const int32_t *ins, int n_in) {
    dp_error err;
    int32_t id = dp_graph_add_op(g, name, type, scope, coloc, &err);
    CHECK(id >= 0);
    for (int k = 0; k < n_in; k++) CHECK(dp_graph_add_input(g, id, ins[k], 0, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_output_bytes(g, id, 1000000, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "gpu", 1e-3, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "cpu", 1e-2, &err) == DP_STATUS_OK);
    if (!strcmp(type, "Parameter") || !strcmp(type, "Buffer")) g->ops[id].param_bytes = 1000000;
    return id;
}

/* A training step as scripts/dplace-export-torch writes one: module a (a
 * matmul), module b.sub (a batch norm colocated with its running mean) in
 * module b (a ReLU of its own), the batch, the loss, the gradients in
 * "gradients/..." scopes and each parameter's update in its module:
 *   0 a/weight  1 b/sub/weight  2 b/sub/running_mean  3 input/x  4 a/mm
 *   5 b/sub/bn  6 b/relu  7 loss/sum  8 gradients/loss/ones
 *   9 gradients/b/relu  10 gradients/b/sub/bn  11 gradients/a/mm
 *   12 a/add_  13 b/sub/add_  14 gradients/sum (the model's own: "")
 * Module paths: a {0 4 11 12}, b.sub {1 2 5 10 13}, input {3}, b {6 9},
 * loss {7 8}, "" {14}. */
static dp_graph *tiny_export(void) {
    dp_graph *g = dp_graph_init("tiny-export");
    CHECK(g);
    int32_t w = add_mod(g, "a/weight", "Parameter", "a", "a/weight", NULL, 0);
    int32_t bw = add_mod(g, "b/sub/weight", "Parameter", "b/sub", "b/sub/weight", NULL, 0);
    int32_t rm = add_mod(g, "b/sub/running_mean", "Buffer", "b/sub", "b/sub/running_mean", NULL, 0);
    int32_t x = add_mod(g, "input/x", "Placeholder", "input", NULL, NULL, 0);
    int32_t in4[2] = {x, w};
    int32_t mm = add_mod(g, "a/mm", "mm", "a", NULL, in4, 2);
    int32_t in5[3] = {mm, bw, rm};
    int32_t bn = add_mod(g, "b/sub/bn", "native_batch_norm", "b/sub", "b/sub/running_mean", in5, 3);
    int32_t relu = add_mod(g, "b/relu", "relu", "b", NULL, &bn, 1);
    int32_t loss = add_mod(g, "loss/sum", "sum", "loss", NULL, &relu, 1);
    int32_t ones = add_mod(g, "gradients/loss/ones", "ones_like", "gradients/loss", NULL, &loss, 1);
    int32_t in9[2] = {ones, relu};
    int32_t gr = add_mod(g, "gradients/b/relu", "threshold_backward", "gradients/b", NULL, in9, 2);
    int32_t in10[3] = {gr, mm, bw};
    int32_t gbn = add_mod(g, "gradients/b/sub/bn", "native_batch_norm_backward", "gradients/b/sub", NULL, in10, 3);
    int32_t in11[2] = {gbn, x};
    int32_t gmm = add_mod(g, "gradients/a/mm", "mm", "gradients/a", NULL, in11, 2);
    int32_t in12[2] = {w, gmm}, in13[2] = {bw, gbn};
    add_mod(g, "a/add_", "add_", "a", "a/weight", in12, 2);
    add_mod(g, "b/sub/add_", "add_", "b/sub", "b/sub/weight", in13, 2);
    add_mod(g, "gradients/sum", "sum", "gradients", NULL, &gmm, 1);
    dp_error err;
    dp_status st = dp_graph_finalize(g, "tiny-export", &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    CHECK(st == DP_STATUS_OK);
    return g;
}

/* The ops of each module of tiny_export at depth 0, -1 ended. */
static const int32_t tiny_modules[6][6] = {{0, 4, 11, 12, -1}, {1, 2, 5, 10, 13, -1}, {3, -1},
                                           {6, 9, -1},         {7, 8, -1},             {14, -1}};

/* "op", "module", "module:DEPTH" and "auto" read and print back; anything
 * else is refused. */
static void test_units_spec_names(void) {
    const char *good[] = {"op", "module", "module:2", "auto"};
    for (int k = 0; k < 4; k++) {
        TEST_CASE("\"%s\"", good[k]);
        dp_units_spec sp;
        char buf[32];
        CHECK_INT_EQ(dp_units_spec_parse(good[k], &sp), 0);
        dp_units_spec_format(sp, buf, sizeof buf);
        CHECK(!strcmp(buf, good[k]));
    }
    const char *bad[] = {"", "ops", "module:", "module:0", "module:x", "module:2x", "Module"};
    for (int k = 0; k < 7; k++) {
        TEST_CASE("\"%s\"", bad[k]);
        dp_units_spec sp;
        CHECK_INT_EQ(dp_units_spec_parse(bad[k], &sp), -1);
    }
}

/* A module's unit holds its forward ops, its gradient ops and its
 * parameters' updates; the batch, the loss and the model's own ops are
 * units of their own; each module is one unit. */
static void test_module_units_hold_whole_modules(void) {
    dp_graph *g = tiny_export();
    CHECK(dp_units_has_modules(g));
    dp_units u;
    dp_error err;
    CHECK_INT_EQ(dp_units_init_spec(&u, g, (dp_units_spec){DP_UNITS_MODULE, 0}, &err), DP_STATUS_OK);
    CHECK_INT_EQ(u.n_units, 6);
    for (int m = 0; m < 6; m++)
        for (int j = 0; tiny_modules[m][j] >= 0; j++) {
            TEST_CASE("module %d, op %d", m, (int)tiny_modules[m][j]);
            CHECK_INT_EQ(u.unit_of[tiny_modules[m][j]], u.unit_of[tiny_modules[m][0]]);
            if (m > 0) CHECK(u.unit_of[tiny_modules[m][0]] != u.unit_of[tiny_modules[m - 1][0]]);
        }
    dp_units_free(&u);
    dp_graph_free(g);
}

/* Module paths are named as dplace-export-torch --map-placement names them,
 * cut to a depth: b/sub's gradient is "b.sub", "b" at depth 1; the ops of
 * the gradients scope itself are the model's own (""). */
static void test_module_paths(void) {
    dp_graph *g = tiny_export();
    char buf[64];
    dp_units_module_path(g, 10, 0, buf, sizeof buf);
    CHECK(!strcmp(buf, "b.sub"));
    dp_units_module_path(g, 10, 1, buf, sizeof buf);
    CHECK(!strcmp(buf, "b"));
    dp_units_module_path(g, 14, 0, buf, sizeof buf);
    CHECK(!strcmp(buf, ""));
    dp_units_module_path(g, 8, 0, buf, sizeof buf);
    CHECK(!strcmp(buf, "loss"));
    dp_graph_free(g);
}

/* module:1 joins b.sub into b. */
static void test_module_units_at_a_depth(void) {
    dp_graph *g = tiny_export();
    dp_units u;
    dp_error err;
    CHECK_INT_EQ(dp_units_init_spec(&u, g, (dp_units_spec){DP_UNITS_MODULE, 1}, &err), DP_STATUS_OK);
    CHECK_INT_EQ(u.n_units, 5);
    CHECK_INT_EQ(u.unit_of[5], u.unit_of[6]);
    CHECK_INT_EQ(u.unit_of[13], u.unit_of[9]);
    CHECK(u.unit_of[4] != u.unit_of[5]);
    dp_units_free(&u);
    dp_graph_free(g);
}

/* A graph without modules (no Parameter op: the zoo's, a TensorFlow
 * graph's) refuses units by module; auto gives its colocation units. */
static void test_module_units_refused_without_modules(void) {
    dp_graph *g = seven();
    CHECK(!dp_units_has_modules(g));
    dp_units u, v;
    dp_error err;
    CHECK_INT_EQ(dp_units_init_spec(&u, g, (dp_units_spec){DP_UNITS_MODULE, 0}, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "no modules");
    CHECK_INT_EQ(dp_units_init_spec(&u, g, (dp_units_spec){DP_UNITS_AUTO, 0}, &err), DP_STATUS_OK);
    CHECK_INT_EQ(dp_units_init(&v, g, &err), DP_STATUS_OK);
    CHECK_INT_EQ(u.n_units, v.n_units);
    check_ints(u.unit_of, v.unit_of, g->n_ops);
    dp_units_free(&u);
    dp_units_free(&v);
    dp_graph_free(g);
}

/* A placement mapped onto modules puts each on the device of most of its
 * ops, a tie on the device named first; a module placement splits none. */
static void test_modules_map_by_majority(void) {
    dp_graph *g = tiny_export();
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    dp_units u;
    CHECK_INT_EQ(dp_units_init_spec(&u, g, (dp_units_spec){DP_UNITS_MODULE, 0}, &err), DP_STATUS_OK);
    int32_t p[15] = {G1, G2, G2, G0, G1, G2, G3, G0, G0, G0, G1, G2, G2, G2, G0}, q[15];
    CHECK_INT_EQ(dp_units_count_split(&u, p), 3); /* a, b.sub, b */
    dp_units_map_majority(&u, ds, NULL, p, q);
    CHECK_INT_EQ(q[0], G1); /* a: G1 G1 G2 G2, a tie: gpu:1 is named before gpu:2 */
    CHECK_INT_EQ(q[1], G2); /* b.sub: G2 x4, G1 */
    CHECK_INT_EQ(q[6], G0); /* b: G3, G0: gpu:0 first */
    CHECK_INT_EQ(q[11], G1);
    CHECK_INT_EQ(dp_units_count_split(&u, q), 0);
    dp_units_free(&u);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* The search of modules moves whole modules: every chain's placement and
 * the best split none, from a start that splits them. */
static void test_search_moves_whole_modules(void) {
    dp_graph *g = tiny_export();
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(ds && sim);
    dp_search_options o = dp_search_options_default();
    o.threads = 2, o.units = (dp_units_spec){DP_UNITS_AUTO, 0};
    dp_search *s = dp_search_init(g, ds, sim, &o, &err);
    CHECK(s);
    int32_t start[15] = {G1, G2, G2, G0, G1, G2, G3, G0, G0, G0, G1, G2, G2, G2, G0};
    CHECK_INT_EQ(dp_search_add_start(s, "split", start, &err), DP_STATUS_OK);
    dp_method m = dp_search_method(s);
    for (int step = 0; step < 20; step++) CHECK_INT_EQ(m.ops->step(m.self, &err), DP_STATUS_OK);
    dp_units u;
    CHECK_INT_EQ(dp_units_init_spec(&u, g, (dp_units_spec){DP_UNITS_MODULE, 0}, &err), DP_STATUS_OK);
    for (int32_t c = 0; c < 2; c++) {
        TEST_CASE("chain %d", (int)c);
        CHECK_INT_EQ(dp_units_count_split(&u, dp_search_chain_placement(s, c, NULL)), 0);
    }
    CHECK(dp_search_get_state(s)->best_placement);
    CHECK_INT_EQ(dp_units_count_split(&u, dp_search_get_state(s)->best_placement), 0);
    dp_units_free(&u);
    dp_search_free(s);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A learned agent placing modules samples module placements: its greedy
 * placement and its samples of an update split none. */
static void test_agent_places_whole_modules(void) {
    dp_graph *g = tiny_export();
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    dp_settings st;
    CHECK_INT_EQ(dp_settings_preset("hp", &st), 0);
    st.agent.units = (dp_units_spec){DP_UNITS_MODULE, 0};
    st.agent.train.batch = 4;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent *a = dp_agent_init(g, ds, &st.agent, &eo, 1, &err);
    if (!a) fprintf(stderr, "%s\n", err.msg);
    CHECK(a);
    dp_units u;
    CHECK_INT_EQ(dp_units_init_spec(&u, g, st.agent.units, &err), DP_STATUS_OK);
    int32_t p[15];
    CHECK_INT_EQ(dp_agent_greedy(a, p, &err), DP_STATUS_OK);
    CHECK_INT_EQ(dp_units_count_split(&u, p), 0);
    CHECK_INT_EQ(dp_agent_update(a, &err), DP_STATUS_OK);
    const dp_run_state *s = dp_agent_get_state(a);
    CHECK(s->best_placement);
    CHECK_INT_EQ(dp_units_count_split(&u, s->best_placement), 0);
    dp_units_free(&u);
    dp_agent_free(a);
    dp_devices_free(ds);
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
    TEST_RUN(test_units_spec_names);
    TEST_RUN(test_module_units_hold_whole_modules);
    TEST_RUN(test_module_paths);
    TEST_RUN(test_module_units_at_a_depth);
    TEST_RUN(test_module_units_refused_without_modules);
    TEST_RUN(test_modules_map_by_majority);
    TEST_RUN(test_search_moves_whole_modules);
    TEST_RUN(test_agent_places_whole_modules);
    return test_end();
}
