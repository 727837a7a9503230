/* Recurrent zoo models as TensorFlow 1.x builds their training graphs:
 * statically unrolled LSTM layers (BasicLSTMCell), dropout, per-step or
 * whole-sequence softmax, attention, Adam or SGD with gradient clipping.
 * Scopes follow docs/zoo.md ("lstm/layer_K/tT", "encoder/layer_K/tT",
 * "decoder/layer_K/tT", "attention/tT", "softmax", "embedding/..."), which is
 * what the expert placements read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zoo/models.h"
#include "zoo/tfb.h"

typedef struct lstm_vars {
    tfb_t kernel, bias;
} lstm_vars;

/* Variables of one LSTM layer with input width `in` and `h` units, in the
 * current scope. */
static lstm_vars lstm_variables(tfb *b, int64_t in, int64_t h) {
    int64_t kd[2] = {in + h, 4 * h}, bd[1] = {4 * h};
    lstm_vars v = {tfb_variable(b, "kernel", 2, kd), tfb_variable(b, "bias", 1, bd)};
    return v;
}

/* One BasicLSTMCell step: gates = [x, h] W + b; i, j, f, o = split(gates);
 * c' = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j);
 * h' = tanh(c') * sigmoid(o). Updates *h and *c. */
static void lstm_step(tfb *b, const lstm_vars *v, tfb_t x, tfb_t *h, tfb_t *c) {
    tfb_t xs[2] = {x, *h};
    tfb_t cat = tfb_concat(b, 2, xs, 1);
    tfb_t gates = tfb_bias_add(b, tfb_matmul(b, cat, v->kernel, 0), v->bias);
    tfb_t p[4];
    tfb_split(b, gates, 4, 1, p);
    tfb_t fb = tfb_const(b, 0, NULL);
    tfb_t f = tfb_unary(b, "Sigmoid", tfb_binary(b, "Add", p[2], fb));
    tfb_t keep = tfb_binary(b, "Mul", *c, f);
    tfb_t write = tfb_binary(b, "Mul", tfb_unary(b, "Sigmoid", p[0]), tfb_unary(b, "Tanh", p[1]));
    *c = tfb_binary(b, "Add", keep, write);
    *h = tfb_binary(b, "Mul", tfb_unary(b, "Tanh", *c), tfb_unary(b, "Sigmoid", p[3]));
}

static tfb_t zero_state(tfb *b, int64_t batch, int64_t h) {
    int64_t d[2] = {batch, h};
    return tfb_aux(b, "Fill", 0, NULL, DP_DTYPE_FLOAT32, 2, d, 1);
}

/* ---- RNN language model (Zaremba et al. 2014, "large"-style) ---- */
static tfb_t build_lm(tfb *b, const zoo_rnn_config *c) {
    int64_t B = c->batch, H = c->hidden, V = c->vocab;
    int T = c->steps;
    int64_t bt[2] = {B, T}, ed[2] = {V, H};
    tfb_scope(b, "input");
    tfb_t ids = tfb_input(b, "words", DP_DTYPE_INT32, 2, bt);
    tfb_t targets = tfb_input(b, "targets", DP_DTYPE_INT32, 2, bt);
    tfb_scope(b, "embedding");
    tfb_t emb = tfb_variable(b, "embedding", 2, ed);
    tfb_t x = tfb_dropout(b, tfb_gather(b, emb, ids));
    tfb_t *in = malloc((size_t)T * sizeof(tfb_t));
    if (!in) return -1;
    tfb_unpack(b, x, 1, in);
    for (int l = 0; l < c->layers && !tfb_failed(b); l++) {
        tfb_scope(b, "lstm/layer_%d", l);
        lstm_vars v = lstm_variables(b, H, H);
        tfb_t h = zero_state(b, B, H), cs = zero_state(b, B, H);
        for (int t = 0; t < T; t++) {
            tfb_scope(b, "lstm/layer_%d/t%d", l, t);
            lstm_step(b, &v, in[t], &h, &cs);
            in[t] = tfb_dropout(b, h);
        }
    }
    tfb_scope(b, "softmax");
    tfb_t out = tfb_concat(b, T, in, 1);
    free(in);
    int64_t fd[2] = {B * T, H}, nd[1] = {B * T};
    out = tfb_reshape(b, out, 2, fd);
    tfb_t logits = tfb_dense(b, out, V, "weights", "biases");
    tfb_scope(b, "loss");
    tfb_t labels = tfb_reshape(b, targets, 1, nd);
    tfb_t loss = tfb_xent(b, logits, labels);
    tfb_t w = tfb_const(b, 1, nd);
    loss = tfb_binary(b, "Mul", loss, w);
    loss = tfb_reduce(b, "Sum", loss, 0, 0);
    return tfb_binary(b, "RealDiv", loss, tfb_const(b, 0, NULL));
}

/* ---- attention NMT (legacy_seq2seq embedding_attention_seq2seq) ---- */
static tfb_t build_nmt(tfb *b, const zoo_rnn_config *c) {
    int64_t B = c->batch, H = c->hidden, V = c->vocab, A = c->hidden;
    int T = c->steps, L = c->layers;
    if (T > 1024 || L > 64) return -1;
    int64_t bt[2] = {B, T}, ed[2] = {V, H};
    tfb_t *x = malloc((size_t)T * 3 * sizeof(tfb_t));
    tfb_t *h = malloc((size_t)L * 2 * sizeof(tfb_t));
    lstm_vars *lv = malloc((size_t)L * sizeof(lstm_vars));
    if (!x || !h || !lv) {
        free(x);
        free(h);
        free(lv);
        return -1;
    }
    tfb_t *tgt_ids = x + T, *labels = x + 2 * T, *cst = h + L;
    tfb_scope(b, "input");
    tfb_t src = tfb_input(b, "source", DP_DTYPE_INT32, 2, bt);
    tfb_t tgt = tfb_input(b, "target_in", DP_DTYPE_INT32, 2, bt);
    tfb_t lab = tfb_input(b, "target_out", DP_DTYPE_INT32, 2, bt);
    tfb_t src_ids[1024];
    tfb_unpack(b, src, 1, src_ids);
    tfb_unpack(b, tgt, 1, tgt_ids);
    tfb_unpack(b, lab, 1, labels);
    /* encoder: an embedding lookup per step (EmbeddingWrapper), L layers */
    tfb_scope(b, "embedding/encoder");
    tfb_t eemb = tfb_variable(b, "embedding", 2, ed);
    for (int t = 0; t < T; t++) {
        tfb_scope(b, "embedding/encoder/t%d", t);
        x[t] = tfb_gather(b, eemb, src_ids[t]);
    }
    for (int l = 0; l < L && !tfb_failed(b); l++) {
        tfb_scope(b, "encoder/layer_%d", l);
        lstm_vars v = lstm_variables(b, H, H);
        tfb_t hh = zero_state(b, B, H), cc = zero_state(b, B, H);
        for (int t = 0; t < T; t++) {
            tfb_scope(b, "encoder/layer_%d/t%d", l, t);
            lstm_step(b, &v, tfb_dropout(b, x[t]), &hh, &cc);
            x[t] = hh;
        }
        h[l] = hh;
        cst[l] = cc;
    }
    /* attention states [B, T, 1, H] and their 1x1-conv features */
    tfb_scope(b, "attention");
    int64_t r3[3] = {B, 1, H}, r4[4] = {B, T, 1, H}, kd[4] = {1, 1, H, A}, vd[1] = {A};
    for (int t = 0; t < T; t++) x[t] = tfb_reshape(b, x[t], 3, r3);
    tfb_t states = tfb_reshape(b, tfb_concat(b, T, x, 1), 4, r4);
    tfb_t feats = tfb_conv2d(b, states, tfb_variable(b, "AttnW", 4, kd), 1, 1);
    tfb_t av = tfb_variable(b, "AttnV", 1, vd);
    int64_t qd[2] = {2 * L * H, A}, wd[2] = {2 * H, H}, bd[1] = {H}, ad[1] = {A};
    tfb_t qw = tfb_variable(b, "query_W", 2, qd), qb = tfb_variable(b, "query_b", 1, ad);
    tfb_scope(b, "decoder");
    tfb_t iw = tfb_variable(b, "input_W", 2, wd), ib = tfb_variable(b, "input_b", 1, bd);
    tfb_t ow = tfb_variable(b, "output_W", 2, wd), ob = tfb_variable(b, "output_b", 1, bd);
    for (int l = 0; l < L; l++) {
        tfb_scope(b, "decoder/layer_%d", l);
        lv[l] = lstm_variables(b, H, H);
    }
    tfb_scope(b, "embedding/decoder");
    tfb_t demb = tfb_variable(b, "embedding", 2, ed);
    tfb_scope(b, "softmax");
    int64_t sd[2] = {H, V}, sbd[1] = {V};
    tfb_t sw = tfb_variable(b, "softmax_w", 2, sd), sb = tfb_variable(b, "softmax_b", 1, sbd);
    tfb_scope(b, "attention/t0");
    tfb_t attn = zero_state(b, B, H);
    tfb_t *losses = x; /* reuse: the encoder outputs are consumed */
    for (int t = 0; t < T && !tfb_failed(b); t++) {
        tfb_scope(b, "embedding/decoder/t%d", t);
        tfb_t inp = tfb_gather(b, demb, tgt_ids[t]);
        tfb_scope(b, "decoder/input/t%d", t);
        tfb_t cat[2] = {inp, attn};
        tfb_t xt = tfb_bias_add(b, tfb_matmul(b, tfb_concat(b, 2, cat, 1), iw, 0), ib);
        for (int l = 0; l < L; l++) {
            tfb_scope(b, "decoder/layer_%d/t%d", l, t);
            lstm_step(b, &lv[l], tfb_dropout(b, xt), &h[l], &cst[l]);
            xt = h[l];
        }
        tfb_scope(b, "attention/t%d", t);
        tfb_t qs[2 * 64];
        int nq = 0;
        for (int l = 0; l < L && l < 64; l++) {
            qs[nq++] = cst[l];
            qs[nq++] = h[l];
        }
        tfb_t y = tfb_bias_add(b, tfb_matmul(b, tfb_concat(b, nq, qs, 1), qw, 0), qb);
        int64_t y4[4] = {B, 1, 1, A}, s2[2] = {B, T}, a4[4] = {B, T, 1, 1}, c2[2] = {B, H};
        y = tfb_reshape(b, y, 4, y4);
        tfb_t e = tfb_unary(b, "Tanh", tfb_binary(b, "Add", feats, y));
        tfb_t s = tfb_reduce(b, "Sum", tfb_binary(b, "Mul", av, e), 3, 0);
        tfb_t a = tfb_softmax(b, tfb_reshape(b, s, 2, s2));
        tfb_t d = tfb_reduce(b, "Sum", tfb_binary(b, "Mul", tfb_reshape(b, a, 4, a4), states), 1, 0);
        attn = tfb_reshape(b, d, 2, c2);
        tfb_scope(b, "decoder/output/t%d", t);
        tfb_t oc[2] = {xt, attn};
        tfb_t out = tfb_bias_add(b, tfb_matmul(b, tfb_concat(b, 2, oc, 1), ow, 0), ob);
        tfb_scope(b, "softmax/t%d", t);
        tfb_t logits = tfb_bias_add(b, tfb_matmul(b, out, sw, 0), sb);
        int64_t bdim[1] = {B};
        tfb_t lt = tfb_xent(b, logits, labels[t]);
        losses[t] = tfb_binary(b, "Mul", lt, tfb_const(b, 1, bdim));
    }
    tfb_scope(b, "loss");
    tfb_t loss = tfb_addn(b, T, losses);
    loss = tfb_reduce(b, "Sum", loss, 0, 0);
    loss = tfb_binary(b, "RealDiv", loss, tfb_const(b, 0, NULL));
    free(x);
    free(h);
    free(lv);
    return loss;
}

/* ---- GNMT (tensorflow/nmt, gnmt_v2 attention, 4 layers) ---- */
static tfb_t build_gnmt(tfb *b, const zoo_rnn_config *c) {
    int64_t B = c->batch, H = c->hidden, V = c->vocab;
    int T = c->steps, L = c->layers;
    if (T > 1024 || L < 2 || L > 64) return -1;
    int64_t bt[2] = {B, T}, ed[2] = {V, H};
    tfb_t fw[1024], bw[1024], x[1024], tgt[1024];
    tfb_scope(b, "input");
    tfb_t src = tfb_input(b, "source", DP_DTYPE_INT32, 2, bt);
    tfb_t tgt_in = tfb_input(b, "target_in", DP_DTYPE_INT32, 2, bt);
    tfb_t lab = tfb_input(b, "target_out", DP_DTYPE_INT32, 2, bt);
    tfb_scope(b, "embedding/encoder");
    tfb_t eemb = tfb_variable(b, "embedding", 2, ed);
    tfb_unpack(b, tfb_gather(b, eemb, src), 1, x);
    /* layer 0: bidirectional */
    tfb_scope(b, "encoder/layer_0/fw");
    lstm_vars vf = lstm_variables(b, H, H);
    tfb_scope(b, "encoder/layer_0/bw");
    lstm_vars vb = lstm_variables(b, H, H);
    tfb_t hh = zero_state(b, B, H), cc = zero_state(b, B, H);
    for (int t = 0; t < T; t++) {
        tfb_scope(b, "encoder/layer_0/fw/t%d", t);
        lstm_step(b, &vf, tfb_dropout(b, x[t]), &hh, &cc);
        fw[t] = hh;
    }
    hh = zero_state(b, B, H);
    cc = zero_state(b, B, H);
    for (int t = T - 1; t >= 0; t--) {
        tfb_scope(b, "encoder/layer_0/bw/t%d", t);
        lstm_step(b, &vb, tfb_dropout(b, x[t]), &hh, &cc);
        bw[t] = hh;
    }
    for (int t = 0; t < T; t++) {
        tfb_scope(b, "encoder/layer_0/t%d", t);
        tfb_t p[2] = {fw[t], bw[t]};
        x[t] = tfb_concat(b, 2, p, 1);
    }
    for (int l = 1; l < L && !tfb_failed(b); l++) {
        tfb_scope(b, "encoder/layer_%d", l);
        lstm_vars v = lstm_variables(b, l == 1 ? 2 * H : H, H);
        hh = zero_state(b, B, H);
        cc = zero_state(b, B, H);
        for (int t = 0; t < T; t++) {
            tfb_scope(b, "encoder/layer_%d/t%d", l, t);
            tfb_t in = x[t];
            lstm_step(b, &v, tfb_dropout(b, in), &hh, &cc);
            x[t] = l >= 2 ? tfb_binary(b, "Add", hh, in) : hh; /* residual from layer 2 on */
        }
    }
    /* memory [B, T, H] and keys (memory_layer, no bias) */
    tfb_scope(b, "attention");
    tfb_t memory = tfb_pack(b, T, x, 1);
    int64_t md[2] = {B * T, H}, m3[3] = {B, T, H}, kd[2] = {H, H}, vd[1] = {H};
    tfb_t keys = tfb_reshape(b, tfb_matmul(b, tfb_reshape(b, memory, 2, md), tfb_variable(b, "memory_layer", 2, kd), 0),
                             3, m3);
    tfb_t qw = tfb_variable(b, "query_layer", 2, kd);
    tfb_t av = tfb_variable(b, "attention_v", 1, vd);
    tfb_t ag = tfb_variable(b, "attention_g", 0, NULL);
    tfb_t ab = tfb_variable(b, "attention_b", 1, vd);
    /* normed_bahdanau: v scaled to g / |v| once */
    tfb_t nv = tfb_binary(b, "Mul", ag, tfb_unary(b, "Rsqrt", tfb_reduce(b, "Sum", tfb_unary(b, "Square", av), 0, 0)));
    nv = tfb_binary(b, "Mul", nv, av);
    lstm_vars *lv = malloc((size_t)L * sizeof(lstm_vars));
    tfb_t *h = malloc((size_t)L * 2 * sizeof(tfb_t));
    if (!lv || !h) {
        free(lv);
        free(h);
        return -1;
    }
    tfb_t *cs = h + L;
    for (int l = 0; l < L; l++) {
        tfb_scope(b, "decoder/layer_%d", l);
        lv[l] = lstm_variables(b, 2 * H, H);
        h[l] = zero_state(b, B, H);
        cs[l] = zero_state(b, B, H);
    }
    tfb_scope(b, "embedding/decoder");
    tfb_t demb = tfb_variable(b, "embedding", 2, ed);
    tfb_unpack(b, tfb_gather(b, demb, tgt_in), 1, tgt);
    tfb_scope(b, "attention/t0");
    tfb_t ctx = zero_state(b, B, H);
    for (int t = 0; t < T && !tfb_failed(b); t++) {
        tfb_t in = tgt[t];
        for (int l = 0; l < L; l++) {
            tfb_scope(b, "decoder/layer_%d/t%d", l, t);
            tfb_t cat[2] = {in, ctx};
            tfb_t prev = in;
            lstm_step(b, &lv[l], tfb_dropout(b, tfb_concat(b, 2, cat, 1)), &h[l], &cs[l]);
            tfb_t out = l >= 2 ? tfb_binary(b, "Add", h[l], prev) : h[l];
            if (l == 0) { /* gnmt_v2: attention from the bottom layer's new output */
                tfb_scope(b, "attention/t%d", t);
                int64_t q3[3] = {B, 1, H}, a3[3] = {B, 1, T}, c2[2] = {B, H};
                tfb_t q = tfb_reshape(b, tfb_matmul(b, out, qw, 0), 3, q3);
                tfb_t e = tfb_unary(b, "Tanh", tfb_binary(b, "Add", tfb_binary(b, "Add", keys, q), ab));
                tfb_t s = tfb_reduce(b, "Sum", tfb_binary(b, "Mul", nv, e), 2, 0);
                tfb_t a = tfb_reshape(b, tfb_softmax(b, s), 3, a3);
                ctx = tfb_reshape(b, tfb_batch_matmul(b, a, memory, 0), 2, c2);
            }
            in = out;
        }
        x[t] = in;
    }
    free(lv);
    free(h);
    tfb_scope(b, "softmax");
    int64_t od[2] = {B * T, H}, nd[1] = {B * T}, sd[2] = {H, V};
    tfb_t out = tfb_reshape(b, tfb_pack(b, T, x, 1), 2, od);
    tfb_t logits = tfb_matmul(b, out, tfb_variable(b, "output_projection", 2, sd), 0);
    tfb_scope(b, "loss");
    tfb_t loss = tfb_xent(b, logits, tfb_reshape(b, lab, 1, nd));
    loss = tfb_binary(b, "Mul", loss, tfb_const(b, 1, nd));
    loss = tfb_reduce(b, "Sum", loss, 0, 0);
    return tfb_binary(b, "RealDiv", loss, tfb_const(b, 0, NULL));
}

dp_graph *zoo_build_rnn(const char *name, const zoo_rnn_config *c, dp_error *err) {
    tfb *b = tfb_init(name, err);
    if (!b) return NULL;
    tfb_t loss = c->kind == ZOO_RNN_LM ? build_lm(b, c) : c->kind == ZOO_RNN_NMT ? build_nmt(b, c) : build_gnmt(b, c);
    if (loss < 0 && !tfb_failed(b)) {
        tfb_free(b);
        dp_error_set(err, DP_STATUS_NOMEM, "model %s: out of memory", name);
        return NULL;
    }
    tfb_backward(b, loss);
    tfb_optimizer(b, c->kind == ZOO_RNN_GNMT ? TFB_OPTIM_SGD : TFB_OPTIM_ADAM, 1);
    return tfb_finish(b, err);
}
