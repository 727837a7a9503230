/* dplace: the computational graph of one training step.
 *
 * A graph is a set of ops; each op reads tensors (outputs of other ops,
 * named by (producer op, output slot)) and produces tensors of known size.
 * Graphs are built with the builder calls (dp_graph_add_*) and then sealed
 * with dp_graph_finalize, which validates them and computes the topological
 * order, the consumer lists and the colocation groups every later module
 * uses. */
#ifndef DPLACE_GRAPH_H
#define DPLACE_GRAPH_H

#include "dplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest "flops" of one op and largest measured "cost" of one op (seconds):
 * with the device rates' bounds (devices.h) every time the simulator forms
 * stays finite. */
#define DP_GRAPH_MAX_FLOPS 1e24
#define DP_GRAPH_MAX_COST_S 1e9
/* Longest name of a graph, op, type, scope or colocation group, in bytes;
 * names hold no control characters (below 0x20, 0x7f). */
#define DP_GRAPH_NAME_MAX 4096

typedef enum dp_dtype {
    DP_DTYPE_NONE = 0, /* output given in bytes only */
    DP_DTYPE_FLOAT16,
    DP_DTYPE_BFLOAT16,
    DP_DTYPE_FLOAT32,
    DP_DTYPE_FLOAT64,
    DP_DTYPE_INT8,
    DP_DTYPE_UINT8,
    DP_DTYPE_INT16,
    DP_DTYPE_UINT16,
    DP_DTYPE_INT32,
    DP_DTYPE_UINT32,
    DP_DTYPE_INT64,
    DP_DTYPE_UINT64,
    DP_DTYPE_BOOL,
    DP_DTYPE_COMPLEX64,
    DP_DTYPE_COMPLEX128,
    DP_DTYPE_COUNT
} dp_dtype;

/* Name as written in files ("float32"), and bytes per element (0 for NONE). */
const char *dp_dtype_name(dp_dtype dtype);
int dp_dtype_size(dp_dtype dtype);
/* Looks a dtype up by name; returns DP_DTYPE_NONE when unknown. */
dp_dtype dp_dtype_from_name(const char *name);

/* Which float32 products a graph's framework lets run in TF32 on tensor
 * cores (dp_graph.tf32): matrix products (PyTorch's
 * torch.backends.cuda.matmul.allow_tf32), convolutions (its
 * torch.backends.cudnn.allow_tf32). */
#define DP_GRAPH_TF32_MATMUL 1u
#define DP_GRAPH_TF32_CONV 2u

/* How a framework runs a step, which the simulator reproduces
 * (docs/simulator.md, "Executors"): TensorFlow 1.x's executor (every
 * device busy at once, an op as soon as its inputs are there) or PyTorch's
 * eager mode (one host thread issues the ops in program order; a GPU's
 * ops queue on its stream). Files spell them "tf" and "torch". */
typedef enum dp_executor {
    DP_EXECUTOR_TF = 0,
    DP_EXECUTOR_TORCH,
    DP_EXECUTOR_COUNT
} dp_executor;

/* "tf" or "torch" ("?" out of range). */
const char *dp_executor_name(dp_executor e);
/* The executor of that name; -1 when the name is neither. */
int dp_executor_from_name(const char *name);

/* A hard device constraint on an op: a kind ("cpu", "gpu") or one device of
 * a kind ("gpu:1" = the second GPU of the device set, in file order). */
typedef enum dp_devcon_kind {
    DP_DEVCON_NONE = 0,
    DP_DEVCON_CPU,
    DP_DEVCON_GPU,
} dp_devcon_kind;

typedef struct dp_devcon {
    dp_devcon_kind kind;
    int32_t index; /* -1: any device of that kind */
} dp_devcon;

/* Parses "cpu", "gpu", "cpu:N", "gpu:N" (also TensorFlow's "/device:GPU:N"
 * and "/cpu:0" spellings, case-insensitive). Returns 0 on success, -1 when
 * the text is not a device constraint. */
int dp_devcon_parse(const char *text, dp_devcon *out);
/* Writes the canonical spelling ("gpu", "gpu:1") into buf. */
void dp_devcon_format(dp_devcon con, char *buf, size_t size);

/* One input of an op: tensor `slot` of op `op`. */
typedef struct dp_input {
    int32_t op;
    int32_t slot;
} dp_input;

/* One output tensor of an op. shape is NULL/rank 0 for {"bytes": N}. */
typedef struct dp_output {
    uint64_t bytes;
    dp_dtype dtype;  /* DP_DTYPE_NONE when given as bytes */
    int32_t rank;    /* -1 when given as bytes */
    int64_t dims_at; /* index of the first dim in graph->dims */
} dp_output;

/* A measured cost: seconds on devices whose model or kind is `key`. */
typedef struct dp_cost {
    int32_t key; /* interned string id */
    double seconds;
} dp_cost;

typedef struct dp_op {
    const char *name;  /* unique; owned by the graph */
    int32_t type;      /* interned op type ("MatMul") */
    int32_t scope;     /* interned layer path, -1 none */
    int32_t colocate;  /* interned colocation group name, -1 none */
    dp_devcon device;  /* hard constraint */
    double flops;
    uint64_t param_bytes;
    uint64_t temp_bytes;
    int32_t n_inputs, n_outputs, n_costs;
    int64_t inputs_at, outputs_at, costs_at; /* into graph arrays */
    /* Nonzero: the op runs inside one library call of its module (cuDNN's
     * or ATen's recurrent kernels: the file's "fused"), so the eager
     * executor's host issues it without a dispatch of its own and no
     * device adds a launch overhead to it. */
    int32_t fused;
} dp_op;

/* Interned strings: ids are dense from 0. */
typedef struct dp_strtab dp_strtab;

typedef struct dp_graph {
    char *name;
    int32_t n_ops;
    dp_op *ops;
    int64_t n_inputs;
    dp_input *inputs;
    int64_t n_outputs;
    dp_output *outputs;
    int64_t n_dims;
    int64_t *dims;
    int64_t n_costs;
    dp_cost *costs;
    dp_strtab *strings;
    /* DP_GRAPH_TF32_* bits: the float32 products that may take a device's
     * TF32 tensor-core peak (the file's "tf32"); 0, a graph that says
     * nothing, prices every float32 product at the FP32 peak. Set before
     * dp_graph_finalize. */
    unsigned tf32;
    /* The executor the simulator runs the step with (the file's
     * "executor"; TF when it says nothing). The one field a caller may
     * change after dp_graph_finalize (a front end's --executor), as long as
     * no simulator context of the graph lives. */
    dp_executor executor;

    /* Filled by dp_graph_finalize: */
    int finalized;
    int32_t *topo;           /* [n_ops] a topological order            */
    int64_t *tensor_at;      /* [n_ops+1] first tensor id of each op   */
    int64_t n_tensors;       /* = n_outputs                            */
    int64_t *consumers_at;   /* [n_tensors+1] CSR over consumer edges  */
    int32_t *consumers;      /* [n_inputs] consuming op of each edge   */
    int32_t n_colocate;      /* number of distinct colocation groups   */
    int32_t *coloc_group;    /* [n_ops] colocation group of each op:
                                0..n_colocate-1, numbered in the order
                                of each group's first op; -1 none. The
                                one place groups are computed: the
                                simulator, dp_units and the zoo read it */

    /* builder state (capacities) */
    int64_t cap_ops;
    int64_t cap_inputs, cap_outputs, cap_dims, cap_costs;
    dp_strtab *names;        /* op names; id == op index               */
} dp_graph;

/* Creates an empty graph named `name` (may be NULL). Returns NULL on OOM. */
dp_graph *dp_graph_init(const char *name);
void dp_graph_free(dp_graph *g);

/* Checks one name (of a graph, op, type, scope, group): at most
 * DP_GRAPH_NAME_MAX bytes, no control characters; NULL passes. Errors
 * (DP_STATUS_INVALID) name it as `what`, quoting its first 40 bytes. */
dp_status dp_graph_check_name(const char *s, const char *what, dp_error *err);

/* Adds an op and returns its index (>= 0), or -1 with err filled (duplicate
 * name, a name dp_graph_check_name refuses, out of memory). type may be NULL
 * (""), scope/colocate NULL (none). */
int32_t dp_graph_add_op(dp_graph *g, const char *name, const char *type, const char *scope,
                        const char *colocate, dp_error *err);
/* The following add to the most recently added op `op` only (builder order):
 * an input edge, an output of `bytes`, an output with shape and dtype
 * (bytes computed; fails on overflow), a measured cost for a model/kind. */
dp_status dp_graph_add_input(dp_graph *g, int32_t op, int32_t producer, int32_t slot, dp_error *err);
dp_status dp_graph_add_output_bytes(dp_graph *g, int32_t op, uint64_t bytes, dp_error *err);
dp_status dp_graph_add_output_shape(dp_graph *g, int32_t op, dp_dtype dtype, const int64_t *dims,
                                    int32_t rank, dp_error *err);
dp_status dp_graph_add_cost(dp_graph *g, int32_t op, const char *key, double seconds, dp_error *err);

/* Validates the whole graph and computes topo order, consumer lists and
 * colocation groups (coloc_group). Errors name the op (index and name):
 * input out of range, cycle (listing the ops on it), negative or non-finite
 * numbers, conflicting constraints in a colocation group. `what` prefixes
 * messages (usually the file name). After success the graph must not be
 * modified. */
dp_status dp_graph_finalize(dp_graph *g, const char *what, dp_error *err);

/* Writes into out [n_ops] a depth-first topological order of a finalized
 * graph: each op follows its producers, and after an op come, as far as
 * they can, its consumers and theirs (Kahn's algorithm with a stack, the
 * lowest index first among ready ops), so ops next to each other in the
 * order are mostly neighbours in the graph, where g->topo (FIFO) goes
 * level by level. Errors: DP_STATUS_NOMEM. */
dp_status dp_graph_topo_depth_first(const dp_graph *g, int32_t *out, dp_error *err);

/* Writes into out [n_ops] the topological order of a finalized graph that
 * takes, among the ready ops, the one of least key[op], then least
 * tie[op], then lowest index: a list scheduler's order under the caller's
 * priorities (key and tie [n_ops]; keys must not be NaN). Errors:
 * DP_STATUS_NOMEM. */
dp_status dp_graph_topo_keyed(const dp_graph *g, const double *key, const uint32_t *tie, int32_t *out,
                              dp_error *err);

/* Interned string access. */
const char *dp_graph_str(const dp_graph *g, int32_t id); /* "" for -1 */
int32_t dp_graph_intern(dp_graph *g, const char *s);       /* -1 on OOM */
/* Looks a string up without adding it; -1 when absent. */
int32_t dp_graph_find_str(const dp_graph *g, const char *s);
int32_t dp_graph_n_strings(const dp_graph *g);
/* Op index by name, -1 when absent. */
int32_t dp_graph_find_op(const dp_graph *g, const char *name);

/* An op that op i reads from or feeds, at random (g finalized): half the
 * time, when it has inputs, the producer of one of them; else a consumer
 * of one of its outputs. -1 when the side drawn has none. The placement
 * search and a learned agent's elite walks both move a unit towards one. */
int32_t dp_graph_neighbour(const dp_graph *g, int32_t i, dp_rng *rng);

/* The forward scope of a scope, by TensorFlow's naming convention: s
 * without its leading "gradients/" and "clip_by_global_norm/" (the name
 * scopes of the gradient and clipping ops), a suffix of s; s itself for a
 * forward op. */
const char *dp_graph_forward_scope(const char *s);

/* Whether scope s is a gradient or clipping scope (dp_graph_forward_scope
 * strips something from it, or it is "gradients" itself): its ops belong
 * to the backward pass. */
int dp_graph_is_gradient_scope(const char *s);

/* Tensor id of (op, slot) after finalize. */
static inline int64_t dp_graph_tensor(const dp_graph *g, int32_t op, int32_t slot) {
    return g->tensor_at[op] + slot;
}

/* Reads a dplace-graph v1 JSON file. On any problem returns NULL and fills
 * err with one message naming the file, the op (index and name) and the
 * problem; nothing is left allocated. */
dp_graph *dp_graph_read_file(const char *path, dp_error *err);
/* Same, from a NUL-terminated buffer; `what` names it in messages. */
dp_graph *dp_graph_read_string(const char *text, const char *what, dp_error *err);
/* Writes g as dplace-graph v1 JSON, atomically (temporary file + rename). */
dp_status dp_graph_write_file(const dp_graph *g, const char *path, dp_error *err);

/* Sums over the graph, for summaries. */
typedef struct dp_graph_stats {
    int32_t n_ops;
    int64_t n_edges, n_tensors;
    double total_flops;
    uint64_t total_param_bytes, total_output_bytes;
    int32_t n_constrained, n_colocate_groups;
} dp_graph_stats;
void dp_graph_get_stats(const dp_graph *g, dp_graph_stats *out);

/* A synthetic training-like graph with about n_ops ops: `layers` blocks of
 * forward ops (matmul/conv-like, elementwise, variables with reads), then the
 * mirrored backward pass and per-variable update ops colocated with their
 * variables, plus a few CPU-only ops. Deterministic for a seed. Used by
 * benchmarks, tests and as the built-in demo graph. */
dp_graph *dp_graph_synth(int32_t n_ops, uint64_t seed, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
