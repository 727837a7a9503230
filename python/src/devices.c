/* dplace.Devices: a device set (include/dplace/devices.h): a preset, a
 * dplace-devices file or text, or one built from Python from a list of
 * devices and links; read-only once made. */
#include "dplace_py.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/* A new Devices owning ds (freed on failure). */
static PyObject *devices_wrap(dp_devices *ds, const char *preset) {
    dp_py_devices *self = PyObject_New(dp_py_devices, &dp_py_devices_type);
    if (!self) {
        dp_devices_free(ds);
        return NULL;
    }
    self->ds = ds;
    snprintf(self->preset, sizeof self->preset, "%s", preset ? preset : "");
    return (PyObject *)self;
}

static void devices_dealloc(dp_py_devices *self) {
    dp_devices_free(self->ds);
    PyObject_Free(self);
}

/* ---- built from Python ------------------------------------------------------------ */

/* The item key of dict d as a double (required unless def is not NaN);
 * -1 with the exception set, naming what. */
static int dict_double(PyObject *d, const char *key, double def, double *out, const char *what) {
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v) {
        if (isnan(def)) {
            PyErr_Format(PyExc_ValueError, "%s: missing \"%s\"", what, key);
            return -1;
        }
        *out = def;
        return 0;
    }
    if (PyBool_Check(v) || !(PyFloat_Check(v) || PyLong_Check(v))) {
        PyErr_Format(PyExc_TypeError, "%s: \"%s\" must be a number, not %s", what, key, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyFloat_AsDouble(v);
    if (*out == -1.0 && PyErr_Occurred()) return -1;
    if (!isfinite(*out) || *out < 0) {
        PyErr_Format(PyExc_ValueError, "%s: \"%s\" must be finite and >= 0, not %R", what, key, v);
        return -1;
    }
    return 0;
}

/* The item key of dict d as a string into buf (def when absent and def
 * not NULL); -1 with the exception set. */
static int dict_string(PyObject *d, const char *key, const char *def, char *buf, size_t size, const char *what) {
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v) {
        if (!def) {
            PyErr_Format(PyExc_ValueError, "%s: missing \"%s\"", what, key);
            return -1;
        }
        snprintf(buf, size, "%s", def);
        return 0;
    }
    const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    if (!s) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s: \"%s\" must be a str, not %s", what, key, Py_TYPE(v)->tp_name);
        return -1;
    }
    if (strlen(s) >= size) {
        PyErr_Format(PyExc_ValueError, "%s: \"%s\" is longer than %d bytes", what, key, (int)size - 1);
        return -1;
    }
    snprintf(buf, size, "%s", s);
    return 0;
}

/* Checks that every key of dict d is one of keys; -1 with ValueError. */
static int dict_keys_known(PyObject *d, const char *const *keys, const char *what) {
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &k, &v)) {
        const char *s = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        int known = 0;
        for (const char *const *p = keys; s && *p && !known; p++) known = !strcmp(s, *p);
        if (!known) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: unknown key %R", what, k);
            return -1;
        }
    }
    return 0;
}

static const char *const device_keys[] = {"name", "kind", "model", "peak_flops", "mem_bandwidth", "memory_bytes",
                                          "launch_overhead_s", "dispatch_s", "switch_s", "streams", "tensor_flops", NULL};
static const char *const tensor_keys[] = {"tf32", "float16", "bfloat16", NULL};
_Static_assert(sizeof tensor_keys / sizeof tensor_keys[0] == DP_TENSOR_MATH_COUNT + 1, "tensor_keys");

/* The optional "tensor_flops" of device dict d ({"tf32": ..., "float16":
 * ..., "bfloat16": ...}, each optional) into dev; -1 with the exception. */
static int dict_tensor_flops(PyObject *d, dp_device *dev, const char *what) {
    PyObject *t = PyDict_GetItemString(d, "tensor_flops");
    if (!t) return 0;
    char w2[96];
    snprintf(w2, sizeof w2, "%s.tensor_flops", what);
    if (!PyDict_Check(t)) {
        PyErr_Format(PyExc_TypeError, "%s: a dict (tf32, float16, bfloat16: FLOP/s), not %s", w2, Py_TYPE(t)->tp_name);
        return -1;
    }
    if (dict_keys_known(t, tensor_keys, w2)) return -1;
    for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++)
        if (dict_double(t, tensor_keys[m], 0.0, &dev->tensor_flops[m], w2)) return -1;
    return 0;
}
static const char *const link_keys[] = {"from", "to", "bandwidth", "latency_s", "duplex", NULL};

/* Adds the device described by dict d (the k-th) to ds; -1 with the exception. */
static int add_device(dp_devices *ds, PyObject *d, Py_ssize_t k) {
    char what[64];
    snprintf(what, sizeof what, "devices[%zd]", k);
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_TypeError, "%s: a dict (name, kind, peak_flops, mem_bandwidth, memory_bytes, ...), not %s",
                     what, Py_TYPE(d)->tp_name);
        return -1;
    }
    dp_device dev;
    memset(&dev, 0, sizeof dev);
    char kind[16];
    double memory, streams;
    if (dict_keys_known(d, device_keys, what) || dict_string(d, "name", NULL, dev.name, sizeof dev.name, what) ||
        dict_string(d, "kind", NULL, kind, sizeof kind, what) ||
        dict_string(d, "model", "", dev.model, sizeof dev.model, what) ||
        dict_double(d, "peak_flops", NAN, &dev.peak_flops, what) ||
        dict_double(d, "mem_bandwidth", NAN, &dev.mem_bandwidth, what) ||
        dict_double(d, "memory_bytes", NAN, &memory, what) ||
        dict_double(d, "launch_overhead_s", 0.0, &dev.launch_overhead_s, what) ||
        dict_double(d, "dispatch_s", DP_DEVICES_DISPATCH_S, &dev.dispatch_s, what) ||
        dict_double(d, "switch_s", DP_DEVICES_SWITCH_S, &dev.switch_s, what) ||
        dict_double(d, "streams", 1.0, &streams, what) || dict_tensor_flops(d, &dev, what))
        return -1;
    if (!strcmp(kind, "cpu")) dev.kind = DP_DEVKIND_CPU;
    else if (!strcmp(kind, "gpu")) dev.kind = DP_DEVKIND_GPU;
    else {
        PyErr_Format(PyExc_ValueError, "%s: \"kind\" must be \"cpu\" or \"gpu\", not \"%s\"", what, kind);
        return -1;
    }
    if (memory > 1.8e19 || streams != floor(streams) || streams < 1 || streams > DP_MAX_STREAMS) {
        PyErr_Format(PyExc_ValueError, "%s: \"memory_bytes\" must be below 1.8e19 and \"streams\" an integer in 1..%d",
                     what, DP_MAX_STREAMS);
        return -1;
    }
    dev.memory_bytes = (uint64_t)memory, dev.streams = (int32_t)streams;
    dp_error err;
    dp_error_clear(&err);
    if (dp_devices_add(ds, &dev, &err)) {
        dp_error_prefix(&err, what);
        dp_py_raise(&err);
        return -1;
    }
    return 0;
}

/* Adds the link described by dict d (the k-th) to ds; -1 with the exception. */
static int add_link(dp_devices *ds, PyObject *d, Py_ssize_t k) {
    char what[64];
    snprintf(what, sizeof what, "links[%zd]", k);
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_TypeError, "%s: a dict (from, to, bandwidth, latency_s, duplex), not %s", what,
                     Py_TYPE(d)->tp_name);
        return -1;
    }
    char from[DP_NAME_MAX], to[DP_NAME_MAX];
    double bw, lat;
    if (dict_keys_known(d, link_keys, what) || dict_string(d, "from", NULL, from, sizeof from, what) ||
        dict_string(d, "to", NULL, to, sizeof to, what) || dict_double(d, "bandwidth", NAN, &bw, what) ||
        dict_double(d, "latency_s", 0.0, &lat, what))
        return -1;
    PyObject *dx = PyDict_GetItemString(d, "duplex");
    int duplex = dx ? PyObject_IsTrue(dx) : 1;
    if (duplex < 0) return -1;
    dp_error err;
    dp_error_clear(&err);
    if (dp_devices_add_link(ds, from, to, bw, lat, duplex, &err)) {
        dp_error_prefix(&err, what);
        dp_py_raise(&err);
        return -1;
    }
    return 0;
}

static PyObject *devices_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"devices", "links", "name", "staging", NULL};
    PyObject *devs, *links = NULL;
    const char *name = "custom", *staging = "pipelined";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|Oss:Devices", kw, &devs, &links, &name, &staging)) return NULL;
    if (strlen(name) >= DP_NAME_MAX) {
        PyErr_Format(PyExc_ValueError, "name: longer than %d bytes", DP_NAME_MAX - 1);
        return NULL;
    }
    PyObject *dl = PySequence_Fast(devs, "devices: a list of dicts, one per device");
    PyObject *ll = !dl ? NULL : links ? PySequence_Fast(links, "links: a list of dicts, one per link") : PyList_New(0);
    dp_devices *ds = ll ? dp_devices_init(name) : NULL;
    if (ll && !ds) PyErr_NoMemory();
    int ok = ds != NULL;
    if (ok && !strcmp(staging, "pipelined")) ds->staging = DP_STAGING_PIPELINED;
    else if (ok && !strcmp(staging, "store-and-forward")) ds->staging = DP_STAGING_STORE_AND_FORWARD;
    else if (ok) {
        PyErr_Format(PyExc_ValueError, "staging: \"pipelined\" or \"store-and-forward\", not \"%s\"", staging);
        ok = 0;
    }
    if (ok && PySequence_Fast_GET_SIZE(dl) > DP_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "devices: %zd devices, at most %d", PySequence_Fast_GET_SIZE(dl), DP_MAX_DEVICES);
        ok = 0;
    }
    for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(dl); k++)
        ok = !add_device(ds, PySequence_Fast_GET_ITEM(dl, k), k);
    for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(ll); k++)
        ok = !add_link(ds, PySequence_Fast_GET_ITEM(ll, k), k);
    Py_XDECREF(dl);
    Py_XDECREF(ll);
    if (!ok) {
        dp_devices_free(ds);
        return NULL;
    }
    dp_error err;
    dp_error_clear(&err);
    if (dp_devices_finalize(ds, name, &err)) {
        dp_devices_free(ds);
        return dp_py_raise(&err);
    }
    return devices_wrap(ds, NULL);
}

/* ---- presets and files ------------------------------------------------------------- */

static PyObject *devices_preset(PyObject *cls, PyObject *args) {
    const char *name;
    if (!PyArg_ParseTuple(args, "s:Devices.preset", &name)) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_devices *ds = dp_devices_preset(name, &err);
    if (!ds) return dp_py_raise(&err);
    return devices_wrap(ds, name);
}

static PyObject *devices_from_file(PyObject *cls, PyObject *arg) {
    PyObject *path = dp_py_path(arg, "Devices.from_file");
    if (!path) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_devices *ds;
    Py_BEGIN_ALLOW_THREADS
    ds = dp_devices_read_file(PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (!ds) return dp_py_raise(&err);
    return devices_wrap(ds, NULL);
}

/* Devices.load(spec): a preset name, else a file. */
static PyObject *devices_load(PyObject *cls, PyObject *arg) {
    PyObject *path = dp_py_path(arg, "Devices.load");
    if (!path) return NULL;
    dp_error err;
    dp_error_clear(&err);
    const char *spec = PyBytes_AS_STRING(path);
    int preset = 0;
    for (const char *const *p = dp_devices_preset_names(); *p && !preset; p++) preset = !strcmp(*p, spec);
    dp_devices *ds = dp_devices_load(spec, &err);
    PyObject *r = ds ? devices_wrap(ds, preset ? spec : NULL) : dp_py_raise(&err);
    Py_DECREF(path);
    return r;
}

static PyObject *devices_from_json(PyObject *cls, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"text", "what", NULL};
    const char *text, *what = "<text>";
    Py_ssize_t len;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s#|s:Devices.from_json", kw, &text, &len, &what)) return NULL;
    if ((size_t)len != strlen(text)) {
        PyErr_SetString(PyExc_ValueError, "Devices.from_json: the text holds a NUL byte");
        return NULL;
    }
    dp_error err;
    dp_error_clear(&err);
    dp_devices *ds = dp_devices_read_string(text, what, &err);
    if (!ds) return dp_py_raise(&err);
    return devices_wrap(ds, NULL);
}

static PyObject *devices_save(dp_py_devices *self, PyObject *arg) {
    PyObject *path = dp_py_path(arg, "Devices.save");
    if (!path) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_status st = dp_devices_write_file(self->ds, PyBytes_AS_STRING(path), &err);
    Py_DECREF(path);
    if (st) return dp_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *devices_to_json(dp_py_devices *self, PyObject *noargs) {
    char path[4096];
    if (dp_py_temp_path(path, sizeof path)) return NULL;
    dp_error err;
    dp_error_clear(&err);
    if (dp_devices_write_file(self->ds, path, &err)) {
        unlink(path);
        return dp_py_raise(&err);
    }
    return dp_py_take_text(path);
}

/* A preset pickles as its name, any other set as its JSON text. */
static PyObject *devices_reduce(dp_py_devices *self, PyObject *noargs) {
    PyObject *cls = (PyObject *)Py_TYPE(self);
    if (self->preset[0]) return Py_BuildValue("(N(s))", PyObject_GetAttrString(cls, "preset"), self->preset);
    PyObject *text = devices_to_json(self, NULL);
    if (!text) return NULL;
    return Py_BuildValue("(N(N))", PyObject_GetAttrString(cls, "from_json"), text);
}

/* ---- what it holds ------------------------------------------------------------------ */

static Py_ssize_t devices_len(dp_py_devices *self) { return self->ds->n_devices; }

static PyObject *devices_repr(dp_py_devices *self) {
    return PyUnicode_FromFormat("<dplace.Devices '%s': %d CPU, %d GPU>", self->ds->name,
                                (int)self->ds->kind_count[DP_DEVKIND_CPU], (int)self->ds->kind_count[DP_DEVKIND_GPU]);
}

/* A list with one str per device: 0 name, 1 kind, 2 model. */
static PyObject *device_strings(dp_py_devices *self, int what) {
    const dp_devices *ds = self->ds;
    PyObject *l = PyList_New(ds->n_devices);
    for (int32_t d = 0; l && d < ds->n_devices; d++) {
        const dp_device *v = &ds->devices[d];
        PyObject *s = PyUnicode_FromString(what == 0 ? v->name : what == 1 ? dp_devkind_name(v->kind) : v->model);
        if (!s) Py_CLEAR(l);
        else PyList_SET_ITEM(l, d, s);
    }
    return l;
}

/* A 1-D array with one number per device: 0 memory_bytes (uint64),
 * 1 peak_flops, 2 mem_bandwidth, 3 launch_overhead_s (float64), 4 streams (int32). */
static PyObject *device_numbers(dp_py_devices *self, int what) {
    const dp_devices *ds = self->ds;
    npy_intp n = ds->n_devices;
    PyObject *a = PyArray_SimpleNew(1, &n, what == 0 ? NPY_UINT64 : what == 4 ? NPY_INT32 : NPY_FLOAT64);
    if (!a) return NULL;
    void *p = PyArray_DATA((PyArrayObject *)a);
    for (int32_t d = 0; d < ds->n_devices; d++) {
        const dp_device *v = &ds->devices[d];
        if (what == 0) ((uint64_t *)p)[d] = v->memory_bytes;
        else if (what == 4) ((int32_t *)p)[d] = v->streams;
        else ((double *)p)[d] = what == 1 ? v->peak_flops : what == 2 ? v->mem_bandwidth : v->launch_overhead_s;
    }
    return a;
}

static PyObject *devices_get_names(dp_py_devices *self, void *c) { return device_strings(self, 0); }
static PyObject *devices_get_kinds(dp_py_devices *self, void *c) { return device_strings(self, 1); }
static PyObject *devices_get_models(dp_py_devices *self, void *c) { return device_strings(self, 2); }
static PyObject *devices_get_memory(dp_py_devices *self, void *c) { return device_numbers(self, 0); }
static PyObject *devices_get_flops(dp_py_devices *self, void *c) { return device_numbers(self, 1); }
static PyObject *devices_get_bandwidth(dp_py_devices *self, void *c) { return device_numbers(self, 2); }
static PyObject *devices_get_launch(dp_py_devices *self, void *c) { return device_numbers(self, 3); }
static PyObject *devices_get_streams(dp_py_devices *self, void *c) { return device_numbers(self, 4); }
static PyObject *devices_get_name(dp_py_devices *self, void *c) { return PyUnicode_FromString(self->ds->name); }
static PyObject *devices_get_host(dp_py_devices *self, void *c) { return PyLong_FromLong(self->ds->host); }
static PyObject *devices_get_staging(dp_py_devices *self, void *c) {
    return PyUnicode_FromString(dp_staging_name(self->ds->staging));
}
static PyObject *devices_get_preset(dp_py_devices *self, void *c) {
    if (!self->preset[0]) Py_RETURN_NONE;
    return PyUnicode_FromString(self->preset);
}

/* devices: list of dicts, the constructor's input */
static PyObject *devices_get_devices(dp_py_devices *self, void *c) {
    const dp_devices *ds = self->ds;
    PyObject *l = PyList_New(ds->n_devices);
    for (int32_t d = 0; l && d < ds->n_devices; d++) {
        const dp_device *v = &ds->devices[d];
        PyObject *x = Py_BuildValue("{s:s,s:s,s:s,s:d,s:d,s:K,s:d,s:d,s:d,s:i}", "name", v->name, "kind",
                                    dp_devkind_name(v->kind), "model", v->model, "peak_flops", v->peak_flops,
                                    "mem_bandwidth", v->mem_bandwidth, "memory_bytes",
                                    (unsigned long long)v->memory_bytes, "launch_overhead_s", v->launch_overhead_s,
                                    "dispatch_s", v->dispatch_s, "switch_s", v->switch_s, "streams", (int)v->streams);
        int any = 0;
        for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++) any |= v->tensor_flops[m] > 0;
        if (x && any) { /* given only where the device has tensor-core peaks */
            PyObject *t = Py_BuildValue("{s:d,s:d,s:d}", tensor_keys[0], v->tensor_flops[0], tensor_keys[1],
                                        v->tensor_flops[1], tensor_keys[2], v->tensor_flops[2]);
            if (!t || PyDict_SetItemString(x, "tensor_flops", t)) Py_CLEAR(x);
            Py_XDECREF(t);
        }
        if (!x) Py_CLEAR(l);
        else PyList_SET_ITEM(l, d, x);
    }
    return l;
}

/* links: list of dicts, one per direction (duplex False) */
static PyObject *devices_get_links(dp_py_devices *self, void *c) {
    const dp_devices *ds = self->ds;
    PyObject *l = PyList_New(ds->n_links);
    for (int32_t k = 0; l && k < ds->n_links; k++) {
        const dp_link *v = &ds->links[k];
        PyObject *x = Py_BuildValue("{s:s,s:s,s:d,s:d,s:O}", "from", ds->devices[v->from].name, "to",
                                    ds->devices[v->to].name, "bandwidth", v->bandwidth, "latency_s", v->latency_s,
                                    "duplex", Py_False);
        if (!x) Py_CLEAR(l);
        else PyList_SET_ITEM(l, k, x);
    }
    return l;
}

static PyObject *devices_index(dp_py_devices *self, PyObject *arg) {
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!name) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "Devices.index: a device name, not %s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    int32_t d = dp_devices_find(self->ds, name);
    if (d < 0) {
        PyErr_Format(PyExc_KeyError, "no device named \"%.64s\" in device set %s", name, self->ds->name);
        return NULL;
    }
    return PyLong_FromLong(d);
}

/* The indices of the devices of one kind. */
static PyObject *devices_of_kind(dp_py_devices *self, dp_devkind kind) {
    PyObject *l = PyList_New(0);
    for (int32_t d = 0; l && d < self->ds->n_devices; d++) {
        if (self->ds->devices[d].kind != kind) continue;
        PyObject *i = PyLong_FromLong(d);
        if (!i || PyList_Append(l, i)) Py_CLEAR(l);
        Py_XDECREF(i);
    }
    return l;
}

static PyObject *devices_gpus(dp_py_devices *self, PyObject *noargs) { return devices_of_kind(self, DP_DEVKIND_GPU); }
static PyObject *devices_cpus(dp_py_devices *self, PyObject *noargs) { return devices_of_kind(self, DP_DEVKIND_CPU); }

static PyObject *devices_transfer_seconds(dp_py_devices *self, PyObject *args) {
    int a, b;
    double bytes;
    if (!PyArg_ParseTuple(args, "iid:Devices.transfer_seconds", &a, &b, &bytes)) return NULL;
    if (a < 0 || b < 0 || a >= self->ds->n_devices || b >= self->ds->n_devices || !(bytes >= 0)) {
        PyErr_Format(PyExc_ValueError, "transfer_seconds: devices in 0..%d and bytes >= 0", (int)self->ds->n_devices - 1);
        return NULL;
    }
    return PyFloat_FromDouble(dp_devices_transfer_seconds(self->ds, a, b, bytes));
}

static PyMethodDef devices_methods[] = {
    {"preset", (PyCFunction)devices_preset, METH_VARARGS | METH_CLASS,
     "Devices.preset(name) -> Devices\n\nA built-in device set (docs/devices.md): k40xN, p100xN, v100-nvlinkxN, "
     "v100-pciexN, a100-sxmxN, a100-pciexN, h100-sxmxN, h100-pciexN, h200xN, l4xN with N = 1..8; rtx4090xN "
     "with N = 1..4 (dplace.device_presets() lists the usual sizes)."},
    {"from_file", (PyCFunction)devices_from_file, METH_O | METH_CLASS,
     "Devices.from_file(path) -> Devices: a dplace-devices v1 file (docs/formats.md)"},
    {"load", (PyCFunction)devices_load, METH_O | METH_CLASS,
     "Devices.load(spec) -> Devices: a preset name or a dplace-devices file, as the command line takes it"},
    {"from_json", (PyCFunction)(void (*)(void))devices_from_json, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Devices.from_json(text, what='<text>') -> Devices: dplace-devices v1 JSON text"},
    {"save", (PyCFunction)devices_save, METH_O, "save(path): writes the set as dplace-devices v1 JSON, atomically"},
    {"to_json", (PyCFunction)devices_to_json, METH_NOARGS, "to_json() -> str: the set as dplace-devices v1 JSON"},
    {"index", (PyCFunction)devices_index, METH_O, "index(name) -> int: the device's index; KeyError when absent"},
    {"gpus", (PyCFunction)devices_gpus, METH_NOARGS, "gpus() -> list of the GPUs' indices"},
    {"cpus", (PyCFunction)devices_cpus, METH_NOARGS, "cpus() -> list of the CPUs' indices"},
    {"transfer_seconds", (PyCFunction)devices_transfer_seconds, METH_VARARGS,
     "transfer_seconds(a, b, bytes) -> float: seconds to send bytes from device a to b with nothing else in the "
     "way (latencies plus the bytes at the route's bandwidth)"},
    {"__reduce__", (PyCFunction)devices_reduce, METH_NOARGS, "pickling: a preset by name, others as JSON"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef devices_getset[] = {
    {"name", (getter)devices_get_name, NULL, "the set's name", NULL},
    {"preset_name", (getter)devices_get_preset, NULL, "the preset it came from, or None", NULL},
    {"names", (getter)devices_get_names, NULL, "list of the devices' names (\"cpu:0\", \"gpu:1\")", NULL},
    {"kinds", (getter)devices_get_kinds, NULL, "list of the devices' kinds (\"cpu\" or \"gpu\")", NULL},
    {"models", (getter)devices_get_models, NULL, "list of the devices' models (\"K40\")", NULL},
    {"memory_bytes", (getter)devices_get_memory, NULL, "uint64 array: each device's memory", NULL},
    {"peak_flops", (getter)devices_get_flops, NULL, "float64 array: each device's FLOP/s", NULL},
    {"mem_bandwidth", (getter)devices_get_bandwidth, NULL, "float64 array: each device's memory bytes/s", NULL},
    {"launch_overhead_s", (getter)devices_get_launch, NULL, "float64 array: each device's cost per op", NULL},
    {"streams", (getter)devices_get_streams, NULL, "int32 array: ops each device runs at once", NULL},
    {"host", (getter)devices_get_host, NULL, "the host CPU's index (transfers without a link cross it), -1: none",
     NULL},
    {"staging", (getter)devices_get_staging, NULL, "\"pipelined\" or \"store-and-forward\" (docs/simulator.md)",
     NULL},
    {"devices", (getter)devices_get_devices, NULL,
     "list of dicts, one per device: the Devices constructor's input (edit and build a new set)", NULL},
    {"links", (getter)devices_get_links, NULL, "list of dicts, one per link direction (duplex False)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PySequenceMethods devices_as_sequence = {.sq_length = (lenfunc)devices_len};

PyTypeObject dp_py_devices_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dplace.Devices",
    .tp_basicsize = sizeof(dp_py_devices),
    .tp_dealloc = (destructor)devices_dealloc,
    .tp_repr = (reprfunc)devices_repr,
    .tp_as_sequence = &devices_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "Devices(devices, links=(), name='custom', staging='pipelined')\n\n"
        "A device set (read-only): Devices.preset(name), Devices.from_file(path), or built from Python: devices a "
        "list of dicts with name, kind ('cpu'/'gpu'), peak_flops (FLOP/s), mem_bandwidth (bytes/s), memory_bytes, "
        "and optionally model, launch_overhead_s, dispatch_s and switch_s (the host's in eager steps), streams (1), "
        "tensor_flops; links a list of dicts with from, to (device names), "
        "bandwidth (bytes/s), and optionally latency_s (0) and duplex (True). Pairs without a link route through the "
        "first CPU. len(d) is its device count.",
    .tp_methods = devices_methods,
    .tp_getset = devices_getset,
    .tp_new = devices_new,
};

int dp_py_devices_ready(PyObject *m) {
    if (PyType_Ready(&dp_py_devices_type)) return -1;
    return PyModule_AddObjectRef(m, "Devices", (PyObject *)&dp_py_devices_type);
}
