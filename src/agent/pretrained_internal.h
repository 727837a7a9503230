/* The pretrained placer's pieces shared by its files (pretrained_policy.c:
 * the network and its file; pretrained_decode.c: the features and the
 * decoder; pretrained.c: the method). Not part of the public API. */
#ifndef DPLACE_PRETRAINED_INTERNAL_H
#define DPLACE_PRETRAINED_INTERNAL_H

#include "dplace/nn.h"
#include "dplace/pretrained.h"

/* The features of one (unit, device) row, in the order the network reads
 * them: the policy file's weights are laid out by these indices, so
 * reordering them is a new feature set (DP_PRETRAINED_FEATURE_SET).
 * docs/pretrained.md groups them; pretrained_decode.c computes them. */
enum pretrained_feature {
    /* the unit, the same on every row of a decision */
    PF_COMPUTE,       /* compute on its fastest device, log against the mean */
    PF_MEMORY,        /* memory at the peak, log against the mean            */
    PF_PARAMS,        /* parameter bytes, log against the mean memory        */
    PF_POSITION,      /* position in the decode order, 0 to 1                */
    PF_TO_END,        /* longest path to the end, of the step's scale T      */
    PF_FROM_START,    /* longest path from the start, of T                   */
    PF_BYTES_IN,      /* bytes in, log against the mean                      */
    PF_BYTES_OUT,     /* bytes out, log against the mean                     */
    PF_UNIT_END,      /* the unit's features end here (they come first)      */
    /* the device */
    PF_IS_CPU = PF_UNIT_END, /* 1 for the CPU                                */
    PF_PEAK,          /* log of its peak against the set's largest           */
    PF_DEVICE_MEMORY, /* log of its memory against the set's largest         */
    PF_N_GPUS,        /* the set's GPUs, of 8                                */
    PF_SLOWDOWN,      /* log of the unit's compute here against its fastest  */
    /* the schedule so far */
    PF_START,         /* when the unit could start here, after the soonest, of T */
    PF_FINISH,        /* when it would finish here, after the soonest, of T */
    PF_FINISH_UNITS,  /* the same in the unit's own compute times, log       */
    PF_FREE_AT,       /* when the device is free, of T                       */
    PF_FREE_AFTER,    /* when it is free, after the soonest free device, of T */
    PF_LOAD,          /* compute placed here, of a GPU's share of the graph  */
    PF_MEMORY_AFTER,  /* its memory with the unit and its copies, of its own */
    PF_FITS,          /* 1 when that is within the device's memory           */
    PF_NEIGHBOURS,    /* share of the placed neighbours' bytes here          */
    PF_PREVIOUS,      /* 1 when the previous unit went here                  */
    PF_TRANSFER_IN,   /* transfer time of its inputs here, of T              */
    PF_SOONEST,       /* 1 when it finishes here soonest                     */
    PF_PLACED,        /* share of the graph's work placed so far             */
    /* the graph's structure */
    PF_SCOPE_SHARE,   /* share of the unit's layer scope placed here         */
    PF_LAYER_SHARE,   /* share of the scope's parent (the layer) placed here */
    PF_SCOPE_BEGUN,   /* 1 when any of the unit's scope is placed            */
    /* the hints: two per heuristic (DP_PRETRAINED_HINTS), in turn */
    PF_HINT,          /* share of the units the hint groups with it, here    */
    PF_HINT_SLOWER,   /* how much slower the hint is than the faster hint    */
    PF_END = PF_HINT + 2 * DP_PRETRAINED_HINTS
};

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
