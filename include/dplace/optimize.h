/* dplace: one optimisation job, as `dplace optimize` runs it, for any
 * caller (the command line, a bench, a binding): the reference placements
 * (single GPU, the expert, every baseline placer, the lower bound), then a
 * learned agent (include/dplace/agent.h) or the search
 * (include/dplace/search.h) through the run driver (include/dplace/run.h)
 * with its budgets, logs, best placement, checkpoints and curve, then, for
 * a learned agent with search-after, the search from its best placement,
 * and the timeline of the best placement found.
 *
 * The job's rules live here, not in its front ends: a front end passes
 * what it was told through (the agent's name, the settings as KEY=VALUE
 * strings, the numbers as given), dp_optimize_prepare judges all of it in
 * one place (the presets, the overrides, every cross-option rule, the
 * budgets' defaults), and the result is read back through one summary
 * (dp_optimize_get_best) and one JSON writer (dp_optimize_json), so that
 * the command line, Python and the benches say the same thing in the same
 * words. The same arguments give the same run whoever calls it.
 *
 *     dp_optimize_options o = dp_optimize_options_default();
 *     o.g = g, o.ds = ds, o.agent = "dplace", o.max_seconds = 240;
 *     dp_optimize *op = dp_optimize_init(&o, &err);
 *     dp_optimize_run(op, NULL, &err);
 *     dp_optimize_best best;
 *     dp_optimize_get_best(op, &best);   // best.step_time_s, best.placement
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
#include "dplace/pretrained.h"
#include "dplace/search.h"
#include "dplace/settings_job.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_optimize dp_optimize;

/* One setting by name, as a front end got it: `--set KEY=VALUE`, a
 * component flag (`--grouper metis`: key "grouper"), Python's
 * settings={KEY: VALUE}. "_" may stand for "-" in the key. */
typedef struct dp_optimize_set {
    const char *key, *value;
} dp_optimize_set;

#define DP_OPTIMIZE_UPDATES_DEFAULT 1000        /* an agent's, when no budget is given (the papers') */
#define DP_OPTIMIZE_SEARCH_UPDATES_DEFAULT 2000 /* the search's                                     */

typedef struct dp_optimize_options {
    const dp_graph *g;              /* finalized; must outlive the job          */
    const dp_devices *ds;
    /* what runs, as the front end was told it (judged by dp_optimize_prepare) */
    const char *agent;              /* a preset (dp_settings_preset_names),
                                       "search" for dplace's search, or
                                       "pretrained" for the placer trained
                                       across graphs (dplace/pretrained.h)     */
    const dp_optimize_set *sets;    /* settings applied in order after the
                                       preset's                                 */
    int32_t n_sets;
    const char *units;              /* NULL or "auto", "op", "module",
                                       "module:DEPTH"                           */
    double search_after_s;          /* > 0: a learned agent's search-after,
                                       replacing the preset's                   */
    int64_t seed;                   /* 0..2^31-1: seeds the agent, the search's
                                       chains and the simulator's noise         */
    int64_t threads;                /* 1..256: the agent's evaluations and
                                       products, the search's chains            */
    /* budgets (none given: DP_OPTIMIZE_*UPDATES_DEFAULT updates) */
    int64_t max_updates;            /* < 0: not given; 0: an agent's greedy
                                       placement alone                          */
    int64_t max_placements;         /* < 0: not given; else >= 1               */
    double max_seconds;             /* < 0: not given; the whole job,
                                       search-after included                   */
    /* the comparison and the search's starts */
    const char *baselines;          /* NULL: every placer; "none"; or a
                                       comma-separated list of placers          */
    dp_place_expert_fn expert;      /* where the expert placement comes from
                                       (NULL: none)                            */
    const int32_t *init_placement;  /* NULL, or a start for the search [n_ops] */
    const char *init_placement_name;/* its name in the summary                  */
    const char *init_policy_path;   /* NULL, or a checkpoint whose networks the
                                       agent starts from (--init)              */
    /* the evaluator of an agent: its sim (noise, steps, warmup, mean),
     * cache, measure_cmd and measure_timeout_s as given (judged here);
     * threads, seed, expert and cancel are set from the above */
    dp_agent_eval_options eval;
    /* outputs (NULL: none) */
    const char *best_path;          /* the job's best placement, rewritten when
                                       better                                  */
    const char *log_path;           /* per sample; beside it X.updates.csv per
                                       update, X.search.csv per search move of
                                       search-after                            */
    const char *checkpoint_path;
    int64_t checkpoint_every;       /* updates between checkpoints (>= 1)       */
    const char *resume_path;        /* NULL, or the checkpoint to continue      */
    const char *plot_path;          /* the job's curve (SVG): both phases,
                                       rewritten when each ends                */
    const char *trace_path;         /* the best placement's timeline            */
    const volatile sig_atomic_t *cancel; /* NULL, or the flag that stops the job */
    /* NULL, or called once the method exists: may replace *m by a method
     * around it (a distributed run's); agent or search is the method's */
    dp_status (*wrap)(void *user, dp_agent *agent, dp_search *search, dp_method *m, dp_error *err);
    void *wrap_user;
} dp_optimize_options;

/* What dp_optimize_prepare makes of the options: everything the job runs
 * by, judged. */
typedef struct dp_optimize_plan {
    int search;                     /* the method is the search, not an agent  */
    int pretrained;                 /* the method is the pretrained placer     */
    dp_settings settings;           /* the preset (the search's base values for
                                       the search), the walks' rule, the sets;
                                       its search's seed and threads the job's */
    dp_units_spec units;            /* as given (AUTO: resolved for the graph
                                       by dp_optimize_init)                     */
    int all_baselines;              /* every placer (baselines NULL)           */
    dp_place_method baselines[DP_REFERENCE_MAX];
    int32_t n_baselines;
    /* the method's run: the budgets with their defaults, and its share of the
     * time budget (< 0: none); search-after's seconds (0: none) */
    int64_t max_updates, max_placements;
    double train_s, after_s;
    /* what the front end should tell the user, one warning a line ("elite
     * walks off ...", a renamed setting's new name); "" when none */
    char notes[1024];
} dp_optimize_plan;

/* Judges the options without the graph: the agent's name, the settings
 * (the preset, then, for noisy or measured evaluations, the elite walks off
 * with a note, then the sets in order; the search refuses a learned agent's
 * settings), the units' and the baselines' names, the numbers' ranges (the
 * measuring protocol's by dp_sim_options_check), and every rule across
 * options: one budget of updates or placements; --init or --resume, not
 * both; the search takes no --init, search-after, --measure, noise or
 * steps, and at least one update; a start placement is the search's;
 * search-after simulates, so not with --measure, and fits in the time
 * budget. Fills *plan on success. Errors: INVALID, with a message that
 * names the option and what it takes, the same whatever the front end. */
dp_status dp_optimize_prepare(const dp_optimize_options *o, dp_optimize_plan *plan, dp_error *err);

/* Defaults: no graph, agent "hp", units auto, seed 1, 1 thread, no
 * budget set, every baseline, no expert source, the evaluator's defaults,
 * checkpoints every 50 updates, no outputs. */
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

/* Prepares the options (dp_optimize_prepare), computes the reference
 * placements and builds the method: the agent (from --init's networks when
 * given) or the search (from the references' starts and init_placement).
 * Errors: INVALID (the options, a device set that cannot host the graph, a
 * refused start), IO, PARSE (--init's file), NOMEM. o's strings and arrays
 * must outlive the job. */
dp_optimize *dp_optimize_init(const dp_optimize_options *o, dp_error *err);
void dp_optimize_free(dp_optimize *op);

/* Runs the method until a budget is spent or the cancel flag is set, then
 * search-after (not when cancelled), then writes the trace. A time budget
 * holds both phases: training begins no update that would end past its
 * share if it took as long as the one before, and when it still runs past
 * (an update is never cut short), search-after gets what is left, none
 * when nothing is. hooks may be NULL. Errors: the run driver's. */
dp_status dp_optimize_run(dp_optimize *op, const dp_optimize_hooks *hooks, dp_error *err);

/* The job's answer: the best placement of the whole job (search-after's
 * when it found one, else the method's), the one written to best_path. */
typedef struct dp_optimize_best {
    double step_time_s;         /* inf: no valid placement                 */
    const char *by;             /* what found it (dp_run_best_by_name)     */
    const char *phase;          /* "train" (the agent's, or the search
                                   alone) or "search-after"                */
    int64_t update, sample;     /* when, counted in its phase              */
    double found_s;             /* seconds into the job's runs when found  */
    const int32_t *placement;   /* [n_ops], NULL when none                 */
} dp_optimize_best;
void dp_optimize_get_best(const dp_optimize *op, dp_optimize_best *out);

/* The job's summary as one JSON object (the keys: docs/formats.md,
 * "dplace optimize --json"): the job's best under best_*, the training's own best
 * under train_best_*, the references and the lower bound, the search's
 * and the agent's figures. interrupted: whether the job was stopped
 * (beside the job's own record); digits: significant digits of the
 * numbers (1..17; 17 reads back every double exactly). A malloc'd string
 * the caller frees, or NULL with NOMEM. */
char *dp_optimize_json(const dp_optimize *op, int interrupted, int digits, dp_error *err);

/* The plan the job runs by (dp_optimize_prepare's, units resolved), and
 * the options as the job holds them (its evaluator's threads, seed and
 * cancel flag filled in). */
const dp_optimize_plan *dp_optimize_get_plan(const dp_optimize *op);
const dp_optimize_options *dp_optimize_get_options(const dp_optimize *op);
/* Whether the cancel flag stopped a phase of the job. */
int dp_optimize_interrupted(const dp_optimize *op);

/* The parts, valid until dp_optimize_free. */
const dp_reference *dp_optimize_reference(const dp_optimize *op);
dp_agent *dp_optimize_agent(const dp_optimize *op);           /* NULL: the search   */
dp_pretrained *dp_optimize_pretrained(const dp_optimize *op); /* the pretrained placer, or NULL */
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
