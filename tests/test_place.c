/* Baseline placers on small graphs whose right answer is known, and every
 * placer on every built-in model and external graph: each finishes with a
 * placement that keeps constraints and colocation, or says why it cannot. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dplace/group.h"
#include "dplace/import.h"
#include "dplace/place.h"
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"
#include "place/place_internal.h"
#include "test_fixtures.h"
#include "test_util.h"

enum { CPU = 0, G0 = 1, G1 = 2, G2 = 3 };

/* Adds an op in scope `scope` (may be NULL) taking `secs` on a GPU (10x on
 * the CPU) with one output. */
static int32_t add_in(dp_graph *g, const char *name, const char *scope, const char *coloc, double secs,
                      uint64_t out_bytes, uint64_t params, const int32_t *ins, int n_in) {
    dp_error err;
    int32_t id = dp_graph_add_op(g, name, "MatMul", scope, coloc, &err);
    CHECK(id >= 0);
    for (int k = 0; k < n_in; k++) CHECK(dp_graph_add_input(g, id, ins[k], 0, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_output_bytes(g, id, out_bytes, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "gpu", secs, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "cpu", 10 * secs, &err) == DP_STATUS_OK);
    g->ops[id].param_bytes = params;
    return id;
}

/* The same outside every scope. */
static int32_t add(dp_graph *g, const char *name, const char *coloc, double secs, uint64_t out_bytes, uint64_t params,
                   const int32_t *ins, int n_in) {
    return add_in(g, name, NULL, coloc, secs, out_bytes, params, ins, n_in);
}

static void place(dp_place_method m, const dp_graph *g, const dp_devices *ds, const dp_place_options *opt,
                  int32_t *out) {
    dp_error err;
    dp_status st = dp_place_run(m, g, ds, opt, out, &err);
    if (st) fprintf(stderr, "%s: %s\n", dp_place_method_name(m), err.msg);
    CHECK_INT_EQ(st, DP_STATUS_OK);
}

/* Every op allowed where it is, every colocation group on one device. */
static void check_constraints(const dp_graph *g, const dp_devices *ds, const int32_t *p, const char *what) {
    int32_t *group_dev = malloc(((size_t)dp_graph_n_strings(g) + 1) * sizeof(int32_t));
    CHECK(group_dev);
    for (int32_t s = 0; s < dp_graph_n_strings(g); s++) group_dev[s] = -1;
    for (int32_t i = 0; i < g->n_ops; i++) {
        CHECK(p[i] >= 0 && p[i] < ds->n_devices);
        if (!dp_placement_allowed(g, ds, i, p[i])) {
            fprintf(stderr, "%s: op %d \"%s\" on %s breaks its constraint\n", what, i, g->ops[i].name,
                    ds->devices[p[i]].name);
            exit(1);
        }
        int32_t c = g->ops[i].colocate;
        if (c < 0) continue;
        if (group_dev[c] < 0) group_dev[c] = p[i];
        if (group_dev[c] != p[i]) {
            fprintf(stderr, "%s: colocation group \"%s\" split (op %d \"%s\")\n", what, dp_graph_str(g, c), i,
                    g->ops[i].name);
            exit(1);
        }
    }
    free(group_dev);
}

static int32_t devices_used(const dp_graph *g, const int32_t *p) {
    uint64_t m = 0;
    for (int32_t i = 0; i < g->n_ops; i++) m |= (uint64_t)1 << p[i];
    return (int32_t)__builtin_popcountll(m);
}

/* src -> two independent chains of three 1-second ops -> join; tensors of
 * 1 KB over 1 GB/s links. as[k], bs[k]: the chains' ops; ab: their ends. */
typedef struct two_branch {
    dp_graph *g;
    dp_devices *ds;
    int32_t as[3], bs[3], ab[2];
} two_branch;

static two_branch two_branch_open(void) {
    two_branch t;
    t.g = dp_graph_init("two-branch");
    int32_t src = add(t.g, "src", NULL, 0.01, 1000, 0, NULL, 0);
    int32_t a = src, b = src;
    for (int i = 0; i < 3; i++) {
        char na[8], nb[8];
        snprintf(na, sizeof na, "a%d", i);
        snprintf(nb, sizeof nb, "b%d", i);
        t.as[i] = a = add(t.g, na, NULL, 1.0, 1000, 0, &a, 1);
        t.bs[i] = b = add(t.g, nb, NULL, 1.0, 1000, 0, &b, 1);
    }
    t.ab[0] = a, t.ab[1] = b;
    add(t.g, "join", NULL, 0.01, 1000, 0, t.ab, 2);
    fixture_finalize(t.g);
    t.ds = fixture_devices(2, 1 << 30, 1e9);
    return t;
}

static void two_branch_close(two_branch *t) {
    dp_devices_free(t->ds);
    dp_graph_free(t->g);
}

/* m-ETF runs the two chains on different GPUs, on TensorFlow's groups (the
 * default: the same placement as asking for none). */
static void test_etf_two_branches(void) {
    two_branch t = two_branch_open();
    int32_t p[16], q[16];
    dp_place_options none = dp_place_options_default();
    none.group = DP_PLACE_GROUP_NONE;
    place(DP_PLACE_METHOD_M_ETF, t.g, t.ds, NULL, q);
    place(DP_PLACE_METHOD_M_ETF, t.g, t.ds, &none, p);
    CHECK(memcmp(p, q, (size_t)t.g->n_ops * sizeof(int32_t)) == 0);
    check_constraints(t.g, t.ds, p, "m-etf two-branch");
    for (int i = 1; i < 3; i++) {
        CHECK_INT_EQ(p[t.as[i]], p[t.as[0]]);
        CHECK_INT_EQ(p[t.bs[i]], p[t.bs[0]]);
    }
    CHECK(p[t.as[0]] != p[t.bs[0]]);
    CHECK(p[t.as[0]] != CPU && p[t.bs[0]] != CPU);
    dp_sim_result r = fixture_simulate(t.g, t.ds, p);
    CHECK(r.valid);
    CHECK(r.step_time_s < 3.2); /* one GPU would take 6.02 s */
    two_branch_close(&t);
}

/* m-SCT runs the two chains on different GPUs too. */
static void test_sct_two_branches(void) {
    two_branch t = two_branch_open();
    int32_t p[16];
    place(DP_PLACE_METHOD_M_SCT, t.g, t.ds, NULL, p);
    CHECK(p[t.as[0]] != p[t.bs[0]]);
    CHECK(fixture_simulate(t.g, t.ds, p).step_time_s < 3.2);
    two_branch_close(&t);
}

/* Co-placed (--group colocation), each chain op feeds one op only: the
 * chains and the join are one unit, on one device. */
static void test_etf_two_branches_coplaced(void) {
    two_branch t = two_branch_open();
    int32_t p[16];
    dp_place_options coplace = dp_place_options_default();
    coplace.group = DP_GROUP_METHOD_COLOCATION;
    place(DP_PLACE_METHOD_M_ETF, t.g, t.ds, &coplace, p);
    CHECK_INT_EQ(p[t.as[0]], p[t.bs[0]]);
    CHECK_INT_EQ(p[t.as[2]], p[t.ab[0] + 1]);
    two_branch_close(&t);
}

/* gpu puts both chains on one GPU. */
static void test_gpu_two_branches(void) {
    two_branch t = two_branch_open();
    int32_t p[16];
    place(DP_PLACE_METHOD_GPU, t.g, t.ds, NULL, p);
    CHECK_INT_EQ(devices_used(t.g, p), 1);
    CHECK(fixture_simulate(t.g, t.ds, p).step_time_s > 6.0);
    two_branch_close(&t);
}

/* The grouping step's graph: input (CPU-only) -> x -> fork -> {l1 -> l2,
 * r1} -> join -> upd, with v in a TensorFlow group with upd. */
typedef struct coplace_graph {
    dp_graph *g;
    dp_devices *ds;
    int32_t in, x, f, l1, l2, r1, join, v, upd;
} coplace_graph;

static coplace_graph coplace_open(void) {
    coplace_graph c;
    dp_graph *g = c.g = dp_graph_init("coplace");
    c.in = add(g, "input", NULL, 0.001, 100, 0, NULL, 0);
    g->ops[c.in].device = (dp_devcon){DP_DEVCON_CPU, -1};
    c.x = add(g, "x", NULL, 0.1, 100, 0, &c.in, 1);   /* the input's only consumer */
    c.f = add(g, "fork", NULL, 0.1, 100, 0, &c.x, 1); /* two consumers */
    c.l1 = add(g, "l1", NULL, 0.1, 100, 0, &c.f, 1);  /* chain l1 -> l2 -> join */
    c.l2 = add(g, "l2", NULL, 0.1, 100, 0, &c.l1, 1);
    c.r1 = add(g, "r1", NULL, 0.1, 100, 0, &c.f, 1); /* r1 -> join */
    int32_t jn[2] = {c.l2, c.r1};
    c.join = add(g, "join", NULL, 0.1, 100, 0, jn, 2);
    c.v = add(g, "v", "var", 0.001, 100, 100, NULL, 0); /* TF group var = {v, upd} */
    int32_t ui[2] = {c.v, c.join};
    c.upd = add(g, "upd", "var", 0.001, 0, 0, ui, 2);
    fixture_finalize(g);
    c.ds = fixture_devices(2, 1 << 30, 1e9);
    return c;
}

static void coplace_close(coplace_graph *c) {
    dp_devices_free(c->ds);
    dp_graph_free(c->g);
}

/* Every placer runs on TensorFlow's groups by default; co-placement on
 * request. */
static void test_default_grouping_is_none(void) {
    dp_place_options o = dp_place_options_default();
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_place_method_name((dp_place_method)m));
        CHECK(dp_place_group_of((dp_place_method)m, &o) == DP_PLACE_GROUP_NONE);
        CHECK(dp_place_group_of((dp_place_method)m, NULL) == DP_PLACE_GROUP_NONE);
    }
    test_case_[0] = '\0';
    o.group = DP_GROUP_METHOD_COLOCATION;
    CHECK(dp_place_group_of(DP_PLACE_METHOD_M_ETF, &o) == DP_GROUP_METHOD_COLOCATION);
    CHECK(dp_place_group_of(DP_PLACE_METHOD_METIS, &o) == DP_GROUP_METHOD_COLOCATION);
}

/* Baechi's co-placement: rule 1, TensorFlow's colocation groups stay
 * whole; rule 2, an op whose outputs all go to one op joins that op
 * (transitively along chains); an op with two consumers is not joined, nor
 * are a constrained op and an unconstrained one (keep_unconstrained, which
 * the placers set). */
static void test_coplacement_rules(void) {
    coplace_graph c = coplace_open();
    dp_error err;
    dp_units u;
    dp_place_options o = dp_place_options_default();
    o.group = DP_GROUP_METHOD_COLOCATION;
    CHECK(place_units_init(&u, c.g, c.ds, DP_PLACE_METHOD_M_ETF, &o, NULL, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(u.unit_of[c.l1], u.unit_of[c.l2]);    /* a chain */
    CHECK_INT_EQ(u.unit_of[c.l2], u.unit_of[c.join]);  /* ...into its consumer */
    CHECK_INT_EQ(u.unit_of[c.r1], u.unit_of[c.join]);
    CHECK_INT_EQ(u.unit_of[c.v], u.unit_of[c.upd]);    /* TF group kept */
    CHECK_INT_EQ(u.unit_of[c.join], u.unit_of[c.upd]); /* join feeds upd only */
    CHECK(u.unit_of[c.f] != u.unit_of[c.l1]);          /* two consumers: not joined */
    CHECK_INT_EQ(u.unit_of[c.x], u.unit_of[c.f]);      /* x feeds fork only */
    CHECK(u.unit_of[c.in] != u.unit_of[c.x]);          /* CPU-only input not joined */
    CHECK_INT_EQ(u.n_units, 3);
    dp_units_free(&u);
    coplace_close(&c);
}

/* The grouper alone (keep_unconstrained 0) joins the CPU-only input too;
 * with keep_unconstrained it does not. */
static void test_grouper_keep_unconstrained(void) {
    coplace_graph c = coplace_open();
    dp_error err;
    dp_group_options go = dp_group_options_default();
    int32_t grp[16], ng = 0;
    CHECK(dp_group_run(DP_GROUP_METHOD_COLOCATION, c.g, &go, grp, &ng, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(grp[c.in], grp[c.x]);
    go.keep_unconstrained = 1;
    CHECK(dp_group_run(DP_GROUP_METHOD_COLOCATION, c.g, &go, grp, &ng, &err) == DP_STATUS_OK);
    CHECK(grp[c.in] != grp[c.x]);
    coplace_close(&c);
}

/* Grouping none: TensorFlow's groups only. */
static void test_units_of_grouping_none(void) {
    coplace_graph c = coplace_open();
    dp_error err;
    dp_units u;
    dp_place_options o = dp_place_options_default();
    o.group = DP_PLACE_GROUP_NONE;
    CHECK(place_units_init(&u, c.g, c.ds, DP_PLACE_METHOD_M_ETF, &o, NULL, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(u.n_units, 8);
    dp_units_free(&u);
    coplace_close(&c);
}

/* Another grouper, METIS into 2 groups, gives 2 units. */
static void test_units_of_metis_grouping(void) {
    coplace_graph c = coplace_open();
    dp_error err;
    dp_units u;
    dp_place_options o = dp_place_options_default();
    o.group = DP_GROUP_METHOD_METIS;
    o.n_groups = 2;
    CHECK(place_units_init(&u, c.g, c.ds, DP_PLACE_METHOD_M_ETF, &o, NULL, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(u.n_units, 2);
    dp_units_free(&u);
    coplace_close(&c);
}

/* Every list placer keeps each co-placed unit on one device. */
static void test_list_placers_keep_coplaced_units(void) {
    coplace_graph c = coplace_open();
    int32_t p[16];
    dp_place_options o = dp_place_options_default();
    o.group = DP_GROUP_METHOD_COLOCATION;
    dp_place_method lists[] = {DP_PLACE_METHOD_M_TOPO, DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_M_SCT};
    for (int k = 0; k < 3; k++) {
        TEST_CASE("%s", dp_place_method_name(lists[k]));
        place(lists[k], c.g, c.ds, &o, p);
        check_constraints(c.g, c.ds, p, dp_place_method_name(lists[k]));
        CHECK_INT_EQ(p[c.in], CPU);
        CHECK_INT_EQ(p[c.l1], p[c.join]);
        CHECK_INT_EQ(p[c.r1], p[c.upd]);
        CHECK(p[c.x] != CPU);
    }
    coplace_close(&c);
}

/* The grouping names round-trip; an unknown one is refused. */
static void test_group_names_round_trip(void) {
    int32_t back;
    CHECK(dp_place_group_from_name("colocation", &back) == 0 && back == DP_GROUP_METHOD_COLOCATION);
    CHECK(dp_place_group_from_name("none", &back) == 0 && back == DP_PLACE_GROUP_NONE);
    CHECK(dp_place_group_from_name("nope", &back) == -1);
    CHECK(strcmp(dp_place_group_name(DP_PLACE_GROUP_NONE), "none") == 0);
}

/* m-SCT's LP: on a fork whose one branch would pass a large tensor, that
 * child is the favourite; of two parents of one child, one is. */
static void test_sct_favourites(void) {
    TEST_CASE("a fork");
    dp_error err;
    int32_t from[2] = {0, 0}, to[2] = {1, 2}, fav[3];
    double comm[2] = {10, 0.1}, op_s[3] = {1, 1, 1}, mk;
    CHECK(place_sct_favourites(3, 2, from, to, comm, op_s, 0.1, NULL, fav, &mk, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(fav[0], 1);
    CHECK_INT_EQ(fav[1], -1);
    CHECK_NEAR(mk, 2.1 - 0.1 / 101, 1e-6); /* relaxed: x = 1/101 on the big edge */
    TEST_CASE("two parents of one child");
    int32_t from2[2] = {0, 1}, to2[2] = {2, 2};
    double comm2[2] = {5, 0.5};
    CHECK(place_sct_favourites(3, 2, from2, to2, comm2, op_s, 0.1, NULL, fav, &mk, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(fav[0], 2); /* x = 1/11 < 0.1 */
    CHECK_INT_EQ(fav[1], -1);
    CHECK_NEAR(mk, 2 + 5.0 / 11, 1e-6);
}

/* Baechi's forward-only placement on a hand-made training step: two
 * parallel 1-second layers a and b, a loss, their gradients (2 s each, in
 * "gradients/a" and "gradients/b") and a variable of a updated by the
 * gradient. */
typedef struct train_step {
    dp_graph *g;
    dp_devices *ds;
    int32_t in, wa, fa, fb, loss, g0, ga, ga2, gb, upd;
} train_step;

static train_step train_step_open(void) {
    train_step t;
    dp_graph *g = t.g = dp_graph_init("train-step");
    t.in = add_in(g, "input", "input", NULL, 0.01, 1000, 0, NULL, 0);
    t.wa = add_in(g, "wa", "a/w", "a/w", 0.001, 1000, 1000, NULL, 0);
    int32_t ain[2] = {t.in, t.wa};
    t.fa = add_in(g, "fa", "a", NULL, 1.0, 1000, 0, ain, 2);
    t.fb = add_in(g, "fb", "b", NULL, 1.0, 1000, 0, &t.in, 1);
    int32_t lin[2] = {t.fa, t.fb};
    t.loss = add_in(g, "loss", "loss", NULL, 0.01, 1000, 0, lin, 2);
    t.g0 = add_in(g, "fill", "gradients", NULL, 0.01, 1000, 0, &t.loss, 1);
    int32_t gain[2] = {t.g0, t.fa}, gbin[2] = {t.g0, t.fb};
    t.ga = add_in(g, "ga", "gradients/a", NULL, 2.0, 1000, 0, gain, 2);
    t.ga2 = add_in(g, "ga_sum", "gradients/a", NULL, 0.01, 1000, 0, &t.ga, 1); /* reads a gradient only */
    t.gb = add_in(g, "gb", "clip_by_global_norm/gradients/b", NULL, 2.0, 1000, 0, gbin, 2);
    int32_t upin[2] = {t.wa, t.ga2};
    t.upd = add_in(g, "upd", "a/w/optimizer", "a/w", 0.01, 0, 0, upin, 2);
    fixture_finalize(g);
    t.ds = fixture_devices(2, 1 << 30, 1e9);
    return t;
}

static void train_step_close(train_step *t) {
    dp_devices_free(t->ds);
    dp_graph_free(t->g);
}

/* The backward ops are the gradient ops and what reads them; each gradient
 * op is anchored to the forward op of its scope that it reads (through a
 * clipping scope too); other ops have no anchor. */
static void test_forward_only_anchors(void) {
    train_step t = train_step_open();
    dp_error err;
    place_fwd f;
    CHECK(place_fwd_init(&f, t.g, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(f.n_backward, 5);
    int32_t fwd_ops[] = {t.in, t.wa, t.fa, t.fb, t.loss}, back_ops[] = {t.g0, t.ga, t.ga2, t.gb, t.upd};
    for (int k = 0; k < 5; k++) {
        TEST_CASE("forward op %d, backward op %d", (int)fwd_ops[k], (int)back_ops[k]);
        CHECK(!f.backward[fwd_ops[k]] && f.backward[back_ops[k]]);
    }
    test_case_[0] = '\0';
    CHECK_INT_EQ(f.anchor[t.ga], t.fa);
    CHECK_INT_EQ(f.anchor[t.ga2], t.fa); /* its scope's op it reads */
    CHECK_INT_EQ(f.anchor[t.gb], t.fb);  /* through the clipping scope */
    CHECK_INT_EQ(f.anchor[t.g0], -1);    /* "gradients" has no forward scope */
    CHECK_INT_EQ(f.anchor[t.upd], -1);   /* not a gradient scope: its TF group pins it */
    CHECK_INT_EQ(f.anchor[t.fa], -1);
    place_fwd_free(&f);
    train_step_close(&t);
}

/* Units: each gradient with its anchor; co-placement sees forward
 * consumers only, so fa (read by loss and ga) joins loss; with all ops
 * counted it has two consumers and does not. */
static void test_forward_only_units(void) {
    train_step t = train_step_open();
    dp_error err;
    place_fwd f;
    CHECK(place_fwd_init(&f, t.g, &err) == DP_STATUS_OK);
    dp_place_options o = dp_place_options_default();
    dp_units u;
    CHECK(place_units_init(&u, t.g, t.ds, DP_PLACE_METHOD_M_ETF, &o, &f, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(u.unit_of[t.ga], u.unit_of[t.fa]);
    CHECK_INT_EQ(u.unit_of[t.gb], u.unit_of[t.fb]);
    CHECK(u.unit_of[t.fa] != u.unit_of[t.loss]);
    dp_units_free(&u);
    o.group = DP_GROUP_METHOD_COLOCATION;
    CHECK(place_units_init(&u, t.g, t.ds, DP_PLACE_METHOD_M_ETF, &o, &f, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(u.unit_of[t.fa], u.unit_of[t.loss]);
    CHECK_INT_EQ(u.unit_of[t.ga], u.unit_of[t.loss]);
    dp_units_free(&u);
    CHECK(place_units_init(&u, t.g, t.ds, DP_PLACE_METHOD_M_ETF, &o, NULL, &err) == DP_STATUS_OK);
    CHECK(u.unit_of[t.fa] != u.unit_of[t.loss]); /* two consumers when all ops count */
    dp_units_free(&u);
    place_fwd_free(&f);
    train_step_close(&t);
}

/* The list placers (TensorFlow's groups) put each gradient with its layer
 * and the update with its variable; m-ETF and m-SCT spread a and b. */
static void test_forward_only_placers(void) {
    train_step t = train_step_open();
    int32_t p[16];
    dp_place_method lists[] = {DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_M_SCT, DP_PLACE_METHOD_M_TOPO};
    for (int k = 0; k < 3; k++) {
        TEST_CASE("%s", dp_place_method_name(lists[k]));
        place(lists[k], t.g, t.ds, NULL, p);
        check_constraints(t.g, t.ds, p, dp_place_method_name(lists[k]));
        CHECK_INT_EQ(p[t.ga], p[t.fa]);
        CHECK_INT_EQ(p[t.ga2], p[t.fa]);
        CHECK_INT_EQ(p[t.gb], p[t.fb]);
        CHECK_INT_EQ(p[t.upd], p[t.wa]);
        if (k < 2) {
            CHECK(p[t.fa] != p[t.fb]);
            CHECK_INT_EQ(p[t.g0], p[t.loss]); /* unanchored: with its largest input */
            CHECK(fixture_simulate(t.g, t.ds, p).step_time_s < 3.5); /* one GPU: 6.05 s */
        }
    }
    train_step_close(&t);
}

/* forward_only 0: every op placed on its own, constraints kept. */
static void test_every_op_placed_without_forward_only(void) {
    train_step t = train_step_open();
    int32_t p[16];
    dp_place_options o = dp_place_options_default();
    o.forward_only = 0;
    place(DP_PLACE_METHOD_M_ETF, t.g, t.ds, &o, p);
    check_constraints(t.g, t.ds, p, "m-etf, every op");
    train_step_close(&t);
}

/* ---- an exported PyTorch training step ---------------------------------- */

/* Adds an op of aten type `type` as scripts/dplace-export-torch writes it:
 * inputs ins[n_in] ((producer, slot) pairs), outputs of out[n_out] bytes,
 * `secs` on a GPU (10x on the CPU), `params` parameter bytes. */
static int32_t add_aten(dp_graph *g, const char *name, const char *type, const char *scope, const char *coloc,
                        double secs, const uint64_t *out, int n_out, uint64_t params, const dp_input *ins, int n_in) {
    dp_error err;
    int32_t id = dp_graph_add_op(g, name, type, scope, coloc, &err);
    CHECK(id >= 0);
    for (int k = 0; k < n_in; k++) CHECK(dp_graph_add_input(g, id, ins[k].op, ins[k].slot, &err) == DP_STATUS_OK);
    for (int k = 0; k < n_out; k++) CHECK(dp_graph_add_output_bytes(g, id, out[k], &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "gpu", secs, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "cpu", 10 * secs, &err) == DP_STATUS_OK);
    g->ops[id].param_bytes = params;
    return id;
}

/* One source of the step: a Parameter or Buffer of `bytes` (its colocation
 * group `coloc`), or the batch (a Placeholder, no group). */
static int32_t add_source(dp_graph *g, const char *name, const char *type, const char *scope, const char *coloc,
                          uint64_t bytes) {
    return add_aten(g, name, type, scope, coloc, 1e-6, &bytes, 1, strcmp(type, "Placeholder") ? bytes : 0, NULL,
                    0);
}

enum { TORCH_LAYERS = 4 };

/* One training step of a chain of TORCH_LAYERS convolutions with batch norm
 * and ReLU, as scripts/dplace-export-torch exports a PyTorch CNN: Parameter
 * and Buffer ops first, each batch norm colocated with its running
 * statistics (it writes them in place), a detached view of each ReLU kept
 * for the backward pass, the loss, the gradients in "gradients/..." scopes,
 * and SGD with momentum updating each parameter in its colocation group.
 * 8 MB activations, 2 ms convolutions, on four GPUs with 10 GB/s links: it
 * fits on one GPU, and every activation sent elsewhere costs about as much
 * as the op after it. conv[i], bn[i], kept[i]: each layer's convolution,
 * batch norm and detached ReLU output. */
typedef struct torch_step {
    dp_graph *g;
    dp_devices *ds;
    int32_t conv[TORCH_LAYERS], bn[TORCH_LAYERS], kept[TORCH_LAYERS];
} torch_step;

/* The forward ops of a convolution with batch norm and ReLU, modules
 * MOD/conv and MOD/bn, the ReLU and its detached view in scope relu (the
 * module around them, or a module of its own), reading act; returns the
 * ReLU, fills w[5] with its weight, momentum, bn weight and running
 * statistics and op[3] with its convolution, batch norm and detached view. */
static int32_t conv_bn_relu(dp_graph *g, const char *mod, const char *relu, int32_t act, int32_t *w, int32_t *op) {
    const uint64_t big = 8000000, wb = 256000, bnb = 1000;
    char sc[48], bs[48], nm[96], cw[64], bw[64], rm[64];
    snprintf(sc, sizeof sc, "%s/conv", mod), snprintf(bs, sizeof bs, "%s/bn", mod);
    snprintf(cw, sizeof cw, "%s/weight", sc), snprintf(bw, sizeof bw, "%s/weight", bs);
    snprintf(rm, sizeof rm, "%s/running_mean", bs);
    w[0] = add_source(g, cw, "Parameter", sc, cw, wb);
    snprintf(nm, sizeof nm, "%s/momentum_buffer", cw);
    w[1] = add_source(g, nm, "Buffer", sc, cw, wb);
    w[2] = add_source(g, bw, "Parameter", bs, bw, bnb);
    w[3] = add_source(g, rm, "Buffer", bs, rm, bnb);
    snprintf(nm, sizeof nm, "%s/running_var", bs);
    w[4] = add_source(g, nm, "Buffer", bs, rm, bnb);
    snprintf(nm, sizeof nm, "%s/convolution", sc);
    dp_input cin[2] = {{act, 0}, {w[0], 0}};
    op[0] = add_aten(g, nm, "convolution", sc, NULL, 2e-3, &big, 1, 0, cin, 2);
    snprintf(nm, sizeof nm, "%s/native_batch_norm", bs);
    dp_input bin[4] = {{op[0], 0}, {w[2], 0}, {w[3], 0}, {w[4], 0}};
    uint64_t bout[3] = {big, bnb, bnb};
    op[1] = add_aten(g, nm, "native_batch_norm", bs, rm, 1e-3, bout, 3, 0, bin, 4);
    snprintf(nm, sizeof nm, "%s/relu_", relu);
    dp_input rin = {op[1], 0};
    int32_t r = add_aten(g, nm, "relu_", relu, NULL, 5e-4, &big, 1, 0, &rin, 1);
    snprintf(nm, sizeof nm, "%s/detach", relu);
    dp_input din = {r, 0};
    op[2] = add_aten(g, nm, "detach", relu, NULL, 1e-6, &big, 1, 0, &din, 1);
    return r;
}

/* The backward ops of conv_bn_relu (grad: the gradient of its output; act:
 * its input; w, op: conv_bn_relu's) and its SGD updates; returns the
 * gradient of its input. */
static int32_t conv_bn_relu_backward(dp_graph *g, const char *mod, const char *relu, int32_t grad, int32_t act,
                                     const int32_t *w, const int32_t *op) {
    const uint64_t big = 8000000, wb = 256000, bnb = 1000;
    char sc[64], nm[96], cw[64], bw[64];
    snprintf(cw, sizeof cw, "%s/conv/weight", mod), snprintf(bw, sizeof bw, "%s/bn/weight", mod);
    snprintf(sc, sizeof sc, "gradients/%s", relu), snprintf(nm, sizeof nm, "%s/threshold_backward", sc);
    dp_input tin[2] = {{grad, 0}, {op[2], 0}};
    int32_t thr = add_aten(g, nm, "threshold_backward", sc, NULL, 5e-4, &big, 1, 0, tin, 2);
    snprintf(sc, sizeof sc, "gradients/%s/bn", mod), snprintf(nm, sizeof nm, "%s/native_batch_norm_backward", sc);
    dp_input bin[5] = {{thr, 0}, {op[0], 0}, {w[2], 0}, {w[3], 0}, {w[4], 0}};
    uint64_t bout[3] = {big, bnb, bnb};
    int32_t bnb_op = add_aten(g, nm, "native_batch_norm_backward", sc, NULL, 2e-3, bout, 3, 0, bin, 5);
    snprintf(sc, sizeof sc, "gradients/%s/conv", mod), snprintf(nm, sizeof nm, "%s/convolution_backward", sc);
    dp_input cin[3] = {{bnb_op, 0}, {act, 0}, {w[0], 0}};
    uint64_t cout[2] = {big, wb};
    int32_t cb = add_aten(g, nm, "convolution_backward", sc, NULL, 4e-3, cout, 2, 0, cin, 3);
    /* SGD with momentum: buf.mul_(momentum).add_(grad); weight.add_(buf) */
    snprintf(sc, sizeof sc, "%s/conv", mod), snprintf(nm, sizeof nm, "%s/mul_", sc);
    dp_input m0 = {w[1], 0};
    int32_t mul = add_aten(g, nm, "mul_", sc, cw, 1e-5, &wb, 1, 0, &m0, 1);
    snprintf(nm, sizeof nm, "%s/add_", sc);
    dp_input a0[2] = {{mul, 0}, {cb, 1}};
    int32_t buf = add_aten(g, nm, "add_", sc, cw, 1e-5, &wb, 1, 0, a0, 2);
    snprintf(nm, sizeof nm, "%s/add__1", sc);
    dp_input a1[2] = {{w[0], 0}, {buf, 0}};
    add_aten(g, nm, "add_", sc, cw, 1e-5, &wb, 1, 0, a1, 2);
    snprintf(sc, sizeof sc, "%s/bn", mod), snprintf(nm, sizeof nm, "%s/add_", sc);
    dp_input a2[2] = {{w[2], 0}, {bnb_op, 1}};
    add_aten(g, nm, "add_", sc, bw, 1e-5, &bnb, 1, 0, a2, 2);
    return cb;
}

/* Layer i of the chain (modules layerI/conv, layerI/bn, layerI/relu):
 * conv_bn_relu reading act, its ops kept in t; returns its output. */
static int32_t torch_layer(torch_step *t, int i, int32_t act, int32_t *w) {
    char mod[16], relu[24];
    int32_t op[3];
    snprintf(mod, sizeof mod, "layer%d", i), snprintf(relu, sizeof relu, "layer%d/relu", i);
    int32_t r = conv_bn_relu(t->g, mod, relu, act, w, op);
    t->conv[i] = op[0], t->bn[i] = op[1], t->kept[i] = op[2];
    return r;
}

/* The backward ops of layer i and its SGD updates; returns the gradient of
 * its input. */
static int32_t torch_layer_backward(torch_step *t, int i, int32_t grad, int32_t act, const int32_t *w) {
    char mod[16], relu[24];
    int32_t op[3] = {t->conv[i], t->bn[i], t->kept[i]};
    snprintf(mod, sizeof mod, "layer%d", i), snprintf(relu, sizeof relu, "layer%d/relu", i);
    return conv_bn_relu_backward(t->g, mod, relu, grad, act, w, op);
}

static torch_step torch_step_open(void) {
    torch_step t;
    dp_graph *g = t.g = dp_graph_init("torch-step");
    const uint64_t big = 8000000, four = 4;
    int32_t w[TORCH_LAYERS][5], in[TORCH_LAYERS + 1];
    in[0] = add_source(g, "input/x", "Placeholder", "input", NULL, big);
    for (int i = 0; i < TORCH_LAYERS; i++) in[i + 1] = torch_layer(&t, i, in[i], w[i]);
    dp_input lin = {in[TORCH_LAYERS], 0};
    int32_t loss = add_aten(g, "loss/sum", "sum", "loss", NULL, 1e-4, &four, 1, 0, &lin, 1);
    dp_input oin = {loss, 0};
    int32_t ones = add_aten(g, "gradients/loss/ones_like", "ones_like", "gradients/loss", NULL, 1e-6, &four, 1, 0,
                            &oin, 1);
    dp_input ein = {ones, 0};
    int32_t grad = add_aten(g, "gradients/loss/expand", "expand", "gradients/loss", NULL, 1e-4, &big, 1, 0, &ein, 1);
    for (int i = TORCH_LAYERS - 1; i >= 0; i--) grad = torch_layer_backward(&t, i, grad, in[i], w[i]);
    fixture_finalize(g);
    t.ds = fixture_devices(4, (uint64_t)1 << 34, 1e10);
    return t;
}

static void torch_step_close(torch_step *t) {
    dp_devices_free(t->ds);
    dp_graph_free(t->g);
}

/* The step time of method m's placement of the exported step (valid), and
 * of the single GPU's in *gpu_s. */
static double torch_step_time(const torch_step *t, dp_place_method m, double *gpu_s) {
    int32_t p[512], q[512];
    CHECK(t->g->n_ops <= 512);
    place(DP_PLACE_METHOD_GPU, t->g, t->ds, NULL, q);
    dp_sim_result one = fixture_simulate(t->g, t->ds, q);
    CHECK(one.valid);
    *gpu_s = one.step_time_s;
    place(m, t->g, t->ds, NULL, p);
    check_constraints(t->g, t->ds, p, dp_place_method_name(m));
    dp_sim_result r = fixture_simulate(t->g, t->ds, p);
    CHECK(r.valid);
    return r.step_time_s;
}

/* m-ETF keeps an exported CNN that fits on one GPU as fast as one GPU: the
 * parameters and running statistics do not pull the batch norms (and the
 * activations with them) onto other GPUs. */
static void test_etf_exported_cnn_not_slower_than_one_gpu(void) {
    torch_step t = torch_step_open();
    double gpu_s, s = torch_step_time(&t, DP_PLACE_METHOD_M_ETF, &gpu_s);
    TEST_CASE("m-etf %.6f s, one GPU %.6f s", s, gpu_s);
    CHECK(s <= gpu_s * (1 + 1e-9));
    torch_step_close(&t);
}

/* The exported step of torch_step_open on four GPUs of gpu_mem bytes each
 * (device 0 the CPU). */
static torch_step torch_step_memory(uint64_t gpu_mem) {
    torch_step t = torch_step_open();
    dp_devices_free(t.ds);
    t.ds = fixture_devices(4, gpu_mem, 1e10);
    return t;
}

/* accel-sequential fills GPU 0 with the modules in their order, then GPU 1:
 * each layer holds 515 kB (a 512 kB convolution with its momentum, a 3 kB
 * batch norm), so GPU 0's 1.543 MB takes layers 0 and 1 whole; layer 2 does
 * not fit and is split into its submodules: its convolution fits, its batch
 * norm does not and goes to GPU 1 with layer 3 (the walk never goes back). */
static void test_accel_sequential_fills_gpu0_then_splits(void) {
    torch_step t = torch_step_memory(1543000);
    int32_t p[512];
    place(DP_PLACE_METHOD_ACCEL_SEQUENTIAL, t.g, t.ds, NULL, p);
    check_constraints(t.g, t.ds, p, "accel-sequential");
    CHECK_INT_EQ(p[t.conv[0]], G0);
    CHECK_INT_EQ(p[t.bn[0]], G0);
    CHECK_INT_EQ(p[t.conv[1]], G0);
    CHECK_INT_EQ(p[t.bn[1]], G0);
    CHECK_INT_EQ(p[t.conv[2]], G0); /* a submodule of the split layer 2 */
    CHECK_INT_EQ(p[t.bn[2]], G1);
    CHECK_INT_EQ(p[t.conv[3]], G1);
    CHECK_INT_EQ(p[t.bn[3]], G1);
    torch_step_close(&t);
}

/* accel-sequential with room to spare puts every module on GPU 0. */
static void test_accel_sequential_fits_on_gpu0(void) {
    torch_step t = torch_step_open();
    int32_t p[512];
    place(DP_PLACE_METHOD_ACCEL_SEQUENTIAL, t.g, t.ds, NULL, p);
    for (int32_t i = 0; i < t.g->n_ops; i++)
        if (t.g->ops[i].device.kind == DP_DEVCON_NONE) CHECK_INT_EQ(p[i], G0);
    torch_step_close(&t);
}

/* accel-balanced spreads the parameter bytes over the four GPUs within one
 * layer's bytes of even, every GPU used. */
static void test_accel_balanced_spreads_parameters(void) {
    torch_step t = torch_step_open();
    int32_t p[512];
    place(DP_PLACE_METHOD_ACCEL_BALANCED, t.g, t.ds, NULL, p);
    check_constraints(t.g, t.ds, p, "accel-balanced");
    uint64_t bytes[8] = {0}, total = 0, layer = 515000;
    for (int32_t i = 0; i < t.g->n_ops; i++) bytes[p[i]] += t.g->ops[i].param_bytes, total += t.g->ops[i].param_bytes;
    CHECK_INT_EQ(bytes[CPU], 0);
    for (int d = G0; d <= G0 + 3; d++) {
        TEST_CASE("gpu %d: %llu of %llu bytes", d - G0, (unsigned long long)bytes[d], (unsigned long long)total);
        CHECK(bytes[d] > 0);
        CHECK(bytes[d] + layer >= total / 4 && bytes[d] <= total / 4 + layer);
    }
    torch_step_close(&t);
}

/* On a graph without module scopes (the zoo's) both accel placers say they
 * cannot apply, and why. */
static void test_accel_zoo_unsupported(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("synthetic-500", 0, &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    CHECK(ds);
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    CHECK(p);
    dp_place_method m[2] = {DP_PLACE_METHOD_ACCEL_BALANCED, DP_PLACE_METHOD_ACCEL_SEQUENTIAL};
    for (int k = 0; k < 2; k++) {
        TEST_CASE("%s", dp_place_method_name(m[k]));
        CHECK_INT_EQ(dp_place_run(m[k], g, ds, NULL, p, &err), DP_STATUS_UNSUPPORTED);
        CHECK_STR_CONTAINS(err.msg, "needs module scopes: a PyTorch export");
    }
    free(p);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* m-SCT too. */
static void test_sct_exported_cnn_not_slower_than_one_gpu(void) {
    torch_step t = torch_step_open();
    double gpu_s, s = torch_step_time(&t, DP_PLACE_METHOD_M_SCT, &gpu_s);
    TEST_CASE("m-sct %.6f s, one GPU %.6f s", s, gpu_s);
    CHECK(s <= gpu_s * (1 + 1e-9));
    torch_step_close(&t);
}

/* m-TOPO fills the GPUs in order: along the exported step's forward pass
 * (each convolution, then its batch norm) the GPU never goes back to an
 * earlier one, which a batch norm pinned where its running statistics were
 * put first would. */
static void test_topo_exported_cnn_fills_gpus_in_order(void) {
    torch_step t = torch_step_open();
    int32_t p[512], last = -1;
    place(DP_PLACE_METHOD_M_TOPO, t.g, t.ds, NULL, p);
    for (int i = 0; i < TORCH_LAYERS; i++) {
        TEST_CASE("layer %d: convolution on %d, batch norm on %d, the layer before on %d", i, (int)p[t.conv[i]],
                  (int)p[t.bn[i]], (int)last);
        CHECK(p[t.conv[i]] >= last && p[t.bn[i]] >= p[t.conv[i]]);
        last = p[t.bn[i]];
    }
    torch_step_close(&t);
}

/* Placing modules (units MODULE), every placer that places units keeps
 * each module of the exported step whole. */
static void test_placers_keep_modules_whole(void) {
    torch_step t = torch_step_open();
    dp_place_options o = dp_place_options_default();
    o.units = (dp_units_spec){DP_UNITS_MODULE, 0};
    dp_units u;
    dp_error err;
    CHECK_INT_EQ(dp_units_init_spec(&u, t.g, o.units, &err), DP_STATUS_OK);
    int32_t p[512];
    for (int m = DP_PLACE_METHOD_SCOTCH; m < DP_PLACE_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_place_method_name((dp_place_method)m));
        place((dp_place_method)m, t.g, t.ds, &o, p);
        check_constraints(t.g, t.ds, p, dp_place_method_name((dp_place_method)m));
        CHECK_INT_EQ(dp_units_count_split(&u, p), 0);
    }
    dp_units_free(&u);
    torch_step_close(&t);
}

/* m-ETF and m-SCT placing modules are not slower than one GPU either. */
static void test_list_placers_modules_not_slower_than_one_gpu(void) {
    torch_step t = torch_step_open();
    dp_place_options o = dp_place_options_default();
    o.units = (dp_units_spec){DP_UNITS_MODULE, 0};
    int32_t p[512], q[512];
    place(DP_PLACE_METHOD_GPU, t.g, t.ds, NULL, q);
    double gpu_s = fixture_simulate(t.g, t.ds, q).step_time_s;
    dp_place_method lists[] = {DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_M_SCT};
    for (int k = 0; k < 2; k++) {
        place(lists[k], t.g, t.ds, &o, p);
        dp_sim_result r = fixture_simulate(t.g, t.ds, p);
        TEST_CASE("%s by module %.6f s, one GPU %.6f s", dp_place_method_name(lists[k]), r.step_time_s, gpu_s);
        CHECK(r.valid && r.step_time_s <= gpu_s * (1 + 1e-9));
    }
    torch_step_close(&t);
}

/* ---- an exported step with parallel branches ---------------------------- */

enum { BRANCH_BLOCKS = 4, BRANCHES = 4, BRANCH_LAYERS = 1 + BRANCH_BLOCKS * 7 };

/* Layers in a row on each branch of a block. */
static const int branch_len[BRANCHES] = {1, 2, 2, 2};

/* A training step exported from an Inception-like CNN: a stem layer, then
 * BRANCH_BLOCKS blocks of BRANCHES parallel branches (branch_len layers in
 * a row) joined by a concatenation, on four GPUs with links of `bandwidth`
 * bytes/s. Each layer is a module around a convolution module and a
 * batch-norm module, its ReLU in the layer's own scope (torchvision's
 * BasicConv2d: blockB/bJ_L/conv, blockB/bJ_L/bn, blockB/bJ_L); the
 * concatenation is the block's, and the backward pass splits its gradient
 * per branch and sums the branches'. op[l]: layer l's conv_bn_relu ops. */
typedef struct branch_step {
    dp_graph *g;
    dp_devices *ds;
    int32_t n_layers;
    int32_t op[BRANCH_LAYERS][3];
} branch_step;

static branch_step branch_step_build(double bandwidth, int traced);

static branch_step branch_step_open(double bandwidth) { return branch_step_build(bandwidth, 0); }

/* The same step as another tracer writes it, op by op: no op has a scope
 * (so no module paths and no gradient scopes), and the ReLU's detached view
 * computes nothing, as PyTorch's exporters count it. */
static branch_step branch_step_traced(double bandwidth) { return branch_step_build(bandwidth, 1); }

static branch_step branch_step_build(double bandwidth, int traced) {
    branch_step t = {0};
    dp_graph *g = t.g = dp_graph_init("branch-step");
    const uint64_t big = 8000000, four = 4, cat_bytes = BRANCHES * big;
    char mod[BRANCH_LAYERS][32], nm[48], sc[32];
    int32_t act[BRANCH_LAYERS], w[BRANCH_LAYERS][5], first[BRANCH_BLOCKS][BRANCHES], n = 0;
    int32_t x = add_source(g, "input/x", "Placeholder", "input", NULL, big);
    snprintf(mod[0], sizeof mod[0], "stem");
    act[0] = x;
    x = conv_bn_relu(g, "stem", "stem", x, w[0], t.op[n++]);
    for (int b = 0; b < BRANCH_BLOCKS; b++) {
        dp_input in[BRANCHES];
        for (int j = 0; j < BRANCHES; j++) {
            int32_t a = x;
            first[b][j] = n;
            for (int l = 0; l < branch_len[j]; l++, n++) {
                snprintf(mod[n], sizeof mod[n], "block%d/b%d_%d", b, j, l);
                act[n] = a;
                a = conv_bn_relu(g, mod[n], mod[n], a, w[n], t.op[n]);
            }
            in[j] = (dp_input){a, 0};
        }
        snprintf(sc, sizeof sc, "block%d", b), snprintf(nm, sizeof nm, "block%d/cat", b);
        x = add_aten(g, nm, "cat", sc, NULL, 3e-4, &cat_bytes, 1, 0, in, BRANCHES);
    }
    t.n_layers = n;
    dp_input lin = {x, 0};
    int32_t loss = add_aten(g, "loss/sum", "sum", "loss", NULL, 1e-4, &four, 1, 0, &lin, 1);
    dp_input oin = {loss, 0};
    int32_t ones = add_aten(g, "gradients/loss/ones_like", "ones_like", "gradients/loss", NULL, 1e-6, &four, 1, 0,
                            &oin, 1);
    dp_input ein = {ones, 0};
    int32_t grad =
        add_aten(g, "gradients/loss/expand", "expand", "gradients/loss", NULL, 1e-4, &cat_bytes, 1, 0, &ein, 1);
    for (int b = BRANCH_BLOCKS - 1; b >= 0; b--) {
        dp_input sum_in[BRANCHES];
        snprintf(sc, sizeof sc, "gradients/block%d", b);
        for (int j = 0; j < BRANCHES; j++) {
            snprintf(nm, sizeof nm, "%s/narrow_%d", sc, j);
            dp_input nin = {grad, 0};
            int32_t gj = add_aten(g, nm, "narrow", sc, NULL, 1e-5, &big, 1, 0, &nin, 1);
            for (int l = branch_len[j] - 1; l >= 0; l--) {
                int32_t k = first[b][j] + l;
                gj = conv_bn_relu_backward(g, mod[k], mod[k], gj, act[k], w[k], t.op[k]);
            }
            sum_in[j] = (dp_input){gj, 0};
        }
        snprintf(nm, sizeof nm, "%s/add", sc);
        grad = add_aten(g, nm, "add", sc, NULL, 2e-4, &big, 1, 0, sum_in, BRANCHES);
    }
    conv_bn_relu_backward(g, "stem", "stem", grad, act[0], w[0], t.op[0]);
    for (int32_t i = 0; i < g->n_ops && traced; i++) {
        g->ops[i].scope = -1;
        if (!strcmp(dp_graph_str(g, g->ops[i].type), "detach")) g->ops[i].flops = 0;
    }
    fixture_finalize(g);
    t.ds = fixture_devices(4, (uint64_t)1 << 34, bandwidth);
    return t;
}

static void branch_step_close(branch_step *t) {
    dp_devices_free(t->ds);
    dp_graph_free(t->g);
}

/* The placers' options that place whole modules. */
static dp_place_options by_module(void) {
    dp_place_options o = dp_place_options_default();
    o.units = (dp_units_spec){DP_UNITS_MODULE, 0};
    return o;
}

/* The step time of method m's placement of the branch step by module, and
 * of the single GPU's in *gpu_s. */
static double branch_step_time(const branch_step *t, dp_place_method m, double *gpu_s) {
    int32_t p[2048], q[2048];
    CHECK(t->g->n_ops <= 2048);
    place(DP_PLACE_METHOD_GPU, t->g, t->ds, NULL, q);
    *gpu_s = fixture_simulate(t->g, t->ds, q).step_time_s;
    dp_place_options o = by_module();
    if (!dp_units_has_modules(t->g)) o.units = (dp_units_spec){DP_UNITS_AUTO, 0};
    place(m, t->g, t->ds, &o, p);
    dp_sim_result r = fixture_simulate(t->g, t->ds, p);
    CHECK(r.valid);
    return r.step_time_s;
}

/* Placing modules, the list placers put each layer of the branch step (its
 * convolution, batch norm and ReLU modules, a chain) on one GPU: with 10
 * GB/s links, no batch norm goes to an idle GPU while its convolution's GPU
 * runs another branch, its activation crossing both ways. */
static void test_list_placers_keep_module_chains_together(void) {
    branch_step t = branch_step_open(1e10);
    int32_t p[2048];
    CHECK(t.g->n_ops <= 2048);
    dp_place_options o = by_module();
    dp_place_method lists[] = {DP_PLACE_METHOD_M_TOPO, DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_M_SCT};
    for (int k = 0; k < 3; k++) {
        place(lists[k], t.g, t.ds, &o, p);
        for (int32_t l = 0; l < t.n_layers; l++) {
            TEST_CASE("%s, layer %d: convolution on %d, batch norm on %d, ReLU's view on %d",
                      dp_place_method_name(lists[k]), (int)l, (int)p[t.op[l][0]], (int)p[t.op[l][1]],
                      (int)p[t.op[l][2]]);
            CHECK(p[t.op[l][0]] == p[t.op[l][1]] && p[t.op[l][1]] == p[t.op[l][2]]);
        }
    }
    branch_step_close(&t);
}

/* A step traced op by op has no modules to place, and units `auto` are
 * its ops. */
static void test_traced_step_has_no_modules(void) {
    branch_step t = branch_step_open(1e10), u = branch_step_traced(1e10);
    CHECK(dp_units_has_modules(t.g));
    CHECK(!dp_units_has_modules(u.g));
    CHECK(dp_units_spec_resolve((dp_units_spec){DP_UNITS_AUTO, 0}, u.g).kind == DP_UNITS_OP);
    branch_step_close(&t), branch_step_close(&u);
}

/* Without gradient scopes, the forward-only placement finds the backward
 * pass by PyTorch's names of gradient ops, and a ReLU's detached view
 * (kept for the backward pass alone) stays beside its ReLU, so the
 * activation does not cross: every layer's convolution, batch norm and view
 * on one device. */
static void test_list_placers_traced_step_views_stay(void) {
    branch_step t = branch_step_traced(1e9);
    int32_t p[2048];
    CHECK(t.g->n_ops <= 2048);
    dp_place_method lists[] = {DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_M_SCT};
    for (int k = 0; k < 2; k++) {
        place(lists[k], t.g, t.ds, NULL, p);
        for (int32_t l = 0; l < t.n_layers; l++) {
            TEST_CASE("%s, layer %d: batch norm on %d, ReLU's view on %d", dp_place_method_name(lists[k]), (int)l,
                      (int)p[t.op[l][1]], (int)p[t.op[l][2]]);
            CHECK(p[t.op[l][1]] == p[t.op[l][2]]);
        }
    }
    branch_step_close(&t);
}

/* Traced op by op, with 1 GB/s links: m-ETF and m-SCT not slower than one
 * GPU, m-TOPO (which fills GPUs in order, not looking at transfers) at most
 * half as slow again. */
static void test_list_placers_traced_step_near_one_gpu(void) {
    branch_step t = branch_step_traced(1e9);
    dp_place_method lists[] = {DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_M_SCT, DP_PLACE_METHOD_M_TOPO};
    double bound[] = {1, 1, 1.5};
    for (int k = 0; k < 3; k++) {
        double gpu_s, s = branch_step_time(&t, lists[k], &gpu_s);
        TEST_CASE("%s traced %.6f s, one GPU %.6f s", dp_place_method_name(lists[k]), s, gpu_s);
        CHECK(s <= gpu_s * bound[k] * (1 + 1e-9));
    }
    branch_step_close(&t);
}

/* With 1 GB/s links, where every activation that crosses costs more than
 * the layer it feeds, m-ETF by module is not slower than one GPU. */
static void test_etf_branch_modules_not_slower_than_one_gpu(void) {
    branch_step t = branch_step_open(1e9);
    double gpu_s, s = branch_step_time(&t, DP_PLACE_METHOD_M_ETF, &gpu_s);
    TEST_CASE("m-etf by module %.6f s, one GPU %.6f s", s, gpu_s);
    CHECK(s <= gpu_s * (1 + 1e-9));
    branch_step_close(&t);
}

/* m-SCT by module neither. */
static void test_sct_branch_modules_not_slower_than_one_gpu(void) {
    branch_step t = branch_step_open(1e9);
    double gpu_s, s = branch_step_time(&t, DP_PLACE_METHOD_M_SCT, &gpu_s);
    TEST_CASE("m-sct by module %.6f s, one GPU %.6f s", s, gpu_s);
    CHECK(s <= gpu_s * (1 + 1e-9));
    branch_step_close(&t);
}

/* The exported step on four GPUs of 64 MB, which one GPU cannot hold (115
 * MB): m-ETF's count of memory (the forward pass's) lets its placement run
 * out of memory in the simulator; evaluated as the baselines are, m-ETF
 * runs again with a smaller memory fraction and its placement is valid. */
static void test_list_placer_retried_out_of_memory(void) {
    torch_step t = torch_step_open();
    dp_devices_free(t.ds);
    t.ds = fixture_devices(4, 64000000, 1e10);
    int32_t p[512], q[512];
    place(DP_PLACE_METHOD_M_ETF, t.g, t.ds, NULL, p);
    CHECK(!fixture_simulate(t.g, t.ds, p).valid);
    dp_error err;
    dp_sim *sim = dp_sim_init(t.g, t.ds, &err);
    CHECK(sim);
    dp_place_report rep;
    CHECK_INT_EQ(dp_place_evaluate(sim, t.g, t.ds, DP_PLACE_METHOD_M_ETF, NULL, q, &rep, &err), DP_STATUS_OK);
    CHECK(rep.status == DP_STATUS_OK && rep.sim.valid);
    CHECK(fixture_simulate(t.g, t.ds, q).valid);
    dp_sim_free(sim);
    torch_step_close(&t);
}

/* m-SCT's LP memo: the same inputs again are not solved again and give the
 * favourites solved afresh; other inputs (a transfer time changed) are. */
static void test_sct_memo_solves_same_lp_once(void) {
    dp_error err;
    int32_t from[2] = {0, 0}, to[2] = {1, 2}, fresh[3], fav[3];
    double comm[2] = {10, 0.1}, op_s[3] = {1, 1, 1}, mk_fresh, mk;
    place_sct_memo *memo = place_sct_memo_new();
    CHECK(memo);
    CHECK(place_sct_favourites(3, 2, from, to, comm, op_s, 0.1, NULL, fresh, &mk_fresh, &err) == DP_STATUS_OK);
    for (int k = 0; k < 3; k++) {
        TEST_CASE("placement %d with the memo", k);
        CHECK(place_sct_favourites(3, 2, from, to, comm, op_s, 0.1, memo, fav, &mk, &err) == DP_STATUS_OK);
        CHECK_INT_EQ(place_sct_memo_solves(memo), 1);
        for (int i = 0; i < 3; i++) CHECK_INT_EQ(fav[i], fresh[i]);
        CHECK(mk == mk_fresh);
    }
    TEST_CASE("another transfer time");
    comm[1] = 1000; /* now the other child is the favourite */
    CHECK(place_sct_favourites(3, 2, from, to, comm, op_s, 0.1, memo, fav, &mk, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(place_sct_memo_solves(memo), 2);
    CHECK_INT_EQ(fav[0], 2);
    place_sct_memo_free(memo);
}

/* The memory retry's placements of m-SCT (smaller memory fractions, then the
 * backward pass reserved) make one LP per rule set: with one memo, each rule
 * set's LP is solved once, and every placement is the one m-SCT makes
 * without a memo. */
static void test_sct_memory_retry_solves_lp_once(void) {
    torch_step t = torch_step_open();
    dp_devices_free(t.ds);
    t.ds = fixture_devices(4, 64000000, 1e10);
    int32_t fresh[512], p[512];
    CHECK(t.g->n_ops <= 512);
    dp_place_rules rules[] = {DP_PLACE_RULES_DATAFLOW, DP_PLACE_RULES_PAPER};
    place_sct_memo *memo = place_sct_memo_new();
    CHECK(memo);
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 8; k++) {
            dp_place_options o = dp_place_options_default();
            o.rules = rules[r];
            o.memory_backward = k >= 4;
            for (int j = 0; j < k % 4; j++) o.memory_fraction *= 0.8;
            TEST_CASE("rules %s, memory fraction %.3f, memory_backward %d", dp_place_rules_name(o.rules),
                      o.memory_fraction, o.memory_backward);
            dp_error err;
            place(DP_PLACE_METHOD_M_SCT, t.g, t.ds, &o, fresh);
            CHECK_INT_EQ(place_m_sct_memo(t.g, t.ds, &o, memo, p, &err), DP_STATUS_OK);
            CHECK_INT_EQ(place_sct_memo_solves(memo), r + 1);
            for (int32_t i = 0; i < t.g->n_ops; i++) CHECK_INT_EQ(p[i], fresh[i]);
        }
    place_sct_memo_free(memo);
    torch_step_close(&t);
}

/* Placing modules, the exported step on four GPUs of 64 MB (one GPU cannot
 * hold it) still splits over the GPUs: its modules form one chain, whose
 * fusion stops at Baechi's uniform cap, and each list placer's placement,
 * evaluated as the baselines are, is valid. */
static void test_list_placers_split_module_chain_too_big_for_one_gpu(void) {
    torch_step t = torch_step_open();
    dp_devices_free(t.ds);
    t.ds = fixture_devices(4, 64000000, 1e10);
    dp_place_options o = by_module();
    dp_error err;
    dp_sim *sim = dp_sim_init(t.g, t.ds, &err);
    CHECK(sim);
    int32_t p[512];
    dp_place_method lists[] = {DP_PLACE_METHOD_M_TOPO, DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_M_SCT};
    for (int k = 0; k < 3; k++) {
        dp_place_report rep;
        TEST_CASE("%s", dp_place_method_name(lists[k]));
        CHECK_INT_EQ(dp_place_evaluate(sim, t.g, t.ds, lists[k], &o, p, &rep, &err), DP_STATUS_OK);
        CHECK(rep.status == DP_STATUS_OK && rep.sim.valid && rep.n_used > 1);
    }
    dp_sim_free(sim);
    torch_step_close(&t);
}

/* A chain of 1-second ops passing 1 MB tensors over 1 MB/s links: moving
 * costs more than it gains, so m-ETF keeps the chain on one GPU. */
static void test_etf_chain(void) {
    dp_graph *g = dp_graph_init("chain");
    int32_t prev = -1;
    for (int i = 0; i < 6; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "c%d", i);
        prev = add(g, nm, NULL, 1.0, 1000000, 0, &prev, i ? 1 : 0);
    }
    fixture_finalize(g);
    dp_devices *ds = fixture_devices(3, 1 << 30, 1e6);
    int32_t p[8];
    place(DP_PLACE_METHOD_M_ETF, g, ds, NULL, p);
    CHECK_INT_EQ(devices_used(g, p), 1);
    CHECK(p[0] != CPU);
    dp_sim_result r = fixture_simulate(g, ds, p);
    CHECK(r.valid);
    CHECK_NEAR(r.step_time_s, 6.0, 1e-9);
    CHECK_INT_EQ(r.n_transfers, 0);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Eight ops of 300 parameter bytes in a chain on GPUs of 1000 bytes: no GPU
 * holds the model (2400 bytes), two do. */
static dp_graph *large_chain(void) {
    dp_graph *g = dp_graph_init("large");
    int32_t prev = -1;
    for (int i = 0; i < 8; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "l%d", i);
        prev = add(g, nm, NULL, 1.0, 10, 300, &prev, i ? 1 : 0);
    }
    fixture_finalize(g);
    return g;
}

/* gpu puts the large chain on one GPU: out of memory. */
static void test_gpu_out_of_memory_on_large_model(void) {
    dp_graph *g = large_chain();
    dp_devices *ds = fixture_devices(4, 1000, 1e9);
    int32_t p[8];
    place(DP_PLACE_METHOD_GPU, g, ds, NULL, p);
    dp_sim_result r = fixture_simulate(g, ds, p);
    CHECK(!r.valid);
    CHECK_INT_EQ(r.verdict, DP_SIM_VERDICT_OOM);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* m-topo, m-etf and m-sct spread the large chain within 0.9 of each GPU's
 * memory and fit. */
static void test_list_placers_fit_large_model(void) {
    dp_graph *g = large_chain();
    dp_devices *ds = fixture_devices(4, 1000, 1e9);
    int32_t p[8];
    dp_place_method spread[] = {DP_PLACE_METHOD_M_TOPO, DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_M_SCT};
    dp_place_options none = dp_place_options_default();
    none.group = DP_PLACE_GROUP_NONE; /* co-placed (--group colocation), the chain is one unit */
    for (int k = 0; k < 3; k++) {
        TEST_CASE("%s", dp_place_method_name(spread[k]));
        place(spread[k], g, ds, &none, p);
        dp_sim_result r = fixture_simulate(g, ds, p);
        if (!r.valid) fprintf(stderr, "%s: %s\n", dp_place_method_name(spread[k]), r.reason);
        CHECK(r.valid);
        CHECK(devices_used(g, p) >= 3); /* 0.9 x 1000 holds at most two ops */
        for (int32_t d = G0; d < ds->n_devices; d++) CHECK(r.device[d].peak_bytes <= 900);
    }
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* m-topo fills the GPUs in order: contiguous runs of the chain. */
static void test_m_topo_fills_gpus_in_order(void) {
    dp_graph *g = large_chain();
    dp_devices *ds = fixture_devices(4, 1000, 1e9);
    int32_t p[8];
    dp_place_options none = dp_place_options_default();
    none.group = DP_PLACE_GROUP_NONE;
    place(DP_PLACE_METHOD_M_TOPO, g, ds, &none, p);
    for (int i = 1; i < 8; i++) CHECK(p[i] >= p[i - 1]);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A graph with colocation groups that mix a CPU-only op with free ops and
 * groups spread over the graph; every placer keeps both. */
static dp_graph *constrained_graph(void) {
    dp_graph *g = dp_graph_init("constrained");
    int32_t in = add(g, "input", "in", 0.001, 4000, 0, NULL, 0);
    g->ops[in].device = (dp_devcon){DP_DEVCON_CPU, -1};
    int32_t prev = add(g, "input/read", "in", 0.001, 4000, 0, &in, 1);
    int32_t vars[4];
    for (int l = 0; l < 4; l++) {
        char nm[32], co[16];
        snprintf(co, sizeof co, "var%d", l);
        snprintf(nm, sizeof nm, "var%d", l);
        vars[l] = add(g, nm, co, 0.0001, 40000, 40000, NULL, 0);
        snprintf(nm, sizeof nm, "fw%d", l);
        int32_t x[2] = {prev, vars[l]};
        prev = add(g, nm, NULL, 0.5, 4000, 0, x, 2);
    }
    for (int l = 3; l >= 0; l--) {
        char nm[32], co[16];
        snprintf(nm, sizeof nm, "bw%d", l);
        int32_t x[2] = {prev, vars[l]};
        prev = add(g, nm, NULL, 0.5, 4000, 0, x, 2);
        snprintf(nm, sizeof nm, "update%d", l);
        snprintf(co, sizeof co, "var%d", l);
        int32_t y[2] = {vars[l], prev};
        add(g, nm, co, 0.01, 0, 0, y, 2);
    }
    int32_t s = add(g, "summary", NULL, 0.001, 8, 0, &prev, 1);
    g->ops[s].device = (dp_devcon){DP_DEVCON_CPU, 0};
    int32_t pinned = add(g, "on_gpu1", NULL, 0.001, 8, 0, &prev, 1);
    g->ops[pinned].device = (dp_devcon){DP_DEVCON_GPU, 1};
    int32_t any = add(g, "any_gpu", NULL, 0.001, 8, 0, &prev, 1);
    g->ops[any].device = (dp_devcon){DP_DEVCON_GPU, -1};
    fixture_finalize(g);
    return g;
}

/* Every placer keeps the constraints and colocation groups of
 * constrained_graph, on TensorFlow's groups and co-placed; the expert,
 * given none, says so. */
static void test_every_placer_keeps_constraints(void) {
    dp_graph *g = constrained_graph();
    dp_devices *ds = fixture_devices(3, 1 << 30, 1e9);
    int32_t p[64];
    /* on TensorFlow's groups (the default) and on co-placed units */
    dp_place_options coplace = dp_place_options_default();
    coplace.group = DP_GROUP_METHOD_COLOCATION;
    const dp_place_options *opts[2] = {NULL, &coplace};
    for (int o = 0; o < 2; o++)
        for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
            TEST_CASE("%s, %s", dp_place_method_name((dp_place_method)m), o ? "co-placed" : "TensorFlow's groups");
            dp_error err;
            dp_status st = dp_place_run((dp_place_method)m, g, ds, opts[o], p, &err);
            if (m == DP_PLACE_METHOD_EXPERT) { /* the options give none */
                CHECK_INT_EQ(st, DP_STATUS_UNSUPPORTED);
                CHECK_STR_CONTAINS(err.msg, "no expert placement given");
                continue;
            }
            if (m >= DP_PLACE_METHOD_ACCEL_BALANCED) { /* no module scopes */
                CHECK_INT_EQ(st, DP_STATUS_UNSUPPORTED);
                CHECK_STR_CONTAINS(err.msg, "needs module scopes");
                continue;
            }
            if (st) fprintf(stderr, "%s: %s\n", dp_place_method_name((dp_place_method)m), err.msg);
            CHECK_INT_EQ(st, DP_STATUS_OK);
            check_constraints(g, ds, p, dp_place_method_name((dp_place_method)m));
            dp_sim_result r = fixture_simulate(g, ds, p);
            CHECK(r.verdict != DP_SIM_VERDICT_CONSTRAINT && r.verdict != DP_SIM_VERDICT_COLOCATION);
        }
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* "on_gpu1" needs a second GPU: METIS on a one-GPU set refuses
 * constrained_graph, naming the op. */
static void test_metis_missing_device_refused(void) {
    dp_graph *g = constrained_graph();
    dp_error err;
    dp_devices *one = fixture_devices(1, 1 << 30, 1e9);
    int32_t p[64];
    CHECK_INT_EQ(dp_place_run(DP_PLACE_METHOD_METIS, g, one, NULL, p, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "on_gpu1");
    dp_devices_free(one);
    dp_graph_free(g);
}

/* a -> b -> c, one second each. */
static dp_graph *small_chain(void) {
    dp_graph *g = dp_graph_init("small");
    int32_t a = add(g, "a", NULL, 1, 10, 0, NULL, 0);
    int32_t b = add(g, "b", NULL, 1, 10, 0, &a, 1);
    add(g, "c", NULL, 1, 10, 0, &b, 1);
    fixture_finalize(g);
    return g;
}

/* METIS 5.1 dies on one part: with one GPU, METIS and mincut put every op
 * on it. */
static void test_partitioners_on_one_gpu(void) {
    dp_graph *g = small_chain();
    dp_devices *one = fixture_devices(1, 1 << 30, 1e9);
    int32_t p[64];
    place(DP_PLACE_METHOD_METIS, g, one, NULL, p);
    for (int i = 0; i < 3; i++) CHECK_INT_EQ(p[i], G0);
    place(DP_PLACE_METHOD_MINCUT, g, one, NULL, p);
    for (int i = 0; i < 3; i++) CHECK_INT_EQ(p[i], G0);
    dp_devices_free(one);
    dp_graph_free(g);
}

/* More parts than vertices: each vertex its own part, no METIS call. */
static void test_metis_more_parts_than_vertices(void) {
    dp_graph *g = small_chain();
    dp_devices *two = fixture_devices(2, 1 << 30, 1e9);
    int32_t p[64];
    place(DP_PLACE_METHOD_METIS, g, two, NULL, p);
    check_constraints(g, two, p, "metis 3 ops on 2 GPUs");
    dp_devices_free(two);
    dp_graph_free(g);
}

/* The chain's weighted graph, each op a vertex. */
static void small_wgraph(const dp_graph *g, place_wgraph *w) {
    dp_error err;
    int32_t vertex_of[3] = {0, 1, 2};
    double ow[3] = {1, 2, 3};
    CHECK(place_wgraph_build(w, g, vertex_of, 3, ow, &err) == DP_STATUS_OK);
}

/* The internal METIS call: the chain's 4 arcs; 1 part puts every vertex in
 * it; 5 parts of 3 vertices, each in its own. */
static void test_metis_part_counts(void) {
    dp_graph *g = small_chain();
    place_wgraph w;
    small_wgraph(g, &w);
    dp_error err;
    int32_t part[3] = {-1, -1, -1};
    CHECK_INT_EQ(w.n_arcs, 4);
    CHECK(place_metis_part(&w, 1, NULL, 1, part, &err) == DP_STATUS_OK);
    for (int i = 0; i < 3; i++) CHECK_INT_EQ(part[i], 0);
    CHECK(place_metis_part(&w, 5, NULL, 1, part, &err) == DP_STATUS_OK);
    CHECK(part[0] != part[1] && part[1] != part[2] && part[0] != part[2]);
    place_wgraph_free(&w);
    dp_graph_free(g);
}

/* A part whose share rounds to 0 (a device far slower than the others)
 * made METIS print "Input Error" to stdout and fail; now it partitions. */
static void test_metis_part_skewed_shares(void) {
    dp_graph *g = small_chain();
    place_wgraph w;
    small_wgraph(g, &w);
    dp_error err;
    int32_t part[3] = {-1, -1, -1};
    double skew[2] = {1.0, 0.0}, skew2[2] = {1e300, 1e-300};
    CHECK_INT_EQ(place_metis_part(&w, 2, skew, 1, part, &err), DP_STATUS_OK);
    for (int i = 0; i < 3; i++) CHECK(part[i] >= 0 && part[i] < 2);
    CHECK_INT_EQ(place_metis_part(&w, 2, skew2, 1, part, &err), DP_STATUS_OK);
    place_wgraph_free(&w);
    dp_graph_free(g);
}

/* Scotch's mapping onto one part puts every vertex in it. */
static void test_scotch_map_one_part(void) {
    dp_graph *g = small_chain();
    place_wgraph w;
    small_wgraph(g, &w);
    dp_error err;
    int32_t part[3] = {-1, -1, -1};
    CHECK(place_scotch_map(&w, 1, NULL, NULL, 1, part, &err) == DP_STATUS_OK);
    for (int i = 0; i < 3; i++) CHECK_INT_EQ(part[i], 0);
    place_wgraph_free(&w);
    dp_graph_free(g);
}

/* The contracted graph merges parallel edges and both directions. */
static void test_wgraph_merges_edges(void) {
    dp_graph *g = dp_graph_init("merge");
    int32_t a = add(g, "a", "ab", 1, 100, 0, NULL, 0);
    int32_t b = add(g, "b", "ab", 2, 50, 0, &a, 1);
    int32_t ab[2] = {a, b};
    int32_t c = add(g, "c", NULL, 4, 7, 0, ab, 2);
    int32_t ca[2] = {c, a};
    add(g, "d", NULL, 8, 1, 0, ca, 2);
    fixture_finalize(g);
    dp_error err;
    dp_units u;
    CHECK(dp_units_init(&u, g, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(u.n_units, 3);
    CHECK_INT_EQ(u.unit_of[a], u.unit_of[b]);
    double ow[4] = {1, 2, 4, 8};
    place_wgraph w;
    CHECK(place_wgraph_build(&w, g, u.unit_of, u.n_units, ow, &err) == DP_STATUS_OK);
    /* units: {a,b} - c (100 + 50 bytes), {a,b} - d (100), c - d (7) */
    CHECK_INT_EQ(w.n_arcs, 6);
    CHECK_NEAR(w.vw[u.unit_of[a]], 3, 1e-12);
    for (int32_t v = 0; v < w.n; v++)
        for (int64_t x = w.at[v]; x < w.at[v + 1]; x++) {
            int32_t o = w.adj[x];
            int32_t lo = v < o ? v : o, hi = v < o ? o : v;
            double want = (lo == u.unit_of[a] && hi == u.unit_of[c]) ? 150 : (lo == u.unit_of[a]) ? 100 : 7;
            CHECK_NEAR(w.bytes[x], want, 1e-12);
        }
    place_wgraph_free(&w);
    dp_units_free(&u);
    dp_graph_free(g);
}

/* Runs every placer; each either places (constraints kept, the placement
 * simulates) or says why not with DP_STATUS_UNSUPPORTED. Returns how many
 * placed. */
static int every_placer_small(const dp_graph *g, const dp_devices *ds) {
    int32_t p[64];
    int placed = 0;
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        TEST_CASE("%s, %s", g->name, dp_place_method_name((dp_place_method)m));
        dp_error err;
        dp_status st = dp_place_run((dp_place_method)m, g, ds, NULL, p, &err);
        if (st) {
            if (st != DP_STATUS_UNSUPPORTED) fprintf(stderr, "%s: %s\n", dp_place_method_name(m), err.msg);
            CHECK_INT_EQ(st, DP_STATUS_UNSUPPORTED);
            CHECK(err.msg[0]);
            continue;
        }
        check_constraints(g, ds, p, dp_place_method_name((dp_place_method)m));
        dp_sim_result r = fixture_simulate(g, ds, p);
        CHECK(r.step_time_s >= 0);
        placed++;
    }
    return placed;
}

/* One op: every placer but the expert places it. */
static void test_one_op(void) {
    dp_devices *ds = fixture_devices(2, 1 << 30, 1e9);
    dp_graph *g = dp_graph_init("one");
    add(g, "only", NULL, 1, 8, 0, NULL, 0);
    fixture_finalize(g);
    int placed = every_placer_small(g, ds);
    test_case_[0] = '\0';
    CHECK_INT_EQ(placed, DP_PLACE_METHOD_COUNT - 3); /* all but expert and the accel placers (no modules) */
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Only CPU-only ops (the GPU partitioners get an empty graph): every
 * placer but the expert places them. */
static void test_cpu_only_ops(void) {
    dp_devices *ds = fixture_devices(2, 1 << 30, 1e9);
    dp_graph *g = dp_graph_init("cpu-only");
    int32_t a = add(g, "a", NULL, 1, 8, 0, NULL, 0);
    int32_t b = add(g, "b", NULL, 1, 8, 0, &a, 1);
    g->ops[a].device = g->ops[b].device = (dp_devcon){DP_DEVCON_CPU, -1};
    fixture_finalize(g);
    int placed = every_placer_small(g, ds);
    test_case_[0] = '\0';
    CHECK_INT_EQ(placed, DP_PLACE_METHOD_COUNT - 3);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Two GPUs of different speeds and two streams each, no CPU, and a fan of
 * 12 matmuls from one source. */
static void fast_slow_gpus(dp_devices **dsp, dp_graph **gp) {
    dp_error err;
    dp_devices *ds = dp_devices_init("gpus");
    dp_device fast = {"gpu:0", DP_DEVKIND_GPU, "fast", 4e12, 1e11, 1 << 30, 0, 2, 0, "", 0, {{0, 0}}, {0, 0, 0}, 0, 0};
    dp_device slow = {"gpu:1", DP_DEVKIND_GPU, "slow", 1e12, 1e11, 1 << 30, 0, 2, 0, "", 0, {{0, 0}}, {0, 0, 0}, 0, 0};
    CHECK(dp_devices_add(ds, &fast, &err) == DP_STATUS_OK && dp_devices_add(ds, &slow, &err) == DP_STATUS_OK);
    CHECK(dp_devices_add_link(ds, "gpu:0", "gpu:1", 1e10, 1e-5, 1, &err) == DP_STATUS_OK);
    CHECK(dp_devices_finalize(ds, "gpus", &err) == DP_STATUS_OK);
    dp_graph *g = dp_graph_init("fan");
    int32_t src = dp_graph_add_op(g, "src", "Const", NULL, NULL, &err);
    CHECK(dp_graph_add_output_bytes(g, src, 1000, &err) == DP_STATUS_OK);
    for (int i = 0; i < 12; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "mm%d", i);
        int32_t id = dp_graph_add_op(g, nm, "MatMul", NULL, NULL, &err);
        CHECK(dp_graph_add_input(g, id, src, 0, &err) == DP_STATUS_OK);
        CHECK(dp_graph_add_output_bytes(g, id, 1000, &err) == DP_STATUS_OK);
        g->ops[id].flops = 1e10;
    }
    fixture_finalize(g);
    *dsp = ds, *gp = g;
}

/* GPUs without a CPU: every placer but the CPU's and the expert places. */
static void test_gpus_without_a_cpu(void) {
    dp_devices *ds;
    dp_graph *g;
    fast_slow_gpus(&ds, &g);
    int placed = every_placer_small(g, ds);
    test_case_[0] = '\0';
    CHECK_INT_EQ(placed, DP_PLACE_METHOD_COUNT - 4); /* no CPU, no expert, no modules */
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The partitioners and m-etf give the fast GPU more of the work. */
static void test_fast_gpu_gets_more_work(void) {
    dp_devices *ds;
    dp_graph *g;
    fast_slow_gpus(&ds, &g);
    dp_place_method m_fast[] = {DP_PLACE_METHOD_METIS, DP_PLACE_METHOD_MINCUT, DP_PLACE_METHOD_M_ETF};
    for (int k = 0; k < 3; k++) {
        TEST_CASE("%s", dp_place_method_name(m_fast[k]));
        int32_t p[16], on_fast = 0;
        place(m_fast[k], g, ds, NULL, p);
        for (int32_t i = 1; i < g->n_ops; i++) on_fast += p[i] == 0;
        if (on_fast < 7) fprintf(stderr, "%s: %d of 12 on the fast GPU\n", dp_place_method_name(m_fast[k]), on_fast);
        CHECK(on_fast >= 7);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Same seed, same placement, for every placer (but the expert, and m-sct
 * whose LP is too large for synthetic-3000). */
static void test_same_seed_same_placement(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("synthetic-3000", 0, &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    int32_t *p1 = malloc((size_t)g->n_ops * sizeof(int32_t)), *p2 = malloc((size_t)g->n_ops * sizeof(int32_t));
    CHECK(p1 && p2);
    dp_place_options opt = dp_place_options_default();
    opt.seed = 7;
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        if (m == DP_PLACE_METHOD_EXPERT || m == DP_PLACE_METHOD_M_SCT) continue; /* m-sct: LP too large */
        if (m >= DP_PLACE_METHOD_ACCEL_BALANCED) continue;                        /* no modules */
        TEST_CASE("%s", dp_place_method_name((dp_place_method)m));
        place((dp_place_method)m, g, ds, &opt, p1);
        place((dp_place_method)m, g, ds, &opt, p2);
        CHECK(memcmp(p1, p2, (size_t)g->n_ops * sizeof(int32_t)) == 0);
    }
    free(p1);
    free(p2);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Evaluates list placer m on g and ds with rule set `rules`: the report,
 * and the placement in p, whose simulation the report's step time is. */
static dp_place_report evaluate_rules(const dp_graph *g, const dp_devices *ds, dp_place_method m,
                                      dp_place_rules rules, int32_t *p) {
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    dp_place_options o = dp_place_options_default();
    o.rules = rules;
    dp_place_report rep;
    CHECK_INT_EQ(dp_place_evaluate(sim, g, ds, m, &o, p, &rep, &err), DP_STATUS_OK);
    CHECK_INT_EQ(rep.status, DP_STATUS_OK);
    dp_sim_free(sim);
    CHECK(fixture_simulate(g, ds, p).step_time_s == rep.sim.step_time_s);
    return rep;
}

/* With rules BEST the evaluated list placer keeps the faster of its two
 * placements and says which: on the exported CNN dplace's rules (PAPER's
 * m-ETF spreads the batch norms, and the activations with them), on the
 * zoo's RNNLM on two K40s Baechi's as published. */
static void test_evaluate_keeps_faster_rule_set(void) {
    torch_step t = torch_step_open();
    dp_error err;
    dp_graph *rnnlm = dp_zoo_build("rnnlm", 0, &err);
    dp_devices *k40 = dp_devices_preset("k40x2", &err);
    CHECK(rnnlm && k40);
    struct {
        const char *what;
        const dp_graph *g;
        const dp_devices *ds;
        dp_place_rules faster;
    } cases[] = {{"exported CNN", t.g, t.ds, DP_PLACE_RULES_DATAFLOW},
                 {"rnnlm on k40x2", rnnlm, k40, DP_PLACE_RULES_PAPER}};
    int32_t *p = malloc((size_t)rnnlm->n_ops * sizeof(int32_t) + 512 * sizeof(int32_t));
    CHECK(p);
    for (int k = 0; k < 2; k++) {
        dp_place_report df = evaluate_rules(cases[k].g, cases[k].ds, DP_PLACE_METHOD_M_ETF, DP_PLACE_RULES_DATAFLOW, p);
        dp_place_report pa = evaluate_rules(cases[k].g, cases[k].ds, DP_PLACE_METHOD_M_ETF, DP_PLACE_RULES_PAPER, p);
        dp_place_report best = evaluate_rules(cases[k].g, cases[k].ds, DP_PLACE_METHOD_M_ETF, DP_PLACE_RULES_BEST, p);
        TEST_CASE("m-etf on the %s: dataflow %.6f s, paper %.6f s, best %.6f s (%s)", cases[k].what,
                  df.sim.step_time_s, pa.sim.step_time_s, best.sim.step_time_s, dp_place_rules_name(best.rules));
        CHECK(df.sim.valid && pa.sim.valid && best.sim.valid);
        CHECK_INT_EQ(df.rules, DP_PLACE_RULES_DATAFLOW);
        CHECK_INT_EQ(pa.rules, DP_PLACE_RULES_PAPER);
        const dp_place_report *faster = cases[k].faster == DP_PLACE_RULES_PAPER ? &pa : &df;
        const dp_place_report *slower = faster == &pa ? &df : &pa;
        CHECK(faster->sim.step_time_s < slower->sim.step_time_s * (1 - 1e-3));
        CHECK_INT_EQ(best.rules, cases[k].faster);
        CHECK(best.sim.step_time_s == faster->sim.step_time_s);
    }
    free(p);
    dp_devices_free(k40);
    dp_graph_free(rnnlm);
    torch_step_close(&t);
}

/* Every method evaluated at once on two threads, each rule set of a list
 * placer a task of its own, gives each method's placement and report as
 * dp_place_evaluate gives them alone (the placer's time aside). */
static void test_evaluate_all_matches_evaluate(void) {
    torch_step t = torch_step_open();
    dp_devices_free(t.ds);
    t.ds = fixture_devices(4, 64000000, 1e10);
    dp_error err;
    dp_sim *sim = dp_sim_init(t.g, t.ds, &err);
    CHECK(sim);
    dp_place_method all[DP_PLACE_METHOD_COUNT];
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) all[m] = (dp_place_method)m;
    int32_t n = t.g->n_ops, *ps = malloc(sizeof(int32_t) * (size_t)n * DP_PLACE_METHOD_COUNT), p[512];
    dp_place_report reps[DP_PLACE_METHOD_COUNT], rep;
    CHECK(ps && n <= 512);
    CHECK_INT_EQ(dp_place_evaluate_all(sim, t.g, t.ds, all, DP_PLACE_METHOD_COUNT, NULL, 2, ps, reps, &err),
                 DP_STATUS_OK);
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_place_method_name(all[m]));
        CHECK_INT_EQ(dp_place_evaluate(sim, t.g, t.ds, all[m], NULL, p, &rep, &err), DP_STATUS_OK);
        CHECK(reps[m].method == all[m] && reps[m].sim.link == NULL);
        CHECK_INT_EQ(reps[m].status, rep.status);
        CHECK_INT_EQ(reps[m].rules, rep.rules);
        CHECK_INT_EQ(reps[m].n_used, rep.n_used);
        if (rep.status) continue;
        CHECK(reps[m].sim.step_time_s == rep.sim.step_time_s);
        CHECK_INT_EQ(reps[m].sim.verdict, rep.sim.verdict);
        CHECK(!memcmp(ps + (size_t)m * (size_t)n, p, sizeof(int32_t) * (size_t)n));
    }
    free(ps);
    dp_sim_free(sim);
    torch_step_close(&t);
}

/* The memory retry's last resort: m-ETF with dplace's rules places NMT-8
 * on eight K40s out of memory at every memory fraction the retry tries
 * (its forward-only count misses the backward pass's memory, most of it
 * on one GPU); counting each unit's backward ops whole, evaluated as the
 * baselines are, it is valid. Placed directly with memory_backward it
 * spreads the step: the busiest GPU's peak falls. */
static void test_etf_counts_backward_pass_when_retry_fails(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("nmt8", 0, &err);
    dp_devices *ds = dp_devices_preset("k40x8", &err);
    CHECK(g && ds);
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    CHECK(p);
    dp_place_options o = dp_place_options_default();
    o.rules = DP_PLACE_RULES_DATAFLOW;
    double peak[2] = {0, 0};
    for (int back = 0; back < 2; back++) {
        o.memory_backward = back;
        place(DP_PLACE_METHOD_M_ETF, g, ds, &o, p);
        dp_sim_result r = fixture_simulate(g, ds, p);
        for (int32_t d = 0; d < r.n_devices; d++)
            if ((double)r.device[d].peak_bytes > peak[back]) peak[back] = (double)r.device[d].peak_bytes;
        TEST_CASE("m-etf placed with memory_backward %d: %s, largest peak %.2f GiB", back,
                  dp_sim_verdict_name(r.verdict), peak[back] / (1 << 30));
        CHECK(back || r.verdict == DP_SIM_VERDICT_OOM);
    }
    CHECK(peak[1] < peak[0]);
    dp_place_report rep = evaluate_rules(g, ds, DP_PLACE_METHOD_M_ETF, DP_PLACE_RULES_DATAFLOW, p);
    TEST_CASE("m-etf evaluated: %.4f s, %s", rep.sim.step_time_s, dp_sim_verdict_name(rep.sim.verdict));
    CHECK(rep.sim.valid);
    free(p);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* The rule sets' names round-trip; an unknown one is refused. Every
 * method but the list placers reports BEST (no rule set applies). */
static void test_rules_names_round_trip(void) {
    for (int r = DP_PLACE_RULES_BEST; r <= DP_PLACE_RULES_PAPER; r++) {
        TEST_CASE("%s", dp_place_rules_name((dp_place_rules)r));
        dp_place_rules back;
        CHECK(dp_place_rules_from_name(dp_place_rules_name((dp_place_rules)r), &back) == 0);
        CHECK_INT_EQ(back, r);
    }
    test_case_[0] = '\0';
    dp_place_rules back;
    CHECK(dp_place_rules_from_name("baechi", &back) == -1);
    CHECK(!strcmp(dp_place_rules_name((dp_place_rules)7), "?"));
    torch_step t = torch_step_open();
    int32_t p[512];
    dp_place_report rep = evaluate_rules(t.g, t.ds, DP_PLACE_METHOD_METIS, DP_PLACE_RULES_PAPER, p);
    CHECK_INT_EQ(rep.rules, DP_PLACE_RULES_BEST);
    torch_step_close(&t);
}

/* The method names round-trip; an unknown one is refused. */
static void test_method_names_round_trip(void) {
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        TEST_CASE("%s", dp_place_method_name((dp_place_method)m));
        dp_place_method back;
        CHECK(dp_place_method_from_name(dp_place_method_name((dp_place_method)m), &back) == 0);
        CHECK_INT_EQ(back, m);
    }
    test_case_[0] = '\0';
    dp_place_method back;
    CHECK(dp_place_method_from_name("nope", &back) == -1);
}

/* Runs every placer on g and ds: each gives a placement that keeps the
 * constraints and simulates, or a reason. Prints one line per model. */
static void every_placer(const dp_graph *g, const dp_devices *ds, const char *what) {
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    if (!sim) fprintf(stderr, "%s: %s\n", what, err.msg);
    CHECK(sim);
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    CHECK(p);
    printf("  %-48s %6d ops:", what, g->n_ops);
    dp_place_options opt = dp_place_options_default();
    opt.expert = dp_zoo_expert_placement;
    /* both rule sets, each with its memory retry, but on the largest
     * graphs (m-sct's LP takes seconds each run there) dplace's alone */
    if (g->n_ops > 60000) opt.rules = DP_PLACE_RULES_DATAFLOW;
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        TEST_CASE("%s, %s", what, dp_place_method_name((dp_place_method)m));
        dp_place_report rep;
        dp_status st = dp_place_evaluate(sim, g, ds, (dp_place_method)m, &opt, p, &rep, &err);
        if (st) fprintf(stderr, "%s %s: %s\n", what, dp_place_method_name((dp_place_method)m), err.msg);
        CHECK_INT_EQ(st, DP_STATUS_OK);
        if (rep.status) {
            /* only the expert, m-sct over its LP size limit and the accel
             * placers on a graph without modules may be missing, with a
             * reason */
            int sct_big = m == DP_PLACE_METHOD_M_SCT && strstr(rep.reason, "over the limit");
            int no_modules = m >= DP_PLACE_METHOD_ACCEL_BALANCED && !dp_units_has_modules(g) &&
                             strstr(rep.reason, "needs module scopes");
            if (m != DP_PLACE_METHOD_EXPERT && !sct_big && !no_modules)
                fprintf(stderr, "%s %s: %s\n", what, rep.reason, rep.reason);
            CHECK(m == DP_PLACE_METHOD_EXPERT || sct_big || no_modules);
            CHECK(rep.reason[0]);
            printf(" %s -", dp_place_method_name((dp_place_method)m));
            continue;
        }
        if (m != DP_PLACE_METHOD_EXPERT) check_constraints(g, ds, p, dp_place_method_name((dp_place_method)m));
        CHECK(rep.sim.step_time_s > 0);
        printf(" %s %s", dp_place_method_name((dp_place_method)m),
               rep.sim.valid ? "ok" : dp_sim_verdict_name(rep.sim.verdict));
    }
    printf("\n");
    free(p);
    dp_sim_free(sim);
}

/* The device set a zoo model is measured on in the papers. */
static const char *paper_preset(const char *model) {
    if (!strcmp(model, "nmt4")) return "k40x4";
    if (!strcmp(model, "nmt8")) return "k40x8";
    if (!strcmp(model, "gnmt4") || !strcmp(model, "bert_base")) return "p100x4";
    return "k40x2";
}

/* Every placer on every zoo model, on its paper's device set: a placement
 * that keeps the constraints and simulates, or a reason. */
static void test_every_zoo_model(void) {
    for (const dp_zoo_entry *z = dp_zoo_list(); z->name; z++) {
        dp_error err;
        const char *name = strcmp(z->name, "synthetic") == 0 ? "synthetic-5000" : z->name;
        dp_graph *g = dp_zoo_build(name, 0, &err);
        if (!g && strstr(err.msg, "unknown model")) { /* listed, not built yet */
            printf("  %-48s skipped: %s\n", z->name, err.msg);
            continue;
        }
        if (!g) fprintf(stderr, "%s: %s\n", z->name, err.msg);
        CHECK(g);
        dp_devices *ds = dp_devices_preset(paper_preset(z->name), &err);
        CHECK(ds);
        char what[96];
        snprintf(what, sizeof what, "%s on %s", z->name, ds->name);
        every_placer(g, ds, what);
        dp_devices_free(ds);
        dp_graph_free(g);
    }
}

/* Every graph of the MSR dnn-partitioning dataset, on the machine its file
 * describes (the importer's device set). */
static void test_every_external_graph(void) {
    char root[1024];
    snprintf(root, sizeof root, "%s", test_dataset_dir("msr-dnn-partitioning"));
    const char *sub[] = {"latency-inputs/LayerGraphs", "latency-inputs/OperatorGraphs", "throughput-inputs/LayerGraphs",
                         "throughput-inputs/OperatorGraphs"};
    int seen = 0;
    for (size_t k = 0; k < sizeof sub / sizeof sub[0]; k++) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/%s", root, sub[k]);
        DIR *d = opendir(dir);
        if (!d) {
            fprintf(stderr, "cannot open %s (set DPLACE_SHARED to the shared folder)\n", dir);
            exit(1);
        }
        /* in name order, so the output is stable */
        char names[64][256];
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)) && n < 64)
            if (strstr(e->d_name, ".json")) snprintf(names[n++], sizeof names[0], "%.255s", e->d_name);
        closedir(d);
        qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
        for (int i = 0; i < n; i++) {
            char path[1536], what[400];
            snprintf(path, sizeof path, "%.1100s/%.255s", dir, names[i]);
            dp_error err;
            dp_import_msr *imp = dp_import_msr_read_file(path, NULL, &err);
            if (!imp) fprintf(stderr, "%s\n", err.msg);
            CHECK(imp);
            snprintf(what, sizeof what, "%.64s/%.255s", sub[k], names[i]);
            every_placer(imp->graph, imp->devices, what);
            dp_import_msr_free(imp);
            seen++;
        }
    }
    test_case_[0] = '\0';
    CHECK(seen >= 24);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_etf_two_branches);
    TEST_RUN(test_sct_two_branches);
    TEST_RUN(test_etf_two_branches_coplaced);
    TEST_RUN(test_gpu_two_branches);
    TEST_RUN(test_default_grouping_is_none);
    TEST_RUN(test_coplacement_rules);
    TEST_RUN(test_grouper_keep_unconstrained);
    TEST_RUN(test_units_of_grouping_none);
    TEST_RUN(test_units_of_metis_grouping);
    TEST_RUN(test_list_placers_keep_coplaced_units);
    TEST_RUN(test_group_names_round_trip);
    TEST_RUN(test_sct_favourites);
    TEST_RUN(test_forward_only_anchors);
    TEST_RUN(test_forward_only_units);
    TEST_RUN(test_forward_only_placers);
    TEST_RUN(test_every_op_placed_without_forward_only);
    TEST_RUN(test_etf_exported_cnn_not_slower_than_one_gpu);
    TEST_RUN(test_accel_sequential_fills_gpu0_then_splits);
    TEST_RUN(test_accel_sequential_fits_on_gpu0);
    TEST_RUN(test_accel_balanced_spreads_parameters);
    TEST_RUN(test_accel_zoo_unsupported);
    TEST_RUN(test_sct_exported_cnn_not_slower_than_one_gpu);
    TEST_RUN(test_topo_exported_cnn_fills_gpus_in_order);
    TEST_RUN(test_placers_keep_modules_whole);
    TEST_RUN(test_list_placers_modules_not_slower_than_one_gpu);
    TEST_RUN(test_list_placers_keep_module_chains_together);
    TEST_RUN(test_etf_branch_modules_not_slower_than_one_gpu);
    TEST_RUN(test_traced_step_has_no_modules);
    TEST_RUN(test_list_placers_traced_step_views_stay);
    TEST_RUN(test_list_placers_traced_step_near_one_gpu);
    TEST_RUN(test_sct_branch_modules_not_slower_than_one_gpu);
    TEST_RUN(test_list_placer_retried_out_of_memory);
    TEST_RUN(test_sct_memo_solves_same_lp_once);
    TEST_RUN(test_sct_memory_retry_solves_lp_once);
    TEST_RUN(test_list_placers_split_module_chain_too_big_for_one_gpu);
    TEST_RUN(test_etf_chain);
    TEST_RUN(test_gpu_out_of_memory_on_large_model);
    TEST_RUN(test_list_placers_fit_large_model);
    TEST_RUN(test_m_topo_fills_gpus_in_order);
    TEST_RUN(test_every_placer_keeps_constraints);
    TEST_RUN(test_metis_missing_device_refused);
    TEST_RUN(test_partitioners_on_one_gpu);
    TEST_RUN(test_metis_more_parts_than_vertices);
    TEST_RUN(test_metis_part_counts);
    TEST_RUN(test_metis_part_skewed_shares);
    TEST_RUN(test_scotch_map_one_part);
    TEST_RUN(test_wgraph_merges_edges);
    TEST_RUN(test_one_op);
    TEST_RUN(test_cpu_only_ops);
    TEST_RUN(test_gpus_without_a_cpu);
    TEST_RUN(test_fast_gpu_gets_more_work);
    TEST_RUN(test_same_seed_same_placement);
    TEST_RUN(test_method_names_round_trip);
    TEST_RUN(test_evaluate_keeps_faster_rule_set);
    TEST_RUN(test_evaluate_all_matches_evaluate);
    TEST_RUN(test_rules_names_round_trip);
    TEST_RUN(test_etf_counts_backward_pass_when_retry_fails);
    TEST_RUN(test_every_zoo_model);
    TEST_RUN_DATASETS(test_every_external_graph, "msr-dnn-partitioning");
    return test_end();
}
