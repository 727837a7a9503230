/* dplace's search (src/search) over ranks: every rank runs its own chains
 * (its own seed), all in step; after each step the ranks share the best
 * placement any of them has found (MPI_MINLOC over the best step times,
 * then the winner's placement broadcast), and a rank whose best is worse
 * takes it (dp_search_offer_best: its worst chain goes on from it). Rank 0
 * drives the run: its steps are the run driver's, its moves the log, its
 * search (holding the shared best) the checkpoints. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"
#include "dplace/search.h"

/* The shared state of a search over ranks (one per rank). */
typedef struct dist_search {
    dp_dist *d;
    dp_search *se;
    dp_method inner;
    int32_t n_ops;
    int32_t *buf;  /* [n_ops] the winner's placement */
} dist_search;

/* After a step on every rank: whether any failed (then all stop), and the
 * best of all ranks offered to this one. Collective. */
static dp_status exchange(dist_search *x, dp_status mine, dp_error *err) {
    int failed = mine != DP_STATUS_OK, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        x->d->search_over = 1; /* every rank leaves the loop: no more steps to announce */
        return mine ? mine : dp_error_set(err, DP_STATUS_INVALID, "dist: another rank's search failed");
    }
    const dp_run_state *s = x->inner.ops->state(x->inner.self);
    struct {
        double v;
        int r;
    } in = {isfinite(s->best_s) ? s->best_s : HUGE_VAL, x->d->rank}, out;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (!(out.v < HUGE_VAL)) return DP_STATUS_OK; /* no valid placement anywhere yet */
    if (out.r == x->d->rank) memcpy(x->buf, s->best_placement, sizeof(int32_t) * (size_t)x->n_ops);
    MPI_Bcast(x->buf, x->n_ops, MPI_INT32_T, out.r, MPI_COMM_WORLD);
    if (out.r != x->d->rank && dp_search_offer_best(x->se, x->buf, err) < 0) return err->status;
    return DP_STATUS_OK;
}

/* Rank 0's step: every rank told to step, its own step, the exchange. */
static dp_status step(void *self, dp_error *err) {
    dist_search *x = self;
    int go = 1;
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    dp_status st = x->inner.ops->step(x->inner.self, err);
    dp_error other;
    dp_status xs = exchange(x, st, st ? &other : err);
    return st ? st : xs;
}

static const dp_run_state *state(const void *self) {
    const dist_search *x = self;
    return x->inner.ops->state(x->inner.self);
}

static dp_status save(const void *self, const char *path, dp_error *err) {
    const dist_search *x = self;
    return x->inner.ops->save(x->inner.self, path, err);
}

static dp_status load(void *self, const char *path, dp_error *err) {
    dist_search *x = self;
    return x->inner.ops->load(x->inner.self, path, err);
}

static const dp_method_ops search_ops = {"dist-search", step, NULL, state, save, load, NULL, NULL};

/* This rank's search state (kept by d, freed with it); NULL when out of memory. */
static dist_search *dist_search_new(dp_dist *d, const dp_graph *g, dp_search *se) {
    dist_search *x = calloc(1, sizeof *x);
    if (!x || !(x->buf = malloc(sizeof(int32_t) * (size_t)(g->n_ops ? g->n_ops : 1)))) {
        free(x);
        return NULL;
    }
    x->d = d, x->se = se, x->inner = dp_search_method(se), x->n_ops = g->n_ops;
    d->n_workers = 0; /* the other ranks search too: none waits for placements */
    d->search = x;
    return x;
}

dp_status dp_dist_search_method(dp_dist *d, const dp_graph *g, dp_search *se, dp_method *out, dp_error *err) {
    if (d->rank != 0) return dp_error_set(err, DP_STATUS_INVALID, "dist: the search's run is rank 0's");
    dist_search *x = d->search ? d->search : dist_search_new(d, g, se);
    if (!x) return dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for the search");
    out->ops = &search_ops, out->self = x;
    return DP_STATUS_OK;
}

dp_status dp_dist_search_follow(dp_dist *d, const dp_graph *g, dp_search *se, dp_error *err) {
    dist_search *x = d->search ? d->search : dist_search_new(d, g, se);
    if (!x) return dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for the search");
    dp_status st = DP_STATUS_OK;
    while (!st && !d->search_over) {
        int go = 0;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!go) break;
        dp_status mine = x->inner.ops->step(x->inner.self, err);
        dp_error other;
        dp_status xs = exchange(x, mine, mine ? &other : err);
        st = mine ? mine : xs;
    }
    d->search_over = 1;
    return st;
}

void dist_search_free(dp_dist *d) {
    dist_search *x = d->search;
    if (d->rank == 0 && !d->search_over) { /* the followers wait for the next step: none */
        int go = 0;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    free(x->buf);
    free(x);
    d->search = NULL;
}
