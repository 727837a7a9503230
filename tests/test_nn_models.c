/* Finite-difference gradient checks of composed models: grouper + group
 * embeddings + bidirectional encoder + attention decoder (both attention
 * placements), and GCN + readout + bilinear discriminator (Deep Graph
 * Infomax); identical results for identical seeds, and for 1 and 2
 * threads where the grouper splits its rows over the pool. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/nn.h"
#include "dplace/nn_check.h"
#include "dplace/nn_models.h"
#include "nn/nn_internal.h"
#include "test_fixtures.h"

/* seq2seq: smooth apart from the grouper's ReLU, whose inputs are kept 0.05
 * away from the kink, so a large step keeps float32 noise low; GCN: PReLU
 * kinks at every node, so a small step and kink detection. */
#ifndef EPS
#define EPS 2e-2
#endif
#define GCN_EPS 1e-3
#define KINK 0.5
#define FLOOR 1e-2
#define TOL 2e-2
#define MAXPTS 120
/* some numeric gradient of every tensor exceeds this, far above the float32
 * noise of the differences: the loss reaches the tensor */
#define REACH 1e-4

static double g_worst = 0.0;

/* ---- grouper + group embeddings + seq2seq placer ---- */

enum { OPS = 12, FIN = 5, GROUPS = 4, BATCH = 2, DEV = 3 };

typedef struct hp_ctx {
    dp_nn_params p;
    dp_nn_grouper grouper;
    dp_nn_seq2seq placer;
    float x[OPS * FIN], dx[OPS * FIN];
    int groups[OPS];
    int devices[BATCH * GROUPS];
    float ge[BATCH * GROUPS * FIN], dge[BATCH * GROUPS * FIN], count[GROUPS];
    float lp[BATCH], ent[BATCH];
    float coef_g, ent_g, coef_d[BATCH], ent_d[BATCH];
    int use_rows;      /* 1: the grouper's rows weighted one by one (PPO's per-decision ratios) */
    float rows[OPS];   /* per-row weights added to coef_g */
} hp_ctx;

/* group embedding = mean of the member ops' features, one copy per sample */
static double hp_loss(void *vctx) {
    hp_ctx *c = vctx;
    float gent;
    float glp = dp_nn_grouper_forward(&c->grouper, c->groups, &gent, c->x, DP_NN_DECODE_MODE_TEACHER,
                                      NULL, 0.0f, OPS);
    dp_nn_group_mean_forward(c->ge, c->count, c->x, c->groups, OPS, FIN, GROUPS);
    for (int b = 1; b < BATCH; b++) memcpy(c->ge + b * GROUPS * FIN, c->ge, sizeof(float) * GROUPS * FIN);
    dp_nn_seq2seq_forward(&c->placer, c->lp, c->ent, c->devices, c->ge, NULL, NULL,
                          DP_NN_DECODE_MODE_TEACHER, NULL, 0.0f);
    double s = (double)c->coef_g * glp + (double)c->ent_g * gent;
    if (c->use_rows) /* + sum_n rows[n] log p(groups[n] | x[n]), from the forward's log-probabilities */
        for (int n = 0; n < OPS; n++) s += (double)c->rows[n] * c->grouper.logp[(size_t)n * GROUPS + c->groups[n]];
    for (int b = 0; b < BATCH; b++) s += (double)c->coef_d[b] * c->lp[b] + (double)c->ent_d[b] * c->ent[b];
    return s;
}

static void hp_grad(void *vctx) {
    hp_ctx *c = vctx;
    dp_nn_params_zero_grad(&c->p);
    memset(c->dx, 0, sizeof c->dx);
    memset(c->dge, 0, sizeof c->dge);
    hp_loss(c);
    dp_nn_seq2seq_backward(&c->placer, c->dge, c->coef_d, c->ent_d, c->devices, c->ge);
    for (int b = 0; b < BATCH; b++)
        dp_nn_group_mean_backward(c->dx, c->dge + b * GROUPS * FIN, c->count, c->groups, OPS, FIN, GROUPS);
    if (c->use_rows)
        dp_nn_grouper_backward_rows(&c->grouper, c->dx, c->groups, c->x, c->rows, c->coef_g, c->ent_g, OPS);
    else
        dp_nn_grouper_backward(&c->grouper, c->dx, c->groups, c->x, c->coef_g, c->ent_g, OPS);
}

static void check_hp(dp_nn_attention_mode mode, int ctx_to_output, int use_rows, const char *label) {
    static const int32_t prior[OPS] = {1, 0, 2, 3, 0, 2, 1, 3, 2, 1, 0, 3};
    hp_ctx *c = calloc(1, sizeof *c);
    dp_nn_grouper_config gc = {FIN, 6, GROUPS, 0.0f, 1.0f};
    dp_nn_seq2seq_config sc = {FIN, 3, DEV, 4, 3, mode, ctx_to_output, 5.0f, 2.0f, 0, use_rows ? 1.5f : 0.0f, 0x6 /* devices 1 and 2 */};
    dp_nn_tensor_spec specs[16];
    int n = dp_nn_grouper_specs(specs, &gc);
    n += dp_nn_seq2seq_specs(specs + n, &sc);
    dp_rng rng;
    dp_rng_seed(&rng, 42);
    dp_error err;
    CHECK(dp_nn_params_init(&c->p, specs, n, &rng, &err) == DP_STATUS_OK);
    /* larger initial weights than the defaults so every path carries gradient */
    for (size_t i = 0; i < c->p.count; i++) c->p.data[i] *= 2.0f;
    CHECK(dp_nn_grouper_init(&c->grouper, &gc, &c->p, OPS, &err) == DP_STATUS_OK);
    if (use_rows) c->grouper.prior = prior, c->grouper.prior_scale = 1.5f; /* a constant: gradients unchanged */
    CHECK(dp_nn_seq2seq_init(&c->placer, &sc, &c->p, BATCH, GROUPS, &err) == DP_STATUS_OK);
    /* redraw the features until no ReLU input of the grouper lies within
     * 0.05 of its kink, where a finite difference of step EPS is not valid */
    for (int attempt = 0;; attempt++) {
        CHECK(attempt < 1000);
        for (int i = 0; i < OPS * FIN; i++) c->x[i] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0);
        float pre[OPS * 6];
        dp_nn_linear_forward(pre, c->x, c->grouper.w1, c->grouper.b1, OPS, FIN, 6);
        int near = 0;
        for (int i = 0; i < OPS * 6; i++) near |= fabsf(pre[i]) < 0.05f;
        if (!near) break;
    }
    for (int i = 0; i < OPS; i++) c->groups[i] = i % GROUPS;
    for (int i = 0; i < BATCH * GROUPS; i++) c->devices[i] = (int)dp_rng_below(&rng, DEV);
    c->coef_g = 0.7f, c->ent_g = -0.3f;
    c->coef_d[0] = 1.0f, c->coef_d[1] = -0.6f, c->ent_d[0] = 0.2f, c->ent_d[1] = 0.5f;
    c->use_rows = use_rows;
    for (int i = 0; i < OPS; i++) c->rows[i] = (float)(1.6 * dp_rng_uniform(&rng) - 0.8); /* mixed signs */
    dp_nn_check_tensor t[16];
    dp_nn_check_result r[16];
    for (int i = 0; i < c->p.ntensors; i++) {
        t[i].name = c->p.name[i];
        t[i].value = dp_nn_params_tensor(&c->p, i);
        t[i].grad = dp_nn_params_grad(&c->p, i);
        t[i].count = c->p.size[i];
    }
    int nt = c->p.ntensors;
    t[nt] = (dp_nn_check_tensor){"op_features", c->x, c->dx, OPS * FIN};
    nt++;
    dp_nn_gradcheck(r, c, hp_loss, hp_grad, t, nt, EPS, FLOOR, 0.0, MAXPTS, 5);
    g_worst = fmax(g_worst, fixture_gradcheck_report(label, t, r, nt, TOL, REACH));
    dp_nn_grouper_free(&c->grouper);
    dp_nn_seq2seq_free(&c->placer);
    dp_nn_params_free(&c->p);
    free(c);
}

/* The Hierarchical Planner's model, attention before the cell, context
 * joined to the output: every gradient. */
static void test_hp_before(void) { check_hp(DP_NN_ATTENTION_MODE_BEFORE, 1, 0, "s2s(before)"); }
/* The same with logits from h alone. */
static void test_hp_before_plain(void) { check_hp(DP_NN_ATTENTION_MODE_BEFORE, 0, 0, "s2s(before,h)"); }
/* Attention after the cell. */
static void test_hp_after(void) { check_hp(DP_NN_ATTENTION_MODE_AFTER, 0, 0, "s2s(after)"); }
/* the grouper's per-row weights (dp_nn_grouper_backward_rows), as PPO's
 * per-decision ratios use them */
static void test_hp_grouper_rows(void) { check_hp(DP_NN_ATTENTION_MODE_AFTER, 0, 1, "s2s+rows"); }

/* The grouper's prior adds prior_scale to the prior class's logit: with
 * the output layer zero every logit is equal, so p(prior) = e^s / (e^s +
 * G - 1), and greedy decoding picks the prior. */
static void test_grouper_prior(void) {
    dp_nn_grouper_config gc = {FIN, 6, GROUPS, 5.0f, 10.0f};
    dp_nn_tensor_spec specs[8];
    int n = dp_nn_grouper_specs(specs, &gc);
    dp_rng rng;
    dp_rng_seed(&rng, 3);
    dp_nn_params p;
    dp_nn_grouper gr;
    CHECK(dp_nn_params_init(&p, specs, n, &rng, NULL) == DP_STATUS_OK);
    CHECK(dp_nn_grouper_init(&gr, &gc, &p, OPS, NULL) == DP_STATUS_OK);
    memset(gr.w2, 0, sizeof(float) * 6 * GROUPS), memset(gr.b2, 0, sizeof(float) * GROUPS);
    int32_t prior[OPS];
    int act[OPS];
    float x[OPS * FIN];
    for (int i = 0; i < OPS * FIN; i++) x[i] = (float)dp_rng_normal(&rng);
    for (int i = 0; i < OPS; i++) prior[i] = (i * 7) % GROUPS;
    gr.prior = prior, gr.prior_scale = 2.0f;
    dp_nn_grouper_forward(&gr, act, NULL, x, DP_NN_DECODE_MODE_GREEDY, &rng, 0.0f, OPS);
    double want = log(exp(2.0) / (exp(2.0) + GROUPS - 1));
    for (int i = 0; i < OPS; i++) {
        CHECK_INT_EQ(act[i], prior[i]);
        CHECK_NEAR(gr.logp[(size_t)i * GROUPS + prior[i]], want, 1e-6);
    }
    dp_nn_grouper_free(&gr);
    dp_nn_params_free(&p);
}

/* A grouper large enough for its row-wise passes to split over the pool
 * (nn_kern.h NN_ROWS_PAR_WORK): at 1 and 2 threads the same bits, and the
 * bits of the layer functions it fuses (noise, logits, prior, log-softmax
 * forward; the entropy's gradient, the log-softmax and logits backward)
 * applied one after another. */
enum { BIG_N = 1500, BIG_G = 256, BIG_F = 5 };
typedef struct big_run {
    float noise[BIG_N * BIG_G], logp[BIG_N * BIG_G], dl[BIG_N * BIG_G], dw1[6 * BIG_F], dw2[6 * BIG_G];
    int act[BIG_N];
    float lp, ent;
} big_run;

/* The layer functions (noise, logits, prior, log-softmax forward; the
 * entropy's gradient, the log-softmax and logits backward) applied one
 * after another to the grouper gr's own l give the bits of its fused
 * passes in out. */
static void check_layer_functions(const dp_nn_grouper *gr, const dp_nn_tensor_spec *specs, int n, const big_run *out,
                                  const int32_t *prior, const float *rows) {
    /* the layer functions one after another, from the grouper's own l */
    static float ref[BIG_N * BIG_G], tact[BIG_N * BIG_G], d1[BIG_N * BIG_G], d2[BIG_N * BIG_G];
    dp_rng r2;
    dp_rng_seed(&r2, 11);
    dp_nn_params q;
    CHECK(dp_nn_params_init(&q, specs, n, &r2, NULL) == DP_STATUS_OK); /* the same draws as above */
    for (int i = 0; i < BIG_N * BIG_F; i++) (void)dp_rng_normal(&r2);
    dp_nn_set_threads(1);
    dp_nn_noise_fill(ref, &r2, (size_t)BIG_N * BIG_G, 0.1f);
    CHECK(memcmp(ref, out->noise, sizeof ref) == 0);
    dp_nn_policy_logits_forward(ref, tact, gr->l, out->noise, BIG_N, BIG_G, 5.0f, 10.0f);
    for (int i = 0; i < BIG_N; i++) ref[(size_t)i * BIG_G + prior[i]] += 3.0f;
    dp_nn_log_softmax_forward(ref, ref, BIG_N, BIG_G);
    CHECK(memcmp(ref, out->logp, sizeof ref) == 0);
    memset(d1, 0, sizeof d1);
    for (int i = 0; i < BIG_N; i++) d1[(size_t)i * BIG_G + out->act[i]] += -0.7f + rows[i];
    for (size_t i = 0; i < (size_t)BIG_N * BIG_G; i++) d1[i] -= 0.05f * nn_exp(ref[i]) * (1.0f + ref[i]);
    memset(d2, 0, sizeof d2);
    dp_nn_log_softmax_backward(d2, d1, ref, BIG_N, BIG_G);
    memset(d1, 0, sizeof d1);
    dp_nn_policy_logits_backward(d1, d2, tact, BIG_N, BIG_G, 5.0f, 10.0f);
    CHECK(memcmp(d1, out->dl, sizeof d1) == 0);
    dp_nn_params_free(&q);
}

/* One run of the big grouper at `threads` threads into out; with
 * check_layers, against the layer functions (check_layer_functions). */
static void big_grouper(int threads, big_run *out, int check_layers) {
    dp_nn_set_threads(threads);
    dp_nn_grouper_config gc = {BIG_F, 6, BIG_G, 5.0f, 10.0f};
    dp_nn_tensor_spec specs[8];
    int n = dp_nn_grouper_specs(specs, &gc);
    dp_rng rng;
    dp_rng_seed(&rng, 11);
    dp_nn_params p;
    dp_nn_grouper gr;
    CHECK(dp_nn_params_init(&p, specs, n, &rng, NULL) == DP_STATUS_OK);
    CHECK(dp_nn_grouper_init(&gr, &gc, &p, BIG_N, NULL) == DP_STATUS_OK);
    static int32_t prior[BIG_N];
    static float x[BIG_N * BIG_F], rows[BIG_N], dx[BIG_N * BIG_F];
    for (int i = 0; i < BIG_N * BIG_F; i++) x[i] = (float)dp_rng_normal(&rng);
    for (int i = 0; i < BIG_N; i++) prior[i] = (i * 37) % BIG_G, rows[i] = (float)(i % 5) * 0.1f;
    gr.prior = prior, gr.prior_scale = 3.0f;
    out->lp = dp_nn_grouper_forward(&gr, out->act, &out->ent, x, DP_NN_DECODE_MODE_SAMPLE, &rng, 0.1f, BIG_N);
    memcpy(out->noise, gr.noise, sizeof out->noise);
    memcpy(out->logp, gr.logp, sizeof out->logp);
    dp_nn_params_zero_grad(&p);
    memset(dx, 0, sizeof dx);
    dp_nn_grouper_backward_rows(&gr, dx, out->act, x, rows, -0.7f, 0.05f, BIG_N);
    memcpy(out->dl, gr.dlogp, sizeof out->dl);
    memcpy(out->dw1, gr.dw1, sizeof out->dw1);
    memcpy(out->dw2, gr.dw2, sizeof out->dw2);
    if (check_layers) check_layer_functions(&gr, specs, n, out, prior, rows);
    dp_nn_grouper_free(&gr);
    dp_nn_params_free(&p);
    dp_nn_set_threads(1);
}


/* The grouper at 1 and 2 threads: the same bits. */
static void test_grouper_threads(void) {
    static big_run one, two;
    big_grouper(1, &one, 0);
    big_grouper(2, &two, 0);
    CHECK(memcmp(&one, &two, sizeof one) == 0);
}

/* The grouper's fused passes give the bits of its layer functions applied
 * one after another, at 1 and 2 threads. */
static void test_grouper_matches_layer_functions(void) {
    static big_run run;
    for (int threads = 1; threads <= 2; threads++) {
        TEST_CASE("%d threads", threads);
        big_grouper(threads, &run, 1);
    }
}

/* ---- GCN + readout + discriminator ---- */

enum { NODES = 9, GF = 4, GH = 5 };

typedef struct dgi_ctx {
    dp_nn_params p;
    dp_nn_gcn gcn;
    dp_nn_graph g;
    float x[NODES * GF], dx[NODES * GF], w[NODES * GH];
    int perm[NODES];
    int encode; /* 1: loss = sum w * embeddings; 0: DGI loss */
} dgi_ctx;

static double dgi_loss(void *vctx) {
    dgi_ctx *c = vctx;
    if (c->encode) {
        const float *h = dp_nn_gcn_encode(&c->gcn, &c->g, c->x);
        double s = 0.0;
        for (int i = 0; i < NODES * GH; i++) s += (double)c->w[i] * h[i];
        return s;
    }
    return dp_nn_gcn_dgi_forward(&c->gcn, &c->g, c->x, c->perm, NULL);
}

static void dgi_grad(void *vctx) {
    dgi_ctx *c = vctx;
    dp_nn_params_zero_grad(&c->p);
    memset(c->dx, 0, sizeof c->dx);
    dgi_loss(c);
    if (c->encode) dp_nn_gcn_encode_backward(&c->gcn, c->dx, &c->g, c->x, c->w);
    else dp_nn_gcn_dgi_backward(&c->gcn, &c->g, c->x, 1.0f);
}

static void check_dgi(int encode) {
    dgi_ctx *c = calloc(1, sizeof *c);
    dp_nn_gcn_config gc = {GF, GH, 3};
    dp_nn_tensor_spec specs[16];
    int n = dp_nn_gcn_specs(specs, &gc);
    dp_rng rng;
    dp_rng_seed(&rng, 9);
    dp_error err;
    CHECK(dp_nn_params_init(&c->p, specs, n, &rng, &err) == DP_STATUS_OK);
    /* biases away from zero so PReLU kinks are not hit by chance */
    for (size_t i = 0; i < c->p.count; i++)
        if (c->p.data[i] == 0.0f) c->p.data[i] = (float)(dp_rng_uniform(&rng) - 0.5);
    CHECK(dp_nn_gcn_init(&c->gcn, &gc, &c->p, NODES, &err) == DP_STATUS_OK);
    int src[] = {0, 0, 1, 2, 3, 4, 5, 6, 7, 2};
    int dst[] = {1, 2, 3, 3, 4, 5, 6, 7, 8, 8};
    CHECK(dp_nn_graph_init(&c->g, NODES, src, dst, 10, &err) == DP_STATUS_OK);
    for (int i = 0; i < NODES * GF; i++) c->x[i] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0);
    for (int i = 0; i < NODES * GH; i++) c->w[i] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0);
    dp_nn_permutation_sample(c->perm, &rng, NODES);
    c->encode = encode;
    dp_nn_check_tensor t[16];
    dp_nn_check_result r[16];
    int nt = 0;
    for (int i = 0; i < c->p.ntensors; i++) {
        if (encode && strncmp(c->p.name[i], "dgi.", 4) == 0) continue;
        t[nt] = (dp_nn_check_tensor){c->p.name[i], dp_nn_params_tensor(&c->p, i),
                                     dp_nn_params_grad(&c->p, i), c->p.size[i]};
        nt++;
    }
    if (encode) t[nt++] = (dp_nn_check_tensor){"node_features", c->x, c->dx, NODES * GF};
    dp_nn_gradcheck(r, c, dgi_loss, dgi_grad, t, nt, GCN_EPS, FLOOR, KINK, MAXPTS, 5);
    g_worst = fmax(g_worst, fixture_gradcheck_report(encode ? "gcn(encode)" : "gcn+dgi", t, r, nt, TOL, REACH));
    dp_nn_graph_free(&c->g);
    dp_nn_gcn_free(&c->gcn);
    dp_nn_params_free(&c->p);
    free(c);
}

/* The GCN encoder's gradients, node features included. */
static void test_gcn_encode(void) { check_dgi(1); }
/* The Deep Graph Infomax loss's gradients. */
static void test_dgi(void) { check_dgi(0); }

/* ---- determinism: a few sampled REINFORCE updates, twice ---- */

static void train_run(uint64_t seed, float *out_params, size_t *count, int *out_actions) {
    dp_nn_grouper_config gc = {FIN, 6, GROUPS, 5.0f, 10.0f};
    dp_nn_seq2seq_config sc = {FIN, 3, DEV, 4, 3, DP_NN_ATTENTION_MODE_AFTER, 1, 5.0f, 10.0f, 0, 0.0f, 0};
    dp_nn_tensor_spec specs[16];
    int n = dp_nn_grouper_specs(specs, &gc);
    n += dp_nn_seq2seq_specs(specs + n, &sc);
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    dp_nn_params p;
    dp_nn_grouper gr;
    dp_nn_seq2seq pl;
    CHECK(dp_nn_params_init(&p, specs, n, &rng, NULL) == DP_STATUS_OK);
    CHECK(dp_nn_grouper_init(&gr, &gc, &p, OPS, NULL) == DP_STATUS_OK);
    CHECK(dp_nn_seq2seq_init(&pl, &sc, &p, BATCH, GROUPS, NULL) == DP_STATUS_OK);
    float x[OPS * FIN], ge[BATCH * GROUPS * FIN], cnt[GROUPS], lp[BATCH], adv[BATCH];
    int groups[OPS], dev[BATCH * GROUPS];
    for (int i = 0; i < OPS * FIN; i++) x[i] = (float)dp_rng_normal(&rng);
    dp_nn_adam adam = dp_nn_adam_default();
    for (int it = 0; it < 3; it++) {
        dp_nn_params_zero_grad(&p);
        dp_nn_grouper_forward(&gr, groups, NULL, x, DP_NN_DECODE_MODE_SAMPLE, &rng, 0.1f, OPS);
        for (int i = 0; i < OPS; i++) groups[i] = groups[i] % GROUPS;
        dp_nn_group_mean_forward(ge, cnt, x, groups, OPS, FIN, GROUPS);
        for (int b = 1; b < BATCH; b++) memcpy(ge + b * GROUPS * FIN, ge, sizeof(float) * GROUPS * FIN);
        dp_nn_seq2seq_forward(&pl, lp, NULL, dev, ge, NULL, NULL, DP_NN_DECODE_MODE_SAMPLE, &rng, 0.1f);
        for (int b = 0; b < BATCH; b++) adv[b] = (float)(dp_rng_uniform(&rng) - 0.5);
        dp_nn_seq2seq_backward(&pl, NULL, adv, NULL, dev, ge);
        dp_nn_grouper_backward(&gr, NULL, groups, x, 0.5f, 0.0f, OPS);
        dp_nn_grad_clip(&p, 1.0);
        dp_nn_adam_update(&p, &adam, 0.1f);
    }
    memcpy(out_params, p.data, sizeof(float) * p.count);
    memcpy(out_actions, dev, sizeof dev);
    *count = p.count;
    dp_nn_grouper_free(&gr);
    dp_nn_seq2seq_free(&pl);
    dp_nn_params_free(&p);
}

/* A few sampled REINFORCE updates: the same seed gives the same
 * parameters and actions, another seed other parameters. */
static void test_determinism(void) {
    static float a[4096], b[4096], c[4096];
    int da[BATCH * GROUPS], db[BATCH * GROUPS], dc[BATCH * GROUPS];
    size_t na, nb, nc;
    train_run(123, a, &na, da);
    train_run(123, b, &nb, db);
    train_run(124, c, &nc, dc);
    CHECK(na < 4096 && na == nb && na == nc);
    CHECK(memcmp(a, b, sizeof(float) * na) == 0);
    CHECK(memcmp(da, db, sizeof da) == 0);
    CHECK(memcmp(a, c, sizeof(float) * na) != 0);
}

/* Mars-style segments: the second segment continues from the first's final
 * decoder state, and starting it from zeros gives different probabilities. */
static void test_segments(void) {
    dp_nn_seq2seq_config sc = {FIN, 3, DEV, 4, 3, DP_NN_ATTENTION_MODE_BEFORE, 0, 0.0f, 1.0f, 0, 0.0f, 0};
    dp_nn_tensor_spec specs[8];
    int n = dp_nn_seq2seq_specs(specs, &sc);
    dp_rng rng;
    dp_rng_seed(&rng, 77);
    dp_nn_params p;
    dp_nn_seq2seq pl;
    CHECK(dp_nn_params_init(&p, specs, n, &rng, NULL) == DP_STATUS_OK);
    CHECK(dp_nn_seq2seq_init(&pl, &sc, &p, 1, GROUPS, NULL) == DP_STATUS_OK);
    float seg1[GROUPS * FIN], seg2[GROUPS * FIN], lp1, lp2, lp2z;
    for (int i = 0; i < GROUPS * FIN; i++) seg1[i] = (float)dp_rng_normal(&rng), seg2[i] = (float)dp_rng_normal(&rng);
    int a1[GROUPS] = {0, 1, 2, 0}, a2[GROUPS] = {2, 2, 1, 0};
    dp_nn_seq2seq_forward(&pl, &lp1, NULL, a1, seg1, NULL, NULL, DP_NN_DECODE_MODE_TEACHER, NULL, 0.0f);
    float h[3], c[3];
    memcpy(h, pl.h_last, sizeof h);
    memcpy(c, pl.c_last, sizeof c);
    dp_nn_seq2seq_forward(&pl, &lp2, NULL, a2, seg2, pl.h_last, pl.c_last, DP_NN_DECODE_MODE_TEACHER, NULL, 0.0f);
    CHECK(memcmp(pl.h, h, sizeof h) == 0); /* the carried state started segment 2 */
    dp_nn_seq2seq_forward(&pl, &lp2z, NULL, a2, seg2, NULL, NULL, DP_NN_DECODE_MODE_TEACHER, NULL, 0.0f);
    CHECK(lp2 != lp2z);
    dp_nn_seq2seq_free(&pl);
    dp_nn_params_free(&p);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    dp_nn_set_threads(1);
    TEST_RUN(test_hp_before);
    TEST_RUN(test_hp_before_plain);
    TEST_RUN(test_hp_after);
    TEST_RUN(test_hp_grouper_rows);
    TEST_RUN(test_grouper_prior);
    TEST_RUN(test_grouper_threads);
    TEST_RUN(test_grouper_matches_layer_functions);
    TEST_RUN(test_gcn_encode);
    TEST_RUN(test_dgi);
    TEST_RUN(test_determinism);
    TEST_RUN(test_segments);
    printf("largest relative error over composed models: %.2e (tolerance %.0e)\n", g_worst, TOL);
    return test_end();
}
