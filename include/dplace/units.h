/* dplace: placement units and device masks, the common ground of the
 * placers (place.h), the groupers (group.h) and the learned agents.
 *
 * A unit is a set of ops that go to one device together. dp_units_init makes
 * TensorFlow's units: each colocation group of the graph (dp_graph's
 * coloc_group) is one unit, and an op outside every group is a unit of its
 * own; dp_units_init_from_groups makes one unit per group of any grouping
 * (a grouper's output, say); dp_units_init_spec the units of a granularity,
 * ops or the modules of a PyTorch export (what its user applies). A
 * placement of units (a device per unit) becomes a placement of ops with
 * dp_units_expand.
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
#include <stddef.h>

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

/* ---- what a placement applies to: ops or modules ------------------------ */

/* The granularity of a placement (`--units`): DP_UNITS_OP, every op where
 * it is placed (TensorFlow's colocation units: an executor that places ops
 * runs it as it is); DP_UNITS_MODULE, the modules of a PyTorch training step
 * exported by scripts/dplace-export-torch, each whole on one device with
 * its gradient ops and its parameters' updates (what a PyTorch user applies
 * with module.to(device)), its path cut to `depth` components (0: the
 * modules as exported, the finest); DP_UNITS_AUTO, modules when the graph
 * has them (dp_units_has_modules), else ops. A zeroed spec is OP. */
typedef enum dp_units_kind { DP_UNITS_OP = 0, DP_UNITS_MODULE, DP_UNITS_AUTO, DP_UNITS_KIND_COUNT } dp_units_kind;

typedef struct dp_units_spec {
    dp_units_kind kind;
    int32_t depth; /* DP_UNITS_MODULE: path components kept, 0 all */
} dp_units_spec;

/* Reads "op", "module", "module:DEPTH" (DEPTH >= 1) or "auto"; returns 0
 * and sets *out, or -1 when text is none of them. */
int dp_units_spec_parse(const char *text, dp_units_spec *out);

/* The spec as dp_units_spec_parse reads it ("module:2") into buf. */
void dp_units_spec_format(dp_units_spec s, char *buf, size_t size);

/* Whether g has module metadata: it is a PyTorch step exported by
 * scripts/dplace-export-torch (its parameters are ops of type
 * "Parameter", which that exporter alone writes; every op's scope is its
 * module's path, "gradients/PATH" for its gradient ops). A step traced
 * without module paths (no op has a scope) has no modules to place. */
int dp_units_has_modules(const dp_graph *g);

/* AUTO resolved for g: MODULE (depth 0) when g has modules, else OP; other
 * specs as they are. */
dp_units_spec dp_units_spec_resolve(dp_units_spec s, const dp_graph *g);

/* The module op belongs to, as dplace-export-torch --map-placement names
 * it: its scope without "gradients/" ("layer1.0.conv1", dots between the
 * components; "" for the model's own ops, "input", "loss", ... as they
 * are), cut to depth components (0: all), into buf (truncated to size). */
void dp_units_module_path(const dp_graph *g, int32_t op, int32_t depth, char *buf, size_t size);

/* The units of spec s on g (finalized): for OP dp_units_init's; for MODULE
 * one unit per module of dp_units_module_path at s.depth, modules joined
 * where a colocation group spans them, numbered in the order of their first
 * op. AUTO is resolved first. DP_STATUS_INVALID when s asks for modules
 * and g has none, DP_STATUS_NOMEM; u is left empty on failure. */
dp_status dp_units_init_spec(dp_units *u, const dp_graph *g, dp_units_spec s, dp_error *err);

/* The units of u whose ops placement [n_ops] puts on more than one device. */
int32_t dp_units_count_split(const dp_units *u, const int32_t *placement);

/* placement [n_ops] mapped onto u: every op of a unit on the device most
 * of the unit's ops are on, among mask[unit] (NULL: any); ties to the
 * device whose name is first in alphabetical order, as
 * dplace-export-torch --map-placement and dplace-measure-torch choose a
 * module's device. Fills out [n_ops] (it may be placement). */
void dp_units_map_majority(const dp_units *u, const dp_devices *ds, const dp_mask *mask, const int32_t *placement,
                           int32_t *out);

/* Writes placement [n_ops] of g on ds as a dplace-placement v1 file that
 * also says its granularity, "units": "op" or "module[:DEPTH]" (readers
 * that do not know the field ignore it), atomically: nothing is left
 * half-written. DP_STATUS_INVALID for a device index out of range, IO. */
dp_status dp_units_write_placement(const char *path, const dp_graph *g, const dp_devices *ds, const int32_t *placement,
                                   dp_units_spec s, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
