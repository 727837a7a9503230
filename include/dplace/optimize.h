/* dplace: one optimisation job, as `dplace optimize` runs it, for any
 * caller (the command line, a bench, a binding): the reference placements
 * (single GPU, the expert, every baseline placer, the lower bound), then a
 * learned agent (include/dplace/agent.h) or the search
 * (include/dplace/search.h) through the run driver (include/dplace/run.h)
 * with its budgets, logs, best placement, checkpoints and curve, then, for
 * a learned agent with search-after, the search from its best placement,
 * and the timeline of the best placement found. The same arguments give
 * the same run whoever calls it.
 *
 *     dp_optimize_options o = dp_optimize_options_default();
 *     o.g = g, o.ds = ds;
 *     dp_settings_preset("dplace", &o.settings);
 *     dp_optimize *op = dp_optimize_init(&o, &err);
 *     dp_optimize_run(op, NULL, &err);
 *     const dp_run_state *best = dp_optimize_final_state(op);
 *     dp_optimize_free(op);
 *
 * A distributed run (src/dist) plugs in through the evaluator's options
 * and the wrap hook; this layer itself knows nothing of MPI.
 *
 * Layer: optimize (src/optimize), above agent and search, below the CLI. */
#ifndef DPLACE_OPTIMIZE_H
#define DPLACE_OPTIMIZE_H

#include <signal.h>

#include "dplace/agent.h"
#include "dplace/reference.h"
#include "dplace/run.h"
#include "dplace/search.h"
#include "dplace/settings.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_optimize dp_optimize;

typedef struct dp_optimize_options {
    const dp_graph *g;              /* finalized; must outlive the job          */
    const dp_devices *ds;
    dp_settings settings;           /* the preset and its overrides (the agent's
                                       and the search's, search_after_s)       */
    int search;                     /* the method is the search, not an agent   */
    uint64_t seed;                  /* seeds the agent, the search's chains and
                                       the simulator's noise                    */
    int32_t threads;                /* the agent's evaluations, the search's
                                       chains                                   */
    /* budgets (all < 0: 1,000 updates of an agent, 2,000 of the search) */
    int64_t max_updates;
    int64_t max_placements;
    double max_seconds;             /* the whole job, search-after included     */
    /* the comparison and the search's starts */
    const dp_place_method *baselines; /* NULL: every placer                     */
    int32_t n_baselines;
    dp_place_expert_fn expert;      /* where the expert placement comes from
                                       (NULL: none)                            */
    const int32_t *init_placement;  /* NULL, or a start for the search [n_ops] */
    const char *init_placement_name;/* its name in the summary                  */
    const char *init_policy_path;   /* NULL, or a checkpoint whose networks the
                                       agent starts from (--init)              */
    /* the evaluator of an agent (threads and seed are set from the above) */
    dp_agent_eval_options eval;
    /* outputs (NULL: none) */
    const char *best_path;          /* the best placement, rewritten when better */
    const char *log_path;           /* per sample; beside it X.updates.csv per
                                       update, X.search.csv per search move of
                                       search-after                            */
    const char *checkpoint_path;
    int64_t checkpoint_every;       /* updates between checkpoints (<= 0: 50)   */
    const char *resume_path;        /* NULL, or the checkpoint to continue      */
    const char *plot_path;          /* the training curve (SVG)                 */
    const char *trace_path;         /* the best placement's timeline            */
    const volatile sig_atomic_t *cancel; /* NULL, or the flag that stops the job */
    /* NULL, or called once the method exists: may replace *m by a method
     * around it (a distributed run's); agent or search is the method's */
    dp_status (*wrap)(void *user, dp_agent *agent, dp_search *search, dp_method *m, dp_error *err);
    void *wrap_user;
} dp_optimize_options;

/* Defaults: no graph, the hp preset (units AUTO), an agent, seed 1, 1
 * thread, no budget set, every baseline, no expert source, no outputs. */
dp_optimize_options dp_optimize_options_default(void);

/* What the job is doing, for the hooks. */
typedef enum dp_optimize_phase {
    DP_OPTIMIZE_TRAIN = 0,  /* the agent's training, or the search alone     */
    DP_OPTIMIZE_SEARCH_AFTER /* the search from the agent's best              */
} dp_optimize_phase;

/* The job's progress; any hook may be NULL. m is the method of the phase,
 * s its state. */
typedef struct dp_optimize_hooks {
    void *user;
    /* before the phase's run */
    void (*begin)(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s);
    /* after each chunk of preparation and each step (the run driver's
     * hooks, dplace/run.h) */
    void (*prepared)(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s);
    void (*stepped)(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s);
    /* after the phase's run, when it did not fail */
    void (*end)(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s);
} dp_optimize_hooks;

/* Checks the options, computes the reference placements and builds the
 * method: the agent (from --init's networks when given) or the search
 * (from the references' starts and init_placement). Errors: INVALID (bad
 * settings, a device set that cannot host the graph, a refused start),
 * IO, PARSE (--init's file), NOMEM. o's strings and arrays must outlive the
 * job. */
dp_optimize *dp_optimize_init(const dp_optimize_options *o, dp_error *err);
void dp_optimize_free(dp_optimize *op);

/* Runs the method until a budget is spent or the cancel flag is set, then
 * search-after (not when cancelled), then writes the trace. hooks may be
 * NULL. Errors: the run driver's. */
dp_status dp_optimize_run(dp_optimize *op, const dp_optimize_hooks *hooks, dp_error *err);

/* The parts, valid until dp_optimize_free. */
const dp_reference *dp_optimize_reference(const dp_optimize *op);
dp_agent *dp_optimize_agent(const dp_optimize *op);           /* NULL: the search   */
dp_search *dp_optimize_search(const dp_optimize *op);         /* the method's (NULL:
                                                                  an agent)          */
dp_search *dp_optimize_search_after(const dp_optimize *op);   /* NULL: none run      */
dp_method dp_optimize_method(const dp_optimize *op);          /* as run (wrapped)    */
/* The method's state (the training's), and the one that holds the job's
 * best placement: search-after's when it found one, else the method's. */
const dp_run_state *dp_optimize_state(const dp_optimize *op);
const dp_run_state *dp_optimize_final_state(const dp_optimize *op);
/* The run driver's result of the method's run (dp_run_result). */
const dp_run_result *dp_optimize_result(const dp_optimize *op);
/* Simulations the agent's elite walks made in this process. */
int64_t dp_optimize_walk_simulations(const dp_optimize *op);
/* The simulator context of the references and the trace (for g on ds). */
dp_sim *dp_optimize_sim(const dp_optimize *op);
/* What the job placed (the settings' units resolved for g: AUTO, the
 * default, is whole modules on a PyTorch export, else ops); the baselines,
 * the method and search-after place the same, and with modules the best
 * placement file says so ("units"). */
dp_units_spec dp_optimize_units(const dp_optimize *op);

#ifdef __cplusplus
}
#endif
#endif
