/* Graph-partitioning placers: scotch (all devices), mincut (Scotch over the
 * GPUs), metis (METIS k-way over the GPUs).
 *
 * The op graph is contracted first: each unit (a colocation group, or a
 * group of the grouping step in dp_place_options) becomes one vertex (op times summed, edges merged), so no partitioner can split a
 * group. A vertex weighs its ops' times on the fastest device of the pool;
 * an edge weighs the bytes of the tensors between its two ends. Part p of
 * the pool is the p-th device of the pool in index order, with target weight
 * proportional to its speed on this graph (1 / the graph's total op time on
 * it, by dplace's cost model).
 *
 * Constraints: a unit that may only go to one device of the pool is a fixed
 * vertex for Scotch; units that may not go to the pool at all (CPU-only ops
 * when the pool is the GPUs) are left out of the graph and go to their
 * device. METIS has no fixed vertices, and neither has any "any GPU"
 * constraint: units the partitioner put somewhere they may not go are moved
 * afterwards to the allowed device with the least compute so far. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

typedef enum part_lib { PART_LIB_SCOTCH, PART_LIB_METIS } part_lib;

/* Places the units that may go to `pool` by partitioning the contracted
 * graph with `lib` (one part per pool device, weighted by speed); the others
 * go to their first allowed device. Fills out[g->n_ops]. */
static dp_status place_partition(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, dp_mask pool,
                                 part_lib lib, dp_place_method method, int32_t *out, dp_error *err) {
    dp_place_options o = opt ? *opt : dp_place_options_default();
    dp_units u;
    place_costs costs;
    place_wgraph w;
    memset(&w, 0, sizeof w);
    memset(&costs, 0, sizeof costs);
    dp_status st = place_units_init(&u, g, ds, method, &o, NULL, err);
    if (st) return st;
    int32_t nu = u.n_units;
    dp_mask *mask = malloc((size_t)nu * sizeof(dp_mask));
    int32_t *vertex_of = malloc((size_t)g->n_ops * sizeof(int32_t));
    int32_t *unit_vertex = malloc((size_t)nu * sizeof(int32_t));
    int32_t *vertex_unit = malloc((size_t)nu * sizeof(int32_t));
    int32_t *unit_dev = malloc((size_t)nu * sizeof(int32_t));
    int32_t *fixed = malloc((size_t)nu * sizeof(int32_t));
    int32_t *part = malloc((size_t)nu * sizeof(int32_t));
    double *op_w = malloc((size_t)g->n_ops * sizeof(double));
    double *uw = calloc((size_t)nu, sizeof(double));
    if (!mask || !vertex_of || !unit_vertex || !vertex_unit || !unit_dev || !fixed || !part || !op_w || !uw) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (partitioning %d ops)", g->n_ops);
        goto done;
    }
    if ((st = dp_units_masks(&u, g, ds, pool, mask, err)) || (st = place_costs_init(&costs, g, ds, err))) goto done;

    int32_t pool_dev[DP_MAX_DEVICES], part_of_dev[DP_MAX_DEVICES], n_pool = 0;
    double tw[DP_MAX_DEVICES];
    for (int32_t d = 0; d < ds->n_devices; d++) part_of_dev[d] = -1;
    for (dp_mask m = pool; m; m &= m - 1) {
        int32_t d = dp_mask_first(m);
        part_of_dev[d] = n_pool;
        tw[n_pool] = costs.total[d] > 0 ? 1.0 / costs.total[d] : 1.0;
        pool_dev[n_pool++] = d;
    }
    int32_t ref = place_costs_fastest(&costs, pool);
    for (int32_t i = 0; i < g->n_ops; i++) {
        op_w[i] = place_costs_op(&costs, i, ref);
        uw[u.unit_of[i]] += op_w[i];
    }
    /* vertices: the units that go to the pool */
    int32_t nv = 0;
    for (int32_t k = 0; k < nu; k++) {
        if (mask[k] & ~pool) { /* outside the pool: stays on its device */
            unit_vertex[k] = -1;
            unit_dev[k] = dp_mask_first(mask[k]);
            continue;
        }
        unit_vertex[k] = nv;
        fixed[nv] = dp_mask_count(mask[k]) == 1 ? part_of_dev[dp_mask_first(mask[k])] : -1;
        vertex_unit[nv++] = k;
    }
    for (int32_t i = 0; i < g->n_ops; i++) vertex_of[i] = unit_vertex[u.unit_of[i]];
    if ((st = place_wgraph_build(&w, g, vertex_of, nv, op_w, err))) goto done;
    if (lib == PART_LIB_SCOTCH) st = place_scotch_map(&w, n_pool, tw, fixed, o.seed, part, err);
    else st = place_metis_part(&w, n_pool, tw, o.seed, part, err);
    if (st) goto done;
    for (int32_t v = 0; v < nv; v++) unit_dev[vertex_unit[v]] = pool_dev[part[v]];
    place_units_repair(&u, mask, uw, ds->n_devices, unit_dev);
    dp_units_expand(&u, unit_dev, out);
done:
    place_wgraph_free(&w);
    place_costs_free(&costs);
    dp_units_free(&u);
    free(mask);
    free(vertex_of);
    free(unit_vertex);
    free(vertex_unit);
    free(unit_dev);
    free(fixed);
    free(part);
    free(op_w);
    free(uw);
    return st;
}

/* UNSUPPORTED, naming the method, when ds has no GPU. */
static dp_status need_gpu(const dp_devices *ds, const char *method, dp_error *err) {
    if (ds->kind_count[DP_DEVKIND_GPU] > 0) return DP_STATUS_OK;
    return dp_error_set(err, DP_STATUS_UNSUPPORTED, "%s places over the GPUs and device set \"%s\" has none", method,
                        ds->name);
}

dp_status dp_place_scotch(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                          dp_error *err) {
    return place_partition(g, ds, opt, dp_mask_all(ds), PART_LIB_SCOTCH, DP_PLACE_METHOD_SCOTCH, out, err);
}

dp_status dp_place_mincut(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                          dp_error *err) {
    dp_status st = need_gpu(ds, "mincut", err);
    return st ? st : place_partition(g, ds, opt, dp_mask_gpus(ds), PART_LIB_SCOTCH, DP_PLACE_METHOD_MINCUT, out, err);
}

dp_status dp_place_metis(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                         dp_error *err) {
    dp_status st = need_gpu(ds, "metis", err);
    return st ? st : place_partition(g, ds, opt, dp_mask_gpus(ds), PART_LIB_METIS, DP_PLACE_METHOD_METIS, out, err);
}
