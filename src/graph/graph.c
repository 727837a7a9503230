/* Graph builder, validation, topological order and consumer lists. */
#include "dplace/graph.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/heap.h"
#include "common/util.h"

/* ---- dtypes ---------------------------------------------------------------- */

static const struct {
    const char *name;
    int size;
} dtype_table[] = {
    {"none", 0},    {"float16", 2}, {"bfloat16", 2}, {"float32", 4},   {"float64", 8},    {"int8", 1},
    {"uint8", 1},   {"int16", 2},   {"uint16", 2},   {"int32", 4},     {"uint32", 4},     {"int64", 8},
    {"uint64", 8},  {"bool", 1},    {"complex64", 8}, {"complex128", 16},
};
_Static_assert(sizeof(dtype_table) / sizeof(dtype_table[0]) == DP_DTYPE_COUNT, "dtype_table must list every dp_dtype");

const char *dp_dtype_name(dp_dtype dtype) {
    return (unsigned)dtype < DP_DTYPE_COUNT ? dtype_table[dtype].name : "?";
}

int dp_dtype_size(dp_dtype dtype) { return (unsigned)dtype < DP_DTYPE_COUNT ? dtype_table[dtype].size : 0; }

static const char *const executor_names[] = {"tf", "torch"};
_Static_assert(sizeof(executor_names) / sizeof(executor_names[0]) == DP_EXECUTOR_COUNT, "executor_names");

const char *dp_executor_name(dp_executor e) { return (unsigned)e < DP_EXECUTOR_COUNT ? executor_names[e] : "?"; }

int dp_executor_from_name(const char *name) {
    for (int i = 0; name && i < DP_EXECUTOR_COUNT; i++)
        if (strcmp(name, executor_names[i]) == 0) return i;
    return -1;
}

dp_dtype dp_dtype_from_name(const char *name) {
    for (int i = 1; i < DP_DTYPE_COUNT; i++)
        if (strcmp(name, dtype_table[i].name) == 0) return (dp_dtype)i;
    /* TensorFlow spellings */
    if (strcmp(name, "half") == 0) return DP_DTYPE_FLOAT16;
    if (strcmp(name, "float") == 0) return DP_DTYPE_FLOAT32;
    if (strcmp(name, "double") == 0) return DP_DTYPE_FLOAT64;
    return DP_DTYPE_NONE;
}

/* ---- device constraints ------------------------------------------------------ */

int dp_devcon_parse(const char *text, dp_devcon *out) {
    const char *s = text;
    /* accept TensorFlow's "/job:x/replica:0/task:0/device:GPU:0", "/device:GPU:0", "/gpu:0" */
    const char *dev = strstr(s, "device:");
    if (dev) s = dev + 7;
    else if (s[0] == '/') s++;
    dp_devcon c = {DP_DEVCON_NONE, -1};
    if (strncasecmp(s, "cpu", 3) == 0) c.kind = DP_DEVCON_CPU;
    else if (strncasecmp(s, "gpu", 3) == 0) c.kind = DP_DEVCON_GPU;
    else return -1;
    s += 3;
    if (*s == ':') {
        s++;
        if (!isdigit((unsigned char)*s)) return -1;
        long v = 0;
        while (isdigit((unsigned char)*s)) {
            v = v * 10 + (*s - '0');
            if (v > 1000000) return -1;
            s++;
        }
        c.index = (int32_t)v;
    }
    if (*s) return -1;
    *out = c;
    return 0;
}

void dp_devcon_format(dp_devcon con, char *buf, size_t size) {
    const char *k = con.kind == DP_DEVCON_CPU ? "cpu" : con.kind == DP_DEVCON_GPU ? "gpu" : "";
    if (con.index >= 0) snprintf(buf, size, "%s:%d", k, con.index);
    else snprintf(buf, size, "%s", k);
}

/* ---- builder ------------------------------------------------------------------- */

dp_graph *dp_graph_init(const char *name) {
    dp_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = dp_strdup(name ? name : "");
    g->strings = dp_strtab_init();
    g->names = dp_strtab_init();
    if (!g->name || !g->strings || !g->names) {
        dp_graph_free(g);
        return NULL;
    }
    return g;
}

void dp_graph_free(dp_graph *g) {
    if (!g) return;
    free(g->name);
    free(g->ops);
    free(g->inputs);
    free(g->outputs);
    free(g->dims);
    free(g->costs);
    dp_strtab_free(g->strings);
    dp_strtab_free(g->names);
    free(g->topo);
    free(g->tensor_at);
    free(g->consumers_at);
    free(g->consumers);
    free(g->coloc_group);
    free(g);
}

const char *dp_graph_str(const dp_graph *g, int32_t id) {
    return (id >= 0 && id < g->strings->n) ? g->strings->strs[id] : "";
}
int32_t dp_graph_intern(dp_graph *g, const char *s) { return dp_strtab_intern(g->strings, s); }
int32_t dp_graph_find_str(const dp_graph *g, const char *s) { return dp_strtab_find(g->strings, s); }
int32_t dp_graph_n_strings(const dp_graph *g) { return (int32_t)g->strings->n; }
int32_t dp_graph_find_op(const dp_graph *g, const char *name) { return dp_strtab_find(g->names, name); }

const char *dp_graph_forward_scope(const char *s) {
    for (;;) {
        if (!strncmp(s, "gradients/", 10)) s += 10;
        else if (!strncmp(s, "clip_by_global_norm/", 20)) s += 20;
        else return s;
    }
}

int dp_graph_is_gradient_scope(const char *s) { return dp_graph_forward_scope(s) != s || !strcmp(s, "gradients"); }

static dp_status oom(dp_error *err) { return dp_error_set(err, DP_STATUS_NOMEM, "out of memory"); }

/* Checks a name's length and bytes (see DP_GRAPH_NAME_MAX); NULL passes. */
dp_status dp_graph_check_name(const char *s, const char *what, dp_error *err) {
    if (!s) return DP_STATUS_OK;
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++, n++) {
        if (n >= DP_GRAPH_NAME_MAX)
            return dp_error_set(err, DP_STATUS_INVALID, "%s \"%.40s...\" is longer than %d bytes", what, s,
                                DP_GRAPH_NAME_MAX);
        if (*p < 0x20 || *p == 0x7f)
            return dp_error_set(err, DP_STATUS_INVALID, "%s \"%.40s\" holds control character 0x%02x at byte %zu", what,
                                s, *p, n);
    }
    return DP_STATUS_OK;
}

int32_t dp_graph_add_op(dp_graph *g, const char *name, const char *type, const char *scope, const char *colocate,
                        dp_error *err) {
    if (g->finalized) {
        dp_error_set(err, DP_STATUS_INVALID, "graph is finalized; cannot add op \"%s\"", name);
        return -1;
    }
    if (!name || !*name) {
        dp_error_set(err, DP_STATUS_INVALID, "op %d: empty name", g->n_ops);
        return -1;
    }
    const char *const fields[4] = {name, type, scope, colocate};
    const char *const field_names[4] = {"name", "type", "scope", "colocate"};
    for (int f = 0; f < 4; f++) {
        if (dp_graph_check_name(fields[f], field_names[f], err)) {
            char what[64];
            snprintf(what, sizeof what, "op %d", g->n_ops);
            dp_error_prefix(err, what);
            return -1;
        }
    }
    int32_t prev = dp_strtab_find(g->names, name);
    if (prev >= 0) {
        dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": duplicate name (also op %d)", g->n_ops, name, prev);
        return -1;
    }
    if (g->n_ops >= INT32_MAX - 1) {
        dp_error_set(err, DP_STATUS_INVALID, "too many ops");
        return -1;
    }
    if (dp_reserve((void **)&g->ops, &g->cap_ops, g->n_ops + 1, sizeof(dp_op))) {
        oom(err);
        return -1;
    }
    int32_t id = dp_strtab_intern(g->names, name);
    int32_t t = dp_strtab_intern(g->strings, type ? type : "");
    int32_t sc = scope ? dp_strtab_intern(g->strings, scope) : -1;
    int32_t co = colocate ? dp_strtab_intern(g->strings, colocate) : -1;
    if (id < 0 || t < 0 || (scope && sc < 0) || (colocate && co < 0)) {
        oom(err);
        return -1;
    }
    if (id != g->n_ops) {
        dp_error_set(err, DP_STATUS_INVALID, "internal error: name table out of step");
        return -1;
    }
    dp_op *op = &g->ops[g->n_ops];
    memset(op, 0, sizeof *op);
    op->name = g->names->strs[id];
    op->type = t;
    op->scope = sc;
    op->colocate = co;
    op->device.kind = DP_DEVCON_NONE;
    op->device.index = -1;
    op->inputs_at = g->n_inputs;
    op->outputs_at = g->n_outputs;
    op->costs_at = g->n_costs;
    return g->n_ops++;
}

static dp_status check_last(dp_graph *g, int32_t op, dp_error *err) {
    if (g->finalized) return dp_error_set(err, DP_STATUS_INVALID, "graph is finalized");
    if (op != g->n_ops - 1 || op < 0)
        return dp_error_set(err, DP_STATUS_INVALID, "op %d: inputs, outputs and costs are added to the last op only",
                            op);
    return DP_STATUS_OK;
}

dp_status dp_graph_add_input(dp_graph *g, int32_t op, int32_t producer, int32_t slot, dp_error *err) {
    dp_status st = check_last(g, op, err);
    if (st) return st;
    if (dp_reserve((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof(dp_input))) return oom(err);
    g->inputs[g->n_inputs++] = (dp_input){producer, slot};
    g->ops[op].n_inputs++;
    return DP_STATUS_OK;
}

/* Largest size of one tensor, parameter or scratch buffer: 2^50 bytes (1 PiB).
 * Anything larger is certainly a mistake, and the cap keeps every sum over a
 * graph inside 64 bits. */
#define DP_MAX_BYTES (1ULL << 50)

static dp_status push_output(dp_graph *g, int32_t op, dp_output o, dp_error *err) {
    if (dp_reserve((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof(dp_output))) return oom(err);
    g->outputs[g->n_outputs++] = o;
    g->ops[op].n_outputs++;
    return DP_STATUS_OK;
}

dp_status dp_graph_add_output_bytes(dp_graph *g, int32_t op, uint64_t bytes, dp_error *err) {
    dp_status st = check_last(g, op, err);
    if (st) return st;
    if (bytes > DP_MAX_BYTES)
        return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": output %d: %llu bytes is over the limit of 2^50",
                            op, g->ops[op].name, g->ops[op].n_outputs, (unsigned long long)bytes);
    return push_output(g, op, (dp_output){bytes, DP_DTYPE_NONE, -1, -1}, err);
}

dp_status dp_graph_add_output_shape(dp_graph *g, int32_t op, dp_dtype dtype, const int64_t *dims, int32_t rank,
                                    dp_error *err) {
    dp_status st = check_last(g, op, err);
    if (st) return st;
    const char *nm = g->ops[op].name;
    int slot = g->ops[op].n_outputs;
    if (dtype <= DP_DTYPE_NONE || dtype >= DP_DTYPE_COUNT)
        return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": output %d: unknown dtype", op, nm, slot);
    if (rank < 0 || rank > 64)
        return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": output %d: rank %d is out of range 0..64", op, nm,
                            slot, rank);
    uint64_t bytes = (uint64_t)dp_dtype_size(dtype);
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": output %d: dimension %d is negative (%lld)", op,
                                nm, slot, i, (long long)dims[i]);
        uint64_t d = (uint64_t)dims[i];
        if (d != 0 && bytes > UINT64_MAX / d)
            return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": output %d: size of the shape overflows 64 bits",
                                op, nm, slot);
        bytes *= d;
    }
    if (bytes > DP_MAX_BYTES)
        return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": output %d: %llu bytes is over the limit of 2^50", op,
                            nm, slot, (unsigned long long)bytes);
    if (dp_reserve((void **)&g->dims, &g->cap_dims, g->n_dims + rank, sizeof(int64_t))) return oom(err);
    int64_t at = g->n_dims;
    if (rank) memcpy(g->dims + at, dims, (size_t)rank * sizeof(int64_t));
    g->n_dims += rank;
    return push_output(g, op, (dp_output){bytes, dtype, rank, at}, err);
}

dp_status dp_graph_add_cost(dp_graph *g, int32_t op, const char *key, double seconds, dp_error *err) {
    dp_status st = check_last(g, op, err);
    if (st) return st;
    if (!(seconds >= 0 && seconds <= DP_GRAPH_MAX_COST_S))
        return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": cost \"%s\" must be in 0..1e9 seconds (got %g)",
                            op, g->ops[op].name, key, seconds);
    int32_t k = dp_strtab_intern(g->strings, key);
    if (k < 0) return oom(err);
    dp_op *o = &g->ops[op];
    for (int32_t i = 0; i < o->n_costs; i++)
        if (g->costs[o->costs_at + i].key == k)
            return dp_error_set(err, DP_STATUS_INVALID, "op %d \"%s\": cost \"%s\" given twice", op, o->name, key);
    if (dp_reserve((void **)&g->costs, &g->cap_costs, g->n_costs + 1, sizeof(dp_cost))) return oom(err);
    g->costs[g->n_costs++] = (dp_cost){k, seconds};
    o->n_costs++;
    return DP_STATUS_OK;
}

/* ---- finalize -------------------------------------------------------------------- */

/* Finds one cycle among the ops Kahn's algorithm could not order (indeg > 0)
 * and writes it to err. Every such op has a predecessor that is also left,
 * so walking predecessors must revisit an op. */
static dp_status report_cycle(const dp_graph *g, const char *what, const int32_t *indeg, dp_error *err) {
    int32_t n = g->n_ops, start = -1;
    for (int32_t i = 0; i < n && start < 0; i++)
        if (indeg[i] > 0) start = i;
    int32_t *seen_at = malloc((size_t)n * sizeof(int32_t));
    int32_t *path = malloc((size_t)n * sizeof(int32_t));
    if (!seen_at || !path) {
        free(seen_at);
        free(path);
        return dp_error_set(err, DP_STATUS_INVALID, "%s: the graph has a cycle", what);
    }
    for (int32_t i = 0; i < n; i++) seen_at[i] = -1;
    int32_t len = 0, u = start;
    while (seen_at[u] < 0) {
        seen_at[u] = len;
        path[len++] = u;
        const dp_op *o = &g->ops[u];
        int32_t next = -1;
        for (int32_t k = 0; k < o->n_inputs; k++) {
            int32_t p = g->inputs[o->inputs_at + k].op;
            if (indeg[p] > 0) {
                next = p;
                break;
            }
        }
        if (next < 0) break; /* cannot happen */
        u = next;
    }
    int32_t from = seen_at[u] < 0 ? 0 : seen_at[u];
    int32_t cyc = len - from;
    char buf[700];
    size_t pos = 0;
    /* path walks consumer -> producer; print producer -> consumer */
    for (int32_t k = 0; k <= cyc && k <= 12 && pos < sizeof buf - 80; k++) {
        int32_t op = (k == 0 || k == cyc) ? path[from] : path[from + cyc - k];
        pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s%d \"%.40s\"", k ? " -> " : "", op, g->ops[op].name);
    }
    if (cyc > 12) snprintf(buf + pos, sizeof buf - pos, " -> ... (%d ops on the cycle)", cyc);
    free(seen_at);
    free(path);
    return dp_error_set(err, DP_STATUS_INVALID, "%s: the graph has a cycle: %s", what, buf);
}

/* Phase 1 of finalize: every op's numbers are finite and in range, every
 * input names an existing output, and the graph's total bytes fit 64 bits. */
static dp_status check_ops(const dp_graph *g, const char *what, dp_error *err) {
    int32_t n = g->n_ops;
    double total = 0;
    for (int32_t i = 0; i < n; i++) {
        const dp_op *o = &g->ops[i];
        if (!(o->flops >= 0 && o->flops <= DP_GRAPH_MAX_FLOPS))
            return dp_error_set(err, DP_STATUS_INVALID, "%s: op %d \"%s\": flops must be in 0..1e24 (got %g)",
                                what, i, o->name, o->flops);
        if (o->param_bytes > DP_MAX_BYTES || o->temp_bytes > DP_MAX_BYTES)
            return dp_error_set(err, DP_STATUS_INVALID, "%s: op %d \"%s\": param_bytes or temp_bytes over 2^50", what,
                                i, o->name);
        total += (double)o->param_bytes + (double)o->temp_bytes;
        for (int32_t k = 0; k < o->n_inputs; k++) {
            dp_input in = g->inputs[o->inputs_at + k];
            if (in.op < 0 || in.op >= n)
                return dp_error_set(err, DP_STATUS_INVALID,
                                    "%s: op %d \"%s\": input %d refers to op %d, but the graph has %d ops (0..%d)", what,
                                    i, o->name, k, in.op, n, n - 1);
            int32_t nout = g->ops[in.op].n_outputs;
            if (in.slot < 0 || in.slot >= nout)
                return dp_error_set(err, DP_STATUS_INVALID,
                                    "%s: op %d \"%s\": input %d refers to output %d of op %d \"%s\", which has %d "
                                    "output%s",
                                    what, i, o->name, k, in.slot, in.op, g->ops[in.op].name, nout, nout == 1 ? "" : "s");
        }
        for (int32_t k = 0; k < o->n_outputs; k++) total += (double)g->outputs[o->outputs_at + k].bytes;
    }
    if (total >= 9.2e18)
        return dp_error_set(err, DP_STATUS_INVALID, "%s: the graph's total bytes (%.3g) overflow 64 bits", what, total);
    return DP_STATUS_OK;
}

/* Phase 2: the colocation groups, numbered by first appearance into
 * g->coloc_group (g->n_colocate of them); a group's ops must not carry
 * conflicting constraints. */
static dp_status build_colocation(dp_graph *g, const char *what, dp_error *err) {
    int32_t n = g->n_ops, ns = (int32_t)g->strings->n;
    free(g->coloc_group); /* left by an earlier finalize that failed */
    g->coloc_group = malloc((size_t)n * sizeof(int32_t));
    int32_t *group_of = malloc(((size_t)ns + 1) * sizeof(int32_t)); /* by the group's name */
    dp_devcon *gcon = malloc(((size_t)n + 1) * sizeof(dp_devcon));  /* constraint of each group so far */
    if (!g->coloc_group || !group_of || !gcon) {
        free(group_of);
        free(gcon);
        return oom(err);
    }
    for (int32_t s = 0; s < ns; s++) group_of[s] = -1;
    g->n_colocate = 0;
    dp_status st = DP_STATUS_OK;
    for (int32_t i = 0; i < n && !st; i++) {
        const dp_op *o = &g->ops[i];
        g->coloc_group[i] = -1;
        if (o->colocate < 0) continue;
        int32_t c = group_of[o->colocate];
        if (c < 0) {
            c = group_of[o->colocate] = g->n_colocate++;
            gcon[c] = o->device;
        } else if (o->device.kind != DP_DEVCON_NONE) {
            dp_devcon h = gcon[c];
            if (h.kind == DP_DEVCON_NONE || (h.kind == o->device.kind && h.index < 0)) {
                gcon[c] = o->device;
            } else if (h.kind != o->device.kind || (o->device.index >= 0 && h.index != o->device.index)) {
                char a[32], b[32];
                dp_devcon_format(h, a, sizeof a);
                dp_devcon_format(o->device, b, sizeof b);
                st = dp_error_set(err, DP_STATUS_INVALID,
                                  "%s: op %d \"%s\": device \"%s\" conflicts with \"%s\" required by another op of "
                                  "colocation group \"%s\"",
                                  what, i, o->name, b, a, dp_graph_str(g, o->colocate));
            }
        }
        g->coloc_group[i] = c;
    }
    free(group_of);
    free(gcon);
    return st;
}

/* Phase 3: tensor ids (tensor_at) and the consumer lists (CSR). */
static dp_status build_consumers(dp_graph *g, dp_error *err) {
    int32_t n = g->n_ops;
    free(g->tensor_at); /* left by an earlier finalize that failed */
    free(g->consumers_at);
    free(g->consumers);
    g->n_tensors = g->n_outputs;
    g->tensor_at = malloc(((size_t)n + 1) * sizeof(int64_t));
    g->consumers_at = calloc((size_t)g->n_tensors + 1, sizeof(int64_t));
    g->consumers = malloc(((size_t)g->n_inputs + 1) * sizeof(int32_t));
    int64_t *fill = malloc(((size_t)g->n_tensors + 1) * sizeof(int64_t));
    if (!g->tensor_at || !g->consumers_at || !g->consumers || !fill) {
        free(fill);
        return oom(err);
    }
    for (int32_t i = 0; i <= n; i++) g->tensor_at[i] = i < n ? g->ops[i].outputs_at : g->n_outputs;
    for (int64_t e = 0; e < g->n_inputs; e++) {
        dp_input in = g->inputs[e];
        g->consumers_at[g->tensor_at[in.op] + in.slot + 1]++;
    }
    for (int64_t t = 0; t < g->n_tensors; t++) g->consumers_at[t + 1] += g->consumers_at[t];
    memcpy(fill, g->consumers_at, ((size_t)g->n_tensors + 1) * sizeof(int64_t));
    for (int32_t i = 0; i < n; i++) {
        const dp_op *o = &g->ops[i];
        for (int32_t k = 0; k < o->n_inputs; k++) {
            dp_input in = g->inputs[o->inputs_at + k];
            g->consumers[fill[g->tensor_at[in.op] + in.slot]++] = i;
        }
    }
    free(fill);
    return DP_STATUS_OK;
}

/* Phase 4: the topological order (Kahn's algorithm, FIFO from the lowest
 * index, so deterministic); a cycle is reported with the ops on it. */
static dp_status sort_topologically(dp_graph *g, const char *what, dp_error *err) {
    int32_t n = g->n_ops;
    free(g->topo);
    g->topo = malloc((size_t)n * sizeof(int32_t));
    int32_t *indeg = malloc((size_t)n * sizeof(int32_t));
    if (!g->topo || !indeg) {
        free(indeg);
        return oom(err);
    }
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < n; i++) {
        indeg[i] = g->ops[i].n_inputs;
        if (indeg[i] == 0) g->topo[tail++] = i;
    }
    while (head < tail) {
        int32_t u = g->topo[head++];
        const dp_op *o = &g->ops[u];
        for (int32_t s = 0; s < o->n_outputs; s++) {
            int64_t t = g->tensor_at[u] + s;
            for (int64_t e = g->consumers_at[t]; e < g->consumers_at[t + 1]; e++)
                if (--indeg[g->consumers[e]] == 0) g->topo[tail++] = g->consumers[e];
        }
    }
    dp_status st = tail < n ? report_cycle(g, what, indeg, err) : DP_STATUS_OK;
    free(indeg);
    return st;
}

dp_status dp_graph_topo_depth_first(const dp_graph *g, int32_t *out, dp_error *err) {
    assert(g->finalized);
    int32_t n = g->n_ops;
    int32_t *indeg = malloc((size_t)n * sizeof(int32_t));
    int32_t *stack = malloc((size_t)n * sizeof(int32_t)); /* each op is pushed once */
    if (!indeg || !stack) {
        free(indeg);
        free(stack);
        return oom(err);
    }
    int32_t top = 0, done = 0;
    for (int32_t i = n - 1; i >= 0; i--) { /* sources, the lowest index on top */
        indeg[i] = g->ops[i].n_inputs;
        if (indeg[i] == 0) stack[top++] = i;
    }
    while (top > 0) {
        int32_t u = stack[--top];
        out[done++] = u;
        const dp_op *o = &g->ops[u];
        /* consumers that become ready, pushed last to first: the first on top */
        for (int32_t s = o->n_outputs - 1; s >= 0; s--) {
            int64_t t = g->tensor_at[u] + s;
            for (int64_t e = g->consumers_at[t + 1] - 1; e >= g->consumers_at[t]; e--)
                if (--indeg[g->consumers[e]] == 0) stack[top++] = g->consumers[e];
        }
    }
    assert(done == n); /* finalized: no cycle */
    free(indeg);
    free(stack);
    return DP_STATUS_OK;
}

dp_status dp_graph_topo_keyed(const dp_graph *g, const double *key, const uint32_t *tie, int32_t *out,
                              dp_error *err) {
    assert(g->finalized);
    int32_t n = g->n_ops, done = 0;
    int32_t *indeg = malloc((size_t)n * sizeof(int32_t));
    dp_heap h;
    memset(&h, 0, sizeof h);
    if (!indeg || dp_heap_init(&h, n, NULL)) {
        free(indeg);
        dp_heap_free(&h);
        return oom(err);
    }
    for (int32_t i = 0; i < n; i++)
        if ((indeg[i] = g->ops[i].n_inputs) == 0) dp_heap_push_tie(&h, key[i], tie[i], i);
    while (h.n > 0) {
        int32_t u = dp_heap_entry_payload(dp_heap_pop(&h));
        out[done++] = u;
        const dp_op *o = &g->ops[u];
        for (int32_t s = 0; s < o->n_outputs; s++) {
            int64_t t = g->tensor_at[u] + s;
            for (int64_t e = g->consumers_at[t]; e < g->consumers_at[t + 1]; e++) {
                int32_t v = g->consumers[e];
                if (--indeg[v] == 0) dp_heap_push_tie(&h, key[v], tie[v], v);
            }
        }
    }
    assert(done == n); /* finalized: no cycle */
    dp_heap_free(&h);
    free(indeg);
    return DP_STATUS_OK;
}

dp_status dp_graph_finalize(dp_graph *g, const char *what, dp_error *err) {
    if (!what) what = g->name;
    if (g->finalized) return DP_STATUS_OK;
    if (g->n_ops == 0) return dp_error_set(err, DP_STATUS_INVALID, "%s: the graph has no ops", what);
    dp_status st;
    if ((st = check_ops(g, what, err)) || (st = build_colocation(g, what, err)) || (st = build_consumers(g, err)) ||
        (st = sort_topologically(g, what, err)))
        return st;
    g->finalized = 1;
    return DP_STATUS_OK;
}

void dp_graph_get_stats(const dp_graph *g, dp_graph_stats *s) {
    memset(s, 0, sizeof *s);
    s->n_ops = g->n_ops;
    s->n_edges = g->n_inputs;
    s->n_tensors = g->n_outputs;
    s->n_colocate_groups = g->n_colocate;
    for (int32_t i = 0; i < g->n_ops; i++) {
        const dp_op *o = &g->ops[i];
        s->total_flops += o->flops;
        s->total_param_bytes += o->param_bytes;
        if (o->device.kind != DP_DEVCON_NONE) s->n_constrained++;
    }
    for (int64_t t = 0; t < g->n_outputs; t++) s->total_output_bytes += g->outputs[t].bytes;
}

int32_t dp_graph_neighbour(const dp_graph *g, int32_t i, dp_rng *rng) {
    const dp_op *o = &g->ops[i];
    if (o->n_inputs > 0 && dp_rng_uniform(rng) < 0.5)
        return g->inputs[o->inputs_at + (int64_t)dp_rng_below(rng, (uint64_t)o->n_inputs)].op;
    if (o->n_outputs <= 0) return -1;
    int64_t t = g->tensor_at[i] + (int64_t)dp_rng_below(rng, (uint64_t)o->n_outputs);
    int64_t nc = g->consumers_at[t + 1] - g->consumers_at[t];
    return nc > 0 ? g->consumers[g->consumers_at[t] + (int64_t)dp_rng_below(rng, (uint64_t)nc)] : -1;
}
