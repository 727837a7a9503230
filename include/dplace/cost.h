/* dplace: how long one op takes on one device.
 *
 * An op's measured "cost" for the device's model, else for its kind, is used
 * as it is. Otherwise a roofline estimate: max(flops / (peak x e_c),
 * bytes moved / (bandwidth x e_m)) + launch overhead, where the efficiencies
 * e_c, e_m depend on the op's class (matmul, conv, elementwise, ...) and the
 * device kind. Ops that only rename or describe tensors (Identity, Shape,
 * Const, NoOp, ...) run on the host: a quarter of the launch overhead.
 * The efficiencies and overheads are calibrated (docs/calibration.md). */
#ifndef DPLACE_COST_H
#define DPLACE_COST_H

#include "dplace/devices.h"
#include "dplace/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dp_opclass {
    DP_OPCLASS_META = 0,    /* Identity, Shape, Const, NoOp, Reshape: no data moved */
    DP_OPCLASS_ELEMENTWISE, /* Add, Mul, Relu, Sigmoid, and unknown types        */
    DP_OPCLASS_MATMUL,      /* MatMul, BatchMatMul and their gradients           */
    DP_OPCLASS_CONV,        /* Conv2D and its two gradients, depthwise conv      */
    DP_OPCLASS_REDUCTION,   /* Sum, Mean, Softmax, BiasAddGrad, pooling, norms   */
    DP_OPCLASS_DATA,        /* Concat, Slice, Transpose, Gather, Pad, Tile       */
    DP_OPCLASS_OPTIMIZER,   /* ApplyAdam, ApplyGradientDescent, ...              */
    DP_OPCLASS_COUNT
} dp_opclass;

const char *dp_opclass_name(dp_opclass c);
/* Class of a TensorFlow op type name; unknown types are ELEMENTWISE. */
dp_opclass dp_opclass_of_type(const char *type);

/* Efficiencies (fraction of peak) for a class on a device kind. */
typedef struct dp_efficiency {
    double compute;
    double memory;
} dp_efficiency;
dp_efficiency dp_cost_efficiency(dp_opclass c, dp_devkind kind);

/* Bytes an op moves through device memory: its inputs and outputs. */
double dp_cost_op_bytes(const dp_graph *g, int32_t op);

/* Seconds op takes on dev (measured cost when the graph has one for the
 * device's model or kind, else the roofline estimate). */
double dp_cost_op_seconds(const dp_graph *g, int32_t op, const dp_device *dev);

#ifdef __cplusplus
}
#endif
#endif
