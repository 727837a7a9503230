/* The search's moves (docs/search.md, "Moves"): a unit to another device,
 * two units swapped, and moves read off the current placement's critical
 * path. Each fills the chain's mv_op/mv_dev with the ops that change. */
#include <math.h>
#include <stdlib.h>

#include "search/search_internal.h"

/* A level at random: finer levels more often (weights by kind). */
static const search_level *pick_level(const dp_search *s, dp_rng *r, const double *w) {
    double total = 0;
    for (int32_t k = 0; k < s->n_levels; k++) total += w[s->level_kind[k]];
    double x = dp_rng_uniform(r) * total;
    for (int32_t k = 0; k < s->n_levels; k++) {
        x -= w[s->level_kind[k]];
        if (x < 0) return &s->level[k];
    }
    return &s->level[s->n_levels - 1];
}

/* Level weights by kind: op, chain, scope, parent, typed. */
static const double random_w[] = {0.5, 0.5, 2, 3, 2};
static const double critical_w[] = {3, 3, 2, 1, 2};
_Static_assert(sizeof random_w / sizeof random_w[0] == SEARCH_LEVEL_COUNT, "a random-move weight per level kind");
_Static_assert(sizeof critical_w / sizeof critical_w[0] == SEARCH_LEVEL_COUNT, "a critical-move weight per kind");

/* A device of mask at random; -1 when the mask is empty. */
static int32_t pick_device(dp_rng *r, dp_mask m) {
    int32_t n = dp_mask_count(m);
    if (n == 0) return -1;
    int32_t k = (int32_t)dp_rng_below(r, (uint64_t)n);
    for (; k > 0; k--) m &= m - 1;
    return dp_mask_first(m);
}

/* Where unit k stands: the device of its first member. */
static int32_t unit_device(const search_level *L, int32_t k, const int32_t *base) {
    return base[L->u.members[L->u.first[k]]];
}

/* Appends to the move the members of unit k not already on dev. */
static int32_t add_unit(search_chain *c, const search_level *L, int32_t k, int32_t dev, const int32_t *base,
                        int32_t n) {
    for (int32_t j = L->u.first[k]; j < L->u.first[k + 1]; j++) {
        int32_t op = L->u.members[j];
        if (base[op] != dev) c->mv_op[n] = op, c->mv_dev[n] = dev, n++;
    }
    return n;
}

/* A unit at random to another device it allows. */
static int32_t random_move(dp_search *s, search_chain *c, const int32_t *base) {
    const search_level *L = pick_level(s, &c->rng, random_w);
    if (L->u.n_units == 0) return 0;
    int32_t k = (int32_t)dp_rng_below(&c->rng, (uint64_t)L->u.n_units);
    if (L->u.first[k] == L->u.first[k + 1]) return 0;
    int32_t dev = pick_device(&c->rng, L->mask[k] & ~dp_mask_bit(unit_device(L, k, base)));
    return dev < 0 ? 0 : add_unit(c, L, k, dev, base, 0);
}

/* A unit to the device of a neighbour: the producer of an input, or a
 * consumer of an output, of one of its members (a fragment joins what it
 * talks to). */
static int32_t neighbour_move(dp_search *s, search_chain *c, const int32_t *base) {
    const search_level *L = pick_level(s, &c->rng, random_w);
    if (L->u.n_units == 0) return 0;
    int32_t k = (int32_t)dp_rng_below(&c->rng, (uint64_t)L->u.n_units);
    int32_t size = L->u.first[k + 1] - L->u.first[k];
    if (size == 0) return 0;
    int32_t op = L->u.members[L->u.first[k] + (int32_t)dp_rng_below(&c->rng, (uint64_t)size)];
    int32_t other = dp_graph_neighbour(s->g, op, &c->rng);
    if (other < 0) return 0;
    int32_t dev = base[other];
    if (dev == unit_device(L, k, base) || !(L->mask[k] & dp_mask_bit(dev))) return 0;
    return add_unit(c, L, k, dev, base, 0);
}

/* Two units on different devices, each allowed on the other's, swapped. */
static int32_t swap_move(dp_search *s, search_chain *c, const int32_t *base) {
    const search_level *L = pick_level(s, &c->rng, random_w);
    int32_t nu = L->u.n_units;
    if (nu < 2) return 0;
    int32_t a = (int32_t)dp_rng_below(&c->rng, (uint64_t)nu);
    if (L->u.first[a] == L->u.first[a + 1]) return 0;
    int32_t da = unit_device(L, a, base);
    for (int tries = 0; tries < 8; tries++) {
        int32_t b = (int32_t)dp_rng_below(&c->rng, (uint64_t)nu);
        if (L->u.first[b] == L->u.first[b + 1]) continue;
        int32_t db = unit_device(L, b, base);
        if (db == da || !(L->mask[a] & dp_mask_bit(db)) || !(L->mask[b] & dp_mask_bit(da))) continue;
        int32_t n = add_unit(c, L, a, db, base, 0);
        return add_unit(c, L, b, da, base, n);
    }
    return 0;
}

/* The device with the most busy seconds in c's current placement, and the
 * one with the fewest among mask. */
static int32_t busiest_device(const search_chain *c, dp_mask among, int32_t *least) {
    const dp_sim_result *r = dp_sim_delta_base_result(c->d);
    int32_t busiest = 0;
    *least = -1;
    for (int32_t d = 0; d < r->n_devices; d++) {
        if (r->device[d].busy_s > r->device[busiest].busy_s) busiest = d;
        if ((among & dp_mask_bit(d)) && (*least < 0 || r->device[d].busy_s < r->device[*least].busy_s)) *least = d;
    }
    return busiest;
}

/* A unit on the busiest device (found by sampling ops) to the least busy
 * device it allows, or half the time to another at random. */
static int32_t balance_move(dp_search *s, search_chain *c, const int32_t *base) {
    int32_t least, busiest = busiest_device(c, 0, &least), op = -1;
    for (int tries = 0; tries < 32 && op < 0; tries++) {
        int32_t i = (int32_t)dp_rng_below(&c->rng, (uint64_t)s->n);
        if (base[i] == busiest) op = i;
    }
    if (op < 0) return 0;
    const search_level *L = pick_level(s, &c->rng, random_w);
    int32_t k = L->u.unit_of[op];
    dp_mask m = L->mask[k] & ~dp_mask_bit(unit_device(L, k, base));
    if (!m) return 0;
    busiest_device(c, m, &least);
    int32_t dev = dp_rng_uniform(&c->rng) < 0.5 ? least : pick_device(&c->rng, m);
    return add_unit(c, L, k, dev, base, 0);
}

/* Makes sure c->path holds the critical path of c's current placement. */
static dp_status ensure_path(search_chain *c, dp_error *err) {
    if (c->path_ok) return DP_STATUS_OK;
    int32_t n = 0;
    dp_status st = dp_sim_delta_critical_path_grow(c->d, &c->path, &c->path_cap, &n, err);
    if (st) return st;
    c->path_n = n, c->path_ok = 1;
    return DP_STATUS_OK;
}

/* A transfer on the path: the op that waited for it to its producer's
 * device, or the producer to the consumer's (dp_sim_path_hop_move). */
static int32_t transfer_move(dp_search *s, search_chain *c, const int32_t *base, int32_t hop) {
    const search_level *L = pick_level(s, &c->rng, critical_w);
    int32_t op, dev;
    dp_sim_path_hop_move(c->path, c->path_n, hop, base, &c->rng, &op, &dev);
    int32_t k = L->u.unit_of[op];
    if (dev == unit_device(L, k, base) || !(L->mask[k] & dp_mask_bit(dev))) return 0;
    return add_unit(c, L, k, dev, base, 0);
}

/* An op of the path on the busiest device (chosen by its duration) to the
 * least busy device its unit allows, or half the time to another at
 * random. */
static int32_t busiest_move(dp_search *s, search_chain *c, const int32_t *base) {
    int32_t least, busiest = busiest_device(c, 0, &least);
    int32_t i = dp_sim_path_pick(c->path, c->path_n, 0, busiest, &c->rng);
    if (i < 0) i = dp_sim_path_pick(c->path, c->path_n, 0, -1, &c->rng);
    if (i < 0) return 0;
    int32_t op = c->path[i].op;
    const search_level *L = pick_level(s, &c->rng, critical_w);
    int32_t k = L->u.unit_of[op];
    dp_mask m = L->mask[k] & ~dp_mask_bit(unit_device(L, k, base));
    if (!m) return 0;
    busiest_device(c, m, &least);
    int32_t dev = dp_rng_uniform(&c->rng) < 0.5 ? least : pick_device(&c->rng, m);
    return add_unit(c, L, k, dev, base, 0);
}

/* A move read off the critical path: a transfer on it (chosen by its
 * duration; when there is one, mostly), else an op of it off the busiest
 * device. */
static int32_t critical_move(dp_search *s, search_chain *c, const int32_t *base) {
    if ((c->st = ensure_path(c, &c->err)) || c->path_n == 0) return 0;
    int32_t hop = dp_rng_uniform(&c->rng) < 0.5 ? dp_sim_path_pick(c->path, c->path_n, 1, -1, &c->rng) : -1;
    if (hop >= 0) return transfer_move(s, c, base, hop);
    return busiest_move(s, c, base);
}

int32_t search_propose(dp_search *s, search_chain *c, int *critical) {
    const int32_t *base = dp_sim_delta_base(c->d);
    double x = dp_rng_uniform(&c->rng);
    *critical = x < s->opt.critical;
    if (*critical) return critical_move(s, c, base);
    double y = dp_rng_uniform(&c->rng), rest = 1 - s->opt.swap;
    if (y < s->opt.swap) return swap_move(s, c, base);
    if (y < s->opt.swap + rest * 0.35) return neighbour_move(s, c, base);
    if (y < s->opt.swap + rest * 0.6) return balance_move(s, c, base);
    return random_move(s, c, base);
}
