/* The pretrained placer (include/dplace/pretrained.h): its policy file
 * round-trips and a corrupt, truncated or incompatible one is refused in
 * one line naming the file; the shipped policy loads; the teacher's replay
 * reproduces a placement of its units exactly and offers identical devices
 * in identical states as one target; the decoder goes layer by layer
 * through an unrolled RNN, and its layer context makes each layer one
 * decision where the devices allow; decoding is seeded and places every
 * op where it may go; a policy-gradient step raises the log-probability of
 * a placement given a positive weight; the method's zero-shot answer does
 * not depend on the threads; and the job runs it from its name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dplace/optimize.h"
#include "dplace/placement.h"
#include "dplace/pretrained.h"
#include "dplace/zoo.h"
#include "agent/pretrained_internal.h"
#include "test_util.h"

typedef struct fixture {
    dp_graph *g;
    dp_devices *ds;
    dp_pretrained_ctx *c;
    int32_t *a, *b; /* [n_ops] */
} fixture;

static fixture open_fixture(const char *model, const char *devices) {
    fixture f;
    dp_error err;
    CHECK(f.g = dp_zoo_build(model, 0, &err));
    CHECK(f.ds = dp_devices_preset(devices, &err));
    dp_units_spec us = {DP_UNITS_OP, 0};
    CHECK(f.c = dp_pretrained_ctx_init(f.g, f.ds, us, &err));
    CHECK(f.a = malloc(sizeof(int32_t) * (size_t)f.g->n_ops));
    CHECK(f.b = malloc(sizeof(int32_t) * (size_t)f.g->n_ops));
    return f;
}

static void close_fixture(fixture *f) {
    dp_pretrained_ctx_free(f->c);
    free(f->a), free(f->b);
    dp_devices_free(f->ds);
    dp_graph_free(f->g);
}

static const char *tmp_path(const char *name) {
    static char buf[256];
    snprintf(buf, sizeof buf, "/tmp/dplace_test_pretrained_%d_%s", (int)getpid(), name);
    return buf;
}

/* The bytes of a file (n of them), malloc'd. */
static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    CHECK(f);
    unsigned char *b = malloc(1 << 20);
    CHECK(b);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static void test_policy_roundtrip(void) {
    fixture f = open_fixture("rnnlm", "k40x2");
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 3, &err), *q;
    CHECK(p);
    const char *path = tmp_path("rt.dpp");
    CHECK(dp_pretrained_policy_save(p, path, &err) == DP_STATUS_OK);
    CHECK(q = dp_pretrained_policy_load(path, &err));
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_GREEDY, 1, NULL, NULL, f.a, NULL, NULL, &err) == DP_STATUS_OK);
    CHECK(dp_pretrained_decode(f.c, q, DP_PRETRAINED_GREEDY, 1, NULL, NULL, f.b, NULL, NULL, &err) == DP_STATUS_OK);
    CHECK(!memcmp(f.a, f.b, sizeof(int32_t) * (size_t)f.g->n_ops));
    unlink(path);
    dp_pretrained_policy_free(p), dp_pretrained_policy_free(q);
    close_fixture(&f);
}

/* Loads bytes b[n] after `edit` and expects a refusal containing want. */
static void expect_refused(const unsigned char *b, size_t n, const char *want) {
    dp_error err;
    TEST_CASE("%s", want);
    CHECK(!dp_pretrained_policy_from_bytes(b, n, "p.dpp", &err));
    CHECK(err.status == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "p.dpp: ");
    CHECK_STR_CONTAINS(err.msg, want);
    CHECK(!strchr(err.msg, '\n'));
}

static void test_policy_corrupt_refused(void) {
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 3, &err);
    const char *path = tmp_path("bad.dpp");
    CHECK(dp_pretrained_policy_save(p, path, &err) == DP_STATUS_OK);
    size_t n;
    unsigned char *b = slurp(path, &n);
    expect_refused(b, n - 4, "truncated or corrupt");
    b[n - 5] ^= 0x40;
    expect_refused(b, n, "checksum");
    b[n - 5] ^= 0x40;
    b[0] = 'X';
    expect_refused(b, n, "not a dplace policy");
    expect_refused(b, 10, "not a dplace policy");
    unlink(path);
    free(b);
    dp_pretrained_policy_free(p);
}

static void test_policy_incompatible_refused(void) {
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 3, &err);
    const char *path = tmp_path("old.dpp");
    CHECK(dp_pretrained_policy_save(p, path, &err) == DP_STATUS_OK);
    size_t n;
    unsigned char *b = slurp(path, &n);
    b[12]++; /* the feature set */
    expect_refused(b, n, "feature set");
    b[12]--, b[16]++; /* the cost model */
    expect_refused(b, n, "cost model");
    b[16]--, b[8]++; /* the format */
    expect_refused(b, n, "policy format");
    b[8]--;
    dp_pretrained_policy *q = dp_pretrained_policy_from_bytes(b, n, "p.dpp", &err);
    CHECK(q); /* the untouched bytes load */
    dp_pretrained_policy_free(q);
    CHECK(!dp_pretrained_policy_load(tmp_path("missing.dpp"), &err) && err.status == DP_STATUS_IO);
    CHECK_STR_CONTAINS(err.msg, "missing.dpp");
    unlink(path);
    free(b);
    dp_pretrained_policy_free(p);
}

static void test_default_policy_loads(void) {
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_default(&err);
    if (!p && err.status == DP_STATUS_UNSUPPORTED) {
        test_skip("this build has no policy compiled in");
        return;
    }
    CHECK(p);
    CHECK(strlen(dp_pretrained_policy_note(p)) > 0);
    dp_pretrained_policy_free(p);
}

/* A placement of the decoder's units (each unit on one device it may use)
 * replays exactly, and every op lands on a device it may use. */
static void test_teacher_replays_exactly(void) {
    fixture f = open_fixture("inception_v3", "p100x4");
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 5, &err);
    dp_rng rng;
    dp_rng_seed(&rng, 9);
    /* a sampled placement is one of the units' */
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_SAMPLE, 1, &rng, NULL, f.a, NULL, NULL, &err) == DP_STATUS_OK);
    for (int32_t op = 0; op < f.g->n_ops; op++) CHECK(dp_placement_allowed(f.g, f.ds, op, f.a[op]));
    dp_pretrained_trace tr;
    CHECK(dp_pretrained_trace_init(&tr, f.c, &err) == DP_STATUS_OK);
    CHECK(dp_pretrained_decode(f.c, NULL, DP_PRETRAINED_TEACHER, 1, NULL, f.a, f.b, &tr, NULL, &err) == DP_STATUS_OK);
    CHECK(!memcmp(f.a, f.b, sizeof(int32_t) * (size_t)f.g->n_ops));
    for (int32_t i = 0; i < tr.n_steps; i++) {
        TEST_CASE("step %d", (int)i);
        CHECK(tr.steps[i].cand & dp_mask_bit(tr.steps[i].action));
        if (tr.steps[i].target) CHECK(tr.steps[i].target & dp_mask_bit(tr.steps[i].action));
    }
    dp_pretrained_trace_free(&tr);
    dp_pretrained_policy_free(p);
    close_fixture(&f);
}

/* An unrolled two-layer RNN of three time steps, finalized: an input x
 * (no scope), then cell[l][t] in scope rnn/layer_l/tT reading layer l-1's
 * cell of step t (x for layer 0) and its own of step t-1; every tensor
 * `bytes`, every cell `flops`; layer 1's cell of step 1 pinned to the CPU
 * when `pin`. */
static dp_graph *rnn_graph(int64_t bytes, double flops, int pin, int32_t *x, int32_t cell[2][3]) {
    dp_error err;
    dp_graph *g = dp_graph_init("rnn");
    CHECK(g);
    *x = dp_graph_add_op(g, "x", "Input", NULL, NULL, &err);
    CHECK(*x >= 0 && dp_graph_add_output_bytes(g, *x, bytes, &err) == DP_STATUS_OK);
    for (int l = 0; l < 2; l++)
        for (int t = 0; t < 3; t++) {
            char name[32], scope[32];
            snprintf(name, sizeof name, "l%d_t%d", l, t);
            snprintf(scope, sizeof scope, "rnn/layer_%d/t%d", l, t);
            int32_t op = cell[l][t] = dp_graph_add_op(g, name, "MatMul", scope, NULL, &err);
            CHECK(op >= 0);
            g->ops[op].flops = flops;
            if (pin && l == 1 && t == 1) CHECK(dp_devcon_parse("cpu", &g->ops[op].device) == 0);
            CHECK(dp_graph_add_input(g, op, l == 0 ? *x : cell[l - 1][t], 0, &err) == DP_STATUS_OK);
            if (t > 0) CHECK(dp_graph_add_input(g, op, cell[l][t - 1], 0, &err) == DP_STATUS_OK);
            CHECK(dp_graph_add_output_bytes(g, op, bytes, &err) == DP_STATUS_OK);
        }
    CHECK(dp_graph_finalize(g, "rnn", &err) == DP_STATUS_OK);
    return g;
}

/* The RNN of rnn_graph: g->topo goes time step by time step (layer 1's
 * step 0 before layer 0's step 2), the decoder layer by layer; the input,
 * which has no scope, first. */
static void test_decode_order_layer_by_layer(void) {
    int32_t x, cell[2][3];
    dp_graph *g = rnn_graph(64, 0, 0, &x, cell);
    CHECK(g->topo[3] == cell[1][0]); /* level by level */
    int32_t out[7], want[7] = {x, cell[0][0], cell[0][1], cell[0][2], cell[1][0], cell[1][1], cell[1][2]};
    CHECK(pretrained_layer_order(g, out) == DP_STATUS_OK);
    for (int i = 0; i < 7; i++) {
        TEST_CASE("position %d", i);
        CHECK(out[i] == want[i]);
    }
    dp_graph_free(g);
}

/* The layer context of rnn_graph's RNN (an op a unit), one of layer 1's
 * cells pinned to the CPU: each layer one unit, but the pinned cell, which
 * shares no device with the rest of its layer, stays a unit of its own, as
 * does the input, which has no scope; whatever a policy draws, each
 * layer's other cells share one device and the pinned cell runs on the
 * CPU. */
static void test_layer_context_joins_layers(void) {
    dp_error err;
    int32_t x, cell[2][3];
    dp_graph *g = rnn_graph(1 << 20, 1e9, 1, &x, cell);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    dp_pretrained_ctx *c = dp_pretrained_ctx_init(g, ds, (dp_units_spec){DP_UNITS_OP, 0}, &err), *lc;
    CHECK(c);
    CHECK(lc = dp_pretrained_ctx_init_layers(c, &err));
    CHECK_INT_EQ(dp_pretrained_ctx_units(c), 7);
    CHECK_INT_EQ(dp_pretrained_ctx_units(lc), 4);
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 3, &err);
    CHECK(p);
    int32_t place[7];
    for (uint64_t seed = 1; seed <= 8; seed++) {
        dp_rng rng;
        dp_rng_seed(&rng, seed);
        CHECK(dp_pretrained_decode(lc, p, DP_PRETRAINED_SAMPLE, 100, &rng, NULL, place, NULL, NULL, &err) == 0);
        TEST_CASE("seed %d", (int)seed);
        CHECK(place[cell[0][0]] == place[cell[0][1]] && place[cell[0][1]] == place[cell[0][2]]);
        CHECK(place[cell[1][0]] == place[cell[1][2]]);
        CHECK(ds->devices[place[cell[1][1]]].kind == DP_DEVKIND_CPU);
    }
    dp_pretrained_policy_free(p);
    dp_pretrained_ctx_free(lc);
    dp_pretrained_ctx_free(c);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* At the first decision with a choice, every GPU is empty: four identical
 * rows, four devices in the target. */
static void test_identical_devices_one_target(void) {
    fixture f = open_fixture("rnnlm", "k40x4");
    dp_error err;
    dp_pretrained_trace tr;
    CHECK(dp_pretrained_trace_init(&tr, f.c, &err) == DP_STATUS_OK);
    for (int32_t op = 0; op < f.g->n_ops; op++) f.a[op] = dp_placement_allowed(f.g, f.ds, op, 2) ? 2 : 0;
    CHECK(dp_pretrained_decode(f.c, NULL, DP_PRETRAINED_TEACHER, 1, NULL, f.a, f.b, &tr, NULL, &err) == DP_STATUS_OK);
    int32_t i = 0;
    while (i < tr.n_steps && dp_mask_count(tr.steps[i].cand) < 2) i++;
    CHECK(i < tr.n_steps);
    CHECK_INT_EQ(tr.steps[i].action, 2);
    CHECK_INT_EQ(dp_mask_count(tr.steps[i].target), 4);
    dp_pretrained_trace_free(&tr);
    close_fixture(&f);
}

static void test_sampling_seeded(void) {
    fixture f = open_fixture("rnnlm", "k40x4");
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 5, &err);
    dp_rng r1, r2, r3;
    dp_rng_seed(&r1, 4), dp_rng_seed(&r2, 4), dp_rng_seed(&r3, 5);
    double l1, l2;
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_SAMPLE, 1, &r1, NULL, f.a, NULL, &l1, &err) == DP_STATUS_OK);
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_SAMPLE, 1, &r2, NULL, f.b, NULL, &l2, &err) == DP_STATUS_OK);
    CHECK(!memcmp(f.a, f.b, sizeof(int32_t) * (size_t)f.g->n_ops) && l1 == l2 && l1 < 0);
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_SAMPLE, 1, &r3, NULL, f.b, NULL, NULL, &err) == DP_STATUS_OK);
    CHECK(memcmp(f.a, f.b, sizeof(int32_t) * (size_t)f.g->n_ops));
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_SAMPLE, 0, &r3, NULL, f.b, NULL, NULL, &err) ==
          DP_STATUS_INVALID);
    CHECK(dp_pretrained_decode(f.c, NULL, DP_PRETRAINED_GREEDY, 1, NULL, NULL, f.b, NULL, NULL, &err) ==
          DP_STATUS_INVALID);
    dp_pretrained_policy_free(p);
    close_fixture(&f);
}

/* Drawing at layer openings only: every decision whose unit's layer has
 * begun (a row's PF_LAYER_SHARE or PF_SCOPE_BEGUN above 0) takes the policy's
 * highest score, and at a high temperature some openings do not; at a
 * temperature near 0 the placement is the greedy one. */
static void test_openings_draw_only_openings(void) {
    fixture f = open_fixture("rnnlm", "k40x4");
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 5, &err);
    CHECK(p);
    pretrained_acts a;
    CHECK(pretrained_acts_init(&a, p, DP_MAX_DEVICES, &err) == DP_STATUS_OK);
    dp_pretrained_trace tr;
    CHECK(dp_pretrained_trace_init(&tr, f.c, &err) == DP_STATUS_OK);
    const int F = DP_PRETRAINED_FEATURES;
    int drawn = 0, followed = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        dp_rng rng;
        dp_rng_seed(&rng, seed);
        CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_OPENINGS, 100, &rng, NULL, f.a, &tr, NULL, &err) ==
              DP_STATUS_OK);
        for (int32_t i = 0; i < tr.n_steps; i++) {
            dp_pretrained_step *st = &tr.steps[i];
            if (dp_mask_count(st->cand) < 2) continue;
            const float *rows = tr.rows + (size_t)i * tr.n_devices * F;
            pretrained_forward(p, rows, tr.n_devices, &a);
            int32_t best = -1, begun = 0;
            for (dp_mask m = st->cand; m; m &= m - 1) {
                int32_t d = dp_mask_first(m);
                if (best < 0 || a.score[d] > a.score[best]) best = d;
                begun |= rows[(size_t)d * F + PF_LAYER_SHARE] > 0 || rows[(size_t)d * F + PF_SCOPE_BEGUN] > 0;
            }
            TEST_CASE("seed %d step %d", (int)seed, i);
            if (begun) {
                CHECK_INT_EQ(st->action, best);
                followed++;
            } else {
                drawn += st->action != best;
            }
        }
    }
    CHECK(followed > 0 && drawn > 0);
    dp_rng rng;
    dp_rng_seed(&rng, 9);
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_OPENINGS, 1e-3, &rng, NULL, f.a, NULL, NULL, &err) == 0);
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_GREEDY, 1, NULL, NULL, f.b, NULL, NULL, &err) == 0);
    CHECK(!memcmp(f.a, f.b, sizeof(int32_t) * (size_t)f.g->n_ops));
    dp_pretrained_trace_free(&tr);
    pretrained_acts_free(&a);
    dp_pretrained_policy_free(p);
    close_fixture(&f);
}

/* Drawing heavy units: the decisions drawn are those of the units of most
 * compute, at most as many as are heavy, and every other decision takes
 * the policy's highest score; with no unit heavy the placement is the
 * greedy one. */
static void test_heavy_draws_heavy_units(void) {
    fixture f = open_fixture("rnnlm", "k40x4");
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 5, &err);
    CHECK(p);
    dp_rng rng;
    dp_rng_seed(&rng, 3);
    CHECK_INT_EQ(dp_pretrained_ctx_set_heavy_share(f.c, -1), 0);
    CHECK_INT_EQ(dp_pretrained_ctx_set_heavy_share(f.c, NAN), 0);
    CHECK_INT_EQ(dp_pretrained_ctx_set_heavy_share(f.c, 0), 0);
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_HEAVY, 1, &rng, NULL, f.a, NULL, NULL, &err) == 0);
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_GREEDY, 1, NULL, NULL, f.b, NULL, NULL, &err) == 0);
    CHECK(!memcmp(f.a, f.b, sizeof(int32_t) * (size_t)f.g->n_ops));
    int32_t heavy = dp_pretrained_ctx_set_heavy_share(f.c, 0.01);
    CHECK(heavy > 0 && heavy < dp_pretrained_ctx_units(f.c));
    pretrained_acts a;
    CHECK(pretrained_acts_init(&a, p, DP_MAX_DEVICES, &err) == DP_STATUS_OK);
    dp_pretrained_trace tr;
    CHECK(dp_pretrained_trace_init(&tr, f.c, &err) == DP_STATUS_OK);
    const int F = DP_PRETRAINED_FEATURES;
    int off_best = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        dp_rng_seed(&rng, seed);
        CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_HEAVY, 1, &rng, NULL, f.a, &tr, NULL, &err) == 0);
        int32_t drawn = 0;
        float drawn_min = INFINITY, kept_max = -INFINITY;
        for (int32_t i = 0; i < tr.n_steps; i++) {
            dp_pretrained_step *st = &tr.steps[i];
            if (dp_mask_count(st->cand) < 2) continue;
            const float *rows = tr.rows + (size_t)i * tr.n_devices * F;
            pretrained_forward(p, rows, tr.n_devices, &a);
            int32_t best = -1;
            for (dp_mask m = st->cand; m; m &= m - 1) {
                int32_t d = dp_mask_first(m);
                if (best < 0 || a.score[d] > a.score[best]) best = d;
            }
            float compute = rows[(size_t)st->action * F + PF_COMPUTE];
            TEST_CASE("seed %d step %d", (int)seed, i);
            if (st->drawn) {
                drawn++, off_best += st->action != best;
                if (compute < drawn_min) drawn_min = compute;
            } else {
                CHECK_INT_EQ(st->action, best);
                if (compute > kept_max) kept_max = compute;
            }
        }
        CHECK(drawn > 0 && drawn <= heavy);
        CHECK(drawn_min >= kept_max);
    }
    CHECK(off_best > 0);
    dp_pretrained_trace_free(&tr);
    pretrained_acts_free(&a);
    dp_pretrained_policy_free(p);
    close_fixture(&f);
}

/* A sampled placement replayed as a teacher's sees the same decisions: at
 * every step the same offer, the same rows and the same device (what
 * imitating the policy's own placements relies on). */
static void test_sample_replays_as_teacher(void) {
    fixture f = open_fixture("rnnlm", "k40x4");
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 5, &err);
    CHECK(p);
    dp_pretrained_trace t1, t2;
    CHECK(dp_pretrained_trace_init(&t1, f.c, &err) == DP_STATUS_OK);
    CHECK(dp_pretrained_trace_init(&t2, f.c, &err) == DP_STATUS_OK);
    dp_rng rng;
    dp_rng_seed(&rng, 3);
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_SAMPLE, 1, &rng, NULL, f.a, &t1, NULL, &err) == DP_STATUS_OK);
    CHECK(dp_pretrained_decode(f.c, NULL, DP_PRETRAINED_TEACHER, 1, NULL, f.a, f.b, &t2, NULL, &err) == DP_STATUS_OK);
    CHECK(!memcmp(f.a, f.b, sizeof(int32_t) * (size_t)f.g->n_ops));
    CHECK(t1.n_steps > 0);
    CHECK_INT_EQ(t1.n_steps, t2.n_steps);
    size_t row = (size_t)t1.n_devices * DP_PRETRAINED_FEATURES;
    for (int32_t i = 0; i < t1.n_steps; i++) {
        TEST_CASE("step %d", i);
        CHECK(t1.steps[i].cand == t2.steps[i].cand);
        CHECK_INT_EQ(t1.steps[i].action, t2.steps[i].action);
        CHECK(!memcmp(t1.rows + i * row, t2.rows + i * row, sizeof(float) * row));
    }
    dp_pretrained_trace_free(&t1);
    dp_pretrained_trace_free(&t2);
    dp_pretrained_policy_free(p);
    close_fixture(&f);
}

static void test_gradient_raises_logp(void) {
    fixture f = open_fixture("rnnlm", "k40x4");
    dp_error err;
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 5, &err);
    dp_pretrained_trace tr;
    CHECK(dp_pretrained_trace_init(&tr, f.c, &err) == DP_STATUS_OK);
    dp_rng rng;
    dp_rng_seed(&rng, 4);
    double before, after;
    CHECK(dp_pretrained_decode(f.c, p, DP_PRETRAINED_SAMPLE, 1, &rng, NULL, f.a, &tr, &before, &err) == 0);
    dp_pretrained_grad *g = dp_pretrained_grad_init(p, &err);
    CHECK(g);
    for (int it = 0; it < 5; it++) {
        dp_pretrained_grad_zero(g);
        double ent = dp_pretrained_grad_add(g, p, &tr, 1.0);
        CHECK(ent > 0);
        CHECK(dp_pretrained_grad_step(g, p, 1e-2, 0) > 0);
    }
    /* the same placement's log-probability under the updated policy: decode
     * with the teacher's actions and sum the softmax at them */
    dp_pretrained_trace t2;
    CHECK(dp_pretrained_trace_init(&t2, f.c, &err) == DP_STATUS_OK);
    CHECK(dp_pretrained_decode(f.c, NULL, DP_PRETRAINED_TEACHER, 1, NULL, f.a, f.b, &t2, NULL, &err) == 0);
    after = dp_pretrained_trace_logp(p, &t2);
    double again = dp_pretrained_trace_logp(p, &tr);
    CHECK(fabs(again - after) < 1e-3 * fabs(after) + 1e-6); /* the replay's rows are the sample's */
    CHECK(after > before + 1e-3);
    dp_pretrained_grad_free(g);
    dp_pretrained_trace_free(&tr), dp_pretrained_trace_free(&t2);
    dp_pretrained_policy_free(p);
    close_fixture(&f);
}

/* The method's zero-shot answer under the run driver, both phases (the
 * policy's units, then whole layers): the same with 1 and 2 threads, and at
 * least as good as the greedy placement. */
static double zero_shot(int32_t threads, int64_t updates, double *greedy) {
    dp_error err;
    dp_graph *g = dp_zoo_build("rnnlm", 0, &err);
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    eo.threads = threads;
    dp_pretrained_options o = dp_pretrained_options_default();
    o.zero_shot = 12, o.zero_shot_s = o.layer_s = 1e9;
    dp_pretrained *pt = dp_pretrained_init(g, ds, dp_pretrained_policy_random(16, 8, 2, &err), &o, &eo, &err);
    CHECK(pt);
    dp_run_options ro = dp_run_options_default();
    ro.max_updates = updates;
    dp_run_result rr;
    CHECK(dp_run(dp_pretrained_method(pt), &ro, NULL, &rr, &err) == DP_STATUS_OK);
    const dp_run_state *s = dp_pretrained_method(pt).ops->state(pt);
    CHECK(s->prep_done == 24 && s->samples >= 26 + updates * o.samples && isfinite(s->final_s));
    *greedy = s->final_s;
    double best = s->best_s;
    dp_pretrained_free(pt);
    dp_devices_free(ds);
    dp_graph_free(g);
    return best;
}

static void test_zero_shot_threads_agree(void) {
    double g1, g2;
    double a = zero_shot(1, 0, &g1), b = zero_shot(2, 0, &g2);
    CHECK(a == b && g1 == g2);
    CHECK(a <= g1);
}

/* The zero-shot samples are the same whatever chunks the run driver asks
 * for them in (its chunks follow the machine's speed): 24 chunks of one
 * against two of 12, one a phase. */
static void test_zero_shot_chunks_agree(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("rnnlm", 0, &err);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_pretrained_options o = dp_pretrained_options_default();
    o.zero_shot = 12, o.zero_shot_s = o.layer_s = 1e9;
    double best[2];
    int32_t *place[2];
    for (int run = 0; run < 2; run++) {
        dp_pretrained *pt = dp_pretrained_init(g, ds, dp_pretrained_policy_random(16, 8, 2, &err), &o, &eo, &err);
        CHECK(pt);
        dp_method m = dp_pretrained_method(pt);
        for (int c = 0; c < (run ? 2 : 24); c++) CHECK(m.ops->prepare(pt, run ? 12 : 1, &err) == DP_STATUS_OK);
        const dp_run_state *s = m.ops->state(pt);
        CHECK(s->prep_done == 24 && s->prep_total == 24 && s->best_placement);
        best[run] = s->best_s;
        CHECK(place[run] = malloc(sizeof(int32_t) * (size_t)g->n_ops));
        memcpy(place[run], s->best_placement, sizeof(int32_t) * (size_t)g->n_ops);
        dp_pretrained_free(pt);
    }
    CHECK(best[0] == best[1] && !memcmp(place[0], place[1], sizeof(int32_t) * (size_t)g->n_ops));
    free(place[0]), free(place[1]);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* The zero-shot's best names the kind of sample that found it, which
 * follows from the sample's index: every fourth from the third a heavy
 * draw (the graph has heavy units), the other odd ones opening draws, the
 * rest every decision drawn; in the second phase, a placement of whole
 * layers. One sample a chunk, so each new best is the chunk's sample. */
static void test_zero_shot_best_names_its_draw(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("rnnlm", 0, &err);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_pretrained_options o = dp_pretrained_options_default();
    o.zero_shot = 24, o.zero_shot_s = o.layer_s = 1e9, o.heavy_share = 0.01;
    dp_pretrained *pt = dp_pretrained_init(g, ds, dp_pretrained_policy_random(16, 8, 2, &err), &o, &eo, &err);
    CHECK(pt);
    dp_method m = dp_pretrained_method(pt);
    const dp_run_state *s = m.ops->state(pt);
    static const int32_t kind[4] = {DP_RUN_BEST_BY_SAMPLE, DP_RUN_BEST_BY_OPENING_DRAW, DP_RUN_BEST_BY_HEAVY_DRAW,
                                    DP_RUN_BEST_BY_OPENING_DRAW};
    int found = 0;
    for (int32_t k = 0; k < o.zero_shot; k++) {
        double before = k ? s->best_s : INFINITY;
        CHECK(m.ops->prepare(pt, 1, &err) == DP_STATUS_OK);
        TEST_CASE("sample %d", k);
        if (k == 0 && s->best_by == DP_RUN_BEST_BY_GREEDY) continue;
        if (s->best_s < before) {
            CHECK_INT_EQ(s->best_by, kind[k % 4]);
            found |= 1 << (k % 4);
        }
    }
    CHECK(found & ~1); /* a draw of the two zero-shot kinds was the best once */
    CHECK(s->prep_total == 2 * o.zero_shot);
    int layers = 0;
    for (int32_t k = 0; k < o.zero_shot; k++) {
        double before = s->best_s;
        CHECK(m.ops->prepare(pt, 1, &err) == DP_STATUS_OK);
        TEST_CASE("layer phase, sample %d", k);
        if (s->best_s < before) {
            CHECK_INT_EQ(s->best_by, DP_RUN_BEST_BY_LAYERS);
            layers++;
        }
    }
    CHECK(layers > 0); /* and a placement of whole layers was, once */
    CHECK(s->prep_done == s->prep_total);
    dp_pretrained_free(pt);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Fine-tuning: each sample's gradient summed in sample order, so two
 * updates end at the same policy (its greedy placement's time) with 1 and
 * 3 threads. */
static void test_tuning_threads_agree(void) {
    double g1, g2;
    double a = zero_shot(1, 2, &g1), b = zero_shot(3, 2, &g2);
    CHECK(a == b && g1 == g2);
}

/* The job runs the placer by its name: zero-shot, one fine-tuning update;
 * a learned agent's setting is refused for it, its own for others. */
static void test_optimize_runs_pretrained(void) {
    dp_error err;
    dp_graph *g = dp_zoo_build("rnnlm", 0, &err);
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    const char *path = tmp_path("job.dpp");
    dp_pretrained_policy *p = dp_pretrained_policy_random(16, 8, 2, &err);
    CHECK(dp_pretrained_policy_save(p, path, &err) == DP_STATUS_OK);
    dp_pretrained_policy_free(p);
    dp_optimize_options o = dp_optimize_options_default();
    o.g = g, o.ds = ds, o.agent = "pretrained", o.max_updates = 1, o.baselines = "none";
    o.init_policy_path = path;
    dp_optimize_set sets[] = {{"zero-shot", "4"}, {"tune-samples", "4"}};
    o.sets = sets, o.n_sets = 2;
    dp_optimize *op = dp_optimize_init(&o, &err);
    CHECK(op);
    CHECK(dp_optimize_run(op, NULL, &err) == DP_STATUS_OK);
    dp_optimize_best b;
    dp_optimize_get_best(op, &b);
    CHECK(b.placement && isfinite(b.step_time_s));
    char *json = dp_optimize_json(op, 0, 10, &err);
    CHECK_STR_CONTAINS(json, "\"agent\": \"pretrained\"");
    CHECK_STR_CONTAINS(json, "zero-shot=4");
    free(json);
    CHECK_INT_EQ(dp_optimize_state(op)->updates, 1);
    dp_optimize_free(op);
    dp_optimize_set agent_set[] = {{"lr", "0.1"}};
    o.sets = agent_set, o.n_sets = 1;
    dp_optimize_plan plan;
    CHECK(dp_optimize_prepare(&o, &plan, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "learned agent's");
    o.agent = "hp", o.sets = sets, o.n_sets = 1, o.init_policy_path = NULL;
    CHECK(dp_optimize_prepare(&o, &plan, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "pretrained placer's");
    o.agent = "pretrained", o.n_sets = 0, o.checkpoint_path = "x.ckpt";
    CHECK(dp_optimize_prepare(&o, &plan, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "no checkpoint");
    unlink(path);
    dp_devices_free(ds);
    dp_graph_free(g);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_policy_roundtrip);
    TEST_RUN(test_policy_corrupt_refused);
    TEST_RUN(test_policy_incompatible_refused);
    TEST_RUN(test_default_policy_loads);
    TEST_RUN(test_teacher_replays_exactly);
    TEST_RUN(test_decode_order_layer_by_layer);
    TEST_RUN(test_layer_context_joins_layers);
    TEST_RUN(test_identical_devices_one_target);
    TEST_RUN(test_sampling_seeded);
    TEST_RUN(test_openings_draw_only_openings);
    TEST_RUN(test_heavy_draws_heavy_units);
    TEST_RUN(test_sample_replays_as_teacher);
    TEST_RUN(test_gradient_raises_logp);
    TEST_RUN(test_zero_shot_threads_agree);
    TEST_RUN(test_tuning_threads_agree);
    TEST_RUN(test_zero_shot_chunks_agree);
    TEST_RUN(test_zero_shot_best_names_its_draw);
    TEST_RUN(test_optimize_runs_pretrained);
    return test_end();
}
