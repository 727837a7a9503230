/* dplace: grouping heuristics. A grouping maps every op to a group id in
 * 0..n_groups-1 (dense: every id has at least one op); ops of one colocation
 * group always share a group. Learned placers place groups instead of ops.
 *
 *   colocation  TensorFlow's colocation groups plus ColocRL's rule: an op
 *               whose outputs are all consumed by one single other op joins
 *               that op's group (ignores n_groups)
 *   metis       METIS k-way into n_groups parts: minimum cut bytes, balanced
 *               compute
 *   scotch      Scotch partitioning into n_groups parts, same objective
 *   fluid       asynchronous fluid communities (Pares et al. 2017) on the
 *               undirected graph, seeded
 *   random      n_groups groups at random, seeded
 *
 * Group-file format "dplace-groups" v1: docs/formats.md. */
#ifndef DPLACE_GROUP_H
#define DPLACE_GROUP_H

#include "dplace/devices.h"
#include "dplace/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dp_group_method {
    DP_GROUP_METHOD_COLOCATION = 0,
    DP_GROUP_METHOD_METIS,
    DP_GROUP_METHOD_SCOTCH,
    DP_GROUP_METHOD_FLUID,
    DP_GROUP_METHOD_RANDOM,
    DP_GROUP_METHOD_COUNT
} dp_group_method;

/* Name as the CLI spells it ("fluid"); "?" when out of range. */
const char *dp_group_method_name(dp_group_method m);
/* Looks a method up by name; returns 0 and sets *out, or -1 when unknown. */
int dp_group_method_from_name(const char *name, dp_group_method *out);

typedef struct dp_group_options {
    int32_t n_groups;            /* groups wanted (>= 1; colocation ignores it) */
    uint64_t seed;               /* fluid, random, metis, scotch               */
    const dp_device *reference;  /* device whose op times weigh compute; NULL:
                                    the flops count stands in                   */
    int keep_unconstrained;      /* colocation: the rule never joins a group with
                                    a device constraint and one without (a
                                    CPU-only input op would otherwise pull its
                                    consumer, the loss say, onto the CPU); the
                                    placers set it, default 0                   */
    const uint8_t *outside;      /* colocation: ops[op] != 0 are outside the rule:
                                    never joined by it, and not counted as
                                    consumers (Baechi's co-placement of the
                                    forward graph); NULL (default): none        */
} dp_group_options;

/* Defaults: 64 groups, seed 1, no reference device, keep_unconstrained 0,
 * no op outside the colocation rule. */
dp_group_options dp_group_options_default(void);

/* Groups the ops of g (finalized): fills out[g->n_ops] and *n_groups (the
 * number made: fewer than asked when the graph has fewer colocation units, or
 * for colocation whatever the rule gives). Fails with DP_STATUS_INVALID on a
 * bad n_groups, DP_STATUS_UNSUPPORTED when a library refuses the problem,
 * DP_STATUS_NOMEM. */
dp_status dp_group_run(dp_group_method m, const dp_graph *g, const dp_group_options *opt, int32_t *out,
                       int32_t *n_groups, dp_error *err);

/* Figures of a grouping, for the CLI and the tests. */
typedef struct dp_group_stats {
    int32_t n_groups;
    int32_t min_ops, median_ops, max_ops; /* ops per group                    */
    uint64_t cut_bytes;   /* bytes crossing groups, once per (tensor, consuming group) */
    int64_t cut_edges;    /* input edges whose ends lie in different groups   */
    double compute_total; /* seconds on the reference device (or flops)       */
    double compute_max;   /* of the heaviest group                            */
    double imbalance;     /* compute_max / (compute_total / n_groups); 1 = even */
} dp_group_stats;

/* Computes the figures of grouping groups[g->n_ops] with n_groups groups;
 * reference as in dp_group_options. Fails on an id out of range or NOMEM. */
dp_status dp_group_get_stats(const dp_graph *g, const int32_t *groups, int32_t n_groups, const dp_device *reference,
                             dp_group_stats *out, dp_error *err);

/* Writes a grouping as a dplace-groups v1 file, atomically. method may be
 * NULL (not recorded). */
dp_status dp_group_write_file(const char *path, const dp_graph *g, const char *method, const int32_t *groups,
                              int32_t n_groups, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
