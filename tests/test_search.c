/* The placement search (include/dplace/search.h): it improves on its start,
 * a seed and thread count give one result, a checkpoint resumed ends as the
 * run that was not interrupted, every placement it holds simulates (fully)
 * to what its delta evaluator said, the memory check refuses moves before
 * simulating them, bad starts and settings are refused, and the typed
 * level groups a parent scope's ops by phase and type. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dplace/cost.h"
#include "dplace/placement.h"
#include "dplace/search.h"
#include "dplace/zoo.h"
#include "search/search_internal.h"
#include "test_fixtures.h"
#include "test_util.h"

/* A small graph and machine for every test. */
typedef struct fixture {
    dp_graph *g;
    dp_devices *ds;
    dp_sim *sim;
    int32_t *p; /* [n_ops] scratch placement */
} fixture;

static fixture fixture_open(const char *model, const char *devices) {
    fixture f;
    dp_error err;
    f.g = dp_zoo_build(model, 0, &err);
    CHECK(f.g);
    f.ds = dp_devices_preset(devices, &err);
    CHECK(f.ds);
    f.sim = dp_sim_init(f.g, f.ds, &err);
    CHECK(f.sim);
    f.p = malloc(sizeof(int32_t) * (size_t)f.g->n_ops);
    CHECK(f.p);
    return f;
}

static void fixture_close(fixture *f) {
    free(f->p);
    dp_sim_free(f->sim);
    dp_devices_free(f->ds);
    dp_graph_free(f->g);
}

/* A search of f from single GPU (the first GPU; its index in gpu). */
static dp_search *search_new(fixture *f, int32_t threads, uint64_t seed) {
    dp_error err;
    dp_search_options o = dp_search_options_default();
    o.threads = threads, o.seed = seed, o.moves = 8;
    dp_search *s = dp_search_init(f->g, f->ds, f->sim, &o, &err);
    if (!s) fprintf(stderr, "%s\n", err.msg);
    CHECK(s);
    CHECK(dp_placement_single(f->g, f->ds, 1, f->p, &err) == DP_STATUS_OK);
    CHECK(dp_search_add_start(s, "gpu", f->p, &err) == DP_STATUS_OK);
    return s;
}

/* Runs s through the run driver for `updates` steps in all. */
static void search_run(dp_search *s, const fixture *f, int64_t updates, const char *ck, int resume) {
    dp_run_options ro = dp_run_options_default();
    ro.g = f->g, ro.ds = f->ds, ro.max_updates = updates;
    ro.checkpoint_path = ck, ro.resume = resume, ro.checkpoint_every = 3;
    dp_error err;
    dp_status st = dp_run(dp_search_method(s), &ro, NULL, NULL, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    CHECK(st == DP_STATUS_OK);
}

/* The search finds a placement faster than its start, and the best it
 * reports simulates to its time exactly. */
static void test_improves_start(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_search *s = search_new(&f, 1, 1);
    dp_sim_result start;
    CHECK(dp_search_start(s, NULL, &start));
    search_run(s, &f, 30, NULL, 0);
    const dp_run_state *st = dp_search_get_state(s);
    CHECK(st->best_placement);
    CHECK(st->best_s < start.step_time_s * 0.98);
    CHECK(st->samples > 100);
    dp_sim_result r = fixture_simulate(f.g, f.ds, st->best_placement);
    CHECK(r.valid && r.step_time_s == st->best_s);
    dp_search_free(s);
    fixture_close(&f);
}

/* The same seed and thread count, the same placements and log; another
 * seed, another path. */
static void test_deterministic(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    int32_t n = f.g->n_ops;
    int32_t *best = malloc(sizeof(int32_t) * (size_t)n), *chain0 = malloc(sizeof(int32_t) * (size_t)n);
    CHECK(best && chain0);
    double first_s = 0;
    int64_t first_samples = 0;
    for (int run = 0; run < 3; run++) {
        TEST_CASE("run %d, seed %d", run, run == 2 ? 7 : 3);
        dp_search *s = search_new(&f, 2, run == 2 ? 7 : 3);
        search_run(s, &f, 12, NULL, 0);
        const dp_run_state *st = dp_search_get_state(s);
        CHECK(st->best_placement);
        const int32_t *c0 = dp_search_chain_placement(s, 0, NULL);
        CHECK(c0);
        if (run == 0) {
            memcpy(best, st->best_placement, sizeof(int32_t) * (size_t)n), first_s = st->best_s;
            memcpy(chain0, c0, sizeof(int32_t) * (size_t)n), first_samples = st->samples;
        }
        if (run == 1) {
            CHECK(st->best_s == first_s && st->samples == first_samples);
            CHECK(!memcmp(best, st->best_placement, sizeof(int32_t) * (size_t)n));
            CHECK(!memcmp(chain0, c0, sizeof(int32_t) * (size_t)n));
        }
        if (run == 2) { /* another seed: other moves, so chain 0 ends elsewhere */
            CHECK(isfinite(st->best_s));
            CHECK(memcmp(chain0, c0, sizeof(int32_t) * (size_t)n) != 0);
        }
        dp_search_free(s);
    }
    free(best), free(chain0);
    fixture_close(&f);
}

/* Searches a (seed 3, 30 steps) and b (seed 9, 2 steps) of f, a's best
 * faster than b's: a placement offered from elsewhere (another rank's
 * best, src/dist). */
static void offer_searches(fixture *f, dp_search **a, dp_search **b) {
    *a = search_new(f, 2, 3), *b = search_new(f, 1, 9);
    search_run(*a, f, 30, NULL, 0);
    search_run(*b, f, 2, NULL, 0);
    const dp_run_state *sa = dp_search_get_state(*a), *sb = dp_search_get_state(*b);
    CHECK(sa->best_placement && sb->best_placement && sa->best_s < sb->best_s);
}

/* An offered placement faster than the search's best is taken (without
 * counting a sample), its worst chain goes on from it, and the search goes
 * on. */
static void test_offer_faster_taken(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    int32_t n = f.g->n_ops;
    dp_search *a, *b;
    offer_searches(&f, &a, &b);
    const dp_run_state *sa = dp_search_get_state(a), *sb = dp_search_get_state(b);
    int64_t samples = sb->samples;
    dp_error err;
    CHECK(dp_search_offer_best(b, sa->best_placement, &err) == 1);
    CHECK(sb->best_s == sa->best_s && !memcmp(sb->best_placement, sa->best_placement, sizeof(int32_t) * (size_t)n));
    CHECK(sb->samples == samples);
    dp_sim_result r;
    CHECK(dp_search_chain_placement(b, 0, &r) && r.step_time_s == sa->best_s); /* its chain goes on from it */
    search_run(b, &f, 4, NULL, 0); /* and goes on */
    CHECK(sb->best_s <= sa->best_s);
    dp_search_free(a);
    dp_search_free(b);
    fixture_close(&f);
}

/* An offered placement slower than the search's best is refused. */
static void test_offer_slower_refused(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_search *a, *b;
    offer_searches(&f, &a, &b);
    const dp_run_state *sa = dp_search_get_state(a), *sb = dp_search_get_state(b);
    dp_error err;
    CHECK(dp_search_offer_best(b, sa->best_placement, &err) == 1);
    CHECK(dp_search_offer_best(b, f.p, &err) == 0); /* single GPU: slower */
    CHECK(sb->best_s == sa->best_s);
    dp_search_free(a);
    dp_search_free(b);
    fixture_close(&f);
}

/* An offered placement with a device out of range is an error. */
static void test_offer_out_of_range_refused(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_search *a, *b;
    offer_searches(&f, &a, &b);
    dp_error err;
    f.p[0] = 99;
    CHECK(dp_search_offer_best(b, f.p, &err) == -1 && err.status == DP_STATUS_INVALID);
    dp_search_free(a);
    dp_search_free(b);
    fixture_close(&f);
}

/* A run checkpointed after some steps and resumed ends as the run in one go. */
static void test_resume_equals_uninterrupted(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    char ck[64];
    snprintf(ck, sizeof ck, "/tmp/dplace_test_search_%d.ck", (int)getpid());
    dp_search *a = search_new(&f, 2, 5);
    search_run(a, &f, 16, NULL, 0);
    dp_search *b = search_new(&f, 2, 5);
    search_run(b, &f, 7, ck, 0);
    dp_search_free(b);
    b = search_new(&f, 2, 5);
    search_run(b, &f, 16, ck, 1);
    const dp_run_state *sa = dp_search_get_state(a), *sb = dp_search_get_state(b);
    CHECK(sa->updates == sb->updates && sa->samples == sb->samples && sa->best_s == sb->best_s);
    CHECK(sa->best_sample == sb->best_sample);
    CHECK(!memcmp(sa->best_placement, sb->best_placement, sizeof(int32_t) * (size_t)f.g->n_ops));
    for (int32_t c = 0; c < 2; c++) {
        TEST_CASE("chain %d", (int)c);
        dp_sim_result ra, rb;
        const int32_t *pa = dp_search_chain_placement(a, c, &ra), *pb = dp_search_chain_placement(b, c, &rb);
        CHECK(pa && pb && !memcmp(pa, pb, sizeof(int32_t) * (size_t)f.g->n_ops));
        CHECK(ra.step_time_s == rb.step_time_s);
    }
    dp_search_stats xa, xb;
    dp_search_get_stats(a, &xa), dp_search_get_stats(b, &xb);
    CHECK(xa.simulated == xb.simulated && xa.accepted == xb.accepted && xa.restarts == xb.restarts);
    unlink(ck);
    dp_search_free(a);
    dp_search_free(b);
    fixture_close(&f);
}

/* A checkpoint of another seed is refused, naming the seed. */
static void test_checkpoint_of_other_seed_refused(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    char ck[64];
    snprintf(ck, sizeof ck, "/tmp/dplace_test_search_%d.ck", (int)getpid());
    dp_search *b = search_new(&f, 2, 5);
    search_run(b, &f, 7, ck, 0);
    dp_search_free(b);
    dp_search *c = search_new(&f, 2, 6);
    dp_error err;
    CHECK(dp_search_method(c).ops->load(c, ck, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "seed");
    dp_search_free(c);
    unlink(ck);
    fixture_close(&f);
}

/* A checkpoint made under other device parameters (a link's efficiency)
 * is refused in one line naming the cost model. */
static void test_checkpoint_of_other_model_refused(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    char ck[64];
    snprintf(ck, sizeof ck, "/tmp/dplace_test_search_%d.ck", (int)getpid());
    dp_search *b = search_new(&f, 2, 5);
    search_run(b, &f, 7, ck, 0);
    dp_search_free(b);
    dp_error err;
    dp_devices *stock = f.ds;
    f.ds = dp_devices_copy(stock, &err);
    CHECK(f.ds);
    f.ds->links[0].efficiency = 0.75;
    dp_sim *stock_sim = f.sim;
    f.sim = dp_sim_init(f.g, f.ds, &err);
    CHECK(f.sim);
    dp_search *c = search_new(&f, 2, 5);
    CHECK(dp_search_method(c).ops->load(c, ck, &err) == DP_STATUS_INVALID);
    {
        char want[64];
        snprintf(want, sizeof want, "made under cost model %u with device parameters", DP_COST_MODEL_VERSION);
        CHECK_STR_CONTAINS(err.msg, want);
    }
    dp_search_free(c);
    dp_sim_free(f.sim);
    dp_devices_free(f.ds);
    f.ds = stock, f.sim = stock_sim;
    unlink(ck);
    fixture_close(&f);
}

/* Every chain's placement, reached by delta-evaluated moves, simulates in
 * full to the result its evaluator holds, after every step. */
static void test_delta_equals_full(void) {
    fixture f = fixture_open("synthetic-600", "p100x4");
    dp_search *s = search_new(&f, 2, 11);
    dp_method m = dp_search_method(s);
    dp_error err;
    for (int step = 0; step < 15; step++) {
        TEST_CASE("step %d", step);
        CHECK(m.ops->step(m.self, &err) == DP_STATUS_OK);
        for (int32_t c = 0; c < 2; c++) {
            TEST_CASE("step %d, chain %d", step, (int)c);
            dp_sim_result held;
            const int32_t *p = dp_search_chain_placement(s, c, &held);
            CHECK(p);
            dp_sim_result full = fixture_simulate(f.g, f.ds, p);
            CHECK(full.step_time_s == held.step_time_s && full.valid == held.valid);
            CHECK(full.transfer_bytes == held.transfer_bytes && full.n_transfers == held.n_transfers);
            for (int32_t d = 0; d < full.n_devices; d++) CHECK(full.device[d].peak_bytes == held.device[d].peak_bytes);
        }
    }
    test_case_[0] = '\0';
    dp_search_stats x;
    dp_search_get_stats(s, &x);
    CHECK(x.accepted > 10 && x.critical > 0);
    dp_search_free(s);
    fixture_close(&f);
}

/* On GPUs too small for the largest parameter, moves that would put it
 * there are refused before they are simulated, and the search stays
 * valid. */
static void test_memory_check_refuses(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("synthetic-400", 0, &err);
    CHECK(g);
    uint64_t biggest = 0;
    for (int32_t i = 0; i < g->n_ops; i++)
        if (g->ops[i].param_bytes > biggest) biggest = g->ops[i].param_bytes;
    CHECK(biggest > 1000);
    dp_devices *ds = fixture_devices(2, biggest / 2, 1e10);
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    int32_t *p = malloc(sizeof(int32_t) * (size_t)g->n_ops);
    CHECK(p);
    CHECK(dp_placement_single(g, ds, 0, p, &err) == DP_STATUS_OK); /* the CPU: 1 TiB */
    dp_search_options o = dp_search_options_default();
    o.moves = 16;
    dp_search *s = dp_search_init(g, ds, sim, &o, &err);
    CHECK(s);
    CHECK(dp_search_add_start(s, "cpu", p, &err) == DP_STATUS_OK);
    dp_method m = dp_search_method(s);
    for (int step = 0; step < 20; step++) CHECK(m.ops->step(m.self, &err) == DP_STATUS_OK);
    dp_search_stats x;
    dp_search_get_stats(s, &x);
    CHECK(x.oom_rejected > 0);
    CHECK(x.simulated + x.oom_rejected <= x.proposed);
    const dp_run_state *st = dp_search_get_state(s);
    CHECK(st->best_placement);
    dp_sim_result r = fixture_simulate(g, ds, st->best_placement);
    CHECK(r.valid && r.step_time_s == st->best_s);
    dp_search_free(s);
    free(p);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A search without a start fails its first step. */
static void test_no_start_fails_first_step(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_error err;
    dp_search_options o = dp_search_options_default();
    dp_search *s = dp_search_init(f.g, f.ds, f.sim, &o, &err);
    CHECK(s);
    dp_method m = dp_search_method(s);
    CHECK(m.ops->step(m.self, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "no start");
    dp_search_free(s);
    fixture_close(&f);
}

/* A start with a device out of range is refused by name, and is no
 * start. */
static void test_start_out_of_range_refused(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_error err;
    dp_search_options o = dp_search_options_default();
    dp_search *s = dp_search_init(f.g, f.ds, f.sim, &o, &err);
    CHECK(s);
    for (int32_t i = 0; i < f.g->n_ops; i++) f.p[i] = 1;
    f.p[3] = 9;
    CHECK(dp_search_add_start(s, "mine", f.p, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "mine");
    CHECK(!dp_search_start(s, NULL, NULL));
    dp_search_free(s);
    fixture_close(&f);
}

/* A start against a constraint (a CPU-only op on a GPU) is refused. */
static void test_start_against_constraint_refused(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_error err;
    dp_search_options o = dp_search_options_default();
    dp_search *s = dp_search_init(f.g, f.ds, f.sim, &o, &err);
    CHECK(s);
    int32_t cpu_only = -1;
    for (int32_t i = 0; i < f.g->n_ops && cpu_only < 0; i++)
        if (f.g->ops[i].device.kind == DP_DEVCON_CPU) cpu_only = i;
    if (cpu_only >= 0) {
        CHECK(dp_placement_single(f.g, f.ds, 1, f.p, &err) == DP_STATUS_OK);
        f.p[cpu_only] = 1;
        CHECK(dp_search_add_start(s, "mine", f.p, &err) == DP_STATUS_INVALID);
    }
    dp_search_free(s);
    fixture_close(&f);
}

/* Bad search settings are refused (unknown ones by name); good ones set. */
static void test_bad_settings_refused(void) {
    dp_error err;
    dp_settings set;
    dp_settings_base(&set);
    CHECK(dp_settings_set(&set, "moves", "0", &err) == DP_STATUS_INVALID);
    CHECK(dp_settings_set(&set, "nope", "1", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "unknown setting");
    CHECK(dp_settings_set(&set, "t0", "0.5", &err) == DP_STATUS_OK && set.search.t0 == 0.5);
}

/* A search of zero threads is refused. */
static void test_zero_threads_refused(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_error err;
    dp_search_options o = dp_search_options_default();
    o.threads = 0;
    CHECK(!dp_search_init(f.g, f.ds, f.sim, &o, &err) && err.status == DP_STATUS_INVALID);
    fixture_close(&f);
}

/* An op's typed key: its parent forward scope, its phase (how much of its
 * scope dp_graph_forward_scope cut) and its type, as text. */
typedef struct typed_key {
    char key[DP_GRAPH_NAME_MAX + 48];
    int32_t unit, op;
} typed_key;

static int typed_key_cmp(const void *a, const void *b) {
    return strcmp(((const typed_key *)a)->key, ((const typed_key *)b)->key);
}

/* The typed level of a search of rnnlm, and (in *keys, *n) each scoped
 * op's typed key with its unit, sorted by key. */
static const search_level *typed_level(fixture *f, dp_search *s, typed_key **keys, int32_t *n) {
    const search_level *L = NULL;
    for (int32_t k = 0; k < s->n_levels; k++)
        if (s->level_kind[k] == SEARCH_LEVEL_TYPED) L = &s->level[k];
    CHECK(L);
    *keys = calloc((size_t)f->g->n_ops, sizeof(typed_key));
    CHECK(*keys);
    *n = 0;
    for (int32_t i = 0; i < f->g->n_ops; i++) {
        const dp_op *o = &f->g->ops[i];
        if (o->scope < 0) continue;
        const char *raw = dp_graph_str(f->g, o->scope), *fs = dp_graph_forward_scope(raw), *slash = strrchr(fs, '/');
        int len = slash ? (int)(slash - fs) : (int)strlen(fs);
        typed_key *t = &(*keys)[(*n)++];
        snprintf(t->key, sizeof t->key, "%.*s|%d|%d", len, fs, (int)(fs - raw), (int)o->type);
        t->unit = L->u.unit_of[i], t->op = i;
    }
    qsort(*keys, (size_t)*n, sizeof **keys, typed_key_cmp);
    return L;
}

/* The typed level: more units than parent scopes, and the ops of one
 * parent scope, phase and type move together. */
static void test_typed_units_move_together(void) {
    fixture f = fixture_open("rnnlm", "k40x2");
    dp_search *s = search_new(&f, 1, 1);
    typed_key *keys;
    int32_t n;
    const search_level *L = typed_level(&f, s, &keys, &n);
    dp_search_stats x;
    dp_search_get_stats(s, &x);
    printf("  rnnlm: %d scopes, %d parent scopes, %d typed units\n", (int)x.n_units[2], (int)x.n_units[3],
           (int)x.n_units[4]);
    CHECK(x.n_units[4] == L->u.n_units && x.n_units[4] > x.n_units[3]);
    for (int32_t i = 1; i < n; i++)
        if (!strcmp(keys[i].key, keys[i - 1].key)) {
            TEST_CASE("ops %d and %d, key %.160s", (int)keys[i - 1].op, (int)keys[i].op, keys[i].key);
            CHECK_INT_EQ(keys[i].unit, keys[i - 1].unit);
        }
    free(keys);
    dp_search_free(s);
    fixture_close(&f);
}

/* A layer's gradient ops can move without its forward ones: some pair of
 * the same parent scope and type in two phases is in two units. */
static void test_typed_units_split_phases(void) {
    fixture f = fixture_open("rnnlm", "k40x2");
    dp_search *s = search_new(&f, 1, 1);
    typed_key *keys;
    int32_t n;
    typed_level(&f, s, &keys, &n);
    for (int32_t i = 0; i < n; i++) { /* the key without its phase: parent|type */
        char *bar = strchr(keys[i].key, '|'), *bar2 = bar ? strchr(bar + 1, '|') : NULL;
        CHECK(bar2);
        memmove(bar, bar2, strlen(bar2) + 1);
    }
    qsort(keys, (size_t)n, sizeof *keys, typed_key_cmp);
    int separated = 0;
    for (int32_t i = 1; i < n; i++)
        separated |= !strcmp(keys[i].key, keys[i - 1].key) && keys[i].unit != keys[i - 1].unit;
    CHECK(separated);
    free(keys);
    dp_search_free(s);
    fixture_close(&f);
}

/* Every search setting is exercised: set to another value in its range,
 * the search runs steps with it from the usual starts. */
static void test_every_setting(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    dp_error err;
    int ran = 0;
    for (int32_t k = 0; k < n; k++) {
        if (t[k].target != DP_SETTING_SEARCH) continue;
        dp_settings set;
        dp_settings_base(&set);
        char v[64], now[64];
        dp_setting_format(&t[k], &set, now, sizeof now);
        double x = strtod(now, NULL);
        double w = t[k].type == DP_SETTING_INT ? (x + 1 <= t[k].max ? x + 1 : x - 1) : x * 0.5;
        snprintf(v, sizeof v, "%.9g", w);
        TEST_CASE("setting %s=%s", t[k].name, v);
        CHECK(dp_settings_set(&set, t[k].name, v, &err) == DP_STATUS_OK);
        dp_search *s = dp_search_init(f.g, f.ds, f.sim, &set.search, &err);
        CHECK(s);
        CHECK(dp_search_add_starts(s, NULL, NULL, NULL, &err) == DP_STATUS_OK);
        search_run(s, &f, 3, NULL, 0);
        CHECK(dp_search_get_state(s)->updates == 3);
        dp_search_free(s);
        ran++;
    }
    CHECK_INT_EQ(ran, 8);
    fixture_close(&f);
}

/* Runs `updates` steps of a search of f from single GPU under o (seed 1,
 * one chain, 8 moves a step, then `set`'s key=value); its counters in *st,
 * its best step time returned. */
static double run_set(fixture *f, const char *const *set, int64_t updates, dp_search_stats *st) {
    dp_search_options o = dp_search_options_default();
    o.moves = 8;
    dp_settings all;
    dp_settings_base(&all);
    all.search = o;
    dp_error err;
    for (; *set; set += 2) {
        TEST_CASE("%s=%s", set[0], set[1]);
        CHECK(dp_settings_set(&all, set[0], set[1], &err) == DP_STATUS_OK);
    }
    dp_search *s = dp_search_init(f->g, f->ds, f->sim, &all.search, &err);
    CHECK(s);
    CHECK(dp_placement_single(f->g, f->ds, 1, f->p, &err) == DP_STATUS_OK);
    CHECK(dp_search_add_start(s, "gpu", f->p, &err) == DP_STATUS_OK);
    search_run(s, f, updates, NULL, 0);
    dp_search_get_stats(s, st);
    double best = dp_search_get_state(s)->best_s;
    dp_search_free(s);
    return best;
}

/* restart: a chain that finds no better placement of its own for that
 * many updates restarts from the best; each restart is counted. One chain
 * (no sync restarts): restart=1 restarts it after every update without
 * progress, a restart longer than the run never. */
static void test_restart_after_stall(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_search_stats often, never;
    run_set(&f, (const char *const[]){"restart", "1", NULL}, 30, &often);
    run_set(&f, (const char *const[]){"restart", "1000", NULL}, 30, &never);
    CHECK(never.restarts == 0);
    CHECK(often.restarts > 0 && often.restarts <= 30);
    fixture_close(&f);
}

/* critical: the share of moves proposed from the simulated critical path;
 * 0 proposes none from it, 1 all. */
static void test_critical_share(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_search_stats none, all;
    run_set(&f, (const char *const[]){"critical", "0", NULL}, 10, &none);
    run_set(&f, (const char *const[]){"critical", "1", NULL}, 10, &all);
    CHECK(none.proposed == 80 && none.critical == 0);
    CHECK(all.proposed == 80 && all.critical == 80);
    fixture_close(&f);
}

/* swap: the share of swaps among the moves not from the critical path. At
 * swap=1 (critical=0) every move swaps two units on different devices:
 * from single GPU there are none, so nothing is simulated; at swap=0 units
 * move off it. */
static void test_swap_share(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_search_stats swaps, moves;
    run_set(&f, (const char *const[]){"critical", "0", "swap", "1", NULL}, 10, &swaps);
    run_set(&f, (const char *const[]){"critical", "0", "swap", "0", NULL}, 10, &moves);
    CHECK(swaps.proposed == 80 && swaps.simulated == 0);
    CHECK(moves.simulated > 0 && moves.accepted > 0);
    fixture_close(&f);
}

/* decay: the temperature's factor per update. At t0=100 a slower move is
 * accepted almost surely; with decay=1 the temperature stays there, with
 * decay=1e-12 (t-min=0) it falls to nothing after the first update and
 * only moves no slower are accepted. */
static void test_decay_cools(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_search_stats hot, cooled;
    run_set(&f, (const char *const[]){"t0", "100", "decay", "1", "t-min", "0", NULL}, 20, &hot);
    run_set(&f, (const char *const[]){"t0", "100", "decay", "1e-12", "t-min", "0", NULL}, 20, &cooled);
    CHECK(hot.simulated > 0 && cooled.simulated > 0);
    CHECK(hot.accepted - hot.improved > 2 * (cooled.accepted - cooled.improved));
    fixture_close(&f);
}

/* t-min: the temperature's floor, relative to t0. With t-min=1 the
 * temperature never leaves t0 whatever the decay: the run is the run
 * without decay, move for move. */
static void test_t_min_floor(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    dp_search_stats floored, flat;
    double a = run_set(&f, (const char *const[]){"t0", "100", "decay", "1e-12", "t-min", "1", NULL}, 20, &floored);
    double b = run_set(&f, (const char *const[]){"t0", "100", "decay", "1", "t-min", "0", NULL}, 20, &flat);
    CHECK(a == b);
    CHECK(floored.simulated == flat.simulated && floored.accepted == flat.accepted);
    CHECK(floored.improved == flat.improved);
    fixture_close(&f);
}

/* Makes each step of a run take at least 0.4 s. */
static void slow_step(void *user, const dp_run_state *s) {
    (void)user, (void)s;
    test_busy(0.4);
}

/* The run driver's steps_fit: with a 1 s budget and 0.4 s steps, a run
 * begins its third step at 0.8 s (it ends past the budget), and with
 * steps_fit it stops before it. */
static void test_run_steps_fit(void) {
    fixture f = fixture_open("synthetic-400", "k40x2");
    for (int fit = 0; fit < 2; fit++) {
        dp_search *s = search_new(&f, 1, 1);
        dp_run_options ro = dp_run_options_default();
        ro.g = f.g, ro.ds = f.ds, ro.max_seconds = 1.0, ro.steps_fit = fit;
        dp_run_hooks h = {NULL, NULL, slow_step};
        dp_run_result res;
        dp_error err;
        CHECK_INT_EQ(dp_run(dp_search_method(s), &ro, &h, &res, &err), DP_STATUS_OK);
        CHECK_INT_EQ((int)res.steps, fit ? 2 : 3);
        dp_search_free(s);
    }
    fixture_close(&f);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_improves_start);
    TEST_RUN(test_deterministic);
    TEST_RUN(test_resume_equals_uninterrupted);
    TEST_RUN(test_checkpoint_of_other_seed_refused);
    TEST_RUN(test_checkpoint_of_other_model_refused);
    TEST_RUN(test_delta_equals_full);
    TEST_RUN(test_memory_check_refuses);
    TEST_RUN(test_no_start_fails_first_step);
    TEST_RUN(test_start_out_of_range_refused);
    TEST_RUN(test_start_against_constraint_refused);
    TEST_RUN(test_bad_settings_refused);
    TEST_RUN(test_zero_threads_refused);
    TEST_RUN(test_offer_faster_taken);
    TEST_RUN(test_offer_slower_refused);
    TEST_RUN(test_offer_out_of_range_refused);
    TEST_RUN(test_typed_units_move_together);
    TEST_RUN(test_typed_units_split_phases);
    TEST_RUN(test_every_setting);
    TEST_RUN(test_restart_after_stall);
    TEST_RUN(test_critical_share);
    TEST_RUN(test_swap_share);
    TEST_RUN(test_decay_cools);
    TEST_RUN(test_t_min_floor);
    TEST_RUN(test_run_steps_fit);
    return test_end();
}
