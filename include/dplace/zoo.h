/* dplace: built-in graphs, selected by name with --model: the four papers'
 * benchmark models as TensorFlow-style training graphs (inception_v3,
 * resnet152, rnnlm, nmt2/4/8, gnmt4, bert_base; docs/zoo.md), and the
 * synthetic generator ("synthetic", "synthetic-N"). */
#ifndef DPLACE_ZOO_H
#define DPLACE_ZOO_H

#include "dplace/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds the named graph; batch 0 = the model's default. NULL with err on an
 * unknown name or a bad size. */
dp_graph *dp_zoo_build(const char *name, int32_t batch, dp_error *err);

/* Names and one-line descriptions, NULL-terminated. */
typedef struct dp_zoo_entry {
    const char *name;
    const char *description;
} dp_zoo_entry;
const dp_zoo_entry *dp_zoo_list(void);

/* The human-expert placement the papers describe for a zoo graph (matched by
 * the graph's name, e.g. "nmt4"): RNNLM/NMT one LSTM layer per GPU with
 * attention and softmax on the last layer's GPU and embeddings on the first,
 * GNMT layers round-robin, CNNs on one GPU; CPU-only ops on the CPU.
 * Fills out[g->n_ops]. Returns DP_STATUS_UNSUPPORTED with a reason in err
 * when the graph has no expert placement (BERT, graphs not from the zoo). */
struct dp_devices;
dp_status dp_zoo_expert_placement(const dp_graph *g, const struct dp_devices *ds, int32_t *out, dp_error *err);

/* Resolves a PLACEMENT argument as the CLI takes it: "expert" is
 * dp_zoo_expert_placement; anything else goes to dp_placement_resolve
 * (placement.h: a device name, "cpu", "gpu", or a placement file). */
dp_status dp_zoo_resolve_placement(const char *spec, const dp_graph *g, const struct dp_devices *ds, int32_t *out,
                                   dp_error *err);

/* The four papers' measured step times (seconds per training step) for a
 * zoo model on a device preset: CPU only, GPU only, human expert. A value
 * of DP_ZOO_OOM means the paper reports out of memory, DP_ZOO_NONE that it
 * reports nothing (or no such placement exists). paper_ops: the op count the
 * papers give, 0 when none. Sources in docs/zoo.md. NULL-terminated. */
#define DP_ZOO_OOM (-1.0)
#define DP_ZOO_NONE (-2.0)
typedef struct dp_zoo_paper_row {
    const char *model;
    const char *devices;
    int32_t paper_ops;
    double cpu_s, gpu_s, expert_s;
    const char *source;
} dp_zoo_paper_row;
const dp_zoo_paper_row *dp_zoo_paper_table(void);

/* ---- calibration: a paper row beside dplace's simulation ------------------
 * One function serves bench/bench_zoo (which prints the table) and
 * tests/test_calibration.c (which holds every cell); docs/calibration.md. */

/* The placements a paper row measures, in the table's order. */
typedef enum dp_zoo_calibration_placement {
    DP_ZOO_CALIBRATION_PLACEMENT_CPU,    /* every op on the first CPU (dp_placement_single) */
    DP_ZOO_CALIBRATION_PLACEMENT_GPU,    /* every op on the first GPU, CPU-only ops on the CPU */
    DP_ZOO_CALIBRATION_PLACEMENT_EXPERT, /* dp_zoo_expert_placement */
    DP_ZOO_CALIBRATION_PLACEMENT_COUNT
} dp_zoo_calibration_placement;

/* "cpu", "gpu", "expert". */
const char *dp_zoo_calibration_placement_name(dp_zoo_calibration_placement p);

/* The largest |dplace / paper - 1| a measured cell may have. */
#define DP_ZOO_CALIBRATION_TOLERANCE 0.30

/* One cell. A cell is judged when the paper gives a time or OOM (not
 * DP_ZOO_NONE); a judged cell misses when dplace has no value for it, a
 * measured cell when dplace runs out of memory or its ratio is off by more
 * than the tolerance, an OOM cell when dplace does not run out of memory. */
typedef struct dp_zoo_calibration_cell {
    double paper_s;  /* the row's value: seconds, DP_ZOO_OOM or DP_ZOO_NONE */
    int simulated;   /* 0: the placement does not exist for the graph (note says why) */
    double dplace_s; /* simulated step time, when simulated */
    int dplace_oom;  /* the simulator's verdict is out of memory */
    double ratio;    /* dplace_s / paper_s when both are times, else 0 */
    int judged, miss;
    char note[160];  /* why not simulated, or why a miss; "" otherwise */
} dp_zoo_calibration_cell;

typedef struct dp_zoo_calibration_row {
    const dp_zoo_paper_row *paper;
    int32_t n_ops;  /* of dplace's graph */
    double build_s; /* wall time of dp_zoo_build */
    int n_miss;     /* cells that miss */
    dp_zoo_calibration_cell cell[DP_ZOO_CALIBRATION_PLACEMENT_COUNT];
} dp_zoo_calibration_row;

/* Builds row's model (default batch) and its device preset, simulates every
 * placement of the row once (no noise) and fills out, judging the cells
 * against tolerance. A miss is a result, not an error: returns an error
 * only when the model, the preset or the simulator context cannot be built
 * or a simulation fails, with err naming the model. */
dp_status dp_zoo_check_calibration(const dp_zoo_paper_row *row, double tolerance, dp_zoo_calibration_row *out,
                                   dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
