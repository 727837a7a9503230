/* dplace: a growable byte buffer, a bounds-checked reader over bytes, and
 * the FNV-1a hash: what the binary checkpoints (agent, search) are written
 * and read with. Not part of the public API. */
#ifndef DPLACE_COMMON_BYTES_H
#define DPLACE_COMMON_BYTES_H

#include <stddef.h>
#include <stdint.h>

typedef struct dp_bytes_writer {
    unsigned char *p;   /* owned; free(p) when done */
    size_t n, cap;
    int oom;            /* an append failed: the buffer is incomplete */
} dp_bytes_writer;

/* Appends n bytes of src; on allocation failure sets oom and ignores this
 * and every later append. */
void dp_bytes_put(dp_bytes_writer *b, const void *src, size_t n);
#define DP_BYTES_PUT(b, v) dp_bytes_put((b), &(v), sizeof(v))

typedef struct dp_bytes_reader {
    const unsigned char *p;
    size_t n, at;
    int short_read;     /* a read ran past the end */
} dp_bytes_reader;

/* Copies the next n bytes into dst; past the end it zeroes dst, sets
 * short_read and reads nothing more. */
void dp_bytes_get(dp_bytes_reader *r, void *dst, size_t n);
#define DP_BYTES_GET(r, v) dp_bytes_get((r), &(v), sizeof(v))

/* 64-bit FNV-1a of p [n]. */
uint64_t dp_fnv1a(const unsigned char *p, size_t n);

#endif
