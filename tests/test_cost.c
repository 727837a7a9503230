/* Cost model: measured costs win, roofline otherwise, meta ops and
 * reductions over no axes cost a fraction of the overhead. */
#include "dplace/cost.h"
#include "test_util.h"

#define CHECK_STR_EQ(a, b)                                                                         \
    do {                                                                                           \
        const char *sa_ = (a), *sb_ = (b);                                                         \
        if (strcmp(sa_, sb_) != 0) {                                                               \
            TEST_WHERE_();                                                                         \
            fprintf(stderr, "%s == %s failed: \"%s\" != \"%s\"\n", #a, #b, sa_, sb_);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const char *graph =
    "{\"format\":\"dplace-graph\",\"version\":1,\"ops\":["
    "{\"name\":\"x\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[1000,1000],\"dtype\":\"float32\"}]},"
    "{\"name\":\"mm\",\"type\":\"MatMul\",\"inputs\":[0,0],\"outputs\":[{\"shape\":[1000,1000],\"dtype\":\"float32\"}],"
    "\"flops\":2e9},"
    "{\"name\":\"relu\",\"type\":\"Relu\",\"inputs\":[1],\"outputs\":[{\"shape\":[1000,1000],\"dtype\":\"float32\"}],"
    "\"flops\":1e6},"
    "{\"name\":\"m\",\"type\":\"MatMul\",\"inputs\":[2,2],\"outputs\":[{\"bytes\":4}],\"flops\":2e9,"
    "\"cost\":{\"gpu\":0.5,\"K40\":0.25,\"cpu\":3}},"
    "{\"name\":\"sum0\",\"type\":\"Sum\",\"inputs\":[2],\"outputs\":[{\"shape\":[1000,1000],\"dtype\":\"float32\"}],"
    "\"flops\":1e6},"
    "{\"name\":\"sum1\",\"type\":\"Sum\",\"inputs\":[2],\"outputs\":[{\"shape\":[1000],\"dtype\":\"float32\"}],"
    "\"flops\":1e6}]}";

/* The cost graph on k40x1 (cpu:0, gpu:0), for the tests below. */
typedef struct cost_fixture {
    dp_graph *g;
    dp_devices *ds;
    const dp_device *cpu, *gpu;
} cost_fixture;

static cost_fixture cost_open(void) {
    cost_fixture f;
    dp_error err;
    f.g = dp_graph_read_string(graph, "cost", &err);
    CHECK(f.g);
    f.ds = dp_devices_preset("k40x1", &err);
    CHECK(f.ds);
    f.cpu = &f.ds->devices[0], f.gpu = &f.ds->devices[1];
    return f;
}

static void cost_close(cost_fixture *f) {
    dp_devices_free(f->ds);
    dp_graph_free(f->g);
}

/* A meta op costs its generation's fraction of the launch overhead
 * (host-side, no kernel). */
static void test_meta_op_cost(void) {
    cost_fixture f = cost_open();
    CHECK_STR_EQ(f.gpu->generation, "kepler");
    CHECK_STR_EQ(f.cpu->generation, "haswell");
    CHECK_NEAR(dp_cost_op_seconds(f.g, 0, f.gpu), dp_devices_generation("kepler")->meta_fraction * f.gpu->launch_overhead_s,
               1e-15);
    cost_close(&f);
}

/* A matmul on the K40 is compute bound: 2e9 / (4.29e12 x e_c x u) +
 * overhead, where u is the shape's utilization: 1000 x 1000 outputs in
 * 128 x 128 tiles are 8 x 8 = 64 tiles covering 1024 x 1024 (1e6 / 1024^2),
 * run in 5 waves of 15 (64 / 75); the CPU is slower on it than the GPU. */
static void test_matmul_compute_bound(void) {
    cost_fixture f = cost_open();
    dp_efficiency e = f.gpu->eff[DP_OPCLASS_MATMUL];
    double u = (1e6 / (1024.0 * 1024.0)) * (64.0 / 75.0);
    double want = 2e9 / (4.29e12 * e.compute * u) + f.gpu->launch_overhead_s;
    CHECK_NEAR(dp_cost_op_seconds(f.g, 1, f.gpu), want, 1e-12);
    CHECK(dp_cost_op_seconds(f.g, 1, f.cpu) > 2 * dp_cost_op_seconds(f.g, 1, f.gpu));
    cost_close(&f);
}

/* An element-wise op is memory bound: relu moves 8 MB. */
static void test_elementwise_memory_bound(void) {
    cost_fixture f = cost_open();
    CHECK_NEAR(dp_cost_op_bytes(f.g, 2), 8e6, 1e-12);
    dp_efficiency e = f.gpu->eff[DP_OPCLASS_ELEMENTWISE];
    double want = 8e6 / (288e9 * e.memory) + f.gpu->launch_overhead_s;
    CHECK_NEAR(dp_cost_op_seconds(f.g, 2, f.gpu), want, 1e-12);
    cost_close(&f);
}

/* Measured costs win over the roofline, the model key over the kind key. */
static void test_measured_cost_wins(void) {
    cost_fixture f = cost_open();
    CHECK_NEAR(dp_cost_op_seconds(f.g, 3, f.gpu), 0.25, 1e-15);
    CHECK_NEAR(dp_cost_op_seconds(f.g, 3, f.cpu), 3.0, 1e-15);
    cost_close(&f);
}

/* A Sum over no axes (output as large as its input) forwards the buffer:
 * the meta cost; a real reduction pays for the bytes it reads. */
static void test_reductions(void) {
    cost_fixture f = cost_open();
    CHECK_NEAR(dp_cost_op_seconds(f.g, 4, f.gpu), dp_devices_generation("kepler")->meta_fraction * f.gpu->launch_overhead_s,
               1e-15);
    dp_efficiency e = f.gpu->eff[DP_OPCLASS_REDUCTION];
    double want = 4.004e6 / (288e9 * e.memory) + f.gpu->launch_overhead_s;
    CHECK_NEAR(dp_cost_op_seconds(f.g, 5, f.gpu), want, 1e-12);
    cost_close(&f);
}

/* A type's class: a gradient of a convolution is a convolution; an
 * unknown type is priced as element-wise. */
static void test_opclass_of_type(void) {
    CHECK_INT_EQ(dp_opclass_of_type("Conv2DBackpropFilter"), DP_OPCLASS_CONV);
    CHECK_INT_EQ(dp_opclass_of_type("SomethingNew"), DP_OPCLASS_ELEMENTWISE);
}

/* The type tables are sorted and disjoint. */
static void test_type_tables_sorted(void) {
    dp_error err;
    dp_error_clear(&err);
    CHECK_INT_EQ(dp_cost_check_tables(&err), DP_STATUS_OK);
}

/* The names of each framework land in their class (TensorFlow, aten as the
 * PyTorch exporter writes them, ONNX); aten's in-place variants and
 * qualified names find their op. */
static void test_framework_types_classified(void) {
    static const struct {
        const char *type;
        dp_opclass cls;
    } cases[] = {
        {"Conv2D", DP_OPCLASS_CONV},
        {"MatMul", DP_OPCLASS_MATMUL},
        {"Mul", DP_OPCLASS_ELEMENTWISE},
        {"convolution", DP_OPCLASS_CONV},
        {"convolution_backward", DP_OPCLASS_CONV},
        {"addmm", DP_OPCLASS_MATMUL},
        {"bmm", DP_OPCLASS_MATMUL},
        {"_scaled_dot_product_attention", DP_OPCLASS_MATMUL},
        {"native_batch_norm", DP_OPCLASS_REDUCTION},
        {"native_layer_norm_backward", DP_OPCLASS_REDUCTION},
        {"_softmax", DP_OPCLASS_REDUCTION},
        {"threshold_backward", DP_OPCLASS_ELEMENTWISE},
        {"relu_", DP_OPCLASS_ELEMENTWISE},
        {"add_", DP_OPCLASS_ELEMENTWISE},
        {"aten::addmm", DP_OPCLASS_MATMUL},
        {"aten.convolution.default", DP_OPCLASS_CONV},
        {"view", DP_OPCLASS_META},
        {"t", DP_OPCLASS_META},
        {"Parameter", DP_OPCLASS_META},
        {"cat", DP_OPCLASS_DATA},
        {"Conv", DP_OPCLASS_CONV},
        {"Gemm", DP_OPCLASS_MATMUL},
        {"BatchNormalization", DP_OPCLASS_REDUCTION},
        {"GlobalAveragePool", DP_OPCLASS_REDUCTION},
        {"Unsqueeze", DP_OPCLASS_META},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TEST_CASE("type \"%s\"", cases[i].type);
        CHECK_STR_EQ(dp_opclass_name(dp_opclass_of_type(cases[i].type)), dp_opclass_name(cases[i].cls));
        CHECK_INT_EQ(dp_cost_type_known(cases[i].type), 1);
    }
}

/* Unknown names, overload suffixes outside aten and empty names are not
 * known types; aten's qualified in-place names are. */
static void test_type_known_edge_cases(void) {
    CHECK(!dp_cost_type_known("SomethingNew"));
    CHECK(!dp_cost_type_known("MatMul.v2")); /* overload suffixes only after "aten." */
    CHECK(dp_cost_type_known("aten::add_") && dp_cost_type_known("aten.relu_.default"));
    CHECK(!dp_cost_type_known("__"));
    CHECK(!dp_cost_type_known("aten::"));
    CHECK(!dp_cost_type_known(""));
}

/* Views and variables are told apart from their look-alikes. */
static void test_view_and_variable_types(void) {
    CHECK(dp_cost_type_is_view("t") && dp_cost_type_is_view("Identity") && !dp_cost_type_is_view("Reshape"));
    CHECK(dp_cost_type_is_variable("Parameter") && dp_cost_type_is_variable("VariableV2") &&
          !dp_cost_type_is_variable("Placeholder"));
}

/* Unknown types are counted once per type, over the ops without a measured
 * cost, most ops first. */
static void test_unknown_types(void) {
    static const char *text =
        "{\"format\":\"dplace-graph\",\"version\":1,\"ops\":["
        "{\"name\":\"a\",\"type\":\"FancyOp\",\"outputs\":[{\"bytes\":4}]},{\"name\":\"b\",\"type\":\"convolution\",\"inputs\":[0],\"outputs\":[{\"bytes\":4}]},"
        "{\"name\":\"c\",\"type\":\"OtherOp\",\"inputs\":[1],\"outputs\":[{\"bytes\":4}]},{\"name\":\"d\",\"type\":\"OtherOp\",\"inputs\":[2]},"
        "{\"name\":\"e\",\"type\":\"Measured\",\"cost\":{\"gpu\":1}},{\"name\":\"f\",\"type\":\"add_\"}]}";
    dp_error err;
    dp_graph *g = dp_graph_read_string(text, "unknown", &err);
    CHECK(g);
    dp_cost_unknown *u;
    int32_t n;
    CHECK_INT_EQ(dp_cost_unknown_types(g, &u, &n, &err), DP_STATUS_OK);
    CHECK_INT_EQ(n, 2);
    CHECK_STR_EQ(dp_graph_str(g, u[0].type), "OtherOp");
    CHECK_INT_EQ(u[0].n_ops, 2);
    CHECK_STR_EQ(dp_graph_str(g, u[1].type), "FancyOp");
    CHECK_INT_EQ(u[1].n_ops, 1);
    free(u);
    dp_graph_free(g);
}

/* Convolutions of every kind: 3x3 stride 1 in TensorFlow's NHWC and
 * aten's NCHW layouts, forward and gradients; strided, depthwise,
 * pointwise and shapeless ones. */
static const char *winograd_graph =
        "{\"format\":\"dplace-graph\",\"version\":1,\"ops\":["
        /* 0 */ "{\"name\":\"x\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[8,32,32,16],\"dtype\":\"float32\"}]},"
        /* 1 */ "{\"name\":\"w\",\"type\":\"VariableV2\",\"outputs\":[{\"shape\":[3,3,16,16],\"dtype\":\"float32\"}]},"
        /* 2 */ "{\"name\":\"same\",\"type\":\"Conv2D\",\"inputs\":[0,1],\"outputs\":[{\"shape\":[8,32,32,16],\"dtype\":\"float32\"}],"
        "\"flops\":37748736},"
        /* 3 */ "{\"name\":\"strided\",\"type\":\"Conv2D\",\"inputs\":[0,1],\"outputs\":[{\"shape\":[8,16,16,16],\"dtype\":\"float32\"}],"
        "\"flops\":9437184},"
        /* 4 */ "{\"name\":\"sizes\",\"type\":\"Const\",\"outputs\":[{\"shape\":[4],\"dtype\":\"int32\"}]},"
        /* 5 */ "{\"name\":\"dx\",\"type\":\"Conv2DBackpropInput\",\"inputs\":[4,1,2],"
        "\"outputs\":[{\"shape\":[8,32,32,16],\"dtype\":\"float32\"}],\"flops\":37748736},"
        /* 6 */ "{\"name\":\"dw\",\"type\":\"Conv2DBackpropFilter\",\"inputs\":[0,4,2],"
        "\"outputs\":[{\"shape\":[3,3,16,16],\"dtype\":\"float32\"}],\"flops\":37748736},"
        /* 7 */ "{\"name\":\"xc\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[8,16,32,32],\"dtype\":\"float32\"}]},"
        /* 8 */ "{\"name\":\"wc\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[16,16,3,3],\"dtype\":\"float32\"}]},"
        /* 9 */ "{\"name\":\"conv\",\"type\":\"convolution\",\"inputs\":[7,8],"
        "\"outputs\":[{\"shape\":[8,16,30,30],\"dtype\":\"float32\"}],\"flops\":33177600},"
        /* 10 */ "{\"name\":\"back\",\"type\":\"convolution_backward\",\"inputs\":[9,7,8],"
        "\"outputs\":[{\"shape\":[8,16,32,32],\"dtype\":\"float32\"},{\"shape\":[16,16,3,3],\"dtype\":\"float32\"},"
        "{\"bytes\":0}],\"flops\":66355200},"
        /* 11 */ "{\"name\":\"wg\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[16,1,3,3],\"dtype\":\"float32\"}]},"
        /* 12 */ "{\"name\":\"depthwise\",\"type\":\"convolution\",\"inputs\":[7,11],"
        "\"outputs\":[{\"shape\":[8,16,32,32],\"dtype\":\"float32\"}],\"flops\":2359296},"
        /* 13 */ "{\"name\":\"w1\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[16,16,1,1],\"dtype\":\"float32\"}]},"
        /* 14 */ "{\"name\":\"pointwise\",\"type\":\"convolution\",\"inputs\":[7,13],"
        "\"outputs\":[{\"shape\":[8,16,32,32],\"dtype\":\"float32\"}],\"flops\":4194304},"
        /* 15 */ "{\"name\":\"opaque\",\"type\":\"convolution\",\"inputs\":[7,8],\"outputs\":[{\"bytes\":491520}],"
        "\"flops\":33177600}]}";

/* Winograd's convolutions: 3x3, stride 1, ungrouped, in TensorFlow's NHWC
 * and aten's NCHW layouts, the forward op and its gradients; the others are
 * plain convolutions. */
static void test_winograd_convolutions(void) {
    dp_error err;
    dp_graph *g = dp_graph_read_string(winograd_graph, "winograd", &err);
    CHECK(g);
    static const int want[16] = {0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0};
    for (int32_t i = 0; i < g->n_ops; i++) {
        TEST_CASE("op %d \"%s\"", i, g->ops[i].name);
        CHECK_INT_EQ(dp_cost_conv_winograd(g, i), want[i]);
    }
    dp_graph_free(g);
}

/* A Winograd convolution is priced with the Winograd row (compute-bound on
 * the GPU), a strided one with the plain convolution row: exactly so on a
 * device of no known generation (the kind's row, no shape factor); on the
 * P100's Pascal row the Winograd convolution stays the cheaper per FLOP. */
static void test_winograd_pricing(void) {
    dp_error err;
    dp_graph *g = dp_graph_read_string(winograd_graph, "winograd", &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset("p100x1", &err);
    CHECK(ds);
    const dp_device *gpu = &ds->devices[1];
    dp_device plain = *gpu; /* a device of no known generation */
    plain.generation[0] = '\0';
    memcpy(plain.eff, dp_devices_kind_efficiency(DP_DEVKIND_GPU), sizeof plain.eff);
    double want_s = 37748736.0 / (gpu->peak_flops * dp_cost_winograd_efficiency(DP_DEVKIND_GPU).compute);
    double mem_s = dp_cost_op_bytes(g, 2) / (gpu->mem_bandwidth * dp_cost_winograd_efficiency(DP_DEVKIND_GPU).memory);
    CHECK_NEAR(dp_cost_op_seconds(g, 2, &plain), (want_s > mem_s ? want_s : mem_s) + gpu->launch_overhead_s, 1e-12);
    want_s = 9437184.0 / (gpu->peak_flops * dp_cost_efficiency(DP_OPCLASS_CONV, DP_DEVKIND_GPU).compute);
    mem_s = dp_cost_op_bytes(g, 3) / (gpu->mem_bandwidth * dp_cost_efficiency(DP_OPCLASS_CONV, DP_DEVKIND_GPU).memory);
    CHECK_NEAR(dp_cost_op_seconds(g, 3, &plain), (want_s > mem_s ? want_s : mem_s) + gpu->launch_overhead_s, 1e-12);
    /* the P100's Pascal row: the Winograd convolution still cheaper per FLOP */
    CHECK_STR_EQ(gpu->generation, "pascal");
    CHECK(dp_cost_op_seconds(g, 2, gpu) / 37748736.0 < dp_cost_op_seconds(g, 3, gpu) / 9437184.0);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Two CPUs of 1e11 FLOP/s and bandwidth bw, linked, the first with the
 * efficiencies eff0 and the second eff1 (each the inside of a devices
 * file's "efficiency" object): a device that follows a slot beside one
 * that gives its own. NULL, with the message printed, when not read. */
static dp_devices *two_cpus(double bw, const char *eff0, const char *eff1) {
    char file[1024];
    snprintf(file, sizeof file,
             "{\"format\":\"dplace-devices\",\"version\":2,\"name\":\"two\",\"devices\":["
             "{\"name\":\"cpu:0\",\"kind\":\"cpu\",\"peak_flops\":1e11,\"memory_bandwidth\":%g,"
             "\"memory_bytes\":1000000000,\"efficiency\":{%s}},"
             "{\"name\":\"cpu:1\",\"kind\":\"cpu\",\"peak_flops\":1e11,\"memory_bandwidth\":%g,"
             "\"memory_bytes\":1000000000,\"efficiency\":{%s}}],"
             "\"links\":[{\"from\":\"cpu:0\",\"to\":\"cpu:1\",\"bandwidth\":1e9}]}",
             bw, eff0, bw, eff1);
    dp_error err;
    dp_devices *ds = dp_devices_read_string(file, "two.json", &err);
    if (!ds) fprintf(stderr, "%s\n", err.msg);
    return ds;
}

/* Grouped and depthwise convolutions (the kernel's input channels fewer
 * than the activation's): only the depthwise one of the graph. They take
 * the device's grouped efficiencies, which are its conv row's (its own
 * conv included) unless a file gives grouped its own. */
static void test_grouped_convolutions(void) {
    dp_error err;
    dp_graph *g = dp_graph_read_string(winograd_graph, "winograd", &err);
    CHECK(g);
    for (int32_t i = 0; i < g->n_ops; i++) {
        TEST_CASE("op %d \"%s\"", i, g->ops[i].name);
        CHECK_INT_EQ(dp_cost_conv_grouped(g, i), i == 12);
    }
    test_case_[0] = '\0';
    dp_devices *ds = two_cpus(1e10, "\"conv\":{\"compute\":0.2}",
                              "\"conv\":{\"compute\":0.2},\"grouped\":{\"compute\":0.002}");
    CHECK(ds);
    const dp_device *follows = &ds->devices[0], *own = &ds->devices[1];
    CHECK(follows->eff[DP_EFF_GROUPED].compute == 0.2);
    CHECK(follows->eff[DP_EFF_GROUPED].memory == follows->eff[DP_OPCLASS_CONV].memory);
    double c = 2359296.0 / (1e11 * 0.2), m = dp_cost_op_bytes(g, 12) / (1e10 * follows->eff[DP_OPCLASS_CONV].memory);
    CHECK_NEAR(dp_cost_op_seconds(g, 12, follows), (c > m ? c : m) + follows->launch_overhead_s, 1e-15);
    CHECK_NEAR(dp_cost_op_seconds(g, 12, own), 2359296.0 / (1e11 * 0.002) + own->launch_overhead_s, 1e-15);
    /* the pointwise convolution, not grouped, is priced alike on both */
    CHECK(dp_cost_op_seconds(g, 14, follows) == dp_cost_op_seconds(g, 14, own));
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* Depthwise convolutions (one input channel a group) among the grouped
 * ones: priced with the depthwise slot, which follows the grouped slot as
 * resolved (so a file that gives grouped alone prices both) unless a file
 * gives depthwise its own; a grouped convolution of 4 channels a group
 * keeps the grouped slot. */
static void test_depthwise_convolutions(void) {
    dp_error err;
    const char *text =
        "{\"format\":\"dplace-graph\",\"version\":1,\"ops\":["
        /* 0 */ "{\"name\":\"x\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[8,16,32,32],\"dtype\":\"float32\"}]},"
        /* 1 */ "{\"name\":\"wd\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[16,1,3,3],\"dtype\":\"float32\"}]},"
        /* 2 */ "{\"name\":\"depthwise\",\"type\":\"convolution\",\"inputs\":[0,1],"
        "\"outputs\":[{\"shape\":[8,16,32,32],\"dtype\":\"float32\"}],\"flops\":2359296},"
        /* 3 */ "{\"name\":\"wg\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[16,4,3,3],\"dtype\":\"float32\"}]},"
        /* 4 */ "{\"name\":\"grouped\",\"type\":\"convolution\",\"inputs\":[0,3],"
        "\"outputs\":[{\"shape\":[8,16,32,32],\"dtype\":\"float32\"}],\"flops\":9437184},"
        /* 5 */ "{\"name\":\"back\",\"type\":\"convolution_backward\",\"inputs\":[2,0,1],"
        "\"outputs\":[{\"shape\":[8,16,32,32],\"dtype\":\"float32\"},{\"shape\":[16,1,3,3],\"dtype\":\"float32\"},"
        "{\"bytes\":0}],\"flops\":4718592}]}";
    dp_graph *g = dp_graph_read_string(text, "depthwise", &err);
    CHECK(g);
    if (!g) return;
    CHECK(dp_cost_conv_grouped(g, 2) && dp_cost_conv_depthwise(g, 2));
    CHECK(dp_cost_conv_grouped(g, 4) && !dp_cost_conv_depthwise(g, 4));
    CHECK(dp_cost_conv_grouped(g, 5) && dp_cost_conv_depthwise(g, 5));
    CHECK(!dp_cost_conv_depthwise(g, 0) && !dp_cost_conv_depthwise(g, 1));
    dp_devices *ds = two_cpus(1e12, "\"grouped\":{\"compute\":0.02}",
                              "\"grouped\":{\"compute\":0.02},\"depthwise\":{\"compute\":0.005}");
    CHECK(ds);
    if (!ds) {
        dp_graph_free(g);
        return;
    }
    const dp_device *follows = &ds->devices[0], *own = &ds->devices[1];
    CHECK(follows->eff[DP_EFF_DEPTHWISE].compute == 0.02);
    CHECK(follows->eff[DP_EFF_DEPTHWISE].memory == follows->eff[DP_EFF_GROUPED].memory);
    CHECK(own->eff[DP_EFF_DEPTHWISE].compute == 0.005);
    /* compute-bound at these rates: the depthwise ops at 0.02 on the one,
     * 0.005 on the other; the grouped one at 0.02 on both */
    CHECK_NEAR(dp_cost_op_seconds(g, 2, follows), 2359296.0 / (1e11 * 0.02) + follows->launch_overhead_s, 1e-15);
    CHECK_NEAR(dp_cost_op_seconds(g, 2, own), 2359296.0 / (1e11 * 0.005) + own->launch_overhead_s, 1e-15);
    CHECK_NEAR(dp_cost_op_seconds(g, 5, own), 4718592.0 / (1e11 * 0.005) + own->launch_overhead_s, 1e-15);
    CHECK(dp_cost_op_seconds(g, 4, follows) == dp_cost_op_seconds(g, 4, own));
    CHECK_NEAR(dp_cost_op_seconds(g, 4, own), 9437184.0 / (1e11 * 0.02) + own->launch_overhead_s, 1e-15);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* A device's own efficiency prices its ops: the matmul at the file's
 * compute efficiency (times its shape's factor, as in
 * test_matmul_compute_bound), the relu still at the generation's. */
static void test_device_efficiency_used(void) {
    cost_fixture f = cost_open();
    dp_device own = *f.gpu;
    own.eff[DP_OPCLASS_MATMUL].compute = 0.9;
    own.eff_own |= DP_EFF_OWN_BIT(DP_OPCLASS_MATMUL, 0);
    double u = (1e6 / (1024.0 * 1024.0)) * (64.0 / 75.0);
    CHECK_NEAR(dp_cost_op_seconds(f.g, 1, &own), 2e9 / (4.29e12 * 0.9 * u) + own.launch_overhead_s, 1e-12);
    CHECK(dp_cost_op_seconds(f.g, 2, &own) == dp_cost_op_seconds(f.g, 2, f.gpu));
    cost_close(&f);
}

/* A small training-step fragment in aten's names and NCHW layout, every
 * output of one dtype (%1$s), and the graph's "tf32" field (%2$s, "" for
 * none): a 3x3 stride-1 convolution of 256 channels (one a Winograd
 * kernel could run), its gradient, a 4096^3 matrix product and a relu.
 * The products are compute-bound at every peak below. */
static const char *products_graph =
    "{\"format\":\"dplace-graph\",\"version\":1,%2$s\"ops\":["
    "{\"name\":\"x\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[32,256,14,14],\"dtype\":\"%1$s\"}]},"
    "{\"name\":\"w\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[256,256,3,3],\"dtype\":\"%1$s\"}]},"
    "{\"name\":\"conv\",\"type\":\"convolution\",\"inputs\":[0,1],"
    "\"outputs\":[{\"shape\":[32,256,14,14],\"dtype\":\"%1$s\"}],\"flops\":7398752256},"
    "{\"name\":\"conv_grad\",\"type\":\"convolution_backward\",\"inputs\":[2,0,1],"
    "\"outputs\":[{\"shape\":[32,256,14,14],\"dtype\":\"%1$s\"},{\"shape\":[256,256,3,3],\"dtype\":\"%1$s\"}],"
    "\"flops\":14797504512},"
    "{\"name\":\"a\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[4096,4096],\"dtype\":\"%1$s\"}]},"
    "{\"name\":\"mm\",\"type\":\"mm\",\"inputs\":[4,4],\"outputs\":[{\"shape\":[4096,4096],\"dtype\":\"%1$s\"}],"
    "\"flops\":137438953472},"
    "{\"name\":\"relu\",\"type\":\"relu\",\"inputs\":[5],\"outputs\":[{\"shape\":[4096,4096],\"dtype\":\"%1$s\"}],"
    "\"flops\":16777216}]}";
enum { OP_CONV = 2, OP_CONV_GRAD = 3, OP_MM = 5, OP_RELU = 6 };

/* products_graph in dtype, with the "tf32" field tf32 ("" for none). */
static dp_graph *products_open(const char *dtype, const char *tf32) {
    char text[4096];
    snprintf(text, sizeof text, products_graph, dtype, tf32);
    dp_error err;
    dp_graph *g = dp_graph_read_string(text, "products", &err);
    if (!g) fprintf(stderr, "%s\n", err.msg);
    CHECK(g);
    return g;
}

/* products_graph with every output given in bytes only: no dtype. */
static dp_graph *products_bytes_open(void) {
    char text[4096];
    snprintf(text, sizeof text, products_graph, "float32", "");
    for (char *s = strstr(text, "{\"shape\":"); s; s = strstr(s + 1, "{\"shape\":")) {
        char *end = strchr(s, '}');
        memset(s, ' ', (size_t)(end - s + 1));
        memcpy(s, "{\"bytes\":4}", 11);
    }
    dp_error err;
    dp_graph *g = dp_graph_read_string(text, "products-bytes", &err);
    CHECK(g);
    CHECK_INT_EQ(dp_cost_op_dtype(g, OP_MM), DP_DTYPE_NONE);
    return g;
}

/* GPU 0 of a preset (its device 1), in a set the caller frees. */
static const dp_device *preset_gpu(const char *preset, dp_devices **ds) {
    dp_error err;
    *ds = dp_devices_preset(preset, &err);
    CHECK(*ds);
    return &(*ds)->devices[1];
}

/* The roofline of op on dev at `peak` with efficiency e, from the
 * device's figures: max(flops / (peak x e_c), bytes / (bandwidth x e_m))
 * + launch overhead; checks that the op is compute-bound there. */
static double roofline(const dp_graph *g, int32_t op, const dp_device *dev, double peak, dp_efficiency e) {
    double t_c = g->ops[op].flops / (peak * e.compute);
    double t_m = dp_cost_op_bytes(g, op) / (dev->mem_bandwidth * e.memory);
    CHECK(t_c > t_m);
    return t_c + dev->launch_overhead_s;
}

/* Checks that op is priced at `peak` with its class's efficiency (conv
 * or matmul: the tensor-core kernels, no Winograd) on dev. */
static void check_priced_at(const dp_graph *g, int32_t op, const dp_device *dev, double peak, int slot) {
    CHECK(dp_cost_op_peak(g, op, dev) == peak);
    CHECK_NEAR(dp_cost_op_seconds(g, op, dev), roofline(g, op, dev, peak, dev->eff[slot]), 1e-12);
}

/* bfloat16 products on h100-sxmx4 (Hopper) are priced at the BF16
 * tensor-core peak times the conv or matmul efficiency, the 3x3
 * convolution too (tensor cores run it as an implicit GEMM, not
 * Winograd's algorithm); the relu keeps the FP32 peak. */
static void test_bfloat16_products_tensor_peak(void) {
    dp_graph *g = products_open("bfloat16", "");
    dp_devices *ds;
    const dp_device *gpu = preset_gpu("h100-sxmx4", &ds);
    CHECK(!strcmp(gpu->generation, "hopper"));
    double bf16 = gpu->tensor_flops[DP_TENSOR_MATH_BFLOAT16];
    CHECK(bf16 > 10 * gpu->peak_flops);
    CHECK(dp_cost_conv_winograd(g, OP_CONV));
    TEST_CASE("conv");
    check_priced_at(g, OP_CONV, gpu, bf16, DP_OPCLASS_CONV);
    TEST_CASE("conv_grad");
    check_priced_at(g, OP_CONV_GRAD, gpu, bf16, DP_OPCLASS_CONV);
    TEST_CASE("mm");
    check_priced_at(g, OP_MM, gpu, bf16, DP_OPCLASS_MATMUL);
    TEST_CASE("relu");
    CHECK(dp_cost_op_peak(g, OP_RELU, gpu) == gpu->peak_flops);
    dp_devices_free(ds);
    dp_graph_free(g);
}

/* float16 products take the FP16 tensor-core peak, on Volta (v100) too. */
static void test_float16_products_tensor_peak(void) {
    dp_graph *g = products_open("float16", "");
    const char *presets[] = {"v100-nvlinkx4", "a100-pciex4", "h100-sxmx4"};
    for (int k = 0; k < 3; k++) {
        TEST_CASE("%s", presets[k]);
        dp_devices *ds;
        const dp_device *gpu = preset_gpu(presets[k], &ds);
        double fp16 = gpu->tensor_flops[DP_TENSOR_MATH_FLOAT16];
        CHECK(fp16 > 0);
        check_priced_at(g, OP_CONV, gpu, fp16, DP_OPCLASS_CONV);
        check_priced_at(g, OP_MM, gpu, fp16, DP_OPCLASS_MATMUL);
        dp_devices_free(ds);
    }
    dp_graph_free(g);
}

/* float32 without the graph's TF32 leave keeps the FP32 peak on every
 * GPU, tensor cores or not, exactly as before the tensor-core peaks: the
 * 3x3 convolution with the Winograd efficiency, the product with the
 * matmul's; a graph whose outputs have no dtype the same. */
static void test_float32_keeps_fp32_peak(void) {
    const char *dtypes[] = {"float32", "none"};
    const char *presets[] = {"h100-sxmx4", "a100-sxmx4", "v100-pciex4", "l4x4"};
    for (int t = 0; t < 2; t++) {
        dp_graph *g = t ? products_bytes_open() : products_open("float32", "");
        for (int k = 0; k < 4; k++) {
            TEST_CASE("%s, %s", dtypes[t], presets[k]);
            dp_devices *ds;
            const dp_device *gpu = preset_gpu(presets[k], &ds);
            CHECK(dp_cost_op_peak(g, OP_CONV, gpu) == gpu->peak_flops);
            CHECK(dp_cost_op_peak(g, OP_MM, gpu) == gpu->peak_flops);
            if (!t) {
                CHECK_NEAR(dp_cost_op_seconds(g, OP_CONV, gpu),
                           roofline(g, OP_CONV, gpu, gpu->peak_flops, gpu->eff[DP_EFF_WINOGRAD]), 1e-12);
                CHECK_NEAR(dp_cost_op_seconds(g, OP_MM, gpu),
                           roofline(g, OP_MM, gpu, gpu->peak_flops, gpu->eff[DP_OPCLASS_MATMUL]), 1e-12);
            }
            dp_devices_free(ds);
        }
        dp_graph_free(g);
    }
}

/* float32 products where the graph allows TF32 take the TF32 peak on
 * Ampere (a100-sxmx4): both with {"matmul": true, "conv": true}; PyTorch's
 * defaults ({"matmul": false, "conv": true}) the convolutions alone. */
static void test_tf32_on_ampere(void) {
    dp_devices *ds;
    const dp_device *gpu = preset_gpu("a100-sxmx4", &ds);
    CHECK(!strcmp(gpu->generation, "ampere"));
    double tf32 = gpu->tensor_flops[DP_TENSOR_MATH_TF32];
    CHECK(tf32 > gpu->peak_flops);
    TEST_CASE("matmul and conv");
    dp_graph *g = products_open("float32", "\"tf32\":{\"matmul\":true,\"conv\":true},");
    check_priced_at(g, OP_CONV, gpu, tf32, DP_OPCLASS_CONV);
    check_priced_at(g, OP_CONV_GRAD, gpu, tf32, DP_OPCLASS_CONV);
    check_priced_at(g, OP_MM, gpu, tf32, DP_OPCLASS_MATMUL);
    dp_graph_free(g);
    TEST_CASE("PyTorch's defaults: conv only");
    g = products_open("float32", "\"tf32\":{\"matmul\":false,\"conv\":true},");
    check_priced_at(g, OP_CONV, gpu, tf32, DP_OPCLASS_CONV);
    CHECK(dp_cost_op_peak(g, OP_MM, gpu) == gpu->peak_flops);
    CHECK_NEAR(dp_cost_op_seconds(g, OP_MM, gpu), roofline(g, OP_MM, gpu, gpu->peak_flops, gpu->eff[DP_OPCLASS_MATMUL]),
               1e-12);
    dp_graph_free(g);
    dp_devices_free(ds);
}

/* A generation whose tensor cores do not run the math keeps the FP32
 * peak: bfloat16 and TF32 on Volta, every dtype on Pascal and Kepler. */
static void test_math_without_tensor_cores_fp32_peak(void) {
    static const struct {
        const char *preset, *dtype, *tf32;
    } cases[] = {
        {"v100-nvlinkx4", "bfloat16", ""},
        {"v100-nvlinkx4", "float32", "\"tf32\":{\"matmul\":true,\"conv\":true},"},
        {"p100x4", "float16", ""},
        {"p100x4", "bfloat16", ""},
        {"k40x4", "float16", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TEST_CASE("%s on %s %s", cases[i].dtype, cases[i].preset, cases[i].tf32);
        dp_graph *g = products_open(cases[i].dtype, cases[i].tf32);
        dp_devices *ds;
        const dp_device *gpu = preset_gpu(cases[i].preset, &ds);
        CHECK(dp_cost_op_peak(g, OP_CONV, gpu) == gpu->peak_flops);
        CHECK(dp_cost_op_peak(g, OP_MM, gpu) == gpu->peak_flops);
        dp_devices_free(ds);
        dp_graph_free(g);
    }
}

/* A transposed convolution (aten's convolution with transposed set: the
 * kernel is input by output channels, [128, 64, 2, 2] from 128 channels to
 * 64) and its gradient are not grouped, though the kernel's second
 * dimension is fewer than the input's channels; a grouped convolution of
 * the same sizes (kernel [64, 32, 3, 3], two groups) still is. */
static void test_transposed_convolution_not_grouped(void) {
    static const char *text =
        "{\"format\":\"dplace-graph\",\"version\":1,\"ops\":["
        "{\"name\":\"x\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[8,128,16,16],\"dtype\":\"float32\"}]},"
        "{\"name\":\"w\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[128,64,2,2],\"dtype\":\"float32\"}]},"
        "{\"name\":\"up\",\"type\":\"convolution\",\"inputs\":[0,1],"
        "\"outputs\":[{\"shape\":[8,64,32,32],\"dtype\":\"float32\"}],\"flops\":1.07e8},"
        "{\"name\":\"up_back\",\"type\":\"convolution_backward\",\"inputs\":[2,0,1],"
        "\"outputs\":[{\"shape\":[8,128,16,16],\"dtype\":\"float32\"},{\"shape\":[128,64,2,2],\"dtype\":\"float32\"}],"
        "\"flops\":2.14e8},"
        "{\"name\":\"wg\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[64,64,3,3],\"dtype\":\"float32\"}]},"
        "{\"name\":\"grouped\",\"type\":\"convolution\",\"inputs\":[0,4],"
        "\"outputs\":[{\"shape\":[8,64,16,16],\"dtype\":\"float32\"}],\"flops\":1.5e8}]}";
    dp_error err;
    dp_graph *g = dp_graph_read_string(text, "transposed", &err);
    CHECK(g);
    CHECK(!dp_cost_conv_grouped(g, 2));
    CHECK(!dp_cost_conv_grouped(g, 3));
    CHECK(dp_cost_conv_grouped(g, 5));
    dp_graph_free(g);
}

/* A fused op (a recurrent module's, run by cuDNN's kernels or ATen's
 * loop) costs no device a launch overhead of its own; the rest of its
 * price is the unfused op's. */
static void test_fused_op_launch(void) {
    cost_fixture f = cost_open();
    double gpu = dp_cost_op_seconds(f.g, 2, f.gpu), cpu = dp_cost_op_seconds(f.g, 2, f.cpu);
    CHECK(f.gpu->launch_overhead_s > 0 && f.cpu->launch_overhead_s > 0);
    f.g->ops[2].fused = 1;
    CHECK_NEAR(dp_cost_op_seconds(f.g, 2, f.gpu), gpu - f.gpu->launch_overhead_s, 1e-15);
    CHECK_NEAR(dp_cost_op_seconds(f.g, 2, f.cpu), cpu - f.cpu->launch_overhead_s, 1e-15);
    cost_close(&f);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_meta_op_cost);
    TEST_RUN(test_matmul_compute_bound);
    TEST_RUN(test_elementwise_memory_bound);
    TEST_RUN(test_measured_cost_wins);
    TEST_RUN(test_reductions);
    TEST_RUN(test_opclass_of_type);
    TEST_RUN(test_type_tables_sorted);
    TEST_RUN(test_framework_types_classified);
    TEST_RUN(test_type_known_edge_cases);
    TEST_RUN(test_view_and_variable_types);
    TEST_RUN(test_unknown_types);
    TEST_RUN(test_winograd_convolutions);
    TEST_RUN(test_grouped_convolutions);
    TEST_RUN(test_depthwise_convolutions);
    TEST_RUN(test_winograd_pricing);
    TEST_RUN(test_device_efficiency_used);
    TEST_RUN(test_bfloat16_products_tensor_peak);
    TEST_RUN(test_float16_products_tensor_peak);
    TEST_RUN(test_float32_keeps_fp32_peak);
    TEST_RUN(test_tf32_on_ampere);
    TEST_RUN(test_math_without_tensor_cores_fp32_peak);
    TEST_RUN(test_fused_op_launch);
    TEST_RUN(test_transposed_convolution_not_grouped);
    return test_end();
}
