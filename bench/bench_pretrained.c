/* bench_pretrained: the pretrained placer's data and a quick look at it.
 *
 *   bench_pretrained data GRAPH DEVICES PLACEMENT OUT [STEPS SEED]
 *       replays a teacher's placement (dplace-placement v1) through the
 *       decoder and writes up to STEPS of its decisions (default 1200,
 *       drawn with SEED, default 1) to OUT (atomically), the imitation data
 *       bench/pretrain.py reads;
 *   bench_pretrained random OUT [SEED]
 *       a policy of fresh weights (the shipped one's widths): the untrained
 *       control, for `dplace optimize --agent pretrained --init OUT`;
 *   bench_pretrained rl LIST POLICY OUT UPDATES [SAMPLES LR SEED TEMP EVERY]
 *       policy-gradient training of POLICY over the pairs of LIST (a line
 *       "GRAPH DEVICES" each), one pair per update in turn, resumable
 *       (rl's contract below);
 *   bench_pretrained eval GRAPH DEVICES [POLICY] [SAMPLES]
 *       the greedy placement and SAMPLES sampled ones (default 16) of the
 *       policy file (-: the built-in policy; random: fresh weights), simulated, with the
 *       decode time.
 *
 * GRAPH is a zoo model (NAME or NAME:BATCH, synthetic-N) or a graph file
 * (a path ending in .json); DEVICES a preset or a devices file. Exit
 * status: 2 for a usage error, and for an input that cannot be read (a
 * graph, a device set, a placement, a policy, rl's list and training
 * state), in one line; 1 for a failure while running.
 *
 * The data file, little-endian: "DPPTDATA", u32 features, u32 devices
 * (rows per decision), u32 decisions, u32 units; then per decision u64
 * cand, u64 target, u32 action, u32 0, f32 rows[devices, features]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/placement.h"
#include "dplace/pretrained.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

static dp_graph *load_graph(const char *spec, dp_error *err) {
    size_t n = strlen(spec);
    if (n > 5 && !strcmp(spec + n - 5, ".json")) return dp_graph_read_file(spec, err);
    char name[128];
    snprintf(name, sizeof name, "%s", spec);
    char *colon = strchr(name, ':');
    int32_t batch = 0;
    if (colon) *colon = '\0', batch = atoi(colon + 1);
    return dp_zoo_build(name, batch, err);
}

static int data(int argc, char **argv) {
    if (argc < 6) return -1;
    dp_error err = {0};
    int32_t steps = argc > 6 ? atoi(argv[6]) : 1200;
    uint64_t seed = argc > 7 ? strtoull(argv[7], NULL, 10) : 1;
    dp_graph *g = load_graph(argv[2], &err);
    dp_devices *ds = g ? dp_devices_load(argv[3], &err) : NULL;
    int32_t *teacher = g ? malloc(sizeof(int32_t) * (size_t)g->n_ops) : NULL;
    int32_t *out = g ? malloc(sizeof(int32_t) * (size_t)g->n_ops) : NULL;
    dp_pretrained_ctx *c = NULL;
    dp_pretrained_trace tr = {0};
    int rc = 2; /* an input that cannot be read is bad input (2), a failure later 1 */
    if (!ds || (teacher && out && dp_placement_read_file(argv[4], g, ds, teacher, &err))) goto done;
    rc = 1;
    if (!teacher || !out) {
        dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
        goto done;
    }
    dp_units_spec us = dp_units_spec_resolve((dp_units_spec){DP_UNITS_AUTO, 0}, g);
    if (!(c = dp_pretrained_ctx_init(g, ds, us, &err)) || dp_pretrained_trace_init(&tr, c, &err) ||
        dp_pretrained_decode(c, NULL, DP_PRETRAINED_TEACHER, 1, NULL, teacher, out, &tr, NULL, &err))
        goto done;
    /* the decisions with a choice whose teacher's device was offered */
    int32_t *pick = malloc(sizeof(int32_t) * (size_t)(tr.n_steps + 1)), n = 0;
    for (int32_t i = 0; pick && i < tr.n_steps; i++)
        if (dp_mask_count(tr.steps[i].cand) > 1 && tr.steps[i].target) pick[n++] = i;
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    for (int32_t i = 0; i < n && n > steps; i++) { /* a partial shuffle: the first `steps` drawn */
        if (i >= steps) break;
        int32_t j = i + (int32_t)dp_rng_below(&rng, (uint64_t)(n - i)), t = pick[i];
        pick[i] = pick[j], pick[j] = t;
    }
    if (n > steps) n = steps;
    dp_atomic_file af;
    if (!pick || dp_atomic_open(&af, argv[5], &err)) {
        if (!pick) dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
        free(pick);
        goto done;
    }
    FILE *f = af.f;
    uint32_t hdr[4] = {DP_PRETRAINED_FEATURES, (uint32_t)tr.n_devices, (uint32_t)n, (uint32_t)tr.n_steps};
    fwrite("DPPTDATA", 1, 8, f);
    fwrite(hdr, 4, 4, f);
    for (int32_t x = 0; x < n; x++) {
        const dp_pretrained_step *s = &tr.steps[pick[x]];
        uint32_t a[2] = {(uint32_t)s->action, 0};
        fwrite(&s->cand, 8, 1, f), fwrite(&s->target, 8, 1, f), fwrite(a, 4, 2, f);
        fwrite(tr.rows + (size_t)pick[x] * tr.n_devices * DP_PRETRAINED_FEATURES, 4,
               (size_t)tr.n_devices * DP_PRETRAINED_FEATURES, f);
    }
    rc = dp_atomic_commit(&af, &err) ? 1 : 0;
    free(pick);
    /* what placing by units loses of the teacher's placement */
    dp_sim *sim = dp_sim_init(g, ds, &err);
    dp_sim_result r0, r1;
    if (!sim || dp_sim_run(sim, teacher, NULL, &r0, &err) || dp_sim_run(sim, out, NULL, &r1, &err)) rc = 1;
    else
        printf("%s on %s: %d units, %d decisions kept; teacher %.6f s, by units %.6f s%s\n", argv[2], argv[3],
               tr.n_steps, n, r0.step_time_s, r1.step_time_s, r1.valid ? "" : " (not valid)");
    dp_sim_free(sim);
done:
    if (rc && err.status) fprintf(stderr, "bench_pretrained: %s\n", err.msg);
    dp_pretrained_trace_free(&tr);
    dp_pretrained_ctx_free(c);
    free(teacher), free(out);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}

static int eval(int argc, char **argv) {
    if (argc < 4) return -1;
    dp_error err = {0};
    int32_t K = argc > 5 ? atoi(argv[5]) : 16;
    dp_graph *g = load_graph(argv[2], &err);
    dp_devices *ds = g ? dp_devices_load(argv[3], &err) : NULL;
    dp_pretrained_policy *p = NULL;
    const char *ps = argc > 4 ? argv[4] : "-";
    if (ds) p = !strcmp(ps, "random")  ? dp_pretrained_policy_random(64, 64, 1, &err)
                : strcmp(ps, "-") ? dp_pretrained_policy_load(ps, &err)
                                  : dp_pretrained_policy_default(&err);
    int32_t *out = g ? malloc(sizeof(int32_t) * (size_t)g->n_ops) : NULL;
    dp_sim *sim = p ? dp_sim_init(g, ds, &err) : NULL;
    dp_pretrained_ctx *c = NULL;
    int rc = 2; /* an input that cannot be read is bad input (2), a failure later 1 */
    if (!p) goto done;
    rc = 1;
    double t0 = dp_now_s();
    dp_units_spec us = dp_units_spec_resolve((dp_units_spec){DP_UNITS_AUTO, 0}, g);
    if (!sim || !out || !(c = dp_pretrained_ctx_init(g, ds, us, &err))) goto done;
    double t1 = dp_now_s(), best = 1e30;
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    for (int32_t k = -1; k < K; k++) {
        double d0 = dp_now_s();
        if (dp_pretrained_decode(c, p, k < 0 ? DP_PRETRAINED_GREEDY : DP_PRETRAINED_SAMPLE, getenv("PT_TEMP") ? atof(getenv("PT_TEMP")) : 1, &rng, NULL, out, NULL,
                                 NULL, &err))
            goto done;
        double d1 = dp_now_s();
        dp_sim_result r;
        if (dp_sim_run(sim, out, NULL, &r, &err)) goto done;
        if (r.valid && r.step_time_s < best) best = r.step_time_s;
        printf("%-8s %10.6f s %s  (decode %.3f s)\n", k < 0 ? "greedy" : "sample", r.step_time_s,
               r.valid ? "valid" : "INVALID", d1 - d0);
        if (!r.valid) printf("         %s\n", r.reason);
    }
    printf("units %d, context %.3f s, best %.6f s\n", dp_pretrained_ctx_units(c), t1 - t0, best);
    rc = 0;
done:
    if (rc && err.status) fprintf(stderr, "bench_pretrained: %s\n", err.msg);
    dp_pretrained_ctx_free(c);
    dp_sim_free(sim);
    dp_pretrained_policy_free(p);
    free(out);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}

static int random_policy(int argc, char **argv) {
    if (argc < 3) return -1;
    dp_error err = {0};
    dp_pretrained_policy *p = dp_pretrained_policy_random(64, 64, argc > 3 ? strtoull(argv[3], NULL, 10) : 1, &err);
    int rc = p && !dp_pretrained_policy_save(p, argv[2], &err) ? 0 : 1;
    if (rc) fprintf(stderr, "bench_pretrained: %s\n", err.msg);
    dp_pretrained_policy_free(p);
    return rc;
}

/* ---- policy-gradient training over many pairs ---------------------------- */

/* One training pair of `rl`, loaded once: graph, devices, simulator and the
 * decoder's context. */
typedef struct rl_pair {
    char name[1040];
    dp_graph *g;
    dp_devices *ds;
    dp_sim *sim;
    dp_pretrained_ctx *c;
    int32_t *out;
} rl_pair;

static void rl_pair_free(rl_pair *p) {
    dp_pretrained_ctx_free(p->c);
    dp_sim_free(p->sim);
    dp_devices_free(p->ds);
    dp_graph_free(p->g);
    free(p->out);
}

/* Reads LIST (a line "GRAPH DEVICES" per pair; # comments) and loads every
 * pair. Returns the number loaded, -1 on an error (printed). */
static int32_t rl_load(const char *list, rl_pair *pairs, int32_t cap) {
    FILE *f = fopen(list, "r");
    if (!f) {
        fprintf(stderr, "bench_pretrained: %s: cannot read\n", list);
        return -1;
    }
    char line[1024], gs[512], dv[512];
    int32_t n = 0, bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "%511s %511s", gs, dv) != 2) continue;
        if (n == cap) {
            fprintf(stderr, "bench_pretrained: %s: more than %d pairs\n", list, (int)cap);
            bad = 1;
            break;
        }
        dp_error err = {0};
        rl_pair *p = &pairs[n];
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "%s@%s", gs, dv);
        p->g = load_graph(gs, &err);
        if (!p->g || !(p->ds = dp_devices_load(dv, &err)) || !(p->sim = dp_sim_init(p->g, p->ds, &err)) ||
            !(p->c = dp_pretrained_ctx_init(p->g, p->ds, dp_units_spec_resolve((dp_units_spec){DP_UNITS_AUTO, 0}, p->g),
                                            &err)) ||
            !(p->out = malloc(sizeof(int32_t) * (size_t)p->g->n_ops))) {
            fprintf(stderr, "bench_pretrained: %s: %s\n", p->name, err.status ? err.msg : "out of memory");
            rl_pair_free(p);
            bad = 1;
        } else {
            n++;
        }
    }
    fclose(f);
    if (bad) {
        for (int32_t i = 0; i < n; i++) rl_pair_free(&pairs[i]);
        return -1;
    }
    return n;
}

/* The greedy placement's step time under pol (INFINITY when not valid). */
static double rl_greedy(rl_pair *p, const dp_pretrained_policy *pol, dp_error *err) {
    dp_sim_result r;
    if (dp_pretrained_decode(p->c, pol, DP_PRETRAINED_GREEDY, 1, NULL, NULL, p->out, NULL, NULL, err) ||
        dp_sim_run(p->sim, p->out, NULL, &r, err))
        return NAN;
    return r.valid ? r.step_time_s : INFINITY;
}

/* One REINFORCE update on pair p: K placements sampled at temperature temp
 * (the stream seeded by seed and u), each simulated; the reward is -log of
 * the step time, a placement that is not valid gets the worst valid reward
 * less one and its overflow; advantages normalised over the K; one Adam
 * step of rate lr, the gradient clipped to norm 1. Writes the update's
 * mean step time of the valid samples, entropy and gradient norm to *row.
 * DP_STATUS_NOMEM and the decoder's and simulator's errors. */
static dp_status rl_update(rl_pair *p, dp_pretrained_policy *pol, dp_pretrained_grad *g, int32_t K, double temp,
                           double lr, uint64_t seed, int64_t u, double row[4], dp_error *err) {
    dp_pretrained_trace tr[64];
    double rw[64], excess[64], worst = INFINITY, mean = 0, sd = 0, tsum = 0;
    int32_t n_tr = 0, valid = 0;
    dp_status st = DP_STATUS_OK;
    dp_rng rng;
    dp_rng_seed(&rng, seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(u + 1)));
    for (int32_t k = 0; k < K && !st; k++) {
        dp_sim_result r;
        if ((st = dp_pretrained_trace_init(&tr[k], p->c, err))) break;
        n_tr++;
        if ((st = dp_pretrained_decode(p->c, pol, DP_PRETRAINED_SAMPLE, temp, &rng, NULL, p->out, &tr[k], NULL, err)) ||
            (st = dp_sim_run(p->sim, p->out, NULL, &r, err)))
            break;
        rw[k] = r.valid && r.step_time_s > 0 ? -log(r.step_time_s) : NAN;
        excess[k] = dp_sim_result_excess(&r);
        if (!isnan(rw[k])) worst = fmin(worst, rw[k]), tsum += r.step_time_s, valid++;
    }
    if (!st) {
        if (!isfinite(worst)) worst = 0;
        for (int32_t k = 0; k < K; k++) {
            if (isnan(rw[k])) rw[k] = worst - 1 - fmin(excess[k], 10.0);
            mean += rw[k] / K;
        }
        for (int32_t k = 0; k < K; k++) sd += (rw[k] - mean) * (rw[k] - mean) / K;
        sd = sqrt(sd);
        double ent = 0;
        dp_pretrained_grad_zero(g);
        for (int32_t k = 0; k < K; k++)
            ent += dp_pretrained_grad_add(g, pol, &tr[k], (sd > 1e-12 ? (rw[k] - mean) / sd : 0) / K) / K;
        row[0] = valid ? tsum / valid : NAN, row[1] = (double)valid / K, row[2] = ent;
        row[3] = dp_pretrained_grad_step(g, pol, lr, 1.0);
    }
    for (int32_t k = 0; k < n_tr; k++) dp_pretrained_trace_free(&tr[k]);
    return st;
}

/* Keeps the lines of path whose first field is not a number or is a number
 * at most `last` (a log cut back to a saved update); the rest are dropped
 * by writing the file again atomically. 0, or -1 when it cannot. */
static int keep_rows(const char *path, int64_t last) {
    FILE *in = fopen(path, "r");
    if (!in) return -1;
    dp_atomic_file af;
    dp_error err = {0};
    if (dp_atomic_open(&af, path, &err)) {
        fclose(in);
        return -1;
    }
    char line[1024];
    while (fgets(line, sizeof line, in))
        if (!(line[0] >= '0' && line[0] <= '9') || atoll(line) <= last) fputs(line, af.f);
    fclose(in);
    return dp_atomic_commit(&af, &err) ? -1 : 0;
}

/* rl LIST POLICY OUT UPDATES [SAMPLES LR SEED TEMP EVERY]: trains POLICY on
 * the pairs of LIST, one pair per update in turn; writes OUT (the policy,
 * atomically) every EVERY updates and at the end, OUT.csv a row per
 * update, OUT.greedy.csv every pair's greedy step time at each save, and
 * OUT.state beside OUT (the weights, Adam's moments, the updates done). A
 * run whose OUT.csv exists resumes from OUT.state: the logs' rows after
 * the state's update are dropped and the updates from it run again, so a
 * run stopped anywhere and started again ends with the policy and logs of
 * one that never stopped. */
static int rl(int argc, char **argv) {
    if (argc < 6) return -1;
    const char *out = argv[4];
    int64_t updates = atoll(argv[5]);
    int32_t K = argc > 6 ? atoi(argv[6]) : 8, every = argc > 10 ? atoi(argv[10]) : 50;
    double lr = argc > 7 ? atof(argv[7]) : 1e-4, temp = argc > 9 ? atof(argv[9]) : 0.5;
    uint64_t seed = argc > 8 ? strtoull(argv[8], NULL, 10) : 1;
    if (K < 2 || K > 64 || !(lr > 0) || !(temp > 0) || every < 1 || updates < 1) {
        fprintf(stderr, "bench_pretrained: rl: SAMPLES 2..64, LR and TEMP > 0, EVERY and UPDATES >= 1\n");
        return 2;
    }
    static rl_pair pairs[1024];
    int32_t n = rl_load(argv[2], pairs, 1024);
    if (n == 0) fprintf(stderr, "bench_pretrained: %s: no pairs\n", argv[2]);
    if (n <= 0) return 2;
    char log[1100], glog[1100], state[1100];
    snprintf(log, sizeof log, "%s.csv", out), snprintf(glog, sizeof glog, "%s.greedy.csv", out);
    snprintf(state, sizeof state, "%s.state", out);
    int64_t u0 = 0;
    FILE *lf = fopen(log, "r");
    int resume = lf != NULL;
    if (lf) fclose(lf);
    dp_error err = {0};
    dp_pretrained_policy *pol = dp_pretrained_policy_load(argv[3], &err);
    int rc = pol ? 0 : 2; /* a policy or state that cannot be read is bad input (2), a failure later 1 */
    if (!rc && resume) { /* the saved state, the logs cut back to it */
        if (dp_pretrained_policy_load_state(pol, &u0, state, &err)) rc = 2;
        else if (keep_rows(log, u0 - 1) || keep_rows(glog, u0))
            rc = 1, dp_error_set(&err, DP_STATUS_IO, "%s: cannot cut its logs back to update %lld", out, (long long)u0);
    }
    dp_pretrained_grad *g = rc ? NULL : dp_pretrained_grad_init(pol, &err);
    lf = g ? fopen(log, "a") : NULL;
    FILE *gf = lf ? fopen(glog, "a") : NULL;
    if (!rc && !gf) rc = 1;
    if (!rc && !resume) fprintf(lf, "update,pair,mean_s,valid_share,entropy,grad_norm,wall_s\n");
    double t0 = dp_now_s();
    for (int64_t u = u0; !rc && u <= updates; u++) {
        /* every pair's greedy placement, then the policy and its state (a
         * resumed run's first update was logged and saved by the run before) */
        if ((u % every == 0 || u == updates) && !(resume && u == u0)) {
            for (int32_t i = 0; i < n; i++)
                fprintf(gf, "%lld,%s,%.9g\n", (long long)u, pairs[i].name, rl_greedy(&pairs[i], pol, &err));
            fflush(gf);
            fflush(lf);
            if (u > u0 && (dp_pretrained_policy_save(pol, out, &err) || dp_pretrained_policy_save_state(pol, u, state, &err)))
                rc = 1;
        }
        double row[4] = {NAN, NAN, NAN, NAN};
        if (rc || u == updates) break;
        rl_pair *p = &pairs[u % n];
        if (rl_update(p, pol, g, K, temp, lr, seed, u, row, &err)) rc = 1;
        else fprintf(lf, "%lld,%s,%.9g,%.3f,%.6f,%.6f,%.1f\n", (long long)u, p->name, row[0], row[1], row[2], row[3],
                     dp_now_s() - t0);
    }
    if (rc && err.status) fprintf(stderr, "bench_pretrained: %s\n", err.msg);
    if (lf) fclose(lf);
    if (gf) fclose(gf);
    dp_pretrained_grad_free(g);
    dp_pretrained_policy_free(pol);
    for (int32_t i = 0; i < n; i++) rl_pair_free(&pairs[i]);
    return rc;
}

int main(int argc, char **argv) {
    int rc = -1; /* -1: not a command or too few arguments, the usage and exit 2 */
    if (argc > 1 && !strcmp(argv[1], "data")) rc = data(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "eval")) rc = eval(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "random")) rc = random_policy(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "rl")) rc = rl(argc, argv);
    if (rc == -1) {
        fprintf(stderr, "usage: bench_pretrained data GRAPH DEVICES PLACEMENT OUT [STEPS SEED]\n"
                        "       bench_pretrained random OUT [SEED]\n"
                        "       bench_pretrained eval GRAPH DEVICES [POLICY|-|random] [SAMPLES]\n"
                        "       bench_pretrained rl LIST POLICY OUT UPDATES [SAMPLES LR SEED TEMP EVERY]\n");
        rc = 2;
    }
    return rc;
}
