/* dplace optimize's summary on stdout: the best placement's step time
 * beside single GPU, the expert, the best baseline and the lower bound,
 * what found it, and whether the policy learned; or all of it as one JSON
 * object. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/optimize_cli.h"

/* The search's lines: units, moves, the start (modules: the search moves
 * whole modules, their parents and grandparents). */
static void print_search(const opt_args *o, const dp_search *se, const char *what, dp_units_spec units) {
    dp_search_stats x;
    dp_search_get_stats(se, &x);
    const dp_run_state *s = dp_search_get_state(se);
    const char *start = NULL;
    dp_sim_result sr;
    dp_search_start(se, &start, &sr);
    char t[32];
    opt_format_duration(s->elapsed_s, t, sizeof t);
    if (units.kind == DP_UNITS_MODULE)
        printf("%-10s %d threads x %d moves per update; units: %d modules, %d parents, %d grandparents\n", what,
               (int)o->plan.settings.search.threads, (int)o->plan.settings.search.moves, (int)x.n_units[0], (int)x.n_units[2],
               (int)x.n_units[3]);
    else
        printf("%-10s %d threads x %d moves per update; units: %d ops, %d chains, %d scopes, %d parent scopes, %d "
               "typed\n",
               what, (int)o->plan.settings.search.threads, (int)o->plan.settings.search.moves, (int)x.n_units[0], (int)x.n_units[1],
               (int)x.n_units[2], (int)x.n_units[3], (int)x.n_units[4]);
    printf("searched   %lld updates, %lld moves simulated in %s (%lld proposed, %lld refused by the memory check, "
           "%.1f%% accepted, %lld from the critical path, %lld restarts)\n",
           (long long)s->updates, (long long)x.simulated, t, (long long)x.proposed, (long long)x.oom_rejected,
           x.simulated ? 100.0 * (double)x.accepted / (double)x.simulated : 0.0, (long long)x.critical,
           (long long)x.restarts);
    if (start) printf("start      %s (%.6f s%s)\n", start, sr.step_time_s, sr.valid ? "" : ", out of memory");
}

/* The library's JSON summary (dp_optimize_json), the same as Python's. */
static void print_json(const dp_optimize *op, int interrupted) {
    dp_error err;
    dp_error_clear(&err);
    char *text = dp_optimize_json(op, interrupted, 10, &err);
    if (!text) {
        cli_report(&err);
        return;
    }
    fputs(text, stdout);
    fputc('\n', stdout);
    free(text);
}

/* The header lines: graph, agent, training, elite walks, preparation. */
static void print_header(const opt_args *o, const dp_optimize *op, const dp_graph *g, const dp_devices *ds) {
    const dp_run_state *s = dp_optimize_state(op);
    dp_agent *agent = dp_optimize_agent(op);
    char t1[32];
    opt_format_duration(s->elapsed_s, t1, sizeof t1);
    printf("graph      %s: %d ops on %s (%d devices)\n", g->name, g->n_ops, ds->name, ds->n_devices);
    dp_units_spec units = dp_optimize_units(op);
    if (units.kind == DP_UNITS_MODULE) {
        char ubuf[32];
        dp_units_spec_format(units, ubuf, sizeof ubuf);
        printf("units      %s: every method places whole modules, each with its gradients and updates on one "
               "device, as PyTorch runs them (--units op: op by op)\n",
               ubuf);
    }
    dp_pretrained *pt = dp_optimize_pretrained(op);
    if (pt) {
        printf("agent      pretrained: %d units placed one by one by a policy trained across graphs (%s)\n",
               (int)s->n_groups, dp_pretrained_policy_note(dp_pretrained_get_policy(pt)));
        int32_t layers = dp_pretrained_layer_units(pt);
        char lbuf[96] = "";
        if (layers > 0) snprintf(lbuf, sizeof lbuf, ", on its units, then on %d units of whole layers", (int)layers);
        printf("zero-shot  the greedy placement%s and %lld sampled in %.1f s%s; then %lld fine-tuning update%s in %s "
               "(%lld placements in all)\n",
               layers > 0 ? "s" : "", (long long)s->prep_done, s->prep_s, lbuf, (long long)s->updates,
               s->updates == 1 ? "" : "s", t1, (long long)s->samples);
        return;
    }
    if (!agent) {
        print_search(o, dp_optimize_search(op), "agent      search:", units);
        return;
    }
    const dp_agent_config *cfg = &o->plan.settings.agent;
    if (cfg->encoder.kind == DP_AGENT_ENCODER_NONE)
        printf("agent      %s: grouper %s (%d groups), placer %s, %s, %d samples per update\n", cfg->preset,
               dp_agent_grouper_kind_name(cfg->grouper.kind), (int)s->n_groups,
               dp_agent_placer_kind_name(cfg->placer.kind), dp_agent_algo_name(cfg->train.algo),
               (int)cfg->train.batch);
    else
        printf("agent      %s: encoder %s, placer %s over every op, %s, %d samples per update\n", cfg->preset,
               dp_agent_encoder_name(cfg->encoder.kind), dp_agent_placer_kind_name(cfg->placer.kind),
               dp_agent_algo_name(cfg->train.algo), (int)cfg->train.batch);
    printf("trained    %lld updates, %lld placements in %s (policy %.0f%%, evaluator %.0f%%; cache hits %.1f%%)\n",
           (long long)s->updates, (long long)s->samples, t1, s->elapsed_s > 0 ? 100 * s->policy_s / s->elapsed_s : 0,
           s->elapsed_s > 0 ? 100 * s->eval_s / s->elapsed_s : 0,
           s->cache_lookups ? 100.0 * s->cache_hits / s->cache_lookups : 0);
    if (cfg->walks.moves > 0) {
        char grown[64] = "";
        if (cfg->walks.chain > 0)
            snprintf(grown, sizeof grown, ", a slower move grown by up to %d elements", (int)cfg->walks.chain);
        printf("walks      %d elite walk%s of %d moves per update from the best samples%s%s: %lld simulations "
               "this run\n",
               (int)cfg->walks.walks, cfg->walks.walks > 1 ? "s" : "", (int)cfg->walks.moves,
               cfg->walks.keep ? " and one from the best elite" : "", grown,
               (long long)dp_optimize_walk_simulations(op));
    }
    const dp_agent_prep *p = dp_agent_get_prep(agent);
    if (p->warm_done > 0 && p->warm_from)
        printf("warm start %lld steps imitating %s's placement (%.6f s); -log p of it %.4g after\n",
               (long long)p->warm_done, p->warm_from, p->warm_target_s, p->warm_loss);
    if (p->pretrain_done > 0 && isfinite(p->pretrain_best)) { /* not with --init: its encoder came trained */
        char t3[32];
        opt_format_duration(p->pretrain_s, t3, sizeof t3);
        if (p->pretrain_done == p->pretrain_iters)
            printf("pre-trained %lld Deep Graph Infomax iterations in %s (lowest loss %.4f, kept)\n",
                   (long long)p->pretrain_done, t3, p->pretrain_best);
        else
            printf("pre-training: %lld of %lld Deep Graph Infomax iterations in %s (lowest loss %.4f so far)\n",
                   (long long)p->pretrain_done, (long long)p->pretrain_iters, t3, p->pretrain_best);
    }
}

/* Whether the policy improved: the mean sampled step time over the first
 * and the last tenth of the updates. */
static void print_learning(const dp_optimize *op) {
    const dp_run_result *r = dp_optimize_result(op);
    if (!dp_optimize_agent(op) || dp_optimize_state(op)->updates < 2 || !isfinite(r->first_mean_s) ||
        !isfinite(r->last_mean_s))
        return;
    double change = 100.0 * (r->last_mean_s - r->first_mean_s) / r->first_mean_s;
    printf("policy: mean sampled step time %.4f s over the first tenth of the updates (%lld), %.4f s over the "
           "last: %s (%+.1f%%)\n",
           r->first_mean_s, (long long)r->tenth, r->last_mean_s, change < 0 ? "improved" : "did not improve", change);
}

static void print_table(const opt_args *o, const dp_optimize *op, const dp_graph *g, const dp_devices *ds) {
    const dp_run_state *s = dp_optimize_state(op);
    const dp_reference *rt = dp_optimize_reference(op);
    dp_agent *agent = dp_optimize_agent(op);
    dp_search *after = dp_optimize_search_after(op);
    print_header(o, op, g, ds);
    if (o->measure)
        printf("\n(the learned time was measured by --measure; single GPU, expert, the baselines and the bound are "
               "simulated on the devices given)");
    const char *who = agent || dp_optimize_pretrained(op) ? "learned" : "search";
    if (after) {
        printf("\n");
        print_search(o, after, "then:", dp_optimize_units(op));
    }
    printf("\n%-26s %12s  %s vs it\n", "placement", "step time", after ? "searched" : who);
    if (isfinite(s->best_s)) printf("%-26s %10.6f s\n", who, s->best_s);
    else printf("%-26s %12s  (no valid placement sampled)\n", who, "none");
    if (isfinite(s->final_s))
        printf("%-26s %10.6f s%s\n", "final policy, greedy", s->final_s, s->best_final ? "  (the best)" : "");
    else if (isinf(s->final_s)) printf("%-26s %12s\n", "final policy, greedy", "not valid");
    const dp_run_state *as = after ? dp_search_get_state(after) : NULL;
    if (as && isfinite(as->best_s)) {
        char t[32];
        opt_format_duration(as->best_elapsed_s, t, sizeof t);
        printf("%-26s %10.6f s  (found after %s of search)\n", "then searched", as->best_s, t);
        s = as;
    }
    char name[64];
    snprintf(name, sizeof name, "best baseline (%s)", rt->best_name ? rt->best_name : "none");
    struct {
        const char *label;
        double t;
        int ok;
    } rows[3] = {{"single GPU", rt->gpu_s, rt->gpu_valid}, {"expert", rt->expert_s, rt->expert_valid},
                 {name, rt->best_s, rt->best >= 0}};
    for (int k = 0; k < 3; k++) {
        if (rows[k].ok && isfinite(s->best_s))
            printf("%-26s %10.6f s  %+.1f%%\n", rows[k].label, rows[k].t, 100.0 * (s->best_s - rows[k].t) / rows[k].t);
        else if (rows[k].ok) printf("%-26s %10.6f s\n", rows[k].label, rows[k].t);
        else
            printf("%-26s %12s\n", rows[k].label,
                   o->baselines && !strcmp(o->baselines, "none") ? "not run" : "invalid or n/a");
    }
    printf("%-26s %10.6f s  (critical path %.6f s, work %.6f s, fan-out %.6f s)\n", "lower bound", rt->bound.bound_s,
           rt->bound.critical_path_s, rt->bound.work_s, rt->bound.fanout_s);
    double ref = NAN;
    const char *ref_name = NULL;
    if (rt->gpu_valid) ref = rt->gpu_s, ref_name = "single GPU";
    if (rt->expert_valid && !(rt->expert_s >= ref)) ref = rt->expert_s, ref_name = "expert";
    dp_optimize_best b;
    dp_optimize_get_best(op, &b);
    if (isfinite(s->best_s)) {
        char t2[32];
        opt_format_duration(b.found_s, t2, sizeof t2);
        if (s->best_final && !after)
            printf("\nbest: the final policy's greedy placement, after %lld updates (%lld placements) and %s\n",
                   (long long)s->best_update, (long long)s->best_sample, t2);
        else
            printf("\nbest found %sat update %lld (placement %lld) after %s, by %s\n",
                   strcmp(b.phase, "train") ? "by the search after training, " : "", (long long)b.update,
                   (long long)b.sample + 1, t2, dp_run_best_by_words(s->best_by));
    }
    if (isfinite(s->best_s) && ref_name)
        printf("reduction over the better of single GPU and expert (%s): %.1f%%\n", ref_name,
               100.0 * (ref - s->best_s) / ref);
    print_learning(op);
    if (o->out && s->best_placement) printf("best placement written to %s\n", o->out);
}

void opt_report(const opt_args *o, const dp_optimize *op, const dp_graph *g, const dp_devices *ds, int interrupted) {
    if (o->json) print_json(op, interrupted);
    else print_table(o, op, g, ds);
}
