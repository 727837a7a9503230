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

const char *dp_sim_verdict_name(dp_sim_verdict v) {
    return (unsigned)v < DP_SIM_VERDICT_COUNT ? verdict_names[v] : "?";
}

dp_sim_options dp_sim_options_default(void) {
    dp_sim_options o;
    memset(&o, 0, sizeof o);
    o.steps = 1;
    return o;
}

/* ---- event heap (binary, ties by insertion counter) ------------------------------ */

static int ev_less(const sim_event *a, const sim_event *b) { return a->t < b->t || (a->t == b->t && a->seq < b->seq); }

static void heap_push(dp_sim *s, double t, int32_t id) {
    assert(s->heap_n < s->heap_cap);
    int32_t i = s->heap_n++;
    sim_event e = {t, s->seq++, id};
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (!ev_less(&e, &s->heap[p])) break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = e;
}

static sim_event heap_pop(dp_sim *s) {
    sim_event top = s->heap[0];
    sim_event last = s->heap[--s->heap_n];
    int32_t i = 0, n = s->heap_n;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && ev_less(&s->heap[c + 1], &s->heap[c])) c++;
        if (!ev_less(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n) s->heap[i] = last;
    return top;
}

/* ---- context ----------------------------------------------------------------------- */

void dp_sim_free(dp_sim *s) {
    if (!s) return;
    free(s->cost);
    free(s->tensor_bytes);
    free(s->tensor_op);
    free(s->coloc);
    free(s->coloc_dev);
    free(s->coloc_op);
    free(s->dur);
    free(s->pending);
    free(s->ready_next);
    free(s->op_stream);
    free(s->local_refs);
    free(s->remote_refs);
    free(s->x_tensor);
    free(s->x_src);
    free(s->x_dst);
    free(s->x_next);
    free(s->x_hop);
    free(s->link_head);
    free(s->link_tail);
    free(s->link_busy);
    free(s->link_stats);
    free(s->heap);
    free(s->tr_start);
    free(s->tr_end);
    free(s->tr_place);
    free(s->hop_x);
    free(s->hop_link);
    free(s->hop_start);
    free(s->hop_end);
    free(s);
}

static int same_cost_params(const dp_device *a, const dp_device *b) {
    return a->kind == b->kind && strcmp(a->model, b->model) == 0 && a->peak_flops == b->peak_flops &&
           a->mem_bandwidth == b->mem_bandwidth && a->launch_overhead_s == b->launch_overhead_s;
}

dp_sim *dp_sim_init(const dp_graph *g, const dp_devices *ds, dp_error *err) {
    if (!g->finalized) {
        dp_error_set(err, DP_STATUS_INVALID, "graph \"%s\" is not finalized", g->name);
        return NULL;
    }
    /* every constraint must be satisfiable by some device of the set */
    for (int32_t i = 0; i < g->n_ops; i++) {
        if (g->ops[i].device.kind == DP_DEVCON_NONE) continue;
        int32_t d = 0;
        while (d < ds->n_devices && !dp_placement_allowed(g, ds, i, d)) d++;
        if (d == ds->n_devices) {
            char buf[32];
            dp_devcon_format(g->ops[i].device, buf, sizeof buf);
            dp_error_set(err, DP_STATUS_INVALID,
                         "device set \"%s\" cannot run graph \"%s\": op %d \"%s\" must run on %s, which the set lacks",
                         ds->name, g->name, i, g->ops[i].name, buf);
            return NULL;
        }
    }
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

    for (int32_t d = 0; d < D; d++) {
        int32_t c = 0;
        while (c < d && !same_cost_params(&ds->devices[c], &ds->devices[d])) c++;
        s->dev_class[d] = c < d ? s->dev_class[c] : s->n_classes++;
    }
    s->cost = malloc((size_t)n * s->n_classes * sizeof(double));
    s->tensor_bytes = malloc(((size_t)T + 1) * sizeof(uint64_t));
    s->tensor_op = malloc(((size_t)T + 1) * sizeof(int32_t));
    s->coloc = malloc((size_t)n * sizeof(int32_t));
    s->dur = malloc((size_t)n * sizeof(double));
    s->pending = malloc((size_t)n * sizeof(int32_t));
    s->ready_next = malloc((size_t)n * sizeof(int32_t));
    s->op_stream = malloc((size_t)n * sizeof(int32_t));
    s->local_refs = malloc(((size_t)T + 1) * sizeof(int32_t));
    s->remote_refs = malloc(((size_t)T + 1) * D * sizeof(int32_t));
    s->x_tensor = malloc(((size_t)E + 1) * sizeof(int32_t));
    s->x_src = malloc(((size_t)E + 1) * sizeof(int32_t));
    s->x_dst = malloc(((size_t)E + 1) * sizeof(int32_t));
    s->x_next = malloc(((size_t)E + 1) * sizeof(int32_t));
    s->x_hop = malloc(((size_t)E + 1));
    s->link_head = malloc(((size_t)L + 1) * sizeof(int32_t));
    s->link_tail = malloc(((size_t)L + 1) * sizeof(int32_t));
    s->link_busy = malloc(((size_t)L + 1));
    s->link_stats = calloc((size_t)L + 1, sizeof(dp_sim_link_stats));
    s->heap_cap = L + 1;
    for (int32_t d = 0; d < D; d++) s->heap_cap += ds->devices[d].streams;
    s->heap = malloc((size_t)s->heap_cap * sizeof(sim_event));
    if (!s->cost || !s->tensor_bytes || !s->tensor_op || !s->coloc || !s->dur || !s->pending || !s->ready_next ||
        !s->op_stream || !s->local_refs || !s->remote_refs || !s->x_tensor || !s->x_src || !s->x_dst || !s->x_next ||
        !s->x_hop || !s->link_head || !s->link_tail || !s->link_busy || !s->link_stats || !s->heap)
        goto oom;

    /* each class's costs come from its first device */
    for (int32_t c = 0; c < s->n_classes; c++) {
        int32_t d = 0;
        while (s->dev_class[d] != c) d++;
        for (int32_t i = 0; i < n; i++) s->cost[(size_t)i * s->n_classes + c] = dp_cost_op_seconds(g, i, &ds->devices[d]);
    }
    for (int32_t i = 0; i < n; i++)
        for (int64_t t = g->tensor_at[i]; t < g->tensor_at[i + 1]; t++) {
            s->tensor_bytes[t] = g->outputs[t].bytes;
            s->tensor_op[t] = i;
        }

    /* dense colocation ids in order of first appearance */
    int32_t ns = dp_graph_n_strings(g);
    int32_t *map = malloc(((size_t)ns + 1) * sizeof(int32_t));
    if (!map) goto oom;
    for (int32_t k = 0; k < ns; k++) map[k] = -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->ops[i].colocate;
        if (c < 0) {
            s->coloc[i] = -1;
            continue;
        }
        if (map[c] < 0) map[c] = s->n_coloc++;
        s->coloc[i] = map[c];
    }
    free(map);
    s->coloc_dev = malloc(((size_t)s->n_coloc + 1) * sizeof(int32_t));
    s->coloc_op = malloc(((size_t)s->n_coloc + 1) * sizeof(int32_t));
    if (!s->coloc_dev || !s->coloc_op) goto oom;
    return s;
oom:
    dp_sim_free(s);
    dp_error_set(err, DP_STATUS_NOMEM, "out of memory building the simulator for graph \"%s\"", g->name);
    return NULL;
}

double dp_sim_op_seconds(const dp_sim *s, int32_t op, int32_t d) {
    return s->cost[(size_t)op * s->n_classes + s->dev_class[d]];
}

/* ---- the event loop -------------------------------------------------------------------- */

static void mem_alloc(dp_sim *s, int32_t d, uint64_t bytes) {
    s->mem_cur[d] += (int64_t)bytes;
    if (s->mem_cur[d] > s->mem_peak[d]) s->mem_peak[d] = s->mem_cur[d];
}

static void mem_free(dp_sim *s, int32_t d, uint64_t bytes) {
    s->mem_cur[d] -= (int64_t)bytes;
    assert(s->mem_cur[d] >= 0);
}

static void op_start(dp_sim *s, int32_t op, int32_t d) {
    uint64_t fs = s->free_streams[d];
    assert(fs);
    int32_t stream = __builtin_ctzll(fs);
    s->free_streams[d] = fs & (fs - 1);
    s->op_stream[op] = stream;
    const dp_graph *g = s->g;
    uint64_t b = g->ops[op].temp_bytes;
    for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++) b += s->tensor_bytes[t];
    mem_alloc(s, d, b);
    if (s->tracing) s->tr_start[op] = s->now;
    heap_push(s, s->now + s->dur[op], op);
}

/* op's inputs are all on its device: run it now or queue it (FIFO). */
static void op_ready(dp_sim *s, int32_t op) {
    int32_t d = s->place[op];
    if (s->free_streams[d] && s->ready_head[d] < 0) {
        op_start(s, op, d);
        return;
    }
    s->ready_next[op] = -1;
    if (s->ready_head[d] < 0) s->ready_head[d] = op;
    else s->ready_next[s->ready_tail[d]] = op;
    s->ready_tail[d] = op;
}

static int32_t hop_link(const dp_sim *s, int32_t x) {
    return s->ds->route[((size_t)s->x_src[x] * s->D + s->x_dst[x]) * 2 + s->x_hop[x]];
}

static int32_t route_len(const dp_sim *s, int32_t x) { return s->ds->route_len[s->x_src[x] * s->D + s->x_dst[x]]; }

static void hop_start(dp_sim *s, int32_t x, int32_t l) {
    const dp_link *lk = &s->ds->links[l];
    uint64_t bytes = s->tensor_bytes[s->x_tensor[x]];
    s->link_busy[l] = 1;
    /* the copy on the receiving end of this hop exists from now on */
    mem_alloc(s, lk->to, bytes);
    double dt = lk->latency_s + (double)bytes / lk->bandwidth;
    dp_sim_link_stats *ls = &s->link_stats[l];
    ls->busy_s += dt;
    ls->bytes += bytes;
    ls->n_transfers++;
    if (s->tracing) {
        int32_t h = s->n_hops++;
        s->hop_x[h] = x;
        s->hop_link[h] = l;
        s->hop_start[h] = s->now;
        s->hop_end[h] = s->now + dt;
    }
    heap_push(s, s->now + dt, -x - 1);
}

static void hop_enqueue(dp_sim *s, int32_t x) {
    int32_t l = hop_link(s, x);
    if (!s->link_busy[l]) {
        hop_start(s, x, l);
        return;
    }
    s->x_next[x] = -1;
    if (s->link_head[l] < 0) s->link_head[l] = x;
    else s->x_next[s->link_tail[l]] = x;
    s->link_tail[l] = x;
}

/* Tensor t was produced on device d: count its users, send it once to each
 * other device that uses it, and wake the local consumers. */
static void tensor_produced(dp_sim *s, int64_t t, int32_t d) {
    const dp_graph *g = s->g;
    const int32_t *place = s->place;
    int64_t e0 = g->consumers_at[t], e1 = g->consumers_at[t + 1];
    int32_t nlocal = 0, ndev = 0;
    for (int64_t e = e0; e < e1; e++) {
        int32_t pd = place[g->consumers[e]];
        if (pd == d) nlocal++;
        else if (s->cnt[pd]++ == 0) s->touched[ndev++] = pd;
    }
    s->local_refs[t] = nlocal + ndev;
    if (s->local_refs[t] == 0) mem_free(s, d, s->tensor_bytes[t]);
    for (int32_t k = 0; k < ndev; k++) {
        int32_t dst = s->touched[k];
        s->remote_refs[t * s->D + dst] = s->cnt[dst];
        s->cnt[dst] = 0;
        int32_t x = s->n_x++;
        s->x_tensor[x] = (int32_t)t;
        s->x_src[x] = d;
        s->x_dst[x] = dst;
        s->x_hop[x] = 0;
        s->transfer_bytes += s->tensor_bytes[t];
        hop_enqueue(s, x);
    }
    for (int64_t e = e0; e < e1; e++) {
        int32_t c = g->consumers[e];
        if (place[c] == d && --s->pending[c] == 0) op_ready(s, c);
    }
}

static void op_finish(dp_sim *s, int32_t op) {
    const dp_graph *g = s->g;
    const dp_op *o = &g->ops[op];
    int32_t d = s->place[op];
    s->busy[d] += s->dur[op];
    if (s->tracing) s->tr_end[op] = s->now;
    mem_free(s, d, o->temp_bytes);
    s->free_streams[d] |= 1ULL << s->op_stream[op];
    for (int32_t k = 0; k < o->n_inputs; k++) {
        dp_input in = g->inputs[o->inputs_at + k];
        int64_t t = g->tensor_at[in.op] + in.slot;
        if (s->place[in.op] == d) {
            if (--s->local_refs[t] == 0) mem_free(s, d, s->tensor_bytes[t]);
        } else if (--s->remote_refs[t * s->D + d] == 0) {
            mem_free(s, d, s->tensor_bytes[t]);
        }
    }
    for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++) tensor_produced(s, t, d);
    int32_t next = s->ready_head[d];
    if (next >= 0 && s->free_streams[d]) {
        s->ready_head[d] = s->ready_next[next];
        op_start(s, next, d);
    }
}

static void hop_finish(dp_sim *s, int32_t x) {
    int32_t l = hop_link(s, x);
    int64_t t = s->x_tensor[x];
    int32_t hop = s->x_hop[x], len = route_len(s, x);
    s->link_busy[l] = 0;
    int32_t from = s->ds->links[l].from;
    if (hop == 0) { /* the data has left the producer's device */
        if (--s->local_refs[t] == 0) mem_free(s, from, s->tensor_bytes[t]);
    } else { /* an intermediate copy (on the host) is no longer needed */
        mem_free(s, from, s->tensor_bytes[t]);
    }
    if (hop + 1 < len) {
        s->x_hop[x]++;
        hop_enqueue(s, x);
    } else {
        const dp_graph *g = s->g;
        int32_t dst = s->x_dst[x];
        for (int64_t e = g->consumers_at[t]; e < g->consumers_at[t + 1]; e++) {
            int32_t c = g->consumers[e];
            if (s->place[c] == dst && --s->pending[c] == 0) op_ready(s, c);
        }
    }
    int32_t next = s->link_head[l];
    if (next >= 0 && !s->link_busy[l]) {
        s->link_head[l] = s->x_next[next];
        hop_start(s, next, l);
    }
}

/* One step with the op times in s->dur. Returns the makespan. */
static double simulate_step(dp_sim *s) {
    const dp_graph *g = s->g;
    int32_t n = s->n, D = s->D;
    s->now = 0;
    s->seq = 0;
    s->heap_n = 0;
    s->n_x = 0;
    s->n_hops = 0;
    s->transfer_bytes = 0;
    for (int32_t d = 0; d < D; d++) {
        s->ready_head[d] = -1;
        int32_t st = s->ds->devices[d].streams;
        s->free_streams[d] = st >= 64 ? ~0ULL : ((1ULL << st) - 1);
        s->mem_cur[d] = 0;
        s->busy[d] = 0;
        s->cnt[d] = 0;
    }
    for (int32_t l = 0; l < s->L; l++) {
        s->link_head[l] = -1;
        s->link_busy[l] = 0;
        memset(&s->link_stats[l], 0, sizeof s->link_stats[l]);
    }
    for (int32_t i = 0; i < n; i++) {
        s->pending[i] = g->ops[i].n_inputs;
        s->mem_cur[s->place[i]] += (int64_t)g->ops[i].param_bytes;
    }
    for (int32_t d = 0; d < D; d++) s->mem_peak[d] = s->mem_cur[d];
    for (int32_t k = 0; k < n; k++) {
        int32_t i = g->topo[k];
        if (g->ops[i].n_inputs == 0) op_ready(s, i);
    }
    int32_t done = 0;
    while (s->heap_n) {
        sim_event ev = heap_pop(s);
        s->now = ev.t;
        if (ev.id >= 0) {
            op_finish(s, ev.id);
            done++;
        } else {
            hop_finish(s, -ev.id - 1);
        }
    }
    assert(done == n);
    return s->now;
}

/* Fills verdict and reason from constraints, colocation and memory peaks. */
static void judge(dp_sim *s, dp_sim_result *res) {
    const dp_graph *g = s->g;
    const dp_devices *ds = s->ds;
    int32_t bad = 0, first = -1;
    for (int32_t i = 0; i < s->n; i++)
        if (!dp_placement_allowed(g, ds, i, s->place[i]) && bad++ == 0) first = i;
    if (bad) {
        char buf[32];
        dp_devcon_format(g->ops[first].device, buf, sizeof buf);
        res->verdict = DP_SIM_VERDICT_CONSTRAINT;
        snprintf(res->reason, sizeof res->reason, "op %d \"%.200s\" (%s) must run on %s but is placed on %s%s", first,
                 g->ops[first].name, dp_graph_str(g, g->ops[first].type), buf, ds->devices[s->place[first]].name,
                 bad > 1 ? " (and more ops break their constraints)" : "");
        return;
    }
    for (int32_t c = 0; c < s->n_coloc; c++) s->coloc_dev[c] = -1;
    for (int32_t i = 0; i < s->n; i++) {
        int32_t c = s->coloc[i];
        if (c < 0) continue;
        if (s->coloc_dev[c] < 0) {
            s->coloc_dev[c] = s->place[i];
            s->coloc_op[c] = i;
        } else if (s->coloc_dev[c] != s->place[i]) {
            int32_t j = s->coloc_op[c];
            res->verdict = DP_SIM_VERDICT_COLOCATION;
            snprintf(res->reason, sizeof res->reason,
                     "colocation group \"%.100s\" is split: op %d \"%.100s\" on %s, op %d \"%.100s\" on %s",
                     dp_graph_str(g, g->ops[i].colocate), j, g->ops[j].name, ds->devices[s->place[j]].name, i,
                     g->ops[i].name, ds->devices[s->place[i]].name);
            return;
        }
    }
    for (int32_t d = 0; d < s->D; d++) {
        if ((uint64_t)s->mem_peak[d] > ds->devices[d].memory_bytes) {
            res->verdict = DP_SIM_VERDICT_OOM;
            snprintf(res->reason, sizeof res->reason,
                     "out of memory on %s: peak %.3f GiB (%lld bytes) > capacity %.3f GiB (%llu bytes)",
                     ds->devices[d].name, (double)s->mem_peak[d] / 1073741824.0, (long long)s->mem_peak[d],
                     (double)ds->devices[d].memory_bytes / 1073741824.0,
                     (unsigned long long)ds->devices[d].memory_bytes);
            return;
        }
    }
}

static void fill_durations(dp_sim *s, double sigma, uint64_t seed, int32_t step) {
    int32_t C = s->n_classes;
    for (int32_t i = 0; i < s->n; i++) s->dur[i] = s->cost[(size_t)i * C + s->dev_class[s->place[i]]];
    if (sigma <= 0) return;
    dp_rng rng;
    dp_rng_seed(&rng, seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(step + 1)));
    double shift = -0.5 * sigma * sigma; /* mean-one log-normal */
    for (int32_t i = 0; i < s->n; i++) s->dur[i] *= exp(sigma * dp_rng_normal(&rng) + shift);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static dp_status alloc_trace(dp_sim *s, dp_error *err) {
    if (s->tr_start) return DP_STATUS_OK;
    size_t n = (size_t)s->n + 1, h = 2 * (size_t)s->E + 2;
    s->tr_start = malloc(n * sizeof(double));
    s->tr_end = malloc(n * sizeof(double));
    s->tr_place = malloc(n * sizeof(int32_t));
    s->hop_x = malloc(h * sizeof(int32_t));
    s->hop_link = malloc(h * sizeof(int32_t));
    s->hop_start = malloc(h * sizeof(double));
    s->hop_end = malloc(h * sizeof(double));
    if (!s->tr_start || !s->tr_end || !s->tr_place || !s->hop_x || !s->hop_link || !s->hop_start || !s->hop_end)
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory for the trace");
    return DP_STATUS_OK;
}

dp_status dp_sim_run(dp_sim *s, const int32_t *placement, const dp_sim_options *opt, dp_sim_result *res,
                     dp_error *err) {
    dp_sim_options o = opt ? *opt : dp_sim_options_default();
    if (o.steps < 1) o.steps = 1;
    if (o.warmup < 0 || o.warmup >= o.steps)
        return dp_error_set(err, DP_STATUS_INVALID, "warm-up steps (%d) must be fewer than steps (%d)", o.warmup,
                            o.steps);
    if (!isfinite(o.noise_sigma) || o.noise_sigma < 0 || o.noise_sigma > 5)
        return dp_error_set(err, DP_STATUS_INVALID, "noise sigma must be in 0..5, got %g", o.noise_sigma);
    for (int32_t i = 0; i < s->n; i++)
        if (placement[i] < 0 || placement[i] >= s->D)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "placement of op %d \"%s\" is device %d, but the device set has %d devices (0..%d)", i,
                                s->g->ops[i].name, placement[i], s->D, s->D - 1);
    s->have_trace = 0;
    if (o.record_trace) {
        dp_status st = alloc_trace(s, err);
        if (st) return st;
    }
    s->place = placement;
    s->tracing = 0;

    int32_t steps = o.noise_sigma > 0 ? o.steps : 1;
    int32_t measured = o.steps - o.warmup;
    int32_t pick = 0;
    if (steps > 1) {
        /* the papers' protocol: run steps, drop warm-up, take the median */
        double times[1024], sorted[1024];
        if (steps > 1024) return dp_error_set(err, DP_STATUS_INVALID, "at most 1024 steps, got %d", steps);
        for (int32_t k = 0; k < steps; k++) {
            fill_durations(s, o.noise_sigma, o.seed, k);
            times[k] = simulate_step(s);
        }
        memcpy(sorted, times + o.warmup, (size_t)measured * sizeof(double));
        qsort(sorted, (size_t)measured, sizeof(double), cmp_double);
        double med = sorted[(measured - 1) / 2];
        for (pick = o.warmup; pick < steps && times[pick] != med; pick++)
            ;
    }
    /* the reported step (the only one, or the median one) is run last */
    s->tracing = o.record_trace;
    fill_durations(s, o.noise_sigma, o.seed, pick);
    double makespan = simulate_step(s);
    s->have_trace = o.record_trace;
    s->tracing = 0;
    if (o.record_trace) memcpy(s->tr_place, placement, (size_t)s->n * sizeof(int32_t));

    memset(res, 0, sizeof *res);
    res->step_time_s = makespan;
    res->n_devices = s->D;
    for (int32_t d = 0; d < s->D; d++) {
        dp_sim_device_stats *st = &res->device[d];
        st->busy_s = s->busy[d];
        st->peak_bytes = (uint64_t)s->mem_peak[d];
        st->memory_bytes = s->ds->devices[d].memory_bytes;
    }
    for (int32_t i = 0; i < s->n; i++) {
        res->device[placement[i]].n_ops++;
        res->device[placement[i]].param_bytes += s->g->ops[i].param_bytes;
    }
    res->n_links = s->L;
    res->link = s->link_stats;
    res->transfer_bytes = s->transfer_bytes;
    res->n_transfers = s->n_x;
    res->steps_measured = measured;
    res->verdict = DP_SIM_VERDICT_VALID;
    judge(s, res);
    res->valid = res->verdict == DP_SIM_VERDICT_VALID;
    return DP_STATUS_OK;
}
