/* bench_eagle: EAGLE's Tables I-IV (the EAGLE paper) beside dplace's, on four
 * P100s (p100x4) with inception_v3, gnmt4 and bert_base.
 *
 *   Table I    the Hierarchical Planner with the feed-forward, METIS and
 *              fluid-community (the paper's Networkx) groupers
 *   Table II   METIS groups placed by the seq2seq placer with attention
 *              before / after the decoder, and by the GCN placer
 *   Table III  EAGLE trained by REINFORCE, PPO and PPO+CE
 *   Table IV   single GPU, human expert, Hierarchical Planner, Post, EAGLE
 *              (PPO), EAGLE (PPO+CE)
 *
 * Each learned cell is one run of SAMPLES placements (the same budget for
 * every agent, whatever its placements per update), the job `dplace
 * optimize` runs (include/dplace/optimize.h), seed 1, scored by the
 * simulator without noise; a cell prints the paper's value, dplace's best,
 * the placements it took to find it and the run's wall time. The runs are
 * shared between tables (Table I's feed-forward cell is Table IV's
 * Hierarchical Planner, and so on). Last, for each model: how many
 * placements each agent needed to reach the Hierarchical Planner's best.
 *
 * usage: bench_eagle [SAMPLES [MODEL...]]
 *        defaults: 400 inception_v3 gnmt4 bert_base
 * DPLACE_THREADS (default 2): threads of the policy and the evaluator.
 * DPLACE_EAGLE_RUNS=hp,eagle,...: only these runs (names below).
 * Not a test: run it by hand (bench/README.md; docs/results/bench_eagle.md). */
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
#include "bench_models.h"

/* One learned run: an agent preset and its overrides. */
typedef struct run_def {
    const char *name, *preset;
    const char *set[3][2];
} run_def;

enum { R_HP, R_HP_METIS, R_HP_FLUID, R_METIS_BEFORE, R_METIS_GCN, R_EAGLE_RF, R_EAGLE, R_EAGLE_CE, R_POST, R_COUNT };
static const run_def runs[R_COUNT] = {
    {"hp", "hp", {{0}}},
    {"hp-metis", "hp", {{"grouper", "metis"}}},
    {"hp-fluid", "hp", {{"grouper", "fluid"}}},
    {"metis-before", "hp", {{"grouper", "metis"}, {"placer", "seq2seq-before"}}},
    {"metis-gcn", "hp", {{"grouper", "metis"}, {"placer", "gcn"}}},
    {"eagle-reinforce", "eagle", {{"algo", "reinforce"}}},
    {"eagle", "eagle", {{0}}},
    {"eagle-ppo-ce", "eagle-ppo-ce", {{0}}},
    {"post", "post", {{0}}},
};

/* The paper's values (seconds; INFINITY: OOM; NAN: no model) per model. */
enum { M_INCEPTION, M_GNMT, M_BERT, M_COUNT };
static const char *const model_names[M_COUNT] = {"inception_v3", "gnmt4", "bert_base"};
static const double t1[M_COUNT][3] = {{0.067, 0.071, 0.072}, {1.418, 1.537, 2.041}, {5.534, 7.526, 7.584}};
static const double t2[M_COUNT][3] = {{0.067, 0.067, 0.072}, {1.440, 1.418, 2.040}, {4.120, 5.534, 7.214}};
static const double t3[M_COUNT][3] = {{0.067, 0.067, 0.067}, {2.216, 1.379, 1.507}, {2.425, 2.287, 2.488}};
static const double t4[M_COUNT][6] = {{0.071, 0.071, 0.067, 0.067, 0.067, 0.067},
                                      {INFINITY, 1.661, 1.418, 2.031, 1.379, 1.503},
                                      {INFINITY, INFINITY, 5.534, 2.812, 2.287, 2.488}};

typedef struct result {
    int done;
    double best_s;      /* INFINITY: no valid placement */
    int64_t best_at;    /* placements evaluated when it was found (1-based) */
    double wall_s;
    double valid_frac;
    int64_t n;          /* curve: best so far after each update */
    int64_t *at;
    double *best;
} result;

static int wanted(const char *name) {
    const char *only = getenv("DPLACE_EAGLE_RUNS");
    if (!only || !*only) return 1;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

/* What a run's hook keeps: the best after each update, the valid share,
 * a progress line every 30 s. */
typedef struct eagle_watch {
    const dp_graph *g;
    const run_def *rd;
    result *out;
    double t0, last_print;
    int64_t valid, total;
} eagle_watch;

static void eagle_stepped(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    (void)phase, (void)m;
    eagle_watch *w = user;
    for (int k = 0; k < s->n_last; k++) w->valid += s->last[k].valid, w->total++;
    w->out->at[w->out->n] = s->samples;
    w->out->best[w->out->n++] = s->best_s;
    double now = dp_now_s();
    if (now - w->last_print > 30) {
        fprintf(stderr, "bench_eagle: %s %s: %lld placements, best %.4f s, %.0f s\n", w->g->name, w->rd->name,
                (long long)s->samples, s->best_s, now - w->t0);
        w->last_print = now;
    }
}

/* One run as the job `dplace optimize --agent PRESET --set ... --updates U`
 * runs it, U the updates that cover `samples` placements at the preset's
 * batch; no baselines (the bench prices single GPU and the expert itself;
 * none of these presets searches after training). */
static int run_one(const dp_graph *g, const dp_devices *ds, const run_def *rd, long samples, int threads,
                   result *out) {
    dp_error err;
    dp_optimize_set set[3];
    int n = 0;
    for (; n < 3 && rd->set[n][0]; n++) set[n] = (dp_optimize_set){rd->set[n][0], rd->set[n][1]};
    dp_optimize_options o = dp_optimize_options_default();
    o.g = g, o.ds = ds, o.agent = rd->preset, o.sets = set, o.n_sets = n, o.threads = threads;
    o.baselines = "none";
    dp_optimize_plan plan;
    if (dp_optimize_prepare(&o, &plan, &err)) {
        fprintf(stderr, "bench_eagle: %s\n", err.msg);
        return 1;
    }
    long batch = plan.settings.agent.train.batch, updates = (samples + batch - 1) / batch;
    o.max_updates = updates;
    dp_optimize *op = dp_optimize_init(&o, &err);
    if (!op) {
        fprintf(stderr, "bench_eagle: %s: %s\n", rd->name, err.msg);
        return 1;
    }
    out->at = calloc((size_t)updates, sizeof *out->at);
    out->best = calloc((size_t)updates, sizeof *out->best);
    if (!out->at || !out->best) return dp_optimize_free(op), 1;
    eagle_watch w = {g, rd, out, dp_now_s(), dp_now_s(), 0, 0};
    dp_optimize_hooks hooks = {&w, NULL, NULL, eagle_stepped, NULL};
    if (dp_optimize_run(op, &hooks, &err)) {
        fprintf(stderr, "bench_eagle: %s: %s\n", rd->name, err.msg);
        dp_optimize_free(op);
        return 1;
    }
    const dp_run_state *s = dp_optimize_state(op);
    out->done = 1;
    out->best_s = s->best_s;
    out->best_at = s->best_sample + 1;
    out->wall_s = dp_now_s() - w.t0;
    out->valid_frac = w.total ? (double)w.valid / w.total : 0;
    dp_optimize_free(op);
    return 0;
}

/* Placements a run needed to reach target (or -1). */
static int64_t reached(const result *r, double target) {
    for (int64_t i = 0; i < r->n; i++)
        if (r->best[i] <= target * (1 + 1e-9)) return r->at[i];
    return -1;
}

static void cell(double paper, const result *r) {
    char p[16];
    if (isnan(paper)) snprintf(p, sizeof p, "-");
    else if (isinf(paper)) snprintf(p, sizeof p, "OOM");
    else snprintf(p, sizeof p, "%.3f", paper);
    if (!r || !r->done) {
        printf(" | %6s %8s %6s %6s", p, "-", "", "");
        return;
    }
    if (isinf(r->best_s)) printf(" | %6s %8s %6s %5.0fs", p, "invalid", "", r->wall_s);
    else printf(" | %6s %8.3f %6lld %5.0fs", p, r->best_s, (long long)r->best_at, r->wall_s);
}

static void header(const char *title, const char *const *cols, int n) {
    printf("\n%s\n%-13s", title, "model");
    for (int k = 0; k < n; k++) printf(" | %-29s", cols[k]);
    printf("\n%-13s", "");
    for (int k = 0; k < n; k++) printf(" | %6s %8s %6s %6s", "paper", "dplace", "at", "wall");
    printf("\n");
}

/* Placer m's simulated step time (inf: out of memory or cannot apply; NaN:
 * an error). */
static double baseline_time(const dp_graph *g, const dp_devices *ds, dp_place_method m) {
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    double t = NAN;
    dp_reference_options o = dp_reference_options_default();
    o.place.expert = dp_zoo_expert_placement;
    o.methods = &m, o.n_methods = 1, o.bound = 0;
    dp_reference ref;
    if (sim && !dp_reference_compute(sim, g, ds, &o, &ref, &err)) {
        t = ref.best >= 0 ? ref.best_s : INFINITY;
        dp_reference_free(&ref);
    }
    dp_sim_free(sim);
    return t;
}

/* Tables I-IV: the paper's cells beside dplace's. */
static void print_paper_tables(long samples, int threads, const int *use, result res[M_COUNT][R_COUNT],
                               const double *single, const double *expert) {
    printf("EAGLE (the EAGLE paper) Tables I-IV beside dplace on p100x4: %ld placements per learned run, seed 1,\n"
           "simulator without noise, %d threads. Cells: paper s | dplace best s | placements when found | wall.\n",
           samples, threads);
    const char *c1[] = {"feed-forward (hp)", "METIS (hp-metis)", "Networkx fluid (hp-fluid)"};
    header("Table I: Hierarchical Planner with different groupers", c1, 3);
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        printf("%-13s", model_names[m]);
        cell(t1[m][0], &res[m][R_HP]), cell(t1[m][1], &res[m][R_HP_METIS]), cell(t1[m][2], &res[m][R_HP_FLUID]);
        printf("\n");
    }
    const char *c2[] = {"seq2seq before (metis-before)", "seq2seq after (hp-metis)", "GCN (metis-gcn)"};
    header("Table II: METIS groups, different placers", c2, 3);
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        printf("%-13s", model_names[m]);
        cell(t2[m][0], &res[m][R_METIS_BEFORE]), cell(t2[m][1], &res[m][R_HP_METIS]), cell(t2[m][2], &res[m][R_METIS_GCN]);
        printf("\n");
    }
    const char *c3[] = {"REINFORCE", "PPO (eagle)", "PPO+CE (eagle-ppo-ce)"};
    header("Table III: EAGLE trained by different algorithms", c3, 3);
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        printf("%-13s", model_names[m]);
        cell(t3[m][0], &res[m][R_EAGLE_RF]), cell(t3[m][1], &res[m][R_EAGLE]), cell(t3[m][2], &res[m][R_EAGLE_CE]);
        printf("\n");
    }
    printf("\nTable IV: approaches (single GPU and expert: paper | dplace)\n%-13s | %-15s | %-15s", "model",
           "single GPU", "human expert");
    const char *c4[] = {"Hierarchical Planner", "Post", "EAGLE (PPO)", "EAGLE (PPO+CE)"};
    for (int k = 0; k < 4; k++) printf(" | %-29s", c4[k]);
    printf("\n");
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        char a[16], b[16];
        printf("%-13s", model_names[m]);
        for (int k = 0; k < 2; k++) {
            double p = t4[m][k], d = k == 0 ? single[m] : expert[m];
            if (isinf(p)) snprintf(a, sizeof a, "OOM");
            else snprintf(a, sizeof a, "%.3f", p);
            if (isinf(d)) snprintf(b, sizeof b, "invalid");
            else snprintf(b, sizeof b, "%.3f", d);
            printf(" | %6s %8s", a, b);
        }
        cell(t4[m][2], &res[m][R_HP]), cell(t4[m][3], &res[m][R_POST]), cell(t4[m][4], &res[m][R_EAGLE]);
        cell(t4[m][5], &res[m][R_EAGLE_CE]);
        printf("\n");
    }
}

/* When each run reached the Hierarchical Planner's best, and the valid
 * share of its samples. */
static void print_reach(const int *use, result res[M_COUNT][R_COUNT]) {
    printf("\nPlacements each run needed to reach the Hierarchical Planner's best (\"-\": never)\n%-13s %8s",
           "model", "hp best");
    for (int r = 0; r < R_COUNT; r++) printf(" %15s", runs[r].name);
    printf("\n");
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m] || !res[m][R_HP].done) continue;
        double target = res[m][R_HP].best_s;
        printf("%-13s %8.3f", model_names[m], target);
        for (int r = 0; r < R_COUNT; r++) {
            int64_t at = res[m][r].done ? reached(&res[m][r], target) : -1;
            if (at < 0) printf(" %15s", "-");
            else printf(" %15lld", (long long)at);
        }
        printf("\n");
    }
    printf("\nValid share of sampled placements\n%-13s", "model");
    for (int r = 0; r < R_COUNT; r++) printf(" %15s", runs[r].name);
    printf("\n");
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        printf("%-13s", model_names[m]);
        for (int r = 0; r < R_COUNT; r++)
            if (res[m][r].done) printf(" %14.0f%%", 100 * res[m][r].valid_frac);
            else printf(" %15s", "-");
        printf("\n");
    }
}

static void print_tables(long samples, int threads, const int *use, result res[M_COUNT][R_COUNT],
                         const double *single, const double *expert) {
    print_paper_tables(samples, threads, use, res, single, expert);
    print_reach(use, res);
}

int main(int argc, char **argv) {
    long samples = argc > 1 ? strtol(argv[1], NULL, 10) : 400;
    if (samples < 1) {
        fprintf(stderr, "usage: bench_eagle [SAMPLES [MODEL...]]\n");
        return 2;
    }
    const char *env = getenv("DPLACE_THREADS");
    int threads = env ? atoi(env) : 2;
    if (threads < 1) threads = 1;
    dp_nn_set_threads(threads);
    int use[M_COUNT];
    if (bench_models_pick("bench_eagle", "EAGLE's (inception_v3, gnmt4, bert_base)", model_names, M_COUNT, argc,
                          argv, use))
        return 2;
    static result res[M_COUNT][R_COUNT];
    double single[M_COUNT], expert[M_COUNT];
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        dp_error err;
        dp_graph *g = dp_zoo_build(model_names[m], 0, &err);
        dp_devices *ds = g ? dp_devices_preset("p100x4", &err) : NULL;
        if (!g || !ds) {
            fprintf(stderr, "bench_eagle: %s\n", err.msg);
            return 1;
        }
        single[m] = baseline_time(g, ds, DP_PLACE_METHOD_GPU);
        expert[m] = baseline_time(g, ds, DP_PLACE_METHOD_EXPERT);
        for (int r = 0; r < R_COUNT; r++) {
            if (!wanted(runs[r].name)) continue;
            if (run_one(g, ds, &runs[r], samples, threads, &res[m][r])) return 1;
            fprintf(stderr, "bench_eagle: %s %s: best %.4f s at placement %lld, %.0f s\n", model_names[m],
                    runs[r].name, res[m][r].best_s, (long long)res[m][r].best_at, res[m][r].wall_s);
        }
        dp_graph_free(g);
        dp_devices_free(ds);
    }

    print_tables(samples, threads, use, res, single, expert);
    for (int m = 0; m < M_COUNT; m++)
        for (int r = 0; r < R_COUNT; r++) free(res[m][r].at), free(res[m][r].best);
    return 0;
}
