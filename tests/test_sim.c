/* Simulator tests on tiny graphs whose step time, transfers and memory are
 * worked out by hand below. Device set "hand": links of 1000 B/s and 0.5 s
 * latency, so a 1000-byte tensor takes 0.5 + 1 = 1.5 s on one hop, and
 * 0.5 + 0.5 + 1 = 2 s between two GPUs without a link (a copy through the
 * host is pipelined: its second hop starts when the first hop's latency has
 * passed and ends a latency after the first). Op times come from measured
 * costs (no launch overhead is added to those). */
#include <pthread.h>
#include <unistd.h>

#include "common/util.h"
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "test_fixtures.h"
#include "test_util.h"

#define HAND_DEVICES(staging)                                                                                  \
    "{\"format\":\"dplace-devices\",\"version\":1,\"name\":\"hand\"," staging "\"devices\":["           \
    "{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,\"memory_bytes\":1000000},"   \
    "{\"name\":\"gpu:0\",\"kind\":\"gpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,\"memory_bytes\":1000},"      \
    "{\"name\":\"gpu:1\",\"kind\":\"gpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,\"memory_bytes\":1000},"      \
    "{\"name\":\"gpu:2\",\"kind\":\"gpu\",\"peak_flops\":1e9,\"memory_bandwidth\":1e9,\"memory_bytes\":1000,"       \
    "\"streams\":2}],"                                                                                              \
    "\"links\":[{\"from\":\"cpu:0\",\"to\":\"gpu:0\",\"bandwidth\":1000,\"latency_s\":0.5},"                        \
    "{\"from\":\"cpu:0\",\"to\":\"gpu:1\",\"bandwidth\":1000,\"latency_s\":0.5},"                                   \
    "{\"from\":\"cpu:0\",\"to\":\"gpu:2\",\"bandwidth\":1000,\"latency_s\":0.5},"                                   \
    "{\"from\":\"gpu:0\",\"to\":\"gpu:1\",\"bandwidth\":1000,\"latency_s\":0.5}]}"

static const char *hand_devices = HAND_DEVICES("");
static const char *hand_devices_saf = HAND_DEVICES("\"host_staging\":\"store-and-forward\",");

enum { CPU = 0, G0 = 1, G1 = 2, G2 = 3 };

typedef sim_fixture fixture;

/* The graph on device set `devices`. */
static fixture setup_on(const char *graph_json, const char *devices) { return sim_fixture_open(graph_json, devices); }

static fixture setup(const char *graph_json) { return setup_on(graph_json, hand_devices); }

static void run(fixture *f, const int32_t *place) {
    dp_error err;
    dp_status st = dp_sim_run(f->sim, place, NULL, &f->res, &err);
    if (st) fprintf(stderr, "run: %s\n", err.msg);
    CHECK_INT_EQ(st, DP_STATUS_OK);
}

static void teardown(fixture *f) { sim_fixture_close(f); }

#define OP(name, inputs, bytes, cost, extra)                                                                     \
    "{\"name\":\"" name "\",\"type\":\"T\",\"inputs\":" inputs ",\"outputs\":[{\"bytes\":" #bytes "}],"         \
    "\"cost\":{\"gpu\":" #cost ",\"cpu\":" #cost "}" extra "}"

/* chain a(1s) -> b(2s) -> c(3s), outputs 100, 200, 50 bytes, param 10 on a. */
static const char *chain =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"chain\",\"ops\":["
    OP("a", "[]", 100, 1, ",\"param_bytes\":10") "," OP("b", "[0]", 200, 2, "") "," OP("c", "[[1,0]]", 50, 3, "") "]}";

/* The chain on one GPU: the ops' times in a row, memory by liveness, no
 * transfer. */
static void test_chain_one_device(void) {
    fixture f = setup(chain);
    int32_t p[3] = {G0, G0, G0};
    run(&f, p);
    CHECK(f.res.valid);
    CHECK_NEAR(f.res.step_time_s, 6.0, 1e-12);
    CHECK_NEAR(f.res.device[G0].busy_s, 6.0, 1e-12);
    /* liveness: during b, a's 100 + b's 200 + 10 params; c's 50 comes after a is freed */
    CHECK_INT_EQ(f.res.device[G0].peak_bytes, 310);
    CHECK_INT_EQ(f.res.device[G0].param_bytes, 10);
    CHECK_INT_EQ(f.res.n_transfers, 0);
    CHECK_INT_EQ(f.res.device[G0].n_ops, 3);
    teardown(&f);
}

/* The chain split over two GPUs with a direct link: two transfers over it,
 * timed by hand. */
static void test_chain_split_direct_link(void) {
    fixture f = setup(chain);
    /* a on gpu:0 [0,1]; 100 B to gpu:1 over the direct link: 0.5 + 0.1 = 0.6 -> [1,1.6];
     * b on gpu:1 [1.6,3.6]; 200 B back: gpu:1 -> gpu:0 has no direct link in that
     * direction? It has (links are duplex): 0.5 + 0.2 -> [3.6,4.3]; c [4.3,7.3]. */
    int32_t p[3] = {G0, G1, G0};
    run(&f, p);
    CHECK(f.res.valid);
    CHECK_NEAR(f.res.step_time_s, 7.3, 1e-12);
    CHECK_INT_EQ(f.res.n_transfers, 2);
    CHECK_INT_EQ(f.res.transfer_bytes, 300);
    /* gpu:1 holds the received a (100) from 1.0 and b (200) from 1.6: 300 at once */
    CHECK_INT_EQ(f.res.device[G1].peak_bytes, 300);
    teardown(&f);
}

/* Links used by the last run, and the busy time of the link from -> to. */
static int links_used(const fixture *f) {
    int used = 0;
    for (int32_t l = 0; l < f->res.n_links; l++) used += f->res.link[l].n_transfers;
    return used;
}

static double link_busy(const fixture *f, int32_t from, int32_t to) {
    for (int32_t l = 0; l < f->ds->n_links; l++)
        if (f->ds->links[l].from == from && f->ds->links[l].to == to) return f->res.link[l].busy_s;
    CHECK(!"no such link");
    return 0;
}

/* gpu:0 -> gpu:2 has no link: a copy pipelined through cpu:0, timed by
 * hand, each of the four links carrying one transfer, the host keeping no
 * copy. */
static void test_route_through_host_pipelined(void) {
    fixture f = setup(chain);
    /* a [0,1]; first hop [1,1.6]; the second takes cpu -> gpu:2 at 1,
     * starts at 1.5, ends at max(1.5 + 0.5 + 0.1, 1.6 + 0.5) = 2.1; b on
     * gpu:2 [2.1,4.1]; b's 200 B back: hops [4.1,4.8] and (4.6) -> 5.3; c
     * [5.3,8.3]. */
    int32_t p[3] = {G0, G2, G0};
    run(&f, p);
    CHECK_NEAR(f.res.step_time_s, 8.3, 1e-12);
    CHECK_INT_EQ(f.res.n_transfers, 2);
    CHECK_INT_EQ(f.res.transfer_bytes, 300);
    /* the host keeps no copy: the driver's staging buffers are not the program's */
    CHECK_INT_EQ(f.res.device[CPU].peak_bytes, 0);
    /* links gpu:0->cpu, cpu->gpu:2, gpu:2->cpu, cpu->gpu:0 each carried one transfer */
    CHECK_INT_EQ(links_used(&f), 4);
    CHECK_NEAR(link_busy(&f, G0, CPU), 0.6, 1e-12);
    CHECK_NEAR(link_busy(&f, CPU, G2), 1.1, 1e-12); /* taken at 1, free at 2.1 */
    CHECK_NEAR(link_busy(&f, G2, CPU), 0.7, 1e-12);
    CHECK_NEAR(link_busy(&f, CPU, G0), 1.2, 1e-12);
    teardown(&f);
}

/* Store and forward (the MSR model): two hops of 0.6 s, 0.7 s back, the
 * host holding each copy while forwarding it, never both. */
static void test_route_through_host_store_and_forward(void) {
    /* a [0,1]; hops [1,1.6], [1.6,2.2]; b [2.2,4.2]; back [4.2,4.9],
     * [4.9,5.6]; c [5.6,8.6] */
    int32_t p[3] = {G0, G2, G0};
    fixture f = setup_on(chain, hand_devices_saf);
    run(&f, p);
    CHECK_NEAR(f.res.step_time_s, 8.6, 1e-12);
    CHECK_INT_EQ(f.res.device[CPU].peak_bytes, 200);
    CHECK_INT_EQ(links_used(&f), 4);
    CHECK_NEAR(link_busy(&f, G0, CPU), 0.6, 1e-12);
    teardown(&f);
}

/* The critical path of the chain through the host
 * (test_route_through_host_pipelined's timeline): a, its copy's two hops
 * (the second set by the first: it starts a latency after it), b, b's copy
 * back, c. */
static void test_critical_path_by_hand(void) {
    fixture f = setup(chain);
    dp_error err;
    dp_sim_delta *d = dp_sim_delta_init(f.sim, &err);
    CHECK(d);
    int32_t p[3] = {G0, G2, G0};
    CHECK_INT_EQ(dp_sim_delta_set_base(d, p, &f.res, &err), DP_STATUS_OK);
    CHECK_NEAR(f.res.step_time_s, 8.3, 1e-12);
    dp_sim_path_step st[8];
    int32_t n = 0;
    CHECK_INT_EQ(dp_sim_delta_critical_path(d, st, 8, &n, &err), DP_STATUS_OK);
    CHECK_INT_EQ(n, 7);
    const int32_t ops[7] = {0, -1, -1, 1, -1, -1, 2};
    const double start[7] = {0, 1, 1, 2.1, 4.1, 4.1, 5.3}, end[7] = {1, 1.6, 2.1, 4.1, 4.8, 5.3, 8.3};
    const int32_t from[7] = {-1, G0, CPU, -1, G2, CPU, -1}, to[7] = {-1, CPU, G2, -1, CPU, G0, -1};
    for (int k = 0; k < 7; k++) {
        TEST_CASE("path step %d", k);
        CHECK_INT_EQ(st[k].op, ops[k]);
        CHECK_NEAR(st[k].start_s, start[k], 1e-12);
        CHECK_NEAR(st[k].end_s, end[k], 1e-12);
        if (ops[k] >= 0) {
            CHECK_INT_EQ(st[k].device, p[ops[k]]);
            continue;
        }
        CHECK_INT_EQ(f.ds->links[st[k].link].from, from[k]);
        CHECK_INT_EQ(f.ds->links[st[k].link].to, to[k]);
        CHECK_INT_EQ(st[k].producer, k < 3 ? 0 : 1);
        CHECK_INT_EQ(st[k].device, k < 3 ? G2 : G0);
    }
    dp_sim_delta_free(d);
    teardown(&f);
}

/* Moving b next to a and c (an accepted move): no transfer left, the
 * critical path is the three ops. */
static void test_critical_path_after_accepted_move(void) {
    fixture f = setup(chain);
    dp_error err;
    dp_sim_delta *d = dp_sim_delta_init(f.sim, &err);
    CHECK(d);
    int32_t p[3] = {G0, G2, G0};
    CHECK_INT_EQ(dp_sim_delta_set_base(d, p, &f.res, &err), DP_STATUS_OK);
    dp_sim_path_step st[8];
    int32_t n = 0;
    int32_t op_b = 1, dev = G0;
    dp_sim_result res;
    CHECK_INT_EQ(dp_sim_delta_try(d, 1, &op_b, &dev, &res, &err), DP_STATUS_OK);
    CHECK_NEAR(res.step_time_s, 6.0, 1e-12);
    CHECK_INT_EQ(dp_sim_delta_accept(d, &err), DP_STATUS_OK);
    CHECK_INT_EQ(dp_sim_delta_critical_path(d, st, 8, &n, &err), DP_STATUS_OK);
    CHECK_INT_EQ(n, 3);
    for (int k = 0; k < 3; k++) CHECK_INT_EQ(st[k].op, k);
    dp_sim_delta_free(d);
    teardown(&f);
}

/* a (gpu:0, 300 B) -> b (gpu:2); c (cpu, 600 B) -> d (gpu:2): a's copy
 * through the host meets c's on the host's link to gpu:2. */
static const char *staged =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"staged\",\"ops\":["
    OP("a", "[]", 300, 1, "") "," OP("c", "[]", 600, 0.5, "") "," OP("b", "[0]", 10, 1, "") ","
    OP("d", "[1]", 10, 1, "") "]}";

/* Pipelined, the second hop of a's copy waits for the host's link to
 * gpu:2, which c's copy holds. */
static void test_staged_hop_waits_for_its_link(void) {
    int32_t p[4] = {G0, CPU, G2, G2};
    fixture f = setup(staged);
    /* c [0,0.5]; c's copy cpu -> gpu:2 [0.5,1.6] (0.5 + 0.6). a [0,1]; a's
     * first hop [1,1.8] (0.5 + 0.3); its second asks for cpu -> gpu:2 at 1,
     * gets it at 1.6 and ends at max(1.6 + 0.5 + 0.3, 1.8 + 0.5) = 2.4.
     * d [1.6,2.6] and b [2.4,3.4] on gpu:2's two streams. */
    run(&f, p);
    CHECK(f.res.valid);
    CHECK_NEAR(f.res.step_time_s, 3.4, 1e-12);
    CHECK_NEAR(link_busy(&f, G0, CPU), 0.8, 1e-12);
    CHECK_NEAR(link_busy(&f, CPU, G2), 1.1 + 0.8, 1e-12); /* [0.5,1.6] and [1.6,2.4] */
    /* gpu:2 from 2.4 to 2.6: c's copy 600 (until d ends) + a's 300 + d's and b's outputs */
    CHECK_INT_EQ(f.res.device[G2].peak_bytes, 920);
    teardown(&f);
}

/* Stored and forwarded, the second hop of a's copy starts when the first
 * ends and the link is free; the host holds c's output and a's copy. */
static void test_staged_hop_store_and_forward(void) {
    int32_t p[4] = {G0, CPU, G2, G2};
    /* a's first hop [1,1.8] (the host's copy from 1), the second [1.8,2.6]
     * (cpu -> gpu:2 is free from 1.6); b [2.6,3.6]. The host holds c's
     * output (until its copy left at 1.6) and a's copy from 1. */
    fixture f = setup_on(staged, hand_devices_saf);
    run(&f, p);
    CHECK_NEAR(f.res.step_time_s, 3.6, 1e-12);
    CHECK_NEAR(link_busy(&f, G0, CPU), 0.8, 1e-12);
    CHECK_INT_EQ(f.res.device[CPU].peak_bytes, 900);
    teardown(&f);
}

/* diamond: a -> b, a -> c, (b, c) -> d */
static const char *diamond =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"diamond\",\"ops\":["
    OP("a", "[]", 1000, 1, "") "," OP("b", "[0]", 100, 2, "") "," OP("c", "[0]", 100, 3, "") ","
    OP("d", "[1,2]", 10, 1, "") "]}";

/* The diamond on one GPU: b before c (the ready FIFO), a's output held
 * until c ends, out of memory with the bytes named. */
static void test_diamond_one_device_oom(void) {
    fixture f = setup(diamond);
    int32_t one[4] = {G0, G0, G0, G0};
    run(&f, one);
    CHECK_NEAR(f.res.step_time_s, 7.0, 1e-12); /* 1 + 2 + 3 + 1 on one stream */
    /* b and c both ready at 1: b runs first (earlier in the ready FIFO). Peak: a's 1000 is
     * held until c finishes; during c: 1000 + 100 (b) + 100 (c) = 1200 > 1000 capacity */
    CHECK_INT_EQ(f.res.device[G0].peak_bytes, 1200);
    CHECK(!f.res.valid);
    CHECK_INT_EQ(f.res.verdict, DP_SIM_VERDICT_OOM);
    CHECK_STR_CONTAINS(f.res.reason, "out of memory on gpu:0");
    CHECK_STR_CONTAINS(f.res.reason, "1200 bytes");
    teardown(&f);
}

/* The diamond with b on gpu:1: b's input crosses, c runs meanwhile, both
 * GPUs' memory timed by hand. */
static void test_diamond_split(void) {
    fixture f = setup(diamond);
    /* b on gpu:1: a [0,1]; 1000 B to gpu:1 [1,2.5]; b [2.5,4.5]; c on gpu:0 [1,4];
     * b's 100 B back [4.5,5.1]; d [5.1,6.1] */
    int32_t two[4] = {G0, G1, G0, G0};
    run(&f, two);
    CHECK_NEAR(f.res.step_time_s, 6.1, 1e-12);
    CHECK_INT_EQ(f.res.n_transfers, 2);
    /* a's 1000 B stays on gpu:0 until c ends (local use) while c's 100 B exists */
    CHECK_INT_EQ(f.res.device[G0].peak_bytes, 1100);
    CHECK_INT_EQ(f.res.device[G1].peak_bytes, 1100); /* received a + b's output */
    CHECK_INT_EQ(f.res.verdict, DP_SIM_VERDICT_OOM);
    teardown(&f);
}

/* a has one output used by b and c; both on gpu:1: one transfer, not two */
static const char *fanout =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"fanout\",\"ops\":["
    OP("a", "[]", 400, 1, "") "," OP("b", "[0]", 10, 1, "") "," OP("c", "[0]", 10, 1, "") "]}";

/* One output read by two ops on another GPU crosses once. */
static void test_fanout_one_transfer(void) {
    fixture f = setup(fanout);
    int32_t p[3] = {G0, G1, G1};
    run(&f, p);
    CHECK_INT_EQ(f.res.n_transfers, 1);
    CHECK_INT_EQ(f.res.transfer_bytes, 400);
    /* a [0,1]; transfer 0.5 + 0.4 -> 1.9; b [1.9,2.9]; c [2.9,3.9] */
    CHECK_NEAR(f.res.step_time_s, 3.9, 1e-12);
    /* the received copy lives until c, its last consumer there, finishes; b's unused
     * output is freed when b ends, so the peak is 400 + 10 */
    CHECK_INT_EQ(f.res.device[G1].peak_bytes, 410);
    /* the producer's copy is freed once the send left: peak on gpu:0 is 400 */
    CHECK_INT_EQ(f.res.device[G0].peak_bytes, 400);
    teardown(&f);
}

/* a has two 1000-byte outputs; c uses the first, d the second, both on gpu:1 */
static const char *contend =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"contend\",\"ops\":["
    "{\"name\":\"a\",\"type\":\"T\",\"outputs\":[{\"bytes\":500},{\"bytes\":500}],\"cost\":{\"gpu\":1}},"
    OP("c", "[[0,0]]", 10, 1, "") "," OP("d", "[[0,1]]", 10, 1, "") "]}";

/* Two copies wanting one link at once take it one after the other. */
static void test_link_contention(void) {
    fixture f = setup(contend);
    int32_t p[3] = {G0, G1, G1};
    run(&f, p);
    /* both sends want gpu:0 -> gpu:1 at t=1; one at a time: [1,2], [2,3].
     * c [2,3]; d [3,4]. Without contention d would end at 3. */
    CHECK_INT_EQ(f.res.n_transfers, 2);
    CHECK_NEAR(f.res.step_time_s, 4.0, 1e-12);
    int32_t l = -1;
    for (int32_t k = 0; k < f.ds->n_links; k++)
        if (f.ds->links[k].from == G0 && f.ds->links[k].to == G1) l = k;
    CHECK(l >= 0);
    CHECK_INT_EQ(f.res.link[l].n_transfers, 2);
    CHECK_NEAR(f.res.link[l].busy_s, 2.0, 1e-12);
    CHECK_INT_EQ(f.res.link[l].bytes, 1000);
    teardown(&f);
}

/* Four 300-byte ops in a chain: their sum (1200) is over gpu:0's 1000 bytes,
 * but at most two are alive at once (600), so the placement fits. */
static const char *long_chain =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"long\",\"ops\":["
    OP("a", "[]", 300, 1, "") "," OP("b", "[0]", 300, 1, "") "," OP("c", "[1]", 300, 1, "") ","
    OP("d", "[2]", 300, 1, ",\"temp_bytes\":350") "]}";

/* Memory is what is alive at once, not the sum of the outputs. */
static void test_oom_by_liveness_not_sum(void) {
    fixture f = setup(long_chain);
    int32_t p[4] = {G0, G0, G0, G0};
    run(&f, p);
    /* c and d alive with d's 350 scratch: 300 + 300 + 350 = 950 <= 1000 */
    CHECK_INT_EQ(f.res.device[G0].peak_bytes, 950);
    CHECK(f.res.valid);
    teardown(&f);
}

static const char *constrained =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"con\",\"ops\":["
    OP("reader", "[]", 10, 1, ",\"device\":\"cpu\"") "," OP("w", "[]", 10, 1, ",\"colocate\":\"v\"") ","
    OP("w_update", "[0,1]", 10, 1, ",\"colocate\":\"v\"") "]}";

/* The reader on the CPU and the variable's group on one GPU: valid. */
static void test_valid_verdict(void) {
    fixture f = setup(constrained);
    int32_t ok[3] = {CPU, G1, G1};
    run(&f, ok);
    CHECK(f.res.valid);
    CHECK_INT_EQ(f.res.verdict, DP_SIM_VERDICT_VALID);
    CHECK_STR_CONTAINS(f.res.reason, "");
    teardown(&f);
}

/* A CPU-only op on a GPU: the constraint verdict naming the op, still
 * simulated. */
static void test_constraint_verdict(void) {
    fixture f = setup(constrained);
    int32_t bad[3] = {G0, G1, G1};
    run(&f, bad);
    CHECK(!f.res.valid);
    CHECK_INT_EQ(f.res.verdict, DP_SIM_VERDICT_CONSTRAINT);
    CHECK_STR_CONTAINS(f.res.reason, "op 0 \"reader\"");
    CHECK_STR_CONTAINS(f.res.reason, "must run on cpu but is placed on gpu:0");
    CHECK(f.res.step_time_s > 0); /* still simulated */
    teardown(&f);
}

/* A colocation group over two GPUs: the colocation verdict naming it. */
static void test_colocation_verdict(void) {
    fixture f = setup(constrained);
    int32_t split[3] = {CPU, G0, G1};
    run(&f, split);
    CHECK_INT_EQ(f.res.verdict, DP_SIM_VERDICT_COLOCATION);
    CHECK_STR_CONTAINS(f.res.reason, "colocation group \"v\" is split");
    teardown(&f);
}

/* The one-device shorthand honours the constraint. */
static void test_shorthand_honours_constraint(void) {
    fixture f = setup(constrained);
    int32_t single[3];
    dp_error err;
    CHECK_INT_EQ(dp_placement_resolve("gpu:1", f.g, f.ds, single, &err), DP_STATUS_OK);
    CHECK_INT_EQ(single[0], CPU);
    CHECK_INT_EQ(single[1], G1);
    teardown(&f);
}

/* A malformed placement (a device out of range) is an error, not a
 * verdict. */
static void test_malformed_placement_refused(void) {
    fixture f = setup(constrained);
    dp_error err;
    int32_t out_of_range[3] = {CPU, 7, G1};
    CHECK_INT_EQ(dp_sim_run(f.sim, out_of_range, NULL, &f.res, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "op 1 \"w\" is device 7");
    teardown(&f);
}

/* A GPU with two streams runs two ready ops at once. */
static void test_streams_run_concurrently(void) {
    fixture f = setup(diamond);
    /* gpu:2 has 2 streams: a [0,1]; b [1,3] and c [1,4] at once; d [4,5] */
    int32_t p[4] = {G2, G2, G2, G2};
    run(&f, p);
    CHECK_NEAR(f.res.step_time_s, 5.0, 1e-12);
    CHECK_NEAR(f.res.device[G2].busy_s, 7.0, 1e-12);
    teardown(&f);
}

/* A graph that needs a device the set lacks is refused at init. */
static void test_impossible_device_set(void) {
    dp_error err;
    dp_graph *g = dp_graph_read_string(
        "{\"format\":\"dplace-graph\",\"version\":1,\"ops\":[" OP("a", "[]", 1, 1, ",\"device\":\"gpu:5\"") "]}", "g",
        &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    CHECK(ds);
    dp_sim *s = dp_sim_init(g, ds, &err);
    CHECK(!s);
    CHECK_STR_CONTAINS(err.msg, "op 0 \"a\" must run on gpu:5, which the set lacks");
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A synthetic graph of 3000 ops on k40x4, its free ops on random GPUs. */
typedef struct synth_fixture {
    dp_graph *g;
    dp_devices *ds;
    dp_sim *s;
    int32_t *p;
} synth_fixture;

static synth_fixture synth_open(void) {
    synth_fixture f;
    dp_error err;
    f.g = dp_graph_synth(3000, 7, &err);
    CHECK(f.g);
    f.ds = dp_devices_preset("k40x4", &err);
    f.s = dp_sim_init(f.g, f.ds, &err);
    CHECK(f.s);
    f.p = malloc((size_t)f.g->n_ops * sizeof(int32_t));
    dp_rng rng;
    dp_rng_seed(&rng, 3);
    for (int32_t i = 0; i < f.g->n_ops; i++) f.p[i] = 1 + (int32_t)dp_rng_below(&rng, 4);
    CHECK_INT_EQ(dp_placement_single(f.g, f.ds, 1, f.p, &err), DP_STATUS_OK); /* keep constraints: start valid */
    for (int32_t i = 0; i < f.g->n_ops; i++)
        if (f.g->ops[i].device.kind == DP_DEVCON_NONE && f.g->ops[i].colocate < 0)
            f.p[i] = 1 + (int32_t)dp_rng_below(&rng, 4);
    return f;
}

static void synth_close(synth_fixture *f) {
    free(f->p);
    dp_sim_free(f->s);
    dp_devices_free(f->ds);
    dp_graph_free(f->g);
}

/* Two GPUs that differ only in a file's efficiency are two device classes:
 * the slower one's matmuls take longer, the other's as on the preset. */
static void test_device_efficiency_splits_classes(void) {
    dp_error err;
    dp_graph *g = dp_graph_synth(400, 5, &err);
    CHECK(g);
    dp_devices *stock = dp_devices_preset("k40x2", &err), *ds = dp_devices_copy(stock, &err);
    CHECK(stock && ds);
    for (int c = 0; c < DP_OPCLASS_COUNT; c++) {
        ds->devices[2].eff[c].compute *= 0.5;
        ds->devices[2].eff_own |= DP_EFF_OWN_BIT(c, 0);
    }
    dp_sim *a = dp_sim_init(g, stock, &err), *b = dp_sim_init(g, ds, &err);
    CHECK(a && b);
    int slower = 0;
    for (int32_t i = 0; i < g->n_ops; i++) {
        CHECK(dp_sim_op_seconds(b, i, 1) == dp_sim_op_seconds(a, i, 1));
        CHECK(dp_sim_op_seconds(b, i, 2) >= dp_sim_op_seconds(a, i, 2));
        slower += dp_sim_op_seconds(b, i, 2) > dp_sim_op_seconds(a, i, 2);
    }
    CHECK(slower > 0);
    dp_sim_free(a), dp_sim_free(b);
    dp_devices_free(stock), dp_devices_free(ds);
    dp_graph_free(g);
}

/* The same placement simulated twice gives the same step time. */
static void test_same_placement_same_time(void) {
    synth_fixture f = synth_open();
    dp_error err;
    dp_sim_result a, b;
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, NULL, &a, &err), 0);
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, NULL, &b, &err), 0);
    CHECK(a.step_time_s == b.step_time_s);
    CHECK(a.n_transfers > 0);
    synth_close(&f);
}

/* The devices' busy time sums the ops' costs, and the step is no shorter
 * than that work spread over the four GPUs. */
static void test_busy_time_is_op_costs(void) {
    synth_fixture f = synth_open();
    dp_error err;
    dp_sim_result a;
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, NULL, &a, &err), 0);
    double sum_busy = 0, sum_cost = 0;
    for (int32_t d = 0; d < f.ds->n_devices; d++) sum_busy += a.device[d].busy_s;
    for (int32_t i = 0; i < f.g->n_ops; i++) sum_cost += dp_sim_op_seconds(f.s, i, f.p[i]);
    CHECK_NEAR(sum_busy, sum_cost, 1e-9);
    CHECK(a.step_time_s >= sum_busy / 4 - 1e-12);
    synth_close(&f);
}

/* The noisy protocol: 9 steps, 2 of warm-up, sigma 0.1. */
static dp_sim_options noisy_options(uint64_t seed) {
    dp_sim_options o = dp_sim_options_default();
    o.noise_sigma = 0.1;
    o.steps = 9;
    o.warmup = 2;
    o.seed = seed;
    return o;
}

/* With noise, the same seed gives the same answer over the measured steps
 * (all but the warm-up); another seed another answer, close to it
 * (mean-one noise). */
static void test_noise_seeded(void) {
    synth_fixture f = synth_open();
    dp_error err;
    dp_sim_result a, b;
    dp_sim_options o = noisy_options(42);
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, &o, &a, &err), 0);
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, &o, &b, &err), 0);
    CHECK(a.step_time_s == b.step_time_s); /* same seed, same answer */
    CHECK_INT_EQ(a.steps_measured, 7);
    o.seed = 43;
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, &o, &b, &err), 0);
    CHECK(a.step_time_s != b.step_time_s);
    CHECK_NEAR(a.step_time_s, b.step_time_s, 0.1); /* mean-one noise: close */
    synth_close(&f);
}

/* A warm-up of all the steps is refused. */
static void test_warmup_of_every_step_refused(void) {
    synth_fixture f = synth_open();
    dp_error err;
    dp_sim_result b;
    dp_sim_options o = noisy_options(43);
    o.warmup = 9;
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, &o, &b, &err), DP_STATUS_INVALID);
    synth_close(&f);
}

/* A variable (params 100, output 100) read by an Identity and used by m:
 * neither the variable's output nor its read takes memory on its own device
 * (they reference the parameters); a copy sent to another device does. */
#define TOP(name, type, inputs, bytes, cost, extra)                                                              \
    "{\"name\":\"" name "\",\"type\":\"" type "\",\"inputs\":" inputs ",\"outputs\":[{\"bytes\":" #bytes "}]," \
    "\"cost\":{\"gpu\":" #cost ",\"cpu\":" #cost "}" extra "}"
static const char *variable =
    "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"variable\",\"ops\":["
    TOP("v", "VariableV2", "[]", 100, 1, ",\"param_bytes\":100") ","
    TOP("v/read", "Identity", "[0]", 100, 1, "") "," TOP("m", "MatMul", "[1]", 50, 1, "") "]}";

/* A variable's output and its read take no memory of their own; a copy
 * of them on another device does. */
static void test_variable_outputs_are_references(void) {
    fixture f = setup(variable);
    int32_t p[3] = {G0, G0, G0};
    run(&f, p);
    CHECK_INT_EQ(f.res.device[G0].peak_bytes, 150); /* params 100 + m's 50 */
    int32_t q[3] = {G0, G0, G1};
    run(&f, q);
    CHECK_INT_EQ(f.res.device[G0].peak_bytes, 100);
    CHECK_INT_EQ(f.res.device[G1].peak_bytes, 150); /* received copy 100 + m's 50 */
    CHECK_INT_EQ(f.res.transfer_bytes, 100);
    teardown(&f);
}

/* ---- workspaces and threads ------------------------------------------------ */

/* A result with its link statistics copied out of the workspace. */
typedef struct kept_result {
    dp_sim_result res;
    dp_sim_link_stats link[2 * DP_MAX_DEVICES * DP_MAX_DEVICES];
} kept_result;

static void keep(kept_result *k, const dp_sim_result *r) {
    k->res = *r;
    k->res.link = NULL;
    memset(k->link, 0, sizeof k->link);
    memcpy(k->link, r->link, (size_t)r->n_links * sizeof(dp_sim_link_stats));
}

/* Whether two results are identical, field by field (no tolerance). */
static int same_result(const kept_result *a, const kept_result *b) {
    const dp_sim_result *x = &a->res, *y = &b->res;
    if (x->step_time_s != y->step_time_s || x->valid != y->valid || x->verdict != y->verdict ||
        strcmp(x->reason, y->reason) || x->n_devices != y->n_devices || x->n_links != y->n_links ||
        x->transfer_bytes != y->transfer_bytes || x->n_transfers != y->n_transfers ||
        x->steps_measured != y->steps_measured)
        return 0;
    for (int32_t d = 0; d < x->n_devices; d++) {
        const dp_sim_device_stats *p = &x->device[d], *q = &y->device[d];
        if (p->busy_s != q->busy_s || p->peak_bytes != q->peak_bytes || p->param_bytes != q->param_bytes ||
            p->memory_bytes != q->memory_bytes || p->n_ops != q->n_ops)
            return 0;
    }
    for (int32_t l = 0; l < x->n_links; l++)
        if (a->link[l].busy_s != b->link[l].busy_s || a->link[l].bytes != b->link[l].bytes ||
            a->link[l].n_transfers != b->link[l].n_transfers)
            return 0;
    return 1;
}

enum { N_OPTS = 2, THREAD_RUNS = 40 };

/* One thread's work: run its placement THREAD_RUNS times with its own
 * workspace, alternating the options, against the sequential results. */
typedef struct sim_job {
    const dp_sim *sim;
    const int32_t *placement;
    const dp_sim_options *opt; /* [N_OPTS] */
    const kept_result *expect; /* [N_OPTS] */
    dp_sim_workspace *ws;      /* left for the main thread's trace */
    int runs, mismatches, errors;
} sim_job;

static void *sim_thread(void *arg) {
    sim_job *j = arg;
    dp_error err;
    kept_result got;
    j->ws = dp_sim_workspace_init(j->sim, &err);
    if (!j->ws) {
        j->errors++;
        return NULL;
    }
    for (int r = 0; r < THREAD_RUNS; r++) {
        int k = r % N_OPTS;
        dp_sim_options o = j->opt[k];
        o.record_trace = r == THREAD_RUNS - 1; /* the last run keeps its timeline */
        dp_sim_result res;
        if (dp_sim_run_ws(j->sim, j->ws, j->placement, &o, &res, &err)) {
            j->errors++;
            continue;
        }
        keep(&got, &res);
        j->runs++;
        if (!same_result(&got, &j->expect[k])) j->mismatches++;
    }
    return NULL;
}

/* Whether two files hold the same bytes. */
static int same_file(const char *a, const char *b) {
    char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    dp_error err;
    int same = !dp_read_file(a, (size_t)1 << 30, &x, &nx, &err) && !dp_read_file(b, (size_t)1 << 30, &y, &ny, &err) &&
               nx == ny && memcmp(x, y, nx) == 0;
    free(x);
    free(y);
    return same;
}

/* Two threads, each running a different placement many times on one const
 * context with a workspace of its own, get exactly the sequential results
 * (with and without noise), and their traces are the sequential traces;
 * the context's own workspace, running meanwhile, gets them too, and
 * records no trace it was not asked for. One test: every check reads the
 * same concurrent runs. */
static void test_threads_share_one_context(void) {
    dp_error err;
    dp_graph *g = dp_graph_synth(4000, 5, &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    dp_sim *s = dp_sim_init(g, ds, &err);
    CHECK(s);
    int32_t n = g->n_ops;
    int32_t *pl[2];
    dp_rng rng;
    dp_rng_seed(&rng, 17);
    for (int t = 0; t < 2; t++) {
        pl[t] = malloc((size_t)n * sizeof(int32_t));
        CHECK(pl[t]);
        CHECK_INT_EQ(dp_placement_single(g, ds, 1 + t, pl[t], &err), DP_STATUS_OK);
    }
    /* thread 1: every free op on a random GPU (many transfers, split groups) */
    for (int32_t i = 0; i < n; i++)
        if (g->ops[i].device.kind == DP_DEVCON_NONE) pl[1][i] = 1 + (int32_t)dp_rng_below(&rng, 4);
    dp_sim_options opt[N_OPTS] = {dp_sim_options_default(), dp_sim_options_default()};
    opt[1].noise_sigma = 0.2;
    opt[1].steps = 5;
    opt[1].warmup = 1;
    opt[1].seed = 99;

    /* sequential answers, with the context's own workspace */
    kept_result *expect = malloc(2 * N_OPTS * sizeof *expect);
    CHECK(expect);
    char seq_trace[2][96], thr_trace[2][96];
    for (int t = 0; t < 2; t++) {
        for (int k = 0; k < N_OPTS; k++) {
            TEST_CASE("sequential, placement %d, options %d", t, k);
            dp_sim_options o = opt[k];
            o.record_trace = k == (THREAD_RUNS - 1) % N_OPTS;
            dp_sim_result res;
            CHECK_INT_EQ(dp_sim_run(s, pl[t], &o, &res, &err), DP_STATUS_OK);
            keep(&expect[t * N_OPTS + k], &res);
            if (!o.record_trace) continue;
            snprintf(seq_trace[t], sizeof seq_trace[t], "/tmp/dplace_ws_seq%d_%d.json", t, (int)getpid());
            CHECK_INT_EQ(dp_trace_write(s, seq_trace[t], &err), DP_STATUS_OK);
        }
    }
    test_case_[0] = '\0';
    CHECK(expect[0].res.valid);
    CHECK(expect[N_OPTS].res.n_transfers > 100);
    CHECK(expect[0].res.step_time_s != expect[N_OPTS].res.step_time_s);

    sim_job job[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        job[t] = (sim_job){s, pl[t], opt, &expect[t * N_OPTS], NULL, 0, 0, 0};
        CHECK_INT_EQ(pthread_create(&th[t], NULL, sim_thread, &job[t]), 0);
    }
    /* meanwhile the context's own workspace runs too */
    dp_sim_result own;
    kept_result kept;
    for (int r = 0; r < 10; r++) {
        TEST_CASE("the context's own workspace, run %d", r);
        CHECK_INT_EQ(dp_sim_run(s, pl[r & 1], &opt[0], &own, &err), DP_STATUS_OK);
        keep(&kept, &own);
        CHECK(same_result(&kept, &expect[(r & 1) * N_OPTS]));
    }
    for (int t = 0; t < 2; t++) CHECK_INT_EQ(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < 2; t++) {
        TEST_CASE("thread %d", t);
        CHECK_INT_EQ(job[t].errors, 0);
        CHECK_INT_EQ(job[t].runs, THREAD_RUNS);
        CHECK_INT_EQ(job[t].mismatches, 0);
        snprintf(thr_trace[t], sizeof thr_trace[t], "/tmp/dplace_ws_thr%d_%d.json", t, (int)getpid());
        CHECK_INT_EQ(dp_trace_write_ws(s, job[t].ws, thr_trace[t], &err), DP_STATUS_OK);
        CHECK(same_file(seq_trace[t], thr_trace[t]));
        remove(seq_trace[t]);
        remove(thr_trace[t]);
    }
    /* the context's own workspace made no trace in its last run */
    TEST_CASE("the context's own workspace");
    CHECK_INT_EQ(dp_trace_write(s, thr_trace[0], &err), DP_STATUS_INVALID);

    for (int t = 0; t < 2; t++) {
        dp_sim_workspace_free(job[t].ws);
        free(pl[t]);
    }
    free(expect);
    dp_sim_free(s);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A workspace serves the context it was made for only: running or
 * tracing it on another context of the same graph is refused. */
static void test_workspace_serves_its_context_only(void) {
    dp_error err;
    dp_graph *g = dp_graph_synth(4000, 5, &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    dp_sim *s = dp_sim_init(g, ds, &err), *other = dp_sim_init(g, ds, &err);
    CHECK(s && other);
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    CHECK(p);
    CHECK_INT_EQ(dp_placement_single(g, ds, 1, p, &err), DP_STATUS_OK);
    dp_sim_workspace *ws = dp_sim_workspace_init(s, &err);
    CHECK(ws);
    dp_sim_options o = dp_sim_options_default();
    o.record_trace = 1;
    dp_sim_result res;
    CHECK_INT_EQ(dp_sim_run_ws(s, ws, p, &o, &res, &err), DP_STATUS_OK);
    char path[96];
    snprintf(path, sizeof path, "/tmp/dplace_ws_other_%d.json", (int)getpid());
    CHECK_INT_EQ(dp_sim_run_ws(other, ws, p, NULL, &res, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "another context");
    CHECK_INT_EQ(dp_trace_write_ws(other, ws, path, &err), DP_STATUS_INVALID);
    remove(path);
    dp_sim_workspace_free(ws);
    free(p);
    dp_sim_free(other);
    dp_sim_free(s);
    dp_devices_free(ds);
    dp_graph_free(g);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_chain_one_device);
    TEST_RUN(test_chain_split_direct_link);
    TEST_RUN(test_route_through_host_pipelined);
    TEST_RUN(test_route_through_host_store_and_forward);
    TEST_RUN(test_critical_path_by_hand);
    TEST_RUN(test_critical_path_after_accepted_move);
    TEST_RUN(test_staged_hop_waits_for_its_link);
    TEST_RUN(test_staged_hop_store_and_forward);
    TEST_RUN(test_diamond_one_device_oom);
    TEST_RUN(test_diamond_split);
    TEST_RUN(test_fanout_one_transfer);
    TEST_RUN(test_link_contention);
    TEST_RUN(test_oom_by_liveness_not_sum);
    TEST_RUN(test_valid_verdict);
    TEST_RUN(test_constraint_verdict);
    TEST_RUN(test_colocation_verdict);
    TEST_RUN(test_shorthand_honours_constraint);
    TEST_RUN(test_malformed_placement_refused);
    TEST_RUN(test_streams_run_concurrently);
    TEST_RUN(test_impossible_device_set);
    TEST_RUN(test_same_placement_same_time);
    TEST_RUN(test_busy_time_is_op_costs);
    TEST_RUN(test_noise_seeded);
    TEST_RUN(test_warmup_of_every_step_refused);
    TEST_RUN(test_variable_outputs_are_references);
    TEST_RUN(test_threads_share_one_context);
    TEST_RUN(test_workspace_serves_its_context_only);
    TEST_RUN(test_device_efficiency_splits_classes);
    return test_end();
}
