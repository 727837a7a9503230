/* Parameter store, Adam against a hand-computed step, gradient clipping,
 * learning-rate schedules and checkpoint save/load with its error cases. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dplace/nn.h"
#include "test_util.h"

static const dp_nn_tensor_spec specs[] = {
    {"a.weight", 6, DP_NN_INIT_UNIFORM, 0.5f},
    {"a.bias", 3, DP_NN_INIT_ZERO, 0.0f},
    {"b.slope", 1, DP_NN_INIT_CONST, 0.25f},
    {"c.table", 4, DP_NN_INIT_NORMAL, 1.0f},
};
enum { NSPECS = sizeof specs / sizeof specs[0] };

static void make(dp_nn_params *p, uint64_t seed) {
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    dp_error err;
    CHECK(dp_nn_params_init(p, specs, NSPECS, &rng, &err) == DP_STATUS_OK);
}

/* The store's layout: sizes, names found, tensors and gradients at their
 * offsets, each init kind's values; freeing twice is safe. */
static void test_params_layout(void) {
    dp_nn_params p;
    make(&p, 1);
    CHECK_INT_EQ(p.count, 14);
    CHECK_INT_EQ(dp_nn_params_find(&p, "b.slope"), 2);
    CHECK_INT_EQ(dp_nn_params_find(&p, "nope"), -1);
    CHECK(dp_nn_params_tensor(&p, 1) == p.data + 6);
    CHECK(dp_nn_params_grad(&p, 3) == p.grad + 10);
    for (int i = 0; i < 6; i++) CHECK(p.data[i] >= -0.5f && p.data[i] < 0.5f);
    CHECK(p.data[6] == 0.0f && p.data[9] == 0.25f);
    dp_nn_params_free(&p);
    dp_nn_params_free(&p); /* twice is safe */
}

/* The same seed gives the same init; another seed other random tensors
 * (uniform a.weight, normal c.table), so the equality is not that of an
 * init that ignores its generator; zero and const tensors draw nothing. */
static void test_params_seeded_init(void) {
    dp_nn_params p, q, o;
    make(&p, 1);
    make(&q, 1);
    CHECK(memcmp(p.data, q.data, sizeof(float) * p.count) == 0); /* same seed, same init */
    make(&o, 2);
    CHECK(memcmp(p.data, o.data, sizeof(float) * 6) != 0);
    CHECK(memcmp(p.data + 10, o.data + 10, sizeof(float) * 4) != 0);
    CHECK(memcmp(p.data + 6, o.data + 6, sizeof(float) * 4) == 0); /* zero and const: no draw */
    dp_nn_params_free(&o);
    dp_nn_params_free(&p);
    dp_nn_params_free(&q);
}

/* Two tensors of one name are refused. */
static void test_params_duplicate_name_refused(void) {
    dp_nn_params p;
    dp_nn_tensor_spec dup[2] = {{"x", 1, DP_NN_INIT_ZERO, 0}, {"x", 2, DP_NN_INIT_ZERO, 0}};
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    dp_error err;
    CHECK(dp_nn_params_init(&p, dup, 2, &rng, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "duplicate");
}

/* Adam, lr 0.1, defaults, w0 = 1, gradients 0.5 then -0.25. By hand:
 * step 1: m = 0.05, v = 2.5e-4, m^ = 0.5, v^ = 0.25, w = 1 - 0.1 * 0.5/0.5 = 0.9;
 * step 2: m = 0.045 - 0.025 = 0.02, v = 2.4975e-4 + 6.25e-5 = 3.1225e-4,
 *         m^ = 0.02 / 0.19 = 0.1052632, v^ = 3.1225e-4 / 0.001999 = 0.1562031,
 *         w = 0.9 - 0.1 * 0.1052632 / 0.3952254 = 0.8733663.
 * A zero gradient leaves its weight unchanged at step 1. */
static void test_adam_by_hand(void) {
    dp_nn_tensor_spec s[1] = {{"w", 2, DP_NN_INIT_CONST, 1.0f}};
    dp_nn_params p;
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    CHECK(dp_nn_params_init(&p, s, 1, &rng, NULL) == DP_STATUS_OK);
    dp_nn_adam cfg = dp_nn_adam_default();
    p.grad[0] = 0.5f, p.grad[1] = 0.0f;
    dp_nn_adam_update(&p, &cfg, 0.1f);
    CHECK_NEAR(p.data[0], 0.9, 1e-7);
    CHECK_NEAR(p.data[1], 1.0, 0.0);
    CHECK_NEAR(p.m[0], 0.05, 5e-8);
    CHECK_NEAR(p.v[0], 2.5e-4, 1e-10);
    p.grad[0] = -0.25f;
    dp_nn_adam_update(&p, &cfg, 0.1f);
    CHECK_INT_EQ(p.step, 2);
    CHECK_NEAR(p.m[0], 0.02, 5e-8);
    CHECK_NEAR(p.v[0], 3.1225e-4, 1e-10);
    CHECK_NEAR(p.data[0], 0.8733663, 2e-7);
    printf("  adam step 2: w = %.7f (hand: 0.8733663)\n", p.data[0]);
    dp_nn_params_free(&p);
}

/* Weight decay adds wd * w to the gradient. */
static void test_adam_weight_decay(void) {
    dp_nn_tensor_spec s[1] = {{"w", 2, DP_NN_INIT_CONST, 1.0f}};
    dp_nn_params p;
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    dp_nn_adam cfg = dp_nn_adam_default();
    CHECK(dp_nn_params_init(&p, s, 1, &rng, NULL) == DP_STATUS_OK);
    cfg.weight_decay = 0.5f;
    p.grad[0] = -0.5f, p.grad[1] = 0.0f; /* effective gradients 0 and 0.5 */
    dp_nn_adam_update(&p, &cfg, 0.1f);
    CHECK_NEAR(p.data[0], 1.0, 0.0);
    CHECK_NEAR(p.data[1], 0.9, 1e-7);
    dp_nn_params_free(&p);
}

/* The store of the split tests: "enc" (2 of 1.0) and "placer" (1 of 1.0),
 * gradients 0.5. */
static void split_params(dp_nn_params *p) {
    dp_nn_tensor_spec s[2] = {{"enc", 2, DP_NN_INIT_CONST, 1.0f}, {"placer", 1, DP_NN_INIT_CONST, 1.0f}};
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    CHECK(dp_nn_params_init(p, s, 2, &rng, NULL) == DP_STATUS_OK);
    for (int i = 0; i < 3; i++) p->grad[i] = 0.5f;
}

/* Two learning rates in one step: the tensors before `first` move at
 * lr_head, the rest at lr_tail (by hand, step 1 moves each weight by
 * lr * sign(g)); both moments and the step count advance for all. */
static void test_adam_split(void) {
    dp_nn_params p;
    split_params(&p);
    dp_nn_adam cfg = dp_nn_adam_default();
    dp_nn_adam_update_split(&p, &cfg, 1, 0.1f, 0.001f);
    CHECK_NEAR(p.data[0], 0.9, 1e-7);
    CHECK_NEAR(p.data[1], 0.9, 1e-7);
    CHECK_NEAR(p.data[2], 0.999, 1e-7);
    CHECK_INT_EQ(p.step, 1);
    CHECK_NEAR(p.m[2], 0.05, 5e-8);
    dp_nn_params_free(&p);
}

/* Equal rates, or every tensor before `first`, give exactly
 * dp_nn_adam_update. */
static void test_adam_split_equal_rates(void) {
    dp_nn_params q, r;
    split_params(&q);
    split_params(&r);
    dp_nn_adam cfg = dp_nn_adam_default();
    dp_nn_adam_update_split(&q, &cfg, 1, 0.01f, 0.01f);
    dp_nn_adam_update_split(&q, &cfg, 2, 0.01f, 0.5f); /* first = ntensors: all at lr_head */
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 3; i++) r.grad[i] = 0.5f;
        dp_nn_adam_update(&r, &cfg, 0.01f);
    }
    for (int i = 0; i < 3; i++) CHECK_NEAR(q.data[i], r.data[i], 0.0);
    dp_nn_params_free(&q), dp_nn_params_free(&r);
}

/* The gradient norm; clipping scales the gradients to the limit only when
 * they are over it; zeroing clears them. */
static void test_grad_clip(void) {
    dp_nn_tensor_spec s[2] = {{"a", 1, DP_NN_INIT_ZERO, 0}, {"b", 1, DP_NN_INIT_ZERO, 0}};
    dp_nn_params p;
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    CHECK(dp_nn_params_init(&p, s, 2, &rng, NULL) == DP_STATUS_OK);
    p.grad[0] = 3.0f, p.grad[1] = 4.0f;
    CHECK_NEAR(dp_nn_grad_norm(&p), 5.0, 1e-12);
    CHECK_NEAR(dp_nn_grad_clip(&p, 10.0), 5.0, 1e-12);
    CHECK(p.grad[0] == 3.0f && p.grad[1] == 4.0f); /* below the limit: untouched */
    CHECK_NEAR(dp_nn_grad_clip(&p, 1.0), 5.0, 1e-12);
    CHECK_NEAR(p.grad[0], 0.6, 1e-6);
    CHECK_NEAR(p.grad[1], 0.8, 1e-6);
    dp_nn_params_zero_grad(&p);
    CHECK(p.grad[0] == 0.0f && p.grad[1] == 0.0f);
    dp_nn_params_free(&p);
}

/* Learning-rate schedules: constant, and halved every 10 steps. */
static void test_lr_schedules(void) {
    dp_nn_lr_schedule c = {DP_NN_LR_KIND_CONSTANT, 0.1f, 0, 0.0f};
    CHECK_NEAR(dp_nn_lr_at(&c, 0), 0.1, 1e-7);
    CHECK_NEAR(dp_nn_lr_at(&c, 12345), 0.1, 1e-7);
    dp_nn_lr_schedule d = {DP_NN_LR_KIND_STEP_DECAY, 0.1f, 10, 0.5f};
    CHECK_NEAR(dp_nn_lr_at(&d, 0), 0.1, 1e-7);
    CHECK_NEAR(dp_nn_lr_at(&d, 9), 0.1, 1e-7);
    CHECK_NEAR(dp_nn_lr_at(&d, 10), 0.05, 1e-7);
    CHECK_NEAR(dp_nn_lr_at(&d, 25), 0.025, 1e-7);
}

static char tmpdir[64];

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", tmpdir, name); }

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* copies the first n bytes of src to dst, then xors byte flip_at (if >= 0) */
static void copy_prefix(const char *src, const char *dst, long n, long flip_at, unsigned char x) {
    FILE *f = fopen(src, "rb");
    CHECK(f != NULL);
    unsigned char *buf = malloc((size_t)n + 1);
    CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    if (flip_at >= 0) buf[flip_at] ^= x;
    f = fopen(dst, "wb");
    CHECK(fwrite(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    free(buf);
}

/* A checkpoint of specs after two Adam steps (seed 5) in a temporary
 * folder: tmpdir/model.ckpt; bad is tmpdir/bad.ckpt. */
static void saved_checkpoint(dp_nn_params *p, char *path, char *bad) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dp_nn_ckpt_XXXXXX");
    CHECK(mkdtemp(tmpdir) != NULL);
    path_in(path, 128, "model.ckpt");
    path_in(bad, 128, "bad.ckpt");
    make(p, 5);
    for (size_t i = 0; i < p->count; i++) p->grad[i] = 0.01f * (float)i;
    dp_nn_adam cfg = dp_nn_adam_default();
    dp_nn_adam_update(p, &cfg, 0.01f);
    dp_nn_adam_update(p, &cfg, 0.01f);
    dp_error err;
    CHECK(dp_nn_checkpoint_save(p, path, &err) == DP_STATUS_OK);
}

/* Removes the checkpoint folder and what is in it. */
static void remove_checkpoints(const char *path, const char *bad) {
    remove(bad);
    remove(path);
    rmdir(tmpdir);
}

/* A checkpoint saved (twice: overwritten in place) loads into another
 * store: weights, both moments and the step; no temporary file is left. */
static void test_checkpoint_round_trip(void) {
    char path[128], bad[128];
    dp_nn_params p, q;
    saved_checkpoint(&p, path, bad);
    make(&q, 6);
    dp_error err;
    CHECK(dp_nn_checkpoint_save(&p, path, &err) == DP_STATUS_OK); /* overwrite in place */
    CHECK(dp_nn_checkpoint_load(&q, path, &err) == DP_STATUS_OK);
    CHECK(memcmp(p.data, q.data, sizeof(float) * p.count) == 0);
    CHECK(memcmp(p.m, q.m, sizeof(float) * p.count) == 0);
    CHECK(memcmp(p.v, q.v, sizeof(float) * p.count) == 0);
    CHECK_INT_EQ(q.step, 2);
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CHECK(access(tmp, F_OK) != 0); /* the temporary file was renamed away */
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&q);
}

/* A checkpoint truncated at the header, the table, the body or the
 * checksum is refused, the store unchanged. */
static void test_checkpoint_truncated_refused(void) {
    char path[128], bad[128];
    dp_nn_params p, r;
    saved_checkpoint(&p, path, bad);
    long n = file_size(path);
    make(&r, 7);
    float keep0 = r.data[0];
    dp_error err;
    long cuts[] = {4, 20, 40, n / 2, n - 1};
    for (int k = 0; k < 5; k++) {
        TEST_CASE("cut at %ld of %ld bytes", cuts[k], n);
        copy_prefix(path, bad, cuts[k], -1, 0);
        dp_status st = dp_nn_checkpoint_load(&r, bad, &err);
        if (cuts[k] < 8) {
            CHECK(st == DP_STATUS_PARSE); /* too short even for the magic */
        } else {
            CHECK(st == DP_STATUS_IO);
            CHECK_STR_CONTAINS(err.msg, "truncated");
        }
        CHECK(r.data[0] == keep0); /* unchanged on error */
    }
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&r);
}

/* A file that is no checkpoint is refused as such. */
static void test_checkpoint_foreign_file_refused(void) {
    char path[128], bad[128];
    dp_nn_params p, r;
    saved_checkpoint(&p, path, bad);
    make(&r, 7);
    dp_error err;
    FILE *f = fopen(bad, "wb");
    fputs("{\"not\": \"a checkpoint\"}\n", f);
    fclose(f);
    CHECK(dp_nn_checkpoint_load(&r, bad, &err) == DP_STATUS_PARSE);
    CHECK_STR_CONTAINS(err.msg, "not a dplace nn checkpoint");
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&r);
}

/* A checkpoint of another version is refused, naming the version. */
static void test_checkpoint_other_version_refused(void) {
    char path[128], bad[128];
    dp_nn_params p, r;
    saved_checkpoint(&p, path, bad);
    make(&r, 7);
    dp_error err;
    copy_prefix(path, bad, file_size(path), 8, 0x7f); /* byte 8 is the low byte of the version */
    CHECK(dp_nn_checkpoint_load(&r, bad, &err) == DP_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "version");
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&r);
}

/* A corrupt body byte is refused by the checksum, the store unchanged. */
static void test_checkpoint_corrupt_byte_refused(void) {
    char path[128], bad[128];
    dp_nn_params p, r;
    saved_checkpoint(&p, path, bad);
    long n = file_size(path);
    make(&r, 7);
    float keep0 = r.data[0];
    dp_error err;
    copy_prefix(path, bad, n, n - 20, 0x01);
    CHECK(dp_nn_checkpoint_load(&r, bad, &err) == DP_STATUS_PARSE);
    CHECK_STR_CONTAINS(err.msg, "checksum");
    CHECK(r.data[0] == keep0);
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&r);
}

/* A checkpoint of a model with other tensors is refused, naming the
 * tensor. */
static void test_checkpoint_other_model_refused(void) {
    char path[128], bad[128];
    dp_nn_params p;
    saved_checkpoint(&p, path, bad);
    dp_nn_tensor_spec other[NSPECS];
    memcpy(other, specs, sizeof other);
    other[1].name = "a.offset";
    dp_nn_params o;
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    CHECK(dp_nn_params_init(&o, other, NSPECS, &rng, NULL) == DP_STATUS_OK);
    dp_error err;
    CHECK(dp_nn_checkpoint_load(&o, path, &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "a.offset");
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&o);
}

/* A missing file and an unwritable directory are I/O errors. */
static void test_checkpoint_missing_file_and_directory(void) {
    char path[128], bad[128];
    dp_nn_params p, r;
    saved_checkpoint(&p, path, bad);
    make(&r, 7);
    dp_error err;
    char missing[128];
    path_in(missing, sizeof missing, "missing.ckpt");
    CHECK(dp_nn_checkpoint_load(&r, missing, &err) == DP_STATUS_IO);
    CHECK(dp_nn_checkpoint_save(&p, "/nonexistent-dir/x.ckpt", &err) == DP_STATUS_IO);
    printf("  checkpoint of %zu floats: %ld bytes; error cases: %s\n", p.count, file_size(path), err.msg);
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&r);
}

/* CRC-32 (the checkpoint's polynomial) to forge checkpoints that pass the checksum. */
static uint32_t crc32_of(const unsigned char *b, size_t n) {
    uint32_t c = ~0u;
    for (size_t i = 0; i < n; i++) {
        c ^= b[i];
        for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}

/* Copies src to dst with `len` bytes at `at` replaced by `bytes`, checksum recomputed. */
static void forge(const char *src, const char *dst, long at, const void *bytes, size_t len) {
    FILE *f = fopen(src, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n);
    CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    memcpy(buf + at, bytes, len);
    uint32_t crc = crc32_of(buf, (size_t)n - 4);
    memcpy(buf + n - 4, &crc, 4);
    f = fopen(dst, "wb");
    CHECK(fwrite(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    free(buf);
}

/* A checkpoint after one Adam step (seed 5) in a temporary folder. */
static void saved_step_checkpoint(dp_nn_params *p, char *path, char *bad) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dp_nn_step_XXXXXX");
    CHECK(mkdtemp(tmpdir) != NULL);
    path_in(path, 128, "model.ckpt");
    path_in(bad, 128, "bad.ckpt");
    make(p, 5);
    for (size_t i = 0; i < p->count; i++) p->grad[i] = 0.01f * (float)i;
    dp_nn_adam cfg = dp_nn_adam_default();
    dp_nn_adam_update(p, &cfg, 0.01f);
    dp_error err;
    CHECK(dp_nn_checkpoint_save(p, path, &err) == DP_STATUS_OK);
}

/* A malformed file: a checkpoint with a valid checksum but an absurd Adam
 * step is refused, naming the file, the store unchanged. */
static void test_checkpoint_absurd_step_refused(void) {
    char path[128], bad[128];
    dp_nn_params p, r;
    saved_step_checkpoint(&p, path, bad);
    make(&r, 7);
    dp_error err;
    int64_t steps[] = {INT64_MAX, -1, INT64_MIN, DP_NN_MAX_STEP + 1};
    float keep0 = r.data[0];
    for (int k = 0; k < 4; k++) {
        TEST_CASE("step %lld", (long long)steps[k]);
        forge(path, bad, 16, &steps[k], 8); /* the step follows magic, version, ntensors */
        CHECK_INT_EQ(dp_nn_checkpoint_load(&r, bad, &err), DP_STATUS_PARSE);
        CHECK_STR_CONTAINS(err.msg, "impossible Adam step");
        CHECK_STR_CONTAINS(err.msg, bad);
        CHECK(r.data[0] == keep0);
    }
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&r);
}

/* The largest step a checkpoint may hold loads. */
static void test_checkpoint_largest_step_loads(void) {
    char path[128], bad[128];
    dp_nn_params p, r;
    saved_step_checkpoint(&p, path, bad);
    make(&r, 7);
    dp_error err;
    int64_t most = DP_NN_MAX_STEP;
    forge(path, bad, 16, &most, 8);
    CHECK_INT_EQ(dp_nn_checkpoint_load(&r, bad, &err), DP_STATUS_OK);
    CHECK_INT_EQ(r.step, DP_NN_MAX_STEP);
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&r);
}

/* A NaN weight, an infinite first moment and a negative second moment are
 * refused, naming the value. */
static void test_checkpoint_bad_values_refused(void) {
    char path[128], bad[128];
    dp_nn_params p, r;
    saved_step_checkpoint(&p, path, bad);
    make(&r, 7);
    dp_error err;
    long body = file_size(path) - 4 - (long)(3 * sizeof(float) * p.count);
    float nan_ = NAN, inf_ = INFINITY, neg = -1.0f;
    TEST_CASE("NaN weight");
    forge(path, bad, body, &nan_, 4);
    CHECK_INT_EQ(dp_nn_checkpoint_load(&r, bad, &err), DP_STATUS_PARSE);
    CHECK_STR_CONTAINS(err.msg, "value 0");
    TEST_CASE("infinite first moment");
    forge(path, bad, body + (long)(sizeof(float) * p.count), &inf_, 4);
    CHECK_INT_EQ(dp_nn_checkpoint_load(&r, bad, &err), DP_STATUS_PARSE);
    CHECK_STR_CONTAINS(err.msg, "Adam m 0");
    TEST_CASE("negative second moment");
    forge(path, bad, body + (long)(2 * sizeof(float) * p.count), &neg, 4);
    CHECK_INT_EQ(dp_nn_checkpoint_load(&r, bad, &err), DP_STATUS_PARSE);
    CHECK_STR_CONTAINS(err.msg, "Adam v 0");
    printf("  refused: %s\n", err.msg);
    remove_checkpoints(path, bad);
    dp_nn_params_free(&p);
    dp_nn_params_free(&r);
}

/* dp_nn_adam_update saturates the step: no overflow at the top, no NaN
 * from a negative step. */
static void test_adam_step_saturates(void) {
    dp_nn_params p;
    make(&p, 5);
    for (size_t i = 0; i < p.count; i++) p.grad[i] = 0.01f * (float)i;
    dp_nn_adam cfg = dp_nn_adam_default();
    dp_nn_adam_update(&p, &cfg, 0.01f);
    int64_t starts[] = {INT64_MAX, DP_NN_MAX_STEP, -1, INT64_MIN};
    int64_t after[] = {DP_NN_MAX_STEP, DP_NN_MAX_STEP, 1, 1};
    for (int k = 0; k < 4; k++) {
        TEST_CASE("from step %lld", (long long)starts[k]);
        p.step = starts[k];
        dp_nn_adam_update(&p, &cfg, 0.01f);
        CHECK_INT_EQ(p.step, after[k]);
        for (size_t i = 0; i < p.count; i++) CHECK(isfinite(p.data[i]));
    }
    dp_nn_params_free(&p);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_params_layout);
    TEST_RUN(test_params_seeded_init);
    TEST_RUN(test_params_duplicate_name_refused);
    TEST_RUN(test_adam_by_hand);
    TEST_RUN(test_adam_weight_decay);
    TEST_RUN(test_adam_split);
    TEST_RUN(test_adam_split_equal_rates);
    TEST_RUN(test_grad_clip);
    TEST_RUN(test_lr_schedules);
    TEST_RUN(test_checkpoint_round_trip);
    TEST_RUN(test_checkpoint_truncated_refused);
    TEST_RUN(test_checkpoint_foreign_file_refused);
    TEST_RUN(test_checkpoint_other_version_refused);
    TEST_RUN(test_checkpoint_corrupt_byte_refused);
    TEST_RUN(test_checkpoint_other_model_refused);
    TEST_RUN(test_checkpoint_missing_file_and_directory);
    TEST_RUN(test_checkpoint_absurd_step_refused);
    TEST_RUN(test_checkpoint_largest_step_loads);
    TEST_RUN(test_checkpoint_bad_values_refused);
    TEST_RUN(test_adam_step_saturates);
    return test_end();
}
