#include "dplace/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[] = {
    "ok", "io", "parse", "invalid", "nomem", "unsupported",
};
_Static_assert(sizeof(status_names) / sizeof(status_names[0]) == DP_STATUS_COUNT,
               "status_names must list every dp_status");

dp_status dp_error_set(dp_error *err, dp_status status, const char *fmt, ...) {
    if (err) {
        err->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

dp_status dp_error_prefix(dp_error *err, const char *prefix) {
    if (!err) return DP_STATUS_INVALID;
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
        err->msg[0] = '\0';
    }
}

const char *dp_status_name(dp_status status) {
    if ((unsigned)status >= DP_STATUS_COUNT) return "unknown";
    return status_names[status];
}
