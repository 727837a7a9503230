/* Tests of the learned placers (src/agent): on small graphs whose best
 * placement is known by construction, both presets find it within a small
 * budget; the reward baseline, the failing signal, the noise schedule and
 * valid-only updates behave as specified; checkpoint then resume equals the
 * uninterrupted run; bad checkpoints and settings are refused clearly. The
 * networks are shrunk (--set hidden=16 ...) so that the suite stays fast;
 * every algorithmic setting is the preset's. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "dplace/agent.h"
#include "dplace/cost.h"
#include "dplace/run.h"
#include "dplace/sim.h"
#include "test_fixtures.h"
#include "test_util.h"

enum { CPU = 0, G0 = 1, G1 = 2 };
#define GIB ((uint64_t)1 << 30)

/* An op of `secs` on a GPU, 10x that on the CPU, one output of out_bytes. */
static int32_t add(dp_graph *g, const char *name, const char *scope, double secs, uint64_t out_bytes, uint64_t params,
                   int32_t in) {
    dp_error err;
    int32_t id = dp_graph_add_op(g, name, "MatMul", scope, NULL, &err);
    CHECK(id >= 0);
    if (in >= 0) CHECK(dp_graph_add_input(g, id, in, 0, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_output_bytes(g, id, out_bytes, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "gpu", secs, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "cpu", 10 * secs, &err) == DP_STATUS_OK);
    g->ops[id].param_bytes = params;
    return id;
}

/* Two independent chains of 4 one-second ops: best on two GPUs (4 s plus
 * small transfers), 8 s on one. params: bytes on each chain's first op.
 * Each chain op also feeds a small side op (as a summary would), so that
 * ColocRL's rule (an op consumed by one single op joins it) does not fold
 * the chains into the join. Op order: in, chain0 (op, side) x 4, chain1
 * (op, side) x 4, join. */
static dp_graph *two_chains_bytes(uint64_t params, uint64_t inner_bytes) {
    dp_graph *g = dp_graph_init("two_chains");
    int32_t in = add(g, "in", "input", 0.001, 1024, 0, -1);
    int32_t ends[2];
    for (int c = 0; c < 2; c++) {
        int32_t prev = in;
        for (int k = 0; k < 4; k++) {
            char name[32], scope[32];
            snprintf(name, sizeof name, "chain%d/op%d", c, k);
            snprintf(scope, sizeof scope, "chain%d/cell%d", c, k);
            prev = add(g, name, scope, 1.0, k < 3 ? inner_bytes : 1024, k == 0 ? params : 0, prev);
            snprintf(name, sizeof name, "chain%d/side%d", c, k);
            add(g, name, scope, 0.001, 16, 0, prev);
        }
        ends[c] = prev;
    }
    dp_error err;
    int32_t out = dp_graph_add_op(g, "join", "AddN", "join", NULL, &err);
    CHECK(dp_graph_add_input(g, out, ends[0], 0, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_input(g, out, ends[1], 0, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_output_bytes(g, out, 1024, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, out, "gpu", 0.001, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, out, "cpu", 0.01, &err) == DP_STATUS_OK);
    fixture_finalize(g);
    return g;
}

static dp_graph *two_chains(uint64_t params) { return two_chains_bytes(params, 1024); }

/* A chain of 8 one-second ops with 1 GB outputs: any split adds 0.1 s
 * transfers, so the best is every op on one GPU (8 s). */
static dp_graph *heavy_chain(void) {
    dp_graph *g = dp_graph_init("heavy_chain");
    int32_t prev = -1;
    for (int k = 0; k < 8; k++) {
        char name[32], scope[32];
        snprintf(name, sizeof name, "op%d", k);
        snprintf(scope, sizeof scope, "layer%d", k);
        prev = add(g, name, scope, 1.0, 1000000000, 0, prev);
    }
    fixture_finalize(g);
    return g;
}

/* A preset shrunk for tests: small networks, the preset's algorithm. */
static dp_agent_config small(const char *preset) {
    dp_agent_config c;
    CHECK(agent_preset(preset, &c) == 0);
    dp_error err;
    const char *kv[][2] = {{"hidden", "16"}, {"attn-dim", "16"}, {"dev-emb", "8"}, {"groups", "4"},
                           {"grouper-hidden", "16"}, {"type-dim", "4"}};
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) CHECK(dp_agent_config_set(&c, kv[k][0], kv[k][1], &err) == 0);
    return c;
}

/* Trains `updates` updates and returns the best valid step time. */
static double train(const dp_graph *g, const dp_devices *ds, const dp_agent_config *c, uint64_t seed, int updates) {
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent *a = dp_agent_init(g, ds, c, &eo, seed, &err);
    if (!a) fprintf(stderr, "%s\n", err.msg);
    CHECK(a);
    for (int u = 0; u < updates; u++) CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
    const dp_run_state *s = dp_agent_get_state(a);
    double best = s->best_s;
    if (s->best_placement) {
        dp_sim_result r = fixture_simulate(g, ds, s->best_placement);
        CHECK_NEAR(r.step_time_s, best, 1e-12); /* the placement is the one timed */
        CHECK(r.valid);
    }
    dp_agent_free(a);
    return best;
}

/* Every preset reaches the known best of each small graph within 800
 * placements: two chains on two GPUs, a graph that does not fit on one
 * GPU, a chain that must not be split. */
static void test_presets_find_known_best(void) {
    dp_devices *big = fixture_devices(2, 16 * GIB, 1e10), *tight = fixture_devices(2, 8 * GIB, 1e10);
    dp_graph *chains = two_chains(0), *fat = two_chains(5 * GIB), *chain = heavy_chain();
    int32_t split[18], one[18];
    for (int i = 0; i < 18; i++) split[i] = i >= 9 && i < 17 ? G1 : G0, one[i] = G0;
    dp_sim_result r = fixture_simulate(chains, big, split);
    CHECK(r.valid);
    double t_split = r.step_time_s;
    CHECK(t_split < 4.1);
    CHECK(!fixture_simulate(fat, tight, one).valid); /* 10 GiB of parameters do not fit one 8 GiB GPU */
    r = fixture_simulate(fat, tight, split);
    CHECK(r.valid);
    double t_fat = r.step_time_s;
    double t_chain = fixture_simulate(chain, big, one).step_time_s;
    CHECK_NEAR(t_chain, 8.0, 1e-9);
    const char *presets[] = {"hp", "colocrl", "eagle", "eagle-ppo-ce", "post"};
    for (int p = 0; p < 5; p++) {
        TEST_CASE("preset %s", presets[p]);
        dp_agent_config c = small(presets[p]);
        int updates = p < 2 ? 200 : 80; /* 800 placements; the PPO presets sample 10 per update */
        /* Post places METIS groups, and the learned groupers start from them
         * (grouper-prior): 4 parts of these 18-op graphs mix the two chains,
         * so no placement of them reaches the best; 8 do not */
        if (p != 1) CHECK(dp_agent_config_set(&c, "groups", "8", NULL) == 0);
        double b1 = train(chains, big, &c, 3, updates), b2 = train(fat, tight, &c, 3, updates),
               b3 = train(chain, big, &c, 3, updates);
        printf("  %s: two chains %.4f (best %.4f), no fit %.4f (best %.4f), chain %.4f (best %.4f)\n", presets[p], b1,
               t_split, b2, t_fat, b3, t_chain);
        fflush(stdout);
        /* the hand-made best within 0.1% (1 ms of 4 s: where the tiny input
         * and join ops go; a chain op on the wrong device costs 1 s) */
        CHECK(b1 <= t_split * (1 + 1e-3));
        CHECK(b2 <= t_fat * (1 + 1e-3));
        CHECK(b3 <= t_chain * (1 + 1e-3));
    }
    dp_graph_free(chains), dp_graph_free(fat), dp_graph_free(chain);
    dp_devices_free(big), dp_devices_free(tight);
}

/* The baseline of hp: an exponential moving average started by the first
 * reward. */
static void test_baseline_moving_average(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = heavy_chain();
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("hp");
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 1, &err);
    CHECK(a);
    agent_baseline_add(&a->baseline, &a->cfg, -2.0);
    CHECK_NEAR(a->baseline.value, -2.0, 1e-12);
    agent_baseline_add(&a->baseline, &a->cfg, -3.0);
    CHECK_NEAR(a->baseline.value, 0.9 * -2.0 + 0.1 * -3.0, 1e-6); /* decay 0.9f */
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The baseline of ColocRL: a simple moving average over a window of 10,
 * started at the failing reward (automatic: -sqrt(10 x the serial time on
 * gpu:0)). */
static void test_baseline_window_from_failing_reward(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = heavy_chain();
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("colocrl"); /* window 10, started at the failing reward */
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 1, &err);
    CHECK(a);
    double f = a->fail_reward;
    CHECK_NEAR(f, -sqrt(10.0 * 8.0), 1e-9); /* automatic: -sqrt(10 x serial time on gpu:0) */
    CHECK_NEAR(a->st.baseline, f, 1e-12);
    agent_baseline_add(&a->baseline, &a->cfg, -1.0);
    CHECK_NEAR(a->baseline.value, (9 * f - 1.0) / 10, 1e-9);
    for (int k = 0; k < 9; k++) agent_baseline_add(&a->baseline, &a->cfg, -1.0);
    CHECK_NEAR(a->baseline.value, -1.0, 1e-12);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* One op that must run on a GPU and needs more than a GPU holds (every
 * placement is out of memory), then another. */
static dp_graph *never_fits(void) {
    dp_graph *g = dp_graph_init("never_fits");
    dp_error err;
    int32_t a0 = dp_graph_add_op(g, "big", "MatMul", NULL, NULL, &err);
    CHECK(dp_graph_add_output_bytes(g, a0, 1024, &err) == 0);
    g->ops[a0].param_bytes = 9 * GIB;
    g->ops[a0].device.kind = DP_DEVCON_GPU;
    g->ops[a0].device.index = -1;
    int32_t a1 = add(g, "next", NULL, 1.0, 1024, 0, a0);
    (void)a1;
    fixture_finalize(g);
    return g;
}

/* An hp agent (valid-only-after 2) on never_fits, on GPUs of 8 GiB. */
static dp_agent *never_fits_agent(const dp_graph *g, const dp_devices *ds) {
    dp_error err;
    dp_agent_config c = small("hp");
    CHECK(dp_agent_config_set(&c, "valid-only-after", "2", &err) == 0);
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 5, &err);
    if (!a) fprintf(stderr, "%s\n", err.msg);
    CHECK(a);
    return a;
}

/* An invalid placement gets the failing reward (the paper's -10) and is
 * logged with its reason; there is no best. */
static void test_invalid_sample_gets_failing_reward(void) {
    dp_devices *ds = fixture_devices(2, 8 * GIB, 1e10);
    dp_graph *g = never_fits();
    dp_agent *a = never_fits_agent(g, ds);
    dp_error err;
    const dp_run_state *s = dp_agent_get_state(a);
    for (int u = 0; u < 4; u++) {
        TEST_CASE("update %d", u + 1);
        CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
        for (int k = 0; k < s->n_last; k++) {
            CHECK(!s->last[k].valid);
            CHECK_NEAR(s->last[k].reward, -10.0, 1e-12); /* the paper's -10 */
            CHECK_STR_CONTAINS(s->last[k].reason, "out of memory");
        }
    }
    test_case_[0] = '\0';
    CHECK(isinf(s->best_s) && !s->best_placement);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* After valid_only_after updates, invalid samples neither train nor move
 * the baseline; before, they train. */
static void test_valid_only_after(void) {
    dp_devices *ds = fixture_devices(2, 8 * GIB, 1e10);
    dp_graph *g = never_fits();
    dp_agent *a = never_fits_agent(g, ds);
    dp_error err;
    const dp_run_state *s = dp_agent_get_state(a);
    float *before = malloc(sizeof(float) * a->params.count);
    for (int u = 0; u < 4; u++) {
        TEST_CASE("update %d", u + 1);
        memcpy(before, a->params.data, sizeof(float) * a->params.count);
        double b0 = s->baseline;
        CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
        int changed = memcmp(before, a->params.data, sizeof(float) * a->params.count) != 0;
        int stepped = a->params.step == u + 1; /* an Adam step was taken this update */
        for (int k = 0; k < s->n_last; k++) CHECK_INT_EQ(s->last[k].used, u < 2);
        if (u < 2) CHECK(stepped); /* early: invalid samples train (advantage 0 here: all equal) */
        else {
            CHECK(!changed && a->params.step == 2); /* later: they do not */
            CHECK_NEAR(s->baseline, b0, 0.0);   /* nor move the baseline */
        }
    }
    free(before);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Rewards: -sqrt(t) when valid; the failing reward when not; with
 * oom-shaped, an out-of-memory placement the simulator timed gets
 * -sqrt(t) (1.25 + 4 (r - 1)), one it could not time the failing reward. */
static void test_rewards(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = heavy_chain();
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("hp");
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 1, &err);
    CHECK(a);
    agent_result ok = {4.0, 1, 0, 0.0, ""}, oom = {4.0, 0, 0, 0.5, "out of memory"}, bad = {NAN, 0, 0, 0.0, "x"};
    CHECK_NEAR(agent_reward(&a->cfg, a->fail_reward, &ok), -2.0, 1e-12);
    CHECK_NEAR(agent_reward(&a->cfg, a->fail_reward, &oom), -10.0, 1e-12);
    CHECK_NEAR(agent_reward(&a->cfg, a->fail_reward, &bad), -10.0, 1e-12);
    a->cfg.train.oom_shaped = 1;
    CHECK_NEAR(agent_reward(&a->cfg, a->fail_reward, &oom), -2.0 * (1.25 + 4.0 * 0.5), 1e-12);
    CHECK_NEAR(agent_reward(&a->cfg, a->fail_reward, &bad), -10.0, 1e-12); /* no time: still the failing reward */
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The entropy bonus trains even when every advantage is zero: on a one-op
 * graph constrained to the GPUs (1 s on either, so every placement has the
 * same reward), the first update moves the weights with the bonus and not
 * without it. */
static void test_zero_advantages_train_with_entropy(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_graph *one = dp_graph_init("one");
    int32_t only = add(one, "only", NULL, 1.0, 16, 0, -1);
    one->ops[only].device.kind = DP_DEVCON_GPU;
    one->ops[only].device.index = -1;
    fixture_finalize(one);
    for (int e = 0; e < 2; e++) {
        TEST_CASE("entropy %s", e ? "0.5" : "0");
        dp_agent_config h = small("hp");
        CHECK(dp_agent_config_set(&h, "entropy", e ? "0.5" : "0", &err) == 0);
        CHECK(dp_agent_config_set(&h, "noise-updates", "0", &err) == 0);
        CHECK(dp_agent_config_set(&h, "elite-moves", "0", &err) == 0); /* the paper's update: no cross-entropy step */
        dp_agent *b = dp_agent_init(one, ds, &h, &eo, 1, &err);
        CHECK(b);
        /* the first update: the baseline starts at the mean reward, so with
         * equal rewards every advantage is zero */
        float *before = malloc(sizeof(float) * b->params.count);
        memcpy(before, b->params.data, sizeof(float) * b->params.count);
        CHECK(dp_agent_update(b, &err) == 0);
        const dp_run_state *s = dp_agent_get_state(b);
        for (int k = 1; k < s->n_last; k++) CHECK(s->last[k].reward == s->last[0].reward);
        int changed = memcmp(before, b->params.data, sizeof(float) * b->params.count) != 0;
        CHECK_INT_EQ(changed, e); /* zero advantages: only the entropy bonus moves the weights */
        free(before);
        dp_agent_free(b);
    }
    dp_graph_free(one);
    dp_devices_free(ds);
}

/* Two tensors, "encoder" (3 of 1.0) and "placer" (2 of 2.0), and hp's
 * settings (clipped per network). */
static void optimizer_params(dp_nn_params *p, dp_agent_config *c) {
    dp_nn_tensor_spec s[2] = {{"encoder", 3, DP_NN_INIT_CONST, 1.0f}, {"placer", 2, DP_NN_INIT_CONST, 2.0f}};
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    CHECK(dp_nn_params_init(p, s, 2, &rng, NULL) == DP_STATUS_OK);
    CHECK(agent_preset("hp", c) == 0);
    CHECK(c->train.clip > 0 && c->train.clip_per_network);
}

/* An optimiser step whose gradient norm is not finite (a backward that
 * overflowed) is skipped: parameters, Adam moments and step count stay as
 * they were. */
static void test_optimizer_skips_nonfinite(void) {
    dp_nn_params p;
    dp_agent_config c;
    optimizer_params(&p, &c);
    dp_nn_adam adam = dp_nn_adam_default();
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 3; b++)
        for (size_t at = 0; at < p.count; at++) {
            TEST_CASE("gradient %g at %zu", bad[b], at);
            for (size_t i = 0; i < p.count; i++) p.grad[i] = 0.5f;
            p.grad[at] = bad[b];
            double norms[2];
            CHECK_INT_EQ(agent_optimizer_step(&p, &adam, &c, 1, 0.1f, 0.1f, norms), 0);
            CHECK(!isfinite(norms[at < 3 ? 0 : 1]));
            CHECK_INT_EQ(p.step, 0);
            for (size_t i = 0; i < p.count; i++) {
                CHECK_NEAR(p.data[i], i < 3 ? 1.0 : 2.0, 0.0);
                CHECK_NEAR(p.m[i], 0.0, 0.0);
                CHECK_NEAR(p.v[i], 0.0, 0.0);
            }
        }
    dp_nn_params_free(&p);
}

/* A finite step is taken and clipped per network. */
static void test_optimizer_clips_per_network(void) {
    dp_nn_params p;
    dp_agent_config c;
    optimizer_params(&p, &c);
    dp_nn_adam adam = dp_nn_adam_default();
    for (size_t i = 0; i < p.count; i++) p.grad[i] = 100.0f; /* norms sqrt(3) 100 and sqrt(2) 100, clipped to 1 */
    double norms[2];
    CHECK_INT_EQ(agent_optimizer_step(&p, &adam, &c, 1, 0.1f, 0.1f, norms), 1);
    CHECK_NEAR(norms[0], 100.0 * sqrt(3.0), 1e-3);
    CHECK_NEAR(norms[1], 100.0 * sqrt(2.0), 1e-3);
    CHECK_INT_EQ(p.step, 1);
    CHECK_NEAR(p.data[0], 0.9, 1e-6); /* Adam's first step: lr along the gradient's sign */
    CHECK_NEAR(p.data[3], 1.9, 1e-6);
    CHECK_NEAR(p.m[0], 0.1 / sqrt(3.0), 1e-6); /* the clipped gradient 1/sqrt(3) */
    dp_nn_params_free(&p);
}

/* Logit noise only for the first noise_updates updates, and it changes what
 * is sampled. */
static void test_noise_schedule(void) {
    dp_agent_config c;
    CHECK(agent_preset("hp", &c) == 0);
    CHECK_NEAR(agent_noise_at(&c, 0), 0.1, 1e-7);
    CHECK_NEAR(agent_noise_at(&c, 499), 0.1, 1e-7);
    CHECK_NEAR(agent_noise_at(&c, 500), 0.0, 0.0);
    CHECK(agent_preset("colocrl", &c) == 0);
    CHECK_NEAR(agent_noise_at(&c, 0), 0.0, 0.0);
}


/* PPO's clipped surrogate: hand-worked values of its gradient with respect
 * to log p (eps 0.3). */
static void test_ppo_surrogate(void) {
    const double eps = 0.3, old = -2.0;
    /* r = 1: the plain policy gradient A */
    CHECK_NEAR(agent_ppo_grad(old, old, 0.7, eps), 0.7, 1e-12);
    /* r = 1.5 > 1.3: clipped for A > 0 (no gradient), r A for A < 0 */
    CHECK_NEAR(agent_ppo_grad(old + log(1.5), old, 2.0, eps), 0.0, 0.0);
    CHECK_NEAR(agent_ppo_grad(old + log(1.5), old, -2.0, eps), -3.0, 1e-12);
    /* r = 0.5 < 0.7: r A for A > 0, clipped for A < 0 */
    CHECK_NEAR(agent_ppo_grad(old + log(0.5), old, 2.0, eps), 1.0, 1e-12);
    CHECK_NEAR(agent_ppo_grad(old + log(0.5), old, -2.0, eps), 0.0, 0.0);
    /* inside the trust region: r A */
    CHECK_NEAR(agent_ppo_grad(old + log(1.2), old, -1.0, eps), -1.2, 1e-12);
}

/* PPO's clipped surrogate: its gradient equals finite differences of
 * min(r A, clip(r) A) away from the kinks. */
static void test_ppo_surrogate_fd(void) {
    const double eps = 0.3, old = -2.0;
    for (double d = -1.0; d <= 1.0; d += 0.0625)
        for (int s = -1; s <= 1; s += 2) {
            TEST_CASE("log ratio %g, advantage %g", d, 0.8 * s);
            double A = 0.8 * s, h = 1e-6, r = exp(d);
            if (fabs(r - (1 + eps)) < 1e-3 || fabs(r - (1 - eps)) < 1e-3) continue; /* kinks */
            double up = exp(d + h), dn = exp(d - h);
            double fu = fmin(up * A, fmin(fmax(up, 1 - eps), 1 + eps) * A);
            double fd = fmin(dn * A, fmin(fmax(dn, 1 - eps), 1 + eps) * A);
            CHECK_NEAR(agent_ppo_grad(old + d, old, A, eps), (fu - fd) / (2 * h), 1e-6);
        }
}

/* The PPO loss of the samples in a->devs [K, G] against old log-probs
 * (placer part): -1/K sum_k min(r_k A_k, clip(r_k) A_k) with sequence
 * ratios (old [K]), or -1/K sum_k sum_g min(r_kg A_k, clip(r_kg) A_k) with
 * per-decision ratios (old_step [K, G]). */
/* The placer's teacher-forced forward of the samples in a->devs. */
static void placer_teacher(dp_agent *a) {
    a->placer->ops->forward(a->placer, a->enc, a->devs, a->logp, a->logp_step, a->entropy, DP_NN_DECODE_MODE_TEACHER,
                            0.0f, &a->rng);
}

static double ppo_loss(dp_agent *a, const float *old, const float *old_step, const double *adv, double eps) {
    placer_teacher(a);
    double L = 0.0;
    for (int k = 0; k < a->K; k++) {
        int n = old_step ? a->T : 1;
        for (int t = 0; t < n; t++) {
            double r = old_step ? exp((double)a->logp_step[k * a->T + t] - old_step[k * a->T + t])
                                : exp((double)a->logp[k] - old[k]);
            L -= fmin(r * adv[k], fmin(fmax(r, 1 - eps), 1 + eps) * adv[k]) / a->K;
        }
    }
    return L;
}

/* Elements of the sampled placements in a->devs whose device choice the
 * memory mask restricted (some device would have overflowed). */
static int masked_choices(const dp_agent *a) {
    int n = 0;
    for (int k = 0; k < a->K; k++) {
        double load[8] = {0};
        for (int t = 0; t < a->T; t++) {
            int any = 0;
            for (int d = 0; d < a->D; d++) any |= load[d] + a->mem_w[t] > a->mem_cap[d];
            n += any;
            load[a->devs[k * a->T + t]] += a->mem_w[t];
        }
    }
    return n;
}

/* The gradient the agent takes for the PPO loss (agent_ppo_grad through
 * the placer's backward) equals finite differences of the loss, for the
 * table, GCN and seq2seq placers, with sequence and per-decision ratios,
 * with and without the memory mask, parameter by parameter. */
static void test_ppo_gradient_fd(void) {
    dp_devices *roomy = fixture_devices(2, 16 * GIB, 1e10), *tight = fixture_devices(2, 5 * GIB, 1e10);
    dp_graph *g = two_chains(0), *heavy = two_chains(3 * GIB);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    const char *placers[] = {"table", "gcn", "seq2seq-before"};
    for (int p = 0; p < 9; p++) {
        int decision = p >= 3, masked = p >= 6; /* the memory mask on a machine where it bites */
        TEST_CASE("%s placer, %s ratios%s", placers[p % 3], decision ? "decision" : "sequence",
                  masked ? ", memory mask" : "");
        const dp_devices *ds = masked ? tight : roomy;
        dp_agent_config c = small("post");
        CHECK(dp_agent_config_set(&c, "placer", placers[p % 3], &err) == 0);
        if (p % 3) CHECK(dp_agent_config_set(&c, "tanh-c", "5", &err) == 0);
        if (masked) CHECK(dp_agent_config_set(&c, "mem-mask", "yes", &err) == 0 &&
                          dp_agent_config_set(&c, "grouper", "none", &err) == 0);
        dp_agent *a = dp_agent_init(masked ? heavy : g, ds, &c, &eo, 5, &err);
        if (!a) fprintf(stderr, "%s\n", err.msg);
        CHECK(a);
        /* move the parameters so that ratios differ from 1 */
        for (size_t i = 0; i < a->params.count; i++) a->params.data[i] += 0.3f * (float)sin(1.7 * (double)i);
        CHECK(dp_agent_update(a, &err) == 0); /* draws samples into a->devs */
        if (masked) CHECK(masked_choices(a) > 0);
        int K = a->K, G = a->T;
        float old[64], old_step[64 * 64];
        double adv[64];
        placer_teacher(a);
        /* ratios e^-0.6, e^0.6 (clipped or not, by the advantage's sign) and
         * e^+-0.1 (inside): away from the kinks at 1 -+ 0.3, which a finite
         * difference must not straddle */
        const float off[4] = {0.6f, -0.6f, 0.1f, -0.1f};
        for (int k = 0; k < K; k++) old[k] = a->logp[k] + off[k % 4], adv[k] = (k % 3 == 0 ? -1.0 : 1.0) * (0.5 + 0.1 * k);
        for (int j = 0; j < K * G; j++) old_step[j] = a->logp_step[j] + off[(j + j / 4) % 4];
        ppo_loss(a, old, decision ? old_step : NULL, adv, 0.3);
        dp_nn_params_zero_grad(&a->params);
        for (int k = 0; k < K; k++) {
            a->dlogp[k] = decision ? 0.0f : (float)(-agent_ppo_grad(a->logp[k], old[k], adv[k], 0.3) / K);
            for (int t = 0; decision && t < G; t++)
                a->dstep[k * G + t] = (float)(-agent_ppo_grad(a->logp_step[k * G + t], old_step[k * G + t], adv[k], 0.3) / K);
        }
        a->placer->ops->backward(a->placer, NULL, a->devs, a->dlogp, decision ? a->dstep : NULL, NULL);
        int checked = 0;
        for (size_t i = 0; i < a->params.count; i += 1 + a->params.count / 60) {
            float keep = a->params.data[i];
            double h = 1e-3;
            a->params.data[i] = keep + (float)h;
            double up = ppo_loss(a, old, decision ? old_step : NULL, adv, 0.3);
            a->params.data[i] = keep - (float)h;
            double dn = ppo_loss(a, old, decision ? old_step : NULL, adv, 0.3);
            a->params.data[i] = keep;
            double num = (up - dn) / (2 * h), ana = a->params.grad[i];
            if (fabs(num - ana) > 2e-3 + 2e-2 * fabs(num)) {
                fprintf(stderr, "  %s placer, %s ratios%s: parameter %zu: analytic %.6g, numeric %.6g\n",
                        placers[p % 3], decision ? "decision" : "sequence", masked ? ", memory mask" : "", i, ana, num);
                CHECK(0);
            }
            checked++;
        }
        CHECK(checked > 10);
        dp_agent_free(a);
    }
    dp_graph_free(g), dp_graph_free(heavy);
    dp_devices_free(roomy), dp_devices_free(tight);
}

/* lp [T, D]: each element's log-probability of each device under the
 * batch-of-one placer (teacher-forced with every element on device d). */
static void element_logp(dp_agent *a, float *lp) {
    agent_placer *p1 = agent_placer_one(a);
    CHECK(p1);
    a->enc->ops->forward(a->enc, DP_NN_DECODE_MODE_TEACHER, 0.0f, &a->rng);
    for (int d = 0; d < a->D; d++) {
        float logp, ent;
        for (int t = 0; t < a->T; t++) a->devs1[t] = d;
        p1->ops->forward(p1, a->enc, a->devs1, &logp, a->step1, &ent, DP_NN_DECODE_MODE_TEACHER, 0.0f, &a->rng);
        for (int t = 0; t < a->T; t++) lp[t * a->D + d] = a->step1[t];
    }
}

/* The memory mask: on GPUs of 5 GiB and two chains whose first ops hold 3
 * GiB of parameters each, a placement with both on one GPU is out of
 * memory; with mem-mask no sample is (the estimate is conservative), for
 * the table and the seq2seq placers alike, while without it some are. */
static void test_memory_mask(void) {
    dp_devices *ds = fixture_devices(2, 5 * GIB, 1e10);
    dp_graph *g = two_chains(3 * GIB);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    const char *placers[] = {"table", "seq2seq-after"};
    for (int p = 0; p < 2; p++) {
        int invalid[2] = {0, 0};
        for (int mask = 0; mask < 2; mask++) {
            TEST_CASE("%s placer, mem-mask %s", placers[p], mask ? "yes" : "no");
            dp_agent_config c = small("post");
            CHECK(dp_agent_config_set(&c, "placer", placers[p], &err) == 0);
            CHECK(dp_agent_config_set(&c, "grouper", "none", &err) == 0);
            CHECK(dp_agent_config_set(&c, "mem-mask", mask ? "yes" : "no", &err) == 0);
            dp_agent *a = dp_agent_init(g, ds, &c, &eo, 3, &err);
            CHECK(a);
            const dp_run_state *s = dp_agent_get_state(a);
            for (int u = 0; u < 10; u++) {
                CHECK(dp_agent_update(a, &err) == 0);
                for (int k = 0; k < s->n_last; k++) invalid[mask] += !s->last[k].valid;
            }
            dp_agent_free(a);
        }
        printf("  %s placer: %d invalid samples of 100 without the mask, %d with\n", placers[p], invalid[0], invalid[1]);
        TEST_CASE("%s placer", placers[p]);
        CHECK(invalid[0] > 0);
        CHECK_INT_EQ(invalid[1], 0);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The table placer reads no group sequence: it takes any number of groups
 * (an op each on a 5,000-op graph, beyond the sequence placers' 4,096). */
static void test_table_takes_many_groups(void) {
    dp_error err;
    dp_graph *g = dp_graph_synth(5000, 7, &err);
    CHECK(g);
    dp_devices *ds = fixture_devices(2, 64 * GIB, 1e10);
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("post");
    CHECK(dp_agent_config_set(&c, "grouper", "none", &err) == 0);
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 1, &err);
    if (!a) fprintf(stderr, "%s\n", err.msg);
    CHECK(a);
    const dp_run_state *s = dp_agent_get_state(a);
    CHECK_INT_EQ(s->n_groups, g->n_ops);
    CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
    CHECK(s->n_last > 0);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A sequence placer on that grouping (over 4,096 groups) is refused by
 * name. */
static void test_sequence_placer_refuses_many_groups(void) {
    dp_error err;
    dp_graph *g = dp_graph_synth(5000, 7, &err);
    CHECK(g);
    dp_devices *ds = fixture_devices(2, 64 * GIB, 1e10);
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("post");
    CHECK(dp_agent_config_set(&c, "grouper", "none", &err) == 0);
    CHECK(dp_agent_config_set(&c, "placer", "seq2seq-after", &err) == 0);
    CHECK(dp_agent_init(g, ds, &c, &eo, 1, &err) == NULL);
    CHECK(strstr(err.msg, "4096") != NULL);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* grouper-prior: the learned grouper's sampled grouping at the start is
 * mostly the prior's (entropy far below uniform). */
static void test_grouper_prior_lowers_entropy(void) {
    dp_devices *ds = fixture_devices(2, 64 * GIB, 1e10);
    dp_graph *g = two_chains(GIB);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("hp");
    CHECK(dp_agent_config_set(&c, "grouper-prior", "metis", &err) == 0);
    CHECK(dp_agent_config_set(&c, "noise-amp", "0", &err) == 0);
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 5, &err);
    if (!a) fprintf(stderr, "%s\n", err.msg);
    CHECK(a);
    CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
    const dp_run_state *s = dp_agent_get_state(a);
    printf("  entropy per op with the prior: %.3f (uniform: %.3f)\n", s->upd.entropy[0], log(4.0));
    CHECK(s->upd.entropy[0] < 0.5 * log(4.0));
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The prior is a fixed grouping: a learned one is refused by name. */
static void test_grouper_prior_learned_refused(void) {
    dp_devices *ds = fixture_devices(2, 64 * GIB, 1e10);
    dp_graph *g = two_chains(GIB);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("hp");
    CHECK(dp_agent_config_set(&c, "grouper-prior", "learned", &err) == 0);
    CHECK(dp_agent_init(g, ds, &c, &eo, 5, &err) == NULL);
    CHECK_STR_CONTAINS(err.msg, "grouper-prior=learned");
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A fixed grouper ignores the prior. */
static void test_fixed_grouper_ignores_prior(void) {
    dp_devices *ds = fixture_devices(2, 64 * GIB, 1e10);
    dp_graph *g = two_chains(GIB);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("post"); /* a fixed grouper ignores the prior */
    CHECK(dp_agent_config_set(&c, "grouper-prior", "metis", &err) == 0);
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 5, &err);
    CHECK(a);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Post's table starts uniform: each group's device 1/3 (cpu + 2 GPUs). */
static void test_post_table_starts_uniform(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10); /* cpu + 2 GPUs: D = 3 */
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("post");
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 2, &err);
    CHECK(a);
    int D = a->D, G = a->T;
    CHECK_INT_EQ(D, 3);
    float *lp = malloc(sizeof(float) * (size_t)G * D);
    element_logp(a, lp);
    for (int i = 0; i < G * D; i++) CHECK_NEAR(lp[i], -log(3.0), 1e-6);
    free(lp);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The cross-entropy update sets each group's distribution of Post's table
 * to (1 - m) times the elites' frequencies plus m uniform. */
static void test_ce_update_sets_post_table(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10); /* cpu + 2 GPUs: D = 3 */
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("post");
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 2, &err);
    CHECK(a);
    int D = a->D, G = a->T;
    float *lp = malloc(sizeof(float) * (size_t)G * D);
    /* three elites: group 0 on devices 1, 1, 2; every other group on 0 */
    a->elites.n = 3;
    for (int e = 0; e < 3; e++) {
        for (int gg = 0; gg < G; gg++) a->elites.devs[e * G + gg] = 0;
        a->elites.devs[e * G + 0] = e < 2 ? 1 : 2;
        a->elites.reward[e] = -1.0 - e;
    }
    agent_train_cross_entropy(a);
    element_logp(a, lp);
    double m = c.placer.post_mix;
    CHECK_NEAR(exp(lp[0 * D + 0]), m / 3, 1e-5);
    CHECK_NEAR(exp(lp[0 * D + 1]), (1 - m) * 2 / 3 + m / 3, 1e-5);
    CHECK_NEAR(exp(lp[0 * D + 2]), (1 - m) / 3 + m / 3, 1e-5);
    for (int gg = 1; gg < G; gg++) CHECK_NEAR(exp(lp[gg * D + 0]), 1 - m + m / 3, 1e-5);
    free(lp);
    CHECK_INT_EQ(a->ce_updates, 1);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* For the neural placers (EAGLE: learned grouper, link RNN, seq2seq) the
 * cross-entropy update raises the elites' log-probability; the elites are
 * kept best first. */
static void test_ce_update_raises_elites_logprob(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent_config c = small("eagle-ppo-ce");
    CHECK(dp_agent_config_set(&c, "ce-steps", "3", &err) == 0);
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 2, &err);
    CHECK(a);
    for (int u = 0; u < 2; u++) CHECK(dp_agent_update(a, &err) == 0);
    CHECK(a->elites.n == c.ce.elites);
    for (int e = 1; e < a->elites.n; e++) CHECK(a->elites.reward[e - 1] >= a->elites.reward[e]); /* best first */
    double before = 0.0, after = 0.0;
    for (int e = 0; e < a->elites.n; e++)
        before += agent_logp_of(a, a->elites.choice + (size_t)e * a->N, a->elites.devs + (size_t)e * a->T);
    agent_train_cross_entropy(a);
    for (int e = 0; e < a->elites.n; e++)
        after += agent_logp_of(a, a->elites.choice + (size_t)e * a->N, a->elites.devs + (size_t)e * a->T);
    printf("  elites' log-probability %.3f -> %.3f\n", before, after);
    CHECK(after > before + 1e-3);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

static void compare_agents(const dp_agent *x, const dp_agent *y) {
    const dp_run_state *a = dp_agent_get_state(x), *b = dp_agent_get_state(y);
    CHECK_INT_EQ(a->updates, b->updates);
    CHECK_INT_EQ(a->samples, b->samples);
    CHECK(a->best_s == b->best_s);
    CHECK(a->baseline == b->baseline);
    CHECK_INT_EQ(a->best_sample, b->best_sample);
    CHECK_INT_EQ(a->best_by, b->best_by);
    CHECK(x->params.count == y->params.count);
    CHECK(memcmp(x->params.data, y->params.data, sizeof(float) * x->params.count) == 0);
    CHECK(memcmp(x->params.m, y->params.m, sizeof(float) * x->params.count) == 0);
    CHECK(memcmp(x->rng.s, y->rng.s, sizeof x->rng.s) == 0);
    CHECK_INT_EQ(x->ce_updates, y->ce_updates);
    CHECK_INT_EQ(x->elites.n, y->elites.n);
    CHECK(memcmp(x->elites.devs, y->elites.devs, sizeof(int32_t) * (size_t)x->elites.n * x->T) == 0);
    CHECK((a->best_placement == NULL) == (b->best_placement == NULL));
    if (a->best_placement) CHECK(memcmp(a->best_placement, b->best_placement, sizeof(int32_t) * x->N) == 0);
    for (int k = 0; k < a->n_last && k < b->n_last; k++) {
        CHECK(a->last[k].step_time_s == b->last[k].step_time_s);
        CHECK(a->last[k].reward == b->last[k].reward);
    }
}

/* The remote function of the evaluator (what src/dist's workers plug in):
 * here a second, public evaluator of the same options answers the
 * placements that missed the cache, one by one, as a worker rank would. */
typedef struct remote_ctx {
    dp_agent_evaluator *ev;
    int64_t calls, placements;
} remote_ctx;

static dp_status remote_eval(void *user, const int32_t *place, int32_t K, int32_t n_ops, const int *todo,
                             dp_agent_eval_result *res, int *cancelled, dp_error *err) {
    remote_ctx *r = user;
    r->calls++;
    *cancelled = 0;
    for (int32_t k = K - 1; k >= 0; k--) { /* in any order: results go by sample index */
        if (!todo[k]) continue;
        int cached = 0, canc = 0;
        dp_status st = dp_agent_evaluate(r->ev, place + (int64_t)k * n_ops, 1, &res[k], &cached, &canc, err);
        if (st) return st;
        CHECK(!cached && !canc);
        r->placements++;
    }
    return DP_STATUS_OK;
}

/* hp with no walks (they need the noiseless simulator) and the
 * evaluation options of the remote tests: the simulator's noise on, 2
 * threads. */
static dp_agent_config remote_config(dp_agent_eval_options *eo) {
    dp_error err;
    dp_agent_config c = small("hp");
    CHECK(dp_agent_config_set(&c, "elite-moves", "0", &err) == 0); /* the walks need the noiseless simulator */
    *eo = dp_agent_eval_options_default();
    eo->sim.noise_sigma = 0.05, eo->sim.steps = 3, eo->threads = 2;
    return c;
}

/* An agent evaluating through the remote function equals the one
 * evaluating on its own threads, bit for bit (with the simulator's noise
 * on and the cache answering repeats locally). */
static void test_remote_evaluator(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo;
    dp_agent_config c = remote_config(&eo);
    dp_agent_eval_options weo = eo; /* a worker's: no cache, no remote */
    weo.cache = 0, weo.threads = 1;
    remote_ctx r = {dp_agent_evaluator_init(g, ds, &weo, &err), 0, 0};
    CHECK(r.ev);
    dp_agent_eval_options reo = eo;
    reo.remote = remote_eval, reo.remote_user = &r;
    dp_agent *local = dp_agent_init(g, ds, &c, &eo, 5, &err), *remote = dp_agent_init(g, ds, &c, &reo, 5, &err);
    CHECK(local && remote);
    for (int u = 0; u < 15; u++) CHECK(dp_agent_update(local, &err) == 0 && dp_agent_update(remote, &err) == 0);
    compare_agents(local, remote);
    const dp_run_state *s = dp_agent_get_state(remote);
    CHECK_INT_EQ(r.calls, 15);
    CHECK_INT_EQ(r.placements + s->cache_hits, s->samples); /* the cache stayed with the agent */
    dp_agent_free(local);
    dp_agent_free(remote);
    dp_agent_evaluator_free(r.ev);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The parameter vector and dp_agent_params_set / dp_agent_set_progress
 * (an async run's exchange) carry a policy and a run's progress from one
 * agent into another. */
static void test_params_and_progress_carry_over(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo;
    dp_agent_config c = remote_config(&eo);
    dp_agent *local = dp_agent_init(g, ds, &c, &eo, 5, &err);
    CHECK(local);
    for (int u = 0; u < 15; u++) CHECK(dp_agent_update(local, &err) == 0);
    dp_agent *copy = dp_agent_init(g, ds, &c, &eo, 6, &err);
    CHECK(copy);
    size_t n1, n2;
    const float *p1 = dp_agent_params(local, &n1);
    float *p2 = dp_agent_params(copy, &n2);
    CHECK(n1 == n2 && n1 > 0 && memcmp(p1, p2, sizeof(float) * n1) != 0);
    dp_agent_params_set(copy, p1);
    CHECK(memcmp(p1, dp_agent_params(copy, &n2), sizeof(float) * n1) == 0);
    dp_agent_set_progress(copy, dp_agent_get_state(local));
    const dp_run_state *a = dp_agent_get_state(local), *b = dp_agent_get_state(copy);
    CHECK_INT_EQ(b->updates, a->updates);
    CHECK_INT_EQ(b->samples, a->samples);
    CHECK(b->best_s == a->best_s && b->best_placement && a->best_placement);
    CHECK(memcmp(b->best_placement, a->best_placement, sizeof(int32_t) * (size_t)g->n_ops) == 0);
    dp_agent_free(copy);
    dp_agent_free(local);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The presets of the checkpoint tests, and their small agent with
 * cross-entropy updates, valid-only training and noise all changing
 * within the first 12 updates. */
static const char *const ck_presets[] = {"hp", "colocrl", "eagle-ppo-ce", "post"};

static dp_agent_config ck_config(const char *preset) {
    dp_error err;
    dp_agent_config c = small(preset);
    CHECK(dp_agent_config_set(&c, "ce-every", "20", &err) == 0); /* cross-entropy updates on both sides */
    CHECK(dp_agent_config_set(&c, "valid-only-after", "6", &err) == 0);
    CHECK(dp_agent_config_set(&c, "noise-updates", "4", &err) == 0);
    return c;
}

/* The same seed gives the same run: 12 updates twice, for every preset. */
static void test_same_seed_same_run(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    for (int p = 0; p < 4; p++) {
        TEST_CASE("preset %s", ck_presets[p]);
        dp_agent_config c = ck_config(ck_presets[p]);
        dp_agent *whole = dp_agent_init(g, ds, &c, &eo, 11, &err), *same = dp_agent_init(g, ds, &c, &eo, 11, &err);
        CHECK(whole && same);
        for (int u = 0; u < 12; u++) CHECK(dp_agent_update(whole, &err) == 0 && dp_agent_update(same, &err) == 0);
        compare_agents(whole, same);
        dp_agent_free(whole), dp_agent_free(same);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* 12 updates in one go equal 5, save, load into a fresh agent, 7 more,
 * for every preset. */
static void test_resume_equals_uninterrupted(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_test_agent_%d.ck", (int)getpid());
    for (int p = 0; p < 4; p++) {
        TEST_CASE("preset %s", ck_presets[p]);
        dp_agent_config c = ck_config(ck_presets[p]);
        dp_agent *whole = dp_agent_init(g, ds, &c, &eo, 11, &err);
        dp_agent *first = dp_agent_init(g, ds, &c, &eo, 11, &err), *second = dp_agent_init(g, ds, &c, &eo, 11, &err);
        CHECK(whole && first && second);
        for (int u = 0; u < 12; u++) CHECK(dp_agent_update(whole, &err) == 0);
        for (int u = 0; u < 5; u++) CHECK(dp_agent_update(first, &err) == 0);
        CHECK(dp_agent_save(first, path, &err) == DP_STATUS_OK);
        CHECK(dp_agent_load(second, path, &err) == DP_STATUS_OK);
        for (int u = 0; u < 7; u++) CHECK(dp_agent_update(second, &err) == 0);
        compare_agents(whole, second);
        remove(path);
        dp_agent_free(whole), dp_agent_free(first), dp_agent_free(second);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Saves a checkpoint of 5 updates of preset's agent (seed 11) to path. */
static void save_five_updates(const dp_graph *g, const dp_devices *ds, const dp_agent_config *c, const char *path) {
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent *first = dp_agent_init(g, ds, c, &eo, 11, &err);
    CHECK(first);
    for (int u = 0; u < 5; u++) CHECK(dp_agent_update(first, &err) == 0);
    CHECK(dp_agent_save(first, path, &err) == DP_STATUS_OK);
    dp_agent_free(first);
}

/* A checkpoint of another seed is refused, naming the difference, the
 * agent untouched. */
static void test_checkpoint_of_other_seed_refused(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_test_agent_%d.ck", (int)getpid());
    for (int p = 0; p < 4; p++) {
        TEST_CASE("preset %s", ck_presets[p]);
        dp_agent_config c = ck_config(ck_presets[p]);
        save_five_updates(g, ds, &c, path);
        dp_agent *other = dp_agent_init(g, ds, &c, &eo, 12, &err);
        CHECK(other);
        CHECK(dp_agent_load(other, path, &err) == DP_STATUS_INVALID);
        CHECK_STR_CONTAINS(err.msg, "seed=");
        CHECK_INT_EQ(dp_agent_get_state(other)->updates, 0);
        dp_agent_free(other);
        remove(path);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A checkpoint made under other device parameters (one GPU's matmul
 * efficiency, then a link's latency) is refused in one line naming the cost
 * model, the agent untouched; under the same parameters it loads. */
static void test_checkpoint_of_other_model_refused(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_test_agent_%d.ck", (int)getpid());
    dp_agent_config c = ck_config(ck_presets[0]);
    save_five_updates(g, ds, &c, path);
    for (int change = 0; change < 2; change++) {
        TEST_CASE("change %d", change);
        dp_devices *other = dp_devices_copy(ds, &err);
        CHECK(other);
        if (change == 0) {
            other->devices[1].eff[DP_OPCLASS_MATMUL].compute *= 0.9;
            other->devices[1].eff_own |= DP_EFF_OWN_BIT(DP_OPCLASS_MATMUL, 0);
        } else {
            other->links[0].latency_s *= 2;
        }
        dp_agent *a = dp_agent_init(g, other, &c, &eo, 11, &err);
        CHECK(a);
        CHECK(dp_agent_load(a, path, &err) == DP_STATUS_INVALID);
        {
            char want[64];
            snprintf(want, sizeof want, "made under cost model %u with device parameters", DP_COST_MODEL_VERSION);
            CHECK_STR_CONTAINS(err.msg, want);
        }
        CHECK(strchr(err.msg, '\n') == NULL);
        CHECK_INT_EQ(dp_agent_get_state(a)->updates, 0);
        dp_agent_free(a);
        dp_devices_free(other);
    }
    dp_agent *same = dp_agent_init(g, ds, &c, &eo, 11, &err);
    CHECK(same && dp_agent_load(same, path, &err) == DP_STATUS_OK);
    dp_agent_free(same);
    remove(path);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A corrupted byte (refused by the checksum), a truncated file and a
 * foreign file are refused, and the failed loads change nothing. */
static void test_bad_checkpoint_refused(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_test_agent_%d.ck", (int)getpid());
    for (int p = 0; p < 4; p++) {
        TEST_CASE("preset %s", ck_presets[p]);
        dp_agent_config c = ck_config(ck_presets[p]);
        save_five_updates(g, ds, &c, path);
        dp_agent *second = dp_agent_init(g, ds, &c, &eo, 11, &err), *ref = dp_agent_init(g, ds, &c, &eo, 11, &err);
        CHECK(second && ref);
        CHECK(dp_agent_load(second, path, &err) == DP_STATUS_OK);
        CHECK(dp_agent_load(ref, path, &err) == DP_STATUS_OK);
        /* a corrupted byte: refused by the checksum */
        FILE *f = fopen(path, "r+b");
        CHECK(f);
        fseek(f, 200, SEEK_SET);
        int ch = fgetc(f);
        fseek(f, 200, SEEK_SET);
        fputc(ch ^ 0x40, f);
        fclose(f);
        CHECK(dp_agent_load(second, path, &err) == DP_STATUS_PARSE);
        CHECK_STR_CONTAINS(err.msg, "checksum");
        /* a truncated file and a foreign file */
        CHECK(truncate(path, 100) == 0);
        CHECK(dp_agent_load(second, path, &err) == DP_STATUS_PARSE);
        f = fopen(path, "wb");
        fputs("{\"format\": \"dplace-graph\"}", f);
        fclose(f);
        CHECK(dp_agent_load(second, path, &err) == DP_STATUS_PARSE);
        CHECK_STR_CONTAINS(err.msg, "not a dplace agent checkpoint");
        compare_agents(ref, second); /* failed loads changed nothing */
        remove(path);
        dp_agent_free(second), dp_agent_free(ref);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* greedy-every 2 on preset: agent a with it, b without, 7 updates each,
 * the policy's greedy placement simulated before the updates it is
 * evaluated for. check_greedy: a's greedy_s is that placement's time when
 * evaluated, NaN otherwise, and a new best names what found it;
 * check_training: a's samples and parameters are b's, update by update. */
static void greedy_every_run(const char *preset, int check_greedy, int check_training) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    int32_t *greedy = malloc(sizeof(int32_t) * (size_t)g->n_ops);
    CHECK(greedy);
    dp_agent_config c = small(preset), c0 = c;
    c.train.greedy_every = 2;
    dp_agent *a = dp_agent_init(g, ds, &c, &eo, 7, &err), *b = dp_agent_init(g, ds, &c0, &eo, 7, &err);
    CHECK(a && b);
    const dp_run_state *s = dp_agent_get_state(a), *sb = dp_agent_get_state(b);
    int evaluated = 0;
    for (int u = 0; u < 7; u++) {
        TEST_CASE("preset %s, update %d", preset, u + 1);
        double want = NAN;
        if (u > 0 && u % 2 == 0) {
            CHECK(dp_agent_greedy(a, greedy, &err) == DP_STATUS_OK);
            dp_sim_result r = fixture_simulate(g, ds, greedy);
            want = r.valid ? r.step_time_s : INFINITY;
        }
        double best_before = s->best_s;
        CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
        CHECK(dp_agent_update(b, &err) == DP_STATUS_OK);
        if (check_greedy) {
            if (isnan(want)) {
                CHECK(isnan(s->upd.greedy_s));
            } else {
                CHECK_NEAR(s->upd.greedy_s, want, 0.0);
                CHECK(s->best_s <= want);
                evaluated++;
            }
            /* eagle has no elite walks: a new best is the greedy placement's or a sample's */
            if (!strcmp(preset, "eagle") && s->best_s < best_before)
                CHECK_INT_EQ(s->best_by, s->best_s == s->upd.greedy_s ? DP_RUN_BEST_BY_GREEDY : DP_RUN_BEST_BY_SAMPLE);
        }
        if (check_training) {
            CHECK(isnan(sb->upd.greedy_s));
            CHECK_INT_EQ(s->samples, sb->samples);
            for (int32_t k = 0; k < s->n_last; k++) CHECK_NEAR(s->last[k].step_time_s, sb->last[k].step_time_s, 0.0);
            size_t na, nb;
            float *pa = dp_agent_params(a, &na), *pb = dp_agent_params(b, &nb);
            CHECK(na == nb && memcmp(pa, pb, sizeof(float) * na) == 0);
            CHECK(s->best_s <= sb->best_s);
        }
    }
    TEST_CASE("preset %s", preset);
    if (check_greedy) CHECK_INT_EQ(evaluated, 3);
    dp_agent_free(a);
    dp_agent_free(b);
    free(greedy);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* greedy-every: before every second update after the first, the policy's
 * greedy placement is evaluated (the per-update greedy_s, NaN otherwise)
 * and offered as the best; for hp and eagle. */
static void test_greedy_every(void) {
    greedy_every_run("hp", 1, 0);
    greedy_every_run("eagle", 1, 0);
}

/* greedy-every: training reads nothing of the greedy placement, so the
 * samples and the parameters are those of the run without it, update by
 * update, and its best no slower; for hp and eagle. */
static void test_greedy_every_leaves_training_alone(void) {
    greedy_every_run("hp", 0, 1);
    greedy_every_run("eagle", 0, 1);
}

/* The presets of the final-answer tests. */
static const char *const final_presets[] = {"hp", "post"};

/* The run driver's final answer (dp_method_ops.final): after the last
 * step, the policy's greedy placement is simulated once and offered as the
 * best. With no step at all it is the best, found after 0 updates and 0
 * placements. */
static void test_final_without_updates_is_best(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    int32_t *greedy = malloc(sizeof(int32_t) * (size_t)g->n_ops);
    CHECK(greedy);
    for (int p = 0; p < 2; p++) {
        TEST_CASE("preset %s", final_presets[p]);
        dp_agent_config c = small(final_presets[p]);
        dp_agent *a = dp_agent_init(g, ds, &c, &eo, 5, &err);
        CHECK(a);
        const dp_run_state *s = dp_agent_get_state(a);
        CHECK(isnan(s->final_s) && !s->best_final);
        dp_run_options ro = dp_run_options_default();
        ro.g = g, ro.ds = ds, ro.max_updates = 0;
        CHECK(dp_run(dp_agent_method(a), &ro, NULL, NULL, &err) == DP_STATUS_OK);
        CHECK(dp_agent_greedy(a, greedy, &err) == DP_STATUS_OK);
        dp_sim_result r = fixture_simulate(g, ds, greedy);
        CHECK(r.valid);
        CHECK_NEAR(s->final_s, r.step_time_s, 0.0);
        CHECK_NEAR(s->best_s, r.step_time_s, 0.0);
        CHECK(s->best_final && s->best_placement);
        CHECK_INT_EQ(s->best_update, 0);
        CHECK_INT_EQ(s->best_sample, 0);
        CHECK_INT_EQ(s->samples, 0);
        CHECK(memcmp(s->best_placement, greedy, sizeof(int32_t) * (size_t)g->n_ops) == 0);
        dp_agent_free(a);
    }
    free(greedy);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Trains 4 updates of preset's agent (seed 5) through the run driver,
 * checkpointing after each to path. */
static dp_agent *train_four_with_checkpoints(const dp_graph *g, const dp_devices *ds, const dp_agent_config *c,
                                             const char *path) {
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent *a = dp_agent_init(g, ds, c, &eo, 5, &err);
    CHECK(a);
    dp_run_options ro = dp_run_options_default();
    ro.g = g, ro.ds = ds, ro.max_updates = 4, ro.checkpoint_path = path, ro.checkpoint_every = 1;
    CHECK(dp_run(dp_agent_method(a), &ro, NULL, NULL, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(dp_agent_get_state(a)->updates, 4);
    return a;
}

/* After training, final_s is the full simulation of dp_agent_greedy's
 * placement, and the best is no slower (the greedy placement when it is
 * the final one). */
static void test_final_after_training_is_greedy(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_test_final_%d.ck", (int)getpid());
    int32_t *greedy = malloc(sizeof(int32_t) * (size_t)g->n_ops);
    CHECK(greedy);
    for (int p = 0; p < 2; p++) {
        TEST_CASE("preset %s", final_presets[p]);
        dp_agent_config c = small(final_presets[p]);
        dp_agent *a = train_four_with_checkpoints(g, ds, &c, path);
        const dp_run_state *s = dp_agent_get_state(a);
        CHECK(dp_agent_greedy(a, greedy, &err) == DP_STATUS_OK);
        dp_sim_result r = fixture_simulate(g, ds, greedy);
        CHECK_NEAR(s->final_s, r.valid ? r.step_time_s : INFINITY, 0.0);
        CHECK(s->best_s <= s->final_s);
        if (s->best_final) CHECK(memcmp(s->best_placement, greedy, sizeof(int32_t) * (size_t)g->n_ops) == 0);
        dp_agent_free(a);
        remove(path);
    }
    free(greedy);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The checkpoint written before the final answer does not hold it, and
 * resuming from it with the budget spent gives the same final answer and
 * best. */
static void test_resume_with_budget_spent_same_final(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_test_final_%d.ck", (int)getpid());
    for (int p = 0; p < 2; p++) {
        TEST_CASE("preset %s", final_presets[p]);
        dp_agent_config c = small(final_presets[p]);
        dp_agent *a = train_four_with_checkpoints(g, ds, &c, path);
        const dp_run_state *s = dp_agent_get_state(a);
        double best = s->best_s, fin = s->final_s;
        int was_final = s->best_final;
        dp_agent *b = dp_agent_init(g, ds, &c, &eo, 5, &err);
        CHECK(b);
        const dp_run_state *sb = dp_agent_get_state(b);
        CHECK(dp_agent_load(b, path, &err) == DP_STATUS_OK);
        CHECK(isnan(sb->final_s) && !sb->best_final);
        CHECK(was_final ? sb->best_s > best : sb->best_s == best); /* the samples' best only */
        dp_run_options ro = dp_run_options_default();
        ro.g = g, ro.ds = ds, ro.max_updates = 4, ro.checkpoint_path = path, ro.checkpoint_every = 1;
        ro.resume_path = path;
        CHECK(dp_run(dp_agent_method(b), &ro, NULL, NULL, &err) == DP_STATUS_OK); /* budget spent: no step */
        CHECK_INT_EQ(sb->updates, 4);
        CHECK_NEAR(sb->final_s, fin, 0.0);
        CHECK_NEAR(sb->best_s, best, 0.0);
        CHECK_INT_EQ(sb->best_final, was_final);
        dp_agent_free(b);
        dp_agent_free(a);
        remove(path);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A cancelled run evaluates no final answer. */
static void test_cancelled_run_has_no_final(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    for (int p = 0; p < 2; p++) {
        TEST_CASE("preset %s", final_presets[p]);
        dp_agent_config c = small(final_presets[p]);
        dp_agent *a = dp_agent_init(g, ds, &c, &eo, 5, &err);
        CHECK(a);
        volatile sig_atomic_t stop = 1;
        dp_run_options ro = dp_run_options_default();
        ro.g = g, ro.ds = ds, ro.max_updates = 2, ro.cancel = &stop;
        CHECK(dp_run(dp_agent_method(a), &ro, NULL, NULL, &err) == DP_STATUS_OK);
        CHECK(isnan(dp_agent_get_state(a)->final_s));
        dp_agent_free(a);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Elite walks (elite-moves > 0, dplace's expert iteration): each walk
 * starts from a distinct sample, the best first, and ends no worse than
 * it; its result is a full simulation's of its placement, which is the
 * expansion of its element devices; the ends join the elites, with PPO-CE
 * (Post) and REINFORCE (hp) alike; the update log gets their figures. With
 * elite-keep one more walk starts from the best elite, under its own
 * grouping, and the best elite never gets worse. */
/* The score (agent_walk_score) of the best elite's placement under its
 * own grouping, simulated in full; NAN when there is none yet. */
static double best_elite_score(const dp_graph *g, const dp_devices *ds, dp_agent *a, int32_t *tmp) {
    if (a->elites.n == 0) return NAN;
    agent_expand(a, a->elites.choice ? a->elites.choice : a->enc->choice, a->elites.devs, tmp);
    dp_sim_result full = fixture_simulate(g, ds, tmp);
    agent_result r;
    agent_result_from_sim(&full, &r);
    return agent_walk_score(&r);
}

/* Checks the update's walks (kept_start: best_elite_score before the
 * update, for elite-keep's walk); returns how many moves were kept grown
 * into chains (elite-chain). */
static int32_t check_walks(const dp_graph *g, const dp_devices *ds, dp_agent *a, int32_t *tmp, double kept_start) {
    const dp_run_state *s = dp_agent_get_state(a);
    int32_t sims = 0, chained = 0, kept = 0;
    double walked = INFINITY, prev = -INFINITY;
    for (int32_t w = 0; w < a->walks.n_walks; w++) {
        const agent_walk *r = &a->walks.walk[w];
        double start;
        if (r->from == AGENT_WALK_FROM_ELITE) { /* elite-keep's: the last, from the best elite */
            CHECK(a->cfg.walks.keep && w == a->walks.n_walks - 1 && !isnan(kept_start));
            CHECK(r->el == &a->walks.kept);
            start = kept_start, kept = 1;
        } else if (r->from == -1) { /* elite-keep's before there is an elite */
            CHECK(a->cfg.walks.keep && w == a->walks.n_walks - 1 && isnan(kept_start));
            continue;
        } else {
            CHECK(r->from >= 0 && r->from < a->K);
            CHECK(r->el == &a->walks.upd);
            for (int32_t v = 0; v < w; v++) CHECK(a->walks.walk[v].from != r->from);
            start = agent_walk_score(&a->res[r->from]);
            CHECK(start >= prev); /* walk w from the w-th best sample */
            prev = start;
        }
        CHECK(r->sims > 0 && r->sims <= a->cfg.walks.moves * (1 + a->cfg.walks.chain));
        CHECK(agent_walk_score(&r->res) <= start);
        dp_sim_result full = fixture_simulate(g, ds, r->place);
        CHECK(full.step_time_s == r->res.step_time_s);
        CHECK_INT_EQ(full.valid, r->res.valid);
        agent_expand(a, r->el->choice, r->devs, tmp);
        CHECK(memcmp(tmp, r->place, sizeof(int32_t) * (size_t)a->N) == 0);
        sims += r->sims, chained += r->chained;
        CHECK(a->cfg.walks.chain > 0 || r->chained == 0);
        if (r->res.valid) {
            walked = fmin(walked, r->res.step_time_s);
            CHECK(s->best_s <= r->res.step_time_s);
        }
        int found = 0; /* the walk's end is an elite, or ce-elites better ones are */
        for (int e = 0; e < a->elites.n && !found; e++) {
            const int32_t *ch = a->elites.choice ? a->elites.choice + (size_t)e * a->N : a->enc->choice;
            agent_expand(a, ch, a->elites.devs + (size_t)e * a->T, tmp);
            found = memcmp(tmp, r->place, sizeof(int32_t) * (size_t)a->N) == 0;
        }
        CHECK(found || !r->res.valid ||
              (a->elites.n == a->cfg.ce.elites &&
               a->elites.reward[a->elites.n - 1] >= agent_reward(&a->cfg, a->fail_reward, &r->res)));
    }
    CHECK_INT_EQ(s->upd.elite_sims, sims);
    CHECK(isinf(walked) ? isnan(s->upd.elite_s) : s->upd.elite_s == walked);
    CHECK_INT_EQ(kept, a->cfg.walks.keep && !isnan(kept_start));
    /* with elite-keep the best elite never gets worse */
    if (a->cfg.walks.keep && !isnan(kept_start)) CHECK(best_elite_score(g, ds, a, tmp) <= kept_start);
    return chained;
}

/* The best that a's last update found came from what best_by names: one
 * of its samples, a walk from a sample or the walk from the best elite,
 * with exactly that step time. */
static void check_best_by(const dp_agent *a) {
    int found = 0;
    if (a->st.best_by == DP_RUN_BEST_BY_SAMPLE)
        for (int32_t k = 0; k < a->K; k++) found |= a->last[k].valid && a->last[k].step_time_s == a->st.best_s;
    for (int32_t w = 0; w < a->walks.n_walks; w++) {
        const agent_walk *r = &a->walks.walk[w];
        int by = r->from == AGENT_WALK_FROM_ELITE ? DP_RUN_BEST_BY_KEPT_WALK
                 : r->from >= 0                   ? DP_RUN_BEST_BY_WALK
                                                  : -1;
        if (by == a->st.best_by) found |= r->res.valid && r->res.step_time_s == a->st.best_s;
    }
    if (!found) printf("  best %.9g by %d: not found among its source's results\n", a->st.best_s, (int)a->st.best_by);
    CHECK(found);
}

/* The elite walks' variants the tests run: post (PPO over one batch), hp
 * (REINFORCE), eagle (PPO over two minibatches, B < K); some with
 * elite-train, hp's moves grown into chains (elite-chain), and a walk from
 * the best elite (elite-keep: under hp's learned grouping, which changes
 * every update, and Post's fixed one). */
typedef struct walk_variant {
    const char *name, *preset;
    int train, keep, minibatches, chain;
} walk_variant;
static const walk_variant walk_variants[] = {
    {"post", "post", 0, 0, 0, 0},
    {"hp, elite-chain", "hp", 0, 0, 0, 3},
    {"post, elite-train", "post", 1, 0, 0, 0},
    {"hp, elite-train, elite-chain", "hp", 1, 0, 0, 3},
    {"eagle, 2 minibatches, elite-train", "eagle", 1, 0, 2, 0},
    {"hp, elite-train, elite-keep", "hp", 1, 1, 0, 0},
    {"post, elite-train, elite-keep", "post", 1, 1, 0, 0},
};
#define N_WALK_VARIANTS ((int)(sizeof walk_variants / sizeof walk_variants[0]))

/* The small agent of a variant, with 2 walks of 20 moves per update. */
static dp_agent_config walk_config(const walk_variant *v) {
    dp_error err;
    dp_agent_config c = small(v->preset);
    char n[16];
    if (v->train) CHECK(dp_agent_config_set(&c, "elite-train", "yes", &err) == 0);
    if (v->keep) CHECK(dp_agent_config_set(&c, "elite-keep", "yes", &err) == 0);
    snprintf(n, sizeof n, "%d", v->minibatches);
    if (v->minibatches) CHECK(dp_agent_config_set(&c, "ppo-minibatches", n, &err) == 0);
    snprintf(n, sizeof n, "%d", v->chain);
    if (v->chain) CHECK(dp_agent_config_set(&c, "elite-chain", n, &err) == 0);
    CHECK(dp_agent_config_set(&c, "elite-moves", "20", &err) == 0);
    CHECK(dp_agent_config_set(&c, "elite-walks", "2", &err) == 0);
    CHECK(dp_agent_config_set(&c, "elite-near", "0.5", &err) == 0);
    CHECK(dp_agent_config_set(&c, "elite-critical", "0.3", &err) == 0);
    CHECK(dp_agent_config_set(&c, "ce-every", "8", &err) == 0);
    return c;
}

/* Each update's walks keep their promises (check_walks), a new best names
 * what found it, and the cross-entropy step runs with REINFORCE too. */
static void test_walks(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    for (int p = 0; p < N_WALK_VARIANTS; p++) {
        TEST_CASE("%s", walk_variants[p].name);
        dp_agent_config c = walk_config(&walk_variants[p]);
        dp_agent *a = dp_agent_init(g, ds, &c, &eo, 3, &err);
        CHECK(a);
        int32_t *tmp = malloc(sizeof(int32_t) * (size_t)a->N);
        for (int u = 0; u < 6; u++) {
            TEST_CASE("%s, update %d", walk_variants[p].name, u + 1);
            double kept_start = best_elite_score(g, ds, a, tmp), best_before = a->st.best_s;
            CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
            check_walks(g, ds, a, tmp, kept_start);
            if (a->st.best_s < best_before) check_best_by(a);
        }
        TEST_CASE("%s", walk_variants[p].name);
        CHECK(a->st.best_by != DP_RUN_BEST_BY_NONE);
        if (!walk_variants[p].keep) CHECK(a->st.best_by != DP_RUN_BEST_BY_KEPT_WALK);
        CHECK(a->ce_updates > 0); /* with REINFORCE too */
        free(tmp);
        dp_agent_free(a);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The walks run on the evaluator's threads: one thread and two give the
 * same run. */
static void test_walks_threads(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default(), eo2 = eo;
    eo2.threads = 2;
    for (int p = 0; p < N_WALK_VARIANTS; p++) {
        TEST_CASE("%s", walk_variants[p].name);
        dp_agent_config c = walk_config(&walk_variants[p]);
        dp_agent *a = dp_agent_init(g, ds, &c, &eo, 3, &err), *two = dp_agent_init(g, ds, &c, &eo2, 3, &err);
        CHECK(a && two);
        for (int u = 0; u < 6; u++) CHECK(dp_agent_update(a, &err) == 0 && dp_agent_update(two, &err) == 0);
        compare_agents(a, two);
        dp_agent_free(a), dp_agent_free(two);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A run with walks resumed from a checkpoint ends as the uninterrupted
 * one (the elites and the kept walk's grouping are in the checkpoint). */
static void test_walks_resume(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_test_walks_%d.ck", (int)getpid());
    for (int p = 0; p < N_WALK_VARIANTS; p++) {
        TEST_CASE("%s", walk_variants[p].name);
        dp_agent_config c = walk_config(&walk_variants[p]);
        dp_agent *whole = dp_agent_init(g, ds, &c, &eo, 4, &err), *first = dp_agent_init(g, ds, &c, &eo, 4, &err);
        dp_agent *second = dp_agent_init(g, ds, &c, &eo, 4, &err);
        CHECK(whole && first && second);
        for (int u = 0; u < 9; u++) CHECK(dp_agent_update(whole, &err) == 0);
        for (int u = 0; u < 4; u++) CHECK(dp_agent_update(first, &err) == 0);
        CHECK(dp_agent_save(first, path, &err) == DP_STATUS_OK);
        CHECK(dp_agent_load(second, path, &err) == DP_STATUS_OK);
        for (int u = 0; u < 5; u++) CHECK(dp_agent_update(second, &err) == 0);
        compare_agents(whole, second);
        remove(path);
        dp_agent_free(whole), dp_agent_free(first), dp_agent_free(second);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The walks need the simulator's noiseless protocol: a noisy one is
 * refused, naming the setting. */
static void test_walks_noise_refused(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options noisy = dp_agent_eval_options_default();
    noisy.sim.noise_sigma = 0.05, noisy.sim.steps = 3;
    for (int p = 0; p < N_WALK_VARIANTS; p++) {
        TEST_CASE("%s", walk_variants[p].name);
        dp_agent_config c = walk_config(&walk_variants[p]);
        CHECK(dp_agent_init(g, ds, &c, &noisy, 3, &err) == NULL);
        CHECK_INT_EQ(err.status, DP_STATUS_INVALID);
        CHECK_STR_CONTAINS(err.msg, "elite-moves");
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* elite-chain: on chains whose inner transfers (10 s) cost more than
 * their ops (1 s), moving one element of a chain to the other GPU is
 * slower, while the whole chain there halves the step: the walks keep
 * grown moves only with elite-chain, exactly simulated. */
static void test_walks_chain(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e7);
    dp_graph *g = two_chains_bytes(0, 100000000);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    for (int chain = 0; chain <= 3; chain += 3) {
        dp_agent_config c = small("hp");
        char v[8];
        snprintf(v, sizeof v, "%d", chain);
        CHECK(dp_agent_config_set(&c, "elite-chain", v, &err) == 0);
        CHECK(dp_agent_config_set(&c, "elite-moves", "20", &err) == 0);
        CHECK(dp_agent_config_set(&c, "elite-walks", "2", &err) == 0);
        dp_agent *a = dp_agent_init(g, ds, &c, &eo, 3, &err);
        CHECK(a);
        int32_t *tmp = malloc(sizeof(int32_t) * (size_t)a->N), chained = 0;
        for (int u = 0; u < 8; u++) {
            double kept_start = best_elite_score(g, ds, a, tmp);
            CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
            chained += check_walks(g, ds, a, tmp, kept_start);
        }
        if (chain == 0) CHECK_INT_EQ(chained, 0);
        else CHECK(chained > 0);
        free(tmp);
        dp_agent_free(a);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* elite-train: the training reads a faster walk end in place of the
 * sample it started from, and only the training: the samples, their
 * statistics and rewards, the baseline and the elites are those of the
 * same run without it, while the parameters move differently. */
static void test_walks_train(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    const char *presets[] = {"post", "hp", "eagle"};
    for (int p = 0; p < 3; p++) {
        dp_agent_config c = small(presets[p]), t;
        CHECK(dp_agent_config_set(&c, "elite-moves", "40", &err) == 0);
        CHECK(dp_agent_config_set(&c, "elite-walks", "2", &err) == 0);
        CHECK(dp_agent_config_set(&c, "ce-every", "1000", &err) == 0); /* no cross-entropy step in the update */
        t = c;
        CHECK(dp_agent_config_set(&t, "elite-train", "yes", &err) == 0);
        dp_agent *x = dp_agent_init(g, ds, &c, &eo, 5, &err), *y = dp_agent_init(g, ds, &t, &eo, 5, &err);
        CHECK(x && y);
        CHECK(dp_agent_update(x, &err) == DP_STATUS_OK && dp_agent_update(y, &err) == DP_STATUS_OK);
        int improved = 0; /* some walk ended faster than its start */
        for (int32_t w = 0; w < y->walks.n_walks; w++) {
            const agent_walk *r = &y->walks.walk[w];
            if (r->from >= 0 && r->res.valid &&
                (!y->res[r->from].valid || r->res.step_time_s < y->res[r->from].step_time_s))
                improved++;
        }
        CHECK(improved > 0);
        const dp_run_state *a = dp_agent_get_state(x), *b = dp_agent_get_state(y);
        CHECK(memcmp(x->devs, y->devs, sizeof(int32_t) * (size_t)x->K * x->T) == 0); /* put back */
        for (int k = 0; k < a->n_last; k++) {
            CHECK(a->last[k].step_time_s == b->last[k].step_time_s);
            CHECK(a->last[k].reward == b->last[k].reward);
        }
        CHECK(a->baseline == b->baseline);
        CHECK(a->best_s == b->best_s);
        CHECK(a->upd.mean_s == b->upd.mean_s);
        CHECK_INT_EQ(x->elites.n, y->elites.n);
        CHECK(memcmp(x->elites.devs, y->elites.devs, sizeof(int32_t) * (size_t)x->elites.n * x->T) == 0);
        CHECK(memcmp(x->params.data, y->params.data, sizeof(float) * x->params.count) != 0);
        dp_agent_free(x), dp_agent_free(y);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The presets hold their papers' values and dplace's walks where they
 * say so. */
static void test_config_presets(void) {
    dp_agent_config c;
    CHECK(agent_preset("nope", &c) == -1);
    CHECK(agent_preset("hp", &c) == 0);
    CHECK(c.grouper.groups == 256 && c.grouper.hidden == 64 && c.placer.hidden == 256 && c.train.batch == 4);
    CHECK_NEAR(c.train.lr, 0.001, 1e-7); /* the paper's 0.1 (and 0.01) collapse the placer here */
    CHECK_NEAR(c.placer.tanh_c, 5.0, 0);
    CHECK_NEAR(c.placer.temperature, 10.0, 0);
    /* dplace's elite walks with a cross-entropy step on the best elite every
     * update, as ColocRL's; EAGLE and Mars keep their papers' */
    CHECK(c.walks.moves == 100 && c.walks.walks == 2 && c.ce.every == 4 && c.ce.elites == 1 && c.ce.steps == 2);
    const char *papers_own[] = {"eagle", "mars"};
    for (int p = 0; p < 2; p++) {
        TEST_CASE("preset %s", papers_own[p]);
        dp_agent_config o;
        CHECK(agent_preset(papers_own[p], &o) == 0);
        CHECK(o.walks.moves == 0 && o.ce.every == 50 && o.ce.elites == 5 && o.ce.steps == 1);
    }
    TEST_CASE("preset eagle");
    dp_agent_config e;
    CHECK(agent_preset("eagle", &e) == 0);
    CHECK(e.train.algo == DP_AGENT_ALGO_PPO && e.link.on && e.placer.kind == DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE);
    CHECK(e.placer.hidden == 512 && e.train.batch == 10 && e.ppo.epochs == 4 && e.ce.every == 50 && e.ce.elites == 5);
    CHECK_NEAR(e.ppo.clip, 0.3, 1e-7);
    CHECK_NEAR(e.train.entropy, 0.01, 1e-7);
}

/* Every grouper, placer and algorithm of the groups' family combine. */
static void test_config_combinations(void) {
    dp_agent_config e;
    dp_error err;
    CHECK(agent_preset("eagle", &e) == 0);
    CHECK(dp_agent_config_check(&e, &err) == 0);
    const char *gr[] = {"learned", "metis", "fluid", "colocation"}, *pl[] = {"seq2seq-before", "seq2seq-after", "gcn", "table"};
    const char *algos[] = {"reinforce", "ppo", "ppo-ce"};
    for (int gi = 0; gi < 4; gi++)
        for (int pi = 0; pi < 4; pi++)
            for (int ai = 0; ai < 3; ai++) {
                TEST_CASE("grouper %s, placer %s, algo %s", gr[gi], pl[pi], algos[ai]);
                dp_agent_config x = e;
                CHECK(dp_agent_config_set(&x, "grouper", gr[gi], &err) == 0);
                CHECK(dp_agent_config_set(&x, "placer", pl[pi], &err) == 0);
                CHECK(dp_agent_config_set(&x, "algo", algos[ai], &err) == 0);
                if (gi > 0) CHECK(dp_agent_config_set(&x, "link", "no", &err) == 0);
                if (pi == 3) CHECK(dp_agent_config_set(&x, "tanh-c", "0", &err) == 0);
                CHECK(dp_agent_config_check(&x, &err) == 0);
            }
}

/* Combinations that cannot work are refused, naming the settings; a bad
 * value is refused as it is set. */
static void test_config_refusals(void) {
    dp_agent_config e, c, x;
    dp_error err;
    CHECK(agent_preset("eagle", &e) == 0 && agent_preset("hp", &c) == 0);
    CHECK(dp_agent_config_set(&c, "grouper", "metis", &err) == 0 && c.grouper.kind == DP_AGENT_GROUPER_KIND_METIS);
    CHECK(dp_agent_config_set(&c, "grouper", "nonsense", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "learned, colocation, metis");
    CHECK(dp_agent_config_set(&c, "lr", "-1", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "lr");
    CHECK(dp_agent_config_set(&c, "batch", "2.5", &err) == DP_STATUS_INVALID);
    CHECK(dp_agent_config_set(&c, "bogus", "1", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "unknown setting");
    x = e;
    CHECK(dp_agent_config_set(&x, "grouper", "metis", &err) == 0);
    CHECK(dp_agent_config_check(&x, &err) == DP_STATUS_INVALID); /* link needs the learned grouper */
    CHECK_STR_CONTAINS(err.msg, "link");
    x = e;
    CHECK(dp_agent_config_set(&x, "placer", "table", &err) == 0 && dp_agent_config_set(&x, "tanh-c", "5", &err) == 0);
    CHECK(dp_agent_config_check(&x, &err) == DP_STATUS_INVALID); /* tanh-c with the table */
    CHECK_STR_CONTAINS(err.msg, "tanh-c");
    x = e;
    CHECK(dp_agent_config_set(&x, "ppo-minibatches", "11", &err) == 0);
    CHECK(dp_agent_config_check(&x, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "ppo-minibatches");
    x = e;
    CHECK(dp_agent_config_set(&x, "algo", "ppo-ce", &err) == 0 && dp_agent_config_set(&x, "ce-elites", "60", &err) == 0);
    CHECK(dp_agent_config_check(&x, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "ce-elites");
    CHECK(dp_agent_config_set(&c, "baseline-decay", "0", &err) == 0);
    CHECK(dp_agent_config_check(&c, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "baseline");
}

/* Every heuristic grouper composes with the placer on a small graph. */
static void test_config_groupers(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    const char *groupers[] = {"colocation", "metis", "scotch", "fluid", "random", "scope", "none"};
    for (size_t k = 0; k < sizeof groupers / sizeof groupers[0]; k++) {
        TEST_CASE("grouper %s", groupers[k]);
        dp_agent_config h = small("hp");
        CHECK(dp_agent_config_set(&h, "grouper", groupers[k], &err) == 0);
        CHECK(dp_agent_config_set(&h, "groups", "3", &err) == 0);
        double best = train(g, ds, &h, 1, 3);
        CHECK(isfinite(best));
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The scope grouper: TensorFlow's colocation groups joined by the layer
 * scope cut to scope-depth components, "gradients/" stripped, so a layer's
 * forward and gradient ops are one group. */
static void test_config_scope_grouper(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_error err;
    dp_graph *sg = dp_graph_init("scopes");
    const char *scopes[] = {"a/x/1", "a/x/2", "a/y/1", "b", "gradients/a/x/3"};
    for (int k = 0; k < 5; k++) {
        char name[16];
        snprintf(name, sizeof name, "op%d", k);
        add(sg, name, scopes[k], 1.0, 16, 0, -1);
    }
    fixture_finalize(sg);
    dp_agent_config sc = small("colocrl");
    int32_t grp[5], n = 0;
    const struct { const char *depth; int n; } want[] = {{"0", 5}, {"3", 5}, {"2", 3}, {"1", 2}};
    for (int k = 0; k < 4; k++) {
        TEST_CASE("scope-depth %s", want[k].depth);
        CHECK(dp_agent_config_set(&sc, "scope-depth", want[k].depth, &err) == 0);
        CHECK(agent_group_fixed(sg, ds, &sc, 1, grp, &n, &err) == 0);
        CHECK_INT_EQ(n, want[k].n);
    }
    CHECK(grp[0] == grp[1] && grp[1] == grp[2] && grp[2] == grp[4] && grp[3] != grp[0]); /* depth 1: a, b */
    CHECK(dp_agent_config_set(&sc, "scope-depth", "2", &err) == 0);
    CHECK(agent_group_fixed(sg, ds, &sc, 1, grp, &n, &err) == 0);
    CHECK(grp[0] == grp[1] && grp[1] == grp[4] && grp[2] != grp[0]); /* a/x with its gradient, a/y */
    dp_graph_free(sg);
    dp_devices_free(ds);
}

/* The preset a setting's row matters in: Mars's for its encoder and
 * segments, its Transformer-XL's for txl-*, EAGLE's for the link and PPO,
 * eagle-ppo-ce's for the cross-entropy step, Post's for post-mix; else the
 * Hierarchical Planner's. */
static const char *preset_for(const dp_setting *r) {
    if (!strncmp(r->name, "txl-", 4)) return "mars-trfxl";
    if (r->group == DP_SETTING_GROUP_ENCODER || !strncmp(r->name, "seg-", 4) || !strcmp(r->name, "op-order"))
        return "mars";
    if (r->group == DP_SETTING_GROUP_LINK || r->group == DP_SETTING_GROUP_PPO) return "eagle";
    if (r->group == DP_SETTING_GROUP_CE) return "eagle-ppo-ce";
    if (!strcmp(r->name, "post-mix")) return "post";
    return "hp";
}

/* Another value of row r than the one in cfg, as text: a bool flipped, the
 * next choice, a number one step or half way off within the row's range. */
static void other_value(const dp_setting *r, const dp_agent_config *cfg, char *buf, size_t size) {
    const void *f = (const char *)cfg + r->offset;
    if (r->type == DP_SETTING_BOOL) snprintf(buf, size, "%s", *(const int *)f ? "no" : "yes");
    else if (r->type == DP_SETTING_ENUM) snprintf(buf, size, "%s", r->choices[(*(const int *)f + 1) % r->n_choices]);
    else if (r->type == DP_SETTING_INT) {
        int32_t v = *(const int32_t *)f;
        snprintf(buf, size, "%d", (int)(v + 1 <= r->max ? v + 1 : v - 1));
    } else {
        double v = r->type == DP_SETTING_FLOAT ? *(const float *)f : *(const double *)f;
        double w = v != 0 ? v * 0.5 : fmin(0.1, r->max);
        snprintf(buf, size, "%.9g", fmax(r->min, fmin(r->max, w)));
    }
}

/* Every agent setting is exercised: set to another value on the preset it
 * matters in, it is either refused by the configuration's check with a
 * message naming a setting, or an agent with it runs an update (on a small
 * graph, with small networks). */
static void test_every_setting(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains(0);
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    int32_t n, ran = 0, refused = 0;
    const dp_setting *t = dp_settings_table(&n);
    for (int32_t k = 0; k < n; k++) {
        const dp_setting *r = &t[k];
        if (r->target != DP_SETTING_AGENT) continue;
        const char *preset = preset_for(r);
        dp_agent_config c = small(preset);
        const char *small_mars[][2] = {{"gcn-hidden", "8"}, {"seg-len", "8"}, {"seg-keep", "1"},
                                       {"pretrain-iters", "2"}, {"txl-heads", "2"}, {"txl-inner", "8"},
                                       {"txl-mem", "8"}, {"warm-steps", "2"}};
        if (c.encoder.kind == DP_AGENT_ENCODER_GCN)
            for (size_t j = 0; j < sizeof small_mars / sizeof small_mars[0]; j++)
                CHECK(dp_agent_config_set(&c, small_mars[j][0], small_mars[j][1], &err) == 0);
        char v[64];
        other_value(r, &c, v, sizeof v);
        TEST_CASE("preset %s, setting %s=%s", preset, r->name, v);
        CHECK(dp_agent_config_set(&c, r->name, v, &err) == 0);
        if (dp_agent_config_check(&c, &err)) {
            int names_one = 0;
            for (int32_t j = 0; j < n && !names_one; j++) names_one = strstr(err.msg, t[j].name) != NULL;
            CHECK(names_one);
            refused++;
            continue;
        }
        dp_agent *a = dp_agent_init(g, ds, &c, &eo, 1, &err);
        if (!a) printf("  %s: %s\n", test_case_, err.msg);
        CHECK(a);
        CHECK(dp_agent_update(a, &err) == DP_STATUS_OK);
        CHECK(dp_agent_get_state(a)->samples == c.train.batch);
        dp_agent_free(a);
        ran++;
    }
    printf("  %d settings ran an update with another value, %d were refused by name\n", (int)ran, (int)refused);
    CHECK(ran > 50);
    dp_graph_free(g);
    dp_devices_free(ds);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_config_presets);
    TEST_RUN(test_config_combinations);
    TEST_RUN(test_config_refusals);
    TEST_RUN(test_config_groupers);
    TEST_RUN(test_config_scope_grouper);
    TEST_RUN(test_every_setting);
    TEST_RUN(test_ppo_surrogate);
    TEST_RUN(test_ppo_surrogate_fd);
    TEST_RUN(test_ppo_gradient_fd);
    TEST_RUN(test_memory_mask);
    TEST_RUN(test_table_takes_many_groups);
    TEST_RUN(test_sequence_placer_refuses_many_groups);
    TEST_RUN(test_remote_evaluator);
    TEST_RUN(test_params_and_progress_carry_over);
    TEST_RUN(test_grouper_prior_lowers_entropy);
    TEST_RUN(test_grouper_prior_learned_refused);
    TEST_RUN(test_fixed_grouper_ignores_prior);
    TEST_RUN(test_post_table_starts_uniform);
    TEST_RUN(test_ce_update_sets_post_table);
    TEST_RUN(test_ce_update_raises_elites_logprob);
    TEST_RUN(test_noise_schedule);
    TEST_RUN(test_optimizer_skips_nonfinite);
    TEST_RUN(test_optimizer_clips_per_network);
    TEST_RUN(test_rewards);
    TEST_RUN(test_zero_advantages_train_with_entropy);
    TEST_RUN(test_baseline_moving_average);
    TEST_RUN(test_baseline_window_from_failing_reward);
    TEST_RUN(test_invalid_sample_gets_failing_reward);
    TEST_RUN(test_valid_only_after);
    TEST_RUN(test_same_seed_same_run);
    TEST_RUN(test_resume_equals_uninterrupted);
    TEST_RUN(test_checkpoint_of_other_seed_refused);
    TEST_RUN(test_checkpoint_of_other_model_refused);
    TEST_RUN(test_bad_checkpoint_refused);
    TEST_RUN(test_final_without_updates_is_best);
    TEST_RUN(test_final_after_training_is_greedy);
    TEST_RUN(test_resume_with_budget_spent_same_final);
    TEST_RUN(test_cancelled_run_has_no_final);
    TEST_RUN(test_greedy_every);
    TEST_RUN(test_greedy_every_leaves_training_alone);
    TEST_RUN(test_walks);
    TEST_RUN(test_walks_threads);
    TEST_RUN(test_walks_resume);
    TEST_RUN(test_walks_noise_refused);
    TEST_RUN(test_walks_chain);
    TEST_RUN(test_walks_train);
    TEST_RUN(test_presets_find_known_best);
    return test_end();
}
