/* Dense layers, activations, concatenation, row aggregation by group and the
 * categorical policy head. */
#include "dplace/nn.h"

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nn_internal.h"
#include "nn_kern.h"

/* Sets the thread count of the engine's pool and of OpenBLAS. */
void dp_nn_set_threads(int n) {
    assert(n >= 1);
    openblas_set_num_threads(n);
    nn_pool_set_threads(n);
}

/* Returns the thread count. */
int dp_nn_get_threads(void) { return nn_pool_threads(); }

static atomic_int flush_denormals = 1;

/* Turns flush-to-zero / denormals-are-zero in the engine on or off. */
void dp_nn_set_flush_denormals(int on) { atomic_store(&flush_denormals, on != 0); }

int nn_flush_denormals(void) { return atomic_load_explicit(&flush_denormals, memory_order_relaxed); }

/* Out-of-line copies of the inline kernels. */
float dp_nn_exp(float x) { return nn_exp(x); }
float dp_nn_tanh(float x) { return nn_tanh(x); }
float dp_nn_sigmoid(float x) { return nn_sigmoid(x); }

/* ---- linear ---------------------------------------------------------------- */

/* out [N, OC] = inp [N, C] @ w + bias [OC], w the weight [OC, C] read
 * transposed (input_major 0) or its transpose [C, OC] (input_major 1). */
static void linear_forward(float *out, const float *inp, const float *w, const float *bias, int N, int C, int OC,
                           int input_major) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    float beta = 0.0f;
    if (bias) {
        for (int n = 0; n < N; n++) memcpy(out + (size_t)n * OC, bias, sizeof(float) * OC);
        beta = 1.0f;
    }
    nn_gemm(0, !input_major, N, OC, C, 1.0f, inp, C, w, input_major ? OC : C, beta, out, OC);
    nn_fp_leave(fp_);
}

void dp_nn_linear_forward(float *out, const float *inp, const float *weight, const float *bias, int N, int C,
                          int OC) {
    linear_forward(out, inp, weight, bias, N, C, OC, 0);
}

void dp_nn_linear_forward_t(float *out, const float *inp, const float *weight_t, const float *bias, int N, int C,
                            int OC) {
    linear_forward(out, inp, weight_t, bias, N, C, OC, 1);
}

/* dinp [N, C] += dout [N, OC] @ weight [OC, C]; dweight += dout^T inp; dbias += sum dout */
void dp_nn_linear_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                           const float *inp, const float *weight, int N, int C, int OC) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    if (dinp) nn_gemm(0, 0, N, C, OC, 1.0f, dout, OC, weight, C, 1.0f, dinp, C);
    if (dweight) nn_gemm(1, 0, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
    if (dbias) nn_add_colsum(dbias, dout, N, OC, (size_t)OC);
    nn_fp_leave(fp_);
}

/* ---- embedding ------------------------------------------------------------- */

/* out [N, C] = table [V, C] rows idx [N] */
void dp_nn_embedding_forward(float *out, const int *idx, const float *table, int N, int V, int C) {
    for (int n = 0; n < N; n++) {
        assert(idx[n] >= 0 && idx[n] < V);
        memcpy(out + (size_t)n * C, table + (size_t)idx[n] * C, sizeof(float) * C);
    }
}

/* dtable [V, C] rows idx[n] += dout [N, C] rows n */
void dp_nn_embedding_backward(float *dtable, const float *dout, const int *idx, int N, int V, int C) {
    for (int n = 0; n < N; n++) {
        assert(idx[n] >= 0 && idx[n] < V);
        float *d = dtable + (size_t)idx[n] * C;
        const float *s = dout + (size_t)n * C;
        for (int c = 0; c < C; c++) d[c] += s[c];
    }
}

/* ---- activations ------------------------------------------------------------ */

/* out [n] = max(inp, 0) */
void dp_nn_relu_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

/* dinp [n] += dout where out > 0 */
void dp_nn_relu_backward(float *dinp, const float *dout, const float *out, size_t n) {
    for (size_t i = 0; i < n; i++) dinp[i] += out[i] > 0.0f ? dout[i] : 0.0f;
}

/* out [n] = tanh(inp) */
void dp_nn_tanh_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = nn_tanh(inp[i]);
}

/* dinp [n] += dout (1 - out^2) */
void dp_nn_tanh_backward(float *dinp, const float *dout, const float *out, size_t n) {
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i] * (1.0f - out[i] * out[i]);
}

/* out [n] = sigmoid(inp) */
void dp_nn_sigmoid_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = nn_sigmoid(inp[i]);
}

/* dinp [n] += dout out (1 - out) */
void dp_nn_sigmoid_backward(float *dinp, const float *dout, const float *out, size_t n) {
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i] * out[i] * (1.0f - out[i]);
}

/* out [N, C] = inp >= 0 ? inp : slope * inp; slope [S], S in {1, C} */
void dp_nn_prelu_forward(float *out, const float *inp, const float *slope, int N, int C, int S) {
    assert(S == 1 || S == C);
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C;
        float *y = out + (size_t)n * C;
        for (int c = 0; c < C; c++) {
            float a = slope[S == 1 ? 0 : c];
            y[c] = x[c] >= 0.0f ? x[c] : a * x[c];
        }
    }
}

/* dinp [N, C] += dout * (inp >= 0 ? 1 : slope); dslope [S] += sum dout inp (inp < 0) */
void dp_nn_prelu_backward(float *dinp, float *dslope, const float *dout, const float *inp,
                          const float *slope, int N, int C, int S) {
    assert(S == 1 || S == C);
    double shared = 0.0;
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C;
        const float *dy = dout + (size_t)n * C;
        for (int c = 0; c < C; c++) {
            int k = S == 1 ? 0 : c;
            if (x[c] >= 0.0f) {
                if (dinp) dinp[(size_t)n * C + c] += dy[c];
            } else {
                if (dinp) dinp[(size_t)n * C + c] += slope[k] * dy[c];
                if (dslope) {
                    if (S == 1)
                        shared += (double)dy[c] * x[c];
                    else
                        dslope[k] += dy[c] * x[c];
                }
            }
        }
    }
    if (dslope && S == 1) dslope[0] += (float)shared;
}

/* ---- concatenation ------------------------------------------------------------ */

/* out [N, sum widths] = [inps[0] | inps[1] | ...], inps[k] [N, widths[k]] */
void dp_nn_concat_forward(float *out, const float *const *inps, const int *widths, int nin, int N) {
    int W = 0;
    for (int k = 0; k < nin; k++) W += widths[k];
    for (int n = 0; n < N; n++) {
        float *y = out + (size_t)n * W;
        for (int k = 0; k < nin; k++) {
            memcpy(y, inps[k] + (size_t)n * widths[k], sizeof(float) * widths[k]);
            y += widths[k];
        }
    }
}

/* dinps[k] [N, widths[k]] += matching columns of dout [N, sum widths] */
void dp_nn_concat_backward(float *const *dinps, const float *dout, const int *widths, int nin, int N) {
    int W = 0;
    for (int k = 0; k < nin; k++) W += widths[k];
    for (int n = 0; n < N; n++) {
        const float *dy = dout + (size_t)n * W;
        for (int k = 0; k < nin; k++) {
            if (dinps[k]) {
                float *d = dinps[k] + (size_t)n * widths[k];
                for (int c = 0; c < widths[k]; c++) d[c] += dy[c];
            }
            dy += widths[k];
        }
    }
}

/* ---- aggregation by group ------------------------------------------------------ */

/* out [G, C] = sum of rows of inp [N, C] per group [N] */
void dp_nn_group_sum_forward(float *out, const float *inp, const int *group, int N, int C, int G) {
    memset(out, 0, sizeof(float) * (size_t)G * C);
    for (int n = 0; n < N; n++) {
        assert(group[n] >= 0 && group[n] < G);
        float *y = out + (size_t)group[n] * C;
        const float *x = inp + (size_t)n * C;
        for (int c = 0; c < C; c++) y[c] += x[c];
    }
}

/* dinp [N, C] row n += dout [G, C] row group[n] */
void dp_nn_group_sum_backward(float *dinp, const float *dout, const int *group, int N, int C, int G) {
    for (int n = 0; n < N; n++) {
        assert(group[n] >= 0 && group[n] < G);
        const float *dy = dout + (size_t)group[n] * C;
        float *dx = dinp + (size_t)n * C;
        for (int c = 0; c < C; c++) dx[c] += dy[c];
    }
}

/* out [G, C] = per-group mean of inp [N, C]; count [G] saved group sizes */
void dp_nn_group_mean_forward(float *out, float *count, const float *inp, const int *group,
                              int N, int C, int G) {
    dp_nn_group_sum_forward(out, inp, group, N, C, G);
    dp_nn_group_count_forward(count, group, N, G);
    for (int g = 0; g < G; g++) {
        if (count[g] == 0.0f) continue;
        float s = 1.0f / count[g];
        for (int c = 0; c < C; c++) out[(size_t)g * C + c] *= s;
    }
}

/* dinp [N, C] row n += dout [G, C] row g / count[g] */
void dp_nn_group_mean_backward(float *dinp, const float *dout, const float *count,
                               const int *group, int N, int C, int G) {
    for (int n = 0; n < N; n++) {
        int g = group[n];
        assert(g >= 0 && g < G && count[g] > 0.0f);
        float s = 1.0f / count[g];
        const float *dy = dout + (size_t)g * C;
        float *dx = dinp + (size_t)n * C;
        for (int c = 0; c < C; c++) dx[c] += dy[c] * s;
    }
}

/* out [G] = rows per group */
void dp_nn_group_count_forward(float *out, const int *group, int N, int G) {
    memset(out, 0, sizeof(float) * (size_t)G);
    for (int n = 0; n < N; n++) {
        assert(group[n] >= 0 && group[n] < G);
        out[group[n]] += 1.0f;
    }
}

/* out [G, V] = rows per (group, category) */
void dp_nn_group_histogram_forward(float *out, const int *group, const int *category,
                                   int N, int G, int V) {
    memset(out, 0, sizeof(float) * (size_t)G * V);
    for (int n = 0; n < N; n++) {
        assert(group[n] >= 0 && group[n] < G && category[n] >= 0 && category[n] < V);
        out[(size_t)group[n] * V + category[n]] += 1.0f;
    }
}

/* out [G, G] = 1 where some edge joins group[src] to group[dst] */
void dp_nn_group_adjacency_forward(float *out, const int *group, const int *src,
                                   const int *dst, int E, int G) {
    memset(out, 0, sizeof(float) * (size_t)G * G);
    for (int e = 0; e < E; e++) {
        int a = group[src[e]], b = group[dst[e]];
        assert(a >= 0 && a < G && b >= 0 && b < G);
        out[(size_t)a * G + b] = 1.0f;
    }
}

/* ---- policy head --------------------------------------------------------------- */

/* logits [N, D] = tanh_c tanh(inp / T) + noise; act [N, D] saved tanh */
void dp_nn_policy_logits_forward(float *logits, float *act, const float *inp, const float *noise,
                                 int N, int D, float tanh_c, float temperature) {
    size_t n = (size_t)N * D;
    float it = 1.0f / temperature;
    if (tanh_c > 0.0f) {
        for (size_t i = 0; i < n; i++) {
            float t = nn_tanh(inp[i] * it);
            act[i] = t;
            logits[i] = tanh_c * t;
        }
    } else {
        for (size_t i = 0; i < n; i++) logits[i] = inp[i] * it;
    }
    if (noise)
        for (size_t i = 0; i < n; i++) logits[i] += noise[i];
}

/* dinp [N, D] += dlogits tanh_c (1 - act^2) / T */
void dp_nn_policy_logits_backward(float *dinp, const float *dlogits, const float *act,
                                  int N, int D, float tanh_c, float temperature) {
    size_t n = (size_t)N * D;
    float it = 1.0f / temperature;
    if (tanh_c > 0.0f) {
        float s = tanh_c * it;
        for (size_t i = 0; i < n; i++) dinp[i] += dlogits[i] * s * (1.0f - act[i] * act[i]);
    } else {
        for (size_t i = 0; i < n; i++) dinp[i] += dlogits[i] * it;
    }
}

/* Parts for a row-wise pass over work elements: the pool's threads when
 * the pass is large enough to repay handing it out, else 1. */
static int nn_rows_parts(size_t work) { return work >= NN_ROWS_PAR_WORK ? nn_pool_threads() : 1; }

typedef struct noise_job {
    const double *u; /* [2 n] the uniforms, in the order drawn */
    float *noise;
    size_t n;
    double mx[NN_POOL_MAX]; /* per part: the largest |z| */
} noise_job;

static void noise_part(void *ctx, int tid, int nt) {
    noise_job *j = ctx;
    size_t i0 = j->n * (size_t)tid / (size_t)nt, i1 = j->n * (size_t)(tid + 1) / (size_t)nt;
    double mx = 0.0;
    for (size_t i = i0; i < i1; i++) {
        double z = dp_rng_normal_of(j->u[2 * i], j->u[2 * i + 1]);
        j->noise[i] = (float)z;
        if (fabs(z) > mx) mx = fabs(z);
    }
    j->mx[tid] = mx;
}

/* noise [n] = amplitude z / max|z|, z ~ N(0, 1): dp_rng_normal's deviates
 * in order, their uniforms drawn in chunks and transformed on the pool (the
 * same numbers as one dp_rng_normal after another, whatever the threads). */
void dp_nn_noise_fill(float *noise, dp_rng *rng, size_t n, float amplitude) {
    enum { CHUNK = 8192 };
    double u[2 * CHUNK], mx = 0.0;
    for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
        noise_job j = {u, noise + c0, n - c0 < CHUNK ? n - c0 : CHUNK, {0}};
        for (size_t i = 0; i < 2 * j.n; i++) u[i] = dp_rng_uniform(rng);
        int nt = nn_rows_parts(j.n * 32);
        nn_parallel(nt, noise_part, &j);
        for (int t = 0; t < nt; t++) mx = j.mx[t] > mx ? j.mx[t] : mx;
    }
    float s = mx > 0.0 ? (float)(amplitude / mx) : 0.0f;
    for (size_t i = 0; i < n; i++) noise[i] *= s;
}

/* logp [N, D] = log_softmax(inp) per row */
void dp_nn_log_softmax_forward(float *logp, const float *inp, int N, int D) {
    const nn_kernels *k = nn_kern_get();
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * D;
        float *y = logp + (size_t)n * D;
        float mx = x[0];
        for (int d = 1; d < D; d++) mx = x[d] > mx ? x[d] : mx;
        float lse = mx + logf(k->sum_exp(x, mx, D));
        for (int d = 0; d < D; d++) y[d] = x[d] - lse;
    }
}

/* dinp [N, D] += dlogp - exp(logp) * sum(dlogp) */
void dp_nn_log_softmax_backward(float *dinp, const float *dlogp, const float *logp, int N, int D) {
    for (int n = 0; n < N; n++) {
        const float *dy = dlogp + (size_t)n * D;
        const float *y = logp + (size_t)n * D;
        float *dx = dinp + (size_t)n * D;
        float s = 0.0f;
        for (int d = 0; d < D; d++) s += dy[d];
        for (int d = 0; d < D; d++) dx[d] += dy[d] - nn_exp(y[d]) * s;
    }
}

typedef struct pick_job {
    int *actions;
    const float *logp;
    const double *u;
    int N, D;
} pick_job;

static void pick_part(void *ctx, int tid, int nt) {
    const pick_job *j = ctx;
    int r0, r1;
    nn_part_rows(&r0, &r1, j->N, tid, nt);
    for (int n = r0; n < r1; n++) j->actions[n] = nn_categorical_pick(j->logp + (size_t)n * j->D, j->u[n], j->D);
}

/* actions [N] ~ rows of exp(logp [N, D]), one uniform per row, drawn in row
 * order; the rows are picked on the pool when there are many */
void dp_nn_categorical_sample(int *actions, const float *logp, dp_rng *rng, int N, int D) {
    int nt = nn_rows_parts((size_t)N * D);
    double *u = nt > 1 ? malloc(sizeof(double) * (size_t)N) : NULL;
    if (!u) { /* one row at a time (also when out of memory: the same draws) */
        for (int n = 0; n < N; n++) actions[n] = nn_categorical_pick(logp + (size_t)n * D, dp_rng_uniform(rng), D);
        return;
    }
    for (int n = 0; n < N; n++) u[n] = dp_rng_uniform(rng);
    pick_job j = {actions, logp, u, N, D};
    nn_parallel(nt, pick_part, &j);
    free(u);
}

/* the category of logp [D] that u in [0, 1) picks by inverse CDF */
int nn_categorical_pick(const float *logp, double u, int D) {
    double acc = 0.0;
    int last = 0;
    for (int d = 0; d < D; d++) {
        double p = exp((double)logp[d]);
        if (p > 0.0) last = d;
        acc += p;
        if (u < acc) return d;
    }
    return last; /* rounding left u above the total */
}

/* actions [N] = argmax of rows of logp [N, D] (first on ties) */
void dp_nn_categorical_argmax(int *actions, const float *logp, int N, int D) {
    for (int n = 0; n < N; n++) {
        const float *y = logp + (size_t)n * D;
        int best = 0;
        for (int d = 1; d < D; d++)
            if (y[d] > y[best]) best = d;
        actions[n] = best;
    }
}

/* out [N] = logp [N, D] at actions [N] */
void dp_nn_categorical_logprob_forward(float *out, const float *logp, const int *actions,
                                       int N, int D) {
    for (int n = 0; n < N; n++) {
        assert(actions[n] >= 0 && actions[n] < D);
        out[n] = logp[(size_t)n * D + actions[n]];
    }
}

/* dlogp [N, D] at actions += dout [N] */
void dp_nn_categorical_logprob_backward(float *dlogp, const float *dout, const int *actions,
                                        int N, int D) {
    for (int n = 0; n < N; n++) {
        assert(actions[n] >= 0 && actions[n] < D);
        dlogp[(size_t)n * D + actions[n]] += dout[n];
    }
}

/* out [N] = -sum p logp */
void dp_nn_categorical_entropy_forward(float *out, const float *logp, int N, int D) {
    for (int n = 0; n < N; n++) {
        const float *y = logp + (size_t)n * D;
        float h = 0.0f;
        for (int d = 0; d < D; d++) h -= nn_exp(y[d]) * y[d];
        out[n] = h;
    }
}

/* dlogp [N, D] += -dout p (1 + logp) */
void dp_nn_categorical_entropy_backward(float *dlogp, const float *dout, const float *logp,
                                        int N, int D) {
    for (int n = 0; n < N; n++) {
        const float *y = logp + (size_t)n * D;
        float *dy = dlogp + (size_t)n * D;
        for (int d = 0; d < D; d++) dy[d] -= dout[n] * nn_exp(y[d]) * (1.0f + y[d]);
    }
}
