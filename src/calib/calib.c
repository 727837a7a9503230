/* Calibration: the parameters of a device set fitted to measured step
 * times (include/dplace/calib.h, docs/calibrate.md). */
#include "dplace/calib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/placement.h"

/* Log-space steps of the finite differences: a wide one for the screening
 * (so that a parameter behind a max() of the roofline still shows when it is
 * near the kink) and a narrow one for the Jacobian of the fit. */
#define SCREEN_STEP 0.1
#define FIT_STEP 0.02

dp_calib_options dp_calib_options_default(void) {
    dp_calib_options o;
    memset(&o, 0, sizeof o);
    o.holdout = 0.25;
    o.seed = 1;
    o.max_iters = 40;
    o.min_sensitivity = 0.01;
    o.huber = 0.05;
    o.prior_weight = 1e-4;
    return o;
}

double dp_calib_mape(const double *predicted, const double *measured, const int8_t *mask, int8_t want, int32_t n) {
    double sum = 0;
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        if (mask && mask[i] != want) continue;
        sum += fabs(predicted[i] - measured[i]) / measured[i];
        k++;
    }
    return k ? 100.0 * sum / k : NAN;
}

/* The fit's state: the problem, a working copy of the device set that the
 * parameter values are applied to, and what each sample uses. */
typedef struct calib_ctx {
    const dp_graph *const *graphs;
    int32_t n_graphs;
    const dp_devices *stock;
    dp_devices *work;
    const dp_calib_sample *samples;
    int32_t n_samples;
    uint64_t *uses; /* [n_samples]: the devices each placement uses     */
    dp_calib_param *params;
    int32_t P;
    int32_t dev_group[DP_MAX_DEVICES];
    int32_t *link_group;  /* [n_links]                                        */
    uint64_t *group_mask; /* [groups]: the devices of each device group      */
} calib_ctx;

/* ---- parameters ----------------------------------------------------------------- */

/* Log-space bounds around a positive value: a factor `f` either way, within
 * [floor, ceil]. */
static void set_bounds(dp_calib_param *p, double base, double f, double floor, double ceil) {
    p->lo = fmax(base / f, floor);
    p->hi = fmin(base * f, ceil);
    if (p->hi < p->lo) p->hi = p->lo;
}

/* Appends a parameter of kind k for the group whose first member is first. */
static dp_calib_param *add_param(calib_ctx *c, dp_calib_param_kind k, int32_t slot, int32_t first, int32_t size,
                                 const char *group_name, double prior) {
    dp_calib_param *p = &c->params[c->P++];
    memset(p, 0, sizeof *p);
    p->kind = k, p->slot = slot, p->first = first, p->group_size = size, p->prior = prior, p->value = prior;
    static const char *const suffix[] = {"compute", "memory", "launch_overhead_s", "dispatch_s", "switch_s",
                                         "efficiency", "latency_s"};
    _Static_assert(sizeof suffix / sizeof suffix[0] == DP_CALIB_PARAM_KIND_COUNT, "suffix");
    if (k <= DP_CALIB_PARAM_MEMORY)
        snprintf(p->name, sizeof p->name, "%s %s.%s", group_name, dp_devices_eff_slot_name(slot), suffix[k]);
    else
        snprintf(p->name, sizeof p->name, "%s %s", group_name, suffix[k]);
    return p;
}

/* The fitted slots: every class that the roofline prices (not meta, whose
 * ops cost a fraction of the launch overhead), then Winograd's. */
static const int fitted_slots[] = {DP_OPCLASS_ELEMENTWISE, DP_OPCLASS_MATMUL,    DP_OPCLASS_CONV, DP_OPCLASS_REDUCTION,
                                   DP_OPCLASS_DATA,        DP_OPCLASS_OPTIMIZER, DP_EFF_WINOGRAD,
                                   DP_EFF_GROUPED,         DP_EFF_DEPTHWISE};
#define N_FITTED_SLOTS ((int)(sizeof fitted_slots / sizeof fitted_slots[0]))

/* The device whose dispatch cost the fit takes: the set's first CPU, when
 * some placement of a graph under the eager executor runs ops on a device
 * that is not a CPU; else -1. A CPU op outside the backward pass costs the
 * host its dispatch and its own launch overhead one after the other, so
 * measurements on CPUs alone cannot tell the two apart: the fit then leaves the dispatch cost as it
 * is and gives the CPUs' per-op cost to their launch overheads. */
static int32_t host_of(const calib_ctx *c) {
    uint64_t cpus = 0;
    for (int32_t d = 0; d < c->stock->n_devices; d++)
        if (c->stock->devices[d].kind == DP_DEVKIND_CPU) cpus |= 1ULL << d;
    int beside = 0;
    for (int32_t m = 0; m < c->n_samples; m++)
        beside |= c->graphs[c->samples[m].graph]->executor == DP_EXECUTOR_TORCH && (c->uses[m] & ~cpus) != 0;
    for (int32_t d = 0; beside && d < c->stock->n_devices; d++)
        if (cpus >> d & 1) return d;
    return -1;
}

/* Groups the devices (equal cost parameters) and links (equal bandwidth,
 * latency and efficiency) of the stock set, and lists the parameters of
 * each group with their priors and bounds. */
static dp_status build_params(calib_ctx *c, dp_error *err) {
    const dp_devices *ds = c->stock;
    int32_t n_dev_groups = 0, n_link_groups = 0, first_dev[DP_MAX_DEVICES], size_dev[DP_MAX_DEVICES] = {0};
    for (int32_t d = 0; d < ds->n_devices; d++) {
        int32_t g = 0;
        while (g < n_dev_groups && !dp_devices_same_cost(&ds->devices[first_dev[g]], &ds->devices[d]))
            g++;
        if (g == n_dev_groups) first_dev[n_dev_groups++] = d;
        c->dev_group[d] = g;
        size_dev[g]++;
    }
    int32_t *first_link = malloc(((size_t)ds->n_links + 1) * sizeof *first_link);
    int32_t *size_link = calloc((size_t)ds->n_links + 1, sizeof *size_link);
    c->link_group = malloc(((size_t)ds->n_links + 1) * sizeof *c->link_group);
    c->group_mask = calloc((size_t)n_dev_groups + 1, sizeof *c->group_mask);
    size_t cap = (size_t)n_dev_groups * (2 * N_FITTED_SLOTS + 3) + 2 * (size_t)ds->n_links + 1;
    c->params = malloc(cap * sizeof *c->params);
    if (!first_link || !size_link || !c->link_group || !c->group_mask || !c->params) {
        free(first_link), free(size_link);
        return dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory");
    }
    for (int32_t l = 0; l < ds->n_links; l++) {
        const dp_link *a = &ds->links[l];
        int32_t g = 0;
        for (; g < n_link_groups; g++) {
            const dp_link *b = &ds->links[first_link[g]];
            if (a->bandwidth == b->bandwidth && a->latency_s == b->latency_s && a->efficiency == b->efficiency) break;
        }
        if (g == n_link_groups) first_link[n_link_groups++] = l;
        c->link_group[l] = g;
        size_link[g]++;
    }
    for (int32_t d = 0; d < ds->n_devices; d++)
        c->group_mask[c->dev_group[d]] |= 1ULL << d;
    char gname[DP_CALIB_NAME_MAX - 24]; /* and a parameter's suffix */
    int32_t host = host_of(c);
    for (int32_t g = 0; g < n_dev_groups; g++) {
        const dp_device *v = &ds->devices[first_dev[g]];
        if (size_dev[g] > 1)
            snprintf(gname, sizeof gname, "%s (+%d)", v->name, (int)size_dev[g] - 1);
        else
            snprintf(gname, sizeof gname, "%s", v->name);
        for (int k = 0; k < N_FITTED_SLOTS; k++) {
            int s = fitted_slots[k];
            dp_calib_param *p =
                add_param(c, DP_CALIB_PARAM_COMPUTE, s, first_dev[g], size_dev[g], gname, v->eff[s].compute);
            set_bounds(p, p->prior, 10, 1e-4, DP_DEVICES_MAX_EFFICIENCY);
            p = add_param(c, DP_CALIB_PARAM_MEMORY, s, first_dev[g], size_dev[g], gname, v->eff[s].memory);
            set_bounds(p, p->prior, 10, 1e-4, DP_DEVICES_MAX_EFFICIENCY);
        }
        dp_calib_param *p =
            add_param(c, DP_CALIB_PARAM_LAUNCH, 0, first_dev[g], size_dev[g], gname, v->launch_overhead_s);
        set_bounds(p, p->prior > 0 ? p->prior : 1e-6, 100, 1e-9, 1.0);
        if (first_dev[g] == host) { /* the eager executor's host */
            p = add_param(c, DP_CALIB_PARAM_DISPATCH, 0, first_dev[g], size_dev[g], gname, v->dispatch_s);
            set_bounds(p, p->prior > 0 ? p->prior : 1e-6, 100, 1e-9, 1.0);
            p = add_param(c, DP_CALIB_PARAM_SWITCH, 0, first_dev[g], size_dev[g], gname, v->switch_s);
            set_bounds(p, p->prior > 0 ? p->prior : 1e-6, 100, 1e-9, 1.0);
        }
    }
    for (int32_t g = 0; g < n_link_groups; g++) {
        const dp_link *l = &ds->links[first_link[g]];
        snprintf(gname, sizeof gname, "link %s -> %s", ds->devices[l->from].name, ds->devices[l->to].name);
        if (size_link[g] > 1)
            snprintf(gname + strlen(gname), sizeof gname - strlen(gname), " (+%d)", (int)size_link[g] - 1);
        dp_calib_param *p =
            add_param(c, DP_CALIB_PARAM_LINK_EFFICIENCY, 0, first_link[g], size_link[g], gname, l->efficiency);
        set_bounds(p, p->prior, 20, 0.01, 1.0);
        p = add_param(c, DP_CALIB_PARAM_LINK_LATENCY, 0, first_link[g], size_link[g], gname, l->latency_s);
        set_bounds(p, p->prior > 0 ? p->prior : 1e-6, 100, 1e-9, 10.0);
    }
    free(first_link), free(size_link);
    return DP_STATUS_OK;
}

/* Sets every parameter's value (value[p]) on the working set. */
static void apply(calib_ctx *c, const double *value) {
    dp_devices *ds = c->work;
    for (int32_t k = 0; k < c->P; k++) {
        const dp_calib_param *p = &c->params[k];
        double v = value[k];
        if (p->kind == DP_CALIB_PARAM_DISPATCH) {
            ds->devices[p->first].dispatch_s = v; /* the host alone: only the first CPU's is read */
        } else if (p->kind == DP_CALIB_PARAM_SWITCH) {
            ds->devices[p->first].switch_s = v;
        } else if (p->kind <= DP_CALIB_PARAM_LAUNCH) {
            int32_t g = c->dev_group[p->first];
            for (int32_t d = 0; d < ds->n_devices; d++) {
                if (c->dev_group[d] != g) continue;
                if (p->kind == DP_CALIB_PARAM_COMPUTE)
                    ds->devices[d].eff[p->slot].compute = v;
                else if (p->kind == DP_CALIB_PARAM_MEMORY)
                    ds->devices[d].eff[p->slot].memory = v;
                else
                    ds->devices[d].launch_overhead_s = v;
            }
        } else {
            int32_t g = c->link_group[p->first];
            for (int32_t l = 0; l < ds->n_links; l++) {
                if (c->link_group[l] != g) continue;
                if (p->kind == DP_CALIB_PARAM_LINK_EFFICIENCY)
                    ds->links[l].efficiency = v;
                else
                    ds->links[l].latency_s = v;
            }
        }
    }
}

/* Whether parameter k can change sample m's time: a device parameter when
 * the placement uses a device of its group, a link's when it uses two
 * devices or more; the host's dispatch cost when the graph runs eagerly,
 * its switch cost when it does so on the host and another device. */
static int affects(const calib_ctx *c, int32_t k, int32_t m) {
    const dp_calib_param *p = &c->params[k];
    uint64_t u = c->uses[m];
    int eager = c->graphs[c->samples[m].graph]->executor == DP_EXECUTOR_TORCH;
    if (p->kind == DP_CALIB_PARAM_DISPATCH) return eager;
    if (p->kind == DP_CALIB_PARAM_SWITCH) return eager && (u >> p->first & 1) && (u & ~(1ULL << p->first)) != 0;
    if (p->kind <= DP_CALIB_PARAM_LAUNCH) return (u & c->group_mask[c->dev_group[p->first]]) != 0;
    return (u & (u - 1)) != 0;
}

/* ---- simulating ------------------------------------------------------------------- */

/* log(step time) of every sample m with want[m] set (want NULL: all) and,
 * when k >= 0, affected by parameter k, into logt[m] (and the time itself
 * into secs[m] unless secs is NULL), under value[]. A
 * placement that breaks a constraint or splits a colocation group is an
 * error naming the sample. */
static dp_status simulate(calib_ctx *c, const double *value, const int8_t *want, int32_t k, double *logt, double *secs,
                          dp_error *err) {
    apply(c, value);
    for (int32_t g = 0; g < c->n_graphs; g++) {
        dp_sim *sim = NULL;
        for (int32_t m = 0; m < c->n_samples; m++) {
            const dp_calib_sample *s = &c->samples[m];
            if (s->graph != g || (want && !want[m]) || (k >= 0 && !affects(c, k, m))) continue;
            if (!sim && !(sim = dp_sim_init(c->graphs[g], c->work, err))) return err ? err->status : DP_STATUS_INVALID;
            dp_sim_result res;
            dp_status st = dp_sim_run(sim, s->placement, NULL, &res, err);
            if (!st && (res.verdict == DP_SIM_VERDICT_CONSTRAINT || res.verdict == DP_SIM_VERDICT_COLOCATION))
                st = dp_error_set(err, DP_STATUS_INVALID, "%s: the placement does not run: %s", s->label, res.reason);
            if (!st && !(res.step_time_s > 0 && isfinite(res.step_time_s)))
                st = dp_error_set(err, DP_STATUS_INVALID, "%s: the placement simulates to %g s", s->label,
                                  res.step_time_s);
            if (st) {
                dp_sim_free(sim);
                return st;
            }
            logt[m] = log(res.step_time_s);
            if (secs) secs[m] = res.step_time_s;
        }
        dp_sim_free(sim);
    }
    return DP_STATUS_OK;
}

/* ---- the fit ------------------------------------------------------------------------ */

/* The fit's working arrays over the free parameters (K of them) and the
 * fitted samples (the rows of the Jacobian). */
typedef struct fit_state {
    int32_t K, *free_idx;
    double *value;              /* [P] every parameter's value                          */
    double *u, *u0, *ulo, *uhi; /* [K] log values, start, bounds                    */
    double *logy, *logt;        /* [n_samples] measured and simulated logs               */
    double *J;                  /* [n_samples * K]                                      */
    double *A, *g, *du, *trial_logt, *trial_value;
    const int8_t *in_fit; /* [n_samples]                                          */
} fit_state;

/* The robust cost: Huber's loss of the log residuals of the fitted samples
 * plus the pull towards the start. */
static double fit_cost(const calib_ctx *c, const fit_state *f, const double *logt, const double *u, double delta,
                       double lambda) {
    double sum = 0;
    for (int32_t m = 0; m < c->n_samples; m++) {
        if (!f->in_fit[m]) continue;
        double r = fabs(logt[m] - f->logy[m]);
        sum += r <= delta ? 0.5 * r * r : delta * (r - 0.5 * delta);
    }
    for (int32_t k = 0; k < f->K; k++)
        sum += 0.5 * lambda * (u[k] - f->u0[k]) * (u[k] - f->u0[k]);
    return sum;
}

/* Column k of the Jacobian of the fitted samples' log times with respect
 * to log value of parameter p, by a step h (backwards at the upper bound),
 * into J[m * K + k]; samples the parameter cannot affect get 0. */
static dp_status jacobian_column(calib_ctx *c, fit_state *f, int32_t k, int32_t p, double h, double *J, dp_error *err) {
    double v = f->value[p], up = log(c->params[p].hi);
    double step = log(v) + h <= up + 1e-12 ? h : -h;
    memcpy(f->trial_value, f->value, sizeof(double) * (size_t)c->P);
    f->trial_value[p] = exp(log(v) + step);
    memcpy(f->trial_logt, f->logt, sizeof(double) * (size_t)c->n_samples);
    dp_status st = simulate(c, f->trial_value, f->in_fit, p, f->trial_logt, NULL, err);
    if (st) return st;
    for (int32_t m = 0; m < c->n_samples; m++)
        J[(size_t)m * f->K + k] = f->in_fit[m] ? (f->trial_logt[m] - f->logt[m]) / step : 0.0;
    return DP_STATUS_OK;
}

/* Solves the K x K system A x = b (A overwritten) by Gaussian elimination
 * with partial pivoting; returns -1 when A is singular. */
static int solve(double *A, double *b, int32_t K) {
    for (int32_t i = 0; i < K; i++) {
        int32_t piv = i;
        for (int32_t r = i + 1; r < K; r++)
            if (fabs(A[(size_t)r * K + i]) > fabs(A[(size_t)piv * K + i])) piv = r;
        if (!(fabs(A[(size_t)piv * K + i]) > 1e-300)) return -1;
        if (piv != i) {
            for (int32_t j = 0; j < K; j++) {
                double t = A[(size_t)i * K + j];
                A[(size_t)i * K + j] = A[(size_t)piv * K + j], A[(size_t)piv * K + j] = t;
            }
            double t = b[i];
            b[i] = b[piv], b[piv] = t;
        }
        for (int32_t r = i + 1; r < K; r++) {
            double q = A[(size_t)r * K + i] / A[(size_t)i * K + i];
            if (q == 0) continue;
            for (int32_t j = i; j < K; j++)
                A[(size_t)r * K + j] -= q * A[(size_t)i * K + j];
            b[r] -= q * b[i];
        }
    }
    for (int32_t i = K - 1; i >= 0; i--) {
        double s = b[i];
        for (int32_t j = i + 1; j < K; j++)
            s -= A[(size_t)i * K + j] * b[j];
        b[i] = s / A[(size_t)i * K + i];
    }
    return 0;
}

/* The normal equations of one Levenberg-Marquardt iteration at f->u:
 * A = J' W J + lambda I, g = J' W r + lambda (u - u0), W the Huber weights
 * of the residuals (iteratively reweighted). */
static void normal_equations(const calib_ctx *c, fit_state *f, double delta, double lambda) {
    int32_t K = f->K;
    memset(f->A, 0, sizeof(double) * (size_t)K * K);
    memset(f->g, 0, sizeof(double) * (size_t)K);
    for (int32_t m = 0; m < c->n_samples; m++) {
        if (!f->in_fit[m]) continue;
        double r = f->logt[m] - f->logy[m], w = fabs(r) <= delta ? 1.0 : delta / fabs(r);
        const double *Jm = f->J + (size_t)m * K;
        for (int32_t i = 0; i < K; i++) {
            if (Jm[i] == 0) continue;
            f->g[i] += w * Jm[i] * r;
            for (int32_t j = 0; j < K; j++)
                f->A[(size_t)i * K + j] += w * Jm[i] * Jm[j];
        }
    }
    for (int32_t i = 0; i < K; i++) {
        f->A[(size_t)i * K + i] += lambda;
        f->g[i] += lambda * (f->u[i] - f->u0[i]);
    }
}

/* One iteration: the Jacobian at f->u, then damped steps until one lowers
 * the cost (accepted: f->u, value, logt, *cost updated; *moved 2, or 1 when
 * the cost fell by rounding only) or the damping gives up (*moved 0). */
static dp_status lm_iteration(calib_ctx *c, fit_state *f, const dp_calib_options *o, double *mu, double *cost,
                              int *moved, dp_error *err) {
    int32_t K = f->K;
    *moved = 0;
    for (int32_t k = 0; k < K; k++) {
        dp_status st = jacobian_column(c, f, k, f->free_idx[k], FIT_STEP, f->J, err);
        if (st) return st;
    }
    normal_equations(c, f, o->huber, o->prior_weight);
    double *M = malloc(sizeof(double) * (size_t)K * K), *uu = malloc(sizeof(double) * (size_t)K);
    double *tl = malloc(sizeof(double) * (size_t)c->n_samples), *tv = malloc(sizeof(double) * (size_t)c->P);
    dp_status st =
        (M && uu && tl && tv) ? DP_STATUS_OK : dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory");
    for (int tries = 0; !st && tries < 12 && !*moved; tries++) {
        memcpy(M, f->A, sizeof(double) * (size_t)K * K);
        for (int32_t i = 0; i < K; i++) {
            M[(size_t)i * K + i] += *mu * (f->A[(size_t)i * K + i] + 1e-9);
            f->du[i] = -f->g[i];
        }
        if (solve(M, f->du, K)) {
            *mu *= 4;
            continue;
        }
        memcpy(tv, f->value, sizeof(double) * (size_t)c->P);
        for (int32_t i = 0; i < K; i++) {
            uu[i] = fmin(fmax(f->u[i] + f->du[i], f->ulo[i]), f->uhi[i]);
            tv[f->free_idx[i]] = exp(uu[i]);
        }
        memcpy(tl, f->logt, sizeof(double) * (size_t)c->n_samples);
        if ((st = simulate(c, tv, f->in_fit, -1, tl, NULL, err))) break;
        double nc = fit_cost(c, f, tl, uu, o->huber, o->prior_weight);
        if (nc < *cost) {
            *moved = 1 + (*cost - nc > 1e-10 * (*cost + 1e-12));
            *cost = nc;
            memcpy(f->u, uu, sizeof(double) * (size_t)K);
            memcpy(f->value, tv, sizeof(double) * (size_t)c->P);
            memcpy(f->logt, tl, sizeof(double) * (size_t)c->n_samples);
            *mu = fmax(*mu / 3, 1e-9);
        } else {
            *mu *= 4;
        }
    }
    free(M), free(uu), free(tl), free(tv);
    return st;
}

/* Chooses the held-out samples: a seeded shuffle, the first
 * floor(holdout x n) of it. */
static void choose_holdout(int32_t n, double holdout, uint64_t seed, int8_t *held) {
    int32_t *idx = malloc(((size_t)n + 1) * sizeof *idx);
    memset(held, 0, (size_t)n);
    if (!idx) return;
    for (int32_t i = 0; i < n; i++)
        idx[i] = i;
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)dp_rng_below(&rng, (uint64_t)i + 1), t = idx[i];
        idx[i] = idx[j], idx[j] = t;
    }
    int32_t h = (int32_t)floor(holdout * n + 1e-9);
    for (int32_t i = 0; i < h; i++)
        held[idx[i]] = 1;
    free(idx);
}

/* Checks the samples: graph indices, times, and the device of every op. */
static dp_status check_samples(const calib_ctx *c, dp_error *err) {
    if (c->n_samples < 1) return dp_error_set(err, DP_STATUS_INVALID, "calibrate: no measurements");
    for (int32_t m = 0; m < c->n_samples; m++) {
        const dp_calib_sample *s = &c->samples[m];
        if (s->graph < 0 || s->graph >= c->n_graphs)
            return dp_error_set(err, DP_STATUS_INVALID, "%s: graph %d of %d", s->label, (int)s->graph,
                                (int)c->n_graphs);
        if (!(s->seconds > 0 && isfinite(s->seconds)))
            return dp_error_set(err, DP_STATUS_INVALID,
                                "%s: the step time must be a positive number of seconds (got %g)", s->label,
                                s->seconds);
        const dp_graph *g = c->graphs[s->graph];
        for (int32_t i = 0; i < g->n_ops; i++)
            if (s->placement[i] < 0 || s->placement[i] >= c->stock->n_devices)
                return dp_error_set(err, DP_STATUS_INVALID, "%s: op %d is on device %d, not one of the %d", s->label,
                                    (int)i, (int)s->placement[i], (int)c->stock->n_devices);
    }
    return DP_STATUS_OK;
}

/* The sensitivity of every parameter at the prior over the fitted samples
 * (root mean square of d log t / d log value; a zero prior is screened from
 * its lower bound); marks those above the threshold determined and lists
 * them in f->free_idx, their count in f->K. */
static dp_status screen(calib_ctx *c, fit_state *f, const dp_calib_options *o, int32_t n_fit, dp_error *err) {
    double *col = malloc(sizeof(double) * (size_t)c->n_samples + 8);
    if (!col) return dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory");
    dp_status st = DP_STATUS_OK;
    int32_t n_free = 0;
    f->K = 1; /* jacobian_column writes col[m * K + k]: one column */
    for (int32_t p = 0; p < c->P && !st; p++) {
        dp_calib_param *q = &c->params[p];
        double v0 = f->value[p], v = fmin(fmax(v0, q->lo), q->hi);
        f->value[p] = v;
        if (v != v0) st = simulate(c, f->value, f->in_fit, p, f->logt, NULL, err);
        if (!st) st = jacobian_column(c, f, 0, p, SCREEN_STEP, col, err);
        double ss = 0;
        for (int32_t m = 0; m < c->n_samples; m++)
            ss += col[m] * col[m];
        q->sensitivity = sqrt(ss / (n_fit ? n_fit : 1));
        q->determined = q->sensitivity >= o->min_sensitivity && !q->kept;
        if (q->determined) f->free_idx[n_free++] = p;
        f->value[p] = v0;
        if (!st && v != v0) st = simulate(c, f->value, f->in_fit, p, f->logt, NULL, err);
    }
    f->K = n_free;
    free(col);
    return st;
}

/* Frees the fit's arrays. */
static void fit_state_free(fit_state *f) {
    void *a[] = {f->free_idx, f->value, f->u, f->u0, f->ulo, f->uhi,        f->logy,
                 f->logt,     f->J,     f->A, f->g,  f->du,  f->trial_logt, f->trial_value};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        free(a[i]);
}

/* Allocates the fit's arrays for P parameters and n samples. */
static dp_status fit_state_init(fit_state *f, int32_t P, int32_t n, dp_error *err) {
    memset(f, 0, sizeof *f);
    size_t p1 = (size_t)P + 1, n1 = (size_t)n + 1;
    f->free_idx = malloc(p1 * sizeof(int32_t));
    f->value = malloc(p1 * sizeof(double)), f->trial_value = malloc(p1 * sizeof(double));
    f->u = malloc(p1 * sizeof(double)), f->u0 = malloc(p1 * sizeof(double));
    f->ulo = malloc(p1 * sizeof(double)), f->uhi = malloc(p1 * sizeof(double));
    f->A = malloc(p1 * p1 * sizeof(double)), f->g = malloc(p1 * sizeof(double)), f->du = malloc(p1 * sizeof(double));
    f->logy = malloc(n1 * sizeof(double)), f->logt = malloc(n1 * sizeof(double));
    f->trial_logt = malloc(n1 * sizeof(double)), f->J = malloc(n1 * p1 * sizeof(double));
    if (!f->free_idx || !f->value || !f->trial_value || !f->u || !f->u0 || !f->ulo || !f->uhi || !f->A || !f->g ||
        !f->du || !f->logy || !f->logt || !f->trial_logt || !f->J) {
        fit_state_free(f);
        return dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory for %d parameters and %d samples", (int)P,
                            (int)n);
    }
    return DP_STATUS_OK;
}

/* Runs Levenberg-Marquardt from the free parameters' starting values until
 * a step no longer lowers the cost measurably or max_iters is reached. */
static dp_status run_fit(calib_ctx *c, fit_state *f, const dp_calib_options *o, int32_t *iterations, dp_error *err) {
    for (int32_t k = 0; k < f->K; k++) {
        const dp_calib_param *q = &c->params[f->free_idx[k]];
        f->value[f->free_idx[k]] = fmin(fmax(q->prior, q->lo), q->hi);
        f->u[k] = f->u0[k] = log(f->value[f->free_idx[k]]);
        f->ulo[k] = log(q->lo), f->uhi[k] = log(q->hi);
    }
    dp_status st = simulate(c, f->value, f->in_fit, -1, f->logt, NULL, err);
    if (st) return st;
    double cost = fit_cost(c, f, f->logt, f->u, o->huber, o->prior_weight), mu = 1e-3;
    *iterations = 0;
    for (int32_t it = 0; it < o->max_iters && f->K > 0; it++) {
        int moved = 0;
        if ((st = lm_iteration(c, f, o, &mu, &cost, &moved, err))) return st;
        *iterations = it + 1;
        if (moved < 2) break; /* no step lowered the cost, or only by rounding */
    }
    return DP_STATUS_OK;
}

/* Fills out from the fitted values: the parameters, the calibrated set (its
 * fitted efficiencies marked as its devices' own), the simulated times on
 * the stock and the fitted set, and the errors. */
static dp_status finish(calib_ctx *c, fit_state *f, dp_calib_result *out, dp_error *err) {
    for (int32_t p = 0; p < c->P; p++) {
        dp_calib_param *q = &c->params[p];
        if (!q->determined) f->value[p] = q->prior;
        /* an undetermined slot that follows another (grouped, depthwise)
         * takes that one's value, as the written file, which does not mark
         * it the device's own, resolves it; its leader's parameter comes
         * earlier. A kept one keeps its own, which the file marks own. */
        int lead = q->kind <= DP_CALIB_PARAM_MEMORY && !q->determined && !q->kept ? dp_devices_eff_follows(q->slot) : -1;
        for (int32_t k = 0; lead >= 0 && k < p; k++)
            if (c->params[k].kind == q->kind && c->params[k].first == q->first && c->params[k].slot == lead)
                f->value[p] = f->value[k];
        q->value = f->value[p];
        q->at_bound = q->determined && (q->value <= q->lo * 1.001 || q->value >= q->hi * 0.999);
    }
    dp_status st = simulate(c, f->value, NULL, -1, f->logt, out->fitted_s, err);
    if (st) return st;
    for (int32_t p = 0; p < c->P; p++) {
        const dp_calib_param *q = &c->params[p];
        if (!(q->determined || q->kept) || q->kind > DP_CALIB_PARAM_MEMORY) continue;
        for (int32_t d = 0; d < c->work->n_devices; d++)
            if (c->dev_group[d] == c->dev_group[q->first])
                c->work->devices[d].eff_own |= DP_EFF_OWN_BIT(q->slot, q->kind == DP_CALIB_PARAM_MEMORY);
    }
    double *meas = malloc(sizeof(double) * (size_t)c->n_samples + 8);
    if (!meas) return dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory");
    for (int32_t m = 0; m < c->n_samples; m++)
        meas[m] = c->samples[m].seconds;
    out->prior_fit_mape = dp_calib_mape(out->prior_s, meas, out->held_out, 0, c->n_samples);
    out->prior_holdout_mape = dp_calib_mape(out->prior_s, meas, out->held_out, 1, c->n_samples);
    out->fit_mape = dp_calib_mape(out->fitted_s, meas, out->held_out, 0, c->n_samples);
    out->holdout_mape = dp_calib_mape(out->fitted_s, meas, out->held_out, 1, c->n_samples);
    free(meas);
    out->calibrated = c->work;
    c->work = NULL;
    out->params = c->params;
    c->params = NULL;
    out->n_params = c->P;
    return DP_STATUS_OK;
}

/* Sets up the context: the samples checked, the devices each uses, the
 * working copy of the set and the parameters. */
static dp_status ctx_init(calib_ctx *c, const dp_graph *const *graphs, int32_t n_graphs, const dp_devices *stock,
                          const dp_calib_sample *samples, int32_t n, dp_error *err) {
    memset(c, 0, sizeof *c);
    c->graphs = graphs, c->n_graphs = n_graphs, c->stock = stock, c->samples = samples, c->n_samples = n;
    dp_status st = check_samples(c, err);
    if (st) return st;
    c->uses = calloc((size_t)n + 1, sizeof *c->uses);
    if (!c->uses) return dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory");
    for (int32_t m = 0; m < n; m++)
        for (int32_t i = 0; i < graphs[samples[m].graph]->n_ops; i++)
            c->uses[m] |= 1ULL << samples[m].placement[i];
    if (!(c->work = dp_devices_copy(stock, err))) return err ? err->status : DP_STATUS_NOMEM;
    return build_params(c, err);
}

/* Marks the parameters o->keep names (a whole name, or what follows the
 * group's name: its last word) kept; an entry that names none is an
 * error naming it. */
static dp_status mark_kept(calib_ctx *c, const dp_calib_options *o, dp_error *err) {
    for (int32_t k = 0; k < o->n_keep; k++) {
        const char *want = o->keep[k];
        int found = 0;
        for (int32_t p = 0; want && p < c->P; p++) {
            dp_calib_param *q = &c->params[p];
            const char *last = strrchr(q->name, ' ');
            if (!strcmp(q->name, want) || (last && !strcmp(last + 1, want))) q->kept = 1, found = 1;
        }
        if (!found)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "calibrate: keep \"%s\" names no parameter of this fit (a parameter's name, as "
                                "\"cpu:0 data.memory\", or its last word, as \"data.memory\")",
                                want ? want : "(null)");
    }
    return DP_STATUS_OK;
}

static void ctx_free(calib_ctx *c) {
    free(c->uses), free(c->link_group), free(c->group_mask), free(c->params);
    dp_devices_free(c->work);
}

dp_status dp_calib_fit(const dp_graph *const *graphs, int32_t n_graphs, const dp_devices *stock,
                       const dp_calib_sample *samples, int32_t n_samples, const dp_calib_options *o,
                       dp_calib_result *out, dp_error *err) {
    dp_calib_options def = dp_calib_options_default();
    if (!o) o = &def;
    memset(out, 0, sizeof *out);
    if (!(o->holdout >= 0 && o->holdout <= 0.9) || o->max_iters < 0 || !(o->min_sensitivity >= 0) || !(o->huber > 0) ||
        !(o->prior_weight >= 0) || o->n_keep < 0 || (o->n_keep && !o->keep))
        return dp_error_set(err, DP_STATUS_INVALID,
                            "calibrate: invalid options (hold-out in [0, 0.9], iterations >= 0, "
                            "sensitivity >= 0, Huber > 0, prior weight >= 0, a list of parameters to keep)");
    calib_ctx c;
    fit_state f;
    dp_status st = ctx_init(&c, graphs, n_graphs, stock, samples, n_samples, err);
    if (!st) st = mark_kept(&c, o, err);
    if (!st)
        st = fit_state_init(&f, c.P, n_samples, err);
    else
        memset(&f, 0, sizeof f);
    out->n_samples = n_samples;
    out->held_out = calloc((size_t)n_samples + 1, 1);
    out->prior_s = malloc(sizeof(double) * ((size_t)n_samples + 1));
    out->fitted_s = malloc(sizeof(double) * ((size_t)n_samples + 1));
    if (!st && (!out->held_out || !out->prior_s || !out->fitted_s))
        st = dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory");
    if (!st) {
        choose_holdout(n_samples, o->holdout, o->seed, out->held_out);
        for (int32_t m = 0; m < n_samples; m++) {
            out->n_holdout += out->held_out[m];
            f.logy[m] = log(samples[m].seconds);
        }
        out->n_fit = n_samples - out->n_holdout;
    }
    int8_t *in_fit = st ? NULL : malloc((size_t)n_samples + 1);
    if (!st && !in_fit) st = dp_error_set(err, DP_STATUS_NOMEM, "calibrate: out of memory");
    if (!st) {
        for (int32_t m = 0; m < n_samples; m++)
            in_fit[m] = !out->held_out[m];
        f.in_fit = in_fit;
        for (int32_t p = 0; p < c.P; p++)
            f.value[p] = c.params[p].prior;
        st = simulate(&c, f.value, NULL, -1, f.logt, out->prior_s, err); /* every sample runs: checked before the fit */
    }
    if (!st && out->n_fit < 1)
        st = dp_error_set(err, DP_STATUS_INVALID, "calibrate: every one of the %d measurements is held out",
                          (int)n_samples);
    if (!st) st = screen(&c, &f, o, out->n_fit, err);
    if (!st && out->n_fit < f.K)
        st = dp_error_set(err, DP_STATUS_INVALID,
                          "calibrate: %d measurements in the fit, fewer than the %d parameters they are sensitive to; "
                          "measure more placements (dplace calibrate --propose DIR) or hold fewer out",
                          (int)out->n_fit, (int)f.K);
    out->n_free = f.K;
    if (!st) st = run_fit(&c, &f, o, &out->iterations, err);
    if (!st) st = finish(&c, &f, out, err);
    free(in_fit);
    fit_state_free(&f);
    ctx_free(&c);
    if (st) dp_calib_result_free(out);
    return st;
}

void dp_calib_result_free(dp_calib_result *r) {
    if (!r) return;
    free(r->params), free(r->held_out), free(r->prior_s), free(r->fitted_s);
    dp_devices_free(r->calibrated);
    memset(r, 0, sizeof *r);
}
