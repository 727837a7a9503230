/* The agent: builds the parts a configuration names and runs its updates.
 * Every update samples one grouping and K placements of its groups:
 *
 *   group ~ grouper(op features)            (m = 1 grouping per update)
 *   dev_k ~ placer(group embeddings), k < K (K placements per update)
 *   R_k = -sqrt(step time_k), or the failing reward when invalid
 *   A_k = R_k - B, B a moving average of the rewards (seed 003, Eq. 4)
 *
 * then trains by one of
 *   REINFORCE (seed 001, Eqs. 3-6; seed 004, Section 3.1):
 *     loss = -1/K sum_k A_k log p(dev_k) - (1/K sum_k A_k) log p(group)
 *   PPO (seed 003, Eq. 3), ppo_epochs passes over the K samples, each split
 *     into ppo_minibatches shuffled parts, one Adam step per part:
 *     loss = -1/|mb| sum_k [min(r_k A_k, clip(r_k, 1-e, 1+e) A_k)
 *                           + min(r_g A_k, clip(r_g, 1-e, 1+e) A_k)]
 *     with r_k = p(dev_k) / p_old(dev_k) and r_g = p(group) / p_old(group):
 *     the placer's and the grouper's ratios each on their own (each is one
 *     network's action; docs/agents.md);
 *   PPO_CE (Post, as seed 003 describes it): PPO, and every ce_every samples
 *     ce_steps Adam steps on -1/E sum_e log p(elite_e), the E best
 *     placements sampled so far (the table placer instead takes the exact
 *     minimiser, the elites' device frequencies, mixed with the uniform).
 *
 * Logit noise for the first updates and, after valid_only_after updates,
 * only valid samples in the sums and the baseline. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
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
    agent_placer_free(a);
    agent_mars_free(a);
    dp_nn_params_free(&a->params);
    dp_units_free(&a->units);
    free(a->unit_first), free(a->unit_mask);
    free(a->group), free(a->x), free(a->dx), free(a->trows), free(a->dtype_rows);
    free(a->ge), free(a->gcount), free(a->gscratch), free(a->dgpart);
    free(a->devs), free(a->logp), free(a->dlogp), free(a->entropy), free(a->dentropy), free(a->place), free(a->res), free(a->cached);
    free(a->last), free(a->window), free(a->best), free(a->dge0), free(a->best_group_scratch);
    free(a->old_logp), free(a->mb_weight), free(a->order);
    free(a->undo);
    free(a->logp_step), free(a->old_step), free(a->dlogp_step), free(a->old_rows), free(a->dlogp_rows);
    free(a->elite_reward), free(a->elite_hash), free(a->elite_devs), free(a->elite_group);
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
    a->op_level = cfg->encoder != DP_AGENT_ENCODER_NONE;
    a->st.best_s = INFINITY;
    a->st.best_update = a->st.best_sample = -1;
    dp_rng_seed(&a->rng, seed);
    if (units_init(a, err) || agent_features_init(&a->feat, g, cfg, err)) goto fail;
    if (!(a->eval = agent_eval_init(g, ds, eo, seed, err))) goto fail;
    if (!ALLOC(a->group, a->N)) goto nomem;
    if (a->op_level) {
        a->G = a->N; /* every op is placed: agent_mars_init numbers them */
        a->OF = agent_op_feature_dim(&a->feat);
    } else if (a->learned_grouper) {
        a->G = cfg->groups;
    } else {
        dp_status st = agent_group_fixed(g, ds, cfg, seed, a->group, &a->G, err);
        if (st) goto fail;
    }
    if (!a->op_level && a->G > 4096) {
        dp_error_set(err, DP_STATUS_INVALID,
                     "agent: the %s grouper makes %d groups of %s; the seq2seq placer takes at most 4096 "
                     "(choose another grouper or fewer groups)",
                     dp_agent_grouper_kind_name(cfg->grouper), a->G, g->name);
        goto fail;
    }
    if (!a->op_level) a->GF = agent_group_dim(&a->feat, cfg, a->G, a->gwidth);

    /* networks: type embedding, grouper, link, placer (or encoder and
     * placer) in one parameter store */
    dp_nn_tensor_spec specs[128];
    int ns = 0;
    specs[ns++] = (dp_nn_tensor_spec){"agent.type_emb", (size_t)a->feat.V * cfg->type_dim, DP_NN_INIT_UNIFORM, 0.1f};
    dp_nn_grouper_config gc = {a->feat.F, cfg->grouper_hidden, cfg->groups, cfg->tanh_c, cfg->temperature};
    if (a->learned_grouper) ns += dp_nn_grouper_specs(specs + ns, &gc);
    int first_placer = ns + (cfg->link ? 1 : 0);
    if (a->op_level) {
        int n = agent_mars_specs(a, NULL);
        assert(ns + n <= (int)(sizeof specs / sizeof specs[0]));
        agent_mars_specs(a, specs + ns);
        first_placer = ns + agent_mars_encoder_tensors(a); /* the encoder's tensors, then the placer's */
        ns += n;
    } else {
        ns += agent_placer_specs(a, specs + ns);
    }
    dp_rng init_rng;
    dp_rng_seed(&init_rng, seed ^ 0x5eed5eed5eedULL);
    if (dp_nn_params_init(&a->params, specs, ns, &init_rng, err)) goto fail;
    a->i_type_emb = dp_nn_params_find(&a->params, "agent.type_emb");
    a->i_placer = dp_nn_params_find(&a->params, specs[first_placer].name);
    assert(a->i_type_emb == 0 && a->i_placer > 0);
    if (a->learned_grouper && dp_nn_grouper_init(&a->grouper, &gc, &a->params, a->N, err)) {
        a->learned_grouper = 0; /* not initialised: nothing to free */
        goto fail;
    }
    a->adam = dp_nn_adam_default();
    if (a->op_level ? agent_mars_init(a, err) : agent_placer_init(a, err)) goto fail;

    int32_t tdim = cfg->type_dim, K = a->K, G = a->G;
    int32_t tw = cfg->group_types == DP_AGENT_GROUP_TYPES_COUNTS ? a->feat.V : tdim;
    int64_t NG = a->op_level ? 0 : a->N; /* group embedding buffers: not on the op-level path */
    int64_t GG = a->op_level ? 0 : G;
    if (!ALLOC(a->x, NG * a->feat.F) || !ALLOC(a->dx, NG * a->feat.F) || !ALLOC(a->trows, NG * tdim) ||
        !ALLOC(a->dtype_rows, NG * tdim) || !ALLOC(a->ge, GG * a->GF) || !ALLOC(a->gcount, G) ||
        !ALLOC(a->gscratch, GG * (tw + a->feat.S + G)) || !ALLOC(a->dgpart, GG * tw) ||
        !ALLOC(a->devs, (int64_t)K * G) || !ALLOC(a->logp, K) ||
        !ALLOC(a->dlogp, K) || !ALLOC(a->entropy, K) || !ALLOC(a->dentropy, K) || !ALLOC(a->place, (int64_t)K * a->N) || !ALLOC(a->res, K) || !ALLOC(a->cached, K) ||
        !ALLOC(a->last, K) || !ALLOC(a->window, cfg->baseline_window) || !ALLOC(a->best, a->N) ||
        !ALLOC(a->dge0, GG * a->GF) || !ALLOC(a->best_group_scratch, a->N) || !ALLOC(a->old_logp, K) || !ALLOC(a->mb_weight, K) ||
        !ALLOC(a->order, K) || !ALLOC(a->logp_step, (int64_t)K * G) ||
        !ALLOC(a->old_step, (int64_t)K * G) || !ALLOC(a->dlogp_step, (int64_t)K * G) || !ALLOC(a->old_rows, a->N) ||
        !ALLOC(a->dlogp_rows, a->N) || !ALLOC(a->elite_reward, cfg->ce_elites) || !ALLOC(a->elite_hash, cfg->ce_elites) ||
        !ALLOC(a->elite_devs, (int64_t)cfg->ce_elites * G) ||
        (a->learned_grouper && !ALLOC(a->elite_group, (int64_t)cfg->ce_elites * a->N)))
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
 * (sampled, greedy or read per mode) and a->ge [G, GF]; returns the
 * grouper's log-probability (0 for fixed groupers). */
static float forward_groups(dp_agent *a, dp_nn_decode_mode mode, float noise) {
    const dp_agent_config *c = &a->cfg;
    float *table = dp_nn_params_tensor(&a->params, a->i_type_emb);
    dp_nn_embedding_forward(a->trows, a->feat.type_id, table, a->N, a->feat.V, c->type_dim);
    float logp = 0.0f;
    if (a->learned_grouper) {
        agent_features_op_rows(&a->feat, a->trows, c->type_dim, a->x);
        logp = dp_nn_grouper_forward(&a->grouper, a->group, &a->grouper_entropy, a->x, mode, &a->rng, noise, a->N);
        a->ggraph_ok = 0;
    }
    if (c->link) agent_link_forward(a);
    agent_group_embed(&a->feat, c, a->group, a->G, a->trows, a->lout, a->ge, a->gcount, a->gscratch);
    return logp;
}

/* Accumulates into the parameters the gradients of
 *   sum_b dlogp[b] log p(dev_b) + dentropy[b] H(dev_b)     (a->dlogp, a->dentropy)
 *   + dlogp_g log p(group) + dentropy_g H(group)
 * for the last forward of batch B. */
static void backward(dp_agent *a, int32_t B, float dlogp_g, float dentropy_g) {
    const dp_agent_config *c = &a->cfg;
    int embed = c->group_types == DP_AGENT_GROUP_TYPES_EMBEDDING;
    int need_dge = embed || c->link;
    if (need_dge) memset(a->dge0, 0, sizeof(float) * (size_t)a->G * a->GF);
    agent_placer_backward(a, B, need_dge ? a->dge0 : NULL);
    memset(a->dtype_rows, 0, sizeof(float) * (size_t)a->N * c->type_dim);
    if (need_dge) {
        /* split the shared group embedding's gradient into its parts */
        int32_t tw = a->gwidth[0];
        float *dparts[4];
        int widths[4], n = 0;
        if (embed) memset(a->dgpart, 0, sizeof(float) * (size_t)a->G * tw);
        if (c->link) memset(a->ldout, 0, sizeof(float) * (size_t)a->G * a->LH);
        dparts[n] = embed ? a->dgpart : NULL, widths[n++] = tw;
        dparts[n] = NULL, widths[n++] = a->gwidth[1];
        if (a->gwidth[2]) dparts[n] = NULL, widths[n++] = a->gwidth[2];
        if (a->gwidth[3]) dparts[n] = a->ldout, widths[n++] = a->gwidth[3];
        dp_nn_concat_backward(dparts, a->dge0, widths, n, a->G);
        if (embed) dp_nn_group_mean_backward(a->dtype_rows, a->dgpart, a->gcount, a->group, a->N, tw, a->G);
        if (c->link) agent_link_backward(a, a->ldout);
    }
    if (a->learned_grouper) {
        memset(a->dx, 0, sizeof(float) * (size_t)a->N * a->feat.F);
        dp_nn_grouper_backward_rows(&a->grouper, a->dx, a->group, a->x, a->step_weights ? a->dlogp_rows : NULL,
                                    dlogp_g, dentropy_g, a->N);
        int32_t tdim = c->type_dim;
        for (int32_t i = 0; i < a->N; i++)
            for (int32_t j = 0; j < tdim; j++) a->dtype_rows[(int64_t)i * tdim + j] += a->dx[(int64_t)i * a->feat.F + j];
    }
    if (embed || a->learned_grouper)
        dp_nn_embedding_backward(dp_nn_params_grad(&a->params, a->i_type_emb), a->dtype_rows, a->feat.type_id, a->N,
                                 a->feat.V, c->type_dim);
}

void agent_optimizer_step(dp_agent *a) {
    const dp_agent_config *c = &a->cfg;
    if (c->clip > 0 && c->clip_per_network) {
        dp_nn_grad_clip_range(&a->params, 0, a->i_placer, c->clip);
        dp_nn_grad_clip_range(&a->params, a->i_placer, a->params.ntensors - a->i_placer, c->clip);
    } else if (c->clip > 0) {
        dp_nn_grad_clip(&a->params, c->clip);
    }
    dp_nn_adam_update(&a->params, &a->adam, c->lr);
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

/* ---- algorithms ------------------------------------------------------------- */

/* REINFORCE: one step on the K samples' advantages adv[K]. */
static void train_reinforce(dp_agent *a, const double *adv) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K;
    double sum_adv = 0.0;
    for (int32_t k = 0; k < K; k++) {
        a->dlogp[k] = (float)(-adv[k] / K);
        a->dentropy[k] = -c->entropy / (float)K / (c->entropy_sum ? 1.0f : (float)a->G); /* per decision or summed */
        sum_adv += adv[k];
    }
    dp_nn_params_zero_grad(&a->params);
    backward(a, K, (float)(-sum_adv / K), -c->entropy / (c->entropy_sum ? 1.0f : (float)a->N));
    agent_optimizer_step(a);
}

/* d/d(log p) of min(r A, clip(r, 1 - e, 1 + e) A) with r = exp(logp - old):
 * r A where the unclipped term is the smaller, else 0. */
double agent_ppo_grad(double logp, double old, double adv, double eps) {
    double d = logp - old;
    if (d > 30) d = 30; /* a ratio past e^30 is clipped or capped alike */
    double r = exp(d);
    if ((adv >= 0 && r > 1 + eps) || (adv < 0 && r < 1 - eps)) return 0.0;
    return r * adv;
}

/* The learned grouper's log-probability of each op's group, out [N]. */
static void grouper_rows(const dp_agent *a, float *out) {
    int32_t Gg = a->cfg.groups;
    for (int32_t i = 0; i < a->N; i++) out[i] = a->grouper.logp[(int64_t)i * Gg + a->group[i]];
}

/* PPO: ppo_epochs passes over the samples in shuffled minibatches;
 * the first pass reuses the sampling forward when it drew no noise. The
 * ratio is the whole sequence's per network and sample (SEQUENCE) or each
 * decision's (DECISION: each group's device, each op's group; the sum over
 * decisions of the clipped terms, which at ratio 1 is the REINFORCE
 * gradient). Valid-only updates leave the unused samples' advantages at 0. */
static void train_ppo(dp_agent *a, const double *adv, float noise) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, M = c->ppo_minibatches, G = a->G, N = a->N;
    double eps = c->ppo_clip;
    int per_decision = c->ppo_ratio == DP_AGENT_PPO_RATIO_DECISION;
    memcpy(a->old_logp, a->logp, sizeof(float) * (size_t)K);
    memcpy(a->old_step, a->logp_step, sizeof(float) * (size_t)K * G);
    float old_g = a->old_logp_g;
    if (a->learned_grouper) grouper_rows(a, a->old_rows);
    for (int32_t k = 0; k < K; k++) a->order[k] = k;
    int fresh = noise == 0.0f; /* the saved activations are the policy's own */
    a->step_weights = per_decision;
    for (int32_t e = 0; e < c->ppo_epochs; e++) {
        if (M > 1)
            for (int32_t k = K - 1; k > 0; k--) { /* Fisher-Yates */
                int32_t j = (int32_t)dp_rng_below(&a->rng, (uint64_t)k + 1), t = a->order[k];
                a->order[k] = a->order[j], a->order[j] = t;
            }
        for (int32_t mb = 0; mb < M; mb++) {
            float logp_g = old_g;
            if (!fresh) {
                logp_g = forward_groups(a, DP_NN_DECODE_MODE_TEACHER, 0.0f);
                agent_placer_forward(a, K, DP_NN_DECODE_MODE_TEACHER, 0.0f);
            }
            fresh = 0;
            int32_t lo = (int32_t)((int64_t)K * mb / M), hi = (int32_t)((int64_t)K * (mb + 1) / M), n = hi - lo;
            for (int32_t k = 0; k < K; k++) a->mb_weight[k] = 0.0f;
            for (int32_t j = lo; j < hi; j++) a->mb_weight[a->order[j]] = 1.0f;
            double dg = 0.0;
            for (int32_t k = 0; k < K; k++) {
                float w = a->mb_weight[k];
                a->dentropy[k] = -w * c->entropy / (float)n / (c->entropy_sum ? 1.0f : (float)G);
                if (per_decision) {
                    a->dlogp[k] = 0.0f;
                    for (int32_t t = 0; t < G; t++) {
                        int64_t j = (int64_t)k * G + t;
                        a->dlogp_step[j] = w ? (float)(-agent_ppo_grad(a->logp_step[j], a->old_step[j], adv[k], eps) / n)
                                             : 0.0f;
                    }
                } else {
                    a->dlogp[k] = (float)(-w * agent_ppo_grad(a->logp[k], a->old_logp[k], adv[k], eps) / n);
                    dg -= w * agent_ppo_grad(logp_g, old_g, adv[k], eps) / n;
                }
            }
            if (per_decision && a->learned_grouper) {
                /* the one grouping is every sample's: each op's ratio against each sample's advantage */
                float *now = a->dlogp_rows; /* its log-probabilities first, then the weights */
                grouper_rows(a, now);
                for (int32_t i = 0; i < N; i++) {
                    double d = 0.0;
                    for (int32_t k = 0; k < K; k++)
                        if (a->mb_weight[k]) d -= agent_ppo_grad(now[i], a->old_rows[i], adv[k], eps) / n;
                    now[i] = (float)d;
                }
            }
            dp_nn_params_zero_grad(&a->params);
            backward(a, K, (float)dg, -c->entropy / (c->entropy_sum ? 1.0f : (float)N));
            agent_optimizer_step(a);
        }
    }
    a->step_weights = 0;
}

/* 64-bit hash of an op placement (FNV-1a over the devices). */
static uint64_t placement_hash(const int32_t *p, int32_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int32_t i = 0; i < n; i++) h = (h ^ (uint64_t)(uint32_t)p[i]) * 0x100000001b3ULL;
    return h;
}

/* Offers sample k of this update (reward r, valid) to the elites: kept,
 * best first, when among the ce_elites best distinct placements. */
static void elites_offer(dp_agent *a, int32_t k, double r) {
    int32_t E = a->cfg.ce_elites, G = a->G, N = a->N;
    uint64_t h = placement_hash(a->place + (int64_t)k * N, N);
    for (int32_t e = 0; e < a->n_elites; e++)
        if (a->elite_hash[e] == h) return;
    if (a->n_elites == E && !(r > a->elite_reward[E - 1])) return;
    int32_t at = a->n_elites < E ? a->n_elites++ : E - 1;
    while (at > 0 && r > a->elite_reward[at - 1]) { /* ties: the earlier stays first */
        a->elite_reward[at] = a->elite_reward[at - 1];
        a->elite_hash[at] = a->elite_hash[at - 1];
        memcpy(a->elite_devs + (int64_t)at * G, a->elite_devs + (int64_t)(at - 1) * G, sizeof(int32_t) * (size_t)G);
        if (a->elite_group)
            memcpy(a->elite_group + (int64_t)at * N, a->elite_group + (int64_t)(at - 1) * N, sizeof(int32_t) * (size_t)N);
        at--;
    }
    a->elite_reward[at] = r;
    a->elite_hash[at] = h;
    memcpy(a->elite_devs + (int64_t)at * G, a->devs + (int64_t)k * G, sizeof(int32_t) * (size_t)G);
    if (a->elite_group) memcpy(a->elite_group + (int64_t)at * N, a->group, sizeof(int32_t) * (size_t)N);
}

/* Cross-entropy minimisation over the elites: ce_steps Adam steps on
 * -1/E sum_e log p(elite_e), one elite at a time through the batch-of-one
 * placer; the table placer takes the exact minimiser instead. The
 * current grouping is restored afterwards. */
void agent_train_cross_entropy(dp_agent *a) {
    const dp_agent_config *c = &a->cfg;
    int32_t E = a->n_elites, G = a->G, N = a->N;
    if (E == 0) return;
    a->ce_updates++;
    if (a->op_level) {
        agent_mars_cross_entropy(a);
    } else if (c->placer == DP_AGENT_PLACER_KIND_TABLE && !a->learned_grouper) {
        agent_table_set_from_elites(a);
    } else {
        memcpy(a->best_group_scratch, a->group, sizeof(int32_t) * (size_t)N);
        for (int32_t step = 0; step < c->ce_steps; step++) {
            dp_nn_params_zero_grad(&a->params);
            for (int32_t e = 0; e < E; e++) {
                if (a->elite_group) memcpy(a->group, a->elite_group + (int64_t)e * N, sizeof(int32_t) * (size_t)N);
                forward_groups(a, DP_NN_DECODE_MODE_TEACHER, 0.0f);
                memcpy(a->devs, a->elite_devs + (int64_t)e * G, sizeof(int32_t) * (size_t)G);
                agent_placer_forward(a, 1, DP_NN_DECODE_MODE_TEACHER, 0.0f);
                a->dlogp[0] = -1.0f / (float)E;
                a->dentropy[0] = 0.0f;
                backward(a, 1, -1.0f / (float)E, 0.0f);
            }
            agent_optimizer_step(a);
        }
        memcpy(a->group, a->best_group_scratch, sizeof(int32_t) * (size_t)N);
        a->ggraph_ok = 0;
    }
    if (c->ce_recent) a->n_elites = 0;
}

uint64_t agent_stick_mask(const dp_agent *a) {
    uint64_t m = 0;
    for (int32_t d = 0; d < a->ds->n_devices && d < 64; d++)
        if (a->ds->devices[d].kind != DP_DEVKIND_CPU) m |= (uint64_t)1 << d;
    return m;
}

void agent_progress(const dp_agent *a, const char *phase, int64_t done, int64_t total) {
    if (a->eo.progress) a->eo.progress(a->eo.progress_user, phase, done, total);
}

int agent_cancel_requested(const dp_agent *a) { return a->eo.cancel && *a->eo.cancel; }

/* What an update may have changed before it is abandoned: the generator
 * and the baseline (the parameters are put back by the training itself). */
typedef struct update_undo {
    dp_rng rng;
    int have_baseline;
    double baseline;
} update_undo;

/* Leaves the agent as before the update (the state's n_last is 0). */
static dp_status update_abandon(dp_agent *a, const update_undo *u) {
    a->rng = u->rng;
    a->have_baseline = u->have_baseline, a->st.baseline = u->baseline;
    a->st.n_last = 0;
    return DP_STATUS_OK;
}

dp_status dp_agent_update(dp_agent *a, dp_error *err) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, N = a->N;
    int64_t u = a->st.updates;
    double t0 = dp_now_s();
    float noise = agent_noise_at(c, u);
    if (a->st.pretrain_done < a->st.pretrain_iters) { /* the encoder's pre-training comes first */
        dp_status pst = dp_agent_pretrain(a, -1, err);
        if (pst) return pst;
        t0 = dp_now_s();
    }
    const update_undo undo = {a->rng, a->have_baseline, a->st.baseline}; /* when the update is abandoned */

    if (a->op_level) {
        a->old_logp_g = 0.0f;
        if (agent_mars_sample(a, DP_NN_DECODE_MODE_SAMPLE)) return update_abandon(a, &undo);
    } else {
        a->old_logp_g = forward_groups(a, DP_NN_DECODE_MODE_SAMPLE, noise);
        agent_placer_forward(a, K, DP_NN_DECODE_MODE_SAMPLE, noise);
    }
    for (int32_t k = 0; k < K; k++) agent_expand(a, a->group, a->devs + (int64_t)k * a->G, a->place + (int64_t)k * N);

    double te0 = dp_now_s();
    int cancelled = 0;
    agent_progress(a, "evaluating", 0, K);
    dp_status st = agent_eval_run(a->eval, a->place, K, a->res, a->cached, &cancelled, err);
    if (st) return st;
    if (cancelled) return update_abandon(a, &undo);
    double te1 = dp_now_s();

    /* rewards and advantages against the baseline before this update */
    int valid_only = u >= c->valid_only_after;
    double adv[K];
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
        if (s->used) n_used++;
    }
    agent_progress(a, "evaluating", K, K);

    /* training (the baseline and the elites take this update's rewards
     * after it: training reads only adv, and a cancelled training leaves
     * them as they were) */
    if (n_used > 0) {
        if (a->op_level && c->algo == DP_AGENT_ALGO_REINFORCE) {
            agent_mars_train_reinforce(a, adv);
        } else if (a->op_level) {
            if (agent_mars_train_ppo(a, adv)) return update_abandon(a, &undo); /* parameters put back */
        } else if (c->algo == DP_AGENT_ALGO_REINFORCE) {
            train_reinforce(a, adv);
        } else {
            train_ppo(a, adv, noise);
        }
    }
    for (int32_t k = 0; k < K; k++)
        if (a->last[k].used) agent_baseline_add(a, a->last[k].reward);
    if (c->algo == DP_AGENT_ALGO_PPO_CE)
        for (int32_t k = 0; k < K; k++)
            if (a->last[k].valid) elites_offer(a, k, a->last[k].reward);
    if (c->algo == DP_AGENT_ALGO_PPO_CE && (a->st.samples + K) / c->ce_every > a->st.samples / c->ce_every)
        agent_train_cross_entropy(a);

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

float agent_logp_of(dp_agent *a, const int32_t *group, const int32_t *devs) {
    if (a->op_level) return agent_mars_logp_of(a, devs);
    memcpy(a->best_group_scratch, a->group, sizeof(int32_t) * (size_t)a->N);
    if (a->learned_grouper) memcpy(a->group, group, sizeof(int32_t) * (size_t)a->N);
    float lg = forward_groups(a, DP_NN_DECODE_MODE_TEACHER, 0.0f);
    memcpy(a->devs, devs, sizeof(int32_t) * (size_t)a->G);
    agent_placer_forward(a, 1, DP_NN_DECODE_MODE_TEACHER, 0.0f);
    memcpy(a->group, a->best_group_scratch, sizeof(int32_t) * (size_t)a->N);
    a->ggraph_ok = 0;
    return lg + a->logp[0];
}

dp_status dp_agent_greedy(dp_agent *a, int32_t *out, dp_error *err) {
    (void)err;
    /* greedy decoding draws nothing, but keep the generator untouched anyway */
    dp_rng saved = a->rng;
    if (a->op_level) {
        agent_mars_greedy(a, a->devs);
        agent_expand(a, a->group, a->devs, out);
        return DP_STATUS_OK;
    }
    memcpy(a->best_group_scratch, a->group, sizeof(int32_t) * (size_t)a->N);
    forward_groups(a, DP_NN_DECODE_MODE_GREEDY, 0.0f);
    agent_placer_forward(a, 1, DP_NN_DECODE_MODE_GREEDY, 0.0f);
    agent_expand(a, a->group, a->devs, out);
    memcpy(a->group, a->best_group_scratch, sizeof(int32_t) * (size_t)a->N);
    a->ggraph_ok = 0;
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
