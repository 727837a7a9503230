/* dplace: device sets. A device set lists the CPUs and GPUs a graph may be
 * placed on and the links between them, with the cost model's parameters of
 * each (format "dplace-devices" v2, v1 still read, see docs/formats.md;
 * presets in docs/devices.md). */
#ifndef DPLACE_DEVICES_H
#define DPLACE_DEVICES_H

#include "dplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_MAX_DEVICES 64
#define DP_MAX_STREAMS 64
#define DP_NAME_MAX 64
/* Rates a device or link may have (peak_flops, memory_bandwidth, link
 * bandwidth): 1 .. 1e20 per second. Outside it, times overflow to infinity
 * (a subnormal speed) or round to nothing. */
#define DP_DEVICES_MIN_RATE 1.0
#define DP_DEVICES_MAX_RATE 1e20

typedef enum dp_devkind {
    DP_DEVKIND_CPU = 0,
    DP_DEVKIND_GPU,
    DP_DEVKIND_COUNT
} dp_devkind;

const char *dp_devkind_name(dp_devkind kind); /* "cpu", "gpu" */

/* The classes the cost model prices ops by (dp_opclass_of_type, cost.h). */
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

/* Name of a class as files spell it ("meta", "elementwise", "matmul", "conv",
 * "reduction", "data", "optimizer"). */
const char *dp_opclass_name(dp_opclass c);

/* Fraction of peak FLOP/s (compute) and of peak memory bandwidth (memory)
 * that ops reach. */
typedef struct dp_efficiency {
    double compute;
    double memory;
} dp_efficiency;

/* A device's efficiencies: one slot per op class, then DP_EFF_WINOGRAD for
 * the 3x3 convolutions cuDNN runs with Winograd's algorithm
 * (dp_cost_conv_winograd), DP_EFF_GROUPED for grouped convolutions
 * (dp_cost_conv_grouped), which libraries run with kernels of their own,
 * and DP_EFF_DEPTHWISE for the depthwise ones among them (one input
 * channel a group, dp_cost_conv_depthwise), whose kernels reach other rates
 * again (on a CPU a depthwise gradient runs at a few GFLOP/s whatever its
 * kernel size, a grouped convolution of 16 channels a group as small
 * matrix products). Slot names as files spell them: the class names,
 * "winograd", "grouped" and "depthwise". The last two follow another slot
 * (dp_devices_eff_follows): a device that gives none of its own takes that
 * slot's as resolved, whatever gave it, so that they price nothing
 * differently until a file or a calibration sets them. */
#define DP_EFF_WINOGRAD DP_OPCLASS_COUNT
#define DP_EFF_GROUPED (DP_OPCLASS_COUNT + 1)
#define DP_EFF_DEPTHWISE (DP_OPCLASS_COUNT + 2)
#define DP_EFF_COUNT (DP_OPCLASS_COUNT + 3)
const char *dp_devices_eff_slot_name(int slot);
/* The slot that slot follows when a device gives it no value (grouped:
 * conv, depthwise: grouped), always an earlier one; -1 for a slot that
 * takes its table's value. */
int dp_devices_eff_follows(int slot);
/* An efficiency a file or caller may give: 0 < e <= DP_DEVICES_MAX_EFFICIENCY
 * (above 1 where the counted work overstates the real one, as Winograd's,
 * or where caches serve an op faster than the memory's bandwidth). */
#define DP_DEVICES_MAX_EFFICIENCY 16.0
/* Bit of dp_device.eff_own that marks slot's compute (part 0) or memory
 * (part 1) efficiency as the device's own. */
#define DP_EFF_OWN_BIT(slot, part) (1u << (2 * (slot) + (part)))

/* The math a GPU's tensor cores run, each with its own peak (dp_device
 * tensor_flops): TF32 (float32 products in tensor-core precision, a mode the
 * framework allows, not a storage dtype), float16 and bfloat16 products. */
typedef enum dp_tensor_math {
    DP_TENSOR_MATH_TF32 = 0,
    DP_TENSOR_MATH_FLOAT16,
    DP_TENSOR_MATH_BFLOAT16,
    DP_TENSOR_MATH_COUNT
} dp_tensor_math;

/* Name as device files spell it ("tf32", "float16", "bfloat16"). */
const char *dp_tensor_math_name(dp_tensor_math m);

/* A device generation's parameter table: the efficiencies of every op class
 * on devices of that generation ("kepler", "pascal", "haswell", ...), and
 * what the cost model needs beside them (docs/simulator.md, "Op costs"). */
typedef struct dp_generation {
    const char *name;
    dp_devkind kind;
    const dp_efficiency *eff; /* [DP_EFF_COUNT] */
    double meta_fraction;     /* a meta op's cost, as a fraction of the launch overhead */
    /* The shape of products (matmul, conv) on a GPU; tile 0: no shape factor. */
    double tile;       /* a kernel's largest tile: tile x tile outputs       */
    double slots;      /* largest tiles that run at once (one wave): the SMs */
    double reuse_knee; /* a tile at this fraction of the largest's operand reuse
                          or more runs at the full rate                      */
    /* The tensor-core math of the generation: bit m for dp_tensor_math m
     * (0: none). A device's tensor peak for math the bit does not allow is
     * refused by dp_devices_add. */
    unsigned tensor_math;
} dp_generation;

/* A host's dispatch cost per op when its file does not give one: the
 * middle of the 5 to 25 us that public accounts of PyTorch's dispatch
 * stack give for the CPU-side work before a kernel runs (docs/devices.md,
 * "dispatch_s"); `dplace calibrate` fits a machine's own. */
#define DP_DEVICES_DISPATCH_S 15e-6

/* A host's cost to turn to a CPU op after issuing GPU work, when its file
 * does not give one: bench/fit_host_switch.py's fit to the placements of a
 * real GPU check that mix the host and a GPU, rounded (docs/devices.md,
 * "switch_s"); `dplace calibrate` fits a machine's own. */
#define DP_DEVICES_SWITCH_S 1.3e-3

/* What a device of no known generation is priced with: its kind's
 * efficiencies, DP_GENERATION_META_FRACTION, no shape factor. */
#define DP_GENERATION_META_FRACTION 0.25

/* The generation of that name, or NULL. */
const dp_generation *dp_devices_generation(const char *name);
/* Names of the known generations, NULL-terminated. */
const char *const *dp_devices_generation_names(void);
/* The generation a device model is of ("K40": "kepler"), or NULL when the
 * table does not know the model. */
const char *dp_devices_model_generation(const char *model);
/* The efficiencies of a device kind when neither the device nor its
 * generation gives them: [DP_EFF_COUNT]. */
const dp_efficiency *dp_devices_kind_efficiency(dp_devkind kind);

typedef struct dp_device {
    char name[DP_NAME_MAX];   /* unique in the set, e.g. "gpu:0"          */
    dp_devkind kind;
    char model[DP_NAME_MAX];  /* e.g. "K40"; matches graph "cost" keys     */
    double peak_flops;        /* FLOP/s, float32                           */
    double mem_bandwidth;     /* bytes/s of device memory                  */
    uint64_t memory_bytes;    /* capacity                                  */
    double launch_overhead_s; /* fixed cost added to each estimated op     */
    int32_t streams;          /* ops that may run at once                  */
    int32_t kind_index;       /* position among devices of its kind        */
    /* The cost model's parameters (dplace-devices v2). generation: "" or a
     * known generation of the device's kind; dp_devices_add sets it from
     * the model when the model names one ("K40": "kepler"). eff: what the
     * cost model uses for each slot; a value whose DP_EFF_OWN_BIT is set in
     * eff_own is the device's own (from its file or its caller), every other
     * one dp_devices_add fills in: the generation's, else the kind's. */
    char generation[DP_NAME_MAX];
    uint32_t eff_own;
    dp_efficiency eff[DP_EFF_COUNT];
    /* Dense tensor-core peaks, FLOP/s, by dp_tensor_math: the data sheet's
     * figures without sparsity; 0 where the device has none, and then a
     * product of that math is priced at peak_flops. Only math its
     * generation's tensor_math allows may be non-zero (dp_devices_add). */
    double tensor_flops[DP_TENSOR_MATH_COUNT];
    /* A CPU's seconds to issue one op when it is the host of an eager step
     * (DP_EXECUTOR_TORCH; docs/simulator.md, "Executors"): Python, the
     * framework's dispatcher and the kernel launch, per op. Read from the
     * first CPU of a set only. Files and presets that say nothing take
     * DP_DEVICES_DISPATCH_S. */
    double dispatch_s;
    /* A CPU's seconds lost, as the host of an eager step, each time it
     * turns to a CPU op after issuing GPU work (docs/simulator.md,
     * "Executors"): read from the first CPU of a set only; files and
     * presets that say nothing take DP_DEVICES_SWITCH_S. */
    double switch_s;
} dp_device;

/* How a transfer between two devices without a link of their own crosses
 * the host (docs/simulator.md):
 *   PIPELINED          one copy holding both links at once, the data at the
 *                      slower link's bandwidth: CUDA stages a copy between
 *                      GPUs without peer access through pinned host buffers
 *                      in chunks, pipelined (the default);
 *   STORE_AND_FORWARD  two copies: the whole tensor to the host, then on
 *                      (the MSR dnn-partitioning cost model, docs/import.md). */
typedef enum dp_staging {
    DP_STAGING_PIPELINED = 0,
    DP_STAGING_STORE_AND_FORWARD,
    DP_STAGING_COUNT
} dp_staging;

/* Name as files spell it ("pipelined", "store-and-forward"). */
const char *dp_staging_name(dp_staging s);

/* One direction of a link: carries one transfer at a time. */
typedef struct dp_link {
    int32_t from, to;
    double bandwidth;  /* bytes/s: the link's peak (vendor's figure)       */
    double latency_s;
    double efficiency; /* fraction of bandwidth a transfer reaches, (0, 1];
                          1 unless a v2 file or a caller sets it          */
} dp_link;

/* Bytes/s a transfer reaches on link l: bandwidth x efficiency. */
static inline double dp_devices_link_rate(const dp_link *l) { return l->bandwidth * l->efficiency; }

typedef struct dp_devices {
    char name[DP_NAME_MAX];
    int32_t n_devices;
    dp_device devices[DP_MAX_DEVICES];
    int32_t n_links;  /* directed links */
    dp_link *links;
    int32_t host;     /* first CPU: pairs without a link route through it; -1 none */
    dp_staging staging; /* how transfers through the host cross it        */
    int32_t kind_count[DP_DEVKIND_COUNT];
    /* route[(s * n + d) * 2 + k]: k-th link from s to d; route_len 0 for s == d */
    int32_t *route;
    int8_t *route_len;
} dp_devices;

/* Creates an empty set; add devices and links, then dp_devices_finalize. */
dp_devices *dp_devices_init(const char *name);
void dp_devices_free(dp_devices *ds);
/* Appends a device (copied); fills err on a bad field (names the device). */
dp_status dp_devices_add(dp_devices *ds, const dp_device *dev, dp_error *err);
/* Adds a link between two named devices: both directions when duplex, each
 * of efficiency 1 (set links[i].efficiency after; finalize checks it). */
dp_status dp_devices_add_link(dp_devices *ds, const char *from, const char *to, double bandwidth, double latency_s,
                              int duplex, dp_error *err);
/* Validates and computes routes: a listed link, else through the host CPU.
 * Fails when some pair of devices has no route, or a link's efficiency is
 * not in (0, 1]. `what` prefixes messages. */
dp_status dp_devices_finalize(dp_devices *ds, const char *what, dp_error *err);

/* Seconds to send `bytes` from device a to device b along the route when
 * no other transfer is in the way: every link's latency plus the bytes at
 * the slowest link's rate (pipelined) or at each link's in turn
 * (store-and-forward); 0 when a == b. ds must be finalized. */
double dp_devices_transfer_seconds(const dp_devices *ds, int32_t a, int32_t b, double bytes);

/* Index of a device by name, -1 when absent. */
int32_t dp_devices_find(const dp_devices *ds, const char *name);
/* Index of the i-th device of a kind, -1 when absent. */
int32_t dp_devices_nth(const dp_devices *ds, dp_devkind kind, int32_t i);

/* A finalized copy of a finalized set (free it with dp_devices_free); NULL
 * with err set when out of memory. */
dp_devices *dp_devices_copy(const dp_devices *ds, dp_error *err);
/* Whether two devices run every op equally fast: the same kind, model,
 * peaks, launch overhead and efficiencies. */
int dp_devices_same_cost(const dp_device *a, const dp_device *b);
/* A 64-bit hash of every parameter of ds that a simulated time depends on
 * (devices, their efficiencies, links, staging): checkpoints record it, so
 * that a run is not resumed under other device parameters. */
uint64_t dp_devices_hash(const dp_devices *ds);

/* Reads a dplace-devices file, version 1 or 2 (a v1 file has no generation
 * or efficiencies: its devices take their model's generation, else their
 * kind's, and its links efficiency 1). */
dp_devices *dp_devices_read_file(const char *path, dp_error *err);
dp_devices *dp_devices_read_string(const char *text, const char *what, dp_error *err);
/* Writes ds as dplace-devices v2, atomically: each device's generation and
 * its own efficiencies (those in eff_own; the rest follow the tables),
 * each link's efficiency when below 1. */
dp_status dp_devices_write_file(const dp_devices *ds, const char *path, dp_error *err);

/* Built-in presets (docs/devices.md): k40xN, p100xN, v100-nvlinkxN,
 * v100-pciexN, a100-sxmxN, a100-pciexN, h100-sxmxN, h100-pciexN, h200xN and
 * l4xN for N in 1..8, rtx4090xN for N in 1..4. An unknown name or N out of range is
 * DP_STATUS_INVALID, the message naming the families. */
dp_devices *dp_devices_preset(const char *name, dp_error *err);
/* Names of the presets `dplace devices` lists (the usual sizes of each
 * family), NULL-terminated. */
const char *const *dp_devices_preset_names(void);
/* A preset name or a path to a devices file. */
dp_devices *dp_devices_load(const char *spec, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
