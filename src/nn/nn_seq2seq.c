/* The seq2seq placer: bidirectional-LSTM encoder, LSTM decoder with additive
 * attention and a policy head, over a whole sequence or segment by segment
 * (Mars: each segment's encoder and decoder start from the previous
 * segment's final state, and the gradient can flow back through it).
 *
 * How the work is planned (products through nn_gemm, a step's few-row ones
 * through the few-row kernel directly, rows_gemm):
 *  - the encoder's input projections for all elements are one product
 *    (dp_nn_lstm_forward); with shared_input the encoder, its attention keys
 *    and its state run once for all B samples;
 *  - the decoder cell's input is [emb(prev) | ctx]: the embedding part of
 *    the gate pre-activations takes one of D + 1 values, so ep [D+1, 4H] =
 *    emb W_e^T + bias is one small product per forward, gathered per step;
 *  - with the context before the cell, shared_input and T <= 2H, ctx W_c^T =
 *    att (encs W_c^T) = att P: P [T, 4H] is one product per forward and a
 *    step costs [B, T] x [T, 4H] instead of [B, 2H] x [2H, 4H] (use_p);
 *  - the samples' decoders are independent given the encoder: the B samples
 *    are split into ranges decoded on the pool's threads for all T steps
 *    (no synchronisation per step), each step's products batched over a
 *    range's samples; every weight gradient is one product over all T B
 *    steps after the loop;
 *  - the attention's tanh values ([T, A] per step and sample, T B T A floats
 *    in all) are not saved: backward recomputes them.
 * Results do not depend on the thread count or the split: the per-step
 * products use the few-row kernel, whose rows do not depend on the other
 * rows of the call; the uniforms and the noise of a sampling forward are
 * drawn up front, in the order a single loop would draw them; gradients
 * shared by the samples (keys, v, ep) are summed per sample, then over the
 * samples in order.
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

/* Most sample ranges decoded in parallel (each has its own attention
 * scratch). */
#define S2S_MAX_PARTS 8

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
    int threads = dp_nn_get_threads();
    m->parts = B < threads ? B : threads;
    if (m->parts > S2S_MAX_PARTS) m->parts = S2S_MAX_PARTS;
    size_t b = (size_t)B, t = (size_t)T, bt = b * t, be = (size_t)Be, G4 = 4 * (size_t)H;
    size_t H2 = 2 * (size_t)H, nctx = s2s_need_ctx(m) ? bt * H2 : 0, np = m->use_p ? t * G4 : 0;
    size_t nep = (size_t)(D + 1) * G4;
    size_t sizes[] = {
        dp_nn_bilstm_act_count(Be, T, H), be * t * H2, be * t * A,     /* enc_acts encs keys */
        2 * be * H, 2 * be * H, nep, np,                               /* enc_h0 enc_c0 ep P */
        (t + 1) * b * H, (t + 1) * b * H, bt * G4, bt * t, bt * A,     /* h c gates att qp */
        nctx, bt * D, bt * D, bt * D,                                  /* ctx tact noise logp */
        dp_nn_bilstm_scratch_count(Be, T, H), bt * G4, bt * D, bt * A, /* enc_scratch dG dl dqps */
        be * t * A, be * t * H2, nctx, np, nep,                        /* dkeys dencs dctx dP dep */
        b * H, b * H, b * H, b * t, b * D, b * D,                      /* dh dc dh2 datt dlog dlg */
        Be == 1 ? bt * A : 0, b * A, b * nep,                          /* dkeys_s dv_s dep_s */
        (size_t)m->parts * (t * A + t),                                /* pact */
        2 * be * H, 2 * be * H, b * H, b * H,                          /* last: enc_h enc_c dec_h dec_c */
        b * D, b * D,                                                  /* load, last.load */
    };
    float **ptrs[] = {&m->enc_acts, &m->encs, &m->keys, &m->enc_h0, &m->enc_c0, &m->ep, &m->P,
                      &m->h, &m->c, &m->gates, &m->att, &m->qp, &m->ctx, &m->tact, &m->noise,
                      &m->logp, &m->enc_scratch, &m->dG, &m->dl, &m->dqps, &m->dkeys, &m->dencs,
                      &m->dctx, &m->dP, &m->dep, &m->dh, &m->dc, &m->dh2, &m->datt, &m->dlog,
                      &m->dlg, &m->dkeys_s, &m->dv_s, &m->dep_s, &m->pact, &m->last.enc_h,
                      &m->last.enc_c, &m->last.dec_h, &m->last.dec_c, &m->load, &m->last.load};
    _Static_assert(sizeof ptrs / sizeof ptrs[0] == sizeof sizes / sizeof sizes[0],
                   "one size per workspace array");
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) total += sizes[i];
    m->mem = calloc(total, sizeof(float));
    m->imem = calloc((t + 1) * b + b, sizeof(int));
    m->u = calloc(bt, sizeof(double));
    if (!m->mem || !m->imem || !m->u) {
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
    free(m->u);
    memset(m, 0, sizeof *m);
}

/* ---- one step's products ------------------------------------------------------------ */

/* C [M, N] = op(A) op(B) + beta C for a step's few rows: the few-row
 * kernel for any M (rows in groups of 4), so that a row's result does not
 * depend on the other rows in the call, however the samples are split. */
static void rows_gemm(int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                      float beta, float *C, int ldc) {
    nn_kern_get()->gemm_skinny(0, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
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

/* keys of sample b: [T, A] rows of keys [Be, T, A] */
static const float *keys_of(const float *keys, int b, int Be, int T, int A) {
    return keys + (size_t)(Be == 1 ? 0 : b) * T * A;
}

/* att [n, T] = softmax_j v . tanh(keys_of(b0 + i)[j] + qp[i]) for the n
 * samples from b0; act [T, A] scratch. */
static void attend(float *att, float *act, const float *qp, const float *keys, const float *v,
                   int n, int b0, int Be, int T, int A) {
    const nn_kernels *k = nn_kern_get();
    for (int i = 0; i < n; i++) {
        float *sc = att + (size_t)i * T;
        k->attn_score(act, sc, keys_of(keys, b0 + i, Be, T, A), qp + (size_t)i * A, v, T, A);
        softmax_row(sc, T);
    }
}

/* Backward of attend for the n samples from b0 from datt [n, T]
 * (destroyed): dqp [n, A] = d(projected query) (overwritten); dkeys of each
 * sample (dkeys [B, T, A] when Be == 1, one block per sample to be summed;
 * else [Be, T, A]) and dv [B, A] (per sample) +=. The tanh values are
 * recomputed into act [T, A] (scores into act + T A, [T]). */
static void attend_backward(float *dqp, float *dkeys, float *dv, float *act, float *datt,
                            const float *att, const float *qp, const float *keys, const float *v,
                            int n, int b0, int Be, int T, int A) {
    const nn_kernels *k = nn_kern_get();
    memset(dqp, 0, sizeof(float) * (size_t)n * A);
    for (int i = 0; i < n; i++) {
        const float *ab = att + (size_t)i * T;
        float *ds = datt + (size_t)i * T;
        float dot = 0.0f;
        for (int j = 0; j < T; j++) dot += ab[j] * ds[j];
        for (int j = 0; j < T; j++) ds[j] = ab[j] * (ds[j] - dot);
        int b = b0 + i;
        k->attn_score(act, act + (size_t)T * A, keys_of(keys, b, Be, T, A), qp + (size_t)i * A, v, T, A);
        k->attn_score_backward(dkeys + (size_t)b * T * A, dqp + (size_t)i * A, dv + (size_t)b * A, ds, act,
                               v, T, A);
    }
}

/* ctx [n, 2H] = att [n, T] encs_of(b0 + i) [T, 2H] */
static void context(float *ctx, const float *att, const float *encs, int n, int b0, int Be, int T,
                    int H2) {
    if (Be == 1) {
        rows_gemm(0, n, H2, T, att, T, encs, H2, 0.0f, ctx, H2);
        return;
    }
    for (int i = 0; i < n; i++)
        rows_gemm(0, 1, H2, T, att + (size_t)i * T, T, encs + (size_t)(b0 + i) * T * H2, H2, 0.0f,
                  ctx + (size_t)i * H2, H2);
}

/* datt [n, T] = dctx [n, 2H] encs_of(b0 + i)^T + beta datt */
static void context_backward_att(float *datt, const float *dctx, const float *encs, int n, int b0,
                                 int Be, int T, int H2, float beta) {
    if (Be == 1) {
        rows_gemm(1, n, T, H2, dctx, H2, encs, H2, beta, datt, T);
        return;
    }
    for (int i = 0; i < n; i++)
        rows_gemm(1, 1, T, H2, dctx + (size_t)i * H2, H2, encs + (size_t)(b0 + i) * T * H2, H2, beta,
                  datt + (size_t)i * T, T);
}

/* ---- forward ------------------------------------------------------------------------ */

/* What a part of the decoder (a range of samples) needs. */
typedef struct s2s_job {
    dp_nn_seq2seq *m;
    /* forward */
    float *logp_sum, *entropy;
    int *actions;
    dp_nn_decode_mode mode;
    int noise;
    /* backward */
    const dp_nn_seq2seq_state *dstart, *dlast;
    const float *dlogp, *dlogp_step, *dentropy;
    const int *cactions;
} s2s_job;

void dp_nn_memory_mask_row(float *l, const float *load, const float *cap, float w, int D) {
    int open = 0;
    for (int d = 0; d < D; d++) open += load[d] + w <= cap[d];
    if (!open) return; /* no device has room: no mask */
    for (int d = 0; d < D; d++)
        if (load[d] + w > cap[d]) l[d] = DP_NN_MASKED;
}

/* Decodes the samples of part tid for all T steps. */
static void decode_part(void *vjob, int tid, int nt) {
    const s2s_job *j = vjob;
    dp_nn_seq2seq *m = j->m;
    const dp_nn_seq2seq_config *cf = &m->cfg;
    int B = m->B, Be = m->Be, T = m->T, H = cf->hidden, A = cf->attn_dim, D = cf->devices;
    int E = cf->emb_dim, ix = m->in_x, ox = m->out_x, H2 = 2 * H, G4 = 4 * H;
    int before = cf->mode == DP_NN_ATTENTION_MODE_BEFORE, need_ctx = s2s_need_ctx(m);
    int b0, b1;
    nn_part_rows(&b0, &b1, B, tid, nt);
    int n = b1 - b0;
    if (n <= 0) return;
    size_t bh = (size_t)B * H;
    const float *w_c = m->dec + E, *w_hh = m->dec + (size_t)G4 * ix;
    float *act = m->pact + (size_t)tid * ((size_t)T * A + T);
    float *l = m->dlog + (size_t)b0 * D; /* [n, D] logits before the head */
    for (int t = 0; t < T; t++) {
        size_t r = (size_t)t * B + b0; /* this part's first row of step t */
        float *hp = m->h + (size_t)t * bh + (size_t)b0 * H, *hn = hp + bh;
        float *cp = m->c + (size_t)t * bh + (size_t)b0 * H, *cn = cp + bh;
        float *g = m->gates + r * G4, *att = m->att + r * T, *qp = m->qp + r * A;
        float *ctx = need_ctx ? m->ctx + r * H2 : NULL;
        float *logp = m->logp + r * D, *tact = m->tact + r * D;
        const int *prev = m->prev + r;
        int *pick = m->prev + r + B; /* this step's actions are the next step's inputs */
        for (int i = 0; i < n; i++) memcpy(g + (size_t)i * G4, m->ep + (size_t)prev[i] * G4, sizeof(float) * G4);
        if (before) { /* context from the previous state, into the cell */
            rows_gemm(1, n, A, H, hp, H, m->wq, H, 0.0f, qp, A);
            attend(att, act, qp, m->keys, m->v, n, b0, Be, T, A);
            if (ctx) context(ctx, att, m->encs, n, b0, Be, T, H2);
            if (m->use_p) rows_gemm(0, n, G4, T, att, T, m->P, G4, 1.0f, g, G4);
            else rows_gemm(1, n, G4, H2, ctx, H2, w_c, ix, 1.0f, g, G4);
        }
        rows_gemm(1, n, G4, H, hp, H, w_hh, H, 1.0f, g, G4);
        for (int i = 0; i < n; i++)
            nn_lstm_cell_row(hn + (size_t)i * H, cn + (size_t)i * H, g + (size_t)i * G4, cp + (size_t)i * H, H);
        if (!before) { /* context from the new state, joined to the output */
            rows_gemm(1, n, A, H, hn, H, m->wq, H, 0.0f, qp, A);
            attend(att, act, qp, m->keys, m->v, n, b0, Be, T, A);
            context(ctx, att, m->encs, n, b0, Be, T, H2);
        }
        /* policy head: l = [h | ctx] wo^T + bo, noise drawn up front */
        for (int i = 0; i < n; i++) memcpy(l + (size_t)i * D, m->bo, sizeof(float) * D);
        rows_gemm(1, n, D, H, hn, H, m->wo, ox, 1.0f, l, D);
        if (ox > H) rows_gemm(1, n, D, H2, ctx, H2, m->wo + H, ox, 1.0f, l, D);
        dp_nn_policy_logits_forward(logp, tact, l, j->noise ? m->noise + r * D : NULL, n, D, cf->tanh_c,
                                    cf->temperature);
        if (cf->stick != 0.0f)
            for (int i = 0; i < n; i++)
                if (prev[i] < D && (!cf->stick_mask || prev[i] >= 64 || (cf->stick_mask >> prev[i] & 1)))
                    logp[(size_t)i * D + prev[i]] += cf->stick;
        if (m->mask.w)
            for (int i = 0; i < n; i++)
                dp_nn_memory_mask_row(logp + (size_t)i * D, m->load + (size_t)(b0 + i) * D, m->mask.cap, m->mask.w[t],
                                      D);
        dp_nn_log_softmax_forward(logp, logp, n, D);
        for (int i = 0; i < n; i++) {
            int b = b0 + i, *a = &j->actions[(size_t)b * T + t];
            const float *lp = logp + (size_t)i * D;
            if (j->mode == DP_NN_DECODE_MODE_SAMPLE) *a = nn_categorical_pick(lp, m->u[r + i], D);
            else if (j->mode == DP_NN_DECODE_MODE_GREEDY) dp_nn_categorical_argmax(a, lp, 1, D);
            assert(*a >= 0 && *a < D);
            pick[i] = *a;
            if (m->mask.w) m->load[(size_t)b * D + *a] += m->mask.w[t];
            j->logp_sum[b] += lp[*a];
            if (j->entropy)
                for (int d = 0; d < D; d++) j->entropy[b] -= nn_exp(lp[d]) * lp[d];
        }
    }
}

/* One segment; see nn_models.h. */
void dp_nn_seq2seq_segment_forward(dp_nn_seq2seq *m, float *logp_sum, float *entropy, int *actions,
                                   const float *inp, const dp_nn_seq2seq_state *start,
                                   dp_nn_decode_mode mode, dp_rng *rng, float noise_amp) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const dp_nn_seq2seq_config *cf = &m->cfg;
    int B = m->B, Be = m->Be, T = m->T, F = cf->in_dim, H = cf->hidden, A = cf->attn_dim;
    int D = cf->devices, E = cf->emb_dim, ix = m->in_x, H2 = 2 * H, G4 = 4 * H;
    size_t bh = (size_t)B * H, beh2 = (size_t)2 * Be * H;
    const float *w_c = m->dec + E, *w_hh = m->dec + (size_t)G4 * ix, *bias = w_hh + (size_t)G4 * H;
    assert((unsigned)mode < DP_NN_DECODE_MODE_COUNT);

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
    if (s && s->load) memmove(m->load, s->load, sizeof(float) * (size_t)B * D);
    else memset(m->load, 0, sizeof(float) * (size_t)B * D);

    /* encoder, keys, and the per-forward tables ep (and P) */
    dp_nn_bilstm_forward(m->encs, m->last.enc_h, m->last.enc_c, m->enc_acts, inp, m->enc_h0,
                         m->enc_c0, m->enc, Be, T, F, H);
    dp_nn_linear_forward(m->keys, m->encs, m->wk, NULL, Be * T, H2, A);
    for (int d = 0; d <= D; d++) memcpy(m->ep + (size_t)d * G4, bias, sizeof(float) * G4);
    nn_gemm(0, 1, D + 1, G4, E, 1.0f, m->emb, E, m->dec, ix, 1.0f, m->ep, G4);
    if (m->use_p) nn_gemm(0, 1, T, G4, H2, 1.0f, m->encs, H2, w_c, ix, 0.0f, m->P, G4);

    /* the random draws, in the order of one loop over steps and samples */
    int noise = noise_amp > 0.0f;
    for (int t = 0; t < T && (noise || mode == DP_NN_DECODE_MODE_SAMPLE); t++) {
        size_t tb = (size_t)t * B;
        if (noise) dp_nn_noise_fill(m->noise + tb * D, rng, (size_t)B * D, noise_amp);
        if (mode == DP_NN_DECODE_MODE_SAMPLE)
            for (int b = 0; b < B; b++) m->u[tb + b] = dp_rng_uniform(rng);
    }
    for (int b = 0; b < B; b++) {
        logp_sum[b] = 0.0f;
        if (entropy) entropy[b] = 0.0f;
    }
    s2s_job j = {.m = m, .logp_sum = logp_sum, .entropy = entropy, .actions = actions, .mode = mode,
                 .noise = noise};
    nn_parallel(m->parts, decode_part, &j);
    memcpy(m->last.dec_h, m->h + (size_t)T * bh, sizeof(float) * bh);
    memcpy(m->last.dec_c, m->c + (size_t)T * bh, sizeof(float) * bh);
    memcpy(m->last.prev, m->prev + (size_t)T * B, sizeof(int) * B);
    memcpy(m->last.load, m->load, sizeof(float) * (size_t)B * D);
    nn_fp_leave(fp_);
}

/* ---- backward ----------------------------------------------------------------------- */

/* Backward through the decoder for the samples of part tid, all T steps. */
static void decode_backward_part(void *vjob, int tid, int nt) {
    const s2s_job *j = vjob;
    dp_nn_seq2seq *m = j->m;
    const dp_nn_seq2seq_config *cf = &m->cfg;
    int B = m->B, Be = m->Be, T = m->T, H = cf->hidden, A = cf->attn_dim, D = cf->devices;
    int E = cf->emb_dim, ix = m->in_x, ox = m->out_x, H2 = 2 * H, G4 = 4 * H;
    int before = cf->mode == DP_NN_ATTENTION_MODE_BEFORE, need_ctx = s2s_need_ctx(m);
    int b0, b1;
    nn_part_rows(&b0, &b1, B, tid, nt);
    int n = b1 - b0;
    if (n <= 0) return;
    size_t bh = (size_t)B * H, nep = (size_t)(D + 1) * G4;
    const float *w_c = m->dec + E, *w_hh = m->dec + (size_t)G4 * ix;
    float *act = m->pact + (size_t)tid * ((size_t)T * A + T);
    float *dkeys = Be == 1 ? m->dkeys_s : m->dkeys; /* [B, T, A] either way */
    float *dlog = m->dlog + (size_t)b0 * D, *dlg = m->dlg + (size_t)b0 * D, *datt = m->datt + (size_t)b0 * T;
    float *dc = m->dc + (size_t)b0 * H;
    /* gradients into h[t + 1] and h[t], swapped per step */
    float *dh = m->dh + (size_t)b0 * H, *dh2 = m->dh2 + (size_t)b0 * H;
    memset(dkeys + (size_t)b0 * T * A, 0, sizeof(float) * (size_t)n * T * A);
    memset(m->dv_s + (size_t)b0 * A, 0, sizeof(float) * (size_t)n * A);
    memset(m->dep_s + (size_t)b0 * nep, 0, sizeof(float) * (size_t)n * nep);
    for (int i = 0; i < n; i++) {
        const dp_nn_seq2seq_state *dl = j->dlast;
        int b = b0 + i;
        if (dl && dl->dec_h) memcpy(dh + (size_t)i * H, dl->dec_h + (size_t)b * H, sizeof(float) * H);
        else memset(dh + (size_t)i * H, 0, sizeof(float) * H);
        if (dl && dl->dec_c) memcpy(dc + (size_t)i * H, dl->dec_c + (size_t)b * H, sizeof(float) * H);
        else memset(dc + (size_t)i * H, 0, sizeof(float) * H);
    }
    for (int t = T - 1; t >= 0; t--) {
        size_t r = (size_t)t * B + b0;
        const float *cp = m->c + (size_t)t * bh + (size_t)b0 * H, *cn = cp + bh;
        const float *att = m->att + r * T, *qp = m->qp + r * A, *logp = m->logp + r * D;
        const int *prev = m->prev + r;
        float *dl = m->dl + r * D, *dG = m->dG + r * G4, *dqp = m->dqps + r * A;
        float *dctx = need_ctx ? m->dctx + r * H2 : NULL;
        /* policy head */
        memset(dlog, 0, sizeof(float) * (size_t)n * D);
        for (int i = 0; i < n; i++) {
            int b = b0 + i;
            float w = j->dlogp ? j->dlogp[b] : 0.0f;
            if (j->dlogp_step) w += j->dlogp_step[(size_t)b * T + t];
            dlog[(size_t)i * D + j->cactions[(size_t)b * T + t]] += w;
            if (j->dentropy)
                for (int d = 0; d < D; d++) {
                    float lp = logp[(size_t)i * D + d];
                    dlog[(size_t)i * D + d] -= j->dentropy[b] * nn_exp(lp) * (1.0f + lp);
                }
        }
        memset(dlg, 0, sizeof(float) * (size_t)n * D);
        dp_nn_log_softmax_backward(dlg, dlog, logp, n, D);
        memset(dl, 0, sizeof(float) * (size_t)n * D);
        dp_nn_policy_logits_backward(dl, dlg, m->tact + r * D, n, D, cf->tanh_c, cf->temperature);
        /* output layer (its weight gradient is batched after the loop) */
        rows_gemm(0, n, H, D, dl, D, m->wo, ox, 1.0f, dh, H);
        if (ox > H) rows_gemm(0, n, H2, D, dl, D, m->wo + H, ox, 0.0f, dctx, H2);
        if (!before) { /* attention on the new state */
            context_backward_att(datt, dctx, m->encs, n, b0, Be, T, H2, 0.0f);
            attend_backward(dqp, dkeys, m->dv_s, act, datt, att, qp, m->keys, m->v, n, b0, Be, T, A);
            rows_gemm(0, n, H, A, dqp, A, m->wq, H, 1.0f, dh, H);
        }
        /* decoder cell: dh, dc hold the gradients into h[t + 1], c[t + 1] */
        for (int i = 0; i < n; i++)
            nn_lstm_cell_row_backward(dG + (size_t)i * G4, dc + (size_t)i * H, dh + (size_t)i * H,
                                      m->gates + (r + i) * G4, cn + (size_t)i * H, cp + (size_t)i * H, H);
        for (int i = 0; i < n; i++) {
            float *d = m->dep_s + (size_t)(b0 + i) * nep + (size_t)prev[i] * G4;
            const float *sg = dG + (size_t)i * G4;
            for (int k = 0; k < G4; k++) d[k] += sg[k];
        }
        rows_gemm(0, n, H, G4, dG, G4, w_hh, H, 0.0f, dh2, H);
        if (before) { /* attention on the previous state, through the cell input */
            if (m->use_p) {
                rows_gemm(1, n, T, G4, dG, G4, m->P, G4, 0.0f, datt, T);
                if (dctx) context_backward_att(datt, dctx, m->encs, n, b0, Be, T, H2, 1.0f);
            } else {
                rows_gemm(0, n, H2, G4, dG, G4, w_c, ix, ox > H ? 1.0f : 0.0f, dctx, H2);
                context_backward_att(datt, dctx, m->encs, n, b0, Be, T, H2, 0.0f);
            }
            attend_backward(dqp, dkeys, m->dv_s, act, datt, att, qp, m->keys, m->v, n, b0, Be, T, A);
            rows_gemm(0, n, H, A, dqp, A, m->wq, H, 1.0f, dh2, H);
        }
        float *sw = dh;
        dh = dh2;
        dh2 = sw;
    }
    const dp_nn_seq2seq_state *ds = j->dstart;
    for (int i = 0; ds && i < n; i++)
        for (int k = 0; k < H; k++) {
            size_t o = (size_t)(b0 + i) * H + k;
            if (ds->dec_h) ds->dec_h[o] += dh[(size_t)i * H + k];
            if (ds->dec_c) ds->dec_c[o] += dc[(size_t)i * H + k];
        }
}

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
    size_t bh = (size_t)B * H, TB = (size_t)T * B, nep = (size_t)(D + 1) * G4;
    const float *w_c = m->dec + E;
    float *dw_c = m->ddec + E, *dw_hh = m->ddec + (size_t)G4 * ix, *dbias = dw_hh + (size_t)G4 * H;

    s2s_job j = {.m = m, .dstart = dstart, .dlast = dlast, .dlogp = dlogp, .dlogp_step = dlogp_step,
                 .dentropy = dentropy, .cactions = actions};
    nn_parallel(m->parts, decode_backward_part, &j);
    /* the samples' sums, in sample order */
    if (Be == 1) {
        size_t ta = (size_t)T * A;
        memcpy(m->dkeys, m->dkeys_s, sizeof(float) * ta);
        for (int b = 1; b < B; b++)
            for (size_t k = 0; k < ta; k++) m->dkeys[k] += m->dkeys_s[(size_t)b * ta + k];
    }
    memcpy(m->dep, m->dep_s, sizeof(float) * nep);
    for (int b = 1; b < B; b++)
        for (size_t k = 0; k < nep; k++) m->dep[k] += m->dep_s[(size_t)b * nep + k];
    for (int b = 0; b < B; b++)
        for (int k = 0; k < A; k++) m->dv[k] += m->dv_s[(size_t)b * A + k];

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
    memset(m->dencs, 0, sizeof(float) * (size_t)Be * T * H2);
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
    dp_nn_seq2seq_state s = {NULL, NULL, (float *)dec_h0, (float *)dec_c0, NULL, NULL};
    dp_nn_seq2seq_segment_forward(m, logp_sum, entropy, actions, inp, &s, mode, rng, noise_amp);
}

/* Backward of dp_nn_seq2seq_forward; see nn_models.h. */
void dp_nn_seq2seq_backward(dp_nn_seq2seq *m, float *dinp, const float *dlogp,
                            const float *dentropy, const int *actions, const float *inp) {
    dp_nn_seq2seq_segment_backward(m, dinp, NULL, dlogp, NULL, dentropy, NULL, actions, inp);
}
