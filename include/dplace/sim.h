/* dplace: discrete-event simulation of one training step of a placed graph,
 * modelled on TensorFlow's executor (see docs/simulator.md):
 *  - an op starts when all its inputs are on its device and one of the
 *    device's streams is free; ready ops run in the order they became ready,
 *    ties broken by an insertion counter, so runs are reproducible;
 *  - a tensor used on another device is sent once per (tensor, destination)
 *    along the route (direct link or through the host); each link direction
 *    carries one transfer at a time, taking latency + bytes / bandwidth;
 *  - memory by liveness: parameters resident from the start, outputs from op
 *    start until the last local consumer finished and every send left, temp
 *    bytes while the op runs, received copies from the start of the transfer
 *    until the last consumer there finished.
 * A context is built once per (graph, device set) and evaluates placements
 * without allocating.
 *
 * Threads. A context holds only what does not depend on the placement and is
 * never written after dp_sim_init; a run's scratch (event heap, per-op and
 * per-tensor progress, transfers, link statistics, trace) lives in a
 * workspace (dp_sim_workspace). So:
 *  - any number of threads may call dp_sim_run_ws on one context at once,
 *    each with a workspace of its own, and dp_sim_op_seconds at any time;
 *  - dp_trace_write_ws reads one workspace: not while that workspace runs;
 *  - dp_sim_run and dp_trace_write use the context's own workspace: one
 *    thread at a time calls them on a context (alongside dp_sim_run_ws on
 *    other workspaces, which is safe);
 *  - the graph and the device set must not change while the context lives,
 *    and dp_sim_free runs after every other call on the context and after
 *    its workspaces are freed (a workspace keeps a pointer to its context).
 * A workspace is not thread-safe: one run at a time, and its results (link
 * statistics, trace) are valid until its next run. */
#ifndef DPLACE_SIM_H
#define DPLACE_SIM_H

#include "dplace/devices.h"
#include "dplace/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_sim dp_sim;
typedef struct dp_sim_workspace dp_sim_workspace;

typedef enum dp_sim_verdict {
    DP_SIM_VERDICT_VALID = 0,
    DP_SIM_VERDICT_CONSTRAINT, /* an op placed against its device constraint */
    DP_SIM_VERDICT_COLOCATION, /* a colocation group split across devices    */
    DP_SIM_VERDICT_OOM,        /* some device's peak memory over capacity    */
    DP_SIM_VERDICT_COUNT
} dp_sim_verdict;

const char *dp_sim_verdict_name(dp_sim_verdict v);

typedef struct dp_sim_options {
    int record_trace;   /* keep per-op and per-transfer times for dp_trace_write */
    double noise_sigma; /* multiplicative log-normal noise on op times, 0 = none */
    uint64_t seed;      /* seeds the noise                                      */
    int32_t steps;      /* steps simulated (>= 1)                               */
    int32_t warmup;     /* first steps discarded before the median (< steps)    */
    int mean;           /* report the mean of the measured steps (EAGLE's
                           protocol), not the median (the Hierarchical
                           Planner's); the trace is of the median step     */
} dp_sim_options;

/* Defaults: no trace, no noise, 1 step, no warm-up. */
dp_sim_options dp_sim_options_default(void);

#define DP_SIM_NOISE_MAX 5.0 /* the largest noise sigma the protocol takes */
#define DP_SIM_STEPS_MAX 1024

/* The measuring protocol's one check, for every front end: noise in
 * 0..DP_SIM_NOISE_MAX, steps in 1..DP_SIM_STEPS_MAX, warm-up in 0..steps-1.
 * INVALID with a message naming the option and its range. */
dp_status dp_sim_options_check(const dp_sim_options *o, dp_error *err);

typedef struct dp_sim_device_stats {
    double busy_s;        /* sum of op times on the device             */
    uint64_t peak_bytes;  /* peak memory by liveness                   */
    uint64_t param_bytes; /* resident parameters                       */
    uint64_t memory_bytes;/* capacity                                  */
    int32_t n_ops;
} dp_sim_device_stats;

typedef struct dp_sim_link_stats {
    double busy_s;
    uint64_t bytes;
    int32_t n_transfers;
} dp_sim_link_stats;

typedef struct dp_sim_result {
    double step_time_s;       /* makespan (median over measured steps)    */
    int valid;                /* verdict == DP_SIM_VERDICT_VALID          */
    dp_sim_verdict verdict;   /* the first problem found                  */
    char reason[512];         /* "" when valid                            */
    int32_t n_devices;
    dp_sim_device_stats device[DP_MAX_DEVICES];
    int32_t n_links;
    const dp_sim_link_stats *link; /* [n_links], owned by the run's workspace (the context's own
                                      for dp_sim_run); valid until that workspace's next run */
    uint64_t transfer_bytes;  /* bytes sent between devices (per transfer, not per hop) */
    int32_t n_transfers;
    int32_t steps_measured;
} dp_sim_result;

/* Builds a context for g (finalized) on ds. Fails (DP_STATUS_INVALID) when the
 * device set cannot host the graph: a constraint names a device kind or index
 * the set lacks. The context keeps pointers to g and ds: they must outlive it. */
dp_sim *dp_sim_init(const dp_graph *g, const dp_devices *ds, dp_error *err);
void dp_sim_free(dp_sim *sim);

/* Simulates placement (one device index per op) with the context's own
 * workspace. Returns an error only for a malformed placement (an index out
 * of range) or bad options; an invalid placement (against a constraint,
 * split colocation, out of memory) is simulated all the same and reported in
 * res->verdict and res->reason. opt may be NULL. One thread at a time per
 * context (see the top of this file). */
dp_status dp_sim_run(dp_sim *sim, const int32_t *placement, const dp_sim_options *opt, dp_sim_result *res,
                     dp_error *err);

/* Scratch for runs of sim on one thread; NULL with err on NOMEM. Allocates
 * O(ops + tensors * devices + edges); the first run with record_trace adds
 * the trace's arrays. sim must outlive it. */
dp_sim_workspace *dp_sim_workspace_init(const dp_sim *sim, dp_error *err);
void dp_sim_workspace_free(dp_sim_workspace *ws);

/* As dp_sim_run, with the scratch (and the result's link stats and the trace) in ws:
 * any number of threads may run one const context at once, each with its own ws.
 * Same placement and options, same result, whichever workspace runs it.
 * DP_STATUS_INVALID when ws was made for another context. */
dp_status dp_sim_run_ws(const dp_sim *sim, dp_sim_workspace *ws, const int32_t *placement,
                        const dp_sim_options *opt, dp_sim_result *res, dp_error *err);

/* Seconds op takes on device d, as the simulator uses it (without noise). */
double dp_sim_op_seconds(const dp_sim *sim, int32_t op, int32_t d);

/* Writes the timeline of ws's last run, which must have been made with
 * record_trace, as a Chrome trace-event JSON file (Perfetto,
 * chrome://tracing), atomically: a process per device with a track per
 * stream, and a process for the links with a track per link direction.
 * DP_STATUS_INVALID when that run recorded no trace or ws belongs to another
 * context. */
dp_status dp_trace_write_ws(const dp_sim *sim, const dp_sim_workspace *ws, const char *path, dp_error *err);

/* The same for the context's own workspace: the last dp_sim_run. */
dp_status dp_trace_write(const dp_sim *sim, const char *path, dp_error *err);

/* ---- moves from a base placement ---------------------------------------------
 * A search holds one current placement (the base) and proposes many moves
 * from it (a few ops to other devices: one unit moved, two swapped),
 * accepting few. A dp_sim_delta keeps the base, its result, its critical
 * path and its memory, and evaluates the base with a move applied without
 * touching the base (dp_sim_delta_try), or makes the last move the base
 * (dp_sim_delta_accept, without simulating again).
 *
 * Results: a try's result equals, field by field and bit for bit, that of
 * dp_sim_run_ws on the moved placement with default options (one step, no
 * noise, no trace); moves evaluate only that protocol. A try re-simulates
 * the whole step: an exact re-simulation from the first event a move
 * changes saves little on training graphs (docs/simulator.md, "Moves and
 * delta simulation", gives the measurements), so the savings are in what
 * the search does not redo (placement checks, op times, parameters) and in
 * the cheap checks it can make before a try (dp_sim_delta_surely_oom).
 *
 * Threads: a dp_sim_delta is one thread's (it owns two workspaces); any
 * number of them may share one const dp_sim, beside dp_sim_run_ws calls.
 * sim must outlive it. */
typedef struct dp_sim_delta dp_sim_delta;

/* A delta evaluator for sim's graph and devices, without a base yet. NULL
 * with err on NOMEM. Allocates two workspaces (dp_sim_workspace_init). */
dp_sim_delta *dp_sim_delta_init(const dp_sim *sim, dp_error *err);
void dp_sim_delta_free(dp_sim_delta *d);

/* Makes placement (one device per op) the base and simulates it; res (may
 * be NULL) receives its result. DP_STATUS_INVALID (base unchanged) for a
 * device index out of range. */
dp_status dp_sim_delta_set_base(dp_sim_delta *d, const int32_t *placement, dp_sim_result *res, dp_error *err);

/* The base placement [n_ops] and its result (link stats valid until the
 * next set_base or accept); NULL before the first set_base. */
const int32_t *dp_sim_delta_base(const dp_sim_delta *d);
const dp_sim_result *dp_sim_delta_base_result(const dp_sim_delta *d);

/* Simulates the base with op ops[k] on device devs[k] for k < n_changed (an
 * op listed twice takes its last device; an op on its own device is no
 * change); res receives the result, its link stats valid until the next
 * try, set_base or accept. The base is unchanged. DP_STATUS_INVALID (no
 * try made) for an op or device out of range or no base. */
dp_status dp_sim_delta_try(dp_sim_delta *d, int32_t n_changed, const int32_t *ops, const int32_t *devs,
                           dp_sim_result *res, dp_error *err);

/* Makes the last try's placement the base and its result the base's (no
 * simulation). DP_STATUS_INVALID when there was no try since the base was
 * last set or accepted. */
dp_status dp_sim_delta_accept(dp_sim_delta *d, dp_error *err);

/* Whether the move (as for dp_sim_delta_try) surely runs some device out of
 * memory: the parameters resident there after the move exceed its capacity,
 * or they do with what a moved op holds while it runs there (its outputs,
 * its temporary bytes and a copy of each input), a lower bound of that
 * device's peak. 0 when the move may fit (only a try tells). An index out
 * of range or no base: 0. Costs O(moved ops and their inputs); writes only
 * d's scratch. */
int dp_sim_delta_surely_oom(dp_sim_delta *d, int32_t n_changed, const int32_t *ops, const int32_t *devs);

/* One step of a critical path: an op that ran, or one hop of a transfer. */
typedef struct dp_sim_path_step {
    int32_t op;       /* the op that ran; -1 for a hop                      */
    int32_t device;   /* where it ran; for a hop the transfer's destination */
    int32_t link;     /* a hop's link (index into the devices' links); -1   */
    int32_t producer; /* a hop's tensor's producing op; -1 for an op        */
    int64_t tensor;   /* a hop's tensor (index into the graph's outputs); -1 */
    double start_s, end_s;
} dp_sim_path_step;

/* The critical path of the base: the op that ended last, what it waited
 * for last (an input made on its device: the op that made it; an input
 * from elsewhere: the hop that brought it; a free stream: the op that freed
 * it), what that waited for, and so on back to time 0, each step starting
 * when the one before it ended (a pipelined copy's second hop follows its
 * first hop when that set its start or end; under the eager executor an op
 * that waited for the host's dispatch points to the op issued before it,
 * and starts after that op's issue, by the dispatch, not at its end).
 * Fills steps[0 .. min(n, cap))
 * in time order, the first from time 0, and sets *n to the path's length
 * (which may exceed cap). The first call after set_base or accept
 * re-simulates the base once with a trace (allocating it the first time:
 * DP_STATUS_NOMEM); later ones read it. DP_STATUS_INVALID without a base. */
dp_status dp_sim_delta_critical_path(dp_sim_delta *d, dp_sim_path_step *steps, int32_t cap, int32_t *n,
                                     dp_error *err);
/* The same into a buffer that grows to the path's length: *steps (malloc'd
 * or NULL) of *cap entries, reallocated when the path is longer (both
 * updated; the caller frees *steps). DP_STATUS_NOMEM leaves them as they
 * were. */
dp_status dp_sim_delta_critical_path_grow(dp_sim_delta *d, dp_sim_path_step **steps, int32_t *cap, int32_t *n,
                                          dp_error *err);

/* ---- judging moves: what the search and a learned agent's elite walks share ---------------
 * Both improve a placement by moves the simulator judges; these are the
 * rule they compare placements by and the moves they read off a critical
 * path. The caller turns a suggested (op, device) into the ops of its own
 * unit that change (a search level's unit, an agent's element). Every
 * random choice draws from the caller's generator, in a fixed order. */

/* The score placements are compared by, lower is better: a valid
 * placement's step time; an out-of-memory one's step time times 4 + its
 * worst device's excess (peak - capacity) / capacity, so that a walk can
 * climb out of memory towards valid placements; infinity for anything
 * else (a constraint broken, a colocation split). */
double dp_sim_score(const dp_sim_result *r);
/* The same from a result's parts: oom says the simulator found it out of
 * memory, excess is that worst device's share over its capacity. */
double dp_sim_score_parts(double step_time_s, int valid, int oom, double excess);
/* The worst device's (peak - capacity) / capacity of r (0: none over). */
double dp_sim_result_excess(const dp_sim_result *r);

/* A step of path[0..n) at random, each with probability in proportion to
 * its duration: among the hops (transfers) when hops is set, else among
 * the ops on device dev (any op when dev < 0); -1 when there is none. */
int32_t dp_sim_path_pick(const dp_sim_path_step *path, int32_t n, int hops, int32_t dev, dp_rng *rng);
/* The move that hop path[hop] suggests on placement place: half the time,
 * when an op of the path follows the hop, that op (the consumer) to the
 * producer's device; else the producer to the hop's destination. */
void dp_sim_path_hop_move(const dp_sim_path_step *path, int32_t n, int32_t hop, const int32_t *place, dp_rng *rng,
                          int32_t *op, int32_t *dev);

#ifdef __cplusplus
}
#endif
#endif
