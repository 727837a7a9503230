/* Minimal assertion helpers for dplace tests: every check prints both values
 * and the location, and the first failure ends the test with exit status 1. */
#ifndef DPLACE_TEST_UTIL_H
#define DPLACE_TEST_UTIL_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define CHECK_INT_EQ(a, b)                                                       \
    do {                                                                         \
        long long va_ = (long long)(a), vb_ = (long long)(b);                    \
        if (va_ != vb_) {                                                        \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__,   \
                    __LINE__, #a, #b, va_, vb_);                                 \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_NEAR(a, b, tol)                                                    \
    do {                                                                         \
        double va_ = (double)(a), vb_ = (double)(b);                             \
        double sc_ = fabs(vb_) > 1.0 ? fabs(vb_) : 1.0;                          \
        if (!(fabs(va_ - vb_) <= (tol) * sc_)) {                                 \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %.12g vs %.12g (tol %g)\n",  \
                    __FILE__, __LINE__, #a, #b, va_, vb_, (double)(tol));        \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                          \
    do {                                                                         \
        const char *h_ = (hay), *n_ = (needle);                                  \
        if (!h_ || !strstr(h_, n_)) {                                            \
            fprintf(stderr, "%s:%d: expected \"%s\" to contain \"%s\"\n",         \
                    __FILE__, __LINE__, h_ ? h_ : "(null)", n_);                 \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define TEST_RUN(fn)                                                             \
    do {                                                                         \
        fn();                                                                    \
        printf("ok %s\n", #fn);                                                  \
    } while (0)

#endif
