/* The reference placements (include/dplace/reference.h): the baseline
 * placers run and simulated in one place for every caller. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/reference.h"

dp_reference_options dp_reference_options_default(void) {
    dp_reference_options o;
    memset(&o, 0, sizeof o);
    o.place = dp_place_options_default();
    o.bound = 1;
    o.threads = 1;
    return o;
}

void dp_reference_free(dp_reference *r) {
    if (!r) return;
    free(r->reports), free(r->placements);
    memset(r, 0, sizeof *r);
}

dp_status dp_reference_compute(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const dp_reference_options *o,
                               dp_reference *out, dp_error *err) {
    dp_reference_options d = o ? *o : dp_reference_options_default();
    dp_place_method all[DP_PLACE_METHOD_COUNT];
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) all[m] = (dp_place_method)m;
    const dp_place_method *list = d.methods ? d.methods : all;
    int32_t n = d.methods ? d.n_methods : DP_PLACE_METHOD_COUNT;
    memset(out, 0, sizeof *out);
    out->n_ops = g->n_ops;
    out->gpu_s = out->expert_s = out->best_s = NAN;
    out->best = -1;
    size_t rows = n > 0 ? (size_t)n : 1;
    out->reports = calloc(rows, sizeof *out->reports);
    out->placements = malloc(rows * ((size_t)g->n_ops + 1) * sizeof(int32_t));
    if (!out->reports || !out->placements) {
        dp_reference_free(out);
        return dp_error_set(err, DP_STATUS_NOMEM, "reference placements: out of memory");
    }
    dp_status st = dp_place_evaluate_all(sim, g, ds, list, n, &d.place, d.threads, out->placements, out->reports, err);
    if (st) {
        dp_reference_free(out);
        return st;
    }
    out->n = n;
    for (int32_t k = 0; k < n; k++) {
        const dp_place_report *r = &out->reports[k];
        if (r->status) continue;
        if (list[k] == DP_PLACE_METHOD_GPU && r->sim.valid && !out->gpu_valid)
            out->gpu_s = r->sim.step_time_s, out->gpu_valid = 1;
        if (list[k] == DP_PLACE_METHOD_EXPERT && r->sim.valid && !out->expert_valid)
            out->expert_s = r->sim.step_time_s, out->expert_valid = 1;
        if (r->sim.valid && (out->best < 0 || r->sim.step_time_s < out->best_s)) {
            out->best = k, out->best_s = r->sim.step_time_s;
            out->best_name = dp_place_method_name(list[k]);
        }
    }
    if (d.bound) {
        if ((st = dp_run_lower_bound(g, ds, sim, &out->bound, err))) {
            dp_reference_free(out);
            return st;
        }
    }
    return DP_STATUS_OK;
}

const dp_place_report *dp_reference_report(const dp_reference *r, dp_place_method m) {
    for (int32_t k = 0; r && k < r->n; k++)
        if (r->reports[k].method == m) return &r->reports[k];
    return NULL;
}

const int32_t *dp_reference_placement(const dp_reference *r, dp_place_method m) {
    for (int32_t k = 0; r && k < r->n; k++)
        if (r->reports[k].method == m)
            return r->reports[k].status ? NULL : r->placements + (size_t)k * (size_t)r->n_ops;
    return NULL;
}

dp_status dp_reference_parse_methods(const char *list, dp_place_method *out, int32_t max, int32_t *n,
                                     dp_error *err) {
    *n = 0;
    if (!strcmp(list, "none")) return DP_STATUS_OK;
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        dp_place_method m;
        if (len == 0 || len >= sizeof name || dp_place_method_from_name(name, &m))
            return dp_error_set(err, DP_STATUS_INVALID,
                                "unknown method \"%.*s\" (cpu, gpu, expert, scotch, mincut, metis, m-topo, m-etf, "
                                "m-sct, accel-balanced, accel-sequential; comma-separated, or none)",
                                (int)(len < 64 ? len : 64), p);
        if (*n == max) return dp_error_set(err, DP_STATUS_INVALID, "more than %d methods", (int)max);
        out[(*n)++] = m;
        if (!p[len]) return DP_STATUS_OK;
        p += len + 1;
    }
}
