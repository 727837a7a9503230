/* Graph layers for Mars's encoder and Deep Graph Infomax: sparse normalised
 * adjacency, graph convolution, mean readout, bilinear discriminator, binary
 * cross-entropy with logits and node-permutation corruption. */
#include "dplace/nn.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_internal.h"

/* Frees g's arrays and zeroes it. */
void dp_nn_graph_free(dp_nn_graph *g) {
    if (!g) return;
    free(g->row);
    free(g->col);
    free(g->val);
    memset(g, 0, sizeof *g);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Builds the symmetric normalised adjacency with self-loops from E directed
 * edges; returns DP_STATUS_INVALID or DP_STATUS_NOMEM on failure. */
dp_status dp_nn_graph_init(dp_nn_graph *g, int n, const int *src, const int *dst, int64_t E,
                           dp_error *err) {
    memset(g, 0, sizeof *g);
    if (n <= 0) return dp_error_set(err, DP_STATUS_INVALID, "nn graph: %d nodes", n);
    for (int64_t e = 0; e < E; e++)
        if (src[e] < 0 || src[e] >= n || dst[e] < 0 || dst[e] >= n)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "nn graph: edge %lld (%d -> %d) outside 0..%d", (long long)e,
                                src[e], dst[e], n - 1);
    int64_t *row = calloc((size_t)n + 1, sizeof *row);
    int64_t *fill = calloc((size_t)n, sizeof *fill);
    int *col = malloc(sizeof(int) * (size_t)(2 * E + n));
    if (!row || !fill || !col) {
        free(row);
        free(fill);
        free(col);
        return dp_error_set(err, DP_STATUS_NOMEM, "nn graph: out of memory for %d nodes", n);
    }
    /* count: a self-loop per node and both directions of every other edge */
    for (int i = 0; i < n; i++) row[i + 1] = 1;
    for (int64_t e = 0; e < E; e++)
        if (src[e] != dst[e]) {
            row[src[e] + 1]++;
            row[dst[e] + 1]++;
        }
    for (int i = 0; i < n; i++) row[i + 1] += row[i];
    for (int i = 0; i < n; i++) {
        col[row[i]] = i;
        fill[i] = row[i] + 1;
    }
    for (int64_t e = 0; e < E; e++)
        if (src[e] != dst[e]) {
            col[fill[src[e]]++] = dst[e];
            col[fill[dst[e]]++] = src[e];
        }
    /* sort each row, drop duplicates, compact in place */
    int64_t w = 0;
    for (int i = 0; i < n; i++) {
        int64_t a = row[i], b = row[i + 1];
        qsort(col + a, (size_t)(b - a), sizeof(int), cmp_int);
        row[i] = w;
        for (int64_t k = a; k < b; k++)
            if (k == a || col[k] != col[k - 1]) col[w++] = col[k];
    }
    row[n] = w;
    free(fill);
    float *val = malloc(sizeof(float) * (size_t)(w > 0 ? w : 1));
    int *col2 = realloc(col, sizeof(int) * (size_t)(w > 0 ? w : 1));
    if (col2) col = col2;
    if (!val) {
        free(row);
        free(col);
        return dp_error_set(err, DP_STATUS_NOMEM, "nn graph: out of memory for %lld entries",
                            (long long)w);
    }
    for (int i = 0; i < n; i++) {
        double di = (double)(row[i + 1] - row[i]);
        for (int64_t k = row[i]; k < row[i + 1]; k++) {
            double dj = (double)(row[col[k] + 1] - row[col[k]]);
            val[k] = (float)(1.0 / sqrt(di * dj));
        }
    }
    g->n = n;
    g->nnz = w;
    g->row = row;
    g->col = col;
    g->val = val;
    return DP_STATUS_OK;
}

/* y [N, C] = Ahat x [N, C] (+ bias [C] if given) */
static void spmm(float *y, const dp_nn_graph *g, const float *x, const float *bias, int C) {
    for (int i = 0; i < g->n; i++) {
        float *yi = y + (size_t)i * C;
        if (bias) memcpy(yi, bias, sizeof(float) * C);
        else memset(yi, 0, sizeof(float) * C);
        for (int64_t k = g->row[i]; k < g->row[i + 1]; k++) {
            const float *xj = x + (size_t)g->col[k] * C;
            float a = g->val[k];
            for (int c = 0; c < C; c++) yi[c] += a * xj[c];
        }
    }
}

/* out [N, OC] = Ahat (inp [N, C] @ weight [OC, C]^T) + bias [OC]; xw [N, OC] saved */
void dp_nn_gcn_forward(float *out, float *xw, const float *inp, const dp_nn_graph *g,
                       const float *weight, const float *bias, int N, int C, int OC) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    assert(g->n == N);
    dp_nn_linear_forward(xw, inp, weight, NULL, N, C, OC);
    spmm(out, g, xw, bias, OC);
    nn_fp_leave(fp_);
}

/* dinp [N, C], dweight [OC, C], dbias [OC] += ...; dout [N, OC]; scratch [N, OC] */
void dp_nn_gcn_backward(float *dinp, float *dweight, float *dbias, float *scratch,
                        const float *dout, const float *inp, const dp_nn_graph *g,
                        const float *weight, int N, int C, int OC) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    assert(g->n == N);
    spmm(scratch, g, dout, NULL, OC); /* Ahat is symmetric */
    dp_nn_linear_backward(dinp, dweight, NULL, scratch, inp, weight, N, C, OC);
    if (dbias) nn_add_colsum(dbias, dout, N, OC, (size_t)OC);
    nn_fp_leave(fp_);
}

/* out [C] = sigmoid(mean of rows of inp [N, C]) */
void dp_nn_readout_forward(float *out, const float *inp, int N, int C) {
    memset(out, 0, sizeof(float) * C);
    nn_add_colsum(out, inp, N, C, (size_t)C);
    for (int c = 0; c < C; c++) out[c] = nn_sigmoid(out[c] / (float)N);
}

/* dinp [N, C] += dout [C] out (1 - out) / N */
void dp_nn_readout_backward(float *dinp, const float *dout, const float *out, int N, int C) {
    for (int n = 0; n < N; n++) {
        float *d = dinp + (size_t)n * C;
        for (int c = 0; c < C; c++) d[c] += dout[c] * out[c] * (1.0f - out[c]) / (float)N;
    }
}

/* out [N] = inp [N, C] @ (weight [C, C] @ summary [C]) + bias; ws [C] saved */
void dp_nn_bilinear_forward(float *out, float *ws, const float *inp, const float *summary,
                            const float *weight, const float *bias, int N, int C) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, C, C, 1.0f, weight, C, summary, 1, 0.0f, ws, 1);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, N, C, 1.0f, inp, C, ws, 1, 0.0f, out, 1);
    if (bias)
        for (int n = 0; n < N; n++) out[n] += bias[0];
}

/* dinp [N, C], dsummary [C], dweight [C, C], dbias [1] += ...; dout [N]; scratch [C] */
void dp_nn_bilinear_backward(float *dinp, float *dsummary, float *dweight, float *dbias,
                             float *scratch, const float *dout, const float *ws,
                             const float *inp, const float *summary, const float *weight,
                             int N, int C) {
    if (dinp) cblas_sger(CblasRowMajor, N, C, 1.0f, dout, 1, ws, 1, dinp, C);
    float *dws = scratch; /* dws [C] = inp^T dout */
    cblas_sgemv(CblasRowMajor, CblasTrans, N, C, 1.0f, inp, C, dout, 1, 0.0f, dws, 1);
    if (dweight) cblas_sger(CblasRowMajor, C, C, 1.0f, dws, 1, summary, 1, dweight, C);
    if (dsummary)
        cblas_sgemv(CblasRowMajor, CblasTrans, C, C, 1.0f, weight, C, dws, 1, 1.0f, dsummary, 1);
    if (dbias) {
        double s = 0.0;
        for (int n = 0; n < N; n++) s += dout[n];
        dbias[0] += (float)s;
    }
}

/* returns mean BCE of logits [N] against labels [N] */
float dp_nn_bce_logits_forward(const float *logits, const float *labels, int N) {
    double s = 0.0;
    for (int n = 0; n < N; n++) {
        double x = logits[n], y = labels[n];
        s += (x > 0.0 ? x : 0.0) - x * y + log1p(exp(-fabs(x)));
    }
    return (float)(s / N);
}

/* dlogits [N] += dloss (sigmoid(x) - y) / N */
void dp_nn_bce_logits_backward(float *dlogits, float dloss, const float *logits,
                               const float *labels, int N) {
    float s = dloss / (float)N;
    for (int n = 0; n < N; n++) dlogits[n] += s * (nn_sigmoid(logits[n]) - labels[n]);
}

/* perm [N] = random permutation (Fisher-Yates) */
void dp_nn_permutation_sample(int *perm, dp_rng *rng, int N) {
    for (int i = 0; i < N; i++) perm[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = (int)dp_rng_below(rng, (uint64_t)i + 1);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* out [N, C] row n = inp row perm[n] */
void dp_nn_permute_rows_forward(float *out, const float *inp, const int *perm, int N, int C) {
    for (int n = 0; n < N; n++) {
        assert(perm[n] >= 0 && perm[n] < N);
        memcpy(out + (size_t)n * C, inp + (size_t)perm[n] * C, sizeof(float) * C);
    }
}

/* dinp [N, C] row perm[n] += dout row n */
void dp_nn_permute_rows_backward(float *dinp, const float *dout, const int *perm, int N, int C) {
    for (int n = 0; n < N; n++) {
        float *d = dinp + (size_t)perm[n] * C;
        const float *s = dout + (size_t)n * C;
        for (int c = 0; c < C; c++) d[c] += s[c];
    }
}
