/* The imitation warm start's target (warm-start; dplace's, after DOPPLER,
 * which first imitates a heuristic before reinforcement learning): a
 * baseline placer's placement of the graph, turned into what the policy
 * decides, the encoder's choice and each element's device:
 *
 *   every op placed (the op encoder), or fixed groups: each element takes
 *     the device most of its ops are on;
 *   the learned grouper: a grouping made for the placement, each device's
 *     ops in topological order cut into contiguous runs, the runs shared out
 *     in proportion to the ops (a device with ops gets at least one group),
 *     each run a group on its device (the same runs are the fixed grouping
 *     of grouper=runs).
 *
 * The core (agent.c) then takes warm-steps Adam steps on -log p(target) and
 * starts training from there. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "dplace/reference.h"

/* The placement of the placer the setting names (the fastest valid one
 * for BEST) into place [N]; *t gets its step time, *from the placer's name. */
static dp_status baseline_placement(const dp_agent *a, int32_t *place, double *t, const char **from, dp_error *err) {
    dp_sim *sim = dp_sim_init(a->g, a->ds, err);
    if (!sim) return err->status;
    dp_reference_options o = dp_reference_options_default();
    o.place.expert = a->eo.expert;
    o.place.units = a->cfg.units; /* the target places what the agent places */
    o.bound = 0;
    dp_place_method one = (dp_place_method)(a->cfg.warm.from - DP_AGENT_WARM_CPU);
    if (a->cfg.warm.from != DP_AGENT_WARM_BEST) o.methods = &one, o.n_methods = 1;
    dp_reference ref;
    dp_status st = dp_reference_compute(sim, a->g, a->ds, &o, &ref, err);
    dp_sim_free(sim);
    if (st) return st;
    *t = INFINITY, *from = NULL;
    if (ref.best >= 0) {
        *t = ref.best_s, *from = ref.best_name;
        memcpy(place, ref.placements + (size_t)ref.best * (size_t)a->N, sizeof(int32_t) * (size_t)a->N);
    }
    dp_reference_free(&ref);
    if (!*from)
        st = dp_error_set(err, DP_STATUS_INVALID, "warm start: %s gives no valid placement of %s on %s",
                          dp_agent_warm_name(a->cfg.warm.from), a->g->name, a->ds->name);
    return st;
}

/* groups[D]: T groups shared out over the devices in proportion to their
 * op counts n[D] (largest remainders), at least one for each device with
 * ops while there are groups enough. */
static void share_groups(const int32_t *n, int32_t D, int32_t N, int32_t T, int32_t *groups) {
    double rem[D];
    int32_t given = 0;
    for (int32_t d = 0; d < D; d++) {
        double q = (double)T * n[d] / N;
        groups[d] = n[d] > 0 ? (int32_t)q : 0;
        rem[d] = n[d] > 0 ? q - groups[d] : -1.0;
        given += groups[d];
    }
    for (int32_t d = 0; d < D && given < T; d++) /* a device with ops and no group first */
        if (n[d] > 0 && groups[d] == 0) groups[d] = 1, given++, rem[d] = -1.0;
    while (given < T) { /* then the largest remainders */
        int32_t best = 0;
        for (int32_t d = 1; d < D; d++)
            if (rem[d] > rem[best]) best = d;
        if (rem[best] < 0) { /* none left: the device with the most ops */
            for (int32_t d = 1; d < D; d++)
                if (n[d] > n[best]) best = d;
        }
        groups[best]++, given++, rem[best] = -1.0;
    }
}

void agent_warm_runs(const dp_agent *a, int32_t T, int32_t *choice, int32_t *devs) {
    const int32_t *place = a->warm_place;
    int32_t N = a->N, D = a->D, n[D], groups[D], first[D], seen[D];
    memset(n, 0, sizeof n);
    for (int32_t i = 0; i < N; i++) n[place[i]]++;
    share_groups(n, D, N, T, groups);
    for (int32_t d = 0, g = 0; d < D; d++) {
        first[d] = g, seen[d] = 0;
        for (int32_t k = 0; k < groups[d]; k++) devs[g++] = d;
    }
    for (int32_t k = 0; k < N; k++) {
        int32_t i = a->g->topo[k], d = place[i];
        choice[i] = groups[d] ? first[d] + (int32_t)((int64_t)seen[d]++ * groups[d] / n[d]) : 0;
    }
}

/* devs [T]: each element's device, the one most of its ops are on (ties:
 * the lower device). */
static dp_status majority_devices(const dp_agent *a, const int32_t *choice, const int32_t *place, int32_t *devs,
                                  dp_error *err) {
    int32_t T = a->T, D = a->D;
    int32_t *count = calloc((size_t)T * D, sizeof *count);
    if (!count) return dp_error_set(err, DP_STATUS_NOMEM, "warm start: out of memory");
    for (int32_t i = 0; i < a->N; i++) count[(int64_t)choice[i] * D + place[i]]++;
    for (int32_t e = 0; e < T; e++) {
        int32_t best = 0;
        for (int32_t d = 1; d < D; d++)
            if (count[(int64_t)e * D + d] > count[(int64_t)e * D + best]) best = d;
        devs[e] = best;
    }
    free(count);
    return DP_STATUS_OK;
}

dp_status agent_warm_place(dp_agent *a, dp_error *err) {
    if (a->warm_place) return DP_STATUS_OK;
    int32_t *place = malloc(sizeof(int32_t) * (size_t)a->N);
    if (!place) return dp_error_set(err, DP_STATUS_NOMEM, "warm start: out of memory");
    dp_status st = baseline_placement(a, place, &a->prep.warm_target_s, &a->prep.warm_from, err);
    if (st) free(place);
    else a->warm_place = place;
    return st;
}

dp_status agent_warm_target(dp_agent *a, int32_t *choice, int32_t *devs, dp_error *err) {
    dp_status st = agent_warm_place(a, err);
    if (st) return st;
    if (a->enc->n_rows) {
        agent_warm_runs(a, a->T, choice, devs);
        return DP_STATUS_OK;
    }
    memcpy(choice, a->enc->choice, sizeof(int32_t) * (size_t)a->N);
    return majority_devices(a, choice, a->warm_place, devs, err);
}
