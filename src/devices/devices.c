/* Device sets: construction, validation, routing, dplace-devices v1/v2 I/O. */
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
        double inv = 1.0 / dp_devices_link_rate(l);
        per_byte += inv;
        if (inv > slowest) slowest = inv;
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

static int bad_efficiency(double e) { return !(e > 0 && e <= DP_DEVICES_MAX_EFFICIENCY); }

/* Fills d's generation (from its model when not given) and every
 * efficiency that is not its own: the generation's, else the kind's, so
 * that the cost model reads one table per device. Refuses an unknown
 * generation, one of another kind, and own values out of range. */
static dp_status resolve_efficiencies(dp_device *d, dp_error *err) {
    const char *nm = d->name;
    if (!d->generation[0]) {
        const char *g = dp_devices_model_generation(d->model);
        if (g) snprintf(d->generation, sizeof d->generation, "%s", g);
    }
    const dp_generation *gen = NULL;
    if (d->generation[0]) {
        gen = dp_devices_generation(d->generation);
        if (!gen) {
            char known[256] = "";
            for (const char *const *n = dp_devices_generation_names(); *n; n++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", known[0] ? ", " : "", *n);
            return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": unknown generation \"%s\" (known: %s)", nm,
                                d->generation, known);
        }
        if (gen->kind != d->kind)
            return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": generation \"%s\" is of kind %s, the device %s",
                                nm, gen->name, dp_devkind_name(gen->kind), dp_devkind_name(d->kind));
    }
    _Static_assert(2 * DP_EFF_COUNT <= 32, "eff_own holds two bits a slot");
    if (d->eff_own >> (2 * DP_EFF_COUNT))
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": unknown efficiency slot", nm);
    const dp_efficiency *table = gen ? gen->eff : dp_devices_kind_efficiency(d->kind);
    for (int s = 0; s < DP_EFF_COUNT; s++) {
        double *part[2] = {&d->eff[s].compute, &d->eff[s].memory};
        /* a follower slot takes its leader's as resolved (the device's
         * own included) unless the device gives its own; a leader comes
         * before its followers */
        int lead = dp_devices_eff_follows(s);
        const dp_efficiency *src = lead >= 0 ? &d->eff[lead] : &table[s];
        const double from[2] = {src->compute, src->memory};
        for (int k = 0; k < 2; k++) {
            if (!(d->eff_own & DP_EFF_OWN_BIT(s, k))) *part[k] = from[k];
            else if (bad_efficiency(*part[k]))
                return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": efficiency %s.%s must be in (0, %g] (got %g)",
                                    nm, dp_devices_eff_slot_name(s), k ? "memory" : "compute",
                                    DP_DEVICES_MAX_EFFICIENCY, *part[k]);
        }
    }
    return DP_STATUS_OK;
}

/* Refuses a tensor-core peak out of range, or one for math the device's
 * generation (resolved: d->generation) does not run. */
static dp_status check_tensor_flops(const dp_device *d, dp_error *err) {
    const dp_generation *gen = d->generation[0] ? dp_devices_generation(d->generation) : NULL;
    unsigned allowed = gen ? gen->tensor_math : 0;
    for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++) {
        double v = d->tensor_flops[m];
        if (v == 0) continue;
        const char *math = dp_tensor_math_name((dp_tensor_math)m);
        if (bad_rate(v))
            return dp_error_set(err, DP_STATUS_INVALID,
                                "device \"%s\": tensor_flops.%s must be 0 or in 1..1e20 (got %g)", d->name, math, v);
        if (!(allowed & (1u << m)))
            return dp_error_set(err, DP_STATUS_INVALID,
                                "device \"%s\": tensor_flops.%s given, but generation \"%s\" has no %s tensor cores",
                                d->name, math, d->generation[0] ? d->generation : "(none)", math);
    }
    return DP_STATUS_OK;
}

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
    if (!isfinite(dev->dispatch_s) || dev->dispatch_s < 0 || dev->dispatch_s > 1)
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": dispatch_s must be in 0..1 seconds", nm);
    if (!isfinite(dev->switch_s) || dev->switch_s < 0 || dev->switch_s > 1)
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": switch_s must be in 0..1 seconds", nm);
    if (dev->streams < 1 || dev->streams > DP_MAX_STREAMS)
        return dp_error_set(err, DP_STATUS_INVALID, "device \"%s\": streams must be in 1..%d", nm, DP_MAX_STREAMS);
    dp_device d = *dev;
    if (!d.model[0]) snprintf(d.model, sizeof d.model, "%s", dp_devkind_name(d.kind));
    dp_status st = resolve_efficiencies(&d, err);
    if (!st) st = check_tensor_flops(&d, err);
    if (st) return st;
    d.kind_index = ds->kind_count[d.kind]++;
    ds->devices[ds->n_devices++] = d;
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
    ds->links[ds->n_links++] = (dp_link){a, b, bw, lat, 1.0};
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
    for (int32_t l = 0; l < ds->n_links; l++) {
        double e = ds->links[l].efficiency;
        if (!(e > 0 && e <= 1))
            return dp_error_set(err, DP_STATUS_INVALID, "%s: link %s -> %s: efficiency must be in (0, 1] (got %g)", what,
                                ds->devices[ds->links[l].from].name, ds->devices[ds->links[l].to].name, e);
    }
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

dp_devices *dp_devices_copy(const dp_devices *ds, dp_error *err) {
    dp_devices *c = malloc(sizeof *c);
    size_t n = (size_t)ds->n_devices;
    if (c) {
        *c = *ds;
        c->links = malloc(((size_t)ds->n_links + 1) * sizeof(dp_link));
        c->route = malloc(n * n * 2 * sizeof(int32_t) + 1);
        c->route_len = malloc(n * n + 1);
    }
    if (!c || !c->links || !c->route || !c->route_len) {
        if (c) free(c->links), free(c->route), free(c->route_len);
        free(c);
        dp_error_set(err, DP_STATUS_NOMEM, "device set \"%s\": out of memory for a copy", ds->name);
        return NULL;
    }
    if (ds->n_links) memcpy(c->links, ds->links, (size_t)ds->n_links * sizeof(dp_link));
    if (ds->route) memcpy(c->route, ds->route, n * n * 2 * sizeof(int32_t));
    if (ds->route_len) memcpy(c->route_len, ds->route_len, n * n);
    return c;
}

int dp_devices_same_cost(const dp_device *a, const dp_device *b) {
    if (a->kind != b->kind || strcmp(a->model, b->model) != 0 || a->peak_flops != b->peak_flops ||
        a->mem_bandwidth != b->mem_bandwidth || a->launch_overhead_s != b->launch_overhead_s)
        return 0;
    for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++)
        if (a->tensor_flops[m] != b->tensor_flops[m]) return 0;
    for (int s = 0; s < DP_EFF_COUNT; s++)
        if (a->eff[s].compute != b->eff[s].compute || a->eff[s].memory != b->eff[s].memory) return 0;
    return 1;
}

/* FNV-1a over a value's bytes, continuing from h. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

uint64_t dp_devices_hash(const dp_devices *ds) {
    uint64_t h = 14695981039346656037ULL;
    int32_t staging = ds->staging, n = ds->n_devices, nl = ds->n_links;
    h = hash_bytes(h, &staging, sizeof staging);
    h = hash_bytes(h, &n, sizeof n);
    for (int32_t d = 0; d < n; d++) {
        const dp_device *v = &ds->devices[d];
        int32_t kind = v->kind;
        h = hash_bytes(h, v->name, strlen(v->name) + 1);
        h = hash_bytes(h, v->model, strlen(v->model) + 1);
        h = hash_bytes(h, &kind, sizeof kind);
        h = hash_bytes(h, &v->peak_flops, sizeof v->peak_flops);
        h = hash_bytes(h, &v->mem_bandwidth, sizeof v->mem_bandwidth);
        h = hash_bytes(h, &v->memory_bytes, sizeof v->memory_bytes);
        h = hash_bytes(h, &v->launch_overhead_s, sizeof v->launch_overhead_s);
        h = hash_bytes(h, &v->streams, sizeof v->streams);
        /* hashed only when not the default, so that a set that says
         * nothing of it keeps the hash it had before */
        if (v->dispatch_s != DP_DEVICES_DISPATCH_S) h = hash_bytes(h, &v->dispatch_s, sizeof v->dispatch_s);
        if (v->switch_s != DP_DEVICES_SWITCH_S) h = hash_bytes(h, &v->switch_s, sizeof v->switch_s);
        /* the slots before grouped as always; a follower slot only where
         * it is not its leader's, so that sets that say nothing of it keep
         * their hash (grouped, the first, without its index, as before
         * there were others) */
        h = hash_bytes(h, v->eff, DP_EFF_GROUPED * sizeof v->eff[0]);
        for (int s = DP_EFF_GROUPED; s < DP_EFF_COUNT; s++) {
            const dp_efficiency *lead = &v->eff[dp_devices_eff_follows(s)];
            if (v->eff[s].compute == lead->compute && v->eff[s].memory == lead->memory) continue;
            if (s != DP_EFF_GROUPED) h = hash_bytes(h, &s, sizeof s);
            h = hash_bytes(h, &v->eff[s], sizeof v->eff[0]);
        }
        /* hashed only when given, so that a device without tensor peaks
         * keeps the hash it had before devices had them */
        for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++)
            if (v->tensor_flops[m] != 0) {
                h = hash_bytes(h, &m, sizeof m);
                h = hash_bytes(h, &v->tensor_flops[m], sizeof v->tensor_flops[m]);
            }
    }
    h = hash_bytes(h, &nl, sizeof nl);
    for (int32_t l = 0; l < nl; l++) {
        const dp_link *k = &ds->links[l];
        h = hash_bytes(h, &k->from, sizeof k->from);
        h = hash_bytes(h, &k->to, sizeof k->to);
        h = hash_bytes(h, &k->bandwidth, sizeof k->bandwidth);
        h = hash_bytes(h, &k->latency_s, sizeof k->latency_s);
        h = hash_bytes(h, &k->efficiency, sizeof k->efficiency);
    }
    return h;
}

/* ---- JSON ---------------------------------------------------------------------- */

/* The status a failed reader left in err (PARSE without one). */
static dp_status failed(const dp_error *err) { return err && err->status ? err->status : DP_STATUS_PARSE; }

/* The fields only version 2 has: in a version-1 file they are refused
 * rather than ignored, so that a file's model is never silently dropped. */
static dp_status refuse_v2_field(const json_t *obj, const char *key, int version, const char *ctx, dp_error *err) {
    if (version < 2 && json_object_get(obj, key))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"%s\" needs \"version\": 2", ctx, key);
    return DP_STATUS_OK;
}

/* Reads a device's "efficiency" object ({"matmul": {"compute": 0.2,
 * "memory": 0.4}, "winograd": {...}}) into d's own values. */
static dp_status read_efficiency(const json_t *jd, dp_device *d, const char *ctx, dp_error *err) {
    const json_t *je = json_object_get(jd, "efficiency");
    if (!je) return DP_STATUS_OK;
    if (!json_is_object(je))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"efficiency\" must be an object, got %s", ctx,
                            dp_json_type_name(je));
    const char *key;
    const json_t *jc;
    json_object_foreach((json_t *)je, key, jc) {
        int s = 0;
        while (s < DP_EFF_COUNT && strcmp(key, dp_devices_eff_slot_name(s))) s++;
        char c2[384];
        snprintf(c2, sizeof c2, "%s: efficiency \"%.64s\"", ctx, key);
        if (s == DP_EFF_COUNT) {
            /* the slots' own names, so that the list cannot fall behind them */
            char names[256] = "";
            for (int k = 0; k < DP_EFF_COUNT; k++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         k == 0 ? "" : k == DP_EFF_COUNT - 1 ? " or " : ", ", dp_devices_eff_slot_name(k));
            return dp_error_set(err, DP_STATUS_PARSE, "%s: unknown op class (expected %s)", c2, names);
        }
        if (!json_is_object(jc))
            return dp_error_set(err, DP_STATUS_PARSE, "%s must be an object with \"compute\" and/or \"memory\", got %s",
                                c2, dp_json_type_name(jc));
        const char *k2;
        const json_t *jv;
        json_object_foreach((json_t *)jc, k2, jv) {
            int part = !strcmp(k2, "compute") ? 0 : !strcmp(k2, "memory") ? 1 : -1;
            if (part < 0)
                return dp_error_set(err, DP_STATUS_PARSE, "%s: unknown field \"%.64s\" (expected \"compute\" or "
                                    "\"memory\")", c2, k2);
            double v = 0;
            if (dp_json_get_number(jc, k2, 1, &v, 0, c2, err)) return failed(err);
            if (part) d->eff[s].memory = v;
            else d->eff[s].compute = v;
            d->eff_own |= DP_EFF_OWN_BIT(s, part);
        }
    }
    return DP_STATUS_OK;
}

/* Reads a device's "tensor_flops" object ({"tf32": 1.56e14, "bfloat16":
 * 3.12e14}) into d; dp_devices_add checks the values against the
 * generation. */
static dp_status read_tensor_flops(const json_t *jd, dp_device *d, const char *ctx, dp_error *err) {
    const json_t *jt = json_object_get(jd, "tensor_flops");
    if (!jt) return DP_STATUS_OK;
    if (!json_is_object(jt))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"tensor_flops\" must be an object, got %s", ctx,
                            dp_json_type_name(jt));
    const char *key;
    const json_t *jv;
    json_object_foreach((json_t *)jt, key, jv) {
        int m = 0;
        while (m < DP_TENSOR_MATH_COUNT && strcmp(key, dp_tensor_math_name((dp_tensor_math)m))) m++;
        if (m == DP_TENSOR_MATH_COUNT)
            return dp_error_set(err, DP_STATUS_PARSE,
                                "%s: tensor_flops \"%.64s\": unknown math (expected tf32, float16 or bfloat16)", ctx,
                                key);
        char c2[384];
        snprintf(c2, sizeof c2, "%s: tensor_flops", ctx);
        if (dp_json_get_number(jt, key, 1, &d->tensor_flops[m], 0, c2, err)) return failed(err);
    }
    return DP_STATUS_OK;
}

/* Reads device i of a file (its fields as the format lists them) into d. */
static dp_status read_device(const json_t *jd, size_t i, int version, const char *what, dp_device *d, dp_error *err) {
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s: device %zu", what, i);
    if (!json_is_object(jd))
        return dp_error_set(err, DP_STATUS_PARSE, "%s must be an object, got %s", ctx, dp_json_type_name(jd));
    memset(d, 0, sizeof *d);
    d->dispatch_s = DP_DEVICES_DISPATCH_S;
    d->switch_s = DP_DEVICES_SWITCH_S;
    d->streams = 1;
    const char *dname = NULL, *kind = NULL, *model = NULL, *gen = NULL;
    if (dp_json_get_string(jd, "name", 1, &dname, ctx, err)) return failed(err);
    if (strlen(dname) >= DP_NAME_MAX)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: name is longer than %d bytes", ctx, DP_NAME_MAX - 1);
    snprintf(ctx, sizeof ctx, "%s: device %zu \"%s\"", what, i, dname);
    if (dp_json_get_string(jd, "kind", 1, &kind, ctx, err)) return failed(err);
    if (strcmp(kind, "cpu") == 0) d->kind = DP_DEVKIND_CPU;
    else if (strcmp(kind, "gpu") == 0) d->kind = DP_DEVKIND_GPU;
    else return dp_error_set(err, DP_STATUS_PARSE, "%s: unknown kind \"%s\" (expected \"cpu\" or \"gpu\")", ctx, kind);
    if (dp_json_get_string(jd, "model", 0, &model, ctx, err)) return failed(err);
    if (model && strlen(model) >= DP_NAME_MAX)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: model is longer than %d bytes", ctx, DP_NAME_MAX - 1);
    if (refuse_v2_field(jd, "generation", version, ctx, err) || refuse_v2_field(jd, "efficiency", version, ctx, err) ||
        refuse_v2_field(jd, "tensor_flops", version, ctx, err) ||
        dp_json_get_string(jd, "generation", 0, &gen, ctx, err))
        return failed(err);
    if (gen && (strlen(gen) >= DP_NAME_MAX || !gen[0]))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: generation must be 1..%d bytes", ctx, DP_NAME_MAX - 1);
    int64_t mem = 0, streams = 1;
    if (dp_json_get_number(jd, "peak_flops", 1, &d->peak_flops, 0, ctx, err) ||
        dp_json_get_number(jd, "memory_bandwidth", 1, &d->mem_bandwidth, 0, ctx, err) ||
        dp_json_get_int(jd, "memory_bytes", 1, &mem, 1, INT64_MAX, ctx, err) ||
        dp_json_get_number(jd, "launch_overhead_s", 0, &d->launch_overhead_s, 0, ctx, err) ||
        dp_json_get_number(jd, "dispatch_s", 0, &d->dispatch_s, 0, ctx, err) ||
        dp_json_get_number(jd, "switch_s", 0, &d->switch_s, 0, ctx, err) ||
        dp_json_get_int(jd, "streams", 0, &streams, 1, DP_MAX_STREAMS, ctx, err) || read_efficiency(jd, d, ctx, err) ||
        read_tensor_flops(jd, d, ctx, err))
        return failed(err);
    snprintf(d->name, sizeof d->name, "%s", dname);
    snprintf(d->model, sizeof d->model, "%s", model ? model : "");
    snprintf(d->generation, sizeof d->generation, "%s", gen ? gen : "");
    d->memory_bytes = (uint64_t)mem;
    d->streams = (int32_t)streams;
    return DP_STATUS_OK;
}

/* Reads link i of a file and adds it (both directions when duplex). */
static dp_status read_link(dp_devices *ds, const json_t *jl, size_t i, int version, const char *what, dp_error *err) {
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s: link %zu", what, i);
    if (!json_is_object(jl))
        return dp_error_set(err, DP_STATUS_PARSE, "%s must be an object, got %s", ctx, dp_json_type_name(jl));
    const char *from = NULL, *to = NULL;
    double bw = 0, lat = 0, eff = 1;
    int duplex = 1;
    if (dp_json_get_string(jl, "from", 1, &from, ctx, err) || dp_json_get_string(jl, "to", 1, &to, ctx, err) ||
        dp_json_get_number(jl, "bandwidth", 1, &bw, 0, ctx, err) ||
        dp_json_get_number(jl, "latency_s", 0, &lat, 0, ctx, err) ||
        refuse_v2_field(jl, "efficiency", version, ctx, err) ||
        dp_json_get_number(jl, "efficiency", 0, &eff, 0, ctx, err) ||
        dp_json_get_bool(jl, "duplex", 0, &duplex, ctx, err))
        return failed(err);
    if (!(eff > 0 && eff <= 1))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: efficiency must be in (0, 1] (got %g)", ctx, eff);
    int32_t before = ds->n_links;
    if (dp_devices_add_link(ds, from, to, bw, lat, duplex, err)) {
        dp_error_prefix(err, what);
        return failed(err);
    }
    for (int32_t l = before; l < ds->n_links; l++) ds->links[l].efficiency = eff;
    return DP_STATUS_OK;
}

/* The file's version: 1 or 2 (its format checked). */
static dp_status read_header(const json_t *root, const char *what, int *version, dp_error *err) {
    const json_t *v = json_is_object(root) ? json_object_get(root, "version") : NULL;
    *version = json_is_integer(v) && json_integer_value(v) == 1 ? 1 : 2;
    dp_status st = dp_json_check_header(root, what, "dplace-devices", *version, err);
    if (st && json_is_integer(v) && json_integer_value(v) != 1 && json_integer_value(v) != 2)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: unsupported dplace-devices version %lld (this dplace reads "
                            "versions 1 and 2)", what, (long long)json_integer_value(v));
    return st;
}

static dp_devices *devices_from_json(const json_t *root, const char *what, dp_error *err) {
    int version = 2;
    if (read_header(root, what, &version, err)) return NULL;
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
    const json_t *jd, *jl;
    json_array_foreach(devs, i, jd) {
        dp_device d;
        if (read_device(jd, i, version, what, &d, err)) goto fail;
        if (dp_devices_add(ds, &d, err)) {
            dp_error_prefix(err, what);
            goto fail;
        }
    }
    json_array_foreach(links, i, jl) {
        if (read_link(ds, jl, i, version, what, err)) goto fail;
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

/* A device as v2 writes it: its own efficiencies only, so that the rest
 * keep following its generation's or kind's table. */
static json_t *device_json(const dp_device *d) {
    json_t *j = json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:f, s:i}", "name", d->name, "kind", dp_devkind_name(d->kind),
                          "model", d->model, "peak_flops", d->peak_flops, "memory_bandwidth", d->mem_bandwidth,
                          "memory_bytes", (json_int_t)d->memory_bytes, "launch_overhead_s", d->launch_overhead_s,
                          "streams", d->streams);
    if (d->generation[0]) json_object_set_new(j, "generation", json_string(d->generation));
    if (d->dispatch_s != DP_DEVICES_DISPATCH_S) json_object_set_new(j, "dispatch_s", json_real(d->dispatch_s));
    if (d->switch_s != DP_DEVICES_SWITCH_S) json_object_set_new(j, "switch_s", json_real(d->switch_s));
    json_t *tc = json_object();
    for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++)
        if (d->tensor_flops[m] != 0)
            json_object_set_new(tc, dp_tensor_math_name((dp_tensor_math)m), json_real(d->tensor_flops[m]));
    if (json_object_size(tc)) json_object_set_new(j, "tensor_flops", tc);
    else json_decref(tc);
    if (d->eff_own) {
        json_t *e = json_object();
        for (int s = 0; s < DP_EFF_COUNT; s++) {
            if (!(d->eff_own & (DP_EFF_OWN_BIT(s, 0) | DP_EFF_OWN_BIT(s, 1)))) continue;
            json_t *c = json_object();
            if (d->eff_own & DP_EFF_OWN_BIT(s, 0)) json_object_set_new(c, "compute", json_real(d->eff[s].compute));
            if (d->eff_own & DP_EFF_OWN_BIT(s, 1)) json_object_set_new(c, "memory", json_real(d->eff[s].memory));
            json_object_set_new(e, dp_devices_eff_slot_name(s), c);
        }
        json_object_set_new(j, "efficiency", e);
    }
    return j;
}

dp_status dp_devices_write_file(const dp_devices *ds, const char *path, dp_error *err) {
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("dplace-devices"));
    json_object_set_new(root, "version", json_integer(2));
    json_object_set_new(root, "name", json_string(ds->name));
    if (ds->staging != DP_STAGING_PIPELINED)
        json_object_set_new(root, "host_staging", json_string(dp_staging_name(ds->staging)));
    json_t *devs = json_array();
    for (int32_t i = 0; i < ds->n_devices; i++) json_array_append_new(devs, device_json(&ds->devices[i]));
    json_object_set_new(root, "devices", devs);
    json_t *links = json_array();
    for (int32_t i = 0; i < ds->n_links; i++) {
        const dp_link *l = &ds->links[i];
        json_t *jl = json_pack("{s:s, s:s, s:f, s:f, s:b}", "from", ds->devices[l->from].name, "to",
                               ds->devices[l->to].name, "bandwidth", l->bandwidth, "latency_s", l->latency_s, "duplex", 0);
        if (l->efficiency != 1.0) json_object_set_new(jl, "efficiency", json_real(l->efficiency));
        json_array_append_new(links, jl);
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
