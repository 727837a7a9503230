/* A chain's current placement and the score it minimises
 * (search_internal.h), shared by the steps (search.c) and the checkpoints
 * (search_ckpt.c). */
#include <math.h>

#include "search/search_internal.h"

dp_status search_chain_set(dp_search *s, search_chain *c, const int32_t *placement, dp_error *err) {
    dp_sim_result res;
    dp_status st = dp_sim_delta_set_base(c->d, placement, &res, err);
    if (st) return st;
    c->cur_score = dp_sim_score(&res);
    c->path_ok = 0;
    return DP_STATUS_OK;
}
