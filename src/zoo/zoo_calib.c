/* Calibration: a row of the papers' measured step times beside dplace's
 * simulated ones. Shared by bench/bench_zoo and tests/test_calibration.c. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

static const char *const placement_names[] = {"cpu", "gpu", "expert"};
_Static_assert(sizeof placement_names / sizeof placement_names[0] == DP_ZOO_CALIBRATION_PLACEMENT_COUNT,
               "one name per calibration placement");

/* The name of placement p. */
const char *dp_zoo_calibration_placement_name(dp_zoo_calibration_placement p) {
    assert(p >= 0 && p < DP_ZOO_CALIBRATION_PLACEMENT_COUNT);
    return placement_names[p];
}

/* The row's value for placement p. */
static double paper_value(const dp_zoo_paper_row *row, dp_zoo_calibration_placement p) {
    switch (p) {
    case DP_ZOO_CALIBRATION_PLACEMENT_CPU: return row->cpu_s;
    case DP_ZOO_CALIBRATION_PLACEMENT_GPU: return row->gpu_s;
    default: return row->expert_s;
    }
}

/* Fills out[g->n_ops] with placement p; a non-OK status (err says why) when
 * the placement does not exist for g on ds. */
static dp_status make_placement(dp_zoo_calibration_placement p, const dp_graph *g, const dp_devices *ds,
                                int32_t *out, dp_error *err) {
    if (p == DP_ZOO_CALIBRATION_PLACEMENT_EXPERT) return dp_zoo_expert_placement(g, ds, out, err);
    dp_devkind kind = p == DP_ZOO_CALIBRATION_PLACEMENT_CPU ? DP_DEVKIND_CPU : DP_DEVKIND_GPU;
    int32_t d = dp_devices_nth(ds, kind, 0);
    if (d < 0)
        return dp_error_set(err, DP_STATUS_INVALID, "device set \"%s\" has no %s", ds->name, dp_devkind_name(kind));
    return dp_placement_single(g, ds, d, out, err);
}

/* Judges cell c (paper_s, simulated, dplace_s, dplace_oom filled). */
static void judge(dp_zoo_calibration_cell *c, double tolerance) {
    c->judged = c->paper_s == DP_ZOO_OOM || c->paper_s > 0;
    if (!c->simulated || !c->judged) {
        c->miss = c->judged;
        return;
    }
    if (c->paper_s == DP_ZOO_OOM) {
        c->miss = !c->dplace_oom;
        if (c->miss) snprintf(c->note, sizeof c->note, "the paper runs out of memory, dplace does not");
        return;
    }
    c->ratio = c->dplace_s / c->paper_s;
    if (c->dplace_oom) {
        c->miss = 1;
        snprintf(c->note, sizeof c->note, "dplace runs out of memory, the paper measured %.3f s", c->paper_s);
    } else if (fabs(c->ratio - 1.0) > tolerance) {
        c->miss = 1;
        snprintf(c->note, sizeof c->note, "ratio %.3f is outside 1 +- %.2f", c->ratio, tolerance);
    }
}

dp_status dp_zoo_check_calibration(const dp_zoo_paper_row *row, double tolerance, dp_zoo_calibration_row *out,
                                   dp_error *err) {
    memset(out, 0, sizeof *out);
    out->paper = row;
    dp_error e; /* local, so that statuses are known when err is NULL */
    dp_error_clear(&e);
    dp_status st = DP_STATUS_OK;
    dp_devices *ds = NULL;
    dp_sim *sim = NULL;
    int32_t *p = NULL;
    double t0 = dp_now_s();
    dp_graph *g = dp_zoo_build(row->model, 0, &e);
    out->build_s = dp_now_s() - t0;
    if (!g) {
        st = e.status;
        goto done;
    }
    out->n_ops = g->n_ops;
    if (!(ds = dp_devices_preset(row->devices, &e)) || !(sim = dp_sim_init(g, ds, &e))) {
        st = e.status;
        goto done;
    }
    if (!(p = malloc((size_t)g->n_ops * sizeof *p))) {
        st = dp_error_set(&e, DP_STATUS_NOMEM, "out of memory");
        goto done;
    }
    for (int k = 0; k < DP_ZOO_CALIBRATION_PLACEMENT_COUNT; k++) {
        dp_zoo_calibration_cell *c = &out->cell[k];
        c->paper_s = paper_value(row, (dp_zoo_calibration_placement)k);
        dp_error perr;
        dp_error_clear(&perr);
        if (make_placement((dp_zoo_calibration_placement)k, g, ds, p, &perr)) {
            snprintf(c->note, sizeof c->note, "no %s placement: %.130s", placement_names[k], perr.msg);
        } else {
            dp_sim_result res;
            if ((st = dp_sim_run(sim, p, NULL, &res, &e))) goto done;
            c->simulated = 1;
            c->dplace_s = res.step_time_s;
            c->dplace_oom = res.verdict == DP_SIM_VERDICT_OOM;
        }
        judge(c, tolerance);
        out->n_miss += c->miss;
    }
done:
    if (st) {
        char pre[96];
        snprintf(pre, sizeof pre, "calibration of %s on %s", row->model, row->devices);
        dp_error_prefix(&e, pre);
        if (err) *err = e;
    }
    free(p);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return st;
}
