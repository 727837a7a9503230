/* dplace: the pretrained placer, one policy for any graph on any device set.
 *
 * A placement is decoded unit by unit (the units the list placers place:
 * chains of ops with each gradient op beside the forward op it
 * differentiates, or a PyTorch export's modules), in a topological order
 * of the graph that finishes a layer before it opens the next (an unrolled
 * RNN's layer through all its time steps). For each unit the decoder
 * builds one row of features per device it may use: what the unit is (its compute, memory, parameters, bytes in and
 * out, its place on the graph's critical path), what the device is (its
 * kind, peak, memory, how much slower the unit runs there) and what the
 * placement so far makes of it (when the unit could start and finish there
 * if its inputs crossed the links, how loaded and how full the device is,
 * how many of the unit's neighbours' bytes are already there, how much of
 * its layer and of the layer's parent is there) and two cheap heuristic
 * placements read as groupings, with how fast each is (how much of the
 * units the heuristic put with this one is already on the device: the
 * network learns when to follow a heuristic's grouping and when not; the
 * devices' labels in them mean nothing to it). A small
 * network scores each row; a softmax over the rows is the policy. Nothing
 * is indexed by an op's name or a device's number: devices enter by their
 * features, so one network places 2 to 8 GPUs of any preset, and identical
 * devices in identical states get identical scores. docs/pretrained.md
 * says why it is built so and what of Mars's design it keeps.
 *
 * The policy file (dplace-policy v1, little-endian binary) holds the
 * network's weights with the feature set and the cost model it was trained
 * under; a file of another feature set or cost model, or one that fails its
 * checksum, is refused. dplace ships one, trained on bench/corpus/ by
 * bench/pretrain.py, compiled into the library (dp_pretrained_policy_default).
 *
 * Layer: agent (src/agent/pretrained*.c), beside the learned agents: it
 * uses the placers' units, the simulator and the nn kernels, and plugs into
 * the run driver as a method (dp_pretrained_method). */
#ifndef DPLACE_PRETRAINED_H
#define DPLACE_PRETRAINED_H

#include "dplace/agent.h"
#include "dplace/common.h"
#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/run.h"
#include "dplace/settings.h"
#include "dplace/units.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_PRETRAINED_FEATURES 33    /* features per (unit, device) row        */
#define DP_PRETRAINED_FEATURE_SET 4u /* bump when a feature changes meaning    */
#define DP_PRETRAINED_HINTS 2        /* heuristic placements read as groupings  */
#define DP_PRETRAINED_FORMAT 1u      /* the file's layout                      */

/* ---- the policy ----------------------------------------------------------- */

typedef struct dp_pretrained_policy dp_pretrained_policy;

/* Reads a policy file. DP_STATUS_INVALID with one line naming the file and
 * the problem: not a dplace policy, a layout, feature set or cost model
 * other than this build's, a size or checksum that does not match (a
 * truncated or corrupt file). DP_STATUS_IO when it cannot be read,
 * DP_STATUS_PARSE when it is larger than 64 MiB (dp_read_file's rules). */
dp_pretrained_policy *dp_pretrained_policy_load(const char *path, dp_error *err);

/* The same from n bytes in memory; `what` names them in errors. */
dp_pretrained_policy *dp_pretrained_policy_from_bytes(const void *bytes, size_t n, const char *what, dp_error *err);

/* The policy dplace ships (policies/pretrained.dpp, compiled in). */
dp_pretrained_policy *dp_pretrained_policy_default(dp_error *err);

/* A policy of fresh weights (hidden widths h1, h2), seeded: the untrained
 * control. NULL with err on NOMEM or widths out of 1..1024. */
dp_pretrained_policy *dp_pretrained_policy_random(int32_t h1, int32_t h2, uint64_t seed, dp_error *err);

/* Writes p atomically (DP_STATUS_IO naming the path). */
dp_status dp_pretrained_policy_save(const dp_pretrained_policy *p, const char *path, dp_error *err);

/* The note the trainer stored (what it was trained on), "" when none. */
const char *dp_pretrained_policy_note(const dp_pretrained_policy *p);

void dp_pretrained_policy_free(dp_pretrained_policy *p);

/* ---- decoding ------------------------------------------------------------- */

/* What a graph and a device set determine, computed once: the units, their
 * masks, per-device times, the unit graph and the static features.
 * Read-only after init: threads may decode with one at once. */
typedef struct dp_pretrained_ctx dp_pretrained_ctx;

/* Builds the context of g (finalized) on ds, placing units of `units`
 * (OP: the list placers' units; MODULE: a PyTorch export's modules).
 * Errors: INVALID (a device set that cannot host the graph), NOMEM. */
dp_pretrained_ctx *dp_pretrained_ctx_init(const dp_graph *g, const dp_devices *ds, dp_units_spec units,
                                          dp_error *err);

/* The context of f's graph and devices whose units are whole layers: each
 * unit of f joins the others of its layer (its scope's parent: an unrolled
 * RNN layer's time steps, a block's branches, a module's children) where
 * their devices allow, so one decision places a layer. f's hints carry
 * over. Fewer units than f's when the graph has layers
 * (dp_pretrained_ctx_units). Errors: NOMEM. */
dp_pretrained_ctx *dp_pretrained_ctx_init_layers(const dp_pretrained_ctx *f, dp_error *err);
void dp_pretrained_ctx_free(dp_pretrained_ctx *c);

/* Scales every device's memory as the decoder counts it (default 1): where
 * the simulator finds a decoded placement out of memory, a smaller scale
 * makes the decoder spread it further. Not while another thread decodes
 * with c. */
void dp_pretrained_ctx_set_memory_scale(dp_pretrained_ctx *c, double scale);

/* Marks heavy the units whose compute (on their fastest device) is at
 * least `share` of a GPU's share of the graph's work (the whole graph's
 * over the set's GPUs): the few decisions that decide most of a step, which
 * DP_PRETRAINED_HEAVY draws. 0 (the default) marks none. Returns how many
 * units are heavy. Not while another thread decodes with c. */
int32_t dp_pretrained_ctx_set_heavy_share(dp_pretrained_ctx *c, double share);

/* Units the decoder places (the decisions of one placement). */
int32_t dp_pretrained_ctx_units(const dp_pretrained_ctx *c);

typedef enum dp_pretrained_mode {
    DP_PRETRAINED_GREEDY = 0, /* each unit to its highest-scored device        */
    DP_PRETRAINED_SAMPLE,     /* each unit's device drawn from the softmax     */
    DP_PRETRAINED_TEACHER,    /* each unit to the device a teacher placement
                                 gives most of its ops' time (imitation data)  */
    DP_PRETRAINED_OPENINGS,   /* drawn where the unit opens a layer (nothing
                                 of its layer placed yet), greedy elsewhere    */
    DP_PRETRAINED_HEAVY,      /* a heavy unit's device drawn uniformly among
                                 those offered (the temperature unused), the
                                 highest score elsewhere                       */
    DP_PRETRAINED_MODE_COUNT
} dp_pretrained_mode;

/* One decision as decoded: the rows the network scored and what was chosen
 * (what training needs to score them again). */
typedef struct dp_pretrained_step {
    dp_mask cand;    /* the devices offered                                  */
    dp_mask target;  /* TEACHER: the devices whose rows equal the teacher's
                        device's (identical devices in identical states)                         */
    int32_t action;  /* the device chosen                                    */
    float logp;      /* its log-probability under the policy (0 in TEACHER)   */
    int32_t drawn;   /* 1 when the device was drawn, 0 when it was the
                        highest score, the teacher's or the only one offered */
} dp_pretrained_step;

/* A recording of one decode: n_units steps, each with n_devices rows of
 * DP_PRETRAINED_FEATURES floats (rows of devices not offered are zero). */
typedef struct dp_pretrained_trace {
    int32_t n_steps, n_devices;
    double temp;               /* the temperature the actions were drawn
                                  at (1 for greedy and teacher decodes)  */
    dp_pretrained_step *steps; /* [n_steps]                             */
    float *rows;               /* [n_steps, n_devices, FEATURES]        */
} dp_pretrained_trace;

/* Allocates a trace for decodes on c. NOMEM. */
dp_status dp_pretrained_trace_init(dp_pretrained_trace *t, const dp_pretrained_ctx *c, dp_error *err);
void dp_pretrained_trace_free(dp_pretrained_trace *t);

/* Decodes one placement of c's graph into out[n_ops]. p may be NULL only in
 * TEACHER mode; rng is used in SAMPLE mode (temperature `temp` > 0 divides
 * the scores); teacher [n_ops] is read in TEACHER mode. tr (may be NULL)
 * records the steps. *logp_sum (may be NULL) gets the placement's
 * log-probability. Errors: INVALID (a missing argument), NOMEM. */
dp_status dp_pretrained_decode(const dp_pretrained_ctx *c, const dp_pretrained_policy *p, dp_pretrained_mode mode,
                               double temp, dp_rng *rng, const int32_t *teacher, int32_t *out,
                               dp_pretrained_trace *tr, double *logp_sum, dp_error *err);

/* ---- training ------------------------------------------------------------- */

/* Gradients of a policy's parameters, and Adam's moments. */
typedef struct dp_pretrained_grad dp_pretrained_grad;
dp_pretrained_grad *dp_pretrained_grad_init(const dp_pretrained_policy *p, dp_error *err);
void dp_pretrained_grad_free(dp_pretrained_grad *g);
void dp_pretrained_grad_zero(dp_pretrained_grad *g);
/* g += other (two gradients of one policy). */
void dp_pretrained_grad_merge(dp_pretrained_grad *g, const dp_pretrained_grad *other);

/* Adds to g the gradient of -weight * log pi(action) summed over tr's
 * steps (a policy-gradient term: weight is the sample's advantage over the
 * number of samples), under p at the trace's temperature. Returns the mean
 * entropy of the steps' distributions. */
double dp_pretrained_grad_add(dp_pretrained_grad *g, const dp_pretrained_policy *p, const dp_pretrained_trace *tr,
                              double weight);

/* The log-probability under p of the actions tr recorded (their rows
 * scored again, at the trace's temperature): what a sample's *logp_sum was under the policy that drew
 * it, or under p after an update. */
double dp_pretrained_trace_logp(const dp_pretrained_policy *p, const dp_pretrained_trace *tr);

/* Clips g to norm `clip` (<= 0: no clipping) and takes one Adam step of
 * rate lr on p. Returns the norm before clipping. */
double dp_pretrained_grad_step(dp_pretrained_grad *g, dp_pretrained_policy *p, double lr, double clip);

/* A training run's state, so that a run stopped and started again takes
 * the same steps as one that never stopped: p's weights, Adam's two
 * moments and step count, and the caller's count of updates done, in one
 * file written atomically (dplace-policy-state v1, beside the policy file,
 * which holds the weights alone). */
dp_status dp_pretrained_policy_save_state(const dp_pretrained_policy *p, int64_t updates, const char *path,
                                          dp_error *err);
/* Reads a state file into p, which must have its widths (the policy the
 * run started from, or the one it saved), and *updates. Errors: IO when it
 * cannot be read; INVALID, naming the file and the problem, for another
 * format, other widths, a size or checksum that does not match, a value
 * that is not finite; p is unchanged then. */
dp_status dp_pretrained_policy_load_state(dp_pretrained_policy *p, int64_t *updates, const char *path,
                                          dp_error *err);

/* ---- the method ----------------------------------------------------------- */

/* How the pretrained placer runs under the run driver. */
typedef struct dp_pretrained_options {
    int32_t zero_shot;   /* placements sampled before the first update (the
                            zero-shot answer: the greedy and the best of them) */
    double zero_shot_s;  /* and at most this many seconds for them            */
    double layer_s;      /* then as many again, within this many seconds,
                            decoding whole layers (dp_pretrained_ctx_init_layers;
                            0: none)                                          */
    int32_t samples;     /* placements per update when fine-tuning            */
    double lr;           /* Adam's rate when fine-tuning                      */
    double clip;         /* gradient norm clip                                */
    double temp;         /* sampling temperature                              */
    double open_temp;    /* every other zero-shot sample is drawn only where
                            a layer opens, at this temperature (0: none)      */
    double heavy_share;  /* a quarter of the zero-shot samples draw the heavy
                            units' devices (dp_pretrained_ctx_set_heavy_share;
                            0: none)                                          */
    uint64_t seed;
    dp_units_spec units;
} dp_pretrained_options;

/* Defaults: each row's base value (4096 zero-shot samples within 3 s, as
 * many of whole layers within 3 s more, 16 samples per update, rate 1e-4,
 * clip 1, temperature 0.5), seed 1, units OP. */
dp_pretrained_options dp_pretrained_options_default(void);

/* The settings rows of dp_pretrained_options (include/dplace/settings.h;
 * every field but seed and units), *n their count. */
const dp_setting *dp_pretrained_options_rows(int32_t *n);

typedef struct dp_pretrained dp_pretrained;

/* The placer for g on ds starting from policy (owned by the placer from
 * here on, freed by dp_pretrained_free, even on failure), its samples
 * evaluated as eo says. */
dp_pretrained *dp_pretrained_init(const dp_graph *g, const dp_devices *ds, dp_pretrained_policy *policy,
                                  const dp_pretrained_options *o, const dp_agent_eval_options *eo, dp_error *err);
void dp_pretrained_free(dp_pretrained *pt);

/* The run driver's view: preparation = the zero-shot samples, a step = one
 * policy-gradient update on the placer's own samples, final = the greedy
 * placement of the policy as it is then. */
dp_method dp_pretrained_method(dp_pretrained *pt);

/* The zero-shot answer: its best step time (inf: none valid), the seconds
 * and the placements it took (the greedy ones included). */
void dp_pretrained_zero_shot(const dp_pretrained *pt, double *best_s, double *seconds, int64_t *placements);

/* The units of the zero-shot's whole-layer phase (dp_pretrained_ctx_init_layers):
 * the layers placed as one decision each; 0 when the phase does not run
 * (layer_s 0, no zero-shot, or no unit joins another). */
int32_t dp_pretrained_layer_units(const dp_pretrained *pt);

/* The policy as fine-tuned so far (save it to start another run from it). */
const dp_pretrained_policy *dp_pretrained_get_policy(const dp_pretrained *pt);

#ifdef __cplusplus
}
#endif

#endif
