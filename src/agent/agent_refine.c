/* Elite refinement (refine > 0): dplace's expert iteration. After an
 * update's samples are evaluated, the best of them is improved by a greedy
 * walk over element moves (one element of the policy's sequence to another
 * device), each judged by the simulator through a delta evaluator and kept
 * when the placement is no slower; the end joins the elites that the
 * cross-entropy step of PPO_CE imitates. The walk changes element devices
 * only, under the update's grouping, so the refined placement is one the
 * policy can sample and imitate exactly (an op-level search's result would
 * not project onto the elements without loss). Moves draw from the agent's
 * generator, so a run stays deterministic and resumable. docs/agents.md,
 * "Elite refinement". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"

void agent_refine_free(agent_refine *r) {
    dp_sim_delta_free(r->d);
    free(r->at), free(r->ops), free(r->nonempty), free(r->mv_op), free(r->mv_dev), free(r->devs), free(r->place);
    memset(r, 0, sizeof *r);
}

double agent_refine_score(const agent_result *r) {
    if (r->valid) return r->step_time_s;
    if (r->overflow > 0 && isfinite(r->step_time_s)) return r->step_time_s * (4.0 + r->overflow);
    return INFINITY;
}

dp_status agent_refine_init(dp_agent *a, dp_error *err) {
    agent_refine *r = &a->refine;
    r->from = -1;
    const dp_sim *sim = agent_eval_sim(a->eval);
    if (!sim || a->eo.measure_cmd || a->eo.sim.noise_sigma > 0)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: refine = %d walks over moves the simulator judges without noise; it cannot be "
                            "used with a measuring command or --noise (use --set refine=0)",
                            (int)a->cfg.refine);
    size_t N = (size_t)a->N, T = (size_t)a->T;
    r->at = malloc((T + 1) * sizeof(int32_t));
    r->ops = malloc(N * sizeof(int32_t));
    r->nonempty = malloc(T * sizeof(int32_t));
    r->mv_op = malloc(N * sizeof(int32_t));
    r->mv_dev = malloc(N * sizeof(int32_t));
    r->devs = malloc(T * sizeof(int32_t));
    r->place = malloc(N * sizeof(int32_t));
    if (!r->at || !r->ops || !r->nonempty || !r->mv_op || !r->mv_dev || !r->devs || !r->place)
        return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the elite refinement");
    r->d = dp_sim_delta_init(sim, err);
    return r->d ? DP_STATUS_OK : err->status;
}

/* The ops each element moves under the encoder's current choice (CSR in
 * at/ops; an op follows the element of its unit's lowest op, as
 * agent_expand places it) and the elements holding ops; returns how many
 * hold ops. */
static int32_t refine_elements(dp_agent *a) {
    agent_refine *r = &a->refine;
    int32_t N = a->N, T = a->T, n = 0;
    const int32_t *choice = a->enc->choice;
    memset(r->at, 0, sizeof(int32_t) * ((size_t)T + 1));
    for (int32_t i = 0; i < N; i++) r->at[choice[a->unit_first[a->units.unit_of[i]]] + 1]++;
    for (int32_t t = 0; t < T; t++) {
        if (r->at[t + 1] > 0) r->nonempty[n++] = t;
        r->at[t + 1] += r->at[t];
    }
    for (int32_t i = 0; i < N; i++) r->ops[r->at[choice[a->unit_first[a->units.unit_of[i]]]]++] = i;
    for (int32_t t = T; t > 0; t--) r->at[t] = r->at[t - 1]; /* back to the starts */
    r->at[0] = 0;
    return n;
}

/* The ops of element t that change device when it goes to device d (each
 * to d, or its unit's first allowed device) into mv_op/mv_dev; returns how
 * many. */
static int32_t refine_move(dp_agent *a, int32_t t, int32_t d) {
    agent_refine *r = &a->refine;
    int32_t n = 0;
    for (int32_t k = r->at[t]; k < r->at[t + 1]; k++) {
        int32_t i = r->ops[k];
        dp_mask m = a->unit_mask[a->units.unit_of[i]];
        int32_t to = m & dp_mask_bit(d) ? d : dp_mask_first(m);
        if (to != r->place[i]) r->mv_op[n] = i, r->mv_dev[n++] = to;
    }
    return n;
}

/* The update's sample with the least score (the first of equals); -1 when
 * every score is infinite. */
static int32_t refine_start(const dp_agent *a) {
    int32_t best = -1;
    double bs = INFINITY;
    for (int32_t k = 0; k < a->K; k++) {
        double s = agent_refine_score(&a->res[k]);
        if (s < bs) bs = s, best = k;
    }
    return best;
}

dp_status agent_refine_run(dp_agent *a, dp_error *err) {
    agent_refine *r = &a->refine;
    r->from = -1, r->sims = 0;
    if (a->cfg.refine <= 0) return DP_STATUS_OK;
    dp_status st;
    int32_t k0 = refine_start(a);
    if (k0 < 0) return DP_STATUS_OK;
    int32_t T = a->T, D = a->D, n_el = refine_elements(a);
    memcpy(r->devs, a->devs + (int64_t)k0 * T, sizeof(int32_t) * (size_t)T);
    memcpy(r->place, a->place + (int64_t)k0 * a->N, sizeof(int32_t) * (size_t)a->N);
    dp_sim_result sr;
    if ((st = dp_sim_delta_set_base(r->d, r->place, &sr, err))) return st;
    agent_result cur;
    agent_result_from_sim(&sr, &cur);
    double cur_score = agent_refine_score(&cur);
    for (int32_t m = 0; m < a->cfg.refine && n_el > 0 && D > 1; m++) {
        int32_t t = r->nonempty[dp_rng_below(&a->rng, (uint64_t)n_el)];
        int32_t d = (int32_t)dp_rng_below(&a->rng, (uint64_t)(D - 1));
        if (d >= r->devs[t]) d++;
        int32_t n = refine_move(a, t, d);
        if (n == 0 || dp_sim_delta_surely_oom(r->d, n, r->mv_op, r->mv_dev)) continue;
        if ((st = dp_sim_delta_try(r->d, n, r->mv_op, r->mv_dev, &sr, err))) return st;
        r->sims++;
        agent_result res;
        agent_result_from_sim(&sr, &res);
        double s = agent_refine_score(&res);
        if (!(s <= cur_score)) continue;
        if ((st = dp_sim_delta_accept(r->d, err))) return st;
        cur = res, cur_score = s, r->devs[t] = d;
        for (int32_t k = 0; k < n; k++) r->place[r->mv_op[k]] = r->mv_dev[k];
    }
    r->res = cur;
    r->from = k0;
    return DP_STATUS_OK;
}
