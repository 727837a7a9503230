/* Internal helpers of the neural-network engine: inline float kernels the
 * compiler can vectorise, and a short spelling of the row-major sgemm. */
#ifndef DPLACE_NN_INTERNAL_H
#define DPLACE_NN_INTERNAL_H

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) for float: Cody-Waite reduction by ln 2, degree-6 polynomial on
 * [-ln2/2, ln2/2], scale by 2^n built in the exponent bits. x is clamped to
 * [-87, 88] so the result is always a normal float. Branch-free so loops
 * over it vectorise. */
static inline float nn_exp(float x) {
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    float fn = x * 1.44269504088896341f + 12582912.0f; /* round to nearest */
    fn -= 12582912.0f;
    float r = x - fn * 0.693359375f;
    r = r - fn * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)fn + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|). */
static inline float nn_tanh(float x) {
    float e = nn_exp(-2.0f * fabsf(x));
    float y = (1.0f - e) / (1.0f + e);
    return x < 0.0f ? -y : y;
}

static inline float nn_sigmoid(float x) { return 1.0f / (1.0f + nn_exp(-x)); }

/* C [M, N] = alpha op(A) op(B) + beta C, all row-major; ta/tb: transpose
 * (nn_gemm.c, OpenBLAS). */
void nn_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
             const float *B, int ldb, float beta, float *C, int ldc);

/* dst [n] += column sums of src [rows, n] with row stride ld. */
static inline void nn_add_colsum(float *dst, const float *src, int rows, int n, size_t ld) {
    for (int r = 0; r < rows; r++) {
        const float *s = src + (size_t)r * ld;
        for (int j = 0; j < n; j++) dst[j] += s[j];
    }
}

/* LSTM gate and state update for one row: g [4H] pre-activations in,
 * activated gates out; c = f c_prev + i g; h = o tanh(c). */
void nn_lstm_cell_row(float *h, float *c, float *g, const float *c_prev, int H);
/* Backward of one row: dh [H] gradient into h (full), dc [H] in: gradient
 * into c from later steps, out: gradient into c_prev; dg [4H] out: gradient
 * of the gate pre-activations. */
void nn_lstm_cell_row_backward(float *dg, float *dc, const float *dh, const float *g,
                               const float *c, const float *c_prev, int H);

#endif
