/* Discrete-event simulator of one training step (see include/dplace/sim.h
 * and docs/simulator.md). */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/cost.h"
#include "dplace/placement.h"
#include "sim/sim_internal.h"

static const char *const verdict_names[] = {"valid", "constraint", "colocation", "oom"};
_Static_assert(sizeof(verdict_names) / sizeof(verdict_names[0]) == DP_SIM_VERDICT_COUNT, "verdict_names");
_Static_assert(DP_MAX_DEVICES <= INT8_MAX, "a workspace keeps each op's device in a byte");

const char *dp_sim_verdict_name(dp_sim_verdict v) {
    return (unsigned)v < DP_SIM_VERDICT_COUNT ? verdict_names[v] : "?";
}

dp_status dp_sim_options_check(const dp_sim_options *o, dp_error *err) {
    if (!isfinite(o->noise_sigma) || o->noise_sigma < 0 || o->noise_sigma > DP_SIM_NOISE_MAX)
        return dp_error_set(err, DP_STATUS_INVALID, "noise: a log-normal sigma in 0..%g, not %g", DP_SIM_NOISE_MAX,
                            o->noise_sigma);
    if (o->steps < 1 || o->steps > DP_SIM_STEPS_MAX)
        return dp_error_set(err, DP_STATUS_INVALID, "steps: in 1..%d, not %d", DP_SIM_STEPS_MAX, (int)o->steps);
    if (o->warmup < 0 || o->warmup >= o->steps)
        return dp_error_set(err, DP_STATUS_INVALID, "warmup: in 0..steps-1 (steps %d), not %d", (int)o->steps,
                            (int)o->warmup);
    return DP_STATUS_OK;
}

dp_sim_options dp_sim_options_default(void) {
    dp_sim_options o;
    memset(&o, 0, sizeof o);
    o.steps = 1;
    return o;
}

/* ---- context ----------------------------------------------------------------------- */

void dp_sim_free(dp_sim *s) {
    if (!s) return;
    dp_sim_workspace_free(s->own);
    free(s->order), free(s->issue_s), free(s->runs);
    void *arrays[] = {s->cost,        s->ops,       s->n_inputs,  s->param_bytes,  s->tensors,         s->in_tensor,
                      s->cons,        s->sources,   s->constrained, s->allowed,       s->coloc_ops,
                      s->coloc_ops_group, s->link_inv_bw, s->link_lat, s->link_to,   s->link_from};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) free(arrays[k]);
    free(s);
}

/* Whether op i's outputs are references to a variable's parameters rather
 * than new buffers: the outputs of a variable op (VariableV2, Variable,
 * VarHandleOp, the PyTorch exporter's Parameter and Buffer) and of a view
 * that reads one (TensorFlow's "read" Identity forwards the variable's
 * buffer; aten's t, view, detach, ...; dp_cost_type_is_view). The parameters
 * are already counted in param_bytes, so these outputs take no memory on
 * their own device; a copy sent elsewhere does. */
static int is_variable_ref(const dp_graph *g, int32_t i) {
    const dp_op *o = &g->ops[i];
    if (dp_cost_type_is_variable(dp_graph_str(g, o->type))) return 1;
    if (o->n_inputs != 1 || !dp_cost_type_is_view(dp_graph_str(g, o->type))) return 0;
    int32_t p = g->inputs[o->inputs_at].op;
    return dp_cost_type_is_variable(dp_graph_str(g, g->ops[p].type));
}

#define ALLOC(ptr, count) ((ptr) = malloc(((size_t)(count) + 1) * sizeof *(ptr)))

/* Whether ds can host g: g finalized, small enough for the compact arrays,
 * and every constraint satisfiable by some device of the set. */
static dp_status check_device_set(const dp_graph *g, const dp_devices *ds, dp_error *err) {
    if (!g->finalized) return dp_error_set(err, DP_STATUS_INVALID, "graph \"%s\" is not finalized", g->name);
    if (g->n_tensors >= INT32_MAX || g->n_inputs >= (1 << 30)) /* events name (transfer, hop) in 31 bits */
        return dp_error_set(err, DP_STATUS_INVALID, "graph \"%s\" has more than 2^31 tensors or 2^30 edges",
                            g->name);
    for (int64_t t = 0; t < g->n_tensors; t++)
        if (g->outputs[t].bytes > (uint64_t)INT64_MAX)
            return dp_error_set(err, DP_STATUS_INVALID, "graph \"%s\": tensor %lld has 2^63 bytes or more",
                                g->name, (long long)t);
    for (int32_t i = 0; i < g->n_ops; i++) {
        if (g->ops[i].device.kind == DP_DEVCON_NONE) continue;
        int32_t d = 0;
        while (d < ds->n_devices && !dp_placement_allowed(g, ds, i, d)) d++;
        if (d == ds->n_devices) {
            char buf[32];
            dp_devcon_format(g->ops[i].device, buf, sizeof buf);
            return dp_error_set(err, DP_STATUS_INVALID,
                                "device set \"%s\" cannot run graph \"%s\": op %d \"%s\" must run on %s, which the set "
                                "lacks",
                                ds->name, g->name, i, g->ops[i].name, buf);
        }
    }
    return DP_STATUS_OK;
}

/* Device classes: devices with identical cost parameters share one. */
static void fill_device_classes(dp_sim *s) {
    const dp_devices *ds = s->ds;
    for (int32_t d = 0; d < s->D; d++) {
        int32_t c = 0;
        while (c < d && !dp_devices_same_cost(&ds->devices[c], &ds->devices[d])) c++;
        s->dev_class[d] = c < d ? s->dev_class[c] : s->n_classes++;
    }
}

/* Each class's op times, taken from its first device. */
static void fill_costs(dp_sim *s) {
    for (int32_t c = 0; c < s->n_classes; c++) {
        int32_t d = 0;
        while (s->dev_class[d] != c) d++;
        for (int32_t i = 0; i < s->n; i++)
            s->cost[(size_t)i * s->n_classes + c] = dp_cost_op_seconds(s->g, i, &s->ds->devices[d]);
    }
}

/* The compact op, tensor and edge arrays the event loop reads, and the
 * sources in topological order. */
static void fill_graph_arrays(dp_sim *s) {
    const dp_graph *g = s->g;
    int32_t n = s->n;
    int64_t T = s->T;
    memset(s->ops, 0, ((size_t)n + 1) * sizeof(sim_op));
    memset(s->tensors, 0, ((size_t)T + 1) * sizeof(sim_tensor));
    int64_t e = 0;
    for (int32_t i = 0; i < n; i++) {
        const dp_op *o = &g->ops[i];
        sim_op *so = &s->ops[i];
        so->out_at = (int32_t)g->tensor_at[i];
        so->in_at = (int32_t)e;
        s->n_inputs[i] = o->n_inputs;
        for (int32_t k = 0; k < o->n_inputs; k++, e++) {
            dp_input in = g->inputs[o->inputs_at + k];
            s->in_tensor[e] = (int32_t)(g->tensor_at[in.op] + in.slot);
        }
        so->temp_bytes = o->temp_bytes;
        s->param_bytes[i] = o->param_bytes;
        so->start_bytes = o->temp_bytes;
        int ref = is_variable_ref(g, i);
        for (int64_t t = g->tensor_at[i]; t < g->tensor_at[i + 1]; t++) {
            s->tensors[t].bytes = g->outputs[t].bytes;
            s->tensors[t].ref = (uint32_t)ref;
            s->tensors[t].op = (uint32_t)i;
            so->start_bytes += sim_tensor_local_bytes(&s->tensors[t]);
        }
    }
    s->ops[n].out_at = (int32_t)T;
    s->ops[n].in_at = (int32_t)e;
    for (int64_t t = 0; t <= T; t++) s->tensors[t].cons_at = (int32_t)g->consumers_at[t];
    memcpy(s->cons, g->consumers, (size_t)s->E * sizeof(int32_t));
    for (int32_t k = 0; k < n; k++) {
        int32_t i = g->topo[k];
        if (g->ops[i].n_inputs == 0) s->sources[s->n_sources++] = i;
    }
}

/* The constrained ops with the devices each allows, and the links. */
static void fill_constraints_and_links(dp_sim *s) {
    const dp_graph *g = s->g;
    const dp_devices *ds = s->ds;
    for (int32_t i = 0; i < s->n; i++) {
        if (g->ops[i].device.kind == DP_DEVCON_NONE) continue;
        uint64_t mask = 0;
        for (int32_t d = 0; d < s->D; d++)
            if (dp_placement_allowed(g, ds, i, d)) mask |= 1ULL << d;
        s->allowed[s->n_constrained] = mask;
        s->constrained[s->n_constrained++] = i;
    }
    for (int32_t l = 0; l < s->L; l++) {
        s->link_inv_bw[l] = 1.0 / dp_devices_link_rate(&ds->links[l]);
        s->link_lat[l] = ds->links[l].latency_s;
        s->link_to[l] = ds->links[l].to;
        s->link_from[l] = ds->links[l].from;
    }
    s->pipelined = ds->staging == DP_STAGING_PIPELINED;
}

/* The colocated ops grouped by group (the graph's coloc_group), in op order
 * within a group: a counting sort, with coloc_ops_group as the counts. */
static void fill_colocation(dp_sim *s) {
    const int32_t *group = s->g->coloc_group;
    int32_t n = s->n, *at = s->coloc_ops_group; /* offsets first, groups after */
    s->n_coloc = s->g->n_colocate;
    memset(at, 0, ((size_t)s->n_coloc + 1) * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++)
        if (group[i] >= 0) at[group[i] + 1]++;
    for (int32_t c = 0; c < s->n_coloc; c++) at[c + 1] += at[c];
    s->n_coloc_ops = at[s->n_coloc];
    for (int32_t i = 0; i < n; i++)
        if (group[i] >= 0) s->coloc_ops[at[group[i]]++] = i;
    for (int32_t k = 0; k < s->n_coloc_ops; k++) s->coloc_ops_group[k] = group[s->coloc_ops[k]];
}

dp_sim *dp_sim_init(const dp_graph *g, const dp_devices *ds, dp_error *err) {
    if (check_device_set(g, ds, err)) return NULL;
    dp_sim *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    s->g = g;
    s->ds = ds;
    s->n = g->n_ops;
    s->D = ds->n_devices;
    s->L = ds->n_links;
    s->T = g->n_tensors;
    s->E = g->n_inputs;
    int32_t n = s->n, D = s->D, L = s->L;
    int64_t T = s->T, E = s->E;
    fill_device_classes(s);
    /* an event frees a stream or a link: at most one is pending per resource */
    s->stream0[0] = 0;
    for (int32_t d = 0; d < D; d++) s->stream0[d + 1] = s->stream0[d] + ds->devices[d].streams;
    s->link0 = s->stream0[D];
    s->n_res = s->link0 + L;
    s->q_cap = 2 * s->n_res + 256; /* room to slide into rarely (sim_event_push) */
    if (!ALLOC(s->cost, (size_t)n * s->n_classes) || !ALLOC(s->ops, n + 1) || !ALLOC(s->n_inputs, n) ||
        !ALLOC(s->param_bytes, n) ||
        !ALLOC(s->tensors, T + 1) ||
        !ALLOC(s->in_tensor, E) || !ALLOC(s->cons, E) || !ALLOC(s->sources, n) || !ALLOC(s->constrained, n) ||
        !ALLOC(s->allowed, n) || !ALLOC(s->coloc_ops, n) || !ALLOC(s->coloc_ops_group, n) ||
        !ALLOC(s->link_inv_bw, L) || !ALLOC(s->link_lat, L) || !ALLOC(s->link_to, L) || !ALLOC(s->link_from, L))
        goto oom;
    fill_costs(s);
    fill_graph_arrays(s);
    fill_constraints_and_links(s);
    fill_colocation(s);
    s->executor = g->executor;
    if (s->executor == DP_EXECUTOR_TORCH && sim_eager_init(s, err)) {
        dp_sim_free(s);
        return NULL;
    }
    if (!(s->own = dp_sim_workspace_init(s, NULL))) goto oom;
    return s;
oom:
    dp_sim_free(s);
    dp_error_set(err, DP_STATUS_NOMEM, "out of memory building the simulator for graph \"%s\"", g->name);
    return NULL;
}

double dp_sim_op_seconds(const dp_sim *s, int32_t op, int32_t d) {
    return s->cost[(size_t)op * s->n_classes + s->dev_class[d]];
}

/* ---- workspaces ------------------------------------------------------------------------ */

void dp_sim_workspace_free(dp_sim_workspace *w) {
    if (!w) return;
    void *arrays[] = {w->place,     w->dur,       w->pending,  w->next,      w->ts,       w->remote_refs,
                      w->x,         w->link_head, w->link_tail, w->link_busy, w->link_granted, w->link_stats, w->q,
                      w->tr_start,  w->tr_end,   w->tr_place,  w->tr_stream, w->tr_trig, w->x_trig, w->x_rec, w->hop_x,
                      w->hop_link,  w->hop_start, w->hop_end, w->avail, w->avail_trig, w->link_free, w->link_trig};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) free(arrays[k]);
    free(w);
}

dp_sim_workspace *dp_sim_workspace_init(const dp_sim *s, dp_error *err) {
    int32_t n = s->n, D = s->D, L = s->L;
    int64_t T = s->T, E = s->E;
    dp_sim_workspace *w = calloc(1, sizeof *w);
    if (!w || !ALLOC(w->place, n) || !ALLOC(w->dur, n) || !ALLOC(w->pending, n) || !ALLOC(w->next, n) ||
        !ALLOC(w->ts, T) || !ALLOC(w->remote_refs, T * D) || !ALLOC(w->x, E) || !ALLOC(w->link_head, L) ||
        !ALLOC(w->link_tail, L) || !ALLOC(w->link_busy, L) || !ALLOC(w->link_granted, L) ||
        !(w->link_stats = calloc((size_t)L + 1, sizeof(dp_sim_link_stats))) ||
        !ALLOC(w->q, s->q_cap)) {
        dp_sim_workspace_free(w);
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory for a simulator workspace (graph \"%s\", %d ops)",
                     s->g->name, n);
        return NULL;
    }
    w->sim = s;
    if (s->executor == DP_EXECUTOR_TORCH && sim_eager_workspace_init(s, w, err)) {
        dp_sim_workspace_free(w);
        return NULL;
    }
    return w;
}

/* ---- the event loop -------------------------------------------------------------------- */

/* The loop's functions are inlined into one function per combination of
 * host staging (pipelined or stored and forwarded) and tracing, so neither
 * is tested per event. */
#define HOT static inline __attribute__((always_inline))

HOT void mem_alloc(dp_sim_workspace *w, int32_t d, uint64_t bytes) { sim_mem_alloc(w, d, bytes); }

HOT void mem_free(dp_sim_workspace *w, int32_t d, uint64_t bytes) {
    assert(w->mem_cur[d] >= (int64_t)bytes);
    sim_mem_free(w, d, bytes);
}

/* Schedules the event that frees resource r at t (what: the op or transfer
 * it concerns); events at equal times leave in the order they came. The
 * queue q[q_head .. q_tail) is sorted by time; a new event, usually later
 * than those pending, is put in place from the back, behind every event at
 * its time. q[q_head - 1], the last event taken (or a stop at time 0 before
 * the first), is no later than any new event and stops the walk. When the
 * tail reaches the end, the pending events (at most one per resource) slide
 * to the front. */
HOT void sim_event_push(const dp_sim *s, dp_sim_workspace *w, double t, int32_t r, int32_t what) {
    assert(t >= 0); /* not NaN, not negative */
    sim_event *q = w->q;
    int32_t i = w->q_tail;
    if (i == s->q_cap) {
        int32_t head = w->q_head;
        memmove(q + 1, q + head, (size_t)(i - head) * sizeof *q);
        q[0].t = 0;
        i -= head - 1;
        w->q_head = 1;
    }
    assert(q[w->q_head - 1].t <= t);
    w->q_tail = i + 1;
    while (q[i - 1].t > t) {
        q[i] = q[i - 1];
        i--;
    }
    q[i] = (sim_event){t, r, what};
}

HOT void op_start(const dp_sim *s, dp_sim_workspace *w, int32_t op, int32_t d, const int trace) {
    uint64_t fs = w->free_streams[d];
    assert(fs);
    int32_t stream = __builtin_ctzll(fs);
    w->free_streams[d] = fs & (fs - 1);
    mem_alloc(w, d, s->ops[op].start_bytes);
    if (trace) {
        w->tr_start[op] = w->now;
        w->tr_stream[op] = stream;
        w->tr_trig[op] = w->cur_ev;
    }
    sim_event_push(s, w, w->now + w->dur[op], s->stream0[d] + stream, op);
}

/* op's inputs are all on its device: run it now or queue it (FIFO). */
HOT void op_ready(const dp_sim *s, dp_sim_workspace *w, int32_t op, int32_t d, const int trace) {
    if (w->free_streams[d] && w->ready_head[d] < 0) {
        op_start(s, w, op, d, trace);
        return;
    }
    w->next[op] = -1;
    if (w->ready_head[d] < 0) w->ready_head[d] = op;
    else w->next[w->ready_tail[d]] = op;
    w->ready_tail[d] = op;
}

/* Transfer x waits in link l's queue (request order). */
HOT void xfer_enqueue(dp_sim_workspace *w, int32_t x, int32_t l) {
    w->x[x].next = -1;
    if (w->link_head[l] < 0) w->link_head[l] = x;
    else w->x[w->link_tail[l]].next = x;
    w->link_tail[l] = x;
}

/* The next hop of transfer x takes its link, free now, and starts: the copy
 * at the hop's end (the receiver's, or the host's when storing and
 * forwarding) exists from now on. A hop takes latency + bytes / bandwidth;
 * the second hop of a pipelined copy through the host (docs/simulator.md)
 * starts no sooner than the first hop's latency after that hop started
 * (data reaches the host) and ends no sooner than a latency after the first
 * hop ended (the last chunk), so alone it adds only its latency. A
 * pipelined first hop lets the second ask for its link at once: it takes
 * it too if free, else waits in its queue. */
HOT void xfer_take(const dp_sim *s, dp_sim_workspace *w, int32_t x, const int pipe, const int trace) {
    sim_xfer *xf = &w->x[x];
    const sim_tensor *tn = &s->tensors[xf->tensor];
    double now = w->now;
    for (;;) {
        int k = xf->hop++;
        int32_t l = xf->link[k];
        double lat = s->link_lat[l];
        w->link_busy[l] = 1;
        w->link_granted[l] = now;
        double end = now + lat + sim_tensor_bytes_d(tn) * s->link_inv_bw[l];
        int32_t trig = w->cur_ev;
        if (k == 0) {
            xf->end0 = end;
            xf->start1 = now + lat;
        } else if (pipe) {
            if (xf->start1 > now) {
                end += xf->start1 - now;
                trig = SIM_TRIG_HOP0;
            }
            if (xf->end0 + lat > end) {
                end = xf->end0 + lat;
                trig = SIM_TRIG_HOP0;
            }
        }
        if (trace) w->x_trig[2 * (int64_t)x + k] = trig;
        if (!pipe || k == xf->len - 1) mem_alloc(w, s->link_to[l], tn->bytes);
        sim_event_push(s, w, end, s->link0 + l, x);
        if (!pipe || xf->hop == xf->len) return;
        l = xf->link[xf->hop];
        if (w->link_busy[l]) {
            xfer_enqueue(w, x, l);
            return;
        }
    }
}

/* Transfer x asks for the link of its next hop: takes it if free, else
 * waits in the link's queue. */
HOT void xfer_request(const dp_sim *s, dp_sim_workspace *w, int32_t x, const int pipe, const int trace) {
    int32_t l = w->x[x].link[w->x[x].hop];
    if (!w->link_busy[l]) xfer_take(s, w, x, pipe, trace);
    else xfer_enqueue(w, x, l);
}

/* Tensor t was produced on device d: count its users, send it once to each
 * other device that uses it, and wake the local consumers. */
HOT void tensor_produced(const dp_sim *s, dp_sim_workspace *w, int32_t t, int32_t d, const int pipe,
                         const int trace) {
    const int32_t *cons = s->cons;
    const int8_t *place = w->place;
    const sim_tensor *tn = &s->tensors[t];
    int32_t e0 = tn->cons_at, e1 = tn[1].cons_at;
    int32_t nlocal = 0, ndev = 0;
    for (int32_t e = e0; e < e1; e++) {
        int32_t c = cons[e], pc = place[c];
        if (pc == d) {
            nlocal++;
            if (--w->pending[c] == 0) op_ready(s, w, c, d, trace);
        } else if (w->cnt[pc]++ == 0) {
            w->touched[ndev++] = pc;
        }
    }
    sim_tstate *st = &w->ts[t];
    st->dev = d;
    st->refs = nlocal + ndev;
    if (nlocal + ndev == 0) mem_free(w, d, sim_tensor_local_bytes(tn));
    for (int32_t k = 0; k < ndev; k++) {
        int32_t dst = w->touched[k];
        w->remote_refs[(int64_t)t * s->D + dst] = w->cnt[dst];
        w->cnt[dst] = 0;
        int32_t x = w->n_x++;
        sim_xfer *xf = &w->x[x];
        size_t pair = (size_t)d * s->D + dst;
        const int32_t *route = &s->ds->route[pair * 2];
        xf->tensor = t;
        xf->dst = (int16_t)dst;
        xf->hop = 0;
        xf->len = s->ds->route_len[pair];
        xf->link[0] = (int16_t)route[0];
        xf->link[1] = (int16_t)route[1];
        w->transfer_bytes += tn->bytes;
        xfer_request(s, w, x, pipe, trace);
    }
}

/* The op on stream r of its device ended. */
HOT void op_finish(const dp_sim *s, dp_sim_workspace *w, int32_t r, int32_t op, const int pipe, const int trace) {
    const sim_op *o = &s->ops[op];
    int32_t d = w->place[op];
    w->busy[d] += w->dur[op];
    if (trace) {
        w->tr_end[op] = w->now;
        w->tr_last_op = op;
    }
    w->free_streams[d] |= 1ULL << (r - s->stream0[d]);
    /* the temporaries and the inputs whose last use this was, freed at once:
     * nothing is allocated in between, so no peak is missed */
    uint64_t freed = o->temp_bytes;
    for (int32_t e = o->in_at; e < o[1].in_at; e++) {
        int32_t t = s->in_tensor[e];
        sim_tstate *st = &w->ts[t];
        const sim_tensor *tn = &s->tensors[t];
        int local = st->dev == d;
        int32_t *refs = local ? &st->refs : &w->remote_refs[(int64_t)t * s->D + d];
        uint64_t bytes = local ? sim_tensor_local_bytes(tn) : tn->bytes;
        int32_t left = *refs - 1; /* selects, not branches: local or not is random */
        *refs = left;
        freed += left == 0 ? bytes : 0;
    }
    mem_free(w, d, freed);
    for (int32_t t = o->out_at; t < o[1].out_at; t++) tensor_produced(s, w, t, d, pipe, trace);
    int32_t next = w->ready_head[d];
    if (next >= 0 && w->free_streams[d]) {
        w->ready_head[d] = w->next[next];
        op_start(s, w, next, d, trace);
    }
}

/* The hop of transfer x on link l ended: the link is free (busy from when
 * the hop took it). After the first hop the data has left the producer's
 * device; after a stored-and-forwarded first hop the second asks for its
 * link, and after it the host's copy is gone; after the last hop the
 * consumers on the destination may run. The link then serves its queue's
 * next transfer. */
HOT void xfer_hop_end(const dp_sim *s, dp_sim_workspace *w, int32_t x, int32_t l, const int pipe, const int trace) {
    sim_xfer *xf = &w->x[x];
    int32_t t = xf->tensor;
    const sim_tensor *tn = &s->tensors[t];
    int k = xf->link[0] == l ? 0 : 1; /* a route's two links differ */
    dp_sim_link_stats *ls = &w->link_stats[l];
    w->link_busy[l] = 0;
    ls->busy_s += w->now - w->link_granted[l];
    ls->bytes += tn->bytes;
    ls->n_transfers++;
    if (trace) {
        int32_t h = w->n_hops++;
        w->hop_x[h] = x;
        w->hop_link[h] = l;
        w->hop_start[h] = w->link_granted[l];
        w->hop_end[h] = w->now;
        w->x_rec[2 * (int64_t)x + k] = h;
    }
    if (k == 0) {
        sim_tstate *st = &w->ts[t];
        int32_t left = st->refs - 1; /* a select: whether this was the last use is random */
        st->refs = left;
        mem_free(w, st->dev, left == 0 ? sim_tensor_local_bytes(tn) : 0);
    } else if (!pipe) {
        mem_free(w, s->link_from[l], tn->bytes);
    }
    if (k + 1 < xf->len) {
        if (!pipe) xfer_request(s, w, x, pipe, trace); /* the other link: l stays free */
    } else {
        int32_t dst = xf->dst;
        const int32_t *cons = s->cons;
        const int8_t *place = w->place;
        for (int32_t e = tn->cons_at; e < tn[1].cons_at; e++) {
            int32_t c = cons[e];
            int hit = place[c] == dst;
            int32_t left = w->pending[c] - hit;
            w->pending[c] = left;
            if (hit & (left == 0)) op_ready(s, w, c, dst, trace);
        }
    }
    int32_t next = w->link_head[l];
    if (next >= 0) {
        assert(!w->link_busy[l]);
        w->link_head[l] = w->x[next].next;
        xfer_take(s, w, next, pipe, trace);
    }
}

/* Resets the run state to the start of a step (place, dur and param_bytes
 * set by the caller). */
static void step_reset(const dp_sim *s, dp_sim_workspace *w) {
    w->now = 0;
    w->n_x = 0;
    w->n_hops = 0;
    w->n_done = 0;
    w->transfer_bytes = 0;
    for (int32_t d = 0; d < s->D; d++) {
        w->ready_head[d] = -1;
        int32_t st = s->ds->devices[d].streams;
        w->free_streams[d] = st >= 64 ? ~0ULL : ((1ULL << st) - 1);
        w->mem_cur[d] = (int64_t)w->param_bytes[d];
        w->mem_peak[d] = w->mem_cur[d];
        w->busy[d] = 0;
        w->cnt[d] = 0;
    }
    for (int32_t l = 0; l < s->L; l++) {
        w->link_head[l] = -1;
        w->link_busy[l] = 0;
        memset(&w->link_stats[l], 0, sizeof w->link_stats[l]);
    }
    w->q[0].t = 0; /* the walks' stop (sim_event_push) */
    w->q_head = w->q_tail = 1;
    w->cur_ev = SIM_TRIG_NONE;
    w->tr_last_op = -1;
    memcpy(w->pending, s->n_inputs, (size_t)s->n * sizeof(int32_t));
}

/* Makes the sources ready, in topological order. */
HOT void start_sources(const dp_sim *s, dp_sim_workspace *w, const int trace) {
    for (int32_t k = 0; k < s->n_sources; k++) op_ready(s, w, s->sources[k], w->place[s->sources[k]], trace);
}

/* Handles events until none is left. */
HOT void run_events_impl(const dp_sim *s, dp_sim_workspace *w, const int pipe, const int trace) {
    int32_t link0 = s->link0;
    while (w->q_head < w->q_tail) {
        sim_event ev = w->q[w->q_head++];
        w->now = ev.t;
        if (trace) w->cur_ev = ev.r < link0 ? ev.what : -(w->n_hops + 1);
        if (ev.r < link0) {
            op_finish(s, w, ev.r, ev.what, pipe, trace);
            w->n_done++;
        } else {
            xfer_hop_end(s, w, ev.what, ev.r - link0, pipe, trace);
        }
    }
}

#define RUN_VARIANT(name, pipe, trace)                                                                           \
    static void name(const dp_sim *s, dp_sim_workspace *w, int from_start) {                                    \
        if (from_start) start_sources(s, w, trace);                                                             \
        run_events_impl(s, w, pipe, trace);                                                                     \
    }
RUN_VARIANT(run_saf, 0, 0)
RUN_VARIANT(run_pipe, 1, 0)
RUN_VARIANT(run_saf_trace, 0, 1)
RUN_VARIANT(run_pipe_trace, 1, 1)

/* Runs the events from the current state to the end of the step. */
static void run_events(const dp_sim *s, dp_sim_workspace *w, int from_start) {
    if (w->tracing) (s->pipelined ? run_pipe_trace : run_saf_trace)(s, w, from_start);
    else (s->pipelined ? run_pipe : run_saf)(s, w, from_start);
}

double sim_step(const dp_sim *s, dp_sim_workspace *w) {
    if (s->executor == DP_EXECUTOR_TORCH) return sim_eager_step(s, w);
    step_reset(s, w);
    run_events(s, w, 1);
    assert(w->n_done == s->n);
    return w->now;
}

/* Fills verdict and reason from constraints, colocation and memory peaks. */
static void judge(const dp_sim *s, const dp_sim_workspace *w, dp_sim_result *res) {
    const dp_graph *g = s->g;
    const dp_devices *ds = s->ds;
    const int8_t *place = w->place;
    int32_t bad = 0, first = -1;
    for (int32_t k = 0; k < s->n_constrained; k++) {
        int32_t i = s->constrained[k];
        if (!(s->allowed[k] >> place[i] & 1) && bad++ == 0) first = i;
    }
    if (bad) {
        char buf[32];
        dp_devcon_format(g->ops[first].device, buf, sizeof buf);
        res->verdict = DP_SIM_VERDICT_CONSTRAINT;
        snprintf(res->reason, sizeof res->reason, "op %d \"%.200s\" (%s) must run on %s but is placed on %s%s", first,
                 g->ops[first].name, dp_graph_str(g, g->ops[first].type), buf, ds->devices[place[first]].name,
                 bad > 1 ? " (and more ops break their constraints)" : "");
        return;
    }
    /* colocated ops are stored group by group: compare each with its group's first */
    for (int32_t k = 0, first_k = 0; k < s->n_coloc_ops; k++) {
        if (k == 0 || s->coloc_ops_group[k] != s->coloc_ops_group[k - 1]) first_k = k;
        int32_t i = s->coloc_ops[k], j = s->coloc_ops[first_k];
        if (place[i] == place[j]) continue;
        res->verdict = DP_SIM_VERDICT_COLOCATION;
        snprintf(res->reason, sizeof res->reason,
                 "colocation group \"%.100s\" is split: op %d \"%.100s\" on %s, op %d \"%.100s\" on %s",
                 dp_graph_str(g, g->ops[i].colocate), j, g->ops[j].name, ds->devices[place[j]].name, i,
                 g->ops[i].name, ds->devices[place[i]].name);
        return;
    }
    for (int32_t d = 0; d < s->D; d++) {
        if ((uint64_t)w->mem_peak[d] > ds->devices[d].memory_bytes) {
            res->verdict = DP_SIM_VERDICT_OOM;
            snprintf(res->reason, sizeof res->reason,
                     "out of memory on %s: peak %.3f GiB (%lld bytes) > capacity %.3f GiB (%llu bytes)",
                     ds->devices[d].name, (double)w->mem_peak[d] / 1073741824.0, (long long)w->mem_peak[d],
                     (double)ds->devices[d].memory_bytes / 1073741824.0,
                     (unsigned long long)ds->devices[d].memory_bytes);
            return;
        }
    }
}

void sim_fill_durations(const dp_sim *s, dp_sim_workspace *w, double sigma, uint64_t seed, int32_t step) {
    int32_t C = s->n_classes;
    const int8_t *place = w->place;
    double *dur = w->dur;
    for (int32_t i = 0; i < s->n; i++) dur[i] = s->cost[(size_t)i * C + s->dev_class[place[i]]];
    if (sigma <= 0) return;
    dp_rng rng;
    dp_rng_seed(&rng, seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(step + 1)));
    double shift = -0.5 * sigma * sigma; /* mean-one log-normal */
    for (int32_t i = 0; i < s->n; i++) dur[i] *= exp(sigma * dp_rng_normal(&rng) + shift);
}

void sim_fill_result(const dp_sim *s, const dp_sim_workspace *w, double step_time, int32_t measured,
                     dp_sim_result *res) {
    memset(res, 0, sizeof *res);
    res->step_time_s = step_time;
    res->n_devices = s->D;
    for (int32_t d = 0; d < s->D; d++) {
        dp_sim_device_stats *st = &res->device[d];
        st->busy_s = w->busy[d];
        st->peak_bytes = (uint64_t)w->mem_peak[d];
        st->memory_bytes = s->ds->devices[d].memory_bytes;
        st->param_bytes = w->param_bytes[d];
        st->n_ops = w->n_ops[d];
    }
    res->n_links = s->L;
    res->link = w->link_stats;
    res->transfer_bytes = w->transfer_bytes;
    res->n_transfers = w->n_x;
    res->steps_measured = measured;
    res->verdict = DP_SIM_VERDICT_VALID;
    judge(s, w, res);
    res->valid = res->verdict == DP_SIM_VERDICT_VALID;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

dp_status sim_alloc_trace(const dp_sim *s, dp_sim_workspace *w, dp_error *err) {
    if (w->tr_start) return DP_STATUS_OK;
    size_t n = (size_t)s->n + 1, h = 2 * (size_t)s->E + 2;
    w->tr_start = malloc(n * sizeof(double));
    w->tr_end = malloc(n * sizeof(double));
    w->tr_place = malloc(n * sizeof(int32_t));
    w->tr_stream = malloc(n * sizeof(int32_t));
    w->tr_trig = malloc(n * sizeof(int32_t));
    w->x_trig = malloc(h * sizeof(int32_t));
    w->x_rec = malloc(h * sizeof(int32_t));
    w->hop_x = malloc(h * sizeof(int32_t));
    w->hop_link = malloc(h * sizeof(int32_t));
    w->hop_start = malloc(h * sizeof(double));
    w->hop_end = malloc(h * sizeof(double));
    if (!w->tr_start || !w->tr_end || !w->tr_place || !w->tr_stream || !w->tr_trig || !w->x_trig || !w->x_rec ||
        !w->hop_x || !w->hop_link || !w->hop_start || !w->hop_end)
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory for the trace");
    return DP_STATUS_OK;
}

dp_status dp_sim_run_ws(const dp_sim *s, dp_sim_workspace *w, const int32_t *placement, const dp_sim_options *opt,
                        dp_sim_result *res, dp_error *err) {
    if (w->sim != s)
        return dp_error_set(err, DP_STATUS_INVALID, "simulator workspace made for another context (graph \"%s\")",
                            w->sim->g->name);
    dp_sim_options o = opt ? *opt : dp_sim_options_default();
    if (o.steps < 1) o.steps = 1;
    dp_status st = dp_sim_options_check(&o, err);
    if (st) return st;
    /* one pass: check indices, copy, count ops and parameters per device */
    int32_t *n_ops = w->n_ops;
    memset(w->n_ops, 0, sizeof w->n_ops);
    memset(w->param_bytes, 0, sizeof w->param_bytes);
    const dp_graph *g = s->g;
    for (int32_t i = 0; i < s->n; i++) {
        int32_t d = placement[i];
        if (d < 0 || d >= s->D)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "placement of op %d \"%s\" is device %d, but the device set has %d devices (0..%d)", i,
                                g->ops[i].name, d, s->D, s->D - 1);
        w->place[i] = (int8_t)d;
        w->dur[i] = s->cost[(size_t)i * s->n_classes + s->dev_class[d]]; /* sim_fill_durations without noise */
        n_ops[d]++;
        w->param_bytes[d] += s->param_bytes[i];
    }
    w->have_trace = 0;
    if (o.record_trace && (st = sim_alloc_trace(s, w, err))) return st;
    w->tracing = 0;

    int32_t steps = o.noise_sigma > 0 ? o.steps : 1;
    int32_t measured = o.steps - o.warmup;
    int32_t pick = 0;
    double mean = 0.0;
    if (steps > 1) {
        /* the papers' protocol: run steps, drop warm-up, take the median */
        double times[1024], sorted[1024];
        for (int32_t k = 0; k < steps; k++) {
            sim_fill_durations(s, w, o.noise_sigma, o.seed, k);
            times[k] = sim_step(s, w);
        }
        memcpy(sorted, times + o.warmup, (size_t)measured * sizeof(double));
        qsort(sorted, (size_t)measured, sizeof(double), cmp_double);
        double med = sorted[(measured - 1) / 2];
        for (int32_t k = 0; k < measured; k++) mean += sorted[k] / measured;
        for (pick = o.warmup; pick < steps && times[pick] != med; pick++)
            ;
    }
    /* the reported step (the only one, or the median one) is run last */
    w->tracing = o.record_trace;
    if (o.noise_sigma > 0) sim_fill_durations(s, w, o.noise_sigma, o.seed, pick);
    double makespan = sim_step(s, w);
    w->have_trace = o.record_trace;
    w->tracing = 0;
    if (o.record_trace) memcpy(w->tr_place, placement, (size_t)s->n * sizeof(int32_t));

    sim_fill_result(s, w, steps > 1 && o.mean ? mean : makespan, measured, res);
    return DP_STATUS_OK;
}

dp_status dp_sim_run(dp_sim *s, const int32_t *placement, const dp_sim_options *opt, dp_sim_result *res,
                     dp_error *err) {
    return dp_sim_run_ws(s, s->own, placement, opt, res, err);
}
