/* dplace: the external measuring command (`dplace optimize --measure CMD`).
 *
 * For users with real hardware, each sampled placement is evaluated by a
 * command of theirs instead of the simulator. docs/measure.md describes the
 * protocol; in short:
 *
 *   - dplace writes the placement (dplace-placement v1) to a file and runs
 *     `/bin/sh -c CMD dplace-measure FILE`: the file's path is "$1" in CMD
 *     and is also in the environment as DPLACE_PLACEMENT. stdin is
 *     /dev/null; the command runs in a process group of its own.
 *   - The command reports on stdout. The LAST non-blank line is the result,
 *     one of (keywords lower case, blanks around tokens allowed):
 *         step_time_s SECONDS     SECONDS a decimal number,
 *                                 0 < SECONDS <= DP_MEASURE_MAX_STEP_S
 *         oom [REASON]            the placement ran out of device memory
 *     and the command exits with status 0. Earlier lines, and anything on
 *     stderr, are free-form logs.
 *   - Anything else is a failed sample, never an error of dplace: a non-zero
 *     exit, death by a signal, no result line, garbage, a time that is not a
 *     positive finite number or is over the limit, more than
 *     DP_MEASURE_MAX_OUTPUT bytes on stdout, or running past the timeout
 *     (then the whole process group gets SIGTERM and, after a grace period,
 *     SIGKILL). When the command's main process ends, whatever it left
 *     running in its process group is killed.
 */
#ifndef DPLACE_MEASURE_H
#define DPLACE_MEASURE_H

#include <signal.h>

#include "dplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest step time accepted, in seconds (one day): more is garbage. */
#define DP_MEASURE_MAX_STEP_S 86400.0
/* Most bytes read from the command's stdout; more fails the sample. */
#define DP_MEASURE_MAX_OUTPUT 65536
/* Bytes of the end of the command's stderr kept for failure reasons. */
#define DP_MEASURE_STDERR_TAIL 4096

typedef enum dp_measure_outcome {
    DP_MEASURE_OUTCOME_OK = 0,    /* step_time_s holds the measured time      */
    DP_MEASURE_OUTCOME_OOM,       /* the command reported out of memory       */
    DP_MEASURE_OUTCOME_FAILED,    /* the command failed; reason says how      */
    DP_MEASURE_OUTCOME_CANCELLED, /* the caller's cancel flag stopped it: not
                                     a measurement, do not learn from it      */
    DP_MEASURE_OUTCOME_COUNT
} dp_measure_outcome;

/* Name of an outcome ("ok", "oom", "failed", "cancelled"). */
const char *dp_measure_outcome_name(dp_measure_outcome o);

typedef struct dp_measure_result {
    dp_measure_outcome outcome;
    double step_time_s; /* OK: the time the command printed; otherwise 0  */
    /* OOM: the command's reason, or "out of memory"; FAILED or CANCELLED:
     * what went wrong, e.g. `exited with status 1: <last stderr line>`.
     * One line: printable ASCII, no control characters, at most 255 bytes;
     * empty when OK. */
    char reason[256];
    double wall_s; /* how long the command ran, seconds */
} dp_measure_result;

typedef struct dp_measure_options {
    double timeout_s; /* > 0: the command is killed after this long         */
    /* Seconds between SIGTERM and SIGKILL after a timeout; <= 0: the
     * default, timeout_s / 4 clamped to [0.1, 1]. */
    double kill_grace_s;
    /* NULL, or a flag (typically set by a SIGINT handler): once it reads
     * non-zero the command's process group is killed as on a timeout and
     * the outcome is CANCELLED. It is checked at least every 50 ms. */
    const volatile sig_atomic_t *cancel;
    /* NULL, or a NULL-terminated list of "NAME=value" strings added to the
     * command's environment (replacing inherited ones of the same name),
     * e.g. "DPLACE_GRAPH=/tmp/g.json". */
    const char *const *env;
} dp_measure_options;

/* Options with timeout_s and the rest at their defaults (no cancel flag,
 * no extra environment). */
dp_measure_options dp_measure_options_default(double timeout_s);

/* Runs cmd on the placement file at placement_path as the protocol above
 * says and fills res. Never fails for the command's own faults: those give
 * outcome FAILED with a one-line reason (including the tail of stderr when
 * it helps). Returns DP_STATUS_INVALID for bad arguments (NULL or empty cmd
 * or path, timeout not a positive number), DP_STATUS_IO when the command
 * cannot be started (pipe or spawn failed), DP_STATUS_NOMEM when out of
 * memory; res is then outcome FAILED with err's message as reason.
 * Thread-safe: each call has its own child, pipes and buffers; it waits for
 * its own child by pid (a SIGCHLD disposition of SIG_IGN, or another thread
 * reaping every child, makes the exit status unknown: outcome FAILED).
 * Leaves no child process, zombie or open descriptor behind. */
dp_status dp_measure_run_opts(const char *cmd, const char *placement_path, const dp_measure_options *opts,
                              dp_measure_result *res, dp_error *err);

/* dp_measure_run_opts with dp_measure_options_default(timeout_s). */
dp_status dp_measure_run(const char *cmd, const char *placement_path, double timeout_s, dp_measure_result *res,
                         dp_error *err);

/* Parses a command's stdout (len bytes, need not be NUL-terminated) as the
 * protocol's result: fills outcome (OK, OOM or FAILED), step_time_s and
 * reason. No process is involved; dp_measure_run uses it after a clean exit. */
void dp_measure_parse_output(const char *out, size_t len, dp_measure_result *res);

#ifdef __cplusplus
}
#endif
#endif
