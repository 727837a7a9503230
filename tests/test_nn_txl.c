/* The Transformer-XL placer: finite-difference checks of every parameter
 * and the input for a first segment (no memory) and a later one (memory of
 * the previous segment, a constant: stop-gradient), non-causal and causal;
 * the memory handed on; sampling, greedy and teacher forcing agreeing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/nn.h"
#include "dplace/nn_check.h"
#include "dplace/nn_txl.h"
#include "test_fixtures.h"

#define EPS 1e-2
#define FLOOR 1e-2
#define TOL 2e-2
#define MAXPTS 60
#define REACH 1e-4

enum { B = 2, T = 4, F = 4, D = 3, MEM = 3 };

static double g_worst = 0.0;

typedef struct txl_ctx {
    dp_nn_params p;
    dp_nn_txl m;
    float x[T * F], dx[T * F];
    int act[B * T];
    float coef[B], entc[B], step[B * T];
    dp_nn_txl_state start; /* a copy of a previous segment's memory, or none */
    float memcopy[2 * MEM * 8];
} txl_ctx;

/* loss in double from the saved log-probabilities and entropies */
static double txl_loss(void *vctx) {
    txl_ctx *c = vctx;
    float lp[B], ent[B];
    dp_nn_txl_segment_forward(&c->m, lp, ent, c->act, c->x, c->start.len ? &c->start : NULL,
                              DP_NN_DECODE_MODE_TEACHER, NULL);
    double s = 0.0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            s += ((double)c->coef[b] + c->step[b * T + t]) * c->m.logp[t * D + c->act[b * T + t]] +
                 (double)c->entc[b] * c->m.ent_t[t];
    return s;
}

static void txl_grad(void *vctx) {
    txl_ctx *c = vctx;
    dp_nn_params_zero_grad(&c->p);
    memset(c->dx, 0, sizeof c->dx);
    txl_loss(c);
    dp_nn_txl_segment_backward(&c->m, c->dx, c->coef, c->step, c->entc, c->act, c->x);
}

static void check_txl(int causal, int with_memory, const char *label) {
    txl_ctx *c = calloc(1, sizeof *c);
    dp_nn_txl_config cfg = {.in_dim = F, .d_model = 6, .heads = 2, .d_inner = 8, .layers = 2, .mem_len = MEM,
                            .devices = D, .causal = causal};
    dp_nn_tensor_spec specs[40];
    int n = dp_nn_txl_specs(specs, &cfg);
    CHECK(n == 4 + 13 * 2 && n <= 40);
    dp_rng rng;
    dp_rng_seed(&rng, 808);
    CHECK(dp_nn_params_init(&c->p, specs, n, &rng, NULL) == DP_STATUS_OK);
    /* off the defaults: biases and the norms' gains and shifts away from 0
     * and 1, larger position biases, so every path carries gradient; the
     * feature inputs away from the ReLU kinks are checked below */
    for (size_t i = 0; i < c->p.count; i++) c->p.data[i] += (float)(0.3 * (dp_rng_uniform(&rng) - 0.5));
    CHECK(dp_nn_txl_init(&c->m, &cfg, &c->p, B, T, NULL) == DP_STATUS_OK);
    for (int b = 0; b < B; b++) c->coef[b] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0), c->entc[b] = 0.4f;
    for (int i = 0; i < B * T; i++) c->step[i] = (float)(dp_rng_uniform(&rng) - 0.5);
    for (int i = 0; i < B * T; i++) c->act[i] = (int)dp_rng_below(&rng, D);
    if (with_memory) { /* a first segment's memory, then a constant */
        float x0[T * F], lp[B];
        int a0[B * T];
        for (int i = 0; i < T * F; i++) x0[i] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0);
        dp_nn_txl_segment_forward(&c->m, lp, NULL, a0, x0, NULL, DP_NN_DECODE_MODE_GREEDY, NULL);
        CHECK(c->m.last.len == MEM); /* min(mem_len, T) of the first segment */
        memcpy(c->memcopy, c->m.last.mem, sizeof(float) * 2 * MEM * 6);
        c->start = (dp_nn_txl_state){c->memcopy, c->m.last.len};
    }
    /* features drawn until no ReLU input of the feed-forward blocks lies
     * within 0.02 of its kink */
    for (int attempt = 0;; attempt++) {
        CHECK(attempt < 10000);
        for (int i = 0; i < T * F; i++) c->x[i] = (float)(2.0 * dp_rng_uniform(&rng) - 1.0);
        txl_loss(c);
        int near = 0;
        for (int l = 0; l < 2; l++) { /* f holds relu(pre): recompute pre from y */
            float pre[T * 8];
            dp_nn_linear_forward(pre, c->m.layer[l].y, c->m.layer[l].w1, c->m.layer[l].c1, T, 6, 8);
            for (int i = 0; i < T * 8; i++) near |= fabsf(pre[i]) < 0.02f;
        }
        if (!near) break;
    }
    dp_nn_check_tensor t[40];
    dp_nn_check_result r[40];
    int nt = 0;
    for (int i = 0; i < c->p.ntensors; i++)
        t[nt++] = (dp_nn_check_tensor){c->p.name[i], dp_nn_params_tensor(&c->p, i), dp_nn_params_grad(&c->p, i),
                                       c->p.size[i]};
    t[nt++] = (dp_nn_check_tensor){"input", c->x, c->dx, T * F};
    dp_nn_gradcheck(r, c, txl_loss, txl_grad, t, nt, EPS, FLOOR, 0.0, MAXPTS, 4);
    g_worst = fmax(g_worst, fixture_gradcheck_report(label, t, r, nt, TOL, REACH));
    dp_nn_txl_free(&c->m);
    dp_nn_params_free(&c->p);
    free(c);
}

/* A first segment (no memory): every gradient. */
static void test_txl_first_segment(void) { check_txl(0, 0, "txl(first)"); }
/* A later segment, the previous one's memory a constant: every gradient. */
static void test_txl_with_memory(void) { check_txl(0, 1, "txl(memory)"); }
/* The same, causal. */
static void test_txl_causal(void) { check_txl(1, 1, "txl(causal,memory)"); }

/* A Transformer-XL of 2 layers and a memory of 7 over segments of 5, two
 * workspaces of 3 samples on one store, two segments' inputs. */
enum { TT = 5, MM = 7 };
typedef struct txl_mem {
    dp_nn_params p;
    dp_nn_txl m, m2;
    float x1[TT * F], x2[TT * F];
    dp_rng rng;
} txl_mem;

static void txl_mem_open(txl_mem *t) {
    dp_nn_txl_config cfg = {.in_dim = F, .d_model = 8, .heads = 2, .d_inner = 12, .layers = 2, .mem_len = MM,
                            .devices = D, .causal = 0};
    dp_nn_tensor_spec specs[40];
    int n = dp_nn_txl_specs(specs, &cfg);
    dp_rng_seed(&t->rng, 4);
    CHECK(dp_nn_params_init(&t->p, specs, n, &t->rng, NULL) == DP_STATUS_OK);
    CHECK(dp_nn_txl_init(&t->m, &cfg, &t->p, 3, TT, NULL) == DP_STATUS_OK);
    CHECK(dp_nn_txl_init(&t->m2, &cfg, &t->p, 3, TT, NULL) == DP_STATUS_OK);
    for (int i = 0; i < TT * F; i++) t->x1[i] = (float)dp_rng_normal(&t->rng), t->x2[i] = (float)dp_rng_normal(&t->rng);
}

static void txl_mem_close(txl_mem *t) {
    dp_nn_txl_free(&t->m);
    dp_nn_txl_free(&t->m2);
    dp_nn_params_free(&t->p);
}

/* Two segments, the second continuing from m->last, greedily: m holds the
 * second's log-probabilities in lp and actions in a. */
static void txl_two_segments(txl_mem *t, float *lp, int *a) {
    dp_nn_txl_segment_forward(&t->m, lp, NULL, a, t->x1, NULL, DP_NN_DECODE_MODE_GREEDY, NULL);
    dp_nn_txl_segment_forward(&t->m, lp, NULL, a, t->x2, &t->m.last, DP_NN_DECODE_MODE_GREEDY, NULL);
}

/* The memory holds the last mem_len inputs of each layer: after one
 * segment its 5 rows, layer 0's being the projected features; after two,
 * min(mem_len, 5 + 5) rows ending with the second segment's. */
static void test_txl_memory_holds_layer_inputs(void) {
    txl_mem t;
    txl_mem_open(&t);
    float lp[3];
    int a[3 * TT];
    dp_nn_txl_segment_forward(&t.m, lp, NULL, a, t.x1, NULL, DP_NN_DECODE_MODE_GREEDY, NULL);
    CHECK(t.m.last.len == TT);
    /* layer 0's memory is the projected features: the input of layer 0 */
    CHECK(memcmp(t.m.last.mem, t.m.h0, sizeof(float) * TT * 8) == 0);
    dp_nn_txl_segment_forward(&t.m, lp, NULL, a, t.x2, &t.m.last, DP_NN_DECODE_MODE_GREEDY, NULL);
    CHECK(t.m.last.len == MM); /* min(mem_len, 5 + 5) */
    /* the memory's last rows are this segment's layer inputs */
    CHECK(memcmp(t.m.last.mem + (size_t)(MM - TT) * 8, t.m.h0, sizeof(float) * TT * 8) == 0);
    txl_mem_close(&t);
}

/* Continuing from m->last equals continuing from a copy of it. */
static void test_txl_continuing_from_a_copy(void) {
    txl_mem t;
    txl_mem_open(&t);
    float lp[3], lp2[3];
    int a[3 * TT], a2[3 * TT];
    dp_nn_txl_segment_forward(&t.m, lp, NULL, a, t.x1, NULL, DP_NN_DECODE_MODE_GREEDY, NULL);
    float saved[2 * MM * 8];
    memcpy(saved, t.m.last.mem, sizeof(float) * 2 * TT * 8);
    dp_nn_txl_state copy = {saved, TT};
    dp_nn_txl_segment_forward(&t.m2, lp2, NULL, a2, t.x2, &copy, DP_NN_DECODE_MODE_GREEDY, NULL);
    dp_nn_txl_segment_forward(&t.m, lp, NULL, a, t.x2, &t.m.last, DP_NN_DECODE_MODE_GREEDY, NULL);
    CHECK(memcmp(lp, lp2, sizeof lp) == 0 && memcmp(a, a2, sizeof a) == 0);
    txl_mem_close(&t);
}

/* The memory changes the distributions: the second segment without it
 * has other log-probabilities. */
static void test_txl_memory_changes_distributions(void) {
    txl_mem t;
    txl_mem_open(&t);
    float lp[3], lp2[3];
    int a[3 * TT], a2[3 * TT];
    txl_two_segments(&t, lp, a);
    dp_nn_txl_segment_forward(&t.m2, lp2, NULL, a2, t.x2, NULL, DP_NN_DECODE_MODE_GREEDY, NULL);
    CHECK(memcmp(lp, lp2, sizeof lp) != 0); /* without the memory: other distributions */
    txl_mem_close(&t);
}

/* Teacher forcing the sampled actions gives their log-probabilities. */
static void test_txl_teacher_forcing_gives_sampled_logprobs(void) {
    txl_mem t;
    txl_mem_open(&t);
    float lp[3], lp2[3], ent[3];
    int a[3 * TT], a2[3 * TT];
    txl_two_segments(&t, lp, a);
    dp_nn_txl_segment_forward(&t.m, lp, ent, a, t.x1, NULL, DP_NN_DECODE_MODE_SAMPLE, &t.rng);
    memcpy(a2, a, sizeof a);
    dp_nn_txl_segment_forward(&t.m2, lp2, NULL, a2, t.x1, NULL, DP_NN_DECODE_MODE_TEACHER, NULL);
    CHECK(memcmp(lp, lp2, sizeof lp) == 0);
    txl_mem_close(&t);
}

/* The samples of one input differ only in their draws: equal, positive
 * entropies. */
static void test_txl_samples_share_distributions(void) {
    txl_mem t;
    txl_mem_open(&t);
    float lp[3], ent[3];
    int a[3 * TT];
    txl_two_segments(&t, lp, a);
    dp_nn_txl_segment_forward(&t.m, lp, ent, a, t.x1, NULL, DP_NN_DECODE_MODE_SAMPLE, &t.rng);
    CHECK(ent[0] == ent[1] && ent[1] == ent[2] && ent[0] > 0.0f);
    txl_mem_close(&t);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    dp_nn_set_threads(1);
    TEST_RUN(test_txl_first_segment);
    TEST_RUN(test_txl_with_memory);
    TEST_RUN(test_txl_causal);
    TEST_RUN(test_txl_memory_holds_layer_inputs);
    TEST_RUN(test_txl_continuing_from_a_copy);
    TEST_RUN(test_txl_memory_changes_distributions);
    TEST_RUN(test_txl_teacher_forcing_gives_sampled_logprobs);
    TEST_RUN(test_txl_samples_share_distributions);
    printf("largest relative error over the checks: %.2e (tolerance %.0e)\n", g_worst, TOL);
    return test_end();
}
