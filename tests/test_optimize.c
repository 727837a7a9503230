/* The job layer (include/dplace/optimize.h): the options judged in one
 * place (dp_optimize_prepare), the job's answer after search-after, its
 * JSON summary and its curve over both phases; and the run driver's
 * curve shared by two runs. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "dplace/optimize.h"
#include "dplace/zoo.h"
#include "test_util.h"

static dp_optimize_options options(const char *agent) {
    dp_optimize_options o = dp_optimize_options_default();
    o.agent = agent;
    return o;
}

/* prepare's status for o, its message in msg. */
static dp_status prepare(const dp_optimize_options *o, dp_optimize_plan *p, char *msg, size_t size) {
    dp_error err;
    dp_error_clear(&err);
    dp_status st = dp_optimize_prepare(o, p, &err);
    snprintf(msg, size, "%s", st ? err.msg : "");
    return st;
}

/* No budget given: the papers' 1,000 updates for an agent, 2,000 for the
 * search; a time budget shares out with search-after. */
static void test_prepare_budgets(void) {
    dp_optimize_plan p;
    char msg[1100];
    dp_optimize_options o = options("hp");
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_OK);
    CHECK(p.max_updates == DP_OPTIMIZE_UPDATES_DEFAULT && p.train_s < 0 && p.after_s == 0 && !p.search);
    o = options("search");
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_OK);
    CHECK(p.max_updates == DP_OPTIMIZE_SEARCH_UPDATES_DEFAULT && p.search);
    o = options("dplace"); /* its preset searches after training */
    o.max_seconds = 240;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_OK);
    CHECK(p.after_s > 0 && p.max_updates < 0 && fabs(p.train_s + p.after_s - 240) < 1e-9);
    o.max_placements = 10;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_OK);
    CHECK(p.max_placements == 10 && p.max_updates < 0);
}

/* The elite walks need noiseless simulations: with noise they are turned
 * off, and the plan says so. */
static void test_prepare_walks_off_noted(void) {
    dp_optimize_plan p;
    char msg[1100];
    dp_optimize_options o = options("hp");
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_OK);
    CHECK(p.settings.agent.walks.moves > 0 && !p.notes[0]);
    o.eval.sim.noise_sigma = 0.1;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_OK);
    CHECK(p.settings.agent.walks.moves == 0);
    CHECK_STR_CONTAINS(p.notes, "elite walks off");
}

/* The measuring protocol's ranges are the simulator's, whoever asks. */
static void test_prepare_protocol_ranges(void) {
    dp_optimize_plan p;
    char msg[1100];
    dp_optimize_options o = options("hp");
    o.eval.sim.noise_sigma = 7;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "noise: a log-normal sigma in 0..5, not 7");
    o = options("hp");
    o.eval.sim.steps = 3, o.eval.sim.warmup = 3;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "warmup");
    o = options("hp");
    o.threads = 0;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "threads: in 1..256, not 0");
}

/* Settings by name in order, "_" for "-"; the search refuses a learned
 * agent's; an unknown agent names the agents there are. */
static void test_prepare_sets(void) {
    dp_optimize_plan p;
    char msg[1100];
    dp_optimize_set sets[] = {{"elite_moves", "0"}, {"batch", "3"}};
    dp_optimize_options o = options("hp");
    o.sets = sets, o.n_sets = 2;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_OK);
    CHECK(p.settings.agent.walks.moves == 0 && p.settings.agent.train.batch == 3);
    dp_optimize_set lr = {"lr", "0.1"};
    o = options("search");
    o.sets = &lr, o.n_sets = 1;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "setting lr is a learned agent's");
    o = options("nope");
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "agent \"nope\": no such agent");
    CHECK_STR_CONTAINS(msg, "search");
}

/* The rules across options, each refused with its own message. */
static void test_prepare_rules(void) {
    dp_optimize_plan p;
    char msg[1100];
    dp_optimize_options o = options("hp");
    o.max_updates = 3, o.max_placements = 4;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "one budget");
    o = options("search");
    o.max_updates = 0;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "at least one update");
    o = options("post");
    o.search_after_s = 10, o.eval.measure_cmd = "true";
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "search-after searches with the simulator");
    o = options("post");
    o.search_after_s = 10, o.max_seconds = 5;
    CHECK_INT_EQ(prepare(&o, &p, msg, sizeof msg), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(msg, "must be longer than search-after");
}

/* A learned agent, then the search after it: the job's best is the
 * search's, it simulates to its step time, and the JSON summary keeps the
 * training's own best apart; the curve shows both phases. */
static void test_best_after_search(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("rnnlm", 0, &err);
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    CHECK(g && ds);
    char svg[64];
    snprintf(svg, sizeof svg, "/tmp/dplace-test-optimize-%d.svg", (int)getpid());
    dp_optimize_set sets[] = {{"batch", "4"}};
    dp_optimize_options o = options("post");
    o.g = g, o.ds = ds, o.sets = sets, o.n_sets = 1;
    o.max_updates = 2, o.search_after_s = 1, o.baselines = "none", o.plot_path = svg;
    dp_optimize *op = dp_optimize_init(&o, &err);
    CHECK(op);
    CHECK_INT_EQ(dp_optimize_run(op, NULL, &err), DP_STATUS_OK);
    dp_optimize_best b;
    dp_optimize_get_best(op, &b);
    const dp_run_state *train = dp_optimize_state(op);
    CHECK(b.placement && !strcmp(b.phase, "search-after") && b.step_time_s <= train->best_s);
    dp_sim_result r;
    CHECK_INT_EQ(dp_sim_run(dp_optimize_sim(op), b.placement, NULL, &r, &err), DP_STATUS_OK);
    CHECK(r.valid && r.step_time_s == b.step_time_s);
    char *text = dp_optimize_json(op, 0, 17, &err);
    CHECK(text);
    json_t *j = json_loads(text, 0, NULL);
    CHECK(j);
    CHECK(json_real_value(json_object_get(j, "best_step_time_s")) == b.step_time_s);
    CHECK(json_real_value(json_object_get(j, "train_best_step_time_s")) == train->best_s);
    CHECK(!strcmp(json_string_value(json_object_get(j, "best_phase")), "search-after"));
    json_decref(j);
    free(text);
    size_t n = 0;
    char *pic = NULL;
    CHECK_INT_EQ(dp_read_file(svg, 1 << 24, &pic, &n, &err), DP_STATUS_OK);
    char *z = realloc(pic, n + 1);
    CHECK(z);
    z[n] = 0;
    char label[64];
    snprintf(label, sizeof label, "best %.6f s", b.step_time_s);
    CHECK_STR_CONTAINS(z, label);
    CHECK_STR_CONTAINS(z, "search after");
    free(z);
    remove(svg);
    dp_optimize_free(op);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* How long training's first step is made to take, whether it was, and
 * when training ended. */
typedef struct overrun_state {
    double busy_s;
    int done;
    double train_end_s;
} overrun_state;

/* Busy once, in training's first step, so that training runs past its
 * share of the time budget. */
static void overrun(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    (void)m, (void)s;
    overrun_state *o = user;
    if (phase != DP_OPTIMIZE_TRAIN || o->done) return;
    o->done = 1;
    test_busy(o->busy_s);
}

static void note_train_end(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    (void)m, (void)s;
    if (phase == DP_OPTIMIZE_TRAIN) ((overrun_state *)user)->train_end_s = dp_now_s();
}

/* Post on rnnlm at batch 4 (g, ds), no baselines: a job of short steps
 * for the time-budget tests. */
static dp_optimize_options small_post_job(dp_graph *g, dp_devices *ds) {
    static dp_optimize_set sets[] = {{"batch", "4"}};
    dp_optimize_options o = options("post");
    o.g = g, o.ds = ds, o.sets = sets, o.n_sets = 1, o.baselines = "none";
    return o;
}

/* A time budget holds the whole job: training that runs past its share
 * leaves search-after only the rest, and nothing when it took it all. How
 * much is left is judged from when training ended, so that a slow machine
 * (a sanitizer build beside other work) tests the rule as well. */
static void test_time_budget_holds_search_after(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("rnnlm", 0, &err);
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    CHECK(g && ds);
    /* training's share is 0.1 s of each budget; its first step takes at
     * least busy_s: 0.4 s of 3 leaves the search at most 2.6 of its 2.9,
     * 0.6 s of 0.45 leaves it nothing */
    double budgets[2] = {3.0, 0.45}, busy[2] = {0.4, 0.6};
    for (int k = 0; k < 2; k++) {
        TEST_CASE("budget %g s", budgets[k]);
        dp_optimize_options o = small_post_job(g, ds);
        o.max_seconds = budgets[k], o.search_after_s = budgets[k] - 0.1;
        overrun_state ov = {busy[k], 0, 0};
        dp_optimize_hooks h = {&ov, NULL, NULL, overrun, note_train_end};
        dp_optimize *op = dp_optimize_init(&o, &err);
        CHECK(op);
        double t0 = dp_now_s();
        CHECK_INT_EQ(dp_optimize_run(op, &h, &err), DP_STATUS_OK);
        dp_search *after = dp_optimize_search_after(op);
        CHECK(ov.done && ov.train_end_s > t0);
        double left = budgets[k] - (ov.train_end_s - t0); /* at most: the run began before t0 */
        if (left < -0.05) CHECK(!after);
        if (left > 0.5) CHECK(after); /* the search's set-up fits in what is left */
        if (after) {
            double searched = dp_search_get_state(after)->elapsed_s;
            CHECK(searched < o.search_after_s - 0.2);
        }
        dp_optimize_free(op);
    }
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A time budget is the job's: training that stops short of its share (here
 * after one update) leaves search-after the rest of the budget, more than
 * its own seconds. Judged from when training ended, as above. */
static void test_time_budget_gives_search_after_the_rest(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("rnnlm", 0, &err);
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    CHECK(g && ds);
    dp_optimize_options o = small_post_job(g, ds);
    o.max_updates = 1, o.max_seconds = 3.0, o.search_after_s = 1.0;
    overrun_state ov = {0}; /* no busy step: only the end is noted */
    dp_optimize_hooks h = {&ov, NULL, NULL, NULL, note_train_end};
    dp_optimize *op = dp_optimize_init(&o, &err);
    CHECK(op);
    double t0 = dp_now_s();
    CHECK_INT_EQ(dp_optimize_run(op, &h, &err), DP_STATUS_OK);
    dp_search *after = dp_optimize_search_after(op);
    double left = o.max_seconds - (ov.train_end_s - t0);
    CHECK(after);
    if (after && left > o.search_after_s + 0.6) CHECK(dp_search_get_state(after)->elapsed_s > o.search_after_s + 0.1);
    CHECK(dp_now_s() - t0 < o.max_seconds + 1.0);
    dp_optimize_free(op);
    dp_devices_free(ds);
    dp_graph_free(g);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_prepare_budgets);
    TEST_RUN(test_prepare_walks_off_noted);
    TEST_RUN(test_prepare_protocol_ranges);
    TEST_RUN(test_prepare_sets);
    TEST_RUN(test_prepare_rules);
    TEST_RUN(test_best_after_search);
    TEST_RUN(test_time_budget_holds_search_after);
    TEST_RUN(test_time_budget_gives_search_after_the_rest);
    return test_end();
}
