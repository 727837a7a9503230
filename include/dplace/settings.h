/* dplace: settings, one row each. A component (the learned agents,
 * include/dplace/agent_config.h; the search, include/dplace/search.h)
 * declares its configuration struct and, beside it, one row per field: its
 * name, type, offset, range or choices, base value, help line, the
 * component's group and flags. One parser sets any row by name from text,
 * one printer writes it back, so that a command line (dplace optimize --set
 * KEY=VALUE) sets any setting and a checkpoint's identity is the rows
 * formatted. The rows of every component are assembled into the one table
 * above them (include/dplace/settings_job.h); this layer knows a row's
 * shape, not the rows.
 *
 * Layer: run (src/run), below the agents and the search. */
#ifndef DPLACE_SETTINGS_H
#define DPLACE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "dplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dp_setting_type {
    DP_SETTING_INT = 0, /* int32_t                                   */
    DP_SETTING_FLOAT,   /* float                                     */
    DP_SETTING_DOUBLE,  /* double                                    */
    DP_SETTING_BOOL,    /* int: yes/no, true/false, 1/0              */
    DP_SETTING_ENUM,    /* int: one of the names in choices          */
    DP_SETTING_SECONDS, /* double: a duration, 90s, 2m, 1h (0: off)  */
} dp_setting_type;

/* Flags of a setting. */
enum {
    DP_SETTING_EXPERIMENTAL = 1u, /* dplace's own idea, not tuned, under test
                                     (a paper's value never is): --set help
                                     leaves it out, --set help=all lists it,
                                     marked                                */
};

typedef struct dp_setting {
    const char *name;
    dp_setting_type type;
    int target;                  /* which struct holds the field: in a
                                    component's own rows 0, in the assembled
                                    table a dp_setting_target                */
    size_t offset;               /* of the field in its struct                */
    double min, max;             /* numbers                                   */
    const char *const *choices;  /* enums: names, in the enum's order         */
    int n_choices;
    int group;                   /* the component's group (its own numbering
                                    in its rows; dp_setting_group in the
                                    assembled table)                         */
    unsigned flags;
    const char *help;            /* one line                                  */
    const char *base;            /* the base value, as text the parser reads  */
} dp_setting;

/* Sets r's field in p (the struct r's offset is in) from text.
 * DP_STATUS_INVALID naming the key and what it wants (the choices, the
 * range) for a bad value; the field unchanged then. */
dp_status dp_setting_set_field(const dp_setting *r, void *p, const char *value, dp_error *err);
/* Writes r's field in p as dp_setting_set_field reads it; returns the
 * length it needed (snprintf's rule). */
size_t dp_setting_format_field(const dp_setting *r, const void *p, char *buf, size_t size);

/* The row of rows[0..n) called name, or NULL. */
const dp_setting *dp_setting_rows_find(const dp_setting *rows, int32_t n, const char *name);
/* Sets every field of rows[0..n) in p to its row's base value. */
void dp_setting_rows_base(const dp_setting *rows, int32_t n, void *p);
/* Writes the fields of rows[0..n) with target `target` read from p as
 * "key=value key=value ..." in the rows' order; returns the length it
 * needed. A checkpoint's identity holds this string. */
size_t dp_setting_rows_format(const dp_setting *rows, int32_t n, int target, const void *p, char *buf, size_t size);
/* Checks every numeric field of rows[0..n) with target `target` within its
 * range and every enum within its choices: DP_STATUS_INVALID naming the
 * setting. */
dp_status dp_setting_rows_check(const dp_setting *rows, int32_t n, int target, const void *p, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
