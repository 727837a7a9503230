/* The evaluation over worker ranks: a controller's remote function (the
 * placements of a batch that missed its cache, handed one at a time to
 * whichever worker is free, results stored by sample index) and a
 * worker's loop. Where a placement is evaluated changes nothing: the
 * worker's evaluator has the controller's options, and results depend on
 * the placement and the options only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"

/* Sends sample k (place[n_ops]) to worker w and posts the receive of its
 * result; -1 when out of memory. */
static int dispatch(dp_dist *d, int w, int32_t k, const int32_t *place, int32_t n_ops) {
    if (n_ops > d->job_cap) {
        int32_t *nj = realloc(d->job, sizeof(int32_t) * ((size_t)n_ops + 1));
        if (!nj) return -1;
        d->job = nj, d->job_cap = n_ops;
    }
    d->job[0] = k;
    memcpy(d->job + 1, place, sizeof(int32_t) * (size_t)n_ops);
    MPI_Send(d->job, n_ops + 1, MPI_INT32_T, d->workers[w], DIST_TAG_JOB, MPI_COMM_WORLD);
    MPI_Irecv(&d->slots[w], (int)sizeof(dist_result), MPI_BYTE, d->workers[w], DIST_TAG_RESULT, MPI_COMM_WORLD,
              &d->reqs[w]);
    return 0;
}

/* A result from worker w into res (its sample's). First failure kept in err. */
static void collect(dp_dist *d, int w, dp_agent_eval_result *res, dp_status *st, dp_error *err) {
    const dist_result *x = &d->slots[w];
    if (x->status) {
        if (!*st) *st = dp_error_set(err, (dp_status)x->status, "worker rank %d: %s", d->workers[w], x->reason);
        return;
    }
    dp_agent_eval_result *r = &res[x->k];
    r->step_time_s = x->step_time_s;
    r->valid = x->valid;
    r->cancelled = x->cancelled;
    r->overflow = x->overflow;
    memcpy(r->reason, x->reason, sizeof r->reason);
    r->reason[sizeof r->reason - 1] = 0;
}

/* The remote function of dp_agent_eval_options (dp_dist_attach). */
static dp_status dist_remote_eval(void *user, const int32_t *place, int32_t K, int32_t n_ops, const int *todo,
                                  dp_agent_eval_result *res, int *cancelled, dp_error *err) {
    dp_dist *d = user;
    *cancelled = 0;
    int32_t next = 0, done = 0, want = 0;
    int stop = 0;
    dp_status st = DP_STATUS_OK;
    for (int32_t k = 0; k < K; k++) want += todo[k] != 0;
    for (int w = 0; w < d->n_workers; w++) d->reqs[w] = MPI_REQUEST_NULL;
    for (int w = 0; w < d->n_workers; w++) {
        while (next < K && !todo[next]) next++;
        if (next == K) break;
        if (dispatch(d, w, next, place + (int64_t)next * n_ops, n_ops)) {
            stop = 1, st = dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a placement message");
            break;
        }
        next++;
    }
    for (;;) {
        MPI_Status ms;
        int w = dist_wait_any(d->n_workers, d->reqs, &ms, d->cancel, &stop);
        if (w < 0) break;
        collect(d, w, res, &st, err);
        done++;
        if (st) stop = 1;
        while (next < K && !todo[next]) next++;
        if (stop || next == K) continue;
        if (dispatch(d, w, next, place + (int64_t)next * n_ops, n_ops)) {
            stop = 1, st = dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a placement message");
            continue;
        }
        next++;
    }
    if (st) return st;
    if (done < want) *cancelled = 1; /* the cancel flag stopped the dispatch */
    return DP_STATUS_OK;
}

/* One job of a worker: evaluates it, or answers with the failure. */
static void work_one(dp_dist *d, dp_agent_evaluator *ev, const int32_t *job, int count, int32_t n_ops,
                     const char *setup_error, dist_result *out) {
    memset(out, 0, sizeof *out);
    out->k = count > 0 ? job[0] : -1;
    if (!ev) {
        out->status = DP_STATUS_INVALID;
        snprintf(out->reason, sizeof out->reason, "%.180s", setup_error ? setup_error : "could not set up");
        return;
    }
    if (count != n_ops + 1) {
        out->status = DP_STATUS_INVALID;
        snprintf(out->reason, sizeof out->reason, "a placement of %d ops for a graph of %d", count - 1, (int)n_ops);
        return;
    }
    dp_agent_eval_result r;
    int cached = 0, cancelled = 0;
    dp_error e;
    dp_error_clear(&e);
    dp_status st = dp_agent_evaluate(ev, job + 1, 1, &r, &cached, &cancelled, &e);
    if (st) {
        out->status = (int32_t)st;
        snprintf(out->reason, sizeof out->reason, "%.190s", e.msg);
        return;
    }
    out->valid = r.valid, out->cancelled = r.cancelled;
    out->step_time_s = r.step_time_s, out->overflow = r.overflow;
    memcpy(out->reason, r.reason, sizeof out->reason);
}

dp_status dp_dist_work(dp_dist *d, const dp_graph *g, const dp_devices *ds, const dp_agent_eval_options *eo,
                       const char *setup_error, dp_error *err) {
    dp_agent_eval_options weo = *eo;
    weo.cache = 0, weo.remote = NULL, weo.remote_user = NULL, weo.progress = NULL, weo.cancel = NULL;
    dp_agent_evaluator *ev = NULL;
    dp_error se;
    dp_error_clear(&se);
    if (g && !(ev = dp_agent_evaluator_init(g, ds, &weo, &se))) setup_error = se.msg;
    int32_t n_ops = g ? g->n_ops : 0, cap = n_ops + 1;
    int32_t *job = malloc(sizeof(int32_t) * (size_t)cap);
    if (!job) {
        dp_agent_evaluator_free(ev);
        return dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a worker");
    }
    for (;;) {
        MPI_Status ms;
        dist_probe(d->controller, &ms, NULL);
        int count = 0;
        MPI_Get_count(&ms, MPI_INT32_T, &count);
        if (ms.MPI_TAG == DIST_TAG_STOP) {
            MPI_Recv(NULL, 0, MPI_BYTE, d->controller, DIST_TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
        }
        if (count > cap) { /* not this graph's: taken whole, answered with the failure */
            int32_t *nj = realloc(job, sizeof(int32_t) * (size_t)count);
            if (!nj) {
                free(job), dp_agent_evaluator_free(ev);
                return dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a worker");
            }
            job = nj, cap = count;
        }
        MPI_Recv(job, count, MPI_INT32_T, d->controller, ms.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        dist_result out;
        work_one(d, ev, job, count, n_ops, setup_error, &out);
        MPI_Send(&out, (int)sizeof out, MPI_BYTE, d->controller, DIST_TAG_RESULT, MPI_COMM_WORLD);
    }
    free(job);
    dp_agent_evaluator_free(ev);
    return DP_STATUS_OK;
}

void dp_dist_attach(dp_dist *d, dp_agent_eval_options *eo) {
    if (d->role != DP_DIST_ROLE_CONTROLLER || d->n_workers == 0) return;
    d->cancel = eo->cancel;
    eo->remote = dist_remote_eval;
    eo->remote_user = d;
}
