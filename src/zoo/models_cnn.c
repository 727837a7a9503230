/* Convolutional zoo models as the TensorFlow 1.x training scripts of
 * 2016-2017 built their training graphs (docs/zoo.md, "Convolutional
 * models"):
 *
 *  - inception_v3: TF-slim's Inception-V3 (Szegedy et al. 2016): the stem,
 *    Mixed_5b-d, Mixed_6a-e with 1x7/7x1 factorisation, Mixed_7a-c, the
 *    auxiliary head on Mixed_6e, 299x299x3 input, 1001 classes, trained as
 *    tensorflow/models inception/inception_train.py trains it: slim batch
 *    norm built from tf.nn.moments (not fused; no gamma, slim's scale=False)
 *    with AssignMovingAvg updates of the moving statistics, an L2
 *    regulariser per conv weight, dropout, auxiliary loss with weight 0.4,
 *    an exponentially decayed learning rate, RMSProp, an
 *    ExponentialMovingAverage of every variable, the tower gradient average
 *    (one tower), and its summaries (activation sparsity and histograms,
 *    variable and gradient histograms, losses, learning rate: CPU-only).
 *  - resnet (depth 50/101/152): ResNet v1 with bottleneck units (He et al.
 *    2016), projection shortcuts where the shape changes, stride in the 3x3
 *    conv (as TF-slim's resnet_v1), the same unfused batch norm with gamma,
 *    weight decay as tensorflow/models resnet/resnet_model.py adds it (one
 *    L2Loss per weight, AddN, Mul), Momentum.
 *
 * Scopes name layers the way TF-slim names them:
 * "InceptionV3/Mixed_6b/Branch_1/Conv2d_0b_1x7", "resnet/block2/unit_5/conv2";
 * batch norm below the layer ("<layer>/BatchNorm/moments"), gradients under
 * "gradients/<layer>", summaries under "summaries/<layer>". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "zoo/models.h"
#include "zoo/tfb.h"

#define F32 DP_DTYPE_FLOAT32

typedef struct list {
    tfb_t *v;
    int64_t n, cap;
} list;

typedef struct cnn {
    tfb *b;
    char cur[512];      /* the current scope (mirrors tfb_scope)                  */
    int bn_scale;       /* batch norm learns gamma (ResNet) or not (slim Inception) */
    int decay_per_conv; /* slim l2_regularizer per weight (Const, L2Loss, Mul)    */
    int summaries;      /* inception_train.py's summaries                          */
    int ema;            /* ExponentialMovingAverage of every variable              */
    tfb_t ema_decay;    /* its decay, min(0.9999, (1 + step) / (10 + step))       */
    list decay;         /* weight-decay terms (or bare L2Losses), into the loss    */
    list trainable;     /* trainable variable reads                                */
    list summ;          /* summary ops, inputs of MergeSummary                     */
    int oom;
} cnn;

static void push(cnn *m, list *l, tfb_t t) {
    if (t < 0) return;
    if (dp_reserve((void **)&l->v, &l->cap, l->n + 1, sizeof(tfb_t))) {
        m->oom = 1;
        return;
    }
    l->v[l->n++] = t;
}

/* Sets the scope of the ops created next (printf-style), remembering it. */
static void scope(cnn *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void scope(cnn *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->cur, sizeof m->cur, fmt, ap);
    va_end(ap);
    tfb_scope(m->b, "%s", m->cur);
}

static tfb_t scalar(cnn *m) { return tfb_const(m->b, 0, NULL); }

/* ---- summaries (CPU-only: TensorFlow has no GPU kernel for them) ---- */

/* A summary op of type `type` ("ScalarSummary", "HistogramSummary") of x
 * with its tag Const, in scope "summaries/<layer>"; a serialized Summary
 * proto of `bytes` bytes. */
static void summary(cnn *m, const char *type, tfb_t x, int64_t bytes) {
    tfb *b = m->b;
    double work = 4.0 * (double)tfb_numel(b, x); /* a histogram buckets every element */
    tfb_t in[2] = {tfb_aux(b, "Const", 0, NULL, DP_DTYPE_UINT8, 0, NULL, 0), x};
    push(m, &m->summ, tfb_aux(b, type, 2, in, DP_DTYPE_UINT8, 1, &bytes, work / (double)bytes));
    tfb_cpu_only(b);
}

static void histogram(cnn *m, tfb_t x) {
    char keep[512];
    memcpy(keep, m->cur, sizeof keep);
    scope(m, "summaries/%s", keep);
    summary(m, "HistogramSummary", x, 4096);
    scope(m, "%s", keep);
}

/* inception_model.py _activation_summary: a histogram of x and a scalar of
 * tf.nn.zero_fraction(x) (Const, Equal, Cast, Const, Mean). */
static void activation_summary(cnn *m, tfb_t x) {
    if (!m->summaries) return;
    tfb *b = m->b;
    char keep[512];
    memcpy(keep, m->cur, sizeof keep);
    histogram(m, x);
    scope(m, "summaries/%s/zero_fraction", keep);
    int r = tfb_rank(b, x);
    int64_t d[TFB_MAX_RANK];
    for (int i = 0; i < r; i++) d[i] = tfb_dim(b, x, i);
    tfb_t in[2] = {x, scalar(m)};
    tfb_t eq = tfb_aux(b, "Equal", 2, in, DP_DTYPE_BOOL, r, d, 1);
    tfb_t f = tfb_aux(b, "Cast", 1, &eq, F32, r, d, 1);
    int64_t nr = r;
    tfb_t in2[2] = {f, tfb_aux(b, "Const", 0, NULL, DP_DTYPE_INT32, 1, &nr, 0)};
    tfb_t z = tfb_aux(b, "Mean", 2, in2, F32, 0, NULL, (double)tfb_numel(b, x));
    scope(m, "summaries/%s", keep);
    summary(m, "ScalarSummary", z, 64);
    scope(m, "%s", keep);
}

/* ---- variables ---- */

/* moving_averages.assign_moving_average(var, value, decay) without zero
 * debiasing, all colocated with var: (1 - decay) (a Const when decay < 0,
 * else Const and Sub), var - value, times it, AssignSub from var. */
static void assign_moving_average(cnn *m, tfb_t var, tfb_t value, tfb_t decay) {
    tfb *b = m->b;
    int r = tfb_rank(b, var);
    int64_t d[TFB_MAX_RANK];
    for (int i = 0; i < r; i++) d[i] = tfb_dim(b, var, i);
    tfb_colocate(b, var);
    tfb_t one_minus = scalar(m);
    if (decay >= 0) {
        tfb_t in[2] = {one_minus, decay};
        one_minus = tfb_aux(b, "Sub", 2, in, F32, 0, NULL, 1);
    }
    tfb_t in2[2] = {var, value};
    tfb_t diff = tfb_aux(b, "Sub", 2, in2, F32, r, d, 1);
    tfb_t in3[2] = {diff, one_minus};
    tfb_t delta = tfb_aux(b, "Mul", 2, in3, F32, r, d, 1);
    tfb_t in4[2] = {var, delta};
    tfb_aux(b, "AssignSub", 2, in4, F32, r, d, 1);
    tfb_colocate(b, -1);
}

/* ExponentialMovingAverage.apply for one variable read v: a shadow
 * variable colocated with v, moved towards v at the EMA's decay. */
static void ema_of(cnn *m, tfb_t v) {
    tfb *b = m->b;
    char keep[512];
    memcpy(keep, m->cur, sizeof keep);
    int r = tfb_rank(b, v);
    int64_t d[TFB_MAX_RANK];
    for (int i = 0; i < r; i++) d[i] = tfb_dim(b, v, i);
    scope(m, "%s/ExponentialMovingAverage", keep);
    tfb_colocate(b, v);
    tfb_t shadow = tfb_state(b, "shadow", r, d);
    tfb_colocate(b, -1);
    assign_moving_average(m, shadow, v, m->ema_decay);
    scope(m, "%s", keep);
}

/* A trainable variable "<scope>/<name>" with, as the training script adds
 * them, its histogram summary and its moving average. */
static tfb_t variable(cnn *m, const char *name, int rank, const int64_t *dims) {
    tfb_t v = tfb_variable(m->b, name, rank, dims);
    push(m, &m->trainable, v);
    if (m->summaries) histogram(m, v);
    if (m->ema) ema_of(m, v);
    return v;
}

/* A batch-norm moving statistic (non-trainable; averaged by the EMA too,
 * being in tf.moving_average_variables()). */
static tfb_t moving_stat(cnn *m, const char *name, int64_t c) {
    tfb_t v = tfb_state(m->b, name, 1, &c);
    if (m->ema) ema_of(m, v);
    return v;
}

/* Weight decay of weights w: slim's l2_regularizer (Const, L2Loss, Mul) per
 * weight, or only the L2Loss (summed and scaled once in the loss). */
static void weight_decay(cnn *m, tfb_t w) {
    tfb *b = m->b;
    char keep[512];
    memcpy(keep, m->cur, sizeof keep);
    scope(m, "%s/Regularizer", keep);
    tfb_t wd = m->decay_per_conv ? scalar(m) : -1;
    tfb_t l2 = tfb_l2loss(b, w);
    push(m, &m->decay, wd >= 0 ? tfb_binary(b, "Mul", wd, l2) : l2);
    scope(m, "%s", keep);
}

/* ---- layers ---- */

/* Batch norm of NHWC x as slim built it before fused kernels (is_training):
 * beta (and gamma when m->bn_scale), moving_mean/moving_variance,
 * tf.nn.moments(x, [0, 1, 2]) (Mean, StopGradient, SquaredDifference, Mean,
 * Squeeze x2), their AssignMovingAvg updates, and
 * tf.nn.batch_normalization (Add eps, Rsqrt, [Mul gamma], Mul, Mul, Sub,
 * Add). Scope "<layer>/BatchNorm". */
static tfb_t batch_norm(cnn *m, const char *layer, tfb_t x) {
    tfb *b = m->b;
    static const int axes[3] = {0, 1, 2};
    int64_t c = tfb_dim(b, x, 3), k4[4] = {1, 1, 1, c};
    scope(m, "%s/BatchNorm", layer);
    tfb_t beta = variable(m, "beta", 1, &c);
    tfb_t gamma = m->bn_scale ? variable(m, "gamma", 1, &c) : -1;
    tfb_t mm = moving_stat(m, "moving_mean", c), mv = moving_stat(m, "moving_variance", c);
    scope(m, "%s/BatchNorm/moments", layer);
    tfb_t mean = tfb_reduce_axes(b, "Mean", x, 3, axes, 1);
    tfb_t sg = tfb_aux(b, "StopGradient", 1, &mean, F32, 4, k4, 0);
    tfb_t var = tfb_reduce_axes(b, "Mean", tfb_binary(b, "SquaredDifference", x, sg), 3, axes, 1);
    mean = tfb_squeeze(b, mean, 1, &c);
    var = tfb_squeeze(b, var, 1, &c);
    scope(m, "%s/BatchNorm/AssignMovingAvg", layer);
    assign_moving_average(m, mm, mean, -1);
    assign_moving_average(m, mv, var, -1);
    scope(m, "%s/BatchNorm/batchnorm", layer);
    tfb_t inv = tfb_unary(b, "Rsqrt", tfb_binary(b, "Add", var, scalar(m)));
    if (gamma >= 0) inv = tfb_binary(b, "Mul", inv, gamma);
    tfb_t xs = tfb_binary(b, "Mul", x, inv);
    tfb_t shift = tfb_binary(b, "Sub", beta, tfb_binary(b, "Mul", mean, inv));
    return tfb_binary(b, "Add", xs, shift);
}

/* A kh x kw convolution to cout channels (SAME or VALID padding, stride)
 * with batch norm and, when relu, a ReLU: slim's conv2d under the models'
 * arg_scope. Weights are L2-regularised. Scope `layer`. */
static tfb_t conv_bn(cnn *m, const char *layer, tfb_t x, int kh, int kw, int64_t cout, int stride, int same,
                     int relu) {
    tfb *b = m->b;
    int64_t wd[4] = {kh, kw, tfb_dim(b, x, 3), cout};
    scope(m, "%s", layer);
    tfb_t w = variable(m, "weights", 4, wd);
    weight_decay(m, w);
    scope(m, "%s", layer);
    tfb_t y = batch_norm(m, layer, tfb_conv2d(b, x, w, stride, same));
    if (relu) {
        scope(m, "%s", layer);
        y = tfb_unary(b, "Relu", y);
    }
    return y;
}

static tfb_t conv_bn_relu(cnn *m, const char *layer, tfb_t x, int kh, int kw, int64_t cout, int stride, int same) {
    return conv_bn(m, layer, x, kh, kw, cout, stride, same, 1);
}

/* A 1x1 convolution with biases and no batch norm or activation (the
 * logits layers), L2-regularised. */
static tfb_t conv_bias(cnn *m, const char *layer, tfb_t x, int64_t cout) {
    tfb *b = m->b;
    int64_t wd[4] = {1, 1, tfb_dim(b, x, 3), cout};
    scope(m, "%s", layer);
    tfb_t w = variable(m, "weights", 4, wd);
    weight_decay(m, w);
    scope(m, "%s", layer);
    tfb_t bias = variable(m, "biases", 1, &cout);
    return tfb_bias_add(b, tfb_conv2d(b, x, w, 1, 1), bias);
}

/* ---- Inception-V3 (TF-slim nets/inception_v3.py) ---- */

#define IV3 "InceptionV3"

/* Concatenation of a mixed block's branches along channels, with the
 * block's activation summary. */
static tfb_t mixed_concat(cnn *m, const char *blk, int n, const tfb_t *br) {
    scope(m, IV3 "/%s", blk);
    tfb_t y = tfb_concat(m->b, n, br, 3);
    activation_summary(m, y);
    return y;
}

/* Mixed_5b/5c/5d (35x35): 1x1 | 1x1-5x5 | 1x1-3x3-3x3 | avgpool-1x1. */
static tfb_t inception_block_a(cnn *m, const char *blk, tfb_t x, int64_t pool_proj, int is_5c) {
    char s[256];
    tfb_t br[4];
    snprintf(s, sizeof s, IV3 "/%s/Branch_0/Conv2d_0a_1x1", blk);
    br[0] = conv_bn_relu(m, s, x, 1, 1, 64, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_1/%s", blk, is_5c ? "Conv2d_0b_1x1" : "Conv2d_0a_1x1");
    br[1] = conv_bn_relu(m, s, x, 1, 1, 48, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_1/%s", blk, is_5c ? "Conv_1_0c_5x5" : "Conv2d_0b_5x5");
    br[1] = conv_bn_relu(m, s, br[1], 5, 5, 64, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_2/Conv2d_0a_1x1", blk);
    br[2] = conv_bn_relu(m, s, x, 1, 1, 64, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_2/Conv2d_0b_3x3", blk);
    br[2] = conv_bn_relu(m, s, br[2], 3, 3, 96, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_2/Conv2d_0c_3x3", blk);
    br[2] = conv_bn_relu(m, s, br[2], 3, 3, 96, 1, 1);
    scope(m, IV3 "/%s/Branch_3/AvgPool_0a_3x3", blk);
    br[3] = tfb_pool(m->b, "AvgPool", x, 3, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_3/Conv2d_0b_1x1", blk);
    br[3] = conv_bn_relu(m, s, br[3], 1, 1, pool_proj, 1, 1);
    return mixed_concat(m, blk, 4, br);
}

/* Mixed_6a (35x35 -> 17x17): 3x3/2 | 1x1-3x3-3x3/2 | maxpool/2. */
static tfb_t inception_reduction_a(cnn *m, tfb_t x) {
    tfb_t br[3];
    br[0] = conv_bn_relu(m, IV3 "/Mixed_6a/Branch_0/Conv2d_1a_1x1", x, 3, 3, 384, 2, 0);
    br[1] = conv_bn_relu(m, IV3 "/Mixed_6a/Branch_1/Conv2d_0a_1x1", x, 1, 1, 64, 1, 1);
    br[1] = conv_bn_relu(m, IV3 "/Mixed_6a/Branch_1/Conv2d_0b_3x3", br[1], 3, 3, 96, 1, 1);
    br[1] = conv_bn_relu(m, IV3 "/Mixed_6a/Branch_1/Conv2d_1a_1x1", br[1], 3, 3, 96, 2, 0);
    scope(m, IV3 "/Mixed_6a/Branch_2/MaxPool_1a_3x3");
    br[2] = tfb_pool(m->b, "MaxPool", x, 3, 2, 0);
    return mixed_concat(m, "Mixed_6a", 3, br);
}

/* Mixed_6b-6e (17x17), c7 channels in the factorised branches:
 * 1x1 | 1x1-1x7-7x1 | 1x1-7x1-1x7-7x1-1x7 | avgpool-1x1. */
static tfb_t inception_block_b(cnn *m, const char *blk, tfb_t x, int64_t c7) {
    static const struct {
        int branch;
        const char *name;
        int kh, kw, last;
    } layers[] = {
        {1, "Conv2d_0a_1x1", 1, 1, 0}, {1, "Conv2d_0b_1x7", 1, 7, 0}, {1, "Conv2d_0c_7x1", 7, 1, 1},
        {2, "Conv2d_0a_1x1", 1, 1, 0}, {2, "Conv2d_0b_7x1", 7, 1, 0}, {2, "Conv2d_0c_1x7", 1, 7, 0},
        {2, "Conv2d_0d_7x1", 7, 1, 0}, {2, "Conv2d_0e_1x7", 1, 7, 1},
    };
    char s[256];
    tfb_t br[4];
    snprintf(s, sizeof s, IV3 "/%s/Branch_0/Conv2d_0a_1x1", blk);
    br[0] = conv_bn_relu(m, s, x, 1, 1, 192, 1, 1);
    br[1] = br[2] = x;
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        int k = layers[i].branch;
        snprintf(s, sizeof s, IV3 "/%s/Branch_%d/%s", blk, k, layers[i].name);
        br[k] = conv_bn_relu(m, s, br[k], layers[i].kh, layers[i].kw, layers[i].last ? 192 : c7, 1, 1);
    }
    scope(m, IV3 "/%s/Branch_3/AvgPool_0a_3x3", blk);
    br[3] = tfb_pool(m->b, "AvgPool", x, 3, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_3/Conv2d_0b_1x1", blk);
    br[3] = conv_bn_relu(m, s, br[3], 1, 1, 192, 1, 1);
    return mixed_concat(m, blk, 4, br);
}

/* Mixed_7a (17x17 -> 8x8): 1x1-3x3/2 | 1x1-1x7-7x1-3x3/2 | maxpool/2. */
static tfb_t inception_reduction_b(cnn *m, tfb_t x) {
    tfb_t br[3];
    br[0] = conv_bn_relu(m, IV3 "/Mixed_7a/Branch_0/Conv2d_0a_1x1", x, 1, 1, 192, 1, 1);
    br[0] = conv_bn_relu(m, IV3 "/Mixed_7a/Branch_0/Conv2d_1a_3x3", br[0], 3, 3, 320, 2, 0);
    br[1] = conv_bn_relu(m, IV3 "/Mixed_7a/Branch_1/Conv2d_0a_1x1", x, 1, 1, 192, 1, 1);
    br[1] = conv_bn_relu(m, IV3 "/Mixed_7a/Branch_1/Conv2d_0b_1x7", br[1], 1, 7, 192, 1, 1);
    br[1] = conv_bn_relu(m, IV3 "/Mixed_7a/Branch_1/Conv2d_0c_7x1", br[1], 7, 1, 192, 1, 1);
    br[1] = conv_bn_relu(m, IV3 "/Mixed_7a/Branch_1/Conv2d_1a_3x3", br[1], 3, 3, 192, 2, 0);
    scope(m, IV3 "/Mixed_7a/Branch_2/MaxPool_1a_3x3");
    br[2] = tfb_pool(m->b, "MaxPool", x, 3, 2, 0);
    return mixed_concat(m, "Mixed_7a", 3, br);
}

/* Mixed_7b/7c (8x8): 1x1 | 1x1-(1x3 ++ 3x1) | 1x1-3x3-(1x3 ++ 3x1) |
 * avgpool-1x1; the inner pairs concatenated along channels. */
static tfb_t inception_block_c(cnn *m, const char *blk, tfb_t x, int is_7c) {
    char s[256];
    tfb_t br[4], pair[2];
    snprintf(s, sizeof s, IV3 "/%s/Branch_0/Conv2d_0a_1x1", blk);
    br[0] = conv_bn_relu(m, s, x, 1, 1, 320, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_1/Conv2d_0a_1x1", blk);
    tfb_t t = conv_bn_relu(m, s, x, 1, 1, 384, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_1/Conv2d_0b_1x3", blk);
    pair[0] = conv_bn_relu(m, s, t, 1, 3, 384, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_1/%s", blk, is_7c ? "Conv2d_0c_3x1" : "Conv2d_0b_3x1");
    pair[1] = conv_bn_relu(m, s, t, 3, 1, 384, 1, 1);
    scope(m, IV3 "/%s/Branch_1", blk);
    br[1] = tfb_concat(m->b, 2, pair, 3);
    snprintf(s, sizeof s, IV3 "/%s/Branch_2/Conv2d_0a_1x1", blk);
    t = conv_bn_relu(m, s, x, 1, 1, 448, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_2/Conv2d_0b_3x3", blk);
    t = conv_bn_relu(m, s, t, 3, 3, 384, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_2/Conv2d_0c_1x3", blk);
    pair[0] = conv_bn_relu(m, s, t, 1, 3, 384, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_2/Conv2d_0d_3x1", blk);
    pair[1] = conv_bn_relu(m, s, t, 3, 1, 384, 1, 1);
    scope(m, IV3 "/%s/Branch_2", blk);
    br[2] = tfb_concat(m->b, 2, pair, 3);
    scope(m, IV3 "/%s/Branch_3/AvgPool_0a_3x3", blk);
    br[3] = tfb_pool(m->b, "AvgPool", x, 3, 1, 1);
    snprintf(s, sizeof s, IV3 "/%s/Branch_3/Conv2d_0b_1x1", blk);
    br[3] = conv_bn_relu(m, s, br[3], 1, 1, 192, 1, 1);
    return mixed_concat(m, blk, 4, br);
}

/* Logits [N, classes] from a 1x1 conv with biases on x [N, 1, 1, C], then
 * SpatialSqueeze, in scope `prefix`. */
static tfb_t logits_head(cnn *m, const char *prefix, const char *conv, tfb_t x, int64_t classes) {
    char s[256];
    snprintf(s, sizeof s, "%s/%s", prefix, conv);
    tfb_t y = conv_bias(m, s, x, classes);
    scope(m, "%s/SpatialSqueeze", prefix);
    int64_t d[2] = {tfb_dim(m->b, y, 0), classes};
    y = tfb_squeeze(m->b, y, 2, d);
    activation_summary(m, y);
    return y;
}

/* Cross-entropy loss of logits against labels scaled by a weight (slim's
 * cross_entropy_loss): xent, Mean, Mul by the weight Const. */
static tfb_t xent_loss(cnn *m, const char *name, tfb_t logits, tfb_t labels) {
    tfb *b = m->b;
    scope(m, "losses/%s", name);
    tfb_t l = tfb_reduce(b, "Mean", tfb_xent(b, logits, labels), 0, 0);
    return tfb_binary(b, "Mul", scalar(m), l);
}

/* The global step (non-trainable) and, when `ema`, the
 * ExponentialMovingAverage's decay min(decay, (1 + n) / (10 + n)) of it. */
static tfb_t global_step(cnn *m) {
    tfb *b = m->b;
    scope(m, "global_step");
    tfb_t gs = tfb_state(b, "global_step", 0, NULL);
    if (!m->ema) return gs;
    scope(m, "ExponentialMovingAverage");
    tfb_t dec = scalar(m);
    tfb_t n = tfb_aux(b, "Cast", 1, &gs, F32, 0, NULL, 1);
    tfb_t a1[2] = {scalar(m), n}, a2[2] = {scalar(m), n};
    tfb_t num = tfb_aux(b, "Add", 2, a1, F32, 0, NULL, 1);
    tfb_t den = tfb_aux(b, "Add", 2, a2, F32, 0, NULL, 1);
    tfb_t a3[2] = {num, den};
    tfb_t q = tfb_aux(b, "RealDiv", 2, a3, F32, 0, NULL, 1);
    tfb_t a4[2] = {dec, q};
    m->ema_decay = tfb_aux(b, "Minimum", 2, a4, F32, 0, NULL, 1);
    return gs;
}

/* apply_gradients(global_step=...): AssignAdd of the step, colocated. */
static void step_increment(cnn *m, tfb_t gs) {
    tfb *b = m->b;
    scope(m, "global_step");
    tfb_colocate(b, gs);
    tfb_t in[2] = {gs, scalar(m)};
    tfb_aux(b, "AssignAdd", 2, in, F32, 0, NULL, 1);
    tfb_colocate(b, -1);
}

/* The loss-average EMA of inception_train.py (_tower_loss: decay 0.9, on
 * each loss and the total) with "(raw)" and averaged scalar summaries. */
static void loss_summaries(cnn *m, int n, const tfb_t *losses) {
    tfb *b = m->b;
    for (int i = 0; i < n; i++) {
        scope(m, "losses/avg");
        tfb_t shadow = tfb_state(b, "shadow", 0, NULL);
        assign_moving_average(m, shadow, losses[i], scalar(m));
        scope(m, "summaries/losses");
        summary(m, "ScalarSummary", losses[i], 64);
        summary(m, "ScalarSummary", shadow, 64);
    }
}

/* inception_train.py's learning rate: exponential_decay(0.1, global_step,
 * decay_steps, 0.16, staircase=True) (Cast, RealDiv, Floor, Pow, Mul) and
 * its scalar summary. */
static void learning_rate(cnn *m, tfb_t gs) {
    tfb *b = m->b;
    scope(m, "ExponentialDecay");
    tfb_t lr0 = scalar(m);
    tfb_t s = tfb_aux(b, "Cast", 1, &gs, F32, 0, NULL, 1);
    tfb_t a1[2] = {s, scalar(m)};
    tfb_t p = tfb_aux(b, "RealDiv", 2, a1, F32, 0, NULL, 1);
    p = tfb_aux(b, "Floor", 1, &p, F32, 0, NULL, 1);
    tfb_t a2[2] = {scalar(m), p};
    tfb_t pw = tfb_aux(b, "Pow", 2, a2, F32, 0, NULL, 1);
    tfb_t a3[2] = {lr0, pw};
    tfb_t lr = tfb_aux(b, "Mul", 2, a3, F32, 0, NULL, 1);
    scope(m, "summaries");
    summary(m, "ScalarSummary", lr, 64);
}

/* inception_train.py's _average_gradients over its towers (one here): per
 * variable ExpandDims, a concat of one (its axis Const and an Identity), Mean
 * over the tower axis; the average is what the optimizer applies, and each
 * gets a histogram summary. */
static void average_gradients(cnn *m) {
    tfb *b = m->b;
    for (int64_t i = 0; i < m->trainable.n && !tfb_failed(b); i++) {
        tfb_t v = m->trainable.v[i];
        tfb_t g = tfb_gradient(b, v); /* sets the scope "gradients/<variable>" */
        if (g < 0) continue;
        int r = tfb_rank(b, g);
        int64_t d[TFB_MAX_RANK] = {1}, one = 1;
        for (int k = 0; k < r; k++) d[k + 1] = tfb_dim(b, g, k);
        tfb_t in[2] = {g, tfb_aux(b, "Const", 0, NULL, DP_DTYPE_INT32, 0, NULL, 0)};
        tfb_t e = tfb_aux(b, "ExpandDims", 2, in, F32, r + 1, d, 0);
        tfb_aux(b, "Const", 0, NULL, DP_DTYPE_INT32, 0, NULL, 0); /* concat_dim */
        tfb_t c = tfb_aux(b, "Identity", 1, &e, F32, r + 1, d, 0);
        tfb_t in2[2] = {c, tfb_aux(b, "Const", 0, NULL, DP_DTYPE_INT32, 1, &one, 0)};
        tfb_t avg = tfb_aux(b, "Mean", 2, in2, F32, r, d + 1, 1);
        tfb_set_gradient(b, v, avg);
        scope(m, "summaries/gradients");
        summary(m, "HistogramSummary", avg, 4096);
    }
}

/* Ends a model: the CPU-only MergeSummary of all summaries (merged_bytes of
 * serialized output), frees the model's lists and seals the graph (or
 * reports running out of memory while building). Frees the builder. */
static dp_graph *finish_model(cnn *m, const char *name, int64_t merged_bytes, dp_error *err) {
    tfb *b = m->b;
    scope(m, "summaries");
    tfb_aux(b, "MergeSummary", (int)m->summ.n, m->summ.v, DP_DTYPE_UINT8, 1, &merged_bytes, 0);
    tfb_cpu_only(b);
    int oom = m->oom;
    free(m->decay.v);
    free(m->trainable.v);
    free(m->summ.v);
    if (oom) {
        tfb_free(b);
        dp_error_set(err, DP_STATUS_NOMEM, "model %s: out of memory", name);
        return NULL;
    }
    return tfb_finish(b, err);
}


dp_graph *zoo_build_inception_v3(const char *name, int64_t batch, dp_error *err) {
    tfb *b = tfb_init(name, err);
    if (!b) return NULL;
    cnn m = {.b = b, .bn_scale = 0, .decay_per_conv = 1, .summaries = 1, .ema = 1, .ema_decay = -1};
    const int64_t classes = 1001, image = 299;
    tfb_t gs = global_step(&m);
    learning_rate(&m, gs);
    scope(&m, "input");
    int64_t id[4] = {batch, image, image, 3};
    tfb_t x = tfb_input(b, "images", F32, 4, id);
    tfb_t labels = tfb_input(b, "labels", DP_DTYPE_INT32, 1, &batch);
    if (m.summaries) { /* image_processing.py: tf.summary.image('images', images) */
        scope(&m, "summaries/input");
        summary(&m, "ImageSummary", x, 65536);
    }
    /* stem: 299 -> 149 -> 147 -> 147 -> 73 -> 73 -> 71 -> 35 */
    x = conv_bn_relu(&m, IV3 "/Conv2d_1a_3x3", x, 3, 3, 32, 2, 0);
    activation_summary(&m, x);
    x = conv_bn_relu(&m, IV3 "/Conv2d_2a_3x3", x, 3, 3, 32, 1, 0);
    activation_summary(&m, x);
    x = conv_bn_relu(&m, IV3 "/Conv2d_2b_3x3", x, 3, 3, 64, 1, 1);
    activation_summary(&m, x);
    scope(&m, IV3 "/MaxPool_3a_3x3");
    x = tfb_pool(b, "MaxPool", x, 3, 2, 0);
    activation_summary(&m, x);
    x = conv_bn_relu(&m, IV3 "/Conv2d_3b_1x1", x, 1, 1, 80, 1, 0);
    activation_summary(&m, x);
    x = conv_bn_relu(&m, IV3 "/Conv2d_4a_3x3", x, 3, 3, 192, 1, 0);
    activation_summary(&m, x);
    scope(&m, IV3 "/MaxPool_5a_3x3");
    x = tfb_pool(b, "MaxPool", x, 3, 2, 0);
    activation_summary(&m, x);
    /* 35 x 35 */
    x = inception_block_a(&m, "Mixed_5b", x, 32, 0);
    x = inception_block_a(&m, "Mixed_5c", x, 64, 1);
    x = inception_block_a(&m, "Mixed_5d", x, 64, 0);
    /* 17 x 17 */
    x = inception_reduction_a(&m, x);
    x = inception_block_b(&m, "Mixed_6b", x, 128);
    x = inception_block_b(&m, "Mixed_6c", x, 160);
    x = inception_block_b(&m, "Mixed_6d", x, 160);
    x = inception_block_b(&m, "Mixed_6e", x, 192);
    /* auxiliary head on Mixed_6e: avgpool 5x5/3 -> 5x5, 1x1, 5x5 VALID -> 1x1 */
    scope(&m, IV3 "/AuxLogits/AvgPool_1a_5x5");
    tfb_t aux = tfb_pool(b, "AvgPool", x, 5, 3, 0);
    aux = conv_bn_relu(&m, IV3 "/AuxLogits/Conv2d_1b_1x1", aux, 1, 1, 128, 1, 1);
    aux = conv_bn_relu(&m, IV3 "/AuxLogits/Conv2d_2a_5x5", aux, 5, 5, 768, 1, 0);
    aux = logits_head(&m, IV3 "/AuxLogits", "Conv2d_2b_1x1", aux, classes);
    /* 8 x 8 */
    x = inception_reduction_b(&m, x);
    x = inception_block_c(&m, "Mixed_7b", x, 0);
    x = inception_block_c(&m, "Mixed_7c", x, 1);
    /* logits: avgpool 8x8 -> 1x1, dropout (keep 0.8), 1x1 conv, squeeze */
    scope(&m, IV3 "/Logits/AvgPool_1a_8x8");
    x = tfb_pool(b, "AvgPool", x, (int)tfb_dim(b, x, 1), 1, 0);
    activation_summary(&m, x);
    scope(&m, IV3 "/Logits/Dropout_1b");
    x = tfb_dropout(b, x);
    tfb_t logits = logits_head(&m, IV3 "/Logits", "Conv2d_1c_1x1", x, classes);
    scope(&m, IV3 "/Predictions");
    activation_summary(&m, tfb_softmax(b, logits));
    /* losses: main (weight 1.0), auxiliary (0.4), the regularisers */
    tfb_t losses[3];
    losses[0] = xent_loss(&m, "CrossEntropyLoss", logits, labels);
    losses[1] = xent_loss(&m, "aux_loss", aux, labels);
    push(&m, &m.decay, losses[0]);
    push(&m, &m.decay, losses[1]);
    scope(&m, "total_loss");
    losses[2] = tfb_addn(b, (int)m.decay.n, m.decay.v);
    loss_summaries(&m, 3, losses);
    tfb_gate_gradients(b, 1); /* opt.compute_gradients: gate_gradients=GATE_OP */
    tfb_backward(b, losses[2]);
    average_gradients(&m);
    tfb_optimizer(b, TFB_OPTIM_RMSPROP, 0);
    step_increment(&m, gs);
    return finish_model(&m, name, 65536, err);
}

/* ---- ResNet v1 (He et al. 2016), bottleneck units ---- */

/* One bottleneck unit in scope "resnet/blockB/unit_K": 1x1 (depth), 3x3
 * (depth, stride), 1x1 (4 depth, no ReLU), a projection shortcut (1x1 conv
 * with batch norm, stride) when the shape changes, else the identity;
 * ReLU of the sum. */
static tfb_t bottleneck(cnn *m, int block, int unit, tfb_t x, int64_t depth, int stride) {
    char s[256], u[128];
    int64_t out = 4 * depth;
    snprintf(u, sizeof u, "resnet/block%d/unit_%d", block, unit);
    tfb_t shortcut = x;
    if (tfb_dim(m->b, x, 3) != out || stride != 1) {
        snprintf(s, sizeof s, "%s/shortcut", u);
        shortcut = conv_bn(m, s, x, 1, 1, out, stride, 1, 0);
    }
    snprintf(s, sizeof s, "%s/conv1", u);
    tfb_t r = conv_bn_relu(m, s, x, 1, 1, depth, 1, 1);
    snprintf(s, sizeof s, "%s/conv2", u);
    r = conv_bn_relu(m, s, r, 3, 3, depth, stride, 1);
    snprintf(s, sizeof s, "%s/conv3", u);
    r = conv_bn(m, s, r, 1, 1, out, 1, 1, 0);
    scope(m, "%s", u);
    return tfb_unary(m->b, "Relu", tfb_binary(m->b, "Add", shortcut, r));
}

dp_graph *zoo_build_resnet(const char *name, int depth, int64_t batch, int64_t image, dp_error *err) {
    static const int units50[4] = {3, 4, 6, 3}, units101[4] = {3, 4, 23, 3}, units152[4] = {3, 8, 36, 3};
    const int *units = depth == 50 ? units50 : depth == 101 ? units101 : depth == 152 ? units152 : NULL;
    if (!units) {
        dp_error_set(err, DP_STATUS_INVALID, "model %s: ResNet depth %d is not 50, 101 or 152", name, depth);
        return NULL;
    }
    if (image < 32 || image > 1024) {
        dp_error_set(err, DP_STATUS_INVALID, "model %s: image size %lld is out of range 32..1024", name,
                     (long long)image);
        return NULL;
    }
    tfb *b = tfb_init(name, err);
    if (!b) return NULL;
    cnn m = {.b = b, .bn_scale = 1, .decay_per_conv = 0, .summaries = 0, .ema = 0, .ema_decay = -1};
    const int64_t classes = 1000;
    tfb_t gs = global_step(&m);
    scope(&m, "input");
    int64_t id[4] = {batch, image, image, 3};
    tfb_t x = tfb_input(b, "images", F32, 4, id);
    tfb_t labels = tfb_input(b, "labels", DP_DTYPE_INT32, 1, &batch);
    x = conv_bn_relu(&m, "resnet/conv1", x, 7, 7, 64, 2, 1);
    scope(&m, "resnet/pool1");
    x = tfb_pool(b, "MaxPool", x, 3, 2, 1);
    for (int k = 0; k < 4; k++)
        for (int u = 0; u < units[k]; u++)
            x = bottleneck(&m, k + 1, u + 1, x, 64 << k, u == 0 && k > 0 ? 2 : 1);
    /* global average pool, fully connected logits */
    scope(&m, "resnet/pool5");
    static const int hw[2] = {1, 2};
    x = tfb_reduce_axes(b, "Mean", x, 2, hw, 0);
    scope(&m, "resnet/logits");
    int64_t wd[2] = {tfb_dim(b, x, 1), classes};
    tfb_t w = variable(&m, "weights", 2, wd);
    weight_decay(&m, w);
    scope(&m, "resnet/logits");
    tfb_t logits = tfb_bias_add(b, tfb_matmul(b, x, w, 0), variable(&m, "biases", 1, &classes));
    scope(&m, "resnet/predictions");
    tfb_softmax(b, logits);
    /* cost = mean cross entropy + weight_decay * sum of L2Losses */
    scope(&m, "cost");
    tfb_t cost = tfb_reduce(b, "Mean", tfb_xent(b, logits, labels), 0, 0);
    scope(&m, "cost/weight_decay");
    tfb_t l2 = tfb_addn(b, (int)m.decay.n, m.decay.v);
    scope(&m, "cost");
    cost = tfb_binary(b, "Add", cost, tfb_binary(b, "Mul", scalar(&m), l2));
    scope(&m, "summaries");
    summary(&m, "ScalarSummary", cost, 64);
    tfb_backward(b, cost);
    tfb_optimizer(b, TFB_OPTIM_MOMENTUM, 0);
    step_increment(&m, gs);
    return finish_model(&m, name, 1024, err);
}
