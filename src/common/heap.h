/* One binary min-heap for the modules that schedule by time: the simulator's
 * event queue, the list placers' ready lists and the graph's keyed
 * topological order. Internal (inlined: the simulator pushes and pops one
 * event per op and per transfer hop).
 *
 * An entry is (key, tie, payload): a double key, a 32-bit tie-break and a
 * 32-bit payload, ordered by key, then tie, then payload (as a signed
 * number). dp_heap_push takes the tie from the heap's insertion counter, so
 * entries with equal keys come out in the order they went in, as libuv's
 * timer heap orders its timers; dp_heap_push_tie takes the caller's tie
 * instead (a secondary priority). The three fields are packed into one
 * signed 128-bit integer, the key's bits mapped so that they order like the
 * numbers (unchanged for a key >= 0), so comparing two entries is one
 * integer comparison. dp_heap_push_nonneg and dp_heap_entry_key_nonneg are
 * the same for keys known to be >= 0 (times), with less work.
 *
 * Keys must not be NaN; -0.0 counts as +0.0. Capacity grows on demand
 * (dp_heap_init may reserve it up front, after which pushes never allocate).
 * Relies on GCC/Clang's __int128 and arithmetic right shifts. */
#ifndef DPLACE_HEAP_H
#define DPLACE_HEAP_H

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/common.h"

typedef __int128 dp_heap_entry; /* key bits (high half, signed), tie, payload */

typedef struct dp_heap {
    dp_heap_entry *a; /* [cap], a[0] the least                 */
    int64_t n, cap;
    uint64_t seq;     /* the tie of the next dp_heap_push      */
} dp_heap;

/* A key's bits as a signed 64-bit number that orders as the keys do: a
 * non-negative key's bits as they are, a negative key's with all but the
 * sign bit flipped (so more negative is smaller). Its own inverse. */
static inline int64_t dp_heap_key_order(int64_t b) { return b ^ (int64_t)((uint64_t)(b >> 63) >> 1); }

/* The entry's key, tie and payload. */
static inline double dp_heap_entry_key(dp_heap_entry e) {
    int64_t b = dp_heap_key_order((int64_t)(e >> 64));
    double key;
    memcpy(&key, &b, sizeof key);
    return key;
}
static inline uint32_t dp_heap_entry_tie(dp_heap_entry e) { return (uint32_t)((uint64_t)e >> 32); }
static inline int32_t dp_heap_entry_payload(dp_heap_entry e) { return (int32_t)((uint32_t)e ^ 0x80000000u); }

/* The key of an entry pushed by dp_heap_push_nonneg: its bits as they are. */
static inline double dp_heap_entry_key_nonneg(dp_heap_entry e) {
    int64_t b = (int64_t)(e >> 64);
    assert(b >= 0);
    double key;
    memcpy(&key, &b, sizeof key);
    return key;
}

/* An empty heap with room for cap entries (cap >= 0) and the counter at 0;
 * DP_STATUS_NOMEM (nothing held) when the room cannot be had. */
static inline dp_status dp_heap_init(dp_heap *h, int64_t cap, dp_error *err) {
    memset(h, 0, sizeof *h);
    if (cap > 0 && dp_reserve((void **)&h->a, &h->cap, cap, sizeof(dp_heap_entry)))
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (a heap of %lld entries)", (long long)cap);
    return DP_STATUS_OK;
}

/* Frees the entries (not h); h is left empty and usable. */
static inline void dp_heap_free(dp_heap *h) {
    free(h->a);
    memset(h, 0, sizeof *h);
}

/* Empties h and restarts its insertion counter; keeps the room. */
static inline void dp_heap_clear(dp_heap *h) {
    h->n = 0;
    h->seq = 0;
}

/* Adds entry e (already packed). Returns 0, or -1 (h unchanged) when out
 * of memory growing. */
static inline int dp_heap_push_entry(dp_heap *h, dp_heap_entry e) {
    if (h->n == h->cap && dp_reserve((void **)&h->a, &h->cap, h->n + 1, sizeof(dp_heap_entry))) return -1;
    dp_heap_entry *a = h->a;
    int64_t i = h->n++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (a[p] <= e) break;
        a[i] = a[p];
        i = p;
    }
    a[i] = e;
    return 0;
}

/* Packs key bits already in order (dp_heap_key_order), tie and payload. */
static inline dp_heap_entry dp_heap_pack(int64_t order, uint32_t tie, int32_t payload) {
    return (dp_heap_entry)(((unsigned __int128)(uint64_t)order << 64) | ((uint64_t)tie << 32) |
                           ((uint32_t)payload ^ 0x80000000u));
}

/* Adds (key, tie, payload). Returns 0, or -1 (h unchanged) when out of
 * memory growing. */
static inline int dp_heap_push_tie(dp_heap *h, double key, uint32_t tie, int32_t payload) {
    assert(key == key); /* not NaN */
    key += 0.0;         /* -0.0 becomes +0.0 */
    int64_t b;
    memcpy(&b, &key, sizeof b);
    return dp_heap_push_entry(h, dp_heap_pack(dp_heap_key_order(b), tie, payload));
}

/* Adds (key, insertion counter, payload): equal keys leave in the order they
 * came. At most 2^32 pushes between clears. Returns 0, or -1 when out of
 * memory growing (the entries unchanged; the counter moves on regardless). */
static inline int dp_heap_push(dp_heap *h, double key, int32_t payload) {
    assert(h->seq < (1ULL << 32));
    return dp_heap_push_tie(h, key, (uint32_t)h->seq++, payload);
}

/* dp_heap_push for a key known to be >= 0 (a time, say): the same entry,
 * made with less work (the simulator pushes one per op and per hop). */
static inline int dp_heap_push_nonneg(dp_heap *h, double key, int32_t payload) {
    assert(key >= 0 && h->seq < (1ULL << 32)); /* not NaN, not negative */
    int64_t b;
    memcpy(&b, &key, sizeof b);
    b &= INT64_MAX; /* -0.0 becomes +0.0; a key >= 0 orders as its bits */
    return dp_heap_push_entry(h, dp_heap_pack(b, (uint32_t)h->seq++, payload));
}

/* The least entry of a non-empty heap, left in place. */
static inline dp_heap_entry dp_heap_top(const dp_heap *h) {
    assert(h->n > 0);
    return h->a[0];
}

/* Removes and returns the least entry of a non-empty heap. */
static inline dp_heap_entry dp_heap_pop(dp_heap *h) {
    assert(h->n > 0);
    dp_heap_entry *a = h->a;
    dp_heap_entry top = a[0], last = a[--h->n];
    int64_t i = 0, n = h->n;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && a[c + 1] < a[c]) c++;
        if (last <= a[c]) break;
        a[i] = a[c];
        i = c;
    }
    if (n) a[i] = last;
    return top;
}

#endif
