/* Finite-difference gradient checks for every layer of the nn engine, plus
 * sampling and determinism checks of the policy head. Each case computes
 * loss = sum_i w_i out_i (in double, fixed random w) over all its outputs and
 * compares the analytic gradient of every input and weight tensor with
 * central differences. Prints the largest relative error per tensor. The
 * checker itself is shown to fail: linear layers with a wrong input gradient
 * (off by 5%) and a wrong weight gradient (a dropped term) are flagged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/nn.h"
#include "dplace/nn_check.h"
#include "dplace/nn_txl.h"
#include "test_fixtures.h"

/* Tolerance on the largest relative error |a - n| / max(|a|, |n|, FLOOR):
 * float32 forward passes, eps = 1e-2, so differences carry ~1e-4 noise. */
#define EPS 1e-2
#define FLOOR 1e-2
#define TOL 1e-2
#define MAXPTS 400
/* A tensor passes only if some numeric gradient exceeds REACH, far above the
 * float32 noise of the differences (~1e-5): one the loss does not reach
 * would compare 0 with 0. */
#define REACH 1e-4

typedef struct lcase lcase;
struct lcase {
    int nt;
    const char *tname[8];
    float *val[8], *grad[8];
    size_t cnt[8];
    float *out, *dout;
    double *w;
    size_t nout;
    void (*fwd)(lcase *);
    void (*bwd)(lcase *);
    float *act[8];   /* saved activations and scratch */
    int *idx[4];     /* index inputs */
    int s[8];        /* sizes */
    float f[4];      /* float settings */
    dp_nn_graph graph;
};

static dp_rng g_rng;
static double g_worst = 0.0;

static float *fbuf(size_t n) {
    float *p = calloc(n ? n : 1, sizeof(float));
    CHECK(p != NULL);
    return p;
}

static float *frand(size_t n, float lo, float hi) {
    float *p = fbuf(n);
    for (size_t i = 0; i < n; i++) p[i] = (float)(lo + (hi - lo) * dp_rng_uniform(&g_rng));
    return p;
}

/* values in +-[0.2, 1]: away from the kinks of relu and PReLU */
static float *frand_away(size_t n) {
    float *p = frand(n, 0.2f, 1.0f);
    for (size_t i = 0; i < n; i++)
        if (dp_rng_uniform(&g_rng) < 0.5) p[i] = -p[i];
    return p;
}

static void add_tensor(lcase *c, const char *name, float *val, size_t n) {
    CHECK(c->nt < 8);
    c->tname[c->nt] = name;
    c->val[c->nt] = val;
    c->grad[c->nt] = fbuf(n);
    c->cnt[c->nt] = n;
    c->nt++;
}

static void set_out(lcase *c, size_t n) {
    c->nout = n;
    c->out = fbuf(n);
    c->dout = fbuf(n);
    c->w = malloc(sizeof(double) * n);
    CHECK(c->w != NULL);
    for (size_t i = 0; i < n; i++) c->w[i] = 2.0 * dp_rng_uniform(&g_rng) - 1.0;
}

static double case_loss(void *ctx) {
    lcase *c = ctx;
    c->fwd(c);
    double s = 0.0;
    for (size_t i = 0; i < c->nout; i++) s += c->w[i] * c->out[i];
    return s;
}

static void case_grad(void *ctx) {
    lcase *c = ctx;
    for (int t = 0; t < c->nt; t++) memset(c->grad[t], 0, sizeof(float) * c->cnt[t]);
    c->fwd(c);
    for (size_t i = 0; i < c->nout; i++) c->dout[i] = (float)c->w[i];
    c->bwd(c);
}

/* Runs the checker over c's tensors with kink detection `kink` (0: off);
 * fills t and r, one entry per tensor. */
static void check_case(lcase *c, dp_nn_check_tensor *t, dp_nn_check_result *r, double kink) {
    for (int i = 0; i < c->nt; i++) {
        t[i].name = c->tname[i];
        t[i].value = c->val[i];
        t[i].grad = c->grad[i];
        t[i].count = c->cnt[i];
    }
    dp_nn_gradcheck(r, c, case_loss, case_grad, t, c->nt, EPS, FLOOR, kink, MAXPTS, 7);
}

/* Frees c's buffers and zeroes it for the next case. */
static void free_case(lcase *c) {
    for (int i = 0; i < c->nt; i++) free(c->grad[i]);
    for (int i = 0; i < c->nt; i++) free(c->val[i]);
    for (int i = 0; i < 8; i++) free(c->act[i]);
    for (int i = 0; i < 4; i++) free(c->idx[i]);
    dp_nn_graph_free(&c->graph);
    free(c->out);
    free(c->dout);
    free(c->w);
    memset(c, 0, sizeof *c);
}

/* Checks every tensor of c, exits on a relative error above TOL or on a
 * tensor whose numeric gradient stays below REACH everywhere (the loss does
 * not depend on it, so the comparison would be 0 with 0); frees c. */
static void run_case(const char *name, lcase *c) {
    TEST_CASE("%s", name);
    dp_nn_check_tensor t[8];
    dp_nn_check_result r[8];
    check_case(c, t, r, 0.0);
    g_worst = fmax(g_worst, fixture_gradcheck_report(name, t, r, c->nt, TOL, REACH));
    free_case(c);
}

static int *irand(int n, int hi) {
    int *p = malloc(sizeof(int) * (size_t)(n ? n : 1));
    CHECK(p != NULL);
    for (int i = 0; i < n; i++) p[i] = (int)dp_rng_below(&g_rng, (uint64_t)hi);
    return p;
}

/* ---- linear ---- */
static void linear_f(lcase *c) {
    dp_nn_linear_forward(c->out, c->val[0], c->val[1], c->val[2], c->s[0], c->s[1], c->s[2]);
}
static void linear_b(lcase *c) {
    dp_nn_linear_backward(c->grad[0], c->grad[1], c->grad[2], c->dout, c->val[0], c->val[1],
                          c->s[0], c->s[1], c->s[2]);
}
/* A linear layer of 5 rows, 7 inputs, 4 outputs with random values. */
static void linear_case(lcase *c) {
    int N = 5, C = 7, OC = 4;
    c->s[0] = N, c->s[1] = C, c->s[2] = OC;
    add_tensor(c, "inp", frand((size_t)N * C, -1, 1), (size_t)N * C);
    add_tensor(c, "weight", frand((size_t)OC * C, -1, 1), (size_t)OC * C);
    add_tensor(c, "bias", frand(OC, -1, 1), OC);
    set_out(c, (size_t)N * OC);
    c->fwd = linear_f, c->bwd = linear_b;
}

/* The linear layer's gradients. */
static void test_linear(void) {
    lcase c = {0};
    linear_case(&c);
    run_case("linear", &c);
}

/* The input-major linear layer computes the same layer as the other to
 * float rounding, at every row count (one to six rows take the skinny
 * kernels, more the general one), with and without a bias. */
static void test_linear_input_major(void) {
    const int C = 33, OC = 64;
    float *w = frand((size_t)OC * C, -1, 1), *wt = fbuf((size_t)C * OC), *b = frand(OC, -1, 1);
    for (int o = 0; o < OC; o++)
        for (int k = 0; k < C; k++) wt[(size_t)k * OC + o] = w[(size_t)o * C + k];
    for (int N = 1; N <= 9; N++)
        for (int bias = 0; bias < 2; bias++) {
            TEST_CASE("N %d, bias %d", N, bias);
            float *x = frand((size_t)N * C, -1, 1), *want = fbuf((size_t)N * OC), *got = fbuf((size_t)N * OC);
            dp_nn_linear_forward(want, x, w, bias ? b : NULL, N, C, OC);
            dp_nn_linear_forward_t(got, x, wt, bias ? b : NULL, N, C, OC);
            for (int i = 0; i < N * OC; i++) CHECK_NEAR(got[i], want[i], 1e-5 * (1 + fabsf(want[i])));
            free(x), free(want), free(got);
        }
    free(w), free(wt), free(b);
}

/* ---- the checker itself: deliberately wrong backwards are reported ---- */

/* linear backward whose input gradient is off by 5% */
static void linear_b_dinp_scaled(lcase *c) {
    linear_b(c);
    for (size_t i = 0; i < c->cnt[0]; i++) c->grad[0][i] *= 1.05f;
}
/* linear backward whose weight gradient drops the last row's term of
 * dweight = sum_n dout[n]^T inp[n] */
static void linear_b_dweight_dropped(lcase *c) {
    dp_nn_linear_backward(c->grad[0], NULL, c->grad[2], c->dout, c->val[0], c->val[1], c->s[0], c->s[1], c->s[2]);
    dp_nn_linear_backward(NULL, c->grad[1], NULL, c->dout, c->val[0], c->val[1], c->s[0] - 1, c->s[1], c->s[2]);
}

/* Checks a linear layer with backward `bwd` (kink detection `kink`) and
 * requires the checker to flag exactly tensor `bad`: its largest relative
 * error above TOL with every element compared (none skipped as a kink), at
 * an element whose analytic and numeric values differ; the other tensors
 * within TOL. */
static void expect_flagged(void (*bwd)(lcase *), int bad, double kink, const char *label) {
    TEST_CASE("%s", label);
    lcase c = {0};
    int N = 5, C = 7, OC = 4;
    c.s[0] = N, c.s[1] = C, c.s[2] = OC;
    add_tensor(&c, "inp", frand((size_t)N * C, -1, 1), (size_t)N * C);
    add_tensor(&c, "weight", frand((size_t)OC * C, -1, 1), (size_t)OC * C);
    add_tensor(&c, "bias", frand(OC, -1, 1), OC);
    set_out(&c, (size_t)N * OC);
    c.fwd = linear_f, c.bwd = bwd;
    dp_nn_check_tensor t[8];
    dp_nn_check_result r[8];
    check_case(&c, t, r, kink);
    for (int i = 0; i < c.nt; i++) {
        printf("  %-28s %-8s max rel err %.2e  (%zu checked, %zu skipped; at %zu: analytic %.6g numeric %.6g)\n",
               label, t[i].name, r[i].max_rel, r[i].checked, r[i].skipped, r[i].worst, r[i].analytic,
               r[i].numeric);
        CHECK_INT_EQ(r[i].skipped, 0);
        CHECK_INT_EQ(r[i].checked, c.cnt[i]);
        if (i == bad) {
            if (!(r[i].max_rel > TOL)) {
                fprintf(stderr, "%s: the checker missed the wrong %s gradient: max rel err %.3e <= %.1e\n",
                        label, t[i].name, r[i].max_rel, TOL);
                exit(1);
            }
            CHECK(fabs(r[i].analytic - r[i].numeric) > TOL * fabs(r[i].numeric));
        } else if (!(r[i].max_rel <= TOL)) {
            fprintf(stderr, "%s: the checker flagged the correct %s gradient: max rel err %.3e > %.1e\n",
                    label, t[i].name, r[i].max_rel, TOL);
            exit(1);
        }
    }
    /* the dropped term: the worst element lies in a weight row the last
     * sample feeds, and its error is that sample's term, dout[N-1, o] inp[N-1, k] */
    if (bwd == linear_b_dweight_dropped) {
        size_t o = r[1].worst / (size_t)C, k = r[1].worst % (size_t)C;
        double term = c.w[(size_t)(N - 1) * OC + o] * c.val[0][(size_t)(N - 1) * C + k];
        CHECK_NEAR(r[1].numeric - r[1].analytic, term, 1e-3);
    }
    free_case(&c);
}

/* Control: the correct backward of the linear layer passes the checker. */
static void test_checker_passes_correct_gradient(void) {
    lcase c = {0};
    linear_case(&c);
    run_case("linear(control)", &c);
}

/* An input gradient off by 5% is flagged, with and without kink
 * detection (as test_nn_models uses it). */
static void test_checker_flags_scaled_input_gradient(void) {
    expect_flagged(linear_b_dinp_scaled, 0, 0.0, "wrong dinp x1.05");
    expect_flagged(linear_b_dinp_scaled, 0, 0.5, "wrong dinp x1.05 (kink 0.5)");
}

/* A weight gradient that drops a term is flagged at that term, with and
 * without kink detection. */
static void test_checker_flags_dropped_weight_term(void) {
    expect_flagged(linear_b_dweight_dropped, 1, 0.0, "dweight drops a term");
    expect_flagged(linear_b_dweight_dropped, 1, 0.5, "dweight drops a term (kink 0.5)");
}

/* ---- embedding ---- */
static void emb_f(lcase *c) { dp_nn_embedding_forward(c->out, c->idx[0], c->val[0], c->s[0], c->s[1], c->s[2]); }
static void emb_b(lcase *c) { dp_nn_embedding_backward(c->grad[0], c->dout, c->idx[0], c->s[0], c->s[1], c->s[2]); }
/* The embedding's gradients. */
static void test_embedding(void) {
    lcase c = {0};
    int N = 9, V = 6, C = 5;
    c.s[0] = N, c.s[1] = V, c.s[2] = C;
    c.idx[0] = irand(N, V);
    add_tensor(&c, "table", frand((size_t)V * C, -1, 1), (size_t)V * C);
    set_out(&c, (size_t)N * C);
    c.fwd = emb_f, c.bwd = emb_b;
    run_case("embedding", &c);
}

/* ---- activations ---- */
static void relu_f(lcase *c) { dp_nn_relu_forward(c->out, c->val[0], c->nout); }
static void relu_b(lcase *c) { dp_nn_relu_backward(c->grad[0], c->dout, c->out, c->nout); }
static void tanh_f(lcase *c) { dp_nn_tanh_forward(c->out, c->val[0], c->nout); }
static void tanh_b(lcase *c) { dp_nn_tanh_backward(c->grad[0], c->dout, c->out, c->nout); }
static void sigm_f(lcase *c) { dp_nn_sigmoid_forward(c->out, c->val[0], c->nout); }
static void sigm_b(lcase *c) { dp_nn_sigmoid_backward(c->grad[0], c->dout, c->out, c->nout); }
static void prelu_f(lcase *c) { dp_nn_prelu_forward(c->out, c->val[0], c->val[1], c->s[0], c->s[1], c->s[2]); }
static void prelu_b(lcase *c) {
    dp_nn_prelu_backward(c->grad[0], c->grad[1], c->dout, c->val[0], c->val[1], c->s[0], c->s[1], c->s[2]);
}
/* The gradient check of an element-wise activation on the 40 values inp. */
static void activation_case(const char *name, float *inp, void (*fwd)(lcase *), void (*bwd)(lcase *)) {
    lcase c = {0};
    size_t n = 40;
    add_tensor(&c, "inp", inp, n);
    set_out(&c, n);
    c.fwd = fwd, c.bwd = bwd;
    run_case(name, &c);
}

/* ReLU's gradient, away from its kink. */
static void test_relu(void) { activation_case("relu", frand_away(40), relu_f, relu_b); }
/* tanh's gradient. */
static void test_tanh(void) { activation_case("tanh", frand(40, -3, 3), tanh_f, tanh_b); }
/* The sigmoid's gradient. */
static void test_sigmoid(void) { activation_case("sigmoid", frand(40, -4, 4), sigm_f, sigm_b); }

/* PReLU's gradients, one slope per channel and one shared. */
static void test_prelu(void) {
    lcase c = {0};
    for (int shared = 0; shared < 2; shared++) {
        int N = 6, C = 5, S = shared ? 1 : C;
        c.s[0] = N, c.s[1] = C, c.s[2] = S;
        add_tensor(&c, "inp", frand_away((size_t)N * C), (size_t)N * C);
        add_tensor(&c, "slope", frand(S, 0.1f, 0.4f), S);
        set_out(&c, (size_t)N * C);
        c.fwd = prelu_f, c.bwd = prelu_b;
        run_case(shared ? "prelu(shared)" : "prelu(channel)", &c);
    }
}

/* The fast exp and tanh kernels against libm. */
static void test_fast_exp_tanh_accuracy(void) {
    double emax = 0.0, tmax = 0.0;
    for (float x = -80.0f; x < 80.0f; x += 0.013f) {
        double e = fabs(dp_nn_exp(x) - exp(x)) / exp(x);
        emax = e > emax ? e : emax;
    }
    for (float x = -12.0f; x < 12.0f; x += 0.0007f) {
        double e = fabs(dp_nn_tanh(x) - tanh(x));
        tmax = e > tmax ? e : tmax;
    }
    printf("  fast exp max rel err %.2e, fast tanh max abs err %.2e\n", emax, tmax);
    CHECK(emax < 1e-6);
    CHECK(tmax < 5e-7); /* rational tanh: 3.2e-7 without FMA contraction */
}

/* The fast exp and tanh keep NaN and saturate at the infinities. */
static void test_fast_exp_tanh_nonfinite(void) {
    CHECK(isnan(dp_nn_exp(NAN)) && isnan(dp_nn_tanh(NAN))); /* NaN stays NaN (and is no undefined conversion) */
    CHECK(dp_nn_exp(INFINITY) == dp_nn_exp(88.0f) && dp_nn_exp(-INFINITY) == dp_nn_exp(-87.0f));
}

/* ---- concat ---- */
static void cat_f(lcase *c) {
    const float *in[3] = {c->val[0], c->val[1], c->val[2]};
    dp_nn_concat_forward(c->out, in, c->s + 1, 3, c->s[0]);
}
static void cat_b(lcase *c) {
    float *const d[3] = {c->grad[0], c->grad[1], c->grad[2]};
    dp_nn_concat_backward(d, c->dout, c->s + 1, 3, c->s[0]);
}
/* The concatenation's gradients. */
static void test_concat(void) {
    lcase c = {0};
    int N = 4;
    c.s[0] = N, c.s[1] = 3, c.s[2] = 5, c.s[3] = 2;
    add_tensor(&c, "a", frand((size_t)N * 3, -1, 1), (size_t)N * 3);
    add_tensor(&c, "b", frand((size_t)N * 5, -1, 1), (size_t)N * 5);
    add_tensor(&c, "c", frand((size_t)N * 2, -1, 1), (size_t)N * 2);
    set_out(&c, (size_t)N * 10);
    c.fwd = cat_f, c.bwd = cat_b;
    run_case("concat", &c);
}

/* ---- aggregation ---- */
static void gsum_f(lcase *c) { dp_nn_group_sum_forward(c->out, c->val[0], c->idx[0], c->s[0], c->s[1], c->s[2]); }
static void gsum_b(lcase *c) { dp_nn_group_sum_backward(c->grad[0], c->dout, c->idx[0], c->s[0], c->s[1], c->s[2]); }
static void gmean_f(lcase *c) {
    dp_nn_group_mean_forward(c->out, c->act[0], c->val[0], c->idx[0], c->s[0], c->s[1], c->s[2]);
}
static void gmean_b(lcase *c) {
    dp_nn_group_mean_backward(c->grad[0], c->dout, c->act[0], c->idx[0], c->s[0], c->s[1], c->s[2]);
}
/* A group sum or mean of 13 rows into 4 groups, the last empty. */
static void group_case(int mean) {
    lcase c = {0};
    int N = 13, C = 3, G = 4;
    c.s[0] = N, c.s[1] = C, c.s[2] = G;
    c.idx[0] = irand(N, G - 1); /* group G-1 stays empty */
    c.act[0] = fbuf(G);
    add_tensor(&c, "inp", frand((size_t)N * C, -1, 1), (size_t)N * C);
    set_out(&c, (size_t)G * C);
    c.fwd = mean ? gmean_f : gsum_f, c.bwd = mean ? gmean_b : gsum_b;
    run_case(mean ? "group_mean" : "group_sum", &c);
}

/* The group sum's gradient, an empty group included. */
static void test_group_sum(void) { group_case(0); }
/* The group mean's gradient, an empty group included. */
static void test_group_mean(void) { group_case(1); }

/* Group counts, histograms and adjacency by hand. */
static const int agg_group[6] = {0, 1, 1, 2, 0, 1}, agg_cat[6] = {2, 0, 0, 1, 2, 1};

/* The members of each group, counted. */
static void test_group_count(void) {
    float cnt[3];
    dp_nn_group_count_forward(cnt, agg_group, 6, 3);
    CHECK(cnt[0] == 2 && cnt[1] == 3 && cnt[2] == 1);
}

/* The members of each group by category. */
static void test_group_histogram(void) {
    float hist[9];
    dp_nn_group_histogram_forward(hist, agg_group, agg_cat, 6, 3, 3);
    CHECK(hist[0 * 3 + 2] == 2 && hist[1 * 3 + 0] == 2 && hist[1 * 3 + 1] == 1 && hist[2 * 3 + 1] == 1);
}

/* The edges between groups, each group pair marked once. */
static void test_group_adjacency(void) {
    float adj[9];
    int src[3] = {0, 1, 4}, dst[3] = {3, 2, 5};
    dp_nn_group_adjacency_forward(adj, agg_group, src, dst, 3, 3);
    CHECK(adj[0 * 3 + 2] == 1 && adj[1 * 3 + 1] == 1 && adj[0 * 3 + 1] == 1);
    CHECK(adj[0] == 0 && adj[2 * 3 + 0] == 0);
}

/* ---- LSTM over a sequence ---- */
static void lstm_f(lcase *c) {
    int B = c->s[0], T = c->s[1], C = c->s[2], H = c->s[3], rev = c->s[4];
    size_t bth = (size_t)B * T * H;
    dp_nn_lstm_forward(c->out, c->out + bth, c->out + bth + (size_t)B * H, c->act[0], c->act[1],
                       c->val[0], c->val[1], c->val[2], c->val[3], B, T, C, H, rev);
}
static void lstm_b(lcase *c) {
    int B = c->s[0], T = c->s[1], C = c->s[2], H = c->s[3], rev = c->s[4];
    size_t bth = (size_t)B * T * H;
    dp_nn_lstm_backward(c->grad[0], c->grad[1], c->grad[2], c->grad[3], c->act[2], c->dout,
                        c->dout + bth, c->dout + bth + (size_t)B * H, c->out, c->act[0], c->act[1],
                        c->val[0], c->val[1], c->val[2], c->val[3], B, T, C, H, rev);
}
/* The LSTM's gradients over a sequence, forwards and reversed. */
static void test_lstm(void) {
    for (int rev = 0; rev < 2; rev++) {
        lcase c = {0};
        int B = 2, T = 5, C = 3, H = 4;
        c.s[0] = B, c.s[1] = T, c.s[2] = C, c.s[3] = H, c.s[4] = rev;
        c.act[0] = fbuf((size_t)B * T * H);
        c.act[1] = fbuf((size_t)B * T * 4 * H);
        c.act[2] = fbuf(dp_nn_lstm_scratch_count(B, T, H));
        add_tensor(&c, "inp", frand((size_t)B * T * C, -1, 1), (size_t)B * T * C);
        add_tensor(&c, "h0", frand((size_t)B * H, -1, 1), (size_t)B * H);
        add_tensor(&c, "c0", frand((size_t)B * H, -1, 1), (size_t)B * H);
        size_t P = dp_nn_lstm_param_count(C, H);
        add_tensor(&c, "w", frand(P, -0.6f, 0.6f), P);
        set_out(&c, (size_t)B * T * H + 2 * (size_t)B * H);
        c.fwd = lstm_f, c.bwd = lstm_b;
        run_case(rev ? "lstm(reverse)" : "lstm", &c);
    }
}

static void bilstm_f(lcase *c) {
    int B = c->s[0], T = c->s[1], C = c->s[2], H = c->s[3];
    size_t o = (size_t)B * T * 2 * H;
    dp_nn_bilstm_forward(c->out, c->out + o, c->out + o + (size_t)2 * B * H, c->act[0], c->val[0],
                         c->val[1], c->val[2], c->val[3], B, T, C, H);
}
static void bilstm_b(lcase *c) {
    int B = c->s[0], T = c->s[1], C = c->s[2], H = c->s[3];
    size_t o = (size_t)B * T * 2 * H;
    dp_nn_bilstm_backward(c->grad[0], c->grad[1], c->grad[2], c->grad[3], c->act[1], c->dout,
                          c->dout + o, c->dout + o + (size_t)2 * B * H, c->act[0], c->val[0],
                          c->val[1], c->val[2], c->val[3], B, T, C, H);
}
/* The bidirectional LSTM's gradients. */
static void test_bilstm(void) {
    lcase c = {0};
    int B = 2, T = 4, C = 3, H = 3;
    c.s[0] = B, c.s[1] = T, c.s[2] = C, c.s[3] = H;
    c.act[0] = fbuf(dp_nn_bilstm_act_count(B, T, H));
    c.act[1] = fbuf(dp_nn_bilstm_scratch_count(B, T, H));
    add_tensor(&c, "inp", frand((size_t)B * T * C, -1, 1), (size_t)B * T * C);
    add_tensor(&c, "h0", frand((size_t)2 * B * H, -1, 1), (size_t)2 * B * H);
    add_tensor(&c, "c0", frand((size_t)2 * B * H, -1, 1), (size_t)2 * B * H);
    size_t P = 2 * dp_nn_lstm_param_count(C, H);
    add_tensor(&c, "w", frand(P, -0.6f, 0.6f), P);
    set_out(&c, (size_t)B * T * 2 * H + 4 * (size_t)B * H);
    c.fwd = bilstm_f, c.bwd = bilstm_b;
    run_case("bilstm", &c);
}

static void cell_f(lcase *c) {
    int B = c->s[0], C = c->s[1], H = c->s[2];
    dp_nn_lstm_cell_forward(c->out, c->out + (size_t)B * H, c->act[0], c->val[0], c->val[1],
                            c->val[2], c->val[3], B, C, H);
}
static void cell_b(lcase *c) {
    int B = c->s[0], C = c->s[1], H = c->s[2];
    dp_nn_lstm_cell_backward(c->grad[0], c->grad[1], c->grad[2], c->grad[3], c->act[1], c->dout,
                             c->dout + (size_t)B * H, c->out + (size_t)B * H, c->act[0], c->val[0],
                             c->val[1], c->val[2], c->val[3], B, C, H);
}
/* One LSTM cell's gradients. */
static void test_lstm_cell(void) {
    lcase c = {0};
    int B = 3, C = 4, H = 5;
    c.s[0] = B, c.s[1] = C, c.s[2] = H;
    c.act[0] = fbuf((size_t)B * 4 * H);
    c.act[1] = fbuf((size_t)B * 4 * H);
    add_tensor(&c, "x", frand((size_t)B * C, -1, 1), (size_t)B * C);
    add_tensor(&c, "h_prev", frand((size_t)B * H, -1, 1), (size_t)B * H);
    add_tensor(&c, "c_prev", frand((size_t)B * H, -1, 1), (size_t)B * H);
    size_t P = dp_nn_lstm_param_count(C, H);
    add_tensor(&c, "w", frand(P, -0.6f, 0.6f), P);
    set_out(&c, 2 * (size_t)B * H);
    c.fwd = cell_f, c.bwd = cell_b;
    run_case("lstm_cell", &c);
}

static void dec_f(lcase *c) {
    int B = c->s[0], V = c->s[1], E = c->s[2], X = c->s[3], H = c->s[4];
    dp_nn_decoder_step_forward(c->out, c->out + (size_t)B * H, c->act[0], c->act[1], c->idx[0],
                               c->val[0], c->val[1], c->val[2], c->val[3], c->val[4], B, V, E, X, H);
}
static void dec_b(lcase *c) {
    int B = c->s[0], V = c->s[1], E = c->s[2], X = c->s[3], H = c->s[4];
    dp_nn_decoder_step_backward(c->grad[0], c->grad[1], c->grad[2], c->grad[3], c->grad[4], c->act[2],
                                c->dout, c->dout + (size_t)B * H, c->out + (size_t)B * H, c->act[0],
                                c->act[1], c->idx[0], c->val[1], c->val[2], c->val[4], B, V, E, X, H);
}
/* One decoder step's gradients (embedding, extra input, LSTM cell). */
static void test_decoder_step(void) {
    lcase c = {0};
    int B = 3, V = 4, E = 3, X = 2, H = 4;
    c.s[0] = B, c.s[1] = V, c.s[2] = E, c.s[3] = X, c.s[4] = H;
    c.idx[0] = irand(B, V);
    c.act[0] = fbuf((size_t)B * (E + X));
    c.act[1] = fbuf((size_t)B * 4 * H);
    c.act[2] = fbuf((size_t)B * (4 * H + E + X));
    add_tensor(&c, "extra", frand((size_t)B * X, -1, 1), (size_t)B * X);
    add_tensor(&c, "h_prev", frand((size_t)B * H, -1, 1), (size_t)B * H);
    add_tensor(&c, "c_prev", frand((size_t)B * H, -1, 1), (size_t)B * H);
    add_tensor(&c, "table", frand((size_t)V * E, -1, 1), (size_t)V * E);
    size_t P = dp_nn_lstm_param_count(E + X, H);
    add_tensor(&c, "w", frand(P, -0.6f, 0.6f), P);
    set_out(&c, 2 * (size_t)B * H);
    c.fwd = dec_f, c.bwd = dec_b;
    run_case("decoder_step", &c);
}

/* ---- attention ---- */
static void att_f(lcase *c) {
    int B = c->s[0], T = c->s[1], Q = c->s[2], A = c->s[3], E = c->s[4];
    dp_nn_attention_forward(c->out, c->act[0], c->act[1], c->act[2], c->val[0], c->val[1], c->val[2],
                            c->val[3], c->val[4], B, T, Q, A, E);
}
static void att_b(lcase *c) {
    int B = c->s[0], T = c->s[1], Q = c->s[2], A = c->s[3], E = c->s[4];
    dp_nn_attention_backward(c->grad[0], c->grad[1], c->grad[2], c->grad[3], c->grad[4], c->act[3],
                             c->dout, c->act[0], c->act[1], c->val[0], c->val[2], c->val[3],
                             c->val[4], B, T, Q, A, E);
}
/* Additive attention's gradients. */
static void test_attention(void) {
    lcase c = {0};
    int B = 2, T = 5, Q = 3, A = 4, E = 6;
    c.s[0] = B, c.s[1] = T, c.s[2] = Q, c.s[3] = A, c.s[4] = E;
    c.act[0] = fbuf((size_t)B * T);
    c.act[1] = fbuf((size_t)B * T * A);
    c.act[2] = fbuf((size_t)B * A);
    c.act[3] = fbuf((size_t)B * (T + A));
    add_tensor(&c, "query", frand((size_t)B * Q, -1, 1), (size_t)B * Q);
    add_tensor(&c, "keys", frand((size_t)B * T * A, -1, 1), (size_t)B * T * A);
    add_tensor(&c, "enc", frand((size_t)B * T * E, -1, 1), (size_t)B * T * E);
    add_tensor(&c, "w_q", frand((size_t)A * Q, -1, 1), (size_t)A * Q);
    add_tensor(&c, "v", frand(A, -1.5f, 1.5f), A);
    set_out(&c, (size_t)B * E);
    c.fwd = att_f, c.bwd = att_b;
    run_case("attention", &c);
}

/* ---- Transformer-XL layers ---- */
static void ln_f(lcase *c) {
    dp_nn_layernorm_forward(c->out, c->act[0], c->act[1], c->val[0], c->val[1], c->val[2], c->s[0], c->s[1]);
}
static void ln_b(lcase *c) {
    dp_nn_layernorm_backward(c->grad[0], c->grad[1], c->grad[2], c->dout, c->val[0], c->act[0], c->act[1],
                             c->val[1], c->s[0], c->s[1]);
}
/* Layer normalisation's gradients. */
static void test_layernorm(void) {
    lcase c = {0};
    int N = 4, C = 6;
    c.s[0] = N, c.s[1] = C;
    c.act[0] = fbuf(N);
    c.act[1] = fbuf(N);
    add_tensor(&c, "inp", frand((size_t)N * C, -2, 2), (size_t)N * C);
    add_tensor(&c, "g", frand(C, 0.5f, 1.5f), C);
    add_tensor(&c, "b", frand(C, -1, 1), C);
    set_out(&c, (size_t)N * C);
    c.fwd = ln_f, c.bwd = ln_b;
    run_case("layernorm", &c);
}

/* The normalised rows have mean 0 and variance 1 before the affine map. */
static void test_layernorm_normalises(void) {
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6], g[6] = {1, 1, 1, 1, 1, 1}, b[6] = {0}, mu, rs;
    dp_nn_layernorm_forward(y, &mu, &rs, x, g, b, 1, 6);
    CHECK_NEAR(mu, 3.5, 1e-6);
    CHECK_NEAR(rs, 1.0 / sqrt(35.0 / 12.0 + 1e-5), 1e-6);
    CHECK_NEAR(y[0] + y[5], 0.0, 1e-6);
}

/* relative multi-head attention over M memory positions and T queries */
static void rel_f(lcase *c) {
    dp_nn_rel_attention_forward(c->out, c->act[0], c->act[1], c->val[0], c->val[1], c->val[2], c->val[3],
                                c->val[4], c->val[5], c->s[0], c->s[1], c->s[2], c->s[3], c->s[4]);
}
static void rel_b(lcase *c) {
    dp_nn_rel_attention_backward(c->grad[0], c->grad[1], c->grad[2], c->grad[3], c->grad[4], c->grad[5],
                                 c->act[1], c->dout, c->act[0], c->val[0], c->val[1], c->val[2], c->val[3],
                                 c->val[4], c->val[5], c->s[0], c->s[1], c->s[2], c->s[3], c->s[4]);
}
static void rel_case(int M, int causal, const char *name) {
    lcase c = {0};
    int T = 4, d = 6, heads = 2, K = M + T, NR = M + 2 * T - 1;
    c.s[0] = T, c.s[1] = M, c.s[2] = d, c.s[3] = heads, c.s[4] = causal;
    c.act[0] = fbuf((size_t)heads * T * K);
    c.act[1] = fbuf(dp_nn_rel_attention_scratch_count(T, M, d));
    add_tensor(&c, "q", frand((size_t)T * d, -1, 1), (size_t)T * d);
    add_tensor(&c, "k", frand((size_t)K * d, -1, 1), (size_t)K * d);
    add_tensor(&c, "v", frand((size_t)K * d, -1, 1), (size_t)K * d);
    add_tensor(&c, "rk", frand((size_t)NR * d, -1, 1), (size_t)NR * d);
    add_tensor(&c, "u", frand(d, -1, 1), d);
    add_tensor(&c, "vb", frand(d, -1, 1), d);
    set_out(&c, (size_t)T * d);
    c.fwd = rel_f, c.bwd = rel_b;
    run_case(name, &c);
}
/* Relative multi-head attention's gradients: with a memory, causal, and
 * without a memory. */
static void test_rel_attention(void) {
    rel_case(3, 0, "rel_attention(mem 3)");
    rel_case(3, 1, "rel_attention(causal)");
    rel_case(0, 0, "rel_attention(no mem)");
}

/* Causal: a query sees the memory and the queries before it, nothing
 * after; each row of probabilities sums to one. */
static void test_rel_attention_causal(void) {
    int T = 3, M = 2, d = 4, K = M + T, NR = M + 2 * T - 1;
    float q[12], k[20], v[20], rk[28], u[4] = {0}, vb[4] = {0}, out[12], prob[2 * 3 * 5];
    float *scr = fbuf(dp_nn_rel_attention_scratch_count(T, M, d));
    for (int i = 0; i < 12; i++) q[i] = 0.1f * i;
    for (int i = 0; i < 20; i++) k[i] = 0.05f * (i % 7), v[i] = (float)i;
    for (int i = 0; i < NR * d; i++) rk[i] = 0.01f * i;
    dp_nn_rel_attention_forward(out, prob, scr, q, k, v, rk, u, vb, T, M, d, 2, 1);
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < T; i++) {
            double sum = 0.0;
            for (int j = 0; j < K; j++) {
                float p = prob[(h * T + i) * K + j];
                if (j > M + i) CHECK(p == 0.0f);
                else CHECK(p > 0.0f);
                sum += p;
            }
            CHECK_NEAR(sum, 1.0, 1e-6);
        }
    free(scr);
}

/* The position term sees the distance M + i - j: with no content score
 * (k = 0, u = vb = 0), q = 1 and rk row r = r / 10 in every column, key j
 * is exp(sqrt(dh) / 10) times as likely as key j + 1, for every i. */
static void test_rel_attention_position_term(void) {
    int T = 3, M = 2, d = 4, K = M + T, NR = M + 2 * T - 1;
    float q[12], k[20], v[20], rk[28], u[4] = {0}, vb[4] = {0}, out[12], prob[2 * 3 * 5];
    float *scr = fbuf(dp_nn_rel_attention_scratch_count(T, M, d));
    for (int i = 0; i < 20; i++) v[i] = (float)i;
    for (int i = 0; i < 12; i++) q[i] = 1.0f;
    for (int i = 0; i < 20; i++) k[i] = 0.0f;
    for (int r = 0; r < NR; r++)
        for (int c = 0; c < d; c++) rk[r * d + c] = 0.1f * r;
    dp_nn_rel_attention_forward(out, prob, scr, q, k, v, rk, u, vb, T, M, d, 2, 0);
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j + 1 < K; j++)
                CHECK_NEAR(prob[(h * T + i) * K + j] / prob[(h * T + i) * K + j + 1], exp(sqrt(2.0) / 10.0), 1e-5);
    free(scr);
}

/* The sinusoids: sin and cos halves of the position times 10000^(-2k/d). */
static void test_sinusoid(void) {
    float R[3 * 8];
    dp_nn_sinusoid_forward(R, -1, 3, 8);
    CHECK_NEAR(R[0], sin(-1.0), 1e-7);
    CHECK_NEAR(R[4], cos(-1.0), 1e-7);
    CHECK_NEAR(R[8 + 0], 0.0, 1e-7);
    CHECK_NEAR(R[8 + 4], 1.0, 1e-7);
    CHECK_NEAR(R[16 + 1], sin(pow(10000.0, -2.0 / 8.0)), 1e-7);
    CHECK_NEAR(R[16 + 7], cos(pow(10000.0, -6.0 / 8.0)), 1e-7);
}

/* ---- graph layers ---- */
static void gcn_f(lcase *c) {
    dp_nn_gcn_forward(c->out, c->act[0], c->val[0], &c->graph, c->val[1], c->val[2], c->s[0], c->s[1], c->s[2]);
}
static void gcn_b(lcase *c) {
    dp_nn_gcn_backward(c->grad[0], c->grad[1], c->grad[2], c->act[1], c->dout, c->val[0], &c->graph,
                       c->val[1], c->s[0], c->s[1], c->s[2]);
}
/* A small DAG with a duplicate edge, a reversed duplicate and a
 * self-loop. */
static const int gcn_src[] = {0, 0, 1, 2, 3, 4, 4, 5, 1, 6};
static const int gcn_dst[] = {1, 2, 3, 3, 4, 5, 6, 6, 0, 6};

/* The GCN's normalised adjacency of that graph: row 0 holds {0, 1, 2}
 * (degree 3), entry (0, 1) is 1/sqrt(3 x 3). */
static void test_gcn_graph_normalised(void) {
    dp_nn_graph g;
    dp_error err;
    CHECK(dp_nn_graph_init(&g, 7, gcn_src, gcn_dst, 10, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(g.row[1] - g.row[0], 3);
    CHECK_NEAR(g.val[1], 1.0 / 3.0, 1e-6);
    dp_nn_graph_free(&g);
}

/* An edge to a node outside the graph is refused. */
static void test_gcn_graph_refuses_outside_edges(void) {
    int bad_src[] = {0}, bad_dst[] = {9};
    dp_nn_graph g2;
    dp_error err;
    CHECK(dp_nn_graph_init(&g2, 7, bad_src, bad_dst, 1, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "outside");
}

/* The GCN layer's gradients on that graph. */
static void test_gcn(void) {
    lcase c = {0};
    int N = 7, C = 4, OC = 3;
    dp_error err;
    CHECK(dp_nn_graph_init(&c.graph, N, gcn_src, gcn_dst, 10, &err) == DP_STATUS_OK);
    c.s[0] = N, c.s[1] = C, c.s[2] = OC;
    c.act[0] = fbuf((size_t)N * OC);
    c.act[1] = fbuf((size_t)N * OC);
    add_tensor(&c, "inp", frand((size_t)N * C, -1, 1), (size_t)N * C);
    add_tensor(&c, "weight", frand((size_t)OC * C, -1, 1), (size_t)OC * C);
    add_tensor(&c, "bias", frand(OC, -1, 1), OC);
    set_out(&c, (size_t)N * OC);
    c.fwd = gcn_f, c.bwd = gcn_b;
    run_case("gcn", &c);
}

static void readout_f(lcase *c) { dp_nn_readout_forward(c->out, c->val[0], c->s[0], c->s[1]); }
static void readout_b(lcase *c) { dp_nn_readout_backward(c->grad[0], c->dout, c->out, c->s[0], c->s[1]); }
static void bil_f(lcase *c) {
    dp_nn_bilinear_forward(c->out, c->act[0], c->val[0], c->val[1], c->val[2], c->val[3], c->s[0], c->s[1]);
}
static void bil_b(lcase *c) {
    dp_nn_bilinear_backward(c->grad[0], c->grad[1], c->grad[2], c->grad[3], c->act[1], c->dout,
                            c->act[0], c->val[0], c->val[1], c->val[2], c->s[0], c->s[1]);
}
static void bce_f(lcase *c) { c->out[0] = dp_nn_bce_logits_forward(c->val[0], c->act[0], c->s[0]); }
static void bce_b(lcase *c) { dp_nn_bce_logits_backward(c->grad[0], c->dout[0], c->val[0], c->act[0], c->s[0]); }
static void perm_f(lcase *c) { dp_nn_permute_rows_forward(c->out, c->val[0], c->idx[0], c->s[0], c->s[1]); }
static void perm_b(lcase *c) { dp_nn_permute_rows_backward(c->grad[0], c->dout, c->idx[0], c->s[0], c->s[1]); }
/* The readout's gradient. */
static void test_readout(void) {
    lcase c = {0};
    int N = 6, C = 4;
    c.s[0] = N, c.s[1] = C;
    add_tensor(&c, "inp", frand((size_t)N * C, -2, 2), (size_t)N * C);
    set_out(&c, C);
    c.fwd = readout_f, c.bwd = readout_b;
    run_case("readout", &c);
}

/* The bilinear discriminator's gradients. */
static void test_bilinear(void) {
    lcase c = {0};
    int N = 6, C = 4;
    c.s[0] = N, c.s[1] = C;
    c.act[0] = fbuf(C);
    c.act[1] = fbuf(C);
    add_tensor(&c, "inp", frand((size_t)N * C, -1, 1), (size_t)N * C);
    add_tensor(&c, "summary", frand(C, 0, 1), C);
    add_tensor(&c, "weight", frand((size_t)C * C, -1, 1), (size_t)C * C);
    add_tensor(&c, "bias", frand(1, -1, 1), 1);
    set_out(&c, N);
    c.fwd = bil_f, c.bwd = bil_b;
    run_case("bilinear", &c);
}

/* Binary cross-entropy on logits: its gradient. */
static void test_bce_logits(void) {
    lcase c = {0};
    int N = 6;
    c.s[0] = 2 * N;
    c.act[0] = fbuf(2 * (size_t)N);
    for (int i = 0; i < N; i++) c.act[0][i] = 1.0f;
    add_tensor(&c, "logits", frand(2 * (size_t)N, -4, 4), 2 * (size_t)N);
    set_out(&c, 1);
    c.fwd = bce_f, c.bwd = bce_b;
    run_case("bce_logits", &c);
}

/* Binary cross-entropy at logit 0: log 2. */
static void test_bce_logits_at_zero(void) {
    float z = 0.0f, y = 1.0f;
    CHECK_NEAR(dp_nn_bce_logits_forward(&z, &y, 1), log(2.0), 1e-6);
}

/* A sampled permutation holds every index once. */
static void test_permutation_sample(void) {
    int N = 6, perm[6];
    dp_rng r;
    dp_rng_seed(&r, 3);
    dp_nn_permutation_sample(perm, &r, N);
    int seen[6] = {0};
    for (int i = 0; i < N; i++) seen[perm[i]]++;
    for (int i = 0; i < N; i++) CHECK_INT_EQ(seen[i], 1);
}

/* Rows permuted: the gradient. */
static void test_permute_rows(void) {
    lcase c = {0};
    int N = 6, C = 4;
    c.s[0] = N, c.s[1] = C;
    c.idx[0] = malloc(sizeof(int) * N);
    dp_rng r;
    dp_rng_seed(&r, 3);
    dp_nn_permutation_sample(c.idx[0], &r, N);
    add_tensor(&c, "inp", frand((size_t)N * C, -1, 1), (size_t)N * C);
    set_out(&c, (size_t)N * C);
    c.fwd = perm_f, c.bwd = perm_b;
    run_case("permute_rows", &c);
}

/* ---- policy head: logits -> log-softmax -> [log p(actions) | entropy] ---- */
static void head_f(lcase *c) {
    int N = c->s[0], D = c->s[1];
    dp_nn_policy_logits_forward(c->act[0], c->act[1], c->val[0], c->act[2], N, D, c->f[0], c->f[1]);
    dp_nn_log_softmax_forward(c->act[3], c->act[0], N, D);
    dp_nn_categorical_logprob_forward(c->out, c->act[3], c->idx[0], N, D);
    dp_nn_categorical_entropy_forward(c->out + N, c->act[3], N, D);
}
static void head_b(lcase *c) {
    int N = c->s[0], D = c->s[1];
    float *dlogp = c->act[4], *dlogits = c->act[5];
    memset(dlogp, 0, sizeof(float) * (size_t)N * D);
    memset(dlogits, 0, sizeof(float) * (size_t)N * D);
    dp_nn_categorical_logprob_backward(dlogp, c->dout, c->idx[0], N, D);
    dp_nn_categorical_entropy_backward(dlogp, c->dout + N, c->act[3], N, D);
    dp_nn_log_softmax_backward(dlogits, dlogp, c->act[3], N, D);
    dp_nn_policy_logits_backward(c->grad[0], dlogits, c->act[1], N, D, c->f[0], c->f[1]);
}
/* The policy head's gradients (noisy logits, log-softmax, the actions'
 * log-probabilities and the entropy), plain and squashed (tanh C = 5,
 * temperature 10). */
static void test_policy_head(void) {
    for (int squash = 0; squash < 2; squash++) {
        lcase c = {0};
        int N = 4, D = 5;
        c.s[0] = N, c.s[1] = D;
        c.f[0] = squash ? 5.0f : 0.0f, c.f[1] = squash ? 10.0f : 2.0f;
        for (int i = 0; i < 6; i++) c.act[i] = fbuf((size_t)N * D);
        dp_rng r;
        dp_rng_seed(&r, 11);
        dp_nn_noise_fill(c.act[2], &r, (size_t)N * D, 0.1f);
        c.idx[0] = irand(N, D);
        add_tensor(&c, "inp", frand((size_t)N * D, -8, 8), (size_t)N * D);
        set_out(&c, 2 * (size_t)N);
        c.fwd = head_f, c.bwd = head_b;
        run_case(squash ? "policy_head(C=5,T=10)" : "policy_head(plain)", &c);
    }
}

/* Noise filled with amplitude 0.1 reaches it. */
static void test_noise_fill_amplitude(void) {
    enum { N = 4, D = 5 };
    float noise[N * D];
    dp_rng r;
    dp_rng_seed(&r, 11);
    dp_nn_noise_fill(noise, &r, (size_t)N * D, 0.1f);
    float mx = 0.0f;
    for (int i = 0; i < N * D; i++) mx = fabsf(noise[i]) > mx ? fabsf(noise[i]) : mx;
    CHECK_NEAR(mx, 0.1, 1e-6);
}

/* The log-probabilities of a row: log_softmax([0, 1, 2, -1]). */
static void sample_logp(float *logp) {
    float l[4] = {0.0f, 1.0f, 2.0f, -1.0f};
    dp_nn_log_softmax_forward(logp, l, 1, 4);
}

/* The log-softmax's probabilities sum to one. */
static void test_log_softmax_normalised(void) {
    float logp[4];
    sample_logp(logp);
    double z = 0.0;
    for (int d = 0; d < 4; d++) z += exp(logp[d]);
    CHECK_NEAR(z, 1.0, 1e-6);
}

enum { DRAWS = 20000 };

/* DRAWS categorical samples of sample_logp's row, from seed 99, into a. */
static void draw_samples(int *a) {
    float logp[4];
    sample_logp(logp);
    float *rows = malloc(sizeof(float) * 4 * DRAWS);
    CHECK(rows != NULL);
    for (int i = 0; i < DRAWS; i++) memcpy(rows + 4 * i, logp, sizeof logp);
    dp_rng r;
    dp_rng_seed(&r, 99);
    dp_nn_categorical_sample(a, rows, &r, DRAWS, 4);
    free(rows);
}

/* The same seed gives the same draws. */
static void test_sampling_same_seed_same_draws(void) {
    int *a = malloc(sizeof(int) * DRAWS), *b = malloc(sizeof(int) * DRAWS);
    CHECK(a && b);
    draw_samples(a);
    draw_samples(b);
    CHECK(memcmp(a, b, sizeof(int) * DRAWS) == 0);
    free(a);
    free(b);
}

/* Sampling follows the distribution: each device's frequency within five
 * standard deviations of its probability. */
static void test_sampling_follows_distribution(void) {
    float logp[4];
    sample_logp(logp);
    int *a = malloc(sizeof(int) * DRAWS);
    CHECK(a);
    draw_samples(a);
    int cnt[4] = {0};
    for (int i = 0; i < DRAWS; i++) cnt[a[i]]++;
    for (int d = 0; d < 4; d++) {
        TEST_CASE("device %d", d);
        double p = exp(logp[d]), sd = sqrt(p * (1 - p) / DRAWS);
        CHECK(fabs(cnt[d] / (double)DRAWS - p) < 5 * sd);
    }
    free(a);
}

/* The argmax picks the most likely device. */
static void test_argmax(void) {
    float logp[4];
    sample_logp(logp);
    int arg;
    dp_nn_categorical_argmax(&arg, logp, 1, 4);
    CHECK_INT_EQ(arg, 2);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    dp_rng_seed(&g_rng, 2024);
    dp_nn_set_threads(1);
    TEST_RUN(test_linear);
    TEST_RUN(test_linear_input_major);
    TEST_RUN(test_checker_passes_correct_gradient);
    TEST_RUN(test_checker_flags_scaled_input_gradient);
    TEST_RUN(test_checker_flags_dropped_weight_term);
    TEST_RUN(test_embedding);
    TEST_RUN(test_relu);
    TEST_RUN(test_tanh);
    TEST_RUN(test_sigmoid);
    TEST_RUN(test_prelu);
    TEST_RUN(test_fast_exp_tanh_accuracy);
    TEST_RUN(test_fast_exp_tanh_nonfinite);
    TEST_RUN(test_concat);
    TEST_RUN(test_group_sum);
    TEST_RUN(test_group_mean);
    TEST_RUN(test_group_count);
    TEST_RUN(test_group_histogram);
    TEST_RUN(test_group_adjacency);
    TEST_RUN(test_lstm);
    TEST_RUN(test_bilstm);
    TEST_RUN(test_lstm_cell);
    TEST_RUN(test_decoder_step);
    TEST_RUN(test_attention);
    TEST_RUN(test_layernorm);
    TEST_RUN(test_layernorm_normalises);
    TEST_RUN(test_rel_attention);
    TEST_RUN(test_rel_attention_causal);
    TEST_RUN(test_rel_attention_position_term);
    TEST_RUN(test_sinusoid);
    TEST_RUN(test_gcn_graph_normalised);
    TEST_RUN(test_gcn_graph_refuses_outside_edges);
    TEST_RUN(test_gcn);
    TEST_RUN(test_readout);
    TEST_RUN(test_bilinear);
    TEST_RUN(test_bce_logits);
    TEST_RUN(test_bce_logits_at_zero);
    TEST_RUN(test_permutation_sample);
    TEST_RUN(test_permute_rows);
    TEST_RUN(test_noise_fill_amplitude);
    TEST_RUN(test_policy_head);
    TEST_RUN(test_log_softmax_normalised);
    TEST_RUN(test_sampling_same_seed_same_draws);
    TEST_RUN(test_sampling_follows_distribution);
    TEST_RUN(test_argmax);
    printf("largest relative error over all layers: %.2e (tolerance %.0e)\n", g_worst, TOL);
    return test_end();
}
