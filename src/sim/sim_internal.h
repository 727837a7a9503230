/* Simulator context, shared by sim.c, sim_delta.c and trace.c only. */
#ifndef DPLACE_SIM_INTERNAL_H
#define DPLACE_SIM_INTERNAL_H

#include "dplace/sim.h"

/* A pending event: the end of what occupies one resource (a stream runs
 * an op, a link carries a transfer's hop). Events at equal times leave in
 * the order they were scheduled: a new event goes behind every pending one
 * at its time, so the time alone orders the queue. */
typedef struct sim_event {
    double t;      /* when it ends: sums of non-negative terms from +0.0,
                      so >= 0 and never -0.0                            */
    int32_t r;     /* the resource it frees (dp_sim: stream0, link0)     */
    int32_t what;  /* the op the stream runs, or the transfer the link carries */
} sim_event;
#define SIM_TRIG_NONE INT32_MIN
#define SIM_TRIG_HOP0 (INT32_MIN + 1)

/* What the event loop reads of one op, placement-independent (context). */
typedef struct sim_op {
    int32_t in_at;        /* first input edge (in_tensor)                */
    int32_t out_at;       /* first output tensor                         */
    uint64_t start_bytes; /* outputs + temp, allocated when it starts    */
    uint64_t temp_bytes;  /* freed when it ends                          */
} sim_op;

/* What the event loop reads of one tensor, placement-independent (context). */
typedef struct sim_tensor {
    uint64_t bytes;       /* size on the wire and of a received copy (< 2^63) */
    int32_t cons_at;      /* first consumer edge (cons)                   */
    uint32_t op : 31;     /* producer                                     */
    uint32_t ref : 1;     /* a reference to a variable's parameters: its
                             producer's copy takes no memory              */
} sim_tensor;

/* The memory the producer's copy of tensor tn takes. */
static inline uint64_t sim_tensor_local_bytes(const sim_tensor *tn) { return tn->ref ? 0 : tn->bytes; }

/* bytes as a double (exactly (double)tn->bytes; a signed conversion is one
 * instruction). */
static inline double sim_tensor_bytes_d(const sim_tensor *tn) { return (double)(int64_t)tn->bytes; }

/* A tensor's progress in a run. */
typedef struct sim_tstate {
    int32_t refs;         /* uses left of the producer's copy             */
    int32_t dev;          /* producer's device (set when produced)        */
} sim_tstate;

/* One transfer of a tensor to one device, with its route resolved: a hop
 * per link, each link carrying one hop at a time in request order. Through
 * the host, the second hop asks for its link when the first has started
 * (pipelined host staging) or ended (store and forward). */
typedef struct sim_xfer {
    int32_t tensor;
    int32_t next;       /* link-queue link                        */
    int16_t link[2];    /* the route's links                      */
    int16_t dst;
    int8_t hop, len;    /* hops that took their link, route length */
    double start1;      /* pipelined: the second hop starts no sooner (the
                           first hop's start + its latency)        */
    double end0;        /* when the first hop ends                */
} sim_xfer;

/* The context: everything that does not depend on the placement, built by
 * dp_sim_init and only read afterwards (so any number of threads may share
 * it, each with a workspace of its own). */
struct dp_sim {
    const dp_graph *g;
    const dp_devices *ds;
    int32_t n, D, L;
    int64_t T, E;

    int32_t n_classes;        /* devices with identical cost parameters share a class */
    int32_t dev_class[DP_MAX_DEVICES];
    double *cost;             /* [n * n_classes] seconds                   */
    sim_op *ops;              /* [n+1] (the extra entry closes the ranges) */
    int32_t *n_inputs;        /* [n] inputs of each op (a run's pending counts start here) */
    uint64_t *param_bytes;    /* [n] each op's parameters                  */
    sim_tensor *tensors;      /* [T+1] likewise                            */
    int32_t *in_tensor;       /* [E] tensor read by each input edge        */
    int32_t *cons;            /* [E] consuming op                          */
    int32_t n_sources;
    int32_t *sources;         /* ops without inputs, in topological order  */
    int32_t n_constrained;
    int32_t *constrained;     /* ops with a device constraint              */
    uint64_t *allowed;        /* [n_constrained] bit d: device d allowed   */
    int32_t n_coloc_ops;
    int32_t *coloc_ops;       /* colocated ops, grouped by group           */
    int32_t *coloc_ops_group; /* group of each entry                       */
    double *link_inv_bw, *link_lat; /* [L]                                 */
    int32_t *link_to, *link_from;   /* [L]                                 */
    int pipelined;            /* host staging pipelined (else store and forward) */
    int32_t n_coloc;          /* colocation groups                         */

    /* resources that events free: each stream of each device, then each
     * link; at most one event is pending per resource */
    int32_t n_res;
    int32_t stream0[DP_MAX_DEVICES + 1]; /* device d's streams: resources stream0[d] .. stream0[d+1]-1 */
    int32_t link0;            /* link l is resource link0 + l              */
    int32_t q_cap;            /* room of a workspace's event queue (> n_res) */

    /* the eager executor's (DP_EXECUTOR_TORCH; sim_eager.c) */
    dp_executor executor;     /* the graph's when the context was built     */
    int32_t *order;           /* [n] program order: op index order where it
                                 is topological, else g->topo             */
    double *issue_s;          /* [n] host seconds to issue each op          */
    int8_t *runs;             /* [n] 0: a parameter, a buffer or a
                                 placeholder; else an op at run time,
                                 SIM_RUNS_BACKWARD one of the backward pass */
    double copy_issue_s;      /* host seconds to issue a copy               */
    double switch_s;          /* host seconds to turn to a CPU op after
                                 issuing GPU work                          */
    int8_t is_cpu[DP_MAX_DEVICES]; /* CPU ops run on the host thread        */

    dp_sim_workspace *own;    /* the context's workspace: dp_sim_run, dp_trace_write */
};

/* Per-run scratch: one run at a time per workspace. */
struct dp_sim_workspace {
    const dp_sim *sim;        /* the context it serves                     */
    /* per op: the hot fields of the loop, one array each */
    int8_t *place;            /* [n] device (DP_MAX_DEVICES <= 127: a byte keeps
                                 the array in the first-level cache)      */
    double *dur;              /* [n] this step's time                      */
    int32_t *pending;         /* [n] inputs not yet on the op's device     */
    int32_t *next;            /* [n] ready-FIFO link                       */
    sim_tstate *ts;           /* [T] per tensor                            */
    int32_t ready_head[DP_MAX_DEVICES], ready_tail[DP_MAX_DEVICES];
    uint64_t free_streams[DP_MAX_DEVICES]; /* bit s set: stream s idle     */
    uint64_t param_bytes[DP_MAX_DEVICES];
    int32_t n_ops[DP_MAX_DEVICES];
    int32_t *remote_refs;     /* [T * D] uses left of a received copy      */
    int32_t cnt[DP_MAX_DEVICES], touched[DP_MAX_DEVICES];

    int32_t n_x;              /* transfers so far; arrays have capacity E  */
    sim_xfer *x;
    int32_t *link_head, *link_tail; /* [L] FIFO of waiting transfers       */
    int32_t *link_busy;             /* [L] (not bytes: those alias anything) */
    double *link_granted;           /* [L] when the hop it carries took it */
    dp_sim_link_stats *link_stats;  /* [L]                                 */

    /* pending events (at most one per resource), sorted by time, ties in
     * the order scheduled: q[q_head .. q_tail) */
    sim_event *q;             /* [q_cap]                                   */
    int32_t q_head, q_tail;
    int32_t n_done;           /* ops finished so far this step             */
    double now;
    int64_t mem_cur[DP_MAX_DEVICES];
    int64_t mem_peak[DP_MAX_DEVICES];
    double busy[DP_MAX_DEVICES];
    uint64_t transfer_bytes;

    /* the eager executor's (allocated when the context's executor is it) */
    double *avail;            /* [T * D] when tensor t is on device d; < 0: not sent there */
    int32_t *avail_trig;      /* [T * D] what made it so (as tr_trig), traced runs */
    double *link_free;        /* [L] when each link is next free          */
    int32_t *link_trig;       /* [L] the hop record that last held it      */

    /* trace of the last run with record_trace */
    int tracing, have_trace;
    double *tr_start, *tr_end; /* [n] */
    int32_t *tr_place;         /* [n] the traced placement */
    int32_t *tr_stream;        /* [n] the stream each op ran on */
    /* what started each op and each transfer hop (the critical path): the
     * event being handled then, an op's index (it ended) or -(h + 1) (hop
     * record h ended), SIM_TRIG_NONE (the sources at time 0) or, for the
     * second hop of a pipelined copy whose start or end its first hop set,
     * SIM_TRIG_HOP0 */
    int32_t *tr_trig;          /* [n] */
    int32_t *x_trig;           /* [2E] per transfer and hop */
    int32_t *x_rec;            /* [2E] the hop record of each transfer's hop */
    int32_t cur_ev;            /* the event being handled (as in tr_trig) */
    int32_t tr_last_op;        /* the op that ended last */
    int32_t n_hops;            /* link records (one per link of a transfer), capacity 2E */
    int32_t *hop_x, *hop_link;
    double *hop_start, *hop_end;
};

/* dp_sim.runs of an op of the backward pass (the others at run time: 1). */
#define SIM_RUNS_BACKWARD 2

/* ---- the simulator's internals shared with sim_delta.c and sim_eager.c ------------------- */

/* Memory by liveness: bytes allocated on and freed from device d. */
static inline void sim_mem_alloc(dp_sim_workspace *w, int32_t d, uint64_t bytes) {
    int64_t cur = w->mem_cur[d] + (int64_t)bytes, peak = w->mem_peak[d];
    w->mem_cur[d] = cur;
    w->mem_peak[d] = cur > peak ? cur : peak; /* a select: a new peak comes at random */
}

static inline void sim_mem_free(dp_sim_workspace *w, int32_t d, uint64_t bytes) {
    w->mem_cur[d] -= (int64_t)bytes;
}

/* The eager executor's context arrays (order, issue_s, runs,
 * copy_issue_s, switch_s, is_cpu): DP_STATUS_NOMEM. */
dp_status sim_eager_init(dp_sim *s, dp_error *err);

/* The eager executor's workspace arrays: DP_STATUS_NOMEM. */
dp_status sim_eager_workspace_init(const dp_sim *s, dp_sim_workspace *w, dp_error *err);

/* One step under the eager executor (docs/simulator.md, "Executors"), from
 * the workspace's placement and op times; fills what sim_step's event loop
 * fills (memory, busy time, links, transfers, the trace when w->tracing).
 * Returns the makespan. */
double sim_eager_step(const dp_sim *s, dp_sim_workspace *w);

/* Simulates one step of the workspace's placement (place, dur, param_bytes
 * and n_ops set): the traced variant when w->tracing. Returns the makespan. */
double sim_step(const dp_sim *s, dp_sim_workspace *w);

/* Sets w->dur from w->place (with noise for `step` when sigma > 0). */
void sim_fill_durations(const dp_sim *s, dp_sim_workspace *w, double sigma, uint64_t seed, int32_t step);

/* The trace's arrays, allocated once per workspace. DP_STATUS_NOMEM. */
dp_status sim_alloc_trace(const dp_sim *s, dp_sim_workspace *w, dp_error *err);

/* res from the workspace's last step: step_time as given, the rest from w
 * (link stats by pointer into w), verdict judged. */
void sim_fill_result(const dp_sim *s, const dp_sim_workspace *w, double step_time, int32_t measured,
                     dp_sim_result *res);

#endif
