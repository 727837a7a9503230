/* Built-in device sets from vendors' published specifications. Every number
 * is cited in docs/devices.md; change both together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/devices.h"

/* A preset's devices list the vendor's figures in order and leave the cost
 * model's fields (generation, own efficiencies) to dp_devices_add, which
 * takes them from the device's model. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024.0 * 1024.0)

/* PCIe x16 per direction: GT/s x 16 lanes x 128b/130b / 8 bits (3.0: 15.75 GB/s,
 * 4.0: 31.5 GB/s, 5.0: 63.0 GB/s). */
#define PCIE_X16(gts) ((gts) * 16 * 128.0 / 130.0 / 8.0)
/* One NVLink 2.0, 3.0 or 4.0 link: 25 GB/s per direction. */
#define NVLINK_LINK_BW 25e9
/* Every link's latency: TensorFlow's Send/Recv rendezvous and copy set-up,
 * which is software and so the same over NVLink as over PCIe. */
static const double link_latency_s = 40e-6;

/* How the GPUs of a preset reach each other besides through the host. */
typedef enum gpu_fabric {
    FABRIC_HOST = 0, /* no GPU-GPU link: copies are staged through the host   */
    FABRIC_DGX1,     /* DGX-1's NVLink hybrid cube mesh (dgx1_nvlinks)          */
    FABRIC_SWITCH,   /* NVSwitch: a link per pair at one GPU's NVLink bandwidth */
} gpu_fabric;

typedef struct preset_spec {
    const char *prefix;  /* "k40": the names are prefix + "x" + N */
    int max_gpus;        /* N = 1..max_gpus                          */
    dp_device cpu;
    dp_device gpu;
    double host_bw;      /* each GPU's link to the CPU, per direction */
    gpu_fabric fabric;
    double fabric_bw;    /* per direction: one NVLink (DGX1), one GPU's NVLink total (SWITCH) */
} preset_spec;

/* NVLinks between GPUs i and j of a DGX-1 with V100 (the hybrid cube mesh:
 * six links per GPU; 0 where a pair has none). */
static const unsigned char dgx1_nvlinks[8][8] = {
    {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
    {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1}, {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0},
};

/* Host CPUs, each seen as one CPU device however many sockets it has (as
 * TensorFlow shows them): peak = sockets x cores x base GHz x float32
 * FLOP/cycle; bandwidth = sockets x channels x MT/s x 8 bytes. */
#define CPU(mdl, flops, bw, mem)                                                                               \
    {.name = "cpu:0", .kind = DP_DEVKIND_CPU, .model = mdl, .peak_flops = flops, .mem_bandwidth = bw,        \
     .memory_bytes = (uint64_t)(mem), .launch_overhead_s = 5e-6, .streams = 1,                      \
     .dispatch_s = DP_DEVICES_DISPATCH_S, .switch_s = DP_DEVICES_SWITCH_S}
/* GPUs: the data sheet's float32 peak (no tensor cores) and memory bandwidth,
 * the capacity (bytes: the MiB the CUDA runtime reports), and a launch
 * overhead: the newer GPUs take the P100's calibrated one, not being
 * calibrated alone. TC: the dense tensor-core peaks (TF32, FP16 and BF16
 * with FP32 accumulation; the data sheets' "with sparsity" figures halved),
 * NO_TC for a GPU without tensor cores. */
#define GPU(mdl, flops, bw, bytes, launch, tc)                                                                 \
    {.name = "gpu:0", .kind = DP_DEVKIND_GPU, .model = mdl, .peak_flops = flops, .mem_bandwidth = bw,        \
     .memory_bytes = (uint64_t)(bytes), .launch_overhead_s = launch, .dispatch_s = DP_DEVICES_DISPATCH_S,      \
     .switch_s = DP_DEVICES_SWITCH_S, .streams = 1, .tensor_flops = tc}
#define TC(tf32, fp16, bf16) {tf32, fp16, bf16}
#define NO_TC {0, 0, 0}

static const preset_spec presets[] = {
    /* Intel Xeon E5-2698 v3 (Haswell, 16 cores, 2.3 GHz, two 256-bit FMA units);
     * 4 channels DDR4-2133. NVIDIA Tesla K40: 4.29 TFLOP/s at the 745 MHz base
     * clock, 288 GB/s GDDR5, 11,441 MiB usable with ECC on. */
    {"k40", 8, CPU("Haswell-E5-2698v3", 16 * 2.3e9 * 32, 4 * 2133e6 * 8, 128 * GIB),
     GPU("K40", 4.29e12, 288e9, 11441 * MIB, 7.5e-6, NO_TC), PCIE_X16(8e9), FABRIC_HOST, 0},
    /* Two Intel Xeon E5-2650 v4 (Broadwell, 12 cores each, 2.2 GHz); 4 channels
     * DDR4-2400 per socket; 125 GB as the Mars paper states. NVIDIA Tesla P100
     * PCIe 12 GB: 9.3 TFLOP/s, 549 GB/s HBM2, 12,193 MiB usable. */
    {"p100", 8, CPU("Broadwell-E5-2650v4", 2 * 12 * 2.2e9 * 32, 2 * 4 * 2400e6 * 8, 125e9),
     GPU("P100", 9.3e12, 549e9, 12193 * MIB, 3.5e-6, NO_TC), PCIE_X16(8e9), FABRIC_HOST, 0},
    /* DGX-1 with V100: two Xeon E5-2698 v4 (Broadwell, 20 cores, 2.2 GHz), 4
     * channels each of the DGX-1's DDR4-2133, 512 GB; V100 SXM2 16 GB: 15.7 TFLOP/s, 900 GB/s
     * HBM2; PCIe 3.0 x16 to the host, six NVLink 2.0 links in the mesh. */
    {"v100-nvlink", 8, CPU("Broadwell-E5-2698v4", 2 * 20 * 2.2e9 * 32, 2 * 4 * 2133e6 * 8, 512 * GIB),
     GPU("V100-SXM2", 15.7e12, 900e9, 16160 * MIB, 3.5e-6, TC(0, 125e12, 0)),
     PCIE_X16(8e9), FABRIC_DGX1, NVLINK_LINK_BW},
    /* The DGX-1's CPUs with V100 PCIe 16 GB cards: 14 TFLOP/s, 900 GB/s. */
    {"v100-pcie", 8, CPU("Broadwell-E5-2698v4", 2 * 20 * 2.2e9 * 32, 2 * 4 * 2133e6 * 8, 512 * GIB),
     GPU("V100-PCIe", 14e12, 900e9, 16160 * MIB, 3.5e-6, TC(0, 112e12, 0)), PCIE_X16(8e9), FABRIC_HOST, 0},
    /* DGX A100: two AMD EPYC 7742 (Zen 2, 64 cores, 2.25 GHz, two 256-bit FMA
     * units), 8 channels DDR4-3200 each, 1 TB; A100 SXM4 40 GB: 19.5 TFLOP/s,
     * 1,555 GB/s; PCIe 4.0 x16; twelve NVLink 3.0 links into the NVSwitches. */
    {"a100-sxm", 8, CPU("Zen2-EPYC-7742", 2 * 64 * 2.25e9 * 32, 2 * 8 * 3200e6 * 8, 1024 * GIB),
     GPU("A100-SXM4", 19.5e12, 1555e9, 40536 * MIB, 3.5e-6, TC(156e12, 312e12, 312e12)),
     PCIE_X16(16e9), FABRIC_SWITCH, 12 * NVLINK_LINK_BW},
    /* The DGX A100's CPUs with A100 PCIe 40 GB cards: 19.5 TFLOP/s, 1,555 GB/s. */
    {"a100-pcie", 8, CPU("Zen2-EPYC-7742", 2 * 64 * 2.25e9 * 32, 2 * 8 * 3200e6 * 8, 1024 * GIB),
     GPU("A100-PCIe", 19.5e12, 1555e9, 40326 * MIB, 3.5e-6, TC(156e12, 312e12, 312e12)),
     PCIE_X16(16e9), FABRIC_HOST, 0},
    /* DGX H100: two Xeon Platinum 8480C (Sapphire Rapids, 56 cores, 2.0 GHz, two
     * 512-bit FMA units), 8 channels DDR5-4800 each, 2 TB; H100 SXM5 80 GB:
     * 67 TFLOP/s, 3.35 TB/s; PCIe 5.0 x16; eighteen NVLink 4.0 links. */
    {"h100-sxm", 8, CPU("SapphireRapids-8480C", 2 * 56 * 2.0e9 * 64, 2 * 8 * 4800e6 * 8, 2048 * GIB),
     GPU("H100-SXM5", 67e12, 3.35e12, 81082 * MIB, 3.5e-6, TC(494.7e12, 989.4e12, 989.4e12)),
     PCIE_X16(32e9), FABRIC_SWITCH, 18 * NVLINK_LINK_BW},
    /* DGX H200: the DGX H100's CPUs, 2 TB; H200 SXM 141 GB: the H100 SXM5's
     * compute (67 TFLOP/s FP32, the same tensor peaks), 4.8 TB/s HBM3e, 141 GB
     * (the data sheet's figure, in bytes); PCIe 5.0 x16; eighteen NVLink 4.0
     * links (900 GB/s in both directions). */
    {"h200", 8, CPU("SapphireRapids-8480C", 2 * 56 * 2.0e9 * 64, 2 * 8 * 4800e6 * 8, 2048 * GIB),
     GPU("H200-SXM", 67e12, 4.8e12, 141e9, 3.5e-6, TC(494.7e12, 989.4e12, 989.4e12)), PCIE_X16(32e9), FABRIC_SWITCH,
     18 * NVLINK_LINK_BW},
    /* The DGX H100's CPUs with H100 PCIe 80 GB cards: 51 TFLOP/s, 2 TB/s. */
    {"h100-pcie", 8, CPU("SapphireRapids-8480C", 2 * 56 * 2.0e9 * 64, 2 * 8 * 4800e6 * 8, 2048 * GIB),
     GPU("H100-PCIe", 51e12, 2.0e12, 81008 * MIB, 3.5e-6, TC(378e12, 756e12, 756e12)), PCIE_X16(32e9), FABRIC_HOST, 0},
    /* Two AMD EPYC 7763 (Zen 3, 64 cores, 2.45 GHz), 8 channels DDR4-3200 each,
     * 512 GiB; NVIDIA L4: 30.3 TFLOP/s, 300 GB/s GDDR6, 23,034 MiB with ECC on;
     * PCIe 4.0 x16. */
    {"l4", 8, CPU("Zen3-EPYC-7763", 2 * 64 * 2.45e9 * 32, 2 * 8 * 3200e6 * 8, 512 * GIB),
     GPU("L4", 30.3e12, 300e9, 23034 * MIB, 3.5e-6, TC(60e12, 121e12, 121e12)), PCIE_X16(16e9), FABRIC_HOST, 0},
    /* A workstation: AMD Ryzen Threadripper PRO 5975WX (Zen 3, 32 cores, 3.6 GHz),
     * 8 channels DDR4-3200, 256 GiB, 128 PCIe 4.0 lanes (four x16 slots);
     * GeForce RTX 4090: 82.6 TFLOP/s, 1,008 GB/s GDDR6X; no NVLink, no peer
     * access between GeForce cards. */
    {"rtx4090", 4, CPU("Zen3-TR-PRO-5975WX", 32 * 3.6e9 * 32, 8 * 3200e6 * 8, 256 * GIB),
     GPU("RTX4090", 82.6e12, 1008e9, 24563 * MIB, 3.5e-6, TC(82.6e12, 165.2e12, 165.2e12)),
     PCIE_X16(16e9), FABRIC_HOST, 0},
};

static const char *const preset_names[] = {
    "k40x1",         "k40x2",         "k40x4",      "k40x8",      "p100x1",      "p100x2",      "p100x4",
    "p100x8",        "v100-nvlinkx4", "v100-nvlinkx8", "v100-pciex4", "v100-pciex8", "a100-sxmx4", "a100-sxmx8",
    "a100-pciex4",   "a100-pciex8",   "h100-sxmx4", "h100-sxmx8", "h100-pciex4", "h100-pciex8", "h200x4",
    "h200x8",        "l4x4",          "l4x8",       "rtx4090x2",  "rtx4090x4",   NULL};

const char *const *dp_devices_preset_names(void) { return preset_names; }

/* The GPU-GPU links of a fabric among GPUs 0..n-1, both directions. */
static dp_status add_fabric(dp_devices *ds, const preset_spec *ps, long n, dp_error *err) {
    dp_status st = DP_STATUS_OK;
    for (long i = 0; i < n && !st; i++) {
        for (long j = i + 1; j < n && !st; j++) {
            double bw = 0;
            if (ps->fabric == FABRIC_DGX1) bw = dgx1_nvlinks[i][j] * ps->fabric_bw;
            else if (ps->fabric == FABRIC_SWITCH) bw = ps->fabric_bw;
            if (bw <= 0) continue;
            char a[32], b[32];
            snprintf(a, sizeof a, "gpu:%ld", i);
            snprintf(b, sizeof b, "gpu:%ld", j);
            st = dp_devices_add_link(ds, a, b, bw, link_latency_s, 1, err);
        }
    }
    return st;
}

static dp_devices *build(const preset_spec *ps, const char *name, long n, dp_error *err) {
    dp_devices *ds = dp_devices_init(name);
    if (!ds) {
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        return NULL;
    }
    dp_status st = dp_devices_add(ds, &ps->cpu, err);
    for (long i = 0; i < n && !st; i++) {
        dp_device g = ps->gpu;
        snprintf(g.name, sizeof g.name, "gpu:%ld", i);
        st = dp_devices_add(ds, &g, err);
        if (!st) st = dp_devices_add_link(ds, "cpu:0", g.name, ps->host_bw, link_latency_s, 1, err);
    }
    if (!st) st = add_fabric(ds, ps, n, err);
    if (!st) st = dp_devices_finalize(ds, name, err);
    if (st) {
        dp_devices_free(ds);
        return NULL;
    }
    return ds;
}

dp_devices *dp_devices_preset(const char *name, dp_error *err) {
    for (size_t p = 0; p < sizeof presets / sizeof presets[0]; p++) {
        const preset_spec *ps = &presets[p];
        size_t len = strlen(ps->prefix);
        if (strncmp(name, ps->prefix, len) != 0 || name[len] != 'x') continue;
        char *end = NULL;
        long n = strtol(name + len + 1, &end, 10);
        if (!end || *end || n < 1 || n > ps->max_gpus) break;
        return build(ps, name, n, err);
    }
    dp_error_set(err, DP_STATUS_INVALID,
                 "unknown device set \"%s\": not a file, nor a preset (k40xN, p100xN, v100-nvlinkxN, v100-pciexN, "
                 "a100-sxmxN, a100-pciexN, h100-sxmxN, h100-pciexN, h200xN, l4xN with N = 1..8; rtx4090xN with "
                 "N = 1..4; e.g. k40x2, p100x4, v100-nvlinkx8, a100-sxmx8)",
                 name);
    return NULL;
}
