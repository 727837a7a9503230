/* A job's settings (include/dplace/settings_job.h): the one table,
 * assembled from the agent's rows, the job's own (search-after) and the
 * search's, in the order --set help prints them; setting and writing a
 * value by name in a dp_settings. */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dplace/settings_job.h"

/* ---- the job's own rows ---------------------------------------------------------- */

static const dp_setting run_rows[] = {
    {"search-after", DP_SETTING_SECONDS, DP_SETTING_RUN, offsetof(dp_settings, search_after_s), 0, 1e9, NULL, 0,
     DP_SETTING_GROUP_SEARCH, 0,
     "after a learned agent's run, dplace's search from its best placement for this long (90s, 2m; 0: none; "
     "--search-after)", "0"},
};
enum { N_RUN_ROWS = sizeof run_rows / sizeof run_rows[0] };

/* ---- the table ------------------------------------------------------------------- */

enum { TABLE_MAX = 256 };

/* Appends rows[0..n) to table[*len..), each with target t and its group
 * moved by `group`. */
static void append(dp_setting *table, int32_t *len, const dp_setting *rows, int32_t n, dp_setting_target t,
                   int group) {
    assert(*len + n <= TABLE_MAX);
    for (int32_t i = 0; i < n; i++) {
        dp_setting r = rows[i];
        r.target = t, r.group += group;
        table[(*len)++] = r;
    }
}

const dp_setting *dp_settings_table(int32_t *n) {
    static dp_setting table[TABLE_MAX];
    static int32_t len;
    if (!len) {
        int32_t k = 0, na, ns;
        int32_t np;
        const dp_setting *agent = dp_agent_config_rows(&na), *search = dp_search_options_rows(&ns);
        const dp_setting *pt = dp_pretrained_options_rows(&np);
        append(table, &k, agent, na, DP_SETTING_AGENT, 0);
        append(table, &k, run_rows, N_RUN_ROWS, DP_SETTING_RUN, 0);
        append(table, &k, search, ns, DP_SETTING_SEARCH, DP_SETTING_GROUP_SEARCH);
        append(table, &k, pt, np, DP_SETTING_PRETRAINED, DP_SETTING_GROUP_PRETRAINED);
        len = k;
    }
    if (n) *n = len;
    return table;
}

const char *dp_settings_renamed(const char *old_name) { return dp_agent_config_renamed(old_name); }

const dp_setting *dp_settings_find(const char *name) {
    if (!name) return NULL;
    const char *now = dp_settings_renamed(name);
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    return dp_setting_rows_find(t, n, now ? now : name);
}

const char *dp_setting_group_name(dp_setting_group g) {
    if ((unsigned)g < DP_AGENT_CONFIG_GROUP_COUNT) return dp_agent_config_group_name((int)g);
    return g == DP_SETTING_GROUP_SEARCH ? "search" : g == DP_SETTING_GROUP_PRETRAINED ? "pretrained" : "?";
}

/* ---- values ---------------------------------------------------------------------- */

/* The struct of target t in s. */
static void *target_of(dp_settings *s, int t) {
    return t == DP_SETTING_AGENT        ? (void *)&s->agent
           : t == DP_SETTING_SEARCH     ? (void *)&s->search
           : t == DP_SETTING_PRETRAINED ? (void *)&s->pretrained
                                        : (void *)s;
}

void dp_settings_base(dp_settings *s) {
    memset(s, 0, sizeof *s);
    dp_agent_config_base(&s->agent);
    s->search = dp_search_options_default();
    s->pretrained = dp_pretrained_options_default();
    dp_setting_rows_base(run_rows, N_RUN_ROWS, s);
}

dp_status dp_settings_set(dp_settings *s, const char *key, const char *value, dp_error *err) {
    const dp_setting *r = dp_settings_find(key);
    if (!r) return dp_error_set(err, DP_STATUS_INVALID, "unknown setting \"%.64s\" (--set help lists them)", key);
    return dp_setting_set_field(r, target_of(s, r->target), value, err);
}

size_t dp_setting_format(const dp_setting *r, const dp_settings *s, char *buf, size_t size) {
    return dp_setting_format_field(r, target_of((dp_settings *)s, r->target), buf, size);
}

size_t dp_settings_format_target(dp_setting_target target, const void *p, char *buf, size_t size) {
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    return dp_setting_rows_format(t, n, target, p, buf, size);
}

dp_status dp_settings_check_target(dp_setting_target target, const void *p, dp_error *err) {
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    return dp_setting_rows_check(t, n, target, p, err);
}
