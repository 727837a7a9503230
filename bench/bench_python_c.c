/* The C half of bench/bench_python.py: the simulations the Python bench
 * times through the dplace module, timed here through the library
 * directly, so that the two differ only by the binding.
 *
 *   bench_python_c single MODEL DEVICES PLACEMENTS.bin REPS
 *       simulates each placement of the file REPS times in a row on one
 *       workspace (dp_sim_run_ws); prints per placement the median seconds
 *       of one call and the step time
 *   bench_python_c many MODEL DEVICES PLACEMENTS.bin THREADS REPS
 *       simulates all placements on THREADS threads, a workspace each,
 *       taking the next placement left, REPS times; prints the median
 *       seconds of one pass and placements per second
 *
 * PLACEMENTS.bin: k rows of n_ops little-endian int32 (numpy's tofile).
 * Output: one line per result, "key value ...", for the Python bench to
 * read. Exit status 2 for bad input. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dplace/sim.h"
#include "dplace/zoo.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Reads k placements of n_ops ops from path; NULL on a bad file. */
static int32_t *read_placements(const char *path, int32_t n_ops, int32_t n_dev, long *k) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t row = sizeof(int32_t) * (size_t)n_ops;
    int32_t *p = bytes > 0 && (size_t)bytes % row == 0 ? malloc((size_t)bytes) : NULL;
    if (p && fread(p, 1, (size_t)bytes, f) != (size_t)bytes) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *k = p ? (long)((size_t)bytes / row) : 0;
    for (long i = 0; p && i < *k * n_ops; i++)
        if (p[i] < 0 || p[i] >= n_dev) {
            free(p);
            return NULL;
        }
    return p;
}

typedef struct pass {
    const dp_sim *sim;
    dp_sim_workspace **ws;
    const int32_t *place;
    int32_t n_ops;
    long k;
    atomic_long next;
} pass;

typedef struct worker_arg {
    pass *p;
    int t;
} worker_arg;

static void *worker(void *arg) {
    worker_arg *w = arg;
    pass *p = w->p;
    dp_sim_result res;
    for (;;) {
        long i = atomic_fetch_add(&p->next, 1);
        if (i >= p->k) break;
        if (dp_sim_run_ws(p->sim, p->ws[w->t], p->place + (size_t)i * (size_t)p->n_ops, NULL, &res, NULL)) abort();
    }
    return NULL;
}

/* One pass over every placement on n threads (this one and n - 1 more). */
static double run_pass(pass *p, int n) {
    pthread_t th[64];
    worker_arg args[64];
    atomic_store(&p->next, 0);
    double t0 = now_s();
    for (int t = 1; t < n; t++) {
        args[t] = (worker_arg){p, t};
        if (pthread_create(&th[t], NULL, worker, &args[t])) abort();
    }
    args[0] = (worker_arg){p, 0};
    worker(&args[0]);
    for (int t = 1; t < n; t++) pthread_join(th[t], NULL);
    return now_s() - t0;
}

int main(int argc, char **argv) {
    int many = argc == 7 && !strcmp(argv[1], "many");
    if (!(argc == 6 && !strcmp(argv[1], "single")) && !many) {
        fprintf(stderr, "usage: bench_python_c single MODEL DEVICES PLACEMENTS.bin REPS\n"
                        "       bench_python_c many MODEL DEVICES PLACEMENTS.bin THREADS REPS\n");
        return 2;
    }
    dp_error err;
    dp_graph *g = dp_zoo_build(argv[2], 0, &err);
    dp_devices *ds = g ? dp_devices_load(argv[3], &err) : NULL;
    dp_sim *sim = ds ? dp_sim_init(g, ds, &err) : NULL;
    if (!sim) {
        fprintf(stderr, "bench_python_c: %s\n", err.msg);
        return 2;
    }
    long k = 0;
    int32_t *place = read_placements(argv[4], g->n_ops, ds->n_devices, &k);
    int threads = many ? atoi(argv[5]) : 1, reps = atoi(argv[many ? 6 : 5]);
    if (!place || threads < 1 || threads > 64 || reps < 1) {
        fprintf(stderr, "bench_python_c: bad placements file %s, thread count or repetitions\n", argv[4]);
        return 2;
    }
    dp_sim_workspace *ws[64];
    for (int t = 0; t < threads; t++)
        if (!(ws[t] = dp_sim_workspace_init(sim, &err))) return 1;
    double *times = malloc(sizeof(double) * (size_t)reps);
    if (!many) {
        for (long i = 0; i < k; i++) {
            const int32_t *p = place + (size_t)i * (size_t)g->n_ops;
            dp_sim_result res;
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                if (dp_sim_run_ws(sim, ws[0], p, NULL, &res, &err)) return 1;
                times[r] = now_s() - t0;
            }
            printf("single %ld call_s %.9e step_time %.17g\n", i, median(times, reps), res.step_time_s);
        }
    } else {
        pass p = {sim, ws, place, g->n_ops, k, 0};
        run_pass(&p, threads); /* warm-up: every workspace touched once */
        for (int r = 0; r < reps; r++) times[r] = run_pass(&p, threads);
        double m = median(times, reps);
        printf("many threads %d pass_s %.9e rate %.6e\n", threads, m, (double)k / m);
    }
    free(times);
    for (int t = 0; t < threads; t++) dp_sim_workspace_free(ws[t]);
    free(place);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return 0;
}
