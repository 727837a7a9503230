/* Finite-difference gradient checker. */
#include "dplace/nn_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Checks the analytic gradients of tensors against central differences. */
void dp_nn_gradcheck(dp_nn_check_result *res, void *ctx, dp_nn_check_loss_fn loss,
                     dp_nn_check_grad_fn grad, const dp_nn_check_tensor *tensors, int ntensors,
                     double eps, double floor, double kink, size_t max_points, uint64_t seed) {
    grad(ctx);
    double mid = loss(ctx);
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    for (int t = 0; t < ntensors; t++) {
        const dp_nn_check_tensor *x = &tensors[t];
        dp_nn_check_result *r = &res[t];
        memset(r, 0, sizeof *r);
        size_t npts = x->count < max_points ? x->count : max_points;
        for (size_t k = 0; k < npts; k++) {
            size_t i = x->count <= max_points ? k : (size_t)dp_rng_below(&rng, x->count);
            float keep = x->value[i];
            x->value[i] = (float)(keep + eps);
            double up = loss(ctx);
            double hi = (double)x->value[i] - keep; /* the step actually taken */
            x->value[i] = (float)(keep - eps);
            double down = loss(ctx);
            double lo = (double)keep - x->value[i];
            x->value[i] = keep;
            if (kink > 0.0) {
                double sp = (up - mid) / hi, sm = (mid - down) / lo;
                double sc = fabs(sp) > fabs(sm) ? fabs(sp) : fabs(sm);
                if (sc < floor) sc = floor;
                if (fabs(sp - sm) > kink * sc) {
                    r->skipped++;
                    continue;
                }
            }
            double num = (up - down) / (hi + lo);
            double ana = x->grad[i];
            double den = fabs(ana) > fabs(num) ? fabs(ana) : fabs(num);
            if (den < floor) den = floor;
            double rel = fabs(ana - num) / den;
            if (fabs(num) > r->max_numeric) r->max_numeric = fabs(num);
            if (rel > r->max_rel || r->checked == 0) {
                r->max_rel = rel;
                r->worst = i;
                r->analytic = ana;
                r->numeric = num;
            }
            r->checked++;
        }
    }
}
