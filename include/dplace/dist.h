/* dplace: a learned placer's run over MPI ranks (docs/distributed.md),
 * with the roles of the four papers:
 *
 *   controller  a policy replica: samples placements, trains on their
 *               step times (sync: rank 0, the only one; async: ranks
 *               1..K, each with its own baseline)
 *   worker      evaluates the placements its controller sends (the
 *               simulator, or the --measure command on the machine the
 *               rank runs on) and sends back step time, validity, reason
 *   server      async only, rank 0: the shared parameters; each
 *               controller's update is added to them as it arrives, and
 *               the controller gets the parameters as they are then
 *
 * Rank 0 alone drives the run (dp_run): budgets, the log, the best
 * placement and the checkpoints, all written by it, atomically. In sync
 * mode ranks 1..N-1 are rank 0's workers and the run equals the
 * single-process run bit for bit: the evaluator's remote function
 * (dp_agent_eval_options.remote) ships the placements that missed the
 * cache and gathers their results by sample index. In async mode ranks
 * K+1..N-1 are shared out among the K controllers (rank K+1+i serves
 * controller 1 + i mod K); a controller without workers evaluates on its
 * own threads. With dplace's search (--agent search) every rank searches
 * and the ranks share the best after each step. A rank that dies ends the
 * job (MPI's default error handler): the last checkpoint stays whole, and
 * --resume goes on with any number of ranks.
 *
 * Built only when CMake finds MPI (DPLACE_HAVE_MPI). Messages carry
 * int32 placements and raw result structs: every rank runs the same
 * binary on the same architecture. */
#ifndef DPLACE_DIST_H
#define DPLACE_DIST_H

#include "dplace/agent.h"
#include "dplace/run.h"
#include "dplace/search.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dp_dist_mode {
    DP_DIST_MODE_SYNC = 0, /* one policy, the samples of an update over the workers */
    DP_DIST_MODE_ASYNC,    /* K controllers, a parameter server (Hierarchical Planner) */
    DP_DIST_MODE_COUNT
} dp_dist_mode;

typedef enum dp_dist_role {
    DP_DIST_ROLE_CONTROLLER = 0,
    DP_DIST_ROLE_WORKER,
    DP_DIST_ROLE_SERVER,
    DP_DIST_ROLE_COUNT
} dp_dist_role;

typedef struct dp_dist dp_dist;

/* "sync", "async"; the mode of a name (-1: unknown). */
const char *dp_dist_mode_name(dp_dist_mode m);
int dp_dist_mode_parse(const char *name);
const char *dp_dist_role_name(dp_dist_role r);

/* Starts MPI (once per process; threads funneled to the calling one) and
 * gives this rank its role. controllers: async mode's K (sync: ignored).
 * *rank: this rank (also on error, so that one rank reports it).
 * Errors: INVALID (async with fewer than K + 1 ranks, K < 1), INTERNAL
 * (MPI failed to start). */
dp_dist *dp_dist_init(int *argc, char ***argv, dp_dist_mode mode, int32_t controllers, int32_t *rank, dp_error *err);
/* A controller stops its workers; then MPI is finalised. */
void dp_dist_free(dp_dist *d);
/* Ends every rank of the job at once with exit status code (a rank that
 * cannot go on while others wait for it). */
void dp_dist_abort(dp_dist *d, int code);

int32_t dp_dist_rank(const dp_dist *d);
int32_t dp_dist_size(const dp_dist *d);
dp_dist_role dp_dist_get_role(const dp_dist *d);
/* A controller's workers (0: it evaluates on its own threads). */
int32_t dp_dist_n_workers(const dp_dist *d);

/* A controller's evaluator options: eo's remote function set to ship the
 * placements to its workers, up to eo's threads at a time to each (the
 * workers run the same command line: as many threads); unchanged when it
 * has no workers. d must outlive the evaluator. */
void dp_dist_attach(dp_dist *d, dp_agent_eval_options *eo);

/* A worker's life: evaluates every placement its controller sends on an
 * evaluator of eo (its cache off: the controller keeps the cache), those
 * of one message (up to eo's threads) together on eo's threads, until the
 * controller stops it. g NULL: this rank could not set up (setup_error
 * says why); every placement is answered with that failure, which fails
 * the controller's run. Errors: NOMEM. */
dp_status dp_dist_work(dp_dist *d, const dp_graph *g, const dp_devices *ds, const dp_agent_eval_options *eo,
                       const char *setup_error, dp_error *err);

/* Async mode, rank 0: the parameter server as a method of the run driver.
 * a holds the shared parameters (and is what the checkpoints save: the
 * shared policy with the run's counters and best placement); each step
 * takes the next controller update to arrive (the samples it evaluated,
 * its best placement, its parameter change), adds the change to the
 * shared parameters and sends them back to that controller. The first
 * step sends every controller the parameters (after a's preparation and
 * any resume). The cancel flag (may be NULL) abandons a step waiting for
 * an update. dp_dist_free takes the updates still in flight, unapplied,
 * and stops the controllers. d, g and a must outlive the method's use.
 * Errors: INVALID (not the server's rank), NOMEM. */
dp_status dp_dist_server_method(dp_dist *d, const dp_graph *g, dp_agent *a, const volatile sig_atomic_t *cancel,
                                dp_method *out, dp_error *err);

/* Async mode, a controller rank's life: until the server stops it, takes
 * the shared parameters (dp_agent_params_set), makes one update of a
 * (sampling, evaluating on its workers, training: its own baseline and
 * Adam moments) and sends the server the update's samples, a's best
 * placement and the change of the parameters. Errors: a's (the job
 * should then be aborted: the server waits for this rank), NOMEM. */
dp_status dp_dist_control(dp_dist *d, const dp_graph *g, dp_agent *a, dp_error *err);

/* dplace's search over ranks (--mpi sync --agent search): every rank runs
 * its own search se (seeded apart), in step; after each step the best
 * placement of all ranks is shared (a rank whose best is worse takes it:
 * dp_search_offer_best). Rank 0 runs the method this gives under the run
 * driver (its moves are the log, its search the checkpoints); the other
 * ranks call dp_dist_search_follow, which returns when rank 0's run ends
 * (dp_dist_free on rank 0 tells them). A rank's failure stops every rank.
 * Errors: INVALID (not rank 0), NOMEM, the search's. */
dp_status dp_dist_search_method(dp_dist *d, const dp_graph *g, dp_search *se, dp_method *out, dp_error *err);
dp_status dp_dist_search_follow(dp_dist *d, const dp_graph *g, dp_search *se, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
