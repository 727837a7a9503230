/* The baseline placers (include/dplace/place.h, reference.h) and
 * placement files (placement.h): one placer's placement, every placer's
 * placement and simulated report beside single GPU, the expert and the
 * lower bound, and reading and writing dplace-placement files. */
#include "dplace_py.h"

#include <math.h>
#include <string.h>

#include "dplace/placement.h"
#include "dplace/reference.h"
#include "dplace/zoo.h"

/* The graph and device set arguments, checked. */
static int graph_devices(PyObject *g, PyObject *d, const char *what) {
    if (PyObject_TypeCheck(g, &dp_py_graph_type) && PyObject_TypeCheck(d, &dp_py_devices_type)) return 0;
    PyErr_Format(PyExc_TypeError, "%s(graph, devices): a dplace.Graph and a dplace.Devices, not %s and %s", what,
                 Py_TYPE(g)->tp_name, Py_TYPE(d)->tp_name);
    return -1;
}

/* The placers' options from the keywords for g (units resolved: AUTO is
 * modules on a PyTorch export, else ops); -1 with ValueError. */
static int place_options(dp_place_options *o, const dp_graph *g, unsigned long long seed, double memory_fraction,
                         const char *group, int n_groups, int forward_only, const char *units, const char *rules) {
    *o = dp_place_options_default();
    if (rules && dp_place_rules_from_name(rules, &o->rules)) {
        PyErr_Format(PyExc_ValueError, "rules: unknown \"%s\" (best, dataflow, paper)", rules);
        return -1;
    }
    dp_units_spec u = {DP_UNITS_AUTO, 0};
    if (units && dp_units_spec_parse(units, &u)) {
        PyErr_Format(PyExc_ValueError, "units: unknown \"%s\" (module, module:DEPTH, op, auto)", units);
        return -1;
    }
    o->units = dp_units_spec_resolve(u, g);
    o->seed = seed, o->forward_only = forward_only, o->expert = dp_zoo_expert_placement;
    if (!(memory_fraction > 0 && memory_fraction <= 1)) {
        PyErr_Format(PyExc_ValueError, "memory_fraction: %g, must be in (0, 1]", memory_fraction);
        return -1;
    }
    o->memory_fraction = memory_fraction;
    if (n_groups < 1 || n_groups > 1000000) {
        PyErr_Format(PyExc_ValueError, "n_groups: %d, must be in 1..1000000", n_groups);
        return -1;
    }
    o->n_groups = n_groups;
    if (group && dp_place_group_from_name(group, &o->group)) {
        PyErr_Format(PyExc_ValueError, "group: unknown grouping \"%s\" (default, none, or a grouper: %s)", group,
                     "colocation, metis, scotch, fluid, random");
        return -1;
    }
    return 0;
}

#define PLACE_OPTION_KW "seed", "memory_fraction", "group", "n_groups", "forward_only", "units", "rules"

/* place(graph, devices, method, **options) -> int32 [n_ops] */
static PyObject *py_place(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"graph", "devices", "method", PLACE_OPTION_KW, NULL};
    PyObject *gobj, *dobj;
    const char *method, *group = NULL, *units = NULL, *rules = NULL;
    unsigned long long seed = 1;
    double fraction = 0.9;
    int n_groups = 256, forward_only = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOs|$Kdzipzz:place", kw, &gobj, &dobj, &method, &seed, &fraction,
                                     &group, &n_groups, &forward_only, &units, &rules))
        return NULL;
    if (graph_devices(gobj, dobj, "place")) return NULL;
    dp_place_method m;
    if (dp_place_method_from_name(method, &m)) {
        PyErr_Format(PyExc_ValueError, "place: unknown method \"%s\" (dplace.place_methods() lists them)", method);
        return NULL;
    }
    const dp_graph *g = ((dp_py_graph *)gobj)->g;
    dp_place_options o;
    if (place_options(&o, g, seed, fraction, group, n_groups, forward_only, units, rules)) return NULL;
    npy_intp n = g->n_ops;
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!a) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    dp_py_placers_lock();
    st = dp_place_run(m, g, ((dp_py_devices *)dobj)->ds, &o, PyArray_DATA((PyArrayObject *)a), &err);
    dp_py_placers_unlock();
    Py_END_ALLOW_THREADS
    if (st) {
        Py_DECREF(a);
        return dp_py_raise(&err);
    }
    return a;
}

/* The methods argument: None (every placer), a list of names or a
 * comma-separated str ("none": no placer); *n of them into list. */
static int methods_arg(PyObject *obj, dp_place_method *list, int32_t *n, int *all) {
    *all = obj == Py_None, *n = 0;
    if (*all) return 0;
    PyObject *text = NULL;
    if (PyUnicode_Check(obj)) {
        text = Py_NewRef(obj);
    } else {
        PyObject *sep = PyUnicode_FromString(",");
        text = sep ? PyUnicode_Join(sep, obj) : NULL;
        Py_XDECREF(sep);
        if (!text) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "methods: None, a list of placer names or a comma-separated str, not %s",
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
    }
    const char *s = PyUnicode_AsUTF8(text);
    dp_error err;
    dp_error_clear(&err);
    int rc = 0;
    if (!s) rc = -1;
    else if (dp_reference_parse_methods(s, list, DP_REFERENCE_MAX, n, &err)) {
        PyErr_Format(PyExc_ValueError, "methods: %s", err.msg);
        rc = -1;
    }
    Py_DECREF(text);
    return rc;
}

/* One report as a dict. */
static PyObject *report_dict(const dp_reference *ref, int32_t k, dp_py_devices *devices) {
    const dp_place_report *r = &ref->reports[k];
    PyObject *result = Py_None, *place = Py_None;
    Py_INCREF(Py_None);
    Py_INCREF(Py_None);
    if (r->status == DP_STATUS_OK) {
        Py_DECREF(result);
        Py_DECREF(place);
        result = dp_py_result_new(&r->sim, devices);
        place = dp_py_int32_array(ref->placements + (size_t)k * (size_t)ref->n_ops, ref->n_ops);
        if (!result || !place) {
            Py_XDECREF(result);
            Py_XDECREF(place);
            return NULL;
        }
    }
    return Py_BuildValue("{s:s,s:s,s:s,s:d,s:i,s:z,s:N,s:N}", "method", dp_place_method_name(r->method), "status",
                         r->status ? dp_status_name(r->status) : "ok", "reason", r->status ? r->reason : "",
                         "place_s", r->place_s, "n_used", (int)r->n_used, "rules",
                         r->rules == DP_PLACE_RULES_BEST ? NULL : dp_place_rules_name(r->rules), "result", result,
                         "placement", place);
}

/* A float, None for NaN. */
static PyObject *float_or_none(double v) {
    if (isnan(v)) Py_RETURN_NONE;
    return PyFloat_FromDouble(v);
}

/* baselines(graph, devices, methods=None, **options) -> dict */
static PyObject *py_baselines(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"graph", "devices", "methods", PLACE_OPTION_KW, "bound", NULL};
    PyObject *gobj, *dobj, *mobj = Py_None;
    const char *group = NULL, *units = NULL, *rules = NULL;
    unsigned long long seed = 1;
    double fraction = 0.9;
    int n_groups = 256, forward_only = 1, bound = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$Kdzipzzp:baselines", kw, &gobj, &dobj, &mobj, &seed,
                                     &fraction, &group, &n_groups, &forward_only, &units, &rules, &bound))
        return NULL;
    if (graph_devices(gobj, dobj, "baselines")) return NULL;
    const dp_graph *g = ((dp_py_graph *)gobj)->g;
    dp_place_method list[DP_REFERENCE_MAX];
    int32_t n;
    int all;
    dp_reference_options ro = dp_reference_options_default();
    if (methods_arg(mobj, list, &n, &all) ||
        place_options(&ro.place, g, seed, fraction, group, n_groups, forward_only, units, rules))
        return NULL;
    if (!all) ro.methods = list, ro.n_methods = n;
    ro.bound = bound;
    dp_py_devices *devices = (dp_py_devices *)dobj;
    dp_reference ref;
    dp_error err;
    dp_error_clear(&err);
    dp_status st = DP_STATUS_OK;
    dp_sim *sim;
    Py_BEGIN_ALLOW_THREADS
    sim = dp_sim_init(g, devices->ds, &err); /* its own: the placers' reports run on the context's workspace */
    if (sim) {
        dp_py_placers_lock();
        st = dp_reference_compute(sim, g, devices->ds, &ro, &ref, &err);
        dp_py_placers_unlock();
    }
    Py_END_ALLOW_THREADS
    if (!sim || st) {
        dp_sim_free(sim);
        return dp_py_raise(&err);
    }
    PyObject *reports = PyList_New(ref.n), *out = NULL;
    for (int32_t k = 0; reports && k < ref.n; k++) {
        PyObject *r = report_dict(&ref, k, devices);
        if (!r) Py_CLEAR(reports);
        else PyList_SET_ITEM(reports, k, r);
    }
    char ubuf[32];
    dp_units_spec_format(ro.place.units, ubuf, sizeof ubuf);
    if (reports)
        out = Py_BuildValue("{s:s,s:N,s:N,s:N,s:N,s:N,s:{s:d,s:d,s:d,s:d,s:d}}", "units", ubuf, "reports", reports,
                            "single_gpu_s",
                            float_or_none(ref.gpu_s), "expert_s", float_or_none(ref.expert_s), "best",
                            ref.best_name ? PyUnicode_FromString(ref.best_name) : Py_NewRef(Py_None), "best_s",
                            float_or_none(ref.best_s), "bound", "bound_s", ref.bound.bound_s, "critical_path_s",
                            ref.bound.critical_path_s, "work_s", ref.bound.work_s, "work_uniform_s",
                            ref.bound.work_uniform_s, "fanout_s", ref.bound.fanout_s);
    dp_reference_free(&ref);
    dp_sim_free(sim);
    return out;
}

/* resolve_placement(graph, devices, spec) -> int32 [n_ops] */
static PyObject *py_resolve(PyObject *self, PyObject *args) {
    PyObject *gobj, *dobj, *spec_obj;
    if (!PyArg_ParseTuple(args, "OOO:resolve_placement", &gobj, &dobj, &spec_obj)) return NULL;
    if (graph_devices(gobj, dobj, "resolve_placement")) return NULL;
    PyObject *spec = dp_py_path(spec_obj, "spec");
    if (!spec) return NULL;
    const dp_graph *g = ((dp_py_graph *)gobj)->g;
    npy_intp n = g->n_ops;
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT32);
    dp_error err;
    dp_error_clear(&err);
    dp_status st = DP_STATUS_OK;
    if (a) {
        Py_BEGIN_ALLOW_THREADS
        st = dp_zoo_resolve_placement(PyBytes_AS_STRING(spec), g, ((dp_py_devices *)dobj)->ds,
                                      PyArray_DATA((PyArrayObject *)a), &err);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(spec);
    if (a && st) {
        Py_DECREF(a);
        return dp_py_raise(&err);
    }
    return a;
}

/* read_placement(path, graph, devices) -> int32 [n_ops] */
static PyObject *py_read_placement(PyObject *self, PyObject *args) {
    PyObject *path_obj, *gobj, *dobj;
    if (!PyArg_ParseTuple(args, "OOO:read_placement", &path_obj, &gobj, &dobj)) return NULL;
    if (graph_devices(gobj, dobj, "read_placement")) return NULL;
    PyObject *path = dp_py_path(path_obj, "read_placement");
    if (!path) return NULL;
    const dp_graph *g = ((dp_py_graph *)gobj)->g;
    npy_intp n = g->n_ops;
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT32);
    dp_error err;
    dp_error_clear(&err);
    dp_status st = a ? dp_placement_read_file(PyBytes_AS_STRING(path), g, ((dp_py_devices *)dobj)->ds,
                                              PyArray_DATA((PyArrayObject *)a), &err)
                     : DP_STATUS_OK;
    Py_DECREF(path);
    if (a && st) {
        Py_DECREF(a);
        return dp_py_raise(&err);
    }
    return a;
}

/* write_placement(path, graph, devices, placement) */
static PyObject *py_write_placement(PyObject *self, PyObject *args) {
    PyObject *path_obj, *gobj, *dobj, *pobj;
    if (!PyArg_ParseTuple(args, "OOOO:write_placement", &path_obj, &gobj, &dobj, &pobj)) return NULL;
    if (graph_devices(gobj, dobj, "write_placement")) return NULL;
    const dp_graph *g = ((dp_py_graph *)gobj)->g;
    const dp_devices *ds = ((dp_py_devices *)dobj)->ds;
    PyArrayObject *a = dp_py_placements(pobj, 1, g->n_ops, ds->n_devices, "placement");
    if (!a) return NULL;
    PyObject *path = dp_py_path(path_obj, "write_placement");
    if (!path) {
        Py_DECREF(a);
        return NULL;
    }
    dp_error err;
    dp_error_clear(&err);
    dp_status st = dp_placement_write_file(PyBytes_AS_STRING(path), g, ds, PyArray_DATA(a), &err);
    Py_DECREF(path);
    Py_DECREF(a);
    if (st) return dp_py_raise(&err);
    Py_RETURN_NONE;
}

PyMethodDef dp_py_jobs_methods[] = {
    {"place", (PyCFunction)(void (*)(void))py_place, METH_VARARGS | METH_KEYWORDS,
     "place(graph, devices, method, *, seed=1, memory_fraction=0.9, group=None, n_groups=256, forward_only=True, "
     "units='auto', rules='best') -> int32 array [n_ops]\n\nOne baseline placer's placement (dplace.place_methods(): "
     "cpu, gpu, expert, scotch, mincut, metis, m-topo, m-etf, m-sct, accel-balanced, accel-sequential; "
     "docs/baselines.md). units: what the placers "
     "but cpu, gpu and expert place: 'op', 'module' (a PyTorch export's whole modules), 'module:DEPTH', 'auto' "
     "(modules on an export, else ops). rules: the list placers' forward-only placement, 'dataflow' (dplace's "
     "rules; also what 'best' gives here, where nothing is simulated) or 'paper' (Baechi's as published). "
     "dplace.Error (status 'unsupported') when the method cannot apply."},
    {"_baselines", (PyCFunction)(void (*)(void))py_baselines, METH_VARARGS | METH_KEYWORDS,
     "_baselines(graph, devices, methods=None, ...) -> dict (dplace.baselines wraps it)"},
    {"resolve_placement", py_resolve, METH_VARARGS,
     "resolve_placement(graph, devices, spec) -> int32 array [n_ops]: \"gpu\", \"gpu:1\", \"cpu\", \"expert\" or "
     "a dplace-placement file, as the command line's --placement"},
    {"read_placement", py_read_placement, METH_VARARGS,
     "read_placement(path, graph, devices) -> int32 array [n_ops]: a dplace-placement v1 file (devices matched "
     "by name)"},
    {"write_placement", py_write_placement, METH_VARARGS,
     "write_placement(path, graph, devices, placement): writes a dplace-placement v1 file, atomically"},
    {NULL, NULL, 0, NULL}};
