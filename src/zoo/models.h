/* The zoo's model builders (src/zoo/models_*.c), called by dp_zoo_build.
 * Every hyperparameter and its source is in docs/zoo.md. */
#ifndef DPLACE_ZOO_MODELS_H
#define DPLACE_ZOO_MODELS_H

#include "dplace/graph.h"

/* Recurrent models: the RNN language model (Zaremba et al. 2014, as the
 * ColocRL and Hierarchical Planner papers use it), the attention NMT of those
 * papers, and GNMT as in Google's tensorflow/nmt (the Mars paper). */
typedef enum zoo_rnn_kind {
    ZOO_RNN_LM = 0,
    ZOO_RNN_NMT,
    ZOO_RNN_GNMT,
} zoo_rnn_kind;

typedef struct zoo_rnn_config {
    zoo_rnn_kind kind;
    int layers;      /* LSTM layers (per side for NMT/GNMT)      */
    int64_t hidden;  /* LSTM units                               */
    int64_t vocab;   /* vocabulary (source and target)           */
    int steps;       /* unrolled time steps (each side)          */
    int64_t batch;
} zoo_rnn_config;

dp_graph *zoo_build_rnn(const char *name, const zoo_rnn_config *c, dp_error *err);

/* Convolutional models (models_cnn.c): Inception-V3 (TF-slim, trained as
 * inception_train.py trains it) at 299x299, 1001 classes; ResNet v1 of
 * depth 50, 101 or 152 at image x image, 1000 classes. */
dp_graph *zoo_build_inception_v3(const char *name, int64_t batch, dp_error *err);
dp_graph *zoo_build_resnet(const char *name, int depth, int64_t batch, int64_t image, dp_error *err);

/* BERT-Base fine-tuning (SQuAD-style span head) at a sequence length. */
dp_graph *zoo_build_bert(const char *name, int64_t batch, int64_t seq, dp_error *err);

#endif
