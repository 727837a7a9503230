/* bench_mars: one Mars PPO round, the same work as
 * ../shared/anchors/torch_mars_policy.py (read that header): a random
 * training-like graph of OPS operations with one-hot op types and random
 * shapes as node features, the GCN encoder (3 layers of GCN_HIDDEN, PReLU)
 * and the segment-level seq2seq placer (segments of SEG operations,
 * bi-LSTM encoder of HIDDEN per direction started from the previous
 * segment's final state, LSTM decoder of HIDDEN fed the previous device's
 * embedding and an additive-attention context before the cell, logits =
 * Linear(h)); one round samples SAMPLES placements (batched, no backward),
 * then EPOCHS epochs over MINIBATCHES shuffled minibatches: log-probabilities
 * of the sampled devices (teacher forcing), clipped surrogate (0.2) with a
 * stand-in advantage, entropy bonus 0.001, backward through the placer and
 * the GCN, global gradient-norm clip 1.0, Adam lr 3e-4.
 *
 * Prints the median seconds per round (all rounds when ITERS < 3, else the
 * first not counted), the time per phase, the FLOPs per round by component,
 * the rates of the round's hot kernels on this machine, and the seconds per
 * round at the paper's sizes on inception_v3, gnmt4 and bert_base,
 * extrapolated from this round's measured cost per segment and a measured
 * GCN pass at those sizes (a full round there takes minutes to hours).
 *
 * Differences from the reference that do not change the work: the random
 * graph comes from dplace's RNG; the GCN adds its bias after propagation
 * and has one PReLU slope per layer (DGI's layer), the reference adds it
 * before and has one per channel; the LSTMs have one bias, not two.
 * DPLACE_MARS_MAX_SAVED=n keeps n segment workspaces per minibatch and
 * recomputes the others (default: all kept, as autograd keeps them);
 * DPLACE_MARS_PAPER=0 skips the paper-size extrapolation.
 *
 * usage: bench_mars [OPS SEG HIDDEN GCN_HIDDEN DEVICES SAMPLES EPOCHS MINIBATCHES ITERS THREADS]
 *        defaults: 256 128 512 256 5 20 3 4 1 2 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dplace/nn.h"
#include "dplace/nn_mars.h"
#include "nn/nn_internal.h"
#include "nn/nn_kern.h"

enum { TYPES = 200, SHAPE = 8, FIN = TYPES + 2 * SHAPE };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *xmalloc(size_t n) {
    void *p = calloc(n ? n : 1, 1);
    if (!p) {
        fprintf(stderr, "bench_mars: out of memory\n");
        exit(2);
    }
    return p;
}

static void die(const char *what, const dp_error *err) {
    fprintf(stderr, "bench_mars: %s: %s\n", what, err->msg);
    exit(1);
}

/* The anchor's graph: OPS ops, each but the first with an input from an
 * earlier op, OPS/2 more edges to an op up to 50 later; features one-hot
 * type | 2 SHAPE uniform values. */
static void make_graph(dp_nn_graph *g, float *x, int OPS, dp_rng *rng) {
    int E = OPS - 1 + OPS / 2;
    int *src = xmalloc(sizeof(int) * (size_t)E), *dst = xmalloc(sizeof(int) * (size_t)E);
    memset(x, 0, sizeof(float) * (size_t)OPS * FIN);
    for (int i = 0; i < OPS; i++) {
        x[(size_t)i * FIN + dp_rng_below(rng, TYPES)] = 1.0f;
        for (int s = 0; s < 2 * SHAPE; s++) x[(size_t)i * FIN + TYPES + s] = (float)dp_rng_uniform(rng);
    }
    for (int i = 1; i < OPS; i++) src[i - 1] = (int)dp_rng_below(rng, (uint64_t)i), dst[i - 1] = i;
    for (int e = OPS - 1; e < E; e++) {
        src[e] = (int)dp_rng_below(rng, (uint64_t)(OPS > 1 ? OPS - 1 : 1));
        int d = src[e] + 1 + (int)dp_rng_below(rng, 50);
        dst[e] = d < OPS - 1 ? d : OPS - 1;
    }
    dp_error err;
    if (dp_nn_graph_init(g, OPS, src, dst, E, &err)) die("graph", &err);
    free(src);
    free(dst);
}

/* GFLOP/s of C [M, N] = A [M, K] op(B), best of a few runs */
static double gemm_rate(int M, int N, int K, int tb) {
    float *a = xmalloc(sizeof(float) * (size_t)M * K), *b = xmalloc(sizeof(float) * (size_t)N * K);
    float *c = xmalloc(sizeof(float) * (size_t)M * N);
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; i < (size_t)N * K; i++) b[i] = (float)(i % 5) * 0.1f;
    double best = 1e30, flops = 2.0 * M * N * K;
    int reps = (int)(2e8 / flops) + 1;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int k = 0; k < reps; k++) nn_gemm(0, tb, M, N, K, 1.0f, a, K, b, tb ? K : N, 0.0f, c, N);
        double t = (now() - t0) / reps;
        best = t < best ? t : best;
    }
    free(a), free(b), free(c);
    return flops / best * 1e-9;
}

/* seconds per attention step of one sample: scores over T keys of A
 * (tanh, dot), the softmax */
static double attn_rate(int T, int A) {
    float *act = xmalloc(sizeof(float) * (size_t)T * A), *keys = xmalloc(sizeof(float) * (size_t)T * A);
    float *q = xmalloc(sizeof(float) * A), *v = xmalloc(sizeof(float) * A), *sc = xmalloc(sizeof(float) * T);
    for (size_t i = 0; i < (size_t)T * A; i++) keys[i] = (float)(i % 13) * 0.05f - 0.3f;
    for (int i = 0; i < A; i++) q[i] = 0.01f * i, v[i] = 0.02f;
    const nn_kernels *k = nn_kern_get();
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int i = 0; i < 200; i++) k->attn_score(act, sc, keys, q, v, T, A);
        double t = (now() - t0) / 200;
        best = t < best ? t : best;
    }
    free(act), free(keys), free(q), free(v), free(sc);
    return best;
}

/* GCN forward + backward seconds on an anchor-like graph of N ops */
static double gcn_seconds(int N, int GH, dp_rng *rng) {
    dp_nn_graph g;
    float *x = xmalloc(sizeof(float) * (size_t)N * FIN), *dout = xmalloc(sizeof(float) * (size_t)N * GH);
    make_graph(&g, x, N, rng);
    dp_nn_gcn_config gc = {FIN, GH, 3};
    dp_nn_tensor_spec specs[16];
    int n = dp_nn_gcn_specs(specs, &gc);
    dp_nn_params p;
    dp_nn_gcn gcn;
    dp_error err;
    if (dp_nn_params_init(&p, specs, n, rng, &err) || dp_nn_gcn_init(&gcn, &gc, &p, N, &err)) die("gcn", &err);
    for (size_t i = 0; i < (size_t)N * GH; i++) dout[i] = 1e-3f;
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        dp_nn_gcn_encode(&gcn, &g, x);
        dp_nn_gcn_encode_backward(&gcn, NULL, &g, x, dout);
        double t = now() - t0;
        best = t < best ? t : best;
    }
    dp_nn_gcn_free(&gcn);
    dp_nn_params_free(&p);
    dp_nn_graph_free(&g);
    free(x), free(dout);
    return best;
}

/* the sizes that set a round's FLOPs */
typedef struct sizes_t {
    int seg, H, GH, D, S, epochs, updates;
} sizes_t;

/* FLOPs of one round, counted from the shapes (multiply-add = 2), and the
 * shares of the forward work: decoder products, attention scores, segment
 * encoders (bi-LSTM, keys, P), GCN */
typedef struct flops_t {
    double sample, train_f, train_b, total, pct[4];
} flops_t;

static flops_t round_flops(const sizes_t *z, int ops, double nnz) {
    double nseg = (ops + z->seg - 1) / z->seg, T = z->seg, H = z->H, A = H, G4 = 4.0 * H, E2 = 2.0 * H;
    double gcn = 2.0 * ops * ((double)FIN * z->GH + 2.0 * z->GH * z->GH) + 2.0 * nnz * 3 * z->GH;
    double enc = nseg * (2.0 * 2 * T * (z->GH + H) * G4 + 2.0 * T * E2 * A + 2.0 * T * E2 * G4);
    /* decoder per step and sample: query, att @ P, recurrence, logits;
     * attention: T A tanh and dot */
    double dec = 2.0 * (H * A + T * G4 + H * G4 + H * z->D), attn = 3.0 * T * A;
    double steps = ops, S = z->S, E = z->epochs, U = z->updates;
    flops_t f;
    f.sample = gcn + enc + steps * S * (dec + attn);
    /* training: the forward for S samples per epoch; backward about twice
     * the products (input and weight gradients) and the attention twice
     * (recomputed, then differentiated) */
    f.train_f = E * S * steps * (dec + attn) + U * (gcn + enc);
    f.train_b = 2.0 * f.train_f;
    f.total = f.sample + f.train_f + f.train_b;
    double fwd = f.sample + f.train_f;
    f.pct[0] = 100.0 * steps * S * dec * (1 + E) / fwd;
    f.pct[1] = 100.0 * steps * S * attn * (1 + E) / fwd;
    f.pct[2] = 100.0 * (1 + U) * enc / fwd;
    f.pct[3] = 100.0 * (1 + U) * gcn / fwd;
    return f;
}

/* Prints a round's work (its GFLOP, the forward's shares) and rate, the
 * rates of its hot kernels here, and the round extrapolated to the papers'
 * graphs; med is the round's median seconds on OPS ops (nnz adjacency
 * entries), nseg its segments, csz a minibatch's samples. */
static void report_work(const sizes_t *sz, int OPS, double nnz, int csz, int THREADS, double med, int nseg,
                        dp_rng *rng) {
    int SEG = sz->seg, H = sz->H, GH = sz->GH, S = sz->S, updates = sz->updates;
    flops_t fl = round_flops(sz, OPS, nnz);
    double total = fl.total;
    printf("GFLOP per round: %.1f (sample %.1f, train forward %.1f, train backward %.1f); of the forward work: "
           "decoder products %.0f%%, attention scores %.0f%%, segment encoders %.0f%%, GCN %.0f%%\n",
           total * 1e-9, fl.sample * 1e-9, fl.train_f * 1e-9, fl.train_b * 1e-9, fl.pct[0], fl.pct[1], fl.pct[2],
           fl.pct[3]);
    printf("rate: %.1f GFLOP/s over the round\n", total * 1e-9 / med);

    /* the round's hot kernels on this machine */
    printf("kernel rates (threads=%d): recurrence %dx%dx%d %.1f GFLOP/s, %dx%dx%d %.1f; att@P %dx%dx%d %.1f, "
           "%dx%dx%d %.1f; query %dx%dx%d %.1f; encoder step 1x%dx%d %.1f; attention scores %.2f us/step/sample "
           "(T=%d A=%d)\n",
           THREADS, csz, 4 * H, H, gemm_rate(csz, 4 * H, H, 1), S, 4 * H, H, gemm_rate(S, 4 * H, H, 1), csz, 4 * H,
           SEG, gemm_rate(csz, 4 * H, SEG, 0), S, 4 * H, SEG, gemm_rate(S, 4 * H, SEG, 0), csz, H, H,
           gemm_rate(csz, H, H, 1), 4 * H, H, gemm_rate(1, 4 * H, H, 1), attn_rate(SEG, H) * 1e6, SEG, H);

    /* the paper's sizes: the round's cost per segment (everything but the
     * GCN) times the segments there, plus measured GCN passes
     * (DPLACE_MARS_PAPER=0 skips this, e.g. for profiling the round) */
    const char *pp = getenv("DPLACE_MARS_PAPER");
    double t_gcn_here = gcn_seconds(OPS, GH, rng);
    double per_seg = (med - (1 + updates) * t_gcn_here) / nseg;
    static const struct { const char *name; int ops; } paper[] = {
        {"inception_v3", 21700}, {"gnmt4", 55785}, {"bert_base", 11443}};
    for (int i = 0; i < 3 && !(pp && strcmp(pp, "0") == 0); i++) {
        int n = paper[i].ops, segs = (n + SEG - 1) / SEG;
        double tg = gcn_seconds(n, GH, rng);
        double est = segs * per_seg + (1 + updates) * tg;
        flops_t pf = round_flops(sz, n, nnz / OPS * n); /* anchor-like graphs */
        printf("paper size %-12s %6d ops, %4d segments: %.0f s per round (%.2f s per segment x %d, GCN %d x "
               "%.3f s), extrapolated from this round; %.1f TFLOP per round (forward: decoder products %.0f%%, "
               "attention scores %.0f%%, segment encoders %.0f%%, GCN %.1f%%)\n",
               paper[i].name, n, segs, est, per_seg, segs, 1 + updates, tg, pf.total * 1e-12, pf.pct[0], pf.pct[1],
               pf.pct[2], pf.pct[3]);
    }
}

int main(int argc, char **argv) {
    int a[10] = {256, 128, 512, 256, 5, 20, 3, 4, 1, 2};
    for (int i = 1; i < argc && i <= 10; i++) a[i - 1] = atoi(argv[i]);
    int OPS = a[0], SEG = a[1], H = a[2], GH = a[3], D = a[4], S = a[5], EPOCHS = a[6], MB = a[7];
    int ITERS = a[8], THREADS = a[9];
    if (OPS < 2 || SEG < 1 || H < 1 || GH < 1 || D < 1 || S < 1 || EPOCHS < 1 || MB < 1 || MB > S ||
        ITERS < 1 || THREADS < 1) {
        fprintf(stderr, "usage: bench_mars [OPS SEG HIDDEN GCN_HIDDEN DEVICES SAMPLES EPOCHS MINIBATCHES ITERS THREADS]\n");
        return 2;
    }
    dp_nn_set_threads(THREADS);
    const char *ms = getenv("DPLACE_MARS_MAX_SAVED");
    int max_saved = ms ? atoi(ms) : 0;
    dp_rng rng;
    dp_rng_seed(&rng, 0);
    dp_nn_graph g;
    float *x = xmalloc(sizeof(float) * (size_t)OPS * FIN);
    make_graph(&g, x, OPS, &rng);

    /* the policy: GCN + segment seq2seq in one parameter store */
    dp_nn_mars_config mc = {.gcn = {FIN, GH, 3},
                            .placer = {.in_dim = GH, .hidden = H, .devices = D, .attn_dim = H, .emb_dim = H,
                                       .mode = DP_NN_ATTENTION_MODE_BEFORE, .ctx_to_output = 0,
                                       .tanh_c = 0.0f, .temperature = 1.0f, .shared_input = 1},
                            .seg = SEG};
    dp_nn_tensor_spec specs[32];
    int ns = dp_nn_mars_specs(specs, &mc);
    dp_nn_params p;
    dp_error err;
    if (dp_nn_params_init(&p, specs, ns, &rng, &err)) die("params", &err);
    /* torch.chunk: chunks of ceil(S / MB), the last one what is left */
    int csz = (S + MB - 1) / MB, nchunks = (S + csz - 1) / csz, rem = S - csz * (nchunks - 1);
    dp_nn_mars sampler, trainer, trainer_rem;
    if (dp_nn_mars_init(&sampler, &mc, &p, &g, x, S, 1, &err) ||
        dp_nn_mars_init(&trainer, &mc, &p, &g, x, csz, max_saved, &err) ||
        (rem != csz && dp_nn_mars_init(&trainer_rem, &mc, &p, &g, x, rem, max_saved, &err)))
        die("policy", &err);
    dp_nn_adam adam = dp_nn_adam_default();
    int *acts = xmalloc(sizeof(int) * (size_t)S * OPS), *mb_acts = xmalloc(sizeof(int) * (size_t)csz * OPS);
    int *perm = xmalloc(sizeof(int) * S);
    float *old_lp = xmalloc(sizeof(float) * S), *adv = xmalloc(sizeof(float) * S);
    float *lp = xmalloc(sizeof(float) * S), *ent = xmalloc(sizeof(float) * S);
    float *dlp = xmalloc(sizeof(float) * S), *dent = xmalloc(sizeof(float) * S);
    double *times = xmalloc(sizeof(double) * ITERS), *cpu = xmalloc(sizeof(double) * ITERS);
    enum { PH_SAMPLE, PH_TRAIN_F, PH_TRAIN_B, PH_OPT, PH_COUNT };
    static const char *const ph_name[] = {"sample", "train_fwd", "train_bwd", "clip_adam"};
    _Static_assert(sizeof ph_name / sizeof ph_name[0] == PH_COUNT, "a name per phase");
    double ph[PH_COUNT] = {0}, phc[PH_COUNT] = {0}; /* wall and CPU (all threads) seconds */
    int counted = 0;
    for (int it = 0; it < ITERS; it++) {
        double c0 = cpu_now(), t0 = now(), tph[PH_COUNT] = {0}, cph[PH_COUNT] = {0};
        dp_nn_mars_forward(&sampler, old_lp, NULL, acts, DP_NN_DECODE_MODE_SAMPLE, &rng);
        tph[PH_SAMPLE] = now() - t0;
        cph[PH_SAMPLE] = cpu_now() - c0;
        for (int i = 0; i < S; i++) adv[i] = (float)dp_rng_normal(&rng); /* stand-in advantages */
        for (int ep = 0; ep < EPOCHS; ep++) {
            dp_nn_permutation_sample(perm, &rng, S);
            for (int c = 0; c < nchunks; c++) {
                int n = c == nchunks - 1 ? rem : csz;
                const int *idx = perm + c * csz;
                dp_nn_mars *pol = n == csz ? &trainer : &trainer_rem;
                for (int b = 0; b < n; b++)
                    memcpy(mb_acts + (size_t)b * OPS, acts + (size_t)idx[b] * OPS, sizeof(int) * OPS);
                double t1 = now(), c1 = cpu_now();
                dp_nn_mars_forward(pol, lp, ent, mb_acts, DP_NN_DECODE_MODE_TEACHER, NULL);
                double t2 = now(), c2 = cpu_now();
                /* loss = -(mean_b min(r A, clamp(r, 0.8, 1.2) A) + 0.001 mean_b entropy) */
                for (int b = 0; b < n; b++) {
                    float A = adv[idx[b]], r = expf(lp[b] - old_lp[idx[b]]);
                    float rc = r < 0.8f ? 0.8f : r > 1.2f ? 1.2f : r;
                    int unclipped = r * A <= rc * A; /* torch.min picks r A (or both, tied) */
                    dlp[b] = unclipped ? -A * r / (float)n : 0.0f;
                    dent[b] = -0.001f / (float)n;
                }
                dp_nn_params_zero_grad(&p);
                dp_nn_mars_backward(pol, dlp, NULL, dent, mb_acts);
                double t3 = now(), c3 = cpu_now();
                dp_nn_grad_clip(&p, 1.0);
                dp_nn_adam_update(&p, &adam, 3e-4f);
                double t4 = now(), c4 = cpu_now();
                tph[PH_TRAIN_F] += t2 - t1, cph[PH_TRAIN_F] += c2 - c1;
                tph[PH_TRAIN_B] += t3 - t2, cph[PH_TRAIN_B] += c3 - c2;
                tph[PH_OPT] += t4 - t3, cph[PH_OPT] += c4 - c3;
            }
        }
        times[it] = now() - t0;
        cpu[it] = cpu_now() - c0;
        printf("round %d: %.3f s\n", it, times[it]);
        fflush(stdout);
        if (it > 0 || ITERS < 3) {
            for (int k = 0; k < PH_COUNT; k++) ph[k] += tph[k], phc[k] += cph[k];
            counted++;
        }
    }
    int skip = ITERS < 3 ? 0 : 1;
    double med = median(times + skip, ITERS - skip), cmed = median(cpu + skip, ITERS - skip);
    printf("ops=%d seg=%d hidden=%d gcn_hidden=%d devices=%d samples=%d epochs=%d minibatches=%d threads=%d "
           "median_s=%.4f\n", OPS, SEG, H, GH, D, S, EPOCHS, MB, THREADS, med);
    printf("median cpu_s=%.4f (all threads) kernels=%s params=%zu max_saved=%d (of %d segments)\n", cmed,
           nn_kern_get()->name, p.count, trainer.seg.slots, trainer.seg.nseg);
    printf("phases (mean s per round, wall/cpu):");
    for (int k = 0; k < PH_COUNT; k++) printf(" %s=%.3f/%.3f", ph_name[k], ph[k] / counted, phc[k] / counted);
    printf("\n");

    int updates = EPOCHS * nchunks;
    sizes_t sz = {SEG, H, GH, D, S, EPOCHS, updates};
    report_work(&sz, OPS, (double)g.nnz, csz, THREADS, med, trainer.seg.nseg, &rng);
    dp_nn_mars_free(&sampler);
    dp_nn_mars_free(&trainer);
    if (rem != csz) dp_nn_mars_free(&trainer_rem);
    dp_nn_params_free(&p);
    dp_nn_graph_free(&g);
    free(x), free(acts), free(mb_acts), free(perm), free(old_lp), free(adv), free(lp), free(ent), free(dlp);
    free(dent), free(times), free(cpu);
    return 0;
}
