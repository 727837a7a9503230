/* The job's options judged in one place (dp_optimize_prepare,
 * include/dplace/optimize.h): the settings from the agent's name and the
 * overrides, the numbers' ranges and the rules across options, the
 * budgets' defaults. Every front end passes its options through here, so
 * a rule and its message exist once. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dplace/optimize.h"

/* Appends one line to the plan's notes (cut when full). */
static void note(dp_optimize_plan *p, const char *fmt, ...) {
    size_t len = strlen(p->notes);
    if (len + 1 >= sizeof p->notes) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->notes + len, sizeof p->notes - len, fmt, ap);
    va_end(ap);
    len = strlen(p->notes);
    if (len + 1 < sizeof p->notes) p->notes[len] = '\n', p->notes[len + 1] = 0;
}

/* The preset (the search's base values for the search), or INVALID naming
 * the agents there are. */
static dp_status start_settings(const char *agent, dp_optimize_plan *p, dp_error *err) {
    p->search = !strcmp(agent, "search");
    p->pretrained = !strcmp(agent, "pretrained");
    if (p->search || p->pretrained) {
        dp_settings_base(&p->settings);
        if (p->pretrained) snprintf(p->settings.agent.preset, sizeof p->settings.agent.preset, "pretrained");
        return DP_STATUS_OK;
    }
    if (!dp_settings_preset(agent, &p->settings)) return DP_STATUS_OK;
    char list[512] = "";
    for (const char *const *n = dp_settings_preset_names(); *n; n++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s, ", *n);
    return dp_error_set(err, DP_STATUS_INVALID, "agent \"%.64s\": no such agent (agents: %spretrained, search)", agent,
                        list);
}

/* One override: its key with "_" read as "-", refused for the search when
 * it is a learned agent's, noted when it is a renamed key. */
static dp_status apply_set(const dp_optimize_set *x, dp_optimize_plan *p, dp_error *err) {
    if (!x->key || !*x->key) return dp_error_set(err, DP_STATUS_INVALID, "a setting without a name");
    if (!x->value) return dp_error_set(err, DP_STATUS_INVALID, "setting %.64s: no value", x->key);
    char key[64];
    snprintf(key, sizeof key, "%s", x->key);
    for (char *c = key; *c; c++)
        if (*c == '_') *c = '-';
    const dp_setting *r = dp_settings_find(key);
    if (r && p->search && r->target != DP_SETTING_SEARCH)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "setting %s is %s; the search takes its own (the search's settings: "
                            "dplace optimize --agent search --set help)",
                            key, r->target == DP_SETTING_PRETRAINED ? "the pretrained placer's" : "a learned agent's");
    if (r && !p->search && (r->target == DP_SETTING_PRETRAINED) != p->pretrained && r->target != DP_SETTING_RUN &&
        r->target != DP_SETTING_SEARCH)
        return dp_error_set(err, DP_STATUS_INVALID,
                            p->pretrained ? "setting %s is a learned agent's; the pretrained placer takes its own "
                                            "(dplace optimize --agent pretrained --set help)"
                                          : "setting %s is the pretrained placer's (agent pretrained), not this "
                                            "agent's",
                            key);
    if (r && dp_settings_renamed(key))
        note(p, "setting %s is now %s (the old name goes in the next release)", key, r->name);
    return dp_settings_set(&p->settings, key, x->value, err);
}

/* The settings: the preset, the elite walks off where they cannot run
 * (noted), the overrides in order, search-after's override, the agent's
 * own check. */
static dp_status build_settings(const dp_optimize_options *o, dp_optimize_plan *p, dp_error *err) {
    dp_status st = start_settings(o->agent ? o->agent : "hp", p, err);
    if (st) return st;
    dp_units_spec units = {DP_UNITS_AUTO, 0};
    if (o->units && dp_units_spec_parse(o->units, &units))
        return dp_error_set(err, DP_STATUS_INVALID, "units: unknown \"%.64s\" (module, module:DEPTH, op, auto)",
                            o->units);
    p->units = units;
    dp_settings *s = &p->settings;
    s->agent.units = s->search.units = units;
    dp_agent_config *cfg = &s->agent;
    int noisy = o->eval.measure_cmd || o->eval.sim.noise_sigma > 0;
    if (!p->search && cfg->walks.moves > 0 && noisy) { /* walks need the simulator */
        note(p,
             "elite walks off (the %s preset's elite-moves=%d: its walks need noiseless simulations; placements "
             "here are %s)",
             cfg->preset, (int)cfg->walks.moves, o->eval.measure_cmd ? "measured" : "simulated with noise");
        cfg->walks.moves = 0;
    }
    if (o->n_sets < 0 || (o->n_sets > 0 && !o->sets))
        return dp_error_set(err, DP_STATUS_INVALID, "%d settings but no array of them", (int)o->n_sets);
    for (int32_t k = 0; k < o->n_sets; k++)
        if ((st = apply_set(&o->sets[k], p, err))) return st;
    if (o->search_after_s > 0) s->search_after_s = o->search_after_s;
    if (p->search) s->search_after_s = 0;
    s->search.seed = (uint64_t)o->seed, s->search.threads = (int32_t)o->threads;
    s->pretrained.seed = (uint64_t)o->seed, s->pretrained.units = units;
    if (p->pretrained) return dp_settings_check_target(DP_SETTING_PRETRAINED, &s->pretrained, err);
    return p->search ? DP_STATUS_OK : dp_agent_config_check(cfg, err);
}

/* Each number on its own: its range. */
static dp_status check_numbers(const dp_optimize_options *o, dp_error *err) {
    if (o->seed < 0 || o->seed > 2147483647)
        return dp_error_set(err, DP_STATUS_INVALID, "seed: in 0..2147483647, not %lld", (long long)o->seed);
    if (o->threads < 1 || o->threads > 256)
        return dp_error_set(err, DP_STATUS_INVALID, "threads: in 1..256, not %lld", (long long)o->threads);
    if (o->max_placements == 0)
        return dp_error_set(err, DP_STATUS_INVALID, "placements: at least 1, not 0");
    if (isnan(o->max_seconds) || o->max_seconds == 0)
        return dp_error_set(err, DP_STATUS_INVALID, "time: a duration above 0 seconds, not %g", o->max_seconds);
    if (o->checkpoint_every < 1)
        return dp_error_set(err, DP_STATUS_INVALID, "checkpoint-every: at least 1 update, not %lld",
                            (long long)o->checkpoint_every);
    if (!(o->eval.measure_timeout_s > 0) || !isfinite(o->eval.measure_timeout_s))
        return dp_error_set(err, DP_STATUS_INVALID, "measure-timeout: seconds above 0, not %g",
                            o->eval.measure_timeout_s);
    return dp_sim_options_check(&o->eval.sim, err);
}

/* The rules across options. */
static dp_status check_rules(const dp_optimize_options *o, const dp_optimize_plan *p, dp_error *err) {
    const char *bad = NULL;
    double after = p->settings.search_after_s;
    if (o->max_updates >= 0 && o->max_placements >= 0) bad = "give one budget of updates and of placements, not both";
    else if (o->init_policy_path && o->resume_path)
        bad = "init starts a new run from another's networks; resume continues one: give one of them";
    else if (p->search && o->max_updates == 0)
        bad = "updates 0 evaluates a learned agent's greedy placement; the search needs at least one update";
    else if (p->search && (o->init_policy_path || o->search_after_s > 0 || o->eval.measure_cmd))
        bad = "the search takes no init, search-after or measure (a start placement: init-placement)";
    else if (p->search && (o->eval.sim.noise_sigma > 0 || o->eval.sim.steps > 1))
        bad = "the search simulates one step without noise (no noise, no steps)";
    else if (p->pretrained && (o->checkpoint_path || o->resume_path))
        bad = "the pretrained placer keeps no checkpoint (no checkpoint, no resume; init FILE starts from a policy "
              "file)";
    else if (p->pretrained && o->wrap)
        bad = "the pretrained placer runs in one process (no mpi)";
    else if (!p->search && o->init_placement)
        bad = "a start placement is the search's (agent search); search-after starts from the agent's best";
    else if (after > 0 && o->eval.measure_cmd)
        bad = "search-after searches with the simulator; not with a measuring command (measure)";
    if (bad) return dp_error_set(err, DP_STATUS_INVALID, "%s", bad);
    if (after > 0 && o->max_seconds > 0 && !(o->max_seconds > after))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "the time budget (%gs) must be longer than search-after (%gs), which it includes",
                            o->max_seconds, after);
    return DP_STATUS_OK;
}

/* The budgets with their defaults: none given, the papers' updates. */
static void set_budgets(const dp_optimize_options *o, dp_optimize_plan *p) {
    p->after_s = p->search ? 0 : fmax(0.0, p->settings.search_after_s);
    int none = o->max_updates < 0 && o->max_placements < 0 && o->max_seconds < 0;
    p->max_updates = none ? (p->search ? DP_OPTIMIZE_SEARCH_UPDATES_DEFAULT : DP_OPTIMIZE_UPDATES_DEFAULT)
                          : o->max_placements >= 0 ? -1 : o->max_updates;
    p->max_placements = o->max_placements;
    p->train_s = o->max_seconds > 0 ? o->max_seconds - p->after_s : -1;
}

dp_status dp_optimize_prepare(const dp_optimize_options *o, dp_optimize_plan *p, dp_error *err) {
    memset(p, 0, sizeof *p);
    dp_status st = check_numbers(o, err);
    if (!st) st = build_settings(o, p, err);
    if (!st) st = check_rules(o, p, err);
    if (st) return st;
    p->all_baselines = !o->baselines;
    if (o->baselines &&
        (st = dp_reference_parse_methods(o->baselines, p->baselines, DP_REFERENCE_MAX, &p->n_baselines, err)))
        return st;
    set_budgets(o, p);
    return DP_STATUS_OK;
}
