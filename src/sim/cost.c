/* Per-op cost model: measured costs first, roofline estimate otherwise. */
#include "dplace/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The kinds' tables are the device format's (src/devices/generations.c): a
 * device's own efficiencies and its generation's override them. */
dp_efficiency dp_cost_efficiency(dp_opclass c, dp_devkind kind) { return dp_devices_kind_efficiency(kind)[c]; }
dp_efficiency dp_cost_winograd_efficiency(dp_devkind kind) {
    return dp_devices_kind_efficiency(kind)[DP_EFF_WINOGRAD];
}

/* One row of an op-type table: a type name and the class the roofline
 * prices it with. */
typedef struct type_row {
    const char *type;
    dp_opclass cls;
} type_row;

/* Three tables, each sorted by strcmp (looked up by binary search;
 * dp_cost_check_tables, run by test_cost, checks the order, the classes and
 * that no name is in two tables). TensorFlow's names come first; aten's
 * (PyTorch, as scripts/dplace-export-torch writes them: the overload
 * packet's name, "convolution", "add_") and ONNX's are separate tables.
 * ONNX names TensorFlow shares (Add, MatMul, Relu, ...) are in the TensorFlow
 * table; ONNX's element-wise Max, Min, Sum and Mean share their names with
 * TensorFlow's reductions and are priced as those. The element-wise rows of
 * the TensorFlow table below "ZerosLike AddN Cast" in the sources' order
 * (Add, Mul, BiasAdd, summaries, ...) were priced as element-wise when the
 * table did not list them, so listing them moved no calibration cell. */
static const type_row tf_types[] = {
    {"Abs", DP_OPCLASS_ELEMENTWISE}, {"Add", DP_OPCLASS_ELEMENTWISE}, {"AddN", DP_OPCLASS_ELEMENTWISE},
    {"AddV2", DP_OPCLASS_ELEMENTWISE}, {"ApplyAdagrad", DP_OPCLASS_OPTIMIZER}, {"ApplyAdam", DP_OPCLASS_OPTIMIZER},
    {"ApplyGradientDescent", DP_OPCLASS_OPTIMIZER}, {"ApplyMomentum", DP_OPCLASS_OPTIMIZER},
    {"ApplyRMSProp", DP_OPCLASS_OPTIMIZER}, {"ArgMax", DP_OPCLASS_REDUCTION}, {"Assign", DP_OPCLASS_ELEMENTWISE},
    {"AssignAdd", DP_OPCLASS_ELEMENTWISE}, {"AssignSub", DP_OPCLASS_ELEMENTWISE}, {"AvgPool", DP_OPCLASS_REDUCTION},
    {"AvgPoolGrad", DP_OPCLASS_REDUCTION}, {"BatchMatMul", DP_OPCLASS_MATMUL}, {"BatchMatMulV2", DP_OPCLASS_MATMUL},
    {"BiasAdd", DP_OPCLASS_ELEMENTWISE}, {"BiasAddGrad", DP_OPCLASS_REDUCTION},
    {"BroadcastGradientArgs", DP_OPCLASS_META}, {"Cast", DP_OPCLASS_ELEMENTWISE}, {"Concat", DP_OPCLASS_DATA},
    {"ConcatOffset", DP_OPCLASS_ELEMENTWISE}, {"ConcatV2", DP_OPCLASS_DATA}, {"Const", DP_OPCLASS_META},
    {"Conv2D", DP_OPCLASS_CONV}, {"Conv2DBackpropFilter", DP_OPCLASS_CONV}, {"Conv2DBackpropInput", DP_OPCLASS_CONV},
    {"Conv3D", DP_OPCLASS_CONV}, {"DepthwiseConv2dNative", DP_OPCLASS_CONV},
    {"DepthwiseConv2dNativeBackpropFilter", DP_OPCLASS_CONV}, {"DepthwiseConv2dNativeBackpropInput", DP_OPCLASS_CONV},
    {"Div", DP_OPCLASS_ELEMENTWISE}, {"DynamicStitch", DP_OPCLASS_ELEMENTWISE}, {"Einsum", DP_OPCLASS_MATMUL},
    {"Elu", DP_OPCLASS_ELEMENTWISE}, {"EluGrad", DP_OPCLASS_ELEMENTWISE}, {"Equal", DP_OPCLASS_ELEMENTWISE},
    {"Erf", DP_OPCLASS_ELEMENTWISE}, {"Exp", DP_OPCLASS_ELEMENTWISE}, {"ExpandDims", DP_OPCLASS_META},
    {"Fill", DP_OPCLASS_DATA}, {"Floor", DP_OPCLASS_ELEMENTWISE}, {"FloorDiv", DP_OPCLASS_ELEMENTWISE},
    {"FloorMod", DP_OPCLASS_ELEMENTWISE}, {"FusedBatchNorm", DP_OPCLASS_REDUCTION},
    {"FusedBatchNormGrad", DP_OPCLASS_REDUCTION}, {"FusedBatchNormGradV3", DP_OPCLASS_REDUCTION},
    {"FusedBatchNormV3", DP_OPCLASS_REDUCTION}, {"Gather", DP_OPCLASS_DATA}, {"GatherV2", DP_OPCLASS_DATA},
    {"Greater", DP_OPCLASS_ELEMENTWISE}, {"GreaterEqual", DP_OPCLASS_ELEMENTWISE},
    {"HistogramSummary", DP_OPCLASS_ELEMENTWISE}, {"Identity", DP_OPCLASS_META}, {"IdentityN", DP_OPCLASS_META},
    {"ImageSummary", DP_OPCLASS_ELEMENTWISE}, {"InvertPermutation", DP_OPCLASS_ELEMENTWISE},
    {"IteratorGetNext", DP_OPCLASS_ELEMENTWISE}, {"L2Loss", DP_OPCLASS_REDUCTION},
    {"LSTMBlockCell", DP_OPCLASS_MATMUL}, {"LSTMBlockCellGrad", DP_OPCLASS_MATMUL},
    {"LayerNorm", DP_OPCLASS_REDUCTION}, {"Less", DP_OPCLASS_ELEMENTWISE}, {"LessEqual", DP_OPCLASS_ELEMENTWISE},
    {"Log", DP_OPCLASS_ELEMENTWISE}, {"LogSoftmax", DP_OPCLASS_REDUCTION}, {"LogicalAnd", DP_OPCLASS_ELEMENTWISE},
    {"LogicalNot", DP_OPCLASS_ELEMENTWISE}, {"LogicalOr", DP_OPCLASS_ELEMENTWISE}, {"MatMul", DP_OPCLASS_MATMUL},
    {"MatMulGrad", DP_OPCLASS_MATMUL}, {"Max", DP_OPCLASS_REDUCTION}, {"MaxPool", DP_OPCLASS_REDUCTION},
    {"MaxPoolGrad", DP_OPCLASS_REDUCTION}, {"Maximum", DP_OPCLASS_ELEMENTWISE}, {"Mean", DP_OPCLASS_REDUCTION},
    {"MergeSummary", DP_OPCLASS_ELEMENTWISE}, {"Min", DP_OPCLASS_REDUCTION}, {"Minimum", DP_OPCLASS_ELEMENTWISE},
    {"Mul", DP_OPCLASS_ELEMENTWISE}, {"Neg", DP_OPCLASS_ELEMENTWISE}, {"NoOp", DP_OPCLASS_META},
    {"NotEqual", DP_OPCLASS_ELEMENTWISE}, {"OneHot", DP_OPCLASS_DATA}, {"OnesLike", DP_OPCLASS_ELEMENTWISE},
    {"Pack", DP_OPCLASS_DATA}, {"Pad", DP_OPCLASS_DATA}, {"Placeholder", DP_OPCLASS_META},
    {"PlaceholderWithDefault", DP_OPCLASS_META}, {"Pow", DP_OPCLASS_ELEMENTWISE},
    {"PowDerivative", DP_OPCLASS_ELEMENTWISE}, {"PreventGradient", DP_OPCLASS_ELEMENTWISE},
    {"Prod", DP_OPCLASS_REDUCTION}, {"RandomStandardNormal", DP_OPCLASS_ELEMENTWISE},
    {"RandomUniform", DP_OPCLASS_ELEMENTWISE}, {"Range", DP_OPCLASS_ELEMENTWISE}, {"Rank", DP_OPCLASS_META},
    {"ReadVariableOp", DP_OPCLASS_META}, {"RealDiv", DP_OPCLASS_ELEMENTWISE}, {"Reciprocal", DP_OPCLASS_ELEMENTWISE},
    {"Relu", DP_OPCLASS_ELEMENTWISE}, {"Relu6", DP_OPCLASS_ELEMENTWISE}, {"Relu6Grad", DP_OPCLASS_ELEMENTWISE},
    {"ReluGrad", DP_OPCLASS_ELEMENTWISE}, {"Reshape", DP_OPCLASS_META}, {"ResourceApplyAdam", DP_OPCLASS_OPTIMIZER},
    {"ResourceApplyGradientDescent", DP_OPCLASS_OPTIMIZER}, {"ResourceApplyMomentum", DP_OPCLASS_OPTIMIZER},
    {"ResourceGather", DP_OPCLASS_DATA}, {"ResourceScatterAdd", DP_OPCLASS_OPTIMIZER},
    {"Rsqrt", DP_OPCLASS_ELEMENTWISE}, {"RsqrtGrad", DP_OPCLASS_ELEMENTWISE},
    {"ScalarSummary", DP_OPCLASS_ELEMENTWISE}, {"ScatterSub", DP_OPCLASS_OPTIMIZER},
    {"Select", DP_OPCLASS_ELEMENTWISE}, {"SelectV2", DP_OPCLASS_ELEMENTWISE}, {"Selu", DP_OPCLASS_ELEMENTWISE},
    {"Shape", DP_OPCLASS_META}, {"ShapeN", DP_OPCLASS_META}, {"Sigmoid", DP_OPCLASS_ELEMENTWISE},
    {"SigmoidGrad", DP_OPCLASS_ELEMENTWISE}, {"Size", DP_OPCLASS_META}, {"Slice", DP_OPCLASS_DATA},
    {"Softmax", DP_OPCLASS_REDUCTION}, {"SoftmaxCrossEntropyWithLogits", DP_OPCLASS_REDUCTION},
    {"Softplus", DP_OPCLASS_ELEMENTWISE}, {"SparseApplyAdam", DP_OPCLASS_ELEMENTWISE},
    {"SparseSoftmaxCrossEntropyWithLogits", DP_OPCLASS_REDUCTION}, {"Split", DP_OPCLASS_DATA},
    {"SplitV", DP_OPCLASS_DATA}, {"Sqrt", DP_OPCLASS_ELEMENTWISE}, {"SqrtGrad", DP_OPCLASS_ELEMENTWISE},
    {"Square", DP_OPCLASS_ELEMENTWISE}, {"SquaredDifference", DP_OPCLASS_ELEMENTWISE}, {"Squeeze", DP_OPCLASS_META},
    {"StopGradient", DP_OPCLASS_META}, {"StridedSlice", DP_OPCLASS_DATA}, {"StridedSliceGrad", DP_OPCLASS_DATA},
    {"Sub", DP_OPCLASS_ELEMENTWISE}, {"Sum", DP_OPCLASS_REDUCTION}, {"Tanh", DP_OPCLASS_ELEMENTWISE},
    {"TanhGrad", DP_OPCLASS_ELEMENTWISE}, {"Tile", DP_OPCLASS_DATA}, {"Transpose", DP_OPCLASS_DATA},
    {"TruncatedNormal", DP_OPCLASS_ELEMENTWISE}, {"Unpack", DP_OPCLASS_DATA}, {"UnsortedSegmentSum", DP_OPCLASS_DATA},
    {"VarHandleOp", DP_OPCLASS_META}, {"Variable", DP_OPCLASS_META}, {"VariableV2", DP_OPCLASS_META},
    {"ZerosLike", DP_OPCLASS_ELEMENTWISE},
};
static const type_row aten_types[] = {
    {"Buffer", DP_OPCLASS_META}, {"Parameter", DP_OPCLASS_META}, {"_adaptive_avg_pool2d", DP_OPCLASS_REDUCTION},
    {"_adaptive_avg_pool2d_backward", DP_OPCLASS_REDUCTION}, {"_convolution", DP_OPCLASS_CONV},
    {"_foreach_add", DP_OPCLASS_ELEMENTWISE}, {"_foreach_addcdiv", DP_OPCLASS_ELEMENTWISE},
    {"_foreach_addcmul", DP_OPCLASS_ELEMENTWISE}, {"_foreach_div", DP_OPCLASS_ELEMENTWISE},
    {"_foreach_lerp", DP_OPCLASS_ELEMENTWISE}, {"_foreach_mul", DP_OPCLASS_ELEMENTWISE},
    {"_foreach_neg", DP_OPCLASS_ELEMENTWISE}, {"_foreach_sqrt", DP_OPCLASS_ELEMENTWISE},
    {"_foreach_sub", DP_OPCLASS_ELEMENTWISE}, {"_foreach_zero", DP_OPCLASS_ELEMENTWISE},
    {"_fused_adam", DP_OPCLASS_OPTIMIZER}, {"_fused_adamw", DP_OPCLASS_OPTIMIZER},
    {"_fused_sgd", DP_OPCLASS_OPTIMIZER}, {"_local_scalar_dense", DP_OPCLASS_META},
    {"_log_softmax", DP_OPCLASS_REDUCTION}, {"_log_softmax_backward_data", DP_OPCLASS_REDUCTION},
    {"_native_batch_norm_legit", DP_OPCLASS_REDUCTION}, {"_native_multi_head_attention", DP_OPCLASS_MATMUL},
    {"_reshape_alias", DP_OPCLASS_META}, {"_scaled_dot_product_attention", DP_OPCLASS_MATMUL},
    {"_scaled_dot_product_efficient_attention", DP_OPCLASS_MATMUL},
    {"_scaled_dot_product_efficient_attention_backward", DP_OPCLASS_MATMUL},
    {"_scaled_dot_product_flash_attention", DP_OPCLASS_MATMUL},
    {"_scaled_dot_product_flash_attention_backward", DP_OPCLASS_MATMUL}, {"_slow_conv2d_backward", DP_OPCLASS_CONV},
    {"_slow_conv2d_forward", DP_OPCLASS_CONV}, {"_softmax", DP_OPCLASS_REDUCTION},
    {"_softmax_backward_data", DP_OPCLASS_REDUCTION}, {"_to_copy", DP_OPCLASS_DATA},
    {"_unsafe_view", DP_OPCLASS_META}, {"abs", DP_OPCLASS_ELEMENTWISE}, {"adaptive_max_pool2d", DP_OPCLASS_REDUCTION},
    {"adaptive_max_pool2d_backward", DP_OPCLASS_REDUCTION}, {"add", DP_OPCLASS_ELEMENTWISE},
    {"addbmm", DP_OPCLASS_MATMUL}, {"addcdiv", DP_OPCLASS_ELEMENTWISE}, {"addcmul", DP_OPCLASS_ELEMENTWISE},
    {"addmm", DP_OPCLASS_MATMUL}, {"addmv", DP_OPCLASS_MATMUL}, {"alias", DP_OPCLASS_META},
    {"amax", DP_OPCLASS_REDUCTION}, {"amin", DP_OPCLASS_REDUCTION}, {"arange", DP_OPCLASS_ELEMENTWISE},
    {"argmax", DP_OPCLASS_REDUCTION}, {"argmin", DP_OPCLASS_REDUCTION}, {"as_strided", DP_OPCLASS_META},
    {"avg_pool2d", DP_OPCLASS_REDUCTION}, {"avg_pool2d_backward", DP_OPCLASS_REDUCTION},
    {"avg_pool3d", DP_OPCLASS_REDUCTION}, {"avg_pool3d_backward", DP_OPCLASS_REDUCTION},
    {"baddbmm", DP_OPCLASS_MATMUL}, {"bernoulli", DP_OPCLASS_ELEMENTWISE}, {"bitwise_and", DP_OPCLASS_ELEMENTWISE},
    {"bitwise_not", DP_OPCLASS_ELEMENTWISE}, {"bitwise_or", DP_OPCLASS_ELEMENTWISE}, {"bmm", DP_OPCLASS_MATMUL},
    {"cat", DP_OPCLASS_DATA}, {"chunk", DP_OPCLASS_META}, {"clamp", DP_OPCLASS_ELEMENTWISE},
    {"clamp_max", DP_OPCLASS_ELEMENTWISE}, {"clamp_min", DP_OPCLASS_ELEMENTWISE}, {"clone", DP_OPCLASS_DATA},
    {"col2im", DP_OPCLASS_DATA}, {"constant_pad_nd", DP_OPCLASS_DATA}, {"contiguous", DP_OPCLASS_DATA},
    {"convolution", DP_OPCLASS_CONV}, {"convolution_backward", DP_OPCLASS_CONV}, {"copy", DP_OPCLASS_DATA},
    {"cos", DP_OPCLASS_ELEMENTWISE}, {"cudnn_batch_norm", DP_OPCLASS_REDUCTION},
    {"cudnn_batch_norm_backward", DP_OPCLASS_REDUCTION}, {"cudnn_convolution", DP_OPCLASS_CONV},
    {"cudnn_convolution_transpose", DP_OPCLASS_CONV}, {"cumsum", DP_OPCLASS_REDUCTION}, {"detach", DP_OPCLASS_META},
    {"diagonal", DP_OPCLASS_META}, {"div", DP_OPCLASS_ELEMENTWISE}, {"dot", DP_OPCLASS_MATMUL},
    {"einsum", DP_OPCLASS_MATMUL}, {"elu", DP_OPCLASS_ELEMENTWISE}, {"elu_backward", DP_OPCLASS_ELEMENTWISE},
    {"embedding", DP_OPCLASS_DATA}, {"embedding_dense_backward", DP_OPCLASS_DATA}, {"empty", DP_OPCLASS_META},
    {"empty_like", DP_OPCLASS_META}, {"empty_strided", DP_OPCLASS_META}, {"eq", DP_OPCLASS_ELEMENTWISE},
    {"erf", DP_OPCLASS_ELEMENTWISE}, {"exp", DP_OPCLASS_ELEMENTWISE}, {"expand", DP_OPCLASS_META},
    {"expand_as", DP_OPCLASS_META}, {"expm1", DP_OPCLASS_ELEMENTWISE}, {"fill", DP_OPCLASS_ELEMENTWISE},
    {"flatten", DP_OPCLASS_META}, {"flip", DP_OPCLASS_DATA}, {"full", DP_OPCLASS_ELEMENTWISE},
    {"full_like", DP_OPCLASS_ELEMENTWISE}, {"gather", DP_OPCLASS_DATA}, {"ge", DP_OPCLASS_ELEMENTWISE},
    {"gelu", DP_OPCLASS_ELEMENTWISE}, {"gelu_backward", DP_OPCLASS_ELEMENTWISE}, {"gt", DP_OPCLASS_ELEMENTWISE},
    {"hardsigmoid", DP_OPCLASS_ELEMENTWISE}, {"hardsigmoid_backward", DP_OPCLASS_ELEMENTWISE},
    {"hardswish", DP_OPCLASS_ELEMENTWISE}, {"hardswish_backward", DP_OPCLASS_ELEMENTWISE},
    {"hardtanh", DP_OPCLASS_ELEMENTWISE}, {"hardtanh_backward", DP_OPCLASS_ELEMENTWISE}, {"im2col", DP_OPCLASS_DATA},
    {"index", DP_OPCLASS_DATA}, {"index_add", DP_OPCLASS_DATA}, {"index_put", DP_OPCLASS_DATA},
    {"index_select", DP_OPCLASS_DATA}, {"le", DP_OPCLASS_ELEMENTWISE}, {"leaky_relu", DP_OPCLASS_ELEMENTWISE},
    {"leaky_relu_backward", DP_OPCLASS_ELEMENTWISE}, {"lerp", DP_OPCLASS_ELEMENTWISE},
    {"lift_fresh", DP_OPCLASS_META}, {"lift_fresh_copy", DP_OPCLASS_ELEMENTWISE},
    {"linalg_vector_norm", DP_OPCLASS_REDUCTION}, {"linear", DP_OPCLASS_MATMUL}, {"log", DP_OPCLASS_ELEMENTWISE},
    {"log1p", DP_OPCLASS_ELEMENTWISE}, {"logical_and", DP_OPCLASS_ELEMENTWISE},
    {"logical_not", DP_OPCLASS_ELEMENTWISE}, {"logical_or", DP_OPCLASS_ELEMENTWISE},
    {"logsumexp", DP_OPCLASS_REDUCTION}, {"lt", DP_OPCLASS_ELEMENTWISE}, {"masked_fill", DP_OPCLASS_ELEMENTWISE},
    {"matmul", DP_OPCLASS_MATMUL}, {"max", DP_OPCLASS_REDUCTION}, {"max_pool2d_with_indices", DP_OPCLASS_REDUCTION},
    {"max_pool2d_with_indices_backward", DP_OPCLASS_REDUCTION}, {"max_pool3d_with_indices", DP_OPCLASS_REDUCTION},
    {"max_pool3d_with_indices_backward", DP_OPCLASS_REDUCTION}, {"maximum", DP_OPCLASS_ELEMENTWISE},
    {"mean", DP_OPCLASS_REDUCTION}, {"min", DP_OPCLASS_REDUCTION}, {"minimum", DP_OPCLASS_ELEMENTWISE},
    {"mish", DP_OPCLASS_ELEMENTWISE}, {"mkldnn_convolution", DP_OPCLASS_CONV}, {"mm", DP_OPCLASS_MATMUL},
    {"mse_loss", DP_OPCLASS_REDUCTION}, {"mse_loss_backward", DP_OPCLASS_REDUCTION}, {"mul", DP_OPCLASS_ELEMENTWISE},
    {"mv", DP_OPCLASS_MATMUL}, {"narrow", DP_OPCLASS_META}, {"native_batch_norm", DP_OPCLASS_REDUCTION},
    {"native_batch_norm_backward", DP_OPCLASS_REDUCTION}, {"native_dropout", DP_OPCLASS_ELEMENTWISE},
    {"native_dropout_backward", DP_OPCLASS_ELEMENTWISE}, {"native_group_norm", DP_OPCLASS_REDUCTION},
    {"native_group_norm_backward", DP_OPCLASS_REDUCTION}, {"native_layer_norm", DP_OPCLASS_REDUCTION},
    {"native_layer_norm_backward", DP_OPCLASS_REDUCTION}, {"ne", DP_OPCLASS_ELEMENTWISE},
    {"neg", DP_OPCLASS_ELEMENTWISE}, {"new_empty", DP_OPCLASS_META}, {"new_empty_strided", DP_OPCLASS_META},
    {"new_full", DP_OPCLASS_ELEMENTWISE}, {"new_ones", DP_OPCLASS_ELEMENTWISE}, {"new_zeros", DP_OPCLASS_ELEMENTWISE},
    {"nll_loss2d_backward", DP_OPCLASS_REDUCTION}, {"nll_loss2d_forward", DP_OPCLASS_REDUCTION},
    {"nll_loss_backward", DP_OPCLASS_REDUCTION}, {"nll_loss_forward", DP_OPCLASS_REDUCTION},
    {"norm", DP_OPCLASS_REDUCTION}, {"normal", DP_OPCLASS_ELEMENTWISE}, {"ones", DP_OPCLASS_ELEMENTWISE},
    {"ones_like", DP_OPCLASS_ELEMENTWISE}, {"permute", DP_OPCLASS_META}, {"pow", DP_OPCLASS_ELEMENTWISE},
    {"prod", DP_OPCLASS_REDUCTION}, {"rand", DP_OPCLASS_ELEMENTWISE}, {"rand_like", DP_OPCLASS_ELEMENTWISE},
    {"randint", DP_OPCLASS_ELEMENTWISE}, {"randn", DP_OPCLASS_ELEMENTWISE}, {"randn_like", DP_OPCLASS_ELEMENTWISE},
    {"reciprocal", DP_OPCLASS_ELEMENTWISE}, {"reflection_pad2d", DP_OPCLASS_DATA},
    {"reflection_pad2d_backward", DP_OPCLASS_DATA}, {"relu", DP_OPCLASS_ELEMENTWISE}, {"repeat", DP_OPCLASS_DATA},
    {"reshape", DP_OPCLASS_META}, {"roll", DP_OPCLASS_DATA}, {"rsqrt", DP_OPCLASS_ELEMENTWISE},
    {"rsub", DP_OPCLASS_ELEMENTWISE}, {"scalar_tensor", DP_OPCLASS_ELEMENTWISE},
    {"scaled_dot_product_attention", DP_OPCLASS_MATMUL}, {"scatter", DP_OPCLASS_DATA},
    {"scatter_add", DP_OPCLASS_DATA}, {"select", DP_OPCLASS_META}, {"select_backward", DP_OPCLASS_DATA},
    {"sigmoid", DP_OPCLASS_ELEMENTWISE}, {"sigmoid_backward", DP_OPCLASS_ELEMENTWISE},
    {"sign", DP_OPCLASS_ELEMENTWISE}, {"silu", DP_OPCLASS_ELEMENTWISE}, {"silu_backward", DP_OPCLASS_ELEMENTWISE},
    {"sin", DP_OPCLASS_ELEMENTWISE}, {"slice", DP_OPCLASS_META}, {"slice_backward", DP_OPCLASS_DATA},
    {"softplus", DP_OPCLASS_ELEMENTWISE}, {"softplus_backward", DP_OPCLASS_ELEMENTWISE}, {"sort", DP_OPCLASS_DATA},
    {"split", DP_OPCLASS_META}, {"split_with_sizes", DP_OPCLASS_META}, {"sqrt", DP_OPCLASS_ELEMENTWISE},
    {"squeeze", DP_OPCLASS_META}, {"stack", DP_OPCLASS_DATA}, {"std", DP_OPCLASS_REDUCTION},
    {"sub", DP_OPCLASS_ELEMENTWISE}, {"sum", DP_OPCLASS_REDUCTION}, {"sym_numel", DP_OPCLASS_META},
    {"sym_size", DP_OPCLASS_META}, {"sym_stride", DP_OPCLASS_META}, {"t", DP_OPCLASS_META},
    {"tanh", DP_OPCLASS_ELEMENTWISE}, {"tanh_backward", DP_OPCLASS_ELEMENTWISE},
    {"threshold", DP_OPCLASS_ELEMENTWISE}, {"threshold_backward", DP_OPCLASS_ELEMENTWISE}, {"topk", DP_OPCLASS_DATA},
    {"transpose", DP_OPCLASS_META}, {"unbind", DP_OPCLASS_META}, {"unflatten", DP_OPCLASS_META},
    {"unfold", DP_OPCLASS_META}, {"uniform", DP_OPCLASS_ELEMENTWISE}, {"unsafe_chunk", DP_OPCLASS_META},
    {"unsafe_split", DP_OPCLASS_META}, {"unsafe_split_with_sizes", DP_OPCLASS_META}, {"unsqueeze", DP_OPCLASS_META},
    {"upsample_bilinear2d", DP_OPCLASS_DATA}, {"upsample_bilinear2d_backward", DP_OPCLASS_DATA},
    {"upsample_nearest2d", DP_OPCLASS_DATA}, {"upsample_nearest2d_backward", DP_OPCLASS_DATA},
    {"var", DP_OPCLASS_REDUCTION}, {"var_mean", DP_OPCLASS_REDUCTION}, {"view", DP_OPCLASS_META},
    {"view_as", DP_OPCLASS_META}, {"where", DP_OPCLASS_ELEMENTWISE}, {"zero", DP_OPCLASS_ELEMENTWISE},
    {"zeros", DP_OPCLASS_ELEMENTWISE}, {"zeros_like", DP_OPCLASS_ELEMENTWISE},
};
static const type_row onnx_types[] = {
    {"Adagrad", DP_OPCLASS_OPTIMIZER}, {"Adam", DP_OPCLASS_OPTIMIZER}, {"And", DP_OPCLASS_ELEMENTWISE},
    {"ArgMin", DP_OPCLASS_REDUCTION}, {"AveragePool", DP_OPCLASS_REDUCTION},
    {"BatchNormalization", DP_OPCLASS_REDUCTION}, {"Ceil", DP_OPCLASS_ELEMENTWISE}, {"Clip", DP_OPCLASS_ELEMENTWISE},
    {"Constant", DP_OPCLASS_META}, {"ConstantOfShape", DP_OPCLASS_ELEMENTWISE}, {"Conv", DP_OPCLASS_CONV},
    {"ConvInteger", DP_OPCLASS_CONV}, {"ConvTranspose", DP_OPCLASS_CONV}, {"Cos", DP_OPCLASS_ELEMENTWISE},
    {"CumSum", DP_OPCLASS_REDUCTION}, {"DepthToSpace", DP_OPCLASS_DATA}, {"Dropout", DP_OPCLASS_ELEMENTWISE},
    {"Expand", DP_OPCLASS_DATA}, {"Flatten", DP_OPCLASS_META}, {"GatherElements", DP_OPCLASS_DATA},
    {"GatherND", DP_OPCLASS_DATA}, {"Gelu", DP_OPCLASS_ELEMENTWISE}, {"Gemm", DP_OPCLASS_MATMUL},
    {"GlobalAveragePool", DP_OPCLASS_REDUCTION}, {"GlobalMaxPool", DP_OPCLASS_REDUCTION},
    {"GreaterOrEqual", DP_OPCLASS_ELEMENTWISE}, {"GroupNormalization", DP_OPCLASS_REDUCTION},
    {"HardSigmoid", DP_OPCLASS_ELEMENTWISE}, {"HardSwish", DP_OPCLASS_ELEMENTWISE},
    {"InstanceNormalization", DP_OPCLASS_REDUCTION}, {"LayerNormalization", DP_OPCLASS_REDUCTION},
    {"LeakyRelu", DP_OPCLASS_ELEMENTWISE}, {"LessOrEqual", DP_OPCLASS_ELEMENTWISE},
    {"LpNormalization", DP_OPCLASS_REDUCTION}, {"MatMulInteger", DP_OPCLASS_MATMUL}, {"Mish", DP_OPCLASS_ELEMENTWISE},
    {"Mod", DP_OPCLASS_ELEMENTWISE}, {"Momentum", DP_OPCLASS_OPTIMIZER},
    {"NegativeLogLikelihoodLoss", DP_OPCLASS_REDUCTION}, {"Not", DP_OPCLASS_ELEMENTWISE},
    {"Or", DP_OPCLASS_ELEMENTWISE}, {"PRelu", DP_OPCLASS_ELEMENTWISE}, {"QLinearConv", DP_OPCLASS_CONV},
    {"QLinearMatMul", DP_OPCLASS_MATMUL}, {"ReduceL1", DP_OPCLASS_REDUCTION}, {"ReduceL2", DP_OPCLASS_REDUCTION},
    {"ReduceLogSumExp", DP_OPCLASS_REDUCTION}, {"ReduceMax", DP_OPCLASS_REDUCTION},
    {"ReduceMean", DP_OPCLASS_REDUCTION}, {"ReduceMin", DP_OPCLASS_REDUCTION}, {"ReduceProd", DP_OPCLASS_REDUCTION},
    {"ReduceSum", DP_OPCLASS_REDUCTION}, {"ReduceSumSquare", DP_OPCLASS_REDUCTION}, {"Resize", DP_OPCLASS_DATA},
    {"Round", DP_OPCLASS_ELEMENTWISE}, {"ScatterElements", DP_OPCLASS_DATA}, {"ScatterND", DP_OPCLASS_DATA},
    {"Sign", DP_OPCLASS_ELEMENTWISE}, {"Sin", DP_OPCLASS_ELEMENTWISE},
    {"SoftmaxCrossEntropyLoss", DP_OPCLASS_REDUCTION}, {"Softsign", DP_OPCLASS_ELEMENTWISE},
    {"SpaceToDepth", DP_OPCLASS_DATA}, {"ThresholdedRelu", DP_OPCLASS_ELEMENTWISE}, {"TopK", DP_OPCLASS_DATA},
    {"Unsqueeze", DP_OPCLASS_META}, {"Upsample", DP_OPCLASS_DATA}, {"Where", DP_OPCLASS_ELEMENTWISE},
    {"Xor", DP_OPCLASS_ELEMENTWISE},
};

_Static_assert(sizeof tf_types / sizeof tf_types[0] > 100, "tf_types");
_Static_assert(sizeof aten_types / sizeof aten_types[0] > 100, "aten_types");
_Static_assert(sizeof onnx_types / sizeof onnx_types[0] > 50, "onnx_types");

static const struct {
    const char *name;
    const type_row *rows;
    size_t n;
} type_tables[] = {
    {"tensorflow", tf_types, sizeof tf_types / sizeof tf_types[0]},
    {"aten", aten_types, sizeof aten_types / sizeof aten_types[0]},
    {"onnx", onnx_types, sizeof onnx_types / sizeof onnx_types[0]},
};

/* Ops whose output shares its input's buffer (TensorFlow's Identity, aten's
 * views): reading a variable, they reference its parameters (sorted). */
static const char *const view_types[] = {
    "Identity",  "_reshape_alias", "_unsafe_view", "alias",     "as_strided", "chunk",     "detach",
    "diagonal",  "expand",         "expand_as",    "narrow",    "permute",    "select",    "slice",
    "split",     "split_with_sizes", "squeeze",    "t",         "transpose",  "unbind",    "unflatten",
    "unfold",    "unsqueeze",      "view",         "view_as",
};

/* Op types whose outputs are persistent state (parameters, buffers): TensorFlow's
 * variables and the exporter's placeholders (sorted). */
static const char *const variable_types[] = {"Buffer", "Parameter", "VarHandleOp", "Variable", "VariableV2"};

static int cmp_row(const void *key, const void *row) { return strcmp((const char *)key, ((const type_row *)row)->type); }
static int cmp_name(const void *key, const void *name) { return strcmp((const char *)key, *(const char *const *)name); }

static const type_row *find_row(const char *type) {
    for (size_t t = 0; t < sizeof type_tables / sizeof type_tables[0]; t++) {
        const type_row *r = bsearch(type, type_tables[t].rows, type_tables[t].n, sizeof(type_row), cmp_row);
        if (r) return r;
    }
    return NULL;
}

/* The row of a type name: as written; else without aten's "aten::" prefix,
 * or its "aten." prefix and overload suffix ("aten.addmm.default"); else an
 * aten in-place variant ("add_", "relu_") as its out-of-place op. */
static const type_row *lookup(const char *type) {
    const type_row *r = find_row(type);
    if (r) return r;
    char buf[128];
    const char *s = type;
    size_t n;
    if (!strncmp(s, "aten::", 6)) s += 6, n = strlen(s);
    else if (!strncmp(s, "aten.", 5)) s += 5, n = strcspn(s, ".");
    else n = strlen(s);
    if (n == 0 || n >= sizeof buf) return NULL;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (s != type && (r = find_row(buf))) return r;
    if (n > 1 && buf[n - 1] == '_' && buf[n - 2] != '_') {
        buf[n - 1] = 0;
        return find_row(buf);
    }
    return NULL;
}

dp_opclass dp_opclass_of_type(const char *type) {
    const type_row *r = lookup(type);
    return r ? r->cls : DP_OPCLASS_ELEMENTWISE;
}

int dp_cost_type_known(const char *type) { return lookup(type) != NULL; }

int dp_cost_type_is_view(const char *type) {
    return bsearch(type, view_types, sizeof view_types / sizeof view_types[0], sizeof view_types[0], cmp_name) != NULL;
}

int dp_cost_type_is_variable(const char *type) {
    return bsearch(type, variable_types, sizeof variable_types / sizeof variable_types[0], sizeof variable_types[0],
                   cmp_name) != NULL;
}

static int check_sorted(const char *what, const char *const *names, size_t stride, size_t n, dp_error *err) {
    for (size_t i = 0; i + 1 < n; i++) {
        const char *a = *(const char *const *)((const char *)names + i * stride);
        const char *b = *(const char *const *)((const char *)names + (i + 1) * stride);
        if (strcmp(a, b) >= 0) {
            dp_error_set(err, DP_STATUS_INVALID, "cost: %s: \"%s\" must come after \"%s\" (sorted, once)", what, a, b);
            return 1;
        }
    }
    return 0;
}

dp_status dp_cost_check_tables(dp_error *err) {
    const size_t nt = sizeof type_tables / sizeof type_tables[0];
    for (size_t t = 0; t < nt; t++) {
        const type_row *rows = type_tables[t].rows;
        if (check_sorted(type_tables[t].name, &rows[0].type, sizeof(type_row), type_tables[t].n, err))
            return DP_STATUS_INVALID;
        for (size_t i = 0; i < type_tables[t].n; i++) {
            if ((unsigned)rows[i].cls >= DP_OPCLASS_COUNT)
                return dp_error_set(err, DP_STATUS_INVALID, "cost: %s: \"%s\" has class %d", type_tables[t].name,
                                    rows[i].type, (int)rows[i].cls);
            for (size_t u = 0; u < nt; u++) {
                if (u != t && bsearch(rows[i].type, type_tables[u].rows, type_tables[u].n, sizeof(type_row), cmp_row))
                    return dp_error_set(err, DP_STATUS_INVALID, "cost: \"%s\" is in both the %s and the %s table",
                                        rows[i].type, type_tables[t].name, type_tables[u].name);
            }
        }
    }
    if (check_sorted("view types", view_types, sizeof view_types[0], sizeof view_types / sizeof view_types[0], err) ||
        check_sorted("variable types", variable_types, sizeof variable_types[0],
                     sizeof variable_types / sizeof variable_types[0], err))
        return DP_STATUS_INVALID;
    for (size_t i = 0; i < sizeof view_types / sizeof view_types[0]; i++)
        if (dp_opclass_of_type(view_types[i]) != DP_OPCLASS_META)
            return dp_error_set(err, DP_STATUS_INVALID, "cost: view type \"%s\" is not a meta op", view_types[i]);
    for (size_t i = 0; i < sizeof variable_types / sizeof variable_types[0]; i++)
        if (dp_opclass_of_type(variable_types[i]) != DP_OPCLASS_META)
            return dp_error_set(err, DP_STATUS_INVALID, "cost: variable type \"%s\" is not a meta op",
                                variable_types[i]);
    return DP_STATUS_OK;
}

static int cmp_unknown(const void *a, const void *b) {
    const dp_cost_unknown *x = a, *y = b;
    if (x->n_ops != y->n_ops) return x->n_ops > y->n_ops ? -1 : 1;
    return x->type < y->type ? -1 : x->type > y->type;
}

dp_status dp_cost_unknown_types(const dp_graph *g, dp_cost_unknown **out, int32_t *n_out, dp_error *err) {
    *out = NULL;
    *n_out = 0;
    int32_t ns = dp_graph_n_strings(g);
    int32_t *count = calloc(ns > 0 ? (size_t)ns : 1, sizeof *count);
    if (!count) return dp_error_set(err, DP_STATUS_NOMEM, "cost: out of memory counting op types");
    for (int32_t i = 0; i < g->n_ops; i++)
        if (!g->ops[i].n_costs) count[g->ops[i].type]++;
    int32_t n = 0;
    for (int32_t s = 0; s < ns; s++)
        if (count[s] && !dp_cost_type_known(dp_graph_str(g, s))) n++;
    dp_cost_unknown *u = n ? malloc((size_t)n * sizeof *u) : NULL;
    if (n && !u) {
        free(count);
        return dp_error_set(err, DP_STATUS_NOMEM, "cost: out of memory counting op types");
    }
    n = 0;
    for (int32_t s = 0; s < ns; s++)
        if (count[s] && !dp_cost_type_known(dp_graph_str(g, s))) u[n++] = (dp_cost_unknown){s, count[s]};
    free(count);
    if (n > 1) qsort(u, (size_t)n, sizeof *u, cmp_unknown);
    *out = u;
    *n_out = n;
    return DP_STATUS_OK;
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

/* Where each convolution type keeps its geometry: the tensor holding the
 * kernel (an input or output slot, and the index of its height dimension;
 * width follows), the tensors of the larger and the smaller spatial size
 * (input and output of a forward convolution) and the index of their height
 * dimension (NHWC: 1, NCHW: 2), and the channel dimension of the large
 * tensor and of the kernel (equal unless the convolution is grouped). */
typedef struct conv_layout {
    const char *type;
    int8_t kernel_out, kernel_slot, kernel_h, kernel_c; /* kernel_out: the kernel is output kernel_slot */
    int8_t big_out, big_slot, small_out, small_slot, spatial_h, channel;
} conv_layout;

static const conv_layout conv_layouts[] = {
    /* TensorFlow: NHWC activations, HWIO filters */
    {"Conv2D", 0, 1, 0, 2, 0, 0, 1, 0, 1, 3},
    {"Conv2DBackpropFilter", 1, 0, 0, 2, 0, 0, 0, 2, 1, 3},
    {"Conv2DBackpropInput", 0, 1, 0, 2, 1, 0, 0, 2, 1, 3},
    /* ONNX, aten: NCHW activations, OIHW weights */
    {"Conv", 0, 1, 2, 1, 0, 0, 1, 0, 2, 1},
    {"convolution", 0, 1, 2, 1, 0, 0, 1, 0, 2, 1},
    {"convolution_backward", 0, 2, 2, 1, 0, 1, 0, 0, 2, 1},
};

/* The layout of op o's convolution type (aten's "aten::" prefix dropped),
 * or NULL for a type that is no convolution. */
static const conv_layout *conv_layout_of(const dp_graph *g, const dp_op *o) {
    const char *t = dp_graph_str(g, o->type);
    if (!strncmp(t, "aten::", 6)) t += 6;
    for (size_t i = 0; i < sizeof conv_layouts / sizeof conv_layouts[0]; i++)
        if (!strcmp(t, conv_layouts[i].type)) return &conv_layouts[i];
    return NULL;
}

/* The shape of input or output `slot` of op o: its dims and rank (-1 when
 * the slot is missing or given in bytes only). */
static const int64_t *tensor_dims(const dp_graph *g, const dp_op *o, int is_out, int32_t slot, int32_t *rank) {
    const dp_output *t;
    if (is_out) {
        if (slot >= o->n_outputs) return *rank = -1, NULL;
        t = &g->outputs[o->outputs_at + slot];
    } else {
        if (slot >= o->n_inputs) return *rank = -1, NULL;
        dp_input in = g->inputs[o->inputs_at + slot];
        t = &g->outputs[g->ops[in.op].outputs_at + in.slot];
    }
    *rank = t->rank;
    return t->rank > 0 ? &g->dims[t->dims_at] : NULL;
}

int dp_cost_conv_winograd(const dp_graph *g, int32_t op) {
    const dp_op *o = &g->ops[op];
    const conv_layout *L = conv_layout_of(g, o);
    if (!L) return 0;
    int32_t rk, rb, rs;
    const int64_t *k = tensor_dims(g, o, L->kernel_out, L->kernel_slot, &rk);
    const int64_t *big = tensor_dims(g, o, L->big_out, L->big_slot, &rb);
    const int64_t *small = tensor_dims(g, o, L->small_out, L->small_slot, &rs);
    if (rk != 4 || rb != 4 || rs != 4) return 0;
    if (k[L->kernel_h] != 3 || k[L->kernel_h + 1] != 3) return 0;
    if (k[L->kernel_c] != big[L->channel]) return 0; /* grouped or depthwise */
    int h = L->spatial_h;
    return small[h] >= big[h] - 2 && small[h + 1] >= big[h + 1] - 2; /* stride 1 ("same" or "valid") */
}

/* The efficiency slot of a convolution that libraries run with kernels of
 * their own: DP_EFF_DEPTHWISE (the kernel's one input channel a group),
 * DP_EFF_GROUPED (fewer input channels than the activation's, more than
 * one), -1 for any other op or without the shapes. A transposed
 * convolution (aten's convolution with transposed set, which the graph does
 * not record) keeps its kernel as input by output channels, so its second
 * kernel dimension counts output channels: it is told apart by its output
 * (the small tensor of the layout) not having the kernel's output channels
 * (the kernel's first dimension; HWIO kernels' last), and priced as a
 * plain convolution. */
static int conv_group_slot(const dp_graph *g, int32_t op) {
    const dp_op *o = &g->ops[op];
    const conv_layout *L = conv_layout_of(g, o);
    if (!L) return -1;
    int32_t rk, rb, rs;
    const int64_t *k = tensor_dims(g, o, L->kernel_out, L->kernel_slot, &rk);
    const int64_t *big = tensor_dims(g, o, L->big_out, L->big_slot, &rb);
    const int64_t *small = tensor_dims(g, o, L->small_out, L->small_slot, &rs);
    if (rk != 4 || rb != 4 || k[L->kernel_c] >= big[L->channel]) return -1;
    if (rs == 4 && small[L->channel] != k[L->kernel_h == 0 ? 3 : 0]) return -1; /* transposed */
    return k[L->kernel_c] == 1 ? DP_EFF_DEPTHWISE : DP_EFF_GROUPED;
}

int dp_cost_conv_grouped(const dp_graph *g, int32_t op) { return conv_group_slot(g, op) >= 0; }

int dp_cost_conv_depthwise(const dp_graph *g, int32_t op) { return conv_group_slot(g, op) == DP_EFF_DEPTHWISE; }

/* The product a matrix multiplication or a convolution (as the implicit
 * GEMM cuDNN and Eigen run it) computes: `batch` independent products of m
 * x n outputs, each summing k terms. The outputs are the op's first
 * output; n is its channel (last, or NCHW's second) dimension, m the rest
 * but a batched product's leading dimensions; k follows from the op's FLOPs
 * (2 m n k batch). 0 when the op has no such shape. */
static int gemm_shape(const dp_graph *g, const dp_op *o, dp_opclass c, double *m, double *n, double *k,
                      double *batch) {
    int32_t r;
    const int64_t *d = tensor_dims(g, o, 1, 0, &r);
    if (r < 2 || o->flops <= 0) return 0;
    double rows = 1, b = 1, cols;
    if (c == DP_OPCLASS_CONV) {
        const conv_layout *L = conv_layout_of(g, o);
        int ch = L && L->spatial_h == 2 && r == 4 ? 1 : r - 1; /* NCHW, else NHWC (HWIO) */
        cols = (double)d[ch];
        for (int32_t i = 0; i < r; i++)
            if (i != ch) rows *= (double)d[i];
    } else {
        cols = (double)d[r - 1];
        rows = (double)d[r - 2];
        for (int32_t i = 0; i < r - 2; i++) b *= (double)d[i];
    }
    if (rows < 1 || cols < 1) return 0;
    *k = o->flops / (2 * rows * cols * b);
    if (*k < 1) return 0;
    *m = rows, *n = cols, *batch = b;
    return 1;
}

/* The tile edge a GEMM kernel library picks for a dimension of n: the
 * largest, `largest`, unless the dimension is smaller, then the power of
 * two that covers it (at least 16). */
static double tile_edge(double n, double largest) {
    double t = 16;
    while (t < n && t < largest) t *= 2;
    return t < largest ? t : largest;
}

/* The fraction of its generation's efficiency a GPU reaches on `b`
 * products of m x n outputs summing k terms each. The kernel library cuts
 * the outputs into tiles (tile_edge: a small dimension gets a small tile,
 * and a partial tile costs a whole one); a tile of tm x tn outputs reuses
 * each operand it loads tm tn / (tm + tn) times, and runs at the full rate
 * when that reuse is at least reuse_knee of the largest tile's, else at
 * its share of that knee (what makes a skinny product of a small batch
 * slow). The tiles run in waves, `slots` largest tiles (or as many smaller
 * tiles in the same registers) at once, the last wave part empty (what
 * makes a small convolution slow); fewer tiles than a wave holds split
 * their sums (split-K, as cuBLAS does) into as many parts as fill it, each
 * at least `tile` terms deep. */
static double gemm_util(const dp_generation *P, double m, double n, double k, double b) {
    double tm = tile_edge(m, P->tile), tn = tile_edge(n, P->tile);
    double nm = ceil(m / tm), nn = ceil(n / tn);
    double u_tile = (m * n) / (nm * tm * nn * tn);
    double reuse = (tm * tn / (tm + tn)) / (P->reuse_knee * P->tile / 2);
    if (reuse > 1) reuse = 1;
    double tiles = nm * nn * b, slots = P->slots * (P->tile * P->tile) / (tm * tn);
    double split = floor(slots / tiles), depth = ceil(k / P->tile);
    if (split > depth) split = depth;
    if (split > 1) tiles *= split;
    double u_wave = tiles / (ceil(tiles / slots) * slots);
    return u_tile * reuse * u_wave;
}

/* The shape factor of op o on generation P (gemm_util of its product,
 * gemm_shape); 1 when P has no shape model or the op no shape. */
static double gemm_utilization(const dp_generation *P, const dp_graph *g, const dp_op *o, dp_opclass c) {
    double m, n, k, b;
    if (!P || P->tile <= 0 || !gemm_shape(g, o, c, &m, &n, &k, &b)) return 1;
    double u = gemm_util(P, m, n, k, b);
    /* aten's convolution_backward is two products, each half the FLOPs: the
     * input's gradient (output 0, as gemm_shape reads it, k halved) and the
     * filter's (output 1, OIHW: n the output channels, m the rest); the op
     * takes the two times, so its factor is their harmonic mean */
    const char *t = dp_graph_str(g, o->type);
    if (!strncmp(t, "aten::", 6)) t += 6;
    int32_t r;
    const int64_t *w = strcmp(t, "convolution_backward") ? NULL : tensor_dims(g, o, 1, 1, &r);
    if (w && r == 4) {
        u = gemm_util(P, m, n, k / 2, b);
        double wn = (double)w[0], wm = (double)w[1] * (double)w[2] * (double)w[3];
        double wk = o->flops / 2 / (2 * wm * wn);
        if (wm >= 1 && wn >= 1 && wk >= 1) u = 2 / (1 / u + 1 / gemm_util(P, wm, wn, wk, 1));
    }
    return u;
}

dp_dtype dp_cost_op_dtype(const dp_graph *g, int32_t op) {
    const dp_op *o = &g->ops[op];
    for (int32_t k = 0; k < o->n_outputs; k++) {
        dp_dtype t = g->outputs[o->outputs_at + k].dtype;
        if (t != DP_DTYPE_NONE) return t;
    }
    return DP_DTYPE_NONE;
}

/* The tensor-core math a product (class c: matmul or conv) of op o runs
 * in: its dtype's (bfloat16, float16), or TF32 for float32 where the graph
 * allows it for the class; -1 for none (every other dtype, a dtype not
 * given, float32 without the graph's leave). */
static int product_math(const dp_graph *g, int32_t op, dp_opclass c) {
    switch (dp_cost_op_dtype(g, op)) {
    case DP_DTYPE_BFLOAT16: return DP_TENSOR_MATH_BFLOAT16;
    case DP_DTYPE_FLOAT16: return DP_TENSOR_MATH_FLOAT16;
    case DP_DTYPE_FLOAT32:
        return g->tf32 & (c == DP_OPCLASS_CONV ? DP_GRAPH_TF32_CONV : DP_GRAPH_TF32_MATMUL) ? DP_TENSOR_MATH_TF32 : -1;
    default: return -1;
    }
}

/* The peak of op o on dev (gen: dev's generation, NULL for none), as
 * dp_cost_op_peak promises; *tensor: whether it is a tensor-core peak. */
static double op_peak(const dp_graph *g, int32_t op, dp_opclass c, const dp_device *dev, const dp_generation *gen,
                      int *tensor) {
    *tensor = 0;
    if (c != DP_OPCLASS_MATMUL && c != DP_OPCLASS_CONV) return dev->peak_flops;
    int m = product_math(g, op, c);
    if (m < 0 || !gen || !(gen->tensor_math & (1u << m)) || !(dev->tensor_flops[m] > 0)) return dev->peak_flops;
    *tensor = 1;
    return dev->tensor_flops[m];
}

double dp_cost_op_peak(const dp_graph *g, int32_t op, const dp_device *dev) {
    const dp_generation *gen = dev->generation[0] ? dp_devices_generation(dev->generation) : NULL;
    int tensor;
    return op_peak(g, op, dp_opclass_of_type(dp_graph_str(g, g->ops[op].type)), dev, gen, &tensor);
}

double dp_cost_op_seconds(const dp_graph *g, int32_t op, const dp_device *dev) {
    const dp_op *o = &g->ops[op];
    double m = measured(g, o, dev);
    if (m >= 0) return m;
    dp_opclass c = dp_opclass_of_type(dp_graph_str(g, o->type));
    /* ops that only describe or rename tensors (Shape, Const, Identity,
     * Reshape, ...) run on the host without a kernel launch: a fraction of
     * the launch overhead (calibrated, docs/calibration.md) */
    const dp_generation *gen = dev->generation[0] ? dp_devices_generation(dev->generation) : NULL;
    if (c == DP_OPCLASS_META || reduces_nothing(g, o, c))
        return dev->launch_overhead_s * (gen ? gen->meta_fraction : DP_GENERATION_META_FRACTION);
    int tensor;
    double peak = op_peak(g, op, c, dev, gen, &tensor);
    dp_efficiency e = dev->eff[c];
    /* cuDNN runs a convolution on tensor cores as an implicit GEMM, not
     * with Winograd's algorithm: the conv row prices it */
    if (c == DP_OPCLASS_CONV && !tensor && dp_cost_conv_winograd(g, op)) e = dev->eff[DP_EFF_WINOGRAD];
    int grouped = c == DP_OPCLASS_CONV ? conv_group_slot(g, op) : -1;
    if (grouped >= 0) e = dev->eff[grouped];
    if (c == DP_OPCLASS_MATMUL || c == DP_OPCLASS_CONV) e.compute *= gemm_utilization(gen, g, o, c);
    double t_compute = o->flops / (peak * e.compute);
    double t_memory = dp_cost_op_bytes(g, op) / (dev->mem_bandwidth * e.memory);
    /* a fused op (a recurrent module's) starts nothing of its own: cuDNN's
     * kernels run the recurrence on a GPU, ATen's loop issues the CPU's
     * small per-step ops inline, without the framework's per-op cost */
    return (t_compute > t_memory ? t_compute : t_memory) + (o->fused ? 0.0 : dev->launch_overhead_s);
}
