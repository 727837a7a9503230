/* Simulator speed: placements per second on synthetic training-like graphs
 * of 25,000 and 80,000 ops on 5 devices (k40x4), and the ratio of one
 * simulation to one bare topological traversal (Kahn's algorithm over the
 * same consumer lists) of the same graph, measured interleaved in one run.
 * Three kinds of placement, because the cost grows with the transfers:
 *   one-gpu  every op on gpu:0 (CPU-only ops on the CPU): no transfers;
 *   layers   layer k of the RNN grid on gpu k mod 4 (the human experts' way);
 *   random   every op on a uniformly random GPU (colocation kept): about 3 in
 *            4 edges cross devices, each GPU-to-GPU tensor staged through the
 *            host in two hops; what an untrained policy samples.
 * Targets (issue 2): under 2 ms per placement at 25,000 ops; ratio <= 5.
 * usage: bench_sim [REPS]   (default 200) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/placement.h"
#include "dplace/sim.h"

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
        printf("%6d ops %7lld edges  %-8s %6lld transfers | simulate %6.3f ms %6.0f/s | traversal %.3f ms | ratio "
               "%5.2f | step %.3f s\n",
               n, (long long)g->n_inputs, kind_names[k], (long long)(transfers / reps), ms, 1e3 / ms, topo_ms,
               ms / topo_ms, step_sum / reps);
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

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    if (reps < 1) reps = 1;
    printf("bench_sim: synthetic training graphs on k40x4 (1 CPU + 4 GPUs); medians over %d runs,\n"
           "simulation and bare topological traversal interleaved in one run\n",
           reps);
    int rc = bench(25000, reps);
    rc |= bench(80000, reps);
    return rc;
}
