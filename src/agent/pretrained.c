/* The pretrained placer as a method of the run driver: the zero-shot
 * samples as its preparation, policy-gradient fine-tuning on the user's
 * graph as its steps, the greedy placement of the policy as its final
 * answer. Samples are decoded on the evaluator's threads, each from a
 * random state of its own (seed, update, index), so that a run does not
 * depend on the number of threads. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "agent/pretrained_internal.h"

struct dp_pretrained {
    const dp_graph *g;
    const dp_devices *ds;
    dp_pretrained_options o;
    dp_pretrained_policy *policy;
    dp_pretrained_ctx *ctx;
    dp_pretrained_ctx *layers; /* whole layers (NULL: none, or no fewer units) */
    dp_agent_evaluator *eval;
    const volatile sig_atomic_t *cancel;
    int32_t threads, K; /* samples per batch: max of zero-shot chunk and samples */
    int32_t n_heavy;    /* the graph's heavy units (dp_pretrained_ctx_set_heavy_share) */
    int32_t n_heavy_layers; /* and layers                              */
    int phase;          /* zero-shot: 0 the policy's units, 1 whole layers */
    int64_t phase_done; /* samples of the current phase                */
    double phase_start; /* when it began (-1: not yet)                 */
    int32_t *place;     /* [K, n_ops]                                  */
    dp_pretrained_trace *tr; /* [K]                                    */
    dp_agent_eval_result *res;
    int *cached;
    dp_run_sample *last;
    int32_t *best;      /* [n_ops]                                     */
    dp_pretrained_grad *grad;
    dp_pretrained_grad **sgrad; /* [K] each sample's gradient, summed in
                                   sample order: no thread count changes it */
    dp_run_state st;
    double zs_best_s, zs_s; /* the zero-shot answer, once prepared */
    int64_t zs_samples;
};

#define PT(f) 0, offsetof(dp_pretrained_options, f)
#define NUM(lo, hi) lo, hi, NULL, 0

static const dp_setting rows[] = {
    {"zero-shot", DP_SETTING_INT, PT(zero_shot), NUM(0, 100000), 0, 0,
     "placements the trained policy samples before fine-tuning (its zero-shot answer: the greedy one and the best "
     "of these)", "4096"},
    {"zero-shot-time", DP_SETTING_SECONDS, PT(zero_shot_s), NUM(0, 1e9), 0, 0,
     "and at most this long for them", "3s"},
    {"tune-samples", DP_SETTING_INT, PT(samples), NUM(2, 1024), 0, 0,
     "placements per fine-tuning update (REINFORCE, advantages normalised over them)", "16"},
    {"tune-lr", DP_SETTING_DOUBLE, PT(lr), NUM(0, 1), 0, 0, "Adam's rate when fine-tuning", "0.0001"},
    {"tune-clip", DP_SETTING_DOUBLE, PT(clip), NUM(0, 1e6), 0, 0, "gradient norm clip when fine-tuning (0: none)",
     "1"},
    {"sample-temperature", DP_SETTING_DOUBLE, PT(temp), NUM(1e-3, 100), 0, 0, "sampling temperature of the policy", "0.5"},
    {"opening-temperature", DP_SETTING_DOUBLE, PT(open_temp), NUM(0, 100), 0, 0,
     "every other zero-shot sample draws only the device a layer opens on, at this temperature (0: none)", "2"},
    {"layer-time", DP_SETTING_SECONDS, PT(layer_s), NUM(0, 1e9), 0, 0,
     "then as many placements again, within this long, decided a whole layer at a time (0: none)", "3s"},
    {"heavy-share", DP_SETTING_DOUBLE, PT(heavy_share), NUM(0, 100), 0, 0,
     "a quarter of the zero-shot samples draw uniformly the device of each unit whose compute is at least this share "
     "of a GPU's share of the graph's work, and follow the policy elsewhere (0: none)", "0.1"},
};
enum { N_ROWS = sizeof rows / sizeof rows[0] };
#undef PT
#undef NUM

const dp_setting *dp_pretrained_options_rows(int32_t *n) {
    if (n) *n = N_ROWS;
    return rows;
}

dp_pretrained_options dp_pretrained_options_default(void) {
    dp_pretrained_options o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    dp_setting_rows_base(rows, N_ROWS, &o);
    return o;
}

void dp_pretrained_free(dp_pretrained *pt) {
    if (!pt) return;
    dp_pretrained_policy_free(pt->policy);
    dp_pretrained_ctx_free(pt->ctx);
    dp_pretrained_ctx_free(pt->layers);
    dp_agent_evaluator_free(pt->eval);
    for (int32_t k = 0; pt->tr && k < pt->K; k++) dp_pretrained_trace_free(&pt->tr[k]);
    free(pt->tr), free(pt->place), free(pt->res), free(pt->cached), free(pt->last), free(pt->best);
    dp_pretrained_grad_free(pt->grad);
    for (int32_t k = 0; pt->sgrad && k < pt->K; k++) dp_pretrained_grad_free(pt->sgrad[k]);
    free(pt->sgrad);
    free(pt);
}

dp_pretrained *dp_pretrained_init(const dp_graph *g, const dp_devices *ds, dp_pretrained_policy *policy,
                                  const dp_pretrained_options *o, const dp_agent_eval_options *eo, dp_error *err) {
    dp_pretrained *pt = calloc(1, sizeof *pt);
    if (!pt) {
        dp_pretrained_policy_free(policy);
        dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory");
        return NULL;
    }
    pt->policy = policy;
    pt->g = g, pt->ds = ds, pt->o = o ? *o : dp_pretrained_options_default();
    if (!policy || pt->o.zero_shot < 0 || pt->o.samples < 2 || pt->o.samples > 1024 || !(pt->o.temp > 0) || !(pt->o.lr >= 0) ||
        !(pt->o.open_temp >= 0) || !(pt->o.heavy_share >= 0)) {
        dp_error_set(err, DP_STATUS_INVALID, "pretrained: no policy, or options out of range");
        dp_pretrained_free(pt);
        return NULL;
    }
    pt->threads = eo && eo->threads > 0 ? eo->threads : 1;
    pt->cancel = eo ? eo->cancel : NULL;
    pt->K = pt->o.samples > pt->threads * 4 ? pt->o.samples : pt->threads * 4;
    size_t n = (size_t)g->n_ops + 1, K = (size_t)pt->K;
    if (!(pt->ctx = dp_pretrained_ctx_init(g, ds, pt->o.units, err)) ||
        !(pt->eval = dp_agent_evaluator_init(g, ds, eo, err)) || !(pt->grad = dp_pretrained_grad_init(policy, err))) {
        dp_pretrained_free(pt);
        return NULL;
    }
    pt->n_heavy = dp_pretrained_ctx_set_heavy_share(pt->ctx, pt->o.heavy_share);
    if (pt->o.layer_s > 0 && pt->o.zero_shot > 0) {
        if (!(pt->layers = dp_pretrained_ctx_init_layers(pt->ctx, err))) {
            dp_pretrained_free(pt);
            return NULL;
        }
        if (dp_pretrained_ctx_units(pt->layers) >= dp_pretrained_ctx_units(pt->ctx)) {
            dp_pretrained_ctx_free(pt->layers);
            pt->layers = NULL;
        } else {
            pt->n_heavy_layers = dp_pretrained_ctx_set_heavy_share(pt->layers, pt->o.heavy_share);
        }
    }
    pt->place = malloc(sizeof(int32_t) * n * K);
    pt->tr = calloc(K, sizeof *pt->tr);
    pt->res = calloc(K, sizeof *pt->res);
    pt->cached = calloc(K, sizeof(int));
    pt->last = calloc(K, sizeof *pt->last);
    pt->best = malloc(sizeof(int32_t) * n);
    pt->sgrad = calloc(K, sizeof *pt->sgrad);
    if (!pt->place || !pt->tr || !pt->res || !pt->cached || !pt->last || !pt->best || !pt->sgrad) {
        dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory");
        dp_pretrained_free(pt);
        return NULL;
    }
    pt->st.best_s = INFINITY, pt->st.final_s = NAN, pt->st.baseline = NAN;
    pt->st.best_update = pt->st.best_sample = -1;
    pt->st.n_groups = dp_pretrained_ctx_units(pt->ctx);
    pt->st.prep_total = pt->o.zero_shot + (pt->layers ? pt->o.zero_shot : 0);
    pt->st.last = pt->last;
    pt->phase_start = -1;
    return pt;
}

/* ---- sampling ------------------------------------------------------------- */

typedef struct decode_job {
    dp_pretrained *pt;
    const dp_pretrained_ctx *ctx; /* the units decoded                     */
    int32_t n_heavy;              /* and how many of them are heavy        */
    int32_t first, n, stride; /* samples first, first + stride, ... (n of them) */
    int record;
    uint64_t stream;          /* the random stream: 0 zero-shot, 1 + update    */
    int64_t base;             /* the stream's index of sample 0 of the batch  */
    dp_status st;
    dp_error err;
} decode_job;

/* The kind of zero-shot sample `index` is, and (temp, when not NULL) its
 * temperature: the odd
 * ones vary which device each layer opens on and follow the policy's
 * choice elsewhere; where the graph has heavy units, every fourth (2, 6,
 * ...) draws their devices instead of every decision's; the others draw
 * every decision. A sample's kind follows from its index alone, so threads
 * and chunks never change it. */
static dp_pretrained_mode zero_shot_mode(const dp_pretrained *pt, int32_t n_heavy, int64_t index, double *temp) {
    dp_pretrained_mode mode = DP_PRETRAINED_SAMPLE;
    if (n_heavy > 0 && index % 4 == 2) mode = DP_PRETRAINED_HEAVY;
    else if (pt->o.open_temp > 0 && index % 2 == 1) mode = DP_PRETRAINED_OPENINGS;
    if (temp) *temp = mode == DP_PRETRAINED_OPENINGS ? pt->o.open_temp : pt->o.temp;
    return mode;
}

static void *decode_run(void *arg) {
    decode_job *j = arg;
    dp_pretrained *pt = j->pt;
    size_t n = (size_t)pt->g->n_ops;
    for (int32_t x = 0; x < j->n && !j->st; x++) {
        int32_t k = j->first + x * j->stride;
        dp_rng rng;
        /* a sample's random state is its index in its stream's, whatever
         * the chunks and threads the run driver and the machine make */
        dp_rng_seed(&rng, pt->o.seed * 0x9e3779b97f4a7c15ULL ^ (j->stream << 32) ^ (uint64_t)(j->base + k));
        if (j->record && !pt->tr[k].steps) j->st = dp_pretrained_trace_init(&pt->tr[k], j->ctx, &j->err);
        /* zero-shot samples by their kind; fine-tuning samples draw every
         * decision, as REINFORCE's gradient assumes */
        double temp = pt->o.temp;
        dp_pretrained_mode mode = j->record ? DP_PRETRAINED_SAMPLE : zero_shot_mode(pt, j->n_heavy, j->base + k, &temp);
        if (!j->st)
            j->st = dp_pretrained_decode(j->ctx, pt->policy, mode, temp, &rng, NULL,
                                         pt->place + (size_t)k * n, j->record ? &pt->tr[k] : NULL, NULL, &j->err);
    }
    return NULL;
}

/* Samples K placements of ctx's units (n_heavy of them heavy) into
 * pt->place (recording traces when `record`) on the threads, samples
 * base .. base + K - 1 of random stream `stream`. */
static dp_status sample(dp_pretrained *pt, const dp_pretrained_ctx *ctx, int32_t n_heavy, int32_t K, int record,
                        uint64_t stream, int64_t base, dp_error *err) {
    decode_job jobs[256];
    int32_t T = pt->threads < K ? pt->threads : K;
    if (T > 256) T = 256;
    for (int32_t t = 0; t < T; t++)
        jobs[t] = (decode_job){pt, ctx, n_heavy, t, (K - t + T - 1) / T, T, record, stream, base, DP_STATUS_OK, {0}};
    dp_run_jobs(decode_run, jobs, sizeof jobs[0], T);
    for (int32_t t = 0; t < T; t++)
        if (jobs[t].st) {
            *err = jobs[t].err;
            return jobs[t].st;
        }
    return DP_STATUS_OK;
}

/* Offers placement k of pt->place (result r) as the best. */
static void offer(dp_pretrained *pt, int32_t k, const dp_agent_eval_result *r, int32_t by) {
    if (!r->valid || !(r->step_time_s < pt->st.best_s)) return;
    pt->st.best_s = r->step_time_s;
    pt->st.best_update = pt->st.updates;
    pt->st.best_sample = pt->st.samples;
    pt->st.best_elapsed_s = pt->st.elapsed_s;
    pt->st.best_by = by;
    memcpy(pt->best, pt->place + (size_t)k * pt->g->n_ops, sizeof(int32_t) * (size_t)pt->g->n_ops);
    pt->st.best_placement = pt->best;
}

/* Evaluates the first K placements of pt->place into pt->res. */
static dp_status evaluate(dp_pretrained *pt, int32_t K, int *cancelled, dp_error *err) {
    *cancelled = 0;
    return dp_agent_evaluate(pt->eval, pt->place, K, pt->res, pt->cached, cancelled, err);
}

/* ---- the method ----------------------------------------------------------- */

/* The greedy placement of ctx's units, its memory fitted: while the
 * simulator finds it out of memory by a share x, the decoder's memory is
 * scaled by 1 / (1.05 (1 + x)) and it is decoded again (at most 6 times);
 * each evaluated and offered as found by `by`. The scale stays for the
 * samples and the fine-tuning. */
static dp_status greedy_fitted(dp_pretrained *pt, dp_pretrained_ctx *ctx, int32_t by, dp_error *err) {
    double scale = 1;
    for (int tries = 0; tries < 6; tries++) {
        int cancelled = 0;
        dp_status st = dp_pretrained_decode(ctx, pt->policy, DP_PRETRAINED_GREEDY, 1, NULL, NULL, pt->place,
                                            NULL, NULL, err);
        if (!st) st = evaluate(pt, 1, &cancelled, err);
        if (st || cancelled) return st;
        offer(pt, 0, &pt->res[0], by);
        pt->st.samples++;
        if (pt->res[0].valid || !(pt->res[0].overflow > 0)) break;
        scale /= 1.05 * (1 + pt->res[0].overflow);
        dp_pretrained_ctx_set_memory_scale(ctx, scale);
    }
    return DP_STATUS_OK;
}

/* The random stream of the whole-layer phase's samples: apart from the
 * first phase's (0) and the fine-tuning updates' (1 + update). */
#define LAYER_STREAM 0xffffffffULL

/* The zero-shot answer, a chunk at a time, in two phases. First the
 * policy's own units: the greedy placement (greedy_fitted), then samples,
 * until zero_shot of them or zero_shot_s seconds. Then, where the graph
 * has layers (pt->layers), the same again with a whole layer as one
 * decision, until zero_shot more or layer_s seconds: where the policy
 * spreads a layer's units or stacks layers on one device, these try each
 * layer whole on other devices (docs/design/pretrained-placer.md). A
 * sample's kind follows from its index in its phase. */
static dp_status pt_prepare(void *self, int64_t max_iters, dp_error *err) {
    dp_pretrained *pt = self;
    double t0 = dp_now_s();
    if (pt->phase_start < 0) pt->phase_start = t0;
    int layers = pt->phase == 1;
    dp_pretrained_ctx *ctx = layers ? pt->layers : pt->ctx;
    int32_t n_heavy = layers ? pt->n_heavy_layers : pt->n_heavy;
    int32_t K = (int32_t)(max_iters < pt->K ? max_iters : pt->K);
    if (K > pt->o.zero_shot - pt->phase_done) K = (int32_t)(pt->o.zero_shot - pt->phase_done);
    if (K < 1) K = 1;
    dp_status st = DP_STATUS_OK;
    if (pt->phase_done == 0) st = greedy_fitted(pt, ctx, layers ? DP_RUN_BEST_BY_LAYERS : DP_RUN_BEST_BY_GREEDY, err);
    if (!st) st = sample(pt, ctx, n_heavy, K, 0, layers ? LAYER_STREAM : 0, pt->phase_done, err);
    int cancelled = 0;
    if (!st) st = evaluate(pt, K, &cancelled, err);
    if (st || cancelled) return st;
    for (int32_t k = 0; k < K; k++) {
        dp_pretrained_mode mode = zero_shot_mode(pt, n_heavy, pt->phase_done + k, NULL);
        offer(pt, k, &pt->res[k],
              layers                           ? DP_RUN_BEST_BY_LAYERS
              : mode == DP_PRETRAINED_HEAVY    ? DP_RUN_BEST_BY_HEAVY_DRAW
              : mode == DP_PRETRAINED_OPENINGS ? DP_RUN_BEST_BY_OPENING_DRAW
                                               : DP_RUN_BEST_BY_SAMPLE);
        pt->st.samples++;
    }
    pt->st.prep_done += K, pt->phase_done += K;
    double now = dp_now_s();
    pt->st.prep_s += now - t0;
    if (pt->phase_done >= pt->o.zero_shot || now - pt->phase_start >= (layers ? pt->o.layer_s : pt->o.zero_shot_s)) {
        /* the phase is over: the next one, or the end */
        if (!layers && pt->layers) {
            pt->phase = 1, pt->phase_done = 0, pt->phase_start = -1;
            pt->st.prep_total = pt->st.prep_done + pt->o.zero_shot;
        } else {
            pt->st.prep_total = pt->st.prep_done;
        }
    }
    pt->zs_best_s = pt->st.best_s, pt->zs_s = pt->st.prep_s, pt->zs_samples = pt->st.samples;
    return DP_STATUS_OK;
}

static double reward_of(const dp_agent_eval_result *r) {
    return r->valid && r->step_time_s > 0 ? -log(r->step_time_s) : NAN;
}

typedef struct grad_job {
    dp_pretrained *pt;
    int32_t first, stride, K;
    const double *weight; /* [K] */
    double entropy;       /* summed over its samples */
} grad_job;

static void *grad_run(void *arg) {
    grad_job *j = arg;
    for (int32_t k = j->first; k < j->K; k += j->stride) {
        dp_pretrained_grad_zero(j->pt->sgrad[k]);
        j->entropy += dp_pretrained_grad_add(j->pt->sgrad[k], j->pt->policy, &j->pt->tr[k], j->weight[k]);
    }
    return NULL;
}

/* The gradient of the K samples' weighted log-probabilities into pt->grad:
 * each sample's on the threads, summed in sample order. Returns the mean
 * entropy, or NAN out of memory. */
static double gradient(dp_pretrained *pt, int32_t K, const double *weight) {
    dp_error err;
    for (int32_t k = 0; k < K; k++)
        if (!pt->sgrad[k] && !(pt->sgrad[k] = dp_pretrained_grad_init(pt->policy, &err))) return NAN;
    int32_t T = pt->threads < K ? pt->threads : K;
    if (T > 64) T = 64;
    grad_job jobs[64];
    for (int32_t t = 0; t < T; t++) jobs[t] = (grad_job){pt, t, T, K, weight, 0};
    dp_run_jobs(grad_run, jobs, sizeof jobs[0], T);
    double ent = 0;
    dp_pretrained_grad_zero(pt->grad);
    for (int32_t k = 0; k < K; k++) dp_pretrained_grad_merge(pt->grad, pt->sgrad[k]);
    for (int32_t t = 0; t < T; t++) ent += jobs[t].entropy;
    return ent / K;
}

/* One policy-gradient update: o.samples placements sampled and recorded,
 * evaluated, advantages normalised over them (a placement that is not
 * valid gets the worst valid reward less one), one Adam step. */
static dp_status pt_step(void *self, dp_error *err) {
    dp_pretrained *pt = self;
    double t0 = dp_now_s();
    int32_t K = pt->o.samples;
    dp_status st = sample(pt, pt->ctx, pt->n_heavy, K, 1, 1 + (uint64_t)pt->st.updates, 0, err);
    double t1 = dp_now_s();
    int cancelled = 0;
    if (!st) st = evaluate(pt, K, &cancelled, err);
    if (st || cancelled) {
        pt->st.n_last = 0;
        return st;
    }
    double t2 = dp_now_s(), rw[1024], worst = INFINITY, mean = 0, sd = 0, times[1024];
    int32_t valid = 0, hits = 0;
    for (int32_t k = 0; k < K; k++) {
        rw[k] = reward_of(&pt->res[k]);
        if (!isnan(rw[k])) times[valid++] = pt->res[k].step_time_s, worst = fmin(worst, rw[k]);
        hits += pt->cached[k];
    }
    if (!isfinite(worst)) worst = 0;
    for (int32_t k = 0; k < K; k++) {
        if (isnan(rw[k])) rw[k] = worst - 1 - fmin(pt->res[k].overflow, 10.0);
        mean += rw[k] / K;
    }
    for (int32_t k = 0; k < K; k++) sd += (rw[k] - mean) * (rw[k] - mean) / K;
    sd = sqrt(sd);
    double weight[1024];
    for (int32_t k = 0; k < K; k++) weight[k] = (sd > 1e-12 ? (rw[k] - mean) / sd : 0) / K;
    double ent = gradient(pt, K, weight);
    if (isnan(ent)) return dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory for gradients");
    for (int32_t k = 0; k < K; k++) {
        dp_run_sample *x = &pt->last[k];
        x->step_time_s = pt->res[k].step_time_s, x->valid = pt->res[k].valid, x->reward = rw[k];
        x->used = 1, x->cached = pt->cached[k];
        snprintf(x->reason, sizeof x->reason, "%s", pt->res[k].reason);
    }
    double norm = dp_pretrained_grad_step(pt->grad, pt->policy, pt->o.lr, pt->o.clip);
    double t3 = dp_now_s();
    for (int32_t k = 0; k < K; k++) {
        offer(pt, k, &pt->res[k], DP_RUN_BEST_BY_SAMPLE);
        pt->st.samples++;
    }
    /* the median of the valid samples' times (insertion sort: K is small) */
    for (int32_t i = 1; i < valid; i++)
        for (int32_t j = i; j > 0 && times[j] < times[j - 1]; j--) {
            double t = times[j];
            times[j] = times[j - 1], times[j - 1] = t;
        }
    dp_run_update *u = &pt->st.upd;
    double msum = 0;
    for (int32_t i = 0; i < valid; i++) msum += times[i];
    *u = (dp_run_update){K, valid, hits, valid ? msum / valid : NAN,
                         valid ? (valid % 2 ? times[valid / 2] : (times[valid / 2 - 1] + times[valid / 2]) / 2) : NAN,
                         {NAN, ent}, 0, 1, {NAN, norm}, NAN, NAN, 0, NAN};
    pt->st.baseline = mean;
    pt->st.n_last = K;
    pt->st.updates++;
    pt->st.elapsed_s += t3 - t0, pt->st.policy_s += (t1 - t0) + (t3 - t2), pt->st.eval_s += t2 - t1;
    return DP_STATUS_OK;
}

static const dp_run_state *pt_state(const void *self) { return &((const dp_pretrained *)self)->st; }

static dp_status pt_save(const void *self, const char *path, dp_error *err) {
    (void)self;
    return dp_error_set(err, DP_STATUS_UNSUPPORTED,
                        "%s: the pretrained placer keeps no checkpoint (its runs are short; save its policy instead)",
                        path);
}

static dp_status pt_load(void *self, const char *path, dp_error *err) { return pt_save(self, path, err); }

/* The greedy placement of the policy as it is now, offered as the best. */
static dp_status pt_final(void *self, dp_error *err) {
    dp_pretrained *pt = self;
    pt->st.final_s = NAN;
    dp_status st = dp_pretrained_decode(pt->ctx, pt->policy, DP_PRETRAINED_GREEDY, 1, NULL, NULL, pt->place, NULL,
                                        NULL, err);
    int cancelled = 0;
    if (!st) st = evaluate(pt, 1, &cancelled, err);
    if (st || cancelled) return st;
    pt->st.final_s = pt->res[0].valid ? pt->res[0].step_time_s : INFINITY;
    double before = pt->st.best_s;
    offer(pt, 0, &pt->res[0], DP_RUN_BEST_BY_GREEDY);
    if (pt->st.best_s < before) pt->st.best_final = 1;
    return DP_STATUS_OK;
}

static size_t pt_describe(const void *self, char *buf, size_t size) {
    const dp_pretrained *pt = self;
    return (size_t)snprintf(buf, size, "zero-shot %lld/%lld  best %.6g s", (long long)pt->st.prep_done,
                            (long long)pt->st.prep_total, pt->st.best_s);
}

static const dp_method_ops pt_ops = {"pretrained", pt_step, pt_prepare, pt_state, pt_save, pt_load, pt_final,
                                     pt_describe};

dp_method dp_pretrained_method(dp_pretrained *pt) {
    dp_method m = {&pt_ops, pt};
    return m;
}

void dp_pretrained_zero_shot(const dp_pretrained *pt, double *best_s, double *seconds, int64_t *placements) {
    *best_s = pt->zs_samples ? pt->zs_best_s : INFINITY, *seconds = pt->zs_s, *placements = pt->zs_samples;
}

int32_t dp_pretrained_layer_units(const dp_pretrained *pt) {
    return pt->layers ? dp_pretrained_ctx_units(pt->layers) : 0;
}

const dp_pretrained_policy *dp_pretrained_get_policy(const dp_pretrained *pt) { return pt->policy; }
