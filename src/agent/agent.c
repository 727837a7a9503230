/* The agent: builds the parts a configuration names and runs REINFORCE
 * updates (seed 001, Eqs. 3-6; seed 004, Section 3.1):
 *
 *   group ~ grouper(op features)            (m = 1 grouping per update)
 *   dev_k ~ placer(group embeddings), k < K (K placements per update)
 *   R_k = -sqrt(step time_k), or the failing reward when invalid
 *   loss = -1/K sum_k (R_k - B) log p(dev_k) - (1/K sum_k (R_k - B)) log p(group)
 *
 * with B a moving average of the rewards, logit noise for the first updates
 * and, after valid_only_after updates, only valid samples in the sums and
 * the baseline. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "common/util.h"
#include "dplace/placement.h"
#include "dplace/units.h"

static inline size_t alloc_count(int64_t n) { return n > 0 ? (size_t)n : 1; }
#define ALLOC(p, n) ((p) = calloc(alloc_count(n), sizeof *(p)))

/* ---- units: TensorFlow colocation and soft placement ----------------------- */

/* The graph's colocation units (dp_units), the lowest op of each, and the
 * devices each may use. */
static dp_status units_init(dp_agent *a, dp_error *err) {
    dp_status st = dp_units_init(&a->units, a->g, err);
    if (st) return st;
    int32_t m = a->units.n_units;
    if (!ALLOC(a->unit_first, m) || !ALLOC(a->unit_mask, m))
        return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the colocation units");
    for (int32_t k = 0; k < m; k++) a->unit_first[k] = a->units.members[a->units.first[k]];
    a->unit_of = a->units.unit_of;
    a->n_units = m;
    return dp_units_masks(&a->units, a->g, a->ds, dp_mask_all(a->ds), a->unit_mask, err);
}

void agent_expand(const dp_agent *a, const int32_t *group, const int32_t *dev, int32_t *out) {
    for (int32_t i = 0; i < a->N; i++) {
        int32_t u = a->unit_of[i];
        int32_t d = dev[group[a->unit_first[u]]];
        dp_mask m = a->unit_mask[u];
        if (!(m & dp_mask_bit(d))) d = dp_mask_first(m);
        out[i] = d;
    }
}

/* ---- init / free ------------------------------------------------------------ */

void dp_agent_free(dp_agent *a) {
    if (!a) return;
    agent_features_free(&a->feat);
    agent_eval_free(a->eval);
    if (a->learned_grouper) dp_nn_grouper_free(&a->grouper);
    dp_nn_seq2seq_free(&a->placer);
    dp_nn_params_free(&a->params);
    dp_units_free(&a->units);
    free(a->unit_first), free(a->unit_mask);
    free(a->group), free(a->x), free(a->dx), free(a->trows), free(a->dtype_rows);
    free(a->ge), free(a->dge), free(a->gcount), free(a->gscratch), free(a->dgpart);
    free(a->devs), free(a->logp), free(a->dlogp), free(a->entropy), free(a->dentropy), free(a->place), free(a->res), free(a->cached);
    free(a->last), free(a->window), free(a->best);
    free(a);
}

/* Sum of the graph's op times on the first GPU (the CPU when none). */
static double serial_seconds(const dp_agent *a) {
    int32_t d = dp_devices_nth(a->ds, DP_DEVKIND_GPU, 0);
    if (d < 0) d = 0;
    double s = 0.0;
    const dp_sim *sim = agent_eval_sim(a->eval);
    for (int32_t i = 0; i < a->N; i++) s += dp_sim_op_seconds(sim, i, d);
    return s;
}

dp_agent *dp_agent_init(const dp_graph *g, const dp_devices *ds, const dp_agent_config *cfg,
                        const dp_agent_eval_options *eo, uint64_t seed, dp_error *err) {
    if (dp_agent_config_check(cfg, err)) return NULL;
    if (ds->n_devices < 1 || g->n_ops < 1) {
        dp_error_set(err, DP_STATUS_INVALID, "agent: needs at least one op and one device");
        return NULL;
    }
    dp_agent *a = calloc(1, sizeof *a);
    if (!a) goto nomem;
    a->g = g, a->ds = ds, a->cfg = *cfg, a->eo = *eo, a->seed = seed;
    a->N = g->n_ops, a->D = ds->n_devices, a->K = cfg->samples;
    a->learned_grouper = cfg->grouper == DP_AGENT_GROUPER_KIND_LEARNED;
    a->st.best_s = INFINITY;
    a->st.best_update = a->st.best_sample = -1;
    dp_rng_seed(&a->rng, seed);
    if (units_init(a, err) || agent_features_init(&a->feat, g, cfg, err)) goto fail;
    if (!(a->eval = agent_eval_init(g, ds, eo, seed, err))) goto fail;
    if (!ALLOC(a->group, a->N)) goto nomem;
    if (a->learned_grouper) {
        a->G = cfg->groups;
    } else {
        dp_status st = agent_group_fixed(g, ds, cfg, seed, a->group, &a->G, err);
        if (st) goto fail;
    }
    if (a->G > 4096) {
        dp_error_set(err, DP_STATUS_INVALID,
                     "agent: the %s grouper makes %d groups of %s; the seq2seq placer takes at most 4096 "
                     "(choose another grouper or fewer groups)",
                     dp_agent_grouper_kind_name(cfg->grouper), a->G, g->name);
        goto fail;
    }
    a->GF = agent_group_dim(&a->feat, cfg, a->G);

    /* networks: type embedding, grouper, placer in one parameter store */
    dp_nn_tensor_spec specs[16];
    int ns = 0;
    specs[ns++] = (dp_nn_tensor_spec){"agent.type_emb", (size_t)a->feat.V * cfg->type_dim, DP_NN_INIT_UNIFORM, 0.1f};
    dp_nn_grouper_config gc = {a->feat.F, cfg->grouper_hidden, cfg->groups, cfg->tanh_c, cfg->temperature};
    if (a->learned_grouper) ns += dp_nn_grouper_specs(specs + ns, &gc);
    dp_nn_seq2seq_config sc = {a->GF,
                               cfg->hidden,
                               a->D,
                               cfg->attn_dim,
                               cfg->dev_emb,
                               cfg->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_AFTER ? DP_NN_ATTENTION_MODE_AFTER
                                                                                  : DP_NN_ATTENTION_MODE_BEFORE,
                               cfg->placer == DP_AGENT_PLACER_KIND_SEQ2SEQ_BEFORE,
                               cfg->tanh_c,
                               cfg->temperature};
    ns += dp_nn_seq2seq_specs(specs + ns, &sc);
    dp_rng init_rng;
    dp_rng_seed(&init_rng, seed ^ 0x5eed5eed5eedULL);
    if (dp_nn_params_init(&a->params, specs, ns, &init_rng, err)) goto fail;
    a->i_type_emb = dp_nn_params_find(&a->params, "agent.type_emb");
    a->i_placer = dp_nn_params_find(&a->params, "placer.enc"); /* the placer's tensors come last */
    assert(a->i_type_emb == 0 && a->i_placer > 0);
    if (a->learned_grouper && dp_nn_grouper_init(&a->grouper, &gc, &a->params, a->N, err)) {
        a->learned_grouper = 0; /* not initialised: nothing to free */
        goto fail;
    }
    if (dp_nn_seq2seq_init(&a->placer, &sc, &a->params, a->K, a->G, err)) goto fail;
    a->adam = dp_nn_adam_default();

    int32_t tdim = cfg->type_dim, K = a->K, G = a->G;
    int32_t tw = cfg->group_types == DP_AGENT_GROUP_TYPES_COUNTS ? a->feat.V : tdim;
    if (!ALLOC(a->x, (int64_t)a->N * a->feat.F) || !ALLOC(a->dx, (int64_t)a->N * a->feat.F) ||
        !ALLOC(a->trows, (int64_t)a->N * tdim) || !ALLOC(a->dtype_rows, (int64_t)a->N * tdim) ||
        !ALLOC(a->ge, (int64_t)K * G * a->GF) || !ALLOC(a->dge, (int64_t)K * G * a->GF) ||
        !ALLOC(a->gcount, G) || !ALLOC(a->gscratch, (int64_t)G * (tw + a->feat.S + G)) ||
        !ALLOC(a->dgpart, (int64_t)G * tw) || !ALLOC(a->devs, (int64_t)K * G) || !ALLOC(a->logp, K) ||
        !ALLOC(a->dlogp, K) || !ALLOC(a->entropy, K) || !ALLOC(a->dentropy, K) || !ALLOC(a->place, (int64_t)K * a->N) || !ALLOC(a->res, K) || !ALLOC(a->cached, K) ||
        !ALLOC(a->last, K) || !ALLOC(a->window, cfg->baseline_window) || !ALLOC(a->best, a->N))
        goto nomem;

    a->fail_reward = cfg->fail_reward != 0.0 ? cfg->fail_reward : -sqrt(10.0 * serial_seconds(a));
    if (cfg->baseline_init_fail) {
        a->st.baseline = a->fail_reward;
        a->have_baseline = 1;
        for (int32_t k = 0; k < cfg->baseline_window; k++) a->window[k] = a->fail_reward;
        a->window_n = cfg->baseline_window;
    }
    a->st.n_groups = G;
    a->st.last = a->last;
    return a;
nomem:
    dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for an agent of %s", g->name);
fail:
    dp_agent_free(a);
    return NULL;
}

const dp_agent_state *dp_agent_get_state(const dp_agent *a) { return &a->st; }

/* ---- the update --------------------------------------------------------------- */

double agent_reward(const dp_agent *a, const agent_result *r) {
    if (r->valid) return -sqrt(r->step_time_s);
    if (a->cfg.oom_shaped && r->overflow > 1.0 && isfinite(r->step_time_s))
        return -sqrt(r->step_time_s) * (1.25 + 4.0 * (r->overflow - 1.0));
    return a->fail_reward;
}

float agent_noise_at(const dp_agent_config *c, int64_t update) {
    return update < c->noise_updates ? c->noise_amp : 0.0f;
}

/* Type rows, grouping and group embeddings of this update: fills a->group
 * (sampled, or greedy when mode says so) and a->ge [K, G, GF]; returns the
 * grouper's log-probability (0 for fixed groupers). */
static float forward_groups(dp_agent *a, dp_nn_decode_mode mode, float noise) {
    const dp_agent_config *c = &a->cfg;
    float *table = dp_nn_params_tensor(&a->params, a->i_type_emb);
    dp_nn_embedding_forward(a->trows, a->feat.type_id, table, a->N, a->feat.V, c->type_dim);
    float logp = 0.0f;
    if (a->learned_grouper) {
        agent_features_op_rows(&a->feat, a->trows, c->type_dim, a->x);
        logp = dp_nn_grouper_forward(&a->grouper, a->group, &a->grouper_entropy, a->x, mode, &a->rng, noise, a->N);
    }
    agent_group_embed(&a->feat, c, a->group, a->G, a->trows, a->ge, a->gcount, a->gscratch);
    size_t one = (size_t)a->G * a->GF;
    for (int32_t k = 1; k < a->K; k++) memcpy(a->ge + k * one, a->ge, sizeof(float) * one);
    return logp;
}

/* Accumulates the gradients of sum_k dlogp[k] log p(dev_k) + dlogp_g log
 * p(group) into the parameters. */
static void backward(dp_agent *a, float dlogp_g) {
    const dp_agent_config *c = &a->cfg;
    int embed = c->group_types == DP_AGENT_GROUP_TYPES_EMBEDDING;
    size_t one = (size_t)a->G * a->GF;
    if (embed) memset(a->dge, 0, sizeof(float) * one * a->K);
    /* entropy bonus: loss -= entropy * (mean entropy per decision) */
    for (int32_t k = 0; k < a->K; k++) a->dentropy[k] = -c->entropy / (float)(a->K * a->G);
    dp_nn_seq2seq_backward(&a->placer, embed ? a->dge : NULL, a->dlogp, c->entropy > 0 ? a->dentropy : NULL, a->devs,
                           a->ge);
    memset(a->dtype_rows, 0, sizeof(float) * (size_t)a->N * c->type_dim);
    if (embed) {
        /* the group embedding is shared by the K samples: sum their gradients,
         * then through the mean of the type rows */
        for (int32_t k = 1; k < a->K; k++)
            for (size_t j = 0; j < one; j++) a->dge[j] += a->dge[k * one + j];
        int32_t tdim = c->type_dim;
        memset(a->dgpart, 0, sizeof(float) * (size_t)a->G * tdim);
        float *dparts[3] = {a->dgpart, NULL, NULL};
        const int widths[3] = {tdim, a->feat.S, a->G};
        dp_nn_concat_backward(dparts, a->dge, widths, 3, a->G);
        dp_nn_group_mean_backward(a->dtype_rows, a->dgpart, a->gcount, a->group, a->N, tdim, a->G);
    }
    if (a->learned_grouper) {
        memset(a->dx, 0, sizeof(float) * (size_t)a->N * a->feat.F);
        dp_nn_grouper_backward(&a->grouper, a->dx, a->group, a->x, dlogp_g, -c->entropy / (float)a->N, a->N);
        int32_t tdim = c->type_dim;
        for (int32_t i = 0; i < a->N; i++)
            for (int32_t j = 0; j < tdim; j++) a->dtype_rows[(int64_t)i * tdim + j] += a->dx[(int64_t)i * a->feat.F + j];
    }
    if (embed || a->learned_grouper)
        dp_nn_embedding_backward(dp_nn_params_grad(&a->params, a->i_type_emb), a->dtype_rows, a->feat.type_id, a->N,
                                 a->feat.V, c->type_dim);
}

void agent_baseline_add(dp_agent *a, double r) {
    const dp_agent_config *c = &a->cfg;
    if (c->baseline_window > 0) {
        a->window[a->window_pos] = r;
        a->window_pos = (a->window_pos + 1) % c->baseline_window;
        if (a->window_n < c->baseline_window) a->window_n++;
        double s = 0.0;
        for (int32_t k = 0; k < a->window_n; k++) s += a->window[k];
        a->st.baseline = s / a->window_n;
    } else {
        a->st.baseline = a->have_baseline ? c->baseline_decay * a->st.baseline + (1.0 - c->baseline_decay) * r : r;
    }
    a->have_baseline = 1;
}

dp_status dp_agent_update(dp_agent *a, dp_error *err) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, N = a->N;
    int64_t u = a->st.updates;
    double t0 = dp_now_s();
    float noise = agent_noise_at(c, u);
    dp_rng saved_rng = a->rng; /* restored when the update is abandoned */

    forward_groups(a, DP_NN_DECODE_MODE_SAMPLE, noise);
    dp_nn_seq2seq_forward(&a->placer, a->logp, a->entropy, a->devs, a->ge, NULL, NULL, DP_NN_DECODE_MODE_SAMPLE,
                          &a->rng, noise);
    for (int32_t k = 0; k < K; k++) agent_expand(a, a->group, a->devs + (int64_t)k * a->G, a->place + (int64_t)k * N);

    double te0 = dp_now_s();
    int cancelled = 0;
    dp_status st = agent_eval_run(a->eval, a->place, K, a->res, a->cached, &cancelled, err);
    if (st) return st;
    if (cancelled) {
        a->rng = saved_rng;
        a->st.n_last = 0;
        return DP_STATUS_OK;
    }
    double te1 = dp_now_s();

    /* rewards and advantages against the baseline before this update */
    int valid_only = u >= c->valid_only_after;
    double adv[K], sum_adv = 0.0;
    int32_t n_used = 0;
    if (!a->have_baseline) { /* first rewards: the baseline starts at their mean */
        double s = 0.0;
        int32_t m = 0;
        for (int32_t k = 0; k < K; k++)
            if (!valid_only || a->res[k].valid)
                s += agent_reward(a, &a->res[k]), m++;
        if (m) a->st.baseline = s / m, a->have_baseline = 1;
    }
    double b = a->st.baseline;
    for (int32_t k = 0; k < K; k++) {
        dp_agent_sample *s = &a->last[k];
        const agent_result *r = &a->res[k];
        s->step_time_s = r->step_time_s;
        s->valid = r->valid;
        snprintf(s->reason, sizeof s->reason, "%s", r->reason);
        s->reward = agent_reward(a, r);
        s->used = !valid_only || r->valid;
        s->cached = a->cached[k] != 0;
        adv[k] = s->used ? s->reward - b : 0.0;
        if (s->used) sum_adv += adv[k], n_used++;
    }
    for (int32_t k = 0; k < K; k++)
        if (a->last[k].used) agent_baseline_add(a, a->last[k].reward);

    if (n_used > 0) {
        dp_nn_params_zero_grad(&a->params);
        for (int32_t k = 0; k < K; k++) a->dlogp[k] = (float)(-adv[k] / K);
        backward(a, (float)(-sum_adv / K));
        if (c->clip > 0 && c->clip_per_network) {
            dp_nn_grad_clip_range(&a->params, 0, a->i_placer, c->clip);
            dp_nn_grad_clip_range(&a->params, a->i_placer, a->params.ntensors - a->i_placer, c->clip);
        } else if (c->clip > 0) {
            dp_nn_grad_clip(&a->params, c->clip);
        }
        dp_nn_adam_update(&a->params, &a->adam, c->lr);
    }

    /* bookkeeping */
    double t1 = dp_now_s();
    a->st.elapsed_s += t1 - t0;
    a->st.eval_s += te1 - te0;
    a->st.policy_s += (t1 - t0) - (te1 - te0);
    for (int32_t k = 0; k < K; k++) {
        const dp_agent_sample *s = &a->last[k];
        if (s->valid && s->step_time_s < a->st.best_s) {
            a->st.best_s = s->step_time_s;
            a->st.best_update = u;
            a->st.best_sample = a->st.samples + k;
            a->st.best_elapsed_s = a->st.elapsed_s;
            memcpy(a->best, a->place + (int64_t)k * N, sizeof(int32_t) * (size_t)N);
            a->have_best = 1;
        }
    }
    int32_t used = 0;
    memset(a->gcount, 0, sizeof(float) * (size_t)a->G);
    for (int32_t i = 0; i < N; i++)
        if (a->gcount[a->group[i]] == 0.0f) a->gcount[a->group[i]] = 1.0f, used++;
    a->st.groups_used = used;
    a->st.samples += K;
    a->st.updates++;
    a->st.n_last = K;
    a->st.best_placement = a->have_best ? a->best : NULL;
    agent_eval_cache_stats(a->eval, &a->st.cache_lookups, &a->st.cache_hits);
    return DP_STATUS_OK;
}

dp_status dp_agent_greedy(dp_agent *a, int32_t *out, dp_error *err) {
    (void)err;
    /* greedy decoding draws nothing, but keep the generator untouched anyway */
    dp_rng saved = a->rng;
    int32_t *group = malloc(sizeof(int32_t) * (size_t)a->N);
    if (!group) return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory");
    memcpy(group, a->group, sizeof(int32_t) * (size_t)a->N);
    forward_groups(a, DP_NN_DECODE_MODE_GREEDY, 0.0f);
    dp_nn_seq2seq_forward(&a->placer, a->logp, NULL, a->devs, a->ge, NULL, NULL, DP_NN_DECODE_MODE_GREEDY, &a->rng,
                          0.0f);
    agent_expand(a, a->group, a->devs, out);
    memcpy(a->group, group, sizeof(int32_t) * (size_t)a->N);
    free(group);
    a->rng = saved;
    return DP_STATUS_OK;
}

/* ---- lower bound ------------------------------------------------------------ */

dp_status dp_agent_lower_bound(const dp_graph *g, const dp_devices *ds, const dp_sim *sim, dp_agent_bound *out,
                               dp_error *err) {
    double *finish = malloc(sizeof(double) * (size_t)(g->n_ops ? g->n_ops : 1));
    if (!finish) return dp_error_set(err, DP_STATUS_NOMEM, "lower bound: out of memory");
    double work = 0.0, cp = 0.0;
    int32_t streams = 0;
    for (int32_t d = 0; d < ds->n_devices; d++) streams += ds->devices[d].streams > 0 ? ds->devices[d].streams : 1;
    for (int32_t k = 0; k < g->n_ops; k++) {
        int32_t i = g->topo[k];
        double best = INFINITY;
        for (int32_t d = 0; d < ds->n_devices; d++)
            if (dp_placement_allowed(g, ds, i, d)) best = fmin(best, dp_sim_op_seconds(sim, i, d));
        if (!isfinite(best)) best = 0.0;
        double start = 0.0;
        const dp_op *op = &g->ops[i];
        for (int32_t e = 0; e < op->n_inputs; e++) start = fmax(start, finish[g->inputs[op->inputs_at + e].op]);
        finish[i] = start + best;
        cp = fmax(cp, finish[i]);
        work += best;
    }
    free(finish);
    out->critical_path_s = cp;
    out->work_s = work / streams;
    return DP_STATUS_OK;
}
