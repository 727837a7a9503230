/* The agent's evaluator: runs sampled placements through the simulator on
 * several threads (one workspace per thread), or through an external
 * measuring command, with a cache keyed by the placement. Results never
 * depend on the number of threads: each placement's noise seed is mixed
 * from its own hash, and results are stored by sample index. The options'
 * remote function, when set, evaluates the placements that missed the
 * cache instead of the threads (a distributed run's workers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "common/util.h"
#include "dplace/measure.h"
#include "dplace/placement.h"

typedef struct cache_entry {
    uint64_t h1, h2; /* h1 == 0 && h2 == 0: empty */
    agent_result r;
} cache_entry;

struct dp_agent_evaluator {
    const dp_graph *g;
    const dp_devices *ds;
    dp_agent_eval_options eo;
    uint64_t seed;
    dp_sim *sim;
    int32_t T;                /* threads */
    dp_sim_workspace **ws;    /* [T] one per thread */
    cache_entry *cache;
    int64_t cache_cap, cache_n, lookups, hits;
    char dir[512];
};

static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Two independent 64-bit hashes of a placement. */
static void hash_placement(const int32_t *p, int32_t n, uint64_t *h1, uint64_t *h2) {
    uint64_t a = 0x9e3779b97f4a7c15ULL, b = 0xc2b2ae3d27d4eb4fULL;
    for (int32_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)(uint32_t)p[i] + 1;
        a = (a ^ v) * 0x100000001b3ULL;
        b = mix64(b + v);
    }
    *h1 = mix64(a ^ (uint64_t)n);
    *h2 = b | 1; /* never both zero */
}

agent_eval *agent_eval_init(const dp_graph *g, const dp_devices *ds, const dp_agent_eval_options *eo,
                            uint64_t seed, dp_error *err) {
    agent_eval *e = calloc(1, sizeof *e);
    if (!e) goto nomem;
    e->g = g, e->ds = ds, e->eo = *eo, e->seed = seed;
    e->T = eo->threads < 1 ? 1 : eo->threads;
    snprintf(e->dir, sizeof e->dir, "%s", eo->measure_dir ? eo->measure_dir : "/tmp");
    e->sim = dp_sim_init(g, ds, err);
    if (!e->sim) {
        free(e);
        return NULL;
    }
    e->ws = calloc((size_t)e->T, sizeof *e->ws);
    if (!e->ws) goto nomem;
    for (int32_t t = 0; t < e->T; t++)
        if (!(e->ws[t] = dp_sim_workspace_init(e->sim, err))) {
            agent_eval_free(e);
            return NULL;
        }
    return e;
nomem:
    agent_eval_free(e);
    dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the evaluator");
    return NULL;
}

void agent_eval_free(agent_eval *e) {
    if (!e) return;
    if (e->ws)
        for (int32_t t = 0; t < e->T; t++) dp_sim_workspace_free(e->ws[t]);
    free(e->ws);
    dp_sim_free(e->sim);
    free(e->cache);
    free(e);
}

const dp_sim *agent_eval_sim(const agent_eval *e) { return e->sim; }

void agent_eval_cache_stats(const agent_eval *e, int64_t *lookups, int64_t *hits) {
    *lookups = e->lookups;
    *hits = e->hits;
}

static cache_entry *cache_slot(agent_eval *e, uint64_t h1, uint64_t h2) {
    int64_t mask = e->cache_cap - 1, i = (int64_t)(h1 & (uint64_t)mask);
    while (e->cache[i].h2 && !(e->cache[i].h1 == h1 && e->cache[i].h2 == h2)) i = (i + 1) & mask;
    return &e->cache[i];
}

static int cache_grow(agent_eval *e) {
    int64_t ncap = e->cache_cap ? e->cache_cap * 2 : 1024;
    cache_entry *old = e->cache;
    int64_t ocap = e->cache_cap;
    e->cache = calloc((size_t)ncap, sizeof *e->cache);
    if (!e->cache) {
        e->cache = old;
        return -1;
    }
    e->cache_cap = ncap;
    for (int64_t i = 0; i < ocap; i++)
        if (old[i].h2) *cache_slot(e, old[i].h1, old[i].h2) = old[i];
    free(old);
    return 0;
}

/* One job of a thread: the samples k = t, t + T, ... that missed the cache. */
typedef struct eval_job {
    agent_eval *e;
    int32_t t, K;
    const int32_t *place;
    const uint64_t *h1;
    const int *todo;
    agent_result *res;
    dp_status st;
    dp_error err;
} eval_job;

static void eval_sim_one(agent_eval *e, dp_sim_workspace *ws, const int32_t *p, uint64_t h, agent_result *r,
                         dp_error *err, dp_status *st) {
    dp_sim_options o = e->eo.sim;
    o.record_trace = 0;
    o.seed = mix64(o.seed ^ h);
    dp_sim_result sr;
    dp_status s = dp_sim_run_ws(e->sim, ws, p, &o, &sr, err);
    if (s) {
        *st = s;
        return;
    }
    agent_result_from_sim(&sr, r);
}

void agent_result_from_sim(const dp_sim_result *sr, agent_result *r) {
    r->step_time_s = sr->step_time_s;
    r->valid = sr->valid;
    r->cancelled = 0;
    r->overflow = sr->verdict == DP_SIM_VERDICT_OOM ? dp_sim_result_excess(sr) : 0.0;
    snprintf(r->reason, sizeof r->reason, "%.190s", sr->valid ? "" : sr->reason);
}

static void eval_measure_one(agent_eval *e, int32_t t, const int32_t *p, agent_result *r, dp_error *err,
                             dp_status *st) {
    char path[600];
    snprintf(path, sizeof path, "%s/dplace-measure-%ld-%d.json", e->dir, (long)getpid(), (int)t);
    dp_status s = dp_placement_write_file(path, e->g, e->ds, p, err);
    if (s) {
        *st = s;
        return;
    }
    dp_measure_result mr;
    dp_measure_options mo = dp_measure_options_default(e->eo.measure_timeout_s);
    mo.cancel = e->eo.cancel;
    s = dp_measure_run_opts(e->eo.measure_cmd, path, &mo, &mr, err);
    remove(path);
    if (s) {
        *st = s;
        return;
    }
    r->cancelled = mr.outcome == DP_MEASURE_OUTCOME_CANCELLED;
    r->overflow = 0.0;
    r->valid = mr.outcome == DP_MEASURE_OUTCOME_OK;
    r->step_time_s = r->valid ? mr.step_time_s : NAN;
    if (mr.outcome == DP_MEASURE_OUTCOME_OOM)
        snprintf(r->reason, sizeof r->reason, "oom: %.180s", mr.reason);
    else if (!r->valid)
        snprintf(r->reason, sizeof r->reason, "measure failed: %.170s", mr.reason);
    else
        r->reason[0] = 0;
}

static void *eval_thread(void *arg) {
    eval_job *j = arg;
    agent_eval *e = j->e;
    for (int32_t k = j->t; k < j->K && !j->st; k += e->T) {
        if (!j->todo[k]) continue;
        const int32_t *p = j->place + (int64_t)k * e->g->n_ops;
        if (e->eo.measure_cmd) eval_measure_one(e, j->t, p, &j->res[k], &j->err, &j->st);
        else eval_sim_one(e, e->ws[j->t], p, j->h1[k], &j->res[k], &j->err, &j->st);
    }
    return NULL;
}

/* The results of a batch into the cache: duplicates within the batch copy
 * their first's result, new placements are stored (when the cache is on). */
static dp_status cache_store(agent_eval *e, int32_t K, const uint64_t *h1, const uint64_t *h2, const int *todo,
                             agent_result *res, int *cached, dp_error *err) {
    for (int32_t k = 0; k < K; k++) {
        if (cached[k] == 2) { /* duplicate of an earlier sample of this batch */
            for (int32_t j = 0; j < k; j++)
                if (h1[j] == h1[k] && h2[j] == h2[k]) {
                    res[k] = res[j];
                    break;
                }
            cached[k] = 1;
            e->hits++;
            continue;
        }
        if (!e->eo.cache || cached[k] || !todo[k]) continue;
        if ((e->cache_n + 1) * 2 > e->cache_cap && cache_grow(e))
            return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the evaluation cache");
        cache_entry *c = cache_slot(e, h1[k], h2[k]);
        if (!c->h2) {
            c->h1 = h1[k], c->h2 = h2[k], c->r = res[k];
            e->cache_n++;
        }
    }
    return DP_STATUS_OK;
}

/* The placements with todo[k] set, on this process's threads; then the
 * cache as cache_store does (nothing from a cancelled batch). */
static dp_status eval_local(agent_eval *e, const int32_t *place, int32_t K, const uint64_t *h1, const uint64_t *h2,
                            const int *todo, agent_result *res, int *cached, int *cancelled, dp_error *err) {
    eval_job jobs[e->T];
    for (int32_t t = 0; t < e->T; t++)
        jobs[t] = (eval_job){.e = e, .t = t, .K = K, .place = place, .h1 = h1, .todo = todo, .res = res};
    dp_run_jobs(eval_thread, jobs, sizeof jobs[0], e->T < K ? e->T : K > 1 ? K : 1);
    for (int32_t t = 0; t < e->T; t++)
        if (jobs[t].st) {
            if (err) *err = jobs[t].err;
            return jobs[t].st;
        }
    for (int32_t k = 0; k < K; k++)
        if (todo[k] && res[k].cancelled) *cancelled = 1;
    if (*cancelled) return DP_STATUS_OK; /* cache nothing from an abandoned batch */
    return cache_store(e, K, h1, h2, todo, res, cached, err);
}

dp_status agent_eval_run(agent_eval *e, const int32_t *place, int32_t K, agent_result *res, int *cached,
                         int *cancelled, dp_error *err) {
    *cancelled = 0;
    int32_t n = e->g->n_ops;
    uint64_t h1[K], h2[K];
    int todo[K];
    for (int32_t k = 0; k < K; k++) {
        hash_placement(place + (int64_t)k * n, n, &h1[k], &h2[k]);
        cached[k] = 0;
        todo[k] = 1;
        if (!e->eo.cache) continue;
        e->lookups++;
        if (e->cache_cap) {
            cache_entry *c = cache_slot(e, h1[k], h2[k]);
            if (c->h2) {
                res[k] = c->r;
                cached[k] = 1, todo[k] = 0;
                e->hits++;
                continue;
            }
        }
        /* a duplicate within this batch: evaluate once, copy below */
        for (int32_t j = 0; j < k; j++)
            if (todo[j] && h1[j] == h1[k] && h2[j] == h2[k]) {
                todo[k] = -1 - j;
                break;
            }
        if (todo[k] < 0) todo[k] = 0, cached[k] = 2;
    }
    if (e->eo.remote) {
        dp_status rs = e->eo.remote(e->eo.remote_user, place, K, n, todo, res, cancelled, err);
        if (rs || *cancelled) return rs;
        return cache_store(e, K, h1, h2, todo, res, cached, err);
    }
    return eval_local(e, place, K, h1, h2, todo, res, cached, cancelled, err);
}

dp_agent_evaluator *dp_agent_evaluator_init(const dp_graph *g, const dp_devices *ds, const dp_agent_eval_options *eo,
                                            dp_error *err) {
    return agent_eval_init(g, ds, eo, 0, err);
}

void dp_agent_evaluator_free(dp_agent_evaluator *e) { agent_eval_free(e); }

dp_status dp_agent_evaluate(dp_agent_evaluator *e, const int32_t *place, int32_t K, dp_agent_eval_result *res,
                            int *cached, int *cancelled, dp_error *err) {
    return agent_eval_run(e, place, K, res, cached, cancelled, err);
}
