/* The segment placer and Mars's policy (nn_mars.h). The segments run one
 * after the other, each with the B samples batched (the seq2seq's encoder
 * shared by them, the Transformer-XL run once for all of them); segment k
 * uses workspace k mod slots (the last one, when shorter, its own), and its
 * start state is saved so that backward can recompute a segment whose
 * workspace a later segment reused. Mars's policy encodes the operations
 * with the GCN and hands the embeddings to the segment placer. */
#include "dplace/nn_mars.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "nn_internal.h"

/* ---- the segment placer ------------------------------------------------------ */

int dp_nn_seg_specs(dp_nn_tensor_spec *specs, const dp_nn_seg_config *cfg) {
    if (cfg->kind == DP_NN_SEG_KIND_TXL) return dp_nn_txl_specs(specs, &cfg->txl);
    return dp_nn_seq2seq_specs(specs, &cfg->seq2seq);
}

static int is_txl(const dp_nn_seg *m) { return m->cfg.kind == DP_NN_SEG_KIND_TXL; }

/* floats of one saved TXL memory */
static size_t tmem_floats(const dp_nn_seg *m) {
    return (size_t)m->cfg.txl.layers * m->cfg.txl.mem_len * m->cfg.txl.d_model;
}

/* floats of one saved start state: encoder [2, 1, H] h and c, decoder [B, H] h and c */
static size_t state_floats(int B, int H) { return (size_t)4 * H + (size_t)2 * B * H; }

/* The state views of a block of state_floats(B, H) floats (prev: none). */
static dp_nn_seq2seq_state state_view(float *base, int B, int H) {
    dp_nn_seq2seq_state s = {base, base + 2 * H, base + 4 * H, base + 4 * H + (size_t)B * H, NULL, NULL};
    return s;
}

/* Frees m's workspaces and zeroes it. */
void dp_nn_seg_free(dp_nn_seg *m) {
    for (int i = 0; m->segs && i < m->slots; i++) dp_nn_seq2seq_free(&m->segs[i]);
    for (int i = 0; m->txls && i < m->slots; i++) dp_nn_txl_free(&m->txls[i]);
    free(m->segs);
    free(m->txls);
    dp_nn_seq2seq_free(&m->tail);
    dp_nn_txl_free(&m->ttail);
    free(m->tmem);
    free(m->tmlen);
    free(m->held);
    free(m->mem);
    free(m->imem);
    free(m->sload);
    memset(m, 0, sizeof *m);
}

/* Initialises segment workspace w (of T elements) of either kind. */
static dp_status seg_workspace_init(dp_nn_seg *m, int i, int T, const dp_nn_params *p, dp_error *err) {
    if (is_txl(m)) return dp_nn_txl_init(i < 0 ? &m->ttail : &m->txls[i], &m->cfg.txl, p, m->B, T, err);
    return dp_nn_seq2seq_init(i < 0 ? &m->tail : &m->segs[i], &m->cfg.seq2seq, p, m->B, T, err);
}

/* Binds the segment placer and allocates its workspaces; see nn_mars.h. */
dp_status dp_nn_seg_init(dp_nn_seg *m, const dp_nn_seg_config *cfg, const dp_nn_params *p, int N, int B,
                         int max_saved, dp_error *err) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->cfg.seq2seq.shared_input = 1;
    int seg = cfg->seg, txl = is_txl(m), H = txl ? 1 : cfg->seq2seq.hidden; /* TXL: no seq2seq state */
    if (seg < 1 || B < 1 || N < 1 || (unsigned)cfg->kind >= DP_NN_SEG_KIND_COUNT)
        return dp_error_set(err, DP_STATUS_INVALID, "segment placer: segment %d, batch %d, %d elements, kind %d",
                            seg, B, N, (int)cfg->kind);
    if (seg > N) m->cfg.seg = seg = N;
    m->N = N;
    m->B = B;
    m->F = txl ? cfg->txl.in_dim : cfg->seq2seq.in_dim;
    m->nseg = (N + seg - 1) / seg;
    m->tail_T = N - (m->nseg - 1) * seg;
    int nfull = m->tail_T == seg ? m->nseg : m->nseg - 1;
    m->slots = max_saved <= 0 || max_saved > nfull ? nfull : max_saved;
    size_t ns = (size_t)(m->slots > 0 ? m->slots : 1);
    if (txl) {
        m->txls = calloc(ns, sizeof *m->txls);
        m->tmem = calloc((size_t)m->nseg * tmem_floats(m) + 1, sizeof(float));
        m->tmlen = calloc((size_t)m->nseg, sizeof(int));
    } else {
        m->segs = calloc(ns, sizeof *m->segs);
    }
    m->held = malloc(sizeof(int) * ns);
    m->sload = txl ? NULL : calloc((size_t)m->nseg * B * cfg->seq2seq.devices + 1, sizeof(float));
    size_t sf = state_floats(B, H);
    size_t nf = (size_t)m->nseg * sf + 2 * (size_t)B + (size_t)B * seg + 2 * sf;
    m->mem = calloc(nf, sizeof(float));
    m->imem = calloc((size_t)B * seg + (size_t)m->nseg * B, sizeof(int));
    if ((txl ? !m->txls || !m->tmem || !m->tmlen : !m->segs || !m->sload) || !m->held || !m->mem || !m->imem) {
        dp_nn_seg_free(m);
        return dp_error_set(err, DP_STATUS_NOMEM, "segment placer: out of memory for %d elements", N);
    }
    for (int i = 0; i < m->slots; i++) {
        m->held[i] = -1;
        dp_status st = seg_workspace_init(m, i, seg, p, err);
        if (st) {
            m->slots = i; /* the ones initialised so far */
            dp_nn_seg_free(m);
            return st;
        }
    }
    if (m->tail_T != seg) {
        dp_status st = seg_workspace_init(m, -1, m->tail_T, p, err);
        if (st) {
            dp_nn_seg_free(m);
            return st;
        }
    }
    float *cur = m->mem;
    m->starts = nn_carve(&cur, (size_t)m->nseg * sf);
    m->lp = nn_carve(&cur, (size_t)B);
    m->ent = nn_carve(&cur, (size_t)B);
    m->sstep = nn_carve(&cur, (size_t)B * seg);
    m->dstate = nn_carve(&cur, 2 * sf);
    m->sact = m->imem;
    m->sprev = m->imem + (size_t)B * seg;
    return DP_STATUS_OK;
}

/* whether segment k has the tail's own workspace */
static int is_tail(const dp_nn_seg *m, int k) { return k == m->nseg - 1 && m->tail_T != m->cfg.seg; }

/* The seq2seq workspace of segment k. */
static dp_nn_seq2seq *seg_model(dp_nn_seg *m, int k) {
    return is_tail(m, k) ? &m->tail : &m->segs[k % m->slots];
}

/* The Transformer-XL workspace of segment k. */
static dp_nn_txl *txl_model(dp_nn_seg *m, int k) {
    return is_tail(m, k) ? &m->ttail : &m->txls[k % m->slots];
}

/* Runs segment k from its saved start state (actions in m->sact). */
static void seg_forward(dp_nn_seg *m, int k, dp_nn_decode_mode mode, dp_rng *rng, int want_entropy, float noise) {
    int B = m->B;
    const float *x = m->x + (size_t)k * m->cfg.seg * m->F;
    float *ent = want_entropy ? m->ent : NULL;
    if (is_txl(m)) {
        dp_nn_txl_state st = {m->tmem + (size_t)k * tmem_floats(m), m->tmlen[k]};
        dp_nn_txl_segment_forward(txl_model(m, k), m->lp, ent, m->sact, x, &st, mode, rng);
    } else {
        int H = m->cfg.seq2seq.hidden;
        dp_nn_seq2seq_state st = state_view(m->starts + (size_t)k * state_floats(B, H), B, H);
        st.prev = m->sprev + (size_t)k * B;
        dp_nn_seq2seq *sm = seg_model(m, k);
        sm->mask = m->mask;
        if (m->mask.w) {
            sm->mask.w = m->mask.w + (size_t)k * m->cfg.seg;
            st.load = m->sload + (size_t)k * B * m->cfg.seq2seq.devices;
        }
        dp_nn_seq2seq_segment_forward(sm, m->lp, ent, m->sact, x, &st, mode, rng, noise);
    }
    if (!is_tail(m, k)) m->held[k % m->slots] = k;
}

/* Saves the start state of segment k: none for the first, else the end of k - 1. */
static void save_start(dp_nn_seg *m, int k) {
    int B = m->B, D = m->cfg.seq2seq.devices;
    if (is_txl(m)) {
        size_t tf = tmem_floats(m);
        m->tmlen[k] = 0;
        if (k > 0) {
            const dp_nn_txl_state *last = &txl_model(m, k - 1)->last;
            int L = m->cfg.txl.layers, d = m->cfg.txl.d_model;
            memcpy(m->tmem + (size_t)k * tf, last->mem, sizeof(float) * (size_t)L * last->len * d);
            m->tmlen[k] = last->len;
        }
        return;
    }
    int H = m->cfg.seq2seq.hidden;
    size_t sf = state_floats(B, H);
    float *sv = m->starts + (size_t)k * sf;
    int *sp = m->sprev + (size_t)k * B;
    float *sl = m->sload + (size_t)k * B * D;
    if (k == 0) {
        memset(sv, 0, sizeof(float) * sf);
        memset(sl, 0, sizeof(float) * (size_t)B * D);
        for (int b = 0; b < B; b++) sp[b] = D;
        return;
    }
    const dp_nn_seq2seq_state *last = &seg_model(m, k - 1)->last;
    memcpy(sl, last->load, sizeof(float) * (size_t)B * D);
    dp_nn_seq2seq_state d = state_view(sv, B, H);
    memcpy(d.enc_h, last->enc_h, sizeof(float) * 2 * H);
    memcpy(d.enc_c, last->enc_c, sizeof(float) * 2 * H);
    memcpy(d.dec_h, last->dec_h, sizeof(float) * B * H);
    memcpy(d.dec_c, last->dec_c, sizeof(float) * B * H);
    memcpy(sp, last->prev, sizeof(int) * B);
}

/* sact [B, T] = the columns of segment k of actions [B, N] */
static void gather_seg(int *sact, const int *actions, int B, int N, int off, int T) {
    for (int b = 0; b < B; b++) memcpy(sact + (size_t)b * T, actions + (size_t)b * N + off, sizeof(int) * T);
}

/* Places every element for B samples; see nn_mars.h. */
void dp_nn_seg_forward(dp_nn_seg *m, float *logp_sum, float *logp_step, float *entropy, int *actions,
                       const float *x, dp_nn_decode_mode mode, dp_rng *rng, float noise_amp) {
    int B = m->B, N = m->N, seg = m->cfg.seg;
    assert(!(is_txl(m) && noise_amp > 0.0f) && "the Transformer-XL placer takes no logit noise");
    assert(!(is_txl(m) && m->mask.w) && "the Transformer-XL placer takes no memory mask");
    m->x = x;
    m->noise = noise_amp;
    for (int b = 0; b < B; b++) {
        logp_sum[b] = 0.0f;
        if (entropy) entropy[b] = 0.0f;
    }
    for (int k = 0; k < m->nseg; k++) {
        int off = k * seg, T = k == m->nseg - 1 ? m->tail_T : seg;
        save_start(m, k);
        gather_seg(m->sact, actions, B, N, off, T);
        seg_forward(m, k, mode, rng, entropy != NULL, noise_amp);
        for (int b = 0; b < B; b++) {
            memcpy(actions + (size_t)b * N + off, m->sact + (size_t)b * T, sizeof(int) * T);
            logp_sum[b] += m->lp[b];
            if (entropy) entropy[b] += m->ent[b];
        }
        if (logp_step) { /* the segment's log-softmax: seq2seq [T, B, D], Transformer-XL [T, D] */
            int D = is_txl(m) ? m->cfg.txl.devices : m->cfg.seq2seq.devices;
            const float *lp = is_txl(m) ? txl_model(m, k)->logp : seg_model(m, k)->logp;
            for (int b = 0; b < B; b++)
                for (int t = 0; t < T; t++) {
                    size_t row = is_txl(m) ? (size_t)t : (size_t)t * B + b;
                    logp_step[(size_t)b * N + off + t] = lp[row * D + m->sact[(size_t)b * T + t]];
                }
        }
    }
}

/* Backward of the last forward, segments in reverse; see nn_mars.h. */
void dp_nn_seg_backward(dp_nn_seg *m, float *dx, const float *dlogp, const float *dlogp_step,
                        const float *dentropy, const int *actions) {
    int B = m->B, N = m->N, seg = m->cfg.seg, F = m->F, txl = is_txl(m);
    int H = txl ? 1 : m->cfg.seq2seq.hidden;
    size_t sf = state_floats(B, H);
    assert(m->x != NULL);
    dp_nn_seq2seq_state d[2] = {state_view(m->dstate, B, H), state_view(m->dstate + sf, B, H)};
    for (int k = m->nseg - 1; k >= 0; k--) {
        int off = k * seg, T = k == m->nseg - 1 ? m->tail_T : seg;
        gather_seg(m->sact, actions, B, N, off, T);
        if (!is_tail(m, k) && m->held[k % m->slots] != k) { /* its workspace was reused: recompute */
            assert(m->noise == 0.0f && "a forward with logit noise cannot be recomputed");
            seg_forward(m, k, DP_NN_DECODE_MODE_TEACHER, NULL, 0, 0.0f);
        }
        if (dlogp_step)
            for (int b = 0; b < B; b++)
                memcpy(m->sstep + (size_t)b * T, dlogp_step + (size_t)b * N + off, sizeof(float) * T);
        const float *step = dlogp_step ? m->sstep : NULL, *x = m->x + (size_t)off * F;
        float *dxk = dx ? dx + (size_t)off * F : NULL;
        if (txl) {
            dp_nn_txl_segment_backward(txl_model(m, k), dxk, dlogp, step, dentropy, m->sact, x);
            continue;
        }
        dp_nn_seq2seq_state *dstart = k > 0 ? &d[k % 2] : NULL;
        if (dstart) memset(dstart->enc_h, 0, sizeof(float) * sf); /* the whole block */
        const dp_nn_seq2seq_state *dlast = k < m->nseg - 1 ? &d[(k + 1) % 2] : NULL;
        dp_nn_seq2seq_segment_backward(seg_model(m, k), dxk, dstart, dlogp, step, dentropy, dlast, m->sact, x);
    }
}

/* ---- Mars's policy ----------------------------------------------------------- */

/* The segment placer's configuration within Mars's. */
static dp_nn_seg_config mars_seg_config(const dp_nn_mars_config *cfg) {
    dp_nn_seg_config sc = {cfg->placer_kind, cfg->placer, cfg->txl, cfg->seg};
    return sc;
}

/* Lists the GCN's and the DGI discriminator's tensors, then the placer's. */
int dp_nn_mars_specs(dp_nn_tensor_spec *specs, const dp_nn_mars_config *cfg) {
    int n = dp_nn_gcn_specs(specs, &cfg->gcn);
    dp_nn_seg_config sc = mars_seg_config(cfg);
    return n + dp_nn_seg_specs(specs ? specs + n : NULL, &sc);
}

/* Frees m's workspaces and zeroes it. */
void dp_nn_mars_free(dp_nn_mars *m) {
    dp_nn_seg_free(&m->seg);
    dp_nn_gcn_free(&m->gcn);
    free(m->demb);
    memset(m, 0, sizeof *m);
}

/* Binds the policy and allocates its workspaces; see nn_mars.h. */
dp_status dp_nn_mars_init(dp_nn_mars *m, const dp_nn_mars_config *cfg, const dp_nn_params *p,
                          const dp_nn_graph *g, const float *x, int B, int max_saved,
                          dp_error *err) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    int N = g->n, GH = cfg->gcn.hidden, txl = cfg->placer_kind == DP_NN_SEG_KIND_TXL;
    int in_dim = txl ? cfg->txl.in_dim : cfg->placer.in_dim;
    if (in_dim != GH)
        return dp_error_set(err, DP_STATUS_INVALID, "mars policy: the placer takes %d features, the GCN gives %d",
                            in_dim, GH);
    m->g = g;
    m->x = x;
    m->N = N;
    m->B = B;
    dp_nn_seg_config sc = mars_seg_config(cfg);
    dp_status st = dp_nn_seg_init(&m->seg, &sc, p, N, B, max_saved, err);
    if (!st) st = dp_nn_gcn_init(&m->gcn, &cfg->gcn, p, N, err);
    if (!st && !(m->demb = calloc((size_t)N * GH, sizeof(float))))
        st = dp_error_set(err, DP_STATUS_NOMEM, "mars policy: out of memory for %d operations", N);
    if (st) dp_nn_mars_free(m);
    return st;
}

/* Places every operation for B samples, with each decision's log-probability; see nn_mars.h. */
void dp_nn_mars_forward_steps(dp_nn_mars *m, float *logp_sum, float *logp_step, float *entropy, int *actions,
                              dp_nn_decode_mode mode, dp_rng *rng) {
    m->emb = dp_nn_gcn_encode(&m->gcn, m->g, m->x);
    dp_nn_seg_forward(&m->seg, logp_sum, logp_step, entropy, actions, m->emb, mode, rng, 0.0f);
}

/* Places every operation for B samples; see nn_mars.h. */
void dp_nn_mars_forward(dp_nn_mars *m, float *logp_sum, float *entropy, int *actions,
                        dp_nn_decode_mode mode, dp_rng *rng) {
    dp_nn_mars_forward_steps(m, logp_sum, NULL, entropy, actions, mode, rng);
}

/* Backward of the last forward: the placer, then the GCN; see nn_mars.h. */
void dp_nn_mars_backward(dp_nn_mars *m, const float *dlogp, const float *dlogp_step,
                         const float *dentropy, const int *actions) {
    int train_enc = !m->cfg.freeze_encoder;
    assert(m->emb != NULL);
    if (train_enc) memset(m->demb, 0, sizeof(float) * (size_t)m->N * m->cfg.gcn.hidden);
    dp_nn_seg_backward(&m->seg, train_enc ? m->demb : NULL, dlogp, dlogp_step, dentropy, actions);
    if (train_enc) dp_nn_gcn_encode_backward(&m->gcn, NULL, m->g, m->x, m->demb);
}
