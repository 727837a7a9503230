/* One optimisation job (include/dplace/optimize.h): the reference
 * placements, the agent or the search through the run driver, the search
 * after a learned agent, the trace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/nn.h"
#include "dplace/optimize.h"
#include "dplace/placement.h"

struct dp_optimize {
    dp_optimize_options o;
    dp_optimize_plan plan; /* the options judged; units resolved for g      */
    dp_sim *sim;           /* references, search starts, the trace          */
    dp_reference ref;
    dp_agent *agent;       /* the method: an agent, or                       */
    dp_search *search;     /* the search                                      */
    dp_pretrained *pretrained; /* or the pretrained placer                    */
    dp_search *after;      /* search-after's, once run                        */
    dp_method method;      /* as run (wrapped by the caller's hook)          */
    dp_run_result result;
    int64_t walk_sims;     /* the agent's elite walks' simulations, here      */
    dp_units_spec units;   /* what every method places, resolved for g       */
    dp_run_curve *curve;   /* both phases' samples, for the plot              */
    double after_x;        /* where search-after's samples begin on it       */
    double start_s;        /* when the run began, for a --time that holds both */
    int interrupted;       /* the cancel flag stopped a phase                 */
    char log_updates[4096], log_search[4096];
};

dp_optimize_options dp_optimize_options_default(void) {
    dp_optimize_options o;
    memset(&o, 0, sizeof o);
    o.agent = "hp";
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
    dp_pretrained_free(op->pretrained);
    dp_reference_free(&op->ref);
    dp_sim_free(op->sim);
    dp_run_curve_free(op->curve);
    free(op);
}

/* X.csv (or X) and its sibling X<suffix>.csv, into buf. */
static void sibling(const char *path, const char *suffix, char *buf, size_t size) {
    size_t n = strlen(path);
    int cut = n > 4 && !strcmp(path + n - 4, ".csv") ? 4 : 0;
    snprintf(buf, size, "%.*s%s.csv", (int)(n - (size_t)cut), path, suffix);
}

/* The checks that need the graph (the rest: dp_optimize_prepare). */
static dp_status check_graph(const dp_optimize_options *o, const dp_optimize_plan *p, dp_error *err) {
    if (!o->g || !o->ds) return dp_error_set(err, DP_STATUS_INVALID, "optimize: no graph or no device set");
    if (p->units.kind == DP_UNITS_MODULE && !dp_units_has_modules(o->g))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "optimize: graph \"%s\" has no modules to place (units by module are for PyTorch steps "
                            "exported by scripts/dplace-export-torch): use units op",
                            o->g->name);
    return DP_STATUS_OK;
}

/* The references, and the method: the search from their starts, or the
 * agent (wrapped by the caller's hook, from --init's networks). */
static dp_status build_method(dp_optimize *op, dp_error *err) {
    dp_optimize_options *o = &op->o;
    dp_settings *st = &op->plan.settings;
    dp_reference_options ro = dp_reference_options_default();
    if (!op->plan.all_baselines) ro.methods = op->plan.baselines, ro.n_methods = op->plan.n_baselines;
    ro.place.expert = o->expert;
    ro.place.units = op->units;
    ro.threads = (int32_t)o->threads; /* the placers that do not depend on each other, at once */
    dp_status s = dp_reference_compute(op->sim, o->g, o->ds, &ro, &op->ref, err);
    if (s) return s;
    if (op->plan.search) {
        if (!(op->search = dp_search_init(o->g, o->ds, op->sim, &st->search, err))) return err->status;
        if ((s = dp_search_add_starts(op->search, &op->ref, o->init_placement,
                                      o->init_placement_name ? o->init_placement_name : "start", err)))
            return s;
        op->method = dp_search_method(op->search);
    } else if (op->plan.pretrained) {
        /* --init names a policy file to start from; else the shipped one */
        dp_pretrained_policy *pol = o->init_policy_path ? dp_pretrained_policy_load(o->init_policy_path, err)
                                                        : dp_pretrained_policy_default(err);
        if (!pol || !(op->pretrained = dp_pretrained_init(o->g, o->ds, pol, &st->pretrained, &o->eval, err)))
            return err->status;
        op->method = dp_pretrained_method(op->pretrained);
        return DP_STATUS_OK;
    } else {
        if (!(op->agent = dp_agent_init(o->g, o->ds, &st->agent, &o->eval, (uint64_t)o->seed, err)))
            return err->status;
        op->method = dp_agent_method(op->agent);
    }
    if (o->wrap && (s = o->wrap(o->wrap_user, op->agent, op->search, &op->method, err))) return s;
    if (o->init_policy_path && op->agent && (s = dp_agent_load_policy(op->agent, o->init_policy_path, err)))
        return s;
    return DP_STATUS_OK;
}

dp_optimize *dp_optimize_init(const dp_optimize_options *opt, dp_error *err) {
    dp_optimize_plan plan;
    if (dp_optimize_prepare(opt, &plan, err) || check_graph(opt, &plan, err)) return NULL;
    dp_optimize *op = calloc(1, sizeof *op);
    if (!op || !(op->curve = dp_run_curve_init())) {
        free(op);
        dp_error_set(err, DP_STATUS_NOMEM, "optimize: out of memory");
        return NULL;
    }
    op->o = *opt;
    op->plan = plan;
    dp_optimize_options *o = &op->o;
    /* one granularity for the method, search-after and the baselines */
    op->units = op->plan.units = dp_units_spec_resolve(plan.units, o->g);
    op->plan.settings.search.units = op->plan.settings.agent.units = op->units;
    o->eval.threads = (int32_t)o->threads, o->eval.sim.seed = (uint64_t)o->seed;
    if (!o->eval.expert) o->eval.expert = o->expert;
    if (!o->eval.cancel) o->eval.cancel = o->cancel;
    dp_nn_set_threads((int)o->threads); /* the policy's products */
    if (!(op->sim = dp_sim_init(o->g, o->ds, err)) || build_method(op, err)) goto fail;
    if (o->log_path) {
        sibling(o->log_path, ".updates", op->log_updates, sizeof op->log_updates);
        sibling(o->log_path, ".search", op->log_search, sizeof op->log_search);
    }
    return op;
fail:
    dp_optimize_free(op);
    return NULL;
}

/* The job's curve as an SVG: the reference lines, a marker where
 * search-after began, the job's best labelled as the summary prints it. */
static dp_status write_plot(dp_optimize *op, dp_error *err) {
    const dp_optimize_options *o = &op->o;
    const dp_reference *r = &op->ref;
    if (!o->plot_path) return DP_STATUS_OK;
    dp_plot_line lines[3];
    int nl = 0;
    char base_label[96], title[256], best_label[64] = "";
    if (r->gpu_valid) lines[nl++] = (dp_plot_line){"single GPU", r->gpu_s};
    if (r->expert_valid) lines[nl++] = (dp_plot_line){"expert", r->expert_s};
    if (r->best >= 0) {
        snprintf(base_label, sizeof base_label, "best baseline (%s)", r->best_name);
        lines[nl++] = (dp_plot_line){base_label, r->best_s};
    }
    snprintf(title, sizeof title, "%s on %s: agent %s%s", o->g->name, o->ds->name,
             op->plan.search ? "search" : op->plan.settings.agent.preset, op->after ? ", then the search" : "");
    dp_optimize_best b;
    dp_optimize_get_best(op, &b);
    if (isfinite(b.step_time_s)) snprintf(best_label, sizeof best_label, "%.6f s", b.step_time_s);
    dp_plot_marker mark = {"search after", op->after_x};
    dp_run_plot p = {title, lines, nl, &mark, op->after ? 1 : 0, best_label[0] ? best_label : NULL};
    return dp_run_curve_write_svg(op->curve, o->plot_path, &p, err);
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

/* Search-after's seconds: with a --time budget, all that the budget has
 * left when training ends (more than its own when training stopped short
 * of its share, less when it ran past: an update is never cut short), so
 * that a job takes its whole budget and is compared with the search alone
 * at the same total time; without one, its own. 0 when the job has no
 * search-after. Never below 0: the run driver reads a negative
 * max_seconds as no limit, and the budget can run out between
 * search_after's check and the run (the search's set-up takes time). */
static double after_budget(const dp_optimize *op) {
    if (!(op->plan.after_s > 0)) return 0;
    if (!(op->o.max_seconds > 0)) return op->plan.after_s;
    return fmax(0, op->o.max_seconds - (dp_now_s() - op->start_s));
}

/* Runs m through the run driver: the method's run (phase TRAIN: the
 * budgets, checkpoints and logs of the options), or search-after's (its
 * time, its log beside the agent's, no checkpoint); both add to the job's
 * curve, which is drawn again when each ends. */
static dp_status run_phase(dp_optimize *op, dp_method m, dp_optimize_phase phase, const dp_optimize_hooks *h,
                           dp_run_result *rr, dp_error *err) {
    const dp_optimize_options *o = &op->o;
    const dp_optimize_plan *p = &op->plan;
    dp_run_options ro = dp_run_options_default();
    ro.g = o->g, ro.ds = o->ds;
    ro.best_path = o->best_path;
    ro.cancel = o->cancel;
    ro.curve = op->curve;
    if (phase == DP_OPTIMIZE_TRAIN) {
        ro.max_updates = p->max_updates, ro.max_samples = p->max_placements, ro.max_seconds = p->train_s;
        ro.steps_fit = p->after_s > 0; /* what training overruns, search-after loses */
        ro.log_path = o->log_path, ro.update_log_path = o->log_path ? op->log_updates : NULL;
        ro.checkpoint_path = o->checkpoint_path, ro.checkpoint_every = o->checkpoint_every;
        ro.resume_path = o->resume_path;
    } else {
        ro.max_updates = ro.max_samples = -1, ro.max_seconds = after_budget(op);
        ro.log_path = o->log_path ? op->log_search : NULL;
        op->after_x = dp_run_curve_end(op->curve) + 0.5;
    }
    relay r = {op, h, phase, m};
    dp_run_hooks hooks = {&r, relay_prepared, relay_stepped};
    const dp_run_state *s = m.ops->state(m.self);
    if (h && h->begin) h->begin(h->user, phase, m, s);
    dp_status st = dp_run(m, &ro, &hooks, rr, err);
    op->interrupted |= rr->interrupted;
    if (!st) st = write_plot(op, err);
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
    if (op->plan.search || after_budget(op) <= 0 || !s->best_placement || (o->cancel && *o->cancel))
        return DP_STATUS_OK;
    if (!(op->after = dp_search_init(o->g, o->ds, op->sim, &op->plan.settings.search, err))) return err->status;
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
    op->start_s = dp_now_s();
    dp_status st = run_phase(op, op->method, DP_OPTIMIZE_TRAIN, h, &op->result, err);
    if (!st) st = search_after(op, h, err);
    if (!st) st = write_units(op, err);
    if (!st) st = write_trace(op, err);
    return st;
}

const dp_reference *dp_optimize_reference(const dp_optimize *op) { return &op->ref; }
dp_agent *dp_optimize_agent(const dp_optimize *op) { return op->agent; }
dp_pretrained *dp_optimize_pretrained(const dp_optimize *op) { return op->pretrained; }
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

const dp_optimize_plan *dp_optimize_get_plan(const dp_optimize *op) { return &op->plan; }
const dp_optimize_options *dp_optimize_get_options(const dp_optimize *op) { return &op->o; }
int dp_optimize_interrupted(const dp_optimize *op) { return op->interrupted; }

void dp_optimize_get_best(const dp_optimize *op, dp_optimize_best *out) {
    const dp_run_state *t = dp_optimize_state(op), *f = dp_optimize_final_state(op);
    int after = f != t;
    out->step_time_s = f->best_placement ? f->best_s : INFINITY;
    out->by = dp_run_best_by_name(f->best_placement ? f->best_by : DP_RUN_BEST_BY_NONE);
    out->phase = after ? "search-after" : "train";
    out->update = f->best_update, out->sample = f->best_sample;
    out->found_s = f->best_elapsed_s + (after ? t->elapsed_s : 0.0);
    out->placement = f->best_placement;
}
