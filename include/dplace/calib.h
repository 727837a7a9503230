/* dplace: calibration. Fits a device set's cost-model parameters (each
 * device's efficiencies per op class and launch overhead, each link's
 * efficiency and latency; the vendors' peaks stay as given) to measured
 * step times of placements, and proposes the placements worth measuring.
 * `dplace calibrate` is its command (docs/calibrate.md).
 *
 * The fit: a robust (Huber) Levenberg-Marquardt least squares on log step
 * time, parameters in log space within bounds, the Jacobian by finite
 * differences over the simulator, a weak pull towards the starting values
 * so that combinations the measurements cannot tell apart stay where they
 * were. Parameters whose effect on the fitted step times is below a
 * threshold are not fitted: they are reported and keep their values.
 *
 * Layer: calib (src/calib), above run, place and sim. */
#ifndef DPLACE_CALIB_H
#define DPLACE_CALIB_H

#include <stdint.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/reference.h"
#include "dplace/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a fitted parameter is. Devices that the starting set gives identical
 * parameters (dp_devices_same_cost: a machine's twin GPUs) share theirs, and
 * so do links of equal bandwidth, latency and efficiency. */
typedef enum dp_calib_param_kind {
    DP_CALIB_PARAM_COMPUTE = 0,     /* a device group's compute efficiency of a slot */
    DP_CALIB_PARAM_MEMORY,          /* a device group's memory efficiency of a slot  */
    DP_CALIB_PARAM_LAUNCH,          /* a device group's launch overhead (s)          */
    DP_CALIB_PARAM_DISPATCH,        /* the host's dispatch cost per op (s): the first
                                       CPU's group, when a graph runs eagerly      */
    DP_CALIB_PARAM_SWITCH,          /* the host's cost to turn to a CPU op after GPU
                                       work (s): with the dispatch cost            */
    DP_CALIB_PARAM_LINK_EFFICIENCY, /* a link group's efficiency                   */
    DP_CALIB_PARAM_LINK_LATENCY,    /* a link group's latency (s)                    */
    DP_CALIB_PARAM_KIND_COUNT
} dp_calib_param_kind;

/* Bytes of a parameter's or a proposed placement's name, with its NUL: two
 * device names (DP_NAME_MAX each) and their labels fit. */
#define DP_CALIB_NAME_MAX 160

typedef struct dp_calib_param {
    dp_calib_param_kind kind;
    int32_t slot;       /* COMPUTE, MEMORY: the efficiency slot (DP_EFF_*)      */
    int32_t first;      /* the group's first device or link                    */
    int32_t group_size; /* devices or links in the group                       */
    char name[DP_CALIB_NAME_MAX]; /* "gpu:0 (+1) matmul.compute", "link cpu:0 -> gpu:0 (+3) latency_s" */
    double prior;       /* the starting set's value                            */
    double value;       /* the fitted value (prior when not determined)        */
    double lo, hi;      /* the bounds of the fit                               */
    double sensitivity; /* root mean square over the fitted samples of
                           d log(step time) / d log(value), at the prior      */
    int determined;     /* fitted; 0: too little sensitivity, left at prior    */
    int kept;           /* named by dp_calib_options.keep: left at prior,
                           whatever its sensitivity                       */
    int at_bound;       /* fitted and ended within 0.1% of lo or hi: the
                           measurements pushed it as far as the fit lets it
                           go (another pass from the calibrated set may
                           move it further)                                  */
} dp_calib_param;

/* One measurement: a placement of one of the graphs and its step time. */
typedef struct dp_calib_sample {
    int32_t graph;            /* index into the graphs                        */
    const int32_t *placement; /* [that graph's ops]                            */
    double seconds;           /* measured step time, > 0                       */
    const char *label;        /* names it in messages and reports              */
} dp_calib_sample;

typedef struct dp_calib_options {
    double holdout;         /* fraction of the samples held out of the fit, in
                               [0, 0.9] (default 0.25): they measure the error
                               on placements the fit has not seen            */
    uint64_t seed;          /* chooses the held-out samples (default 1)       */
    int32_t max_iters;      /* Levenberg-Marquardt iterations (default 40)    */
    double min_sensitivity; /* below it a parameter is not fitted (default 0.01:
                               a 10% change moves the step times by 0.1%)    */
    double huber;           /* log-residual beyond which a sample's weight falls
                               (default 0.05)                                */
    double prior_weight;    /* pull towards the starting values in log space
                               (default 1e-4)                                */
    /* Parameters left at their starting values, not fitted: each entry a
     * parameter's name ("cpu:0 data.memory") or what follows its group's
     * name ("data.memory": every group's). An entry that names no
     * parameter is DP_STATUS_INVALID, naming it. Default none. */
    const char *const *keep;
    int32_t n_keep;
} dp_calib_options;

dp_calib_options dp_calib_options_default(void);

typedef struct dp_calib_result {
    int32_t n_params;
    dp_calib_param *params; /* [n_params]                                   */
    int32_t n_free;         /* parameters fitted                            */
    int32_t n_samples, n_fit, n_holdout;
    int8_t *held_out;                          /* [n_samples]: 1 when held out of the fit      */
    double *prior_s;                           /* [n_samples]: simulated on the starting set   */
    double *fitted_s;                          /* [n_samples]: simulated on the fitted set     */
    double prior_fit_mape, prior_holdout_mape; /* mean absolute percentage errors, */
    double fit_mape, holdout_mape;             /* 0..100; NaN with no sample     */
    int32_t iterations;
    dp_devices *calibrated; /* the fitted set: fitted values are its devices'
                               own efficiencies and its links' values     */
} dp_calib_result;

/* Fits the parameters of stock (finalized) to the samples' measured step
 * times on the graphs (finalized), holding o->holdout of them out (chosen
 * by o->seed), and fills out (free it with dp_calib_result_free). o NULL:
 * the defaults. Errors: DP_STATUS_INVALID naming the sample when a
 * placement does not simulate (an op on a device its constraint forbids,
 * split colocation), when a time is not positive, and when the fitted
 * samples are fewer than the parameters they are sensitive to; NOMEM.
 * Deterministic: the same inputs give the same result. */
dp_status dp_calib_fit(const dp_graph *const *graphs, int32_t n_graphs, const dp_devices *stock,
                       const dp_calib_sample *samples, int32_t n_samples, const dp_calib_options *o,
                       dp_calib_result *out, dp_error *err);
void dp_calib_result_free(dp_calib_result *r);

/* Mean absolute percentage error of predicted against measured over the
 * samples whose mask entry equals want (mask NULL: all); NaN when none. */
double dp_calib_mape(const double *predicted, const double *measured, const int8_t *mask, int8_t want, int32_t n);

/* ---- proposing placements to measure -------------------------------------------- */

typedef struct dp_calib_proposal {
    int32_t n, n_ops;
    char (*name)[DP_CALIB_NAME_MAX]; /* [n]: "single-gpu:0", "m-etf", "split-cpu:0-gpu:1-50" */
    int32_t *placements; /* [n, n_ops]                                          */
    double *simulated_s; /* [n]: step time on the set they were proposed for    */
} dp_calib_proposal;

/* The placements worth measuring for g on ds (sim: a context for g on ds):
 * each device alone, the reference placements o asks for (NULL: every
 * baseline, dp_reference_options_default; its place.expert the caller's),
 * and for each pair of devices splits of the graph's topological order at a
 * quarter, a half and three quarters in both orders, which load the links
 * between them. Colocated ops follow their group's first op; placements
 * that do not simulate as valid (constraint, colocation, out of memory)
 * and repeats are left out. Free out with dp_calib_proposal_free. */
dp_status dp_calib_propose(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const dp_reference_options *o,
                           dp_calib_proposal *out, dp_error *err);
void dp_calib_proposal_free(dp_calib_proposal *p);

/* ---- measurements as a CSV file (docs/formats.md, "dplace-measurements") -------- */

typedef struct dp_calib_row {
    char graph[256];
    char placement[4096]; /* as written in the file                            */
    double seconds;
    int32_t line; /* in the file, from 1                               */
} dp_calib_row;

/* Reads path: a header "graph,placement_file,seconds", then rows of three
 * fields (blank lines and lines starting with '#' skipped). Fills *rows
 * (malloc'd; the caller frees it) and *n. Errors name the file and the
 * line: a missing header, a row of another field count, an empty graph
 * name or placement path where needed, a time that is not a number, not
 * positive or over DP_CALIB_MAX_SECONDS. */
#define DP_CALIB_MAX_SECONDS 86400.0
dp_status dp_calib_read_measurements(const char *path, dp_calib_row **rows, int32_t *n, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
