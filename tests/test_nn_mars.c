/* Mars's pieces in the nn engine: finite-difference checks of the
 * segment-level seq2seq placer (encoder and decoder started from the
 * previous segment's final state, the gradient flowing back through it;
 * one encoder shared by all samples; per-decision weights), agreement of
 * the shared encoder with one encoder per sample; the composed Mars policy
 * (GCN encoder + segment placer over all operations, with and without
 * recomputed segments), DGI pre-training lowering its loss, and a saved and
 * reloaded policy placing identically. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dplace/nn.h"
#include "dplace/nn_check.h"
#include "dplace/nn_mars.h"
#include "dplace/nn_models.h"
#include "test_fixtures.h"

/* Smooth models summing tens of log-probabilities: a step large enough to
 * keep float32 noise low (~1e-7 |loss| / EPS), small enough for the
 * curvature of the doubled weights; test_nn_models's tolerance. */
#ifndef EPS
#define EPS 1e-2
#endif
#define FLOOR 1e-2
#define TOL 2e-2
#define MAXPTS 60
/* some numeric gradient of every tensor exceeds this: the loss reaches it */
#define REACH 1e-4

static double g_worst = 0.0;

static float *frand(dp_rng *rng, size_t n, float scale) {
    float *p = calloc(n ? n : 1, sizeof(float));
    CHECK(p != NULL);
    for (size_t i = 0; i < n; i++) p[i] = (float)((2.0 * dp_rng_uniform(rng) - 1.0) * scale);
    return p;
}

static float *fzero(size_t n) {
    float *p = calloc(n ? n : 1, sizeof(float));
    CHECK(p != NULL);
    return p;
}

/* ---- segment chain: NSEG segments, each its own workspace, full gradient ---- */

enum { NSEG = 2, SB = 2, SF = 4, SH = 3, SD = 3 };

typedef struct seg_ctx {
    dp_nn_params p;
    dp_nn_seq2seq s[NSEG];
    int T, Be;
    float *x[NSEG], *dx[NSEG];
    int *act[NSEG];
    float *coef[NSEG], *entc[NSEG], *step[NSEG];
    dp_nn_seq2seq_state start, dstart; /* segment 0's start state and its gradient */
    int prev0[SB];
    dp_nn_seq2seq_state dbuf[2];       /* gradients between segments */
} seg_ctx;

/* The loss is summed in double from the saved per-step log-probabilities
 * (less float32 noise than the float sums the forward returns). */
static double seg_loss(void *vctx) {
    seg_ctx *c = vctx;
    double s = 0.0;
    for (int k = 0; k < NSEG; k++) {
        float lp[SB], ent[SB];
        const dp_nn_seq2seq_state *st = k == 0 ? &c->start : &c->s[k - 1].last;
        dp_nn_seq2seq_segment_forward(&c->s[k], lp, ent, c->act[k], c->x[k], st, DP_NN_DECODE_MODE_TEACHER,
                                      NULL, 0.0f);
        for (int b = 0; b < SB; b++)
            for (int t = 0; t < c->T; t++) {
                const float *logp = c->s[k].logp + ((size_t)t * SB + b) * SD;
                double h = 0.0;
                for (int d = 0; d < SD; d++) h -= exp((double)logp[d]) * logp[d];
                s += ((double)c->coef[k][b] + c->step[k][b * c->T + t]) * logp[c->act[k][b * c->T + t]] +
                     (double)c->entc[k][b] * h;
            }
    }
    return s;
}

static void zero_state(dp_nn_seq2seq_state *s, int Be) {
    memset(s->enc_h, 0, sizeof(float) * 2 * Be * SH);
    memset(s->enc_c, 0, sizeof(float) * 2 * Be * SH);
    memset(s->dec_h, 0, sizeof(float) * SB * SH);
    memset(s->dec_c, 0, sizeof(float) * SB * SH);
}

static void seg_grad(void *vctx) {
    seg_ctx *c = vctx;
    dp_nn_params_zero_grad(&c->p);
    for (int k = 0; k < NSEG; k++) memset(c->dx[k], 0, sizeof(float) * c->Be * c->T * SF);
    zero_state(&c->dstart, c->Be);
    seg_loss(c);
    for (int k = NSEG - 1; k >= 0; k--) {
        dp_nn_seq2seq_state *dst = k == 0 ? &c->dstart : &c->dbuf[k % 2];
        if (k > 0) zero_state(dst, c->Be);
        const dp_nn_seq2seq_state *dlast = k == NSEG - 1 ? NULL : &c->dbuf[(k + 1) % 2];
        dp_nn_seq2seq_segment_backward(&c->s[k], c->dx[k], dst, c->coef[k], c->step[k], c->entc[k], dlast,
                                       c->act[k], c->x[k]);
    }
}

static dp_nn_seq2seq_state alloc_state(dp_rng *rng, int Be, float scale) {
    dp_nn_seq2seq_state s = {0};
    s.enc_h = rng ? frand(rng, 2 * Be * SH, scale) : fzero(2 * Be * SH);
    s.enc_c = rng ? frand(rng, 2 * Be * SH, scale) : fzero(2 * Be * SH);
    s.dec_h = rng ? frand(rng, SB * SH, scale) : fzero(SB * SH);
    s.dec_c = rng ? frand(rng, SB * SH, scale) : fzero(SB * SH);
    return s;
}

static void free_state(dp_nn_seq2seq_state *s) {
    free(s->enc_h), free(s->enc_c), free(s->dec_h), free(s->dec_c);
}

/* A chain of NSEG segments to check every parameter, every segment's input
 * and segment 0's start state (so both the incoming and the outgoing state
 * gradients are covered); the T = 7 and after-attention cases with the
 * previous device's logit bonus (stick; after-attention: for devices 0 and
 * 2 only). */
static seg_ctx *seg_setup(dp_nn_attention_mode mode, int join, int shared, int T) {
    seg_ctx *c = calloc(1, sizeof *c);
    dp_nn_seq2seq_config sc = {.in_dim = SF, .hidden = SH, .devices = SD, .attn_dim = 4, .emb_dim = 3,
                               .mode = mode, .ctx_to_output = join, .tanh_c = 0.0f, .temperature = 1.0f,
                               .shared_input = shared,
                               .stick = T == 7 || mode == DP_NN_ATTENTION_MODE_AFTER ? 1.3f : 0.0f,
                               .stick_mask = mode == DP_NN_ATTENTION_MODE_AFTER ? 0x5 : 0};
    dp_nn_tensor_spec specs[8];
    int n = dp_nn_seq2seq_specs(specs, &sc);
    dp_rng rng;
    dp_rng_seed(&rng, 1234);
    CHECK(dp_nn_params_init(&c->p, specs, n, &rng, NULL) == DP_STATUS_OK);
    for (size_t i = 0; i < c->p.count; i++) c->p.data[i] *= 2.0f; /* every path carries gradient */
    c->T = T;
    c->Be = shared ? 1 : SB;
    for (int k = 0; k < NSEG; k++) {
        CHECK(dp_nn_seq2seq_init(&c->s[k], &sc, &c->p, SB, T, NULL) == DP_STATUS_OK);
        c->x[k] = frand(&rng, (size_t)c->Be * T * SF, 1.0f);
        c->dx[k] = fzero((size_t)c->Be * T * SF);
        c->act[k] = malloc(sizeof(int) * SB * T);
        CHECK(c->act[k] != NULL);
        for (int i = 0; i < SB * T; i++) c->act[k][i] = (int)dp_rng_below(&rng, SD);
        c->coef[k] = frand(&rng, SB, 1.0f);
        c->entc[k] = frand(&rng, SB, 0.5f);
        c->step[k] = frand(&rng, (size_t)SB * T, 0.5f);
    }
    CHECK(shared != 0 || !c->s[0].use_p);
    c->start = alloc_state(&rng, c->Be, 0.8f);
    for (int b = 0; b < SB; b++) c->prev0[b] = (int)dp_rng_below(&rng, SD);
    c->start.prev = c->prev0;
    c->dstart = alloc_state(NULL, c->Be, 0.0f);
    for (int i = 0; i < 2; i++) c->dbuf[i] = alloc_state(NULL, c->Be, 0.0f);
    return c;
}

static void seg_free(seg_ctx *c) {
    for (int k = 0; k < NSEG; k++) {
        dp_nn_seq2seq_free(&c->s[k]);
        free(c->x[k]), free(c->dx[k]), free(c->act[k]), free(c->coef[k]), free(c->entc[k]), free(c->step[k]);
    }
    free_state(&c->start), free_state(&c->dstart), free_state(&c->dbuf[0]), free_state(&c->dbuf[1]);
    dp_nn_params_free(&c->p);
    free(c);
}

/* Checks every parameter, every segment's input and segment 0's start
 * state of seg_setup's chain. */
static void check_segments(dp_nn_attention_mode mode, int join, int shared, int T, const char *label) {
    TEST_CASE("%s", label);
    seg_ctx *c = seg_setup(mode, join, shared, T);
    dp_nn_check_tensor t[24];
    dp_nn_check_result r[24];
    int nt = 0;
    for (int i = 0; i < c->p.ntensors; i++)
        t[nt++] = (dp_nn_check_tensor){c->p.name[i], dp_nn_params_tensor(&c->p, i), dp_nn_params_grad(&c->p, i),
                                       c->p.size[i]};
    static const char *const xname[NSEG] = {"input.seg0", "input.seg1"};
    for (int k = 0; k < NSEG; k++)
        t[nt++] = (dp_nn_check_tensor){xname[k], c->x[k], c->dx[k], (size_t)c->Be * T * SF};
    size_t ne = (size_t)2 * c->Be * SH, nd = (size_t)SB * SH;
    t[nt++] = (dp_nn_check_tensor){"start.enc_h", c->start.enc_h, c->dstart.enc_h, ne};
    t[nt++] = (dp_nn_check_tensor){"start.enc_c", c->start.enc_c, c->dstart.enc_c, ne};
    t[nt++] = (dp_nn_check_tensor){"start.dec_h", c->start.dec_h, c->dstart.dec_h, nd};
    t[nt++] = (dp_nn_check_tensor){"start.dec_c", c->start.dec_c, c->dstart.dec_c, nd};
    dp_nn_gradcheck(r, c, seg_loss, seg_grad, t, nt, EPS, FLOOR, 0.0, MAXPTS, 3);
    g_worst = fmax(g_worst, fixture_gradcheck_report(label, t, r, nt, TOL, REACH));
    seg_free(c);
}

/* Mars's placer: context before the cell, logits from h alone, one encoder
 * for all samples; T <= 2H, so the context enters the cell as att @ P */
static void test_segments_mars(void) {
    check_segments(DP_NN_ATTENTION_MODE_BEFORE, 0, 1, 4, "seg(before,shared,P)");
}
/* the same with the context joined to the output */
static void test_segments_join(void) {
    check_segments(DP_NN_ATTENTION_MODE_BEFORE, 1, 1, 4, "seg(before,join,P)");
}
/* shared, T > 2H: the context enters the cell directly */
static void test_segments_long(void) {
    check_segments(DP_NN_ATTENTION_MODE_BEFORE, 0, 1, 7, "seg(before,shared,ctx)");
}
/* one encoder per sample, attention before the cell */
static void test_segments_unshared_before(void) {
    check_segments(DP_NN_ATTENTION_MODE_BEFORE, 1, 0, 4, "seg(before,per-sample)");
}
/* one encoder per sample, attention after the cell */
static void test_segments_unshared_after(void) {
    check_segments(DP_NN_ATTENTION_MODE_AFTER, 0, 0, 4, "seg(after,per-sample)");
}

/* The second segment starts from the first's final state (decoder and
 * encoder states, the previous device), in each chain checked above. */
static void test_segment_starts_from_previous_state(void) {
    static const struct {
        dp_nn_attention_mode mode;
        int join, shared, T;
        const char *label;
    } chains[] = {
        {DP_NN_ATTENTION_MODE_BEFORE, 0, 1, 4, "seg(before,shared,P)"},
        {DP_NN_ATTENTION_MODE_BEFORE, 1, 1, 4, "seg(before,join,P)"},
        {DP_NN_ATTENTION_MODE_BEFORE, 0, 1, 7, "seg(before,shared,ctx)"},
        {DP_NN_ATTENTION_MODE_BEFORE, 1, 0, 4, "seg(before,per-sample)"},
        {DP_NN_ATTENTION_MODE_AFTER, 0, 0, 4, "seg(after,per-sample)"},
    };
    for (size_t k = 0; k < sizeof chains / sizeof chains[0]; k++) {
        TEST_CASE("%s", chains[k].label);
        int T = chains[k].T;
        seg_ctx *c = seg_setup(chains[k].mode, chains[k].join, chains[k].shared, T);
        seg_loss(c);
        size_t ne = (size_t)2 * c->Be * SH;
        CHECK(memcmp(c->s[1].h, c->s[0].last.dec_h, sizeof(float) * SB * SH) == 0);
        CHECK(memcmp(c->s[1].enc_h0, c->s[0].last.enc_h, sizeof(float) * ne) == 0);
        for (int b = 0; b < SB; b++) CHECK(c->s[1].prev[b] == c->act[0][b * T + T - 1]);
        seg_free(c);
    }
}

/* A shared input gives what one encoder per sample gives on copies of it
 * (different association of the same sums: close, not bit-equal). */
static void test_shared_matches_copies(void) {
    enum { B = 3, T = 5 };
    for (int mode = 0; mode < DP_NN_ATTENTION_MODE_COUNT; mode++) {
        TEST_CASE("attention %s", mode == DP_NN_ATTENTION_MODE_BEFORE ? "before" : "after");
        dp_nn_seq2seq_config sc = {.in_dim = SF, .hidden = 4, .devices = SD, .attn_dim = 5, .emb_dim = 3,
                                   .mode = (dp_nn_attention_mode)mode, .tanh_c = 5.0f, .temperature = 2.0f};
        dp_nn_tensor_spec specs[8];
        int n = dp_nn_seq2seq_specs(specs, &sc);
        dp_rng rng;
        dp_rng_seed(&rng, 99);
        dp_nn_params p;
        CHECK(dp_nn_params_init(&p, specs, n, &rng, NULL) == DP_STATUS_OK);
        dp_nn_seq2seq one, per;
        dp_nn_seq2seq_config shc = sc;
        shc.shared_input = 1;
        CHECK(dp_nn_seq2seq_init(&one, &shc, &p, B, T, NULL) == DP_STATUS_OK);
        CHECK(dp_nn_seq2seq_init(&per, &sc, &p, B, T, NULL) == DP_STATUS_OK);
        CHECK(one.use_p == (mode == DP_NN_ATTENTION_MODE_BEFORE) && !per.use_p);
        float *x = frand(&rng, (size_t)T * SF, 1.0f), xs[B * T * SF], dx1[T * SF] = {0}, dxs[B * T * SF];
        for (int b = 0; b < B; b++) memcpy(xs + b * T * SF, x, sizeof(float) * T * SF);
        memset(dxs, 0, sizeof dxs);
        int a1[B * T], a2[B * T];
        float lp1[B], lp2[B], e1[B], e2[B], w[B] = {0.7f, -1.1f, 0.4f}, we[B] = {0.3f, 0.2f, -0.5f};
        dp_rng r1, r2;
        dp_rng_seed(&r1, 5);
        dp_rng_seed(&r2, 5);
        dp_nn_seq2seq_segment_forward(&one, lp1, e1, a1, x, NULL, DP_NN_DECODE_MODE_SAMPLE, &r1, 0.0f);
        dp_nn_seq2seq_segment_forward(&per, lp2, e2, a2, xs, NULL, DP_NN_DECODE_MODE_SAMPLE, &r2, 0.0f);
        CHECK(memcmp(a1, a2, sizeof a1) == 0); /* same draws: the probabilities agree closely */
        for (int b = 0; b < B; b++) {
            CHECK_NEAR(lp1[b], lp2[b], 1e-5);
            CHECK_NEAR(e1[b], e2[b], 1e-5);
        }
        dp_nn_params_zero_grad(&p);
        dp_nn_seq2seq_segment_backward(&one, dx1, NULL, w, NULL, we, NULL, a1, x);
        float *g1 = malloc(sizeof(float) * p.count);
        CHECK(g1 != NULL);
        memcpy(g1, p.grad, sizeof(float) * p.count);
        dp_nn_params_zero_grad(&p);
        dp_nn_seq2seq_segment_backward(&per, dxs, NULL, w, NULL, we, NULL, a2, xs);
        double worst = 0.0;
        for (size_t i = 0; i < p.count; i++) {
            double d = fabs((double)g1[i] - p.grad[i]) / (fabs(p.grad[i]) > 1e-2 ? fabs(p.grad[i]) : 1e-2);
            worst = d > worst ? d : worst;
        }
        for (int i = 0; i < T * SF; i++) {
            double s = 0.0;
            for (int b = 0; b < B; b++) s += dxs[b * T * SF + i];
            double d = fabs(dx1[i] - s) / (fabs(s) > 1e-2 ? fabs(s) : 1e-2);
            worst = d > worst ? d : worst;
        }
        printf("  shared vs per-sample encoder (%s): largest relative gradient difference %.2e\n",
               mode == DP_NN_ATTENTION_MODE_BEFORE ? "before" : "after", worst);
        CHECK(worst < 1e-4);
        free(g1);
        free(x);
        dp_nn_seq2seq_free(&one);
        dp_nn_seq2seq_free(&per);
        dp_nn_params_free(&p);
    }
}

/* ---- the composed Mars policy ---- */

enum { MN = 7, MSEG = 3, MB = 2, MF = 4, MGH = 5 };

/* a small graph: a chain with a few skips */
static void mars_graph(dp_nn_graph *g) {
    int src[] = {0, 1, 2, 3, 4, 5, 0, 2, 3};
    int dst[] = {1, 2, 3, 4, 5, 6, 3, 5, 6};
    CHECK(dp_nn_graph_init(g, MN, src, dst, 9, NULL) == DP_STATUS_OK);
}

static dp_nn_mars_config mars_config(void) {
    dp_nn_mars_config mc = {.gcn = {MF, MGH, 3},
                            .placer = {.in_dim = MGH, .hidden = SH, .devices = SD, .attn_dim = 4, .emb_dim = 3,
                                       .mode = DP_NN_ATTENTION_MODE_BEFORE, .tanh_c = 0.0f, .temperature = 1.0f},
                            .seg = MSEG};
    return mc;
}

typedef struct mars_ctx {
    dp_nn_params p;
    dp_nn_graph g;
    dp_nn_mars pol;
    float x[MN * MF];
    int act[MB * MN];
    float coef[MB], entc[MB], step[MB * MN];
} mars_ctx;

static double mars_loss(void *vctx) {
    mars_ctx *c = vctx;
    float lp[MB], ent[MB];
    dp_nn_mars_forward(&c->pol, lp, ent, c->act, DP_NN_DECODE_MODE_TEACHER, NULL);
    double s = 0.0;
    for (int b = 0; b < MB; b++) s += (double)c->coef[b] * lp[b] + (double)c->entc[b] * ent[b];
    return s;
}

static void mars_grad(void *vctx) {
    mars_ctx *c = vctx;
    dp_nn_params_zero_grad(&c->p);
    mars_loss(c);
    dp_nn_mars_backward(&c->pol, c->coef, NULL, c->entc, c->act);
}

/* Sets up the policy with max_saved workspaces over fixed data. */
static void mars_setup(mars_ctx *c, int max_saved) {
    dp_nn_mars_config mc = mars_config();
    dp_nn_tensor_spec specs[24];
    int n = dp_nn_mars_specs(specs, &mc);
    dp_rng rng;
    dp_rng_seed(&rng, 2024);
    CHECK(dp_nn_params_init(&c->p, specs, n, &rng, NULL) == DP_STATUS_OK);
    mars_graph(&c->g);
    /* GCN biases off zero, and features redrawn until every PReLU input is
     * 0.05 away from its kink, where a finite difference is not valid, and
     * each layer has negative inputs (its slope matters) */
    for (size_t i = 0; i < c->p.count; i++)
        if (c->p.data[i] == 0.0f) c->p.data[i] = (float)(dp_rng_uniform(&rng) - 0.5);
    /* larger placer weights so the attention carries gradient too */
    int first = dp_nn_params_find(&c->p, "placer.enc");
    CHECK(first > 0);
    for (size_t i = c->p.offset[first]; i < c->p.count; i++) c->p.data[i] *= 3.0f;
    CHECK(dp_nn_mars_init(&c->pol, &mc, &c->p, &c->g, c->x, MB, max_saved, NULL) == DP_STATUS_OK);
    for (int attempt = 0;; attempt++) {
        CHECK(attempt < 10000);
        for (int i = 0; i < MN * MF; i++) c->x[i] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0);
        dp_nn_gcn_encode(&c->pol.gcn, &c->g, c->x);
        int near = 0, negatives = 1; /* and every slope is used somewhere */
        for (int l = 0; l < 3; l++) {
            int neg = 0;
            for (int i = 0; i < MN * MGH; i++) {
                float v = c->pol.gcn.pre[0][l * MN * MGH + i];
                near |= fabsf(v) < 0.05f;
                neg |= v < 0.0f;
            }
            negatives &= neg;
        }
        if (!near && negatives) break;
    }
    for (int i = 0; i < MB * MN; i++) c->act[i] = (int)dp_rng_below(&rng, SD);
    for (int b = 0; b < MB; b++) c->coef[b] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0), c->entc[b] = 0.3f * (b + 1);
}

static void mars_teardown(mars_ctx *c) {
    dp_nn_mars_free(&c->pol);
    dp_nn_graph_free(&c->g);
    dp_nn_params_free(&c->p);
}

/* Every GCN and placer parameter through all three segments (3 + 3 + a tail
 * of 1); one workspace for the two full segments, so backward recomputes
 * the first. The discriminator is not part of the policy. */
static void test_mars_policy_gradients(void) {
    mars_ctx *c = calloc(1, sizeof *c);
    mars_setup(c, 1);
    CHECK(c->pol.seg.nseg == 3 && c->pol.seg.slots == 1 && c->pol.seg.tail_T == 1);
    dp_nn_check_tensor t[24];
    dp_nn_check_result r[24];
    int nt = 0;
    for (int i = 0; i < c->p.ntensors; i++) {
        if (strncmp(c->p.name[i], "dgi.", 4) == 0) continue;
        t[nt++] = (dp_nn_check_tensor){c->p.name[i], dp_nn_params_tensor(&c->p, i), dp_nn_params_grad(&c->p, i),
                                       c->p.size[i]};
    }
    dp_nn_gradcheck(r, c, mars_loss, mars_grad, t, nt, EPS, FLOOR, 0.5, MAXPTS, 11);
    g_worst = fmax(g_worst, fixture_gradcheck_report("mars(gcn+seg2seq)", t, r, nt, TOL, REACH));
    for (int i = 0; i < nt; i++) CHECK(r[i].skipped * 4 <= r[i].checked + r[i].skipped);
    mars_teardown(c);
    free(c);
}

/* Recomputing a segment gives the gradients of keeping it, bit for bit. */
static void test_mars_recompute(void) {
    mars_ctx *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    mars_setup(a, 1);
    mars_setup(b, 0);
    CHECK(b->pol.seg.slots == 2);
    mars_grad(a);
    mars_grad(b);
    CHECK(memcmp(a->p.grad, b->p.grad, sizeof(float) * a->p.count) == 0);
    mars_teardown(a);
    mars_teardown(b);
    free(a);
    free(b);
}

/* The per-decision weights equal per-sample weights spread over all
 * decisions. */
static void test_mars_decision_weights(void) {
    mars_ctx *b = calloc(1, sizeof *b);
    mars_setup(b, 0);
    float lp[MB];
    dp_nn_params_zero_grad(&b->p);
    dp_nn_mars_forward(&b->pol, lp, NULL, b->act, DP_NN_DECODE_MODE_TEACHER, NULL);
    for (int i = 0; i < MB * MN; i++) b->step[i] = b->coef[i / MN];
    dp_nn_mars_backward(&b->pol, NULL, b->step, NULL, b->act);
    float *g = malloc(sizeof(float) * b->p.count);
    CHECK(g != NULL);
    memcpy(g, b->p.grad, sizeof(float) * b->p.count);
    dp_nn_params_zero_grad(&b->p);
    dp_nn_mars_forward(&b->pol, lp, NULL, b->act, DP_NN_DECODE_MODE_TEACHER, NULL);
    dp_nn_mars_backward(&b->pol, b->coef, NULL, NULL, b->act);
    for (size_t i = 0; i < b->p.count; i++) CHECK_NEAR(g[i], b->p.grad[i], 1e-5);
    free(g);
    mars_teardown(b);
    free(b);
}

/* DGI pre-training (Adam, the loss of fresh corruptions each step) lowers
 * the loss on a small random graph; the best parameters are kept, as Mars
 * keeps the lowest-loss encoder. */
static void test_dgi_pretraining(void) {
    enum { N = 60, F = 8, H = 16, STEPS = 120 };
    dp_nn_gcn_config gc = {F, H, 3};
    dp_nn_tensor_spec specs[16];
    int n = dp_nn_gcn_specs(specs, &gc);
    dp_rng rng;
    dp_rng_seed(&rng, 7);
    dp_nn_params p;
    dp_nn_gcn gcn;
    dp_nn_graph g;
    CHECK(dp_nn_params_init(&p, specs, n, &rng, NULL) == DP_STATUS_OK);
    CHECK(dp_nn_gcn_init(&gcn, &gc, &p, N, NULL) == DP_STATUS_OK);
    /* two communities of a chain each, joined once; features by community */
    int src[2 * N], dst[2 * N], E = 0;
    for (int i = 1; i < N; i++) {
        if (i == N / 2) continue;
        src[E] = i - 1, dst[E++] = i;
        if (i >= 3) src[E] = i - 3, dst[E++] = i;
    }
    src[E] = 0, dst[E++] = N / 2;
    CHECK(dp_nn_graph_init(&g, N, src, dst, E, NULL) == DP_STATUS_OK);
    float x[N * F];
    for (int i = 0; i < N; i++)
        for (int f = 0; f < F; f++) x[i * F + f] = (float)((i < N / 2) == (f < F / 2)) + 0.3f * (float)dp_rng_normal(&rng);
    dp_nn_adam adam = dp_nn_adam_default();
    float *best = malloc(sizeof(float) * p.count);
    CHECK(best != NULL);
    double first = 0.0, best_loss = 1e30, last_avg = 0.0;
    for (int s = 0; s < STEPS; s++) {
        dp_nn_params_zero_grad(&p);
        float loss = dp_nn_gcn_dgi_forward(&gcn, &g, x, NULL, &rng);
        dp_nn_gcn_dgi_backward(&gcn, &g, x, 1.0f);
        if (s == 0) first = loss;
        if (s >= STEPS - 10) last_avg += loss / 10.0;
        if (loss < best_loss) best_loss = loss, memcpy(best, p.data, sizeof(float) * p.count);
        dp_nn_adam_update(&p, &adam, 1e-2f);
    }
    printf("  DGI loss: first step %.4f, last 10 steps %.4f, best %.4f\n", first, last_avg, best_loss);
    CHECK(first > 0.6 && last_avg < 0.3 * first && best_loss <= last_avg);
    free(best);
    dp_nn_graph_free(&g);
    dp_nn_gcn_free(&gcn);
    dp_nn_params_free(&p);
}

/* A policy trained for a few steps, saved and loaded into a fresh store of
 * other values, places identically (greedy and sampled with equal seeds)
 * with bit-identical log-probabilities. */
static void test_mars_save_load(void) {
    mars_ctx *a = calloc(1, sizeof *a);
    mars_setup(a, 0);
    dp_nn_adam adam = dp_nn_adam_default();
    dp_rng rng;
    dp_rng_seed(&rng, 3);
    float lp[MB], ent[MB], adv[MB] = {1.0f, -0.5f}, dent[MB] = {0.01f, 0.01f};
    for (int it = 0; it < 3; it++) {
        dp_nn_params_zero_grad(&a->p);
        dp_nn_mars_forward(&a->pol, lp, ent, a->act, DP_NN_DECODE_MODE_SAMPLE, &rng);
        dp_nn_mars_backward(&a->pol, adv, NULL, dent, a->act);
        dp_nn_grad_clip(&a->p, 1.0);
        dp_nn_adam_update(&a->p, &adam, 3e-2f);
    }
    char path[] = "/tmp/dplace_test_mars_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    dp_error err;
    CHECK(dp_nn_checkpoint_save(&a->p, path, &err) == DP_STATUS_OK);

    dp_nn_mars_config mc = mars_config();
    dp_nn_tensor_spec specs[24];
    int n = dp_nn_mars_specs(specs, &mc);
    dp_rng other;
    dp_rng_seed(&other, 555);
    dp_nn_params q;
    dp_nn_mars pol;
    CHECK(dp_nn_params_init(&q, specs, n, &other, NULL) == DP_STATUS_OK);
    CHECK(memcmp(q.data, a->p.data, sizeof(float) * q.count) != 0);
    CHECK(dp_nn_checkpoint_load(&q, path, &err) == DP_STATUS_OK);
    remove(path);
    CHECK(memcmp(q.data, a->p.data, sizeof(float) * q.count) == 0 && q.step == a->p.step);
    CHECK(dp_nn_mars_init(&pol, &mc, &q, &a->g, a->x, MB, 1, NULL) == DP_STATUS_OK);
    for (int mode = 0; mode < 2; mode++) {
        TEST_CASE("%s", mode ? "greedy" : "sampled");
        dp_nn_decode_mode dm = mode ? DP_NN_DECODE_MODE_GREEDY : DP_NN_DECODE_MODE_SAMPLE;
        int a1[MB * MN], a2[MB * MN];
        float l1[MB], l2[MB], e1[MB], e2[MB];
        dp_rng r1, r2;
        dp_rng_seed(&r1, 17);
        dp_rng_seed(&r2, 17);
        dp_nn_mars_forward(&a->pol, l1, e1, a1, dm, &r1);
        dp_nn_mars_forward(&pol, l2, e2, a2, dm, &r2);
        CHECK(memcmp(a1, a2, sizeof a1) == 0);
        CHECK(memcmp(l1, l2, sizeof l1) == 0 && memcmp(e1, e2, sizeof e1) == 0);
    }
    dp_nn_mars_free(&pol);
    dp_nn_params_free(&q);
    mars_teardown(a);
    free(a);
}

/* The threads change nothing: a sampling forward and its backward give
 * bit-identical actions, log-probabilities and gradients on 1, 2 and 3
 * threads (the samples are split differently each time), for the Mars
 * policy and for a per-sample-encoder placer with noise. */
static void run_threads(int threads, int shared, int *acts, float *lp, float *grad, size_t *count) {
    enum { B = 5, T = 6, N = 13 };
    dp_nn_set_threads(threads);
    dp_rng rng;
    dp_rng_seed(&rng, 31);
    dp_nn_params p;
    float adv[B] = {0.5f, -1.0f, 0.25f, 0.8f, -0.3f}, dent[B] = {0.01f, 0.02f, 0.03f, 0.04f, 0.05f};
    if (shared) {
        dp_nn_mars_config mc = mars_config();
        dp_nn_tensor_spec specs[24];
        int n = dp_nn_mars_specs(specs, &mc);
        dp_nn_graph g;
        mars_graph(&g);
        float x[MN * MF];
        CHECK(dp_nn_params_init(&p, specs, n, &rng, NULL) == DP_STATUS_OK);
        for (int i = 0; i < MN * MF; i++) x[i] = (float)dp_rng_normal(&rng);
        dp_nn_mars pol;
        CHECK(dp_nn_mars_init(&pol, &mc, &p, &g, x, B, 1, NULL) == DP_STATUS_OK);
        dp_nn_mars_forward(&pol, lp, NULL, acts, DP_NN_DECODE_MODE_SAMPLE, &rng);
        dp_nn_mars_backward(&pol, adv, NULL, dent, acts);
        dp_nn_mars_free(&pol);
        dp_nn_graph_free(&g);
    } else {
        dp_nn_seq2seq_config sc = {.in_dim = SF, .hidden = 8, .devices = SD, .attn_dim = 5, .emb_dim = 3,
                                   .mode = DP_NN_ATTENTION_MODE_BEFORE, .ctx_to_output = 1, .tanh_c = 5.0f,
                                   .temperature = 2.0f};
        dp_nn_tensor_spec specs[8];
        int n = dp_nn_seq2seq_specs(specs, &sc);
        CHECK(dp_nn_params_init(&p, specs, n, &rng, NULL) == DP_STATUS_OK);
        float x[B * T * SF], dx[B * T * SF] = {0};
        for (int i = 0; i < B * T * SF; i++) x[i] = (float)dp_rng_normal(&rng);
        dp_nn_seq2seq m;
        CHECK(dp_nn_seq2seq_init(&m, &sc, &p, B, T, NULL) == DP_STATUS_OK);
        CHECK(m.parts == (threads < B ? threads : B));
        dp_nn_seq2seq_forward(&m, lp, NULL, acts, x, NULL, NULL, DP_NN_DECODE_MODE_SAMPLE, &rng, 0.1f);
        dp_nn_seq2seq_backward(&m, dx, adv, dent, acts, x);
        dp_nn_seq2seq_free(&m);
    }
    memcpy(grad, p.grad, sizeof(float) * p.count);
    *count = p.count;
    dp_nn_params_free(&p);
}

/* Actions, log-probabilities and gradients at 2 and 3 threads against 1,
 * for the Mars policy (shared) or the per-sample placer. */
static void threads_change_nothing(int shared) {
    enum { B = 5, NA = 5 * 13 };
    static float g1[20000], g2[20000];
    int a1[NA], a2[NA];
    float l1[B], l2[B];
    size_t n1, n2;
    run_threads(1, shared, a1, l1, g1, &n1);
    CHECK(n1 <= 20000);
    for (int th = 2; th <= 3; th++) {
        TEST_CASE("%d threads", th);
        run_threads(th, shared, a2, l2, g2, &n2);
        CHECK(n1 == n2);
        CHECK(memcmp(a1, a2, sizeof(int) * (shared ? B * MN : B * 6)) == 0);
        CHECK(memcmp(l1, l2, sizeof l1) == 0);
        CHECK(memcmp(g1, g2, sizeof(float) * n1) == 0);
    }
    dp_nn_set_threads(1);
}

/* The per-sample-encoder placer with noise: threads change nothing. */
static void test_threads_change_nothing_seq2seq(void) { threads_change_nothing(0); }
/* The Mars policy: threads change nothing. */
static void test_threads_change_nothing_mars(void) { threads_change_nothing(1); }

/* ---- the policy with the Transformer-XL placer ---- */

static dp_nn_mars_config mars_txl_config(int seg) {
    dp_nn_mars_config mc = {.gcn = {MF, MGH, 3}, .seg = seg, .placer_kind = DP_NN_SEG_KIND_TXL,
                            .txl = {.in_dim = MGH, .d_model = 6, .heads = 2, .d_inner = 8, .layers = 1,
                                    .mem_len = 3, .devices = SD, .causal = 0}};
    return mc;
}

typedef struct mtxl_ctx {
    dp_nn_params p;
    dp_nn_graph g;
    dp_nn_mars pol;
    float x[MN * MF];
    int act[MB * MN];
    float coef[MB], entc[MB];
} mtxl_ctx;

static double mtxl_loss(void *vctx) {
    mtxl_ctx *c = vctx;
    float lp[MB], ent[MB];
    dp_nn_mars_forward(&c->pol, lp, ent, c->act, DP_NN_DECODE_MODE_TEACHER, NULL);
    double s = 0.0;
    for (int b = 0; b < MB; b++) s += (double)c->coef[b] * lp[b] + (double)c->entc[b] * ent[b];
    return s;
}

static void mtxl_grad(void *vctx) {
    mtxl_ctx *c = vctx;
    dp_nn_params_zero_grad(&c->p);
    mtxl_loss(c);
    dp_nn_mars_backward(&c->pol, c->coef, NULL, c->entc, c->act);
}

static void mtxl_setup(mtxl_ctx *c, int seg, int max_saved) {
    dp_nn_mars_config mc = mars_txl_config(seg);
    dp_nn_tensor_spec specs[48];
    int n = dp_nn_mars_specs(specs, &mc);
    CHECK(n <= 48);
    dp_rng rng;
    dp_rng_seed(&rng, 77);
    CHECK(dp_nn_params_init(&c->p, specs, n, &rng, NULL) == DP_STATUS_OK);
    for (size_t i = 0; i < c->p.count; i++) c->p.data[i] += (float)(0.3 * (dp_rng_uniform(&rng) - 0.5));
    /* larger attention weights so the position biases carry gradient too */
    int q = dp_nn_params_find(&c->p, "txl.l0.qkv");
    CHECK(q > 0);
    for (size_t i = 0; i < c->p.size[q]; i++) c->p.data[c->p.offset[q] + i] *= 4.0f;
    mars_graph(&c->g);
    CHECK(dp_nn_mars_init(&c->pol, &mc, &c->p, &c->g, c->x, MB, max_saved, NULL) == DP_STATUS_OK);
    for (int attempt = 0;; attempt++) { /* PReLU inputs off their kinks (the ReLUs: kink detection) */
        CHECK(attempt < 10000);
        for (int i = 0; i < MN * MF; i++) c->x[i] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0);
        mtxl_loss(c);
        int near = 0, negatives = 1;
        for (int l = 0; l < 3; l++) {
            int neg = 0;
            for (int i = 0; i < MN * MGH; i++) {
                float v = c->pol.gcn.pre[0][l * MN * MGH + i];
                near |= fabsf(v) < 0.05f;
                neg |= v < 0.0f;
            }
            negatives &= neg;
        }
        if (!near && negatives) break;
    }
    for (int i = 0; i < MB * MN; i++) c->act[i] = (int)dp_rng_below(&rng, SD);
    for (int b = 0; b < MB; b++) c->coef[b] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0), c->entc[b] = 0.3f;
}

/* GCN + Transformer-XL over all 7 operations as one segment (a memory is a
 * constant, so a finite difference across segments would see what the
 * placer's stop-gradient leaves out): every parameter. */
static void test_mars_txl_gradients(void) {
    mtxl_ctx *c = calloc(1, sizeof *c);
    mtxl_setup(c, 8, 0);
    CHECK(c->pol.seg.nseg == 1 && c->pol.seg.tail_T == MN);
    dp_nn_check_tensor t[48];
    dp_nn_check_result r[48];
    int nt = 0;
    for (int i = 0; i < c->p.ntensors; i++) {
        if (strncmp(c->p.name[i], "dgi.", 4) == 0) continue;
        t[nt++] = (dp_nn_check_tensor){c->p.name[i], dp_nn_params_tensor(&c->p, i), dp_nn_params_grad(&c->p, i),
                                       c->p.size[i]};
    }
    dp_nn_gradcheck(r, c, mtxl_loss, mtxl_grad, t, nt, EPS, FLOOR, 0.5, MAXPTS, 13);
    g_worst = fmax(g_worst, fixture_gradcheck_report("mars(gcn+txl)", t, r, nt, TOL, REACH));
    for (int i = 0; i < nt; i++) CHECK(r[i].skipped * 4 <= r[i].checked + r[i].skipped);
    dp_nn_mars_free(&c->pol);
    dp_nn_graph_free(&c->g);
    dp_nn_params_free(&c->p);
    free(c);
}

/* Three segments (3, 3, 1) with their memories: recomputing segments from
 * the saved memories gives the log-probabilities and gradients of keeping
 * every workspace, bit for bit. */
static void test_mars_txl_recompute(void) {
    mtxl_ctx *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    mtxl_setup(a, MSEG, 1);
    mtxl_setup(b, MSEG, 0);
    CHECK(a->pol.seg.nseg == 3 && a->pol.seg.slots == 1 && b->pol.seg.slots == 2);
    CHECK(mtxl_loss(a) == mtxl_loss(b));
    mtxl_grad(a);
    mtxl_grad(b);
    CHECK(memcmp(a->p.grad, b->p.grad, sizeof(float) * a->p.count) == 0);
    for (mtxl_ctx *c = a; c; c = c == a ? b : NULL) {
        dp_nn_mars_free(&c->pol);
        dp_nn_graph_free(&c->g);
        dp_nn_params_free(&c->p);
        free(c);
    }
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    dp_nn_set_threads(1);
    TEST_RUN(test_segments_mars);
    TEST_RUN(test_segments_join);
    TEST_RUN(test_segments_long);
    TEST_RUN(test_segments_unshared_before);
    TEST_RUN(test_segments_unshared_after);
    TEST_RUN(test_segment_starts_from_previous_state);
    TEST_RUN(test_shared_matches_copies);
    TEST_RUN(test_mars_policy_gradients);
    TEST_RUN(test_mars_recompute);
    TEST_RUN(test_mars_decision_weights);
    TEST_RUN(test_dgi_pretraining);
    TEST_RUN(test_mars_save_load);
    TEST_RUN(test_threads_change_nothing_seq2seq);
    TEST_RUN(test_threads_change_nothing_mars);
    TEST_RUN(test_mars_txl_gradients);
    TEST_RUN(test_mars_txl_recompute);
    printf("largest relative error over the checks: %.2e (tolerance %.0e)\n", g_worst, TOL);
    return test_end();
}
