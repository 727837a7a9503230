/* The independent placers: each element's device is drawn on its own from
 * base logits [T, D] computed once per forward, turned into B samples by a
 * head (logit noise per sample, tanh squashing and temperature, a softmax
 * per element):
 *
 *   gcn    two GCN layers over the element graph and a linear layer
 *          (EAGLE's Table II placer)
 *   table  one learned row of logits per element, starting uniform (Post);
 *          its cross-entropy update is the exact minimiser: each row the
 *          elites' device frequencies mixed with the uniform */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"

static inline size_t alloc_count(int64_t n) { return n > 0 ? (size_t)n : 1; }
#define ALLOC(p, n) ((p) = calloc(alloc_count(n), sizeof *(p)))

typedef struct placer_ind {
    agent_placer base;
    int first;                /* its first tensor                                 */
    float *base_l, *dbase;    /* [T, D] base logits and their gradient            */
    float *tact, *lp, *noise, *dlog, *dlg; /* [B, T, D] the head's, per sample    */
    /* gcn */
    const dp_nn_graph *graph; /* of the last forward                              */
    const float *x;           /* the last forward's input                         */
    float *xw[2], *h[2], *dh, *dpre, *scratch; /* [T, hidden]                      */
} placer_ind;

#define VAL(p, i) dp_nn_params_tensor((p)->base.ctx.params, (i))
#define GRAD(p, i) dp_nn_params_grad((p)->base.ctx.params, (i))

static dp_status ind_bind(agent_placer *base, dp_error *err) {
    placer_ind *p = (placer_ind *)base;
    const dp_agent_config *c = base->ctx.cfg;
    int32_t T = base->T, D = base->D, B = base->B, H = c->placer.hidden;
    int gcn = c->placer.kind == DP_AGENT_PLACER_KIND_GCN;
    p->first = dp_nn_params_find(base->ctx.params, gcn ? "placer.gcn0.w" : "placer.table");
    assert(p->first >= 0);
    if (gcn) {
        for (int k = 0; k < 2; k++)
            if (!ALLOC(p->xw[k], (int64_t)T * H) || !ALLOC(p->h[k], (int64_t)T * H)) goto nomem;
        if (!ALLOC(p->dh, (int64_t)T * H) || !ALLOC(p->dpre, (int64_t)T * H) || !ALLOC(p->scratch, (int64_t)T * H))
            goto nomem;
    }
    size_t btd = (size_t)B * T * D;
    if (!ALLOC(p->base_l, (int64_t)T * D) || !ALLOC(p->dbase, (int64_t)T * D) || !ALLOC(p->tact, btd) ||
        !ALLOC(p->lp, btd) || !ALLOC(p->noise, btd) || !ALLOC(p->dlog, btd) || !ALLOC(p->dlg, btd))
        goto nomem;
    return DP_STATUS_OK;
nomem:
    return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the %s placer",
                        dp_agent_placer_kind_name(c->placer.kind));
}

static void ind_free(agent_placer *base) {
    placer_ind *p = (placer_ind *)base;
    for (int k = 0; k < 2; k++) free(p->xw[k]), free(p->h[k]);
    free(p->dh), free(p->dpre), free(p->scratch);
    free(p->base_l), free(p->dbase), free(p->tact), free(p->lp), free(p->noise), free(p->dlog), free(p->dlg);
    free(p);
}

/* ---- the head: one softmax per element, B samples ------------------------------ */

/* The log-softmax rows lp [T, D] of one sample, element after element
 * under the memory mask (dp_nn_memory_mask): the row of element t masked by
 * the loads of the sample's elements before it, its device then picked
 * (sampled, greedy or read per mode) and added to the loads. */
static void head_masked_rows(placer_ind *p, float *lp, int32_t *dev, dp_nn_decode_mode mode, dp_rng *rng) {
    int32_t T = p->base.T, D = p->base.D;
    float load[D];
    memset(load, 0, sizeof load);
    for (int32_t t = 0; t < T; t++) {
        float *row = lp + (size_t)t * D;
        dp_nn_memory_mask_row(row, load, p->base.mask_cap, p->base.mask_w[t], D);
        dp_nn_log_softmax_forward(row, row, 1, D);
        if (mode == DP_NN_DECODE_MODE_SAMPLE) dp_nn_categorical_sample(dev + t, row, rng, 1, D);
        else if (mode == DP_NN_DECODE_MODE_GREEDY) dp_nn_categorical_argmax(dev + t, row, 1, D);
        load[dev[t]] += p->base.mask_w[t];
    }
}

static void head_forward(placer_ind *p, int32_t *devs, float *logp, float *logp_step, float *entropy,
                         dp_nn_decode_mode mode, float noise, dp_rng *rng) {
    const dp_agent_config *c = p->base.ctx.cfg;
    int32_t T = p->base.T, D = p->base.D;
    size_t td = (size_t)T * D;
    for (int32_t b = 0; b < p->base.B; b++) {
        float *lp = p->lp + b * td, *tact = p->tact + b * td;
        int32_t *dev = devs + (int64_t)b * T;
        const float *nz = NULL;
        if (noise > 0.0f) {
            dp_nn_noise_fill(p->noise + b * td, rng, td, noise);
            nz = p->noise + b * td;
        }
        dp_nn_policy_logits_forward(lp, tact, p->base_l, nz, T, D, c->placer.tanh_c, c->placer.temperature);
        if (p->base.mask_w) {
            head_masked_rows(p, lp, dev, mode, rng);
        } else {
            dp_nn_log_softmax_forward(lp, lp, T, D);
            if (mode == DP_NN_DECODE_MODE_SAMPLE) dp_nn_categorical_sample(dev, lp, rng, T, D);
            else if (mode == DP_NN_DECODE_MODE_GREEDY) dp_nn_categorical_argmax(dev, lp, T, D);
        }
        double s = 0.0, h = 0.0;
        for (int32_t t = 0; t < T; t++) {
            assert(dev[t] >= 0 && dev[t] < D);
            const float *row = lp + (size_t)t * D;
            s += row[dev[t]];
            logp_step[(int64_t)b * T + t] = row[dev[t]];
            for (int32_t d = 0; d < D; d++) h -= exp(row[d]) * row[d];
        }
        logp[b] = (float)s;
        entropy[b] = (float)h;
    }
}

/* dbase [T, D] = the gradient of the weighted log-probabilities and
 * entropies with respect to the base logits (overwritten). */
static void head_backward(placer_ind *p, const int32_t *devs, const float *dlogp, const float *dlogp_step,
                          const float *dentropy) {
    const dp_agent_config *c = p->base.ctx.cfg;
    int32_t T = p->base.T, D = p->base.D;
    size_t td = (size_t)T * D;
    memset(p->dbase, 0, sizeof(float) * td);
    for (int32_t b = 0; b < p->base.B; b++) {
        const float *ws = dlogp_step ? dlogp_step + (int64_t)b * T : NULL;
        float de = dentropy ? dentropy[b] : 0.0f;
        int any = dlogp[b] != 0.0f || de != 0.0f;
        for (int32_t t = 0; ws && !any && t < T; t++) any = ws[t] != 0.0f;
        if (!any) continue;
        const float *lp = p->lp + b * td;
        const int32_t *dev = devs + (int64_t)b * T;
        float *dlog = p->dlog + b * td, *dlg = p->dlg + b * td;
        memset(dlog, 0, sizeof(float) * td);
        for (int32_t t = 0; t < T; t++) dlog[(size_t)t * D + dev[t]] += dlogp[b] + (ws ? ws[t] : 0.0f);
        if (de != 0.0f)
            for (int32_t t = 0; t < T; t++) {
                float dg = de; /* per element row: entropy gradient */
                dp_nn_categorical_entropy_backward(dlog + (size_t)t * D, &dg, lp + (size_t)t * D, 1, D);
            }
        memset(dlg, 0, sizeof(float) * td);
        dp_nn_log_softmax_backward(dlg, dlog, lp, T, D);
        dp_nn_policy_logits_backward(p->dbase, dlg, p->tact + b * td, T, D, c->placer.tanh_c, c->placer.temperature);
    }
}

/* ---- the GCN placer --------------------------------------------------------------- */

/* PyTorch's nn.Linear initialisation. */
static int gcn_specs(const agent_placer *p, dp_nn_tensor_spec *specs) {
    int32_t H = p->ctx.cfg->placer.hidden, F = p->F, D = p->D;
    if (specs) {
        float s0 = 1.0f / sqrtf((float)F), s1 = 1.0f / sqrtf((float)H);
        specs[0] = (dp_nn_tensor_spec){"placer.gcn0.w", (size_t)H * F, DP_NN_INIT_UNIFORM, s0};
        specs[1] = (dp_nn_tensor_spec){"placer.gcn0.b", (size_t)H, DP_NN_INIT_UNIFORM, s0};
        specs[2] = (dp_nn_tensor_spec){"placer.gcn1.w", (size_t)H * H, DP_NN_INIT_UNIFORM, s1};
        specs[3] = (dp_nn_tensor_spec){"placer.gcn1.b", (size_t)H, DP_NN_INIT_UNIFORM, s1};
        specs[4] = (dp_nn_tensor_spec){"placer.out.w", (size_t)D * H, DP_NN_INIT_UNIFORM, s1};
        specs[5] = (dp_nn_tensor_spec){"placer.out.b", (size_t)D, DP_NN_INIT_UNIFORM, s1};
    }
    return 6;
}

/* base [T, D] = Linear(ReLU(GCN1(ReLU(GCN0(x))))) over the element graph. */
static void gcn_forward(agent_placer *base, agent_encoder *e, int32_t *devs, float *logp, float *logp_step,
                        float *entropy, dp_nn_decode_mode mode, float noise, dp_rng *rng) {
    placer_ind *p = (placer_ind *)base;
    int32_t T = base->T, F = base->F, H = base->ctx.cfg->placer.hidden, D = base->D;
    int i = p->first;
    p->graph = e->ops->graph(e);
    p->x = e->x;
    dp_nn_gcn_forward(p->h[0], p->xw[0], p->x, p->graph, VAL(p, i), VAL(p, i + 1), T, F, H);
    dp_nn_relu_forward(p->h[0], p->h[0], (size_t)T * H);
    dp_nn_gcn_forward(p->h[1], p->xw[1], p->h[0], p->graph, VAL(p, i + 2), VAL(p, i + 3), T, H, H);
    dp_nn_relu_forward(p->h[1], p->h[1], (size_t)T * H);
    dp_nn_linear_forward(p->base_l, p->h[1], VAL(p, i + 4), VAL(p, i + 5), T, H, D);
    head_forward(p, devs, logp, logp_step, entropy, mode, noise, rng);
}

static void gcn_backward(agent_placer *base, float *dx, const int32_t *devs, const float *dlogp,
                         const float *dlogp_step, const float *dentropy) {
    placer_ind *p = (placer_ind *)base;
    int32_t T = base->T, F = base->F, H = base->ctx.cfg->placer.hidden, D = base->D;
    int i = p->first;
    size_t th = (size_t)T * H;
    head_backward(p, devs, dlogp, dlogp_step, dentropy);
    memset(p->dh, 0, sizeof(float) * th);
    dp_nn_linear_backward(p->dh, GRAD(p, i + 4), GRAD(p, i + 5), p->dbase, p->h[1], VAL(p, i + 4), T, H, D);
    memset(p->dpre, 0, sizeof(float) * th);
    dp_nn_relu_backward(p->dpre, p->dh, p->h[1], th);
    memset(p->dh, 0, sizeof(float) * th);
    dp_nn_gcn_backward(p->dh, GRAD(p, i + 2), GRAD(p, i + 3), p->scratch, p->dpre, p->h[0], p->graph, VAL(p, i + 2),
                       T, H, H);
    memset(p->dpre, 0, sizeof(float) * th);
    dp_nn_relu_backward(p->dpre, p->dh, p->h[0], th);
    dp_nn_gcn_backward(dx, GRAD(p, i), GRAD(p, i + 1), p->scratch, p->dpre, p->x, p->graph, VAL(p, i), T, F, H);
}

/* ---- the table placer ------------------------------------------------------------- */

/* zeros: every element starts uniform (Post) */
static int table_specs(const agent_placer *p, dp_nn_tensor_spec *specs) {
    if (specs) specs[0] = (dp_nn_tensor_spec){"placer.table", (size_t)p->T * p->D, DP_NN_INIT_ZERO, 0.0f};
    return 1;
}

static void table_forward(agent_placer *base, agent_encoder *e, int32_t *devs, float *logp, float *logp_step,
                          float *entropy, dp_nn_decode_mode mode, float noise, dp_rng *rng) {
    placer_ind *p = (placer_ind *)base;
    (void)e; /* the table's rows are the elements' logits */
    memcpy(p->base_l, VAL(p, p->first), sizeof(float) * (size_t)base->T * base->D);
    head_forward(p, devs, logp, logp_step, entropy, mode, noise, rng);
}

static void table_backward(agent_placer *base, float *dx, const int32_t *devs, const float *dlogp,
                           const float *dlogp_step, const float *dentropy) {
    placer_ind *p = (placer_ind *)base;
    (void)dx; /* the table does not read x */
    head_backward(p, devs, dlogp, dlogp_step, dentropy);
    float *dt = GRAD(p, p->first);
    for (size_t j = 0; j < (size_t)base->T * base->D; j++) dt[j] += p->dbase[j];
}

/* Each row: (1 - mix) times the elites' device frequencies plus mix times
 * uniform (the exact cross-entropy minimiser, then Post's mixing). */
static void table_fit(agent_placer *base, const int32_t *elite_devs, int32_t E) {
    placer_ind *p = (placer_ind *)base;
    int32_t T = base->T, D = base->D;
    if (E == 0) return;
    float *t = VAL(p, p->first);
    double m = base->ctx.cfg->placer.post_mix, temp = base->ctx.cfg->placer.temperature;
    for (int32_t g = 0; g < T; g++) {
        for (int32_t d = 0; d < D; d++) {
            int32_t n = 0;
            for (int32_t e = 0; e < E; e++) n += elite_devs[(int64_t)e * T + g] == d;
            double q = (1.0 - m) * n / E + m / D;
            /* logits = table / T (tanh-c is 0 for the table placer); a zero
             * probability (post-mix 0) becomes a large negative logit */
            t[(int64_t)g * D + d] = (float)(temp * (q > 0 ? log(q) : -30.0));
        }
    }
}

static const agent_placer_ops gcn_ops = {"gcn", gcn_specs, ind_bind, ind_free, gcn_forward, gcn_backward, NULL};
static const agent_placer_ops table_ops = {"table",       table_specs,    ind_bind, ind_free,
                                           table_forward, table_backward, table_fit};

agent_placer *agent_placer_gcn_new(void) {
    placer_ind *p = calloc(1, sizeof *p);
    if (p) p->base.ops = &gcn_ops;
    return p ? &p->base : NULL;
}

agent_placer *agent_placer_table_new(void) {
    placer_ind *p = calloc(1, sizeof *p);
    if (p) p->base.ops = &table_ops;
    return p ? &p->base : NULL;
}
