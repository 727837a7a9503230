/* dplace: the reference placements that a learned or searched placement is
 * compared with: single GPU, the human expert, every baseline placer (or
 * those asked for), the fastest valid one of them, and the lower bound of
 * any placement's step time. One function computes them for the command
 * line, a learned agent's warm start, the search's starts and every bench,
 * so that they all compare with the same numbers.
 *
 * Layer: run (src/run), above place and sim. */
#ifndef DPLACE_REFERENCE_H
#define DPLACE_REFERENCE_H

#include <stdint.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/place.h"
#include "dplace/run.h"
#include "dplace/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_REFERENCE_MAX 64 /* the most placers one call runs */

typedef struct dp_reference_options {
    const dp_place_method *methods; /* the placers to run, in this order (NULL:
                                       every placer, in dp_place_method order) */
    int32_t n_methods;              /* of methods (0 with methods set: none) */
    dp_place_options place;  /* the placers' options (the expert's source)   */
    int bound;               /* compute the lower bound (dp_run_lower_bound)  */
    int32_t threads;         /* placers run at once (dp_place_evaluate_all;
                                default 1): the same references whatever
                                the count                                    */
} dp_reference_options;

/* Defaults: every placer, dp_place_options_default (no expert source: the
 * caller sets place.expert, e.g. dp_zoo_expert_placement), the bound on,
 * one thread. */
dp_reference_options dp_reference_options_default(void);

typedef struct dp_reference {
    int32_t n_ops;
    int32_t n;                     /* placers run, in the order asked          */
    dp_place_report *reports;      /* [n]; sim.link cleared                    */
    int32_t *placements;           /* [n, n_ops]: row k is reports[k]'s placement
                                      (meaningful when its status is OK)      */
    double gpu_s, expert_s;        /* NaN when not run, failed or not valid    */
    int gpu_valid, expert_valid;
    int32_t best;                  /* the fastest valid report (the first of
                                      equals), -1: none                        */
    double best_s;                 /* its step time (NaN: none)                */
    const char *best_name;         /* its placer's name (NULL: none)           */
    dp_run_bound bound;            /* when asked (zeros otherwise)              */
} dp_reference;

/* Runs the placers o asks for (o NULL: the defaults) on g and ds, up to
 * o->threads at once, each timed and simulated by sim (a context for g on
 * ds), keeps their placements and reports, and computes the bound when
 * asked. A placer that cannot apply
 * is not an error: its report's status says why. Errors: NOMEM, or a
 * placer's bug (an index out of range); out is then empty. Free out with
 * dp_reference_free. */
dp_status dp_reference_compute(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const dp_reference_options *o,
                               dp_reference *out, dp_error *err);
void dp_reference_free(dp_reference *r);

/* The report of placer m (its first run), or NULL when it was not run. */
const dp_place_report *dp_reference_report(const dp_reference *r, dp_place_method m);
/* The placement of placer m [n_ops], or NULL when it was not run or could
 * not apply. */
const int32_t *dp_reference_placement(const dp_reference *r, dp_place_method m);

/* Reads a comma-separated list of placer names ("gpu,expert,m-etf") into
 * out[max], *n of them; "none" is the empty list. DP_STATUS_INVALID naming
 * the unknown name, an empty list or one longer than max. */
dp_status dp_reference_parse_methods(const char *list, dp_place_method *out, int32_t max, int32_t *n,
                                     dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
