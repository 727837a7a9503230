/* The eager executor (DP_EXECUTOR_TORCH) on tiny graphs whose timelines are
 * worked out by hand below. Device set "eager": a host CPU that takes 1 ms
 * to issue an op or a copy and nothing to turn from GPU work to a CPU op
 * (but in the test of that), two GPUs, links of 1 MB/s without latency
 * between every pair, so a 1000-byte tensor crosses a link in 1 ms. Op times
 * come from measured costs (no launch overhead is added to those). */
#include <math.h>
#include <stdlib.h>

#include "dplace/placement.h"
#include "dplace/sim.h"
#include "test_fixtures.h"
#include "test_util.h"

static const char *eager_devices =
    "{\"format\":\"dplace-devices\",\"version\":2,\"name\":\"eager\",\"devices\":["
    "{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,\"memory_bytes\":1000000,"
    "\"dispatch_s\":0.001,\"switch_s\":0},"
    "{\"name\":\"gpu:0\",\"kind\":\"gpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,\"memory_bytes\":1000000,"
    "\"streams\":4},"
    "{\"name\":\"gpu:1\",\"kind\":\"gpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,\"memory_bytes\":1000000}],"
    "\"links\":[{\"from\":\"cpu:0\",\"to\":\"gpu:0\",\"bandwidth\":1e6,\"latency_s\":0},"
    "{\"from\":\"cpu:0\",\"to\":\"gpu:1\",\"bandwidth\":1e6,\"latency_s\":0},"
    "{\"from\":\"gpu:0\",\"to\":\"gpu:1\",\"bandwidth\":1e6,\"latency_s\":0}]}";

enum { CPU = 0, G0 = 1, G1 = 2 };

#define OP(name, type, inputs, cost)                                                                             \
    "{\"name\":\"" name "\",\"type\":\"" type "\",\"inputs\":" inputs ",\"outputs\":[{\"bytes\":1000}],"       \
    "\"cost\":{\"gpu\":" #cost ",\"cpu\":" #cost "}}"

/* x (an input) -> a (2 ms) -> b (5 ms) -> c (3 ms); a -> d (4 ms), in that
 * program order; the file says it runs eagerly. */
static const char *fork_graph =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"fork\",\"executor\":\"torch\",\"ops\":["
    OP("x", "Placeholder", "[]", 0) "," OP("a", "T", "[0]", 0.002) "," OP("b", "T", "[1]", 0.005) ","
    OP("c", "T", "[2]", 0.003) "," OP("d", "T", "[1]", 0.004) "]}";

typedef sim_fixture fixture;

static fixture setup(const char *graph_json) { return sim_fixture_open(graph_json, eager_devices); }

static void run(fixture *f, const int32_t *place, int trace) {
    dp_error err;
    dp_sim_options o = dp_sim_options_default();
    o.record_trace = trace;
    CHECK_INT_EQ(dp_sim_run(f->sim, place, &o, &f->res, &err), DP_STATUS_OK);
}

static void teardown(fixture *f) { sim_fixture_close(f); }

/* x on the CPU, a and b on gpu:0, c on the CPU, d on gpu:1, in ms:
 *  x: an input, not issued: ends at 0.
 *  a: x's copy to gpu:0 is issued (host 1) and runs [1,2]; to the GPU from
 *     the CPU, it blocks the host until 2. a is issued (host 3) and runs
 *     [3,5] on gpu:0's stream.
 *  b: issued (host 4), queued behind a: [5,10].
 *  c: b's copy to the CPU is issued (host 5), waits for gpu:0's stream
 *     (10): [10,11], holding the stream and blocking the host until 11. c
 *     is issued (host 12) and runs on the host thread [12,15].
 *  d: a's copy to gpu:1 is issued (host 16), [16,17] on the gpu:0 -> gpu:1
 *     link, the host going on; d is issued (host 17) and runs [17,21].
 * The step ends at 21 ms; TensorFlow's executor would end at 11 (c and d
 * at once, no host). Memory: x's copy and a on gpu:0 (2000 bytes), b
 * after x's copy is dropped (2000 again); on the CPU b's copy and c's
 * output (2000); on gpu:1 a's copy and d's output (2000). */
static void test_fork_timeline_by_hand(void) {
    fixture f = setup(fork_graph);
    CHECK_INT_EQ(f.g->executor, DP_EXECUTOR_TORCH);
    int32_t p[5] = {CPU, G0, G0, CPU, G1};
    run(&f, p, 1);
    CHECK(f.res.valid);
    CHECK_NEAR(f.res.step_time_s, 0.021, 1e-12);
    CHECK_INT_EQ(f.res.n_transfers, 3);
    CHECK_INT_EQ(f.res.transfer_bytes, 3000);
    CHECK_INT_EQ(f.res.device[G0].peak_bytes, 2000);
    CHECK_INT_EQ(f.res.device[CPU].peak_bytes, 2000);
    CHECK_INT_EQ(f.res.device[G1].peak_bytes, 2000);
    CHECK_NEAR(f.res.device[G0].busy_s, 0.007, 1e-12);
    /* the critical path, back from d: d waited for a's copy, which waited
     * for the host (its issue after c ended on the host thread) */
    dp_sim_delta *d = dp_sim_delta_init(f.sim, NULL);
    CHECK(d);
    dp_error err;
    CHECK_INT_EQ(dp_sim_delta_set_base(d, p, NULL, &err), DP_STATUS_OK);
    dp_sim_path_step path[16];
    int32_t n = 0;
    CHECK_INT_EQ(dp_sim_delta_critical_path(d, path, 16, &n, &err), DP_STATUS_OK);
    CHECK(n >= 3 && n <= 16);
    CHECK_INT_EQ(path[n - 1].op, 4);
    CHECK_NEAR(path[n - 1].start_s, 0.017, 1e-12);
    CHECK_NEAR(path[n - 1].end_s, 0.021, 1e-12);
    CHECK_INT_EQ(path[n - 2].op, -1); /* the copy's hop */
    CHECK_NEAR(path[n - 2].start_s, 0.016, 1e-12);
    for (int32_t k = 1; k < n; k++) CHECK(path[k].start_s >= path[k - 1].start_s);
    dp_sim_delta_free(d);
    teardown(&f);
}

/* The fork of the test above with a host that loses 2 ms each time it
 * turns from GPU work to a CPU op, in ms: x is not issued and a and b
 * run on gpu:0 as before; c is the first CPU op after GPU work: b's copy
 * to the CPU still blocks the host until 11, then c's issue takes 1 + 2
 * (host 14) and c runs [14,17]; a's copy to gpu:1 is issued (host 18),
 * [18,19]; d is issued (host 19) and runs [19,23]. Only c pays: d is a GPU
 * op, and nothing is on the CPU after it. The step ends at 23 ms; all on
 * the CPU, where the host never fed a GPU, the switch costs nothing (four
 * ops issued 1 ms each and run back to back: 4 + 14 = 18 ms). */
static void test_switch_timeline_by_hand(void) {
    fixture f = setup(fork_graph);
    dp_sim_free(f.sim);
    f.ds->devices[CPU].switch_s = 0.002;
    dp_error err;
    f.sim = dp_sim_init(f.g, f.ds, &err);
    CHECK(f.sim);
    int32_t p[5] = {CPU, G0, G0, CPU, G1};
    run(&f, p, 1);
    CHECK(f.res.valid);
    CHECK_NEAR(f.res.step_time_s, 0.023, 1e-12);
    int32_t cpu_only[5] = {CPU, CPU, CPU, CPU, CPU};
    run(&f, cpu_only, 0);
    CHECK_NEAR(f.res.step_time_s, 0.018, 1e-12);
    teardown(&f);
}

/* Five 0.1 ms GPU ops in a chain, each taking the host 1 ms to issue: the
 * step is bound by the host (op k runs [k, k + 0.1] ms), where
 * TensorFlow's executor runs them back to back in 0.5 ms. */
static void test_host_bound_chain(void) {
    static const char *chain =
        "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"chain\",\"ops\":["
        OP("a", "T", "[]", 1e-4) "," OP("b", "T", "[0]", 1e-4) "," OP("c", "T", "[1]", 1e-4) ","
        OP("d", "T", "[2]", 1e-4) "," OP("e", "T", "[3]", 1e-4) "]}";
    int32_t p[5] = {G0, G0, G0, G0, G0};
    fixture f = setup(chain);
    CHECK_INT_EQ(f.g->executor, DP_EXECUTOR_TF); /* a file that says nothing */
    run(&f, p, 0);
    CHECK_NEAR(f.res.step_time_s, 5e-4, 1e-12);
    teardown(&f);
    f = setup(chain);
    dp_graph *g = f.g;
    dp_sim_free(f.sim);
    g->executor = DP_EXECUTOR_TORCH; /* as --executor torch does */
    dp_error err;
    f.sim = dp_sim_init(g, f.ds, &err);
    CHECK(f.sim);
    run(&f, p, 0);
    CHECK_NEAR(f.res.step_time_s, 5.1e-3, 1e-12);
    teardown(&f);
}

/* One GPU stream however many the file gives: two independent 1 ms ops on
 * gpu:0 (4 streams) run one after the other, issued at 1 and 2 ms. */
static void test_one_stream_per_gpu(void) {
    static const char *pair =
        "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"pair\",\"executor\":\"torch\",\"ops\":["
        OP("a", "T", "[]", 0.001) "," OP("b", "T", "[]", 0.001) "]}";
    fixture f = setup(pair);
    int32_t p[2] = {G0, G0};
    run(&f, p, 0);
    CHECK_NEAR(f.res.step_time_s, 0.003, 1e-12);
    teardown(&f);
}

/* Fused ops (a recurrent module's, issued by one library call): three
 * 0.1 ms GPU ops, b and c fused. The host issues a (1 ms) and nothing for
 * b and c, so a runs [1, 1.1], b [1.1, 1.2] and c [1.2, 1.3] ms; unfused,
 * each waits for its own dispatch and the step ends at 3.1 ms. The flag
 * round-trips through a file; a value that is not true or false is
 * refused in one line naming the op and the field. */
static void test_fused_ops_not_dispatched(void) {
#define FOP(name, inputs, cost)                                                                                  \
    "{\"name\":\"" name "\",\"type\":\"T\",\"inputs\":" inputs ",\"outputs\":[{\"bytes\":1000}],"            \
    "\"cost\":{\"gpu\":" #cost ",\"cpu\":" #cost "},\"fused\":true}"
    static const char *fused =
        "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"fused\",\"executor\":\"torch\",\"ops\":["
        OP("a", "T", "[]", 1e-4) "," FOP("b", "[0]", 1e-4) "," FOP("c", "[1]", 1e-4) "]}";
#undef FOP
    static const char *unfused =
        "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"fused\",\"executor\":\"torch\",\"ops\":["
        OP("a", "T", "[]", 1e-4) "," OP("b", "T", "[0]", 1e-4) "," OP("c", "T", "[1]", 1e-4) "]}";
    int32_t p[3] = {G0, G0, G0};
    fixture f = setup(fused);
    CHECK(!f.g->ops[0].fused && f.g->ops[1].fused && f.g->ops[2].fused);
    run(&f, p, 0);
    CHECK_NEAR(f.res.step_time_s, 1.3e-3, 1e-12);
    dp_error err;
    const char *path = "test_sim_eager_fused.json";
    CHECK_INT_EQ(dp_graph_write_file(f.g, path, &err), DP_STATUS_OK);
    dp_graph *back = dp_graph_read_file(path, &err);
    CHECK(back);
    CHECK(!back->ops[0].fused && back->ops[1].fused && back->ops[2].fused);
    remove(path);
    dp_graph_free(back);
    teardown(&f);
    f = setup(unfused);
    run(&f, p, 0);
    CHECK_NEAR(f.res.step_time_s, 3.1e-3, 1e-12);
    teardown(&f);
    CHECK(!dp_graph_read_string("{\"format\":\"dplace-graph\",\"version\":1,\"ops\":[{\"name\":\"a\",\"type\":\"T\","
                                "\"outputs\":[{\"bytes\":8}],\"fused\":1}]}",
                                "bad.json", &err));
    CHECK_STR_CONTAINS(err.msg, "bad.json: op 0 \"a\": field \"fused\" must be true or false");
}

/* A chain of three 0.1 ms ops, a then b and c of the backward pass (their
 * scope "gradients/m"). On gpu:0 each is dispatched (1 ms) and waits for
 * it: a runs [1, 1.1], b [2, 2.1], c [3, 3.1] ms. On the CPU only a is
 * dispatched: a runs [1, 1.1] on the host thread, b [1.1, 1.2] and c
 * [1.2, 1.3], the autograd engine calling them without Python. */
static void test_backward_on_cpu_not_dispatched(void) {
#define BOP(name, inputs)                                                                                        \
    "{\"name\":\"" name "\",\"type\":\"T\",\"scope\":\"gradients/m\",\"inputs\":" inputs ","                      \
    "\"outputs\":[{\"bytes\":1000}],\"cost\":{\"gpu\":1e-4,\"cpu\":1e-4}}"
    static const char *chain =
        "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"backward\",\"executor\":\"torch\",\"ops\":["
        OP("a", "T", "[]", 1e-4) "," BOP("b", "[0]") "," BOP("c", "[1]") "]}";
#undef BOP
    fixture f = setup(chain);
    int32_t gpu[3] = {G0, G0, G0}, cpu[3] = {CPU, CPU, CPU};
    run(&f, gpu, 0);
    CHECK_NEAR(f.res.step_time_s, 3.1e-3, 1e-12);
    run(&f, cpu, 0);
    CHECK_NEAR(f.res.step_time_s, 1.3e-3, 1e-12);
    teardown(&f);
}

/* Moves from a base under the eager executor equal full runs of the moved
 * placement, bit for bit, on random placements of a synthetic graph whose
 * every third op is fused, with a host that pays to switch. */
static void test_delta_exact(void) {
    dp_error err;
    dp_graph *g = dp_graph_synth(600, 3, &err);
    CHECK(g);
    g->executor = DP_EXECUTOR_TORCH;
    for (int32_t i = 0; i < g->n_ops; i += 3) g->ops[i].fused = 1;
    dp_devices *ds = dp_devices_read_string(eager_devices, "eager", &err);
    CHECK(ds);
    ds->devices[CPU].switch_s = 0.002;
    dp_sim *sim = dp_sim_init(g, ds, &err);
    CHECK(sim);
    dp_sim_delta *d = dp_sim_delta_init(sim, &err);
    CHECK(d);
    int32_t *p = malloc(sizeof(int32_t) * (size_t)g->n_ops);
    CHECK(p);
    dp_rng rng;
    dp_rng_seed(&rng, 5);
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t dev = (int32_t)dp_rng_below(&rng, 3);
        while (!dp_placement_allowed(g, ds, i, dev)) dev = (dev + 1) % 3;
        p[i] = dev;
    }
    CHECK_INT_EQ(dp_sim_delta_set_base(d, p, NULL, &err), DP_STATUS_OK);
    for (int k = 0; k < 20; k++) {
        int32_t op = (int32_t)dp_rng_below(&rng, (uint64_t)g->n_ops), dev = (int32_t)dp_rng_below(&rng, 3);
        dp_sim_result tr, full;
        CHECK_INT_EQ(dp_sim_delta_try(d, 1, &op, &dev, &tr, &err), DP_STATUS_OK);
        int32_t old = p[op];
        p[op] = dev;
        CHECK_INT_EQ(dp_sim_run(sim, p, NULL, &full, &err), DP_STATUS_OK);
        CHECK(tr.step_time_s == full.step_time_s);
        CHECK_INT_EQ(tr.verdict, full.verdict);
        for (int32_t x = 0; x < ds->n_devices; x++) CHECK(tr.device[x].peak_bytes == full.device[x].peak_bytes);
        if (k % 2) CHECK_INT_EQ(dp_sim_delta_accept(d, &err), DP_STATUS_OK);
        else p[op] = old;
    }
    free(p);
    dp_sim_delta_free(d);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A graph file's "executor" round-trips, and a bad one is refused in one
 * line naming the file and the field; so is a device's bad dispatch_s or
 * switch_s. A file that gives no switch_s takes the default, and one that
 * does keeps its own through a write. */
static void test_executor_field(void) {
    dp_error err;
    dp_graph *g = dp_graph_read_string(fork_graph, "fork.json", &err);
    CHECK(g);
    const char *path = "test_sim_eager_fork.json";
    CHECK_INT_EQ(dp_graph_write_file(g, path, &err), DP_STATUS_OK);
    dp_graph *back = dp_graph_read_file(path, &err);
    CHECK(back);
    CHECK_INT_EQ(back->executor, DP_EXECUTOR_TORCH);
    remove(path);
    dp_graph_free(back);
    dp_graph_free(g);
    CHECK(!dp_graph_read_string("{\"format\":\"dplace-graph\",\"version\":1,\"executor\":\"jax\",\"ops\":[]}",
                                "bad.json", &err));
    CHECK_STR_CONTAINS(err.msg, "bad.json: field \"executor\" must be \"tf\" or \"torch\", got \"jax\"");
    CHECK(!dp_devices_read_string("{\"format\":\"dplace-devices\",\"version\":1,\"name\":\"x\",\"devices\":["
                                  "{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,"
                                  "\"memory_bytes\":1000,\"dispatch_s\":-1}],\"links\":[]}",
                                  "bad-devices.json", &err));
    CHECK_STR_CONTAINS(err.msg, "dispatch_s");
    CHECK(!dp_devices_read_string("{\"format\":\"dplace-devices\",\"version\":2,\"name\":\"x\",\"devices\":["
                                  "{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,"
                                  "\"memory_bytes\":1000,\"switch_s\":2}],\"links\":[]}",
                                  "bad-devices.json", &err));
    CHECK_STR_CONTAINS(err.msg, "bad-devices.json");
    CHECK_STR_CONTAINS(err.msg, "switch_s must be in 0..1 seconds");
    dp_devices *ds = dp_devices_read_string("{\"format\":\"dplace-devices\",\"version\":2,\"name\":\"x\","
                                            "\"devices\":[{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":1e9,"
                                            "\"memory_bandwidth\":1e9,\"memory_bytes\":1000}],\"links\":[]}",
                                            "x.json", &err);
    CHECK(ds);
    CHECK(ds->devices[0].switch_s == DP_DEVICES_SWITCH_S);
    dp_devices_free(ds);
    ds = dp_devices_read_string(eager_devices, "eager", &err);
    CHECK(ds);
    ds->devices[CPU].switch_s = 0.0025;
    const char *dpath = "test_sim_eager_devices.json";
    CHECK_INT_EQ(dp_devices_write_file(ds, dpath, &err), DP_STATUS_OK);
    dp_devices *dback = dp_devices_read_file(dpath, &err);
    CHECK(dback);
    CHECK(dback->devices[CPU].switch_s == 0.0025);
    remove(dpath);
    dp_devices_free(dback);
    dp_devices_free(ds);
    CHECK_INT_EQ(dp_executor_from_name("torch"), DP_EXECUTOR_TORCH);
    CHECK_INT_EQ(dp_executor_from_name("pytorch"), -1);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_fork_timeline_by_hand);
    TEST_RUN(test_switch_timeline_by_hand);
    TEST_RUN(test_host_bound_chain);
    TEST_RUN(test_one_stream_per_gpu);
    TEST_RUN(test_fused_ops_not_dispatched);
    TEST_RUN(test_backward_on_cpu_not_dispatched);
    TEST_RUN(test_delta_exact);
    TEST_RUN(test_executor_field);
    return test_end();
}
