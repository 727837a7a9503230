/* The reference placements (include/dplace/reference.h): every placer run
 * and simulated once, the fastest valid one, single GPU and the expert, in
 * the order asked. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/reference.h"
#include "dplace/zoo.h"
#include "test_fixtures.h"
#include "test_util.h"

typedef struct fixture {
    dp_graph *g;
    dp_devices *ds;
    dp_sim *sim;
} fixture;

static fixture open_fixture(const char *model, const char *devices) {
    fixture f;
    dp_error err;
    CHECK((f.g = dp_zoo_build(model, 0, &err)) != NULL);
    CHECK((f.ds = dp_devices_preset(devices, &err)) != NULL);
    CHECK((f.sim = dp_sim_init(f.g, f.ds, &err)) != NULL);
    return f;
}

static void close_fixture(fixture *f) {
    dp_sim_free(f->sim);
    dp_devices_free(f->ds);
    dp_graph_free(f->g);
}

/* Every placer in dp_place_method order, each report and placement as the
 * placer alone gives it (a list placer with the rule set its report
 * names); the best is the fastest valid one. */
static void test_every_placer(void) {
    fixture f = open_fixture("inception_v3", "k40x2");
    dp_reference_options o = dp_reference_options_default();
    o.place.expert = dp_zoo_expert_placement;
    dp_reference r;
    dp_error err;
    CHECK(dp_reference_compute(f.sim, f.g, f.ds, &o, &r, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(r.n, DP_PLACE_METHOD_COUNT);
    int32_t *p = malloc(sizeof(int32_t) * (size_t)f.g->n_ops);
    int32_t best = -1;
    for (int32_t k = 0; k < r.n; k++) {
        TEST_CASE("placer %s", dp_place_method_name((dp_place_method)k));
        CHECK(r.reports[k].method == (dp_place_method)k);
        CHECK(dp_reference_report(&r, (dp_place_method)k) == &r.reports[k]);
        if (r.reports[k].status) {
            CHECK(dp_reference_placement(&r, (dp_place_method)k) == NULL);
            continue;
        }
        dp_place_options po = o.place;
        if (r.reports[k].rules != DP_PLACE_RULES_BEST) po.rules = r.reports[k].rules;
        CHECK(dp_place_run((dp_place_method)k, f.g, f.ds, &po, p, &err) == DP_STATUS_OK);
        CHECK(!memcmp(p, dp_reference_placement(&r, (dp_place_method)k), sizeof(int32_t) * (size_t)f.g->n_ops));
        if (r.reports[k].sim.valid && (best < 0 || r.reports[k].sim.step_time_s < r.reports[best].sim.step_time_s))
            best = k;
    }
    TEST_CASE("inception_v3 on k40x2");
    CHECK_INT_EQ(r.best, best);
    CHECK(best >= 0 && r.best_s == r.reports[best].sim.step_time_s);
    CHECK(!strcmp(r.best_name, dp_place_method_name((dp_place_method)best)));
    CHECK(r.gpu_valid && r.gpu_s == r.reports[DP_PLACE_METHOD_GPU].sim.step_time_s);
    CHECK(r.expert_valid && r.expert_s == r.reports[DP_PLACE_METHOD_EXPERT].sim.step_time_s);
    dp_run_bound b;
    CHECK(dp_run_lower_bound(f.g, f.ds, f.sim, &b, &err) == DP_STATUS_OK);
    CHECK(r.bound.bound_s == b.bound_s && r.bound.bound_s > 0 && r.bound.bound_s <= r.best_s);
    free(p);
    dp_reference_free(&r);
    CHECK(r.reports == NULL && r.placements == NULL);
    close_fixture(&f);
}

/* The placers asked for, in the order asked; the others are not run. */
static void test_methods_in_order(void) {
    fixture f = open_fixture("synthetic-600", "k40x2");
    dp_place_method list[] = {DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_GPU};
    dp_reference_options o = dp_reference_options_default();
    o.methods = list, o.n_methods = 2, o.bound = 0;
    dp_reference r;
    dp_error err;
    CHECK(dp_reference_compute(f.sim, f.g, f.ds, &o, &r, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(r.n, 2);
    CHECK(r.reports[0].method == DP_PLACE_METHOD_M_ETF && r.reports[1].method == DP_PLACE_METHOD_GPU);
    CHECK(dp_reference_report(&r, DP_PLACE_METHOD_CPU) == NULL && dp_reference_placement(&r, DP_PLACE_METHOD_CPU) == NULL);
    CHECK(r.gpu_valid && !r.expert_valid && isnan(r.expert_s));
    CHECK(r.bound.bound_s == 0);
    dp_reference_free(&r);
    /* none at all: no placer, no best */
    o.n_methods = 0;
    CHECK(dp_reference_compute(f.sim, f.g, f.ds, &o, &r, &err) == DP_STATUS_OK);
    CHECK(r.n == 0 && r.best == -1 && isnan(r.best_s) && r.best_name == NULL && !r.gpu_valid);
    dp_reference_free(&r);
    close_fixture(&f);
}

/* An expert placement that is not there is a report's reason, not an
 * error. */
static void test_expert_missing(void) {
    fixture f = open_fixture("synthetic-600", "k40x2");
    dp_place_method list[] = {DP_PLACE_METHOD_EXPERT};
    dp_reference_options o = dp_reference_options_default();
    o.methods = list, o.n_methods = 1, o.bound = 0;
    dp_reference r;
    dp_error err;
    CHECK(dp_reference_compute(f.sim, f.g, f.ds, &o, &r, &err) == DP_STATUS_OK);
    CHECK(r.n == 1 && r.reports[0].status == DP_STATUS_UNSUPPORTED && r.best == -1 && !r.expert_valid);
    CHECK(strlen(r.reports[0].reason) > 0);
    dp_reference_free(&r);
    close_fixture(&f);
}

/* Lists of placer names: known names in order, none, and one bad name
 * named. */
static void test_parse_methods(void) {
    dp_place_method m[4];
    int32_t n;
    dp_error err;
    CHECK(dp_reference_parse_methods("gpu,m-etf,gpu", m, 4, &n, &err) == DP_STATUS_OK && n == 3);
    CHECK(m[0] == DP_PLACE_METHOD_GPU && m[1] == DP_PLACE_METHOD_M_ETF && m[2] == DP_PLACE_METHOD_GPU);
    CHECK(dp_reference_parse_methods("none", m, 4, &n, &err) == DP_STATUS_OK && n == 0);
    CHECK(dp_reference_parse_methods("gpu,nope", m, 4, &n, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "unknown method \"nope\"");
    CHECK(dp_reference_parse_methods("", m, 4, &n, &err) == DP_STATUS_INVALID);
    CHECK(dp_reference_parse_methods("cpu,cpu,cpu,cpu,cpu", m, 4, &n, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "more than 4");
}

/* Whether two reports say the same, their placer's wall time aside. */
static int same_report(const dp_place_report *a, const dp_place_report *b) {
    if (a->method != b->method || a->status != b->status || strcmp(a->reason, b->reason) || a->rules != b->rules ||
        a->n_used != b->n_used)
        return 0;
    const dp_sim_result *x = &a->sim, *y = &b->sim;
    if (a->status) return 1;
    if (x->step_time_s != y->step_time_s || x->valid != y->valid || x->verdict != y->verdict ||
        strcmp(x->reason, y->reason) || x->n_devices != y->n_devices || x->transfer_bytes != y->transfer_bytes ||
        x->n_transfers != y->n_transfers)
        return 0;
    for (int32_t d = 0; d < x->n_devices; d++)
        if (x->device[d].peak_bytes != y->device[d].peak_bytes || x->device[d].busy_s != y->device[d].busy_s ||
            x->device[d].n_ops != y->device[d].n_ops)
            return 0;
    return 1;
}

/* The references on several threads are those on one: every report (its
 * placer's time aside), every placement, the best, whatever the count. */
static void test_threads_same_references(void) {
    fixture f = open_fixture("inception_v3", "k40x2");
    dp_reference_options o = dp_reference_options_default();
    o.place.expert = dp_zoo_expert_placement;
    dp_reference one, many;
    dp_error err;
    CHECK(dp_reference_compute(f.sim, f.g, f.ds, &o, &one, &err) == DP_STATUS_OK);
    int32_t counts[] = {2, 3, 16};
    for (int c = 0; c < 3; c++) {
        o.threads = counts[c];
        CHECK(dp_reference_compute(f.sim, f.g, f.ds, &o, &many, &err) == DP_STATUS_OK);
        CHECK_INT_EQ(many.n, one.n);
        CHECK_INT_EQ(many.best, one.best);
        CHECK(many.best_s == one.best_s);
        for (int32_t k = 0; k < one.n; k++) {
            TEST_CASE("%d threads, placer %s", counts[c], dp_place_method_name(one.reports[k].method));
            CHECK(same_report(&many.reports[k], &one.reports[k]));
            if (one.reports[k].status) continue;
            CHECK(!memcmp(dp_reference_placement(&many, one.reports[k].method),
                          dp_reference_placement(&one, one.reports[k].method), sizeof(int32_t) * (size_t)f.g->n_ops));
        }
        dp_reference_free(&many);
    }
    dp_reference_free(&one);
    close_fixture(&f);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_every_placer);
    TEST_RUN(test_methods_in_order);
    TEST_RUN(test_expert_missing);
    TEST_RUN(test_parse_methods);
    TEST_RUN(test_threads_same_references);
    return test_end();
}
