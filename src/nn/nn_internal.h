/* Internal helpers of the neural-network engine: inline float kernels the
 * compiler can vectorise, subnormal flushing, and the engine's row-major
 * matrix product. */
#ifndef DPLACE_NN_INTERNAL_H
#define DPLACE_NN_INTERNAL_H

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dplace/nn_models.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define NN_HAVE_MXCSR 1
#endif

/* ---- denormals ---------------------------------------------------------------
 * Saturated LSTM gates give sigmoid outputs near 1e-38 and their products are
 * subnormal floats; every multiply or FMA with a subnormal operand takes a
 * microcode assist of ~100 cycles on x86 (measured: the benchmark update ran
 * 5x slower). The heavy entry points therefore run with flush-to-zero and
 * denormals-are-zero set (MXCSR, x86 only), restoring the caller's mode on
 * return, as TensorFlow does in its threads: values below 1.2e-38 become 0.
 * dp_nn_set_flush_denormals(0) turns this off. The thread pool runs each job
 * with the caller's MXCSR. */
int nn_flush_denormals(void);

/* Sets FTZ/DAZ if enabled; returns the mode to restore. */
static inline unsigned nn_fp_enter(void) {
#ifdef NN_HAVE_MXCSR
    unsigned m = _mm_getcsr();
    if (nn_flush_denormals()) _mm_setcsr(m | 0x8040u); /* FTZ (bit 15) | DAZ (bit 6) */
    return m;
#else
    return 0;
#endif
}

/* Restores the mode nn_fp_enter returned. */
static inline void nn_fp_leave(unsigned m) {
#ifdef NN_HAVE_MXCSR
    _mm_setcsr(m);
#else
    (void)m;
#endif
}

/* exp(x) for float: Cody-Waite reduction by ln 2, degree-6 polynomial on
 * [-ln2/2, ln2/2], scale by 2^n built in the exponent bits. x is clamped to
 * [-87, 88] so the result is always a normal float; NaN gives NaN (its n
 * is taken as 0: converting NaN to an integer is undefined). Branch-free
 * so loops over it vectorise. */
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
    uint32_t bits = (uint32_t)((int32_t)(fn == fn ? fn : 0.0f) + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* tanh(x) as a rational function, x p(x^2) / q(x^2) of degrees 13 and 6
 * on x clamped to +-7.9053 (where tanh is 1 in float): 11 FMAs and one
 * division, branch-free, absolute error below 5e-7 (3.2e-7 measured without
 * FMA contraction, 2.7e-7 with it; test_nn_layers), about
 * twice as fast as (1 - e) / (1 + e) with e = exp(-2|x|). The coefficients
 * are the minimax ones Eigen uses for its float tanh. */
static inline float nn_tanh(float x) {
    const float c = 7.90531110763549805f;
    x = x > c ? c : x;
    x = x < -c ? -c : x;
    float x2 = x * x;
    float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
    p = p * x2 + -8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    return x * p / q;
}

static inline float nn_sigmoid(float x) { return 1.0f / (1.0f + nn_exp(-x)); }

/* C [M, N] = alpha op(A) op(B) + beta C, all row-major; ta/tb: transpose;
 * beta == 0: C is not read (nn_gemm.c: the engine's AVX2/AVX-512 kernels
 * where the CPU has them, else OpenBLAS; large products use the pool). */
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

/* Backward of additive attention up to the projected query: dqp [B, A] =
 * its gradient (overwritten); dkeys [B, T, A], denc [B, T, E], dv [A] +=
 * (each may be NULL); ds [B, T] scratch. dp_nn_attention_backward is this
 * plus the query projection's backward; the seq2seq placer batches that
 * projection's weight gradient over all steps instead (nn_rnn.c). */
void nn_attention_backward_core(float *dqp, float *dkeys, float *denc, float *dv, float *ds,
                                const float *dctx, const float *att, const float *act,
                                const float *enc, const float *v, int B, int T, int A, int E);

/* ---- shared by the models ------------------------------------------------- */

/* Finds tensor name in p with count floats; fills *val and *grad. Errors:
 * DP_STATUS_INVALID (missing, or another size). */
dp_status nn_bind_tensor(float **val, float **grad, const dp_nn_params *p, const char *name,
                         size_t count, dp_error *err);
/* Returns *cur and advances it by n floats (a bump allocator over one block). */
float *nn_carve(float **cur, size_t n);
/* The category of one row logp [D] that a uniform u in [0, 1) picks by
 * inverse CDF (dp_nn_categorical_sample draws u per row). */
int nn_categorical_pick(const float *logp, double u, int D);
/* Picks actions [N] from logp [N, D] per mode (TEACHER: checks them). */
void nn_pick_actions(int *actions, const float *logp, dp_nn_decode_mode mode, dp_rng *rng, int N,
                     int D);

#endif
