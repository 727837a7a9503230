/* Per-op cost model: measured costs first, roofline estimate otherwise. */
#include "dplace/cost.h"

#include <string.h>

static const char *const opclass_names[] = {"meta", "elementwise", "matmul", "conv", "reduction", "data", "optimizer"};
_Static_assert(sizeof(opclass_names) / sizeof(opclass_names[0]) == DP_OPCLASS_COUNT, "opclass_names");

const char *dp_opclass_name(dp_opclass c) { return (unsigned)c < DP_OPCLASS_COUNT ? opclass_names[c] : "?"; }

/* Fraction of peak FLOP/s and of peak memory bandwidth that ops of a class
 * reach on each device kind ([class][kind]; kind: cpu, gpu). First estimates
 * from published cuDNN/cuBLAS and MKL efficiency figures on these device
 * generations; the calibration against the papers' tables (docs/calibration.md)
 * is where they are tuned. */
static const dp_efficiency efficiency_table[DP_OPCLASS_COUNT][DP_DEVKIND_COUNT] = {
    [DP_OPCLASS_META] = {{1.0, 1.0}, {1.0, 1.0}},
    [DP_OPCLASS_ELEMENTWISE] = {{0.30, 0.70}, {0.30, 0.70}},
    [DP_OPCLASS_MATMUL] = {{0.26, 0.50}, {0.18, 0.40}},
    [DP_OPCLASS_CONV] = {{0.07, 0.50}, {0.80, 0.70}},
    [DP_OPCLASS_REDUCTION] = {{0.20, 0.50}, {0.20, 0.70}},
    [DP_OPCLASS_DATA] = {{0.30, 0.40}, {0.30, 0.35}},
    [DP_OPCLASS_OPTIMIZER] = {{0.30, 0.50}, {0.50, 0.70}},
};
_Static_assert(sizeof(efficiency_table) / sizeof(efficiency_table[0]) == DP_OPCLASS_COUNT, "efficiency_table");

/* Ops that only describe or rename tensors (Shape, Const, Identity, Reshape,
 * ...) run on the host without a kernel launch: they cost this fraction of
 * the device's launch overhead (calibrated, docs/calibration.md). */
#define DP_META_OVERHEAD_FRACTION 0.25

dp_efficiency dp_cost_efficiency(dp_opclass c, dp_devkind kind) { return efficiency_table[c][kind]; }

static const struct {
    const char *type;
    dp_opclass cls;
} type_table[] = {
    {"Identity", DP_OPCLASS_META},          {"IdentityN", DP_OPCLASS_META},
    {"NoOp", DP_OPCLASS_META},              {"Const", DP_OPCLASS_META},
    {"Shape", DP_OPCLASS_META},             {"ShapeN", DP_OPCLASS_META},
    {"Size", DP_OPCLASS_META},              {"Rank", DP_OPCLASS_META},
    {"Reshape", DP_OPCLASS_META},           {"Squeeze", DP_OPCLASS_META},
    {"ExpandDims", DP_OPCLASS_META},        {"StopGradient", DP_OPCLASS_META},
    {"Placeholder", DP_OPCLASS_META},       {"PlaceholderWithDefault", DP_OPCLASS_META},
    {"VariableV2", DP_OPCLASS_META},        {"Variable", DP_OPCLASS_META},
    {"VarHandleOp", DP_OPCLASS_META},       {"ReadVariableOp", DP_OPCLASS_META},
    {"BroadcastGradientArgs", DP_OPCLASS_META}, {"ZerosLike", DP_OPCLASS_ELEMENTWISE},
    {"MatMul", DP_OPCLASS_MATMUL},          {"BatchMatMul", DP_OPCLASS_MATMUL},
    {"BatchMatMulV2", DP_OPCLASS_MATMUL},   {"MatMulGrad", DP_OPCLASS_MATMUL},
    {"Einsum", DP_OPCLASS_MATMUL},          {"LSTMBlockCell", DP_OPCLASS_MATMUL},
    {"LSTMBlockCellGrad", DP_OPCLASS_MATMUL},
    {"Conv2D", DP_OPCLASS_CONV},            {"Conv2DBackpropInput", DP_OPCLASS_CONV},
    {"Conv2DBackpropFilter", DP_OPCLASS_CONV}, {"DepthwiseConv2dNative", DP_OPCLASS_CONV},
    {"DepthwiseConv2dNativeBackpropInput", DP_OPCLASS_CONV},
    {"DepthwiseConv2dNativeBackpropFilter", DP_OPCLASS_CONV},
    {"Conv3D", DP_OPCLASS_CONV},
    {"Sum", DP_OPCLASS_REDUCTION},          {"Mean", DP_OPCLASS_REDUCTION},
    {"Max", DP_OPCLASS_REDUCTION},          {"Min", DP_OPCLASS_REDUCTION},
    {"Prod", DP_OPCLASS_REDUCTION},         {"ArgMax", DP_OPCLASS_REDUCTION},
    {"Softmax", DP_OPCLASS_REDUCTION},      {"LogSoftmax", DP_OPCLASS_REDUCTION},
    {"SoftmaxCrossEntropyWithLogits", DP_OPCLASS_REDUCTION},
    {"SparseSoftmaxCrossEntropyWithLogits", DP_OPCLASS_REDUCTION},
    {"BiasAddGrad", DP_OPCLASS_REDUCTION},  {"MaxPool", DP_OPCLASS_REDUCTION},
    {"MaxPoolGrad", DP_OPCLASS_REDUCTION},  {"AvgPool", DP_OPCLASS_REDUCTION},
    {"AvgPoolGrad", DP_OPCLASS_REDUCTION},  {"FusedBatchNorm", DP_OPCLASS_REDUCTION},
    {"FusedBatchNormV3", DP_OPCLASS_REDUCTION}, {"FusedBatchNormGrad", DP_OPCLASS_REDUCTION},
    {"FusedBatchNormGradV3", DP_OPCLASS_REDUCTION}, {"LayerNorm", DP_OPCLASS_REDUCTION},
    {"L2Loss", DP_OPCLASS_REDUCTION},       {"AddN", DP_OPCLASS_ELEMENTWISE},
    {"ConcatV2", DP_OPCLASS_DATA},          {"Concat", DP_OPCLASS_DATA},
    {"Slice", DP_OPCLASS_DATA},             {"StridedSlice", DP_OPCLASS_DATA},
    {"StridedSliceGrad", DP_OPCLASS_DATA},  {"Split", DP_OPCLASS_DATA},
    {"SplitV", DP_OPCLASS_DATA},            {"Transpose", DP_OPCLASS_DATA},
    {"Gather", DP_OPCLASS_DATA},            {"GatherV2", DP_OPCLASS_DATA},
    {"ResourceGather", DP_OPCLASS_DATA},    {"UnsortedSegmentSum", DP_OPCLASS_DATA},
    {"Pad", DP_OPCLASS_DATA},               {"Tile", DP_OPCLASS_DATA},
    {"Pack", DP_OPCLASS_DATA},              {"Unpack", DP_OPCLASS_DATA},
    {"OneHot", DP_OPCLASS_DATA},            {"Fill", DP_OPCLASS_DATA},
    {"Cast", DP_OPCLASS_ELEMENTWISE},
    {"ApplyAdam", DP_OPCLASS_OPTIMIZER},    {"ResourceApplyAdam", DP_OPCLASS_OPTIMIZER},
    {"ApplyGradientDescent", DP_OPCLASS_OPTIMIZER}, {"ResourceApplyGradientDescent", DP_OPCLASS_OPTIMIZER},
    {"ApplyMomentum", DP_OPCLASS_OPTIMIZER}, {"ResourceApplyMomentum", DP_OPCLASS_OPTIMIZER},
    {"ApplyRMSProp", DP_OPCLASS_OPTIMIZER}, {"ApplyAdagrad", DP_OPCLASS_OPTIMIZER},
    {"ScatterSub", DP_OPCLASS_OPTIMIZER},   {"ResourceScatterAdd", DP_OPCLASS_OPTIMIZER},
};

dp_opclass dp_opclass_of_type(const char *type) {
    for (size_t i = 0; i < sizeof type_table / sizeof type_table[0]; i++)
        if (strcmp(type, type_table[i].type) == 0) return type_table[i].cls;
    return DP_OPCLASS_ELEMENTWISE;
}

double dp_cost_op_bytes(const dp_graph *g, int32_t op) {
    const dp_op *o = &g->ops[op];
    double b = 0;
    for (int32_t k = 0; k < o->n_inputs; k++) {
        dp_input in = g->inputs[o->inputs_at + k];
        b += (double)g->outputs[g->ops[in.op].outputs_at + in.slot].bytes;
    }
    for (int32_t k = 0; k < o->n_outputs; k++) b += (double)g->outputs[o->outputs_at + k].bytes;
    return b;
}

/* Measured seconds for op on dev, or -1 when the graph has none. */
static double measured(const dp_graph *g, const dp_op *o, const dp_device *dev) {
    if (!o->n_costs) return -1;
    int32_t model = dp_graph_find_str(g, dev->model);
    int32_t kind = dp_graph_find_str(g, dp_devkind_name(dev->kind));
    double by_kind = -1;
    for (int32_t k = 0; k < o->n_costs; k++) {
        const dp_cost *c = &g->costs[o->costs_at + k];
        if (c->key == model) return c->seconds;
        if (c->key == kind) by_kind = c->seconds;
    }
    return by_kind;
}

/* Whether op o is a Sum/Mean/Max/Min/Prod whose output is as large as its
 * input: a reduction over no axes (the gradient of a binary op whose operands
 * have equal shapes), which TensorFlow answers by forwarding the buffer. */
static int reduces_nothing(const dp_graph *g, const dp_op *o, dp_opclass c) {
    if (c != DP_OPCLASS_REDUCTION || o->n_outputs != 1 || o->n_inputs < 1) return 0;
    const char *t = dp_graph_str(g, o->type);
    if (strcmp(t, "Sum") && strcmp(t, "Mean") && strcmp(t, "Max") && strcmp(t, "Min") && strcmp(t, "Prod")) return 0;
    dp_input in = g->inputs[o->inputs_at];
    return g->outputs[o->outputs_at].bytes == g->outputs[g->ops[in.op].outputs_at + in.slot].bytes;
}

double dp_cost_op_seconds(const dp_graph *g, int32_t op, const dp_device *dev) {
    const dp_op *o = &g->ops[op];
    double m = measured(g, o, dev);
    if (m >= 0) return m;
    dp_opclass c = dp_opclass_of_type(dp_graph_str(g, o->type));
    if (c == DP_OPCLASS_META || reduces_nothing(g, o, c)) return dev->launch_overhead_s * DP_META_OVERHEAD_FRACTION;
    dp_efficiency e = efficiency_table[c][dev->kind];
    double t_compute = o->flops / (dev->peak_flops * e.compute);
    double t_memory = dp_cost_op_bytes(g, op) / (dev->mem_bandwidth * e.memory);
    return (t_compute > t_memory ? t_compute : t_memory) + dev->launch_overhead_s;
}
