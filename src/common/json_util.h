/* Internal helpers for reading dplace's JSON formats with jansson: loading
 * with file:line:column syntax errors, header checks, and typed field access
 * whose errors name the context ("FILE: op 3 \"name\"") and the field. */
#ifndef DPLACE_JSON_UTIL_H
#define DPLACE_JSON_UTIL_H

#include <jansson.h>
#include <stdint.h>

#include "dplace/common.h"

/* Loads a JSON document. Errors: "PATH: cannot read: ...", "PATH: file is
 * empty", "PATH:LINE:COL: JSON syntax error: ...". Duplicate keys are errors. */
json_t *dp_json_load_file(const char *path, dp_error *err);
json_t *dp_json_load_string(const char *text, const char *what, dp_error *err);

/* Checks root is an object with "format" == format and "version" == version. */
dp_status dp_json_check_header(const json_t *root, const char *what, const char *format, int version, dp_error *err);

/* "a string", "an array", ... for messages. */
const char *dp_json_type_name(const json_t *v);

/* Typed fields. When the key is absent: error if required, else DP_STATUS_OK
 * with *out untouched. Present but wrong: one message "CTX: field \"KEY\" ...". */
dp_status dp_json_get_string(const json_t *obj, const char *key, int required, const char **out, const char *ctx,
                             dp_error *err);
/* An array (*out untouched when absent and optional). */
dp_status dp_json_get_array(const json_t *obj, const char *key, int required, const json_t **out, const char *ctx,
                            dp_error *err);
/* true or false, as 1 or 0. */
dp_status dp_json_get_bool(const json_t *obj, const char *key, int required, int *out, const char *ctx, dp_error *err);
/* A finite number >= min. */
dp_status dp_json_get_number(const json_t *obj, const char *key, int required, double *out, double min,
                             const char *ctx, dp_error *err);
/* A whole number in [min, max] (an integral real such as 1e9 is accepted). */
dp_status dp_json_get_int(const json_t *obj, const char *key, int required, int64_t *out, int64_t min, int64_t max,
                          const char *ctx, dp_error *err);
/* Converts v itself (not a field) to a whole number in [min, max]; `what`
 * names it in the message. */
dp_status dp_json_to_int(const json_t *v, int64_t *out, int64_t min, int64_t max, const char *ctx, const char *what,
                         dp_error *err);

#endif
