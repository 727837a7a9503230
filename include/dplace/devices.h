/* dplace: device sets. A device set lists the CPUs and GPUs a graph may be
 * placed on and the links between them (format "dplace-devices" v1, see
 * docs/formats.md; presets in docs/devices.md). */
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
    double bandwidth; /* bytes/s */
    double latency_s;
} dp_link;

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
/* Adds a link between two named devices: both directions when duplex. */
dp_status dp_devices_add_link(dp_devices *ds, const char *from, const char *to, double bandwidth, double latency_s,
                              int duplex, dp_error *err);
/* Validates and computes routes: a listed link, else through the host CPU.
 * Fails when some pair of devices has no route. `what` prefixes messages. */
dp_status dp_devices_finalize(dp_devices *ds, const char *what, dp_error *err);

/* Seconds to send `bytes` from device a to device b along the route when
 * no other transfer is in the way: every link's latency plus the bytes at
 * the slowest link's bandwidth (pipelined) or at each link's in turn
 * (store-and-forward); 0 when a == b. ds must be finalized. */
double dp_devices_transfer_seconds(const dp_devices *ds, int32_t a, int32_t b, double bytes);

/* Index of a device by name, -1 when absent. */
int32_t dp_devices_find(const dp_devices *ds, const char *name);
/* Index of the i-th device of a kind, -1 when absent. */
int32_t dp_devices_nth(const dp_devices *ds, dp_devkind kind, int32_t i);

/* Reads a dplace-devices v1 file. */
dp_devices *dp_devices_read_file(const char *path, dp_error *err);
dp_devices *dp_devices_read_string(const char *text, const char *what, dp_error *err);
/* Writes ds as dplace-devices v1, atomically. */
dp_status dp_devices_write_file(const dp_devices *ds, const char *path, dp_error *err);

/* Built-in presets (docs/devices.md): k40xN, p100xN, v100-nvlinkxN,
 * v100-pciexN, a100-sxmxN, a100-pciexN, h100-sxmxN, h100-pciexN and l4xN for
 * N in 1..8, rtx4090xN for N in 1..4. An unknown name or N out of range is
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
