/* The agent's core: builds the encoder and placer a configuration names
 * and runs its updates. Every update draws one choice of the encoder (a
 * learned grouper's grouping; nothing to draw otherwise) and K placements
 * of its elements:
 *
 *   choice ~ encoder(op features)             (m = 1 grouping per update)
 *   dev_k  ~ placer(encoder's sequence), k < K (K placements per update)
 *   R_k = -sqrt(step time_k), or the failing reward when invalid
 *   A_k = R_k - B, B a moving average of the rewards (the EAGLE paper, Eq. 4)
 *
 * then trains by one of
 *   REINFORCE (the Hierarchical Planner paper, Eqs. 3-6; the ColocRL paper, Section 3.1):
 *     loss = -1/K sum_k A_k log p(dev_k) - (1/K sum_k A_k) log p(choice)
 *   PPO (the EAGLE paper, Eq. 3; the Mars paper), ppo_epochs passes over the K samples,
 *     each split into ppo_minibatches shuffled parts, one Adam step per part:
 *     loss = -1/|mb| sum_k [min(r_k A_k, clip(r_k, 1-e, 1+e) A_k)
 *                           + min(r_c A_k, clip(r_c, 1-e, 1+e) A_k)]
 *     with r_k = p(dev_k) / p_old(dev_k) and r_c = p(choice) / p_old(choice):
 *     the placer's and the encoder's ratios each on their own (each is one
 *     network's action; docs/agents.md), or one ratio per decision;
 *   PPO_CE (Post, as the EAGLE paper describes it): PPO, and every ce_every samples
 *     ce_steps Adam steps on -1/E sum_e log p(elite_e), the E best
 *     placements sampled so far (a placer with an exact minimiser, Post's
 *     table, takes it instead: the elites' device frequencies mixed with the
 *     uniform).
 *
 * Logit noise for the first updates and, after valid_only_after updates,
 * only valid samples in the sums and the baseline. An encoder over every op
 * (Mars) also pre-trains its GCN by Deep Graph Infomax first. */
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

/* The units a sample places (the configuration's: the graph's colocation
 * units, or whole modules; dp_units), the lowest op of each, and the
 * devices each may use. Every op follows its unit's lowest op. */
static dp_status units_init(dp_agent *a, dp_error *err) {
    dp_status st = dp_units_init_spec(&a->units, a->g, a->cfg.units, err);
    if (st) return st;
    int32_t m = a->units.n_units;
    if (!ALLOC(a->unit_first, m) || !ALLOC(a->unit_mask, m))
        return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the colocation units");
    for (int32_t k = 0; k < m; k++) a->unit_first[k] = a->units.members[a->units.first[k]];
    return dp_units_masks(&a->units, a->g, a->ds, dp_mask_all(a->ds), a->unit_mask, err);
}

/* ---- parts ---------------------------------------------------------------------- */

/* The seq2seq decoders' stick_mask: the GPUs among the first 64 devices
 * (the previous element's device is favoured only when it is a GPU: a run
 * of ops on the CPU is what a start from near uniform must not repeat). */
static uint64_t stick_mask(const dp_devices *ds) {
    uint64_t m = 0;
    for (int32_t d = 0; d < ds->n_devices && d < 64; d++)
        if (ds->devices[d].kind != DP_DEVKIND_CPU) m |= (uint64_t)1 << d;
    return m;
}

/* The largest ratio over the devices of the simulated peak memory to the
 * summed bytes of the ops placed there (place [N]); 0 when none. */
static double peak_ratio(const dp_agent *a, const dp_sim *sim, dp_sim_workspace *ws, const int32_t *place,
                         const double *bytes, dp_error *err) {
    dp_sim_result r;
    if (dp_sim_run_ws(sim, ws, place, NULL, &r, err)) return -1.0;
    double est[DP_MAX_DEVICES] = {0}, worst = 0.0;
    for (int32_t i = 0; i < a->N; i++) est[place[i]] += bytes[i];
    for (int32_t d = 0; d < a->D; d++)
        if (est[d] > 0) worst = fmax(worst, (double)r.device[d].peak_bytes / est[d]);
    return worst;
}

/* The learned grouper's prior (grouper-prior): each op's group in the
 * fixed grouping the setting names (the warm start's runs for runs),
 * folded into [0, groups). */
static dp_status prior_init(dp_agent *a, dp_error *err) {
    if (!ALLOC(a->prior, a->N)) return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the grouper's prior");
    int32_t G = a->cfg.grouper.groups, n = 0;
    if (a->cfg.grouper.prior == DP_AGENT_GROUPER_KIND_RUNS) {
        memcpy(a->prior, a->runs, sizeof(int32_t) * (size_t)a->N);
        return DP_STATUS_OK;
    }
    dp_agent_config c = a->cfg;
    c.grouper.kind = c.grouper.prior;
    dp_status st = agent_group_fixed(a->g, a->ds, &c, a->seed, a->prior, &n, err);
    for (int32_t i = 0; !st && i < a->N; i++) a->prior[i] %= G;
    return st;
}

/* The memory mask's estimates (mem-mask): each op's bytes, its parameters
 * and outputs, scaled by mem-scale times the largest ratio of simulated
 * peak memory (by liveness, copies of received tensors included) to the
 * bytes placed, over every op on the device of the most memory and two
 * uniformly random placements (the most copies); each device's capacity. */
static dp_status memory_init(dp_agent *a, dp_error *err) {
    int32_t N = a->N, D = a->D, big = 0;
    if (!ALLOC(a->op_bytes, N) || !ALLOC(a->mem_w, a->T) || !ALLOC(a->mem_cap, D))
        return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the memory mask");
    for (int32_t d = 0; d < D; d++) {
        a->mem_cap[d] = (float)a->ds->devices[d].memory_bytes;
        if (a->ds->devices[d].memory_bytes > a->ds->devices[big].memory_bytes) big = d;
    }
    const dp_sim *sim = agent_eval_sim(a->eval);
    dp_sim_workspace *ws = dp_sim_workspace_init(sim, err);
    int32_t *place = malloc(sizeof(int32_t) * (size_t)N);
    double *bytes = malloc(sizeof(double) * (size_t)N), ratio = 0.0;
    dp_status st = !ws ? err->status : !place || !bytes ? dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory") : 0;
    for (int32_t i = 0; !st && i < N; i++) {
        const dp_op *op = &a->g->ops[i];
        bytes[i] = (double)op->param_bytes;
        for (int32_t k = 0; k < op->n_outputs; k++) bytes[i] += (double)a->g->outputs[op->outputs_at + k].bytes;
    }
    dp_rng rng;
    dp_rng_seed(&rng, a->seed ^ 0x6d656d6dULL); /* its own draws: the agent's generator stays untouched */
    for (int k = 0; !st && k < 3; k++) {
        for (int32_t i = 0; i < N; i++) place[i] = k == 0 ? big : (int32_t)dp_rng_below(&rng, (uint64_t)D);
        double r = peak_ratio(a, sim, ws, place, bytes, err);
        if (r < 0) st = err->status;
        ratio = fmax(ratio, r);
    }
    for (int32_t i = 0; !st && i < N; i++) a->op_bytes[i] = (float)(bytes[i] * a->cfg.placer.mem_scale * (ratio > 0 ? ratio : 1.0));
    free(place), free(bytes);
    dp_sim_workspace_free(ws);
    return st;
}

/* The encoder's forward, and the memory mask's element weights for its
 * choice. */
static float enc_forward(dp_agent *a, dp_nn_decode_mode mode, float noise) {
    float lp = a->enc->ops->forward(a->enc, mode, noise, &a->rng);
    if (a->mem_w) {
        memset(a->mem_w, 0, sizeof(float) * (size_t)a->T);
        for (int32_t i = 0; i < a->N; i++) a->mem_w[a->enc->choice[i]] += a->op_bytes[i];
    }
    return lp;
}

/* An unbound placer of the configured kind for batches of B. */
static agent_placer *placer_new(dp_agent *a, int32_t B) {
    agent_placer *p;
    switch (a->cfg.placer.kind) {
    case DP_AGENT_PLACER_KIND_GCN: p = agent_placer_gcn_new(); break;
    case DP_AGENT_PLACER_KIND_TABLE: p = agent_placer_table_new(); break;
    default: p = agent_placer_seq_new(); break;
    }
    if (!p) return NULL;
    p->ctx = a->enc->ctx;
    p->T = a->T, p->F = a->enc->F, p->D = a->D, p->B = B;
    p->stick_mask = stick_mask(a->ds);
    if (a->cfg.placer.mem_mask) p->mask_w = a->mem_w, p->mask_cap = a->mem_cap;
    return p;
}

static void placer_free(agent_placer *p) {
    if (p) p->ops->free(p);
}

agent_placer *agent_placer_one(dp_agent *a) {
    if (a->placer1) return a->placer1;
    agent_placer *p = placer_new(a, 1);
    dp_error err;
    if (p && p->ops->bind(p, &err)) {
        placer_free(p);
        p = NULL;
    }
    return a->placer1 = p;
}

/* ---- init / free ------------------------------------------------------------ */

void dp_agent_free(dp_agent *a) {
    if (!a) return;
    placer_free(a->placer);
    placer_free(a->placer1);
    if (a->enc) a->enc->ops->free(a->enc);
    agent_features_free(&a->feat);
    agent_walks_free(&a->walks); /* its delta evaluator reads the evaluator's simulator */
    agent_eval_free(a->eval);
    dp_nn_params_free(&a->params);
    dp_units_free(&a->units);
    free(a->unit_first), free(a->unit_mask), free(a->dx), free(a->op_bytes), free(a->mem_w), free(a->mem_cap);
    free(a->devs), free(a->logp), free(a->samp_logp), free(a->logp_step), free(a->entropy), free(a->place), free(a->res), free(a->cached);
    free(a->last), free(a->old_logp), free(a->old_step), free(a->old_rows);
    free(a->dlogp), free(a->dstep), free(a->dent), free(a->drows), free(a->order), free(a->in_mb), free(a->bsample);
    free(a->bdevs), free(a->blogp), free(a->bstep), free(a->bent), free(a->choice_keep), free(a->greedy_place), free(a->devs1), free(a->step1);
    free(a->undo.keep), free(a->baseline.window);
    free(a->elites.reward), free(a->elites.hash), free(a->elites.devs), free(a->elites.choice);
    free(a->pretrain_keep), free(a->best), free(a->warm_choice), free(a->warm_devs), free(a->warm_place);
    free(a->runs), free(a->runs_devs), free(a->prior);
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

/* The parameter store: the type embedding (tensor 0; read by the group
 * encoder, kept by every agent so that the layout and the initial values
 * of the rest do not depend on it), the encoder's tensors, the placer's. */
static dp_status params_init(dp_agent *a, dp_error *err) {
    dp_nn_tensor_spec specs[128];
    int ne = a->enc->ops->specs(a->enc, NULL), np = a->placer->ops->specs(a->placer, NULL);
    assert(1 + ne + np <= (int)(sizeof specs / sizeof specs[0]));
    specs[0] = (dp_nn_tensor_spec){"agent.type_emb", (size_t)a->feat.V * a->cfg.features.type_dim, DP_NN_INIT_UNIFORM, 0.1f};
    a->enc->ops->specs(a->enc, specs + 1);
    a->placer->ops->specs(a->placer, specs + 1 + ne);
    dp_rng init_rng;
    dp_rng_seed(&init_rng, a->seed ^ 0x5eed5eed5eedULL);
    dp_status st = dp_nn_params_init(&a->params, specs, 1 + ne + np, &init_rng, err);
    if (st) return st;
    a->enc->first_tensor = 1, a->enc->n_tensors = ne;
    a->first_placer = 1 + ne;
    a->adam = dp_nn_adam_default();
    if (ne > 0) {
        int last = ne; /* tensors 1..ne */
        a->enc_lo = a->params.offset[1];
        a->enc_floats = a->params.offset[last] + a->params.size[last] - a->enc_lo;
    }
    return DP_STATUS_OK;
}

/* The per-update buffers, the baseline's window and the elites. */
static int buffers_init(dp_agent *a) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, B = a->B, T = a->T, N = a->N, E = c->ce.elites, R = a->enc->n_rows;
    int64_t KT = (int64_t)K * T, BT = (int64_t)B * T, gathered = B < K ? BT : 0;
    a->elites = (agent_elites){E, 0, T, N, NULL, NULL, NULL, NULL};
    return ALLOC(a->dx, a->enc->needs_dx ? (int64_t)T * a->enc->F : 0) && ALLOC(a->devs, KT) && ALLOC(a->logp, K) && ALLOC(a->samp_logp, K) &&
           ALLOC(a->logp_step, KT) && ALLOC(a->entropy, K) && ALLOC(a->place, (int64_t)K * N) &&
           ALLOC(a->res, K) && ALLOC(a->cached, K) && ALLOC(a->last, K) && ALLOC(a->old_logp, K) &&
           ALLOC(a->old_step, KT) && ALLOC(a->old_rows, R) && ALLOC(a->dlogp, B) && ALLOC(a->dstep, BT) &&
           ALLOC(a->dent, B) && ALLOC(a->drows, R) && ALLOC(a->order, K) && ALLOC(a->in_mb, K) &&
           ALLOC(a->bsample, B) && ALLOC(a->bdevs, gathered) && ALLOC(a->blogp, B) && ALLOC(a->bstep, gathered) &&
           ALLOC(a->bent, B) && ALLOC(a->choice_keep, N) && ALLOC(a->greedy_place, N) && ALLOC(a->devs1, T) && ALLOC(a->step1, T) && ALLOC(a->best, N) &&
           ALLOC(a->baseline.window, c->train.baseline_window) && ALLOC(a->elites.reward, E) &&
           ALLOC(a->elites.hash, E) && ALLOC(a->elites.devs, (int64_t)E * T) &&
           (R == 0 || ALLOC(a->elites.choice, (int64_t)E * N)) &&
           (!a->enc->ops->dgi_step || c->encoder.pretrain_iters == 0 || ALLOC(a->pretrain_keep, (int64_t)a->enc_floats));
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
    a->N = g->n_ops, a->D = ds->n_devices, a->K = cfg->train.batch;
    a->st.best_s = INFINITY;
    a->st.best_update = a->st.best_sample = -1;
    a->st.best_by = DP_RUN_BEST_BY_NONE;
    a->st.final_s = NAN;
    a->prep.pretrain_loss = a->prep.pretrain_best = NAN;
    a->prep.warm_loss = a->prep.warm_target_s = NAN;
    dp_rng_seed(&a->rng, seed);
    if (units_init(a, err) || agent_features_init(&a->feat, g, cfg, err)) goto fail;
    if (!(a->eval = agent_eval_init(g, ds, eo, seed, err))) goto fail;

    agent_ctx ctx = {g, ds, &a->cfg, &a->feat, &a->params, seed, NULL, NULL};
    int runs = cfg->grouper.kind == DP_AGENT_GROUPER_KIND_RUNS ||
               (cfg->grouper.kind == DP_AGENT_GROUPER_KIND_LEARNED && cfg->grouper.prior == DP_AGENT_GROUPER_KIND_RUNS);
    if (runs) { /* the grouping comes from the warm-start placement */
        if (agent_warm_place(a, err)) goto fail;
        if (!ALLOC(a->runs, a->N) || !ALLOC(a->runs_devs, cfg->grouper.groups)) goto nomem;
        agent_warm_runs(a, cfg->grouper.groups, a->runs, a->runs_devs);
        ctx.runs = a->runs;
    }
    if (cfg->grouper.kind == DP_AGENT_GROUPER_KIND_LEARNED && cfg->grouper.prior != DP_AGENT_GROUPER_KIND_NONE) {
        if (prior_init(a, err)) goto fail;
        ctx.prior = a->prior;
    }
    a->enc = cfg->encoder.kind == DP_AGENT_ENCODER_NONE ? agent_encoder_groups_new(&ctx) : agent_encoder_ops_new(&ctx);
    if (!a->enc) goto nomem;
    if (a->enc->ops->init(a->enc, err)) goto fail;
    a->T = a->enc->T;
    /* a policy over every op keeps one minibatch's workspaces, not an
     * update's; one over groups keeps all K and masks the minibatch */
    int op_level = cfg->encoder.kind != DP_AGENT_ENCODER_NONE;
    a->B = op_level && cfg->train.algo != DP_AGENT_ALGO_REINFORCE ? a->K / cfg->ppo.minibatches : a->K;
    if (cfg->placer.mem_mask && memory_init(a, err)) goto fail;
    if (!(a->placer = placer_new(a, a->B))) goto nomem;
    if (params_init(a, err) || a->enc->ops->bind(a->enc, err) || a->placer->ops->bind(a->placer, err)) goto fail;
    if (!buffers_init(a)) goto nomem;
    if (cfg->walks.moves > 0 && agent_walks_init(a, err)) goto fail;

    a->fail_reward = cfg->train.fail_reward != 0.0 ? cfg->train.fail_reward : -sqrt(10.0 * serial_seconds(a));
    if (cfg->train.baseline_init_fail) {
        a->baseline.have = 1, a->baseline.value = a->fail_reward;
        for (int32_t k = 0; k < cfg->train.baseline_window; k++) a->baseline.window[k] = a->fail_reward;
        a->baseline.n = cfg->train.baseline_window;
    }
    a->st.baseline = a->baseline.value;
    a->prep.pretrain_iters = a->enc->ops->dgi_step ? cfg->encoder.pretrain_iters : 0;
    a->prep.warm_steps = cfg->warm.from != DP_AGENT_WARM_NONE ? cfg->warm.steps : 0;
    agent_prep_sync(a);
    a->st.n_groups = a->T;
    a->st.last = a->last;
    return a;
nomem:
    dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for an agent of %s", g->name);
fail:
    dp_agent_free(a);
    return NULL;
}

const dp_run_state *dp_agent_get_state(const dp_agent *a) { return &a->st; }

const dp_agent_prep *dp_agent_get_prep(const dp_agent *a) { return &a->prep; }

size_t dp_agent_describe_prep(const dp_agent *a, char *buf, size_t size) {
    const dp_agent_prep *p = &a->prep;
    if (p->warm_done == 0 || p->pretrain_done < p->pretrain_iters)
        return (size_t)snprintf(buf, size, "pre-training %lld/%lld  DGI loss %.4f  lowest %.4f",
                                (long long)p->pretrain_done, (long long)p->pretrain_iters, p->pretrain_loss,
                                p->pretrain_best);
    return (size_t)snprintf(buf, size, "warm start %lld/%lld  imitating %s (%.4f s)  -log p %.4g",
                            (long long)p->warm_done, (long long)p->warm_steps, p->warm_from ? p->warm_from : "?",
                            p->warm_target_s, p->warm_loss);
}

float *dp_agent_params(dp_agent *a, size_t *count) {
    *count = a->params.count;
    return a->params.data;
}

void dp_agent_params_set(dp_agent *a, const float *values) {
    memcpy(a->params.data, values, sizeof(float) * a->params.count);
    a->prep.pretrain_done = a->prep.pretrain_iters; /* the parameters came prepared */
    a->prep.warm_done = a->prep.warm_steps;
    a->pretrain_have_keep = 0;
    agent_prep_sync(a);
}

void dp_agent_set_progress(dp_agent *a, const dp_run_state *s) {
    a->st.updates = s->updates, a->st.samples = s->samples, a->st.baseline = s->baseline;
    a->st.best_s = s->best_s, a->st.best_update = s->best_update, a->st.best_sample = s->best_sample;
    a->st.best_by = s->best_by;
    a->st.best_final = s->best_final, a->st.final_s = s->final_s;
    a->st.best_elapsed_s = s->best_elapsed_s, a->st.elapsed_s = s->elapsed_s;
    a->st.policy_s = s->policy_s, a->st.eval_s = s->eval_s;
    if (s->best_placement) {
        if (s->best_placement != a->best) memcpy(a->best, s->best_placement, sizeof(int32_t) * (size_t)a->N);
        a->have_best = 1;
        a->st.best_placement = a->best;
    }
}

/* ---- the policy's forward and backward ---------------------------------------------- */

static void progress(const dp_agent *a, const char *phase, int64_t done, int64_t total) {
    if (a->eo.progress) a->eo.progress(a->eo.progress_user, phase, done, total);
}

static int cancel_requested(const dp_agent *a) { return a->eo.cancel && *a->eo.cancel; }

/* Draws the update's choice and its K placements, B at a time; returns 1
 * (work left undone) when the cancel flag is found set between batches. */
static int sample_update(dp_agent *a, float noise) {
    int32_t K = a->K, B = a->B, T = a->T;
    a->logp_enc = enc_forward(a, DP_NN_DECODE_MODE_SAMPLE, noise);
    progress(a, "sampling", 0, K);
    for (int32_t k0 = 0; k0 < K; k0 += B) {
        if (k0 > 0 && cancel_requested(a)) return 1;
        a->placer->ops->forward(a->placer, a->enc, a->devs + (int64_t)k0 * T, a->logp + k0,
                                a->logp_step + (int64_t)k0 * T, a->entropy + k0, DP_NN_DECODE_MODE_SAMPLE, noise,
                                &a->rng);
        progress(a, "sampling", k0 + B, K);
    }
    memcpy(a->samp_logp, a->logp, sizeof(float) * (size_t)K);
    a->samp_enc = a->logp_enc;
    double h = 0.0;
    for (int32_t k = 0; k < K; k++) h += a->entropy[k];
    a->st.upd.entropy[0] = a->enc->n_rows ? a->enc->entropy / a->enc->n_rows : NAN;
    a->st.upd.entropy[1] = h / K / T;
    return 0;
}

/* Accumulates the policy's gradients for the last forward of placer p:
 * the placer's weights (dlogp, dstep, dent over p's batch; dstep and dent
 * may be NULL), then the encoder's own (drows may be NULL) and, through
 * the sequence, the placer's gradient of it. */
static void backward(dp_agent *a, agent_placer *p, const int32_t *devs, const float *dlogp, const float *dstep,
                     const float *dent, const float *drows, float dlogp_enc, float dent_enc) {
    agent_encoder *e = a->enc;
    float *dx = e->needs_dx ? a->dx : NULL;
    if (dx) memset(dx, 0, sizeof(float) * (size_t)a->T * e->F);
    p->ops->backward(p, dx, devs, dlogp, dstep, dent);
    e->ops->backward(e, dx, drows, dlogp_enc, dent_enc);
}

/* One optimiser step, the encoder's network at lr_encoder and the placer
 * at lr; the networks' gradient norms go to the update's sums. */
static int optimizer_step_at(dp_agent *a, float lr_encoder, float lr) {
    double norms[2];
    int taken = agent_optimizer_step(&a->params, &a->adam, &a->cfg, a->first_placer, lr_encoder, lr, norms);
    a->norm_sum[0] += norms[0], a->norm_sum[1] += norms[1]; /* a skipped step's inf shows in the log */
    a->n_steps++;
    return taken;
}

static void optimizer_step(dp_agent *a) {
    optimizer_step_at(a, a->cfg.train.lr, a->cfg.train.lr);
}

/* The entropy bonus's weight per sample of n for the placer (on the mean
 * over samples of the summed or the mean entropy per element) and for the
 * encoder's choice. */
static float entropy_weight(const dp_agent *a, float w, int32_t n) {
    return -w * a->cfg.train.entropy / (float)n / (a->cfg.train.entropy_sum ? 1.0f : (float)a->T);
}
static float entropy_weight_enc(const dp_agent *a) {
    return -a->cfg.train.entropy / (a->cfg.train.entropy_sum ? 1.0f : (float)a->N);
}

/* ---- algorithms ------------------------------------------------------------- */

/* REINFORCE: one step on the K samples' advantages adv[K], from the
 * sampling forward (one batch of K). */
static void train_reinforce(dp_agent *a, const double *adv) {
    int32_t K = a->K;
    assert(a->B == K);
    double sum_adv = 0.0;
    for (int32_t k = 0; k < K; k++) {
        a->dlogp[k] = (float)(-adv[k] / K);
        a->dent[k] = entropy_weight(a, 1.0f, K);
        sum_adv += adv[k];
    }
    dp_nn_params_zero_grad(&a->params);
    backward(a, a->placer, a->devs, a->dlogp, NULL, a->cfg.train.entropy > 0 ? a->dent : NULL, NULL,
             (float)(-sum_adv / K), entropy_weight_enc(a));
    optimizer_step(a);
}

/* PPO's weights for the batch of the current minibatch: per batch row r
 * (sample bsample[r], in the minibatch or not), the placer's dlogp, dstep
 * (per decision) and dent; returns the encoder's weight on log p(choice)
 * (sequence ratios) and fills drows (per decision). */
static float ppo_weights(dp_agent *a, const double *adv, int32_t n, const float *blogp, const float *bstep,
                         float logp_enc, float old_enc) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, T = a->T;
    double eps = c->ppo.clip, dg = 0.0;
    int per_decision = c->ppo.ratio == DP_AGENT_PPO_RATIO_DECISION;
    for (int32_t r = 0; r < a->B; r++) {
        int32_t k = a->bsample[r];
        float w = a->in_mb[k] ? 1.0f : 0.0f;
        a->dent[r] = entropy_weight(a, w, n);
        if (per_decision) {
            a->dlogp[r] = 0.0f;
            for (int32_t t = 0; t < T; t++) {
                int64_t j = (int64_t)r * T + t;
                a->dstep[j] = w ? (float)(-agent_ppo_grad(bstep[j], a->old_step[(int64_t)k * T + t], adv[k], eps) / n)
                                : 0.0f;
            }
        } else {
            a->dlogp[r] = (float)(-w * agent_ppo_grad(blogp[r], a->old_logp[k], adv[k], eps) / n);
            dg -= w * agent_ppo_grad(logp_enc, old_enc, adv[k], eps) / n;
        }
    }
    if (per_decision && a->enc->n_rows) {
        /* the one choice is every sample's: each decision's ratio against each sample's advantage */
        a->enc->ops->rows(a->enc, a->drows); /* its log-probabilities first, then the weights */
        for (int32_t i = 0; i < a->enc->n_rows; i++) {
            double d = 0.0;
            for (int32_t k = 0; k < K; k++)
                if (a->in_mb[k]) d -= agent_ppo_grad(a->drows[i], a->old_rows[i], adv[k], eps) / n;
            a->drows[i] = (float)d;
        }
    }
    return (float)dg;
}

/* Puts the rows order[lo, hi) of the samples into the batch: with B = K
 * the batch is the samples themselves (the others weigh 0); else they are
 * gathered into the batch's own arrays. */
static void minibatch_rows(dp_agent *a, int32_t lo, int32_t hi) {
    int32_t K = a->K, T = a->T;
    memset(a->in_mb, 0, (size_t)K);
    for (int32_t j = lo; j < hi; j++) a->in_mb[a->order[j]] = 1;
    for (int32_t r = 0; r < a->B; r++) a->bsample[r] = a->B == K ? r : a->order[lo + r];
    if (a->B < K)
        for (int32_t r = 0; r < a->B; r++)
            memcpy(a->bdevs + (int64_t)r * T, a->devs + (int64_t)a->bsample[r] * T, sizeof(int32_t) * (size_t)T);
}

/* PPO: ppo_epochs passes over the samples in shuffled minibatches, one
 * Adam step each; the first pass reuses the sampling forward when it was
 * one batch without noise. With a cancel flag, a training found cancelled
 * between minibatches puts back the parameters and Adam's state and
 * returns 1 (the caller puts back the rest); else 0. */
static int train_ppo(dp_agent *a, const double *adv, float noise) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, M = c->ppo.minibatches, T = a->T;
    int per_decision = c->ppo.ratio == DP_AGENT_PPO_RATIO_DECISION, masked = a->B == K;
    assert(masked || a->B * M == K);
    memcpy(a->old_logp, a->logp, sizeof(float) * (size_t)K);
    memcpy(a->old_step, a->logp_step, sizeof(float) * (size_t)K * T);
    float old_enc = a->logp_enc;
    if (a->enc->n_rows) a->enc->ops->rows(a->enc, a->old_rows);
    int can_undo = a->eo.cancel != NULL;
    if (can_undo) agent_undo_save(&a->undo, &a->params), can_undo = a->undo.have;
    int32_t *bdevs = masked ? a->devs : a->bdevs;
    float *blogp = masked ? a->logp : a->blogp, *bstep = masked ? a->logp_step : a->bstep;
    float *bent = masked ? a->entropy : a->bent;
    for (int32_t k = 0; k < K; k++) a->order[k] = k;
    int fresh = masked && noise == 0.0f; /* the saved activations are the policy's own */
    int64_t total = (int64_t)c->ppo.epochs * M, done = 0;
    progress(a, "training", 0, total);
    for (int32_t e = 0; e < c->ppo.epochs; e++) {
        if (M > 1)
            for (int32_t k = K - 1; k > 0; k--) { /* Fisher-Yates */
                int32_t j = (int32_t)dp_rng_below(&a->rng, (uint64_t)k + 1), t = a->order[k];
                a->order[k] = a->order[j], a->order[j] = t;
            }
        for (int32_t mb = 0; mb < M; mb++) {
            int32_t lo = (int32_t)((int64_t)K * mb / M), hi = (int32_t)((int64_t)K * (mb + 1) / M);
            minibatch_rows(a, lo, hi);
            float logp_enc = old_enc;
            if (!fresh) {
                logp_enc = enc_forward(a, DP_NN_DECODE_MODE_TEACHER, 0.0f);
                a->placer->ops->forward(a->placer, a->enc, bdevs, blogp, bstep, bent, DP_NN_DECODE_MODE_TEACHER,
                                        0.0f, &a->rng);
            }
            fresh = 0;
            float dg = ppo_weights(a, adv, hi - lo, blogp, bstep, logp_enc, old_enc);
            dp_nn_params_zero_grad(&a->params);
            backward(a, a->placer, bdevs, a->dlogp, per_decision ? a->dstep : NULL, c->train.entropy > 0 ? a->dent : NULL,
                     per_decision && a->enc->n_rows ? a->drows : NULL, dg, entropy_weight_enc(a));
            optimizer_step(a);
            progress(a, "training", ++done, total);
            if (can_undo && done < total && cancel_requested(a)) {
                agent_undo_restore(&a->undo, &a->params);
                return 1;
            }
        }
    }
    return 0;
}

/* Adam steps at learning rate lr on -1/E sum_e log p(choices_e, devs_e)
 * (choices [E, N], read when the encoder decides; devs [E, T]), one
 * placement at a time through the batch-of-one placer; returns the mean of
 * -log p over the last step's placements (NaN when out of memory or when
 * a step was skipped, its gradient not finite: agent_optimizer_step). The
 * update's choice is put back afterwards. */
static double imitate(dp_agent *a, const int32_t *choices, const int32_t *devs, int32_t E, int32_t steps, float lr) {
    agent_encoder *e = a->enc;
    int32_t T = a->T, N = a->N;
    agent_placer *p1 = agent_placer_one(a);
    if (!p1) return NAN;
    memcpy(a->choice_keep, e->choice, sizeof(int32_t) * (size_t)N);
    float dl = -1.0f / (float)E;
    double loss = 0.0;
    int skipped = 0;
    for (int32_t step = 0; step < steps; step++) {
        dp_nn_params_zero_grad(&a->params);
        loss = 0.0;
        for (int32_t k = 0; k < E; k++) {
            if (e->n_rows) memcpy(e->choice, choices + (int64_t)k * N, sizeof(int32_t) * (size_t)N);
            float lg = enc_forward(a, DP_NN_DECODE_MODE_TEACHER, 0.0f);
            memcpy(a->devs1, devs + (int64_t)k * T, sizeof(int32_t) * (size_t)T);
            float lp, ent;
            p1->ops->forward(p1, e, a->devs1, &lp, a->step1, &ent, DP_NN_DECODE_MODE_TEACHER, 0.0f, &a->rng);
            loss -= ((double)lg + lp) / E;
            backward(a, p1, a->devs1, &dl, NULL, NULL, NULL, dl, 0.0f);
        }
        skipped |= !optimizer_step_at(a, lr, lr);
    }
    memcpy(e->choice, a->choice_keep, sizeof(int32_t) * (size_t)N);
    return skipped ? NAN : loss;
}

/* Cross-entropy minimisation over the elites: ce_steps Adam steps on
 * -1/E sum_e log p(elite_e) (imitate); a placer with an exact minimiser
 * takes it instead (when the encoder decides nothing). */
void agent_train_cross_entropy(dp_agent *a) {
    const dp_agent_config *c = &a->cfg;
    agent_elites *el = &a->elites;
    if (el->n == 0) return;
    a->ce_updates++;
    if (a->placer->ops->fit && a->enc->n_rows == 0) a->placer->ops->fit(a->placer, el->devs, el->n);
    else imitate(a, el->choice, el->devs, el->n, c->ce.steps, c->train.lr);
}

/* ---- pre-training ----------------------------------------------------------- */

/* The encoder's part of the parameter store as a store of its own (Adam
 * over it alone, with the pre-training's own step count). */
static dp_nn_params encoder_view(dp_agent *a) {
    dp_nn_params v = a->params;
    size_t lo = a->enc_lo;
    v.data += lo, v.grad += lo, v.m += lo, v.v += lo;
    v.count = a->enc_floats;
    v.step = a->pretrain_step;
    return v;
}

/* Ends the pre-training: the parameters of the lowest loss back in place
 * (when kept), and the optimiser starts afresh for training. */
static void pretrain_finish(dp_agent *a) {
    if (a->pretrain_have_keep) memcpy(a->params.data + a->enc_lo, a->pretrain_keep, sizeof(float) * a->enc_floats);
    memset(a->params.m, 0, sizeof(float) * a->params.count);
    memset(a->params.v, 0, sizeof(float) * a->params.count);
    memset(a->params.grad, 0, sizeof(float) * a->params.count);
    a->params.step = 0;
}

/* Up to max_iters (< 0: all) more Deep Graph Infomax iterations; *done
 * gets how many it ran. An iteration whose loss or gradient is not finite
 * stops it with an error, its Adam step not taken (the parameters and the
 * kept ones stay finite). */
static dp_status pretrain_dgi(dp_agent *a, int64_t max_iters, int64_t *done, dp_error *err) {
    dp_agent_prep *s = &a->prep;
    int64_t left = s->pretrain_iters - s->pretrain_done;
    if (max_iters >= 0 && max_iters < left) left = max_iters;
    *done = 0;
    for (int64_t it = 0; it < left; it++) {
        memset(a->params.grad + a->enc_lo, 0, sizeof(float) * a->enc_floats);
        float loss = a->enc->ops->dgi_step(a->enc, &a->rng);
        dp_nn_params view = encoder_view(a);
        if (!isfinite(loss) || !isfinite(dp_nn_grad_norm(&view))) /* as agent_optimizer_step judges a gradient */
            return dp_error_set(err, DP_STATUS_INVALID,
                                "pre-training diverged at iteration %lld of %lld (Deep Graph Infomax's %s is not "
                                "finite; the step was not taken): lower --set pretrain-lr (now %g)",
                                (long long)s->pretrain_done + 1, (long long)s->pretrain_iters,
                                isfinite(loss) ? "gradient" : "loss", (double)a->cfg.encoder.pretrain_lr);
        s->pretrain_loss = loss;
        if (!a->pretrain_have_keep || loss < s->pretrain_best) { /* the parameters this loss belongs to */
            s->pretrain_best = loss;
            memcpy(a->pretrain_keep, a->params.data + a->enc_lo, sizeof(float) * a->enc_floats);
            a->pretrain_have_keep = 1;
        }
        dp_nn_adam_update(&view, &a->adam, a->cfg.encoder.pretrain_lr);
        a->pretrain_step = view.step;
        s->pretrain_done++, (*done)++;
    }
    if (left > 0 && s->pretrain_done == s->pretrain_iters) pretrain_finish(a);
    return DP_STATUS_OK;
}

/* Up to max_iters (< 0: all) more steps of the imitation warm start (its
 * target made on the first); the optimiser starts afresh after the last. */
static dp_status warm_start(dp_agent *a, int64_t max_iters, dp_error *err) {
    dp_agent_prep *s = &a->prep;
    int64_t left = s->warm_steps - s->warm_done;
    if (max_iters >= 0 && max_iters < left) left = max_iters;
    if (left <= 0) return DP_STATUS_OK;
    if (!a->warm_choice) {
        if (!(a->warm_choice = malloc(sizeof(int32_t) * (size_t)a->N)) ||
            !(a->warm_devs = malloc(sizeof(int32_t) * (size_t)a->T)))
            return dp_error_set(err, DP_STATUS_NOMEM, "warm start: out of memory");
        dp_status st = agent_warm_target(a, a->warm_choice, a->warm_devs, err);
        if (st) {
            free(a->warm_choice), free(a->warm_devs);
            a->warm_choice = a->warm_devs = NULL;
            return st;
        }
    }
    if (!agent_placer_one(a)) return dp_error_set(err, DP_STATUS_NOMEM, "warm start: out of memory");
    for (int64_t i = 0; i < left; i++) { /* a step at a time, to stop at the first that diverges */
        double loss = imitate(a, a->warm_choice, a->warm_devs, 1, 1, a->cfg.warm.lr);
        if (!isfinite(loss))
            return dp_error_set(err, DP_STATUS_INVALID,
                                "warm start: diverged at step %lld of %lld (the gradient of -log p of %s's placement "
                                "is not finite; the step was not taken): lower --set warm-lr (now %g)",
                                (long long)s->warm_done + 1, (long long)s->warm_steps,
                                s->warm_from ? s->warm_from : "the baseline", (double)a->cfg.warm.lr);
        s->warm_loss = loss;
        s->warm_done++;
    }
    if (s->warm_done == s->warm_steps) pretrain_finish(a); /* (no DGI keep: only the optimiser reset) */
    return DP_STATUS_OK;
}

dp_status dp_agent_pretrain(dp_agent *a, int64_t max_iters, dp_error *err) {
    dp_agent_prep *s = &a->prep;
    double t0 = dp_now_s();
    int64_t done = 0;
    dp_status st = pretrain_dgi(a, max_iters, &done, err);
    if (!st && (max_iters < 0 || done < max_iters)) st = warm_start(a, max_iters < 0 ? -1 : max_iters - done, err);
    s->pretrain_s += dp_now_s() - t0;
    agent_prep_sync(a);
    return st;
}

float agent_dgi_loss(dp_agent *a) { return a->enc->ops->dgi_step ? a->enc->ops->dgi_step(a->enc, NULL) : NAN; }

/* ---- the update ---------------------------------------------------------------- */

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
    a->baseline.have = u->have_baseline, a->baseline.value = u->baseline;
    a->st.n_last = 0;
    return DP_STATUS_OK;
}

/* The samples' rewards and advantages adv[K] against the baseline before
 * this update (the first rewards start it at their mean); returns how many
 * samples train. A sample k with walk[k] >= 0 trains on that walk's end
 * (elite-train): its advantage is the end's reward against the baseline,
 * while its reward (the baseline's, the statistics') stays its own. */
static int32_t rewards(dp_agent *a, int64_t u, const int32_t *walk, double *adv) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, n_used = 0;
    int valid_only = u >= c->train.valid_only_after;
    if (!a->baseline.have) {
        double s = 0.0;
        int32_t m = 0;
        for (int32_t k = 0; k < K; k++)
            if (!valid_only || a->res[k].valid) s += agent_reward(c, a->fail_reward, &a->res[k]), m++;
        if (m) a->baseline.value = s / m, a->baseline.have = 1;
    }
    double b = a->baseline.value;
    for (int32_t k = 0; k < K; k++) {
        dp_run_sample *s = &a->last[k];
        const agent_result *r = &a->res[k];
        s->step_time_s = r->step_time_s;
        s->valid = r->valid;
        snprintf(s->reason, sizeof s->reason, "%s", r->reason);
        s->reward = agent_reward(c, a->fail_reward, r);
        s->used = !valid_only || r->valid || walk[k] >= 0;
        s->cached = a->cached[k] != 0;
        double rt = walk[k] >= 0 ? agent_reward(c, a->fail_reward, &a->walks.walk[walk[k]].res) : s->reward;
        adv[k] = s->used ? rt - b : 0.0;
        if (s->used) n_used++;
    }
    return n_used;
}

/* After training: the baseline and the elites take this update's rewards
 * (training reads only the advantages, and a cancelled training leaves
 * them as they were); the cross-entropy update when its turn has come. */
static void after_training(dp_agent *a) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, T = a->T, N = a->N;
    for (int32_t k = 0; k < K; k++)
        if (a->last[k].used) agent_baseline_add(&a->baseline, c, a->last[k].reward);
    a->st.baseline = a->baseline.value;
    if (c->train.algo != DP_AGENT_ALGO_PPO_CE && c->walks.moves <= 0) return; /* the walks bring the elites to any algorithm */
    for (int32_t k = 0; k < K; k++)
        if (a->last[k].valid)
            agent_elites_offer(&a->elites, a->place + (int64_t)k * N, a->devs + (int64_t)k * T,
                               a->enc->n_rows ? a->enc->choice : NULL, a->last[k].reward);
    for (int32_t w = 0; w < a->walks.n_walks; w++) {
        const agent_walk *r = &a->walks.walk[w];
        /* under the grouping it walked (the best elite's, for elite-keep's) */
        if (r->from != AGENT_WALK_FROM_NONE && r->res.valid)
            agent_elites_offer(&a->elites, r->place, r->devs, a->enc->n_rows ? r->el->choice : NULL,
                               agent_reward(c, a->fail_reward, &r->res));
    }
    if (c->train.on && (a->st.samples + K) / c->ce.every > a->st.samples / c->ce.every) agent_train_cross_entropy(a);
}

/* The policy's log-probabilities now of the update's samples as a->devs
 * holds them, teacher-forced, B at a time, into logp_enc, logp [K] and
 * logp_step [K, T]; with B = K the placer keeps the batch's activations,
 * as after sampling. */
static void score_samples(dp_agent *a) {
    int32_t K = a->K, B = a->B, T = a->T;
    a->logp_enc = enc_forward(a, DP_NN_DECODE_MODE_TEACHER, 0.0f);
    for (int32_t k0 = 0; k0 < K; k0 += B) {
        int32_t *devs = a->devs + (int64_t)k0 * T;
        float *lp = a->logp + k0, *step = a->logp_step + (int64_t)k0 * T, *ent = a->entropy + k0;
        if (B < K) { /* through the batch's own arrays */
            memcpy(a->bdevs, devs, sizeof(int32_t) * (size_t)B * T);
            devs = a->bdevs, lp = a->blogp, step = a->bstep, ent = a->bent;
        }
        a->placer->ops->forward(a->placer, a->enc, devs, lp, step, ent, DP_NN_DECODE_MODE_TEACHER, 0.0f, &a->rng);
        if (B < K) {
            memcpy(a->logp + k0, lp, sizeof(float) * (size_t)B);
            memcpy(a->logp_step + (int64_t)k0 * T, step, sizeof(float) * (size_t)B * T);
        }
    }
}

/* The policy's log-probability now of each of the update's samples (the
 * encoder's choice included), out [K]. */
static void rescore(dp_agent *a, double *out) {
    score_samples(a);
    for (int32_t k = 0; k < a->K; k++) out[k] = (double)a->logp_enc + a->logp[k];
}

static void swap_devs(int32_t *x, int32_t *y, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        int32_t t = x[i];
        x[i] = y[i], y[i] = t;
    }
}

/* elite-train: each walk's end that is valid and faster than the sample
 * it started from swaps devices with that sample (walk[k] the walk now in
 * sample k's place, -1 for none), and the policy's log-probabilities of
 * the samples as they now stand become the update's (score_samples: the
 * sampling forward's role in REINFORCE and PPO's first pass). */
static void train_swap_in(dp_agent *a, int32_t *walk) {
    int32_t K = a->K, T = a->T, n = 0;
    for (int32_t k = 0; k < K; k++) walk[k] = -1;
    if (!a->cfg.walks.train || !a->cfg.train.on) return;
    for (int32_t w = 0; w < a->walks.n_walks; w++) {
        const agent_walk *r = &a->walks.walk[w];
        if (r->from < 0 || !r->res.valid) continue;
        const agent_result *s = &a->res[r->from];
        if (s->valid && !(r->res.step_time_s < s->step_time_s)) continue;
        walk[r->from] = w, n++;
        swap_devs(a->devs + (int64_t)r->from * T, a->walks.walk[w].devs, T);
    }
    if (n > 0) score_samples(a);
}

/* Puts back the samples train_swap_in swapped (walk[K]). */
static void train_swap_out(dp_agent *a, const int32_t *walk) {
    for (int32_t k = 0; k < a->K; k++)
        if (walk[k] >= 0) swap_devs(a->devs + (int64_t)k * a->T, a->walks.walk[walk[k]].devs, a->T);
}

static int cmp_double(const void *x, const void *y) {
    double u = *(const double *)x, v = *(const double *)y;
    return (u > v) - (u < v);
}

/* What the update did (the state's upd): step times, advantages, gradient
 * norms, and the KL estimate from re-scoring the samples after training. */
static void update_stats(dp_agent *a, const double *adv) {
    dp_run_update *d = &a->st.upd;
    int32_t K = a->K, n = 0, used = 0;
    double t[K], sum = 0.0, am = 0.0, a2 = 0.0;
    d->samples = K, d->valid = d->cache_hits = 0;
    for (int32_t k = 0; k < K; k++) {
        d->cache_hits += a->last[k].cached;
        if (a->last[k].valid) t[n++] = a->last[k].step_time_s, sum += a->last[k].step_time_s;
        if (a->last[k].used) am += adv[k], a2 += adv[k] * adv[k], used++;
    }
    d->valid = n;
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    d->mean_s = n ? sum / n : NAN;
    d->median_s = n ? (n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2])) : NAN;
    d->adv_mean = used ? am / used : NAN;
    d->adv_std = used ? sqrt(fmax(0.0, a2 / used - d->adv_mean * d->adv_mean)) : NAN;
    d->grad_norm[0] = a->n_steps ? a->norm_sum[0] / a->n_steps : NAN;
    d->grad_norm[1] = a->n_steps ? a->norm_sum[1] / a->n_steps : NAN;
    d->elite_s = NAN, d->elite_sims = 0;
    for (int32_t w = 0; w < a->walks.n_walks; w++) {
        const agent_walk *r = &a->walks.walk[w];
        d->elite_sims += r->sims;
        if (r->from != AGENT_WALK_FROM_NONE && r->res.valid && !(r->res.step_time_s >= d->elite_s))
            d->elite_s = r->res.step_time_s;
    }
    double now[K], kl = 0.0;
    if (!a->cfg.train.on) { /* nothing changed the policy */
        d->kl = 0.0;
        return;
    }
    rescore(a, now);
    for (int32_t k = 0; k < K; k++) kl += ((double)a->samp_enc + a->samp_logp[k]) - now[k];
    d->kl = kl / K;
}

/* Placement place [N] of update u, found from the update's sample k (its
 * own or a walk's from it) by `by`, becomes the best when valid and faster. */
static void best_offer(dp_agent *a, int64_t u, int32_t k, dp_run_best_by by, int valid, double step_s,
                       const int32_t *place) {
    if (!valid || !(step_s < a->st.best_s)) return;
    a->st.best_s = step_s;
    a->st.best_by = by;
    a->st.best_update = u;
    a->st.best_sample = a->st.samples + k;
    a->st.best_elapsed_s = a->st.elapsed_s;
    a->st.best_final = 0;
    memcpy(a->best, place, sizeof(int32_t) * (size_t)a->N);
    a->have_best = 1;
}

/* The counters, timings and the best placement after an update (te:
 * seconds in the evaluator since t0). */
static void bookkeeping(dp_agent *a, int64_t u, double t0, double te) {
    int32_t K = a->K, N = a->N;
    double t1 = dp_now_s();
    a->st.elapsed_s += t1 - t0;
    a->st.eval_s += te;
    a->st.policy_s += (t1 - t0) - te;
    if (isfinite(a->st.upd.greedy_s)) /* the greedy placement before the update's samples */
        best_offer(a, u, 0, DP_RUN_BEST_BY_GREEDY, 1, a->st.upd.greedy_s, a->greedy_place);
    for (int32_t k = 0; k < K; k++)
        best_offer(a, u, k, DP_RUN_BEST_BY_SAMPLE, a->last[k].valid, a->last[k].step_time_s, a->place + (int64_t)k * N);
    for (int32_t w = 0; w < a->walks.n_walks; w++) { /* found by refining sample `from` (or the best elite) */
        const agent_walk *r = &a->walks.walk[w];
        if (r->from != AGENT_WALK_FROM_NONE)
            best_offer(a, u, r->from >= 0 ? r->from : 0,
                       r->from == AGENT_WALK_FROM_ELITE ? DP_RUN_BEST_BY_KEPT_WALK : DP_RUN_BEST_BY_WALK, r->res.valid,
                       r->res.step_time_s, r->place);
    }
    /* elements holding ops (devs1 as scratch: one flag per element) */
    int32_t used = 0;
    memset(a->devs1, 0, sizeof(int32_t) * (size_t)a->T);
    for (int32_t i = 0; i < N; i++) {
        int32_t g = a->enc->choice[i];
        if (!a->devs1[g]) a->devs1[g] = 1, used++;
    }
    a->st.groups_used = used;
    a->st.samples += K;
    a->st.updates++;
    a->st.n_last = K;
    a->st.best_placement = a->have_best ? a->best : NULL;
    agent_eval_cache_stats(a->eval, &a->st.cache_lookups, &a->st.cache_hits);
}

/* greedy-every: the policy's greedy placement before update u, when it
 * is due, into a->greedy_place and *greedy_s (NaN: not due; inf: not
 * valid; bookkeeping offers it as the best once the update is done); *te
 * gets the evaluator's seconds. Returns 1 when the evaluation was
 * cancelled (the caller abandons the update: nothing has changed yet),
 * else 0; errors in *st. */
static int update_greedy(dp_agent *a, int64_t u, double *greedy_s, double *te, dp_status *st, dp_error *err) {
    *greedy_s = NAN, *te = 0.0, *st = DP_STATUS_OK;
    int32_t every = a->cfg.train.greedy_every;
    if (every <= 0 || u == 0 || u % every) return 0;
    agent_result r;
    int cached = 0, cancelled = 0;
    if ((*st = dp_agent_greedy(a, a->greedy_place, err))) return 0;
    double te0 = dp_now_s();
    *st = agent_eval_run(a->eval, a->greedy_place, 1, &r, &cached, &cancelled, err);
    *te = dp_now_s() - te0;
    if (*st || cancelled) return cancelled;
    *greedy_s = r.valid ? r.step_time_s : INFINITY;
    return 0;
}

dp_status dp_agent_update(dp_agent *a, dp_error *err) {
    const dp_agent_config *c = &a->cfg;
    int32_t K = a->K, N = a->N, T = a->T;
    int64_t u = a->st.updates;
    double t0 = dp_now_s();
    float noise = agent_noise_at(c, u);
    if (a->prep.pretrain_done < a->prep.pretrain_iters || a->prep.warm_done < a->prep.warm_steps) { /* preparation first */
        dp_status pst = dp_agent_pretrain(a, -1, err);
        if (pst) return pst;
        t0 = dp_now_s();
    }
    const update_undo undo = {a->rng, a->baseline.have, a->baseline.value}; /* when the update is abandoned */
    double greedy_s, tg;
    dp_status gst;
    if (update_greedy(a, u, &greedy_s, &tg, &gst, err)) return update_abandon(a, &undo);
    if (gst) return gst;
    if (sample_update(a, noise)) return update_abandon(a, &undo);
    for (int32_t k = 0; k < K; k++)
        agent_expand(a, a->enc->choice, a->devs + (int64_t)k * T, a->place + (int64_t)k * N);

    double te0 = dp_now_s();
    int cancelled = 0;
    progress(a, "evaluating", 0, K);
    dp_status st = agent_eval_run(a->eval, a->place, K, a->res, a->cached, &cancelled, err);
    if (st) return st;
    if (cancelled) return update_abandon(a, &undo);
    if ((st = agent_walks_run(a, err))) return st;
    double te1 = dp_now_s();
    double adv[K];
    int32_t walk[K];
    train_swap_in(a, walk);
    int32_t n_used = rewards(a, u, walk, adv);
    progress(a, "evaluating", K, K);

    a->norm_sum[0] = a->norm_sum[1] = 0.0, a->n_steps = 0;
    int abandoned = 0;
    if (n_used > 0 && c->train.on) {
        if (c->train.algo == DP_AGENT_ALGO_REINFORCE) train_reinforce(a, adv);
        else abandoned = train_ppo(a, adv, noise); /* 1: parameters put back */
    }
    train_swap_out(a, walk);
    if (abandoned) return update_abandon(a, &undo);
    after_training(a);
    update_stats(a, adv);
    a->st.upd.greedy_s = greedy_s;
    bookkeeping(a, u, t0, (te1 - te0) + tg);
    return DP_STATUS_OK;
}

/* ---- the policy's answers without training ------------------------------------------ */

float agent_logp_of(dp_agent *a, const int32_t *choice, const int32_t *devs) {
    agent_encoder *e = a->enc;
    agent_placer *p1 = agent_placer_one(a);
    if (!p1) return NAN;
    memcpy(a->choice_keep, e->choice, sizeof(int32_t) * (size_t)a->N);
    if (e->n_rows) memcpy(e->choice, choice, sizeof(int32_t) * (size_t)a->N);
    float lg = enc_forward(a, DP_NN_DECODE_MODE_TEACHER, 0.0f), lp, ent;
    memcpy(a->devs1, devs, sizeof(int32_t) * (size_t)a->T);
    p1->ops->forward(p1, e, a->devs1, &lp, a->step1, &ent, DP_NN_DECODE_MODE_TEACHER, 0.0f, &a->rng);
    memcpy(e->choice, a->choice_keep, sizeof(int32_t) * (size_t)a->N);
    return lg + lp;
}

dp_status dp_agent_greedy(dp_agent *a, int32_t *out, dp_error *err) {
    agent_encoder *e = a->enc;
    agent_placer *p1 = agent_placer_one(a);
    if (!p1) return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for greedy decoding");
    dp_rng saved = a->rng; /* greedy decoding draws nothing; keep the generator untouched anyway */
    memcpy(a->choice_keep, e->choice, sizeof(int32_t) * (size_t)a->N);
    enc_forward(a, DP_NN_DECODE_MODE_GREEDY, 0.0f);
    float lp, ent;
    p1->ops->forward(p1, e, a->devs1, &lp, a->step1, &ent, DP_NN_DECODE_MODE_GREEDY, 0.0f, &a->rng);
    agent_expand(a, e->choice, a->devs1, out);
    memcpy(e->choice, a->choice_keep, sizeof(int32_t) * (size_t)a->N);
    a->rng = saved;
    return DP_STATUS_OK;
}

/* The run's final answer (dp_method_ops.final): the policy's greedy
 * placement, evaluated once (the cache may answer) and offered as the best,
 * found after the updates and placements so far. The counters do not move;
 * the seconds count in the training time. A cancelled evaluation leaves
 * final_s NaN and the best as it was. */
static dp_status agent_final(dp_agent *a, dp_error *err) {
    double t0 = dp_now_s();
    a->st.final_s = NAN;
    int32_t *p = malloc(sizeof(int32_t) * (size_t)a->N);
    if (!p) return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the final greedy placement");
    agent_result r;
    int cached = 0, cancelled = 0;
    dp_status st = dp_agent_greedy(a, p, err);
    double te0 = dp_now_s();
    if (!st) st = agent_eval_run(a->eval, p, 1, &r, &cached, &cancelled, err);
    double te1 = dp_now_s();
    if (!st && !cancelled) {
        a->st.final_s = r.valid ? r.step_time_s : INFINITY;
        a->st.elapsed_s += te1 - t0, a->st.eval_s += te1 - te0, a->st.policy_s += te0 - t0;
        double before = a->st.best_s;
        best_offer(a, a->st.updates, 0, DP_RUN_BEST_BY_GREEDY, r.valid, r.step_time_s, p); /* after every sample */
        if (a->st.best_s < before) a->st.best_final = 1, a->st.best_placement = a->best;
        agent_eval_cache_stats(a->eval, &a->st.cache_lookups, &a->st.cache_hits);
    }
    free(p);
    return st;
}

/* ---- the agent as a method of the run driver --------------------------------------- */

static dp_status method_step(void *self, dp_error *err) { return dp_agent_update(self, err); }
static dp_status method_prepare(void *self, int64_t max_iters, dp_error *err) {
    return dp_agent_pretrain(self, max_iters, err);
}
static const dp_run_state *method_state(const void *self) { return dp_agent_get_state(self); }
static dp_status method_save(const void *self, const char *path, dp_error *err) {
    return dp_agent_save(self, path, err);
}
static dp_status method_load(void *self, const char *path, dp_error *err) { return dp_agent_load(self, path, err); }

static dp_status method_final(void *self, dp_error *err) { return agent_final(self, err); }
static size_t method_describe_prep(const void *self, char *buf, size_t size) {
    return dp_agent_describe_prep(self, buf, size);
}

static const dp_method_ops agent_method_ops = {"agent",     method_step, method_prepare, method_state, method_save,
                                               method_load, method_final, method_describe_prep};

dp_method dp_agent_method(dp_agent *a) {
    dp_method m = {&agent_method_ops, a};
    return m;
}
