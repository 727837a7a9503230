/* Vector kernels of the nn engine with run-time ISA dispatch, and the
 * engine's thread pool.
 *
 * nn_kern_impl.h holds the kernels once, written with GCC vector extensions
 * for a vector of NN_VW floats; nn_kern_avx512.c (16 floats, compiled with
 * -mavx512f -mfma), nn_kern_avx2.c (8 floats, -mavx2 -mfma) and
 * nn_kern_base.c (4 floats, the compiler's baseline ISA) each compile it
 * into one nn_kernels table. nn_kern_get() picks the widest table the CPU
 * supports (__builtin_cpu_supports) once; the base table's matrix products
 * are OpenBLAS's. All kernels are single-threaded; nn_gemm (nn_gemm.c)
 * splits large products over the pool (nn_pool.c). */
#ifndef DPLACE_NN_KERN_H
#define DPLACE_NN_KERN_H

#include <stddef.h>

typedef enum nn_isa {
    NN_ISA_BASE = 0, /* baseline (SSE2 on x86-64): OpenBLAS for products */
    NN_ISA_AVX2,     /* AVX2 + FMA, 8 floats per vector                  */
    NN_ISA_AVX512,   /* AVX-512F + FMA, 16 floats per vector             */
    NN_ISA_COUNT
} nn_isa;

typedef struct nn_kernels {
    const char *name;
    /* C [M, N] = alpha op(A) [M, K] op(B) [K, N] + beta C, row-major, ta/tb
     * transpose. beta == 0: C is not read. Packed (Goto-style) blocking with
     * a register-tile micro-kernel; any shape. */
    void (*gemm)(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);
    /* The same product for few rows (M <= NN_SKINNY_M), without packing:
     * op(B) is streamed once for all M rows. Needs ta == 0 when tb == 1. */
    void (*gemm_skinny)(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                        const float *B, int ldb, float beta, float *C, int ldc);
    /* Scores of additive attention for one query: act [T, A] = tanh(keys
     * [T, A] + q [A]); score [T] = act v [A]. */
    void (*attn_score)(float *act, float *score, const float *keys, const float *q,
                       const float *v, int T, int A);
    /* y [n] += a x [n] */
    void (*axpy)(float *y, float a, const float *x, int n);
    /* returns x [n] . y [n] */
    float (*dot)(const float *x, const float *y, int n);
    /* Backward of attn_score with score gradient ds [T]: dk [T, A] += ds_j
     * v (1 - act_j^2), dq [A] += the column sums of that, dv [A] += sum_j
     * ds_j act_j; dk and dv may be NULL. */
    void (*attn_score_backward)(float *dk, float *dq, float *dv, const float *ds,
                                const float *act, const float *v, int T, int A);
    /* returns the sum of exp(x [n] - shift) (nn_exp) */
    float (*sum_exp)(const float *x, float shift, int n);
} nn_kernels;

/* Rows up to which nn_gemm uses gemm_skinny. */
#define NN_SKINNY_M 8

extern const nn_kernels nn_kernels_base, nn_kernels_avx2, nn_kernels_avx512;

/* The kernels in use (the widest the CPU supports, unless forced). */
const nn_kernels *nn_kern_get(void);
/* The widest ISA this CPU supports. */
nn_isa nn_kern_best_isa(void);
/* Uses isa's kernels from now on (tests compare the paths; isa must be
 * supported by the CPU); returns the previous choice. Not thread-safe. */
nn_isa nn_kern_force(nn_isa isa);

/* ---- thread pool (nn_pool.c) ---------------------------------------------- */

/* Runs fn(ctx, tid, nt) for tid = 0 .. nt-1 on nt threads (the caller is
 * tid 0) and returns when all are done. nt is capped at the pool size set by
 * dp_nn_set_threads; when the pool is busy (another caller thread), runs
 * fn(ctx, 0, 1) on the caller alone. */
void nn_parallel(int nt, void (*fn)(void *ctx, int tid, int nt), void *ctx);
/* The pool's largest size. */
#define NN_POOL_MAX 64
/* A row-wise pass over at least this many elements is split over the pool
 * by rows (nn_layers.c, nn_models.c); each row is computed as alone, so
 * the results are the same whatever the threads. */
#define NN_ROWS_PAR_WORK 262144
/* Rows [*r0, *r1) of N for part tid of nt (nn_parallel's arguments): the
 * parts cover 0 .. N in order. */
static inline void nn_part_rows(int *r0, int *r1, int N, int tid, int nt) {
    *r0 = (int)((long)N * tid / nt);
    *r1 = (int)((long)N * (tid + 1) / nt);
}
/* Threads the pool may use (dp_nn_set_threads). */
int nn_pool_threads(void);
void nn_pool_set_threads(int n);

#endif
