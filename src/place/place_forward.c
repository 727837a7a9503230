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
 *     contributions of other layers, say). */
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

/* Whether scope s names a gradient or clipping scope. */
static int gradient_scope(const char *s) { return dp_graph_forward_scope(s) != s || !strcmp(s, "gradients"); }


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
        grad[op] = o->scope >= 0 && gradient_scope(scope);
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
    return DP_STATUS_OK;
}
