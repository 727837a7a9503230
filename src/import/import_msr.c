/* Importer of msr-fiddle/dnn-partitioning graphs (NeurIPS 2020, Tarnawski et
 * al.): nodes with CPU and accelerator latencies, memory, colorClass and a
 * backward flag; edges with a transfer cost (and often a size). The mapping
 * to dplace-graph and dplace-devices is documented in docs/import.md. */
#include "dplace/import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_util.h"
#include "common/util.h"

/* Largest byte count of one tensor or parameter (the graph's own cap). */
#define MSR_MAX_BYTES ((double)(1ULL << 50))
/* Capacity given to the host CPU: the MSR model does not bound CPU memory. */
#define MSR_CPU_MEMORY (1ULL << 40)
/* Relative tolerance on equal costs and on size/cost agreeing with the bandwidth. */
#define MSR_COST_RTOL 1e-6
#define MSR_BANDWIDTH_RTOL 0.01

typedef struct msr_node {
    int64_t id, color, layer;
    double cpu, fpga; /* file units */
    uint64_t bytes;   /* ceil(size) */
    const char *name; /* NULL: none; points into the JSON document */
    uint8_t fpga_ok, backward, has_color, has_layer;
} msr_node;

typedef struct msr_edge {
    int32_t src, dst; /* node indices */
    double cost;      /* file units */
    double size;      /* bytes as in the file; < 0 when absent */
    uint64_t bytes;   /* what the dplace output carries */
    int32_t slot;     /* output slot of src */
} msr_edge;

typedef struct id_index {
    int64_t id;
    int32_t idx;
} id_index;

/* Everything read from one file, before the dplace graph is built. */
typedef struct msr_file {
    const char *what;
    double max_size;
    int64_t max_fpgas, max_cpus;
    int32_t n_nodes, n_edges;
    msr_node *nodes;
    msr_edge *edges;
    id_index *ids; /* sorted by id */
    /* CSR of edge indices by source and by destination, in file order */
    int32_t *out_at, *out_edges, *in_at, *in_edges;
    /* output slots: out_bytes[slot_at[i] .. slot_at[i+1]) */
    int32_t *slot_at;
    uint64_t *slot_bytes;
} msr_file;

static void msr_file_free(msr_file *f) {
    free(f->nodes);
    free(f->edges);
    free(f->ids);
    free(f->out_at);
    free(f->out_edges);
    free(f->in_at);
    free(f->in_edges);
    free(f->slot_at);
    free(f->slot_bytes);
}

static dp_status oom(dp_error *err, const char *what) {
    return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", what);
}

dp_import_msr_options dp_import_msr_options_default(void) {
    dp_import_msr_options o = {1e-3, 0.0, DP_IMPORT_EDGE_BYTES_SIZE, NULL};
    return o;
}

/* ---- field readers ---------------------------------------------------------------- */

/* A required flag: true/false or the integers 0/1 (both spellings occur). */
static dp_status get_flag(const json_t *obj, const char *key, uint8_t *out, const char *ctx, dp_error *err) {
    const json_t *v = json_object_get(obj, key);
    if (!v) return dp_error_set(err, DP_STATUS_PARSE, "%s: missing field \"%s\"", ctx, key);
    if (json_is_boolean(v)) {
        *out = json_is_true(v) ? 1 : 0;
        return DP_STATUS_OK;
    }
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1)) {
        *out = (uint8_t)json_integer_value(v);
        return DP_STATUS_OK;
    }
    if (json_is_integer(v))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"%s\" must be true, false, 0 or 1, got %lld", ctx, key,
                            (long long)json_integer_value(v));
    return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"%s\" must be true, false, 0 or 1, got %s", ctx, key,
                        dp_json_type_name(v));
}

/* A byte count given as a (possibly fractional) number >= 0: rounded up. */
static dp_status get_bytes(const json_t *obj, const char *key, double *raw, uint64_t *out, const char *ctx,
                           dp_error *err) {
    double x = -1;
    dp_status st = dp_json_get_number(obj, key, 0, &x, 0, ctx, err);
    if (st) return st;
    *raw = x;
    if (x < 0) return DP_STATUS_OK; /* absent */
    if (x > MSR_MAX_BYTES)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"%s\" (%g bytes) is over the limit of 2^50", ctx, key,
                            x);
    *out = (uint64_t)ceil(x);
    return DP_STATUS_OK;
}

static int cmp_id(const void *a, const void *b) {
    const id_index *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of the node with this id, -1 when absent. */
static int32_t find_id(const id_index *ids, int32_t n, int64_t id) {
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (ids[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && ids[lo].id == id ? ids[lo].idx : -1;
}

/* ---- reading the document ---------------------------------------------------------- */

static dp_status read_header(const json_t *root, msr_file *f, const json_t **nodes, const json_t **edges,
                             dp_error *err) {
    const char *what = f->what;
    if (!json_is_object(root))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: expected a JSON object at the top, got %s", what,
                            dp_json_type_name(root));
    const json_t *fmt = json_object_get(root, "format");
    if (json_is_string(fmt))
        return dp_error_set(err, DP_STATUS_PARSE,
                            "%s: this is a \"%s\" file, not an MSR dnn-partitioning graph (an object with maxFPGAs, "
                            "maxCPUs, maxSizePerFPGA, nodes and edges)",
                            what, json_string_value(fmt));
    if (!json_object_get(root, "nodes") && json_object_get(root, "fpgas"))
        return dp_error_set(err, DP_STATUS_PARSE,
                            "%s: missing field \"nodes\"; this looks like a split (cpus/fpgas), not a graph", what);
    dp_status st;
    if ((st = dp_json_get_number(root, "maxSizePerFPGA", 1, &f->max_size, 0, what, err))) return st;
    if (f->max_size < 1 || f->max_size > (double)(1ULL << 56))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"maxSizePerFPGA\" must be in 1..2^56 bytes, got %g", what,
                            f->max_size);
    if ((st = dp_json_get_int(root, "maxFPGAs", 1, &f->max_fpgas, 0, DP_MAX_DEVICES - 1, what, err))) return st;
    if ((st = dp_json_get_int(root, "maxCPUs", 1, &f->max_cpus, 0, INT32_MAX, what, err))) return st;
    if ((st = dp_json_get_array(root, "nodes", 1, nodes, what, err))) return st;
    if ((st = dp_json_get_array(root, "edges", 1, edges, what, err))) return st;
    if (json_array_size(*nodes) == 0) return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"nodes\" is empty", what);
    if (json_array_size(*nodes) >= INT32_MAX / 2 || json_array_size(*edges) >= INT32_MAX / 2)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: too many nodes or edges", what);
    return DP_STATUS_OK;
}

static dp_status read_nodes(const json_t *arr, msr_file *f, dp_error *err) {
    int32_t n = (int32_t)json_array_size(arr);
    f->nodes = calloc((size_t)n, sizeof(msr_node));
    f->ids = malloc((size_t)n * sizeof(id_index));
    if (!f->nodes || !f->ids) return oom(err, f->what);
    f->n_nodes = n;
    char ctx[600];
    for (int32_t i = 0; i < n; i++) {
        const json_t *o = json_array_get(arr, (size_t)i);
        msr_node *nd = &f->nodes[i];
        snprintf(ctx, sizeof ctx, "%s: nodes[%d]", f->what, i);
        if (!json_is_object(o))
            return dp_error_set(err, DP_STATUS_PARSE, "%s: must be an object, got %s", ctx, dp_json_type_name(o));
        dp_status st = dp_json_get_int(o, "id", 1, &nd->id, INT32_MIN, INT32_MAX, ctx, err);
        if (st) return st;
        snprintf(ctx, sizeof ctx, "%s: nodes[%d] (id %lld)", f->what, i, (long long)nd->id);
        double size_raw = -1;
        if ((st = get_flag(o, "supportedOnFpga", &nd->fpga_ok, ctx, err))) return st;
        if ((st = dp_json_get_number(o, "cpuLatency", 1, &nd->cpu, 0, ctx, err))) return st;
        if ((st = dp_json_get_number(o, "fpgaLatency", 1, &nd->fpga, 0, ctx, err))) return st;
        if ((st = get_flag(o, "isBackwardNode", &nd->backward, ctx, err))) return st;
        if ((st = get_bytes(o, "size", &size_raw, &nd->bytes, ctx, err))) return st;
        if (json_object_get(o, "colorClass")) {
            if ((st = dp_json_get_int(o, "colorClass", 1, &nd->color, INT64_MIN + 1, INT64_MAX, ctx, err))) return st;
            nd->has_color = 1;
        }
        if (json_object_get(o, "layerId")) {
            if ((st = dp_json_get_int(o, "layerId", 1, &nd->layer, INT64_MIN + 1, INT64_MAX, ctx, err))) return st;
            nd->has_layer = 1;
        }
        if ((st = dp_json_get_string(o, "name", 0, &nd->name, ctx, err))) return st;
        if (nd->name && !nd->name[0]) nd->name = NULL;
        f->ids[i] = (id_index){nd->id, i};
    }
    qsort(f->ids, (size_t)n, sizeof(id_index), cmp_id);
    for (int32_t k = 1; k < n; k++)
        if (f->ids[k].id == f->ids[k - 1].id)
            return dp_error_set(err, DP_STATUS_PARSE, "%s: nodes[%d]: id %lld is also the id of nodes[%d]", f->what,
                                f->ids[k].idx, (long long)f->ids[k].id, f->ids[k - 1].idx);
    return DP_STATUS_OK;
}

/* Reads one of an edge's two endpoint fields as a node index. */
static dp_status read_end(const json_t *o, const char *key, const msr_file *f, int32_t *out, const char *ctx,
                          dp_error *err) {
    int64_t id = 0;
    dp_status st = dp_json_get_int(o, key, 1, &id, INT64_MIN + 1, INT64_MAX, ctx, err);
    if (st) return st;
    *out = find_id(f->ids, f->n_nodes, id);
    if (*out < 0)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: %s %lld is not the id of any node", ctx, key, (long long)id);
    return DP_STATUS_OK;
}

static dp_status read_edges(const json_t *arr, msr_file *f, dp_error *err) {
    int32_t m = (int32_t)json_array_size(arr);
    f->edges = calloc((size_t)m + 1, sizeof(msr_edge));
    if (!f->edges) return oom(err, f->what);
    f->n_edges = m;
    char ctx[600];
    for (int32_t e = 0; e < m; e++) {
        const json_t *o = json_array_get(arr, (size_t)e);
        msr_edge *ed = &f->edges[e];
        snprintf(ctx, sizeof ctx, "%s: edges[%d]", f->what, e);
        if (!json_is_object(o))
            return dp_error_set(err, DP_STATUS_PARSE, "%s: must be an object, got %s", ctx, dp_json_type_name(o));
        dp_status st;
        if ((st = read_end(o, "sourceId", f, &ed->src, ctx, err))) return st;
        if ((st = read_end(o, "destId", f, &ed->dst, ctx, err))) return st;
        if (ed->src == ed->dst)
            return dp_error_set(err, DP_STATUS_PARSE, "%s: sourceId and destId are both %lld (a self-loop)", ctx,
                                (long long)f->nodes[ed->src].id);
        if ((st = dp_json_get_number(o, "cost", 1, &ed->cost, 0, ctx, err))) return st;
        ed->size = -1;
        if ((st = get_bytes(o, "size", &ed->size, &ed->bytes, ctx, err))) return st;
    }
    return DP_STATUS_OK;
}

/* Builds the CSR lists of edges by source and by destination (file order). */
static dp_status build_adjacency(msr_file *f, dp_error *err) {
    int32_t n = f->n_nodes, m = f->n_edges;
    f->out_at = calloc((size_t)n + 1, sizeof(int32_t));
    f->in_at = calloc((size_t)n + 1, sizeof(int32_t));
    f->out_edges = malloc(((size_t)m + 1) * sizeof(int32_t));
    f->in_edges = malloc(((size_t)m + 1) * sizeof(int32_t));
    int32_t *fill = malloc(((size_t)n + 1) * sizeof(int32_t));
    if (!f->out_at || !f->in_at || !f->out_edges || !f->in_edges || !fill) {
        free(fill);
        return oom(err, f->what);
    }
    for (int32_t e = 0; e < m; e++) {
        f->out_at[f->edges[e].src + 1]++;
        f->in_at[f->edges[e].dst + 1]++;
    }
    for (int32_t i = 0; i < n; i++) {
        f->out_at[i + 1] += f->out_at[i];
        f->in_at[i + 1] += f->in_at[i];
    }
    memcpy(fill, f->out_at, (size_t)n * sizeof(int32_t));
    for (int32_t e = 0; e < m; e++) f->out_edges[fill[f->edges[e].src]++] = e;
    memcpy(fill, f->in_at, (size_t)n * sizeof(int32_t));
    for (int32_t e = 0; e < m; e++) f->in_edges[fill[f->edges[e].dst]++] = e;
    free(fill);
    return DP_STATUS_OK;
}

/* The MSR model charges one transfer per node output: every edge leaving a
 * node must carry the same cost (their tools reject files where it does not). */
static dp_status check_costs(const msr_file *f, dp_error *err) {
    for (int32_t i = 0; i < f->n_nodes; i++) {
        if (f->out_at[i] == f->out_at[i + 1]) continue;
        int32_t e0 = f->out_edges[f->out_at[i]];
        double c0 = f->edges[e0].cost;
        for (int32_t k = f->out_at[i] + 1; k < f->out_at[i + 1]; k++) {
            int32_t e = f->out_edges[k];
            double c = f->edges[e].cost;
            if (fabs(c - c0) > MSR_COST_RTOL * fmax(fabs(c), fabs(c0)))
                return dp_error_set(err, DP_STATUS_PARSE,
                                    "%s: edges[%d]: cost %.17g differs from cost %.17g of edges[%d]; both leave node "
                                    "%lld, and the edges leaving one node must share one cost",
                                    f->what, e, c, c0, e0, (long long)f->nodes[i].id);
        }
    }
    return DP_STATUS_OK;
}

/* Kahn's algorithm over the file's edges; on a cycle, one message listing the
 * node ids on it. Nodes left over all have a predecessor left over, so
 * walking predecessors must revisit a node. */
static dp_status check_acyclic(const msr_file *f, dp_error *err) {
    int32_t n = f->n_nodes;
    int32_t *indeg = malloc((size_t)n * sizeof(int32_t));
    int32_t *queue = malloc((size_t)n * sizeof(int32_t));
    if (!indeg || !queue) {
        free(indeg);
        free(queue);
        return oom(err, f->what);
    }
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < n; i++) {
        indeg[i] = f->in_at[i + 1] - f->in_at[i];
        if (!indeg[i]) queue[tail++] = i;
    }
    while (head < tail) {
        int32_t u = queue[head++];
        for (int32_t k = f->out_at[u]; k < f->out_at[u + 1]; k++) {
            int32_t v = f->edges[f->out_edges[k]].dst;
            if (--indeg[v] == 0) queue[tail++] = v;
        }
    }
    if (tail == n) {
        free(indeg);
        free(queue);
        return DP_STATUS_OK;
    }
    /* queue is free now: reuse it as the walk's path, indeg < 0 marks "seen at -indeg-1" */
    int32_t u = 0;
    while (indeg[u] <= 0) u++;
    int32_t len = 0;
    while (indeg[u] > 0) {
        indeg[u] = -(len + 1);
        queue[len++] = u;
        int32_t next = -1;
        for (int32_t k = f->in_at[u]; k < f->in_at[u + 1] && next < 0; k++) {
            int32_t p = f->edges[f->in_edges[k]].src;
            if (indeg[p] != 0) next = p;
        }
        u = next; /* never -1: u still had unprocessed predecessors */
    }
    int32_t from = -indeg[u] - 1, cyc = len - from;
    char buf[700];
    size_t pos = 0;
    /* the path walks consumer -> producer; print producer -> consumer */
    for (int32_t k = 0; k <= cyc && k <= 12 && pos < sizeof buf - 100; k++) {
        const msr_node *nd = &f->nodes[(k == 0 || k == cyc) ? queue[from] : queue[from + cyc - k]];
        pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%snode %lld", k ? " -> " : "", (long long)nd->id);
        if (nd->name) pos += (size_t)snprintf(buf + pos, sizeof buf - pos, " \"%.40s\"", nd->name);
    }
    if (cyc > 12) snprintf(buf + pos, sizeof buf - pos, " -> ... (%d nodes on the cycle)", cyc);
    free(indeg);
    free(queue);
    return dp_error_set(err, DP_STATUS_PARSE, "%s: the edges form a cycle: %s", f->what, buf);
}

/* Chooses the link bandwidth: the option, else the median of size/cost over
 * the edges that have both (the rate the file's authors turned sizes into
 * costs with), else the default. */
static dp_status choose_bandwidth(const msr_file *f, const dp_import_msr_options *opt, dp_import_msr_info *info,
                                  dp_error *err) {
    info->bandwidth = opt->bandwidth;
    info->bandwidth_from_file = 0;
    if (opt->bandwidth > 0) return DP_STATUS_OK;
    double *r = malloc(((size_t)f->n_edges + 1) * sizeof(double));
    if (!r) return oom(err, f->what);
    int32_t k = 0;
    for (int32_t e = 0; e < f->n_edges; e++) {
        const msr_edge *ed = &f->edges[e];
        double t = ed->cost * opt->time_unit_s;
        if (ed->size > 0 && t > 0 && isfinite(ed->size / t)) r[k++] = ed->size / t;
    }
    if (k == 0) {
        info->bandwidth = DP_IMPORT_MSR_DEFAULT_BANDWIDTH;
    } else {
        qsort(r, (size_t)k, sizeof(double), cmp_double);
        info->bandwidth = k % 2 ? r[k / 2] : 0.5 * (r[k / 2 - 1] + r[k / 2]);
        info->bandwidth_from_file = 1;
    }
    free(r);
    return DP_STATUS_OK;
}

/* Gives every edge its bytes and output slot: one output per distinct byte
 * count among the edges leaving a node (almost always one). */
static dp_status assign_outputs(msr_file *f, const dp_import_msr_options *opt, dp_import_msr_info *info,
                                dp_error *err) {
    double bw = info->bandwidth, unit = opt->time_unit_s;
    for (int32_t e = 0; e < f->n_edges; e++) {
        msr_edge *ed = &f->edges[e];
        double t = ed->cost * unit;
        int from_cost = opt->edge_bytes == DP_IMPORT_EDGE_BYTES_COST || ed->size < 0;
        if (from_cost) {
            double b = t * bw;
            if (!(b <= MSR_MAX_BYTES))
                return dp_error_set(err, DP_STATUS_PARSE,
                                    "%s: edges[%d]: cost %g at %g bytes/s is %g bytes, over the limit of 2^50",
                                    f->what, e, ed->cost, bw, b);
            ed->bytes = (uint64_t)llround(b);
            info->n_edges_bytes_from_cost++;
        } else if (fabs(ed->size / bw - t) > MSR_BANDWIDTH_RTOL * t) {
            info->n_edges_off_bandwidth++;
        }
    }
    f->slot_at = calloc((size_t)f->n_nodes + 1, sizeof(int32_t));
    f->slot_bytes = malloc(((size_t)f->n_edges + 1) * sizeof(uint64_t));
    if (!f->slot_at || !f->slot_bytes) return oom(err, f->what);
    int32_t ns = 0;
    for (int32_t i = 0; i < f->n_nodes; i++) {
        f->slot_at[i] = ns;
        for (int32_t k = f->out_at[i]; k < f->out_at[i + 1]; k++) {
            msr_edge *ed = &f->edges[f->out_edges[k]];
            int32_t s = f->slot_at[i];
            while (s < ns && f->slot_bytes[s] != ed->bytes) s++;
            if (s == ns) f->slot_bytes[ns++] = ed->bytes;
            ed->slot = s - f->slot_at[i];
        }
    }
    f->slot_at[f->n_nodes] = ns;
    return DP_STATUS_OK;
}

/* ---- building the dplace graph and devices ---------------------------------------- */

/* Adds node i as an op under its own name, or "node<id>"; a name already
 * taken gets "#<id>" (then "#<id>.<k>") appended. */
static int32_t add_named_op(dp_graph *g, const msr_node *nd, const char *scope, const char *colocate,
                            dp_error *err) {
    char idbuf[48];
    snprintf(idbuf, sizeof idbuf, "node%lld", (long long)nd->id);
    const char *base = nd->name ? nd->name : idbuf;
    size_t cap = strlen(base) + 64;
    char *name = malloc(cap);
    if (!name) {
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        return -1;
    }
    snprintf(name, cap, "%s", base);
    for (int k = 1; dp_graph_find_op(g, name) >= 0; k++) {
        if (k == 1) snprintf(name, cap, "%s#%lld", base, (long long)nd->id);
        else snprintf(name, cap, "%s#%lld.%d", base, (long long)nd->id, k);
    }
    int32_t op = dp_graph_add_op(g, name, "MSRNode", scope, colocate, err);
    free(name);
    return op;
}

static dp_status build_graph(const msr_file *f, const dp_import_msr_options *opt, const char *gname, dp_graph **out,
                             dp_import_msr_info *info, dp_error *err) {
    int32_t n = f->n_nodes;
    dp_graph *g = dp_graph_init(gname);
    int64_t *colors = malloc(((size_t)n + 1) * sizeof(int64_t));
    if (!g || !colors) {
        dp_graph_free(g);
        free(colors);
        return oom(err, f->what);
    }
    /* colorClasses with two or more nodes become colocation groups */
    int32_t nc = 0;
    for (int32_t i = 0; i < n; i++)
        if (f->nodes[i].has_color) colors[nc++] = f->nodes[i].color;
    qsort(colors, (size_t)nc, sizeof(int64_t), cmp_i64);
    for (int32_t k = 0; k < nc; k++)
        if ((k + 1 < nc && colors[k + 1] == colors[k]) && (k == 0 || colors[k - 1] != colors[k]))
            info->n_colocate_groups++;
    dp_status st = DP_STATUS_OK;
    for (int32_t i = 0; i < n && !st; i++) {
        const msr_node *nd = &f->nodes[i];
        char scope[64], coloc[48];
        if (nd->has_layer)
            snprintf(scope, sizeof scope, "%s/layer%lld", nd->backward ? "backward" : "forward", (long long)nd->layer);
        else snprintf(scope, sizeof scope, "%s", nd->backward ? "backward" : "forward");
        int shared = 0;
        if (nd->has_color) {
            int32_t lo = 0, hi = nc;
            while (lo < hi) {
                int32_t mid = lo + (hi - lo) / 2;
                if (colors[mid] < nd->color) lo = mid + 1;
                else hi = mid;
            }
            shared = lo + 1 < nc && colors[lo + 1] == nd->color;
            snprintf(coloc, sizeof coloc, "cc%lld", (long long)nd->color);
        }
        int32_t op = add_named_op(g, nd, scope, shared ? coloc : NULL, err);
        if (op < 0) {
            st = err ? err->status : DP_STATUS_INVALID;
            break;
        }
        if (!nd->fpga_ok) g->ops[op].device = (dp_devcon){DP_DEVCON_CPU, -1};
        g->ops[op].param_bytes = nd->bytes;
        if ((st = dp_graph_add_cost(g, op, "cpu", nd->cpu * opt->time_unit_s, err))) break;
        if ((st = dp_graph_add_cost(g, op, "gpu", nd->fpga * opt->time_unit_s, err))) break;
        for (int32_t s = f->slot_at[i]; s < f->slot_at[i + 1] && !st; s++)
            st = dp_graph_add_output_bytes(g, op, f->slot_bytes[s], err);
        for (int32_t k = f->in_at[i]; k < f->in_at[i + 1] && !st; k++) {
            const msr_edge *ed = &f->edges[f->in_edges[k]];
            st = dp_graph_add_input(g, op, ed->src, ed->slot, err);
        }
    }
    free(colors);
    if (st) {
        dp_error_prefix(err, f->what);
        dp_graph_free(g);
        return st;
    }
    if ((st = dp_graph_finalize(g, f->what, err))) {
        dp_graph_free(g);
        return st;
    }
    *out = g;
    return DP_STATUS_OK;
}

/* cpu:0 with one stream per MSR CPU core, gpu:0.. with the accelerator
 * memory, and a CPU <-> accelerator link per GPU at the edge bandwidth.
 * Accelerator pairs have no link: their transfers go through the host, store
 * and forward, as the MSR model's costs (to and from CPU DRAM) assume. Op times are measured, so
 * the speeds below only need to be valid (docs/import.md). */
static dp_status build_devices(const msr_file *f, const char *gname, const dp_import_msr_info *info,
                               dp_devices **out, dp_error *err) {
    char name[DP_NAME_MAX];
    snprintf(name, sizeof name, "msr-%.58s", gname);
    dp_devices *ds = dp_devices_init(name);
    if (!ds) return oom(err, f->what);
    ds->staging = DP_STAGING_STORE_AND_FORWARD;
    dp_device cpu = {0};
    snprintf(cpu.name, sizeof cpu.name, "cpu:0");
    cpu.kind = DP_DEVKIND_CPU;
    snprintf(cpu.model, sizeof cpu.model, "msr-cpu");
    cpu.peak_flops = 1e12;
    cpu.mem_bandwidth = 1e11;
    cpu.memory_bytes = MSR_CPU_MEMORY;
    cpu.dispatch_s = DP_DEVICES_DISPATCH_S;
    cpu.switch_s = DP_DEVICES_SWITCH_S;
    cpu.streams = f->max_cpus < 1 ? 1 : f->max_cpus > DP_MAX_STREAMS ? DP_MAX_STREAMS : (int32_t)f->max_cpus;
    dp_status st = dp_devices_add(ds, &cpu, err);
    for (int64_t k = 0; k < f->max_fpgas && !st; k++) {
        dp_device acc = {0};
        snprintf(acc.name, sizeof acc.name, "gpu:%lld", (long long)k);
        acc.kind = DP_DEVKIND_GPU;
        snprintf(acc.model, sizeof acc.model, "msr-accelerator");
        acc.peak_flops = 1e13;
        acc.mem_bandwidth = 1e12;
        acc.memory_bytes = (uint64_t)ceil(f->max_size);
        acc.streams = 1;
        acc.dispatch_s = DP_DEVICES_DISPATCH_S;
        acc.switch_s = DP_DEVICES_SWITCH_S;
        if (!(st = dp_devices_add(ds, &acc, err)))
            st = dp_devices_add_link(ds, "cpu:0", acc.name, info->bandwidth, 0.0, 1, err);
    }
    if (st) dp_error_prefix(err, f->what);
    else st = dp_devices_finalize(ds, f->what, err);
    if (st) {
        dp_devices_free(ds);
        return st;
    }
    *out = ds;
    return DP_STATUS_OK;
}

/* The file's base name without a ".json" ending. */
static char *default_name(const char *what) {
    const char *b = strrchr(what, '/');
    b = b ? b + 1 : what;
    size_t len = strlen(b);
    if (len > 5 && strcmp(b + len - 5, ".json") == 0) len -= 5;
    char *s = malloc(len + 1);
    if (!s) return NULL;
    memcpy(s, b, len);
    s[len] = '\0';
    return s;
}

void dp_import_msr_free(dp_import_msr *imp) {
    if (!imp) return;
    free(imp->source);
    dp_graph_free(imp->graph);
    dp_devices_free(imp->devices);
    free(imp->node_id);
    free(imp->color_class);
    free(imp->has_color);
    free(imp->by_id);
    free(imp);
}

int32_t dp_import_msr_find_node(const dp_import_msr *imp, int64_t id) {
    int32_t lo = 0, hi = imp->graph->n_ops;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (imp->node_id[imp->by_id[mid]] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < imp->graph->n_ops && imp->node_id[imp->by_id[lo]] == id ? imp->by_id[lo] : -1;
}

static dp_import_msr *import_json(const json_t *root, const char *what, const dp_import_msr_options *opt,
                                  dp_error *err) {
    dp_import_msr_options defaults = dp_import_msr_options_default();
    if (!opt) opt = &defaults;
    if (!(isfinite(opt->time_unit_s) && opt->time_unit_s > 0) || !(isfinite(opt->bandwidth) && opt->bandwidth >= 0) ||
        (unsigned)opt->edge_bytes >= DP_IMPORT_EDGE_BYTES_COUNT) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: invalid import options (time unit, bandwidth or edge bytes)", what);
        return NULL;
    }
    msr_file f;
    memset(&f, 0, sizeof f);
    f.what = what;
    dp_import_msr *imp = calloc(1, sizeof *imp);
    char *gname = opt->name ? dp_strdup(opt->name) : default_name(what);
    const json_t *nodes = NULL, *edges = NULL;
    dp_status st = DP_STATUS_OK;
    if (!imp || !gname) st = oom(err, what);
    if (!st) st = read_header(root, &f, &nodes, &edges, err);
    if (!st) st = read_nodes(nodes, &f, err);
    if (!st) st = read_edges(edges, &f, err);
    if (!st) st = build_adjacency(&f, err);
    if (!st) st = check_costs(&f, err);
    if (!st) st = check_acyclic(&f, err);
    dp_import_msr_info *info = imp ? &imp->info : NULL;
    if (!st) st = choose_bandwidth(&f, opt, info, err);
    if (!st) st = assign_outputs(&f, opt, info, err);
    if (!st) st = build_graph(&f, opt, gname, &imp->graph, info, err);
    if (!st) st = build_devices(&f, gname, info, &imp->devices, err);
    if (!st) {
        int32_t n = f.n_nodes;
        imp->source = dp_strdup(what);
        imp->node_id = malloc((size_t)n * sizeof(int64_t));
        imp->color_class = malloc((size_t)n * sizeof(int64_t));
        imp->has_color = malloc((size_t)n);
        imp->by_id = malloc((size_t)n * sizeof(int32_t));
        if (!imp->source || !imp->node_id || !imp->color_class || !imp->has_color || !imp->by_id) {
            st = oom(err, what);
        } else {
            for (int32_t i = 0; i < n; i++) {
                imp->node_id[i] = f.nodes[i].id;
                imp->color_class[i] = f.nodes[i].color;
                imp->has_color[i] = f.nodes[i].has_color;
                imp->by_id[i] = f.ids[i].idx;
                info->n_backward += f.nodes[i].backward;
                info->n_cpu_only += !f.nodes[i].fpga_ok;
            }
            info->n_nodes = n;
            info->n_edges = f.n_edges;
            info->max_fpgas = (int32_t)f.max_fpgas;
            info->max_cpus = (int32_t)f.max_cpus;
            info->max_size_per_fpga = f.max_size;
        }
    }
    msr_file_free(&f);
    free(gname);
    if (st) {
        dp_import_msr_free(imp);
        return NULL;
    }
    return imp;
}

dp_import_msr *dp_import_msr_read_string(const char *text, const char *what, const dp_import_msr_options *opt,
                                         dp_error *err) {
    json_t *root = dp_json_load_string(text, what, err);
    if (!root) return NULL;
    dp_import_msr *imp = import_json(root, what, opt, err);
    json_decref(root);
    return imp;
}

dp_import_msr *dp_import_msr_read_file(const char *path, const dp_import_msr_options *opt, dp_error *err) {
    json_t *root = dp_json_load_file(path, err);
    if (!root) return NULL;
    dp_import_msr *imp = import_json(root, path, opt, err);
    json_decref(root);
    return imp;
}
