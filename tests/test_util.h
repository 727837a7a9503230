/* Minimal assertion helpers for dplace tests: every check prints both values,
 * the location and the case being checked (TEST_CASE), and the first failure
 * ends the test with exit status 1. */
#ifndef DPLACE_TEST_UTIL_H
#define DPLACE_TEST_UTIL_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The case a test function is checking now ("preset hp, 2 threads"),
 * printed with a failing check so that it names the case, not only a line;
 * cleared before each test function. */
static char test_case_[256];
#define TEST_CASE(...) snprintf(test_case_, sizeof test_case_, __VA_ARGS__)
/* "file:line: [case] " before a failure's message */
#define TEST_WHERE_() fprintf(stderr, "%s:%d: %s%s%s", __FILE__, __LINE__, *test_case_ ? "[" : "", test_case_, \
                              *test_case_ ? "] " : "")

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            TEST_WHERE_();                                                       \
            fprintf(stderr, "CHECK(%s) failed\n", #cond);                        \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define CHECK_INT_EQ(a, b)                                                       \
    do {                                                                         \
        long long va_ = (long long)(a), vb_ = (long long)(b);                    \
        if (va_ != vb_) {                                                        \
            TEST_WHERE_();                                                       \
            fprintf(stderr, "%s == %s failed: %lld != %lld\n", #a, #b, va_, vb_); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_NEAR(a, b, tol)                                                    \
    do {                                                                         \
        double va_ = (double)(a), vb_ = (double)(b);                             \
        double sc_ = fabs(vb_) > 1.0 ? fabs(vb_) : 1.0;                          \
        if (!(fabs(va_ - vb_) <= (tol) * sc_)) {                                 \
            TEST_WHERE_();                                                       \
            fprintf(stderr, "%s ~= %s failed: %.12g vs %.12g (tol %g)\n", #a, #b, \
                    va_, vb_, (double)(tol));                                    \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                          \
    do {                                                                         \
        const char *h_ = (hay), *n_ = (needle);                                  \
        if (!h_ || !strstr(h_, n_)) {                                            \
            TEST_WHERE_();                                                       \
            fprintf(stderr, "expected \"%s\" to contain \"%s\"\n", h_ ? h_ : "(null)", n_); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* ---- running the test functions -------------------------------------------
 * A test program runs every function its main names with TEST_RUN, in order,
 * or only the one its argument names (CTest runs each alone:
 * tests/CMakeLists.txt registers one test per TEST_RUN line):
 *
 *     int main(int argc, char **argv) {
 *         test_init(argc, argv);
 *         TEST_RUN(test_a);
 *         TEST_RUN_DATASETS(test_b, "msr-dnn-partitioning");
 *         return test_end();
 *     }
 *
 * TEST_RUN_DATASETS runs a function that reads ../shared/datasets/DATASET
 * (test_dataset_dir) only when that folder exists; else it says which folder
 * is missing and skips the function (test_skip): a program asked for that
 * function alone exits 77, CTest's "skipped". */
static const char *test_only_; /* the function asked for; NULL: every one */
static int test_found_, test_skipped_;

/* Reads the program's arguments: none, or the name of one test function. */
static inline void test_init(int argc, char **argv) {
    if (argc > 2) {
        fprintf(stderr, "usage: %s [TEST_FUNCTION]\n", argv[0]);
        exit(2);
    }
    test_only_ = argc == 2 ? argv[1] : NULL;
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines before a failure's message */
}

/* $DPLACE_SHARED/datasets/name (DPLACE_SHARED: the shared folder, which CTest
 * sets; else ../../shared, seen from tests/), in a static buffer that the
 * next call overwrites. */
static inline const char *test_dataset_dir(const char *name) {
    static char buf[1024];
    const char *shared = getenv("DPLACE_SHARED");
    snprintf(buf, sizeof buf, "%s/datasets/%s", shared && *shared ? shared : "../../shared", name);
    return buf;
}

/* Skips the running test function (call it, then return): prints why; a
 * program asked for that function alone exits 77. */
static inline void test_skip(const char *why) {
    printf("skip: %s\n", why);
    test_skipped_ = 1;
}

/* Keeps the calling thread busy for `seconds` of monotonic time: a test's
 * stand-in for a slow step of a run, busy so that no signal cuts it short. */
static inline void test_busy(double seconds) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec) < seconds);
}

/* Runs fn when it is the function asked for (or none is), unless dataset is
 * given and ../shared/datasets/dataset is missing. */
static inline void test_run_(const char *name, void (*fn)(void), const char *dataset) {
    if (test_only_ && strcmp(test_only_, name)) return;
    test_found_ = 1;
    test_case_[0] = 0;
    int skipped_before = test_skipped_;
    test_skipped_ = 0;
    if (dataset && access(test_dataset_dir(dataset), R_OK | X_OK) != 0) {
        char why[1200];
        snprintf(why, sizeof why, "%s: no dataset at %s (set DPLACE_SHARED to the shared folder)", name,
                 test_dataset_dir(dataset));
        test_skip(why);
    } else {
        fn();
    }
    if (!test_skipped_) printf("ok %s\n", name);
    test_skipped_ |= skipped_before;
}
#define TEST_RUN(fn) test_run_(#fn, fn, NULL)
#define TEST_RUN_DATASETS(fn, dataset) test_run_(#fn, fn, dataset)

/* main's exit status: 0; 2 when the function asked for does not exist (a
 * renamed test must not pass unseen); 77 when it was skipped. */
static inline int test_end(void) {
    if (test_only_ && !test_found_) {
        fprintf(stderr, "no test function \"%s\" in this program\n", test_only_);
        return 2;
    }
    return test_only_ && test_skipped_ ? 77 : 0;
}

#endif
