#include "common/json_util.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Files larger than this are refused before parsing (absurd input). */
#define DP_JSON_MAX_FILE ((size_t)4 << 30)

static json_t *load_buffer(const char *buf, size_t len, const char *what, dp_error *err) {
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i])) i++;
    if (i == len) {
        dp_error_set(err, DP_STATUS_PARSE, "%s: file is empty", what);
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        dp_error_set(err, DP_STATUS_PARSE, "%s:%d:%d: JSON syntax error: %s", what, je.line, je.column, je.text);
        return NULL;
    }
    return root;
}

json_t *dp_json_load_file(const char *path, dp_error *err) {
    char *buf = NULL;
    size_t len = 0;
    if (dp_read_file(path, DP_JSON_MAX_FILE, &buf, &len, err)) return NULL;
    json_t *root = load_buffer(buf ? buf : "", len, path, err);
    free(buf);
    return root;
}

json_t *dp_json_load_string(const char *text, const char *what, dp_error *err) {
    return load_buffer(text, strlen(text), what, err);
}

const char *dp_json_type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

dp_status dp_json_check_header(const json_t *root, const char *what, const char *format, int version, dp_error *err) {
    if (!json_is_object(root))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: expected a JSON object at the top, got %s", what,
                            dp_json_type_name(root));
    const json_t *f = json_object_get(root, "format");
    if (!f) return dp_error_set(err, DP_STATUS_PARSE, "%s: missing field \"format\" (expected \"%s\")", what, format);
    if (!json_is_string(f) || strcmp(json_string_value(f), format) != 0)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"format\" is %s%s%s, expected \"%s\"", what,
                            json_is_string(f) ? "\"" : "", json_is_string(f) ? json_string_value(f) : dp_json_type_name(f),
                            json_is_string(f) ? "\"" : "", format);
    const json_t *v = json_object_get(root, "version");
    if (!v) return dp_error_set(err, DP_STATUS_PARSE, "%s: missing field \"version\" (expected %d)", what, version);
    if (!json_is_integer(v))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"version\" must be an integer, got %s", what,
                            dp_json_type_name(v));
    if (json_integer_value(v) != version)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: unsupported %s version %lld (this dplace reads version %d)",
                            what, format, (long long)json_integer_value(v), version);
    return DP_STATUS_OK;
}

/* Field key of obj into *v (NULL when absent): an error when absent and
 * required, or present and not of the type is_type accepts (`want` names
 * it in the message). Every typed getter below reads its field through it. */
static dp_status field_of(const json_t *obj, const char *key, int required, int (*is_type)(const json_t *),
                          const char *want, const json_t **v, const char *ctx, dp_error *err) {
    *v = json_object_get(obj, key);
    if (!*v) return required ? dp_error_set(err, DP_STATUS_PARSE, "%s: missing field \"%s\"", ctx, key) : DP_STATUS_OK;
    if (is_type && !is_type(*v))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"%s\" must be %s, got %s", ctx, key, want,
                            dp_json_type_name(*v));
    return DP_STATUS_OK;
}

/* jansson's type checks are macros; these are what field_of calls. */
static int is_string(const json_t *v) { return json_is_string(v); }
static int is_boolean(const json_t *v) { return json_is_boolean(v); }
static int is_array(const json_t *v) { return json_is_array(v); }
static int is_number(const json_t *v) { return json_is_number(v); }

dp_status dp_json_get_string(const json_t *obj, const char *key, int required, const char **out, const char *ctx,
                             dp_error *err) {
    const json_t *v;
    dp_status st = field_of(obj, key, required, is_string, "a string", &v, ctx, err);
    if (!st && v) *out = json_string_value(v);
    return st;
}

dp_status dp_json_get_bool(const json_t *obj, const char *key, int required, int *out, const char *ctx, dp_error *err) {
    const json_t *v;
    dp_status st = field_of(obj, key, required, is_boolean, "true or false", &v, ctx, err);
    if (!st && v) *out = json_is_true(v);
    return st;
}

dp_status dp_json_get_array(const json_t *obj, const char *key, int required, const json_t **out, const char *ctx,
                            dp_error *err) {
    const json_t *v;
    dp_status st = field_of(obj, key, required, is_array, "an array", &v, ctx, err);
    if (!st && v) *out = v;
    return st;
}

dp_status dp_json_get_number(const json_t *obj, const char *key, int required, double *out, double min,
                             const char *ctx, dp_error *err) {
    const json_t *v;
    dp_status st = field_of(obj, key, required, is_number, "a number", &v, ctx, err);
    if (st || !v) return st;
    double x = json_number_value(v);
    if (!isfinite(x)) return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"%s\" is not finite", ctx, key);
    if (x < min)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"%s\" must be >= %g, got %g", ctx, key, min, x);
    *out = x;
    return DP_STATUS_OK;
}

dp_status dp_json_to_int(const json_t *v, int64_t *out, int64_t min, int64_t max, const char *ctx, const char *what,
                         dp_error *err) {
    int64_t x;
    if (json_is_integer(v)) {
        x = (int64_t)json_integer_value(v);
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d) || d != floor(d))
            return dp_error_set(err, DP_STATUS_PARSE, "%s: %s must be a whole number, got %g", ctx, what, d);
        if (d < -9.2e18 || d > 9.2e18)
            return dp_error_set(err, DP_STATUS_PARSE, "%s: %s (%g) overflows 64 bits", ctx, what, d);
        x = (int64_t)d;
    } else {
        return dp_error_set(err, DP_STATUS_PARSE, "%s: %s must be an integer, got %s", ctx, what, dp_json_type_name(v));
    }
    if (x < min || x > max) {
        if (x < 0 && min >= 0)
            return dp_error_set(err, DP_STATUS_PARSE, "%s: %s must not be negative, got %lld", ctx, what,
                                (long long)x);
        return dp_error_set(err, DP_STATUS_PARSE, "%s: %s must be in %lld..%lld, got %lld", ctx, what, (long long)min,
                            (long long)max, (long long)x);
    }
    *out = x;
    return DP_STATUS_OK;
}

dp_status dp_json_get_int(const json_t *obj, const char *key, int required, int64_t *out, int64_t min, int64_t max,
                          const char *ctx, dp_error *err) {
    const json_t *v;
    dp_status st = field_of(obj, key, required, NULL, NULL, &v, ctx, err);
    if (st || !v) return st;
    char what[96];
    snprintf(what, sizeof what, "field \"%s\"", key);
    return dp_json_to_int(v, out, min, max, ctx, what, err);
}
