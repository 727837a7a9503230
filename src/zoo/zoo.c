/* Built-in graphs by name: the four papers' benchmark models (docs/zoo.md)
 * and the synthetic generator. */
#include "dplace/zoo.h"

#include <stdlib.h>
#include <string.h>

#include "zoo/models.h"

static const dp_zoo_entry entries[] = {
    {"inception_v3", "Inception-V3 (TF-slim), batch 1; ColocRL/Hierarchical Planner/Mars; 24,713 ops in the papers"},
    {"resnet152", "ResNet-152, 112x112 images, batch 128; Hierarchical Planner; 20,586 ops in the paper"},
    {"rnnlm", "2-layer LSTM language model (1500 units, 40 steps, vocabulary 36k), batch 64; 9,021 ops in the paper"},
    {"nmt2", "attention NMT, 2 LSTM layers of 1024 per side, 40 steps, batch 64; 28,044 ops in the paper"},
    {"nmt4", "attention NMT, 4 layers per side, batch 64; 46,600 ops in the paper"},
    {"nmt8", "attention NMT, 8 layers per side, batch 64; 83,712 ops in the paper"},
    {"gnmt4", "GNMT (tensorflow/nmt), 4 layers of 256 units, batch 256; Mars"},
    {"bert_base", "BERT-Base, sequence length 384, batch 24; Mars"},
    {"synthetic", "training-like RNN grid, about 25,000 ops (synthetic-N: about N ops)"},
    {NULL, NULL},
};

const dp_zoo_entry *dp_zoo_list(void) { return entries; }

/* Default hyperparameters; docs/zoo.md gives the source of each. */
#define RNNLM_VOCAB 36000
#define NMT_VOCAB 55000
#define GNMT_VOCAB 100000
#define GNMT_STEPS 50
#define RESNET152_IMAGE 112 /* input height and width; docs/zoo.md */

static int rnn_config(const char *name, int64_t batch, zoo_rnn_config *c) {
    memset(c, 0, sizeof *c);
    if (!strcmp(name, "rnnlm")) {
        *c = (zoo_rnn_config){ZOO_RNN_LM, 2, 1500, RNNLM_VOCAB, 40, 64};
    } else if (!strcmp(name, "nmt2") || !strcmp(name, "nmt4") || !strcmp(name, "nmt8")) {
        *c = (zoo_rnn_config){ZOO_RNN_NMT, name[3] - '0', 1024, NMT_VOCAB, 40, 64};
    } else if (!strcmp(name, "gnmt4")) {
        *c = (zoo_rnn_config){ZOO_RNN_GNMT, 4, 256, GNMT_VOCAB, GNMT_STEPS, 256};
    } else {
        return 0;
    }
    if (batch > 0) c->batch = batch;
    return 1;
}

dp_graph *dp_zoo_build(const char *name, int32_t batch, dp_error *err) {
    if (batch < 0 || batch > 65536) {
        dp_error_set(err, DP_STATUS_INVALID, "model \"%s\": batch %d is out of range 1..65536", name, batch);
        return NULL;
    }
    zoo_rnn_config rc;
    if (rnn_config(name, batch, &rc)) return zoo_build_rnn(name, &rc, err);
    if (!strcmp(name, "inception_v3")) return zoo_build_inception_v3(name, batch ? batch : 1, err);
    if (!strcmp(name, "resnet152")) return zoo_build_resnet(name, 152, batch ? batch : 128, RESNET152_IMAGE, err);
    if (!strcmp(name, "bert_base")) return zoo_build_bert(name, batch ? batch : 24, 384, err);
    if (strcmp(name, "synthetic") == 0) return dp_graph_synth(25000, 1, err);
    if (strncmp(name, "synthetic-", 10) == 0) {
        char *end = NULL;
        long n = strtol(name + 10, &end, 10);
        if (end && !*end && n >= 200 && n <= 2000000) return dp_graph_synth((int32_t)n, 1, err);
        dp_error_set(err, DP_STATUS_INVALID, "model \"%s\": N must be a whole number in 200..2000000", name);
        return NULL;
    }
    dp_error_set(err, DP_STATUS_INVALID, "unknown model \"%s\" (dplace zoo list shows the built-in models)", name);
    return NULL;
}

static const dp_zoo_paper_row paper_rows[] = {
    {"inception_v3", "k40x2", 24713, 0.61, 0.15, 0.15, "Hierarchical Planner Table 1 (expert: one GPU)"},
    {"resnet152", "k40x2", 20586, DP_ZOO_NONE, 1.18, 1.18, "Hierarchical Planner Table 1 (expert: one GPU)"},
    {"rnnlm", "k40x2", 9021, 6.89, 1.57, 1.57, "Hierarchical Planner Table 1"},
    {"nmt2", "k40x2", 28044, 6.46, DP_ZOO_OOM, 2.13, "Hierarchical Planner Table 1"},
    {"nmt4", "k40x4", 46600, 10.68, DP_ZOO_OOM, 3.64, "Hierarchical Planner Table 1"},
    {"nmt8", "k40x8", 83712, 11.52, DP_ZOO_OOM, 3.88, "Hierarchical Planner Table 1"},
    {"inception_v3", "p100x4", 24713, DP_ZOO_NONE, 0.071, 0.071, "Mars Table 2"},
    {"gnmt4", "p100x4", 0, DP_ZOO_NONE, DP_ZOO_OOM, 1.661, "Mars Table 2"},
    {"bert_base", "p100x4", 0, DP_ZOO_NONE, DP_ZOO_OOM, DP_ZOO_NONE, "Mars Table 2 (no expert placement exists)"},
    {NULL, NULL, 0, 0, 0, 0, NULL},
};

const dp_zoo_paper_row *dp_zoo_paper_table(void) { return paper_rows; }
