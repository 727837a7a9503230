/* The pretrained placer's pieces shared by its files (pretrained_policy.c:
 * the network and its file; pretrained_decode.c: the features and the
 * decoder; pretrained.c: the method). Not part of the public API. */
#ifndef DPLACE_PRETRAINED_INTERNAL_H
#define DPLACE_PRETRAINED_INTERNAL_H

#include "dplace/nn.h"
#include "dplace/pretrained.h"

struct dp_pretrained_policy {
    dp_nn_params params; /* mean, std, w1, b1, w2, b2, w3, b3 */
    int32_t h1, h2;
    char note[64];
    float *wt; /* w1 [F, h1] then w2 [h1, h2], transposed: what the forward
                  pass reads (pretrained_policy_sync keeps them) */
};

/* Copies the policy's w1 and w2 into p->wt transposed; called whenever
 * the weights change (made, read, stepped). */
void pretrained_policy_sync(dp_pretrained_policy *p);

/* One pass's activations over n rows (n <= DP_MAX_DEVICES). */
typedef struct pretrained_acts {
    float *x, *z1, *a1, *z2, *a2, *score;
} pretrained_acts;

dp_status pretrained_acts_init(pretrained_acts *a, const dp_pretrained_policy *p, int n, dp_error *err);
void pretrained_acts_free(pretrained_acts *a);

/* Scores rows [n, FEATURES] into a->score [n]. */
void pretrained_forward(const dp_pretrained_policy *p, const float *rows, int n, pretrained_acts *a);

/* Adds to grad (laid out as p's parameters) the gradient of the scores'
 * dscore [n] through the pass a; s is scratch of the same size. */
void pretrained_backward(const dp_pretrained_policy *p, float *grad, const pretrained_acts *a, const float *dscore,
                         int n, pretrained_acts *s);

/* The order the decoder places a finalized graph's ops in, into out
 * [n_ops]: topological, layer by layer where g->topo goes time step by time
 * step (pretrained_decode.c says why). DP_STATUS_NOMEM. */
dp_status pretrained_layer_order(const dp_graph *g, int32_t *out);

#endif
