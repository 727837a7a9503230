/* The agent's placers and EAGLE's link RNN, behind one interface
 * (agent_internal.h): the seq2seq placer (attention after or before the
 * decoder cell), the GCN placer of EAGLE's Table II and Post's table of one
 * distribution per group. The GCN and table placers decide each group
 * independently: they compute base logits [G, D] once and a head turns them
 * into K samples (logit noise per sample, tanh squashing and temperature,
 * a softmax per group).
 *
 * The link RNN is our reading of EAGLE's "extra RNN ... to transform
 * parameters of the grouper into inputs of the placer" (seed 003, abstract):
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

static int is_seq2seq(const dp_agent *a) {
    return a->cfg.placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER || a->cfg.placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE;
}

static dp_nn_seq2seq_config s2s_config(const dp_agent *a) {
    const dp_agent_config *c = &a->cfg;
    dp_nn_seq2seq_config sc = {a->GF,
                               c->hidden,
                               a->D,
                               c->attn_dim,
                               c->dev_emb,
                               c->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER ? DP_NN_ATTENTION_MODE_AFTER
                                                                               : DP_NN_ATTENTION_MODE_BEFORE,
                               c->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE,
                               c->tanh_c,
                               c->temperature,
                               1 /* the K samples place one grouping: one encoder for all */,
                               c->stick,
                               agent_stick_mask(a)};
    return sc;
}

int agent_placer_specs(const dp_agent *a, dp_nn_tensor_spec *specs) {
    const dp_agent_config *c = &a->cfg;
    int n = 0;
    /* the link comes first: the grouper's network for per-network clipping */
    if (c->link) {
        int LX = c->grouper_hidden + 1, LH = c->link_hidden;
        specs[n++] = (dp_nn_tensor_spec){"link.lstm", dp_nn_lstm_param_count(LX, LH), DP_NN_INIT_UNIFORM,
                                         1.0f / sqrtf((float)LH)};
    }
    int32_t H = c->hidden, GF = a->GF, D = a->D;
    switch (c->placer) {
    case DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER:
    case DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE: {
        dp_nn_seq2seq_config sc = s2s_config(a);
        n += dp_nn_seq2seq_specs(specs + n, &sc);
        break;
    }
    case DP_AGENT_PLACER_KIND_GCN: {
        /* PyTorch's nn.Linear initialisation */
        float s0 = 1.0f / sqrtf((float)GF), s1 = 1.0f / sqrtf((float)H);
        specs[n++] = (dp_nn_tensor_spec){"placer.gcn0.w", (size_t)H * GF, DP_NN_INIT_UNIFORM, s0};
        specs[n++] = (dp_nn_tensor_spec){"placer.gcn0.b", (size_t)H, DP_NN_INIT_UNIFORM, s0};
        specs[n++] = (dp_nn_tensor_spec){"placer.gcn1.w", (size_t)H * H, DP_NN_INIT_UNIFORM, s1};
        specs[n++] = (dp_nn_tensor_spec){"placer.gcn1.b", (size_t)H, DP_NN_INIT_UNIFORM, s1};
        specs[n++] = (dp_nn_tensor_spec){"placer.out.w", (size_t)D * H, DP_NN_INIT_UNIFORM, s1};
        specs[n++] = (dp_nn_tensor_spec){"placer.out.b", (size_t)D, DP_NN_INIT_UNIFORM, s1};
        break;
    }
    case DP_AGENT_PLACER_KIND_TABLE:
        /* zeros: every group starts uniform (Post) */
        specs[n++] = (dp_nn_tensor_spec){"placer.table", (size_t)a->G * D, DP_NN_INIT_ZERO, 0.0f};
        break;
    default: assert(0 && "placer kind");
    }
    return n;
}

/* Index of tensor name in the agent's store (it must be there). */
static int tensor(const dp_agent *a, const char *name) {
    int i = dp_nn_params_find(&a->params, name);
    assert(i >= 0 && "agent tensor missing");
    return i;
}
#define VAL(a, i) dp_nn_params_tensor(&(a)->params, (i))
#define GRAD(a, i) dp_nn_params_grad(&(a)->params, (i))

dp_status agent_placer_init(dp_agent *a, dp_error *err) {
    const dp_agent_config *c = &a->cfg;
    int32_t G = a->G, D = a->D, K = a->K, H = c->hidden;
    if (c->link) {
        a->i_link = tensor(a, "link.lstm");
        a->LX = c->grouper_hidden + 1, a->LH = c->link_hidden;
        int32_t LX = a->LX, LH = a->LH;
        if (!ALLOC(a->lx, (int64_t)G * LX) || !ALLOC(a->lout, (int64_t)G * LH) || !ALLOC(a->lcell, (int64_t)G * LH) ||
            !ALLOC(a->lgates, (int64_t)G * 4 * LH) || !ALLOC(a->ldx, (int64_t)G * LX) ||
            !ALLOC(a->ldout, (int64_t)G * LH) || !ALLOC(a->lscratch, dp_nn_lstm_scratch_count(1, G, LH)))
            goto nomem;
    }
    if (is_seq2seq(a)) {
        dp_nn_seq2seq_config sc = s2s_config(a);
        if (dp_nn_seq2seq_init(&a->placer, &sc, &a->params, K, G, err)) return err->status;
        a->have_placer = 1;
        if (dp_nn_seq2seq_init(&a->placer1, &sc, &a->params, 1, G, err)) return err->status;
        a->have_placer1 = 1;
        return DP_STATUS_OK;
    }
    if (c->placer == DP_AGENT_PLACER_KIND_GCN) {
        a->i_gcn = tensor(a, "placer.gcn0.w");
        int64_t E = a->feat.n_edges;
        if (!ALLOC(a->gsrc, E) || !ALLOC(a->gdst, E)) goto nomem;
        for (int k = 0; k < 2; k++)
            if (!ALLOC(a->gxw[k], (int64_t)G * H) || !ALLOC(a->gh[k], (int64_t)G * H)) goto nomem;
        if (!ALLOC(a->gdh, (int64_t)G * H) || !ALLOC(a->gdpre, (int64_t)G * H) || !ALLOC(a->gcscratch, (int64_t)G * H))
            goto nomem;
    } else {
        a->i_table = tensor(a, "placer.table");
    }
    size_t kgd = (size_t)K * G * D;
    if (!ALLOC(a->hbase, (int64_t)G * D) || !ALLOC(a->hdbase, (int64_t)G * D) || !ALLOC(a->htact, kgd) ||
        !ALLOC(a->hlogp, kgd) || !ALLOC(a->hnoise, kgd) || !ALLOC(a->hdlog, kgd) || !ALLOC(a->hdlg, kgd) ||
        !ALLOC(a->hdl, kgd))
        goto nomem;
    return DP_STATUS_OK;
nomem:
    return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the %s placer",
                        dp_agent_placer_kind_name(c->placer));
}

void agent_placer_free(dp_agent *a) {
    if (a->have_placer) dp_nn_seq2seq_free(&a->placer);
    if (a->have_placer1) dp_nn_seq2seq_free(&a->placer1);
    dp_nn_graph_free(&a->ggraph);
    free(a->lx), free(a->lout), free(a->lcell), free(a->lgates), free(a->ldx), free(a->ldout), free(a->lscratch);
    free(a->gsrc), free(a->gdst);
    for (int k = 0; k < 2; k++) free(a->gxw[k]), free(a->gh[k]);
    free(a->gdh), free(a->gdpre), free(a->gcscratch);
    free(a->hbase), free(a->hdbase), free(a->htact), free(a->hlogp), free(a->hnoise), free(a->hdlog), free(a->hdlg),
        free(a->hdl);
}

/* ---- link RNN ---------------------------------------------------------------- */

/* lx [G, hidden + 1] = [w2 | b2], lout [G, LH] = LSTM(lx) (one sequence). */
void agent_link_forward(dp_agent *a) {
    int32_t G = a->G, LX = a->LX, LH = a->LH, Hd = LX - 1;
    for (int32_t g = 0; g < G; g++) {
        memcpy(a->lx + (int64_t)g * LX, a->grouper.w2 + (int64_t)g * Hd, sizeof(float) * (size_t)Hd);
        a->lx[(int64_t)g * LX + Hd] = a->grouper.b2[g];
    }
    dp_nn_lstm_forward(a->lout, NULL, NULL, a->lcell, a->lgates, a->lx, NULL, NULL, VAL(a, a->i_link), 1, G, LX, LH,
                       0);
}

/* dw2, db2 of the grouper += the gradient reaching lx; dlink [G, LH]. */
void agent_link_backward(dp_agent *a, const float *dlink) {
    int32_t G = a->G, LX = a->LX, LH = a->LH, Hd = LX - 1;
    memset(a->ldx, 0, sizeof(float) * (size_t)G * LX);
    dp_nn_lstm_backward(a->ldx, NULL, NULL, GRAD(a, a->i_link), a->lscratch, dlink, NULL, NULL, a->lout, a->lcell,
                        a->lgates, a->lx, NULL, NULL, VAL(a, a->i_link), 1, G, LX, LH, 0);
    for (int32_t g = 0; g < G; g++) {
        float *dw = a->grouper.dw2 + (int64_t)g * Hd;
        const float *d = a->ldx + (int64_t)g * LX;
        for (int32_t j = 0; j < Hd; j++) dw[j] += d[j];
        a->grouper.db2[g] += d[Hd];
    }
}

/* ---- GCN placer ---------------------------------------------------------------- */

/* The group graph of the current grouping: an edge between two groups for
 * every op edge that joins them (duplicates merged by dp_nn_graph_init). */
static void gcn_graph(dp_agent *a) {
    if (a->ggraph_ok) return;
    int64_t E = 0;
    for (int64_t e = 0; e < a->feat.n_edges; e++) {
        int32_t gs = a->group[a->feat.src[e]], gd = a->group[a->feat.dst[e]];
        if (gs != gd) a->gsrc[E] = gs, a->gdst[E] = gd, E++;
    }
    dp_nn_graph_free(&a->ggraph);
    dp_error err;
    dp_status st = dp_nn_graph_init(&a->ggraph, a->G, a->gsrc, a->gdst, E, &err);
    assert(st == DP_STATUS_OK && "group ids are in range");
    (void)st;
    a->ggraph_ok = !a->learned_grouper; /* a learned grouping changes every forward */
}

/* hbase [G, D] = Linear(ReLU(GCN1(ReLU(GCN0(ge slot 0))))). */
static void gcn_forward(dp_agent *a) {
    int32_t G = a->G, GF = a->GF, H = a->cfg.hidden, D = a->D;
    int i = a->i_gcn;
    gcn_graph(a);
    dp_nn_gcn_forward(a->gh[0], a->gxw[0], a->ge, &a->ggraph, VAL(a, i), VAL(a, i + 1), G, GF, H);
    dp_nn_relu_forward(a->gh[0], a->gh[0], (size_t)G * H);
    dp_nn_gcn_forward(a->gh[1], a->gxw[1], a->gh[0], &a->ggraph, VAL(a, i + 2), VAL(a, i + 3), G, H, H);
    dp_nn_relu_forward(a->gh[1], a->gh[1], (size_t)G * H);
    dp_nn_linear_forward(a->hbase, a->gh[1], VAL(a, i + 4), VAL(a, i + 5), G, H, D);
}

/* Backward of gcn_forward from hdbase [G, D]; dge0 [G, GF] += when not NULL. */
static void gcn_backward(dp_agent *a, float *dge0) {
    int32_t G = a->G, GF = a->GF, H = a->cfg.hidden, D = a->D;
    int i = a->i_gcn;
    size_t gh = (size_t)G * H;
    memset(a->gdh, 0, sizeof(float) * gh);
    dp_nn_linear_backward(a->gdh, GRAD(a, i + 4), GRAD(a, i + 5), a->hdbase, a->gh[1], VAL(a, i + 4), G, H, D);
    memset(a->gdpre, 0, sizeof(float) * gh);
    dp_nn_relu_backward(a->gdpre, a->gdh, a->gh[1], gh);
    memset(a->gdh, 0, sizeof(float) * gh);
    dp_nn_gcn_backward(a->gdh, GRAD(a, i + 2), GRAD(a, i + 3), a->gcscratch, a->gdpre, a->gh[0], &a->ggraph,
                       VAL(a, i + 2), G, H, H);
    memset(a->gdpre, 0, sizeof(float) * gh);
    dp_nn_relu_backward(a->gdpre, a->gdh, a->gh[0], gh);
    dp_nn_gcn_backward(dge0, GRAD(a, i), GRAD(a, i + 1), a->gcscratch, a->gdpre, a->ge, &a->ggraph, VAL(a, i), G, GF,
                       H);
}

/* ---- independent head: one softmax per group, B samples -------------------------- */

static void head_forward(dp_agent *a, int32_t B, dp_nn_decode_mode mode, float noise) {
    const dp_agent_config *c = &a->cfg;
    int32_t G = a->G, D = a->D;
    size_t gd = (size_t)G * D;
    for (int32_t b = 0; b < B; b++) {
        float *lp = a->hlogp + b * gd, *tact = a->htact + b * gd;
        int32_t *dev = a->devs + (int64_t)b * G;
        const float *nz = NULL;
        if (noise > 0.0f) {
            dp_nn_noise_fill(a->hnoise + b * gd, &a->rng, gd, noise);
            nz = a->hnoise + b * gd;
        }
        dp_nn_policy_logits_forward(lp, tact, a->hbase, nz, G, D, c->tanh_c, c->temperature);
        dp_nn_log_softmax_forward(lp, lp, G, D);
        if (mode == DP_NN_DECODE_MODE_SAMPLE) dp_nn_categorical_sample(dev, lp, &a->rng, G, D);
        else if (mode == DP_NN_DECODE_MODE_GREEDY) dp_nn_categorical_argmax(dev, lp, G, D);
        double s = 0.0, h = 0.0;
        for (int32_t g = 0; g < G; g++) {
            assert(dev[g] >= 0 && dev[g] < D);
            const float *row = lp + (size_t)g * D;
            s += row[dev[g]];
            a->logp_step[(int64_t)b * G + g] = row[dev[g]];
            for (int32_t d = 0; d < D; d++) h -= exp(row[d]) * row[d];
        }
        a->logp[b] = (float)s;
        a->entropy[b] = (float)h;
    }
}

/* hdbase [G, D] = gradient of sum_b dlogp[b] logp[b] + dentropy[b] entropy[b]
 * with respect to the base logits (overwritten). */
static void head_backward(dp_agent *a, int32_t B) {
    const dp_agent_config *c = &a->cfg;
    int32_t G = a->G, D = a->D;
    size_t gd = (size_t)G * D;
    memset(a->hdbase, 0, sizeof(float) * gd);
    for (int32_t b = 0; b < B; b++) {
        const float *ws = a->step_weights ? a->dlogp_step + (int64_t)b * G : NULL;
        int any = a->dlogp[b] != 0.0f || a->dentropy[b] != 0.0f;
        for (int32_t g = 0; ws && !any && g < G; g++) any = ws[g] != 0.0f;
        if (!any) continue;
        const float *lp = a->hlogp + b * gd;
        const int32_t *dev = a->devs + (int64_t)b * G;
        float *dlog = a->hdlog + b * gd, *dlg = a->hdlg + b * gd;
        memset(dlog, 0, sizeof(float) * gd);
        for (int32_t g = 0; g < G; g++) dlog[(size_t)g * D + dev[g]] += a->dlogp[b] + (ws ? ws[g] : 0.0f);
        if (a->dentropy[b] != 0.0f) {
            float de = a->dentropy[b];
            for (int32_t g = 0; g < G; g++) {
                float dg = de; /* per group row: entropy gradient */
                dp_nn_categorical_entropy_backward(dlog + (size_t)g * D, &dg, lp + (size_t)g * D, 1, D);
            }
        }
        memset(dlg, 0, sizeof(float) * gd);
        dp_nn_log_softmax_backward(dlg, dlog, lp, G, D);
        dp_nn_policy_logits_backward(a->hdbase, dlg, a->htact + b * gd, G, D, c->tanh_c, c->temperature);
    }
}

/* ---- dispatch ------------------------------------------------------------------- */

void agent_placer_forward(dp_agent *a, int32_t B, dp_nn_decode_mode mode, float noise) {
    assert(B == 1 || B == a->K);
    if (is_seq2seq(a)) {
        dp_nn_seq2seq *m = B == a->K ? &a->placer : &a->placer1;
        dp_nn_seq2seq_forward(m, a->logp, a->entropy, a->devs, a->ge, NULL, NULL, mode, &a->rng, noise);
        /* per-decision log-probabilities: m->logp is [T, B, D] */
        int32_t G = a->G, D = a->D;
        for (int32_t b = 0; b < B; b++)
            for (int32_t t = 0; t < G; t++)
                a->logp_step[(int64_t)b * G + t] = m->logp[((size_t)t * B + b) * D + a->devs[(int64_t)b * G + t]];
        return;
    }
    if (a->cfg.placer == DP_AGENT_PLACER_KIND_GCN) gcn_forward(a);
    else memcpy(a->hbase, VAL(a, a->i_table), sizeof(float) * (size_t)a->G * a->D);
    head_forward(a, B, mode, noise);
}

void agent_placer_backward(dp_agent *a, int32_t B, float *dge0) {
    assert(B == 1 || B == a->K);
    if (is_seq2seq(a)) {
        dp_nn_seq2seq *m = B == a->K ? &a->placer : &a->placer1;
        int any_entropy = 0;
        for (int32_t b = 0; b < B; b++) any_entropy |= a->dentropy[b] != 0.0f;
        /* shared input: the gradient of the one group embedding, summed over samples */
        dp_nn_seq2seq_segment_backward(m, dge0, NULL, a->dlogp, a->step_weights ? a->dlogp_step : NULL,
                                       any_entropy ? a->dentropy : NULL, NULL, a->devs, a->ge);
        return;
    }
    head_backward(a, B);
    if (a->cfg.placer == DP_AGENT_PLACER_KIND_GCN) {
        gcn_backward(a, dge0);
    } else {
        float *dt = GRAD(a, a->i_table);
        for (size_t j = 0; j < (size_t)a->G * a->D; j++) dt[j] += a->hdbase[j];
    }
}

void agent_table_set_from_elites(dp_agent *a) {
    int32_t G = a->G, D = a->D, E = a->n_elites;
    if (E == 0) return;
    float *t = VAL(a, a->i_table);
    double m = a->cfg.post_mix, T = a->cfg.temperature;
    for (int32_t g = 0; g < G; g++) {
        for (int32_t d = 0; d < D; d++) {
            int32_t n = 0;
            for (int32_t e = 0; e < E; e++) n += a->elite_devs[(int64_t)e * G + g] == d;
            double p = (1.0 - m) * n / E + m / D;
            /* logits = table / T (tanh-c is 0 for the table placer); a zero
             * probability (post-mix 0) becomes a large negative logit */
            t[(int64_t)g * D + d] = (float)(T * (p > 0 ? log(p) : -30.0));
        }
    }
}
