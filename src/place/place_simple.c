/* The method table, the single-device placers (cpu, gpu), the human expert,
 * and dp_place_evaluate (a placer timed, then simulated). */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/group.h"
#include "place/place_internal.h"

typedef dp_status (*place_fn)(const dp_graph *, const dp_devices *, const dp_place_options *, int32_t *,
                              dp_error *);

static const struct {
    const char *name;
    place_fn fn;
} methods[] = {
    [DP_PLACE_METHOD_CPU] = {"cpu", dp_place_cpu},
    [DP_PLACE_METHOD_GPU] = {"gpu", dp_place_gpu},
    [DP_PLACE_METHOD_EXPERT] = {"expert", dp_place_expert},
    [DP_PLACE_METHOD_SCOTCH] = {"scotch", dp_place_scotch},
    [DP_PLACE_METHOD_MINCUT] = {"mincut", dp_place_mincut},
    [DP_PLACE_METHOD_METIS] = {"metis", dp_place_metis},
    [DP_PLACE_METHOD_M_TOPO] = {"m-topo", dp_place_m_topo},
    [DP_PLACE_METHOD_M_ETF] = {"m-etf", dp_place_m_etf},
    [DP_PLACE_METHOD_M_SCT] = {"m-sct", dp_place_m_sct},
    [DP_PLACE_METHOD_ACCEL_BALANCED] = {"accel-balanced", dp_place_accel_balanced},
    [DP_PLACE_METHOD_ACCEL_SEQUENTIAL] = {"accel-sequential", dp_place_accel_sequential},
};
_Static_assert(sizeof(methods) / sizeof(methods[0]) == DP_PLACE_METHOD_COUNT, "methods");

const char *dp_place_method_name(dp_place_method m) {
    return (unsigned)m < DP_PLACE_METHOD_COUNT ? methods[m].name : "?";
}

int dp_place_method_from_name(const char *name, dp_place_method *out) {
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++)
        if (strcmp(name, methods[m].name) == 0) {
            *out = (dp_place_method)m;
            return 0;
        }
    return -1;
}

/* Whether method m counts memory (memory_fraction): the list placers. */
static int uses_memory(dp_place_method m) {
    return m == DP_PLACE_METHOD_M_TOPO || m == DP_PLACE_METHOD_M_ETF || m == DP_PLACE_METHOD_M_SCT;
}

static const char *const rules_names[] = {"best", "dataflow", "paper"};

const char *dp_place_rules_name(dp_place_rules r) {
    return (unsigned)r < sizeof rules_names / sizeof rules_names[0] ? rules_names[r] : "?";
}

int dp_place_rules_from_name(const char *name, dp_place_rules *out) {
    for (unsigned k = 0; name && k < sizeof rules_names / sizeof rules_names[0]; k++)
        if (!strcmp(name, rules_names[k])) {
            *out = (dp_place_rules)k;
            return 0;
        }
    return -1;
}

dp_place_options dp_place_options_default(void) {
    dp_place_options o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.memory_fraction = 0.9;
    o.group = DP_PLACE_GROUP_DEFAULT;
    o.n_groups = 256;
    o.sct_threshold = 0.1;
    o.forward_only = 1;
    return o;
}

/* DEFAULT is TensorFlow's colocation groups for every placer. Baechi's
 * co-placement (--group colocation) is not the default: with the forward-only
 * placement and pipelined copies it still makes m-etf 1.3x to 1.7x slower on
 * ResNet, NMT-4, NMT-8 and inception_v3 at batch 32 on 8 GiB GPUs, and out of memory on
 * NMT-2 and BERT, gaining on gnmt4 only (docs/baselines.md, "None or
 * co-placement"). */
int32_t dp_place_group_of(dp_place_method m, const dp_place_options *opt) {
    (void)m;
    int32_t grp = opt ? opt->group : DP_PLACE_GROUP_DEFAULT;
    return grp != DP_PLACE_GROUP_DEFAULT ? grp : DP_PLACE_GROUP_NONE;
}

const char *dp_place_group_name(int32_t group) {
    if (group == DP_PLACE_GROUP_DEFAULT) return "default";
    if (group == DP_PLACE_GROUP_NONE) return "none";
    return dp_group_method_name((dp_group_method)group);
}

int dp_place_group_from_name(const char *name, int32_t *out) {
    dp_group_method gm;
    if (!strcmp(name, "default")) *out = DP_PLACE_GROUP_DEFAULT;
    else if (!strcmp(name, "none")) *out = DP_PLACE_GROUP_NONE;
    else if (!dp_group_method_from_name(name, &gm)) *out = (int32_t)gm;
    else return -1;
    return 0;
}

dp_status dp_place_run(dp_place_method m, const dp_graph *g, const dp_devices *ds, const dp_place_options *opt,
                       int32_t *out, dp_error *err) {
    if ((unsigned)m >= DP_PLACE_METHOD_COUNT)
        return dp_error_set(err, DP_STATUS_INVALID, "placement method %d out of range", (int)m);
    assert(g->finalized);
    return methods[m].fn(g, ds, opt, out, err);
}

/* Every unit on `target` when it may go there, else on the first device it
 * may use (TensorFlow's soft placement, colocation kept). */
static dp_status place_single(const dp_graph *g, const dp_devices *ds, int32_t target, int32_t *out, dp_error *err) {
    dp_units u;
    dp_status st = dp_units_init(&u, g, err);
    if (st) return st;
    dp_mask *mask = malloc((size_t)u.n_units * sizeof(dp_mask));
    int32_t *unit_dev = malloc((size_t)u.n_units * sizeof(int32_t));
    if (!mask || !unit_dev) st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (%d units)", u.n_units);
    if (!st) st = dp_units_masks(&u, g, ds, dp_mask_bit(target), mask, err);
    if (!st) {
        for (int32_t k = 0; k < u.n_units; k++) unit_dev[k] = dp_mask_first(mask[k]);
        dp_units_expand(&u, unit_dev, out);
    }
    free(mask);
    free(unit_dev);
    dp_units_free(&u);
    return st;
}

dp_status dp_place_cpu(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                       dp_error *err) {
    (void)opt;
    int32_t d = dp_devices_nth(ds, DP_DEVKIND_CPU, 0);
    if (d < 0) return dp_error_set(err, DP_STATUS_UNSUPPORTED, "device set \"%s\" has no CPU", ds->name);
    return place_single(g, ds, d, out, err);
}

dp_status dp_place_gpu(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                       dp_error *err) {
    (void)opt;
    int32_t d = dp_devices_nth(ds, DP_DEVKIND_GPU, 0);
    if (d < 0) return dp_error_set(err, DP_STATUS_UNSUPPORTED, "device set \"%s\" has no GPU", ds->name);
    return place_single(g, ds, d, out, err);
}

dp_status dp_place_expert(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                          dp_error *err) {
    if (!opt || !opt->expert)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "graph \"%s\": no expert placement given",
                            g->name ? g->name : "");
    dp_status st = opt->expert(g, ds, out, err);
    if (st) return st;
    for (int32_t i = 0; i < g->n_ops; i++)
        if (out[i] < 0 || out[i] >= ds->n_devices)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "expert placement: op %d \"%s\" has device index %d out of range", i, g->ops[i].name,
                                out[i]);
    return DP_STATUS_OK;
}

/* What evaluates placements: a context and a workspace of it (NULL: the
 * context's own, one thread at a time; else this thread's). */
typedef struct eval_sim {
    dp_sim *sim;
    dp_sim_workspace *ws;
} eval_sim;

/* Simulates placement p with es. */
static dp_status eval_sim_run(const eval_sim *es, const int32_t *p, dp_sim_result *r, dp_error *err) {
    return es->ws ? dp_sim_run_ws(es->sim, es->ws, p, NULL, r, err) : dp_sim_run(es->sim, p, NULL, r, err);
}

/* Runs placer m; m-sct with memo (the solved LPs of this evaluation). */
static dp_status evaluate_place(dp_place_method m, const dp_graph *g, const dp_devices *ds,
                                const dp_place_options *o, place_sct_memo *memo, int32_t *out, dp_error *err) {
    if (m == DP_PLACE_METHOD_M_SCT) return place_m_sct_memo(g, ds, o, memo, out, err);
    return dp_place_run(m, g, ds, o, out, err);
}

/* When list placer m's placement runs out of memory in the simulator (its
 * count of memory, forward-only, does not see all of the backward pass's),
 * m again with memory_fraction 0.8 times smaller, up to five times, then
 * m-etf and m-sct the same way from the first fraction with the backward
 * pass's memory reserved whole (memory_backward: an over-count that spreads
 * the step, so the last resort, not the first): the first valid placement
 * replaces it in placement and rep (sim result, the placer's time
 * included), else the first stays. The simulator is the judge, as a user lowering
 * --memory-fraction by hand would use it. */
static dp_status evaluate_smaller(const eval_sim *es, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                                  const dp_place_options *opt, place_sct_memo *memo, int32_t *placement,
                                  dp_place_report *rep, dp_error *err) {
    dp_place_options o = opt ? *opt : dp_place_options_default();
    int32_t *p = malloc(((size_t)g->n_ops + 1) * sizeof(int32_t));
    if (!p) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (a placement of %d ops)", g->n_ops);
    dp_status st = DP_STATUS_OK;
    int replaced = 0;
    const double f0 = o.memory_fraction;
    /* m-topo counts the backward pass already; placing every op there is none */
    const int again = m != DP_PLACE_METHOD_M_TOPO && o.forward_only && !o.memory_backward;
    for (int k = 0; k < 5 + 6 * again && !st && !replaced; k++) {
        if (k < 5) {
            o.memory_fraction *= 0.8;
        } else {
            o.memory_fraction = k == 5 ? f0 : o.memory_fraction * 0.8;
            o.memory_backward = 1;
        }
        dp_error perr;
        double t0 = dp_now_s();
        dp_status pst = evaluate_place(m, g, ds, &o, memo, p, &perr);
        rep->place_s += dp_now_s() - t0;
        if (pst == DP_STATUS_NOMEM) st = dp_error_set(err, pst, "%s", perr.msg);
        if (pst) break;
        dp_sim_result r;
        if ((st = eval_sim_run(es, p, &r, err)) || r.verdict == DP_SIM_VERDICT_OOM) continue;
        memcpy(placement, p, (size_t)g->n_ops * sizeof(int32_t));
        rep->sim = r;
        replaced = 1;
    }
    free(p);
    /* the first placement again: its result's link figures are the context's */
    if (!st && !replaced) st = eval_sim_run(es, placement, &rep->sim, err);
    return st;
}

/* One rule set's placement of list placer or other method m (opt->rules
 * not BEST), simulated, retried with less memory when out of memory; m-sct
 * keeps its LPs in memo (may be NULL). */
static dp_status evaluate_one(const eval_sim *es, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                              const dp_place_options *opt, place_sct_memo *memo, int32_t *placement,
                              dp_place_report *rep, dp_error *err) {
    memset(rep, 0, sizeof *rep);
    rep->method = m;
    rep->rules = uses_memory(m) ? opt->rules : DP_PLACE_RULES_BEST;
    dp_error perr;
    dp_error_clear(&perr);
    double t0 = dp_now_s();
    dp_status st = evaluate_place(m, g, ds, opt, memo, placement, &perr);
    rep->place_s = dp_now_s() - t0;
    if (st == DP_STATUS_NOMEM) {
        if (err) *err = perr;
        return st;
    }
    if (st) {
        rep->status = st;
        snprintf(rep->reason, sizeof rep->reason, "%s", perr.msg[0] ? perr.msg : dp_status_name(st));
        return DP_STATUS_OK;
    }
    if ((st = eval_sim_run(es, placement, &rep->sim, err))) return st;
    if (rep->sim.verdict == DP_SIM_VERDICT_OOM && uses_memory(m) &&
        (st = evaluate_smaller(es, g, ds, m, opt, memo, placement, rep, err)))
        return st;
    dp_mask used = 0;
    for (int32_t i = 0; i < g->n_ops; i++) used |= dp_mask_bit(placement[i]);
    rep->n_used = dp_mask_count(used);
    return DP_STATUS_OK;
}

/* Whether report a is to be kept before b: placed before not, valid before
 * out of memory, then the shorter step. */
static int report_better(const dp_place_report *a, const dp_place_report *b) {
    if ((a->status == DP_STATUS_OK) != (b->status == DP_STATUS_OK)) return a->status == DP_STATUS_OK;
    if (a->status != DP_STATUS_OK) return 0;
    if (a->sim.valid != b->sim.valid) return a->sim.valid;
    return a->sim.step_time_s < b->sim.step_time_s;
}

/* Whether the rule sets can give list placers different placements of g:
 * in the forward-only placement of a graph with backward ops (without
 * them, or placing every op, PAPER's placement is DATAFLOW's). */
static dp_status rules_apply(const dp_graph *g, const dp_place_options *o, int *apply, dp_error *err) {
    *apply = 0;
    if (!o->forward_only) return DP_STATUS_OK;
    place_fwd f;
    dp_status st = place_fwd_init(&f, g, err);
    if (st) return st;
    *apply = f.n_backward > 0;
    place_fwd_free(&f);
    return DP_STATUS_OK;
}

/* Both rule sets' placements of list placer m (rules BEST), as
 * dp_place_evaluate says, with m-sct's LPs in memo. */
static dp_status evaluate_both(const eval_sim *es, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                               dp_place_options o, place_sct_memo *memo, int32_t *placement, dp_place_report *rep,
                               dp_error *err) {
    o.rules = DP_PLACE_RULES_DATAFLOW;
    int both;
    dp_status st = rules_apply(g, &o, &both, err);
    if (!st) st = evaluate_one(es, g, ds, m, &o, memo, placement, rep, err);
    if (st || !both) return st;
    int32_t *p = malloc(((size_t)g->n_ops + 1) * sizeof(int32_t));
    dp_place_report *r = malloc(sizeof *r);
    if (!p || !r) {
        free(p);
        free(r);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (a placement of %d ops)", g->n_ops);
    }
    o.rules = DP_PLACE_RULES_PAPER;
    if (!(st = evaluate_one(es, g, ds, m, &o, memo, p, r, err))) {
        double place_s = rep->place_s + r->place_s;
        if (report_better(r, rep)) {
            memcpy(placement, p, (size_t)g->n_ops * sizeof(int32_t));
            *rep = *r;
        } else if (rep->status == DP_STATUS_OK) {
            /* the kept placement again: its result's link figures are the context's */
            st = eval_sim_run(es, placement, &rep->sim, err);
        }
        rep->place_s = place_s;
    }
    free(p);
    free(r);
    return st;
}

/* With rules BEST, a list placer's two placements (DATAFLOW's, then
 * PAPER's) are both made and simulated, the faster kept; the simulator is
 * the judge, as for the memory retry, since neither rule set is faster on
 * every graph. The time reported is both placers'. Where the rule sets
 * cannot differ (rules_apply), DATAFLOW's alone is made. m-sct's memory
 * retries of one rule set make the same LP: one memo for the whole
 * evaluation solves it once (without memory for the memo, each placement
 * solves it, with the same result). */
dp_status dp_place_evaluate(dp_sim *sim, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                            const dp_place_options *opt, int32_t *placement, dp_place_report *rep, dp_error *err) {
    dp_place_options o = opt ? *opt : dp_place_options_default();
    place_sct_memo *memo = m == DP_PLACE_METHOD_M_SCT ? place_sct_memo_new() : NULL;
    eval_sim one = {sim, NULL}, *es = &one;
    dp_status st = !uses_memory(m) || o.rules != DP_PLACE_RULES_BEST
                       ? evaluate_one(es, g, ds, m, &o, memo, placement, rep, err)
                       : evaluate_both(es, g, ds, m, o, memo, placement, rep, err);
    place_sct_memo_free(memo);
    return st;
}

/* ---- several methods at once --------------------------------------------- */

/* One evaluation of dp_place_evaluate_all: method m under one rule set (a
 * list placer under BEST makes two, DATAFLOW's and PAPER's). */
typedef struct eval_task {
    int32_t k;             /* the method's row */
    dp_place_method m;
    dp_place_options o;    /* rules DATAFLOW or PAPER for a list placer */
    int graph_lib;         /* calls Scotch or METIS: one such task at a time */
    int32_t *placement;    /* [n_ops] */
    dp_place_report rep;
    dp_status st;
    dp_error err;
} eval_task;

typedef struct eval_pool {
    const dp_graph *g;
    const dp_devices *ds;
    dp_sim *sim;
    eval_task *task;
    int32_t n_tasks;
    uint8_t *taken;        /* [n_tasks] */
    int graph_busy;        /* a task calling Scotch or METIS runs */
    pthread_mutex_t lock;
    pthread_cond_t freed;  /* graph_busy cleared */
} eval_pool;

/* Whether method m under o calls Scotch or METIS, whose random state is the
 * process's: two such calls at once would mix their seeds. */
static int uses_graph_lib(dp_place_method m, const dp_place_options *o) {
    if (m == DP_PLACE_METHOD_SCOTCH || m == DP_PLACE_METHOD_MINCUT || m == DP_PLACE_METHOD_METIS) return 1;
    if (m == DP_PLACE_METHOD_CPU || m == DP_PLACE_METHOD_GPU || m == DP_PLACE_METHOD_EXPERT) return 0; /* no grouping */
    int32_t grp = dp_place_group_of(m, o);
    return grp == DP_GROUP_METHOD_METIS || grp == DP_GROUP_METHOD_SCOTCH;
}

/* The next task a thread may run (the first not taken, skipping those that
 * call Scotch or METIS while one does), taken; -1 when none is left. Waits
 * while the only ones left wait for Scotch or METIS. */
static int32_t eval_pool_take(eval_pool *p) {
    pthread_mutex_lock(&p->lock);
    int32_t next = -1;
    for (;;) {
        int left = 0;
        for (int32_t t = 0; t < p->n_tasks && next < 0; t++) {
            if (p->taken[t]) continue;
            left = 1;
            if (!p->task[t].graph_lib || !p->graph_busy) next = t;
        }
        if (next >= 0 || !left) break;
        pthread_cond_wait(&p->freed, &p->lock);
    }
    if (next >= 0) {
        p->taken[next] = 1;
        if (p->task[next].graph_lib) p->graph_busy = 1;
    }
    pthread_mutex_unlock(&p->lock);
    return next;
}

/* Marks task t done (Scotch and METIS free again when it used them). */
static void eval_pool_done(eval_pool *p, int32_t t) {
    if (!p->task[t].graph_lib) return;
    pthread_mutex_lock(&p->lock);
    p->graph_busy = 0;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

/* One thread: runs tasks until none is left, simulating with a workspace
 * of its own. */
static void *eval_worker(void *arg) {
    eval_pool *p = *(eval_pool **)arg;
    dp_error werr;
    dp_sim_workspace *ws = dp_sim_workspace_init(p->sim, &werr);
    eval_sim es = {p->sim, ws};
    for (int32_t t; (t = eval_pool_take(p)) >= 0;) {
        eval_task *x = &p->task[t];
        dp_error_clear(&x->err);
        if (!ws) {
            x->st = DP_STATUS_NOMEM, x->err = werr;
        } else {
            place_sct_memo *memo = x->m == DP_PLACE_METHOD_M_SCT ? place_sct_memo_new() : NULL;
            x->st = evaluate_one(&es, p->g, p->ds, x->m, &x->o, memo, x->placement, &x->rep, &x->err);
            place_sct_memo_free(memo);
            x->rep.sim.link = NULL; /* the workspace's, freed below */
        }
        eval_pool_done(p, t);
    }
    dp_sim_workspace_free(ws);
    return NULL;
}

/* The tasks of list[n] under opt into p->task (p->n_tasks of them):
 * one per method, two for a list placer under BEST where the rule sets
 * differ (rules_apply, asked once for all), m-sct's first (the longest),
 * placements in place[2 n, n_ops]. */
static dp_status eval_tasks(eval_pool *p, const dp_place_method *list, int32_t n, const dp_place_options *opt,
                            int32_t *place, dp_error *err) {
    int both = 0;
    dp_status st = rules_apply(p->g, opt, &both, err);
    if (st) return st;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t k = 0; k < n; k++) {
            dp_place_method m = list[k];
            if ((m == DP_PLACE_METHOD_M_SCT) != (pass == 0)) continue;
            int split = uses_memory(m) && opt->rules == DP_PLACE_RULES_BEST;
            for (int r = 0; r < 1 + (split && both); r++) {
                eval_task *x = &p->task[p->n_tasks];
                memset(x, 0, sizeof *x);
                x->k = k, x->m = m, x->o = *opt;
                if (split) x->o.rules = r ? DP_PLACE_RULES_PAPER : DP_PLACE_RULES_DATAFLOW;
                x->graph_lib = uses_graph_lib(m, &x->o);
                x->placement = place + (size_t)p->n_tasks * (size_t)p->g->n_ops;
                p->n_tasks++;
            }
        }
    return DP_STATUS_OK;
}

/* Each method's report and placement from its tasks, in task order: a
 * method's first task (DATAFLOW's under BEST), replaced by the second
 * (PAPER's) when that one is better, with both placers' times. The error
 * of the first method (in the caller's order) with a failed task, else OK. */
static dp_status eval_gather(const eval_pool *p, int32_t *placements, dp_place_report *reps, dp_error *err) {
    int32_t n_ops = p->g->n_ops, failed = -1;
    for (int32_t t = 0; t < p->n_tasks; t++)
        if (p->task[t].st && (failed < 0 || p->task[t].k < p->task[failed].k)) failed = t;
    if (failed >= 0) {
        if (err) *err = p->task[failed].err;
        return p->task[failed].st;
    }
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const eval_task *x = &p->task[t];
        dp_place_report *rep = &reps[x->k];
        int32_t *out = placements + (size_t)x->k * (size_t)n_ops;
        int second = t > 0 && p->task[t - 1].k == x->k;
        if (second) {
            double place_s = rep->place_s + x->rep.place_s;
            if (report_better(&x->rep, rep)) {
                *rep = x->rep;
                memcpy(out, x->placement, (size_t)n_ops * sizeof(int32_t));
            }
            rep->place_s = place_s;
        } else {
            *rep = x->rep;
            memcpy(out, x->placement, (size_t)n_ops * sizeof(int32_t));
        }
    }
    return DP_STATUS_OK;
}

dp_status dp_place_evaluate_all(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const dp_place_method *list,
                                int32_t n, const dp_place_options *opt, int32_t threads, int32_t *placements,
                                dp_place_report *reps, dp_error *err) {
    dp_place_options o = opt ? *opt : dp_place_options_default();
    eval_pool p = {.g = g, .ds = ds, .sim = sim};
    size_t most = 2 * (size_t)(n > 0 ? n : 1);
    p.task = malloc(most * sizeof *p.task);
    p.taken = calloc(most, 1);
    int32_t *place = malloc(most * ((size_t)g->n_ops + 1) * sizeof(int32_t));
    dp_status st = DP_STATUS_OK;
    if (!p.task || !p.taken || !place)
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (evaluating %d methods)", (int)n);
    if (!st) st = eval_tasks(&p, list, n, &o, place, err);
    if (!st) {
        int32_t nt = threads < p.n_tasks ? threads : p.n_tasks;
        if (nt < 1) nt = 1;
        eval_pool *jobs[nt];
        for (int32_t t = 0; t < nt; t++) jobs[t] = &p;
        pthread_mutex_init(&p.lock, NULL);
        pthread_cond_init(&p.freed, NULL);
        dp_run_jobs(eval_worker, jobs, sizeof jobs[0], nt);
        pthread_cond_destroy(&p.freed);
        pthread_mutex_destroy(&p.lock);
        st = eval_gather(&p, placements, reps, err);
    }
    free(p.task), free(p.taken), free(place);
    return st;
}
