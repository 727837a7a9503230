#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

int dp_reserve(void **ptr, int64_t *cap, int64_t need, size_t elem) {
    if (need <= *cap) return 0;
    int64_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > INT64_MAX / 2) return -1;
        ncap *= 2;
    }
    if ((uint64_t)ncap > SIZE_MAX / elem) return -1;
    void *p = realloc(*ptr, (size_t)ncap * elem);
    if (!p) return -1;
    *ptr = p;
    *cap = ncap;
    return 0;
}

uint64_t dp_hash_str(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

dp_status dp_write_file(const char *path, const void *bytes, size_t n, const char *what, dp_error *err) {
    dp_atomic_file af;
    dp_status st = dp_atomic_open(&af, path, err);
    if (st) return st;
    if (fwrite(bytes, 1, n, af.f) != n) {
        dp_atomic_abort(&af);
        return dp_error_set(err, DP_STATUS_IO, "%s: cannot write %s", path, what);
    }
    return dp_atomic_commit(&af, err);
}

dp_status dp_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len, dp_error *err) {
    *out = NULL;
    *out_len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return dp_error_set_os(err, errno, "%s: cannot open", path);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 1 << 16;
            if (cap > max_bytes) {
                free(buf);
                fclose(f);
                return dp_error_set(err, DP_STATUS_PARSE, "%s: file is larger than %zu bytes", path, max_bytes);
            }
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                fclose(f);
                return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory reading the file", path);
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return dp_error_set(err, DP_STATUS_IO, "%s: read error", path);
    }
    *out = buf;
    *out_len = len;
    return DP_STATUS_OK;
}

char *dp_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

dp_strtab *dp_strtab_init(void) { return calloc(1, sizeof(dp_strtab)); }

void dp_strtab_free(dp_strtab *t) {
    if (!t) return;
    for (int64_t i = 0; i < t->n; i++) free(t->strs[i]);
    free(t->strs);
    free(t->index);
    free(t);
}

static int64_t strtab_slot(const dp_strtab *t, const char *s) {
    uint64_t mask = (uint64_t)t->index_cap - 1;
    uint64_t i = dp_hash_str(s) & mask;
    while (t->index[i] && strcmp(t->strs[t->index[i] - 1], s) != 0) i = (i + 1) & mask;
    return (int64_t)i;
}

static int strtab_rehash(dp_strtab *t, int64_t ncap) {
    int32_t *idx = calloc((size_t)ncap, sizeof(int32_t));
    if (!idx) return -1;
    free(t->index);
    t->index = idx;
    t->index_cap = ncap;
    for (int64_t id = 0; id < t->n; id++) t->index[strtab_slot(t, t->strs[id])] = (int32_t)(id + 1);
    return 0;
}

int32_t dp_strtab_find(const dp_strtab *t, const char *s) {
    if (!t->index_cap) return -1;
    int32_t v = t->index[strtab_slot(t, s)];
    return v - 1;
}

int32_t dp_strtab_intern(dp_strtab *t, const char *s) {
    int32_t id = dp_strtab_find(t, s);
    if (id >= 0) return id;
    if (t->n >= INT32_MAX - 1) return -1;
    if ((t->n + 1) * 2 > t->index_cap && strtab_rehash(t, t->index_cap ? t->index_cap * 2 : 64)) return -1;
    if (dp_reserve((void **)&t->strs, &t->cap, t->n + 1, sizeof(char *))) return -1;
    char *copy = dp_strdup(s);
    if (!copy) return -1;
    t->strs[t->n] = copy;
    t->index[strtab_slot(t, copy)] = (int32_t)(t->n + 1);
    return (int32_t)t->n++;
}

int dp_atomic_sweep(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = slash ? (size_t)(slash - path) : 1, blen = strlen(base);
    char *dir = malloc(dlen + 1);
    if (!dir || !*base) {
        free(dir);
        return 0;
    }
    if (slash) memcpy(dir, path, dlen);
    else dir[0] = '.';
    if (slash && dlen == 0) dir[dlen++] = '/'; /* a file in / */
    dir[dlen] = '\0';
    DIR *d = opendir(dir);
    int removed = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        if (strncmp(nm, base, blen) != 0 || strncmp(nm + blen, ".tmp.", 5) != 0) continue;
        const char *digits = nm + blen + 5;
        char *end = NULL;
        errno = 0;
        long pid = strtol(digits, &end, 10);
        if (!*digits || *end || errno || pid <= 0 || pid == (long)getpid() || (long)(pid_t)pid != pid) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        size_t n = dlen + 1 + strlen(nm) + 1;
        char *full = malloc(n);
        if (!full) break;
        snprintf(full, n, "%s/%s", dir, nm);
        if (unlink(full) == 0) removed++;
        free(full);
    }
    if (d) closedir(d);
    free(dir);
    return removed;
}

dp_status dp_atomic_open(dp_atomic_file *af, const char *path, dp_error *err) {
    memset(af, 0, sizeof *af);
    dp_atomic_sweep(path);
    size_t n = strlen(path) + 32;
    af->path = dp_strdup(path);
    af->tmp_path = malloc(n);
    if (!af->path || !af->tmp_path) {
        free(af->path);
        free(af->tmp_path);
        return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
    }
    snprintf(af->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    af->f = fopen(af->tmp_path, "wb");
    if (!af->f) {
        dp_status st = dp_error_set_os(err, errno, "%s: cannot write", path);
        free(af->path);
        free(af->tmp_path);
        memset(af, 0, sizeof *af);
        return st;
    }
    return DP_STATUS_OK;
}

dp_status dp_atomic_commit(dp_atomic_file *af, dp_error *err) {
    dp_status st = DP_STATUS_OK;
    int bad = ferror(af->f) != 0;
    if (fflush(af->f) != 0) bad = 1;
    if (!bad && fsync(fileno(af->f)) != 0 && errno != EINVAL) bad = 1;
    int saved = errno;
    if (fclose(af->f) != 0) bad = 1;
    if (bad) {
        st = dp_error_set_os(err, saved ? saved : errno, "%s: write failed", af->path);
        remove(af->tmp_path);
    } else if (rename(af->tmp_path, af->path) != 0) {
        st = dp_error_set_os(err, errno, "%s: cannot rename temporary file", af->path);
        remove(af->tmp_path);
    }
    free(af->path);
    free(af->tmp_path);
    memset(af, 0, sizeof *af);
    return st;
}

void dp_atomic_abort(dp_atomic_file *af) {
    if (af->f) fclose(af->f);
    if (af->tmp_path) remove(af->tmp_path);
    free(af->path);
    free(af->tmp_path);
    memset(af, 0, sizeof *af);
}

const char *dp_stage_add(dp_stage *s, const char *path, dp_error *err) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 4;
        char **f = realloc(s->final, (size_t)cap * sizeof *f);
        if (f) s->final = f;
        char **t = f ? realloc(s->tmp, (size_t)cap * sizeof *t) : NULL;
        if (!t) {
            dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
            return NULL;
        }
        s->tmp = t;
        s->cap = cap;
    }
    size_t n = strlen(path) + 32;
    char *fin = dp_strdup(path), *tmp = malloc(n);
    if (!fin || !tmp) {
        free(fin);
        free(tmp);
        dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    dp_atomic_sweep(path);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        dp_error_set(err, DP_STATUS_IO, "%s: cannot write: is a directory", path);
        free(fin);
        free(tmp);
        return NULL;
    }
    FILE *probe = fopen(tmp, "wb");
    if (!probe) {
        dp_error_set_os(err, errno, "%s: cannot write", path);
        free(fin);
        free(tmp);
        return NULL;
    }
    fclose(probe);
    s->final[s->n] = fin;
    s->tmp[s->n++] = tmp;
    return tmp;
}

static void stage_free(dp_stage *s) {
    for (int i = 0; i < s->n; i++) {
        free(s->final[i]);
        free(s->tmp[i]);
    }
    free(s->final);
    free(s->tmp);
    memset(s, 0, sizeof *s);
}

dp_status dp_stage_commit(dp_stage *s, dp_error *err) {
    dp_status st = DP_STATUS_OK;
    int i = 0;
    for (; i < s->n; i++) {
        if (rename(s->tmp[i], s->final[i]) != 0) {
            st = dp_error_set_os(err, errno, "%s: cannot rename temporary file", s->final[i]);
            break;
        }
    }
    for (; i < s->n; i++) remove(s->tmp[i]);
    stage_free(s);
    return st;
}

void dp_stage_abort(dp_stage *s) {
    for (int i = 0; i < s->n; i++) remove(s->tmp[i]);
    stage_free(s);
}

double dp_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void dp_run_jobs(void *(*fn)(void *), void *jobs, size_t size, int32_t n) {
    pthread_t th[n > 1 ? n : 1];
    int32_t started = 0;
    for (int32_t t = 1; t < n; t++) {
        if (pthread_create(&th[t], NULL, fn, (char *)jobs + (size_t)t * size)) break;
        started = t;
    }
    fn(jobs);
    for (int32_t t = started + 1; t < n; t++) fn((char *)jobs + (size_t)t * size); /* threads that did not start */
    for (int32_t t = 1; t <= started; t++) pthread_join(th[t], NULL);
}

double dp_parse_duration(const char *text) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || errno || !(v > 0) || !isfinite(v)) return -1;
    if (!strcmp(end, "") || !strcmp(end, "s")) return v;
    if (!strcmp(end, "m")) return v * 60;
    if (!strcmp(end, "h")) return v * 3600;
    return -1;
}
