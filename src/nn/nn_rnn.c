/* LSTM over a sequence, bidirectional LSTM, single cell and decoder steps,
 * and additive attention. */
#include "dplace/nn.h"

#include <assert.h>
#include <string.h>

#include "nn_internal.h"
#include "nn_kern.h"

/* Parameter block of an LSTM: w_ih [4H, C], w_hh [4H, H], bias [4H]. */
size_t dp_nn_lstm_param_count(int C, int H) {
    return (size_t)4 * H * C + (size_t)4 * H * H + (size_t)4 * H;
}

/* dgates [B, T, 4H] + hprev [B, T, H] + dh [B, H] + dc [B, H] */
size_t dp_nn_lstm_scratch_count(int B, int T, int H) {
    return (size_t)B * T * 5 * H + (size_t)2 * B * H;
}

/* One row of the cell update with c_prev present (cp) or zero (cp NULL);
 * written as two plain loops so each vectorises. */
static inline void cell_row(float *restrict h, float *restrict c, float *restrict g,
                            const float *restrict cp, int H) {
    float *restrict gi = g, *restrict gf = g + H, *restrict gg = g + 2 * H, *restrict go = g + 3 * H;
    if (cp) {
        for (int j = 0; j < H; j++) {
            float i = nn_sigmoid(gi[j]), f = nn_sigmoid(gf[j]);
            float u = nn_tanh(gg[j]), o = nn_sigmoid(go[j]);
            float cn = f * cp[j] + i * u;
            gi[j] = i, gf[j] = f, gg[j] = u, go[j] = o;
            c[j] = cn;
            h[j] = o * nn_tanh(cn);
        }
    } else {
        for (int j = 0; j < H; j++) {
            float i = nn_sigmoid(gi[j]), f = nn_sigmoid(gf[j]);
            float u = nn_tanh(gg[j]), o = nn_sigmoid(go[j]);
            float cn = i * u;
            gi[j] = i, gf[j] = f, gg[j] = u, go[j] = o;
            c[j] = cn;
            h[j] = o * nn_tanh(cn);
        }
    }
}

/* h [H], c [H]; g [4H] pre-activations in, activated gates (i f g o) out */
void nn_lstm_cell_row(float *h, float *c, float *g, const float *c_prev, int H) {
    cell_row(h, c, g, c_prev, H);
}

static inline void cell_row_backward(float *restrict dg, float *restrict dc,
                                     const float *restrict dh, const float *restrict g,
                                     const float *restrict c, const float *restrict cp, int H) {
    const float *gi = g, *gf = g + H, *gg = g + 2 * H, *go = g + 3 * H;
    for (int j = 0; j < H; j++) {
        float tc = nn_tanh(c[j]);
        float i = gi[j], f = gf[j], u = gg[j], o = go[j];
        float cpj = cp ? cp[j] : 0.0f;
        float dct = dc[j] + dh[j] * o * (1.0f - tc * tc);
        dg[j] = dct * u * i * (1.0f - i);
        dg[H + j] = dct * cpj * f * (1.0f - f);
        dg[2 * H + j] = dct * i * (1.0f - u * u);
        dg[3 * H + j] = dh[j] * tc * o * (1.0f - o);
        dc[j] = dct * f;
    }
}

/* dg [4H] = gate pre-activation grads; dc [H] in: into c, out: into c_prev */
void nn_lstm_cell_row_backward(float *dg, float *dc, const float *dh, const float *g,
                               const float *c, const float *c_prev, int H) {
    if (c_prev) cell_row_backward(dg, dc, dh, g, c, c_prev, H);
    else cell_row_backward(dg, dc, dh, g, c, NULL, H); /* c_prev = 0: no f-gate gradient */
}

/* out, cell [B, T, H]; gates [B, T, 4H]; inp [B, T, C]; h0, c0 [B, H]; w block */
void dp_nn_lstm_forward(float *out, float *h_last, float *c_last, float *cell, float *gates,
                        const float *inp, const float *h0, const float *c0, const float *w,
                        int B, int T, int C, int H, int reverse) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const float *w_ih = w, *w_hh = w + (size_t)4 * H * C, *bias = w_hh + (size_t)4 * H * H;
    const int G4 = 4 * H;
    /* input contribution for every step at once */
    dp_nn_linear_forward(gates, inp, w_ih, bias, B * T, C, G4);
    for (int s = 0; s < T; s++) {
        int t = reverse ? T - 1 - s : s;
        int tp = reverse ? t + 1 : t - 1;
        const float *hp;
        int ldh;
        if (s == 0) {
            hp = h0;
            ldh = H;
        } else {
            hp = out + (size_t)tp * H;
            ldh = T * H;
        }
        if (hp) nn_gemm(0, 1, B, G4, H, 1.0f, hp, ldh, w_hh, H, 1.0f, gates + (size_t)t * G4, T * G4);
        for (int b = 0; b < B; b++) {
            size_t bt = (size_t)b * T + t;
            const float *cp = s == 0 ? (c0 ? c0 + (size_t)b * H : NULL)
                                     : cell + ((size_t)b * T + tp) * H;
            nn_lstm_cell_row(out + bt * H, cell + bt * H, gates + bt * G4, cp, H);
        }
    }
    int tl = reverse ? 0 : T - 1;
    for (int b = 0; b < B; b++) {
        size_t bt = (size_t)b * T + tl;
        if (h_last) memcpy(h_last + (size_t)b * H, out + bt * H, sizeof(float) * H);
        if (c_last) memcpy(c_last + (size_t)b * H, cell + bt * H, sizeof(float) * H);
    }
    nn_fp_leave(fp_);
}

/* backward of dp_nn_lstm_forward; see nn.h for the shapes. Leaves the gate
 * gradients dgates [B, T, 4H] at the start of scratch (the bidirectional
 * LSTM forms dinp from them). */
void dp_nn_lstm_backward(float *dinp, float *dh0, float *dc0, float *dw, float *scratch,
                         const float *dout, const float *dh_last, const float *dc_last,
                         const float *out, const float *cell, const float *gates,
                         const float *inp, const float *h0, const float *c0, const float *w,
                         int B, int T, int C, int H, int reverse) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const float *w_ih = w, *w_hh = w + (size_t)4 * H * C;
    const int G4 = 4 * H;
    float *dgates = scratch;
    float *hprev = dgates + (size_t)B * T * G4;
    float *dh = hprev + (size_t)B * T * H;
    float *dc = dh + (size_t)B * H;
    if (dh_last) memcpy(dh, dh_last, sizeof(float) * (size_t)B * H);
    else memset(dh, 0, sizeof(float) * (size_t)B * H);
    if (dc_last) memcpy(dc, dc_last, sizeof(float) * (size_t)B * H);
    else memset(dc, 0, sizeof(float) * (size_t)B * H);
    for (int s = T - 1; s >= 0; s--) {
        int t = reverse ? T - 1 - s : s;
        int tp = reverse ? t + 1 : t - 1;
        for (int b = 0; b < B; b++) {
            size_t bt = (size_t)b * T + t;
            float *dhb = dh + (size_t)b * H;
            const float *doutb = dout + bt * H;
            for (int j = 0; j < H; j++) dhb[j] += doutb[j];
            const float *cp = s == 0 ? (c0 ? c0 + (size_t)b * H : NULL)
                                     : cell + ((size_t)b * T + tp) * H;
            nn_lstm_cell_row_backward(dgates + bt * G4, dc + (size_t)b * H, dhb, gates + bt * G4,
                                      cell + bt * H, cp, H);
        }
        /* gradient into the previous hidden state */
        nn_gemm(0, 0, B, H, G4, 1.0f, dgates + (size_t)t * G4, T * G4, w_hh, H, 0.0f, dh, H);
    }
    if (dh0) for (size_t k = 0; k < (size_t)B * H; k++) dh0[k] += dh[k];
    if (dc0) for (size_t k = 0; k < (size_t)B * H; k++) dc0[k] += dc[k];
    if (dw) {
        /* hprev row (b, t) = the hidden state that fed step t */
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++) {
                int first = reverse ? t == T - 1 : t == 0;
                float *d = hprev + ((size_t)b * T + t) * H;
                if (first) {
                    if (h0) memcpy(d, h0 + (size_t)b * H, sizeof(float) * H);
                    else memset(d, 0, sizeof(float) * H);
                } else {
                    memcpy(d, out + ((size_t)b * T + (reverse ? t + 1 : t - 1)) * H, sizeof(float) * H);
                }
            }
        float *dw_ih = dw, *dw_hh = dw + (size_t)G4 * C, *dbias = dw_hh + (size_t)G4 * H;
        nn_gemm(1, 0, G4, C, B * T, 1.0f, dgates, G4, inp, C, 1.0f, dw_ih, C);
        nn_gemm(1, 0, G4, H, B * T, 1.0f, dgates, G4, hprev, H, 1.0f, dw_hh, H);
        nn_add_colsum(dbias, dgates, B * T, G4, (size_t)G4);
    }
    if (dinp) nn_gemm(0, 0, B * T, C, G4, 1.0f, dgates, G4, w_ih, C, 1.0f, dinp, C);
    nn_fp_leave(fp_);
}

/* ---- bidirectional ------------------------------------------------------------ */

/* per direction: out [B,T,H], cell [B,T,H], gates [B,T,4H] */
size_t dp_nn_bilstm_act_count(int B, int T, int H) { return (size_t)2 * 6 * B * T * H; }

/* split dout [2, B, T, H] + one LSTM's scratch per direction */
size_t dp_nn_bilstm_scratch_count(int B, int T, int H) {
    return (size_t)2 * B * T * H + 2 * dp_nn_lstm_scratch_count(B, T, H);
}

/* The two directions are independent recurrences: with two threads each
 * runs one (each streams its own recurrent weights every step); nested
 * products inside a pool job run on their thread alone. */
typedef struct bilstm_job {
    int backward;
    float *out, *h_last, *c_last, *acts, *dh0, *dc0, *dw, *scratch;
    const float *inp, *h0, *c0, *w, *dout, *dh_last, *dc_last;
    int B, T, C, H;
} bilstm_job;

/* Runs direction dir of the job (forward or backward pass). */
static void bilstm_dir(const bilstm_job *j, int dir) {
    int B = j->B, T = j->T, C = j->C, H = j->H;
    size_t bth = (size_t)B * T * H, bh = (size_t)B * H, P = dp_nn_lstm_param_count(C, H);
    float *a = j->acts + (size_t)dir * 6 * bth;
    const float *h0 = j->h0 ? j->h0 + dir * bh : NULL, *c0 = j->c0 ? j->c0 + dir * bh : NULL;
    if (!j->backward) {
        dp_nn_lstm_forward(a, j->h_last ? j->h_last + dir * bh : NULL, j->c_last ? j->c_last + dir * bh : NULL,
                           a + bth, a + 2 * bth, j->inp, h0, c0, j->w + dir * P, B, T, C, H, dir);
        return;
    }
    /* dinp is added afterwards from each direction's gate gradients, which
     * dp_nn_lstm_backward leaves at the start of its scratch */
    dp_nn_lstm_backward(NULL, j->dh0 ? j->dh0 + dir * bh : NULL, j->dc0 ? j->dc0 + dir * bh : NULL,
                        j->dw ? j->dw + dir * P : NULL,
                        j->scratch + 2 * bth + (size_t)dir * dp_nn_lstm_scratch_count(B, T, H),
                        j->scratch + (size_t)dir * bth, j->dh_last ? j->dh_last + dir * bh : NULL,
                        j->dc_last ? j->dc_last + dir * bh : NULL, a, a + bth, a + 2 * bth, j->inp, h0, c0,
                        j->w + dir * P, B, T, C, H, dir);
}

static void bilstm_part(void *ctx, int tid, int nt) {
    const bilstm_job *j = ctx;
    for (int dir = tid; dir < 2; dir += nt) bilstm_dir(j, dir);
}

/* out [B, T, 2H]; h_last, c_last, h0, c0 [2, B, H]; acts; inp [B, T, C]; w 2 blocks */
void dp_nn_bilstm_forward(float *out, float *h_last, float *c_last, float *acts, const float *inp,
                          const float *h0, const float *c0, const float *w,
                          int B, int T, int C, int H) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    size_t bth = (size_t)B * T * H;
    bilstm_job j = {0, out, h_last, c_last, acts, NULL, NULL, NULL, NULL, inp, h0, c0, w, NULL, NULL, NULL,
                    B, T, C, H};
    nn_parallel(2, bilstm_part, &j);
    const float *parts[2] = {acts, acts + 6 * bth};
    const int widths[2] = {H, H};
    dp_nn_concat_forward(out, parts, widths, 2, B * T);
    nn_fp_leave(fp_);
}

/* backward of dp_nn_bilstm_forward; see nn.h for the shapes */
void dp_nn_bilstm_backward(float *dinp, float *dh0, float *dc0, float *dw, float *scratch,
                           const float *dout, const float *dh_last, const float *dc_last,
                           const float *acts, const float *inp, const float *h0, const float *c0,
                           const float *w, int B, int T, int C, int H) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    size_t bth = (size_t)B * T * H, P = dp_nn_lstm_param_count(C, H);
    float *split = scratch;
    memset(split, 0, sizeof(float) * 2 * bth);
    float *const parts[2] = {split, split + bth};
    const int widths[2] = {H, H};
    dp_nn_concat_backward(parts, dout, widths, 2, B * T);
    bilstm_job j = {1, NULL, NULL, NULL, (float *)acts, dh0, dc0, dw, scratch, inp, h0, c0, w, NULL,
                    dh_last, dc_last, B, T, C, H};
    nn_parallel(2, bilstm_part, &j);
    if (dinp)
        for (int dir = 0; dir < 2; dir++) { /* dinp [B T, C] += dgates [B T, 4H] w_ih [4H, C] */
            const float *dgates = scratch + 2 * bth + (size_t)dir * dp_nn_lstm_scratch_count(B, T, H);
            nn_gemm(0, 0, B * T, C, 4 * H, 1.0f, dgates, 4 * H, w + dir * P, C, 1.0f, dinp, C);
        }
    nn_fp_leave(fp_);
}

/* ---- single steps ---------------------------------------------------------------- */

/* h, c [B, H]; gates [B, 4H]; x [B, C]; h_prev, c_prev [B, H]; w block */
void dp_nn_lstm_cell_forward(float *h, float *c, float *gates, const float *x,
                             const float *h_prev, const float *c_prev, const float *w,
                             int B, int C, int H) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const float *w_ih = w, *w_hh = w + (size_t)4 * H * C, *bias = w_hh + (size_t)4 * H * H;
    dp_nn_linear_forward(gates, x, w_ih, bias, B, C, 4 * H);
    if (h_prev) nn_gemm(0, 1, B, 4 * H, H, 1.0f, h_prev, H, w_hh, H, 1.0f, gates, 4 * H);
    for (int b = 0; b < B; b++)
        nn_lstm_cell_row(h + (size_t)b * H, c + (size_t)b * H, gates + (size_t)b * 4 * H,
                         c_prev ? c_prev + (size_t)b * H : NULL, H);
    nn_fp_leave(fp_);
}

/* dx [B, C], dh_prev, dc_prev [B, H], dw += ...; dh, dc [B, H]; scratch [B, 4H] */
void dp_nn_lstm_cell_backward(float *dx, float *dh_prev, float *dc_prev, float *dw, float *scratch,
                              const float *dh, const float *dc, const float *c, const float *gates,
                              const float *x, const float *h_prev, const float *c_prev,
                              const float *w, int B, int C, int H) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const float *w_ih = w, *w_hh = w + (size_t)4 * H * C;
    const int G4 = 4 * H;
    float *dg = scratch;
    for (int b = 0; b < B; b++) {
        float *dcb = dc_prev ? dc_prev + (size_t)b * H : NULL;
        const float *cp = c_prev ? c_prev + (size_t)b * H : NULL;
        const float *g = gates + (size_t)b * G4;
        const float *cb = c + (size_t)b * H;
        const float *dhb = dh + (size_t)b * H;
        float *dgb = dg + (size_t)b * G4;
        for (int j = 0; j < H; j++) {
            float tc = nn_tanh(cb[j]);
            float i = g[j], f = g[H + j], u = g[2 * H + j], o = g[3 * H + j];
            float cpj = cp ? cp[j] : 0.0f;
            float dct = (dc ? dc[(size_t)b * H + j] : 0.0f) + dhb[j] * o * (1.0f - tc * tc);
            dgb[j] = dct * u * i * (1.0f - i);
            dgb[H + j] = dct * cpj * f * (1.0f - f);
            dgb[2 * H + j] = dct * i * (1.0f - u * u);
            dgb[3 * H + j] = dhb[j] * tc * o * (1.0f - o);
            if (dcb) dcb[j] += dct * f;
        }
    }
    if (dx) nn_gemm(0, 0, B, C, G4, 1.0f, dg, G4, w_ih, C, 1.0f, dx, C);
    if (dh_prev) nn_gemm(0, 0, B, H, G4, 1.0f, dg, G4, w_hh, H, 1.0f, dh_prev, H);
    if (dw) {
        float *dw_ih = dw, *dw_hh = dw + (size_t)G4 * C, *dbias = dw_hh + (size_t)G4 * H;
        nn_gemm(1, 0, G4, C, B, 1.0f, dg, G4, x, C, 1.0f, dw_ih, C);
        if (h_prev) nn_gemm(1, 0, G4, H, B, 1.0f, dg, G4, h_prev, H, 1.0f, dw_hh, H);
        nn_add_colsum(dbias, dg, B, G4, (size_t)G4);
    }
    nn_fp_leave(fp_);
}

/* h, c [B, H]; x [B, E+X]; gates [B, 4H]; prev [B]; extra [B, X]; table [V, E] */
void dp_nn_decoder_step_forward(float *h, float *c, float *x, float *gates, const int *prev,
                                const float *extra, const float *h_prev, const float *c_prev,
                                const float *table, const float *w,
                                int B, int V, int E, int X, int H) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    for (int b = 0; b < B; b++) {
        assert(prev[b] >= 0 && prev[b] < V);
        float *xb = x + (size_t)b * (E + X);
        memcpy(xb, table + (size_t)prev[b] * E, sizeof(float) * E);
        if (X > 0) memcpy(xb + E, extra + (size_t)b * X, sizeof(float) * X);
    }
    dp_nn_lstm_cell_forward(h, c, gates, x, h_prev, c_prev, w, B, E + X, H);
    nn_fp_leave(fp_);
}

/* dextra [B, X], dh_prev, dc_prev [B, H], dtable [V, E], dw += ...; scratch [B, 4H+E+X] */
void dp_nn_decoder_step_backward(float *dextra, float *dh_prev, float *dc_prev, float *dtable,
                                 float *dw, float *scratch, const float *dh, const float *dc,
                                 const float *c, const float *x, const float *gates,
                                 const int *prev, const float *h_prev, const float *c_prev,
                                 const float *w, int B, int V, int E, int X, int H) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    float *dx = scratch + (size_t)B * 4 * H;
    memset(dx, 0, sizeof(float) * (size_t)B * (E + X));
    dp_nn_lstm_cell_backward(dx, dh_prev, dc_prev, dw, scratch, dh, dc, c, gates, x, h_prev,
                             c_prev, w, B, E + X, H);
    for (int b = 0; b < B; b++) {
        const float *dxb = dx + (size_t)b * (E + X);
        if (dtable) {
            float *d = dtable + (size_t)prev[b] * E;
            for (int j = 0; j < E; j++) d[j] += dxb[j];
        }
        if (dextra)
            for (int j = 0; j < X; j++) dextra[(size_t)b * X + j] += dxb[E + j];
    }
    nn_fp_leave(fp_);
}

/* ---- additive attention ------------------------------------------------------------ */

/* ctx [B, E]; att [B, T]; act [B, T, A]; qp [B, A]; query [B, Q]; keys [B, T, A];
 * enc [B, T, E]; w_q [A, Q]; v [A] */
void dp_nn_attention_forward(float *ctx, float *att, float *act, float *qp, const float *query,
                             const float *keys, const float *enc, const float *w_q,
                             const float *v, int B, int T, int Q, int A, int E) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    const nn_kernels *k = nn_kern_get();
    dp_nn_linear_forward(qp, query, w_q, NULL, B, Q, A);
    for (int b = 0; b < B; b++) {
        float *sc = att + (size_t)b * T;
        /* act [T, A] = tanh(keys + q), scores [T] = act v, in one pass */
        k->attn_score(act + (size_t)b * T * A, sc, keys + (size_t)b * T * A, qp + (size_t)b * A, v,
                      T, A);
        float mx = sc[0];
        for (int j = 1; j < T; j++) mx = sc[j] > mx ? sc[j] : mx;
        float z = 0.0f;
        for (int j = 0; j < T; j++) {
            sc[j] = nn_exp(sc[j] - mx);
            z += sc[j];
        }
        float iz = 1.0f / z;
        for (int j = 0; j < T; j++) sc[j] *= iz;
        /* ctx [E] = att [T] enc [T, E] */
        float *cb = ctx + (size_t)b * E;
        const float *encb = enc + (size_t)b * T * E;
        memset(cb, 0, sizeof(float) * E);
        for (int j = 0; j < T; j++) k->axpy(cb, sc[j], encb + (size_t)j * E, E);
    }
    nn_fp_leave(fp_);
}

/* dqp [B, A] = gradient of the projected query (overwritten); dkeys [B, T, A],
 * denc [B, T, E], dv [A] += ...; ds [B, T] scratch */
void nn_attention_backward_core(float *dqp, float *dkeys, float *denc, float *dv, float *ds,
                                const float *dctx, const float *att, const float *act,
                                const float *enc, const float *v, int B, int T, int A, int E) {
    const nn_kernels *k = nn_kern_get();
    memset(dqp, 0, sizeof(float) * (size_t)B * A);
    for (int b = 0; b < B; b++) {
        const float *encb = enc + (size_t)b * T * E;
        const float *ab = att + (size_t)b * T;
        const float *dcb = dctx + (size_t)b * E;
        float *dsb = ds + (size_t)b * T;
        /* ds [T] = enc [T, E] dctx [E]; denc [T, E] += att dctx^T */
        for (int j = 0; j < T; j++) {
            dsb[j] = k->dot(encb + (size_t)j * E, dcb, E);
            if (denc) k->axpy(denc + ((size_t)b * T + j) * E, ab[j], dcb, E);
        }
        /* through the softmax */
        float dot = 0.0f;
        for (int j = 0; j < T; j++) dot += ab[j] * dsb[j];
        for (int j = 0; j < T; j++) dsb[j] = ab[j] * (dsb[j] - dot);
        /* through the scores and the tanh */
        k->attn_score_backward(dkeys ? dkeys + (size_t)b * T * A : NULL, dqp + (size_t)b * A, dv,
                               dsb, act + (size_t)b * T * A, v, T, A);
    }
}

/* dquery [B, Q], dkeys [B, T, A], denc [B, T, E], dw_q [A, Q], dv [A] += ...;
 * dctx [B, E]; scratch [B, T + A] */
void dp_nn_attention_backward(float *dquery, float *dkeys, float *denc, float *dw_q, float *dv,
                              float *scratch, const float *dctx, const float *att, const float *act,
                              const float *query, const float *enc, const float *w_q,
                              const float *v, int B, int T, int Q, int A, int E) {
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    float *ds = scratch;                  /* [B, T] */
    float *dqp = scratch + (size_t)B * T; /* [B, A] */
    nn_attention_backward_core(dqp, dkeys, denc, dv, ds, dctx, att, act, enc, v, B, T, A, E);
    dp_nn_linear_backward(dquery, dw_q, NULL, dqp, query, w_q, B, Q, A);
    nn_fp_leave(fp_);
}
