/* dplace: learned placers. An agent is a composition of parts, each
 * swappable (docs/agents.md lists every preset and every hyperparameter with
 * its source in the papers):
 *
 *   features   per-op features as the Hierarchical Planner and ColocRL
 *              describe them: a learned op-type embedding, the zero- or
 *              -1-padded output shapes, and adjacency (the BFS indices of the
 *              op's neighbours); per group: op-type counts (or the mean type
 *              embedding), summed output shapes, a one-hot group adjacency row
 *   encoder    none (groups, as above), or Mars's: every op placed, its
 *              node features (one-hot type by name, input and output
 *              shapes) through GCN layers over the op graph, pre-trained by
 *              Deep Graph Infomax; the placer then reads the op sequence
 *              segment by segment (segment-level seq2seq or Transformer-XL)
 *   grouper    the learned feed-forward grouper (Hierarchical Planner), a
 *              heuristic grouper of src/place (colocation, metis, scotch,
 *              fluid, random), ColocRL's scope groups, or none
 *   link       optionally EAGLE's extra RNN: an LSTM over the groups that
 *              reads the learned grouper's output-layer parameters of each
 *              group and appends its state to the group's embedding
 *   placer     the seq2seq placer: bi-LSTM encoder over the groups, LSTM
 *              decoder with additive attention after the decoder cell
 *              (Hierarchical Planner) or before it (EAGLE); the GCN placer
 *              (EAGLE Table II); or Post's table of one device distribution
 *              per group
 *   algorithm  REINFORCE, PPO (clipped surrogate, several epochs over the
 *              samples), or PPO joined with cross-entropy minimisation over
 *              the elite placements (Post), each against a moving-average
 *              baseline
 *   evaluator  the simulator (threads, a cache keyed by the placement, the
 *              papers' noisy protocol optionally) or an external measuring
 *              command (include/dplace/measure.h)
 *
 * Presets reproduce the papers ("hp", "colocrl", "eagle", "post", "mars",
 * ...); dp_agent_config_set
 * overrides one component or hyperparameter, so the papers' ablations are
 * command lines. Every random choice draws from the agent's seeded
 * generator: the same seed gives the same run, and a run resumed from a
 * checkpoint continues exactly as the uninterrupted run would have. */
#ifndef DPLACE_AGENT_H
#define DPLACE_AGENT_H

#include <signal.h>

#include "dplace/agent_config.h"
#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/run.h"
#include "dplace/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One placement's evaluation. */
typedef struct dp_agent_eval_result {
    double step_time_s;
    int valid;
    int cancelled;   /* stopped by the cancel flag: not a measurement        */
    double overflow; /* out of memory in the simulator: the worst device's
                        (peak - capacity) / capacity (> 0); else 0          */
    char reason[192];
} dp_agent_eval_result;

/* Evaluates placements somewhere else (a distributed front end's worker
 * ranks, src/dist): given the K placements place[K, n_ops] of a batch, it
 * fills res[k] for every k with todo[k] != 0 (the others the cache
 * answered), each exactly as dp_agent_evaluate on an evaluator of the same
 * options would, so that where a placement is evaluated never changes a
 * run. *cancelled set: the cancel flag stopped it (res then means nothing).
 * Errors abandon the update with them. */
typedef dp_status (*dp_agent_remote_fn)(void *user, const int32_t *place, int32_t K, int32_t n_ops, const int *todo,
                                        dp_agent_eval_result *res, int *cancelled, dp_error *err);

/* How sampled placements are evaluated. */
typedef struct dp_agent_eval_options {
    int32_t threads;        /* evaluations in parallel (>= 1)                  */
    int cache;              /* reuse the result of a placement seen before     */
    dp_sim_options sim;     /* noise, steps, warm-up of the simulator; its seed
                               is mixed with a hash of the placement, so a
                               placement always gets the same measurement      */
    const char *measure_cmd;    /* not NULL: run this command instead (measure.h) */
    double measure_timeout_s;
    const char *measure_dir;    /* where placement files for it go (NULL: /tmp) */
    /* NULL, or a flag (set by a SIGINT handler, say): once non-zero, running
     * measurements are stopped and the update in flight is abandoned,
     * leaving the agent as it was before it */
    const volatile sig_atomic_t *cancel;
    /* NULL, or called during an update with what it is doing ("sampling",
     * "evaluating", "training") and how far (done of total): a Mars update
     * over every op of a large graph takes minutes. Agents over every op
     * also check the cancel flag between the batches of sampling and the
     * minibatches of training, abandoning the update as above. */
    void (*progress)(void *user, const char *phase, int64_t done, int64_t total);
    void *progress_user;
    /* NULL, or where the expert placement comes from (the zoo's
     * dp_zoo_expert_placement): for warm-start=expert and =best */
    dp_status (*expert)(const dp_graph *g, const dp_devices *ds, int32_t *out, dp_error *err);
    /* NULL, or where the placements that missed the cache are evaluated
     * instead of this process's threads (the cache stays here) */
    dp_agent_remote_fn remote;
    void *remote_user;
} dp_agent_eval_options;

/* Defaults: 1 thread, cache on, the simulator without noise, 1 step, no
 * cancel flag, no progress callback. */
dp_agent_eval_options dp_agent_eval_options_default(void);

/* The evaluator on its own, as an agent uses it (a distributed run's
 * workers evaluate the placements their controller sends with one):
 * simulator contexts for eo's threads, or eo's measuring command, and the
 * cache when eo asks for it. It keeps pointers to g, ds and eo's strings. */
typedef struct dp_agent_evaluator dp_agent_evaluator;
dp_agent_evaluator *dp_agent_evaluator_init(const dp_graph *g, const dp_devices *ds, const dp_agent_eval_options *eo,
                                            dp_error *err);
void dp_agent_evaluator_free(dp_agent_evaluator *e);
/* Evaluates place[K, n_ops] into res[K] (cached[k] set when the cache
 * answered); results depend on the placements and eo only, never on the
 * threads. *cancelled: the cancel flag stopped a measurement. Errors: the
 * evaluator's own (NOMEM, a placement file it cannot write). */
dp_status dp_agent_evaluate(dp_agent_evaluator *e, const int32_t *place, int32_t K, dp_agent_eval_result *res,
                            int *cached, int *cancelled, dp_error *err);

typedef struct dp_agent dp_agent;

/* Builds an agent for g (finalized) on ds: the features, the grouper's
 * groups (heuristic groupers run here), the networks initialised from seed,
 * and the evaluator (simulator contexts or the measuring command). The
 * agent keeps pointers to g, ds and the strings of eo: they must outlive it.
 * Errors: DP_STATUS_INVALID (a bad configuration, a device set that cannot
 * host the graph, too many groups for the placer), UNSUPPORTED, NOMEM. */
dp_agent *dp_agent_init(const dp_graph *g, const dp_devices *ds, const dp_agent_config *cfg,
                        const dp_agent_eval_options *eo, uint64_t seed, dp_error *err);
void dp_agent_free(dp_agent *a);

/* One policy update: samples cfg.samples placements, evaluates them, and
 * trains the networks on their rewards. Errors only for the agent's own
 * failures (NOMEM, a placement file it cannot write for --measure); a
 * placement that fails to run is a failed sample, not an error. When the
 * evaluator's cancel flag stops a measurement (or, for agents over every op,
 * is found set between batches of sampling or training), the update is
 * abandoned: the agent is left exactly as before it (the state's n_last is
 * 0). */
dp_status dp_agent_update(dp_agent *a, dp_error *err);

/* Runs up to max_iters (< 0: all) more iterations of the GCN encoder's
 * Deep Graph Infomax pre-training, of pretrain-iters in all; the last one
 * puts back the parameters of the lowest loss and resets the optimiser.
 * dp_agent_update finishes it first when it is not done, so calling this is
 * only needed to see its progress. Nothing to do without an encoder. */
dp_status dp_agent_pretrain(dp_agent *a, int64_t max_iters, dp_error *err);

/* A learned agent's preparation before its first update: the GCN
 * encoder's Deep Graph Infomax pre-training, then the imitation warm start.
 * The run state's prep_done and prep_total count both, in iterations and
 * steps. */
typedef struct dp_agent_prep {
    int64_t pretrain_iters, pretrain_done;
    double pretrain_loss, pretrain_best; /* last and lowest loss (NaN: none) */
    double pretrain_s;        /* seconds the preparation took (both parts)  */
    int64_t warm_steps, warm_done;
    double warm_loss;         /* -log p(the imitated placement) after the last step */
    double warm_target_s;     /* the imitated placement's step time (NaN: none)   */
    const char *warm_from;    /* the placer it came from (NULL: none)             */
} dp_agent_prep;

/* The agent's preparation; valid until the next call on a. */
const dp_agent_prep *dp_agent_get_prep(const dp_agent *a);
/* A line on where the preparation stands (the pre-training's iterations and
 * loss, or the warm start's steps and what it imitates); returns its
 * length (snprintf's rule). */
size_t dp_agent_describe_prep(const dp_agent *a, char *buf, size_t size);

/* The current state; valid until the next call on a. */
const dp_run_state *dp_agent_get_state(const dp_agent *a);

/* The policy's parameters as one vector of *count floats (the parameter
 * store's values, its tensors in order): what an async distributed run's
 * controllers and server exchange. Writing through it changes the policy. */
float *dp_agent_params(dp_agent *a, size_t *count);
/* Takes values (the count of dp_agent_params) as the policy's parameters,
 * and the preparation (pre-training, warm start) as done, as
 * dp_agent_load_policy does; Adam's moments and everything else stay. */
void dp_agent_params_set(dp_agent *a, const float *values);
/* Sets a's counters and best placement from s: updates, samples,
 * baseline, best_s, best_update, best_sample, best_elapsed_s, elapsed_s,
 * policy_s, eval_s, and best_placement (copied) when not NULL; an async
 * run's server keeps the progress of the shared policy in its agent so
 * that its checkpoint holds it. */
void dp_agent_set_progress(dp_agent *a, const dp_run_state *s);

/* a as a method of the run driver (run.h): its step is dp_agent_update,
 * its preparation dp_agent_pretrain, its checkpoints dp_agent_save and
 * dp_agent_load. */
dp_method dp_agent_method(dp_agent *a);

/* The agent's most likely placement now (greedy decoding of grouper and
 * placer), into out[n_ops]; no training, no evaluation. */
dp_status dp_agent_greedy(dp_agent *a, int32_t *out, dp_error *err);

/* Writes the whole training state (configuration, counters, generator,
 * baseline, best placement, parameters and Adam moments) to path,
 * atomically, with a checksum. */
dp_status dp_agent_save(const dp_agent *a, const char *path, dp_error *err);
/* Restores a state saved by dp_agent_save for the same graph, devices and
 * configuration; the agent is unchanged on error (DP_STATUS_IO: cannot
 * read; PARSE: not an agent checkpoint, truncated, bad checksum;
 * UNSUPPORTED: other version; INVALID: made for another graph, device set
 * or configuration, naming the difference). */
dp_status dp_agent_load(dp_agent *a, const char *path, dp_error *err);

/* Starts a from the parameters of another agent's checkpoint (any graph,
 * any run: Mars's transfer, Table 3): every tensor of a must be in the file
 * with the same name and size; their values are copied, nothing else
 * (counters, baseline, optimiser moments and the best placement stay a's),
 * and the encoder's pre-training counts as done. Errors: IO, PARSE,
 * UNSUPPORTED (as dp_agent_load), INVALID (a tensor missing or of another
 * size, named); a is unchanged on error. */
dp_status dp_agent_load_policy(dp_agent *a, const char *path, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
