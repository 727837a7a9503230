/* Device sets: construction, validation, routing, dplace-devices v1 I/O. */
#include "dplace/devices.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json_util.h"
#include "common/util.h"

static const char *const devkind_names[] = {"cpu", "gpu"};
_Static_assert(sizeof(devkind_names) / sizeof(devkind_names[0]) == DP_DEVKIND_COUNT, "devkind_names");

const char *dp_devkind_name(dp_devkind kind) { return (unsigned)kind < DP_DEVKIND_COUNT ? devkind_names[kind] : "?"; }

static const char *const staging_names[] = {"pipelined", "store-and-forward"};
_Static_assert(sizeof(staging_names) / sizeof(staging_names[0]) == DP_STAGING_COUNT, "staging_names");

const char *dp_staging_name(dp_staging s) { return (unsigned)s < DP_STAGING_COUNT ? staging_names[s] : "?"; }

double dp_devices_transfer_seconds(const dp_devices *ds, int32_t a, int32_t b, double bytes) {
    int64_t pair = (int64_t)a * ds->n_devices + b;
    double lat = 0, per_byte = 0, slowest = 0;
    for (int k = 0; k < ds->route_len[pair]; k++) {
        const dp_link *l = &ds->links[ds->route[pair * 2 + k]];
        lat += l->latency_s;
        per_byte += 1.0 / l->bandwidth;
        if (1.0 / l->bandwidth > slowest) slowest = 1.0 / l->bandwidth;
    }
    return lat + bytes * (ds->staging == DP_STAGING_PIPELINED ? slowest : per_byte);
}

dp_devices *dp_devices_init(const char *name) {
    dp_devices *ds = calloc(1, sizeof *ds);
    if (!ds) return NULL;
    snprintf(ds->name, sizeof ds->name, "%s", name ? name : "");
    ds->host = -1;
    return ds;
}

void dp_devices_free(dp_devices *ds) {
    if (!ds) return;
    free(ds->links);
    free(ds->route);
    free(ds->route_len);
    free(ds);
}

int32_t dp_devices_find(const dp_devices *ds, const char *name) {
    for (int32_t i = 0; i < ds->n_devices; i++)
        if (strcmp(ds->devices[i].name, name) == 0) return i;
    return -1;
}

int32_t dp_devices_nth(const dp_devices *ds, dp_devkind kind, int32_t n) {
    for (int32_t i = 0; i < ds->n_devices; i++)
        if (ds->devices[i].kind == kind && ds->devices[i].kind_index == n) return i;
    return -1;
}

static int bad_rate(double x) { return !(x >= DP_DEVICES_MIN_RATE && x <= DP_DEVICES_MAX_RATE); }

dp_status dp_devices_add(dp_devices *ds, const dp_device *dev, dp_error *err) {
    const char *nm = dev->name;
    if (!nm[0]) return dp_error_set(err, DP_STATUS_INVALID, "device %d: empty name", ds->n_devices);
    if (ds->n_devices >= DP_MAX_DEVICES)
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": too many devices (at most %d)", nm, DP_MAX_DEVICES);
    for (const char *s = nm; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": name holds a control character", nm);
    if (dp_devices_find(ds, nm) >= 0)
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": duplicate name", nm);
    if ((unsigned)dev->kind >= DP_DEVKIND_COUNT)
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": unknown kind", nm);
    if (bad_rate(dev->peak_flops))
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": peak_flops must be in 1..1e20 (got %g)", nm,
                            dev->peak_flops);
    if (bad_rate(dev->mem_bandwidth))
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": memory_bandwidth must be in 1..1e20 (got %g)", nm,
                            dev->mem_bandwidth);
    if (dev->memory_bytes == 0 || dev->memory_bytes > (1ULL << 56))
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": memory_bytes must be in 1..2^56", nm);
    if (!isfinite(dev->launch_overhead_s) || dev->launch_overhead_s < 0 || dev->launch_overhead_s > 1)
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": launch_overhead_s must be in 0..1 seconds", nm);
    if (dev->streams < 1 || dev->streams > DP_MAX_STREAMS)
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": streams must be in 1..%d", nm, DP_MAX_STREAMS);
    dp_device *d = &ds->devices[ds->n_devices++];
    *d = *dev;
    if (!d->model[0]) snprintf(d->model, sizeof d->model, "%s", dp_devkind_name(d->kind));
    d->kind_index = ds->kind_count[d->kind]++;
    return DP_STATUS_OK;
}

static dp_status add_directed(dp_devices *ds, int32_t a, int32_t b, double bw, double lat, dp_error *err) {
    for (int32_t i = 0; i < ds->n_links; i++)
        if (ds->links[i].from == a && ds->links[i].to == b)
            return dp_error_set(err, DP_STATUS_INVALID, "link %s -> %s: listed twice", ds->devices[a].name,
                                ds->devices[b].name);
    int64_t cap = ds->n_links;
    dp_link *nl = realloc(ds->links, ((size_t)cap + 1) * sizeof(dp_link));
    if (!nl) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
    ds->links = nl;
    ds->links[ds->n_links++] = (dp_link){a, b, bw, lat};
    return DP_STATUS_OK;
}

dp_status dp_devices_add_link(dp_devices *ds, const char *from, const char *to, double bandwidth, double latency_s,
                              int duplex, dp_error *err) {
    int32_t a = dp_devices_find(ds, from), b = dp_devices_find(ds, to);
    if (a < 0) return dp_error_set(err, DP_STATUS_INVALID, "link %s -> %s: unknown device \"%s\"", from, to, from);
    if (b < 0) return dp_error_set(err, DP_STATUS_INVALID, "link %s -> %s: unknown device \"%s\"", from, to, to);
    if (a == b) return dp_error_set(err, DP_STATUS_INVALID, "link %s -> %s: a link joins two different devices", from, to);
    if (bad_rate(bandwidth))
        return dp_error_set(err, DP_STATUS_INVALID, "link %s -> %s: bandwidth must be in 1..1e20 (got %g)", from, to,
                            bandwidth);
    if (!isfinite(latency_s) || latency_s < 0 || latency_s > 10)
        return dp_error_set(err, DP_STATUS_INVALID, "link %s -> %s: latency_s must be in 0..10 seconds", from, to);
    dp_status st = add_directed(ds, a, b, bandwidth, latency_s, err);
    if (!st && duplex) st = add_directed(ds, b, a, bandwidth, latency_s, err);
    return st;
}

static int32_t find_link(const dp_devices *ds, int32_t a, int32_t b) {
    for (int32_t i = 0; i < ds->n_links; i++)
        if (ds->links[i].from == a && ds->links[i].to == b) return i;
    return -1;
}

dp_status dp_devices_finalize(dp_devices *ds, const char *what, dp_error *err) {
    int32_t n = ds->n_devices;
    if (n == 0) return dp_error_set(err, DP_STATUS_INVALID, "%s: the device set has no devices", what);
    ds->host = dp_devices_nth(ds, DP_DEVKIND_CPU, 0);
    free(ds->route);
    free(ds->route_len);
    ds->route = malloc((size_t)n * n * 2 * sizeof(int32_t));
    ds->route_len = calloc((size_t)n * n, 1);
    if (!ds->route || !ds->route_len) return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", what);
    for (int32_t s = 0; s < n; s++) {
        for (int32_t d = 0; d < n; d++) {
            int32_t *r = &ds->route[((size_t)s * n + d) * 2];
            r[0] = r[1] = -1;
            if (s == d) continue;
            int32_t l = find_link(ds, s, d);
            if (l >= 0) {
                r[0] = l;
                ds->route_len[s * n + d] = 1;
                continue;
            }
            int32_t h = ds->host;
            int32_t l1 = (h >= 0 && h != s && h != d) ? find_link(ds, s, h) : -1;
            int32_t l2 = (h >= 0 && h != s && h != d) ? find_link(ds, h, d) : -1;
            if (l1 < 0 || l2 < 0) {
                if (h < 0)
                    return dp_error_set(err, DP_STATUS_INVALID,
                                        "%s: devices \"%s\" and \"%s\" have no link, and there is no host CPU to route "
                                        "through",
                                        what, ds->devices[s].name, ds->devices[d].name);
                return dp_error_set(err, DP_STATUS_INVALID,
                                    "%s: no route from \"%s\" to \"%s\": no link between them, nor both ways through "
                                    "the host \"%s\"",
                                    what, ds->devices[s].name, ds->devices[d].name, ds->devices[h].name);
            }
            r[0] = l1;
            r[1] = l2;
            ds->route_len[s * n + d] = 2;
        }
    }
    return DP_STATUS_OK;
}

/* ---- JSON ---------------------------------------------------------------------- */

static dp_devices *devices_from_json(const json_t *root, const char *what, dp_error *err) {
    if (dp_json_check_header(root, what, "dplace-devices", 1, err)) return NULL;
    const char *name = "";
    if (dp_json_get_string(root, "name", 0, &name, what, err)) return NULL;
    const json_t *devs = NULL, *links = NULL;
    const char *staging = NULL;
    if (dp_json_get_array(root, "devices", 1, &devs, what, err) ||
        dp_json_get_array(root, "links", 0, &links, what, err) ||
        dp_json_get_string(root, "host_staging", 0, &staging, what, err))
        return NULL;
    int st = DP_STAGING_PIPELINED;
    while (staging && st < DP_STAGING_COUNT && strcmp(staging, staging_names[st])) st++;
    if (st == DP_STAGING_COUNT) {
        dp_error_set(err, DP_STATUS_PARSE, "%s: unknown host_staging \"%s\" (expected \"pipelined\" or "
                     "\"store-and-forward\")", what, staging);
        return NULL;
    }
    dp_devices *ds = dp_devices_init(name);
    if (!ds) {
        dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", what);
        return NULL;
    }
    ds->staging = (dp_staging)st;
    size_t i;
    const json_t *jd;
    json_array_foreach(devs, i, jd) {
        char ctx[256];
        snprintf(ctx, sizeof ctx, "%s: device %zu", what, i);
        if (!json_is_object(jd)) {
            dp_error_set(err, DP_STATUS_PARSE, "%s must be an object, got %s", ctx, dp_json_type_name(jd));
            goto fail;
        }
        dp_device d;
        memset(&d, 0, sizeof d);
        d.streams = 1;
        const char *dname = NULL, *kind = NULL, *model = NULL;
        if (dp_json_get_string(jd, "name", 1, &dname, ctx, err)) goto fail;
        if (strlen(dname) >= DP_NAME_MAX) {
            dp_error_set(err, DP_STATUS_PARSE, "%s: name is longer than %d bytes", ctx, DP_NAME_MAX - 1);
            goto fail;
        }
        snprintf(ctx, sizeof ctx, "%s: device %zu \"%s\"", what, i, dname);
        if (dp_json_get_string(jd, "kind", 1, &kind, ctx, err)) goto fail;
        if (strcmp(kind, "cpu") == 0) d.kind = DP_DEVKIND_CPU;
        else if (strcmp(kind, "gpu") == 0) d.kind = DP_DEVKIND_GPU;
        else {
            dp_error_set(err, DP_STATUS_PARSE, "%s: unknown kind \"%s\" (expected \"cpu\" or \"gpu\")", ctx, kind);
            goto fail;
        }
        if (dp_json_get_string(jd, "model", 0, &model, ctx, err)) goto fail;
        if (model && strlen(model) >= DP_NAME_MAX) {
            dp_error_set(err, DP_STATUS_PARSE, "%s: model is longer than %d bytes", ctx, DP_NAME_MAX - 1);
            goto fail;
        }
        int64_t mem = 0, streams = 1;
        if (dp_json_get_number(jd, "peak_flops", 1, &d.peak_flops, 0, ctx, err) ||
            dp_json_get_number(jd, "memory_bandwidth", 1, &d.mem_bandwidth, 0, ctx, err) ||
            dp_json_get_int(jd, "memory_bytes", 1, &mem, 1, INT64_MAX, ctx, err) ||
            dp_json_get_number(jd, "launch_overhead_s", 0, &d.launch_overhead_s, 0, ctx, err) ||
            dp_json_get_int(jd, "streams", 0, &streams, 1, DP_MAX_STREAMS, ctx, err))
            goto fail;
        snprintf(d.name, sizeof d.name, "%s", dname);
        snprintf(d.model, sizeof d.model, "%s", model ? model : "");
        d.memory_bytes = (uint64_t)mem;
        d.streams = (int32_t)streams;
        if (dp_devices_add(ds, &d, err)) {
            dp_error_prefix(err, what);
            goto fail;
        }
    }
    const json_t *jl;
    json_array_foreach(links, i, jl) {
        char ctx[256];
        snprintf(ctx, sizeof ctx, "%s: link %zu", what, i);
        if (!json_is_object(jl)) {
            dp_error_set(err, DP_STATUS_PARSE, "%s must be an object, got %s", ctx, dp_json_type_name(jl));
            goto fail;
        }
        const char *from = NULL, *to = NULL;
        double bw = 0, lat = 0;
        const json_t *dup = json_object_get(jl, "duplex");
        if (dp_json_get_string(jl, "from", 1, &from, ctx, err) || dp_json_get_string(jl, "to", 1, &to, ctx, err) ||
            dp_json_get_number(jl, "bandwidth", 1, &bw, 0, ctx, err) ||
            dp_json_get_number(jl, "latency_s", 0, &lat, 0, ctx, err))
            goto fail;
        if (dup && !json_is_boolean(dup)) {
            dp_error_set(err, DP_STATUS_PARSE, "%s: field \"duplex\" must be true or false", ctx);
            goto fail;
        }
        if (dp_devices_add_link(ds, from, to, bw, lat, dup ? json_is_true(dup) : 1, err)) {
            dp_error_prefix(err, what);
            goto fail;
        }
    }
    if (dp_devices_finalize(ds, what, err)) goto fail;
    return ds;
fail:
    dp_devices_free(ds);
    return NULL;
}

dp_devices *dp_devices_read_file(const char *path, dp_error *err) {
    json_t *root = dp_json_load_file(path, err);
    if (!root) return NULL;
    dp_devices *ds = devices_from_json(root, path, err);
    json_decref(root);
    return ds;
}

dp_devices *dp_devices_read_string(const char *text, const char *what, dp_error *err) {
    json_t *root = dp_json_load_string(text, what, err);
    if (!root) return NULL;
    dp_devices *ds = devices_from_json(root, what, err);
    json_decref(root);
    return ds;
}

dp_status dp_devices_write_file(const dp_devices *ds, const char *path, dp_error *err) {
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("dplace-devices"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "name", json_string(ds->name));
    if (ds->staging != DP_STAGING_PIPELINED)
        json_object_set_new(root, "host_staging", json_string(dp_staging_name(ds->staging)));
    json_t *devs = json_array();
    for (int32_t i = 0; i < ds->n_devices; i++) {
        const dp_device *d = &ds->devices[i];
        json_array_append_new(devs, json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:f, s:i}", "name", d->name, "kind",
                                              dp_devkind_name(d->kind), "model", d->model, "peak_flops", d->peak_flops,
                                              "memory_bandwidth", d->mem_bandwidth, "memory_bytes",
                                              (json_int_t)d->memory_bytes, "launch_overhead_s", d->launch_overhead_s,
                                              "streams", d->streams));
    }
    json_object_set_new(root, "devices", devs);
    json_t *links = json_array();
    for (int32_t i = 0; i < ds->n_links; i++) {
        const dp_link *l = &ds->links[i];
        json_array_append_new(links, json_pack("{s:s, s:s, s:f, s:f, s:b}", "from", ds->devices[l->from].name, "to",
                                               ds->devices[l->to].name, "bandwidth", l->bandwidth, "latency_s",
                                               l->latency_s, "duplex", 0));
    }
    json_object_set_new(root, "links", links);
    dp_atomic_file af;
    dp_status st = dp_atomic_open(&af, path, err);
    if (!st) {
        if (json_dumpf(root, af.f, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) != 0) {
            dp_atomic_abort(&af);
            st = dp_error_set(err, DP_STATUS_IO, "%s: write failed", path);
        } else {
            fputc('\n', af.f);
            st = dp_atomic_commit(&af, err);
        }
    }
    json_decref(root);
    return st;
}

dp_devices *dp_devices_load(const char *spec, dp_error *err) {
    struct stat sb;
    if (stat(spec, &sb) == 0 || strchr(spec, '/') || strstr(spec, ".json")) return dp_devices_read_file(spec, err);
    return dp_devices_preset(spec, err);
}
