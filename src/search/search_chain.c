/* A chain's current placement and the score it minimises
 * (search_internal.h), shared by the steps (search.c) and the checkpoints
 * (search_ckpt.c). */
#include <math.h>

#include "search/search_internal.h"

double search_score(const dp_sim_result *r) {
    if (r->valid) return r->step_time_s;
    if (r->verdict != DP_SIM_VERDICT_OOM) return INFINITY;
    double over = 0;
    for (int32_t d = 0; d < r->n_devices; d++) {
        const dp_sim_device_stats *x = &r->device[d];
        if (x->memory_bytes > 0 && x->peak_bytes > x->memory_bytes)
            over = fmax(over, (double)(x->peak_bytes - x->memory_bytes) / (double)x->memory_bytes);
    }
    return r->step_time_s * (4.0 + over);
}

dp_status search_chain_set(dp_search *s, search_chain *c, const int32_t *placement, dp_error *err) {
    dp_sim_result res;
    dp_status st = dp_sim_delta_set_base(c->d, placement, &res, err);
    if (st) return st;
    c->cur_score = search_score(&res);
    c->path_ok = 0;
    return DP_STATUS_OK;
}
