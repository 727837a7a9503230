/* Elite walks (elite-moves > 0): dplace's expert iteration. After an
 * update's samples are evaluated, the best of them are improved by greedy
 * walks over element moves (one element of the policy's sequence to
 * another device; with elite-chain, grown along the data flow while it is
 * slower), each judged by the simulator through a delta evaluator and
 * kept when the placement is no slower; the walks' ends join the elites
 * that the cross-entropy step imitates. A walk changes element devices
 * only, under the update's grouping, so its end is a placement the policy
 * can sample and imitate exactly (an op-level search's result would not
 * project onto the elements without loss). It proposes its moves and
 * compares placements as the search does (dp_sim_score, dp_sim_path_pick,
 * dp_sim_path_hop_move, dp_graph_neighbour), over elements instead of the
 * search's units, and keeps a move only when it is no slower.
 *
 * Walk w starts from the update's w-th best sample and draws from a
 * generator seeded from the agent's, so a run is deterministic whatever
 * the threads, and resumable. With elite-keep one more walk starts from the
 * best elite, under the grouping it was found with, so the walk from the
 * best so far goes on from update to update (the elites are in the
 * checkpoint). The walks run on the evaluator's threads.
 * docs/design/elite-walks.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "common/util.h"

/* e's arrays for N ops and T elements; 0 when out of memory (what was
 * allocated is freed by agent_walks_free). */
static int elements_alloc(agent_elements *e, size_t N, size_t T) {
    e->at = malloc((T + 1) * sizeof(int32_t));
    e->ops = malloc(N * sizeof(int32_t));
    e->nonempty = malloc(T * sizeof(int32_t));
    return e->at && e->ops && e->nonempty;
}

/* Frees what elements_alloc allocated (NULLs are fine). */
static void elements_free(agent_elements *e) { free(e->at), free(e->ops), free(e->nonempty); }

void agent_walks_free(agent_walks *r) {
    for (int32_t w = 0; w < r->n_walks; w++) {
        agent_walk *k = &r->walk[w];
        dp_sim_delta_free(k->d);
        free(k->path), free(k->mv_op), free(k->mv_dev), free(k->devs), free(k->place);
    }
    free(r->walk), free(r->kept_choice);
    elements_free(&r->upd), elements_free(&r->kept);
    memset(r, 0, sizeof *r);
}

double agent_walk_score(const agent_result *r) {
    return dp_sim_score_parts(r->step_time_s, r->valid, r->overflow > 0, r->overflow);
}

dp_status agent_walks_init(dp_agent *a, dp_error *err) {
    agent_walks *r = &a->walks;
    const dp_sim *sim = agent_eval_sim(a->eval);
    if (!sim || a->eo.measure_cmd || a->eo.sim.noise_sigma > 0)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "agent: elite-moves = %d walks over moves the simulator judges without noise; it cannot be "
                            "used with a measuring command or --noise (use --set elite-moves=0)",
                            (int)a->cfg.walks.moves);
    size_t N = (size_t)a->N, T = (size_t)a->T;
    int32_t W = a->cfg.walks.walks + (a->cfg.walks.keep != 0);
    r->walk = calloc((size_t)W, sizeof(agent_walk));
    if (!r->walk || !elements_alloc(&r->upd, N, T)) goto nomem;
    if (a->cfg.walks.keep && (!elements_alloc(&r->kept, N, T) || !(r->kept_choice = malloc(N * sizeof(int32_t)))))
        goto nomem;
    r->n_walks = W;
    for (int32_t w = 0; w < W; w++) {
        agent_walk *k = &r->walk[w];
        k->from = AGENT_WALK_FROM_NONE;
        k->el = &r->upd;
        k->mv_op = malloc(N * sizeof(int32_t));
        k->mv_dev = malloc(N * sizeof(int32_t));
        k->devs = malloc(T * sizeof(int32_t));
        k->place = malloc(N * sizeof(int32_t));
        if (!k->mv_op || !k->mv_dev || !k->devs || !k->place) goto nomem;
        if (!(k->d = dp_sim_delta_init(sim, err))) return err->status;
    }
    return DP_STATUS_OK;
nomem:
    return dp_error_set(err, DP_STATUS_NOMEM, "agent: out of memory for the elite walks");
}

/* The element of op i under el's choice (the element of its unit's lowest op). */
static int32_t element_of(const dp_agent *a, const agent_elements *el, int32_t i) {
    return el->choice[a->unit_first[a->units.unit_of[i]]];
}

/* r's ops of each element under r->choice (set by the caller; CSR in
 * at/ops; an op follows the element of its unit's lowest op, as
 * agent_expand places it) and the elements holding ops (n_nonempty). */
static void walk_elements(const dp_agent *a, agent_elements *r) {
    int32_t N = a->N, T = a->T, n = 0;
    memset(r->at, 0, sizeof(int32_t) * ((size_t)T + 1));
    for (int32_t i = 0; i < N; i++) r->at[element_of(a, r, i) + 1]++;
    for (int32_t t = 0; t < T; t++) {
        if (r->at[t + 1] > 0) r->nonempty[n++] = t;
        r->at[t + 1] += r->at[t];
    }
    for (int32_t i = 0; i < N; i++) r->ops[r->at[element_of(a, r, i)]++] = i;
    for (int32_t t = T; t > 0; t--) r->at[t] = r->at[t - 1]; /* back to the starts */
    r->at[0] = 0;
    r->n_nonempty = n;
}

/* The ops of element t that change device in walk k when t goes to device
 * d (each to d, or its unit's first allowed device) appended to k's
 * mv_op/mv_dev after the first n; returns the new count. */
static int32_t walk_move(const dp_agent *a, agent_walk *k, int32_t t, int32_t d, int32_t n) {
    const agent_elements *r = k->el;
    for (int32_t e = r->at[t]; e < r->at[t + 1]; e++) {
        int32_t i = r->ops[e];
        dp_mask m = a->unit_mask[a->units.unit_of[i]];
        int32_t to = m & dp_mask_bit(d) ? d : dp_mask_first(m);
        if (to != k->place[i]) k->mv_op[n] = i, k->mv_dev[n++] = to;
    }
    return n;
}

/* The element that grows walk k's move of chain[0..n_chain) to device d
 * (its n moved ops in mv_op): a moved op at random, then an op it reads
 * from or feeds; its element when that is not on d and not in the chain
 * (up to 8 draws); -1 when none was found. */
static int32_t chain_next(const dp_agent *a, agent_walk *k, int32_t n, int32_t d, const int32_t *chain,
                          int32_t n_chain) {
    for (int32_t draw = 0; draw < 8 && n > 0; draw++) {
        int32_t j = dp_graph_neighbour(a->g, k->mv_op[dp_rng_below(&k->rng, (uint64_t)n)], &k->rng);
        if (j < 0) continue;
        int32_t e = element_of(a, k->el, j), seen = k->devs[e] == d;
        for (int32_t c = 0; c < n_chain && !seen; c++) seen = chain[c] == e;
        if (!seen) return e;
    }
    return -1;
}

/* A neighbour's device for element t in walk k: an op of t at random, then
 * one of the ops it reads from or feeds at random; -1 when that op has none
 * or is on the element's device already. */
static int32_t walk_near(const dp_agent *a, agent_walk *k, int32_t t) {
    const agent_elements *r = k->el;
    int32_t i = r->ops[r->at[t] + (int32_t)dp_rng_below(&k->rng, (uint64_t)(r->at[t + 1] - r->at[t]))];
    int32_t j = dp_graph_neighbour(a->g, i, &k->rng);
    return j < 0 || k->place[j] == k->devs[t] ? -1 : k->place[j];
}

/* A move read off walk k's critical path (the base's, simulated again with
 * a trace after each kept move), as the search reads one: a transfer on it
 * (chosen by its duration) suggests the op that waited for it to the
 * producer's device or the producer to the consumer's (dp_sim_path_hop_move);
 * without a transfer, an op of the path (chosen by its duration; *d = -1: to
 * another device at random). Sets *t (the op's element) and *d; returns 0
 * when there is none or the element is there already, -1 with err. */
static int walk_critical(const dp_agent *a, agent_walk *k, int32_t *t, int32_t *d, dp_error *err) {
    if (!k->path_ok) {
        if (dp_sim_delta_critical_path_grow(k->d, &k->path, &k->path_cap, &k->path_n, err)) return -1;
        k->path_ok = 1;
    }
    int32_t hop = dp_sim_path_pick(k->path, k->path_n, 1, -1, &k->rng);
    if (hop < 0) {
        int32_t i = dp_sim_path_pick(k->path, k->path_n, 0, -1, &k->rng);
        if (i < 0) return 0;
        *t = element_of(a, k->el, k->path[i].op), *d = -1;
        return 1;
    }
    int32_t op;
    dp_sim_path_hop_move(k->path, k->path_n, hop, k->place, &k->rng, &op, d);
    *t = element_of(a, k->el, op);
    return *d != k->devs[*t];
}

/* Walk k from its start (devs, place set): cfg.walks.moves moves, each kept
 * when the score does not rise (a slower one first grown by up to
 * cfg.walks.chain neighbouring elements, one simulation each); the end's
 * evaluation in k->res. */
static dp_status walk_run(const dp_agent *a, agent_walk *k, dp_error *err) {
    const agent_elements *r = k->el;
    int32_t D = a->D, n_el = r->n_nonempty;
    dp_sim_result sr;
    dp_status st = dp_sim_delta_set_base(k->d, k->place, &sr, err);
    if (st) return st;
    agent_result cur;
    agent_result_from_sim(&sr, &cur);
    double cur_score = dp_sim_score(&sr);
    k->path_ok = 0;
    for (int32_t m = 0; m < a->cfg.walks.moves && n_el > 0 && D > 1; m++) {
        int32_t t = -1, d = -1;
        if (a->cfg.walks.critical > 0 && dp_rng_uniform(&k->rng) < a->cfg.walks.critical) {
            int got = walk_critical(a, k, &t, &d, err);
            if (got < 0) return err->status;
            if (!got) continue;
        } else {
            t = r->nonempty[dp_rng_below(&k->rng, (uint64_t)n_el)];
            if (a->cfg.walks.near > 0 && dp_rng_uniform(&k->rng) < a->cfg.walks.near) d = walk_near(a, k, t);
        }
        if (d < 0) { /* another device at random */
            d = (int32_t)dp_rng_below(&k->rng, (uint64_t)(D - 1));
            if (d >= k->devs[t]) d++;
        }
        /* the move of chain[0..n_chain) to d, grown while slower (elite-chain) */
        int32_t chain[1 + DP_AGENT_CHAIN_MAX], n_chain = 1, n = walk_move(a, k, t, d, 0);
        chain[0] = t;
        agent_result res;
        double s = INFINITY;
        for (;;) {
            if (n == 0 || dp_sim_delta_surely_oom(k->d, n, k->mv_op, k->mv_dev)) break;
            if ((st = dp_sim_delta_try(k->d, n, k->mv_op, k->mv_dev, &sr, err))) return st;
            k->sims++;
            agent_result_from_sim(&sr, &res);
            s = dp_sim_score(&sr);
            if (s <= cur_score || n_chain > a->cfg.walks.chain) break;
            int32_t e = chain_next(a, k, n, d, chain, n_chain);
            if (e < 0) break;
            chain[n_chain++] = e, n = walk_move(a, k, e, d, n);
        }
        if (!(s <= cur_score)) continue;
        if ((st = dp_sim_delta_accept(k->d, err))) return st;
        cur = res, cur_score = s, k->path_ok = 0, k->chained += n_chain > 1;
        for (int32_t c = 0; c < n_chain; c++) k->devs[chain[c]] = d;
        for (int32_t e = 0; e < n; e++) k->place[k->mv_op[e]] = k->mv_dev[e];
    }
    k->res = cur;
    return DP_STATUS_OK;
}

/* The walks' starts: walk w from the sample of the w-th least score among
 * those with a finite one (distinct samples; fewer walks when fewer have
 * one); returns how many walks start. */
static int32_t walk_starts(dp_agent *a) {
    agent_walks *r = &a->walks;
    int32_t n = 0;
    for (int32_t w = 0; w < a->cfg.walks.walks; w++) {
        int32_t best = -1;
        double bs = INFINITY;
        for (int32_t k = 0; k < a->K; k++) {
            double s = agent_walk_score(&a->res[k]);
            int taken = 0;
            for (int32_t v = 0; v < n; v++) taken |= r->walk[v].from == k;
            if (!taken && s < bs) bs = s, best = k;
        }
        if (best < 0) break;
        r->walk[n++].from = best;
    }
    return n;
}

typedef struct walk_job {
    const dp_agent *a;
    int32_t first, step, n; /* walks first, first + step, ... below n */
    dp_status st;
    dp_error err;
} walk_job;

static void *walk_thread(void *arg) {
    walk_job *j = arg;
    agent_walk *walk = j->a->walks.walk;
    for (int32_t w = j->first; w < j->n && !j->st; w += j->step) j->st = walk_run(j->a, &walk[w], &j->err);
    return NULL;
}

dp_status agent_walks_run(dp_agent *a, dp_error *err) {
    agent_walks *r = &a->walks;
    for (int32_t w = 0; w < r->n_walks; w++)
        r->walk[w].from = AGENT_WALK_FROM_NONE, r->walk[w].sims = 0, r->walk[w].chained = 0;
    if (a->cfg.walks.moves <= 0) return DP_STATUS_OK;
    int32_t n = walk_starts(a), T = a->T;
    if (n == 0) return DP_STATUS_OK;
    r->upd.choice = a->enc->choice;
    walk_elements(a, &r->upd);
    for (int32_t w = 0; w < n; w++) { /* starts and generators, in walk order */
        agent_walk *k = &r->walk[w];
        k->el = &r->upd;
        memcpy(k->devs, a->devs + (int64_t)k->from * T, sizeof(int32_t) * (size_t)T);
        memcpy(k->place, a->place + (int64_t)k->from * a->N, sizeof(int32_t) * (size_t)a->N);
        dp_rng_seed(&k->rng, dp_rng_next_u64(&a->rng));
    }
    if (a->cfg.walks.keep && a->elites.n > 0) { /* one more: from the best elite, under its grouping */
        agent_walk *k = &r->walk[n++]; /* after the samples' walks (n <= elite_walks < n_walks) */
        const int32_t *choice = a->elites.choice ? a->elites.choice : a->enc->choice;
        memcpy(r->kept_choice, choice, sizeof(int32_t) * (size_t)a->N);
        r->kept.choice = r->kept_choice;
        walk_elements(a, &r->kept);
        k->el = &r->kept;
        k->from = AGENT_WALK_FROM_ELITE;
        memcpy(k->devs, a->elites.devs, sizeof(int32_t) * (size_t)T);
        agent_expand(a, r->kept_choice, k->devs, k->place);
        dp_rng_seed(&k->rng, dp_rng_next_u64(&a->rng));
    }
    int32_t nt = a->eo.threads < 1 ? 1 : a->eo.threads < n ? a->eo.threads : n;
    walk_job jobs[nt];
    for (int32_t t = 0; t < nt; t++) jobs[t] = (walk_job){a, t, nt, n, DP_STATUS_OK, {0}};
    dp_run_jobs(walk_thread, jobs, sizeof jobs[0], nt);
    for (int32_t t = 0; t < nt; t++)
        if (jobs[t].st) {
            *err = jobs[t].err;
            return jobs[t].st;
        }
    return DP_STATUS_OK;
}
