#include "dplace/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[] = {
    "ok", "io", "parse", "invalid", "nomem", "unsupported",
};
_Static_assert(sizeof(status_names) / sizeof(status_names[0]) == DP_STATUS_COUNT,
               "status_names must list every dp_status");

/* Copies src into dst (cap bytes, NUL-terminated, cut at the end) with every
 * control byte (below 0x20, and 0x7f) written as \xNN, so a message is one
 * printable line whatever the input held. */
static void escape_controls(char *dst, size_t cap, const char *src) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p && o + 1 < cap; p++) {
        if (*p >= 0x20 && *p != 0x7f) {
            dst[o++] = (char)*p;
        } else {
            if (o + 4 >= cap) break;
            dst[o++] = '\\';
            dst[o++] = 'x';
            dst[o++] = hex[*p >> 4];
            dst[o++] = hex[*p & 15];
        }
    }
    dst[o] = '\0';
}

dp_status dp_error_set(dp_error *err, dp_status status, const char *fmt, ...) {
    if (err) {
        err->status = status;
        err->os_errno = 0;
        char raw[sizeof err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        escape_controls(err->msg, sizeof err->msg, raw);
    }
    return status;
}

dp_status dp_error_set_os(dp_error *err, int errnum, const char *fmt, ...) {
    if (err) {
        err->status = DP_STATUS_IO;
        err->os_errno = errnum;
        char raw[sizeof err->msg];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < sizeof raw) snprintf(raw + n, sizeof raw - (size_t)n, ": %s", strerror(errnum));
        escape_controls(err->msg, sizeof err->msg, raw);
    }
    return DP_STATUS_IO;
}

dp_status dp_error_prefix(dp_error *err, const char *prefix) {
    if (!err) return DP_STATUS_INVALID;
    char safe[sizeof err->msg];
    escape_controls(safe, sizeof safe, prefix);
    prefix = safe;
    size_t plen = strlen(prefix) + 2, mlen = strlen(err->msg), cap = sizeof err->msg - 1;
    if (plen > cap) plen = cap;
    if (plen + mlen > cap) mlen = cap - plen;
    memmove(err->msg + plen, err->msg, mlen);
    memcpy(err->msg, prefix, plen - 2);
    err->msg[plen - 2] = ':';
    err->msg[plen - 1] = ' ';
    err->msg[plen + mlen] = '\0';
    return err->status;
}

void dp_error_clear(dp_error *err) {
    if (err) {
        err->status = DP_STATUS_OK;
        err->os_errno = 0;
        err->msg[0] = '\0';
    }
}

const char *dp_status_name(dp_status status) {
    if ((unsigned)status >= DP_STATUS_COUNT) return "unknown";
    return status_names[status];
}
