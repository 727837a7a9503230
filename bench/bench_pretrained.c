/* bench_pretrained: the pretrained placer's data and a quick look at it.
 *
 *   bench_pretrained data GRAPH DEVICES PLACEMENT OUT [STEPS SEED]
 *       replays a teacher's placement (dplace-placement v1) through the
 *       decoder and writes up to STEPS of its decisions (default 1200,
 *       drawn with SEED, default 1) to OUT, the imitation data
 *       bench/pretrain.py reads;
 *   bench_pretrained random OUT [SEED]
 *       a policy of fresh weights (the shipped one's widths): the untrained
 *       control, for `dplace optimize --agent pretrained --init OUT`;
 *   bench_pretrained eval GRAPH DEVICES [POLICY] [SAMPLES]
 *       the greedy placement and SAMPLES sampled ones (default 16) of the
 *       policy file (-: the built-in policy; random: fresh weights), simulated, with the
 *       decode time.
 *
 * GRAPH is a zoo model (NAME or NAME:BATCH, synthetic-N) or a graph file
 * (a path ending in .json); DEVICES a preset or a devices file.
 *
 * The data file, little-endian: "DPPTDATA", u32 features, u32 devices
 * (rows per decision), u32 decisions, u32 units; then per decision u64
 * cand, u64 target, u32 action, u32 0, f32 rows[devices, features]. */
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
    if (argc < 6) return 2;
    dp_error err = {0};
    int32_t steps = argc > 6 ? atoi(argv[6]) : 1200;
    uint64_t seed = argc > 7 ? strtoull(argv[7], NULL, 10) : 1;
    dp_graph *g = load_graph(argv[2], &err);
    dp_devices *ds = g ? dp_devices_load(argv[3], &err) : NULL;
    int32_t *teacher = g ? malloc(sizeof(int32_t) * (size_t)g->n_ops) : NULL;
    int32_t *out = g ? malloc(sizeof(int32_t) * (size_t)g->n_ops) : NULL;
    dp_pretrained_ctx *c = NULL;
    dp_pretrained_trace tr = {0};
    int rc = 1;
    if (!ds || !teacher || !out || dp_placement_read_file(argv[4], g, ds, teacher, &err)) goto done;
    dp_units_spec us = {dp_units_has_modules(g) ? DP_UNITS_MODULE : DP_UNITS_OP, 0};
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
    FILE *f = pick ? fopen(argv[5], "wb") : NULL;
    if (!f) {
        fprintf(stderr, "bench_pretrained: %s: cannot write\n", argv[5]);
        free(pick);
        goto done;
    }
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
    rc = fclose(f) ? 1 : 0;
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
    if (argc < 4) return 2;
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
    int rc = 1;
    double t0 = dp_now_s();
    dp_units_spec us = {dp_units_has_modules(g) ? DP_UNITS_MODULE : DP_UNITS_OP, 0};
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
    if (argc < 3) return 2;
    dp_error err = {0};
    dp_pretrained_policy *p = dp_pretrained_policy_random(64, 64, argc > 3 ? strtoull(argv[3], NULL, 10) : 1, &err);
    int rc = p && !dp_pretrained_policy_save(p, argv[2], &err) ? 0 : 1;
    if (rc) fprintf(stderr, "bench_pretrained: %s\n", err.msg);
    dp_pretrained_policy_free(p);
    return rc;
}

int main(int argc, char **argv) {
    int rc = 2;
    if (argc > 1 && !strcmp(argv[1], "data")) rc = data(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "eval")) rc = eval(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "random")) rc = random_policy(argc, argv);
    if (rc == 2)
        fprintf(stderr, "usage: bench_pretrained data GRAPH DEVICES PLACEMENT OUT [STEPS SEED]\n"
                        "       bench_pretrained random OUT [SEED]\n"
                        "       bench_pretrained eval GRAPH DEVICES [POLICY|-|random] [SAMPLES]\n");
    return rc;
}
