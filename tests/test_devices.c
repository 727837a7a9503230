/* dplace-devices v1 and v2: presets, routing, malformed files, round trip,
 * the cost model's parameters a file carries and which of them wins. */
#include <unistd.h>

#include "dplace/cost.h"
#include "dplace/devices.h"
#include "test_util.h"

#define DHDR "{\"format\":\"dplace-devices\",\"version\":1,\"devices\":["
#define DHDR2 "{\"format\":\"dplace-devices\",\"version\":2,\"devices\":["
#define CPU0 "{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":1e12,\"memory_bandwidth\":6e10,\"memory_bytes\":1000000}"
#define GPU(n) "{\"name\":\"gpu:" #n "\",\"kind\":\"gpu\",\"peak_flops\":4e12,\"memory_bandwidth\":2.8e11,\"memory_bytes\":1000000}"
#define LINK(a, b) "{\"from\":\"" a "\",\"to\":\"" b "\",\"bandwidth\":1.5e10,\"latency_s\":1e-5}"

static const struct {
    const char *text, *expect;
} bad_devices[] = {
    {"", "bad.json: file is empty"},
    {DHDR "]}", "bad.json: the device set has no devices"},
    {"{\"format\":\"dplace-devices\",\"version\":1}", "bad.json: missing field \"devices\""},
    {DHDR "{\"name\":\"x\",\"kind\":\"tpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1}]}",
     "bad.json: device 0 \"x\": unknown kind \"tpu\" (expected \"cpu\" or \"gpu\")"},
    {DHDR "{\"name\":\"x\",\"kind\":\"gpu\",\"peak_flops\":-4,\"memory_bandwidth\":1,\"memory_bytes\":1}]}",
     "bad.json: device 0 \"x\": field \"peak_flops\" must be >= 0, got -4"},
    {DHDR "{\"name\":\"x\",\"kind\":\"gpu\",\"peak_flops\":0,\"memory_bandwidth\":1,\"memory_bytes\":1}]}",
     "bad.json: device \"x\": peak_flops must be in 1..1e20 (got 0)"},
    /* tiny positive (subnormal) and absurd rates made times infinite */
    {DHDR "{\"name\":\"x\",\"kind\":\"gpu\",\"peak_flops\":1e-320,\"memory_bandwidth\":1,\"memory_bytes\":1}]}",
     "bad.json: device \"x\": peak_flops must be in 1..1e20 (got 9.99989e-321)"},
    {DHDR "{\"name\":\"x\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"memory_bandwidth\":1e-320,\"memory_bytes\":1}]}",
     "bad.json: device \"x\": memory_bandwidth must be in 1..1e20"},
    {DHDR "{\"name\":\"x\",\"kind\":\"gpu\",\"peak_flops\":1e300,\"memory_bandwidth\":1,\"memory_bytes\":1}]}",
     "bad.json: device \"x\": peak_flops must be in 1..1e20 (got 1e+300)"},
    {DHDR CPU0 "," GPU(0) "],\"links\":[{\"from\":\"cpu:0\",\"to\":\"gpu:0\",\"bandwidth\":1e-320}]}",
     "link cpu:0 -> gpu:0: bandwidth must be in 1..1e20"},
    {DHDR "{\"name\":\"x\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1}]}",
     "bad.json: device 0 \"x\": missing field \"memory_bytes\""},
    {DHDR "{\"name\":\"x\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":0}]}",
     "device 0 \"x\": field \"memory_bytes\" must be in 1..9223372036854775807, got 0"},
    {DHDR "{\"name\":\"x\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,\"streams\":0}]}",
     "device 0 \"x\": field \"streams\" must be in 1..64, got 0"},
    {DHDR CPU0 "," CPU0 "]}", "bad.json: device \"cpu:0\": duplicate name"},
    {DHDR CPU0 "," GPU(0) "],\"links\":[" LINK("cpu:0", "gpu:7") "]}",
     "bad.json: link cpu:0 -> gpu:7: unknown device \"gpu:7\""},
    {DHDR CPU0 "," GPU(0) "],\"links\":[" LINK("gpu:0", "gpu:0") "]}", "a link joins two different devices"},
    {DHDR CPU0 "," GPU(0) "],\"links\":[" LINK("cpu:0", "gpu:0") "," LINK("gpu:0", "cpu:0") "]}",
     "link gpu:0 -> cpu:0: listed twice"},
    {DHDR CPU0 "," GPU(0) "," GPU(1) "],\"links\":[" LINK("cpu:0", "gpu:0") "]}",
     "bad.json: no route from \"cpu:0\" to \"gpu:1\""},
    {DHDR GPU(0) "," GPU(1) "]}",
     "bad.json: devices \"gpu:0\" and \"gpu:1\" have no link, and there is no host CPU to route through"},
    {DHDR CPU0 "," GPU(0) "],\"links\":[{\"from\":\"cpu:0\",\"to\":\"gpu:0\",\"bandwidth\":0}]}",
     "link cpu:0 -> gpu:0: bandwidth must be in 1..1e20 (got 0)"},
    {DHDR "{\"name\":\"x\\u001b\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1}]}",
     "bad.json: device \"x\\x1b\": name holds a control character"},
    {DHDR CPU0 "],\"links\":{}}", "bad.json: field \"links\" must be an array, got an object"},
    {"{\"format\":\"dplace-devices\",\"version\":1,\"host_staging\":\"chunked\",\"devices\":[" CPU0 "]}",
     "bad.json: unknown host_staging \"chunked\" (expected \"pipelined\" or \"store-and-forward\")"},
    /* version 2's fields */
    {"{\"format\":\"dplace-devices\",\"version\":3,\"devices\":[" CPU0 "]}",
     "bad.json: unsupported dplace-devices version 3 (this dplace reads versions 1 and 2)"},
    {DHDR "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
          "\"generation\":\"kepler\"}]}",
     "bad.json: device 0 \"g\": field \"generation\" needs \"version\": 2"},
    {DHDR "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
          "\"efficiency\":{}}]}",
     "bad.json: device 0 \"g\": field \"efficiency\" needs \"version\": 2"},
    {DHDR CPU0 "," GPU(0) "],\"links\":[{\"from\":\"cpu:0\",\"to\":\"gpu:0\",\"bandwidth\":1e9,\"efficiency\":0.5}]}",
     "bad.json: link 0: field \"efficiency\" needs \"version\": 2"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"generation\":\"volcano\"}]}",
     "bad.json: device \"g\": unknown generation \"volcano\" (known: haswell, broadwell, kepler, pascal, volta, "
     "ampere, hopper, ada)"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"generation\":\"haswell\"}]}",
     "bad.json: device \"g\": generation \"haswell\" is of kind cpu, the device gpu"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"efficiency\":{\"matmul\":{\"compute\":0}}}]}",
     "bad.json: device \"g\": efficiency matmul.compute must be in (0, 16] (got 0)"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"efficiency\":{\"matmul\":{\"memory\":17}}}]}",
     "bad.json: device \"g\": efficiency matmul.memory must be in (0, 16] (got 17)"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"efficiency\":{\"gemm\":{\"compute\":0.5}}}]}",
     "bad.json: device 0 \"g\": efficiency \"gemm\": unknown op class"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"efficiency\":{\"conv\":{\"speed\":0.5}}}]}",
     "bad.json: device 0 \"g\": efficiency \"conv\": unknown field \"speed\" (expected \"compute\" or \"memory\")"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"efficiency\":{\"conv\":0.5}}]}",
     "bad.json: device 0 \"g\": efficiency \"conv\" must be an object with \"compute\" and/or \"memory\", got a number"},
    {DHDR2 CPU0 "," GPU(0) "],\"links\":[{\"from\":\"cpu:0\",\"to\":\"gpu:0\",\"bandwidth\":1e9,\"efficiency\":1.5}]}",
     "bad.json: link 0: efficiency must be in (0, 1] (got 1.5)"},
    /* tensor-core peaks */
    {DHDR "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
          "\"tensor_flops\":{}}]}",
     "bad.json: device 0 \"g\": field \"tensor_flops\" needs \"version\": 2"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"generation\":\"ampere\",\"tensor_flops\":{\"fp8\":1e15}}]}",
     "bad.json: device 0 \"g\": tensor_flops \"fp8\": unknown math (expected tf32, float16 or bfloat16)"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"generation\":\"ampere\",\"tensor_flops\":[1]}]}",
     "bad.json: device 0 \"g\": field \"tensor_flops\" must be an object, got an array"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"generation\":\"ampere\",\"tensor_flops\":{\"tf32\":-1}}]}",
     "bad.json: device 0 \"g\": tensor_flops: field \"tf32\" must be >= 0, got -1"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"generation\":\"ampere\",\"tensor_flops\":{\"tf32\":1e300}}]}",
     "bad.json: device \"g\": tensor_flops.tf32 must be 0 or in 1..1e20 (got 1e+300)"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"generation\":\"volta\",\"tensor_flops\":{\"bfloat16\":1e14}}]}",
     "bad.json: device \"g\": tensor_flops.bfloat16 given, but generation \"volta\" has no bfloat16 tensor cores"},
    {DHDR2 "{\"name\":\"g\",\"kind\":\"gpu\",\"peak_flops\":1,\"memory_bandwidth\":1,\"memory_bytes\":1,"
           "\"tensor_flops\":{\"float16\":1e14}}]}",
     "bad.json: device \"g\": tensor_flops.float16 given, but generation \"(none)\" has no float16 tensor cores"},
};

/* Each malformed device set is refused with its exact error. */
static void test_bad_device_files(void) {
    size_t n = sizeof bad_devices / sizeof bad_devices[0];
    for (size_t i = 0; i < n; i++) {
        TEST_CASE("device set %zu", i);
        dp_error err;
        dp_error_clear(&err);
        dp_devices *ds = dp_devices_read_string(bad_devices[i].text, "bad.json", &err);
        if (ds || !strstr(err.msg, bad_devices[i].expect)) {
            fprintf(stderr, "case %zu: %s\n  got: %s\n  expected: %s\n", i, bad_devices[i].text,
                    ds ? "(accepted)" : err.msg, bad_devices[i].expect);
            exit(1);
        }
    }
    printf("  %zu malformed device sets rejected with their exact errors\n", n);
}

/* Every preset loads, with the CPU as its host and one CPU. */
static void test_every_preset_loads(void) {
    const char *const *names = dp_devices_preset_names();
    int count = 0;
    for (; *names; names++, count++) {
        TEST_CASE("preset %s", *names);
        dp_error err;
        dp_devices *ds = dp_devices_preset(*names, &err);
        if (!ds) fprintf(stderr, "%s: %s\n", *names, err.msg);
        CHECK(ds);
        CHECK(ds->host == 0);
        CHECK(ds->kind_count[DP_DEVKIND_CPU] == 1);
        dp_devices_free(ds);
    }
    test_case_[0] = '\0'; /* the count is no preset's */
    CHECK(count >= 4);
}

/* k40x4: four K40s, PCIe both ways for each, gpu:0 -> gpu:3 through the
 * host in two hops. */
static void test_k40x4_preset(void) {
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    CHECK_INT_EQ(ds->n_devices, 5);
    CHECK_INT_EQ(ds->n_links, 8); /* PCIe both ways for each GPU */
    CHECK_NEAR(ds->devices[1].peak_flops, 4.29e12, 1e-12);
    CHECK_NEAR(ds->devices[1].mem_bandwidth, 288e9, 1e-12);
    CHECK(strcmp(ds->devices[1].model, "K40") == 0);
    CHECK_INT_EQ(dp_devices_nth(ds, DP_DEVKIND_GPU, 3), 4);
    /* gpu:0 -> gpu:3 goes through the host: 2 hops */
    CHECK_INT_EQ(ds->route_len[1 * 5 + 4], 2);
    CHECK_INT_EQ(ds->route_len[0 * 5 + 4], 1);
    dp_devices_free(ds);
}

/* Without a transfer in the way: 40 us a hop; through the host pipelined,
 * the bytes once at 15.75 GB/s; stored and forwarded, twice. */
static void test_k40x4_transfer_times(void) {
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x4", &err);
    CHECK(ds);
    CHECK_INT_EQ(ds->staging, DP_STAGING_PIPELINED);
    double bw = 8e9 * 16 * 128.0 / 130.0 / 8.0;
    CHECK_NEAR(dp_devices_transfer_seconds(ds, 1, 4, 1e6), 80e-6 + 1e6 / bw, 1e-15);
    CHECK_NEAR(dp_devices_transfer_seconds(ds, 0, 4, 1e6), 40e-6 + 1e6 / bw, 1e-15);
    CHECK(dp_devices_transfer_seconds(ds, 2, 2, 1e6) == 0);
    ds->staging = DP_STAGING_STORE_AND_FORWARD;
    CHECK_NEAR(dp_devices_transfer_seconds(ds, 1, 4, 1e6), 80e-6 + 2e6 / bw, 1e-15);
    dp_devices_free(ds);
}

/* p100x4: the P100's speed and memory. */
static void test_p100x4_preset(void) {
    dp_error err;
    dp_devices *ds = dp_devices_preset("p100x4", &err);
    CHECK(ds);
    CHECK_NEAR(ds->devices[2].peak_flops, 9.3e12, 1e-12);
    CHECK_INT_EQ(ds->devices[2].memory_bytes, 12193ULL * 1024 * 1024);
    dp_devices_free(ds);
}

/* An unknown preset, or a name that is neither a preset nor a file, is
 * refused by name. */
static void test_unknown_preset_refused(void) {
    dp_error err;
    CHECK(!dp_devices_preset("k40x9", &err));
    CHECK_STR_CONTAINS(err.msg, "unknown device set \"k40x9\"");
    CHECK(!dp_devices_load("tpu_pod", &err));
    CHECK_STR_CONTAINS(err.msg, "unknown device set \"tpu_pod\"");
}

/* A device set written and read back is the same, field by field. */
static void test_roundtrip(void) {
    dp_error err;
    dp_devices *a = dp_devices_preset("k40x2", &err);
    a->staging = DP_STAGING_STORE_AND_FORWARD; /* written only when not the default */
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_dev_%d.json", (int)getpid());
    CHECK_INT_EQ(dp_devices_write_file(a, path, &err), DP_STATUS_OK);
    dp_devices *b = dp_devices_load(path, &err);
    if (!b) fprintf(stderr, "%s\n", err.msg);
    CHECK(b);
    CHECK_INT_EQ(a->n_devices, b->n_devices);
    CHECK_INT_EQ(a->n_links, b->n_links);
    CHECK_INT_EQ(b->staging, DP_STAGING_STORE_AND_FORWARD);
    for (int32_t d = 0; d < a->n_devices; d++) {
        TEST_CASE("device %d", (int)d);
        CHECK(strcmp(a->devices[d].name, b->devices[d].name) == 0);
        CHECK(strcmp(a->devices[d].model, b->devices[d].model) == 0);
        CHECK(a->devices[d].peak_flops == b->devices[d].peak_flops);
        CHECK(a->devices[d].mem_bandwidth == b->devices[d].mem_bandwidth);
        CHECK_INT_EQ(a->devices[d].memory_bytes, b->devices[d].memory_bytes);
        CHECK(a->devices[d].launch_overhead_s == b->devices[d].launch_overhead_s);
        CHECK_INT_EQ(a->devices[d].streams, b->devices[d].streams);
    }
    for (int32_t l = 0; l < a->n_links; l++) {
        TEST_CASE("link %d", (int)l);
        CHECK_INT_EQ(a->links[l].from, b->links[l].from);
        CHECK_INT_EQ(a->links[l].to, b->links[l].to);
        CHECK(a->links[l].bandwidth == b->links[l].bandwidth);
        CHECK(a->links[l].latency_s == b->links[l].latency_s);
    }
    remove(path);
    dp_devices_free(a);
    dp_devices_free(b);
}


/* A device set of one device has no links, and copies as it is: the
 * copy's device and its empty link list (the case dplace calibrate meets
 * on a CPU alone). */
static void test_copy_without_links(void) {
    dp_error err;
    dp_devices *ds = dp_devices_read_string(DHDR CPU0 "],\"links\":[]}", "one.json", &err);
    if (!ds) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds);
    CHECK_INT_EQ(ds->n_links, 0);
    dp_devices *c = dp_devices_copy(ds, &err);
    CHECK(c);
    CHECK_INT_EQ(c->n_devices, 1);
    CHECK_INT_EQ(c->n_links, 0);
    CHECK(dp_devices_hash(c) == dp_devices_hash(ds));
    dp_devices_free(c);
    dp_devices_free(ds);
}

/* A v1 file still loads: its K40 takes the kepler generation from its
 * model, an unknown model its kind's table, its links efficiency 1. */
static void test_v1_file_loads(void) {
    const char *text = DHDR CPU0 ",{\"name\":\"gpu:0\",\"kind\":\"gpu\",\"model\":\"K40\",\"peak_flops\":4e12,"
                            "\"memory_bandwidth\":2.8e11,\"memory_bytes\":1000000}],\"links\":[" LINK("cpu:0", "gpu:0") "]}";
    dp_error err;
    dp_devices *ds = dp_devices_read_string(text, "v1.json", &err);
    if (!ds) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds);
    CHECK(strcmp(ds->devices[1].generation, "kepler") == 0);
    CHECK(ds->devices[0].generation[0] == '\0');
    for (int s = 0; s < DP_EFF_COUNT; s++) {
        TEST_CASE("slot %s", dp_devices_eff_slot_name(s));
        CHECK(ds->devices[1].eff[s].compute == dp_devices_generation("kepler")->eff[s].compute);
        CHECK(ds->devices[0].eff[s].memory == dp_devices_kind_efficiency(DP_DEVKIND_CPU)[s].memory);
    }
    CHECK_INT_EQ(ds->devices[1].eff_own, 0);
    for (int32_t l = 0; l < ds->n_links; l++) CHECK(ds->links[l].efficiency == 1.0);
    dp_devices_free(ds);
}

/* The file's value wins over the generation's, which wins over the
 * kind's: an own matmul compute efficiency, the rest of the slot and the
 * other slots the generation's. */
static void test_v2_precedence(void) {
    const char *text = DHDR2 CPU0 ",{\"name\":\"gpu:0\",\"kind\":\"gpu\",\"model\":\"mine\",\"generation\":\"pascal\","
                             "\"peak_flops\":4e12,\"memory_bandwidth\":2.8e11,\"memory_bytes\":1000000,"
                             "\"efficiency\":{\"matmul\":{\"compute\":0.61},\"winograd\":{\"memory\":0.5}}}],\"links\":["
                             LINK("cpu:0", "gpu:0") "]}";
    dp_error err;
    dp_devices *ds = dp_devices_read_string(text, "v2.json", &err);
    if (!ds) fprintf(stderr, "%s\n", err.msg);
    CHECK(ds);
    const dp_device *g = &ds->devices[1];
    const dp_efficiency *gen = dp_devices_generation("pascal")->eff;
    CHECK(strcmp(g->generation, "pascal") == 0);
    CHECK(g->eff[DP_OPCLASS_MATMUL].compute == 0.61);
    CHECK(g->eff[DP_OPCLASS_MATMUL].memory == gen[DP_OPCLASS_MATMUL].memory);
    CHECK(g->eff[DP_EFF_WINOGRAD].memory == 0.5);
    CHECK(g->eff[DP_EFF_WINOGRAD].compute == gen[DP_EFF_WINOGRAD].compute);
    CHECK(g->eff[DP_OPCLASS_CONV].compute == gen[DP_OPCLASS_CONV].compute);
    CHECK_INT_EQ(g->eff_own, DP_EFF_OWN_BIT(DP_OPCLASS_MATMUL, 0) | DP_EFF_OWN_BIT(DP_EFF_WINOGRAD, 1));
    dp_devices_free(ds);
}

/* A v2 set written and read back keeps its generations, own efficiencies
 * (and only those as own) and link efficiencies: the same hash. */
static void test_v2_roundtrip(void) {
    dp_error err;
    dp_devices *a = dp_devices_preset("p100x2", &err);
    CHECK(a);
    CHECK(strcmp(a->devices[1].generation, "pascal") == 0);
    a->devices[2].eff[DP_OPCLASS_CONV].memory = 0.33;
    a->devices[2].eff[DP_EFF_GROUPED].memory = 0.33; /* grouped follows conv, not being its own, */
    a->devices[2].eff[DP_EFF_DEPTHWISE].memory = 0.33; /* and depthwise grouped */
    a->devices[2].eff_own |= DP_EFF_OWN_BIT(DP_OPCLASS_CONV, 1);
    a->links[1].efficiency = 0.8;
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_dev2_%d.json", (int)getpid());
    CHECK_INT_EQ(dp_devices_write_file(a, path, &err), DP_STATUS_OK);
    dp_devices *b = dp_devices_load(path, &err);
    if (!b) fprintf(stderr, "%s\n", err.msg);
    CHECK(b);
    for (int32_t d = 0; d < a->n_devices; d++) {
        TEST_CASE("device %d", (int)d);
        CHECK(strcmp(a->devices[d].generation, b->devices[d].generation) == 0);
        CHECK_INT_EQ(a->devices[d].eff_own, b->devices[d].eff_own);
        CHECK(dp_devices_same_cost(&a->devices[d], &b->devices[d]));
    }
    test_case_[0] = '\0';
    CHECK(b->devices[2].eff[DP_OPCLASS_CONV].memory == 0.33);
    CHECK(b->links[1].efficiency == 0.8 && b->links[0].efficiency == 1.0);
    CHECK(dp_devices_hash(a) == dp_devices_hash(b));
    remove(path);
    dp_devices_free(a);
    dp_devices_free(b);
}

/* The hash changes with any parameter a simulated time depends on, and
 * not with a copy. */
static void test_hash_covers_parameters(void) {
    dp_error err;
    dp_devices *a = dp_devices_preset("k40x2", &err);
    CHECK(a);
    uint64_t h = dp_devices_hash(a);
    dp_devices *c = dp_devices_copy(a, &err);
    CHECK(c && dp_devices_hash(c) == h);
    c->devices[1].eff[DP_OPCLASS_DATA].compute *= 1.01;
    CHECK(dp_devices_hash(c) != h);
    dp_devices_free(c);
    /* the follower slots: hashed only where not their leader's, so a set
     * that says nothing of them keeps its hash, and any other value counts */
    for (int s = DP_EFF_GROUPED; s < DP_EFF_COUNT; s++) {
        TEST_CASE("slot %s", dp_devices_eff_slot_name(s));
        CHECK_INT_EQ(dp_devices_eff_follows(s) >= 0 && dp_devices_eff_follows(s) < s, 1);
        CHECK(a->devices[1].eff[s].compute == a->devices[1].eff[dp_devices_eff_follows(s)].compute);
        c = dp_devices_copy(a, &err);
        c->devices[1].eff[s].memory *= 0.5;
        CHECK(dp_devices_hash(c) != h);
        dp_devices_free(c);
    }
    test_case_[0] = '\0';
    c = dp_devices_copy(a, &err);
    c->links[0].efficiency = 0.9;
    CHECK(dp_devices_hash(c) != h);
    dp_devices_free(c);
    c = dp_devices_copy(a, &err);
    c->links[2].latency_s *= 2;
    CHECK(dp_devices_hash(c) != h);
    dp_devices_free(c);
    c = dp_devices_copy(a, &err);
    c->devices[0].launch_overhead_s *= 2;
    CHECK(dp_devices_hash(c) != h);
    dp_devices_free(c);
    dp_devices_free(a);
    a = dp_devices_preset("a100-sxmx2", &err);
    CHECK(a);
    h = dp_devices_hash(a);
    a->devices[1].tensor_flops[DP_TENSOR_MATH_BFLOAT16] *= 2;
    CHECK(dp_devices_hash(a) != h);
    dp_devices_free(a);
}

/* A set whose devices give no tensor-core peak hashes as it did before
 * devices had them (k40x2's hash then), so that its checkpoints resume. */
static void test_hash_without_tensor_peaks_kept(void) {
    dp_error err;
    dp_devices *a = dp_devices_preset("k40x2", &err);
    CHECK(a);
    CHECK(dp_devices_hash(a) == 0x904a804c1048e91eULL);
    dp_devices_free(a);
}

/* The tensor-core peaks survive a v2 file written and read back, with the
 * generation that allows them (a100-sxmx2: TF32, FP16, BF16). */
static void test_tensor_flops_roundtrip(void) {
    dp_error err;
    dp_devices *a = dp_devices_preset("a100-sxmx2", &err);
    CHECK(a);
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_devtc_%d.json", (int)getpid());
    CHECK_INT_EQ(dp_devices_write_file(a, path, &err), DP_STATUS_OK);
    dp_devices *b = dp_devices_load(path, &err);
    CHECK(b);
    for (int32_t d = 0; d < a->n_devices; d++) {
        TEST_CASE("device %d", (int)d);
        CHECK(strcmp(a->devices[d].generation, b->devices[d].generation) == 0);
        for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++)
            CHECK(a->devices[d].tensor_flops[m] == b->devices[d].tensor_flops[m]);
        CHECK(dp_devices_same_cost(&a->devices[d], &b->devices[d]));
    }
    test_case_[0] = '\0';
    CHECK(b->devices[1].tensor_flops[DP_TENSOR_MATH_TF32] == 156e12);
    CHECK(dp_devices_hash(a) == dp_devices_hash(b));
    remove(path);
    dp_devices_free(a);
    dp_devices_free(b);
}

/* A link's efficiency scales its rate: half the efficiency, twice the
 * bytes' time, the latency as it was. */
static void test_link_efficiency_in_transfers(void) {
    dp_error err;
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    CHECK(ds);
    double bw = 8e9 * 16 * 128.0 / 130.0 / 8.0;
    for (int32_t l = 0; l < ds->n_links; l++) ds->links[l].efficiency = 0.5;
    CHECK_NEAR(dp_devices_transfer_seconds(ds, 0, 1, 1e6), 40e-6 + 2e6 / bw, 1e-15);
    CHECK_NEAR(dp_devices_transfer_seconds(ds, 1, 2, 1e6), 80e-6 + 2e6 / bw, 1e-15);
    dp_devices_free(ds);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_bad_device_files);
    TEST_RUN(test_every_preset_loads);
    TEST_RUN(test_k40x4_preset);
    TEST_RUN(test_k40x4_transfer_times);
    TEST_RUN(test_p100x4_preset);
    TEST_RUN(test_unknown_preset_refused);
    TEST_RUN(test_roundtrip);
    TEST_RUN(test_copy_without_links);
    TEST_RUN(test_v1_file_loads);
    TEST_RUN(test_v2_precedence);
    TEST_RUN(test_v2_roundtrip);
    TEST_RUN(test_hash_covers_parameters);
    TEST_RUN(test_hash_without_tensor_peaks_kept);
    TEST_RUN(test_tensor_flops_roundtrip);
    TEST_RUN(test_link_efficiency_in_transfers);
    return test_end();
}
