/* dplace: a job's settings: a learned agent's (include/dplace/agent_config.h),
 * the search's (include/dplace/search.h) and how the two are composed in
 * one run, their rows assembled into the one table (--set help prints it
 * by group), and the presets as data over it: a base preset plus key=value
 * lines, each with its source (the paper's sentence, or "dplace's"),
 * applied through the same parser. The rows themselves are declared by
 * their components (include/dplace/settings.h).
 *
 * Layer: optimize (src/optimize/settings_job.c, src/optimize/presets.c),
 * above the agents and the search. */
#ifndef DPLACE_SETTINGS_JOB_H
#define DPLACE_SETTINGS_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "dplace/agent_config.h"
#include "dplace/common.h"
#include "dplace/pretrained.h"
#include "dplace/search.h"
#include "dplace/settings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything a preset sets: a learned agent's settings, the search's, and
 * how they are composed in one run. */
typedef struct dp_settings {
    dp_agent_config agent;
    dp_search_options search;
    dp_pretrained_options pretrained;
    double search_after_s;  /* > 0: after a learned agent's run, the search
                               from its best for this many seconds            */
} dp_settings;

/* The groups of the table, in the order --set help prints them: the
 * agent's, then the search's (search-after with it). */
typedef enum dp_setting_group {
    DP_SETTING_GROUP_FEATURES = DP_AGENT_CONFIG_GROUP_FEATURES,
    DP_SETTING_GROUP_GROUPER = DP_AGENT_CONFIG_GROUP_GROUPER,
    DP_SETTING_GROUP_LINK = DP_AGENT_CONFIG_GROUP_LINK,
    DP_SETTING_GROUP_ENCODER = DP_AGENT_CONFIG_GROUP_ENCODER,
    DP_SETTING_GROUP_PLACER = DP_AGENT_CONFIG_GROUP_PLACER,
    DP_SETTING_GROUP_WARM = DP_AGENT_CONFIG_GROUP_WARM,
    DP_SETTING_GROUP_TRAINING = DP_AGENT_CONFIG_GROUP_TRAINING,
    DP_SETTING_GROUP_PPO = DP_AGENT_CONFIG_GROUP_PPO,
    DP_SETTING_GROUP_CE = DP_AGENT_CONFIG_GROUP_CE,
    DP_SETTING_GROUP_WALKS = DP_AGENT_CONFIG_GROUP_WALKS,
    DP_SETTING_GROUP_SEARCH = DP_AGENT_CONFIG_GROUP_COUNT,
    DP_SETTING_GROUP_PRETRAINED, /* the pretrained placer's (include/dplace/pretrained.h) */
    DP_SETTING_GROUP_COUNT
} dp_setting_group;

/* Which struct a row of the table reads its field from (dp_setting's
 * target). */
typedef enum dp_setting_target {
    DP_SETTING_AGENT = 0, /* dp_agent_config                        */
    DP_SETTING_SEARCH,    /* dp_search_options                      */
    DP_SETTING_RUN,       /* dp_settings itself                     */
    DP_SETTING_PRETRAINED /* dp_pretrained_options                  */
} dp_setting_target;

/* The table, in its printing order (by group); *n its rows. */
const dp_setting *dp_settings_table(int32_t *n);
/* The row of name, or NULL. */
const dp_setting *dp_settings_find(const char *name);
/* The new name of a setting renamed within the last release, or NULL: the
 * old name still sets it (the caller may warn). */
const char *dp_settings_renamed(const char *old_name);
/* The group's name as --set help prints it ("placer", "elite walks"). */
const char *dp_setting_group_name(dp_setting_group g);

/* The base every preset starts from: each row's base value, the search's
 * seed 1 and 1 thread. */
void dp_settings_base(dp_settings *s);

/* A preset: a base preset (NULL: dp_settings_base) plus lines. */
typedef struct dp_preset_line {
    const char *key, *value;
    const char *source; /* the paper's sentence, or "dplace's: why"          */
} dp_preset_line;
typedef struct dp_preset {
    const char *name;
    const char *base;   /* the preset it starts from, NULL: the table's base */
    const char *summary;/* one line: what it is                              */
    const dp_preset_line *lines;
    int32_t n_lines;
} dp_preset;

/* The presets, NULL-terminated names ("hp", "colocrl", "eagle",
 * "eagle-ppo-ce", "post", "dplace", "mars", "mars-nopretrain",
 * "mars-seq2seq", "mars-trfxl", "mars-dplace"). */
const char *const *dp_settings_preset_names(void);
/* The preset called name (its data), or NULL. */
const dp_preset *dp_settings_preset_find(const char *name);
/* Fills s with a preset: its base's values, then its lines in order; the
 * agent's preset name set. Returns 0, or -1 for an unknown name. */
int dp_settings_preset(const char *name, dp_settings *s);

/* Sets one setting by name from text (a renamed one's old name too).
 * DP_STATUS_INVALID naming the key and what it wants (the choices, the
 * range) for an unknown key or a bad value; s unchanged then. */
dp_status dp_settings_set(dp_settings *s, const char *key, const char *value, dp_error *err);

/* Writes row r (of the table) of s as dp_settings_set reads it; returns the
 * length it needed (snprintf's rule). */
size_t dp_setting_format(const dp_setting *r, const dp_settings *s, char *buf, size_t size);
/* Writes the rows of one target as "key=value key=value ..." in table
 * order, reading the fields from p (a dp_agent_config, dp_search_options
 * or dp_settings as target says); returns the length it needed. A
 * checkpoint's identity holds this string. */
size_t dp_settings_format_target(dp_setting_target target, const void *p, char *buf, size_t size);
/* Checks every numeric row of a target within its range and every enum
 * within its choices: DP_STATUS_INVALID naming the setting. */
dp_status dp_settings_check_target(dp_setting_target target, const void *p, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
