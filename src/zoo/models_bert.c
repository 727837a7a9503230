/* BERT-Base fine-tuning graph as Google's TensorFlow implementation builds
 * it (modeling.py + run_squad.py): embeddings (word gather, one-hot token
 * types, sliced positions), 12 transformer layers of 12 heads with
 * layer_norm built from moments and GELU from its tanh formula, dropout 0.1,
 * a span (start/end) head, gradient clipping to norm 1 and BERT's
 * AdamWeightDecayOptimizer (element-wise ops per variable). Scopes:
 * "bert/embeddings", "bert/encoder/layer_K/...", "cls/squad", "loss". */
#include <math.h>
#include <stdio.h>

#include "zoo/models.h"
#include "zoo/tfb.h"

enum { BERT_LAYERS = 12, BERT_HIDDEN = 768, BERT_HEADS = 12, BERT_FFN = 3072, BERT_VOCAB = 30522, BERT_POS = 512 };

static tfb_t scalar(tfb *b) { return tfb_const(b, 0, NULL); }

/* BERT's dense layers: variables "kernel" and "bias". */
static tfb_t dense(tfb *b, tfb_t x, int64_t out) { return tfb_dense(b, x, out, "kernel", "bias"); }

/* tf.contrib.layers.layer_norm over the last axis of x [N, H]. */
static tfb_t layer_norm(tfb *b, tfb_t x) {
    int64_t hd[1] = {tfb_dim(b, x, -1)};
    tfb_t beta = tfb_variable(b, "LayerNorm/beta", 1, hd), gamma = tfb_variable(b, "LayerNorm/gamma", 1, hd);
    tfb_t mean = tfb_reduce(b, "Mean", x, -1, 1);
    int64_t md[2] = {tfb_dim(b, mean, 0), 1};
    tfb_t sg = tfb_aux(b, "StopGradient", 1, &mean, DP_DTYPE_FLOAT32, 2, md, 0);
    tfb_t var = tfb_reduce(b, "Mean", tfb_binary(b, "SquaredDifference", x, sg), -1, 1);
    tfb_t inv = tfb_unary(b, "Rsqrt", tfb_binary(b, "Add", var, scalar(b)));
    inv = tfb_binary(b, "Mul", inv, gamma);
    tfb_t xs = tfb_binary(b, "Mul", x, inv);
    tfb_t shift = tfb_binary(b, "Sub", beta, tfb_binary(b, "Mul", mean, inv));
    return tfb_binary(b, "Add", xs, shift);
}

/* GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static tfb_t gelu(tfb *b, tfb_t x) {
    tfb_t x3 = tfb_unary(b, "Pow", x);
    tfb_t inner = tfb_binary(b, "Add", x, tfb_binary(b, "Mul", scalar(b), x3));
    tfb_t t = tfb_unary(b, "Tanh", tfb_binary(b, "Mul", scalar(b), inner));
    tfb_t cdf = tfb_binary(b, "Mul", scalar(b), tfb_binary(b, "Add", scalar(b), t));
    return tfb_binary(b, "Mul", x, cdf);
}

/* [N = B*S, H] -> [B, heads, S, H/heads] */
static tfb_t split_heads(tfb *b, tfb_t x, int64_t B, int64_t S) {
    int64_t d4[4] = {B, S, BERT_HEADS, BERT_HIDDEN / BERT_HEADS};
    int perm[4] = {0, 2, 1, 3};
    return tfb_transpose(b, tfb_reshape(b, x, 4, d4), perm);
}

dp_graph *zoo_build_bert(const char *name, int64_t B, int64_t S, dp_error *err) {
    tfb *b = tfb_init(name, err);
    if (!b) return NULL;
    int64_t N = B * S, bs[2] = {B, S}, bd[1] = {B}, nd[1] = {N}, n2[2] = {N, 2};
    tfb_scope(b, "input");
    tfb_t ids = tfb_input(b, "input_ids", DP_DTYPE_INT32, 2, bs);
    tfb_t mask = tfb_input(b, "input_mask", DP_DTYPE_INT32, 2, bs);
    tfb_t seg = tfb_input(b, "segment_ids", DP_DTYPE_INT32, 2, bs);
    tfb_t start_pos = tfb_input(b, "start_positions", DP_DTYPE_INT32, 1, bd);
    tfb_t end_pos = tfb_input(b, "end_positions", DP_DTYPE_INT32, 1, bd);

    tfb_scope(b, "bert/embeddings");
    int64_t wd[2] = {BERT_VOCAB, BERT_HIDDEN}, td[2] = {2, BERT_HIDDEN}, pd[2] = {BERT_POS, BERT_HIDDEN};
    int64_t h2[2] = {N, BERT_HIDDEN};
    tfb_t word = tfb_variable(b, "word_embeddings", 2, wd);
    tfb_t x = tfb_gather(b, word, tfb_reshape(b, ids, 1, nd));
    tfb_t segflat = tfb_reshape(b, seg, 1, nd);
    tfb_t onehot = tfb_aux(b, "OneHot", 1, &segflat, DP_DTYPE_FLOAT32, 2, n2, 1);
    x = tfb_binary(b, "Add", x, tfb_matmul(b, onehot, tfb_variable(b, "token_type_embeddings", 2, td), 0));
    /* positions 0..S-1: a lookup of the first S rows, broadcast over the batch */
    tfb_t pos = tfb_variable(b, "position_embeddings", 2, pd);
    int64_t sd[1] = {S}, pos3[3] = {1, S, BERT_HIDDEN}, x3[3] = {B, S, BERT_HIDDEN};
    tfb_t range = tfb_aux(b, "Range", 0, NULL, DP_DTYPE_INT32, 1, sd, 1);
    tfb_t pb = tfb_reshape(b, tfb_gather(b, pos, range), 3, pos3);
    x = tfb_binary(b, "Add", tfb_reshape(b, x, 3, x3), pb);
    x = tfb_dropout(b, layer_norm(b, tfb_reshape(b, x, 2, h2)));

    tfb_scope(b, "bert/encoder/attention_mask");
    int64_t m3[3] = {B, 1, S}, bss[3] = {B, S, S}, m4[4] = {B, 1, S, S};
    tfb_t mf = tfb_aux(b, "Cast", 1, &mask, DP_DTYPE_FLOAT32, 2, bs, 1);
    tfb_t mr = tfb_aux(b, "Reshape", 1, &mf, DP_DTYPE_FLOAT32, 3, m3, 0);
    tfb_t ones = tfb_aux(b, "Fill", 0, NULL, DP_DTYPE_FLOAT32, 3, bss, 1);
    tfb_t in2[2] = {ones, mr};
    tfb_t am = tfb_aux(b, "Mul", 2, in2, DP_DTYPE_FLOAT32, 3, bss, 1);
    tfb_t am4 = tfb_aux(b, "ExpandDims", 1, &am, DP_DTYPE_FLOAT32, 4, m4, 0);
    tfb_t sub = tfb_aux(b, "Sub", 1, &am4, DP_DTYPE_FLOAT32, 4, m4, 1);
    tfb_t adder = tfb_aux(b, "Mul", 1, &sub, DP_DTYPE_FLOAT32, 4, m4, 1);

    for (int l = 0; l < BERT_LAYERS && !tfb_failed(b); l++) {
        tfb_t in = x;
        tfb_scope(b, "bert/encoder/layer_%d/attention/self/query", l);
        tfb_t q = split_heads(b, dense(b, x, BERT_HIDDEN), B, S);
        tfb_scope(b, "bert/encoder/layer_%d/attention/self/key", l);
        tfb_t k = split_heads(b, dense(b, x, BERT_HIDDEN), B, S);
        tfb_scope(b, "bert/encoder/layer_%d/attention/self/value", l);
        tfb_t v = split_heads(b, dense(b, x, BERT_HIDDEN), B, S);
        tfb_scope(b, "bert/encoder/layer_%d/attention/self", l);
        tfb_t sc = tfb_binary(b, "Mul", tfb_batch_matmul(b, q, k, 1), scalar(b));
        sc = tfb_binary(b, "Add", sc, adder);
        tfb_t probs = tfb_dropout(b, tfb_softmax(b, sc));
        tfb_t ctx = tfb_batch_matmul(b, probs, v, 0);
        int perm[4] = {0, 2, 1, 3};
        ctx = tfb_reshape(b, tfb_transpose(b, ctx, perm), 2, h2);
        tfb_scope(b, "bert/encoder/layer_%d/attention/output", l);
        tfb_t ao = tfb_dropout(b, dense(b, ctx, BERT_HIDDEN));
        ao = layer_norm(b, tfb_binary(b, "Add", ao, in));
        tfb_scope(b, "bert/encoder/layer_%d/intermediate", l);
        tfb_t mid = gelu(b, dense(b, ao, BERT_FFN));
        tfb_scope(b, "bert/encoder/layer_%d/output", l);
        tfb_t out = tfb_dropout(b, dense(b, mid, BERT_HIDDEN));
        x = layer_norm(b, tfb_binary(b, "Add", out, ao));
    }

    tfb_scope(b, "cls/squad");
    int64_t bs2[3] = {B, S, 2};
    tfb_t logits = tfb_reshape(b, dense(b, x, 2), 3, bs2);
    int perm3[3] = {2, 0, 1};
    tfb_t se[2];
    tfb_unpack(b, tfb_transpose(b, logits, perm3), 0, se);
    tfb_scope(b, "loss");
    tfb_t ls = tfb_reduce(b, "Mean", tfb_xent(b, se[0], start_pos), 0, 0);
    tfb_t le = tfb_reduce(b, "Mean", tfb_xent(b, se[1], end_pos), 0, 0);
    tfb_t loss = tfb_binary(b, "Mul", tfb_binary(b, "Add", ls, le), scalar(b));
    tfb_backward(b, loss);
    tfb_optimizer(b, TFB_OPTIM_ADAM_WEIGHT_DECAY, 1);
    return tfb_finish(b, err);
}
