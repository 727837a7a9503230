/* The evaluation over worker ranks: a controller's remote function (the
 * placements of an update that missed its cache, handed a few at a time
 * (up to the worker's threads) to whichever worker is free, results
 * stored by sample index) and a worker's loop. Where a placement is evaluated changes nothing: the
 * worker's evaluator has the controller's options, and results depend on
 * the placement and the options only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"

/* Sends worker w the next samples with todo set, from *next on (at most
 * the batch, fewer when the other workers would go without), and posts
 * the receive of their results. 0: none left; -1: out of memory; else the
 * count sent. */
static int dispatch(dp_dist *d, int w, const int32_t *place, int32_t K, int32_t n_ops, const int *todo, int32_t *next,
                    int32_t left) {
    int32_t c = (left + d->n_workers - 1) / d->n_workers;
    if (c > d->batch) c = d->batch;
    if (c < 1) c = 1;
    int64_t need = 1 + (int64_t)c * (1 + n_ops);
    if (need > d->job_cap) {
        int32_t *nj = realloc(d->job, sizeof(int32_t) * (size_t)need);
        if (!nj) return -1;
        d->job = nj, d->job_cap = need;
    }
    int32_t n = 0;
    for (; *next < K && n < c; (*next)++) {
        if (!todo[*next]) continue;
        d->job[1 + n] = *next;
        memcpy(d->job + 1 + c + (int64_t)n * n_ops, place + (int64_t)*next * n_ops, sizeof(int32_t) * (size_t)n_ops);
        n++;
    }
    if (n == 0) return 0;
    d->job[0] = n;
    if (n < c) memmove(d->job + 1 + n, d->job + 1 + c, sizeof(int32_t) * (size_t)n * (size_t)n_ops);
    MPI_Send(d->job, (int)(1 + (int64_t)n * (1 + n_ops)), MPI_INT32_T, d->workers[w], DIST_TAG_JOB, MPI_COMM_WORLD);
    MPI_Irecv(d->slots + (int64_t)w * d->batch, (int)(sizeof(dist_result) * (size_t)n), MPI_BYTE, d->workers[w],
              DIST_TAG_RESULT, MPI_COMM_WORLD, &d->reqs[w]);
    return n;
}

/* The results from worker w (ms: their message) into res by sample index;
 * returns how many. The first failure is kept in st and err. */
static int32_t collect(dp_dist *d, int w, const MPI_Status *ms, int32_t K, dp_agent_eval_result *res, dp_status *st,
                       dp_error *err) {
    int bytes = 0;
    MPI_Get_count(ms, MPI_BYTE, &bytes);
    int32_t n = bytes / (int)sizeof(dist_result);
    for (int32_t i = 0; i < n; i++) {
        const dist_result *x = &d->slots[(int64_t)w * d->batch + i];
        if (x->status || x->k < 0 || x->k >= K) {
            if (!*st)
                *st = dp_error_set(err, x->status ? (dp_status)x->status : DP_STATUS_INVALID, "worker rank %d: %s",
                                   d->workers[w], x->status ? x->reason : "a result for no sample sent");
            continue;
        }
        dp_agent_eval_result *r = &res[x->k];
        r->step_time_s = x->step_time_s;
        r->valid = x->valid;
        r->cancelled = x->cancelled;
        r->overflow = x->overflow;
        memcpy(r->reason, x->reason, sizeof r->reason);
        r->reason[sizeof r->reason - 1] = 0;
    }
    return n;
}

/* The remote function of dp_agent_eval_options (dp_dist_attach): the
 * placements with todo set, a batch at a time to whichever worker is free. */
static dp_status dist_remote_eval(void *user, const int32_t *place, int32_t K, int32_t n_ops, const int *todo,
                                  dp_agent_eval_result *res, int *cancelled, dp_error *err) {
    dp_dist *d = user;
    *cancelled = 0;
    int32_t next = 0, done = 0, want = 0, sent = 0;
    int stop = 0;
    dp_status st = DP_STATUS_OK;
    for (int32_t k = 0; k < K; k++) want += todo[k] != 0;
    for (int w = 0; w < d->n_workers; w++) d->reqs[w] = MPI_REQUEST_NULL;
    for (int w = 0; w < d->n_workers && !stop; w++) {
        int n = dispatch(d, w, place, K, n_ops, todo, &next, want - sent);
        if (n < 0) stop = 1, st = dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a placement message");
        sent += n > 0 ? n : 0;
    }
    for (;;) {
        MPI_Status ms;
        int w = dist_wait_any(d->n_workers, d->reqs, &ms, d->cancel, &stop);
        if (w < 0) break;
        done += collect(d, w, &ms, K, res, &st, err);
        if (st) stop = 1;
        if (stop) continue;
        int n = dispatch(d, w, place, K, n_ops, todo, &next, want - sent);
        if (n < 0) stop = 1, st = dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a placement message");
        sent += n > 0 ? n : 0;
    }
    if (st) return st;
    if (done < want) *cancelled = 1; /* the cancel flag stopped the dispatch */
    return DP_STATUS_OK;
}

/* A job message's failure answered for each of its samples. */
static void answer_failure(const int32_t *job, int32_t c, dp_status status, const char *why, dist_result *out) {
    for (int32_t i = 0; i < c; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].k = job[1 + i];
        out[i].status = (int32_t)status;
        snprintf(out[i].reason, sizeof out[i].reason, "%.180s", why);
    }
}

/* One job of a worker (count int32 in job): its c placements (at most B)
 * evaluated together on the worker's threads, or the failure; returns
 * the results in out. */
static int32_t work_one(dp_agent_evaluator *ev, const int32_t *job, int count, int32_t n_ops, int32_t B,
                        const char *setup_error, dp_agent_eval_result *res, int *cached, dist_result *out) {
    int32_t c = count > 0 ? job[0] : 0;
    if (c < 1 || c > B || (int64_t)count != 1 + (int64_t)c * (1 + n_ops)) {
        memset(out, 0, sizeof *out);
        out->k = -1, out->status = DP_STATUS_INVALID;
        snprintf(out->reason, sizeof out->reason, "a job message not made for this graph and --threads");
        return 1;
    }
    if (!ev) {
        answer_failure(job, c, DP_STATUS_INVALID, setup_error ? setup_error : "could not set up", out);
        return c;
    }
    int cancelled = 0;
    dp_error e;
    dp_error_clear(&e);
    dp_status st = dp_agent_evaluate(ev, job + 1 + c, c, res, cached, &cancelled, &e);
    if (st) {
        answer_failure(job, c, st, e.msg, out);
        return c;
    }
    for (int32_t i = 0; i < c; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].k = job[1 + i];
        out[i].valid = res[i].valid, out[i].cancelled = res[i].cancelled;
        out[i].step_time_s = res[i].step_time_s, out[i].overflow = res[i].overflow;
        memcpy(out[i].reason, res[i].reason, sizeof out[i].reason);
    }
    return c;
}

dp_status dp_dist_work(dp_dist *d, const dp_graph *g, const dp_devices *ds, const dp_agent_eval_options *eo,
                       const char *setup_error, dp_error *err) {
    dp_agent_eval_options weo = *eo;
    weo.cache = 0, weo.remote = NULL, weo.remote_user = NULL, weo.progress = NULL, weo.cancel = NULL;
    dp_agent_evaluator *ev = NULL;
    dp_error se;
    dp_error_clear(&se);
    if (g && !(ev = dp_agent_evaluator_init(g, ds, &weo, &se))) setup_error = se.msg;
    int32_t n_ops = g ? g->n_ops : 0, B = eo->threads > 1 ? eo->threads : 1;
    int64_t cap = 1 + (int64_t)B * (1 + n_ops);
    int32_t *job = malloc(sizeof(int32_t) * (size_t)cap);
    dp_agent_eval_result *res = malloc(sizeof *res * (size_t)B);
    int *cached = malloc(sizeof(int) * (size_t)B);
    dist_result *out = malloc(sizeof *out * (size_t)B);
    dp_status st = DP_STATUS_OK;
    if (!job || !res || !cached || !out) st = dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a worker");
    while (!st) {
        MPI_Status ms;
        dist_probe(d->controller, &ms, NULL);
        int count = 0;
        MPI_Get_count(&ms, MPI_INT32_T, &count);
        if (ms.MPI_TAG == DIST_TAG_STOP) {
            MPI_Recv(NULL, 0, MPI_BYTE, d->controller, DIST_TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
        }
        if (count > cap) { /* more than the batch: taken whole, answered with the failure */
            int32_t *nj = realloc(job, sizeof(int32_t) * (size_t)count);
            if (!nj) {
                st = dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a worker");
                break;
            }
            job = nj, cap = count;
        }
        MPI_Recv(job, count, MPI_INT32_T, d->controller, ms.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int32_t n = work_one(ev, job, count, n_ops, B, setup_error, res, cached, out);
        MPI_Send(out, (int)(sizeof *out * (size_t)n), MPI_BYTE, d->controller, DIST_TAG_RESULT, MPI_COMM_WORLD);
    }
    free(job), free(res), free(cached), free(out);
    dp_agent_evaluator_free(ev);
    return st;
}

void dp_dist_attach(dp_dist *d, dp_agent_eval_options *eo) {
    if (d->role != DP_DIST_ROLE_CONTROLLER || d->n_workers == 0) return;
    int32_t batch = eo->threads > 1 ? eo->threads : 1; /* the workers have the same command line */
    dist_result *slots = malloc(sizeof *slots * (size_t)d->n_workers * (size_t)batch);
    if (!slots) return; /* evaluates on its own threads: the same results */
    free(d->slots);
    d->slots = slots, d->batch = batch;
    d->cancel = eo->cancel;
    eo->remote = dist_remote_eval;
    eo->remote_user = d;
}
