/* accel-sequential and accel-balanced: Hugging Face accelerate's
 * infer_auto_device_map (src/accelerate/utils/modeling.py), the placement
 * a PyTorch user makes today with device_map="sequential" or "balanced",
 * on the modules of an exported step (docs/baselines.md, "accelerate").
 *
 * accelerate walks the model's modules in their order of definition and
 * puts each on the current device while the device's budget holds its
 * parameter and buffer bytes; a module that does not fit is replaced by its
 * children when it has some, else the walk moves on to the next device (it
 * never goes back). "sequential" gives each GPU its whole memory;
 * "balanced" (get_balanced_memory) gives every GPU but the last the model's
 * bytes over the GPU count plus 1.25 times the mean size of the leaf
 * modules, the last GPU its whole memory. What is left goes to the CPU. */
#include <stdlib.h>
#include <string.h>

#include "dplace/place.h"
#include "place/place_internal.h"

/* A node of the module tree: the path prefix path[k][0..len) of unit k's
 * module path; own: the prefix's own ops alone (path exactly the prefix),
 * else every unit whose path is the prefix or under it. */
typedef struct accel_node {
    int32_t k, len, own;
} accel_node;

typedef struct accel {
    dp_units u;
    int32_t n;        /* units                                  */
    char **path;      /* [n] each unit's module path            */
    uint64_t *bytes;  /* [n] each unit's parameter bytes        */
    accel_node *todo; /* the walk's stack: its top is the front */
    int32_t n_todo, cap;
} accel;

/* Whether unit j is in node x. */
static int node_has(const accel *a, accel_node x, int32_t j) {
    const char *p = a->path[j], *q = a->path[x.k];
    if (strncmp(p, q, (size_t)x.len)) return 0;
    return x.own ? p[x.len] == '\0' : p[x.len] == '\0' || p[x.len] == '.';
}

/* The end of the path component of unit k's path that starts at `from`. */
static int32_t component_end(const accel *a, int32_t k, int32_t from) {
    const char *p = a->path[k];
    int32_t e = from;
    while (p[e] && p[e] != '.') e++;
    return e;
}

static uint64_t node_bytes(const accel *a, accel_node x) {
    uint64_t b = 0;
    for (int32_t j = 0; j < a->n; j++)
        if (node_has(a, x, j)) b += a->bytes[j];
    return b;
}

/* Whether nodes x and y name the same prefix and kind. */
static int node_same(const accel *a, accel_node x, accel_node y) {
    return x.own == y.own && x.len == y.len && !strncmp(a->path[x.k], a->path[y.k], (size_t)x.len);
}

static dp_status push(accel *a, accel_node x, dp_error *err) {
    if (a->n_todo == a->cap) {
        int32_t cap = a->cap ? 2 * a->cap : 64;
        accel_node *t = realloc(a->todo, (size_t)cap * sizeof *t);
        if (!t) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (module walk of %d units)", a->n);
        a->todo = t, a->cap = cap;
    }
    a->todo[a->n_todo++] = x;
    return DP_STATUS_OK;
}

/* The children of x (x.own 0; from = where they start in the path, x.len
 * + 1, or 0 for the model itself) in their order of first appearance, the
 * prefix's own ops one child among them, into kids (n entries at most);
 * returns their count. */
static int32_t node_children(const accel *a, accel_node x, int32_t from, accel_node *kids) {
    int32_t nk = 0;
    for (int32_t j = 0; j < a->n; j++) {
        if (from > 0 && !node_has(a, x, j)) continue;
        accel_node c = (int32_t)strlen(a->path[j]) == x.len && from > 0 ? (accel_node){j, x.len, 1}
                                                                         : (accel_node){j, component_end(a, j, from), 0};
        int seen = 0;
        for (int32_t i = 0; i < nk && !seen; i++) seen = node_same(a, kids[i], c);
        if (!seen) kids[nk++] = c;
    }
    return nk;
}

/* Pushes the children of x so that the first is on top. */
static dp_status push_children(accel *a, accel_node x, int32_t from, accel_node *kids, dp_error *err) {
    int32_t nk = node_children(a, x, from, kids);
    dp_status st = DP_STATUS_OK;
    for (int32_t i = nk - 1; i >= 0 && !st; i--) st = push(a, kids[i], err);
    return st;
}

static void accel_free(accel *a) {
    for (int32_t k = 0; a->path && k < a->n; k++) free(a->path[k]);
    free(a->path), free(a->bytes), free(a->todo);
    dp_units_free(&a->u);
}

/* The finest module units of g, their paths and parameter bytes. */
static dp_status accel_init(accel *a, const dp_graph *g, dp_error *err) {
    memset(a, 0, sizeof *a);
    dp_status st = dp_units_init_spec(&a->u, g, (dp_units_spec){DP_UNITS_MODULE, 0}, err);
    if (st) return st;
    a->n = a->u.n_units;
    a->path = calloc((size_t)a->n + 1, sizeof *a->path);
    a->bytes = calloc((size_t)a->n + 1, sizeof *a->bytes);
    if (!a->path || !a->bytes) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (%d modules)", a->n);
    char buf[DP_GRAPH_NAME_MAX + 1];
    for (int32_t k = 0; k < a->n; k++) {
        dp_units_module_path(g, a->u.members[a->u.first[k]], 0, buf, sizeof buf);
        if (!(a->path[k] = strdup(buf))) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (%d modules)", a->n);
        for (int32_t j = a->u.first[k]; j < a->u.first[k + 1]; j++) a->bytes[k] += g->ops[a->u.members[j]].param_bytes;
    }
    return DP_STATUS_OK;
}

/* get_balanced_memory's margin: 1.25 times the mean bytes of the leaf
 * modules (those with bytes and no module with bytes under them). */
static uint64_t leaf_margin(const accel *a) {
    uint64_t sum = 0;
    int32_t n = 0;
    for (int32_t k = 0; k < a->n; k++) {
        if (!a->bytes[k]) continue;
        size_t len = strlen(a->path[k]);
        int leaf = 1;
        for (int32_t j = 0; j < a->n && leaf; j++)
            leaf = !(j != k && a->bytes[j] && !strncmp(a->path[j], a->path[k], len) && a->path[j][len] == '.');
        if (leaf) sum += a->bytes[k], n++;
    }
    return n ? (uint64_t)(1.25 * (double)(sum / (uint64_t)n)) : 0;
}

/* The walk: fills unit_dev [n] with a device per unit. */
static dp_status accel_walk(accel *a, const dp_devices *ds, int balanced, int32_t *unit_dev, dp_error *err) {
    int32_t gpu[DP_MAX_DEVICES], n_gpus = 0;
    uint64_t budget[DP_MAX_DEVICES], used[DP_MAX_DEVICES] = {0};
    for (int32_t d; (d = dp_devices_nth(ds, DP_DEVKIND_GPU, n_gpus)) >= 0;) gpu[n_gpus++] = d;
    uint64_t total = 0;
    for (int32_t k = 0; k < a->n; k++) total += a->bytes[k];
    uint64_t per = balanced ? total / (uint64_t)n_gpus + leaf_margin(a) : 0;
    for (int32_t i = 0; i < n_gpus; i++) {
        budget[i] = ds->devices[gpu[i]].memory_bytes;
        if (balanced && n_gpus == 1) budget[i] = (uint64_t)(0.9 * (double)budget[i]);
        else if (balanced && i < n_gpus - 1 && per < budget[i]) budget[i] = per;
    }
    int32_t cpu = dp_devices_nth(ds, DP_DEVKIND_CPU, 0), rest = cpu >= 0 ? cpu : gpu[n_gpus - 1];
    accel_node *kids = malloc(((size_t)a->n + 1) * sizeof *kids);
    if (!kids) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (%d modules)", a->n);
    dp_status st = push_children(a, (accel_node){0, 0, 0}, 0, kids, err);
    int32_t cur = 0;
    while (!st && a->n_todo > 0) {
        accel_node x = a->todo[--a->n_todo];
        uint64_t b = node_bytes(a, x);
        if (cur < n_gpus && used[cur] + b > budget[cur]) {
            /* accelerate splits a module with submodules; its own ops alone do not split */
            int splits = 0;
            int32_t nk = x.own ? 0 : node_children(a, x, x.len + 1, kids);
            for (int32_t i = 0; i < nk && !splits; i++) splits = !kids[i].own;
            if (splits) {
                st = push_children(a, x, x.len + 1, kids, err);
            } else {
                cur++;
                st = push(a, x, err);
            }
            continue;
        }
        int32_t dev = cur < n_gpus ? gpu[cur] : rest;
        if (cur < n_gpus) used[cur] += b;
        for (int32_t j = 0; j < a->n; j++)
            if (node_has(a, x, j)) unit_dev[j] = dev;
    }
    free(kids);
    return st;
}

/* accelerate's walk with sequential or balanced budgets (above). */
static dp_status place_accel(const dp_graph *g, const dp_devices *ds, int balanced, int32_t *out, dp_error *err) {
    if (!dp_units_has_modules(g))
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "graph \"%s\" needs module scopes: a PyTorch export",
                            g->name ? g->name : "");
    if (dp_devices_nth(ds, DP_DEVKIND_GPU, 0) < 0)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "device set \"%s\" has no GPU", ds->name);
    accel a;
    dp_status st = accel_init(&a, g, err);
    int32_t *unit_dev = st ? NULL : malloc(((size_t)a.n + 1) * sizeof(int32_t));
    dp_mask *mask = st ? NULL : malloc(((size_t)a.n + 1) * sizeof(dp_mask));
    if (!st && (!unit_dev || !mask)) st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (%d modules)", a.n);
    if (!st) st = accel_walk(&a, ds, balanced, unit_dev, err);
    if (!st) st = dp_units_masks(&a.u, g, ds, dp_mask_all(ds), mask, err);
    if (!st) {
        /* a unit with an op its device cannot run (a CPU-only op) goes where
         * it may, a GPU first, as TensorFlow's soft placement would */
        dp_mask gpus = dp_mask_gpus(ds);
        for (int32_t k = 0; k < a.n; k++)
            if (!(mask[k] & dp_mask_bit(unit_dev[k])))
                unit_dev[k] = dp_mask_first((mask[k] & gpus) ? (mask[k] & gpus) : mask[k]);
        dp_units_expand(&a.u, unit_dev, out);
    }
    free(unit_dev), free(mask);
    accel_free(&a);
    return st;
}

dp_status dp_place_accel_sequential(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt,
                                    int32_t *out, dp_error *err) {
    (void)opt;
    return place_accel(g, ds, 0, out, err);
}

dp_status dp_place_accel_balanced(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                                  dp_error *err) {
    (void)opt;
    return place_accel(g, ds, 1, out, err);
}
