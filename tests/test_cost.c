/* Cost model: measured costs win, roofline otherwise, meta ops and
 * reductions over no axes cost a fraction of the overhead. */
#include "dplace/cost.h"
#include "test_util.h"

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

static void test_cost_model(void) {
    dp_error err;
    dp_graph *g = dp_graph_read_string(graph, "cost", &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset("k40x1", &err);
    CHECK(ds);
    const dp_device *cpu = &ds->devices[0], *gpu = &ds->devices[1];
    /* meta: a quarter of the launch overhead (host-side, no kernel) */
    CHECK_NEAR(dp_cost_op_seconds(g, 0, gpu), 0.25 * gpu->launch_overhead_s, 1e-15);
    /* matmul on the K40: compute bound, 2e9 / (4.29e12 x e_c) + overhead */
    dp_efficiency e = dp_cost_efficiency(DP_OPCLASS_MATMUL, DP_DEVKIND_GPU);
    double want = 2e9 / (4.29e12 * e.compute) + gpu->launch_overhead_s;
    CHECK_NEAR(dp_cost_op_seconds(g, 1, gpu), want, 1e-12);
    /* relu: memory bound, 8 MB moved */
    CHECK_NEAR(dp_cost_op_bytes(g, 2), 8e6, 1e-12);
    e = dp_cost_efficiency(DP_OPCLASS_ELEMENTWISE, DP_DEVKIND_GPU);
    want = 8e6 / (288e9 * e.memory) + gpu->launch_overhead_s;
    CHECK_NEAR(dp_cost_op_seconds(g, 2, gpu), want, 1e-12);
    /* the CPU is slower than the GPU on the matmul */
    CHECK(dp_cost_op_seconds(g, 1, cpu) > 2 * dp_cost_op_seconds(g, 1, gpu));
    /* measured: the model key beats the kind key */
    CHECK_NEAR(dp_cost_op_seconds(g, 3, gpu), 0.25, 1e-15);
    CHECK_NEAR(dp_cost_op_seconds(g, 3, cpu), 3.0, 1e-15);
    /* a Sum over no axes (output as large as its input) forwards the buffer:
     * the meta cost; a real reduction pays for the bytes it reads */
    CHECK_NEAR(dp_cost_op_seconds(g, 4, gpu), 0.25 * gpu->launch_overhead_s, 1e-15);
    e = dp_cost_efficiency(DP_OPCLASS_REDUCTION, DP_DEVKIND_GPU);
    want = 4.004e6 / (288e9 * e.memory) + gpu->launch_overhead_s;
    CHECK_NEAR(dp_cost_op_seconds(g, 5, gpu), want, 1e-12);
    CHECK_INT_EQ(dp_opclass_of_type("Conv2DBackpropFilter"), DP_OPCLASS_CONV);
    CHECK_INT_EQ(dp_opclass_of_type("SomethingNew"), DP_OPCLASS_ELEMENTWISE);
    dp_devices_free(ds);
    dp_graph_free(g);
}

int main(void) {
    TEST_RUN(test_cost_model);
    printf("test_cost: all passed\n");
    return 0;
}
