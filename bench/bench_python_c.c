/* The C half of bench/bench_python.py: the simulations the Python bench
 * times through the dplace module, timed here through the library
 * directly, so that the two differ only by the binding. It serves the
 * Python bench over a pipe, so that the two can alternate every few calls
 * on a machine whose speed drifts:
 *
 *   bench_python_c MODEL DEVICES PLACEMENTS.bin
 *
 * PLACEMENTS.bin: k rows of n_ops native int32 (numpy's tofile). Then one
 * command per line on stdin, one answer per line on stdout:
 *   single I REPS      placement I simulated REPS times in a row on one
 *                      workspace (dp_sim_run_ws): "single I CALL_S STEP_S",
 *                      the median seconds of one call and the step time
 *   many T REPS        every placement once per pass, on T threads (this one
 *                      and T - 1 more), a workspace each, each taking the
 *                      next placement left; REPS passes after one to warm
 *                      up: "many T PASS_S", the median seconds of a pass
 *   quit
 * Exit status 2 for bad input. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dplace/sim.h"
#include "dplace/zoo.h"

#define MAX_THREADS 64

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

/* Reads k placements of n_ops ops on n_dev devices from path; NULL on a
 * bad file. */
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
    pthread_t th[MAX_THREADS];
    worker_arg args[MAX_THREADS];
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
    if (argc != 4) {
        fprintf(stderr, "usage: bench_python_c MODEL DEVICES PLACEMENTS.bin   (commands on stdin: single I REPS, "
                        "many T REPS, quit)\n");
        return 2;
    }
    dp_error err;
    dp_graph *g = dp_zoo_build(argv[1], 0, &err);
    dp_devices *ds = g ? dp_devices_load(argv[2], &err) : NULL;
    dp_sim *sim = ds ? dp_sim_init(g, ds, &err) : NULL;
    if (!sim) {
        fprintf(stderr, "bench_python_c: %s\n", err.msg);
        return 2;
    }
    long k = 0;
    int32_t *place = read_placements(argv[3], g->n_ops, ds->n_devices, &k);
    if (!place) {
        fprintf(stderr, "bench_python_c: %s: not rows of %d device indices\n", argv[3], (int)g->n_ops);
        return 2;
    }
    dp_sim_workspace *ws[MAX_THREADS] = {NULL};
    pass p = {sim, ws, place, g->n_ops, k, 0};
    char line[256];
    double *times = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16];
        long a = 0, reps = 0;
        if (sscanf(line, "%15s %ld %ld", cmd, &a, &reps) < 1 || !strcmp(cmd, "quit")) break;
        int many = !strcmp(cmd, "many");
        if ((!many && strcmp(cmd, "single")) || reps < 1 || a < (many ? 1 : 0) || a >= (many ? MAX_THREADS : k)) {
            fprintf(stderr, "bench_python_c: bad command: %s", line);
            return 2;
        }
        double *nt = realloc(times, sizeof(double) * (size_t)reps);
        if (!nt) return 1;
        times = nt;
        for (int t = 0; t < (many ? (int)a : 1); t++)
            if (!ws[t] && !(ws[t] = dp_sim_workspace_init(sim, &err))) return 1;
        if (many) {
            run_pass(&p, (int)a); /* warm-up: every workspace touched once */
            for (long r = 0; r < reps; r++) times[r] = run_pass(&p, (int)a);
            printf("many %ld %.9e\n", a, median(times, (int)reps));
        } else {
            dp_sim_result res;
            for (long r = 0; r < reps; r++) {
                double t0 = now_s();
                if (dp_sim_run_ws(sim, ws[0], place + (size_t)a * (size_t)g->n_ops, NULL, &res, &err)) return 1;
                times[r] = now_s() - t0;
            }
            printf("single %ld %.9e %.17g\n", a, median(times, (int)reps), res.step_time_s);
        }
    }
    free(times);
    for (int t = 0; t < MAX_THREADS; t++) dp_sim_workspace_free(ws[t]);
    free(place);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return 0;
}
