/* The placements worth measuring for a calibration: each device alone, the
 * baselines' placements, and splits that load the links between each pair
 * of devices (include/dplace/calib.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/calib.h"
#include "dplace/placement.h"

/* Appends placement p under name when it simulates as valid and is not
 * already listed; *cap grows the arrays. */
static dp_status propose_add(dp_sim *sim, dp_calib_proposal *out, int32_t *cap, const char *name, const int32_t *p,
                             dp_error *err) {
    dp_sim_result res;
    dp_status st = dp_sim_run(sim, p, NULL, &res, err);
    if (st) return st;
    if (!res.valid) return DP_STATUS_OK;
    size_t n_ops = (size_t)out->n_ops;
    for (int32_t k = 0; k < out->n; k++)
        if (!memcmp(out->placements + (size_t)k * n_ops, p, n_ops * sizeof(int32_t))) return DP_STATUS_OK;
    if (out->n == *cap) {
        int32_t nc = *cap ? 2 * *cap : 32;
        char(*nn)[DP_CALIB_NAME_MAX] = realloc(out->name, (size_t)nc * sizeof *nn);
        if (nn) out->name = nn;
        int32_t *np = realloc(out->placements, (size_t)nc * n_ops * sizeof(int32_t) + 4);
        if (np) out->placements = np;
        double *ns = realloc(out->simulated_s, (size_t)nc * sizeof(double));
        if (ns) out->simulated_s = ns;
        if (!nn || !np || !ns)
            return dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory proposing placements");
        *cap = nc;
    }
    snprintf(out->name[out->n], sizeof out->name[0], "%s", name);
    memcpy(out->placements + (size_t)out->n * n_ops, p, n_ops * sizeof(int32_t));
    out->simulated_s[out->n++] = res.step_time_s;
    return DP_STATUS_OK;
}

/* The split of g's topological order at percent: ops before it on `first`,
 * the rest on `second`. A colocation group goes where its first op in that
 * order goes, unless a member's constraint forbids it (then the other
 * device); an op its constraint keeps off both goes to the first device
 * that allows it. into[n_ops]; gdev: scratch [n_colocate]. */
static void split_placement(const dp_graph *g, const dp_devices *ds, int32_t first, int32_t second, int percent,
                            int32_t *into, int32_t *gdev, uint8_t *gbad) {
    int32_t n = g->n_ops, cut = (int32_t)((int64_t)n * percent / 100);
    for (int32_t c = 0; c < g->n_colocate; c++)
        gdev[c] = -1, gbad[c] = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t i = g->topo[k], c = g->coloc_group[i];
        into[i] = k < cut ? first : second;
        if (c >= 0 && gdev[c] < 0) gdev[c] = into[i];
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->coloc_group[i];
        if (c >= 0 && !dp_placement_allowed(g, ds, i, gdev[c])) gbad[c] = 1;
    }
    for (int32_t i = 0; i < n; i++) { /* a group one member forbids moves to the pair's other device */
        int32_t c = g->coloc_group[i];
        if (c >= 0 && gbad[c] == 1) gdev[c] = gdev[c] == first ? second : first, gbad[c] = 2;
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->coloc_group[i];
        if (c >= 0) into[i] = gdev[c];
        if (dp_placement_allowed(g, ds, i, into[i])) continue;
        int32_t other = into[i] == first ? second : first, d = 0;
        if (dp_placement_allowed(g, ds, i, other))
            into[i] = other;
        else {
            while (d < ds->n_devices && !dp_placement_allowed(g, ds, i, d))
                d++;
            if (d < ds->n_devices) into[i] = d;
        }
    }
}

/* Every device alone, then the reference placements o asks for. */
static dp_status propose_singles_and_references(dp_sim *sim, const dp_graph *g, const dp_devices *ds,
                                                const dp_reference_options *o, dp_calib_proposal *out, int32_t *cap,
                                                int32_t *p, dp_error *err) {
    char name[DP_CALIB_NAME_MAX];
    dp_status st = DP_STATUS_OK;
    for (int32_t d = 0; d < ds->n_devices && !st; d++) {
        snprintf(name, sizeof name, "single-%s", ds->devices[d].name);
        st = dp_placement_single(g, ds, d, p, err);
        if (!st) st = propose_add(sim, out, cap, name, p, err);
    }
    if (st) return st;
    dp_reference ref;
    dp_reference_options def = dp_reference_options_default();
    def.bound = 0;
    if ((st = dp_reference_compute(sim, g, ds, o ? o : &def, &ref, err))) return st;
    for (int32_t k = 0; k < ref.n && !st; k++) {
        if (ref.reports[k].status != DP_STATUS_OK) continue;
        st = propose_add(sim, out, cap, dp_place_method_name(ref.reports[k].method),
                         ref.placements + (size_t)k * g->n_ops, err);
    }
    dp_reference_free(&ref);
    return st;
}

dp_status dp_calib_propose(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const dp_reference_options *o,
                           dp_calib_proposal *out, dp_error *err) {
    memset(out, 0, sizeof *out);
    out->n_ops = g->n_ops;
    int32_t cap = 0;
    int32_t *p = malloc(((size_t)g->n_ops + 1) * sizeof *p), *gdev = malloc(((size_t)g->n_colocate + 1) * sizeof *gdev);
    uint8_t *gbad = malloc((size_t)g->n_colocate + 1);
    dp_status st = (p && gdev && gbad)
                       ? DP_STATUS_OK
                       : dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory proposing placements");
    if (!st) st = propose_singles_and_references(sim, g, ds, o, out, &cap, p, err);
    static const int percents[] = {25, 50, 75};
    for (int32_t a = 0; a < ds->n_devices && !st; a++) {
        for (int32_t b = a + 1; b < ds->n_devices && !st; b++) {
            for (int order = 0; order < 2 && !st; order++) {
                int32_t first = order ? b : a, second = order ? a : b;
                for (int k = 0; k < 3 && !st; k++) {
                    char name[DP_CALIB_NAME_MAX];
                    snprintf(name, sizeof name, "split-%s-%s-%d", ds->devices[first].name, ds->devices[second].name,
                             percents[k]);
                    split_placement(g, ds, first, second, percents[k], p, gdev, gbad);
                    st = propose_add(sim, out, &cap, name, p, err);
                }
            }
        }
    }
    free(p), free(gdev), free(gbad);
    if (st) dp_calib_proposal_free(out);
    return st;
}

void dp_calib_proposal_free(dp_calib_proposal *p) {
    if (!p) return;
    free(p->name), free(p->placements), free(p->simulated_s);
    memset(p, 0, sizeof *p);
}
