/* One union-find over int32 indices for the modules that join groups of
 * ops: the groupers and the placers' anchor joining (src/place), the
 * agent's scope grouper (src/agent). Internal, inlined. parent[x] == x at a
 * root; sets are joined under the lower root, so the result does not depend
 * on the order of the joins' arguments. */
#ifndef DPLACE_UF_H
#define DPLACE_UF_H

#include <stdint.h>

/* Root of x's set, halving the path on the way. */
static inline int32_t dp_uf_find(int32_t *parent, int32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* Joins the sets of a and b under the lower of their roots; returns it. */
static inline int32_t dp_uf_join(int32_t *parent, int32_t a, int32_t b) {
    a = dp_uf_find(parent, a), b = dp_uf_find(parent, b);
    if (a > b) {
        int32_t t = a;
        a = b, b = t;
    }
    parent[b] = a;
    return a;
}

/* Replaces each group[i] (i < n) by a dense id of its set, numbered in the
 * order of first appearance; id [sets] must hold -1 on entry. Returns the
 * number of sets. */
static inline int32_t dp_uf_relabel(int32_t *parent, int32_t *group, int32_t n, int32_t *id) {
    int32_t next = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t r = dp_uf_find(parent, group[i]);
        if (id[r] < 0) id[r] = next++;
        group[i] = id[r];
    }
    return next;
}

#endif
