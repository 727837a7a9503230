/* Placements: single-device shorthands and dplace-placement v1 files. */
#include "dplace/placement.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json_util.h"
#include "common/util.h"

int dp_placement_allowed(const dp_graph *g, const dp_devices *ds, int32_t op, int32_t d) {
    dp_devcon c = g->ops[op].device;
    if (c.kind == DP_DEVCON_NONE) return 1;
    const dp_device *dev = &ds->devices[d];
    dp_devkind want = c.kind == DP_DEVCON_CPU ? DP_DEVKIND_CPU : DP_DEVKIND_GPU;
    return dev->kind == want && (c.index < 0 || dev->kind_index == c.index);
}

dp_status dp_placement_single(const dp_graph *g, const dp_devices *ds, int32_t dev, int32_t *out, dp_error *err) {
    if (dev < 0 || dev >= ds->n_devices)
        return dp_error_set(err, DP_STATUS_INVALID, "device index %d out of range 0..%d", dev, ds->n_devices - 1);
    for (int32_t i = 0; i < g->n_ops; i++) {
        out[i] = dev;
        if (dp_placement_allowed(g, ds, i, dev)) continue;
        int32_t d = 0;
        while (d < ds->n_devices && !dp_placement_allowed(g, ds, i, d)) d++;
        if (d == ds->n_devices) {
            char buf[32];
            dp_devcon_format(g->ops[i].device, buf, sizeof buf);
            return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\" must run on %s, which device set \"%s\" lacks", i,
                                g->ops[i].name, buf, ds->name);
        }
        out[i] = d;
    }
    return DP_STATUS_OK;
}

dp_status dp_placement_resolve(const char *spec, const dp_graph *g, const dp_devices *ds, int32_t *out,
                               dp_error *err) {
    int32_t d = dp_devices_find(ds, spec);
    if (d < 0 && (strcmp(spec, "cpu") == 0 || strcmp(spec, "gpu") == 0)) {
        d = dp_devices_nth(ds, spec[0] == 'c' ? DP_DEVKIND_CPU : DP_DEVKIND_GPU, 0);
        if (d < 0)
            return dp_error_set(err, DP_STATUS_INVALID, "placement \"%s\": device set \"%s\" has no %s", spec, ds->name,
                                spec);
    }
    if (d >= 0) return dp_placement_single(g, ds, d, out, err);
    struct stat sb;
    if (stat(spec, &sb) != 0) {
        char names[512];
        size_t pos = 0;
        for (int32_t i = 0; i < ds->n_devices && pos < sizeof names - 80; i++)
            pos += (size_t)snprintf(names + pos, sizeof names - pos, "%s%s", i ? ", " : "", ds->devices[i].name);
        return dp_error_set(err, DP_STATUS_INVALID,
                            "placement \"%s\": not a file (%s), nor a device of \"%s\" (cpu, gpu, %s)%s", spec,
                            strerror(errno), ds->name, names,
                            strcmp(spec, "expert") ? "" : "; \"expert\" is the zoo's (dp_zoo_resolve_placement)");
    }
    return dp_placement_read_file(spec, g, ds, out, err);
}

dp_status dp_placement_read_file(const char *path, const dp_graph *g, const dp_devices *ds, int32_t *out,
                                 dp_error *err) {
    json_t *root = dp_json_load_file(path, err);
    if (!root) return err ? err->status : DP_STATUS_PARSE;
    dp_status st = dp_json_check_header(root, path, "dplace-placement", 1, err);
    int32_t map[DP_MAX_DEVICES];
    size_t nd = 0;
    const json_t *devs = json_object_get(root, "devices");
    const json_t *pl = json_object_get(root, "placement");
    if (st) goto done;
    if (!devs || !json_is_array(devs)) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: field \"devices\" must be an array of device names", path);
        goto done;
    }
    nd = json_array_size(devs);
    if (nd == 0 || nd > DP_MAX_DEVICES) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: field \"devices\" must list 1..%d names", path, DP_MAX_DEVICES);
        goto done;
    }
    for (size_t i = 0; i < nd; i++) {
        const json_t *v = json_array_get(devs, i);
        if (!json_is_string(v)) {
            st = dp_error_set(err, DP_STATUS_PARSE, "%s: devices[%zu] must be a string, got %s", path, i,
                              dp_json_type_name(v));
            goto done;
        }
        map[i] = dp_devices_find(ds, json_string_value(v));
        if (map[i] < 0) {
            st = dp_error_set(err, DP_STATUS_INVALID, "%s: devices[%zu] \"%s\" is not in device set \"%s\"", path, i,
                              json_string_value(v), ds->name);
            goto done;
        }
    }
    if (!pl || !json_is_array(pl)) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: field \"placement\" must be an array of device indices", path);
        goto done;
    }
    if (json_array_size(pl) != (size_t)g->n_ops) {
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: placement has %zu entries but graph \"%s\" has %d ops", path,
                          json_array_size(pl), g->name, g->n_ops);
        goto done;
    }
    for (int32_t i = 0; i < g->n_ops; i++) {
        int64_t v = 0;
        char ctx[600], what[64];
        snprintf(ctx, sizeof ctx, "%s: placement of op %d \"%.200s\"", path, i, g->ops[i].name);
        snprintf(what, sizeof what, "the device index");
        if ((st = dp_json_to_int(json_array_get(pl, (size_t)i), &v, 0, (int64_t)nd - 1, ctx, what, err))) goto done;
        out[i] = map[v];
    }
done:
    json_decref(root);
    return st;
}

dp_status dp_placement_write_file(const char *path, const dp_graph *g, const dp_devices *ds, const int32_t *placement,
                                  dp_error *err) {
    dp_atomic_file af;
    dp_status st = dp_atomic_open(&af, path, err);
    if (st) return st;
    fprintf(af.f, "{\"format\": \"dplace-placement\", \"version\": 1, \"graph\": ");
    json_t *nm = json_string(g->name);
    json_dumpf(nm, af.f, JSON_ENCODE_ANY);
    json_decref(nm);
    fprintf(af.f, ",\n \"devices\": [");
    for (int32_t d = 0; d < ds->n_devices; d++) fprintf(af.f, "%s\"%s\"", d ? ", " : "", ds->devices[d].name);
    fprintf(af.f, "],\n \"placement\": [");
    for (int32_t i = 0; i < g->n_ops; i++) {
        if (placement[i] < 0 || placement[i] >= ds->n_devices) {
            dp_atomic_abort(&af);
            return dp_error_set(err, DP_STATUS_INVALID, "%s: op %d has device index %d out of range", path, i,
                                placement[i]);
        }
        fprintf(af.f, "%s%d", i ? (i % 32 ? "," : ",\n  ") : "", placement[i]);
    }
    fprintf(af.f, "]}\n");
    return dp_atomic_commit(&af, err);
}
