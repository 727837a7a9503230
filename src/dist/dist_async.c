/* The Hierarchical Planner's asynchronous controllers (the Hierarchical Planner paper,
 * "Distributed Training"): controller ranks 1..K each update a replica of
 * the policy on their own samples (their own baseline, Adam moments and
 * workers) and send the change of its parameters to the parameter server,
 * rank 0, which adds each change to the shared parameters as it arrives
 * and answers with the shared parameters as they are then. Rank 0 drives
 * the run: every arriving update is one step of its method, so the log,
 * the best placement and the checkpoints are written there alone. Which
 * update arrives first depends on timing: an async run is not
 * reproducible bit for bit (sync mode is). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dist/dist_internal.h"

/* What a controller's update message starts with; then the samples
 * (dp_run_sample[n_last]), the best placement (int32 [n_ops]) and the
 * change of the parameters (float [count]). */
typedef struct update_head {
    int32_t n_last, have_best, n_groups, groups_used;
    double baseline, best_s, policy_s, eval_s; /* policy_s, eval_s: this update's */
    int64_t cache_lookups, cache_hits;         /* the controller's totals          */
    dp_run_update upd;
} update_head;

/* The server's state. */
typedef struct dist_server {
    dp_dist *d;
    dp_agent *a;
    const volatile sig_atomic_t *cancel;
    float *params;              /* the agent's: the shared parameters              */
    size_t count;
    int32_t n_ops, max_samples, n_cap; /* n_cap: room in last                */
    unsigned char *buf;         /* one update message                              */
    size_t cap;
    dp_run_state st;
    dp_run_sample *last;        /* [max_samples]                                   */
    int32_t *best;              /* [n_ops]                                         */
    int *outstanding;           /* [size] controllers with an update in flight     */
    int64_t *lookups, *hits;    /* [size] each controller's cache totals           */
    int started;
    double t0, elapsed0;
} dist_server;

static size_t update_bytes(int32_t n_last, int32_t n_ops, size_t count) {
    return sizeof(update_head) + sizeof(dp_run_sample) * (size_t)n_last + sizeof(int32_t) * (size_t)n_ops +
           sizeof(float) * count;
}

/* ---- the server --------------------------------------------------------------- */

/* Sends the shared parameters to controller c (its update now in flight). */
static void send_params(dist_server *v, int c) {
    MPI_Send(v->params, (int)v->count, MPI_FLOAT, c, DIST_TAG_PARAMS, MPI_COMM_WORLD);
    v->outstanding[c] = 1;
}

/* The run's state after update message h from controller c: counters,
 * the samples, the best placement when it improved, the sums. */
static void server_account(dist_server *v, int c, const update_head *h, const dp_run_sample *samples,
                           const int32_t *best) {
    dp_run_state *s = &v->st;
    int64_t first = s->samples;
    s->n_last = h->n_last;
    memcpy(v->last, samples, sizeof(dp_run_sample) * (size_t)h->n_last);
    s->elapsed_s = v->elapsed0 + (dp_now_s() - v->t0);
    for (int32_t k = 0; k < h->n_last; k++)
        if (samples[k].valid && samples[k].step_time_s < s->best_s && h->have_best) {
            s->best_s = samples[k].step_time_s;
            s->best_update = s->updates, s->best_sample = first + k, s->best_elapsed_s = s->elapsed_s;
            s->best_by = DP_RUN_BEST_BY_SAMPLE;
            memcpy(v->best, best, sizeof(int32_t) * (size_t)v->n_ops);
            s->best_placement = v->best;
        }
    s->updates++;
    s->samples += h->n_last;
    s->baseline = h->baseline;
    s->upd = h->upd;
    s->n_groups = h->n_groups, s->groups_used = h->groups_used;
    s->policy_s += h->policy_s, s->eval_s += h->eval_s;
    v->lookups[c] = h->cache_lookups, v->hits[c] = h->cache_hits;
    s->cache_lookups = s->cache_hits = 0;
    for (int r = 0; r < v->d->size; r++) s->cache_lookups += v->lookups[r], s->cache_hits += v->hits[r];
}

/* One step: the next update to arrive, added to the shared parameters;
 * the controller gets them back. */
static dp_status server_step(void *self, dp_error *err) {
    dist_server *v = self;
    v->st.n_last = 0;
    if (!v->started) {
        v->started = 1;
        v->t0 = dp_now_s(), v->elapsed0 = v->st.elapsed_s;
        for (int c = 1; c <= v->d->K; c++) send_params(v, c);
    }
    MPI_Status ms;
    if (dist_probe(MPI_ANY_SOURCE, &ms, v->cancel)) return DP_STATUS_OK; /* cancelled: nothing taken */
    int c = ms.MPI_SOURCE, n = 0;
    MPI_Get_count(&ms, MPI_BYTE, &n);
    if ((size_t)n > v->cap) {
        unsigned char *nb = realloc(v->buf, (size_t)n);
        if (!nb) return dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for an update");
        v->buf = nb, v->cap = (size_t)n;
    }
    MPI_Recv(v->buf, n, MPI_BYTE, c, DIST_TAG_UPDATE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    v->outstanding[c] = 0;
    update_head h;
    memcpy(&h, v->buf, sizeof h);
    if (ms.MPI_TAG != DIST_TAG_UPDATE || h.n_last < 0 || h.n_last > v->max_samples ||
        (size_t)n != update_bytes(h.n_last, v->n_ops, v->count))
        return dp_error_set(err, DP_STATUS_INVALID, "dist: a malformed update from rank %d (%d bytes)", c, n);
    const unsigned char *p = v->buf + sizeof h;
    const dp_run_sample *samples = (const dp_run_sample *)p;
    const int32_t *best = (const int32_t *)(p + sizeof(dp_run_sample) * (size_t)h.n_last);
    const float *delta = (const float *)(p + sizeof(dp_run_sample) * (size_t)h.n_last + sizeof(int32_t) * v->n_ops);
    if (h.n_last > v->n_cap) {
        dp_run_sample *nl = realloc(v->last, sizeof(dp_run_sample) * (size_t)h.n_last);
        if (!nl) return dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for an update");
        v->last = nl, v->st.last = nl, v->n_cap = h.n_last;
    }
    if (h.n_last > 0) {
        for (size_t i = 0; i < v->count; i++) v->params[i] += delta[i];
        server_account(v, c, &h, samples, best);
    }
    send_params(v, c);
    return DP_STATUS_OK;
}

static dp_status server_prepare(void *self, int64_t max_iters, dp_error *err) {
    dist_server *v = self;
    dp_status st = dp_agent_pretrain(v->a, max_iters, err);
    const dp_run_state *as = dp_agent_get_state(v->a);
    v->st.prep_done = as->prep_done, v->st.prep_total = as->prep_total, v->st.prep_s = as->prep_s;
    return st;
}

static size_t server_describe_prep(const void *self, char *buf, size_t size) {
    return dp_agent_describe_prep(((const dist_server *)self)->a, buf, size);
}

static const dp_run_state *server_state(const void *self) { return &((const dist_server *)self)->st; }

static dp_status server_save(const void *self, const char *path, dp_error *err) {
    const dist_server *v = self;
    dp_agent_set_progress(v->a, &v->st);
    return dp_agent_save(v->a, path, err);
}

/* Loads the shared policy and the run's counters and best placement. */
static dp_status server_load(void *self, const char *path, dp_error *err) {
    dist_server *v = self;
    dp_status st = dp_agent_load(v->a, path, err);
    if (st) return st;
    const dp_run_state *as = dp_agent_get_state(v->a);
    dp_run_state *s = &v->st;
    *s = *as;
    s->n_last = 0, s->last = v->last;
    s->best_placement = NULL;
    if (as->best_placement) {
        memcpy(v->best, as->best_placement, sizeof(int32_t) * (size_t)v->n_ops);
        s->best_placement = v->best;
    }
    return DP_STATUS_OK;
}

static const dp_method_ops server_ops = {"dist-server", server_step, server_prepare, server_state,
                                         server_save,   server_load, NULL,           server_describe_prep};

/* Makes the server's state (NULL when out of memory). */
static dist_server *server_new(dp_dist *d, const dp_graph *g, dp_agent *a, const volatile sig_atomic_t *cancel) {
    dist_server *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->d = d, v->a = a, v->cancel = cancel;
    v->params = dp_agent_params(a, &v->count);
    const dp_run_state *as = dp_agent_get_state(a);
    v->st = *as;
    v->st.n_last = 0, v->st.best_s = INFINITY, v->st.best_placement = NULL;
    v->st.cache_lookups = v->st.cache_hits = 0;
    v->n_ops = g->n_ops;
    v->max_samples = 1 << 20;
    v->last = malloc(sizeof(dp_run_sample));
    v->n_cap = 1;
    v->best = malloc(sizeof(int32_t) * (size_t)(g->n_ops ? g->n_ops : 1));
    v->outstanding = calloc((size_t)d->size, sizeof(int));
    v->lookups = calloc((size_t)d->size, sizeof(int64_t));
    v->hits = calloc((size_t)d->size, sizeof(int64_t));
    if (!v->last || !v->best || !v->outstanding || !v->lookups || !v->hits) {
        free(v->last), free(v->best), free(v->outstanding), free(v->lookups), free(v->hits), free(v);
        return NULL;
    }
    v->st.last = v->last;
    return v;
}

dp_status dp_dist_server_method(dp_dist *d, const dp_graph *g, dp_agent *a, const volatile sig_atomic_t *cancel,
                                dp_method *out, dp_error *err) {
    if (d->role != DP_DIST_ROLE_SERVER)
        return dp_error_set(err, DP_STATUS_INVALID, "dist: rank %d is not the parameter server", d->rank);
    if (!d->server && !(d->server = server_new(d, g, a, cancel)))
        return dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for the parameter server");
    out->ops = &server_ops, out->self = d->server;
    return DP_STATUS_OK;
}

void dist_server_free(dp_dist *d) {
    dist_server *v = d->server;
    for (int c = 1; c <= d->K; c++) {
        if (v->outstanding[c]) { /* its update in flight: taken, not applied */
            MPI_Status ms;
            dist_probe(c, &ms, NULL);
            int n = 0;
            MPI_Get_count(&ms, MPI_BYTE, &n);
            unsigned char *tmp = malloc(n > 0 ? (size_t)n : 1);
            if (!tmp) MPI_Abort(MPI_COMM_WORLD, 1); /* cannot take it: end the job rather than hang */
            MPI_Recv(tmp, n, MPI_BYTE, c, ms.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            free(tmp);
        }
        MPI_Send(NULL, 0, MPI_BYTE, c, DIST_TAG_STOP, MPI_COMM_WORLD);
    }
    free(v->buf), free(v->last), free(v->best), free(v->outstanding), free(v->lookups), free(v->hits);
    free(v);
    d->server = NULL;
}

/* ---- a controller --------------------------------------------------------------- */

/* The update message of a's last update into buf: its samples, a's best
 * placement, the change of the parameters from old. */
static void pack_update(dp_agent *a, int32_t n_ops, const float *old, double policy_s, double eval_s,
                        unsigned char *buf) {
    const dp_run_state *s = dp_agent_get_state(a);
    size_t count;
    const float *now = dp_agent_params(a, &count);
    update_head h = {s->n_last, s->best_placement != NULL, s->n_groups, s->groups_used, s->baseline, s->best_s,
                     policy_s, eval_s, s->cache_lookups, s->cache_hits, s->upd};
    memcpy(buf, &h, sizeof h);
    unsigned char *p = buf + sizeof h;
    memcpy(p, s->last, sizeof(dp_run_sample) * (size_t)s->n_last);
    p += sizeof(dp_run_sample) * (size_t)s->n_last;
    if (s->best_placement) memcpy(p, s->best_placement, sizeof(int32_t) * (size_t)n_ops);
    else memset(p, 0, sizeof(int32_t) * (size_t)n_ops);
    float *delta = (float *)(p + sizeof(int32_t) * (size_t)n_ops);
    for (size_t i = 0; i < count; i++) delta[i] = now[i] - old[i];
}

dp_status dp_dist_control(dp_dist *d, const dp_graph *g, dp_agent *a, dp_error *err) {
    size_t count;
    dp_agent_params(a, &count);
    const dp_run_state *s = dp_agent_get_state(a);
    float *old = malloc(sizeof(float) * (count ? count : 1));
    size_t cap = 0;
    unsigned char *buf = NULL;
    if (!old) return dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a controller");
    dp_status st = DP_STATUS_OK;
    for (;;) {
        MPI_Status ms;
        dist_probe(0, &ms, NULL);
        if (ms.MPI_TAG == DIST_TAG_STOP) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, DIST_TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
        }
        MPI_Recv(old, (int)count, MPI_FLOAT, 0, DIST_TAG_PARAMS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        dp_agent_params_set(a, old);
        double p0 = s->policy_s, e0 = s->eval_s;
        if ((st = dp_agent_update(a, err))) break;
        size_t n = update_bytes(s->n_last, g->n_ops, count);
        if (n > cap) {
            unsigned char *nb = realloc(buf, n);
            if (!nb) {
                st = dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory for a controller");
                break;
            }
            buf = nb, cap = n;
        }
        pack_update(a, g->n_ops, old, s->policy_s - p0, s->eval_s - e0, buf);
        MPI_Send(buf, (int)n, MPI_BYTE, 0, DIST_TAG_UPDATE, MPI_COMM_WORLD);
    }
    free(buf);
    free(old);
    return st;
}
