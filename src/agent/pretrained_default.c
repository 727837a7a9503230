/* The policy dplace ships: policies/pretrained.dpp, compiled in by the
 * build (cmake/embed.cmake writes its bytes as dp_pretrained_blob). */
#include "dplace/pretrained.h"

extern const unsigned char dp_pretrained_blob[];
extern const unsigned long dp_pretrained_blob_size;

dp_pretrained_policy *dp_pretrained_policy_default(dp_error *err) {
    if (dp_pretrained_blob_size == 0) {
        dp_error_set(err, DP_STATUS_UNSUPPORTED,
                     "pretrained: this build has no policy compiled in (policies/pretrained.dpp was missing)");
        return NULL;
    }
    return dp_pretrained_policy_from_bytes(dp_pretrained_blob, (size_t)dp_pretrained_blob_size,
                                           "policies/pretrained.dpp (built in)", err);
}
