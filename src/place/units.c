/* Placement units and device masks (include/dplace/units.h). */
#include "dplace/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/uf.h"
#include "common/util.h"
#include "dplace/placement.h"

/* ---- device masks ------------------------------------------------------- */

dp_mask dp_mask_all(const dp_devices *ds) {
    return ds->n_devices >= 64 ? ~(dp_mask)0 : dp_mask_bit(ds->n_devices) - 1;
}

dp_mask dp_mask_gpus(const dp_devices *ds) {
    dp_mask m = 0;
    for (int32_t d = 0; d < ds->n_devices; d++)
        if (ds->devices[d].kind == DP_DEVKIND_GPU) m |= dp_mask_bit(d);
    return m ? m : dp_mask_all(ds);
}

dp_mask dp_mask_op(const dp_graph *g, const dp_devices *ds, int32_t op) {
    if (g->ops[op].device.kind == DP_DEVCON_NONE) return dp_mask_all(ds);
    dp_mask m = 0;
    for (int32_t d = 0; d < ds->n_devices; d++)
        if (dp_placement_allowed(g, ds, op, d)) m |= dp_mask_bit(d);
    return m;
}

/* ---- units -------------------------------------------------------------- */

/* Allocates u for n_ops ops and k units, unit_of not yet filled. */
static dp_status units_alloc(dp_units *u, int32_t n_ops, int32_t k, dp_error *err) {
    memset(u, 0, sizeof *u);
    u->n_ops = n_ops;
    u->n_units = k;
    u->unit_of = malloc(((size_t)n_ops + 1) * sizeof(int32_t));
    u->members = malloc(((size_t)n_ops + 1) * sizeof(int32_t));
    u->first = malloc(((size_t)k + 1) * sizeof(int32_t));
    if (!u->unit_of || !u->members || !u->first) {
        dp_units_free(u);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (units of %d ops)", n_ops);
    }
    return DP_STATUS_OK;
}

/* first and members from unit_of: a stable counting sort of the ops. */
static void units_index(dp_units *u) {
    int32_t n = u->n_ops, k = u->n_units;
    memset(u->first, 0, ((size_t)k + 1) * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) u->first[u->unit_of[i] + 1]++;
    for (int32_t j = 0; j < k; j++) u->first[j + 1] += u->first[j];
    for (int32_t i = 0; i < n; i++) u->members[u->first[u->unit_of[i]]++] = i;
    for (int32_t j = k; j > 0; j--) u->first[j] = u->first[j - 1];
    u->first[0] = 0;
}

dp_status dp_units_init(dp_units *u, const dp_graph *g, dp_error *err) {
    assert(g->finalized);
    int32_t n = g->n_ops;
    /* units: one per colocation group plus one per op outside every group */
    int32_t k = g->n_colocate;
    for (int32_t i = 0; i < n; i++) k += g->coloc_group[i] < 0;
    dp_status st = units_alloc(u, n, k, err);
    if (st) return st;
    int32_t *of_group = u->members; /* scratch until units_index: group -> unit */
    for (int32_t c = 0; c < g->n_colocate; c++) of_group[c] = -1;
    int32_t next = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->coloc_group[i];
        if (c < 0) u->unit_of[i] = next++;
        else u->unit_of[i] = of_group[c] >= 0 ? of_group[c] : (of_group[c] = next++);
    }
    assert(next == k);
    units_index(u);
    return DP_STATUS_OK;
}

dp_status dp_units_group_ids(const dp_graph *g, int32_t *group, int32_t *n_groups, dp_error *err) {
    dp_units u;
    dp_status st = dp_units_init(&u, g, err);
    if (st) return st;
    memcpy(group, u.unit_of, (size_t)g->n_ops * sizeof(int32_t));
    *n_groups = u.n_units;
    dp_units_free(&u);
    return DP_STATUS_OK;
}

dp_status dp_units_init_from_groups(dp_units *u, const int32_t *group, int32_t n_ops, int32_t n_groups,
                                    dp_error *err) {
    memset(u, 0, sizeof *u);
    if (n_ops < 0 || n_groups < 0)
        return dp_error_set(err, DP_STATUS_INVALID, "units of %d ops in %d groups: negative count", n_ops, n_groups);
    for (int32_t i = 0; i < n_ops; i++)
        if (group[i] < 0 || group[i] >= n_groups)
            return dp_error_set(err, DP_STATUS_INVALID, "op %d is in group %d, out of range 0..%d", i, group[i],
                                n_groups - 1);
    dp_status st = units_alloc(u, n_ops, n_groups, err);
    if (st) return st;
    memcpy(u->unit_of, group, (size_t)n_ops * sizeof(int32_t));
    units_index(u);
    return DP_STATUS_OK;
}

void dp_units_free(dp_units *u) {
    if (!u) return;
    free(u->unit_of);
    free(u->first);
    free(u->members);
    memset(u, 0, sizeof *u);
}

void dp_units_expand(const dp_units *u, const int32_t *unit_dev, int32_t *out) {
    for (int32_t i = 0; i < u->n_ops; i++) out[i] = unit_dev[u->unit_of[i]];
}

dp_status dp_units_masks(const dp_units *u, const dp_graph *g, const dp_devices *ds, dp_mask pool, dp_mask *mask,
                         dp_error *err) {
    assert(u->n_ops == g->n_ops);
    dp_mask all = dp_mask_all(ds);
    for (int32_t k = 0; k < u->n_units; k++) {
        dp_mask allowed = all;
        int constrained = 0;
        for (int32_t j = u->first[k]; j < u->first[k + 1]; j++) {
            int32_t op = u->members[j];
            if (g->ops[op].device.kind == DP_DEVCON_NONE) continue;
            constrained = 1;
            allowed &= dp_mask_op(g, ds, op);
            if (!allowed) {
                char buf[32];
                dp_devcon_format(g->ops[op].device, buf, sizeof buf);
                return dp_error_set(err, DP_STATUS_INVALID,
                                    "op %d \"%s\" must run on %s, which device set \"%s\" lacks%s", op,
                                    g->ops[op].name, buf, ds->name,
                                    u->first[k + 1] - u->first[k] > 1 ? " (or the constraints of the other ops of its unit rule that out)"
                                                                      : "");
            }
        }
        mask[k] = !constrained ? pool : (allowed & pool) ? (allowed & pool) : allowed;
    }
    return DP_STATUS_OK;
}

/* ---- what a placement applies to: ops or modules ------------------------ */

int dp_units_spec_parse(const char *text, dp_units_spec *out) {
    if (!text) return -1;
    if (!strcmp(text, "op")) return *out = (dp_units_spec){DP_UNITS_OP, 0}, 0;
    if (!strcmp(text, "auto")) return *out = (dp_units_spec){DP_UNITS_AUTO, 0}, 0;
    if (!strcmp(text, "module")) return *out = (dp_units_spec){DP_UNITS_MODULE, 0}, 0;
    if (strncmp(text, "module:", 7)) return -1;
    char *end;
    long d = strtol(text + 7, &end, 10);
    if (end == text + 7 || *end || d < 1 || d > 1000000) return -1;
    *out = (dp_units_spec){DP_UNITS_MODULE, (int32_t)d};
    return 0;
}

void dp_units_spec_format(dp_units_spec s, char *buf, size_t size) {
    if (s.kind == DP_UNITS_MODULE && s.depth > 0) snprintf(buf, size, "module:%d", (int)s.depth);
    else snprintf(buf, size, "%s", s.kind == DP_UNITS_MODULE ? "module" : s.kind == DP_UNITS_AUTO ? "auto" : "op");
}

int dp_units_has_modules(const dp_graph *g) {
    int params = 0, paths = 0;
    for (int32_t i = 0; i < g->n_ops && !(params && paths); i++) {
        params |= !strcmp(dp_graph_str(g, g->ops[i].type), "Parameter");
        paths |= g->ops[i].scope >= 0 && *dp_graph_str(g, g->ops[i].scope);
    }
    return params && paths;
}

dp_units_spec dp_units_spec_resolve(dp_units_spec s, const dp_graph *g) {
    if (s.kind != DP_UNITS_AUTO) return s;
    return dp_units_has_modules(g) ? (dp_units_spec){DP_UNITS_MODULE, 0} : (dp_units_spec){DP_UNITS_OP, 0};
}

void dp_units_module_path(const dp_graph *g, int32_t op, int32_t depth, char *buf, size_t size) {
    const char *s = g->ops[op].scope >= 0 ? dp_graph_str(g, g->ops[op].scope) : "";
    while (!strncmp(s, "gradients/", 10)) s += 10; /* the exporter's gradient scopes (module_path there) */
    if (!strcmp(s, "gradients")) s = "";
    size_t n = 0;
    int32_t comps = 1;
    for (; s[n] && n + 1 < size; n++) {
        if (s[n] == '/' && depth > 0 && comps++ >= depth) break;
        buf[n] = s[n] == '/' ? '.' : s[n];
    }
    if (size) buf[n] = '\0';
}

/* Module units: ops of one module path (at depth) together, joined where a
 * colocation group spans modules; fills group [n_ops] (dense ids in the
 * order of first op) and returns the number of units, or -1 when out of
 * memory. */
static int32_t module_groups(const dp_graph *g, int32_t depth, int32_t *group) {
    int32_t n = g->n_ops, ng = -1;
    int32_t *parent = malloc(((size_t)n + 1) * sizeof(int32_t)), *id = malloc(((size_t)n + 1) * sizeof(int32_t));
    int32_t *coloc_first = malloc(((size_t)g->n_colocate + 1) * sizeof(int32_t));
    dp_strtab *paths = dp_strtab_init();
    if (!parent || !id || !coloc_first || !paths) goto done;
    for (int32_t c = 0; c < g->n_colocate; c++) coloc_first[c] = -1;
    char buf[DP_GRAPH_NAME_MAX + 1];
    for (int32_t i = 0; i < n; i++) {
        dp_units_module_path(g, i, depth, buf, sizeof buf);
        int32_t k = dp_strtab_intern(paths, buf); /* dense: at most one new path per op */
        if (k < 0) goto done;
        group[i] = k;
        parent[i] = i, id[i] = -1;
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->coloc_group[i];
        if (c < 0) continue;
        if (coloc_first[c] < 0) coloc_first[c] = group[i];
        else dp_uf_join(parent, coloc_first[c], group[i]);
    }
    ng = dp_uf_relabel(parent, group, n, id);
done:
    free(parent), free(id), free(coloc_first);
    dp_strtab_free(paths);
    return ng;
}

dp_status dp_units_init_spec(dp_units *u, const dp_graph *g, dp_units_spec s, dp_error *err) {
    memset(u, 0, sizeof *u);
    s = dp_units_spec_resolve(s, g);
    if (s.kind != DP_UNITS_MODULE) return dp_units_init(u, g, err);
    if (!dp_units_has_modules(g))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "graph \"%s\" has no modules to place (units by module are for PyTorch steps exported by "
                            "scripts/dplace-export-torch): use units by op",
                            g->name);
    int32_t *group = malloc(((size_t)g->n_ops + 1) * sizeof(int32_t));
    int32_t ng = group ? module_groups(g, s.depth, group) : -1;
    dp_status st = ng < 0 ? dp_error_set(err, DP_STATUS_NOMEM, "out of memory (modules of %d ops)", g->n_ops)
                          : dp_units_init_from_groups(u, group, g->n_ops, ng, err);
    free(group);
    return st;
}

int32_t dp_units_count_split(const dp_units *u, const int32_t *placement) {
    int32_t split = 0;
    for (int32_t k = 0; k < u->n_units; k++)
        for (int32_t j = u->first[k] + 1; j < u->first[k + 1]; j++)
            if (placement[u->members[j]] != placement[u->members[u->first[k]]]) {
                split++;
                break;
            }
    return split;
}

void dp_units_map_majority(const dp_units *u, const dp_devices *ds, const dp_mask *mask, const int32_t *placement,
                           int32_t *out) {
    int32_t count[DP_MAX_DEVICES];
    for (int32_t k = 0; k < u->n_units; k++) {
        memset(count, 0, sizeof count);
        for (int32_t j = u->first[k]; j < u->first[k + 1]; j++) count[placement[u->members[j]]]++;
        dp_mask m = mask ? mask[k] : dp_mask_all(ds);
        int32_t best = -1;
        for (dp_mask r = m; r; r &= r - 1) {
            int32_t d = dp_mask_first(r);
            if (best < 0 || count[d] > count[best] ||
                (count[d] == count[best] && strcmp(ds->devices[d].name, ds->devices[best].name) < 0))
                best = d;
        }
        for (int32_t j = u->first[k]; j < u->first[k + 1]; j++) out[u->members[j]] = best;
    }
}

dp_status dp_units_write_placement(const char *path, const dp_graph *g, const dp_devices *ds, const int32_t *placement,
                                   dp_units_spec s, dp_error *err) {
    for (int32_t i = 0; i < g->n_ops; i++)
        if (placement[i] < 0 || placement[i] >= ds->n_devices)
            return dp_error_set(err, DP_STATUS_INVALID, "%s: op %d has device index %d out of range", path, i,
                                placement[i]);
    dp_atomic_file af;
    dp_status st = dp_atomic_open(&af, path, err);
    if (st) return st;
    char units[32];
    dp_units_spec_format(dp_units_spec_resolve(s, g), units, sizeof units);
    fprintf(af.f, "{\"format\": \"dplace-placement\", \"version\": 1, \"graph\": \"");
    for (const char *c = g->name; *c; c++) { /* a JSON string: quotes, backslashes, controls escaped */
        unsigned char ch = (unsigned char)*c;
        if (ch == '"' || ch == '\\') fprintf(af.f, "\\%c", ch);
        else if (ch < 0x20) fprintf(af.f, "\\u%04x", ch);
        else fputc(ch, af.f);
    }
    fprintf(af.f, "\", \"units\": \"%s\",\n \"devices\": [", units);
    for (int32_t d = 0; d < ds->n_devices; d++) fprintf(af.f, "%s\"%s\"", d ? ", " : "", ds->devices[d].name);
    fprintf(af.f, "],\n \"placement\": [");
    for (int32_t i = 0; i < g->n_ops; i++) fprintf(af.f, "%s%d", i ? (i % 32 ? "," : ",\n  ") : "", placement[i]);
    fprintf(af.f, "]}\n");
    return dp_atomic_commit(&af, err);
}
