/* Finite-difference gradient checking for dplace's neural-network layers and
 * models: compares the analytic gradients a backward pass accumulates with
 * central differences of a scalar loss computed in double precision. */
#ifndef DPLACE_NN_CHECK_H
#define DPLACE_NN_CHECK_H

#include <stddef.h>

#include "dplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One tensor to check: the values the loss reads (perturbed in place and
 * restored) and the gradient buffer the backward pass fills. */
typedef struct dp_nn_check_tensor {
    const char *name;
    float *value;
    const float *grad;
    size_t count;
} dp_nn_check_tensor;

/* Largest relative error found in one tensor, at element worst. A caller
 * judges max_rel against its tolerance, and max_numeric against a floor: a
 * tensor the loss does not depend on has zero numeric and zero analytic
 * gradients, and a check of it cannot fail. */
typedef struct dp_nn_check_result {
    double max_rel;
    size_t worst;
    double analytic, numeric; /* the values at worst */
    double max_numeric;       /* largest |numeric gradient| over the checked elements */
    size_t checked;           /* elements compared */
    size_t skipped;           /* elements skipped as kinks */
} dp_nn_check_result;

/* Runs the forward pass and returns the loss. */
typedef double (*dp_nn_check_loss_fn)(void *ctx);
/* Zeroes the gradients, then runs forward and backward so that every
 * tensor's grad holds d loss / d value. */
typedef void (*dp_nn_check_grad_fn)(void *ctx);

/* Compares, for every tensor, the analytic gradient with
 * (loss(x + eps) - loss(x - eps)) / (2 eps) at up to max_points elements
 * (all when count <= max_points, else a seeded random subset). The relative
 * error of an element is |a - n| / max(|a|, |n|, floor). When kink > 0, an
 * element whose one-sided slopes (loss(x + eps) - loss(x)) / eps and
 * (loss(x) - loss(x - eps)) / eps differ by more than kink * max(|slopes|,
 * floor) straddles a non-differentiable point (a ReLU or PReLU kink) and is
 * skipped and counted instead; a wrong analytic gradient still shows, as both
 * slopes then agree with each other and not with it. res has ntensors
 * entries. */
void dp_nn_gradcheck(dp_nn_check_result *res, void *ctx, dp_nn_check_loss_fn loss,
                     dp_nn_check_grad_fn grad, const dp_nn_check_tensor *tensors, int ntensors,
                     double eps, double floor, double kink, size_t max_points, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
