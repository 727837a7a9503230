/* dplace: the run driver. A method that improves a placement step by step
 * (a learned agent's policy update; later a search's round of moves) is
 * driven by one loop that owns what every long run needs:
 *
 *   budgets      updates, placements evaluated, wall time
 *   preparation  work before the first step (an encoder's pre-training),
 *                in chunks of about a second, inside the time budget
 *   outputs      the per-sample log (CSV; truncated to the checkpoint on
 *                resume), the best placement (rewritten atomically when it
 *                improves), the training-curve SVG
 *   checkpoints  every N steps or S seconds, at the end and when the cancel
 *                flag stops the run; a resumed run ends as the run that was
 *                not interrupted
 *   cancellation a flag (set by a signal handler, say): the step in flight
 *                is abandoned, leaving the method as before it
 *   progress     callbacks after each chunk of preparation and each step
 *
 * so that the CLI, the benchmarks and any later front end (a distributed
 * run) run methods the same way. A method plugs in through dp_method_ops. */
#ifndef DPLACE_RUN_H
#define DPLACE_RUN_H

#include <signal.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/plot.h"
#include "dplace/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One evaluated placement of the last step. */
typedef struct dp_run_sample {
    double step_time_s;  /* NaN when it could not be measured               */
    int valid;
    char reason[192];    /* "" when valid                                   */
    double reward;
    int used;            /* contributed to the update                       */
    int cached;
} dp_run_sample;

/* What the last step did to the policy (learned methods; NaN where a
 * figure does not apply), so that learning can be seen, not guessed from
 * the best so far. */
typedef struct dp_run_update {
    int32_t samples, valid;   /* placements sampled, of which valid            */
    int32_t cache_hits;       /* answered by the evaluator's cache             */
    double mean_s, median_s;  /* of the valid samples' step times (NaN: none)  */
    double entropy[2];        /* mean entropy per decision when sampling: [0] the
                                 encoder's (a learned grouper), [1] the placer's */
    double adv_mean, adv_std; /* advantages of the samples that trained        */
    double grad_norm[2];      /* gradient norm before clipping, mean over the
                                 step's optimiser steps: [0] the encoder's
                                 network, [1] the placer's                     */
    double kl;                /* estimated KL(before || after) of the policy over
                                 the step: the mean over the step's samples of
                                 log p_before - log p_after                    */
    double elite_s;         /* elite walks: the best walk's end's step
                                 time (NaN: none, or out of memory)            */
    int32_t elite_sims;      /* moves it simulated (beyond the samples)       */
    double greedy_s;         /* the policy's greedy placement before the step
                                (greedy-every): its step time (NaN: not
                                evaluated; inf: not valid)                  */
} dp_run_update;

/* What found a run's best placement (dp_run_state.best_by). */
typedef enum dp_run_best_by {
    DP_RUN_BEST_BY_NONE,      /* no valid placement yet                        */
    DP_RUN_BEST_BY_SAMPLE,    /* a placement sampled from the policy           */
    DP_RUN_BEST_BY_WALK,      /* an elite walk from a sample                   */
    DP_RUN_BEST_BY_KEPT_WALK, /* elite-keep: the walk from the best elite      */
    DP_RUN_BEST_BY_GREEDY,    /* the policy's greedy placement                 */
    DP_RUN_BEST_BY_START,     /* the search's start (a baseline, the expert,
                                 --init-placement)                             */
    DP_RUN_BEST_BY_SEARCH,    /* a search move                                 */
    DP_RUN_BEST_BY_OPENING_DRAW, /* pretrained zero-shot: a sample drawn only
                                    where layers open                          */
    DP_RUN_BEST_BY_HEAVY_DRAW,   /* pretrained zero-shot: a sample drawing the
                                    heavy units' devices                       */
    DP_RUN_BEST_BY_LAYERS,       /* pretrained zero-shot: a placement decided
                                    a whole layer at a time                    */
    DP_RUN_BEST_BY_COUNT
} dp_run_best_by;

/* Where a method stands. */
typedef struct dp_run_state {
    int64_t updates;          /* steps done (policy updates)               */
    int64_t samples;          /* placements evaluated                      */
    double baseline;          /* reward baseline after the last update     */
    double best_s;            /* best valid step time so far (inf: none)    */
    int64_t best_update, best_sample; /* when it was found (sample index)  */
    double best_elapsed_s;    /* training seconds when it was found        */
    int32_t best_by;          /* what found it (dp_run_best_by)            */
    double elapsed_s;         /* training seconds in all (across resumes)  */
    double policy_s, eval_s;  /* of which in the policy / the evaluator    */
    int64_t cache_lookups, cache_hits;
    int32_t n_groups;         /* elements the placer places                */
    int32_t groups_used;      /* groups holding ops in the last sample     */
    int32_t n_last;
    const dp_run_sample *last;     /* [n_last] the last step's samples     */
    dp_run_update upd;             /* and what it did to the policy        */
    const int32_t *best_placement; /* [n_ops], NULL until a valid sample   */
    /* the method's final answer (dp_method_ops.final) */
    double final_s;           /* its step time (NaN: not evaluated; inf: out of
                                 memory or not valid)                      */
    int best_final;           /* 1: the best is that answer, found after
                                 best_update updates and best_sample placements */
    /* preparation: the work before the first step (a learned agent's
     * pre-training and warm start), in the method's own units; what it
     * is doing: dp_method_ops.describe_prep */
    int64_t prep_done, prep_total;
    double prep_s;            /* seconds it took (not in elapsed_s)      */
} dp_run_state;

/* What the driver calls. self is the method's own object. */
typedef struct dp_method_ops {
    const char *kind;
    /* One step: its samples in the state's last (n_last). Errors only for
     * the method's own failures; when the cancel flag stops it, the step is
     * abandoned and the method left exactly as before it (n_last 0). */
    dp_status (*step)(void *self, dp_error *err);
    /* Up to max_iters more units of the work that comes before the steps
     * (the state's prep_done of prep_total); NULL when the method has none. */
    dp_status (*prepare)(void *self, int64_t max_iters, dp_error *err);
    const dp_run_state *(*state)(const void *self);
    /* The whole state, atomically; and back (unchanged on error). */
    dp_status (*save)(const void *self, const char *path, dp_error *err);
    dp_status (*load)(void *self, const char *path, dp_error *err);
    /* Once after the last step of a run that was not cancelled, after its
     * last checkpoint: evaluates the method's own answer beside its
     * samples (a learned policy's greedy placement) and offers it as the
     * best (the state's final_s, best_final). Not a sample: the counters
     * stay, checkpoints never hold it, and calling it again gives the same.
     * NULL when the method has none. */
    dp_status (*final)(void *self, dp_error *err);
    /* A line on where the preparation stands ("pre-training 120/1000  DGI
     * loss 0.6931  lowest 0.6902"), for progress; returns its length
     * (snprintf's rule). NULL when the method has no preparation. */
    size_t (*describe_prep)(const void *self, char *buf, size_t size);
} dp_method_ops;

typedef struct dp_method {
    const dp_method_ops *ops;
    void *self;
} dp_method;

/* What found a run's best placement, as every report names it ("sample",
 * "walk", "kept-walk", "greedy", "start", "search"; "none"), and in words
 * for a summary ("a search move"). Out of range: "none", "nothing". */
const char *dp_run_best_by_name(int32_t by);
const char *dp_run_best_by_words(int32_t by);

/* A training curve that can outlive one run: each sample a point, the
 * best so far, the mean per step. Runs given the same curve in turn (a
 * learned agent's, then the search after it) append to it, each after the
 * points already there, so that one picture shows the whole job. */
typedef struct dp_run_curve dp_run_curve;
dp_run_curve *dp_run_curve_init(void); /* NULL when out of memory */
void dp_run_curve_free(dp_run_curve *c);
/* The largest x so far (0: no point): where the next run's samples begin. */
double dp_run_curve_end(const dp_run_curve *c);

/* How the picture of a curve is labelled (dp_plot_curve's fields). */
typedef struct dp_run_plot {
    const char *title;
    const dp_plot_line *lines;
    int n_lines;
    const dp_plot_marker *markers;
    int n_markers;
    const char *best_label;
} dp_run_plot;
/* Writes c as an SVG at path, atomically (dp_plot_write_svg). */
dp_status dp_run_curve_write_svg(const dp_run_curve *c, const char *path, const dp_run_plot *p, dp_error *err);

typedef struct dp_run_options {
    const dp_graph *g;          /* for the placement files                       */
    const dp_devices *ds;
    int64_t max_updates;        /* < 0: no limit; counted from the first run       */
    int64_t max_samples;        /* < 0: no limit; stops after the step reaching it */
    double max_seconds;         /* < 0: no limit; from dp_run's start, preparation
                                   included; the step in flight is finished       */
    int steps_fit;              /* 1: no step begins that would end past max_seconds
                                   if it took as long as the step before it (for a
                                   phase whose overrun another phase pays)         */
    const char *best_path;      /* NULL, or the best placement (dplace-placement v1) */
    const char *log_path;       /* NULL, or one CSV row per sample                  */
    const char *update_log_path;/* NULL, or one CSV row per step: what it did to the
                                   policy (dp_run_update)                          */
    const char *checkpoint_path;/* NULL, or where the state is saved               */
    int64_t checkpoint_every;   /* steps between checkpoints (<= 0: 50)             */
    double checkpoint_every_s;  /* and at least this often (<= 0: 600 s)            */
    int resume;                 /* load checkpoint_path first (resume_path overrides) */
    const char *resume_path;    /* NULL, or the checkpoint to continue from         */
    const volatile sig_atomic_t *cancel; /* NULL, or the flag that stops the run   */
    /* the training curve: written at the end when plot_path is set */
    const char *plot_path;
    const char *plot_title;
    const dp_plot_line *plot_lines;
    int n_plot_lines;
    /* NULL, or the curve this run appends to (and plots, with plot_path):
     * its points after those already there, its best so far the lower of
     * its own and the curve's last; the result's tenths are this run's */
    dp_run_curve *curve;
} dp_run_options;

/* Defaults: no budget (the caller sets one), no outputs, checkpoints every
 * 50 steps or 600 s. */
dp_run_options dp_run_options_default(void);

typedef struct dp_run_hooks {
    void *user;
    /* after each chunk of preparation */
    void (*prepared)(void *user, const dp_run_state *s);
    /* after each step (its samples in s->last; n_last 0: abandoned) */
    void (*stepped)(void *user, const dp_run_state *s);
} dp_run_hooks;

typedef struct dp_run_result {
    int interrupted;      /* the cancel flag stopped the run          */
    int64_t steps;        /* steps taken by this call                 */
    double wall_s;        /* seconds this call took                   */
    /* whether the policy improved: the mean sampled step time over the
     * first and the last tenth of all the run's steps (resumed ones
     * included; steps without a valid sample left out; NaN: none) */
    int64_t tenth;        /* steps in a tenth (at least 1)             */
    double first_mean_s, last_mean_s;
} dp_run_result;

/* The headers of the per-sample and the per-step logs. */
extern const char dp_run_log_header[];
extern const char dp_run_update_log_header[];

/* Runs m until a budget is spent or the cancel flag is set: preparation
 * first, then steps; the outputs and checkpoints as the options say (a
 * resumed run's log keeps its first `samples` rows and goes on). hooks may
 * be NULL. Errors: the method's, IO (an output that cannot be written),
 * INVALID (a log that does not match the checkpoint), NOMEM. */
dp_status dp_run(dp_method m, const dp_run_options *o, const dp_run_hooks *hooks, dp_run_result *out,
                 dp_error *err);

/* Lower bounds of any placement's step time on ds (a simulation without
 * noise): the critical path with every op on its fastest allowed device
 * and no transfers; the work bound, the best found of the weighted sums
 * sum_i min_d mu_d t_id with sum_d mu_d streams_d = 1 (work_uniform_s:
 * equal weights, the total fastest work spread evenly over every stream,
 * as if a CPU's stream were as fast as a GPU's); and the fan-out bound:
 * two consumers of one tensor either run one after the other on its
 * producer's single-stream device, or one of them waits for the tensor to
 * cross the fastest link (gnmt4's logits gradient: docs/simulator.md,
 * "Lower bounds"). bound_s is the largest of the three. */
typedef struct dp_run_bound {
    double critical_path_s;
    double work_s;
    double work_uniform_s;
    double fanout_s;
    double bound_s;
} dp_run_bound;
dp_status dp_run_lower_bound(const dp_graph *g, const dp_devices *ds, const dp_sim *sim, dp_run_bound *out,
                             dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
