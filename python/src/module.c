/* dplace._dplace: the module itself: its initialisation, the exception,
 * the conversions every file uses, the placers' lock, and the lists of
 * names (zoo models, device presets, agents, settings, placers,
 * groupers). */
#define DP_PY_IMPORT_ARRAY
#include "dplace_py.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "dplace/group.h"
#include "dplace/place.h"
#include "dplace/settings_job.h"
#include "dplace/zoo.h"

PyObject *dp_py_error;
/* The subclasses of dplace.Error that are also Python's own exceptions
 * (docs/python.md, "Errors"). */
static PyObject *file_error, *missing_file_error, *input_error, *memory_error;

/* ---- errors ----------------------------------------------------------------- */

/* The class of a library error of status (os_errno: the system's errno
 * behind it, 0 when unknown): a subclass of dplace.Error that is also the
 * Python exception a Python library would raise for it. */
static PyObject *error_class(dp_status status, int os_errno) {
    switch (status) {
    case DP_STATUS_IO: return os_errno == ENOENT ? missing_file_error : file_error;
    case DP_STATUS_PARSE:
    case DP_STATUS_INVALID: return input_error;
    case DP_STATUS_NOMEM: return memory_error;
    default: return dp_py_error;
    }
}

/* Raises the class of status with msg, .status set to the status's name
 * and, on an OSError, .errno to os_errno when it is known. str(e) stays
 * the library's message: the errno is not put in front of it. */
static PyObject *raise_text(dp_status status, int os_errno, const char *msg) {
    PyObject *cls = error_class(status, os_errno);
    PyObject *e = PyObject_CallFunction(cls, "s", msg);
    if (!e) return NULL;
    PyObject *name = PyUnicode_FromString(dp_status_name(status));
    if (!name || PyObject_SetAttrString(e, "status", name)) PyErr_Clear();
    Py_XDECREF(name);
    if (os_errno && status == DP_STATUS_IO) {
        PyObject *no = PyLong_FromLong(os_errno);
        if (!no || PyObject_SetAttrString(e, "errno", no)) PyErr_Clear();
        Py_XDECREF(no);
    }
    PyErr_SetObject(cls, e);
    Py_DECREF(e);
    return NULL;
}

PyObject *dp_py_raise(const dp_error *err) {
    return raise_text(err->status, err->os_errno, err->msg[0] ? err->msg : "dplace: an error without a message");
}

PyObject *dp_py_raise_status(dp_status status, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return raise_text(status, 0, msg);
}

/* ---- conversions -------------------------------------------------------------- */

/* The integer array behind obj (a new reference), or NULL with TypeError
 * naming what when obj holds anything but integers. */
static PyArrayObject *integer_array(PyObject *obj, const char *what) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OF(obj, 0);
    if (!a) {
        if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: not an array of device indices (a ragged or odd sequence)", what);
        }
        return NULL;
    }
    int t = PyArray_TYPE(a);
    if (PyArray_SIZE(a) == 0 && !PyTypeNum_ISINTEGER(t)) { /* [] is float64 to numpy: no values to refuse */
        PyArrayObject *e = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)a, NPY_INT64, NPY_ARRAY_FORCECAST);
        Py_DECREF(a);
        return e;
    }
    if (!PyTypeNum_ISINTEGER(t) || PyTypeNum_ISBOOL(t)) {
        PyErr_Format(PyExc_TypeError, "%s: device indices must be integers, not %s (dtype %s)", what,
                     PyTypeNum_ISFLOAT(t) ? "floats" : PyTypeNum_ISBOOL(t) ? "booleans" : "other values",
                     PyArray_DESCR(a)->typeobj->tp_name);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* Whether a is an int32 array the library can read as it is. */
static int native_int32(PyArrayObject *a) {
    return PyArray_TYPE(a) == NPY_INT32 && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a);
}

/* Raises ValueError naming the first device index of a (rank 1 or 2, rows
 * of n_ops) outside 0..n_devices-1, checked in int64 so that no value
 * wraps into range; -1 then, 0 when every index is in range (or the
 * conversion failed: -1 with its exception). */
static int explain_range(PyArrayObject *a, int rank, int32_t n_ops, int32_t n_devices, const char *what) {
    PyArrayObject *wide =
        (PyArrayObject *)PyArray_FROM_OTF((PyObject *)a, NPY_INT64, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!wide) return -1;
    npy_intp n = PyArray_SIZE(wide);
    const int64_t *v = PyArray_DATA(wide);
    for (npy_intp i = 0; i < n; i++) {
        /* a uint64 above INT64_MAX reads as negative here: out of range all the same */
        if (v[i] >= 0 && v[i] < n_devices) continue;
        if (rank == 1)
            PyErr_Format(PyExc_ValueError, "%s[%zd]: device %lld out of range (the device set has %d: 0..%d)", what,
                         (Py_ssize_t)i, (long long)v[i], (int)n_devices, (int)n_devices - 1);
        else
            PyErr_Format(PyExc_ValueError, "%s[%zd, %zd]: device %lld out of range (the device set has %d: 0..%d)",
                         what, (Py_ssize_t)(i / n_ops), (Py_ssize_t)(i % n_ops), (long long)v[i], (int)n_devices,
                         (int)n_devices - 1);
        Py_DECREF(wide);
        return -1;
    }
    Py_DECREF(wide);
    return 0;
}

/* dp_py_placements and dp_py_placements_unchecked: scan says whether an
 * int32 array used as it is gets its range checked here. */
static PyArrayObject *placements(PyObject *obj, int rank, int32_t n_ops, int32_t n_devices, const char *what,
                                 int scan) {
    PyArrayObject *a = integer_array(obj, what);
    if (!a) return NULL;
    int nd = PyArray_NDIM(a);
    npy_intp *dims = PyArray_DIMS(a);
    if (nd != rank || (n_ops >= 0 && dims[rank - 1] != n_ops)) {
        char shape[128] = "";
        size_t len = 0;
        for (int k = 0; k < nd && len < sizeof shape; k++)
            len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%lld", k ? ", " : "", (long long)dims[k]);
        PyErr_Format(PyExc_ValueError, "%s: shape (%s%s), expected %s%d,) (one device per op of the graph's %d)", what,
                     shape, nd == 1 ? "," : "", rank == 1 ? "(" : "(k, ", (int)n_ops, (int)n_ops);
        Py_DECREF(a);
        return NULL;
    }
    if (native_int32(a)) { /* the caller's own array: no copy */
        if (!scan) return a;
        const int32_t *v = PyArray_DATA(a);
        npy_intp n = PyArray_SIZE(a);
        uint32_t top = 0; /* the largest index as unsigned: a negative one reads as huge */
        for (npy_intp i = 0; i < n; i++) top = (uint32_t)v[i] > top ? (uint32_t)v[i] : top;
        if (top < (uint32_t)n_devices) return a;
    }
    if (explain_range(a, rank, n_ops, n_devices, what)) {
        Py_DECREF(a);
        return NULL;
    }
    if (native_int32(a)) return a;
    PyArrayObject *out =
        (PyArrayObject *)PyArray_FROM_OTF((PyObject *)a, NPY_INT32, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(a);
    return out;
}

PyArrayObject *dp_py_placements(PyObject *obj, int rank, int32_t n_ops, int32_t n_devices, const char *what) {
    return placements(obj, rank, n_ops, n_devices, what, 1);
}

PyArrayObject *dp_py_placements_unchecked(PyObject *obj, int rank, int32_t n_ops, int32_t n_devices,
                                          const char *what) {
    return placements(obj, rank, n_ops, n_devices, what, 0);
}

int dp_py_placements_explain(PyArrayObject *a, int rank, int32_t n_ops, int32_t n_devices, const char *what) {
    return explain_range(a, rank, n_ops, n_devices, what);
}

PyObject *dp_py_int32_array(const int32_t *v, npy_intp n) {
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (a && n) memcpy(PyArray_DATA((PyArrayObject *)a), v, (size_t)n * sizeof(int32_t));
    return a;
}

PyObject *dp_py_path(PyObject *obj, const char *what) {
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(obj, &b)) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: a path (str, bytes or os.PathLike), not %s", what, Py_TYPE(obj)->tp_name);
        }
        return NULL;
    }
    if (memchr(PyBytes_AS_STRING(b), 0, (size_t)PyBytes_GET_SIZE(b))) {
        Py_DECREF(b);
        PyErr_Format(PyExc_ValueError, "%s: the path holds a NUL byte", what);
        return NULL;
    }
    return b;
}

int dp_py_dict_steal(PyObject *d, const char *key, PyObject *value) {
    if (!value) return -1;
    int rc = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return rc;
}

int dp_py_sim_options(dp_sim_options *o, long steps, long warmup, double noise, unsigned long long seed, int mean) {
    *o = dp_sim_options_default();
    if (steps < 1 || steps > 1024) {
        PyErr_Format(PyExc_ValueError, "steps: %ld, must be in 1..1024", steps);
        return -1;
    }
    if (warmup < 0 || warmup >= steps) {
        PyErr_Format(PyExc_ValueError, "warmup: %ld, must be in 0..steps-1 (steps %ld)", warmup, steps);
        return -1;
    }
    if (!(noise >= 0 && noise <= 5)) {
        PyErr_Format(PyExc_ValueError, "noise: %g, must be a log-normal sigma in 0..5", noise);
        return -1;
    }
    o->steps = (int32_t)steps, o->warmup = (int32_t)warmup, o->noise_sigma = noise, o->seed = seed, o->mean = mean;
    return 0;
}

int dp_py_temp_path(char *buf, size_t size) {
    const char *dir = getenv("TMPDIR");
    snprintf(buf, size, "%s/dplace-py.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(buf);
    if (fd < 0) {
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, buf);
        return -1;
    }
    close(fd);
    return 0;
}

PyObject *dp_py_take_text(const char *path) {
    PyObject *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
        unlink(path);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int nomem = 0;
    for (;;) {
        if (len + 65536 > cap) {
            char *nb = realloc(buf, 2 * cap + 65536);
            if (!nb) {
                nomem = 1;
                break;
            }
            buf = nb, cap = 2 * cap + 65536;
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0) break;
    }
    if (nomem) PyErr_NoMemory();
    else if (ferror(f)) PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    else text = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "strict");
    free(buf);
    fclose(f);
    unlink(path);
    return text;
}

double dp_py_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- the placers' lock ------------------------------------------------------------ */

static pthread_mutex_t placers_mutex = PTHREAD_MUTEX_INITIALIZER;

void dp_py_placers_lock(void) { pthread_mutex_lock(&placers_mutex); }
void dp_py_placers_unlock(void) { pthread_mutex_unlock(&placers_mutex); }

/* ---- lists of names ---------------------------------------------------------------- */

/* zoo_models() -> list of (name, description) */
static PyObject *py_zoo_models(PyObject *self, PyObject *noargs) {
    PyObject *l = PyList_New(0);
    for (const dp_zoo_entry *e = dp_zoo_list(); l && e->name; e++) {
        PyObject *t = Py_BuildValue("(ss)", e->name, e->description);
        if (!t || PyList_Append(l, t)) Py_CLEAR(l);
        Py_XDECREF(t);
    }
    return l;
}

/* A list of the strings of a NULL-terminated array. */
static PyObject *string_list(const char *const *names) {
    PyObject *l = PyList_New(0);
    for (; l && *names; names++) {
        PyObject *s = PyUnicode_FromString(*names);
        if (!s || PyList_Append(l, s)) Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

static PyObject *py_device_presets(PyObject *self, PyObject *noargs) { return string_list(dp_devices_preset_names()); }

/* agents() -> list of (name, summary): the presets, then "search" */
static PyObject *py_agents(PyObject *self, PyObject *noargs) {
    PyObject *l = PyList_New(0);
    for (const char *const *p = dp_settings_preset_names(); l && *p; p++) {
        PyObject *t = Py_BuildValue("(ss)", *p, dp_settings_preset_find(*p)->summary);
        if (!t || PyList_Append(l, t)) Py_CLEAR(l);
        Py_XDECREF(t);
    }
    PyObject *t = l ? Py_BuildValue("(ss)", "search", "dplace's own placer: a simulator-guided Metropolis search") : NULL;
    if (!t || PyList_Append(l, t)) Py_CLEAR(l);
    Py_XDECREF(t);
    return l;
}

static const char *const setting_types[] = {"int", "float", "double", "bool", "enum", "seconds"};

/* settings(agent) -> list of dicts: every row of the settings table with its
 * value in the agent's preset ("search": the base values) */
static PyObject *py_settings(PyObject *self, PyObject *args) {
    const char *agent;
    if (!PyArg_ParseTuple(args, "s", &agent)) return NULL;
    dp_settings st;
    if (!strcmp(agent, "search")) dp_settings_base(&st);
    else if (dp_settings_preset(agent, &st)) {
        PyErr_Format(PyExc_ValueError, "agent \"%s\": no such agent (dplace.agents() lists them)", agent);
        return NULL;
    }
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    PyObject *l = PyList_New(0);
    for (int32_t k = 0; l && k < n; k++) {
        const dp_setting *r = &t[k];
        char v[128];
        dp_setting_format(r, &st, v, sizeof v);
        PyObject *choices = PyTuple_New(r->n_choices);
        for (int c = 0; choices && c < r->n_choices; c++) PyTuple_SET_ITEM(choices, c, PyUnicode_FromString(r->choices[c]));
        PyObject *d = choices ? Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:d,s:d,s:N,s:O,s:s}", "name", r->name, "value", v,
                                              "type", setting_types[r->type], "group", dp_setting_group_name(r->group),
                                              "target", r->target == DP_SETTING_SEARCH ? "search"
                                                        : r->target == DP_SETTING_RUN ? "run" : "agent",
                                              "min", r->min, "max", r->max, "choices", choices, "experimental",
                                              (r->flags & DP_SETTING_EXPERIMENTAL) ? Py_True : Py_False, "help",
                                              r->help)
                              : NULL;
        if (!d || PyList_Append(l, d)) Py_CLEAR(l);
        Py_XDECREF(d);
    }
    return l;
}

static PyObject *py_place_methods(PyObject *self, PyObject *noargs) {
    PyObject *l = PyList_New(DP_PLACE_METHOD_COUNT);
    for (int m = 0; l && m < DP_PLACE_METHOD_COUNT; m++)
        PyList_SET_ITEM(l, m, PyUnicode_FromString(dp_place_method_name((dp_place_method)m)));
    return l;
}

static PyObject *py_group_methods(PyObject *self, PyObject *noargs) {
    PyObject *l = PyList_New(DP_GROUP_METHOD_COUNT);
    for (int m = 0; l && m < DP_GROUP_METHOD_COUNT; m++)
        PyList_SET_ITEM(l, m, PyUnicode_FromString(dp_group_method_name((dp_group_method)m)));
    return l;
}

static PyMethodDef module_methods[] = {
    {"zoo_models", py_zoo_models, METH_NOARGS, "zoo_models() -> list of (name, description) of the built-in graphs"},
    {"device_presets", py_device_presets, METH_NOARGS, "device_presets() -> the device presets' names"},
    {"agents", py_agents, METH_NOARGS, "agents() -> list of (name, summary): the learned agents' presets and search"},
    {"settings", py_settings, METH_VARARGS,
     "settings(agent) -> list of dicts, one per setting: name, value (in agent's preset), type, group, target, "
     "min, max, choices, experimental, help"},
    {"place_methods", py_place_methods, METH_NOARGS, "place_methods() -> the baseline placers' names"},
    {"group_methods", py_group_methods, METH_NOARGS, "group_methods() -> the groupers' names"},
    {NULL, NULL, 0, NULL}};

/* Adds every function of a method table to m. */
static int add_functions(PyObject *m, PyMethodDef *defs) {
    PyObject *name = PyModule_GetNameObject(m);
    if (!name) return -1;
    int rc = 0;
    for (PyMethodDef *d = defs; !rc && d->ml_name; d++) {
        PyObject *f = PyCFunction_NewEx(d, NULL, name);
        rc = !f || PyModule_AddObject(m, d->ml_name, f) ? -1 : 0;
        if (rc) Py_XDECREF(f);
    }
    Py_DECREF(name);
    return rc;
}

/* A new exception class dplace.NAME with bases base1 (and base2 when not
 * NULL), added to m; NULL with the exception set. */
static PyObject *new_error(PyObject *m, const char *name, const char *doc, PyObject *base1, PyObject *base2) {
    char full[64];
    snprintf(full, sizeof full, "dplace.%s", name);
    PyObject *bases = base2 ? PyTuple_Pack(2, base1, base2) : Py_NewRef(base1);
    if (!bases) return NULL;
    PyObject *cls = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
    Py_DECREF(bases);
    if (cls && PyModule_AddObjectRef(m, name, cls)) Py_CLEAR(cls);
    return cls;
}

/* dplace.Error and its subclasses (the module keeps a reference to each
 * for the life of the process). */
static int add_errors(PyObject *m) {
    dp_py_error = new_error(
        m, "Error",
        "An error of the dplace library: bad input (a file, a graph, a device set, a setting) or a request it "
        "cannot serve. str(e) is the library's one-line message naming the item and the problem; e.status is "
        "its kind: 'io', 'parse', 'invalid', 'nomem' or 'unsupported'. Each kind but 'unsupported' is raised as "
        "a subclass that is also Python's own exception: FileError (OSError), MissingFileError "
        "(FileNotFoundError), InputError (ValueError), OutOfMemoryError (MemoryError).",
        PyExc_Exception, NULL);
    if (!dp_py_error) return -1;
    file_error = new_error(m, "FileError",
                           "A file the library could not open, read or write (e.status 'io'): a dplace.Error and an "
                           "OSError; e.errno is the system's error number when the library knows it, else None.",
                           dp_py_error, PyExc_OSError);
    if (!file_error) return -1;
    missing_file_error = new_error(m, "MissingFileError",
                                   "A file that does not exist (e.status 'io', e.errno ENOENT): a dplace.FileError "
                                   "and a FileNotFoundError.",
                                   file_error, PyExc_FileNotFoundError);
    input_error = new_error(m, "InputError",
                            "Input the library refused (e.status 'parse': malformed; 'invalid': well-formed but "
                            "inconsistent, or an unknown name or value): a dplace.Error and a ValueError.",
                            dp_py_error, PyExc_ValueError);
    memory_error = new_error(m, "OutOfMemoryError",
                             "An allocation of the library failed (e.status 'nomem'): a dplace.Error and a "
                             "MemoryError.",
                             dp_py_error, PyExc_MemoryError);
    return missing_file_error && input_error && memory_error ? 0 : -1;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_dplace",
    .m_doc = "The C half of the dplace package (docs/python.md): import dplace, not this module.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__dplace(void) {
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (add_errors(m) ||
        PyModule_AddStringConstant(m, "__version__", DPLACE_VERSION) ||
        PyModule_AddIntConstant(m, "MAX_DEVICES", DP_MAX_DEVICES) || dp_py_graph_ready(m) ||
        dp_py_devices_ready(m) || dp_py_sim_ready(m) || dp_py_result_ready(m) || dp_py_delta_ready(m) ||
        add_functions(m, dp_py_units_methods) || add_functions(m, dp_py_jobs_methods) ||
        add_functions(m, dp_py_optimize_methods)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
