/* The Transformer-XL placer (nn_txl.h): layer norm, relative multi-head
 * attention, the sinusoid table, and the placer composed of them.
 *
 * A layer (Dai et al. 2019, section 3.3): cat = [memory ; h] (the memory a
 * constant), q = h Wq^T, k = cat Wk^T, v = cat Wv^T, rk = R Wr^T for the
 * sinusoids R of every relative distance, a = relative attention, y =
 * LN1(h + a Wo^T), out = LN2(y + W2 relu(W1 y + c1) + c2). The placer
 * projects the features to d, runs L layers and a linear device head. A
 * segment's distributions do not depend on the actions, so the B samples
 * share one forward and one backward; the products are whole-segment GEMMs
 * (T = 128 rows in Mars), which nn_gemm splits over the pool's threads. */
#include "dplace/nn_txl.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_internal.h"

/* ---- layer norm ------------------------------------------------------------------- */

/* out [N, C] = (inp - mean) rstd g + b; mean, rstd [N] saved */
void dp_nn_layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                             const float *g, const float *b, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C;
        float *y = out + (size_t)n * C;
        float m = 0.0f;
        for (int c = 0; c < C; c++) m += x[c];
        m /= (float)C;
        float var = 0.0f;
        for (int c = 0; c < C; c++) var += (x[c] - m) * (x[c] - m);
        float s = 1.0f / sqrtf(var / (float)C + 1e-5f);
        for (int c = 0; c < C; c++) y[c] = (x[c] - m) * s * g[c] + b[c];
        mean[n] = m;
        rstd[n] = s;
    }
}

/* dinp [N, C], dg, db [C] += ...; dout [N, C] */
void dp_nn_layernorm_backward(float *dinp, float *dg, float *db, const float *dout,
                              const float *inp, const float *mean, const float *rstd,
                              const float *g, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C, *dy = dout + (size_t)n * C;
        float m = mean[n], s = rstd[n];
        float dmean = 0.0f, dnorm_norm = 0.0f; /* means of dnorm and of dnorm * norm */
        for (int c = 0; c < C; c++) {
            float norm = (x[c] - m) * s, dn = dy[c] * g[c];
            dmean += dn;
            dnorm_norm += dn * norm;
        }
        dmean /= (float)C;
        dnorm_norm /= (float)C;
        for (int c = 0; c < C; c++) {
            float norm = (x[c] - m) * s;
            if (dinp) dinp[(size_t)n * C + c] += (dy[c] * g[c] - dmean - norm * dnorm_norm) * s;
            if (dg) dg[c] += dy[c] * norm;
            if (db) db[c] += dy[c];
        }
    }
}

/* ---- sinusoids ------------------------------------------------------------------------ */

/* R [NR, d]: [sin(pos f_k) | cos(pos f_k)], pos = first + r */
void dp_nn_sinusoid_forward(float *R, int first, int NR, int d) {
    assert(d % 2 == 0);
    int half = d / 2;
    for (int r = 0; r < NR; r++) {
        double pos = (double)(first + r);
        for (int k = 0; k < half; k++) {
            double f = pow(10000.0, -2.0 * k / (double)d);
            R[(size_t)r * d + k] = (float)sin(pos * f);
            R[(size_t)r * d + half + k] = (float)cos(pos * f);
        }
    }
}

/* ---- relative multi-head attention ---------------------------------------------------- */

/* qu, qv [T, d], bd [T, NR], ds [T, K], dqu, dqv [T, d] */
size_t dp_nn_rel_attention_scratch_count(int T, int M, int d) {
    size_t K = (size_t)M + T, NR = (size_t)M + 2 * (size_t)T - 1;
    return 4 * (size_t)T * d + (size_t)T * NR + (size_t)T * K;
}

/* qu = q + u, qv = q + vb, row by row */
static void add_bias_rows(float *qu, float *qv, const float *q, const float *u, const float *vb, int T,
                          int d) {
    for (int i = 0; i < T; i++)
        for (int c = 0; c < d; c++) {
            float x = q[(size_t)i * d + c];
            qu[(size_t)i * d + c] = x + u[c];
            qv[(size_t)i * d + c] = x + vb[c];
        }
}

/* out [T, d]; prob [heads, T, K]; see nn_txl.h */
void dp_nn_rel_attention_forward(float *out, float *prob, float *scratch, const float *q,
                                 const float *k, const float *v, const float *rk, const float *u,
                                 const float *vb, int T, int M, int d, int heads, int causal) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    assert(heads >= 1 && d % heads == 0);
    int K = M + T, NR = M + 2 * T - 1, dh = d / heads;
    float scale = 1.0f / sqrtf((float)dh);
    float *qu = scratch, *qv = qu + (size_t)T * d, *bd = qv + (size_t)T * d;
    add_bias_rows(qu, qv, q, u, vb, T, d);
    for (int h = 0; h < heads; h++) {
        float *P = prob + (size_t)h * T * K;
        nn_gemm(0, 1, T, K, dh, 1.0f, qu + h * dh, d, k + h * dh, d, 0.0f, P, K);      /* content */
        nn_gemm(0, 1, T, NR, dh, 1.0f, qv + h * dh, d, rk + h * dh, d, 0.0f, bd, NR); /* position */
        for (int i = 0; i < T; i++) {
            float *p = P + (size_t)i * K;
            const float *b = bd + (size_t)i * NR + M + i + T - 1; /* b[-j] is distance M + i - j */
            int n = causal ? M + i + 1 : K;
            float mx = -INFINITY;
            for (int j = 0; j < n; j++) {
                p[j] = (p[j] + b[-j]) * scale;
                mx = p[j] > mx ? p[j] : mx;
            }
            float z = 0.0f;
            for (int j = 0; j < n; j++) {
                p[j] = nn_exp(p[j] - mx);
                z += p[j];
            }
            float iz = 1.0f / z;
            for (int j = 0; j < n; j++) p[j] *= iz;
            for (int j = n; j < K; j++) p[j] = 0.0f;
        }
        nn_gemm(0, 0, T, dh, K, 1.0f, P, K, v + h * dh, d, 0.0f, out + h * dh, d);
    }
    nn_fp_leave(fp_);
}

/* backward of dp_nn_rel_attention_forward; see nn_txl.h */
void dp_nn_rel_attention_backward(float *dq, float *dk, float *dv, float *drk, float *du,
                                  float *dvb, float *scratch, const float *dout, const float *prob,
                                  const float *q, const float *k, const float *v, const float *rk,
                                  const float *u, const float *vb, int T, int M, int d, int heads,
                                  int causal) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    int K = M + T, NR = M + 2 * T - 1, dh = d / heads;
    float scale = 1.0f / sqrtf((float)dh);
    float *qu = scratch, *qv = qu + (size_t)T * d, *dbd = qv + (size_t)T * d;
    float *ds = dbd + (size_t)T * NR, *dqu = ds + (size_t)T * K, *dqv = dqu + (size_t)T * d;
    add_bias_rows(qu, qv, q, u, vb, T, d);
    for (int h = 0; h < heads; h++) {
        const float *P = prob + (size_t)h * T * K;
        const float *dy = dout + h * dh;
        /* dP [T, K] = dout_h v_h^T; dv_h += P^T dout_h */
        nn_gemm(0, 1, T, K, dh, 1.0f, dy, d, v + h * dh, d, 0.0f, ds, K);
        if (dv) nn_gemm(1, 0, K, dh, T, 1.0f, P, K, dy, d, 1.0f, dv + h * dh, d);
        /* through the softmax and the scale; the position scores' gradient
         * goes back to its distance column */
        memset(dbd, 0, sizeof(float) * (size_t)T * NR);
        for (int i = 0; i < T; i++) {
            const float *p = P + (size_t)i * K;
            float *g = ds + (size_t)i * K, *b = dbd + (size_t)i * NR + M + i + T - 1;
            int n = causal ? M + i + 1 : K;
            float dot = 0.0f;
            for (int j = 0; j < n; j++) dot += p[j] * g[j];
            for (int j = 0; j < n; j++) {
                g[j] = p[j] * (g[j] - dot) * scale;
                b[-j] = g[j];
            }
            for (int j = n; j < K; j++) g[j] = 0.0f;
        }
        nn_gemm(0, 0, T, dh, K, 1.0f, ds, K, k + h * dh, d, 0.0f, dqu + h * dh, d);
        if (dk) nn_gemm(1, 0, K, dh, T, 1.0f, ds, K, qu + h * dh, d, 1.0f, dk + h * dh, d);
        nn_gemm(0, 0, T, dh, NR, 1.0f, dbd, NR, rk + h * dh, d, 0.0f, dqv + h * dh, d);
        if (drk) nn_gemm(1, 0, NR, dh, T, 1.0f, dbd, NR, qv + h * dh, d, 1.0f, drk + h * dh, d);
    }
    for (int i = 0; i < T; i++)
        for (int c = 0; c < d; c++) {
            float a = dqu[(size_t)i * d + c], b = dqv[(size_t)i * d + c];
            if (dq) dq[(size_t)i * d + c] += a + b;
            if (du) du[c] += a;
            if (dvb) dvb[c] += b;
        }
    nn_fp_leave(fp_);
}

/* ---- the placer: parameters ------------------------------------------------------------- */

enum { TXL_LTENSORS = 13 };
#define TXL_LAYER_NAMES(l)                                                                        \
    {"txl.l" #l ".qkv", "txl.l" #l ".wr", "txl.l" #l ".u", "txl.l" #l ".vb", "txl.l" #l ".wo",   \
     "txl.l" #l ".ln1.g", "txl.l" #l ".ln1.b", "txl.l" #l ".ff1.w", "txl.l" #l ".ff1.b",          \
     "txl.l" #l ".ff2.w", "txl.l" #l ".ff2.b", "txl.l" #l ".ln2.g", "txl.l" #l ".ln2.b"}
static const char *const txl_lname[DP_NN_TXL_MAX_LAYERS][TXL_LTENSORS] = {
    TXL_LAYER_NAMES(0), TXL_LAYER_NAMES(1), TXL_LAYER_NAMES(2), TXL_LAYER_NAMES(3),
    TXL_LAYER_NAMES(4), TXL_LAYER_NAMES(5), TXL_LAYER_NAMES(6), TXL_LAYER_NAMES(7)};
_Static_assert(DP_NN_TXL_MAX_LAYERS == 8, "a name row per layer");

/* The sizes of a layer's tensors, in txl_lname's order. */
static void txl_lsizes(size_t *n, const dp_nn_txl_config *c) {
    size_t d = (size_t)c->d_model, di = (size_t)c->d_inner;
    size_t s[TXL_LTENSORS] = {3 * d * d, d * d, d, d, d * d, d, d, di * d, di, d * di, d, d, d};
    memcpy(n, s, sizeof s);
}

/* Lists in, L x 13 layer tensors, out (PyTorch's Linear and LayerNorm
 * initialisation; the position biases u, vb normal 0.02 as Dai et al.). */
int dp_nn_txl_specs(dp_nn_tensor_spec *specs, const dp_nn_txl_config *cfg) {
    int L = cfg->layers, n = 0;
    assert(L >= 1 && L <= DP_NN_TXL_MAX_LAYERS);
    if (!specs) return 4 + TXL_LTENSORS * L;
    float d = (float)cfg->d_model, F = (float)cfg->in_dim, di = (float)cfg->d_inner;
    specs[n++] = (dp_nn_tensor_spec){"txl.in.w", (size_t)cfg->d_model * cfg->in_dim, DP_NN_INIT_UNIFORM, 1.0f / sqrtf(F)};
    specs[n++] = (dp_nn_tensor_spec){"txl.in.b", (size_t)cfg->d_model, DP_NN_INIT_UNIFORM, 1.0f / sqrtf(F)};
    for (int l = 0; l < L; l++) {
        size_t sz[TXL_LTENSORS];
        txl_lsizes(sz, cfg);
        static const dp_nn_init kind[TXL_LTENSORS] = {
            DP_NN_INIT_UNIFORM, DP_NN_INIT_UNIFORM, DP_NN_INIT_NORMAL, DP_NN_INIT_NORMAL, DP_NN_INIT_UNIFORM,
            DP_NN_INIT_CONST,   DP_NN_INIT_ZERO,    DP_NN_INIT_UNIFORM, DP_NN_INIT_UNIFORM,
            DP_NN_INIT_UNIFORM, DP_NN_INIT_UNIFORM, DP_NN_INIT_CONST,   DP_NN_INIT_ZERO};
        float scale[TXL_LTENSORS] = {1.0f / sqrtf(d),  1.0f / sqrtf(d),  0.02f, 0.02f, 1.0f / sqrtf(d), 1.0f, 0.0f,
                                     1.0f / sqrtf(d),  1.0f / sqrtf(d),  1.0f / sqrtf(di), 1.0f / sqrtf(di),
                                     1.0f, 0.0f};
        for (int i = 0; i < TXL_LTENSORS; i++)
            specs[n++] = (dp_nn_tensor_spec){txl_lname[l][i], sz[i], kind[i], scale[i]};
    }
    specs[n++] = (dp_nn_tensor_spec){"txl.out.w", (size_t)cfg->devices * cfg->d_model, DP_NN_INIT_UNIFORM, 1.0f / sqrtf(d)};
    specs[n++] = (dp_nn_tensor_spec){"txl.out.b", (size_t)cfg->devices, DP_NN_INIT_UNIFORM, 1.0f / sqrtf(d)};
    return n;
}

/* ---- the placer: workspace ------------------------------------------------------------------ */

/* Binds the placer and allocates its workspace for B samples, segments of T. */
dp_status dp_nn_txl_init(dp_nn_txl *m, const dp_nn_txl_config *cfg, const dp_nn_params *p, int B,
                         int T, dp_error *err) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    int L = cfg->layers, d = cfg->d_model, F = cfg->in_dim, D = cfg->devices, di = cfg->d_inner;
    if (L < 1 || L > DP_NN_TXL_MAX_LAYERS || d < 2 || d % 2 || cfg->heads < 1 || d % cfg->heads ||
        di < 1 || cfg->mem_len < 0 || D < 1 || F < 1 || B < 1 || T < 1)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "txl placer: layers %d (1..%d), d_model %d (even, a multiple of %d heads), "
                            "d_inner %d, memory %d, devices %d, features %d, batch %d, length %d",
                            L, DP_NN_TXL_MAX_LAYERS, d, cfg->heads, di, cfg->mem_len, D, F, B, T);
    dp_status st;
    if ((st = nn_bind_tensor(&m->w_in, &m->dw_in, p, "txl.in.w", (size_t)d * F, err)) ||
        (st = nn_bind_tensor(&m->b_in, &m->db_in, p, "txl.in.b", (size_t)d, err)) ||
        (st = nn_bind_tensor(&m->w_out, &m->dw_out, p, "txl.out.w", (size_t)D * d, err)) ||
        (st = nn_bind_tensor(&m->b_out, &m->db_out, p, "txl.out.b", (size_t)D, err)))
        return st;
    size_t sz[TXL_LTENSORS];
    txl_lsizes(sz, cfg);
    for (int l = 0; l < L; l++) {
        struct dp_nn_txl_layer *y = &m->layer[l];
        float **val[TXL_LTENSORS] = {&y->qkv, &y->wr, &y->u, &y->vb, &y->wo, &y->g1, &y->b1,
                                     &y->w1, &y->c1, &y->w2, &y->c2, &y->g2, &y->b2};
        float **grad[TXL_LTENSORS] = {&y->dqkv, &y->dwr, &y->du, &y->dvb, &y->dwo, &y->dg1, &y->db1,
                                      &y->dw1, &y->dc1, &y->dw2, &y->dc2, &y->dg2, &y->db2};
        for (int i = 0; i < TXL_LTENSORS; i++)
            if ((st = nn_bind_tensor(val[i], grad[i], p, txl_lname[l][i], sz[i], err))) return st;
    }
    size_t t = (size_t)T, Km = (size_t)cfg->mem_len + t, NRm = (size_t)cfg->mem_len + 2 * t - 1;
    size_t dd = (size_t)d, hs = (size_t)cfg->heads;
    size_t per_layer = 4 * Km * dd + NRm * dd + hs * t * Km + 5 * t * dd + 4 * t + t * (size_t)di;
    size_t total = (size_t)L * per_layer + t * dd + NRm * dd + 3 * t * D + t /* h0 R logp dlogp dlogits ent */
                   + 2 * t * dd + t * dd + 2 * Km * dd + NRm * dd + t * dd + t * (size_t)di /* dh dtmp dq dk dv drk dy df */
                   + dp_nn_rel_attention_scratch_count(T, cfg->mem_len, d) + (size_t)L * cfg->mem_len * dd;
    m->mem = calloc(total, sizeof(float));
    m->u01 = calloc(t * B, sizeof(double));
    if (!m->mem || !m->u01) {
        dp_nn_txl_free(m);
        return dp_error_set(err, DP_STATUS_NOMEM, "txl placer: out of memory for %zu floats", total);
    }
    float *cur = m->mem;
    for (int l = 0; l < L; l++) {
        struct dp_nn_txl_layer *y = &m->layer[l];
        y->cat = nn_carve(&cur, Km * dd);
        y->q = nn_carve(&cur, t * dd);
        y->k = nn_carve(&cur, Km * dd);
        y->v = nn_carve(&cur, Km * dd);
        y->rk = nn_carve(&cur, NRm * dd);
        y->prob = nn_carve(&cur, hs * t * Km);
        y->a = nn_carve(&cur, t * dd);
        y->y1 = nn_carve(&cur, t * dd);
        y->mean1 = nn_carve(&cur, t);
        y->rstd1 = nn_carve(&cur, t);
        y->y = nn_carve(&cur, t * dd);
        y->f = nn_carve(&cur, t * (size_t)di);
        y->y2 = nn_carve(&cur, t * dd);
        y->mean2 = nn_carve(&cur, t);
        y->rstd2 = nn_carve(&cur, t);
        y->out = nn_carve(&cur, t * dd);
    }
    m->h0 = nn_carve(&cur, t * dd);
    m->R = nn_carve(&cur, NRm * dd);
    m->logp = nn_carve(&cur, t * D);
    m->dlogp_t = nn_carve(&cur, t * D);
    m->dlogits = nn_carve(&cur, t * D);
    m->ent_t = nn_carve(&cur, t);
    m->dh = nn_carve(&cur, t * dd);
    m->dtmp = nn_carve(&cur, t * dd);
    m->dq = nn_carve(&cur, t * dd);
    m->dk = nn_carve(&cur, Km * dd);
    m->dv = nn_carve(&cur, Km * dd);
    m->drk = nn_carve(&cur, NRm * dd);
    m->dy = nn_carve(&cur, t * dd);
    m->df = nn_carve(&cur, t * (size_t)di);
    m->attn_scratch = nn_carve(&cur, dp_nn_rel_attention_scratch_count(T, cfg->mem_len, d));
    m->last.mem = nn_carve(&cur, (size_t)L * cfg->mem_len * dd);
    m->last.len = 0;
    m->B = B;
    m->T = T;
    assert((size_t)(cur - m->mem) <= total);
    return DP_STATUS_OK;
}

/* Frees the placer's workspace. */
void dp_nn_txl_free(dp_nn_txl *m) {
    free(m->mem);
    free(m->u01);
    memset(m, 0, sizeof *m);
}

/* ---- the placer: forward and backward ---------------------------------------------------------- */

/* One segment; see nn_txl.h. */
void dp_nn_txl_segment_forward(dp_nn_txl *m, float *logp_sum, float *entropy, int *actions,
                               const float *inp, const dp_nn_txl_state *start,
                               dp_nn_decode_mode mode, dp_rng *rng) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const dp_nn_txl_config *cf = &m->cfg;
    int B = m->B, T = m->T, L = cf->layers, d = cf->d_model, F = cf->in_dim, D = cf->devices;
    int di = cf->d_inner;
    assert((unsigned)mode < DP_NN_DECODE_MODE_COUNT);
    int M = start && start->mem ? start->len : 0;
    assert(M >= 0 && M <= cf->mem_len);
    int K = M + T, NR = M + 2 * T - 1;
    size_t td = (size_t)T * d, md = (size_t)M * d;
    /* the memory first: start may be m->last */
    for (int l = 0; l < L && M > 0; l++) memmove(m->layer[l].cat, start->mem + (size_t)l * md, sizeof(float) * md);
    m->M = M;
    dp_nn_sinusoid_forward(m->R, -(T - 1), NR, d);
    dp_nn_linear_forward(m->h0, inp, m->w_in, m->b_in, T, F, d);
    const float *h = m->h0;
    for (int l = 0; l < L; l++) {
        struct dp_nn_txl_layer *y = &m->layer[l];
        memcpy(y->cat + md, h, sizeof(float) * td);
        const float *hl = y->cat + md;
        dp_nn_linear_forward(y->q, hl, y->qkv, NULL, T, d, d);
        dp_nn_linear_forward(y->k, y->cat, y->qkv + (size_t)d * d, NULL, K, d, d);
        dp_nn_linear_forward(y->v, y->cat, y->qkv + (size_t)2 * d * d, NULL, K, d, d);
        dp_nn_linear_forward(y->rk, m->R, y->wr, NULL, NR, d, d);
        dp_nn_rel_attention_forward(y->a, y->prob, m->attn_scratch, y->q, y->k, y->v, y->rk, y->u, y->vb,
                                    T, M, d, cf->heads, cf->causal);
        /* y1 = h + a Wo^T; y = LN1(y1) */
        memcpy(y->y1, hl, sizeof(float) * td);
        nn_gemm(0, 1, T, d, d, 1.0f, y->a, d, y->wo, d, 1.0f, y->y1, d);
        dp_nn_layernorm_forward(y->y, y->mean1, y->rstd1, y->y1, y->g1, y->b1, T, d);
        /* y2 = y + W2 relu(W1 y + c1) + c2; out = LN2(y2) */
        dp_nn_linear_forward(y->f, y->y, y->w1, y->c1, T, d, di);
        dp_nn_relu_forward(y->f, y->f, (size_t)T * di);
        for (int i = 0; i < T; i++) memcpy(y->y2 + (size_t)i * d, y->c2, sizeof(float) * d);
        nn_gemm(0, 1, T, d, di, 1.0f, y->f, di, y->w2, di, 1.0f, y->y2, d);
        for (size_t i = 0; i < td; i++) y->y2[i] += y->y[i];
        dp_nn_layernorm_forward(y->out, y->mean2, y->rstd2, y->y2, y->g2, y->b2, T, d);
        h = y->out;
    }
    /* the device head, shared by the samples */
    dp_nn_linear_forward(m->logp, h, m->w_out, m->b_out, T, d, D);
    dp_nn_log_softmax_forward(m->logp, m->logp, T, D);
    dp_nn_categorical_entropy_forward(m->ent_t, m->logp, T, D);
    if (mode == DP_NN_DECODE_MODE_SAMPLE) /* in the order of a loop over steps, then samples */
        for (size_t i = 0; i < (size_t)T * B; i++) m->u01[i] = dp_rng_uniform(rng);
    double ent = 0.0;
    for (int t = 0; t < T; t++) ent += m->ent_t[t];
    for (int b = 0; b < B; b++) {
        double s = 0.0;
        for (int t = 0; t < T; t++) {
            const float *lp = m->logp + (size_t)t * D;
            int *a = &actions[(size_t)b * T + t];
            if (mode == DP_NN_DECODE_MODE_SAMPLE) *a = nn_categorical_pick(lp, m->u01[(size_t)t * B + b], D);
            else if (mode == DP_NN_DECODE_MODE_GREEDY) dp_nn_categorical_argmax(a, lp, 1, D);
            assert(*a >= 0 && *a < D);
            s += lp[*a];
        }
        logp_sum[b] = (float)s;
        if (entropy) entropy[b] = (float)ent;
    }
    /* the memory for the next segment: the last positions of each layer's [memory ; input] */
    int keep = K < cf->mem_len ? K : cf->mem_len;
    for (int l = 0; l < L; l++)
        memcpy(m->last.mem + (size_t)l * keep * d, m->layer[l].cat + (size_t)(K - keep) * d,
               sizeof(float) * (size_t)keep * d);
    m->last.len = keep;
    nn_fp_leave(fp_);
}

/* Backward of the last forward; see nn_txl.h. */
void dp_nn_txl_segment_backward(dp_nn_txl *m, float *dinp, const float *dlogp,
                                const float *dlogp_step, const float *dentropy,
                                const int *actions, const float *inp) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const dp_nn_txl_config *cf = &m->cfg;
    int B = m->B, T = m->T, L = cf->layers, d = cf->d_model, F = cf->in_dim, D = cf->devices;
    int di = cf->d_inner, M = m->M, K = M + T, NR = M + 2 * T - 1;
    size_t td = (size_t)T * d, md = (size_t)M * d, dd = (size_t)d * d;
    /* d loss / d logp [T, D] summed over the samples, then the head */
    float *g = m->dlogp_t;
    memset(g, 0, sizeof(float) * (size_t)T * D);
    double de = 0.0;
    for (int b = 0; b < B; b++) {
        if (dentropy) de += dentropy[b];
        for (int t = 0; t < T; t++) {
            float w = (dlogp ? dlogp[b] : 0.0f) + (dlogp_step ? dlogp_step[(size_t)b * T + t] : 0.0f);
            g[(size_t)t * D + actions[(size_t)b * T + t]] += w;
        }
    }
    if (de != 0.0)
        for (int t = 0; t < T; t++) {
            float *dl = g + (size_t)t * D;
            float dt = (float)de;
            dp_nn_categorical_entropy_backward(dl, &dt, m->logp + (size_t)t * D, 1, D);
        }
    float *dlogits = m->dlogits;
    memset(dlogits, 0, sizeof(float) * (size_t)T * D);
    dp_nn_log_softmax_backward(dlogits, g, m->logp, T, D);
    const float *hL = m->layer[L - 1].out;
    memset(m->dh, 0, sizeof(float) * td);
    dp_nn_linear_backward(m->dh, m->dw_out, m->db_out, dlogits, hL, m->w_out, T, d, D);
    for (int l = L - 1; l >= 0; l--) {
        struct dp_nn_txl_layer *y = &m->layer[l];
        const float *hl = y->cat + md;
        /* LN2, the feed-forward block and its residual: dy = dy2 + FF'(dy2) */
        memset(m->dy, 0, sizeof(float) * td);
        dp_nn_layernorm_backward(m->dy, y->dg2, y->db2, m->dh, y->y2, y->mean2, y->rstd2, y->g2, T, d);
        memset(m->df, 0, sizeof(float) * (size_t)T * di);
        dp_nn_linear_backward(m->df, y->dw2, y->dc2, m->dy, y->f, y->w2, T, di, d);
        for (size_t i = 0; i < (size_t)T * di; i++)
            if (!(y->f[i] > 0.0f)) m->df[i] = 0.0f;
        dp_nn_linear_backward(m->dy, y->dw1, y->dc1, m->df, y->y, y->w1, T, d, di);
        /* LN1 and the attention's residual: dh = dy1 + attention'(dy1) */
        memset(m->dh, 0, sizeof(float) * td);
        dp_nn_layernorm_backward(m->dh, y->dg1, y->db1, m->dy, y->y1, y->mean1, y->rstd1, y->g1, T, d);
        float *da = m->dtmp;
        memset(da, 0, sizeof(float) * td);
        dp_nn_linear_backward(da, y->dwo, NULL, m->dh, y->a, y->wo, T, d, d);
        memset(m->dq, 0, sizeof(float) * td);
        memset(m->dk, 0, sizeof(float) * (size_t)K * d);
        memset(m->dv, 0, sizeof(float) * (size_t)K * d);
        memset(m->drk, 0, sizeof(float) * (size_t)NR * d);
        dp_nn_rel_attention_backward(m->dq, m->dk, m->dv, m->drk, y->du, y->dvb, m->attn_scratch, da, y->prob,
                                     y->q, y->k, y->v, y->rk, y->u, y->vb, T, M, d, cf->heads, cf->causal);
        /* the projections; the memory rows of dk, dv reach the weights only
         * (stop-gradient into the memory) */
        dp_nn_linear_backward(m->dh, y->dqkv, NULL, m->dq, hl, y->qkv, T, d, d);
        nn_gemm(1, 0, d, d, K, 1.0f, m->dk, d, y->cat, d, 1.0f, y->dqkv + dd, d);
        nn_gemm(1, 0, d, d, K, 1.0f, m->dv, d, y->cat, d, 1.0f, y->dqkv + 2 * dd, d);
        nn_gemm(0, 0, T, d, d, 1.0f, m->dk + md, d, y->qkv + dd, d, 1.0f, m->dh, d);
        nn_gemm(0, 0, T, d, d, 1.0f, m->dv + md, d, y->qkv + 2 * dd, d, 1.0f, m->dh, d);
        nn_gemm(1, 0, d, d, NR, 1.0f, m->drk, d, m->R, d, 1.0f, y->dwr, d);
    }
    dp_nn_linear_backward(dinp, m->dw_in, m->db_in, m->dh, inp, m->w_in, T, F, d);
    nn_fp_leave(fp_);
}
