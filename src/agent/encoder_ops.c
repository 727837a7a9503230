/* The op encoder (encoder=gcn; Mars): every op is placed, in a
 * sequence (the graph's FIFO topological order, or depth-first with
 * op-order=dfs); each op's node features (one-hot type, input and output
 * shapes; agent_features.c) go through GCN layers over the op graph, and
 * the last layer's representations are the sequence the placer reads. The
 * encoder makes no decisions of its own; its parameters train with the
 * placer's gradient (unless encoder-train=no, Mars's Table 1), and before
 * that by Deep Graph Infomax (Section 3.2; the bookkeeping of the
 * pre-training is the core's, agent.c). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"

static inline size_t alloc_count(int64_t n) { return n > 0 ? (size_t)n : 1; }
#define ALLOC(p, n) ((p) = calloc(alloc_count(n), sizeof *(p)))

typedef struct enc_ops {
    agent_encoder base;
    int32_t OF;         /* node features per op                                 */
    int32_t *seq;       /* [N] ops in sequence order                            */
    float *opx;         /* [N, OF] node features in sequence order              */
    dp_nn_graph opgraph;/* the op graph over sequence positions                 */
    dp_nn_gcn gcn;
    int have_gcn;
} enc_ops;

static dp_nn_gcn_config gcn_config(const enc_ops *e) {
    const dp_agent_config *c = e->base.ctx.cfg;
    dp_nn_gcn_config gc = {e->OF, c->encoder.gcn_hidden, c->encoder.gcn_layers};
    return gc;
}

/* The sequence, the node features and the op graph over positions: an
 * op's element is its position. */
static dp_status ops_init(agent_encoder *base, dp_error *err) {
    enc_ops *e = (enc_ops *)base;
    const agent_ctx *x = &base->ctx;
    const dp_graph *g = x->g;
    const dp_agent_config *c = x->cfg;
    int32_t N = g->n_ops;
    e->OF = agent_op_feature_dim(x->feat);
    base->T = N;
    base->F = c->encoder.gcn_hidden;
    base->needs_dx = c->encoder.train != 0;
    if (!ALLOC(base->choice, N) || !ALLOC(e->seq, N) || !ALLOC(e->opx, (int64_t)N * e->OF)) goto nomem;
    if (c->encoder.op_order == DP_AGENT_OP_ORDER_DFS) {
        dp_status st = dp_graph_topo_depth_first(g, e->seq, err);
        if (st) return st;
    } else {
        memcpy(e->seq, g->topo, sizeof(int32_t) * (size_t)N);
    }
    for (int32_t j = 0; j < N; j++) base->choice[e->seq[j]] = j;
    agent_op_features(x->feat, g, c, e->seq, e->opx);
    int64_t E = x->feat->n_edges;
    int *src = NULL, *dst = NULL;
    if (!ALLOC(src, E) || !ALLOC(dst, E)) {
        free(src), free(dst);
        goto nomem;
    }
    for (int64_t k = 0; k < E; k++) src[k] = base->choice[x->feat->src[k]], dst[k] = base->choice[x->feat->dst[k]];
    dp_status st = dp_nn_graph_init(&e->opgraph, N, src, dst, E, err);
    free(src), free(dst);
    return st;
nomem:
    return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the op encoder of %s (%d ops)", g->name,
                        (int)N);
}

/* The GCN layers and the DGI discriminator. */
static int ops_specs(const agent_encoder *base, dp_nn_tensor_spec *specs) {
    dp_nn_gcn_config gc = gcn_config((const enc_ops *)base);
    return dp_nn_gcn_specs(specs, &gc);
}

static dp_status ops_bind(agent_encoder *base, dp_error *err) {
    enc_ops *e = (enc_ops *)base;
    dp_nn_gcn_config gc = gcn_config(e);
    dp_status st = dp_nn_gcn_init(&e->gcn, &gc, base->ctx.params, base->T, err);
    e->have_gcn = st == DP_STATUS_OK;
    return st;
}

static void ops_free(agent_encoder *base) {
    enc_ops *e = (enc_ops *)base;
    if (e->have_gcn) dp_nn_gcn_free(&e->gcn);
    dp_nn_graph_free(&e->opgraph);
    free(base->choice), free(e->seq), free(e->opx);
    free(e);
}

/* x [N, gcn_hidden]: the representations of the ops in sequence order. */
static float ops_forward(agent_encoder *base, dp_nn_decode_mode mode, float noise, dp_rng *rng) {
    enc_ops *e = (enc_ops *)base;
    (void)mode, (void)noise, (void)rng; /* nothing to choose */
    base->x = dp_nn_gcn_encode(&e->gcn, &e->opgraph, e->opx);
    base->entropy = 0.0f;
    return 0.0f;
}

static void ops_backward(agent_encoder *base, const float *dx, const float *drows, float dlogp, float dentropy) {
    enc_ops *e = (enc_ops *)base;
    (void)drows, (void)dlogp, (void)dentropy; /* no decisions */
    if (dx) dp_nn_gcn_encode_backward(&e->gcn, NULL, &e->opgraph, e->opx, dx);
}

static const dp_nn_graph *ops_graph(agent_encoder *base) { return &((enc_ops *)base)->opgraph; }

/* One DGI iteration: the loss, and its gradients into the GCN's tensors. */
static float ops_dgi_step(agent_encoder *base, dp_rng *rng) {
    enc_ops *e = (enc_ops *)base;
    if (!rng) { /* the same corruption each time: comparable losses */
        dp_rng fixed;
        dp_rng_seed(&fixed, 0x6d617273ULL);
        return dp_nn_gcn_dgi_forward(&e->gcn, &e->opgraph, e->opx, NULL, &fixed);
    }
    float loss = dp_nn_gcn_dgi_forward(&e->gcn, &e->opgraph, e->opx, NULL, rng);
    dp_nn_gcn_dgi_backward(&e->gcn, &e->opgraph, e->opx, 1.0f);
    return loss;
}

static const agent_encoder_ops ops_ops = {
    "ops", ops_init, ops_specs, ops_bind, ops_free, ops_forward, ops_backward, NULL, ops_graph, ops_dgi_step,
};

agent_encoder *agent_encoder_ops_new(const agent_ctx *ctx) {
    enc_ops *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->base.ops = &ops_ops;
    e->base.ctx = *ctx;
    return &e->base;
}
