/* The agent's inputs: per-op features as the Hierarchical Planner (the Hierarchical Planner paper,
 * Section 2) and ColocRL (the ColocRL paper, Section 3.2) describe them, group
 * embeddings for the placer, and the fixed groupings (heuristic groupers,
 * ColocRL's scope groups, none). docs/agents.md says how each number is
 * scaled. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "common/uf.h"
#include "common/util.h"
#include "dplace/group.h"
#include "dplace/units.h"

static inline size_t alloc_count(int64_t n) { return n > 0 ? (size_t)n : 1; }
#define ALLOC(p, n) ((p) = calloc(alloc_count(n), sizeof *(p)))

void agent_features_free(agent_features *f) {
    free(f->type_id);
    free(f->rest);
    free(f->shape_sum);
    free(f->src);
    free(f->dst);
    memset(f, 0, sizeof *f);
}

typedef struct type_count {
    int32_t id, count;
} type_count;

static int cmp_type_count(const void *a, const void *b) {
    const type_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The fixed vocabulary of type-ids=fixed: TensorFlow op type names, id =
 * position + 1 (0: any other type), the same on every graph so that a
 * policy trained on one graph reads another's types alike (Mars Table 3,
 * --init). Append only: a new name goes at the end, or saved policies
 * would read their types wrongly. The first 181: the zoo's types, the cost
 * model's and common TensorFlow ones, sorted. */
static const char *const fixed_types[] = {
    "Abs", "Add", "AddN", "All", "Any", "ApplyAdagrad", "ApplyAdam", "ApplyGradientDescent", "ApplyMomentum",
    "ApplyRMSProp", "ArgMax", "ArgMin", "Assert", "Assign", "AssignAdd", "AssignSub", "AvgPool", "AvgPoolGrad",
    "BatchMatMul", "BatchMatMulV2", "BiasAdd", "BiasAddGrad", "BroadcastGradientArgs", "Cast", "Concat",
    "ConcatOffset", "ConcatV2", "Const", "Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput", "Conv3D",
    "Cumsum", "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropFilter", "DepthwiseConv2dNativeBackpropInput",
    "Dropout", "DynamicStitch", "Einsum", "Elu", "EluGrad", "Enter", "Equal", "Erf", "Exit", "Exp", "ExpandDims",
    "Fill", "Floor", "FloorDiv", "FloorMod", "FusedBatchNorm", "FusedBatchNormGrad", "FusedBatchNormGradV3",
    "FusedBatchNormV3", "Gather", "GatherNd", "GatherV2", "Gelu", "Greater", "GreaterEqual", "HistogramSummary",
    "Identity", "IdentityN", "ImageSummary", "InvertPermutation", "IteratorGetNext", "L2Loss", "LRN", "LRNGrad",
    "LSTMBlockCell", "LSTMBlockCellGrad", "LayerNorm", "LeakyRelu", "LeakyReluGrad", "Less", "LessEqual", "Log",
    "Log1p", "LogSoftmax", "LogicalAnd", "LogicalNot", "LogicalOr", "LoopCond", "MatMul", "MatMulGrad", "Max",
    "MaxPool", "MaxPoolGrad", "Maximum", "Mean", "Merge", "MergeSummary", "Min", "Minimum", "Mod", "Mul", "Neg",
    "NextIteration", "NoOp", "NotEqual", "OneHot", "OnesLike", "Pack", "Pad", "Placeholder",
    "PlaceholderWithDefault", "Pow", "PowDerivative", "PreventGradient", "Print", "Prod", "RandomStandardNormal",
    "RandomUniform", "Range", "Rank", "ReadVariableOp", "RealDiv", "Reciprocal", "ReciprocalGrad", "Relu", "Relu6",
    "Relu6Grad", "ReluGrad", "Reshape", "ResizeBilinear", "ResourceApplyAdam", "ResourceApplyGradientDescent",
    "ResourceApplyMomentum", "ResourceGather", "ResourceScatterAdd", "ReverseV2", "Round", "Rsqrt", "RsqrtGrad",
    "ScalarSummary", "ScatterAdd", "ScatterNd", "ScatterSub", "ScatterUpdate", "Select", "SelectV2", "Selu",
    "Shape", "ShapeN", "Sigmoid", "SigmoidGrad", "Sign", "Size", "Slice", "Softmax",
    "SoftmaxCrossEntropyWithLogits", "Softplus", "Softsign", "SparseApplyAdam",
    "SparseSoftmaxCrossEntropyWithLogits", "Split", "SplitV", "Sqrt", "SqrtGrad", "Square", "SquaredDifference",
    "Squeeze", "StopGradient", "StridedSlice", "StridedSliceGrad", "Sub", "Sum", "Switch", "Tanh", "TanhGrad",
    "Tile", "Transpose", "TruncatedNormal", "Unpack", "UnsortedSegmentSum", "VarHandleOp", "Variable", "VariableV2",
    "Where", "ZerosLike",
};
enum { N_FIXED_TYPES = sizeof fixed_types / sizeof fixed_types[0] };

int32_t agent_fixed_type_count(void) { return N_FIXED_TYPES + 1; }

/* type_id[op] by name in fixed_types; returns V = N_FIXED_TYPES + 1, or -1
 * on NOMEM. */
static int32_t assign_fixed_type_ids(const dp_graph *g, int32_t *type_id) {
    int32_t ns = dp_graph_n_strings(g);
    int32_t *id;
    if (!ALLOC(id, ns)) return -1;
    for (int32_t s = 0; s < ns; s++) {
        const char *name = dp_graph_str(g, s);
        id[s] = 0;
        for (int32_t k = 0; k < N_FIXED_TYPES; k++)
            if (strcmp(name, fixed_types[k]) == 0) {
                id[s] = k + 1;
                break;
            }
    }
    for (int32_t i = 0; i < g->n_ops; i++) type_id[i] = id[g->ops[i].type];
    free(id);
    return N_FIXED_TYPES + 1;
}

/* type_id[op]: 1..V-1 for the V-1 most common types (ties by first
 * interning), 0 for the rest; returns V or -1 on NOMEM. */
static int32_t assign_type_ids(const dp_graph *g, int32_t vocab, int32_t *type_id) {
    int32_t ns = dp_graph_n_strings(g);
    type_count *tc;
    if (!ALLOC(tc, ns)) return -1;
    for (int32_t s = 0; s < ns; s++) tc[s].id = s;
    for (int32_t i = 0; i < g->n_ops; i++) tc[g->ops[i].type].count++;
    qsort(tc, (size_t)ns, sizeof *tc, cmp_type_count);
    int32_t *rank;
    if (!ALLOC(rank, ns)) {
        free(tc);
        return -1;
    }
    int32_t V = 1;
    for (int32_t s = 0; s < ns && tc[s].count > 0 && V < vocab; s++) rank[tc[s].id] = V++;
    for (int32_t i = 0; i < g->n_ops; i++) type_id[i] = rank[g->ops[i].type];
    free(rank);
    free(tc);
    return V;
}

/* bfs[op]: position in a breadth-first walk from the ops without inputs
 * along producer -> consumer edges (every op of a DAG is reached). */
static int bfs_order(const dp_graph *g, int32_t *bfs) {
    int32_t n = g->n_ops, *queue, head = 0, tail = 0;
    if (!ALLOC(queue, n)) return -1;
    for (int32_t i = 0; i < n; i++) bfs[i] = -1;
    for (int32_t i = 0; i < n; i++)
        if (g->ops[i].n_inputs == 0) bfs[i] = tail, queue[tail++] = i;
    while (head < tail) {
        int32_t op = queue[head++];
        for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++)
            for (int64_t c = g->consumers_at[t]; c < g->consumers_at[t + 1]; c++) {
                int32_t v = g->consumers[c];
                if (bfs[v] < 0) bfs[v] = tail, queue[tail++] = v;
            }
    }
    for (int32_t i = 0; i < n; i++) /* unreachable cannot happen in a DAG; be safe */
        if (bfs[i] < 0) bfs[i] = tail++;
    free(queue);
    return 0;
}

/* Largest dimension (or 4-byte element count of a bytes-only output). */
static double max_dim(const dp_graph *g) {
    double m = 1.0;
    for (int64_t t = 0; t < g->n_outputs; t++) {
        const dp_output *o = &g->outputs[t];
        if (o->rank < 0) m = fmax(m, (double)o->bytes / 4.0);
        for (int32_t j = 0; j < o->rank; j++) m = fmax(m, (double)g->dims[o->dims_at + j]);
    }
    return m;
}

dp_status agent_features_init(agent_features *f, const dp_graph *g, const dp_agent_config *cfg, dp_error *err) {
    memset(f, 0, sizeof *f);
    int32_t n = g->n_ops;
    f->n_ops = n;
    f->S = cfg->features.out_slots * cfg->features.out_dims;
    int32_t R = f->S + 2 * cfg->features.adj_per_dir;
    f->F = cfg->features.type_dim + R;
    f->n_edges = g->n_inputs;
    int32_t *bfs = NULL, *seen = NULL;
    if (!ALLOC(f->type_id, n) || !ALLOC(f->rest, (int64_t)n * R) || !ALLOC(f->shape_sum, (int64_t)n * f->S) ||
        !ALLOC(f->src, f->n_edges) || !ALLOC(f->dst, f->n_edges) || !ALLOC(bfs, n) || !ALLOC(seen, n))
        goto nomem;
    f->V = cfg->features.type_ids == DP_AGENT_TYPE_IDS_FIXED ? assign_fixed_type_ids(g, f->type_id)
                                                    : assign_type_ids(g, cfg->features.type_vocab, f->type_id);
    if (f->V < 0 || bfs_order(g, bfs)) goto nomem;
    for (int32_t i = 0; i < n; i++) seen[i] = -1;

    double inv_log = 1.0 / log1p(max_dim(g));
    float scale = (float)n;
    for (int32_t i = 0; i < n; i++) {
        const dp_op *op = &g->ops[i];
        float *row = f->rest + (int64_t)i * R, *sum = f->shape_sum + (int64_t)i * f->S;
        for (int32_t k = 0; k < R; k++) row[k] = -1.0f;
        /* output shapes: log(1 + dim) / log(1 + largest dim in the graph) */
        for (int32_t s = 0; s < cfg->features.out_slots && s < op->n_outputs; s++) {
            const dp_output *o = &g->outputs[op->outputs_at + s];
            float *cell = row + s * cfg->features.out_dims, *scell = sum + s * cfg->features.out_dims;
            if (o->rank < 0) {
                cell[0] = scell[0] = (float)(log1p((double)o->bytes / 4.0) * inv_log);
            } else if (o->rank == 0) {
                cell[0] = scell[0] = (float)(log1p(1.0) * inv_log);
            } else {
                for (int32_t j = 0; j < cfg->features.out_dims && j < o->rank; j++)
                    cell[j] = scell[j] = (float)(log1p((double)g->dims[o->dims_at + j]) * inv_log);
            }
        }
        /* adjacency: BFS positions of up to adj_per_dir distinct producers,
         * then of consumers, as (position + 1) / n */
        float *adj = row + f->S;
        int32_t k = 0;
        for (int32_t e = 0; e < op->n_inputs && k < cfg->features.adj_per_dir; e++) {
            int32_t p = g->inputs[op->inputs_at + e].op;
            if (seen[p] == i) continue;
            seen[p] = i;
            adj[k++] = (float)(bfs[p] + 1) / scale;
        }
        k = 0;
        for (int64_t t = g->tensor_at[i]; t < g->tensor_at[i + 1] && k < cfg->features.adj_per_dir; t++)
            for (int64_t c = g->consumers_at[t]; c < g->consumers_at[t + 1] && k < cfg->features.adj_per_dir; c++) {
                int32_t v = g->consumers[c];
                if (seen[v] == -2 - i) continue;
                seen[v] = -2 - i;
                adj[cfg->features.adj_per_dir + k++] = (float)(bfs[v] + 1) / scale;
            }
        for (int32_t e = 0; e < op->n_inputs; e++) {
            int64_t at = op->inputs_at + e;
            f->src[at] = g->inputs[at].op;
            f->dst[at] = i;
        }
    }
    free(bfs);
    free(seen);
    return DP_STATUS_OK;
nomem:
    free(bfs);
    free(seen);
    agent_features_free(f);
    return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the features of %d ops", n);
}

int32_t agent_op_feature_dim(const agent_features *f) { return f->V + 2 * f->S; }

/* One shape into cells [out_dims]: dims / largest, a bytes-only tensor as
 * its 4-byte element count, a scalar as 1. */
static void shape_cells(const dp_graph *g, const dp_output *o, int32_t dims, double inv_max, float *cell) {
    if (o->rank < 0) cell[0] = (float)((double)o->bytes / 4.0 * inv_max);
    else if (o->rank == 0) cell[0] = (float)inv_max;
    else
        for (int32_t j = 0; j < dims && j < o->rank; j++) cell[j] = (float)((double)g->dims[o->dims_at + j] * inv_max);
}

void agent_op_features(const agent_features *f, const dp_graph *g, const dp_agent_config *cfg, const int32_t *order,
                       float *x) {
    int32_t V = f->V, S = f->S, W = V + 2 * S, slots = cfg->features.out_slots, dims = cfg->features.out_dims;
    double inv_max = 1.0 / max_dim(g);
    memset(x, 0, sizeof(float) * (size_t)f->n_ops * W);
    for (int32_t j = 0; j < f->n_ops; j++) {
        int32_t i = order[j];
        const dp_op *op = &g->ops[i];
        float *row = x + (int64_t)j * W;
        row[f->type_id[i]] = 1.0f;
        for (int32_t s = 0; s < slots && s < op->n_inputs; s++) {
            dp_input in = g->inputs[op->inputs_at + s];
            shape_cells(g, &g->outputs[g->ops[in.op].outputs_at + in.slot], dims, inv_max, row + V + s * dims);
        }
        for (int32_t s = 0; s < slots && s < op->n_outputs; s++)
            shape_cells(g, &g->outputs[op->outputs_at + s], dims, inv_max, row + V + S + s * dims);
    }
}

void agent_features_op_rows(const agent_features *f, const float *trows, int32_t type_dim, float *x) {
    int32_t R = f->F - type_dim;
    for (int32_t i = 0; i < f->n_ops; i++) {
        float *row = x + (int64_t)i * f->F;
        memcpy(row, trows + (int64_t)i * type_dim, sizeof(float) * (size_t)type_dim);
        memcpy(row + type_dim, f->rest + (int64_t)i * R, sizeof(float) * (size_t)R);
    }
}

int32_t agent_group_dim(const agent_features *f, const dp_agent_config *cfg, int32_t G, int32_t *widths) {
    int32_t w[4];
    w[0] = cfg->features.group_types == DP_AGENT_GROUP_TYPES_COUNTS ? f->V : cfg->features.type_dim;
    w[1] = f->S;
    w[2] = cfg->placer.kind == DP_AGENT_PLACER_KIND_GCN ? 0 : G;
    w[3] = cfg->link.on ? cfg->link.hidden : 0;
    if (widths) memcpy(widths, w, sizeof w);
    return w[0] + w[1] + w[2] + w[3];
}

void agent_group_embed(const agent_features *f, const dp_agent_config *cfg, const int32_t *group, int32_t G,
                       const float *trows, const float *link, float *ge, float *count, float *scratch) {
    int32_t N = f->n_ops, S = f->S, w[4];
    agent_group_dim(f, cfg, G, w);
    int counts = cfg->features.group_types == DP_AGENT_GROUP_TYPES_COUNTS;
    int32_t tw = w[0];
    float *tpart = scratch, *spart = tpart + (int64_t)G * tw, *apart = spart + (int64_t)G * S;
    if (counts) {
        dp_nn_group_histogram_forward(tpart, group, f->type_id, N, G, f->V);
        for (int64_t k = 0; k < (int64_t)G * tw; k++) tpart[k] = log1pf(tpart[k]);
    } else {
        dp_nn_group_mean_forward(tpart, count, trows, group, N, tw, G);
    }
    dp_nn_group_sum_forward(spart, f->shape_sum, group, N, S, G);
    for (int64_t k = 0; k < (int64_t)G * S; k++) spart[k] = log1pf(spart[k]);
    if (w[2]) dp_nn_group_adjacency_forward(apart, group, f->src, f->dst, f->n_edges, G);
    const float *parts[4];
    int widths[4], n = 0;
    parts[n] = tpart, widths[n++] = tw;
    parts[n] = spart, widths[n++] = S;
    if (w[2]) parts[n] = apart, widths[n++] = w[2];
    if (w[3]) parts[n] = link, widths[n++] = w[3];
    dp_nn_concat_forward(ge, parts, widths, n, G);
}

/* Scope key of an op: its scope without leading "gradients/" (TensorFlow
 * puts an op's gradient under gradients/<its scope>), cut to `depth`
 * components (0: whole). Writes into buf; returns 0 when the op has none. */
static int scope_key(const dp_graph *g, int32_t op, int32_t depth, char *buf, size_t size) {
    const char *s = dp_graph_str(g, g->ops[op].scope);
    while (strncmp(s, "gradients/", 10) == 0) s += 10;
    if (!*s || strcmp(s, "gradients") == 0) return 0;
    size_t len = 0;
    int32_t comps = 0;
    while (s[len]) {
        if (s[len] == '/' && depth > 0 && ++comps >= depth) break;
        len++;
    }
    if (len >= size) len = size - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    return 1;
}

/* ColocRL's groups: the colocation grouping joined with the layer scope cut
 * to depth components ("each LSTM cell, each embedding lookup, each
 * attention step, each softmax step" of the RNNs, "each branch" of
 * Inception, the ColocRL paper, Section 4.1, as the zoo's scopes name them). */
static dp_status group_scope(const dp_graph *g, const dp_agent_config *cfg, uint64_t seed, int32_t *group,
                             int32_t *n_groups, dp_error *err) {
    int32_t n0 = 0, n = g->n_ops;
    dp_status st = dp_units_group_ids(g, group, &n0, err); /* TensorFlow's colocation groups */
    if (st) return st;
    int32_t *parent = NULL, *scope_rep = NULL, *dense = NULL;
    dp_strtab *keys = dp_strtab_init();
    if (!keys || !ALLOC(parent, n0) || !ALLOC(scope_rep, n) || !ALLOC(dense, n0)) goto nomem;
    for (int32_t k = 0; k < n0; k++) parent[k] = k, dense[k] = -1;
    for (int32_t k = 0; k < n; k++) scope_rep[k] = -1;
    char buf[1024];
    for (int32_t i = 0; i < n; i++) {
        if (!scope_key(g, i, cfg->grouper.scope_depth, buf, sizeof buf)) continue;
        int32_t id = dp_strtab_intern(keys, buf); /* dense ids: at most one per op */
        if (id < 0) goto nomem;
        if (scope_rep[id] < 0) scope_rep[id] = dp_uf_find(parent, group[i]);
        else dp_uf_join(parent, scope_rep[id], group[i]);
    }
    *n_groups = dp_uf_relabel(parent, group, n, dense);
    dp_strtab_free(keys);
    free(parent);
    free(scope_rep);
    free(dense);
    return DP_STATUS_OK;
nomem:
    dp_strtab_free(keys);
    free(parent);
    free(scope_rep);
    free(dense);
    return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for scope groups");
}

dp_status agent_group_fixed(const dp_graph *g, const dp_devices *ds, const dp_agent_config *cfg, uint64_t seed,
                            int32_t *group, int32_t *n_groups, dp_error *err) {
    static const dp_group_method methods[DP_AGENT_GROUPER_KIND_COUNT] = {
        [DP_AGENT_GROUPER_KIND_COLOCATION] = DP_GROUP_METHOD_COLOCATION,
        [DP_AGENT_GROUPER_KIND_METIS] = DP_GROUP_METHOD_METIS,
        [DP_AGENT_GROUPER_KIND_SCOTCH] = DP_GROUP_METHOD_SCOTCH,
        [DP_AGENT_GROUPER_KIND_FLUID] = DP_GROUP_METHOD_FLUID,
        [DP_AGENT_GROUPER_KIND_RANDOM] = DP_GROUP_METHOD_RANDOM,
    };
    switch (cfg->grouper.kind) {
    case DP_AGENT_GROUPER_KIND_NONE:
        for (int32_t i = 0; i < g->n_ops; i++) group[i] = i;
        *n_groups = g->n_ops;
        return DP_STATUS_OK;
    case DP_AGENT_GROUPER_KIND_SCOPE:
        return group_scope(g, cfg, seed, group, n_groups, err);
    case DP_AGENT_GROUPER_KIND_COLOCATION:
    case DP_AGENT_GROUPER_KIND_METIS:
    case DP_AGENT_GROUPER_KIND_SCOTCH:
    case DP_AGENT_GROUPER_KIND_FLUID:
    case DP_AGENT_GROUPER_KIND_RANDOM: {
        dp_group_options o = dp_group_options_default();
        o.n_groups = cfg->grouper.groups;
        o.seed = seed;
        int32_t ref = dp_devices_nth(ds, DP_DEVKIND_GPU, 0);
        o.reference = &ds->devices[ref >= 0 ? ref : 0];
        return dp_group_run(methods[cfg->grouper.kind], g, &o, group, n_groups, err);
    }
    default:
        return dp_error_set(err, DP_STATUS_INVALID, "agent: grouper %s is not a fixed grouping",
                            dp_agent_grouper_kind_name(cfg->grouper.kind));
    }
}
