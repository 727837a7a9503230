/* Built-in graphs by name. */
#include "dplace/zoo.h"

#include <stdlib.h>
#include <string.h>

static const dp_zoo_entry entries[] = {
    {"synthetic", "training-like RNN grid, about 25,000 ops (synthetic-N: about N ops)"},
    {NULL, NULL},
};

const dp_zoo_entry *dp_zoo_list(void) { return entries; }

dp_graph *dp_zoo_build(const char *name, int32_t batch, dp_error *err) {
    (void)batch;
    if (strcmp(name, "synthetic") == 0) return dp_graph_synth(25000, 1, err);
    if (strncmp(name, "synthetic-", 10) == 0) {
        char *end = NULL;
        long n = strtol(name + 10, &end, 10);
        if (end && !*end && n >= 200 && n <= 2000000) return dp_graph_synth((int32_t)n, 1, err);
        dp_error_set(err, DP_STATUS_INVALID, "model \"%s\": N must be a whole number in 200..2000000", name);
        return NULL;
    }
    dp_error_set(err, DP_STATUS_INVALID, "unknown model \"%s\" (dplace zoo list shows the built-in models)", name);
    return NULL;
}

dp_status dp_zoo_expert_placement(const dp_graph *g, const struct dp_devices *ds, int32_t *out, dp_error *err) {
    (void)ds;
    (void)out;
    return dp_error_set(err, DP_STATUS_UNSUPPORTED, "graph \"%s\": no human-expert placement is known for it",
                        g->name ? g->name : "");
}
