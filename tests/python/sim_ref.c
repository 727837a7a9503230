/* The C library's own results, for the Python tests to compare with bit
 * for bit (tests/python/test_py_sim.py):
 *
 *   py_sim_ref GRAPH DEVICES PLACEMENTS [STEPS WARMUP NOISE SEED MEAN]
 *
 * GRAPH a zoo model's name or a dplace-graph file, DEVICES a preset or a
 * dplace-devices file, PLACEMENTS a file of k rows of n_ops native int32
 * (numpy's tofile) or a placement spec ("gpu", "expert", a placement file).
 * Prints one line per placement, simulated by dp_sim_run_ws: the step time
 * as a hexadecimal float, the verdict, the transfer bytes and transfers, and
 * each device's peak bytes. Exit status 2 for bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/sim.h"
#include "dplace/zoo.h"

static int32_t *read_rows(const char *path, int32_t n_ops, long *k) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 0, len = 0, got;
    int32_t *p = NULL;
    do {
        if (len == cap) {
            int32_t *q = realloc(p, sizeof *p * (cap = cap ? 2 * cap : 4096));
            if (!q) break;
            p = q;
        }
        got = fread(p + len, sizeof *p, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    if (!p || n_ops <= 0 || len % (size_t)n_ops) {
        free(p);
        return NULL;
    }
    *k = (long)(len / (size_t)n_ops);
    return p;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 9) {
        fprintf(stderr, "usage: py_sim_ref GRAPH DEVICES PLACEMENTS [STEPS WARMUP NOISE SEED MEAN]\n");
        return 2;
    }
    dp_error err;
    FILE *probe = fopen(argv[1], "r");
    dp_graph *g = probe ? dp_graph_read_file(argv[1], &err) : dp_zoo_build(argv[1], 0, &err);
    if (probe) fclose(probe);
    dp_devices *ds = g ? dp_devices_load(argv[2], &err) : NULL;
    dp_sim *sim = ds ? dp_sim_init(g, ds, &err) : NULL;
    dp_sim_workspace *ws = sim ? dp_sim_workspace_init(sim, &err) : NULL;
    if (!ws) {
        fprintf(stderr, "py_sim_ref: %s\n", err.msg);
        return 2;
    }
    dp_sim_options o = dp_sim_options_default();
    if (argc == 9)
        o.steps = atoi(argv[4]), o.warmup = atoi(argv[5]), o.noise_sigma = atof(argv[6]),
        o.seed = strtoull(argv[7], NULL, 10), o.mean = atoi(argv[8]);
    long k = 1;
    int32_t *place = NULL;
    size_t len = strlen(argv[3]);
    if (len > 4 && !strcmp(argv[3] + len - 4, ".bin")) {
        place = read_rows(argv[3], g->n_ops, &k);
    } else if ((place = malloc(sizeof *place * (size_t)g->n_ops)) &&
               dp_zoo_resolve_placement(argv[3], g, ds, place, &err)) {
        fprintf(stderr, "py_sim_ref: %s\n", err.msg);
        return 2;
    }
    if (!place) {
        fprintf(stderr, "py_sim_ref: %s: not k rows of %d int32\n", argv[3], (int)g->n_ops);
        return 2;
    }
    for (long i = 0; i < k; i++) {
        dp_sim_result r;
        if (dp_sim_run_ws(sim, ws, place + (size_t)i * (size_t)g->n_ops, &o, &r, &err)) {
            fprintf(stderr, "py_sim_ref: %s\n", err.msg);
            return 2;
        }
        printf("%a %s %llu %d", r.step_time_s, dp_sim_verdict_name(r.verdict), (unsigned long long)r.transfer_bytes,
               (int)r.n_transfers);
        for (int32_t d = 0; d < r.n_devices; d++) printf(" %llu", (unsigned long long)r.device[d].peak_bytes);
        printf("\n");
    }
    free(place);
    dp_sim_workspace_free(ws);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return 0;
}
