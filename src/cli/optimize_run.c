/* The job of dplace optimize on this process, or on rank 0 of a
 * distributed run: its options from the command line, the library's job
 * (include/dplace/optimize.h) with progress, the summary, the exit status;
 * and the signals that stop it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/optimize_cli.h"
#include "dplace/placement.h"
#include "dplace/zoo.h"

volatile sig_atomic_t opt_stop;

void opt_on_signal(int sig) {
    opt_stop = sig;
    signal(sig, SIG_DFL); /* a second one ends the process at once */
}

dp_optimize_options opt_job_options(const opt_args *o, const dp_graph *g, const dp_devices *ds, const int32_t *init) {
    dp_optimize_options jo = dp_optimize_options_default();
    jo.g = g, jo.ds = ds;
    jo.agent = o->agent_name;
    jo.sets = o->set_list, jo.n_sets = o->n_set_list;
    jo.units = o->units;
    jo.search_after_s = o->search_after;
    jo.seed = o->seed, jo.threads = o->threads;
    jo.max_updates = o->updates, jo.max_placements = o->placements, jo.max_seconds = o->time_budget;
    jo.baselines = o->baselines;
    jo.expert = dp_zoo_expert_placement;
    /* before the graph is loaded, a named start stands for the one read later,
     * so that the rules across options see it */
    static const int32_t named_start = 0;
    jo.init_placement = init ? init : o->init_placement ? &named_start : NULL;
    jo.init_placement_name = "--init-placement";
    jo.init_policy_path = o->init_path;
    dp_agent_eval_options *eo = &jo.eval;
    eo->cache = !o->no_cache;
    eo->sim.noise_sigma = o->proto.noise;
    eo->sim.steps = o->proto.steps < INT32_MIN ? INT32_MIN : o->proto.steps > INT32_MAX ? INT32_MAX : (int32_t)o->proto.steps;
    eo->sim.warmup =
        o->proto.warmup < INT32_MIN ? INT32_MIN : o->proto.warmup > INT32_MAX ? INT32_MAX : (int32_t)o->proto.warmup;
    eo->sim.mean = o->proto.mean;
    eo->measure_cmd = o->measure;
    eo->measure_timeout_s = o->measure_timeout;
    jo.best_path = o->out, jo.log_path = o->log_path, jo.checkpoint_path = o->ck_path;
    jo.checkpoint_every = o->ck_every, jo.resume_path = o->resume_path;
    jo.plot_path = o->plot_path, jo.trace_path = o->trace_path;
    jo.cancel = &opt_stop;
    return jo;
}

dp_status opt_read_init_placement(const opt_args *o, const dp_graph *g, const dp_devices *ds, int32_t **out,
                                  dp_error *err) {
    *out = NULL;
    if (!o->init_placement) return DP_STATUS_OK;
    if (!(*out = malloc(sizeof(int32_t) * (size_t)(g->n_ops + 1)))) return dp_error_set(err, DP_STATUS_NOMEM, "oom");
    return dp_placement_read_file(o->init_placement, g, ds, *out, err);
}

/* The line that says what runs, before the first update. */
static void print_start(const opt_args *o, const dp_optimize *op, const dp_graph *g, const dp_devices *ds) {
    if (o->quiet || o->json) return;
    const char *resume = o->resume_path ? " (resuming)" : "";
    dp_search *se = dp_optimize_search(op);
    if (se) {
        const char *start = NULL;
        dp_sim_result sr;
        dp_search_start(se, &start, &sr);
        fprintf(stderr, "optimize: %s on %s, agent search, %d threads, from %s (%.6f s)%s\n", g->name, ds->name,
                (int)o->threads, start, sr.step_time_s, resume);
        return;
    }
    const dp_agent_config *cfg = &o->plan.settings.agent;
    if (o->plan.pretrained) {
        fprintf(stderr, "optimize: %s on %s, agent pretrained, %d units placed one by one%s\n", g->name, ds->name,
                (int)dp_optimize_state(op)->n_groups, o->init_path ? " (policy from --init)" : "");
        return;
    }
    fprintf(stderr, "optimize: %s on %s, agent %s, %d %s%s\n", g->name, ds->name, cfg->preset,
            (int)dp_optimize_state(op)->n_groups,
            cfg->encoder.kind == DP_AGENT_ENCODER_NONE ? "groups" : "ops placed one by one",
            o->resume_path ? resume : o->init_path ? " (networks from --init)" : "");
}

int opt_run(const opt_args *o, dp_dist *dist) {
    int rc = CLI_EXIT_OK;
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = NULL;
    dp_devices *ds = NULL;
    int32_t *init = NULL;
    dp_optimize *op = NULL;
    opt_progress pg;
    opt_progress_init(&pg, o);
    if (!(g = cli_load_graph("optimize", &o->src, &err)) || !(ds = dp_devices_load(o->devices, &err)) ||
        opt_read_init_placement(o, g, ds, &init, &err))
        goto fail;
    dp_optimize_options jo = opt_job_options(o, g, ds, init);
    jo.eval.progress = opt_progress_in_update, jo.eval.progress_user = &pg;
#ifdef DPLACE_HAVE_MPI
    opt_mpi_wrap_ctx wrap = {dist, g};
    if (dist) {
        dp_dist_attach(dist, &jo.eval);
        jo.wrap = opt_mpi_wrap, jo.wrap_user = &wrap;
    }
#else
    (void)dist;
#endif
    if (!(op = dp_optimize_init(&jo, &err))) goto fail;
    pg.st = dp_optimize_state(op);
    const dp_optimize_plan *plan = dp_optimize_get_plan(op);
    pg.total_updates = plan->max_updates;
    pg.after_s = plan->after_s;
    pg.time_budget = plan->train_s;
    signal(SIGINT, opt_on_signal);
    signal(SIGTERM, opt_on_signal);
    print_start(o, op, g, ds);
#ifdef DPLACE_HAVE_MPI
    if (dist && !o->quiet && !o->json) opt_mpi_print_ranks(o, dist);
#endif
    dp_optimize_hooks hooks = opt_progress_hooks(&pg);
    if (dp_optimize_run(op, &hooks, &err)) goto fail;
    opt_report(o, op, g, ds, opt_stop != 0);
    if (opt_stop) {
        fprintf(stderr, "optimize: interrupted after update %lld%s%s\n", (long long)dp_optimize_state(op)->updates,
                o->ck_path ? "; resume with --resume " : "", o->ck_path ? o->ck_path : "");
        rc = 130;
    }
    goto done;
fail:
    rc = cli_report(&err);
done:
    dp_optimize_free(op);
    free(init);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}

#ifdef DPLACE_HAVE_MPI
void opt_mpi_print_ranks(const opt_args *o, const dp_dist *dist) {
    if (o->plan.search)
        fprintf(stderr, "optimize: --mpi sync over %d ranks: every rank searches (seeds apart), the best shared after "
                "each step\n", (int)dp_dist_size(dist));
    else if (dp_dist_get_role(dist) == DP_DIST_ROLE_SERVER)
        fprintf(stderr, "optimize: --mpi async over %d ranks: rank 0 the parameter server, %d controller(s), %d worker "
                "rank(s)\n", (int)dp_dist_size(dist), (int)o->controllers, (int)(dp_dist_size(dist) - 1 - o->controllers));
    else
        fprintf(stderr, "optimize: --mpi sync over %d ranks: rank 0 the controller, %d worker rank(s)\n",
                (int)dp_dist_size(dist), (int)dp_dist_n_workers(dist));
}

dp_status opt_mpi_wrap(void *user, dp_agent *agent, dp_search *search, dp_method *m, dp_error *err) {
    const opt_mpi_wrap_ctx *c = user;
    if (search) return dp_dist_search_method(c->dist, c->g, search, m, err);
    if (dp_dist_get_role(c->dist) == DP_DIST_ROLE_SERVER)
        return dp_dist_server_method(c->dist, c->g, agent, &opt_stop, m, err);
    return DP_STATUS_OK;
}

#endif
