/* The model zoo: every model builds, has the papers' op count within 25%,
 * keeps TensorFlow's structure (variables colocated with their updates,
 * CPU-only input ops, gradients), simulates under every preset, runs out of
 * memory exactly where the papers say, and has a valid expert placement
 * wherever the papers describe one. The step-time calibration is a benchmark
 * (bench/bench_zoo), not a test. */
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"
#include "test_util.h"

static dp_graph *build(const char *name, int32_t batch) {
    dp_error err;
    dp_graph *g = dp_zoo_build(name, batch, &err);
    if (!g) fprintf(stderr, "build %s: %s\n", name, err.msg);
    CHECK(g);
    return g;
}

/* Simulates placement spec of g on preset; returns the verdict, fills res. */
static int simulate(const dp_graph *g, const char *preset, const char *spec, dp_sim_result *res) {
    dp_error err;
    dp_devices *ds = dp_devices_preset(preset, &err);
    CHECK(ds);
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    CHECK(p);
    dp_status st = dp_zoo_resolve_placement(spec, g, ds, p, &err);
    if (st) fprintf(stderr, "%s on %s, %s: %s\n", g->name, preset, spec, err.msg);
    CHECK_INT_EQ(st, DP_STATUS_OK);
    st = dp_sim_run(sim, p, NULL, res, &err);
    CHECK_INT_EQ(st, DP_STATUS_OK);
    free(p);
    dp_sim_free(sim);
    dp_devices_free(ds);
    return res->verdict;
}

static int count_type(const dp_graph *g, const char *type) {
    int32_t id = dp_graph_find_str(g, type);
    int n = 0;
    for (int32_t i = 0; i < g->n_ops; i++) n += g->ops[i].type == id;
    return n;
}

/* Op counts: within 25% of the papers'; BERT over 10,000. */
static void test_op_counts(void) {
    for (const dp_zoo_paper_row *r = dp_zoo_paper_table(); r->model; r++) {
        if (!r->paper_ops) continue;
        TEST_CASE("%s", r->model);
        dp_graph *g = build(r->model, 0);
        double ratio = (double)g->n_ops / r->paper_ops;
        printf("  %-13s %6d ops, paper %6d, ratio %.2f\n", r->model, g->n_ops, r->paper_ops, ratio);
        CHECK(ratio >= 0.75 && ratio <= 1.25);
        dp_graph_free(g);
    }
    TEST_CASE("bert_base");
    dp_graph *g = build("bert_base", 0);
    printf("  %-13s %6d ops (paper: over 10,000)\n", "bert_base", g->n_ops);
    CHECK(g->n_ops > 10000);
    dp_graph_free(g);
}

/* TensorFlow's structure: every trainable variable has an update op in its
 * colocation group, input ops are CPU-only, there are gradient ops and small
 * shape ops, every op has a scope. */
static void test_structure(void) {
    for (const dp_zoo_entry *e = dp_zoo_list(); e->name; e++) {
        if (!strncmp(e->name, "synthetic", 9)) continue;
        TEST_CASE("%s", e->name);
        dp_graph *g = build(e->name, 0);
        int n_var = count_type(g, "VariableV2"), n_cpu = 0, n_grad = 0, n_noscope = 0;
        for (int32_t i = 0; i < g->n_ops; i++) {
            const dp_op *o = &g->ops[i];
            n_cpu += o->device.kind == DP_DEVCON_CPU;
            n_grad += !strncmp(dp_graph_str(g, o->scope), "gradients/", 10);
            n_noscope += o->scope < 0;
        }
        CHECK(n_var > 0);
        CHECK(n_cpu > 0);
        CHECK(n_grad > g->n_ops / 4);
        CHECK_INT_EQ(n_noscope, 0);
        CHECK(count_type(g, "Shape") > 0);
        CHECK(g->n_colocate > 0);
        dp_graph_stats st;
        dp_graph_get_stats(g, &st);
        CHECK(st.total_flops > 1e9);
        CHECK(st.total_param_bytes > 0);
        /* each colocation group that holds a variable holds an update op */
        int32_t ns = dp_graph_n_strings(g);
        char *has_var = calloc((size_t)ns, 1), *has_update = calloc((size_t)ns, 1);
        CHECK(has_var && has_update);
        int32_t var_t = dp_graph_find_str(g, "VariableV2");
        for (int32_t i = 0; i < g->n_ops; i++) {
            int32_t c = g->ops[i].colocate;
            if (c < 0) continue;
            if (g->ops[i].type == var_t) has_var[c] = 1;
            else if (g->ops[i].n_inputs > 1) has_update[c] = 1;
        }
        int missing = 0;
        for (int32_t c = 0; c < ns; c++) missing += has_var[c] && !has_update[c];
        /* non-trainable state (batch-norm moving statistics) may be updated
         * by assign ops of its own; gradients reach every trainable one */
        if (missing) printf("  %s: %d colocation groups without an update op\n", e->name, missing);
        CHECK(missing * 4 <= n_var);
        free(has_var);
        free(has_update);
        dp_graph_free(g);
    }
}

/* Building a model twice gives the same ops. */
static void test_build_deterministic(void) {
    dp_graph *a = build("nmt2", 0), *b = build("nmt2", 0);
    CHECK_INT_EQ(a->n_ops, b->n_ops);
    for (int32_t i = 0; i < a->n_ops; i++) {
        TEST_CASE("op %d", (int)i);
        CHECK(!strcmp(a->ops[i].name, b->ops[i].name));
        CHECK_NEAR(a->ops[i].flops, b->ops[i].flops, 0);
    }
    dp_graph_free(a);
    dp_graph_free(b);
}

/* A model written to a file and read back simulates to the same step time
 * and memory. */
static void test_round_trip_keeps_step_time(void) {
    dp_graph *a = build("nmt2", 0);
    dp_error err;
    const char *path = "zoo_round_trip.json";
    CHECK_INT_EQ(dp_graph_write_file(a, path, &err), DP_STATUS_OK);
    dp_graph *c = dp_graph_read_file(path, &err);
    remove(path);
    CHECK(c);
    CHECK_INT_EQ(c->n_ops, a->n_ops);
    dp_sim_result ra, rc;
    simulate(a, "k40x2", "expert", &ra);
    simulate(c, "k40x2", "expert", &rc);
    CHECK_NEAR(rc.step_time_s, ra.step_time_s, 1e-12);
    CHECK_INT_EQ(rc.device[2].peak_bytes, ra.device[2].peak_bytes);
    dp_graph_free(a);
    dp_graph_free(c);
}

/* --batch changes the graph's tensors, not its op count. */
static void test_batch_changes_tensors_not_ops(void) {
    dp_graph *d = build("rnnlm", 32), *e = build("rnnlm", 0);
    CHECK_INT_EQ(d->n_ops, e->n_ops);
    dp_graph_stats sd, se;
    dp_graph_get_stats(d, &sd);
    dp_graph_get_stats(e, &se);
    CHECK(sd.total_flops < se.total_flops);
    dp_graph_free(d);
    dp_graph_free(e);
}

/* An unknown model is refused by name. */
static void test_unknown_model_refused(void) {
    dp_error err;
    CHECK(dp_zoo_build("nmt3", 0, &err) == NULL);
    CHECK_STR_CONTAINS(err.msg, "unknown model \"nmt3\"");
}

/* The papers' OOM cells are OOM; their measured cells are not; the expert
 * placement is valid wherever the papers have one. */
static void test_paper_verdicts(void) {
    for (const dp_zoo_paper_row *r = dp_zoo_paper_table(); r->model; r++) {
        TEST_CASE("%s on %s, gpu", r->model, r->devices);
        dp_graph *g = build(r->model, 0);
        dp_sim_result res;
        int v = simulate(g, r->devices, "gpu", &res);
        printf("  %-13s %-7s gpu-only %.3f s %s\n", r->model, r->devices, res.step_time_s,
               v == DP_SIM_VERDICT_OOM ? "OOM" : "fits");
        if (r->gpu_s == DP_ZOO_OOM) CHECK_INT_EQ(v, DP_SIM_VERDICT_OOM);
        else CHECK_INT_EQ(v, DP_SIM_VERDICT_VALID);
        TEST_CASE("%s on %s, cpu", r->model, r->devices);
        if (r->cpu_s > 0) CHECK_INT_EQ(simulate(g, r->devices, "cpu", &res), DP_SIM_VERDICT_VALID);
        if (r->expert_s > 0) {
            TEST_CASE("%s on %s, expert", r->model, r->devices);
            v = simulate(g, r->devices, "expert", &res);
            printf("  %-13s %-7s expert   %.3f s %s\n", r->model, r->devices, res.step_time_s, res.reason);
            CHECK_INT_EQ(v, DP_SIM_VERDICT_VALID);
        }
        dp_graph_free(g);
    }
}

/* BERT has no expert placement, and says so, through the zoo's resolver
 * too. */
static void test_bert_has_no_expert_placement(void) {
    dp_graph *g = build("bert_base", 0);
    dp_devices *ds = dp_devices_preset("p100x4", &(dp_error){0});
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    dp_error err;
    CHECK_INT_EQ(dp_zoo_expert_placement(g, ds, p, &err), DP_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "no human-expert placement");
    CHECK_INT_EQ(dp_zoo_resolve_placement("expert", g, ds, p, &err), DP_STATUS_UNSUPPORTED);
    free(p);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* The zoo's resolver defers the rest to the placement module's, which,
 * below the zoo, knows no "expert" and says where it is. */
static void test_resolver_defers_to_placement_module(void) {
    dp_graph *g = build("bert_base", 0);
    dp_devices *ds = dp_devices_preset("p100x4", &(dp_error){0});
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    dp_error err;
    CHECK_INT_EQ(dp_zoo_resolve_placement("gpu:2", g, ds, p, &err), DP_STATUS_OK);
    CHECK_INT_EQ(p[g->n_ops - 1], dp_devices_find(ds, "gpu:2"));
    CHECK_INT_EQ(dp_placement_resolve("expert", g, ds, p, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "dp_zoo_resolve_placement");
    free(p);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Every model simulates under every preset (one GPU and the expert). */
static void test_every_preset(void) {
    for (const dp_zoo_entry *e = dp_zoo_list(); e->name; e++) {
        if (!strncmp(e->name, "synthetic", 9)) continue;
        dp_graph *g = build(e->name, 0);
        for (const char *const *pr = dp_devices_preset_names(); *pr; pr++) {
            TEST_CASE("%s on %s, gpu", e->name, *pr);
            dp_sim_result res;
            int v = simulate(g, *pr, "gpu", &res);
            CHECK(res.step_time_s > 0);
            CHECK(v == DP_SIM_VERDICT_VALID || v == DP_SIM_VERDICT_OOM);
            if (strncmp(e->name, "bert", 4)) {
                TEST_CASE("%s on %s, expert", e->name, *pr);
                v = simulate(g, *pr, "expert", &res);
                CHECK(v == DP_SIM_VERDICT_VALID || v == DP_SIM_VERDICT_OOM);
            }
        }
        dp_graph_free(g);
    }
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_op_counts);
    TEST_RUN(test_structure);
    TEST_RUN(test_build_deterministic);
    TEST_RUN(test_round_trip_keeps_step_time);
    TEST_RUN(test_batch_changes_tensors_not_ops);
    TEST_RUN(test_unknown_model_refused);
    TEST_RUN(test_paper_verdicts);
    TEST_RUN(test_bert_has_no_expert_placement);
    TEST_RUN(test_resolver_defers_to_placement_module);
    TEST_RUN(test_every_preset);
    return test_end();
}
