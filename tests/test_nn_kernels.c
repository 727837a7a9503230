/* The nn engine's vector kernels (src/nn/nn_kern_impl.h) against plain
 * double-precision references, for every ISA path this CPU can run (base =
 * OpenBLAS products, AVX2, AVX-512): matrix products of every transpose,
 * few-row and packed shapes with edge tiles, leading dimensions, alpha and
 * beta (beta = 0 must not read C), one and two threads, few-row products
 * row by row the same bits as in one product; the attention score
 * kernel and its backward, dot and axpy. A failure prints the ISA, the case,
 * the element and both values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/nn.h"
#include "nn/nn_kern.h"
#include "nn/nn_internal.h"
#include "test_util.h"

static dp_rng g_rng;
static double g_worst;

static float *frand(size_t n) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    CHECK(p != NULL);
    for (size_t i = 0; i < n; i++) p[i] = (float)(2.0 * dp_rng_uniform(&g_rng) - 1.0);
    return p;
}

/* |got - want| <= tol * scale, else print both and fail */
static void check_close(const char *isa, const char *what, long idx, double got, double want,
                        double scale, double tol) {
    double err = fabs(got - want) / (scale > 1e-30 ? scale : 1e-30);
    if (err > g_worst) g_worst = err;
    if (!(fabs(got - want) <= tol * scale)) {
        fprintf(stderr, "FAIL isa=%s %s element %ld: kernel %.9g reference %.9g (|diff| %.3g > %.3g)\n",
                isa, what, idx, got, want, fabs(got - want), tol * scale);
        exit(1);
    }
}

/* one product through nn_gemm against the double reference */
static void gemm_case(const char *isa, int ta, int tb, int M, int N, int K, float alpha, float beta,
                      int pad) {
    int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
    int arows = ta ? K : M, brows = tb ? N : K;
    float *A = frand((size_t)arows * lda), *B = frand((size_t)brows * ldb);
    float *C = frand((size_t)M * ldc), *C0 = malloc(sizeof(float) * (size_t)M * ldc);
    CHECK(C0 != NULL);
    if (beta == 0.0f)
        for (size_t i = 0; i < (size_t)M * ldc; i++) C[i] = NAN; /* must not be read */
    memcpy(C0, C, sizeof(float) * (size_t)M * ldc);
    nn_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    char what[128];
    snprintf(what, sizeof what, "gemm ta=%d tb=%d M=%d N=%d K=%d alpha=%g beta=%g pad=%d", ta, tb, M,
             N, K, alpha, beta, pad);
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double s = 0.0, mag = 0.0;
            for (int k = 0; k < K; k++) {
                double a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                double b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                s += a * b;
                mag += fabs(a * b);
            }
            double want = alpha * s, scale = fabs(alpha) * mag + 1e-3;
            if (beta != 0.0f) {
                want += beta * C0[(size_t)i * ldc + j];
                scale += fabs(beta * C0[(size_t)i * ldc + j]);
            }
            check_close(isa, what, (long)i * N + j, C[(size_t)i * ldc + j], want, scale, 2e-6);
        }
        for (int j = N; j < ldc; j++) /* padding untouched */
            if (memcmp(&C[(size_t)i * ldc + j], &C0[(size_t)i * ldc + j], sizeof(float))) {
                fprintf(stderr, "FAIL isa=%s %s: wrote the padding at row %d column %d\n", isa, what,
                        i, j);
                exit(1);
            }
    }
    free(A), free(B), free(C), free(C0);
}

/* A few-row product's rows are each computed alone: the same bits whether
 * they come in one product of M rows or one row at a time (a decoder splits
 * its samples over threads, so a run must not depend on how many rows each
 * thread gets). */
static void skinny_rows_case(const char *isa, int ta, int tb, int M, int N, int K) {
    int lda = ta ? M : K, ldb = tb ? K : N, arows = ta ? K : M, brows = tb ? N : K;
    float *A = frand((size_t)arows * lda), *B = frand((size_t)brows * ldb);
    float *C = frand((size_t)M * N), *C1 = malloc(sizeof(float) * (size_t)M * N);
    CHECK(C1 != NULL);
    memcpy(C1, C, sizeof(float) * (size_t)M * N);
    nn_gemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 1.0f, C, N);
    for (int i = 0; i < M; i++)
        nn_gemm(ta, tb, 1, N, K, 1.0f, ta ? A + i : A + (size_t)i * lda, lda, B, ldb, 1.0f, C1 + (size_t)i * N, N);
    for (long e = 0; e < (long)M * N; e++)
        if (memcmp(&C[e], &C1[e], sizeof(float))) {
            fprintf(stderr, "FAIL isa=%s skinny rows ta=%d tb=%d M=%d N=%d K=%d element %ld: %.9g in one product, %.9g "
                    "row by row\n", isa, ta, tb, M, N, K, e, C[e], C1[e]);
            exit(1);
        }
    free(A), free(B), free(C), free(C1);
}

/* Products of every transpose through nn_gemm against the double
 * reference: few-row and packed shapes, leading dimensions, alpha and beta,
 * one and two threads, K = 0. */
static void check_gemm(const char *isa) {
    /* few-row (skinny) shapes, including the decoder's and tails of every
     * vector width */
    static const int skinny[][3] = {{1, 1, 1},    {4, 1040, 300}, {4, 256, 1024}, {4, 5, 768},
                                    {4, 768, 5},  {3, 37, 19},    {1, 70, 33},    {2, 129, 17},
                                    {8, 100, 40}, {5, 768, 64},   {7, 3, 200},    {6, 16, 16}};
    /* packed shapes: edge tiles in M and N, K across several KC blocks, M
     * across MC blocks, N across NC blocks */
    static const int packed[][3] = {{9, 5, 3},      {13, 33, 17},  {25, 70, 300},
                                    {100, 65, 257}, {130, 600, 40}, {150, 64, 600},
                                    {97, 31, 513}};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            for (size_t s = 0; s < sizeof skinny / sizeof skinny[0]; s++)
                gemm_case(isa, ta, tb, skinny[s][0], skinny[s][1], skinny[s][2], 1.0f,
                          s % 3 == 0 ? 0.0f : 1.0f, (int)(s % 2) * 3);
            for (size_t s = 0; s < sizeof packed / sizeof packed[0]; s++)
                gemm_case(isa, ta, tb, packed[s][0], packed[s][1], packed[s][2], s % 2 ? 0.5f : 1.0f,
                          s % 3 == 0 ? 0.0f : (s % 3 == 1 ? 1.0f : -0.5f), (int)(s % 2) * 5);
        }
    /* large enough for the thread pool, split by rows and by columns */
    dp_nn_set_threads(2);
    gemm_case(isa, 0, 1, 200, 150, 100, 1.0f, 0.0f, 0);
    gemm_case(isa, 1, 0, 60, 400, 100, 1.0f, 1.0f, 1);
    gemm_case(isa, 1, 1, 233, 129, 99, 1.0f, 1.0f, 2);
    dp_nn_set_threads(1);
    gemm_case(isa, 0, 0, 200, 150, 100, 1.0f, 1.0f, 0);
    /* K = 0: C = beta C */
    float c[3] = {1.0f, NAN, 3.0f};
    nn_gemm(0, 0, 1, 3, 0, 1.0f, c, 1, c, 1, 0.0f, c, 3);
    CHECK(c[0] == 0.0f && c[1] == 0.0f && c[2] == 0.0f);
}

/* Few-row products row by row give the bits of one product, for every
 * transpose but (T, T) and for 2 to 8 rows (OpenBLAS, the base path, makes
 * no such promise). */
static void check_gemm_rows_alone(const char *isa) {
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            if (!(ta && tb))
                for (int M = 2; M <= 8; M++) skinny_rows_case(isa, ta, tb, M, 75, 131);
}

/* The attention score kernel and its backward against the double
 * reference; a score is the dot of its row, the same float. */
static void check_attention_kernels(const char *isa) {
    const nn_kernels *k = nn_kern_get();
    enum { T = 37, A = 83 };
    float *keys = frand((size_t)T * A), *q = frand(A), *v = frand(A), *ds = frand(T);
    float *act = malloc(sizeof(float) * T * A), *score = malloc(sizeof(float) * T);
    float *dk = frand((size_t)T * A), *dk0 = malloc(sizeof(float) * T * A);
    float *dq = frand(A), *dq0 = malloc(sizeof(float) * A), *dv = frand(A), *dv0 = malloc(sizeof(float) * A);
    CHECK(act && score && dk0 && dq0 && dv0);
    memcpy(dk0, dk, sizeof(float) * T * A);
    memcpy(dq0, dq, sizeof(float) * A);
    memcpy(dv0, dv, sizeof(float) * A);
    k->attn_score(act, score, keys, q, v, T, A);
    for (int j = 0; j < T; j++) {
        double s = 0.0, mag = 0.0;
        for (int m = 0; m < A; m++) {
            double a = tanh((double)keys[j * A + m] + q[m]);
            check_close(isa, "attn_score act", j * A + m, act[j * A + m], a, 1.0, 5e-7);
            s += a * v[m];
            mag += fabs(a * v[m]);
        }
        check_close(isa, "attn_score score", j, score[j], s, mag + 1e-3, 2e-6);
        /* rows scored VW at a time sum in dot's order: the same float */
        check_close(isa, "attn_score score against the dot of its row", j, score[j], k->dot(act + (size_t)j * A, v, A),
                    1.0, 0.0);
    }
    k->attn_score_backward(dk, dq, dv, ds, act, v, T, A);
    for (int m = 0; m < A; m++) {
        double sq = dq0[m], sv = dv0[m], mq = fabs(dq0[m]), mv = fabs(dv0[m]);
        for (int j = 0; j < T; j++) {
            double a = act[j * A + m], g = (double)ds[j] * v[m] * (1.0 - a * a);
            check_close(isa, "attn_score_backward dk", j * A + m, dk[j * A + m], dk0[j * A + m] + g,
                        fabs(dk0[j * A + m]) + fabs(g) + 1e-3, 1e-6);
            sq += g, mq += fabs(g);
            sv += (double)ds[j] * a, mv += fabs((double)ds[j] * a);
        }
        check_close(isa, "attn_score_backward dq", m, dq[m], sq, mq + 1e-3, 2e-6);
        check_close(isa, "attn_score_backward dv", m, dv[m], sv, mv + 1e-3, 2e-6);
    }
    free(keys), free(q), free(v), free(ds), free(act), free(score), free(dk), free(dk0);
    free(dq), free(dq0), free(dv), free(dv0);
}

/* dot and axpy against the double reference. */
static void check_dot_axpy(const char *isa) {
    const nn_kernels *k = nn_kern_get();
    enum { A = 83 };
    float *q = frand(A), *v = frand(A), *dq = frand(A), *dq0 = malloc(sizeof(float) * A);
    CHECK(dq0);
    double s = 0.0, mag = 0.0;
    for (int m = 0; m < A; m++) s += (double)q[m] * v[m], mag += fabs((double)q[m] * v[m]);
    check_close(isa, "dot", 0, k->dot(q, v, A), s, mag, 2e-6);
    memcpy(dq0, dq, sizeof(float) * A);
    k->axpy(dq, 0.75f, v, A);
    for (int m = 0; m < A; m++)
        check_close(isa, "axpy", m, dq[m], dq0[m] + 0.75 * v[m], fabs(dq0[m]) + 1.0, 1e-6);
    free(q), free(v), free(dq), free(dq0);
}

/* One check of the kernels of one ISA path, or a skip when this CPU cannot
 * run it. */
static void run_isa(nn_isa isa, void (*check)(const char *)) {
    static const char *const names[NN_ISA_COUNT] = {"base", "avx2", "avx512"};
    nn_isa best = nn_kern_best_isa();
    if (isa > best) {
        char why[64];
        snprintf(why, sizeof why, "%s kernels: not supported by this CPU", names[isa]);
        test_skip(why);
        return;
    }
    TEST_CASE("isa %s", names[isa]);
    dp_rng_seed(&g_rng, 7);
    g_worst = 0.0;
    nn_kern_force(isa);
    CHECK(strcmp(nn_kern_get()->name, names[isa]) == 0);
    check(names[isa]);
    printf("%s kernels: largest error / tolerance scale %.2g\n", names[isa], g_worst);
    nn_kern_force(best);
}

/* Matrix products against the reference, per ISA path. */
static void test_gemm_base(void) { run_isa(NN_ISA_BASE, check_gemm); }
static void test_gemm_avx2(void) { run_isa(NN_ISA_AVX2, check_gemm); }
static void test_gemm_avx512(void) { run_isa(NN_ISA_AVX512, check_gemm); }
/* Few-row products row by row, the bits of one product, per ISA path. */
static void test_gemm_rows_alone_avx2(void) { run_isa(NN_ISA_AVX2, check_gemm_rows_alone); }
static void test_gemm_rows_alone_avx512(void) { run_isa(NN_ISA_AVX512, check_gemm_rows_alone); }
/* The attention score kernel and its backward, per ISA path. */
static void test_attention_kernels_base(void) { run_isa(NN_ISA_BASE, check_attention_kernels); }
static void test_attention_kernels_avx2(void) { run_isa(NN_ISA_AVX2, check_attention_kernels); }
static void test_attention_kernels_avx512(void) { run_isa(NN_ISA_AVX512, check_attention_kernels); }
/* dot and axpy, per ISA path. */
static void test_vector_ops_base(void) { run_isa(NN_ISA_BASE, check_dot_axpy); }
static void test_vector_ops_avx2(void) { run_isa(NN_ISA_AVX2, check_dot_axpy); }
static void test_vector_ops_avx512(void) { run_isa(NN_ISA_AVX512, check_dot_axpy); }

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_gemm_base);
    TEST_RUN(test_gemm_avx2);
    TEST_RUN(test_gemm_avx512);
    TEST_RUN(test_gemm_rows_alone_avx2);
    TEST_RUN(test_gemm_rows_alone_avx512);
    TEST_RUN(test_attention_kernels_base);
    TEST_RUN(test_attention_kernels_avx2);
    TEST_RUN(test_attention_kernels_avx512);
    TEST_RUN(test_vector_ops_base);
    TEST_RUN(test_vector_ops_avx2);
    TEST_RUN(test_vector_ops_avx512);
    return test_end();
}
