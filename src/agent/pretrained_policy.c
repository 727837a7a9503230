/* The pretrained placer's network and its file: a row of features,
 * normalised by the mean and spread of the training rows, through two
 * ReLU layers to one score; dplace-policy v1 on disk.
 *
 * The file, little-endian:
 *   char magic[8]  "DPPOLICY"
 *   u32 format, feature_set, cost_model, n_features, h1, h2
 *   u64 n_floats, checksum (FNV-1a 64 of the float bytes)
 *   char note[64]  what it was trained on, NUL-padded
 *   f32 [n_floats] mean[F], std[F], w1[h1,F], b1[h1], w2[h2,h1], b2[h2],
 *                  w3[1,h2], b3[1]
 * bench/pretrain.py writes the same layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/util.h"
#include "dplace/cost.h"
#include "dplace/nn.h"
#include "dplace/pretrained.h"
#include "agent/pretrained_internal.h"

enum { T_MEAN, T_STD, T_W1, T_B1, T_W2, T_B2, T_W3, T_B3, T_COUNT };

/* A policy of widths h1, h2 with its tensors laid out, weights drawn from
 * rng (He's uniform), the normalisation the identity. */
static dp_pretrained_policy *policy_new(int32_t h1, int32_t h2, uint64_t seed, dp_error *err) {
    if (h1 < 1 || h1 > 1024 || h2 < 1 || h2 > 1024) {
        dp_error_set(err, DP_STATUS_INVALID, "pretrained policy: hidden widths %d, %d not in 1..1024", h1, h2);
        return NULL;
    }
    dp_pretrained_policy *p = calloc(1, sizeof *p);
    if (!p) {
        dp_error_set(err, DP_STATUS_NOMEM, "pretrained policy: out of memory");
        return NULL;
    }
    const int F = DP_PRETRAINED_FEATURES;
    p->h1 = h1, p->h2 = h2;
    dp_nn_tensor_spec specs[T_COUNT] = {
        {"mean", (size_t)F, DP_NN_INIT_ZERO, 0},
        {"std", (size_t)F, DP_NN_INIT_CONST, 1},
        {"w1", (size_t)h1 * F, DP_NN_INIT_UNIFORM, (float)sqrt(6.0 / F)},
        {"b1", (size_t)h1, DP_NN_INIT_ZERO, 0},
        {"w2", (size_t)h2 * h1, DP_NN_INIT_UNIFORM, (float)sqrt(6.0 / h1)},
        {"b2", (size_t)h2, DP_NN_INIT_ZERO, 0},
        {"w3", (size_t)h2, DP_NN_INIT_UNIFORM, (float)sqrt(3.0 / h2)},
        {"b3", 1, DP_NN_INIT_ZERO, 0},
    };
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    if (dp_nn_params_init(&p->params, specs, T_COUNT, &rng, err)) {
        free(p);
        return NULL;
    }
    if (!(p->wt = malloc(sizeof(float) * ((size_t)F * h1 + (size_t)h1 * h2)))) {
        dp_nn_params_free(&p->params);
        free(p);
        dp_error_set(err, DP_STATUS_NOMEM, "pretrained policy: out of memory");
        return NULL;
    }
    pretrained_policy_sync(p);
    return p;
}

void pretrained_policy_sync(dp_pretrained_policy *p) {
    const int F = DP_PRETRAINED_FEATURES, h1 = p->h1, h2 = p->h2;
    const float *w1 = p->params.data + p->params.offset[T_W1], *w2 = p->params.data + p->params.offset[T_W2];
    float *t1 = p->wt, *t2 = p->wt + (size_t)F * h1;
    for (int o = 0; o < h1; o++)
        for (int c = 0; c < F; c++) t1[(size_t)c * h1 + o] = w1[(size_t)o * F + c];
    for (int o = 0; o < h2; o++)
        for (int c = 0; c < h1; c++) t2[(size_t)c * h2 + o] = w2[(size_t)o * h1 + c];
}

dp_pretrained_policy *dp_pretrained_policy_random(int32_t h1, int32_t h2, uint64_t seed, dp_error *err) {
    return policy_new(h1, h2, seed, err);
}

void dp_pretrained_policy_free(dp_pretrained_policy *p) {
    if (!p) return;
    dp_nn_params_free(&p->params);
    free(p->wt);
    free(p);
}

const char *dp_pretrained_policy_note(const dp_pretrained_policy *p) { return p->note; }

#define HEADER_BYTES (8 + 6 * 4 + 2 * 8 + 64)

static uint32_t rd32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static uint64_t rd64(const unsigned char *b) { return (uint64_t)rd32(b) | (uint64_t)rd32(b + 4) << 32; }
static void wr32(unsigned char *b, uint32_t v) {
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}
static void wr64(unsigned char *b, uint64_t v) { wr32(b, (uint32_t)v), wr32(b + 4, (uint32_t)(v >> 32)); }

/* n floats to little-endian bytes at b, and back; rd_floats returns the
 * index of the first value that is not finite, or n. */
static void wr_floats(unsigned char *b, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t w;
        memcpy(&w, &x[i], 4);
        wr32(b + 4 * i, w);
    }
}
static size_t rd_floats(float *x, const unsigned char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t w = rd32(b + 4 * i);
        memcpy(&x[i], &w, 4);
        if (!isfinite(x[i])) return i;
    }
    return n;
}

dp_pretrained_policy *dp_pretrained_policy_from_bytes(const void *bytes, size_t n, const char *what, dp_error *err) {
    const unsigned char *b = bytes;
    if (n < HEADER_BYTES || memcmp(b, "DPPOLICY", 8)) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: not a dplace policy file (no DPPOLICY header)", what);
        return NULL;
    }
    uint32_t format = rd32(b + 8), fset = rd32(b + 12), cost = rd32(b + 16), nf = rd32(b + 20);
    uint32_t h1 = rd32(b + 24), h2 = rd32(b + 28);
    uint64_t nfloats = rd64(b + 32), sum = rd64(b + 40);
    if (format != DP_PRETRAINED_FORMAT) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: policy format %u, this build reads %u", what, format,
                     DP_PRETRAINED_FORMAT);
        return NULL;
    }
    if (fset != DP_PRETRAINED_FEATURE_SET || nf != DP_PRETRAINED_FEATURES) {
        dp_error_set(err, DP_STATUS_INVALID,
                     "%s: trained on feature set %u (%u features), this build computes set %u (%d): retrain it "
                     "(bench/pretrain.py)",
                     what, fset, nf, DP_PRETRAINED_FEATURE_SET, DP_PRETRAINED_FEATURES);
        return NULL;
    }
    if (cost != DP_COST_MODEL_VERSION) {
        dp_error_set(err, DP_STATUS_INVALID,
                     "%s: trained under cost model %u, this build prices ops with cost model %u: retrain it "
                     "(bench/pretrain.py)",
                     what, cost, DP_COST_MODEL_VERSION);
        return NULL;
    }
    if (h1 < 1 || h1 > 1024 || h2 < 1 || h2 > 1024) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: hidden widths %u, %u not in 1..1024: corrupt", what, h1, h2);
        return NULL;
    }
    dp_pretrained_policy *p = policy_new((int32_t)h1, (int32_t)h2, 1, err);
    if (!p) return NULL;
    if (nfloats != p->params.count || n != HEADER_BYTES + nfloats * 4) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: %zu bytes, a policy of widths %u, %u has %zu: truncated or corrupt",
                     what, n, h1, h2, (size_t)(HEADER_BYTES + p->params.count * 4));
        dp_pretrained_policy_free(p);
        return NULL;
    }
    if (dp_fnv1a(b + HEADER_BYTES, nfloats * 4) != sum) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: checksum does not match its weights: corrupt", what);
        dp_pretrained_policy_free(p);
        return NULL;
    }
    memcpy(p->note, b + 48, 64);
    p->note[63] = '\0';
    size_t bad = rd_floats(p->params.data, b + HEADER_BYTES, nfloats);
    if (bad < nfloats) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: weight %zu is not finite: corrupt", what, bad);
        dp_pretrained_policy_free(p);
        return NULL;
    }
    const float *sd = p->params.data + p->params.offset[T_STD];
    for (int i = 0; i < DP_PRETRAINED_FEATURES; i++)
        if (!(sd[i] > 0)) {
            dp_error_set(err, DP_STATUS_INVALID, "%s: feature %d's spread %g is not positive: corrupt", what, i, sd[i]);
            dp_pretrained_policy_free(p);
            return NULL;
        }
    pretrained_policy_sync(p);
    return p;
}

dp_pretrained_policy *dp_pretrained_policy_load(const char *path, dp_error *err) {
    char *buf;
    size_t n;
    if (dp_read_file(path, (size_t)64 << 20, &buf, &n, err)) return NULL;
    dp_pretrained_policy *p = dp_pretrained_policy_from_bytes(buf, n, path, err);
    free(buf);
    return p;
}

dp_status dp_pretrained_policy_save(const dp_pretrained_policy *p, const char *path, dp_error *err) {
    size_t nf = p->params.count, n = HEADER_BYTES + nf * 4;
    unsigned char *b = calloc(1, n);
    if (!b) return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the policy", path);
    memcpy(b, "DPPOLICY", 8);
    wr32(b + 8, DP_PRETRAINED_FORMAT), wr32(b + 12, DP_PRETRAINED_FEATURE_SET), wr32(b + 16, DP_COST_MODEL_VERSION);
    wr32(b + 20, DP_PRETRAINED_FEATURES), wr32(b + 24, (uint32_t)p->h1), wr32(b + 28, (uint32_t)p->h2);
    wr64(b + 32, nf);
    memcpy(b + 48, p->note, strnlen(p->note, 63));
    wr_floats(b + HEADER_BYTES, p->params.data, nf);
    wr64(b + 40, dp_fnv1a(b + HEADER_BYTES, nf * 4));
    dp_status st = dp_write_file(path, b, n, "the policy", err);
    free(b);
    return st;
}

/* ---- a training run's state ---------------------------------------------- */

/* The state file, little-endian:
 *   char magic[8]  "DPPSTATE"
 *   u32 version, h1, h2, 0
 *   u64 n_floats, adam_step, updates, checksum (FNV-1a 64 of the floats)
 *   f32 [n_floats] weights, [n_floats] Adam's m, [n_floats] Adam's v */
#define STATE_HEADER (8 + 4 * 4 + 4 * 8)
#define STATE_VERSION 1

dp_status dp_pretrained_policy_save_state(const dp_pretrained_policy *p, int64_t updates, const char *path,
                                          dp_error *err) {
    size_t nf = p->params.count, n = STATE_HEADER + 3 * nf * 4;
    unsigned char *b = calloc(1, n);
    if (!b) return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the training state", path);
    memcpy(b, "DPPSTATE", 8);
    wr32(b + 8, STATE_VERSION), wr32(b + 12, (uint32_t)p->h1), wr32(b + 16, (uint32_t)p->h2);
    wr64(b + 24, nf), wr64(b + 32, (uint64_t)p->params.step), wr64(b + 40, (uint64_t)updates);
    wr_floats(b + STATE_HEADER, p->params.data, nf);
    wr_floats(b + STATE_HEADER + 4 * nf, p->params.m, nf);
    wr_floats(b + STATE_HEADER + 8 * nf, p->params.v, nf);
    wr64(b + 48, dp_fnv1a(b + STATE_HEADER, 3 * nf * 4));
    dp_status st = dp_write_file(path, b, n, "the training state", err);
    free(b);
    return st;
}

dp_status dp_pretrained_policy_load_state(dp_pretrained_policy *p, int64_t *updates, const char *path,
                                          dp_error *err) {
    char *buf;
    size_t n, nf = p->params.count;
    dp_status st = dp_read_file(path, (size_t)64 << 20, &buf, &n, err);
    if (st) return st;
    const unsigned char *b = (const unsigned char *)buf;
    if (n < STATE_HEADER || memcmp(b, "DPPSTATE", 8))
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: not a policy training state (no DPPSTATE header)", path);
    else if (rd32(b + 8) != STATE_VERSION)
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: training state version %u, this build reads %u", path,
                          rd32(b + 8), STATE_VERSION);
    else if (rd32(b + 12) != (uint32_t)p->h1 || rd32(b + 16) != (uint32_t)p->h2 || rd64(b + 24) != nf)
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: a state of widths %u, %u, the policy has %d, %d", path,
                          rd32(b + 12), rd32(b + 16), p->h1, p->h2);
    else if (n != STATE_HEADER + 3 * nf * 4)
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: %zu bytes, a state of this policy has %zu: truncated or corrupt",
                          path, n, (size_t)(STATE_HEADER + 3 * nf * 4));
    else if (dp_fnv1a(b + STATE_HEADER, 3 * nf * 4) != rd64(b + 48))
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: checksum does not match its contents: corrupt", path);
    else if ((int64_t)rd64(b + 32) < 0 || (int64_t)rd64(b + 32) > DP_NN_MAX_STEP || (int64_t)rd64(b + 40) < 0)
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: Adam step %lld or update count %lld out of range: corrupt", path,
                          (long long)rd64(b + 32), (long long)rd64(b + 40));
    float *tmp = st ? NULL : malloc(sizeof(float) * 3 * nf);
    if (!st && !tmp) st = dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the training state", path);
    size_t bad = st ? 0 : rd_floats(tmp, b + STATE_HEADER, 3 * nf);
    if (!st && bad < 3 * nf) st = dp_error_set(err, DP_STATUS_INVALID, "%s: value %zu is not finite: corrupt", path, bad);
    if (!st) {
        memcpy(p->params.data, tmp, sizeof(float) * nf);
        memcpy(p->params.m, tmp + nf, sizeof(float) * nf);
        memcpy(p->params.v, tmp + 2 * nf, sizeof(float) * nf);
        p->params.step = (int64_t)rd64(b + 32);
        *updates = (int64_t)rd64(b + 40);
        pretrained_policy_sync(p);
    }
    free(tmp);
    free(buf);
    return st;
}

/* ---- the network ---------------------------------------------------------- */

void pretrained_forward(const dp_pretrained_policy *p, const float *rows, int n, pretrained_acts *a) {
    const int F = DP_PRETRAINED_FEATURES;
    const float *d = p->params.data;
    const size_t *off = p->params.offset;
    for (int r = 0; r < n; r++)
        for (int i = 0; i < F; i++)
            a->x[r * F + i] = (rows[r * F + i] - d[off[T_MEAN] + i]) / d[off[T_STD] + i];
    dp_nn_linear_forward_t(a->z1, a->x, p->wt, d + off[T_B1], n, F, p->h1);
    dp_nn_relu_forward(a->a1, a->z1, (size_t)n * p->h1);
    dp_nn_linear_forward_t(a->z2, a->a1, p->wt + (size_t)F * p->h1, d + off[T_B2], n, p->h1, p->h2);
    dp_nn_relu_forward(a->a2, a->z2, (size_t)n * p->h2);
    dp_nn_linear_forward(a->score, a->a2, d + off[T_W3], d + off[T_B3], n, p->h2, 1);
}

void pretrained_backward(const dp_pretrained_policy *p, float *grad, const pretrained_acts *a, const float *dscore,
                         int n, pretrained_acts *s) {
    const int F = DP_PRETRAINED_FEATURES;
    const float *d = p->params.data;
    const size_t *off = p->params.offset;
    memset(s->a2, 0, sizeof(float) * (size_t)n * p->h2);
    dp_nn_linear_backward(s->a2, grad + off[T_W3], grad + off[T_B3], dscore, a->a2, d + off[T_W3], n, p->h2, 1);
    memset(s->z2, 0, sizeof(float) * (size_t)n * p->h2); /* relu's backward adds */
    dp_nn_relu_backward(s->z2, s->a2, a->a2, (size_t)n * p->h2);
    memset(s->a1, 0, sizeof(float) * (size_t)n * p->h1);
    dp_nn_linear_backward(s->a1, grad + off[T_W2], grad + off[T_B2], s->z2, a->a1, d + off[T_W2], n, p->h1, p->h2);
    memset(s->z1, 0, sizeof(float) * (size_t)n * p->h1);
    dp_nn_relu_backward(s->z1, s->a1, a->a1, (size_t)n * p->h1);
    dp_nn_linear_backward(NULL, grad + off[T_W1], grad + off[T_B1], s->z1, a->x, d + off[T_W1], n, F, p->h1);
}

dp_status pretrained_acts_init(pretrained_acts *a, const dp_pretrained_policy *p, int n, dp_error *err) {
    memset(a, 0, sizeof *a);
    size_t F = DP_PRETRAINED_FEATURES, h1 = (size_t)p->h1, h2 = (size_t)p->h2, N = (size_t)n;
    a->x = malloc(sizeof(float) * N * F);
    a->z1 = malloc(sizeof(float) * N * h1), a->a1 = malloc(sizeof(float) * N * h1);
    a->z2 = malloc(sizeof(float) * N * h2), a->a2 = malloc(sizeof(float) * N * h2);
    a->score = malloc(sizeof(float) * N);
    if (!a->x || !a->z1 || !a->a1 || !a->z2 || !a->a2 || !a->score) {
        pretrained_acts_free(a);
        return dp_error_set(err, DP_STATUS_NOMEM, "pretrained policy: out of memory");
    }
    return DP_STATUS_OK;
}

void pretrained_acts_free(pretrained_acts *a) {
    free(a->x), free(a->z1), free(a->a1), free(a->z2), free(a->a2), free(a->score);
    memset(a, 0, sizeof *a);
}

/* ---- training ------------------------------------------------------------- */

struct dp_pretrained_grad {
    float *g; /* [params.count], laid out as the policy's */
    size_t n;
    pretrained_acts act, scratch;
};

dp_pretrained_grad *dp_pretrained_grad_init(const dp_pretrained_policy *p, dp_error *err) {
    dp_pretrained_grad *g = calloc(1, sizeof *g);
    if (!g || !(g->g = calloc(p->params.count, sizeof(float))) ||
        pretrained_acts_init(&g->act, p, DP_MAX_DEVICES, err) ||
        pretrained_acts_init(&g->scratch, p, DP_MAX_DEVICES, err)) {
        dp_pretrained_grad_free(g);
        dp_error_set(err, DP_STATUS_NOMEM, "pretrained policy: out of memory for gradients");
        return NULL;
    }
    g->n = p->params.count;
    return g;
}

void dp_pretrained_grad_free(dp_pretrained_grad *g) {
    if (!g) return;
    free(g->g);
    pretrained_acts_free(&g->act);
    pretrained_acts_free(&g->scratch);
    free(g);
}

void dp_pretrained_grad_zero(dp_pretrained_grad *g) { memset(g->g, 0, sizeof(float) * g->n); }

double dp_pretrained_grad_add(dp_pretrained_grad *g, const dp_pretrained_policy *p, const dp_pretrained_trace *tr,
                              double weight) {
    const int F = DP_PRETRAINED_FEATURES, nd = tr->n_devices;
    double ent = 0;
    int32_t n_ent = 0;
    float dscore[DP_MAX_DEVICES];
    for (int32_t k = 0; k < tr->n_steps; k++) {
        const dp_pretrained_step *st = &tr->steps[k];
        if (dp_mask_count(st->cand) < 2) continue; /* no choice, no gradient */
        pretrained_forward(p, tr->rows + (size_t)k * nd * F, nd, &g->act);
        double mx = -INFINITY, z = 0, prob[DP_MAX_DEVICES], t = tr->temp > 0 ? tr->temp : 1;
        for (int d = 0; d < nd; d++)
            if (st->cand & dp_mask_bit(d) && g->act.score[d] / t > mx) mx = g->act.score[d] / t;
        for (int d = 0; d < nd; d++) z += prob[d] = (st->cand & dp_mask_bit(d)) ? exp(g->act.score[d] / t - mx) : 0;
        double h = 0;
        for (int d = 0; d < nd; d++) {
            prob[d] /= z;
            if (prob[d] > 0) h -= prob[d] * log(prob[d]);
            /* d(-w log p_a)/d score_d = -w (1[d = a] - p_d) / t */
            dscore[d] = (float)(-weight * ((d == st->action) - prob[d]) / t);
        }
        ent += h, n_ent++;
        pretrained_backward(p, g->g, &g->act, dscore, nd, &g->scratch);
    }
    return n_ent ? ent / n_ent : 0;
}

void dp_pretrained_grad_merge(dp_pretrained_grad *g, const dp_pretrained_grad *other) {
    for (size_t i = 0; i < g->n && i < other->n; i++) g->g[i] += other->g[i];
}

double dp_pretrained_trace_logp(const dp_pretrained_policy *p, const dp_pretrained_trace *tr) {
    const int F = DP_PRETRAINED_FEATURES, nd = tr->n_devices;
    pretrained_acts a;
    if (pretrained_acts_init(&a, p, nd, NULL)) return NAN;
    double lp = 0;
    for (int32_t k = 0; k < tr->n_steps; k++) {
        const dp_pretrained_step *st = &tr->steps[k];
        if (dp_mask_count(st->cand) < 2) continue;
        pretrained_forward(p, tr->rows + (size_t)k * nd * F, nd, &a);
        double mx = -INFINITY, z = 0, t = tr->temp > 0 ? tr->temp : 1;
        for (int d = 0; d < nd; d++)
            if (st->cand & dp_mask_bit(d) && a.score[d] / t > mx) mx = a.score[d] / t;
        for (int d = 0; d < nd; d++)
            if (st->cand & dp_mask_bit(d)) z += exp(a.score[d] / t - mx);
        lp += a.score[st->action] / t - mx - log(z);
    }
    pretrained_acts_free(&a);
    return lp;
}

double dp_pretrained_grad_step(dp_pretrained_grad *g, dp_pretrained_policy *p, double lr, double clip) {
    double norm2 = 0;
    /* the normalisation is the training data's, never trained */
    size_t first = p->params.offset[T_W1];
    memset(g->g, 0, sizeof(float) * first);
    for (size_t i = first; i < g->n; i++) norm2 += (double)g->g[i] * g->g[i];
    double norm = sqrt(norm2), scale = clip > 0 && norm > clip ? clip / norm : 1;
    memcpy(p->params.grad, g->g, sizeof(float) * g->n);
    for (size_t i = 0; i < g->n; i++) p->params.grad[i] *= (float)scale;
    dp_nn_adam cfg = dp_nn_adam_default();
    dp_nn_adam_update(&p->params, &cfg, (float)lr);
    pretrained_policy_sync(p);
    return norm;
}
