/* The group encoder (encoder=none): the elements the placer places are
 * groups of ops, chosen by the learned feed-forward grouper of the
 * Hierarchical Planner (a decision of the policy, one per op) or fixed at
 * the start (a heuristic grouper of src/place, ColocRL's scope groups, or
 * every op its own group). Each group is described by its embedding
 * (agent_features.c): op-type counts or the mean learned type embedding,
 * summed output shapes, a row of the group adjacency and, with EAGLE's
 * link, the state of an LSTM over the grouper's parameters.
 *
 * The link RNN is our reading of EAGLE's "extra RNN ... to transform
 * parameters of the grouper into inputs of the placer" (the EAGLE paper, abstract):
 * group g's parameters in the grouper are row g of its output layer
 * (w2 [G, hidden], b2 [G]); an LSTM reads them in group order and its state
 * at group g is appended to g's embedding, so the placer's gradient reaches
 * the grouper's parameters directly (docs/agents.md). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"

static inline size_t alloc_count(int64_t n) { return n > 0 ? (size_t)n : 1; }
#define ALLOC(p, n) ((p) = calloc(alloc_count(n), sizeof *(p)))

typedef struct enc_groups {
    agent_encoder base;
    int learned;            /* the learned grouper (else a fixed grouping)       */
    int no_x;               /* the placer reads no sequence (the table): no group
                               embeddings, and any number of groups           */
    int embed;              /* group types as the mean type embedding            */
    dp_nn_grouper grouper;
    int have_grouper;
    int i_type_emb;
    int32_t gwidth[4];      /* widths of the parts of a group embedding         */
    /* link RNN (EAGLE): LSTM over the groups reading [w2 row g | b2 g] */
    int i_link;
    int32_t LX, LH;         /* input (grouper hidden + 1) and state sizes        */
    float *lx, *lout, *lcell, *lgates, *ldx, *ldout, *lscratch;
    /* op rows and group embeddings */
    float *ox, *dox;        /* [N, Fop] op rows (learned grouper) and their gradient */
    float *trows, *dtrows;  /* [N, type_dim] type embedding rows and their gradient */
    float *ge;              /* [G, F] the group embeddings (the sequence)        */
    float *gcount, *gscratch, *dgpart;
    /* the group graph of the current grouping (GCN placer) */
    dp_nn_graph graph;
    int graph_ok;
    int32_t *gsrc, *gdst;   /* [n_edges] */
} enc_groups;

#define VAL(e, i) dp_nn_params_tensor((e)->base.ctx.params, (i))
#define GRAD(e, i) dp_nn_params_grad((e)->base.ctx.params, (i))

static dp_nn_grouper_config grouper_config(const enc_groups *e) {
    const dp_agent_config *c = e->base.ctx.cfg;
    dp_nn_grouper_config gc = {e->base.ctx.feat->F, c->grouper.hidden, c->grouper.groups, c->placer.tanh_c, c->placer.temperature};
    return gc;
}

/* Sizes the sequence: the learned grouper's groups, or the fixed grouping. */
static dp_status groups_init(agent_encoder *base, dp_error *err) {
    enc_groups *e = (enc_groups *)base;
    const agent_ctx *x = &base->ctx;
    const dp_agent_config *c = x->cfg;
    int32_t N = x->g->n_ops;
    e->learned = c->grouper.kind == DP_AGENT_GROUPER_KIND_LEARNED;
    e->embed = c->features.group_types == DP_AGENT_GROUP_TYPES_EMBEDDING;
    if (!ALLOC(base->choice, N))
        return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the groups of %s", x->g->name);
    if (e->learned) {
        base->T = c->grouper.groups;
        base->n_rows = N;
    } else if (c->grouper.kind == DP_AGENT_GROUPER_KIND_RUNS) {
        memcpy(base->choice, x->runs, sizeof(int32_t) * (size_t)N);
        base->T = c->grouper.groups;
    } else {
        dp_status st = agent_group_fixed(x->g, x->ds, c, x->seed, base->choice, &base->T, err);
        if (st) return st;
    }
    e->no_x = c->placer.kind == DP_AGENT_PLACER_KIND_TABLE;
    if (base->T > 4096 && !e->no_x)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: the %s grouper makes %d groups of %s; the placers over groups take at most 4096 "
                            "(choose another grouper or fewer groups)",
                            dp_agent_grouper_kind_name(c->grouper.kind), base->T, x->g->name);
    base->F = e->no_x ? 0 : agent_group_dim(x->feat, c, base->T, e->gwidth);
    base->needs_dx = !e->no_x && (e->embed || c->link.on);
    return DP_STATUS_OK;
}

/* The learned grouper's tensors, then the link's (the grouper's network
 * for per-network clipping). */
static int groups_specs(const agent_encoder *base, dp_nn_tensor_spec *specs) {
    const enc_groups *e = (const enc_groups *)base;
    const dp_agent_config *c = base->ctx.cfg;
    dp_nn_grouper_config gc = grouper_config(e);
    int n = e->learned ? dp_nn_grouper_specs(specs, &gc) : 0;
    if (c->link.on) {
        int LX = c->grouper.hidden + 1, LH = c->link.hidden;
        if (specs)
            specs[n] = (dp_nn_tensor_spec){"link.lstm", dp_nn_lstm_param_count(LX, LH), DP_NN_INIT_UNIFORM,
                                           1.0f / sqrtf((float)LH)};
        n++;
    }
    return n;
}

static dp_status groups_bind(agent_encoder *base, dp_error *err) {
    enc_groups *e = (enc_groups *)base;
    const agent_ctx *x = &base->ctx;
    const dp_agent_config *c = x->cfg;
    int32_t N = x->g->n_ops, G = base->T, td = c->features.type_dim, Fop = x->feat->F;
    int32_t tw = e->gwidth[0];
    e->i_type_emb = dp_nn_params_find(x->params, "agent.type_emb");
    assert(e->i_type_emb >= 0);
    if (e->learned) {
        dp_nn_grouper_config gc = grouper_config(e);
        if (dp_nn_grouper_init(&e->grouper, &gc, x->params, N, err)) return err->status;
        float m = c->grouper.prior_mass; /* p(prior) = e^s / (e^s + G - 1) when the network's logits are equal */
        e->grouper.prior = x->prior, e->grouper.prior_scale = logf(m * (float)(c->grouper.groups - 1) / (1.0f - m));
        e->have_grouper = 1;
    }
    if (c->link.on) {
        e->i_link = dp_nn_params_find(x->params, "link.lstm");
        assert(e->i_link >= 0);
        e->LX = c->grouper.hidden + 1, e->LH = c->link.hidden;
        int32_t LX = e->LX, LH = e->LH;
        if (!ALLOC(e->lx, (int64_t)G * LX) || !ALLOC(e->lout, (int64_t)G * LH) || !ALLOC(e->lcell, (int64_t)G * LH) ||
            !ALLOC(e->lgates, (int64_t)G * 4 * LH) || !ALLOC(e->ldx, (int64_t)G * LX) ||
            !ALLOC(e->ldout, (int64_t)G * LH) || !ALLOC(e->lscratch, dp_nn_lstm_scratch_count(1, G, LH)))
            goto nomem;
    }
    if (!ALLOC(e->ox, (int64_t)N * Fop) || !ALLOC(e->dox, (int64_t)N * Fop) || !ALLOC(e->trows, (int64_t)N * td) ||
        !ALLOC(e->dtrows, (int64_t)N * td) || !ALLOC(e->ge, (int64_t)G * base->F) || !ALLOC(e->gcount, G) ||
        !ALLOC(e->gscratch, e->no_x ? 0 : (int64_t)G * (tw + x->feat->S + G)) || !ALLOC(e->dgpart, (int64_t)G * tw) ||
        !ALLOC(e->gsrc, x->feat->n_edges) || !ALLOC(e->gdst, x->feat->n_edges))
        goto nomem;
    base->x = e->ge;
    return DP_STATUS_OK;
nomem:
    return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the group encoder of %s", x->g->name);
}

static void groups_free(agent_encoder *base) {
    enc_groups *e = (enc_groups *)base;
    if (e->have_grouper) dp_nn_grouper_free(&e->grouper);
    dp_nn_graph_free(&e->graph);
    free(e->lx), free(e->lout), free(e->lcell), free(e->lgates), free(e->ldx), free(e->ldout), free(e->lscratch);
    free(e->ox), free(e->dox), free(e->trows), free(e->dtrows), free(e->gcount), free(e->gscratch), free(e->dgpart);
    free(e->gsrc), free(e->gdst);
    free(base->choice), free(e->ge);
    free(e);
}

/* ---- link RNN ---------------------------------------------------------------- */

/* lx [G, hidden + 1] = [w2 | b2], lout [G, LH] = LSTM(lx) (one sequence). */
static void link_forward(enc_groups *e) {
    int32_t G = e->base.T, LX = e->LX, LH = e->LH, Hd = LX - 1;
    for (int32_t g = 0; g < G; g++) {
        memcpy(e->lx + (int64_t)g * LX, e->grouper.w2 + (int64_t)g * Hd, sizeof(float) * (size_t)Hd);
        e->lx[(int64_t)g * LX + Hd] = e->grouper.b2[g];
    }
    dp_nn_lstm_forward(e->lout, NULL, NULL, e->lcell, e->lgates, e->lx, NULL, NULL, VAL(e, e->i_link), 1, G, LX, LH,
                       0);
}

/* dw2, db2 of the grouper += the gradient reaching lx from dlink [G, LH]. */
static void link_backward(enc_groups *e, const float *dlink) {
    int32_t G = e->base.T, LX = e->LX, LH = e->LH, Hd = LX - 1;
    memset(e->ldx, 0, sizeof(float) * (size_t)G * LX);
    dp_nn_lstm_backward(e->ldx, NULL, NULL, GRAD(e, e->i_link), e->lscratch, dlink, NULL, NULL, e->lout, e->lcell,
                        e->lgates, e->lx, NULL, NULL, VAL(e, e->i_link), 1, G, LX, LH, 0);
    for (int32_t g = 0; g < G; g++) {
        float *dw = e->grouper.dw2 + (int64_t)g * Hd;
        const float *d = e->ldx + (int64_t)g * LX;
        for (int32_t j = 0; j < Hd; j++) dw[j] += d[j];
        e->grouper.db2[g] += d[Hd];
    }
}

/* ---- forward / backward ------------------------------------------------------------ */

/* Type rows, grouping and group embeddings x [G, F]. */
static float groups_forward(agent_encoder *base, dp_nn_decode_mode mode, float noise, dp_rng *rng) {
    enc_groups *e = (enc_groups *)base;
    const agent_ctx *x = &base->ctx;
    const dp_agent_config *c = x->cfg;
    int32_t N = x->g->n_ops;
    dp_nn_embedding_forward(e->trows, x->feat->type_id, VAL(e, e->i_type_emb), N, x->feat->V, c->features.type_dim);
    float logp = 0.0f;
    base->entropy = 0.0f;
    if (e->learned) {
        agent_features_op_rows(x->feat, e->trows, c->features.type_dim, e->ox);
        logp = dp_nn_grouper_forward(&e->grouper, base->choice, &base->entropy, e->ox, mode, rng, noise, N);
        e->graph_ok = 0;
    }
    if (c->link.on) link_forward(e);
    if (!e->no_x)
        agent_group_embed(x->feat, c, base->choice, base->T, e->trows, e->lout, e->ge, e->gcount, e->gscratch);
    return logp;
}

/* Splits dx [G, F] into the parts of the group embedding and sends them to
 * the type embedding rows (EMBEDDING) and the link RNN. */
static void groups_backward_dx(enc_groups *e, const float *dx) {
    const dp_agent_config *c = e->base.ctx.cfg;
    int32_t G = e->base.T, tw = e->gwidth[0];
    float *dparts[4];
    int widths[4], n = 0;
    if (e->embed) memset(e->dgpart, 0, sizeof(float) * (size_t)G * tw);
    if (c->link.on) memset(e->ldout, 0, sizeof(float) * (size_t)G * e->LH);
    dparts[n] = e->embed ? e->dgpart : NULL, widths[n++] = tw;
    dparts[n] = NULL, widths[n++] = e->gwidth[1];
    if (e->gwidth[2]) dparts[n] = NULL, widths[n++] = e->gwidth[2];
    if (e->gwidth[3]) dparts[n] = e->ldout, widths[n++] = e->gwidth[3];
    dp_nn_concat_backward(dparts, dx, widths, n, G);
    if (e->embed)
        dp_nn_group_mean_backward(e->dtrows, e->dgpart, e->gcount, e->base.choice, e->base.ctx.g->n_ops, tw, G);
    if (c->link.on) link_backward(e, e->ldout);
}

static void groups_backward(agent_encoder *base, const float *dx, const float *drows, float dlogp, float dentropy) {
    enc_groups *e = (enc_groups *)base;
    const agent_ctx *x = &base->ctx;
    const dp_agent_config *c = x->cfg;
    int32_t N = x->g->n_ops, td = c->features.type_dim, Fop = x->feat->F;
    memset(e->dtrows, 0, sizeof(float) * (size_t)N * td);
    if (dx) groups_backward_dx(e, dx);
    if (e->learned) {
        memset(e->dox, 0, sizeof(float) * (size_t)N * Fop);
        dp_nn_grouper_backward_rows(&e->grouper, e->dox, base->choice, e->ox, drows, dlogp, dentropy, N);
        for (int32_t i = 0; i < N; i++)
            for (int32_t j = 0; j < td; j++) e->dtrows[(int64_t)i * td + j] += e->dox[(int64_t)i * Fop + j];
    }
    if (e->embed || e->learned)
        dp_nn_embedding_backward(GRAD(e, e->i_type_emb), e->dtrows, x->feat->type_id, N, x->feat->V, td);
}

/* The learned grouper's log-probability of each op's group, out [N]. */
static void groups_rows(const agent_encoder *base, float *out) {
    const enc_groups *e = (const enc_groups *)base;
    int32_t Gg = base->ctx.cfg->grouper.groups;
    for (int32_t i = 0; i < base->n_rows; i++) out[i] = e->grouper.logp[(int64_t)i * Gg + base->choice[i]];
}

/* The group graph of the current grouping: an edge between two groups for
 * every op edge that joins them (duplicates merged by dp_nn_graph_init). */
static const dp_nn_graph *groups_graph(agent_encoder *base) {
    enc_groups *e = (enc_groups *)base;
    if (e->graph_ok) return &e->graph;
    const agent_features *f = base->ctx.feat;
    int64_t E = 0;
    for (int64_t k = 0; k < f->n_edges; k++) {
        int32_t gs = base->choice[f->src[k]], gd = base->choice[f->dst[k]];
        if (gs != gd) e->gsrc[E] = gs, e->gdst[E] = gd, E++;
    }
    dp_nn_graph_free(&e->graph);
    dp_error err;
    dp_status st = dp_nn_graph_init(&e->graph, base->T, e->gsrc, e->gdst, E, &err);
    assert(st == DP_STATUS_OK && "group ids are in range");
    (void)st;
    e->graph_ok = 1;
    return &e->graph;
}

static const agent_encoder_ops groups_ops = {
    "groups", groups_init, groups_specs, groups_bind, groups_free, groups_forward, groups_backward,
    groups_rows, groups_graph, NULL,
};

agent_encoder *agent_encoder_groups_new(const agent_ctx *ctx) {
    enc_groups *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->base.ops = &groups_ops;
    e->base.ctx = *ctx;
    return &e->base;
}
