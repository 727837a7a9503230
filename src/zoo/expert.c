/* The human-expert placements of the four papers for zoo graphs, read from
 * the ops' scopes (docs/zoo.md):
 *  - rnnlm, nmt*: LSTM layer K on GPU K (layers spread in contiguous blocks
 *    when there are more layers than GPUs); embeddings with the first layer;
 *    attention, softmax and loss with the last (Hierarchical Planner §4,
 *    ColocRL §4);
 *  - gnmt*: tensorflow/nmt's round robin: the bidirectional encoder layer on
 *    GPU 0, encoder layer K on GPU K mod G, decoder layer K on GPU K mod G,
 *    attention with decoder layer 0, the output projection on GPU
 *    (L < G ? L : L - 1) mod G (Mars §5.1);
 *  - inception*, resnet*: everything on one GPU;
 *  - bert*: none (Google's BERT has no model-parallel placement).
 * Gradient and clipping ops go with their forward scope (TensorFlow's
 * colocate_gradients_with_ops), a colocation group with its variable, and
 * CPU-only ops to the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/placement.h"
#include "dplace/zoo.h"

typedef enum family {
    FAMILY_NONE = 0,
    FAMILY_RNNLM,
    FAMILY_NMT,
    FAMILY_GNMT,
    FAMILY_CNN,
    FAMILY_BERT,
} family;

/* The family of a zoo graph, by its exact name (graphs from elsewhere, such
 * as imported ones, have none even when their names look alike). */
static family family_of(const char *name) {
    static const struct {
        const char *name;
        family f;
    } names[] = {{"rnnlm", FAMILY_RNNLM},       {"nmt2", FAMILY_NMT},         {"nmt4", FAMILY_NMT},
                 {"nmt8", FAMILY_NMT},          {"gnmt4", FAMILY_GNMT},       {"inception_v3", FAMILY_CNN},
                 {"resnet152", FAMILY_CNN},     {"bert_base", FAMILY_BERT}};
    if (!name) return FAMILY_NONE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i].name)) return names[i].f;
    return FAMILY_NONE;
}

/* Layer number after "layer_" in scope s, or -1. */
static int layer_of(const char *s) {
    const char *p = strstr(s, "layer_");
    if (!p) return -1;
    return atoi(p + 6);
}

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

dp_status dp_zoo_expert_placement(const dp_graph *g, const struct dp_devices *ds, int32_t *out, dp_error *err) {
    family f = family_of(g->name);
    if (f == FAMILY_NONE)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED,
                            "graph \"%s\": no human-expert placement is known for it (only for zoo models)",
                            g->name ? g->name : "");
    if (f == FAMILY_BERT)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED,
                            "graph \"%s\": BERT has no human-expert placement (Google's BERT does not support "
                            "model-parallel training; Mars §5.1)",
                            g->name);
    int32_t gpus[DP_MAX_DEVICES], n_gpu = 0, cpu = -1;
    for (int32_t d = 0; d < ds->n_devices; d++) {
        if (ds->devices[d].kind == DP_DEVKIND_GPU) gpus[n_gpu++] = d;
        else if (cpu < 0) cpu = d;
    }
    if (!n_gpu)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "device set \"%s\": the expert placement needs a GPU",
                            ds->name);
    if (f == FAMILY_CNN) return dp_placement_single(g, ds, gpus[0], out, err);
    int L = 0;
    for (int32_t i = 0; i < g->n_ops; i++) {
        int k = layer_of(dp_graph_str(g, g->ops[i].scope));
        if (k + 1 > L) L = k + 1;
    }
    if (L == 0) L = 1;
    /* GPU of layer k (index into gpus) */
    int32_t first = gpus[0];
    int32_t last_rnn = gpus[((L - 1) * n_gpu / L) % n_gpu];
    int32_t out_gnmt = gpus[(L < n_gpu ? L : L - 1) % n_gpu];
    for (int32_t i = 0; i < g->n_ops; i++) {
        const char *s = dp_graph_forward_scope(dp_graph_str(g, g->ops[i].scope));
        int k = layer_of(s);
        int32_t d;
        if (f == FAMILY_GNMT) {
            if (k >= 0) d = gpus[k % n_gpu];
            else if (starts(s, "attention") || starts(s, "embedding")) d = first;
            else d = out_gnmt;
        } else {
            if (k >= 0) d = gpus[(k * n_gpu / L) % n_gpu];
            else if (starts(s, "embedding") || starts(s, "input")) d = first;
            else d = last_rnn;
        }
        if (!dp_placement_allowed(g, ds, i, d)) d = cpu >= 0 && dp_placement_allowed(g, ds, i, cpu) ? cpu : first;
        out[i] = d;
    }
    /* a colocation group goes where its first op (the variable) went */
    if (g->n_colocate > 0) {
        int32_t *dev = malloc((size_t)g->n_colocate * sizeof(int32_t));
        if (!dev) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        for (int32_t k = 0; k < g->n_colocate; k++) dev[k] = -1;
        for (int32_t i = 0; i < g->n_ops; i++) {
            int32_t c = g->coloc_group[i];
            if (c < 0) continue;
            if (dev[c] < 0) dev[c] = out[i];
            out[i] = dev[c];
        }
        free(dev);
    }
    return DP_STATUS_OK;
}

dp_status dp_zoo_resolve_placement(const char *spec, const dp_graph *g, const struct dp_devices *ds, int32_t *out,
                                   dp_error *err) {
    if (strcmp(spec, "expert") == 0) return dp_zoo_expert_placement(g, ds, out, err);
    return dp_placement_resolve(spec, g, ds, out, err);
}
