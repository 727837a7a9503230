/* Placement units and device masks (include/dplace/units.h). */
#include "dplace/units.h"

#include <stdlib.h>
#include <string.h>

#include "dplace/placement.h"

/* ---- device masks ------------------------------------------------------- */

dp_mask dp_mask_all(const dp_devices *ds) {
    return ds->n_devices >= 64 ? ~(dp_mask)0 : dp_mask_bit(ds->n_devices) - 1;
}

dp_mask dp_mask_gpus(const dp_devices *ds) {
    dp_mask m = 0;
    for (int32_t d = 0; d < ds->n_devices; d++)
        if (ds->devices[d].kind == DP_DEVKIND_GPU) m |= dp_mask_bit(d);
    return m ? m : dp_mask_all(ds);
}

dp_mask dp_mask_op(const dp_graph *g, const dp_devices *ds, int32_t op) {
    if (g->ops[op].device.kind == DP_DEVCON_NONE) return dp_mask_all(ds);
    dp_mask m = 0;
    for (int32_t d = 0; d < ds->n_devices; d++)
        if (dp_placement_allowed(g, ds, op, d)) m |= dp_mask_bit(d);
    return m;
}

/* ---- units -------------------------------------------------------------- */

/* Allocates u for n_ops ops and k units, unit_of not yet filled. */
static dp_status units_alloc(dp_units *u, int32_t n_ops, int32_t k, dp_error *err) {
    memset(u, 0, sizeof *u);
    u->n_ops = n_ops;
    u->n_units = k;
    u->unit_of = malloc(((size_t)n_ops + 1) * sizeof(int32_t));
    u->members = malloc(((size_t)n_ops + 1) * sizeof(int32_t));
    u->first = malloc(((size_t)k + 1) * sizeof(int32_t));
    if (!u->unit_of || !u->members || !u->first) {
        dp_units_free(u);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (units of %d ops)", n_ops);
    }
    return DP_STATUS_OK;
}

/* first and members from unit_of: a stable counting sort of the ops. */
static void units_index(dp_units *u) {
    int32_t n = u->n_ops, k = u->n_units;
    memset(u->first, 0, ((size_t)k + 1) * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) u->first[u->unit_of[i] + 1]++;
    for (int32_t j = 0; j < k; j++) u->first[j + 1] += u->first[j];
    for (int32_t i = 0; i < n; i++) u->members[u->first[u->unit_of[i]]++] = i;
    for (int32_t j = k; j > 0; j--) u->first[j] = u->first[j - 1];
    u->first[0] = 0;
}

dp_status dp_units_init(dp_units *u, const dp_graph *g, dp_error *err) {
    assert(g->finalized);
    int32_t n = g->n_ops;
    /* units: one per colocation group plus one per op outside every group */
    int32_t k = g->n_colocate;
    for (int32_t i = 0; i < n; i++) k += g->coloc_group[i] < 0;
    dp_status st = units_alloc(u, n, k, err);
    if (st) return st;
    int32_t *of_group = u->members; /* scratch until units_index: group -> unit */
    for (int32_t c = 0; c < g->n_colocate; c++) of_group[c] = -1;
    int32_t next = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->coloc_group[i];
        if (c < 0) u->unit_of[i] = next++;
        else u->unit_of[i] = of_group[c] >= 0 ? of_group[c] : (of_group[c] = next++);
    }
    assert(next == k);
    units_index(u);
    return DP_STATUS_OK;
}

dp_status dp_units_group_ids(const dp_graph *g, int32_t *group, int32_t *n_groups, dp_error *err) {
    dp_units u;
    dp_status st = dp_units_init(&u, g, err);
    if (st) return st;
    memcpy(group, u.unit_of, (size_t)g->n_ops * sizeof(int32_t));
    *n_groups = u.n_units;
    dp_units_free(&u);
    return DP_STATUS_OK;
}

dp_status dp_units_init_from_groups(dp_units *u, const int32_t *group, int32_t n_ops, int32_t n_groups,
                                    dp_error *err) {
    memset(u, 0, sizeof *u);
    if (n_ops < 0 || n_groups < 0)
        return dp_error_set(err, DP_STATUS_INVALID, "units of %d ops in %d groups: negative count", n_ops, n_groups);
    for (int32_t i = 0; i < n_ops; i++)
        if (group[i] < 0 || group[i] >= n_groups)
            return dp_error_set(err, DP_STATUS_INVALID, "op %d is in group %d, out of range 0..%d", i, group[i],
                                n_groups - 1);
    dp_status st = units_alloc(u, n_ops, n_groups, err);
    if (st) return st;
    memcpy(u->unit_of, group, (size_t)n_ops * sizeof(int32_t));
    units_index(u);
    return DP_STATUS_OK;
}

void dp_units_free(dp_units *u) {
    if (!u) return;
    free(u->unit_of);
    free(u->first);
    free(u->members);
    memset(u, 0, sizeof *u);
}

void dp_units_expand(const dp_units *u, const int32_t *unit_dev, int32_t *out) {
    for (int32_t i = 0; i < u->n_ops; i++) out[i] = unit_dev[u->unit_of[i]];
}

dp_status dp_units_masks(const dp_units *u, const dp_graph *g, const dp_devices *ds, dp_mask pool, dp_mask *mask,
                         dp_error *err) {
    assert(u->n_ops == g->n_ops);
    dp_mask all = dp_mask_all(ds);
    for (int32_t k = 0; k < u->n_units; k++) {
        dp_mask allowed = all;
        int constrained = 0;
        for (int32_t j = u->first[k]; j < u->first[k + 1]; j++) {
            int32_t op = u->members[j];
            if (g->ops[op].device.kind == DP_DEVCON_NONE) continue;
            constrained = 1;
            allowed &= dp_mask_op(g, ds, op);
            if (!allowed) {
                char buf[32];
                dp_devcon_format(g->ops[op].device, buf, sizeof buf);
                return dp_error_set(err, DP_STATUS_INVALID,
                                    "op %d \"%s\" must run on %s, which device set \"%s\" lacks%s", op,
                                    g->ops[op].name, buf, ds->name,
                                    u->first[k + 1] - u->first[k] > 1 ? " (or the constraints of the other ops of its unit rule that out)"
                                                                      : "");
            }
        }
        mask[k] = !constrained ? pool : (allowed & pool) ? (allowed & pool) : allowed;
    }
    return DP_STATUS_OK;
}
