/* Built-in device sets from vendors' published specifications. Every number
 * is cited in docs/devices.md; change both together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/devices.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024.0 * 1024.0)

/* PCIe 3.0 x16: 8 GT/s x 16 lanes x 128b/130b / 8 bits = 15.75 GB/s per direction. */
static const double pcie3_x16_bw = 8e9 * 16 * 128.0 / 130.0 / 8.0;
static const double pcie_latency_s = 40e-6;

typedef struct preset_spec {
    const char *prefix;     /* "k40" */
    dp_device cpu;
    dp_device gpu;
} preset_spec;

static const preset_spec presets[] = {
    {
        "k40",
        /* Intel Xeon E5-2698 v3 (Haswell, 16 cores, 2.3 GHz): 16 x 2.3e9 x 32 FLOP/cycle
         * (two 256-bit FMA units, float32); 4 channels DDR4-2133 = 68.3 GB/s. */
        {"cpu:0", DP_DEVKIND_CPU, "Haswell-E5-2698v3", 16 * 2.3e9 * 32, 4 * 2133e6 * 8, (uint64_t)(128 * GIB), 5e-6,
         1, 0},
        /* NVIDIA Tesla K40: 4.29 TFLOP/s float32 (745 MHz base), 288 GB/s GDDR5,
         * 12 GB of which 11,441 MiB are usable with ECC on. */
        {"gpu:0", DP_DEVKIND_GPU, "K40", 4.29e12, 288e9, (uint64_t)(11441 * MIB), 7.5e-6, 1, 0},
    },
    {
        "p100",
        /* Two Intel Xeon E5-2650 v4 (Broadwell, 12 cores each, 2.2 GHz), seen by
         * TensorFlow as one CPU device: 2 x 12 x 2.2e9 x 32 FLOP/cycle; 2 x 4 channels
         * DDR4-2400 = 153.6 GB/s; 125 GB of memory as the Mars paper states. */
        {"cpu:0", DP_DEVKIND_CPU, "Broadwell-E5-2650v4", 2 * 12 * 2.2e9 * 32, 2 * 4 * 2400e6 * 8, (uint64_t)(125e9),
         5e-6, 1, 0},
        /* NVIDIA Tesla P100 PCIe 12 GB: 9.3 TFLOP/s float32, 549 GB/s HBM2,
         * 12,193 MiB usable. */
        {"gpu:0", DP_DEVKIND_GPU, "P100", 9.3e12, 549e9, (uint64_t)(12193 * MIB), 3.5e-6, 1, 0},
    },
};

static const char *const preset_names[] = {"k40x1", "k40x2", "k40x4", "k40x8", "p100x1", "p100x2", "p100x4", "p100x8",
                                           NULL};

const char *const *dp_devices_preset_names(void) { return preset_names; }

dp_devices *dp_devices_preset(const char *name, dp_error *err) {
    for (size_t p = 0; p < sizeof presets / sizeof presets[0]; p++) {
        const preset_spec *ps = &presets[p];
        size_t len = strlen(ps->prefix);
        if (strncmp(name, ps->prefix, len) != 0 || name[len] != 'x') continue;
        char *end = NULL;
        long n = strtol(name + len + 1, &end, 10);
        if (!end || *end || n < 1 || n > 8) break;
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
            if (!st) st = dp_devices_add_link(ds, "cpu:0", g.name, pcie3_x16_bw, pcie_latency_s, 1, err);
        }
        if (!st) st = dp_devices_finalize(ds, name, err);
        if (st) {
            dp_devices_free(ds);
            return NULL;
        }
        return ds;
    }
    dp_error_set(err, DP_STATUS_INVALID,
                 "unknown device set \"%s\": not a file, nor a preset (k40xN or p100xN, N = 1..8; "
                 "e.g. k40x2, k40x4, k40x8, p100x4)",
                 name);
    return NULL;
}
