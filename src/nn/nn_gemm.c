/* Matrix products of the nn engine: one place where every dense product
 * goes, so the kernel choice by shape and ISA is made once.
 *
 * With AVX2 or AVX-512 (checked at run time) the products are the engine's
 * own kernels (nn_kern_impl.h): few-row products such as a decoder step's
 * [4, 768] x [768, 1024] stream the weights once without packing, larger
 * ones use a packed register-tile kernel, split over the thread pool when
 * they are big enough. Otherwise OpenBLAS does them (it also uses its own
 * threads). */
#include <stdatomic.h>
#include <stddef.h>

#include "nn_internal.h"
#include "nn_kern.h"

/* ---- ISA choice ------------------------------------------------------------- */

static const nn_kernels *const kernel_table[NN_ISA_COUNT] = {
    &nn_kernels_base,
#ifdef NN_HAVE_X86_KERNELS
    &nn_kernels_avx2,
    &nn_kernels_avx512,
#else
    &nn_kernels_base,
    &nn_kernels_base,
#endif
};

static atomic_int active_isa = -1;

nn_isa nn_kern_best_isa(void) {
#ifdef NN_HAVE_X86_KERNELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return NN_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return NN_ISA_AVX2;
#endif
    return NN_ISA_BASE;
}

const nn_kernels *nn_kern_get(void) {
    int isa = atomic_load_explicit(&active_isa, memory_order_relaxed);
    if (isa < 0) {
        isa = (int)nn_kern_best_isa();
        atomic_store(&active_isa, isa);
    }
    return kernel_table[isa];
}

nn_isa nn_kern_force(nn_isa isa) {
    (void)nn_kern_get();
    return (nn_isa)atomic_exchange(&active_isa, (int)isa);
}

/* ---- products ------------------------------------------------------------- */

/* Products of at least this many flops are split over the pool's threads
 * (a job costs a few microseconds to hand out). */
#define NN_GEMM_PAR_FLOPS 4e6

typedef struct gemm_job {
    const nn_kernels *k;
    int ta, tb, M, N, K, split_m;
    float alpha, beta;
    const float *A, *B;
    float *C;
    int lda, ldb, ldc;
} gemm_job;

/* Rows (split_m) or columns of C for thread tid of nt, in multiples of 48
 * rows or 64 columns (whole register tiles of every ISA). */
static void gemm_part(void *ctx, int tid, int nt) {
    const gemm_job *j = ctx;
    int total = j->split_m ? j->M : j->N, unit = j->split_m ? 48 : 64;
    int units = (total + unit - 1) / unit;
    int u0 = (int)((long)units * tid / nt), u1 = (int)((long)units * (tid + 1) / nt);
    int lo = u0 * unit, hi = u1 * unit < total ? u1 * unit : total;
    if (lo >= hi) return;
    if (j->split_m) {
        const float *A = j->ta ? j->A + lo : j->A + (size_t)lo * j->lda;
        j->k->gemm(j->ta, j->tb, hi - lo, j->N, j->K, j->alpha, A, j->lda, j->B, j->ldb, j->beta,
                   j->C + (size_t)lo * j->ldc, j->ldc);
    } else {
        const float *B = j->tb ? j->B + (size_t)lo * j->ldb : j->B + lo;
        j->k->gemm(j->ta, j->tb, j->M, hi - lo, j->K, j->alpha, j->A, j->lda, B, j->ldb, j->beta,
                   j->C + lo, j->ldc);
    }
}

/* C [M, N] = alpha op(A) op(B) + beta C, all row-major; ta/tb: transpose.
 * beta == 0: C is not read. */
void nn_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
             const float *B, int ldb, float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (beta != 1.0f)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    float *c = C + (size_t)i * ldc + j;
                    *c = beta != 0.0f ? beta * *c : 0.0f;
                }
        return;
    }
    const nn_kernels *k = nn_kern_get();
    if (M <= NN_SKINNY_M && !(ta && tb)) {
        k->gemm_skinny(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    int nt = nn_pool_threads();
    double flops = 2.0 * M * N * K;
    if (k == &nn_kernels_base || nt <= 1 || flops < NN_GEMM_PAR_FLOPS) {
        k->gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    gemm_job j = {k, ta, tb, M, N, K, M >= N, alpha, beta, A, B, C, lda, ldb, ldc};
    int units = j.split_m ? (M + 47) / 48 : (N + 63) / 64;
    nn_parallel(units < nt ? units : nt, gemm_part, &j);
}
