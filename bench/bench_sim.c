/* Simulator speed (issues 2 and 20).
 *
 * Part 1: placements per second on synthetic training-like graphs
 * of 25,000 and 80,000 ops on 5 devices (k40x4), and the ratio of one
 * simulation to one bare topological traversal (Kahn's algorithm over the
 * same consumer lists) of the same graph, measured interleaved in one run.
 * Three kinds of placement, because the cost grows with the transfers:
 *   one-gpu  every op on gpu:0 (CPU-only ops on the CPU): no transfers;
 *   layers   layer k of the RNN grid on gpu k mod 4 (the human experts' way);
 *   random   every op on a uniformly random GPU (colocation kept): about 3 in
 *            4 edges cross devices, each GPU-to-GPU tensor staged through the
 *            host in two hops; what an untrained policy samples.
 * Targets: under 2 ms per placement at 25,000 ops; ratio <= 5.
 *
 * Part 2: per zoo graph on its paper's devices, the full
 * simulation of a random placement (each unit on a random GPU) beside a
 * traversal, and the cost per move of a full simulation against
 * dp_sim_delta_try, for random one-unit moves (a colocation group or an op
 * to another device it may use) from a good placement (the expert's, else
 * m-ETF's) and from the random one; every try is checked against its full
 * simulation. Also, for the moves from the good placement, what an exact
 * re-simulation could at best skip (docs/simulator.md, "Moves and delta
 * simulation"): the share of the base's events (ops ended, hops ended) at
 * or after the first event the move changes, and the share of ops whose
 * start time the move changes.
 * usage: bench_sim [REPS [MOVES]]   (defaults 200 and 40; part 2 runs REPS / 4 full simulations) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/place.h"
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/units.h"
#include "dplace/zoo.h"
#include "sim/sim_internal.h"

/* A bare topological traversal: in-degrees, then a FIFO over consumers. */
static int64_t topo_traverse(const dp_graph *g, int32_t *indeg, int32_t *queue) {
    int32_t n = g->n_ops, head = 0, tail = 0;
    int64_t visited = 0;
    for (int32_t i = 0; i < n; i++) {
        indeg[i] = g->ops[i].n_inputs;
        if (!indeg[i]) queue[tail++] = i;
    }
    while (head < tail) {
        int32_t u = queue[head++];
        visited++;
        for (int64_t t = g->tensor_at[u]; t < g->tensor_at[u + 1]; t++)
            for (int64_t e = g->consumers_at[t]; e < g->consumers_at[t + 1]; e++)
                if (--indeg[g->consumers[e]] == 0) queue[tail++] = g->consumers[e];
    }
    return visited;
}

typedef enum kind { KIND_ONE_GPU, KIND_LAYERS, KIND_RANDOM, KIND_COUNT } kind;
static const char *const kind_names[] = {"one-gpu", "layers", "random"};

/* GPU of an op by its scope's "layer_K", for the layer placement. */
static int32_t layer_gpu(const dp_graph *g, int32_t i, int32_t ngpu) {
    const char *sc = strstr(dp_graph_str(g, g->ops[i].scope), "layer_");
    return sc ? 1 + atoi(sc + 6) % ngpu : 1;
}

/* A placement of the given kind that keeps constraints and colocation. */
static void make_placement(kind kd, const dp_graph *g, const dp_devices *ds, dp_rng *rng, int32_t *p,
                           int32_t *group_dev) {
    for (int32_t k = 0; k < g->n_colocate; k++) group_dev[k] = -1;
    int32_t ngpu = ds->kind_count[DP_DEVKIND_GPU];
    for (int32_t i = 0; i < g->n_ops; i++) {
        const dp_op *o = &g->ops[i];
        if (o->device.kind == DP_DEVCON_CPU) {
            p[i] = dp_devices_nth(ds, DP_DEVKIND_CPU, 0);
            continue;
        }
        int32_t d = kd == KIND_ONE_GPU  ? 1
                    : kd == KIND_LAYERS ? layer_gpu(g, i, ngpu)
                                       : 1 + (int32_t)dp_rng_below(rng, (uint64_t)ngpu);
        int32_t c = g->coloc_group[i];
        if (c >= 0) {
            if (group_dev[c] < 0) group_dev[c] = d;
            d = group_dev[c];
        }
        p[i] = d;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bench(int32_t n_ops, int reps) {
    dp_error err;
    dp_graph *g = dp_graph_synth(n_ops, 1, &err);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    if (!g || !ds) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    dp_sim *sim = dp_sim_init(g, ds, &err);
    if (!sim) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    int32_t n = g->n_ops;
    int32_t *p = malloc((size_t)n * sizeof(int32_t) * 8);
    int32_t *group_dev = malloc(((size_t)g->n_colocate + 1) * sizeof(int32_t));
    int32_t *indeg = malloc((size_t)n * sizeof(int32_t)), *queue = malloc((size_t)n * sizeof(int32_t));
    double *t_sim = malloc((size_t)reps * sizeof(double)), *t_topo = malloc((size_t)reps * sizeof(double));
    for (int k = 0; k < KIND_COUNT; k++) {
        dp_rng rng;
        dp_rng_seed(&rng, 11);
        for (int v = 0; v < 8; v++) make_placement((kind)k, g, ds, &rng, p + (size_t)v * n, group_dev);
        dp_sim_result res;
        double step_sum = 0;
        int64_t visited = 0, transfers = 0;
        for (int r = 0; r < reps; r++) {
            const int32_t *pl = p + (size_t)(r % 8) * n;
            double t0 = dp_now_s();
            dp_sim_run(sim, pl, NULL, &res, &err);
            double t1 = dp_now_s();
            visited += topo_traverse(g, indeg, queue);
            double t2 = dp_now_s();
            t_sim[r] = t1 - t0;
            t_topo[r] = t2 - t1;
            step_sum += res.step_time_s;
            transfers += res.n_transfers;
        }
        qsort(t_sim, (size_t)reps, sizeof(double), cmp_double);
        qsort(t_topo, (size_t)reps, sizeof(double), cmp_double);
        double ms = t_sim[reps / 2] * 1e3, topo_ms = t_topo[reps / 2] * 1e3;
        printf("%6d ops %7lld edges  %-8s %6lld transfers | simulate %6.3f ms (least %6.3f) %6.0f/s | traversal %.3f "
               "ms | ratio %5.2f | step %.3f s\n",
               n, (long long)g->n_inputs, kind_names[k], (long long)(transfers / reps), ms, t_sim[0] * 1e3, 1e3 / ms,
               topo_ms, ms / topo_ms, step_sum / reps);
        if (visited != (int64_t)reps * n) {
            fprintf(stderr, "bench_sim: traversal visited %lld ops, expected %lld\n", (long long)visited,
                    (long long)reps * n);
            return 1;
        }
    }
    free(p);
    free(group_dev);
    free(indeg);
    free(queue);
    free(t_sim);
    free(t_topo);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return 0;
}

/* ---- part 2: the zoo, full simulation and moves ----------------------------------------- */

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n ? v[n / 2] : 0;
}

/* Whether two results agree in every field (the link stats by value). */
static int same_result(const dp_sim_result *a, const dp_sim_result *b) {
    if (memcmp(&a->step_time_s, &b->step_time_s, sizeof(double)) || a->verdict != b->verdict ||
        strcmp(a->reason, b->reason) || a->transfer_bytes != b->transfer_bytes || a->n_transfers != b->n_transfers ||
        memcmp(a->device, b->device, (size_t)a->n_devices * sizeof a->device[0]))
        return 0;
    for (int32_t l = 0; l < a->n_links; l++)
        if (memcmp(&a->link[l], &b->link[l], sizeof a->link[l])) return 0;
    return 1;
}

/* Each unit on a random device of its mask (a GPU when it may). */
static void random_units(const dp_units *u, const dp_mask *mask, dp_mask gpus, dp_rng *rng, int32_t *unit_dev) {
    for (int32_t k = 0; k < u->n_units; k++) {
        dp_mask m = mask[k] & gpus ? mask[k] & gpus : mask[k];
        int32_t pick = (int32_t)dp_rng_below(rng, (uint64_t)dp_mask_count(m));
        while (pick--) m &= m - 1;
        unit_dev[k] = dp_mask_first(m);
    }
}

typedef struct move_stats {
    double *t_full, *t_delta, after, changed;
    int n, differ;
} move_stats;

/* Random one-unit moves from base: each unit with another device in its
 * mask goes there; full simulation and try timed back to back. With
 * traced (a workspace for traces), also the shares an exact
 * re-simulation could skip. */
static void run_moves(const dp_sim *sim, dp_sim_workspace *ws, dp_sim_workspace *traced, dp_sim_delta *d,
                      const dp_graph *g, const dp_units *u, const dp_mask *mask, const int32_t *base, int moves,
                      dp_rng *rng, move_stats *ms) {
    dp_error err;
    int32_t n = g->n_ops;
    int32_t *q = malloc((size_t)n * sizeof(int32_t)), *devs = malloc((size_t)n * sizeof(int32_t));
    double *base_start = NULL, *ends = NULL;
    int64_t n_ends = 0;
    dp_sim_result res, full;
    dp_sim_options topt = dp_sim_options_default();
    topt.record_trace = 1;
    if (traced) { /* the base's timeline: op starts, and every event's end sorted */
        dp_sim_run_ws(sim, traced, base, &topt, &res, &err);
        base_start = malloc((size_t)n * sizeof(double));
        memcpy(base_start, traced->tr_start, (size_t)n * sizeof(double));
        ends = malloc(((size_t)n + (size_t)traced->n_hops) * sizeof(double));
        for (int32_t i = 0; i < n; i++) ends[n_ends++] = traced->tr_end[i];
        for (int32_t h = 0; h < traced->n_hops; h++) ends[n_ends++] = traced->hop_end[h];
        qsort(ends, (size_t)n_ends, sizeof(double), cmp_double);
    }
    dp_sim_delta_set_base(d, base, NULL, &err);
    memset(ms, 0, sizeof *ms);
    ms->t_full = malloc((size_t)moves * sizeof(double));
    ms->t_delta = malloc((size_t)moves * sizeof(double));
    for (int m = 0; m < moves; m++) {
        int32_t k, dev;
        do {
            k = (int32_t)dp_rng_below(rng, (uint64_t)u->n_units);
            dev = (int32_t)dp_rng_below(rng, 64);
        } while (!(mask[k] >> dev & 1) || dev == base[u->members[u->first[k]]]);
        int32_t cnt = u->first[k + 1] - u->first[k];
        const int32_t *ops = &u->members[u->first[k]];
        memcpy(q, base, (size_t)n * sizeof(int32_t));
        for (int32_t j = 0; j < cnt; j++) q[ops[j]] = devs[j] = dev;
        double t0 = dp_now_s();
        dp_sim_run_ws(sim, ws, q, NULL, &full, &err);
        double t1 = dp_now_s();
        dp_sim_delta_try(d, cnt, ops, devs, &res, &err);
        double t2 = dp_now_s();
        ms->t_full[m] = t1 - t0;
        ms->t_delta[m] = t2 - t1;
        ms->differ += !same_result(&full, &res);
        if (!traced) continue;
        /* the first event the move changes: an input of a moved op made (its
         * producer decides where to send it), or time 0 for a source */
        double first = 1e300;
        for (int32_t j = 0; j < cnt; j++) {
            const dp_op *o = &g->ops[ops[j]];
            if (o->n_inputs == 0) first = 0;
            for (int32_t e = 0; e < o->n_inputs; e++) {
                double t = base_start[g->inputs[o->inputs_at + e].op] + dp_sim_op_seconds(sim, g->inputs[o->inputs_at + e].op, base[g->inputs[o->inputs_at + e].op]);
                if (t < first) first = t;
            }
        }
        int64_t lo = 0, hi = n_ends;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (ends[mid] < first) lo = mid + 1;
            else hi = mid;
        }
        ms->after += (double)(n_ends - lo) / (double)n_ends;
        dp_sim_run_ws(sim, traced, q, &topt, &res, &err);
        int32_t changed = 0;
        for (int32_t i = 0; i < n; i++) changed += traced->tr_start[i] != base_start[i];
        ms->changed += (double)changed / n;
    }
    ms->n = moves;
    if (moves) {
        ms->after /= moves;
        ms->changed /= moves;
    }
    free(q);
    free(devs);
    free(base_start);
    free(ends);
}

static int bench_zoo_case(const char *model, const char *devices, int reps, int moves) {
    dp_error err;
    dp_graph *g = dp_zoo_build(model, 0, &err);
    dp_devices *ds = g ? dp_devices_preset(devices, &err) : NULL;
    dp_sim *sim = ds ? dp_sim_init(g, ds, &err) : NULL;
    if (!sim) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    int32_t n = g->n_ops;
    dp_units u;
    if (dp_units_init(&u, g, &err)) return 1;
    dp_mask *mask = malloc((size_t)u.n_units * sizeof(dp_mask));
    if (dp_units_masks(&u, g, ds, dp_mask_all(ds), mask, &err)) return 1;
    dp_sim_workspace *ws = dp_sim_workspace_init(sim, &err), *traced = dp_sim_workspace_init(sim, &err);
    dp_sim_delta *d = dp_sim_delta_init(sim, &err);
    int32_t *unit_dev = malloc((size_t)u.n_units * sizeof(int32_t)), *rnd = malloc((size_t)n * sizeof(int32_t));
    int32_t *good = malloc((size_t)n * sizeof(int32_t));
    int32_t *indeg = malloc((size_t)n * sizeof(int32_t)), *queue = malloc((size_t)n * sizeof(int32_t));
    dp_rng rng;
    dp_rng_seed(&rng, 20);
    random_units(&u, mask, dp_mask_gpus(ds), &rng, unit_dev);
    dp_units_expand(&u, unit_dev, rnd);
    const char *good_name = "expert";
    if (dp_zoo_expert_placement(g, ds, good, &err)) {
        good_name = "m-etf";
        if (dp_place_run(DP_PLACE_METHOD_M_ETF, g, ds, NULL, good, &err)) {
            fprintf(stderr, "bench_sim: %s\n", err.msg);
            return 1;
        }
    }
    /* the full simulation of the random placement beside a traversal */
    int full_reps = reps / 4 > 5 ? reps / 4 : 5;
    double *t_sim = malloc((size_t)full_reps * sizeof(double)), *t_topo = malloc((size_t)full_reps * sizeof(double));
    dp_sim_result res;
    for (int r = 0; r < full_reps; r++) {
        double t0 = dp_now_s();
        dp_sim_run_ws(sim, ws, rnd, NULL, &res, &err);
        double t1 = dp_now_s();
        topo_traverse(g, indeg, queue);
        t_sim[r] = t1 - t0;
        t_topo[r] = dp_now_s() - t1;
    }
    double sim_ms = median(t_sim, full_reps) * 1e3, topo_ms = median(t_topo, full_reps) * 1e3;
    printf("%-13s %-7s %6d ops %6d transfers | random: simulate %7.3f ms (least %7.3f), traversal %.3f ms, ratio "
           "%5.1f\n",
           model, devices, n, res.n_transfers, sim_ms, t_sim[0] * 1e3, topo_ms, sim_ms / topo_ms);
    const char *names[2] = {good_name, "random"};
    const int32_t *bases[2] = {good, rnd};
    for (int b = 0; b < 2; b++) {
        move_stats ms;
        dp_sim_delta_set_base(d, bases[b], &res, &err);
        double step = res.step_time_s;
        run_moves(sim, ws, b == 0 ? traced : NULL, d, g, &u, mask, bases[b], moves, &rng, &ms);
        double f = median(ms.t_full, ms.n) * 1e3, dl = median(ms.t_delta, ms.n) * 1e3;
        printf("    moves from %-7s (step %.3f s): full %7.3f ms, delta %7.3f ms, full/delta %5.2f (least %.2f); %d/%d "
               "differ",
               names[b], step, f, dl, f / dl, ms.t_full[0] / ms.t_delta[0], ms.differ, ms.n);
        if (b == 0) printf("; events from the first change %.2f, ops whose start changes %.2f", ms.after, ms.changed);
        printf("\n");
        free(ms.t_full);
        free(ms.t_delta);
        if (ms.differ) return 1;
    }
    free(t_sim);
    free(t_topo);
    free(unit_dev);
    free(rnd);
    free(good);
    free(indeg);
    free(queue);
    free(mask);
    dp_units_free(&u);
    dp_sim_delta_free(d);
    dp_sim_workspace_free(ws);
    dp_sim_workspace_free(traced);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return 0;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    int moves = argc > 2 ? atoi(argv[2]) : 40;
    if (reps < 1) reps = 1;
    if (moves < 1) moves = 1;
    printf("bench_sim: synthetic training graphs on k40x4 (1 CPU + 4 GPUs); medians over %d runs,\n"
           "simulation and bare topological traversal interleaved in one run\n",
           reps);
    int rc = bench(25000, reps);
    rc |= bench(80000, reps);
    printf("\nthe zoo: a random placement (each unit on a random GPU), then %d random one-unit moves from a good\n"
           "placement and from the random one, full simulation and dp_sim_delta_try timed back to back (medians)\n",
           moves);
    static const char *const cases[][2] = {{"synthetic", "k40x4"}, {"nmt4", "k40x4"}, {"gnmt4", "p100x4"},
                                           {"bert_base", "p100x4"}, {"inception_v3", "p100x4"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) rc |= bench_zoo_case(cases[k][0], cases[k][1], reps, moves);
    return rc;
}
