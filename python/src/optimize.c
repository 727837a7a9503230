/* dplace.optimize's C half: one optimisation job (include/dplace/optimize.h)
 * with its options passed through as the caller gave them, judged by the
 * library (dp_optimize_prepare) as the command line's are, and its result
 * read from the library's JSON summary (dp_optimize_json), the keys of
 * `dplace optimize --json`, to which it adds the placement, its simulated
 * result, the history, the warnings and the wall time. The per-update
 * hook, with the GIL, records the history, calls the Python callback
 * (False stops the run) and checks for signals; Ctrl-C on the main thread
 * sets the job's cancel flag at once (the run driver abandons the step in
 * flight and writes the checkpoint), then KeyboardInterrupt is raised when
 * the job has ended. */
#include "dplace_py.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/optimize.h"
#include "dplace/zoo.h"

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
        dp_py_dict_steal(d, "best_by", PyUnicode_FromString(dp_run_best_by_name(s->best_by))) ||
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
    long long seed;
    int threads, steps, warmup, mean, cache, handle_sigint;
    PyObject *sets, *baselines, *init_placement, *callback;
} job_args;

/* The job's options for g on ds from a, passed through for the library to
 * judge; sets holds the settings' (key, value) pairs, init the start
 * placement. -1 with the exception. */
static int job_options(const job_args *a, dp_py_graph *g, dp_py_devices *d, job_ctx *c, dp_optimize_set *sets,
                       PyArrayObject **init, dp_optimize_options *jo) {
    *jo = dp_optimize_options_default();
    jo->g = g->g, jo->ds = d->ds;
    jo->agent = a->agent;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(a->sets); k++)
        if (!PyArg_ParseTuple(PyList_GET_ITEM(a->sets, k), "ss", &sets[k].key, &sets[k].value)) return -1;
    jo->sets = sets, jo->n_sets = (int32_t)PyList_GET_SIZE(a->sets);
    jo->units = a->units;
    jo->search_after_s = a->search_after;
    jo->seed = a->seed, jo->threads = a->threads;
    jo->max_updates = a->updates, jo->max_placements = a->placements, jo->max_seconds = a->seconds;
    jo->baselines = a->baselines == Py_None ? NULL : PyUnicode_AsUTF8(a->baselines);
    if (a->baselines != Py_None && !jo->baselines) return -1;
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

/* The plan's notes as a list of str, one per line. */
static PyObject *notes_list(const char *notes) {
    PyObject *l = PyList_New(0);
    for (const char *n = notes; l && *n;) {
        size_t len = strcspn(n, "\n");
        PyObject *w = PyUnicode_FromStringAndSize(n, (Py_ssize_t)len);
        if (!w || PyList_Append(l, w)) Py_CLEAR(l);
        Py_XDECREF(w);
        n += len + (n[len] != 0);
    }
    return l;
}

/* ---- the result ------------------------------------------------------------------------ */

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

/* The dict optimize() returns (dplace.OptimizeResult wraps it): the
 * library's summary, the keys of `dplace optimize --json`, and what only
 * Python has. */
static PyObject *job_result(dp_optimize *op, dp_py_graph *g, dp_py_devices *d, job_ctx *c, double wall_s) {
    dp_error err;
    dp_error_clear(&err);
    char *text = dp_optimize_json(op, c->cancel != 0, 17, &err);
    if (!text) return dp_py_raise(&err);
    PyObject *json = PyImport_ImportModule("json"), *out = NULL, *place = NULL, *result = NULL;
    PyObject *d_ = json ? PyObject_CallMethod(json, "loads", "s", text) : NULL;
    free(text);
    Py_XDECREF(json);
    if (!d_ || best_of(op, d, g->g->n_ops, &place, &result)) goto done;
    PyObject *warns = notes_list(dp_optimize_get_plan(op)->notes);
    if (warns && !dp_py_dict_steal(d_, "placement", Py_NewRef(place)) &&
        !dp_py_dict_steal(d_, "result", Py_NewRef(result)) && !dp_py_dict_steal(d_, "history", Py_NewRef(c->history)) &&
        !dp_py_dict_steal(d_, "warnings", Py_NewRef(warns)) &&
        !dp_py_dict_steal(d_, "stopped_by_callback", PyBool_FromLong(c->stopped)) &&
        !dp_py_dict_steal(d_, "wall_s", PyFloat_FromDouble(wall_s)))
        out = Py_NewRef(d_);
    Py_XDECREF(warns);
done:
    Py_XDECREF(place);
    Py_XDECREF(result);
    Py_XDECREF(d_);
    return out;
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
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!sO!LLdLiOOzzzzzzLzdiippzddOps:_optimize", kw,
                                     &dp_py_graph_type, gobj, &dp_py_devices_type, dobj, &a->agent, &PyList_Type,
                                     &a->sets, &a->updates, &a->placements, &a->seconds, &a->seed, &a->threads,
                                     &a->baselines, &a->init_placement, &a->init, &a->out, &a->log, &a->plot,
                                     &a->trace, &a->checkpoint, &a->checkpoint_every, &a->resume, &a->noise,
                                     &a->steps, &a->warmup, &a->mean, &a->cache, &a->measure, &a->measure_timeout,
                                     &a->search_after, &a->callback, &a->handle_sigint, &a->units))
        return -1;
    if (a->baselines != Py_None && !PyUnicode_Check(a->baselines)) {
        PyErr_SetString(PyExc_TypeError, "baselines: None or a comma-separated str of placer names");
        return -1;
    }
    if (a->callback == Py_None) a->callback = NULL;
    else if (!PyCallable_Check(a->callback)) {
        PyErr_Format(PyExc_TypeError, "callback: a callable or None, not %s", Py_TYPE(a->callback)->tp_name);
        return -1;
    }
    return 0;
}

/* _optimize(...) -> dict: the job; the library judges its arguments */
static PyObject *py_optimize(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *gobj, *dobj;
    job_args a;
    if (parse_job_args(args, kwargs, &gobj, &dobj, &a)) return NULL;
    dp_py_graph *g = (dp_py_graph *)gobj;
    dp_py_devices *d = (dp_py_devices *)dobj;
    job_ctx c = {.callback = a.callback, .history = PyList_New(0)};
    dp_optimize_set *sets = PyMem_Calloc((size_t)PyList_GET_SIZE(a.sets) + 1, sizeof *sets);
    PyArrayObject *init = NULL;
    dp_optimize_options jo;
    PyObject *out = NULL;
    if (!sets) PyErr_NoMemory();
    if (!sets || !c.history || job_options(&a, g, d, &c, sets, &init, &jo) || job_lock()) goto done;
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
    else if (!PyErr_CheckSignals()) out = job_result(op, g, d, &c, dp_py_now() - t0);
    Py_BEGIN_ALLOW_THREADS
    dp_optimize_free(op);
    Py_END_ALLOW_THREADS
    job_unlock();
done:
    PyMem_Free(sets);
    Py_XDECREF(init);
    Py_XDECREF(c.history);
    return out;
}

PyMethodDef dp_py_optimize_methods[] = {
    {"_optimize", (PyCFunction)(void (*)(void))py_optimize, METH_VARARGS | METH_KEYWORDS,
     "_optimize(...) -> dict: the job behind dplace.optimize (use that)"},
    {NULL, NULL, 0, NULL}};
