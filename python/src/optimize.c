/* dplace.optimize's C half: one optimisation job (include/dplace/optimize.h)
 * with its options filled as `dplace optimize` fills them
 * (src/cli/cmd_optimize.c, optimize_run.c), so that the same arguments
 * give the command line's numbers. The per-update hook, with the GIL,
 * records the history, calls the Python callback (False stops the run) and
 * checks for signals; Ctrl-C on the main thread sets the job's cancel flag
 * at once (the run driver abandons the step in flight and writes the
 * checkpoint), then KeyboardInterrupt is raised when the job has ended. */
#include "dplace_py.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/optimize.h"
#include "dplace/zoo.h"

/* What found a best placement (dp_run_best_by), as `dplace optimize --json`
 * names it. */
static const char *const best_by_names[] = {"none", "sample", "walk", "kept-walk", "greedy", "start", "search"};
_Static_assert(sizeof best_by_names / sizeof best_by_names[0] == DP_RUN_BEST_BY_COUNT, "a name per dp_run_best_by");
static const char *best_by_name(int32_t b) { return best_by_names[b >= 0 && b < DP_RUN_BEST_BY_COUNT ? b : 0]; }

/* ---- one job at a time ------------------------------------------------------------ */

/* The policy's thread pool (dp_nn_set_threads) is the process's: two jobs
 * at once would share it, so jobs take turns. A job's callback that starts
 * another job in its own thread would wait for itself: refused. */
static pthread_mutex_t job_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_t job_owner;
static int job_owned;

/* ---- Ctrl-C -------------------------------------------------------------------------- */

static volatile sig_atomic_t *sigint_cancel; /* the running job's flag, NULL when none */
static struct sigaction sigint_prev;         /* the handler ours replaced (Python's) */

/* Sets the job's cancel flag, then lets the handler it replaced see the
 * signal (Python's notes it and raises KeyboardInterrupt later). */
static void on_sigint(int sig, siginfo_t *info, void *uc) {
    if (sigint_cancel) *sigint_cancel = 1;
    if (sigint_prev.sa_flags & SA_SIGINFO) {
        if (sigint_prev.sa_sigaction) sigint_prev.sa_sigaction(sig, info, uc);
    } else if (sigint_prev.sa_handler != SIG_DFL && sigint_prev.sa_handler != SIG_IGN) {
        sigint_prev.sa_handler(sig);
    }
}

/* Installs on_sigint for cancel when SIGINT has a handler function (it
 * has Python's unless the program changed it); returns whether it did. */
static int sigint_install(volatile sig_atomic_t *cancel) {
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur)) return 0;
    if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN)) return 0;
    sigint_prev = cur;
    sigint_cancel = cancel;
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_sigint;
    ours.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_RESTART);
    ours.sa_mask = cur.sa_mask;
    if (sigaction(SIGINT, &ours, NULL)) {
        sigint_cancel = NULL;
        return 0;
    }
    return 1;
}

static void sigint_restore(void) {
    sigaction(SIGINT, &sigint_prev, NULL);
    sigint_cancel = NULL;
}

/* ---- the hooks ------------------------------------------------------------------------ */

typedef struct job_ctx {
    PyThreadState *ts;           /* the caller's, while the job runs without the GIL */
    PyObject *callback;          /* NULL: none                                     */
    PyObject *history;           /* list of the updates' dicts                     */
    volatile sig_atomic_t cancel;
    int stopped;                 /* the callback returned False                    */
    PyObject *exc_type, *exc_value, *exc_tb; /* raised in a hook: raised again at the end */
} job_ctx;

/* A float, NaN kept (the history's figures). */
static PyObject *num(double v) { return PyFloat_FromDouble(v); }

/* The dict of one update. */
static PyObject *update_info(dp_optimize_phase phase, const dp_run_state *s) {
    const dp_run_update *u = &s->upd;
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    if (dp_py_dict_steal(d, "phase", PyUnicode_FromString(phase == DP_OPTIMIZE_TRAIN ? "train" : "search-after")) ||
        dp_py_dict_steal(d, "update", PyLong_FromLongLong(s->updates)) ||
        dp_py_dict_steal(d, "samples", PyLong_FromLongLong(s->samples)) ||
        dp_py_dict_steal(d, "best_s", num(s->best_s)) ||
        dp_py_dict_steal(d, "best_by", PyUnicode_FromString(best_by_name(s->best_by))) ||
        dp_py_dict_steal(d, "n", PyLong_FromLong(s->n_last)) || dp_py_dict_steal(d, "valid", PyLong_FromLong(u->valid)) ||
        dp_py_dict_steal(d, "mean_s", num(u->mean_s)) || dp_py_dict_steal(d, "median_s", num(u->median_s)) ||
        dp_py_dict_steal(d, "elapsed_s", num(s->elapsed_s)) || dp_py_dict_steal(d, "entropy", num(u->entropy[1])) ||
        dp_py_dict_steal(d, "grouper_entropy", num(u->entropy[0])) || dp_py_dict_steal(d, "kl", num(u->kl)) ||
        dp_py_dict_steal(d, "elite_s", num(u->elite_s)) || dp_py_dict_steal(d, "greedy_s", num(u->greedy_s)) ||
        dp_py_dict_steal(d, "baseline", num(s->baseline))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* Keeps the exception being raised (the first one) and stops the job. */
static void stash_error(job_ctx *c) {
    if (!c->exc_type) PyErr_Fetch(&c->exc_type, &c->exc_value, &c->exc_tb);
    else PyErr_Clear();
    c->cancel = 1;
}

/* After each step, with the GIL: the history, the callback, the signals. */
static void hook_stepped(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    job_ctx *c = user;
    if (s->n_last <= 0) return; /* an abandoned step */
    PyEval_RestoreThread(c->ts);
    PyObject *info = update_info(phase, s);
    if (!info || PyList_Append(c->history, info)) stash_error(c);
    else if (c->callback && !c->cancel) {
        PyObject *r = PyObject_CallOneArg(c->callback, info);
        if (!r) stash_error(c);
        else {
            int t = r == Py_None ? 1 : PyObject_IsTrue(r);
            if (t < 0) stash_error(c);
            else if (!t) c->stopped = 1, c->cancel = 1;
            Py_DECREF(r);
        }
    }
    Py_XDECREF(info);
    if (PyErr_CheckSignals()) stash_error(c);
    c->ts = PyEval_SaveThread();
}

/* ---- the options, as the command line fills them --------------------------------------- */

/* What optimize() was given, after the Python wrapper's checks. */
typedef struct job_args {
    const char *agent, *out, *log, *plot, *trace, *checkpoint, *resume, *init, *measure, *units;
    long long updates, placements, checkpoint_every;
    double seconds, noise, measure_timeout, search_after;
    unsigned long long seed;
    int threads, steps, warmup, mean, cache, search, handle_sigint;
    PyObject *sets, *baselines, *init_placement, *callback;
} job_args;

/* The settings: the preset (the base values for the search), the walks off
 * for noisy or measured evaluations, then the overrides in order, as
 * dplace optimize builds them. Warnings go to warns. -1 with ValueError. */
static int build_settings(const job_args *a, dp_settings *st, PyObject *warns) {
    if (a->search) dp_settings_base(st);
    else if (dp_settings_preset(a->agent, st)) {
        PyErr_Format(PyExc_ValueError, "agent \"%s\": no such agent (dplace.agents() lists them)", a->agent);
        return -1;
    }
    st->search.seed = a->seed, st->search.threads = a->threads;
    dp_units_spec units = {DP_UNITS_AUTO, 0};
    if (dp_units_spec_parse(a->units, &units)) {
        PyErr_Format(PyExc_ValueError, "units: unknown \"%s\" (module, module:DEPTH, op, auto)", a->units);
        return -1;
    }
    st->search.units = st->agent.units = units;
    dp_agent_config *cfg = &st->agent;
    if (!a->search && cfg->walks.moves > 0 && (a->measure || a->noise > 0)) {
        PyObject *w = PyUnicode_FromFormat("elite walks off (the %s preset's elite-moves=%d: its walks need noiseless "
                                           "simulations; placements here are %s)",
                                           cfg->preset, (int)cfg->walks.moves,
                                           a->measure ? "measured" : "simulated with noise");
        if (!w || PyList_Append(warns, w)) {
            Py_XDECREF(w);
            return -1;
        }
        Py_DECREF(w);
        cfg->walks.moves = 0;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(a->sets); k++) {
        const char *key, *value;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(a->sets, k), "ss", &key, &value)) return -1;
        const dp_setting *r = dp_settings_find(key);
        if (r && a->search && r->target != DP_SETTING_SEARCH) {
            PyErr_Format(PyExc_ValueError, "setting %s is a learned agent's; agent=\"search\" takes its own "
                                           "(dplace.settings(\"search\") lists them)", key);
            return -1;
        }
        if (r && dp_settings_renamed(key)) {
            PyObject *w = PyUnicode_FromFormat("setting %s is now %s (the old name goes in the next release)", key,
                                               r->name);
            if (!w || PyList_Append(warns, w)) {
                Py_XDECREF(w);
                return -1;
            }
            Py_DECREF(w);
        }
        dp_error err;
        dp_error_clear(&err);
        if (dp_settings_set(st, key, value, &err)) {
            PyErr_Format(PyExc_ValueError, "settings: %s", err.msg);
            return -1;
        }
    }
    dp_error err;
    dp_error_clear(&err);
    if (!a->search && dp_agent_config_check(cfg, &err)) {
        PyErr_Format(PyExc_ValueError, "settings: %s", err.msg);
        return -1;
    }
    return 0;
}

/* The checks across arguments that dplace optimize makes; -1 with ValueError. */
static int check_args(const job_args *a, const dp_settings *st) {
    const char *bad = NULL;
    if (a->init && a->resume) bad = "init starts a new run from another's networks; resume continues one: give one";
    else if (a->search && a->updates == 0)
        bad = "updates=0 evaluates a learned agent's greedy placement; agent=\"search\" needs at least one update";
    else if (a->search && (a->init || a->search_after > 0 || a->measure))
        bad = "agent=\"search\" takes no init, search_after or measure (a start placement: init_placement)";
    else if (a->search && (a->noise > 0 || a->steps > 1))
        bad = "agent=\"search\" simulates one step without noise (no noise, steps)";
    else if (!a->search && a->init_placement != Py_None)
        bad = "init_placement is a start of the search (agent=\"search\"); search-after starts from the agent's best";
    else if ((a->search_after > 0 || (!a->search && st->search_after_s > 0)) && a->measure)
        bad = "search-after searches with the simulator; not with measure";
    if (bad) PyErr_Format(PyExc_ValueError, "optimize: %s", bad);
    return bad ? -1 : 0;
}

/* The job's options for g on ds from a and st, as opt_job_options fills
 * them; list and init hold the baselines and the start placement. */
static int job_options(const job_args *a, const dp_settings *st, dp_py_graph *g, dp_py_devices *d, job_ctx *c,
                       dp_place_method *list, PyArrayObject **init, dp_optimize_options *jo) {
    *jo = dp_optimize_options_default();
    jo->g = g->g, jo->ds = d->ds;
    jo->settings = *st;
    jo->search = a->search;
    jo->seed = a->seed, jo->threads = a->threads;
    jo->max_updates = a->placements > 0 ? -1 : a->updates, jo->max_placements = a->placements;
    jo->max_seconds = a->seconds;
    if (a->search_after > 0) jo->settings.search_after_s = a->search_after;
    if (a->baselines != Py_None) {
        const char *s = PyUnicode_AsUTF8(a->baselines);
        dp_error err;
        dp_error_clear(&err);
        if (!s) return -1;
        if (dp_reference_parse_methods(s, list, DP_REFERENCE_MAX, &jo->n_baselines, &err)) {
            PyErr_Format(PyExc_ValueError, "baselines: %s", err.msg);
            return -1;
        }
        jo->baselines = list;
    }
    jo->expert = dp_zoo_expert_placement;
    if (a->init_placement != Py_None) {
        if (!(*init = dp_py_placements(a->init_placement, 1, g->g->n_ops, d->ds->n_devices, "init_placement")))
            return -1;
        jo->init_placement = PyArray_DATA(*init), jo->init_placement_name = "init_placement";
    }
    jo->init_policy_path = a->init;
    dp_agent_eval_options *eo = &jo->eval;
    eo->cache = a->cache;
    eo->sim.noise_sigma = a->noise, eo->sim.steps = a->steps, eo->sim.warmup = a->warmup, eo->sim.mean = a->mean;
    eo->measure_cmd = a->measure, eo->measure_timeout_s = a->measure_timeout;
    jo->best_path = a->out, jo->log_path = a->log, jo->checkpoint_path = a->checkpoint;
    jo->checkpoint_every = a->checkpoint_every, jo->resume_path = a->resume;
    jo->plot_path = a->plot, jo->trace_path = a->trace;
    jo->cancel = &c->cancel;
    return 0;
}

/* ---- the result ------------------------------------------------------------------------ */

static PyObject *float_or_none(double v) {
    if (!isfinite(v)) Py_RETURN_NONE;
    return PyFloat_FromDouble(v);
}

/* The search's figures (the method's, or search-after's). */
static PyObject *search_dict(dp_search *se) {
    dp_search_stats x;
    dp_search_get_stats(se, &x);
    const char *start = NULL;
    dp_sim_result sr;
    dp_search_start(se, &start, &sr);
    const dp_run_state *s = dp_search_get_state(se);
    return Py_BuildValue("{s:z,s:N,s:N,s:L,s:L,s:d,s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "start", start, "start_s",
                         float_or_none(start ? sr.step_time_s : NAN), "best_s", float_or_none(s->best_s), "updates",
                         (long long)s->updates, "samples", (long long)s->samples, "found_s", s->best_elapsed_s,
                         "proposed", (long long)x.proposed, "simulated", (long long)x.simulated, "oom_refused",
                         (long long)x.oom_rejected, "accepted", (long long)x.accepted, "improved",
                         (long long)x.improved, "restarts", (long long)x.restarts, "critical", (long long)x.critical);
}

/* The best placement and its simulated result (one step, no noise, on a
 * workspace of its own). */
static int best_of(dp_optimize *op, dp_py_devices *d, int32_t n_ops, PyObject **place, PyObject **result) {
    const dp_run_state *f = dp_optimize_final_state(op);
    *place = Py_NewRef(Py_None), *result = Py_NewRef(Py_None);
    if (!f->best_placement) return 0;
    Py_DECREF(*place);
    Py_DECREF(*result);
    *result = NULL;
    if (!(*place = dp_py_int32_array(f->best_placement, n_ops))) return -1;
    dp_error err;
    dp_error_clear(&err);
    dp_sim_workspace *ws = dp_sim_workspace_init(dp_optimize_sim(op), &err);
    dp_sim_result res;
    dp_status st = ws ? DP_STATUS_OK : err.status;
    if (ws) {
        Py_BEGIN_ALLOW_THREADS
        st = dp_sim_run_ws(dp_optimize_sim(op), ws, f->best_placement, NULL, &res, &err);
        Py_END_ALLOW_THREADS
    }
    if (!st) *result = dp_py_result_new(&res, d);
    else dp_py_raise(&err);
    dp_sim_workspace_free(ws);
    return *result ? 0 : -1;
}

/* The dict optimize() returns (dplace.OptimizeResult wraps it). */
static PyObject *job_result(const job_args *a, const dp_settings *st, dp_optimize *op, dp_py_graph *g,
                            dp_py_devices *d, job_ctx *c, PyObject *warns, double wall_s) {
    const dp_run_state *s = dp_optimize_state(op), *f = dp_optimize_final_state(op);
    const dp_reference *rt = dp_optimize_reference(op);
    const dp_run_result *rr = dp_optimize_result(op);
    dp_agent *agent = dp_optimize_agent(op);
    dp_search *after = dp_optimize_search_after(op), *se = agent ? after : dp_optimize_search(op);
    PyObject *place, *result;
    if (best_of(op, d, g->g->n_ops, &place, &result)) return NULL;
    char cbuf[4096], ubuf[32];
    dp_units_spec_format(dp_optimize_units(op), ubuf, sizeof ubuf);
    if (agent) dp_settings_format_target(DP_SETTING_AGENT, &st->agent, cbuf, sizeof cbuf);
    else dp_settings_format_target(DP_SETTING_SEARCH, &st->search, cbuf, sizeof cbuf);
    PyObject *train = Py_BuildValue(
        "{s:L,s:L,s:N,s:s,s:L,s:L,s:d,s:N,s:O,s:d,s:d,s:d,s:L,s:L,s:i,s:L}", "updates", (long long)s->updates,
        "samples", (long long)s->samples, "best_s", float_or_none(s->best_s), "best_by", best_by_name(s->best_by),
        "best_update", (long long)s->best_update, "best_sample", (long long)s->best_sample, "found_s",
        s->best_elapsed_s, "final_greedy_s", float_or_none(s->final_s), "best_is_final_greedy",
        s->best_final ? Py_True : Py_False, "train_s", s->elapsed_s, "policy_s", s->policy_s, "eval_s", s->eval_s,
        "cache_lookups", (long long)s->cache_lookups, "cache_hits", (long long)s->cache_hits, "groups",
        (int)s->n_groups, "elite_simulations", (long long)dp_optimize_walk_simulations(op));
    PyObject *refs = Py_BuildValue(
        "{s:N,s:N,s:z,s:N,s:{s:d,s:d,s:d,s:d,s:d}}", "single_gpu_s", float_or_none(rt->gpu_valid ? rt->gpu_s : NAN),
        "expert_s", float_or_none(rt->expert_valid ? rt->expert_s : NAN), "best_baseline", rt->best_name,
        "best_baseline_s", float_or_none(rt->best >= 0 ? rt->best_s : NAN), "bound", "bound_s", rt->bound.bound_s,
        "critical_path_s", rt->bound.critical_path_s, "work_s", rt->bound.work_s, "work_uniform_s",
        rt->bound.work_uniform_s, "fanout_s", rt->bound.fanout_s);
    PyObject *search = se ? search_dict(se) : Py_NewRef(Py_None);
    return Py_BuildValue("{s:N,s:N,s:N,s:s,s:s,s:L,s:L,s:d,s:N,s:N,s:N,s:N,s:N,s:L,s:O,s:O,s:O,s:O,s:d,s:K,s:s,s:s,s:s}",
                         "placement", place, "result", result, "best_s", float_or_none(f->best_s), "best_by",
                         best_by_name(f->best_by), "best_phase", f == s ? "train" : "search-after", "best_update",
                         (long long)f->best_update, "best_sample", (long long)f->best_sample, "found_s",
                         f->best_elapsed_s, "train", train, "references", refs, "search", search,
                         "first_tenth_mean_s", float_or_none(rr->first_mean_s), "last_tenth_mean_s",
                         float_or_none(rr->last_mean_s), "tenth_updates", (long long)rr->tenth, "interrupted",
                         rr->interrupted || c->cancel ? Py_True : Py_False, "stopped_by_callback",
                         c->stopped ? Py_True : Py_False, "history", c->history, "warnings", warns, "wall_s", wall_s,
                         "seed", a->seed, "agent", agent ? st->agent.preset : "search", "settings", cbuf, "units",
                         ubuf);
}

/* Runs the built job without the GIL, Ctrl-C handled on the main thread. */
static dp_status job_run(dp_optimize *op, const job_args *a, job_ctx *c, dp_error *err) {
    dp_optimize_hooks hooks = {c, NULL, NULL, hook_stepped, NULL};
    int sig = a->handle_sigint && sigint_install(&c->cancel);
    c->ts = PyEval_SaveThread();
    dp_status st = dp_optimize_run(op, &hooks, err);
    PyEval_RestoreThread(c->ts);
    if (sig) sigint_restore();
    return st;
}

/* Takes the job lock without the GIL; -1 with RuntimeError when this
 * thread holds it (a callback starting a job). */
static int job_lock(void) {
    if (job_owned && pthread_equal(job_owner, pthread_self())) {
        PyErr_SetString(PyExc_RuntimeError,
                        "optimize: a job is running in this thread (its callback cannot start another)");
        return -1;
    }
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&job_mutex);
    Py_END_ALLOW_THREADS
    job_owner = pthread_self(), job_owned = 1;
    return 0;
}

static void job_unlock(void) {
    job_owned = 0;
    pthread_mutex_unlock(&job_mutex);
}

/* Parses _optimize's arguments into a; -1 with the exception. */
static int parse_job_args(PyObject *args, PyObject *kwargs, PyObject **gobj, PyObject **dobj, job_args *a) {
    static char *kw[] = {"graph", "devices", "agent", "sets", "updates", "placements", "seconds", "seed", "threads",
                         "baselines", "init_placement", "init", "out", "log", "plot", "trace", "checkpoint",
                         "checkpoint_every", "resume", "noise", "steps", "warmup", "mean", "cache", "measure",
                         "measure_timeout", "search_after", "callback", "handle_sigint", "units", NULL};
    memset(a, 0, sizeof *a);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!sO!LLdKiOOzzzzzzLzdiippzddOps:_optimize", kw,
                                     &dp_py_graph_type, gobj, &dp_py_devices_type, dobj, &a->agent, &PyList_Type,
                                     &a->sets, &a->updates, &a->placements, &a->seconds, &a->seed, &a->threads,
                                     &a->baselines, &a->init_placement, &a->init, &a->out, &a->log, &a->plot,
                                     &a->trace, &a->checkpoint, &a->checkpoint_every, &a->resume, &a->noise,
                                     &a->steps, &a->warmup, &a->mean, &a->cache, &a->measure, &a->measure_timeout,
                                     &a->search_after, &a->callback, &a->handle_sigint, &a->units))
        return -1;
    a->search = !strcmp(a->agent, "search");
    if (a->baselines != Py_None && !PyUnicode_Check(a->baselines)) {
        PyErr_SetString(PyExc_TypeError, "baselines: None or a comma-separated str of placer names");
        return -1;
    }
    if (a->callback == Py_None) a->callback = NULL;
    else if (!PyCallable_Check(a->callback)) {
        PyErr_Format(PyExc_TypeError, "callback: a callable or None, not %s", Py_TYPE(a->callback)->tp_name);
        return -1;
    }
    if (a->threads < 1 || a->threads > 256) {
        PyErr_Format(PyExc_ValueError, "threads: %d, must be in 1..256", a->threads);
        return -1;
    }
    return 0;
}

/* _optimize(...) -> dict: the job, its arguments checked by dplace.optimize */
static PyObject *py_optimize(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *gobj, *dobj;
    job_args a;
    if (parse_job_args(args, kwargs, &gobj, &dobj, &a)) return NULL;
    dp_py_graph *g = (dp_py_graph *)gobj;
    dp_py_devices *d = (dp_py_devices *)dobj;
    dp_settings st;
    PyObject *warns = PyList_New(0);
    if (!warns) return NULL;
    if (build_settings(&a, &st, warns) || check_args(&a, &st)) {
        Py_DECREF(warns);
        return NULL;
    }
    job_ctx c = {.callback = a.callback, .history = PyList_New(0)};
    dp_place_method list[DP_REFERENCE_MAX];
    PyArrayObject *init = NULL;
    dp_optimize_options jo;
    PyObject *out = NULL;
    if (!c.history || job_options(&a, &st, g, d, &c, list, &init, &jo) || job_lock()) goto done;
    dp_error err;
    dp_error_clear(&err);
    dp_optimize *op;
    double t0 = dp_py_now();
    Py_BEGIN_ALLOW_THREADS
    dp_py_placers_lock(); /* the references and the groupers */
    op = dp_optimize_init(&jo, &err);
    dp_py_placers_unlock();
    Py_END_ALLOW_THREADS
    dp_status rs = op ? job_run(op, &a, &c, &err) : err.status;
    if (c.exc_type) PyErr_Restore(c.exc_type, c.exc_value, c.exc_tb);
    else if (rs) dp_py_raise(&err);
    else if (!PyErr_CheckSignals()) out = job_result(&a, &jo.settings, op, g, d, &c, warns, dp_py_now() - t0);
    Py_BEGIN_ALLOW_THREADS
    dp_optimize_free(op);
    Py_END_ALLOW_THREADS
    job_unlock();
done:
    Py_XDECREF(init);
    Py_XDECREF(c.history);
    Py_DECREF(warns);
    return out;
}

PyMethodDef dp_py_optimize_methods[] = {
    {"_optimize", (PyCFunction)(void (*)(void))py_optimize, METH_VARARGS | METH_KEYWORDS,
     "_optimize(...) -> dict: the job behind dplace.optimize (use that)"},
    {NULL, NULL, 0, NULL}};
