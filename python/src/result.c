/* dplace.SimResult (one simulated step: a copy of dp_sim_result with its
 * link statistics) and dplace.SimBatch (many, as arrays). */
#include "dplace_py.h"

#include <structmember.h>

#include <stdlib.h>
#include <string.h>

typedef struct dp_py_result {
    PyObject_HEAD
    dp_sim_result r;          /* r.link is links below                      */
    dp_sim_link_stats *links; /* [r.n_links], owned                         */
    dp_py_devices *devices;   /* for the device names (strong reference)    */
} dp_py_result;

PyObject *dp_py_result_new(const dp_sim_result *r, dp_py_devices *devices) {
    dp_py_result *self = PyObject_New(dp_py_result, &dp_py_result_type);
    if (!self) return NULL;
    self->r = *r;
    self->links = NULL;
    self->r.link = NULL;
    Py_INCREF(devices);
    self->devices = devices;
    if (r->n_links > 0 && r->link) {
        if (!(self->links = malloc(sizeof(dp_sim_link_stats) * (size_t)r->n_links))) {
            Py_DECREF(self);
            return PyErr_NoMemory();
        }
        memcpy(self->links, r->link, sizeof(dp_sim_link_stats) * (size_t)r->n_links);
        self->r.link = self->links;
    } else {
        self->r.n_links = 0;
    }
    return (PyObject *)self;
}

static void result_dealloc(dp_py_result *self) {
    free(self->links);
    Py_XDECREF(self->devices);
    PyObject_Free(self);
}

static PyObject *result_repr(dp_py_result *self) {
    char t[64];
    snprintf(t, sizeof t, "%.9g", self->r.step_time_s);
    if (self->r.valid) return PyUnicode_FromFormat("<dplace.SimResult step_time=%s s, valid>", t);
    return PyUnicode_FromFormat("<dplace.SimResult step_time=%s s, %s: %s>", t, dp_sim_verdict_name(self->r.verdict),
                                self->r.reason);
}

static PyObject *get_step_time(dp_py_result *self, void *c) { return PyFloat_FromDouble(self->r.step_time_s); }
static PyObject *get_valid(dp_py_result *self, void *c) { return PyBool_FromLong(self->r.valid); }
static PyObject *get_verdict(dp_py_result *self, void *c) {
    return PyUnicode_FromString(dp_sim_verdict_name(self->r.verdict));
}
static PyObject *get_reason(dp_py_result *self, void *c) {
    return PyUnicode_DecodeUTF8(self->r.reason, (Py_ssize_t)strlen(self->r.reason), "replace");
}
static PyObject *get_transfer_bytes(dp_py_result *self, void *c) {
    return PyLong_FromUnsignedLongLong(self->r.transfer_bytes);
}
static PyObject *get_n_transfers(dp_py_result *self, void *c) { return PyLong_FromLong(self->r.n_transfers); }
static PyObject *get_steps_measured(dp_py_result *self, void *c) { return PyLong_FromLong(self->r.steps_measured); }
static PyObject *get_score(dp_py_result *self, void *c) { return PyFloat_FromDouble(dp_sim_score(&self->r)); }
static PyObject *get_excess(dp_py_result *self, void *c) { return PyFloat_FromDouble(dp_sim_result_excess(&self->r)); }

/* A per-device array: 0 peak_bytes, 1 memory_bytes, 2 param_bytes
 * (uint64), 3 busy_s (float64), 4 n_ops (int32). */
static PyObject *per_device(dp_py_result *self, int what) {
    npy_intp n = self->r.n_devices;
    PyObject *a = PyArray_SimpleNew(1, &n, what <= 2 ? NPY_UINT64 : what == 3 ? NPY_FLOAT64 : NPY_INT32);
    if (!a) return NULL;
    void *p = PyArray_DATA((PyArrayObject *)a);
    for (int32_t d = 0; d < self->r.n_devices; d++) {
        const dp_sim_device_stats *s = &self->r.device[d];
        if (what <= 2) ((uint64_t *)p)[d] = what == 0 ? s->peak_bytes : what == 1 ? s->memory_bytes : s->param_bytes;
        else if (what == 3) ((double *)p)[d] = s->busy_s;
        else ((int32_t *)p)[d] = s->n_ops;
    }
    return a;
}

static PyObject *get_peak(dp_py_result *self, void *c) { return per_device(self, 0); }
static PyObject *get_memory(dp_py_result *self, void *c) { return per_device(self, 1); }
static PyObject *get_params(dp_py_result *self, void *c) { return per_device(self, 2); }
static PyObject *get_busy(dp_py_result *self, void *c) { return per_device(self, 3); }
static PyObject *get_n_ops(dp_py_result *self, void *c) { return per_device(self, 4); }

/* links: list of dicts, one per link direction of the device set */
static PyObject *get_links(dp_py_result *self, void *c) {
    const dp_devices *ds = self->devices->ds;
    PyObject *l = PyList_New(self->r.n_links);
    for (int32_t k = 0; l && k < self->r.n_links; k++) {
        const dp_sim_link_stats *s = &self->links[k];
        const char *from = k < ds->n_links ? ds->devices[ds->links[k].from].name : "?";
        const char *to = k < ds->n_links ? ds->devices[ds->links[k].to].name : "?";
        PyObject *x = Py_BuildValue("{s:s,s:s,s:K,s:d,s:i}", "from", from, "to", to, "bytes",
                                    (unsigned long long)s->bytes, "busy_s", s->busy_s, "transfers", (int)s->n_transfers);
        if (!x) Py_CLEAR(l);
        else PyList_SET_ITEM(l, k, x);
    }
    return l;
}

static PyObject *get_device_names(dp_py_result *self, void *c) {
    return PyObject_GetAttrString((PyObject *)self->devices, "names");
}

/* to_dict(): the fields as plain Python values */
static PyObject *result_to_dict(dp_py_result *self, PyObject *noargs) {
    PyObject *d = PyDict_New();
    static const char *const keys[] = {"step_time", "valid", "verdict", "reason", "peak_bytes", "memory_bytes",
                                       "param_bytes", "busy", "n_ops", "transfer_bytes", "n_transfers",
                                       "steps_measured", "links", "device_names", NULL};
    for (int k = 0; d && keys[k]; k++) {
        PyObject *v = PyObject_GetAttrString((PyObject *)self, keys[k]);
        if (v && PyArray_Check(v)) {
            PyObject *l = PyObject_CallMethod(v, "tolist", NULL);
            Py_DECREF(v);
            v = l;
        }
        if (dp_py_dict_steal(d, keys[k], v)) Py_CLEAR(d);
    }
    return d;
}

static PyMethodDef result_methods[] = {
    {"to_dict", (PyCFunction)result_to_dict, METH_NOARGS, "to_dict() -> dict of the fields as plain Python values"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef result_getset[] = {
    {"step_time", (getter)get_step_time, NULL,
     "seconds of one training step (the median, or mean, of the measured steps)", NULL},
    {"valid", (getter)get_valid, NULL, "True when verdict is 'valid'", NULL},
    {"verdict", (getter)get_verdict, NULL,
     "'valid', 'oom' (a device's peak memory over its capacity), 'constraint' (an op on a device its constraint "
     "forbids) or 'colocation' (a colocation group split): the first problem found",
     NULL},
    {"reason", (getter)get_reason, NULL, "the problem in words, '' when valid", NULL},
    {"peak_bytes", (getter)get_peak, NULL, "uint64 array: each device's peak memory by liveness", NULL},
    {"memory_bytes", (getter)get_memory, NULL, "uint64 array: each device's capacity", NULL},
    {"param_bytes", (getter)get_params, NULL, "uint64 array: the parameters resident on each device", NULL},
    {"busy", (getter)get_busy, NULL, "float64 array: each device's seconds of op time", NULL},
    {"n_ops", (getter)get_n_ops, NULL, "int32 array: ops on each device", NULL},
    {"transfer_bytes", (getter)get_transfer_bytes, NULL, "bytes sent between devices (once per transfer)", NULL},
    {"n_transfers", (getter)get_n_transfers, NULL, "transfers between devices", NULL},
    {"steps_measured", (getter)get_steps_measured, NULL, "steps the time is the median (or mean) of", NULL},
    {"score", (getter)get_score, NULL,
     "the search's score (lower is better): the step time when valid; out of memory: 4 x the step time + the worst "
     "device's excess share; inf otherwise",
     NULL},
    {"excess", (getter)get_excess, NULL, "the worst device's (peak - capacity) / capacity, 0 when none is over",
     NULL},
    {"links", (getter)get_links, NULL, "list of dicts per link direction: from, to, bytes, busy_s, transfers", NULL},
    {"device_names", (getter)get_device_names, NULL, "the device set's names, for the per-device arrays", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject dp_py_result_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dplace.SimResult",
    .tp_basicsize = sizeof(dp_py_result),
    .tp_dealloc = (destructor)result_dealloc,
    .tp_repr = (reprfunc)result_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One simulated training step of a placement (Simulator.simulate): step_time, valid, verdict, reason, "
              "per-device arrays (peak_bytes, memory_bytes, param_bytes, busy, n_ops), transfer_bytes, n_transfers, "
              "links; to_dict().",
    .tp_methods = result_methods,
    .tp_getset = result_getset,
};

/* ---- SimBatch ---------------------------------------------------------------------- */

typedef struct dp_py_batch {
    PyObject_HEAD
    PyObject *step_time, *valid, *verdict, *reasons, *peak_bytes, *busy, *transfer_bytes, *n_transfers, *score;
} dp_py_batch;

PyObject *dp_py_batch_new(const dp_sim_result *res, npy_intp k, int32_t n_devices) {
    dp_py_batch *b = PyObject_New(dp_py_batch, &dp_py_batch_type);
    if (!b) return NULL;
    npy_intp kd[2] = {k, n_devices};
    b->step_time = PyArray_SimpleNew(1, &k, NPY_FLOAT64);
    b->valid = PyArray_SimpleNew(1, &k, NPY_BOOL);
    b->verdict = PyList_New(k);
    b->reasons = PyList_New(k);
    b->peak_bytes = PyArray_SimpleNew(2, kd, NPY_UINT64);
    b->busy = PyArray_SimpleNew(2, kd, NPY_FLOAT64);
    b->transfer_bytes = PyArray_SimpleNew(1, &k, NPY_UINT64);
    b->n_transfers = PyArray_SimpleNew(1, &k, NPY_INT32);
    b->score = PyArray_SimpleNew(1, &k, NPY_FLOAT64);
    if (!b->score || !b->step_time || !b->valid || !b->verdict || !b->reasons || !b->peak_bytes || !b->busy || !b->transfer_bytes ||
        !b->n_transfers) {
        Py_DECREF(b);
        return NULL;
    }
    double *t = PyArray_DATA((PyArrayObject *)b->step_time), *busy = PyArray_DATA((PyArrayObject *)b->busy);
    npy_bool *v = PyArray_DATA((PyArrayObject *)b->valid);
    uint64_t *peak = PyArray_DATA((PyArrayObject *)b->peak_bytes), *tb = PyArray_DATA((PyArrayObject *)b->transfer_bytes);
    int32_t *nt = PyArray_DATA((PyArrayObject *)b->n_transfers);
    double *score = PyArray_DATA((PyArrayObject *)b->score);
    for (npy_intp i = 0; i < k; i++) {
        const dp_sim_result *r = &res[i];
        t[i] = r->step_time_s, v[i] = (npy_bool)r->valid, tb[i] = r->transfer_bytes, nt[i] = r->n_transfers;
        score[i] = dp_sim_score(r);
        for (int32_t d = 0; d < n_devices; d++)
            peak[i * n_devices + d] = r->device[d].peak_bytes, busy[i * n_devices + d] = r->device[d].busy_s;
        PyObject *vs = PyUnicode_FromString(dp_sim_verdict_name(r->verdict));
        PyObject *rs = PyUnicode_DecodeUTF8(r->reason, (Py_ssize_t)strlen(r->reason), "replace");
        if (!vs || !rs) {
            Py_XDECREF(vs);
            Py_XDECREF(rs);
            Py_DECREF(b);
            return NULL;
        }
        PyList_SET_ITEM(b->verdict, i, vs);
        PyList_SET_ITEM(b->reasons, i, rs);
    }
    return (PyObject *)b;
}

static void batch_dealloc(dp_py_batch *b) {
    Py_XDECREF(b->step_time);
    Py_XDECREF(b->valid);
    Py_XDECREF(b->verdict);
    Py_XDECREF(b->reasons);
    Py_XDECREF(b->peak_bytes);
    Py_XDECREF(b->busy);
    Py_XDECREF(b->transfer_bytes);
    Py_XDECREF(b->n_transfers);
    Py_XDECREF(b->score);
    PyObject_Free(b);
}

static Py_ssize_t batch_len(dp_py_batch *b) { return PyArray_SIZE((PyArrayObject *)b->step_time); }

static PyObject *batch_repr(dp_py_batch *b) {
    npy_intp k = PyArray_SIZE((PyArrayObject *)b->step_time), nv = 0;
    const npy_bool *v = PyArray_DATA((PyArrayObject *)b->valid);
    for (npy_intp i = 0; i < k; i++) nv += v[i] != 0;
    return PyUnicode_FromFormat("<dplace.SimBatch %zd placements, %zd valid>", (Py_ssize_t)k, (Py_ssize_t)nv);
}

static PyMemberDef batch_members[] = {
    {"step_time", T_OBJECT_EX, offsetof(dp_py_batch, step_time), READONLY, "float64 [k]: each placement's step time"},
    {"valid", T_OBJECT_EX, offsetof(dp_py_batch, valid), READONLY, "bool [k]: whether each is valid"},
    {"verdict", T_OBJECT_EX, offsetof(dp_py_batch, verdict), READONLY,
     "list of k str: 'valid', 'oom', 'constraint' or 'colocation'"},
    {"reasons", T_OBJECT_EX, offsetof(dp_py_batch, reasons), READONLY, "list of k str: the problem, '' when valid"},
    {"peak_bytes", T_OBJECT_EX, offsetof(dp_py_batch, peak_bytes), READONLY, "uint64 [k, D]: peak memory per device"},
    {"busy", T_OBJECT_EX, offsetof(dp_py_batch, busy), READONLY, "float64 [k, D]: op seconds per device"},
    {"transfer_bytes", T_OBJECT_EX, offsetof(dp_py_batch, transfer_bytes), READONLY,
     "uint64 [k]: bytes sent between devices"},
    {"n_transfers", T_OBJECT_EX, offsetof(dp_py_batch, n_transfers), READONLY, "int32 [k]: transfers"},
    {"score", T_OBJECT_EX, offsetof(dp_py_batch, score), READONLY,
     "float64 [k]: the search's score of each (SimResult.score)"},
    {NULL, 0, 0, 0, NULL}};

static PySequenceMethods batch_as_sequence = {.sq_length = (lenfunc)batch_len};

PyTypeObject dp_py_batch_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dplace.SimBatch",
    .tp_basicsize = sizeof(dp_py_batch),
    .tp_dealloc = (destructor)batch_dealloc,
    .tp_repr = (reprfunc)batch_repr,
    .tp_as_sequence = &batch_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The results of Simulator.simulate_many, row i for placement i: step_time, valid, verdict, reasons, "
              "peak_bytes, busy, transfer_bytes, n_transfers, score.",
    .tp_members = batch_members,
};

int dp_py_result_ready(PyObject *m) {
    if (PyType_Ready(&dp_py_result_type) || PyType_Ready(&dp_py_batch_type)) return -1;
    if (PyModule_AddObjectRef(m, "SimResult", (PyObject *)&dp_py_result_type)) return -1;
    return PyModule_AddObjectRef(m, "SimBatch", (PyObject *)&dp_py_batch_type);
}
