/* Simulator-guided placement search (include/dplace/search.h,
 * docs/search.md): options, the search object, starts, and the step (every
 * chain's moves, on threads, then the shared best, restarts and the run
 * driver's view). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/place.h"
#include "search/search_internal.h"

/* ---- options ------------------------------------------------------------------------- */

/* The checks of dp_search_init: NULL when o is fine, else what is wrong. */
static const char *options_problem(const dp_search_options *o) {
    if (o->threads < 1 || o->threads > 256) return "threads must be in 1..256";
    if (o->moves < 1 || o->moves > 1000000) return "moves must be in 1..1000000";
    if (!(o->t0 > 0 && o->t0 <= 100)) return "t0 must be in (0, 100]";
    if (!(o->decay > 0 && o->decay <= 1)) return "decay must be in (0, 1]";
    if (!(o->t_min >= 0 && o->t_min <= 1)) return "t-min must be in [0, 1]";
    if (o->restart_steps < 1 || o->sync_steps < 1) return "restart and sync must be >= 1";
    if (!(o->critical >= 0 && o->critical <= 1) || !(o->swap >= 0 && o->swap <= 1))
        return "critical and swap must be in [0, 1]";
    return NULL;
}

/* ---- the object --------------------------------------------------------------------- */

/* Frees chain c's arrays and evaluator. */
static void chain_free(search_chain *c) {
    dp_sim_delta_free(c->d);
    free(c->best), free(c->path), free(c->mv_op), free(c->mv_dev), free(c->tmp), free(c->samples);
}

void dp_search_free(dp_search *s) {
    if (!s) return;
    for (int32_t c = 0; s->chain && c < s->n_chains; c++) chain_free(&s->chain[c]);
    free(s->chain);
    search_units_free(s);
    dp_sim_workspace_free(s->ws);
    free(s->start), free(s->best), free(s->last), free(s->sorted);
    free(s);
}

/* Allocates chain c's arrays and evaluator; seeds it. */
static dp_status chain_init(dp_search *s, int32_t c, dp_error *err) {
    search_chain *ch = &s->chain[c];
    size_t n = (size_t)s->n + 1;
    ch->path_cap = 1024;
    if (!(ch->d = dp_sim_delta_init(s->sim, err))) return err->status;
    if (!(ch->best = malloc(n * sizeof(int32_t))) || !(ch->mv_op = malloc(n * sizeof(int32_t))) ||
        !(ch->mv_dev = malloc(n * sizeof(int32_t))) || !(ch->tmp = malloc(n * sizeof(int32_t))) ||
        !(ch->path = malloc(sizeof(dp_sim_path_step) * (size_t)ch->path_cap)) ||
        !(ch->samples = calloc((size_t)s->opt.moves, sizeof(dp_run_sample))))
        return dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for chain %d", (int)c);
    dp_rng_seed(&ch->rng, s->opt.seed * 0x9E3779B97F4A7C15ULL + (uint64_t)c * 0xD1B54A32D192ED03ULL + 1);
    ch->best_s = INFINITY;
    return DP_STATUS_OK;
}

dp_search *dp_search_init(const dp_graph *g, const dp_devices *ds, const dp_sim *sim, const dp_search_options *opt,
                          dp_error *err) {
    dp_search_options o = opt ? *opt : dp_search_options_default();
    o.units = dp_units_spec_resolve(o.units, g);
    const char *why = options_problem(&o);
    if (why) {
        dp_error_set(err, DP_STATUS_INVALID, "search: %s", why);
        return NULL;
    }
    dp_search *s = calloc(1, sizeof *s);
    size_t n = (size_t)g->n_ops + 1, per_step = (size_t)o.threads * (size_t)o.moves;
    if (!s) {
        dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory");
        return NULL;
    }
    s->g = g, s->ds = ds, s->sim = sim, s->opt = o, s->n = g->n_ops, s->n_chains = o.threads;
    s->state.best_s = INFINITY;
    s->state.best_update = s->state.best_sample = -1;
    s->state.baseline = NAN;
    s->state.final_s = NAN; /* a search has no answer beyond its best */
    dp_status st = DP_STATUS_OK;
    if (!(s->chain = calloc((size_t)o.threads, sizeof *s->chain)) || !(s->start = malloc(n * sizeof(int32_t) * SEARCH_MAX_STARTS)) ||
        !(s->best = malloc(n * sizeof(int32_t))) || !(s->last = calloc(per_step, sizeof(dp_run_sample))) ||
        !(s->sorted = malloc(per_step * sizeof(double))))
        st = dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory");
    if (!st && !(s->ws = dp_sim_workspace_init(sim, err))) st = err->status;
    if (!st) st = search_units_build(s, err);
    for (int32_t c = 0; !st && c < o.threads; c++) st = chain_init(s, c, err);
    if (st) {
        dp_search_free(s);
        return NULL;
    }
    s->state.n_groups = s->level[0].u.n_units;
    s->state.last = s->last;
    return s;
}

dp_status dp_search_add_start(dp_search *s, const char *name, const int32_t *placement, dp_error *err) {
    if (s->begun) return DP_STATUS_OK;
    for (int32_t i = 0; i < s->n; i++)
        if (placement[i] < 0 || placement[i] >= s->ds->n_devices)
            return dp_error_set(err, DP_STATUS_INVALID, "start placement %s: op %d (%s) on device %d, out of range", name,
                                (int)i, s->g->ops[i].name, (int)placement[i]);
    if (s->opt.units.kind == DP_UNITS_MODULE) {
        /* placing modules: a start that splits one runs as its module map
         * would, each module where most of its ops are */
        int32_t *mapped = s->chain[0].tmp; /* the swaps' scratch, unused before the first step */
        dp_units_map_majority(&s->level[0].u, s->ds, s->level[0].mask, placement, mapped);
        placement = mapped;
    }
    dp_sim_result res;
    dp_status st = dp_sim_run_ws(s->sim, s->ws, placement, NULL, &res, err);
    if (st) return st;
    res.link = NULL;
    if (!res.valid && res.verdict != DP_SIM_VERDICT_OOM)
        return dp_error_set(err, DP_STATUS_INVALID, "start placement %s: %s", name, res.reason);
    double sc = dp_sim_score(&res);
    int32_t pos = 0;
    while (pos < s->n_starts && s->start_score[pos] <= sc) pos++;
    if ((pos > 0 && s->start_score[pos - 1] == sc) || pos == SEARCH_MAX_STARTS) return DP_STATUS_OK;
    size_t pn = (size_t)s->n;
    int32_t last = s->n_starts < SEARCH_MAX_STARTS ? s->n_starts : SEARCH_MAX_STARTS - 1;
    for (int32_t k = last; k > pos; k--) { /* make room at pos */
        memcpy(s->start + (size_t)k * pn, s->start + (size_t)(k - 1) * pn, sizeof(int32_t) * pn);
        s->start_score[k] = s->start_score[k - 1], s->start_res[k] = s->start_res[k - 1];
        memcpy(s->start_name[k], s->start_name[k - 1], sizeof s->start_name[k]);
    }
    memcpy(s->start + (size_t)pos * pn, placement, sizeof(int32_t) * pn);
    s->start_score[pos] = sc, s->start_res[pos] = res;
    snprintf(s->start_name[pos], sizeof s->start_name[pos], "%s", name);
    s->n_starts = last + 1;
    return DP_STATUS_OK;
}

dp_status dp_search_add_starts(dp_search *s, const dp_reference *ref, const int32_t *init, const char *init_name,
                               dp_error *err) {
    for (int32_t k = 0; ref && k < ref->n; k++) {
        const dp_place_report *r = &ref->reports[k];
        if (r->status) continue;
        dp_error ignored; /* a start the search refuses (none of the placers makes one) is left out */
        dp_search_add_start(s, dp_place_method_name(r->method), ref->placements + (size_t)k * (size_t)ref->n_ops,
                            &ignored);
    }
    dp_status st = init ? dp_search_add_start(s, init_name, init, err) : DP_STATUS_OK;
    if (st || s->n_starts > 0) return st;
    int32_t *gpu = malloc(sizeof(int32_t) * ((size_t)s->n + 1));
    if (!gpu) return dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory");
    dp_place_options po = dp_place_options_default();
    st = dp_place_gpu(s->g, s->ds, &po, gpu, err);
    if (!st) st = dp_search_add_start(s, "gpu", gpu, err);
    free(gpu);
    return st;
}

int dp_search_offer_best(dp_search *s, const int32_t *placement, dp_error *err) {
    for (int32_t i = 0; i < s->n; i++)
        if (placement[i] < 0 || placement[i] >= s->ds->n_devices) {
            dp_error_set(err, DP_STATUS_INVALID, "search: an offered placement puts op %d on device %d, out of range",
                         (int)i, (int)placement[i]);
            return -1;
        }
    dp_sim_result res;
    if (dp_sim_run_ws(s->sim, s->ws, placement, NULL, &res, err)) return -1;
    if (!res.valid || !(res.step_time_s < s->state.best_s)) return 0;
    memcpy(s->best, placement, sizeof(int32_t) * (size_t)s->n);
    s->have_best = 1;
    s->state.best_s = res.step_time_s, s->state.best_placement = s->best;
    s->state.best_update = s->state.updates > 0 ? s->state.updates - 1 : 0;
    s->state.best_sample = s->state.samples > 0 ? s->state.samples - 1 : 0;
    s->state.best_elapsed_s = s->state.elapsed_s;
    s->state.best_by = s->begun ? DP_RUN_BEST_BY_SEARCH : DP_RUN_BEST_BY_START;
    if (!s->begun) return 1;
    int32_t worst = 0; /* the chain whose own best is worst goes on from it, reheated */
    for (int32_t c = 1; c < s->n_chains; c++)
        if (s->chain[c].best_s > s->chain[worst].best_s) worst = c;
    search_chain *c = &s->chain[worst];
    if (search_chain_set(s, c, s->best, err)) return -1;
    c->best_s = res.step_time_s;
    memcpy(c->best, s->best, sizeof(int32_t) * (size_t)s->n);
    c->temp = s->opt.t0, c->since_better = 0;
    s->restarts++;
    return 1;
}

const int32_t *dp_search_start(const dp_search *s, const char **name, dp_sim_result *res) {
    if (s->n_starts == 0) return NULL;
    if (name) *name = s->start_name[0];
    if (res) *res = s->start_res[0];
    return s->start;
}

const dp_run_state *dp_search_get_state(const dp_search *s) { return &s->state; }

void dp_search_get_stats(const dp_search *s, dp_search_stats *out) {
    memset(out, 0, sizeof *out);
    for (int32_t c = 0; c < s->n_chains; c++) {
        const dp_search_stats *x = &s->chain[c].stats;
        out->proposed += x->proposed, out->simulated += x->simulated, out->oom_rejected += x->oom_rejected;
        out->accepted += x->accepted, out->improved += x->improved, out->critical += x->critical;
    }
    out->restarts = s->restarts;
    out->n_levels = s->n_levels;
    _Static_assert(sizeof out->n_units / sizeof out->n_units[0] == SEARCH_LEVEL_COUNT, "units per level kind");
    for (int32_t k = 0; k < s->n_levels; k++) out->n_units[s->level_kind[k]] = s->level[k].u.n_units;
}

const int32_t *dp_search_chain_placement(const dp_search *s, int32_t c, dp_sim_result *res) {
    if (!s->begun || c < 0 || c >= s->n_chains) return NULL;
    if (res) *res = *dp_sim_delta_base_result(s->chain[c].d);
    return dp_sim_delta_base(s->chain[c].d);
}

/* ---- the step ----------------------------------------------------------------------- */

/* Chain c's moves of one step: propose, check memory, simulate, accept by
 * the Metropolis rule; then anneal. Errors in c->st. */
static void chain_step(dp_search *s, search_chain *c) {
    c->n_samples = 0, c->step_best_k = -1, c->st = DP_STATUS_OK;
    dp_sim_result res;
    for (int32_t m = 0; m < s->opt.moves && !c->st; m++) {
        int critical = 0;
        int32_t n = search_propose(s, c, &critical);
        c->stats.proposed++, c->stats.critical += critical;
        if (c->st || n == 0) continue;
        if (dp_sim_delta_surely_oom(c->d, n, c->mv_op, c->mv_dev)) {
            c->stats.oom_rejected++;
            continue;
        }
        if ((c->st = dp_sim_delta_try(c->d, n, c->mv_op, c->mv_dev, &res, &c->err))) break;
        c->stats.simulated++;
        double sc = dp_sim_score(&res), rel = (sc - c->cur_score) / c->cur_score;
        double u = dp_rng_uniform(&c->rng);
        int accept = sc <= c->cur_score || (isfinite(sc) && u < exp(-rel / c->temp));
        dp_run_sample *x = &c->samples[c->n_samples++];
        x->step_time_s = res.step_time_s, x->valid = res.valid, x->reward = -res.step_time_s;
        x->used = accept, x->cached = 0;
        snprintf(x->reason, sizeof x->reason, "%.191s", res.reason);
        if (!accept) continue;
        if ((c->st = dp_sim_delta_accept(c->d, &c->err))) break;
        c->stats.accepted++, c->stats.improved += sc < c->cur_score;
        c->cur_score = sc, c->path_ok = 0;
        if (res.valid && res.step_time_s < c->best_s) {
            c->best_s = res.step_time_s, c->step_best_k = c->n_samples - 1, c->since_better = -1;
            memcpy(c->best, dp_sim_delta_base(c->d), sizeof(int32_t) * (size_t)s->n);
        }
    }
    c->since_better++;
    c->temp = fmax(c->temp * s->opt.decay, s->opt.t0 * s->opt.t_min);
}

typedef struct chain_job {
    dp_search *s;
    search_chain *c;
} chain_job;

static void *chain_thread(void *arg) {
    chain_job *j = arg;
    chain_step(j->s, j->c);
    return NULL;
}

/* Every chain's step, each on a thread of its own (dp_run_jobs). */
static void chains_step(dp_search *s) {
    int32_t T = s->n_chains; /* >= 1: options_problem */
    chain_job jobs[T];
    for (int32_t c = 0; c < T; c++) jobs[c] = (chain_job){s, &s->chain[c]};
    dp_run_jobs(chain_thread, jobs, sizeof jobs[0], T);
}

/* Sets chain c to the c-th best start (round robin), the first step. */
static dp_status begin(dp_search *s, dp_error *err) {
    if (s->n_starts == 0) return dp_error_set(err, DP_STATUS_INVALID, "search: no start placement given");
    for (int32_t c = 0; c < s->n_chains; c++) {
        search_chain *ch = &s->chain[c];
        int32_t k = c % s->n_starts;
        const int32_t *p = s->start + (size_t)k * (size_t)s->n;
        dp_status st = search_chain_set(s, ch, p, err);
        if (st) return st;
        ch->temp = s->opt.t0;
        ch->best_s = s->start_res[k].valid ? s->start_res[k].step_time_s : INFINITY;
        memcpy(ch->best, p, sizeof(int32_t) * (size_t)s->n);
    }
    s->next_start = s->n_chains < s->n_starts ? s->n_chains : s->n_starts;
    if (s->start_res[0].valid) {
        memcpy(s->best, s->start, sizeof(int32_t) * (size_t)s->n);
        s->have_best = 1, s->state.best_s = s->start_res[0].step_time_s;
        s->state.best_update = 0, s->state.best_sample = 0, s->state.best_elapsed_s = 0;
        s->state.best_by = DP_RUN_BEST_BY_START;
        s->state.best_placement = s->best;
    }
    s->begun = 1;
    return DP_STATUS_OK;
}

/* Restarts chain c, reheated: from the next start no chain has taken, else
 * from the best placement (the best start while none is valid). */
static dp_status restart(dp_search *s, search_chain *c, dp_error *err) {
    if (s->next_start < s->n_starts) {
        int32_t k = s->next_start++;
        const int32_t *p = s->start + (size_t)k * (size_t)s->n;
        dp_status st = search_chain_set(s, c, p, err);
        if (st) return st;
        c->best_s = s->start_res[k].valid ? s->start_res[k].step_time_s : INFINITY;
        memcpy(c->best, p, sizeof(int32_t) * (size_t)s->n);
        c->temp = s->opt.t0, c->since_better = 0;
        s->restarts++;
        return DP_STATUS_OK;
    }
    dp_status st = search_chain_set(s, c, s->have_best ? s->best : s->start, err);
    if (st) return st;
    if (s->have_best) {
        c->best_s = s->state.best_s;
        memcpy(c->best, s->best, sizeof(int32_t) * (size_t)s->n);
    }
    c->temp = s->opt.t0, c->since_better = 0;
    s->restarts++;
    return DP_STATUS_OK;
}

/* After the chains' step: the samples in the run driver's view, the shared
 * best, the step's figures. */
static void collect(dp_search *s, int64_t samples_before) {
    dp_run_state *st = &s->state;
    int32_t k = 0, nv = 0;
    double sum = 0;
    for (int32_t c = 0; c < s->n_chains; c++) {
        search_chain *ch = &s->chain[c];
        if (ch->step_best_k >= 0 && ch->best_s < st->best_s) {
            st->best_s = ch->best_s, st->best_update = st->updates, st->best_sample = samples_before + k + ch->step_best_k;
            st->best_by = DP_RUN_BEST_BY_SEARCH;
            memcpy(s->best, ch->best, sizeof(int32_t) * (size_t)s->n);
            s->have_best = 1, st->best_placement = s->best;
        }
        for (int32_t j = 0; j < ch->n_samples; j++, k++) {
            s->last[k] = ch->samples[j];
            if (ch->samples[j].valid) s->sorted[nv++] = ch->samples[j].step_time_s, sum += ch->samples[j].step_time_s;
        }
    }
    st->n_last = k, st->samples += k;
    dp_run_update *u = &st->upd;
    u->samples = k, u->valid = nv, u->cache_hits = 0;
    u->mean_s = nv ? sum / nv : NAN;
    for (int32_t i = 1; i < nv; i++) /* insertion sort: a step's moves are few */
        for (int32_t j = i; j > 0 && s->sorted[j] < s->sorted[j - 1]; j--) {
            double t = s->sorted[j];
            s->sorted[j] = s->sorted[j - 1], s->sorted[j - 1] = t;
        }
    u->median_s = nv ? (nv % 2 ? s->sorted[nv / 2] : 0.5 * (s->sorted[nv / 2 - 1] + s->sorted[nv / 2])) : NAN;
    u->entropy[0] = u->entropy[1] = u->adv_mean = u->adv_std = NAN;
    u->grad_norm[0] = u->grad_norm[1] = u->kl = u->elite_s = NAN;
    u->elite_sims = 0;
}

/* The restarts due after step `updates`: every sync_steps steps, of the
 * chains that found nothing better in that time, the one whose best is
 * worst (when it is worse than the best found); and each chain without a
 * better placement for restart_steps steps. */
static dp_status restarts_due(dp_search *s, dp_error *err) {
    dp_status st = DP_STATUS_OK;
    if (s->n_chains > 1 && s->state.updates % s->opt.sync_steps == 0 && s->have_best) {
        int32_t worst = -1;
        for (int32_t c = 0; c < s->n_chains; c++)
            if (s->chain[c].since_better >= s->opt.sync_steps && (worst < 0 || s->chain[c].best_s > s->chain[worst].best_s))
                worst = c;
        if (worst >= 0 && s->chain[worst].best_s > s->state.best_s) st = restart(s, &s->chain[worst], err);
    }
    for (int32_t c = 0; !st && c < s->n_chains; c++)
        if (s->chain[c].since_better >= s->opt.restart_steps) st = restart(s, &s->chain[c], err);
    return st;
}

/* The method's step: every chain's moves, then the shared best and the
 * restarts. */
static dp_status search_step(void *self, dp_error *err) {
    dp_search *s = self;
    dp_status st = s->begun ? DP_STATUS_OK : begin(s, err);
    if (st) return st;
    double t0 = dp_now_s();
    int64_t before = s->state.samples;
    double best_before = s->state.best_s;
    chains_step(s);
    for (int32_t c = 0; c < s->n_chains; c++)
        if (s->chain[c].st) {
            *err = s->chain[c].err;
            return s->chain[c].st;
        }
    collect(s, before);
    s->state.updates++;
    double dt = dp_now_s() - t0;
    s->state.elapsed_s += dt, s->state.eval_s += dt;
    if (s->state.best_s < best_before) s->state.best_elapsed_s = s->state.elapsed_s;
    return restarts_due(s, err);
}

static const dp_run_state *search_state(const void *self) { return &((const dp_search *)self)->state; }

static const dp_method_ops search_ops = {"search",    search_step, NULL, search_state, search_save,
                                         search_load, NULL,        NULL};

dp_method dp_search_method(dp_search *s) { return (dp_method){&search_ops, s}; }
