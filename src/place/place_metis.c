/* METIS 5.1 (Debian's libmetis) k-way partitioning of the contracted graph.
 *
 * Pitfalls handled:
 *  - METIS_PartGraphKway dies with SIGFPE when asked for one part: one part
 *    is answered here without METIS;
 *  - with as many parts as vertices or more it leaves parts empty and may
 *    complain: each vertex is given its own part here instead, the heaviest
 *    vertex to the heaviest target part;
 *  - it can return empty parts on small graphs: callers that need every
 *    part used repair it (dp_group_run); placers accept an unused GPU;
 *  - idx_t is 32-bit in Debian's build: vertex weights are scaled to sum to
 *    at most n + 2^26 and edge weights to at most n_arcs + 2^28;
 *  - tpwgts are single-precision and must sum to 1 within METIS's tolerance:
 *    the last part takes 1 minus the others;
 *  - it prints to stdout and fails on a target weight <= 0 (a device
 *    so slow that its share rounds to 0): each part's weight is at least
 *    METIS_MIN_TPWGT;
 *  - the seed is METIS_OPTION_SEED, so the same seed gives the same parts;
 *  - its initial partitioning printf()s "***Cannot bisect a graph with 0
 *    vertices!" and "***You are trying to partition a graph into too many
 *    parts!" on stdout when many parts are asked of a small coarsened graph
 *    (gnmt4 into 256 parts), and still returns a partition: these lines
 *    would corrupt `--json` output, so stdout is pointed at /dev/null for
 *    the call (one call at a time, under a mutex). */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <metis.h>

#include "place/place_internal.h"

#define METIS_MIN_TPWGT 1e-4 /* smallest target weight of a part */

_Static_assert(sizeof(idx_t) == 4 || sizeof(idx_t) == 8, "idx_t is 32 or 64 bits");

/* Words for a METIS return code. */
static const char *metis_status_name(int rc) {
    switch (rc) {
    case METIS_ERROR_INPUT: return "input error";
    case METIS_ERROR_MEMORY: return "out of memory";
    default: return "error";
    }
}

static pthread_mutex_t metis_stdout_lock = PTHREAD_MUTEX_INITIALIZER;

/* Points file descriptor 1 at /dev/null and returns a duplicate of the old
 * one to give to stdout_unmute (-1: nothing was changed). Takes
 * metis_stdout_lock, which stdout_unmute releases. */
static int stdout_mute(void) {
    pthread_mutex_lock(&metis_stdout_lock);
    fflush(stdout);
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0) return -1;
    int saved = dup(STDOUT_FILENO);
    if (saved >= 0 && dup2(null_fd, STDOUT_FILENO) < 0) {
        close(saved);
        saved = -1;
    }
    close(null_fd);
    return saved;
}

/* Undoes stdout_mute(saved) and releases the lock. */
static void stdout_unmute(int saved) {
    if (saved >= 0) {
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    pthread_mutex_unlock(&metis_stdout_lock);
}

/* (weight, index) pairs sorted heaviest first (ties: lower index). */
typedef struct weighted {
    double w;
    int32_t i;
} weighted;

static int by_weight_desc(const void *a, const void *b) {
    const weighted *x = a, *y = b;
    if (x->w != y->w) return x->w > y->w ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

dp_status place_metis_part(const place_wgraph *w, int32_t n_parts, const double *tw, uint64_t seed, int32_t *part,
                           dp_error *err) {
    assert(n_parts >= 1);
    if (w->n == 0) return DP_STATUS_OK;
    if (n_parts == 1) {
        for (int32_t v = 0; v < w->n; v++) part[v] = 0;
        return DP_STATUS_OK;
    }
    if (n_parts >= w->n) {
        weighted *vs = malloc((size_t)w->n * sizeof(weighted));
        weighted *ps = malloc((size_t)n_parts * sizeof(weighted));
        if (!vs || !ps) {
            free(vs);
            free(ps);
            return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        }
        for (int32_t v = 0; v < w->n; v++) vs[v] = (weighted){w->vw[v], v};
        for (int32_t p = 0; p < n_parts; p++) ps[p] = (weighted){tw ? tw[p] : 1, p};
        qsort(vs, (size_t)w->n, sizeof(weighted), by_weight_desc);
        qsort(ps, (size_t)n_parts, sizeof(weighted), by_weight_desc);
        for (int32_t i = 0; i < w->n; i++) part[vs[i].i] = ps[i].i;
        free(vs);
        free(ps);
        return DP_STATUS_OK;
    }
    if (w->n_arcs >= INT32_MAX / 2)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "METIS: %lld arcs is more than 32-bit METIS takes",
                            (long long)w->n_arcs);
    size_t n = (size_t)w->n, na = (size_t)w->n_arcs;
    idx_t *xadj = malloc((n + 1) * sizeof(idx_t));
    idx_t *adjncy = malloc((na + 1) * sizeof(idx_t));
    idx_t *vwgt = malloc(n * sizeof(idx_t));
    idx_t *adjwgt = malloc((na + 1) * sizeof(idx_t));
    idx_t *parts = malloc(n * sizeof(idx_t));
    real_t *tpwgts = malloc((size_t)n_parts * sizeof(real_t));
    int64_t *scaled = malloc((n > na ? n : na + 1) * sizeof(int64_t));
    dp_status st = DP_STATUS_OK;
    if (!xadj || !adjncy || !vwgt || !adjwgt || !parts || !tpwgts || !scaled) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (METIS input of %d vertices)", w->n);
        goto done;
    }
    place_scale(w->vw, w->n, (double)(1 << 26), scaled);
    for (size_t v = 0; v < n; v++) {
        xadj[v] = (idx_t)w->at[v];
        vwgt[v] = (idx_t)scaled[v];
    }
    xadj[n] = (idx_t)w->at[n];
    place_scale(w->bytes, w->n_arcs, (double)(1 << 28), scaled);
    for (size_t a = 0; a < na; a++) {
        adjncy[a] = w->adj[a];
        adjwgt[a] = (idx_t)scaled[a];
    }
    double sum = 0;
    for (int32_t p = 0; p < n_parts; p++) sum += tw ? tw[p] : 1;
    /* METIS refuses a target weight <= 0 (printing to stdout): when a part's
     * share is under METIS_MIN_TPWGT (a device far slower than the others),
     * every part gets at least that, the rest shared by weight */
    int tiny = 0;
    double rest = 0;
    for (int32_t p = 0; p < n_parts; p++) {
        double x = (tw ? tw[p] : 1) / sum;
        if (!(x >= METIS_MIN_TPWGT)) tiny = 1;
        else rest += x;
    }
    real_t acc = 0;
    for (int32_t p = 0; p < n_parts; p++) {
        double x = (tw ? tw[p] : 1) / sum;
        if (tiny) x = x >= METIS_MIN_TPWGT ? METIS_MIN_TPWGT + x / rest * (1.0 - METIS_MIN_TPWGT * n_parts)
                                           : METIS_MIN_TPWGT;
        tpwgts[p] = p + 1 < n_parts ? (real_t)x : (real_t)1 - acc;
        if (tiny && tpwgts[p] < (real_t)METIS_MIN_TPWGT) tpwgts[p] = (real_t)METIS_MIN_TPWGT;
        acc += tpwgts[p];
    }
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = (idx_t)(seed % 2147483647u);
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t nv = (idx_t)n, ncon = 1, np = n_parts, cut = 0;
    int muted = stdout_mute();
    int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adjncy, vwgt, NULL, adjwgt, &np, tpwgts, NULL, options, &cut,
                                 parts);
    stdout_unmute(muted);
    if (rc != METIS_OK) {
        st = dp_error_set(err, DP_STATUS_UNSUPPORTED, "METIS_PartGraphKway failed (%s) on %d vertices, %d parts",
                          metis_status_name(rc), w->n, n_parts);
        goto done;
    }
    for (size_t v = 0; v < n; v++) {
        assert(parts[v] >= 0 && parts[v] < n_parts);
        part[v] = (int32_t)parts[v];
    }
done:
    free(xadj);
    free(adjncy);
    free(vwgt);
    free(adjwgt);
    free(parts);
    free(tpwgts);
    free(scaled);
    return st;
}
