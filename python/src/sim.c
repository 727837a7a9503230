/* dplace.Simulator: a simulator context (include/dplace/sim.h) for a graph
 * on a device set, with a pool of workspaces so that any number of Python
 * threads simulate on one Simulator at once, each call on a workspace of
 * its own (never the context's shared one), the GIL released while it
 * runs. simulate_many spreads a batch over native threads. */
#include "dplace_py.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/run.h"
#include "dplace/zoo.h"

#define SIM_MAX_THREADS 256

static PyObject *sim_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"graph", "devices", NULL};
    PyObject *g, *d;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:Simulator", kw, &g, &d)) return NULL;
    if (!PyObject_TypeCheck(g, &dp_py_graph_type) || !PyObject_TypeCheck(d, &dp_py_devices_type)) {
        PyErr_Format(PyExc_TypeError, "Simulator(graph, devices): a dplace.Graph and a dplace.Devices, not %s and %s",
                     Py_TYPE(g)->tp_name, Py_TYPE(d)->tp_name);
        return NULL;
    }
    dp_py_sim *self = (dp_py_sim *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    Py_INCREF(g);
    Py_INCREF(d);
    self->graph = (dp_py_graph *)g, self->devices = (dp_py_devices *)d;
    dp_error err;
    dp_error_clear(&err);
    dp_sim *sim;
    Py_BEGIN_ALLOW_THREADS
    sim = dp_sim_init(self->graph->g, self->devices->ds, &err);
    Py_END_ALLOW_THREADS
    if (!(self->sim = sim)) {
        Py_DECREF(self);
        return dp_py_raise(&err);
    }
    return (PyObject *)self;
}

static void sim_dealloc(dp_py_sim *self) {
    for (int k = 0; k < self->n_pool; k++) dp_sim_workspace_free(self->pool[k]);
    free(self->pool);
    dp_sim_free(self->sim);
    Py_XDECREF(self->graph);
    Py_XDECREF(self->devices);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

dp_sim_workspace *dp_py_sim_take(dp_py_sim *self) {
    if (self->n_pool > 0) return self->pool[--self->n_pool];
    dp_error err;
    dp_error_clear(&err);
    dp_sim_workspace *ws = dp_sim_workspace_init(self->sim, &err);
    if (!ws) dp_py_raise(&err);
    return ws;
}

void dp_py_sim_give(dp_py_sim *self, dp_sim_workspace *ws) {
    if (self->n_pool == self->cap_pool) {
        int cap = self->cap_pool ? 2 * self->cap_pool : 4;
        dp_sim_workspace **p = realloc(self->pool, sizeof *p * (size_t)cap);
        if (!p) {
            dp_sim_workspace_free(ws); /* the pool stays as it is; the next call makes another */
            return;
        }
        self->pool = p, self->cap_pool = cap;
    }
    self->pool[self->n_pool++] = ws;
}

static PyObject *sim_repr(dp_py_sim *self) {
    return PyUnicode_FromFormat("<dplace.Simulator %s on %s>", self->graph->g->name ? self->graph->g->name : "",
                                self->devices->ds->name);
}

/* The placement argument: an array (as dp_py_placements_unchecked: the
 * run checks its range, and fail() explains), or a str that
 * dp_zoo_resolve_placement resolves ("gpu", "gpu:1", "cpu", "expert", a
 * file). A new int32 array, or NULL with the exception. */
static PyArrayObject *placement_arg(dp_py_sim *self, PyObject *obj, const char *what) {
    const dp_graph *g = self->graph->g;
    if (!PyUnicode_Check(obj))
        return dp_py_placements_unchecked(obj, 1, g->n_ops, self->devices->ds->n_devices, what);
    const char *spec = PyUnicode_AsUTF8(obj);
    if (!spec) return NULL;
    npy_intp n = g->n_ops;
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!a) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_zoo_resolve_placement(spec, g, self->devices->ds, PyArray_DATA(a), &err);
    Py_END_ALLOW_THREADS
    if (st) {
        Py_DECREF(a);
        dp_py_raise(&err);
        return NULL;
    }
    return a;
}

/* Raises the error of a failed run on a (rank 1 or 2): ValueError naming
 * the index out of range when there is one, else the library's. NULL. */
static PyObject *fail(dp_py_sim *self, PyArrayObject *a, int rank, const dp_error *err, const char *what) {
    if (err->status == DP_STATUS_INVALID &&
        dp_py_placements_explain(a, rank, self->graph->g->n_ops, self->devices->ds->n_devices, what))
        return NULL;
    return dp_py_raise(err);
}

/* The keywords of the simulate options (steps, warmup, noise, seed,
 * mean), after a method's own. */
#define SIM_OPTION_KW "steps", "warmup", "noise", "seed", "mean"

static PyObject *sim_simulate(dp_py_sim *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"placement", SIM_OPTION_KW, NULL};
    PyObject *p;
    long steps = 1, warmup = 0;
    double noise = 0;
    unsigned long long seed = 1;
    int mean = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$lldKp:simulate", kw, &p, &steps, &warmup, &noise, &seed, &mean))
        return NULL;
    dp_sim_options o;
    if (dp_py_sim_options(&o, steps, warmup, noise, seed, mean)) return NULL;
    PyArrayObject *a = placement_arg(self, p, "placement");
    if (!a) return NULL;
    dp_sim_workspace *ws = dp_py_sim_take(self);
    if (!ws) {
        Py_DECREF(a);
        return NULL;
    }
    dp_sim_result res;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_sim_run_ws(self->sim, ws, PyArray_DATA(a), &o, &res, &err);
    Py_END_ALLOW_THREADS
    PyObject *r = st ? fail(self, a, 1, &err, "placement") : dp_py_result_new(&res, self->devices);
    Py_DECREF(a);
    dp_py_sim_give(self, ws); /* after the result copied the link stats out of it */
    return r;
}

/* ---- simulate_many ---------------------------------------------------------------- */

typedef struct many_job {
    const dp_sim *sim;
    const int32_t *place;
    int32_t n_ops;
    npy_intp k;
    const dp_sim_options *o;
    dp_sim_result *res;
    dp_sim_workspace **ws;
    atomic_long next;    /* the next placement to take */
    atomic_int failed;   /* a run failed: the others stop */
    dp_error err;        /* the first failure's */
    pthread_mutex_t lock;
} many_job;

typedef struct many_arg {
    many_job *job;
    int t;
} many_arg;

/* Runs placements of the job, taking the next one left, on workspace t;
 * each result lands in its own row, so the rows do not depend on which
 * thread ran them. */
static void *many_worker(void *arg) {
    many_arg *a = arg;
    many_job *j = a->job;
    dp_error err;
    dp_error_clear(&err);
    for (;;) {
        long i = atomic_fetch_add(&j->next, 1);
        if (i >= j->k || atomic_load(&j->failed)) break;
        if (dp_sim_run_ws(j->sim, j->ws[a->t], j->place + (size_t)i * (size_t)j->n_ops, j->o, &j->res[i], &err)) {
            pthread_mutex_lock(&j->lock);
            if (!atomic_exchange(&j->failed, 1)) j->err = err;
            pthread_mutex_unlock(&j->lock);
            break;
        }
        j->res[i].link = NULL; /* the workspace's, overwritten by its next run */
    }
    return NULL;
}

/* Runs the job on n threads: this one and n-1 started here (fewer when
 * some cannot start: the others take their share). */
static void many_run(many_job *j, int n) {
    pthread_t th[SIM_MAX_THREADS];
    many_arg args[SIM_MAX_THREADS];
    int started = 0;
    for (int t = 1; t < n; t++) {
        args[t] = (many_arg){j, t};
        if (pthread_create(&th[t], NULL, many_worker, &args[t])) break;
        started = t;
    }
    args[0] = (many_arg){j, 0};
    many_worker(&args[0]);
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
}

static PyObject *sim_simulate_many(dp_py_sim *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"placements", "threads", SIM_OPTION_KW, NULL};
    PyObject *p;
    int threads = 1;
    long steps = 1, warmup = 0;
    double noise = 0;
    unsigned long long seed = 1;
    int mean = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i$lldKp:simulate_many", kw, &p, &threads, &steps, &warmup,
                                     &noise, &seed, &mean))
        return NULL;
    if (threads < 1 || threads > SIM_MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "threads: %d, must be in 1..%d", threads, SIM_MAX_THREADS);
        return NULL;
    }
    dp_sim_options o;
    if (dp_py_sim_options(&o, steps, warmup, noise, seed, mean)) return NULL;
    const dp_graph *g = self->graph->g;
    PyArrayObject *a = dp_py_placements_unchecked(p, 2, g->n_ops, self->devices->ds->n_devices, "placements");
    if (!a) return NULL;
    npy_intp k = PyArray_DIM(a, 0);
    int n = k < threads ? (int)(k > 0 ? k : 1) : threads;
    many_job j = {.sim = self->sim, .place = PyArray_DATA(a), .n_ops = g->n_ops, .k = k, .o = &o};
    j.res = malloc(sizeof(dp_sim_result) * (size_t)(k > 0 ? k : 1));
    j.ws = calloc((size_t)n, sizeof *j.ws);
    PyObject *out = NULL;
    int got = 0;
    if (!j.res || !j.ws) PyErr_NoMemory();
    else
        for (; got < n && (j.ws[got] = dp_py_sim_take(self)); got++) {}
    if (got == n) {
        atomic_init(&j.next, 0);
        atomic_init(&j.failed, 0);
        dp_error_clear(&j.err);
        pthread_mutex_init(&j.lock, NULL);
        Py_BEGIN_ALLOW_THREADS
        many_run(&j, n);
        Py_END_ALLOW_THREADS
        pthread_mutex_destroy(&j.lock);
        out = atomic_load(&j.failed) ? fail(self, a, 2, &j.err, "placements")
                                     : dp_py_batch_new(j.res, k, self->devices->ds->n_devices);
    }
    for (int t = 0; t < got; t++) dp_py_sim_give(self, j.ws[t]);
    free(j.ws);
    free(j.res);
    Py_DECREF(a);
    return out;
}

/* ---- the rest ---------------------------------------------------------------------- */

static PyObject *sim_placement(dp_py_sim *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "placement: a str (\"gpu\", \"gpu:1\", \"cpu\", \"expert\" or a file), not %s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    return (PyObject *)placement_arg(self, arg, "placement");
}

static PyObject *sim_lower_bound(dp_py_sim *self, PyObject *noargs) {
    dp_run_bound b;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_run_lower_bound(self->graph->g, self->devices->ds, self->sim, &b, &err);
    Py_END_ALLOW_THREADS
    if (st) return dp_py_raise(&err);
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d}", "bound_s", b.bound_s, "critical_path_s", b.critical_path_s, "work_s",
                         b.work_s, "work_uniform_s", b.work_uniform_s, "fanout_s", b.fanout_s);
}

static PyObject *sim_trace(dp_py_sim *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"placement", "path", SIM_OPTION_KW, NULL};
    PyObject *p, *path_obj;
    long steps = 1, warmup = 0;
    double noise = 0;
    unsigned long long seed = 1;
    int mean = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$lldKp:trace", kw, &p, &path_obj, &steps, &warmup, &noise,
                                     &seed, &mean))
        return NULL;
    dp_sim_options o;
    if (dp_py_sim_options(&o, steps, warmup, noise, seed, mean)) return NULL;
    o.record_trace = 1;
    PyObject *path = dp_py_path(path_obj, "path");
    if (!path) return NULL;
    PyArrayObject *a = placement_arg(self, p, "placement");
    dp_sim_workspace *ws = a ? dp_py_sim_take(self) : NULL;
    if (!ws) {
        Py_XDECREF(a);
        Py_DECREF(path);
        return NULL;
    }
    dp_sim_result res;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    int ran;
    Py_BEGIN_ALLOW_THREADS
    st = dp_sim_run_ws(self->sim, ws, PyArray_DATA(a), &o, &res, &err);
    ran = !st;
    if (!st) st = dp_trace_write_ws(self->sim, ws, PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS
    PyObject *r = !st ? dp_py_result_new(&res, self->devices) : ran ? dp_py_raise(&err) : fail(self, a, 1, &err, "placement");
    dp_py_sim_give(self, ws);
    Py_DECREF(a);
    Py_DECREF(path);
    return r;
}

/* op_seconds() -> float64 [n_ops, D]: each op's time on each device */
static PyObject *sim_op_seconds(dp_py_sim *self, PyObject *noargs) {
    npy_intp dims[2] = {self->graph->g->n_ops, self->devices->ds->n_devices};
    PyObject *a = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    if (!a) return NULL;
    double *t = PyArray_DATA((PyArrayObject *)a);
    for (npy_intp i = 0; i < dims[0]; i++)
        for (npy_intp d = 0; d < dims[1]; d++) t[i * dims[1] + d] = dp_sim_op_seconds(self->sim, (int32_t)i, (int32_t)d);
    return a;
}

static PyObject *sim_reduce(dp_py_sim *self, PyObject *noargs) {
    return Py_BuildValue("(O(OO))", (PyObject *)Py_TYPE(self), self->graph, self->devices);
}

static PyObject *sim_get_graph(dp_py_sim *self, void *c) { return Py_NewRef(self->graph); }
static PyObject *sim_get_devices(dp_py_sim *self, void *c) { return Py_NewRef(self->devices); }

static PyMethodDef sim_methods[] = {
    {"simulate", (PyCFunction)(void (*)(void))sim_simulate, METH_VARARGS | METH_KEYWORDS,
     "simulate(placement, *, steps=1, warmup=0, noise=0.0, seed=1, mean=False) -> SimResult\n\n"
     "Simulates one training step of the graph placed by placement: an integer array of one device index per op "
     "(int32 is used as it is; other integer dtypes are converted; floats raise TypeError, a wrong shape or an "
     "index out of range ValueError), or a str (\"gpu\", \"gpu:1\", \"cpu\", \"expert\", a dplace-placement "
     "file). steps, warmup, noise (a log-normal sigma on op times), seed and mean are the papers' measuring "
     "protocol (docs/simulator.md). The GIL is released; threads may call it at once."},
    {"simulate_many", (PyCFunction)(void (*)(void))sim_simulate_many, METH_VARARGS | METH_KEYWORDS,
     "simulate_many(placements, threads=1, *, steps=1, warmup=0, noise=0.0, seed=1, mean=False) -> SimBatch\n\n"
     "Simulates each row of a [k, n_ops] integer array on `threads` native threads, each with a workspace of its "
     "own; row i of the result is what simulate(placements[i]) gives, whatever the thread count."},
    {"placement", (PyCFunction)sim_placement, METH_O,
     "placement(spec) -> int32 array: \"gpu\", \"gpu:1\", \"cpu\" (every op there, constrained ops where they "
     "must go), \"expert\" (a zoo graph's human placement) or a dplace-placement file"},
    {"lower_bound", (PyCFunction)sim_lower_bound, METH_NOARGS,
     "lower_bound() -> dict: bound_s, the largest of critical_path_s, work_s and fanout_s (and work_uniform_s): no "
     "placement's step time is below it"},
    {"trace", (PyCFunction)(void (*)(void))sim_trace, METH_VARARGS | METH_KEYWORDS,
     "trace(placement, path, *, steps=1, ...) -> SimResult\n\nSimulates the placement and writes its timeline as a "
     "Chrome trace (open in https://ui.perfetto.dev), atomically."},
    {"op_seconds", (PyCFunction)sim_op_seconds, METH_NOARGS,
     "op_seconds() -> float64 array [n_ops, len(devices)]: each op's time on each device, as the simulator uses it"},
    {"__reduce__", (PyCFunction)sim_reduce, METH_NOARGS, "pickling: the graph and the device set"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef sim_getset[] = {{"graph", (getter)sim_get_graph, NULL, "the Graph", NULL},
                                   {"devices", (getter)sim_get_devices, NULL, "the Devices", NULL},
                                   {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject dp_py_sim_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dplace.Simulator",
    .tp_basicsize = sizeof(dp_py_sim),
    .tp_dealloc = (destructor)sim_dealloc,
    .tp_repr = (reprfunc)sim_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Simulator(graph, devices)\n\ndplace's simulator for graph on devices (it keeps both alive). "
              "Deterministic; thread-safe: simulate, simulate_many and trace run on workspaces of their own with the "
              "GIL released. Raises dplace.Error when the devices cannot host the graph (a constraint names a device "
              "the set lacks).",
    .tp_methods = sim_methods,
    .tp_getset = sim_getset,
    .tp_new = sim_new,
};

int dp_py_sim_ready(PyObject *m) {
    if (PyType_Ready(&dp_py_sim_type)) return -1;
    return PyModule_AddObjectRef(m, "Simulator", (PyObject *)&dp_py_sim_type);
}
