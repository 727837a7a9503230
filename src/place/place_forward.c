/* The forward and backward parts of a training graph, for Baechi's
 * forward-only placement (docs/baselines.md): Baechi places the forward ops
 * and builds the gradients with TensorFlow's colocate_gradients_with_ops, so
 * each gradient op runs where the forward op it differentiates runs
 * (beomyeol/baechi, train.py: --only_forward requires
 * --colocate_grads_with_ops).
 *
 * dplace's graphs do not name the forward op of a gradient op; they keep
 * TensorFlow's name scopes: the gradient of an op in scope X is built in
 * "gradients/X" (and clipped in "clip_by_global_norm/..."). So:
 *   - an op is backward when its scope is a gradient or clipping scope, or
 *     when it reads a backward op (the optimizer's updates, say);
 *   - a gradient op's anchor is the first op it reads that is a forward op
 *     of its forward scope X (ReluGrad reads the Relu it differentiates,
 *     Conv2DBackpropFilter the convolution's input, ...), else the anchor of
 *     the first op of its own gradient scope it reads (the Sum and Reshape
 *     steps of a broadcast gradient), else none (an AddN that sums the
 *     contributions of other layers, say).
 * A graph with no gradient scope at all is split by its op types instead
 * (fwd_by_types). */
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

/* Whether an op type names a gradient computation: PyTorch's autograd names
 * them so, as ATen's functions (convolution_backward) or as autograd's
 * nodes (ConvolutionBackward0). */
static int backward_type(const char *t) {
    for (; *t; t++)
        if ((t[0] == 'b' || t[0] == 'B') && !strncmp(t + 1, "ackward", 7)) return 1;
    return 0;
}

/* The forward and backward parts of a graph without gradient scopes (a
 * PyTorch step traced op by op, without module paths): an op is backward
 * when its type names a gradient computation or when it reads a backward
 * op (the optimizer's updates), or when it computes nothing and backward
 * ops alone read it; its anchor is the first forward op it reads (a
 * convolution's gradient reads the convolution's input, an activation's
 * gradient the activation), else the anchor of the first backward op it
 * reads. A graph with none of these types is left with no backward part. */
static void fwd_by_types(place_fwd *f, const dp_graph *g) {
    for (int32_t j = 0; j < g->n_ops; j++) {
        int32_t op = g->topo[j];
        const dp_op *o = &g->ops[op];
        int back = backward_type(dp_graph_str(g, o->type));
        for (int32_t k = 0; k < o->n_inputs && !back; k++) back = f->backward[g->inputs[o->inputs_at + k].op];
        f->backward[op] = (uint8_t)back;
        f->n_backward += back;
        f->anchor[op] = -1;
        if (!back) continue;
        for (int32_t k = 0; k < o->n_inputs && f->anchor[op] < 0; k++) {
            int32_t p = g->inputs[o->inputs_at + k].op;
            f->anchor[op] = f->backward[p] ? -1 : p;
        }
        for (int32_t k = 0; k < o->n_inputs && f->anchor[op] < 0; k++)
            f->anchor[op] = f->anchor[g->inputs[o->inputs_at + k].op];
    }
    if (!f->n_backward) return;
    /* What the forward pass keeps only for the backward one (autograd's
     * detached views of saved activations, the seed of the loss's gradient):
     * ops that compute nothing and are read by backward ops alone, in
     * reverse order so that a chain of them goes whole. Ops that compute
     * stop it, or the loss and everything before it would follow. */
    for (int32_t j = g->n_ops - 1; j >= 0; j--) {
        int32_t op = g->topo[j];
        if (f->backward[op] || g->ops[op].flops > 0 || g->ops[op].n_inputs == 0) continue;
        int only = 0;
        for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++)
            for (int64_t x = g->consumers_at[t]; x < g->consumers_at[t + 1] && only >= 0; x++)
                only = f->backward[g->consumers[x]] ? 1 : -1;
        if (only <= 0) continue;
        f->backward[op] = 1;
        f->n_backward++;
        f->anchor[op] = f->backward[g->inputs[g->ops[op].inputs_at].op] ? -1 : g->inputs[g->ops[op].inputs_at].op;
    }
}

void place_fwd_free(place_fwd *f) {
    if (!f) return;
    free(f->backward);
    free(f->anchor);
    memset(f, 0, sizeof *f);
}

dp_status place_fwd_init(place_fwd *f, const dp_graph *g, dp_error *err) {
    memset(f, 0, sizeof *f);
    int32_t n = g->n_ops;
    f->backward = calloc((size_t)n + 1, 1);
    f->anchor = malloc(((size_t)n + 1) * sizeof(int32_t));
    uint8_t *grad = calloc((size_t)n + 1, 1); /* op in a gradient scope */
    if (!f->backward || !f->anchor || !grad) {
        free(grad);
        place_fwd_free(f);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (forward part of %d ops)", n);
    }
    for (int32_t j = 0; j < n; j++) {
        int32_t op = g->topo[j];
        const dp_op *o = &g->ops[op];
        const char *scope = dp_graph_str(g, o->scope);
        f->anchor[op] = -1;
        grad[op] = o->scope >= 0 && dp_graph_is_gradient_scope(scope);
        int back = grad[op];
        for (int32_t k = 0; k < o->n_inputs && !back; k++) back = f->backward[g->inputs[o->inputs_at + k].op];
        f->backward[op] = (uint8_t)back;
        f->n_backward += back;
        if (!grad[op]) continue;
        const char *fs = dp_graph_forward_scope(scope);
        for (int32_t k = 0; k < o->n_inputs && f->anchor[op] < 0; k++) {
            int32_t p = g->inputs[o->inputs_at + k].op;
            if (!f->backward[p] && g->ops[p].scope >= 0 && !strcmp(dp_graph_str(g, g->ops[p].scope), fs))
                f->anchor[op] = p;
        }
        for (int32_t k = 0; k < o->n_inputs && f->anchor[op] < 0; k++) {
            int32_t p = g->inputs[o->inputs_at + k].op;
            if (grad[p] && g->ops[p].scope == o->scope) f->anchor[op] = f->anchor[p];
        }
    }
    free(grad);
    if (!f->n_backward) fwd_by_types(f, g);
    return DP_STATUS_OK;
}
