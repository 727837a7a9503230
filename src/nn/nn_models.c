/* Agent models composed from the layers: feed-forward grouper, seq2seq
 * placer with additive attention, GCN encoder with Deep Graph Infomax. */
#include "dplace/nn_models.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_internal.h"

/* Finds tensor name in p with count floats; fills *val and *grad. */
static dp_status bind_tensor(float **val, float **grad, const dp_nn_params *p, const char *name,
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
static float *carve(float **cur, size_t n) {
    float *r = *cur;
    *cur += n;
    return r;
}

/* Picks actions [N] from logp [N, D] per mode (TEACHER: leaves them). */
static void pick_actions(int *actions, const float *logp, dp_nn_decode_mode mode, dp_rng *rng,
                         int N, int D) {
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
    if ((st = bind_tensor(&m->w1, &m->dw1, p, "grouper.w1", (size_t)Hd * F, err)) ||
        (st = bind_tensor(&m->b1, &m->db1, p, "grouper.b1", (size_t)Hd, err)) ||
        (st = bind_tensor(&m->w2, &m->dw2, p, "grouper.w2", (size_t)G * Hd, err)) ||
        (st = bind_tensor(&m->b2, &m->db2, p, "grouper.b2", (size_t)G, err)))
        return st;
    size_t n = (size_t)N;
    size_t total = n * Hd * 2 + n * G * 6;
    m->mem = malloc(sizeof(float) * total);
    if (!m->mem) return dp_error_set(err, DP_STATUS_NOMEM, "grouper: out of memory for %d rows", N);
    float *cur = m->mem;
    m->cap = N;
    m->h = carve(&cur, n * Hd);
    m->dh = carve(&cur, n * Hd);
    m->l = carve(&cur, n * G);
    m->tact = carve(&cur, n * G);
    m->logp = carve(&cur, n * G);
    m->noise = carve(&cur, n * G);
    m->dlogp = carve(&cur, n * G);
    m->dl = carve(&cur, n * G);
    return DP_STATUS_OK;
}

/* Frees the grouper's workspace. */
void dp_nn_grouper_free(dp_nn_grouper *m) {
    free(m->mem);
    memset(m, 0, sizeof *m);
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
    dp_nn_policy_logits_forward(m->logp, m->tact, m->l, noise, N, G, m->cfg.tanh_c,
                                m->cfg.temperature);
    dp_nn_log_softmax_forward(m->logp, m->logp, N, G);
    pick_actions(actions, m->logp, mode, rng, N, G);
    double s = 0.0;
    for (int n = 0; n < N; n++) s += m->logp[(size_t)n * G + actions[n]];
    if (entropy) {
        float *e = m->dl; /* [N] of scratch until backward */
        dp_nn_categorical_entropy_forward(e, m->logp, N, G);
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
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    int F = m->cfg.in_dim, Hd = m->cfg.hidden, G = m->cfg.groups;
    size_t nG = (size_t)N * G;
    float *dlp = m->dlogp, *dlg = m->dl;
    memset(dlp, 0, sizeof(float) * nG);
    for (int n = 0; n < N; n++) dlp[(size_t)n * G + actions[n]] += dlogp;
    if (dentropy != 0.0f)
        for (size_t i = 0; i < nG; i++) dlp[i] -= dentropy * nn_exp(m->logp[i]) * (1.0f + m->logp[i]);
    memset(dlg, 0, sizeof(float) * nG);
    dp_nn_log_softmax_backward(dlg, dlp, m->logp, N, G);
    memset(dlp, 0, sizeof(float) * nG); /* now: gradient of l */
    dp_nn_policy_logits_backward(dlp, dlg, m->tact, N, G, m->cfg.tanh_c, m->cfg.temperature);
    memset(m->dh, 0, sizeof(float) * (size_t)N * Hd);
    dp_nn_linear_backward(m->dh, m->dw2, m->db2, dlp, m->h, m->w2, N, Hd, G);
    /* through the ReLU: h > 0 where the pre-activation was positive */
    for (size_t i = 0; i < (size_t)N * Hd; i++)
        if (!(m->h[i] > 0.0f)) m->dh[i] = 0.0f;
    dp_nn_linear_backward(dinp, m->dw1, m->db1, m->dh, inp, m->w1, N, F, Hd);
    nn_fp_leave(fp_);
}

/* ---- seq2seq placer --------------------------------------------------------------- */

static int s2s_in_x(const dp_nn_seq2seq_config *c) {
    return c->emb_dim + (c->mode == DP_NN_ATTENTION_MODE_BEFORE ? 2 * c->hidden : 0);
}

static int s2s_out_x(const dp_nn_seq2seq_config *c) {
    int join = c->mode == DP_NN_ATTENTION_MODE_AFTER || c->ctx_to_output;
    return c->hidden + (join ? 2 * c->hidden : 0);
}

/* Lists the placer's 8 tensors. */
int dp_nn_seq2seq_specs(dp_nn_tensor_spec *specs, const dp_nn_seq2seq_config *cfg) {
    if (specs) {
        int F = cfg->in_dim, H = cfg->hidden, A = cfg->attn_dim, D = cfg->devices, E = cfg->emb_dim;
        int ix = s2s_in_x(cfg), ox = s2s_out_x(cfg);
        float sh = 1.0f / sqrtf((float)H);
        specs[0] = (dp_nn_tensor_spec){"placer.enc", 2 * dp_nn_lstm_param_count(F, H), DP_NN_INIT_UNIFORM, sh};
        specs[1] = (dp_nn_tensor_spec){"placer.wk", (size_t)A * 2 * H, DP_NN_INIT_UNIFORM, 1.0f / sqrtf(2.0f * H)};
        specs[2] = (dp_nn_tensor_spec){"placer.wq", (size_t)A * H, DP_NN_INIT_UNIFORM, sh};
        specs[3] = (dp_nn_tensor_spec){"placer.v", (size_t)A, DP_NN_INIT_UNIFORM, 1.0f / sqrtf((float)A)};
        specs[4] = (dp_nn_tensor_spec){"placer.emb", (size_t)(D + 1) * E, DP_NN_INIT_NORMAL, 1.0f};
        specs[5] = (dp_nn_tensor_spec){"placer.dec", dp_nn_lstm_param_count(ix, H), DP_NN_INIT_UNIFORM, sh};
        specs[6] = (dp_nn_tensor_spec){"placer.wo", (size_t)D * ox, DP_NN_INIT_UNIFORM, 1.0f / sqrtf((float)ox)};
        specs[7] = (dp_nn_tensor_spec){"placer.bo", (size_t)D, DP_NN_INIT_UNIFORM, 1.0f / sqrtf((float)ox)};
    }
    return 8;
}

/* Binds the placer to p and allocates its workspace for batch B, length T. */
dp_status dp_nn_seq2seq_init(dp_nn_seq2seq *m, const dp_nn_seq2seq_config *cfg,
                             const dp_nn_params *p, int B, int T, dp_error *err) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    if ((unsigned)cfg->mode >= DP_NN_ATTENTION_MODE_COUNT)
        return dp_error_set(err, DP_STATUS_INVALID, "placer: bad attention mode %d", (int)cfg->mode);
    int F = cfg->in_dim, H = cfg->hidden, A = cfg->attn_dim, D = cfg->devices, E = cfg->emb_dim;
    int ix = m->in_x = s2s_in_x(cfg), ox = m->out_x = s2s_out_x(cfg);
    dp_status st;
    if ((st = bind_tensor(&m->enc, &m->denc_w, p, "placer.enc", 2 * dp_nn_lstm_param_count(F, H), err)) ||
        (st = bind_tensor(&m->wk, &m->dwk, p, "placer.wk", (size_t)A * 2 * H, err)) ||
        (st = bind_tensor(&m->wq, &m->dwq, p, "placer.wq", (size_t)A * H, err)) ||
        (st = bind_tensor(&m->v, &m->dv, p, "placer.v", (size_t)A, err)) ||
        (st = bind_tensor(&m->emb, &m->demb, p, "placer.emb", (size_t)(D + 1) * E, err)) ||
        (st = bind_tensor(&m->dec, &m->ddec, p, "placer.dec", dp_nn_lstm_param_count(ix, H), err)) ||
        (st = bind_tensor(&m->wo, &m->dwo, p, "placer.wo", (size_t)D * ox, err)) ||
        (st = bind_tensor(&m->bo, &m->dbo, p, "placer.bo", (size_t)D, err)))
        return st;
    size_t b = (size_t)B, t = (size_t)T, bt = b * t;
    size_t sizes[] = {
        dp_nn_bilstm_act_count(B, T, H), bt * 2 * H, bt * A,     /* enc_acts encs keys */
        (t + 1) * b * H, (t + 1) * b * H,                        /* h c */
        bt * 4 * H, bt * ix, bt * 2 * H, bt * t, bt * t * A,     /* gates x ctx att act */
        bt * A, bt * ox, bt * D, bt * D, bt * D, bt * D,         /* qp o l tact noise logp */
        dp_nn_bilstm_scratch_count(B, T, H), bt * 4 * H, bt * D, /* enc_scratch dG dl */
        bt * A, bt * 2 * H, b * H, b * H, b * ix, bt * 2 * H,    /* dkeys dencs dh dc dx dctx */
        b * ox, b * D, b * D, b * (t + A), b * H, b * H,         /* dout dlog dlg att_scratch h_last c_last */
        bt * A,                                                  /* dqps */
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) total += sizes[i];
    m->mem = calloc(total, sizeof(float));
    m->imem = calloc(bt + b, sizeof(int));
    if (!m->mem || !m->imem) {
        dp_nn_seq2seq_free(m);
        return dp_error_set(err, DP_STATUS_NOMEM, "placer: out of memory for %zu floats", total);
    }
    float **ptrs[] = {&m->enc_acts, &m->encs, &m->keys, &m->h, &m->c, &m->gates, &m->x, &m->ctx,
                      &m->att, &m->act, &m->qp, &m->o, &m->l, &m->tact, &m->noise, &m->logp,
                      &m->enc_scratch, &m->dG, &m->dl, &m->dkeys, &m->dencs, &m->dh, &m->dc,
                      &m->dx, &m->dctx, &m->dout, &m->dlog, &m->dlg, &m->att_scratch, &m->h_last,
                      &m->c_last, &m->dqps};
    _Static_assert(sizeof ptrs / sizeof ptrs[0] == 32, "one size per workspace array");
    assert(sizeof ptrs / sizeof ptrs[0] == sizeof sizes / sizeof sizes[0]);
    float *cur = m->mem;
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) *ptrs[i] = carve(&cur, sizes[i]);
    m->prev = m->imem;
    m->B = B;
    m->T = T;
    return DP_STATUS_OK;
}

/* Frees the placer's workspace. */
void dp_nn_seq2seq_free(dp_nn_seq2seq *m) {
    free(m->mem);
    free(m->imem);
    memset(m, 0, sizeof *m);
}

/* Encodes inp and decodes one device per element; see nn_models.h. */
void dp_nn_seq2seq_forward(dp_nn_seq2seq *m, float *logp_sum, float *entropy, int *actions,
                           const float *inp, const float *dec_h0, const float *dec_c0,
                           dp_nn_decode_mode mode, dp_rng *rng, float noise_amp) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const dp_nn_seq2seq_config *cf = &m->cfg;
    int B = m->B, T = m->T, F = cf->in_dim, H = cf->hidden, A = cf->attn_dim, D = cf->devices;
    int E = cf->emb_dim, ix = m->in_x, ox = m->out_x, H2 = 2 * H;
    int before = cf->mode == DP_NN_ATTENTION_MODE_BEFORE;
    size_t bh = (size_t)B * H;
    dp_nn_bilstm_forward(m->encs, NULL, NULL, m->enc_acts, inp, NULL, NULL, m->enc, B, T, F, H);
    dp_nn_linear_forward(m->keys, m->encs, m->wk, NULL, B * T, H2, A);
    if (dec_h0) memmove(m->h, dec_h0, sizeof(float) * bh);
    else memset(m->h, 0, sizeof(float) * bh);
    if (dec_c0) memmove(m->c, dec_c0, sizeof(float) * bh);
    else memset(m->c, 0, sizeof(float) * bh);
    for (int b = 0; b < B; b++) {
        logp_sum[b] = 0.0f;
        if (entropy) entropy[b] = 0.0f;
    }
    for (int t = 0; t < T; t++) {
        size_t tb = (size_t)t * B;
        float *hp = m->h + (size_t)t * bh, *hn = hp + bh;
        float *cp = m->c + (size_t)t * bh, *cn = cp + bh;
        float *ctx = m->ctx + tb * H2, *att = m->att + tb * T, *act = m->act + tb * T * A;
        float *qp = m->qp + tb * A, *o = m->o + tb * ox, *l = m->l + tb * D;
        float *logp = m->logp + tb * D, *tact = m->tact + tb * D;
        int *prev = m->prev + tb, *pick = prev + B; /* this step's actions are the next prev */
        if (t == 0)
            for (int b = 0; b < B; b++) prev[b] = D;
        if (before) {
            dp_nn_attention_forward(ctx, att, act, qp, hp, m->keys, m->encs, m->wq, m->v, B, T, H, A, H2);
            dp_nn_decoder_step_forward(hn, cn, m->x + tb * ix, m->gates + tb * 4 * H, prev, ctx, hp,
                                       cp, m->emb, m->dec, B, D + 1, E, H2, H);
        } else {
            dp_nn_decoder_step_forward(hn, cn, m->x + tb * ix, m->gates + tb * 4 * H, prev, NULL, hp,
                                       cp, m->emb, m->dec, B, D + 1, E, 0, H);
            dp_nn_attention_forward(ctx, att, act, qp, hn, m->keys, m->encs, m->wq, m->v, B, T, H, A, H2);
        }
        if (ox > H) {
            const float *parts[2] = {hn, ctx};
            const int widths[2] = {H, H2};
            dp_nn_concat_forward(o, parts, widths, 2, B);
        } else {
            memcpy(o, hn, sizeof(float) * bh);
        }
        dp_nn_linear_forward(l, o, m->wo, m->bo, B, ox, D);
        const float *noise = NULL;
        if (noise_amp > 0.0f) {
            dp_nn_noise_fill(m->noise + tb * D, rng, (size_t)B * D, noise_amp);
            noise = m->noise + tb * D;
        }
        dp_nn_policy_logits_forward(logp, tact, l, noise, B, D, cf->tanh_c, cf->temperature);
        dp_nn_log_softmax_forward(logp, logp, B, D);
        for (int b = 0; b < B; b++) pick[b] = actions[(size_t)b * T + t];
        pick_actions(pick, logp, mode, rng, B, D);
        for (int b = 0; b < B; b++) {
            actions[(size_t)b * T + t] = pick[b];
            logp_sum[b] += logp[(size_t)b * D + pick[b]];
            if (entropy)
                for (int d = 0; d < D; d++) {
                    float lp = logp[(size_t)b * D + d];
                    entropy[b] -= nn_exp(lp) * lp;
                }
        }
    }
    memcpy(m->h_last, m->h + (size_t)T * bh, sizeof(float) * bh);
    memcpy(m->c_last, m->c + (size_t)T * bh, sizeof(float) * bh);
    nn_fp_leave(fp_);
}

/* Backward of dp_nn_seq2seq_forward; see nn_models.h. */
void dp_nn_seq2seq_backward(dp_nn_seq2seq *m, float *dinp, const float *dlogp,
                            const float *dentropy, const int *actions, const float *inp) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const dp_nn_seq2seq_config *cf = &m->cfg;
    int B = m->B, T = m->T, F = cf->in_dim, H = cf->hidden, A = cf->attn_dim, D = cf->devices;
    int E = cf->emb_dim, ix = m->in_x, ox = m->out_x, H2 = 2 * H, G4 = 4 * H;
    int before = cf->mode == DP_NN_ATTENTION_MODE_BEFORE;
    size_t bh = (size_t)B * H, bt = (size_t)B * T;
    const float *w_ih = m->dec, *w_hh = m->dec + (size_t)G4 * ix;
    memset(m->dkeys, 0, sizeof(float) * bt * A);
    memset(m->dencs, 0, sizeof(float) * bt * H2);
    memset(m->dh, 0, sizeof(float) * bh);
    memset(m->dc, 0, sizeof(float) * bh);
    for (int t = T - 1; t >= 0; t--) {
        size_t tb = (size_t)t * B;
        const float *cp = m->c + (size_t)t * bh, *cn = cp + bh;
        const float *att = m->att + tb * T, *act = m->act + tb * T * A;
        const float *logp = m->logp + tb * D;
        float *dl = m->dl + tb * D, *dG = m->dG + tb * G4, *dctx = m->dctx + tb * H2;
        /* policy head */
        memset(m->dlog, 0, sizeof(float) * (size_t)B * D);
        for (int b = 0; b < B; b++) {
            m->dlog[(size_t)b * D + actions[(size_t)b * T + t]] += dlogp[b];
            if (dentropy)
                for (int d = 0; d < D; d++) {
                    float lp = logp[(size_t)b * D + d];
                    m->dlog[(size_t)b * D + d] -= dentropy[b] * nn_exp(lp) * (1.0f + lp);
                }
        }
        memset(m->dlg, 0, sizeof(float) * (size_t)B * D);
        dp_nn_log_softmax_backward(m->dlg, m->dlog, logp, B, D);
        memset(dl, 0, sizeof(float) * (size_t)B * D);
        dp_nn_policy_logits_backward(dl, m->dlg, m->tact + tb * D, B, D, cf->tanh_c, cf->temperature);
        /* output layer (weight gradient batched after the loop) */
        nn_gemm(0, 0, B, ox, D, 1.0f, dl, D, m->wo, ox, 0.0f, m->dout, ox);
        for (int b = 0; b < B; b++) {
            const float *d = m->dout + (size_t)b * ox;
            float *dhb = m->dh + (size_t)b * H;
            for (int j = 0; j < H; j++) dhb[j] += d[j];
            if (ox > H) memcpy(dctx + (size_t)b * H2, d + H, sizeof(float) * H2);
            else memset(dctx + (size_t)b * H2, 0, sizeof(float) * H2);
        }
        if (!before) { /* attention (query projection's weight gradient batched below) */
            float *dqp = m->dqps + tb * A;
            nn_attention_backward_core(dqp, m->dkeys, NULL, m->dv, m->att_scratch, dctx, att, act,
                                       m->encs, m->v, B, T, A, H2);
            nn_gemm(0, 0, B, H, A, 1.0f, dqp, A, m->wq, H, 1.0f, m->dh, H);
        }
        /* decoder cell */
        for (int b = 0; b < B; b++)
            nn_lstm_cell_row_backward(dG + (size_t)b * G4, m->dc + (size_t)b * H, m->dh + (size_t)b * H,
                                      m->gates + (tb + b) * G4, cn + (size_t)b * H,
                                      cp + (size_t)b * H, H);
        nn_gemm(0, 0, B, ix, G4, 1.0f, dG, G4, w_ih, ix, 0.0f, m->dx, ix);
        nn_gemm(0, 0, B, H, G4, 1.0f, dG, G4, w_hh, H, 0.0f, m->dh, H);
        for (int b = 0; b < B; b++) {
            const float *dxb = m->dx + (size_t)b * ix;
            float *de = m->demb + (size_t)m->prev[tb + b] * E;
            for (int j = 0; j < E; j++) de[j] += dxb[j];
        }
        if (before) {
            for (int b = 0; b < B; b++) {
                float *dcb = dctx + (size_t)b * H2;
                const float *dxb = m->dx + (size_t)b * ix + E;
                for (int j = 0; j < H2; j++) dcb[j] += dxb[j];
            }
            float *dqp = m->dqps + tb * A;
            nn_attention_backward_core(dqp, m->dkeys, NULL, m->dv, m->att_scratch, dctx, att, act,
                                       m->encs, m->v, B, T, A, H2);
            nn_gemm(0, 0, B, H, A, 1.0f, dqp, A, m->wq, H, 1.0f, m->dh, H);
        }
    }
    /* query projection: dwq [A, H] += dqps^T [A, TB] queries [TB, H], the
     * queries being h[0..T-1] (before) or h[1..T] (after) */
    nn_gemm(1, 0, A, H, T * B, 1.0f, m->dqps, A, m->h + (before ? 0 : bh), H, 1.0f, m->dwq, H);
    /* attention contexts: dencs [b] [T, 2H] += att[:, b]^T [T, T(steps)] dctx[:, b] [T(steps), 2H] */
    for (int b = 0; b < B; b++)
        nn_gemm(1, 0, T, H2, T, 1.0f, m->att + (size_t)b * T, B * T, m->dctx + (size_t)b * H2, B * H2,
                1.0f, m->dencs + (size_t)b * T * H2, H2);
    /* batched weight gradients of the decoder cell and the output layer */
    float *dw_ih = m->ddec, *dw_hh = m->ddec + (size_t)G4 * ix, *dbias = dw_hh + (size_t)G4 * H;
    int TB = T * B;
    nn_gemm(1, 0, G4, ix, TB, 1.0f, m->dG, G4, m->x, ix, 1.0f, dw_ih, ix);
    nn_gemm(1, 0, G4, H, TB, 1.0f, m->dG, G4, m->h, H, 1.0f, dw_hh, H); /* h[0..T-1] */
    nn_add_colsum(dbias, m->dG, TB, G4, (size_t)G4);
    nn_gemm(1, 0, D, ox, TB, 1.0f, m->dl, D, m->o, ox, 1.0f, m->dwo, ox);
    nn_add_colsum(m->dbo, m->dl, TB, D, (size_t)D);
    /* keys = encs @ wk^T, then the encoder */
    dp_nn_linear_backward(m->dencs, m->dwk, NULL, m->dkeys, m->encs, m->wk, B * T, H2, A);
    dp_nn_bilstm_backward(dinp, NULL, NULL, m->denc_w, m->enc_scratch, m->dencs, NULL, NULL,
                          m->enc_acts, inp, NULL, NULL, m->enc, B, T, F, H);
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
        if ((st = bind_tensor(&m->w[l], &m->dw[l], p, gcn_wname[l], (size_t)H * gcn_in(cfg, l), err)) ||
            (st = bind_tensor(&m->b[l], &m->db[l], p, gcn_bname[l], (size_t)H, err)) ||
            (st = bind_tensor(&m->a[l], &m->da[l], p, gcn_aname[l], 1, err)))
            return st;
    }
    if ((st = bind_tensor(&m->disc, &m->ddisc, p, "dgi.weight", (size_t)H * H, err)) ||
        (st = bind_tensor(&m->disc_b, &m->ddisc_b, p, "dgi.bias", 1, err)))
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
    m->xc = carve(&cur, n * F);
    for (int k = 0; k < 2; k++) {
        m->xw[k] = carve(&cur, lnh);
        m->pre[k] = carve(&cur, lnh);
        m->out[k] = carve(&cur, lnh);
    }
    m->summary = carve(&cur, H);
    m->ws = carve(&cur, H);
    m->scores = carve(&cur, 2 * n);
    m->labels = carve(&cur, 2 * n);
    m->dscores = carve(&cur, 2 * n);
    m->dsum = carve(&cur, H);
    m->dcur = carve(&cur, n * H);
    m->dnext = carve(&cur, n * H);
    m->scratch = carve(&cur, n * H);
    m->dH = carve(&cur, 2 * n * H);
    m->hscratch = carve(&cur, H);
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
