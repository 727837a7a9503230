/* Shared pieces of the placers and groupers (src/place): per-device op
 * times, the contracted undirected graph the partitioners read, integer
 * weight scaling, and the Scotch and METIS calls. Not part of the public
 * API; units and device masks are (dplace/units.h). */
#ifndef DPLACE_PLACE_INTERNAL_H
#define DPLACE_PLACE_INTERNAL_H

#include <stdint.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/place.h"
#include "dplace/units.h"

/* ---- op times ----------------------------------------------------------- */

/* Op times per device, computed once per class of identical devices. */
typedef struct place_costs {
    int32_t n_ops, n_classes;
    int32_t class_of[DP_MAX_DEVICES];
    double *t;     /* [n_classes * n_ops] seconds (dp_cost_op_seconds) */
    double *total; /* [n_devices] seconds of the whole graph on each device */
} place_costs;

dp_status place_costs_init(place_costs *c, const dp_graph *g, const dp_devices *ds, dp_error *err);
void place_costs_free(place_costs *c);

static inline double place_costs_op(const place_costs *c, int32_t op, int32_t d) {
    return c->t[(int64_t)c->class_of[d] * c->n_ops + op];
}

/* The fastest device of a mask (least total time; lowest index on ties). */
int32_t place_costs_fastest(const place_costs *c, dp_mask m);

/* Bytes of tensor t of g. */
static inline uint64_t place_tensor_bytes(const dp_graph *g, int64_t t) { return g->outputs[t].bytes; }

/* ---- the contracted undirected graph ------------------------------------ */

/* Vertices are what vertex_of maps ops to; edges merge the bytes of every
 * input edge between two different vertices, stored in both directions. */
typedef struct place_wgraph {
    int32_t n;
    int64_t n_arcs;
    int64_t *at;    /* [n+1]                                    */
    int32_t *adj;   /* [n_arcs] neighbour of each arc           */
    double *bytes;  /* [n_arcs] bytes between the two ends      */
    double *vw;     /* [n] sum of op_w over the vertex's ops    */
} place_wgraph;

/* Builds it: vertex_of[op] in 0..n-1, or -1 to leave the op out (its edges
 * too). op_w[op] is the op's weight. */
dp_status place_wgraph_build(place_wgraph *w, const dp_graph *g, const int32_t *vertex_of, int32_t n,
                             const double *op_w, dp_error *err);
void place_wgraph_free(place_wgraph *w);

/* Scales non-negative reals into integers >= 1 whose sum is at most
 * n + budget (each 1 + floor(x * budget / sum)); all 1 when the sum is 0. */
void place_scale(const double *x, int64_t n, double budget, int64_t *out);

/* ---- partitioners (place_scotch.c, place_metis.c) ----------------------- */

/* Maps w onto n_parts parts with relative target weights tw[n_parts] (NULL:
 * equal) by Scotch's static mapping onto a weighted complete graph, default
 * strategy, random state reset to `seed`. fixed[v] >= 0 pins vertex v to a
 * part (Scotch's fixed vertices); fixed may be NULL. Fills part[w->n]. */
dp_status place_scotch_map(const place_wgraph *w, int32_t n_parts, const double *tw, const int32_t *fixed,
                           uint64_t seed, int32_t *part, dp_error *err);

/* Partitions w into n_parts parts with relative target weights tw (NULL:
 * equal) by METIS k-way (minimum edge cut), seeded. n_parts == 1 and
 * n_parts >= w->n are answered without METIS (5.1 crashes on the first and
 * leaves parts empty on the second). Parts may come back empty. */
dp_status place_metis_part(const place_wgraph *w, int32_t n_parts, const double *tw, uint64_t seed, int32_t *part,
                           dp_error *err);

/* Asynchronous fluid communities (group_fluid.c): k communities of the
 * vertices of w (edges unweighted), seeded. Fills part[w->n] with 0..k-1,
 * every community non-empty; 1 <= k <= w->n. */
dp_status place_fluid(const place_wgraph *w, int32_t k, uint64_t seed, int32_t *part, dp_error *err);

/* ---- m-SCT's LP (place_sct.c, COIN-OR CLP) ------------------------------ */

/* Solved LPs kept by their inputs, so that placing the same problem again
 * (a memory retry) does not solve its LP again. Not thread-safe: one
 * placement at a time uses a memo. */
typedef struct place_sct_memo place_sct_memo;

/* An empty memo; NULL when out of memory. */
place_sct_memo *place_sct_memo_new(void);
void place_sct_memo_free(place_sct_memo *memo);
/* LPs solved (not found in memo) so far; 0 for NULL. */
int64_t place_sct_memo_solves(const place_sct_memo *memo);

/* Favourite children from the LP relaxation of SCT over n_ops ops and
 * n_edges edges from[e] -> to[e] (each pair once) with transfer times
 * comm_s[e] and op times op_s[op]: fav[op] is op's favourite child or -1;
 * *lp_makespan_s the LP's (relaxed) makespan. An edge whose LP value is
 * under threshold is a favourite; each op keeps at most one favourite child
 * and one favourite parent (first edges first). With memo (may be NULL), an
 * LP of the same inputs solved before is not solved again: its favourites
 * are the ones it gave, and a solved LP is kept there. DP_STATUS_UNSUPPORTED
 * when CLP finds no optimum, DP_STATUS_NOMEM. */
dp_status place_sct_favourites(int32_t n_ops, int64_t n_edges, const int32_t *from, const int32_t *to,
                               const double *comm_s, const double *op_s, double threshold, place_sct_memo *memo,
                               int32_t *fav, double *lp_makespan_s, dp_error *err);

/* dp_place_m_sct with a memo of its LPs (NULL: none). */
dp_status place_m_sct_memo(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt,
                           place_sct_memo *memo, int32_t *out, dp_error *err);

/* ---- forward-only placement (place_forward.c) --------------------------- */

/* The backward ops of a training graph and the forward op each gradient op
 * goes with (TensorFlow's colocate_gradients_with_ops), read from the name
 * scopes ("gradients/X" differentiates scope X; place_forward.c). A graph
 * without gradient scopes has no backward ops. */
typedef struct place_fwd {
    int32_t n_backward;
    uint8_t *backward; /* [n_ops] 1: in a gradient or clipping scope, or reads a backward op */
    int32_t *anchor;   /* [n_ops] the forward op a gradient op goes with, -1 none */
} place_fwd;

dp_status place_fwd_init(place_fwd *f, const dp_graph *g, dp_error *err);
void place_fwd_free(place_fwd *f);

/* ---- helpers for placers ------------------------------------------------ */

/* The units placer m places under opt: the modules of g when opt->units
 * asks for them (the grouping step then does not apply), else by its
 * grouping step (dp_place_group_of): TensorFlow's colocation groups for
 * DP_PLACE_GROUP_NONE, else one unit per group of the grouper run on g
 * (compute weighed on ds's first GPU, or its first device). With fwd (the
 * forward-only placement), the colocation grouper's rule sees the forward
 * ops only (Baechi co-places the forward graph) and each gradient op joins
 * the unit of its anchor. u is left empty on failure. */
dp_status place_units_init(dp_units *u, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                           const dp_place_options *opt, const place_fwd *fwd, dp_error *err);

/* Puts every unit whose device is not in its mask on the device of its mask
 * with the least compute assigned so far (unit weights uw), keeping the
 * others where they are. Used after partitioners that have no notion of
 * "any GPU" constraints. */
void place_units_repair(const dp_units *u, const dp_mask *mask, const double *uw, int32_t n_devices,
                        int32_t *unit_dev);

#endif
