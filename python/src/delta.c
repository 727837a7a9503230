/* dplace.Delta: moves from a base placement (dp_sim_delta, sim.h): the
 * base's result, a move's result without touching the base, accepting a
 * move without simulating again, the cheap memory check that proves a
 * move out of memory, and the base's critical path. One thread's: a call
 * made while another thread's call runs raises RuntimeError. */
#include "dplace_py.h"

#include <stdlib.h>
#include <string.h>

typedef struct dp_py_delta {
    PyObject_HEAD
    dp_py_sim *sim; /* strong reference: the context outlives the evaluator */
    dp_sim_delta *d;
    int busy;       /* a call is running with the GIL released */
    int32_t *devs;  /* [n_ops] scratch for moves to one device (a longer move allocates its own) */
} dp_py_delta;

static PyObject *delta_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"simulator", NULL};
    PyObject *s;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!:Delta", kw, &dp_py_sim_type, &s)) return NULL;
    dp_py_delta *self = (dp_py_delta *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    Py_INCREF(s);
    self->sim = (dp_py_sim *)s;
    dp_error err;
    dp_error_clear(&err);
    if (!(self->devs = malloc(sizeof(int32_t) * (size_t)(self->sim->graph->g->n_ops + 1)))) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    if (!(self->d = dp_sim_delta_init(self->sim->sim, &err))) {
        Py_DECREF(self);
        return dp_py_raise(&err);
    }
    return (PyObject *)self;
}

static void delta_dealloc(dp_py_delta *self) {
    dp_sim_delta_free(self->d);
    free(self->devs);
    Py_XDECREF(self->sim);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Marks the evaluator busy; -1 with RuntimeError when it already is. */
static int enter(dp_py_delta *self) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Delta: in use by another thread (a Delta is one thread's; make one each)");
        return -1;
    }
    self->busy = 1;
    return 0;
}

static PyObject *delta_set_base(dp_py_delta *self, PyObject *arg) {
    const dp_graph *g = self->sim->graph->g;
    PyArrayObject *a = dp_py_placements(arg, 1, g->n_ops, self->sim->devices->ds->n_devices, "placement");
    if (!a || enter(self)) {
        Py_XDECREF(a);
        return NULL;
    }
    dp_sim_result res;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_sim_delta_set_base(self->d, PyArray_DATA(a), &res, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(a);
    PyObject *r = st ? dp_py_raise(&err) : dp_py_result_new(&res, self->sim->devices);
    self->busy = 0;
    return r;
}

/* The ops of a move as a new int32 array of op indices, checked. */
static PyArrayObject *ops_arg(dp_py_delta *self, PyObject *obj) {
    int32_t n_ops = self->sim->graph->g->n_ops;
    PyObject *o = PyArray_IsIntegerScalar(obj) && !PyBool_Check(obj) ? Py_BuildValue("[O]", obj) : (Py_INCREF(obj), obj);
    if (!o) return NULL;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OF(o, 0);
    Py_DECREF(o);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 1 || !PyTypeNum_ISINTEGER(PyArray_TYPE(a)) || PyTypeNum_ISBOOL(PyArray_TYPE(a))) {
        PyErr_SetString(PyExc_TypeError, "ops: an op index or a 1-D sequence of op indices (integers)");
        Py_DECREF(a);
        return NULL;
    }
    PyArrayObject *w = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)a, NPY_INT64, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(a);
    if (!w) return NULL;
    const int64_t *v = PyArray_DATA(w);
    for (npy_intp i = 0; i < PyArray_SIZE(w); i++)
        if (v[i] < 0 || v[i] >= n_ops) {
            PyErr_Format(PyExc_ValueError, "ops[%zd]: op %lld out of range (the graph has %d ops)", (Py_ssize_t)i,
                         (long long)v[i], (int)n_ops);
            Py_DECREF(w);
            return NULL;
        }
    PyArrayObject *out = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)w, NPY_INT32, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(w);
    return out;
}

/* The devices of a move: one device (for every op) or one per op; a new
 * int32 array of n entries, checked. */
static PyArrayObject *devs_arg(dp_py_delta *self, PyObject *obj, npy_intp n) {
    int32_t nd = self->sim->devices->ds->n_devices;
    if (PyArray_IsIntegerScalar(obj) && !PyBool_Check(obj)) {
        PyObject *index = PyNumber_Index(obj);
        long d = index ? PyLong_AsLong(index) : -1;
        Py_XDECREF(index);
        if (d == -1 && PyErr_Occurred()) return NULL;
        if (d < 0 || d >= nd) {
            PyErr_Format(PyExc_ValueError, "devices: device %ld out of range (the device set has %d: 0..%d)", d,
                         (int)nd, (int)nd - 1);
            return NULL;
        }
        PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32);
        if (!a) return NULL;
        for (npy_intp i = 0; i < n; i++) ((int32_t *)PyArray_DATA(a))[i] = (int32_t)d;
        return a;
    }
    return dp_py_placements(obj, 1, (int32_t)n, nd, "devices");
}

/* try_move(ops, devices) -> SimResult */
static PyObject *delta_try(dp_py_delta *self, PyObject *args) {
    PyObject *ops_obj, *devs_obj;
    if (!PyArg_ParseTuple(args, "OO:try_move", &ops_obj, &devs_obj)) return NULL;
    PyArrayObject *ops = ops_arg(self, ops_obj);
    PyArrayObject *devs = ops ? devs_arg(self, devs_obj, PyArray_SIZE(ops)) : NULL;
    if (!devs || enter(self)) {
        Py_XDECREF(ops);
        Py_XDECREF(devs);
        return NULL;
    }
    dp_sim_result res;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_sim_delta_try(self->d, (int32_t)PyArray_SIZE(ops), PyArray_DATA(ops), PyArray_DATA(devs), &res, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(ops);
    Py_DECREF(devs);
    PyObject *r = st ? dp_py_raise(&err) : dp_py_result_new(&res, self->sim->devices);
    self->busy = 0;
    return r;
}

static PyObject *delta_accept(dp_py_delta *self, PyObject *noargs) {
    if (enter(self)) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_status st = dp_sim_delta_accept(self->d, &err);
    self->busy = 0;
    if (st) return dp_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *delta_surely_oom(dp_py_delta *self, PyObject *args) {
    PyObject *ops_obj, *devs_obj;
    if (!PyArg_ParseTuple(args, "OO:surely_oom", &ops_obj, &devs_obj)) return NULL;
    PyArrayObject *ops = ops_arg(self, ops_obj);
    PyArrayObject *devs = ops ? devs_arg(self, devs_obj, PyArray_SIZE(ops)) : NULL;
    if (!devs || enter(self)) {
        Py_XDECREF(ops);
        Py_XDECREF(devs);
        return NULL;
    }
    int oom = dp_sim_delta_surely_oom(self->d, (int32_t)PyArray_SIZE(ops), PyArray_DATA(ops), PyArray_DATA(devs));
    self->busy = 0;
    Py_DECREF(ops);
    Py_DECREF(devs);
    return PyBool_FromLong(oom);
}

/* oom_devices(ops) -> bool [D]: surely_oom(ops, d) for every device d */
static PyObject *delta_oom_devices(dp_py_delta *self, PyObject *arg) {
    PyArrayObject *ops = ops_arg(self, arg);
    if (!ops) return NULL;
    if (!dp_sim_delta_base(self->d)) {
        Py_DECREF(ops);
        PyErr_SetString(PyExc_RuntimeError, "Delta.oom_devices: no base placement (call set_base first)");
        return NULL;
    }
    npy_intp nd = self->sim->devices->ds->n_devices, n = PyArray_SIZE(ops);
    PyObject *a = PyArray_SimpleNew(1, &nd, NPY_BOOL);
    if (!a || enter(self)) {
        Py_XDECREF(a);
        Py_DECREF(ops);
        return NULL;
    }
    npy_bool *m = PyArray_DATA((PyArrayObject *)a);
    int32_t *devs = n <= self->sim->graph->g->n_ops ? self->devs : malloc(sizeof(int32_t) * (size_t)n);
    if (!devs) {
        self->busy = 0;
        Py_DECREF(a);
        Py_DECREF(ops);
        return PyErr_NoMemory();
    }
    for (npy_intp d = 0; d < nd; d++) {
        for (npy_intp i = 0; i < n; i++) devs[i] = (int32_t)d;
        m[d] = (npy_bool)dp_sim_delta_surely_oom(self->d, (int32_t)n, PyArray_DATA(ops), devs);
    }
    if (devs != self->devs) free(devs);
    self->busy = 0;
    Py_DECREF(ops);
    return a;
}

static PyObject *delta_get_base(dp_py_delta *self, void *c) {
    const int32_t *b = dp_sim_delta_base(self->d);
    if (!b) Py_RETURN_NONE;
    return dp_py_int32_array(b, self->sim->graph->g->n_ops);
}

static PyObject *delta_get_base_result(dp_py_delta *self, void *c) {
    const dp_sim_result *r = dp_sim_delta_base_result(self->d);
    if (!r) Py_RETURN_NONE;
    return dp_py_result_new(r, self->sim->devices);
}

/* critical_path() -> list of dicts, in time order */
static PyObject *delta_critical_path(dp_py_delta *self, PyObject *noargs) {
    if (enter(self)) return NULL;
    dp_sim_path_step *steps = NULL;
    int32_t cap = 0, n = 0;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_sim_delta_critical_path_grow(self->d, &steps, &cap, &n, &err);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (st) {
        free(steps);
        return dp_py_raise(&err);
    }
    PyObject *l = PyList_New(n);
    for (int32_t k = 0; l && k < n; k++) {
        const dp_sim_path_step *s = &steps[k];
        PyObject *x = Py_BuildValue("{s:i,s:i,s:i,s:i,s:L,s:d,s:d}", "op", (int)s->op, "device", (int)s->device, "link",
                                    (int)s->link, "producer", (int)s->producer, "tensor", (long long)s->tensor,
                                    "start_s", s->start_s, "end_s", s->end_s);
        if (!x) Py_CLEAR(l);
        else PyList_SET_ITEM(l, k, x);
    }
    free(steps);
    return l;
}

static PyMethodDef delta_methods[] = {
    {"set_base", (PyCFunction)delta_set_base, METH_O,
     "set_base(placement) -> SimResult: makes placement the base and simulates it"},
    {"try_move", (PyCFunction)delta_try, METH_VARARGS,
     "try_move(ops, devices) -> SimResult\n\nThe base with ops (an index or a sequence) moved to devices (one "
     "device for all, or one each), simulated; the base stays. The result equals simulate() of the moved "
     "placement, bit for bit."},
    {"accept", (PyCFunction)delta_accept, METH_NOARGS,
     "accept(): the last try_move's placement becomes the base, without simulating again"},
    {"surely_oom", (PyCFunction)delta_surely_oom, METH_VARARGS,
     "surely_oom(ops, devices) -> bool\n\nTrue when the move surely runs a device out of memory (its resident "
     "parameters, or them with what a moved op holds while it runs, exceed its capacity). Conservative: False does "
     "not promise the move fits."},
    {"oom_devices", (PyCFunction)delta_oom_devices, METH_O,
     "oom_devices(ops) -> bool array [len(devices)]: surely_oom(ops, d) for each device d"},
    {"critical_path", (PyCFunction)delta_critical_path, METH_NOARGS,
     "critical_path() -> list of dicts (op, device, link, producer, tensor, start_s, end_s) from time 0 to the "
     "base's step time: the ops and transfer hops the last op waited for, in time order (op -1 for a hop)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef delta_getset[] = {
    {"base", (getter)delta_get_base, NULL, "a copy of the base placement (None before set_base)", NULL},
    {"base_result", (getter)delta_get_base_result, NULL, "the base's SimResult (None before set_base)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject dp_py_delta_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dplace.Delta",
    .tp_basicsize = sizeof(dp_py_delta),
    .tp_dealloc = (destructor)delta_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Delta(simulator)\n\nMoves from a base placement, as dplace's search evaluates them (sim.h, "
              "dp_sim_delta): set_base, try_move, accept, surely_oom, oom_devices, critical_path. One thread's.",
    .tp_methods = delta_methods,
    .tp_getset = delta_getset,
    .tp_new = delta_new,
};

int dp_py_delta_ready(PyObject *m) {
    if (PyType_Ready(&dp_py_delta_type)) return -1;
    return PyModule_AddObjectRef(m, "Delta", (PyObject *)&dp_py_delta_type);
}
