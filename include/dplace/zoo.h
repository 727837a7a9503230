/* dplace: built-in graphs, selected by name with --model: the seed papers'
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

/* The seed papers' measured step times (seconds per training step) for a
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

#ifdef __cplusplus
}
#endif
#endif
