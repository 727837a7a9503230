/* Benchmark: every baseline placer on every zoo model with the device set
 * its paper measured it on, each placement simulated. Prints one block per
 * model (step time, validity, time to place, bytes crossing devices) and a
 * closing matrix of step times. Models the zoo cannot build yet are skipped
 * with a note.
 *
 * usage: bench_baseline [--models a,b,...] [--seed N]
 * A program, not a timed test (docs/benchmarks.md, docs/baselines.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/place.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

typedef struct bench_model {
    const char *model;
    const char *devices;
} bench_model;

/* The papers' presets: Hierarchical Planner (K40) and Mars (P100). */
static const bench_model models[] = {
    {"inception_v3", "k40x2"}, {"resnet152", "k40x2"}, {"rnnlm", "k40x2"},  {"nmt2", "k40x2"},
    {"nmt4", "k40x4"},         {"nmt8", "k40x8"},      {"gnmt4", "p100x4"}, {"bert_base", "p100x4"},
    {"synthetic", "k40x4"},
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))

typedef struct cell {
    int ran;      /* 0: model skipped */
    int applied;  /* the method applied */
    int valid;
    double step_s, place_s;
} cell;

/* Bytes for people ("1.50 MiB"). */
static void fmt_bytes(double b, char *buf, size_t size) {
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int k = 0;
    while (b >= 1024 && k < 4) {
        b /= 1024;
        k++;
    }
    snprintf(buf, size, k ? "%.2f %s" : "%.0f %s", b, u[k]);
}

/* Whether name is in the comma-separated list (NULL: all). */
static int wanted(const char *list, const char *name) {
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

int main(int argc, char **argv) {
    const char *only = NULL;
    long seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--models") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_baseline [--models a,b,...] [--seed N]\n");
            return 2;
        }
    }
    static cell table[N_MODELS][DP_PLACE_METHOD_COUNT];
    dp_place_options opt = dp_place_options_default();
    opt.seed = (uint64_t)seed;
    double t_all = dp_now_s();
    for (int k = 0; k < N_MODELS; k++) {
        if (!wanted(only, models[k].model)) continue;
        dp_error err;
        double t0 = dp_now_s();
        dp_graph *g = dp_zoo_build(models[k].model, 0, &err);
        if (!g) {
            printf("== %s on %s: skipped (%s)\n\n", models[k].model, models[k].devices, err.msg);
            continue;
        }
        double build_s = dp_now_s() - t0;
        dp_devices *ds = dp_devices_preset(models[k].devices, &err);
        dp_sim *sim = ds ? dp_sim_init(g, ds, &err) : NULL;
        int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
        if (!ds || !sim || !p) {
            fprintf(stderr, "bench_baseline: %s: %s\n", models[k].model, p ? err.msg : "out of memory");
            return 1;
        }
        printf("== %s on %s: %d ops (built in %.2f s)\n", models[k].model, models[k].devices, g->n_ops, build_s);
        printf("%-8s %12s  %-16s %12s %12s  %s\n", "method", "step time", "verdict", "place time", "crossing",
               "devices used");
        for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
            dp_place_report rep;
            if (dp_place_evaluate(sim, g, ds, (dp_place_method)m, &opt, p, &rep, &err)) {
                fprintf(stderr, "bench_baseline: %s %s: %s\n", models[k].model,
                        dp_place_method_name((dp_place_method)m), err.msg);
                return 1;
            }
            cell *c = &table[k][m];
            c->ran = 1;
            c->place_s = rep.place_s;
            if (rep.status) {
                printf("%-8s cannot apply: %s\n", dp_place_method_name((dp_place_method)m), rep.reason);
                continue;
            }
            c->applied = 1;
            c->valid = rep.sim.valid;
            c->step_s = rep.sim.step_time_s;
            char verdict[80] = "valid", cross[32];
            if (!rep.sim.valid) {
                snprintf(verdict, sizeof verdict, "%s", dp_sim_verdict_name(rep.sim.verdict));
                for (int32_t d = 0; d < rep.sim.n_devices; d++)
                    if (rep.sim.device[d].peak_bytes > rep.sim.device[d].memory_bytes) {
                        snprintf(verdict, sizeof verdict, "OOM %s", ds->devices[d].name);
                        break;
                    }
            }
            fmt_bytes((double)rep.sim.transfer_bytes, cross, sizeof cross);
            printf("%-8s %10.4f s  %-16s %9.1f ms %12s  %d\n", dp_place_method_name((dp_place_method)m),
                   rep.sim.step_time_s, verdict, rep.place_s * 1e3, cross, rep.n_used);
        }
        for (const dp_zoo_paper_row *r = dp_zoo_paper_table(); r->model; r++)
            if (!strcmp(r->model, models[k].model) && !strcmp(r->devices, models[k].devices)) {
                char c[16], gp[16], e[16];
                double v[3] = {r->cpu_s, r->gpu_s, r->expert_s};
                char *out[3] = {c, gp, e};
                for (int j = 0; j < 3; j++) {
                    if (v[j] == DP_ZOO_OOM) snprintf(out[j], 16, "OOM");
                    else if (v[j] == DP_ZOO_NONE) snprintf(out[j], 16, "-");
                    else snprintf(out[j], 16, "%.3f s", v[j]);
                }
                printf("paper    cpu %s, gpu %s, expert %s (%s)\n", c, gp, e, r->source);
            }
        printf("\n");
        free(p);
        dp_sim_free(sim);
        dp_devices_free(ds);
        dp_graph_free(g);
    }
    /* the matrix: step time in seconds; * = invalid (out of memory), - = cannot apply */
    printf("step time (s) by method and model; * invalid (out of memory), - cannot apply\n%-8s", "method");
    for (int k = 0; k < N_MODELS; k++)
        if (table[k][0].ran) printf(" %13s", models[k].model);
    printf("\n");
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        printf("%-8s", dp_place_method_name((dp_place_method)m));
        for (int k = 0; k < N_MODELS; k++) {
            const cell *c = &table[k][m];
            if (!c->ran) continue;
            if (!c->applied) printf(" %13s", "-");
            else printf(" %12.4f%s", c->step_s, c->valid ? " " : "*");
        }
        printf("\n");
    }
    printf("\ntime to place (ms)\n%-8s", "method");
    for (int k = 0; k < N_MODELS; k++)
        if (table[k][0].ran) printf(" %13s", models[k].model);
    printf("\n");
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        printf("%-8s", dp_place_method_name((dp_place_method)m));
        for (int k = 0; k < N_MODELS; k++)
            if (table[k][m].ran) printf(" %13.1f", table[k][m].place_s * 1e3);
        printf("\n");
    }
    printf("\ntotal %.1f s\n", dp_now_s() - t_all);
    return 0;
}
