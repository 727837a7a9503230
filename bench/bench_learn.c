/* bench_learn: does each learned placer learn? Every preset on its papers'
 * benchmarks, a fixed budget of placements per cell, each run the job
 * `dplace optimize --agent P` runs (include/dplace/optimize.h: a preset
 * with search-after, dplace's, then searches from its best), beside the
 * paper's figure and a control: the best of as many placements sampled
 * from the untrained policy (the preset with train=no and no
 * search-after: its initial networks and any prior it has). Per cell:
 *
 *   paper     the paper's step time for this system (or what the
 *             extraction kept)
 *   best      the job's best after the budget, and the placement where it
 *             was found (budget + 1: the final policy's greedy placement;
 *             "after": by the search after training)
 *   control   the untrained policy's best at the same budget (its greedy
 *             placement included, as the run driver evaluates it)
 *   expert, single GPU, the best baseline placer, the lower bound
 *   first/last the mean sampled step time over the first and the last
 *             tenth of the updates (learning moves it down)
 *   to beat   placements needed to beat the expert and the best baseline
 *             ("after": only the search after training did)
 *   wall      seconds of the job's runs, search-after's included (the
 *             control's not)
 *   greedy    the trained policy's most likely placement (each decision its
 *             argmax): what the policy learned, apart from the luck of
 *             its samples; the run driver evaluates it after the budget
 *             (one simulation, not counted in it) as a candidate for best
 *   trained   the training's own best and its placement: best without the
 *             search after training (the same as best for a preset
 *             without it)
 *
 * usage: bench_learn [--quick] [--preset P[,P...]] [--model M[,M...]] [--devices D[,D...]] [--budget N]
 *                    [--seeds N] [--threads N] [--no-control | --control-only] [--set KEY=VALUE]... [--md FILE]
 *   --quick   the cells of the quick subset, with their quick budgets
 *   --control-only  the control runs alone (the training runs' columns "-"): with
 *             --no-control on another process, a cell's two runs in parallel
 *   --set     applies to every cell's agent (a measurement with and without a change)
 * Mars's presets run at the documented smaller sizes (docs/agents.md).
 * Not a test: run it by hand (bench/README.md; docs/results/bench_learn.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/nn.h"
#include "dplace/optimize.h"
#include "dplace/place.h"
#include "dplace/reference.h"
#include "dplace/zoo.h"

#include "bench_mars_sizes.h"

/* One cell: a preset on a model and device set, its budget of placements
 * (and the quick subset's, 0: not in it), the paper's figure. */
typedef struct cell_def {
    const char *preset, *model, *devices;
    long budget, quick;
    double paper_s; /* NAN: not reported or lost; INFINITY: out of memory */
    const char *source;
} cell_def;

#define LOST NAN
static const cell_def cells[] = {
    /* the Hierarchical Planner, its paper's Table 1 (1,000 updates of 4, README's budget) */
    {"hp", "inception_v3", "k40x2", 4000, 0, 0.13, "HP T1"},
    {"hp", "resnet152", "k40x2", 4000, 0, 1.18, "HP T1"},
    {"hp", "rnnlm", "k40x2", 4000, 0, 1.57, "HP T1"},
    {"hp", "nmt2", "k40x2", 4000, 0, 0.84, "HP T1"},
    {"hp", "nmt4", "k40x4", 4000, 1000, 1.69, "HP T1"},
    {"hp", "nmt8", "k40x8", 4000, 0, 4.07, "HP T1"},
    /* ColocRL, its paper's Table 1 (its numbers were lost in the extraction) */
    {"colocrl", "rnnlm", "k40x2", 1000, 0, LOST, "ColocRL T1"},
    {"colocrl", "rnnlm", "k40x4", 1000, 0, LOST, "ColocRL T1"},
    {"colocrl", "nmt2", "k40x2", 1000, 0, LOST, "ColocRL T1"},
    {"colocrl", "nmt2", "k40x4", 1000, 0, LOST, "ColocRL T1"},
    {"colocrl", "inception_v3", "k40x2", 1000, 0, LOST, "ColocRL T1"},
    {"colocrl", "inception_v3", "k40x4", 1000, 0, LOST, "ColocRL T1"},
    /* EAGLE and Post, the EAGLE paper's Table IV */
    {"eagle", "inception_v3", "p100x4", 1000, 0, 0.067, "EAGLE T4"},
    {"eagle", "gnmt4", "p100x4", 1000, 500, 1.379, "EAGLE T4"},
    {"eagle", "bert_base", "p100x4", 1000, 0, 2.287, "EAGLE T4"},
    {"eagle-ppo-ce", "inception_v3", "p100x4", 1000, 0, 0.067, "EAGLE T4"},
    {"eagle-ppo-ce", "gnmt4", "p100x4", 1000, 0, 1.503, "EAGLE T4"},
    {"eagle-ppo-ce", "bert_base", "p100x4", 1000, 0, 2.488, "EAGLE T4"},
    {"post", "inception_v3", "p100x4", 1000, 0, 0.067, "EAGLE T4"},
    {"post", "gnmt4", "p100x4", 1000, 0, 2.031, "EAGLE T4"},
    {"post", "bert_base", "p100x4", 1000, 500, 2.812, "EAGLE T4"},
    /* Mars, its Table 2 */
    {"mars", "inception_v3", "p100x4", 1000, 200, 0.067, "Mars T2"},
    {"mars", "gnmt4", "p100x4", 1000, 0, 1.379, "Mars T2"},
    {"mars", "bert_base", "p100x4", 1000, 0, 9.214, "Mars T2"},
    /* dplace's own preset (Post's policy with elite refinement; README's main job) on the papers' benchmarks,
     * beside the best seed system's figure, and on two pairs no preset was tuned on */
    {"dplace", "nmt4", "k40x4", 4000, 0, 1.69, "HP T1"},
    {"dplace", "rnnlm", "k40x2", 1000, 0, 1.57, "HP T1"},
    {"dplace", "resnet152", "k40x2", 1000, 0, 1.18, "HP T1"},
    {"dplace", "inception_v3", "p100x4", 1000, 0, 0.067, "EAGLE T4"},
    {"dplace", "gnmt4", "p100x4", 1000, 0, 1.379, "EAGLE T4"},
    {"dplace", "bert_base", "p100x4", 1000, 0, 2.287, "EAGLE T4"},
    {"dplace", "synthetic", "k40x4", 1000, 0, LOST, "untuned"},
    {"dplace", "rnnlm", "p100x4", 1000, 0, LOST, "untuned"},
};
#define N_CELLS ((int)(sizeof cells / sizeof cells[0]))

#define MAX_SETS 32
static dp_optimize_set sets[MAX_SETS]; /* --set, split at '=' */
static int n_sets;

/* The references of a graph and device set. */
typedef struct refs {
    double expert_s, gpu_s, base_s, bound_s;
    const char *base_name;
} refs;

#define AT_AFTER (-2) /* beaten or found by search-after */

/* What one run gives. */
typedef struct outcome {
    int ok;
    double best_s, first_s, last_s, wall_s;
    double train_s;  /* the training's own best (best_s without search-after) */
    double greedy_s; /* the trained policy's most likely placement (inf: out of memory) */
    int64_t best_at, train_at, beat_expert, beat_base; /* placements (1-based); -1: never; AT_AFTER */
} outcome;

/* The job's hooks: when the best first beat the expert and the best
 * baseline (in search-after: AT_AFTER), a progress line every 60 s. */
typedef struct watch {
    const refs *r;
    const char *label;
    outcome *o;
    double t0, last;
} watch;

static void stepped(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    (void)m;
    watch *w = user;
    int64_t at = phase == DP_OPTIMIZE_TRAIN ? s->best_sample + 1 : AT_AFTER;
    if (w->o->beat_expert == -1 && s->best_s < w->r->expert_s) w->o->beat_expert = at;
    if (w->o->beat_base == -1 && s->best_s < w->r->base_s) w->o->beat_base = at;
    double now = dp_now_s();
    if (now - w->last > 60) {
        fprintf(stderr, "bench_learn: %s%s: %lld placements, best %.4f s, mean %.4f s, %.0f s\n", w->label,
                phase == DP_OPTIMIZE_TRAIN ? "" : " search-after", (long long)s->samples, s->best_s, s->upd.mean_s,
                now - w->t0);
        w->last = now;
    }
}

/* The training's final greedy placement may have beaten them. */
static void ended(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    if (phase == DP_OPTIMIZE_TRAIN) stepped(user, phase, m, s);
}

/* The job's options for a cell, as a front end passes them: the preset,
 * the bench's sizes, the --set overrides, for the control train=no and no
 * search-after (the control is the untrained policy's samples alone).
 * Every baseline when search-after runs (it starts from their
 * placements); none otherwise (the bench computes its references once per
 * cell). set has room for MAX_SETS + BENCH_MARS_SETS_MAX + 2. */
static int job_options(const dp_graph *g, const dp_devices *ds, const cell_def *cd, long budget, int64_t seed,
                       int train, int threads, dp_optimize_set *set, dp_optimize_options *o, dp_error *err) {
    int n = bench_mars_sets(cd->preset, set);
    for (int k = 0; k < n_sets; k++) set[n++] = sets[k];
    if (!train) set[n++] = (dp_optimize_set){"train", "no"}, set[n++] = (dp_optimize_set){"search-after", "0"};
    *o = dp_optimize_options_default();
    o->g = g, o->ds = ds, o->agent = cd->preset, o->sets = set, o->n_sets = n;
    o->seed = seed, o->threads = threads, o->max_placements = budget;
    o->expert = dp_zoo_expert_placement;
    dp_optimize_plan plan;
    if (dp_optimize_prepare(o, &plan, err)) return 1;
    o->baselines = plan.after_s > 0 ? NULL : "none";
    return 0;
}

/* The outcome of a finished job: its best (search-after's when it ran),
 * the training's own, the run driver's tenths, the wall of both phases. */
static void read_job(const dp_optimize *op, outcome *o) {
    const dp_run_state *s = dp_optimize_state(op);
    const dp_run_result *rr = dp_optimize_result(op);
    dp_optimize_best b;
    dp_optimize_get_best(op, &b);
    dp_search *after = dp_optimize_search_after(op);
    o->ok = 1;
    o->best_s = b.step_time_s;
    o->best_at = strcmp(b.phase, "train") ? AT_AFTER : b.sample + 1;
    o->train_s = s->best_s, o->train_at = s->best_sample + 1;
    o->first_s = rr->first_mean_s, o->last_s = rr->last_mean_s;
    o->wall_s = rr->wall_s + (after ? dp_search_get_state(after)->elapsed_s : 0.0);
    o->greedy_s = s->final_s;
}

/* One job of budget placements (and search-after when the preset has it);
 * o->ok 0 when it could not be built or failed. */
static void run_one(const dp_graph *g, const dp_devices *ds, const cell_def *cd, long budget, int64_t seed, int train,
                    int threads, const refs *r, outcome *o) {
    dp_error err;
    memset(o, 0, sizeof *o);
    o->best_s = o->first_s = o->last_s = o->train_s = NAN;
    o->beat_expert = o->beat_base = o->best_at = o->train_at = -1;
    dp_optimize_set set[MAX_SETS + BENCH_MARS_SETS_MAX + 2];
    dp_optimize_options opt;
    dp_optimize *op = job_options(g, ds, cd, budget, seed, train, threads, set, &opt, &err)
                          ? NULL
                          : dp_optimize_init(&opt, &err);
    if (!op) {
        fprintf(stderr, "bench_learn: %s on %s: %s\n", cd->preset, cd->model, err.msg);
        return;
    }
    char label[128];
    snprintf(label, sizeof label, "%s %s %s%s seed %lld", cd->preset, cd->model, cd->devices,
             train ? "" : " (control)", (long long)seed);
    watch w = {r, label, o, dp_now_s(), dp_now_s()};
    dp_optimize_hooks hooks = {&w, NULL, NULL, stepped, ended};
    if (dp_optimize_run(op, &hooks, &err)) fprintf(stderr, "bench_learn: %s: %s\n", label, err.msg);
    else read_job(op, o);
    dp_optimize_free(op);
}

/* Expert, single GPU, the best baseline placer and the lower bound. */
static int references(const dp_graph *g, const dp_devices *ds, refs *r) {
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    dp_reference_options o = dp_reference_options_default();
    o.place.expert = dp_zoo_expert_placement;
    dp_reference ref;
    if (!sim || dp_reference_compute(sim, g, ds, &o, &ref, &err)) {
        fprintf(stderr, "bench_learn: %s\n", err.msg);
        dp_sim_free(sim);
        return 1;
    }
    r->expert_s = ref.expert_valid ? ref.expert_s : INFINITY;
    r->gpu_s = ref.gpu_valid ? ref.gpu_s : INFINITY;
    r->base_s = ref.best >= 0 ? ref.best_s : INFINITY;
    r->base_name = ref.best >= 0 ? ref.best_name : "none";
    r->bound_s = ref.bound.bound_s;
    dp_reference_free(&ref);
    dp_sim_free(sim);
    return 0;
}

static void fmt_s(char *buf, size_t n, double t) {
    if (isnan(t)) snprintf(buf, n, "-");
    else if (isinf(t)) snprintf(buf, n, "OOM");
    else snprintf(buf, n, "%.3f", t);
}

static void fmt_at(char *buf, size_t n, int64_t at) {
    if (at == AT_AFTER) snprintf(buf, n, "after");
    else if (at < 0) snprintf(buf, n, "never");
    else snprintf(buf, n, "%lld", (long long)at);
}

static int cmp_double(const void *x, const void *y) {
    double u = *(const double *)x, v = *(const double *)y;
    return (u > v) - (u < v);
}

/* A table row for a cell: the median over seeds of each figure (the
 * papers' bests listed when there are several). */
static void print_row(FILE *f, const cell_def *cd, long budget, const refs *r, outcome *o, outcome *ctl, int seeds) {
    double best[64], first[64], last[64], cbest[64], greedy[64], trained[64], wall = 0, cwall = 0;
    int n = 0, nc = 0;
    int64_t be = -1, bb = -1, at = -1, tat = -1;
    for (int k = 0; k < seeds; k++) {
        if (ctl[k].ok) cbest[nc++] = ctl[k].best_s, cwall += ctl[k].wall_s;
        if (!o[k].ok) continue;
        best[n] = o[k].best_s, first[n] = o[k].first_s, last[n] = o[k].last_s, wall += o[k].wall_s;
        greedy[n] = o[k].greedy_s, trained[n] = o[k].train_s;
        if (n == 0) be = o[k].beat_expert, bb = o[k].beat_base, at = o[k].best_at, tat = o[k].train_at;
        n++;
    }
    char p[24], b[24], c[24], e[24], gp[24], bs[24], lb[24], fm[24], lm[24], x1[24], x2[24], gr[24], ba[24], tr[24];
    fmt_s(p, sizeof p, cd->paper_s);
    if (!n && nc) { /* --control-only: the control's best and wall (its own run's) */
        qsort(cbest, (size_t)nc, sizeof cbest[0], cmp_double);
        fmt_s(c, sizeof c, cbest[nc / 2]);
        fprintf(f, "| %s | %s %s | %ld | %s (%s) | - | %s | | | | | | | | | %.0f (control) | | |\n", cd->preset, cd->model,
                cd->devices, budget, p, cd->source, c, cwall / nc);
        fflush(f);
        return;
    }
    if (!n) {
        fprintf(f, "| %s | %s %s | %ld | %s | failed |\n", cd->preset, cd->model, cd->devices, budget, p);
        return;
    }
    qsort(best, (size_t)n, sizeof best[0], cmp_double), qsort(first, (size_t)n, sizeof first[0], cmp_double);
    qsort(last, (size_t)n, sizeof last[0], cmp_double), qsort(cbest, (size_t)nc, sizeof cbest[0], cmp_double);
    fmt_s(b, sizeof b, best[n / 2]), fmt_s(c, sizeof c, nc ? cbest[nc / 2] : NAN);
    fmt_s(e, sizeof e, r->expert_s), fmt_s(gp, sizeof gp, r->gpu_s), fmt_s(bs, sizeof bs, r->base_s);
    fmt_s(lb, sizeof lb, r->bound_s), fmt_s(fm, sizeof fm, first[n / 2]), fmt_s(lm, sizeof lm, last[n / 2]);
    fmt_at(x1, sizeof x1, be), fmt_at(x2, sizeof x2, bb);
    qsort(greedy, (size_t)n, sizeof greedy[0], cmp_double), fmt_s(gr, sizeof gr, greedy[n / 2]);
    qsort(trained, (size_t)n, sizeof trained[0], cmp_double), fmt_s(tr, sizeof tr, trained[n / 2]);
    fmt_at(ba, sizeof ba, at);
    fprintf(f, "| %s | %s %s | %ld | %s (%s) | %s @%s | %s | %s | %s | %s %s | %s | %s -> %s | %s | %s | %.0f | %s | %s @%lld |\n",
            cd->preset, cd->model, cd->devices, budget, p, cd->source, b, ba, c, e, gp, bs, r->base_name, lb, fm, lm,
            x1, x2, wall / n, gr, tr, (long long)tat);
    if (n > 1) {
        fprintf(f, "|  | papers' bests:");
        for (int k = 0; k < n; k++) fprintf(f, " %.3f", best[k]);
        fprintf(f, "; controls':");
        for (int k = 0; k < nc; k++) fprintf(f, " %.3f", cbest[k]);
        fprintf(f, "; greedy:");
        for (int k = 0; k < n; k++) fprintf(f, " %.3f", greedy[k]);
        fprintf(f, " | | | | | | | | | | | | | |\n");
    }
    fflush(f);
}

/* Whether name is in the comma-separated list (NULL: every name). */
static int listed(const char *list, const char *name) {
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    const char *presets = NULL, *models = NULL, *devices = NULL, *md = NULL;
    long budget = 0;
    int quick = 0, seeds = 1, threads = 2, control = 1, learn = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--no-control")) control = 0;
        else if (!strcmp(argv[i], "--control-only")) learn = 0;
        else if (!strcmp(argv[i], "--preset") && i + 1 < argc) presets = argv[++i];
        else if (!strcmp(argv[i], "--model") && i + 1 < argc) models = argv[++i];
        else if (!strcmp(argv[i], "--devices") && i + 1 < argc) devices = argv[++i];
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--md") && i + 1 < argc) md = argv[++i];
        else if (!strcmp(argv[i], "--set") && i + 1 < argc && n_sets < MAX_SETS && strchr(argv[i + 1], '=')) {
            char *eq = strchr(argv[++i], '=');
            *eq = 0, sets[n_sets++] = (dp_optimize_set){argv[i], eq + 1};
        }
        else {
            fprintf(stderr, "usage: bench_learn [--quick] [--preset P,...] [--model M,...] [--devices D,...] [--budget N] "
                            "[--seeds N] [--threads N] [--no-control | --control-only] [--set KEY=VALUE]... [--md FILE]\n");
            return 2;
        }
    }
    if (!learn && !control) return fprintf(stderr, "bench_learn: --no-control and --control-only exclude each other\n"), 2;
    if (seeds < 1 || seeds > 64 || threads < 1) return fprintf(stderr, "bench_learn: bad --seeds or --threads\n"), 2;
    dp_nn_set_threads(threads);
    FILE *out = md ? fopen(md, "w") : stdout;
    if (!out) return fprintf(stderr, "bench_learn: cannot write %s\n", md), 1;
    fprintf(out, "bench_learn: simulator without noise, %d threads, %d seed%s%s", threads, seeds, seeds > 1 ? "s" : "",
            quick ? ", quick subset" : "");
    for (int k = 0; k < n_sets; k++) fprintf(out, "%s--set %s=%s", k ? " " : ", ", sets[k].key, sets[k].value);
    fprintf(out, "\n\n| preset | graph | budget | paper (source) | best @placement | control | expert | 1 GPU | "
                 "best baseline | bound | mean: first -> last tenth | beat expert | beat baseline | wall s | greedy | "
                 "trained @placement |\n"
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    fflush(out);
    for (int ci = 0; ci < N_CELLS; ci++) {
        const cell_def *cd = &cells[ci];
        if ((quick && !cd->quick) || !listed(presets, cd->preset) || !listed(models, cd->model) ||
            !listed(devices, cd->devices))
            continue;
        long b = budget > 0 ? budget : quick ? cd->quick : cd->budget;
        dp_error err;
        dp_graph *g = dp_zoo_build(cd->model, 0, &err);
        dp_devices *ds = g ? dp_devices_preset(cd->devices, &err) : NULL;
        refs r;
        if (!ds || references(g, ds, &r)) {
            if (!ds) fprintf(stderr, "bench_learn: %s\n", err.msg);
            dp_graph_free(g);
            continue;
        }
        outcome o[64], ctl[64];
        for (int k = 0; k < seeds; k++) {
            if (learn) run_one(g, ds, cd, b, (int64_t)k + 1, 1, threads, &r, &o[k]);
            else memset(&o[k], 0, sizeof o[k]);
            if (control) run_one(g, ds, cd, b, (int64_t)k + 1, 0, threads, &r, &ctl[k]);
            else ctl[k].ok = 0;
        }
        print_row(out, cd, b, &r, o, ctl, seeds);
        dp_devices_free(ds);
        dp_graph_free(g);
    }
    if (md) fclose(out);
    return 0;
}
