/* Simulator context, shared by sim.c and trace.c only. */
#ifndef DPLACE_SIM_INTERNAL_H
#define DPLACE_SIM_INTERNAL_H

#include "dplace/sim.h"

/* A pending event: an op finishing (id >= 0) or a transfer finishing its
 * current hop (id = -x - 1). Ordered by time, then by insertion counter. */
typedef struct sim_event {
    double t;
    uint64_t seq;
    int32_t id;
} sim_event;

struct dp_sim {
    const dp_graph *g;
    const dp_devices *ds;
    int32_t n, D, L;
    int64_t T, E;

    /* placement-independent, built by dp_sim_init */
    int32_t n_classes;        /* devices with identical cost parameters share a class */
    int32_t dev_class[DP_MAX_DEVICES];
    double *cost;             /* [n * n_classes] seconds                   */
    uint64_t *tensor_bytes;   /* [T]                                       */
    int32_t *tensor_op;       /* [T] producing op                          */
    /* compact copies of what the event loop reads per op (cache friendly) */
    int32_t *out_at;          /* [n+1] first tensor of each op             */
    int32_t *in_at;           /* [n+1] first input edge of each op         */
    int32_t *in_tensor;       /* [E] tensor read by each input edge        */
    int32_t *cons_at;         /* [T+1] first consumer edge of each tensor  */
    int32_t *cons;            /* [E] consuming op                          */
    uint64_t *start_bytes;    /* [n] outputs + temp, allocated at start    */
    uint64_t *temp_bytes;     /* [n]                                       */
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
    int32_t n_coloc;          /* colocation groups                         */

    /* per-run scratch */
    const int32_t *place;
    double *dur;              /* [n] this step's op times                  */
    int32_t *pending;         /* [n] inputs not yet on the op's device     */
    int32_t *ready_next;      /* [n] intrusive FIFO links                  */
    int32_t ready_head[DP_MAX_DEVICES], ready_tail[DP_MAX_DEVICES];
    uint64_t free_streams[DP_MAX_DEVICES]; /* bit s set: stream s idle     */
    int32_t *op_stream;       /* [n]                                       */
    int32_t *local_refs;      /* [T] uses left of the producer's copy      */
    uint64_t param_bytes[DP_MAX_DEVICES];
    int32_t *remote_refs;     /* [T * D] uses left of a received copy      */
    int32_t cnt[DP_MAX_DEVICES], touched[DP_MAX_DEVICES];

    int32_t n_x;              /* transfers so far; arrays have capacity E  */
    int32_t *x_tensor, *x_src, *x_dst, *x_next;
    int8_t *x_hop;
    int32_t *link_head, *link_tail; /* [L] FIFO of waiting transfers       */
    uint8_t *link_busy;             /* [L]                                 */
    dp_sim_link_stats *link_stats;  /* [L]                                 */

    sim_event *heap;
    int32_t heap_n, heap_cap;
    uint64_t seq;
    double now;
    int64_t mem_cur[DP_MAX_DEVICES];
    int64_t mem_peak[DP_MAX_DEVICES];
    double busy[DP_MAX_DEVICES];
    uint64_t transfer_bytes;

    /* trace of the last run with record_trace */
    int tracing, have_trace;
    double *tr_start, *tr_end; /* [n] */
    int32_t *tr_place;         /* [n] the traced placement */
    int32_t n_hops;            /* hop records, capacity 2E */
    int32_t *hop_x, *hop_link;
    double *hop_start, *hop_end;
};

#endif
