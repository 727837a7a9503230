/* bench_policy: one Hierarchical Planner policy update, the same work as
 * ../shared/anchors/torch_hp_policy.py (read that header): a feed-forward
 * grouper samples a group per op, group embeddings are built from op-type
 * counts, summed output shapes and group adjacency, a bidirectional-LSTM
 * encoder and an attention LSTM decoder sample one device per group for K
 * samples, REINFORCE loss with a mean baseline on a stand-in reward,
 * backward, global-norm clip 1.0, Adam lr 0.1. Prints the median seconds per
 * update (the first update is not counted) and the CPU seconds, the time
 * per phase, and the machine's sgemm rate (OpenBLAS and the engine's own
 * nn_gemm) for comparison. DPLACE_NN_ISA=base|avx2|avx512 forces a kernel set,
 * DPLACE_NN_SUBNORMALS=1 turns off the flushing of subnormal floats.
 *
 * usage: bench_policy [OPS GROUPS HIDDEN DEVICES K ITERS THREADS]
 *        defaults: 24713 256 256 5 4 5 2 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "dplace/nn.h"
#include "dplace/nn_models.h"
#include "nn/nn_internal.h"
#include "nn/nn_kern.h"

enum { TYPES = 200, SHAPE = 16, FIN = 20 + 24 + 12 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process (all threads) */
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
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "bench_policy: out of memory\n");
        exit(2);
    }
    return p;
}

/* GFLOP/s of C [M, N] = A [M, K] B [K, N]^T, best of a few runs, with
 * OpenBLAS (own = 0) or the engine's nn_gemm (own = 1) */
static double sgemm_rate(int M, int N, int K, int own) {
    float *a = xmalloc(sizeof(float) * (size_t)M * K), *b = xmalloc(sizeof(float) * (size_t)N * K);
    float *c = xmalloc(sizeof(float) * (size_t)M * N);
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; i < (size_t)N * K; i++) b[i] = (float)(i % 5) * 0.1f;
    double best = 1e30;
    int reps = M < 64 ? 200 : 3;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int k = 0; k < reps; k++) {
            if (own) nn_gemm(0, 1, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
            else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
        }
        double t = (now() - t0) / reps;
        best = t < best ? t : best;
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * M * N * K / best * 1e-9;
}

/* DPLACE_NN_ISA=base|avx2|avx512 runs a narrower kernel set (comparisons):
 * 0, or 2 after a message when it names none supported here. */
static int force_isa(void) {
    const char *isa = getenv("DPLACE_NN_ISA");
    if (!isa) return 0;
    static const char *const names[NN_ISA_COUNT] = {"base", "avx2", "avx512"};
    int i = 0;
    while (i < NN_ISA_COUNT && strcmp(isa, names[i]) != 0) i++;
    if (i == NN_ISA_COUNT || i > (int)nn_kern_best_isa()) {
        fprintf(stderr, "bench_policy: DPLACE_NN_ISA=%s is not base, avx2 or avx512 supported here\n", isa);
        return 2;
    }
    nn_kern_force((nn_isa)i);
    return 0;
}

/* Fills the graph of OPS ops: each op's type and shape, the E edges src ->
 * dst (a chain, then forward edges of up to 50 ops), the input features x. */
static void make_graph(int OPS, int E, int *op_type, float *op_shape, int *src, int *dst, float *x, dp_rng *rng) {
    for (int i = 0; i < OPS; i++) op_type[i] = (int)dp_rng_below(rng, TYPES);
    for (size_t i = 0; i < (size_t)OPS * SHAPE; i++) op_shape[i] = (float)dp_rng_uniform(rng);
    for (int i = 1; i < OPS; i++) src[i - 1] = (int)dp_rng_below(rng, (uint64_t)i), dst[i - 1] = i;
    for (int e = OPS - 1; e < E; e++) {
        src[e] = (int)dp_rng_below(rng, (uint64_t)OPS - 1);
        int d = src[e] + 1 + (int)dp_rng_below(rng, 50);
        dst[e] = d < OPS - 1 ? d : OPS - 1;
    }
    for (size_t i = 0; i < (size_t)OPS * FIN; i++) x[i] = (float)dp_rng_normal(rng);
}

int main(int argc, char **argv) {
    int def[7] = {24713, 256, 256, 5, 4, 5, 2};
    for (int i = 1; i < argc && i <= 7; i++) def[i - 1] = atoi(argv[i]);
    int OPS = def[0], G = def[1], H = def[2], D = def[3], K = def[4], ITERS = def[5], THREADS = def[6];
    if (OPS < 2 || G < 1 || H < 1 || D < 1 || K < 1 || ITERS < 1 || THREADS < 1) {
        fprintf(stderr, "usage: bench_policy [OPS GROUPS HIDDEN DEVICES K ITERS THREADS]\n");
        return 2;
    }
    dp_nn_set_threads(THREADS);
    /* DPLACE_NN_SUBNORMALS=1 keeps IEEE subnormals (no FTZ/DAZ), for comparison */
    if (getenv("DPLACE_NN_SUBNORMALS")) dp_nn_set_flush_denormals(0);
    if (force_isa()) return 2;
    dp_rng rng;
    dp_rng_seed(&rng, 0);

    /* a fixed random training-like graph, as in the anchor */
    int *op_type = xmalloc(sizeof(int) * OPS);
    float *op_shape = xmalloc(sizeof(float) * (size_t)OPS * SHAPE);
    int E = OPS - 1 + OPS / 2;
    int *src = xmalloc(sizeof(int) * E), *dst = xmalloc(sizeof(int) * E);
    float *x = xmalloc(sizeof(float) * (size_t)OPS * FIN);
    make_graph(OPS, E, op_type, op_shape, src, dst, x, &rng);

    /* the agent: grouper + placer in one parameter store */
    int GF = TYPES + SHAPE + G;
    dp_nn_grouper_config gc = {FIN, 64, G, 0.0f, 1.0f};
    dp_nn_seq2seq_config sc = {GF, H, D, H, H, DP_NN_ATTENTION_MODE_BEFORE, 1, 5.0f, 10.0f, 0, 0.0f, 0};
    dp_nn_tensor_spec specs[16];
    int ns = dp_nn_grouper_specs(specs, &gc);
    ns += dp_nn_seq2seq_specs(specs + ns, &sc);
    dp_nn_params p;
    dp_nn_grouper grouper;
    dp_nn_seq2seq placer;
    dp_error err;
    if (dp_nn_params_init(&p, specs, ns, &rng, &err) || dp_nn_grouper_init(&grouper, &gc, &p, OPS, &err) ||
        dp_nn_seq2seq_init(&placer, &sc, &p, K, G, &err)) {
        fprintf(stderr, "bench_policy: %s\n", err.msg);
        return 1;
    }
    dp_nn_adam adam = dp_nn_adam_default();
    int *groups = xmalloc(sizeof(int) * OPS), *devices = xmalloc(sizeof(int) * (size_t)K * G);
    float *counts = xmalloc(sizeof(float) * (size_t)G * TYPES);
    float *shapes = xmalloc(sizeof(float) * (size_t)G * SHAPE);
    float *adj = xmalloc(sizeof(float) * (size_t)G * G);
    float *ge = xmalloc(sizeof(float) * (size_t)K * G * GF);
    float *logp_d = xmalloc(sizeof(float) * K), *adv = xmalloc(sizeof(float) * K);
    float *dlogp_d = xmalloc(sizeof(float) * K);
    double *times = xmalloc(sizeof(double) * ITERS), *cpu = xmalloc(sizeof(double) * ITERS);
    enum { PH_GROUPER, PH_EMBED, PH_PLACER_F, PH_PLACER_B, PH_GROUPER_B, PH_OPT, PH_COUNT };
    static const char *const ph_name[] = {"grouper_fwd", "group_embed", "placer_fwd",
                                          "placer_bwd", "grouper_bwd", "clip_adam"};
    _Static_assert(sizeof ph_name / sizeof ph_name[0] == PH_COUNT, "a name per phase");
    double ph[PH_COUNT] = {0};
    for (int it = 0; it < ITERS; it++) {
        double c0 = cpu_now(), t0 = now(), tp[PH_COUNT + 1];
        tp[0] = t0;
        float logp_g = dp_nn_grouper_forward(&grouper, groups, NULL, x, DP_NN_DECODE_MODE_SAMPLE,
                                             &rng, 0.0f, OPS);
        tp[1] = now();
        dp_nn_group_histogram_forward(counts, groups, op_type, OPS, G, TYPES);
        dp_nn_group_sum_forward(shapes, op_shape, groups, OPS, SHAPE, G);
        dp_nn_group_adjacency_forward(adj, groups, src, dst, E, G);
        const float *parts[3] = {counts, shapes, adj};
        const int widths[3] = {TYPES, SHAPE, G};
        dp_nn_concat_forward(ge, parts, widths, 3, G);
        for (int k = 1; k < K; k++) memcpy(ge + (size_t)k * G * GF, ge, sizeof(float) * (size_t)G * GF);
        tp[2] = now();
        dp_nn_seq2seq_forward(&placer, logp_d, NULL, devices, ge, NULL, NULL, DP_NN_DECODE_MODE_SAMPLE,
                              &rng, 0.0f);
        tp[3] = now();
        /* stand-in reward -sqrt(step time); loss = -(logp_g * mean adv) - mean(logp_d * adv) */
        double mean = 0.0;
        for (int k = 0; k < K; k++) adv[k] = -(float)sqrt(dp_rng_uniform(&rng)), mean += adv[k];
        mean /= K;
        double adv_mean = 0.0;
        for (int k = 0; k < K; k++) adv[k] -= (float)mean, adv_mean += adv[k];
        adv_mean /= K;
        for (int k = 0; k < K; k++) dlogp_d[k] = -adv[k] / (float)K;
        dp_nn_params_zero_grad(&p);
        dp_nn_seq2seq_backward(&placer, NULL, dlogp_d, NULL, devices, ge);
        tp[4] = now();
        dp_nn_grouper_backward(&grouper, NULL, groups, x, -(float)adv_mean, 0.0f, OPS);
        tp[5] = now();
        dp_nn_grad_clip(&p, 1.0);
        dp_nn_adam_update(&p, &adam, 0.1f);
        tp[6] = now();
        (void)logp_g;
        times[it] = tp[6] - t0;
        cpu[it] = cpu_now() - c0;
        if (it > 0 || ITERS == 1)
            for (int k = 0; k < PH_COUNT; k++) ph[k] += tp[k + 1] - tp[k];
    }
    int counted = ITERS > 1 ? ITERS - 1 : 1;
    double med = median(ITERS > 1 ? times + 1 : times, counted);
    double cmed = median(ITERS > 1 ? cpu + 1 : cpu, counted);
    printf("bench_policy ops=%d groups=%d hidden=%d devices=%d k=%d threads=%d median_s=%.4f\n", OPS, G,
           H, D, K, THREADS, med);
    printf("median cpu_s=%.4f (all threads) kernels=%s subnormals=%s\n", cmed, nn_kern_get()->name,
           getenv("DPLACE_NN_SUBNORMALS") ? "kept" : "flushed");
    printf("phases (mean s):");
    for (int k = 0; k < PH_COUNT; k++) printf(" %s=%.4f", ph_name[k], ph[k] / counted);
    printf("\nparams=%zu\n", p.count);
    for (int own = 0; own < 2; own++)
        printf("%s GFLOP/s (threads=%d): 1024x1024x1024 %.1f, %dx%dx%d %.1f, %dx%dx%d %.1f\n",
               own ? "nn_gemm" : "OpenBLAS sgemm", THREADS, sgemm_rate(1024, 1024, 1024, own), K, 4 * H,
               3 * H, sgemm_rate(K, 4 * H, 3 * H, own), K * G, 4 * H, GF, sgemm_rate(K * G, 4 * H, GF, own));
    dp_nn_grouper_free(&grouper);
    dp_nn_seq2seq_free(&placer);
    dp_nn_params_free(&p);
    free(op_type), free(op_shape), free(src), free(dst), free(x), free(groups), free(devices);
    free(counts), free(shapes), free(adj), free(ge), free(logp_d), free(adv), free(dlogp_d), free(times);
    free(cpu);
    return 0;
}
