/* Mars's pieces in the nn engine: finite-difference checks of the
 * segment-level seq2seq placer (encoder and decoder started from the
 * previous segment's final state, the gradient flowing back through it;
 * one encoder shared by all samples; per-decision weights), and agreement
 * of the shared encoder with one encoder per sample. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/nn.h"
#include "dplace/nn_check.h"
#include "dplace/nn_models.h"
#include "test_util.h"

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

static void report(const char *model, const dp_nn_check_tensor *t, const dp_nn_check_result *r, int n) {
    for (int i = 0; i < n; i++) {
        printf("  %-22s %-12s max rel err %.2e  (%zu checked, |numeric| <= %.3g; at %zu: analytic %.6g numeric %.6g)\n",
               model, t[i].name, r[i].max_rel, r[i].checked, r[i].max_numeric, r[i].worst, r[i].analytic,
               r[i].numeric);
        if (r[i].max_rel > g_worst) g_worst = r[i].max_rel;
        if (!(r[i].max_rel <= TOL)) {
            fprintf(stderr, "gradient check failed: %s %s %.3e > %.0e\n", model, t[i].name, r[i].max_rel, TOL);
            exit(1);
        }
        if (!(r[i].max_numeric > REACH)) {
            fprintf(stderr, "gradient check of %s %s compares nothing: largest |numeric| %.3g <= %.0e\n",
                    model, t[i].name, r[i].max_numeric, REACH);
            exit(1);
        }
    }
}

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

/* Checks every parameter, every segment's input and segment 0's start state
 * (so both the incoming and the outgoing state gradients are covered). */
static void check_segments(dp_nn_attention_mode mode, int join, int shared, int T, const char *label) {
    seg_ctx *c = calloc(1, sizeof *c);
    dp_nn_seq2seq_config sc = {.in_dim = SF, .hidden = SH, .devices = SD, .attn_dim = 4, .emb_dim = 3,
                               .mode = mode, .ctx_to_output = join, .tanh_c = 0.0f, .temperature = 1.0f,
                               .shared_input = shared};
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
    report(label, t, r, nt);

    /* the second segment started from the first's final state */
    CHECK(memcmp(c->s[1].h, c->s[0].last.dec_h, sizeof(float) * SB * SH) == 0);
    CHECK(memcmp(c->s[1].enc_h0, c->s[0].last.enc_h, sizeof(float) * ne) == 0);
    for (int b = 0; b < SB; b++) CHECK(c->s[1].prev[b] == c->act[0][b * T + T - 1]);
    for (int k = 0; k < NSEG; k++) {
        dp_nn_seq2seq_free(&c->s[k]);
        free(c->x[k]), free(c->dx[k]), free(c->act[k]), free(c->coef[k]), free(c->entc[k]), free(c->step[k]);
    }
    free_state(&c->start), free_state(&c->dstart), free_state(&c->dbuf[0]), free_state(&c->dbuf[1]);
    dp_nn_params_free(&c->p);
    free(c);
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
/* one encoder per sample, both attention placements */
static void test_segments_unshared(void) {
    check_segments(DP_NN_ATTENTION_MODE_BEFORE, 1, 0, 4, "seg(before,per-sample)");
    check_segments(DP_NN_ATTENTION_MODE_AFTER, 0, 0, 4, "seg(after,per-sample)");
}

/* A shared input gives what one encoder per sample gives on copies of it
 * (different association of the same sums: close, not bit-equal). */
static void test_shared_matches_copies(void) {
    enum { B = 3, T = 5 };
    for (int mode = 0; mode < DP_NN_ATTENTION_MODE_COUNT; mode++) {
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

int main(void) {
    dp_nn_set_threads(1);
    TEST_RUN(test_segments_mars);
    TEST_RUN(test_segments_join);
    TEST_RUN(test_segments_long);
    TEST_RUN(test_segments_unshared);
    TEST_RUN(test_shared_matches_copies);
    printf("largest relative error over the checks: %.2e (tolerance %.0e)\n", g_worst, TOL);
    return 0;
}
