/* The job's summary as one JSON object (dp_optimize_json,
 * include/dplace/optimize.h): what `dplace optimize --json` prints and
 * what Python's result is read from, so that the two carry the same keys
 * with the same meanings. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/optimize.h"

static json_t *num(double v, int ok) { return ok && isfinite(v) ? json_real(v) : json_null(); }

static void set(json_t *j, const char *key, json_t *v) { json_object_set_new(j, key, v); }

/* What ran: the graph, the devices, the units, the agent and its settings. */
static void put_job(json_t *j, const dp_optimize *op) {
    const dp_optimize_options *o = dp_optimize_get_options(op);
    const dp_optimize_plan *p = dp_optimize_get_plan(op);
    const dp_graph *g = o->g;
    const dp_devices *ds = o->ds;
    char ubuf[32], cbuf[4096];
    dp_units_spec_format(dp_optimize_units(op), ubuf, sizeof ubuf);
    if (p->search) dp_settings_format_target(DP_SETTING_SEARCH, &p->settings.search, cbuf, sizeof cbuf);
    else if (p->pretrained)
        dp_settings_format_target(DP_SETTING_PRETRAINED, &p->settings.pretrained, cbuf, sizeof cbuf);
    else dp_settings_format_target(DP_SETTING_AGENT, &p->settings.agent, cbuf, sizeof cbuf);
    set(j, "graph", json_string(g->name));
    set(j, "ops", json_integer(g->n_ops));
    set(j, "device_set", json_string(ds->name));
    set(j, "units", json_string(ubuf));
    set(j, "agent", json_string(p->search ? "search" : p->pretrained ? "pretrained" : p->settings.agent.preset));
    set(j, "settings", json_string(cbuf));
    set(j, "seed", json_integer((json_int_t)o->seed));
}

/* The job's answer (best_*), and the training's own best (train_best_*). */
static void put_best(json_t *j, const dp_optimize *op) {
    dp_optimize_best b;
    dp_optimize_get_best(op, &b);
    const dp_run_state *s = dp_optimize_state(op);
    int has = b.placement != NULL;
    set(j, "best_step_time_s", num(b.step_time_s, has));
    set(j, "best_by", json_string(b.by));
    set(j, "best_phase", json_string(b.phase));
    set(j, "best_update", json_integer(b.update));
    set(j, "best_sample", json_integer(b.sample));
    set(j, "best_found_s", json_real(b.found_s));
    int th = s->best_placement != NULL;
    set(j, "train_best_step_time_s", num(s->best_s, th));
    set(j, "train_best_by", json_string(dp_run_best_by_name(th ? s->best_by : DP_RUN_BEST_BY_NONE)));
    set(j, "train_best_update", json_integer(s->best_update));
    set(j, "train_best_sample", json_integer(s->best_sample));
    set(j, "train_best_found_s", json_real(s->best_elapsed_s));
    set(j, "final_greedy_s", num(s->final_s, isfinite(s->final_s)));
    set(j, "best_is_final_greedy", json_boolean(s->best_final && !strcmp(b.phase, "train")));
}

/* The search's figures: the method's, or search-after's. */
static void put_search(json_t *j, const dp_optimize *op) {
    int after = !dp_optimize_get_plan(op)->search;
    dp_search *se = after ? dp_optimize_search_after(op) : dp_optimize_search(op);
    if (!se) return;
    const char *start = NULL;
    dp_sim_result sr;
    dp_search_stats x;
    dp_search_get_stats(se, &x);
    dp_search_start(se, &start, &sr);
    set(j, "search_start", start ? json_string(start) : json_null());
    set(j, "search_start_s", num(sr.step_time_s, start != NULL));
    set(j, "search_moves_proposed", json_integer(x.proposed));
    set(j, "search_moves_simulated", json_integer(x.simulated));
    set(j, "search_moves_accepted", json_integer(x.accepted));
    set(j, "search_moves_improved", json_integer(x.improved));
    set(j, "search_oom_refused", json_integer(x.oom_rejected));
    set(j, "search_restarts", json_integer(x.restarts));
    set(j, "search_critical", json_integer(x.critical));
    if (!after) return;
    const dp_run_state *a = dp_search_get_state(se);
    set(j, "search_after_step_time_s", num(a->best_s, a->best_placement != NULL));
    set(j, "search_after_found_s", json_real(a->best_elapsed_s));
    set(j, "search_after_updates", json_integer(a->updates));
    set(j, "search_after_s", json_real(a->elapsed_s));
}

/* The method's run: counters, time shares, the cache, the agent's
 * preparation, whether the policy learned. */
static void put_train(json_t *j, const dp_optimize *op) {
    const dp_run_state *s = dp_optimize_state(op);
    const dp_run_result *rr = dp_optimize_result(op);
    dp_agent *agent = dp_optimize_agent(op);
    const dp_optimize_plan *p = dp_optimize_get_plan(op);
    set(j, "updates", json_integer(s->updates));
    set(j, "samples", json_integer(s->samples));
    set(j, "groups", json_integer(s->n_groups));
    set(j, "train_s", json_real(s->elapsed_s));
    set(j, "policy_s", json_real(s->policy_s));
    set(j, "eval_s", json_real(s->eval_s));
    set(j, "cache_lookups", json_integer(s->cache_lookups));
    set(j, "cache_hits", json_integer(s->cache_hits));
    if (agent && p->settings.agent.walks.moves > 0)
        set(j, "elite_simulations", json_integer(dp_optimize_walk_simulations(op)));
    if (agent) {
        const dp_agent_prep *q = dp_agent_get_prep(agent);
        set(j, "pretrain_iters", json_integer(q->pretrain_done));
        set(j, "pretrain_s", json_real(q->pretrain_s));
        set(j, "pretrain_best_loss", num(q->pretrain_best, 1));
        set(j, "warm_start_steps", json_integer(q->warm_done));
        set(j, "warm_start_from", q->warm_from ? json_string(q->warm_from) : json_null());
        set(j, "warm_start_target_s", num(q->warm_target_s, q->warm_from != NULL));
    }
    dp_pretrained *pt = dp_optimize_pretrained(op);
    if (pt) {
        double zb, zs;
        int64_t zn;
        dp_pretrained_zero_shot(pt, &zb, &zs, &zn);
        set(j, "zero_shot_placements", json_integer(zn));
        set(j, "zero_shot_s", json_real(zs));
        set(j, "zero_shot_best_s", num(zb, isfinite(zb)));
    }
    set(j, "first_tenth_mean_s", num(rr->first_mean_s, 1));
    set(j, "last_tenth_mean_s", num(rr->last_mean_s, 1));
    set(j, "tenth_updates", json_integer(rr->tenth));
}

/* The references and the lower bound. */
static void put_references(json_t *j, const dp_optimize *op) {
    const dp_reference *rt = dp_optimize_reference(op);
    set(j, "single_gpu_s", num(rt->gpu_s, rt->gpu_valid));
    set(j, "expert_s", num(rt->expert_s, rt->expert_valid));
    set(j, "best_baseline", rt->best_name ? json_string(rt->best_name) : json_null());
    set(j, "best_baseline_s", num(rt->best_s, rt->best >= 0));
    set(j, "lower_bound_critical_path_s", json_real(rt->bound.critical_path_s));
    set(j, "lower_bound_work_s", json_real(rt->bound.work_s));
    set(j, "lower_bound_work_uniform_s", json_real(rt->bound.work_uniform_s));
    set(j, "lower_bound_fanout_s", json_real(rt->bound.fanout_s));
    set(j, "lower_bound_s", json_real(rt->bound.bound_s));
}

char *dp_optimize_json(const dp_optimize *op, int interrupted, int digits, dp_error *err) {
    json_t *j = json_object();
    if (!j) {
        dp_error_set(err, DP_STATUS_NOMEM, "optimize: out of memory for the summary");
        return NULL;
    }
    put_job(j, op);
    put_best(j, op);
    put_train(j, op);
    put_search(j, op);
    put_references(j, op);
    set(j, "interrupted", json_boolean(interrupted || dp_optimize_interrupted(op)));
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(digits >= 1 && digits <= 17 ? digits : 17));
    json_decref(j);
    if (!text) dp_error_set(err, DP_STATUS_NOMEM, "optimize: out of memory for the summary");
    return text;
}
