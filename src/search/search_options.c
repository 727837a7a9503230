/* The search's settings (include/dplace/search.h): their rows, the
 * defaults, the identity a checkpoint keeps. Below search.c and
 * search_ckpt.c, which both read them. */
#include <stddef.h>
#include <string.h>

#include "dplace/search.h"

#define SEARCH(f) 0, offsetof(dp_search_options, f)
#define NUM(lo, hi) lo, hi, NULL, 0

/* The rows: every field but seed and threads, with the search's own base
 * values. */
static const dp_setting rows[] = {
    {"moves", DP_SETTING_INT, SEARCH(moves), NUM(1, 1000000), 0, 0,
     "moves each search chain proposes per update", "32"},
    {"t0", DP_SETTING_DOUBLE, SEARCH(t0), NUM(1e-12, 100), 0, 0,
     "starting temperature: a move x times slower (relative) is accepted with probability exp(-x / t)", "0.001"},
    {"decay", DP_SETTING_DOUBLE, SEARCH(decay), NUM(1e-12, 1), 0, 0, "the temperature's factor per update", "0.97"},
    {"t-min", DP_SETTING_DOUBLE, SEARCH(t_min), NUM(0, 1), 0, 0, "the temperature's floor, relative to t0", "0.01"},
    {"restart", DP_SETTING_INT, SEARCH(restart_steps), NUM(1, 1e9), 0, 0,
     "updates without a better placement of its own after which a chain restarts from the best found", "60"},
    {"sync", DP_SETTING_INT, SEARCH(sync_steps), NUM(1, 1e9), 0, 0,
     "every this many updates the chain with the worst current placement restarts from the best", "10"},
    {"critical", DP_SETTING_DOUBLE, SEARCH(critical), NUM(0, 1), 0, 0,
     "share of moves proposed from the simulated critical path", "0.4"},
    {"swap", DP_SETTING_DOUBLE, SEARCH(swap), NUM(0, 1), 0, 0, "share of swaps among the other moves", "0.25"},
};
enum { N_ROWS = sizeof rows / sizeof rows[0] };
#undef SEARCH
#undef NUM

const dp_setting *dp_search_options_rows(int32_t *n) {
    if (n) *n = N_ROWS;
    return rows;
}

dp_search_options dp_search_options_default(void) {
    dp_search_options o;
    memset(&o, 0, sizeof o);
    o.seed = 1, o.threads = 1;
    dp_setting_rows_base(rows, N_ROWS, &o);
    return o;
}

size_t dp_search_options_format(const dp_search_options *o, char *buf, size_t size) {
    return dp_setting_rows_format(rows, N_ROWS, 0, o, buf, size);
}
