/* libFuzzer targets for every reader of dplace (docs/fuzzing.md). One source,
 * compiled once per target with -DFUZZ_<TARGET>. Each target checks the
 * readers' contract, not only "no crash":
 *   - refused input: an error status, a non-empty one-line message with no
 *     control characters, and the output untouched;
 *   - accepted input: every number the simulator gives is finite, and the
 *     value written back reads back the same (graph, devices).
 * A broken contract aborts (libFuzzer records the input). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dplace/agent.h"
#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/import.h"
#include "dplace/measure.h"
#include "dplace/nn.h"
#include "dplace/placement.h"
#include "dplace/settings_job.h"
#include "dplace/sim.h"

#define REQUIRE(c)                                                                 \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "fuzz contract broken: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                               \
        }                                                                          \
    } while (0)

/* A refused input's error: a status and one printable line. */
static void check_refusal(dp_status st, const dp_error *err) {
    REQUIRE(st != DP_STATUS_OK);
    REQUIRE(err->status == st);
    REQUIRE(err->msg[0] != '\0');
    for (const char *p = err->msg; *p; p++) REQUIRE((unsigned char)*p >= 0x20 && *p != 0x7f);
}

/* input bytes as a NUL-terminated string (a NUL inside ends it early, as a
 * C reader of the file would see it through jansson's length anyway) */
__attribute__((unused)) static char *as_text(const uint8_t *data, size_t size) {
    char *t = malloc(size + 1);
    REQUIRE(t);
    memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

static char in_path[64], out_path[64];
static void remove_paths(void) {
    remove(in_path);
    remove(out_path);
}
/* per-process scratch files in /tmp, removed at exit */
static void init_paths(void) {
    if (!in_path[0]) {
        snprintf(in_path, sizeof in_path, "/tmp/dp_fuzz_%ld.in", (long)getpid());
        snprintf(out_path, sizeof out_path, "/tmp/dp_fuzz_%ld.out", (long)getpid());
        atexit(remove_paths);
    }
}
__attribute__((unused)) static void write_input(const uint8_t *data, size_t size) {
    init_paths();
    FILE *f = fopen(in_path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(data, 1, size, f) == size);
    REQUIRE(fclose(f) == 0);
}

/* Simulates p (or every op on its first allowed device when NULL) and
 * requires finite numbers. */
__attribute__((unused)) static void check_simulates(const dp_graph *g, const dp_devices *ds, const int32_t *p) {
    dp_error err;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    if (!sim) { /* a constraint the device set lacks: a clean refusal */
        check_refusal(err.status, &err);
        return;
    }
    int32_t *own = NULL;
    if (!p) { /* every op on the last device (a GPU in the presets), soft-placed */
        own = malloc((size_t)g->n_ops * sizeof(int32_t) + 1);
        REQUIRE(own);
        dp_status st = dp_placement_single(g, ds, ds->n_devices - 1, own, &err);
        if (st) {
            check_refusal(st, &err);
            free(own);
            dp_sim_free(sim);
            return;
        }
        p = own;
    }
    dp_sim_result res;
    if (dp_sim_run(sim, p, NULL, &res, &err) == DP_STATUS_OK) {
        REQUIRE(isfinite(res.step_time_s) && res.step_time_s >= 0);
        for (int32_t d = 0; d < res.n_devices; d++) REQUIRE(isfinite(res.device[d].busy_s));
    }
    free(own);
    dp_sim_free(sim);
}

#if defined(FUZZ_GRAPH)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = as_text(data, size);
    dp_error err;
    dp_graph *g = dp_graph_read_string(text, "fuzz.json", &err);
    free(text);
    if (!g) {
        check_refusal(err.status, &err);
        return 0;
    }
    static dp_devices *ds;
    if (!ds) ds = dp_devices_preset("k40x2", &err);
    REQUIRE(ds);
    if (g->n_ops <= 2000) check_simulates(g, ds, NULL);
    init_paths();
    REQUIRE(dp_graph_write_file(g, out_path, &err) == DP_STATUS_OK);
    dp_graph *h = dp_graph_read_file(out_path, &err);
    REQUIRE(h);
    REQUIRE(h->n_ops == g->n_ops && h->n_outputs == g->n_outputs && h->n_inputs == g->n_inputs);
    for (int32_t i = 0; i < g->n_ops; i++) REQUIRE(strcmp(g->ops[i].name, h->ops[i].name) == 0);
    dp_graph_free(h);
    dp_graph_free(g);
    return 0;
}
#elif defined(FUZZ_DEVICES)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = as_text(data, size);
    dp_error err;
    dp_devices *ds = dp_devices_read_string(text, "fuzz.json", &err);
    free(text);
    if (!ds) {
        check_refusal(err.status, &err);
        return 0;
    }
    static dp_graph *g;
    if (!g) g = dp_graph_read_file(FUZZ_TESTS_DATA_DIR "/tiny.json", &err);
    REQUIRE(g);
    check_simulates(g, ds, NULL);
    init_paths();
    REQUIRE(dp_devices_write_file(ds, out_path, &err) == DP_STATUS_OK);
    dp_devices *back = dp_devices_read_file(out_path, &err);
    REQUIRE(back);
    REQUIRE(back->n_devices == ds->n_devices && back->n_links == ds->n_links);
    for (int32_t d = 0; d < ds->n_devices; d++) {
        REQUIRE(back->devices[d].peak_flops == ds->devices[d].peak_flops);
        REQUIRE(back->devices[d].eff_own == ds->devices[d].eff_own); /* v2: the model read back the same */
        REQUIRE(strcmp(back->devices[d].generation, ds->devices[d].generation) == 0);
        REQUIRE(dp_devices_same_cost(&back->devices[d], &ds->devices[d]));
    }
    REQUIRE(dp_devices_hash(back) == dp_devices_hash(ds));
    dp_devices_free(back);
    dp_devices_free(ds);
    return 0;
}
#elif defined(FUZZ_PLACEMENT)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static dp_graph *g;
    static dp_devices *ds;
    dp_error err;
    if (!g) g = dp_graph_read_file(FUZZ_TESTS_DATA_DIR "/tiny.json", &err);
    if (!ds) ds = dp_devices_preset("k40x2", &err);
    REQUIRE(g && ds);
    write_input(data, size);
    int32_t p[64];
    for (int i = 0; i < 64; i++) p[i] = -7;
    dp_status st = dp_placement_read_file(in_path, g, ds, p, &err);
    if (st) {
        check_refusal(st, &err);
        return 0;
    }
    for (int32_t i = 0; i < g->n_ops; i++) REQUIRE(p[i] >= 0 && p[i] < ds->n_devices);
    check_simulates(g, ds, p);
    return 0;
}
#elif defined(FUZZ_MSR) || defined(FUZZ_MSR_SPLIT)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = as_text(data, size);
    dp_error err;
    dp_import_msr_options opt = dp_import_msr_options_default();
#if defined(FUZZ_MSR)
    dp_import_msr *imp = dp_import_msr_read_string(text, "fuzz.json", &opt, &err);
    free(text);
    if (!imp) {
        check_refusal(err.status, &err);
        return 0;
    }
    if (imp->graph->n_ops <= 2000) check_simulates(imp->graph, imp->devices, NULL);
    dp_import_msr_free(imp);
#else
    static dp_import_msr *imp;
    if (!imp) imp = dp_import_msr_read_file(FUZZ_DATA_DIR "/msr_small.json", &opt, &err);
    REQUIRE(imp);
    int32_t *p = malloc((size_t)imp->graph->n_ops * sizeof(int32_t));
    REQUIRE(p);
    dp_import_split_info info;
    dp_status st = dp_import_msr_read_split_string(text, "fuzz.json", imp, p, &info, &err);
    free(text);
    if (st) {
        check_refusal(st, &err);
    } else {
        for (int32_t i = 0; i < imp->graph->n_ops; i++) REQUIRE(p[i] >= 0 && p[i] < imp->devices->n_devices);
        check_simulates(imp->graph, imp->devices, p);
    }
    free(p);
#endif
    return 0;
}
#elif defined(FUZZ_NN_CKPT)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const dp_nn_tensor_spec specs[2] = {{"w", 6, DP_NN_INIT_UNIFORM, 0.5f}, {"b", 3, DP_NN_INIT_ZERO, 0}};
    static dp_nn_params p;
    static int ready;
    dp_error err;
    if (!ready) {
        dp_rng rng;
        dp_rng_seed(&rng, 1);
        REQUIRE(dp_nn_params_init(&p, specs, 2, &rng, &err) == DP_STATUS_OK);
        ready = 1;
        const char *seed_out = getenv("DPLACE_FUZZ_SEED_OUT"); /* scripts/fuzz.sh seeds */
        if (seed_out) REQUIRE(dp_nn_checkpoint_save(&p, seed_out, &err) == DP_STATUS_OK);
    }
    write_input(data, size);
    float before[9];
    memcpy(before, p.data, sizeof before);
    int64_t step_before = p.step;
    dp_status st = dp_nn_checkpoint_load(&p, in_path, &err);
    if (st) {
        check_refusal(st, &err);
        REQUIRE(memcmp(before, p.data, sizeof before) == 0 && p.step == step_before); /* untouched */
        return 0;
    }
    REQUIRE(p.step >= 0 && p.step <= DP_NN_MAX_STEP);
    for (size_t i = 0; i < p.count; i++) {
        REQUIRE(isfinite(p.data[i]) && isfinite(p.m[i]) && isfinite(p.v[i]) && p.v[i] >= 0);
        p.grad[i] = 0.1f;
    }
    dp_nn_adam cfg = dp_nn_adam_default();
    dp_nn_adam_update(&p, &cfg, 1e-3f); /* no overflow, no NaN from an accepted state */
    for (size_t i = 0; i < p.count; i++) REQUIRE(isfinite(p.data[i]));
    return 0;
}
#elif defined(FUZZ_AGENT_CKPT)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static dp_agent *a;
    static dp_graph *g;
    static dp_devices *ds;
    static dp_agent_eval_options eo;
    dp_error err;
    if (!a) {
        g = dp_graph_read_file(FUZZ_TESTS_DATA_DIR "/tiny.json", &err);
        ds = dp_devices_preset("k40x2", &err);
        REQUIRE(g && ds);
        dp_agent_config c;
        dp_settings set;
        REQUIRE(dp_settings_preset("hp", &set) == 0);
        c = set.agent;
        const char *kv[][2] = {{"hidden", "8"}, {"attn-dim", "8"}, {"dev-emb", "4"}, {"groups", "2"},
                               {"grouper-hidden", "8"}, {"type-dim", "4"}, {"samples", "2"}};
        for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) REQUIRE(dp_agent_config_set(&c, kv[k][0], kv[k][1], &err) == 0);
        eo = dp_agent_eval_options_default();
        a = dp_agent_init(g, ds, &c, &eo, 1, &err);
        REQUIRE(a);
        const char *seed_out = getenv("DPLACE_FUZZ_SEED_OUT"); /* scripts/fuzz.sh seeds */
        if (seed_out) {
            REQUIRE(dp_agent_update(a, &err) == DP_STATUS_OK);
            REQUIRE(dp_agent_save(a, seed_out, &err) == DP_STATUS_OK);
        }
    }
    write_input(data, size);
    dp_status st = dp_agent_load(a, in_path, &err);
    if (st) {
        check_refusal(st, &err);
        return 0;
    }
    int32_t p[64];
    REQUIRE(dp_agent_greedy(a, p, &err) == DP_STATUS_OK);
    for (int32_t i = 0; i < g->n_ops; i++) REQUIRE(p[i] >= 0 && p[i] < ds->n_devices);
    REQUIRE(dp_agent_update(a, &err) == DP_STATUS_OK);
    return 0;
}
#elif defined(FUZZ_MEASURE)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    dp_measure_result res;
    memset(&res, 0x5a, sizeof res);
    dp_measure_parse_output((const char *)data, size, &res);
    REQUIRE(res.outcome == DP_MEASURE_OUTCOME_OK || res.outcome == DP_MEASURE_OUTCOME_OOM ||
            res.outcome == DP_MEASURE_OUTCOME_FAILED);
    REQUIRE(memchr(res.reason, '\0', sizeof res.reason) != NULL);
    for (const char *p = res.reason; *p; p++) REQUIRE((unsigned char)*p >= 0x20 && *p != 0x7f);
    if (res.outcome == DP_MEASURE_OUTCOME_OK)
        REQUIRE(isfinite(res.step_time_s) && res.step_time_s > 0 && res.step_time_s <= DP_MEASURE_MAX_STEP_S);
    else
        REQUIRE(res.step_time_s == 0);
    return 0;
}
#else
#error "define one FUZZ_<TARGET>"
#endif
