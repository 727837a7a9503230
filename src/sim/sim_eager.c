/* The eager executor: one step as PyTorch's eager mode runs it
 * (docs/simulator.md, "Executors"), beside sim.c's TensorFlow executor.
 *
 * One host thread walks the ops in program order. Issuing an op costs the
 * host its dispatch time (the host CPU's dispatch_s; nothing for the
 * parameters, buffers and placeholders, which are not ops at run time, nor
 * for a fused op, which its module's one library call issues).
 * An op of the backward pass (a gradient scope, as the exporter names it)
 * that runs on a CPU costs the host no dispatch: the autograd engine calls
 * its kernel from C++, without Python, and the CPU's launch overhead prices
 * that call; on a GPU it keeps its dispatch, which the kernel's launch
 * dominates.
 * A CPU op issued after GPU work, with no CPU op between, costs the host
 * its switch time besides (the host's switch_s: what turning from
 * feeding a GPU to computing on the CPU was measured to cost).
 * A GPU op then queues on its device's one stream: it starts when the host
 * has issued it, the stream's earlier work is done and its inputs are on
 * the device. A CPU op runs on the host thread itself, which waits for its
 * inputs and is busy until it ends. A tensor read on another device is
 * copied when the host reaches its first reader there (the module
 * boundary's .to()): the copy costs a dispatch, waits for the source
 * stream's earlier work (it is queued on that stream, which it holds until
 * the data has left) and for each link of its route in turn (one copy per
 * link at a time, in the order issued), and a copy to or from the CPU
 * blocks the host until it ends. The step ends when the host and every
 * stream and link are done.
 *
 * Memory follows the program order, as PyTorch's caching allocator reuses
 * a block once the host has dropped it: an op's outputs and temporaries
 * are allocated when it is issued, the temporaries freed after it, a
 * tensor when its last reader on the device has been issued; a copy is
 * allocated on its destination when it is issued, and counts as a reader
 * of the source's tensor. The peaks so depend on the placement and the
 * order only, not on the times.
 *
 * Since every wait is a maximum of earlier ends and each op and copy
 * takes the time the TensorFlow executor gives it, the lower bounds
 * (include/dplace/run.h) hold under this executor too. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/cost.h"
#include "sim/sim_internal.h"

/* Whether op i is something the host issues at run time: not a parameter,
 * a buffer or a placeholder, which exist before the step. */
static int issued_at_run_time(const dp_graph *g, int32_t i) {
    const char *type = dp_graph_str(g, g->ops[i].type);
    return !dp_cost_type_is_variable(type) && strcmp(type, "Placeholder") != 0;
}

/* Whether op i belongs to the backward pass: its scope is a gradient
 * scope ("gradients/X", as scripts/dplace-export-torch and TensorFlow name
 * them). */
static int in_backward_pass(const dp_graph *g, int32_t i) {
    return g->ops[i].scope >= 0 && dp_graph_is_gradient_scope(dp_graph_str(g, g->ops[i].scope));
}

dp_status sim_eager_init(dp_sim *s, dp_error *err) {
    const dp_graph *g = s->g;
    const dp_devices *ds = s->ds;
    s->order = malloc(((size_t)s->n + 1) * sizeof *s->order);
    s->issue_s = malloc(((size_t)s->n + 1) * sizeof *s->issue_s);
    s->runs = malloc((size_t)s->n + 1);
    if (!s->order || !s->issue_s || !s->runs)
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory for the eager executor (graph \"%s\")", g->name);
    /* the host: the set's first CPU; without one, the default cost */
    double dispatch = DP_DEVICES_DISPATCH_S, turn = DP_DEVICES_SWITCH_S;
    for (int32_t d = ds->n_devices - 1; d >= 0; d--) {
        s->is_cpu[d] = ds->devices[d].kind == DP_DEVKIND_CPU;
        if (s->is_cpu[d]) dispatch = ds->devices[d].dispatch_s, turn = ds->devices[d].switch_s;
    }
    s->copy_issue_s = dispatch;
    s->switch_s = turn;
    int topological = 1;
    for (int32_t i = 0; i < s->n; i++) {
        s->runs[i] = (int8_t)(issued_at_run_time(g, i) ? 1 + in_backward_pass(g, i) : 0);
        s->issue_s[i] = s->runs[i] && !g->ops[i].fused ? dispatch : 0.0;
        for (int32_t k = 0; k < g->ops[i].n_inputs; k++)
            if (g->inputs[g->ops[i].inputs_at + k].op >= i) topological = 0;
    }
    for (int32_t k = 0; k < s->n; k++) s->order[k] = topological ? k : g->topo[k];
    return DP_STATUS_OK;
}

dp_status sim_eager_workspace_init(const dp_sim *s, dp_sim_workspace *w, dp_error *err) {
    size_t td = (size_t)s->T * (size_t)s->D + 1, L = (size_t)s->L + 1;
    w->avail = malloc(td * sizeof *w->avail);
    w->avail_trig = malloc(td * sizeof *w->avail_trig);
    w->link_free = malloc(L * sizeof *w->link_free);
    w->link_trig = malloc(L * sizeof *w->link_trig);
    if (!w->avail || !w->avail_trig || !w->link_free || !w->link_trig)
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory for the eager executor (graph \"%s\")",
                            s->g->name);
    return DP_STATUS_OK;
}

/* The run's clocks: the host thread's and each device's stream, each with
 * what last set it (as tr_trig: an op, -(hop record + 1), SIM_TRIG_NONE). */
typedef struct eager_clock {
    double host, stream[DP_MAX_DEVICES], end;
    int32_t host_trig, stream_trig[DP_MAX_DEVICES], last_issued;
    int fed_gpu; /* the host issued a GPU op since its last CPU op */
} eager_clock;

/* t = max(t, at), and trig follows the larger; on a tie the later
 * asked, so that a path names the data over the stream over the host. */
static inline void wait_for(double *t, int32_t *trig, double at, int32_t at_trig) {
    if (at >= *t) *t = at, *trig = at_trig;
}

/* Copies tensor tn (index t) from its producer's device to d, issued by
 * the host now; sets when it is there. */
static void eager_copy(const dp_sim *s, dp_sim_workspace *w, eager_clock *c, int32_t t, int32_t d) {
    const sim_tensor *tn = &s->tensors[t];
    int32_t src = w->ts[t].dev;
    size_t pair = (size_t)src * s->D + d;
    int32_t x = w->n_x++;
    sim_xfer *xf = &w->x[x];
    xf->tensor = t, xf->dst = (int16_t)d, xf->hop = 0, xf->len = s->ds->route_len[pair];
    xf->link[0] = (int16_t)s->ds->route[pair * 2], xf->link[1] = (int16_t)s->ds->route[pair * 2 + 1];
    w->transfer_bytes += tn->bytes;
    c->host += s->copy_issue_s;
    /* the first hop waits for the source: the host, the source stream's
     * earlier work (a CPU source's tensor is there once the host is) */
    double start = c->host;
    int32_t trig = c->host_trig;
    if (!s->is_cpu[src]) wait_for(&start, &trig, c->stream[src], c->stream_trig[src]);
    wait_for(&start, &trig, w->avail[(int64_t)t * s->D + src], w->avail_trig[(int64_t)t * s->D + src]);
    double bytes = sim_tensor_bytes_d(tn), end = 0, end0 = 0, start1 = 0;
    for (int k = 0; k < xf->len; k++) {
        int32_t l = xf->link[k];
        double lat = s->link_lat[l];
        if (k == 1) { /* through the host: pipelined or stored and forwarded */
            start = s->pipelined ? start1 : end0;
            trig = -(w->n_hops - 1 + 1); /* the first hop's record */
        }
        wait_for(&start, &trig, w->link_free[l], w->link_trig[l]);
        end = start + lat + bytes * s->link_inv_bw[l];
        if (k == 1 && s->pipelined && end0 + lat > end) end = end0 + lat;
        if (k == 0) end0 = end, start1 = start + lat;
        int32_t h = w->n_hops++;
        w->link_free[l] = end, w->link_trig[l] = -(h + 1);
        dp_sim_link_stats *ls = &w->link_stats[l];
        ls->busy_s += end - start, ls->bytes += tn->bytes, ls->n_transfers++;
        if (w->tracing) {
            w->hop_x[h] = x, w->hop_link[h] = l, w->hop_start[h] = start, w->hop_end[h] = end;
            w->x_rec[2 * (int64_t)x + k] = h, w->x_trig[2 * (int64_t)x + k] = trig;
        }
        trig = -(h + 1);
    }
    xf->hop = xf->len;
    if (!s->is_cpu[src]) wait_for(&c->stream[src], &c->stream_trig[src], end0, -(w->n_hops - xf->len + 1));
    if (s->is_cpu[src] || s->is_cpu[d]) wait_for(&c->host, &c->host_trig, end, trig); /* synchronous */
    if (end > c->end) c->end = end;
    w->avail[(int64_t)t * s->D + d] = end;
    w->avail_trig[(int64_t)t * s->D + d] = trig;
    sim_mem_alloc(w, d, tn->bytes);
    sim_tstate *st = &w->ts[t]; /* the copy was a use of the source's tensor */
    if (--st->refs == 0) sim_mem_free(w, src, sim_tensor_local_bytes(tn));
}

/* Tensor t was produced on d, ending at end: counts its readers there and
 * on each other device (whose copy is not made yet). */
static void eager_produced(const dp_sim *s, dp_sim_workspace *w, int32_t t, int32_t d, double end, int32_t op) {
    const sim_tensor *tn = &s->tensors[t];
    int32_t nlocal = 0, ndev = 0;
    for (int32_t e = tn->cons_at; e < tn[1].cons_at; e++) {
        int32_t pc = w->place[s->cons[e]];
        if (pc == d) nlocal++;
        else if (w->cnt[pc]++ == 0) w->touched[ndev++] = pc;
    }
    for (int32_t k = 0; k < ndev; k++) {
        int32_t dst = w->touched[k];
        w->remote_refs[(int64_t)t * s->D + dst] = w->cnt[dst];
        w->avail[(int64_t)t * s->D + dst] = -1;
        w->cnt[dst] = 0;
    }
    w->ts[t].dev = d;
    w->ts[t].refs = nlocal + ndev;
    w->avail[(int64_t)t * s->D + d] = end;
    w->avail_trig[(int64_t)t * s->D + d] = op;
    if (nlocal + ndev == 0) sim_mem_free(w, d, sim_tensor_local_bytes(tn));
}

/* Issues op i on device d: its copies, its dispatch, its run. */
static void eager_op(const dp_sim *s, dp_sim_workspace *w, eager_clock *c, int32_t i) {
    const sim_op *o = &s->ops[i];
    int32_t d = w->place[i];
    for (int32_t e = o->in_at; e < o[1].in_at; e++) {
        int32_t t = s->in_tensor[e];
        if (w->ts[t].dev != d && w->avail[(int64_t)t * s->D + d] < 0) eager_copy(s, w, c, t, d);
    }
    double issue = s->runs[i] == SIM_RUNS_BACKWARD && s->is_cpu[d] ? 0.0 : s->issue_s[i];
    if (s->runs[i] && s->is_cpu[d] && c->fed_gpu) issue += s->switch_s, c->fed_gpu = 0;
    else if (s->runs[i] && !s->is_cpu[d]) c->fed_gpu = 1;
    if (issue > 0) {
        c->host += issue;
        c->host_trig = c->last_issued >= 0 ? c->last_issued : c->host_trig;
    }
    double start = c->host;
    int32_t trig = c->host_trig;
    if (!s->is_cpu[d]) wait_for(&start, &trig, c->stream[d], c->stream_trig[d]);
    for (int32_t e = o->in_at; e < o[1].in_at; e++) {
        int64_t k = (int64_t)s->in_tensor[e] * s->D + d;
        wait_for(&start, &trig, w->avail[k], w->avail_trig[k]);
    }
    double end = start + w->dur[i];
    if (s->is_cpu[d]) c->host = end, c->host_trig = i;
    else c->stream[d] = end, c->stream_trig[d] = i;
    if (end >= c->end) c->end = end, w->tr_last_op = i;
    c->last_issued = i;
    w->busy[d] += w->dur[i];
    if (w->tracing) w->tr_start[i] = start, w->tr_end[i] = end, w->tr_stream[i] = 0, w->tr_trig[i] = trig;
    /* memory: outputs and temporaries now, then the temporaries and the
     * inputs whose last reader on d this was */
    sim_mem_alloc(w, d, o->start_bytes);
    uint64_t freed = o->temp_bytes;
    for (int32_t e = o->in_at; e < o[1].in_at; e++) {
        int32_t t = s->in_tensor[e];
        const sim_tensor *tn = &s->tensors[t];
        int local = w->ts[t].dev == d;
        int32_t *refs = local ? &w->ts[t].refs : &w->remote_refs[(int64_t)t * s->D + d];
        if (--*refs == 0) freed += local ? sim_tensor_local_bytes(tn) : tn->bytes;
    }
    sim_mem_free(w, d, freed);
    for (int32_t t = o->out_at; t < o[1].out_at; t++) eager_produced(s, w, t, d, end, i);
}

double sim_eager_step(const dp_sim *s, dp_sim_workspace *w) {
    eager_clock c;
    memset(&c, 0, sizeof c);
    c.host_trig = SIM_TRIG_NONE, c.last_issued = -1;
    for (int32_t d = 0; d < s->D; d++) {
        c.stream_trig[d] = SIM_TRIG_NONE;
        w->mem_cur[d] = (int64_t)w->param_bytes[d];
        w->mem_peak[d] = w->mem_cur[d];
        w->busy[d] = 0;
        w->cnt[d] = 0;
    }
    for (int32_t l = 0; l < s->L; l++) {
        w->link_free[l] = 0, w->link_trig[l] = SIM_TRIG_NONE;
        memset(&w->link_stats[l], 0, sizeof w->link_stats[l]);
    }
    w->n_x = 0, w->n_hops = 0, w->transfer_bytes = 0, w->tr_last_op = -1;
    for (int32_t k = 0; k < s->n; k++) eager_op(s, w, &c, s->order[k]);
    w->n_done = s->n;
    double end = c.end > c.host ? c.end : c.host;
    w->now = end;
    return end;
}
