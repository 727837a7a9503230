/* dplace: simulator-guided placement search (docs/search.md).
 *
 * Starting from the best of the placements it is given (the expert's,
 * single GPU, every baseline placer's, a learned agent's best), the search
 * improves a placement by moves the simulator judges:
 *   - a unit to another device, or two units on different devices swapped;
 *     units are TensorFlow's colocation units (an op, or its colocation
 *     group), chains of single-consumer ops, layer scopes (a layer's forward
 *     and gradient ops) and their parent scopes;
 *   - moves proposed from the current placement's simulated critical path:
 *     the op waiting for a transfer to its producer's device (or the
 *     producer to the consumer's), an op of the path off the busiest device;
 *     and moves at random;
 * accepted by the Metropolis rule under a temperature relative to the
 * current step time, annealed per step and reheated when a chain restarts
 * from the best placement found. A move that surely overflows a device's
 * memory (dp_sim_delta_surely_oom) is rejected before it is simulated; the
 * others are simulated from the current placement by dp_sim_delta (results
 * equal full simulations, bit for bit).
 *
 * Threads: `threads` independent chains, one delta evaluator each, run their
 * moves of a step in parallel; after each step the best placement is
 * shared, and every `sync_steps` steps the worst chain restarts from it. All
 * decisions depend on step and move counts, never on wall time, so a seed
 * and a thread count give one placement, and a run resumed from a
 * checkpoint ends as the run that was not interrupted.
 *
 * The search is a run-driver method (dplace/run.h): dp_run gives it budgets,
 * the per-move log (one row per simulated move), the best placement file,
 * the curve, checkpoints and cancellation (a step is short: the flag is
 * honoured between steps).
 *
 * Layer: search (src/search), above run, place and sim, below the CLI. */
#ifndef DPLACE_SEARCH_H
#define DPLACE_SEARCH_H

#include <signal.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/reference.h"
#include "dplace/run.h"
#include "dplace/settings.h"
#include "dplace/sim.h"
#include "dplace/units.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The search's settings: a row each (dp_search_options_rows) but seed and
 * threads, which come from the run (--seed, --threads). */
typedef struct dp_search_options {
    uint64_t seed;          /* seeds every chain (chain c: seed and c)            */
    int32_t threads;        /* independent chains, each on its own thread (>= 1)  */
    int32_t moves;          /* moves each chain proposes per step (>= 1)          */
    double t0;              /* starting temperature: a move making the step time x
                               times worse (x relative) is accepted with
                               probability exp(-x / t) (> 0)                      */
    double decay;           /* the temperature's factor per step (0 < d <= 1)     */
    double t_min;           /* the temperature's floor, relative to t0            */
    int32_t restart_steps;  /* a chain without a better placement of its own for
                               this many steps restarts from the best found,
                               reheated to t0 (>= 1)                              */
    int32_t sync_steps;     /* every this many steps the chain with the worst
                               current placement restarts from the best (>= 1)   */
    double critical;        /* share of moves proposed from the critical path     */
    double swap;            /* share of swaps among the other moves               */
    dp_units_spec units;    /* what a move moves (dplace/units.h; --units, not in
                               the table): OP (zeroed), the levels of
                               docs/search.md; MODULE, whole modules and their
                               parents; AUTO resolved at init                 */
} dp_search_options;

/* The search's rows (include/dplace/settings.h), one group; *n their
 * count. */
const dp_setting *dp_search_options_rows(int32_t *n);
/* Defaults: seed 1, 1 thread, units OP, and every row's base value. */
dp_search_options dp_search_options_default(void);
/* Writes every row as "key=value ..." in the rows' order (a checkpoint's
 * identity); returns the length it needed (snprintf's rule). */
size_t dp_search_options_format(const dp_search_options *o, char *buf, size_t size);

typedef struct dp_search dp_search;

/* A search of g on ds, simulated by sim (a context for g on ds; it, g and
 * ds must outlive the search). Builds the units and one delta evaluator per
 * chain. NULL with err: DP_STATUS_INVALID for bad options, DP_STATUS_NOMEM. */
dp_search *dp_search_init(const dp_graph *g, const dp_devices *ds, const dp_sim *sim, const dp_search_options *opt,
                          dp_error *err);
void dp_search_free(dp_search *s);

/* Offers a start: the search begins from the best start offered before its
 * first step (valid ones by step time, then out-of-memory ones by how far
 * they overflow; the first of equals). name (copied, may be truncated) says
 * where it came from. DP_STATUS_INVALID naming `name` when the placement
 * has a device out of range, breaks a device constraint or splits a
 * colocation group; nothing is kept then. Ignored after the first step. */
dp_status dp_search_add_start(dp_search *s, const char *name, const int32_t *placement, dp_error *err);

/* Offers the search its usual starts, in this order: every placement of
 * ref that its placer could make (named after the placer; one the search
 * refuses is left out), init (named init_name; when not NULL, refused with
 * DP_STATUS_INVALID naming it), and single GPU when none of those was
 * offered. ref may be NULL (no baselines run). */
dp_status dp_search_add_starts(dp_search *s, const dp_reference *ref, const int32_t *init, const char *init_name,
                               dp_error *err);

/* Offers a placement found elsewhere (another rank's search, src/dist):
 * simulated, and when valid and faster than the best so far it becomes the
 * best (state best_s, best_placement; found "now": the last step), and the
 * chain whose own best is worst goes on from it, reheated (the others may
 * take it at their restarts). The search's own samples are unchanged. Returns 1 taken, 0 not; -1 with err (INVALID: a
 * device out of range; NOMEM). */
int dp_search_offer_best(dp_search *s, const int32_t *placement, dp_error *err);

/* The start chosen so far (NULL: none), its name and simulated result. */
const int32_t *dp_search_start(const dp_search *s, const char **name, dp_sim_result *res);

/* The search as a run-driver method. Its first step fails with
 * DP_STATUS_INVALID when no start was offered. */
dp_method dp_search_method(dp_search *s);

/* Where the search stands (the run driver's view). */
const dp_run_state *dp_search_get_state(const dp_search *s);

/* Counters of the search so far (resumed runs included). */
typedef struct dp_search_stats {
    int64_t proposed;     /* moves proposed                                   */
    int64_t simulated;    /* of which simulated (the others: surely OOM, or no
                             move found)                                      */
    int64_t oom_rejected; /* rejected by the memory check before simulating    */
    int64_t accepted;     /* simulated and accepted                           */
    int64_t improved;     /* accepted and better than the chain's current      */
    int64_t restarts;     /* chains restarted from the best placement          */
    int64_t critical;     /* moves proposed from the critical path             */
    int32_t n_levels;     /* unit levels in use                                */
    int32_t n_units[5];   /* units per level: op, chain, scope, parent scope,
                             typed (a parent scope's ops of one phase, type) */
} dp_search_stats;

void dp_search_get_stats(const dp_search *s, dp_search_stats *out);

/* Chain c's current placement [n_ops] and its simulated result (as its
 * delta evaluator holds them); NULL before the first step or for c out of
 * range. For the tests: a full simulation of it gives the same result. */
const int32_t *dp_search_chain_placement(const dp_search *s, int32_t c, dp_sim_result *res);

#ifdef __cplusplus
}
#endif
#endif
