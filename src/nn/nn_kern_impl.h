/* The vector kernels of nn_kern.h, written once for a vector of NN_VW floats
 * with GCC vector extensions. Included by one source file per ISA, which
 * defines NN_VW and NN_KERNELS (the table's name), and NN_OWN_GEMM when the
 * matrix products are these kernels rather than OpenBLAS's. Those files are
 * compiled with -ffp-contract=fast so that a * b + c becomes one FMA. */
#ifndef NN_VW
#error "define NN_VW before including nn_kern_impl.h"
#endif

#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "nn_internal.h"
#include "nn_kern.h"

#define VW NN_VW
typedef float vf __attribute__((vector_size(VW * 4)));
/* the same vector at any float address (unaligned loads and stores) */
typedef float vfu __attribute__((vector_size(VW * 4), aligned(4), may_alias));

static inline vf vload(const float *p) { return *(const vfu *)p; }
static inline void vstore(float *p, vf v) { *(vfu *)p = v; }
static inline vf vzero(void) { return (vf){0}; }

/* sum of the lanes, pairwise */
static inline float vsum(vf v) {
    float t[VW];
    memcpy(t, &v, sizeof t);
    for (int w = VW / 2; w >= 1; w /= 2)
        for (int i = 0; i < w; i++) t[i] += t[i + w];
    return t[0];
}

static inline int imin(int a, int b) { return a < b ? a : b; }

typedef int vi __attribute__((vector_size(VW * 4)));

/* one level of the lane-sum tree: the lanes of x and y listed in LO plus
 * those listed in HI (index VW + i is lane i of y) */
#if defined(__clang__)
#define FOLD(x, y, LO, HI) (__builtin_shufflevector((x), (y), LO) + __builtin_shufflevector((x), (y), HI))
#else
#define FOLD(x, y, LO, HI) (__builtin_shuffle((x), (y), (vi){LO}) + __builtin_shuffle((x), (y), (vi){HI}))
#endif

/* Returns the vector whose lane L is the sum of the lanes of v[L], L < VW,
 * by a shuffle tree (VW - 1 pair folds instead of VW scalar reductions). The
 * inputs enter in bit-reversed order so the sums come out in order. */
static inline vf vsum_lanes(const vf *v) {
#if VW == 16
    static const int br[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
#define L1 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define H1 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define L2 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define H2 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define L3 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define H3 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define L4 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define H4 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
    vf a[8], b[4], c[2];
    for (int p = 0; p < 8; p++) a[p] = FOLD(v[br[2 * p]], v[br[2 * p + 1]], L1, H1);
    for (int p = 0; p < 4; p++) b[p] = FOLD(a[2 * p], a[2 * p + 1], L2, H2);
    for (int p = 0; p < 2; p++) c[p] = FOLD(b[2 * p], b[2 * p + 1], L3, H3);
    return FOLD(c[0], c[1], L4, H4);
#elif VW == 8
    static const int br[8] = {0, 4, 2, 6, 1, 5, 3, 7};
#define L1 0, 1, 2, 3, 8, 9, 10, 11
#define H1 4, 5, 6, 7, 12, 13, 14, 15
#define L2 0, 1, 8, 9, 4, 5, 12, 13
#define H2 2, 3, 10, 11, 6, 7, 14, 15
#define L3 0, 8, 2, 10, 4, 12, 6, 14
#define H3 1, 9, 3, 11, 5, 13, 7, 15
    vf a[4], b[2];
    for (int p = 0; p < 4; p++) a[p] = FOLD(v[br[2 * p]], v[br[2 * p + 1]], L1, H1);
    for (int p = 0; p < 2; p++) b[p] = FOLD(a[2 * p], a[2 * p + 1], L2, H2);
    return FOLD(b[0], b[1], L3, H3);
#elif VW == 4
    static const int br[4] = {0, 2, 1, 3};
#define L1 0, 1, 4, 5
#define H1 2, 3, 6, 7
#define L2 0, 4, 2, 6
#define H2 1, 5, 3, 7
    vf a[2];
    for (int p = 0; p < 2; p++) a[p] = FOLD(v[br[2 * p]], v[br[2 * p + 1]], L1, H1);
    return FOLD(a[0], a[1], L2, H2);
#else
#error "NN_VW must be 4, 8 or 16"
#endif
}
#undef L1
#undef H1
#undef L2
#undef H2
#undef L3
#undef H3
#undef L4
#undef H4

/* ---- element-wise and vector kernels --------------------------------------- */

/* y [n] += a x [n] */
static void k_axpy(float *restrict y, float a, const float *restrict x, int n) {
    for (int i = 0; i < n; i++) y[i] += a * x[i];
}

/* x [n] . y [n] */
static float k_dot(const float *restrict x, const float *restrict y, int n) {
    vf s = vzero();
    int i = 0;
    for (; i + VW <= n; i += VW) s += vload(x + i) * vload(y + i);
    float r = vsum(s);
    for (; i < n; i++) r += x[i] * y[i];
    return r;
}

/* sum of exp(x [n] - shift) */
static float k_sum_exp(const float *restrict x, float shift, int n) {
    float e[4 * VW];
    vf s = vzero();
    int i = 0;
    for (; i + 4 * VW <= n; i += 4 * VW) {
        for (int q = 0; q < 4 * VW; q++) e[q] = nn_exp(x[i + q] - shift);
        for (int q = 0; q < 4; q++) s += vload(e + q * VW);
    }
    float r = vsum(s);
    for (; i < n; i++) r += nn_exp(x[i] - shift);
    return r;
}

/* act [T, A] = tanh(keys + q); score [T] = act v. Rows go VW at a time:
 * each row's vector partial sums, then one lane-sum tree for the VW rows
 * (vsum_lanes sums in vsum's order, so every score equals k_dot's; one
 * vsum per row was 40% of a Mars update on gnmt4). */
static void k_attn_score(float *restrict act, float *restrict score, const float *restrict keys,
                         const float *restrict q, const float *restrict v, int T, int A) {
    for (int j = 0; j < T; j++) {
        const float *restrict k = keys + (size_t)j * A;
        float *restrict a = act + (size_t)j * A;
        for (int m = 0; m < A; m++) a[m] = nn_tanh(k[m] + q[m]);
    }
    int Av = A - A % VW, j = 0;
    for (; j + VW <= T; j += VW) {
        vf acc[VW];
        for (int r = 0; r < VW; r++) {
            const float *a = act + (size_t)(j + r) * A;
            acc[r] = vzero();
            for (int m = 0; m < Av; m += VW) acc[r] += vload(a + m) * vload(v + m);
        }
        vf s = vsum_lanes(acc);
        for (int r = 0; r < VW; r++) {
            const float *a = act + (size_t)(j + r) * A;
            float x = s[r];
            for (int m = Av; m < A; m++) x += a[m] * v[m];
            score[j + r] = x;
        }
    }
    for (; j < T; j++) score[j] = k_dot(act + (size_t)j * A, v, A);
}

/* dk [T, A] += ds_j v (1 - act^2); dq [A] += its column sums; dv [A] +=
 * ds^T act; dk and dv may be NULL */
static void k_attn_score_backward(float *restrict dk, float *restrict dq, float *restrict dv,
                                  const float *restrict ds, const float *restrict act,
                                  const float *restrict v, int T, int A) {
    for (int j = 0; j < T; j++) {
        const float *restrict a = act + (size_t)j * A;
        float s = ds[j];
        if (dk) {
            float *restrict d = dk + (size_t)j * A;
            for (int m = 0; m < A; m++) {
                float g = s * v[m] * (1.0f - a[m] * a[m]);
                d[m] += g;
                dq[m] += g;
            }
        } else {
            for (int m = 0; m < A; m++) dq[m] += s * v[m] * (1.0f - a[m] * a[m]);
        }
        if (dv)
            for (int m = 0; m < A; m++) dv[m] += s * a[m];
    }
}

#ifdef NN_OWN_GEMM
/* ---- packed matrix product ------------------------------------------------- */

/* Register tile MR x NR (two vectors wide): AVX-512 12 x 32 (24 of the 32
 * vector registers accumulate), AVX2 6 x 16 (12 of 16). Blocking: a KC x NR
 * sliver of packed B stays in L1 while the MR-row slivers of a packed MC x KC
 * block of A stream from L2. */
#if VW >= 16
#define MR 12
#elif VW == 8
#define MR 6
#else
#define MR 4
#endif
#define NR (2 * VW)
#define KC 256
#define MC 96
#define NC 512

/* ap [ceil(mc / MR)][kc][MR] = op(A) [mc, kc] in MR-row slivers, zero padded.
 * A points at the block's first element. */
static void pack_a(float *restrict ap, int ta, const float *restrict A, int lda, int mc, int kc) {
    for (int i0 = 0; i0 < mc; i0 += MR) {
        int mr = imin(MR, mc - i0);
        if (!ta) {
            for (int i = 0; i < MR; i++) {
                if (i < mr) {
                    const float *restrict s = A + (size_t)(i0 + i) * lda;
                    for (int k = 0; k < kc; k++) ap[k * MR + i] = s[k];
                } else {
                    for (int k = 0; k < kc; k++) ap[k * MR + i] = 0.0f;
                }
            }
        } else {
            for (int k = 0; k < kc; k++) {
                const float *restrict s = A + (size_t)k * lda + i0;
                for (int i = 0; i < MR; i++) ap[k * MR + i] = i < mr ? s[i] : 0.0f;
            }
        }
        ap += (size_t)kc * MR;
    }
}

/* bp [ceil(nc / NR)][kc][NR] = op(B) [kc, nc] in NR-column slivers, zero
 * padded. B points at the block's first element. */
static void pack_b(float *restrict bp, int tb, const float *restrict B, int ldb, int kc, int nc) {
    for (int j0 = 0; j0 < nc; j0 += NR) {
        int nr = imin(NR, nc - j0);
        if (!tb) {
            for (int k = 0; k < kc; k++) {
                const float *restrict s = B + (size_t)k * ldb + j0;
                float *restrict d = bp + (size_t)k * NR;
                if (nr == NR) {
                    memcpy(d, s, sizeof(float) * NR);
                } else {
                    for (int j = 0; j < NR; j++) d[j] = j < nr ? s[j] : 0.0f;
                }
            }
        } else {
            for (int j = 0; j < NR; j++) {
                if (j < nr) {
                    const float *restrict s = B + (size_t)(j0 + j) * ldb;
                    for (int k = 0; k < kc; k++) bp[(size_t)k * NR + j] = s[k];
                } else {
                    for (int k = 0; k < kc; k++) bp[(size_t)k * NR + j] = 0.0f;
                }
            }
        }
        bp += (size_t)kc * NR;
    }
}

/* c [mr, nr] (row stride ldc) = alpha ap [kc][MR] bp [kc][NR] + beta c, for
 * the top-left mr x nr of the tile; beta == 0: c is not read. */
static void micro_kernel(int kc, const float *restrict ap, const float *restrict bp,
                         float *restrict c, int ldc, int mr, int nr, float alpha, float beta) {
    vf c0[MR], c1[MR];
    for (int i = 0; i < MR; i++) c0[i] = c1[i] = vzero();
    for (int k = 0; k < kc; k++) {
        vf b0 = *(const vf *)bp, b1 = *(const vf *)(bp + VW);
        for (int i = 0; i < MR; i++) {
            float a = ap[i];
            c0[i] += a * b0;
            c1[i] += a * b1;
        }
        ap += MR;
        bp += NR;
    }
    if (mr == MR && nr == NR) {
        for (int i = 0; i < MR; i++) {
            float *ci = c + (size_t)i * ldc;
            vf r0 = alpha * c0[i], r1 = alpha * c1[i];
            if (beta != 0.0f) {
                r0 += beta * vload(ci);
                r1 += beta * vload(ci + VW);
            }
            vstore(ci, r0);
            vstore(ci + VW, r1);
        }
    } else {
        float t[MR][NR];
        for (int i = 0; i < MR; i++) {
            vstore(t[i], c0[i]);
            vstore(t[i] + VW, c1[i]);
        }
        for (int i = 0; i < mr; i++) {
            float *ci = c + (size_t)i * ldc;
            for (int j = 0; j < nr; j++)
                ci[j] = beta != 0.0f ? alpha * t[i][j] + beta * ci[j] : alpha * t[i][j];
        }
    }
}

/* C [M, N] = alpha op(A) op(B) + beta C; K >= 1 */
static void k_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc) {
    int kcap = imin(K, KC), ncap = imin((N + NR - 1) / NR * NR, NC);
    int mcap = imin((M + MR - 1) / MR * MR, MC);
    /* packed blocks, 64-byte aligned: one allocation per call (the callers
     * of the packed path are large products) */
    size_t nb = (size_t)kcap * ncap, na = (size_t)mcap * kcap;
    void *raw = malloc(sizeof(float) * (nb + na) + 64);
    if (!raw) { /* out of memory: let OpenBLAS do it */
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    float *bp = (float *)(((uintptr_t)raw + 63) & ~(uintptr_t)63), *ap = bp + nb;
    for (int jc = 0; jc < N; jc += NC) {
        int nc = imin(NC, N - jc);
        for (int pc = 0; pc < K; pc += KC) {
            int kc = imin(KC, K - pc);
            float bt = pc == 0 ? beta : 1.0f;
            pack_b(bp, tb, tb ? B + (size_t)jc * ldb + pc : B + (size_t)pc * ldb + jc, ldb, kc, nc);
            for (int ic = 0; ic < M; ic += MC) {
                int mc = imin(MC, M - ic);
                pack_a(ap, ta, ta ? A + (size_t)pc * lda + ic : A + (size_t)ic * lda + pc, lda, mc, kc);
                for (int jr = 0; jr < nc; jr += NR)
                    for (int ir = 0; ir < mc; ir += MR)
                        micro_kernel(kc, ap + (size_t)ir * kc, bp + (size_t)jr * kc,
                                     C + (size_t)(ic + ir) * ldc + jc + jr, ldc, imin(MR, mc - ir),
                                     imin(NR, nc - jr), alpha, bt);
            }
        }
    }
    free(raw);
}

/* ---- few-row products without packing ---------------------------------------- */

/* Columns per block of the A B^T kernel, vectors per block of the A B
 * kernel: 4 columns with 32 vector registers, 2 with 16 (the A B^T kernel
 * sums each 4 rows' 4 SK_NB = VW accumulators with one lane-sum tree). */
#if VW >= 16
#define SK_NB 4
#else
#define SK_NB 2
#endif
/* Rows in one pass: 6 x SK_NB accumulators, SK_NB vectors of B and one of
 * A fit the registers (15 of 16, 29 of 32). */
#define SK_MR 6

static inline float beta_mix(float alpha, float s, float beta, const float *c) {
    return beta != 0.0f ? alpha * s + beta * *c : alpha * s;
}

/* C [MM, N] = alpha A [MM, K] B [N, K]^T + beta C, MM <= SK_MR rows: each B
 * row is read once and used for every row of A (dot products along K).
 * Every element's sum is the same whatever MM (its own accumulator, its
 * own lane of a lane-sum tree). */
static inline __attribute__((always_inline)) void skinny_nt(int MM, int N, int K, float alpha,
                                                            const float *restrict A, int lda,
                                                            const float *restrict B, int ldb,
                                                            float beta, float *restrict C, int ldc) {
    _Static_assert(4 * SK_NB == VW, "one lane-sum tree per 4 rows of a block");
    int n = 0;
    for (; n + SK_NB <= N; n += SK_NB) {
        vf acc[8 * SK_NB]; /* row i, column j at i * SK_NB + j: rows 0-3 and 4-7 one tree each */
        for (int q = 0; q < 8 * SK_NB; q++) acc[q] = vzero();
        const float *b = B + (size_t)n * ldb;
        int k = 0;
        for (; k + VW <= K; k += VW) {
            vf bv[SK_NB];
            for (int j = 0; j < SK_NB; j++) bv[j] = vload(b + (size_t)j * ldb + k);
            for (int i = 0; i < MM; i++) {
                vf a = vload(A + (size_t)i * lda + k);
                for (int j = 0; j < SK_NB; j++) acc[i * SK_NB + j] += a * bv[j];
            }
        }
        for (; k < K; k++) /* K tail into lane 0 */
            for (int i = 0; i < MM; i++)
                for (int j = 0; j < SK_NB; j++)
                    acc[i * SK_NB + j][0] += A[(size_t)i * lda + k] * b[(size_t)j * ldb + k];
        vf r[2];
        r[0] = vsum_lanes(acc);
        if (MM > 4) r[1] = vsum_lanes(acc + 4 * SK_NB);
        for (int i = 0; i < MM; i++)
            for (int j = 0; j < SK_NB; j++) {
                float *c = C + (size_t)i * ldc + n + j;
                *c = beta_mix(alpha, r[i / 4][(i % 4) * SK_NB + j], beta, c);
            }
    }
    for (; n < N; n++) {
        const float *b = B + (size_t)n * ldb;
        for (int i = 0; i < MM; i++) {
            float s = k_dot(A + (size_t)i * lda, b, K);
            float *c = C + (size_t)i * ldc + n;
            *c = beta_mix(alpha, s, beta, c);
        }
    }
}

/* element (i, k) of op(A) */
#define SK_A(i, k) (ta ? A[(size_t)(k) * lda + (i)] : A[(size_t)(i) * lda + (k)])

/* C [MM, N] = alpha op(A) [MM, K] B [K, N] + beta C, MM <= SK_MR rows: B is
 * read once, a block of SK_NB vectors of columns at a time over all of K. */
static inline __attribute__((always_inline)) void skinny_nn(int MM, int ta, int N, int K,
                                                            float alpha, const float *restrict A,
                                                            int lda, const float *restrict B,
                                                            int ldb, float beta, float *restrict C,
                                                            int ldc) {
    int n = 0;
    for (; n + SK_NB * VW <= N; n += SK_NB * VW) {
        vf acc[SK_MR][SK_NB];
        for (int i = 0; i < MM; i++)
            for (int j = 0; j < SK_NB; j++) acc[i][j] = vzero();
        for (int k = 0; k < K; k++) {
            const float *b = B + (size_t)k * ldb + n;
            vf bv[SK_NB];
            for (int j = 0; j < SK_NB; j++) bv[j] = vload(b + j * VW);
            for (int i = 0; i < MM; i++) {
                float a = SK_A(i, k);
                for (int j = 0; j < SK_NB; j++) acc[i][j] += a * bv[j];
            }
        }
        for (int i = 0; i < MM; i++)
            for (int j = 0; j < SK_NB; j++) {
                float *c = C + (size_t)i * ldc + n + j * VW;
                vf r = alpha * acc[i][j];
                if (beta != 0.0f) r += beta * vload(c);
                vstore(c, r);
            }
    }
    for (; n + VW <= N; n += VW) {
        vf acc[SK_MR];
        for (int i = 0; i < MM; i++) acc[i] = vzero();
        for (int k = 0; k < K; k++) {
            vf bv = vload(B + (size_t)k * ldb + n);
            for (int i = 0; i < MM; i++) acc[i] += SK_A(i, k) * bv;
        }
        for (int i = 0; i < MM; i++) {
            float *c = C + (size_t)i * ldc + n;
            vf r = alpha * acc[i];
            if (beta != 0.0f) r += beta * vload(c);
            vstore(c, r);
        }
    }
    for (; n < N; n++)
        for (int i = 0; i < MM; i++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) s += SK_A(i, k) * B[(size_t)k * ldb + n];
            float *c = C + (size_t)i * ldc + n;
            *c = beta_mix(alpha, s, beta, c);
        }
}

/* C [M, N] = alpha op(A) op(B) + beta C for small M: up to SK_MR rows in
 * one pass over B (a decoder's rows per thread, 5 for EAGLE's 10 samples
 * on 2 threads, read its weights once per step), else 4 at a time; ta
 * must be 0 when tb is 1 */
static void k_gemm_skinny(int ta, int tb, int M, int N, int K, float alpha, const float *A,
                          int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    for (int m = 0; m < M;) {
        int mm = M - m <= SK_MR ? M - m : 4;
        const float *Am = ta ? A + m : A + (size_t)m * lda;
        float *Cm = C + (size_t)m * ldc;
        m += mm;
        if (tb) {
            switch (mm) {
            case 6: skinny_nt(6, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            case 5: skinny_nt(5, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            case 4: skinny_nt(4, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            case 3: skinny_nt(3, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            case 2: skinny_nt(2, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            default: skinny_nt(1, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            }
        } else {
            switch (mm) {
            case 6: skinny_nn(6, ta, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            case 5: skinny_nn(5, ta, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            case 4: skinny_nn(4, ta, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            case 3: skinny_nn(3, ta, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            case 2: skinny_nn(2, ta, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            default: skinny_nn(1, ta, N, K, alpha, Am, lda, B, ldb, beta, Cm, ldc); break;
            }
        }
    }
}
#else
/* the baseline build: OpenBLAS for both */
static void k_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
                K, alpha, A, lda, B, ldb, beta, C, ldc);
}
#define k_gemm_skinny k_gemm
#endif

const nn_kernels NN_KERNELS = {
    .name = NN_KERNELS_NAME,
    .gemm = k_gemm,
    .gemm_skinny = k_gemm_skinny,
    .attn_score = k_attn_score,
    .axpy = k_axpy,
    .dot = k_dot,
    .attn_score_backward = k_attn_score_backward,
    .sum_exp = k_sum_exp,
};
