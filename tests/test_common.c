/* Common helpers: seeded RNG, error records, interning, atomic files. */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/util.h"
#include "dplace/common.h"
#include "test_util.h"

/* Expected outputs, stored as constants so that any change of the generator
 * (algorithm, seeding, conversions) fails here. Computed by an independent
 * transcription of xoshiro256** and splitmix64 (Python integers), not by
 * dp_rng; the state {1, 2, 3, 4} vector is the reference implementation's
 * (Vigna's xoshiro256starstar.c, as rand_xoshiro's test_reference uses). */
static const uint64_t ref_state_1234[10] = {
    11520ULL, 0ULL, 1509978240ULL, 1215971899390074240ULL, 1216172134540287360ULL,
    607988272756665600ULL, 16172922978634559625ULL, 8476171486693032832ULL,
    10595114339597558777ULL, 2904607092377533576ULL};
/* dp_rng_seed(0) and dp_rng_seed(42): splitmix64 fills the state */
static const uint64_t ref_seed0[4] = {0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL,
                                      0x1a5f849d4933e6e0ULL, 0x6aa594f1262d2d2cULL};
static const uint64_t ref_seed42[4] = {0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL,
                                       0xae17533239e499a1ULL, 0xecb8ad4703b360a1ULL};
/* each from a fresh dp_rng_seed(42) */
static const double ref_uniform42[4] = {0.08386297105988216, 0.3789802506626686,
                                        0.6800434110281394, 0.9246929453253876};
static const uint64_t ref_below7_42[8] = {2, 1, 5, 4, 4, 1, 2, 0};
static const double ref_normal42[4] = {-1.6132237513849161, 0.7816920450573489,
                                       0.015871293375984964, 0.4772168184355814};

static void check_u64(uint64_t got, uint64_t want, const char *what, int i) {
    if (got != want) {
        fprintf(stderr, "%s[%d]: got 0x%016" PRIx64 ", want 0x%016" PRIx64 "\n", what, i, got, want);
        exit(1);
    }
}

/* The generator's first outputs equal the stored ones. */
static void test_rng_expected(void) {
    dp_rng a;
    a.s[0] = 1, a.s[1] = 2, a.s[2] = 3, a.s[3] = 4;
    for (int i = 0; i < 10; i++) check_u64(dp_rng_next_u64(&a), ref_state_1234[i], "state {1,2,3,4}", i);
    dp_rng_seed(&a, 0);
    for (int i = 0; i < 4; i++) check_u64(dp_rng_next_u64(&a), ref_seed0[i], "seed 0", i);
    dp_rng_seed(&a, 42);
    for (int i = 0; i < 4; i++) check_u64(dp_rng_next_u64(&a), ref_seed42[i], "seed 42", i);
    /* uniform is exact: (x >> 11) * 2^-53 */
    dp_rng_seed(&a, 42);
    for (int i = 0; i < 4; i++) {
        double u = dp_rng_uniform(&a);
        if (u != ref_uniform42[i]) {
            fprintf(stderr, "uniform[%d]: got %.17g, want %.17g\n", i, u, ref_uniform42[i]);
            exit(1);
        }
    }
    dp_rng_seed(&a, 42);
    for (int i = 0; i < 8; i++) CHECK_INT_EQ(dp_rng_below(&a, 7), ref_below7_42[i]);
    /* normal goes through log, sqrt and cos: equal to libm's last bits */
    dp_rng_seed(&a, 42);
    for (int i = 0; i < 4; i++) CHECK_NEAR(dp_rng_normal(&a), ref_normal42[i], 1e-13);
}

/* Same seed, same sequence; other seed, other sequence. */
static void test_rng_same_seed_same_sequence(void) {
    dp_rng a, b;
    dp_rng_seed(&a, 123);
    dp_rng_seed(&b, 123);
    for (int i = 0; i < 1000; i++) CHECK(dp_rng_next_u64(&a) == dp_rng_next_u64(&b));
    dp_rng_seed(&b, 124);
    CHECK(dp_rng_next_u64(&a) != dp_rng_next_u64(&b));
}

/* Uniform, below and normal draws have the right range and moments. */
static void test_rng_moments(void) {
    dp_rng a;
    dp_rng_seed(&a, 0);
    double sum = 0, sq = 0;
    int counts[7] = {0};
    for (int i = 0; i < 70000; i++) {
        double u = dp_rng_uniform(&a);
        CHECK(u >= 0 && u < 1);
        counts[dp_rng_below(&a, 7)]++;
        double z = dp_rng_normal(&a);
        sum += z;
        sq += z * z;
    }
    for (int k = 0; k < 7; k++) CHECK(counts[k] > 9000 && counts[k] < 11000);
    CHECK_NEAR(sum / 70000, 0.0, 0.02);
    CHECK_NEAR(sq / 70000, 1.0, 0.03);
}

/* An error record keeps its status, a prefix goes before the message, and
 * the statuses have names. */
static void test_error_prefix(void) {
    dp_error e;
    dp_error_clear(&e);
    CHECK_INT_EQ(dp_error_set(&e, DP_STATUS_PARSE, "op %d bad", 3), DP_STATUS_PARSE);
    dp_error_prefix(&e, "file.json");
    CHECK(strcmp(e.msg, "file.json: op 3 bad") == 0);
    CHECK(strcmp(dp_status_name(DP_STATUS_NOMEM), "nomem") == 0);
}

/* A very long prefix, or a message whose escapes outgrow the record, is
 * cut to fit the record, never overflows it. */
static void test_error_long_message_truncated(void) {
    dp_error e;
    dp_error_clear(&e);
    dp_error_set(&e, DP_STATUS_PARSE, "op %d bad", 3);
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    dp_error_prefix(&e, big);
    CHECK(strlen(e.msg) < sizeof e.msg);
    /* a message full of control bytes still ends inside the record */
    memset(big, '\001', sizeof big - 1);
    dp_error_set(&e, DP_STATUS_PARSE, "%s", big);
    CHECK(strlen(e.msg) < sizeof e.msg);
    CHECK_STR_CONTAINS(e.msg, "\\x01\\x01");
}

/* Control characters from the input, in the message or the prefix, are
 * escaped. */
static void test_error_control_characters_escaped(void) {
    dp_error e;
    dp_error_set(&e, DP_STATUS_PARSE, "x.json:1:2: JSON syntax error: near '%s'", "\033[31m\n\t\177");
    CHECK_STR_CONTAINS(e.msg, "near '\\x1b[31m\\x0a\\x09\\x7f'");
    dp_error_prefix(&e, "we\rird");
    CHECK_STR_CONTAINS(e.msg, "we\\x0dird: x.json");
    for (const char *p = e.msg; *p; p++) CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
}

/* A failed system call's error keeps its errno beside the message, which
 * ends with the system's words for it; a later dp_error_set forgets it. */
static void test_error_os_errno(void) {
    dp_error e;
    dp_error_clear(&e);
    CHECK_INT_EQ(e.os_errno, 0);
    CHECK_INT_EQ(dp_error_set_os(&e, ENOENT, "%s: cannot open", "x.json"), DP_STATUS_IO);
    CHECK_INT_EQ(e.status, DP_STATUS_IO);
    CHECK_INT_EQ(e.os_errno, ENOENT);
    char want[256];
    snprintf(want, sizeof want, "x.json: cannot open: %s", strerror(ENOENT));
    CHECK(strcmp(e.msg, want) == 0);
    dp_error_prefix(&e, "graph");
    CHECK_INT_EQ(e.os_errno, ENOENT);
    dp_error_set(&e, DP_STATUS_PARSE, "x.json: bad");
    CHECK_INT_EQ(e.os_errno, 0);
}

/* Reading a file that does not exist fails with DP_STATUS_IO and ENOENT. */
static void test_read_missing_file_errno(void) {
    dp_error e;
    dp_error_clear(&e);
    char *buf = NULL;
    size_t len = 0;
    CHECK_INT_EQ(dp_read_file("/nonexistent-dplace-dir/x.json", 1024, &buf, &len, &e), DP_STATUS_IO);
    CHECK_INT_EQ(e.os_errno, ENOENT);
    CHECK_STR_CONTAINS(e.msg, "/nonexistent-dplace-dir/x.json: cannot open");
    CHECK(buf == NULL);
}

/* Interned strings get dense ids in order, found again by name. */
static void test_strtab(void) {
    dp_strtab *t = dp_strtab_init();
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "s%d", i);
        CHECK_INT_EQ(dp_strtab_intern(t, buf), i);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "s%d", i);
        CHECK_INT_EQ(dp_strtab_find(t, buf), i);
        CHECK_INT_EQ(dp_strtab_intern(t, buf), i);
    }
    CHECK_INT_EQ(dp_strtab_find(t, "nope"), -1);
    dp_strtab_free(t);
}

/* 1000 int32 (past the writer's first 4096 bytes) and a double, put into w. */
static void put_values(dp_bytes_writer *w) {
    int32_t a = -7;
    double x = 2.5;
    for (int i = 0; i < 1000; i++) DP_BYTES_PUT(w, a); /* grows past the first 4096 bytes */
    DP_BYTES_PUT(w, x);
}

/* Reads back what put_values wrote, checking each value. */
static void get_values(dp_bytes_reader *r) {
    int32_t b = 0;
    for (int i = 0; i < 1000; i++) {
        DP_BYTES_GET(r, b);
        CHECK_INT_EQ(b, -7);
    }
    double y = 0;
    DP_BYTES_GET(r, y);
    CHECK_NEAR(y, 2.5, 0.0);
}

/* The checkpoints' byte codec: values put are got back in order. */
static void test_bytes_round_trip(void) {
    dp_bytes_writer w = {0};
    put_values(&w);
    CHECK(!w.oom);
    CHECK_INT_EQ((long long)w.n, 4008);
    dp_bytes_reader r = {w.p, w.n, 0, 0};
    get_values(&r);
    CHECK(!r.short_read);
    free(w.p);
}

/* A read past the end zeroes its value and sticks. */
static void test_bytes_short_read(void) {
    dp_bytes_writer w = {0};
    put_values(&w);
    dp_bytes_reader r = {w.p, w.n, 0, 0};
    get_values(&r);
    double y = 1;
    DP_BYTES_GET(&r, y);
    CHECK(r.short_read);
    CHECK_NEAR(y, 0.0, 0.0);
    free(w.p);
}

/* FNV-1a matches its published vectors. */
static void test_fnv1a_vectors(void) {
    CHECK(dp_fnv1a((const unsigned char *)"", 0) == 0xcbf29ce484222325ULL);
    CHECK(dp_fnv1a((const unsigned char *)"a", 1) == 0xaf63dc4c8601ec8cULL);
}

/* /tmp/dplace_atomic_PID, removed. */
static const char *atomic_path(void) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_atomic_%d", (int)getpid());
    remove(path);
    return path;
}

/* An atomic file is visible only after its commit, with the whole text. */
static void test_atomic_commit(void) {
    const char *path = atomic_path();
    dp_atomic_file af;
    dp_error err;
    CHECK_INT_EQ(dp_atomic_open(&af, path, &err), DP_STATUS_OK);
    fputs("whole", af.f);
    CHECK(access(path, F_OK) != 0); /* nothing visible before commit */
    CHECK_INT_EQ(dp_atomic_commit(&af, &err), DP_STATUS_OK);
    FILE *f = fopen(path, "r");
    CHECK(f);
    char got[16] = {0};
    CHECK(fgets(got, sizeof got, f));
    fclose(f);
    CHECK(strcmp(got, "whole") == 0);
    remove(path);
}

/* An aborted atomic file leaves nothing behind. */
static void test_atomic_abort(void) {
    const char *path = atomic_path();
    dp_atomic_file af;
    dp_error err;
    CHECK_INT_EQ(dp_atomic_open(&af, path, &err), DP_STATUS_OK);
    fputs("half", af.f);
    CHECK(access(path, F_OK) != 0); /* nothing visible before commit */
    dp_atomic_abort(&af);
    CHECK(access(path, F_OK) != 0);
}

/* Opening in a missing directory is an I/O error naming the path. */
static void test_atomic_missing_directory(void) {
    dp_atomic_file af;
    dp_error err;
    CHECK_INT_EQ(dp_atomic_open(&af, "/nonexistent-dir/x.json", &err), DP_STATUS_IO);
    CHECK_STR_CONTAINS(err.msg, "/nonexistent-dir/x.json: cannot write");
}

/* dp_write_file: the bytes read back as written, over an older file; in a
 * missing directory an I/O error naming the path. */
static void test_write_file(void) {
    const char *path = atomic_path();
    dp_error err;
    CHECK_INT_EQ(dp_write_file(path, "old contents", 12, "the test file", &err), DP_STATUS_OK);
    CHECK_INT_EQ(dp_write_file(path, "new\0bytes", 9, "the test file", &err), DP_STATUS_OK);
    char *buf;
    size_t n;
    CHECK_INT_EQ(dp_read_file(path, 1 << 20, &buf, &n, &err), DP_STATUS_OK);
    CHECK(n == 9 && !memcmp(buf, "new\0bytes", 9));
    free(buf);
    unlink(path);
    CHECK_INT_EQ(dp_write_file("/nonexistent-dir/x.bin", "x", 1, "the test file", &err), DP_STATUS_IO);
    CHECK_STR_CONTAINS(err.msg, "/nonexistent-dir/x.bin: cannot write");
}

/* A killed writer's PATH.tmp.PID is removed by the next
 * dp_atomic_open of PATH; a live process's temporary file is left alone. */
static void test_atomic_stale(void) {
    char path[64], dead_tmp[96], live_tmp[96], other_tmp[96];
    snprintf(path, sizeof path, "/tmp/dplace_stale_%d.json", (int)getpid());
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) _exit(0);
    int wst;
    CHECK(waitpid(child, &wst, 0) == child); /* reaped: its pid names no process */
    snprintf(dead_tmp, sizeof dead_tmp, "%s.tmp.%ld", path, (long)child);
    snprintf(live_tmp, sizeof live_tmp, "%s.tmp.%ld", path, (long)getppid());
    snprintf(other_tmp, sizeof other_tmp, "%s.tmp.12x", path); /* not a pid: not ours */
    const char *files[3] = {dead_tmp, live_tmp, other_tmp};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(files[i], "w");
        CHECK(f);
        fputs("partial", f);
        fclose(f);
    }
    dp_atomic_file af;
    dp_error err;
    CHECK_INT_EQ(dp_atomic_open(&af, path, &err), DP_STATUS_OK);
    fputs("whole", af.f);
    CHECK_INT_EQ(dp_atomic_commit(&af, &err), DP_STATUS_OK);
    CHECK(access(dead_tmp, F_OK) != 0);
    CHECK(access(live_tmp, F_OK) == 0);
    CHECK(access(other_tmp, F_OK) == 0);
    CHECK_INT_EQ(dp_atomic_sweep(path), 0);
    remove(live_tmp);
    remove(other_tmp);
    remove(path);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_rng_expected);
    TEST_RUN(test_rng_same_seed_same_sequence);
    TEST_RUN(test_rng_moments);
    TEST_RUN(test_error_prefix);
    TEST_RUN(test_error_long_message_truncated);
    TEST_RUN(test_error_control_characters_escaped);
    TEST_RUN(test_error_os_errno);
    TEST_RUN(test_read_missing_file_errno);
    TEST_RUN(test_strtab);
    TEST_RUN(test_bytes_round_trip);
    TEST_RUN(test_bytes_short_read);
    TEST_RUN(test_fnv1a_vectors);
    TEST_RUN(test_atomic_commit);
    TEST_RUN(test_atomic_abort);
    TEST_RUN(test_atomic_missing_directory);
    TEST_RUN(test_atomic_stale);
    TEST_RUN(test_write_file);
    return test_end();
}
