/* Matrix products of the nn engine: one place where every dense product goes
 * to OpenBLAS (row-major), so a change of backend or a size-based kernel
 * choice touches one function. (Hand-written single-pass kernels for the
 * 4-row products of a decoder step were tried and measured slower than
 * OpenBLAS here; see docs/nn.md.) */
#include <cblas.h>
#include <stddef.h>

#include "nn_internal.h"

/* C [M, N] = alpha op(A) op(B) + beta C (row-major) */
void nn_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
             const float *B, int ldb, float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (beta != 1.0f)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] *= beta;
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
                K, alpha, A, lda, B, ldb, beta, C, ldc);
}
