/* dplace optimize --mpi: each rank's part of a distributed run
 * (docs/distributed.md). Rank 0 runs the job as one process does, its
 * method wrapped by the dist layer; the other ranks evaluate, control or
 * search as their role says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/optimize_cli.h"
#include "dplace/nn.h"

#ifndef DPLACE_HAVE_MPI

int opt_mpi(const opt_args *o, int *argc, char ***argv) {
    (void)argc, (void)argv;
    return cli_usage_error("optimize", "--mpi %s: this dplace was built without MPI (install libopenmpi-dev and "
                           "openmpi-bin, then build again: scripts/setup.sh)", o->mpi);
}

#else

/* The evaluator's options of a rank other than 0: the command line's,
 * without progress or cancel flag (rank 0 stops the run). */
static dp_agent_eval_options rank_eval_options(const opt_args *o, const dp_graph *g, const dp_devices *ds) {
    dp_optimize_options jo = opt_job_options(o, g, ds, NULL);
    dp_agent_eval_options eo = jo.eval;
    eo.threads = (int32_t)o->threads, eo.sim.seed = (uint64_t)o->seed, eo.expert = jo.expert;
    eo.cancel = NULL, eo.progress = NULL, eo.progress_user = NULL;
    return eo;
}

/* A worker rank: loads the graph and devices as rank 0 does and evaluates
 * what its controller sends until stopped; a setup failure is answered to
 * the controller (whose run fails with it), not printed. */
static int worker(const opt_args *o, dp_dist *dist) {
    dp_error err, setup;
    dp_error_clear(&err);
    dp_error_clear(&setup);
    dp_graph *g = cli_load_graph("optimize", &o->src, &setup);
    dp_devices *ds = g ? dp_devices_load(o->devices, &setup) : NULL;
    dp_agent_eval_options eo = rank_eval_options(o, g, ds);
    dp_status st = dp_dist_work(dist, g && ds ? g : NULL, ds, &eo, setup.msg, &err);
    dp_devices_free(ds);
    dp_graph_free(g);
    return st ? cli_report(&err) : CLI_EXIT_OK;
}

/* An async controller rank: its own agent (seeded from --seed and its
 * rank), evaluating on its workers, updating the shared parameters until
 * the server stops it. An error ends the whole job: the server waits for
 * this rank. */
static int controller(const opt_args *o, dp_dist *dist) {
    dp_error err;
    dp_error_clear(&err);
    dp_nn_set_threads((int)o->threads);
    dp_graph *g = cli_load_graph("optimize", &o->src, &err);
    dp_devices *ds = g ? dp_devices_load(o->devices, &err) : NULL;
    dp_agent_eval_options eo = rank_eval_options(o, g, ds);
    dp_dist_attach(dist, &eo);
    uint64_t seed = (uint64_t)o->seed * 1000003u + (uint64_t)dp_dist_rank(dist);
    dp_agent *agent = ds ? dp_agent_init(g, ds, &o->plan.settings.agent, &eo, seed, &err) : NULL;
    dp_status st = agent ? dp_dist_control(dist, g, agent, &err) : err.status ? err.status : DP_STATUS_NOMEM;
    dp_agent_free(agent);
    dp_devices_free(ds);
    dp_graph_free(g);
    if (!st) return CLI_EXIT_OK;
    fprintf(stderr, "optimize: controller rank %d: ", (int)dp_dist_rank(dist));
    int rc = cli_report(&err);
    dp_dist_abort(dist, rc);
    return rc;
}

/* A search rank other than 0 (--mpi sync --agent search): its own search
 * (seeded from --seed and its rank) from the same starts, in step with
 * rank 0's, sharing the best. A failure before the first step ends the
 * whole job: rank 0 waits for this rank. */
static int search_rank(const opt_args *o, dp_dist *dist) {
    dp_error err;
    dp_error_clear(&err);
    dp_search_options sopt = o->plan.settings.search;
    sopt.seed = (uint64_t)o->seed + 1000003u * (uint64_t)dp_dist_rank(dist), sopt.threads = (int32_t)o->threads;
    dp_graph *g = NULL;
    dp_devices *ds = NULL;
    dp_sim *sim = NULL;
    dp_search *se = NULL;
    int32_t *init = NULL;
    dp_reference rt = {0};
    int ready = (g = cli_load_graph("optimize", &o->src, &err)) && (ds = dp_devices_load(o->devices, &err)) &&
                (sim = dp_sim_init(g, ds, &err)) && !opt_read_init_placement(o, g, ds, &init, &err) &&
                (se = dp_search_init(g, ds, sim, &sopt, &err));
    if (ready) {
        dp_optimize_options jo = opt_job_options(o, g, ds, init);
        dp_reference_options ro = dp_reference_options_default();
        if (!o->plan.all_baselines) ro.methods = o->plan.baselines, ro.n_methods = o->plan.n_baselines;
        ro.place.expert = jo.expert;
        ready = !dp_reference_compute(sim, g, ds, &ro, &rt, &err) &&
                !dp_search_add_starts(se, &rt, init, jo.init_placement_name, &err);
    }
    dp_status st = ready ? dp_dist_search_follow(dist, g, se, &err) : err.status;
    dp_reference_free(&rt), dp_search_free(se), free(init), dp_sim_free(sim), dp_devices_free(ds), dp_graph_free(g);
    if (!st) return CLI_EXIT_OK;
    fprintf(stderr, "optimize: search rank %d: ", (int)dp_dist_rank(dist));
    int rc = cli_report(&err);
    if (!ready) dp_dist_abort(dist, rc);
    return rc;
}

int opt_mpi(const opt_args *o, int *argc, char ***argv) {
    dp_error err;
    dp_error_clear(&err);
    int32_t rank = 0;
    /* mpirun forwards SIGUSR1 to every rank: caught from before MPI_Init on,
     * since one arriving while the ranks start kills them without a
     * checkpoint */
    signal(SIGUSR1, opt_on_signal);
    dp_dist *dist =
        dp_dist_init(argc, argv, (dp_dist_mode)dp_dist_mode_parse(o->mpi), (int32_t)o->controllers, &rank, &err);
    /* said once, by rank 0; the other ranks leave quietly with 0 on bad input, since a rank that exits non-zero
     * first makes mpirun abort the job, rank 0 included, before it has said why */
    if (!dist) return rank > 0 ? (err.status == DP_STATUS_INVALID ? CLI_EXIT_OK : 1) : cli_report(&err);
    int rc;
    dp_dist_role role = dp_dist_get_role(dist);
    /* rank 0 stops as on SIGINT in one process (the step in flight finished
     * or abandoned, the checkpoint written); the others wait to be stopped by
     * it, forgetting a SIGUSR1 caught during the start */
    if (dp_dist_rank(dist) > 0) {
        signal(SIGUSR1, SIG_IGN);
        if (opt_stop == SIGUSR1) opt_stop = 0;
    }
    if (o->plan.search && dp_dist_rank(dist) > 0) rc = search_rank(o, dist);
    else if (role == DP_DIST_ROLE_WORKER) rc = worker(o, dist);
    else if (role == DP_DIST_ROLE_CONTROLLER && dp_dist_rank(dist) > 0) rc = controller(o, dist);
    else rc = opt_run(o, dist);
    dp_dist_free(dist);
    return rc;
}

#endif
