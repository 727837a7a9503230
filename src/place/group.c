/* Grouping heuristics: the method table, colocation (TensorFlow's groups +
 * ColocRL's rule), METIS and Scotch partitions, random groups; figures of a
 * grouping; the dplace-groups file. Fluid communities: group_fluid.c.
 *
 * Every method but colocation works on colocation units (each colocation
 * group contracted into one vertex), so colocated ops always share a group. */
#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/uf.h"
#include "common/util.h"
#include "dplace/cost.h"
#include "dplace/group.h"
#include "place/place_internal.h"

static const char *const group_method_names[] = {"colocation", "metis", "scotch", "fluid", "random"};
_Static_assert(sizeof(group_method_names) / sizeof(group_method_names[0]) == DP_GROUP_METHOD_COUNT,
               "group_method_names");

const char *dp_group_method_name(dp_group_method m) {
    return (unsigned)m < DP_GROUP_METHOD_COUNT ? group_method_names[m] : "?";
}

int dp_group_method_from_name(const char *name, dp_group_method *out) {
    for (int m = 0; m < DP_GROUP_METHOD_COUNT; m++)
        if (strcmp(name, group_method_names[m]) == 0) {
            *out = (dp_group_method)m;
            return 0;
        }
    return -1;
}

dp_group_options dp_group_options_default(void) {
    dp_group_options o;
    memset(&o, 0, sizeof o);
    o.n_groups = 64;
    o.seed = 1;
    return o;
}

/* An op's compute: seconds on the reference device, else its flops. */
static double op_compute(const dp_graph *g, int32_t op, const dp_device *ref) {
    return ref ? dp_cost_op_seconds(g, op, ref) : g->ops[op].flops;
}

/* ---- colocation: union-find over ops -------------------------------------- */

/* Joins the sets of a and b unless their constraints conflict (when `force`
 * is 0; with `strict` a constrained set and an unconstrained one conflict
 * too); the joined set keeps the constraint of either. Returns 1 if joined. */
static int uf_union(int32_t *parent, int32_t *size, dp_devcon *con, int32_t a, int32_t b, int force, int strict) {
    a = dp_uf_find(parent, a);
    b = dp_uf_find(parent, b);
    if (a == b) return 0;
    dp_devcon ca = con[a], cb = con[b];
    if (!force && ca.kind != DP_DEVCON_NONE && cb.kind != DP_DEVCON_NONE &&
        (ca.kind != cb.kind || ca.index != cb.index))
        return 0;
    if (!force && strict && (ca.kind == DP_DEVCON_NONE) != (cb.kind == DP_DEVCON_NONE)) return 0;
    if (size[a] < size[b]) {
        int32_t t = a;
        a = b;
        b = t;
    }
    parent[b] = a;
    size[a] += size[b];
    if (con[a].kind == DP_DEVCON_NONE) con[a] = con[b];
    return 1;
}

/* TensorFlow's colocation groups, then ColocRL's rule: an op whose outputs
 * are all consumed by one single other op joins that op's group. With a
 * union-find the rule reaches its fixed point in one pass over the ops: a
 * chain whose every op feeds only the next collapses into one group. Two
 * groups whose ops carry different device constraints are not joined by the
 * rule (so every group can be placed); with `strict` (keep_unconstrained)
 * neither are a constrained group and an unconstrained one. Ops marked in
 * `outside` (may be NULL) are neither joined by the rule nor counted as
 * consumers. Fills set[op] with its root. */
static dp_status group_colocation(const dp_graph *g, const dp_units *u, int strict, const uint8_t *outside,
                                  int32_t *set, dp_error *err) {
    int32_t n = g->n_ops;
    int32_t *size = malloc((size_t)n * sizeof(int32_t));
    dp_devcon *con = malloc((size_t)n * sizeof(dp_devcon));
    if (!size || !con) {
        free(size);
        free(con);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (colocation grouping of %d ops)", n);
    }
    for (int32_t i = 0; i < n; i++) {
        set[i] = i;
        size[i] = 1;
        con[i] = g->ops[i].device;
    }
    for (int32_t k = 0; k < u->n_units; k++)
        for (int32_t j = u->first[k] + 1; j < u->first[k + 1]; j++)
            uf_union(set, size, con, u->members[u->first[k]], u->members[j], 1, 0);
    for (int32_t op = 0; op < n; op++) {
        int32_t only = -1, many = 0;
        if (outside && outside[op]) continue;
        for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1] && !many; t++)
            for (int64_t x = g->consumers_at[t]; x < g->consumers_at[t + 1]; x++) {
                int32_t c = g->consumers[x];
                if (outside && outside[c]) continue;
                if (only < 0) only = c;
                else if (c != only) {
                    many = 1;
                    break;
                }
            }
        if (!many && only >= 0 && only != op) uf_union(set, size, con, op, only, 0, strict);
    }
    for (int32_t i = 0; i < n; i++) set[i] = dp_uf_find(set, i);
    free(size);
    free(con);
    return DP_STATUS_OK;
}

/* ---- partitions of the units ---------------------------------------------- */

/* Gives every empty part one vertex of the part with the most vertices
 * (METIS and Scotch may leave parts empty on small or lopsided graphs). */
static dp_status fill_empty_parts(int32_t n, int32_t k, int32_t *part, dp_error *err) {
    int32_t *count = calloc((size_t)k, sizeof(int32_t));
    int32_t *last = malloc((size_t)k * sizeof(int32_t)); /* a cursor per part: next vertex to give away */
    if (!count || !last) {
        free(count);
        free(last);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
    }
    for (int32_t v = 0; v < n; v++) count[part[v]]++;
    for (int32_t p = 0; p < k; p++) last[p] = n - 1;
    for (int32_t e = 0; e < k; e++) {
        if (count[e]) continue;
        int32_t big = 0;
        for (int32_t p = 1; p < k; p++)
            if (count[p] > count[big]) big = p;
        assert(count[big] >= 2);
        while (part[last[big]] != big) last[big]--; /* the highest-numbered vertex of big */
        part[last[big]] = e;
        count[big]--;
        count[e] = 1;
    }
    free(count);
    free(last);
    return DP_STATUS_OK;
}

/* Partitions the units into min(n_groups, units) parts (metis, scotch,
 * fluid, random): fills unit_part[u->n_units]. */
static dp_status group_units(dp_group_method m, const dp_graph *g, const dp_group_options *opt,
                             const dp_units *u, int32_t *unit_part, dp_error *err) {
    int32_t nu = u->n_units, k = opt->n_groups < nu ? opt->n_groups : nu;
    if (m == DP_GROUP_METHOD_RANDOM) {
        /* k random units seed the k groups (none empty); the rest are uniform */
        int32_t *perm = malloc((size_t)nu * sizeof(int32_t));
        if (!perm) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        dp_rng rng;
        dp_rng_seed(&rng, opt->seed);
        for (int32_t i = 0; i < nu; i++) perm[i] = i;
        for (int32_t i = 0; i < k; i++) {
            int32_t j = i + (int32_t)dp_rng_below(&rng, (uint64_t)(nu - i));
            int32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
            unit_part[perm[i]] = i;
        }
        for (int32_t i = k; i < nu; i++) unit_part[perm[i]] = (int32_t)dp_rng_below(&rng, (uint64_t)k);
        free(perm);
        return DP_STATUS_OK;
    }
    double *op_w = malloc((size_t)g->n_ops * sizeof(double));
    if (!op_w) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
    for (int32_t i = 0; i < g->n_ops; i++) op_w[i] = op_compute(g, i, opt->reference);
    place_wgraph w;
    dp_status st = place_wgraph_build(&w, g, u->unit_of, nu, op_w, err);
    free(op_w);
    if (st) return st;
    if (m == DP_GROUP_METHOD_FLUID) st = place_fluid(&w, k, opt->seed, unit_part, err);
    else if (m == DP_GROUP_METHOD_METIS) st = place_metis_part(&w, k, NULL, opt->seed, unit_part, err);
    else st = place_scotch_map(&w, k, NULL, NULL, opt->seed, unit_part, err);
    if (!st && m != DP_GROUP_METHOD_FLUID) st = fill_empty_parts(nu, k, unit_part, err);
    place_wgraph_free(&w);
    return st;
}

/* Renumbers ids so that groups are 0.. in the order of their first op. */
static dp_status renumber(int32_t n, int32_t id_range, int32_t *ids, int32_t *n_groups, dp_error *err) {
    int32_t *map = malloc((size_t)id_range * sizeof(int32_t));
    if (!map) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
    for (int32_t i = 0; i < id_range; i++) map[i] = -1;
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        if (map[ids[i]] < 0) map[ids[i]] = k++;
        ids[i] = map[ids[i]];
    }
    *n_groups = k;
    free(map);
    return DP_STATUS_OK;
}

dp_status dp_group_run(dp_group_method m, const dp_graph *g, const dp_group_options *opt, int32_t *out,
                       int32_t *n_groups, dp_error *err) {
    dp_group_options o = opt ? *opt : dp_group_options_default();
    if ((unsigned)m >= DP_GROUP_METHOD_COUNT)
        return dp_error_set(err, DP_STATUS_INVALID, "grouping method %d out of range", (int)m);
    if (m != DP_GROUP_METHOD_COLOCATION && o.n_groups < 1)
        return dp_error_set(err, DP_STATUS_INVALID, "group count %d: must be at least 1", o.n_groups);
    assert(g->finalized);
    dp_units u;
    dp_status st = dp_units_init(&u, g, err);
    if (st) return st;
    if (m == DP_GROUP_METHOD_COLOCATION) {
        st = group_colocation(g, &u, o.keep_unconstrained, o.outside, out, err);
        if (!st) st = renumber(g->n_ops, g->n_ops, out, n_groups, err);
    } else {
        int32_t *unit_part = malloc((size_t)u.n_units * sizeof(int32_t));
        if (!unit_part) st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        if (!st) st = group_units(m, g, &o, &u, unit_part, err);
        if (!st) {
            dp_units_expand(&u, unit_part, out);
            st = renumber(g->n_ops, u.n_units, out, n_groups, err);
        }
        free(unit_part);
    }
    dp_units_free(&u);
    return st;
}

/* ---- figures and file ---------------------------------------------------- */

/* qsort order of int32_t, ascending. */
static int cmp_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

dp_status dp_group_get_stats(const dp_graph *g, const int32_t *groups, int32_t n_groups, const dp_device *reference,
                             dp_group_stats *out, dp_error *err) {
    memset(out, 0, sizeof *out);
    if (n_groups < 1) return dp_error_set(err, DP_STATUS_INVALID, "group count %d: must be at least 1", n_groups);
    for (int32_t i = 0; i < g->n_ops; i++)
        if (groups[i] < 0 || groups[i] >= n_groups)
            return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": group %d out of range 0..%d", i,
                                g->ops[i].name, groups[i], n_groups - 1);
    int32_t *count = calloc((size_t)n_groups, sizeof(int32_t));
    double *compute = calloc((size_t)n_groups, sizeof(double));
    int64_t *seen = malloc((size_t)n_groups * sizeof(int64_t)); /* last tensor counted per group */
    if (!count || !compute || !seen) {
        free(count);
        free(compute);
        free(seen);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
    }
    for (int32_t p = 0; p < n_groups; p++) seen[p] = -1;
    for (int32_t i = 0; i < g->n_ops; i++) {
        count[groups[i]]++;
        double c = op_compute(g, i, reference);
        compute[groups[i]] += c;
        out->compute_total += c;
        for (int64_t t = g->tensor_at[i]; t < g->tensor_at[i + 1]; t++)
            for (int64_t x = g->consumers_at[t]; x < g->consumers_at[t + 1]; x++) {
                int32_t gc = groups[g->consumers[x]];
                if (gc == groups[i]) continue;
                out->cut_edges++;
                if (seen[gc] == t) continue;
                seen[gc] = t;
                out->cut_bytes += place_tensor_bytes(g, t);
            }
    }
    for (int32_t p = 0; p < n_groups; p++)
        if (compute[p] > out->compute_max) out->compute_max = compute[p];
    out->n_groups = n_groups;
    out->imbalance = out->compute_total > 0 ? out->compute_max / (out->compute_total / n_groups) : 1.0;
    qsort(count, (size_t)n_groups, sizeof(int32_t), cmp_int32);
    out->min_ops = count[0];
    out->median_ops = count[n_groups / 2];
    out->max_ops = count[n_groups - 1];
    free(count);
    free(compute);
    free(seen);
    return DP_STATUS_OK;
}

dp_status dp_group_write_file(const char *path, const dp_graph *g, const char *method, const int32_t *groups,
                              int32_t n_groups, dp_error *err) {
    for (int32_t i = 0; i < g->n_ops; i++)
        if (groups[i] < 0 || groups[i] >= n_groups)
            return dp_error_set(err, DP_STATUS_INVALID, "%s: op %d has group %d out of range 0..%d", path, i,
                                groups[i], n_groups - 1);
    dp_atomic_file af;
    dp_status st = dp_atomic_open(&af, path, err);
    if (st) return st;
    fprintf(af.f, "{\"format\": \"dplace-groups\", \"version\": 1, \"graph\": ");
    json_t *s = json_string(g->name ? g->name : "");
    json_dumpf(s, af.f, JSON_ENCODE_ANY);
    json_decref(s);
    if (method) {
        fprintf(af.f, ", \"method\": ");
        s = json_string(method);
        json_dumpf(s, af.f, JSON_ENCODE_ANY);
        json_decref(s);
    }
    fprintf(af.f, ",\n \"n_groups\": %d,\n \"groups\": [", n_groups);
    for (int32_t i = 0; i < g->n_ops; i++) fprintf(af.f, "%s%d", i ? (i % 32 ? "," : ",\n  ") : "", groups[i]);
    fprintf(af.f, "]}\n");
    return dp_atomic_commit(&af, err);
}
