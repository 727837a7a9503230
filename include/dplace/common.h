/* dplace: common types shared by every module: status codes, the error
 * record every library call fills, and the seeded random generator. */
#ifndef DPLACE_COMMON_H
#define DPLACE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes returned by library functions. Library code never exits. */
typedef enum dp_status {
    DP_STATUS_OK = 0,
    DP_STATUS_IO,          /* file cannot be opened, read or written      */
    DP_STATUS_PARSE,       /* malformed input: syntax, types, fields       */
    DP_STATUS_INVALID,     /* well-formed but inconsistent input           */
    DP_STATUS_NOMEM,       /* allocation failed                            */
    DP_STATUS_UNSUPPORTED, /* valid request this build cannot serve        */
    DP_STATUS_COUNT
} dp_status;

/* One error record: the status and a message naming the file, item and
 * problem. Functions that fail fill it; callers print msg as it is.
 * os_errno is the system's errno behind a DP_STATUS_IO error when the
 * library knows it (ENOENT: no such file), else 0, so that a binding can
 * raise its language's own error for a missing file. */
typedef struct dp_error {
    dp_status status;
    int os_errno;
    char msg[1024];
} dp_error;

/* Fills err (if not NULL) with status and a printf-style message (and
 * os_errno 0); returns status so callers can write
 * `return dp_error_set(err, ...)`. */
dp_status dp_error_set(dp_error *err, dp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Fills err (if not NULL) with DP_STATUS_IO, the printf-style message
 * followed by ": " and strerror(errnum), and os_errno = errnum; returns
 * DP_STATUS_IO. For a failed system call: pass errno as it was. */
dp_status dp_error_set_os(dp_error *err, int errnum, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Puts "PREFIX: " in front of err's message (truncating at the end); returns
 * err's status. Used to name the file in errors raised by inner calls. */
dp_status dp_error_prefix(dp_error *err, const char *prefix);

/* Resets err to DP_STATUS_OK with an empty message and os_errno 0. */
void dp_error_clear(dp_error *err);

/* Name of a status code ("ok", "io", ...). */
const char *dp_status_name(dp_status status);

/* Seeded pseudo-random generator (xoshiro256**), seeded by splitmix64.
 * Same seed, same sequence, on every platform. */
typedef struct dp_rng {
    uint64_t s[4];
} dp_rng;

void dp_rng_seed(dp_rng *rng, uint64_t seed);
uint64_t dp_rng_next_u64(dp_rng *rng);
/* Uniform in [0, 1) with 53 random bits. */
double dp_rng_uniform(dp_rng *rng);
/* Uniform integer in [0, n); n > 0. Unbiased (rejection). */
uint64_t dp_rng_below(dp_rng *rng, uint64_t n);
/* Standard normal deviate (Box-Muller, no cached state): two uniforms,
 * then dp_rng_normal_of. */
double dp_rng_normal(dp_rng *rng);
/* The deviate dp_rng_normal makes of its two uniforms u1, u2 (so that a
 * caller may draw the uniforms in order and transform them on threads). */
double dp_rng_normal_of(double u1, double u2);

#ifdef __cplusplus
}
#endif
#endif
