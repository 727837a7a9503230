/* Units and groupings (include/dplace/units.h, group.h): TensorFlow's
 * colocation units, the groupers' groups, and the devices each unit may
 * use; the ground the environments (dplace.envs) place on. */
#include "dplace_py.h"

#include <stdlib.h>

#include "dplace/group.h"
#include "dplace/units.h"

static int graph_check(PyObject *g, const char *what) {
    if (PyObject_TypeCheck(g, &dp_py_graph_type)) return 0;
    PyErr_Format(PyExc_TypeError, "%s: graph must be a dplace.Graph, not %s", what, Py_TYPE(g)->tp_name);
    return -1;
}

/* units(graph, spec="op") -> (int32 [n_ops], n_units) */
static PyObject *py_units(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"graph", "spec", NULL};
    PyObject *gobj;
    const char *text = "op";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|s:units", kw, &gobj, &text)) return NULL;
    if (graph_check(gobj, "units")) return NULL;
    dp_units_spec spec;
    if (dp_units_spec_parse(text, &spec)) {
        PyErr_Format(PyExc_ValueError, "units: unknown spec \"%s\" (op, module, module:DEPTH, auto)", text);
        return NULL;
    }
    const dp_graph *g = ((dp_py_graph *)gobj)->g;
    dp_units u;
    dp_error err;
    dp_error_clear(&err);
    if (dp_units_init_spec(&u, g, spec, &err)) return dp_py_raise(&err);
    PyObject *a = dp_py_int32_array(u.unit_of, g->n_ops);
    int32_t n = u.n_units;
    dp_units_free(&u);
    return a ? Py_BuildValue("(Ni)", a, (int)n) : NULL;
}

/* group(graph, method, groups, seed, devices) -> (int32 [n_ops], n_groups) */
static PyObject *py_group(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"graph", "method", "groups", "seed", "devices", NULL};
    PyObject *gobj, *dobj = Py_None;
    const char *method;
    int groups = 64;
    unsigned long long seed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Os|iKO:group", kw, &gobj, &method, &groups, &seed, &dobj))
        return NULL;
    if (graph_check(gobj, "group")) return NULL;
    dp_group_method m;
    if (dp_group_method_from_name(method, &m)) {
        PyErr_Format(PyExc_ValueError, "group: unknown method \"%s\" (dplace.group_methods() lists them)", method);
        return NULL;
    }
    if (groups < 1 || groups > 1000000) {
        PyErr_Format(PyExc_ValueError, "group: groups %d, must be in 1..1000000", groups);
        return NULL;
    }
    if (dobj != Py_None && !PyObject_TypeCheck(dobj, &dp_py_devices_type)) {
        PyErr_Format(PyExc_TypeError, "group: devices must be a dplace.Devices or None, not %s", Py_TYPE(dobj)->tp_name);
        return NULL;
    }
    const dp_graph *g = ((dp_py_graph *)gobj)->g;
    dp_group_options o = dp_group_options_default();
    o.n_groups = groups, o.seed = seed;
    if (dobj != Py_None) { /* compute weighed by the first GPU's op times (or the first device's) */
        const dp_devices *ds = ((dp_py_devices *)dobj)->ds;
        int32_t ref = dp_devices_nth(ds, DP_DEVKIND_GPU, 0);
        o.reference = ds->n_devices ? &ds->devices[ref >= 0 ? ref : 0] : NULL;
    }
    npy_intp n = g->n_ops;
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!a) return NULL;
    int32_t n_groups = 0;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    dp_py_placers_lock();
    st = dp_group_run(m, g, &o, PyArray_DATA((PyArrayObject *)a), &n_groups, &err);
    dp_py_placers_unlock();
    Py_END_ALLOW_THREADS
    if (st) {
        Py_DECREF(a);
        return dp_py_raise(&err);
    }
    return Py_BuildValue("(Ni)", a, (int)n_groups);
}

/* unit_masks(graph, devices, groups, n_groups, pool) -> bool [n_groups, D] */
static PyObject *py_unit_masks(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"graph", "devices", "groups", "n_groups", "pool", NULL};
    PyObject *gobj, *dobj, *grp, *pool_obj = Py_None;
    int n_groups;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!Oi|O:unit_masks", kw, &gobj, &dp_py_devices_type, &dobj, &grp,
                                     &n_groups, &pool_obj))
        return NULL;
    if (graph_check(gobj, "unit_masks")) return NULL;
    const dp_graph *g = ((dp_py_graph *)gobj)->g;
    const dp_devices *ds = ((dp_py_devices *)dobj)->ds;
    if (n_groups < 1 || n_groups > g->n_ops) {
        PyErr_Format(PyExc_ValueError, "unit_masks: n_groups %d, must be in 1..%d (the op count)", n_groups,
                     (int)g->n_ops);
        return NULL;
    }
    dp_mask pool = dp_mask_all(ds);
    if (pool_obj != Py_None) {
        PyArrayObject *p = dp_py_placements(pool_obj, 1, -1, ds->n_devices, "pool");
        if (!p) return NULL;
        pool = 0;
        for (npy_intp k = 0; k < PyArray_SIZE(p); k++) pool |= dp_mask_bit(((int32_t *)PyArray_DATA(p))[k]);
        Py_DECREF(p);
        if (!pool) {
            PyErr_SetString(PyExc_ValueError, "unit_masks: pool is empty");
            return NULL;
        }
    }
    PyArrayObject *ga = dp_py_placements(grp, 1, g->n_ops, n_groups, "groups");
    if (!ga) return NULL;
    dp_units u;
    dp_error err;
    dp_error_clear(&err);
    dp_mask *mask = malloc(sizeof(dp_mask) * (size_t)n_groups);
    npy_intp dims[2] = {n_groups, ds->n_devices};
    PyObject *out = NULL;
    if (!mask) PyErr_NoMemory();
    else if (dp_units_init_from_groups(&u, PyArray_DATA(ga), g->n_ops, n_groups, &err)) dp_py_raise(&err);
    else {
        if (dp_units_masks(&u, g, ds, pool, mask, &err)) dp_py_raise(&err);
        else if ((out = PyArray_SimpleNew(2, dims, NPY_BOOL))) {
            npy_bool *m = PyArray_DATA((PyArrayObject *)out);
            for (npy_intp k = 0; k < dims[0]; k++)
                for (npy_intp d = 0; d < dims[1]; d++) m[k * dims[1] + d] = (mask[k] >> d) & 1;
        }
        dp_units_free(&u);
    }
    free(mask);
    Py_DECREF(ga);
    return out;
}

PyMethodDef dp_py_units_methods[] = {
    {"units", (PyCFunction)(void (*)(void))py_units, METH_VARARGS | METH_KEYWORDS,
     "units(graph, spec='op') -> (int32 array [n_ops], n_units)\n\nThe placement units of a granularity, numbered "
     "in order of their first op: 'op', TensorFlow's (each colocation group one unit, every other op its own); "
     "'module', a PyTorch export's modules, each whole with its gradient ops and its parameters' updates "
     "('module:DEPTH': paths cut to DEPTH components); 'auto', modules on an export, else ops. dplace.Error when "
     "modules are asked of a graph without them."},
    {"group", (PyCFunction)(void (*)(void))py_group, METH_VARARGS | METH_KEYWORDS,
     "group(graph, method, groups=64, seed=1, devices=None) -> (int32 array [n_ops], n_groups)\n\nA grouping of the "
     "ops by one of dplace.group_methods() (colocation, metis, scotch, fluid, random; docs/baselines.md): a group "
     "id per op, colocation groups kept whole; n_groups may be fewer than asked. devices: op times on its first "
     "GPU weigh the compute (None: the FLOPs)."},
    {"unit_masks", (PyCFunction)(void (*)(void))py_unit_masks, METH_VARARGS | METH_KEYWORDS,
     "unit_masks(graph, devices, groups, n_groups, pool=None) -> bool array [n_groups, len(devices)]\n\nFor each "
     "group of a grouping (groups: a group id per op), the devices it may go to: those every constrained member "
     "allows, within pool (device indices; None: every device) when that leaves any. dplace.Error when a group "
     "has no device at all."},
    {NULL, NULL, 0, NULL}};
