/* Byte buffers for the binary checkpoints (bytes.h). */
#include "common/bytes.h"

#include <stdlib.h>
#include <string.h>

void dp_bytes_put(dp_bytes_writer *b, const void *src, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + n) c *= 2;
        unsigned char *q = realloc(b->p, c);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q, b->cap = c;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

void dp_bytes_get(dp_bytes_reader *r, void *dst, size_t n) {
    if (r->short_read || r->n - r->at < n) {
        r->short_read = 1;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->at, n);
    r->at += n;
}

uint64_t dp_fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}
