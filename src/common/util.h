/* Internal helpers shared by the modules: growable arrays, string hashing
 * and interning, atomic file output, a clock and a thread fan-out. Not part of the public API. */
#ifndef DPLACE_UTIL_H
#define DPLACE_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "dplace/common.h"

/* Makes *ptr (an array of elem-byte items with capacity *cap) hold at least
 * `need` items, growing geometrically. Returns 0, or -1 on OOM (unchanged). */
int dp_reserve(void **ptr, int64_t *cap, int64_t need, size_t elem);

/* FNV-1a hash of a NUL-terminated string. */
uint64_t dp_hash_str(const char *s);

/* Interned strings with dense ids from 0. */
typedef struct dp_strtab {
    char **strs;
    int64_t n, cap;
    int32_t *index; /* open addressing: id+1, 0 empty */
    int64_t index_cap;
} dp_strtab;

dp_strtab *dp_strtab_init(void);
void dp_strtab_free(dp_strtab *t);
/* Returns the id of s, adding a copy when new; -1 on OOM. */
int32_t dp_strtab_intern(dp_strtab *t, const char *s);
/* Returns the id of s or -1 when absent. */
int32_t dp_strtab_find(const dp_strtab *t, const char *s);

/* Atomic output: writes go to a temporary file beside `path`; commit
 * flushes, syncs and renames it over `path`; abort removes it. Either way
 * the handle is closed and freed. A reader never sees a half-written file. */
typedef struct dp_atomic_file {
    FILE *f;
    char *path;
    char *tmp_path;
} dp_atomic_file;

/* Temporary files are named PATH.tmp.PID. dp_atomic_open first removes the
 * ones of PATH whose process no longer exists (a killed run's leftovers). */
dp_status dp_atomic_open(dp_atomic_file *af, const char *path, dp_error *err);
/* Removes PATH.tmp.PID files beside path whose PID names no live process
 * (never this process's); returns how many it removed. Errors are ignored. */
int dp_atomic_sweep(const char *path);
dp_status dp_atomic_commit(dp_atomic_file *af, dp_error *err);
void dp_atomic_abort(dp_atomic_file *af);

/* Several outputs of one command, all or nothing: each output is written
 * (by any writer, itself atomic) to the temporary name dp_stage_add returns;
 * dp_stage_commit then renames them all into place; on a failure before it,
 * dp_stage_abort removes them, so no output appears. Both free the stage. */
typedef struct dp_stage {
    int n, cap;
    char **final, **tmp;
} dp_stage;

/* Registers path and checks it can be written (creating its temporary file);
 * returns the name to write it to (owned by s), or NULL with err filled
 * ("PATH: cannot write: REASON", OOM). Zero-initialise s before the first
 * call; add every output before writing any. */
const char *dp_stage_add(dp_stage *s, const char *path, dp_error *err);
/* Renames every staged file over its path; on a failure names the file and
 * removes the staged files not yet renamed. */
dp_status dp_stage_commit(dp_stage *s, dp_error *err);
void dp_stage_abort(dp_stage *s);

/* Reads a whole file into a malloc'd buffer (*buf, *len; free with free()).
 * Errors name the path: cannot open, read error, larger than max_bytes, OOM. */
dp_status dp_read_file(const char *path, size_t max_bytes, char **buf, size_t *len, dp_error *err);

/* Writes n bytes to path atomically (dp_atomic_open's rules); on a failure
 * "PATH: cannot write WHAT" (DP_STATUS_IO) and path is left as it was. */
dp_status dp_write_file(const char *path, const void *bytes, size_t n, const char *what, dp_error *err);

/* strdup that returns NULL for NULL. */
char *dp_strdup(const char *s);

/* Parses a duration: a number of seconds, or one followed by s, m or h
 * (90s, 2m, 1.5h); returns it in seconds, or -1 when text is not one or is
 * not positive. */
double dp_parse_duration(const char *text);

/* Monotonic wall clock in seconds. */
double dp_now_s(void);

/* Runs fn on each of n jobs (jobs: an array of n elements of size bytes):
 * job 0 on this thread, the others on threads of their own, or here after
 * job 0 when a thread cannot be made; returns when every job has run. */
void dp_run_jobs(void *(*fn)(void *), void *jobs, size_t size, int32_t n);

#endif
