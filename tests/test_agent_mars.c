/* Tests of Mars on the agent framework (encoder=gcn, src/agent/encoder_ops.c, placer_seq.c):
 * the composed policy (GCN encoder + segment-level placer over three
 * segments, one recomputed) by finite differences through the agent's
 * forward and backward; Deep Graph Infomax pre-training lowers its loss and
 * keeps the parameters of the lowest; the Mars preset's PPO finds the known
 * best placement of a toy graph; a saved pre-trained agent loads to the same
 * outputs, also into an agent of another graph (--init), and a file of
 * other networks is refused by name; checkpoint then resume equals the run
 * in one go, pre-training interrupted included; the settings refuse what
 * the op-level path cannot do. The networks are shrunk; every algorithmic
 * setting is the preset's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "dplace/agent.h"
#include "dplace/sim.h"
#include "test_fixtures.h"
#include "test_util.h"

#define GIB ((uint64_t)1 << 30)

/* An op of `type` taking `secs` on a GPU (10x on the CPU) with one [64, w]
 * float output. */
static int32_t op(dp_graph *g, const char *name, const char *type, double secs, int64_t w, int32_t in) {
    dp_error err;
    int32_t id = dp_graph_add_op(g, name, type, NULL, NULL, &err);
    CHECK(id >= 0);
    if (in >= 0) CHECK(dp_graph_add_input(g, id, in, 0, &err) == DP_STATUS_OK);
    int64_t dims[2] = {64, w};
    CHECK(dp_graph_add_output_shape(g, id, DP_DTYPE_FLOAT32, dims, 2, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "gpu", secs, &err) == DP_STATUS_OK);
    CHECK(dp_graph_add_cost(g, id, "cpu", 10 * secs, &err) == DP_STATUS_OK);
    return id;
}

/* Two independent chains of 5 one-second ops (MatMul, Relu, ...), each op
 * with a small side op: best with a chain per GPU (about 5 s; 10 s on one
 * GPU). 22 ops: three segments of 8. `tag` renames the ops (another graph
 * of the same shape). */
static dp_graph *two_chains(const char *tag) {
    dp_graph *g = dp_graph_init(tag);
    char name[64];
    int32_t in = op(g, "in", "Placeholder", 0.001, 128, -1), ends[2];
    for (int c = 0; c < 2; c++) {
        int32_t prev = in;
        for (int k = 0; k < 5; k++) {
            snprintf(name, sizeof name, "%s/c%d/op%d", tag, c, k);
            prev = op(g, name, k % 2 ? "Relu" : "MatMul", 1.0, 128 + 64 * k, prev);
            snprintf(name, sizeof name, "%s/c%d/side%d", tag, c, k);
            op(g, name, "Sum", 0.001, 1, prev);
        }
        ends[c] = prev;
    }
    int32_t out = op(g, "join", "AddN", 0.001, 128, ends[0]);
    dp_error err;
    CHECK(dp_graph_add_input(g, out, ends[1], 0, &err) == DP_STATUS_OK);
    fixture_finalize(g);
    return g;
}

/* A chain of 12 ops with 1 GB outputs: best all on one GPU. */
static dp_graph *heavy_chain(void) {
    dp_graph *g = dp_graph_init("heavy_chain");
    int32_t prev = -1;
    char name[32];
    for (int k = 0; k < 12; k++) {
        snprintf(name, sizeof name, "op%d", k);
        prev = op(g, name, k % 3 ? "Tanh" : "MatMul", 1.0, 4000000, prev);
    }
    fixture_finalize(g);
    return g;
}

/* The Mars preset shrunk for tests. */
static dp_agent_config small_mars(const char *preset) {
    dp_agent_config c;
    CHECK(agent_preset(preset, &c) == 0);
    dp_error err;
    const char *kv[][2] = {{"gcn-hidden", "8"}, {"hidden", "8"}, {"attn-dim", "8"}, {"dev-emb", "4"},
                           {"seg-len", "8"},     {"seg-keep", "1"}, {"pretrain-iters", "20"},
                           {"txl-heads", "2"},   {"txl-inner", "8"}, {"txl-mem", "8"},
                           {"warm-start", "none"}}; /* the paper's start; the preset's warm start: test_ppo_finds_known_best */
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++)
        if (dp_agent_config_set(&c, kv[k][0], kv[k][1], &err) != 0) CHECK(0);
    return c;
}

static dp_agent *make(const dp_graph *g, const dp_devices *ds, const dp_agent_config *c, uint64_t seed) {
    dp_error err;
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    dp_agent *a = dp_agent_init(g, ds, c, &eo, seed, &err);
    if (!a) fprintf(stderr, "%s\n", err.msg);
    CHECK(a);
    return a;
}

/* The policy's teacher-forced forward of the batch in a->bdevs (the
 * encoder, then the placer), as a PPO minibatch runs it. */
static void batch_forward(dp_agent *a) {
    a->enc->ops->forward(a->enc, DP_NN_DECODE_MODE_TEACHER, 0.0f, &a->rng);
    a->placer->ops->forward(a->placer, a->enc, a->bdevs, a->blogp, a->bstep, a->bent, DP_NN_DECODE_MODE_TEACHER, 0.0f,
                            &a->rng);
}

/* Its backward with weights dlogp, dstep, dent (through the sequence into
 * the encoder). */
static void batch_backward(dp_agent *a) {
    memset(a->dx, 0, sizeof(float) * (size_t)a->T * a->enc->F);
    a->placer->ops->backward(a->placer, a->dx, a->bdevs, a->dlogp, a->dstep, a->dent);
    a->enc->ops->backward(a->enc, a->dx, NULL, 0.0f, 0.0f);
}

/* L = sum_b w_b log p(devs_b) + v_b H_b + sum_{b,j} u_bj log p(devs_bj) of
 * the batch in a->bdevs, in double (u: PPO's per-decision weights). */
static double batch_loss(dp_agent *a, const double *w, const double *v, const float *u) {
    batch_forward(a);
    double L = 0.0;
    for (int b = 0; b < a->B; b++) {
        double s = 0.0; /* log p(devs_b), summed in double: less rounding noise than the float sum */
        for (int j = 0; j < a->N; j++) {
            L += (double)u[b * a->N + j] * a->bstep[b * a->N + j];
            s += a->bstep[b * a->N + j];
        }
        CHECK_NEAR(s, a->blogp[b], 1e-4); /* the decisions' log-probabilities sum to the sample's */
        L += w[b] * s + v[b] * a->bent[b];
    }
    return L;
}

/* The gradient the agent takes (its batch backward: placer segments in
 * reverse with the state gradient carried, then the GCN) equals central
 * differences of the loss (per-sample, per-decision and entropy weights),
 * for every tensor of the encoder and the placer, with three segments of
 * which two are recomputed (seg-keep 1); for both segment placers. */
static void check_gradient(const char *preset) {
    TEST_CASE("preset %s", preset);
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("fd");
    dp_agent_config c = small_mars(preset);
    /* the Transformer-XL's memory is a constant to the gradient (stop-gradient,
     * as Dai et al.), so differences would see what the backward does not: no
     * memory here (the nn engine checks the memory path on its own) */
    if (c.placer.kind == DP_AGENT_PLACER_KIND_TRFXL) CHECK(dp_agent_config_set(&c, "txl-mem", "0", NULL) == 0);
    /* and 16 wide: its layer norms over 8 columns amplify float32 rounding */
    if (c.placer.kind == DP_AGENT_PLACER_KIND_TRFXL) CHECK(dp_agent_config_set(&c, "hidden", "16", NULL) == 0);
    dp_agent *a = make(g, ds, &c, 7);
    CHECK_INT_EQ(a->N, 22);
    CHECK_INT_EQ((a->N + c.placer.seg_len - 1) / c.placer.seg_len, 3); /* three segments */
    CHECK_INT_EQ(c.placer.seg_keep, 1);                          /* of which two are recomputed */
    CHECK_INT_EQ(a->B, 5); /* 20 samples in 4 minibatches */
    CHECK(c.ppo.ratio == DP_AGENT_PPO_RATIO_DECISION); /* per-decision ratios: per-op log-probabilities */
    int B = a->B, N = a->N;
    double w[8], v[8];
    float u[8 * 22];
    dp_rng r;
    dp_rng_seed(&r, 3);
    for (int b = 0; b < B; b++) {
        for (int j = 0; j < N; j++) {
            a->bdevs[b * N + j] = (int32_t)dp_rng_below(&r, (uint64_t)a->D);
            u[b * N + j] = (float)(0.1 * sin(1.3 * (b * N + j)));
        }
        w[b] = (b % 2 ? -1.0 : 1.0) * (0.3 + 0.2 * b);
        v[b] = 0.05 * (b + 1);
    }
    batch_loss(a, w, v, u);
    for (int b = 0; b < B; b++) a->dlogp[b] = (float)w[b], a->dent[b] = (float)v[b];
    memcpy(a->dstep, u, sizeof(float) * (size_t)B * N);
    dp_nn_params_zero_grad(&a->params);
    batch_backward(a);
    /* the tensors checked: the GCN's and every one of the placer's */
    const char *gcn[] = {"gcn0.weight", "gcn0.bias", "gcn0.prelu", "gcn1.weight", "gcn2.weight", "gcn2.prelu"};
    int idx[64], n_idx = 0;
    for (size_t t = 0; t < sizeof gcn / sizeof gcn[0]; t++) idx[n_idx++] = dp_nn_params_find(&a->params, gcn[t]);
    for (int i = a->first_placer; i < a->params.ntensors && n_idx < 64; i++) idx[n_idx++] = i;
    double worst = 0.0;
    int checked = 0, skipped = 0;
    for (int t = 0; t < n_idx; t++) {
        int i = idx[t];
        CHECK(i >= 0);
        const char *tname = a->params.name[i];
        TEST_CASE("preset %s, tensor %s", preset, tname);
        size_t off = a->params.offset[i], n = a->params.size[i], pick[10];
        int np = 0;
        /* 6 evenly spaced entries and the 4 largest analytic gradients (the
         * first layer's columns of types absent from the graph have none) */
        for (size_t k = 0; k < n && np < 6; k += n / 6 + 1) pick[np++] = k;
        for (int q = 0; q < 4; q++) {
            size_t best = 0;
            float bv = -1.0f;
            for (size_t k = 0; k < n; k++) {
                int taken = 0;
                for (int j = 0; j < np; j++) taken |= pick[j] == k;
                if (!taken && fabsf(a->params.grad[off + k]) > bv) bv = fabsf(a->params.grad[off + k]), best = k;
            }
            if (bv >= 0) pick[np++] = best;
        }
        double max_num = 0.0;
        for (int j = 0; j < np; j++) {
            size_t k = pick[j];
            float *p = a->params.data + off + k, keep = *p;
            /* the Transformer-XL's gradients are larger (up to ~25 here) and so is
             * its curvature: a smaller step */
            double h = c.placer.kind == DP_AGENT_PLACER_KIND_TRFXL ? 3e-3 : 1e-2;
            *p = keep + (float)h;
            double up = batch_loss(a, w, v, u);
            *p = keep - (float)h;
            double dn = batch_loss(a, w, v, u);
            *p = keep;
            double mid = batch_loss(a, w, v, u);
            double num = (up - dn) / (2 * h), ana = a->params.grad[off + k];
            /* a PReLU kink inside [-h, h] (the GCN's, or through it): the
             * one-sided differences disagree; such points are skipped */
            double right = (up - mid) / h, left = (mid - dn) / h;
            if (fabs(right - left) > 0.1 * fmax(fabs(num), 1e-2)) {
                skipped++;
                continue;
            }
            /* relative error with a floor of 2e-2, within 5e-2: float32 losses of
             * about 25 over steps of 1e-2 carry a few 1e-4 of rounding noise and
             * curvature (the nn engine's own checks, with the loss in double,
             * hold each layer to 2e-2); a wrong wiring of segments, samples
             * or weights is off by far more */
            double rel = fabs(num - ana) / fmax(fmax(fabs(num), fabs(ana)), 2e-2);
            if (rel > 5e-2) fprintf(stderr, "  %s[%zu]: analytic %.6g, numeric %.6g\n", tname, k, ana, num);
            CHECK(rel <= 5e-2);
            worst = fmax(worst, rel);
            max_num = fmax(max_num, fabs(num));
            checked++;
        }
        if (max_num <= 1e-5) fprintf(stderr, "  %s: largest numeric gradient %.3g\n", tname, max_num);
        CHECK(max_num > 1e-5); /* the loss reaches every tensor checked (the attention query weights: ~3e-5) */
    }
    TEST_CASE("preset %s", preset);
    printf("  %s: largest relative error %.2e over %d entries of the encoder and placer tensors (%d at a kink "
           "skipped)\n",
           dp_agent_placer_kind_name(a->cfg.placer.kind), worst, checked, skipped);
    CHECK(skipped * 5 <= checked);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The gradient of the policy with the segment-level seq2seq placer. */
static void test_policy_gradient_fd_seq2seq(void) { check_gradient("mars-nopretrain"); }
/* The gradient of the policy with the Transformer-XL placer. */
static void test_policy_gradient_fd_txl(void) { check_gradient("mars-trfxl"); }

/* A Mars agent of 60 pre-training iterations (16 GCN units) on the toy
 * graph, its DGI loss before pre-training in *before. */
static dp_agent *pretrain_agent(const dp_graph *g, const dp_devices *ds, double *before) {
    dp_agent_config c = small_mars("mars");
    CHECK(dp_agent_config_set(&c, "pretrain-iters", "60", NULL) == 0);
    CHECK(dp_agent_config_set(&c, "gcn-hidden", "16", NULL) == 0);
    dp_agent *a = make(g, ds, &c, 5);
    CHECK(dp_agent_get_prep(a)->pretrain_iters == 60 && dp_agent_get_prep(a)->pretrain_done == 0);
    *before = agent_dgi_loss(a);
    return a;
}

/* Pre-training in two calls (25 iterations, then the rest) lowers the DGI
 * loss; once done, it does nothing more. */
static void test_pretraining_lowers_loss(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("dgi");
    double before;
    dp_agent *a = pretrain_agent(g, ds, &before);
    dp_error err;
    CHECK(dp_agent_pretrain(a, 25, &err) == 0);
    CHECK(dp_agent_get_prep(a)->pretrain_done == 25 && a->params.step == 0 && a->pretrain_step == 25);
    CHECK(dp_agent_pretrain(a, -1, &err) == 0);
    CHECK(dp_agent_get_prep(a)->pretrain_done == 60);
    double after = agent_dgi_loss(a);
    printf("  DGI loss %.4f -> %.4f (lowest seen %.4f)\n", before, after, dp_agent_get_prep(a)->pretrain_best);
    CHECK(after < before - 0.05);
    CHECK(dp_agent_pretrain(a, -1, &err) == 0 && dp_agent_get_prep(a)->pretrain_done == 60); /* done: nothing more */
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Pre-training keeps the encoder parameters of the lowest loss it saw. */
static void test_pretraining_keeps_lowest(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("dgi");
    double before;
    dp_agent *a = pretrain_agent(g, ds, &before);
    dp_error err;
    CHECK(dp_agent_pretrain(a, -1, &err) == 0);
    CHECK(dp_agent_get_prep(a)->pretrain_best <= dp_agent_get_prep(a)->pretrain_loss);
    size_t lo = a->enc_lo;
    CHECK(memcmp(a->params.data + lo, a->pretrain_keep, sizeof(float) * a->enc_floats) == 0);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* Pre-training leaves the optimiser fresh for training: no step, zero
 * moments. */
static void test_pretraining_leaves_optimizer_fresh(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("dgi");
    double before;
    dp_agent *a = pretrain_agent(g, ds, &before);
    dp_error err;
    CHECK(dp_agent_pretrain(a, -1, &err) == 0);
    CHECK(a->params.step == 0);
    for (size_t i = 0; i < a->params.count; i++) CHECK(a->params.m[i] == 0.0f && a->params.v[i] == 0.0f);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The Mars preset's PPO (20 samples, 4 minibatches, 3 epochs, clip 0.2,
 * entropy 0.001 on the mean entropy, Adam 3e-4) from the paper's uniform
 * start finds the known best of the toy graph: a chain per GPU; so do
 * mars-dplace, whose sequence prior (depth-first order: a chain's ops
 * follow each other; the previous op's GPU favoured), and the preset's
 * own imitation warm start, each sampling better placements from the
 * start (the first update's best, the first 5 updates' mean). One test:
 * the comparison with the paper's start needs its 40 updates, the most
 * expensive run of this file, which a test of its own would repeat. */
static void test_ppo_finds_known_best(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("ppo");
    int32_t split[22];
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    for (int i = 0; i < 22; i++) split[i] = 1;
    for (int i = 0; i < 22; i++)
        if (strstr(g->ops[i].name, "/c1/")) split[i] = 2;
    dp_sim_result r;
    CHECK(dp_sim_run(sim, split, NULL, &r, &err) == 0 && r.valid);
    double t_split = r.step_time_s;
    CHECK(t_split < 5.1);
    double plain_first = NAN, plain_mean = NAN;
    for (int v = 0; v < 3; v++) {
    TEST_CASE("%s", v == 0 ? "mars" : v == 1 ? "mars-dplace" : "mars, warm start");
    dp_agent_config c = small_mars(v == 1 ? "mars-dplace" : "mars");
    if (v == 2) CHECK(dp_agent_config_set(&c, "warm-start", "best", &err) == 0); /* the preset's own start */
    dp_agent *a = make(g, ds, &c, 3);
    CHECK(a->placer->stick_mask == 0x6); /* the prior favours a previous GPU, never the CPU */
    const dp_run_state *s = dp_agent_get_state(a);
    double first = NAN, mean_first = 0.0, mean_last = 0.0;
    int U = 40;
    for (int u = 0; u < U; u++) {
        CHECK(dp_agent_update(a, &err) == 0);
        if (u == 0) first = s->best_s;
        double m = 0.0;
        for (int k = 0; k < s->n_last; k++) m += s->last[k].step_time_s / s->n_last;
        if (u < 5) mean_first += m / 5;
        if (u >= U - 5) mean_last += m / 5;
    }
    printf("  %s%s: best after one update %.4f, after %d: %.4f (known best %.4f); mean sampled %.3f -> %.3f\n",
           c.preset, v == 2 ? " (warm start)" : "", first, U, s->best_s, t_split, mean_first, mean_last);
    CHECK(s->best_s <= t_split * (1 + 1e-3));
    CHECK(mean_last < mean_first);
    if (v == 2) CHECK(dp_agent_get_prep(a)->warm_done == c.warm.steps && isfinite(dp_agent_get_prep(a)->warm_loss));
    if (v == 0) plain_first = first, plain_mean = mean_first;
    else CHECK(first < plain_first && mean_first < plain_mean);
    dp_agent_free(a);
    }
    dp_sim_free(sim);
    dp_graph_free(g);
    dp_devices_free(ds);
}

static void compare_agents(const dp_agent *x, const dp_agent *y) {
    const dp_run_state *a = dp_agent_get_state(x), *b = dp_agent_get_state(y);
    CHECK_INT_EQ(a->updates, b->updates);
    CHECK_INT_EQ(a->samples, b->samples);
    CHECK(a->best_s == b->best_s);
    CHECK(a->baseline == b->baseline);
    const dp_agent_prep *pa = dp_agent_get_prep(x), *pb = dp_agent_get_prep(y);
    CHECK(pa->pretrain_done == pb->pretrain_done && a->prep_done == b->prep_done);
    CHECK(pa->pretrain_best == pb->pretrain_best || (isnan(pa->pretrain_best) && isnan(pb->pretrain_best)));
    CHECK(x->params.count == y->params.count);
    CHECK(memcmp(x->params.data, y->params.data, sizeof(float) * x->params.count) == 0);
    CHECK(memcmp(x->params.m, y->params.m, sizeof(float) * x->params.count) == 0);
    CHECK(memcmp(x->rng.s, y->rng.s, sizeof x->rng.s) == 0);
    CHECK((a->best_placement == NULL) == (b->best_placement == NULL));
    if (a->best_placement) CHECK(memcmp(a->best_placement, b->best_placement, sizeof(int32_t) * x->N) == 0);
}

/* A run in one go equals: pre-training interrupted and saved, loaded,
 * finished, two updates, saved, loaded, three more; for the Mars preset,
 * its cross-entropy variant (ppo-ce on the op-level path), PPO ratios per
 * sequence (the reference's), REINFORCE, the Transformer-XL placer, and
 * the preset's imitation warm start interrupted halfway through. */
static void test_checkpoint_resume(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("ck");
    dp_error err;
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_test_agent_mars_%d.ck", (int)getpid());
    static const char *const variants[6] = {"mars", "mars, ppo-ce", "mars, sequence ratios", "mars, reinforce",
                                            "mars-trfxl", "mars, warm start interrupted"};
    for (int v = 0; v < 6; v++) {
        TEST_CASE("%s", variants[v]);
        dp_agent_config c = small_mars(v == 4 ? "mars-trfxl" : "mars");
        if (v == 4) CHECK(dp_agent_config_set(&c, "hidden", "8", &err) == 0);
        if (v == 5) { /* the preset's warm start, interrupted halfway through it */
            CHECK(dp_agent_config_set(&c, "warm-start", "best", &err) == 0);
            CHECK(dp_agent_config_set(&c, "warm-steps", "6", &err) == 0);
        }
        if (v == 2) CHECK(dp_agent_config_set(&c, "ppo-ratio", "sequence", &err) == 0);
        if (v == 3) CHECK(dp_agent_config_set(&c, "algo", "reinforce", &err) == 0);
        CHECK(dp_agent_config_set(&c, "pretrain-iters", "6", &err) == 0);
        if (v == 1) {
            CHECK(dp_agent_config_set(&c, "algo", "ppo-ce", &err) == 0);
            CHECK(dp_agent_config_set(&c, "ce-every", "40", &err) == 0);
            CHECK(dp_agent_config_set(&c, "ce-elites", "7", &err) == 0);
        }
        dp_agent *whole = make(g, ds, &c, 11), *part = make(g, ds, &c, 11);
        for (int u = 0; u < 5; u++) CHECK(dp_agent_update(whole, &err) == 0); /* pre-trains first */
        CHECK(dp_agent_pretrain(part, v == 5 ? 9 : 4, &err) == 0); /* v 5: the 6 DGI iterations, 3 warm steps */
        CHECK(dp_agent_save(part, path, &err) == 0);
        dp_agent_free(part);
        part = make(g, ds, &c, 11);
        CHECK(dp_agent_load(part, path, &err) == 0);
        CHECK_INT_EQ(dp_agent_get_prep(part)->pretrain_done, v == 5 ? 6 : 4);
        CHECK_INT_EQ(dp_agent_get_prep(part)->warm_done, v == 5 ? 3 : 0);
        for (int u = 0; u < 2; u++) CHECK(dp_agent_update(part, &err) == 0);
        CHECK(dp_agent_save(part, path, &err) == 0);
        dp_agent_free(part);
        part = make(g, ds, &c, 11);
        CHECK(dp_agent_load(part, path, &err) == 0);
        for (int u = 0; u < 3; u++) CHECK(dp_agent_update(part, &err) == 0);
        compare_agents(whole, part);
        if (v == 1) CHECK(whole->ce_updates == 2 && part->ce_updates == 2);
        dp_agent_free(whole), dp_agent_free(part);
    }
    remove(path);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A warm start whose gradient is not finite stops with an error that says
 * so (not "out of memory"), takes no step and leaves no other parameter NaN:
 * one placer weight made NaN stands for a backward that overflowed (the
 * paper-size seq2seq on bert_base at warm-lr 0.01, docs/agents.md). */
static void test_warm_start_diverged(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("wd");
    dp_error err;
    dp_agent_config c = small_mars("mars");
    CHECK(dp_agent_config_set(&c, "warm-start", "best", &err) == 0);
    CHECK(dp_agent_config_set(&c, "warm-steps", "4", &err) == 0);
    CHECK(dp_agent_config_set(&c, "pretrain-iters", "0", &err) == 0);
    dp_agent *a = make(g, ds, &c, 3);
    size_t poisoned = a->params.offset[a->first_placer];
    a->params.data[poisoned] = NAN;
    CHECK(dp_agent_pretrain(a, -1, &err) == DP_STATUS_INVALID);
    printf("  %s\n", err.msg);
    CHECK(strstr(err.msg, "warm start: diverged") && strstr(err.msg, "warm-lr"));
    CHECK_INT_EQ(dp_agent_get_prep(a)->warm_done, 0);
    CHECK_INT_EQ(a->params.step, 0);
    size_t nan = 0;
    for (size_t i = 0; i < a->params.count; i++) nan += !isfinite(a->params.data[i]) || !isfinite(a->params.m[i]);
    CHECK_INT_EQ(nan, 1);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A Deep Graph Infomax iteration whose loss or gradient is not finite
 * stops the pre-training with an error naming pretrain-lr, its Adam step
 * not taken: one encoder weight made NaN stands for an overflow. */
static void test_pretraining_diverged(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("pd");
    dp_error err;
    dp_agent_config c = small_mars("mars");
    CHECK(dp_agent_config_set(&c, "pretrain-iters", "10", &err) == 0);
    dp_agent *a = make(g, ds, &c, 3);
    CHECK(dp_agent_pretrain(a, 3, &err) == 0); /* three good iterations first */
    a->params.data[a->enc_lo] = NAN;
    CHECK(dp_agent_pretrain(a, -1, &err) == DP_STATUS_INVALID);
    printf("  %s\n", err.msg);
    CHECK(strstr(err.msg, "pre-training diverged at iteration 4 of 10") && strstr(err.msg, "pretrain-lr"));
    CHECK_INT_EQ(dp_agent_get_prep(a)->pretrain_done, 3);
    CHECK_INT_EQ(a->pretrain_step, 3);
    CHECK(isfinite(dp_agent_get_prep(a)->pretrain_best));
    size_t nan = 0;
    for (size_t i = 0; i < a->params.count; i++) nan += !isfinite(a->params.data[i]) || !isfinite(a->params.m[i]);
    CHECK_INT_EQ(nan, 1);
    for (size_t i = 0; i < a->enc_floats; i++) CHECK(isfinite(a->pretrain_keep[i]));
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A cancel flag raised by the progress callback at one point of an update. */
typedef struct cancel_at {
    volatile sig_atomic_t flag;
    const char *phase; /* raise it when this phase reports done == at */
    int64_t at;
    int calls[3];      /* sampling, evaluating, training reports seen */
} cancel_at;

static void cancel_progress(void *user, const char *phase, int64_t done, int64_t total) {
    cancel_at *c = user;
    CHECK(done >= 0 && done <= total && total > 0);
    int k = !strcmp(phase, "sampling") ? 0 : !strcmp(phase, "evaluating") ? 1 : 2;
    CHECK(k < 2 || !strcmp(phase, "training"));
    c->calls[k]++;
    if (c->phase && !strcmp(phase, c->phase) && done == c->at) c->flag = 1;
}

/* The toy Mars agent (4 pre-training iterations, seed 5) reporting to ca,
 * whose flag cancels it. */
static dp_agent *cancel_agent(const dp_graph *g, const dp_devices *ds, cancel_at *ca) {
    dp_error err;
    dp_agent_config c = small_mars("mars");
    CHECK(dp_agent_config_set(&c, "pretrain-iters", "4", &err) == 0);
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    eo.cancel = &ca->flag;
    eo.progress = cancel_progress;
    eo.progress_user = ca;
    dp_agent *part = dp_agent_init(g, ds, &c, &eo, 5, &err);
    CHECK(part != NULL);
    return part;
}

/* Progress is reported for every phase of an update: per update, 5
 * sampling, 2 evaluating and 13 training reports. */
static void test_progress_of_every_phase(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("cancel");
    dp_error err;
    cancel_at ca = {0, NULL, 0, {0, 0, 0}};
    dp_agent *part = cancel_agent(g, ds, &ca);
    for (int u = 0; u < 2; u++) CHECK(dp_agent_update(part, &err) == 0);
    CHECK(ca.calls[0] == 2 * 5 && ca.calls[1] == 2 * 2 && ca.calls[2] == 2 * 13);
    dp_agent_free(part);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* An update cancelled between batches of sampling or minibatches of
 * training is abandoned: the agent is as before it, and the run goes on as
 * if it had not been tried. */
static void test_cancel_mid_update(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("cancel");
    dp_error err;
    const char *phases[] = {"sampling", "training", "training"};
    const int64_t ats[] = {5, 1, 11}; /* mars: batches of 5 samples; 3 epochs x 4 minibatches */
    for (int v = 0; v < 3; v++) {
        TEST_CASE("cancelled at %s %lld", phases[v], (long long)ats[v]);
        dp_agent_config c = small_mars("mars");
        CHECK(dp_agent_config_set(&c, "pretrain-iters", "4", &err) == 0);
        cancel_at ca = {0, NULL, 0, {0, 0, 0}};
        dp_agent *whole = make(g, ds, &c, 5), *part = cancel_agent(g, ds, &ca);
        for (int u = 0; u < 4; u++) CHECK(dp_agent_update(whole, &err) == 0);
        for (int u = 0; u < 2; u++) CHECK(dp_agent_update(part, &err) == 0);
        ca.phase = phases[v], ca.at = ats[v];
        CHECK(dp_agent_update(part, &err) == 0); /* cancelled */
        CHECK(ca.flag == 1);
        CHECK_INT_EQ(dp_agent_get_state(part)->n_last, 0);
        CHECK_INT_EQ(dp_agent_get_state(part)->updates, 2);
        ca.flag = 0, ca.phase = NULL;
        for (int u = 0; u < 2; u++) CHECK(dp_agent_update(part, &err) == 0);
        compare_agents(whole, part);
        CHECK(memcmp(whole->params.v, part->params.v, sizeof(float) * whole->params.count) == 0);
        CHECK(whole->params.step == part->params.step);
        dp_agent_free(whole), dp_agent_free(part);
    }
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A pre-trained Mars agent of the toy graph trained 2 updates (seed 21),
 * saved to path; its greedy placement in pa. */
static dp_agent *saved_agent(const dp_graph *g, const dp_devices *ds, const char *path, int32_t *pa) {
    dp_error err;
    dp_agent_config c = small_mars("mars");
    dp_agent *a = make(g, ds, &c, 21);
    for (int u = 0; u < 2; u++) CHECK(dp_agent_update(a, &err) == 0);
    CHECK(dp_agent_save(a, path, &err) == 0);
    CHECK(dp_agent_greedy(a, pa, &err) == 0);
    return a;
}

/* /tmp/dplace_test_agent_mars_PID.TAG.ck */
static void mars_ck_path(char *path, size_t n, const char *tag) {
    snprintf(path, n, "/tmp/dplace_test_agent_mars_%d.%s.ck", (int)getpid(), tag);
}

/* A pre-trained, trained agent saved and loaded places as before: the
 * greedy placement, bit-identical log-probabilities. */
static void test_save_load_places_as_before(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("src");
    dp_error err;
    char path[64];
    mars_ck_path(path, sizeof path, "a");
    int32_t pa[22], pb[22];
    dp_agent *a = saved_agent(g, ds, path, pa);
    float lp = agent_logp_of(a, NULL, a->devs + 3 * a->N);
    dp_agent_config c = small_mars("mars");
    dp_agent *b = make(g, ds, &c, 21);
    CHECK(dp_agent_load(b, path, &err) == 0);
    CHECK(dp_agent_greedy(b, pb, &err) == 0);
    CHECK(memcmp(pa, pb, sizeof pa) == 0);
    CHECK(agent_logp_of(b, NULL, a->devs + 3 * a->N) == lp);
    dp_agent_free(b);
    remove(path);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* --init on the same graph (another seed): the same networks, a fresh run
 * (not pre-trained again) that places identically and trains. */
static void test_init_same_graph(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("src");
    dp_error err;
    char path[64];
    mars_ck_path(path, sizeof path, "a");
    int32_t pa[22], pb[22];
    dp_agent *a = saved_agent(g, ds, path, pa);
    dp_agent_config c = small_mars("mars");
    dp_agent *b = make(g, ds, &c, 99);
    CHECK(dp_agent_load_policy(b, path, &err) == 0);
    CHECK(memcmp(a->params.data, b->params.data, sizeof(float) * a->params.count) == 0);
    CHECK(dp_agent_get_state(b)->updates == 0 && b->params.step == 0);
    CHECK(dp_agent_get_prep(b)->pretrain_done == c.encoder.pretrain_iters); /* not pre-trained again */
    CHECK(dp_agent_greedy(b, pb, &err) == 0);
    CHECK(memcmp(pa, pb, sizeof pa) == 0);
    CHECK(dp_agent_update(b, &err) == 0);
    dp_agent_free(b);
    remove(path);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* --init on another graph (12 ops, other types and shapes): the policy is
 * graph-independent with type-ids=fixed; it loads and trains. */
static void test_init_other_graph(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("src"), *other = heavy_chain();
    dp_error err;
    char path[64];
    mars_ck_path(path, sizeof path, "a");
    int32_t pa[22];
    dp_agent *a = saved_agent(g, ds, path, pa);
    dp_agent_config c = small_mars("mars");
    dp_agent *b = make(other, ds, &c, 99);
    CHECK(agent_op_feature_dim(&b->feat) == agent_op_feature_dim(&a->feat));
    CHECK(dp_agent_load_policy(b, path, &err) == 0);
    CHECK(memcmp(a->params.data, b->params.data, sizeof(float) * a->params.count) == 0);
    CHECK(dp_agent_update(b, &err) == 0);
    dp_agent_free(b);
    remove(path);
    dp_agent_free(a);
    dp_graph_free(g), dp_graph_free(other);
    dp_devices_free(ds);
}

/* Files of other networks (other sizes, another kind of agent) and a
 * missing file are refused, naming the tensor, leaving the agent
 * unchanged. */
static void test_init_other_networks_refused(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g = two_chains("src");
    dp_error err;
    char path[64], path2[64];
    mars_ck_path(path, sizeof path, "a");
    mars_ck_path(path2, sizeof path2, "b");
    int32_t pa[22];
    dp_agent *a = saved_agent(g, ds, path, pa);
    dp_agent_config c2 = small_mars("mars");
    CHECK(dp_agent_config_set(&c2, "hidden", "12", &err) == 0);
    dp_agent *b = make(g, ds, &c2, 21);
    float *keep = malloc(sizeof(float) * b->params.count);
    memcpy(keep, b->params.data, sizeof(float) * b->params.count);
    TEST_CASE("other network sizes");
    CHECK(dp_agent_load_policy(b, path, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "tensor placer.enc has");
    CHECK(memcmp(keep, b->params.data, sizeof(float) * b->params.count) == 0);
    CHECK(dp_agent_get_prep(b)->pretrain_done == 0);
    TEST_CASE("another kind of agent");
    dp_agent_config h;
    CHECK(agent_preset("hp", &h) == 0);
    CHECK(dp_agent_config_set(&h, "hidden", "8", &err) == 0 && dp_agent_config_set(&h, "groups", "4", &err) == 0);
    CHECK(dp_agent_config_set(&h, "type-ids", "fixed", &err) == 0); /* its type embedding then matches */
    dp_agent *hp = make(g, ds, &h, 1);
    CHECK(dp_agent_save(hp, path2, &err) == 0);
    dp_agent_free(hp);
    CHECK(dp_agent_load_policy(b, path2, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "has no tensor gcn0.weight");
    TEST_CASE("a missing file");
    CHECK(dp_agent_load_policy(b, "/nonexistent/x.ck", &err) == DP_STATUS_IO);
    CHECK(memcmp(keep, b->params.data, sizeof(float) * b->params.count) == 0);
    free(keep);
    dp_agent_free(b);
    remove(path), remove(path2);
    dp_agent_free(a);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* The Mars presets hold their values: the paper's sizes and PPO, the
 * variants without pre-training, with seq2seq, dplace's and the
 * Transformer-XL; each passes the configuration's check. */
static void test_config_presets(void) {
    dp_agent_config c;
    dp_error err;
    CHECK(agent_preset("mars", &c) == 0);
    CHECK(c.encoder.kind == DP_AGENT_ENCODER_GCN && c.encoder.gcn_hidden == 256 && c.encoder.gcn_layers == 3 && c.encoder.pretrain_iters == 1000);
    CHECK(c.placer.kind == DP_AGENT_PLACER_KIND_SEQ2SEQ_SEG && c.placer.seg_len == 128 && c.placer.hidden == 512);
    CHECK(c.train.algo == DP_AGENT_ALGO_PPO && c.train.batch == 20 && c.ppo.minibatches == 4 && c.ppo.epochs == 3);
    CHECK_NEAR(c.ppo.clip, 0.2, 1e-7);
    CHECK_NEAR(c.train.entropy, 0.001, 1e-9);
    CHECK_NEAR(c.train.lr, 3e-4, 1e-9);
    CHECK_NEAR(c.train.baseline_decay, 0.99, 1e-7);
    CHECK(c.features.type_ids == DP_AGENT_TYPE_IDS_FIXED && !c.train.entropy_sum && !c.train.clip_per_network);
    CHECK(dp_agent_config_check(&c, &err) == 0);
    CHECK(agent_preset("mars-nopretrain", &c) == 0 && c.encoder.pretrain_iters == 0);
    CHECK(agent_preset("mars-seq2seq", &c) == 0 && dp_agent_config_check(&c, &err) == 0);
    CHECK(agent_preset("mars-dplace", &c) == 0 && dp_agent_config_check(&c, &err) == 0);
    CHECK(c.encoder.op_order == DP_AGENT_OP_ORDER_DFS && c.placer.stick == 5.0f && c.encoder.kind == DP_AGENT_ENCODER_GCN);
    CHECK(agent_preset("mars", &c) == 0 && c.encoder.op_order == DP_AGENT_OP_ORDER_TOPO && c.placer.stick == 0.0f);
    CHECK(c.warm.from == DP_AGENT_WARM_BEST && c.warm.steps == 200); /* dplace's start (docs/agents.md) */
    CHECK_NEAR(c.warm.lr, 0.001, 1e-9); /* the paper's sizes; the benches' 32 units take 0.01 */
    CHECK(agent_preset("mars-trfxl", &c) == 0 && dp_agent_config_check(&c, &err) == 0);
    CHECK(c.placer.kind == DP_AGENT_PLACER_KIND_TRFXL && c.ppo.ratio == DP_AGENT_PPO_RATIO_DECISION);
}

/* What the op-level path cannot do is refused, naming the setting:
 * txl-heads that do not divide the width, a grouper or a placer other than
 * Mars's, minibatches that do not divide the samples, the segment placer
 * or pre-training without the GCN encoder, logit noise. */
static void test_config_refusals(void) {
    dp_agent_config c;
    dp_error err;
    TEST_CASE("mars-trfxl, txl-heads=6");
    CHECK(agent_preset("mars-trfxl", &c) == 0);
    CHECK(dp_agent_config_set(&c, "txl-heads", "6", &err) == 0);
    CHECK(dp_agent_config_check(&c, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "multiple of txl-heads");
    struct {
        const char *preset, *key, *value, *msg;
    } bad[] = {
        {"mars", "grouper", "learned", "grouper=none"},
        {"mars", "placer", "gcn", "sequence placer"},
        {"mars", "ppo-minibatches", "3", "must divide samples"},
        {"mars", "noise-updates", "10", NULL}, /* noise-amp is 0: fine */
        {"hp", "placer", "seq2seq-seg", "needs encoder=gcn"},
        {"hp", "pretrain-iters", "5", "needs encoder=gcn"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        TEST_CASE("%s, %s=%s", bad[k].preset, bad[k].key, bad[k].value);
        CHECK(agent_preset(bad[k].preset, &c) == 0);
        CHECK(dp_agent_config_set(&c, bad[k].key, bad[k].value, &err) == 0);
        dp_status st = dp_agent_config_check(&c, &err);
        if (!bad[k].msg) {
            CHECK(st == 0);
            continue;
        }
        CHECK(st == DP_STATUS_INVALID);
        CHECK_STR_CONTAINS(err.msg, bad[k].msg);
    }
    TEST_CASE("mars, noise-amp=0.1, noise-updates=5");
    CHECK(agent_preset("mars", &c) == 0);
    CHECK(dp_agent_config_set(&c, "noise-amp", "0.1", &err) == 0 && dp_agent_config_set(&c, "noise-updates", "5", &err) == 0);
    CHECK(dp_agent_config_check(&c, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "noise");
}

/* Fixed type ids: the same type, the same id, whatever the graph. */
static void test_fixed_type_ids(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g1 = two_chains("one"), *g2 = heavy_chain();
    dp_agent_config m = small_mars("mars-nopretrain");
    dp_agent *a = make(g1, ds, &m, 1), *b = make(g2, ds, &m, 1);
    CHECK(a->feat.V == agent_fixed_type_count() && b->feat.V == a->feat.V);
    int32_t matmul_a = -1, matmul_b = -1;
    for (int i = 0; i < a->N; i++)
        if (!strcmp(dp_graph_str(g1, g1->ops[i].type), "MatMul")) matmul_a = a->feat.type_id[i];
    for (int i = 0; i < b->N; i++)
        if (!strcmp(dp_graph_str(g2, g2->ops[i].type), "MatMul")) matmul_b = b->feat.type_id[i];
    CHECK(matmul_a > 0 && matmul_a == matmul_b);
    dp_agent_free(a), dp_agent_free(b);
    dp_graph_free(g1), dp_graph_free(g2);
    dp_devices_free(ds);
}

/* Node features: a one-hot type, output shapes over the largest
 * dimension; the first op in topological order first in the sequence. */
static void test_node_features(void) {
    dp_devices *ds = fixture_devices(2, 16 * GIB, 1e10);
    dp_graph *g1 = two_chains("one");
    dp_agent_config m = small_mars("mars-nopretrain");
    dp_agent *a = make(g1, ds, &m, 1);
    float *row = malloc(sizeof(float) * (size_t)a->N * agent_op_feature_dim(&a->feat));
    agent_op_features(&a->feat, g1, &m, g1->topo, row); /* the first op in topological order: "in" [64, 128] */
    CHECK_INT_EQ(a->enc->choice[0], 0);                 /* the first in the sequence */
    float sum = 0.0f;
    for (int k = 0; k < a->feat.V; k++) sum += row[k];
    CHECK_NEAR(sum, 1.0, 0.0);
    CHECK_NEAR(row[a->feat.V + a->feat.S], 64.0 / 384.0, 1e-7); /* output dims / 384, the largest */
    CHECK_NEAR(row[a->feat.V + a->feat.S + 1], 128.0 / 384.0, 1e-7);
    CHECK_NEAR(row[a->feat.V], 0.0, 0.0); /* no input */
    free(row);
    dp_agent_free(a);
    dp_graph_free(g1);
    dp_devices_free(ds);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_config_presets);
    TEST_RUN(test_config_refusals);
    TEST_RUN(test_fixed_type_ids);
    TEST_RUN(test_node_features);
    TEST_RUN(test_policy_gradient_fd_seq2seq);
    TEST_RUN(test_policy_gradient_fd_txl);
    TEST_RUN(test_pretraining_lowers_loss);
    TEST_RUN(test_pretraining_keeps_lowest);
    TEST_RUN(test_pretraining_leaves_optimizer_fresh);
    TEST_RUN(test_save_load_places_as_before);
    TEST_RUN(test_init_same_graph);
    TEST_RUN(test_init_other_graph);
    TEST_RUN(test_init_other_networks_refused);
    TEST_RUN(test_checkpoint_resume);
    TEST_RUN(test_warm_start_diverged);
    TEST_RUN(test_pretraining_diverged);
    TEST_RUN(test_progress_of_every_phase);
    TEST_RUN(test_cancel_mid_update);
    TEST_RUN(test_ppo_finds_known_best);
    return test_end();
}
