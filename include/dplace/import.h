/* dplace: importers of graphs described by other tools.
 *
 * Today: the JSON graphs and human-expert splits of msr-fiddle/dnn-partitioning,
 * which accompany "Efficient Algorithms for Device Placement of DNN Graph
 * Operators" (Tarnawski et al., NeurIPS 2020). A graph there is a DAG of
 * layers or operators with a measured CPU and accelerator latency each, a
 * memory size, colocation classes, a backward flag and per-edge transfer
 * costs, plus the machine (accelerators, CPU cores, accelerator memory). The
 * importer turns one into a dplace graph and the matching device set; a split
 * (which nodes go on which CPU or accelerator) becomes a placement. The
 * mapping, the units and every assumption are in docs/import.md. */
#ifndef DPLACE_IMPORT_H
#define DPLACE_IMPORT_H

#include "dplace/devices.h"
#include "dplace/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bandwidth of a CPU <-> accelerator link when neither the options nor the
 * file say otherwise: 2 GiB/s, the size/cost ratio of every edge in the
 * latency-inputs and OperatorGraphs files (costs in ms). */
#define DP_IMPORT_MSR_DEFAULT_BANDWIDTH 2147483648.0

/* Where an edge's bytes come from. */
typedef enum dp_import_edge_bytes {
    DP_IMPORT_EDGE_BYTES_SIZE = 0, /* the edge's "size" when present, else cost x bandwidth */
    DP_IMPORT_EDGE_BYTES_COST,     /* cost x bandwidth for every edge ("size" ignored)      */
    DP_IMPORT_EDGE_BYTES_COUNT
} dp_import_edge_bytes;

typedef struct dp_import_msr_options {
    double time_unit_s;              /* seconds per unit of cpuLatency, fpgaLatency, cost (1e-3: ms) */
    double bandwidth;                /* bytes/s of each CPU <-> accelerator link; 0: from the file    */
    dp_import_edge_bytes edge_bytes; /* default DP_IMPORT_EDGE_BYTES_SIZE                             */
    const char *name;                /* graph name; NULL: the file's base name without ".json"        */
} dp_import_msr_options;

/* Defaults: milliseconds, bandwidth from the file, bytes from "size". */
dp_import_msr_options dp_import_msr_options_default(void);

/* What the importer found and decided. */
typedef struct dp_import_msr_info {
    int32_t n_nodes, n_edges;          /* as in the file (= ops, = inputs)                 */
    int32_t n_backward;                /* nodes with isBackwardNode                        */
    int32_t n_cpu_only;                /* nodes with supportedOnFpga false                 */
    int32_t n_colocate_groups;         /* colorClasses with two or more nodes              */
    int32_t max_fpgas, max_cpus;       /* the file's machine                               */
    double max_size_per_fpga;          /* bytes                                            */
    double bandwidth;                  /* bytes/s used for the links and derived bytes     */
    int bandwidth_from_file;           /* 1: the median size/cost ratio of the file's edges */
    int32_t n_edges_bytes_from_cost;   /* edges whose bytes are cost x bandwidth           */
    int32_t n_edges_off_bandwidth;     /* edges whose size and cost disagree with the
                                          bandwidth by more than 1% (their simulated
                                          transfer time follows the size)                 */
} dp_import_msr_info;

/* An imported graph with its device set. Op i is the file's i-th node. */
typedef struct dp_import_msr {
    char *source;           /* the file name (or `what`) it was read from            */
    dp_graph *graph;        /* finalized                                             */
    dp_devices *devices;    /* finalized: cpu:0 and gpu:0 .. gpu:(maxFPGAs-1)          */
    int64_t *node_id;       /* [n_ops] the file's "id" of each op                    */
    int64_t *color_class;   /* [n_ops] the file's "colorClass"; see has_color        */
    uint8_t *has_color;     /* [n_ops] 1 when the node has a colorClass              */
    int32_t *by_id;         /* [n_ops] op indices sorted by node id (for lookups)    */
    dp_import_msr_info info;
} dp_import_msr;

/* Reads an MSR dnn-partitioning graph file and builds the dplace graph and
 * device set (docs/import.md). opt may be NULL (defaults). On any problem
 * returns NULL and fills err with one message naming the file, the item
 * (nodes[i] with its id, edges[i]) and the problem: malformed JSON, missing or
 * mistyped field, negative latency, duplicate id, edge to an unknown node,
 * self-loop, a cycle (listing node ids), outgoing edges of one node with
 * different costs. Nothing is left allocated. */
dp_import_msr *dp_import_msr_read_file(const char *path, const dp_import_msr_options *opt, dp_error *err);
/* Same, from a NUL-terminated buffer; `what` names it in messages. */
dp_import_msr *dp_import_msr_read_string(const char *text, const char *what, const dp_import_msr_options *opt,
                                         dp_error *err);
void dp_import_msr_free(dp_import_msr *imp);

/* Op index of the node with this id, -1 when absent. */
int32_t dp_import_msr_find_node(const dp_import_msr *imp, int64_t id);

/* How a split was turned into a placement. */
typedef struct dp_import_split_info {
    int32_t n_listed;   /* ops the split names                                   */
    int32_t n_inferred; /* ops placed with their colorClass (backward passes)    */
    int32_t n_on_cpu;   /* ops on cpu:0                                          */
    int32_t n_gpus;     /* accelerators holding at least one op                  */
} dp_import_split_info;

/* Reads an MSR split ({"cpus": [{"nodes": [ids]}], "fpgas": [...]}, the
 * human-experts files or the output of their tools) for the imported graph
 * imp, into placement[imp->graph->n_ops] (indices into imp->devices): every
 * "cpus" entry goes to cpu:0, fpgas[k] to gpu:k. A node the split does not
 * name goes where the named nodes of its colorClass are (this is how an
 * inference split places a training graph's backward nodes). Errors name the
 * split file and the entry: malformed split, a node id the graph lacks (the
 * split belongs to another graph), a node named twice, more accelerators than
 * the graph's maxFPGAs, a colorClass split across devices, a node that can be
 * placed neither way (the split does not cover the graph). info may be NULL. */
dp_status dp_import_msr_read_split(const char *path, const dp_import_msr *imp, int32_t *placement,
                                   dp_import_split_info *info, dp_error *err);
/* Same, from a NUL-terminated buffer; `what` names it in messages. */
dp_status dp_import_msr_read_split_string(const char *text, const char *what, const dp_import_msr *imp,
                                          int32_t *placement, dp_import_split_info *info, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
