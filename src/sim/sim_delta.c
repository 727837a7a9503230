/* Moves from a base placement (include/dplace/sim.h, "moves from a base
 * placement"; docs/simulator.md). Two workspaces: one holds the base's run
 * (its result's link stats, its trace once the critical path is asked
 * for), the other the tries; each keeps its placement, op times,
 * parameters and op counts per device up to date by the moves alone, so a
 * try costs one step's simulation and no pass over the placement. Accepting
 * swaps the two. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

struct dp_sim_delta {
    const dp_sim *sim;
    dp_sim_workspace *ws[2];
    int base_i;          /* ws[base_i] holds the base's run           */
    int have_base;
    int base_traced;     /* ws[base_i] holds a traced run of the base */
    int32_t *base;       /* [n] the base placement                    */
    dp_sim_result base_res, try_res;
    /* the last try's moves, applied to the try workspace: op, its base
     * device, its device in the try (one entry per op) */
    int have_try;
    int32_t n_moved;
    int32_t *moved_op, *moved_old, *moved_new; /* [n]                */
    int32_t *mark;       /* [n] scratch: an op's entry in a move, or -1 */
    int32_t *tmark;      /* [T] scratch: a tensor's last visitor, or -1 */
};

void dp_sim_delta_free(dp_sim_delta *d) {
    if (!d) return;
    dp_sim_workspace_free(d->ws[0]);
    dp_sim_workspace_free(d->ws[1]);
    free(d->base);
    free(d->moved_op);
    free(d->moved_old);
    free(d->moved_new);
    free(d->mark);
    free(d->tmark);
    free(d);
}

dp_sim_delta *dp_sim_delta_init(const dp_sim *s, dp_error *err) {
    size_t n = (size_t)s->n + 1, T = (size_t)s->T + 1;
    dp_sim_delta *d = calloc(1, sizeof *d);
    if (!d || !(d->ws[0] = dp_sim_workspace_init(s, err)) || !(d->ws[1] = dp_sim_workspace_init(s, err)) ||
        !(d->base = malloc(n * sizeof(int32_t))) || !(d->moved_op = malloc(n * sizeof(int32_t))) ||
        !(d->moved_old = malloc(n * sizeof(int32_t))) || !(d->moved_new = malloc(n * sizeof(int32_t))) ||
        !(d->mark = malloc(n * sizeof(int32_t))) || !(d->tmark = malloc(T * sizeof(int32_t)))) {
        dp_sim_delta_free(d);
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory for a delta evaluator (graph \"%s\", %d ops)", s->g->name,
                     s->n);
        return NULL;
    }
    d->sim = s;
    for (size_t i = 0; i < n; i++) d->mark[i] = -1;
    for (size_t t = 0; t < T; t++) d->tmark[t] = -1;
    return d;
}

/* Sets w's placement, op times (no noise), parameters and op counts from
 * placement (checked by the caller). */
static void ws_set_placement(const dp_sim *s, dp_sim_workspace *w, const int32_t *placement) {
    memset(w->n_ops, 0, sizeof w->n_ops);
    memset(w->param_bytes, 0, sizeof w->param_bytes);
    for (int32_t i = 0; i < s->n; i++) {
        int32_t dev = placement[i];
        w->place[i] = (int8_t)dev;
        w->n_ops[dev]++;
        w->param_bytes[dev] += s->param_bytes[i];
    }
    sim_fill_durations(s, w, 0.0, 0, 0);
}

/* Moves op to device dev in w: its place, time, parameters and count. */
static void ws_move(const dp_sim *s, dp_sim_workspace *w, int32_t op, int32_t dev) {
    int32_t old = w->place[op];
    if (old == dev) return;
    w->n_ops[old]--;
    w->n_ops[dev]++;
    w->param_bytes[old] -= s->param_bytes[op];
    w->param_bytes[dev] += s->param_bytes[op];
    w->place[op] = (int8_t)dev;
    w->dur[op] = dp_sim_op_seconds(s, op, dev);
}

static dp_status check_move(const dp_sim *s, int32_t n_changed, const int32_t *ops, const int32_t *devs,
                            dp_error *err) {
    if (n_changed < 0 || (n_changed > 0 && (!ops || !devs)))
        return dp_error_set(err, DP_STATUS_INVALID, "a move of %d ops without its arrays", n_changed);
    for (int32_t k = 0; k < n_changed; k++) {
        if (ops[k] < 0 || ops[k] >= s->n)
            return dp_error_set(err, DP_STATUS_INVALID, "a move names op %d, but graph \"%s\" has %d ops", ops[k],
                                s->g->name, s->n);
        if (devs[k] < 0 || devs[k] >= s->D)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "a move puts op %d \"%s\" on device %d, but the device set has %d devices", ops[k],
                                s->g->ops[ops[k]].name, devs[k], s->D);
    }
    return DP_STATUS_OK;
}

dp_status dp_sim_delta_set_base(dp_sim_delta *d, const int32_t *placement, dp_sim_result *res, dp_error *err) {
    const dp_sim *s = d->sim;
    for (int32_t i = 0; i < s->n; i++)
        if (placement[i] < 0 || placement[i] >= s->D)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "placement of op %d \"%s\" is device %d, but the device set has %d devices (0..%d)", i,
                                s->g->ops[i].name, placement[i], s->D, s->D - 1);
    memcpy(d->base, placement, (size_t)s->n * sizeof(int32_t));
    ws_set_placement(s, d->ws[0], placement);
    ws_set_placement(s, d->ws[1], placement);
    d->base_i = 0;
    d->have_try = 0;
    d->n_moved = 0;
    dp_sim_workspace *bw = d->ws[0];
    bw->tracing = 0;
    bw->have_trace = 0;
    sim_fill_result(s, bw, sim_step(s, bw), 1, &d->base_res);
    d->have_base = 1;
    d->base_traced = 0;
    if (res) *res = d->base_res;
    return DP_STATUS_OK;
}

const int32_t *dp_sim_delta_base(const dp_sim_delta *d) { return d->have_base ? d->base : NULL; }

const dp_sim_result *dp_sim_delta_base_result(const dp_sim_delta *d) { return d->have_base ? &d->base_res : NULL; }

dp_status dp_sim_delta_try(dp_sim_delta *d, int32_t n_changed, const int32_t *ops, const int32_t *devs,
                           dp_sim_result *res, dp_error *err) {
    const dp_sim *s = d->sim;
    if (!d->have_base) return dp_error_set(err, DP_STATUS_INVALID, "a move tried before the base was set");
    dp_status st = check_move(s, n_changed, ops, devs, err);
    if (st) return st;
    dp_sim_workspace *tw = d->ws[1 - d->base_i];
    /* back to the base, then the move, one entry per op (its last device) */
    for (int32_t k = 0; k < d->n_moved; k++) ws_move(s, tw, d->moved_op[k], d->moved_old[k]);
    d->n_moved = 0;
    for (int32_t k = 0; k < n_changed; k++) {
        int32_t op = ops[k];
        if (d->mark[op] < 0) {
            d->mark[op] = d->n_moved;
            d->moved_op[d->n_moved] = op;
            d->moved_old[d->n_moved++] = d->base[op];
        }
        d->moved_new[d->mark[op]] = devs[k];
    }
    for (int32_t k = 0; k < d->n_moved; k++) {
        d->mark[d->moved_op[k]] = -1;
        ws_move(s, tw, d->moved_op[k], d->moved_new[k]);
    }
    tw->tracing = 0;
    tw->have_trace = 0;
    sim_fill_result(s, tw, sim_step(s, tw), 1, &d->try_res);
    d->have_try = 1;
    *res = d->try_res;
    return DP_STATUS_OK;
}

dp_status dp_sim_delta_accept(dp_sim_delta *d, dp_error *err) {
    if (!d->have_try) return dp_error_set(err, DP_STATUS_INVALID, "no move tried since the base was last set");
    const dp_sim *s = d->sim;
    for (int32_t k = 0; k < d->n_moved; k++) d->base[d->moved_op[k]] = d->moved_new[k];
    d->base_i = 1 - d->base_i;
    d->base_res = d->try_res; /* its link stats: the new base workspace's */
    dp_sim_workspace *tw = d->ws[1 - d->base_i]; /* the old base's: move it too */
    for (int32_t k = 0; k < d->n_moved; k++) ws_move(s, tw, d->moved_op[k], d->moved_new[k]);
    d->n_moved = 0;
    d->have_try = 0;
    d->base_traced = 0;
    return DP_STATUS_OK;
}

int dp_sim_delta_surely_oom(dp_sim_delta *d, int32_t n_changed, const int32_t *ops, const int32_t *devs) {
    const dp_sim *s = d->sim;
    if (!d->have_base || check_move(s, n_changed, ops, devs, NULL)) return 0;
    /* each op's last entry in the move */
    for (int32_t k = 0; k < n_changed; k++) d->mark[ops[k]] = k;
    uint64_t params[DP_MAX_DEVICES];
    for (int32_t dev = 0; dev < s->D; dev++) params[dev] = d->base_res.device[dev].param_bytes;
    for (int32_t k = 0; k < n_changed; k++) {
        int32_t op = ops[k];
        if (d->mark[op] != k) continue;
        params[d->base[op]] -= s->param_bytes[op];
        params[devs[k]] += s->param_bytes[op];
    }
    int oom = 0;
    for (int32_t dev = 0; dev < s->D && !oom; dev++) oom = params[dev] > s->ds->devices[dev].memory_bytes;
    /* while a moved op runs, its device holds its parameters (resident), the
     * op's outputs and temporary bytes and a copy of each input: its
     * producer's if made there (none for a variable's reference), else a
     * received one */
    for (int32_t k = 0; k < n_changed && !oom; k++) {
        int32_t op = ops[k], dev = devs[k];
        if (d->mark[op] != k || dev == d->base[op]) continue;
        uint64_t held = params[dev] + s->ops[op].start_bytes;
        for (int32_t e = s->ops[op].in_at; e < s->ops[op + 1].in_at; e++) {
            int32_t t = s->in_tensor[e];
            if (d->tmark[t] == op) continue; /* an input read twice is held once */
            d->tmark[t] = op;
            const sim_tensor *tn = &s->tensors[t];
            int32_t p = (int32_t)tn->op, pdev = d->mark[p] >= 0 ? devs[d->mark[p]] : d->base[p];
            held += pdev == dev ? sim_tensor_local_bytes(tn) : tn->bytes;
        }
        for (int32_t e = s->ops[op].in_at; e < s->ops[op + 1].in_at; e++) d->tmark[s->in_tensor[e]] = -1;
        oom = held > s->ds->devices[dev].memory_bytes;
    }
    for (int32_t k = 0; k < n_changed; k++) d->mark[ops[k]] = -1;
    return oom;
}

/* ---- the critical path ------------------------------------------------------------------ */

/* Walks the base's trace back from the op that ended last; step i from the
 * end goes to steps[len - 1 - i] when that is below cap (len known), else
 * is only counted. Returns the path's length. */
static int32_t walk_path(const dp_sim *s, const dp_sim_workspace *w, const int32_t *place, dp_sim_path_step *steps,
                         int32_t cap, int32_t len) {
    int32_t count = 0, op = w->tr_last_op, h = -1;
    int64_t guard = (int64_t)s->n + 2 * (int64_t)w->n_x + 1;
    while (op >= 0 || h >= 0) {
        assert(count < guard); /* every step goes to an event handled before */
        (void)guard;
        dp_sim_path_step st;
        int32_t trig;
        if (op >= 0) {
            st = (dp_sim_path_step){op, place[op], -1, -1, -1, w->tr_start[op], w->tr_end[op]};
            trig = w->tr_trig[op];
        } else {
            int32_t x = w->hop_x[h], l = w->hop_link[h];
            const sim_xfer *xf = &w->x[x];
            int k = xf->link[0] == l ? 0 : 1;
            st = (dp_sim_path_step){-1, xf->dst, l, (int32_t)s->tensors[xf->tensor].op, xf->tensor,
                                    w->hop_start[h], w->hop_end[h]};
            trig = w->x_trig[2 * (int64_t)x + k];
            if (trig == SIM_TRIG_HOP0) trig = -(w->x_rec[2 * (int64_t)x] + 1);
        }
        int32_t at = len - 1 - count++;
        if (len > 0 && at >= 0 && at < cap) steps[at] = st;
        op = h = -1;
        if (trig == SIM_TRIG_NONE) break;
        if (trig >= 0) op = trig;
        else h = -trig - 1;
    }
    return count;
}

dp_status dp_sim_delta_critical_path(dp_sim_delta *d, dp_sim_path_step *steps, int32_t cap, int32_t *n,
                                     dp_error *err) {
    const dp_sim *s = d->sim;
    *n = 0;
    if (!d->have_base) return dp_error_set(err, DP_STATUS_INVALID, "a critical path asked before the base was set");
    dp_sim_workspace *bw = d->ws[d->base_i];
    if (!d->base_traced) {
        dp_status st = sim_alloc_trace(s, bw, err);
        if (st) return st;
        bw->tracing = 1;
        double makespan = sim_step(s, bw); /* the same run as the base's, traced */
        bw->tracing = 0;
        bw->have_trace = 1;
        assert(makespan == d->base_res.step_time_s);
        (void)makespan;
        memcpy(bw->tr_place, d->base, (size_t)s->n * sizeof(int32_t));
        d->base_traced = 1;
    }
    int32_t len = walk_path(s, bw, d->base, steps, 0, 0);
    if (cap > 0) walk_path(s, bw, d->base, steps, cap, len);
    *n = len;
    return DP_STATUS_OK;
}

dp_status dp_sim_delta_critical_path_grow(dp_sim_delta *d, dp_sim_path_step **steps, int32_t *cap, int32_t *n,
                                          dp_error *err) {
    dp_status st = dp_sim_delta_critical_path(d, *steps, *cap, n, err);
    if (st || *n <= *cap) return st;
    dp_sim_path_step *p = realloc(*steps, sizeof *p * (size_t)*n);
    if (!p) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory for a critical path of %d steps", (int)*n);
    *steps = p, *cap = *n;
    return dp_sim_delta_critical_path(d, *steps, *cap, n, err);
}

/* ---- judging moves ------------------------------------------------------------------------ */

double dp_sim_result_excess(const dp_sim_result *r) {
    double over = 0;
    for (int32_t d = 0; d < r->n_devices; d++) {
        const dp_sim_device_stats *x = &r->device[d];
        if (x->memory_bytes > 0 && x->peak_bytes > x->memory_bytes)
            over = fmax(over, (double)(x->peak_bytes - x->memory_bytes) / (double)x->memory_bytes);
    }
    return over;
}

double dp_sim_score_parts(double step_time_s, int valid, int oom, double excess) {
    if (valid) return step_time_s;
    if (!oom) return INFINITY;
    return step_time_s * (4.0 + excess);
}

double dp_sim_score(const dp_sim_result *r) {
    int oom = r->verdict == DP_SIM_VERDICT_OOM;
    return dp_sim_score_parts(r->step_time_s, r->valid, oom, oom && !r->valid ? dp_sim_result_excess(r) : 0.0);
}

/* Whether path step p counts for dp_sim_path_pick. */
static int path_wanted(const dp_sim_path_step *p, int hops, int32_t dev) {
    return hops ? p->op < 0 && p->producer >= 0 : p->op >= 0 && (dev < 0 || p->device == dev);
}

int32_t dp_sim_path_pick(const dp_sim_path_step *path, int32_t n, int hops, int32_t dev, dp_rng *rng) {
    double total = 0;
    for (int32_t i = 0; i < n; i++)
        if (path_wanted(&path[i], hops, dev)) total += path[i].end_s - path[i].start_s + 1e-12;
    if (!(total > 0)) return -1;
    double x = dp_rng_uniform(rng) * total;
    int32_t last = -1;
    for (int32_t i = 0; i < n; i++) {
        if (!path_wanted(&path[i], hops, dev)) continue;
        last = i;
        x -= path[i].end_s - path[i].start_s + 1e-12;
        if (x < 0) return i;
    }
    return last;
}

void dp_sim_path_hop_move(const dp_sim_path_step *path, int32_t n, int32_t hop, const int32_t *place, dp_rng *rng,
                          int32_t *op, int32_t *dev) {
    const dp_sim_path_step *h = &path[hop];
    int32_t consumer = -1;
    for (int32_t i = hop + 1; i < n && consumer < 0; i++)
        if (path[i].op >= 0) consumer = path[i].op;
    if (consumer >= 0 && dp_rng_uniform(rng) < 0.5) *op = consumer, *dev = place[h->producer];
    else *op = h->producer, *dev = h->device;
}
