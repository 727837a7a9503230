/* The training primitives every learned agent uses, below the algorithms
 * that combine them (agent.c): the reward, the baseline, PPO's clipped
 * gradient, the optimiser step with gradient clipping, the logit-noise
 * schedule, the elite placements of the cross-entropy method, the
 * expansion of element devices into an op placement, and the snapshot
 * that puts back an abandoned training. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"

double agent_reward(const dp_agent_config *cfg, double fail_reward, const agent_result *r) {
    if (r->valid) return -sqrt(r->step_time_s);
    if (cfg->train.oom_shaped && r->overflow > 0 && isfinite(r->step_time_s))
        return -sqrt(r->step_time_s) * (1.25 + 4.0 * r->overflow);
    return fail_reward;
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

float agent_noise_at(const dp_agent_config *c, int64_t update) {
    return update < c->placer.noise_updates ? c->placer.noise_amp : 0.0f;
}

void agent_baseline_add(agent_baseline *b, const dp_agent_config *cfg, double r) {
    if (cfg->train.baseline_window > 0) {
        b->window[b->pos] = r;
        b->pos = (b->pos + 1) % cfg->train.baseline_window;
        if (b->n < cfg->train.baseline_window) b->n++;
        double s = 0.0;
        for (int32_t k = 0; k < b->n; k++) s += b->window[k];
        b->value = s / b->n;
    } else {
        b->value = b->have ? cfg->train.baseline_decay * b->value + (1.0 - cfg->train.baseline_decay) * r : r;
    }
    b->have = 1;
}

int agent_optimizer_step(dp_nn_params *p, dp_nn_adam *adam, const dp_agent_config *cfg, int first_placer,
                         float lr_encoder, float lr, double *norms) {
    int per_network = cfg->train.clip > 0 && cfg->train.clip_per_network;
    double max = per_network ? cfg->train.clip : INFINITY, n0, n1;
    n0 = dp_nn_grad_clip_range(p, 0, first_placer, max);
    n1 = dp_nn_grad_clip_range(p, first_placer, p->ntensors - first_placer, max);
    if (norms) norms[0] = n0, norms[1] = n1;
    if (!isfinite(n0) || !isfinite(n1)) return 0; /* an overflowed backward: no step, nothing poisoned */
    if (cfg->train.clip > 0 && !per_network) dp_nn_grad_clip(p, cfg->train.clip);
    dp_nn_adam_update_split(p, adam, first_placer, lr_encoder, lr);
    return 1;
}

/* 64-bit hash of an op placement (FNV-1a over the devices). */
static uint64_t placement_hash(const int32_t *p, int32_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int32_t i = 0; i < n; i++) h = (h ^ (uint64_t)(uint32_t)p[i]) * 0x100000001b3ULL;
    return h;
}

/* Copies elite `from` over elite `to`. */
static void elite_move(agent_elites *el, int32_t to, int32_t from) {
    el->reward[to] = el->reward[from];
    el->hash[to] = el->hash[from];
    memcpy(el->devs + (int64_t)to * el->T, el->devs + (int64_t)from * el->T, sizeof(int32_t) * (size_t)el->T);
    if (el->choice)
        memcpy(el->choice + (int64_t)to * el->N, el->choice + (int64_t)from * el->N, sizeof(int32_t) * (size_t)el->N);
}

void agent_elites_offer(agent_elites *el, const int32_t *place, const int32_t *devs, const int32_t *choice, double r) {
    int32_t E = el->cap;
    uint64_t h = placement_hash(place, el->N);
    for (int32_t e = 0; e < el->n; e++)
        if (el->hash[e] == h) return;
    if (el->n == E && !(r > el->reward[E - 1])) return;
    int32_t at = el->n < E ? el->n++ : E - 1;
    for (; at > 0 && r > el->reward[at - 1]; at--) elite_move(el, at, at - 1); /* ties: the earlier stays first */
    el->reward[at] = r;
    el->hash[at] = h;
    memcpy(el->devs + (int64_t)at * el->T, devs, sizeof(int32_t) * (size_t)el->T);
    if (el->choice) memcpy(el->choice + (int64_t)at * el->N, choice, sizeof(int32_t) * (size_t)el->N);
}

void agent_expand(const dp_agent *a, const int32_t *choice, const int32_t *dev, int32_t *out) {
    for (int32_t i = 0; i < a->N; i++) {
        int32_t u = a->units.unit_of[i];
        int32_t d = dev[choice[a->unit_first[u]]];
        dp_mask m = a->unit_mask[u];
        if (!(m & dp_mask_bit(d))) d = dp_mask_first(m);
        out[i] = d;
    }
}

void agent_undo_save(agent_undo *u, const dp_nn_params *p) {
    size_t P = p->count;
    if (!u->keep) u->keep = malloc(sizeof(float) * 3 * (P ? P : 1));
    u->have = u->keep != NULL; /* out of memory: the training cannot be put back */
    if (!u->have) return;
    memcpy(u->keep, p->data, sizeof(float) * P);
    memcpy(u->keep + P, p->m, sizeof(float) * P);
    memcpy(u->keep + 2 * P, p->v, sizeof(float) * P);
    u->step = p->step;
}

void agent_undo_restore(const agent_undo *u, dp_nn_params *p) {
    size_t P = p->count;
    memcpy(p->data, u->keep, sizeof(float) * P);
    memcpy(p->m, u->keep + P, sizeof(float) * P);
    memcpy(p->v, u->keep + 2 * P, sizeof(float) * P);
    p->step = u->step;
}
