/* dplace: how long one op takes on one device.
 *
 * An op's measured "cost" for the device's model, else for its kind, is used
 * as it is. Otherwise a roofline estimate: max(flops / (peak x e_c),
 * bytes moved / (bandwidth x e_m)) + launch overhead, where the efficiencies
 * e_c, e_m depend on the op's class (matmul, conv, elementwise, ...) and the
 * device: the device's own values, else its generation's, else its kind's
 * (dp_device.eff, docs/simulator.md). peak is the FP32 peak, or for a
 * product whose dtype the device's tensor cores run their peak
 * (dp_cost_op_peak). Ops that only rename or describe tensors (Identity, Shape,
 * Const, NoOp, aten's views, ...) run on the host: a quarter of the launch
 * overhead.
 * The efficiencies and overheads are calibrated (docs/calibration.md). */
#ifndef DPLACE_COST_H
#define DPLACE_COST_H

#include "dplace/devices.h"
#include "dplace/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the cost model's equations: what an op's or a transfer's
 * time is, given a device set's parameters (which dp_devices_hash covers).
 * Bump it with any change of those equations or of the tables the device
 * format does not carry, so that checkpoints made under the old model are
 * refused rather than resumed. A new input that selects a new path keeps
 * it when everything that could be written before is priced as before:
 * the tensor-core peaks price only products of devices that give them
 * (which dp_devices_hash then covers, so an older checkpoint on such a set
 * is refused) and of graphs with dtypes; the launch overhead is left out
 * only for ops a graph marks fused, which no earlier graph did. */
#define DP_COST_MODEL_VERSION 2u

/* dp_opclass and dp_opclass_name are in devices.h (a device file carries
 * efficiencies per class). */
/* Class of an op type: TensorFlow names ("Conv2D"), aten names as
 * scripts/dplace-export-torch writes them ("convolution", "addmm"; an
 * in-place "add_" as "add"; "aten::" prefixes and overload suffixes
 * ignored) and ONNX names ("Conv", "Gemm"). Unknown types are ELEMENTWISE. */
dp_opclass dp_opclass_of_type(const char *type);
/* Whether the cost model's tables list the type (else it falls back to
 * ELEMENTWISE, which dp_cost_unknown_types reports). */
int dp_cost_type_known(const char *type);
/* Whether ops of the type hold persistent state (TensorFlow's variables,
 * the exporter's Parameter and Buffer placeholders), and whether their
 * output shares their input's buffer (Identity, aten's views). */
int dp_cost_type_is_variable(const char *type);
int dp_cost_type_is_view(const char *type);
/* Checks the type tables: sorted, one class each, no name in two tables,
 * views and variables meta ops. DP_STATUS_INVALID naming the first
 * problem (test_cost runs it). */
dp_status dp_cost_check_tables(dp_error *err);

/* An op type the cost model does not know: its interned id in the graph and
 * the number of ops of that type without a measured cost (the ops the
 * roofline prices as ELEMENTWISE because of it). */
typedef struct dp_cost_unknown {
    int32_t type;
    int32_t n_ops;
} dp_cost_unknown;
/* The unknown types of g, most ops first (ties: first seen first), in a
 * malloc'd array the caller frees (NULL when there are none). Only ops
 * without any measured cost count. */
dp_status dp_cost_unknown_types(const dp_graph *g, dp_cost_unknown **out, int32_t *n_out, dp_error *err);

/* Efficiencies (fraction of peak) for a class on a device kind: the kind's
 * table, which a device's generation or its own values override
 * (dp_device.eff holds what applies). */
dp_efficiency dp_cost_efficiency(dp_opclass c, dp_devkind kind);
/* Whether op is a 3x3, stride-1, ungrouped 2-D convolution or one of its
 * gradients (TensorFlow's Conv2D, Conv2DBackpropInput/Filter in NHWC,
 * aten's convolution, convolution_backward and ONNX's Conv in NCHW): the
 * convolutions cuDNN runs with Winograd's algorithm, which needs up to 4
 * times fewer multiplications than the direct sum its FLOPs count. Needs
 * the shapes of the kernel and of both activations; without them, no. Such
 * ops are priced with dp_cost_winograd_efficiency instead of the CONV row. */
int dp_cost_conv_winograd(const dp_graph *g, int32_t op);
/* Whether op is a grouped or depthwise 2-D convolution or one of its
 * gradients (the kernel's input channels fewer than the activation's; the
 * same types and layouts as dp_cost_conv_winograd): such ops but the
 * depthwise ones are priced with the device's DP_EFF_GROUPED efficiencies,
 * which are its conv row's unless it gives its own. Without the shapes,
 * no. */
int dp_cost_conv_grouped(const dp_graph *g, int32_t op);
/* Whether op is a depthwise one among those (one input channel a group):
 * priced with DP_EFF_DEPTHWISE, which is the grouped slot's unless the
 * device gives its own. */
int dp_cost_conv_depthwise(const dp_graph *g, int32_t op);
dp_efficiency dp_cost_winograd_efficiency(dp_devkind kind);

/* Bytes an op moves through device memory: its inputs and outputs. */
double dp_cost_op_bytes(const dp_graph *g, int32_t op);

/* Seconds op takes on dev (measured cost when the graph has one for the
 * device's model or kind, else the roofline estimate). */
double dp_cost_op_seconds(const dp_graph *g, int32_t op, const dp_device *dev);

/* The dtype op computes in: that of its first output that has one;
 * DP_DTYPE_NONE when every output is given in bytes only. */
dp_dtype dp_cost_op_dtype(const dp_graph *g, int32_t op);
/* The FLOP/s the roofline divides op's FLOPs by on dev (before the
 * efficiency): for a matmul or conv the tensor-core peak
 * (dp_device.tensor_flops) of the math its dtype picks, when dev's
 * generation runs that math and dev gives its peak: bfloat16 and float16
 * their own, float32 TF32 where the graph allows it for the op's class
 * (dp_graph.tf32); else, and for every other op, dev->peak_flops (FP32).
 * A convolution at a tensor-core peak takes the conv efficiency, never
 * the Winograd one (docs/devices.md, "Which peak"). */
double dp_cost_op_peak(const dp_graph *g, int32_t op, const dp_device *dev);

#ifdef __cplusplus
}
#endif
#endif
