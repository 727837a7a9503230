/* dplace: placements. A placement gives each op a device index into a device
 * set. File format "dplace-placement" v1 (docs/formats.md):
 *   {"format": "dplace-placement", "version": 1, "devices": [names],
 *    "placement": [device index per op]}
 * The device names are matched against the device set, so a file made for
 * one set can be used with another set that has the same names. */
#ifndef DPLACE_PLACEMENT_H
#define DPLACE_PLACEMENT_H

#include "dplace/devices.h"
#include "dplace/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a placement file for g on ds into out[g->n_ops]. Errors name the
 * file and the entry: wrong length, unknown device name, index out of range. */
dp_status dp_placement_read_file(const char *path, const dp_graph *g, const dp_devices *ds, int32_t *out,
                                 dp_error *err);
/* Writes a placement atomically. */
dp_status dp_placement_write_file(const char *path, const dp_graph *g, const dp_devices *ds, const int32_t *placement,
                                  dp_error *err);

/* Places every op on device `dev`, except ops whose device constraint that
 * device breaks, which go to the first device that satisfies it (as
 * TensorFlow's soft placement does). */
dp_status dp_placement_single(const dp_graph *g, const dp_devices *ds, int32_t dev, int32_t *out, dp_error *err);

/* Resolves a PLACEMENT argument: a device name ("gpu:1"), a kind ("cpu",
 * "gpu" = the first of that kind) for a single-device placement, or a file.
 * The papers' human placement ("expert") belongs to the zoo, a layer above:
 * dp_zoo_resolve_placement (zoo.h) resolves it and then defers to this. */
dp_status dp_placement_resolve(const char *spec, const dp_graph *g, const dp_devices *ds, int32_t *out,
                               dp_error *err);

/* Whether device d satisfies op's constraint. */
int dp_placement_allowed(const dp_graph *g, const dp_devices *ds, int32_t op, int32_t d);

#ifdef __cplusplus
}
#endif
#endif
