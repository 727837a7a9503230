/* The search's units (docs/search.md, "Units"): TensorFlow's colocation
 * units, chains of single-consumer ops (the colocation grouper's rule),
 * layer scopes (an op's forward scope: its forward and gradient ops
 * together), their parent scopes, and a parent scope's ops of one phase and
 * type (a block's weight-gradient convolutions); or, placing the modules of
 * a PyTorch export (opt.units MODULE), the modules, their parents and
 * grandparents; each with the devices its members allow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/group.h"
#include "search/search_internal.h"

/* The root of x in the union-find forest par (path halving). */
static int32_t uf_find(int32_t *par, int32_t x) {
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

/* Joins the sets of a and b (the smaller root becomes the root). */
static void uf_union(int32_t *par, int32_t a, int32_t b) {
    a = uf_find(par, a), b = uf_find(par, b);
    if (a == b) return;
    if (a < b) par[b] = a;
    else par[a] = b;
}

/* The key of op at a scope level (kind SCOPE, PARENT or TYPED): its devices
 * and its forward scope, cut to its parent above SCOPE (a top-level scope
 * stays whole), and for TYPED its phase (forward, gradient or clipping: how
 * much of its scope dp_graph_forward_scope cut) and its type; 0 when the op
 * has no scope (it stays alone). */
static int scope_key(const dp_search *s, int32_t op, search_level_kind kind, char *buf, size_t size) {
    const dp_op *o = &s->g->ops[op];
    if (o->scope < 0) return 0;
    const char *raw = dp_graph_str(s->g, o->scope), *fs = dp_graph_forward_scope(raw);
    size_t len = strlen(fs);
    if (kind != SEARCH_LEVEL_SCOPE) { /* a top-level scope is its own parent */
        const char *slash = strrchr(fs, '/');
        if (slash) len = (size_t)(slash - fs);
    }
    if (len == 0) return 0;
    if (kind == SEARCH_LEVEL_TYPED)
        snprintf(buf, size, "%llx|%.*s|%d|%d", (unsigned long long)s->op_mask[op], (int)len, fs, (int)(fs - raw),
                 (int)o->type);
    else
        snprintf(buf, size, "%llx|%.*s", (unsigned long long)s->op_mask[op], (int)len, fs);
    return 1;
}

/* The scope grouping: ops of one key together, colocation groups kept whole.
 * Fills group[n] (dense ids) and *n_groups. */
static dp_status scope_groups(const dp_search *s, search_level_kind kind, int32_t *group, int32_t *n_groups,
                              dp_error *err) {
    int32_t n = s->n, *par = malloc(sizeof(int32_t) * (size_t)n), *first = NULL, *coloc_first = NULL;
    int64_t cap = 0;
    dp_strtab *keys = dp_strtab_init();
    coloc_first = malloc(sizeof(int32_t) * (size_t)(s->g->n_colocate + 1));
    dp_status st = DP_STATUS_OK;
    if (!par || !keys || !coloc_first) st = dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for units");
    for (int32_t i = 0; !st && i < s->g->n_colocate; i++) coloc_first[i] = -1;
    for (int32_t i = 0; !st && i < n; i++) par[i] = i;
    char buf[DP_GRAPH_NAME_MAX + 32];
    for (int32_t i = 0; !st && i < n; i++) {
        int32_t cg = s->g->coloc_group[i];
        if (cg >= 0 && coloc_first[cg] < 0) coloc_first[cg] = i;
        if (cg >= 0) uf_union(par, i, coloc_first[cg]);
        if (!scope_key(s, i, kind, buf, sizeof buf)) continue;
        int64_t known = keys->n;
        int32_t id = dp_strtab_intern(keys, buf);
        if (id < 0 || dp_reserve((void **)&first, &cap, (int64_t)id + 1, sizeof(int32_t))) {
            st = dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for units");
            break;
        }
        if (id >= known) first[id] = i; /* a new key: its first op */
        else uf_union(par, i, first[id]);
    }
    int32_t ng = 0;
    for (int32_t i = 0; !st && i < n; i++) group[i] = -1;
    for (int32_t i = 0; !st && i < n; i++) {
        int32_t r = uf_find(par, i);
        if (group[r] < 0) group[r] = ng++;
        group[i] = group[r];
    }
    *n_groups = ng;
    free(par), free(first), free(coloc_first);
    dp_strtab_free(keys);
    return st;
}

/* Adds a level of the units of grouping group[n] (n_groups) as kind, unless
 * it has as many units as the level before it or its units cannot be
 * placed. */
static dp_status add_level(dp_search *s, search_level_kind kind, const int32_t *group, int32_t n_groups,
                           dp_error *err) {
    if (s->n_levels > 0 && s->level[s->n_levels - 1].u.n_units == n_groups) return DP_STATUS_OK;
    search_level *L = &s->level[s->n_levels];
    memset(L, 0, sizeof *L);
    dp_status st = group ? dp_units_init_from_groups(&L->u, group, s->n, n_groups, err) : dp_units_init(&L->u, s->g, err);
    if (st) return st;
    if (s->n_levels > 0 && s->level[s->n_levels - 1].u.n_units == L->u.n_units) {
        dp_units_free(&L->u);
        return DP_STATUS_OK;
    }
    if (!(L->mask = malloc(sizeof(dp_mask) * (size_t)(L->u.n_units + 1)))) {
        dp_units_free(&L->u);
        return dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for units");
    }
    dp_error e2;
    if (dp_units_masks(&L->u, s->g, s->ds, dp_mask_all(s->ds), L->mask, &e2)) { /* members that cannot share a device */
        dp_units_free(&L->u);
        free(L->mask);
        L->mask = NULL;
        return kind == SEARCH_LEVEL_OP ? dp_error_set(err, e2.status, "%s", e2.msg) : DP_STATUS_OK;
    }
    s->level_kind[s->n_levels++] = kind;
    return DP_STATUS_OK;
}

/* The module levels' grouping `up` levels above the modules of the spec
 * (0: the modules, dp_units_init_spec's; 1: their parents; a top-level
 * module stays whole): ops of one path together, and the ops of each of
 * the finest level's units (level 0, already built) too. Fills group [n]
 * and *n_groups. */
static dp_status module_up_groups(const dp_search *s, int32_t up, int32_t *group, int32_t *n_groups, dp_error *err) {
    int32_t n = s->n, *par = malloc(sizeof(int32_t) * ((size_t)n + 1)), *first = malloc(sizeof(int32_t) * ((size_t)n + 1));
    dp_strtab *keys = dp_strtab_init();
    dp_status st = !par || !first || !keys ? dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for units")
                                           : DP_STATUS_OK;
    char buf[DP_GRAPH_NAME_MAX + 1];
    for (int32_t i = 0; !st && i < n; i++) par[i] = i, group[i] = -1;
    for (int32_t i = 0; !st && i < n; i++) {
        dp_units_module_path(s->g, i, s->opt.units.depth, buf, sizeof buf);
        for (int32_t k = 0; k < up; k++) {
            char *dot = strrchr(buf, '.');
            if (dot) *dot = '\0';
        }
        int64_t known = keys->n;
        int32_t id = dp_strtab_intern(keys, buf);
        if (id < 0) {
            st = dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for units");
            break;
        }
        if (id >= known) first[id] = i;
        else uf_union(par, i, first[id]);
        const dp_units *u0 = &s->level[0].u; /* a finest unit stays whole */
        uf_union(par, i, u0->members[u0->first[u0->unit_of[i]]]);
    }
    int32_t ng = 0;
    for (int32_t i = 0; !st && i < n; i++) {
        int32_t r = uf_find(par, i);
        if (group[r] < 0) group[r] = ng++;
        group[i] = group[r];
    }
    *n_groups = ng;
    free(par), free(first);
    dp_strtab_free(keys);
    return st;
}

/* The levels of a search of modules: the modules (kind OP), their parents
 * (SCOPE) and grandparents (PARENT). */
static dp_status module_levels(dp_search *s, int32_t *group, dp_error *err) {
    search_level *L = &s->level[0];
    memset(L, 0, sizeof *L);
    dp_status st = dp_units_init_spec(&L->u, s->g, s->opt.units, err);
    if (st) return st;
    if (!(L->mask = malloc(sizeof(dp_mask) * (size_t)(L->u.n_units + 1)))) {
        dp_units_free(&L->u);
        return dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for units");
    }
    if ((st = dp_units_masks(&L->u, s->g, s->ds, dp_mask_all(s->ds), L->mask, err))) {
        dp_units_free(&L->u);
        free(L->mask);
        L->mask = NULL;
        return st;
    }
    s->level_kind[s->n_levels++] = SEARCH_LEVEL_OP;
    int32_t ng = 0;
    for (int32_t up = 1; up <= 2 && !st; up++)
        if (!(st = module_up_groups(s, up, group, &ng, err)))
            st = add_level(s, up == 1 ? SEARCH_LEVEL_SCOPE : SEARCH_LEVEL_PARENT, group, ng, err);
    return st;
}

dp_status search_units_build(dp_search *s, dp_error *err) {
    int32_t n = s->n, ng = 0;
    if (!(s->op_mask = malloc(sizeof(dp_mask) * (size_t)(n + 1))))
        return dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for units");
    for (int32_t i = 0; i < n; i++) s->op_mask[i] = dp_mask_op(s->g, s->ds, i);
    int32_t *group = malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!group) return dp_error_set(err, DP_STATUS_NOMEM, "search: out of memory for units");
    if (s->opt.units.kind == DP_UNITS_MODULE) {
        dp_status st = module_levels(s, group, err);
        free(group);
        return st;
    }
    dp_status st = add_level(s, SEARCH_LEVEL_OP, NULL, 0, err);
    dp_group_options go = dp_group_options_default();
    go.keep_unconstrained = 1;
    dp_error e2;
    if (!st && !dp_group_run(DP_GROUP_METHOD_COLOCATION, s->g, &go, group, &ng, &e2))
        st = add_level(s, SEARCH_LEVEL_CHAIN, group, ng, err);
    for (search_level_kind k = SEARCH_LEVEL_SCOPE; k <= SEARCH_LEVEL_TYPED && !st; k++)
        if (!(st = scope_groups(s, k, group, &ng, err))) st = add_level(s, k, group, ng, err);
    free(group);
    return st;
}

void search_units_free(dp_search *s) {
    for (int32_t k = 0; k < s->n_levels; k++) {
        dp_units_free(&s->level[k].u);
        free(s->level[k].mask);
    }
    s->n_levels = 0;
    free(s->op_mask);
    s->op_mask = NULL;
}
