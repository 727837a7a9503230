/* dplace: placement units and device masks, the common ground of the
 * placers (place.h), the groupers (group.h) and the learned agents.
 *
 * A unit is a set of ops that go to one device together. dp_units_init makes
 * TensorFlow's units: each colocation group of the graph (dp_graph's
 * coloc_group) is one unit, and an op outside every group is a unit of its
 * own; dp_units_init_from_groups makes one unit per group of any grouping
 * (a grouper's output, say). A placement of units (a device per unit)
 * becomes a placement of ops with dp_units_expand.
 *
 * A device mask (dp_mask) is a set of devices of one device set, bit d for
 * device d. dp_units_masks gives each unit the devices it may use: those
 * every constrained member allows, within a pool (the GPUs, say).
 *
 * Layer: place (include/dplace/units.h, src/place/units.c), above the graph,
 * the devices and the simulator's placement helpers, below the placers,
 * groupers and agents. Functions are reentrant; a dp_units is read-only
 * after init, so threads may share one. */
#ifndef DPLACE_UNITS_H
#define DPLACE_UNITS_H

#include <assert.h>

#include "dplace/devices.h"
#include "dplace/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device masks ------------------------------------------------------- */

typedef uint64_t dp_mask; /* bit d: device d */
_Static_assert(DP_MAX_DEVICES <= 64, "dp_mask holds one bit per device");

/* The mask of device d alone. */
static inline dp_mask dp_mask_bit(int32_t d) { return (dp_mask)1 << d; }

/* Lowest device index in a non-empty mask. */
static inline int32_t dp_mask_first(dp_mask m) {
    assert(m);
    return (int32_t)__builtin_ctzll(m);
}

/* Number of devices in m. */
static inline int32_t dp_mask_count(dp_mask m) { return (int32_t)__builtin_popcountll(m); }

/* Every device of ds. */
dp_mask dp_mask_all(const dp_devices *ds);

/* The GPUs of ds, or every device when it has none. */
dp_mask dp_mask_gpus(const dp_devices *ds);

/* The devices of ds that op's constraint allows (every device when the op
 * has none; dp_placement_allowed for each device). g finalized. */
dp_mask dp_mask_op(const dp_graph *g, const dp_devices *ds, int32_t op);

/* ---- units -------------------------------------------------------------- */

typedef struct dp_units {
    int32_t n_ops, n_units;
    int32_t *unit_of; /* [n_ops] unit of each op                       */
    int32_t *first;   /* [n_units+1] unit k's ops: members[first[k] ..
                         first[k+1] - 1]                               */
    int32_t *members; /* [n_ops] ops by unit, in op order within one   */
} dp_units;

/* TensorFlow's units of g (finalized): each colocation group one unit, each
 * op outside every group a unit of its own, numbered in the order of their
 * first op. DP_STATUS_NOMEM (u left empty) when out of memory. */
dp_status dp_units_init(dp_units *u, const dp_graph *g, dp_error *err);

/* The same units as a grouping: group [n_ops] gets each op's unit id and
 * *n_groups their count. DP_STATUS_NOMEM. */
dp_status dp_units_group_ids(const dp_graph *g, int32_t *group, int32_t *n_groups, dp_error *err);

/* Units from a grouping of n_ops ops: unit k is group k (group[op] in
 * 0..n_groups-1), so n_units == n_groups and a group without ops is an
 * empty unit (its mask is the pool). The grouping need not respect
 * colocation. DP_STATUS_INVALID naming the op when a group id is out of
 * range, DP_STATUS_NOMEM; u is left empty on failure. */
dp_status dp_units_init_from_groups(dp_units *u, const int32_t *group, int32_t n_ops, int32_t n_groups,
                                    dp_error *err);

/* Frees u's arrays and leaves it empty (freeing an empty u is fine). */
void dp_units_free(dp_units *u);

/* For every unit of u (units of g's ops), the devices of ds it may go to:
 * those every constrained member allows, narrowed to `pool` when that leaves
 * any (so a CPU-only op stays on the CPU even when the pool is the GPUs);
 * `pool` itself when no member is constrained. Fills mask[u->n_units].
 * DP_STATUS_INVALID (naming the op) when a unit has no device at all: an op
 * constrained to a device the set lacks, or a unit whose members' constraints
 * exclude each other. */
dp_status dp_units_masks(const dp_units *u, const dp_graph *g, const dp_devices *ds, dp_mask pool, dp_mask *mask,
                         dp_error *err);

/* Expands a placement of units to ops: out[op] = unit_dev[unit_of[op]]. */
void dp_units_expand(const dp_units *u, const int32_t *unit_dev, int32_t *out);

#ifdef __cplusplus
}
#endif
#endif
