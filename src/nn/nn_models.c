/* Agent models composed from the layers: feed-forward grouper, seq2seq
 * placer with additive attention, GCN encoder with Deep Graph Infomax. */
#include "dplace/nn_models.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_internal.h"
#include "nn_kern.h"

/* Finds tensor name in p with count floats; fills *val and *grad. */
dp_status nn_bind_tensor(float **val, float **grad, const dp_nn_params *p, const char *name,
                         size_t count, dp_error *err) {
    int i = dp_nn_params_find(p, name);
    if (i < 0) return dp_error_set(err, DP_STATUS_INVALID, "nn model: no tensor %s", name);
    if (p->size[i] != count)
        return dp_error_set(err, DP_STATUS_INVALID, "nn model: tensor %s has %zu floats, needs %zu",
                            name, p->size[i], count);
    *val = dp_nn_params_tensor(p, i);
    *grad = dp_nn_params_grad(p, i);
    return DP_STATUS_OK;
}

/* Carves n floats off a bump allocator over one block. */
float *nn_carve(float **cur, size_t n) {
    float *r = *cur;
    *cur += n;
    return r;
}

/* Picks actions [N] from logp [N, D] per mode (TEACHER: leaves them). */
void nn_pick_actions(int *actions, const float *logp, dp_nn_decode_mode mode, dp_rng *rng, int N,
                     int D) {
    if (mode == DP_NN_DECODE_MODE_SAMPLE) dp_nn_categorical_sample(actions, logp, rng, N, D);
    else if (mode == DP_NN_DECODE_MODE_GREEDY) dp_nn_categorical_argmax(actions, logp, N, D);
    else
        for (int n = 0; n < N; n++) assert(actions[n] >= 0 && actions[n] < D);
}

/* ---- grouper ---------------------------------------------------------------- */

/* Lists the grouper's 4 tensors (PyTorch's nn.Linear initialisation). */
int dp_nn_grouper_specs(dp_nn_tensor_spec *specs, const dp_nn_grouper_config *cfg) {
    if (specs) {
        float s1 = 1.0f / sqrtf((float)cfg->in_dim), s2 = 1.0f / sqrtf((float)cfg->hidden);
        specs[0] = (dp_nn_tensor_spec){"grouper.w1", (size_t)cfg->hidden * cfg->in_dim, DP_NN_INIT_UNIFORM, s1};
        specs[1] = (dp_nn_tensor_spec){"grouper.b1", (size_t)cfg->hidden, DP_NN_INIT_UNIFORM, s1};
        specs[2] = (dp_nn_tensor_spec){"grouper.w2", (size_t)cfg->groups * cfg->hidden, DP_NN_INIT_UNIFORM, s2};
        specs[3] = (dp_nn_tensor_spec){"grouper.b2", (size_t)cfg->groups, DP_NN_INIT_UNIFORM, s2};
    }
    return 4;
}

/* Binds the grouper to p and allocates its workspace for N rows. */
dp_status dp_nn_grouper_init(dp_nn_grouper *m, const dp_nn_grouper_config *cfg,
                             const dp_nn_params *p, int N, dp_error *err) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    int F = cfg->in_dim, Hd = cfg->hidden, G = cfg->groups;
    dp_status st;
    if ((st = nn_bind_tensor(&m->w1, &m->dw1, p, "grouper.w1", (size_t)Hd * F, err)) ||
        (st = nn_bind_tensor(&m->b1, &m->db1, p, "grouper.b1", (size_t)Hd, err)) ||
        (st = nn_bind_tensor(&m->w2, &m->dw2, p, "grouper.w2", (size_t)G * Hd, err)) ||
        (st = nn_bind_tensor(&m->b2, &m->db2, p, "grouper.b2", (size_t)G, err)))
        return st;
    size_t n = (size_t)N;
    size_t total = n * Hd * 2 + n * G * 6;
    m->mem = malloc(sizeof(float) * total);
    if (!m->mem) return dp_error_set(err, DP_STATUS_NOMEM, "grouper: out of memory for %d rows", N);
    float *cur = m->mem;
    m->cap = N;
    m->h = nn_carve(&cur, n * Hd);
    m->dh = nn_carve(&cur, n * Hd);
    m->l = nn_carve(&cur, n * G);
    m->tact = nn_carve(&cur, n * G);
    m->logp = nn_carve(&cur, n * G);
    m->noise = nn_carve(&cur, n * G);
    m->dlogp = nn_carve(&cur, n * G);
    m->dl = nn_carve(&cur, n * G);
    return DP_STATUS_OK;
}

/* Frees the grouper's workspace. */
void dp_nn_grouper_free(dp_nn_grouper *m) {
    free(m->mem);
    memset(m, 0, sizeof *m);
}

/* The grouper's row-wise work, a row at a time in one pass (forward: the
 * logits, the prior, the log-softmax and the entropy; backward: the
 * gradient of the logits), split over the pool by rows. Each row takes
 * exactly the operations of the layer functions it stands for
 * (dp_nn_policy_logits_forward, dp_nn_log_softmax_forward,
 * dp_nn_categorical_entropy_forward; the entropy's gradient,
 * dp_nn_log_softmax_backward, dp_nn_policy_logits_backward, each into a
 * zeroed array), so the numbers are theirs whatever the threads; the
 * backward's intermediate rows stay in a buffer of G floats instead of
 * three passes over [N, G] arrays. */
typedef struct grouper_rows_job {
    dp_nn_grouper *m;
    const float *noise;      /* forward: [N, G] or NULL */
    float *ent;              /* forward: [N] entropies or NULL */
    const int *actions;      /* backward */
    const float *dlogp_rows; /* backward: [N] or NULL */
    float dlogp, dentropy;
    int N;
} grouper_rows_job;

static void grouper_rows_forward(void *ctx, int tid, int nt) {
    const grouper_rows_job *j = ctx;
    dp_nn_grouper *m = j->m;
    const nn_kernels *k = nn_kern_get();
    int G = m->cfg.groups, r0, r1;
    nn_part_rows(&r0, &r1, j->N, tid, nt);
    float tc = m->cfg.tanh_c, it = 1.0f / m->cfg.temperature;
    for (int n = r0; n < r1; n++) {
        size_t o = (size_t)n * G;
        const float *x = m->l + o;
        float *y = m->logp + o, *t = m->tact + o;
        if (tc > 0.0f) {
            for (int d = 0; d < G; d++) {
                float a = nn_tanh(x[d] * it);
                t[d] = a;
                y[d] = tc * a;
            }
        } else {
            for (int d = 0; d < G; d++) y[d] = x[d] * it;
        }
        if (j->noise)
            for (int d = 0; d < G; d++) y[d] += j->noise[o + d];
        if (m->prior) y[m->prior[n]] += m->prior_scale;
        float mx = y[0];
        for (int d = 1; d < G; d++) mx = y[d] > mx ? y[d] : mx;
        float lse = mx + logf(k->sum_exp(y, mx, G));
        for (int d = 0; d < G; d++) y[d] = y[d] - lse;
        if (j->ent) {
            float h = 0.0f;
            for (int d = 0; d < G; d++) h -= nn_exp(y[d]) * y[d];
            j->ent[n] = h;
        }
    }
}

static void grouper_rows_backward(void *ctx, int tid, int nt) {
    const grouper_rows_job *j = ctx;
    dp_nn_grouper *m = j->m;
    int G = m->cfg.groups, r0, r1;
    nn_part_rows(&r0, &r1, j->N, tid, nt);
    float tc = m->cfg.tanh_c, it = 1.0f / m->cfg.temperature, sc = tc * it, de = j->dentropy;
    float dy[G];
    for (int n = r0; n < r1; n++) {
        size_t o = (size_t)n * G;
        const float *y = m->logp + o, *t = m->tact + o;
        float *dl = m->dlogp + o; /* the gradient of l */
        for (int d = 0; d < G; d++) dy[d] = 0.0f;
        dy[j->actions[n]] += j->dlogp + (j->dlogp_rows ? j->dlogp_rows[n] : 0.0f);
        if (de != 0.0f)
            for (int d = 0; d < G; d++) dy[d] -= de * nn_exp(y[d]) * (1.0f + y[d]);
        float s = 0.0f;
        for (int d = 0; d < G; d++) s += dy[d];
        for (int d = 0; d < G; d++) dy[d] = 0.0f + (dy[d] - nn_exp(y[d]) * s); /* through the log-softmax */
        if (tc > 0.0f)
            for (int d = 0; d < G; d++) dl[d] = 0.0f + dy[d] * sc * (1.0f - t[d] * t[d]);
        else
            for (int d = 0; d < G; d++) dl[d] = 0.0f + dy[d] * it;
    }
}

/* Runs the grouper over inp [N, F]; returns sum of log p(actions). */
float dp_nn_grouper_forward(dp_nn_grouper *m, int *actions, float *entropy, const float *inp,
                            dp_nn_decode_mode mode, dp_rng *rng, float noise_amp, int N) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    assert(N <= m->cap);
    int F = m->cfg.in_dim, Hd = m->cfg.hidden, G = m->cfg.groups;
    dp_nn_linear_forward(m->h, inp, m->w1, m->b1, N, F, Hd);
    dp_nn_relu_forward(m->h, m->h, (size_t)N * Hd);
    dp_nn_linear_forward(m->l, m->h, m->w2, m->b2, N, Hd, G);
    const float *noise = NULL;
    if (noise_amp > 0.0f) {
        dp_nn_noise_fill(m->noise, rng, (size_t)N * G, noise_amp);
        noise = m->noise;
    }
    float *e = entropy ? m->dl : NULL; /* [N] of scratch until backward */
    grouper_rows_job j = {m, noise, e, NULL, NULL, 0.0f, 0.0f, N};
    nn_parallel((size_t)N * G >= NN_ROWS_PAR_WORK ? nn_pool_threads() : 1, grouper_rows_forward, &j);
    nn_pick_actions(actions, m->logp, mode, rng, N, G);
    double s = 0.0;
    for (int n = 0; n < N; n++) s += m->logp[(size_t)n * G + actions[n]];
    if (entropy) {
        double h = 0.0;
        for (int n = 0; n < N; n++) h += e[n];
        *entropy = (float)h;
    }
    float r_ = (float)s;
    nn_fp_leave(fp_);
    return r_;
}

/* Accumulates the gradients of dlogp * logp_sum + dentropy * entropy. */
void dp_nn_grouper_backward(dp_nn_grouper *m, float *dinp, const int *actions, const float *inp,
                            float dlogp, float dentropy, int N) {
    dp_nn_grouper_backward_rows(m, dinp, actions, inp, NULL, dlogp, dentropy, N);
}

/* The same with a weight per row added: sum_n (dlogp + dlogp_rows[n]) log p(actions[n]). */
void dp_nn_grouper_backward_rows(dp_nn_grouper *m, float *dinp, const int *actions, const float *inp,
                                 const float *dlogp_rows, float dlogp, float dentropy, int N) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    int F = m->cfg.in_dim, Hd = m->cfg.hidden, G = m->cfg.groups;
    float *dlp = m->dlogp; /* the gradient of l */
    grouper_rows_job j = {m, NULL, NULL, actions, dlogp_rows, dlogp, dentropy, N};
    nn_parallel((size_t)N * G >= NN_ROWS_PAR_WORK ? nn_pool_threads() : 1, grouper_rows_backward, &j);
    memset(m->dh, 0, sizeof(float) * (size_t)N * Hd);
    dp_nn_linear_backward(m->dh, m->dw2, m->db2, dlp, m->h, m->w2, N, Hd, G);
    /* through the ReLU: h > 0 where the pre-activation was positive */
    for (size_t i = 0; i < (size_t)N * Hd; i++)
        if (!(m->h[i] > 0.0f)) m->dh[i] = 0.0f;
    dp_nn_linear_backward(dinp, m->dw1, m->db1, m->dh, inp, m->w1, N, F, Hd);
    nn_fp_leave(fp_);
}

/* ---- GCN encoder and DGI ------------------------------------------------------------- */

static const char *const gcn_wname[DP_NN_GCN_MAX_LAYERS] = {
    "gcn0.weight", "gcn1.weight", "gcn2.weight", "gcn3.weight",
    "gcn4.weight", "gcn5.weight", "gcn6.weight", "gcn7.weight"};
static const char *const gcn_bname[DP_NN_GCN_MAX_LAYERS] = {
    "gcn0.bias", "gcn1.bias", "gcn2.bias", "gcn3.bias",
    "gcn4.bias", "gcn5.bias", "gcn6.bias", "gcn7.bias"};
static const char *const gcn_aname[DP_NN_GCN_MAX_LAYERS] = {
    "gcn0.prelu", "gcn1.prelu", "gcn2.prelu", "gcn3.prelu",
    "gcn4.prelu", "gcn5.prelu", "gcn6.prelu", "gcn7.prelu"};
_Static_assert(sizeof gcn_wname / sizeof gcn_wname[0] == DP_NN_GCN_MAX_LAYERS, "gcn names");

static int gcn_in(const dp_nn_gcn_config *c, int l) { return l == 0 ? c->in_dim : c->hidden; }

/* Lists 3 tensors per layer (Glorot weights, zero bias, PReLU slope 0.25)
 * and the discriminator's weight and bias. */
int dp_nn_gcn_specs(dp_nn_tensor_spec *specs, const dp_nn_gcn_config *cfg) {
    int L = cfg->layers, H = cfg->hidden;
    assert(L >= 1 && L <= DP_NN_GCN_MAX_LAYERS);
    if (specs) {
        for (int l = 0; l < L; l++) {
            int in = gcn_in(cfg, l);
            float g = sqrtf(6.0f / (float)(in + H));
            specs[3 * l] = (dp_nn_tensor_spec){gcn_wname[l], (size_t)H * in, DP_NN_INIT_UNIFORM, g};
            specs[3 * l + 1] = (dp_nn_tensor_spec){gcn_bname[l], (size_t)H, DP_NN_INIT_ZERO, 0.0f};
            specs[3 * l + 2] = (dp_nn_tensor_spec){gcn_aname[l], 1, DP_NN_INIT_CONST, 0.25f};
        }
        specs[3 * L] = (dp_nn_tensor_spec){"dgi.weight", (size_t)H * H, DP_NN_INIT_UNIFORM,
                                           sqrtf(6.0f / (float)(2 * H))};
        specs[3 * L + 1] = (dp_nn_tensor_spec){"dgi.bias", 1, DP_NN_INIT_ZERO, 0.0f};
    }
    return 3 * L + 2;
}

/* Binds the GCN to p and allocates its workspace for N nodes. */
dp_status dp_nn_gcn_init(dp_nn_gcn *m, const dp_nn_gcn_config *cfg, const dp_nn_params *p, int N,
                         dp_error *err) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    int L = cfg->layers, H = cfg->hidden, F = cfg->in_dim;
    if (L < 1 || L > DP_NN_GCN_MAX_LAYERS)
        return dp_error_set(err, DP_STATUS_INVALID, "gcn: %d layers (1..%d)", L, DP_NN_GCN_MAX_LAYERS);
    dp_status st;
    for (int l = 0; l < L; l++) {
        if ((st = nn_bind_tensor(&m->w[l], &m->dw[l], p, gcn_wname[l], (size_t)H * gcn_in(cfg, l), err)) ||
            (st = nn_bind_tensor(&m->b[l], &m->db[l], p, gcn_bname[l], (size_t)H, err)) ||
            (st = nn_bind_tensor(&m->a[l], &m->da[l], p, gcn_aname[l], 1, err)))
            return st;
    }
    if ((st = nn_bind_tensor(&m->disc, &m->ddisc, p, "dgi.weight", (size_t)H * H, err)) ||
        (st = nn_bind_tensor(&m->disc_b, &m->ddisc_b, p, "dgi.bias", 1, err)))
        return st;
    size_t n = (size_t)N, lnh = (size_t)L * n * H;
    size_t total = n * F + 6 * lnh + 3 * (size_t)H + 6 * n + 5 * n * H + (size_t)H;
    m->mem = calloc(total, sizeof(float));
    m->perm = malloc(sizeof(int) * n);
    if (!m->mem || !m->perm) {
        dp_nn_gcn_free(m);
        return dp_error_set(err, DP_STATUS_NOMEM, "gcn: out of memory for %d nodes", N);
    }
    float *cur = m->mem;
    m->xc = nn_carve(&cur, n * F);
    for (int k = 0; k < 2; k++) {
        m->xw[k] = nn_carve(&cur, lnh);
        m->pre[k] = nn_carve(&cur, lnh);
        m->out[k] = nn_carve(&cur, lnh);
    }
    m->summary = nn_carve(&cur, H);
    m->ws = nn_carve(&cur, H);
    m->scores = nn_carve(&cur, 2 * n);
    m->labels = nn_carve(&cur, 2 * n);
    m->dscores = nn_carve(&cur, 2 * n);
    m->dsum = nn_carve(&cur, H);
    m->dcur = nn_carve(&cur, n * H);
    m->dnext = nn_carve(&cur, n * H);
    m->scratch = nn_carve(&cur, n * H);
    m->dH = nn_carve(&cur, 2 * n * H);
    m->hscratch = nn_carve(&cur, H);
    assert((size_t)(cur - m->mem) <= total);
    m->N = N;
    return DP_STATUS_OK;
}

/* Frees the GCN's workspace. */
void dp_nn_gcn_free(dp_nn_gcn *m) {
    free(m->mem);
    free(m->perm);
    memset(m, 0, sizeof *m);
}

/* Runs the GCN stack on inp [N, F] into workspace pass k; returns [N, H]. */
static const float *gcn_pass(dp_nn_gcn *m, int k, const dp_nn_graph *g, const float *inp) {
    int L = m->cfg.layers, H = m->cfg.hidden, N = m->N;
    size_t nh = (size_t)N * H;
    for (int l = 0; l < L; l++) {
        const float *in = l == 0 ? inp : m->out[k] + (l - 1) * nh;
        dp_nn_gcn_forward(m->pre[k] + l * nh, m->xw[k] + l * nh, in, g, m->w[l], m->b[l], N,
                          gcn_in(&m->cfg, l), H);
        dp_nn_prelu_forward(m->out[k] + l * nh, m->pre[k] + l * nh, m->a[l], N, H, 1);
    }
    return m->out[k] + (L - 1) * nh;
}

/* Backward of gcn_pass k from dout [N, H]; dinp [N, F] may be NULL. */
static void gcn_pass_backward(dp_nn_gcn *m, int k, float *dinp, const dp_nn_graph *g,
                              const float *inp, const float *dout) {
    int L = m->cfg.layers, H = m->cfg.hidden, N = m->N;
    size_t nh = (size_t)N * H;
    memcpy(m->dcur, dout, sizeof(float) * nh);
    for (int l = L - 1; l >= 0; l--) {
        memset(m->dnext, 0, sizeof(float) * nh);
        dp_nn_prelu_backward(m->dnext, m->da[l], m->dcur, m->pre[k] + l * nh, m->a[l], N, H, 1);
        const float *in = l == 0 ? inp : m->out[k] + (l - 1) * nh;
        float *din = l == 0 ? dinp : m->dcur;
        if (l > 0) memset(m->dcur, 0, sizeof(float) * nh);
        dp_nn_gcn_backward(din, m->dw[l], m->db[l], m->scratch, m->dnext, in, g, m->w[l], N,
                           gcn_in(&m->cfg, l), H);
    }
}

/* Node embeddings of inp [N, F]. */
const float *dp_nn_gcn_encode(dp_nn_gcn *m, const dp_nn_graph *g, const float *inp) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const float *r_ = gcn_pass(m, 0, g, inp);
    nn_fp_leave(fp_);
    return r_;
}

/* Backward of dp_nn_gcn_encode. */
void dp_nn_gcn_encode_backward(dp_nn_gcn *m, float *dinp, const dp_nn_graph *g, const float *inp,
                               const float *dout) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    gcn_pass_backward(m, 0, dinp, g, inp, dout);
    nn_fp_leave(fp_);
}

/* DGI loss of inp against its node-permuted corruption. */
float dp_nn_gcn_dgi_forward(dp_nn_gcn *m, const dp_nn_graph *g, const float *inp, const int *perm,
                            dp_rng *rng) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    int N = m->N, H = m->cfg.hidden, F = m->cfg.in_dim;
    if (perm) memcpy(m->perm, perm, sizeof(int) * (size_t)N);
    else dp_nn_permutation_sample(m->perm, rng, N);
    dp_nn_permute_rows_forward(m->xc, inp, m->perm, N, F);
    const float *h0 = gcn_pass(m, 0, g, inp);
    const float *h1 = gcn_pass(m, 1, g, m->xc);
    dp_nn_readout_forward(m->summary, h0, N, H);
    dp_nn_bilinear_forward(m->scores, m->ws, h0, m->summary, m->disc, m->disc_b, N, H);
    dp_nn_bilinear_forward(m->scores + N, m->ws, h1, m->summary, m->disc, m->disc_b, N, H);
    for (int n = 0; n < N; n++) {
        m->labels[n] = 1.0f;
        m->labels[N + n] = 0.0f;
    }
    float r_ = dp_nn_bce_logits_forward(m->scores, m->labels, 2 * N);
    nn_fp_leave(fp_);
    return r_;
}

/* Backward of the DGI loss, scaled by dloss. */
void dp_nn_gcn_dgi_backward(dp_nn_gcn *m, const dp_nn_graph *g, const float *inp, float dloss) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    int N = m->N, H = m->cfg.hidden, L = m->cfg.layers;
    size_t nh = (size_t)N * H;
    const float *h0 = m->out[0] + (L - 1) * nh, *h1 = m->out[1] + (L - 1) * nh;
    float *dh0 = m->dH, *dh1 = m->dH + nh;
    memset(m->dscores, 0, sizeof(float) * 2 * (size_t)N);
    memset(m->dH, 0, sizeof(float) * 2 * nh);
    memset(m->dsum, 0, sizeof(float) * H);
    dp_nn_bce_logits_backward(m->dscores, dloss, m->scores, m->labels, 2 * N);
    dp_nn_bilinear_backward(dh0, m->dsum, m->ddisc, m->ddisc_b, m->hscratch, m->dscores, m->ws, h0,
                            m->summary, m->disc, N, H);
    dp_nn_bilinear_backward(dh1, m->dsum, m->ddisc, m->ddisc_b, m->hscratch, m->dscores + N, m->ws,
                            h1, m->summary, m->disc, N, H);
    dp_nn_readout_backward(dh0, m->dsum, m->summary, N, H);
    gcn_pass_backward(m, 1, NULL, g, m->xc, dh1);
    gcn_pass_backward(m, 0, NULL, g, inp, dh0);
    nn_fp_leave(fp_);
}
