/* Benchmark: every baseline placer on every zoo model with the device set
 * its paper measured it on, and on a memory-bound set (inception_v3 at batch 32
 * and gnmt4 at batch 128 on 1 CPU + 4 P100s cut to 8 GiB: PCIe 3.0, no
 * peer-to-peer), each placement simulated. Prints one block per
 * model (step time, step time relative to one GPU and to the expert,
 * validity, time to place, bytes crossing devices, the units placed) and
 * closing matrices of step times, both ratios, bytes sent and time to place.
 * Models the zoo cannot build yet are skipped with a note.
 *
 * usage: bench_baseline [--models a,b,...] [--methods a,b,...] [--seed N] [--group METHOD [--groups N]]
 *                       [--forward-only yes|no] [--rules best|dataflow|paper] [--threads N]
 * The units column names, for m-topo, m-etf and m-sct, the rule set of the
 * placement kept (dp_place_rules). A program, not a timed test (bench/README.md, docs/results/bench_baseline.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/place.h"
#include "dplace/reference.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

typedef struct bench_model {
    const char *label; /* column and --models name */
    const char *model;
    const char *devices;
    int64_t batch;     /* 0: the papers' */
    int gpu_gib;       /* GPUs cut to this many GiB; 0: the preset's */
} bench_model;

/* The papers' presets: Hierarchical Planner (K40) and Mars (P100); then
 * the memory-bound set. */
static const bench_model models[] = {
    {"inception_v3", "inception_v3", "k40x2", 0, 0}, {"resnet152", "resnet152", "k40x2", 0, 0},
    {"rnnlm", "rnnlm", "k40x2", 0, 0},                {"nmt2", "nmt2", "k40x2", 0, 0},
    {"nmt4", "nmt4", "k40x4", 0, 0},                  {"nmt8", "nmt8", "k40x8", 0, 0},
    {"gnmt4", "gnmt4", "p100x4", 0, 0},               {"bert_base", "bert_base", "p100x4", 0, 0},
    {"synthetic", "synthetic", "k40x4", 0, 0},        {"incep32_8G", "inception_v3", "p100x4", 32, 8},
    {"gnmt128_8G", "gnmt4", "p100x4", 128, 8},
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))

typedef struct cell {
    int ran;      /* 0: model skipped */
    int applied;  /* the method applied */
    int valid;
    double step_s, place_s;
    double bytes;       /* sent between devices in one step */
    int32_t n_used;     /* devices with at least one op */
    char verdict[80];   /* "valid", "OOM gpu:1", ... */
    dp_place_rules rules; /* the list placers' rule set kept */
    char reason[1024];  /* why it cannot apply */
} cell;

/* The ratio a / b of two step times of model k ("-" when b is missing). */
static void fmt_ratio(const cell *a, const cell *b, char *buf, size_t size) {
    if (!a->applied || !b->applied || b->step_s <= 0) snprintf(buf, size, "-");
    else snprintf(buf, size, "%.2f", a->step_s / b->step_s);
}

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

/* Fills row[method] from the reference placements' reports. */
static void fill_cells(const dp_reference *ref, const dp_devices *ds, cell *row) {
    for (int32_t j = 0; j < ref->n; j++) {
        const dp_place_report *rep = &ref->reports[j];
        cell *c = &row[rep->method];
        c->ran = 1;
        c->place_s = rep->place_s;
        c->rules = rep->rules;
        if (rep->status) {
            snprintf(c->reason, sizeof c->reason, "%s", rep->reason);
            continue;
        }
        c->applied = 1;
        c->valid = rep->sim.valid;
        c->step_s = rep->sim.step_time_s;
        c->bytes = (double)rep->sim.transfer_bytes;
        c->n_used = rep->n_used;
        snprintf(c->verdict, sizeof c->verdict, "valid");
        if (!rep->sim.valid) {
            snprintf(c->verdict, sizeof c->verdict, "%s", dp_sim_verdict_name(rep->sim.verdict));
            for (int32_t d = 0; d < rep->sim.n_devices; d++)
                if (rep->sim.device[d].peak_bytes > rep->sim.device[d].memory_bytes) {
                    snprintf(c->verdict, sizeof c->verdict, "OOM %s", ds->devices[d].name);
                    break;
                }
        }
    }
}

/* Prints model k's table: each method's step time, ratios, verdict, time
 * to place, bytes sent, devices used and units; then the paper's times. */
static void print_model(int k, const cell *row, const dp_place_options *opt) {
    const cell *gpu = &row[DP_PLACE_METHOD_GPU], *expert = &row[DP_PLACE_METHOD_EXPERT];
    printf("%-8s %12s %7s %7s  %-16s %12s %12s %5s  %s\n", "method", "step time", "vs gpu", "vs exp", "verdict",
           "place time", "crossing", "used", "units");
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        const cell *c = &row[m];
        char units[64] = "-";
        if (m > DP_PLACE_METHOD_EXPERT)
            snprintf(units, sizeof units, "%s%s%s", dp_place_group_name(dp_place_group_of((dp_place_method)m, opt)),
                     c->rules != DP_PLACE_RULES_BEST ? ", rules " : "",
                     c->rules != DP_PLACE_RULES_BEST ? dp_place_rules_name(c->rules) : "");
        if (!c->applied) {
            printf("%-8s cannot apply: %s\n", dp_place_method_name((dp_place_method)m), c->reason);
            continue;
        }
        char cross[32], vg[16], ve[16];
        fmt_bytes(c->bytes, cross, sizeof cross);
        fmt_ratio(c, gpu, vg, sizeof vg);
        fmt_ratio(c, expert, ve, sizeof ve);
        printf("%-8s %10.4f s %7s %7s  %-16s %9.1f ms %12s %5d  %s\n", dp_place_method_name((dp_place_method)m),
               c->step_s, vg, ve, c->verdict, c->place_s * 1e3, cross, c->n_used, units);
    }
    if (gpu->applied && !gpu->valid)
        printf("(vs gpu: against one GPU's simulated step time, though it does not fit: %s)\n", gpu->verdict);
    for (const dp_zoo_paper_row *r = dp_zoo_paper_table(); r->model; r++)
        if (!models[k].batch && !strcmp(r->model, models[k].model) && !strcmp(r->devices, models[k].devices)) {
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
}

/* Runs every asked-for method on model k into row (skipped, with a line,
 * when the zoo cannot build it), the reference's placers on `threads`
 * threads, and prints its table: 0, or 1 after a message on an error. */
static int run_model(int k, const dp_place_options *opt, const char *only_methods, int32_t threads, cell *row) {
    dp_error err;
    double t0 = dp_now_s();
    dp_graph *g = dp_zoo_build(models[k].model, models[k].batch, &err);
    if (!g) {
        printf("== %s on %s: skipped (%s)\n\n", models[k].label, models[k].devices, err.msg);
        return 0;
    }
    double build_s = dp_now_s() - t0;
    dp_devices *ds = dp_devices_preset(models[k].devices, &err);
    for (int32_t d = 0; ds && models[k].gpu_gib && d < ds->n_devices; d++)
        if (ds->devices[d].kind == DP_DEVKIND_GPU) ds->devices[d].memory_bytes = (uint64_t)models[k].gpu_gib << 30;
    dp_sim *sim = ds ? dp_sim_init(g, ds, &err) : NULL;
    if (!ds || !sim) {
        fprintf(stderr, "bench_baseline: %s: %s\n", models[k].model, err.msg);
        return 1;
    }
    char batch[32] = "";
    if (models[k].batch) snprintf(batch, sizeof batch, " at batch %lld", (long long)models[k].batch);
    printf("== %s: %s%s on %s%s: %d ops (built in %.2f s)\n", models[k].label, models[k].model, batch,
           models[k].devices, models[k].gpu_gib ? " with GPUs of 8 GiB" : "", g->n_ops, build_s);
    dp_place_method list[DP_PLACE_METHOD_COUNT];
    int32_t n_list = 0;
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        if (m > DP_PLACE_METHOD_EXPERT && !wanted(only_methods, dp_place_method_name((dp_place_method)m))) {
            snprintf(row[m].reason, sizeof row[m].reason, "not asked for (--methods)");
            row[m].ran = 1;
            continue;
        }
        list[n_list++] = (dp_place_method)m;
    }
    dp_reference_options ro = dp_reference_options_default();
    ro.place = *opt, ro.methods = list, ro.n_methods = n_list, ro.bound = 0;
    ro.threads = threads;
    dp_reference ref;
    if (dp_reference_compute(sim, g, ds, &ro, &ref, &err)) {
        fprintf(stderr, "bench_baseline: %s: %s\n", models[k].model, err.msg);
        return 1;
    }
    fill_cells(&ref, ds, row);
    dp_reference_free(&ref);
    print_model(k, row, opt);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return 0;
}

/* Prints the matrices over every model run: step time, step time against
 * one GPU's and the expert's, bytes sent, time to place. */
static void print_summary(cell table[N_MODELS][DP_PLACE_METHOD_COUNT]) {
    /* the matrix: step time in seconds; * = invalid (out of memory), - = cannot apply */
    printf("step time (s) by method and model; * invalid (out of memory), - cannot apply\n%-8s", "method");
    for (int k = 0; k < N_MODELS; k++)
        if (table[k][0].ran) printf(" %13s", models[k].label);
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
    /* step time relative to one GPU and to the expert, bytes sent */
    for (int which = 0; which < 3; which++) {
        static const char *title[3] = {
            "step time / one GPU's (gpu); * the method's placement invalid, ! the model does not fit one GPU",
            "step time / the expert's; * the method's placement invalid, - no expert or cannot apply",
            "bytes sent between devices per step (GiB)"};
        printf("\n%s\n%-8s", title[which], "method");
        for (int k = 0; k < N_MODELS; k++)
            if (table[k][0].ran) {
                const cell *gpu = &table[k][DP_PLACE_METHOD_GPU];
                printf(" %12s%s", models[k].label, which == 0 && gpu->applied && !gpu->valid ? "!" : " ");
            }
        printf("\n");
        for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
            printf("%-8s", dp_place_method_name((dp_place_method)m));
            for (int k = 0; k < N_MODELS; k++) {
                const cell *c = &table[k][m];
                if (!c->ran) continue;
                const cell *ref = which == 0 ? &table[k][DP_PLACE_METHOD_GPU] : &table[k][DP_PLACE_METHOD_EXPERT];
                if (which == 2) {
                    if (c->applied) printf(" %12.3f ", c->bytes / (1024.0 * 1024 * 1024));
                    else printf(" %13s", "-");
                    continue;
                }
                char r[16];
                fmt_ratio(c, ref, r, sizeof r);
                if (!strcmp(r, "-")) {
                    printf(" %13s", r);
                    continue;
                }
                printf(" %12s%s", r, c->valid ? " " : "*");
            }
            printf("\n");
        }
    }
    printf("\ntime to place (ms)\n%-8s", "method");
    for (int k = 0; k < N_MODELS; k++)
        if (table[k][0].ran) printf(" %13s", models[k].label);
    printf("\n");
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        printf("%-8s", dp_place_method_name((dp_place_method)m));
        for (int k = 0; k < N_MODELS; k++)
            if (table[k][m].ran) printf(" %13.1f", table[k][m].place_s * 1e3);
        printf("\n");
    }
}

int main(int argc, char **argv) {
    const char *only = NULL, *only_methods = NULL;
    long seed = 1, n_groups = 256, threads = 1;
    int32_t group = DP_PLACE_GROUP_DEFAULT;
    int forward_only = 1;
    dp_place_rules rules = DP_PLACE_RULES_BEST;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--models") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--methods") && i + 1 < argc) only_methods = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--group") && i + 1 < argc && !dp_place_group_from_name(argv[i + 1], &group)) i++;
        else if (!strcmp(argv[i], "--groups") && i + 1 < argc && strtol(argv[i + 1], NULL, 10) >= 1)
            n_groups = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--forward-only") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "yes") || !strcmp(argv[i + 1], "no")))
            forward_only = !strcmp(argv[++i], "yes");
        else if (!strcmp(argv[i], "--rules") && i + 1 < argc && !dp_place_rules_from_name(argv[i + 1], &rules))
            i++;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc && strtol(argv[i + 1], NULL, 10) >= 1)
            threads = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_baseline [--models a,b,...] [--methods a,b,...] [--seed N] "
                            "[--group METHOD [--groups N]] [--forward-only yes|no]\n"
                            "                      [--rules best|dataflow|paper] [--threads N]\n"
                            "  METHOD: none, colocation, metis, scotch, fluid, random, default\n");
            return 2;
        }
    }
    static cell table[N_MODELS][DP_PLACE_METHOD_COUNT];
    dp_place_options opt = dp_place_options_default();
    opt.expert = dp_zoo_expert_placement;
    opt.seed = (uint64_t)seed;
    opt.group = group;
    opt.n_groups = (int32_t)n_groups;
    opt.forward_only = forward_only;
    opt.rules = rules;
    double t_all = dp_now_s();
    for (int k = 0; k < N_MODELS; k++) {
        if (!wanted(only, models[k].label)) continue;
        if (run_model(k, &opt, only_methods, (int32_t)threads, table[k])) return 1;
    }
    print_summary(table);
    printf("\ntotal %.1f s\n", dp_now_s() - t_all);
    return 0;
}
