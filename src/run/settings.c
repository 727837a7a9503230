/* Settings, one row each (include/dplace/settings.h): the parser and the
 * printer of a row's field, and the functions over a component's rows. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/settings.h"

/* ---- one row ------------------------------------------------------------------- */

/* The field of setting r in the struct p. */
static void *field(const dp_setting *r, const void *p) { return (char *)p + r->offset; }

dp_status dp_setting_set_field(const dp_setting *r, void *p, const char *value, dp_error *err) {
    void *f = field(r, p);
    if (r->type == DP_SETTING_ENUM) {
        for (int i = 0; i < r->n_choices; i++)
            if (!strcmp(value, r->choices[i])) {
                *(int *)f = i;
                return DP_STATUS_OK;
            }
        char list[256] = "";
        for (int i = 0; i < r->n_choices; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", r->choices[i]);
        return dp_error_set(err, DP_STATUS_INVALID, "setting %s: \"%.64s\" is not one of %s", r->name, value, list);
    }
    if (r->type == DP_SETTING_BOOL) {
        if (!strcmp(value, "1") || !strcmp(value, "yes") || !strcmp(value, "true")) *(int *)f = 1;
        else if (!strcmp(value, "0") || !strcmp(value, "no") || !strcmp(value, "false")) *(int *)f = 0;
        else return dp_error_set(err, DP_STATUS_INVALID, "setting %s wants yes or no, not \"%.64s\"", r->name, value);
        return DP_STATUS_OK;
    }
    double v;
    if (r->type == DP_SETTING_SECONDS) {
        v = !strcmp(value, "0") || !strcmp(value, "0s") ? 0.0 : dp_parse_duration(value);
        if (!(v >= r->min && v <= r->max))
            return dp_error_set(err, DP_STATUS_INVALID,
                                "setting %s wants a duration such as 90s, 2m or 1h (0: off), not \"%.64s\"", r->name,
                                value);
        *(double *)f = v;
        return DP_STATUS_OK;
    }
    char *end;
    errno = 0;
    v = strtod(value, &end);
    if (!*value || *end || errno || !isfinite(v) || v < r->min || v > r->max ||
        (r->type == DP_SETTING_INT && v != floor(v)))
        return dp_error_set(err, DP_STATUS_INVALID, "setting %s wants %s in [%g, %g], not \"%.64s\"", r->name,
                            r->type == DP_SETTING_INT ? "a whole number" : "a number", r->min, r->max, value);
    if (r->type == DP_SETTING_INT) *(int32_t *)f = (int32_t)v;
    else if (r->type == DP_SETTING_FLOAT) *(float *)f = (float)v;
    else *(double *)f = v;
    return DP_STATUS_OK;
}

/* Writes v in the fewest significant digits that read back as v, so help
 * shows 0.4 and not 0.40000000000000002 while a written value still
 * round-trips exactly. */
static size_t format_double(double v, char *buf, size_t size) {
    char tmp[40];
    for (int digits = 6; digits < 17; digits++) {
        snprintf(tmp, sizeof tmp, "%.*g", digits, v);
        if (strtod(tmp, NULL) == v) return (size_t)snprintf(buf, size, "%s", tmp);
    }
    return (size_t)snprintf(buf, size, "%.17g", v);
}

size_t dp_setting_format_field(const dp_setting *r, const void *p, char *buf, size_t size) {
    const void *f = field(r, p);
    switch (r->type) {
    case DP_SETTING_ENUM: {
        int e = *(const int *)f;
        return (size_t)snprintf(buf, size, "%s", e >= 0 && e < r->n_choices ? r->choices[e] : "?");
    }
    case DP_SETTING_BOOL: return (size_t)snprintf(buf, size, "%s", *(const int *)f ? "yes" : "no");
    case DP_SETTING_INT: return (size_t)snprintf(buf, size, "%d", (int)*(const int32_t *)f);
    case DP_SETTING_FLOAT: return (size_t)snprintf(buf, size, "%.7g", (double)*(const float *)f);
    case DP_SETTING_DOUBLE: return format_double(*(const double *)f, buf, size);
    case DP_SETTING_SECONDS: return (size_t)snprintf(buf, size, "%gs", *(const double *)f);
    }
    return 0;
}

/* ---- a component's rows ------------------------------------------------------- */

const dp_setting *dp_setting_rows_find(const dp_setting *rows, int32_t n, const char *name) {
    for (int32_t i = 0; name && i < n; i++)
        if (!strcmp(rows[i].name, name)) return &rows[i];
    return NULL;
}

void dp_setting_rows_base(const dp_setting *rows, int32_t n, void *p) {
    for (int32_t i = 0; i < n; i++) {
        dp_error err;
        dp_status st = dp_setting_set_field(&rows[i], p, rows[i].base, &err);
        (void)st;
        assert(st == DP_STATUS_OK);
    }
}

size_t dp_setting_rows_format(const dp_setting *rows, int32_t n, int target, const void *p, char *buf, size_t size) {
    size_t len = 0;
    char one[160];
    for (int32_t i = 0; i < n; i++) {
        const dp_setting *r = &rows[i];
        if (r->target != target) continue;
        dp_setting_format_field(r, p, one, sizeof one);
        int w = snprintf(buf && len < size ? buf + len : NULL, buf && len < size ? size - len : 0, "%s%s=%s",
                         len ? " " : "", r->name, one);
        len += (size_t)w;
    }
    return len;
}

dp_status dp_setting_rows_check(const dp_setting *rows, int32_t n, int target, const void *p, dp_error *err) {
    for (int32_t i = 0; i < n; i++) {
        const dp_setting *r = &rows[i];
        if (r->target != target) continue;
        const void *f = field(r, p);
        if (r->type == DP_SETTING_ENUM) {
            int e = *(const int *)f;
            if (e < 0 || e >= r->n_choices)
                return dp_error_set(err, DP_STATUS_INVALID, "setting %s: value %d is not a choice", r->name, e);
            continue;
        }
        if (r->type == DP_SETTING_BOOL) continue;
        double v = r->type == DP_SETTING_INT     ? *(const int32_t *)f
                   : r->type == DP_SETTING_FLOAT ? *(const float *)f
                                                 : *(const double *)f;
        if (!isfinite(v) || v < r->min || v > r->max)
            return dp_error_set(err, DP_STATUS_INVALID, "setting %s = %g is outside [%g, %g]", r->name, v, r->min,
                                r->max);
    }
    return DP_STATUS_OK;
}
