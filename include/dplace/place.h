/* dplace: baseline placers. Each takes a graph and a device set and fills a
 * placement (one device index per op) that honours every op's device
 * constraint (dp_placement_allowed) and keeps each colocation group on one
 * device. Memory is the placers' concern only where the method has it (the
 * list schedulers m-topo and m-etf); the simulator is the judge of validity.
 *
 *   cpu      every op on the first CPU
 *   gpu      every op on the first GPU (CPU-only ops on the CPU)
 *   expert   the papers' human placement, from the caller
 *            (dp_place_options.expert, e.g. dp_zoo_expert_placement)
 *   scotch   Scotch static mapping onto all devices, weighted by speed
 *   mincut   the same onto the GPUs only (CPU-only ops stay on the CPU)
 *   metis    METIS k-way over the GPUs, part weights proportional to speed
 *   m-topo   Baechi's topological fill of each GPU up to a memory cap
 *   m-etf    Baechi's earliest-time-first list scheduling with memory limits
 *   m-sct    Baechi's m-SCT: m-etf that keeps each op's "favourite child"
 *            (from an LP relaxation solved by COIN-OR CLP) on the op's device
 *   accel-balanced, accel-sequential
 *            Hugging Face accelerate's infer_auto_device_map with
 *            device_map="balanced" or "sequential": the modules of a
 *            PyTorch export in their order, each GPU filled in turn up to a
 *            budget of parameter bytes, a module too large split into its
 *            submodules, the rest on the CPU (UNSUPPORTED on a graph
 *            without module scopes)
 *
 * Every placer but cpu, gpu, expert and the accel placers (which place
 * modules, always) places units (dplace/units.h) made by
 * a grouping step (dp_place_options.group): TensorFlow's colocation groups
 * alone (the default: on the zoo it beats Baechi's co-placement for m-etf,
 * docs/baselines.md), or the groups of a grouper (dplace/group.h), such as
 * Baechi's co-placement (the colocation grouper). m-topo, m-etf and m-sct
 * place a training graph as Baechi does (dp_place_options.forward_only): the
 * forward ops, each gradient op going with the forward op it differentiates.
 *
 * docs/baselines.md describes each method, its parameters and the library
 * pitfalls handled. */
#ifndef DPLACE_PLACE_H
#define DPLACE_PLACE_H

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/sim.h"
#include "dplace/units.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dp_place_method {
    DP_PLACE_METHOD_CPU = 0,
    DP_PLACE_METHOD_GPU,
    DP_PLACE_METHOD_EXPERT,
    DP_PLACE_METHOD_SCOTCH,
    DP_PLACE_METHOD_MINCUT,
    DP_PLACE_METHOD_METIS,
    DP_PLACE_METHOD_M_TOPO,
    DP_PLACE_METHOD_M_ETF,
    DP_PLACE_METHOD_M_SCT,
    DP_PLACE_METHOD_ACCEL_BALANCED,
    DP_PLACE_METHOD_ACCEL_SEQUENTIAL,
    DP_PLACE_METHOD_COUNT
} dp_place_method;

/* Name as the CLI spells it ("m-etf"); "?" when out of range. */
const char *dp_place_method_name(dp_place_method m);
/* Looks a method up by name; returns 0 and sets *out, or -1 when unknown. */
int dp_place_method_from_name(const char *name, dp_place_method *out);

/* The grouping step before a placer: DP_PLACE_GROUP_DEFAULT (today
 * TensorFlow's colocation groups for every method), DP_PLACE_GROUP_NONE
 * (TensorFlow's colocation groups only), or a dp_group_method
 * (dplace/group.h) cast to int, e.g. DP_GROUP_METHOD_COLOCATION for
 * Baechi's co-placement. */
enum { DP_PLACE_GROUP_DEFAULT = -1, DP_PLACE_GROUP_NONE = -2 };

/* Which forward-only placement m-topo, m-etf and m-sct make of a training
 * graph (docs/baselines.md, "Forward-only placement"): PAPER, Baechi's as
 * published; DATAFLOW, with dplace's three rules for graphs that keep their
 * state in ops (state goes with its first reader, ends follow their data,
 * an activation's transfer counts twice); BEST, the default: under
 * dp_place_evaluate the placer makes both and the simulator keeps the
 * faster (dp_place_run makes DATAFLOW's). The rules make PyTorch exports
 * placeable and cost some of the zoo's cells; neither placement is better
 * everywhere. */
typedef enum dp_place_rules {
    DP_PLACE_RULES_BEST = 0,
    DP_PLACE_RULES_DATAFLOW,
    DP_PLACE_RULES_PAPER
} dp_place_rules;

/* Name as the CLI spells it ("best", "dataflow", "paper"); "?" when out of range. */
const char *dp_place_rules_name(dp_place_rules r);
/* Looks a rule set up by name; returns 0 and sets *out, or -1 when unknown. */
int dp_place_rules_from_name(const char *name, dp_place_rules *out);

/* Fills out[g->n_ops] with g's human-expert placement on ds, or fails with
 * a reason in err (DP_STATUS_UNSUPPORTED: g has none). The placers know no
 * model zoo: the caller supplies one, such as dp_zoo_expert_placement
 * (dplace/zoo.h), which has this type. */
typedef dp_status (*dp_place_expert_fn)(const dp_graph *g, const dp_devices *ds, int32_t *out, dp_error *err);

typedef struct dp_place_options {
    uint64_t seed;          /* seeds Scotch's and METIS's random state, and
                               the seeded groupers                           */
    double memory_fraction; /* m-topo, m-etf, m-sct: share of each device's
                               memory they fill (0 < f <= 1; default 0.9)    */
    int32_t group;          /* grouping step (above); default DEFAULT        */
    int32_t n_groups;       /* groups for metis/scotch/fluid/random grouping
                               (default 256)                                 */
    double sct_threshold;   /* m-sct: an edge is a favourite-child edge when
                               its LP value is below this (Baechi's 0.1)     */
    int forward_only;       /* m-topo, m-etf, m-sct: place the forward ops,
                               each gradient op with the forward op it
                               differentiates (Baechi's setting; a graph
                               without gradient scopes is all forward);
                               0: every op (default 1)                       */
    dp_place_rules rules;   /* m-topo, m-etf, m-sct: the forward-only
                               placement's rules (above; default BEST)      */
    int memory_backward;    /* m-etf, m-sct in the forward-only placement:
                               1 reserves each unit's backward ops (their
                               parameters, outputs and scratch, never freed,
                               as m-topo counts them) with the unit; 0
                               (default) counts the forward ops' memory by
                               liveness only. dp_place_evaluate sets it when
                               the memory retry finds nothing valid          */
    dp_place_expert_fn expert; /* expert: where its placement comes from;
                               NULL (default): the method reports
                               UNSUPPORTED, "no expert placement given"      */
    dp_units_spec units;    /* what every placer but cpu, gpu and expert
                               places (dplace/units.h): OP (default), the
                               grouping step's units; MODULE, a PyTorch
                               export's modules, each whole (the grouping
                               step then does not apply); AUTO, modules
                               when g has them                              */
} dp_place_options;

/* Defaults: seed 1, memory_fraction 0.9, group DEFAULT, 256 groups,
 * sct_threshold 0.1, forward_only 1, rules BEST, memory_backward 0, expert
 * NULL, units OP. */
dp_place_options dp_place_options_default(void);

/* The grouping method placer m runs on under opt (resolving DEFAULT):
 * DP_PLACE_GROUP_NONE or a dp_group_method. */
int32_t dp_place_group_of(dp_place_method m, const dp_place_options *opt);

/* Name of a grouping step as the CLI spells it ("colocation", "none"). */
const char *dp_place_group_name(int32_t group);
/* Looks a grouping step up by name ("none" or a grouper's name, or
 * "default"); returns 0 and sets *out, or -1 when unknown. */
int dp_place_group_from_name(const char *name, int32_t *out);

/* Runs one placer: fills out[g->n_ops] with device indices into ds. g must be
 * finalized. opt may be NULL (defaults). Fails with DP_STATUS_UNSUPPORTED and
 * a reason when the method cannot apply (no expert placement given or none
 * for the graph, no GPU in the set, a library that refuses the problem), DP_STATUS_INVALID
 * when the set cannot host the graph's constraints, DP_STATUS_NOMEM. */
dp_status dp_place_run(dp_place_method m, const dp_graph *g, const dp_devices *ds, const dp_place_options *opt,
                       int32_t *out, dp_error *err);

/* The units placer m places under opt (opt may be NULL: defaults): its
 * grouping step's units, or a PyTorch export's modules when opt->units asks
 * for them; with opt->forward_only, each gradient op in the unit of the
 * forward op it differentiates, as the list placers place them. For a
 * placer of its own that wants the baselines' units (the pretrained
 * policy's). u is left empty on failure (DP_STATUS_INVALID, NOMEM). */
dp_status dp_place_units(dp_units *u, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                         const dp_place_options *opt, dp_error *err);

/* The placers one by one; same contract as dp_place_run. */
dp_status dp_place_cpu(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                       dp_error *err);
dp_status dp_place_gpu(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                       dp_error *err);
dp_status dp_place_expert(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                          dp_error *err);
dp_status dp_place_scotch(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                          dp_error *err);
dp_status dp_place_mincut(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                          dp_error *err);
dp_status dp_place_metis(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                         dp_error *err);
dp_status dp_place_m_topo(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                          dp_error *err);
dp_status dp_place_m_etf(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                         dp_error *err);
dp_status dp_place_m_sct(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                         dp_error *err);
dp_status dp_place_accel_balanced(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                                  dp_error *err);
dp_status dp_place_accel_sequential(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt,
                                    int32_t *out, dp_error *err);

/* One row of a baseline table: a placer's result as the simulator sees it. */
typedef struct dp_place_report {
    dp_place_method method;
    dp_status status;     /* DP_STATUS_OK: placed and simulated; else why not */
    char reason[1024];    /* the placer's message when status is not OK       */
    double place_s;       /* wall-clock seconds the placer took               */
    int32_t n_used;       /* devices with at least one op                     */
    dp_place_rules rules; /* m-topo, m-etf, m-sct: the rules of the placement
                             kept (DATAFLOW or PAPER); BEST for the others  */
    dp_sim_result sim;    /* the simulated step, when status is OK (sim.link
                             is owned by the context; valid until its next run) */
} dp_place_report;

/* Runs placer m (timed) and simulates its placement with sim (a context for
 * g on ds). placement[g->n_ops] receives the placement. When the simulator
 * finds a list placer's (m-topo, m-etf, m-sct) placement out of memory, the
 * placer runs again with memory_fraction 0.8 times smaller, up to five
 * times, then (m-etf, m-sct) the same from the first fraction with
 * memory_backward, and the first valid placement is kept (else the first one; the time
 * includes the runs). With opt->rules BEST a list placer does that
 * with each rule set and the faster valid placement is kept (a valid one
 * before one out of memory, DATAFLOW on a tie; rep->rules says which). A
 * method that cannot apply is not an error: rep->status and rep->reason
 * say why. Returns an error only for out of memory or a placer bug (an
 * index out of range). */
dp_status dp_place_evaluate(dp_sim *sim, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                            const dp_place_options *opt, int32_t *placement, dp_place_report *rep, dp_error *err);

/* dp_place_evaluate of the methods list[n] (each under opt), on up to `threads`
 * threads (< 1: one), each simulating with a workspace of its own on sim
 * (its own workspace is not used): placements[n, g->n_ops] and reps[n] in
 * the order of list, the same whatever the thread count (rep->place_s
 * aside), rep->sim.link NULL. The placers that do not depend on each other
 * run at once: every method, and a list placer's two rule sets under BEST;
 * those calling Scotch or METIS (scotch, mincut, metis, and a list placer
 * grouped by either), whose random state is the process's, one at a time.
 * Errors as dp_place_evaluate's (the first method's that fails). */
dp_status dp_place_evaluate_all(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const dp_place_method *list,
                                int32_t n, const dp_place_options *opt, int32_t threads, int32_t *placements,
                                dp_place_report *reps, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
