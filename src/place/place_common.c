/* Shared pieces of the placers and groupers: colocation units, device masks,
 * op-time tables, the contracted graph, scaling. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/cost.h"
#include "dplace/placement.h"
#include "place/place_internal.h"

/* ---- colocation units --------------------------------------------------- */

dp_status place_units_init(place_units *u, const dp_graph *g, dp_error *err) {
    assert(g->finalized);
    memset(u, 0, sizeof *u);
    int32_t n = g->n_ops, n_strings = dp_graph_n_strings(g);
    u->n_ops = n;
    u->unit_of = malloc((size_t)n * sizeof(int32_t));
    u->members = malloc((size_t)n * sizeof(int32_t));
    u->first = malloc(((size_t)n + 1) * sizeof(int32_t));
    int32_t *of_string = malloc(((size_t)n_strings + 1) * sizeof(int32_t));
    if (!u->unit_of || !u->members || !u->first || !of_string) {
        free(of_string);
        place_units_free(u);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (colocation units of %d ops)", n);
    }
    for (int32_t s = 0; s < n_strings; s++) of_string[s] = -1;
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->ops[i].colocate;
        if (c < 0) {
            u->unit_of[i] = k++;
        } else {
            assert(c < n_strings);
            if (of_string[c] < 0) of_string[c] = k++;
            u->unit_of[i] = of_string[c];
        }
    }
    free(of_string);
    u->n_units = k;
    /* counting sort of ops by unit, stable (op order within a unit) */
    memset(u->first, 0, ((size_t)k + 1) * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) u->first[u->unit_of[i] + 1]++;
    for (int32_t j = 0; j < k; j++) u->first[j + 1] += u->first[j];
    for (int32_t i = 0; i < n; i++) u->members[u->first[u->unit_of[i]]++] = i;
    for (int32_t j = k; j > 0; j--) u->first[j] = u->first[j - 1];
    u->first[0] = 0;
    return DP_STATUS_OK;
}

void place_units_free(place_units *u) {
    if (!u) return;
    free(u->unit_of);
    free(u->first);
    free(u->members);
    memset(u, 0, sizeof *u);
}

void place_units_expand(const place_units *u, const int32_t *unit_dev, int32_t *out) {
    for (int32_t i = 0; i < u->n_ops; i++) out[i] = unit_dev[u->unit_of[i]];
}

/* ---- device masks ------------------------------------------------------- */

place_mask place_pool_all(const dp_devices *ds) {
    return ds->n_devices >= 64 ? ~(place_mask)0 : place_bit(ds->n_devices) - 1;
}

place_mask place_pool_gpus(const dp_devices *ds) {
    place_mask m = 0;
    for (int32_t d = 0; d < ds->n_devices; d++)
        if (ds->devices[d].kind == DP_DEVKIND_GPU) m |= place_bit(d);
    return m ? m : place_pool_all(ds);
}

int32_t place_mask_first(place_mask m) {
    assert(m);
    return (int32_t)__builtin_ctzll(m);
}

int32_t place_mask_count(place_mask m) { return (int32_t)__builtin_popcountll(m); }

dp_status place_units_masks(const place_units *u, const dp_graph *g, const dp_devices *ds, place_mask pool,
                            place_mask *mask, dp_error *err) {
    place_mask all = place_pool_all(ds);
    for (int32_t k = 0; k < u->n_units; k++) {
        place_mask allowed = all;
        int constrained = 0;
        for (int32_t j = u->first[k]; j < u->first[k + 1]; j++) {
            int32_t op = u->members[j];
            if (g->ops[op].device.kind == DP_DEVCON_NONE) continue;
            constrained = 1;
            place_mask m = 0;
            for (int32_t d = 0; d < ds->n_devices; d++)
                if (dp_placement_allowed(g, ds, op, d)) m |= place_bit(d);
            allowed &= m;
            if (!allowed) {
                char buf[32];
                dp_devcon_format(g->ops[op].device, buf, sizeof buf);
                return dp_error_set(err, DP_STATUS_INVALID,
                                    "op %d \"%s\" must run on %s, which device set \"%s\" lacks%s", op,
                                    g->ops[op].name, buf, ds->name,
                                    u->first[k + 1] - u->first[k] > 1 ? " (or its colocation group cannot meet it)"
                                                                      : "");
            }
        }
        mask[k] = !constrained ? pool : (allowed & pool) ? (allowed & pool) : allowed;
    }
    return DP_STATUS_OK;
}

void place_units_repair(const place_units *u, const place_mask *mask, const double *uw, int32_t n_devices,
                        int32_t *unit_dev) {
    double load[DP_MAX_DEVICES] = {0};
    for (int32_t k = 0; k < u->n_units; k++)
        if (mask[k] & place_bit(unit_dev[k])) load[unit_dev[k]] += uw[k];
    for (int32_t k = 0; k < u->n_units; k++) {
        if (mask[k] & place_bit(unit_dev[k])) continue;
        int32_t best = -1;
        for (int32_t d = 0; d < n_devices; d++)
            if ((mask[k] & place_bit(d)) && (best < 0 || load[d] < load[best])) best = d;
        assert(best >= 0);
        unit_dev[k] = best;
        load[best] += uw[k];
    }
}

/* ---- op times ----------------------------------------------------------- */

/* Whether two devices run every op equally fast (same cost-model inputs). */
static int same_class(const dp_device *a, const dp_device *b) {
    return a->kind == b->kind && strcmp(a->model, b->model) == 0 && a->peak_flops == b->peak_flops &&
           a->mem_bandwidth == b->mem_bandwidth && a->launch_overhead_s == b->launch_overhead_s;
}

dp_status place_costs_init(place_costs *c, const dp_graph *g, const dp_devices *ds, dp_error *err) {
    memset(c, 0, sizeof *c);
    c->n_ops = g->n_ops;
    int32_t rep[DP_MAX_DEVICES]; /* a device of each class */
    for (int32_t d = 0; d < ds->n_devices; d++) {
        int32_t k = 0;
        while (k < c->n_classes && !same_class(&ds->devices[rep[k]], &ds->devices[d])) k++;
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

int32_t place_costs_fastest(const place_costs *c, place_mask m) {
    int32_t best = -1;
    for (int32_t d = 0; d < DP_MAX_DEVICES; d++)
        if ((m & place_bit(d)) && (best < 0 || c->total[d] < c->total[best])) best = d;
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
