/* One binary min-heap for the modules that schedule by time: the simulator's
 * event queue and the list placers' ready lists. Internal (inlined: the
 * simulator pushes and pops one event per op and per transfer hop).
 *
 * An entry is (key, tie, payload): a double key, a 32-bit tie-break and a
 * 32-bit payload, ordered by key, then tie, then payload (as a signed
 * number). dp_heap_push takes the tie from the heap's insertion counter, so
 * entries with equal keys come out in the order they went in, as libuv's
 * timer heap orders its timers; dp_heap_push_tie takes the caller's tie
 * instead (a secondary priority). The three fields are packed into one
 * 128-bit integer, key bits mapped so that they order like the numbers, so
 * comparing two entries is one integer comparison.
 *
 * Keys must not be NaN; -0.0 counts as +0.0. Capacity grows on demand
 * (dp_heap_init may reserve it up front, after which pushes never allocate). */
#ifndef DPLACE_HEAP_H
#define DPLACE_HEAP_H

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/common.h"

typedef unsigned __int128 dp_heap_entry;

typedef struct dp_heap {
    dp_heap_entry *a; /* [cap], a[0] the least                 */
    int64_t n, cap;
    uint64_t seq;     /* the tie of the next dp_heap_push      */
} dp_heap;

/* Maps a key to 64 bits that order as the keys do (negatives flipped whole,
 * non-negatives with their sign bit set). */
static inline uint64_t dp_heap_key_bits(double key) {
    assert(key == key); /* not NaN */
    key += 0.0;         /* -0.0 becomes +0.0 */
    uint64_t b;
    memcpy(&b, &key, sizeof b);
    return b ^ ((uint64_t)-(int64_t)(b >> 63) | (1ULL << 63));
}

/* The entry's key, tie and payload. */
static inline double dp_heap_entry_key(dp_heap_entry e) {
    uint64_t b = (uint64_t)(e >> 64);
    b ^= (b >> 63) ? (1ULL << 63) : ~0ULL;
    double key;
    memcpy(&key, &b, sizeof key);
    return key;
}
static inline uint32_t dp_heap_entry_tie(dp_heap_entry e) { return (uint32_t)((uint64_t)e >> 32); }
static inline int32_t dp_heap_entry_payload(dp_heap_entry e) {
    return (int32_t)((uint32_t)e ^ 0x80000000u);
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

/* Adds (key, tie, payload). Returns 0, or -1 (h unchanged) when out of
 * memory growing. */
static inline int dp_heap_push_tie(dp_heap *h, double key, uint32_t tie, int32_t payload) {
    if (h->n == h->cap && dp_reserve((void **)&h->a, &h->cap, h->n + 1, sizeof(dp_heap_entry))) return -1;
    dp_heap_entry e = ((dp_heap_entry)dp_heap_key_bits(key) << 64) | ((uint64_t)tie << 32) |
                      ((uint32_t)payload ^ 0x80000000u);
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

/* Adds (key, insertion counter, payload): equal keys leave in the order they
 * came. At most 2^32 pushes between clears. */
static inline int dp_heap_push(dp_heap *h, double key, int32_t payload) {
    assert(h->seq < (1ULL << 32));
    if (dp_heap_push_tie(h, key, (uint32_t)h->seq, payload)) return -1;
    h->seq++;
    return 0;
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
