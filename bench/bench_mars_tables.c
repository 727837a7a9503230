/* bench_mars_tables: Mars's Tables 1-3 (the Mars paper) beside dplace's, on four
 * P100s (p100x4) with inception_v3, gnmt4 and bert_base.
 *
 *   Table 1   placers on the pre-trained encoder's fixed representations
 *             (encoder-train=no): the plain seq2seq over the whole op
 *             sequence (mars-seq2seq), the Transformer-XL (mars-trfxl), the
 *             segment-level seq2seq (mars)
 *   Table 2   human expert, single GPU, the grouper-placer (the Hierarchical
 *             Planner, hp), the encoder-placer (GDP: Transformer-XL on a
 *             GCN trained from scratch, for GDP's GraphSAGE), Mars, Mars
 *             without pre-training
 *   Table 3   Mars trained directly on the graph, and fine-tuned from a
 *             policy trained on a graph of a similar type and of a
 *             different type (dplace optimize --init), with the same total
 *             number of updates: the source run gets UPDATES - FINETUNE
 *             updates, the fine-tuning FINETUNE, the direct run UPDATES
 *
 * Each learned cell is one run, the job `dplace optimize` runs
 * (include/dplace/optimize.h; Table 3's fine-tuning with --init), seed 1,
 * scored by the simulator without noise; a cell prints the paper's value, dplace's best, the placements it
 * took to find it and the run's wall time (pre-training included). The
 * Hierarchical Planner gets as many placements as a Mars run (UPDATES x
 * its 20), and so does EAGLE (not in Mars's tables; the target
 * compares Mars with it: printed after the tables), and so does mars-dplace
 * (Mars with dplace's sequence prior, not in the paper: printed with the
 * targets). Mars's sources for Table 3 (the paper's in brackets):
 * inception_v3 from resnet152 [VGG16] and from gnmt4 [GNMT-4], gnmt4 from
 * nmt2 [a seq2seq model] and from inception_v3 [Inception-V3], bert_base
 * from bert_base at batch 8 [a Transformer: the zoo has no other] and from
 * resnet152 [VGG16]. The gnmt4 and inception_v3 sources are the Table 2
 * Mars runs of those graphs, saved after UPDATES - FINETUNE updates.
 *
 * The paper's networks (GCN 3 x 256, LSTMs of 512, 1,000 pre-training
 * iterations) take minutes per update on gnmt4 on the 2-core machine, so
 * by default the networks are shrunk (DPLACE_MARS_SIZES=small: GCN and
 * LSTM widths 32, attention 32, device embedding 16, Transformer-XL width
 * 32 with 4 heads and 128 feed-forward units, 200 pre-training iterations,
 * every segment kept for the backward); DPLACE_MARS_SIZES=paper runs the
 * presets as they are. Every algorithmic setting is the preset's.
 *
 * usage: bench_mars_tables [UPDATES [MODEL...]]
 *        defaults: 10 inception_v3 gnmt4 bert_base
 * DPLACE_THREADS (default 2): threads of the policy and the evaluator.
 * DPLACE_MARS_RUNS=t1-seq2seq,t1-trfxl,...: only these runs (names below).
 * DPLACE_MARS_FINETUNE (default 3): Table 3's fine-tuning updates.
 * Not a test: run it by hand (bench/README.md; docs/results/bench_mars_tables.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "dplace/nn.h"
#include "dplace/optimize.h"
#include "dplace/place.h"
#include "dplace/reference.h"
#include "dplace/zoo.h"

#include "bench_mars_sizes.h"
#include "bench_models.h"

/* One learned run: an agent preset and its overrides. */
typedef struct run_def {
    const char *name, *preset;
    const char *set[3][2];
} run_def;

enum { R_T1_S2S, R_T1_TXL, R_T1_SEG, R_GP, R_EP, R_MARS, R_MARS_NP, R_EAGLE, R_MARS_DP, R_T3_SIM, R_T3_DIFF, R_COUNT };
static const run_def runs[R_COUNT] = {
    {"t1-seq2seq", "mars-seq2seq", {{"encoder-train", "no"}}},
    {"t1-trfxl", "mars-trfxl", {{"encoder-train", "no"}}},
    {"t1-seg", "mars", {{"encoder-train", "no"}}},
    {"grouper-placer", "hp", {{0}}},
    {"encoder-placer", "mars-trfxl", {{"pretrain-iters", "0"}}},
    {"mars", "mars", {{0}}},
    {"mars-nopretrain", "mars-nopretrain", {{0}}},
    {"eagle", "eagle", {{0}}},
    /* not in Mars's tables: Mars with dplace's sequence prior (docs/agents.md) */
    {"mars-dplace", "mars-dplace", {{0}}},
    {"t3-similar", "mars", {{0}}},
    {"t3-different", "mars", {{0}}},
};

/* The paper's values (seconds; INFINITY: OOM). */
enum { M_INCEPTION, M_GNMT, M_BERT, M_COUNT };
static const char *const model_names[M_COUNT] = {"inception_v3", "gnmt4", "bert_base"};
static const double t1[M_COUNT][3] = {{0.100, 0.067, 0.067}, {2.040, 1.449, 1.440}, {12.529, 11.363, 9.821}};
static const double t2[M_COUNT][6] = {{0.071, 0.071, 0.067, 0.067, 0.067, 0.067},
                                      {1.661, INFINITY, 1.418, 1.437, 1.379, 1.396},
                                      {INFINITY, INFINITY, 12.661, 11.737, 9.214, 11.363}};
static const double t3[M_COUNT][3] = {{0.067, 0.067, 0.067}, {1.379, 1.422, 1.472}, {9.214, 10.127, 12.426}};

/* Table 3's sources: model name, zoo batch (0: the paper's), and whether
 * it is a Table 2 Mars run of this bench. */
typedef struct source_def {
    const char *model;
    int32_t batch;
    const char *label;
} source_def;
static const source_def similar_src[M_COUNT] = {
    {"resnet152", 0, "resnet152 [VGG16]"}, {"nmt2", 0, "nmt2 [seq2seq]"}, {"bert_base", 8, "bert_base b8 [Transformer]"}};
static const source_def different_src[M_COUNT] = {
    {"gnmt4", 0, "gnmt4 [GNMT-4]"}, {"inception_v3", 0, "inception_v3 [Inception-V3]"}, {"resnet152", 0, "resnet152 [VGG16]"}};

typedef struct result {
    int done, refused;
    char why[1024];     /* refused: the agent's reason */
    double best_s;      /* INFINITY: no valid placement */
    int64_t best_at;    /* placements evaluated when it was found (1-based) */
    double wall_s, pretrain_s;
    double valid_frac;
    double first_mean;  /* mean step time of the first update's valid samples (NaN: none) */
    double first_best;  /* best after the first update */
    int64_t n;          /* curve: best so far after each update */
    int64_t *at;
    double *best;
} result;

static int small_sizes = 1;

static int wanted(const char *name) {
    const char *only = getenv("DPLACE_MARS_RUNS");
    if (!only || !*only) return 1;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

/* What a run's hook keeps: the first update's mean, the best after each
 * update, the valid share, the policy saved after save_at updates, a
 * progress line every 60 s. */
typedef struct mars_watch {
    const dp_graph *g;
    const run_def *rd;
    result *out;
    dp_agent *a;
    const char *save_path;
    long save_at, total;
    double t0, last_print;
    int64_t valid, all;
    dp_status st;
    dp_error err;
} mars_watch;

static void mars_stepped(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    (void)phase, (void)m;
    mars_watch *w = user;
    double sum = 0.0;
    int nv = 0;
    for (int k = 0; k < s->n_last; k++) {
        w->valid += s->last[k].valid, w->all++;
        if (s->last[k].valid) sum += s->last[k].step_time_s, nv++;
    }
    if (s->updates == 1) w->out->first_mean = nv ? sum / nv : NAN, w->out->first_best = s->best_s;
    w->out->at[w->out->n] = s->samples;
    w->out->best[w->out->n++] = s->best_s;
    if (w->save_path && s->updates == w->save_at && !w->st) w->st = dp_agent_save(w->a, w->save_path, &w->err);
    double now = dp_now_s();
    if (now - w->last_print > 60) {
        fprintf(stderr, "bench_mars_tables: %s %s: update %lld/%ld, best %.4f s, %.0f s\n", w->g->name, w->rd->name,
                (long long)s->updates, w->total, s->best_s, now - w->t0);
        w->last_print = now;
    }
}

/* The job of rd on g as a front end passes it: the preset, the bench's
 * sizes, the run's overrides, --init's networks, `updates` updates
 * (Mars-type runs: of 20 placements; others: as many placements, *total
 * the updates that makes); no baselines (the bench prices the expert and
 * single GPU itself; none of these presets searches after training). set
 * has room for BENCH_MARS_SETS_MAX + 3. */
static dp_optimize *start_job(const dp_graph *g, const dp_devices *ds, const run_def *rd, long updates, int threads,
                              const char *init, dp_optimize_set *set, long *total, dp_error *err) {
    int n = small_sizes ? bench_mars_sets(rd->preset, set) : 0;
    for (int k = 0; k < 3 && rd->set[k][0]; k++) set[n++] = (dp_optimize_set){rd->set[k][0], rd->set[k][1]};
    dp_optimize_options o = dp_optimize_options_default();
    o.g = g, o.ds = ds, o.agent = rd->preset, o.sets = set, o.n_sets = n, o.threads = threads;
    o.baselines = "none", o.init_policy_path = init;
    dp_optimize_plan plan;
    if (dp_optimize_prepare(&o, &plan, err)) return NULL;
    const dp_agent_config *c = &plan.settings.agent;
    *total = c->encoder.kind == DP_AGENT_ENCODER_NONE ? (updates * 20 + c->train.batch - 1) / c->train.batch : updates;
    o.max_updates = *total;
    return dp_optimize_init(&o, err);
}

/* Runs `updates` updates of rd on g (Mars-type runs: `updates` of 20
 * placements; others: as many placements). init: start from that
 * checkpoint's networks; save_path: write a checkpoint after save_at
 * updates. A configuration the job refuses (INVALID) is a refused cell,
 * not an error. */
static int run_one(const dp_graph *g, const dp_devices *ds, const run_def *rd, long updates, int threads,
                   const char *init, const char *save_path, long save_at, result *out) {
    dp_error err;
    memset(out, 0, sizeof *out);
    out->best_s = INFINITY;
    dp_optimize_set set[BENCH_MARS_SETS_MAX + 3];
    long total = 0;
    dp_optimize *op = start_job(g, ds, rd, updates, threads, init, set, &total, &err);
    if (!op) {
        if (err.status != DP_STATUS_INVALID) return fprintf(stderr, "bench_mars_tables: %s: %s\n", rd->name, err.msg), 1;
        out->done = out->refused = 1;
        snprintf(out->why, sizeof out->why, "%s", err.msg);
        return 0;
    }
    out->at = calloc((size_t)total, sizeof *out->at);
    out->best = calloc((size_t)total, sizeof *out->best);
    if (!out->at || !out->best) return dp_optimize_free(op), 1;
    out->first_mean = NAN;
    mars_watch w = {g, rd, out, dp_optimize_agent(op), save_path, save_at, total, dp_now_s(), dp_now_s(), 0, 0,
                    DP_STATUS_OK, {0}};
    dp_optimize_hooks hooks = {&w, NULL, NULL, mars_stepped, NULL};
    if (dp_optimize_run(op, &hooks, &err) || w.st) {
        fprintf(stderr, "bench_mars_tables: %s: %s\n", rd->name, w.st ? w.err.msg : err.msg);
        dp_optimize_free(op);
        return 1;
    }
    const dp_run_state *s = dp_optimize_state(op);
    out->done = 1;
    out->best_s = s->best_s;
    out->best_at = s->best_sample + 1;
    out->wall_s = dp_now_s() - w.t0;
    out->pretrain_s = s->prep_s;
    out->valid_frac = w.all ? (double)w.valid / w.all : 0;
    dp_optimize_free(op);
    return 0;
}

/* Placements a run needed to reach target (or -1). */
static int64_t reached(const result *r, double target) {
    for (int64_t i = 0; i < r->n; i++)
        if (r->best[i] <= target * (1 + 1e-9)) return r->at[i];
    return -1;
}

static void paper_text(double v, char *buf, size_t n) {
    if (isnan(v)) snprintf(buf, n, "-");
    else if (isinf(v)) snprintf(buf, n, "OOM");
    else snprintf(buf, n, "%.3f", v);
}

static void cell(double paper, const result *r) {
    char p[16];
    paper_text(paper, p, sizeof p);
    if (!r || !r->done) printf(" | %6s %8s %5s %6s", p, "-", "", "");
    else if (r->refused) printf(" | %6s %8s %5s %6s", p, "refused", "", "");
    else if (isinf(r->best_s)) printf(" | %6s %8s %5s %5.0fs", p, "invalid", "", r->wall_s);
    else printf(" | %6s %8.3f %5lld %5.0fs", p, r->best_s, (long long)r->best_at, r->wall_s);
}

static void header(const char *title, const char *const *cols, int n) {
    printf("\n%s\n%-13s", title, "model");
    for (int k = 0; k < n; k++) printf(" | %-28s", cols[k]);
    printf("\n%-13s", "");
    for (int k = 0; k < n; k++) printf(" | %6s %8s %5s %6s", "paper", "dplace", "at", "wall");
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

static dp_graph *build(const char *model, int32_t batch, dp_devices **ds) {
    dp_error err;
    dp_graph *g = dp_zoo_build(model, batch, &err);
    *ds = g ? dp_devices_preset("p100x4", &err) : NULL;
    if (!g || !*ds) fprintf(stderr, "bench_mars_tables: %s\n", err.msg);
    return *ds ? g : NULL;
}

/* Table 3: for each model, the sources (unless a Table 2 run is one),
 * then the fine-tuning from each; 1 when a run failed. */
static int table3(const int *use, char ck[M_COUNT][256], const int *have_ck, long src_updates, long finetune,
                  int threads, result res[M_COUNT][R_COUNT]) {
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        for (int kind = 0; kind < 2; kind++) {
            int r = kind ? R_T3_DIFF : R_T3_SIM;
            if (!wanted(runs[r].name)) continue;
            const source_def *sd = kind ? &different_src[m] : &similar_src[m];
            char path[256];
            int from = -1;
            for (int k = 0; k < M_COUNT; k++)
                if (sd->batch == 0 && strcmp(sd->model, model_names[k]) == 0 && have_ck[k]) from = k;
            if (from >= 0) {
                snprintf(path, sizeof path, "%s", ck[from]);
            } else {
                snprintf(path, sizeof path, "/tmp/bench_mars_tables_%d_src_%s_%d.ck", (int)getpid(), sd->model,
                         (int)sd->batch);
                if (access(path, R_OK) != 0) { /* not trained yet */
                    dp_devices *ds;
                    dp_graph *g = build(sd->model, sd->batch, &ds);
                    if (!g) return 1;
                    result src;
                    run_def rd = runs[R_MARS];
                    if (run_one(g, ds, &rd, src_updates, threads, NULL, path, src_updates, &src)) return 1;
                    fprintf(stderr, "bench_mars_tables: source %s: best %.4f s, %.0f s\n", sd->label, src.best_s,
                            src.wall_s);
                    free(src.at), free(src.best);
                    dp_graph_free(g);
                    dp_devices_free(ds);
                }
            }
            dp_devices *ds;
            dp_graph *g = build(model_names[m], 0, &ds);
            if (!g) return 1;
            if (run_one(g, ds, &runs[r], finetune, threads, path, NULL, 0, &res[m][r])) return 1;
            fprintf(stderr, "bench_mars_tables: %s %s from %s: best %.4f s, %.0f s\n", model_names[m], runs[r].name,
                    sd->label, res[m][r].best_s, res[m][r].wall_s);
            dp_graph_free(g);
            dp_devices_free(ds);
        }
    }
    return 0;
}

/* Tables 1 and 2: the paper's cells beside dplace's. */
static void print_tables_1_2(long updates, int threads, const int *use, result res[M_COUNT][R_COUNT],
                             const double *single, const double *expert) {
    printf("Mars (the Mars paper) Tables 1-3 beside dplace on p100x4: %ld updates of 20 placements per Mars run (the\n"
           "Hierarchical Planner: as many placements), seed 1, simulator without noise, %d threads, networks %s.\n"
           "Cells: paper s | dplace best s | placement when found | wall (pre-training included).\n",
           updates, threads,
           small_sizes ? "shrunk (GCN/LSTM/attention 32, 200 pre-training iterations)" : "at the paper's sizes");
    const char *c1[] = {"Seq2seq (whole sequence)", "Trf-XL", "Seq2seq (segment)"};
    header("Table 1: placers on the pre-trained encoder's fixed representations", c1, 3);
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        printf("%-13s", model_names[m]);
        cell(t1[m][0], &res[m][R_T1_S2S]), cell(t1[m][1], &res[m][R_T1_TXL]), cell(t1[m][2], &res[m][R_T1_SEG]);
        printf("\n");
    }
    for (int m = 0; m < M_COUNT; m++)
        if (use[m] && res[m][R_T1_S2S].refused)
            printf("  %s seq2seq refused: %s\n", model_names[m], res[m][R_T1_S2S].why);

    printf("\nTable 2: approaches (human expert and GPU only: paper | dplace)\n%-13s | %-15s | %-15s", "model",
           "human expert", "GPU only");
    const char *c2[] = {"Grouper-Placer (hp)", "Encoder-Placer (GCN+TrfXL)", "Mars", "Mars (no pre-training)"};
    for (int k = 0; k < 4; k++) printf(" | %-28s", c2[k]);
    printf("\n");
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        char a[16], b[16];
        printf("%-13s", model_names[m]);
        for (int k = 0; k < 2; k++) {
            double d = k == 0 ? expert[m] : single[m];
            paper_text(t2[m][k], a, sizeof a);
            if (isinf(d)) snprintf(b, sizeof b, "OOM/n.a.");
            else snprintf(b, sizeof b, "%.3f", d);
            printf(" | %6s %8s", a, b);
        }
        cell(t2[m][2], &res[m][R_GP]), cell(t2[m][3], &res[m][R_EP]), cell(t2[m][4], &res[m][R_MARS]);
        cell(t2[m][5], &res[m][R_MARS_NP]);
        printf("\n");
    }
}

/* Table 3, the targets' questions, the pre-training and the valid share. */
static void print_table_3(long updates, long finetune, const int *use, result res[M_COUNT][R_COUNT]) {
    const char *c3[] = {"Direct training (mars)", "Generalised: similar type", "Generalised: different type"};
    printf("\nTable 3: Mars directly (%ld updates) and fine-tuned for %ld updates from a policy trained %ld updates "
           "on another graph\n",
           updates, finetune, updates - finetune);
    header("", c3, 3);
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        printf("%-13s", model_names[m]);
        cell(t3[m][0], &res[m][R_MARS]), cell(t3[m][1], &res[m][R_T3_SIM]), cell(t3[m][2], &res[m][R_T3_DIFF]);
        printf("\n");
    }
    printf("sources: ");
    for (int m = 0; m < M_COUNT; m++)
        if (use[m])
            printf("%s <- %s, %s; ", model_names[m], similar_src[m].label, different_src[m].label);
    printf("\n");

    printf("\nThe targets' questions\n");
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        const result *e = &res[m][R_EAGLE], *h = &res[m][R_GP], *mm = &res[m][R_MARS];
        if (e->done && h->done && mm->done)
            printf("%-13s best step time, same placements: Mars %.3f s, EAGLE %.3f s, Hierarchical Planner %.3f s\n",
                   model_names[m], mm->best_s, e->best_s, h->best_s);
        const result *dp = &res[m][R_MARS_DP];
        if (dp->done && !dp->refused)
            printf("%-13s Mars with dplace's prior (op-order=dfs, stick=5): best %.3f s at placement %lld, first "
                   "update's mean %.3f s, %.0f s\n",
                   model_names[m], dp->best_s, (long long)dp->best_at, dp->first_mean, dp->wall_s);
        const result *ma = &res[m][R_MARS], *np = &res[m][R_MARS_NP];
        if (ma->done && np->done && !ma->refused && !np->refused && isfinite(ma->best_s) && isfinite(np->best_s)) {
            double target = fmax(ma->best_s, np->best_s); /* a level both reached */
            printf("%-13s pre-training: placements to reach %.3f s: mars %lld, no pre-training %lld\n", model_names[m],
                   target, (long long)reached(ma, target), (long long)reached(np, target));
        }
        printf("%-13s first update (mean of valid samples / best):", model_names[m]);
        const int rr[] = {R_MARS, R_T3_SIM, R_T3_DIFF};
        const char *nm[] = {"scratch", "similar", "different"};
        for (int k = 0; k < 3; k++) {
            const result *r = &res[m][rr[k]];
            if (r->done && !r->refused) printf("  %s %.3f / %.3f", nm[k], r->first_mean, r->first_best);
        }
        printf("\n");
    }
    printf("\nPre-training seconds and valid share of sampled placements\n%-13s", "model");
    for (int r = 0; r < R_COUNT; r++) printf(" %15s", runs[r].name);
    printf("\n");
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        printf("%-13s", model_names[m]);
        for (int r = 0; r < R_COUNT; r++)
            if (res[m][r].done && !res[m][r].refused)
                printf(" %7.0fs %5.0f%%", res[m][r].pretrain_s, 100 * res[m][r].valid_frac);
            else printf(" %15s", "-");
        printf("\n");
    }
}

static void print_tables(long updates, long finetune, int threads, const int *use, result res[M_COUNT][R_COUNT],
                         const double *single, const double *expert) {
    print_tables_1_2(updates, threads, use, res, single, expert);
    print_table_3(updates, finetune, use, res);
}

int main(int argc, char **argv) {
    long updates = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
    const char *fe = getenv("DPLACE_MARS_FINETUNE");
    long finetune = fe ? strtol(fe, NULL, 10) : 3;
    if (updates < 2 || finetune < 1 || finetune >= updates) {
        fprintf(stderr, "usage: bench_mars_tables [UPDATES [MODEL...]] (UPDATES > DPLACE_MARS_FINETUNE >= 1)\n");
        return 2;
    }
    const char *env = getenv("DPLACE_THREADS");
    int threads = env ? atoi(env) : 2;
    if (threads < 1) threads = 1;
    const char *sz = getenv("DPLACE_MARS_SIZES");
    small_sizes = !(sz && strcmp(sz, "paper") == 0);
    dp_nn_set_threads(threads);
    int use[M_COUNT];
    if (bench_models_pick("bench_mars_tables", "Mars's (inception_v3, gnmt4, bert_base)", model_names, M_COUNT,
                          argc, argv, use))
        return 2;
    long src_updates = updates - finetune;
    char ck[M_COUNT][256];          /* the Table 2 Mars run of each model after src_updates */
    int have_ck[M_COUNT] = {0};
    for (int m = 0; m < M_COUNT; m++)
        snprintf(ck[m], sizeof ck[m], "/tmp/bench_mars_tables_%d_%s.ck", (int)getpid(), model_names[m]);
    static result res[M_COUNT][R_COUNT];
    double single[M_COUNT], expert[M_COUNT];
    for (int m = 0; m < M_COUNT; m++) {
        if (!use[m]) continue;
        dp_devices *ds;
        dp_graph *g = build(model_names[m], 0, &ds);
        if (!g) return 1;
        single[m] = baseline_time(g, ds, DP_PLACE_METHOD_GPU);
        expert[m] = baseline_time(g, ds, DP_PLACE_METHOD_EXPERT);
        for (int r = 0; r <= R_MARS_DP; r++) {
            if (!wanted(runs[r].name)) continue;
            int save = r == R_MARS;
            if (run_one(g, ds, &runs[r], updates, threads, NULL, save ? ck[m] : NULL, src_updates, &res[m][r]))
                return 1;
            if (save && res[m][r].done && !res[m][r].refused) have_ck[m] = 1;
            if (res[m][r].refused)
                fprintf(stderr, "bench_mars_tables: %s %s: refused: %s\n", model_names[m], runs[r].name,
                        res[m][r].why);
            else
                fprintf(stderr, "bench_mars_tables: %s %s: best %.4f s at placement %lld, %.0f s\n", model_names[m],
                        runs[r].name, res[m][r].best_s, (long long)res[m][r].best_at, res[m][r].wall_s);
        }
        dp_graph_free(g);
        dp_devices_free(ds);
    }

    if (table3(use, ck, have_ck, src_updates, finetune, threads, res)) return 1;
    for (int m = 0; m < M_COUNT; m++) {
        remove(ck[m]);
        for (int kind = 0; kind < 2; kind++) {
            const source_def *sd = kind ? &different_src[m] : &similar_src[m];
            char path[256];
            snprintf(path, sizeof path, "/tmp/bench_mars_tables_%d_src_%s_%d.ck", (int)getpid(), sd->model,
                     (int)sd->batch);
            remove(path);
        }
    }

    print_tables(updates, finetune, threads, use, res, single, expert);
    for (int m = 0; m < M_COUNT; m++)
        for (int r = 0; r < R_COUNT; r++) free(res[m][r].at), free(res[m][r].best);
    return 0;
}
