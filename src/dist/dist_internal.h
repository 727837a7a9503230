/* src/dist's private declarations: the rank's state, the messages, and the
 * polling waits shared by the sync and async protocols. */
#ifndef DPLACE_DIST_INTERNAL_H
#define DPLACE_DIST_INTERNAL_H

#include <mpi.h>
#include <signal.h>
#include <stdint.h>

#include "dplace/dist.h"

/* Message tags. */
enum {
    DIST_TAG_JOB = 1,  /* controller -> worker: int32 [c, k[c], placement[c, n_ops]] */
    DIST_TAG_STOP,     /* controller -> worker, server -> controller: no payload */
    DIST_TAG_RESULT,   /* worker -> controller: dist_result[c]                   */
    DIST_TAG_UPDATE,   /* controller -> server: an update (dist_async.c)         */
    DIST_TAG_PARAMS    /* server -> controller: the shared parameters            */
};

/* One evaluation on the wire. status != 0: the worker failed (reason says
 * why); the controller's run fails with it. */
typedef struct dist_result {
    int32_t k, status, valid, cancelled;
    double step_time_s, overflow;
    char reason[192];
} dist_result;

struct dp_dist {
    dp_dist_mode mode;
    int rank, size, K;       /* K: controllers                                     */
    dp_dist_role role;
    int controller;          /* a worker's controller; a controller's own rank     */
    int n_workers;
    int *workers;            /* [n_workers] a controller's workers' ranks          */
    int we_init;             /* this module started MPI                            */
    /* a controller's scratch for the remote evaluation */
    int32_t batch;           /* placements per message to a worker: its threads   */
    MPI_Request *reqs;       /* [n_workers] the pending results of each           */
    dist_result *slots;      /* [n_workers, batch] (made by dp_dist_attach)       */
    int32_t *job;            /* a job message, int32 [1 + job_cap]                */
    int64_t job_cap;
    const volatile sig_atomic_t *cancel;
    struct dist_server *server; /* rank 0 of an async run (dist_async.c)        */
    struct dist_search *search; /* a search over ranks (dist_search.c)          */
    int search_over;            /* its ranks have left their loop               */
};

/* A search's end: rank 0 tells the others no step follows (dist_search.c). */
void dist_search_free(dp_dist *d);

/* The async server's end: takes the update each controller still has in
 * flight (unapplied), then stops every controller (dist_async.c). */
void dist_server_free(dp_dist *d);

/* Waits for one of reqs[n] to complete (polling with sleeps that grow to
 * a millisecond, so that waiting ranks leave the cores to working ones);
 * returns its index, or -1 when none is active. Sets *stop when cancel is
 * set meanwhile (cancel may be NULL). */
int dist_wait_any(int n, MPI_Request *reqs, MPI_Status *st, const volatile sig_atomic_t *cancel, int *stop);
/* Waits for a message from src (MPI_ANY_SOURCE: any) with any tag, as
 * dist_wait_any waits; fills st and returns 0, or -1 when cancel (may be
 * NULL) is set first. */
int dist_probe(int src, MPI_Status *st, const volatile sig_atomic_t *cancel);
#endif
