/* The seq2seq placer: bidirectional-LSTM encoder, LSTM decoder with additive
 * attention and a policy head, over a whole sequence or segment by segment
 * (Mars: each segment's encoder and decoder start from the previous
 * segment's final state, and the gradient can flow back through it).
 *
 * How the work is planned (every product goes through nn_gemm):
 *  - the encoder's input projections for all elements are one product
 *    (dp_nn_lstm_forward); with shared_input the encoder, its attention keys
 *    and its state run once for all B samples;
 *  - the decoder cell's input is [emb(prev) | ctx]: the embedding part of
 *    the gate pre-activations takes one of D + 1 values, so ep [D+1, 4H] =
 *    emb W_e^T + bias is one small product per forward, gathered per step;
 *  - with the context before the cell, shared_input and T <= 2H, ctx W_c^T =
 *    att (encs W_c^T) = att P: P [T, 4H] is one product per forward and a
 *    step costs [B, T] x [T, 4H] instead of [B, 2H] x [2H, 4H] (use_p);
 *  - each step's products are batched over the B samples, and every weight
 *    gradient is one product over all T B steps after the loop;
 *  - the attention's tanh values ([T, A] per step and sample, T B T A floats
 *    in all) are not saved: backward recomputes them.
 *
 * Layouts: per-step arrays are [T, B, ...] (step-major), h and c [T + 1, B,
 * H] with h[0], c[0] the start state. The decoder block is [w_ih 4H x ix |
 * w_hh 4H x H | bias 4H] with w_ih's columns [emb E | ctx 2H]. */
#include "dplace/nn_models.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_internal.h"
#include "nn_kern.h"

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

/* whether the per-step context is kept (output join, or the cell input
 * when it does not enter as att @ P) */
static int s2s_need_ctx(const dp_nn_seq2seq *m) {
    return m->cfg.mode == DP_NN_ATTENTION_MODE_AFTER || m->cfg.ctx_to_output || !m->use_p;
}

/* Binds the placer to p and allocates its workspace for batch B, length T. */
dp_status dp_nn_seq2seq_init(dp_nn_seq2seq *m, const dp_nn_seq2seq_config *cfg,
                             const dp_nn_params *p, int B, int T, dp_error *err) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    if ((unsigned)cfg->mode >= DP_NN_ATTENTION_MODE_COUNT)
        return dp_error_set(err, DP_STATUS_INVALID, "placer: bad attention mode %d", (int)cfg->mode);
    if (B < 1 || T < 1)
        return dp_error_set(err, DP_STATUS_INVALID, "placer: batch %d, length %d", B, T);
    int F = cfg->in_dim, H = cfg->hidden, A = cfg->attn_dim, D = cfg->devices, E = cfg->emb_dim;
    int ix = m->in_x = s2s_in_x(cfg), ox = m->out_x = s2s_out_x(cfg);
    dp_status st;
    if ((st = nn_bind_tensor(&m->enc, &m->denc_w, p, "placer.enc", 2 * dp_nn_lstm_param_count(F, H), err)) ||
        (st = nn_bind_tensor(&m->wk, &m->dwk, p, "placer.wk", (size_t)A * 2 * H, err)) ||
        (st = nn_bind_tensor(&m->wq, &m->dwq, p, "placer.wq", (size_t)A * H, err)) ||
        (st = nn_bind_tensor(&m->v, &m->dv, p, "placer.v", (size_t)A, err)) ||
        (st = nn_bind_tensor(&m->emb, &m->demb, p, "placer.emb", (size_t)(D + 1) * E, err)) ||
        (st = nn_bind_tensor(&m->dec, &m->ddec, p, "placer.dec", dp_nn_lstm_param_count(ix, H), err)) ||
        (st = nn_bind_tensor(&m->wo, &m->dwo, p, "placer.wo", (size_t)D * ox, err)) ||
        (st = nn_bind_tensor(&m->bo, &m->dbo, p, "placer.bo", (size_t)D, err)))
        return st;
    int Be = m->Be = cfg->shared_input ? 1 : B;
    m->use_p = cfg->mode == DP_NN_ATTENTION_MODE_BEFORE && Be == 1 && T <= 2 * H;
    size_t b = (size_t)B, t = (size_t)T, bt = b * t, be = (size_t)Be, G4 = 4 * (size_t)H;
    size_t H2 = 2 * (size_t)H, nctx = s2s_need_ctx(m) ? bt * H2 : 0, np = m->use_p ? t * G4 : 0;
    size_t sizes[] = {
        dp_nn_bilstm_act_count(Be, T, H), be * t * H2, be * t * A,     /* enc_acts encs keys */
        2 * be * H, 2 * be * H, (size_t)(D + 1) * G4, np,              /* enc_h0 enc_c0 ep P */
        (t + 1) * b * H, (t + 1) * b * H, bt * G4, bt * t, bt * A,     /* h c gates att qp */
        nctx, bt * D, bt * D, bt * D,                                  /* ctx tact noise logp */
        dp_nn_bilstm_scratch_count(Be, T, H), bt * G4, bt * D, bt * A, /* enc_scratch dG dl dqps */
        be * t * A, be * t * H2, nctx, np, (size_t)(D + 1) * G4,       /* dkeys dencs dctx dP dep */
        b * H, b * H, b * H, b * t, t * A + t, b * D, b * D,           /* dh dc dh2 datt act dlog dlg */
        2 * be * H, 2 * be * H, b * H, b * H,                          /* last: enc_h enc_c dec_h dec_c */
    };
    float **ptrs[] = {&m->enc_acts, &m->encs, &m->keys, &m->enc_h0, &m->enc_c0, &m->ep, &m->P,
                      &m->h, &m->c, &m->gates, &m->att, &m->qp, &m->ctx, &m->tact, &m->noise,
                      &m->logp, &m->enc_scratch, &m->dG, &m->dl, &m->dqps, &m->dkeys, &m->dencs,
                      &m->dctx, &m->dP, &m->dep, &m->dh, &m->dc, &m->dh2, &m->datt, &m->act,
                      &m->dlog, &m->dlg, &m->last.enc_h, &m->last.enc_c, &m->last.dec_h,
                      &m->last.dec_c};
    _Static_assert(sizeof ptrs / sizeof ptrs[0] == sizeof sizes / sizeof sizes[0],
                   "one size per workspace array");
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) total += sizes[i];
    m->mem = calloc(total, sizeof(float));
    m->imem = calloc((t + 1) * b + b, sizeof(int));
    if (!m->mem || !m->imem) {
        dp_nn_seq2seq_free(m);
        return dp_error_set(err, DP_STATUS_NOMEM, "placer: out of memory for %zu floats", total);
    }
    float *cur = m->mem;
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        *ptrs[i] = sizes[i] ? nn_carve(&cur, sizes[i]) : NULL;
    m->prev = m->imem;
    m->last.prev = m->imem + (t + 1) * b;
    m->h_last = m->last.dec_h;
    m->c_last = m->last.dec_c;
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

/* ---- attention over the encoder states of one step ------------------------------ */

/* x [n] = softmax(x) */
static void softmax_row(float *x, int n) {
    float mx = x[0];
    for (int j = 1; j < n; j++) mx = x[j] > mx ? x[j] : mx;
    float z = 0.0f;
    for (int j = 0; j < n; j++) {
        x[j] = nn_exp(x[j] - mx);
        z += x[j];
    }
    float iz = 1.0f / z;
    for (int j = 0; j < n; j++) x[j] *= iz;
}

/* att [B, T] = softmax_j v . tanh(keys[e(b), j] + qp[b]); keys [Be, T, A]
 * with e(b) = 0 when Be == 1, else b; act [T, A] scratch. */
static void attend(float *att, float *act, const float *qp, const float *keys, const float *v,
                   int B, int Be, int T, int A) {
    const nn_kernels *k = nn_kern_get();
    for (int b = 0; b < B; b++) {
        float *sc = att + (size_t)b * T;
        k->attn_score(act, sc, keys + (size_t)(Be == 1 ? 0 : b) * T * A, qp + (size_t)b * A, v, T, A);
        softmax_row(sc, T);
    }
}

/* Backward of attend from datt [B, T] (destroyed): dqp [B, A] = d(projected
 * query) (overwritten); dkeys [Be, T, A], dv [A] +=. The tanh values are
 * recomputed into act [T, A] (scores into act + T A, [T]). */
static void attend_backward(float *dqp, float *dkeys, float *dv, float *act, float *datt,
                            const float *att, const float *qp, const float *keys, const float *v,
                            int B, int Be, int T, int A) {
    const nn_kernels *k = nn_kern_get();
    memset(dqp, 0, sizeof(float) * (size_t)B * A);
    for (int b = 0; b < B; b++) {
        const float *ab = att + (size_t)b * T;
        float *ds = datt + (size_t)b * T;
        float dot = 0.0f;
        for (int j = 0; j < T; j++) dot += ab[j] * ds[j];
        for (int j = 0; j < T; j++) ds[j] = ab[j] * (ds[j] - dot);
        size_t ko = (size_t)(Be == 1 ? 0 : b) * T * A;
        k->attn_score(act, act + (size_t)T * A, keys + ko, qp + (size_t)b * A, v, T, A);
        k->attn_score_backward(dkeys + ko, dqp + (size_t)b * A, dv, ds, act, v, T, A);
    }
}

/* ctx [B, 2H] = att [B, T] encs [e(b)] [T, 2H] */
static void context(float *ctx, const float *att, const float *encs, int B, int Be, int T, int H2) {
    if (Be == 1) {
        nn_gemm(0, 0, B, H2, T, 1.0f, att, T, encs, H2, 0.0f, ctx, H2);
        return;
    }
    for (int b = 0; b < B; b++)
        nn_gemm(0, 0, 1, H2, T, 1.0f, att + (size_t)b * T, T, encs + (size_t)b * T * H2, H2, 0.0f,
                ctx + (size_t)b * H2, H2);
}

/* datt [B, T] = dctx [B, 2H] encs [e(b)]^T + beta datt */
static void context_backward_att(float *datt, const float *dctx, const float *encs, int B, int Be,
                                 int T, int H2, float beta) {
    if (Be == 1) {
        nn_gemm(0, 1, B, T, H2, 1.0f, dctx, H2, encs, H2, beta, datt, T);
        return;
    }
    for (int b = 0; b < B; b++)
        nn_gemm(0, 1, 1, T, H2, 1.0f, dctx + (size_t)b * H2, H2, encs + (size_t)b * T * H2, H2, beta,
                datt + (size_t)b * T, T);
}

/* ---- forward ------------------------------------------------------------------------ */

/* One segment; see nn_models.h. */
void dp_nn_seq2seq_segment_forward(dp_nn_seq2seq *m, float *logp_sum, float *entropy, int *actions,
                                   const float *inp, const dp_nn_seq2seq_state *start,
                                   dp_nn_decode_mode mode, dp_rng *rng, float noise_amp) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const dp_nn_seq2seq_config *cf = &m->cfg;
    int B = m->B, Be = m->Be, T = m->T, F = cf->in_dim, H = cf->hidden, A = cf->attn_dim;
    int D = cf->devices, E = cf->emb_dim, ix = m->in_x, ox = m->out_x, H2 = 2 * H, G4 = 4 * H;
    int before = cf->mode == DP_NN_ATTENTION_MODE_BEFORE, need_ctx = s2s_need_ctx(m);
    size_t bh = (size_t)B * H, beh2 = (size_t)2 * Be * H;
    const float *w_c = m->dec + E, *w_hh = m->dec + (size_t)G4 * ix, *bias = w_hh + (size_t)G4 * H;

    /* the start state, copied first: start may be m->last */
    const dp_nn_seq2seq_state *s = start;
    if (s && s->enc_h) memmove(m->enc_h0, s->enc_h, sizeof(float) * beh2);
    else memset(m->enc_h0, 0, sizeof(float) * beh2);
    if (s && s->enc_c) memmove(m->enc_c0, s->enc_c, sizeof(float) * beh2);
    else memset(m->enc_c0, 0, sizeof(float) * beh2);
    if (s && s->dec_h) memmove(m->h, s->dec_h, sizeof(float) * bh);
    else memset(m->h, 0, sizeof(float) * bh);
    if (s && s->dec_c) memmove(m->c, s->dec_c, sizeof(float) * bh);
    else memset(m->c, 0, sizeof(float) * bh);
    for (int b = 0; b < B; b++) {
        m->prev[b] = s && s->prev ? s->prev[b] : D;
        assert(m->prev[b] >= 0 && m->prev[b] <= D);
    }

    /* encoder, keys, and the per-forward tables ep (and P) */
    dp_nn_bilstm_forward(m->encs, m->last.enc_h, m->last.enc_c, m->enc_acts, inp, m->enc_h0,
                         m->enc_c0, m->enc, Be, T, F, H);
    dp_nn_linear_forward(m->keys, m->encs, m->wk, NULL, Be * T, H2, A);
    for (int d = 0; d <= D; d++) memcpy(m->ep + (size_t)d * G4, bias, sizeof(float) * G4);
    nn_gemm(0, 1, D + 1, G4, E, 1.0f, m->emb, E, m->dec, ix, 1.0f, m->ep, G4);
    if (m->use_p) nn_gemm(0, 1, T, G4, H2, 1.0f, m->encs, H2, w_c, ix, 0.0f, m->P, G4);

    for (int b = 0; b < B; b++) {
        logp_sum[b] = 0.0f;
        if (entropy) entropy[b] = 0.0f;
    }
    float *l = m->dlog; /* [B, D] logits before the head, scratch until backward */
    for (int t = 0; t < T; t++) {
        size_t tb = (size_t)t * B;
        float *hp = m->h + (size_t)t * bh, *hn = hp + bh;
        float *cp = m->c + (size_t)t * bh, *cn = cp + bh;
        float *g = m->gates + tb * G4, *att = m->att + tb * T, *qp = m->qp + tb * A;
        float *ctx = need_ctx ? m->ctx + tb * H2 : NULL;
        float *logp = m->logp + tb * D, *tact = m->tact + tb * D;
        const int *prev = m->prev + tb;
        int *pick = m->prev + tb + B; /* this step's actions are the next step's inputs */
        for (int b = 0; b < B; b++) memcpy(g + (size_t)b * G4, m->ep + (size_t)prev[b] * G4, sizeof(float) * G4);
        if (before) { /* context from the previous state, into the cell */
            nn_gemm(0, 1, B, A, H, 1.0f, hp, H, m->wq, H, 0.0f, qp, A);
            attend(att, m->act, qp, m->keys, m->v, B, Be, T, A);
            if (ctx) context(ctx, att, m->encs, B, Be, T, H2);
            if (m->use_p) nn_gemm(0, 0, B, G4, T, 1.0f, att, T, m->P, G4, 1.0f, g, G4);
            else nn_gemm(0, 1, B, G4, H2, 1.0f, ctx, H2, w_c, ix, 1.0f, g, G4);
        }
        nn_gemm(0, 1, B, G4, H, 1.0f, hp, H, w_hh, H, 1.0f, g, G4);
        for (int b = 0; b < B; b++)
            nn_lstm_cell_row(hn + (size_t)b * H, cn + (size_t)b * H, g + (size_t)b * G4,
                             cp + (size_t)b * H, H);
        if (!before) { /* context from the new state, joined to the output */
            nn_gemm(0, 1, B, A, H, 1.0f, hn, H, m->wq, H, 0.0f, qp, A);
            attend(att, m->act, qp, m->keys, m->v, B, Be, T, A);
            context(ctx, att, m->encs, B, Be, T, H2);
        }
        /* policy head: l = [h | ctx] wo^T + bo */
        for (int b = 0; b < B; b++) memcpy(l + (size_t)b * D, m->bo, sizeof(float) * D);
        nn_gemm(0, 1, B, D, H, 1.0f, hn, H, m->wo, ox, 1.0f, l, D);
        if (ox > H) nn_gemm(0, 1, B, D, H2, 1.0f, ctx, H2, m->wo + H, ox, 1.0f, l, D);
        const float *noise = NULL;
        if (noise_amp > 0.0f) {
            dp_nn_noise_fill(m->noise + tb * D, rng, (size_t)B * D, noise_amp);
            noise = m->noise + tb * D;
        }
        dp_nn_policy_logits_forward(logp, tact, l, noise, B, D, cf->tanh_c, cf->temperature);
        dp_nn_log_softmax_forward(logp, logp, B, D);
        for (int b = 0; b < B; b++) pick[b] = actions[(size_t)b * T + t];
        nn_pick_actions(pick, logp, mode, rng, B, D);
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
    memcpy(m->last.dec_h, m->h + (size_t)T * bh, sizeof(float) * bh);
    memcpy(m->last.dec_c, m->c + (size_t)T * bh, sizeof(float) * bh);
    memcpy(m->last.prev, m->prev + (size_t)T * B, sizeof(int) * B);
    nn_fp_leave(fp_);
}

/* ---- backward ----------------------------------------------------------------------- */

/* Backward of the last segment forward; see nn_models.h. */
void dp_nn_seq2seq_segment_backward(dp_nn_seq2seq *m, float *dinp, const dp_nn_seq2seq_state *dstart,
                                    const float *dlogp, const float *dlogp_step,
                                    const float *dentropy, const dp_nn_seq2seq_state *dlast,
                                    const int *actions, const float *inp) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const dp_nn_seq2seq_config *cf = &m->cfg;
    int B = m->B, Be = m->Be, T = m->T, F = cf->in_dim, H = cf->hidden, A = cf->attn_dim;
    int D = cf->devices, E = cf->emb_dim, ix = m->in_x, ox = m->out_x, H2 = 2 * H, G4 = 4 * H;
    int before = cf->mode == DP_NN_ATTENTION_MODE_BEFORE, need_ctx = s2s_need_ctx(m);
    size_t bh = (size_t)B * H, TB = (size_t)T * B;
    const float *w_c = m->dec + E, *w_hh = m->dec + (size_t)G4 * ix;
    float *dw_c = m->ddec + E, *dw_hh = m->ddec + (size_t)G4 * ix, *dbias = dw_hh + (size_t)G4 * H;
    memset(m->dkeys, 0, sizeof(float) * (size_t)Be * T * A);
    memset(m->dencs, 0, sizeof(float) * (size_t)Be * T * H2);
    memset(m->dep, 0, sizeof(float) * (size_t)(D + 1) * G4);
    float *dh = m->dh, *dh2 = m->dh2; /* gradients into h[t + 1] and h[t], swapped per step */
    if (dlast && dlast->dec_h) memcpy(dh, dlast->dec_h, sizeof(float) * bh);
    else memset(dh, 0, sizeof(float) * bh);
    if (dlast && dlast->dec_c) memcpy(m->dc, dlast->dec_c, sizeof(float) * bh);
    else memset(m->dc, 0, sizeof(float) * bh);
    for (int t = T - 1; t >= 0; t--) {
        size_t tb = (size_t)t * B;
        const float *cp = m->c + (size_t)t * bh, *cn = cp + bh;
        const float *att = m->att + tb * T, *qp = m->qp + tb * A, *logp = m->logp + tb * D;
        const int *prev = m->prev + tb;
        float *dl = m->dl + tb * D, *dG = m->dG + tb * G4, *dqp = m->dqps + tb * A;
        float *dctx = need_ctx ? m->dctx + tb * H2 : NULL;
        /* policy head */
        memset(m->dlog, 0, sizeof(float) * (size_t)B * D);
        for (int b = 0; b < B; b++) {
            float w = dlogp ? dlogp[b] : 0.0f;
            if (dlogp_step) w += dlogp_step[(size_t)b * T + t];
            m->dlog[(size_t)b * D + actions[(size_t)b * T + t]] += w;
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
        /* output layer (its weight gradient is batched after the loop) */
        nn_gemm(0, 0, B, H, D, 1.0f, dl, D, m->wo, ox, 1.0f, dh, H);
        if (ox > H) nn_gemm(0, 0, B, H2, D, 1.0f, dl, D, m->wo + H, ox, 0.0f, dctx, H2);
        if (!before) { /* attention on the new state */
            context_backward_att(m->datt, dctx, m->encs, B, Be, T, H2, 0.0f);
            attend_backward(dqp, m->dkeys, m->dv, m->act, m->datt, att, qp, m->keys, m->v, B, Be, T, A);
            nn_gemm(0, 0, B, H, A, 1.0f, dqp, A, m->wq, H, 1.0f, dh, H);
        }
        /* decoder cell: dh, dc hold the gradients into h[t + 1], c[t + 1] */
        for (int b = 0; b < B; b++)
            nn_lstm_cell_row_backward(dG + (size_t)b * G4, m->dc + (size_t)b * H, dh + (size_t)b * H,
                                      m->gates + (tb + b) * G4, cn + (size_t)b * H, cp + (size_t)b * H, H);
        for (int b = 0; b < B; b++) {
            float *d = m->dep + (size_t)prev[b] * G4;
            const float *s = dG + (size_t)b * G4;
            for (int j = 0; j < G4; j++) d[j] += s[j];
        }
        nn_gemm(0, 0, B, H, G4, 1.0f, dG, G4, w_hh, H, 0.0f, dh2, H);
        if (before) { /* attention on the previous state, through the cell input */
            if (m->use_p) {
                nn_gemm(0, 1, B, T, G4, 1.0f, dG, G4, m->P, G4, 0.0f, m->datt, T);
                if (dctx) context_backward_att(m->datt, dctx, m->encs, B, Be, T, H2, 1.0f);
            } else {
                nn_gemm(0, 0, B, H2, G4, 1.0f, dG, G4, w_c, ix, ox > H ? 1.0f : 0.0f, dctx, H2);
                context_backward_att(m->datt, dctx, m->encs, B, Be, T, H2, 0.0f);
            }
            attend_backward(dqp, m->dkeys, m->dv, m->act, m->datt, att, qp, m->keys, m->v, B, Be, T, A);
            nn_gemm(0, 0, B, H, A, 1.0f, dqp, A, m->wq, H, 1.0f, dh2, H);
        }
        float *sw = dh;
        dh = dh2;
        dh2 = sw;
    }
    if (dstart && dstart->dec_h)
        for (size_t i = 0; i < bh; i++) dstart->dec_h[i] += dh[i];
    if (dstart && dstart->dec_c)
        for (size_t i = 0; i < bh; i++) dstart->dec_c[i] += m->dc[i];

    /* weight gradients, each one product over all T B steps */
    const float *hq = m->h + (before ? 0 : bh); /* the attention queries */
    nn_gemm(1, 0, A, H, (int)TB, 1.0f, m->dqps, A, hq, H, 1.0f, m->dwq, H);
    nn_gemm(1, 0, G4, H, (int)TB, 1.0f, m->dG, G4, m->h, H, 1.0f, dw_hh, H); /* h[0 .. T-1] */
    nn_gemm(1, 0, D, H, (int)TB, 1.0f, m->dl, D, m->h + bh, H, 1.0f, m->dwo, ox);
    if (ox > H) nn_gemm(1, 0, D, H2, (int)TB, 1.0f, m->dl, D, m->ctx, H2, 1.0f, m->dwo + H, ox);
    nn_add_colsum(m->dbo, m->dl, (int)TB, D, (size_t)D);
    /* the embedding part of the cell input, through ep = emb W_e^T + bias */
    nn_add_colsum(dbias, m->dep, D + 1, G4, (size_t)G4);
    nn_gemm(1, 0, G4, E, D + 1, 1.0f, m->dep, G4, m->emb, E, 1.0f, m->ddec, ix);
    nn_gemm(0, 0, D + 1, E, G4, 1.0f, m->dep, G4, m->dec, ix, 1.0f, m->demb, E);
    /* the context part of the cell input */
    if (before && m->use_p) {
        /* dP [T, 4H] = att^T dG over all steps and samples */
        nn_gemm(1, 0, T, G4, (int)TB, 1.0f, m->att, T, m->dG, G4, 0.0f, m->dP, G4);
        nn_gemm(1, 0, G4, H2, T, 1.0f, m->dP, G4, m->encs, H2, 1.0f, dw_c, ix);
        nn_gemm(0, 0, T, H2, G4, 1.0f, m->dP, G4, w_c, ix, 1.0f, m->dencs, H2);
    } else if (before) {
        nn_gemm(1, 0, G4, H2, (int)TB, 1.0f, m->dG, G4, m->ctx, H2, 1.0f, dw_c, ix);
    }
    /* contexts: dencs [e] [T, 2H] += att^T dctx */
    if (need_ctx) {
        if (Be == 1) {
            nn_gemm(1, 0, T, H2, (int)TB, 1.0f, m->att, T, m->dctx, H2, 1.0f, m->dencs, H2);
        } else {
            for (int b = 0; b < B; b++)
                nn_gemm(1, 0, T, H2, T, 1.0f, m->att + (size_t)b * T, B * T, m->dctx + (size_t)b * H2,
                        B * H2, 1.0f, m->dencs + (size_t)b * T * H2, H2);
        }
    }
    /* keys = encs wk^T, then the encoder */
    dp_nn_linear_backward(m->dencs, m->dwk, NULL, m->dkeys, m->encs, m->wk, Be * T, H2, A);
    dp_nn_bilstm_backward(dinp, dstart ? dstart->enc_h : NULL, dstart ? dstart->enc_c : NULL,
                          m->denc_w, m->enc_scratch, m->dencs, dlast ? dlast->enc_h : NULL,
                          dlast ? dlast->enc_c : NULL, m->enc_acts, inp, m->enc_h0, m->enc_c0,
                          m->enc, Be, T, F, H);
    nn_fp_leave(fp_);
}

/* ---- whole sequences ------------------------------------------------------------------ */

/* The whole sequence as one segment; see nn_models.h. */
void dp_nn_seq2seq_forward(dp_nn_seq2seq *m, float *logp_sum, float *entropy, int *actions,
                           const float *inp, const float *dec_h0, const float *dec_c0,
                           dp_nn_decode_mode mode, dp_rng *rng, float noise_amp) {
    /* the state is only read */
    dp_nn_seq2seq_state s = {NULL, NULL, (float *)dec_h0, (float *)dec_c0, NULL};
    dp_nn_seq2seq_segment_forward(m, logp_sum, entropy, actions, inp, &s, mode, rng, noise_amp);
}

/* Backward of dp_nn_seq2seq_forward; see nn_models.h. */
void dp_nn_seq2seq_backward(dp_nn_seq2seq *m, float *dinp, const float *dlogp,
                            const float *dentropy, const int *actions, const float *inp) {
    dp_nn_seq2seq_segment_backward(m, dinp, NULL, dlogp, NULL, dentropy, NULL, actions, inp);
}
