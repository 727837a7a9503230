/* Shared pieces of the placers and groupers: unit repair, op-time tables,
 * the contracted graph, scaling. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/uf.h"
#include "dplace/cost.h"
#include "dplace/group.h"
#include "place/place_internal.h"

/* ---- helpers for placers ------------------------------------------------ */

/* Joins each gradient op's group (group[op] in 0..*n_groups-1) with its
 * anchor's and renumbers the groups densely in the order of their first op. */
static dp_status join_anchors(const dp_graph *g, const place_fwd *fwd, int32_t *group, int32_t *n_groups,
                              dp_error *err) {
    int32_t n = g->n_ops, ng = *n_groups;
    int32_t *parent = malloc(((size_t)ng + 1) * sizeof(int32_t));
    int32_t *id = malloc(((size_t)ng + 1) * sizeof(int32_t));
    if (!parent || !id) {
        free(parent);
        free(id);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (joining %d groups)", ng);
    }
    for (int32_t k = 0; k < ng; k++) parent[k] = k, id[k] = -1;
    for (int32_t op = 0; op < n; op++)
        if (fwd->anchor[op] >= 0) dp_uf_join(parent, group[op], group[fwd->anchor[op]]);
    *n_groups = dp_uf_relabel(parent, group, n, id);
    free(parent);
    free(id);
    return DP_STATUS_OK;
}

/* Module units (opt->units MODULE) as a grouping: group [n_ops] and
 * *n_groups. DP_STATUS_INVALID when g has no modules, NOMEM. */
static dp_status module_grouping(const dp_graph *g, dp_units_spec us, int32_t *group, int32_t *n_groups,
                                 dp_error *err) {
    dp_units mu;
    dp_status st = dp_units_init_spec(&mu, g, us, err);
    if (st) return st;
    memcpy(group, mu.unit_of, (size_t)g->n_ops * sizeof(int32_t));
    *n_groups = mu.n_units;
    dp_units_free(&mu);
    return DP_STATUS_OK;
}

dp_status dp_place_units(dp_units *u, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                         const dp_place_options *opt, dp_error *err) {
    dp_place_options o = opt ? *opt : dp_place_options_default();
    place_fwd fwd;
    memset(&fwd, 0, sizeof fwd);
    memset(u, 0, sizeof *u);
    dp_status st = o.forward_only ? place_fwd_init(&fwd, g, err) : DP_STATUS_OK;
    if (!st) st = place_units_init(u, g, ds, m, &o, fwd.n_backward ? &fwd : NULL, err);
    place_fwd_free(&fwd);
    return st;
}

dp_status place_units_init(dp_units *u, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                           const dp_place_options *opt, const place_fwd *fwd, dp_error *err) {
    memset(u, 0, sizeof *u);
    dp_units_spec us = dp_units_spec_resolve(opt->units, g);
    if (us.kind == DP_UNITS_MODULE) {
        int32_t *group = malloc((size_t)(g->n_ops > 0 ? g->n_ops : 1) * sizeof(int32_t)), n_groups = 0;
        if (!group) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (modules of %d ops)", g->n_ops);
        dp_status st = module_grouping(g, us, group, &n_groups, err);
        if (!st && fwd) st = join_anchors(g, fwd, group, &n_groups, err);
        if (!st) st = dp_units_init_from_groups(u, group, g->n_ops, n_groups, err);
        free(group);
        return st;
    }
    int32_t grp = dp_place_group_of(m, opt);
    if (grp == DP_PLACE_GROUP_NONE && !fwd) return dp_units_init(u, g, err);
    if (grp != DP_PLACE_GROUP_NONE && (grp < 0 || grp >= DP_GROUP_METHOD_COUNT))
        return dp_error_set(err, DP_STATUS_INVALID, "grouping step %d out of range", grp);
    int32_t *group = malloc((size_t)(g->n_ops > 0 ? g->n_ops : 1) * sizeof(int32_t));
    if (!group) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (grouping %d ops)", g->n_ops);
    int32_t n_groups = 0;
    dp_status st = DP_STATUS_OK;
    if (grp == DP_PLACE_GROUP_NONE) {
        st = dp_units_group_ids(g, group, &n_groups, err);
    } else {
        dp_group_options go = dp_group_options_default();
        go.seed = opt->seed;
        go.n_groups = opt->n_groups;
        int32_t ref = dp_devices_nth(ds, DP_DEVKIND_GPU, 0);
        go.reference = &ds->devices[ref >= 0 ? ref : 0];
        go.keep_unconstrained = 1;
        go.outside = fwd ? fwd->backward : NULL;
        st = dp_group_run((dp_group_method)grp, g, &go, group, &n_groups, err);
    }
    if (!st && fwd) st = join_anchors(g, fwd, group, &n_groups, err);
    if (!st) st = dp_units_init_from_groups(u, group, g->n_ops, n_groups, err);
    free(group);
    return st;
}

void place_units_repair(const dp_units *u, const dp_mask *mask, const double *uw, int32_t n_devices,
                        int32_t *unit_dev) {
    double load[DP_MAX_DEVICES] = {0};
    for (int32_t k = 0; k < u->n_units; k++)
        if (mask[k] & dp_mask_bit(unit_dev[k])) load[unit_dev[k]] += uw[k];
    for (int32_t k = 0; k < u->n_units; k++) {
        if (mask[k] & dp_mask_bit(unit_dev[k])) continue;
        int32_t best = -1;
        for (int32_t d = 0; d < n_devices; d++)
            if ((mask[k] & dp_mask_bit(d)) && (best < 0 || load[d] < load[best])) best = d;
        assert(best >= 0);
        unit_dev[k] = best;
        load[best] += uw[k];
    }
}

/* ---- op times ----------------------------------------------------------- */

dp_status place_costs_init(place_costs *c, const dp_graph *g, const dp_devices *ds, dp_error *err) {
    memset(c, 0, sizeof *c);
    c->n_ops = g->n_ops;
    int32_t rep[DP_MAX_DEVICES]; /* a device of each class */
    for (int32_t d = 0; d < ds->n_devices; d++) {
        int32_t k = 0;
        while (k < c->n_classes && !dp_devices_same_cost(&ds->devices[rep[k]], &ds->devices[d])) k++;
        if (k == c->n_classes) rep[c->n_classes++] = d;
        c->class_of[d] = k;
    }
    c->t = malloc((size_t)c->n_classes * (size_t)g->n_ops * sizeof(double));
    c->total = calloc((size_t)ds->n_devices, sizeof(double));
    if (!c->t || !c->total) {
        place_costs_free(c);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (op times of %d ops)", g->n_ops);
    }
    double class_total[DP_MAX_DEVICES] = {0};
    for (int32_t k = 0; k < c->n_classes; k++) {
        double *row = c->t + (int64_t)k * g->n_ops;
        for (int32_t i = 0; i < g->n_ops; i++) {
            row[i] = dp_cost_op_seconds(g, i, &ds->devices[rep[k]]);
            class_total[k] += row[i];
        }
    }
    for (int32_t d = 0; d < ds->n_devices; d++) c->total[d] = class_total[c->class_of[d]];
    return DP_STATUS_OK;
}

void place_costs_free(place_costs *c) {
    if (!c) return;
    free(c->t);
    free(c->total);
    memset(c, 0, sizeof *c);
}

int32_t place_costs_fastest(const place_costs *c, dp_mask m) {
    int32_t best = -1;
    for (int32_t d = 0; d < DP_MAX_DEVICES; d++)
        if ((m & dp_mask_bit(d)) && (best < 0 || c->total[d] < c->total[best])) best = d;
    assert(best >= 0);
    return best;
}

/* ---- the contracted undirected graph ------------------------------------ */

dp_status place_wgraph_build(place_wgraph *w, const dp_graph *g, const int32_t *vertex_of, int32_t n,
                             const double *op_w, dp_error *err) {
    memset(w, 0, sizeof *w);
    w->n = n;
    /* raw arcs (with duplicates), grouped by their first end */
    int64_t *deg = calloc((size_t)n + 1, sizeof(int64_t));
    w->vw = calloc((size_t)n + 1, sizeof(double));
    if (!deg || !w->vw) goto nomem;
    for (int32_t c = 0; c < g->n_ops; c++) {
        int32_t vc = vertex_of[c];
        if (vc >= 0) w->vw[vc] += op_w[c];
        if (vc < 0) continue;
        const dp_op *o = &g->ops[c];
        for (int32_t k = 0; k < o->n_inputs; k++) {
            int32_t vp = vertex_of[g->inputs[o->inputs_at + k].op];
            if (vp < 0 || vp == vc) continue;
            deg[vp + 1]++;
            deg[vc + 1]++;
        }
    }
    for (int32_t v = 0; v < n; v++) deg[v + 1] += deg[v];
    int64_t raw = deg[n];
    int32_t *radj = malloc((size_t)(raw ? raw : 1) * sizeof(int32_t));
    double *rbytes = malloc((size_t)(raw ? raw : 1) * sizeof(double));
    int64_t *fill = malloc(((size_t)n + 1) * sizeof(int64_t));
    int64_t *slot = malloc(((size_t)n + 1) * sizeof(int64_t)); /* vertex -> arc index in the row being merged */
    w->at = malloc(((size_t)n + 1) * sizeof(int64_t));
    if (!radj || !rbytes || !fill || !slot || !w->at) {
        free(radj);
        free(rbytes);
        free(fill);
        free(slot);
        goto nomem;
    }
    memcpy(fill, deg, ((size_t)n + 1) * sizeof(int64_t));
    for (int32_t c = 0; c < g->n_ops; c++) {
        int32_t vc = vertex_of[c];
        if (vc < 0) continue;
        const dp_op *o = &g->ops[c];
        for (int32_t k = 0; k < o->n_inputs; k++) {
            dp_input in = g->inputs[o->inputs_at + k];
            int32_t vp = vertex_of[in.op];
            if (vp < 0 || vp == vc) continue;
            double b = (double)place_tensor_bytes(g, dp_graph_tensor(g, in.op, in.slot));
            radj[fill[vp]] = vc;
            rbytes[fill[vp]++] = b;
            radj[fill[vc]] = vp;
            rbytes[fill[vc]++] = b;
        }
    }
    free(fill);
    /* merge duplicate neighbours row by row, in place (rows only shrink) */
    for (int32_t v = 0; v < n; v++) slot[v] = -1;
    int64_t out = 0;
    for (int32_t v = 0; v < n; v++) {
        w->at[v] = out;
        for (int64_t a = deg[v]; a < deg[v + 1]; a++) {
            int32_t u = radj[a];
            if (slot[u] >= w->at[v]) {
                rbytes[slot[u]] += rbytes[a];
            } else {
                slot[u] = out;
                radj[out] = u;
                rbytes[out++] = rbytes[a];
            }
        }
    }
    w->at[n] = out;
    free(slot);
    free(deg);
    w->n_arcs = out;
    /* shrink to fit; a failed shrink keeps the larger block */
    int32_t *sadj = realloc(radj, (size_t)(out ? out : 1) * sizeof(int32_t));
    w->adj = sadj ? sadj : radj;
    double *sbytes = realloc(rbytes, (size_t)(out ? out : 1) * sizeof(double));
    w->bytes = sbytes ? sbytes : rbytes;
    return DP_STATUS_OK;
nomem:
    free(deg);
    place_wgraph_free(w);
    return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (graph of %d vertices)", n);
}

void place_wgraph_free(place_wgraph *w) {
    if (!w) return;
    free(w->at);
    free(w->adj);
    free(w->bytes);
    free(w->vw);
    memset(w, 0, sizeof *w);
}

void place_scale(const double *x, int64_t n, double budget, int64_t *out) {
    double sum = 0;
    for (int64_t i = 0; i < n; i++) sum += x[i];
    double f = sum > 0 ? budget / sum : 0;
    for (int64_t i = 0; i < n; i++) out[i] = 1 + (int64_t)floor(x[i] * f);
}
