/* Scotch (libscotch 7, Debian's libscotch-dev) static mapping of the
 * contracted graph onto a weighted complete-graph architecture.
 *
 * Pitfalls handled:
 *  - the library's integer width must match its header's SCOTCH_Num (a
 *    program built against scotch-int64 headers but linked with the int32
 *    library corrupts memory): checked on every call with SCOTCH_numSizeof;
 *  - Debian's libscotch is threaded, and its global random state (even
 *    after SCOTCH_randomSeed and SCOTCH_randomReset) does not make two runs
 *    agree: every mapping runs in its own Scotch context, one thread,
 *    deterministic, with a fixed random seed taken from the caller, so the
 *    same seed gives the same mapping on any machine;
 *  - weights are SCOTCH_Num: vertex weights are scaled to sum to at most
 *    n + 2^20, edge weights to at most n_arcs + 2^24, architecture weights
 *    to 1..256, so no product Scotch forms overflows 32 bits;
 *  - libscotch reports errors through SCOTCH_errorPrint, which the Debian
 *    libscotcherr prints to stderr; dplace defines SCOTCH_errorPrint and
 *    SCOTCH_errorPrintW itself (the program's definitions take precedence
 *    over the shared library's), keeps the last message and returns it in
 *    the dp_error, so the library never prints. */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scotch.h>

#include "place/place_internal.h"

/* The last message libscotch reported (not thread-safe: Scotch's own state
 * is global too). */
static char scotch_msg[512];

/* Scotch's error hooks, replacing libscotcherr's printing ones. */
void SCOTCH_errorProg(const char *const name) { (void)name; }

void SCOTCH_errorPrint(const char *const fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(scotch_msg, sizeof scotch_msg, fmt, ap);
    va_end(ap);
}

void SCOTCH_errorPrintW(const char *const fmt, ...) {
    (void)fmt; /* warnings are not errors; nothing to report */
}

/* An error naming the Scotch call and Scotch's own last message. */
static dp_status scotch_fail(dp_error *err, const char *what) {
    return dp_error_set(err, DP_STATUS_UNSUPPORTED, "Scotch: %s failed%s%s", what, scotch_msg[0] ? ": " : "",
                        scotch_msg);
}

dp_status place_scotch_map(const place_wgraph *w, int32_t n_parts, const double *tw, const int32_t *fixed,
                           uint64_t seed, int32_t *part, dp_error *err) {
    if ((size_t)SCOTCH_numSizeof() != sizeof(SCOTCH_Num))
        return dp_error_set(err, DP_STATUS_UNSUPPORTED,
                            "Scotch: the library uses %d-byte integers but its header %zu-byte ones "
                            "(install matching libscotch-dev headers and library)",
                            SCOTCH_numSizeof(), sizeof(SCOTCH_Num));
    assert(n_parts >= 1);
    if (w->n == 0) return DP_STATUS_OK;
    if (n_parts == 1) {
        for (int32_t v = 0; v < w->n; v++) part[v] = 0;
        return DP_STATUS_OK;
    }
    if (w->n_arcs >= INT32_MAX / 2)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "Scotch: %lld arcs is more than 32-bit Scotch takes",
                            (long long)w->n_arcs);
    size_t n = (size_t)w->n, na = (size_t)w->n_arcs;
    SCOTCH_Num *vert = malloc((n + 1) * sizeof(SCOTCH_Num));
    SCOTCH_Num *velo = malloc(n * sizeof(SCOTCH_Num));
    SCOTCH_Num *edge = malloc((na + 1) * sizeof(SCOTCH_Num));
    SCOTCH_Num *edlo = malloc((na + 1) * sizeof(SCOTCH_Num));
    SCOTCH_Num *parttab = malloc(n * sizeof(SCOTCH_Num));
    int64_t *scaled = malloc((n > na ? n : na + 1) * sizeof(int64_t));
    SCOTCH_Num *archw = malloc((size_t)n_parts * sizeof(SCOTCH_Num)); /* groupers ask for any number of parts */
    dp_status st = DP_STATUS_OK;
    if (!vert || !velo || !edge || !edlo || !parttab || !scaled || !archw) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (Scotch input of %d vertices)", w->n);
        goto done;
    }
    place_scale(w->vw, w->n, 1 << 20, scaled);
    for (size_t v = 0; v < n; v++) {
        vert[v] = (SCOTCH_Num)w->at[v];
        velo[v] = (SCOTCH_Num)scaled[v];
    }
    vert[n] = (SCOTCH_Num)w->at[n];
    place_scale(w->bytes, w->n_arcs, 1 << 24, scaled);
    for (size_t a = 0; a < na; a++) {
        edge[a] = w->adj[a];
        edlo[a] = (SCOTCH_Num)scaled[a];
    }
    double twmax = 0;
    for (int32_t p = 0; p < n_parts; p++) {
        double x = tw ? tw[p] : 1;
        if (x > twmax) twmax = x;
    }
    for (int32_t p = 0; p < n_parts; p++) {
        double x = tw ? tw[p] : 1;
        long r = twmax > 0 ? lround(256.0 * x / twmax) : 1;
        archw[p] = (SCOTCH_Num)(r < 1 ? 1 : r);
    }

    SCOTCH_Graph graph, bound;
    SCOTCH_Arch arch;
    SCOTCH_Strat strat;
    SCOTCH_Context ctx;
    scotch_msg[0] = '\0';
    if (SCOTCH_graphInit(&graph) || SCOTCH_graphInit(&bound)) {
        st = scotch_fail(err, "graphInit");
        goto done;
    }
    if (SCOTCH_graphBuild(&graph, 0, (SCOTCH_Num)n, vert, NULL, velo, NULL, (SCOTCH_Num)na, edge, edlo) ||
        SCOTCH_graphCheck(&graph)) {
        st = scotch_fail(err, "graphBuild");
        SCOTCH_graphExit(&bound);
        SCOTCH_graphExit(&graph);
        goto done;
    }
    /* A context of one thread, deterministic, with its own seeded random
     * state: Debian's libscotch is threaded, and with its global state (even
     * after SCOTCH_randomSeed and SCOTCH_randomReset) two runs differ. */
    SCOTCH_contextInit(&ctx);
    SCOTCH_randomSeed((SCOTCH_Num)(seed % 2147483647u));
    SCOTCH_randomReset();
    if (SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) ||
        SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1) ||
        SCOTCH_contextThreadSpawn(&ctx, 1, NULL)) {
        st = scotch_fail(err, "context set-up");
        SCOTCH_contextExit(&ctx);
        SCOTCH_graphExit(&bound);
        SCOTCH_graphExit(&graph);
        goto done;
    }
    SCOTCH_contextRandomSeed(&ctx, (SCOTCH_Num)(seed % 2147483647u));
    SCOTCH_archInit(&arch);
    SCOTCH_stratInit(&strat); /* empty: Scotch's default strategy */
    if (SCOTCH_contextBindGraph(&ctx, &graph, &bound)) {
        st = scotch_fail(err, "contextBindGraph");
    } else if (SCOTCH_archCmpltw(&arch, (SCOTCH_Num)n_parts, archw)) {
        st = scotch_fail(err, "archCmpltw");
    } else {
        int rc;
        if (fixed) {
            for (size_t v = 0; v < n; v++) parttab[v] = fixed[v] >= 0 ? fixed[v] : -1;
            rc = SCOTCH_graphMapFixed(&bound, &arch, &strat, parttab);
        } else if (!tw) {
            rc = SCOTCH_graphPart(&bound, (SCOTCH_Num)n_parts, &strat, parttab); /* equal parts */
        } else {
            rc = SCOTCH_graphMap(&bound, &arch, &strat, parttab);
        }
        if (rc) st = scotch_fail(err, "graphMap");
        for (size_t v = 0; v < n && !st; v++) {
            assert(parttab[v] >= 0 && parttab[v] < n_parts);
            part[v] = (int32_t)parttab[v];
        }
    }
    SCOTCH_stratExit(&strat);
    SCOTCH_archExit(&arch);
    SCOTCH_graphExit(&bound);
    SCOTCH_contextExit(&ctx);
    SCOTCH_graphExit(&graph);
done:
    free(vert);
    free(velo);
    free(edge);
    free(edlo);
    free(parttab);
    free(scaled);
    free(archw);
    return st;
}
