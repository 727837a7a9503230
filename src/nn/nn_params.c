/* Parameter store (values, gradients, Adam moments: one allocation each),
 * Adam, gradient clipping, learning-rate schedules and checkpoints. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fileno, fsync, getpid */
#endif
#include "dplace/nn.h"
#include "common/util.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dplace checkpoints are written in host order, which must be little-endian"
#endif

static const char *const init_names[] = {"zero", "const", "uniform", "normal"};
_Static_assert(sizeof init_names / sizeof init_names[0] == DP_NN_INIT_COUNT,
               "init_names must name every dp_nn_init");

/* Frees p and zeroes it. */
void dp_nn_params_free(dp_nn_params *p) {
    if (!p) return;
    free(p->name);
    free(p->offset);
    free(p->size);
    free(p->data);
    free(p->grad);
    free(p->m);
    free(p->v);
    memset(p, 0, sizeof *p);
}

/* Lays out and initialises the tensors of specs; see nn.h. */
dp_status dp_nn_params_init(dp_nn_params *p, const dp_nn_tensor_spec *specs, int n,
                            dp_rng *rng, dp_error *err) {
    memset(p, 0, sizeof *p);
    if (n <= 0) return dp_error_set(err, DP_STATUS_INVALID, "nn params: %d tensors", n);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (!specs[i].name || !specs[i].name[0] || strlen(specs[i].name) >= DP_NN_NAME_MAX)
            return dp_error_set(err, DP_STATUS_INVALID, "nn params: tensor %d: bad name", i);
        if (specs[i].count == 0)
            return dp_error_set(err, DP_STATUS_INVALID, "nn params: tensor %s has no elements",
                                specs[i].name);
        if ((unsigned)specs[i].init >= DP_NN_INIT_COUNT)
            return dp_error_set(err, DP_STATUS_INVALID, "nn params: tensor %s: bad init %d",
                                specs[i].name, (int)specs[i].init);
        for (int j = 0; j < i; j++)
            if (strcmp(specs[i].name, specs[j].name) == 0)
                return dp_error_set(err, DP_STATUS_INVALID, "nn params: duplicate tensor %s",
                                    specs[i].name);
        total += specs[i].count;
    }
    p->ntensors = n;
    p->count = total;
    p->name = calloc((size_t)n, sizeof *p->name);
    p->offset = calloc((size_t)n, sizeof *p->offset);
    p->size = calloc((size_t)n, sizeof *p->size);
    p->data = calloc(total, sizeof(float));
    p->grad = calloc(total, sizeof(float));
    p->m = calloc(total, sizeof(float));
    p->v = calloc(total, sizeof(float));
    if (!p->name || !p->offset || !p->size || !p->data || !p->grad || !p->m || !p->v) {
        dp_nn_params_free(p);
        return dp_error_set(err, DP_STATUS_NOMEM, "nn params: out of memory for %zu floats", total);
    }
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        strcpy(p->name[i], specs[i].name);
        p->offset[i] = off;
        p->size[i] = specs[i].count;
        float *w = p->data + off;
        float s = specs[i].scale;
        for (size_t k = 0; k < specs[i].count; k++) {
            switch (specs[i].init) {
            case DP_NN_INIT_ZERO: w[k] = 0.0f; break;
            case DP_NN_INIT_CONST: w[k] = s; break;
            case DP_NN_INIT_UNIFORM: w[k] = (float)((2.0 * dp_rng_uniform(rng) - 1.0) * s); break;
            case DP_NN_INIT_NORMAL: w[k] = (float)(dp_rng_normal(rng) * s); break;
            default: assert(0 && init_names[0]);
            }
        }
        off += specs[i].count;
    }
    return DP_STATUS_OK;
}

/* Index of the tensor called name, or -1. */
int dp_nn_params_find(const dp_nn_params *p, const char *name) {
    for (int i = 0; i < p->ntensors; i++)
        if (strcmp(p->name[i], name) == 0) return i;
    return -1;
}

/* Value pointer of tensor i. */
float *dp_nn_params_tensor(const dp_nn_params *p, int i) {
    assert(i >= 0 && i < p->ntensors);
    return p->data + p->offset[i];
}

/* Gradient pointer of tensor i. */
float *dp_nn_params_grad(const dp_nn_params *p, int i) {
    assert(i >= 0 && i < p->ntensors);
    return p->grad + p->offset[i];
}

/* Zeroes all gradients. */
void dp_nn_params_zero_grad(dp_nn_params *p) { memset(p->grad, 0, sizeof(float) * p->count); }

/* PyTorch's Adam defaults. */
dp_nn_adam dp_nn_adam_default(void) {
    dp_nn_adam a = {0.9, 0.999, 1e-8, 0.0};
    return a;
}

/* One bias-corrected Adam step at learning rate lr. */
void dp_nn_adam_update(dp_nn_params *p, const dp_nn_adam *cfg, float lr) {
    dp_nn_adam_update_split(p, cfg, 0, lr, lr);
}

/* One Adam step, the tensors before `first` at lr_head, the rest at lr_tail. */
void dp_nn_adam_update_split(dp_nn_params *p, const dp_nn_adam *cfg, int first, float lr_head, float lr_tail) {
    assert(first >= 0 && first <= p->ntensors);
    unsigned fp_ = nn_fp_enter(); /* flush denormals (nn_internal.h) */
    /* the step saturates in 1..DP_NN_MAX_STEP: past it the bias corrections
     * are 1 to float precision, and it can neither overflow nor go <= 0 */
    p->step = p->step < 0 ? 1 : p->step < DP_NN_MAX_STEP ? p->step + 1 : DP_NN_MAX_STEP;
    /* coefficients in double, as PyTorch forms them from Python floats */
    float b1 = (float)cfg->beta1, b2 = (float)cfg->beta2;
    float ob1 = (float)(1.0 - cfg->beta1), ob2 = (float)(1.0 - cfg->beta2);
    float eps = (float)cfg->eps, wd = (float)cfg->weight_decay;
    float ic1 = (float)(1.0 / (1.0 - pow(cfg->beta1, (double)p->step)));
    float isc2 = (float)(1.0 / sqrt(1.0 - pow(cfg->beta2, (double)p->step)));
    float *w = p->data, *g = p->grad, *m = p->m, *v = p->v;
    size_t split = first < p->ntensors ? p->offset[first] : p->count;
    for (size_t i = 0; i < p->count; i++) {
        float lr = i < split ? lr_head : lr_tail;
        float gi = g[i] + wd * w[i];
        m[i] = b1 * m[i] + ob1 * gi;
        v[i] = b2 * v[i] + ob2 * gi * gi;
        w[i] -= lr * (m[i] * ic1) / (sqrtf(v[i]) * isc2 + eps);
    }
    nn_fp_leave(fp_);
}

/* Global L2 norm of the gradients. */
double dp_nn_grad_norm(const dp_nn_params *p) {
    double s = 0.0;
    for (size_t i = 0; i < p->count; i++) s += (double)p->grad[i] * p->grad[i];
    return sqrt(s);
}

/* Clips the gradient norm of tensors first .. first + n - 1 to max_norm;
 * returns the norm before. */
double dp_nn_grad_clip_range(dp_nn_params *p, int first, int n, double max_norm) {
    assert(first >= 0 && n >= 0 && first + n <= p->ntensors);
    if (n == 0) return 0.0;
    size_t lo = p->offset[first], hi = p->offset[first + n - 1] + p->size[first + n - 1];
    double s2 = 0.0;
    for (size_t i = lo; i < hi; i++) s2 += (double)p->grad[i] * p->grad[i];
    double norm = sqrt(s2);
    if (norm > max_norm && norm > 0.0) {
        float s = (float)(max_norm / (norm + 1e-6));
        for (size_t i = lo; i < hi; i++) p->grad[i] *= s;
    }
    return norm;
}

/* Clips the global gradient norm to max_norm; returns the norm before. */
double dp_nn_grad_clip(dp_nn_params *p, double max_norm) { return dp_nn_grad_clip_range(p, 0, p->ntensors, max_norm); }

/* Learning rate at step under schedule s. */
float dp_nn_lr_at(const dp_nn_lr_schedule *s, int64_t step) {
    switch (s->kind) {
    case DP_NN_LR_KIND_CONSTANT: return s->base;
    case DP_NN_LR_KIND_STEP_DECAY:
        assert(s->every > 0);
        return (float)(s->base * pow(s->gamma, (double)(step / s->every)));
    default: assert(0 && "bad dp_nn_lr_kind"); return s->base;
    }
}

/* ---- checkpoints ------------------------------------------------------------------
 * Layout, little-endian:
 *   "DPNNCKPT" | u32 version | u32 ntensors | i64 step | u64 count |
 *   ntensors x (u32 name length | name bytes | u64 size) |
 *   data [count] f32 | m [count] f32 | v [count] f32 | u32 CRC-32 of all before. */

static const char ckpt_magic[8] = {'D', 'P', 'N', 'N', 'C', 'K', 'P', 'T'};

static uint32_t crc32_update(uint32_t crc, const void *buf, size_t n) {
    static uint32_t table[256];
    static int ready = 0;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const unsigned char *b = buf;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ b[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

typedef struct ckpt_writer {
    FILE *f;
    uint32_t crc;
    int failed;
} ckpt_writer;

static void put(ckpt_writer *w, const void *buf, size_t n) {
    if (w->failed || n == 0) return;
    if (fwrite(buf, 1, n, w->f) != n) w->failed = 1;
    w->crc = crc32_update(w->crc, buf, n);
}

/* Writes p to path atomically (temporary file, fsync, rename). */
dp_status dp_nn_checkpoint_save(const dp_nn_params *p, const char *path, dp_error *err) {
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    if (!tmp) return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
    snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    dp_atomic_sweep(path); /* a killed run's temporary files */
    ckpt_writer w = {fopen(tmp, "wb"), 0, 0};
    if (!w.f) {
        dp_status st = dp_error_set(err, DP_STATUS_IO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return st;
    }
    uint32_t version = DP_NN_CHECKPOINT_VERSION, nt = (uint32_t)p->ntensors;
    int64_t step = p->step;
    uint64_t count = p->count;
    put(&w, ckpt_magic, sizeof ckpt_magic);
    put(&w, &version, 4);
    put(&w, &nt, 4);
    put(&w, &step, 8);
    put(&w, &count, 8);
    for (int i = 0; i < p->ntensors; i++) {
        uint32_t len = (uint32_t)strlen(p->name[i]);
        uint64_t size = p->size[i];
        put(&w, &len, 4);
        put(&w, p->name[i], len);
        put(&w, &size, 8);
    }
    put(&w, p->data, sizeof(float) * p->count);
    put(&w, p->m, sizeof(float) * p->count);
    put(&w, p->v, sizeof(float) * p->count);
    uint32_t crc = w.crc;
    put(&w, &crc, 4);
    int bad = w.failed || fflush(w.f) != 0 || fsync(fileno(w.f)) != 0;
    int saved_errno = errno;
    if (fclose(w.f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        if (!bad) saved_errno = errno;
        remove(tmp);
        dp_status st = dp_error_set(err, DP_STATUS_IO, "%s: cannot write checkpoint: %s", path,
                                    strerror(saved_errno));
        free(tmp);
        return st;
    }
    free(tmp);
    return DP_STATUS_OK;
}

typedef struct ckpt_reader {
    const unsigned char *buf;
    size_t n, pos;
} ckpt_reader;

static int take(ckpt_reader *r, void *dst, size_t n) {
    if (r->n - r->pos < n) return 0;
    memcpy(dst, r->buf + r->pos, n);
    r->pos += n;
    return 1;
}

/* Loads a checkpoint written by dp_nn_checkpoint_save into p; see nn.h. */
dp_status dp_nn_checkpoint_load(dp_nn_params *p, const char *path, dp_error *err) {
    char *file = NULL;
    size_t n = 0;
    dp_status st = dp_read_file(path, SIZE_MAX / 2, &file, &n, err);
    if (st) return st;
    unsigned char *buf = (unsigned char *)file;
    ckpt_reader r = {buf, n, 0};
    char magic[8];
    uint32_t version, nt;
    int64_t step;
    uint64_t count;
    if (!take(&r, magic, 8) || memcmp(magic, ckpt_magic, 8) != 0) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: not a dplace nn checkpoint (bad magic)", path);
        goto done;
    }
    if (!take(&r, &version, 4) || !take(&r, &nt, 4) || !take(&r, &step, 8) || !take(&r, &count, 8)) {
        st = dp_error_set(err, DP_STATUS_IO, "%s: truncated checkpoint (header)", path);
        goto done;
    }
    if (version != DP_NN_CHECKPOINT_VERSION) {
        st = dp_error_set(err, DP_STATUS_UNSUPPORTED,
                          "%s: checkpoint version %u, this build reads version %u", path, version,
                          DP_NN_CHECKPOINT_VERSION);
        goto done;
    }
    if (nt != (uint32_t)p->ntensors || count != p->count) {
        st = dp_error_set(err, DP_STATUS_INVALID,
                          "%s: checkpoint has %u tensors / %llu floats, model has %d / %zu", path,
                          nt, (unsigned long long)count, p->ntensors, p->count);
        goto done;
    }
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t len;
        char name[DP_NN_NAME_MAX];
        uint64_t size;
        if (!take(&r, &len, 4)) {
            st = dp_error_set(err, DP_STATUS_IO, "%s: truncated checkpoint (tensor table)", path);
            goto done;
        }
        if (len >= DP_NN_NAME_MAX) {
            st = dp_error_set(err, DP_STATUS_PARSE, "%s: tensor %u: name length %u", path, i, len);
            goto done;
        }
        if (!take(&r, name, len) || !take(&r, &size, 8)) {
            st = dp_error_set(err, DP_STATUS_IO, "%s: truncated checkpoint (tensor table)", path);
            goto done;
        }
        name[len] = '\0';
        if (strcmp(name, p->name[i]) != 0 || size != p->size[i]) {
            st = dp_error_set(err, DP_STATUS_INVALID,
                              "%s: tensor %u is %s [%llu], model expects %s [%zu]", path, i, name,
                              (unsigned long long)size, p->name[i], p->size[i]);
            goto done;
        }
    }
    size_t body = sizeof(float) * p->count * 3;
    if (r.n - r.pos < body + 4) {
        st = dp_error_set(err, DP_STATUS_IO, "%s: truncated checkpoint (%zu of %zu bytes)", path,
                          r.n, r.pos + body + 4);
        goto done;
    }
    if (r.n - r.pos > body + 4) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: %zu trailing bytes after checkpoint", path,
                          r.n - r.pos - body - 4);
        goto done;
    }
    uint32_t want;
    memcpy(&want, buf + r.pos + body, 4);
    if (crc32_update(0, buf, r.pos + body) != want) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: checkpoint checksum mismatch (corrupt)", path);
        goto done;
    }
    if (step < 0 || step > DP_NN_MAX_STEP) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: impossible Adam step %lld (expected 0..%lld)", path,
                          (long long)step, (long long)DP_NN_MAX_STEP);
        goto done;
    }
    /* values and moments must be finite, second moments >= 0 */
    for (size_t i = 0; i < 3 * p->count; i++) {
        float x;
        memcpy(&x, buf + r.pos + sizeof(float) * i, sizeof x);
        if (!isfinite(x) || (i >= 2 * p->count && x < 0)) {
            const char *part = i < p->count ? "value" : i < 2 * p->count ? "Adam m" : "Adam v";
            st = dp_error_set(err, DP_STATUS_PARSE, "%s: %s %zu is %g (expected a finite number%s)", path, part,
                              i % p->count, (double)x, i >= 2 * p->count ? " >= 0" : "");
            goto done;
        }
    }
    take(&r, p->data, sizeof(float) * p->count);
    take(&r, p->m, sizeof(float) * p->count);
    take(&r, p->v, sizeof(float) * p->count);
    p->step = step;
done:
    free(buf);
    return st;
}
