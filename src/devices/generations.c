/* The cost model's parameter tables that a device file need not carry: the
 * efficiencies of each device kind and of each device generation, and the
 * models whose generation is known. A device's own efficiencies (a v2
 * file's) override its generation's, which override its kind's. */
#include <string.h>

#include "dplace/devices.h"

static const char *const opclass_names[] = {"meta", "elementwise", "matmul", "conv", "reduction", "data", "optimizer"};
_Static_assert(sizeof(opclass_names) / sizeof(opclass_names[0]) == DP_OPCLASS_COUNT, "opclass_names");

const char *dp_opclass_name(dp_opclass c) { return (unsigned)c < DP_OPCLASS_COUNT ? opclass_names[c] : "?"; }

const char *dp_devices_eff_slot_name(int slot) {
    if (slot == DP_EFF_WINOGRAD) return "winograd";
    if (slot == DP_EFF_GROUPED) return "grouped";
    if (slot == DP_EFF_DEPTHWISE) return "depthwise";
    return dp_opclass_name((dp_opclass)slot);
}

int dp_devices_eff_follows(int slot) {
    if (slot == DP_EFF_GROUPED) return DP_OPCLASS_CONV;
    if (slot == DP_EFF_DEPTHWISE) return DP_EFF_GROUPED;
    return -1;
}

/* Fraction of peak FLOP/s and of peak memory bandwidth that ops of a class
 * reach on each device kind ([kind][slot]; kind: cpu, gpu). First estimates
 * from published cuDNN/cuBLAS and MKL efficiency figures on these device
 * generations; the calibration against the papers' tables (docs/calibration.md)
 * is where they are tuned.
 *
 * DP_EFF_WINOGRAD is the convolutions cuDNN runs with Winograd's algorithm
 * (dp_cost_conv_winograd): the efficiency counted against the direct
 * algorithm's FLOPs, so above 1 on a GPU: F(4x4,3x3) needs 4 times fewer
 * multiplications, and cuDNN's Winograd kernels reach about 40% of peak on
 * those (fitted, docs/calibration.md "Throughput"). The CPU's is the plain
 * convolution's. The slots that follow another (DP_EFF_GROUPED the conv
 * row, DP_EFF_DEPTHWISE grouped's) repeat that row: a device's follower
 * slot takes its leader's as resolved (devices.c, resolve_efficiencies),
 * and these rows say the same to the tables' readers. */
static const dp_efficiency kind_table[DP_DEVKIND_COUNT][DP_EFF_COUNT] = {
    [DP_DEVKIND_CPU] =
        {
            [DP_OPCLASS_META] = {1.0, 1.0},
            [DP_OPCLASS_ELEMENTWISE] = {0.30, 0.70},
            [DP_OPCLASS_MATMUL] = {0.26, 0.50},
            [DP_OPCLASS_CONV] = {0.07, 0.50},
            [DP_OPCLASS_REDUCTION] = {0.20, 0.50},
            [DP_OPCLASS_DATA] = {0.30, 0.40},
            [DP_OPCLASS_OPTIMIZER] = {0.30, 0.50},
            [DP_EFF_WINOGRAD] = {0.07, 0.50},
            [DP_EFF_GROUPED] = {0.07, 0.50},
            [DP_EFF_DEPTHWISE] = {0.07, 0.50},
        },
    [DP_DEVKIND_GPU] =
        {
            [DP_OPCLASS_META] = {1.0, 1.0},
            [DP_OPCLASS_ELEMENTWISE] = {0.30, 0.70},
            [DP_OPCLASS_MATMUL] = {0.18, 0.40},
            [DP_OPCLASS_CONV] = {0.50, 0.70},
            [DP_OPCLASS_REDUCTION] = {0.20, 0.70},
            [DP_OPCLASS_DATA] = {0.30, 0.35},
            [DP_OPCLASS_OPTIMIZER] = {0.50, 0.70},
            [DP_EFF_WINOGRAD] = {1.70, 0.70},
            [DP_EFF_GROUPED] = {0.50, 0.70},
            [DP_EFF_DEPTHWISE] = {0.50, 0.70},
        },
};
_Static_assert(sizeof(kind_table) / sizeof(kind_table[0]) == DP_DEVKIND_COUNT, "kind_table");
_Static_assert(sizeof(kind_table[0]) / sizeof(kind_table[0][0]) == DP_EFF_COUNT, "kind_table slots");

const dp_efficiency *dp_devices_kind_efficiency(dp_devkind kind) {
    return kind_table[(unsigned)kind < DP_DEVKIND_COUNT ? kind : DP_DEVKIND_CPU];
}

/* Kepler's and Pascal's efficiencies: the GPU kind's with the products'
 * peak efficiencies (before the cost model's shape factor) in place of the
 * kind's shape-blind averages, and on Kepler the memory-bound classes'
 * bandwidth efficiency. docs/calibration.md lists what each value was
 * fitted to. */
static const dp_efficiency kepler_table[DP_EFF_COUNT] = {
    [DP_OPCLASS_META] = {1.0, 1.0},          [DP_OPCLASS_ELEMENTWISE] = {0.30, 0.90},
    [DP_OPCLASS_MATMUL] = {0.225, 0.40},     [DP_OPCLASS_CONV] = {0.70, 0.70},
    [DP_OPCLASS_REDUCTION] = {0.20, 0.90},   [DP_OPCLASS_DATA] = {0.30, 0.35},
    [DP_OPCLASS_OPTIMIZER] = {0.50, 0.70},   [DP_EFF_WINOGRAD] = {1.70, 0.70},
    [DP_EFF_GROUPED] = {0.70, 0.70},         [DP_EFF_DEPTHWISE] = {0.70, 0.70},
};
static const dp_efficiency pascal_table[DP_EFF_COUNT] = {
    [DP_OPCLASS_META] = {1.0, 1.0},          [DP_OPCLASS_ELEMENTWISE] = {0.30, 0.70},
    [DP_OPCLASS_MATMUL] = {0.18, 0.40},      [DP_OPCLASS_CONV] = {0.80, 0.70},
    [DP_OPCLASS_REDUCTION] = {0.20, 0.70},   [DP_OPCLASS_DATA] = {0.30, 0.35},
    [DP_OPCLASS_OPTIMIZER] = {0.50, 0.70},   [DP_EFF_WINOGRAD] = {2.40, 0.70},
    [DP_EFF_GROUPED] = {0.80, 0.70},         [DP_EFF_DEPTHWISE] = {0.80, 0.70},
};

static const char *const tensor_math_names[] = {"tf32", "float16", "bfloat16"};
_Static_assert(sizeof(tensor_math_names) / sizeof(tensor_math_names[0]) == DP_TENSOR_MATH_COUNT,
               "tensor_math_names");

const char *dp_tensor_math_name(dp_tensor_math m) {
    return (unsigned)m < DP_TENSOR_MATH_COUNT ? tensor_math_names[m] : "?";
}

#define TC_TF32 (1u << DP_TENSOR_MATH_TF32)
#define TC_FLOAT16 (1u << DP_TENSOR_MATH_FLOAT16)
#define TC_BFLOAT16 (1u << DP_TENSOR_MATH_BFLOAT16)

/* The generations of the presets' devices. The CPUs have their kind's
 * table. The GPUs price a product by its shape: tiles of up to 128 x 128
 * outputs (the largest tile of cuBLAS's and cuDNN's kernels) in waves of
 * the SM count (a K40's 15 SMX, a P100's 56 SMs); the reuse knee and the
 * efficiencies are fitted (docs/calibration.md).
 *
 * Volta, Ampere, Hopper and Ada are not fitted: they carry the GPU kind's
 * efficiencies, its meta fraction and no shape factor, so that their
 * devices are priced as before they had a generation, and name the math
 * their tensor cores run (the architecture white papers: NVIDIA Tesla V100
 * GPU Architecture, WP-08608-001, FP16 only; NVIDIA A100 Tensor Core GPU
 * Architecture, TF32, FP16, BF16; NVIDIA H100 Tensor Core GPU Architecture,
 * the same and FP8; NVIDIA Ada GPU Architecture, the same; docs/devices.md).
 * Pascal's P100 runs float16 at twice its float32 rate without tensor
 * cores: not modelled, its float16 products take the FP32 peak. */
static const dp_generation generations[] = {
    {"haswell", DP_DEVKIND_CPU, kind_table[DP_DEVKIND_CPU], DP_GENERATION_META_FRACTION, 0, 0, 0, 0},
    {"broadwell", DP_DEVKIND_CPU, kind_table[DP_DEVKIND_CPU], DP_GENERATION_META_FRACTION, 0, 0, 0, 0},
    {"kepler", DP_DEVKIND_GPU, kepler_table, 0.40, 128, 15, 0.80, 0},
    {"pascal", DP_DEVKIND_GPU, pascal_table, DP_GENERATION_META_FRACTION, 128, 56, 0.80, 0},
    {"volta", DP_DEVKIND_GPU, kind_table[DP_DEVKIND_GPU], DP_GENERATION_META_FRACTION, 0, 0, 0, TC_FLOAT16},
    {"ampere", DP_DEVKIND_GPU, kind_table[DP_DEVKIND_GPU], DP_GENERATION_META_FRACTION, 0, 0, 0,
     TC_TF32 | TC_FLOAT16 | TC_BFLOAT16},
    {"hopper", DP_DEVKIND_GPU, kind_table[DP_DEVKIND_GPU], DP_GENERATION_META_FRACTION, 0, 0, 0,
     TC_TF32 | TC_FLOAT16 | TC_BFLOAT16},
    {"ada", DP_DEVKIND_GPU, kind_table[DP_DEVKIND_GPU], DP_GENERATION_META_FRACTION, 0, 0, 0,
     TC_TF32 | TC_FLOAT16 | TC_BFLOAT16},
};
#define N_GENERATIONS (sizeof generations / sizeof generations[0])

static const char *const generation_names[] = {"haswell", "broadwell", "kepler", "pascal", "volta",
                                               "ampere",  "hopper",    "ada",    NULL};
_Static_assert(sizeof(generation_names) / sizeof(generation_names[0]) == N_GENERATIONS + 1, "generation_names");

const char *const *dp_devices_generation_names(void) { return generation_names; }

const dp_generation *dp_devices_generation(const char *name) {
    for (size_t i = 0; i < N_GENERATIONS; i++)
        if (!strcmp(generations[i].name, name)) return &generations[i];
    return NULL;
}

/* The models (dp_device.model) whose generation is known: the presets'
 * and the bench's device files'. */
static const struct {
    const char *model, *generation;
} model_generations[] = {
    {"Haswell-E5-2698v3", "haswell"},
    {"Broadwell-E5-2650v4", "broadwell"},
    {"K40", "kepler"},
    {"K80", "kepler"},
    {"P100", "pascal"},
    {"P100-SXM2", "pascal"},
    {"V100-SXM2", "volta"},
    {"V100-PCIe", "volta"},
    {"A100-SXM4", "ampere"},
    {"A100-PCIe", "ampere"},
    {"H100-SXM5", "hopper"},
    {"H100-PCIe", "hopper"},
    {"H200-SXM", "hopper"},
    {"L4", "ada"},
    {"RTX4090", "ada"},
};

const char *dp_devices_model_generation(const char *model) {
    for (size_t i = 0; i < sizeof model_generations / sizeof model_generations[0]; i++)
        if (!strcmp(model_generations[i].model, model)) return model_generations[i].generation;
    return NULL;
}
