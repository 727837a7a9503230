/* One optimisation job (include/dplace/optimize.h): the reference
 * placements, the agent or the search through the run driver, the search
 * after a learned agent, the trace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/nn.h"
#include "dplace/optimize.h"
#include "dplace/placement.h"
#include "dplace/plot.h"

struct dp_optimize {
    dp_optimize_options o;
    dp_sim *sim;           /* references, search starts, the trace          */
    dp_reference ref;
    dp_agent *agent;       /* the method: an agent, or                       */
    dp_search *search;     /* the search                                      */
    dp_search *after;      /* search-after's, once run                        */
    dp_method method;      /* as run (wrapped by the caller's hook)          */
    dp_run_result result;
    int64_t walk_sims;     /* the agent's elite walks' simulations, here      */
    dp_units_spec units;   /* what every method places, resolved for g       */
    double train_s;        /* the method's share of max_seconds               */
    char log_updates[4096], log_search[4096];
};

dp_optimize_options dp_optimize_options_default(void) {
    dp_optimize_options o;
    memset(&o, 0, sizeof o);
    dp_settings_preset("hp", &o.settings);
    o.settings.agent.units = o.settings.search.units = (dp_units_spec){DP_UNITS_AUTO, 0};
    o.seed = 1, o.threads = 1;
    o.max_updates = o.max_placements = -1, o.max_seconds = -1;
    o.checkpoint_every = 50;
    o.eval = dp_agent_eval_options_default();
    return o;
}

void dp_optimize_free(dp_optimize *op) {
    if (!op) return;
    dp_search_free(op->after);
    dp_search_free(op->search);
    dp_agent_free(op->agent);
    dp_reference_free(&op->ref);
    dp_sim_free(op->sim);
    free(op);
}

/* X.csv (or X) and its sibling X<suffix>.csv, into buf. */
static void sibling(const char *path, const char *suffix, char *buf, size_t size) {
    size_t n = strlen(path);
    int cut = n > 4 && !strcmp(path + n - 4, ".csv") ? 4 : 0;
    snprintf(buf, size, "%.*s%s.csv", (int)(n - (size_t)cut), path, suffix);
}

/* The checks across options that the parts do not make themselves. */
static dp_status check_options(const dp_optimize_options *o, dp_error *err) {
    if (!o->g || !o->ds) return dp_error_set(err, DP_STATUS_INVALID, "optimize: no graph or no device set");
    if (o->threads < 1 || o->threads > 256)
        return dp_error_set(err, DP_STATUS_INVALID, "optimize: threads must be in 1..256, not %d", (int)o->threads);
    if (o->max_updates >= 0 && o->max_placements >= 0)
        return dp_error_set(err, DP_STATUS_INVALID, "optimize: give one of a budget in updates and in placements");
    if (o->init_policy_path && o->resume_path)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "optimize: --init starts a new run from another's networks; --resume continues one: give "
                            "one of them");
    double after = o->search ? 0 : o->settings.search_after_s;
    if (after > 0 && o->eval.measure_cmd)
        return dp_error_set(err, DP_STATUS_INVALID, "optimize: search-after searches with the simulator; not with a "
                                                    "measuring command (--measure)");
    if (after > 0 && o->max_seconds > 0 && !(o->max_seconds > after))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "optimize: the time budget (%gs) must be longer than search-after (%gs), which it "
                            "includes",
                            o->max_seconds, after);
    if (!o->search && o->init_placement)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "optimize: a start placement is the search's (--agent search); search-after starts from "
                            "the agent's best");
    dp_units_spec u = o->search ? o->settings.search.units : o->settings.agent.units;
    if (u.kind == DP_UNITS_MODULE && !dp_units_has_modules(o->g))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "optimize: graph \"%s\" has no modules to place (units by module are for PyTorch steps "
                            "exported by scripts/dplace-export-torch): use --units op",
                            o->g->name);
    return DP_STATUS_OK;
}

dp_optimize *dp_optimize_init(const dp_optimize_options *opt, dp_error *err) {
    dp_status st = check_options(opt, err);
    if (st) return NULL;
    dp_optimize *op = calloc(1, sizeof *op);
    if (!op) {
        dp_error_set(err, DP_STATUS_NOMEM, "optimize: out of memory");
        return NULL;
    }
    op->o = *opt;
    dp_optimize_options *o = &op->o;
    /* one granularity for the method, search-after and the baselines */
    op->units = dp_units_spec_resolve(o->search ? o->settings.search.units : o->settings.agent.units, o->g);
    o->settings.search.units = o->settings.agent.units = op->units;
    o->settings.search.seed = o->seed, o->settings.search.threads = o->threads;
    o->eval.threads = o->threads, o->eval.sim.seed = o->seed;
    if (!o->eval.expert) o->eval.expert = o->expert;
    if (!o->eval.cancel) o->eval.cancel = o->cancel;
    dp_nn_set_threads((int)o->threads); /* the policy's products */
    double after = o->search ? 0 : o->settings.search_after_s;
    op->train_s = o->max_seconds > 0 ? o->max_seconds - after : o->max_seconds;
    if (!(op->sim = dp_sim_init(o->g, o->ds, err))) goto fail;
    dp_reference_options ro = dp_reference_options_default();
    ro.methods = o->baselines, ro.n_methods = o->n_baselines;
    ro.place.expert = o->expert;
    ro.place.units = op->units;
    if ((st = dp_reference_compute(op->sim, o->g, o->ds, &ro, &op->ref, err))) goto fail;
    if (o->search) {
        if (!(op->search = dp_search_init(o->g, o->ds, op->sim, &o->settings.search, err))) goto fail;
        if ((st = dp_search_add_starts(op->search, &op->ref, o->init_placement,
                                       o->init_placement_name ? o->init_placement_name : "start", err)))
            goto fail;
        op->method = dp_search_method(op->search);
    } else {
        if (!(op->agent = dp_agent_init(o->g, o->ds, &o->settings.agent, &o->eval, o->seed, err))) goto fail;
        op->method = dp_agent_method(op->agent);
    }
    if (o->wrap && (st = o->wrap(o->wrap_user, op->agent, op->search, &op->method, err))) goto fail;
    if (o->init_policy_path && op->agent && (st = dp_agent_load_policy(op->agent, o->init_policy_path, err)))
        goto fail;
    if (o->log_path) {
        sibling(o->log_path, ".updates", op->log_updates, sizeof op->log_updates);
        sibling(o->log_path, ".search", op->log_search, sizeof op->log_search);
    }
    return op;
fail:
    dp_optimize_free(op);
    return NULL;
}

/* The reference lines of the training curve. */
static int plot_lines(const dp_reference *r, dp_plot_line *lines, char *best_label, size_t size) {
    int nl = 0;
    if (r->gpu_valid) lines[nl++] = (dp_plot_line){"single GPU", r->gpu_s};
    if (r->expert_valid) lines[nl++] = (dp_plot_line){"expert", r->expert_s};
    if (r->best >= 0) {
        snprintf(best_label, size, "best baseline (%s)", r->best_name);
        lines[nl++] = (dp_plot_line){best_label, r->best_s};
    }
    return nl;
}

/* The run driver's hooks, passed on with the phase and the method. */
typedef struct relay {
    dp_optimize *op;
    const dp_optimize_hooks *h;
    dp_optimize_phase phase;
    dp_method m;
} relay;

static void relay_prepared(void *user, const dp_run_state *s) {
    relay *r = user;
    if (r->h && r->h->prepared) r->h->prepared(r->h->user, r->phase, r->m, s);
}

static void relay_stepped(void *user, const dp_run_state *s) {
    relay *r = user;
    if (s->n_last > 0 && r->phase == DP_OPTIMIZE_TRAIN && r->op->agent) r->op->walk_sims += s->upd.elite_sims;
    if (r->h && r->h->stepped) r->h->stepped(r->h->user, r->phase, r->m, s);
}

/* Runs m through the run driver: the method's run (phase TRAIN: the
 * budgets, checkpoints, logs and curve of the options), or search-after's
 * (its time, its log beside the agent's, no checkpoint, no curve). */
static dp_status run_phase(dp_optimize *op, dp_method m, dp_optimize_phase phase, const dp_optimize_hooks *h,
                           dp_run_result *rr, dp_error *err) {
    const dp_optimize_options *o = &op->o;
    dp_run_options ro = dp_run_options_default();
    ro.g = o->g, ro.ds = o->ds;
    ro.best_path = o->best_path;
    ro.cancel = o->cancel;
    dp_plot_line lines[3];
    char best_label[96], title[256];
    if (phase == DP_OPTIMIZE_TRAIN) {
        int none = o->max_updates < 0 && o->max_placements < 0 && op->train_s < 0;
        ro.max_updates = none ? (o->search ? 2000 : 1000) : o->max_updates;
        ro.max_samples = o->max_placements;
        ro.max_seconds = op->train_s;
        ro.log_path = o->log_path, ro.update_log_path = o->log_path ? op->log_updates : NULL;
        ro.checkpoint_path = o->checkpoint_path, ro.checkpoint_every = o->checkpoint_every;
        ro.resume_path = o->resume_path;
        snprintf(title, sizeof title, "%s on %s: agent %s", o->g->name, o->ds->name,
                 o->search ? "search" : o->settings.agent.preset);
        ro.plot_path = o->plot_path, ro.plot_title = title;
        ro.plot_lines = lines, ro.n_plot_lines = plot_lines(&op->ref, lines, best_label, sizeof best_label);
    } else {
        ro.max_updates = ro.max_samples = -1, ro.max_seconds = o->settings.search_after_s;
        ro.log_path = o->log_path ? op->log_search : NULL;
    }
    relay r = {op, h, phase, m};
    dp_run_hooks hooks = {&r, relay_prepared, relay_stepped};
    const dp_run_state *s = m.ops->state(m.self);
    if (h && h->begin) h->begin(h->user, phase, m, s);
    dp_status st = dp_run(m, &ro, &hooks, rr, err);
    if (!st && h && h->end) h->end(h->user, phase, m, s);
    return st;
}

/* Search-after: the search from its usual starts (the references') and
 * the method's best placement, named "learned": its chains start from the
 * best starts in turn, so the learned best is searched from beside the
 * baselines' best, and the better basin wins. */
static dp_status search_after(dp_optimize *op, const dp_optimize_hooks *h, dp_error *err) {
    const dp_optimize_options *o = &op->o;
    const dp_run_state *s = op->method.ops->state(op->method.self);
    if (o->search || o->settings.search_after_s <= 0 || !s->best_placement || (o->cancel && *o->cancel))
        return DP_STATUS_OK;
    if (!(op->after = dp_search_init(o->g, o->ds, op->sim, &o->settings.search, err))) return err->status;
    dp_status st = dp_search_add_starts(op->after, &op->ref, s->best_placement, "learned", err);
    if (st) return st;
    dp_run_result rr;
    return run_phase(op, dp_search_method(op->after), DP_OPTIMIZE_SEARCH_AFTER, h, &rr, err);
}

/* The best placement file again, saying its granularity, when the job
 * placed modules (the run driver writes placements without it). */
static dp_status write_units(dp_optimize *op, dp_error *err) {
    const dp_run_state *s = dp_optimize_final_state(op);
    if (!op->o.best_path || !s->best_placement || op->units.kind != DP_UNITS_MODULE) return DP_STATUS_OK;
    return dp_units_write_placement(op->o.best_path, op->o.g, op->o.ds, s->best_placement, op->units, err);
}

/* The timeline of the job's best placement, when asked. */
static dp_status write_trace(dp_optimize *op, dp_error *err) {
    const dp_run_state *s = dp_optimize_final_state(op);
    if (!op->o.trace_path || !s->best_placement) return DP_STATUS_OK;
    dp_sim_options so = dp_sim_options_default();
    so.record_trace = 1;
    dp_sim_result res;
    dp_status st = dp_sim_run(op->sim, s->best_placement, &so, &res, err);
    return st ? st : dp_trace_write(op->sim, op->o.trace_path, err);
}

dp_status dp_optimize_run(dp_optimize *op, const dp_optimize_hooks *h, dp_error *err) {
    dp_status st = run_phase(op, op->method, DP_OPTIMIZE_TRAIN, h, &op->result, err);
    if (!st) st = search_after(op, h, err);
    if (!st) st = write_units(op, err);
    if (!st) st = write_trace(op, err);
    return st;
}

const dp_reference *dp_optimize_reference(const dp_optimize *op) { return &op->ref; }
dp_agent *dp_optimize_agent(const dp_optimize *op) { return op->agent; }
dp_search *dp_optimize_search(const dp_optimize *op) { return op->search; }
dp_search *dp_optimize_search_after(const dp_optimize *op) { return op->after; }
dp_method dp_optimize_method(const dp_optimize *op) { return op->method; }
const dp_run_result *dp_optimize_result(const dp_optimize *op) { return &op->result; }
int64_t dp_optimize_walk_simulations(const dp_optimize *op) { return op->walk_sims; }
dp_sim *dp_optimize_sim(const dp_optimize *op) { return op->sim; }
dp_units_spec dp_optimize_units(const dp_optimize *op) { return op->units; }

const dp_run_state *dp_optimize_state(const dp_optimize *op) { return op->method.ops->state(op->method.self); }

const dp_run_state *dp_optimize_final_state(const dp_optimize *op) {
    const dp_run_state *a = op->after ? dp_search_get_state(op->after) : NULL;
    return a && a->best_placement ? a : dp_optimize_state(op);
}
