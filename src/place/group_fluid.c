/* Asynchronous fluid communities (Pares, Garcia-Gasulla et al., "Fluid
 * Communities: a competitive, scalable and diverse community detection
 * algorithm", 2017), the grouping EAGLE took from NetworkX's asyn_fluidc.
 *
 * k communities start at k distinct random vertices, each with density 1.
 * A sweep visits the vertices in a fresh random order; a vertex looks at the
 * communities of itself and its neighbours, sums each community's density
 * (1 / its size) over those vertices, and joins a community with the
 * largest sum (within 1e-4), staying where it is when its own community is
 * among them, else picking one of them at random. Sweeps repeat until one
 * changes nothing, at most 100 (NetworkX's default max_iter). A community
 * never empties: a vertex alone in its community sums its full density 1,
 * which no other community can beat.
 *
 * Beyond the paper, for graphs it does not cover:
 *  - disconnected graphs (the paper and NetworkX require connected ones):
 *    each connected component gets a share of the k communities in
 *    proportion to its vertex count (largest remainders), and fluid runs in
 *    each component with its share; components whose share is 0 join, whole,
 *    the community with the fewest vertices at that point, largest
 *    components first;
 *  - long chains, where communities spread about two hops per sweep and 100
 *    sweeps may not reach every vertex: vertices still without a community
 *    after the last sweep take the community of the nearest vertex that has
 *    one (breadth-first from all of them at once). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

enum { FLUID_MAX_SWEEPS = 100 };
#define FLUID_TOLERANCE 1e-4

typedef struct fluid {
    const place_wgraph *w;
    dp_rng rng;
    int32_t *comm;     /* [n] community, -1 none yet        */
    int32_t *size;     /* [k]                               */
    double *density;   /* [k]                               */
    double *acc;       /* [k] sums of the vertex being visited */
    int32_t *touched;  /* [k] communities with acc > 0      */
    int32_t *order;    /* [n] sweep order                   */
    int32_t *queue;    /* [n] breadth-first fill            */
} fluid;

/* Fisher-Yates shuffle of a[0..n). */
static void shuffle(dp_rng *rng, int32_t *a, int32_t n) {
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)dp_rng_below(rng, (uint64_t)i + 1);
        int32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* Adds community c's density to the vertex being visited. */
static void fluid_count(fluid *f, int32_t c, int32_t *n_touched) {
    if (c < 0) return;
    if (f->acc[c] == 0) f->touched[(*n_touched)++] = c;
    f->acc[c] += f->density[c];
}

/* Runs fluid on the component `verts[0..nv)` with communities base..base+q-1. */
static void fluid_component(fluid *f, const int32_t *verts, int32_t nv, int32_t base, int32_t q) {
    const place_wgraph *w = f->w;
    assert(q >= 1 && q <= nv);
    memcpy(f->order, verts, (size_t)nv * sizeof(int32_t));
    /* q distinct random seeds: a partial Fisher-Yates shuffle */
    for (int32_t i = 0; i < q; i++) {
        int32_t j = i + (int32_t)dp_rng_below(&f->rng, (uint64_t)(nv - i));
        int32_t t = f->order[i];
        f->order[i] = f->order[j];
        f->order[j] = t;
        f->comm[f->order[i]] = base + i;
        f->size[base + i] = 1;
        f->density[base + i] = 1.0;
    }
    int32_t unassigned = nv - q;
    for (int sweep = 0; sweep < FLUID_MAX_SWEEPS; sweep++) {
        int changed = 0;
        shuffle(&f->rng, f->order, nv);
        for (int32_t i = 0; i < nv; i++) {
            int32_t v = f->order[i], nt = 0;
            fluid_count(f, f->comm[v], &nt);
            for (int64_t a = w->at[v]; a < w->at[v + 1]; a++) fluid_count(f, f->comm[w->adj[a]], &nt);
            if (nt == 0) continue;
            double best = 0;
            for (int32_t t = 0; t < nt; t++)
                if (f->acc[f->touched[t]] > best) best = f->acc[f->touched[t]];
            int32_t n_best = 0, keep = 0;
            for (int32_t t = 0; t < nt; t++) {
                int32_t c = f->touched[t];
                if (best - f->acc[c] < FLUID_TOLERANCE) {
                    f->touched[n_best++] = c; /* compacts the candidates in place */
                    if (c == f->comm[v]) keep = 1;
                }
                f->acc[c] = 0;
            }
            if (keep) continue;
            int32_t c = f->touched[dp_rng_below(&f->rng, (uint64_t)n_best)];
            int32_t old = f->comm[v];
            if (old >= 0) {
                f->size[old]--;
                assert(f->size[old] > 0);
                f->density[old] = 1.0 / f->size[old];
            } else {
                unassigned--;
            }
            f->comm[v] = c;
            f->size[c]++;
            f->density[c] = 1.0 / f->size[c];
            changed = 1;
        }
        if (!changed) break;
    }
    if (unassigned == 0) return;
    /* breadth-first from every vertex with a community */
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < nv; i++)
        if (f->comm[verts[i]] >= 0) f->queue[tail++] = verts[i];
    while (head < tail) {
        int32_t v = f->queue[head++];
        for (int64_t a = w->at[v]; a < w->at[v + 1]; a++) {
            int32_t u = w->adj[a];
            if (f->comm[u] >= 0) continue;
            f->comm[u] = f->comm[v];
            f->size[f->comm[v]]++;
            f->queue[tail++] = u;
        }
    }
    assert(tail == nv);
}

/* A component and its vertex count, sorted largest first (ties: lower index). */
typedef struct comp_size {
    int32_t size, c;
} comp_size;

static int by_size_desc(const void *a, const void *b) {
    const comp_size *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return x->c < y->c ? -1 : x->c > y->c;
}

dp_status place_fluid(const place_wgraph *w, int32_t k, uint64_t seed, int32_t *part, dp_error *err) {
    int32_t n = w->n;
    assert(k >= 1 && k <= n);
    fluid f;
    memset(&f, 0, sizeof f);
    f.w = w;
    dp_rng_seed(&f.rng, seed);
    f.comm = malloc((size_t)n * sizeof(int32_t));
    f.order = malloc((size_t)n * sizeof(int32_t));
    f.queue = malloc((size_t)n * sizeof(int32_t));
    f.size = calloc((size_t)k, sizeof(int32_t));
    f.density = calloc((size_t)k, sizeof(double));
    f.acc = calloc((size_t)k, sizeof(double));
    f.touched = malloc((size_t)k * sizeof(int32_t));
    int32_t *comp = malloc((size_t)n * sizeof(int32_t));      /* component of each vertex */
    int32_t *verts = malloc((size_t)n * sizeof(int32_t));     /* vertices by component    */
    int32_t *comp_at = malloc(((size_t)n + 1) * sizeof(int32_t));
    int32_t *quota = calloc((size_t)n, sizeof(int32_t));
    double *frac = malloc((size_t)n * sizeof(double));
    comp_size *by_size = malloc((size_t)n * sizeof(comp_size));
    dp_status st = DP_STATUS_OK;
    if (!f.comm || !f.order || !f.queue || !f.size || !f.density || !f.acc || !f.touched || !comp || !verts ||
        !comp_at || !quota || !frac || !by_size) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (fluid communities of %d vertices)", n);
        goto done;
    }
    /* connected components, breadth-first; verts lists them one after another */
    int32_t n_comp = 0, tail = 0;
    for (int32_t v = 0; v < n; v++) comp[v] = -1;
    for (int32_t s = 0; s < n; s++) {
        if (comp[s] >= 0) continue;
        comp_at[n_comp] = tail;
        int32_t head = tail;
        comp[s] = n_comp;
        verts[tail++] = s;
        while (head < tail) {
            int32_t v = verts[head++];
            for (int64_t a = w->at[v]; a < w->at[v + 1]; a++)
                if (comp[w->adj[a]] < 0) {
                    comp[w->adj[a]] = n_comp;
                    verts[tail++] = w->adj[a];
                }
        }
        n_comp++;
    }
    comp_at[n_comp] = tail;
    /* shares of the k communities: floor of the proportional share, then the
     * largest remainders (k < n keeps every share within its component) */
    int32_t given = 0;
    for (int32_t c = 0; c < n_comp; c++) {
        int32_t sz = comp_at[c + 1] - comp_at[c];
        double exact = (double)k * sz / n;
        quota[c] = (int32_t)exact;
        frac[c] = exact - quota[c];
        given += quota[c];
    }
    while (given < k) {
        int32_t best = -1;
        for (int32_t c = 0; c < n_comp; c++)
            if (quota[c] < comp_at[c + 1] - comp_at[c] && (best < 0 || frac[c] > frac[best])) best = c;
        assert(best >= 0);
        quota[best]++;
        frac[best] = -1;
        given++;
    }
    for (int32_t v = 0; v < n; v++) f.comm[v] = -1;
    int32_t base = 0;
    for (int32_t c = 0; c < n_comp; c++) {
        if (!quota[c]) continue;
        fluid_component(&f, verts + comp_at[c], comp_at[c + 1] - comp_at[c], base, quota[c]);
        base += quota[c];
    }
    assert(base == k);
    /* components without a share join the smallest community, largest first */
    for (int32_t c = 0; c < n_comp; c++) by_size[c] = (comp_size){comp_at[c + 1] - comp_at[c], c};
    qsort(by_size, (size_t)n_comp, sizeof(comp_size), by_size_desc);
    for (int32_t i = 0; i < n_comp; i++) {
        int32_t c = by_size[i].c;
        if (quota[c]) continue;
        int32_t smallest = 0;
        for (int32_t x = 1; x < k; x++)
            if (f.size[x] < f.size[smallest]) smallest = x;
        for (int32_t j = comp_at[c]; j < comp_at[c + 1]; j++) f.comm[verts[j]] = smallest;
        f.size[smallest] += comp_at[c + 1] - comp_at[c];
    }
    for (int32_t v = 0; v < n; v++) {
        assert(f.comm[v] >= 0 && f.comm[v] < k);
        part[v] = f.comm[v];
    }
done:
    free(f.comm);
    free(f.order);
    free(f.queue);
    free(f.size);
    free(f.density);
    free(f.acc);
    free(f.touched);
    free(comp);
    free(verts);
    free(comp_at);
    free(quota);
    free(frac);
    free(by_size);
    return st;
}
